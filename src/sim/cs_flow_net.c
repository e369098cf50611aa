/* The network as the simulating engines (flow, SimGrid) see it: the
 * resources a slice crosses on a ring edge, with their capacities, the
 * coefficients that turn payload into resource bytes, and the edge's
 * latency, all from the topology and the analytic engine's parameters
 * (cs_params). The model is described in docs/model-flow.md. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "sim/cs_engine_flow-int.h"
#include "models/cs_shm.h"
#include "models/cs_program.h"
#include "util/cs_error.h"

#define US 1e-6
#define GBPS 1e9

static double par(const cs_flow_net_t *f, cs_param_id_t id)
{
    return cs_params_get(f->par, id);
}


/* The analytic engine's efficiencies, by link kind, for SM-driven traffic
 * and for a NIC's DMA (docs/model-analytic.md). */
static double link_eff(const cs_flow_net_t *f, int link, gboolean dma, gboolean socket)
{
    switch (f->topo->links[link].kind) {
    case CS_LINK_NVL: return cs_params_nvlink_eff(f->par, cs_topo_link_gpu_sm(f->topo, link));
    case CS_LINK_C2C: return par(f, CS_P_EFF_C2C);
    case CS_LINK_PCI: return par(f, dma ? CS_P_EFF_PCIE_DMA : CS_P_EFF_PCIE);
    case CS_LINK_SYS: return par(f, CS_P_EFF_SYS);
    case CS_LINK_NET: return par(f, socket ? CS_P_EFF_SOCKET : CS_P_EFF_NET);
    }
    return 1.0;
}

double cs_flow_proto_eff(const cs_flow_net_t *f, cs_proto_t pr)
{
    return pr == CS_PROTO_LL ? par(f, CS_P_PROTO_EFF_LL)
         : pr == CS_PROTO_LL128 ? par(f, CS_P_PROTO_EFF_LL128) : par(f, CS_P_PROTO_EFF_SIMPLE);
}

static double proto_sync(const cs_flow_net_t *f, cs_proto_t pr)
{
    return (pr == CS_PROTO_LL ? par(f, CS_P_LAT_SYNC_LL)
          : pr == CS_PROTO_LL128 ? par(f, CS_P_LAT_SYNC_LL128) : par(f, CS_P_LAT_SYNC_SIMPLE)) * US;
}

double cs_flow_channel_bw(const cs_flow_net_t *f, cs_proto_t pr, int nthreads)
{
    static const cs_param_id_t ids[CS_PROTO_COUNT][4] = {
        { CS_P_CH_LL_SM70, CS_P_CH_LL_SM80, CS_P_CH_LL_SM90, CS_P_CH_LL_SM100 },
        { CS_P_CH_LL128_SM70, CS_P_CH_LL128_SM80, CS_P_CH_LL128_SM90, CS_P_CH_LL128_SM100 },
        { CS_P_CH_SIMPLE_SM70, CS_P_CH_SIMPLE_SM80, CS_P_CH_SIMPLE_SM90, CS_P_CH_SIMPLE_SM100 },
    };
    return par(f, ids[pr][f->arch]) * GBPS * cs_engine_threads_share(pr, nthreads);
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

double *cs_flow_res_caps(const cs_topo_t *t, const cs_params_t *par, int *nres_p)
{
    int nres = cs_flow_nres(t);
    double *cap = g_new0(double, MAX(1, nres));
    for (int l = 0; l < t->nlinks; l++)
        cap[l] = t->links[l].bw;
    for (int r = 0; r < t->ngpus; r++) {
        int d = t->rank_dev[r];
        cap[t->nlinks + 3 * r] = gpu_nvlink_bw(t, d, 0);
        cap[t->nlinks + 3 * r + 1] = gpu_nvlink_bw(t, d, 1);
        const cs_gpu_model_t *g = t->devs[d].gpu;
        cap[t->nlinks + 3 * r + 2] = (g != NULL && g->mem_bw > 0 ? g->mem_bw : 1e12) * cs_params_get(par, CS_P_EFF_MEM);
    }
    /* host memory of each CPU socket for SHM buffers (cs_shm.h); other
     * devices, and CPUs the catalogue does not know, do not limit: no edge
     * crosses them (their finite stand-in is never used) */
    for (int d = 0; d < t->ndevs; d++) {
        double m = cs_shm_host_mem_bw(t, d, par);
        cap[cs_flow_res_host_mem(t, d)] = isfinite(m) ? m : 1e18;
    }
    /* NET/Socket: each GPU's proxy thread copies its sends into TCP and
     * its receives out of it (bw.socket.proxy per direction) */
    for (int r = 0; r < t->ngpus; r++)
        for (int dir = 0; dir < 2; dir++)
            cap[cs_flow_res_socket_proxy(t, r, dir)] = cs_params_get(par, CS_P_BW_SOCKET_PROXY) * 1e9;
    *nres_p = nres;
    return cap;
}

char *cs_flow_res_name(const cs_topo_t *t, int res)
{
    if (res < t->nlinks) {
        const cs_link_t *l = &t->links[res];
        return g_strdup_printf("%s -> %s (%s)", t->devs[l->src].name, t->devs[l->dst].name,
                               cs_link_kind_name(l->kind));
    }
    static const char *const what[3] = { "NVLink out", "NVLink in", "memory" };
    if (res >= cs_flow_res_socket_proxy(t, 0, 0)) {
        int k = res - cs_flow_res_socket_proxy(t, 0, 0);
        return g_strdup_printf("%s socket proxy %s", cs_topo_rank_dev(t, k / 2)->name, k % 2 ? "recv" : "send");
    }
    if (res >= cs_flow_res_host_mem(t, 0))
        return g_strdup_printf("%s host memory", t->devs[res - cs_flow_res_host_mem(t, 0)].name);
    int k = res - t->nlinks;
    return g_strdup_printf("%s %s", cs_topo_rank_dev(t, k / 3)->name, what[k % 3]);
}

gboolean cs_flow_net_init(cs_flow_net_t *f, const cs_engine_job_t *job, GError **err)
{
    memset(f, 0, sizeof *f);
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
    f->res_cap = cs_flow_res_caps(t, f->par, &f->nres);
    f->nics_max = 1;
    g_autofree int *tmp = g_new0(int, MAX(1, t->ndevs));
    for (int n = 0; n < t->nnodes; n++)
        f->nics_max = MAX(f->nics_max, cs_topo_node_nics(t, n, tmp, t->ndevs));
    f->nic_dev = g_new(int, (gsize)MAX(1, t->nnodes) * f->nics_max);
    for (int n = 0; n < t->nnodes; n++) {
        int nn = cs_topo_node_nics(t, n, tmp, t->ndevs);
        for (int k = 0; k < f->nics_max; k++)
            f->nic_dev[(gsize)n * f->nics_max + k] = k < nn ? tmp[k] : -1;
    }
    (void)err;
    return TRUE;
}

void cs_flow_net_clear(cs_flow_net_t *f)
{
    if (f->sharp != NULL)
        g_hash_table_destroy(f->sharp);
    cs_path_cache_free(f->cache);
    g_free(f->res_cap);
    g_free(f->nic_dev);
    memset(f, 0, sizeof *f);
}

double cs_flow_launch(const cs_flow_net_t *f)
{
    /* As the analytic engine: the GPU's side of a call; the host's is
     * cs_flow_launch_host */
    return par(f, CS_P_LAT_LAUNCH) * US;
}

double cs_flow_launch_host(const cs_flow_net_t *f, int nchannels)
{
    /* As the analytic engine (cs_params_launch_host_s): a thread issues
     * its GPUs' parts one after the other, their work channel by channel,
     * with their proxy operations when the call reaches another node
     * through a NIC. */
    gboolean net = FALSE;
    const cs_topo_t *t = f->topo;
    int node0 = cs_topo_rank_dev(t, 0)->node;
    for (int r = 1; r < f->info->nranks && !net; r++) {
        if (cs_topo_rank_dev(t, r)->node == node0)
            continue;
        cs_link_choice_t x;
        cs_comm_pair(f->comm, 0, r, &x);
        net = x.transport == CS_XPORT_NET_IB || x.transport == CS_XPORT_NET_SOCKET;
        break;
    }
    int rounds = f->coll == CS_COLL_ALLTOALL ? f->info->nranks : f->coll == CS_COLL_SENDRECV ? 1 : 0;
    return cs_params_launch_host_s(f->par, f->info->gpus_per_thread,
                                   cs_comm_host_work_channels(cs_comm_nccl_version_at_most(f->info), nchannels), net, rounds,
                                   cs_comm_p2p_extra_calls(f->info, f->coll, f->info->nranks));
}

/* ---- edges: the resources and costs of one ring edge ------------------- */

static gboolean add_path(const cs_flow_net_t *f, cs_flow_edge_t *e, const cs_path_t *p, gboolean reverse,
                         gboolean dma, gboolean socket, double extra)
{
    const cs_topo_t *t = f->topo;
    for (int i = 0; i < p->nhops; i++) {
        int l = reverse ? t->links[p->links[p->nhops - 1 - i]].reverse : p->links[i];
        if (e->n >= CS_FLOW_HMAX - 1)
            return FALSE;
        e->h[e->n].res = l;
        e->h[e->n].coeff = 1.0 / (link_eff(f, l, dma, socket) * extra);
        e->n++;
        e->lat += t->links[l].lat;
        if (t->devs[t->links[l].dst].kind == CS_DEV_SWITCH)
            e->lat += t->fabric.switch_lat;
    }
    return TRUE;
}

int *cs_flow_chan_orders(const cs_flow_net_t *f, cs_algo_t algo, int nch)
{
    int n = f->info->nranks;
    int *orders = g_new(int, (gsize)MAX(1, nch) * MAX(1, n));
    for (int c = 0; c < nch; c++)
        cs_comm_chan_order(f->comm, algo, c, orders + (gsize)c * n);
    return orders;
}

/* NVLS and NVLSTree (cs_program_new's orders): each node's block lists its
 * NVLS heads first, the GPUs that head NVLS channels (those with a NIC in
 * the NVLS graph: cs_comm_chan_nic, search.cc getNvlsNetDev) in local
 * order, then the others; on one node (no NIC) the node's GPUs in order.
 * NCCL pairs the h-th heads of the nodes (connect.cc connectNvls
 * nvlsHeads[h * nNodes + node], the first GPU of NVLS channel h of each
 * node): nodes of one shape list them alike. Every channel the same. */
static int *nvls_orders(const cs_flow_net_t *f, int nch)
{
    int n = f->info->nranks, nn = f->info->nnodes, m = f->info->ppn;
    int *orders = g_new(int, (gsize)MAX(1, nch) * MAX(1, n));
    if (nn < 1 || n != nn * m) {
        g_free(orders);
        return cs_flow_chan_orders(f, CS_ALGO_RING, nch);
    }
    for (int v = 0; v < nn; v++) {
        int k = v * m;
        for (int pass = 0; pass < 2; pass++)
            for (int i = 0; i < m; i++) {
                gboolean head = nn > 1 && cs_comm_chan_nic(f->comm, CS_ALGO_NVLS, v * m + i, 0) >= 0;
                if (head == (pass == 0))
                    orders[k++] = v * m + i;
            }
    }
    for (int c = 1; c < nch; c++)
        memcpy(orders + (gsize)c * n, orders, sizeof(int) * n);
    return orders;
}

int *cs_flow_prog_orders(const cs_flow_net_t *f, const cs_decision_t *d)
{
    /* Tree all-reduce follows the tree graph's chains, NVLS and NVLSTree
     * all-reduce their heads, everything else the ring graph's rings, one
     * node or several: on a single node NCCL's search also gives channels
     * distinct rings where links differ in width (DGX-1's six rings over
     * its double and single NVLinks). */
    if (f->coll == CS_COLL_ALLREDUCE && (d->algo == CS_ALGO_NVLS || d->algo == CS_ALGO_NVLS_TREE))
        return nvls_orders(f, MAX(1, d->nchannels));
    /* CollNet: each channel's chain (its head last), or the direct heads
     * first in each node's block (cs_comm_chan_order) */
    if (f->coll == CS_COLL_ALLREDUCE && (d->algo == CS_ALGO_COLLNET_CHAIN || d->algo == CS_ALGO_COLLNET_DIRECT))
        return cs_flow_chan_orders(f, d->algo, MAX(1, d->nchannels));
    return cs_flow_chan_orders(f, d->algo == CS_ALGO_TREE && f->coll == CS_COLL_ALLREDUCE ? CS_ALGO_TREE : CS_ALGO_RING,
                               MAX(1, d->nchannels));
}

/* Local NIC index (cs_path_cache_nic) of the NIC rank r uses on channel
 * ch of 'algo', as NCCL's search chose it (cs_comm_chan_nic), and its
 * device; where the decision names none, the node's NIC ch % nics_used. */
static int chan_nic(const cs_flow_net_t *f, cs_algo_t algo, int r, int ch, int *dev_p)
{
    const cs_topo_t *t = f->topo;
    int node = t->devs[t->rank_dev[r]].node;
    int k = cs_comm_chan_nic(f->comm, algo, r, ch);
    if (k < 0 || k >= f->nics_max)
        k = ch % MAX(1, f->info->nics_used);
    int dev = k < f->nics_max ? f->nic_dev[(gsize)node * f->nics_max + k] : -1;
    *dev_p = dev;
    return dev >= 0 ? k : -1;
}

/* Whether a NIC has a network cable (a one-node topology has none). */
static gboolean nic_wired(const cs_topo_t *t, int nic)
{
    for (int k = t->adj_off[nic]; k < t->adj_off[nic + 1]; k++)
        if (t->links[t->adj[k]].kind == CS_LINK_NET)
            return TRUE;
    return FALSE;
}

/* Whether ring edge x -> y moves data through the GPUs' own copies
 * (anything but the network: the NIC reads and writes GPU memory itself). */
static gboolean intra_edge(const cs_flow_net_t *f, int x, int y)
{
    cs_link_choice_t lc;
    cs_comm_pair(f->comm, x, y, &lc);
    return lc.transport != CS_XPORT_NET_IB && lc.transport != CS_XPORT_NET_SOCKET;
}

/* Whether the GPUs of an SHM edge a -> b also move data the other way:
 * a ring's GPU receives from its predecessor and sends to its successor,
 * through its own SMs' copies unless that neighbour is across the network
 * (so a GPU where a node's ring enters or leaves copies one way only, as
 * the analytic engine counts a GPU's intra-node edges); a chain
 * (Broadcast, Reduce on Ring: the ring without the edge into the root)
 * has a first GPU that only sends and a last that only receives. Trees
 * and point-to-point patterns are taken to copy both ways. */
static void shm_twoway(const cs_flow_net_t *f, cs_algo_t algo, int ch, int a, int b, gboolean *send2, gboolean *recv2)
{
    *send2 = *recv2 = TRUE;
    if (algo != CS_ALGO_RING)
        return;
    gboolean chain = f->coll == CS_COLL_BROADCAST || f->coll == CS_COLL_REDUCE;
    int n = f->info->nranks;
    g_autofree int *order = g_new(int, MAX(1, n));
    cs_comm_chan_order(f->comm, CS_ALGO_RING, ch, order);
    int prev_a = -1, next_b = -1;
    for (int i = 0; i < n; i++) {
        if (order[(i + 1) % n] == a)
            prev_a = order[i];
        if (order[i] == b)
            next_b = order[(i + 1) % n];
    }
    *send2 = prev_a >= 0 && !(chain && a == f->root) && intra_edge(f, prev_a, a);
    *recv2 = next_b >= 0 && !(chain && next_b == f->root) && intra_edge(f, b, next_b);
}

/* How many SHM streams GPU b loads in channel ch of a Tree: its chain
 * neighbours in its node (the channel's order lists each node's chain as
 * one block), one up and one down, each over SHM. Its CTA's loads share
 * the channel's SHM ceiling, as the analytic engine's t_tree prices it,
 * when the two phases run at once (from NCCL 2.8). */
static int tree_shm_in(const cs_flow_net_t *f, int ch, int b)
{
    const cs_topo_t *t = f->topo;
    int n = f->info->nranks, k = 0;
    g_autofree int *order = g_new(int, MAX(1, n));
    cs_comm_chan_order(f->comm, CS_ALGO_TREE, ch, order);
    for (int i = 0; i < n; i++) {
        if (order[i] != b)
            continue;
        int nb[2] = { i > 0 ? order[i - 1] : -1, i + 1 < n ? order[i + 1] : -1 };
        for (int j = 0; j < 2; j++) {
            if (nb[j] < 0 || t->devs[t->rank_dev[nb[j]]].node != t->devs[t->rank_dev[b]].node)
                continue;
            cs_link_choice_t lc;
            cs_comm_pair(f->comm, nb[j], b, &lc);
            k += lc.transport == CS_XPORT_SHM;
        }
    }
    return MAX(1, k);
}

/* The edge a -> b; across nodes through NIC ka of a's node and kb of b's
 * (local indices), the fabric's route picked by 'hash'. */
static gboolean build_edge(const cs_flow_net_t *f, cs_algo_t algo, int ch, guint32 hash, int a, int b, cs_proto_t pr,
                           cs_flow_edge_t *e, GError **err);

gboolean cs_flow_build_edge(const cs_flow_net_t *f, int ch, int a, int b, cs_proto_t pr,
                            cs_flow_edge_t *e, GError **err)
{
    return build_edge(f, CS_ALGO_RING, ch, (guint32)ch, a, b, pr, e, err);
}

/* PXN for a p2p send from a to b on another node (net.cc sendSetup,
 * paths.cc ncclTopoGetNetDev with NCCL_P2P_PXN_LEVEL 2, the default): the
 * sender uses the NIC its node's GPU of b's local index uses for the
 * channel, b's rail, reaching it over NVLink through that GPU (the relay,
 * whose proxy posts the sends). The relay's rank, or a itself where there
 * is none (NCCL_PXN_DISABLE=1, nodes of different sizes, no NVLink to
 * it). */
static int pxn_relay(const cs_flow_net_t *f, int a, int b)
{
    const cs_topo_t *t = f->topo;
    if (cs_comm_settings(f->comm)->pxn_disable > 0)
        return a;
    int na = t->devs[t->rank_dev[a]].node, nb = t->devs[t->rank_dev[b]].node;
    int i = t->node_first_rank[na] + (b - t->node_first_rank[nb]);
    if (i == a || i >= t->node_first_rank[na + 1])
        return a;
    cs_link_choice_t lc;
    cs_comm_pair(f->comm, a, i, &lc);
    return lc.transport == CS_XPORT_P2P_NVL ? i : a;
}

/* The NVLink hop a -> i between GPUs of one node: through an NVSwitch the
 * GPUs' ports (as ring edges), else the links of the path. */
static gboolean add_nvlink(const cs_flow_net_t *f, cs_flow_edge_t *e, int a, int i)
{
    const cs_topo_t *t = f->topo;
    const cs_path_t *p = cs_path_cache_gpu(f->cache, a, i);
    if (p == NULL || p->type == CS_PATH_DIS || p->nhops == 0)
        return FALSE;
    if (t->devs[t->links[p->links[0]].dst].kind == CS_DEV_NVSWITCH) {
        double c = 1.0 / cs_params_nvlink_eff(f->par, cs_topo_link_gpu_sm(t, p->links[0]));
        e->h[e->n++] = (cs_flow_hop_t){ cs_flow_res_nvl_out(f, a), c };
        e->h[e->n++] = (cs_flow_hop_t){ cs_flow_res_nvl_in(f, i), c };
        e->lat += p->lat;
        return TRUE;
    }
    return add_path(f, e, p, FALSE, FALSE, FALSE, 1.0);
}

static gboolean build_edge(const cs_flow_net_t *f, cs_algo_t algo, int ch, guint32 hash, int a, int b, cs_proto_t pr,
                           cs_flow_edge_t *e, GError **err)
{
    double peff = cs_flow_proto_eff(f, pr);
    const cs_topo_t *t = f->topo;
    int da = t->rank_dev[a], db = t->rank_dev[b];
    cs_link_choice_t lc;
    cs_comm_pair(f->comm, a, b, &lc);
    memset(e, 0, sizeof *e);
    gboolean ok = TRUE;
    if (lc.transport == CS_XPORT_NET_IB || lc.transport == CS_XPORT_NET_SOCKET) {
        gboolean socket = lc.transport == CS_XPORT_NET_SOCKET;
        /* each side's NIC for this channel as NCCL's search chose it; a
         * p2p send leaves through b's rail, relayed over NVLink (PXN) */
        int relay = algo == CS_ALGO_P2P ? pxn_relay(f, a, b) : a;
        int nic_a, nic_b;
        int ka = chan_nic(f, algo, relay, ch, &nic_a), kb = chan_nic(f, algo, b, ch, &nic_b);
        /* Without GPUDirect the data bounces through host memory: SM
         * loads across PCIe (eff.net.host_staged), unless the GPU reaches
         * host memory coherently over C2C (as the analytic engine). */
        double extra = (socket || !lc.gdr) && !cs_path_gpu_c2c(t, da) ? par(f, CS_P_EFF_HOST_STAGED) : 1.0;
        if (socket)
            extra = 1.0;
        cs_path_t np;
        const cs_path_t *pa = ka >= 0 ? cs_path_cache_nic(f->cache, relay, ka) : NULL;
        const cs_path_t *pb = kb >= 0 ? cs_path_cache_nic(f->cache, b, kb) : NULL;
        if (pa == NULL || pb == NULL || pa->type == CS_PATH_DIS || pb->type == CS_PATH_DIS ||
            !cs_path_net(t, nic_a, nic_b, hash, &np)) {
            if (nic_a >= 0 && nic_b >= 0 && t->devs[nic_a].node == t->devs[nic_b].node)
                /* NCCL's network loopback between GPUs of one node (no P2P,
                 * no SHM) leaves through one NIC and comes back through
                 * another: through a switch this topology does not have
                 * (a topology error, not a shape this engine leaves out:
                 * validate --skip-unsupported must not skip it as one) */
                g_set_error(err, CS_ERROR, CS_ERROR_TOPOLOGY,
                            "%s -> %s: NCCL loops this pair back through the network (%s to %s), and %s; "
                            "use --model analytic, or a fabric that joins them (--fabric fat-tree%s)",
                            t->devs[da].name, t->devs[db].name, t->devs[nic_a].name, t->devs[nic_b].name,
                            nic_wired(t, nic_a) ? "the fabric has no route between them (a rail fabric of a few "
                                                  "nodes joins each rail's NICs alone)"
                                                : "the topology has no switch between them",
                            nic_wired(t, nic_a) ? "" : " with --nodes 2 or more");
            else if (nic_a >= 0 && nic_b >= 0 && pa != NULL && pb != NULL && pa->type != CS_PATH_DIS &&
                     pb->type != CS_PATH_DIS)
                /* both NICs reached, the fabric joins them not: the rail
                 * fabric of one group, between rails (its NICs' own
                 * switches and nothing above them) */
                g_set_error(err, CS_ERROR, CS_ERROR_TOPOLOGY,
                            "%s -> %s: channel %d leaves %s and enters %s, and the fabric has no route between "
                            "them%s; expected a fabric that joins them (--fabric fat-tree), or --model analytic "
                            "(which prices the NICs where no route is found)",
                            t->devs[da].name, t->devs[db].name, ch, t->devs[nic_a].name, t->devs[nic_b].name,
                            t->fabric.kind == CS_FABRIC_RAIL
                                ? " (a rail fabric of a few nodes joins each rail's NICs alone, with no spine "
                                  "between rails)"
                                : "");
            else
                g_set_error(err, CS_ERROR, CS_ERROR_TOPOLOGY, "%s -> %s: no network route for channel %d",
                            t->devs[da].name, t->devs[db].name, ch);
            return FALSE;
        }
        ok = (relay == a || add_nvlink(f, e, a, relay)) && add_path(f, e, pa, FALSE, TRUE, socket, extra) &&
             add_path(f, e, &np, FALSE, TRUE, socket, extra) && add_path(f, e, pb, TRUE, TRUE, socket, extra);
        if (ok && socket) {
            /* the sender's and the receiver's proxies (cs_flow_res_caps) */
            ok = e->n < CS_FLOW_HMAX - 2;
            if (ok) {
                e->h[e->n++] = (cs_flow_hop_t){ cs_flow_res_socket_proxy(t, relay, 0), 1.0 };
                e->h[e->n++] = (cs_flow_hop_t){ cs_flow_res_socket_proxy(t, b, 1), 1.0 };
            }
        }
        e->lat += (socket ? par(f, CS_P_LAT_HOP_SOCKET) : par(f, CS_P_LAT_HOP_NET)) * US;
        if (pr == CS_PROTO_SIMPLE)
            e->lat += par(f, CS_P_LAT_NET_SIMPLE) * US;
    } else if (lc.transport == CS_XPORT_SHM) {
        /* cs_shm.h: up to the socket holding the buffer at the sender's
         * copy efficiency, down at the receiver's, and that socket's
         * memory writes and reads each byte */
        cs_shm_mode_t m;
        cs_shm_route_t r;
        cs_shm_mode(cs_comm_settings(f->comm), pr, &m);
        if (!cs_shm_route(t, da, db, m.locality, cs_comm_settings(f->comm)->nvb_disable > 0, &r)) {
            g_set_error(err, CS_ERROR, CS_ERROR_TOPOLOGY, "%s -> %s: no path through host memory for SHM",
                        t->devs[da].name, t->devs[db].name);
            return FALSE;
        }
        gboolean send2, recv2;
        shm_twoway(f, algo, ch, a, b, &send2, &recv2);
        cs_path_t up = { .nhops = r.nup }, down = { .nhops = r.ndown };
        memcpy(up.links, r.links, sizeof(int) * r.nup);
        memcpy(down.links, r.links + r.nup, sizeof(int) * r.ndown);
        ok = add_path(f, e, &up, FALSE, FALSE, FALSE, cs_shm_side_eff(f->par, m.ce_send, send2)) &&
             add_path(f, e, &down, FALSE, FALSE, FALSE, cs_shm_side_eff(f->par, m.ce_recv, recv2));
        /* the buffer's socket memory, where the catalogue knows its rate */
        if (ok && isfinite(cs_shm_host_mem_bw(t, r.mem_cpu, f->par))) {
            ok = e->n < CS_FLOW_HMAX - 1;
            if (ok)
                e->h[e->n++] = (cs_flow_hop_t){ cs_flow_res_host_mem(t, r.mem_cpu), CS_SHM_MEM_TOUCHES };
        }
        e->lat += cs_shm_step_lat_us(f->par, &m) * US;
        double c = cs_shm_chan_bw(f->par, f->arch, m.ce_recv, recv2);
        /* phases one after the other (NCCL <= 2.7 Simple) load one
         * stream at a time, each with the whole ceiling */
        if (algo == CS_ALGO_TREE && !(pr == CS_PROTO_SIMPLE && cs_tree_phases_in_sequence(f->info->nccl_version)))
            c /= tree_shm_in(f, ch, b);
        e->cap = isfinite(c) ? c : 0;
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
            double c = 1.0 / (cs_params_nvlink_eff(f->par, cs_topo_link_gpu_sm(t, p->links[0])) *
                              cs_engine_nvswitch_share(f->par, f->coll, f->info->ppn));
            e->h[e->n++] = (cs_flow_hop_t){ cs_flow_res_nvl_out(f, a), c };
            e->h[e->n++] = (cs_flow_hop_t){ cs_flow_res_nvl_in(f, b), c };
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


/* An NVLS flow of one head (docs/model-flow.md): its NVLink ports, with
 * the coefficients of its reduction (out: its data for every head's
 * slice, 'ppn' x the slice, 'ppn' being the heads per node,
 * cs_program_nvls_heads; in: the reduced slice) or its multicast (out:
 * the slice; in: every head's slice), over the NVLS efficiency the
 * analytic engine uses (eff.nvls.sm90 / eff.nvls.sm100 of the NVLink
 * bandwidth, times cs_engine_nvls_ar_share for the heads among the
 * ranks). Latency: the step's synchronisation (lat.sync.<proto>). */
void cs_flow_build_nvls(const cs_flow_net_t *f, int rank, gboolean reduce, int ppn, cs_proto_t pr,
                        cs_flow_edge_t *e)
{
    double eff = (f->arch >= 3 ? par(f, CS_P_EFF_NVLS_SM100) : par(f, CS_P_EFF_NVLS_SM90)) *
                 cs_engine_nvls_ar_share(ppn, f->info->ppn);
    memset(e, 0, sizeof *e);
    e->h[e->n++] = (cs_flow_hop_t){ cs_flow_res_nvl_out(f, rank), (reduce ? ppn : 1) / eff };
    e->h[e->n++] = (cs_flow_hop_t){ cs_flow_res_nvl_in(f, rank), (reduce ? 1 : ppn) / eff };
    e->lat = proto_sync(f, pr);
}

double cs_flow_nvls_lat(const cs_flow_net_t *f)
{
    return par(f, CS_P_LAT_NVLS) * US;
}

double cs_flow_collnet_lat(const cs_flow_net_t *f, cs_algo_t algo)
{
    return par(f, algo == CS_ALGO_COLLNET_CHAIN ? CS_P_LAT_COLLNET_CHAIN : CS_P_LAT_COLLNET_DIRECT) * US;
}

/* ---- CollNet: the SHARP aggregation tree ---------------------------------
 * SHARP reduces in the switches along a tree over the NICs of one
 * CollNet communicator (one per head: coll_net.cc ncclCollNetSetup; the
 * Aggregation Manager builds the tree). Modelled per NIC rail k (the
 * heads' NICs of that local index on every node, as nodes of one shape
 * use the same NIC for a head): the tree is the union of the fabric
 * routes from every node's NIC k to the first node's, each hashed on k,
 * so that they converge (the routes to one NIC with one hash form a tree
 * in the rail and fat-tree fabrics); its root is the switch next to the
 * first node's NIC. A node's slice goes up its route to the root (the
 * first node's: its NIC's link to that switch) and the result comes back
 * down the reverse links. A link that n nodes' routes share carries the
 * partial sum once: each of them is charged 1/n of its slice there, so
 * every link carries a slice once each way when the heads move alike. */
typedef struct {
    int nnodes;
    int *off;                /* node -> first of its up links in 'links' (nnodes + 1) */
    int *links;              /* topology links, from the NIC up to the root */
    double *share;           /* per entry: 1 / the nodes whose up routes take that link */
    double *lat;             /* node -> its up route's links and switches, seconds */
    char *error;             /* the tree cannot be built (no switch, no route), or NULL */
} sharp_tree_t;

static void sharp_tree_free(gpointer p)
{
    sharp_tree_t *st = p;
    g_free(st->off);
    g_free(st->links);
    g_free(st->share);
    g_free(st->lat);
    g_free(st->error);
    g_free(st);
}

static const sharp_tree_t *sharp_tree(const cs_flow_net_t *f, int k)
{
    cs_flow_net_t *mf = (cs_flow_net_t *)f;   /* the cache only */
    if (mf->sharp == NULL)
        mf->sharp = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, sharp_tree_free);
    sharp_tree_t *st = g_hash_table_lookup(f->sharp, GINT_TO_POINTER(k + 1));
    if (st != NULL)
        return st;
    const cs_topo_t *t = f->topo;
    int N = t->nnodes;
    st = g_new0(sharp_tree_t, 1);
    st->nnodes = N;
    st->off = g_new0(int, N + 1);
    st->lat = g_new0(double, MAX(1, N));
    g_hash_table_insert(mf->sharp, GINT_TO_POINTER(k + 1), st);
    int anchor = -1, first = -1;
    for (int v = 0; v < N && anchor < 0; v++)
        if (cs_topo_node_gpus(t, v) > 0) {
            anchor = f->nic_dev[(gsize)v * f->nics_max + k];
            first = v;
        }
    GArray *links = g_array_new(FALSE, FALSE, sizeof(int));
    int root_link = -1;
    for (int v = 0; v < N; v++) {
        st->off[v] = (int)links->len;
        int nic = f->nic_dev[(gsize)v * f->nics_max + k];
        if (v == first || cs_topo_node_gpus(t, v) == 0)
            continue;
        cs_path_t p;
        if (anchor < 0 || nic < 0 || !cs_path_net(t, nic, anchor, (guint32)k, &p) || p.nhops < 2) {
            st->error = g_strdup_printf("CollNet: no switch between %s and %s to reduce in (SHARP needs an "
                                        "InfiniBand switch)", nic >= 0 ? t->devs[nic].name : "a node without NIC",
                                        anchor >= 0 ? t->devs[anchor].name : "?");
            break;
        }
        /* up to the switch before the first node's NIC */
        g_array_append_vals(links, p.links, p.nhops - 1);
        root_link = t->links[p.links[p.nhops - 1]].reverse;
    }
    st->off[N] = (int)links->len;
    if (st->error == NULL && root_link < 0)
        st->error = g_strdup("CollNet: a single node, no SHARP tree");
    if (st->error == NULL) {
        /* the first node's NIC: its link up to the root */
        GArray *all = g_array_new(FALSE, FALSE, sizeof(int));
        for (int v = 0; v < N; v++) {
            int from = st->off[v], to = st->off[v + 1];
            st->off[v] = (int)all->len;
            if (v == first)
                g_array_append_val(all, root_link);
            else
                g_array_append_vals(all, &g_array_index(links, int, from), to - from);
        }
        st->off[N] = (int)all->len;
        g_array_free(links, TRUE);
        links = all;
    }
    int n = (int)links->len;
    st->links = (int *)g_array_free(links, FALSE);
    st->share = g_new0(double, MAX(1, n));
    g_autofree int *count = g_new0(int, MAX(1, t->nlinks));
    for (int i = 0; i < n; i++)
        count[st->links[i]]++;
    for (int v = 0; v < N; v++)
        for (int i = st->off[v]; i < st->off[v + 1]; i++) {
            const cs_link_t *l = &t->links[st->links[i]];
            st->share[i] = 1.0 / count[st->links[i]];
            st->lat[v] += l->lat + (t->devs[l->dst].kind == CS_DEV_SWITCH ? t->fabric.switch_lat : 0);
        }
    return st;
}

/* A CollNet flow's edge: the root's reduction crosses nothing; a head's
 * slice goes from its GPU through its NIC (the CollNet graph's, as
 * cs_comm_chan_nic names it; host memory where there is no GPUDirect)
 * up the rail's SHARP tree, the result down it. */
static gboolean collnet_edge(const cs_flow_net_t *f, const cs_prog_flow_t *fl, int ch, cs_proto_t pr,
                             cs_flow_edge_t *e, GError **err)
{
    memset(e, 0, sizeof *e);
    if (fl->kind == CS_FLOW_COLLNET_ROOT)
        return TRUE;
    const cs_topo_t *t = f->topo;
    int r = fl->src, dev;
    int k = chan_nic(f, (cs_algo_t)fl->net_local, r, ch, &dev);
    const cs_path_t *pg = k >= 0 ? cs_path_cache_nic(f->cache, r, k) : NULL;
    const sharp_tree_t *st = k >= 0 ? sharp_tree(f, k) : NULL;
    if (pg == NULL || pg->type == CS_PATH_DIS || st == NULL || st->error != NULL) {
        g_set_error(err, CS_ERROR, CS_ERROR_TOPOLOGY, "%s: %s", cs_topo_rank_dev(t, r)->name,
                    st != NULL && st->error != NULL ? st->error : "no NIC for its CollNet channel");
        return FALSE;
    }
    gboolean up = fl->kind == CS_FLOW_COLLNET_UP;
    double extra = f->info->gdr || cs_path_gpu_c2c(t, t->rank_dev[r]) ? 1.0 : par(f, CS_P_EFF_HOST_STAGED);
    double peff = cs_flow_proto_eff(f, pr);
    int v = t->devs[t->rank_dev[r]].node;
    gboolean ok = !up || add_path(f, e, pg, FALSE, TRUE, FALSE, extra);
    int a = st->off[v], b = st->off[v + 1];
    for (int i = 0; ok && i < b - a; i++) {
        int at = up ? a + i : b - 1 - i;
        int l = up ? st->links[at] : t->links[st->links[at]].reverse;
        ok = e->n < CS_FLOW_HMAX - 1;
        if (ok) {
            e->h[e->n].res = l;
            e->h[e->n].coeff = st->share[at] / (par(f, CS_P_EFF_NET) * extra);
            e->n++;
        }
    }
    e->lat += st->lat[v];
    if (ok && !up)
        ok = add_path(f, e, pg, TRUE, TRUE, FALSE, extra);
    if (!ok) {
        g_set_error(err, CS_ERROR, CS_ERROR_TOPOLOGY, "%s: its CollNet route up the SHARP tree is too long",
                    cs_topo_rank_dev(t, r)->name);
        return FALSE;
    }
    e->lat += par(f, CS_P_LAT_HOP_NET) * US + par(f, CS_P_LAT_NET_SIMPLE) * US;
    for (int h = 0; h < e->n; h++)
        e->h[h].coeff /= peff;
    e->lat += proto_sync(f, pr);
    return TRUE;
}

gboolean cs_flow_build_flow_edge(const cs_flow_net_t *f, const cs_prog_flow_t *fl, int ch, cs_proto_t pr,
                                 cs_flow_edge_t *e, GError **err)
{
    if (fl->kind == CS_FLOW_COLLNET_UP || fl->kind == CS_FLOW_COLLNET_ROOT || fl->kind == CS_FLOW_COLLNET_DOWN)
        return collnet_edge(f, fl, ch, pr, e, err);
    if (fl->kind != CS_FLOW_P2P) {
        /* a head's ports: its part of every head's slice out, every
         * head's multicast in (cs_program_nvls_heads) */
        cs_flow_build_nvls(f, fl->src, fl->kind == CS_FLOW_NVLS_REDUCE, cs_program_nvls_heads(f->info), pr, e);
        return TRUE;
    }
    if (fl->net_local == CS_PROG_NET_P2P) {
        if (fl->src == fl->dst) {
            /* a rank's send to itself (AlltoAll): a copy in its own
             * memory, the sender's memory passes only */
            memset(e, 0, sizeof *e);
            e->lat = proto_sync(f, pr);
            return TRUE;
        }
        /* p2p: each GPU's own NIC for the channel, route hashed on it */
        return build_edge(f, CS_ALGO_P2P, ch, (guint32)ch, fl->src, fl->dst, pr, e, err);
    }
    if (fl->net_local >= 0) {
        /* NVLSTree: each head's tree leaves through the NIC of the NVLS
         * channels it heads (search.cc getNvlsNetDev); the fabric route
         * is hashed on that NIC's local index, as every channel of the
         * head's tree takes the same NIC */
        int dev, k = chan_nic(f, CS_ALGO_NVLS_TREE, fl->src, ch, &dev);
        return build_edge(f, CS_ALGO_NVLS_TREE, ch, (guint32)MAX(0, k), fl->src, fl->dst, pr, e, err);
    }
    /* Tree: the tree graph's NICs (its heads use inter[2c]) */
    return build_edge(f, CS_ALGO_TREE, ch, (guint32)ch, fl->src, fl->dst, pr, e, err);
}

double cs_flow_p2p_drain(gboolean p2p, cs_proto_t pr, const cs_prog_flow_t *fl, double chan_cap)
{
    if (!p2p || pr != CS_PROTO_SIMPLE || fl->kind != CS_FLOW_P2P || fl->src == fl->dst || fl->direct ||
        !(chan_cap > 0))
        return 0;
    return (double)MIN(fl->bytes, fl->unit) / chan_cap;
}

double cs_flow_flow_cap(const cs_flow_net_t *f, const cs_program_t *prog, int ch, int fi, const cs_flow_edge_t *e,
                        double chan_cap)
{
    const cs_prog_flow_t *fl = &prog->flows[fi];
    /* the switches reduce at line rate: the root has no ceiling of its
     * own (its inputs' links bound it) */
    if (fl->kind == CS_FLOW_COLLNET_ROOT)
        return 1e30;
    double cap = chan_cap / fl->cap_div;
    if ((fl->kind == CS_FLOW_NVLS_REDUCE || fl->kind == CS_FLOW_NVLS_MCAST) && prog->coll == CS_COLL_ALLREDUCE) {
        /* the heads' chunks of a step come through the copy warps one
         * after the other, the reduction's after the scatter, the
         * multicast's before the gather */
        double unit = cs_program_flow_bytes(prog, ch, fi, 0);
        double floor_s = cs_engine_nvls_step_floor(f->par, f->arch, f->info->nranks, prog->algo == CS_ALGO_NVLS_TREE,
                                                   cs_program_nvls_heads(f->info), (double)prog->chunk,
                                                   cs_program_unit_bytes(prog, ch, 0));
        if (floor_s > 0)
            cap = MIN(cap, unit / floor_s);
    }
    /* a point-to-point part's warp group waits out every Simple step's
     * fence and flag before its next copy (cs_engine_p2p_step_sync_s): at
     * its rate a step of 'unit' bytes takes that much longer */
    if (prog->p2p && prog->proto == CS_PROTO_SIMPLE && fl->kind == CS_FLOW_P2P && fl->src != fl->dst)
        cap = cs_engine_p2p_step_cap(cap, (double)MIN(fl->bytes, fl->unit), proto_sync(f, CS_PROTO_SIMPLE));
    if (fl->net_local != CS_PROG_NET_P2P)
        return cap;
    /* paths.cc NCCL_P2P_PER_CHANNEL_NET_BW: what NCCL expects of one
     * channel's network sends (14 GB/s), the reason it gives a NIC several
     * channels; as the analytic engine */
    for (int h = 0; h < e->n; h++)
        if (e->h[h].res < f->topo->nlinks && f->topo->links[e->h[h].res].kind == CS_LINK_NET)
            return MIN(cap, f->info->p2p_net_ch_bw * GBPS);
    return cap;
}

double cs_flow_shm_cap(gboolean p2p, const cs_prog_flow_t *fl, const cs_flow_edge_t *e, double cap)
{
    if (!(e->cap > 0))
        return cap;
    /* a collective's flow is its channel's one stream; a point-to-point
     * part shares the channel's SHM ceiling with the other works of its
     * receiver's batch that receive from a peer (recv_div, cs_program.c
     * p2p_new; not the self copy), as t_p2p bounds the busiest channel's
     * received parts */
    return MIN(cap, p2p ? e->cap / MAX(1.0, fl->recv_div) : e->cap);
}

gboolean cs_flow_program_shape(const cs_flow_net_t *f, const cs_engine_call_t *call, cs_flow_shape_t *shape_p,
                               GError **err)
{
    const cs_decision_t *d = call->decision;
    cs_flow_shape_t sh = { 0 };
    if (f->info->nranks <= 1) {
        *shape_p = sh;
        return TRUE;
    }
    /* the orders as the engines build them */
    g_autofree int *orders = cs_flow_prog_orders(f, d);
    g_autoptr(cs_program_t) p = cs_program_new(f->info, f->coll, d, call->nccl_bytes, f->root, orders, err);
    if (p == NULL)
        return FALSE;
    sh.dataflow = p->nflows > 0;
    if (sh.dataflow) {
        sh.lanes = p->nflows;
        sh.deps = p->dep_off[p->nflows];
        for (int ch = 0; ch < p->nch; ch++)
            for (int fi = p->flow_off[ch]; fi < p->flow_off[ch + 1]; fi++)
                sh.units = MAX(sh.units, cs_program_flow_units(p, ch, fi));
    } else {
        sh.lanes = (gint64)p->nch * p->nranks;
        for (int ch = 0; ch < p->nch; ch++)
            for (int pos = 0; pos < p->nranks; pos++)
                sh.units = MAX(sh.units, cs_program_nops(p, ch, pos));
    }
    *shape_p = sh;
    return TRUE;
}
