/* collsim calibrate RESULTS... -o FILE: fits the model's parameters to
 * measured results (nccl-tests logs, collsim real JSON), each with the
 * hardware it ran on, and writes a calibration file ([params]) that
 * `collsim run|validate --calibration FILE` read.
 *
 * The command line is a list of groups, "RESULT [its options]": the
 * options after a result (--topo and the topology flags, --env, --scenario,
 * --table, --op) are that result's; those before the first result are the
 * defaults of every result. --manifest FILE adds the configurations of a
 * validation manifest (validation/manifest.ini's format). Every input is
 * read and checked before the fit; the file is written atomically at the
 * end, or not at all. */
#include "config.h"
#include "cli/cs_cmd_calibrate.h"
#include "cli/cs_commands.h"
#include "cli/cs_predict.h"
#include "cli/cs_progress.h"
#include "io/cs_calibrate.h"
#include "io/cs_nccltests_log.h"
#include "io/cs_result_json.h"
#include "io/cs_scenario.h"
#include "io/cs_scenario-int.h"
#include "io/cs_writers.h"
#include "util/cs_error.h"
#include "util/cs_units.h"
#include "util/cs_read_file.h"
#include "io/cs_output.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    char *output, *manifest, *data, *model, *start;
} global_t;

/* One group: a result file and how it was measured. */
typedef struct {
    char *path;
    char *scenario;
    char *op;
    int table;               /* 0 = every table */
    int procs, threads;      /* --procs-per-node, -t (0: the scenario's, or the log's) */
    char *nccl_version, *nccl_version_max;   /* as validate's flags */
    GPtrArray *envs;         /* "NCCL_X=Y" */
    cs_topo_spec_t topo;
    GString *how;            /* the group's options as typed, for the header */
} group_t;

static void group_init(group_t *g)
{
    memset(g, 0, sizeof *g);
    g->envs = g_ptr_array_new_with_free_func(g_free);
    cs_topo_spec_init(&g->topo);
    g->how = g_string_new(NULL);
}

static void group_clear(group_t *g)
{
    g_free(g->path);
    g_free(g->scenario);
    g_free(g->op);
    g_free(g->nccl_version);
    g_free(g->nccl_version_max);
    g_ptr_array_unref(g->envs);
    cs_topo_spec_clear(&g->topo);
    g_string_free(g->how, TRUE);
}

/* ---- options ---------------------------------------------------------------- */

typedef struct {
    global_t *gl;
    group_t *g;
} parse_ctx_t;

static gboolean set_str(char **dst, const char *v)
{
    g_free(*dst);
    *dst = g_strdup(v);
    return TRUE;
}

static gboolean on_global(const char *option_name, const char *value, gpointer data, GError **err)
{
    global_t *gl = ((parse_ctx_t *)data)->gl;
    (void)err;
    if (strcmp(option_name, "-o") == 0 || strcmp(option_name, "--output") == 0)
        return set_str(&gl->output, value);
    if (strcmp(option_name, "--manifest") == 0)
        return set_str(&gl->manifest, value);
    if (strcmp(option_name, "--data") == 0)
        return set_str(&gl->data, value);
    if (strcmp(option_name, "--model") == 0)
        return set_str(&gl->model, value);
    return set_str(&gl->start, value);   /* --calibration */
}

static gboolean on_env(const char *option_name, const char *value, gpointer data, GError **err)
{
    group_t *g = ((parse_ctx_t *)data)->g;
    const char *eq = strchr(value, '=');
    gboolean ok = eq != NULL && eq - value > 5 && g_str_has_prefix(value, "NCCL_");
    for (const char *p = value; ok && p < eq; p++)
        ok = g_ascii_isalnum(*p) || *p == '_';
    if (!ok) {
        cs_set_flag_error(err, option_name, "'%s' is not an NCCL variable setting; expected NCCL_NAME=VALUE", value);
        return FALSE;
    }
    g_ptr_array_add(g->envs, g_strdup(value));
    return TRUE;
}

static gboolean on_group_opt(const char *option_name, const char *value, gpointer data, GError **err)
{
    group_t *g = ((parse_ctx_t *)data)->g;
    if (strcmp(option_name, "--table") == 0) {
        gint64 n;
        if (!cs_parse_int(value, 1, 100000, &n)) {
            cs_set_flag_error(err, option_name, "'%s' is not a table number; expected 1 for the first table", value);
            return FALSE;
        }
        g->table = (int)n;
        return TRUE;
    }
    if (strcmp(option_name, "--op") == 0)
        return set_str(&g->op, value);
    if (strcmp(option_name, "--procs-per-node") == 0 || strcmp(option_name, "-t") == 0 ||
        strcmp(option_name, "--nthreads") == 0) {
        gint64 n;
        if (!cs_parse_int(value, 1, 4096, &n)) {
            cs_set_flag_error(err, option_name, "'%s' is not a count; expected a whole number from 1", value);
            return FALSE;
        }
        *(strcmp(option_name, "--procs-per-node") == 0 ? &g->procs : &g->threads) = (int)n;
        return TRUE;
    }
    if (strcmp(option_name, "--nccl-version") == 0 || strcmp(option_name, "--nccl-version-max") == 0) {
        if (!cs_nccl_version_whole(value)) {
            cs_set_flag_error(err, option_name, "'%s' is not a version; expected MAJOR.MINOR[.PATCH], e.g. 2.19.3",
                              value);
            return FALSE;
        }
        return set_str(strcmp(option_name, "--nccl-version") == 0 ? &g->nccl_version : &g->nccl_version_max,
                       value);
    }
    return set_str(&g->scenario, value);   /* --scenario, -s */
}

static const GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_CALLBACK, (gpointer)on_global, "Calibration file to write (INI, [params])", "FILE" },
    { "manifest", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_global,
      "Also use every configuration of a validation manifest (validation/manifest.ini's format)", "FILE" },
    { "data", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_global,
      "Directory of the manifest's data files (default: the manifest's directory)", "DIR" },
    { "model", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_global, "Engine whose parameters are fitted (default analytic)", "NAME" },
    { "calibration", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_global,
      "Start from this calibration file instead of the built-in defaults", "FILE" },
    { "scenario", 's', 0, G_OPTION_ARG_CALLBACK, (gpointer)on_group_opt,
      "The result's scenario file (topology, [nccl]); its flags override it", "FILE" },
    { "env", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_env, "An NCCL variable the result's run had (repeatable)",
      "NCCL_X=VALUE" },
    { "table", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_group_opt, "Use only table N of the result's log", "N" },
    { "op", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_group_opt, "The collective a log measures, when it does not say",
      "COLL" },
    { "procs-per-node", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_group_opt,
      "Processes per node of the result's run (as validate's)", "N" },
    { "nthreads", 't', 0, G_OPTION_ARG_CALLBACK, (gpointer)on_group_opt,
      "Threads per process of the result's run (nccl-tests -t)", "N" },
    { "nccl-version", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_group_opt,
      "NCCL version of the result's run, when its log does not print it (as validate's)", "X.Y.Z" },
    { "nccl-version-max", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_group_opt,
      "The newest NCCL the result's run can have used, where its version is not known (as validate's)", "X.Y.Z" },
    { NULL },
};

/* Options that take a value as the next argument (everything but --help). */
static gboolean takes_value(const char *a)
{
    if (a[0] != '-' || strchr(a, '=') != NULL)
        return FALSE;
    static const char *const no_value[] = { "-h", "--help", "-?", "--help-all", "--help-topology",
                                            "--help-calibrate", NULL };
    for (int i = 0; no_value[i] != NULL; i++)
        if (strcmp(a, no_value[i]) == 0)
            return FALSE;
    return strcmp(a, "--") != 0;
}

static gboolean is_global(const char *a)
{
    static const char *const g[] = { "-o", "--output", "--manifest", "--data", "--model", "--calibration", NULL };
    for (int i = 0; g[i] != NULL; i++) {
        size_t n = strlen(g[i]);
        if (strncmp(a, g[i], n) == 0 && (a[n] == '\0' || a[n] == '='))
            return TRUE;
    }
    return FALSE;
}

static gboolean parse_segment(global_t *gl, group_t *g, GPtrArray *argv_seg, GError **err)
{
    parse_ctx_t pc = { gl, g };
    g_autoptr(GOptionContext) ctx = g_option_context_new("RESULT [--topo PRESET ...] [RESULT ...] -o FILE - fit the "
                                                         "model's parameters to measurements");
    GOptionGroup *mg = g_option_group_new("calibrate", "collsim calibrate options", "Show the calibrate options", &pc,
                                          NULL);
    g_option_group_add_entries(mg, entries);
    g_option_context_set_main_group(ctx, mg);
    g_option_context_add_group(ctx, cs_topo_spec_option_group(&g->topo));
    g_option_context_set_summary(ctx,
        "Fits the model's latency and bandwidth parameters per link type and protocol to measured\n"
        "results: nccl-tests logs (text or -J JSON) and collsim real JSON. Each RESULT is followed\n"
        "by the hardware it ran on (--topo and the topology flags, --env, or --scenario); options\n"
        "before the first RESULT apply to every result. Latency terms are fitted on sizes <= 64 KiB\n"
        "(time error), bandwidth terms on sizes >= 1 MiB (bus bandwidth error); only parameters\n"
        "the results constrain are written (docs/calibration.md).");
    g_option_context_set_description(ctx,
        "Examples:\n"
        "  collsim calibrate run.log --topo dgx-h100 --nodes 2 --nic ib-ndr -o site.ini\n"
        "  collsim calibrate a.log --topo dgx-a100 b.json --topo dgx-h100 --env NCCL_ALGO=Ring -o site.ini\n"
        "  collsim calibrate --manifest validation/manifest.ini --data ../shared/data/real -o fit.ini\n"
        "  collsim validate run.log --topo dgx-h100 --nodes 2 --calibration site.ini\n"
        "\nSee collsim-calibrate(1).");
    g_ptr_array_add(argv_seg, NULL);
    int argc = (int)argv_seg->len - 1;
    char **argv = (char **)argv_seg->pdata;
    g_autoptr(GError) e = NULL;
    gboolean ok = g_option_context_parse(ctx, &argc, &argv, &e);
    g_ptr_array_remove_index(argv_seg, argv_seg->len - 1);
    if (!ok) {
        if (e->domain == CS_ERROR)
            g_propagate_error(err, g_steal_pointer(&e));
        else
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                        "collsim: calibrate: %s; expected the options of 'collsim calibrate --help'", e->message);
        return FALSE;
    }
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--") != 0) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                        "collsim: calibrate: unexpected argument '%s'; expected RESULT [--topo PRESET ...]", argv[i]);
            return FALSE;
        }
    return TRUE;
}

/* Splits argv into segments at each result file and parses each. */
/* The model is checked before any result's topology is parsed: a bad
 * --model is reported first, wherever it stands on the line. */
static gboolean check_model_first(int argc, char **argv, GError **err)
{
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        if (strcmp(argv[i], "--model") == 0 && i + 1 < argc)
            v = argv[i + 1];
        else if (g_str_has_prefix(argv[i], "--model="))
            v = argv[i] + strlen("--model=");
        if (v != NULL && cs_engine_find(v) == NULL) {
            cs_set_flag_error(err, "--model", "unknown model '%s'; expected one of %s", v, cs_engine_names());
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean parse_args(global_t *gl, group_t *defaults, GArray *groups, int argc, char **argv, GError **err)
{
    if (!check_model_first(argc, argv, err))
        return FALSE;
    int i = 1;
    int seg_start = 1;
    group_t *cur = defaults;
    while (i <= argc) {
        gboolean end = i == argc;
        if (!end && argv[i][0] == '-' && argv[i][1] != '\0') {
            i += takes_value(argv[i]) && i + 1 < argc ? 2 : 1;
            continue;
        }
        /* argv[seg_start, i) are cur's options */
        g_autoptr(GPtrArray) seg = g_ptr_array_new();
        g_ptr_array_add(seg, argv[0]);
        gboolean skip_next = FALSE;
        for (int k = seg_start; k < i; k++) {
            g_ptr_array_add(seg, argv[k]);
            /* the header shows the result's own options, not -o and the like */
            gboolean global = is_global(argv[k]);
            if (cur != defaults && !global && !skip_next)
                g_string_append_printf(cur->how, "%s%s", cur->how->len ? " " : "", argv[k]);
            skip_next = global && takes_value(argv[k]);
        }
        if (!parse_segment(gl, cur, seg, err))
            return FALSE;
        if (end)
            break;
        group_t g;
        group_init(&g);
        g.path = g_strdup(argv[i]);
        g_array_append_val(groups, g);
        cur = &g_array_index(groups, group_t, groups->len - 1);
        i++;
        seg_start = i;
    }
    if (gl->output == NULL) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: calibrate: no output file; expected -o FILE");
        return FALSE;
    }
    if (gl->output[0] == '\0') {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: -o: an empty file name; expected a path to write");
        return FALSE;
    }
    if (groups->len == 0 && gl->manifest == NULL) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                    "collsim: calibrate: no results given; expected RESULT --topo PRESET ... or --manifest FILE");
        return FALSE;
    }
    return TRUE;
}

/* ---- loading the inputs ------------------------------------------------------- */

/* The process layout a measured table ran with, as validate takes it:
 * 'procs'/'threads' when given (> 0), else the log's own "nThread T nGpus
 * G" line when T x G > 1 divides the node's GPUs (one process drives T x G
 * GPUs), else one process per GPU. */
static gboolean set_layout(cs_comm_t *comm, const cs_topo_t *topo, const cs_result_t *m, int procs, int threads,
                           GError **err)
{
    int th = m->proc_threads, g = m->proc_gpus, gpn = topo->ngpus / MAX(1, topo->nnodes);
    if (procs == 0 && threads == 0 && th > 0 && g > 0 && th * g > 1 && gpn % (th * g) == 0) {
        procs = gpn / (th * g);
        threads = th;
    }
    if (procs == 0 && threads > 1)
        procs = 1;   /* threads without processes: one process, as run takes -t */
    return cs_comm_set_layout(comm, procs, MAX(1, threads), err);
}

/* Reads one result file (collsim JSON, or an nccl-tests log with one or
 * more tables) measured on the hardware 'spec' + 'env' with the process
 * layout 'procs' x 'threads' (0: set_layout's rule; 'layout_at', where the
 * layout was given, starts its errors, else the table's label), and adds
 * its tables to the set. */
static gboolean add_results(cs_calib_set_t *set, const char *path, const cs_topo_spec_t *spec,
                            const cs_nccl_env_t *env, int procs, int threads, const char *layout_at, int table,
                            const char *op, const char *version, const char *version_max, const char *how,
                            GError **err)
{
    g_autofree char *text = NULL;
    gsize len = 0;
    if (!cs_read_file(path, "result", "result (collsim JSON or an nccl-tests log)", CS_READ_LIMIT_LOG, &text, &len,
                      err))
        return FALSE;
    g_autoptr(cs_topo_t) probe = cs_topo_spec_build(spec, err);
    if (probe == NULL)
        return FALSE;
    GPtrArray *results = g_ptr_array_new_with_free_func((GDestroyNotify)cs_result_free);
    GArray *numbers = g_array_new(FALSE, FALSE, sizeof(int));
    gboolean ok = FALSE;
    g_autoptr(cs_nccltests_log_t) log = NULL;
    if (cs_result_json_sniff(text, len)) {
        cs_result_t *r = cs_result_json_parse(text, len, path, err);
        if (r == NULL)
            goto out;
        g_ptr_array_add(results, r);
        int one = 1;
        g_array_append_val(numbers, one);
    } else {
        cs_nccltests_hint_t hint = { .has_coll = FALSE, .nranks = probe->ngpus };
        if (op != NULL && !cs_coll_parse(op, &hint.coll)) {
            cs_set_flag_error(err, "--op", "unknown collective '%s'; expected broadcast, reduce, allgather, "
                              "reducescatter or allreduce", op);
            goto out;
        }
        hint.has_coll = op != NULL;
        log = cs_nccltests_log_parse_hint(text, len, path, &hint, err);
        if (log == NULL)
            goto out;
        for (guint i = 0; i < log->results->len; i++) {
            int n = g_array_index(log->table_numbers, int, i);
            if (table != 0 && n != table)
                continue;
            /* the set takes it: leave NULL behind (cs_result_free(NULL) is a no-op) */
            g_ptr_array_add(results, g_ptr_array_index(log->results, i));
            log->results->pdata[i] = NULL;
            g_array_append_val(numbers, n);
        }
    }
    if (results->len == 0) {
        if (table != 0)
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: no usable table %d; expected 1 to %d", path, table,
                        log != NULL ? log->ntables : 1);
        else
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: no table of a modelled collective", path);
        goto out;
    }
    guint nres = results->len;
    for (guint i = 0; i < nres; i++) {
        cs_result_t *m = g_ptr_array_steal_index(results, 0);
        int n = g_array_index(numbers, int, i);
        g_autofree char *label = g_strdup_printf("%s table %d [%s]", path, n, how);
        /* the log's hosts: one per node, several per NVLink-domain node */
        int nhosts = cs_topo_rank_hosts(probe, NULL);
        if (m->nnodes > 0 && m->nnodes != nhosts) {
            char hosts[32] = "";
            if (nhosts != probe->nnodes)
                g_snprintf(hosts, sizeof hosts, " (%d hosts)", nhosts);
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: measured on %d %s%s but the topology has %d node%s%s; "
                        "expected topology flags that match the run (--nodes, --gpus)", label, m->nnodes,
                        nhosts != probe->nnodes ? "host" : "node", m->nnodes == 1 ? "" : "s", probe->nnodes,
                        probe->nnodes == 1 ? "" : "s", hosts);
            cs_result_free(m);
            goto out;
        }
        cs_topo_t *topo = cs_topo_spec_build(spec, err);
        if (topo == NULL) {
            cs_result_free(m);
            goto out;
        }
        cs_comm_t *comm = cs_comm_new(topo, env, err);
        g_autoptr(GError) le = NULL;
        if (comm != NULL && !set_layout(comm, topo, m, procs, threads, &le)) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: %s", layout_at != NULL ? layout_at : label,
                        le->message);
            cs_comm_free(comm);
            comm = NULL;
        }
        if (comm == NULL) {
            cs_result_free(m);
            cs_topo_free(topo);
            goto out;
        }
        /* the measured run's NCCL and nccl-tests build, as validate takes
         * them (a manifest's nccl-version: the file's header's) */
        cs_predict_measured_nccl(comm, version, log);
        cs_predict_measured_nccl_max(comm, version_max);
        /* parameters fitted to a model's own output describe the model,
         * not a machine: taken (a synthetic run is a fair test of the
         * fit), but said, as validate notes it */
        if (m->producer != NULL && g_str_has_prefix(m->producer, "model:"))
            fprintf(stderr, "collsim: warning: %s: collsim's own prediction (%s), not a measurement: the fit "
                    "describes the model, not a machine\n", label, m->producer);
        if (!cs_calib_set_add(set, label, m, topo, comm, err))
            goto out;
    }
    ok = TRUE;
out:
    g_ptr_array_unref(results);
    g_array_unref(numbers);
    return ok;
}

static gboolean add_group(cs_calib_set_t *set, const group_t *defaults, const group_t *g, GError **err)
{
    cs_scenario_t s;
    cs_scenario_init(&s);
    gboolean ok = FALSE;
    const char *scen = g->scenario != NULL ? g->scenario : defaults->scenario;
    if (scen != NULL && !cs_scenario_load(&s, scen, err))
        goto out;
    cs_topo_spec_merge(&s.topo, &defaults->topo);
    cs_topo_spec_merge(&s.topo, &g->topo);
    for (int pass = 0; pass < 2; pass++) {
        const GPtrArray *envs = pass == 0 ? defaults->envs : g->envs;
        for (guint i = 0; i < envs->len; i++) {
            const char *kv = g_ptr_array_index(envs, i);
            const char *eq = strchr(kv, '=');
            g_autofree char *name = g_strndup(kv, eq - kv);
            cs_nccl_env_set(s.env, name, eq + 1, "--env");
        }
    }
    if (s.topo.file == NULL && s.topo.preset == NULL) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: calibrate: %s: no hardware given; expected --topo "
                    "PRESET|FILE or --scenario FILE after it", g->path);
        goto out;
    }
    int procs = g->procs > 0 ? g->procs : defaults->procs > 0 ? defaults->procs : s.procs_per_node;
    int threads = g->threads > 0 ? g->threads : defaults->threads > 0 ? defaults->threads : s.nthreads;
    const char *version = g->nccl_version != NULL ? g->nccl_version : defaults->nccl_version;
    const char *version_max = g->nccl_version_max != NULL ? g->nccl_version_max : defaults->nccl_version_max;
    ok = add_results(set, g->path, &s.topo, s.env, procs, threads, NULL, g->table,
                     g->op != NULL ? g->op : defaults->op, version, version_max,
                     g->how->len ? g->how->str : "defaults", err);
out:
    cs_scenario_clear(&s);
    return ok;
}

/* A manifest group's version key (nccl-version, nccl-version-max), NULL
 * when absent; one that is not a version clears *ok and names the key,
 * unless an earlier key already failed. */
static char *version_key(GKeyFile *kf, const char *grp, const char *key, gboolean *ok, const char **bad_key,
                         GError **e)
{
    char *v = g_key_file_get_string(kf, grp, key, NULL);
    if (*ok && v != NULL && !cs_nccl_version_whole(g_strstrip(v))) {
        *bad_key = key;
        *ok = FALSE;
        g_set_error(e, CS_ERROR, CS_ERROR_INPUT, "'%s' is not a version; expected MAJOR.MINOR[.PATCH], e.g. 2.19.3",
                    v);
    }
    return v;
}

/* Line of "[group]" and of 'key' inside it, for messages. */
static int manifest_line(const char *text, const char *group, const char *key)
{
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    g_autofree char *hdr = g_strdup_printf("[%s]", group);
    int gl = 0;
    for (int i = 0; lines[i] != NULL; i++) {
        g_autofree char *l = g_strstrip(g_strdup(lines[i]));
        if (l[0] == '[') {
            if (gl > 0)
                break;
            if (strcmp(l, hdr) == 0)
                gl = i + 1;
            continue;
        }
        if (gl > 0 && key != NULL && g_str_has_prefix(l, key)) {
            const char *r = l + strlen(key);
            while (*r == ' ' || *r == '\t')
                r++;
            if (*r == '=')
                return i + 1;
        }
    }
    return gl;
}

static gboolean add_manifest(cs_calib_set_t *set, const char *path, const char *data_dir, GString *notes,
                             GError **err)
{
    g_autofree char *text = NULL;
    gsize len = 0;
    g_autoptr(GError) e = NULL;
    if (!cs_read_file(path, "manifest", "INI file", CS_READ_LIMIT_INI, &text, &len, err))
        return FALSE;
    g_autoptr(GKeyFile) kf = g_key_file_new();
    if (!g_key_file_load_from_data(kf, text, len, G_KEY_FILE_NONE, &e)) {
        cs_set_error_at(err, path, 0, "%s; expected validation/manifest.ini's format", e->message);
        return FALSE;
    }
    g_autofree char *dir = data_dir != NULL ? g_strdup(data_dir) : g_path_get_dirname(path);
    g_auto(GStrv) groups = g_key_file_get_groups(kf, NULL);
    static const char *const known[] = { "file", "table", "config", "topo", "nodes", "gpus", "gpu", "sockets",
                                         "cpu", "p2p", "nic", "nics-per-node", "fabric", "oversubscription",
                                         "nvlink-bridge", "visible-gpus", "env", "procs-per-node", "nthreads",
                                         "nccl-version", "nccl-version-max", "exclude", "cause", "cause-flags", "skip",
                                         "note", NULL };
    static const char *const topo_keys[] = { "gpu", "gpus", "sockets", "cpu", "p2p", "nodes", "nic", "nics-per-node",
                                             "fabric", "oversubscription", "nvlink-bridge", "visible-gpus", NULL };
    for (int gi = 0; groups[gi] != NULL; gi++) {
        const char *grp = groups[gi];
        g_auto(GStrv) keys = g_key_file_get_keys(kf, grp, NULL, NULL);
        for (int k = 0; keys[k] != NULL; k++)
            if (!g_strv_contains(known, keys[k])) {
                cs_set_error_at(err, path, manifest_line(text, grp, keys[k]),
                                "unknown key '%s'; expected file, table, topo, nodes, gpus, gpu, sockets, cpu, p2p, nic, "
                                "nics-per-node, fabric, oversubscription, nvlink-bridge, visible-gpus, env, procs-per-node, "
                                "nthreads, nccl-version, nccl-version-max, exclude, cause, cause-flags, skip, config or note",
                                keys[k]);
                return FALSE;
            }
        /* validation/run.sh's rule: a cause (its words and its flags) only
         * on a labelled, excluded configuration */
        gboolean cause = g_key_file_has_key(kf, grp, "cause", NULL);
        gboolean flags = g_key_file_has_key(kf, grp, "cause-flags", NULL);
        if (flags && !g_key_file_has_key(kf, grp, "exclude", NULL)) {
            cs_set_error_at(err, path, manifest_line(text, grp, "cause-flags"),
                            "[%s] has cause-flags but no exclude; expected a cause only on a labelled (excluded) "
                            "configuration", grp);
            return FALSE;
        }
        if (cause != flags) {
            cs_set_error_at(err, path, manifest_line(text, grp, cause ? "cause" : "cause-flags"),
                            "[%s] has one of cause and cause-flags; expected both (the shortfall the file states, "
                            "and the flags that express it)", grp);
            return FALSE;
        }
        if (g_key_file_has_key(kf, grp, "skip", NULL) || g_key_file_has_key(kf, grp, "exclude", NULL)) {
            g_string_append_printf(notes, "manifest [%s] not used: %s\n", grp,
                                   g_key_file_has_key(kf, grp, "skip", NULL) ? "skipped there" : "excluded there (not counted)");
            continue;
        }
        g_autofree char *file = g_key_file_get_string(kf, grp, "file", NULL);
        g_autofree char *topo = g_key_file_get_string(kf, grp, "topo", NULL);
        if (file == NULL || topo == NULL) {
            cs_set_error_at(err, path, manifest_line(text, grp, NULL), "[%s] has no %s; expected file = NAME and "
                            "topo = PRESET", grp, file == NULL ? "file" : "topo");
            return FALSE;
        }
        /* relative to --data; an absolute path as it is */
        g_strstrip(file);
        g_autofree char *fpath = g_path_is_absolute(file) ? g_strdup(file) : g_build_filename(dir, file, NULL);
        if (!g_file_test(fpath, G_FILE_TEST_IS_REGULAR)) {
            g_string_append_printf(notes, "manifest [%s] not used: %s is absent\n", grp, file);
            continue;
        }
        cs_topo_spec_t spec;
        cs_topo_spec_init(&spec);
        g_autoptr(cs_nccl_env_t) env = cs_nccl_env_new();
        /* a topology file is named relative to the manifest (a preset has no '/') */
        const char *tname = g_strstrip(topo);
        g_autofree char *mdir = g_path_get_dirname(path);
        g_autofree char *tpath = strchr(tname, '/') != NULL && !g_path_is_absolute(tname)
                                     ? g_build_filename(mdir, tname, NULL) : g_strdup(tname);
        gboolean ok = cs_topo_spec_set_topo(&spec, tpath, &e);
        const char *bad_key = "topo";
        for (int k = 0; ok && topo_keys[k] != NULL; k++) {
            g_autofree char *v = g_key_file_get_string(kf, grp, topo_keys[k], NULL);
            if (v != NULL) {
                bad_key = topo_keys[k];
                ok = cs_topo_spec_set(&spec, topo_keys[k], g_strstrip(v), NULL, &e);
            }
        }
        int table = 0;
        g_autofree char *tv = g_key_file_get_string(kf, grp, "table", NULL);
        gint64 tn = 0;
        if (ok && tv != NULL) {
            bad_key = "table";
            if (!cs_parse_int(g_strstrip(tv), 1, 100000, &tn)) {
                ok = FALSE;
                g_set_error(&e, CS_ERROR, CS_ERROR_INPUT, "'%s' is not a table number; expected 1 or more", tv);
            }
            table = (int)tn;
        }
        int layout[2] = { 0, 0 };   /* procs-per-node, nthreads: 0 = set_layout's rule */
        static const char *const layout_keys[2] = { "procs-per-node", "nthreads" };
        for (int k = 0; ok && k < 2; k++) {
            g_autofree char *v = g_key_file_get_string(kf, grp, layout_keys[k], NULL);
            gint64 n;
            if (v == NULL)
                continue;
            if (!cs_parse_int(g_strstrip(v), 1, 1024, &n)) {
                bad_key = layout_keys[k];
                ok = FALSE;
                g_set_error(&e, CS_ERROR, CS_ERROR_INPUT, "'%s' is not a count; expected a whole number from 1 to 1024",
                            v);
            } else {
                layout[k] = (int)n;
            }
        }
        g_autofree char *envs = g_key_file_get_string(kf, grp, "env", NULL);
        if (ok && envs != NULL) {
            g_auto(GStrv) kv = g_strsplit_set(envs, " \t", -1);
            for (int k = 0; kv[k] != NULL; k++) {
                if (kv[k][0] == '\0')
                    continue;
                const char *eq = strchr(kv[k], '=');
                if (eq == NULL || !g_str_has_prefix(kv[k], "NCCL_")) {
                    bad_key = "env";
                    ok = FALSE;
                    g_set_error(&e, CS_ERROR, CS_ERROR_INPUT, "'%s' is not an NCCL variable setting; expected "
                                "NCCL_NAME=VALUE", kv[k]);
                    break;
                }
                g_autofree char *name = g_strndup(kv[k], eq - kv[k]);
                cs_nccl_env_set(env, name, eq + 1, "manifest");
            }
        }
        g_autofree char *version = version_key(kf, grp, "nccl-version", &ok, &bad_key, &e);
        g_autofree char *version_max = version_key(kf, grp, "nccl-version-max", &ok, &bad_key, &e);
        if (!ok) {
            cs_set_error_at(err, path, manifest_line(text, grp, bad_key), "%s: %s", bad_key, e->message);
            cs_topo_spec_clear(&spec);
            return FALSE;
        }
        g_autofree char *how = g_strdup_printf("manifest group [%s]", grp);
        int lline = manifest_line(text, grp, layout[0] > 0 ? "procs-per-node" : "nthreads");
        g_autofree char *layout_at = layout[0] > 0 || layout[1] > 0 ? g_strdup_printf("%s:%d", path, lline) : NULL;
        ok = add_results(set, fpath, &spec, env, layout[0], layout[1], layout_at, table, NULL, version, version_max,
                         how, err);
        cs_topo_spec_clear(&spec);
        if (!ok)
            return FALSE;
    }
    return TRUE;
}

/* ---- the command ------------------------------------------------------------------ */

typedef struct {
    cs_progress_t *p;
    int i;
} fit_progress_t;

static void fit_step(void *data, const char *label)
{
    fit_progress_t *fp = data;
    if (fp->i > 0)
        cs_progress_end(fp->p);
    cs_progress_begin(fp->p, fp->i++, label);
}

static void print_report(FILE *f, const char *out, const cs_params_t *start, const cs_params_t *fitted,
                         const cs_calib_fit_t *fit, int nresults)
{
    static const char *const rname[] = { "-", "time<=64KiB", "busbw>=1MiB" };
    fprintf(f, "# collsim calibrate: %d result%s; wrote %s\n", nresults, nresults == 1 ? "" : "s", out);
    fprintf(f, "# %-24s %10s %10s  %-12s %5s %7s  %8s %8s\n", "parameter", "before", "after", "range", "sizes",
            "results", "err.bef", "err.aft");
    for (int id = 0; id < CS_P_COUNT; id++) {
        if (fit->range[id] == CS_CALIB_NONE)
            continue;
        fprintf(f, "  %-24s %10.4g %10.4g  %-12s %5d %7d  %7.1f%% %7.1f%%%s\n", cs_param_name((cs_param_id_t)id),
                start->v[id], fitted->v[id], rname[fit->range[id]], fit->nsizes[id], fit->nresults[id],
                fit->med_before[id] * 100, fit->med_after[id] * 100, fit->moved[id] ? "" : "  (kept)");
    }
    for (int rg = CS_CALIB_LARGE; rg >= CS_CALIB_SMALL; rg--) {
        if (fit->n_range[rg] == 0)   /* no such size: no median (the file says "-" too) */
            fprintf(f, "# all sizes %s: n=0 median |error| before -, after -\n", rname[rg]);
        else
            fprintf(f, "# all sizes %s: n=%d median |error| before %.1f%%, after %.1f%%\n", rname[rg],
                    fit->n_range[rg], fit->med_range_before[rg] * 100, fit->med_range_after[rg] * 100);
    }
    /* a parameter the results cannot tell from another is not fitted: the
     * other one took the whole shortfall, which the reader must know */
    for (int id = 0; id < CS_P_COUNT; id++)
        if (fit->twin[id] >= 0)
            fprintf(f, "# not separable from %s on these results, not fitted: %s\n",
                    cs_param_name((cs_param_id_t)fit->twin[id]), cs_param_name((cs_param_id_t)id));
    /* a fit that explains an unhealthy system must say so */
    for (int id = 0; id < CS_P_COUNT; id++) {
        if (!fit->moved[id])
            continue;
        gboolean inside;
        g_autofree char *range = cs_calib_physical_range((cs_param_id_t)id, fitted->v[id], &inside);
        if (!inside)
            fprintf(f, "# warning: %s = %.4g is outside its physical range, %s: %s\n", cs_param_name((cs_param_id_t)id),
                    fitted->v[id], range, cs_calib_outside_reading((cs_param_id_t)id, fitted->v[id]));
    }
    fprintf(f, "# note: %s\n", cs_calib_in_sample_note());
}

static int calibrate(global_t *gl, group_t *defaults, GArray *groups, GError **err)
{
    const cs_engine_ops_t *ops = cs_engine_find(gl->model != NULL ? gl->model : "analytic");
    if (ops == NULL) {
        cs_set_flag_error(err, "--model", "unknown model '%s'; expected one of %s", gl->model, cs_engine_names());
        return 2;
    }
    cs_params_t start;
    cs_params_init_defaults(&start);
    int status = 2;
    g_autoptr(cs_calib_set_t) set = cs_calib_set_new(ops);
    g_autoptr(GString) notes = g_string_new(NULL);
    g_autofree char *header = NULL, *ini = NULL;
    if (gl->start != NULL && !cs_params_load(&start, gl->start, err))
        goto out;
    for (guint i = 0; i < groups->len; i++)
        if (!add_group(set, defaults, &g_array_index(groups, group_t, i), err))
            goto out;
    if (gl->manifest != NULL && !add_manifest(set, gl->manifest, gl->data, notes, err))
        goto out;
    if (cs_calib_set_count(set) == 0) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: calibrate: no usable result (%s); expected at least one "
                    "result whose file is present", gl->manifest != NULL ? gl->manifest : "none given");
        goto out;
    }
    /* -o over the start file refines it in place (read whole, replaced
     * atomically); over a result or the manifest it would lose an input:
     * refused before the fit, naming the flag */
    cs_read_file_forget_input(gl->start);
    {
        const char *path = gl->output, *name = "collsim: -o";
        if (!cs_output_check(1, &path, &name, err))
            goto out;
    }
    cs_calib_opts_t opts;
    cs_calib_opts_init(&opts);
    cs_params_t fitted;
    cs_calib_fit_t fit;
    {
        /* a fit prices every size many times: a progress line while it
         * does (on a terminal), gone before the file is written */
        fit_progress_t fp = { .p = cs_progress_new(stderr, CS_P_COUNT + opts.sweeps, NULL) };
        opts.step = fit_step;
        opts.step_data = &fp;
        gboolean ok = cs_calibrate_fit(set, &start, &opts, &fitted, &fit, err);
        cs_progress_free(fp.p);
        if (!ok)
            goto out;
    }
    header = g_strdup_printf(
        "collsim calibrate %s: parameters of model:%s fitted to measured results; method: docs/calibration.md\n"
        "start: %s\n"
        "errors are median |error|, as collsim validate computes them: bus bandwidth at sizes >= 1 MiB, time at\n"
        "sizes <= 64 KiB; latency terms are fitted on the small sizes, bandwidth terms on the large ones\n%s",
        PACKAGE_VERSION, ops->name, gl->start != NULL ? gl->start : "built-in defaults", notes->str);
    ini = cs_calibrate_ini(set, &start, &fitted, &fit, header);
    if (!cs_write_file_atomic(gl->output, ini, -1, err))
        goto out;
    print_report(stdout, gl->output, &start, &fitted, &fit, cs_calib_set_count(set));
    status = 0;   /* main checks that standard output arrived (exit 3 if not) */
out:
    cs_params_clear(&start);
    return status;
}

int cs_cmd_calibrate(int argc, char **argv)
{
    global_t gl;
    memset(&gl, 0, sizeof gl);
    group_t defaults;
    group_init(&defaults);
    GArray *groups = g_array_new(FALSE, TRUE, sizeof(group_t));
    g_set_prgname("collsim calibrate");
    g_autoptr(GError) err = NULL;
    int status = 2;
    if (parse_args(&gl, &defaults, groups, argc, argv, &err))
        status = calibrate(&gl, &defaults, groups, &err);
    if (status == 2)
        status = cs_cli_fail(err);
    for (guint i = 0; i < groups->len; i++)
        group_clear(&g_array_index(groups, group_t, i));
    g_array_free(groups, TRUE);
    group_clear(&defaults);
    g_free(gl.output);
    g_free(gl.manifest);
    g_free(gl.data);
    g_free(gl.model);
    g_free(gl.start);
    return status;
}
