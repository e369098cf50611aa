/* collsim doctor [--root DIR] [--env NCCL_X=Y]... [--scenario FILE]
 *                [--markdown] [--topology FILE] [--gpu-model NAME]
 *
 * The NCCL_* variables are assembled in NCCL's order of precedence: the
 * configuration files NCCL reads (/etc/nccl.conf, then NCCL_CONF_FILE or
 * ~/.nccl.conf, whose entries win over /etc's; param.cc initEnv sets them
 * only where the environment has none), the scenario's [nccl] section, the
 * process environment, then --env. Output is built in memory and written at
 * the end; the topology file is written atomically or not at all. */
#include "config.h"
#include "cli/cs_cmd_doctor.h"
#include "cli/cs_commands.h"
#include "io/cs_scenario.h"
#include "io/cs_scenario-int.h"
#include "io/cs_topo_xml.h"
#include "io/cs_output.h"
#include "models/cs_hw.h"
#include "real/cs_doctor.h"
#include "util/cs_error.h"
#include "util/cs_read_file.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    char *root;
    char *scenario;
    char *topology;
    char *gpu_model;
    gboolean markdown;
    gboolean ignore_environment;
    GPtrArray *envs;   /* "NCCL_X=Y" from --env, in order */
} doctor_args_t;

static gboolean on_env(const char *option_name, const char *value, gpointer data, GError **err)
{
    doctor_args_t *a = data;
    if (!cs_scenario_check_env_flag(option_name, value, err))
        return FALSE;
    g_ptr_array_add(a->envs, g_strdup(value));
    return TRUE;
}

/* param.cc setEnvFile: "NAME=VALUE" lines, '#' in column 0 starts a
 * comment, nothing is trimmed (so "NCCL_DEBUG = INFO" sets "NCCL_DEBUG ",
 * which the doctor then reports as an unknown name). Only NCCL_* names
 * matter here. Entries already set stay (setenv without overwrite). */
static void read_conf(cs_nccl_env_t *env, const char *root, const char *path)
{
    g_autofree char *full = root != NULL ? g_build_filename(root, path, NULL) : g_strdup(path);
    g_autofree char *text = NULL;
    gsize len = 0;
    /* bounded, regular files only; an unreadable one is skipped as NCCL does */
    if (!cs_read_file(full, "file", "NCCL configuration file", CS_READ_LIMIT_INI, &text, &len, NULL))
        return;
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (int i = 0; lines[i] != NULL; i++) {
        char *l = lines[i];
        gsize n = strlen(l);
        if (n > 0 && l[n - 1] == '\r')
            l[--n] = '\0';
        char *eq = strchr(l, '=');
        if (l[0] == '#' || eq == NULL)
            continue;
        g_autofree char *name = g_strndup(l, eq - l);
        if (!g_str_has_prefix(name, "NCCL_") || cs_nccl_env_get(env, name) != NULL)
            continue;
        g_autofree char *origin = g_strdup_printf("%s:%d", path, i + 1);
        cs_nccl_env_set(env, name, eq + 1, origin);
    }
}

static void copy_env(cs_nccl_env_t *dst, const cs_nccl_env_t *src)
{
    g_autoptr(GPtrArray) names = cs_nccl_env_names(src);
    for (guint i = 0; i < names->len; i++) {
        const char *n = names->pdata[i];
        cs_nccl_env_set(dst, n, cs_nccl_env_get(src, n), cs_nccl_env_origin(src, n));
    }
}

static void apply_flags(cs_nccl_env_t *env, const cs_nccl_env_t *scenario, const doctor_args_t *a)
{
    if (scenario != NULL)
        copy_env(env, scenario);
    if (!a->ignore_environment)
        cs_nccl_env_import_environ(env);
    for (guint i = 0; i < a->envs->len; i++) {
        const char *kv = a->envs->pdata[i];
        const char *eq = strchr(kv, '=');
        g_autofree char *name = g_strndup(kv, eq - kv);
        cs_nccl_env_set(env, name, eq + 1, "--env");
    }
}

static cs_nccl_env_t *build_env(const doctor_args_t *a, const cs_nccl_env_t *scenario)
{
    /* Which user configuration file NCCL would read depends on the
     * variables themselves, so find NCCL_CONF_FILE first. */
    g_autoptr(cs_nccl_env_t) probe = cs_nccl_env_new();
    apply_flags(probe, scenario, a);
    const char *conf = cs_nccl_env_get(probe, "NCCL_CONF_FILE");
    const char *root = a->root != NULL && strcmp(a->root, "/") != 0 ? a->root : NULL;

    g_autoptr(cs_nccl_env_t) files = cs_nccl_env_new();
    if (conf != NULL && conf[0] != '\0') {
        read_conf(files, root, conf);
    } else if (root == NULL && g_getenv("HOME") != NULL && !a->ignore_environment) {
        g_autofree char *user = g_build_filename(g_getenv("HOME"), ".nccl.conf", NULL);
        read_conf(files, NULL, user);
    }
    read_conf(files, root, "/etc/nccl.conf");

    cs_nccl_env_t *env = cs_nccl_env_new();
    copy_env(env, files);
    apply_flags(env, scenario, a);
    return env;
}

/* The machine as collsim XML: stdout, or a file through cs_output (a
 * regular file replaced atomically, its mode kept; a device or FIFO
 * written in place). */
static int write_topology(const cs_doctor_t *d, const char *path)
{
    GError *err = NULL;
    g_autoptr(cs_topo_t) t = cs_doctor_topology(d, &err);
    if (t == NULL) {
        cs_cli_fail(err);
        g_error_free(err);
        return 1;   /* the machine cannot be exported: not a usage error */
    }
    g_autofree char *xml = cs_topo_xml_write(t);
    gboolean ok = strcmp(path, "-") == 0
                      ? cs_output_stdout(xml, strlen(xml), &err)
                      : cs_output_check(1, &path, (const char *const[]){ "--topology" }, &err) &&
                            cs_output_write_one(path, xml, -1, &err);
    if (ok)
        return 0;
    int rc = cs_cli_fail(err);
    g_error_free(err);
    return rc;
}

int cs_cmd_doctor(int argc, char **argv)
{
    g_set_prgname("collsim doctor");   /* "Usage: collsim doctor [OPTION...]" */
    doctor_args_t a = { 0 };
    a.envs = g_ptr_array_new_with_free_func(g_free);
    int rc = 2;
    GOptionEntry entries[] = {
        { "root", 0, 0, G_OPTION_ARG_FILENAME, &a.root,
          "Read sysfs and procfs under DIR instead of / (a tree captured from another machine)", "DIR" },
        { "env", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_env,
          "Set an NCCL variable (repeatable; wins over the environment and [nccl])", "NCCL_X=VALUE" },
        { "scenario", 0, 0, G_OPTION_ARG_FILENAME, &a.scenario,
          "Take NCCL variables from the scenario's [nccl] section", "FILE" },
        { "ignore-environment", 0, 0, G_OPTION_ARG_NONE, &a.ignore_environment,
          "Do not read NCCL_* variables from the environment or ~/.nccl.conf", NULL },
        { "markdown", 0, 0, G_OPTION_ARG_NONE, &a.markdown, "Write the report as a Markdown section", NULL },
        { "topology", 0, 0, G_OPTION_ARG_FILENAME, &a.topology,
          "Write the machine as collsim topology XML to FILE ('-' = stdout, the report then goes to stderr)",
          "FILE" },
        { "gpu-model", 0, 0, G_OPTION_ARG_STRING, &a.gpu_model,
          "Catalogue model to assume for GPUs whose PCI id collsim does not know", "NAME" },
        { NULL, 0, 0, 0, NULL, NULL, NULL }
    };
    g_autoptr(GOptionContext) ctx = g_option_context_new(NULL);
    g_option_context_set_summary(ctx,
        "Inspects this machine (or a captured sysfs/procfs tree) and the NCCL_* settings: RDMA ports\n"
        "and GIDs, interfaces, GPUs and their PCIe distance to the NICs, GPUDirect RDMA. Says which\n"
        "transport NCCL will use, at what speed, and what will hurt. Exit status: 0 no errors,\n"
        "1 error-level findings, 2 bad input.");
    GOptionGroup *main_group = g_option_group_new(NULL, NULL, NULL, &a, NULL);
    g_option_group_add_entries(main_group, entries);
    g_option_context_set_main_group(ctx, main_group);
    g_auto(GStrv) args = g_new0(char *, argc + 2);
    args[0] = g_strdup("collsim doctor");
    for (int i = 1; i < argc; i++)
        args[i] = g_strdup(argv[i]);
    GError *err = NULL;
    cs_scenario_t s;
    gboolean have_scenario = FALSE;
    g_autoptr(cs_nccl_env_t) env = NULL;
    g_autoptr(cs_doctor_t) d = NULL;
    g_autofree char *report = NULL;

    if (!g_option_context_parse_strv(ctx, &args, &err)) {
        if (err->domain == G_OPTION_ERROR) {
            fprintf(stderr, "collsim: doctor: %s; expected the options of 'collsim doctor --help'\n", err->message);
            g_clear_error(&err);
        } else {
            cs_cli_fail(err);
            g_clear_error(&err);
        }
        goto out;
    }
    if (args[1] != NULL) {
        fprintf(stderr, "collsim: doctor: unexpected argument '%s'; expected only options\n", args[1]);
        goto out;
    }
    /* usage errors before anything runs: a model the catalogue lacks, an
     * output file that cannot be written */
    if (a.gpu_model != NULL && cs_gpu_model_find(a.gpu_model) == NULL) {
        fprintf(stderr, "collsim: --gpu-model: '%s' is not a catalogue model; expected one of %s\n", a.gpu_model,
                cs_gpu_model_names());
        goto out;
    }
    if (a.topology != NULL && strcmp(a.topology, "-") != 0 &&
        !cs_output_check(1, (const char *const *)&a.topology, (const char *const[]){ "--topology" }, &err)) {
        rc = cs_cli_fail(err);
        g_clear_error(&err);
        goto out;
    }
    if (a.root != NULL && !g_file_test(a.root, G_FILE_TEST_IS_DIR)) {
        fprintf(stderr, "collsim: --root: '%s' is not a directory; expected the root of a captured "
                        "sysfs/procfs tree\n", a.root);
        goto out;
    }
    if (a.scenario != NULL) {
        cs_scenario_init(&s);
        have_scenario = TRUE;
        if (!cs_scenario_load(&s, a.scenario, &err)) {
            cs_cli_fail(err);
            g_clear_error(&err);
            goto out;
        }
    }
    env = build_env(&a, have_scenario ? s.env : NULL);

    d = cs_doctor_new(a.root != NULL ? a.root : "/");
    if (!cs_doctor_scan(d, &err)) {
        cs_cli_fail(err);
        g_clear_error(&err);
        goto out;
    }
    cs_doctor_check(d, env, a.gpu_model);
    report = a.markdown ? cs_doctor_report_markdown(d) : cs_doctor_report_text(d);
    /* The values read were made one printable line each (doctor_fs.c);
     * no control byte reaches a terminal whatever a rule prints. */
    for (char *p = report; *p; p++)
        if (((unsigned char)*p < 0x20 && *p != '\n') || *p == 0x7f)
            *p = '?';
    gboolean topo_stdout = a.topology != NULL && strcmp(a.topology, "-") == 0;
    if (topo_stdout) {
        fputs(report, stderr);
    } else if (!cs_output_stdout(report, strlen(report), &err)) {
        rc = cs_cli_fail(err);
        g_clear_error(&err);
        goto out;
    }
    rc = cs_doctor_count(d, CS_DOCTOR_ERROR) > 0 ? 1 : 0;
    if (a.topology != NULL) {
        int trc = write_topology(d, a.topology);
        if (trc != 0)
            rc = trc;
    }

out:
    if (have_scenario)
        cs_scenario_clear(&s);
    g_free(a.root);
    g_free(a.scenario);
    g_free(a.topology);
    g_free(a.gpu_model);
    g_ptr_array_unref(a.envs);
    return rc;
}
