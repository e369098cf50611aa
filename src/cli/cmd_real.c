/* collsim real: measure a scenario with real NCCL on this machine's GPUs
 * (or across nodes under mpirun/torchrun), timed and checked as nccl-tests
 * does, printed as `collsim run` prints a prediction. Takes the same
 * scenario file and flags as `collsim run` (cs_run_args.c). `--verbs`
 * hands over to the RDMA measurement (cs_verbs.h). */
#include "config.h"
#include "cli/cs_commands.h"
#include "cli/cs_cmd_real.h"
#include "io/cs_run_args.h"
#include "real/cs_real.h"
#include "util/cs_error.h"
#include "util/cs_units.h"
#ifdef HAVE_VERBS
#include "real/cs_verbs.h"
#endif

#include <stdio.h>
#include <string.h>

typedef struct {
    double timeout_s;
    char *bootstrap;
    gint64 check_max;
    gboolean verbs;
    int test_fail_rank;
} real_flags_t;

static gboolean on_timeout(const char *option_name, const char *value, gpointer data, GError **err)
{
    real_flags_t *f = data;
    char *end = NULL;
    double v = g_ascii_strtod(value, &end);
    if (end == value || *end != '\0' || !(v > 0) || v > 1e6) {
        cs_set_flag_error(err, option_name, "'%s' is not a timeout; expected seconds, more than 0 and at most 1e6",
                          value);
        return FALSE;
    }
    f->timeout_s = v;
    return TRUE;
}

static gboolean on_check_elements(const char *option_name, const char *value, gpointer data, GError **err)
{
    real_flags_t *f = data;
    gint64 n;
    if (!cs_parse_int(value, 0, G_MAXINT64, &n)) {
        cs_set_flag_error(err, option_name, "'%s' is not an element count; expected a whole number (0 = all)",
                          value);
        return FALSE;
    }
    f->check_max = n;
    return TRUE;
}

static gboolean on_test_bootstrap(const char *option_name, const char *value, gpointer data, GError **err)
{
    real_flags_t *f = data;
    gint64 n;
    if (!cs_parse_int(value, -1, 1 << 20, &n)) {
        cs_set_flag_error(err, option_name, "'%s' is not a rank; expected -1 (none fails) or a rank", value);
        return FALSE;
    }
    f->test_fail_rank = (int)n;
    return TRUE;
}

static const GOptionEntry real_entries[] = {
    { "timeout", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_timeout,
      "Abort a collective that has not finished after SECONDS (plus 1 s per GB moved; default 300)", "SECONDS" },
    { "bootstrap", 0, 0, G_OPTION_ARG_CALLBACK, NULL, NULL, NULL },   /* replaced below */
    { "check-elements", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_check_elements,
      "Check at most N output elements per rank and size, evenly spaced (default 1048576; 0 = all)", "N" },
    { "verbs", 0, 0, G_OPTION_ARG_NONE, NULL,
      "Measure RDMA (verbs) between two hosts instead; see collsim-real(1)", NULL },
    { "_test-bootstrap", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_CALLBACK, (gpointer)on_test_bootstrap,
      "Test hook: exchange a fake id with no GPU; rank R fails (-1: none)", "R" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
};

static const char summary[] =
    "Measures a sweep of sizes of one collective with real NCCL on GPUs, as nccl-tests does\n"
    "(warm-up, -n timed iterations with CUDA events, out-of-place and in-place, data checked),\n"
    "and prints the table, JSON and CSV of `collsim run`, marked as a measurement, with the\n"
    "algorithm, protocol and channels NCCL reported. Takes the scenario and flags of `collsim run`\n"
    "that describe the run; a prediction's own (--model, --svg, --link-stats, ...) are refused.\n"
    "Ranks: one process per GPU of this node (-g N, default all), or started by mpirun or\n"
    "torchrun (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT or --bootstrap).";

static const char description[] =
    "Examples:\n"
    "  collsim real -b 8 -e 1G -f 2\n"
    "  collsim real scenarios/default.ini -g 4 --json measured.json\n"
    "  mpirun -np 16 -N 8 -x MASTER_ADDR=node0 -x MASTER_PORT=29500 collsim real --op allgather -b 1M -e 1G -f 2\n"
    "\nSee collsim-real(1).";

/* The program's own path, so that the launcher starts the same binary. */
static char **relaunch_argv(int argc, char **argv)
{
    g_autofree char *exe = g_file_read_link("/proc/self/exe", NULL);
    GPtrArray *a = g_ptr_array_new();
    g_ptr_array_add(a, g_strdup(exe != NULL ? exe : "collsim"));
    g_ptr_array_add(a, g_strdup("real"));
    for (int i = 1; i < argc; i++)
        g_ptr_array_add(a, g_strdup(argv[i]));
    g_ptr_array_add(a, NULL);
    return (char **)g_ptr_array_free(a, FALSE);
}

static int run_verbs(int argc, char **argv)
{
#ifdef HAVE_VERBS
    char **v = g_new0(char *, argc + 1);
    v[0] = (char *)"collsim real";
    for (int i = 1; i < argc; i++)
        v[i] = argv[i];
    int status = cs_verbs_main(argc, v);
    g_free(v);
    return status;
#else
    (void)argc;
    (void)argv;
    fprintf(stderr, "collsim: real: --verbs: this collsim was built without rdma-core (libibverbs); rebuild on a "
                    "machine with it\n");
    return 2;
#endif
}

/* cs_scenario_validate also wants a topology source, which a measurement
 * does not use: lend it one while checking the rest. */
static gboolean validate(cs_scenario_t *s, GError **err)
{
    if (!cs_run_args_check_measured(s, "real", err))
        return FALSE;
    gboolean lent = s->topo.preset == NULL && s->topo.file == NULL;
    if (lent)
        s->topo.preset = g_strdup("pcie");
    gboolean ok = cs_scenario_validate(s, err);
    if (lent)
        g_clear_pointer(&s->topo.preset, g_free);
    return ok;
}

int cs_cmd_real(int argc, char **argv)
{
    g_set_prgname("collsim real");
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--verbs") == 0)
            return run_verbs(argc, argv);
    g_auto(GStrv) again = relaunch_argv(argc, argv);

    real_flags_t f = { .timeout_s = 300, .check_max = 1 << 20, .test_fail_rank = -2 };
    GOptionEntry entries[G_N_ELEMENTS(real_entries)];
    memcpy(entries, real_entries, sizeof entries);
    GOptionEntry boot = { "bootstrap", 0, 0, G_OPTION_ARG_STRING, &f.bootstrap,
                          "Rank 0's HOST:PORT for the id exchange under mpirun (else MASTER_ADDR/MASTER_PORT)",
                          "HOST:PORT" };
    entries[1] = boot;
    entries[3].arg_data = &f.verbs;
    cs_run_args_cmd_t cmd = {
        .command = "real", .parameter = "[SCENARIO] - measure a collective with NCCL as nccl-tests does",
        .summary = summary, .description = description, .extra = entries, .extra_data = &f, .measures = TRUE,
    };
    cs_run_args_t a;
    cs_run_args_init(&a);
    g_autoptr(GError) err = NULL;
    int status = 2;
    cs_scenario_t s;
    cs_scenario_init(&s);
    if (!cs_run_args_parse(&a, &cmd, argc, argv, &err) || !cs_run_args_build(&a, &s, &err))
        goto out;
    if (a.dump) {
        g_autofree char *ini = cs_scenario_to_ini(&s);
        fputs(ini, stdout);
        status = 0;
        goto out;
    }
    if (!validate(&s, &err))
        goto out;
    if (!cs_real_available() && f.test_fail_rank == -2) {
        fprintf(stderr, "collsim: real: this collsim was built without CUDA and NCCL (configure found none); "
                        "rebuild on a machine with them\n");
        goto out;
    }
    cs_real_opts_t o = {
        .s = &s, .gpus = s.topo.gpus, .timeout_s = f.timeout_s, .bootstrap = f.bootstrap,
        .check_max = (guint64)f.check_max, .argv = again, .test_fail_rank = f.test_fail_rank,
    };
    status = cs_real_main(&o, &err);
out:
    if (err != NULL) {
        int failed = cs_cli_fail(err);
        if (status == 2)
            status = failed;
    }
    cs_scenario_clear(&s);
    cs_run_args_clear(&a);
    g_free(f.bootstrap);
    return status;
}
