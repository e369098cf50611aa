/* Rank programs: loop and step structure of the ring and the chain,
 * checked against hand counts from NCCL's loops (nccl-model.md section 2). */
#include "config.h"

#include <math.h>
#include <string.h>

#include "models/cs_program.h"
#include "models/cs_presets.h"
#include "sim/cs_engine_flow-int.h"
#include "sim/cs_fabric_load.h"
#include "util/cs_error.h"
#include "engine-fixture.h"

static int order4[] = { 0, 1, 2, 3 };

static void info4(cs_comm_info_t *in)
{
    memset(in, 0, sizeof *in);
    in->nranks = 4;
    in->nnodes = 1;
    in->ppn = 4;
    in->ring_order = order4;
}

/* AllReduce, 4 ranks, 1 channel, Simple, chunk 1024, 10000 bytes: a loop
 * moves 4 x 1024; loops 0-1 full, loop 2 splits the 1808 left over 4 ranks
 * (452 each). 6 sending steps per loop, 2 slices each, plus the final
 * receive. Every rank sends 2(n-1)/n of the data. */
static void test_ring_allreduce(void)
{
    cs_comm_info_t in;
    info4(&in);
    cs_decision_t d = { .algo = CS_ALGO_RING, .proto = CS_PROTO_SIMPLE, .nchannels = 1, .chunk_bytes = 1024 };
    GError *err = NULL;
    g_autoptr(cs_program_t) p = cs_program_new(&in, CS_COLL_ALLREDUCE, &d, 10000, 0, NULL, &err);
    g_assert_no_error(err);
    g_assert_cmpint(p->steps, ==, 6);
    g_assert_cmpint(p->slices, ==, 2);
    g_assert_cmpint(p->credit, ==, 4);          /* 8 slots / 2 steps per slice */
    g_assert_cmpint(cs_program_nloops(p, 0), ==, 3);
    g_assert_cmpfloat(cs_program_chunk(p, 0, 2), ==, 452);
    g_assert_cmpint(cs_program_nops(p, 0, 1), ==, 3 * 7 * 2);
    double sent = 0;
    int sends = 0, reduces = 0;
    for (gint64 o = 0; o < cs_program_nops(p, 0, 1); o++) {
        cs_prog_op_t op;
        cs_program_op(p, 0, 1, o, &op);
        if (op.send) {
            g_assert_cmpint(op.send_unit, ==, sends);
            sent += op.bytes;
            sends++;
            reduces += op.mem_passes == 3;
        }
        /* step j consumes the previous rank's step j-1, same slice */
        if (o % 14 >= 2)
            g_assert_cmpint(op.consume, ==, (o / 14) * 12 + o % 14 - 2);
        else
            g_assert_cmpint(op.consume, ==, -1);
    }
    g_assert_cmpint(sends, ==, 36);
    g_assert_cmpint(reduces, ==, 3 * 3 * 2);   /* steps 1..n-1 reduce */
    g_assert_cmpfloat(fabs(sent - 2.0 * 3 / 4 * (2 * 4096 + 4 * 452)), <, 1e-9);
}

/* Broadcast from rank 2: the chain starts at the root, the last position
 * only receives; LL: one slice per chunk, credit 8. */
static void test_chain(void)
{
    cs_comm_info_t in;
    info4(&in);
    cs_decision_t d = { .algo = CS_ALGO_RING, .proto = CS_PROTO_LL, .nchannels = 2, .chunk_bytes = 100 };
    g_autoptr(cs_program_t) p = cs_program_new(&in, CS_COLL_BROADCAST, &d, 1001, 2, NULL, NULL);
    g_assert_nonnull(p);
    g_assert_cmpint(cs_program_rank(p, 0, 0), ==, 2);
    g_assert_cmpint(cs_program_rank(p, 1, 3), ==, 1);
    g_assert_cmpint(p->credit, ==, 8);
    g_assert_cmpint((int)p->ch_bytes[0], ==, 501);
    g_assert_cmpint(cs_program_nloops(p, 0), ==, 6);
    g_assert_cmpfloat(cs_program_chunk(p, 0, 5), ==, 1);
    cs_prog_op_t op;
    cs_program_op(p, 0, 0, 3, &op);
    g_assert_true(op.send);
    g_assert_cmpint(op.consume, ==, -1);
    cs_program_op(p, 0, 3, 3, &op);
    g_assert_false(op.send);
    g_assert_cmpint(op.consume, ==, 3);
    g_assert_false(cs_program_sends(p, 3));
    g_assert_false(cs_program_receives(p, 0));
}

/* Two nodes of two: each channel runs the ring it is given (NCCL's ring
 * search orders each channel's GPUs in a node its own way); NVLS across
 * nodes (SHARP) is refused. */
static void test_rotation_and_refusal(void)
{
    static int order[] = { 0, 1, 2, 3 };
    cs_comm_info_t in;
    info4(&in);
    in.nnodes = 2;
    in.ppn = 2;
    in.ring_order = order;
    cs_decision_t d = { .algo = CS_ALGO_RING, .proto = CS_PROTO_SIMPLE, .nchannels = 2, .chunk_bytes = 1024 };
    static const int orders[] = { 0, 1, 2, 3, /* channel 1: */ 1, 0, 3, 2 };
    g_autoptr(cs_program_t) p = cs_program_new(&in, CS_COLL_ALLGATHER, &d, 8192, 0, orders, NULL);
    g_assert_nonnull(p);
    static const int want0[] = { 0, 1, 2, 3 }, want1[] = { 1, 0, 3, 2 };
    for (int i = 0; i < 4; i++) {
        g_assert_cmpint(cs_program_rank(p, 0, i), ==, want0[i]);
        g_assert_cmpint(cs_program_rank(p, 1, i), ==, want1[i]);
    }
    g_assert_cmpint(p->steps, ==, 3);
    d.algo = CS_ALGO_NVLS;
    GError *err = NULL;
    g_assert_null(cs_program_new(&in, CS_COLL_ALLREDUCE, &d, 8192, 0, NULL, &err));
    g_assert_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED);
    g_clear_error(&err);
}

/* Index of the P2P flow src -> dst of channel c, or -1. */
static int find_flow(const cs_program_t *p, int c, int src, int dst)
{
    for (int i = p->flow_off[c]; i < p->flow_off[c + 1]; i++)
        if (p->flows[i].kind == CS_FLOW_P2P && p->flows[i].src == src && p->flows[i].dst == dst)
            return i;
    return -1;
}

static gboolean depends(const cs_program_t *p, int fl, int on, int lag)
{
    for (int k = p->dep_off[fl]; k < p->dep_off[fl + 1]; k++)
        if (p->deps[k].flow == on && p->deps[k].lag == lag)
            return TRUE;
    return FALSE;
}

/* Tree AllReduce, 4 nodes of 2 GPUs, 2 channels. Node heads are the
 * second GPU of each node (the ring leaves the node there): 1, 3, 5, 7.
 * By hand from trees.cc's rule: tree 0 (channel 0) is 0 <- 2 <- {1, 3};
 * tree 1 (channel 1, the mirror r -> 3-r) is 3 <- 1 <- {2, 0}. Each
 * channel: 4 chain flows up, 3 tree edges up and 3 down, 4 chain flows
 * down. The root's down flows wait for its chain and its child's up flow. */
static void test_tree(void)
{
    static int order[] = { 0, 1, 2, 3, 4, 5, 6, 7 };
    cs_comm_info_t in;
    info4(&in);
    in.nranks = 8;
    in.nnodes = 4;
    in.ppn = 2;
    in.ring_order = order;
    cs_decision_t d = { .algo = CS_ALGO_TREE, .proto = CS_PROTO_SIMPLE, .nchannels = 2, .chunk_bytes = 1000 };
    GError *err = NULL;
    g_autoptr(cs_program_t) p = cs_program_new(&in, CS_COLL_ALLREDUCE, &d, 10001, 0, NULL, &err);
    g_assert_no_error(err);
    g_assert_cmpint(p->nflows, ==, 28);
    g_assert_cmpint(p->flow_off[1], ==, 14);
    g_assert_cmpint(p->credit, ==, 8);
    g_assert_cmpint(cs_program_units(p, 0), ==, 6);                 /* 5001 bytes in 1000-byte units */
    g_assert_cmpfloat(cs_program_unit_bytes(p, 0, 5), ==, 1);
    /* tree 0 edges between heads, both ways; nothing else crosses nodes */
    static const int t0[3][2] = { { 3, 5 }, { 7, 5 }, { 5, 1 } };   /* node 1->2, 3->2, 2->0 */
    static const int t1[3][2] = { { 5, 3 }, { 1, 3 }, { 3, 7 } };   /* node 2->1, 0->1, 1->3 */
    for (int k = 0; k < 3; k++) {
        g_assert_cmpint(find_flow(p, 0, t0[k][0], t0[k][1]), >=, 0);
        g_assert_cmpint(find_flow(p, 0, t0[k][1], t0[k][0]), >=, 0);
        g_assert_cmpint(find_flow(p, 1, t1[k][0], t1[k][1]), >=, 0);
        g_assert_cmpint(find_flow(p, 1, t1[k][1], t1[k][0]), >=, 0);
    }
    int cross = 0;
    for (int i = 0; i < p->flow_off[1]; i++)
        cross += p->flows[i].src / 2 != p->flows[i].dst / 2;
    g_assert_cmpint(cross, ==, 6);
    /* root (node 0, head 1) of tree 0: its down flow to node 2 needs the
     * chain 0 -> 1 and node 2's up flow */
    int down = find_flow(p, 0, 1, 5);
    g_assert_true(depends(p, down, find_flow(p, 0, 0, 1), 0));
    g_assert_true(depends(p, down, find_flow(p, 0, 5, 1), 0));
    /* node 2's up flow needs its chain and both children */
    int up = find_flow(p, 0, 5, 1);
    g_assert_true(depends(p, up, find_flow(p, 0, 4, 5), 0));
    g_assert_true(depends(p, up, find_flow(p, 0, 3, 5), 0));
    g_assert_true(depends(p, up, find_flow(p, 0, 7, 5), 0));
    /* node 1's chain down starts from what came down to its head */
    g_assert_true(depends(p, find_flow(p, 0, 3, 2), find_flow(p, 0, 5, 3), 0));
    /* split threads: half the channel's ceiling per flow; reduce 3 passes,
     * except the chain's first sender, which only copies */
    g_assert_cmpfloat(p->flows[find_flow(p, 0, 0, 1)].cap_div, ==, 2);
    g_assert_cmpint(p->flows[find_flow(p, 0, 0, 1)].mem_passes, ==, 2);
    g_assert_cmpint(p->flows[up].mem_passes, ==, 3);
}

/* NVLS, one node of 4: per GPU a reduction and a multicast of 1/4 of each
 * 4-chunk unit; a multicast waits for its GPU's reduction and for every
 * other GPU's multicast 8 units (slots) before (the gather buffer); a
 * reduction for every GPU's multicast 8 units before (on one node the
 * multicast passes the reduced slice on, freeing the scatter's slot). */
static void test_nvls(void)
{
    cs_comm_info_t in;
    info4(&in);
    cs_decision_t d = { .algo = CS_ALGO_NVLS, .proto = CS_PROTO_SIMPLE, .nchannels = 1, .chunk_bytes = 100 };
    GError *err = NULL;
    g_autoptr(cs_program_t) p = cs_program_new(&in, CS_COLL_ALLREDUCE, &d, 1000, 0, NULL, &err);
    g_assert_no_error(err);
    g_assert_true(p->nvls);
    g_assert_cmpint(p->nflows, ==, 8);
    g_assert_cmpint((int)p->unit, ==, 400);
    g_assert_cmpint(cs_program_units(p, 0), ==, 3);
    int red = 0, mc = 0;
    for (int i = 0; i < p->nflows; i++) {
        const cs_prog_flow_t *fl = &p->flows[i];
        g_assert_cmpfloat(fl->share, ==, 0.25);
        g_assert_cmpfloat(fl->cap_div, ==, 5);
        g_assert_cmpint(p->dep_off[i + 1] - p->dep_off[i], ==, 4);
        int own = 0;
        for (int k = p->dep_off[i]; k < p->dep_off[i + 1]; k++) {
            const cs_prog_flow_t *dp = &p->flows[p->deps[k].flow];
            if (fl->kind == CS_FLOW_NVLS_REDUCE) {
                g_assert_cmpint(dp->kind, ==, CS_FLOW_NVLS_MCAST);
                g_assert_cmpint(p->deps[k].lag, ==, 8);
            } else if (dp->kind == CS_FLOW_NVLS_REDUCE) {
                g_assert_cmpint(dp->src, ==, fl->src);
                g_assert_cmpint(p->deps[k].lag, ==, 0);
                own++;
            } else {
                g_assert_cmpint(dp->src, !=, fl->src);
                g_assert_cmpint(p->deps[k].lag, ==, 8);
            }
        }
        if (fl->kind == CS_FLOW_NVLS_REDUCE)
            red++;
        else {
            g_assert_cmpint(own, ==, 1);
            mc++;
        }
    }
    g_assert_cmpint(red, ==, 4);
    g_assert_cmpint(mc, ==, 4);
    /* NVLSTree on one node is refused (NCCL never picks it there) */
    d.algo = CS_ALGO_NVLS_TREE;
    g_assert_null(cs_program_new(&in, CS_COLL_ALLREDUCE, &d, 1000, 0, NULL, &err));
    g_assert_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED);
    g_clear_error(&err);
}

/* NVLSTree, 2 nodes of 2 GPUs, tree 0 (node 1's parent is node 0): the
 * reduce and broadcast buffers are separate (transport/nvls.cc), so no
 * reduction waits for a multicast at the tree's leaf node; there a GPU's
 * reduction waits for every GPU of its node to have sent unit u - 8 up the
 * tree, and nothing waits on the round trip through the tree. */
static void test_nvls_tree(void)
{
    static int order[] = { 0, 1, 2, 3 };
    cs_comm_info_t in;
    info4(&in);
    in.nnodes = 2;
    in.ppn = 2;
    in.ring_order = order;
    cs_decision_t d = { .algo = CS_ALGO_NVLS_TREE, .proto = CS_PROTO_SIMPLE, .nchannels = 1, .chunk_bytes = 100 };
    GError *err = NULL;
    g_autoptr(cs_program_t) p = cs_program_new(&in, CS_COLL_ALLREDUCE, &d, 1000, 0, NULL, &err);
    g_assert_no_error(err);
    int leaf_red = 0;
    for (int i = 0; i < p->nflows; i++) {
        const cs_prog_flow_t *fl = &p->flows[i];
        if (fl->kind != CS_FLOW_NVLS_REDUCE || fl->src < 2)
            continue;
        leaf_red++;
        int ups = 0;
        for (int k = p->dep_off[i]; k < p->dep_off[i + 1]; k++) {
            const cs_prog_flow_t *dp = &p->flows[p->deps[k].flow];
            g_assert_cmpint(dp->kind, ==, CS_FLOW_P2P);
            g_assert_cmpint(dp->src / 2, ==, 1);     /* node 1's ... */
            g_assert_cmpint(dp->dst / 2, ==, 0);     /* ... sends up to node 0 */
            g_assert_cmpint(p->deps[k].lag, ==, 8);
            ups++;
        }
        g_assert_cmpint(ups, ==, 2);
    }
    g_assert_cmpint(leaf_red, ==, 2);
}

/* A node of n ranks for point-to-point programs: NCCL's p2p setup by hand
 * (p2p_nch channels, 2 per peer, schedule groups of the node, 512 KiB
 * steps, 16 KiB LL threshold). */
static void info_p2p(cs_comm_info_t *in, int n, int p2p_nch)
{
    memset(in, 0, sizeof *in);
    in->nranks = n;
    in->nnodes = 1;
    in->ppn = n;
    in->ring_order = order4;
    in->p2p_nch = p2p_nch;
    in->p2p_nch_per_peer = 2;
    in->p2p_group = n;
    in->p2p_chunk = 524288;
    in->p2p_ll_threshold = 16384;
}

/* AlltoAll of 4 MiB over 4 ranks and 4 p2p channels: B = 1 MiB per peer;
 * one part per send (2 per peer halved while 2 x 4 ranks > 4 channels);
 * round k on channel bitreverse(k) (0, 2, 1, 3), one work per channel, so
 * no batch waits and each flow has the CTA's half (send and receive):
 * cap_div 2; 2 units of 512 KiB each; a self send in round 0, one copy
 * by the whole work (sendrecv.h isCopy): cap_div 1. SendRecv:
 * r -> r+1 in round 1 (channel 2), the same split. */
static void test_p2p(void)
{
    cs_comm_info_t in;
    info_p2p(&in, 4, 4);
    cs_decision_t d = { .algo = CS_ALGO_P2P, .proto = CS_PROTO_SIMPLE, .nchannels = 1, .chunk_bytes = 524288 };
    GError *err = NULL;
    g_autoptr(cs_program_t) p = cs_program_new(&in, CS_COLL_ALLTOALL, &d, 4 << 20, 0, NULL, &err);
    g_assert_no_error(err);
    g_assert_true(p->p2p);
    g_assert_cmpint(p->nch, ==, 4);
    g_assert_cmpint(p->nflows, ==, 16);
    g_assert_cmpint(p->dep_off[p->nflows], ==, 0);
    static const int chan_of_round[4] = { 0, 2, 1, 3 };
    int pairs[4][4] = { { 0 } };
    for (int c = 0; c < 4; c++)
        for (int fi = p->flow_off[c]; fi < p->flow_off[c + 1]; fi++) {
            const cs_prog_flow_t *fl = &p->flows[fi];
            int round = (fl->dst - fl->src + 4) % 4;
            g_assert_cmpint(chan_of_round[round], ==, c);
            g_assert_cmpint(fl->kind, ==, CS_FLOW_P2P);
            g_assert_cmpint(fl->net_local, ==, CS_PROG_NET_P2P);
            g_assert_cmpuint(fl->bytes, ==, 1 << 20);
            g_assert_cmpuint(fl->unit, ==, 524288);
            g_assert_cmpfloat(fl->cap_div, ==, fl->src == fl->dst ? 1 : 2);
            g_assert_cmpint(cs_program_flow_units(p, c, fi), ==, 2);
            g_assert_cmpfloat(cs_program_flow_bytes(p, c, fi, 1), ==, 524288);
            g_assert_cmpfloat(cs_program_flow_bytes(p, c, fi, 2), ==, 0);
            pairs[fl->src][fl->dst]++;
        }
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++)
            g_assert_cmpint(pairs[a][b], ==, 1);

    g_autoptr(cs_program_t) q = cs_program_new(&in, CS_COLL_SENDRECV, &d, 1 << 20, 0, NULL, &err);
    g_assert_no_error(err);
    g_assert_cmpint(q->nflows, ==, 4);
    g_assert_cmpint(q->flow_off[3] - q->flow_off[2], ==, 4);
    for (int fi = 0; fi < q->nflows; fi++) {
        g_assert_cmpint(q->flows[fi].dst, ==, (q->flows[fi].src + 1) % 4);
        g_assert_cmpuint(q->flows[fi].bytes, ==, 1 << 20);
        g_assert_cmpfloat(q->flows[fi].cap_div, ==, 2);
    }
}

/* Batches: 16 ranks on one p2p channel run rounds 0-7, then 8-15 (groups
 * of 8 rounds, enqueue.cc): the first batch's 8 x 16 flows wait for
 * nothing; each of the second's waits for the whole (CS_PROG_LAG_END) of
 * the first batch's flows at its sender and its receiver: their 8 sends
 * and 8 receives each, 32 flows less the ones counted at both ends. A
 * batch's CTA copies each peer part twice (send, receive) and a self part
 * once, and each flow takes the CTA over its batch's copies: the first
 * batch 1 + 7 x 2 = 15 (round 0's copy to the rank itself included), the
 * second 8 x 2 = 16. */
static void test_p2p_batches(void)
{
    cs_comm_info_t in;
    info_p2p(&in, 16, 1);
    cs_decision_t d = { .algo = CS_ALGO_P2P, .proto = CS_PROTO_SIMPLE, .nchannels = 1, .chunk_bytes = 524288 };
    GError *err = NULL;
    g_autoptr(cs_program_t) p = cs_program_new(&in, CS_COLL_ALLTOALL, &d, 16 << 20, 0, NULL, &err);
    g_assert_no_error(err);
    g_assert_cmpint(p->nflows, ==, 256);
    for (int fi = 0; fi < p->nflows; fi++) {
        const cs_prog_flow_t *fl = &p->flows[fi];
        int round = (fl->dst - fl->src + 16) % 16;
        int nd = p->dep_off[fi + 1] - p->dep_off[fi];
        g_assert_cmpfloat(fl->cap_div, ==, round < 8 ? 15 : 16);
        if (round < 8) {
            g_assert_cmpint(nd, ==, 0);
            continue;
        }
        /* at the sender s: s -> s+j and s-j -> s, j < 8; at the receiver
         * r = s+round: r -> r+j and r-j -> r; shared: s+j == r-j' ... */
        int want = 0, s = fl->src, r = fl->dst;
        for (int x = 0; x < 16; x++)
            for (int y = 0; y < 16; y++) {
                int k = (y - x + 16) % 16;
                if (k < 8 && (x == s || y == s || x == r || y == r))
                    want++;
            }
        g_assert_cmpint(nd, ==, want);
        for (int k = p->dep_off[fi]; k < p->dep_off[fi + 1]; k++) {
            const cs_prog_flow_t *g = &p->flows[p->deps[k].flow];
            g_assert_cmpint(p->deps[k].lag, ==, CS_PROG_LAG_END);
            g_assert_cmpint((g->dst - g->src + 16) % 16, <, 8);
            g_assert_true(g->src == s || g->dst == s || g->src == r || g->dst == r);
        }
    }
}

/* NVLS heads (device/all_reduce.h NVLS_TREE, connect.cc connectNvls): 2
 * nodes of 4 GPUs with 2 NVLS heads each, local GPUs 1 and 3 (listed
 * first in each node's block), 2 channels, chunk 100, 1000 bytes. Only the
 * heads have flows: per channel and node 2 reductions and 2 multicasts,
 * and per head h one tree edge each way between the h-th heads (1 <-> 5,
 * 3 <-> 7), each flow 1/2 of a unit of 2 chunks (one per head), the
 * channel's ceiling split 3 ways (S(1 + 1/2) per head). Channel 0 takes
 * tree 0, channel 1 tree 1: on channel 0 node 1 sends up (its edge waits for its own
 * reduction only; node 0's down edge also for that up edge), on channel 1
 * node 0 does. Each head sends S/2 = 500 bytes
 * over the network in all (its 1/2 of each 500-byte channel, up on one
 * channel, down on the other); GPUs 0, 2, 4, 6 nothing. */
static void test_nvls_heads(void)
{
    static int order[] = { 1, 3, 0, 2, 5, 7, 4, 6 };
    cs_comm_info_t in;
    memset(&in, 0, sizeof in);
    in.nranks = 8;
    in.nnodes = 2;
    in.ppn = 4;
    in.nvls_nch = 2;
    in.ring_order = order;
    g_assert_cmpint(cs_program_nvls_heads(&in), ==, 2);
    cs_decision_t d = { .algo = CS_ALGO_NVLS_TREE, .proto = CS_PROTO_SIMPLE, .nchannels = 2, .chunk_bytes = 100 };
    GError *err = NULL;
    int orders[16];
    memcpy(orders, order, sizeof order);
    memcpy(orders + 8, order, sizeof order);
    g_autoptr(cs_program_t) p = cs_program_new(&in, CS_COLL_ALLREDUCE, &d, 1000, 0, orders, &err);
    g_assert_no_error(err);
    g_assert_cmpint((int)p->unit, ==, 200);
    g_assert_cmpint(p->nflows, ==, 2 * (4 + 4 + 4));
    double sent[8] = { 0 };
    for (int c = 0; c < 2; c++) {
        int red = 0, mc = 0, net = 0;
        for (int fi = p->flow_off[c]; fi < p->flow_off[c + 1]; fi++) {
            const cs_prog_flow_t *fl = &p->flows[fi];
            g_assert_true(fl->src % 2 == 1 && fl->dst % 2 == 1);   /* heads only */
            g_assert_cmpfloat(fl->share, ==, 0.5);
            g_assert_cmpfloat(fl->cap_div, ==, 3);
            if (fl->kind == CS_FLOW_NVLS_REDUCE) {
                red++;
                continue;
            }
            if (fl->kind == CS_FLOW_NVLS_MCAST) {
                mc++;
                continue;
            }
            net++;
            g_assert_cmpint(fl->dst, ==, (fl->src + 4) % 8);       /* the same head of the other node */
            g_assert_cmpint(fl->net_local, ==, (fl->src % 4) / 2);  /* its head index */
            sent[fl->src] += fl->share * (double)p->ch_bytes[c];
            /* the child's up edge waits for its own reduction only, the
             * root's down edge also for the child's up edge */
            int child = c == 0 ? 5 : 1;
            gboolean on_red = FALSE, on_net = FALSE;
            for (int k = p->dep_off[fi]; k < p->dep_off[fi + 1]; k++) {
                const cs_prog_flow_t *dp = &p->flows[p->deps[k].flow];
                on_red |= dp->kind == CS_FLOW_NVLS_REDUCE && dp->src == fl->src && p->deps[k].lag == 0;
                on_net |= dp->kind == CS_FLOW_P2P && dp->dst == fl->src && p->deps[k].lag == 0;
            }
            g_assert_true(on_red);
            g_assert_true(on_net == !(fl->src == child || fl->src == child + 2));
        }
        g_assert_cmpint(red, ==, 4);
        g_assert_cmpint(mc, ==, 4);
        g_assert_cmpint(net, ==, 4);
    }
    for (int r = 0; r < 8; r++)
        g_assert_cmpfloat(sent[r], ==, r % 2 == 1 ? 500 : 0);
}

/* NVLSTree across two GB200 NVL72 racks (72 GPUs, a 400G NIC each): NCCL's
 * NVLS search gives 32 channels, one per GPU 0-31 and its NIC (search.cc:
 * at most NCCL_MAX_NVLS_ARITY = 32), so 32 heads per rack. The program the
 * engines run (cs_flow_prog_orders' heads) has flows on those 64 GPUs only,
 * each head's tree edges go to the same GPU of the other rack through the
 * head's own NIC, and each head sends S/32 over the network; the routed
 * load (cs_fabric_load, what the analytic engine prices) puts the same
 * bytes on the 64 heads' NIC ports and nothing on the other 80. */
static void test_nvls_heads_nvl72(void)
{
    GError *err = NULL;
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    o.nodes = 2;
    cs_topo_t *t = cs_preset_build("gb200-nvl72", &o, &err);
    g_assert_no_error(err);
    job_fix_t j;
    fix_init(&j, t, "NVLSTree", "Simple");
    const cs_comm_info_t *in = cs_comm_info(j.comm);
    int n = in->nranks, m = in->ppn, H = cs_program_nvls_heads(in);
    g_assert_cmpint(m, ==, 72);
    g_assert_cmpint(H, ==, 32);
    cs_engine_job_t job = { .topo = j.topo, .comm = j.comm, .params = &j.params, .coll = CS_COLL_ALLREDUCE,
                            .dtype = CS_DTYPE_FLOAT };
    guint64 S = 1ull << 30;
    cs_decision_t d;
    g_assert_true(cs_comm_decide(j.comm, CS_COLL_ALLREDUCE, CS_DTYPE_FLOAT, S, &d, &err));
    g_assert_cmpint(d.algo, ==, CS_ALGO_NVLS_TREE);
    cs_flow_net_t net;
    g_assert_true(cs_flow_net_init(&net, &job, &err));
    g_assert_no_error(err);
    g_autofree int *orders = cs_flow_prog_orders(&net, &d);
    cs_program_t *p = cs_program_new(in, CS_COLL_ALLREDUCE, &d, S, 0, orders, &err);
    g_assert_no_error(err);
    g_autofree double *sent = g_new0(double, n);
    g_autofree gboolean *has = g_new0(gboolean, n);
    for (int c = 0; c < p->nch; c++)
        for (int fi = p->flow_off[c]; fi < p->flow_off[c + 1]; fi++) {
            const cs_prog_flow_t *fl = &p->flows[fi];
            has[fl->src] = TRUE;
            if (fl->kind != CS_FLOW_P2P)
                continue;
            g_assert_cmpint(fl->dst, ==, (fl->src + m) % n);
            sent[fl->src] += fl->share * (double)p->ch_bytes[c];
        }
    int heads = 0;
    for (int r = 0; r < n; r++) {
        int nic = cs_comm_chan_nic(j.comm, CS_ALGO_NVLS_TREE, r, 0);
        g_assert_true(has[r] == (nic >= 0));
        g_assert_true(has[r] == (r % m < H));
        heads += has[r];
        if (has[r])
            g_assert_cmpfloat(fabs(sent[r] - (double)S / H), <, 1.0);
        else
            g_assert_cmpfloat(sent[r], ==, 0);
    }
    g_assert_cmpint(heads, ==, 2 * H);
    cs_program_free(p);
    cs_flow_net_clear(&net);

    g_autoptr(cs_fabric_load_t) fl = cs_fabric_load_new(&job, &err);
    g_assert_no_error(err);
    int nl = 0, ports = 0;
    const cs_fabric_link_load_t *ll = cs_fabric_load_links(fl, &d, &nl);
    double want = 1.0 / (H * cs_params_get(&j.params, CS_P_EFF_NET));
    for (int k = 0; k < nl; k++) {
        const cs_link_t *l = &j.topo->links[ll[k].res];
        if (j.topo->devs[l->src].kind != CS_DEV_NIC)
            continue;
        ports++;
        g_assert_cmpfloat(fabs(ll[k].load - want), <, 1e-9 * want);
    }
    g_assert_cmpint(ports, ==, 2 * H);
    fix_clear(&j);
}

/* Dependencies of flow fi that are flows of kind k. */
static int deps_of_kind(const cs_program_t *p, int fi, cs_prog_flow_kind_t k)
{
    int n = 0;
    for (int j = p->dep_off[fi]; j < p->dep_off[fi + 1]; j++)
        n += p->flows[p->deps[j].flow].kind == k;
    return n;
}

/* CollNet all-reduce, 2 nodes of 2 GPUs (ranks 0-1, 2-3), one channel.
 * Chain (order: each node's chain, head last: 1 -> 0 and 3 -> 2): per node
 * the chain's send up, the head's UP, its DOWN and the send down, and the
 * one ROOT: 9 flows; ROOT waits for both UPs, each DOWN for ROOT, each
 * UP for its chain. Direct with 2 heads (both GPUs): per node and head
 * the other GPU's scatter, UP, DOWN and the copy to the other GPU, and a
 * ROOT per head: 2 x 2 x 4 + 2 = 18; a unit covers a chunk per head. One
 * node: refused. */
static void test_collnet(void)
{
    static int order[] = { 1, 0, 3, 2 };
    cs_comm_info_t in;
    info4(&in);
    in.nnodes = 2;
    in.ppn = 2;
    in.collnet_heads = 2;
    in.ring_order = order;
    cs_decision_t d = { .algo = CS_ALGO_COLLNET_CHAIN, .proto = CS_PROTO_SIMPLE, .nchannels = 1,
                        .chunk_bytes = 1024 };
    GError *err = NULL;
    g_autoptr(cs_program_t) p = cs_program_new(&in, CS_COLL_ALLREDUCE, &d, 8192, 0, order, &err);
    g_assert_no_error(err);
    g_assert_true(p->collnet);
    g_assert_false(p->nvls);
    g_assert_cmpint(p->nflows, ==, 9);
    g_assert_cmpuint(p->unit, ==, 1024);
    int roots = 0, ups = 0, downs = 0;
    for (int i = 0; i < p->nflows; i++) {
        const cs_prog_flow_t *f = &p->flows[i];
        if (f->kind == CS_FLOW_COLLNET_ROOT) {
            roots++;
            g_assert_cmpint(deps_of_kind(p, i, CS_FLOW_COLLNET_UP), ==, 2);
        } else if (f->kind == CS_FLOW_COLLNET_UP) {
            ups++;
            g_assert_true(f->src == 0 || f->src == 2);   /* the heads */
            g_assert_cmpint(f->net_local, ==, CS_ALGO_COLLNET_CHAIN);
            g_assert_cmpint(deps_of_kind(p, i, CS_FLOW_P2P), ==, 1);
        } else if (f->kind == CS_FLOW_COLLNET_DOWN) {
            downs++;
            g_assert_cmpint(deps_of_kind(p, i, CS_FLOW_COLLNET_ROOT), ==, 1);
        }
    }
    g_assert_cmpint(roots, ==, 1);
    g_assert_cmpint(ups, ==, 2);
    g_assert_cmpint(downs, ==, 2);

    static int dorder[] = { 0, 1, 2, 3 };
    d.algo = CS_ALGO_COLLNET_DIRECT;
    g_autoptr(cs_program_t) q = cs_program_new(&in, CS_COLL_ALLREDUCE, &d, 8192, 0, dorder, &err);
    g_assert_no_error(err);
    g_assert_cmpint(q->nflows, ==, 18);
    g_assert_cmpuint(q->unit, ==, 2048);
    int scatters = 0;
    for (int i = 0; i < q->nflows; i++) {
        const cs_prog_flow_t *f = &q->flows[i];
        g_assert_cmpfloat(f->share, ==, 0.5);
        if (f->kind == CS_FLOW_COLLNET_UP) {
            g_assert_cmpint(deps_of_kind(q, i, CS_FLOW_P2P), ==, 1);   /* the other GPU's scatter */
            scatters++;
        }
        if (f->kind == CS_FLOW_COLLNET_ROOT)
            g_assert_cmpint(deps_of_kind(q, i, CS_FLOW_COLLNET_UP), ==, 2);
    }
    g_assert_cmpint(scatters, ==, 4);

    in.nnodes = 1;
    in.ppn = 4;
    g_assert_null(cs_program_new(&in, CS_COLL_ALLREDUCE, &d, 8192, 0, dorder, &err));
    g_assert_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED);
    g_clear_error(&err);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/program/ring-allreduce", test_ring_allreduce);
    g_test_add_func("/program/chain", test_chain);
    g_test_add_func("/program/rotation-refusal", test_rotation_and_refusal);
    g_test_add_func("/program/tree", test_tree);
    g_test_add_func("/program/nvls", test_nvls);
    g_test_add_func("/program/nvls-tree", test_nvls_tree);
    g_test_add_func("/program/p2p", test_p2p);
    g_test_add_func("/program/p2p-batches", test_p2p_batches);
    g_test_add_func("/program/nvls-heads", test_nvls_heads);
    g_test_add_func("/program/nvls-heads-nvl72", test_nvls_heads_nvl72);
    g_test_add_func("/program/collnet", test_collnet);
    return g_test_run();
}
