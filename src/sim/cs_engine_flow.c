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
 * Tree, NVLS and NVLSTree all-reduce run as dataflow programs (flows with
 * unit dependencies, cs_program.h): one lane per flow, same sharing,
 * credits and latencies, no reduction.
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

#include "sim/cs_engine_flow-int.h"
#include "models/cs_program.h"
#include "models/cs_paths.h"
#include "util/cs_error.h"

#define HMAX CS_FLOW_HMAX   /* hops of one edge, memory included */

enum { EV_FIN = 1, EV_ARR = 2, EV_HEAD = 3 };

typedef cs_flow_hop_t hop_t;

typedef struct {
    int off, nh;             /* into hops[] */
    cs_time_t lat;           /* fixed cost after the data is sent */
    double cap;              /* payload ceiling of one transfer (one CTA) */
} edge_t;

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
    cs_event_t *fin;
    int stamp;
    int ch, pos;             /* channel (a class representative) and ring position */
    int mem_res;             /* the sender's GPU memory */
    double mult;             /* identical channels this lane stands for */
    int slot[HMAX];          /* position in each hop's resource list */
} lane_t;

struct cs_flow {
    cs_flow_net_t net;       /* links, ports, caps and edge routing, shared with simgrid */
    int nres;                /* = net.nres */
    const double *res_cap;   /* = net.res_cap, bytes/s */
    double *res_bytes;       /* carried in the last call */

    /* per call */
    const cs_program_t *prog;
    int P;                   /* positions simulated per channel */
    int nlanes;
    lane_t *lanes;
    edge_t *edges;
    hop_t *hops;
    int nhops_total;
    int *res_off, *res_len, *res_list;   /* active (lane*HMAX + hop) per resource */
    double *rem_cap, *wsum;
    int *res_stamp;
    int *dirty_res, ndirty;
    int *comp_lanes, *comp_res, *stack;
    int stamp;
    cs_evq_t *q;
    cs_time_t now;
    guint64 recomputes;
    gboolean cut;            /* LL/LL128 chains forward each line on arrival */
    /* dataflow programs (Tree, NVLS, NVLSTree): lane = flow */
    gboolean df;
    int *wake_off, *wake;    /* per lane: the lanes that depend on it (any lag) */
    int *cons_off, *cons;    /* per lane: the lanes that consume its units (lag 0) */
};

static int res_mem(const cs_flow_t *f, int rank) { return cs_flow_res_mem(&f->net, rank); }

cs_flow_t *cs_flow_new(const cs_engine_job_t *job, GError **err)
{
    cs_flow_t *f = g_new0(cs_flow_t, 1);
    if (!cs_flow_net_init(&f->net, job, err)) {
        g_free(f);
        return NULL;
    }
    f->nres = f->net.nres;
    f->res_cap = f->net.res_cap;
    f->res_bytes = g_new0(double, f->nres);
    f->q = cs_evq_new();
    return f;
}

static void free_call(cs_flow_t *f)
{
    g_clear_pointer(&f->lanes, g_free);
    g_clear_pointer(&f->edges, g_free);
    g_clear_pointer(&f->hops, g_free);
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
    g_clear_pointer(&f->wake_off, g_free);
    g_clear_pointer(&f->wake, g_free);
    g_clear_pointer(&f->cons_off, g_free);
    g_clear_pointer(&f->cons, g_free);
}

void cs_flow_free(cs_flow_t *f)
{
    if (f == NULL)
        return;
    free_call(f);
    cs_flow_net_clear(&f->net);
    g_free(f->res_bytes);
    cs_evq_free(f->q);
    g_free(f);
}

const double *cs_flow_link_bytes(const cs_flow_t *f, int *n_p)
{
    *n_p = f->nres;
    return f->res_bytes;
}

/* ---- fair shares --------------------------------------------------------- */

static void mark_dirty(cs_flow_t *f, int lane_i)
{
    const edge_t *e = &f->edges[lane_i];
    for (int h = 0; h <= e->nh; h++) {
        int r = h < e->nh ? f->hops[e->off + h].res : f->lanes[lane_i].mem_res;
        if (f->res_stamp[r] != -1) {
            f->res_stamp[r] = -1;
            f->dirty_res[f->ndirty++] = r;
        }
    }
}

static inline int lane_hop_res(const cs_flow_t *f, int li, int h, double *coeff_p)
{
    const edge_t *e = &f->edges[li];
    if (h < e->nh) {
        *coeff_p = f->hops[e->off + h].coeff;
        return f->hops[e->off + h].res;
    }
    *coeff_p = f->lanes[li].op.mem_passes;
    return f->lanes[li].mem_res;
}

static void res_add(cs_flow_t *f, int li)
{
    const edge_t *e = &f->edges[li];
    for (int h = 0; h <= e->nh; h++) {
        double c;
        int r = lane_hop_res(f, li, h, &c);
        f->lanes[li].slot[h] = f->res_len[r];
        f->res_list[f->res_off[r] + f->res_len[r]++] = li * HMAX + h;
    }
    mark_dirty(f, li);
}

static void res_remove(cs_flow_t *f, int li)
{
    const edge_t *e = &f->edges[li];
    for (int h = 0; h <= e->nh; h++) {
        double c;
        int r = lane_hop_res(f, li, h, &c);
        int s = f->lanes[li].slot[h];
        int last = f->res_list[f->res_off[r] + --f->res_len[r]];
        f->res_list[f->res_off[r] + s] = last;
        f->lanes[last / HMAX].slot[last % HMAX] = s;
    }
    mark_dirty(f, li);
}

/* Progressive filling over the component reached from the dirty
 * resources: every unfrozen transfer's rate rises together until a
 * resource saturates or a transfer reaches its ceiling; those freeze. */
static void recompute(cs_flow_t *f)
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
            int li = f->res_list[f->res_off[r] + k] / HMAX;
            lane_t *L = &f->lanes[li];
            if (L->stamp == stamp)
                continue;
            L->stamp = stamp;
            f->comp_lanes[ncl++] = li;
            for (int h = 0; h <= f->edges[li].nh; h++) {
                double c;
                int r2 = lane_hop_res(f, li, h, &c);
                if (f->res_stamp[r2] != stamp) {
                    f->res_stamp[r2] = stamp;
                    f->stack[sp++] = r2;
                }
            }
        }
    }
    if (ncl == 0)
        return;
    f->recomputes++;
    for (int i = 0; i < ncr; i++) {
        int r = f->comp_res[i];
        f->rem_cap[r] = f->res_cap[r];
        f->wsum[r] = 0;
    }
    for (int i = 0; i < ncl; i++) {
        int li = f->comp_lanes[i];
        lane_t *L = &f->lanes[li];
        L->rem -= L->rate * (double)(f->now - L->last) / CS_PS_PER_S;
        L->last = f->now;
        L->frozen = FALSE;
        for (int h = 0; h <= f->edges[li].nh; h++) {
            double c;
            int r = lane_hop_res(f, li, h, &c);
            f->wsum[r] += c * L->mult;
        }
    }
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
            gboolean sat = f->edges[li].cap - level <= 1e-9 * f->edges[li].cap;
            for (int h = 0; h <= f->edges[li].nh && !sat; h++) {
                double c;
                int r = lane_hop_res(f, li, h, &c);
                sat = f->rem_cap[r] <= 1e-9 * f->res_cap[r];
            }
            if (!sat)
                continue;
            L->frozen = TRUE;
            L->rate = level;
            froze++;
            for (int h = 0; h <= f->edges[li].nh; h++) {
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
        int li = f->comp_lanes[i];
        lane_t *L = &f->lanes[li];
        double rate = L->frozen ? L->rate : level;
        /* An unchanged rate keeps its finish time: no heap work. */
        if (rate == L->old_rate && cs_evq_scheduled(L->fin))
            continue;
        L->rate = L->old_rate = rate;
        double secs = L->rem > 0 ? L->rem / L->rate : 0;
        cs_time_t t = f->now + (cs_time_t)ceil(secs * CS_PS_PER_S);
        if (L->fin->time != t || !cs_evq_scheduled(L->fin))
            cs_evq_reschedule(f->q, L->fin, t);
    }
}

/* ---- program execution -------------------------------------------------- */

static inline int lane_next(const cs_flow_t *f, int li)
{
    int blk = li / f->P, pos = li % f->P;
    return blk * f->P + (pos + 1) % f->P;
}

static inline int lane_prev(const cs_flow_t *f, int li)
{
    int blk = li / f->P, pos = li % f->P;
    return blk * f->P + (pos + f->P - 1) % f->P;
}

static void advance(cs_flow_t *f, int li)
{
    lane_t *L = &f->lanes[li];
    int ch = L->ch, pos = L->pos;
    while (!L->sending && L->op_next < L->nops) {
        cs_prog_op_t op;
        cs_program_op(f->prog, ch, pos, L->op_next, &op);
        /* LL and LL128 chains forward each line as soon as its flag is
         * seen: a send may start once the input's first bytes are there. */
        gboolean cut = f->cut && op.send;
        if (op.consume >= 0 && (cut ? L->headed : L->arrived) <= op.consume)
            return;
        if (op.send) {
            if (f->lanes[lane_next(f, li)].consumed < op.send_unit + 1 - f->prog->credit)
                return;
            L->op = op;
            L->sending = TRUE;
            L->rem = op.bytes;
            L->rate = L->old_rate = 0;
            L->last = f->now;
            res_add(f, li);
            if (f->cut) {
                cs_event_t *ev = cs_evq_alloc(f->q);
                ev->kind = EV_HEAD;
                ev->a = lane_next(f, li);
                cs_evq_push(f->q, ev, f->now + f->edges[li].lat);
            }
            return;
        }
        /* A receive only: the data is there, the slot is freed. */
        L->consumed++;
        L->op_next++;
        if (f->prog->chain ? pos > 0 : TRUE)
            advance(f, lane_prev(f, li));
    }
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
    for (int k = a; k < b; k++) {
        const lane_t *D = &f->lanes[f->cons[k]];
        m = MIN(m, D->op_next);
    }
    return m;
}

static void df_advance(cs_flow_t *f, int li)
{
    lane_t *L = &f->lanes[li];
    const cs_program_t *p = f->prog;
    if (L->sending || L->op_next >= L->nops)
        return;
    gint64 u = L->op_next;
    for (int k = p->dep_off[li]; k < p->dep_off[li + 1]; k++) {
        gint64 need = u - p->deps[k].lag;
        if (need >= 0 && f->lanes[p->deps[k].flow].arrived <= need)
            return;
    }
    if (df_consumed(f, li) < u + 1 - p->credit)
        return;
    const cs_prog_flow_t *fl = &p->flows[li];
    L->op.send = TRUE;
    L->op.send_unit = u;
    L->op.consume = -1;
    L->op.bytes = cs_program_unit_bytes(p, L->ch, u) * fl->share;
    L->op.mem_passes = fl->mem_passes;
    L->sending = TRUE;
    L->rem = L->op.bytes;
    L->rate = L->old_rate = 0;
    L->last = f->now;
    res_add(f, li);
}

static void df_complete(cs_flow_t *f, int li)
{
    lane_t *L = &f->lanes[li];
    const cs_program_t *p = f->prog;
    L->sending = FALSE;
    cs_event_t *ev = cs_evq_alloc(f->q);
    ev->kind = EV_ARR;
    ev->a = li;
    cs_evq_push(f->q, ev, f->now + f->edges[li].lat);
    L->op_next++;
    df_advance(f, li);
    /* the units it read may be consumed now: their senders may go on */
    for (int k = p->dep_off[li]; k < p->dep_off[li + 1]; k++)
        if (p->deps[k].lag == 0)
            df_advance(f, p->deps[k].flow);
}

static void df_arrive(cs_flow_t *f, int li)
{
    f->lanes[li].arrived++;
    for (int k = f->wake_off[li]; k < f->wake_off[li + 1]; k++)
        df_advance(f, f->wake[k]);
    if (f->cons_off[li] == f->cons_off[li + 1])
        df_advance(f, li);
}

/* The op in progress is complete: its unit is on its way to the next
 * position, and the input it read is consumed. */
static void op_complete(cs_flow_t *f, int li)
{
    lane_t *L = &f->lanes[li];
    const edge_t *e = &f->edges[li];
    L->sending = FALSE;
    L->wait_tail = FALSE;
    cs_event_t *ev = cs_evq_alloc(f->q);
    ev->kind = EV_ARR;
    ev->a = lane_next(f, li);
    cs_evq_push(f->q, ev, f->now + e->lat);
    if (L->op.consume >= 0)
        L->consumed++;
    L->op_next++;
    advance(f, li);
    if (L->op.consume >= 0)
        advance(f, lane_prev(f, li));
}

/* A transfer has sent its bytes; with cut-through the op also waits for
 * the last bytes of its input (it cannot forward what has not come). */
static void on_fin(cs_flow_t *f, int li)
{
    lane_t *L = &f->lanes[li];
    res_remove(f, li);
    L->rate = L->old_rate = 0;
    const edge_t *e = &f->edges[li];
    double c;
    for (int h = 0; h <= e->nh; h++) {
        int r = lane_hop_res(f, li, h, &c);
        f->res_bytes[r] += L->op.bytes * c * L->mult;
    }
    if (f->df) {
        df_complete(f, li);
        return;
    }
    if (f->cut && L->op.consume >= 0 && L->arrived <= L->op.consume) {
        L->wait_tail = TRUE;
        return;
    }
    op_complete(f, li);
}

static void on_arrive(cs_flow_t *f, int li)
{
    if (f->df) {
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

/* ---- one call ------------------------------------------------------------ */

/* Whether 'period' consecutive positions (one node, or two where NCCL
 * alternates odd nodes' rings) stand exactly for the whole ring: the ring
 * repeats with the period in rank numbering, every period's edges cost the
 * same as the first's (same resources' capacities, coefficients and
 * latency), and no resource is used by edges of two different periods (so
 * no transfer shares a link with another period's). */
static gboolean fold_exact(const cs_flow_t *f, const edge_t *edges, const hop_t *hops, int nch, int n, int period)
{
    const cs_program_t *p = f->prog;
    if (p->chain || period < 1 || period >= n || n % period != 0)
        return FALSE;
    g_autofree int *owner = g_new(int, f->nres);
    for (int r = 0; r < f->nres; r++)
        owner[r] = -1;
    for (int c = 0; c < nch; c++)
        for (int pos = 0; pos < n; pos++) {
            if (cs_program_rank(p, c, pos) != cs_program_rank(p, c, pos % period) + (pos / period) * period)
                return FALSE;
            const edge_t *e = &edges[(gsize)c * n + pos], *e0 = &edges[(gsize)c * n + pos % period];
            if (e->nh != e0->nh || e->lat != e0->lat || e->cap != e0->cap)
                return FALSE;
            for (int h = 0; h < e->nh; h++) {
                const hop_t *x = &hops[e->off + h], *y = &hops[e0->off + h];
                if (x->coeff != y->coeff || f->res_cap[x->res] != f->res_cap[y->res])
                    return FALSE;
                if (owner[x->res] >= 0 && owner[x->res] != pos / period)
                    return FALSE;
                owner[x->res] = pos / period;
            }
            /* the sender's memory */
            int m = res_mem(f, cs_program_rank(p, c, pos));
            if (owner[m] >= 0 && owner[m] != pos / period)
                return FALSE;
            owner[m] = pos / period;
        }
    return TRUE;
}

/* Whether channels a and b are interchangeable over the whole ring. */
static gboolean same_channel(const cs_flow_t *f, const edge_t *edges, const hop_t *hops, int n, int a, int b)
{
    const cs_program_t *p = f->prog;
    if (p->ch_bytes[a] != p->ch_bytes[b] ||
        memcmp(&p->order[(gsize)a * n], &p->order[(gsize)b * n], sizeof(int) * n) != 0)
        return FALSE;
    for (int pos = 0; pos < n; pos++) {
        const edge_t *x = &edges[(gsize)a * n + pos], *y = &edges[(gsize)b * n + pos];
        if (x->nh != y->nh || x->lat != y->lat || x->cap != y->cap)
            return FALSE;
        for (int h = 0; h < x->nh; h++)
            if (hops[x->off + h].res != hops[y->off + h].res || hops[x->off + h].coeff != hops[y->off + h].coeff)
                return FALSE;
    }
    return TRUE;
}

/* Per-resource lane lists, the fair-share scratch arrays and the lanes'
 * finish events: everything the event loop touches, sized before it. */
static gboolean setup_resources(cs_flow_t *f, const cs_program_t *prog)
{
    /* Resource lists sized by the lanes that can use each resource. */
    f->res_off = g_new0(int, f->nres + 1);
    f->res_len = g_new0(int, f->nres);
    for (int li = 0; li < f->nlanes; li++) {
        const edge_t *e = &f->edges[li];
        for (int h = 0; h < e->nh; h++)
            f->res_off[f->hops[e->off + h].res + 1]++;
        f->res_off[f->lanes[li].mem_res + 1]++;
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
    for (int li = 0; li < f->nlanes; li++) {
        lane_t *L = &f->lanes[li];
        L->nops = f->df ? cs_program_units(prog, L->ch) : cs_program_nops(prog, L->ch, L->pos);
        L->fin = cs_evq_alloc(f->q);
        L->fin->kind = EV_FIN;
        L->fin->a = li;
    }
    memset(f->res_bytes, 0, sizeof(double) * f->nres);
    return TRUE;
}

/* A dataflow program: one lane per flow of every channel (no folding: the
 * trees are not periodic), its edge from the network view. */
static gboolean setup_dataflow(cs_flow_t *f, const cs_program_t *prog, GError **err)
{
    const cs_flow_net_t *net = &f->net;
    double cap = cs_flow_channel_bw(net, prog->proto);
    int nics = MAX(1, net->info->nics_used);
    /* NVLSTree: GPU i's tree leaves through the NIC nearest it */
    g_autofree int *nic_of = g_new(int, MAX(1, net->info->ppn));
    for (int i = 0; i < net->info->ppn; i++)
        nic_of[i] = -1;
    for (int k = 0; k < nics; k++) {
        int g = cs_flow_exit_gpu(net, k);
        if (g >= 0 && g < net->info->ppn && nic_of[g] < 0)
            nic_of[g] = k;
    }
    f->prog = prog;
    f->df = TRUE;
    f->cut = FALSE;
    f->nlanes = prog->nflows;
    f->P = 1;
    f->edges = g_new0(edge_t, MAX(1, f->nlanes));
    f->lanes = g_new0(lane_t, MAX(1, f->nlanes));
    GArray *hops = g_array_new(FALSE, FALSE, sizeof(hop_t));
    cs_flow_edge_t eb;
    for (int c = 0; c < prog->nch; c++)
        for (int li = prog->flow_off[c]; li < prog->flow_off[c + 1]; li++) {
            const cs_prog_flow_t *fl = &prog->flows[li];
            if (fl->kind == CS_FLOW_P2P) {
                int route = fl->net_local < 0 ? c : nic_of[fl->net_local] >= 0 ? nic_of[fl->net_local]
                                                                                  : fl->net_local % nics;
                if (!cs_flow_build_edge(net, route, fl->src, fl->dst, prog->proto, &eb, err)) {
                    g_array_free(hops, TRUE);
                    free_call(f);
                    f->prog = NULL;
                    f->df = FALSE;
                    return FALSE;
                }
            } else {
                cs_flow_build_nvls(net, fl->src, fl->kind == CS_FLOW_NVLS_REDUCE, net->info->ppn, prog->proto, &eb);
            }
            edge_t *e = &f->edges[li];
            e->off = (int)hops->len;
            e->nh = eb.n;
            e->lat = (cs_time_t)llround(eb.lat * CS_PS_PER_S);
            e->cap = cap / fl->cap_div;
            g_array_append_vals(hops, eb.h, eb.n);
            lane_t *L = &f->lanes[li];
            L->ch = c;
            L->pos = li;
            L->mult = 1;
            L->mem_res = res_mem(f, fl->src);
        }
    f->nhops_total = (int)hops->len;
    f->hops = (hop_t *)g_array_free(hops, FALSE);
    /* who waits for each flow's units, and who consumes them */
    int nd = prog->dep_off[prog->nflows];
    f->wake_off = g_new0(int, f->nlanes + 1);
    f->cons_off = g_new0(int, f->nlanes + 1);
    for (int li = 0; li < f->nlanes; li++)
        for (int k = prog->dep_off[li]; k < prog->dep_off[li + 1]; k++) {
            f->wake_off[prog->deps[k].flow + 1]++;
            if (prog->deps[k].lag == 0)
                f->cons_off[prog->deps[k].flow + 1]++;
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
        for (int k = prog->dep_off[li]; k < prog->dep_off[li + 1]; k++) {
            int d = prog->deps[k].flow;
            f->wake[wf[d]++] = li;
            if (prog->deps[k].lag == 0)
                f->cons[cf[d]++] = li;
        }
    return setup_resources(f, prog);
}

static gboolean setup_call(cs_flow_t *f, const cs_program_t *prog, gboolean allow_fold, GError **err)
{
    if (prog->nflows > 0)
        return setup_dataflow(f, prog, err);
    int n = prog->nranks, nch = prog->nch;
    double cap = cs_flow_channel_bw(&f->net, prog->proto);
    f->prog = prog;
    f->df = FALSE;
    /* Edges of every position, then decide whether one node suffices. */
    gsize ne = (gsize)nch * n;
    edge_t *edges = g_new0(edge_t, ne);
    GArray *hops = g_array_new(FALSE, FALSE, sizeof(hop_t));
    cs_flow_edge_t eb;
    for (int c = 0; c < nch; c++)
        for (int pos = 0; pos < n; pos++) {
            edge_t *e = &edges[(gsize)c * n + pos];
            e->off = (int)hops->len;
            e->cap = cap;
            if (!cs_program_sends(prog, pos))
                continue;
            int a = cs_program_rank(prog, c, pos), b = cs_program_rank(prog, c, (pos + 1) % n);
            if (!cs_flow_build_edge(&f->net, c, a, b, prog->proto, &eb, err)) {
                g_free(edges);
                g_array_free(hops, TRUE);
                return FALSE;
            }
            e->nh = eb.n;
            e->lat = (cs_time_t)llround(eb.lat * CS_PS_PER_S);
            g_array_append_vals(hops, eb.h, eb.n);
        }
    /* Only rings spread over whole nodes can fold. */
    /* Only rings spread over whole nodes can fold. Candidate periods, in
     * nodes: 1, 2 (NCCL alternates odd nodes' rings), a leaf's nodes and
     * twice that (the fabric repeats per leaf). */
    int ppn = f->net.info->ppn, period = n;
    if (allow_fold && f->net.info->nnodes > 1 && n == f->net.info->nnodes * ppn) {
        int npl = MAX(1, f->net.topo->fabric.nodes_per_leaf);
        const int cand[4] = { 1, 2, npl, 2 * npl };
        for (int k = 0; k < 4 && period == n; k++)
            if ((k < 2 || cand[k] > 2) && fold_exact(f, edges, (const hop_t *)hops->data, nch, n, cand[k] * ppn))
                period = cand[k] * ppn;
    }
    f->P = period;
    f->cut = prog->chain && prog->proto != CS_PROTO_SIMPLE;
    /* Channels with the same ring, bytes and edges (the very same links)
     * are indistinguishable: their transfers always get the same shares,
     * so one lane stands for all of them, with their weight on every
     * resource. Exact. */
    g_autofree int *rep = g_new(int, nch);
    g_autofree int *mult = g_new0(int, nch);
    int nrep = 0;
    for (int c = 0; c < nch; c++) {
        int k;
        for (k = 0; k < nrep; k++)
            if (same_channel(f, edges, (const hop_t *)hops->data, n, rep[k], c))
                break;
        if (k == nrep)
            rep[nrep++] = c;
        mult[k]++;
    }
    f->nlanes = nrep * f->P;
    f->edges = g_new0(edge_t, MAX(1, f->nlanes));
    f->lanes = g_new0(lane_t, MAX(1, f->nlanes));
    for (int k = 0; k < nrep; k++)
        for (int pos = 0; pos < f->P; pos++) {
            int li = k * f->P + pos;
            f->edges[li] = edges[(gsize)rep[k] * n + pos];
            lane_t *L = &f->lanes[li];
            L->ch = rep[k];
            L->pos = pos;
            L->mult = mult[k];
            L->mem_res = res_mem(f, cs_program_rank(prog, rep[k], pos));
        }
    g_free(edges);
    f->nhops_total = (int)hops->len;
    f->hops = (hop_t *)g_array_free(hops, FALSE);

    return setup_resources(f, prog);
}

static void teardown_call(cs_flow_t *f)
{
    for (int li = 0; li < f->nlanes; li++) {
        cs_evq_cancel(f->q, f->lanes[li].fin);
        cs_evq_release(f->q, f->lanes[li].fin);
    }
    cs_event_t *ev;
    while ((ev = cs_evq_pop(f->q)) != NULL)
        cs_evq_release(f->q, ev);
    free_call(f);
    f->prog = NULL;
    f->df = FALSE;
}

/* Runs the events until nothing is left; the time of the last one is the
 * call's time without launch. */
static void run_events(cs_flow_t *f)
{
    f->now = 0;
    for (int li = 0; li < f->nlanes; li++) {
        if (f->df)
            df_advance(f, li);
        else
            advance(f, li);
    }
    for (;;) {
        cs_event_t *ev = cs_evq_peek(f->q);
        if (f->ndirty > 0 && (ev == NULL || ev->time > f->now)) {
            recompute(f);
            continue;
        }
        if (ev == NULL)
            break;
        cs_evq_pop(f->q);
        f->now = ev->time;
        if (ev->kind == EV_FIN) {
            on_fin(f, ev->a);
        } else {
            int li = ev->a, kind = ev->kind;
            cs_evq_release(f->q, ev);
            if (kind == EV_HEAD) {
                f->lanes[li].headed++;
                advance(f, li);
            } else {
                on_arrive(f, li);
            }
        }
    }
}

gboolean cs_flow_simulate(cs_flow_t *f, const cs_engine_call_t *call, gboolean allow_fold,
                          cs_flow_stats_t *stats_p, GError **err)
{
    const cs_comm_info_t *info = f->net.info;
    const cs_decision_t *d = call->decision;
    double launch = cs_flow_launch(&f->net);
    cs_flow_stats_t st = { 0 };
    if (info->nranks <= 1) {
        /* As the analytic engine: one rank copies the buffer. */
        double mem = f->res_cap[res_mem(f, 0)];
        st.time_s = launch + 2.0 * (double)call->nccl_bytes / mem;
        *stats_p = st;
        return TRUE;
    }
    int nics = MAX(1, info->nics_used);
    g_autofree int *exit_local = g_new(int, MAX(1, d->nchannels));
    for (int c = 0; c < d->nchannels; c++)
        exit_local[c] = info->nnodes > 1 ? cs_flow_exit_gpu(&f->net, c % nics) : -1;
    g_autoptr(cs_program_t) prog = cs_program_new(info, f->net.coll, d, call->nccl_bytes, f->net.root, exit_local, err);
    if (prog == NULL) {
        g_prefix_error(err, "flow engine: ");
        return FALSE;
    }
    if (!setup_call(f, prog, allow_fold, err))
        return FALSE;
    guint64 ev0 = cs_evq_popped(f->q);
    f->recomputes = 0;
    run_events(f);
    st.time_s = launch + (double)f->now / CS_PS_PER_S;
    st.events = cs_evq_popped(f->q) - ev0;
    st.recomputes = f->recomputes;
    st.lanes = f->nlanes;
    st.folded = !f->df && f->P != prog->nranks;
    st.dataflow = f->df;
    if (prog->nvls)
        st.time_s += cs_flow_nvls_lat(&f->net);   /* once per call, as the analytic engine */
    gboolean done = TRUE;
    for (int li = 0; li < f->nlanes; li++)
        done &= f->lanes[li].op_next == f->lanes[li].nops;
    teardown_call(f);
    if (!done) {
        g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED, "flow engine: the program deadlocked");
        return FALSE;
    }
    *stats_p = st;
    return TRUE;
}

/* ---- engine ops --------------------------------------------------------- */

static gboolean flow_open(const cs_engine_job_t *job, void **state_p, GError **err)
{
    cs_flow_t *f = cs_flow_new(job, err);
    if (f == NULL)
        return FALSE;
    *state_p = f;
    return TRUE;
}

static gboolean flow_predict(void *state, const cs_engine_job_t *job, const cs_engine_call_t *call,
                             double time_s[2], GError **err)
{
    cs_flow_stats_t st;
    if (!cs_flow_simulate(state, call, TRUE, &st, err))
        return FALSE;
    time_s[CS_OOP] = st.time_s;
    time_s[CS_INP] = st.time_s;
    return TRUE;
}

static void flow_close(void *state)
{
    cs_flow_free(state);
}

const cs_engine_ops_t cs_engine_flow = {
    .name = "flow",
    .description = "rank programs executed as transfers with max-min fair link sharing, "
                   "8-slot credit pipeline and per-hop latencies",
    .open = flow_open,
    .predict = flow_predict,
    .close = flow_close,
};
