/* Scenario -> design -> prediction, and KEY=VALUE on a scenario (see
 * cs_predict.h). The steps of a design are collsim run's: validate, model,
 * calibration, topology, root, communicator, sweep, notes. */
#include "config.h"
#include "cli/cs_predict.h"
#include "io/cs_run_args.h"
#include "io/cs_scenario-int.h"
#include "models/cs_decide.h"
#include "io/cs_writers-int.h"
#include "util/cs_error.h"
#include "util/cs_units.h"

#include <math.h>
#include <string.h>

/* ---- a design made ready to price -------------------------------------------- */

void cs_design_init(cs_design_t *d)
{
    memset(d, 0, sizeof *d);
    cs_params_init_defaults(&d->params);
}

void cs_design_clear(cs_design_t *d)
{
    cs_comm_free(d->comm);
    cs_topo_free(d->topo);
    cs_params_clear(&d->params);
    memset(d, 0, sizeof *d);
}

gboolean cs_design_model(cs_design_t *d, const cs_scenario_t *s, GError **err)
{
    if (!cs_scenario_validate(s, err))
        return FALSE;
    d->ops = cs_engine_find(s->model);
    if (d->ops == NULL) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: unknown model '%s'; expected one of %s",
                    cs_run_args_origin(s, "scenario.model", "collsim: --model"), s->model, cs_engine_names());
        return FALSE;
    }
    return s->calibration == NULL || cs_params_load(&d->params, s->calibration, err);
}

gboolean cs_design_build(cs_design_t *d, const cs_scenario_t *s, GError **err)
{
    d->topo = cs_topo_spec_build(&s->topo, err);
    if (d->topo == NULL)
        return FALSE;
    if (s->jobs->len > 0)
        return TRUE;
    if (cs_coll_has_root(s->coll) && s->root >= d->topo->ngpus) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: root %d is not a rank; expected 0 to %d",
                    cs_run_args_origin(s, "collective.root", "collsim: -r"), s->root, d->topo->ngpus - 1);
        return FALSE;
    }
    d->comm = cs_comm_new(d->topo, s->env, err);
    return d->comm != NULL && cs_run_args_apply_layout(s, d->comm, err);
}

cs_engine_job_t cs_design_job(const cs_design_t *d, const cs_scenario_t *s)
{
    return (cs_engine_job_t){
        .topo = d->topo, .comm = d->comm, .params = &d->params, .coll = s->coll, .dtype = s->dtype,
        .redop = s->redop, .root = cs_coll_has_root(s->coll) ? s->root : -1, .seed = s->seed, .exact = s->exact,
        .fabric = &s->fabric,
    };
}

void cs_predict_header_notes(cs_result_t *r, const cs_scenario_t *s, const GPtrArray *warnings)
{
    if (s->name != NULL) {
        g_free(r->source);
        r->source = g_strdup(s->name);
    }
    guint at = 0;
    /* (the pcie preset's gpus is its size, not a restriction) */
    if (s->topo.gpus > 0 && g_strcmp0(s->topo.preset, "pcie") != 0)
        g_ptr_array_insert(r->notes, at++,
                           g_strdup_printf("using the first %d GPU(s) of each node (-g/--gpus)", s->topo.gpus));
    for (guint i = 0; i < warnings->len; i++)
        g_ptr_array_insert(r->notes, at++, g_strdup_printf("warning: %s", (const char *)g_ptr_array_index(warnings, i)));
}

/* nccl-tests allocates a send and a receive buffer of the largest size on
 * every GPU (common.cu AllocateBuffs: ncclMemAlloc or cudaMalloc of
 * maxBytes each, and one of the receive size for -c 1): where they do not
 * fit the smallest GPU's memory the run cannot start, which the
 * prediction does not see. NULL when they fit or a capacity is unknown. */
static char *buffers_warning(const cs_topo_t *t, guint64 maxbytes, gboolean check)
{
    const cs_gpu_model_t *least = NULL;
    for (int d = 0; d < t->ndevs; d++) {
        const cs_gpu_model_t *g = t->devs[d].kind == CS_DEV_GPU ? t->devs[d].gpu : NULL;
        if (g != NULL && g->mem_bytes > 0 && (least == NULL || g->mem_bytes < least->mem_bytes))
            least = g;
    }
    int nbuf = check ? 3 : 2;   /* with -c 1 (nccl-tests' default) an expected buffer, at most the size */
    if (least == NULL || (double)nbuf * (double)maxbytes <= least->mem_bytes)
        return NULL;
    g_autofree char *sz = cs_format_size(maxbytes);
    return g_strdup_printf("nccl-tests allocates a send and a receive buffer of the largest size on every GPU%s "
                           "(common.cu AllocateBuffs): up to %d x %s do not fit the %.0f GiB of an %s, so that run "
                           "would not start; the rows price the sizes as if they fitted",
                           check ? ", and with -c 1 one for the expected result" : "", nbuf, sz,
                           least->mem_bytes / CS_GIB, least->marketing);
}

void cs_predict_sweep_warnings(const cs_scenario_t *s, const cs_topo_t *t, const guint64 *sizes, int nsizes,
                               GPtrArray *warnings)
{
    char *mw = t != NULL && nsizes > 0 ? buffers_warning(t, sizes[nsizes - 1], s->check != 0) : NULL;
    if (mw != NULL)
        g_ptr_array_add(warnings, mw);
    /* nccl-tests -m N groups N calls (ncclGroupStart/End), which NCCL
     * plans together (numPipeOps): the engines price one call at a time */
    if (s->agg_iters > 1)
        g_ptr_array_add(warnings, g_strdup_printf("agg-iters %d (-m): nccl-tests groups %d calls per iteration, "
                                                  "which NCCL plans and launches together; the engines price one "
                                                  "call at a time (NCCL's numPipeOps 1), so the rows are one call's",
                                                  s->agg_iters, s->agg_iters));
}

/* ---- a sweep priced at once -------------------------------------------------- */

void cs_prediction_free(cs_prediction_t *p)
{
    if (p == NULL)
        return;
    cs_result_free(p->result);
    if (p->link_stats != NULL)
        g_ptr_array_unref(p->link_stats);
    g_free(p->topo_desc);
    g_free(p->sizes);
    g_free(p);
}

/* The engine's statistics come for the rows that ran; one slot per row. */
static GPtrArray *stats_per_row(const cs_result_t *r, GPtrArray *ran)
{
    GPtrArray *per = g_ptr_array_new_with_free_func((GDestroyNotify)cs_link_stats_free);
    for (guint i = 0; i < r->rows->len; i++) {
        const cs_result_row_t *row = &g_array_index(r->rows, cs_result_row_t, i);
        gboolean moved = row->time_us[CS_OOP] > 0 && ran->len > 0;
        g_ptr_array_add(per, moved ? g_ptr_array_steal_index(ran, 0) : NULL);
    }
    return per;
}

static cs_prediction_t *price(const cs_scenario_t *s, const cs_design_t *d, gboolean want_stats, GError **err)
{
    g_autoptr(cs_prediction_t) p = g_new0(cs_prediction_t, 1);
    p->sizes = cs_scenario_sizes(s, &p->nsizes);
    g_autoptr(GPtrArray) ran = want_stats && d->ops->link_stats != NULL
        ? g_ptr_array_new_with_free_func((GDestroyNotify)cs_link_stats_free) : NULL;
    cs_engine_job_t job = cs_design_job(d, s);
    job.link_stats = ran;
    p->result = cs_engine_run_sweep(d->ops, &job, p->sizes, p->nsizes, err);
    if (p->result == NULL)
        return NULL;
    g_autoptr(GPtrArray) warnings = cs_nccl_env_warnings(s->env);
    cs_engine_ignored_settings(d->ops, &s->fabric, s->env, warnings);
    cs_engine_ignored_exact(d->ops, s->exact, warnings);
    cs_predict_sweep_warnings(s, d->topo, p->sizes, p->nsizes, warnings);
    cs_predict_header_notes(p->result, s, warnings);
    if (ran != NULL)
        p->link_stats = stats_per_row(p->result, ran);
    p->ops = d->ops;
    p->topo_desc = g_strdup(d->topo->description != NULL ? d->topo->description : d->topo->source);
    return g_steal_pointer(&p);
}

gboolean cs_design_no_workload(const cs_scenario_t *s, const char *command, GError **err)
{
    if (s->workload == NULL)
        return TRUE;
    const char *o = NULL;
    for (const cs_scenario_key_t *k = cs_workload_keys; k->key != NULL && o == NULL; k++)
        o = g_hash_table_lookup(s->workload->origins, k->key);
    g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: [workload] describes a step of a parallel job, which collsim %s "
                "does not price; expected collsim step for it", o != NULL ? o : s->path, command);
    return FALSE;
}

cs_prediction_t *cs_predict_scenario(const cs_scenario_t *s, const char *command, gboolean want_stats,
                                     GError **err)
{
    g_auto(cs_design_t) d;
    cs_design_init(&d);
    if (!cs_design_no_workload(s, command, err) || !cs_design_model(&d, s, err))
        return NULL;
    if (s->jobs->len > 0) {
        const cs_scenario_job_t *j = g_ptr_array_index(s->jobs, 0);
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                    "%s: [job %s]: collsim %s prices one collective over a sweep of sizes; "
                    "expected a scenario without [job NAME] groups (collsim run --model flow prices several jobs)",
                    j->origin, j->name, command);
        return NULL;
    }
    if (!cs_design_build(&d, s, err))
        return NULL;
    return price(s, &d, want_stats, err);
}

/* ---- the plot ------------------------------------------------------------------ */

cs_svg_series_t cs_predict_svg_series(const cs_result_t *r, const guint64 *sizes, const char *label,
                                      GPtrArray *keep)
{
    guint m = r->rows->len;
    double *size = g_new0(double, MAX(1, m)), *bw = g_new0(double, MAX(1, m)), *t = g_new0(double, MAX(1, m));
    char **algo = g_new0(char *, m + 1);
    for (guint k = 0; k < m; k++) {
        const cs_result_row_t *row = &g_array_index(r->rows, cs_result_row_t, k);
        gboolean ran = row->time_us[CS_OOP] > 0;
        size[k] = (double)sizes[k];
        bw[k] = ran ? row->busbw[CS_OOP] : -1;
        t[k] = ran ? row->time_us[CS_OOP] : -1;
        algo[k] = ran ? g_strdup_printf("%s/%s", row->algo, row->proto) : NULL;
        if (algo[k] != NULL)
            g_ptr_array_add(keep, algo[k]);
    }
    g_ptr_array_add(keep, size);
    g_ptr_array_add(keep, bw);
    g_ptr_array_add(keep, t);
    g_ptr_array_add(keep, algo);
    return (cs_svg_series_t){ .label = label, .n = (int)m, .size = size, .busbw = bw, .time_us = t,
                              .algo = (const char *const *)algo };
}

char *cs_predict_svg_caption(const char *models, const char *command)
{
    return g_strdup_printf("model%s: %s prediction, not a measurement (collsim %s %s)",
                           strchr(models, ',') != NULL ? "s" : "", models, PACKAGE_VERSION, command);
}

void cs_predict_csv_num(GString *g, double v)
{
    g_string_append_c(g, ',');
    cs_write_append_csv_num(g, v);
}

/* ---- KEY=VALUE ------------------------------------------------------------- */

static char *keys_of(const char *group)
{
    GString *g = g_string_new(NULL);
    const cs_scenario_key_t *tables[] = { cs_scenario_keys, cs_topo_spec_keys, cs_fabric_keys };
    for (int t = 0; t < 3; t++)
        for (const cs_scenario_key_t *k = tables[t]; k->key != NULL; k++)
            if (strcmp(k->group, group) == 0)
                g_string_append_printf(g, "%s%s.%s", g->len ? ", " : "", group, k->key);
    return g_string_free(g, FALSE);
}

gboolean cs_predict_key_resolve(const char *name, char **group_p, char **key_p, GError **err)
{
    g_autofree char *group = NULL, *key = NULL;
    const char *dot = strchr(name, '.');
    if (dot != NULL) {
        group = g_strndup(name, dot - name);
        key = g_strdup(dot + 1);
    } else if (cs_scenario_is_nccl_name(name)) {
        group = g_strdup("nccl");
        key = g_strdup(name);
    } else if (strcmp(name, "topo") == 0) {
        group = g_strdup("topology");
        key = g_strdup("topo");
    } else {
        g_autofree char *flag = g_strdup_printf("--%s", name);
        const cs_scenario_key_t *k = cs_scenario_key_by_flag(flag);
        if (k == NULL || k->arg == NULL) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                        "unknown scenario key '%s'; expected GROUP.KEY (e.g. topology.nodes, nccl.NCCL_ALGO, "
                        "scenario.model), an NCCL_* name or a flag's long name (e.g. nodes)", name);
            return FALSE;
        }
        group = g_strdup(k->group);
        key = g_strdup(k->key);
    }
    if (strcmp(group, "output") == 0 || cs_scenario_job_group_name(group) != NULL || strcmp(group, "job") == 0) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                    "'%s' cannot be varied; expected a key of [scenario], [topology], [collective], [fabric] or [nccl]", name);
        return FALSE;
    }
    if (strcmp(group, "nccl") == 0) {
        if (!cs_scenario_is_nccl_name(key)) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "'%s' is not an NCCL_* variable; expected nccl.NCCL_NAME", name);
            return FALSE;
        }
    } else if (strcmp(group, "scenario") != 0 && strcmp(group, "topology") != 0 && strcmp(group, "collective") != 0 &&
               strcmp(group, "fabric") != 0) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                    "unknown group '%s' in '%s'; expected scenario, topology, collective, fabric or nccl", group, name);
        return FALSE;
    } else if (!(strcmp(group, "topology") == 0 && strcmp(key, "topo") == 0) &&
               cs_scenario_key_find(group, key) == NULL) {
        g_autofree char *keys = keys_of(group);
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "unknown key '%s' in [%s]; expected one of %s", key, group, keys);
        return FALSE;
    }
    *group_p = g_steal_pointer(&group);
    *key_p = g_steal_pointer(&key);
    return TRUE;
}

gboolean cs_predict_set(cs_scenario_t *s, const char *group, const char *key, const char *value, const char *origin,
                        GError **err)
{
    gboolean ok;
    if (strcmp(group, "topology") == 0 && strcmp(key, "topo") == 0) {
        ok = cs_topo_spec_set_topo(&s->topo, value, err);
    } else {
        ok = cs_scenario_set(s, group, key, value, origin, NULL, err);
        /* one topology source: the value given replaces the other kind */
        if (ok && strcmp(group, "topology") == 0 && strcmp(key, "preset") == 0)
            g_clear_pointer(&s->topo.file, g_free);
        else if (ok && strcmp(group, "topology") == 0 && strcmp(key, "file") == 0)
            g_clear_pointer(&s->topo.preset, g_free);
    }
    if (ok && strcmp(group, "topology") == 0 && (strcmp(key, "topo") == 0 || strcmp(key, "preset") == 0 ||
                                                 strcmp(key, "file") == 0)) {
        g_free(s->topo.origin);
        s->topo.origin = g_strdup(origin);
        g_hash_table_replace(s->origins, g_strdup("topology.preset"), g_strdup(origin));
        g_hash_table_replace(s->origins, g_strdup("topology.file"), g_strdup(origin));
    }
    if (ok && origin != NULL)
        g_hash_table_replace(s->origins, g_strdup_printf("%s.%s", group, key), g_strdup(origin));
    if (!ok && err != NULL)
        cs_scenario_error_one_line(*err);
    return ok;
}

char **cs_predict_split_list(const char *list)
{
    GPtrArray *parts = g_ptr_array_new();
    GString *cur = g_string_new(NULL);
    for (const char *p = list;; p++) {
        if (*p == '\\' && p[1] == ',') {
            g_string_append_c(cur, ',');
            p++;
        } else if (*p == ',' || *p == '\0') {
            g_ptr_array_add(parts, g_strdup(cur->str));
            g_string_truncate(cur, 0);
            if (*p == '\0')
                break;
        } else {
            g_string_append_c(cur, *p);
        }
    }
    g_string_free(cur, TRUE);
    g_ptr_array_add(parts, NULL);
    return (char **)g_ptr_array_free(parts, FALSE);
}

/* "NAME=": a key name (letters, digits, '_', '.', '-') then '='. */
static const char *setting_eq(const char *piece)
{
    const char *p = piece;
    if (!g_ascii_isalpha(*p))
        return NULL;
    while (g_ascii_isalnum(*p) || *p == '_' || *p == '.' || *p == '-')
        p++;
    return *p == '=' ? p : NULL;
}

char **cs_predict_split_settings(const char *list, GError **err)
{
    g_auto(GStrv) pieces = cs_predict_split_list(list);
    GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
    for (int i = 0; pieces[i] != NULL; i++) {
        const char *eq = setting_eq(pieces[i]);
        if (eq != NULL) {
            g_ptr_array_add(out, g_strndup(pieces[i], eq - pieces[i]));
            g_ptr_array_add(out, g_strdup(eq + 1));
        } else if (out->len > 0) {
            char *prev = g_ptr_array_index(out, out->len - 1);
            out->pdata[out->len - 1] = g_strconcat(prev, ",", pieces[i], NULL);
            g_free(prev);
        } else {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "'%s' is not a setting; expected KEY=VALUE", pieces[i]);
            g_ptr_array_unref(out);
            return NULL;
        }
    }
    if (out->len == 0) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "no setting; expected KEY=VALUE[,KEY=VALUE...]");
        g_ptr_array_unref(out);
        return NULL;
    }
    g_ptr_array_set_free_func(out, NULL);
    g_ptr_array_add(out, NULL);
    return (char **)g_ptr_array_free(out, FALSE);
}

gboolean cs_predict_measured_nccl_max(cs_comm_t *comm, const char *version_max)
{
    const cs_comm_info_t *ci = cs_comm_info(comm);
    int flag = version_max != NULL ? cs_nccl_version_code(version_max, NULL) : 0;
    if (ci->nccl_version != 0 || flag <= 0 || (ci->nccl_version_max > 0 && ci->nccl_version_max <= flag))
        return FALSE;
    cs_comm_set_nccl_version_max(comm, flag);
    return TRUE;
}

void cs_predict_measured_nccl(cs_comm_t *comm, const char *version, const cs_nccltests_log_t *log)
{
    if (cs_comm_set_nccl_version(comm, version != NULL ? version : log != NULL ? log->nccl_version : NULL) == 0 &&
        log != NULL)
        cs_comm_set_nccl_version_max(comm, log->nccl_version_max);
    if (log != NULL)
        cs_comm_set_nccltests_build(comm, log->nccltests_version, log->nccltests_headers);
}
