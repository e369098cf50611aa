/* The network load of one call in closed form (cs_fabric_load.h): the rank
 * program the flow engine would run (cs_program_new, with the same ring
 * per channel), its network edges built by the flow engine's own edge
 * builder (cs_flow_build_edge / cs_flow_build_flow_edge), and per resource
 * the sum of coefficient x bytes. No time is simulated: a ring's channel
 * moves at one rate on all its edges, and channels of equal bytes share a
 * resource equally, so the most loaded resource bounds the call from
 * below exactly as a max-min fair share would settle (docs/model-analytic.md). */
#include "config.h"

#include <math.h>
#include <string.h>

#include "sim/cs_fabric_load.h"
#include "sim/cs_engine_flow-int.h"
#include "models/cs_program.h"

typedef struct {
    cs_algo_t algo;
    int nch;
    cs_fabric_bound_t b;
    cs_fabric_link_load_t *links;   /* cs_fabric_load_links; NULL until asked */
    int nlinks;
    char *why;                      /* b.skipped's text, owned */
} entry_t;

struct cs_fabric_load {
    cs_flow_net_t net;
    GArray *cache;       /* entry_t, one per (algorithm, channels) seen */
    double *load;        /* scratch: nres wire bytes per byte of S */
    double lat_sum;      /* scratch: the network edges' wire latency, summed */
    double nedges;
    double lanes;        /* scratch: the network edges, each channel of a group counted */
};

cs_fabric_load_t *cs_fabric_load_new(const cs_engine_job_t *job, GError **err)
{
    cs_fabric_load_t *fl = g_new0(cs_fabric_load_t, 1);
    if (!cs_flow_net_init(&fl->net, job, err)) {
        g_free(fl);
        return NULL;
    }
    fl->cache = g_array_new(FALSE, FALSE, sizeof(entry_t));
    fl->load = g_new0(double, MAX(1, fl->net.nres));
    return fl;
}

void cs_fabric_load_free(cs_fabric_load_t *fl)
{
    if (fl == NULL)
        return;
    cs_flow_net_clear(&fl->net);
    for (guint i = 0; i < fl->cache->len; i++) {
        g_free(g_array_index(fl->cache, entry_t, i).links);
        g_free(g_array_index(fl->cache, entry_t, i).why);
    }
    g_array_free(fl->cache, TRUE);
    g_free(fl->load);
    g_free(fl);
}

char *cs_fabric_load_res_name(const cs_fabric_load_t *fl, int res)
{
    return cs_flow_res_name(fl->net.topo, res);
}

/* Adds an edge's wire bytes: 'bytes' of payload per byte of S. The
 * builder's coefficients include the protocol's wire efficiency; the
 * caller applies it, so it is taken out here. */
static void add_edge(cs_fabric_load_t *fl, const cs_flow_edge_t *e, double peff, double bytes, double fixed,
                     int lanes)
{
    for (int h = 0; h < e->n; h++)
        fl->load[e->h[h].res] += e->h[h].coeff * peff * bytes;
    fl->lat_sum += e->lat - fixed;
    fl->nedges += 1;
    fl->lanes += lanes;
}

/* What cs_flow_build_edge adds to a network edge's latency beyond its
 * links and switches: the transport's hop, Simple's network cost and the
 * protocol's synchronisation. */
static double fixed_lat(const cs_fabric_load_t *fl, cs_proto_t pr)
{
    const cs_params_t *p = fl->net.par;
    gboolean socket = fl->net.info->inter_transport == CS_XPORT_NET_SOCKET;
    double us = cs_params_get(p, socket ? CS_P_LAT_HOP_SOCKET : CS_P_LAT_HOP_NET);
    if (pr == CS_PROTO_SIMPLE)
        us += cs_params_get(p, CS_P_LAT_NET_SIMPLE);
    us += cs_params_get(p, pr == CS_PROTO_LL ? CS_P_LAT_SYNC_LL
                           : pr == CS_PROTO_LL128 ? CS_P_LAT_SYNC_LL128 : CS_P_LAT_SYNC_SIMPLE);
    return us * 1e-6;
}

static gboolean is_net(const cs_fabric_load_t *fl, int a, int b)
{
    const cs_topo_t *t = fl->net.topo;
    if (t->devs[t->rank_dev[a]].node == t->devs[t->rank_dev[b]].node)
        return FALSE;
    cs_link_choice_t lc;
    cs_comm_pair(fl->net.comm, a, b, &lc);
    return lc.transport == CS_XPORT_NET_IB || lc.transport == CS_XPORT_NET_SOCKET;
}

/* Loads every network edge of the program; FALSE on an edge without route. */
static gboolean load_program(cs_fabric_load_t *fl, const cs_program_t *p, GError **err)
{
    double peff = cs_flow_proto_eff(&fl->net, p->proto), fixed = fixed_lat(fl, p->proto);
    double per_ch = 1.0 / p->nch;   /* S/nch per channel */
    cs_flow_edge_t e;
    if (p->nflows > 0) {
        for (int c = 0; c < p->nch; c++)
            for (int fi = p->flow_off[c]; fi < p->flow_off[c + 1]; fi++) {
                const cs_prog_flow_t *f = &p->flows[fi];
                /* CollNet: a head's slice up the SHARP tree and back */
                gboolean sharp = f->kind == CS_FLOW_COLLNET_UP || f->kind == CS_FLOW_COLLNET_DOWN;
                if (!sharp && (f->kind != CS_FLOW_P2P || !is_net(fl, f->src, f->dst)))
                    continue;
                if (!cs_flow_build_flow_edge(&fl->net, f, c, p->proto, &e, err))
                    return FALSE;
                add_edge(fl, &e, peff, f->share * per_ch, fixed, 1);
            }
        return TRUE;
    }
    /* Rings: every edge carries what a rank sends, (n-1)/n S per phase
     * (two phases for AllReduce); chains: S on every edge but the last. */
    int n = p->nranks;
    double bytes = p->chain ? per_ch
                 : per_ch * (p->coll == CS_COLL_ALLREDUCE ? 2.0 : 1.0) * (n - 1) / (double)n;
    for (int c = 0; c < p->nch; c++)
        for (int pos = 0; pos < n; pos++) {
            if (!cs_program_sends(p, pos))
                continue;
            int a = cs_program_rank(p, c, pos), b = cs_program_rank(p, c, (pos + 1) % n);
            if (!is_net(fl, a, b))
                continue;
            if (!cs_flow_build_edge(&fl->net, c, a, b, p->proto, &e, err))
                return FALSE;
            add_edge(fl, &e, peff, bytes, fixed, 1);
        }
    return TRUE;
}

/* Tree and NVLSTree all-reduce without building their programs (whose
 * dependency lists cost O(nodes^2) per tree): the same flows as
 * cs_program.c's build_tree_channel / build_nvls_channel, whose network
 * edges are the tree edges between nodes, once up and once down, channel
 * c on tree cs_program_tree_of(nch, c). Tree: the heads are the last GPUs
 * of each node's block of the channel's ring ('orders'), the route is the
 * channel's. NVLSTree: only the NVLS heads meet the network (connect.cc
 * connectNvls; the first cs_program_nvls_heads ranks of each node's block
 * of 'orders', cs_flow_prog_orders), head h's tree joins the h-th heads of
 * the nodes, carries 1/heads of the channel's data and leaves through the
 * NIC of the NVLS channels its sender heads (cs_flow_build_flow_edge).
 * Channels of one tree whose heads use the same NICs on node 0 load alike,
 * so each such group is loaded once with its channels' weight. 'phase':
 * -1 both directions, 0 the edges up only, 1 down only. FALSE: not this
 * shape (the caller builds the program). */
static gboolean load_trees(cs_fabric_load_t *fl, const cs_decision_t *d, const int *orders, int phase,
                           GError **err)
{
    const cs_comm_info_t *info = fl->net.info;
    int nn = info->nnodes, m = info->ppn, nch = d->nchannels, n = info->nranks;
    gboolean nvls = d->algo == CS_ALGO_NVLS_TREE;
    if (fl->net.coll != CS_COLL_ALLREDUCE || (d->algo != CS_ALGO_TREE && !nvls) || nch < 1 || n != nn * m)
        return FALSE;
    int H = nvls ? cs_program_nvls_heads(info) : 1;
    double peff = cs_flow_proto_eff(&fl->net, d->proto), fixed = fixed_lat(fl, d->proto);
    cs_flow_edge_t e;
    g_autofree int *nic = g_new(int, (gsize)nch * H);   /* NVLSTree: NIC of node 0's head h, channel c */
    for (int c = 0; c < nch && nvls; c++)
        for (int h = 0; h < H; h++)
            nic[c * H + h] = cs_comm_chan_nic(fl->net.comm, CS_ALGO_NVLS_TREE, orders[h], c);
    for (int c = 0; c < nch; c++) {
        int tree = cs_program_tree_of(nch, c);
        int weight = 1;
        if (nvls) {
            gboolean seen = FALSE;
            for (int c2 = 0; c2 < c && !seen; c2++)
                seen = cs_program_tree_of(nch, c2) == tree &&
                       memcmp(&nic[c2 * H], &nic[c * H], sizeof(int) * H) == 0;
            if (seen)
                continue;
            weight = 0;
            for (int c2 = c; c2 < nch; c2++)
                weight += cs_program_tree_of(nch, c2) == tree &&
                          memcmp(&nic[c2 * H], &nic[c * H], sizeof(int) * H) == 0;
        }
        const int *ring = orders + (gsize)c * n;
        for (int h = 0; h < H; h++) {
            cs_prog_flow_t f = { .kind = CS_FLOW_P2P, .net_local = nvls ? h : -1,
                                 .share = 1.0 / H, .cap_div = 1 };
            for (int v = 0; v < nn; v++) {
                int u = cs_dtree_parent(nn, tree, v);
                if (u < 0)
                    continue;
                /* ranks are node-major: node w's block is ring[w*m ..] (Tree:
                 * where the ring visits the nodes in order) */
                int at = nvls ? h : m - 1, hv = ring[v * m + at], hu = ring[u * m + at];
                if (hv / m != v || hu / m != u)
                    return FALSE;
                for (int dir = 0; dir < 2; dir++) {
                    if (phase >= 0 && dir != phase)
                        continue;
                    f.src = dir == 0 ? hv : hu;
                    f.dst = dir == 0 ? hu : hv;
                    if (!is_net(fl, f.src, f.dst))
                        continue;
                    if (!cs_flow_build_flow_edge(&fl->net, &f, c, d->proto, &e, err))
                        return FALSE;
                    add_edge(fl, &e, peff, weight * f.share / nch, fixed, weight);
                }
            }
        }
    }
    return TRUE;
}

/* The links the bound looks at: the network links only (NIC ports, leaf,
 * spine and core links). */
static gboolean priced(const cs_fabric_load_t *fl, int r)
{
    const cs_topo_t *t = fl->net.topo;
    return r < t->nlinks && fl->load[r] > 0 && fl->net.res_cap[r] > 0 && t->links[r].kind == CS_LINK_NET;
}

/* The busiest priced link's seconds per byte of S under the loads now in
 * fl->load. */
static double max_spb(const cs_fabric_load_t *fl)
{
    double spb = 0;
    for (int r = 0; r < fl->net.topo->nlinks; r++)
        if (priced(fl, r))
            spb = MAX(spb, fl->load[r] / fl->net.res_cap[r]);
    return spb;
}

/* A tree all-reduce whose phases run one after the other (NCCL <= 2.7
 * Simple, cs_tree_phases_in_sequence): the reduce's edges up load the
 * links, then the broadcast's down, so the bound is the busiest link of
 * the one plus that of the other. The loads left are both phases' (what
 * the links carry in all), for cs_fabric_load_links. */
static void seq_tree_bound(cs_fabric_load_t *fl, const cs_decision_t *d, const int *orders, cs_fabric_bound_t *b)
{
    static const int phases[3] = { 0, 1, -1 };   /* up, down, then both again */
    double spb = 0;
    for (int k = 0; k < 3; k++) {
        memset(fl->load, 0, sizeof(double) * fl->net.nres);
        fl->lat_sum = fl->nedges = fl->lanes = 0;
        if (!load_trees(fl, d, orders, phases[k], NULL))
            return;
        if (phases[k] >= 0)
            spb += max_spb(fl);
    }
    b->spb = MAX(b->spb, spb);
}

/* The bound of decision d into b; where its edges cannot be routed,
 * b->skipped says so and *why_p (owned by the caller) why. */
static void compute(cs_fabric_load_t *fl, const cs_decision_t *d, cs_fabric_bound_t *b, char **why_p)
{
    const cs_flow_net_t *net = &fl->net;
    const cs_comm_info_t *info = net->info;
    const cs_topo_t *t = net->topo;
    memset(b, 0, sizeof *b);
    b->res = -1;
    if (info->nranks < 2 || info->nnodes < 2)
        return;
    cs_decision_t dd = *d;
    if (dd.algo == CS_ALGO_PAT)
        dd.algo = CS_ALGO_RING;   /* PAT's steps are priced on the ring's routes */
    g_autofree int *orders = cs_flow_prog_orders(net, &dd);   /* as the engines build them */
    memset(fl->load, 0, sizeof(double) * net->nres);
    fl->lat_sum = fl->nedges = fl->lanes = 0;
    g_autoptr(GError) err = NULL;
    gboolean ok = load_trees(fl, &dd, orders, -1, &err), trees = ok;
    if (!ok && err == NULL) {
        /* The structure does not depend on the size: one byte per rank
         * and channel is enough to build it. */
        guint64 nbytes = (guint64)MAX(1, dd.nchannels) * (guint64)info->nranks;
        g_autoptr(cs_program_t) p = cs_program_new(info, net->coll, &dd, nbytes, net->root, orders, &err);
        memset(fl->load, 0, sizeof(double) * net->nres);
        fl->lat_sum = fl->nedges = fl->lanes = 0;
        ok = p != NULL && load_program(fl, p, &err);
    }
    if (!ok) {
        /* the route's own words, without the flow engine's remedy (the
         * analytic engine priced the call) */
        g_autofree char *what = err != NULL ? g_strdup(err->message) : NULL;
        char *cut = what != NULL ? strstr(what, "; expected") : NULL;
        if (cut != NULL)
            *cut = '\0';
        *why_p = what != NULL ? g_strdup_printf("the network edges of this call were not routed: %s", what)
                              : g_strdup("the network edges of this call were not routed");
        b->skipped = *why_p;
        return;
    }
    b->wire_lat = fl->nedges > 0 ? MAX(0, fl->lat_sum / fl->nedges) : 0;
    b->net_edges = fl->lanes;
    /* The network links only (NIC ports, leaf, spine and core links):
     * the GPU-NIC paths inside a node stay the analytic engine's NIC rate
     * term, which prices each NIC's best GPU as NCCL pairs them. */
    for (int r = 0; r < t->nlinks; r++) {
        if (!priced(fl, r))
            continue;
        b->net_wire += fl->load[r];
        double spb = fl->load[r] / net->res_cap[r];
        if (spb > b->spb) {
            b->spb = spb;
            b->res = r;
        }
        if (r < t->nlinks && t->links[r].kind == CS_LINK_NET && t->devs[t->links[r].src].kind == CS_DEV_NIC)
            b->nic_spb = MAX(b->nic_spb, spb);
    }
    if (trees && dd.algo == CS_ALGO_TREE && dd.proto == CS_PROTO_SIMPLE &&
        cs_tree_phases_in_sequence(info->nccl_version))
        seq_tree_bound(fl, &dd, orders, b);
}

static entry_t *entry(cs_fabric_load_t *fl, const cs_decision_t *d)
{
    for (guint i = 0; i < fl->cache->len; i++) {
        entry_t *e = &g_array_index(fl->cache, entry_t, i);
        if (e->algo == d->algo && e->nch == d->nchannels)
            return e;
    }
    entry_t e = { d->algo, d->nchannels, { 0 }, NULL, 0, NULL };
    compute(fl, d, &e.b, &e.why);
    g_array_append_val(fl->cache, e);
    return &g_array_index(fl->cache, entry_t, fl->cache->len - 1);
}

void cs_fabric_load_bound(cs_fabric_load_t *fl, const cs_decision_t *d, cs_fabric_bound_t *b_p)
{
    *b_p = entry(fl, d)->b;
}

const cs_fabric_link_load_t *cs_fabric_load_links(cs_fabric_load_t *fl, const cs_decision_t *d, int *n_p)
{
    entry_t *e = entry(fl, d);
    if (e->links == NULL) {
        /* The scratch loads belong to the last decision computed: load
         * this one's again (the bound only kept its maximum). */
        cs_fabric_bound_t b;
        g_autofree char *why = NULL;
        compute(fl, d, &b, &why);
        int n = 0;
        if (b.skipped == NULL && b.spb > 0)   /* else nothing loaded (or stale scratch) */
            for (int r = 0; r < fl->net.topo->nlinks; r++)
                n += priced(fl, r);
        e->links = g_new(cs_fabric_link_load_t, MAX(1, n));
        e->nlinks = 0;
        for (int r = 0; r < fl->net.topo->nlinks && n > 0; r++)
            if (priced(fl, r))
                e->links[e->nlinks++] = (cs_fabric_link_load_t){ r, fl->load[r], fl->net.res_cap[r] };
    }
    *n_p = e->nlinks;
    return e->links;
}
