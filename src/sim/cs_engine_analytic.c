/* The analytic engine: closed-form time of a collective from the hardware.
 *
 * NCCL's decisions (algorithm, protocol, channels, transports, ring order)
 * come from cs_comm_decide and are taken as given; NCCL's own time estimate
 * is not used. The time is built from the topology's link bandwidths and
 * latencies, the protocols' wire efficiencies, per-channel (one SM)
 * throughput ceilings, launch and per-step costs, NIC and fabric limits
 * and GPU memory bandwidth, with every constant from cs_params. Once per
 * job, open() reduces the topology to a small summary (cs_analytic_hw_t);
 * predict() is then O(1) and allocates nothing. The formulas, term by
 * term, are in docs/model-analytic.md. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "sim/cs_engine_analytic-int.h"
#include "sim/cs_engine_flow-int.h"
#include "models/cs_program.h"
#include "models/cs_p2p.h"
#include "models/cs_paths.h"
#include "models/cs_shm.h"
#include "util/cs_error.h"

#define US 1e-6     /* parameter files hold microseconds */
#define GBPS 1e9    /* ... and GB/s */

static double par(const cs_params_t *p, cs_param_id_t id)
{
    return cs_params_get(p, id);
}

static int arch_group(int cc)
{
    return cc >= 100 ? 3 : cc >= 90 ? 2 : cc >= 80 ? 1 : 0;
}

/* Efficiency of one link kind for GPU-driven (SM) traffic. */
static double link_eff(const cs_params_t *p, const cs_topo_t *t, int link)
{
    switch (t->links[link].kind) {
    case CS_LINK_NVL: return cs_params_nvlink_eff(p, cs_topo_link_gpu_sm(t, link));
    case CS_LINK_C2C: return par(p, CS_P_EFF_C2C);
    case CS_LINK_PCI: return par(p, CS_P_EFF_PCIE);
    case CS_LINK_SYS: return par(p, CS_P_EFF_SYS);
    case CS_LINK_NET: return par(p, CS_P_EFF_NET);
    }
    return 1.0;
}

/* ... and for a NIC's DMA (GPU-NIC and host-NIC paths). */
static double dma_eff(const cs_params_t *p, const cs_topo_t *t, int link)
{
    return t->links[link].kind == CS_LINK_PCI ? par(p, CS_P_EFF_PCIE_DMA) : link_eff(p, t, link);
}

/* Payload rate of a path for NIC DMA: its slowest link after efficiency. */
static double path_dma_bw(const cs_topo_t *t, const cs_params_t *p, const cs_path_t *path)
{
    double bw = INFINITY;
    for (int h = 0; h < path->nhops; h++) {
        const cs_link_t *l = &t->links[path->links[h]];
        bw = MIN(bw, l->bw * dma_eff(p, t, path->links[h]));
    }
    return bw;
}

/* ---- NCCL's double binary tree (trees.cc, v2.28.9) ---------------------
 * The trees themselves come from cs_dtree_parent (cs_program.c), the rule
 * the flow engine's programs use too. */
void cs_analytic_dtree_shape(int nnodes, int *degsum_p, int *depth_p)
{
    int degsum = 0, depth = 0;
    if (nnodes > 1) {
        g_autofree int *deg = g_new0(int, nnodes);
        for (int tree = 0; tree < 2; tree++)
            for (int r = 0; r < nnodes; r++) {
                int u = cs_dtree_parent(nnodes, tree, r);
                if (u < 0)
                    continue;
                deg[r]++;
                deg[u]++;
                int d = 1;
                for (int a = u; cs_dtree_parent(nnodes, tree, a) >= 0; a = cs_dtree_parent(nnodes, tree, a))
                    d++;
                depth = MAX(depth, d);
            }
        for (int r = 0; r < nnodes; r++)
            degsum = MAX(degsum, deg[r]);
    }
    *degsum_p = degsum;
    *depth_p = depth;
}

/* ---- the summary -------------------------------------------------------- */

static cs_transport_t pair_transport(const cs_comm_t *comm, const cs_comm_info_t *info, int a, int b,
                                     gboolean same_node)
{
    if (comm != NULL) {
        cs_link_choice_t ch;
        cs_comm_pair(comm, a, b, &ch);
        return ch.transport;
    }
    return same_node ? info->intra.transport : info->inter.transport;
}

/* Sum of a GPU's NVLink bandwidth out of it (dir 0) or into it (dir 1). */
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

/* Order of the per-step cost of intra-node transports. */
static int k_max_xport(cs_transport_t x)
{
    return x == CS_XPORT_P2P_NVL ? 0 : x == CS_XPORT_P2P_PCI ? 1 : x == CS_XPORT_SHM ? 2 : 3;
}

/* One ring edge inside a node (or inside an NVLink domain), as the links it
 * loads. A switched NVLink edge is accounted at the GPUs' NVLink ports:
 * an NVSwitch fabric spreads a GPU's traffic over all its links. */
typedef struct {
    int a, b;                 /* ranks */
    cs_transport_t xport;
    gboolean switched;        /* NVLink through NVSwitch(es) */
    int nlinks;
    const int *links;         /* nlinks: the path cache's (a path inside a node) or 'owned' (SHM's route
                               * through the host, edge_path): a ring of 100k GPUs holds 1.6M edges */
    double lat;
    /* SHM (cs_shm.h): how NCCL copies (zeroed: direct, buffer at the
     * receiver), the first 'shm_nup' links lead to the buffer's socket
     * 'shm_mem' (-1: none) */
    cs_shm_mode_t shm;
    int shm_nup, shm_mem;
} ring_edge_t;

static gboolean edge_path(const cs_topo_t *t, cs_path_cache_t *cache, gboolean nvb_disable, GPtrArray *owned,
                          ring_edge_t *e, GError **err)
{
    int da = t->rank_dev[e->a], db = t->rank_dev[e->b];
    e->nlinks = 0;
    e->links = NULL;
    e->lat = 0;
    e->switched = FALSE;
    e->shm_mem = -1;
    if (e->xport == CS_XPORT_SHM) {
        /* Through the host: GPU a up to the socket holding the buffer,
         * then down to b (cs_shm.h). */
        cs_shm_route_t r;
        if (!cs_shm_route(t, da, db, e->shm.locality, nvb_disable, &r)) {
            g_set_error(err, CS_ERROR, CS_ERROR_TOPOLOGY,
                        "%s -> %s: no path through host memory for SHM", t->devs[da].name, t->devs[db].name);
            return FALSE;
        }
        int *links = g_memdup2(r.links, sizeof(int) * (gsize)(r.nup + r.ndown));
        g_ptr_array_add(owned, links);
        e->links = links;
        e->nlinks = r.nup + r.ndown;
        e->shm_nup = r.nup;
        e->shm_mem = r.mem_cpu;
        e->lat = r.lat;
        return TRUE;
    }
    if (t->devs[da].node != t->devs[db].node) {
        /* An NVLink domain spanning nodes (NVL72-like): a switched fabric,
         * accounted at the GPUs' NVLink ports like an NVSwitch. */
        e->switched = TRUE;
        return TRUE;
    }
    const cs_path_t *path = cs_path_cache_gpu(cache, e->a, e->b);
    if (path == NULL || path->type == CS_PATH_DIS || path->nhops == 0) {
        g_set_error(err, CS_ERROR, CS_ERROR_TOPOLOGY, "%s -> %s: no path between ring neighbours",
                    t->devs[da].name, t->devs[db].name);
        return FALSE;
    }
    e->lat = path->lat;
    if (e->xport == CS_XPORT_P2P_NVL) {
        int first_dst = t->links[path->links[0]].dst;
        if (t->devs[first_dst].kind == CS_DEV_NVSWITCH) {
            e->switched = TRUE;
            return TRUE;
        }
    }
    e->links = path->links;   /* (the cache outlives the edges) */
    e->nlinks = path->nhops;
    return TRUE;
}

/* Per-link, per-port and per-memory counts of edges_bw, zeroed once and
 * left zeroed after each call (only the entries the edges touch are
 * cleared): intra_ring calls it four times per channel, and clearing
 * arrays the size of the whole topology each time was most of the
 * analytic engine's setup on large clusters and in calibrate's fits. */
typedef struct {
    double *load;       /* per link */
    double *port_out;   /* per rank */
    double *port_in;
    double *mem_load;   /* per device */
    double *nvl_out, *nvl_in;   /* per device: gpu_nvlink_bw, < 0 until first asked (a large
                                 * cluster's channels ask it of every rank again) */
    const cs_topo_t *t;
} edge_count_t;

static void edge_count_init(edge_count_t *c, const cs_topo_t *t, int nranks)
{
    c->load = g_new0(double, MAX(1, t->nlinks));
    c->port_out = g_new0(double, MAX(1, nranks));
    c->port_in = g_new0(double, MAX(1, nranks));
    c->mem_load = g_new0(double, MAX(1, t->ndevs));
    c->nvl_out = g_new(double, MAX(1, t->ndevs));
    c->nvl_in = g_new(double, MAX(1, t->ndevs));
    for (int i = 0; i < t->ndevs; i++)
        c->nvl_out[i] = c->nvl_in[i] = -1;
    c->t = t;
}

/* gpu_nvlink_bw, once per device and direction */
static double nvl_bw(edge_count_t *c, int dev, int dir)
{
    double *v = dir == 0 ? c->nvl_out : c->nvl_in;
    if (v[dev] < 0)
        v[dev] = gpu_nvlink_bw(c->t, dev, dir);
    return v[dev];
}

static void edge_count_clear(edge_count_t *c)
{
    g_free(c->load);
    g_free(c->port_out);
    g_free(c->port_in);
    g_free(c->mem_load);
    g_free(c->nvl_out);
    g_free(c->nvl_in);
}

/* Rate of the slowest of 'nedges' edges that all carry the same traffic:
 * every directed link on an edge's path carries one unit per edge crossing
 * it, and the busiest link decides each edge's share. An SHM edge's links
 * run at each side's copy efficiency (cs_shm_side_eff: the sender's on the
 * way up to the buffer, the receiver's on the way down; two-way when that
 * GPU also moves data the other way), and the socket holding its buffer
 * writes and reads every byte, shared by the SHM edges whose buffers it
 * holds (cs_shm_host_mem_bw). Edges through NVSwitch keep 'switched_share'
 * of their ports' rate (cs_engine_nvswitch_share). Also returns the slowest
 * edge's topology latency. 'cnt' comes in zeroed and is left zeroed. */
static void edges_count(edge_count_t *cnt, const ring_edge_t *edges, int nedges)
{
    for (int k = 0; k < nedges; k++) {
        const ring_edge_t *e = &edges[k];
        cnt->port_out[e->a] += 1;
        cnt->port_in[e->b] += 1;
        for (int h = 0; h < e->nlinks; h++)
            cnt->load[e->links[h]] += 1;
        if (e->xport == CS_XPORT_SHM && e->shm_mem >= 0)
            cnt->mem_load[e->shm_mem] += CS_SHM_MEM_TOUCHES;
    }
}

static void edges_uncount(edge_count_t *cnt, const ring_edge_t *edges, int nedges)
{
    for (int k = 0; k < nedges; k++) {
        const ring_edge_t *e = &edges[k];
        cnt->port_out[e->a] = cnt->port_in[e->b] = 0;
        for (int h = 0; h < e->nlinks; h++)
            cnt->load[e->links[h]] = 0;
        if (e->shm_mem >= 0)
            cnt->mem_load[e->shm_mem] = 0;
    }
}

/* A switched edge's rate at its ports, before the GPU's NVLink efficiency. */
static double switched_port_bw(edge_count_t *cnt, const cs_topo_t *t, int a, int b, double port_share)
{
    double out = nvl_bw(cnt, t->rank_dev[a], 0) / (cnt->port_out[a] * port_share);
    double in = nvl_bw(cnt, t->rank_dev[b], 1) / (cnt->port_in[b] * port_share);
    return MIN(out, in);
}

/* A link's rate at its load, the same on every edge that crosses it
 * (but SHM's, whose sides scale it). */
static double link_rate(const cs_topo_t *t, const cs_params_t *p, const edge_count_t *cnt, int link)
{
    return t->links[link].bw * link_eff(p, t, link) / cnt->load[link];
}

/* edges_bw with the counts already in 'cnt'. */
static double edges_rate(const cs_topo_t *t, const cs_params_t *p, int arch, const ring_edge_t *edges, int nedges,
                         edge_count_t *cnt, double port_share, double switched_share, gboolean simple,
                         double *lat_p)
{
    double *port_out = cnt->port_out, *port_in = cnt->port_in, *mem_load = cnt->mem_load;
    double bw = INFINITY, lat = 0;
    for (int k = 0; k < nedges; k++) {
        const ring_edge_t *e = &edges[k];
        double ebw = INFINITY;
        if (e->switched)
            ebw = switched_port_bw(cnt, t, e->a, e->b, port_share) *
                  cs_params_nvlink_eff(p, t->devs[t->rank_dev[e->a]].gpu->sm) * switched_share;
        for (int h = 0; h < e->nlinks; h++) {
            double r = link_rate(t, p, cnt, e->links[h]);
            if (e->xport == CS_XPORT_SHM)
                /* the proxy's copy engine serves Simple only (transport/shm.cc) */
                r *= h < e->shm_nup ? cs_shm_side_eff(p, simple && e->shm.ce_send, port_in[e->a] > 0)
                                    : cs_shm_side_eff(p, simple && e->shm.ce_recv, port_out[e->b] > 0);
            ebw = MIN(ebw, r);
        }
        if (e->xport == CS_XPORT_SHM && e->shm_mem >= 0)
            ebw = MIN(ebw, cs_shm_host_mem_bw(t, e->shm_mem, p) / mem_load[e->shm_mem]);
        /* each edge is one channel's: its CTA's loads behind its GPU's
         * own posted writes (cs_shm_chan_bw); arch -1: the point-to-point
         * edges, which carry all of a pair's channels, are bound per
         * channel in t_p2p instead */
        if (e->xport == CS_XPORT_SHM && arch >= 0)
            ebw = MIN(ebw, cs_shm_chan_bw(p, arch, simple && e->shm.ce_recv, port_out[e->b] > 0));
        bw = MIN(bw, ebw);
        lat = MAX(lat, e->lat);
    }
    *lat_p = lat;
    return bw;
}

static double edges_bw(const cs_topo_t *t, const cs_params_t *p, int arch, const ring_edge_t *edges, int nedges,
                       edge_count_t *cnt, double port_share, double switched_share, gboolean simple,
                       double *lat_p)
{
    edges_count(cnt, edges, nedges);
    double bw = edges_rate(t, p, arch, edges, nedges, cnt, port_share, switched_share, simple, lat_p);
    edges_uncount(cnt, edges, nedges);   /* zeroed again for the next call */
    return bw;
}

/* The edges of channels 0..c of intra_ring, counted as each channel is
 * added, and edges_bw's rate of them all. edges_bw again for every c
 * reads all of them: 16 channels of a ring of 100k GPUs are 136 passes
 * over 100k edges. Here a channel adds its edges' counts, and the rate is
 * the least of the terms the edges share: every link's (link_rate, the
 * same on each edge crossing it) and each switched edge's ports
 * (switched_port_bw, the MIN of its sender's and receiver's), whose least
 * is that of the least sender's and the least receiver's; a product by
 * the same positive factors keeps the order, so the rate is edges_bw's to
 * the bit. Where the terms are an edge's own (SHM: each side's copy
 * efficiency; GPUs of different NVLink efficiency in one ring) the edges
 * are read one by one, as edges_bw does. */
typedef struct {
    edge_count_t cnt;
    GArray *links;               /* links with a load */
    GArray *senders, *receivers; /* ranks at either end of a switched edge */
    guint8 *is_sender, *is_receiver;
    int sm;                      /* the switched senders' GPUs' SM, -1: none yet */
    gboolean per_edge;           /* SHM edges, or switched senders of different SMs */
    double lat;
} edge_acc_t;

static void edge_acc_init(edge_acc_t *a, const cs_topo_t *t, int nranks)
{
    edge_count_init(&a->cnt, t, nranks);
    a->links = g_array_new(FALSE, FALSE, sizeof(int));
    a->senders = g_array_new(FALSE, FALSE, sizeof(int));
    a->receivers = g_array_new(FALSE, FALSE, sizeof(int));
    a->is_sender = g_new0(guint8, MAX(1, nranks));
    a->is_receiver = g_new0(guint8, MAX(1, nranks));
    a->sm = -1;
    a->per_edge = FALSE;
    a->lat = 0;
}

static void edge_acc_clear(edge_acc_t *a)
{
    edge_count_clear(&a->cnt);
    g_array_free(a->links, TRUE);
    g_array_free(a->senders, TRUE);
    g_array_free(a->receivers, TRUE);
    g_free(a->is_sender);
    g_free(a->is_receiver);
}

static void edge_acc_add(edge_acc_t *a, const cs_topo_t *t, const ring_edge_t *edges, int nedges)
{
    for (int k = 0; k < nedges; k++) {
        const ring_edge_t *e = &edges[k];
        for (int h = 0; h < e->nlinks; h++)
            if (a->cnt.load[e->links[h]] == 0)
                g_array_append_val(a->links, e->links[h]);
        edges_count(&a->cnt, e, 1);
        if (e->xport == CS_XPORT_SHM)
            a->per_edge = TRUE;
        if (e->switched) {
            int sm = t->devs[t->rank_dev[e->a]].gpu->sm;
            if (a->sm >= 0 && sm != a->sm)
                a->per_edge = TRUE;
            a->sm = sm;
            if (!a->is_sender[e->a]) {
                a->is_sender[e->a] = 1;
                g_array_append_val(a->senders, e->a);
            }
            if (!a->is_receiver[e->b]) {
                a->is_receiver[e->b] = 1;
                g_array_append_val(a->receivers, e->b);
            }
        }
        a->lat = MAX(a->lat, e->lat);
    }
}

/* edges_bw of the edges added ('edges', 'nedges': all of them, for the
 * edge-by-edge reading). */
static double edge_acc_bw(edge_acc_t *a, const cs_topo_t *t, const cs_params_t *p, int arch,
                          const ring_edge_t *edges, int nedges, double port_share, gboolean simple, double *lat_p)
{
    if (a->per_edge)
        return edges_rate(t, p, arch, edges, nedges, &a->cnt, port_share, 1.0, simple, lat_p);
    double bw = INFINITY;
    if (a->senders->len > 0) {
        double out = INFINITY, in = INFINITY;
        for (guint i = 0; i < a->senders->len; i++) {
            int r = g_array_index(a->senders, int, i);
            out = MIN(out, nvl_bw(&a->cnt, t->rank_dev[r], 0) / (a->cnt.port_out[r] * port_share));
        }
        for (guint i = 0; i < a->receivers->len; i++) {
            int r = g_array_index(a->receivers, int, i);
            in = MIN(in, nvl_bw(&a->cnt, t->rank_dev[r], 1) / (a->cnt.port_in[r] * port_share));
        }
        bw = MIN(out, in) * cs_params_nvlink_eff(p, a->sm);   /* (edges_bw's switched_share: 1) */
    }
    for (guint i = 0; i < a->links->len; i++)
        bw = MIN(bw, link_rate(t, p, &a->cnt, g_array_index(a->links, int, i)));
    *lat_p = a->lat;
    return bw;
}

/* Intra-node ring and chain: the edges of every channel's ring whose ends
 * share a node (or an NVLink domain), routed on the topology. NCCL's
 * search may give channels different rings (graph/search.cc takes each
 * channel's bandwidth off the links it used, so on DGX-1 later channels
 * ride the single NVLinks: collsim topo graph dgx1-v100), and a call on k
 * channels runs channels 0..k-1 (enqueue.cc scheduleCollTasksToPlan), each
 * carrying 1/k of the data: a link's load is the number of those
 * channels' edges that cross it, over k. So the summary keeps, for every
 * k up to the communicator's channels, the rate of the slowest channel's
 * edges times k. The chain (Broadcast, Reduce) is each ring without the
 * edge into the root. Without a communicator (tests) channel 0's ring
 * (info->ring_order) is the only one. */
static gboolean intra_ring(cs_analytic_hw_t *hw, const cs_topo_t *t, const cs_comm_info_t *info,
                           cs_path_cache_t *cache, gboolean nvb_disable, const cs_comm_t *comm,
                           const cs_params_t *p, int root, GError **err)
{
    int n = info->nranks;
    int nch = comm != NULL ? CLAMP(info->comm_nch, 1, CS_ANALYTIC_MAXCH) : 1;
    g_autofree ring_edge_t *edges = g_new0(ring_edge_t, (gsize)MAX(1, n) * nch);
    g_autofree ring_edge_t *chain = g_new0(ring_edge_t, (gsize)MAX(1, n) * nch);
    g_autoptr(GPtrArray) owned = g_ptr_array_new_with_free_func(g_free);   /* edges' SHM routes */
    g_autofree int *order = g_new0(int, MAX(1, n));
    edge_acc_t acc, acc_chain;   /* channels 0..c's edges and chain, counted */
    edge_acc_init(&acc, t, n);
    edge_acc_init(&acc_chain, t, n);
    int nedges = 0, nchain = 0;
    gboolean any_cross_nvl = FALSE, any_cross_net = FALSE;

    hw->intra_bw = hw->chain_bw = 0;
    hw->intra_lat = 0;
    hw->ring_nch = nch;
    memset(hw->intra_bw_ch, 0, sizeof hw->intra_bw_ch);
    memset(hw->chain_bw_ch, 0, sizeof hw->chain_bw_ch);
    memset(hw->intra_bw_ch_ll, 0, sizeof hw->intra_bw_ch_ll);
    memset(hw->chain_bw_ch_ll, 0, sizeof hw->chain_bw_ch_ll);
    for (int c = 0; c < nch && n > 1; c++) {
        int edges_from = nedges, chain_from = nchain;
        if (comm != NULL)
            cs_comm_chan_order(comm, CS_ALGO_RING, c, order);
        else
            memcpy(order, info->ring_order, sizeof(int) * n);
        for (int i = 0; i < n; i++) {
            int a = order[i], b = order[(i + 1) % n];
            gboolean same = cs_topo_rank_dev(t, a)->node == cs_topo_rank_dev(t, b)->node;
            cs_transport_t x = pair_transport(comm, info, a, b, same);
            if (x == CS_XPORT_NET_IB || x == CS_XPORT_NET_SOCKET) {
                /* Between nodes, or a loopback through a NIC inside one:
                 * priced by the network terms. */
                any_cross_net = TRUE;
                continue;
            }
            if (!same)
                any_cross_nvl = TRUE;
            ring_edge_t *e = &edges[nedges];
            e->a = a;
            e->b = b;
            e->xport = x;
            if (comm != NULL)   /* the Simple protocol's copy (edges_bw drops it for LL/LL128) */
                cs_shm_mode(cs_comm_settings(comm), CS_PROTO_SIMPLE, &e->shm);
            if (x == CS_XPORT_SHM)
                hw->shm_mode = e->shm;
            if (!edge_path(t, cache, nvb_disable, owned, e, err)) {
                edge_acc_clear(&acc);
                edge_acc_clear(&acc_chain);
                return FALSE;
            }
            if (k_max_xport(e->xport) > k_max_xport(hw->intra_xport) || nedges == 0)
                hw->intra_xport = e->xport;   /* the costliest kind decides the hop cost */
            nedges++;
            if (b != root)
                chain[nchain++] = *e;
        }
        /* Across nodes each channel's ring enters a node at one GPU and
         * leaves at another, and NCCL spreads the channels over the NICs
         * and so over the GPUs. With every channel's ring counted, the
         * ports carry exactly their edges; with channel 0's alone (no
         * communicator), on average a GPU's NVLink port carries (ppn-1)/ppn
         * of a ring edge each way (its share of the network edges rides
         * PCIe). */
        double share = 1.0;
        if (comm == NULL && any_cross_net && info->ppn > 1)
            share = (info->ppn - 1) / (double)info->ppn;
        edge_acc_add(&acc, t, edges + edges_from, nedges - edges_from);
        edge_acc_add(&acc_chain, t, chain + chain_from, nchain - chain_from);
        if (nedges > 0) {
            double lat, k = c + 1;
            hw->intra_bw_ch[c] = k * edge_acc_bw(&acc, t, p, hw->arch, edges, nedges, share, TRUE, &hw->intra_lat);
            hw->chain_bw_ch[c] = nchain > 0 ? k * edge_acc_bw(&acc_chain, t, p, hw->arch, chain, nchain, share, TRUE, &lat)
                                            : hw->intra_bw_ch[c];
            gboolean ce = hw->shm_mode.ce_send || hw->shm_mode.ce_recv;
            hw->intra_bw_ch_ll[c] = ce ? k * edge_acc_bw(&acc, t, p, hw->arch, edges, nedges, share, FALSE, &lat)
                                       : hw->intra_bw_ch[c];
            hw->chain_bw_ch_ll[c] = ce && nchain > 0
                                        ? k * edge_acc_bw(&acc_chain, t, p, hw->arch, chain, nchain, share, FALSE, &lat)
                                        : ce ? hw->intra_bw_ch_ll[c] : hw->chain_bw_ch[c];
        }
    }
    hw->mnnvl = any_cross_nvl && !any_cross_net;
    hw->intra_bw = hw->intra_bw_ch[nch - 1];
    hw->chain_bw = hw->chain_bw_ch[nch - 1];
    edge_acc_clear(&acc);
    edge_acc_clear(&acc_chain);
    return TRUE;
}

/* The intra-node ring's (or chain's) rate for a call on 'nch' channels:
 * channels 0..nch-1 (beyond the communicator's, its rings again), with
 * protocol 'pr' (SHM's proxy copy serves Simple only). */
static double ring_edge_bw(const cs_analytic_hw_t *hw, int nch, gboolean chain, cs_proto_t pr)
{
    if (hw->ring_nch < 1)
        return chain ? hw->chain_bw : hw->intra_bw;
    int k = CLAMP(nch, 1, hw->ring_nch);
    if (pr != CS_PROTO_SIMPLE)
        return chain ? hw->chain_bw_ch_ll[k - 1] : hw->intra_bw_ch_ll[k - 1];
    return chain ? hw->chain_bw_ch[k - 1] : hw->intra_bw_ch[k - 1];
}

/* Wire latency between two NICs: the cables' latency plus the fabric's
 * per-switch latency for every switch crossed (cs_cluster.c leaves the
 * switch time to the engines). 0 when there is no route. */
static double net_path_lat(const cs_topo_t *t, int nic_a, int nic_b)
{
    cs_path_t np;
    if (nic_a < 0 || nic_b < 0 || !cs_path_net(t, nic_a, nic_b, 0, &np))
        return 0;
    double lat = np.lat;
    for (int h = 0; h < np.nhops; h++)
        if (t->devs[t->links[np.links[h]].dst].kind == CS_DEV_SWITCH)
            lat += t->fabric.switch_lat;
    return lat;
}

static int cmp_double_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Network: the NICs the channels use, each bounded by its port and by the
 * path between it and the nearest GPU (or host memory without GPUDirect);
 * the slowest node decides. */
static gboolean net_summary(cs_analytic_hw_t *hw, const cs_topo_t *t, const cs_comm_info_t *info,
                            cs_path_cache_t *cache, gboolean nvb_disable, const cs_params_t *p, GError **err)
{
    hw->inter_xport = info->inter_transport;
    hw->nics = MAX(1, info->nics_used);
    gboolean socket = info->inter_transport == CS_XPORT_NET_SOCKET;
    double port = info->nic_bw * (socket ? par(p, CS_P_EFF_SOCKET) : par(p, CS_P_EFF_NET));
    gboolean staged = socket || !info->gdr;

    int maxnics = MAX(1, t->ndevs);
    g_autofree int *nic_devs = g_new0(int, maxnics);
    g_autofree double *nic_rate = g_new0(double, maxnics);

    double node_min = INFINITY;
    int first_nic[2] = { -1, -1 }, last_nic = -1;
    for (int node = 0; node < t->nnodes; node++) {
        int nn = cs_topo_node_nics(t, node, nic_devs, maxnics);
        if (nn == 0) {
            if (socket)
                continue;   /* sockets may ride an interface the topology leaves out */
            g_set_error(err, CS_ERROR, CS_ERROR_TOPOLOGY, "node %d has no NIC for the network transport", node);
            return FALSE;
        }
        if (node < 2)
            first_nic[node] = nic_devs[0];
        if (node == t->nnodes - 1)
            last_nic = nic_devs[0];
        int r0 = t->node_first_rank[node], r1 = t->node_first_rank[node + 1];
        for (int k = 0; k < nn; k++) {
            double best = 0;
            for (int r = r0; r < r1; r++) {
                double bw;
                if (staged) {
                    int gdev = t->rank_dev[r];
                    int cpu = cs_topo_node_cpu_of(t, gdev);
                    cs_path_t up, down;
                    if (cpu < 0 || !cs_path_intra(t, gdev, cpu, nvb_disable, &up) ||
                        !cs_path_intra(t, cpu, nic_devs[k], nvb_disable, &down))
                        continue;
                    /* eff.net.host_staged is the cost of SM loads from
                     * host memory across PCIe; a GPU on C2C reaches it
                     * coherently at the path's own rate */
                    bw = MIN(path_dma_bw(t, p, &up), path_dma_bw(t, p, &down)) *
                         (cs_path_gpu_c2c(t, gdev) ? 1.0 : par(p, CS_P_EFF_HOST_STAGED));
                } else {
                    const cs_path_t *gp = cs_path_cache_nic(cache, r, k);
                    if (gp == NULL || gp->type == CS_PATH_DIS)
                        continue;
                    bw = path_dma_bw(t, p, gp);
                }
                best = MAX(best, bw);
            }
            nic_rate[k] = MIN(port, best);
        }
        qsort(nic_rate, nn, sizeof(double), cmp_double_desc);
        double sum = 0;
        int use = MIN(nn, hw->nics);
        for (int k = 0; k < use; k++)
            sum += nic_rate[k];
        node_min = MIN(node_min, sum / hw->nics);
    }
    if (!isfinite(node_min))
        node_min = port;   /* no NIC in the topology (sockets): the interface speed */
    if (socket) {
        /* The node's proxies copy everything through TCP: at most ppn
         * proxies' worth, spread over the interfaces used. */
        double proxies = par(p, CS_P_BW_SOCKET_PROXY) * 1e9 * MAX(1, info->ppn);
        node_min = MIN(node_min, proxies / hw->nics);
    }
    hw->nic_bw = node_min;
    hw->nic_port_bw = port;
    if (!(hw->nic_bw > 0)) {
        g_set_error(err, CS_ERROR, CS_ERROR_TOPOLOGY,
                    "no GPU reaches a NIC: the network transport has no bandwidth");
        return FALSE;
    }

    hw->net_lat_near = net_path_lat(t, first_nic[0], first_nic[1]);
    hw->net_lat_far = net_path_lat(t, first_nic[0], last_nic);
    hw->net_lat_far = MAX(hw->net_lat_far, hw->net_lat_near);
    return TRUE;
}

/* NVLS heads (cs_program_nvls_heads, as the rank programs): NVLS and
 * NVLSTree all-reduce split each loop among them (device/all_reduce.h:
 * loopCount = nHeads x chunkCount), and across nodes only they meet the
 * network, head h of every node in its own tree over the NIC of the NVLS
 * channel it heads (connect.cc connectNvls, search.cc getNvlsNetDev):
 * each head's NIC carries 1/heads of its node's tree bytes, more where
 * heads share a NIC (node 0's heads counted). */
static void nvls_heads(cs_analytic_hw_t *h, const cs_topo_t *t, const cs_comm_info_t *info, const cs_comm_t *comm)
{
    h->nvls_heads = h->mnnvl ? h->nranks : cs_program_nvls_heads(info);
    h->nvls_nic_share = 1.0 / h->nvls_heads;
    if (comm == NULL || h->nnodes < 2 || h->mnnvl)
        return;
    int nics = cs_topo_node_nics(t, t->devs[t->rank_dev[0]].node, NULL, 0), most = 0, heads = 0;
    g_autofree int *per_nic = g_new0(int, MAX(1, nics));
    for (int r = t->node_first_rank[0]; r < t->node_first_rank[1]; r++) {
        int k = cs_comm_chan_nic(comm, CS_ALGO_NVLS_TREE, r, 0);
        if (k < 0 || k >= nics)
            continue;
        heads++;
        per_nic[k]++;
        most = MAX(most, per_nic[k]);
    }
    if (heads > 0)
        h->nvls_nic_share = (double)most / MAX(heads, h->nvls_heads);
}

gboolean cs_analytic_hw_init(cs_analytic_hw_t *hw, const cs_topo_t *t, const cs_comm_info_t *info,
                             const cs_comm_t *comm, const cs_params_t *p, int root, GError **err)
{
    cs_analytic_hw_t h;
    memset(&h, 0, sizeof h);
    h.nranks = info->nranks;
    h.nnodes = info->nnodes;
    h.ppn = info->ppn;
    h.gpus_per_thread = info->gpus_per_thread;
    h.nccl_version = cs_comm_nccl_version_at_most(info);
    h.tree_seq = cs_tree_phases_in_sequence(info->nccl_version);
    h.p2p_extra_calls[0] = cs_comm_p2p_extra_calls(info, CS_COLL_SENDRECV, info->nranks);
    h.p2p_extra_calls[1] = cs_comm_p2p_extra_calls(info, CS_COLL_ALLTOALL, info->nranks);
    h.arch = arch_group(info->cc);
    h.intra_xport = info->intra_transport;
    h.ring_net = cs_engine_ring_net(info);
    h.ring_recv_copies = cs_engine_ring_recv_copies(info);

    gboolean nvb_disable = comm != NULL ? cs_comm_settings(comm)->nvb_disable > 0 : FALSE;
    g_autoptr(cs_path_cache_t) cache = cs_path_cache_new(t, nvb_disable);
    if (!intra_ring(&h, t, info, cache, nvb_disable, comm, p, root, err))
        return FALSE;
    if (h.nnodes > 1 && !h.mnnvl && !net_summary(&h, t, info, cache, nvb_disable, p, err))
        return FALSE;

    /* NVLS and memory: the slowest GPU. */
    double nvl = INFINITY, mem = INFINITY;
    for (int r = 0; r < t->ngpus; r++) {
        int d = t->rank_dev[r];
        nvl = MIN(nvl, MIN(gpu_nvlink_bw(t, d, 0), gpu_nvlink_bw(t, d, 1)));
        const cs_gpu_model_t *g = t->devs[d].gpu;
        if (g != NULL && g->mem_bw > 0)
            mem = MIN(mem, g->mem_bw);
    }
    double nvls_eff = h.arch >= 3 ? par(p, CS_P_EFF_NVLS_SM100) : par(p, CS_P_EFF_NVLS_SM90);
    h.nvls_bw = (h.arch >= 2 && isfinite(nvl)) ? nvl * nvls_eff : 0;
    h.mem_bw = (isfinite(mem) ? mem : 1e12) * par(p, CS_P_EFF_MEM);

    nvls_heads(&h, t, info, comm);

    /* CollNet: the direct heads, and the NICs the chain's channels take
     * on node 0 (each channel's head meets SHARP through its NIC) */
    h.collnet_heads = info->collnet_heads;
    h.collnet_nvl_bw = isfinite(nvl) ? nvl * cs_params_nvlink_eff(p, info->cc) : 0;
    if (comm != NULL && info->collnet_supported && h.nnodes > 1) {
        guint64 seen = 0;
        for (int ch = 0; ch < MAX(1, info->comm_nch); ch++)
            for (int r = 0; r < h.ppn; r++) {
                int k = cs_comm_chan_nic(comm, CS_ALGO_COLLNET_CHAIN, r, ch);
                if (k >= 0 && k < 64)
                    seen |= G_GUINT64_CONSTANT(1) << k;
            }
        h.collnet_chain_nics = __builtin_popcountll(seen);
        /* each channel's chain on node 0 (its head last): a GPU in the
         * middle sends up and down, the ends one way */
        int m = h.ppn, nch = MAX(1, info->comm_nch);
        g_autofree int *order = g_new(int, info->nranks);
        g_autofree double *load = g_new0(double, MAX(1, m));
        for (int ch = 0; ch < nch; ch++) {
            cs_comm_chan_order(comm, CS_ALGO_COLLNET_CHAIN, ch, order);
            for (int i = 0; i < m; i++)
                if (order[i] >= 0 && order[i] < m)
                    load[order[i]] += (m > 1 && i > 0 && i < m - 1 ? 2.0 : m > 1 ? 1.0 : 0.0) / nch;
        }
        for (int i = 0; i < m; i++)
            h.collnet_chain_nvl = MAX(h.collnet_chain_nvl, load[i]);
    }

    cs_analytic_dtree_shape(h.mnnvl ? 1 : h.nnodes, &h.tree_degsum, &h.tree_depth);
    *hw = h;
    return TRUE;
}

/* ---- point-to-point summary --------------------------------------------- */

/* The intra-node peer edges of the pattern (SendRecv: each rank to the
 * next on its node; AlltoAll: every ordered pair on a node), all busy at
 * once: each edge's rate when the links they share split evenly
 * (edges_bw, NVSwitch ports shared by a GPU's edges). The network: a
 * GPU's peers on other nodes go through its own NICs (topo.cc
 * ncclTopoGetLocalNet, p2p_net_per_gpu of them), shared by the node's
 * GPUs when it has fewer NICs than GPUs (AlltoAll: every GPU sends). */
gboolean cs_analytic_p2p_init(cs_analytic_hw_t *hw, const cs_topo_t *t, const cs_comm_info_t *info,
                              const cs_comm_t *comm, const cs_params_t *p, cs_coll_t coll, GError **err)
{
    int n = info->nranks;
    hw->p2p = TRUE;
    hw->p2p_info = info;
    hw->p2p_edge_bw = 0;
    hw->p2p_edge_lat = 0;
    hw->p2p_xport = CS_XPORT_P2P_NVL;
    hw->p2p_nic_bw = 0;
    hw->p2p_shm = FALSE;
    hw->p2p_shm_ce_recv = TRUE;
    if (n < 2)
        return TRUE;
    gboolean nvb_disable = comm != NULL ? cs_comm_settings(comm)->nvb_disable > 0 : FALSE;
    g_autoptr(cs_path_cache_t) cache = cs_path_cache_new(t, nvb_disable);
    GArray *edges = g_array_new(FALSE, TRUE, sizeof(ring_edge_t));
    g_autoptr(GPtrArray) owned = g_ptr_array_new_with_free_func(g_free);   /* edges' SHM routes */
    gboolean ok = TRUE, any_net = FALSE;
    for (int node = 0; node < t->nnodes && ok; node++) {
        int r0 = t->node_first_rank[node], r1 = t->node_first_rank[node + 1];
        for (int a = r0; a < r1 && ok; a++)
            for (int b = r0; b < r1 && ok; b++) {
                if (a == b || (coll == CS_COLL_SENDRECV && b != (a + 1) % n))
                    continue;
                ring_edge_t e;
                memset(&e, 0, sizeof e);
                e.a = a;
                e.b = b;
                e.xport = pair_transport(comm, info, a, b, TRUE);
                if (e.xport == CS_XPORT_NET_IB || e.xport == CS_XPORT_NET_SOCKET) {
                    any_net = TRUE;   /* a loopback through a NIC: priced with the network */
                    continue;
                }
                ok = edge_path(t, cache, nvb_disable, owned, &e, err);
                if (ok) {
                    if (edges->len == 0 || k_max_xport(e.xport) > k_max_xport(hw->p2p_xport))
                        hw->p2p_xport = e.xport;
                    if (e.xport == CS_XPORT_SHM) {
                        hw->p2p_shm = TRUE;
                        hw->p2p_shm_ce_recv &= e.shm.ce_recv;
                    }
                    g_array_append_val(edges, e);
                }
            }
    }
    if (ok && edges->len > 0) {
        edge_count_t cnt;
        edge_count_init(&cnt, t, n);
        hw->p2p_edge_bw = edges_bw(t, p, -1, (const ring_edge_t *)edges->data, (int)edges->len, &cnt, 1.0,
                                   cs_engine_nvswitch_share(p, coll, info->ppn), TRUE,
                                   &hw->p2p_edge_lat);
        edge_count_clear(&cnt);
    }
    g_array_free(edges, TRUE);
    if (!ok)
        return FALSE;
    if ((hw->nnodes > 1 && !hw->mnnvl) || any_net) {
        double per_gpu = MAX(1, info->p2p_net_per_gpu);
        if (coll == CS_COLL_ALLTOALL && info->nics_node > 0 && info->ppn > 0)
            per_gpu = MIN(per_gpu, (double)info->nics_node / info->ppn);
        hw->p2p_nic_bw = hw->nic_bw * per_gpu;
    }
    return TRUE;
}

/* ---- per-call formulas -------------------------------------------------- */

static double proto_eff(const cs_params_t *p, cs_proto_t pr)
{
    return pr == CS_PROTO_LL ? par(p, CS_P_PROTO_EFF_LL)
         : pr == CS_PROTO_LL128 ? par(p, CS_P_PROTO_EFF_LL128) : par(p, CS_P_PROTO_EFF_SIMPLE);
}

static double proto_sync(const cs_params_t *p, cs_proto_t pr)
{
    return (pr == CS_PROTO_LL ? par(p, CS_P_LAT_SYNC_LL)
          : pr == CS_PROTO_LL128 ? par(p, CS_P_LAT_SYNC_LL128) : par(p, CS_P_LAT_SYNC_SIMPLE)) * US;
}

/* Payload one channel (one CTA on one SM) moves with a protocol, at the
 * call's threads (cs_engine_threads_share). */
static double channel_bw(const cs_params_t *p, int arch, cs_proto_t pr, int nthreads)
{
    static const cs_param_id_t ids[CS_PROTO_COUNT][4] = {
        { CS_P_CH_LL_SM70, CS_P_CH_LL_SM80, CS_P_CH_LL_SM90, CS_P_CH_LL_SM100 },
        { CS_P_CH_LL128_SM70, CS_P_CH_LL128_SM80, CS_P_CH_LL128_SM90, CS_P_CH_LL128_SM100 },
        { CS_P_CH_SIMPLE_SM70, CS_P_CH_SIMPLE_SM80, CS_P_CH_SIMPLE_SM90, CS_P_CH_SIMPLE_SM100 },
    };
    return par(p, ids[pr][arch]) * GBPS * cs_engine_threads_share(pr, nthreads);
}

/* Fixed cost of one step between GPUs of a node (the protocol's per-step
 * synchronisation tau is added by each algorithm); Simple over NVLink
 * pays its system-scope fence on top. */
static double intra_hop(const cs_analytic_hw_t *hw, const cs_params_t *p, cs_proto_t pr)
{
    cs_param_id_t id = hw->intra_xport == CS_XPORT_P2P_NVL ? CS_P_LAT_HOP_NVLINK
                     : hw->intra_xport == CS_XPORT_P2P_PCI ? CS_P_LAT_HOP_PCIE
                     : hw->intra_xport == CS_XPORT_SHM ? CS_P_LAT_HOP_SHM
                     : hw->intra_xport == CS_XPORT_NET_SOCKET ? CS_P_LAT_HOP_SOCKET : CS_P_LAT_HOP_NET;
    double h = hw->intra_lat + par(p, id) * US;
    if (hw->intra_xport == CS_XPORT_SHM) {
        cs_shm_mode_t m = hw->shm_mode;   /* the proxy's copy is Simple's only */
        if (pr != CS_PROTO_SIMPLE)
            m.ce_send = m.ce_recv = FALSE;
        h = hw->intra_lat + cs_shm_step_lat_us(p, &m) * US;
    }
    if (pr == CS_PROTO_SIMPLE && hw->intra_xport == CS_XPORT_P2P_NVL)
        h += par(p, CS_P_LAT_SYNC_SIMPLE_NVLINK) * US;
    return h;
}

static double net_hop(const cs_analytic_hw_t *hw, const cs_params_t *p, cs_proto_t pr, gboolean far)
{
    double fixed = hw->inter_xport == CS_XPORT_NET_SOCKET ? par(p, CS_P_LAT_HOP_SOCKET) : par(p, CS_P_LAT_HOP_NET);
    double h = (far ? hw->net_lat_far : hw->net_lat_near) + fixed * US;
    if (pr == CS_PROTO_SIMPLE)
        h += par(p, CS_P_LAT_NET_SIMPLE) * US;
    return h;
}

/* One node's network payload rate with nch channels: each channel uses one
 * NIC, so nch channels over 'nics' NICs load the busiest NIC with
 * ceil(nch/nics) of them. The fabric beyond the NICs is the routed bound's
 * business (cs_fabric_load.h). */
static double net_bw(const cs_analytic_hw_t *hw, int nch)
{
    int per_nic = (nch + hw->nics - 1) / hw->nics;
    double nics_eff = (double)nch / per_nic;
    return hw->nic_bw * nics_eff;
}

typedef struct {
    double S;          /* NCCL's nBytes */
    int n, N, ppn;     /* ranks, nodes (1 inside an NVLink domain), ranks per node */
    int nch;
    cs_proto_t pr;
    double peff;       /* protocol wire efficiency */
    double tau;        /* protocol's synchronisation per step */
    double b_sm;       /* all channels' SM ceiling */
    double chunk;      /* NCCL's chunk: most bytes a lane moves per step */
    double launch;
    const cs_fabric_bound_t *fab;   /* the routed network bound, or NULL */
    cs_analytic_limit_t lim;        /* the bandwidth term so far */
} call_ctx_t;

/* A candidate for the bandwidth term: 'spb' seconds per byte of S on one
 * resource. The largest wins; the routed fabric bound is offered first,
 * so that it keeps a tie with the NIC term it reproduces. */
static void limit(call_ctx_t *c, cs_limit_kind_t kind, double spb)
{
    if (spb > c->lim.spb * (1 + 1e-9) || c->lim.kind == CS_LIMIT_NONE) {
        c->lim.kind = kind;
        c->lim.spb = spb;
    }
}

/* The network: the routed bound (every link the channels' network edges
 * cross, cs_fabric_load.h; limit_fabric: 0 where none is routed), then
 * the NIC rate of net_bw (which also holds what the route does not: host
 * staging, socket proxies). 'vol' = bytes per byte of S a rank sends over
 * its network edge. Each returns its bound (seconds per byte of S), the
 * larger of the two for limit_net. */
static double limit_fabric(call_ctx_t *c)
{
    if (c->fab == NULL || !(c->fab->spb > 0))
        return 0;
    limit(c, CS_LIMIT_FABRIC, c->fab->spb / c->peff);
    return c->fab->spb / c->peff;
}

static double limit_net(call_ctx_t *c, const cs_analytic_hw_t *hw, double vol)
{
    double fab = limit_fabric(c), nic = vol / (net_bw(hw, c->nch) * c->peff);
    limit(c, CS_LIMIT_NIC, nic);
    return MAX(fab, nic);
}

static double nsteps(double D, double chunk)
{
    return MAX(1, ceil(D / chunk));
}

/* Time for one lane (a channel) to move D bytes in steps of C through a
 * d-stage pipeline at rate b when every step also waits 'tau' for its
 * synchronisation. NCCL's loop moves whole steps and then what is left
 * (all_reduce.h runNvls, runNvlsTree: a step of chunkSize per head, the
 * last one partial), so the last stage starts d-1 whole steps after the
 * first: (k + d - 1) steps where D is k whole steps, and one byte more
 * costs a byte more, not a pipeline of k + 1 shorter steps (which priced
 * 8 MiB on 2 DGX H100 at 212 us and 8 MiB + 4 KiB at 144). */
static double lane_time(double D, double C, double d, double b, double tau)
{
    double k = nsteps(D, C), first = MIN(D, C);
    return D / b + k * tau + (d - 1) * (first / b + tau);
}

/* Pipeline fill of a chain or tree with Simple: each stage forwards a
 * whole chunk (a lane moves at most one chunk per step), so the last
 * stage starts once the first chunk has passed every stage before it,
 * each at its own lane's rate. 'n_in' stages cross a node's links
 * (NVLink, PCIe, SHM) at 'spb_in' seconds per byte of S, 'n_net' the
 * network at 'spb_net' (each no less than what the GPU's SMs and memory
 * allow); one chunk at the bottleneck's rate is the volume term's
 * already. With one kind of stage this is d - 1 chunks at the call's
 * rate. A chain or tree that crosses a slow network must not pay its
 * NVLink or SHM hops at the network's rate (2 x 8 GPUs over 1 GbE
 * sockets: a 2 MiB Tree all-reduce took 162 ms, the flow engine 21). */
static double fill(const call_ctx_t *c, double n_in, double spb_in, double n_net, double spb_net)
{
    /* LL and LL128 forward every line as soon as its flag is seen, so
     * their pipelines fill at line granularity: nothing to add beyond the
     * hops' latency. */
    if (n_in + n_net <= 1 || c->pr != CS_PROTO_SIMPLE)
        return 0;
    double spb = c->lim.spb;
    double per_lane = MIN(c->chunk, c->S / c->nch);
    double stages = n_in * MIN(spb_in, spb) + n_net * MIN(spb_net, spb) - spb;
    return MAX(0, stages) * per_lane * c->nch;
}

/* Latency a ring exposes, and the bound its credits set. Each rank runs
 * its steps in order, a step's K slices one after the other (time ts
 * each), and slice k of step s needs slice k of the previous rank's step
 * s-1, one hop latency h later (links, switches, transport,
 * synchronisation). Moving on to the next rank instead of waiting for its
 * own next slice costs a path through this grid ts + h rather than K ts:
 * a hop gains g = h - (K-1) ts. The longest path follows consecutive ring
 * edges, so the latency exposed per loop is the best run of consecutive
 * hops: every hop when the node's hops gain in sum (all of the latency
 * for small steps, as LL and LL128 with K = 1 always do), else one node's
 * crossing and the intra-node hops that gain. Every loop's chunk makes the
 * journey again; the last loop splits what is left over the n ranks
 * (all_reduce.h). The credits: a sender may run C slices ahead of what its
 * receiver consumed, and the receiver consumes a slice when it has
 * forwarded it, so C slices take at least 2 ts + h on the slowest hop;
 * there a slice moves at the rate of its own NIC and channel, the fabric
 * beyond being idle while the credits wait ('burst_rate').
 * Across nodes only (t_ring): one node keeps the whole latency of every
 * hop, once per call, as the hop costs were fitted to the measured
 * single-node rings (8 A100 at 1-32 MiB run that much slower than slices
 * covering their hops would, docs/validation.md). */
static double ring_time(const call_ctx_t *c, double hops, double inter, double h_intra, double h_net,
                        double edge_rate, double burst_rate)
{
    int K = c->pr == CS_PROTO_SIMPLE ? 2 : 1;   /* collectives.h: sliceSteps 2 of chunkSteps 4 for Simple */
    int C = CS_NCCL_STEPS / K;                  /* NCCL_STEPS slots / sliceSteps */
    double D = c->S / c->nch, loop = c->n * c->chunk;
    double nloops = MAX(1, ceil(D / loop));
    double last = MIN(c->chunk, ceil((D - (nloops - 1) * loop) / c->n));
    double hi = h_intra + c->tau, hn = h_net + c->tau;
    double hmax = inter > 0 ? (hops > inter ? MAX(hi, hn) : hn) : hi;
    double t = 0, window = 0;
    for (int i = 0; i < 2; i++) {
        double ts = (i == 0 ? c->chunk : last) / K / edge_rate, mult = i == 0 ? nloops - 1 : 1;
        double tb = (i == 0 ? c->chunk : last) / K / burst_rate;
        double gi = hi - (K - 1) * ts, gn = hn - (K - 1) * ts;
        double whole = (hops - inter) * gi + inter * gn;
        double one = inter > 0 ? (c->ppn - 1) * MAX(0, gi) + MAX(0, gn) : 0;
        t += mult * (hops * K * ts + MAX(0, MAX(whole, one)));
        window += mult * hops * K * (2 * tb + hmax) / C;
    }
    return MAX(t, window);
}

/* The resources a ring or chain sending v bytes per byte of S per rank
 * loads: network (with the routed fabric where c->fab is set), NVLink,
 * the channels' SMs, GPU memory. */
static void ring_limits(call_ctx_t *c, const cs_analytic_hw_t *hw, double v, gboolean chain, gboolean reduces,
                        double *spb_in_p, double *spb_net_p)
{
    double net = c->N > 1 ? limit_net(c, hw, v) : 0, in = 0;
    if (c->ppn > 1 || hw->mnnvl) {
        in = v / (ring_edge_bw(hw, c->nch, chain, c->pr) * c->peff);
        limit(c, CS_LIMIT_INTRA, in);
    }
    double sm = v / c->b_sm, mem = v / (hw->mem_bw / (reduces ? 3.0 : 2.0));
    limit(c, CS_LIMIT_SM, sm);
    limit(c, CS_LIMIT_MEM, mem);
    *spb_in_p = MAX(in, MAX(sm, mem));
    *spb_net_p = MAX(net, MAX(sm, mem));
}

/* Ring: every rank sends from the first step and the links stay busy; the
 * time is the volume at the busiest resource's rate plus the latency the
 * slices do not cover.
 * A chain (Broadcast, Reduce: the ring from the root, open before it)
 * pays each hop's latency once per call, but not the fill of its n-1
 * stage pipeline: no edge leads back to its first rank, so no rank waits
 * for the ranks after it; each rank's kernel ends once it has forwarded
 * its part (device/broadcast.h, reduce.h runRing: send, recvCopySend or
 * recv per chunk, nothing after), and the next call's data follows the
 * previous call's down the chain. Calls timed back to back, as nccl-tests
 * times them (its timed loop launches every iteration before it waits),
 * thus stream their chunks through the chain and pay its n-1 chunk fill
 * once per loop, not per call. NCCL's own model does not charge the fill
 * either (tuning.cc: Broadcast and Reduce rings add hop latencies only).
 * Measured: the single-node NVSwitch broadcast_perf/reduce_perf runs
 * (A100, H200, B200 -g 2/4/8) take the hops' latency plus the volume at
 * the link rate from 1 MiB on, where a per-call fill of 512 KiB Simple
 * chunks would take several times longer (docs/model-analytic.md). On
 * one node only: see below. */
static double t_ring(const cs_analytic_hw_t *hw, const cs_params_t *p, cs_coll_t coll, call_ctx_t *c)
{
    int n = c->n, N = c->N;
    gboolean chain = coll == CS_COLL_BROADCAST || coll == CS_COLL_REDUCE;
    gboolean reduces = coll == CS_COLL_ALLREDUCE || coll == CS_COLL_REDUCESCATTER || coll == CS_COLL_REDUCE;
    double v, hops, inter;   /* v: bytes per byte of S each rank sends */
    if (chain) {
        v = 1;
        hops = n - 1;
        inter = N - 1;
    } else {
        /* A chunk's n-1 hops per phase cross every node boundary of the
         * ring when nodes hold several ranks, all but one when they hold
         * one. */
        double phases = coll == CS_COLL_ALLREDUCE ? 2 : 1;
        double per_phase = N > 1 ? MIN(n - 1, c->ppn > 1 ? N : N - 1) : 0;
        v = phases * (n - 1) / (double)n;
        hops = phases * (n - 1);
        inter = phases * per_phase;
    }
    double spb_in, spb_net;
    ring_limits(c, hw, v, chain, reduces, &spb_in, &spb_net);
    double b = v / c->lim.spb;   /* bytes each rank sends per second, all channels */
    double hi = intra_hop(hw, p, c->pr), hn = net_hop(hw, p, c->pr, FALSE);
    if (c->fab != NULL && c->fab->wire_lat > 0)   /* the ring's own routes: some cross spines */
        hn += c->fab->wire_lat - hw->net_lat_near;
    if (chain) {
        double t = c->launch + (hops - inter) * hi + inter * hn + hops * c->tau + c->S * c->lim.spb;
        /* Across nodes the fill stays priced: no healthy multi-node
         * broadcast_perf/reduce_perf run in ../shared/data/real shows
         * whether the proxies' network steps stream it the same way, and
         * the flow engine, which simulates one call alone, pays it
         * (docs/model-analytic.md). */
        return N > 1 ? t + fill(c, hops - inter, spb_in, inter, spb_net) : t;
    }
    if (N == 1)   /* one node: every hop's latency once, as fitted (ring_time) */
        return c->launch + hops * (hi + c->tau) + c->S * c->lim.spb;
    /* the rate without the fabric beyond the NICs */
    call_ctx_t local = *c;
    local.fab = NULL;
    local.lim.kind = CS_LIMIT_NONE;
    local.lim.spb = 0;
    ring_limits(&local, hw, v, chain, reduces, &spb_in, &spb_net);
    return c->launch + ring_time(c, hops, inter, hi, hn, b / c->nch, v / local.lim.spb / c->nch);
}

/* The network bytes per byte of S of the busiest node's NIC when the tree
 * all-reduce runs its phases one after the other (cs_tree_phases_in_sequence:
 * NCCL <= 2.7): the reduce moves everything up before the broadcast moves
 * it down, so each phase is bound by the node that receives (up) or sends
 * (down) the most, its children's share: 2 in a binary tree where one
 * tree carries it all. Channel c of nch takes tree cs_program_tree_of
 * (the first half tree 0: init.cc setupChannel v2.4.7, c < DIVUP(nch, 2)),
 * each channel S/nch. Nothing overlaps a node's phases: 2 x the phase. */
double cs_analytic_tree_seq_load(int nnodes, int nch)
{
    if (nnodes < 2)
        return 0;
    nch = MAX(1, nch);
    double f[2] = { 0, 0 };
    for (int ch = 0; ch < nch; ch++)
        f[cs_program_tree_of(nch, ch)] += 1.0 / nch;
    g_autofree double *kids = g_new0(double, nnodes);
    g_autofree double *up = g_new0(double, nnodes);
    for (int tree = 0; tree < 2; tree++)
        for (int r = 0; r < nnodes && f[tree] > 0; r++) {
            int u = cs_dtree_parent(nnodes, tree, r);
            if (u < 0)
                continue;
            kids[u] += f[tree];
            up[r] += f[tree];
        }
    double phase = 0;
    for (int r = 0; r < nnodes; r++)
        phase = MAX(phase, MAX(kids[r], up[r]));
    return 2 * phase;
}

/* Tree AllReduce: a chain through each node's GPUs and NCCL's double
 * binary tree across nodes, reduce going up while broadcast comes down.
 * Each tree carries half the data; a node sends S/2 on each edge it has in
 * either tree, each direction. A measured NCCL <= 2.7 runs the phases one
 * after the other (cs_analytic_tree_seq_load). */
static double t_tree(const cs_analytic_hw_t *hw, const cs_params_t *p, call_ctx_t *c)
{
    int chain_hops = c->ppn - 1;
    int depth = c->N > 1 ? hw->tree_depth : 0;
    double hops = 2.0 * (chain_hops + depth);
    double lat = 2 * (chain_hops * intra_hop(hw, p, c->pr) + depth * net_hop(hw, p, c->pr, TRUE)) + hops * c->tau;
    /* Seconds per byte of S on the busiest resource; the network's and
     * the node's for the fill. */
    double spb_net = 0, spb_in = 0;
    if (c->N > 1)
        spb_net = limit_net(c, hw, c->pr == CS_PROTO_SIMPLE && hw->tree_seq
                                       ? cs_analytic_tree_seq_load(c->N, c->nch)
                                       : hw->tree_degsum / 2.0);
    if (chain_hops > 0) {
        spb_in = MIN(chain_hops, 2) / (ring_edge_bw(hw, c->nch, FALSE, c->pr) * c->peff);
        limit(c, CS_LIMIT_INTRA, spb_in);
    }
    if (chain_hops > 0 && hw->intra_xport == CS_XPORT_SHM) {
        /* Over SHM every GPU of a node's chain copies both ways (the head
         * too: up from its child, down to it), so each channel's CTA
         * loads its SHM bytes, S from each chain neighbour, behind its
         * own posted writes: chan.shm.<arch> for all of them
         * (cs_shm_chan_bw). The ring's rate holds it only where the ring
         * copies both ways, not across nodes, where a node's ring enters
         * and leaves at GPUs that copy one way. */
        gboolean ce = c->pr == CS_PROTO_SIMPLE && hw->shm_mode.ce_recv;
        double cap = cs_shm_chan_bw(p, hw->arch, ce, TRUE);
        if (isfinite(cap)) {
            double shm = MIN(chain_hops, 2) / (c->nch * cap * c->peff);
            limit(c, CS_LIMIT_INTRA, shm);
            spb_in = MAX(spb_in, shm);
        }
    }
    double dev = MAX(2 / c->b_sm, 6 / hw->mem_bw);
    limit(c, CS_LIMIT_SM, 2 / c->b_sm);
    limit(c, CS_LIMIT_MEM, 6 / hw->mem_bw);
    double spb = c->lim.spb;
    return c->launch + lat + c->S * spb +
           fill(c, 2.0 * chain_hops, MAX(spb_in, dev), 2.0 * depth, MAX(spb_net, dev));
}

/* NVLS inside a node: each of the H NVLS heads (hw->nvls_heads: every GPU
 * on DGX machines, 32 of an NVL72 rack's 72) reads its slice reduced by
 * the NVSwitch (multimem.ld_reduce) and multicasts the result
 * (multimem.st), so per head and direction S(1+1/H) cross its NVLinks for
 * AllReduce (the other GPUs move S). A channel moves one chunk per head
 * (H chunks) per step, and a step cannot start before every peer has
 * signalled the previous one, so each step pays the Simple
 * synchronisation; steps flow through pipe.nvls.stages stages.
 * Across nodes (NVLSTree) each slice also goes through its head's node
 * tree: only the heads meet the network, each over its own NIC with 1/H
 * of the tree's bytes (nvls_heads), whatever the channel count. */
static double t_nvls(const cs_analytic_hw_t *hw, const cs_params_t *p, cs_coll_t coll, cs_algo_t a,
                     call_ctx_t *c)
{
    int m = coll == CS_COLL_ALLREDUCE ? MAX(1, hw->nvls_heads) : c->ppn;
    double v = coll == CS_COLL_ALLREDUCE ? 1 + 1.0 / m : (m - 1) / (double)m;
    double lat = par(p, CS_P_LAT_NVLS) * US;
    double stages = par(p, CS_P_PIPE_NVLS_STAGES);
    if (a == CS_ALGO_NVLS_TREE && c->N > 1) {
        limit_fabric(c);
        limit(c, CS_LIMIT_NIC, hw->tree_degsum / 2.0 * hw->nvls_nic_share / (hw->nic_bw * c->peff));
        lat += 2 * hw->tree_depth * net_hop(hw, p, c->pr, TRUE);
        stages += 2 * hw->tree_depth;   /* up and down the node tree */
    }
    limit(c, CS_LIMIT_NVLS, v / (hw->nvls_bw * (coll == CS_COLL_ALLREDUCE ? cs_engine_nvls_ar_share(m, c->ppn) : 1)));
    limit(c, CS_LIMIT_SM, v / c->b_sm);
    double D = c->S / c->nch;
    if (coll == CS_COLL_ALLREDUCE) {
        /* a channel's steps are no shorter than their copy warps'
         * rounds, one head's part after the other
         * (cs_engine_nvls_channel_floor) */
        double floor_s = cs_engine_nvls_channel_floor(p, hw->arch, c->n, a == CS_ALGO_NVLS_TREE, m, c->chunk, D);
        if (floor_s > 0)
            limit(c, CS_LIMIT_NVLS_COPY, floor_s / c->S);
    }
    return c->launch + lat + lane_time(D, m * c->chunk, MAX(1, stages), 1 / c->lim.spb / c->nch, c->tau);
}

/* CollNet all-reduce (SHARP; docs/model-analytic.md): the heads'
 * slices go up the switches' aggregation tree through their NICs and the
 * result comes back, so a node's NICs carry S once each way in all (each
 * fabric link of the tree once each way: the routed bound, whose edges
 * are the program's); inside the node the data reaches the heads and
 * leaves them over NVLink.
 *  - CollNetChain: per channel a chain through the node's GPUs to the
 *    channel's head, reduce up and broadcast down at once on split
 *    threads (as Tree): a GPU in the middle of a chain sends its channel's
 *    data up and down over NVLink, at an end one way (the channels' chains
 *    differ: the busiest GPU's average, collnet_chain_nvl), its CTA moves
 *    2 S; the channels spread over the chain's NICs.
 *  - CollNetDirect: every GPU scatters slice h to head h and gathers the
 *    result from it; a head sends (H - 1 + ppn - 1) / H of S over NVLink
 *    (scatter to the other heads, copies to the other GPUs), its CTA
 *    (H + ppn) / H; each head's NIC carries S / H each way.
 * Latency: NCCL's own CollNet network round (lat.collnet.*, tuning.cc),
 * the tree's wires and switches up and down, the intra-node hops and the
 * pipeline's fill. */
static double t_collnet(const cs_analytic_hw_t *hw, const cs_params_t *p, cs_algo_t a, call_ctx_t *c)
{
    int m = c->ppn;
    gboolean chain = a == CS_ALGO_COLLNET_CHAIN;
    int H = MAX(1, chain ? hw->collnet_chain_nics : hw->collnet_heads);
    double nic_share, nvl, sm, mem, intra_hops;
    if (chain) {
        int per_nic = (c->nch + H - 1) / H;
        nic_share = (double)per_nic / c->nch;
        nvl = hw->collnet_chain_nvl > 0 ? hw->collnet_chain_nvl : MIN(m - 1, 2);
        sm = 2;
        mem = m > 1 ? 7 : 3;
        intra_hops = 2.0 * (m - 1);
    } else {
        nic_share = 1.0 / H;
        nvl = m > 1 ? MAX(1.0, (H + m - 2) / (double)H) : 0;
        sm = (H + m) / (double)H;
        mem = MAX(m > 1 ? 2.0 : 0.0, (2.0 * H + 3 * m - 2) / H);
        intra_hops = m > 1 ? 2 : 0;
    }
    double fab = limit_fabric(c), nic = nic_share / (hw->nic_bw * c->peff);
    limit(c, CS_LIMIT_NIC, nic);
    /* a GPU's own NVLink ports carry its part (ring_edge_bw where there
     * is no NVLink: the chain's PCIe edges) */
    double port = hw->collnet_nvl_bw > 0 ? hw->collnet_nvl_bw : ring_edge_bw(hw, c->nch, FALSE, c->pr);
    double in = nvl > 0 ? nvl / (port * c->peff) : 0;
    if (nvl > 0)
        limit(c, CS_LIMIT_INTRA, in);
    double dev = MAX(sm / c->b_sm, mem / hw->mem_bw);
    limit(c, CS_LIMIT_SM, sm / c->b_sm);
    limit(c, CS_LIMIT_MEM, mem / hw->mem_bw);
    double hn = net_hop(hw, p, c->pr, FALSE);
    if (c->fab != NULL && c->fab->wire_lat > 0)   /* the tree's own wires and switches */
        hn += c->fab->wire_lat - hw->net_lat_near;
    double lat = par(p, chain ? CS_P_LAT_COLLNET_CHAIN : CS_P_LAT_COLLNET_DIRECT) * US +
                 intra_hops * (intra_hop(hw, p, c->pr) + c->tau) + 2 * (hn + c->tau);
    double spb = c->lim.spb;
    /* the heads' two network stages: up the switches' tree and back */
    return c->launch + lat + c->S * spb + fill(c, intra_hops, MAX(in, dev), 2, MAX(MAX(fab, nic), dev));
}

/* PAT (AllGather/ReduceScatter, one rank per node): log2(n) aggregated
 * network steps, ring volume (and the ring's routes). */
static double t_pat(const cs_analytic_hw_t *hw, const cs_params_t *p, call_ctx_t *c)
{
    double hops = ceil(log2((double)c->n));
    double v = (c->n - 1) / (double)c->n;
    limit_net(c, hw, v);
    if (c->ppn > 1 || hw->mnnvl)
        limit(c, CS_LIMIT_INTRA, v / (ring_edge_bw(hw, c->nch, FALSE, c->pr) * c->peff));
    limit(c, CS_LIMIT_SM, v / c->b_sm);
    return c->launch + hops * (net_hop(hw, p, c->pr, TRUE) + c->tau) + c->S * c->lim.spb;
}

/* SendRecv and AlltoAll (cs_p2p.h): every rank sends B bytes to each of
 * its peers at once, each send split over the decision's channels. The
 * bandwidth term is the busiest of: an intra-node peer edge (B at the
 * edge's rate, every edge of the pattern busy), a GPU's NICs (B per peer
 * on another node), the busiest channel's CTA (its parts, B/nch each,
 * sent and received), GPU memory (read and write every byte). The
 * latency: the launch, then per batch a channel runs one after the other
 * (up to 8 sends and receives at once, enqueue.cc) a hop, the
 * protocol's synchronisation and, with Simple, the pipeline's fill (one
 * step sent before its receive can start). */
static double t_p2p(const cs_analytic_hw_t *hw, const cs_params_t *p, cs_coll_t coll, const cs_comm_info_t *info,
                    call_ctx_t *c)
{
    int n = c->n, m = MAX(1, hw->ppn);
    gboolean a2a = coll == CS_COLL_ALLTOALL;
    double B = (double)cs_p2p_bytes_per_peer(coll, (guint64)c->S, n);
    g_autoptr(cs_p2p_plan_t) plan = cs_p2p_plan_new(info, coll, (guint64)B);
    int nnode = hw->mnnvl ? 1 : hw->nnodes;
    /* peers across nodes: AlltoAll n - m per rank; SendRecv one for the
     * last rank of each node */
    double remote = nnode > 1 ? (a2a ? (double)(n - m) : 1.0) : 0;
    if (hw->p2p_edge_bw > 0)
        limit(c, CS_LIMIT_INTRA, B / c->S / (hw->p2p_edge_bw * c->peff));
    if (remote > 0 && hw->p2p_nic_bw > 0) {
        limit(c, CS_LIMIT_NIC, remote * B / c->S / (hw->p2p_nic_bw * c->peff));
        /* a send's part on one channel moves what NCCL expects of a
         * channel's network sends, NCCL_P2P_PER_CHANNEL_NET_BW (paths.cc:
         * 14 GB/s; the reason it gives a NIC several channels) */
        limit(c, CS_LIMIT_NIC, B / c->S / (MAX(1, plan->op_net.nch) * info->p2p_net_ch_bw * GBPS));
    }
    /* a channel's warps are split between its sends and its receives
     * (device/sendrecv.h: separate warp groups for runSend and runRecv),
     * and each side copies every byte once (into the peer's buffer, out
     * of its own): the CTA moves a peer's part twice, and the rank's own
     * part (AlltoAll's round 0) once, a copy between its buffers; once a
     * peer's with direct pointers (cs_p2p_side_copies) */
    double part = B / MAX(1, plan->op.nch);
    const cs_p2p_op_t *sop = remote > 0 ? &plan->op_net : &plan->op;
    limit(c, CS_LIMIT_SM, (plan->max_passes * part / (c->b_sm / c->nch) +
                           cs_engine_p2p_step_sync_s(plan, sop, B, c->pr, c->tau)) / c->S);
    /* over SHM a channel's CTA loads what it receives from the host
     * buffer behind its GPU's own posted writes, as a ring's channel does
     * (cs_shm_chan_bw): the busiest channel's received parts at that
     * ceiling (every rank here also sends) */
    if (hw->p2p_shm) {
        double cap = cs_shm_chan_bw(p, hw->arch, c->pr == CS_PROTO_SIMPLE && hw->p2p_shm_ce_recv, TRUE);
        if (isfinite(cap) && plan->max_recvs > 0)
            limit(c, CS_LIMIT_INTRA, plan->max_recvs * part / c->S / (cap * c->peff));
    }
    limit(c, CS_LIMIT_MEM, 2.0 * (a2a ? n : 1) * B / c->S / hw->mem_bw);
    cs_param_id_t hid = hw->p2p_xport == CS_XPORT_P2P_NVL ? CS_P_LAT_HOP_NVLINK
                      : hw->p2p_xport == CS_XPORT_P2P_PCI ? CS_P_LAT_HOP_PCIE : CS_P_LAT_HOP_SHM;
    double h = hw->p2p_edge_lat + par(p, hid) * US;
    if (c->pr == CS_PROTO_SIMPLE && hw->p2p_xport == CS_XPORT_P2P_NVL)
        h += par(p, CS_P_LAT_SYNC_SIMPLE_NVLINK) * US;
    if (remote > 0)
        h = MAX(h, net_hop(hw, p, c->pr, FALSE));
    /* Simple moves a part through the connection's FIFO a step at a time
     * (enqueue.cc addP2pToPlan: steps of p2pChunkSize; sendrecv.h runSend
     * and runRecv loop over chunks; prims_simple.h: the receiver's
     * waitPeer sees a step only after the sender's postPeer, once the
     * whole step is written): the receive of a step starts when its send
     * ends. The bandwidth term counts the send and the receive of every
     * step at once; the first step's send has no receive beside it, so
     * each batch adds one step (or the whole part, if smaller) at the
     * CTA's rate. LL posts a flag with every line: no such fill. Across
     * nodes the network sends end last: theirs (network chunk sizes).
     * With direct pointers (cs_comm_p2p_direct) a step's one copy is its
     * receive too: no fill on one node. */
    double fill = 0;
    if (c->pr == CS_PROTO_SIMPLE && (remote > 0 || !cs_comm_p2p_direct(info))) {
        const cs_p2p_op_t *fop = remote > 0 ? &plan->op_net : &plan->op;
        fill = MIN(B / MAX(1, fop->nch), (double)fop->chunk) / (c->b_sm / c->nch);
    }
    return c->launch + MAX(1, plan->max_batches) * (h + c->tau + fill) + c->S * c->lim.spb;
}

gboolean cs_analytic_time_routed(const cs_analytic_hw_t *hw, const cs_params_t *p, cs_coll_t coll,
                                 const cs_engine_call_t *call, const cs_fabric_bound_t *fab, double time_s[2],
                                 cs_analytic_limit_t *limit_p, GError **err)
{
    const cs_decision_t *d = call->decision;
    call_ctx_t c;
    memset(&c, 0, sizeof c);
    c.S = (double)call->nccl_bytes;
    c.n = hw->nranks;
    c.N = hw->mnnvl ? 1 : hw->nnodes;
    c.ppn = hw->mnnvl ? hw->nranks : hw->ppn;
    c.nch = MAX(1, d->nchannels);
    c.pr = d->proto;
    c.peff = proto_eff(p, d->proto);
    c.tau = proto_sync(p, d->proto);
    c.b_sm = c.nch * channel_bw(p, hw->arch, d->proto, d->nthreads);
    c.chunk = d->chunk_bytes > 0 ? (double)d->chunk_bytes : c.S / c.nch;
    c.fab = c.N > 1 ? fab : NULL;
    c.lim.kind = CS_LIMIT_NONE;
    /* The GPU's side of a call (its kernel's launch and completion), and
     * the host's: the thread that drives the most GPUs issues their parts
     * one after the other (the process layout, cs_comm_set_layout). The
     * timed loop issues calls back to back, so a call takes the longer of
     * the two (cs_params_launch_host_s). */
    c.launch = par(p, CS_P_LAT_LAUNCH) * US;
    int rounds = coll == CS_COLL_ALLTOALL ? c.n : coll == CS_COLL_SENDRECV ? 1 : 0;
    int calls = coll == CS_COLL_ALLTOALL ? hw->p2p_extra_calls[1] : coll == CS_COLL_SENDRECV ? hw->p2p_extra_calls[0] : 0;
    double host = cs_params_launch_host_s(p, hw->gpus_per_thread, cs_comm_host_work_channels(hw->nccl_version, c.nch),
                                          c.N > 1, rounds, calls);

    double t;
    if (c.n <= 1) {
        /* One rank: NCCL copies the buffer when out-of-place. */
        time_s[CS_OOP] = MAX(host, c.launch + 2 * c.S / hw->mem_bw);
        time_s[CS_INP] = MAX(host, c.launch);
        if (limit_p != NULL) {
            memset(limit_p, 0, sizeof *limit_p);
            limit_p->kind = CS_LIMIT_MEM;
            limit_p->spb = 2 / hw->mem_bw;
            limit_p->busy = c.S * limit_p->spb / time_s[CS_OOP];
        }
        return TRUE;
    }
    switch (d->algo) {
    case CS_ALGO_P2P:
        if (hw->p2p_info == NULL || !cs_coll_is_p2p(coll)) {
            g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED, "%s: a point-to-point decision for %s",
                        cs_algo_name(d->algo), cs_coll_name(coll));
            return FALSE;
        }
        t = t_p2p(hw, p, coll, hw->p2p_info, &c);
        break;
    case CS_ALGO_RING:
        t = t_ring(hw, p, coll, &c);
        break;
    case CS_ALGO_TREE:
        t = coll == CS_COLL_ALLREDUCE ? t_tree(hw, p, &c) : t_ring(hw, p, coll, &c);
        break;
    case CS_ALGO_NVLS:
    case CS_ALGO_NVLS_TREE:
        if (!(hw->nvls_bw > 0) || (d->algo == CS_ALGO_NVLS && c.N > 1)) {
            g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED,
                        "%s on this topology is not modelled by the analytic engine (%s); "
                        "exclude it with NCCL_ALGO or NCCL_NVLS_ENABLE=0",
                        cs_algo_name(d->algo), hw->nvls_bw > 0 ? "NVLS across nodes needs SHARP"
                                                              : "no NVLink to multicast over");
            return FALSE;
        }
        t = t_nvls(hw, p, coll, d->algo, &c);
        break;
    case CS_ALGO_PAT:
        t = t_pat(hw, p, &c);
        break;
    case CS_ALGO_COLLNET_DIRECT:
    case CS_ALGO_COLLNET_CHAIN:
        if (coll != CS_COLL_ALLREDUCE || c.N < 2 || hw->nic_bw <= 0 ||
            (d->algo == CS_ALGO_COLLNET_DIRECT && hw->collnet_heads < 1)) {
            g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED,
                        "%s %s (in-network reduction with SHARP) is modelled for all-reduce across nodes only; "
                        "exclude it with NCCL_COLLNET_ENABLE=0 or NCCL_ALGO", cs_algo_name(d->algo),
                        cs_coll_name(coll));
            return FALSE;
        }
        t = t_collnet(hw, p, d->algo, &c);
        break;
    default:
        g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED, "%s is not modelled by the analytic engine",
                    cs_algo_name(d->algo));
        return FALSE;
    }
    /* a ring's passes over the rank's own part that hold its channels
     * while the links idle: reduce-scatter's last step, all-gather's copy
     * out of place (cs_engine_ring_pass_s) */
    double pass[2];
    cs_engine_ring_pass_s(coll, d, c.n, hw->ring_net, hw->ring_recv_copies, c.S,
                          channel_bw(p, hw->arch, CS_PROTO_SIMPLE, 0), pass);
    if (host > t + pass[CS_OOP]) {
        /* the GPUs wait for the host: its issue rate is the call's time */
        t = host;
        pass[CS_OOP] = pass[CS_INP] = 0;
        c.lim.kind = CS_LIMIT_HOST;
        c.lim.spb = 0;
    }
    time_s[CS_OOP] = t + pass[CS_OOP];
    time_s[CS_INP] = MAX(t + pass[CS_INP], host);
    if (limit_p != NULL) {
        *limit_p = c.lim;
        limit_p->busy = c.lim.kind == CS_LIMIT_HOST ? 1.0 : t > 0 ? c.S * c.lim.spb / t : 0;
    }
    return TRUE;
}

gboolean cs_analytic_time(const cs_analytic_hw_t *hw, const cs_params_t *p, cs_coll_t coll,
                          const cs_engine_call_t *call, double time_s[2], GError **err)
{
    return cs_analytic_time_routed(hw, p, coll, call, NULL, time_s, NULL, err);
}

/* ---- engine ops --------------------------------------------------------- */

typedef struct {
    cs_analytic_hw_t hw;
    const cs_topo_t *topo;
    const cs_params_t *params;
    cs_fabric_load_t *fabric;      /* network edges routed (several nodes), or NULL */
    int arch_cc;
    /* the last call, for its bottleneck and link statistics */
    cs_analytic_limit_t lim;
    cs_fabric_bound_t fab;
    cs_decision_t d;
    double S;                      /* its nBytes */
    double time_s;                 /* its predicted time (out-of-place) */
    gboolean have;
} analytic_state_t;

/* What bound the call, without its busy share: "leaf0 -> spine1 (net),
 * loaded 2.00x the busiest NIC port, fabric 4:1 oversubscribed"; NULL
 * for CS_LIMIT_NONE. */
static char *limit_what(const cs_analytic_hw_t *hw, const cs_topo_t *t, const cs_fabric_load_t *fabric,
                        const cs_decision_t *d, const cs_fabric_bound_t *fab, const cs_analytic_limit_t *lim)
{
    static const char *const arch[] = { "sm70", "sm80", "sm90", "sm100" };
    switch (lim->kind) {
    case CS_LIMIT_FABRIC: {
        g_autofree char *name = cs_fabric_load_res_name(fabric, fab->res);
        GString *s = g_string_new(name);
        if (fab->nic_spb > 0 && fab->spb > fab->nic_spb * (1 + 1e-6))
            g_string_append_printf(s, ", loaded %.2fx the busiest NIC port", fab->spb / fab->nic_spb);
        const cs_link_t *l = fab->res < t->nlinks ? &t->links[fab->res] : NULL;
        if (t->fabric.oversubscription > 1 && l != NULL && t->devs[l->src].kind == CS_DEV_SWITCH &&
            t->devs[l->dst].kind == CS_DEV_SWITCH)
            g_string_append_printf(s, ", fabric %g:1 oversubscribed", t->fabric.oversubscription);
        return g_string_free(s, FALSE);
    }
    case CS_LIMIT_NIC: {
        if (d->algo == CS_ALGO_P2P)
            return g_strdup_printf("NIC rate (each GPU's sends to other nodes through its own NICs, %.1f GB/s)",
                                   hw->p2p_nic_bw / GBPS);
        int nch = MAX(1, d->nchannels), per_nic = (nch + hw->nics - 1) / hw->nics;
        if (hw->nics == 1)
            return g_strdup_printf("NIC rate (%d channel%s on the node's one NIC, %.1f GB/s)", per_nic,
                                   per_nic == 1 ? "" : "s", hw->nic_bw / GBPS);
        if (hw->nic_port_bw > 0 && hw->nic_bw < 0.99 * hw->nic_port_bw)
            return g_strdup_printf("NIC rate (%d channel%s on the busiest of %d NICs, %.1f GB/s each: the GPU-NIC "
                                   "path's PCIe, below the port's %.1f)", per_nic, per_nic == 1 ? "" : "s", hw->nics,
                                   hw->nic_bw / GBPS, hw->nic_port_bw / GBPS);
        return g_strdup_printf("NIC rate (%d channel%s on the busiest of %d NICs, %.1f GB/s each)", per_nic,
                               per_nic == 1 ? "" : "s", hw->nics, hw->nic_bw / GBPS);
    }
    case CS_LIMIT_INTRA:
        if (d->algo == CS_ALGO_P2P)
            return g_strdup_printf("intra-node peer edges (%s)", cs_transport_name(hw->p2p_xport));
        return g_strdup_printf("intra-node %s edges (%s)",
                               d->algo == CS_ALGO_TREE || d->algo == CS_ALGO_COLLNET_CHAIN ? "chain"
                               : d->algo == CS_ALGO_COLLNET_DIRECT ? "head" : "ring",
                               cs_transport_name(hw->intra_xport));
    case CS_LIMIT_SM: {
        g_autofree char *proto = g_ascii_strdown(cs_proto_name(d->proto), -1);
        return g_strdup_printf("channel throughput (%d channel%s, chan.%s.%s)", MAX(1, d->nchannels),
                               d->nchannels > 1 ? "s" : "", proto, arch[hw->arch]);
    }
    case CS_LIMIT_MEM:
        return g_strdup("GPU memory");
    case CS_LIMIT_NVLS:
        return g_strdup_printf("NVLink ports at the NVLS rate (eff.nvls.%s)", arch[MAX(2, hw->arch)]);
    case CS_LIMIT_NVLS_COPY:
        return g_strdup_printf("NVLS copy warps: each step's chunks copied one head after the other, "
                               "4 KiB a warp a round (lat.nvls.round.%s)", arch[MAX(2, hw->arch)]);
    case CS_LIMIT_HOST: {
        int g = MAX(1, hw->gpus_per_thread);
        return g_strdup_printf("host launch: one thread issues %d GPU%s kernels per call (nccl-tests -g %d, "
                               "lat.launch.cpu%s)", g, g == 1 ? "'s" : "s'", g,
                               d->algo == CS_ALGO_P2P ? ", planning every peer's sends: lat.launch.cpu.p2p, and each NCCL "
                                                          "call nccl-tests makes beyond one: lat.launch.cpu.api" : "");
    }
    case CS_LIMIT_NONE:
        break;
    }
    return NULL;
}

char *cs_analytic_describe(const cs_analytic_hw_t *hw, const cs_topo_t *t, const cs_fabric_load_t *fabric,
                           const cs_decision_t *d, const cs_fabric_bound_t *fab, const cs_analytic_limit_t *lim)
{
    g_autofree char *what = limit_what(hw, t, fabric, d, fab, lim);
    if (what == NULL)
        return g_strdup("bottleneck: none");
    return g_strdup_printf("bottleneck: %s (%.1f%% busy)%s%s", what, 100 * lim->busy,
                           fab != NULL && fab->skipped != NULL ? "; " : "",
                           fab != NULL && fab->skipped != NULL ? fab->skipped : "");
}

static gboolean analytic_open(const cs_engine_job_t *job, void **state_p, GError **err)
{
    analytic_state_t *s = g_new0(analytic_state_t, 1);
    s->topo = job->topo != NULL ? job->topo : cs_comm_topo(job->comm);
    s->params = job->params;
    const cs_comm_info_t *info = cs_comm_info(job->comm);
    if (!cs_analytic_hw_init(&s->hw, s->topo, info, job->comm, job->params,
                             cs_coll_has_root(job->coll) ? job->root : 0, err))
        goto free_state;
    if (cs_coll_is_p2p(job->coll)) {
        /* sends to every peer: bounded at the NICs, not routed (the
         * fabric bound prices rings and trees) */
        if (!cs_analytic_p2p_init(&s->hw, s->topo, info, job->comm, job->params, job->coll, err))
            goto free_state;
    } else if (info->nnodes > 1 && !s->hw.mnnvl && (s->fabric = cs_fabric_load_new(job, err)) == NULL) {
        goto free_state;
    }
    *state_p = s;
    return TRUE;
free_state:
    g_free(s);
    return FALSE;
}

/* Memory of one call, beyond the process: counted from what the engine
 * allocates, not measured (it is too small to see in the resident size
 * next to the topology's): per resource of the network view (cs_flow_net:
 * capacity, the fabric's load, NIC tables) about 64 bytes; per rank and
 * channel (ring edges, NIC choices) about 64 bytes. Closed form: no time
 * worth estimating. */
static gboolean analytic_estimate(void *state, const cs_engine_job_t *job, const cs_engine_call_t *call,
                                  cs_engine_cost_t *cost_p, GError **err)
{
    (void)err;
    const analytic_state_t *s = state;
    const cs_comm_info_t *info = cs_comm_info(job->comm);
    double nres = cs_flow_nres(s->topo);   /* the flow engine's resources: its memory, as a guide */
    cost_p->bytes = 64.0 * nres + 64.0 * info->nranks * MAX(1, call->decision->nchannels);
    cost_p->seconds = -1;
    return TRUE;
}

static gboolean analytic_predict(void *state, const cs_engine_job_t *job, const cs_engine_call_t *call,
                                 double time_s[2], GError **err)
{
    analytic_state_t *s = state;
    memset(&s->fab, 0, sizeof s->fab);
    s->fab.res = -1;
    if (s->fabric != NULL && !cs_coll_is_p2p(job->coll))
        cs_fabric_load_bound(s->fabric, call->decision, &s->fab);
    s->have = cs_analytic_time_routed(&s->hw, job->params, job->coll, call, &s->fab, time_s, &s->lim, err);
    s->d = *call->decision;
    s->S = (double)call->nccl_bytes;
    s->time_s = s->have ? time_s[CS_OOP] : 0;
    return s->have;
}

/* Busy share of the call's time from which a network bound is worth a
 * note: below it the call is mostly latency, and the link that would bind
 * a larger call is not what decides this one. */
#define NOTE_BUSY 0.5

/* The note under the table, only where it tells a planner something the
 * table does not: the fabric beyond the NICs binds (a switch-to-switch
 * link, or a link loaded above the busiest NIC port), or the NIC rate
 * falls below what its port carries (GPU-NIC path, host staging, socket
 * proxies); and only where that takes most of the call. A NIC port at its
 * line rate is what a network-bound call is expected to hit, and what
 * binds inside a node (NVLink, SMs, memory) is the same on every fabric:
 * neither gets a note (--link-stats names them; docs/model-analytic.md,
 * "Bottleneck and link statistics"). */
static char *analytic_bottleneck_note(void *state)
{
    const analytic_state_t *s = state;
    if (!s->have || s->lim.busy < NOTE_BUSY)
        return NULL;
    /* the host's issue rate is set by the process layout, not by the
     * machine: worth saying which layout the times assume */
    gboolean worth = s->lim.kind == CS_LIMIT_NIC || s->lim.kind == CS_LIMIT_HOST;
    if (s->lim.kind == CS_LIMIT_FABRIC && s->fab.res >= 0 && s->fab.res < s->topo->nlinks) {
        const cs_link_t *l = &s->topo->links[s->fab.res];
        worth = s->fab.spb > s->fab.nic_spb * (1 + 1e-6) ||
                (s->topo->devs[l->src].kind == CS_DEV_SWITCH && s->topo->devs[l->dst].kind == CS_DEV_SWITCH);
    }
    return worth ? limit_what(&s->hw, s->topo, s->fabric, &s->d, &s->fab, &s->lim) : NULL;
}

static const char analytic_stats_source[] =
    "model:analytic, the network links' loads in closed form, not a simulation";

/* The network links the last call's fabric bound loaded (none on one node
 * or inside an NVLink domain): bytes = load x S / the protocol's wire
 * efficiency, the flow engine's wire bytes for the same edges. */
static cs_link_stats_t *analytic_link_stats(void *state)
{
    analytic_state_t *s = state;
    cs_link_stats_t *st = g_new0(cs_link_stats_t, 1);
    st->source = analytic_stats_source;
    st->time_s = s->time_s;
    int n = 0;
    const cs_fabric_link_load_t *ll = s->have && s->fabric != NULL ? cs_fabric_load_links(s->fabric, &s->d, &n) : NULL;
    st->links = g_new0(cs_link_stat_t, MAX(1, n));
    double peff = proto_eff(s->params, s->d.proto);
    for (int i = 0; i < n; i++) {
        cs_link_stat_t *l = &st->links[st->n++];
        l->name = cs_fabric_load_res_name(s->fabric, ll[i].res);
        l->cap = ll[i].cap;
        l->bytes = ll[i].load * s->S / peff;
    }
    cs_link_stats_sort(st);
    /* A bound inside the node (NVLink edges, SMs, NVLS, memory, the host)
     * is no listed link: name the term. Below half the call it does not
     * decide the call, its latency does (as NOTE_BUSY for the notes). */
    st->unlisted = s->have && s->d.algo == CS_ALGO_P2P && s->hw.nnodes > 1 && !s->hw.mnnvl;
    /* edges the bound could not route list no load: say so, with the
     * call's own term, rather than "no link carried data" */
    gboolean unrouted = s->have && s->fabric != NULL && s->fab.skipped != NULL;
    if (unrouted && s->lim.kind != CS_LIMIT_NONE) {
        g_autofree char *what = limit_what(&s->hw, s->topo, s->fabric, &s->d, &s->fab, &s->lim);
        st->limit = g_strdup_printf("%s (%.1f%% busy)", what != NULL ? what : "the analytic engine's rate terms",
                                    100 * s->lim.busy);
        st->unrouted = g_strdup(s->fab.skipped);
    } else if (s->have && s->lim.kind != CS_LIMIT_NONE &&
        (st->unlisted || (s->lim.kind != CS_LIMIT_FABRIC && s->lim.kind != CS_LIMIT_NIC))) {
        g_autofree char *what = limit_what(&s->hw, s->topo, s->fabric, &s->d, &s->fab, &s->lim);
        if (what != NULL && s->lim.busy >= NOTE_BUSY)
            st->limit = g_strdup_printf("%s (%.1f%% busy)", what, 100 * s->lim.busy);
        else if (what != NULL)
            st->limit = g_strdup_printf("latency (the largest rate term, %s, takes %.1f%% of the call)", what,
                                        100 * s->lim.busy);
    }
    return st;
}

char *cs_analytic_bottleneck(void *state)
{
    const analytic_state_t *s = state;
    if (!s->have)
        return NULL;
    return cs_analytic_describe(&s->hw, s->topo, s->fabric, &s->d, &s->fab, &s->lim);
}

/* The sizes where this model is least sure of itself, said with them
 * (cs_engine_run_sweep: "approximate for 16 MiB to 64 MiB: ..."): NVLSTree
 * across nodes at 2-128 MiB, priced 13-60 % slower than the measured 2-
 * and 8-node DGX H100 runs, where the flow engine's max-min sharing comes
 * out faster than both (docs/model-analytic.md, Known limits). */
static char *analytic_approximation(void *state)
{
    const analytic_state_t *s = state;
    if (!s->have || s->d.algo != CS_ALGO_NVLS_TREE || s->hw.nnodes < 2 || s->S < (2 << 20) ||
        s->S > (128 << 20))
        return NULL;
    return g_strdup("NVLSTree across nodes at mid sizes is this model's least certain range: it priced the "
                    "measured 2- and 8-node DGX H100 runs 13-60 % slow there, and --model flow prices it faster "
                    "than both (docs/model-analytic.md, Known limits)");
}

/* What a point-to-point job's header should say the engine leaves out. */
static char **analytic_notes(void *state)
{
    const analytic_state_t *s = state;
    if (!s->hw.p2p || s->hw.p2p_nic_bw <= 0)
        return NULL;
    char **v = g_new0(char *, 2);
    v[0] = g_strdup("point-to-point across nodes: the analytic engine bounds each GPU's sends at its own NICs; "
                    "the fabric beyond them (switch links, oversubscription) and PXN's NVLink hop are not "
                    "priced (--model flow routes every peer's sends)");
    return v;
}

static void analytic_close(void *state)
{
    analytic_state_t *s = state;
    cs_fabric_load_free(s->fabric);
    g_free(s);
}

const cs_engine_ops_t cs_engine_analytic = {
    .name = "analytic",
    .description = "closed-form time from link bandwidths and latencies (network edges routed through the "
                   "fabric, the most loaded link priced), protocol efficiencies, per-channel limits and "
                   "launch/step costs",
    .open = analytic_open,
    .estimate = analytic_estimate,
    .predict = analytic_predict,
    .close = analytic_close,
    .notes = analytic_notes,
    .approximation = analytic_approximation,
    .bottleneck = analytic_bottleneck_note,
    .link_stats = analytic_link_stats,
    .timeline = FALSE,   /* no timeline: no --trace, no several jobs */
    .closed_form = TRUE,
};
