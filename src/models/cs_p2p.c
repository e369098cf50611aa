/* Point-to-point plans (cs_p2p.h): NCCL v2.30.7 enqueue.cc addP2pToPlan,
 * scheduleP2pTasksToPlan and ncclAddWorkBatchToPlan, init.cc
 * ncclP2pSchedule, include/channel.h ncclP2pChannelBaseForRound,
 * include/device.h ncclP2pChannelForPart. */
#include "config.h"

#include <string.h>

#include "models/cs_p2p.h"

static guint64 div_up(guint64 a, guint64 b)
{
    return (a + b - 1) / b;
}

static int log2_up(int x)
{
    int b = 0;
    while ((1 << b) < x)
        b++;
    return b;
}

/* include/bitops.h reverseBits: the bottom nbits bits of x reversed. */
static int reverse_bits(int x, int nbits)
{
    int r = 0;
    for (int i = 0; i < nbits; i++)
        if (x & (1 << i))
            r |= 1 << (nbits - 1 - i);
    return r;
}

guint64 cs_p2p_bytes_per_peer(cs_coll_t coll, guint64 nbytes, int nranks)
{
    return coll == CS_COLL_ALLTOALL && nranks > 0 ? nbytes / (guint64)nranks : nbytes;
}

/* addP2pToPlan: the channels of one send (dir 1) or receive (dir 0), from
 * the Simple step size; LL when each part is at most NCCL_P2P_LL_THRESHOLD
 * (and the peer is not the rank itself); then the step size of the
 * protocol, halved or quartered for small network sends. nChannelsMin and
 * nChannelsMax come from scheduleP2pTasksToPlan: all p2pnChannelsPerPeer,
 * but at most p2pnChannels over all ranks' peers. */
void cs_p2p_op(const cs_comm_info_t *info, gint64 bytes, gboolean net, cs_p2p_op_t *op_p)
{
    int nmax = MAX(1, info->p2p_nch_per_peer), nmin = nmax;
    while (nmin * info->nranks > info->p2p_nch && nmin > 1)
        nmin /= 2;
    guint64 step = MAX(1, info->p2p_chunk);
    int nch;
    if (bytes <= 0) {
        nch = 1;
    } else {
        guint64 min_part = info->nnodes > 1 ? step / 2 : step / 8;
        guint64 max_part = info->nnodes > 1 ? step : step * 32;
        min_part = MAX(1, min_part);
        nch = (int)MIN((guint64)nmin, div_up((guint64)bytes, min_part));
        guint64 part = MAX(min_part, div_up((guint64)bytes, (guint64)nch));
        while (part > max_part && nch <= nmax / 2) {
            nch *= 2;
            part = div_up((guint64)bytes, (guint64)nch);
        }
    }
    cs_p2p_op_t op = { .nch = nch, .proto = CS_PROTO_SIMPLE, .chunk = step };
    if (bytes >= 0 && (guint64)bytes <= (guint64)nch * info->p2p_ll_threshold)
        op.proto = CS_PROTO_LL;
    /* the LL step: buffSizes[LL] / NCCL_STEPS, half of it data
     * (DEFAULT_LL_BUFFSIZE = NCCL_LL_LINES_PER_THREAD 8 x 512 threads x 8
     * steps x 16-byte lines: 64 KiB per step, 32 KiB of data) */
    guint64 chunk = op.proto == CS_PROTO_LL ? 65536 : step;
    if (info->p2p_chunk_param > 0)
        chunk = info->p2p_chunk_param;
    else if (net && op.proto == CS_PROTO_SIMPLE && (guint64)bytes < step)
        chunk /= 4;
    else if (net && (guint64)bytes < 8 * step)
        chunk /= 2;
    if (op.proto == CS_PROTO_LL)
        chunk /= 2;
    op.chunk = MAX(1, chunk);
    *op_p = op;
}

/* init.cc ncclP2pSchedule for one rank: groups of 'p2p_group' ranks; the
 * group delta follows the quadratic sequence (x*x+x)/2 mod pow2Up(nGroups)
 * (deltas past nGroups skipped), and inside it every local delta. */
static void schedule(const cs_comm_info_t *info, int rank, int *send, int *recv)
{
    int n = info->nranks, m = MAX(1, info->ppn);
    int G = MAX(1, info->p2p_group);
    if (n != info->nnodes * m || m % G != 0) {
        /* nodes of different sizes: plain deltas */
        for (int r = 0; r < n; r++) {
            send[r] = (rank + r) % n;
            recv[r] = (rank - r + n) % n;
        }
        return;
    }
    int node = rank / m, lrank = rank % m;
    int per_node = m / G;
    int local = lrank % G, group = node * per_node + lrank / G;
    int ngroups = n / G, pow2 = 1 << log2_up(ngroups);
    int round = 0;
    guint32 groupRound = 0, delta = 0;
    do {
        if ((int)delta < ngroups) {
            int sg = (group + (int)delta) % ngroups, rg = (group - (int)delta + ngroups) % ngroups;
            for (int d = 0; d < G && round < n; d++) {
                int sl = (sg % per_node) * G + (local + d) % G;
                int rl = (rg % per_node) * G + (local - d + G) % G;
                send[round] = (sg / per_node) * m + sl;
                recv[round] = (rg / per_node) * m + rl;
                round++;
            }
        }
        groupRound++;
        delta = (delta + groupRound) & (guint32)(pow2 - 1);
    } while ((int)groupRound != pow2);
}

void cs_p2p_schedule(const cs_comm_info_t *info, int rank, int *send, int *recv)
{
    g_return_if_fail(rank >= 0 && rank < info->nranks);
    schedule(info, rank, send, recv);
}

int cs_p2p_peer(const cs_comm_info_t *info, int rank, int round, gboolean send)
{
    int n = info->nranks;
    g_return_val_if_fail(rank >= 0 && rank < n && round >= 0 && round < n, -1);
    g_autofree int *s = g_new(int, n);
    g_autofree int *r = g_new(int, n);
    schedule(info, rank, s, r);
    return send ? s[round] : r[round];
}

int cs_p2p_channel(const cs_comm_info_t *info, int round, int part)
{
    int nch = MAX(1, info->p2p_nch), base;
    if (info->nnodes > 1) {
        int G = MAX(1, info->p2p_group);
        base = (round / G) * (int)div_up((guint64)G, CS_P2P_PER_BATCH) + (round % G) / CS_P2P_PER_BATCH;
    } else {
        base = round;
    }
    base = reverse_bits(base, log2_up(nch)) & 0xff;   /* a uint8_t in NCCL */
    return (base + part) & (nch - 1);
}

void cs_p2p_plan_free(cs_p2p_plan_t *p)
{
    if (p == NULL)
        return;
    g_free(p->rounds);
    g_free(p->ch_parts);
    g_free(p->ch_batches);
    g_free(p->ch_passes);
    g_free(p->ch_recvs);
    g_free(p);
}

/* Whether ranks a and b are on one node: node-major blocks of ppn ranks
 * where every node has ppn, else only on one node. */
static gboolean same_node(const cs_comm_info_t *info, int a, int b)
{
    int m = MAX(1, info->ppn);
    if (info->nranks == info->nnodes * m)
        return a / m == b / m;
    return info->nnodes <= 1;
}

/* Rank 0 stands for every rank: the schedule is the same shape for all
 * (every rank's op k is in the same round). For SendRecv, rank 0 sends to
 * 1 and receives from n-1, possibly in different rounds (two works). */
cs_p2p_plan_t *cs_p2p_plan_new(const cs_comm_info_t *info, cs_coll_t coll, guint64 bytes_per_peer)
{
    int n = info->nranks, nch = MAX(1, info->p2p_nch);
    cs_p2p_plan_t *p = g_new0(cs_p2p_plan_t, 1);
    p->coll = coll;
    p->nranks = n;
    cs_p2p_op(info, (gint64)bytes_per_peer, FALSE, &p->op);
    cs_p2p_op(info, (gint64)bytes_per_peer, TRUE, &p->op_net);
    p->ch_parts = g_new0(int, nch);
    p->ch_batches = g_new0(int, nch);
    p->ch_passes = g_new0(int, nch);
    p->ch_recvs = g_new0(int, nch);
    g_autofree int *s = g_new(int, MAX(1, n));
    g_autofree int *r = g_new(int, MAX(1, n));
    schedule(info, 0, s, r);
    g_autofree gboolean *work = g_new0(gboolean, MAX(1, n));
    if (coll == CS_COLL_ALLTOALL) {
        for (int k = 0; k < n; k++)
            work[k] = TRUE;
    } else {
        for (int k = 0; k < n; k++)
            work[k] = n > 1 && (s[k] == 1 % n || r[k] == n - 1);
    }
    p->rounds = g_new0(int, MAX(1, n));
    /* ncclAddWorkBatchToPlan: a channel's batch takes up to 8 works of
     * different rounds of one group of 8 rounds */
    g_autofree int *cur_group = g_new(int, nch);
    g_autofree int *cur_n = g_new0(int, nch);
    for (int c = 0; c < nch; c++)
        cur_group[c] = -1;
    for (int k = 0; k < n; k++) {
        if (!work[k])
            continue;
        p->rounds[p->nops++] = k;
        int parts = p->op.nch;
        int passes = cs_p2p_work_passes(k == 0, coll == CS_COLL_ALLTOALL || s[k] == 1 % n,
                                        coll == CS_COLL_ALLTOALL || r[k] == n - 1,
                                        cs_p2p_side_copies(info, same_node(info, 0, s[k]), TRUE),
                                        cs_p2p_side_copies(info, same_node(info, 0, r[k]), FALSE));
        for (int part = 0; part < parts; part++) {
            int c = cs_p2p_channel(info, k, part);
            p->ch_parts[c]++;
            p->ch_passes[c] += passes;
            if (k != 0 && (coll == CS_COLL_ALLTOALL || r[k] == n - 1))
                p->ch_recvs[c]++;
            if (cur_group[c] != k / CS_P2P_PER_BATCH || cur_n[c] == CS_P2P_PER_BATCH) {
                p->ch_batches[c]++;
                cur_group[c] = k / CS_P2P_PER_BATCH;
                cur_n[c] = 0;
            }
            cur_n[c]++;
        }
    }
    for (int c = 0; c < nch; c++) {
        p->max_parts = MAX(p->max_parts, p->ch_parts[c]);
        p->max_batches = MAX(p->max_batches, p->ch_batches[c]);
        p->max_passes = MAX(p->max_passes, p->ch_passes[c]);
        p->max_recvs = MAX(p->max_recvs, p->ch_recvs[c]);
    }
    return p;
}
