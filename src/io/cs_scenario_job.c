/* [job NAME] groups of a scenario: several jobs sharing one machine, each
 * with its GPUs, collective, size, start time and calls (docs/
 * collsim-scenario.5). Parsed here; run by `collsim run` with an engine
 * that simulates contention (cs_engine_run_jobs). And how the job's ranks
 * are launched (its process layout: [collective] procs-per-node and
 * nthreads), which sets what the engines charge to launch a call. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "io/cs_scenario-int.h"
#include "util/cs_error.h"
#include "util/cs_units.h"

const cs_scenario_key_t cs_scenario_job_keys[] = {
    { "job", "nodes", 0, NULL, NULL, "LIST", "Nodes the job runs on: indices and ranges, 0-3,8 (default: all)" },
    { "job", "gpus", 0, NULL, NULL, "LIST", "GPUs of each of those nodes, by local index: 0-3 (default: all)" },
    { "job", "op", 0, NULL, NULL, "COLL", "Collective (default: [collective] op)" },
    { "job", "datatype", 0, NULL, NULL, "TYPE", "Data type (default: [collective] datatype)" },
    { "job", "redop", 0, NULL, NULL, "OP", "Reduction (default: [collective] redop)" },
    { "job", "root", 0, NULL, NULL, "RANK", "Root rank within the job (default: [collective] root)" },
    { "job", "size", 0, NULL, NULL, "SIZE", "Size of each call, as nccl-tests's size column (required)" },
    { "job", "start", 0, NULL, NULL, "TIME", "When its first call is launched: 0, 250us, 1.5ms (default: 0)" },
    { "job", "iters", 0, NULL, NULL, "N", "Calls back to back (default: 1)" },
    /* (any NCCL_* name is a key too: the job's own variable) */
    { NULL, NULL, 0, NULL, NULL, NULL, NULL }
};

const char *cs_scenario_job_group_name(const char *group)
{
    return g_str_has_prefix(group, "job ") ? group + 4 : NULL;
}

gboolean cs_scenario_job_name_ok(const char *name)
{
    if (name == NULL || *name == '\0' || strlen(name) > 64)
        return FALSE;
    for (const char *p = name; *p != '\0'; p++)
        if (!g_ascii_isalnum(*p) && *p != '-' && *p != '_' && *p != '.')
            return FALSE;
    return TRUE;
}

void cs_scenario_job_free(gpointer p)
{
    cs_scenario_job_t *j = p;
    if (j == NULL)
        return;
    g_free(j->name);
    g_free(j->nodes);
    g_free(j->gpus);
    if (j->env != NULL)
        cs_nccl_env_free(j->env);
    g_free(j->origin);
    g_free(j);
}

cs_scenario_job_t *cs_scenario_job_get(cs_scenario_t *s, const char *name, const char *origin)
{
    for (guint i = 0; i < s->jobs->len; i++) {
        cs_scenario_job_t *j = g_ptr_array_index(s->jobs, i);
        if (strcmp(j->name, name) == 0)
            return j;
    }
    cs_scenario_job_t *j = g_new0(cs_scenario_job_t, 1);
    j->name = g_strdup(name);
    j->coll = j->dtype = j->redop = j->root = -1;
    j->iters = 1;
    j->origin = g_strdup(origin);
    g_ptr_array_add(s->jobs, j);
    return j;
}

gboolean cs_scenario_index_list(const char *v, int n, const char *what, gboolean *mask, GError **err)
{
    return cs_scenario_index_list_first(v, n, what, 0, mask, err);
}

gboolean cs_scenario_index_list_first(const char *v, int n, const char *what, int first, gboolean *mask,
                                      GError **err)
{
    int marked = 0;
    if (mask != NULL)
        memset(mask, 0, sizeof(gboolean) * (gsize)MAX(0, n));
    if (g_ascii_strcasecmp(v, "all") == 0) {
        for (int i = 0; mask != NULL && i < n; i++)
            mask[i] = TRUE;
        return TRUE;
    }
    g_auto(GStrv) parts = g_strsplit(v, ",", -1);
    if (parts[0] == NULL) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "empty list; expected %s indices such as 0-3,8", what);
        return FALSE;
    }
    for (int i = 0; parts[i] != NULL; i++) {
        char *p = g_strstrip(parts[i]);
        char *dash = strchr(p, '-');
        gint64 lo, hi;
        gboolean ok;
        if (dash != NULL) {
            *dash = '\0';
            ok = cs_parse_int(g_strstrip(p), 0, G_MAXINT, &lo) && cs_parse_int(g_strstrip(dash + 1), 0, G_MAXINT, &hi);
        } else {
            ok = cs_parse_int(p, 0, G_MAXINT, &lo);
            hi = lo;
        }
        if (!ok || hi < lo) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "'%s' is not an index list; expected %s indices such as 0-3,8",
                        v, what);
            return FALSE;
        }
        if (hi >= n) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s %" G_GINT64_FORMAT " does not exist; expected 0 to %d",
                        what, hi, n - 1);
            return FALSE;
        }
        for (gint64 k = lo; mask != NULL && k <= hi; k++)
            if (!mask[k] && (first <= 0 || marked < first)) {
                mask[k] = TRUE;
                marked++;
            }
    }
    return TRUE;
}

gboolean cs_scenario_job_set(cs_scenario_job_t *j, const char *key, const char *v, const char *origin, GError **err)
{
    if (cs_scenario_is_nccl_name(key)) {
        /* a job launched with its own environment (mpirun -x per job):
         * NCCL_IB_SL to put it on another virtual lane, NCCL_ALGO, ... */
        if (j->env == NULL)
            j->env = cs_nccl_env_new();
        cs_nccl_env_set(j->env, key, v, origin);
    } else if (strcmp(key, "nodes") == 0 || strcmp(key, "gpus") == 0) {
        gboolean nodes = key[0] == 'n';
        if (!cs_scenario_index_list(v, G_MAXINT, nodes ? "node" : "GPU", NULL, err))
            return FALSE;
        char **dst = nodes ? &j->nodes : &j->gpus;
        g_free(*dst);
        *dst = g_strdup(v);
    } else if (strcmp(key, "op") == 0) {
        return cs_scenario_parse_enum(key, v, &j->coll, err);
    } else if (strcmp(key, "datatype") == 0) {
        return cs_scenario_parse_enum(key, v, &j->dtype, err);
    } else if (strcmp(key, "redop") == 0) {
        return cs_scenario_parse_enum(key, v, &j->redop, err);
    } else if (strcmp(key, "root") == 0) {
        return cs_scenario_parse_count(v, 0, G_MAXINT, "a rank number from 0", &j->root, err);
    } else if (strcmp(key, "size") == 0) {
        guint64 b;
        if (!cs_parse_size(v, &b) || b == 0) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "'%s' is not a size; expected a size of at least 1 byte such as 1G", v);
            return FALSE;
        }
        j->size = b;
    } else if (strcmp(key, "start") == 0) {
        double t;
        if (!cs_parse_time(v, &t) || t > 3600) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "'%s' is not a start time; expected 0 to 1 hour such as 0, 250us or 1.5ms", v);
            return FALSE;
        }
        j->start_s = t;
    } else if (strcmp(key, "iters") == 0) {
        return cs_scenario_parse_count(v, 1, 100000, "a number of calls from 1 to 100000", &j->iters, err);
    } else {
        g_assert_not_reached();
    }
    return TRUE;
}

void cs_scenario_jobs_to_kf(const cs_scenario_t *s, GKeyFile *kf)
{
    for (guint i = 0; i < s->jobs->len; i++) {
        const cs_scenario_job_t *j = g_ptr_array_index(s->jobs, i);
        g_autofree char *g = g_strconcat("job ", j->name, NULL);
        if (j->nodes != NULL)
            g_key_file_set_string(kf, g, "nodes", j->nodes);
        if (j->gpus != NULL)
            g_key_file_set_string(kf, g, "gpus", j->gpus);
        if (j->coll >= 0)
            g_key_file_set_string(kf, g, "op", cs_coll_name((cs_coll_t)j->coll));
        if (j->dtype >= 0)
            g_key_file_set_string(kf, g, "datatype", cs_dtype_name((cs_dtype_t)j->dtype));
        if (j->redop >= 0)
            g_key_file_set_string(kf, g, "redop", cs_redop_name((cs_redop_t)j->redop));
        if (j->root >= 0)
            g_key_file_set_integer(kf, g, "root", j->root);
        if (j->size > 0) {
            g_autofree char *sz = cs_scenario_size_str(j->size);
            g_key_file_set_string(kf, g, "size", sz);
        }
        char buf[G_ASCII_DTOSTR_BUF_SIZE];
        /* nanoseconds to the picosecond: what the engines resolve */
        g_autofree char *st = g_strconcat(g_ascii_formatd(buf, sizeof buf, "%.15g", round(j->start_s * 1e12) / 1e3),
                                          "ns", NULL);
        g_key_file_set_string(kf, g, "start", st);
        g_key_file_set_integer(kf, g, "iters", j->iters);
        g_autoptr(GPtrArray) names = j->env != NULL ? cs_nccl_env_names(j->env) : NULL;
        for (guint k = 0; names != NULL && k < names->len; k++) {
            const char *n = g_ptr_array_index(names, k);
            g_key_file_set_string(kf, g, n, cs_nccl_env_get(j->env, n));
        }
    }
}

cs_nccl_env_t *cs_scenario_job_env(const cs_scenario_t *s, const cs_scenario_job_t *j)
{
    cs_nccl_env_t *e = cs_nccl_env_new();
    const cs_nccl_env_t *layers[2] = { s->env, j->env };
    for (int l = 0; l < 2; l++) {
        if (layers[l] == NULL)
            continue;
        g_autoptr(GPtrArray) names = cs_nccl_env_names(layers[l]);
        for (guint k = 0; k < names->len; k++) {
            const char *n = g_ptr_array_index(names, k);
            cs_nccl_env_set(e, n, cs_nccl_env_get(layers[l], n), cs_nccl_env_origin(layers[l], n));
        }
    }
    return e;
}

/* ---- the process layout ---------------------------------------------------- */

gboolean cs_scenario_layout_set(cs_scenario_t *s, const char *key, const char *v, GError **err)
{
    gint64 n;
    if (strcmp(key, "procs-per-node") == 0) {
        /* (a node holds at most a few hundred GPUs: an NVL72 rack as one) */
        if (!cs_parse_int(v, 1, 1024, &n)) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                        "'%s' is not a process count; expected a whole number from 1 to 1024 (processes per node, "
                        "as mpirun -N)", v);
            return FALSE;
        }
        s->procs_per_node = (int)n;
    } else if (strcmp(key, "nthreads") == 0) {
        if (!cs_parse_int(v, 1, 1024, &n)) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "'%s' is not a thread count; expected a whole number from 1 to 1024",
                        v);
            return FALSE;
        }
        s->nthreads = (int)n;
    } else {
        g_assert_not_reached();
    }
    return TRUE;
}

void cs_scenario_layout_to_kf(const cs_scenario_t *s, GKeyFile *kf)
{
    if (s->procs_per_node > 0)
        g_key_file_set_integer(kf, "collective", "procs-per-node", s->procs_per_node);
    if (s->nthreads > 1)
        g_key_file_set_integer(kf, "collective", "nthreads", s->nthreads);
}
