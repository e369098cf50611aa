/* Scenario files (INI, read with GKeyFile) and the values they share with the
 * command line. GKeyFile reports no line numbers, so the text is scanned
 * first: every line is checked for shape, group and key name, and its number
 * kept for messages; GKeyFile then only supplies the (unescaped) values. */
#include "config.h"
#include "io/cs_scenario-int.h"
#include "models/cs_presets.h"
#include "sim/cs_engine.h"
#include "util/cs_error.h"
#include "util/cs_units.h"
#include "util/cs_read_file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The scenario's own keys; [topology] keys are in cs_topo_spec.c. The long
 * flag is the key, except extra-columns (a switch that turns it off). */
const cs_scenario_key_t cs_scenario_keys[] = {
    { "scenario", "name", 0, "name", NULL, "TEXT", "Name of the scenario, shown in the output header" },
    { "scenario", "model", 0, "model", NULL, "ENGINE", "Time model that prices NCCL's decisions (default: analytic)" },
    { "scenario", "seed", 0, "seed", NULL, "N", "Seed of every random choice (default: 1)" },
    { "scenario", "calibration", 0, "calibration", NULL, "FILE", "Parameter file written by collsim calibrate" },
    { "scenario", "exact", 0, "exact", NULL, NULL, "Make no approximation to save time: --model flow simulates every period of a long ring (key: exact = true)" },
    { "collective", "op", 0, "op", NULL, "COLL", "Collective: allreduce, allgather, reducescatter, broadcast, reduce, or the point-to-point sendrecv or alltoall (default: allreduce)" },
    { "collective", "datatype", 'd', "datatype", NULL, "TYPE", "Data type, as nccl-tests -d (default: float)" },
    { "collective", "redop", 'o', "redop", NULL, "OP", "Reduction: sum, prod, min, max or avg, as nccl-tests -o (default: sum; sendrecv prints it and reduces nothing)" },
    { "collective", "root", 'r', "root", NULL, "RANK", "Root rank of broadcast and reduce (default: 0)" },
    { "collective", "minbytes", 'b', "minbytes", NULL, "SIZE", "Smallest size swept, K/M/G = 1024^n (default: 32M)" },
    { "collective", "maxbytes", 'e', "maxbytes", NULL, "SIZE", "Largest size swept, inclusive (default: 32M)" },
    { "collective", "stepbytes", 'i', "stepbytes", NULL, "SIZE", "Size increment when the step factor is 1 (default: 1M)" },
    { "collective", "stepfactor", 'f', "stepfactor", NULL, "N", "Size multiplier; 1 adds the step instead (default: 1)" },
    { "collective", "iters", 'n', "iters", NULL, "N", "Timed iterations, as nccl-tests -n (default: 20)" },
    { "collective", "warmup", 'w', "warmup", "warmup_iters", "N", "Warm-up iterations, as nccl-tests -w (default: 1)" },
    { "collective", "check", 'c', "check", NULL, "0|1", "Check results, as nccl-tests -c; a prediction checks nothing (default: 1)" },
    { "collective", "agg-iters", 'm', "agg-iters", "agg_iters", "N", "Operations aggregated per iteration, as nccl-tests -m (default: 1)" },
    /* the process layout (cs_scenario_job.c) */
    { "collective", "procs-per-node", 0, "procs-per-node", NULL, "N", "Processes per node, as mpirun -N; 1 = nccl-tests' one process driving every GPU of a node with -g (default: one process per GPU)" },
    { "collective", "nthreads", 't', "nthreads", NULL, "N", "Threads per process, as nccl-tests -t: each drives GPUs per node / (processes x threads); without procs-per-node, one process per node (default: 1)" },
    /* not nccl-tests's -J: its JSON has another layout */
    { "output", "json", 0, "json", NULL, "FILE", "Also write every row as JSON to FILE" },
    { "output", "csv", 0, "csv", NULL, "FILE", "Also write every row as CSV to FILE" },
    { "output", "extra-columns", 0, "no-extra-columns", NULL, NULL, "Print only nccl-tests's columns (key: extra-columns = false)" },
    { "output", "svg", 0, "svg", NULL, "FILE", "Also draw FILE (SVG): run, bus bandwidth and time against size; step, the step's timeline" },
    { "output", "trace", 0, "trace", NULL, "FILE", "Write the simulation's timeline as Chrome Trace Event JSON (Perfetto) to FILE (--model flow or packet)" },
    { "output", "link-stats", 0, "link-stats", NULL, NULL, "Print each link's utilization and the bottleneck (--model analytic, flow or packet; key: link-stats = true)" },
    { "output", "alternatives", 0, "alternatives", NULL, NULL, "Also price the algorithms and protocols NCCL's tuner passed over and note where one takes much less time (--model analytic; key: alternatives = true)" },
    { NULL, NULL, 0, NULL, NULL, NULL, NULL }
};

static const char *const groups[] = { "scenario", "topology", "collective", "nccl", "fabric", "output", "workload", NULL };

const cs_scenario_key_t *cs_scenario_key_find(const char *group, const char *key)
{
    if (cs_scenario_job_group_name(group) != NULL) {
        for (const cs_scenario_key_t *k = cs_scenario_job_keys; k->key != NULL; k++)
            if (strcmp(k->key, key) == 0)
                return k;
        return NULL;
    }
    const cs_scenario_key_t *tables[] = { cs_scenario_keys, cs_topo_spec_keys, cs_fabric_keys, cs_workload_keys };
    for (int t = 0; t < 4; t++)
        for (const cs_scenario_key_t *k = tables[t]; k->key != NULL; k++)
            if (strcmp(k->group, group) == 0 && strcmp(k->key, key) == 0)
                return k;
    return NULL;
}

const cs_scenario_key_t *cs_scenario_key_by_flag(const char *option_name)
{
    const cs_scenario_key_t *tables[] = { cs_scenario_keys, cs_topo_spec_keys, cs_fabric_keys, cs_workload_keys };
    gboolean is_long = g_str_has_prefix(option_name, "--");
    const char *name = option_name + (is_long ? 2 : 1);
    for (int t = 0; t < 4; t++) {
        for (const cs_scenario_key_t *k = tables[t]; k->key != NULL; k++) {
            if (is_long && (strcmp(name, k->long_flag) == 0 ||
                            (k->alias != NULL && strcmp(name, k->alias) == 0)))
                return k;
            if (!is_long && k->short_flag != 0 && name[0] == k->short_flag && name[1] == '\0')
                return k;
        }
    }
    return NULL;
}

static void set_input_error(GError **err, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void set_input_error(GError **err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error_literal(err, CS_ERROR, CS_ERROR_INPUT, msg);
}

gboolean cs_scenario_check_env_flag(const char *flag, const char *setting, GError **err)
{
    const char *eq = strchr(setting, '=');
    gboolean ok = eq != NULL && eq - setting > 5 && g_str_has_prefix(setting, "NCCL_");
    for (const char *p = setting; ok && p < eq; p++)
        ok = g_ascii_isalnum(*p) || *p == '_';
    if (!ok) {
        cs_set_flag_error(err, flag, "'%s' is not an NCCL variable setting; expected NCCL_NAME=VALUE", setting);
        cs_scenario_error_one_line(err != NULL ? *err : NULL);
    }
    return ok;
}

void cs_scenario_error_one_line(GError *err)
{
    if (err == NULL)
        return;
    gboolean clean = TRUE;
    for (const char *p = err->message; *p && clean; p++)
        clean = (unsigned char)*p >= 0x20 && *p != 0x7f;
    if (clean)
        return;
    GString *g = g_string_new(NULL);
    for (const unsigned char *p = (const unsigned char *)err->message; *p; p++) {
        if (*p == '\n')
            g_string_append(g, "\\n");
        else if (*p == '\t')
            g_string_append(g, "\\t");
        else if (*p < 0x20 || *p == 0x7f)
            g_string_append_printf(g, "\\x%02x", *p);
        else
            g_string_append_c(g, (char)*p);
    }
    g_free(err->message);
    err->message = g_string_free(g, FALSE);
}

/* ---- values ------------------------------------------------------------ */

static gboolean parse_size_at_least_1(const char *v, const char *what, guint64 *out_p, GError **err)
{
    guint64 b;
    if (!cs_parse_size(v, &b)) {
        set_input_error(err, "'%s' is not a size; expected a number with optional K, M or G", v);
        return FALSE;
    }
    if (b < 1) {
        set_input_error(err, "%s must be at least 1 byte; got '%s'", what, v);
        return FALSE;
    }
    *out_p = b;
    return TRUE;
}

gboolean cs_scenario_parse_count(const char *v, gint64 min, gint64 max, const char *what, int *out_p,
                                 GError **err)
{
    gint64 n;
    if (!cs_parse_int(v, G_MININT64, G_MAXINT64, &n)) {
        set_input_error(err, "'%s' is not a whole number; expected %s", v, what);
        return FALSE;
    }
    if (n < min || n > max) {
        set_input_error(err, "%s is out of range; expected %s", v, what);
        return FALSE;
    }
    *out_p = (int)n;
    return TRUE;
}

static gboolean parse_text(const char *v, const char *what, GError **err)
{
    if (v == NULL || *v == '\0') {
        set_input_error(err, "empty value; expected %s", what);
        return FALSE;
    }
    /* a "\n" in the INI value (GKeyFile unescapes it) would start a new
     * line in the header, which readers of nccl-tests output take as a row */
    if (!cs_text_one_line(v)) {
        g_autofree char *shown = g_strescape(v, NULL);
        set_input_error(err, "'%s' holds a control character (a line break or tab); expected %s on one line",
                        shown, what);
        return FALSE;
    }
    return TRUE;
}

/* Input paths in a scenario are relative to the scenario's directory, so
 * that scenarios/x.ini can name ../topologies/y.xml from anywhere. */
static char *resolve_path(const char *v, const char *base_dir)
{
    if (base_dir == NULL || g_path_is_absolute(v) || strcmp(base_dir, ".") == 0)
        return g_strdup(v);
    return g_build_filename(base_dir, v, NULL);
}

static void replace_str(char **dst, char *v)
{
    g_free(*dst);
    *dst = v;
}

static char *names_list(const char *(*name)(int), int n)
{
    GString *g = g_string_new(NULL);
    for (int i = 0; i < n; i++)
        g_string_append_printf(g, "%s%s", i ? ", " : "", name(i));
    return g_string_free(g, FALSE);
}

static const char *coll_name_i(int i) { return cs_coll_name((cs_coll_t)i); }
static const char *dtype_name_i(int i) { return cs_dtype_name((cs_dtype_t)i); }
static const char *redop_name_i(int i) { return cs_redop_name((cs_redop_t)i); }

gboolean cs_scenario_parse_enum(const char *key, const char *v, int *out_p, GError **err)
{
    if (strcmp(key, "op") == 0) {
        cs_coll_t c;
        if (!cs_coll_parse(v, &c)) {
            g_autofree char *names = names_list(coll_name_i, CS_OP_COUNT);
            cs_redop_t r;
            /* nccl-tests's --op is the reduction; ours is the collective. */
            set_input_error(err, "unknown collective '%s'; expected one of %s%s", v, names,
                            cs_redop_parse(v, &r) ? " (the reduction is -o/--redop)" : "");
            return FALSE;
        }
        *out_p = (int)c;
    } else if (strcmp(key, "datatype") == 0) {
        cs_dtype_t d;
        if (!cs_dtype_parse(v, &d)) {
            g_autofree char *names = names_list(dtype_name_i, CS_DTYPE_COUNT);
            set_input_error(err, "unknown data type '%s'; expected one of %s", v, names);
            return FALSE;
        }
        *out_p = (int)d;
    } else {
        g_assert(strcmp(key, "redop") == 0);
        cs_redop_t r;
        if (!cs_redop_parse(v, &r)) {
            g_autofree char *names = names_list(redop_name_i, CS_REDOP_COUNT);
            set_input_error(err, "unknown reduction '%s'; expected one of %s", v, names);
            return FALSE;
        }
        *out_p = (int)r;
    }
    return TRUE;
}

static gboolean set_collective(cs_scenario_t *s, const char *key, const char *v, GError **err)
{
    int e;
    if (strcmp(key, "op") == 0 || strcmp(key, "datatype") == 0 || strcmp(key, "redop") == 0) {
        if (!cs_scenario_parse_enum(key, v, &e, err))
            return FALSE;
        if (key[0] == 'o')
            s->coll = (cs_coll_t)e;
        else if (key[0] == 'd')
            s->dtype = (cs_dtype_t)e;
        else
            s->redop = (cs_redop_t)e;
    } else if (strcmp(key, "root") == 0) {
        return cs_scenario_parse_count(v, 0, G_MAXINT, "a rank number from 0", &s->root, err);
    } else if (strcmp(key, "minbytes") == 0) {
        return parse_size_at_least_1(v, "size", &s->minbytes, err);
    } else if (strcmp(key, "maxbytes") == 0) {
        return parse_size_at_least_1(v, "size", &s->maxbytes, err);
    } else if (strcmp(key, "stepbytes") == 0) {
        return parse_size_at_least_1(v, "step", &s->stepbytes, err);
    } else if (strcmp(key, "stepfactor") == 0) {
        /* nccl-tests reads -f with strtol: a whole number. */
        int f;
        if (!cs_scenario_parse_count(v, 1, 1 << 20, "a whole step factor of at least 1", &f, err))
            return FALSE;
        s->stepfactor = f;
    } else if (strcmp(key, "iters") == 0) {
        return cs_scenario_parse_count(v, 1, 1000000000, "a number of iterations of at least 1", &s->iters, err);
    } else if (strcmp(key, "warmup") == 0) {
        return cs_scenario_parse_count(v, 0, 1000000000, "a number of warm-up iterations of at least 0", &s->warmup, err);
    } else if (strcmp(key, "check") == 0) {
        return cs_scenario_parse_count(v, 0, 1, "0 or 1", &s->check, err);
    } else if (strcmp(key, "agg-iters") == 0) {
        return cs_scenario_parse_count(v, 1, 1000000, "a number of aggregated operations of at least 1", &s->agg_iters, err);
    } else if (strcmp(key, "procs-per-node") == 0 || strcmp(key, "nthreads") == 0) {
        return cs_scenario_layout_set(s, key, v, err);
    } else {
        g_assert_not_reached();
    }
    return TRUE;
}

gboolean cs_scenario_parse_bool(const char *v, gboolean *out_p)
{
    static const char *const yes[] = { "true", "yes", "on", "1", NULL };
    static const char *const no[] = { "false", "no", "off", "0", NULL };
    for (int i = 0; yes[i] != NULL; i++) {
        if (g_ascii_strcasecmp(v, yes[i]) == 0) {
            *out_p = TRUE;
            return TRUE;
        }
        if (g_ascii_strcasecmp(v, no[i]) == 0) {
            *out_p = FALSE;
            return TRUE;
        }
    }
    return FALSE;
}

gboolean cs_scenario_is_nccl_name(const char *k)
{
    if (!g_str_has_prefix(k, "NCCL_") || k[5] == '\0')
        return FALSE;
    for (const char *p = k; *p; p++)
        if (!g_ascii_isalnum(*p) && *p != '_')
            return FALSE;
    return TRUE;
}

gboolean cs_scenario_set(cs_scenario_t *s, const char *group, const char *key, const char *value,
                         const char *origin, const char *base_dir, GError **err)
{
    const char *job = cs_scenario_job_group_name(group);
    if (job != NULL) {
        if (!cs_scenario_job_set(cs_scenario_job_get(s, job, origin), key, value, origin, err))
            return FALSE;
    } else if (strcmp(group, "nccl") == 0) {
        if (!cs_scenario_is_nccl_name(key)) {
            set_input_error(err, "'%s' is not an NCCL_* variable; expected NCCL_NAME = value", key);
            return FALSE;
        }
        cs_nccl_env_set(s->env, key, value, origin);
        return TRUE;
    } else if (strcmp(group, "fabric") == 0) {
        if (!cs_scenario_fabric_set(&s->fabric, key, value, origin, err))
            return FALSE;
    } else if (strcmp(group, "workload") == 0) {
        if (!cs_scenario_workload_set(s, key, value, origin, err))
            return FALSE;
    } else if (strcmp(group, "topology") == 0) {
        if (!cs_topo_spec_set(&s->topo, key, value, base_dir, err))
            return FALSE;
        cs_topo_spec_set_origin(&s->topo, key, origin);
        if (strcmp(key, "file") == 0 || strcmp(key, "preset") == 0)
            replace_str(&s->topo.origin, g_strdup(origin));
    } else if (strcmp(group, "collective") == 0) {
        if (!set_collective(s, key, value, err))
            return FALSE;
    } else if (strcmp(group, "scenario") == 0) {
        if (strcmp(key, "seed") == 0) {
            gint64 seed;
            if (!cs_parse_int(value, 0, G_MAXINT64, &seed)) {
                set_input_error(err, "'%s' is not a seed; expected a whole number of at least 0", value);
                return FALSE;
            }
            s->seed = (guint64)seed;
        } else if (strcmp(key, "name") == 0) {
            if (!parse_text(value, "a name", err))
                return FALSE;
            replace_str(&s->name, g_strdup(value));
        } else if (strcmp(key, "model") == 0) {
            if (!parse_text(value, "a model name such as analytic", err))
                return FALSE;
            /* checked here, before any topology is built: a bad model is
             * reported first whatever else is wrong */
            if (cs_engine_find(value) == NULL) {
                set_input_error(err, "unknown model '%s'; expected one of %s", value, cs_engine_names());
                return FALSE;
            }
            replace_str(&s->model, g_strdup(value));
        } else if (strcmp(key, "exact") == 0) {
            if (!cs_scenario_parse_bool(value, &s->exact)) {
                set_input_error(err, "'%s' is not a truth value; expected true or false", value);
                return FALSE;
            }
        } else if (strcmp(key, "calibration") == 0) {
            if (!parse_text(value, "a parameter file", err))
                return FALSE;
            replace_str(&s->calibration, resolve_path(value, base_dir));
        } else {
            g_assert_not_reached();
        }
    } else if (strcmp(group, "output") == 0) {
        if (strcmp(key, "extra-columns") == 0 || strcmp(key, "link-stats") == 0 || strcmp(key, "alternatives") == 0) {
            gboolean *b = key[0] == 'e' ? &s->extra_columns : key[0] == 'l' ? &s->link_stats : &s->alternatives;
            if (!cs_scenario_parse_bool(value, b)) {
                set_input_error(err, "'%s' is not a truth value; expected true or false", value);
                return FALSE;
            }
        } else {
            /* Output paths stay relative to the working directory. */
            if (!parse_text(value, "a file name", err))
                return FALSE;
            char **slot = strcmp(key, "json") == 0 ? &s->json_out : strcmp(key, "csv") == 0 ? &s->csv_out
                        : strcmp(key, "svg") == 0 ? &s->svg_out : &s->trace_out;
            replace_str(slot, g_strdup(value));
        }
    } else {
        g_assert_not_reached();
    }
    if (origin != NULL)
        g_hash_table_replace(s->origins, g_strdup_printf("%s.%s", group, key), g_strdup(origin));
    return TRUE;
}

/* ---- lifecycle ----------------------------------------------------------- */

void cs_scenario_init(cs_scenario_t *s)
{
    memset(s, 0, sizeof *s);
    cs_topo_spec_init(&s->topo);
    s->coll = CS_COLL_ALLREDUCE;
    s->dtype = CS_DTYPE_FLOAT;
    s->redop = CS_REDOP_SUM;
    s->root = 0;
    /* nccl-tests defaults (src/common.cu): -b 32M -e 32M -i 1M -f 1 -n 20
     * -w 1 -c 1 -m 1. */
    s->minbytes = s->maxbytes = 32 << 20;
    s->stepbytes = 1 << 20;
    s->stepfactor = 1;
    s->iters = 20;
    s->warmup = 1;
    s->check = 1;
    s->agg_iters = 1;
    s->model = g_strdup("analytic");
    s->seed = 1;
    s->extra_columns = TRUE;
    s->env = cs_nccl_env_new();
    cs_fabric_cfg_init(&s->fabric);
    s->jobs = g_ptr_array_new_with_free_func(cs_scenario_job_free);
    s->origins = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
}

void cs_scenario_clear(cs_scenario_t *s)
{
    g_free(s->path);
    g_free(s->name);
    cs_topo_spec_clear(&s->topo);
    g_free(s->model);
    g_free(s->calibration);
    g_free(s->json_out);
    g_free(s->csv_out);
    g_free(s->svg_out);
    g_free(s->trace_out);
    if (s->jobs != NULL)
        g_ptr_array_unref(s->jobs);
    if (s->env != NULL)
        cs_nccl_env_free(s->env);
    if (s->origins != NULL)
        g_hash_table_destroy(s->origins);
    cs_fabric_cfg_clear(&s->fabric);
    cs_scenario_workload_free(s->workload);
    memset(s, 0, sizeof *s);
    cs_topo_spec_init(&s->topo);
}

/* ---- INI text ------------------------------------------------------------ */

typedef struct {
    char *group;
    char *key;
    int line;
} ini_entry_t;

static void ini_entry_free(gpointer p)
{
    ini_entry_t *e = p;
    g_free(e->group);
    g_free(e->key);
    g_free(e);
}

static char *keys_of_group(const char *group)
{
    GString *g = g_string_new(NULL);
    const cs_scenario_key_t *tables[] = { cs_scenario_keys, cs_topo_spec_keys, cs_scenario_job_keys, cs_fabric_keys,
                                          cs_workload_keys };
    gboolean job = cs_scenario_job_group_name(group) != NULL;
    if (job)
        group = "job";
    for (int t = 0; t < 5; t++)
        for (const cs_scenario_key_t *k = tables[t]; k->key != NULL; k++)
            if (strcmp(k->group, group) == 0)
                g_string_append_printf(g, "%s%s", g->len ? ", " : "", k->key);
    if (job)
        g_string_append(g, " or an NCCL_NAME (the job's own variable)");
    return g_string_free(g, FALSE);
}

static gboolean known_group(const char *g)
{
    for (int i = 0; groups[i] != NULL; i++)
        if (strcmp(groups[i], g) == 0)
            return TRUE;
    return FALSE;
}

/* Shortens a line for quoting in a message. */
static char *quote_line(const char *line)
{
    if (g_utf8_strlen(line, -1) <= 40)
        return g_strdup(line);
    g_autofree char *head = g_utf8_substring(line, 0, 37);
    return g_strdup_printf("%s...", head);
}

/* Checks the shape of every line the way GKeyFile will read it (comment,
 * [group], key = value), so that every problem gets a line number, and lists
 * the keys in file order. */
static gboolean scan_ini(const char *buf, gsize len, const char *name, GPtrArray *entries, GError **err)
{
    g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_autofree char *group = NULL;
    gsize pos = 0;
    int lineno = 0;
    while (pos < len) {
        lineno++;
        const char *start = buf + pos;
        const char *nl = memchr(start, '\n', len - pos);
        gsize n = nl != NULL ? (gsize)(nl - start) : len - pos;
        pos += n + (nl != NULL ? 1 : 0);
        if (memchr(start, '\0', n) != NULL) {
            cs_set_error_at(err, name, lineno, "NUL byte in the line; expected a text file");
            return FALSE;
        }
        g_autofree char *line = g_strndup(start, n);
        if (n > 0 && line[n - 1] == '\r')
            line[n - 1] = '\0';
        if (!g_utf8_validate(line, -1, NULL)) {
            cs_set_error_at(err, name, lineno, "the line is not valid UTF-8; expected UTF-8 text");
            return FALSE;
        }
        const char *p = line;
        while (g_ascii_isspace(*p))
            p++;
        if (*p == '\0' || *p == '#')
            continue;
        if (*p == '[') {
            const char *close = strchr(p, ']');
            const char *after = close != NULL ? close + 1 : NULL;
            while (after != NULL && (*after == ' ' || *after == '\t'))
                after++;
            if (close == NULL || *after != '\0') {
                g_autofree char *q = quote_line(p);
                cs_set_error_at(err, name, lineno, "'%s' is not a group line; expected [group] alone on the line", q);
                return FALSE;
            }
            g_free(group);
            group = g_strndup(p + 1, close - p - 1);
            const char *job = cs_scenario_job_group_name(group);
            if (job != NULL) {
                g_autofree char *q = quote_line(job);
                if (!cs_scenario_job_name_ok(job)) {
                    cs_set_error_at(err, name, lineno,
                                    "'%s' is not a job name; expected letters, digits, '-', '_' or '.' (up to 64)", q);
                    return FALSE;
                }
                char *id = g_strdup_printf("%s\n", group);
                gpointer first = g_hash_table_lookup(seen, id);
                if (first != NULL) {
                    cs_set_error_at(err, name, lineno, "[job %s] already appeared on line %d; expected each job once",
                                    q, GPOINTER_TO_INT(first));
                    g_free(id);
                    return FALSE;
                }
                g_hash_table_insert(seen, id, GINT_TO_POINTER(lineno));
                ini_entry_t *e = g_new0(ini_entry_t, 1);    /* the job itself, key NULL */
                e->group = g_strdup(group);
                e->line = lineno;
                g_ptr_array_add(entries, e);
                continue;
            }
            if (!known_group(group)) {
                g_autofree char *q = quote_line(group);
                cs_set_error_at(err, name, lineno,
                                "unknown group [%s]; expected [scenario], [topology], [collective], [nccl], [fabric], [output], [workload] or [job NAME]", q);
                return FALSE;
            }
            /* a group given twice would have GKeyFile merge the two
             * silently (a key repeated across them is caught below, but
             * not one given in each half) */
            char *gid = g_strdup_printf("%s\n", group);
            gpointer gfirst = g_hash_table_lookup(seen, gid);
            if (gfirst != NULL) {
                g_autofree char *q = quote_line(group);
                cs_set_error_at(err, name, lineno, "[%s] already appeared on line %d; expected each group once",
                                q, GPOINTER_TO_INT(gfirst));
                g_free(gid);
                return FALSE;
            }
            g_hash_table_insert(seen, gid, GINT_TO_POINTER(lineno));
            continue;
        }
        const char *eq = strchr(p, '=');
        if (eq == NULL) {
            g_autofree char *q = quote_line(p);
            cs_set_error_at(err, name, lineno, "'%s' is not a key = value line%s; expected key = value, [group] or a # comment",
                            q, *p == ';' ? " (comments start with #)" : "");
            return FALSE;
        }
        g_autofree char *key = g_strndup(p, eq - p);
        g_strchomp(key);
        if (*key == '\0') {
            cs_set_error_at(err, name, lineno, "empty key name; expected key = value");
            return FALSE;
        }
        if (group == NULL) {
            g_autofree char *q = quote_line(key);
            cs_set_error_at(err, name, lineno, "key '%s' comes before any group; expected a [group] line first", q);
            return FALSE;
        }
        if (cs_scenario_job_group_name(group) != NULL && cs_scenario_is_nccl_name(key)) {
            /* a job's own NCCL variable */
        } else if (strcmp(group, "nccl") == 0) {
            if (!cs_scenario_is_nccl_name(key)) {
                g_autofree char *q = quote_line(key);
                cs_set_error_at(err, name, lineno, "'%s' is not an NCCL_* variable; expected NCCL_NAME = value in [nccl]", q);
                return FALSE;
            }
        } else if (cs_scenario_key_find(group, key) == NULL) {
            g_autofree char *q = quote_line(key);
            g_autofree char *keys = keys_of_group(group);
            cs_set_error_at(err, name, lineno, "unknown key '%s' in [%s]; expected one of %s", q, group, keys);
            return FALSE;
        }
        char *id = g_strdup_printf("%s\n%s", group, key);
        gpointer first = g_hash_table_lookup(seen, id);
        if (first != NULL) {
            cs_set_error_at(err, name, lineno, "key '%s' in [%s] was already set on line %d; expected each key once",
                            key, group, GPOINTER_TO_INT(first));
            g_free(id);
            return FALSE;
        }
        g_hash_table_insert(seen, id, GINT_TO_POINTER(lineno));
        ini_entry_t *e = g_new0(ini_entry_t, 1);
        e->group = g_strdup(group);
        e->key = g_steal_pointer(&key);
        e->line = lineno;
        g_ptr_array_add(entries, e);
    }
    return TRUE;
}

/* Scenario files are a few dozen lines; a limit keeps a wrong argument (a
 * log, a binary) from being read whole (cs_read_file refuses it before
 * reading; this is for scenarios given in memory). */
#define MAX_SCENARIO_BYTES CS_READ_LIMIT_INI

/* Whether every backslash of a raw value starts an escape GKeyFile knows
 * (\s \n \t \r \\; glib/gkeyfile.c g_key_file_parse_value_as_string). */
static gboolean escapes_ok(const char *raw)
{
    for (const char *p = raw; *p != '\0'; p++) {
        if (*p != '\\')
            continue;
        p++;
        if (*p == '\0' || strchr("sntr\\", *p) == NULL)
            return FALSE;
    }
    return TRUE;
}

static gboolean load_mem(cs_scenario_t *s, const char *buf, gsize len, const char *name, GError **err)
{
    if (len > MAX_SCENARIO_BYTES) {
        cs_set_error_at(err, name, 0, "the file is larger than 1 MiB; expected a scenario INI file");
        return FALSE;
    }
    /* Editors on Windows start UTF-8 files with a byte-order mark. */
    if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0) {
        buf += 3;
        len -= 3;
    }
    g_autoptr(GPtrArray) entries = g_ptr_array_new_with_free_func(ini_entry_free);
    if (!scan_ini(buf, len, name, entries, err))
        return FALSE;

    g_autoptr(GKeyFile) kf = g_key_file_new();
    g_autoptr(GError) kerr = NULL;
    if (!g_key_file_load_from_data(kf, buf, len, G_KEY_FILE_NONE, &kerr)) {
        /* The scan accepts only what GKeyFile accepts; this is a backstop. */
        cs_set_error_at(err, name, 0, "%s; expected an INI file", kerr->message);
        return FALSE;
    }
    g_autofree char *base_dir = g_path_get_dirname(name);
    for (guint i = 0; i < entries->len; i++) {
        const ini_entry_t *e = g_ptr_array_index(entries, i);
        g_autoptr(GError) verr = NULL;
        if (e->key == NULL) {
            g_autofree char *where = g_strdup_printf("%s:%d", name, e->line);
            cs_scenario_job_get(s, cs_scenario_job_group_name(e->group), where);
            continue;
        }
        /* GKeyFile returns the raw text *and* an error for a bad escape,
         * and GLib 2.74 sets that error twice for a value with several
         * (a GLib warning): check the escapes before unescaping */
        g_autofree char *raw = g_key_file_get_value(kf, e->group, e->key, NULL);
        g_autofree char *value = raw != NULL && escapes_ok(raw)
                                     ? g_key_file_get_string(kf, e->group, e->key, &verr) : NULL;
        if (value == NULL || verr != NULL) {
            cs_set_error_at(err, name, e->line,
                            "%s: the value has a bad escape; expected \\ only before s, n, t, r or \\", e->key);
            return FALSE;
        }
        g_strstrip(value);
        g_autofree char *origin = strcmp(e->group, "nccl") == 0 || cs_scenario_is_nccl_name(e->key)
                                      ? g_strdup_printf("%s:%d", name, e->line)
                                      : g_strdup_printf("%s:%d: %s", name, e->line, e->key);
        if (!cs_scenario_set(s, e->group, e->key, value, origin, base_dir, &verr)) {
            cs_set_error_at(err, name, e->line, "%s: %s", e->key, verr->message);
            return FALSE;
        }
    }
    return TRUE;
}

gboolean cs_scenario_load_mem(cs_scenario_t *s, const char *buf, gsize len, const char *name, GError **err)
{
    if (load_mem(s, buf, len, name, err))
        return TRUE;
    if (err != NULL)
        cs_scenario_error_one_line(*err);
    return FALSE;
}

gboolean cs_scenario_load(cs_scenario_t *s, const char *path, GError **err)
{
    g_autofree char *buf = NULL;
    gsize len = 0;
    if (!cs_read_file(path, "scenario", "INI file", CS_READ_LIMIT_INI, &buf, &len, err))
        return FALSE;
    if (!cs_scenario_load_mem(s, buf, len, path, err))
        return FALSE;
    replace_str(&s->path, g_strdup(path));
    return TRUE;
}

/* ---- checks and sizes ---------------------------------------------------- */

/* Where a value came from, for messages: "FILE:LINE: key" or
 * "collsim: -b"; NULL when it kept its default. */
static const char *origin_of(const cs_scenario_t *s, const char *id)
{
    return s->origins != NULL ? g_hash_table_lookup(s->origins, id) : NULL;
}

static void set_origin_error(GError **err, const cs_scenario_t *s, const char *id, const char *flag,
                             const char *fmt, ...) G_GNUC_PRINTF(5, 6);
static void set_origin_error(GError **err, const cs_scenario_t *s, const char *id, const char *flag,
                             const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cs_set_value_error_v(err, origin_of(s, id), flag, fmt, ap);
    va_end(ap);
}

static guint64 next_size(const cs_scenario_t *s, guint64 size, gboolean *ok_p)
{
    if (s->stepfactor > 1) {
        guint64 f = (guint64)s->stepfactor;
        *ok_p = size <= G_MAXUINT64 / f && size > 0;
        return size * f;
    }
    *ok_p = s->stepbytes > 0 && size <= G_MAXUINT64 - s->stepbytes;
    return size + s->stepbytes;
}

/* nccl-tests's loop (src/common.cu TimeTest): from -b while <= -e, times -f
 * when -f > 1, else plus -i. Stops at 'limit' sizes. */
static int sweep(const cs_scenario_t *s, guint64 *sizes, int limit)
{
    int n = 0;
    guint64 size = s->minbytes;
    while (size <= s->maxbytes && n < limit) {
        if (sizes != NULL)
            sizes[n] = size;
        n++;
        gboolean ok;
        size = next_size(s, size, &ok);
        if (!ok)
            break;
    }
    return n;
}

guint64 *cs_scenario_sizes(const cs_scenario_t *s, int *n_p)
{
    int n = sweep(s, NULL, CS_SCENARIO_MAX_SIZES);
    guint64 *sizes = g_new(guint64, n > 0 ? n : 1);
    sweep(s, sizes, n);
    *n_p = n;
    return sizes;
}

static gboolean topo_flag_set(const cs_topo_spec_t *t, const char *key)
{
    if (strcmp(key, "gpu") == 0) return t->gpu != NULL;
    if (strcmp(key, "sockets") == 0) return t->sockets > 0;
    if (strcmp(key, "cpu") == 0) return t->cpu != NULL;
    if (strcmp(key, "p2p") == 0) return t->p2p != -1;
    if (strcmp(key, "nic") == 0) return t->nic != NULL;
    if (strcmp(key, "nics-per-node") == 0) return t->nics_per_node > 0;
    if (strcmp(key, "fabric") == 0) return t->fabric != NULL;
    if (strcmp(key, "oversubscription") == 0) return t->oversubscription > 0;
    if (strcmp(key, "nvlink-bridge") == 0) return t->nvlink_bridge != CS_BRIDGE_UNSET;
    return FALSE;
}

static gboolean validate_topology(const cs_scenario_t *s, GError **err)
{
    const cs_topo_spec_t *t = &s->topo;
    if (t->file != NULL && t->preset != NULL) {
        set_origin_error(err, s, "topology.preset", "--topo",
                         "both a preset (%s) and a file (%s) are given; expected one of them", t->preset, t->file);
        return FALSE;
    }
    if (t->file == NULL && t->preset == NULL) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                    "collsim: no topology given; expected --topo PRESET|FILE or [topology] preset or file%s",
                    s->path != NULL ? " in the scenario" : "");
        return FALSE;
    }
    if (t->file == NULL) {
        /* a fixed machine (every preset but pcie) takes no node option */
        static const char *const node_keys[] = { "gpu", "sockets", "cpu", "p2p", "nvlink-bridge", NULL };
        for (int i = 0; node_keys[i] != NULL; i++) {
            if (!topo_flag_set(t, node_keys[i]))
                continue;
            g_autofree char *id = g_strdup_printf("topology.%s", node_keys[i]);
            g_autofree char *flag = g_strdup_printf("--%s", node_keys[i]);
            const char *o = origin_of(s, id);
            gboolean from_flag = o == NULL || g_str_has_prefix(o, "collsim: ");
            g_autofree char *why = cs_preset_node_option_refusal(t->preset, from_flag ? flag : node_keys[i]);
            if (why != NULL) {
                set_origin_error(err, s, id, flag, "%s", why);
                return FALSE;
            }
        }
        return TRUE;
    }
    /* A file names its own GPUs, links and NICs: the builders' options apply to a
     * file only when --nodes replicates it into a cluster. */
    static const char *const node_keys[] = { "gpu", "sockets", "cpu", "p2p", "nvlink-bridge", NULL };
    for (int i = 0; node_keys[i] != NULL; i++) {
        if (topo_flag_set(t, node_keys[i])) {
            g_autofree char *id = g_strdup_printf("topology.%s", node_keys[i]);
            g_autofree char *flag = g_strdup_printf("--%s", node_keys[i]);
            set_origin_error(err, s, id, flag, "applies to presets; expected no %s with the topology file %s",
                             node_keys[i], t->file);
            return FALSE;
        }
    }
    static const char *const net_keys[] = { "nic", "nics-per-node", "fabric", "oversubscription", NULL };
    for (int i = 0; net_keys[i] != NULL && t->nodes <= 1; i++) {
        if (topo_flag_set(t, net_keys[i])) {
            g_autofree char *id = g_strdup_printf("topology.%s", net_keys[i]);
            g_autofree char *flag = g_strdup_printf("--%s", net_keys[i]);
            set_origin_error(err, s, id, flag,
                             "a topology file is used as it is; expected --nodes N > 1 to build a cluster of it");
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean validate(const cs_scenario_t *s, GError **err)
{
    if (s->minbytes > s->maxbytes) {
        gboolean max_set = origin_of(s, "collective.maxbytes") != NULL;
        g_autofree char *lo = g_strdup_printf("%" G_GUINT64_FORMAT, s->minbytes);
        g_autofree char *hi = g_strdup_printf("%" G_GUINT64_FORMAT, s->maxbytes);
        if (max_set)
            set_origin_error(err, s, "collective.maxbytes", "-e",
                             "maximum size %s is below the minimum size %s; expected at least the minimum", hi, lo);
        else
            set_origin_error(err, s, "collective.minbytes", "-b",
                             "minimum size %s is above the maximum size %s (default 32M); expected at most the maximum (set -e too)",
                             lo, hi);
        return FALSE;
    }
    int n = sweep(s, NULL, CS_SCENARIO_MAX_SIZES + 1);
    if (n > CS_SCENARIO_MAX_SIZES) {
        gboolean factor = s->stepfactor > 1;
        set_origin_error(err, s, factor ? "collective.stepfactor" : "collective.stepbytes", factor ? "-f" : "-i",
                         "the sweep from %" G_GUINT64_FORMAT " to %" G_GUINT64_FORMAT
                         " bytes has more than %d sizes; expected a larger step (or -f 2)",
                         s->minbytes, s->maxbytes, CS_SCENARIO_MAX_SIZES);
        return FALSE;
    }
    if (!cs_scenario_fabric_check(&s->fabric, err))
        return FALSE;
    return validate_topology(s, err);
}

gboolean cs_scenario_validate(const cs_scenario_t *s, GError **err)
{
    if (validate(s, err))
        return TRUE;
    if (err != NULL)
        cs_scenario_error_one_line(*err);
    return FALSE;
}

/* ---- writing back -------------------------------------------------------- */

char *cs_scenario_size_str(guint64 b)
{
    static const char units[] = { 'G', 'M', 'K' };
    for (int i = 0; i < 3; i++) {
        guint64 m = (guint64)1 << (10 * (3 - i));
        if (b >= m && b % m == 0)
            return g_strdup_printf("%" G_GUINT64_FORMAT "%c", b / m, units[i]);
    }
    return g_strdup_printf("%" G_GUINT64_FORMAT, b);
}

static void kf_set_size(GKeyFile *kf, const char *key, guint64 v)
{
    g_autofree char *s = cs_scenario_size_str(v);
    g_key_file_set_string(kf, "collective", key, s);
}

static void kf_set_opt(GKeyFile *kf, const char *group, const char *key, const char *v)
{
    if (v != NULL)
        g_key_file_set_string(kf, group, key, v);
}

/* An input path as a dump must hold it: absolute, so that the dump reads
 * the same file wherever it is saved (a scenario's input paths are
 * relative to its own directory; the path held here is relative to the
 * working directory). */
static void kf_set_path(GKeyFile *kf, const char *group, const char *key, const char *v)
{
    if (v != NULL) {
        g_autofree char *abs = g_canonicalize_filename(v, NULL);
        g_key_file_set_string(kf, group, key, abs);
    }
}

char *cs_scenario_to_ini(const cs_scenario_t *s)
{
    g_autoptr(GKeyFile) kf = g_key_file_new();
    kf_set_opt(kf, "scenario", "name", s->name);
    kf_set_opt(kf, "scenario", "model", s->model);
    g_autofree char *seed = g_strdup_printf("%" G_GUINT64_FORMAT, s->seed);
    g_key_file_set_string(kf, "scenario", "seed", seed);
    kf_set_path(kf, "scenario", "calibration", s->calibration);
    g_key_file_set_string(kf, "scenario", "exact", s->exact ? "true" : "false");

    const cs_topo_spec_t *t = &s->topo;
    kf_set_path(kf, "topology", "file", t->file);
    kf_set_opt(kf, "topology", "preset", t->preset);
    kf_set_opt(kf, "topology", "gpu", t->gpu);
    if (t->gpus > 0)
        g_key_file_set_integer(kf, "topology", "gpus", t->gpus);
    if (t->sockets > 0)
        g_key_file_set_integer(kf, "topology", "sockets", t->sockets);
    kf_set_opt(kf, "topology", "cpu", t->cpu);
    if (t->p2p != -1)
        g_key_file_set_string(kf, "topology", "p2p", t->p2p ? "on" : "off");
    if (t->nodes > 0)
        g_key_file_set_integer(kf, "topology", "nodes", t->nodes);
    kf_set_opt(kf, "topology", "nic", t->nic);
    if (t->nics_per_node > 0)
        g_key_file_set_integer(kf, "topology", "nics-per-node", t->nics_per_node);
    kf_set_opt(kf, "topology", "fabric", t->fabric);
    if (t->oversubscription > 0) {
        char buf[G_ASCII_DTOSTR_BUF_SIZE];
        g_key_file_set_string(kf, "topology", "oversubscription", g_ascii_dtostr(buf, sizeof buf, t->oversubscription));
    }
    if (t->nvlink_bridge != CS_BRIDGE_UNSET)
        g_key_file_set_string(kf, "topology", "nvlink-bridge", t->nvlink_bridge == CS_BRIDGE_PAIRS ? "pairs" : "none");
    kf_set_opt(kf, "topology", "visible-gpus", t->visible_gpus);

    g_key_file_set_string(kf, "collective", "op", cs_coll_name(s->coll));
    g_key_file_set_string(kf, "collective", "datatype", cs_dtype_name(s->dtype));
    g_key_file_set_string(kf, "collective", "redop", cs_redop_name(s->redop));
    g_key_file_set_integer(kf, "collective", "root", s->root);
    kf_set_size(kf, "minbytes", s->minbytes);
    kf_set_size(kf, "maxbytes", s->maxbytes);
    kf_set_size(kf, "stepbytes", s->stepbytes);
    g_key_file_set_integer(kf, "collective", "stepfactor", s->stepfactor > 1 ? (int)s->stepfactor : 1);
    g_key_file_set_integer(kf, "collective", "iters", s->iters);
    g_key_file_set_integer(kf, "collective", "warmup", s->warmup);
    g_key_file_set_integer(kf, "collective", "check", s->check);
    g_key_file_set_integer(kf, "collective", "agg-iters", s->agg_iters);
    cs_scenario_layout_to_kf(s, kf);

    if (s->env != NULL) {
        g_autoptr(GPtrArray) names = cs_nccl_env_names(s->env);
        for (guint i = 0; i < names->len; i++) {
            const char *n = g_ptr_array_index(names, i);
            g_key_file_set_string(kf, "nccl", n, cs_nccl_env_get(s->env, n));
        }
    }

    cs_scenario_fabric_to_kf(&s->fabric, kf);

    kf_set_opt(kf, "output", "json", s->json_out);
    kf_set_opt(kf, "output", "csv", s->csv_out);
    kf_set_opt(kf, "output", "svg", s->svg_out);
    g_key_file_set_string(kf, "output", "extra-columns", s->extra_columns ? "true" : "false");
    kf_set_opt(kf, "output", "trace", s->trace_out);
    g_key_file_set_string(kf, "output", "link-stats", s->link_stats ? "true" : "false");
    g_key_file_set_string(kf, "output", "alternatives", s->alternatives ? "true" : "false");
    cs_scenario_jobs_to_kf(s, kf);
    cs_scenario_workload_to_kf(s, kf);
    return g_key_file_to_data(kf, NULL, NULL);
}
