/* The executor of a workload (see cs_step.h).
 *
 * Every op of the plan runs on several instances at once: a TP all-reduce
 * on every TP group of its stage, a compute op on every compute stream of
 * its stage. An instance is one call of an engine task:
 *  - a communicator ("slot") is one instance of a group kind; its calls of
 *    one collective and size are one task (the engine builds its program
 *    once and runs it per call); calls of other sizes on the same
 *    communicator wait for the one before (one NCCL stream, in order);
 *  - a compute stream is one task per TP group (tp > 1: its all-reduces
 *    hold back only its own GPUs) or per stage (tp = 1).
 * A call waits for the instances of each op it depends on that share a
 * GPU with it (the GPUs that produce or consume its data). */
#include "config.h"

#include <math.h>
#include <string.h>

#include "sim/cs_step.h"
#include "util/cs_error.h"
#include "util/cs_units.h"

/* One communicator: an instance of a group kind on a stage (PP: a pair of
 * stages). */
typedef struct {
    cs_wl_group_t g;
    int n, nnodes;
    int *ranks;                  /* machine ranks, communicator order */
    cs_topo_t *topo;             /* the machine restricted to them (built on demand) */
    int *rank_map, *link_map;
    cs_comm_t *comm;
    int last;                    /* the last op instance issued on it, -1: none */
} slot_t;

/* One compute stream: its stage and the ranks it stands for. */
typedef struct {
    int stage, n;
    int *ranks;
    int last;
} cstream_t;

/* An engine task being built. */
typedef struct {
    int slot;                    /* communicator, or -1: compute */
    cs_coll_t coll;
    guint64 size;
    GArray *busy;                /* compute: double per call */
    GArray *deps;                /* cs_engine_dep_t */
    int iters;
    double price_s;              /* one call alone */
    cs_decision_t decision;
    char *name;
} btask_t;

/* Where each instance of an op runs. */
typedef struct {
    int task, iter;
    int stream;                  /* slot or cstream index */
    double start, end;           /* closed-form schedule, or the engine's span */
    double free_end;             /* the schedule with free communication */
} inst_t;

/* The streams of an op: a group kind's communicators on a stage, or a
 * stage's compute streams; 'first' + instance is a slot or cstream index,
 * map[rank] the instance holding that rank (-1: none). */
typedef struct {
    int first, n;
    int *map;
} streams_t;

typedef struct {
    const cs_step_in_t *in;
    const cs_wl_plan_t *p;
    GPtrArray *slots;            /* slot_t */
    streams_t *groups;           /* [g * pp + lo]: the slots of group kind g on stage lo (PP: lo, lo + 1) */
    streams_t *stages;           /* [stage]: its compute streams */
    GArray *cstreams;            /* cstream_t */
    GArray *tasks;               /* btask_t */
    GHashTable *task_index;      /* per op: "c:stage" or "s:first slot:coll:size" -> first task + 1 */
    int *op_off;                 /* op i's instances: insts[op_off[i] .. op_off[i + 1]) */
    GArray *insts;               /* inst_t */
    int *dep_off;                /* instance k waits for insts dep_list[dep_off[k] .. dep_off[k + 1]) */
    GArray *dep_list;            /* int */
    GPtrArray *approx;           /* what the engine calls approximate (char*), once each */
    GPtrArray *approx_at;        /* ... and where: "allreduce of 32 MiB, 48 MiB" (GString*) */
} build_t;

static void slot_free(gpointer p)
{
    slot_t *s = p;
    cs_comm_free(s->comm);
    cs_topo_free(s->topo);
    g_free(s->rank_map);
    g_free(s->link_map);
    g_free(s->ranks);
    g_free(s);
}

static void gstring_free(gpointer g)
{
    g_string_free(g, TRUE);
}

static void build_clear(build_t *b)
{
    if (b->approx != NULL)
        g_ptr_array_unref(b->approx);
    if (b->approx_at != NULL)
        g_ptr_array_unref(b->approx_at);
    if (b->slots != NULL)
        g_ptr_array_unref(b->slots);
    for (int i = 0; b->groups != NULL && i < CS_WL_NGROUPS * b->p->pp; i++)
        g_free(b->groups[i].map);
    g_free(b->groups);
    for (int i = 0; b->stages != NULL && i < b->p->pp; i++)
        g_free(b->stages[i].map);
    g_free(b->stages);
    for (guint i = 0; b->cstreams != NULL && i < b->cstreams->len; i++)
        g_free(g_array_index(b->cstreams, cstream_t, i).ranks);
    if (b->cstreams != NULL)
        g_array_free(b->cstreams, TRUE);
    for (guint i = 0; b->tasks != NULL && i < b->tasks->len; i++) {
        btask_t *t = &g_array_index(b->tasks, btask_t, i);
        if (t->busy != NULL)
            g_array_free(t->busy, TRUE);
        g_array_free(t->deps, TRUE);
        g_free(t->name);
    }
    if (b->tasks != NULL)
        g_array_free(b->tasks, TRUE);
    if (b->task_index != NULL)
        g_hash_table_unref(b->task_index);
    g_free(b->op_off);
    if (b->insts != NULL)
        g_array_free(b->insts, TRUE);
    g_free(b->dep_off);
    if (b->dep_list != NULL)
        g_array_free(b->dep_list, TRUE);
}

/* "ranks 0-7", "ranks 0,8,16 ... 504 (64)": a track name. */
static char *ranks_text(const int *r, int n)
{
    GString *s = g_string_new(n == 1 ? "rank " : "ranks ");
    gboolean run = TRUE;
    for (int i = 1; i < n; i++)
        run &= r[i] == r[i - 1] + 1;
    if (n == 1)
        g_string_append_printf(s, "%d", r[0]);
    else if (run)
        g_string_append_printf(s, "%d-%d", r[0], r[n - 1]);
    else if (n <= 4)
        for (int i = 0; i < n; i++)
            g_string_append_printf(s, i > 0 ? ",%d" : "%d", r[i]);
    else
        g_string_append_printf(s, "%d,%d,%d ... %d (%d)", r[0], r[1], r[2], r[n - 1], n);
    return g_string_free(s, FALSE);
}

/* ---- streams: communicators and compute ------------------------------------ */

static const int *stream_ranks(const build_t *b, const cs_wl_op_t *op, int stream, int *n_p)
{
    if (op->kind == CS_WL_COMPUTE) {
        const cstream_t *c = &g_array_index(b->cstreams, cstream_t, stream);
        *n_p = c->n;
        return c->ranks;
    }
    const slot_t *s = g_ptr_array_index(b->slots, stream);
    *n_p = s->n;
    return s->ranks;
}

static int *streams_map(const build_t *b, const cs_wl_op_t *op, int first, int n)
{
    int *m = g_new(int, b->p->world);
    for (int r = 0; r < b->p->world; r++)
        m[r] = -1;
    for (int k = 0; k < n; k++) {
        int cnt;
        const int *ranks = stream_ranks(b, op, first + k, &cnt);
        for (int j = 0; j < cnt; j++)
            m[ranks[j]] = k;
    }
    return m;
}

/* Compute streams: one per TP group when TP splits a stage's GPUs into
 * groups that advance on their own (tp > 1), else one per stage. */
static void cstreams_build(build_t *b)
{
    const cs_wl_plan_t *p = b->p;
    int tpn = cs_wl_group_count(p, CS_WL_GROUP_TP), tps = cs_wl_group_size(p, CS_WL_GROUP_TP);
    int per_stage = p->tp > 1 ? tpn : 1, width = p->tp > 1 ? tps : tpn * tps;
    const cs_wl_op_t compute = { .kind = CS_WL_COMPUTE };
    for (int s = 0; s < p->pp; s++) {
        b->stages[s].first = (int)b->cstreams->len;
        b->stages[s].n = per_stage;
        for (int i = 0; i < per_stage; i++) {
            cstream_t c = { .stage = s, .n = width, .ranks = g_new(int, width), .last = -1 };
            for (int j = 0; j < width / tps; j++)
                cs_wl_group_ranks(p, CS_WL_GROUP_TP, s, s, i + j, c.ranks + j * tps);
            g_array_append_val(b->cstreams, c);
        }
        b->stages[s].map = streams_map(b, &compute, b->stages[s].first, per_stage);
    }
}

/* The streams an op runs on (its instances, in order); an op's group kind
 * and stages get their communicators the first time. */
static const streams_t *op_streams(build_t *b, const cs_wl_op_t *op)
{
    if (op->kind == CS_WL_COMPUTE)
        return &b->stages[op->stage];
    int lo = op->group == CS_WL_GROUP_PP ? MIN(op->stage, op->peer_stage) : op->stage;
    int hi = op->group == CS_WL_GROUP_PP ? lo + 1 : lo;
    streams_t *st = &b->groups[op->group * b->p->pp + lo];
    if (st->map != NULL)
        return st;
    st->first = (int)b->slots->len;
    st->n = cs_wl_group_count(b->p, op->group);
    const cs_topo_t *topo = b->in->topo;
    g_autofree int *seen = g_new0(int, MAX(1, topo->nnodes));
    for (int i = 0; i < st->n; i++) {
        slot_t *s = g_new0(slot_t, 1);
        s->g = op->group;
        s->n = cs_wl_group_size(b->p, op->group);
        s->ranks = g_new(int, s->n);
        cs_wl_group_ranks(b->p, op->group, lo, hi, i, s->ranks);
        for (int j = 0; j < s->n; j++) {
            int node = cs_topo_rank_dev(topo, s->ranks[j])->node;
            s->nnodes += seen[node] != i + 1;
            seen[node] = i + 1;
        }
        s->last = -1;
        g_ptr_array_add(b->slots, s);
    }
    st->map = streams_map(b, op, st->first, st->n);
    return st;
}

/* ---- tasks ----------------------------------------------------------------------- */

/* The first of an op's tasks, one per stream: a stream's calls of one
 * collective and size are one task, compute one task per stream. */
static int op_tasks(build_t *b, const cs_wl_op_t *op, const streams_t *st)
{
    g_autofree char *key = op->kind == CS_WL_COMPUTE
        ? g_strdup_printf("c:%d", op->stage)
        : g_strdup_printf("s:%d:%d:%" G_GUINT64_FORMAT, st->first, (int)op->coll, op->size);
    gpointer v = g_hash_table_lookup(b->task_index, key);
    if (v != NULL)
        return GPOINTER_TO_INT(v) - 1;
    int first = (int)b->tasks->len;
    g_autofree char *sz = op->kind == CS_WL_COMM ? cs_format_size(op->size) : NULL;
    for (int k = 0; k < st->n; k++) {
        int n;
        const int *ranks = stream_ranks(b, op, st->first + k, &n);
        g_autofree char *rt = ranks_text(ranks, n);
        btask_t t = { .slot = -1, .deps = g_array_new(FALSE, FALSE, sizeof(cs_engine_dep_t)) };
        if (op->kind == CS_WL_COMPUTE) {
            t.busy = g_array_new(FALSE, FALSE, sizeof(double));
            t.name = b->p->pp > 1 ? g_strdup_printf("compute, stage %d (%s)", op->stage, rt)
                                  : g_strdup_printf("compute (%s)", rt);
        } else {
            t.slot = st->first + k;
            t.coll = op->coll;
            t.size = op->size;
            t.name = g_strdup_printf("%s %s %s (%s)", cs_wl_group_name(op->group), cs_coll_name(op->coll), sz, rt);
        }
        g_array_append_val(b->tasks, t);
    }
    g_hash_table_insert(b->task_index, g_steal_pointer(&key), GINT_TO_POINTER(first + 1));
    return first;
}

static void add_dep(build_t *b, const inst_t *me, const inst_t *on)
{
    int idx = (int)(on - &g_array_index(b->insts, inst_t, 0));
    g_array_append_val(b->dep_list, idx);
    if (on->task == me->task)
        return;                  /* the same task runs its calls in order */
    btask_t *t = &g_array_index(b->tasks, btask_t, me->task);
    cs_engine_dep_t d = { .iter = me->iter, .task = on->task, .task_iter = on->iter };
    g_array_append_val(t->deps, d);
}

/* Every op's instances as calls of tasks, with their dependencies: the
 * instances of each dep op sharing a GPU, and the previous call on the
 * same stream (another task on the same communicator). */
static gboolean build_tasks(build_t *b, GError **err)
{
    const cs_wl_plan_t *p = b->p;
    b->op_off = g_new0(int, p->nops + 1);
    g_autofree const streams_t **op_st = g_new(const streams_t *, MAX(1, p->nops));
    for (int i = 0; i < p->nops; i++) {
        const cs_wl_op_t *op = &p->ops[i];
        b->op_off[i] = (int)b->insts->len;
        if (op->kind == CS_WL_COMM && op->group == CS_WL_GROUP_PP && abs(op->peer_stage - op->stage) != 1) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "workload: op %d sends to stage %d from stage %d", i,
                        op->peer_stage, op->stage);
            return FALSE;
        }
        const streams_t *st = op_st[i] = op_streams(b, op);
        int first = op_tasks(b, op, st);
        for (int k = 0; k < st->n; k++) {
            inst_t in = { .stream = st->first + k, .task = first + k };
            btask_t *t = &g_array_index(b->tasks, btask_t, in.task);
            in.iter = t->iters++;
            if (t->busy != NULL)
                g_array_append_val(t->busy, op->seconds);
            g_array_append_val(b->insts, in);
        }
    }
    b->op_off[p->nops] = (int)b->insts->len;
    /* dependencies; 'seen' keeps each dep instance once per call (a
     * stage-wide compute stream meets every DP communicator many times) */
    g_autofree int *seen = g_new0(int, MAX(1, p->world));
    int stamp = 0;
    b->dep_off = g_new0(int, b->insts->len + 1);
    for (int i = 0; i < p->nops; i++) {
        const cs_wl_op_t *op = &p->ops[i];
        for (int k = b->op_off[i]; k < b->op_off[i + 1]; k++) {
            inst_t *me = &g_array_index(b->insts, inst_t, k);
            b->dep_off[k] = (int)b->dep_list->len;
            int nr;
            const int *ranks = stream_ranks(b, op, me->stream, &nr);
            for (int d = 0; d < op->ndeps; d++) {
                int dep = op->deps[d];
                if (dep < 0 || dep >= i) {
                    g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "workload: op %d depends on op %d, not an earlier one",
                                i, dep);
                    return FALSE;
                }
                const int *m = op_st[dep]->map;
                stamp++;
                for (int j = 0; j < nr; j++) {
                    int di = m[ranks[j]];
                    if (di < 0 || seen[di] == stamp)
                        continue;
                    seen[di] = stamp;
                    add_dep(b, me, &g_array_index(b->insts, inst_t, b->op_off[dep] + di));
                }
            }
            /* the call before it on its stream */
            int *last = op->kind == CS_WL_COMM ? &((slot_t *)g_ptr_array_index(b->slots, me->stream))->last
                                               : &g_array_index(b->cstreams, cstream_t, me->stream).last;
            if (*last >= 0)
                add_dep(b, me, &g_array_index(b->insts, inst_t, *last));
            *last = k;
        }
    }
    b->dep_off[b->insts->len] = (int)b->dep_list->len;
    /* each task's deps come out sorted by call: its calls were numbered
     * in plan order, and the loop above walks the plan in order */
    return TRUE;
}

/* ---- communicators on the machine ---------------------------------------------- */

static gboolean slot_view(build_t *b, slot_t *s, GError **err)
{
    if (s->comm != NULL)
        return TRUE;
    const cs_topo_t *topo = b->in->topo;
    g_autofree gboolean *keep = g_new0(gboolean, topo->ngpus);
    for (int i = 0; i < s->n; i++)
        keep[s->ranks[i]] = TRUE;
    g_autoptr(GError) e = NULL;
    s->topo = cs_topo_select(topo, keep, &s->rank_map, &s->link_map, &e);
    if (s->topo != NULL)
        s->comm = cs_comm_new(s->topo, b->in->env, &e);
    if (s->comm == NULL) {
        g_autofree char *rt = ranks_text(s->ranks, s->n);
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s communicator on %s: %s", cs_wl_group_name(s->g), rt,
                    e->message);
        return FALSE;
    }
    return TRUE;
}

static cs_engine_job_t slot_job(const build_t *b, const slot_t *s, cs_coll_t coll)
{
    return (cs_engine_job_t){
        .topo = s->topo, .comm = s->comm, .params = b->in->params, .coll = coll, .dtype = b->p->dtype,
        .redop = CS_REDOP_SUM, .root = cs_coll_has_root(coll) ? 0 : -1, .seed = b->in->seed,
        .exact = b->in->exact, .fabric = b->in->fabric,
    };
}

/* NCCL's decision for a task's call (what the analytic path prices and
 * every path reports). */
static gboolean task_decide(build_t *b, btask_t *t, cs_engine_call_t *call_p, GError **err)
{
    slot_t *s = g_ptr_array_index(b->slots, t->slot);
    if (!slot_view(b, s, err))
        return FALSE;
    const cs_comm_info_t *info = cs_comm_info(s->comm);
    cs_engine_call_t c = { .size = t->size };
    c.count = cs_coll_count(t->coll, t->size, b->p->dtype, info->nranks);
    c.nccl_bytes = cs_coll_nccl_bytes(t->coll, c.count, b->p->dtype, info->nranks);
    if (c.nccl_bytes == 0) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "the workload's %s %s of %" G_GUINT64_FORMAT " B on %d ranks "
                    "leaves each rank under nccl-tests' 16 bytes; expected larger shapes (hidden, seq-len, "
                    "micro-batch) or a smaller %s group", cs_wl_group_name(s->g), cs_coll_name(t->coll), t->size,
                    info->nranks, cs_wl_group_name(s->g));
        return FALSE;
    }
    if (!cs_comm_decide(s->comm, t->coll, b->p->dtype, c.nccl_bytes, &t->decision, err))
        return FALSE;
    c.decision = &t->decision;
    *call_p = c;
    return TRUE;
}

/* ---- pricing: each call alone, then the plan in closed form --------------------- */

/* One call alone on its communicator: the engine's predict (its first
 * ring of a sweep), or for an engine that runs tasks, one task of one call
 * (no sink: the trace shows the step). */
static gboolean price_one(const cs_engine_ops_t *ops, build_t *b, const slot_t *s, const cs_engine_job_t *job,
                          const cs_engine_call_t *call, double tm[2], GError **err)
{
    if (ops->run_jobs != NULL) {
        double span[2] = { 0, 0 };
        cs_engine_task_t t = { .job = *job, .rank_map = s->rank_map, .link_map = s->link_map, .call = *call,
                               .iters = 1, .span_s = span };
        t.call.decision = NULL;
        cs_decision_t d;
        cs_engine_multi_t m = { .topo = b->in->topo, .params = b->in->params, .ntasks = 1, .tasks = &t };
        if (!cs_engine_run_graph(ops, &m, &d, err))
            return FALSE;
        tm[0] = tm[1] = span[1] - span[0];
        return TRUE;
    }
    void *state = NULL;
    if (ops->open != NULL && !ops->open(job, &state, err))
        return FALSE;
    gboolean ok = ops->predict(state, job, call, tm, err);
    /* the caveat a sweep notes with its sizes (cs_engine_run_sweep) */
    g_autofree char *approx = ok && ops->approximation != NULL ? ops->approximation(state) : NULL;
    if (approx != NULL) {
        g_autofree char *sz = cs_format_size(call->size);
        g_autofree char *what = g_strdup_printf("%s of", cs_coll_name(job->coll));
        if (b->approx == NULL) {
            b->approx = g_ptr_array_new_with_free_func(g_free);
            b->approx_at = g_ptr_array_new_with_free_func(gstring_free);
        }
        guint k;
        if (!g_ptr_array_find_with_equal_func(b->approx, approx, g_str_equal, &k)) {
            k = b->approx->len;
            g_ptr_array_add(b->approx, g_steal_pointer(&approx));
            g_ptr_array_add(b->approx_at, g_string_new(NULL));
        }
        GString *at = g_ptr_array_index(b->approx_at, k);
        g_autofree char *item = g_strdup_printf("%s %s", what, sz);
        if (strstr(at->str, item) == NULL)   /* (the same call of several groups) */
            g_string_append_printf(at, "%s%s", at->len > 0 ? ", " : "", item);
    }
    if (ops->close != NULL)
        ops->close(state);
    return ok;
}

/* Every call alone, priced once per group kind, collective, size and
 * communicator shape (ranks, nodes): the instances of a group kind sit on
 * identical hardware in the presets and builders. The first call of each
 * shape builds its communicator and takes NCCL's decision; the others share
 * them. The analytic path schedules with these prices; the together path
 * shows them as 'alone'. */
typedef struct {
    double price_s;
    cs_decision_t decision;
} priced_t;

static gboolean price_alone(const cs_engine_ops_t *ops, build_t *b, GError **err)
{
    g_autoptr(GHashTable) cache = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    for (guint i = 0; i < b->tasks->len; i++) {
        btask_t *t = &g_array_index(b->tasks, btask_t, i);
        if (t->slot < 0)
            continue;
        slot_t *s = g_ptr_array_index(b->slots, t->slot);
        g_autofree char *key = g_strdup_printf("%d:%d:%" G_GUINT64_FORMAT ":%d:%d", (int)s->g, (int)t->coll, t->size,
                                               s->n, s->nnodes);
        const priced_t *hit = g_hash_table_lookup(cache, key);
        if (hit != NULL) {
            t->price_s = hit->price_s;
            t->decision = hit->decision;
            continue;
        }
        cs_engine_call_t call;
        if (!task_decide(b, t, &call, err))
            return FALSE;
        cs_engine_job_t job = slot_job(b, s, t->coll);
        double tm[2] = { 0, 0 };
        if (!price_one(ops, b, s, &job, &call, tm, err))
            return FALSE;
        t->price_s = tm[0];
        priced_t v = { .price_s = tm[0], .decision = t->decision };
        g_hash_table_insert(cache, g_steal_pointer(&key), g_memdup2(&v, sizeof v));
    }
    return TRUE;
}

/* The plan scheduled in closed form: each instance starts when what it
 * waits for ended and lasts its compute or its call's price (free: 0). */
static void schedule(build_t *b, gboolean free_comm)
{
    for (guint k = 0; k < b->insts->len; k++) {
        inst_t *in = &g_array_index(b->insts, inst_t, k);
        const btask_t *t = &g_array_index(b->tasks, btask_t, in->task);
        double start = 0;
        for (int d = b->dep_off[k]; d < b->dep_off[k + 1]; d++) {
            const inst_t *on = &g_array_index(b->insts, inst_t, g_array_index(b->dep_list, int, d));
            start = MAX(start, free_comm ? on->free_end : on->end);
        }
        double len = t->busy != NULL ? g_array_index(t->busy, double, in->iter) : free_comm ? 0 : t->price_s;
        if (free_comm) {
            in->free_end = start + len;
        } else {
            in->start = start;
            in->end = start + len;
        }
    }
}

/* ---- pricing: everything at once on an engine with a timeline ------------------ */

static gboolean run_together(const cs_engine_ops_t *ops, build_t *b, GError **err)
{
    int n = (int)b->tasks->len;
    g_autofree cs_engine_task_t *tasks = g_new0(cs_engine_task_t, MAX(1, n));
    g_autofree cs_decision_t *dec = g_new0(cs_decision_t, MAX(1, n));
    g_autoptr(GPtrArray) spans = g_ptr_array_new_with_free_func(g_free);
    for (int i = 0; i < n; i++) {
        btask_t *bt = &g_array_index(b->tasks, btask_t, i);
        cs_engine_task_t *t = &tasks[i];
        t->iters = bt->iters;
        t->ndeps = (int)bt->deps->len;
        t->deps = (const cs_engine_dep_t *)(void *)bt->deps->data;
        t->span_s = g_new0(double, 2 * (gsize)bt->iters);
        g_ptr_array_add(spans, t->span_s);
        if (bt->slot < 0) {
            t->job = (cs_engine_job_t){ .topo = b->in->topo, .params = b->in->params, .dtype = b->p->dtype,
                                        .seed = b->in->seed, .exact = b->in->exact, .fabric = b->in->fabric,
                                        .root = -1 };
            t->busy_s = (const double *)(void *)bt->busy->data;
            continue;
        }
        slot_t *s = g_ptr_array_index(b->slots, bt->slot);
        if (!slot_view(b, s, err))
            return FALSE;
        t->job = slot_job(b, s, bt->coll);
        t->rank_map = s->rank_map;
        t->link_map = s->link_map;
        t->call.size = bt->size;
        if (b->in->name_task != NULL)
            b->in->name_task(b->in->name_data, i, bt->name);
    }
    for (int i = 0; i < n && b->in->name_task != NULL; i++) {
        const btask_t *bt = &g_array_index(b->tasks, btask_t, i);
        if (bt->slot < 0)
            b->in->name_task(b->in->name_data, i, bt->name);
    }
    cs_engine_multi_t m = { .topo = b->in->topo, .params = b->in->params, .sink = b->in->sink, .ntasks = n,
                            .tasks = tasks };
    if (!cs_engine_run_graph(ops, &m, dec, err))
        return FALSE;
    for (int i = 0; i < n; i++)
        g_array_index(b->tasks, btask_t, i).decision = dec[i];
    for (guint k = 0; k < b->insts->len; k++) {
        inst_t *in = &g_array_index(b->insts, inst_t, k);
        in->start = tasks[in->task].span_s[2 * in->iter];
        in->end = tasks[in->task].span_s[2 * in->iter + 1];
    }
    return TRUE;
}

/* ---- the result ------------------------------------------------------------------ */

static int call_cmp(const void *a, const void *b)
{
    const cs_step_call_t *x = a, *y = b;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    if (x->coll != y->coll)
        return x->coll < y->coll ? -1 : 1;
    if (x->size != y->size)
        return x->size < y->size ? -1 : 1;
    return x->group_nodes < y->group_nodes ? -1 : x->group_nodes > y->group_nodes;
}

static void fill_result(build_t *b, cs_step_result_t *r)
{
    const cs_wl_plan_t *p = b->p;
    r->nops = p->nops;
    r->ops = g_new0(cs_step_op_t, MAX(1, p->nops));
    r->ntasks = (int)b->tasks->len;
    for (int i = 0; i < p->nops; i++) {
        cs_step_op_t *o = &r->ops[i];
        o->start_s = G_MAXDOUBLE;
        o->instances = b->op_off[i + 1] - b->op_off[i];
        double sum = 0;
        for (int k = b->op_off[i]; k < b->op_off[i + 1]; k++) {
            const inst_t *in = &g_array_index(b->insts, inst_t, k);
            o->start_s = MIN(o->start_s, in->start);
            o->end_s = MAX(o->end_s, in->end);
            sum += in->end - in->start;
            r->step_s = MAX(r->step_s, in->end);
            r->free_s = MAX(r->free_s, in->free_end);
        }
        if (o->instances == 0)
            o->start_s = 0;
        o->mean_s = o->instances > 0 ? sum / o->instances : 0;
    }
    /* busy time per stream: compute per phase, communication per group */
    int ns = (int)b->slots->len, nc = (int)b->cstreams->len;
    g_autofree double *sbusy = g_new0(double, MAX(1, ns));
    g_autofree double *cbusy = g_new0(double, (gsize)MAX(1, nc) * CS_WL_NPHASES);
    for (int i = 0; i < p->nops; i++)
        for (int k = b->op_off[i]; k < b->op_off[i + 1]; k++) {
            const inst_t *in = &g_array_index(b->insts, inst_t, k);
            if (p->ops[i].kind == CS_WL_COMPUTE)
                cbusy[in->stream * CS_WL_NPHASES + p->ops[i].phase] += in->end - in->start;
            else
                sbusy[in->stream] += in->end - in->start;
        }
    for (int c = 0; c < nc; c++) {
        double tot = 0;
        for (int ph = 0; ph < CS_WL_NPHASES; ph++)
            tot += cbusy[c * CS_WL_NPHASES + ph];
        if (tot > r->compute_s) {
            r->compute_s = tot;
            for (int ph = 0; ph < CS_WL_NPHASES; ph++)
                r->phase_s[ph] = cbusy[c * CS_WL_NPHASES + ph];
        }
    }
    for (int s = 0; s < ns; s++) {
        const slot_t *sl = g_ptr_array_index(b->slots, s);
        r->comm_s[sl->g] = MAX(r->comm_s[sl->g], sbusy[s]);
    }
    /* every distinct summary of a group kind's communicators, in order: a
     * PP group's pairs inside a node and across nodes differ */
    for (int g = 0; g < CS_WL_NGROUPS; g++) {
        g_autoptr(GPtrArray) seen = g_ptr_array_new_with_free_func(g_free);
        for (int s = 0; s < ns; s++) {
            const slot_t *sl = g_ptr_array_index(b->slots, s);
            if (sl->comm == NULL || (int)sl->g != g)
                continue;
            char *sum = cs_comm_transport_summary(sl->comm);
            gboolean dup = FALSE;
            for (guint k = 0; k < seen->len && !dup; k++)
                dup = g_strcmp0(g_ptr_array_index(seen, k), sum) == 0;
            if (dup)
                g_free(sum);
            else
                g_ptr_array_add(seen, sum);
        }
        if (seen->len > 0) {
            g_ptr_array_add(seen, NULL);
            r->transport[g] = g_strjoinv("; ", (char **)seen->pdata);
        }
    }
    r->exposed_s = MAX(0.0, r->step_s - r->free_s);
    r->bubble_s = MAX(0.0, r->free_s - r->compute_s);

    /* kinds of calls: per group kind, collective, size and communicator
     * shape (the nodes it spans: one op's instances can sit on both, a PP
     * boundary's pairs inside a node and across nodes); 'calls' is what one
     * communicator runs per step: the count on the stage (PP: the pair's
     * lower stage) that runs the most of them; the mean is over the
     * instances of that shape */
    GArray *calls = g_array_new(FALSE, TRUE, sizeof(cs_step_call_t));
    GArray *counts = g_array_new(FALSE, TRUE, sizeof(int));     /* (kind, stage) */
    GArray *ninst = g_array_new(FALSE, TRUE, sizeof(int));      /* instances per kind */
    GArray *last_op = g_array_new(FALSE, TRUE, sizeof(int));    /* the op last counted per kind */
    for (int i = 0; i < p->nops; i++) {
        const cs_wl_op_t *op = &p->ops[i];
        if (op->kind != CS_WL_COMM || r->ops[i].instances == 0)
            continue;
        int st = op->group == CS_WL_GROUP_PP ? MIN(op->stage, op->peer_stage) : op->stage;
        for (int k = b->op_off[i]; k < b->op_off[i + 1]; k++) {
            const inst_t *in = &g_array_index(b->insts, inst_t, k);
            const btask_t *t = &g_array_index(b->tasks, btask_t, in->task);
            const slot_t *s = g_ptr_array_index(b->slots, t->slot);
            guint j;
            for (j = 0; j < calls->len; j++) {
                cs_step_call_t *c = &g_array_index(calls, cs_step_call_t, j);
                if (c->group == op->group && c->coll == op->coll && c->size == op->size &&
                    c->group_nodes == s->nnodes)
                    break;
            }
            if (j == calls->len) {
                cs_step_call_t c = { .group = op->group, .coll = op->coll, .size = op->size, .group_size = s->n,
                                     .group_nodes = s->nnodes, .decision = t->decision, .alone_s = t->price_s };
                g_array_append_val(calls, c);
                g_array_set_size(counts, counts->len + (guint)p->pp);
                g_array_set_size(ninst, ninst->len + 1);
                int none = -1;
                g_array_append_val(last_op, none);
            }
            g_array_index(calls, cs_step_call_t, j).mean_s += in->end - in->start;
            g_array_index(ninst, int, j)++;
            if (g_array_index(last_op, int, j) != i) {
                g_array_index(last_op, int, j) = i;
                g_array_index(counts, int, j * (guint)p->pp + (guint)st)++;
            }
        }
    }
    for (guint j = 0; j < calls->len; j++) {
        cs_step_call_t *c = &g_array_index(calls, cs_step_call_t, j);
        for (int st = 0; st < p->pp; st++)
            c->calls = MAX(c->calls, g_array_index(counts, int, j * (guint)p->pp + (guint)st));
        c->mean_s /= MAX(1, g_array_index(ninst, int, j));
        c->total_s = c->calls * c->mean_s;
        guint64 cnt = cs_coll_count(c->coll, c->size, p->dtype, c->group_size);
        if (c->mean_s > 0)
            c->busbw = cs_coll_algbw_bytes(c->coll, cnt, p->dtype, c->group_size) / c->mean_s / 1e9 *
                       cs_busbw_factor(c->coll, c->group_size);
    }
    g_array_free(counts, TRUE);
    g_array_free(ninst, TRUE);
    g_array_free(last_op, TRUE);
    g_array_sort(calls, call_cmp);
    r->ncalls = (int)calls->len;
    r->calls = (cs_step_call_t *)(void *)g_array_free(calls, FALSE);
}

cs_step_result_t *cs_step_run(const cs_engine_ops_t *ops, const cs_step_in_t *in, GError **err)
{
    g_return_val_if_fail(ops != NULL && in != NULL && in->plan != NULL && in->topo != NULL, NULL);
    const cs_wl_plan_t *p = in->plan;
    if (in->topo->ngpus != p->world) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "workload: the plan is for %d GPUs and the machine has %d",
                    p->world, in->topo->ngpus);
        return NULL;
    }
    build_t b = { .in = in, .p = p };
    b.slots = g_ptr_array_new_with_free_func(slot_free);
    b.groups = g_new0(streams_t, (gsize)CS_WL_NGROUPS * p->pp);
    b.stages = g_new0(streams_t, p->pp);
    b.cstreams = g_array_new(FALSE, FALSE, sizeof(cstream_t));
    b.tasks = g_array_new(FALSE, TRUE, sizeof(btask_t));
    b.task_index = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    b.insts = g_array_new(FALSE, TRUE, sizeof(inst_t));
    b.dep_list = g_array_new(FALSE, FALSE, sizeof(int));
    cs_step_result_t *r = NULL;
    cstreams_build(&b);
    if (!build_tasks(&b, err))
        goto out_build;
    gboolean together = ops->run_jobs != NULL;
    /* every call alone: the schedule of the analytic path; the together
     * path's table compares with it, after the run together (which is
     * refused first when it would not fit in memory) */
    if (together && !run_together(ops, &b, err))
        goto out_build;
    if (!price_alone(ops, &b, err))
        goto out_build;
    if (!together)
        schedule(&b, FALSE);
    schedule(&b, TRUE);
    r = g_new0(cs_step_result_t, 1);
    r->engine = ops->name;
    r->together = together;
    fill_result(&b, r);
    GPtrArray *notes = g_ptr_array_new();
    for (char **n = p->notes; n != NULL && *n != NULL; n++)
        g_ptr_array_add(notes, g_strdup(*n));
    if (together)
        g_ptr_array_add(notes, g_strdup_printf(
            "the %s engine ran every call of the step together (%d tasks): groups that overlap in time share "
            "links and GPU memory, and calls overlap compute as their dependencies allow", ops->name, r->ntasks));
    else
        g_ptr_array_add(notes, g_strdup_printf(
            "the %s engine priced each call alone, once per group kind, collective, size and communicator shape; "
            "calls that overlap in time do not slow each other (--model flow or packet runs them together)",
            ops->name));
    g_ptr_array_add(notes, g_strdup("one process per GPU (as torchrun launches them)"));
    for (guint i = 0; b.approx != NULL && i < b.approx->len; i++)
        g_ptr_array_add(notes, g_strdup_printf("approximate for %s: %s",
                                               ((GString *)g_ptr_array_index(b.approx_at, i))->str,
                                               (const char *)g_ptr_array_index(b.approx, i)));
    g_ptr_array_add(notes, NULL);
    r->notes = (char **)g_ptr_array_free(notes, FALSE);
out_build:
    build_clear(&b);
    return r;
}

void cs_step_result_free(cs_step_result_t *r)
{
    if (r == NULL)
        return;
    g_free(r->ops);
    g_free(r->calls);
    for (int g = 0; g < CS_WL_NGROUPS; g++)
        g_free(r->transport[g]);
    g_strfreev(r->notes);
    g_free(r);
}
