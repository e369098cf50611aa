/* nccl_runner.c without a GPU: CUDA and NCCL are replaced by a one-rank
 * host mock defined here (the program's own definitions win over the
 * shared libraries), so that the runner's procedure is checked: the timed
 * region (iterations x aggregated calls between two events), in-place and
 * out-of-place buffer layout, the data check catching a corrupted element,
 * NCCL's reported choices read from its log, and the hang and NCCL-error
 * paths (a message naming rank, collective, size; ncclCommAbort called).
 * What a real GPU adds (NCCL's kernels, several ranks) needs real-gpu.sh. */
#include "config.h"
#include "real/real_int.h"
#include "real/cs_real_check.h"

#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

/* ---- the mock ---------------------------------------------------------------- */

#include "mock-cuda-nccl.c"
#pragma GCC diagnostic warning "-Wmissing-prototypes"

/* ---- the tests ------------------------------------------------------------------ */

typedef struct {
    cs_scenario_t s;
    cs_boot_job_t job;
    cs_boot_t *b;
    guint64 sizes[3];
    cs_real_rank_t rk;
    cs_real_dev_t dev;
    cs_real_cell_t cells[3];
} fixture_t;

static void setup(fixture_t *f, cs_coll_t c, cs_dtype_t t, cs_redop_t op)
{
    memset(f, 0, sizeof *f);
    memset(&m, 0, sizeof m);
    m.corrupt_elem = -1;
    cs_scenario_init(&f->s);
    f->s.coll = c;
    f->s.dtype = t;
    f->s.redop = op;
    f->s.iters = 3;
    f->s.agg_iters = 2;
    f->s.warmup = 1;
    f->s.check = 1;
    f->s.minbytes = 64;
    f->s.maxbytes = 64 * 1024;
    f->job = (cs_boot_job_t){ CS_BOOT_NONE, 0, 1, 0, NULL, 0, -1 };
    guint8 id[128];
    g_autoptr(GError) e = NULL;
    f->b = cs_boot_connect(&f->job, id, sizeof id, 1, &e);
    g_assert_nonnull(f->b);
    f->sizes[0] = 64;
    f->sizes[1] = 4096;
    f->sizes[2] = 64 * 1024;
    f->rk = (cs_real_rank_t){ &f->s, &f->job, f->sizes, 3, 0.3, 1 << 20, NULL };
}

static void teardown(fixture_t *f)
{
    cs_boot_free(f->b);
    cs_scenario_clear(&f->s);
}

static void test_sweep_every_collective(void)
{
    cs_dtype_t types[] = { CS_DTYPE_FLOAT, CS_DTYPE_HALF, CS_DTYPE_BFLOAT16, CS_DTYPE_INT8, CS_DTYPE_FP8E5M2 };
    for (int c = 0; c < CS_COLL_COUNT; c++)
        for (guint t = 0; t < G_N_ELEMENTS(types); t++) {
            fixture_t f;
            setup(&f, (cs_coll_t)c, types[t], CS_REDOP_MAX);
            g_autoptr(GError) err = NULL;
            g_assert_true(cs_real_nccl_measure(&f.rk, f.b, "id", &f.dev, f.cells, &err));
            for (int i = 0; i < 3; i++)
                for (int p = 0; p < 2; p++) {
                    /* 3 iterations x 2 aggregated calls between the events at
                     * 0.5 ms each: 500 us per call */
                    g_assert_cmpfloat_with_epsilon(f.cells[i].time_us[p], 500.0, 1e-6);
                    g_assert_cmpint(f.cells[i].wrong[p], ==, 0);
                }
            g_assert_cmpstr(f.dev.name, ==, "Mock GPU");
            g_assert_cmpint(f.dev.nccl_version, ==, 22809);
            g_assert_true(m.destroyed);
            g_assert_false(m.aborted);
            /* warm-up 64..64K by powers of two (11 sizes x 1), then per size
             * and placement: 1 sync + 6 timed + 1 checked call */
            g_assert_cmpint(m.launches, ==, 11 + 3 * 2 * 8);
            teardown(&f);
        }
}

static void test_corruption_counted(void)
{
    fixture_t f;
    setup(&f, CS_COLL_ALLREDUCE, CS_DTYPE_FLOAT, CS_REDOP_SUM);
    m.corrupt_elem = 3;    /* elements 3 of every output: sizes 64 B+ have >= 16 floats */
    g_autoptr(GError) err = NULL;
    g_assert_true(cs_real_nccl_measure(&f.rk, f.b, "id", &f.dev, f.cells, &err));
    for (int i = 0; i < 3; i++) {
        g_assert_cmpint(f.cells[i].wrong[0], ==, 1);
        g_assert_cmpint(f.cells[i].wrong[1], ==, 1);
    }
    teardown(&f);
    /* a sample of every 4th element: 3 is not in it, 4 is */
    setup(&f, CS_COLL_ALLREDUCE, CS_DTYPE_FLOAT, CS_REDOP_SUM);
    f.rk.check_max = 4;        /* 64 B = 16 floats -> stride 4 */
    m.corrupt_elem = 3;
    g_assert_true(cs_real_nccl_measure(&f.rk, f.b, "id", &f.dev, f.cells, &err));
    g_assert_cmpint(f.cells[0].wrong[0], ==, 0);
    teardown(&f);
    setup(&f, CS_COLL_ALLREDUCE, CS_DTYPE_FLOAT, CS_REDOP_SUM);
    f.rk.check_max = 4;
    m.corrupt_elem = 4;
    g_assert_true(cs_real_nccl_measure(&f.rk, f.b, "id", &f.dev, f.cells, &err));
    g_assert_cmpint(f.cells[0].wrong[0], ==, 1);
    teardown(&f);
}

static void test_unchecked(void)
{
    fixture_t f;
    setup(&f, CS_COLL_ALLGATHER, CS_DTYPE_FLOAT, CS_REDOP_SUM);
    f.s.check = 0;
    m.corrupt_elem = 0;
    g_autoptr(GError) err = NULL;
    g_assert_true(cs_real_nccl_measure(&f.rk, f.b, "id", &f.dev, f.cells, &err));
    g_assert_cmpint(f.cells[1].wrong[0], ==, -1);
    g_assert_cmpint(m.launches, ==, 11 + 3 * 2 * 7);
    teardown(&f);
}

static void test_hang_times_out(void)
{
    fixture_t f;
    setup(&f, CS_COLL_ALLREDUCE, CS_DTYPE_FLOAT, CS_REDOP_SUM);
    m.hang = TRUE;
    g_autoptr(GError) err = NULL;
    gint64 t0 = g_get_monotonic_time();
    g_assert_false(cs_real_nccl_measure(&f.rk, f.b, "id", &f.dev, f.cells, &err));
    g_assert_cmpint(g_get_monotonic_time() - t0, <, 5 * G_USEC_PER_SEC);
    g_assert_nonnull(err);
    /* the first wait is the warm-up of the first size, 64 bytes */
    if (!g_str_has_prefix(err->message, "collsim: real: rank 0: allreduce of 64 bytes (out-of-place) did not finish in 0 s; aborting NCCL"))
        g_error("message: %s", err->message);
    g_assert_true(m.aborted);
    g_assert_false(m.destroyed);
    teardown(&f);
}

static void test_async_error(void)
{
    fixture_t f;
    setup(&f, CS_COLL_REDUCE, CS_DTYPE_INT32, CS_REDOP_SUM);
    m.hang = TRUE;
    m.async_error = TRUE;
    g_autoptr(GError) err = NULL;
    g_assert_false(cs_real_nccl_measure(&f.rk, f.b, "id", &f.dev, f.cells, &err));
    if (strstr(err->message, "rank 0: reduce of 64 bytes (out-of-place): NCCL error: mock NCCL error") == NULL)
        g_error("message: %s", err->message);
    g_assert_true(m.aborted);
    teardown(&f);
}

static void test_tuning_from_log(void)
{
    fixture_t f;
    setup(&f, CS_COLL_ALLREDUCE, CS_DTYPE_FLOAT, CS_REDOP_SUM);
    g_autofree char *path = NULL;
    int fd = g_file_open_tmp("collsim-test-XXXXXX.log", &path, NULL);
    g_assert_cmpint(fd, >=, 0);
    close(fd);
    /* NCCL prints count x type size: 4096 B of float is 1024 x 4 */
    g_assert_true(g_file_set_contents(path,
        "h:1:1 [0] NCCL INFO AllReduce: 4096 Bytes -> Algo RING proto LL128 channel{Lo..Hi}={0..15}\n", -1, NULL));
    f.rk.tuning_log = path;
    g_autoptr(GError) err = NULL;
    g_assert_true(cs_real_nccl_measure(&f.rk, f.b, "id", &f.dev, f.cells, &err));
    g_assert_cmpstr(f.cells[1].algo, ==, "Ring");
    g_assert_cmpstr(f.cells[1].proto, ==, "LL128");
    g_assert_cmpint(f.cells[1].nchannels, ==, 16);
    g_assert_cmpstr(f.cells[0].algo, ==, "");
    g_unlink(path);
    teardown(&f);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/real-runner/sweep-every-collective", test_sweep_every_collective);
    g_test_add_func("/real-runner/corruption-counted", test_corruption_counted);
    g_test_add_func("/real-runner/unchecked", test_unchecked);
    g_test_add_func("/real-runner/hang-times-out", test_hang_times_out);
    g_test_add_func("/real-runner/async-error", test_async_error);
    g_test_add_func("/real-runner/tuning-from-log", test_tuning_from_log);
    return g_test_run();
}
