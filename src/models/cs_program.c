/* Rank programs from NCCL's decisions: ring and chain shapes, expanded
 * lazily (see cs_program.h). Loop structure: reference nccl-model.md
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
    g_free(p);
}

/* Channel 0's ring (node blocks of ppn ranks) with each node's block
 * rotated so that local GPU 'exit' is the block's last. */
static void rotated_ring(const cs_comm_info_t *info, int exit, int *out)
{
    int n = info->nranks, ppn = info->ppn;
    if (info->nnodes <= 1 || ppn <= 1 || n != info->nnodes * ppn || exit < 0) {
        memcpy(out, info->ring_order, sizeof(int) * n);
        return;
    }
    for (int b = 0; b < n; b += ppn) {
        int at = -1;
        for (int i = 0; i < ppn; i++)
            if (info->ring_order[b + i] % ppn == exit)
                at = i;
        int shift = at < 0 ? ppn - 1 : at;    /* block position that becomes last */
        for (int i = 0; i < ppn; i++)
            out[b + i] = info->ring_order[b + (shift + 1 + i) % ppn];
    }
}

cs_program_t *cs_program_new(const cs_comm_info_t *info, cs_coll_t coll, const cs_decision_t *d,
                             guint64 nbytes, int root, const int *exit_local, GError **err)
{
    int n = info->nranks;
    gboolean chain = coll == CS_COLL_BROADCAST || coll == CS_COLL_REDUCE;
    gboolean ring_shape = d->algo == CS_ALGO_RING || (d->algo == CS_ALGO_TREE && coll != CS_COLL_ALLREDUCE);
    if (!ring_shape) {
        g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED,
                    "%s %s has no rank program (only rings and chains are modelled); "
                    "use --model analytic or restrict NCCL_ALGO to Ring",
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

    p->ch_bytes = g_new(guint64, p->nch);
    for (int c = 0; c < p->nch; c++)
        p->ch_bytes[c] = nbytes / p->nch + ((guint64)c < nbytes % p->nch ? 1 : 0);

    p->order = g_new(int, (gsize)p->nch * n);
    g_autofree int *tmp = g_new(int, n);
    for (int c = 0; c < p->nch; c++) {
        rotated_ring(info, exit_local != NULL ? exit_local[c] : -1, tmp);
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
