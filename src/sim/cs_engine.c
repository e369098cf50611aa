/* The engine registry and the sweep driver shared by every engine: for each
 * size, NCCL's decision (cs_comm_decide), the engine's price for it, and a
 * result row in nccl-tests's terms. */
#include "config.h"

#include <string.h>

#include "sim/cs_engine.h"
#include "sim/cs_engine_analytic-int.h"
#include "sim/cs_engine_flow-int.h"
#include "util/cs_error.h"
#include "util/cs_units.h"
/* The SimGrid engine exists where configure found SimGrid. */
#ifdef HAVE_SIMGRID
#include "sim/cs_engine_simgrid-int.h"
#endif

/* One line per engine built in; the first is the default. */
static const cs_engine_ops_t *const engines[] = {
    &cs_engine_analytic,
    &cs_engine_flow,
#ifdef HAVE_SIMGRID
    &cs_engine_simgrid,
#endif
};

const cs_engine_ops_t *cs_engine_find(const char *name)
{
    if (name == NULL)
        return NULL;
    for (gsize i = 0; i < G_N_ELEMENTS(engines); i++)
        if (g_ascii_strcasecmp(engines[i]->name, name) == 0)
            return engines[i];
    return NULL;
}

const char *cs_engine_names(void)
{
    static char names[256];
    if (names[0] == '\0') {
        for (gsize i = 0; i < G_N_ELEMENTS(engines); i++) {
            if (i > 0)
                g_strlcat(names, ",", sizeof names);
            g_strlcat(names, engines[i]->name, sizeof names);
        }
    }
    return names;
}

/* Copies at most the buffer's size minus one, always terminated. */
static void set_str(char *dst, size_t len, const char *src)
{
    g_strlcpy(dst, src != NULL ? src : "", len);
}

/* The transport a call's data crosses, as nccl-tests logs would name it:
 * the network transport when the ranks span nodes, else the intra one. */
static const char *call_transport(const cs_comm_info_t *info, char *buf, size_t len)
{
    if (info->nranks <= 1)
        return "";
    if (info->nnodes > 1 && (info->inter_transport == CS_XPORT_NET_IB ||
                             info->inter_transport == CS_XPORT_NET_SOCKET)) {
        const char *gdr = info->inter_transport == CS_XPORT_NET_IB ? (info->gdr ? "/GDRDMA" : "") : "";
        if (info->ppn > 1)
            g_snprintf(buf, len, "%s+%s%s", cs_transport_name(info->intra_transport),
                       cs_transport_name(info->inter_transport), gdr);
        else
            g_snprintf(buf, len, "%s%s", cs_transport_name(info->inter_transport), gdr);
        return buf;
    }
    return cs_transport_name(info->intra_transport);
}

static void add_param_note(cs_result_t *r, const cs_params_t *params)
{
    int n = 0;
    for (int i = 0; i < CS_P_COUNT; i++)
        n += params->calibrated[i] ? 1 : 0;
    if (params->calibration_source != NULL)
        cs_result_add_note(r, "parameters: built-in defaults with %d overridden by %s", n,
                           params->calibration_source);
    else
        cs_result_add_note(r, "parameters: built-in defaults (docs/model-analytic.md)");
}

/* One note per run of consecutive sizes the engine approximated alike:
 * "approximate for 1 GiB to 4 GiB: <what>". */
static void note_approximations(cs_result_t *r, GPtrArray *approx)
{
    guint n = MIN(approx->len, r->rows->len);
    for (guint i = 0; i < n;) {
        const char *what = g_ptr_array_index(approx, i);
        guint j = i + 1;
        while (j < n && what != NULL && g_strcmp0(g_ptr_array_index(approx, j), what) == 0)
            j++;
        if (what != NULL) {
            g_autofree char *a = cs_format_size(g_array_index(r->rows, cs_result_row_t, i).size);
            g_autofree char *b = cs_format_size(g_array_index(r->rows, cs_result_row_t, j - 1).size);
            if (j - i == 1)
                cs_result_add_note(r, "approximate for %s: %s", a, what);
            else
                cs_result_add_note(r, "approximate for %s to %s: %s", a, b, what);
        }
        i = j;
    }
}

cs_result_t *cs_engine_run_sweep(const cs_engine_ops_t *ops, const cs_engine_job_t *job,
                                 const guint64 *sizes, int nsizes, GError **err)
{
    g_return_val_if_fail(ops != NULL && job != NULL && job->comm != NULL, NULL);
    const cs_comm_info_t *info = cs_comm_info(job->comm);
    const cs_topo_t *topo = job->topo != NULL ? job->topo : cs_comm_topo(job->comm);

    g_autofree char *producer = g_strconcat("model:", ops->name, NULL);
    g_autoptr(cs_result_t) r = cs_result_new(producer, topo->description != NULL ? topo->description : topo->source,
                                             job->coll, info->nranks, info->nnodes);
    g_autofree char *xsum = cs_comm_transport_summary(job->comm);
    if (xsum != NULL)
        cs_result_add_note(r, "transports: %s", xsum);
    add_param_note(r, job->params);

    void *state = NULL;
    if (ops->open != NULL && !ops->open(job, &state, err))
        return NULL;

    char xport[64];
    const char *xname = call_transport(info, xport, sizeof xport);
    gboolean ok = TRUE;
    g_autoptr(GPtrArray) approx = g_ptr_array_new_with_free_func(g_free);   /* per size, NULL: exact */
    g_array_set_size(r->rows, MAX(0, nsizes));
    for (int i = 0; i < nsizes && ok; i++) {
        cs_result_row_t *row = &g_array_index(r->rows, cs_result_row_t, i);
        memset(row, 0, sizeof *row);
        guint64 count = cs_coll_count(job->coll, sizes[i], job->dtype, info->nranks);
        cs_engine_call_t call = {
            .size = sizes[i],
            .count = count,
            .nccl_bytes = cs_coll_nccl_bytes(job->coll, count, job->dtype, info->nranks),
        };
        row->size = cs_coll_print_size(job->coll, count, job->dtype, info->nranks);
        row->count = count;
        row->dtype = job->dtype;
        row->redop = job->redop;
        row->root = cs_coll_has_root(job->coll) ? job->root : -1;
        row->wrong[CS_OOP] = row->wrong[CS_INP] = -1;
        row->nccl_est_us = -1;
        if (call.nccl_bytes == 0) {
            /* NCCL returns before launching anything for an empty call:
             * no time on the GPU, and nccl-tests prints 0 bandwidth. */
            set_str(row->algo, sizeof row->algo, "none");
            continue;
        }
        cs_decision_t d;
        double t[2];
        if (!cs_comm_decide(job->comm, job->coll, job->dtype, call.nccl_bytes, &d, err)) {
            ok = FALSE;
            break;
        }
        call.decision = &d;
        if (job->sink != NULL && job->sink->begin != NULL) {
            g_autofree char *sz = cs_format_size(row->size);
            g_autofree char *label = g_strdup_printf("%s %s", cs_coll_name(job->coll), sz);
            job->sink->begin(job->sink, label);
        }
        if (!ops->predict(state, job, &call, t, err)) {
            g_prefix_error(err, "size %" G_GUINT64_FORMAT ": ", sizes[i]);
            ok = FALSE;
            break;
        }
        if (job->link_stats != NULL && ops->link_stats != NULL)
            g_ptr_array_add(job->link_stats, ops->link_stats(state));
        g_ptr_array_add(approx, ops->approximation != NULL ? ops->approximation(state) : NULL);
        row->time_us[CS_OOP] = t[CS_OOP] * 1e6;
        row->time_us[CS_INP] = t[CS_INP] * 1e6;
        cs_result_row_fill_bw(r, row);
        set_str(row->algo, sizeof row->algo, cs_algo_name(d.algo));
        set_str(row->proto, sizeof row->proto, cs_proto_name(d.proto));
        row->nchannels = d.nchannels;
        set_str(row->transport, sizeof row->transport, xname);
        row->nccl_est_us = d.nccl_time_us;
    }
    if (ops->close != NULL)
        ops->close(state);
    if (!ok)
        return NULL;
    note_approximations(r, approx);
    cs_result_finish(r);
    return g_steal_pointer(&r);
}

void cs_link_stats_free(cs_link_stats_t *s)
{
    if (s == NULL)
        return;
    for (int i = 0; i < s->n; i++)
        g_free(s->links[i].name);
    g_free(s->links);
    g_free(s);
}

gboolean cs_engine_run_jobs(const cs_engine_ops_t *ops, cs_engine_multi_t *m, cs_engine_outcome_t *outcomes,
                            cs_link_stats_t **stats_p, GError **err)
{
    g_return_val_if_fail(ops != NULL && m != NULL && outcomes != NULL, FALSE);
    if (ops->run_jobs == NULL) {
        g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED, "the %s model cannot run several jobs at once; use --model flow",
                    ops->name);
        return FALSE;
    }
    g_autofree cs_engine_task_t *tasks = g_memdup2(m->tasks, sizeof(cs_engine_task_t) * MAX(1, m->ntasks));
    for (int i = 0; i < m->ntasks; i++) {
        cs_engine_task_t *t = &tasks[i];
        const cs_comm_info_t *info = cs_comm_info(t->job.comm);
        t->call.count = cs_coll_count(t->job.coll, t->call.size, t->job.dtype, info->nranks);
        t->call.nccl_bytes = cs_coll_nccl_bytes(t->job.coll, t->call.count, t->job.dtype, info->nranks);
        if (t->call.nccl_bytes == 0) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "job %d: the size is 0 bytes; expected a positive size", i);
            return FALSE;
        }
        if (!cs_comm_decide(t->job.comm, t->job.coll, t->job.dtype, t->call.nccl_bytes, &outcomes[i].decision, err))
            return FALSE;
        t->call.decision = &outcomes[i].decision;
    }
    cs_engine_multi_t all = *m;
    all.tasks = tasks;
    g_autofree double *end = g_new0(double, MAX(1, m->ntasks));
    if (!ops->run_jobs(&all, end, stats_p, err))
        return FALSE;
    for (int i = 0; i < m->ntasks; i++)
        outcomes[i].end_s = end[i];
    /* each alone, from time 0, without the sink */
    for (int i = 0; i < m->ntasks; i++) {
        cs_engine_multi_t one = *m;
        cs_engine_task_t t = tasks[i];
        t.start_s = 0;
        one.sink = NULL;
        one.ntasks = 1;
        one.tasks = &t;
        double e1;
        if (!ops->run_jobs(&one, &e1, NULL, err))
            return FALSE;
        outcomes[i].alone_s = e1;
    }
    return TRUE;
}
