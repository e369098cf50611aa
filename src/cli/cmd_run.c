/* collsim run: predict a collective sweep and print it as nccl-tests does.
 *
 * scenario file < flags (and [nccl] < environment < --env) -> model,
 * topology, NCCL's communicator (cs_design_t, as compare and sweep) ->
 * engine sweep, one size at a time, each row printed as it is priced
 * (progress on a terminal, Ctrl-C: exit 130) -> JSON/CSV/trace/SVG
 * (atomic, all or none) -> the table's footer.
 * Every input problem ends here as one line on stderr and exit 2, before
 * any file is written. */
#include "config.h"
#include "cli/cs_commands.h"
#include "cli/cs_predict.h"
#include "cli/cs_progress.h"
#include "io/cs_run_args.h"
#include "io/cs_writers.h"
#include "io/cs_output.h"
#include "io/cs_trace.h"
#include "io/cs_link_stats_text.h"
#include "models/cs_decide.h"
#include "models/cs_params.h"
#include "sim/cs_engine.h"
#include "util/cs_error.h"
#include "util/cs_units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the run ----------------------------------------------------------------- */

/* --svg: the sweep's one curve, labelled with the scenario's name or the
 * topology; the topology under the title when the name is the label.
 * Several scenarios on one plot: collsim compare A.ini B.ini --svg. */
static char *write_svg(const cs_result_t *r, const guint64 *sizes, const char *model, const cs_table_opts_t *o)
{
    g_autoptr(GPtrArray) keep = g_ptr_array_new_with_free_func(g_free);
    const char *label = r->source != NULL ? r->source : o->topo_desc;
    cs_svg_series_t series = cs_predict_svg_series(r, sizes, label, keep);
    g_autofree char *title = g_strdup_printf("%s: %s", cs_coll_name(r->coll), label);
    g_autofree char *sub = r->source != NULL && o->topo_desc != NULL
                               ? g_strdup_printf("modelled topology: %s", o->topo_desc) : NULL;
    g_autofree char *caption = cs_predict_svg_caption(model, "run");
    cs_svg_opts_t so = { .title = title, .subtitle = sub, .caption = caption, .time_panel = TRUE };
    return cs_svg_plot(&series, 1, &so);
}

/* --json, --csv, --trace and --svg: all written or none. */
static gboolean write_outputs(const cs_scenario_t *s, const char *json, const char *csv, cs_trace_t *trace,
                              const char *svg, GError **err)
{
    const char *paths[4], *data[4], *ids[4];
    int n = 0;
    g_autofree char *tr = trace != NULL ? cs_trace_to_json(trace, NULL) : NULL;
    if (json != NULL)
        ids[n] = "output.json", paths[n] = s->json_out, data[n++] = json;
    if (csv != NULL)
        ids[n] = "output.csv", paths[n] = s->csv_out, data[n++] = csv;
    if (tr != NULL)
        ids[n] = "output.trace", paths[n] = s->trace_out, data[n++] = tr;
    if (svg != NULL)
        ids[n] = "output.svg", paths[n] = s->svg_out, data[n++] = svg;
    if (!cs_output_write(n, paths, data, NULL, err))
        return FALSE;
    /* a file the scenario named (its [output] group) is said: the user
     * who ran it may not know it writes one; a flag's is its own */
    for (int i = 0; i < n; i++) {
        const char *o = cs_run_args_origin(s, ids[i], NULL);
        if (o != NULL && !g_str_has_prefix(o, "collsim:"))
            fprintf(stderr, "collsim: wrote %s (%s)\n", paths[i], o);
    }
    return TRUE;
}

/* The table is done: stdout must have taken all of it. */
static int stdout_status(GError **err)
{
    return cs_output_stdout_flush(err) ? 0 : cs_error_exit_status(*err);
}

/* ---- several jobs --------------------------------------------------------- */

/* One job's view of the machine: its GPUs (nodes x local GPUs), its
 * topology, communicator and engine job. */
typedef struct {
    cs_topo_t *topo;
    int *rank_map, *link_map;
    cs_comm_t *comm;
} job_view_t;

static void job_view_clear(job_view_t *v)
{
    cs_comm_free(v->comm);
    cs_topo_free(v->topo);
    g_free(v->rank_map);
    g_free(v->link_map);
}

static gboolean job_view_build(const cs_scenario_t *s, const cs_scenario_job_t *sj, const cs_topo_t *topo,
                               job_view_t *v, GError **err)
{
    g_autofree gboolean *nodes = g_new0(gboolean, MAX(1, topo->nnodes));
    g_autoptr(GError) e = NULL;
    g_autofree char *id_nodes = g_strdup_printf("job %s.nodes", sj->name);
    g_autofree char *id_gpus = g_strdup_printf("job %s.gpus", sj->name);
    if (!cs_scenario_index_list(sj->nodes != NULL ? sj->nodes : "all", topo->nnodes, "node", nodes, &e)) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: %s", cs_run_args_origin(s, id_nodes, sj->origin), e->message);
        return FALSE;
    }
    int maxg = 0;
    for (int n = 0; n < topo->nnodes; n++)
        maxg = MAX(maxg, cs_topo_node_gpus(topo, n));
    g_autofree gboolean *gpus = g_new0(gboolean, MAX(1, maxg));
    if (!cs_scenario_index_list(sj->gpus != NULL ? sj->gpus : "all", maxg, "GPU", gpus, &e)) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: %s", cs_run_args_origin(s, id_gpus, sj->origin), e->message);
        return FALSE;
    }
    g_autofree gboolean *keep = g_new0(gboolean, topo->ngpus);
    int nkeep = 0;
    for (int r = 0; r < topo->ngpus; r++) {
        const cs_device_t *d = cs_topo_rank_dev(topo, r);
        keep[r] = nodes[d->node] && gpus[r - topo->node_first_rank[d->node]];
        nkeep += keep[r];
    }
    if (nkeep == 0) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: [job %s] selects no GPU; expected nodes and gpus that exist",
                    sj->origin, sj->name);
        return FALSE;
    }
    v->topo = cs_topo_select(topo, keep, &v->rank_map, &v->link_map, &e);
    if (v->topo == NULL) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: [job %s]: %s", sj->origin, sj->name, e->message);
        return FALSE;
    }
    g_autoptr(cs_nccl_env_t) env = cs_scenario_job_env(s, sj);
    if (sj->env != NULL) {
        cs_nccl_settings_t settings;
        if (!cs_nccl_env_settings(env, &settings, err))
            return FALSE;   /* a bad value: its message names its file:line */
        cs_nccl_settings_clear(&settings);
    }
    v->comm = cs_comm_new(v->topo, env, &e);
    if (v->comm == NULL || !cs_run_args_apply_layout(s, v->comm, &e)) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: [job %s]: %s", sj->origin, sj->name, e->message);
        return FALSE;
    }
    return TRUE;
}

/* No two jobs may use one GPU: NCCL would run them on one GPU's SMs,
 * which the engines do not model. */
static gboolean check_disjoint(const cs_scenario_t *s, const job_view_t *views, GError **err)
{
    g_autoptr(GHashTable) owner = g_hash_table_new(NULL, NULL);
    for (guint i = 0; i < s->jobs->len; i++)
        for (int r = 0; r < views[i].topo->ngpus; r++) {
            gpointer key = GINT_TO_POINTER(views[i].rank_map[r] + 1);
            gpointer o = g_hash_table_lookup(owner, key);
            if (o != NULL) {
                const cs_scenario_job_t *a = g_ptr_array_index(s->jobs, GPOINTER_TO_INT(o) - 1);
                const cs_scenario_job_t *b = g_ptr_array_index(s->jobs, i);
                g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                            "%s: [job %s] uses machine rank %d, which [job %s] uses too; expected jobs on distinct GPUs",
                            b->origin, b->name, views[i].rank_map[r], a->name);
                return FALSE;
            }
            g_hash_table_insert(owner, key, GINT_TO_POINTER(i + 1));
        }
    return TRUE;
}

/* Runs the jobs together and alone, then writes files and the table. */
static int run_jobs(const cs_scenario_t *s, const cs_engine_ops_t *ops, const cs_params_t *params,
                    const cs_topo_t *topo, const job_view_t *views, const cs_engine_task_t *tasks, cs_trace_t *trace,
                    GError **err)
{
    guint n = s->jobs->len;
    g_autofree cs_engine_outcome_t *out = g_new0(cs_engine_outcome_t, n);
    g_autofree cs_job_row_t *rows = g_new0(cs_job_row_t, n);
    g_autoptr(cs_link_stats_t) stats = NULL;
    cs_engine_multi_t m = { .topo = topo, .params = params, .sink = trace != NULL ? cs_trace_sink(trace) : NULL,
                            .ntasks = (int)n, .tasks = tasks };
    if (trace != NULL)
        cs_trace_begin_run(trace, s->name != NULL ? s->name : "jobs");
    {
        guint64 one = 1;
        g_autoptr(cs_progress_t) progress = cs_progress_new(stderr, 1, &one);
        g_autofree char *label = g_strdup_printf("%u jobs together, then each alone", n);
        cs_progress_begin(progress, 0, label);
        /* a packet-level engine's counters come with the statistics */
        gboolean want = s->link_stats || ops->net_counters != NULL;
        gboolean ok = cs_engine_run_jobs(ops, &m, out, want ? &stats : NULL, err);
        cs_progress_end(progress);
        if (cs_engine_interrupted())
            return cs_progress_exit_status();
        if (!ok)
            return cs_error_exit_status(*err);   /* 3: a refusal for memory */
    }

    g_autofree char *producer = g_strconcat("model:", ops->name, NULL);
    for (guint i = 0; i < n; i++) {
        const cs_scenario_job_t *sj = g_ptr_array_index(s->jobs, i);
        const cs_engine_task_t *t = &tasks[i];
        const cs_comm_info_t *info = cs_comm_info(views[i].comm);
        cs_job_row_t *r = &rows[i];
        guint64 count = cs_coll_count(t->job.coll, sj->size, t->job.dtype, info->nranks);
        *r = (cs_job_row_t){
            .name = sj->name, .nranks = info->nranks, .nnodes = info->nnodes, .coll = t->job.coll,
            .dtype = t->job.dtype, .size = cs_coll_print_size(t->job.coll, count, t->job.dtype, info->nranks),
            .count = count, .start_s = sj->start_s, .iters = sj->iters,
            .algo = cs_algo_name(out[i].decision.algo), .proto = cs_proto_name(out[i].decision.proto),
            .nchannels = out[i].decision.nchannels, .time_s = out[i].end_s - sj->start_s, .alone_s = out[i].alone_s,
        };
    }
    g_auto(GStrv) engine_notes = ops->notes_jobs != NULL ? ops->notes_jobs(&m) : NULL;
    /* the engine's notes, then what each job's NCCL assumed (as a single
     * run's header says it) */
    g_autoptr(GPtrArray) all = g_ptr_array_new_with_free_func(g_free);
    for (int i = 0; engine_notes != NULL && engine_notes[i] != NULL; i++)
        g_ptr_array_add(all, g_strdup(engine_notes[i]));
    for (guint i = 0; i < n; i++) {
        const char *cn = cs_comm_collnet_note(views[i].comm);
        if (cn != NULL)
            g_ptr_array_add(all, g_strdup_printf("job %s: collnet: %s",
                                                 ((const cs_scenario_job_t *)g_ptr_array_index(s->jobs, i))->name, cn));
    }
    g_ptr_array_add(all, NULL);
    const char *const *notes = (const char *const *)all->pdata;
    cs_jobs_report_t rep = { .producer = producer, .title = s->name, .topo_desc = topo->description,
                             .nrows = (int)n, .rows = rows, .notes = notes,
                             .net = stats != NULL ? stats->net : NULL };
    /* files first and atomically */
    g_autofree char *json = s->json_out != NULL ? cs_write_jobs_json(&rep) : NULL;
    g_autofree char *csv = s->csv_out != NULL ? cs_write_jobs_csv(&rep) : NULL;
    if (!write_outputs(s, json, csv, trace, NULL, err))
        return cs_error_exit_status(*err);
    cs_write_jobs_table(stdout, &rep);
    if (stats != NULL && s->link_stats) {
        cs_write_link_stats(stdout, stats, "all jobs together", 20);
        if (stats->net != NULL)
            cs_write_net_counters(stdout, stats->net, "all jobs together", 20);
    }
    return stdout_status(err);
}

static int predict_jobs(const cs_scenario_t *s, const cs_engine_ops_t *ops, const cs_params_t *params,
                        const cs_topo_t *topo, GError **err)
{
    if (ops->run_jobs == NULL) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                    "%s: the %s model cannot run several jobs at once; expected --model flow or packet",
                    cs_run_args_origin(s, "scenario.model", "collsim: --model"), ops->name);
        return 2;
    }
    {
        g_autoptr(GPtrArray) ignored = g_ptr_array_new_with_free_func(g_free);
        cs_engine_ignored_settings(ops, &s->fabric, s->env, ignored);
        cs_engine_ignored_exact(ops, s->exact, ignored);
        /* the sweep's keys: each [job NAME] gives its own size and calls */
        static const char *const sweep[] = { "collective.minbytes", "collective.maxbytes", "collective.stepbytes",
                                             "collective.stepfactor", "collective.iters", "collective.warmup",
                                             "collective.agg-iters" };
        for (gsize i = 0; i < G_N_ELEMENTS(sweep); i++) {
            const char *o = g_hash_table_lookup(s->origins, sweep[i]);
            if (o != NULL)
                g_ptr_array_add(ignored, g_strdup_printf("%s is not used by a run of several jobs: each [job NAME] "
                                                         "gives its own size and iters",
                                                         g_str_has_prefix(o, "collsim: ") ? o + 9 : o));
        }
        for (guint i = 0; i < ignored->len; i++)
            fprintf(stderr, "collsim: warning: %s\n", (const char *)g_ptr_array_index(ignored, i));
    }
    guint n = s->jobs->len;
    g_autofree job_view_t *views = g_new0(job_view_t, n);
    g_autofree cs_engine_task_t *tasks = g_new0(cs_engine_task_t, n);
    g_autoptr(cs_trace_t) trace = s->trace_out != NULL ? cs_trace_new() : NULL;
    if (trace != NULL) {
        g_autofree char *producer = g_strconcat("model:", ops->name, NULL);
        cs_trace_set_producer(trace, producer);
    }
    int status = 2;
    guint built = 0;
    for (; built < n; built++) {
        const cs_scenario_job_t *sj = g_ptr_array_index(s->jobs, built);
        if (!job_view_build(s, sj, topo, &views[built], err)) {
            job_view_clear(&views[built]);
            goto out_views;
        }
        cs_engine_task_t *t = &tasks[built];
        cs_coll_t coll = sj->coll >= 0 ? (cs_coll_t)sj->coll : s->coll;
        int root = sj->root >= 0 ? sj->root : s->root;
        if (cs_coll_has_root(coll) && root >= views[built].topo->ngpus) {
            g_autofree char *id = g_strdup_printf("job %s.root", sj->name);
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: root %d is not a rank of [job %s]; expected 0 to %d",
                        cs_run_args_origin(s, id, sj->origin), root, sj->name, views[built].topo->ngpus - 1);
            built++;
            goto out_views;
        }
        if (sj->size == 0) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: [job %s] has no size; expected size = SIZE (e.g. 1G)",
                        sj->origin, sj->name);
            built++;
            goto out_views;
        }
        /* a size below one element of every rank's part is no call
         * (nccl-tests counts it in elements: 3 bytes of double is 0) */
        cs_dtype_t dt = sj->dtype >= 0 ? (cs_dtype_t)sj->dtype : s->dtype;
        int nr = cs_comm_info(views[built].comm)->nranks;
        guint64 cnt = cs_coll_count(coll, sj->size, dt, nr);
        if (cs_coll_nccl_bytes(coll, cnt, dt, nr) == 0) {
            g_autofree char *id = g_strdup_printf("job %s.size", sj->name);
            gboolean per_rank = coll == CS_COLL_ALLGATHER || coll == CS_COLL_REDUCESCATTER || coll == CS_COLL_ALLTOALL;
            g_autofree char *ranks = per_rank ? g_strdup_printf(" for each of [job %s]'s %d ranks", sj->name, nr)
                                              : g_strdup_printf(" ([job %s])", sj->name);
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: %" G_GUINT64_FORMAT " bytes is less than one %s element%s; "
                        "expected a larger size", cs_run_args_origin(s, id, sj->origin), sj->size,
                        cs_dtype_name(dt), ranks);
            built++;
            goto out_views;
        }
        t->job = (cs_engine_job_t){
            .topo = views[built].topo, .comm = views[built].comm, .params = params, .coll = coll,
            .dtype = dt,
            .redop = sj->redop >= 0 ? (cs_redop_t)sj->redop : s->redop,
            .root = cs_coll_has_root(coll) ? root : -1, .seed = s->seed, .exact = s->exact,
            .fabric = &s->fabric,
        };
        t->name = sj->name;
        t->origin = sj->origin;
        t->rank_map = views[built].rank_map;
        t->link_map = views[built].link_map;
        t->call.size = sj->size;
        t->start_s = sj->start_s;
        t->iters = sj->iters;
        if (trace != NULL) {
            g_autofree char *label = g_strdup_printf("job %s (%d ranks)", sj->name, views[built].topo->ngpus);
            cs_trace_set_job_name(trace, (int)built, label);
        }
    }
    for (guint i = 0; i < n; i++) {
        const cs_scenario_job_t *sj = g_ptr_array_index(s->jobs, i);
        g_autoptr(GPtrArray) warnings = sj->env != NULL ? cs_nccl_env_warnings(sj->env) : NULL;
        for (guint k = 0; warnings != NULL && k < warnings->len; k++)
            fprintf(stderr, "collsim: warning: [job %s]: %s\n", sj->name, (const char *)g_ptr_array_index(warnings, k));
    }
    if (check_disjoint(s, views, err) && cs_run_args_check_outputs(s, err))
        status = run_jobs(s, ops, params, topo, views, tasks, trace, err);
out_views:
    for (guint i = 0; i < built; i++)
        job_view_clear(&views[i]);
    return status;
}

/* ---- one job, a sweep ------------------------------------------------------ */

/* --link-stats after a sweep: the bottleneck of every size, then every
 * link of the largest size. */
static void write_link_stats(const cs_result_t *r, const GPtrArray *stats)
{
    const cs_link_stats_t *last = NULL;
    guint k = 0;
    fprintf(stdout, "#\n");
    for (guint i = 0; i < r->rows->len; i++) {
        const cs_result_row_t *row = &g_array_index(r->rows, cs_result_row_t, i);
        if (row->time_us[CS_OOP] <= 0 || k >= stats->len)
            continue;   /* an empty call runs nothing */
        last = g_ptr_array_index(stats, k++);
        g_autofree char *sz = cs_format_size(row->size);
        g_autofree char *prefix = g_strdup_printf("%10s ", sz);
        cs_write_bottleneck_line(stdout, last, prefix);
    }
    if (last != NULL) {
        const cs_result_row_t *row = &g_array_index(r->rows, cs_result_row_t, r->rows->len - 1);
        g_autofree char *sz = cs_format_size(row->size);
        g_autofree char *what = g_strdup_printf("%s %s, the largest size", cs_coll_name(r->coll), sz);
        cs_write_link_stats(stdout, last, what, 20);
        const cs_net_counters_t *net = r->net != NULL && r->net->len == r->rows->len
                                           ? g_ptr_array_index(r->net, r->rows->len - 1) : NULL;
        if (net != NULL)
            cs_write_net_counters(stdout, net, what, 20);
    }
}


/* -v: what pricing a size took, under its row as a '#' comment (the table
 * stays one that validate reads). */
static void write_step(const cs_engine_step_t *st)
{
    fprintf(stdout, "#   -v: priced in %.3g s CPU, %.3g s wall; %s\n", st->cpu_s, st->wall_s,
            st->counters != NULL ? st->counters : "the model keeps no counters");
}

/* The table's header, held back until the first row or until the run has
 * taken a second, whichever comes first: a run that fails at once (an
 * engine refusing NCCL's choice) prints nothing on stdout, a long one
 * shows its header while it prices. */
typedef struct {
    GMutex lock;
    char *text;
    gboolean out;
} held_header_t;

static void held_header_print(gpointer data)
{
    held_header_t *h = data;
    g_mutex_lock(&h->lock);
    if (!h->out) {
        fputs(h->text, stdout);
        fflush(stdout);
        h->out = TRUE;
    }
    g_mutex_unlock(&h->lock);
}

static char *header_text(const cs_result_t *r, const cs_table_opts_t *o)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL)
        g_error("collsim: out of memory");
    cs_write_table_header(f, r, o);
    fclose(f);
    return buf;
}

/* Prices the sweep and prints the table as it goes: the header (see
 * held_header_t), each row when its size is priced, then what only the
 * end knows. *r_p: the finished result; *header_notes_p: how many of its
 * notes the header printed. Returns the exit status (0, 2 with *err set,
 * 3 with *err set for a failed write, cs_progress_exit_status() when stopped by a signal). */
static int run_sweep(gboolean verbose, const cs_scenario_t *s, const cs_engine_ops_t *ops,
                     const cs_engine_job_t *job, const guint64 *sizes, int nsizes, const cs_table_opts_t *o,
                     const GPtrArray *warnings, cs_result_t **r_p, guint *header_notes_p, GError **err)
{
    g_autoptr(cs_progress_t) progress = cs_progress_new(stderr, nsizes, sizes);
    g_autoptr(cs_engine_sweep_t) sw = cs_engine_sweep_new(ops, job, sizes, nsizes, err);
    if (sw == NULL)
        return cs_engine_interrupted() ? cs_progress_exit_status() : cs_error_exit_status(*err);
    cs_result_t *r = cs_engine_sweep_result(sw);
    cs_predict_header_notes(r, s, warnings);
    guint header_notes = r->notes->len;
    held_header_t header = { .text = header_text(r, o) };
    g_mutex_init(&header.lock);
    cs_progress_on_slow(progress, held_header_print, &header);
    int more = 1;
    for (int i = 0; more > 0; i++) {
        if (i < nsizes) {
            g_autofree char *label = cs_format_size(sizes[i]);
            cs_progress_begin(progress, i, label);
        }
        const cs_engine_step_t *st = NULL;
        more = cs_engine_sweep_next(sw, &st, err);
        cs_progress_end(progress);
        if (more > 0) {
            held_header_print(&header);
            cs_write_table_row(stdout, r, st->index, o);
            if (verbose)
                write_step(st);
            if (!cs_output_stdout_flush(err)) {
                more = -1;   /* nobody reads the rows: stop pricing */
                break;
            }
        }
    }
    /* the thread is gone: the header is ours again */
    g_clear_pointer(&progress, cs_progress_free);
    if (more == 0 && !cs_engine_interrupted())
        held_header_print(&header);   /* a sweep of no rows */
    g_mutex_clear(&header.lock);
    free(header.text);
    if (more < 0)
        return cs_engine_interrupted() ? cs_progress_exit_status() : cs_error_exit_status(*err);
    r = cs_engine_sweep_finish(g_steal_pointer(&sw));
    *r_p = r;
    *header_notes_p = header_notes;
    return cs_engine_interrupted() ? cs_progress_exit_status() : 0;
}

/* DCQCN cuts a sender's rate on the CNPs that ECN marks bring back; where
 * PFC pauses the links first (the queues PFC allows never reach the ECN
 * threshold), no packet is marked and DCQCN does nothing: with ConnectX's
 * values and the default thresholds for 400G that is a 2:1 spine's usual
 * case, and the counters only show under -v. Said with the sizes. */
static void dcqcn_idle_note(cs_result_t *r, const cs_scenario_t *s)
{
    if (s->fabric.dcqcn == CS_FABRIC_DCQCN_OFF || r->net == NULL)
        return;
    int idle = 0;
    guint64 first = 0, last = 0, pauses = 0;
    for (guint i = 0; i < r->net->len && i < r->rows->len; i++) {
        const cs_net_counters_t *c = g_ptr_array_index(r->net, i);
        if (c == NULL || c->credit || c->pause_frames == 0 || c->ecn_marks > 0)
            continue;
        guint64 size = g_array_index(r->rows, cs_result_row_t, i).size;
        if (idle++ == 0)
            first = size;
        last = size;
        pauses += c->pause_frames;
    }
    if (idle == 0)
        return;
    g_autofree char *a = cs_format_size(first), *b = cs_format_size(last);
    g_autofree char *range = idle > 1 ? g_strdup_printf("%s to %s", a, b) : g_strdup(a);
    cs_result_add_note(r, "DCQCN did nothing at %d of %u sizes (%s): PFC paused links (%" G_GUINT64_FORMAT
                       " pause frames) and no packet was ECN-marked, the queues PFC allows staying below the ECN "
                       "threshold (--ecn-kmin, by default the link rate's); DCQCN reacts only to marks: an ECN "
                       "threshold below PFC's XOFF point lets it act before PFC does (-v shows the counters)",
                       idle, r->rows->len, range, pauses);
}

/* What the model cannot give, refused before the topology is built. */
static gboolean check_model_outputs(const cs_scenario_t *s, const cs_engine_ops_t *ops, GError **err)
{
    if (s->trace_out != NULL && !ops->timeline) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: the %s model has no timeline for a trace; expected --model flow or packet",
                    cs_run_args_origin(s, "output.trace", "collsim: --trace"), ops->name);
        return FALSE;
    }
    if (s->link_stats && ops->link_stats == NULL) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                    "%s: the %s model reports no link statistics; expected --model analytic, flow or packet",
                    cs_run_args_origin(s, "output.link-stats", "collsim: --link-stats"), ops->name);
        return FALSE;
    }
    if (s->alternatives && (!ops->closed_form || s->jobs->len > 0)) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                    "%s: %s; expected --model analytic%s",
                    cs_run_args_origin(s, "output.alternatives", "collsim: --alternatives"),
                    s->jobs->len > 0 ? "a run of several jobs prices NCCL's picks only"
                                     : "only a closed-form engine prices what NCCL passed over at each size",
                    s->jobs->len > 0 ? " and one job" : "");
        return FALSE;
    }
    if (s->svg_out != NULL && s->jobs->len > 0) {
        const cs_scenario_job_t *j = g_ptr_array_index(s->jobs, 0);
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                    "%s: [job %s] (%s) makes this a run of several jobs, one size each, with no sweep to plot; "
                    "expected --svg for a run without [job NAME] groups",
                    cs_run_args_origin(s, "output.svg", "collsim: --svg"), j->name, j->origin);
        return FALSE;
    }
    return TRUE;
}

/* Returns the exit status; 2 with *err set for bad input, 3 for a failed
 * write. */
static int predict(const cs_run_args_t *a, gboolean verbose, cs_scenario_t *s, GError **err)
{
    if (!cs_run_args_build(a, s, err))
        return 2;
    if (a->dump) {
        /* a dump that run would refuse is no scenario to keep: the
         * topology it names, if it names one, is built (and dropped)
         * first (a dump without one stays a partial scenario, as real's) */
        if (s->topo.preset != NULL || s->topo.file != NULL) {
            g_autoptr(cs_topo_t) t = cs_topo_spec_build(&s->topo, err);
            if (t == NULL)
                return 2;
        }
        g_autofree char *ini = cs_scenario_to_ini(s);
        return cs_output_stdout(ini, strlen(ini), err) ? 0 : cs_error_exit_status(*err);
    }
    if (!cs_design_no_workload(s, "run", err))
        return 2;
    g_auto(cs_design_t) d;
    cs_design_init(&d);
    if (!cs_design_model(&d, s, err) || !check_model_outputs(s, d.ops, err) || !cs_design_build(&d, s, err))
        return 2;
    if (s->jobs->len > 0)
        return predict_jobs(s, d.ops, &d.params, d.topo, err);
    if (!cs_run_args_check_outputs(s, err))
        return 2;

    const cs_topo_t *topo = d.topo;
    int nsizes = 0;
    g_autofree guint64 *sizes = cs_scenario_sizes(s, &nsizes);
    g_autoptr(cs_trace_t) trace = s->trace_out != NULL ? cs_trace_new() : NULL;
    if (trace != NULL) {
        g_autofree char *producer = g_strconcat("model:", d.ops->name, NULL);
        cs_trace_set_producer(trace, producer);
    }
    g_autoptr(GPtrArray) stats = s->link_stats ? g_ptr_array_new_with_free_func((GDestroyNotify)cs_link_stats_free) : NULL;
    cs_engine_job_t job = cs_design_job(&d, s);
    job.sink = trace != NULL ? cs_trace_sink(trace) : NULL;
    job.link_stats = stats;
    job.time_steps = verbose;
    job.alternatives = s->alternatives;
    g_autoptr(GPtrArray) warnings = cs_nccl_env_warnings(s->env);
    cs_engine_ignored_settings(d.ops, &s->fabric, s->env, warnings);
    cs_engine_ignored_exact(d.ops, s->exact, warnings);
    cs_predict_sweep_warnings(s, topo, sizes, nsizes, warnings);
    for (guint i = 0; i < warnings->len; i++)
        fprintf(stderr, "collsim: warning: %s\n", (const char *)g_ptr_array_index(warnings, i));

    g_autofree char *command = cs_run_args_nccl_tests_command(s, topo->nnodes, topo->ngpus, cs_topo_node_gpus(topo, 0));
    int layout_procs, layout_threads, layout_gpus;
    cs_run_args_layout(s, cs_topo_node_gpus(topo, 0), &layout_procs, &layout_threads, &layout_gpus);
    cs_table_opts_t o = {
        .command = command,
        .topo_desc = topo->description,
        /* as the equivalent nccl-tests command's -t and -g (the process
         * layout, cs_run_args_layout) */
        .nthreads = layout_threads,
        .ngpus = layout_gpus,
        .iters = s->iters,
        .warmup = s->warmup,
        .agg_iters = s->agg_iters,
        .check = 0,               /* a prediction checks no data */
        .minbytes = s->minbytes,
        .maxbytes = s->maxbytes,
        .stepbytes = s->stepbytes,
        .stepfactor = s->stepfactor,
        .extra_columns = s->extra_columns,
        .topo = topo,
    };
    g_autoptr(cs_result_t) r = NULL;
    guint header_notes = 0;
    int status = run_sweep(verbose, s, d.ops, &job, sizes, nsizes, &o, warnings, &r, &header_notes, err);
    if (status != 0)
        return status;
    dcqcn_idle_note(r, s);

    /* Files at the end and atomically: all or none. */
    g_autofree char *json = s->json_out != NULL ? cs_write_json(r) : NULL;
    g_autofree char *csv = s->csv_out != NULL ? cs_write_csv(r) : NULL;
    g_autofree char *svg = s->svg_out != NULL ? write_svg(r, sizes, d.ops->name, &o) : NULL;
    if (!write_outputs(s, json, csv, trace, svg, err))
        return cs_error_exit_status(*err);
    cs_write_table_footer(stdout, r, header_notes);
    if (stats != NULL)
        write_link_stats(r, stats);
    return stdout_status(err);
}

static const cs_run_args_cmd_t run_cmd = {
    .command = "run",
    .parameter = "[SCENARIO] - predict a collective as nccl-tests would report it",
    .summary =
        "Predicts the times NCCL would take for a sweep of sizes of one collective and prints\n"
        "them in nccl-tests's table, with NCCL's choice of algorithm, protocol, channels and\n"
        "transport. Flags are nccl-tests's where it has one (-b -e -f -i -n -w -c -m -d -o -r -g -t).",
    .description =
        "Examples:\n"
        "  collsim run --topo dgx-h100 -b 8 -e 8G -f 2\n"
        "  collsim run --topo dgx-h100 --nodes 4 --nic ib-ndr --op allgather -b 1M -e 1G -f 2\n"
        "  collsim run scenarios/default.ini --env NCCL_ALGO=Ring --json out.json\n"
        "\nSee collsim(1) and collsim-scenario(5).",
};

int cs_cmd_run(int argc, char **argv)
{
    g_set_prgname("collsim run");
    return cs_cli_scenario_command(&run_cmd, "Under each row, what pricing it took: CPU and wall time, the model's counters", predict, argc, argv);
}
