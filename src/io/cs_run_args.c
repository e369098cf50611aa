/* The command line of `collsim run` and `collsim real` (see cs_run_args.h).
 * Moved out of cmd_run.c unchanged in behaviour: the messages and the order
 * of the sources of each value are those `collsim run` always had. */
#include "config.h"
#include "io/cs_run_args.h"
#include "io/cs_output.h"
#include "io/cs_scenario-int.h"
#include "util/cs_error.h"
#include "util/cs_units.h"
#include "sim/cs_engine.h"

#include <string.h>

typedef struct {
    const cs_scenario_key_t *key;
    char *value;
    char *option;             /* as typed: "-b" or "--minbytes" */
} flag_value_t;

static void flag_value_free(gpointer p)
{
    flag_value_t *f = p;
    g_free(f->value);
    g_free(f->option);
    g_free(f);
}

void cs_run_args_init(cs_run_args_t *a)
{
    memset(a, 0, sizeof *a);
    cs_scenario_init(&a->scratch);
    a->flags = g_ptr_array_new_with_free_func(flag_value_free);
    a->envs = g_ptr_array_new_with_free_func(g_free);
    cs_topo_spec_init(&a->topo);
}

void cs_run_args_clear(cs_run_args_t *a)
{
    cs_scenario_clear(&a->scratch);
    g_ptr_array_unref(a->flags);
    g_ptr_array_unref(a->envs);
    cs_topo_spec_clear(&a->topo);
    g_free(a->scenario);
}

/* ---- option callbacks ------------------------------------------------------ */

/* The callbacks take their values as bytes (G_OPTION_FLAG_FILENAME), not
 * converted by GLib: a conversion that fails inside an option with an
 * optional value (--exact=...) sets an error that GLib then overwrites
 * with the next one (found by tests/fuzz/fuzz-cmdline; a GLib critical).
 * So each checks that its value is text. */
static gboolean check_text(const char *option_name, const char *value, GError **err)
{
    if (value == NULL || g_utf8_validate(value, -1, NULL))
        return TRUE;
    cs_set_flag_error(err, option_name, "the value is not UTF-8 text; expected text");
    return FALSE;
}

static gboolean on_key_flag(const char *option_name, const char *value, gpointer data, GError **err)
{
    cs_run_args_t *a = data;
    if (!check_text(option_name, value, err))
        return FALSE;
    const cs_scenario_key_t *k = cs_scenario_key_by_flag(option_name);
    g_assert_nonnull(k);
    /* switches: --no-extra-columns turns its key off, --link-stats on;
     * --link-stats=false (an optional value) says which */
    gboolean negated = g_str_has_prefix(k->long_flag, "no-");
    if (k->arg == NULL && negated && value != NULL) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: %s: takes no value; expected %s alone", option_name,
                    option_name);
        return FALSE;
    }
    const char *v = value != NULL ? value : negated ? "false" : "true";
    g_autoptr(GError) e = NULL;
    if (!cs_scenario_set(&a->scratch, k->group, k->key, v, NULL, NULL, &e)) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: %s: %s", option_name, e->message);
        cs_scenario_error_one_line(*err);
        return FALSE;
    }
    flag_value_t *f = g_new0(flag_value_t, 1);
    f->key = k;
    f->value = g_strdup(v);
    f->option = g_strdup(option_name);
    g_ptr_array_add(a->flags, f);
    return TRUE;
}

static gboolean on_env(const char *option_name, const char *value, gpointer data, GError **err)
{
    cs_run_args_t *a = data;
    if (!check_text(option_name, value, err) || !cs_scenario_check_env_flag(option_name, value, err))
        return FALSE;
    g_ptr_array_add(a->envs, g_strdup(value));
    return TRUE;
}

/* --max-memory SIZE: the engines' limit (cs_engine_set_max_memory), as
 * sizes are written for -b. */
static gboolean on_max_memory(const char *option_name, const char *value, gpointer data, GError **err)
{
    (void)data;
    guint64 bytes;
    if (!check_text(option_name, value, err))
        return FALSE;
    if (!cs_parse_size(value, &bytes) || bytes == 0) {
        cs_set_flag_error(err, option_name, "'%s' is not a memory size; expected a positive size such as 512M or 8G",
                          value);
        return FALSE;
    }
    cs_engine_set_max_memory(bytes);
    return TRUE;
}

/* Keys only a sweep of one collective reads. */
static gboolean sweep_only(const cs_scenario_key_t *k)
{
    return strcmp(k->group, "collective") == 0 || strcmp(k->key, "csv") == 0 ||
           strcmp(k->key, "extra-columns") == 0 || strcmp(k->key, "link-stats") == 0 ||
           strcmp(k->key, "alternatives") == 0;
}

/* Keys only a prediction reads, which a measurement refuses
 * (cs_run_args_check_measured): not in its --help. */
static gboolean prediction_only(const cs_scenario_key_t *k)
{
    static const char *const keys[] = { "scenario.model", "scenario.exact", "scenario.calibration",
                                        "collective.procs-per-node", "collective.nthreads", "output.svg",
                                        "output.trace", "output.link-stats", "output.alternatives" };
    for (guint i = 0; i < G_N_ELEMENTS(keys); i++) {
        size_t g = strlen(k->group);
        if (strncmp(keys[i], k->group, g) == 0 && keys[i][g] == '.' && strcmp(keys[i] + g + 1, k->key) == 0)
            return TRUE;
    }
    return FALSE;
}

static GOptionGroup *main_group(cs_run_args_t *a, const cs_run_args_cmd_t *cmd)
{
    g_autofree char *title = g_strdup_printf("collsim %s options", cmd->command);
    g_autofree char *help = g_strdup_printf("Show the %s options", cmd->command);
    GOptionGroup *g = cmd->extra_main
        ? g_option_group_new("scenario", "Scenario options (the scenario file, its keys as flags, --env)",
                             "Show the scenario options", a, NULL)
        : g_option_group_new(cmd->command, title, help, a, NULL);
    GArray *entries = g_array_new(TRUE, TRUE, sizeof(GOptionEntry));
    GOptionEntry fixed[] = {
        { "scenario", 's', 0, G_OPTION_ARG_FILENAME, &a->scenario, "Scenario file (INI, see collsim-scenario(5)); flags override it", "FILE" },
        { "env", 0, G_OPTION_FLAG_FILENAME, G_OPTION_ARG_CALLBACK, (gpointer)on_env, "Set an NCCL variable (repeatable; wins over the environment and [nccl])", "NCCL_X=VALUE" },
        { "dump", 0, 0, G_OPTION_ARG_NONE, &a->dump, "Print the effective scenario as INI and exit", NULL },
        { "max-memory", 0, G_OPTION_FLAG_FILENAME, G_OPTION_ARG_CALLBACK, (gpointer)on_max_memory,
          "Refuse a simulation estimated to need more memory than SIZE (K/M/G as -b; default: the memory available)",
          "SIZE" },
    };
    if (cmd->measures)
        fixed[3].flags |= G_OPTION_FLAG_HIDDEN;   /* --max-memory: the engines' limit */
    for (guint i = 0; i < G_N_ELEMENTS(fixed); i++)
        g_array_append_val(entries, fixed[i]);
    for (const GOptionEntry *x = cmd->main_extra; x != NULL && x->long_name != NULL; x++)
        g_array_append_val(entries, *x);
    for (const cs_scenario_key_t *k = cs_scenario_keys; k->key != NULL; k++) {
        if (cmd->workload && sweep_only(k))
            continue;
        GOptionEntry e = { k->long_flag, k->short_flag,
                           G_OPTION_FLAG_FILENAME | (k->arg == NULL ? G_OPTION_FLAG_OPTIONAL_ARG : 0) |
                               (cmd->measures && prediction_only(k) ? G_OPTION_FLAG_HIDDEN : 0),
                           G_OPTION_ARG_CALLBACK, (gpointer)on_key_flag, k->doc, k->arg };
        g_array_append_val(entries, e);
        if (k->alias != NULL) {
            GOptionEntry al = { k->alias, 0, G_OPTION_FLAG_HIDDEN | G_OPTION_FLAG_FILENAME, G_OPTION_ARG_CALLBACK, (gpointer)on_key_flag,
                                k->doc, k->arg };
            g_array_append_val(entries, al);
        }
    }
    g_option_group_add_entries(g, (const GOptionEntry *)(void *)entries->data);
    g_array_free(entries, TRUE);
    return g;
}

/* A table of keys as flags, a group of its own (--help-NAME): the [fabric]
 * keys (they describe --model packet's network and would crowd the main
 * help) and the [workload] keys (collsim step). */
static GOptionGroup *keys_group(cs_run_args_t *a, const char *name, const char *title, const char *help,
                                const cs_scenario_key_t *keys, gboolean hidden)
{
    GOptionGroup *g = g_option_group_new(name, title, help, a, NULL);
    GArray *entries = g_array_new(TRUE, TRUE, sizeof(GOptionEntry));
    for (const cs_scenario_key_t *k = keys; k->key != NULL; k++) {
        GOptionEntry e = { k->long_flag, 0, G_OPTION_FLAG_FILENAME | (hidden ? G_OPTION_FLAG_HIDDEN : 0),
                           G_OPTION_ARG_CALLBACK, (gpointer)on_key_flag, k->doc, k->arg };
        g_array_append_val(entries, e);
    }
    g_option_group_add_entries(g, (const GOptionEntry *)(void *)entries->data);
    g_array_free(entries, TRUE);
    return g;
}

gboolean cs_run_args_parse(cs_run_args_t *a, const cs_run_args_cmd_t *cmd, int argc, char **argv, GError **err)
{
    g_autoptr(GOptionContext) ctx = g_option_context_new(cmd->parameter);
    if (cmd->extra != NULL && cmd->extra_main) {
        g_autofree char *title = g_strdup_printf("collsim %s options", cmd->command);
        GOptionGroup *x = g_option_group_new("main", title, "Show the main options", cmd->extra_data, NULL);
        g_option_group_add_entries(x, cmd->extra);
        g_option_context_set_main_group(ctx, x);
        g_option_context_add_group(ctx, main_group(a, cmd));
    } else {
        g_option_context_set_main_group(ctx, main_group(a, cmd));
    }
    if (cmd->extra != NULL && !cmd->extra_main) {
        /* a group of its own, as the main group's user_data is 'a' */
        g_autofree char *title = g_strdup_printf("collsim %s: its own options", cmd->command);
        GOptionGroup *x = g_option_group_new("measure", title, "Show the measurement options", cmd->extra_data, NULL);
        g_option_group_add_entries(x, cmd->extra);
        g_option_context_add_group(ctx, x);
    }
    g_option_context_add_group(ctx, cs_topo_spec_option_group(&a->topo));
    /* a measurement's network is the machine's: its flags are parsed to be refused */
    g_option_context_add_group(ctx, keys_group(a, "fabric", "Fabric options ([fabric] keys; read by --model packet)",
                                               "Show the fabric options", cs_fabric_keys, cmd->measures));
    if (cmd->workload)
        g_option_context_add_group(ctx, keys_group(a, "workload", "Workload options ([workload] keys)",
                                                   "Show the workload options", cs_workload_keys, FALSE));
    if (cmd->summary != NULL)
        g_option_context_set_summary(ctx, cmd->summary);
    if (cmd->description != NULL)
        g_option_context_set_description(ctx, cmd->description);
    g_autoptr(GError) e = NULL;
    if (!g_option_context_parse(ctx, &argc, &argv, &e)) {
        if (e->domain == CS_ERROR)
            g_propagate_error(err, g_steal_pointer(&e));
        else
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: %s: %s; expected the options of 'collsim %s --help'",
                        cmd->command, e->message, cmd->command);
        return FALSE;
    }
    for (int i = 1; i < argc; i++) {
        if (a->scenario == NULL && strcmp(argv[i], "--") != 0) {
            a->scenario = g_strdup(argv[i]);
        } else if (strcmp(argv[i], "--") != 0) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                        "collsim: %s: unexpected argument '%s'; expected at most one scenario file", cmd->command,
                        argv[i]);
            return FALSE;
        }
    }
    return TRUE;
}

/* ---- building the scenario ------------------------------------------------- */

static void note_topo_flag_origins(cs_scenario_t *s, const cs_topo_spec_t *f)
{
    struct { const char *key; gboolean set; } set[] = {
        { "gpu", f->gpu != NULL }, { "gpus", f->gpus > 0 }, { "sockets", f->sockets > 0 }, { "cpu", f->cpu != NULL },
        { "p2p", f->p2p != -1 }, { "nodes", f->nodes > 0 }, { "nic", f->nic != NULL },
        { "nics-per-node", f->nics_per_node > 0 }, { "fabric", f->fabric != NULL },
        { "oversubscription", f->oversubscription > 0 },
    };
    for (guint i = 0; i < G_N_ELEMENTS(set); i++)
        if (set[i].set)
            g_hash_table_replace(s->origins, g_strdup_printf("topology.%s", set[i].key),
                                 g_strdup_printf("collsim: --%s", set[i].key));
}

gboolean cs_run_args_build(const cs_run_args_t *a, cs_scenario_t *s, GError **err)
{
    if (a->scenario != NULL && !cs_scenario_load(s, a->scenario, err))
        return FALSE;
    for (guint i = 0; i < a->flags->len; i++) {
        const flag_value_t *f = g_ptr_array_index(a->flags, i);
        g_autofree char *origin = g_strdup_printf("collsim: %s", f->option);
        if (!cs_scenario_set(s, f->key->group, f->key->key, f->value, origin, NULL, err)) {
            g_prefix_error(err, "%s: ", origin);   /* (checked once already, when parsed) */
            return FALSE;
        }
    }
    /* As real NCCL: the process environment over the scenario's [nccl],
     * and --env over both. */
    cs_nccl_env_import_environ(s->env);
    for (guint i = 0; i < a->envs->len; i++) {
        const char *kv = g_ptr_array_index(a->envs, i);
        const char *eq = strchr(kv, '=');
        g_autofree char *name = g_strndup(kv, eq - kv);
        cs_nccl_env_set(s->env, name, eq + 1, "--env");
    }
    /* -t is [collective] nthreads, flag or key alike: threads per process,
     * each driving GPUs per node / (processes x threads) GPUs; the GPUs of
     * a node stay the topology's (or -g's), so -t never changes what is
     * simulated, only how it is launched (cs_run_args_layout). */
    note_topo_flag_origins(s, &a->topo);
    cs_topo_spec_merge(&s->topo, &a->topo);
    return TRUE;
}

gboolean cs_run_args_check_outputs(const cs_scenario_t *s, GError **err)
{
    const char *paths[4], *names[4];
    int n = 0;
    if (s->json_out != NULL)
        names[n] = cs_run_args_origin(s, "output.json", "collsim: --json"), paths[n++] = s->json_out;
    if (s->csv_out != NULL)
        names[n] = cs_run_args_origin(s, "output.csv", "collsim: --csv"), paths[n++] = s->csv_out;
    if (s->trace_out != NULL)
        names[n] = cs_run_args_origin(s, "output.trace", "collsim: --trace"), paths[n++] = s->trace_out;
    if (s->svg_out != NULL)
        names[n] = cs_run_args_origin(s, "output.svg", "collsim: --svg"), paths[n++] = s->svg_out;
    return cs_output_check(n, paths, names, err);
}

const char *cs_run_args_origin(const cs_scenario_t *s, const char *id, const char *fallback)
{
    const char *o = g_hash_table_lookup(s->origins, id);
    return o != NULL ? o : fallback;
}

/* The processes of a node: procs-per-node; without it one per GPU, or one
 * when threads are asked for (a threaded nccl-tests command line is one
 * process's). */
static int layout_procs(const cs_scenario_t *s, int gpn)
{
    if (s->procs_per_node > 0)
        return s->procs_per_node;
    return MAX(1, s->nthreads) > 1 ? 1 : gpn;
}

void cs_run_args_layout(const cs_scenario_t *s, int gpn, int *procs_p, int *threads_p, int *gpus_p)
{
    int t = MAX(1, s->nthreads), p = layout_procs(s, gpn);
    *procs_p = p;
    *threads_p = t;
    *gpus_p = MAX(1, gpn / (p * t));
}

gboolean cs_run_args_apply_layout(const cs_scenario_t *s, cs_comm_t *comm, GError **err)
{
    int t = MAX(1, s->nthreads);
    int procs = s->procs_per_node > 0 ? s->procs_per_node : t > 1 ? 1 : 0;
    GError *e = NULL;
    if (cs_comm_set_layout(comm, procs, t, &e))
        return TRUE;
    const char *where = cs_run_args_origin(s, "collective.procs-per-node", NULL);
    if (where == NULL)
        where = cs_run_args_origin(s, "collective.nthreads", "collsim: --procs-per-node");
    g_propagate_prefixed_error(err, e, "%s: ", where);
    return FALSE;
}

/* The process layout of the scenario (cs_run_args_layout), launched as MPI
 * jobs are, so that a user can run it and diff: mpirun with a process per
 * GPU by default, the bare test for one process on one node. */
char *cs_run_args_nccl_tests_command(const cs_scenario_t *s, int nnodes, int ngpus, int ppn)
{
    GString *g = g_string_new(NULL);
    g_autoptr(GPtrArray) names = cs_nccl_env_names(s->env);
    int procs, threads, gpus;
    cs_run_args_layout(s, ppn, &procs, &threads, &gpus);
    if (nnodes > 1 || procs > 1) {
        g_string_append_printf(g, "mpirun -np %d -N %d", MAX(1, ngpus / (threads * gpus)), procs);
        for (guint i = 0; i < names->len; i++) {
            const char *n = g_ptr_array_index(names, i);
            g_string_append_printf(g, " -x %s=%s", n, cs_nccl_env_get(s->env, n));
        }
        g_string_append_c(g, ' ');
    } else {
        for (guint i = 0; i < names->len; i++) {
            const char *n = g_ptr_array_index(names, i);
            g_string_append_printf(g, "%s=%s ", n, cs_nccl_env_get(s->env, n));
        }
    }
    g_autofree char *b = cs_scenario_size_str(s->minbytes);
    g_autofree char *e = cs_scenario_size_str(s->maxbytes);
    g_string_append_printf(g, "%s -b %s -e %s", cs_coll_test_name(s->coll), b, e);
    if (s->stepfactor > 1) {
        g_string_append_printf(g, " -f %.0f", s->stepfactor);
    } else {
        g_autofree char *i = cs_scenario_size_str(s->stepbytes);
        g_string_append_printf(g, " -i %s", i);
    }
    g_string_append_printf(g, " -g %d", gpus);
    if (threads > 1)
        g_string_append_printf(g, " -t %d", threads);
    if (s->dtype != CS_DTYPE_FLOAT)
        g_string_append_printf(g, " -d %s", cs_dtype_name(s->dtype));
    if (cs_coll_has_redop(s->coll) && s->redop != CS_REDOP_SUM)
        g_string_append_printf(g, " -o %s", cs_redop_name(s->redop));
    if (cs_coll_has_root(s->coll) && s->root != 0)
        g_string_append_printf(g, " -r %d", s->root);
    if (s->iters != 20)
        g_string_append_printf(g, " -n %d", s->iters);
    if (s->warmup != 1)
        g_string_append_printf(g, " -w %d", s->warmup);
    if (s->agg_iters != 1)
        g_string_append_printf(g, " -m %d", s->agg_iters);
    if (s->check != 1)
        g_string_append_printf(g, " -c %d", s->check);
    return g_string_free(g, FALSE);
}

gboolean cs_run_args_check_measured(const cs_scenario_t *s, const char *command, GError **err)
{
    /* a prediction's settings given on this command line: a scenario file
     * shared with collsim run may hold them (ignored here, as its keys are
     * the prediction's), a flag says the user expects them to do something */
    static const char *const predicting[] = { "scenario.model", "scenario.exact", "scenario.calibration" };
    for (guint k = 0; k < G_N_ELEMENTS(predicting); k++) {
        const char *o = g_hash_table_lookup(s->origins, predicting[k]);
        if (o != NULL && g_str_has_prefix(o, "collsim:")) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: collsim %s measures, it prices nothing; expected it "
                        "with collsim run (a scenario file's %s, shared with run, is ignored here)", o, command,
                        predicting[k] + strlen("scenario."));
            return FALSE;
        }
    }
    for (const cs_scenario_key_t *k = cs_fabric_keys; k->key != NULL; k++) {
        g_autofree char *key = g_strdup_printf("fabric.%s", k->key);
        const char *o = g_hash_table_lookup(s->origins, key);
        if (o != NULL && g_str_has_prefix(o, "collsim:")) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: collsim %s measures the machine's own network; expected "
                        "the [fabric] keys with collsim run --model packet, which simulates one (a scenario file's, "
                        "shared with run, are ignored here)", o, command);
            return FALSE;
        }
    }
    /* nccl_runner.c: one process per GPU, each on its own stream */
    if (s->procs_per_node > 0 || s->nthreads > 1) {
        gboolean p = s->procs_per_node > 0;
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                    "%s: collsim %s runs one process per GPU; expected no %s (it sets the layout of a prediction)",
                    cs_run_args_origin(s, p ? "collective.procs-per-node" : "collective.nthreads",
                                       p ? "collsim: --procs-per-node" : "collsim: -t"),
                    command, p ? "procs-per-node" : "-t/nthreads");
        return FALSE;
    }
    if (s->jobs->len > 0) {
        const cs_scenario_job_t *j = g_ptr_array_index(s->jobs, 0);
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                    "%s: [job %s]: several jobs at once are a prediction (collsim run --model flow); "
                    "expected a scenario without [job NAME] groups for collsim %s", j->origin, j->name, command);
        return FALSE;
    }
    if (s->svg_out != NULL) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: collsim %s draws no plot; expected --svg with collsim run, "
                    "compare or sweep (or --csv here, to plot it elsewhere)",
                    cs_run_args_origin(s, "output.svg", "collsim: --svg"), command);
        return FALSE;
    }
    if (s->trace_out != NULL || s->link_stats) {
        gboolean tr = s->trace_out != NULL;
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: only a simulation has %s; expected it with collsim run, not collsim %s",
                    cs_run_args_origin(s, tr ? "output.trace" : "output.link-stats",
                                       tr ? "collsim: --trace" : "collsim: --link-stats"),
                    tr ? "a timeline" : "link statistics", command);
        return FALSE;
    }
    if (s->alternatives) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: a measurement runs NCCL's own pick; expected --alternatives "
                    "with collsim run (the model prices what NCCL passed over), not collsim %s",
                    cs_run_args_origin(s, "output.alternatives", "collsim: --alternatives"), command);
        return FALSE;
    }
    return TRUE;
}
