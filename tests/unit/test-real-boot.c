/* The rank bootstrap of `collsim real`, without a GPU: the job read from
 * launcher variables (and its error messages), the id exchange and result
 * gathering among forked processes on loopback with a fake 128-byte id,
 * failure propagation, and the launcher stopping siblings of a failed rank. */
#include "config.h"
#include "real/cs_real_boot.h"

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define ID_LEN 128   /* NCCL_UNIQUE_ID_BYTES (nccl.h) */

static gboolean job_of(const char *const *vars, const char *bootstrap, cs_boot_job_t *j, GError **err)
{
    g_auto(GStrv) env = g_strdupv((char **)vars);
    return cs_boot_job_from_env(env, bootstrap, j, err);
}

static void expect_error(const char *const *vars, const char *bootstrap, const char *fragment)
{
    g_autoptr(GError) err = NULL;
    cs_boot_job_t j;
    g_assert_false(job_of(vars, bootstrap, &j, &err));
    g_assert_nonnull(err);
    if (strstr(err->message, fragment) == NULL)
        g_error("message '%s' lacks '%s'", err->message, fragment);
    g_assert_null(strchr(err->message, '\n'));
}

static void test_env_torchrun(void)
{
    const char *v[] = { "RANK=3", "WORLD_SIZE=8", "LOCAL_RANK=1", "MASTER_ADDR=node0", "MASTER_PORT=29500", NULL };
    cs_boot_job_t j;
    g_autoptr(GError) err = NULL;
    g_assert_true(job_of(v, NULL, &j, &err));
    g_assert_cmpint(j.kind, ==, CS_BOOT_TORCHRUN);
    g_assert_cmpint(j.rank, ==, 3);
    g_assert_cmpint(j.nranks, ==, 8);
    g_assert_cmpint(j.local_rank, ==, 1);
    g_assert_cmpstr(j.host, ==, "node0");
    g_assert_cmpint(j.port, ==, 29500);
    g_assert_cmpint(j.listen_fd, ==, -1);
    cs_boot_job_clear(&j);
    /* --bootstrap wins over MASTER_* */
    g_assert_true(job_of(v, "[::1]:1234", &j, &err));
    g_assert_cmpstr(j.host, ==, "::1");
    g_assert_cmpint(j.port, ==, 1234);
    cs_boot_job_clear(&j);

    const char *no_local[] = { "RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=a", "MASTER_PORT=1", NULL };
    expect_error(no_local, NULL, "collsim: real: LOCAL_RANK is not set; expected");
    const char *bad_rank[] = { "RANK=abc", "WORLD_SIZE=2", "LOCAL_RANK=0", NULL };
    expect_error(bad_rank, NULL, "RANK=abc: not a rank of the job; expected a whole number from 0 to 1");
    const char *big_rank[] = { "RANK=2", "WORLD_SIZE=2", "LOCAL_RANK=0", NULL };
    expect_error(big_rank, NULL, "RANK=2: not a rank of the job");
    const char *no_size[] = { "RANK=0", "LOCAL_RANK=0", NULL };
    expect_error(no_size, NULL, "WORLD_SIZE is not set");
    const char *no_addr[] = { "RANK=1", "WORLD_SIZE=2", "LOCAL_RANK=1", NULL };
    expect_error(no_addr, NULL, "expected --bootstrap HOST:PORT or MASTER_ADDR and MASTER_PORT");
    const char *bad_port[] = { "RANK=1", "WORLD_SIZE=2", "LOCAL_RANK=1", "MASTER_ADDR=h", "MASTER_PORT=70000", NULL };
    expect_error(bad_port, NULL, "MASTER_PORT=70000: not a TCP port; expected a whole number from 1 to 65535");
    expect_error(v, "nocolon", "--bootstrap 'nocolon' is not an address; expected HOST:PORT");
    /* one rank needs no address */
    const char *one[] = { "RANK=0", "WORLD_SIZE=1", "LOCAL_RANK=0", NULL };
    g_assert_true(job_of(one, NULL, &j, &err));
    g_assert_null(j.host);
    cs_boot_job_clear(&j);
}

static void test_env_mpi(void)
{
    const char *ompi[] = { "OMPI_COMM_WORLD_RANK=5", "OMPI_COMM_WORLD_SIZE=16", "OMPI_COMM_WORLD_LOCAL_RANK=5",
                           "RANK=99", NULL };
    cs_boot_job_t j;
    g_autoptr(GError) err = NULL;
    g_assert_true(job_of(ompi, "10.0.0.1:29500", &j, &err));
    g_assert_cmpint(j.kind, ==, CS_BOOT_OMPI);
    g_assert_cmpint(j.rank, ==, 5);            /* Open MPI's, not the stray RANK */
    g_assert_cmpint(j.nranks, ==, 16);
    g_assert_cmpstr(j.host, ==, "10.0.0.1");
    cs_boot_job_clear(&j);
    expect_error(ompi, NULL, "started by Open MPI's mpirun with OMPI_COMM_WORLD_RANK set, but rank 0's address is unknown");

    const char *pmi[] = { "PMI_RANK=2", "PMI_SIZE=4", "MPI_LOCALRANKID=0", "MASTER_ADDR=h0", "MASTER_PORT=4000", NULL };
    g_assert_true(job_of(pmi, NULL, &j, &err));
    g_assert_cmpint(j.kind, ==, CS_BOOT_PMI);
    g_assert_cmpint(j.rank, ==, 2);
    g_assert_cmpint(j.local_rank, ==, 0);
    g_assert_cmpstr(j.host, ==, "h0");
    cs_boot_job_clear(&j);
    const char *pmi_nolocal[] = { "PMI_RANK=2", "PMI_SIZE=4", NULL };
    expect_error(pmi_nolocal, "h:1", "PMI_LOCAL_RANK is not set");

    const char *none[] = { "HOME=/", NULL };
    g_assert_true(job_of(none, NULL, &j, &err));
    g_assert_cmpint(j.kind, ==, CS_BOOT_NONE);
    g_assert_cmpint(j.nranks, ==, 1);
    expect_error(none, "h:1", "collsim: --bootstrap: given, but no rank variables are set");

    const char *ours[] = { "COLLSIM_REAL_WORKER=1", "RANK=0", "WORLD_SIZE=2", "LOCAL_RANK=0",
                           "MASTER_ADDR=127.0.0.1", "MASTER_PORT=5", "COLLSIM_REAL_LISTEN_FD=7", NULL };
    g_assert_true(job_of(ours, NULL, &j, &err));
    g_assert_cmpint(j.kind, ==, CS_BOOT_LAUNCHER);
    g_assert_cmpint(j.listen_fd, ==, 7);
    cs_boot_job_clear(&j);
}

/* ---- forked ranks on loopback ------------------------------------------------- */

typedef int (*rank_fn_t)(cs_boot_t *b, int rank, const guint8 *id);

static void fake_id(guint8 *id)
{
    for (int i = 0; i < ID_LEN; i++)
        id[i] = (guint8)(i * 37 + 11);
}

/* Runs n ranks as processes; returns their exit statuses in st[]. */
static void run_ranks(int n, rank_fn_t fn, int *st)
{
    int port;
    g_autoptr(GError) err = NULL;
    int lfd = cs_boot_listen("127.0.0.1", 0, &port, &err);
    g_assert_cmpint(lfd, >=, 0);
    pid_t pids[16];
    g_assert_cmpint(n, <=, 16);
    for (int r = 0; r < n; r++) {
        pids[r] = fork();
        g_assert_cmpint(pids[r], >=, 0);
        if (pids[r] == 0) {
            cs_boot_job_t job = { CS_BOOT_LAUNCHER, r, n, r, (char *)"127.0.0.1", port, r == 0 ? lfd : -1 };
            if (r != 0)
                close(lfd);
            guint8 id[ID_LEN] = { 0 };
            if (r == 0)
                fake_id(id);
            GError *e = NULL;
            cs_boot_t *b = cs_boot_connect(&job, id, ID_LEN, 10, &e);
            if (b == NULL) {
                fprintf(stderr, "rank %d: %s\n", r, e->message);
                _exit(50);
            }
            int code = fn(b, r, id);
            cs_boot_free(b);
            _exit(code);
        }
    }
    close(lfd);
    for (int r = 0; r < n; r++) {
        int s;
        g_assert_cmpint(waitpid(pids[r], &s, 0), ==, pids[r]);
        st[r] = WIFEXITED(s) ? WEXITSTATUS(s) : 100 + WTERMSIG(s);
    }
}

typedef struct { gint32 rank; guint32 idsum; } blob_t;

static int gather_ok(cs_boot_t *b, int rank, const guint8 *id)
{
    guint8 want[ID_LEN];
    fake_id(want);
    if (memcmp(id, want, ID_LEN) != 0)
        return 20;
    blob_t mine = { rank, 0 };
    for (int i = 0; i < ID_LEN; i++)
        mine.idsum += id[i] * (guint32)(i + 1);
    guint8 *all = NULL;
    GError *e = NULL;
    if (!cs_boot_gather(b, &mine, sizeof mine, &all, 10, &e)) {
        fprintf(stderr, "rank %d: %s\n", rank, e->message);
        g_error_free(e);
        return 21;
    }
    if (rank == 0) {
        for (int q = 0; q < 5; q++) {
            blob_t got;
            memcpy(&got, all + q * sizeof got, sizeof got);
            if (got.rank != q || got.idsum != mine.idsum)
                return 22;
        }
        g_free(all);
    }
    return 0;
}

static void test_exchange(void)
{
    int st[5];
    run_ranks(5, gather_ok, st);
    for (int r = 0; r < 5; r++)
        g_assert_cmpint(st[r], ==, 0);
}

/* Rank 2 dies after the id exchange: rank 0's gather names it, and ranks
 * 1 and 3, waiting in the gather, are released with the reason. */
static int gather_rank2_dies(cs_boot_t *b, int rank, const guint8 *id)
{
    (void)id;
    if (rank == 2)
        return 3;
    int x = rank;
    guint8 *all = NULL;
    GError *e = NULL;
    if (cs_boot_gather(b, &x, sizeof x, &all, 10, &e))
        return 30;
    const char *want = rank == 0 ? "collsim: real: rank 0: rank 2 closed its control connection"
                                 : "stopped: rank 2 closed its control connection";
    int code = strstr(e->message, want) != NULL ? 0 : 31;
    if (code != 0)
        fprintf(stderr, "rank %d: unexpected message: %s\n", rank, e->message);
    g_error_free(e);
    return code;
}

static void test_peer_dies(void)
{
    int st[4];
    run_ranks(4, gather_rank2_dies, st);
    g_assert_cmpint(st[0], ==, 0);
    g_assert_cmpint(st[1], ==, 0);
    g_assert_cmpint(st[2], ==, 3);
    g_assert_cmpint(st[3], ==, 0);
}

/* Rank 1 aborts while the others "run a collective" (poll): rank 0 sees the
 * reason and passes it on to rank 2. */
static int abort_relayed(cs_boot_t *b, int rank, const guint8 *id)
{
    (void)id;
    if (rank == 1) {
        cs_boot_abort(b, "rank 1: CUDA error: boom");
        return 4;
    }
    gint64 until = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;
    char *why = NULL;
    while (!cs_boot_peer_failed(b, &why) && g_get_monotonic_time() < until)
        g_usleep(10000);
    int code = why != NULL && strcmp(why, "rank 1: CUDA error: boom") == 0 ? 0 : 40;
    g_free(why);
    return code;
}

static void test_abort_relayed(void)
{
    int st[3];
    run_ranks(3, abort_relayed, st);
    g_assert_cmpint(st[0], ==, 0);
    g_assert_cmpint(st[1], ==, 4);
    g_assert_cmpint(st[2], ==, 0);
}

/* Ranks 1 and 2 finish first and send their results while rank 0 still
 * "measures" (polls for failures): the early results are not a failure
 * and are not lost. */
static int early_results(cs_boot_t *b, int rank, const guint8 *id)
{
    (void)id;
    gint32 mine = 100 + rank;
    guint8 *all = NULL;
    GError *e = NULL;
    if (rank == 0) {
        char *why = NULL;
        for (int i = 0; i < 50; i++) {   /* 0.5 s of polling while the others wait */
            if (cs_boot_peer_failed(b, &why)) {
                fprintf(stderr, "rank 0: unexpected failure: %s\n", why);
                return 60;
            }
            g_usleep(10000);
        }
    }
    if (!cs_boot_gather(b, &mine, sizeof mine, &all, 10, &e)) {
        fprintf(stderr, "rank %d: %s\n", rank, e->message);
        g_error_free(e);
        return 61;
    }
    if (rank == 0) {
        gint32 got[3];
        memcpy(got, all, sizeof got);
        g_free(all);
        if (got[0] != 100 || got[1] != 101 || got[2] != 102)
            return 62;
    }
    return 0;
}

static void test_early_results(void)
{
    int st[3];
    run_ranks(3, early_results, st);
    for (int r = 0; r < 3; r++)
        g_assert_cmpint(st[r], ==, 0);
}

/* A single rank: no sockets at all. */
static void test_single(void)
{
    cs_boot_job_t job = { CS_BOOT_NONE, 0, 1, 0, NULL, 0, -1 };
    guint8 id[ID_LEN];
    fake_id(id);
    g_autoptr(GError) err = NULL;
    cs_boot_t *b = cs_boot_connect(&job, id, ID_LEN, 1, &err);
    g_assert_nonnull(b);
    int x = 42;
    guint8 *all = NULL;
    g_assert_true(cs_boot_gather(b, &x, sizeof x, &all, 1, &err));
    g_assert_cmpint(((int *)(void *)all)[0], ==, 42);
    g_free(all);
    char *why = NULL;
    g_assert_false(cs_boot_peer_failed(b, &why));
    cs_boot_free(b);
}

/* ---- the launcher --------------------------------------------------------------- */

static int launch_sh(const char *script, int n)
{
    char *argv[] = { (char *)"/bin/sh", (char *)"-c", (char *)script, NULL };
    g_autoptr(GError) err = NULL;
    return cs_boot_launch(argv, n, 2, &err);
}

static void test_launcher(void)
{
    /* each rank sees its variables; rank 0 alone has the listening socket */
    g_assert_cmpint(launch_sh("[ \"$COLLSIM_REAL_WORKER\" = 1 ] && [ \"$WORLD_SIZE\" = 3 ] && "
                              "[ \"$LOCAL_RANK\" = \"$RANK\" ] && [ \"$MASTER_ADDR\" = 127.0.0.1 ] && "
                              "[ \"$MASTER_PORT\" -gt 0 ] && "
                              "if [ \"$RANK\" = 0 ]; then [ -n \"$COLLSIM_REAL_LISTEN_FD\" ]; "
                              "else [ -z \"$COLLSIM_REAL_LISTEN_FD\" ]; fi", 3), ==, 0);
    /* a failed rank stops its siblings, which would otherwise sleep 60 s */
    gint64 t0 = g_get_monotonic_time();
    g_assert_cmpint(launch_sh("[ \"$RANK\" = 1 ] && exit 3; exec sleep 60", 4), ==, 1);
    g_assert_cmpint(g_get_monotonic_time() - t0, <, 10 * G_USEC_PER_SEC);
    /* a sibling that ignores SIGTERM is killed after the grace period (2 s) */
    t0 = g_get_monotonic_time();
    g_assert_cmpint(launch_sh("[ \"$RANK\" = 0 ] && exit 2; trap '' TERM; exec sleep 60", 2), ==, 2);
    g_assert_cmpint(g_get_monotonic_time() - t0, <, 10 * G_USEC_PER_SEC);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/real-boot/env-torchrun", test_env_torchrun);
    g_test_add_func("/real-boot/env-mpi", test_env_mpi);
    g_test_add_func("/real-boot/exchange", test_exchange);
    g_test_add_func("/real-boot/peer-dies", test_peer_dies);
    g_test_add_func("/real-boot/abort-relayed", test_abort_relayed);
    g_test_add_func("/real-boot/early-results", test_early_results);
    g_test_add_func("/real-boot/single", test_single);
    g_test_add_func("/real-boot/launcher", test_launcher);
    return g_test_run();
}
