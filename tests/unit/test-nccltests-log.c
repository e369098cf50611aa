/* The nccl-tests log reader against small hand-made logs (tests/data/logs)
 * whose numbers are known, malformed inputs, and, when the shared data set
 * sits beside the repository, every published file (each must either read
 * or fail with one clear line, never crash). */
#include "config.h"
#include "io/cs_nccltests_log.h"
#include "io/cs_nccl_info.h"
#include "util/cs_error.h"

#include <string.h>

static char *data_path(const char *name)
{
    return g_test_build_filename(G_TEST_DIST, "data", "logs", name, NULL);
}

static cs_nccltests_log_t *load(const char *name, GError **err)
{
    g_autofree char *path = data_path(name);
    return cs_nccltests_log_load(path, err);
}

static const cs_result_row_t *row(const cs_result_t *r, guint i)
{
    g_assert_cmpuint(i, <, r->rows->len);
    return &g_array_index(r->rows, cs_result_row_t, i);
}

static const cs_result_t *res(const cs_nccltests_log_t *l, guint i)
{
    g_assert_cmpuint(i, <, l->results->len);
    return g_ptr_array_index(l->results, i);
}

static int table_no(const cs_nccltests_log_t *l, guint i)
{
    return g_array_index(l->table_numbers, int, i);
}

static void test_two_tables(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(cs_nccltests_log_t) l = load("two-tables.txt", &err);
    g_assert_no_error(err);
    g_assert_cmpuint(l->results->len, ==, 2);
    g_assert_cmpint(l->ntables, ==, 2);
    g_assert_cmpstr(l->nccl_version, ==, "2.28.9");
    g_assert_cmpint(l->nranks, ==, 4);

    const cs_result_t *a = res(l, 0);
    g_assert_cmpstr(a->producer, ==, "measured:nccl-tests");
    g_assert_cmpint(a->coll, ==, CS_COLL_ALLREDUCE);
    g_assert_cmpint(a->nranks, ==, 4);   /* rank lines 0..3 */
    g_assert_cmpint(a->nnodes, ==, 2);   /* hostA, hostB */
    g_assert_cmpuint(a->rows->len, ==, 3);
    g_assert_cmpuint(row(a, 1)->size, ==, 2048);
    g_assert_cmpuint(row(a, 1)->count, ==, 512);
    g_assert_cmpint(row(a, 1)->dtype, ==, CS_DTYPE_FLOAT);
    g_assert_cmpint(row(a, 1)->redop, ==, CS_REDOP_SUM);
    g_assert_cmpint(row(a, 1)->root, ==, -1);
    g_assert_cmpfloat_with_epsilon(row(a, 1)->time_us[CS_OOP], 20.48, 1e-9);
    g_assert_cmpfloat_with_epsilon(row(a, 1)->busbw[CS_OOP], 0.15, 1e-9);
    g_assert_cmpfloat_with_epsilon(row(a, 2)->time_us[CS_INP], 40.0, 1e-9);
    g_assert_cmpint(row(a, 0)->wrong[CS_OOP], ==, 0);
    g_assert_cmpfloat_with_epsilon(a->avg_busbw, 0.126667, 1e-9);
    g_assert_cmpint(table_no(l, 0), ==, 1);
    g_assert_cmpint(g_array_index(l->table_lines, int, 0), ==, 17);

    /* the second table: no rank lines of its own, same run context */
    const cs_result_t *b = res(l, 1);
    g_assert_cmpint(b->coll, ==, CS_COLL_ALLREDUCE);
    g_assert_cmpint(table_no(l, 1), ==, 2);
    g_assert_cmpuint(b->rows->len, ==, 2);
    g_assert_cmpint(row(b, 0)->wrong[CS_OOP], ==, -1); /* N/A */
    g_assert_cmpfloat_with_epsilon(row(b, 1)->time_us[CS_OOP], 30.72, 1e-9);
    g_assert_cmpfloat_with_epsilon(b->avg_busbw, 0.075, 1e-9);
}

static void test_old_format(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(cs_nccltests_log_t) l = load("old-format.txt", &err);
    g_assert_no_error(err);
    /* the elision line does not split the table */
    g_assert_cmpuint(l->results->len, ==, 1);
    const cs_result_t *r = res(l, 0);
    g_assert_cmpint(r->coll, ==, CS_COLL_ALLREDUCE);
    g_assert_cmpuint(r->rows->len, ==, 3);
    /* no root column, redop missing on rows 2-3: times still in place */
    g_assert_cmpfloat_with_epsilon(row(r, 1)->time_us[CS_OOP], 13.39, 1e-9);
    g_assert_cmpfloat_with_epsilon(row(r, 1)->busbw[CS_OOP], 2.45, 1e-9);
    g_assert_cmpfloat_with_epsilon(row(r, 2)->time_us[CS_INP], 13.83, 1e-9);
    g_assert_cmpint(row(r, 2)->root, ==, -1);
    g_assert_cmpint(row(r, 2)->wrong[CS_OOP], ==, -1); /* "error" is not a count */
}

/* NCCL's "Launch mode" INFO line (printed up to v2.12.12, enqueue.cc
 * ncclBarrierEnqueueWait) bounds the version where no line names it; it is
 * noise to the table, which reads on across it. */
static void test_version_bound(void)
{
    static const char hdr[] =
        "#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"
        "#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n";
    static const char rows[] =
        "        1024           256   float     sum    36.07    0.03    0.05    N/A    35.77    0.03    0.05    N/A\n"
        "        2048           512   float     sum    35.42    0.06    0.10    N/A    35.89    0.06    0.10    N/A\n";
    static const char info[] = "hostname:3442:3442 [0] NCCL INFO Launch mode Parallel\n";
    static const char other[] = "hostname:3442:3442 [0] NCCL INFO Channel 00/24 :    0   1   2   3\n";
    g_autoptr(GError) err = NULL;

    g_autofree char *with = g_strconcat(hdr, other, info, rows, NULL);
    g_autoptr(cs_nccltests_log_t) a = cs_nccltests_log_parse(with, strlen(with), "a.txt", &err);
    g_assert_no_error(err);
    g_assert_cmpuint(a->results->len, ==, 1);
    g_assert_cmpuint(res(a, 0)->rows->len, ==, 2);
    g_assert_null(a->nccl_version);
    g_assert_cmpint(a->nccl_version_max, ==, 21212);
    g_assert_cmpint(a->nccl_version_max_line, ==, 4);
    g_assert_nonnull(strstr(a->nccl_version_max_why, "Launch mode"));

    /* other INFO lines bound nothing */
    g_autofree char *without = g_strconcat(hdr, other, rows, NULL);
    g_autoptr(cs_nccltests_log_t) b = cs_nccltests_log_parse(without, strlen(without), "b.txt", &err);
    g_assert_no_error(err);
    g_assert_cmpint(b->nccl_version_max, ==, 0);
    g_assert_null(b->nccl_version_max_why);

    /* a version line is read as before; the bound beside it is kept */
    g_autofree char *named = g_strconcat("NCCL version 2.8.3+cuda11.1\n", hdr, info, rows, NULL);
    g_autoptr(cs_nccltests_log_t) c = cs_nccltests_log_parse(named, strlen(named), "c.txt", &err);
    g_assert_no_error(err);
    g_assert_cmpstr(c->nccl_version, ==, "2.8.3+cuda11.1");
    g_assert_cmpint(c->nccl_version_max, ==, 21212);
    g_assert_cmpint(c->nccltests_version, ==, 0);
}

/* nccl-tests' own line: its version and the NCCL headers it was built on
 * (both as version codes; headers before 2.9 used major x 1000), and the
 * library's version as before. */
static void test_nccltests_build(void)
{
    static const char rows[] =
        "#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"
        "        1024           256   float     sum    36.07    0.03    0.05    N/A    35.77    0.03    0.05    N/A\n";
    g_autoptr(GError) err = NULL;
    g_autofree char *a = g_strconcat("# nccl-tests version 2.18.3 nccl-headers=22903 nccl-library=22903\n", rows, NULL);
    g_autoptr(cs_nccltests_log_t) la = cs_nccltests_log_parse(a, strlen(a), "a.txt", &err);
    g_assert_no_error(err);
    g_assert_cmpint(la->nccltests_version, ==, 21803);
    g_assert_cmpint(la->nccltests_headers, ==, 22903);
    g_assert_cmpstr(la->nccl_version, ==, "2.29.3");
    g_autofree char *b = g_strconcat("# nccl-tests version 2.17.10 nccl-headers=2708 nccl-library=2708\n", rows, NULL);
    g_autoptr(cs_nccltests_log_t) lb = cs_nccltests_log_parse(b, strlen(b), "b.txt", &err);
    g_assert_no_error(err);
    g_assert_cmpint(lb->nccltests_version, ==, 21710);
    g_assert_cmpint(lb->nccltests_headers, ==, 20708);
    /* not a version: nothing */
    g_autofree char *c = g_strconcat("# nccl-tests version two nccl-headers=22903\n", rows, NULL);
    g_autoptr(cs_nccltests_log_t) lc = cs_nccltests_log_parse(c, strlen(c), "c.txt", &err);
    g_assert_no_error(err);
    g_assert_cmpint(lc->nccltests_version, ==, 0);
    g_assert_cmpint(lc->nccltests_headers, ==, 0);
}

static void test_headerless(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(cs_nccltests_log_t) l = load("srun-headerless.txt", &err);
    g_assert_no_error(err);
    g_assert_cmpint(l->ntables, ==, 3);
    g_assert_cmpuint(l->results->len, ==, 3);

    const cs_result_t *a = res(l, 0);
    g_assert_cmpint(a->coll, ==, CS_COLL_ALLREDUCE);
    g_assert_cmpint(a->nranks, ==, 0);   /* nothing says */
    g_assert_cmpuint(a->rows->len, ==, 2);
    g_assert_cmpfloat_with_epsilon(row(a, 0)->time_us[CS_OOP], 215.3, 1e-9);
    g_assert_cmpfloat_with_epsilon(row(a, 1)->time_us[CS_INP], -1, 1e-9); /* absent */

    /* redop none, root -1, size = count x 4 x 8: allgather over 8 ranks */
    const cs_result_t *b = res(l, 1);
    g_assert_cmpint(b->coll, ==, CS_COLL_ALLGATHER);
    g_assert_cmpint(b->nranks, ==, 8);
    g_assert_cmpint(table_no(l, 1), ==, 2);
    g_assert_cmpfloat_with_epsilon(row(b, 1)->busbw[CS_OOP], 12.23, 1e-9);

    /* redop none, out-of-place checked only, size = count x 4 x 16: an
     * alltoall over 16 ranks */
    const cs_result_t *c = res(l, 2);
    g_assert_cmpint(c->coll, ==, CS_COLL_ALLTOALL);
    g_assert_cmpint(c->nranks, ==, 16);
    g_assert_cmpint(table_no(l, 2), ==, 3);
}

static void test_truncated(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(cs_nccltests_log_t) l = load("truncated.txt", &err);
    g_assert_no_error(err);
    const cs_result_t *r = res(l, 0);
    g_assert_cmpuint(r->rows->len, ==, 2);
    g_assert_cmpint(r->nranks, ==, 2);   /* -g 2 on the command line */
    g_assert_cmpfloat_with_epsilon(row(r, 1)->time_us[CS_OOP], 18535, 1e-9);
    g_assert_cmpfloat_with_epsilon(row(r, 1)->time_us[CS_INP], 18524, 1e-9);
    g_assert_cmpint(row(r, 1)->wrong[CS_INP], ==, -1);
}

static void test_json(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(cs_nccltests_log_t) l = load("run.json", &err);
    g_assert_no_error(err);
    g_assert_cmpuint(l->results->len, ==, 1);
    g_assert_cmpstr(l->nccl_version, ==, "2.28.9");
    const cs_result_t *r = res(l, 0);
    g_assert_cmpint(r->coll, ==, CS_COLL_REDUCESCATTER);
    g_assert_cmpint(r->nranks, ==, 4);   /* 2 processes x 1 thread x 2 GPUs */
    g_assert_cmpint(r->nnodes, ==, 2);
    g_assert_cmpuint(row(r, 1)->size, ==, 2097152);
    g_assert_cmpfloat_with_epsilon(row(r, 0)->time_us[CS_INP], 49.0, 1e-9);
    g_assert_cmpfloat_with_epsilon(row(r, 1)->busbw[CS_OOP], 19.6608, 1e-9);
    g_assert_cmpfloat_with_epsilon(row(r, 1)->time_us[CS_INP], -1, 1e-9);
    g_assert_cmpint(row(r, 1)->wrong[CS_OOP], ==, -1);
    g_assert_cmpfloat_with_epsilon(r->avg_busbw, 17.146358, 1e-9);
}

/* topo.cc's affinity lines: the process with the most GPUs a CPU, its
 * set as printed, the GPUs outside it; each form of NCCL's. */
static void test_cpu_affinity(void)
{
    g_autoptr(cs_nccl_info_t) s = cs_nccl_info_new();
    cs_seen_cpu_bind_t cb;
    g_assert_false(cs_nccl_info_cpu_bind(s, &cb));
    /* a process free to use its GPU's 56 near CPUs */
    cs_nccl_info_line(s, "a:7:8 [0] NCCL INFO ncclTopoGetCpuAffinity: Affinity for GPU 0 is 0-55. "
                         "(GPU affinity = 0-55 ; CPU affinity = 0-223).", 1);
    g_assert_true(cs_nccl_info_cpu_bind(s, &cb));
    g_assert_cmpint(cb.cpus, ==, 224);
    g_assert_cmpint(cb.gpus, ==, 1);
    g_assert_true(cs_nccl_info_any(s));
    /* one bound to a core and its hyperthread, 3 GPUs (one twice, one outside) */
    const char *lines[] = {
        "b:9:10 [0] NCCL INFO ncclTopoGetCpuAffinity: Affinity for GPU 0 is 0,112. (GPU affinity = 0-55,112-167 ; "
        "CPU affinity = 0,112).",
        "b:9:11 [5] NCCL INFO ncclTopoGetCpuAffinity: Affinity for GPU 5 is empty, ignoring. (GPU affinity = "
        "56-111,168-223 ; CPU affinity = 0,112).",
        "b:9:10 [0] NCCL INFO ncclTopoGetCpuAffinity: Affinity for GPU 0 is 0,112. (GPU affinity = 0-55,112-167 ; "
        "CPU affinity = 0,112).",
        "b:9:12 [1] NCCL INFO ncclTopoGetCpuAffinity: Affinity for GPU 1 is 0,112. (GPU affinity = 0-55,112-167 ; "
        "CPU affinity = 0,112).",
    };
    for (int i = 0; i < 4; i++)
        cs_nccl_info_line(s, lines[i], 2 + i);
    g_assert_true(cs_nccl_info_cpu_bind(s, &cb));
    g_assert_cmpint(cb.line, ==, 2);
    g_assert_cmpstr(cb.set, ==, "0,112");
    g_assert_cmpint(cb.cpus, ==, 2);
    g_assert_cmpint(cb.gpus, ==, 3);
    g_assert_cmpint(cb.outside, ==, 1);
    g_assert_false(cb.kept);
    g_autofree char *sum = cs_nccl_info_summary(s);
    g_assert_nonnull(strstr(sum, "3 GPUs of a process on 2 CPUs (line 2: 0,112)"));
    /* the '# Rank' lines count a process's GPUs where fewer printed a line */
    for (int r = 0; r < 8; r++)
        cs_nccl_info_rank_proc(s, "b", 9);
    g_assert_true(cs_nccl_info_cpu_bind(s, &cb));
    g_assert_cmpint(cb.gpus, ==, 8);
    /* NCCL_IGNORE_CPU_AFFINITY=1 prints no process set: not a binding */
    g_autoptr(cs_nccl_info_t) ig = cs_nccl_info_new();
    cs_nccl_info_line(ig, "c:1:2 [0] NCCL INFO ncclTopoGetCpuAffinity: Affinity for GPU 0 is 0-55. "
                          "(GPU affinity = 0-55).", 1);
    g_assert_false(cs_nccl_info_cpu_bind(ig, &cb));
    g_assert_true(cs_nccl_info_any(ig));   /* it says NCCL ignored the set */
    /* up to 2.27: the kept set as a hex mask, 32-bit words high first */
    g_autoptr(cs_nccl_info_t) old = cs_nccl_info_new();
    cs_nccl_info_line(old, "d:3:4 [2] NCCL INFO Setting affinity for GPU 2 to 01,00000001", 7);
    cs_nccl_info_line(old, "d:3:5 [3] NCCL INFO Setting affinity for GPU 3 to 01,00000001", 8);
    cs_nccl_info_line(old, "d:3:6 [4] NCCL INFO Setting affinity for GPU 4 to zz", 9);
    g_assert_true(cs_nccl_info_cpu_bind(old, &cb));
    g_assert_cmpint(cb.line, ==, 7);
    g_assert_cmpint(cb.cpus, ==, 2);
    g_assert_cmpint(cb.gpus, ==, 2);
    g_assert_true(cb.kept);
    /* 2.27: the kept set as a cpulist; a timestamp before host:pid:tid;
     * a line naming no process is not kept; CPUs counted once */
    g_autoptr(cs_nccl_info_t) l27 = cs_nccl_info_new();
    cs_nccl_info_line(l27, "[2026-01-02 03:04:05] f:12:13 [0] NCCL INFO Setting affinity for GPU 0 to 0,112", 3);
    cs_nccl_info_line(l27, "[2026-01-02 03:04:05] f:12:14 [1] NCCL INFO Setting affinity for GPU 1 to 0,0,112", 4);
    cs_nccl_info_line(l27, "[2026-01-02 03:04:05] f:12:15 [4] NCCL INFO Setting affinity for GPU 4 to 56-111", 5);
    cs_nccl_info_line(l27, "NCCL INFO Setting affinity for GPU 5 to 0", 6);
    g_assert_true(cs_nccl_info_cpu_bind(l27, &cb));
    g_assert_cmpint(cb.line, ==, 3);
    g_assert_cmpint(cb.cpus, ==, 58);   /* the union of what NCCL kept near each GPU */
    g_assert_cmpint(cb.gpus, ==, 3);
    g_assert_cmpint(l27->cpu_lines, ==, 4);
    /* malformed sets are not counted */
    g_autoptr(cs_nccl_info_t) bad = cs_nccl_info_new();
    cs_nccl_info_line(bad, "e:1:1 [0] NCCL INFO ncclTopoGetCpuAffinity: Affinity for GPU 0 is 0. (GPU affinity = 0 ; "
                           "CPU affinity = 9-3).", 1);
    cs_nccl_info_line(bad, "e:1:1 [0] NCCL INFO ncclTopoGetCpuAffinity: Affinity for GPU x", 2);
    cs_nccl_info_line(bad, "e:1:1 [0] NCCL INFO ncclTopoGetCpuAffinity: Affinity for GPU 0 is 0. (GPU affinity = 0 ; "
                           "CPU affinity = +5).", 3);
    cs_nccl_info_line(bad, "e:1:1 [0] NCCL INFO ncclTopoGetCpuAffinity: Affinity for GPU 0 is 0. (GPU affinity = 0 ; "
                           "CPU affinity = 0-99999999999999999999).", 4);
    cs_nccl_info_line(bad, "e:1:1 [0] NCCL INFO Setting affinity for GPU 99999999999999999999 to 1", 5);
    g_assert_false(cs_nccl_info_cpu_bind(bad, &cb));
}

/* "NET/IB : Using" lists every device, beyond what the quoted text keeps
 * (16 rails: the quote is cut at about 120 bytes). */
static void test_net_devices(void)
{
    g_autoptr(cs_nccl_info_t) s = cs_nccl_info_new();
    g_autoptr(GString) l = g_string_new("h:1:2 [0] NCCL INFO NET/IB : Using");
    for (int i = 0; i < 16; i++)
        g_string_append_printf(l, " [%d]mlx5_%d:1/IB", i, i);
    g_string_append(l, " [RO]; OOB ib0:10.0.0.1<0>");
    cs_nccl_info_line(s, l->str, 4);
    g_assert_cmpint(s->net_devices_n, ==, 16);
    g_assert_nonnull(strstr(s->net_devices_names, "mlx5_0,mlx5_1,"));
    g_assert_true(g_str_has_suffix(s->net_devices_names, ",mlx5_15"));
    g_assert_true(g_str_has_suffix(s->net_devices.text, " ..."));   /* the quote is cut */
}

/* Hints: the caller's collective wins when the rows agree, fails when not. */
static void test_hints(void)
{
    g_autofree char *path = data_path("srun-headerless.txt");
    g_autoptr(GError) err = NULL;
    cs_nccltests_hint_t h = { .has_coll = FALSE, .nranks = 16 };
    g_autoptr(cs_nccltests_log_t) l = cs_nccltests_log_load_hint(path, &h, &err);
    g_assert_no_error(err);
    g_assert_cmpint(res(l, 0)->nranks, ==, 16); /* unknown in the file: the hint */
    g_assert_cmpint(res(l, 1)->nranks, ==, 8);  /* the file's own wins */

    h.has_coll = TRUE;
    h.coll = CS_COLL_ALLREDUCE;
    g_autoptr(cs_nccltests_log_t) bad = cs_nccltests_log_load_hint(path, &h, &err);
    g_assert_null(bad);
    g_assert_error(err, CS_ERROR, CS_ERROR_INPUT);
    g_assert_true(strstr(err->message, "srun-headerless.txt:7: table 2 does not look like allreduce") != NULL);
}

/* Per-iteration columns (-I 1) and collsim's own extra columns, in memory. */
static void test_columns(void)
{
    static const char per_iter[] =
        "# Collective test starting: all_gather_perf\n"
        "#       size  count  type redop root  time algbw busbw #wrong i_min i_max i_p99 i_cv%"
        "  time algbw busbw #wrong i_min i_max i_p99 i_cv%\n"
        "    4096    128  float  none   -1  10.0  0.41  0.36   0  9.0 11.0 10.9 2.1"
        "  10.5  0.39  0.34  0  9.5 11.5 11.0 2.0\n";
    g_autoptr(GError) err = NULL;
    g_autoptr(cs_nccltests_log_t) l = cs_nccltests_log_parse(per_iter, sizeof per_iter - 1, "mem", &err);
    g_assert_no_error(err);
    const cs_result_t *r = res(l, 0);
    g_assert_cmpint(r->coll, ==, CS_COLL_ALLGATHER);
    g_assert_cmpint(r->nranks, ==, 8);   /* 4096 / (128 x 4) */
    g_assert_cmpfloat_with_epsilon(row(r, 0)->time_us[CS_OOP], 10.0, 1e-12);
    g_assert_cmpfloat_with_epsilon(row(r, 0)->busbw[CS_OOP], 0.36, 1e-12);
    g_assert_cmpfloat_with_epsilon(row(r, 0)->time_us[CS_INP], 10.5, 1e-12);
    g_assert_cmpint(row(r, 0)->wrong[CS_INP], ==, 0);

    static const char ours[] =
        "# collsim 0.1.0 prediction (model: analytic) \xe2\x80\x94 not a measurement\n"
        "# Collective test starting: all_reduce_perf\n"
        "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw"
        "   busbw  #wrong      algo   proto   nch  transport\n"
        "           0             0     float     sum      -1     0.00    0.00    0.00    N/A     0.00    0.00"
        "    0.00    N/A         -       -     -  -\n"
        "        1024           256     float     sum      -1    13.49    0.08    0.13    N/A    13.49    0.08"
        "    0.13    N/A      Ring      LL     1  P2P/NVL\n";
    g_autoptr(cs_nccltests_log_t) o = cs_nccltests_log_parse(ours, sizeof ours - 1, "mem", &err);
    g_assert_no_error(err);
    r = res(o, 0);
    g_assert_cmpstr(r->producer, ==, "model:analytic");   /* not a measurement */
    g_assert_cmpuint(r->rows->len, ==, 2);
    g_assert_cmpstr(row(r, 0)->algo, ==, "");             /* "-": unknown */
    g_assert_cmpint(row(r, 0)->nchannels, ==, 0);
    g_assert_cmpstr(row(r, 1)->algo, ==, "Ring");
    g_assert_cmpstr(row(r, 1)->proto, ==, "LL");
    g_assert_cmpint(row(r, 1)->nchannels, ==, 1);
    g_assert_cmpstr(row(r, 1)->transport, ==, "P2P/NVL");

    /* a size that goes down starts a new sweep: two tables */
    static const char two[] =
        "  2048  512  float  sum  -1  10.0  0.20  0.36  0  10.0  0.20  0.36  0\n"
        "  1024  256  float  sum  -1   9.0  0.11  0.20  0   9.0  0.11  0.20  0\n";
    g_autoptr(cs_nccltests_log_t) t = cs_nccltests_log_parse(two, sizeof two - 1, "mem", &err);
    g_assert_no_error(err);
    g_assert_cmpint(t->ntables, ==, 2);
}

typedef struct {
    const char *file;
    const char *message;   /* expected start after the path */
} bad_case_t;

static void test_bad(gconstpointer data)
{
    const bad_case_t *c = data;
    g_autoptr(GError) err = NULL;
    g_autofree char *path = data_path(c->file);
    g_autoptr(cs_nccltests_log_t) l = cs_nccltests_log_load(path, &err);
    g_assert_null(l);
    g_assert_nonnull(err);
    g_autofree char *want = g_strdup_printf("%s%s", path, c->message);
    if (!g_str_has_prefix(err->message, want))
        g_error("got '%s', expected a message starting '%s'", err->message, want);
    g_assert_null(strchr(err->message, '\n'));
}

static const bad_case_t bad_cases[] = {
    { "no-table.txt", ": no nccl-tests table found; expected lines like" },
    { "bad-number.txt", ":2: bad out-of-place time '12x.5'; expected a number >= 0" },
    { "bad-type.txt", ":1: unknown data type 'flaot'; expected" },
    { "bad-short.txt", ":2: row has too few columns; expected size count type redop root" },
    { "bad.json", ":2: JSON syntax error at ']'; expected a value" },
};

/* Garbage in memory: never a crash, one line or a result. */
static void test_garbage(void)
{
    static const char *inputs[] = {
        "", "\n\n", "{", "[1,2", "{\"results\":[]}", "{\"results\":[{}]}",
        "{\"results\":[{\"size\":1e400}]}", "\"\\u", "{\"a\":\"\\ud800\"}",
        "8 2 float sum -1 1 2", "8 2 float sum -1 x y z w", "# size count type\n8 2 float sum",
        "18446744073709551616 2 float sum -1 1 1 1 0", "8 2 float sum 99999999999 1 1 1 0",
        "8 2 float none -1 nan 1 1 0", "0: 0: 8 2 float sum -1 1 1 1 0",
    };
    for (guint i = 0; i < G_N_ELEMENTS(inputs); i++) {
        g_autoptr(GError) err = NULL;
        g_autoptr(cs_nccltests_log_t) l = cs_nccltests_log_parse(inputs[i], strlen(inputs[i]), "mem", &err);
        g_assert_true((l != NULL) != (err != NULL));
        if (err != NULL)
            g_assert_true(g_str_has_prefix(err->message, "mem"));
    }
    /* deep nesting stops at the depth limit */
    g_autoptr(GString) deep = g_string_new(NULL);
    for (int i = 0; i < 10000; i++)
        g_string_append_c(deep, '[');
    g_autoptr(GError) err = NULL;
    g_autoptr(cs_nccltests_log_t) l = cs_nccltests_log_parse("{\"a\":", 5, "mem", &err);
    g_assert_null(l);
    g_clear_error(&err);
    g_string_prepend(deep, "{\"a\":");
    g_autoptr(cs_nccltests_log_t) l2 = cs_nccltests_log_parse(deep->str, deep->len, "mem", &err);
    g_assert_null(l2);
    g_assert_true(strstr(err->message, "nested deeper") != NULL);
}

/* The published logs beside the repository (../shared/data/real): each one
 * reads or fails with one line. Accuracy is not tested here. */
static void test_shared(void)
{
    const char *top = g_getenv("top_srcdir");
    g_autofree char *dir = g_build_filename(top ? top : CS_SRCDIR, "..", "shared", "data", "real", NULL);
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    if (d == NULL) {
        g_test_skip("no shared data set beside the repository");
        return;
    }
    int read = 0;
    const char *f;
    while ((f = g_dir_read_name(d)) != NULL) {
        if (!g_str_has_suffix(f, ".txt"))
            continue;
        g_autofree char *path = g_build_filename(dir, f, NULL);
        g_autoptr(GError) err = NULL;
        g_autoptr(cs_nccltests_log_t) l = cs_nccltests_log_load(path, &err);
        if (l == NULL) {
            g_assert_nonnull(err);
            g_assert_null(strchr(err->message, '\n'));
            g_test_message("%s", err->message);
            continue;
        }
        for (guint i = 0; i < l->results->len; i++)
            g_assert_cmpuint(res(l, i)->rows->len, >, 0);
        read++;
    }
    g_assert_cmpint(read, >, 10);
}

/* Logs named in prose (SuperBench's "nccl_<collective>.log" sections):
 * a header listing several logs in one brace names no one collective,
 * each "### .../nccl_X.log" title names its table's, the short names
 * (broadcast, reduce) included in that form. Before, the header's
 * "alltoall" (the one long name it held) was taken for every table. */
static void test_log_names(void)
{
    static const char text[] =
        "source: x/tests/data/nccl_{allgather,allreduce,alltoall,broadcast,reduce}.log\n"
        "### tests/data/nccl_allgather.log\n"
        "#       size  count  type redop root  time algbw busbw #wrong  time algbw busbw #wrong\n"
        "    4096    128  float  none   -1  10.0  0.41  0.36   0  10.5  0.39  0.34  0\n"
        "### tests/data/nccl_broadcast.log\n"
        "#       size  count  type redop root  time algbw busbw #wrong  time algbw busbw #wrong\n"
        "    4096   1024  float  none    0  10.0  0.41  0.41   0  10.5  0.39  0.39  0\n"
        "### tests/data/nccl_reduce.log\n"
        "#       size  count  type redop root  time algbw busbw #wrong  time algbw busbw #wrong\n"
        "    4096   1024  float   sum    0  10.0  0.41  0.41   0  10.5  0.39  0.39  0\n";
    g_autoptr(GError) err = NULL;
    g_autoptr(cs_nccltests_log_t) l = cs_nccltests_log_parse(text, sizeof text - 1, "mem", &err);
    g_assert_no_error(err);
    g_assert_cmpint(res(l, 0)->coll, ==, CS_COLL_ALLGATHER);
    g_assert_cmpint(res(l, 1)->coll, ==, CS_COLL_BROADCAST);
    g_assert_cmpint(res(l, 2)->coll, ==, CS_COLL_REDUCE);
}


/* What NCCL's INFO lines say goes with the table of their run: the lines
 * since the previous table; a quotation in prose is not NCCL's. */
static void test_nccl_info(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(cs_nccltests_log_t) l = load("info-transports.txt", &err);
    g_assert_no_error(err);
    g_assert_cmpuint(l->results->len, ==, 2);
    g_assert_cmpuint(l->nccl_info->len, ==, 2);
    const cs_nccl_info_t *a = g_ptr_array_index(l->nccl_info, 0), *b = g_ptr_array_index(l->nccl_info, 1);
    g_assert_nonnull(a);
    g_assert_nonnull(b);
    g_assert_cmpint(a->xport[CS_SEEN_P2P].count, ==, 2);
    g_assert_cmpint(a->xport[CS_SEEN_P2P].line, ==, 18);
    g_assert_cmpstr(a->xport[CS_SEEN_P2P].text, ==, "P2P/CUMEM");
    g_assert_cmpint(a->xport[CS_SEEN_NET_SOCKET].count, ==, 3);
    g_assert_cmpint(a->xport[CS_SEEN_NET_OTHER].count, ==, 0);
    g_assert_cmpstr(a->network.text, ==, "Socket");   /* not the header's quoted AWS Libfabric */
    g_assert_cmpint(a->network.line, ==, 17);
    g_assert_cmpuint(a->conns->len, ==, 5);
    const cs_seen_conn_t *c = &g_array_index(a->conns, cs_seen_conn_t, 1);
    g_assert_cmpint(c->from, ==, 1);
    g_assert_cmpint(c->to, ==, 2);
    g_assert_cmpint(c->kind, ==, CS_SEEN_NET_SOCKET);
    g_assert_cmpint(a->no_gdr.count, ==, 0);
    g_assert_cmpint(a->coll_channels.count, ==, 0);
    /* the second run's own lines, none of the first's */
    g_assert_cmpint(b->xport[CS_SEEN_P2P].count, ==, 0);
    g_assert_cmpint(b->xport[CS_SEEN_SHM].count, ==, 1);
    g_assert_cmpint(b->xport[CS_SEEN_NET_HOST].count, ==, 2);
    g_assert_cmpint(b->xport[CS_SEEN_NET_GDR].count, ==, 0);
    g_assert_cmpint(b->no_gdr.line, ==, 42);
    g_assert_cmpint(b->coll_channels_value, ==, 3);
    g_assert_cmpuint(b->gdr_reasons->len, ==, 1);
    g_assert_cmpint(g_array_index(b->gdr_reasons, cs_seen_reason_t, 0).line, ==, 48);
    g_assert_cmpstr(g_array_index(b->gdr_reasons, cs_seen_reason_t, 0).gpu, ==, "1");
    g_assert_cmpuint(a->gdr_reasons->len, ==, 0);
    /* a [receive] line is the receiver's; where the ranks ran */
    g_assert_false(g_array_index(a->conns, cs_seen_conn_t, 1).receive);
    g_assert_true(g_array_index(a->conns, cs_seen_conn_t, 2).receive);
    g_assert_cmpstr(g_ptr_array_index(a->texts, g_array_index(a->conns, cs_seen_conn_t, 2).text), ==, "NET/Socket/0");
    g_assert_cmpuint(a->texts->len, ==, 2);   /* P2P/CUMEM and NET/Socket/0, each kept once */
    g_assert_cmpint(a->max_group, ==, 0);
    g_assert_cmpuint(a->rank_host->len, ==, 4);
    g_assert_cmpint(g_array_index(a->rank_host, int, 1), ==, 0);
    g_assert_cmpint(g_array_index(a->rank_host, int, 2), ==, 1);
    g_assert_cmpstr(b->net_devices.text, ==, "NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]");
    g_assert_cmpint(b->net_devices.line, ==, 49);
    g_assert_cmpint(a->net_devices.count, ==, 0);
    g_autofree char *sum = cs_nccl_info_summary(b);
    g_assert_nonnull(strstr(sum, "via SHM/direct/direct (1 line, the first at line 39)"));
    g_assert_nonnull(strstr(sum, "3 coll channels (line 43)"));
    /* each channel's ring as rank 0 listed it; "Ring 00 : 3 -> 0 -> 1" is not one */
    g_assert_cmpuint(a->rings->len, ==, 2);
    g_assert_cmpuint(b->rings->len, ==, 3);
    const cs_seen_ring_t *r1 = g_ptr_array_index(b->rings, 1);
    g_assert_cmpint(r1->channel, ==, 1);
    g_assert_cmpint(r1->line, ==, 45);
    g_assert_cmpuint(r1->order->len, ==, 4);
    g_assert_cmpint(g_array_index(r1->order, int, 3), ==, 3);
    const cs_seen_ring_t *a1 = g_ptr_array_index(a->rings, 1);
    g_assert_cmpint(g_array_index(a1->order, int, 1), ==, 3);

    /* a log without INFO lines has none (its '# Rank' lines' GPU name at
     * most); line forms of older NCCLs and plugins */
    g_autoptr(cs_nccltests_log_t) l2 = load("two-tables.txt", &err);
    g_assert_no_error(err);
    const cs_nccl_info_t *i0 = g_ptr_array_index(l2->nccl_info, 0);
    g_assert_true(i0 == NULL || (!cs_nccl_info_any(i0) && i0->rank_gpu.count > 0));
    g_autoptr(cs_nccl_info_t) s = cs_nccl_info_new();
    cs_nccl_info_line(s, "h:1:2 [0] NCCL INFO Ring 00 : 0[0] -> 1[1] via direct shared memory", 1);
    cs_nccl_info_line(s, "h:1:2 [0] NCCL INFO Ring 01 : 1 -> 2 [send] via NET/IB/0/GDRDMA", 2);
    cs_nccl_info_line(s, "NCCL INFO Channel 00/0 : 2[2] -> 3[3] [send] via NET/AWS Libfabric/0/GDRDMA", 3);
    cs_nccl_info_line(s, "h:1:2 [0] NCCL INFO Channel 00/0 : 3[3] -> 4[4] [send] via NET/IBext_v11/1/GDRDMA/Shared", 4);
    cs_nccl_info_line(s, "h:1:2 [0] NCCL INFO Channel 00 : 4[4] -> 5[5] via P2P/indirect/6[6]", 5);
    cs_nccl_info_line(s, "see \"NCCL INFO Channel 00 : 5[5] -> 6[6] via SHM/direct/direct\"", 6);
    cs_nccl_info_line(s, "h:1:2 [0] NCCL INFO Connected all rings, use ring PXN 0 GDR 1", 7);
    cs_nccl_info_line(s, "h:1:2 [0] NCCL INFO 99999 coll channels", 8);
    cs_nccl_info_line(s, "h:1:2 [0] NCCL INFO NET/IB : No device found.", 9);
    cs_nccl_info_line(s, "h:1:2 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0' (no module)", 10);
    cs_nccl_info_line(s, "h:1:2 [0] NCCL INFO Using network \xff\xfeX", 11);
    g_assert_cmpint(s->no_ib_device.line, ==, 9);
    g_assert_cmpuint(s->gdr_reasons->len, ==, 1);
    g_assert_null(g_array_index(s->gdr_reasons, cs_seen_reason_t, 0).gpu);
    g_assert_cmpstr(s->network.text, ==, "??X");   /* printable ASCII only */
    g_assert_cmpint(s->xport[CS_SEEN_SHM].count, ==, 1);
    g_assert_cmpint(s->xport[CS_SEEN_NET_GDR].count, ==, 2);
    g_assert_cmpint(s->xport[CS_SEEN_NET_OTHER].count, ==, 1);
    g_assert_cmpstr(s->xport[CS_SEEN_NET_OTHER].text, ==, "NET/AWS Libfabric/0/GDRDMA");
    g_assert_cmpint(s->xport[CS_SEEN_P2P].count, ==, 1);
    g_assert_cmpint(s->no_gdr.count, ==, 0);
    g_assert_cmpint(s->coll_channels.count, ==, 0);
    g_assert_cmpuint(s->conns->len, ==, 5);
    g_assert_cmpint(g_array_index(s->conns, cs_seen_conn_t, 1).from, ==, 1);
    g_assert_cmpint(g_array_index(s->conns, cs_seen_conn_t, 1).to, ==, 2);
    g_assert_cmpint(cs_nccl_info_net_kind("gIB"), ==, CS_SEEN_NET_GDR);
    g_assert_cmpint(cs_nccl_info_net_kind("Socket"), ==, CS_SEEN_NET_SOCKET);
    g_assert_cmpint(cs_nccl_info_net_kind("AWS Libfabric"), ==, CS_SEEN_NET_OTHER);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/nccltests-log/two-tables", test_two_tables);
    g_test_add_func("/nccltests-log/old-format", test_old_format);
    g_test_add_func("/nccltests-log/version-bound", test_version_bound);
    g_test_add_func("/nccltests-log/nccltests-build", test_nccltests_build);
    g_test_add_func("/nccltests-log/headerless", test_headerless);
    g_test_add_func("/nccltests-log/truncated", test_truncated);
    g_test_add_func("/nccltests-log/json", test_json);
    g_test_add_func("/nccltests-log/nccl-info", test_nccl_info);
    g_test_add_func("/nccltests-log/cpu-affinity", test_cpu_affinity);
    g_test_add_func("/nccltests-log/net-devices", test_net_devices);
    g_test_add_func("/nccltests-log/hints", test_hints);
    g_test_add_func("/nccltests-log/columns", test_columns);
    g_test_add_func("/nccltests-log/log-names", test_log_names);
    for (guint i = 0; i < G_N_ELEMENTS(bad_cases); i++) {
        g_autofree char *name = g_strdup_printf("/nccltests-log/bad/%s", bad_cases[i].file);
        g_test_add_data_func(name, &bad_cases[i], test_bad);
    }
    g_test_add_func("/nccltests-log/garbage", test_garbage);
    g_test_add_func("/nccltests-log/shared", test_shared);
    return g_test_run();
}
