/* The engine registry and the sweep driver shared by every engine: for each
 * size, NCCL's decision (cs_comm_decide), the engine's price for it, and a
 * result row in nccl-tests's terms. */
#include "config.h"

#include <math.h>
#include <signal.h>
#include <string.h>
#include <time.h>

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
                g_strlcat(names, ", ", sizeof names);
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

/* One note per run of consecutive sizes with the same text 'what' from
 * the engine: "<head> for 1 GiB to 4 GiB: <what>" (approximations,
 * bottlenecks). */
static void note_runs(cs_result_t *r, GPtrArray *per_size, const char *head)
{
    guint n = MIN(per_size->len, r->rows->len);
    for (guint i = 0; i < n;) {
        const char *what = g_ptr_array_index(per_size, i);
        guint j = i + 1;
        while (j < n && what != NULL && g_strcmp0(g_ptr_array_index(per_size, j), what) == 0)
            j++;
        if (what != NULL) {
            g_autofree char *a = cs_format_size(g_array_index(r->rows, cs_result_row_t, i).size);
            g_autofree char *b = cs_format_size(g_array_index(r->rows, cs_result_row_t, j - 1).size);
            if (j - i == 1)
                cs_result_add_note(r, "%s for %s: %s", head, a, what);
            else
                cs_result_add_note(r, "%s for %s to %s: %s", head, a, b, what);
        }
        i = j;
    }
}

struct cs_engine_sweep {
    const cs_engine_ops_t *ops;
    const cs_engine_job_t *job;
    void *state;
    gboolean opened;
    cs_result_t *r;
    const guint64 *sizes;
    int nsizes, next;
    cs_decision_t *decisions;   /* per size; unset where NCCL launches nothing */
    char xport[64];
    const char *xname;
    GPtrArray *approx;          /* per size priced, NULL: exact */
    GPtrArray *bottleneck;      /* per size priced, NULL: nothing to note */
    cs_engine_step_t step;
    char *counters;             /* step.counters' storage */
};

static volatile sig_atomic_t interrupted;

void cs_engine_interrupt(void)
{
    interrupted = 1;
}

gboolean cs_engine_interrupted(void)
{
    return interrupted != 0;
}

static double cpu_seconds(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
        return 0;
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void set_interrupted(GError **err)
{
    g_clear_error(err);
    g_set_error(err, CS_ERROR, CS_ERROR_RUNTIME, "interrupted");
}

void cs_engine_sweep_free(cs_engine_sweep_t *sw)
{
    if (sw == NULL)
        return;
    if (sw->opened && sw->ops->close != NULL)
        sw->ops->close(sw->state);
    cs_result_free(sw->r);
    g_free(sw->decisions);
    g_ptr_array_unref(sw->approx);
    g_ptr_array_unref(sw->bottleneck);
    g_free(sw->counters);
    g_free(sw);
}

cs_engine_sweep_t *cs_engine_sweep_new(const cs_engine_ops_t *ops, const cs_engine_job_t *job,
                                       const guint64 *sizes, int nsizes, GError **err)
{
    g_return_val_if_fail(ops != NULL && job != NULL && job->comm != NULL, NULL);
    const cs_comm_info_t *info = cs_comm_info(job->comm);
    const cs_topo_t *topo = job->topo != NULL ? job->topo : cs_comm_topo(job->comm);

    g_autoptr(cs_engine_sweep_t) sw = g_new0(cs_engine_sweep_t, 1);
    sw->ops = ops;
    sw->job = job;
    sw->sizes = sizes;
    sw->nsizes = MAX(0, nsizes);
    sw->approx = g_ptr_array_new_with_free_func(g_free);
    sw->bottleneck = g_ptr_array_new_with_free_func(g_free);
    sw->decisions = g_new0(cs_decision_t, MAX(1, sw->nsizes));
    g_autofree char *producer = g_strconcat("model:", ops->name, NULL);
    sw->r = cs_result_new(producer, topo->description != NULL ? topo->description : topo->source, job->coll,
                          info->nranks, info->nnodes);
    g_autofree char *xsum = cs_comm_transport_summary(job->comm);
    if (xsum != NULL)
        cs_result_add_note(sw->r, "transports: %s", xsum);
    add_param_note(sw->r, job->params);
    sw->xname = call_transport(info, sw->xport, sizeof sw->xport);

    for (int i = 0; i < sw->nsizes; i++) {
        guint64 count = cs_coll_count(job->coll, sizes[i], job->dtype, info->nranks);
        guint64 nb = cs_coll_nccl_bytes(job->coll, count, job->dtype, info->nranks);
        if (nb > 0 && !cs_comm_decide(job->comm, job->coll, job->dtype, nb, &sw->decisions[i], err))
            return NULL;
    }
    if (ops->open != NULL && !ops->open(job, &sw->state, err))
        return NULL;
    sw->opened = TRUE;
    return g_steal_pointer(&sw);
}

cs_result_t *cs_engine_sweep_result(cs_engine_sweep_t *sw)
{
    return sw->r;
}

int cs_engine_sweep_next(cs_engine_sweep_t *sw, const cs_engine_step_t **step_p, GError **err)
{
    if (sw->next >= sw->nsizes)
        return 0;
    if (cs_engine_interrupted()) {
        set_interrupted(err);
        return -1;
    }
    const cs_engine_job_t *job = sw->job;
    const cs_engine_ops_t *ops = sw->ops;
    const cs_comm_info_t *info = cs_comm_info(job->comm);
    int i = sw->next;
    double cpu0 = cpu_seconds();
    gint64 wall0 = g_get_monotonic_time();

    cs_result_row_t row;
    memset(&row, 0, sizeof row);
    guint64 count = cs_coll_count(job->coll, sw->sizes[i], job->dtype, info->nranks);
    cs_engine_call_t call = {
        .size = sw->sizes[i],
        .count = count,
        .nccl_bytes = cs_coll_nccl_bytes(job->coll, count, job->dtype, info->nranks),
    };
    row.size = cs_coll_print_size(job->coll, count, job->dtype, info->nranks);
    row.count = count;
    row.dtype = job->dtype;
    row.redop = job->redop;
    row.root = cs_coll_has_root(job->coll) ? job->root : -1;
    row.wrong[CS_OOP] = row.wrong[CS_INP] = -1;
    row.nccl_est_us = -1;
    g_clear_pointer(&sw->counters, g_free);
    if (call.nccl_bytes == 0) {
        /* NCCL returns before launching anything for an empty call:
         * no time on the GPU, and nccl-tests prints 0 bandwidth. */
        set_str(row.algo, sizeof row.algo, "none");
        g_ptr_array_add(sw->approx, NULL);
        g_ptr_array_add(sw->bottleneck, NULL);
    } else {
        const cs_decision_t *d = &sw->decisions[i];
        double t[2];
        call.decision = d;
        if (job->sink != NULL && job->sink->begin != NULL) {
            g_autofree char *sz = cs_format_size(row.size);
            g_autofree char *label = g_strdup_printf("%s %s", cs_coll_name(job->coll), sz);
            job->sink->begin(job->sink, label);
        }
        if (!ops->predict(sw->state, job, &call, t, err)) {
            if (cs_engine_interrupted())
                set_interrupted(err);
            else
                g_prefix_error(err, "size %" G_GUINT64_FORMAT ": ", sw->sizes[i]);
            return -1;
        }
        if (job->link_stats != NULL && ops->link_stats != NULL)
            g_ptr_array_add(job->link_stats, ops->link_stats(sw->state));
        g_ptr_array_add(sw->approx, ops->approximation != NULL ? ops->approximation(sw->state) : NULL);
        g_ptr_array_add(sw->bottleneck, ops->bottleneck != NULL ? ops->bottleneck(sw->state) : NULL);
        if (ops->counters != NULL)
            sw->counters = ops->counters(sw->state);
        row.time_us[CS_OOP] = t[CS_OOP] * 1e6;
        row.time_us[CS_INP] = t[CS_INP] * 1e6;
        cs_result_row_fill_bw(sw->r, &row);
        set_str(row.algo, sizeof row.algo, cs_algo_name(d->algo));
        set_str(row.proto, sizeof row.proto, cs_proto_name(d->proto));
        row.nchannels = d->nchannels;
        set_str(row.transport, sizeof row.transport, sw->xname);
        row.nccl_est_us = d->nccl_time_us;
    }
    g_array_append_val(sw->r->rows, row);
    sw->next++;
    sw->step = (cs_engine_step_t){
        .index = sw->r->rows->len - 1,
        .cpu_s = cpu_seconds() - cpu0,
        .wall_s = (g_get_monotonic_time() - wall0) * 1e-6,
        .counters = sw->counters,
    };
    if (step_p != NULL)
        *step_p = &sw->step;
    return 1;
}

cs_result_t *cs_engine_sweep_finish(cs_engine_sweep_t *sw)
{
    if (sw->opened && sw->ops->close != NULL)
        sw->ops->close(sw->state);
    sw->opened = FALSE;
    cs_result_t *r = g_steal_pointer(&sw->r);
    note_runs(r, sw->bottleneck, "bottleneck");
    note_runs(r, sw->approx, "approximate");
    cs_result_finish(r);
    cs_engine_sweep_free(sw);
    return r;
}

cs_result_t *cs_engine_run_sweep(const cs_engine_ops_t *ops, const cs_engine_job_t *job,
                                 const guint64 *sizes, int nsizes, GError **err)
{
    g_autoptr(cs_engine_sweep_t) sw = cs_engine_sweep_new(ops, job, sizes, nsizes, err);
    if (sw == NULL)
        return NULL;
    int more;
    while ((more = cs_engine_sweep_next(sw, NULL, err)) > 0)
        ;
    if (more < 0)
        return NULL;
    return cs_engine_sweep_finish(g_steal_pointer(&sw));
}

static int stat_cmp(gconstpointer a, gconstpointer b)
{
    const cs_link_stat_t *x = a, *y = b;
    gint64 ux = llround(x->bytes / x->cap * 1e9), uy = llround(y->bytes / y->cap * 1e9);
    if (ux != uy)
        return ux > uy ? -1 : 1;
    return strcmp(x->name, y->name);
}

void cs_link_stats_sort(cs_link_stats_t *s)
{
    if (s->n > 1)
        qsort(s->links, (size_t)s->n, sizeof *s->links, stat_cmp);
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
