/* CollNet (in-network reduction with SHARP) as NCCL v2.28.9 sets it up:
 *  - coll_net.h collNetSupport: a CollNet plugin is loaded. collsim takes
 *    it as loaded where NCCL_COLLNET_ENABLE=1, the communicator spans
 *    several hosts and every host's network is InfiniBand: the SHARP
 *    plugin (nccl-rdma-sharp-plugins) and Quantum switches with SHARP are
 *    assumed there, and the run's notes say so. On RoCE or sockets there
 *    is no SHARP, and CollNet stays off with a note saying why.
 *  - init.cc initTransportsRank: the CollNet chain (id 2, pattern TREE, the
 *    ring's channels) and direct (id 4, pattern COLLNET_DIRECT) graphs are
 *    searched only then (cs_decide.c shape_search); CollNet goes off when
 *    the chain graph found no channel, and when the communicator has fewer
 *    nodes than NCCL_COLLNET_NODE_THRESHOLD (2).
 *  - coll_net.cc ncclCollNetSetup: the heads (collNetHeads: the direct
 *    graph's first GPUs, or the NVLS heads where NVLS is supported),
 *    collNetChainSupport (the chain's heads among them), the plugin's
 *    reduce support (sharp_plugin.c ncclSharpReduceSupport).
 *  - connect.cc ncclTopoPostset / connectCollNet: the extra channels and
 *    the direct heads every channel uses.
 * The tuning of CollNet is in cs_decide_tune.c. */
#include "config.h"

#include <string.h>

#include "models/cs_decide_int.h"
#include "util/cs_error.h"

void cs_collnet_plugin(cs_comm_t *c, gboolean multi_host)
{
    /* the network check is the caller's (cs_decide.c build_nodes) */
    c->collnet_plugin = c->s.collnet_enable == 1 && multi_host;
}

gboolean cs_collnet_type_ok(cs_dtype_t t)
{
    /* nccl-rdma-sharp-plugins src/sharp_plugin.c typeConvert: half,
     * int32, uint32, float, int64, uint64, double; bfloat16, int8, uint8
     * with SHARP v3 datatypes (Quantum-2), assumed; no fp8. opConvert:
     * sum, max, min (collsim's calls are sums). */
    switch (t) {
    case CS_DTYPE_HALF: case CS_DTYPE_INT32: case CS_DTYPE_UINT32: case CS_DTYPE_FLOAT:
    case CS_DTYPE_INT64: case CS_DTYPE_UINT64: case CS_DTYPE_DOUBLE:
    case CS_DTYPE_BFLOAT16: case CS_DTYPE_INT8: case CS_DTYPE_UINT8:
        return TRUE;
    default:
        return FALSE;
    }
}

static const cs_shape_t *shape_n(const cs_comm_t *c, int n)
{
    return g_ptr_array_index(c->shapes, c->nodes[n].shape);
}

/* connect.cc connectCollNet: the direct graph's channels' first GPUs,
 * each once, in channel order (local indices); the channel each heads
 * first in *chan (may be NULL). */
static int direct_heads(const cs_graph_t *g, int G, int *heads, int *chan)
{
    int nh = 0;
    for (int ch = 0; ch < g->nch; ch++) {
        int h = g->intra[ch * G], k;
        for (k = 0; k < nh && heads[k] != h; k++)
            ;
        if (k < nh)
            continue;
        if (chan != NULL)
            chan[nh] = ch;
        heads[nh++] = h;
    }
    return nh;
}

gboolean cs_collnet_setup(cs_comm_t *c, const cs_nccl_env_t *e, GError **err)
{
    c->collnet = c->collnet_plugin;
    c->collnet_heads_num = c->collnet_direct_heads = 0;
    c->collnet_chain_support = FALSE;
    if (!c->collnet)
        return TRUE;
    /* init.cc: NCCL_COLLNET_NODE_THRESHOLD (default 2; parsed with the settings) */
    gint64 threshold = cs_comm_settings(c)->collnet_node_threshold;
    g_free(c->collnet_note);
    c->collnet_note = NULL;
    if (c->graph_nch[CS_ALGO_COLLNET_CHAIN] == 0) {
        /* init.cc: no chain graph, no CollNet */
        c->collnet = FALSE;
        c->collnet_note = g_strdup("NCCL_COLLNET_ENABLE=1: CollNet (SHARP) stays off: NCCL's CollNet chain "
                                   "search found no channel through the NICs");
        return TRUE;
    }
    if (c->nnodes < threshold) {
        c->collnet = FALSE;
        c->collnet_note = g_strdup_printf("NCCL_COLLNET_ENABLE=1: CollNet (SHARP) stays off: %d nodes, fewer "
                                          "than NCCL_COLLNET_NODE_THRESHOLD (%" G_GINT64_FORMAT ")",
                                          c->nnodes, threshold);
        return TRUE;
    }
    /* coll_net.cc ncclCollNetSetup on node 0's shape: the heads are the
     * direct graph's (or the NVLS graph's where NVLS is supported) */
    const cs_shape_t *sh = shape_n(c, 0);
    int G = sh->sys->ngpus;
    g_autofree int *heads = g_new(int, MAX(1, CS_MAXCHANNELS));
    int nh;
    if (!c->nvls_support)
        nh = direct_heads(&sh->cn_direct, G, heads, NULL);
    else
        nh = direct_heads(&sh->nvls, G, heads, NULL);
    c->collnet_heads_num = nh;
    /* connect.cc: connectCollNet only up to NCCL_MAX_DIRECT_ARITY + 1
     * local ranks */
    int max_local = 0;
    for (int n = 0; n < c->nnodes; n++)
        max_local = MAX(max_local, c->nodes[n].ngpus);
    g_autofree int *dh = g_new(int, MAX(1, CS_MAXCHANNELS));
    c->collnet_direct_heads = max_local <= CS_MAX_DIRECT_ARITY + 1 ? direct_heads(&sh->cn_direct, G, dh, NULL) : 0;
    /* isCollNetChainHeadsSubset */
    c->collnet_chain_support = TRUE;
    for (int ch = 0; ch < sh->cn_chain.nch; ch++) {
        int h = sh->cn_chain.intra[ch * G], k;
        for (k = 0; k < nh && heads[k] != h; k++)
            ;
        if (k == nh)
            c->collnet_chain_support = FALSE;
    }
    GString *note = g_string_new(NULL);
    g_string_append_printf(note, "NCCL_COLLNET_ENABLE=1 on InfiniBand: CollNet (SHARP in-network reduction) on, "
                           "assuming Quantum switches with SHARP and the SHARP plugin (nccl-rdma-sharp-plugins); "
                           "%d head%s per node; CollNetDirect/CollNetChain priced for all-reduce only, other "
                           "collectives as without CollNet", nh, nh == 1 ? "" : "s");
    if (!c->collnet_chain_support)
        g_string_append(note, "; CollNetChain off (its heads are not CollNet heads: coll_net.cc)");
    if (c->nvls_support && c->nnodes > 1)
        g_string_append(note, "; NVLS across nodes with SHARP, which NCCL would also consider, is not modelled "
                              "and left out");
    c->collnet_note = g_string_free(note, FALSE);
    return TRUE;
}

int cs_collnet_postset(const cs_comm_t *c, int nch)
{
    /* connect.cc ncclTopoPostset: "Add more channels to saturate
     * intra-node bandwidth, except the 1 PPN case" */
    if (c->collnet && c->graph_bw_intra[CS_ALGO_COLLNET_CHAIN] > c->graph_bw_inter[CS_ALGO_COLLNET_CHAIN] &&
        c->info.nranks > c->nnodes)
        return MIN(CS_MAXCHANNELS, nch + nch / 2);
    return nch;
}

gboolean cs_collnet_chan_order(const cs_comm_t *c, int n, cs_algo_t algo, int ch, int *order)
{
    if (!c->collnet || (algo != CS_ALGO_COLLNET_CHAIN && algo != CS_ALGO_COLLNET_DIRECT))
        return FALSE;
    const cs_shape_t *sh = shape_n(c, n);
    const int *ranks = c->nodes[n].ranks;
    int G = sh->sys->ngpus;
    if (algo == CS_ALGO_COLLNET_CHAIN) {
        /* connect.cc ncclTopoPreset: collnetChain.up = intra[i-1], the
         * head intra[0] sends to the network: listed last, as Tree's */
        const cs_graph_t *g = &sh->cn_chain;
        int gc = g->nch > 0 ? ch % g->nch : 0;
        for (int i = 0; i < G; i++)
            order[i] = ranks[g->intra[gc * G + G - 1 - i]];
        return TRUE;
    }
    int heads[CS_MAXCHANNELS];
    int nh = direct_heads(&sh->cn_direct, G, heads, NULL), k = 0;
    for (int h = 0; h < nh; h++)
        order[k++] = ranks[heads[h]];
    for (int i = 0; i < G; i++) {
        gboolean head = FALSE;
        for (int h = 0; h < nh; h++)
            head |= heads[h] == i;
        if (!head)
            order[k++] = ranks[i];
    }
    return TRUE;
}

int cs_collnet_chan_net(const cs_comm_t *c, cs_algo_t algo, int rank, int ch)
{
    if (!c->collnet)
        return -1;
    const cs_shape_t *sh = shape_n(c, c->rank_node[rank]);
    int G = sh->sys->ngpus, local = c->rank_local[rank];
    if (algo == CS_ALGO_COLLNET_CHAIN) {
        const cs_graph_t *g = &sh->cn_chain;
        int gc = g->nch > 0 ? ch % g->nch : 0;
        return g->nch > 0 && g->intra[gc * G] == local ? g->inter[gc * 2] : -1;
    }
    /* the direct head's collnet connection: the NIC of the direct graph
     * channel it heads (search.cc: one head per NIC) */
    int heads[CS_MAXCHANNELS], chan[CS_MAXCHANNELS];
    int nh = direct_heads(&sh->cn_direct, G, heads, chan);
    for (int h = 0; h < nh; h++)
        if (heads[h] == local)
            return sh->cn_direct.inter[chan[h] * 2];
    return -1;
}

const char *cs_comm_collnet_note(const cs_comm_t *c)
{
    g_return_val_if_fail(c != NULL, NULL);
    return c->collnet_note;
}
