/* Units parsing and the nccl-tests conventions of cs_coll. */
#include "config.h"
#include "util/cs_units.h"
#include "models/cs_coll.h"
#include "models/cs_result.h"

static void test_sizes(void)
{
    guint64 v = 0;
    g_assert_true(cs_parse_size("8", &v));
    g_assert_cmpuint(v, ==, 8);
    g_assert_true(cs_parse_size("1K", &v));
    g_assert_cmpuint(v, ==, 1024);
    g_assert_true(cs_parse_size("32M", &v));
    g_assert_cmpuint(v, ==, 32u << 20);
    g_assert_true(cs_parse_size("16g", &v));
    g_assert_cmpuint(v, ==, G_GUINT64_CONSTANT(16) << 30);
    g_assert_true(cs_parse_size("4KiB", &v));
    g_assert_cmpuint(v, ==, 4096);
    g_assert_true(cs_parse_size("1MB", &v));
    g_assert_cmpuint(v, ==, 1 << 20);
    g_assert_false(cs_parse_size("", &v));
    g_assert_false(cs_parse_size("abc", &v));
    g_assert_false(cs_parse_size("-1", &v));
    g_assert_false(cs_parse_size("1X", &v));
    g_assert_false(cs_parse_size("1.5", &v));
    g_assert_false(cs_parse_size("99999999999999999999999", &v));
}

static void test_bandwidth_time(void)
{
    double v = 0;
    g_assert_true(cs_parse_bandwidth("400Gbps", &v));
    g_assert_cmpfloat_with_epsilon(v, 50e9, 1);
    g_assert_true(cs_parse_bandwidth("25GB/s", &v));
    g_assert_cmpfloat_with_epsilon(v, 25e9, 1);
    g_assert_true(cs_parse_bandwidth("100 Mb/s", &v));
    g_assert_cmpfloat_with_epsilon(v, 12.5e6, 1e-3);
    g_assert_false(cs_parse_bandwidth("0", &v));
    g_assert_false(cs_parse_bandwidth("fast", &v));
    g_assert_true(cs_parse_time("1.5us", &v));
    g_assert_cmpfloat_with_epsilon(v, 1.5e-6, 1e-15);
    g_assert_true(cs_parse_time("500ns", &v));
    g_assert_cmpfloat_with_epsilon(v, 5e-7, 1e-15);
    g_assert_false(cs_parse_time("5 parsecs", &v));
}

static void test_coll_names(void)
{
    cs_coll_t c;
    g_assert_true(cs_coll_parse("all_reduce_perf", &c));
    g_assert_cmpint(c, ==, CS_COLL_ALLREDUCE);
    g_assert_true(cs_coll_parse("AllGather", &c));
    g_assert_cmpint(c, ==, CS_COLL_ALLGATHER);
    g_assert_true(cs_coll_parse("reduce_scatter", &c));
    g_assert_cmpint(c, ==, CS_COLL_REDUCESCATTER);
    g_assert_true(cs_coll_parse("alltoall_perf", &c));
    g_assert_cmpint(c, ==, CS_COLL_ALLTOALL);
    g_assert_true(cs_coll_parse("SendRecv", &c));
    g_assert_cmpint(c, ==, CS_COLL_SENDRECV);
    g_assert_false(cs_coll_parse("alltoallv", &c));
    cs_algo_t a;
    g_assert_true(cs_algo_parse("nvlstree", &a));
    g_assert_cmpint(a, ==, CS_ALGO_NVLS_TREE);
    cs_dtype_t t;
    g_assert_true(cs_dtype_parse("bf16", &t));
    g_assert_cmpint(cs_dtype_size(t), ==, 2);
}

/* nccl-tests: all_gather with -b 1M on 8 ranks of float: count per rank =
 * (262144/8) & ~3 = 32768, printed size = 32768*4*8 = 1 MiB. */
static void test_counts_and_busbw(void)
{
    guint64 count = cs_coll_count(CS_COLL_ALLGATHER, 1 << 20, CS_DTYPE_FLOAT, 8);
    g_assert_cmpuint(count, ==, 32768);
    g_assert_cmpuint(cs_coll_print_size(CS_COLL_ALLGATHER, count, CS_DTYPE_FLOAT, 8), ==, 1 << 20);
    /* 100 bytes on 3 ranks, float: 25 elements, 25/3 = 8, aligned to 4 -> 8 */
    g_assert_cmpuint(cs_coll_count(CS_COLL_REDUCESCATTER, 100, CS_DTYPE_FLOAT, 3), ==, 8);
    g_assert_cmpfloat_with_epsilon(cs_busbw_factor(CS_COLL_ALLREDUCE, 8), 1.75, 1e-12);
    g_assert_cmpfloat_with_epsilon(cs_busbw_factor(CS_COLL_ALLGATHER, 4), 0.75, 1e-12);
    g_assert_cmpfloat_with_epsilon(cs_busbw_factor(CS_COLL_BROADCAST, 4), 1.0, 1e-12);

    /* 1 GiB all-reduce on 16 ranks in 10 ms: algbw 107.37 GB/s, busbw x 30/16. */
    g_autoptr(cs_result_t) r = cs_result_new("test", "x", CS_COLL_ALLREDUCE, 16, 2);
    cs_result_row_t row = { .size = 1u << 30, .count = (1u << 30) / 4, .dtype = CS_DTYPE_FLOAT };
    row.time_us[0] = 10000;
    row.time_us[1] = 20000;
    cs_result_row_fill_bw(r, &row);
    g_assert_cmpfloat_with_epsilon(row.algbw[0], 107.3741824, 1e-6);
    g_assert_cmpfloat_with_epsilon(row.busbw[0], 107.3741824 * 30 / 16, 1e-6);
    g_array_append_val(r->rows, row);
    cs_result_finish(r);
    g_assert_cmpfloat_with_epsilon(r->avg_busbw, (row.busbw[0] + row.busbw[1]) / 2, 1e-9);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/units/sizes", test_sizes);
    g_test_add_func("/units/bandwidth-time", test_bandwidth_time);
    g_test_add_func("/coll/names", test_coll_names);
    g_test_add_func("/coll/counts-busbw", test_counts_and_busbw);
    return g_test_run();
}
