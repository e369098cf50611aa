/* The flow engine: executes the rank programs of a call (cs_program.h) as
 * transfers over the topology's directed links. Every active transfer gets
 * a max-min fair share of every link on its path (progressive filling),
 * recomputed when transfers start or end, only over the connected
 * component of links and transfers they touch, at most once per instant.
 * A sender may run at most 'credit' slices ahead of what its receiver has
 * consumed (NCCL's 8-slot pipeline). Each step pays its hop's latency after
 * its data is sent; LL/LL128 chains forward each line on arrival
 * (cut-through). Constants are the analytic engine's (cs_params): link and
 * protocol efficiencies, per-channel ceilings, hop, synchronisation and
 * launch costs.
 *
 * Tree, NVLS and NVLSTree all-reduce, SendRecv and AlltoAll run as
 * dataflow programs (flows with unit dependencies, cs_program.h): one lane
 * per flow, same sharing, credits and latencies, no reduction; a p2p flow
 * of a channel's next batch waits for the whole of the batch before it
 * (CS_PROG_LAG_END).
 *
 * Two exact reductions for rings: channels that are indistinguishable (same ring,
 * bytes and links) run as one weighted lane, and a ring that repeats every
 * node (or 2 nodes, a leaf, 2 leaves) with no link shared across periods is
 * simulated for one period. The model, its agreement with the analytic
 * engine and its speed are in docs/model-flow.md.
 *
 * Hot path (the event loop) allocates nothing but pooled events and uses
 * no GLib containers: every array is sized per call before the loop. */
#include "config.h"

#include <math.h>
#include <string.h>
#include <time.h>

#include "sim/cs_engine_flow-int.h"
#include "models/cs_program.h"
#include "models/cs_paths.h"
#include "util/cs_error.h"

enum { EV_FIN = 1, EV_ARR = 2, EV_HEAD = 3, EV_START = 4,
       EV_XSENT = 5, EV_XDELIV = 6 };   /* a transport's message left its NIC / was delivered */

typedef cs_flow_hop_t hop_t;

typedef struct {
    int off, nh;             /* into hops[]: every hop, in the shared numbering */
    cs_time_t lat;           /* fixed cost after the data is sent */
    double cap;              /* payload ceiling of one transfer (one CTA) */
    int stream;              /* event stream of its arrivals (one per latency), -1: the heap */
    /* With a transport (cs_flow_set_xport): the NICs an edge crosses the
     * network between (shared topology devices; -1: it does not), and the
     * latency of its network links and switches, which the transport
     * carries and 'lat' leaves out */
    int xsrc, xdst;
    cs_time_t xlat;
} edge_t;

/* A resource that can bind: coeff < 0 marks the sender's memory, whose
 * coefficient is the op's passes. */
typedef struct {
    int res;
    int lane;                /* whose it is */
    double coeff;
    int slot;                /* its position in the resource's list while active */
} bhop_t;

typedef struct {
    gint64 op_next, nops;
    gint64 arrived;          /* units of the previous position arrived here */
    gint64 headed;           /* ... whose first bytes arrived (cut-through) */
    gboolean wait_tail;      /* sent all its bytes, waits for the input's last ones */
    gint64 consumed;         /* ... and consumed (slots freed), in order */
    cs_prog_op_t op;         /* the op in progress */
    gboolean sending, frozen;
    double rem, rate;        /* payload bytes left, bytes/s */
    double old_rate;         /* rate its finish event was scheduled with */
    cs_time_t last;          /* when rem was last brought up to date */
    cs_time_t t_op;          /* when the op in progress started sending */
    cs_event_t *fin;
    int stamp;
    int bott;                /* resource its last fill froze it on, -1 its ceiling */
    int job;                 /* index into jobs[] */
    int ch, pos;             /* channel (a class representative) and ring position; dataflow: flow */
    int mem_res;             /* the sender's GPU memory */
    double mult;             /* identical channels this lane stands for */
    int boff, bn;            /* into bhops[]: the resources it shares */
    cs_time_t drain;         /* p2p Simple: its last step's receive, after it arrives */
} lane_t;

/* A dataflow lane waits for unit u - lag of lane 'lane' (global index). */
typedef struct {
    int lane, lag;
} ldep_t;

/* One job of a run: its program and where its lanes are. */
typedef struct {
    const cs_flow_net_t *net;    /* the job's own network view (its topology) */
    const int *rank_map, *link_map;
    cs_program_t *prog;          /* NULL: one rank, nothing to simulate */
    int base, nlanes, P;         /* lanes [base, base + nlanes), P positions per block */
    gboolean df, cut;
    guint8 *bind;                /* ring_binding over the whole ring, when it folds (one job) */
    gboolean approx;             /* folded with latencies averaged over the periods */
    int *qdep_off;               /* folded dataflow: each lane's dependencies (job lane indices), */
    ldep_t *qdeps;               /* ... NULL: the program's */
    int classes;                 /* folded dataflow: lane classes simulated, of 'flows' */
    int flows;
    cs_time_t spread;            /* ... the widest range of latencies averaged */
    double spread_rel;           /* ... and relative to their mean */
    cs_time_t start, gap;        /* first launch; launch (+ NVLS round, a one-node ring's hop latency, or a 1-rank copy) per call */
    cs_time_t host;              /* the host's issue period: call k starts at start + k host at the earliest */
    int iters, iter;
    int unfinished;              /* lanes with ops left in this call */
    gint64 inflight;             /* its arrival events not yet processed */
    cs_time_t call_start, end;
    gboolean done;
    double peff;                 /* its protocol's wire efficiency (transport messages) */
    /* Workloads (cs_engine_task_t): a call waits for its ready time and
     * for calls of other tasks; a compute task has no program, its call
     * k lasts busy[k] (its "gap"). */
    const double *ready, *busy;  /* per call, or NULL */
    int ndeps;
    const cs_engine_dep_t *deps;
    int node0;                   /* its call k is call node0 + k of the run's graph */
    gboolean armed;              /* its next call's start is queued, or the call runs */
    cs_time_t launch;            /* when the call in progress became launchable */
} fjob_t;

/* The simulated time the engine keeps: integer picoseconds up to 2^62
 * (53 days), so that a time plus a latency cannot wrap. A run that would
 * pass it (a slow link, a huge size) is refused, not priced wrongly. */
#define FLOW_HORIZON_PS ((cs_time_t)1 << 62)

struct cs_flow {
    const cs_topo_t *topo;   /* the shared machine */
    gboolean past_horizon;   /* a time beyond FLOW_HORIZON_PS was asked for in this run */
    int nres;
    double *res_cap;         /* bytes/s per resource */
    double *res_bytes;       /* carried in the last run */
    cs_time_t last_end;      /* the last run's length */
    cs_flow_stats_t last;    /* ... and how it was simulated */
    double last_cpu;         /* CPU seconds of the last predict, -1: none */
    gboolean has_net;
    cs_flow_net_t net;       /* the creating job's network view (cs_flow_simulate) */
    cs_sim_sink_t *sink;
    gboolean no_fold;        /* link statistics need every link's bytes: no folding */
    gboolean full_maxmin;    /* recompute whole components (tests compare) */
    const cs_flow_xport_t *xport;   /* network edges carried by a transport, or NULL */
    void *xctx;

    /* per run */
    int njobs;
    fjob_t *jobs;
    int nlanes;
    lane_t *lanes;
    edge_t *edges;
    hop_t *hops;
    bhop_t *bhops;
    int *res_off, *res_len, *res_list;   /* active bhops[] entries per resource */
    double *rem_cap, *wsum;
    int *res_stamp;
    int *dirty_res, ndirty;
    int *comp_lanes, *comp_res, *stack;
    int stamp;
    cs_evq_t *q;
    cs_time_t now;
    guint64 recomputes, touched, rates_changed;
    /* dataflow lanes: what each waits for, who depends on each lane's
     * units (any lag), who consumes them (lag 0) */
    int *dep_off;
    ldep_t *deps;
    int *wake_off, *wake, *cons_off, *cons;
    /* the sink's view: load per resource (bytes/s of capacity), changed list */
    double *load, *load_sent;
    int *load_mark, *changed, nchanged;
    char **res_name;
    /* the run's calls (every task's, node0 + k): dependencies not yet
     * ended, who waits for each, what task it is, and its span (launchable,
     * end) until the run ends well */
    int ncalls;
    int *pend, *call_job, *waiter_off, *waiter;
    cs_time_t *span;
};

static inline int res_mem_of(const cs_flow_t *f, int shared_rank) { return f->topo->nlinks + 3 * shared_rank + 2; }

/* A lane's bytes on the network: its payload over its protocol's wire
 * efficiency (LL's flags, LL128's), as the flow engine's coefficients. */
static inline double lane_xbytes(const cs_flow_t *f, int li, double payload)
{
    return payload / f->jobs[f->lanes[li].job].peff;
}

static cs_flow_t *flow_alloc(const cs_topo_t *topo, const cs_params_t *params)
{
    cs_flow_t *f = g_new0(cs_flow_t, 1);
    f->topo = topo;
    f->res_cap = cs_flow_res_caps(topo, params, &f->nres);
    f->res_bytes = g_new0(double, MAX(1, f->nres));
    f->q = cs_evq_new();
    f->last_cpu = -1;
    return f;
}

cs_flow_t *cs_flow_new(const cs_engine_job_t *job, GError **err)
{
    const cs_topo_t *topo = job->topo != NULL ? job->topo : cs_comm_topo(job->comm);
    cs_flow_t *f = flow_alloc(topo, job->params);
    if (!cs_flow_net_init(&f->net, job, err)) {
        cs_flow_free(f);
        return NULL;
    }
    f->has_net = TRUE;
    return f;
}

cs_flow_t *cs_flow_new_shared(const cs_topo_t *topo, const cs_params_t *params)
{
    return flow_alloc(topo, params);
}

void cs_flow_set_sink(cs_flow_t *f, cs_sim_sink_t *sink)
{
    f->sink = sink;
}

void cs_flow_set_full_maxmin(cs_flow_t *f, gboolean full)
{
    f->full_maxmin = full;
}

void cs_flow_set_xport(cs_flow_t *f, const cs_flow_xport_t *x, void *ctx)
{
    f->xport = x;
    f->xctx = ctx;
}

static void push_x(cs_flow_t *f, int kind, int li)
{
    cs_event_t *ev = cs_evq_alloc(f->q);
    ev->kind = kind;
    ev->a = li;
    ev->b = f->lanes[li].job;
    cs_evq_push(f->q, ev, f->now);
}

void cs_flow_xport_sent(cs_flow_t *f, int lane)
{
    push_x(f, EV_XSENT, lane);
}

void cs_flow_xport_delivered(cs_flow_t *f, int lane)
{
    push_x(f, EV_XDELIV, lane);
}

/* Every lane its own track or QPs: no merged channels, no folding. */
static inline gboolean each_lane(const cs_flow_t *f)
{
    return f->sink != NULL || f->xport != NULL;
}

static inline gboolean lane_x(const cs_flow_t *f, int li)
{
    return f->xport != NULL && f->edges[li].xsrc >= 0;
}


static void free_run(cs_flow_t *f)
{
    for (int j = 0; j < f->njobs; j++) {
        cs_program_free(f->jobs[j].prog);
        g_free(f->jobs[j].bind);
        g_free(f->jobs[j].qdep_off);
        g_free(f->jobs[j].qdeps);
    }
    g_clear_pointer(&f->jobs, g_free);
    f->njobs = 0;
    g_clear_pointer(&f->lanes, g_free);
    g_clear_pointer(&f->edges, g_free);
    g_clear_pointer(&f->hops, g_free);
    g_clear_pointer(&f->bhops, g_free);
    g_clear_pointer(&f->res_off, g_free);
    g_clear_pointer(&f->res_len, g_free);
    g_clear_pointer(&f->res_list, g_free);
    g_clear_pointer(&f->rem_cap, g_free);
    g_clear_pointer(&f->wsum, g_free);
    g_clear_pointer(&f->res_stamp, g_free);
    g_clear_pointer(&f->dirty_res, g_free);
    g_clear_pointer(&f->comp_lanes, g_free);
    g_clear_pointer(&f->comp_res, g_free);
    g_clear_pointer(&f->stack, g_free);
    g_clear_pointer(&f->dep_off, g_free);
    g_clear_pointer(&f->deps, g_free);
    g_clear_pointer(&f->wake_off, g_free);
    g_clear_pointer(&f->wake, g_free);
    g_clear_pointer(&f->cons_off, g_free);
    g_clear_pointer(&f->cons, g_free);
    g_clear_pointer(&f->load, g_free);
    g_clear_pointer(&f->load_sent, g_free);
    g_clear_pointer(&f->load_mark, g_free);
    g_clear_pointer(&f->changed, g_free);
    g_clear_pointer(&f->pend, g_free);
    g_clear_pointer(&f->call_job, g_free);
    g_clear_pointer(&f->waiter_off, g_free);
    g_clear_pointer(&f->waiter, g_free);
    g_clear_pointer(&f->span, g_free);
    f->ncalls = 0;
    f->nlanes = 0;
}

void cs_flow_free(cs_flow_t *f)
{
    if (f == NULL)
        return;
    free_run(f);
    if (f->has_net)
        cs_flow_net_clear(&f->net);
    if (f->res_name != NULL)
        for (int r = 0; r < f->nres; r++)
            g_free(f->res_name[r]);
    g_free(f->res_name);
    g_free(f->res_cap);
    g_free(f->res_bytes);
    cs_evq_free(f->q);
    g_free(f);
}

static const char *res_name(cs_flow_t *f, int r)
{
    if (f->res_name == NULL)
        f->res_name = g_new0(char *, MAX(1, f->nres));
    if (f->res_name[r] == NULL)
        f->res_name[r] = cs_flow_res_name(f->topo, r);
    return f->res_name[r];
}

static int stat_cmp(gconstpointer a, gconstpointer b)
{
    const cs_link_stat_t *x = a, *y = b;
    /* utilization in steps of 1e-9: links that carried the same bytes by
     * different sums (rounding) tie, and ties go by name */
    gint64 ux = llround(x->bytes / x->cap * 1e9), uy = llround(y->bytes / y->cap * 1e9);
    if (ux != uy)
        return ux > uy ? -1 : 1;
    return strcmp(x->name, y->name);
}

cs_link_stats_t *cs_flow_link_stats(const cs_flow_t *f)
{
    cs_link_stats_t *s = g_new0(cs_link_stats_t, 1);
    s->time_s = (double)f->last_end / CS_PS_PER_S;
    int n = 0;
    for (int r = 0; r < f->nres; r++)
        n += f->res_bytes[r] > 0 && f->res_cap[r] > 0;
    s->links = g_new0(cs_link_stat_t, MAX(1, n));
    for (int r = 0; r < f->nres; r++)
        if (f->res_bytes[r] > 0 && f->res_cap[r] > 0) {
            cs_link_stat_t *l = &s->links[s->n++];
            l->name = cs_flow_res_name(f->topo, r);
            l->cap = f->res_cap[r];
            l->bytes = f->res_bytes[r];
        }
    qsort(s->links, (size_t)s->n, sizeof *s->links, stat_cmp);
    return s;
}

/* ---- the sink's link counters ------------------------------------------ */

/* A lane's rate changes: every resource it crosses (shared or not) sees
 * the difference; counters go out once per instant (flush_loads). */
static void load_change(cs_flow_t *f, int li, double new_rate)
{
    lane_t *L = &f->lanes[li];
    double d = (new_rate - L->old_rate) * L->mult;
    if (d == 0)
        return;
    const edge_t *e = &f->edges[li];
    for (int h = 0; h < e->nh + (L->mem_res >= 0); h++) {
        int r = h < e->nh ? f->hops[e->off + h].res : L->mem_res;
        double c = h < e->nh ? f->hops[e->off + h].coeff : L->op.mem_passes;
        f->load[r] += d * c;
        if (!f->load_mark[r]) {
            f->load_mark[r] = 1;
            f->changed[f->nchanged++] = r;
        }
    }
}

static void flush_loads(cs_flow_t *f)
{
    for (int i = 0; i < f->nchanged; i++) {
        int r = f->changed[i];
        f->load_mark[r] = 0;
        double u = f->load[r] / f->res_cap[r];
        if (u < 1e-9)
            u = 0, f->load[r] = 0;
        /* changes under 0.1% of the link are not worth a counter event */
        if (fabs(u - f->load_sent[r]) < 1e-3 && !(u == 0 && f->load_sent[r] != 0))
            continue;
        f->load_sent[r] = u;
        if (f->sink->counter != NULL)
            f->sink->counter(f->sink, r, res_name(f, r), (double)f->now / CS_PS_PER_S, MIN(u, 1.0));
    }
    f->nchanged = 0;
}

static void set_rate(cs_flow_t *f, int li, double rate)
{
    if (f->sink != NULL)
        load_change(f, li, rate);
    f->lanes[li].rate = f->lanes[li].old_rate = rate;
}

/* ---- fair shares --------------------------------------------------------- */

static inline int lane_hop_res(const cs_flow_t *f, int li, int h, double *coeff_p)
{
    const lane_t *L = &f->lanes[li];
    const bhop_t *b = &f->bhops[L->boff + h];
    *coeff_p = b->coeff < 0 ? L->op.mem_passes : b->coeff;
    return b->res;
}

static void mark_dirty(cs_flow_t *f, int li)
{
    const lane_t *L = &f->lanes[li];
    for (int h = 0; h < L->bn; h++) {
        int r = f->bhops[L->boff + h].res;
        if (f->res_stamp[r] != -1) {
            f->res_stamp[r] = -1;
            f->dirty_res[f->ndirty++] = r;
        }
    }
}

/* now + secs, clamped to the horizon (which marks the run) */
static cs_time_t time_after(cs_flow_t *f, double secs)
{
    double ps = ceil(secs * CS_PS_PER_S);
    if (!(ps < (double)(FLOW_HORIZON_PS - f->now))) {
        f->past_horizon = TRUE;
        return FLOW_HORIZON_PS;
    }
    return f->now + (cs_time_t)ps;
}

static void schedule_fin(cs_flow_t *f, lane_t *L)
{
    double secs = L->rem > 0 ? L->rem / L->rate : 0;
    cs_time_t t = time_after(f, secs);
    if (L->fin->time != t || !cs_evq_scheduled(L->fin))
        cs_evq_reschedule(f->q, L->fin, t);
}

/* A transfer starts: it joins the lists of the resources it shares, or,
 * sharing none that can ever saturate, runs at its ceiling at once. */
static void res_add(cs_flow_t *f, int li)
{
    lane_t *L = &f->lanes[li];
    L->t_op = f->now;
    if (lane_x(f, li)) {
        /* the transport paces the message at the lane's share, its
         * ceiling until the shares are recomputed at this instant */
        set_rate(f, li, f->edges[li].cap);
        f->xport->rate(f->xctx, li, lane_xbytes(f, li, f->edges[li].cap), f->now);
        f->xport->send(f->xctx, li, lane_xbytes(f, li, L->op.bytes), f->now);
        if (L->bn == 0)
            return;
    } else if (L->bn == 0) {
        set_rate(f, li, f->edges[li].cap);
        schedule_fin(f, L);
        return;
    }
    for (int k = L->boff; k < L->boff + L->bn; k++) {
        bhop_t *b = &f->bhops[k];
        b->slot = f->res_len[b->res];
        f->res_list[f->res_off[b->res] + f->res_len[b->res]++] = k;
    }
    mark_dirty(f, li);
}

static void res_remove(cs_flow_t *f, int li)
{
    lane_t *L = &f->lanes[li];
    for (int k = L->boff; k < L->boff + L->bn; k++) {
        const bhop_t *b = &f->bhops[k];
        int *list = &f->res_list[f->res_off[b->res]];
        int last = list[--f->res_len[b->res]];
        list[b->slot] = last;
        f->bhops[last].slot = b->slot;
    }
    if (L->bn > 0)
        mark_dirty(f, li);
}

/* Progressive filling of the lanes comp_lanes[0, ncl) over the resources
 * comp_res[0, ncr), whose rem_cap (capacity left by the lanes outside) and
 * wsum (weight of the lanes inside) are set: every unfrozen lane's rate
 * rises together until a resource saturates or a lane reaches its
 * ceiling; those freeze. Sets each lane's rate and bottleneck (bott: the
 * resource that froze it, -1 its ceiling). */
static void fill(cs_flow_t *f, int ncl, int ncr)
{
    double level = 0;
    int unfrozen = ncl;
    while (unfrozen > 0) {
        double dx = INFINITY;
        for (int i = 0; i < ncr; i++) {
            int r = f->comp_res[i];
            if (f->wsum[r] > 1e-12)
                dx = MIN(dx, f->rem_cap[r] / f->wsum[r]);
        }
        for (int i = 0; i < ncl; i++) {
            int li = f->comp_lanes[i];
            if (!f->lanes[li].frozen)
                dx = MIN(dx, f->edges[li].cap - level);
        }
        dx = MAX(dx, 0);
        level += dx;
        for (int i = 0; i < ncr; i++) {
            int r = f->comp_res[i];
            f->rem_cap[r] -= f->wsum[r] * dx;
        }
        int froze = 0;
        for (int i = 0; i < ncl; i++) {
            int li = f->comp_lanes[i];
            lane_t *L = &f->lanes[li];
            if (L->frozen)
                continue;
            int bott = f->edges[li].cap - level <= 1e-9 * f->edges[li].cap ? -1 : -2;
            for (int h = 0; h < L->bn && bott == -2; h++) {
                double c;
                int r = lane_hop_res(f, li, h, &c);
                if (f->rem_cap[r] <= 1e-9 * f->res_cap[r])
                    bott = r;
            }
            if (bott == -2)
                continue;
            L->frozen = TRUE;
            L->rate = level;
            L->bott = bott;
            froze++;
            for (int h = 0; h < L->bn; h++) {
                double c;
                int r = lane_hop_res(f, li, h, &c);
                f->wsum[r] -= c * L->mult;
            }
        }
        unfrozen -= froze;
        if (froze == 0)
            break;   /* numerical safety: nothing binds (cannot happen with caps) */
    }
    for (int i = 0; i < ncl; i++) {
        lane_t *L = &f->lanes[f->comp_lanes[i]];
        if (!L->frozen) {
            L->rate = level;
            L->bott = -2;
        }
    }
}

/* The lanes filled take their new rates; an unchanged rate keeps its
 * finish time (no heap work). */
static void apply_rates(cs_flow_t *f, int ncl)
{
    f->recomputes++;
    f->touched += ncl;
    for (int i = 0; i < ncl; i++) {
        int li = f->comp_lanes[i];
        lane_t *L = &f->lanes[li];
        double rate = L->rate;
        if (rate == L->old_rate && cs_evq_scheduled(L->fin))
            continue;
        /* bytes left: one product per stretch of constant rate, so that
         * the same rates give the same finish times however often the
         * lane was looked at */
        L->rem -= L->old_rate * (double)(f->now - L->last) / CS_PS_PER_S;
        L->last = f->now;
        f->rates_changed++;
        set_rate(f, li, rate);
        if (lane_x(f, li))
            f->xport->rate(f->xctx, li, lane_xbytes(f, li, rate), f->now);
        else
            schedule_fin(f, L);
    }
}

/* The whole connected component of lanes and resources reached from the
 * dirty resources, filled from scratch. */
static void recompute_full(cs_flow_t *f)
{
    int stamp = ++f->stamp;
    int ncl = 0, ncr = 0, sp = 0;
    for (int i = 0; i < f->ndirty; i++) {
        int r = f->dirty_res[i];
        f->res_stamp[r] = stamp;
        f->stack[sp++] = r;
    }
    f->ndirty = 0;
    while (sp > 0) {
        int r = f->stack[--sp];
        f->comp_res[ncr++] = r;
        for (int k = 0; k < f->res_len[r]; k++) {
            int li = f->bhops[f->res_list[f->res_off[r] + k]].lane;
            lane_t *L = &f->lanes[li];
            if (L->stamp == stamp)
                continue;
            L->stamp = stamp;
            f->comp_lanes[ncl++] = li;
            for (int h = 0; h < L->bn; h++) {
                int r2 = f->bhops[L->boff + h].res;
                if (f->res_stamp[r2] != stamp) {
                    f->res_stamp[r2] = stamp;
                    f->stack[sp++] = r2;
                }
            }
        }
    }
    if (ncl == 0)
        return;
    for (int i = 0; i < ncr; i++) {
        int r = f->comp_res[i];
        f->rem_cap[r] = f->res_cap[r];
        f->wsum[r] = 0;
    }
    for (int i = 0; i < ncl; i++) {
        int li = f->comp_lanes[i];
        lane_t *L = &f->lanes[li];
        L->frozen = FALSE;
        for (int h = 0; h < L->bn; h++) {
            double c;
            int r = lane_hop_res(f, li, h, &c);
            f->wsum[r] += c * L->mult;
        }
    }
    fill(f, ncl, ncr);
    apply_rates(f, ncl);
}

/* Lane li joins the set being filled (stamp), with its resources. */
static inline void local_add(cs_flow_t *f, int li, int stamp, int *ncl, int *ncr)
{
    lane_t *L = &f->lanes[li];
    L->stamp = stamp;
    f->comp_lanes[(*ncl)++] = li;
    for (int h = 0; h < L->bn; h++) {
        int r = f->bhops[L->boff + h].res;
        if (f->res_stamp[r] != stamp) {
            f->res_stamp[r] = stamp;
            f->comp_res[(*ncr)++] = r;
        }
    }
}

/* Incremental max-min: only what the starts and ends of this instant can
 * change. The lanes on the dirty resources are filled over their
 * resources, with every other lane's load held at its rate. A max-min
 * allocation is the unique feasible one in which every lane has a
 * bottleneck, a saturated resource on which no lane runs faster, or its
 * ceiling; lanes outside the set keep theirs unless it is one of the set's
 * resources and it no longer is one (not saturated, or a lane of the set
 * now runs faster there), or a lane of the set froze on a resource where
 * they run faster. Such lanes join the set, which is filled again, until
 * none does: then every lane has a bottleneck and the rates are the full
 * recompute's (within the fill's 1e-9 relative tolerance; test-maxmin). */
static void recompute_local(cs_flow_t *f)
{
    int stamp = ++f->stamp;
    int ncl = 0, ncr = 0;
    for (int i = 0; i < f->ndirty; i++)
        f->res_stamp[f->dirty_res[i]] = 0;   /* no longer dirty, not in the set yet */
    for (int i = 0; i < f->ndirty; i++) {
        int r = f->dirty_res[i];
        for (int k = 0; k < f->res_len[r]; k++) {
            int li = f->bhops[f->res_list[f->res_off[r] + k]].lane;
            if (f->lanes[li].stamp != stamp)
                local_add(f, li, stamp, &ncl, &ncr);
        }
    }
    f->ndirty = 0;
    if (ncl == 0)
        return;
    for (;;) {
        for (int i = 0; i < ncr; i++) {
            int r = f->comp_res[i];
            double rc = f->res_cap[r];
            for (int k = 0; k < f->res_len[r]; k++) {
                const bhop_t *b = &f->bhops[f->res_list[f->res_off[r] + k]];
                const lane_t *M = &f->lanes[b->lane];
                if (M->stamp != stamp)
                    rc -= (b->coeff < 0 ? M->op.mem_passes : b->coeff) * M->mult * M->rate;
            }
            f->rem_cap[r] = rc;
            f->wsum[r] = 0;
        }
        for (int i = 0; i < ncl; i++) {
            int li = f->comp_lanes[i];
            lane_t *L = &f->lanes[li];
            L->frozen = FALSE;
            for (int h = 0; h < L->bn; h++) {
                double c;
                int r = lane_hop_res(f, li, h, &c);
                f->wsum[r] += c * L->mult;
            }
        }
        fill(f, ncl, ncr);
        int before = ncl, nr0 = ncr;
        for (int i = 0; i < nr0; i++) {
            int r = f->comp_res[i];
            const int *list = &f->res_list[f->res_off[r]];
            gboolean sat = f->rem_cap[r] <= 1e-9 * f->res_cap[r];
            double top = 0, low = INFINITY;   /* fastest lane on r; slowest of the set's frozen on r */
            for (int k = 0; k < f->res_len[r]; k++) {
                const lane_t *M = &f->lanes[f->bhops[list[k]].lane];
                top = MAX(top, M->rate);
                if (M->stamp == stamp && M->bott == r)
                    low = MIN(low, M->rate);
            }
            for (int k = 0; k < f->res_len[r]; k++) {
                int mi = f->bhops[list[k]].lane;
                const lane_t *M = &f->lanes[mi];
                if (M->stamp == stamp)
                    continue;
                gboolean lost = M->bott == r && (!sat || M->rate < top * (1 - 1e-9));
                if (lost || M->rate * (1 - 1e-9) > low)
                    local_add(f, mi, stamp, &ncl, &ncr);
            }
        }
        if (ncl == before)
            break;
    }
    apply_rates(f, ncl);
}

static void recompute(cs_flow_t *f)
{
    if (f->full_maxmin)
        recompute_full(f);
    else
        recompute_local(f);
}

/* ---- program execution: rings and chains -------------------------------- */

static inline fjob_t *job_of(cs_flow_t *f, int li)
{
    return &f->jobs[f->lanes[li].job];
}

static inline int lane_next(cs_flow_t *f, int li)
{
    const fjob_t *J = job_of(f, li);
    int k = li - J->base, blk = k / J->P, pos = k % J->P;
    return J->base + blk * J->P + (pos + 1) % J->P;
}

static inline int lane_prev(cs_flow_t *f, int li)
{
    const fjob_t *J = job_of(f, li);
    int k = li - J->base, blk = k / J->P, pos = k % J->P;
    return J->base + blk * J->P + (pos + J->P - 1) % J->P;
}

/* The lane's op counter moved on: one fewer lane busy when it is done. */
static inline void op_done(cs_flow_t *f, int li)
{
    lane_t *L = &f->lanes[li];
    if (++L->op_next == L->nops)
        job_of(f, li)->unfinished--;
}

/* An arrival over edge 'from' (now + its latency): arrivals over edges of
 * one latency come in time order, so they take that latency's stream
 * instead of the heap (same order, cheaper). */
static void push_arrival(cs_flow_t *f, int kind, int to, int from)
{
    const edge_t *e = &f->edges[from];
    int job = f->lanes[from].job;
    cs_event_t *ev = cs_evq_alloc(f->q);
    ev->kind = kind;
    ev->a = to;
    ev->b = job;
    f->jobs[job].inflight++;
    if (e->stream >= 0)
        cs_evq_push_stream(f->q, ev, f->now + e->lat, e->stream);
    else
        cs_evq_push(f->q, ev, f->now + e->lat + (kind == EV_HEAD ? e->xlat : 0));
}

/* A lane's unit is on its way: over the transport it arrives once the
 * transport delivers it (EV_XDELIV), until then it counts in flight. */
static void unit_out(cs_flow_t *f, int to, int li)
{
    if (lane_x(f, li)) {
        f->jobs[f->lanes[li].job].inflight++;
        return;
    }
    push_arrival(f, EV_ARR, to, li);
}

static void advance(cs_flow_t *f, int li)
{
    lane_t *L = &f->lanes[li];
    fjob_t *J = &f->jobs[L->job];
    const cs_program_t *p = J->prog;
    int ch = L->ch, pos = L->pos;
    while (!L->sending && L->op_next < L->nops) {
        cs_prog_op_t op;
        cs_program_op(p, ch, pos, L->op_next, &op);
        /* LL and LL128 chains forward each line as soon as its flag is
         * seen: a send may start once the input's first bytes are there. */
        gboolean cut = J->cut && op.send;
        if (op.consume >= 0 && (cut ? L->headed : L->arrived) <= op.consume)
            return;
        if (op.send) {
            if (f->lanes[lane_next(f, li)].consumed < op.send_unit + 1 - p->credit)
                return;
            L->op = op;
            L->sending = TRUE;
            L->rem = op.bytes;
            L->rate = L->old_rate = 0;
            L->last = f->now;
            res_add(f, li);
            if (J->cut)
                push_arrival(f, EV_HEAD, lane_next(f, li), li);
            return;
        }
        /* A receive only: the data is there, the slot is freed. */
        L->consumed++;
        op_done(f, li);
        if (p->chain ? pos > 0 : TRUE)
            advance(f, lane_prev(f, li));
    }
}

/* The op in progress is complete: its unit is on its way to the next
 * position, and the input it read is consumed. */
static void op_complete(cs_flow_t *f, int li)
{
    lane_t *L = &f->lanes[li];
    L->sending = FALSE;
    L->wait_tail = FALSE;
    unit_out(f, lane_next(f, li), li);
    if (L->op.consume >= 0)
        L->consumed++;
    op_done(f, li);
    advance(f, li);
    if (L->op.consume >= 0)
        advance(f, lane_prev(f, li));
}

/* ---- dataflow programs (Tree, NVLS, NVLSTree) ----------------------------
 * A lane is a flow; op_next counts the units it has sent (the one in
 * progress included while sending), arrived the units its receiver has. */

/* Units of lane li its receiver has consumed: the fewest that any flow
 * consuming them has sent, or what arrived when nothing consumes them. */
static gint64 df_consumed(const cs_flow_t *f, int li)
{
    int a = f->cons_off[li], b = f->cons_off[li + 1];
    if (a == b)
        return f->lanes[li].arrived;
    gint64 m = G_MAXINT64;
    for (int k = a; k < b; k++)
        m = MIN(m, f->lanes[f->cons[k]].op_next);
    return m;
}

static void df_advance(cs_flow_t *f, int li)
{
    lane_t *L = &f->lanes[li];
    const fjob_t *J = &f->jobs[L->job];
    const cs_program_t *p = J->prog;
    if (L->sending || L->op_next >= L->nops)
        return;
    gint64 u = L->op_next;
    for (int k = f->dep_off[li]; k < f->dep_off[li + 1]; k++) {
        const lane_t *D = &f->lanes[f->deps[k].lane];
        /* CS_PROG_LAG_END: the whole of the dependency (its last unit) */
        gint64 need = f->deps[k].lag == CS_PROG_LAG_END ? D->nops - 1 : u - f->deps[k].lag;
        /* LL/LL128: the data it forwards may start on its first bytes */
        if (need >= 0 && (J->cut && f->deps[k].lag == 0 ? D->headed : D->arrived) <= need)
            return;
    }
    if (df_consumed(f, li) < u + 1 - p->credit)
        return;
    const cs_prog_flow_t *fl = &p->flows[L->pos];
    L->op.send = TRUE;
    L->op.send_unit = u;
    L->op.consume = -1;
    L->op.bytes = cs_program_flow_bytes(p, L->ch, L->pos, u);
    L->op.mem_passes = fl->mem_passes;
    L->sending = TRUE;
    L->rem = L->op.bytes;
    L->rate = L->old_rate = 0;
    L->last = f->now;
    res_add(f, li);
    if (J->cut)
        push_arrival(f, EV_HEAD, li, li);
}

/* Whether the data the unit in progress forwards has fully arrived. */
static gboolean df_tail_in(const cs_flow_t *f, int li)
{
    const lane_t *L = &f->lanes[li];
    for (int k = f->dep_off[li]; k < f->dep_off[li + 1]; k++)
        if (f->deps[k].lag == 0 && f->lanes[f->deps[k].lane].arrived <= L->op.send_unit)
            return FALSE;
    return TRUE;
}

static void df_complete(cs_flow_t *f, int li)
{
    lane_t *L = &f->lanes[li];
    L->sending = FALSE;
    if (L->drain > 0 && L->op_next == L->nops - 1 && !lane_x(f, li)) {
        /* the last step is received once wholly sent (the pipeline's
         * fill at its end): arrives later than the latency's stream */
        cs_event_t *ev = cs_evq_alloc(f->q);
        ev->kind = EV_ARR;
        ev->a = li;
        ev->b = L->job;
        f->jobs[L->job].inflight++;
        cs_evq_push(f->q, ev, f->now + f->edges[li].lat + L->drain);
    } else {
        unit_out(f, li, li);
    }
    op_done(f, li);
    df_advance(f, li);
    /* the units it read may be consumed now: their senders may go on */
    for (int k = f->dep_off[li]; k < f->dep_off[li + 1]; k++)
        if (f->deps[k].lag == 0)
            df_advance(f, f->deps[k].lane);
}

static void df_arrive(cs_flow_t *f, int li)
{
    f->lanes[li].arrived++;
    for (int k = f->wake_off[li]; k < f->wake_off[li + 1]; k++) {
        int w = f->wake[k];
        if (f->lanes[w].wait_tail) {
            /* it sent its bytes and waited for the last of its input */
            if (df_tail_in(f, w)) {
                f->lanes[w].wait_tail = FALSE;
                df_complete(f, w);
            }
            continue;
        }
        df_advance(f, w);
    }
    if (f->cons_off[li] == f->cons_off[li + 1])
        df_advance(f, li);
}

/* The first bytes of lane li's unit reached its receiver (cut-through). */
static void df_head(cs_flow_t *f, int li)
{
    f->lanes[li].headed++;
    for (int k = f->wake_off[li]; k < f->wake_off[li + 1]; k++)
        df_advance(f, f->wake[k]);
}

/* ---- events ---------------------------------------------------------------- */

/* The rank a lane sends from and to, in its job's numbering (sink). */
static void lane_ends(cs_flow_t *f, int li, int *from_p, int *to_p)
{
    const lane_t *L = &f->lanes[li];
    const fjob_t *J = &f->jobs[L->job];
    const cs_program_t *p = J->prog;
    if (J->df) {
        const cs_prog_flow_t *fl = &p->flows[L->pos];
        *from_p = fl->src;
        *to_p = fl->kind == CS_FLOW_P2P ? fl->dst : -1;
    } else {
        *from_p = cs_program_rank(p, L->ch, L->pos);
        *to_p = cs_program_rank(p, L->ch, (L->pos + 1) % p->nranks);
    }
}

/* A transfer has sent its bytes; with cut-through the op also waits for
 * the last bytes of its input (it cannot forward what has not come). */
static void on_fin(cs_flow_t *f, int li)
{
    lane_t *L = &f->lanes[li];
    const fjob_t *J = &f->jobs[L->job];
    res_remove(f, li);
    set_rate(f, li, 0);
    const edge_t *e = &f->edges[li];
    for (int h = 0; h < e->nh; h++)
        f->res_bytes[f->hops[e->off + h].res] += L->op.bytes * f->hops[e->off + h].coeff * L->mult;
    if (L->mem_res >= 0)
        f->res_bytes[L->mem_res] += L->op.bytes * L->op.mem_passes * L->mult;
    if (f->sink != NULL && f->sink->span != NULL) {
        int from, to;
        lane_ends(f, li, &from, &to);
        f->sink->span(f->sink, L->job, from, L->ch, to, (double)L->t_op / CS_PS_PER_S,
                      (double)f->now / CS_PS_PER_S, L->op.bytes);
    }
    if (J->df) {
        if (J->cut && !df_tail_in(f, li)) {
            L->wait_tail = TRUE;
            return;
        }
        df_complete(f, li);
        return;
    }
    if (J->cut && L->op.consume >= 0 && L->arrived <= L->op.consume) {
        L->wait_tail = TRUE;
        return;
    }
    op_complete(f, li);
}

static void on_arrive(cs_flow_t *f, int li)
{
    if (job_of(f, li)->df) {
        df_arrive(f, li);
        return;
    }
    lane_t *L = &f->lanes[li];
    L->arrived++;
    if (L->wait_tail && L->arrived > L->op.consume)
        op_complete(f, li);
    else
        advance(f, li);
}

/* A call of job j starts (its launch paid): every lane from the top. */
static void job_start(cs_flow_t *f, int j)
{
    fjob_t *J = &f->jobs[j];
    J->call_start = f->now;
    J->unfinished = 0;
    for (int li = J->base; li < J->base + J->nlanes; li++) {
        lane_t *L = &f->lanes[li];
        L->op_next = L->arrived = L->headed = L->consumed = 0;
        L->wait_tail = L->sending = FALSE;
        J->unfinished += L->nops > 0;
    }
    for (int li = J->base; li < J->base + J->nlanes; li++) {
        if (J->df)
            df_advance(f, li);
        else
            advance(f, li);
    }
}

static void push_start(cs_flow_t *f, int j, cs_time_t at)
{
    cs_event_t *ev = cs_evq_alloc(f->q);
    ev->kind = EV_START;
    ev->a = -1;
    ev->b = j;
    cs_evq_push(f->q, ev, at);
}

/* What separates call k's launch from its kernel's start: the launch (a
 * communication task), or the whole call (a compute task keeps its
 * stream busy and moves nothing: it ends where its "kernel" starts). */
static inline cs_time_t call_gap(const fjob_t *J, int k)
{
    return J->busy != NULL ? (cs_time_t)llround(J->busy[k] * CS_PS_PER_S) : J->gap;
}

/* Job j's next call, if nothing holds it back: its previous call ended
 * (not armed), every call it depends on ended, the host has issued it
 * (start + k host) and its ready time came. It is launchable at the
 * latest of those, now at the earliest; its kernel starts a gap later. */
static void try_launch(cs_flow_t *f, int j)
{
    fjob_t *J = &f->jobs[j];
    int k = J->iter;
    if (J->done || J->armed || f->pend[J->node0 + k] > 0)
        return;
    cs_time_t at = MAX(f->now, J->start + k * J->host);
    if (J->ready != NULL)
        at = MAX(at, (cs_time_t)llround(J->ready[k] * CS_PS_PER_S));
    J->armed = TRUE;
    J->launch = at;
    push_start(f, j, at + call_gap(J, k));
}

/* Call node n ended: the calls waiting for it have one dependency less. */
static void release_waiters(cs_flow_t *f, int n)
{
    for (int w = f->waiter_off[n]; w < f->waiter_off[n + 1]; w++)
        if (--f->pend[f->waiter[w]] == 0)
            try_launch(f, f->call_job[f->waiter[w]]);
}

/* Job j has nothing left in flight: its call ended now. Its span runs
 * from when it became launchable, the launch gap included as it is in a
 * call's time alone, so that a compute call's span and the span of a
 * call waiting for it add up to the time both take. */
static void job_check_end(cs_flow_t *f, int j)
{
    fjob_t *J = &f->jobs[j];
    if (J->done || J->unfinished > 0 || J->inflight > 0 || J->call_start < 0)
        return;
    int n = J->node0 + J->iter;
    if (f->sink != NULL && f->sink->call != NULL)
        f->sink->call(f->sink, j, J->iter, (double)J->launch / CS_PS_PER_S, (double)f->now / CS_PS_PER_S);
    f->span[2 * n] = J->launch;
    f->span[2 * n + 1] = f->now;
    J->call_start = -1;
    J->armed = FALSE;
    if (++J->iter < J->iters)
        try_launch(f, j);   /* the same stream first: its order breaks ties */
    else {
        J->done = TRUE;
        J->end = f->now;
    }
    release_waiters(f, n);
}

/* Runs the events until nothing is left; with a transport, its events
 * and ours in time order (its first at equal times: what it reports
 * becomes our event at that instant). */
static gboolean run_events(cs_flow_t *f, GError **err)
{
    f->now = 0;
    for (guint poll = 0;; poll++) {
        /* Ctrl-C: a call may run for minutes */
        if ((poll & 4095) == 0 && cs_engine_interrupted()) {
            g_set_error(err, CS_ERROR, CS_ERROR_RUNTIME, "flow engine: interrupted");
            return FALSE;
        }
        cs_event_t *ev = cs_evq_peek(f->q);
        cs_time_t tev = ev != NULL ? ev->time : CS_TIME_NEVER;
        cs_time_t tx = f->xport != NULL ? f->xport->next(f->xctx) : CS_TIME_NEVER;
        if (MIN(tev, tx) > f->now) {
            if (f->ndirty > 0) {
                recompute(f);
                continue;
            }
            if (f->sink != NULL && f->nchanged > 0)
                flush_loads(f);
        }
        if (tx <= tev && tx != CS_TIME_NEVER) {
            f->now = tx;
            if (!f->xport->run(f->xctx, tx, err))
                return FALSE;
            continue;
        }
        if (ev == NULL)
            break;
        cs_evq_pop(f->q);
        f->now = ev->time;
        int li = ev->a, j = ev->b;
        switch (ev->kind) {
        case EV_FIN:
            j = f->lanes[li].job;
            on_fin(f, li);
            break;
        case EV_START:
            cs_evq_release(f->q, ev);
            job_start(f, j);
            break;
        case EV_XSENT:
            cs_evq_release(f->q, ev);
            on_fin(f, li);
            break;
        case EV_XDELIV:
            cs_evq_release(f->q, ev);
            f->jobs[j].inflight--;
            push_arrival(f, EV_ARR, f->jobs[j].df ? li : lane_next(f, li), li);
            break;
        case EV_HEAD:
            cs_evq_release(f->q, ev);
            f->jobs[j].inflight--;
            if (f->jobs[j].df) {
                df_head(f, li);
                break;
            }
            f->lanes[li].headed++;
            advance(f, li);
            break;
        default:
            cs_evq_release(f->q, ev);
            f->jobs[j].inflight--;
            on_arrive(f, li);
            break;
        }
        job_check_end(f, j);
    }
    return TRUE;
}

/* ---- setting up a run ----------------------------------------------------- */

/* A job's resource index in the shared numbering. */
static int map_res(const cs_flow_t *f, const fjob_t *J, int r)
{
    int nl = J->net->topo->nlinks;
    if (r < nl)
        return J->link_map != NULL ? J->link_map[r] : r;
    const cs_topo_t *jtop = J->net->topo;
    if (r >= cs_flow_res_socket_proxy(jtop, 0, 0)) {
        /* a rank's NET/Socket proxy (cs_flow_res_socket_proxy) */
        int q = r - cs_flow_res_socket_proxy(jtop, 0, 0), prank = q / 2;
        return cs_flow_res_socket_proxy(f->topo, J->rank_map != NULL ? J->rank_map[prank] : prank, q % 2);
    }
    int k = r - nl, rank = k / 3;
    if (rank >= J->net->topo->ngpus) {
        /* a CPU's host memory (cs_flow_net.c): the machine's device at the
         * far end of one of the job's links from it */
        const cs_topo_t *jt = J->net->topo;
        int d = k - 3 * jt->ngpus, dev = d;
        if (J->link_map != NULL && jt->adj_off[d] < jt->adj_off[d + 1])
            dev = f->topo->links[J->link_map[jt->adj[jt->adj_off[d]]]].src;
        return f->topo->nlinks + 3 * f->topo->ngpus + dev;
    }
    return f->topo->nlinks + 3 * (J->rank_map != NULL ? J->rank_map[rank] : rank) + k % 3;
}

static int job_mem(const cs_flow_t *f, const fjob_t *J, int rank)
{
    return res_mem_of(f, J->rank_map != NULL ? J->rank_map[rank] : rank);
}

static void edge_from(cs_flow_t *f, const fjob_t *J, const cs_flow_edge_t *eb, double cap, GArray *hops, edge_t *e)
{
    e->off = (int)hops->len;
    e->nh = 0;
    e->cap = cap;
    e->xsrc = e->xdst = -1;
    e->xlat = 0;
    double xlat = 0;
    for (int h = 0; h < eb->n; h++) {
        hop_t x = { map_res(f, J, eb->h[h].res), eb->h[h].coeff };
        if (f->xport != NULL && x.res < f->topo->nlinks && f->topo->links[x.res].kind == CS_LINK_NET) {
            /* the transport's part: from the first network link's NIC to the last's */
            const cs_link_t *l = &f->topo->links[x.res];
            if (e->xsrc < 0)
                e->xsrc = l->src;
            e->xdst = l->dst;
            xlat += l->lat + (f->topo->devs[l->dst].kind == CS_DEV_SWITCH ? f->topo->fabric.switch_lat : 0);
            continue;
        }
        if (f->xport != NULL && f->xport->rx_path && e->xsrc >= 0 && x.res < f->topo->nlinks)
            continue;   /* the receiver's links from its NIC inward: the transport's receive path drains at
                         * their rate, so a slow receiver holds its senders back through the fabric's flow
                         * control (pauses, credits), as on hardware, not by a fair share the senders know */
        g_array_append_val(hops, x);
        e->nh++;
    }
    e->xlat = (cs_time_t)llround(xlat * CS_PS_PER_S);
    e->lat = (cs_time_t)llround(eb->lat * CS_PS_PER_S) - e->xlat;
}

/* Resources that can saturate anywhere on the ring: summed over every
 * position and channel, the demand at each transfer's ceiling (memory at 3
 * passes) exceeds the capacity. Only they ever limit a rate (the others
 * leave the fair share, setup_resources), so only they shape the timeline. */
static guint8 *ring_binding(const cs_flow_t *f, const fjob_t *J, const edge_t *edges, const hop_t *hops, int nch,
                            int n)
{
    const cs_program_t *p = J->prog;
    g_autofree double *demand = g_new0(double, f->nres);
    for (int c = 0; c < nch; c++)
        for (int pos = 0; pos < n; pos++) {
            const edge_t *e = &edges[(gsize)c * n + pos];
            for (int h = 0; h < e->nh; h++)
                demand[hops[e->off + h].res] += hops[e->off + h].coeff * e->cap;
            demand[job_mem(f, J, cs_program_rank(p, c, pos))] += 3 * e->cap;
        }
    guint8 *bind = g_new0(guint8, f->nres);
    for (int r = 0; r < f->nres; r++)
        bind[r] = demand[r] > f->res_cap[r];
    return bind;
}

/* The next hop at or after h of edge e on a resource that can saturate
 * (any, with 'bind' NULL); e->nh when none is left. */
static inline int next_binding(const edge_t *e, const hop_t *hops, const guint8 *bind, int h)
{
    while (h < e->nh && bind != NULL && !bind[hops[e->off + h].res])
        h++;
    return h;
}

/* Whether edges x and y load resources that can saturate alike: the same
 * sequence of capacities and coefficients, and, with 'same_res', the very
 * same resources. Hops on resources that cannot saturate never change a
 * rate, so they are not compared ('bind' NULL: every hop is). */
static gboolean edges_alike(const cs_flow_t *f, const edge_t *x, const edge_t *y, const hop_t *hops,
                            const guint8 *bind, gboolean same_res)
{
    if (x->cap != y->cap)
        return FALSE;
    int i = next_binding(x, hops, bind, 0), k = next_binding(y, hops, bind, 0);
    for (; i < x->nh && k < y->nh; i = next_binding(x, hops, bind, i + 1), k = next_binding(y, hops, bind, k + 1)) {
        const hop_t *a = &hops[x->off + i], *b = &hops[y->off + k];
        if (a->coeff != b->coeff || f->res_cap[a->res] != f->res_cap[b->res] || (same_res && a->res != b->res))
            return FALSE;
    }
    return i == x->nh && k == y->nh;
}

typedef enum { FOLD_NO, FOLD_EXACT, FOLD_LATENCY } fold_fit_t;

/* Whether 'period' consecutive positions (one node, two where NCCL
 * alternates odd nodes' rings, a leaf's nodes, ...) stand for the whole
 * ring: the ring repeats with the period in rank numbering, every period's
 * edges load resources that can saturate as the first period's do (same
 * capacities and coefficients), and no such resource is used by edges of
 * two different periods (so no transfer shares a binding link with another
 * period's). FOLD_EXACT when the latencies are the same too: then each
 * position's timeline is the same in every period. FOLD_LATENCY when only
 * latencies differ (a leaf whose ring leaves through a core switch rather
 * than a spine): folding then averages them (approximate). */
static fold_fit_t fold_fit(const cs_flow_t *f, const fjob_t *J, const edge_t *edges, const hop_t *hops,
                           const guint8 *bind, int nch, int n, int period)
{
    const cs_program_t *p = J->prog;
    if (p->chain || period < 1 || period >= n || n % period != 0)
        return FOLD_NO;
    g_autofree int *owner = g_new(int, f->nres);
    for (int r = 0; r < f->nres; r++)
        owner[r] = -1;
    fold_fit_t fit = FOLD_EXACT;
    for (int c = 0; c < nch; c++)
        for (int pos = 0; pos < n; pos++) {
            if (cs_program_rank(p, c, pos) != cs_program_rank(p, c, pos % period) + (pos / period) * period)
                return FOLD_NO;
            const edge_t *e = &edges[(gsize)c * n + pos], *e0 = &edges[(gsize)c * n + pos % period];
            if (!edges_alike(f, e, e0, hops, bind, FALSE))
                return FOLD_NO;
            if (e->lat != e0->lat)
                fit = FOLD_LATENCY;
            for (int h = 0; h <= e->nh; h++) {
                /* the hops, then the sender's memory */
                int r = h < e->nh ? hops[e->off + h].res : job_mem(f, J, cs_program_rank(p, c, pos));
                if (!bind[r])
                    continue;
                if (owner[r] >= 0 && owner[r] != pos / period)
                    return FOLD_NO;
                owner[r] = pos / period;
            }
        }
    return fit;
}

/* Whether channels a and b are interchangeable over the whole ring: the
 * same ring, bytes, latencies and the very same resources that can
 * saturate (all resources with 'bind' NULL). */
static gboolean same_channel(const cs_flow_t *f, const cs_program_t *p, const edge_t *edges, const hop_t *hops,
                             const guint8 *bind, int n, int a, int b)
{
    if (p->ch_bytes[a] != p->ch_bytes[b] ||
        memcmp(&p->order[(gsize)a * n], &p->order[(gsize)b * n], sizeof(int) * n) != 0)
        return FALSE;
    for (int pos = 0; pos < n; pos++) {
        const edge_t *x = &edges[(gsize)a * n + pos], *y = &edges[(gsize)b * n + pos];
        if (x->lat != y->lat || !edges_alike(f, x, y, hops, bind, TRUE))
            return FALSE;
    }
    return TRUE;
}

/* A ring or chain program's lanes, appended to 'lanes'/'edges'/'hops'. */
static gboolean setup_ring(cs_flow_t *f, fjob_t *J, cs_flow_fold_t fold, GArray *lanes, GArray *edges_out,
                           GArray *hops, GError **err)
{
    const cs_program_t *prog = J->prog;
    const cs_flow_net_t *net = J->net;
    int n = prog->nranks, nch = prog->nch;
    double cap = cs_flow_channel_bw(net, prog->proto, prog->nthreads);
    /* Edges of every position, then decide whether one node suffices. */
    gsize ne = (gsize)nch * n;
    g_autofree edge_t *edges = g_new0(edge_t, ne);
    GArray *eh = g_array_new(FALSE, FALSE, sizeof(hop_t));
    cs_flow_edge_t eb;
    for (int c = 0; c < nch; c++)
        for (int pos = 0; pos < n; pos++) {
            edge_t *e = &edges[(gsize)c * n + pos];
            e->off = (int)eh->len;
            e->cap = cap;
            e->xsrc = e->xdst = -1;
            if (!cs_program_sends(prog, pos))
                continue;
            int a = cs_program_rank(prog, c, pos), b = cs_program_rank(prog, c, (pos + 1) % n);
            if (!cs_flow_build_edge(net, c, a, b, prog->proto, &eb, err)) {
                g_array_free(eh, TRUE);
                return FALSE;
            }
            edge_from(f, J, &eb, eb.cap > 0 ? MIN(cap, eb.cap) : cap, eh, e);
        }
    if (prog->latency_once) {
        /* one node: the hops' latency once per call, the units without it
         * (cs_program_t.latency_once) */
        g_autofree double *lat = g_new(double, ne);
        for (gsize i = 0; i < ne; i++) {
            lat[i] = (double)edges[i].lat;
            edges[i].lat = 0;
        }
        J->gap += (cs_time_t)llround(cs_program_latency_once(prog, lat));
    }
    const hop_t *hp = (const hop_t *)eh->data;
    /* With folding allowed the run is one job alone with nothing watching
     * every link: only resources that can saturate matter (ring_binding). */
    const guint8 *bind = J->bind = fold != CS_FLOW_FOLD_NONE ? ring_binding(f, J, edges, hp, nch, n) : NULL;
    /* LL/LL128 chains forward each line on arrival; a one-node chain of
     * any protocol is timed streamed (cs_program_t.streamed) */
    J->cut = prog->chain && (prog->proto != CS_PROTO_SIMPLE || prog->streamed);
    /* Channels with the same ring, bytes, latencies and resources that can
     * saturate are indistinguishable: their transfers always get the same
     * shares, so one lane stands for all of them, with their weight on
     * every resource. Exact; off with a sink (every channel gets its track). */
    g_autofree int *rep = g_new(int, nch);
    g_autofree int *mult = g_new0(int, nch);
    int nrep = 0;
    for (int c = 0; c < nch; c++) {
        int k = nrep;
        if (!each_lane(f))
            for (k = 0; k < nrep; k++)
                if (same_channel(f, prog, edges, hp, bind, n, rep[k], c))
                    break;
        if (k == nrep)
            rep[nrep++] = c;
        mult[k]++;
    }
    /* Only rings spread over whole nodes can fold. Candidate periods, in
     * nodes: 1, 2 (NCCL alternates odd nodes' rings), then a leaf's nodes
     * times 1, 2, 4, ... (the fabric repeats per leaf, or per group of
     * leaves under one spine or pod); the smallest exact one wins. With
     * CS_FLOW_FOLD_AUTO, when that still leaves more than
     * CS_FLOW_EXACT_WORK transfers to simulate, the smallest period that
     * differs from the others only in latencies stands for the ring, with
     * each position's latency averaged over the periods. */
    int ppn = net->info->ppn, period = n, nnodes = net->info->nnodes, approx = n;
    if (fold != CS_FLOW_FOLD_NONE && nnodes > 1 && n == nnodes * ppn) {
        int npl = MAX(1, net->topo->fabric.nodes_per_leaf);
        for (int c = 1; c < nnodes && period == n; c = c < 2 ? 2 : c == 2 && npl > 2 ? npl : c * 2) {
            if (nnodes % c != 0)
                continue;
            fold_fit_t fit = fold_fit(f, J, edges, hp, bind, nch, n, c * ppn);
            if (fit == FOLD_EXACT)
                period = c * ppn;
            else if (fit == FOLD_LATENCY && approx == n)
                approx = c * ppn;
        }
    }
    J->P = period;
    J->approx = FALSE;
    J->spread = 0;
    J->spread_rel = 0;
    double work = (double)nrep * period * (double)cs_program_nops(prog, rep[0], 0);   /* transfers */
    if (approx < period && (fold == CS_FLOW_FOLD_APPROX || (fold == CS_FLOW_FOLD_AUTO && work > CS_FLOW_EXACT_WORK))) {
        J->P = approx;
        J->approx = TRUE;
        for (int k = 0; k < nrep; k++)
            for (int pos = 0; pos < approx; pos++) {
                edge_t *e = &edges[(gsize)rep[k] * n + pos];
                cs_time_t lo = e->lat, hi = e->lat;
                double sum = 0;
                for (int q = pos; q < n; q += approx) {
                    cs_time_t l = edges[(gsize)rep[k] * n + q].lat;
                    lo = MIN(lo, l);
                    hi = MAX(hi, l);
                    sum += (double)l;
                }
                e->lat = (cs_time_t)llround(sum / (n / approx));
                J->spread = MAX(J->spread, hi - lo);
                if (e->lat > 0)
                    J->spread_rel = MAX(J->spread_rel, (double)(hi - lo) / (double)e->lat);
            }
    }
    J->nlanes = nrep * J->P;
    for (int k = 0; k < nrep; k++)
        for (int pos = 0; pos < J->P; pos++) {
            edge_t e = edges[(gsize)rep[k] * n + pos];
            int off = e.off;
            e.off = (int)hops->len;
            g_array_append_vals(hops, (const hop_t *)eh->data + off, e.nh);
            g_array_append_val(edges_out, e);
            lane_t L = { 0 };
            L.job = (int)(J - f->jobs);
            L.ch = rep[k];
            L.pos = pos;
            L.mult = mult[k];
            L.mem_res = job_mem(f, J, cs_program_rank(prog, rep[k], pos));
            L.nops = cs_program_nops(prog, rep[k], pos);
            g_array_append_val(lanes, L);
        }
    g_array_free(eh, TRUE);
    return TRUE;
}

/* Whether channels a and b of a dataflow program are interchangeable: the
 * same bytes, and flow for flow the same senders, receivers, shares,
 * dependencies (within the channel) and edges over the very same
 * resources. 'edges'/'hops' hold every flow's edge. */
static gboolean same_df_channel(const cs_flow_t *f, const cs_program_t *p, const edge_t *edges, const hop_t *hops,
                                int a, int b)
{
    int na = p->flow_off[a + 1] - p->flow_off[a];
    if (p->ch_bytes[a] != p->ch_bytes[b] || na != p->flow_off[b + 1] - p->flow_off[b])
        return FALSE;
    for (int i = 0; i < na; i++) {
        int fa = p->flow_off[a] + i, fb = p->flow_off[b] + i;
        const cs_prog_flow_t *x = &p->flows[fa], *y = &p->flows[fb];
        if (x->kind != y->kind || x->src != y->src || x->dst != y->dst || x->mem_passes != y->mem_passes ||
            x->share != y->share || x->cap_div != y->cap_div || x->recv_div != y->recv_div || x->bytes != y->bytes ||
            x->unit != y->unit)
            return FALSE;
        int nd = p->dep_off[fa + 1] - p->dep_off[fa];
        if (nd != p->dep_off[fb + 1] - p->dep_off[fb])
            return FALSE;
        for (int k = 0; k < nd; k++) {
            const cs_prog_dep_t *da = &p->deps[p->dep_off[fa] + k], *db = &p->deps[p->dep_off[fb] + k];
            if (da->lag != db->lag || da->flow - p->flow_off[a] != db->flow - p->flow_off[b] ||
                da->flow < p->flow_off[a] || da->flow >= p->flow_off[a + 1])
                return FALSE;
        }
        if (edges[fa].lat != edges[fb].lat || !edges_alike(f, &edges[fa], &edges[fb], hops, NULL, TRUE))
            return FALSE;
    }
    return TRUE;
}

/* ---- folding dataflow programs ---------------------------------------------
 * Flows that play the same part (the same units, ceiling, weight and
 * latency, over resources that can saturate with the same capacities and
 * coefficients, depending on and feeding flows that play the same parts,
 * and sharing each such resource with the same numbers of flows of each
 * part) have the same timeline: the coarsest such partition (colour
 * refinement, an equitable partition of the graph of lanes, binding
 * resources and dependencies) is computed, and one lane per class runs,
 * loading each class of resources with the summed weight of its class
 * there. Exact: the same timeline, up to the order of floating-point sums
 * (docs/model-flow.md, "Folding dataflow programs"). */

/* Equal integer signatures get the same id, numbered in order of first
 * appearance (deterministic). */
typedef struct {
    GArray *buf;             /* gint32: every signature of the round */
    int *off, *len;          /* per element */
    int *slot;               /* open addressing: element + 1, 0 empty */
    guint mask;
} sigtab_t;

static void sig_begin(sigtab_t *t, int n)
{
    g_array_set_size(t->buf, 0);
    guint size = 16;
    while (size < 2u * (guint)n)
        size *= 2;
    g_free(t->slot);
    t->slot = g_new0(int, size);
    t->mask = size - 1;
}

static inline void sig_put(sigtab_t *t, gint32 v)
{
    g_array_append_val(t->buf, v);
}

static inline void sig_put64(sigtab_t *t, guint64 v)
{
    sig_put(t, (gint32)(v & 0xffffffffu));
    sig_put(t, (gint32)(v >> 32));
}

static inline guint64 dbits(double d)
{
    guint64 u;
    memcpy(&u, &d, sizeof u);
    return u;
}

/* Sorts 'n' tuples of 'w' integers (from 'at' in the buffer). */
static void sig_sort(sigtab_t *t, int at, int n, int w)
{
    gint32 *a = &g_array_index(t->buf, gint32, at), tmp[4];
    for (int i = 1; i < n; i++)
        for (int k = i; k > 0 && memcmp(&a[(k - 1) * w], &a[k * w], sizeof(gint32) * w) > 0; k--) {
            memcpy(tmp, &a[k * w], sizeof(gint32) * w);
            memcpy(&a[k * w], &a[(k - 1) * w], sizeof(gint32) * w);
            memcpy(&a[(k - 1) * w], tmp, sizeof(gint32) * w);
        }
}

/* Ids of the n signatures written (element i from off[i], len[i]). */
static int sig_ids(sigtab_t *t, int n, int *id)
{
    const gint32 *b = (const gint32 *)t->buf->data;
    int next = 0;
    for (int i = 0; i < n; i++) {
        guint h = 2166136261u;
        for (int k = 0; k < t->len[i]; k++)
            h = (h ^ (guint)b[t->off[i] + k]) * 16777619u;
        for (guint s = h & t->mask;; s = (s + 1) & t->mask) {
            int e = t->slot[s] - 1;
            if (e < 0) {
                t->slot[s] = i + 1;
                id[i] = next++;
                break;
            }
            if (t->len[e] == t->len[i] && memcmp(&b[t->off[e]], &b[t->off[i]], sizeof(gint32) * t->len[i]) == 0) {
                id[i] = id[e];
                break;
            }
        }
    }
    return next;
}

/* The graph being partitioned: a job's active lanes and the resources
 * that can saturate. */
typedef struct {
    int n, nr;
    int *act;                /* lane k -> job lane index */
    int *res;                /* resource k -> resource */
    int *lh_off, *lh_res;    /* lane -> binding hops (resource k), memory included */
    double *lh_c;            /* ... coefficient (memory: passes) */
    int *rl_off, *rl_lane;   /* resource -> lanes using it (once per hop) */
    double *rl_w;            /* ... coefficient x weight */
    int *d_off, *rd_off;     /* lane -> dependencies, dependents (lane k, lag) */
    ldep_t *d, *rd;
} dfgraph_t;

static void dfgraph_clear(dfgraph_t *g)
{
    g_free(g->act);
    g_free(g->res);
    g_free(g->lh_off);
    g_free(g->lh_res);
    g_free(g->lh_c);
    g_free(g->rl_off);
    g_free(g->rl_lane);
    g_free(g->rl_w);
    g_free(g->d_off);
    g_free(g->rd_off);
    g_free(g->d);
    g_free(g->rd);
}

static void dfgraph_build(const cs_flow_t *f, const fjob_t *J, const lane_t *lv, const edge_t *ev, const hop_t *hops,
                          dfgraph_t *g)
{
    const cs_program_t *p = J->prog;
    int nl = J->nlanes;
    g_autofree int *kof = g_new(int, nl);
    g->act = g_new(int, MAX(1, nl));
    g->n = 0;
    for (int i = 0; i < nl; i++) {
        kof[i] = lv[i].nops > 0 ? g->n : -1;
        if (lv[i].nops > 0)
            g->act[g->n++] = i;
    }
    /* resources that can saturate: the demand at every lane's ceiling */
    g_autofree double *demand = g_new0(double, f->nres);
    for (int k = 0; k < g->n; k++) {
        const lane_t *L = &lv[g->act[k]];
        const edge_t *e = &ev[g->act[k]];
        for (int h = 0; h < e->nh; h++)
            demand[hops[e->off + h].res] += hops[e->off + h].coeff * L->mult * e->cap;
        demand[L->mem_res] += p->flows[L->pos].mem_passes * L->mult * e->cap;
    }
    g_autofree int *rk = g_new(int, f->nres);
    g->nr = 0;
    for (int r = 0; r < f->nres; r++)
        rk[r] = demand[r] > f->res_cap[r] ? g->nr++ : -1;
    g->res = g_new(int, MAX(1, g->nr));
    for (int r = 0; r < f->nres; r++)
        if (rk[r] >= 0)
            g->res[rk[r]] = r;
    /* binding hops per lane, then per resource */
    g->lh_off = g_new0(int, g->n + 1);
    GArray *lr = g_array_new(FALSE, FALSE, sizeof(int)), *lc = g_array_new(FALSE, FALSE, sizeof(double));
    g->rl_off = g_new0(int, g->nr + 1);
    for (int k = 0; k < g->n; k++) {
        const lane_t *L = &lv[g->act[k]];
        const edge_t *e = &ev[g->act[k]];
        for (int h = 0; h <= e->nh; h++) {
            int r = h < e->nh ? hops[e->off + h].res : L->mem_res;
            double c = h < e->nh ? hops[e->off + h].coeff : p->flows[L->pos].mem_passes;
            if (rk[r] < 0)
                continue;
            g_array_append_val(lr, rk[r]);
            g_array_append_val(lc, c);
            g->rl_off[rk[r] + 1]++;
        }
        g->lh_off[k + 1] = (int)lr->len;
    }
    g->lh_res = (int *)g_array_free(lr, FALSE);
    g->lh_c = (double *)g_array_free(lc, FALSE);
    for (int r = 0; r < g->nr; r++)
        g->rl_off[r + 1] += g->rl_off[r];
    int nh = g->lh_off[g->n];
    g->rl_lane = g_new(int, MAX(1, nh));
    g->rl_w = g_new(double, MAX(1, nh));
    g_autofree int *fill = g_memdup2(g->rl_off, sizeof(int) * (g->nr + 1));
    for (int k = 0; k < g->n; k++)
        for (int h = g->lh_off[k]; h < g->lh_off[k + 1]; h++) {
            int at = fill[g->lh_res[h]]++;
            g->rl_lane[at] = k;
            g->rl_w[at] = g->lh_c[h] * lv[g->act[k]].mult;
        }
    /* dependencies (between active lanes; unfolded lane = base + flow) */
    g->d_off = g_new0(int, g->n + 1);
    g->rd_off = g_new0(int, g->n + 1);
    GArray *d = g_array_new(FALSE, FALSE, sizeof(ldep_t));
    for (int k = 0; k < g->n; k++) {
        int fi = lv[g->act[k]].pos;
        for (int q = p->dep_off[fi]; q < p->dep_off[fi + 1]; q++) {
            int to = kof[p->deps[q].flow];
            ldep_t x = { to, p->deps[q].lag };
            if (to < 0)
                continue;   /* a merged channel's flow: never happens within a channel */
            g_array_append_val(d, x);
            g->rd_off[to + 1]++;
        }
        g->d_off[k + 1] = (int)d->len;
    }
    g->d = (ldep_t *)g_array_free(d, FALSE);
    for (int k = 0; k < g->n; k++)
        g->rd_off[k + 1] += g->rd_off[k];
    g->rd = g_new(ldep_t, MAX(1, g->d_off[g->n]));
    g_autofree int *rf = g_memdup2(g->rd_off, sizeof(int) * (g->n + 1));
    for (int k = 0; k < g->n; k++)
        for (int q = g->d_off[k]; q < g->d_off[k + 1]; q++)
            g->rd[rf[g->d[q].lane]++] = (ldep_t){ k, g->d[q].lag };
}

/* Colour refinement from lanes alike in their units, ceiling, weight, kind
 * and latency and resources alike in capacity, until no class splits.
 * lcol/rcol: the classes; returns the number of lane classes. */
static int dfgraph_refine(const cs_flow_t *f, const fjob_t *J, const lane_t *lv, const edge_t *ev,
                          const dfgraph_t *g, int *lcol, int *rcol)
{
    const cs_program_t *p = J->prog;
    sigtab_t lt = { g_array_new(FALSE, FALSE, sizeof(gint32)), g_new(int, MAX(1, g->n)), g_new(int, MAX(1, g->n)),
                    NULL, 0 };
    sigtab_t rt = { g_array_new(FALSE, FALSE, sizeof(gint32)), g_new(int, MAX(1, g->nr)),
                    g_new(int, MAX(1, g->nr)), NULL, 0 };
    sig_begin(&lt, g->n);
    for (int k = 0; k < g->n; k++) {
        const lane_t *L = &lv[g->act[k]];
        const cs_prog_flow_t *fl = &p->flows[L->pos];
        lt.off[k] = (int)lt.buf->len;
        sig_put64(&lt, (guint64)L->nops);
        sig_put64(&lt, p->ch_bytes[L->ch]);
        sig_put64(&lt, dbits(fl->share));
        sig_put64(&lt, fl->bytes);
        sig_put64(&lt, fl->unit);
        sig_put(&lt, fl->mem_passes);
        sig_put(&lt, fl->kind);
        sig_put64(&lt, dbits(ev[g->act[k]].cap));
        sig_put64(&lt, dbits(L->mult));
        sig_put64(&lt, (guint64)ev[g->act[k]].lat);
        lt.len[k] = (int)lt.buf->len - lt.off[k];
    }
    int nl = sig_ids(&lt, g->n, lcol);
    sig_begin(&rt, g->nr);
    for (int r = 0; r < g->nr; r++) {
        rt.off[r] = (int)rt.buf->len;
        sig_put64(&rt, dbits(f->res_cap[g->res[r]]));
        rt.len[r] = (int)rt.buf->len - rt.off[r];
    }
    int nrc = sig_ids(&rt, g->nr, rcol);
    g_autofree int *nlcol = g_new(int, MAX(1, g->n));
    g_autofree int *nrcol = g_new(int, MAX(1, g->nr));
    for (;;) {
        sig_begin(&lt, g->n);
        for (int k = 0; k < g->n; k++) {
            lt.off[k] = (int)lt.buf->len;
            sig_put(&lt, lcol[k]);
            int at = (int)lt.buf->len;
            for (int h = g->lh_off[k]; h < g->lh_off[k + 1]; h++) {
                sig_put(&lt, rcol[g->lh_res[h]]);
                sig_put64(&lt, dbits(g->lh_c[h]));
            }
            sig_sort(&lt, at, g->lh_off[k + 1] - g->lh_off[k], 3);
            sig_put(&lt, -1);
            at = (int)lt.buf->len;
            for (int q = g->d_off[k]; q < g->d_off[k + 1]; q++) {
                sig_put(&lt, lcol[g->d[q].lane]);
                sig_put(&lt, g->d[q].lag);
            }
            sig_sort(&lt, at, g->d_off[k + 1] - g->d_off[k], 2);
            sig_put(&lt, -2);
            at = (int)lt.buf->len;
            for (int q = g->rd_off[k]; q < g->rd_off[k + 1]; q++) {
                sig_put(&lt, lcol[g->rd[q].lane]);
                sig_put(&lt, g->rd[q].lag);
            }
            sig_sort(&lt, at, g->rd_off[k + 1] - g->rd_off[k], 2);
            lt.len[k] = (int)lt.buf->len - lt.off[k];
        }
        int nl2 = sig_ids(&lt, g->n, nlcol);
        sig_begin(&rt, g->nr);
        for (int r = 0; r < g->nr; r++) {
            rt.off[r] = (int)rt.buf->len;
            sig_put(&rt, rcol[r]);
            int at = (int)rt.buf->len;
            for (int q = g->rl_off[r]; q < g->rl_off[r + 1]; q++) {
                sig_put(&rt, lcol[g->rl_lane[q]]);
                sig_put64(&rt, dbits(g->rl_w[q]));
            }
            sig_sort(&rt, at, g->rl_off[r + 1] - g->rl_off[r], 3);
            rt.len[r] = (int)rt.buf->len - rt.off[r];
        }
        int nr2 = sig_ids(&rt, g->nr, nrcol);
        memcpy(lcol, nlcol, sizeof(int) * g->n);
        memcpy(rcol, nrcol, sizeof(int) * g->nr);
        if (nl2 == nl && nr2 == nrc)
            break;   /* refinement only splits: the same counts are the same classes */
        nl = nl2;
        nrc = nr2;
    }
    for (int i = 0; i < 2; i++) {
        sigtab_t *t = i == 0 ? &lt : &rt;
        g_array_free(t->buf, TRUE);
        g_free(t->off);
        g_free(t->len);
        g_free(t->slot);
    }
    return nl;
}

/* Replaces job J's lanes (the last ones of 'lanes'/'edges') by one per
 * class: its edge loads one resource per class of resources it uses with
 * the summed coefficient x weight of its class there (memory included, as
 * a hop), its dependencies are the classes'. */
static void dfgraph_quotient(cs_flow_t *f, fjob_t *J, const dfgraph_t *g, const int *lcol, int ncls,
                             const int *rcol, GArray *lanes, GArray *edges, GArray *hops)
{
    g_autofree lane_t *lv = g_memdup2(&g_array_index(lanes, lane_t, J->base), sizeof(lane_t) * J->nlanes);
    g_autofree edge_t *ev = g_memdup2(&g_array_index(edges, edge_t, J->base), sizeof(edge_t) * J->nlanes);
    g_autofree int *rep = g_new(int, ncls);
    g_autofree int *size = g_new0(int, ncls);
    for (int k = 0; k < g->n; k++) {
        int c = lcol[k];
        if (size[c]++ == 0)
            rep[c] = k;
    }
    int nrc = 0;
    for (int r = 0; r < g->nr; r++)
        nrc = MAX(nrc, rcol[r] + 1);
    g_autofree int *rrep = g_new(int, MAX(1, nrc));
    for (int r = g->nr - 1; r >= 0; r--)
        rrep[rcol[r]] = r;
    g_array_set_size(lanes, J->base);
    g_array_set_size(edges, J->base);
    J->qdep_off = g_new0(int, ncls + 1);
    GArray *qd = g_array_new(FALSE, FALSE, sizeof(ldep_t));
    g_autofree int *seen = g_new0(int, MAX(1, MAX(nrc, ncls)));
    int stamp = 0;
    for (int c = 0; c < ncls; c++) {
        int k = rep[c];
        lane_t L = lv[g->act[k]];
        edge_t e = ev[g->act[k]];
        L.mult = 1;           /* the weights are in the coefficients */
        L.mem_res = -1;       /* memory is one of the hops */
        e.off = (int)hops->len;
        e.nh = 0;
        stamp++;
        for (int h = g->lh_off[k]; h < g->lh_off[k + 1]; h++) {
            int R = rcol[g->lh_res[h]];
            if (seen[R] == stamp)
                continue;
            seen[R] = stamp;
            int rr = rrep[R];
            double w = 0;
            for (int q = g->rl_off[rr]; q < g->rl_off[rr + 1]; q++)
                if (lcol[g->rl_lane[q]] == c)
                    w += g->rl_w[q];
            hop_t x = { g->res[rr], w };
            g_array_append_val(hops, x);
            e.nh++;
        }
        g_array_append_val(lanes, L);
        g_array_append_val(edges, e);
        stamp++;
        for (int q = g->d_off[k]; q < g->d_off[k + 1]; q++) {
            int dc = lcol[g->d[q].lane];
            gboolean dup = FALSE;
            for (int z = J->qdep_off[c]; z < (int)qd->len && !dup; z++)
                dup = g_array_index(qd, ldep_t, z).lane == dc && g_array_index(qd, ldep_t, z).lag == g->d[q].lag;
            if (!dup) {
                ldep_t x = { dc, g->d[q].lag };
                g_array_append_val(qd, x);
            }
        }
        J->qdep_off[c + 1] = (int)qd->len;
    }
    J->qdeps = (ldep_t *)g_array_free(qd, FALSE);
    J->classes = ncls;
    J->flows = g->n;
    J->nlanes = ncls;
}

/* Folds a dataflow job unless 'fold' forbids it: exact, so every fold
 * mode allows it. (A partition that ignored latencies was no coarser on any
 * preset fabric tried, 6 to 2048 nodes: the flows the refinement keeps
 * apart differ in what they load, not only in latency.) */
static void fold_dataflow(cs_flow_t *f, fjob_t *J, cs_flow_fold_t fold, GArray *lanes, GArray *edges, GArray *hops)
{
    if (fold == CS_FLOW_FOLD_NONE || J->nlanes < 2)
        return;
    const lane_t *lv = &g_array_index(lanes, lane_t, J->base);
    const edge_t *ev = &g_array_index(edges, edge_t, J->base);
    dfgraph_t g = { 0 };
    dfgraph_build(f, J, lv, ev, (const hop_t *)hops->data, &g);
    g_autofree int *lcol = g_new(int, MAX(1, g.n));
    g_autofree int *rcol = g_new(int, MAX(1, g.nr));
    int ncls = dfgraph_refine(f, J, lv, ev, &g, lcol, rcol);
    if (ncls < g.n)
        dfgraph_quotient(f, J, &g, lcol, ncls, rcol, lanes, edges, hops);
    dfgraph_clear(&g);
}

/* A dataflow program: one lane per flow of every channel (no folding: the
 * trees are not periodic), its edge from the job's network view. */
static gboolean setup_dataflow(cs_flow_t *f, fjob_t *J, cs_flow_fold_t fold, GArray *lanes, GArray *edges, GArray *hops,
                               GError **err)
{
    const cs_program_t *prog = J->prog;
    const cs_flow_net_t *net = J->net;
    double cap = cs_flow_channel_bw(net, prog->proto, prog->nthreads);
    J->df = TRUE;
    /* LL and LL128 forward each line as soon as its flag is seen (as the
     * chains do): a flow's unit may start once the first bytes of the
     * data it forwards are there, and ends no earlier than their last. */
    J->cut = prog->proto != CS_PROTO_SIMPLE && !prog->p2p;   /* p2p flows forward nothing */
    J->nlanes = prog->nflows;
    J->P = 1;
    cs_flow_edge_t eb;
    for (int c = 0; c < prog->nch; c++)
        for (int fi = prog->flow_off[c]; fi < prog->flow_off[c + 1]; fi++) {
            const cs_prog_flow_t *fl = &prog->flows[fi];
            /* NVLSTree: GPU i's tree leaves through the NIC of the NVLS
             * channels it heads (cs_flow_build_flow_edge) */
            if (!cs_flow_build_flow_edge(net, fl, c, prog->proto, &eb, err))
                return FALSE;
            edge_t e;
            double fcap = cs_flow_flow_cap(net, prog, c, fi, &eb, cap);
            edge_from(f, J, &eb, cs_flow_shm_cap(prog->p2p, fl, &eb, fcap), hops, &e);
            g_array_append_val(edges, e);
            lane_t L = { 0 };
            L.job = (int)(J - f->jobs);
            L.ch = c;
            L.pos = fi;
            L.mult = 1;
            L.mem_res = job_mem(f, J, fl->src);
            L.nops = cs_program_flow_units(prog, c, fi);
            L.drain = (cs_time_t)llround(cs_flow_p2p_drain(prog->p2p, prog->proto, fl, cap) * CS_PS_PER_S);
            g_array_append_val(lanes, L);
        }
    /* Identical channels (NVLSTree: every GPU's tree leaves through its own
     * NIC whatever the channel) always get the same shares: the first one
     * runs with the weight of all, the others' flows have nothing to do.
     * Exact, as for rings; off with a sink (every channel its track) or a
     * transport (every channel its QPs). */
    if (each_lane(f))
        return TRUE;
    lane_t *lv = &g_array_index(lanes, lane_t, J->base);
    const edge_t *ev = &g_array_index(edges, edge_t, J->base);
    g_autofree int *rep = g_new(int, prog->nch);
    int nrep = 0;
    for (int c = 0; c < prog->nch; c++) {
        int k;
        for (k = 0; k < nrep; k++)
            if (same_df_channel(f, prog, ev, (const hop_t *)hops->data, rep[k], c))
                break;
        if (k == nrep) {
            rep[nrep++] = c;
            continue;
        }
        for (int fi = prog->flow_off[c]; fi < prog->flow_off[c + 1]; fi++) {
            lv[fi].nops = 0;
            lv[prog->flow_off[rep[k]] + fi - prog->flow_off[c]].mult++;
        }
    }
    fold_dataflow(f, J, fold, lanes, edges, hops);
    return TRUE;
}

/* Dependency lists of every dataflow job, in global lane indices: what
 * each lane waits for (the program's, or its folded job's), and from them
 * who wakes up on each lane's units and who consumes them. */
static void setup_deps(cs_flow_t *f)
{
    f->dep_off = g_new0(int, f->nlanes + 1);
    GArray *deps = g_array_new(FALSE, FALSE, sizeof(ldep_t));
    for (int j = 0; j < f->njobs; j++) {
        const fjob_t *J = &f->jobs[j];
        const cs_program_t *p = J->prog;
        for (int k = 0; k < J->nlanes; k++) {
            int li = J->base + k;
            f->dep_off[li] = (int)deps->len;
            if (!J->df)
                continue;
            if (J->qdeps != NULL) {
                for (int q = J->qdep_off[k]; q < J->qdep_off[k + 1]; q++) {
                    ldep_t d = { J->base + J->qdeps[q].lane, J->qdeps[q].lag };
                    g_array_append_val(deps, d);
                }
                continue;
            }
            int fi = f->lanes[li].pos;
            for (int q = p->dep_off[fi]; q < p->dep_off[fi + 1]; q++) {
                ldep_t d = { J->base + p->deps[q].flow, p->deps[q].lag };   /* unfolded: lane = base + flow */
                g_array_append_val(deps, d);
            }
        }
    }
    f->dep_off[f->nlanes] = (int)deps->len;
    int nd = (int)deps->len;
    f->deps = (ldep_t *)g_array_free(deps, FALSE);
    f->wake_off = g_new0(int, f->nlanes + 1);
    f->cons_off = g_new0(int, f->nlanes + 1);
    for (int k = 0; k < nd; k++) {
        f->wake_off[f->deps[k].lane + 1]++;
        if (f->deps[k].lag == 0)
            f->cons_off[f->deps[k].lane + 1]++;
    }
    for (int li = 0; li < f->nlanes; li++) {
        f->wake_off[li + 1] += f->wake_off[li];
        f->cons_off[li + 1] += f->cons_off[li];
    }
    f->wake = g_new(int, MAX(1, nd));
    f->cons = g_new(int, MAX(1, nd));
    g_autofree int *wf = g_memdup2(f->wake_off, sizeof(int) * (f->nlanes + 1));
    g_autofree int *cf = g_memdup2(f->cons_off, sizeof(int) * (f->nlanes + 1));
    for (int li = 0; li < f->nlanes; li++)
        for (int k = f->dep_off[li]; k < f->dep_off[li + 1]; k++) {
            int d = f->deps[k].lane;
            f->wake[wf[d]++] = li;
            if (f->deps[k].lag == 0)
                f->cons[cf[d]++] = li;
        }
}

/* The resources each lane shares. A resource whose every possible user
 * at its ceiling together cannot fill it never saturates: leaving it out
 * of the fair share changes no rate (exact) and keeps the components of
 * the sharing small. Then per-resource lane lists, the fair-share scratch
 * arrays and the lanes' finish events: everything the event loop touches,
 * sized before it. */
static void setup_resources(cs_flow_t *f)
{
    g_autofree double *demand = g_new0(double, f->nres);
    for (int li = 0; li < f->nlanes; li++) {
        const lane_t *L = &f->lanes[li];
        const edge_t *e = &f->edges[li];
        const fjob_t *J = &f->jobs[L->job];
        if (L->nops == 0)
            continue;   /* never sends (a merged channel's flow) */
        for (int h = 0; h < e->nh; h++)
            demand[f->hops[e->off + h].res] += f->hops[e->off + h].coeff * L->mult * e->cap;
        int mp = J->df ? J->prog->flows[L->pos].mem_passes : 3;   /* cs_prog_op_t: at most 3 */
        if (L->mem_res >= 0)
            demand[L->mem_res] += mp * L->mult * e->cap;
    }
    GArray *bh = g_array_new(FALSE, FALSE, sizeof(bhop_t));
    f->res_off = g_new0(int, f->nres + 1);
    f->res_len = g_new0(int, f->nres);
    for (int li = 0; li < f->nlanes; li++) {
        lane_t *L = &f->lanes[li];
        const edge_t *e = &f->edges[li];
        const fjob_t *J = &f->jobs[L->job];
        L->boff = (int)bh->len;
        for (int h = 0; h < e->nh + (L->mem_res >= 0) && L->nops > 0; h++) {
            bhop_t b = h < e->nh ? (bhop_t){ f->hops[e->off + h].res, li, f->hops[e->off + h].coeff, 0 }
                                 : (bhop_t){ L->mem_res, li, -1, 0 };
            /* A merged lane's weight lands on its representative's links:
             * those that cannot saturate over the whole ring stay out. */
            if (demand[b.res] <= f->res_cap[b.res] || (J->bind != NULL && !J->bind[b.res]))
                continue;
            g_array_append_val(bh, b);
            f->res_off[b.res + 1]++;
        }
        L->bn = (int)bh->len - L->boff;
        L->fin = cs_evq_alloc(f->q);
        L->fin->kind = EV_FIN;
        L->fin->a = li;
    }
    f->bhops = (bhop_t *)g_array_free(bh, FALSE);
    /* one event stream per distinct edge latency (the first ones) */
    cs_time_t lats[CS_EVQ_STREAMS];
    int nl = 0;
    for (int li = 0; li < f->nlanes; li++) {
        edge_t *e = &f->edges[li];
        int k;
        for (k = 0; k < nl && lats[k] != e->lat; k++)
            ;
        if (k == nl && nl < CS_EVQ_STREAMS)
            lats[nl++] = e->lat;
        e->stream = k < nl && e->xsrc < 0 ? k : -1;   /* a transport's arrivals come in its order */
    }
    for (int r = 0; r < f->nres; r++)
        f->res_off[r + 1] += f->res_off[r];
    f->res_list = g_new(int, MAX(1, f->res_off[f->nres]));
    f->rem_cap = g_new0(double, f->nres);
    f->wsum = g_new0(double, f->nres);
    f->res_stamp = g_new0(int, f->nres);
    f->dirty_res = g_new(int, f->nres);
    f->comp_res = g_new(int, f->nres);
    f->stack = g_new(int, f->nres);
    f->comp_lanes = g_new(int, MAX(1, f->nlanes));
    f->ndirty = 0;
    f->stamp = 0;
    if (f->sink != NULL) {
        f->load = g_new0(double, f->nres);
        f->load_sent = g_new0(double, f->nres);
        f->load_mark = g_new0(int, f->nres);
        f->changed = g_new(int, f->nres);
        f->nchanged = 0;
    }
    memset(f->res_bytes, 0, sizeof(double) * f->nres);
}

static void teardown_run(cs_flow_t *f)
{
    for (int li = 0; li < f->nlanes; li++) {
        cs_evq_cancel(f->q, f->lanes[li].fin);
        cs_evq_release(f->q, f->lanes[li].fin);
    }
    cs_event_t *ev;
    while ((ev = cs_evq_pop(f->q)) != NULL)
        cs_evq_release(f->q, ev);
    free_run(f);
}

/* Builds job j's program and lanes. */
/* The ROOT flow a CollNet UP flow feeds (a ROOT of its channel waits
 * for it) or a DOWN flow waits for; -1: none. */
static int collnet_root(const cs_program_t *p, int c, int fi)
{
    if (p->flows[fi].kind == CS_FLOW_COLLNET_DOWN) {
        for (int q = p->dep_off[fi]; q < p->dep_off[fi + 1]; q++)
            if (p->flows[p->deps[q].flow].kind == CS_FLOW_COLLNET_ROOT)
                return p->deps[q].flow;
        return -1;
    }
    for (int r = p->flow_off[c]; r < p->flow_off[c + 1]; r++)
        for (int q = p->dep_off[r]; q < p->dep_off[r + 1] && p->flows[r].kind == CS_FLOW_COLLNET_ROOT; q++)
            if (p->deps[q].flow == fi)
                return r;
    return -1;
}

/* A CollNet lane goes to the transport's coll_lane (TRUE: handled, *ok
 * its result), with its route up the SHARP tree from its edge. */
static gboolean xport_coll_lane(cs_flow_t *f, int li, gboolean *ok, GError **err)
{
    const lane_t *L = &f->lanes[li];
    const fjob_t *J = &f->jobs[L->job];
    if (f->xport->coll_lane == NULL || !J->df || J->prog == NULL)
        return FALSE;
    const cs_program_t *p = J->prog;
    const cs_prog_flow_t *fl = &p->flows[L->pos];
    if (fl->kind != CS_FLOW_COLLNET_UP && fl->kind != CS_FLOW_COLLNET_DOWN)
        return FALSE;
    gboolean up = fl->kind == CS_FLOW_COLLNET_UP;
    int root = collnet_root(p, L->ch, L->pos);
    g_assert(root >= 0);              /* cs_program builds every UP and DOWN with its ROOT */
    cs_flow_edge_t eb;
    *ok = cs_flow_build_flow_edge(J->net, fl, L->ch, p->proto, &eb, err);
    if (!*ok)
        return TRUE;
    int links[CS_FLOW_HMAX], n = 0;
    for (int h = 0; h < eb.n; h++) {
        int r = map_res(f, J, eb.h[h].res);
        if (r < f->topo->nlinks && f->topo->links[r].kind == CS_LINK_NET)
            links[n++] = r;
    }
    if (!up)                          /* root to NIC: the reverse links, from the NIC */
        for (int i = 0; i < (n + 1) / 2; i++) {
            int a = f->topo->links[links[i]].reverse, b = f->topo->links[links[n - 1 - i]].reverse;
            links[i] = b;
            links[n - 1 - i] = a;
        }
    if (n == 0) {
        g_set_error(err, CS_ERROR, CS_ERROR_TOPOLOGY, "flow engine: a CollNet flow that crosses no network link");
        *ok = FALSE;
        return TRUE;
    }
    *ok = f->xport->coll_lane(f->xctx, li, L->job, L->ch, J->base + root, up, f->topo->links[links[0]].src, links,
                              n, err);
    return TRUE;
}

static gboolean setup_job(cs_flow_t *f, int j, const cs_engine_task_t *t, const cs_flow_net_t *net,
                          cs_flow_fold_t fold, GArray *lanes, GArray *edges, GArray *hops, GError **err)
{
    fjob_t *J = &f->jobs[j];
    const cs_engine_call_t *call = &t->call;
    const cs_decision_t *d = call->decision;
    J->net = net;
    J->rank_map = t->rank_map;
    J->link_map = t->link_map;
    J->base = (int)lanes->len;
    J->P = 1;
    J->iters = MAX(1, t->iters);
    J->start = (cs_time_t)llround(t->start_s * CS_PS_PER_S);
    J->call_start = -1;
    J->ready = t->ready_s;
    J->ndeps = t->ndeps;
    J->deps = t->deps;
    if (t->busy_s != NULL) {
        J->busy = t->busy_s;   /* compute: no program, no host (call_gap) */
        return TRUE;
    }
    const cs_comm_info_t *info = net->info;
    double gap = cs_flow_launch(net);
    J->host = (cs_time_t)llround(cs_flow_launch_host(net, d != NULL ? d->nchannels : 1) * CS_PS_PER_S);
    if (info->nranks <= 1) {
        /* As the analytic engine: one rank copies the buffer. */
        gap += 2.0 * (double)call->nccl_bytes / f->res_cap[job_mem(f, J, 0)];
        J->gap = (cs_time_t)llround(gap * CS_PS_PER_S);
        return TRUE;
    }
    g_autofree int *orders = cs_flow_prog_orders(net, d);
    J->prog = cs_program_new(info, net->coll, d, call->nccl_bytes, net->root, orders, err);
    if (J->prog == NULL) {
        g_prefix_error(err, "flow engine: ");
        return FALSE;
    }
    if (J->prog->nvls)
        gap += cs_flow_nvls_lat(net);   /* once per call, as the analytic engine */
    if (J->prog->collnet)
        gap += cs_flow_collnet_lat(net, J->prog->algo);   /* NCCL's CollNet round, as the analytic engine */
    J->gap = (cs_time_t)llround(gap * CS_PS_PER_S);
    J->peff = cs_flow_proto_eff(net, J->prog->proto);
    if (J->prog->nflows > 0)
        return setup_dataflow(f, J, each_lane(f) ? CS_FLOW_FOLD_NONE : fold, lanes, edges, hops, err);
    return setup_ring(f, J, each_lane(f) ? CS_FLOW_FOLD_NONE : fold, lanes, edges, hops, err);
}

/* The run's call graph: every task's calls numbered one after another,
 * each with the count of calls it waits for, and per call the calls that
 * wait for it (CSR), so that a call that ends releases its waiters without
 * a search and the event loop allocates nothing. The dependencies were
 * checked (cs_flow_check_tasks). */
static void setup_calls(cs_flow_t *f)
{
    int n = 0, nd = 0;
    for (int j = 0; j < f->njobs; j++) {
        f->jobs[j].node0 = n;
        n += f->jobs[j].iters;
        nd += f->jobs[j].ndeps;
    }
    f->ncalls = n;
    f->pend = g_new0(int, n);
    f->call_job = g_new(int, n);
    f->waiter_off = g_new0(int, n + 1);
    f->waiter = g_new(int, MAX(1, nd));
    f->span = g_new0(cs_time_t, 2 * (gsize)n);
    for (int j = 0; j < f->njobs; j++) {
        const fjob_t *J = &f->jobs[j];
        for (int k = 0; k < J->iters; k++)
            f->call_job[J->node0 + k] = j;
        for (int q = 0; q < J->ndeps; q++) {
            const cs_engine_dep_t *d = &J->deps[q];
            f->pend[J->node0 + d->iter]++;
            f->waiter_off[f->jobs[d->task].node0 + d->task_iter + 1]++;
        }
    }
    for (int c = 0; c < n; c++)
        f->waiter_off[c + 1] += f->waiter_off[c];
    g_autofree int *fill = g_memdup2(f->waiter_off, sizeof(int) * MAX(1, n));
    for (int j = 0; j < f->njobs; j++) {
        const fjob_t *J = &f->jobs[j];
        for (int q = 0; q < J->ndeps; q++) {
            const cs_engine_dep_t *d = &J->deps[q];
            f->waiter[fill[f->jobs[d->task].node0 + d->task_iter]++] = J->node0 + d->iter;
        }
    }
}

/* Job j's next call waits for a call that has not ended (events ran out). */
static inline gboolean job_blocked(const cs_flow_t *f, int j)
{
    const fjob_t *J = &f->jobs[j];
    return !J->done && !J->armed && f->pend[J->node0 + J->iter] > 0;
}

/* Events ran out with job j blocked: follows its waits (the first call
 * each blocked call waits for that has not ended) until they come back
 * to a task, and names that cycle. FALSE when they end at a task that
 * is not blocked (its program deadlocked: not the workload's fault). */
static gboolean cycle_error(const cs_flow_t *f, int j, GError **err)
{
    g_autofree int *at = g_new(int, f->njobs);   /* job -> its place in the chain, -1 */
    for (int i = 0; i < f->njobs; i++)
        at[i] = -1;
    g_autoptr(GPtrArray) steps = g_ptr_array_new_with_free_func(g_free);
    while (j >= 0 && at[j] < 0 && job_blocked(f, j)) {
        const fjob_t *J = &f->jobs[j];
        at[j] = (int)steps->len;
        int next = -1;
        for (int q = 0; q < J->ndeps && next < 0; q++) {
            const cs_engine_dep_t *d = &J->deps[q];
            if (d->iter == J->iter && f->jobs[d->task].iter <= d->task_iter) {
                g_ptr_array_add(steps, g_strdup_printf("task %d call %d waits for task %d call %d", j, J->iter,
                                                       d->task, d->task_iter));
                next = d->task;
            }
        }
        j = next;
    }
    if (j < 0 || at[j] < 0)
        return FALSE;
    GString *s = g_string_new(NULL);
    for (guint i = (guint)at[j]; i < steps->len; i++)
        g_string_append_printf(s, "%s%s", s->len > 0 ? ", " : "", (const char *)steps->pdata[i]);
    g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "flow engine: the workload's tasks wait for each other in a cycle (%s)",
                s->str);
    g_string_free(s, TRUE);
    return TRUE;
}

/* Why the run ended with calls left: a cycle of dependencies, or a
 * program that deadlocked. */
static void stuck_error(const cs_flow_t *f, GError **err)
{
    for (int j = 0; j < f->njobs; j++)
        if (job_blocked(f, j) && cycle_error(f, j, err))
            return;
    g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED, "flow engine: the program deadlocked");
}

/* Each task's spans, in seconds, once the run ended well. */
static void put_spans(const cs_flow_t *f, const cs_engine_task_t *tasks)
{
    for (int j = 0; j < f->njobs; j++) {
        const fjob_t *J = &f->jobs[j];
        if (tasks[j].span_s == NULL)
            continue;
        for (int k = 0; k < 2 * J->iters; k++)
            tasks[j].span_s[k] = (double)f->span[2 * J->node0 + k] / CS_PS_PER_S;
    }
}

static gboolean run_tasks(cs_flow_t *f, const cs_engine_task_t *tasks, const cs_flow_net_t *const *nets, int ntasks,
                          cs_flow_fold_t fold, double *end_s, cs_flow_stats_t *stats_p, GError **err)
{
    f->njobs = ntasks;
    f->jobs = g_new0(fjob_t, MAX(1, ntasks));
    GArray *lanes = g_array_new(FALSE, FALSE, sizeof(lane_t));
    GArray *edges = g_array_new(FALSE, FALSE, sizeof(edge_t));
    GArray *hops = g_array_new(FALSE, FALSE, sizeof(hop_t));
    gboolean ok = TRUE;
    for (int j = 0; j < ntasks && ok; j++)
        ok = setup_job(f, j, &tasks[j], nets[j], ntasks == 1 ? fold : CS_FLOW_FOLD_NONE, lanes, edges, hops, err);
    f->nlanes = (int)lanes->len;
    f->lanes = (lane_t *)g_array_free(lanes, FALSE);
    f->edges = (edge_t *)g_array_free(edges, FALSE);
    f->hops = (hop_t *)g_array_free(hops, FALSE);
    if (!ok) {
        free_run(f);
        return FALSE;
    }
    setup_deps(f);
    setup_calls(f);
    setup_resources(f);
    for (int li = 0; li < f->nlanes && ok && f->xport != NULL; li++)
        if (lane_x(f, li) && f->lanes[li].nops > 0 && !xport_coll_lane(f, li, &ok, err))
            ok = f->xport->lane(f->xctx, li, f->lanes[li].job, f->lanes[li].ch, f->edges[li].xsrc, f->edges[li].xdst,
                                err);
    if (!ok) {
        teardown_run(f);
        return FALSE;
    }
    guint64 ev0 = cs_evq_popped(f->q);
    f->recomputes = f->touched = f->rates_changed = 0;
    f->now = 0;
    f->past_horizon = FALSE;
    for (int j = 0; j < ntasks; j++)
        try_launch(f, j);
    if (!run_events(f, err)) {
        teardown_run(f);
        return FALSE;
    }
    if (f->past_horizon) {
        g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED,
                    "the simulated time passes the flow engine's range (53 days of integer picoseconds): a link "
                    "or size this slow or large is not simulated; expected faster links or smaller sizes "
                    "(--model analytic prices it)");
        teardown_run(f);
        return FALSE;
    }
    if (f->sink != NULL && f->sink->end != NULL)
        f->sink->end(f->sink, (double)f->now / CS_PS_PER_S);
    f->last_end = f->now;
    cs_flow_stats_t st = { 0 };
    st.events = cs_evq_popped(f->q) - ev0;
    st.recomputes = f->recomputes;
    st.touched = f->touched;
    st.changed = f->rates_changed;
    st.lanes = f->nlanes;
    gboolean done = TRUE;
    for (int j = 0; j < ntasks; j++) {
        const fjob_t *J = &f->jobs[j];
        done &= J->done;
        if (end_s != NULL)
            end_s[j] = (double)J->end / CS_PS_PER_S;
        if (j == 0) {
            st.time_s = (double)(J->end - J->start) / CS_PS_PER_S;
            st.folded = J->prog != NULL && (J->df ? J->classes > 0 : J->P != J->prog->nranks);
            st.period = J->prog == NULL ? 0 : J->df ? J->classes : J->P;
            st.approx = J->approx;
            st.spread_s = (double)J->spread / CS_PS_PER_S;
            st.spread_rel = J->spread_rel;
            st.dataflow = J->df;
            st.flows = J->flows;
        }
    }
    if (!done) {
        stuck_error(f, err);
        teardown_run(f);
        return FALSE;
    }
    put_spans(f, tasks);
    teardown_run(f);
    f->last = st;
    if (stats_p != NULL)
        *stats_p = st;
    return TRUE;
}

gboolean cs_flow_simulate(cs_flow_t *f, const cs_engine_call_t *call, cs_flow_fold_t fold,
                          cs_flow_stats_t *stats_p, GError **err)
{
    g_return_val_if_fail(f->has_net, FALSE);
    cs_engine_task_t t = { .call = *call, .iters = 1 };
    const cs_flow_net_t *net = &f->net;
    return run_tasks(f, &t, &net, 1, f->no_fold ? CS_FLOW_FOLD_NONE : fold, NULL, stats_p, err);
}

/* A time in seconds the engine can hold in picoseconds. */
static gboolean time_ok(double t)
{
    return isfinite(t) && t >= 0 && t < (double)G_MAXINT64 / CS_PS_PER_S / 2;
}

/* Task i's own arrays: a compute task has busy times and no
 * communicator, a communication task the reverse; times are finite. */
static gboolean check_task(const cs_engine_task_t *t, int i, GError **err)
{
    if ((t->busy_s != NULL) == (t->job.comm != NULL)) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "task %d has %s; expected a communicator (a collective) or "
                    "busy times (compute)", i, t->busy_s != NULL ? "both" : "neither");
        return FALSE;
    }
    if ((t->busy_s != NULL || t->ready_s != NULL) && t->iters < 1) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "task %d has %d calls; expected at least 1", i, t->iters);
        return FALSE;
    }
    for (int k = 0; k < t->iters; k++) {
        gboolean busy_bad = t->busy_s != NULL && !time_ok(t->busy_s[k]);
        if (busy_bad || (t->ready_s != NULL && !time_ok(t->ready_s[k]))) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "task %d call %d: its %s time is %g s; expected a finite "
                        "time >= 0", i, k, busy_bad ? "busy" : "ready", busy_bad ? t->busy_s[k] : t->ready_s[k]);
            return FALSE;
        }
    }
    return TRUE;
}

gboolean cs_flow_check_tasks(const cs_engine_task_t *tasks, int ntasks, GError **err)
{
    for (int i = 0; i < ntasks; i++) {
        const cs_engine_task_t *t = &tasks[i];
        if (!check_task(t, i, err))
            return FALSE;
        if (t->ndeps < 0 || (t->ndeps > 0 && t->deps == NULL)) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "task %d has %d dependencies and no list of them", i, t->ndeps);
            return FALSE;
        }
        for (int q = 0; q < t->ndeps; q++) {
            const cs_engine_dep_t *d = &t->deps[q];
            const char *bad = d->iter < 0 || d->iter >= MAX(1, t->iters) ? "its own call"
                              : d->task < 0 || d->task >= ntasks ? "the task"
                              : d->task_iter < 0 || d->task_iter >= MAX(1, tasks[d->task].iters) ? "the task's call"
                              : NULL;
            if (bad != NULL) {
                g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "task %d dependency %d: call %d waits for task %d call %d, "
                            "and %s does not exist (%d tasks; task %d has %d calls)", i, q, d->iter, d->task,
                            d->task_iter, bad, ntasks, i, MAX(1, t->iters));
                return FALSE;
            }
        }
    }
    return TRUE;
}

gboolean cs_flow_run(cs_flow_t *f, const cs_engine_task_t *tasks, int ntasks, double *end_s,
                     cs_flow_stats_t *stats_p, GError **err)
{
    if (!cs_flow_check_tasks(tasks, ntasks, err))
        return FALSE;
    g_autofree cs_flow_net_t *nets = g_new0(cs_flow_net_t, MAX(1, ntasks));
    g_autofree const cs_flow_net_t **np = g_new0(const cs_flow_net_t *, MAX(1, ntasks));
    gboolean ok = TRUE;
    for (int j = 0; j < ntasks && ok; j++) {
        if (tasks[j].busy_s != NULL)
            continue;   /* compute: no network view */
        ok = cs_flow_net_init(&nets[j], &tasks[j].job, err);
        np[j] = &nets[j];
    }
    if (ok)
        ok = run_tasks(f, tasks, np, ntasks, CS_FLOW_FOLD_NONE, end_s, stats_p, err);
    for (int j = 0; j < ntasks; j++)
        if (np[j] != NULL)
            cs_flow_net_clear(&nets[j]);
    return ok;
}

/* ---- the max-min solver alone, for tests ----------------------------------- */

gboolean cs_flow_maxmin_replay(int nres, const double *caps, int nlanes, const double *lane_cap, const double *mult,
                               const int *hop_off, const int *hop_res, const double *hop_coeff, int nseq,
                               const int *seq, gboolean full, double *rates, guint64 *touched_p)
{
    cs_flow_t *f = g_new0(cs_flow_t, 1);
    f->nres = nres;
    f->res_cap = g_memdup2(caps, sizeof(double) * nres);
    f->res_bytes = g_new0(double, MAX(1, nres));
    f->q = cs_evq_new();
    f->full_maxmin = full;
    f->nlanes = nlanes;
    f->lanes = g_new0(lane_t, MAX(1, nlanes));
    f->edges = g_new0(edge_t, MAX(1, nlanes));
    f->bhops = g_new0(bhop_t, MAX(1, hop_off[nlanes]));
    f->res_off = g_new0(int, nres + 1);
    f->res_len = g_new0(int, nres);
    for (int li = 0; li < nlanes; li++) {
        lane_t *L = &f->lanes[li];
        L->boff = hop_off[li];
        L->bn = hop_off[li + 1] - hop_off[li];
        L->mult = mult[li];
        L->rem = 1e15;
        L->mem_res = -1;
        L->fin = cs_evq_alloc(f->q);
        L->fin->kind = EV_FIN;
        L->fin->a = li;
        f->edges[li].cap = lane_cap[li];
        for (int h = hop_off[li]; h < hop_off[li + 1]; h++) {
            f->bhops[h] = (bhop_t){ hop_res[h], li, hop_coeff[h], 0 };
            f->res_off[hop_res[h] + 1]++;
        }
    }
    for (int r = 0; r < nres; r++)
        f->res_off[r + 1] += f->res_off[r];
    f->res_list = g_new(int, MAX(1, f->res_off[nres]));
    f->rem_cap = g_new0(double, nres);
    f->wsum = g_new0(double, nres);
    f->res_stamp = g_new0(int, nres);
    f->dirty_res = g_new(int, nres);
    f->comp_res = g_new(int, nres);
    f->stack = g_new(int, nres);
    f->comp_lanes = g_new(int, MAX(1, nlanes));
    g_autofree gboolean *on = g_new0(gboolean, MAX(1, nlanes));
    int row = 0;
    for (int k = 0; k < nseq; k++) {
        int li = seq[k];
        if (li >= 0) {
            if (on[li])
                res_remove(f, li), set_rate(f, li, 0);
            else
                res_add(f, li);
            on[li] = !on[li];
            continue;
        }
        if (f->ndirty > 0)
            recompute(f);
        for (int i = 0; i < nlanes; i++)
            rates[(gsize)row * nlanes + i] = on[i] ? f->lanes[i].rate : 0;
        row++;
    }
    if (touched_p != NULL)
        *touched_p = f->touched;
    teardown_run(f);
    cs_flow_free(f);
    return TRUE;
}

/* ---- engine ops --------------------------------------------------------- */

static gboolean flow_open(const cs_engine_job_t *job, void **state_p, GError **err)
{
    cs_flow_t *f = cs_flow_new(job, err);
    if (f == NULL)
        return FALSE;
    f->sink = job->sink;
    f->no_fold = job->link_stats != NULL;
    *state_p = f;
    return TRUE;
}

void cs_flow_call_times(const cs_flow_t *f, const cs_engine_call_t *call, double sim_s, double time_s[2])
{
    /* calls timed back to back: the host issues one at most every
     * cs_flow_launch_host (its process layout), the GPUs wait for it; a
     * ring's passes over the rank's own part (reduce-scatter's last step,
     * all-gather's copy out of place), as the analytic engine adds them
     * (cs_engine_ring_pass_s, not simulated) */
    double host = cs_flow_call_host(f, call);
    double pass[2];
    cs_engine_ring_pass_s(f->net.coll, call->decision, f->net.info->nranks, cs_engine_ring_net(f->net.info),
                          cs_engine_ring_recv_copies(f->net.info), (double)call->nccl_bytes,
                          cs_flow_channel_bw(&f->net, CS_PROTO_SIMPLE, 0), pass);
    time_s[CS_OOP] = MAX(sim_s + pass[CS_OOP], host);
    time_s[CS_INP] = MAX(sim_s + pass[CS_INP], host);
}

double cs_flow_call_host(const cs_flow_t *f, const cs_engine_call_t *call)
{
    return cs_flow_launch_host(&f->net, call->decision != NULL ? call->decision->nchannels : 1);
}

static gboolean flow_predict(void *state, const cs_engine_job_t *job, const cs_engine_call_t *call,
                             double time_s[2], GError **err)
{
    cs_flow_t *f = state;
    cs_flow_stats_t st;
    double t0 = cs_engine_cpu_seconds();
    f->last_cpu = -1;
    if (!cs_flow_simulate(f, call, job->exact ? CS_FLOW_FOLD_EXACT : CS_FLOW_FOLD_AUTO, &st, err))
        return FALSE;
    f->last_cpu = cs_engine_cpu_seconds() - t0;
    cs_flow_call_times(f, call, st.time_s, time_s);
    return TRUE;
}

/* ---- memory ------------------------------------------------------------- */

/* Bytes the engine allocates for a program of this shape, on top of the
 * process. It builds every lane's edge before it folds (and a dataflow
 * program's lane graph to find its classes), so the unfolded lanes set the
 * peak. Measured with /usr/bin/time -v (maximum resident size of --model
 * flow less that of --model analytic, same arguments; dgx-h100, 64 MiB,
 * 64, 256 and 1024 nodes): NVLSTree 32512 / 130816 / 524032 flows took
 * 22 / 82 / 313 MB, Tree 16352 / 65504 / 262112 flows 10.5 / 40 / 163 MB
 * (about 620 bytes a flow, their dependencies adding nothing measurable),
 * Ring 8192 to 32768 lanes 1.2 to 2.5 MB over 7040 to 125440 resources.
 * Rounded up. */
#define FLOW_BYTES_PER_FLOW 650.0
#define FLOW_BYTES_PER_RING_LANE 150.0
#define FLOW_BYTES_PER_RES 64.0

static double flow_bytes(const cs_flow_shape_t *sh, int nres)
{
    return (sh->dataflow ? FLOW_BYTES_PER_FLOW : FLOW_BYTES_PER_RING_LANE) * (double)sh->lanes +
           FLOW_BYTES_PER_RES * nres;
}

static gboolean flow_estimate(void *state, const cs_engine_job_t *job, const cs_engine_call_t *call,
                              cs_engine_cost_t *cost_p, GError **err)
{
    (void)job;
    cs_flow_t *f = state;
    cs_flow_shape_t sh;
    if (!cs_flow_program_shape(&f->net, call, &sh, err)) {
        g_prefix_error(err, "flow engine: ");   /* as predict would say it */
        return FALSE;
    }
    cs_engine_cost_t c = { flow_bytes(&sh, f->nres), -1 };
    *cost_p = c;
    return TRUE;
}

/* A run's call graph (setup_calls), counted not measured: per call its
 * pending count, task and waiter offset (3 ints) and span (2 times), per
 * dependency one waiter entry. */
static double calls_bytes(const cs_engine_task_t *t)
{
    return (double)MAX(1, t->iters) * (3 * sizeof(int) + 2 * sizeof(cs_time_t)) + (double)t->ndeps * sizeof(int);
}

static gboolean flow_estimate_jobs(const cs_engine_multi_t *m, cs_engine_cost_t *cost_p, GError **err)
{
    cs_engine_cost_t c = { 0, -1 };
    c.bytes = FLOW_BYTES_PER_RES * cs_flow_nres(m->topo);
    for (int j = 0; j < m->ntasks; j++) {
        c.bytes += calls_bytes(&m->tasks[j]);
        if (m->tasks[j].busy_s != NULL)
            continue;   /* compute: no program */
        cs_flow_net_t net;
        if (!cs_flow_net_init(&net, &m->tasks[j].job, err))
            return FALSE;
        cs_flow_shape_t sh;
        gboolean ok = cs_flow_program_shape(&net, &m->tasks[j].call, &sh, err);
        cs_flow_net_clear(&net);
        if (!ok) {
            g_prefix_error(err, "flow engine: ");
            return FALSE;
        }
        c.bytes += flow_bytes(&sh, 0);
    }
    *cost_p = c;
    return TRUE;
}

static char *flow_approximation(void *state)
{
    const cs_flow_t *f = state;
    if (!f->last.approx)
        return NULL;
    const cs_comm_info_t *info = f->net.info;

    int n = info->nranks, P = f->last.period;
    return g_strdup_printf("every ring simulated over %d of its %d positions (%d of %d nodes), with each edge's "
                           "latency averaged over the %d periods (they differ by up to %.2f us, %.1f%%); "
                           "--exact simulates them all (docs/model-flow.md)",
                           P, n, P / MAX(1, info->ppn), info->nnodes, n / MAX(1, P), f->last.spread_s * 1e6,
                           f->last.spread_rel * 100);
}

/* What the last predict took, for collsim run -v. */
static char *flow_counters(void *state)
{
    const cs_flow_t *f = state;
    const cs_flow_stats_t *st = &f->last;
    if (f->last_cpu < 0)
        return NULL;
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "events %" G_GUINT64_FORMAT ", max-min recomputes %" G_GUINT64_FORMAT
                           " (%.1f lanes each on average), %d lanes", st->events, st->recomputes,
                           st->recomputes > 0 ? (double)st->touched / (double)st->recomputes : 0.0, st->lanes);
    if (st->folded && st->dataflow)
        g_string_append_printf(s, " (%s fold of %d flows)", st->approx ? "approximate" : "exact", st->flows);
    else if (st->folded)
        g_string_append_printf(s, " (%s fold: %d ring positions)", st->approx ? "approximate" : "exact", st->period);
    g_string_append_printf(s, ", %.3g events/s, CPU %.3f s", (double)st->events / MAX(f->last_cpu, 1e-9),
                           f->last_cpu);
    return g_string_free(s, FALSE);
}

static void flow_close(void *state)
{
    cs_flow_free(state);
}

static cs_link_stats_t *flow_link_stats(void *state)
{
    return cs_flow_link_stats(state);
}

static gboolean flow_run_jobs(const cs_engine_multi_t *m, double *end_s, cs_link_stats_t **stats_p, GError **err)
{
    g_autoptr(cs_flow_t) f = cs_flow_new_shared(m->topo, m->params);
    f->sink = m->sink;
    if (!cs_flow_run(f, m->tasks, m->ntasks, end_s, NULL, err))
        return FALSE;
    if (stats_p != NULL)
        *stats_p = cs_flow_link_stats(f);
    return TRUE;
}

const cs_engine_ops_t cs_engine_flow = {
    .name = "flow",
    .description = "rank programs executed as transfers with max-min fair link sharing, "
                   "8-slot credit pipeline and per-hop latencies",
    .open = flow_open,
    .predict = flow_predict,
    .close = flow_close,
    .estimate = flow_estimate,
    .estimate_jobs = flow_estimate_jobs,
    .approximation = flow_approximation,
    .counters = flow_counters,
    .timeline = TRUE,
    .exact_option = TRUE,
    .link_stats = flow_link_stats,
    .run_jobs = flow_run_jobs,
};
