/* collsim <command> [options]: dispatches to one subcommand, each with its
 * own options. Only LC_CTYPE follows the user's locale (so GLib's help text
 * may use UTF-8); numbers stay in the C locale, the same on every machine,
 * as output must be byte-identical across runs. */
#include "config.h"
#include "cli/cs_commands.h"
#include "cli/cs_cmd_doctor.h"
#include "cli/cs_cmd_real.h"
#include "cli/cs_cmd_calibrate.h"
#include "cli/cs_progress.h"
#include "io/cs_output.h"
#include "sim/cs_engine.h"
#include "util/cs_error.h"

#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command_t;

static const command_t commands[] = {
    { "run", cs_cmd_run, "Predict a collective over a topology and print it as nccl-tests does" },
    { "topo", cs_cmd_topo, "Check, show or draw a topology (a preset or a file)" },
    { "validate", cs_cmd_validate, "Compare a prediction with an nccl-tests log" },
    { "step", cs_cmd_step, "One training step or inference token of a parallel job: collectives, overlap, step time" },
    { "compare", cs_cmd_compare, "Compare designs side by side: bus bandwidth per size, the winner and why" },
    { "sweep", cs_cmd_sweep, "Price a grid over scenario keys into one CSV or JSON (local cores or MPI ranks)" },
    { "real", cs_cmd_real, "Measure a collective with real NCCL on GPUs, as nccl-tests does" },
    { "doctor", cs_cmd_doctor, "Inspect this machine and its NCCL_* settings: what NCCL will use, what will hurt" },
    { "calibrate", cs_cmd_calibrate, "Fit the model's latency and bandwidth parameters to measured results" },
};

/* Whether a message starts with the input file it is about: "PATH:LINE: "
 * or "PATH: ", PATH one word holding a '/' or a '.', or ending in
 * ":LINE" (the standard's "file:line: what is wrong"). */
static gboolean starts_with_location(const char *msg)
{
    const char *end = strstr(msg, ": ");
    if (end == NULL || end == msg)
        return FALSE;
    gboolean dotted = FALSE;
    for (const char *p = msg; p < end; p++) {
        if (g_ascii_isspace(*p))
            return FALSE;
        dotted = dotted || *p == '/' || *p == '.';
    }
    const char *colon = end - 1;
    while (colon > msg && g_ascii_isdigit(*colon))
        colon--;
    return dotted || (*colon == ':' && colon < end - 1);
}

/* The one line of an error; its exit status: 2, or 3 for a failed write
 * (cs_error_exit_status). The rule: a message about an
 * input file keeps its location first ("s.ini:3: minbytes: ...",
 * "run.log: cannot read ..."), so editors and the standard's format find
 * it; every other message starts with "collsim: " (flags: "collsim:
 * --nodes: ...", and messages from the models, e.g. about NCCL settings). */
int cs_cli_report(int status, GError *err)
{
    if (status == CS_EXIT_INPUT || status == CS_EXIT_RESOURCE || (status == CS_EXIT_FINDINGS && err != NULL))
        cs_cli_fail(err);   /* 1 with an error: the simulated collective failed (CS_ERROR_SIM_FAILED) */
    else if (cs_engine_interrupted() && status == cs_progress_exit_status())
        fputs(cs_progress_stop_message(), stderr);
    return status;
}

int cs_cli_scenario_command(const cs_run_args_cmd_t *cmd, const char *verbose_doc, cs_cli_body_t body, int argc,
                            char **argv)
{
    cs_run_args_t a;
    cs_run_args_init(&a);
    gboolean verbose = FALSE;
    const GOptionEntry own[] = {
        { "verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose, verbose_doc, NULL },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    cs_run_args_cmd_t c = *cmd;
    c.main_extra = own;
    g_autoptr(GError) err = NULL;
    int status;
    if (!cs_run_args_parse(&a, &c, argc, argv, &err)) {
        status = cs_cli_fail(err);
    } else {
        cs_scenario_t s;
        cs_scenario_init(&s);
        status = body(&a, verbose, &s, &err);
        cs_cli_report(status, err);
        cs_scenario_clear(&s);
    }
    cs_run_args_clear(&a);
    return status;
}

int cs_cli_fail(GError *err)
{
    g_autofree char *msg = g_strdup(err != NULL ? err->message : "collsim: failed (no reason given)");
    /* one line, whatever the message holds */
    for (char *p = msg; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    if (g_str_has_prefix(msg, "collsim: ") || g_str_has_prefix(msg, "collsim ") || starts_with_location(msg))
        fprintf(stderr, "%s\n", msg);
    else
        fprintf(stderr, "collsim: %s\n", msg);
    return cs_error_exit_status(err);
}

/* Every command's output on stdout must have arrived (a full disk, a
 * closed pipe): one line and exit status 3 if not. A command that already
 * failed said why (its own line) and keeps its status. */
static int finish_stdout(int status)
{
    if (status != CS_EXIT_OK && status != CS_EXIT_FINDINGS)
        return status;
    g_autoptr(GError) err = NULL;
    if (cs_output_stdout_flush(&err)) {
        /* close reports what only the end of a write shows (NFS) */
        if (fclose(stdout) == 0)
            return status;
        g_set_error(&err, CS_ERROR, CS_ERROR_RESOURCE, "collsim: standard output: %s", g_strerror(errno));
    }
    fprintf(stderr, "%s\n", err->message);
    return CS_EXIT_RESOURCE;
}

static char *command_names(void)
{
    GString *g = g_string_new(NULL);
    for (guint i = 0; i < G_N_ELEMENTS(commands); i++)
        g_string_append_printf(g, "%s%s", i == 0 ? "" : ", ", commands[i].name);
    return g_string_free(g, FALSE);
}

static void usage(FILE *f)
{
    fprintf(f, "Usage: collsim <command> [options]\n\n"
               "Predicts how fast NCCL collectives run on a GPU cluster; every number says which\n"
               "model or measurement made it.\n\nCommands:\n");
    for (guint i = 0; i < G_N_ELEMENTS(commands); i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nOptions:\n"
               "  -h, --help     Show this help ('collsim <command> --help' for a command's options)\n"
               "  -V, --version  Show the version\n\n"
               "See collsim(1) and collsim-scenario(5).\n");
}

static const command_t *find_command(const char *name)
{
    for (guint i = 0; i < G_N_ELEMENTS(commands); i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

int main(int argc, char **argv)
{
    setlocale(LC_CTYPE, "");
    g_set_prgname("collsim");
    g_autofree char *names = command_names();
    if (argc < 2) {
        fprintf(stderr, "collsim: no command given; expected one of %s (collsim --help lists them)\n", names);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || (strcmp(cmd, "help") == 0 && argc == 2)) {
        usage(stdout);
        return finish_stdout(0);
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        printf("collsim %s\n", PACKAGE_VERSION);
        return finish_stdout(0);
    }
    if (strcmp(cmd, "help") == 0) {
        /* collsim help run == collsim run --help */
        const command_t *c = find_command(argv[2]);
        if (c == NULL) {
            fprintf(stderr, "collsim: help: unknown command '%s'; expected one of %s\n", argv[2], names);
            return 2;
        }
        char *args[] = { (char *)c->name, (char *)"--help", NULL };
        return finish_stdout(c->run(2, args));
    }
    if (cmd[0] == '-') {
        fprintf(stderr, "collsim: unknown option '%s'; expected a command first (%s), --help or --version\n",
                cmd, names);
        return 2;
    }
    const command_t *c = find_command(cmd);
    if (c == NULL) {
        fprintf(stderr, "collsim: unknown command '%s'; expected one of %s\n", cmd, names);
        return 2;
    }
    return finish_stdout(c->run(argc - 1, argv + 1));
}
