/* Writers: the table must match nccl-tests byte for byte where nccl-tests
 * defines the layout. The expected lines below are copied from real
 * nccl-tests output (tests' comments name the file under
 * shared/data/real), not produced by our own format strings; the extra
 * columns and placeholders are checked against hand-counted strings. */
#include "config.h"
#include "io/cs_writers.h"
#include "io/cs_output.h"
#include "util/cs_error.h"

#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

static char *table_text(const cs_result_t *r, const cs_table_opts_t *o)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    g_assert_nonnull(f);
    cs_write_table(f, r, o);
    fclose(f);
    return buf;
}

static gboolean has_line(const char *text, const char *line)
{
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (int i = 0; lines[i] != NULL; i++)
        if (strcmp(lines[i], line) == 0)
            return TRUE;
    return FALSE;
}

static void assert_has_line(const char *text, const char *line)
{
    if (!has_line(text, line)) {
        g_printerr("missing line:\n[%s]\nin:\n%s", line, text);
        g_assert_not_reached();
    }
}

static cs_result_row_t row_make(guint64 size, guint64 count, cs_dtype_t t, cs_redop_t op, int root,
                                double t0, double a0, double b0, double t1, double a1, double b1, long wrong)
{
    cs_result_row_t row;
    memset(&row, 0, sizeof row);
    row.size = size;
    row.count = count;
    row.dtype = t;
    row.redop = op;
    row.root = root;
    row.time_us[0] = t0;
    row.algbw[0] = a0;
    row.busbw[0] = b0;
    row.time_us[1] = t1;
    row.algbw[1] = a1;
    row.busbw[1] = b1;
    row.wrong[0] = row.wrong[1] = wrong;
    row.nccl_est_us = -1;
    return row;
}

static cs_table_opts_t opts_default(void)
{
    cs_table_opts_t o;
    memset(&o, 0, sizeof o);
    o.nthreads = 1;
    o.ngpus = 8;
    o.iters = 20;
    o.warmup = 1;
    o.agg_iters = 1;
    o.check = 1;
    o.minbytes = 8;
    o.maxbytes = 134217728;
    o.stepbytes = 1048576;
    o.stepfactor = 2;
    return o;
}

/* Rows, column header and footer of a100x8-nvswitch-allreduce-1node-upto128M-
 * nccl2.19.3.txt (nccl-tests 2.19.4), verbatim. */
static void test_table_matches_nccl_tests(void)
{
    g_autoptr(cs_result_t) r = cs_result_new("measured:nccl-tests", NULL, CS_COLL_ALLREDUCE, 8, 1);
    cs_result_row_t rows[] = {
        row_make(8, 2, CS_DTYPE_FLOAT, CS_REDOP_SUM, -1, 34.84, 0.00, 0.00, 36.18, 0.00, 0.00, 0),
        row_make(131072, 32768, CS_DTYPE_FLOAT, CS_REDOP_SUM, -1, 40.33, 3.25, 5.69, 40.84, 3.21, 5.62, 0),
        row_make(134217728, 33554432, CS_DTYPE_FLOAT, CS_REDOP_SUM, -1, 1295.41, 103.61, 181.32, 1284.21,
                 104.51, 182.90, 0),
    };
    for (guint i = 0; i < G_N_ELEMENTS(rows); i++)
        g_array_append_val(r->rows, rows[i]);
    r->avg_busbw = 34.9024;
    cs_table_opts_t o = opts_default();
    g_autofree char *text = table_text(r, &o);

    assert_has_line(text, "# Collective test starting: all_reduce_perf");
    assert_has_line(text, "# nThread 1 nGpus 8 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 1 "
                          "iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0");
    assert_has_line(text, "#                                                              out-of-place      "
                          "                 in-place          ");
    assert_has_line(text, "#       size         count      type   redop    root     time   algbw   busbw  #wrong"
                          "     time   algbw   busbw  #wrong ");
    assert_has_line(text, "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)        "
                          "     (us)  (GB/s)  (GB/s)         ");
    assert_has_line(text, "           8             2     float     sum      -1    34.84    0.00    0.00       0"
                          "    36.18    0.00    0.00       0");
    assert_has_line(text, "      131072         32768     float     sum      -1    40.33    3.25    5.69       0"
                          "    40.84    3.21    5.62       0");
    assert_has_line(text, "   134217728      33554432     float     sum      -1  1295.41  103.61  181.32       0"
                          "  1284.21  104.51  182.90       0");
    assert_has_line(text, "# Out of bounds values : 0 OK");
    assert_has_line(text, "# Avg bus bandwidth    : 34.9024 ");
    assert_has_line(text, "# Collective test concluded: all_reduce_perf");
    g_assert_true(g_str_has_prefix(text, "# collsim " PACKAGE_VERSION " measurement (nccl-tests)\n"));
    g_assert_true(g_str_has_suffix(text, "# Collective test concluded: all_reduce_perf\n#\n"));
}

/* Large times switch to fewer decimals (nccl-tests getFloatStr): rows of
 * gb10x1-2nodes-dgxspark-roce200g-b2b-allgather-...-nccl2.28.9.txt and the
 * "N/A" in-place #wrong of a100x8-2nodes16gpu-roce-alltoall-...txt. */
static void test_table_wide_values(void)
{
    g_autoptr(cs_result_t) r = cs_result_new("measured:nccl-tests", NULL, CS_COLL_ALLGATHER, 2, 2);
    cs_result_row_t a = row_make(536870912, 67108864, CS_DTYPE_FLOAT, CS_REDOP_SUM, -1, 14594.4, 36.79, 18.39,
                                 13778.0, 38.97, 19.48, 0);
    cs_result_row_t b = row_make(8589934592ULL, 1073741824, CS_DTYPE_FLOAT, CS_REDOP_SUM, -1, 183338, 46.85, 23.43,
                                 179211, 47.93, 23.97, 0);
    cs_result_row_t c = row_make(4294967296ULL, 67108864, CS_DTYPE_FLOAT, CS_REDOP_SUM, -1, 106262, 40.42, 37.89,
                                 106112, 40.48, 37.95, 0);
    c.wrong[1] = -1;
    g_array_append_val(r->rows, a);
    g_array_append_val(r->rows, b);
    g_array_append_val(r->rows, c);
    cs_table_opts_t o = opts_default();
    g_autofree char *text = table_text(r, &o);
    assert_has_line(text, "   536870912      67108864     float    none      -1  14594.4   36.79   18.39       0"
                          "  13778.0   38.97   19.48       0");
    assert_has_line(text, "  8589934592    1073741824     float    none      -1   183338   46.85   23.43       0"
                          "   179211   47.93   23.97       0");
    /* (that file's older nccl-tests prints #wrong one column narrower;
     * the "    N/A" is the same) */
    assert_has_line(text, "  4294967296      67108864     float    none      -1   106262   40.42   37.89       0"
                          "   106112   40.48   37.95    N/A");
}

/* A prediction: nothing checked ("N/A", as nccl-tests prints for -c 0... and
 * for unchecked placements), the model named on the first line, NCCL's
 * choices in the extra columns. Expected strings counted by hand:
 * %12 size, %12 count, %8 type, %6 redop, %6 root; per placement %7 time,
 * %6 algbw, %6 busbw, then "    N/A"; extras %8 algo, %6 proto, %4 nch. */
static void test_table_prediction(void)
{
    g_autoptr(cs_result_t) r = cs_result_new("model:analytic", "unit", CS_COLL_BROADCAST, 8, 1);
    cs_result_row_t a = row_make(1048576, 262144, CS_DTYPE_FLOAT, CS_REDOP_SUM, 3, 25.5, 41.25, 72.1875, 25.0,
                                 42.0, 73.5, -1);
    g_strlcpy(a.algo, "Ring", sizeof a.algo);
    g_strlcpy(a.proto, "LL128", sizeof a.proto);
    a.nchannels = 16;
    g_strlcpy(a.transport, "P2P/NVL", sizeof a.transport);
    cs_result_row_t b = row_make(2097152, 524288, CS_DTYPE_FLOAT, CS_REDOP_SUM, 3, 1e9, 0.002, 0.002, -1, -1, -1, -1);
    g_array_append_val(r->rows, a);
    g_array_append_val(r->rows, b);
    cs_result_add_note(r, "warning: NCCL_TIMEOUT (environment): not read by NCCL");
    r->avg_busbw = 0.5;
    cs_table_opts_t o = opts_default();
    o.extra_columns = TRUE;
    o.stepfactor = 1;
    o.check = 0;
    o.topo_desc = "dgx-h100: 8x H100 SXM, NVSwitch";
    o.command = "broadcast_perf -b 1M -e 2M -i 1M -g 8";
    g_autofree char *text = table_text(r, &o);
    g_assert_true(g_str_has_prefix(text, "# collsim " PACKAGE_VERSION
                                         " prediction (model: analytic) \xe2\x80\x94 not a measurement\n"
                                         "# Collective test starting: broadcast_perf\n"));
    assert_has_line(text, "# nThread 1 nGpus 8 minBytes 8 maxBytes 134217728 step: 1048576(bytes) warmup iters: 1 "
                          "iters: 20 agg iters: 1 validation: 0 graph: 0 unalign: 0");
    assert_has_line(text, "# Source: unit");
    assert_has_line(text, "# Topology: dgx-h100: 8x H100 SXM, NVSwitch");
    assert_has_line(text, "# nccl-tests command: broadcast_perf -b 1M -e 2M -i 1M -g 8");
    assert_has_line(text, "# warning: NCCL_TIMEOUT (environment): not read by NCCL");
    assert_has_line(text, "#       size         count      type   redop    root     time   algbw   busbw  #wrong"
                          "     time   algbw   busbw  #wrong           algo   proto   nch  transport");
    /* broadcast has no reduction: "none"; its root is printed */
    assert_has_line(text, "     1048576        262144     float    none       3    25.50   41.25   72.19    N/A"
                          "    25.00   42.00   73.50    N/A           Ring   LL128    16  P2P/NVL");
    /* 1e9 us does not fit 7 columns: exponent form; a missing in-place is
     * nccl-tests's 32-blank null body; unknown choices are "-" */
    assert_has_line(text, "     2097152        524288     float    none       3  1.0e+09    0.00    0.00    N/A"
                          "                                              -       -     -  -");
    assert_has_line(text, "# Out of bounds values : N/A");
    assert_has_line(text, "# Avg bus bandwidth    : 0.5 ");
    g_assert_null(strstr(text, "Using devices"));
}

static const cs_gpu_model_t fake_gpu = { .name = "h100-sxm", .marketing = "NVIDIA H100 80GB HBM3", .sm = 90 };

/* A hand-built topology (only the fields the writer reads). */
static void fake_topo(cs_topo_t *t, cs_device_t *devs, int *rank_dev, int ngpus, int per_node)
{
    memset(t, 0, sizeof *t);
    for (int i = 0; i < ngpus; i++) {
        memset(&devs[i], 0, sizeof devs[i]);
        devs[i].kind = CS_DEV_GPU;
        devs[i].gpu = &fake_gpu;
        devs[i].node = i / per_node;
        devs[i].local = i % per_node;
        devs[i].rank = i;
        rank_dev[i] = i;
    }
    t->devs = devs;
    t->ndevs = ngpus;
    t->ngpus = ngpus;
    t->rank_dev = rank_dev;
    t->nnodes = ngpus / per_node;
}

static void test_table_devices(void)
{
    static cs_device_t devs[128];
    static int rank_dev[128];
    cs_topo_t t;
    g_autoptr(cs_result_t) r = cs_result_new("model:analytic", NULL, CS_COLL_ALLREDUCE, 16, 2);
    cs_table_opts_t o = opts_default();

    fake_topo(&t, devs, rank_dev, 16, 8);
    o.topo = &t;
    g_autofree char *text = table_text(r, &o);
    assert_has_line(text, "# Using devices");
    /* "#  Rank  0 Group  0 Pid 584419 on        dkh device  0 [0000:14:00] NVIDIA A100-SXM4-80GB" */
    assert_has_line(text, "#  Rank  0 Group  0 Pid      - on      node0 device  0 [----:--:--] NVIDIA H100 80GB HBM3");
    assert_has_line(text, "#  Rank 15 Group  0 Pid      - on      node1 device  7 [----:--:--] NVIDIA H100 80GB HBM3");

    fake_topo(&t, devs, rank_dev, 128, 8);
    g_autofree char *big = table_text(r, &o);
    assert_has_line(big, "#  Rank  7 Group  0 Pid      - on      node0 device  7 [----:--:--] NVIDIA H100 80GB HBM3");
    assert_has_line(big, "# ... 120 more ranks");
    g_assert_null(strstr(big, "Rank  8 "));
    /* no rows: still the whole frame, average 0 */
    assert_has_line(big, "# Avg bus bandwidth    : 0 ");
}

static cs_result_t *json_result(void)
{
    cs_result_t *r = cs_result_new("model:analytic", "unit \"q\"", CS_COLL_ALLREDUCE, 8, 1);
    cs_result_row_t a = row_make(1048576, 262144, CS_DTYPE_FLOAT, CS_REDOP_SUM, -1, 25.5, 41.25, 72.1875, 25.0,
                                 42.0, 73.5, -1);
    g_strlcpy(a.algo, "Ring", sizeof a.algo);
    g_strlcpy(a.proto, "LL128", sizeof a.proto);
    a.nchannels = 16;
    g_strlcpy(a.transport, "P2P/NVL, NET/IB", sizeof a.transport);
    a.nccl_est_us = 24.75;
    cs_result_row_t b = row_make(8, 2, CS_DTYPE_BFLOAT16, CS_REDOP_MAX, -1, 0.1, 0.3, 0.525, -1, -1, -1, 0);
    g_array_append_val(r->rows, a);
    g_array_append_val(r->rows, b);
    cs_result_add_note(r, "line\tone");
    r->avg_busbw = 72.84375;
    return r;
}

static const char expected_json[] =
    "{\n"
    "  \"producer\": \"model:analytic\",\n"
    "  \"source\": \"unit \\\"q\\\"\",\n"
    "  \"collective\": \"allreduce\",\n"
    "  \"test\": \"all_reduce_perf\",\n"
    "  \"nranks\": 8,\n"
    "  \"nnodes\": 1,\n"
    "  \"avg_busbw\": 72.84375,\n"
    "  \"notes\": [\"line\\tone\"],\n"
    "  \"rows\": [\n"
    "    {\"size\": 1048576, \"count\": 262144, \"type\": \"float\", \"redop\": \"sum\", \"root\": -1, "
    "\"out_of_place\": {\"time_us\": 25.5, \"algbw\": 41.25, \"busbw\": 72.1875, \"wrong\": null}, "
    "\"in_place\": {\"time_us\": 25, \"algbw\": 42, \"busbw\": 73.5, \"wrong\": null}, "
    "\"algo\": \"Ring\", \"proto\": \"LL128\", \"nchannels\": 16, \"transport\": \"P2P/NVL, NET/IB\", "
    "\"nccl_est_us\": 24.75},\n"
    "    {\"size\": 8, \"count\": 2, \"type\": \"bfloat16\", \"redop\": \"max\", \"root\": -1, "
    "\"out_of_place\": {\"time_us\": 0.1, \"algbw\": 0.3, \"busbw\": 0.525, \"wrong\": 0}, "
    "\"in_place\": null, \"algo\": null, \"proto\": null, \"nchannels\": null, \"transport\": null, "
    "\"nccl_est_us\": null}\n"
    "  ]\n"
    "}\n";

static void test_json(void)
{
    g_autoptr(cs_result_t) r = json_result();
    g_autofree char *j = cs_write_json(r);
    if (strcmp(j, expected_json) != 0)
        g_printerr("got:\n%s\nexpected:\n%s", j, expected_json);
    g_assert_cmpstr(j, ==, expected_json);
}

static const char expected_csv[] =
    "producer,collective,nranks,nnodes,size,count,type,redop,root,"
    "oop_time_us,oop_algbw,oop_busbw,oop_wrong,ip_time_us,ip_algbw,ip_busbw,ip_wrong,"
    "algo,proto,nchannels,transport,nccl_est_us\n"
    "model:analytic,allreduce,8,1,1048576,262144,float,sum,-1,25.5,41.25,72.1875,,25,42,73.5,,"
    "Ring,LL128,16,\"P2P/NVL, NET/IB\",24.75\n"
    "model:analytic,allreduce,8,1,8,2,bfloat16,max,-1,0.1,0.3,0.525,0,,,,,,,,,\n";

static void test_csv(void)
{
    g_autoptr(cs_result_t) r = json_result();
    g_autofree char *c = cs_write_csv(r);
    g_assert_cmpstr(c, ==, expected_csv);
}

static void test_files(void)
{
    g_autoptr(GError) err = NULL;
    g_autofree char *dir = g_dir_make_tmp("cs-writers-XXXXXX", &err);
    g_assert_no_error(err);
    g_autoptr(cs_result_t) r = json_result();

    g_autofree char *jpath = g_build_filename(dir, "out.json", NULL);
    g_assert_true(cs_write_json_file(jpath, r, &err));
    g_assert_no_error(err);
    g_autofree char *back = NULL;
    g_assert_true(g_file_get_contents(jpath, &back, NULL, NULL));
    g_assert_cmpstr(back, ==, expected_json);

    g_autofree char *cpath = g_build_filename(dir, "out.csv", NULL);
    g_assert_true(cs_write_csv_file(cpath, r, &err));
    g_autofree char *cback = NULL;
    g_assert_true(g_file_get_contents(cpath, &cback, NULL, NULL));
    g_assert_cmpstr(cback, ==, expected_csv);

    /* a directory that does not exist: an error, one line, nothing left */
    g_autofree char *bad = g_build_filename(dir, "missing", "out.json", NULL);
    g_assert_false(cs_write_json_file(bad, r, &err));
    g_assert_error(err, CS_ERROR, CS_ERROR_IO);
    g_assert_true(g_str_has_prefix(err->message, bad));
    g_assert_nonnull(strstr(err->message, "No such file or directory"));
    g_assert_null(strchr(err->message, '\n'));
    g_clear_error(&err);

    /* only the two files: no temporary left behind */
    GDir *d = g_dir_open(dir, 0, NULL);
    int n = 0;
    while (g_dir_read_name(d) != NULL)
        n++;
    g_dir_close(d);
    g_assert_cmpint(n, ==, 2);
    g_unlink(jpath);
    g_unlink(cpath);
    g_rmdir(dir);
}

/* The table in parts, as collsim run prints a sweep: notes added after the
 * header was written come under the rows, before nccl-tests's footer;
 * header, every row and a footer with no late note is cs_write_table. */
static void test_table_parts(void)
{
    g_autoptr(cs_result_t) r = cs_result_new("model:flow", NULL, CS_COLL_ALLREDUCE, 8, 1);
    cs_result_row_t a = row_make(1048576, 262144, CS_DTYPE_FLOAT, CS_REDOP_SUM, -1, 25.5, 41.25, 72.1875, 25.0,
                                 42.0, 73.5, -1);
    cs_table_opts_t o = opts_default();
    cs_result_add_note(r, "transports: P2P/NVL");
    g_array_append_val(r->rows, a);
    r->avg_busbw = 72.84;
    g_autofree char *whole = table_text(r, &o);

    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    g_assert_nonnull(f);
    cs_write_table_header(f, r, &o);
    guint header_notes = r->notes->len;
    cs_write_table_row(f, r, 0, &o);
    cs_result_add_note(r, "approximate for 1 MiB: averaged");
    cs_write_table_footer(f, r, header_notes);
    fclose(f);
    g_autofree char *parts = buf;

    /* the same text with the late note inserted before the footer */
    const char *foot = strstr(whole, "# Out of bounds values");
    g_assert_nonnull(foot);
    g_autofree char *want = g_strdup_printf("%.*s# approximate for 1 MiB: averaged\n%s", (int)(foot - whole), whole,
                                            foot);
    g_assert_cmpstr(parts, ==, want);
    /* the early note is in the header, once */
    g_assert_true(strstr(parts, "# transports: P2P/NVL\n") < strstr(parts, "     1048576"));
    g_assert_null(strstr(strstr(parts, "# transports: P2P/NVL\n") + 1, "# transports"));
}

static void test_files_check(void)
{
    g_autoptr(GError) err = NULL;
    g_autofree char *dir = g_dir_make_tmp("cs-writers-XXXXXX", &err);
    g_assert_no_error(err);
    g_autofree char *good = g_build_filename(dir, "out.json", NULL);
    g_autofree char *bad = g_build_filename(dir, "missing", "out.json", NULL);
    const char *paths[3] = { good, bad, dir };
    g_assert_true(cs_output_check(1, paths, NULL, &err));
    g_assert_no_error(err);
    /* as cs_output_write would say it, one line */
    g_assert_false(cs_output_check(2, paths, NULL, &err));
    g_assert_error(err, CS_ERROR, CS_ERROR_IO);
    g_assert_true(g_str_has_prefix(err->message, bad));
    g_assert_nonnull(strstr(err->message, ": cannot write the file (No such file or directory)"));
    g_clear_error(&err);
    /* a directory in the way */
    g_assert_false(cs_output_check(1, &paths[2], NULL, &err));
    g_assert_nonnull(strstr(err->message, "(Is a directory)"));
    /* nothing left behind */
    GDir *d = g_dir_open(dir, 0, NULL);
    g_assert_null(g_dir_read_name(d));
    g_dir_close(d);
    g_rmdir(dir);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/writers/table/nccl-tests-layout", test_table_matches_nccl_tests);
    g_test_add_func("/writers/table/wide-values", test_table_wide_values);
    g_test_add_func("/writers/table/prediction", test_table_prediction);
    g_test_add_func("/writers/table/devices", test_table_devices);
    g_test_add_func("/writers/json", test_json);
    g_test_add_func("/writers/csv", test_csv);
    g_test_add_func("/writers/files", test_files);
    g_test_add_func("/writers/files-check", test_files_check);
    g_test_add_func("/writers/table/parts", test_table_parts);
    return g_test_run();
}
