/* `collsim real` without a GPU: reading NCCL's INFO TUNING lines (format of
 * NCCL v2.28.9 src/enqueue.cc:822, names from src/collectives.cc) and
 * turning every rank's measurements into the result rank 0 prints. */
#include "config.h"
#include "real/real_int.h"

#include <string.h>

static void test_tuning_line(void)
{
    cs_tuning_line_t t;
    g_assert_true(cs_tuning_parse_line("dgx1:4242:4250 [0] NCCL INFO AllReduce: 1048576 Bytes -> Algo RING proto "
                                       "SIMPLE channel{Lo..Hi}={0..31}", &t));
    g_assert_cmpstr(t.func, ==, "AllReduce");
    g_assert_cmpuint(t.bytes, ==, 1048576);
    g_assert_cmpstr(t.algo, ==, "Ring");
    g_assert_cmpstr(t.proto, ==, "Simple");
    g_assert_cmpint(t.nchannels, ==, 32);
    g_assert_true(cs_tuning_parse_line("h:1:2 [3] NCCL INFO AllGather: 8 Bytes -> Algo NVLS_TREE proto LL128 "
                                       "channel{Lo..Hi}={4..5}", &t));
    g_assert_cmpstr(t.algo, ==, "NVLSTree");
    g_assert_cmpstr(t.proto, ==, "LL128");
    g_assert_cmpint(t.nchannels, ==, 2);
    g_assert_true(cs_tuning_parse_line("h:1:2 [0] NCCL INFO ReduceScatter: 64 Bytes -> Algo COLLNET_DIRECT proto "
                                       "LL channel{Lo..Hi}={0..0}", &t));
    g_assert_cmpstr(t.algo, ==, "CollNetDirect");
    g_assert_cmpint(t.nchannels, ==, 1);
    /* other lines, and damaged ones */
    g_assert_false(cs_tuning_parse_line("h:1:2 [0] NCCL INFO Channel 00/32 : 0 1 2 3", &t));
    g_assert_false(cs_tuning_parse_line("h:1:2 [0] NCCL INFO AllReduce: tuner chunk size 4 exceeds buffer max 2, "
                                        "clamping", &t));
    g_assert_false(cs_tuning_parse_line("h:1:2 [0] NCCL INFO AllReduce: 8 Bytes -> Algo WARP proto LL "
                                        "channel{Lo..Hi}={0..1}", &t));
    g_assert_false(cs_tuning_parse_line("h:1:2 [0] NCCL INFO AllReduce: 8 Bytes -> Algo RING proto LL "
                                        "channel{Lo..Hi}={3..1}", &t));
    g_assert_false(cs_tuning_parse_line("AllReduce: 8 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}", &t));
}

static void test_tuning_find(void)
{
    const char *log =
        "h:1:1 [0] NCCL INFO NCCL_DEBUG_SUBSYS set by environment to TUNING\n"
        "h:1:1 [0] NCCL INFO AllReduce: 1024 Bytes -> Algo TREE proto LL channel{Lo..Hi}={0..1}\n"
        "h:1:1 [0] NCCL INFO AllGather: 1024 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..3}\n"
        "h:1:1 [0] NCCL INFO AllReduce: 4096 Bytes -> Algo RING proto LL128 channel{Lo..Hi}={0..7}\n"
        "h:1:1 [0] NCCL INFO AllReduce: 1024 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}";   /* no newline */
    cs_tuning_line_t t;
    g_assert_true(cs_tuning_find(log, CS_COLL_ALLREDUCE, 1024, &t));
    g_assert_cmpstr(t.algo, ==, "Ring");          /* the last one */
    g_assert_true(cs_tuning_find(log, CS_COLL_ALLGATHER, 1024, &t));
    g_assert_cmpint(t.nchannels, ==, 4);
    g_assert_true(cs_tuning_find(log, CS_COLL_ALLREDUCE, 4096, &t));
    g_assert_cmpstr(t.proto, ==, "LL128");
    g_assert_false(cs_tuning_find(log, CS_COLL_BROADCAST, 1024, &t));
    g_assert_false(cs_tuning_find(log, CS_COLL_ALLREDUCE, 2048, &t));
    g_assert_false(cs_tuning_find("", CS_COLL_ALLREDUCE, 1024, &t));
}

/* Two sizes, three ranks on two hosts; all-gather of float. */
static void test_build_result(void)
{
    cs_scenario_t s;
    cs_scenario_init(&s);
    s.coll = CS_COLL_ALLGATHER;
    guint64 sizes[2] = { 3 * 1024, 3 * 1048576 };
    int nranks = 3, nsizes = 2;
    size_t per = sizeof(cs_real_dev_t) + 2 * sizeof(cs_real_cell_t);
    guint8 *all = g_malloc0(per * nranks);
    const char *hosts[3] = { "a", "a", "b" };
    for (int q = 0; q < nranks; q++) {
        cs_real_dev_t d;
        memset(&d, 0, sizeof d);
        g_strlcpy(d.host, hosts[q], sizeof d.host);
        memcpy(all + per * q, &d, sizeof d);
        for (int i = 0; i < nsizes; i++) {
            cs_real_cell_t c;
            memset(&c, 0, sizeof c);
            c.time_us[0] = 10.0 * (q + 1) * (i + 1);     /* 10, 20, 30 -> mean 20 (size 0) */
            c.time_us[1] = 5.0 * (i + 1);
            c.wrong[0] = q;                               /* 0 + 1 + 2 = 3 */
            c.wrong[1] = 0;
            if (q == 0) {
                g_strlcpy(c.algo, "Ring", sizeof c.algo);
                g_strlcpy(c.proto, i == 0 ? "LL" : "Simple", sizeof c.proto);
                c.nchannels = 2 + i;
            } else {
                g_strlcpy(c.algo, "Tree", sizeof c.algo);   /* only rank 0's counts */
            }
            memcpy(all + per * q + sizeof d + sizeof c * i, &c, sizeof c);
        }
    }
    int nnodes, ppn;
    cs_result_t *r = cs_real_build_result(&s, nranks, nsizes, sizes, all, per, &nnodes, &ppn);
    g_assert_cmpint(nnodes, ==, 2);
    g_assert_cmpint(ppn, ==, 2);
    g_assert_cmpstr(r->producer, ==, "measured:collsim-real");
    g_assert_cmpuint(r->rows->len, ==, 2);
    const cs_result_row_t *row = &g_array_index(r->rows, cs_result_row_t, 0);
    /* all-gather: count per rank = 3072 B / 4 B / 3 ranks = 256; size = 256*4*3 */
    g_assert_cmpuint(row->count, ==, 256);
    g_assert_cmpuint(row->size, ==, 3072);
    g_assert_cmpint(row->root, ==, -1);
    g_assert_cmpfloat_with_epsilon(row->time_us[0], 20.0, 1e-12);
    g_assert_cmpfloat_with_epsilon(row->time_us[1], 5.0, 1e-12);
    g_assert_cmpint(row->wrong[0], ==, 3);
    g_assert_cmpint(row->wrong[1], ==, 0);
    g_assert_cmpstr(row->algo, ==, "Ring");
    g_assert_cmpstr(row->proto, ==, "LL");
    g_assert_cmpint(row->nchannels, ==, 2);
    /* nccl-tests: algbw = count*4*n / t = 3072 B / 20 us = 0.1536 GB/s; busbw x (n-1)/n */
    g_assert_cmpfloat_with_epsilon(row->algbw[0], 0.1536, 1e-9);
    g_assert_cmpfloat_with_epsilon(row->busbw[0], 0.1536 * 2 / 3, 1e-9);
    const cs_result_row_t *r1 = &g_array_index(r->rows, cs_result_row_t, 1);
    g_assert_cmpfloat_with_epsilon(r1->time_us[0], 40.0, 1e-12);
    g_assert_cmpstr(r1->proto, ==, "Simple");
    /* a rank with no check: the sum is unchecked */
    cs_real_cell_t c;
    memcpy(&c, all + per * 2 + sizeof(cs_real_dev_t), sizeof c);
    c.wrong[1] = -1;
    memcpy(all + per * 2 + sizeof(cs_real_dev_t), &c, sizeof c);
    cs_result_free(r);
    r = cs_real_build_result(&s, nranks, nsizes, sizes, all, per, &nnodes, &ppn);
    g_assert_cmpint(g_array_index(r->rows, cs_result_row_t, 0).wrong[1], ==, -1);
    cs_result_free(r);
    g_free(all);
    cs_scenario_clear(&s);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/real-result/tuning-line", test_tuning_line);
    g_test_add_func("/real-result/tuning-find", test_tuning_find);
    g_test_add_func("/real-result/build", test_build_result);
    return g_test_run();
}
