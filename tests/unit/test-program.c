/* Rank programs: loop and step structure of the ring and the chain,
 * checked against hand counts from NCCL's loops (nccl-model.md section 2). */
#include "config.h"

#include <math.h>
#include <string.h>

#include "models/cs_program.h"
#include "util/cs_error.h"

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

/* Two nodes of two: each node's part of the ring is rotated so that the
 * requested GPU leaves the node; NVLS is refused. */
static void test_rotation_and_refusal(void)
{
    static int order[] = { 0, 1, 2, 3 };
    cs_comm_info_t in;
    info4(&in);
    in.nnodes = 2;
    in.ppn = 2;
    in.ring_order = order;
    cs_decision_t d = { .algo = CS_ALGO_RING, .proto = CS_PROTO_SIMPLE, .nchannels = 2, .chunk_bytes = 1024 };
    int exit_local[2] = { 1, 0 };
    g_autoptr(cs_program_t) p = cs_program_new(&in, CS_COLL_ALLGATHER, &d, 8192, 0, exit_local, NULL);
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

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/program/ring-allreduce", test_ring_allreduce);
    g_test_add_func("/program/chain", test_chain);
    g_test_add_func("/program/rotation-refusal", test_rotation_and_refusal);
    return g_test_run();
}
