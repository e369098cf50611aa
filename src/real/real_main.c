/* `collsim real` orchestration, with no CUDA: who we are (launcher or a
 * rank), the NCCL_* variables each rank gets, the id exchange, gathering
 * every rank's measurements to rank 0, and rank 0 printing them through
 * the writers of `collsim run`. The GPU work is nccl_runner.c's. */
#include "config.h"
#include "real/cs_real.h"
#include "real/real_int.h"
#include "io/cs_run_args.h"
#include "io/cs_writers.h"
#include "models/cs_result.h"
#include "util/cs_error.h"
#include "util/cs_read_file.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define ID_BYTES 128
#define ENV_LOGDIR "COLLSIM_REAL_LOGDIR"   /* set by our launcher for its ranks */   /* NCCL_UNIQUE_ID_BYTES (nccl.h, v2.28.9) */

gboolean cs_real_available(void)
{
#ifdef HAVE_REAL_NCCL
    return TRUE;
#else
    return FALSE;
#endif
}

#ifdef HAVE_REAL_NCCL
/* ---- the environment of a rank ------------------------------------------- */

/* NCCL reads its variables when it initializes, so they are set in this
 * process before any NCCL call. When the user did not ask for NCCL's own
 * logging, we ask for its TUNING lines in a file of our own, to report the
 * algorithm and protocol NCCL chose; returns that file's path (or NULL). */
static char *apply_env(const cs_scenario_t *s, int rank, char **dir_p)
{
    g_autoptr(GPtrArray) names = cs_nccl_env_names(s->env);
    for (guint i = 0; i < names->len; i++) {
        const char *n = g_ptr_array_index(names, i);
        g_setenv(n, cs_nccl_env_get(s->env, n), TRUE);
    }
    *dir_p = NULL;
    if (cs_nccl_env_get(s->env, "NCCL_DEBUG") != NULL || cs_nccl_env_get(s->env, "NCCL_DEBUG_FILE") != NULL)
        return NULL;
    /* our launcher's directory (it removes it, whatever became of the
     * ranks), else one of our own */
    const char *shared = g_getenv(ENV_LOGDIR);
    g_autoptr(GError) e = NULL;
    char *dir = shared != NULL ? NULL : g_dir_make_tmp("collsim-real-XXXXXX", &e);
    if (shared == NULL && dir == NULL)
        return NULL;
    char *path = g_strdup_printf("%s/nccl-rank%d.log", shared != NULL ? shared : dir, rank);
    g_setenv("NCCL_DEBUG", "INFO", TRUE);
    g_setenv("NCCL_DEBUG_SUBSYS", "TUNING", TRUE);
    g_setenv("NCCL_DEBUG_FILE", path, TRUE);
    *dir_p = dir;
    return path;
}

/* After a failure: NCCL's warnings went to our file; show them. */
static void show_nccl_warnings(const char *log, int rank)
{
    g_autofree char *text = NULL;
    gsize len = 0;
    if (log == NULL || !cs_read_file(log, "file", "NCCL debug log", CS_READ_LIMIT_LOG, &text, &len, NULL))
        return;
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (int i = 0; lines[i] != NULL; i++)
        if (strstr(lines[i], "NCCL WARN") != NULL)
            fprintf(stderr, "collsim: real: rank %d: %s\n", rank, lines[i]);
}

static void remove_log(const char *log, const char *dir)
{
    if (log != NULL)
        g_unlink(log);
    if (dir != NULL)
        g_rmdir(dir);
}

#endif

/* ---- rank 0: the result ------------------------------------------------------- */

cs_result_t *cs_real_build_result(const cs_scenario_t *s, int nranks, int nsizes, const guint64 *sizes,
                                  const guint8 *all, size_t per_rank, int *nnodes_p, int *ppn_p)
{
    const cs_real_dev_t *dev0 = (const cs_real_dev_t *)(const void *)all;
    /* nodes: distinct host names; ppn: ranks on rank 0's host */
    g_autoptr(GHashTable) hosts = g_hash_table_new(g_str_hash, g_str_equal);
    int ppn = 0;
    for (int q = 0; q < nranks; q++) {
        const cs_real_dev_t *d = (const cs_real_dev_t *)(const void *)(all + per_rank * q);
        g_hash_table_add(hosts, (gpointer)d->host);
        ppn += strcmp(d->host, dev0->host) == 0;
    }
    int nnodes = (int)g_hash_table_size(hosts);
    cs_result_t *r = cs_result_new("measured:collsim-real", s->name != NULL ? s->name : s->path, s->coll, nranks,
                                   nnodes);
    for (int i = 0; i < nsizes; i++) {
        cs_result_row_t row;
        memset(&row, 0, sizeof row);
        row.count = cs_coll_count(s->coll, sizes[i], s->dtype, nranks);
        row.size = cs_coll_print_size(s->coll, row.count, s->dtype, nranks);
        row.dtype = s->dtype;
        row.redop = s->redop;
        row.root = cs_coll_has_root(s->coll) ? s->root : -1;
        row.nccl_est_us = -1;
        for (int p = 0; p < 2; p++) {
            /* nccl-tests -a 1 (its default): the mean of the ranks' times */
            double sum = 0;
            gint64 wrong = 0;
            gboolean all_ran = TRUE;
            for (int q = 0; q < nranks; q++) {
                cs_real_cell_t c;
                memcpy(&c, all + per_rank * q + sizeof(cs_real_dev_t) + sizeof c * i, sizeof c);
                all_ran = all_ran && c.time_us[p] >= 0;
                sum += c.time_us[p];
                wrong = c.wrong[p] < 0 || wrong < 0 ? -1 : wrong + c.wrong[p];
            }
            row.time_us[p] = all_ran ? sum / nranks : -1;
            row.wrong[p] = (long)wrong;
        }
        cs_real_cell_t c0;
        memcpy(&c0, all + sizeof(cs_real_dev_t) + sizeof c0 * i, sizeof c0);
        g_strlcpy(row.algo, c0.algo, sizeof row.algo);
        g_strlcpy(row.proto, c0.proto, sizeof row.proto);
        row.nchannels = c0.nchannels;
        cs_result_row_fill_bw(r, &row);
        g_array_append_val(r->rows, row);
    }
    cs_result_finish(r);
    *nnodes_p = nnodes;
    *ppn_p = ppn;
    return r;
}

#ifdef HAVE_REAL_NCCL
static int print_result(const cs_real_opts_t *o, const guint64 *sizes, int nsizes, int nranks, const guint8 *all,
                        size_t per_rank, gboolean tuning, GError **err)
{
    const cs_scenario_t *s = o->s;
    int nnodes, ppn;
    g_autoptr(cs_result_t) r = cs_real_build_result(s, nranks, nsizes, sizes, all, per_rank, &nnodes, &ppn);
    const cs_real_dev_t *d0 = (const cs_real_dev_t *)(const void *)all;
    cs_result_add_note(r, "measured with NCCL %d.%d.%d, CUDA runtime %d.%d, driver API %d.%d",
                       d0->nccl_version / 10000, d0->nccl_version / 100 % 100, d0->nccl_version % 100,
                       d0->cuda_runtime / 1000, d0->cuda_runtime % 1000 / 10, d0->cuda_driver / 1000,
                       d0->cuda_driver % 1000 / 10);
    cs_result_add_note(r, "time: CUDA-event time per iteration (%d iterations x %d aggregated, after %d warm-up), "
                       "mean over the %d ranks, as nccl-tests -a 1", s->iters, s->agg_iters, s->warmup, nranks);
    gboolean p2p = cs_coll_is_p2p(s->coll);
    const char *p2p_wrong = p2p ? "; in-place results are not checked for point-to-point operations (as nccl-tests: "
                                  "#wrong N/A)" : "";
    if (s->check) {
        if (o->check_max > 0)
            cs_result_add_note(r, "#wrong: wrong elements summed over ranks, from one extra checked run per size; "
                               "at most %" G_GUINT64_FORMAT " elements checked per rank (evenly spaced)%s",
                               o->check_max, p2p_wrong);
        else
            cs_result_add_note(r, "#wrong: wrong elements summed over ranks, from one extra checked run per size%s",
                               p2p_wrong);
    }
    cs_result_add_note(r, "%s", p2p ? "algo, proto, nch: NCCL reports none for point-to-point operations (its TUNING "
                                      "line, enqueue.cc, is printed for collectives only)"
                              : tuning ? "algo, proto, nch: as NCCL reported them in its INFO TUNING lines (rank 0); "
                                         "- where it reported none"
                              : "algo, proto, nch: not known (NCCL_DEBUG is the user's; NCCL's log was not read)");
    if (s->topo.preset != NULL || s->topo.file != NULL)
        cs_result_add_note(r, "the scenario's topology is not used: this is a measurement of this machine");
    cs_result_add_note(r, "Using devices");
    int shown = nranks <= 64 ? nranks : 8;
    for (int q = 0; q < shown; q++) {
        const cs_real_dev_t *d = (const cs_real_dev_t *)(const void *)(all + per_rank * q);
        cs_result_add_note(r, " Rank %2d Group %2d Pid %6d on %10s device %2d [%s] %s", q, 0, d->pid, d->host, d->dev,
                           d->busid, d->name);
    }
    if (shown < nranks)
        cs_result_add_note(r, "... %d more ranks", nranks - shown);

    if (s->json_out != NULL && !cs_write_json_file(s->json_out, r, err))
        return 2;
    if (s->csv_out != NULL && !cs_write_csv_file(s->csv_out, r, err))
        return 2;
    g_autofree char *command = cs_run_args_nccl_tests_command(s, nnodes, nranks, ppn);
    g_autofree char *desc = g_strdup_printf("measured on %d GPU(s), %d node(s): %s", nranks, nnodes, d0->name);
    cs_table_opts_t t = {
        .command = command, .topo_desc = desc, .nthreads = 1, .ngpus = 1,   /* one process per GPU */
        .iters = s->iters, .warmup = s->warmup, .agg_iters = s->agg_iters, .check = s->check,
        .minbytes = s->minbytes, .maxbytes = s->maxbytes, .stepbytes = s->stepbytes,
        .stepfactor = s->stepfactor, .extra_columns = s->extra_columns, .topo = NULL,
    };
    cs_write_table(stdout, r, &t);
    if (fflush(stdout) != 0) {
        fprintf(stderr, "collsim: cannot write the table to standard output\n");
        return 1;
    }
    /* as nccl-tests, whose exit status is non-zero when data was wrong */
    long wrong = 0;
    for (guint i = 0; i < r->rows->len; i++)
        for (int p = 0; p < 2; p++)
            wrong += MAX(g_array_index(r->rows, cs_result_row_t, i).wrong[p], 0);
    if (wrong > 0) {
        fprintf(stderr, "collsim: real: the data check failed: %ld wrong element(s) (see the #wrong columns)\n", wrong);
        return 1;
    }
    return 0;
}
#endif

/* ---- one rank ------------------------------------------------------------------ */

static void fill_dev_basic(cs_real_dev_t *d)
{
    memset(d, 0, sizeof *d);
    if (gethostname(d->host, sizeof d->host - 1) != 0)
        g_strlcpy(d->host, "unknown", sizeof d->host);
    d->pid = (gint32)getpid();
}

static void fake_id(guint8 *id)
{
    for (int i = 0; i < ID_BYTES; i++)
        id[i] = (guint8)(i * 37 + 11);
}

/* The test hook: the launcher, the id exchange and failure propagation
 * with no GPU (a fixed 128-byte id; rank 'fail' exits 3 after the exchange
 * while the others wait as in a collective). Prints no measurement. */
static int run_test_rank(const cs_real_opts_t *o, const cs_boot_job_t *job)
{
    guint8 id[ID_BYTES] = { 0 }, want[ID_BYTES];
    fake_id(want);
    if (job->rank == 0)
        memcpy(id, want, ID_BYTES);
    g_autoptr(GError) e = NULL;
    cs_boot_t *b = cs_boot_connect(job, id, ID_BYTES, o->timeout_s, &e);
    if (b == NULL) {
        fprintf(stderr, "%s\n", e->message);
        return 1;
    }
    int status = 0;
    if (memcmp(id, want, ID_BYTES) != 0) {
        fprintf(stderr, "collsim: real: rank %d: the id from rank 0 differs from the one sent\n", job->rank);
        status = 1;
    } else if (job->rank == o->test_fail_rank) {
        fprintf(stderr, "collsim: real: rank %d: failing on purpose (--_test-bootstrap, a test hook)\n", job->rank);
        status = 3;
    } else if (o->test_fail_rank >= 0) {
        /* as a rank waiting on a collective that will never finish */
        gint64 until = g_get_monotonic_time() + (gint64)(o->timeout_s * G_USEC_PER_SEC);
        char *why = NULL;
        while (!cs_boot_peer_failed(b, &why) && g_get_monotonic_time() < until)
            g_usleep(10000);
        if (why != NULL)
            fprintf(stderr, "collsim: real: rank %d: stopping: %s\n", job->rank, why);
        else
            fprintf(stderr, "collsim: real: rank %d: timed out after %.0f s\n", job->rank, o->timeout_s);
        status = why != NULL && job->kind == CS_BOOT_LAUNCHER ? CS_BOOT_EXIT_SIBLING : 1;
        g_free(why);
    } else {
        cs_real_dev_t d;
        fill_dev_basic(&d);
        guint8 *all = NULL;
        if (!cs_boot_gather(b, &d, sizeof d, &all, o->timeout_s, &e)) {
            fprintf(stderr, "%s\n", e->message);
            status = 1;
        } else if (job->rank == 0) {
            printf("collsim real: test bootstrap: %d rank(s) connected and got the same id\n", job->nranks);
            g_free(all);
        }
    }
    cs_boot_free(b);
    return status;
}

#ifdef HAVE_REAL_NCCL
static int run_rank(const cs_real_opts_t *o, const cs_boot_job_t *job, GError **err)
{
    int nsizes = 0;
    g_autofree guint64 *sizes = cs_scenario_sizes(o->s, &nsizes);
    g_autofree char *dir = NULL;
    g_autofree char *log = apply_env(o->s, job->rank, &dir);
    guint8 id[ID_BYTES] = { 0 };
    g_autoptr(GError) e = NULL;
    int status = 1;
    cs_boot_t *b = NULL;
    cs_real_cell_t *cells = g_new0(cs_real_cell_t, MAX(nsizes, 1));
    size_t per_rank = sizeof(cs_real_dev_t) + sizeof(cs_real_cell_t) * (size_t)nsizes;
    guint8 *mine = g_malloc0(per_rank), *all = NULL;
    cs_real_dev_t dev;
    fill_dev_basic(&dev);

    /* a node without a usable GPU: one line for it (its first rank's), not
     * one per rank */
    g_autoptr(GError) nogpu = NULL;
    if (cs_real_nccl_device_count(&nogpu) <= 0) {
        const char *what = g_str_has_prefix(nogpu->message, "collsim: real: ")
                               ? nogpu->message + strlen("collsim: real: ") : nogpu->message;
        if (job->local_rank == 0)
            fprintf(stderr, "collsim: real: %s, rank %d and this node's other ranks: %s\n", g_get_host_name(),
                    job->rank, what);
        goto out;
    }
    if (job->rank == 0 && !cs_real_nccl_unique_id(id, sizeof id, &e))
        goto out;
    b = cs_boot_connect(job, id, sizeof id, o->timeout_s, &e);
    if (b == NULL)
        goto out;
    cs_real_rank_t rk = {
        .s = o->s, .job = job, .sizes = sizes, .nsizes = nsizes, .timeout_s = o->timeout_s,
        .check_max = o->check_max, .tuning_log = job->rank == 0 ? log : NULL,
    };
    if (!cs_real_nccl_measure(&rk, b, id, &dev, cells, &e))
        goto out;
    memcpy(mine, &dev, sizeof dev);
    memcpy(mine + sizeof dev, cells, sizeof(cs_real_cell_t) * (size_t)nsizes);
    /* no timeout that matters: the others either send or fail, and a
     * failed rank's connection closes */
    if (!cs_boot_gather(b, mine, per_rank, &all, 1e7, &e))
        goto out;
    status = job->rank == 0 ? print_result(o, sizes, nsizes, job->nranks, all, per_rank, log != NULL, err) : 0;
out:
    if (e != NULL) {
        fprintf(stderr, "%s\n", e->message);
        show_nccl_warnings(log, job->rank);
        if (e->code == CS_ERROR_STOPPED && job->kind == CS_BOOT_LAUNCHER)
            status = CS_BOOT_EXIT_SIBLING;
    }
    cs_boot_free(b);
    g_free(all);
    g_free(mine);
    g_free(cells);
    remove_log(log, dir);
    return status;
}
#endif

/* The launcher, with a directory for the ranks' NCCL logs that it removes
 * even when ranks were killed. */
static int launch(const cs_real_opts_t *o, int n, GError **err)
{
    g_autofree char *dir = g_dir_make_tmp("collsim-real-XXXXXX", NULL);
    if (dir != NULL)
        g_setenv(ENV_LOGDIR, dir, TRUE);
    int status = cs_boot_launch(o->argv, n, 5.0, err);
    if (dir != NULL) {
        g_unsetenv(ENV_LOGDIR);
        GDir *d = g_dir_open(dir, 0, NULL);
        const char *name;
        while (d != NULL && (name = g_dir_read_name(d)) != NULL) {
            g_autofree char *p = g_build_filename(dir, name, NULL);
            g_unlink(p);
        }
        if (d != NULL)
            g_dir_close(d);
        g_rmdir(dir);
    }
    return status;
}

static gboolean root_ok(const cs_scenario_t *s, int nranks, GError **err)
{
    if (!cs_coll_has_root(s->coll) || s->root < nranks)
        return TRUE;
    g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: root %d is not a rank; expected 0 to %d",
                cs_run_args_origin(s, "collective.root", "collsim: -r"), s->root, nranks - 1);
    return FALSE;
}

int cs_real_main(const cs_real_opts_t *o, GError **err)
{
    cs_boot_job_t job;
    g_auto(GStrv) env = g_get_environ();
    if (!cs_boot_job_from_env(env, o->bootstrap, &job, err))
        return 2;
    int status;
    if (job.kind == CS_BOOT_NONE) {
        int n = o->gpus;
        if (n <= 0 && o->test_fail_rank != -2) {
            cs_set_flag_error(err, "--_test-bootstrap", "needs the rank count; expected --gpus N as well");
            return 2;
        }
#ifdef HAVE_REAL_NCCL
        if (n <= 0 || o->test_fail_rank == -2) {
            /* (CUDA starts in this process: the ranks are new programs,
             * exec'd); with -g N too, so that a machine without a GPU says
             * so once, not once per rank */
            int count = cs_real_nccl_device_count(err);
            if (count <= 0)
                return 1;
            if (n <= 0)
                n = count;
        }
#endif
        if (!root_ok(o->s, n, err)) {
            status = 2;
        } else if (n == 1) {
            job.nranks = 1;
            status = o->test_fail_rank != -2 ? run_test_rank(o, &job)
#ifdef HAVE_REAL_NCCL
                   : run_rank(o, &job, err);
#else
                   : 1;
#endif
        } else {
            status = launch(o, n, err);
            if (err != NULL && *err != NULL) {
                fprintf(stderr, "%s\n", (*err)->message);
                g_clear_error(err);
            }
        }
    } else if (!root_ok(o->s, job.nranks, err)) {
        status = 2;
    } else if (o->test_fail_rank != -2) {
        status = run_test_rank(o, &job);
    } else {
#ifdef HAVE_REAL_NCCL
        status = run_rank(o, &job, err);
#else
        status = 1;
#endif
    }
    cs_boot_job_clear(&job);
    return status;
}
