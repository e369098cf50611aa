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
 * Two exact reductions: channels that are indistinguishable (same ring,
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

#define US 1e-6
#define GBPS 1e9
#define HMAX (2 * CS_PATH_MAX_HOPS + 4)   /* hops of one edge, memory included */

enum { EV_FIN = 1, EV_ARR = 2, EV_HEAD = 3 };

typedef struct {
    int res;
    double coeff;            /* resource bytes per payload byte */
} hop_t;

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
    const cs_topo_t *topo;
    const cs_comm_t *comm;
    const cs_comm_info_t *info;
    const cs_params_t *par;
    cs_coll_t coll;
    int root;
    cs_path_cache_t *cache;
    int arch;
    int nres;                /* links + 3 per GPU */
    double *res_cap;         /* bytes/s */
    double *res_bytes;       /* carried in the last call */
    int *nic_dev;            /* node * nics_max + k -> NIC device */
    int nics_max;

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
};

static double par(const cs_flow_t *f, cs_param_id_t id)
{
    return cs_params_get(f->par, id);
}

static int res_nvl_out(const cs_flow_t *f, int rank) { return f->topo->nlinks + 3 * rank; }
static int res_nvl_in(const cs_flow_t *f, int rank) { return f->topo->nlinks + 3 * rank + 1; }
static int res_mem(const cs_flow_t *f, int rank) { return f->topo->nlinks + 3 * rank + 2; }

/* The analytic engine's efficiencies, by link kind, for SM-driven traffic
 * and for a NIC's DMA (docs/model-analytic.md). */
static double link_eff(const cs_flow_t *f, cs_link_kind_t k, gboolean dma, gboolean socket)
{
    switch (k) {
    case CS_LINK_NVL: return par(f, CS_P_EFF_NVLINK);
    case CS_LINK_C2C: return par(f, CS_P_EFF_C2C);
    case CS_LINK_PCI: return par(f, dma ? CS_P_EFF_PCIE_DMA : CS_P_EFF_PCIE);
    case CS_LINK_SYS: return par(f, CS_P_EFF_SYS);
    case CS_LINK_NET: return par(f, socket ? CS_P_EFF_SOCKET : CS_P_EFF_NET);
    }
    return 1.0;
}

static double proto_eff(const cs_flow_t *f, cs_proto_t pr)
{
    return pr == CS_PROTO_LL ? par(f, CS_P_PROTO_EFF_LL)
         : pr == CS_PROTO_LL128 ? par(f, CS_P_PROTO_EFF_LL128) : par(f, CS_P_PROTO_EFF_SIMPLE);
}

static double proto_sync(const cs_flow_t *f, cs_proto_t pr)
{
    return (pr == CS_PROTO_LL ? par(f, CS_P_LAT_SYNC_LL)
          : pr == CS_PROTO_LL128 ? par(f, CS_P_LAT_SYNC_LL128) : par(f, CS_P_LAT_SYNC_SIMPLE)) * US;
}

static double channel_bw(const cs_flow_t *f, cs_proto_t pr)
{
    static const cs_param_id_t ids[CS_PROTO_COUNT][4] = {
        { CS_P_CH_LL_SM70, CS_P_CH_LL_SM80, CS_P_CH_LL_SM90, CS_P_CH_LL_SM100 },
        { CS_P_CH_LL128_SM70, CS_P_CH_LL128_SM80, CS_P_CH_LL128_SM90, CS_P_CH_LL128_SM100 },
        { CS_P_CH_SIMPLE_SM70, CS_P_CH_SIMPLE_SM80, CS_P_CH_SIMPLE_SM90, CS_P_CH_SIMPLE_SM100 },
    };
    return par(f, ids[pr][f->arch]) * GBPS;
}

static double gpu_nvlink_bw(const cs_topo_t *t, int dev, int dir)
{
    double bw = 0;
    for (int k = t->adj_off[dev]; k < t->adj_off[dev + 1]; k++) {
        const cs_link_t *l = &t->links[t->adj[k]];
        if (l->kind == CS_LINK_NVL)
            bw += dir == 0 ? l->bw : t->links[l->reverse].bw;
    }
    return bw;
}

cs_flow_t *cs_flow_new(const cs_engine_job_t *job, GError **err)
{
    cs_flow_t *f = g_new0(cs_flow_t, 1);
    f->comm = job->comm;
    f->topo = job->topo != NULL ? job->topo : cs_comm_topo(job->comm);
    f->info = cs_comm_info(job->comm);
    f->par = job->params;
    f->coll = job->coll;
    f->root = cs_coll_has_root(job->coll) ? job->root : 0;
    int cc = f->info->cc;
    f->arch = cc >= 100 ? 3 : cc >= 90 ? 2 : cc >= 80 ? 1 : 0;
    const cs_topo_t *t = f->topo;
    f->cache = cs_path_cache_new(t, cs_comm_settings(job->comm)->nvb_disable > 0);
    f->nres = t->nlinks + 3 * t->ngpus;
    f->res_cap = g_new0(double, f->nres);
    f->res_bytes = g_new0(double, f->nres);
    for (int l = 0; l < t->nlinks; l++)
        f->res_cap[l] = t->links[l].bw;
    for (int r = 0; r < t->ngpus; r++) {
        int d = t->rank_dev[r];
        f->res_cap[res_nvl_out(f, r)] = gpu_nvlink_bw(t, d, 0);
        f->res_cap[res_nvl_in(f, r)] = gpu_nvlink_bw(t, d, 1);
        const cs_gpu_model_t *g = t->devs[d].gpu;
        f->res_cap[res_mem(f, r)] = (g != NULL && g->mem_bw > 0 ? g->mem_bw : 1e12) * par(f, CS_P_EFF_MEM);
    }
    f->nics_max = 1;
    g_autofree int *tmp = g_new0(int, MAX(1, t->ndevs));
    for (int n = 0; n < t->nnodes; n++)
        f->nics_max = MAX(f->nics_max, cs_topo_node_nics(t, n, tmp, t->ndevs));
    f->nic_dev = g_new(int, (gsize)t->nnodes * f->nics_max);
    for (int n = 0; n < t->nnodes; n++) {
        int nn = cs_topo_node_nics(t, n, tmp, t->ndevs);
        for (int k = 0; k < f->nics_max; k++)
            f->nic_dev[(gsize)n * f->nics_max + k] = k < nn ? tmp[k] : -1;
    }
    f->q = cs_evq_new();
    (void)err;
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
}

void cs_flow_free(cs_flow_t *f)
{
    if (f == NULL)
        return;
    free_call(f);
    cs_path_cache_free(f->cache);
    g_free(f->res_cap);
    g_free(f->res_bytes);
    g_free(f->nic_dev);
    cs_evq_free(f->q);
    g_free(f);
}

const double *cs_flow_link_bytes(const cs_flow_t *f, int *n_p)
{
    *n_p = f->nres;
    return f->res_bytes;
}

/* ---- edges: the resources and costs of one ring edge ------------------- */

typedef struct {
    int n;
    hop_t h[HMAX];
    double lat;              /* seconds */
} edge_build_t;

static gboolean add_path(cs_flow_t *f, edge_build_t *e, const cs_path_t *p, gboolean reverse,
                         gboolean dma, gboolean socket, double extra)
{
    const cs_topo_t *t = f->topo;
    for (int i = 0; i < p->nhops; i++) {
        int l = reverse ? t->links[p->links[p->nhops - 1 - i]].reverse : p->links[i];
        if (e->n >= HMAX - 1)
            return FALSE;
        e->h[e->n].res = l;
        e->h[e->n].coeff = 1.0 / (link_eff(f, t->links[l].kind, dma, socket) * extra);
        e->n++;
        e->lat += t->links[l].lat;
        if (t->devs[t->links[l].dst].kind == CS_DEV_SWITCH)
            e->lat += t->fabric.switch_lat;
    }
    return TRUE;
}

/* Local GPU (rank % ppn on node 0) whose path to NIC k is best, as NCCL
 * places a channel's ring exit next to its NIC. */
static int best_gpu_for_nic(const cs_flow_t *f, int k)
{
    int best = -1, ppn = f->info->ppn;
    const cs_path_t *bp = NULL;
    for (int r = 0; r < ppn && r < f->topo->ngpus; r++) {
        const cs_path_t *p = cs_path_cache_nic(f->cache, r, k);
        if (p == NULL || p->type == CS_PATH_DIS)
            continue;
        if (bp == NULL || p->type < bp->type || (p->type == bp->type && p->bw > bp->bw)) {
            bp = p;
            best = r;
        }
    }
    return best;
}

static gboolean build_edge(cs_flow_t *f, int ch, int a, int b, double peff, cs_proto_t pr,
                           edge_build_t *e, GError **err)
{
    const cs_topo_t *t = f->topo;
    int da = t->rank_dev[a], db = t->rank_dev[b];
    cs_link_choice_t lc;
    cs_comm_pair(f->comm, a, b, &lc);
    memset(e, 0, sizeof *e);
    gboolean ok = TRUE;
    if (lc.transport == CS_XPORT_NET_IB || lc.transport == CS_XPORT_NET_SOCKET) {
        gboolean socket = lc.transport == CS_XPORT_NET_SOCKET;
        int k = ch % MAX(1, f->info->nics_used);
        int na = t->devs[da].node, nb = t->devs[db].node;
        int nic_a = f->nic_dev[(gsize)na * f->nics_max + k], nic_b = f->nic_dev[(gsize)nb * f->nics_max + k];
        /* Without GPUDirect the data bounces through host memory. */
        double extra = (socket || !lc.gdr) ? par(f, CS_P_EFF_HOST_STAGED) : 1.0;
        if (socket)
            extra = 1.0;
        cs_path_t np;
        const cs_path_t *pa = nic_a >= 0 ? cs_path_cache_nic(f->cache, a, k) : NULL;
        const cs_path_t *pb = nic_b >= 0 ? cs_path_cache_nic(f->cache, b, k) : NULL;
        if (pa == NULL || pb == NULL || pa->type == CS_PATH_DIS || pb->type == CS_PATH_DIS ||
            !cs_path_net(t, nic_a, nic_b, (guint32)ch, &np)) {
            g_set_error(err, CS_ERROR, CS_ERROR_TOPOLOGY, "%s -> %s: no network route for channel %d",
                        t->devs[da].name, t->devs[db].name, ch);
            return FALSE;
        }
        ok = add_path(f, e, pa, FALSE, TRUE, socket, extra) && add_path(f, e, &np, FALSE, TRUE, socket, extra) &&
             add_path(f, e, pb, TRUE, TRUE, socket, extra);
        e->lat += (socket ? par(f, CS_P_LAT_HOP_SOCKET) : par(f, CS_P_LAT_HOP_NET)) * US;
        if (pr == CS_PROTO_SIMPLE)
            e->lat += par(f, CS_P_LAT_NET_SIMPLE) * US;
    } else if (lc.transport == CS_XPORT_SHM) {
        int cpu = cs_topo_node_cpu_of(t, da);
        cs_path_t up, down;
        gboolean nvb = cs_comm_settings(f->comm)->nvb_disable > 0;
        if (cpu < 0 || !cs_path_intra(t, da, cpu, nvb, &up) || !cs_path_intra(t, cpu, db, nvb, &down)) {
            g_set_error(err, CS_ERROR, CS_ERROR_TOPOLOGY, "%s -> %s: no path through host memory for SHM",
                        t->devs[da].name, t->devs[db].name);
            return FALSE;
        }
        double x = par(f, CS_P_EFF_SHM);
        ok = add_path(f, e, &up, FALSE, FALSE, FALSE, x) && add_path(f, e, &down, FALSE, FALSE, FALSE, x);
        e->lat += par(f, CS_P_LAT_HOP_SHM) * US;
    } else {
        cs_path_t direct;
        const cs_path_t *p = NULL;
        if (t->devs[da].node == t->devs[db].node)
            p = cs_path_cache_gpu(f->cache, a, b);
        else if (cs_path_intra(t, da, db, cs_comm_settings(f->comm)->nvb_disable > 0, &direct))
            p = &direct;
        if (p == NULL || p->type == CS_PATH_DIS || p->nhops == 0) {
            g_set_error(err, CS_ERROR, CS_ERROR_TOPOLOGY, "%s -> %s: no path between ring neighbours",
                        t->devs[da].name, t->devs[db].name);
            return FALSE;
        }
        gboolean nvl = lc.transport == CS_XPORT_P2P_NVL;
        if (nvl && t->devs[t->links[p->links[0]].dst].kind == CS_DEV_NVSWITCH) {
            /* An NVSwitch spreads a GPU's traffic over all its NVLinks:
             * the GPU's ports are the resources, as in the analytic model. */
            double c = 1.0 / par(f, CS_P_EFF_NVLINK);
            e->h[e->n++] = (hop_t){ res_nvl_out(f, a), c };
            e->h[e->n++] = (hop_t){ res_nvl_in(f, b), c };
            e->lat += p->lat;
        } else {
            ok = add_path(f, e, p, FALSE, FALSE, FALSE, 1.0);
        }
        e->lat += (nvl ? par(f, CS_P_LAT_HOP_NVLINK) : par(f, CS_P_LAT_HOP_PCIE)) * US;
        if (nvl && pr == CS_PROTO_SIMPLE)
            e->lat += par(f, CS_P_LAT_SYNC_SIMPLE_NVLINK) * US;
    }
    if (!ok) {
        g_set_error(err, CS_ERROR, CS_ERROR_TOPOLOGY, "%s -> %s: path too long", t->devs[da].name,
                    t->devs[db].name);
        return FALSE;
    }
    for (int h = 0; h < e->n; h++)
        e->h[h].coeff /= peff;
    e->lat += proto_sync(f, pr);
    return TRUE;
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
    if (f->cut && L->op.consume >= 0 && L->arrived <= L->op.consume) {
        L->wait_tail = TRUE;
        return;
    }
    op_complete(f, li);
}

static void on_arrive(cs_flow_t *f, int li)
{
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

static gboolean setup_call(cs_flow_t *f, const cs_program_t *prog, gboolean allow_fold, GError **err)
{
    int n = prog->nranks, nch = prog->nch;
    double peff = proto_eff(f, prog->proto);
    double cap = channel_bw(f, prog->proto);
    f->prog = prog;
    /* Edges of every position, then decide whether one node suffices. */
    gsize ne = (gsize)nch * n;
    edge_t *edges = g_new0(edge_t, ne);
    GArray *hops = g_array_new(FALSE, FALSE, sizeof(hop_t));
    edge_build_t eb;
    for (int c = 0; c < nch; c++)
        for (int pos = 0; pos < n; pos++) {
            edge_t *e = &edges[(gsize)c * n + pos];
            e->off = (int)hops->len;
            e->cap = cap;
            if (!cs_program_sends(prog, pos))
                continue;
            int a = cs_program_rank(prog, c, pos), b = cs_program_rank(prog, c, (pos + 1) % n);
            if (!build_edge(f, c, a, b, peff, prog->proto, &eb, err)) {
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
    int ppn = f->info->ppn, period = n;
    if (allow_fold && f->info->nnodes > 1 && n == f->info->nnodes * ppn) {
        int npl = MAX(1, f->topo->fabric.nodes_per_leaf);
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
        L->nops = cs_program_nops(prog, L->ch, L->pos);
        L->fin = cs_evq_alloc(f->q);
        L->fin->kind = EV_FIN;
        L->fin->a = li;
    }
    memset(f->res_bytes, 0, sizeof(double) * f->nres);
    return TRUE;
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
}

/* Runs the events until nothing is left; the time of the last one is the
 * call's time without launch. */
static void run_events(cs_flow_t *f)
{
    f->now = 0;
    for (int li = 0; li < f->nlanes; li++)
        advance(f, li);
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
    const cs_comm_info_t *info = f->info;
    const cs_decision_t *d = call->decision;
    int gpus_per_proc = info->nnodes == 1 ? info->ppn : 1;
    double launch = (par(f, CS_P_LAT_LAUNCH) + (gpus_per_proc - 1) * par(f, CS_P_LAT_LAUNCH_PER_GPU)) * US;
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
        exit_local[c] = info->nnodes > 1 ? best_gpu_for_nic(f, c % nics) : -1;
    g_autoptr(cs_program_t) prog = cs_program_new(info, f->coll, d, call->nccl_bytes, f->root, exit_local, err);
    if (prog == NULL)
        return FALSE;
    if (!setup_call(f, prog, allow_fold, err))
        return FALSE;
    guint64 ev0 = cs_evq_popped(f->q);
    f->recomputes = 0;
    run_events(f);
    st.time_s = launch + (double)f->now / CS_PS_PER_S;
    st.events = cs_evq_popped(f->q) - ev0;
    st.recomputes = f->recomputes;
    st.lanes = f->nlanes;
    st.folded = f->P != prog->nranks;
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
