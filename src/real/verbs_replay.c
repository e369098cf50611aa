/* collsim real --verbs: the inter-node traffic of a collective, as the
 * messages one NIC sends, so that two hosts can replay it over RDMA writes.
 *
 * What NCCL does (reference nccl-model.md §2, enqueue.cc calcCollChunking,
 * proxy.cc): a Ring call of nBytes over nCh channels runs loops of
 * nCh x nchunksPerLoop x chunk bytes; in each loop every channel's ring
 * crosses each node boundary once per direction and sends one chunk per
 * step, nstepsPerLoop steps (2(n-1) AllReduce, n-1 AllGather and
 * ReduceScatter, 1 Broadcast and Reduce). The last loop's chunk shrinks to
 * ceil(rest / (nCh x nchunksPerLoop)). Simple sends a chunk as
 * chunkSteps/sliceSteps slices (2 for ring AllReduce/AllGather/
 * ReduceScatter, else 1), one network message each; LL and LL128 send one
 * message per step carrying their flags too (x2, x16/15 on the wire).
 *
 * Every NIC carries the same traffic on a non-blocking fabric, so one NIC
 * pair between two hosts stands for any node count. */
#include "config.h"

#include <string.h>

#include "real/verbs_int.h"
#include "util/cs_error.h"

#define ALIGN 16   /* NCCL aligns chunk element counts to 16 bytes (enqueue.cc) */

static guint64 div_up(guint64 a, guint64 b)
{
    return (a + b - 1) / b;
}

/* Ring's chunk for 'proto' when NCCL's model picked another algorithm
 * (same rule as cs_decide_tune.c chunk_size for Ring). */
static guint64 ring_chunk(const cs_nccl_settings_t *st, cs_coll_t coll, cs_proto_t p)
{
    /* NCCL_BUFFSIZE 4194304, NCCL_LL_BUFFSIZE 524288, NCCL_LL128_BUFFSIZE
     * 4915200 (reference nccl-model.md §4); NCCL_STEPS = 8. */
    long buff[CS_PROTO_COUNT] = { st->ll_buffsize > 0 ? st->ll_buffsize : 524288,
                                  st->ll128_buffsize > 0 ? st->ll128_buffsize : 4915200,
                                  st->buffsize > 0 ? st->buffsize : 4194304 };
    guint64 step = (guint64)buff[p] / VB_NCCL_STEPS;
    gboolean steps42 = p == CS_PROTO_SIMPLE && (coll == CS_COLL_ALLREDUCE || coll == CS_COLL_ALLGATHER ||
                                                coll == CS_COLL_REDUCESCATTER);
    guint64 chunk = step * (steps42 ? 4 : 1);
    if (p == CS_PROTO_LL)
        chunk /= 2;
    if (p == CS_PROTO_LL128)
        chunk = chunk / 16 * 15;
    return chunk;
}

static void add_run(GArray *msg, GArray *cnt, guint64 bytes, guint64 n)
{
    if (bytes == 0 || n == 0)
        return;
    if (msg->len > 0 && g_array_index(msg, guint64, msg->len - 1) == bytes) {
        g_array_index(cnt, guint64, cnt->len - 1) += n;
        return;
    }
    g_array_append_val(msg, bytes);
    g_array_append_val(cnt, n);
}

gboolean vb_replay_plan(const cs_comm_t *comm, const cs_scenario_t *s, guint64 size, vb_replay_t *r_p,
                        GError **err)
{
    const cs_comm_info_t *ci = cs_comm_info(comm);
    if (ci->nnodes < 2) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: real --verbs: the scenario has %d node(s); expected "
                    "--nodes 2 or more, so that there is inter-node traffic to replay", ci->nnodes);
        return FALSE;
    }
    int n = ci->nranks;
    guint64 count = cs_coll_count(s->coll, size, s->dtype, n);
    guint64 nbytes = cs_coll_nccl_bytes(s->coll, count, s->dtype, n);
    cs_decision_t d;
    if (!cs_comm_decide_op(comm, s->coll, s->dtype, s->redop, nbytes, &d, err))
        return FALSE;
    guint64 chunk = d.algo == CS_ALGO_RING ? d.chunk_bytes : ring_chunk(cs_comm_settings(comm), s->coll, d.proto);
    int nch = MAX(d.nchannels, 1);
    guint64 steps_per_loop, chunks_per_loop;
    switch (s->coll) {
    case CS_COLL_ALLREDUCE:
        steps_per_loop = 2 * (guint64)(n - 1);
        chunks_per_loop = (guint64)n;
        break;
    case CS_COLL_ALLGATHER:
    case CS_COLL_REDUCESCATTER:
        steps_per_loop = (guint64)(n - 1);
        chunks_per_loop = (guint64)n;
        break;
    default:
        steps_per_loop = 1;
        chunks_per_loop = 1;
        break;
    }
    gboolean two_slices = d.proto == CS_PROTO_SIMPLE && chunks_per_loop > 1;
    GArray *msg = g_array_new(FALSE, FALSE, sizeof(guint64));
    GArray *cnt = g_array_new(FALSE, FALSE, sizeof(guint64));
    guint64 loop = (guint64)nch * chunks_per_loop * chunk;
    for (guint64 off = 0; off < nbytes && chunk > 0; off += loop) {
        guint64 rest = nbytes - off;
        guint64 real = MIN(chunk, div_up(div_up(rest, (guint64)nch * chunks_per_loop), ALIGN) * ALIGN);
        /* identical loops come in a run: handle them at once */
        guint64 same = rest >= loop ? rest / loop : 1;
        if (rest >= loop)
            real = chunk;
        guint64 parts[2] = { real, 0 };
        if (two_slices) {
            parts[0] = MIN(real, div_up(div_up(real, 2), ALIGN) * ALIGN);
            parts[1] = real - parts[0];
        }
        /* (unequal slices of a last loop are sent as all first slices, then
         * all second ones: the same bytes and messages, in runs) */
        for (int k = 0; k < 2; k++) {
            guint64 wire = parts[k];
            if (d.proto == CS_PROTO_LL)
                wire *= 2;                      /* 8 data bytes per 16-byte line (device.h) */
            else if (d.proto == CS_PROTO_LL128)
                wire = div_up(wire * 16, 15);   /* 120 data bytes per 128-byte line */
            add_run(msg, cnt, wire, same * steps_per_loop);
        }
        if (rest >= loop)
            off += (same - 1) * loop;
    }
    vb_replay_t r;
    memset(&r, 0, sizeof r);
    r.size = size;
    r.count = count;
    r.nccl_bytes = nbytes;
    r.nccl_algo = d.algo;
    r.proto = d.proto;
    r.nchannels = nch;
    r.nqp = MIN((int)div_up((guint64)nch, (guint64)MAX(ci->nics_used, 1)), VB_MAX_QPS);
    r.chunk = chunk;
    r.nruns = (int)msg->len;
    r.msg = (guint64 *)(void *)g_array_free(msg, FALSE);
    r.count_of = (guint64 *)(void *)g_array_free(cnt, FALSE);
    for (int i = 0; i < r.nruns; i++) {
        r.wire_bytes += r.msg[i] * r.count_of[i];
        r.nmsgs += r.count_of[i];
    }
    *r_p = r;
    return TRUE;
}
