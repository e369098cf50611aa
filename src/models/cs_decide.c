/* The communicator of every GPU of a topology as NCCL v2.28.9 would set it
 * up (init.cc initTransportsRank): transports between peers, NCCL nodes
 * (hosts, split where GPUs can only talk through the network), the ring /
 * tree / NVLS graph searches per distinct node shape, the AllGather3
 * agreement (min channels and bandwidth, max path types), ncclTopoPostset's
 * channel count, and the tuning tables (cs_decide_tune.c). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/cs_decide_int.h"
#include "util/cs_error.h"
#include "util/cs_units.h"

static const char *const transport_names[CS_XPORT_COUNT] = {
    "P2P/NVL", "P2P/PCI", "SHM", "NET/IB", "NET/Socket"
};

const char *cs_transport_name(cs_transport_t x)
{
    return (unsigned)x < CS_XPORT_COUNT ? transport_names[x] : "?";
}

/* ---- host shapes ------------------------------------------------------- */

/* Devices of every node in index order, built in one pass. */
typedef struct {
    int *off;       /* node -> first entry */
    int *devs;
    int *pos;       /* device -> position within its node, -1 */
} node_devs_t;

static void node_devs_build(const cs_topo_t *t, node_devs_t *nd)
{
    nd->off = g_new0(int, t->nnodes + 2);
    nd->devs = g_new0(int, MAX(t->ndevs, 1));
    nd->pos = g_new(int, MAX(t->ndevs, 1));
    for (int i = 0; i < t->ndevs; i++)
        if (t->devs[i].node >= 0 && t->devs[i].node < t->nnodes)
            nd->off[t->devs[i].node + 1]++;
    for (int n = 0; n < t->nnodes; n++)
        nd->off[n + 1] += nd->off[n];
    g_autofree int *fill = g_memdup2(nd->off, sizeof(int) * (t->nnodes + 1));
    for (int i = 0; i < t->ndevs; i++) {
        int n = t->devs[i].node;
        nd->pos[i] = -1;
        if (n >= 0 && n < t->nnodes) {
            nd->pos[i] = fill[n] - nd->off[n];
            nd->devs[fill[n]++] = i;
        }
    }
}

static void node_devs_clear(node_devs_t *nd)
{
    g_free(nd->off);
    g_free(nd->devs);
    g_free(nd->pos);
}

/* Bytes that are equal for two hosts exactly when NCCL would see the same
 * system on both: devices in order with their properties, and the links
 * between them (binary, so that 1000 hosts hash in a few milliseconds). */
static void sig_int(GByteArray *b, gint64 v)
{
    g_byte_array_append(b, (const guint8 *)&v, sizeof v);
}

static void sig_double(GByteArray *b, double v)
{
    g_byte_array_append(b, (const guint8 *)&v, sizeof v);
}

static GBytes *host_signature(const cs_topo_t *t, const node_devs_t *nd, int host)
{
    GByteArray *b = g_byte_array_new();
    for (int i = nd->off[host]; i < nd->off[host + 1]; i++) {
        const cs_device_t *d = &t->devs[nd->devs[i]];
        sig_int(b, d->kind);
        sig_int(b, (gint64)(gintptr)d->gpu);
        sig_int(b, d->local);
        sig_int(b, d->gdr);
        sig_int(b, d->p2p_force);
        sig_int(b, d->vendor);
        sig_int(b, d->socket);
        sig_int(b, d->nic_kind);
        sig_double(b, d->nic_bw);
        sig_int(b, d->nic_ports);
        if (d->ifname != NULL)
            g_byte_array_append(b, (const guint8 *)d->ifname, strlen(d->ifname));
        sig_int(b, -1);
        for (int k = t->adj_off[nd->devs[i]]; k < t->adj_off[nd->devs[i] + 1]; k++) {
            const cs_link_t *l = &t->links[t->adj[k]];
            sig_int(b, t->devs[l->dst].node == host ? nd->pos[l->dst] : -1);
            sig_int(b, l->kind);
            sig_double(b, l->nccl_bw);
            sig_double(b, l->bw);
            sig_int(b, l->count);
        }
        sig_int(b, -2);
    }
    return g_byte_array_free_to_bytes(b);
}

/* g_bytes_hash goes byte by byte; signatures are long, so hash words. */
static guint sig_hash(gconstpointer key)
{
    gsize n;
    const guint8 *p = g_bytes_get_data((GBytes *)key, &n);
    guint64 h = 0x9e3779b97f4a7c15u ^ n;
    gsize i = 0;
    for (; i + 8 <= n; i += 8) {
        guint64 w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdu;
        h ^= h >> 32;
    }
    for (; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3u;
    return (guint)(h ^ (h >> 32));
}

/* Per host shape: its network devices, the GPU pair matrix and the NCCL
 * nodes (domains) it splits into. */
typedef struct {
    int host;                 /* representative */
    int ngpus;
    int *gpu_devs;            /* representative's GPU devices, local order */
    cs_netsel_t net;
    cs_link_choice_t *pairs;  /* [a*G+b] */
    int ndom;
    int *dom_of;              /* local GPU -> domain */
    int *dom_shape;           /* domain -> index into comm->shapes */
} host_shape_t;

static void host_shape_free(gpointer p)
{
    host_shape_t *h = p;
    g_free(h->gpu_devs);
    cs_netsel_clear(&h->net);
    g_free(h->pairs);
    g_free(h->dom_of);
    g_free(h->dom_shape);
    g_free(h);
}

/* NCCL's bandwidth of an intra path with the NVSwitches merged (topo.cc
 * connects every GPU to one NVS node with the sum of its NVLinks). */
static double merged_path_bw(const cs_topo_t *t, const cs_path_t *p)
{
    if (p->nhops == 0)
        return p->nccl_bw;
    double bw = INFINITY;
    for (int i = 0; i < p->nhops; i++) {
        const cs_link_t *l = &t->links[p->links[i]];
        const cs_device_t *a = &t->devs[l->src], *b = &t->devs[l->dst];
        double v = l->nccl_bw;
        if (a->kind == CS_DEV_NVSWITCH && b->kind == CS_DEV_NVSWITCH)
            continue;
        if ((a->kind == CS_DEV_GPU && b->kind == CS_DEV_NVSWITCH) ||
            (a->kind == CS_DEV_NVSWITCH && b->kind == CS_DEV_GPU)) {
            int gpu = a->kind == CS_DEV_GPU ? l->src : l->dst;
            gboolean up = a->kind == CS_DEV_GPU;
            v = 0;
            for (int k = t->adj_off[gpu]; k < t->adj_off[gpu + 1]; k++) {
                const cs_link_t *x = &t->links[t->adj[k]];
                if (x->kind == CS_LINK_NVL && t->devs[x->dst].kind == CS_DEV_NVSWITCH)
                    v += up ? x->nccl_bw : t->links[x->reverse].nccl_bw;
            }
        }
        bw = MIN(bw, v);
    }
    return bw;
}

/* Best bandwidth a GPU reaches a network device with, through PXB or
 * closer (paths.cc ncclTopoCheckNet). */
static double gpu_net_speed(const cs_topo_t *t, const cs_nccl_settings_t *s, int gpu,
                            const cs_netsel_t *net)
{
    double best = 0;
    for (int n = 0; n < net->n; n++) {
        if (net->devs[n].dev < 0)
            continue;
        cs_path_t p;
        cs_path_intra(t, gpu, net->devs[n].dev, s->nvb_disable, &p);
        if (p.type <= CS_PATH_PXB)
            best = MAX(best, MIN(p.nccl_bw, net->devs[n].speed));
    }
    return best;
}

/* Transport between two GPUs of one host (p2p.cc p2pCanConnect, shm.cc
 * shmCanConnect, paths.cc ncclTopoCheckNet). net_speed_a and net_speed_b
 * are gpu_net_speed of da and db (searched once per GPU by the caller: on
 * an NVL72 rack, per pair, they were most of a run's time). */
static void pair_choice(const cs_topo_t *t, const cs_nccl_settings_t *s, int da, int db,
                        int host_gpus, const cs_netsel_t *net, double net_speed_a, double net_speed_b,
                        cs_link_choice_t *out)
{
    cs_path_t p;
    gboolean p2p = cs_sys_p2p(t, s, da, db, host_gpus, &p);
    double speed;
    memset(out, 0, sizeof *out);
    out->path = p.type;
    if (p2p) {
        speed = merged_path_bw(t, &p);
    } else {
        int cpu = cs_topo_node_cpu_of(t, db);
        cs_path_t p1, p2;
        cs_path_intra(t, da, cpu, s->nvb_disable, &p1);
        cs_path_intra(t, cpu, db, s->nvb_disable, &p2);
        speed = MIN(merged_path_bw(t, &p1), merged_path_bw(t, &p2));
        out->path = MAX(p1.type, p2.type);
    }
    out->nccl_bw = speed;
    gboolean use_net = FALSE;
    if (!s->net_disable_intra && net->kind != CS_NET_NONE) {
        use_net = net_speed_a > speed && net_speed_b > speed;
    }
    if (p2p && !use_net) {
        out->transport = p.type <= CS_PATH_NVB ? CS_XPORT_P2P_NVL : CS_XPORT_P2P_PCI;
        out->p2p_read = p.type == CS_PATH_NVL && t->devs[da].gpu->sm == 80 &&
                        t->devs[db].gpu->sm == 80;
    } else if (!s->shm_disable && !use_net) {
        out->transport = CS_XPORT_SHM;
    } else {
        out->transport = net->kind == CS_NET_IB ? CS_XPORT_NET_IB : CS_XPORT_NET_SOCKET;
        out->path = CS_PATH_NET;
    }
}

static gboolean is_net(cs_transport_t x)
{
    return x == CS_XPORT_NET_IB || x == CS_XPORT_NET_SOCKET;
}

/* ---- per NCCL node shape: the searches ------------------------------------ */

static void shape_free(gpointer p)
{
    cs_shape_t *sh = p;
    cs_graph_clear(&sh->ring);
    cs_graph_clear(&sh->tree);
    cs_graph_clear(&sh->nvls);
    cs_graph_clear(&sh->cn_chain);
    cs_graph_clear(&sh->cn_direct);
    cs_sys_free(sh->sys);
    g_free(sh->pairs);
    g_free(sh);
}

static gboolean nvls_possible(const cs_comm_t *c, const cs_sys_t *sys)
{
    /* nvls.cc ncclNvlsInit: NCCL_NVLS_ENABLE, at least 2 GPUs, and
     * multicast support (CUDA reports it for sm90+ GPUs on NVSwitch). */
    return c->s.nvls_enable != 0 && sys->ngpus >= 2 && sys->nvs && sys->cc_min >= 90;
}

static void shape_search(cs_comm_t *c, cs_shape_t *sh)
{
    int G = sh->sys->ngpus;
    cs_graph_init(&sh->ring, 0, CS_PATTERN_RING, 1, CS_MAXCHANNELS / 2, G);
    cs_graph_compute(sh->sys, &sh->ring);
    cs_graph_init(&sh->tree, 1, CS_PATTERN_BALANCED_TREE, sh->ring.nch, sh->ring.nch, G);
    cs_graph_compute(sh->sys, &sh->tree);
    /* init.cc: the CollNet chain (id 2, pattern TREE, the ring's
     * channels) and direct (id 4) graphs, searched only where CollNet is
     * on (the plugin loaded), only over NICs with CollNet support */
    cs_graph_init(&sh->cn_chain, 2, CS_PATTERN_TREE, sh->ring.nch, sh->ring.nch, G);
    cs_graph_init(&sh->cn_direct, 4, CS_PATTERN_COLLNET_DIRECT, 1, CS_MAXCHANNELS, G);
    sh->cn_chain.collnet = sh->cn_direct.collnet = TRUE;
    if (c->collnet_plugin && sh->sys->inter) {
        cs_graph_compute(sh->sys, &sh->cn_chain);
        cs_graph_compute(sh->sys, &sh->cn_direct);
    }
    cs_graph_init(&sh->nvls, 3, CS_PATTERN_NVLS, 1, CS_MAXCHANNELS, G);
    if (nvls_possible(c, sh->sys))
        cs_graph_compute(sh->sys, &sh->nvls);
}

/* ---- the communicator ---------------------------------------------------- */

static const cs_graph_t *algo_graph(const cs_shape_t *sh, int a)
{
    switch (a) {
    case CS_ALGO_TREE:
    case CS_ALGO_PAT:
        return &sh->tree;   /* init.cc: graphs[PAT] = treeGraph */
    case CS_ALGO_RING:
        return &sh->ring;
    case CS_ALGO_NVLS:
    case CS_ALGO_NVLS_TREE:
        return &sh->nvls;
    case CS_ALGO_COLLNET_CHAIN:
        return &sh->cn_chain;
    case CS_ALGO_COLLNET_DIRECT:
        return &sh->cn_direct;
    default:
        return NULL;
    }
}

/* init.cc AllGather3: every rank takes the min channel count and
 * bandwidth and the max path types over all ranks. */
static void agree_graphs(cs_comm_t *c)
{
    for (int a = 0; a < CS_ALGO_COUNT; a++) {
        c->graph_nch[a] = G_MAXINT;
        c->graph_bw_intra[a] = c->graph_bw_inter[a] = INFINITY;
        c->graph_lat_inter[a] = INFINITY;
        c->graph_type_intra[a] = c->graph_type_inter[a] = 0;
    }
    c->max_tree_pattern = 0;
    for (int n = 0; n < c->nnodes; n++) {
        const cs_shape_t *sh = g_ptr_array_index(c->shapes, c->nodes[n].shape);
        for (int a = 0; a < CS_ALGO_COUNT; a++) {
            const cs_graph_t *g = algo_graph(sh, a);
            int nch = g ? g->nch : 0;
            c->graph_nch[a] = MIN(c->graph_nch[a], nch);
            c->graph_bw_intra[a] = MIN(c->graph_bw_intra[a], g ? g->bw_intra : 0);
            c->graph_bw_inter[a] = MIN(c->graph_bw_inter[a], g ? g->bw_inter : 0);
            c->graph_lat_inter[a] = MIN(c->graph_lat_inter[a], g ? g->lat_inter : 0);
            c->graph_type_intra[a] = MAX(c->graph_type_intra[a], g ? g->type_intra : 0);
            c->graph_type_inter[a] = MAX(c->graph_type_inter[a], g ? g->type_inter : 0);
            c->graph_same[a] = n == 0 ? (g ? g->same_channels : 0)
                                      : MIN(c->graph_same[a], g ? g->same_channels : 0);
        }
        c->max_tree_pattern = MAX(c->max_tree_pattern, sh->tree.pattern);
    }
    /* init.cc: comm nChannels = min(tree, ring); both graphs take it. */
    c->nch = MIN(c->graph_nch[CS_ALGO_TREE], c->graph_nch[CS_ALGO_RING]);
    c->graph_nch[CS_ALGO_TREE] = c->graph_nch[CS_ALGO_RING] = c->graph_nch[CS_ALGO_PAT] = c->nch;
}

/* connect.cc ncclTopoPostset: the channel count the kernels get. */
static int postset_channels(const cs_comm_t *c)
{
    int nch = cs_collnet_postset(c, MIN(CS_MAXCHANNELS, c->nch * 2));
    if (c->info.cc >= 90 && c->nnodes > 1 && c->graph_bw_intra[CS_ALGO_RING] > 45.0 && nch < 16)
        nch *= 2;
    nch = MIN(MIN(c->s.max_nchannels, nch), c->s.max_ctas);
    nch = MAX(nch, MAX(c->s.min_nchannels, c->s.min_ctas));
    return nch;
}

static gboolean build_nodes(cs_comm_t *c, GError **err)
{
    const cs_topo_t *t = c->t;
    node_devs_t nd;
    node_devs_build(t, &nd);
    g_autoptr(GHashTable) sig = g_hash_table_new_full(sig_hash, g_bytes_equal,
                                                      (GDestroyNotify)g_bytes_unref, NULL);
    GPtrArray *hosts = g_ptr_array_new_with_free_func(host_shape_free);
    g_autofree int *host_of = g_new(int, MAX(t->nnodes, 1));
    int hosts_with_gpus = 0;
    for (int h = 0; h < t->nnodes; h++)
        if (cs_topo_node_gpus(t, h) > 0)
            hosts_with_gpus++;
    gboolean ok = TRUE;

    for (int h = 0; h < t->nnodes && ok; h++) {
        host_of[h] = -1;
        int G = cs_topo_node_gpus(t, h);
        if (G == 0)
            continue;
        GBytes *s = host_signature(t, &nd, h);
        gpointer v = g_hash_table_lookup(sig, s);
        if (v != NULL) {
            host_of[h] = GPOINTER_TO_INT(v) - 1;
            g_bytes_unref(s);
            continue;
        }
        host_shape_t *hs = g_new0(host_shape_t, 1);
        hs->host = h;
        hs->ngpus = G;
        hs->gpu_devs = g_new(int, G);
        for (int i = 0; i < G; i++)
            hs->gpu_devs[i] = t->rank_dev[t->node_first_rank[h] + i];
        if (!cs_netsel_host(t, h, &c->s, hosts_with_gpus > 1, &hs->net, err)) {
            host_shape_free(hs);
            g_bytes_unref(s);
            ok = FALSE;
            break;
        }
        hs->pairs = g_new0(cs_link_choice_t, G * G);
        double *net_speed = g_new0(double, G);
        if (!c->s.net_disable_intra && hs->net.kind != CS_NET_NONE)
            for (int a = 0; a < G; a++)
                net_speed[a] = gpu_net_speed(t, &c->s, hs->gpu_devs[a], &hs->net);
        for (int a = 0; a < G; a++)
            for (int b = 0; b < G; b++)
                if (a != b)
                    pair_choice(t, &c->s, hs->gpu_devs[a], hs->gpu_devs[b], G, &hs->net, net_speed[a],
                                net_speed[b], &hs->pairs[a * G + b]);
        g_free(net_speed);
        /* paths.cc ncclTopoTrimSystem: GPUs joined by P2P or SHM form one
         * NCCL node; the others are reached through the network. */
        hs->dom_of = g_new(int, G);
        for (int g = 0; g < G; g++) {
            hs->dom_of[g] = g;
            for (int p = 0; p < g; p++)
                if (!is_net(hs->pairs[g * G + p].transport))
                    hs->dom_of[g] = MIN(hs->dom_of[g], hs->dom_of[p]);
        }
        /* renumber domains 0..ndom-1 in order of first GPU */
        g_autofree int *map = g_new(int, G);
        for (int g = 0; g < G; g++)
            map[g] = -1;
        for (int g = 0; g < G; g++) {
            int d = hs->dom_of[g];
            if (map[d] < 0)
                map[d] = hs->ndom++;
            hs->dom_of[g] = map[d];
        }
        if (hs->net.kind == CS_NET_NONE && hs->ndom > 1) {
            cs_set_error_at(err, NULL, 0, "node %d: its GPUs can reach each other neither by "
                            "P2P nor by SHM, and there is no network device; expected "
                            "NCCL_SHM_DISABLE=0 or NCCL_P2P_LEVEL allowing P2P", h);
            host_shape_free(hs);
            g_bytes_unref(s);
            ok = FALSE;
            break;
        }
        hs->dom_shape = g_new0(int, hs->ndom);
        g_ptr_array_add(hosts, hs);
        host_of[h] = (int)hosts->len - 1;
        g_hash_table_insert(sig, s, GINT_TO_POINTER(hosts->len));
    }
    node_devs_clear(&nd);
    if (!ok) {
        g_ptr_array_free(hosts, TRUE);
        return FALSE;
    }

    /* NCCL nodes, in rank order */
    c->nnodes = 0;
    for (int h = 0; h < t->nnodes; h++)
        if (host_of[h] >= 0)
            c->nnodes += ((host_shape_t *)g_ptr_array_index(hosts, host_of[h]))->ndom;
    gboolean inter = c->nnodes > 1;
    if (inter) {
        for (guint i = 0; i < hosts->len; i++) {
            host_shape_t *hs = g_ptr_array_index(hosts, i);
            gboolean only_lo = hs->net.n > 0;
            for (int n = 0; n < hs->net.n; n++)
                if (hs->net.devs[n].dev >= 0)
                    only_lo = FALSE;
            if (hs->net.kind == CS_NET_NONE || (only_lo && hosts_with_gpus > 1)) {
                cs_set_error_at(err, NULL, 0, "node %d has no network interface other than "
                                "loopback; NCCL cannot reach the other nodes; expected a NIC "
                                "(check NCCL_SOCKET_IFNAME / NCCL_IB_HCA)", hs->host);
                g_ptr_array_free(hosts, TRUE);
                return FALSE;
            }
        }
    }
    /* coll_net.h collNetSupport: decided before the searches (init.cc) */
    cs_collnet_plugin(c, hosts_with_gpus > 1);
    for (guint i = 0; i < hosts->len && c->collnet_plugin; i++) {
        const host_shape_t *hs = g_ptr_array_index(hosts, i);
        if (hs->net.kind != CS_NET_IB) {
            c->collnet_plugin = FALSE;
            break;
        }
        for (int n = 0; n < hs->net.n; n++)
            if (hs->net.devs[n].dev < 0 || t->devs[hs->net.devs[n].dev].nic_kind != CS_NIC_IB) {
                c->collnet_plugin = FALSE;
                break;
            }
    }
    if (c->s.collnet_enable && hosts_with_gpus <= 1 && c->collnet_note == NULL)
        c->collnet_note = g_strdup("NCCL_COLLNET_ENABLE=1: CollNet (SHARP) stays off: one node, nothing crosses "
                                   "the network to reduce in it (init.cc: CollNet needs several nodes)");
    else if (c->s.collnet_enable && !c->collnet_plugin && c->collnet_note == NULL)
        c->collnet_note = g_strdup("NCCL_COLLNET_ENABLE=1: CollNet (SHARP) stays off: in-network reduction needs "
                                   "InfiniBand (Quantum switches and the SHARP plugin), and the network NCCL "
                                   "uses here is RoCE or sockets");
    /* systems and searches per (host shape, domain) */
    for (guint i = 0; i < hosts->len; i++) {
        host_shape_t *hs = g_ptr_array_index(hosts, i);
        for (int d = 0; d < hs->ndom; d++) {
            int G = 0;
            g_autofree int *devs = g_new(int, hs->ngpus);
            g_autofree int *loc = g_new(int, hs->ngpus);
            for (int g = 0; g < hs->ngpus; g++)
                if (hs->dom_of[g] == d) {
                    loc[G] = g;
                    devs[G++] = hs->gpu_devs[g];
                }
            cs_shape_t *sh = g_new0(cs_shape_t, 1);
            cs_netsel_t nets = hs->net;
            if (!inter)
                nets.n = 0;
            sh->net = hs->net;
            sh->sys = cs_sys_new(t, &c->s, devs, G, hs->ngpus, &nets, inter);
            sh->pairs = g_new0(cs_link_choice_t, G * G);
            for (int a = 0; a < G; a++)
                for (int b = 0; b < G; b++)
                    if (a != b)
                        sh->pairs[a * G + b] = hs->pairs[loc[a] * hs->ngpus + loc[b]];
            shape_search(c, sh);
            g_ptr_array_add(c->shapes, sh);
            hs->dom_shape[d] = (int)c->shapes->len - 1;
        }
    }
    c->nodes = g_new0(cs_nnode_t, MAX(c->nnodes, 1));
    c->rank_node = g_new(int, MAX(t->ngpus, 1));
    c->rank_local = g_new(int, MAX(t->ngpus, 1));
    int k = 0;
    for (int h = 0; h < t->nnodes; h++) {
        if (host_of[h] < 0)
            continue;
        host_shape_t *hs = g_ptr_array_index(hosts, host_of[h]);
        for (int d = 0; d < hs->ndom; d++) {
            cs_nnode_t *nn = &c->nodes[k];
            nn->host = h;
            nn->shape = hs->dom_shape[d];
            nn->ranks = g_new(int, hs->ngpus);
            for (int g = 0; g < hs->ngpus; g++)
                if (hs->dom_of[g] == d) {
                    int r = t->node_first_rank[h] + g;
                    c->rank_node[r] = k;
                    c->rank_local[r] = nn->ngpus;
                    nn->ranks[nn->ngpus++] = r;
                }
            k++;
        }
    }
    c->hosts = hosts;
    c->host_of = g_steal_pointer(&host_of);
    return TRUE;
}

static cs_shape_t *node_shape(const cs_comm_t *c, int n)
{
    return g_ptr_array_index(c->shapes, c->nodes[n].shape);
}

/* NET choice for a rank talking to another NCCL node: its preferred NIC
 * for channel 0 (topo.cc ncclTopoGetLocalNet). */
static void inter_choice(const cs_comm_t *c, int rank, cs_link_choice_t *out)
{
    const cs_shape_t *sh = node_shape(c, c->rank_node[rank]);
    const cs_sys_t *sys = sh->sys;
    int g = c->rank_local[rank];
    memset(out, 0, sizeof *out);
    out->transport = sh->net.kind == CS_NET_IB ? CS_XPORT_NET_IB : CS_XPORT_NET_SOCKET;
    out->path = CS_PATH_NET;
    int n = sys->nnets > 0 ? cs_sys_local_net(sys, g, 0) : -1;
    if (n >= 0) {
        const cs_spath_t *p = &sys->g2n[g * sys->nnets + n];
        out->gdr = sys->gdr[g * sys->nnets + n];
        out->nccl_bw = p->bw;
    }
}

void cs_comm_pair(const cs_comm_t *c, int rank_a, int rank_b, cs_link_choice_t *out)
{
    g_return_if_fail(c != NULL && out != NULL);
    memset(out, 0, sizeof *out);
    int n = c->info.nranks;
    if (rank_a < 0 || rank_a >= n || rank_b < 0 || rank_b >= n)
        return;
    if (rank_a == rank_b) {
        out->transport = CS_XPORT_P2P_NVL;
        out->path = CS_PATH_LOC;
        out->nccl_bw = CS_LOC_BW;
        return;
    }
    int na = c->rank_node[rank_a], nb = c->rank_node[rank_b];
    if (na == nb) {
        const cs_shape_t *sh = node_shape(c, na);
        int G = sh->sys->ngpus;
        *out = sh->pairs[c->rank_local[rank_a] * G + c->rank_local[rank_b]];
        return;
    }
    int ha = c->nodes[na].host, hb = c->nodes[nb].host;
    if (ha == hb) {
        /* one host split into NCCL nodes: the host's pair choice (NET) */
        const host_shape_t *hs = g_ptr_array_index(c->hosts, c->host_of[ha]);
        int first = c->t->node_first_rank[ha];
        *out = hs->pairs[(rank_a - first) * hs->ngpus + (rank_b - first)];
        return;
    }
    inter_choice(c, rank_a, out);
}

void cs_comm_chan_order(const cs_comm_t *c, cs_algo_t algo, int ch, int *order)
{
    int k = 0;
    for (int n = 0; n < c->nnodes; n++) {
        const cs_shape_t *sh = node_shape(c, n);
        int G = sh->sys->ngpus;
        if (cs_collnet_chan_order(c, n, algo, ch, order + k)) {
            k += G;
            continue;
        }
        const cs_graph_t *g = algo == CS_ALGO_TREE ? &sh->tree : &sh->ring;
        /* init.cc: the ring and tree graphs keep the communicator's
         * channel count; connect.cc ncclTopoPostset copies channel c to
         * c + nChannels */
        int gc = c->nch > 0 && g->nch > 0 ? ch % MIN(c->nch, g->nch) : 0;
        /* connect.cc ncclTopoPostset: with crossNic 2 odd nodes swap the
         * rings of channels c and c^1 so that rings alternate rails. */
        if (algo != CS_ALGO_TREE && g->cross_nic == 2 && c->nch % 2 == 0 && c->nch >= 2 && n % 2 == 1 &&
            (gc ^ 1) < g->nch)
            gc ^= 1;
        /* connect.cc ncclTopoPreset: a tree channel's chain goes up from
         * treeIntra[G-1] to treeIntra[0], which meets the other nodes */
        for (int i = 0; i < G; i++)
            order[k++] = c->nodes[n].ranks[g->intra[gc * G + (algo == CS_ALGO_TREE ? G - 1 - i : i)]];
    }
}

static void fill_ring_order(cs_comm_t *c)
{
    cs_comm_info_t *in = &c->info;
    in->ring_order = g_new0(int, MAX(in->nranks, 1));
    cs_comm_chan_order(c, CS_ALGO_RING, 0, in->ring_order);
}

static void fill_info(cs_comm_t *c)
{
    const cs_topo_t *t = c->t;
    cs_comm_info_t *in = &c->info;
    in->nranks = t->ngpus;
    in->nnodes = c->nnodes;
    in->ppn = G_MAXINT;
    c->max_local_ranks = 0;
    for (int n = 0; n < c->nnodes; n++) {
        in->ppn = MIN(in->ppn, c->nodes[n].ngpus);
        c->max_local_ranks = MAX(c->max_local_ranks, c->nodes[n].ngpus);
    }
    c->local_ranks = c->nodes[0].ngpus;
    /* one process per GPU until cs_comm_set_layout says otherwise */
    in->procs_per_node = in->ppn;
    in->threads_per_proc = 1;
    in->gpus_per_thread = 1;
    in->cc = G_MAXINT;
    c->cc_max = 0;
    for (int r = 0; r < t->ngpus; r++) {
        int sm = cs_topo_rank_dev(t, r)->gpu->sm;
        in->cc = MIN(in->cc, sm);
        c->cc_max = MAX(c->cc_max, sm);
    }
    in->mixed_cc = in->cc != c->cc_max;
    /* init.cc: the comm's CPU vendor, "mixed" when nodes differ */
    c->vendor = node_shape(c, 0)->sys->vendor;
    c->vendor_mixed = FALSE;
    for (int n = 1; n < c->nnodes; n++)
        if (node_shape(c, n)->sys->vendor != c->vendor)
            c->vendor_mixed = TRUE;
    c->cpu_amd_or_mixed = c->vendor == CS_CPU_AMD || c->vendor_mixed;
    in->cpu_vendor = c->vendor;
    const cs_shape_t *sh0 = node_shape(c, 0);
    in->nvswitch = sh0->sys->nvs;

    in->ring_nch = c->graph_nch[CS_ALGO_RING];
    in->tree_nch = c->graph_nch[CS_ALGO_TREE];
    in->nvls_nch = c->graph_nch[CS_ALGO_NVLS];
    in->bw_intra = c->graph_bw_intra[CS_ALGO_RING];
    in->bw_inter = c->graph_bw_inter[CS_ALGO_RING];
    in->type_intra = c->graph_type_intra[CS_ALGO_RING];
    in->type_inter = c->graph_type_inter[CS_ALGO_RING];
    in->nvls_supported = c->nvls_support;
    in->nvls_tree_supported = c->nvls_support && c->nnodes > 1;
    in->collnet_supported = c->collnet;
    in->collnet_heads = c->collnet ? c->collnet_direct_heads : 0;
    in->comm_nch = postset_channels(c);
    fill_ring_order(c);

    /* intra: the worst transport between ring neighbours of node 0 */
    int G0 = c->nodes[0].ngpus;
    in->intra_transport = CS_XPORT_P2P_NVL;
    in->intra.transport = CS_XPORT_P2P_NVL;
    in->intra.path = CS_PATH_LOC;
    in->intra.nccl_bw = CS_LOC_BW;
    memset(in->intra_edges, 0, sizeof in->intra_edges);
    for (int i = 0; i < G0 && G0 > 1; i++) {
        if (i + 1 == G0 && c->nnodes > 1)
            break;
        int a = in->ring_order[i], b = in->ring_order[(i + 1) % G0];
        cs_link_choice_t ch;
        cs_comm_pair(c, a, b, &ch);
        if (ch.transport >= 0 && ch.transport < CS_XPORT_COUNT)
            in->intra_edges[ch.transport]++;
        if (i == 0 || ch.transport > in->intra.transport ||
            (ch.transport == in->intra.transport && ch.nccl_bw < in->intra.nccl_bw))
            in->intra = ch;
    }
    in->intra_transport = in->intra.transport;

    /* inter: the ring's exit from node 0 */
    in->inter_transport = sh0->net.kind == CS_NET_SOCKET ? CS_XPORT_NET_SOCKET : CS_XPORT_NET_IB;
    in->type_inter = c->graph_type_inter[CS_ALGO_RING];
    if (c->nnodes > 1) {
        int last = in->ring_order[G0 - 1];
        inter_choice(c, last, &in->inter);
        in->inter_transport = in->inter.transport;
        in->gdr = in->inter.gdr;
        /* NICs the ring channels of node 0 use */
        const cs_sys_t *sys = sh0->sys;
        g_autofree gboolean *seen = g_new0(gboolean, MAX(sys->nnets, 1));
        int first_net = -1;
        for (int ch = 0; ch < sh0->ring.nch && ch < c->nch; ch++)
            for (int k = 0; k < 2; k++) {
                int n = sh0->ring.inter[ch * 2 + k];
                if (n >= 0 && n < sys->nnets && !seen[n]) {
                    seen[n] = TRUE;
                    in->nics_used++;
                    if (first_net < 0)
                        first_net = n;
                }
            }
        for (int d = 0; d < t->ndevs; d++)
            if (t->devs[d].kind == CS_DEV_NIC && t->devs[d].node == c->nodes[0].host)
                in->nics_node++;
        if (first_net >= 0) {
            in->nic_bw = sys->nets[first_net].bytes_per_s;
            in->net_device = g_strdup(sys->nets[first_net].name);
        }
    }
}

/* ---- point-to-point setup (cs_p2p.h) ------------------------------------- */

/* An integer NCCL parameter: 'def' when unset; a value that does not parse
 * is refused as NCCL's parameters would be misread. */
static gboolean p2p_param(const cs_nccl_env_t *e, const char *name, gint64 def, gint64 *v_p, GError **err)
{
    const char *v = cs_nccl_env_get(e, name);
    if (v == NULL || *v == '\0') {
        *v_p = def;
        return TRUE;
    }
    char *end = NULL;
    gint64 x = g_ascii_strtoll(v, &end, 0);
    if (end == v || *end != '\0') {
        const char *origin = cs_nccl_env_origin(e, name);
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: %s=%s: not an integer; expected a whole number",
                    origin != NULL ? origin : "environment", name, v);
        return FALSE;
    }
    *v_p = x;
    return TRUE;
}

static int pow2_up(int x)
{
    int p = 1;
    while (p < x)
        p <<= 1;
    return p;
}

/* paths.cc ncclTopoGetNchannels for every peer of every rank (the
 * smallest), ncclTopoComputeP2pChannels, init.cc computeBuffSizes and
 * ncclP2pSchedule's group size (NCCL v2.30.7). Network peers: at least a
 * channel per local NIC, more to reach NCCL_P2P_PER_CHANNEL_NET_BW (14
 * GB/s) per channel, or NCCL_NCHANNELS_PER_NET_PEER; NVLink peers: 2 per
 * NVLink's worth of path bandwidth (topo.h SM*_NVLINK_BW); others 2. */
static gboolean p2p_setup(cs_comm_t *c, const cs_nccl_env_t *e, GError **err)
{
    cs_comm_info_t *in = &c->info;
    gint64 per_net_peer, per_ch_bw, max_nch, min_nch, net_chunk, pci_chunk, nvl_chunk, ll_thr, chunk_param, group;
    gint64 direct_disable;
    if (!p2p_param(e, "NCCL_NCHANNELS_PER_NET_PEER", 0, &per_net_peer, err) ||
        !p2p_param(e, "NCCL_P2P_PER_CHANNEL_NET_BW", 14, &per_ch_bw, err) ||
        !p2p_param(e, "NCCL_MAX_P2P_NCHANNELS", CS_MAXCHANNELS, &max_nch, err) ||
        !p2p_param(e, "NCCL_MIN_P2P_NCHANNELS", 1, &min_nch, err) ||
        !p2p_param(e, "NCCL_P2P_NET_CHUNKSIZE", 1 << 17, &net_chunk, err) ||
        !p2p_param(e, "NCCL_P2P_PCI_CHUNKSIZE", 1 << 17, &pci_chunk, err) ||
        !p2p_param(e, "NCCL_P2P_NVL_CHUNKSIZE", 1 << 19, &nvl_chunk, err) ||
        !p2p_param(e, "NCCL_P2P_LL_THRESHOLD", 16384, &ll_thr, err) ||
        !p2p_param(e, "NCCL_CHUNK_SIZE", 0, &chunk_param, err) ||
        !p2p_param(e, "NCCL_P2P_SCHEDULE_GROUP_SIZE", 8, &group, err) ||
        !p2p_param(e, "NCCL_P2P_DIRECT_DISABLE", 0, &direct_disable, err))
        return FALSE;
    /* topo.h ncclTopoNVLinkBw */
    int cc = in->cc;
    double nvl_bw = cc >= 100 ? 40.1 : cc >= 90 ? 20.6 : cc == 86 ? 12.0 : cc >= 70 ? 20.0 : 18.0;
    int min_ch = CS_MAXCHANNELS, net_per_gpu = 0;
    gboolean all_nvlink = TRUE;
    for (int r = 0; r < in->nranks; r++) {
        int node = c->rank_node[r];
        const cs_nnode_t *nd = &c->nodes[node];
        for (int k = 0; k < nd->ngpus; k++) {
            int q = nd->ranks[k];
            if (q == r)
                continue;
            cs_link_choice_t lc;
            cs_comm_pair(c, r, q, &lc);
            int nch = 2;
            if (lc.path == CS_PATH_NVL || lc.path == CS_PATH_NVB)
                nch = 2 * MAX(1, (int)(lc.nccl_bw / nvl_bw));
            else
                all_nvlink = FALSE;
            min_ch = MIN(min_ch, nch);
        }
        if (c->nnodes > 1) {
            int nn = 2;
            if (per_net_peer > 0) {
                nn = (int)per_net_peer;
            } else {
                const cs_sys_t *sys = node_shape(c, node)->sys;
                int g = c->rank_local[r], N = sys->nnets, count = 0, first = -1;
                double total = 0, gpu_bw = sys->gpu_pci_bw != NULL ? sys->gpu_pci_bw[g] : 0;
                for (int ch = 0; ch < CS_MAXCHANNELS && N > 0; ch++) {
                    int net = cs_sys_local_net(sys, g, ch);
                    if (net < 0)
                        break;
                    if (ch == 0)
                        first = net;
                    else if (net == first)
                        break;
                    total += sys->g2n[g * N + net].bw;
                    count++;
                    if (total >= gpu_bw)
                        break;
                }
                if (count > 0)
                    nn = MAX(count, (int)(((gint64)total + per_ch_bw - 1) / MAX(1, per_ch_bw)));
                net_per_gpu = net_per_gpu == 0 ? MAX(1, count) : MIN(net_per_gpu, MAX(1, count));
            }
            min_ch = MIN(min_ch, nn);
        }
    }
    in->p2p_net_per_gpu = MAX(1, net_per_gpu);
    in->p2p_net_ch_bw = (double)MAX(1, per_ch_bw);
    int nch = (int)MAX(min_nch, MIN((gint64)in->comm_nch, max_nch));
    in->p2p_nch = MIN(pow2_up(MAX(1, nch)), CS_MAXCHANNELS);
    int per_peer = pow2_up(MAX(1, min_ch));
    if (c->nnodes > 1 && per_net_peer <= 0) {
        int batches = (in->nranks + 7) / 8;   /* p2pMaxPeers = nRanks over NCCL_MAX_DEV_WORK_P2P_PER_BATCH */
        while (per_peer * batches > in->p2p_nch && per_peer > 1)
            per_peer /= 2;
    } else {
        per_peer = MIN(in->p2p_nch, per_peer);
    }
    in->p2p_nch_per_peer = per_peer;
    /* init.cc computeBuffSizes: GB-class (ARM, sm100) hosts double the
     * network chunk; at most BUFFSIZE / NCCL_STEPS */
    gint64 chunk = c->nnodes > 1 ? net_chunk * (in->cpu_vendor == CS_CPU_ARM && cc >= 100 ? 2 : 1)
                 : all_nvlink ? nvl_chunk : pci_chunk;
    gint64 buff = c->s.buffsize > 0 ? c->s.buffsize : 1 << 22;
    if (chunk * 8 > buff)
        chunk = buff / 8;
    in->p2p_chunk = (guint64)MAX(1, chunk);
    in->p2p_ll_threshold = (guint64)MAX(0, ll_thr);
    in->p2p_chunk_param = (guint64)MAX(0, chunk_param);
    in->p2p_direct_disable = direct_disable == 1;
    /* ncclP2pSchedule: NCCL_P2P_SCHEDULE_GROUP_SIZE across nodes, the
     * node's ranks on one; the gcd with every node's rank count */
    int gs = c->nnodes > 1 ? (int)MAX(1, group) : c->max_local_ranks;
    for (int n = 0; n < c->nnodes; n++) {
        int lr = c->nodes[n].ngpus;
        if (lr % gs != 0 || lr < gs) {
            int a = gs, b = lr;
            while (b != 0) {
                int t2 = a % b;
                a = b;
                b = t2;
            }
            gs = MAX(1, a);
        }
    }
    in->p2p_group = gs;
    return TRUE;
}

cs_comm_t *cs_comm_new(const cs_topo_t *t, const cs_nccl_env_t *env, GError **err)
{
    g_return_val_if_fail(t != NULL && t->finished, NULL);
    if (t->ngpus < 1) {
        cs_set_error_at(err, NULL, 0, "the topology has no GPU; expected at least one");
        return NULL;
    }
    cs_comm_t *c = g_new0(cs_comm_t, 1);
    c->t = t;
    c->shapes = g_ptr_array_new_with_free_func(shape_free);
    g_autoptr(cs_nccl_env_t) empty = env == NULL ? cs_nccl_env_new() : NULL;
    const cs_nccl_env_t *e = env != NULL ? env : empty;
    if (!cs_nccl_env_settings(e, &c->s, err)) {
        cs_comm_free(c);
        return NULL;
    }
    c->algo_env = g_strdup(cs_nccl_env_get(e, "NCCL_ALGO"));
    c->algo_origin = g_strdup(cs_nccl_env_origin(e, "NCCL_ALGO"));
    c->proto_env = g_strdup(cs_nccl_env_get(e, "NCCL_PROTO"));
    c->proto_origin = g_strdup(cs_nccl_env_origin(e, "NCCL_PROTO"));
    if (!build_nodes(c, err)) {
        cs_comm_free(c);
        return NULL;
    }
    /* NCCL's network fallbacks, into the environment's log (the header's
     * warnings), for hosts whose GPUs talk to other hosts */
    if (c->hosts != NULL && c->hosts->len > 0 && c->nnodes > 1) {
        g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func(g_free);
        for (guint i = 0; i < c->hosts->len; i++) {
            const host_shape_t *hs = g_ptr_array_index(c->hosts, i);
            cs_netsel_warnings(t, hs->host, &c->s, &hs->net, e, lines);
        }
        for (guint i = 0; i < lines->len; i++)
            cs_nccl_env_log(e, g_ptr_array_index(lines, i));
    }
    agree_graphs(c);

    /* NVLS (nvls.cc ncclNvlsInit; init.cc drops it when a node's NVLS
     * search found nothing) */
    c->nvls_support = c->graph_nch[CS_ALGO_NVLS] > 0;
    for (int n = 0; n < c->nnodes; n++)
        if (!nvls_possible(c, node_shape(c, n)->sys))
            c->nvls_support = FALSE;
    c->nvls_heads = c->graph_nch[CS_ALGO_NVLS];
    /* CollNet after AllGather3 (init.cc) and before the postset */
    if (!cs_collnet_setup(c, e, err)) {
        cs_comm_free(c);
        return NULL;
    }
    fill_info(c);
    if (c->nvls_support) {
        int hosts = 0;
        for (int h = 0; h < t->nnodes; h++)
            hosts += c->host_of[h] >= 0;
        int ch = c->info.cc >= 100 ? (hosts > 1 ? 32 : 24) : 16;
        if (c->s.nvls_nchannels > 0)
            ch = c->s.nvls_nchannels;
        c->nvls_channels = MAX(c->s.min_ctas, MIN(c->s.max_ctas, ch));
    }

    /* tuning.cc ncclPatEnable: one GPU per node, host-memory network */
    if (c->info.cc < 60)
        c->pat_support = FALSE;
    else if (c->s.pat_enable != 2)
        c->pat_support = c->s.pat_enable != 0;
    else
        c->pat_support = c->nnodes == c->info.nranks;
    if (!p2p_setup(c, e, err)) {
        cs_comm_free(c);
        return NULL;
    }
    cs_comm_tune(c);
    if (c->ll128_forced_unsafe) {
        g_autofree char *line = g_strdup_printf(
            "NCCL_PROTO=%s (%s) turns LL128 on where NCCL's default leaves it off (its paths are not all "
            "NVLink: tuning.cc), because it is not safe there: NCCL's documentation warns it can corrupt data; "
            "priced as forced", c->proto_env != NULL ? c->proto_env : "", c->proto_origin != NULL ? c->proto_origin : "settings");
        cs_nccl_env_log(e, line);
    }
    return c;
}

void cs_comm_free(cs_comm_t *c)
{
    if (c == NULL)
        return;
    for (int n = 0; n < c->nnodes && c->nodes != NULL; n++)
        g_free(c->nodes[n].ranks);
    g_free(c->nodes);
    g_free(c->rank_node);
    g_free(c->rank_local);
    g_ptr_array_free(c->shapes, TRUE);     /* before the hosts: shapes borrow their NICs */
    if (c->hosts != NULL)
        g_ptr_array_free(c->hosts, TRUE);
    g_free(c->host_of);
    g_free(c->info.ring_order);
    g_free(c->info.net_device);
    g_free(c->algo_env);
    g_free(c->algo_origin);
    g_free(c->proto_env);
    g_free(c->proto_origin);
    g_free(c->collnet_note);
    cs_nccl_settings_clear(&c->s);
    g_free(c);
}

gboolean cs_comm_set_layout(cs_comm_t *c, int procs, int threads, GError **err)
{
    g_return_val_if_fail(c != NULL && procs >= 0 && threads >= 0, FALSE);
    threads = MAX(1, threads);
    /* every node runs the same command line: the same processes and
     * threads, each thread with the same number of GPUs (-g) */
    int g = 0;
    for (int n = 0; n < c->nnodes; n++) {
        int gpus = c->nodes[n].ngpus, p = procs > 0 ? procs : gpus;
        if (gpus % (p * threads) != 0 || (g > 0 && gpus / (p * threads) != g)) {
            if (threads > 1)
                g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                            "%d process(es) of %d threads do not share node %d's %d GPUs evenly; expected "
                            "processes x threads that divide the GPUs of every node alike", p, threads, n, gpus);
            else
                g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                            "%d process(es) do not share node %d's %d GPUs evenly; expected a number of "
                            "processes that divides the GPUs of every node alike", p, n, gpus);
            return FALSE;
        }
        g = gpus / (p * threads);
    }
    c->info.procs_per_node = procs > 0 ? procs : c->info.ppn;
    c->info.threads_per_proc = threads;
    c->info.gpus_per_thread = g;
    return TRUE;
}

/* Whether a GPU of the communicator has an NVLink (2.4's ncclNvlinkGpu,
 * init.cc v2.4.7: getNvlinkGpu on the calling GPU). */
static gboolean gpu_has_nvlink(const cs_comm_t *c)
{
    const cs_topo_t *t = c->t;
    for (int l = 0; l < t->nlinks; l++) {
        const cs_link_t *k = &t->links[l];
        if (k->kind == CS_LINK_NVL &&
            (t->devs[k->src].kind == CS_DEV_GPU || t->devs[k->dst].kind == CS_DEV_GPU))
            return TRUE;
    }
    return FALSE;
}

/* NCCL 2.4's channel count across nodes. ncclGetRings (misc/rings.cc
 * v2.4.7) takes the fewest rings any transport level builds: the network's
 * netGetRings (transport/net.cc) gives each ring a card no other ring of
 * the node uses, so one ring per NIC (the intra-node levels give at least
 * that many here); it doubles them when the GPU has NVLink ("Duplicate the
 * rings in case of multinode+NVLink"), then applies NCCL_MAX_NRINGS and
 * NCCL_MIN_NRINGS (default 1 from compute capability 5). Every Simple call
 * runs on all of them (enqueue.cc getKernelInfo: comm->nChannels), the
 * tree too (init.cc setupChannel: channel c < DIVUP(nChannels, 2) takes
 * the first tree, so one channel takes only that tree). 2.5 replaced the
 * ring search by the graph search (graph/search.cc). 0: another version,
 * or one node (2.4's intra-node ring search is not modelled). */
static int v24_channels(const cs_comm_t *c)
{
    int v = c->info.nccl_version;
    if (v < 20400 || v >= 20500 || c->nnodes < 2)
        return 0;
    int nch = MAX(1, c->info.nics_used) * (gpu_has_nvlink(c) ? 2 : 1);
    nch = MIN(MIN(nch, c->s.max_nchannels), CS_MAXCHANNELS);
    return MAX(nch, MAX(1, c->s.min_nchannels));
}

int cs_comm_set_nccl_version(cs_comm_t *c, const char *version)
{
    g_return_val_if_fail(c != NULL, 0);
    c->info.nccl_version = cs_nccl_version_code(version, NULL);
    c->info.nccl_nch = v24_channels(c);
    cs_comm_tune(c);   /* the tables that follow the version (cs_decide_tune.c) */
    return c->info.nccl_version;
}

void cs_comm_set_nccl_version_max(cs_comm_t *c, int code)
{
    g_return_if_fail(c != NULL);
    c->info.nccl_version_max = MAX(0, code);
}

void cs_comm_set_nccltests_build(cs_comm_t *c, int version, int headers)
{
    g_return_if_fail(c != NULL);
    c->info.nccltests_version = MAX(0, version);
    c->info.nccltests_headers = MAX(0, headers);
}

const cs_comm_info_t *cs_comm_info(const cs_comm_t *c)
{
    return &c->info;
}

const cs_topo_t *cs_comm_topo(const cs_comm_t *c)
{
    return c->t;
}

const cs_nccl_settings_t *cs_comm_settings(const cs_comm_t *c)
{
    return &c->s;
}

int cs_comm_chan_nic(const cs_comm_t *c, cs_algo_t algo, int rank, int ch)
{
    g_return_val_if_fail(c != NULL, -1);
    if (c->nnodes < 2 || rank < 0 || rank >= c->info.nranks || ch < 0)
        return -1;
    const cs_shape_t *sh = node_shape(c, c->rank_node[rank]);
    const cs_sys_t *sys = sh->sys;
    const cs_graph_t *g = algo == CS_ALGO_P2P ? NULL : algo_graph(sh, algo);
    int G = sys->ngpus, local = c->rank_local[rank], net = -1;
    if (algo == CS_ALGO_P2P) {
        /* p2p sends: the GPU's own NICs by channel (net.cc through
         * topo.cc ncclTopoGetLocalNet) */
        if (sys->nnets < 1)
            return -1;
        net = cs_sys_local_net(sys, local, ch);
    } else if (g == NULL || g->nch < 1 || g->intra == NULL || sys->nnets < 1) {
        return -1;
    } else if (algo == CS_ALGO_COLLNET_DIRECT || algo == CS_ALGO_COLLNET_CHAIN) {
        net = cs_collnet_chan_net(c, algo, rank, ch);
    } else if (algo == CS_ALGO_NVLS || algo == CS_ALGO_NVLS_TREE) {
        /* search.cc getNvlsNetDev: the NICs of the NVLS channels whose
         * first GPU is this rank, the ch-th of them */
        int nets[CS_MAXCHANNELS], nn = 0;
        for (int k = 0; k < c->graph_nch[algo] && k < g->nch && k < CS_MAXCHANNELS; k++)
            if (g->intra[k * G] == local)
                nets[nn++] = g->inter[k * 2];
        if (nn == 0)
            return -1;
        net = nets[ch % nn];
    } else {
        /* init.cc: the ring and tree graphs keep the communicator's
         * channel count; search.cc ncclTopoGetNetDev: channelId % nChannels,
         * index 0 for the channel's first GPU */
        int gc = ch % MAX(1, MIN(c->nch, g->nch));
        net = g->inter[gc * 2 + (g->intra[gc * G] == local ? 0 : 1)];
    }
    int dev = net >= 0 && net < sys->nnets ? sys->nets[net].dev : -1;
    if (dev < 0)
        return -1;
    /* nodes of one shape share its search: name the NIC by its place
     * among its node's NICs */
    const cs_topo_t *t = c->t;
    int node = t->devs[dev].node, cnt = cs_topo_node_nics(t, node, NULL, 0), stack[64], k = -1;
    int *nics = cnt <= 64 ? stack : g_new(int, cnt);
    cnt = cs_topo_node_nics(t, node, nics, cnt);
    for (int i = 0; i < cnt && k < 0; i++)
        if (nics[i] == dev)
            k = i;
    if (nics != stack)
        g_free(nics);
    return k;
}

char *cs_comm_transport_summary(const cs_comm_t *c)
{
    const cs_comm_info_t *in = &c->info;
    GString *s = g_string_new(NULL);
    if (in->nranks == 1) {
        g_string_free(s, TRUE);
        return g_strdup("one rank (no transport)");
    }
    if (c->nodes[0].ngpus > 1) {
        g_string_append_printf(s, "%s%s intra", cs_transport_name(in->intra_transport),
                               in->intra.p2p_read ? " (read)" : "");
        /* the worst of node 0's ring edges prices the ring; where they
         * differ (P2P under one PCIe switch, SHM across the CPU) say how
         * many of each, as NCCL's INFO lines would show them */
        int kinds = 0;
        for (int x = 0; x < CS_XPORT_COUNT; x++)
            kinds += in->intra_edges[x] > 0;
        if (kinds > 1) {
            g_string_append(s, " (ring edges:");
            const char *sep = " ";
            for (int x = 0; x < CS_XPORT_COUNT; x++)
                if (in->intra_edges[x] > 0) {
                    g_string_append_printf(s, "%s%d %s", sep, in->intra_edges[x], cs_transport_name((cs_transport_t)x));
                    sep = ", ";
                }
            g_string_append_printf(s, "; the slowest, %s, paces the ring)", cs_transport_name(in->intra_transport));
        }
    }
    if (in->nnodes > 1) {
        gboolean same_host = TRUE;
        for (int n = 1; n < c->nnodes; n++)
            if (c->nodes[n].host != c->nodes[0].host)
                same_host = FALSE;
        g_autofree char *bw = cs_format_bandwidth(in->nic_bw);
        /* "8 of 16 NICs": NCCL's ring search stops once the channels it
         * found carry the GPUs' bandwidth, so it may leave NICs unused */
        g_autofree char *of = in->nics_node > in->nics_used ? g_strdup_printf(" of %d", in->nics_node) : g_strdup("");
        gboolean plural = in->nics_used != 1 || *of != '\0';
        g_string_append_printf(s, "%s%s%s %s (%d%s %s: %s%s, %s)", s->len ? ", " : "",
                               cs_transport_name(in->inter_transport),
                               in->inter_transport == CS_XPORT_NET_IB ? (in->gdr ? " GDR" : " no GDR") : "",
                               same_host ? "between the host's GPU groups" : "inter",
                               in->nics_used, of,
                               in->inter_transport == CS_XPORT_NET_IB ? (plural ? "NICs" : "NIC")
                                                                      : (plural ? "interfaces" : "interface"),
                               in->net_device ? in->net_device : "?", in->nics_used > 1 ? ",..." : "",
                               bw);
    }
    return g_string_free(s, FALSE);
}
