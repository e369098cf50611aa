/* Rank programs from NCCL's decisions: ring and chain shapes, expanded
 * lazily, and the dataflow programs of Tree, NVLS and NVLSTree all-reduce
 * (see cs_program.h). Loop structure: reference nccl-model.md
 * section 2 (device/all_reduce.h ring loop; collectives.h chunk and slice
 * steps; enqueue.cc calcCollChunking). */
#include "config.h"

#include <math.h>
#include <string.h>

#include "models/cs_program.h"
#include "util/cs_error.h"

void cs_program_free(cs_program_t *p)
{
    if (p == NULL)
        return;
    g_free(p->order);
    g_free(p->ch_bytes);
    g_free(p->flows);
    g_free(p->flow_off);
    g_free(p->dep_off);
    g_free(p->deps);
    g_free(p);
}

/* Channel c's ring: its own where given, else channel 0's. */
static const int *chan_ring(const cs_comm_info_t *info, const int *orders, int c)
{
    return orders != NULL ? orders + (gsize)c * info->nranks : info->ring_order;
}

/* ---- dataflow programs: Tree AllReduce, NVLS, NVLSTree ------------------
 * NCCL's double binary tree over node ids (trees.cc ncclGetDtree, v2.28.9;
 * reference nccl-model.md section 2): tree 0 is a binary tree rooted at 0,
 * a node's parent found from its lowest set bit b: (r ^ b) | (b << 1), or
 * r ^ b when that is out of range; tree 1 mirrors it (r -> N-1-r) when N is
 * even and shifts it by one when N is odd. The analytic engine prices the
 * same trees (cs_analytic_dtree_shape). */
static int btree_parent(int n, int r)
{
    if (r == 0)
        return -1;
    int bit = r & -r;
    int up = (r ^ bit) | (bit << 1);
    return up >= n ? (r ^ bit) : up;
}

int cs_dtree_parent(int n, int tree, int r)
{
    if (tree == 0)
        return btree_parent(n, r);
    if (n % 2 == 1) {
        int u = btree_parent(n, (r - 1 + n) % n);
        return u < 0 ? -1 : (u + 1) % n;
    }
    int u = btree_parent(n, n - 1 - r);
    return u < 0 ? -1 : n - 1 - u;
}

int cs_program_tree_of(int nch, int c)
{
    return nch > 1 && 2 * c >= nch ? 1 : 0;
}

int cs_program_nvls_heads(const cs_comm_info_t *info)
{
    int m = MAX(1, info->ppn);
    /* no NVLS search result (a hand-made info): every GPU heads */
    return info->nvls_nch < 1 ? m : MIN(info->nvls_nch, m);
}

typedef struct {
    GArray *flows;           /* cs_prog_flow_t */
    GArray *pend;            /* dependencies as (flow, dep flow, lag) int triples */
} builder_t;

static int add_flow(builder_t *b, cs_prog_flow_kind_t kind, int src, int dst, int net_local, int mem,
                    double share, double cap_div)
{
    cs_prog_flow_t fl = { kind, src, dst, net_local, mem, share, cap_div };
    g_array_append_val(b->flows, fl);
    return (int)b->flows->len - 1;
}

static void add_dep(builder_t *b, int flow, int dep, int lag)
{
    if (flow < 0 || dep < 0)
        return;
    int t[3] = { flow, dep, lag };
    g_array_append_vals(b->pend, t, 3);
}

/* The double binary tree of one channel across nodes, between the 'head'
 * ranks of the nodes: per node v, up_p[v] the flow to its parent and
 * down_in_p[v] the flow bringing the result from it (-1 at the root).
 * 'local_in[v]' is the flow whose arrival makes the node's own partial
 * result available at its head (-1: the head's data alone). 'seq': the
 * phases one after the other (cs_tree_phases_in_sequence): a head sends
 * down only once it has sent its last unit up, and the root once it has
 * reduced its last unit (CS_PROG_LAG_END). */
static void build_tree(builder_t *b, int nn, int tree, const int *head, int net_local, int mem_up,
                       int mem_down, double share, double cap_div, gboolean seq, const int *local_in,
                       int *up_p, int *down_in_p)
{
    int root_lag = seq ? CS_PROG_LAG_END : 0;
    /* up edges */
    for (int v = 0; v < nn; v++) {
        int u = cs_dtree_parent(nn, tree, v);
        up_p[v] = u < 0 ? -1 : add_flow(b, CS_FLOW_P2P, head[v], head[u], net_local, mem_up, share, cap_div);
        down_in_p[v] = -1;
    }
    for (int v = 0; v < nn; v++) {
        int u = cs_dtree_parent(nn, tree, v);
        if (u >= 0)
            down_in_p[v] = add_flow(b, CS_FLOW_P2P, head[u], head[v], net_local, mem_down, share, cap_div);
    }
    /* an up flow needs the node's local partial result and its children's */
    for (int v = 0; v < nn; v++) {
        int u = cs_dtree_parent(nn, tree, v);
        if (u < 0)
            continue;
        add_dep(b, up_p[v], local_in[v], 0);
        for (int w = 0; w < nn; w++)
            if (cs_dtree_parent(nn, tree, w) == v)
                add_dep(b, up_p[v], up_p[w], 0);
    }
    /* a down flow needs its parent's result: the root's inputs, or what
     * came down to the parent */
    for (int v = 0; v < nn; v++) {
        int u = cs_dtree_parent(nn, tree, v);
        if (u < 0)
            continue;
        if (cs_dtree_parent(nn, tree, u) < 0) {
            add_dep(b, down_in_p[v], local_in[u], root_lag);
            for (int w = 0; w < nn; w++)
                if (cs_dtree_parent(nn, tree, w) == u)
                    add_dep(b, down_in_p[v], up_p[w], root_lag);
        } else {
            add_dep(b, down_in_p[v], down_in_p[u], 0);
            if (seq)
                add_dep(b, down_in_p[v], up_p[u], CS_PROG_LAG_END);
        }
    }
}

/* Makes 'fl' depend on the final result at node v of the tree: what came
 * down to it, or at the root its own inputs. 'seq' (build_tree): at the
 * root all of them, elsewhere also the node's last unit sent up. */
static void dep_result(builder_t *b, int fl, int nn, int tree, int v, gboolean seq, const int *local_in,
                       const int *up, const int *down_in)
{
    int root_lag = seq ? CS_PROG_LAG_END : 0;
    if (nn <= 1 || cs_dtree_parent(nn, tree, v) >= 0) {
        if (nn > 1) {
            add_dep(b, fl, down_in[v], 0);
            if (seq)
                add_dep(b, fl, up[v], CS_PROG_LAG_END);
        } else {
            add_dep(b, fl, local_in[v], root_lag);
        }
        return;
    }
    add_dep(b, fl, local_in[v], root_lag);
    for (int w = 0; w < nn; w++)
        if (cs_dtree_parent(nn, tree, w) == v)
            add_dep(b, fl, up[w], root_lag);
}

/* Tree AllReduce, one channel: per node a chain through its GPUs in the
 * channel's order ending at the head (the order given is the tree graph's
 * reversed: connect.cc chain up = intra[i-1], down = intra[i+1], the head
 * intra[0] meets the other nodes), the tree
 * across nodes between heads. Reduce-up and broadcast-down run
 * concurrently on split threads (runTreeSplit): each flow may use half the
 * channel's ceiling; with 'seq' (NCCL <= 2.7 Simple,
 * cs_tree_phases_in_sequence) one after the other with all of them: a GPU
 * sends down once it has sent its last unit up (the root: reduced its
 * last unit). Memory (charged to the sender): 3 passes for a
 * reducing send (local, received, result) and for a broadcast send
 * (received, output, onward copy), 2 for the chain's first sender. */
static void build_tree_channel(builder_t *b, const cs_comm_info_t *info, const int *ring, int tree, gboolean seq)
{
    /* one after the other, each phase has all of the channel's threads */
    double cap_div = seq ? 1 : 2;
    int nn = info->nnodes, m = info->ppn;
    g_autofree int *head = g_new(int, nn);
    g_autofree int *local_in = g_new(int, nn);
    g_autofree int *up = g_new(int, nn);
    g_autofree int *down_in = g_new(int, nn);
    g_autofree int *chain_up = g_new(int, (gsize)nn * m);
    /* reduce up each chain: position i sends to i+1, the head is last */
    /* ring blocks are whole nodes (rank = node x ppn + local), in the
     * ring's node order; the tree is over node ids */
    g_autofree int *blk_of = g_new(int, nn);
    for (int k = 0; k < nn; k++)
        blk_of[ring[k * m] / m] = k;
    for (int v = 0; v < nn; v++) {
        const int *blk = &ring[blk_of[v] * m];
        head[v] = blk[m - 1];
        for (int i = 0; i + 1 < m; i++) {
            chain_up[v * m + i] = add_flow(b, CS_FLOW_P2P, blk[i], blk[i + 1], -1, i == 0 ? 2 : 3, 1.0, cap_div);
            if (i > 0)
                add_dep(b, chain_up[v * m + i], chain_up[v * m + i - 1], 0);
        }
        local_in[v] = m > 1 ? chain_up[v * m + m - 2] : -1;
    }
    if (nn > 1)
        build_tree(b, nn, tree, head, -1, 3, 3, 1.0, cap_div, seq, local_in, up, down_in);
    /* broadcast down each chain from the head */
    for (int v = 0; v < nn; v++) {
        const int *blk = &ring[blk_of[v] * m];
        int prev = -1;
        for (int i = m - 1; i > 0; i--) {
            int fl = add_flow(b, CS_FLOW_P2P, blk[i], blk[i - 1], -1, 3, 1.0, cap_div);
            if (prev < 0) {
                dep_result(b, fl, nn, tree, v, seq, local_in, up, down_in);
            } else {
                add_dep(b, fl, prev, 0);
                if (seq)   /* this GPU's own last unit up the chain */
                    add_dep(b, fl, chain_up[v * m + i], CS_PROG_LAG_END);
            }
            prev = fl;
        }
    }
}

/* NVLS (one node) and NVLSTree, one channel, as device/all_reduce.h runs
 * them (RunWorkColl NCCL_ALGO_NVLS / NCCL_ALGO_NVLS_TREE, Simple): a loop
 * covers nvls->nHeads chunks, one per NVLS head (loopCount = nHeads x
 * chunkCount), and only the heads (nvls->headRank != -1) reduce: head h
 * reads slice h reduced by the NVSwitch (multimem.ld_reduce over every
 * GPU's scattered copy), across nodes runs it through its own tree
 * between the h-th heads of the nodes over its NIC (connect.cc
 * connectNvls: treeUp/treeDown from the nodes' heads[h]), and multicasts
 * the result to its node's GPUs. The other GPUs only scatter their data
 * and gather the results: no flow of their own, and their NVLink ports
 * carry less than a head's. The channel's ceiling
 * covers all a head moves: S(1+1/H) through NVLink per direction (H heads,
 * head h of node v rank hr[v * H + h]: nvls_head_ranks).
 *
 * Slots (transport/nvls.cc: two buffers per head and channel, each of
 * NCCL_STEPS slots with its own credits; device/all_reduce.h NVLS_TREE
 * runs scatter, reduce, broadcast and gather on separate warps): the
 * scatter writes unit u into every head's reduce buffer, so a head's
 * reduction of unit u waits until every head of its node has passed unit
 * u - credit on (sent it up the tree, or at the tree's root and on one
 * node, multicast it); a head's multicast of unit u waits until every
 * GPU's gather has read unit u - credit from every head (their multicasts
 * arrived). The network edges have their own slots (the receiver's
 * consumption, as every flow). Reduction and multicast are not coupled:
 * a unit's round trip through the node tree is not a credit cycle. */
static void build_nvls_channel(builder_t *b, const cs_comm_info_t *info, const int *hr, int tree, int credit)
{
    int nn = info->nnodes, H = cs_program_nvls_heads(info);
    double share = 1.0 / H, cap_div = H + 1;
    g_autofree int *red = g_new(int, (gsize)nn * H);
    g_autofree int *mc = g_new(int, (gsize)nn * H);
    g_autofree int *passed = g_new(int, (gsize)nn * H);   /* the flow that passes red[k] on */
    g_autofree int *head = g_new(int, nn);
    g_autofree int *local_in = g_new(int, nn);
    g_autofree int *up = g_new(int, nn);
    g_autofree int *down_in = g_new(int, nn);
    for (int k = 0; k < nn * H; k++)
        red[k] = add_flow(b, CS_FLOW_NVLS_REDUCE, hr[k], hr[k], -1, 0, share, cap_div);
    for (int h = 0; h < H; h++) {
        for (int v = 0; v < nn; v++) {
            head[v] = hr[v * H + h];
            local_in[v] = red[v * H + h];
        }
        if (nn > 1)
            build_tree(b, nn, tree, head, h, 0, 0, share, cap_div, FALSE, local_in, up, down_in);
        for (int v = 0; v < nn; v++) {
            int k = v * H + h;
            mc[k] = add_flow(b, CS_FLOW_NVLS_MCAST, hr[k], hr[k], -1, 0, share, cap_div);
            dep_result(b, mc[k], nn, tree, v, FALSE, local_in, up, down_in);
            passed[k] = nn > 1 && cs_dtree_parent(nn, tree, v) >= 0 ? up[v] : mc[k];
        }
    }
    for (int v = 0; v < nn; v++)
        for (int i = 0; i < H; i++)
            for (int j = 0; j < H; j++) {
                if (passed[v * H + j] != red[v * H + i])
                    add_dep(b, red[v * H + i], passed[v * H + j], credit);
                if (j != i)
                    add_dep(b, mc[v * H + i], mc[v * H + j], credit);
            }
}

static gboolean flows_finish(cs_program_t *p, builder_t *bp);

/* Node v's block of a channel's order (ranks node-major: the block whose
 * first rank is on node v). */
static const int *node_block(const int *ring, int nn, int m, int v)
{
    for (int k = 0; k < nn; k++)
        if (ring[k * m] / m == v)
            return &ring[k * m];
    return &ring[v * m];
}

/* CollNetChain all-reduce, one channel (device/all_reduce.h
 * RunWorkColl<COLLNET_CHAIN>): per node the channel's chain, its head
 * last (collnetChain.up = intra[i-1], the head's up is the network);
 * reduce up the chain (recvReduceSend), the head sends its node's sum
 * into SHARP, the root reduces every node's, the result comes back to
 * each head and goes down the chain (recvCopySend). Reduce and broadcast
 * run on split threads (nthreadsSplit): each flow half the channel's
 * ceiling. Memory: as Tree's chain; the head's send reduces (3), the
 * NIC's write of the result 1. */
static void build_collnet_chain_channel(builder_t *b, const cs_comm_info_t *info, const int *ring)
{
    int nn = info->nnodes, m = info->ppn, algo = CS_ALGO_COLLNET_CHAIN;
    const int *blk0 = node_block(ring, nn, m, 0);
    int root = add_flow(b, CS_FLOW_COLLNET_ROOT, blk0[m - 1], blk0[m - 1], algo, 0, 1.0, 2);
    g_autofree int *down = g_new(int, nn);
    for (int v = 0; v < nn; v++) {
        const int *blk = node_block(ring, nn, m, v);
        int prev = -1;
        for (int i = 0; i + 1 < m; i++) {
            int fl = add_flow(b, CS_FLOW_P2P, blk[i], blk[i + 1], -1, i == 0 ? 2 : 3, 1.0, 2);
            add_dep(b, fl, prev, 0);
            prev = fl;
        }
        int up = add_flow(b, CS_FLOW_COLLNET_UP, blk[m - 1], blk[m - 1], algo, m > 1 ? 3 : 2, 1.0, 2);
        add_dep(b, up, prev, 0);
        add_dep(b, root, up, 0);
        down[v] = add_flow(b, CS_FLOW_COLLNET_DOWN, blk[m - 1], blk[m - 1], algo, 1, 1.0, 2);
        add_dep(b, down[v], root, 0);
        prev = down[v];
        for (int i = m - 1; i > 0; i--) {
            int fl = add_flow(b, CS_FLOW_P2P, blk[i], blk[i - 1], -1, 3, 1.0, 2);
            add_dep(b, fl, prev, 0);
            prev = fl;
        }
    }
}

/* CollNetDirect all-reduce, one channel (device/all_reduce.h
 * RunWorkColl<COLLNET_DIRECT>): a loop covers H chunks, one per head
 * (loopSize = nChannels x nHeads x chunk); every GPU scatters chunk h to
 * head h (its own stays), head h reduces its node's chunks h and sends
 * the sum into SHARP group h (the h-th heads of every node: coll_net.cc
 * one CollNet communicator per head), the root reduces, the result comes
 * back to each head h, which copies it to every other GPU of its node
 * (recvCopySend to all its down peers; they gather). Head h of node v is
 * hr[v * H + h]. A GPU's flows share its channel's ceiling: a head sends
 * H - 1 scatters, its reduction and m - 1 copies, another GPU H
 * scatters. Memory: a scatter or copy 2 passes, the head's reduction of m
 * inputs m + 1, the NIC's write of the result 1. */
static void build_collnet_direct_channel(builder_t *b, const cs_comm_info_t *info, const int *ring, int H)
{
    int nn = info->nnodes, m = info->ppn, algo = CS_ALGO_COLLNET_DIRECT;
    double share = 1.0 / H, cap_head = H + m - 1, cap_other = H;
    const int *blk0 = node_block(ring, nn, m, 0);
    g_autofree int *root = g_new(int, H);
    for (int h = 0; h < H; h++)
        root[h] = add_flow(b, CS_FLOW_COLLNET_ROOT, blk0[h], blk0[h], algo, 0, share, 1);
    for (int v = 0; v < nn; v++) {
        const int *blk = node_block(ring, nn, m, v);
        for (int h = 0; h < H; h++) {
            int head = blk[h];
            int up = add_flow(b, CS_FLOW_COLLNET_UP, head, head, algo, m + 1, share, cap_head);
            for (int i = 0; i < m; i++) {
                if (i == h)
                    continue;
                int sc = add_flow(b, CS_FLOW_P2P, blk[i], head, -1, 2, share, i < H ? cap_head : cap_other);
                add_dep(b, up, sc, 0);
            }
            add_dep(b, root[h], up, 0);
            int dn = add_flow(b, CS_FLOW_COLLNET_DOWN, head, head, algo, 1, share, cap_head);
            add_dep(b, dn, root[h], 0);
            for (int i = 0; i < m; i++) {
                if (i == h)
                    continue;
                int cp = add_flow(b, CS_FLOW_P2P, head, blk[i], -1, 2, share, cap_head);
                add_dep(b, cp, dn, 0);
            }
        }
    }
}

/* NVLS heads (cs_program_nvls_heads per node), the same on every channel:
 * head h of node v is rank hr[v * H + h], the first H ranks of v's block
 * of channel 0's order (NULL: v's first H ranks). */
static int *nvls_head_ranks(const cs_comm_info_t *info, const int *order)
{
    int nn = info->nnodes, m = info->ppn, H = cs_program_nvls_heads(info);
    int *hr = g_new(int, (gsize)nn * H);
    /* ranks are node-major (rank = node x ppn + local): find each node's block */
    for (int k = 0; k < nn; k++) {
        int v = order != NULL ? order[k * m] / m : k;
        for (int h = 0; h < H; h++)
            hr[v * H + h] = order != NULL ? order[k * m + h] : v * m + h;
    }
    return hr;
}

static gboolean dataflow_new(cs_program_t *p, const cs_comm_info_t *info, const int *orders, GError **err)
{
    int n = info->nranks;
    if (info->nnodes < 1 || n != info->nnodes * info->ppn) {
        g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED,
                    "%s needs the same number of GPUs on every node", cs_algo_name(p->algo));
        return FALSE;
    }
    builder_t b = { g_array_new(FALSE, FALSE, sizeof(cs_prog_flow_t)), g_array_new(FALSE, FALSE, sizeof(int)) };
    g_autofree int *heads = p->nvls ? nvls_head_ranks(info, orders) : NULL;
    p->flow_off = g_new(int, p->nch + 1);
    for (int c = 0; c < p->nch; c++) {
        p->flow_off[c] = (int)b.flows->len;
        /* channel c of the first half uses tree 0, of the second tree 1
         * (connect.cc: channel c+nCh is the mirrored tree). NVLSTree
         * alternates instead (connect.cc connectNvls: treeUp[c % 2]): the
         * same bytes on each tree and link, only the order in which the
         * packet engine's flows meet differs; kept as Tree's for now, as
         * lab 7's DCQCN check (tests/cli/labs.sh) sits at its bound either
         * way (+3.2% with c % 2 against its 3%). */
        int tree = cs_program_tree_of(p->nch, c);
        if (p->collnet) {
            if (p->algo == CS_ALGO_COLLNET_CHAIN)
                build_collnet_chain_channel(&b, info, chan_ring(info, orders, c));
            else
                build_collnet_direct_channel(&b, info, chan_ring(info, orders, c), MAX(1, info->collnet_heads));
        } else if (p->nvls) {
            build_nvls_channel(&b, info, heads, tree, p->credit);
        } else {
            build_tree_channel(&b, info, chan_ring(info, orders, c), tree,
                               p->proto == CS_PROTO_SIMPLE && cs_tree_phases_in_sequence(info->nccl_version));
        }
    }
    p->flow_off[p->nch] = (int)b.flows->len;
    p->nflows = (int)b.flows->len;
    return flows_finish(p, &b);
}

/* The program takes the builder's flows and its dependencies, grouped by
 * flow (a counting sort keeps their order). */
static gboolean flows_finish(cs_program_t *p, builder_t *bp)
{
    builder_t b = *bp;
    int np = (int)b.pend->len / 3;
    const int *t = (const int *)b.pend->data;
    p->dep_off = g_new0(int, p->nflows + 1);
    for (int k = 0; k < np; k++)
        p->dep_off[t[3 * k] + 1]++;
    for (int i = 0; i < p->nflows; i++)
        p->dep_off[i + 1] += p->dep_off[i];
    p->deps = g_new(cs_prog_dep_t, MAX(1, np));
    g_autofree int *fill = g_memdup2(p->dep_off, sizeof(int) * (p->nflows + 1));
    for (int k = 0; k < np; k++)
        p->deps[fill[t[3 * k]]++] = (cs_prog_dep_t){ t[3 * k + 1], t[3 * k + 2] };
    p->flows = (cs_prog_flow_t *)g_array_free(b.flows, FALSE);
    g_array_free(b.pend, TRUE);
    return TRUE;
}

/* ---- point-to-point programs: SendRecv, AlltoAll (cs_program.h) ---- */

/* Whether 'rank' sends in 'round' (to send[round]) and receives (from
 * recv[round]): AlltoAll every round, SendRecv the round of its send to
 * rank+1 and that of its receive from rank-1 (nccl-tests sendrecv_perf). */
static void p2p_active(cs_coll_t coll, int n, int rank, const int *send, const int *recv, int round,
                       gboolean *s_p, gboolean *r_p)
{
    gboolean a2a = coll == CS_COLL_ALLTOALL;
    *s_p = a2a || send[round] == (rank + 1) % n;
    *r_p = a2a || recv[round] == (rank - 1 + n) % n;
}

static gboolean p2p_new(cs_program_t *p, const cs_comm_info_t *info, guint64 nbytes, GError **err)
{
    int n = info->nranks, nch = MAX(1, info->p2p_nch), m = MAX(1, info->ppn);
    gboolean blocks = n == info->nnodes * m;   /* node-major blocks of ppn ranks */
    guint64 B = cs_p2p_bytes_per_peer(p->coll, nbytes, n);
    cs_p2p_op_t op, opn;
    cs_p2p_op(info, (gint64)B, FALSE, &op);
    cs_p2p_op(info, (gint64)B, TRUE, &opn);
    int parts = MAX(1, op.nch);
    if (parts > nch) {
        g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED, "%s: %d channels per peer over %d p2p channels",
                    cs_coll_name(p->coll), parts, nch);
        return FALSE;
    }
    /* every rank's schedule: send[r * n + k], recv[r * n + k] */
    g_autofree int *send = g_new(int, (gsize)n * n);
    g_autofree int *recv = g_new(int, (gsize)n * n);
    for (int r = 0; r < n; r++)
        cs_p2p_schedule(info, r, send + (gsize)r * n, recv + (gsize)r * n);
    /* the round in which p receives from r (the schedule is symmetric:
     * normally the round r sends to p in) */
    g_autofree int *rround = g_new(int, (gsize)n * n);
    for (int q = 0; q < n; q++)
        for (int k = n - 1; k >= 0; k--)
            rround[(gsize)q * n + recv[(gsize)q * n + k]] = k;
    /* the (round, part) pairs of each channel, rounds in order (a part's
     * channel depends on the round and the part only) */
    g_autofree int *lst_off = g_new0(int, nch + 1);
    g_autofree int *lst = g_new(int, (gsize)n * parts);
    for (int k = 0; k < n; k++)
        for (int q = 0; q < parts; q++)
            lst_off[cs_p2p_channel(info, k, q) + 1]++;
    for (int c = 0; c < nch; c++)
        lst_off[c + 1] += lst_off[c];
    {
        g_autofree int *fill = g_memdup2(lst_off, sizeof(int) * (nch + 1));
        for (int k = 0; k < n; k++)
            for (int q = 0; q < parts; q++)
                lst[fill[cs_p2p_channel(info, k, q)]++] = k * parts + q;
    }
    /* batches of every rank on every channel: ncclAddWorkBatchToPlan, a
     * new batch at a new group of 8 rounds or after 8 works. bat[r][i]:
     * the batch of list entry i at rank r (-1: no work); per batch slot
     * (boff[r * nch + c] + batch) the copies its CTA makes of a part
     * (passes) and its works that receive from a peer (rworks) */
    gsize nl = (gsize)n * parts;
    g_autofree int *bat = g_new(int, (gsize)n * nl);
    g_autofree int *boff = g_new0(int, (gsize)n * nch + 1);
    GArray *rworks = g_array_new(FALSE, TRUE, sizeof(int));   /* per slot: works receiving from a peer */
    GArray *passes = g_array_new(FALSE, TRUE, sizeof(int));   /* per slot: copies its CTA makes of a part */
    for (int r = 0; r < n; r++) {
        const int *sr = send + (gsize)r * n, *rr = recv + (gsize)r * n;
        for (int c = 0; c < nch; c++) {
            int base = (int)passes->len, nb = 0, group = -1, cur = 0;
            for (int i = lst_off[c]; i < lst_off[c + 1]; i++) {
                int k = lst[i] / parts;
                gboolean sa, ra;
                p2p_active(p->coll, n, r, sr, rr, k, &sa, &ra);
                bat[(gsize)r * nl + i] = -1;
                if (!sa && !ra)
                    continue;
                if (group != k / CS_P2P_PER_BATCH || cur == CS_P2P_PER_BATCH) {
                    int zero = 0;
                    g_array_append_val(rworks, zero);
                    g_array_append_val(passes, zero);
                    nb++;
                    group = k / CS_P2P_PER_BATCH;
                    cur = 0;
                }
                cur++;
                if (ra && rr[k] != r)
                    g_array_index(rworks, int, base + nb - 1)++;
                gboolean sl = blocks ? sr[k] / m == r / m : info->nnodes <= 1;
                gboolean rl = blocks ? rr[k] / m == r / m : info->nnodes <= 1;
                g_array_index(passes, int, base + nb - 1) +=
                    cs_p2p_work_passes(sr[k] == r, sa, ra, cs_p2p_side_copies(info, sl, TRUE),
                                       cs_p2p_side_copies(info, rl, FALSE));
                bat[(gsize)r * nl + i] = nb - 1;
            }
            boff[(gsize)r * nch + c + 1] = base + nb;
        }
    }
    int nslots = (int)passes->len;
    /* list entry of (round, part): its index in lst */
    g_autofree int *entry = g_new(int, nl);
    for (gsize i = 0; i < nl; i++)
        entry[lst[i]] = (int)i;
    builder_t b = { g_array_new(FALSE, FALSE, sizeof(cs_prog_flow_t)), g_array_new(FALSE, FALSE, sizeof(int)) };
    p->flow_off = g_new(int, nch + 1);
    /* per flow: the batch slots at its sender and at its receiver */
    GArray *fslot = g_array_new(FALSE, FALSE, sizeof(int));
    for (int c = 0; c < nch; c++) {
        p->flow_off[c] = (int)b.flows->len;
        guint64 cb = 0;
        for (int r = 0; r < n; r++) {
            const int *sr = send + (gsize)r * n, *rr = recv + (gsize)r * n;
            for (int i = lst_off[c]; i < lst_off[c + 1]; i++) {
                int k = lst[i] / parts, q = lst[i] % parts;
                gboolean sa, ra;
                p2p_active(p->coll, n, r, sr, rr, k, &sa, &ra);
                if (!sa)
                    continue;
                int peer = sr[k];
                /* the receiver's work: the round it receives from r in,
                 * same part, on its channel */
                int kr = rround[(gsize)peer * n + r];
                int ir = entry[kr * parts + q];
                int brecv = bat[(gsize)peer * nl + ir];
                if (brecv < 0 || cs_p2p_channel(info, kr, q) != c) {
                    g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED,
                                "%s: rank %d's send to %d in round %d has no matching receive",
                                cs_coll_name(p->coll), r, peer, k);
                    g_array_free(fslot, TRUE);
                    g_array_free(rworks, TRUE);
                    g_array_free(passes, TRUE);
                    g_array_free(b.flows, TRUE);
                    g_array_free(b.pend, TRUE);
                    return FALSE;
                }
                int ss = boff[(gsize)r * nch + c] + bat[(gsize)r * nl + i];
                int rs = boff[(gsize)peer * nch + c] + brecv;
                /* A batch's CTA copies every part of its works, a
                 * peer's twice (its send here, its receive there), a
                 * self part once; each flow gets the CTA's rate over the
                 * copies of the busier of its two ends' batches. NCCL
                 * splits a batch's warps evenly between its works
                 * (device/sendrecv.h: nWarpPerWork, a self copy on all of
                 * its work's warps), which would leave a self copy's
                 * warps idle once it is done; the measured AlltoAll runs
                 * reach the CTA's pooled rate instead (B200 -g 2/4/8: 432,
                 * 621, 672 GB/s at 16 GiB, the even split gives 352, 527,
                 * 615; GB200/GB300 one tray 615/628, split 527), as the
                 * analytic engine prices it (t_p2p: the busiest
                 * channel's passes). */
                double div = peer == r ? (double)g_array_index(passes, int, ss)
                           : MAX((double)g_array_index(passes, int, ss), (double)g_array_index(passes, int, rs));
                gboolean net = blocks ? r / m != peer / m : info->nnodes > 1;
                int fi = add_flow(&b, CS_FLOW_P2P, r, peer, CS_PROG_NET_P2P, 2, 1.0, div);
                cs_prog_flow_t *fl = &g_array_index(b.flows, cs_prog_flow_t, fi);
                fl->recv_div = MAX(1, g_array_index(rworks, int, rs));
                fl->bytes = B / parts + ((guint64)q < B % parts ? 1 : 0);
                fl->unit = MAX(1, net ? opn.chunk : op.chunk);
                fl->direct = !net && peer != r && cs_comm_p2p_direct(info);
                cb += fl->bytes;
                int sl[2] = { ss, rs };
                g_array_append_vals(fslot, sl, 2);
            }
        }
        p->ch_bytes[c] = cb;
    }
    p->flow_off[nch] = (int)b.flows->len;
    int nf = (int)b.flows->len;
    /* the flows of each batch slot (at either end, once) */
    const int *fs = (const int *)fslot->data;
    g_autofree int *soff = g_new0(int, nslots + 1);
    for (int f = 0; f < nf; f++) {
        soff[fs[2 * f] + 1]++;
        if (fs[2 * f + 1] != fs[2 * f])
            soff[fs[2 * f + 1] + 1]++;
    }
    for (int z = 0; z < nslots; z++)
        soff[z + 1] += soff[z];
    g_autofree int *sfl = g_new(int, MAX(1, soff[nslots]));
    {
        g_autofree int *fill = g_memdup2(soff, sizeof(int) * (nslots + 1));
        for (int f = 0; f < nf; f++) {
            sfl[fill[fs[2 * f]]++] = f;
            if (fs[2 * f + 1] != fs[2 * f])
                sfl[fill[fs[2 * f + 1]]++] = f;
        }
    }
    /* a flow of batch b waits for the end of every flow of batch b-1 of
     * its channel at its sender and at its receiver */
    g_autofree int *seen = g_new(int, MAX(1, nf));
    for (int f = 0; f < nf; f++)
        seen[f] = -1;
    for (int f = 0; f < nf; f++) {
        const cs_prog_flow_t *fl = &g_array_index(b.flows, cs_prog_flow_t, f);
        for (int e = 0; e < 2; e++) {
            int z = fs[2 * f + e], rank = e == 0 ? fl->src : fl->dst;
            /* the slot before, if it is the same rank and channel's */
            int c = 0;
            while (p->flow_off[c + 1] <= f)
                c++;
            if (z == boff[(gsize)rank * nch + c])
                continue;   /* its first batch */
            for (int x = soff[z - 1]; x < soff[z]; x++)
                if (seen[sfl[x]] != f) {
                    seen[sfl[x]] = f;
                    add_dep(&b, f, sfl[x], CS_PROG_LAG_END);
                }
        }
    }
    g_array_free(fslot, TRUE);
    g_array_free(rworks, TRUE);
    g_array_free(passes, TRUE);
    p->nflows = nf;
    return flows_finish(p, &b);
}

gint64 cs_program_flow_units(const cs_program_t *p, int ch, int fi)
{
    const cs_prog_flow_t *fl = &p->flows[fi];
    if (!p->p2p)
        return cs_program_units(p, ch);
    return fl->bytes == 0 ? 0 : (gint64)((fl->bytes + fl->unit - 1) / fl->unit);
}

double cs_program_flow_bytes(const cs_program_t *p, int ch, int fi, gint64 u)
{
    const cs_prog_flow_t *fl = &p->flows[fi];
    if (!p->p2p)
        return cs_program_unit_bytes(p, ch, u) * fl->share;
    double rem = (double)fl->bytes - (double)u * (double)fl->unit;
    return rem <= 0 ? 0 : MIN((double)fl->unit, rem);
}

gint64 cs_program_units(const cs_program_t *p, int ch)
{
    double D = (double)p->ch_bytes[ch];
    return D <= 0 ? 0 : (gint64)ceil(D / (double)p->unit);
}

double cs_program_unit_bytes(const cs_program_t *p, int ch, gint64 u)
{
    double rem = (double)p->ch_bytes[ch] - (double)u * (double)p->unit;
    return rem <= 0 ? 0 : MIN((double)p->unit, rem);
}

cs_program_t *cs_program_new(const cs_comm_info_t *info, cs_coll_t coll, const cs_decision_t *d,
                             guint64 nbytes, int root, const int *orders, GError **err)
{
    int n = info->nranks;
    if (cs_coll_is_p2p(coll) != (d->algo == CS_ALGO_P2P)) {
        g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED, "%s %s has no rank program", cs_algo_name(d->algo),
                    cs_coll_name(coll));
        return NULL;
    }
    if (cs_coll_is_p2p(coll)) {
        if (n < 2) {
            g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED, "a program needs 2 ranks or more and a channel");
            return NULL;
        }
        /* device.h: p2p works use NCCL_STEPS slots of one step each */
        cs_program_t *p = g_new0(cs_program_t, 1);
        p->coll = coll;
        p->algo = CS_ALGO_P2P;
        p->proto = d->proto;
        p->nthreads = d->nthreads;
        p->p2p = TRUE;
        p->nranks = n;
        p->nch = MAX(1, info->p2p_nch);
        p->slices = 1;
        p->credit = CS_NCCL_STEPS;
        p->steps = 1;
        p->chunk = MAX(1, d->chunk_bytes);
        p->ch_bytes = g_new0(guint64, p->nch);
        if (!p2p_new(p, info, nbytes, err)) {
            cs_program_free(p);
            return NULL;
        }
        return p;
    }
    gboolean chain = coll == CS_COLL_BROADCAST || coll == CS_COLL_REDUCE;
    gboolean ring_shape = d->algo == CS_ALGO_RING || (d->algo == CS_ALGO_TREE && coll != CS_COLL_ALLREDUCE);
    gboolean collnet = d->algo == CS_ALGO_COLLNET_DIRECT || d->algo == CS_ALGO_COLLNET_CHAIN;
    gboolean dataflow = coll == CS_COLL_ALLREDUCE &&
                        (d->algo == CS_ALGO_TREE || (d->algo == CS_ALGO_NVLS && info->nnodes == 1) ||
                         (d->algo == CS_ALGO_NVLS_TREE && info->nnodes > 1) ||
                         (collnet && info->nnodes > 1 &&
                          (d->algo == CS_ALGO_COLLNET_CHAIN || info->collnet_heads > 0)));
    if (!ring_shape && !dataflow) {
        g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED,
                    "%s %s has no rank program (rings, chains, Tree/NVLS/NVLSTree/CollNet all-reduce are "
                    "modelled); expected --model analytic or NCCL_ALGO restricted to those",
                    cs_algo_name(d->algo), cs_coll_name(coll));
        return NULL;
    }
    if (n < 2 || d->nchannels < 1) {
        g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED, "a program needs 2 ranks or more and a channel");
        return NULL;
    }
    cs_program_t *p = g_new0(cs_program_t, 1);
    p->coll = coll;
    p->algo = d->algo;
    p->proto = d->proto;
    p->nthreads = d->nthreads;
    p->chain = chain;
    p->nranks = n;
    p->nch = d->nchannels;
    p->reduces = coll == CS_COLL_ALLREDUCE || coll == CS_COLL_REDUCESCATTER || coll == CS_COLL_REDUCE;
    /* collectives.h: Ring AllReduce/AllGather/ReduceScatter with Simple
     * use chunkSteps 4 (NCCL_STEPS/2) and sliceSteps 2 (NCCL_STEPS/4);
     * everything else 1 and 1. */
    gboolean steps42 = d->proto == CS_PROTO_SIMPLE && !chain;
    int slice_steps = steps42 ? 2 : 1;
    p->slices = steps42 ? 2 : 1;
    p->credit = CS_NCCL_STEPS / slice_steps;
    p->chunk = d->chunk_bytes > 0 ? d->chunk_bytes : MAX(1, nbytes / p->nch / (chain ? 1 : n));
    p->steps = chain ? 1 : coll == CS_COLL_ALLREDUCE ? 2 * (n - 1) : n - 1;
    /* A Broadcast/Reduce chain has no edge back into its first rank, so no
     * rank waits for the ranks after it: each rank's kernel ends once it
     * has forwarded its part (device/broadcast.h, reduce.h runRing: send,
     * recvCopySend or recv per chunk, nothing after) and its next kernel
     * on the stream starts on the next call's chunks, which the previous
     * rank has already queued in the 8 slots. nccl-tests launches its
     * timed iterations back to back before it waits, so the chain's fill
     * (n-1 Simple chunks of NCCL_BUFFSIZE / NCCL_STEPS = 512 KiB each,
     * BROADCAST_CHUNKSTEPS = REDUCE_CHUNKSTEPS = 1, enqueue.cc
     * calcCollChunking) is paid once per timed loop, not per call. The
     * engines simulate one call: they leave the fill out by letting each
     * rank start forwarding a unit when its first bytes arrive (the
     * cut-through path LL and LL128 chains take), which keeps every hop's
     * latency once per call and the volume at the shared rate, the
     * analytic engine's one-node chain (t_ring). Across nodes the fill
     * stays, as there (no measured multi-node chain says the proxies'
     * network steps stream the same way). */
    p->streamed = chain && info->nnodes == 1;
    /* A ring on one node (or one NVLink domain) pays each of its 'steps'
     * hops' latency once per call: the measured one-node rings (8 A100 at
     * 1-32 MiB, B200 -g 4/-g 8 at 64-256 MiB) take the volume at the link
     * rate plus that much, where slices that pipeline the hops' latency,
     * as the engines simulate them, would hide it (the analytic engine's
     * one-node ring, t_ring, whose hop costs were fitted so). The engines
     * take the edges' latency off the units and add it once per call
     * (cs_program_latency_once). Across nodes the units carry it: the
     * network hops' latency and the credits' waits interact there. */
    p->latency_once = !chain && !dataflow && info->nnodes == 1;

    p->ch_bytes = g_new(guint64, p->nch);
    for (int c = 0; c < p->nch; c++)
        p->ch_bytes[c] = nbytes / p->nch + ((guint64)c < nbytes % p->nch ? 1 : 0);
    if (dataflow) {
        /* Tree and NVLS: chunkSteps = sliceSteps = 1 (collectives.h), so
         * one chunk per step and the 8 slots as credit; an NVLS step moves
         * a chunk per head (all_reduce.h: loopCount = nHeads x chunkCount). */
        p->chain = FALSE;
        p->reduces = TRUE;
        p->slices = 1;
        p->credit = CS_NCCL_STEPS;
        p->collnet = collnet;
        p->nvls = d->algo != CS_ALGO_TREE && !collnet;
        p->chunk = d->chunk_bytes > 0 ? d->chunk_bytes : MAX(1, nbytes / p->nch);
        /* CollNetDirect, as NVLS: a step moves a chunk per head */
        p->unit = p->chunk * (p->nvls ? (guint64)cs_program_nvls_heads(info)
                              : d->algo == CS_ALGO_COLLNET_DIRECT ? (guint64)MAX(1, info->collnet_heads) : 1);
        p->steps = 1;
        if (!dataflow_new(p, info, orders, err)) {
            cs_program_free(p);
            return NULL;
        }
        return p;
    }

    p->order = g_new(int, (gsize)p->nch * n);
    for (int c = 0; c < p->nch; c++) {
        const int *tmp = chan_ring(info, orders, c);
        int at = 0;
        if (chain)
            for (int i = 0; i < n; i++)
                if (tmp[i] == root)
                    at = i;
        for (int i = 0; i < n; i++)
            p->order[(gsize)c * n + i] = tmp[(at + i) % n];
    }
    return p;
}

/* Bytes one loop moves per channel: the ring's n chunks, the chain's one. */
static double loop_bytes(const cs_program_t *p)
{
    return (double)p->chunk * (p->chain ? 1 : p->nranks);
}

gint64 cs_program_nloops(const cs_program_t *p, int ch)
{
    double D = (double)p->ch_bytes[ch];
    return D <= 0 ? 0 : (gint64)ceil(D / loop_bytes(p));
}

double cs_program_chunk(const cs_program_t *p, int ch, gint64 loop)
{
    double rem = (double)p->ch_bytes[ch] - loop * loop_bytes(p);
    if (rem <= 0)
        return 0;
    if (p->chain)
        return MIN((double)p->chunk, rem);
    /* The last loop splits what is left over the n ranks (all_reduce.h). */
    return MIN((double)p->chunk, ceil(rem / p->nranks));
}

gboolean cs_program_sends(const cs_program_t *p, int pos)
{
    return !p->chain || pos < p->nranks - 1;
}

gboolean cs_program_receives(const cs_program_t *p, int pos)
{
    return !p->chain || pos > 0;
}

double cs_program_latency_once(const cs_program_t *p, const double *lat)
{
    if (!p->latency_once)
        return 0;
    double worst = 0;
    for (int c = 0; c < p->nch; c++) {
        double sum = 0;
        for (int pos = 0; pos < p->nranks; pos++)
            sum += lat[(gsize)c * p->nranks + pos];
        worst = MAX(worst, sum / p->nranks);
    }
    return p->steps * worst;
}

/* Ops per loop: the ring's steps plus the final receive, per slice; the
 * chain's one op per slice. */
static int ops_per_loop(const cs_program_t *p)
{
    return p->chain ? p->slices : (p->steps + 1) * p->slices;
}

gint64 cs_program_nops(const cs_program_t *p, int ch, int pos)
{
    return cs_program_nloops(p, ch) * ops_per_loop(p);
}

void cs_program_op(const cs_program_t *p, int ch, int pos, gint64 op, cs_prog_op_t *op_p)
{
    int opl = ops_per_loop(p);
    gint64 loop = op / opl;
    int in = (int)(op % opl);
    double slice = cs_program_chunk(p, ch, loop) / p->slices;
    cs_prog_op_t o = { .bytes = slice, .consume = -1, .mem_passes = 2 };
    if (p->chain) {
        gint64 unit = loop * p->slices + in;
        o.send = pos < p->nranks - 1;
        o.send_unit = o.send ? unit : -1;
        o.consume = pos > 0 ? unit : -1;
        o.mem_passes = p->reduces && pos > 0 ? 3 : 2;
    } else {
        int sends_per_loop = p->steps * p->slices;
        int j = in / p->slices;                   /* step within the loop */
        o.send = j < p->steps;
        o.send_unit = o.send ? loop * sends_per_loop + in : -1;
        /* Step j > 0 works on what the previous rank sent at step j-1;
         * the final receive takes the previous rank's last step. */
        o.consume = j > 0 ? loop * sends_per_loop + in - p->slices : -1;
        /* AllReduce reduces in its first n-1 steps after the first,
         * ReduceScatter in all of them. */
        gboolean red = p->coll == CS_COLL_REDUCESCATTER ? j > 0
                     : p->coll == CS_COLL_ALLREDUCE ? (j > 0 && j < p->nranks) : FALSE;
        o.mem_passes = red ? 3 : 2;
    }
    *op_p = o;
}
