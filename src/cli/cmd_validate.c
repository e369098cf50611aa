/* collsim validate LOG: compare a prediction with an nccl-tests log.
 *
 * log -> tables (measured) ; topology + NCCL environment (as stated for
 * the run: --env and the scenario's [nccl], never the calling shell's) ->
 * NCCL's communicator -> the engine priced at the log's own sizes, types,
 * reductions and roots (predicted) -> joined by size -> per-size errors and
 * a summary. Every input problem is one line on stderr and exit 2, before
 * anything is written. */
#include "config.h"
#include "io/cs_scenario-int.h"
#include "io/cs_output.h"
#include "io/cs_run_args.h"
#include "cli/cs_commands.h"
#include "cli/cs_predict.h"
#include "io/cs_nccltests_log.h"
#include "io/cs_scenario.h"
#include "io/cs_validate.h"
#include "io/cs_writers.h"
#include "models/cs_decide.h"
#include "models/cs_params.h"
#include "sim/cs_engine.h"
#include "util/cs_error.h"
#include "util/cs_units.h"
#include "util/cs_read_file.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <glib/gstdio.h>

typedef struct {
    char *scenario;
    char *op;
    int table;               /* 0 = every table */
    GPtrArray *envs;         /* "NCCL_X=Y" */
    char *json_out, *csv_out, *svg_out;
    char *model;
    char *calibration;
    gboolean skip_unsupported;   /* leave out sizes the engine cannot price, with a note */
    gboolean fail_on_miss;       /* exit 1 when a compared table misses a target */
    cs_topo_spec_t topo;
    char *procs_per_node, *nthreads;   /* the measured run's process layout; NULL = the scenario's */
    char *nccl_version;                /* the measured run's NCCL; NULL = the log's, if it prints one */
    char *nccl_version_max;            /* the newest NCCL the run can have used, where its version is not known */
    char *log;
} validate_args_t;

/* One compared table. */
typedef struct {
    const cs_result_t *measured;
    int number, line;
    const cs_nccl_info_t *seen;  /* what the run's NCCL INFO lines said, or NULL */
    const char *command;         /* the command line above the table, or NULL */
    GPtrArray *findings;         /* where they contradict the model (char*) */
    cs_result_t *predicted;
    cs_validation_t *v;
    cs_validation_t *v_before;   /* with the built-in parameters, when a calibration is used */
} compared_t;

static void compared_clear(gpointer p)
{
    compared_t *c = p;
    if (c->findings != NULL)
        g_ptr_array_unref(c->findings);
    cs_result_free(c->predicted);
    cs_validation_free(c->v);
    cs_validation_free(c->v_before);
}

/* ---- options --------------------------------------------------------------- */

static gboolean on_env(const char *option_name, const char *value, gpointer data, GError **err)
{
    validate_args_t *a = data;
    const char *eq = strchr(value, '=');
    gboolean ok = eq != NULL && eq - value > 5 && g_str_has_prefix(value, "NCCL_");
    for (const char *p = value; ok && p < eq; p++)
        ok = g_ascii_isalnum(*p) || *p == '_';
    if (!ok) {
        cs_set_flag_error(err, option_name, "'%s' is not an NCCL variable setting; expected NCCL_NAME=VALUE",
                          value);
        return FALSE;
    }
    g_ptr_array_add(a->envs, g_strdup(value));
    return TRUE;
}

static gboolean on_table(const char *option_name, const char *value, gpointer data, GError **err)
{
    validate_args_t *a = data;
    gint64 n;
    if (!cs_parse_int(value, 1, 100000, &n)) {
        cs_set_flag_error(err, option_name, "'%s' is not a table number; expected 1 for the first table", value);
        return FALSE;
    }
    a->table = (int)n;
    return TRUE;
}

/* Checked as it is parsed, before the topology flags (which report once
 * every flag is read): a bad model is reported first. */
static gboolean on_model(const char *option_name, const char *value, gpointer data, GError **err)
{
    validate_args_t *a = data;
    if (cs_engine_find(value) == NULL) {
        cs_set_flag_error(err, option_name, "unknown model '%s'; expected one of %s", value, cs_engine_names());
        return FALSE;
    }
    g_free(a->model);
    a->model = g_strdup(value);
    return TRUE;
}

static gboolean parse_args(validate_args_t *a, int argc, char **argv, GError **err)
{
    GOptionEntry entries[] = {
        { "scenario", 's', 0, G_OPTION_ARG_FILENAME, &a->scenario,
          "Scenario file giving the topology, [nccl] settings, model and calibration; flags override it", "FILE" },
        { "op", 0, 0, G_OPTION_ARG_STRING, &a->op,
          "The collective the log measures, when the log does not say (allreduce, allgather, ...)", "COLL" },
        { "table", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_table,
          "Compare only table N of the log (1 = the first; default: every table)", "N" },
        { "env", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_env,
          "An NCCL variable the measured run had (repeatable; wins over [nccl])", "NCCL_X=VALUE" },
        { "model", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_model, "Engine that predicts (default: the scenario's, analytic)", "NAME" },
        { "calibration", 0, 0, G_OPTION_ARG_FILENAME, &a->calibration, "Parameter file (collsim calibrate)", "FILE" },
        { "procs-per-node", 0, 0, G_OPTION_ARG_STRING, &a->procs_per_node,
          "Processes per node of the measured run (1: one process driving every GPU with -g; default: one per GPU)", "N" },
        { "nthreads", 't', 0, G_OPTION_ARG_STRING, &a->nthreads, "Threads per process of the measured run (nccl-tests -t)", "N" },
        { "nccl-version", 0, 0, G_OPTION_ARG_STRING, &a->nccl_version,
          "NCCL version of the measured run, when the log does not print it (the host's cost of a call follows it; "
          "NCCL's decisions stay v2.28.9's)", "X.Y.Z" },
        { "nccl-version-max", 0, 0, G_OPTION_ARG_STRING, &a->nccl_version_max,
          "The newest NCCL the measured run can have used, where its version is not known (e.g. the last release "
          "before the software that bundled it); mechanisms that changed after it follow it", "X.Y.Z" },
        { "skip-unsupported", 0, 0, G_OPTION_ARG_NONE, &a->skip_unsupported,
          "Leave out the sizes the engine cannot price (e.g. an algorithm it does not model), with a note, "
          "instead of failing", NULL },
        { "fail-on-miss", 0, 0, G_OPTION_ARG_NONE, &a->fail_on_miss,
          "Exit 1 when a compared table's median error misses a target (after the whole report), for a script "
          "that gates on the prediction", NULL },
        { "json", 0, 0, G_OPTION_ARG_FILENAME, &a->json_out, "Also write the comparison as JSON", "FILE" },
        { "csv", 0, 0, G_OPTION_ARG_FILENAME, &a->csv_out, "Also write the per-size comparison as CSV", "FILE" },
        { "svg", 0, 0, G_OPTION_ARG_FILENAME, &a->svg_out,
          "Also plot measured against predicted bus bandwidth and time over size (log axes, the targets' band) "
          "as SVG", "FILE" },
        { NULL },
    };
    g_autoptr(GOptionContext) ctx = g_option_context_new("LOG - compare a prediction with an nccl-tests log");
    GOptionGroup *main_group = g_option_group_new("validate", "collsim validate options", "Show the validate options",
                                                  a, NULL);
    g_option_group_add_entries(main_group, entries);
    g_option_context_set_main_group(ctx, main_group);
    g_option_context_add_group(ctx, cs_topo_spec_option_group(&a->topo));
    g_option_context_set_summary(ctx,
        "Reads an nccl-tests log (text table or -J JSON), predicts the same sweep (the log's\n"
        "sizes, types, reductions and roots) over the given topology with the given NCCL\n"
        "settings, and prints per size the measured and predicted time and bus bandwidth with\n"
        "their errors, (predicted - measured) / measured, from the out-of-place columns; then\n"
        "the median and worst error of bus bandwidth at sizes >= 1 MiB and of time at sizes\n"
        "<= 64 KiB. The NCCL_* variables of the calling shell are not used: give the measured\n"
        "run's with --env or [nccl]. A log taken with NCCL_DEBUG=INFO also says what NCCL did\n"
        "(each connection's transport, the network, GPUDirect RDMA, channels, rings): where it\n"
        "differs from the model's decisions, a '# finding:' line says how, why NCCL does that,\n"
        "and the flag that predicts the run as it ran.");
    g_option_context_set_description(ctx,
        "Examples:\n"
        "  collsim validate run.log --topo dgx-h100 --nodes 2\n"
        "  collsim validate run.log --topo dgx-h100 --nodes 2 --table 2 --env NCCL_ALGO=Ring\n"
        "  collsim validate run.json --scenario cluster.ini --csv errors.csv\n"
        "  collsim validate run.log --topo dgx-h100 --nodes 2 --svg run.svg\n"
        "  collsim validate run.log --topo dgx-h100 --nodes 2 --model flow --skip-unsupported\n"
        "\nSee collsim(1).");
    g_autoptr(GError) e = NULL;
    if (!g_option_context_parse(ctx, &argc, &argv, &e)) {
        if (e->domain == CS_ERROR)
            g_propagate_error(err, g_steal_pointer(&e));
        else
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                        "collsim: validate: %s; expected the options of 'collsim validate --help'", e->message);
        return FALSE;
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            continue;
        if (a->log != NULL) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                        "collsim: validate: unexpected argument '%s'; expected one nccl-tests log", argv[i]);
            return FALSE;
        }
        a->log = g_strdup(argv[i]);
    }
    if (a->log == NULL) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                    "collsim: validate: no log given; expected 'collsim validate LOG --topo PRESET|FILE'");
        return FALSE;
    }
    return TRUE;
}

/* ---- formatting ------------------------------------------------------------ */

static void fmt_num(char *buf, size_t len, double v)
{
    if (isnan(v) || v < 0)
        g_strlcpy(buf, "-", len);
    else
        g_snprintf(buf, len, "%.2f", v);
}

static void fmt_err(char *buf, size_t len, double e)
{
    if (isnan(e))
        g_strlcpy(buf, "-", len);
    else if (fabs(e) < 0.0005)
        g_strlcpy(buf, "0.0%", len);   /* no "-0.0%" */
    else
        g_snprintf(buf, len, "%+.1f%%", e * 100);
}

static const char *placement_name(int p)
{
    return p == CS_OOP ? "out-of-place" : "in-place";
}

static void print_summary_line(FILE *f, const char *what, const cs_validate_stat_t *s, double target)
{
    if (s->n == 0) {
        fprintf(f, "# summary %s: n=0 result=none (no sizes in this range)\n", what);
        return;
    }
    char worst[32];
    fmt_err(worst, sizeof worst, s->worst);
    fprintf(f, "# summary %s: n=%d median=%.1f%% worst=%s at=%" G_GUINT64_FORMAT " target=%.0f%% result=%s\n",
            what, s->n, s->median * 100, worst, s->worst_size, target * 100,
            cs_validate_stat_pass(s, target) ? "pass" : "miss");
}

/* Whether two paths hold the same bytes (a log copied elsewhere). */
static gboolean same_bytes(const char *a, const char *b)
{
    GStatBuf sa, sb;
    if (g_stat(a, &sa) != 0 || g_stat(b, &sb) != 0 || sa.st_size != sb.st_size)
        return FALSE;
    g_autofree char *ta = NULL, *tb = NULL;
    gsize la = 0, lb = 0;
    return cs_read_file(a, "log", "nccl-tests log", CS_READ_LIMIT_LOG, &ta, &la, NULL) &&
           cs_read_file(b, "log", "nccl-tests log", CS_READ_LIMIT_LOG, &tb, &lb, NULL) && la == lb &&
           memcmp(ta, tb, la) == 0;
}

/* Whether the calibration file was fitted to this log: its header lists
 * its inputs as "#   PATH[ table N ...]: ..." (cs_calibrate_ini); the
 * same path, or a file of the same bytes where the listed one still is. */
static gboolean calibrated_on(const char *calibration, const char *log)
{
    g_autofree char *text = NULL;
    gsize len = 0;
    if (calibration == NULL ||
        !cs_read_file(calibration, "calibration file", "INI file", CS_READ_LIMIT_INI, &text, &len, NULL))
        return FALSE;
    g_autofree char *want = g_canonicalize_filename(log, NULL);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (int i = 0; lines[i] != NULL && lines[i][0] == '#'; i++) {
        if (!g_str_has_prefix(lines[i], "#   "))
            continue;
        const char *p = lines[i] + 4;
        const char *end = strstr(p, " table ");
        const char *colon = strstr(p, ": ");
        if (end == NULL || (colon != NULL && colon < end))
            end = colon;
        if (end == NULL)
            continue;
        g_autofree char *path = g_strndup(p, end - p);
        g_autofree char *canon = g_canonicalize_filename(path, NULL);
        if (strcmp(canon, want) == 0 || same_bytes(canon, want))
            return TRUE;
    }
    return FALSE;
}

static void print_comparison(FILE *f, const char *log, const char *nccl_version, const compared_t *c,
                             const cs_topo_t *topo, const cs_nccl_env_t *env, const cs_params_t *params)
{
    const cs_result_t *m = c->measured;
    const cs_validation_t *v = c->v;
    const cs_result_row_t *r0 = &g_array_index(m->rows, cs_result_row_t, 0);
    fprintf(f, "# collsim validate: %s, table %d (first row at line %d), against %s\n", log, c->number, c->line,
            c->predicted->producer);
    /* "measured:nccl-tests" once: the line says measured already */
    const char *by = g_str_has_prefix(m->producer, "measured:") ? m->producer + strlen("measured:") : m->producer;
    fprintf(f, "# measured: %s: %s, %s%s%s, %d ranks", by, cs_coll_name(m->coll), cs_dtype_name(r0->dtype),
            cs_coll_has_redop(m->coll) ? " " : "", cs_coll_has_redop(m->coll) ? cs_redop_name(r0->redop) : "",
            m->nranks);
    if (m->nnodes > 0)
        fprintf(f, " on %d node%s", m->nnodes, m->nnodes == 1 ? "" : "s");
    fprintf(f, ", %u sizes\n", m->rows->len);
    for (guint i = 0; i < m->notes->len; i++)
        fprintf(f, "# measured: %s\n", (const char *)g_ptr_array_index(m->notes, i));
    g_autofree char *seen = c->seen != NULL ? cs_nccl_info_summary(c->seen) : NULL;
    if (seen != NULL)
        fprintf(f, "# measured: NCCL's INFO lines: %s\n", seen);
    fprintf(f, "# modelled: %s (%s parameters%s%s)\n", c->predicted->producer,
            params->calibration_source ? "calibrated" : "built-in",
            params->calibration_source ? " from " : "", params->calibration_source ? params->calibration_source : "");
    fprintf(f, "# modelled: topology %s\n", topo->description != NULL ? topo->description : topo->source);
    g_autoptr(GPtrArray) names = cs_nccl_env_names(env);
    if (names->len == 0) {
        fprintf(f, "# modelled: NCCL environment: none set (NCCL's defaults)\n");
    } else {
        fprintf(f, "# modelled: NCCL environment:");
        for (guint i = 0; i < names->len; i++) {
            const char *n = g_ptr_array_index(names, i);
            fprintf(f, " %s=%s (%s)", n, cs_nccl_env_get(env, n), cs_nccl_env_origin(env, n));
        }
        fprintf(f, "\n");
    }
    /* judged for the NCCL that made the log: a variable it still read
     * (NCCL_TREE_THRESHOLD in 2.4) is a note that the model ignores it,
     * not a warning that NCCL does */
    g_autoptr(GPtrArray) version_notes = NULL;
    g_autoptr(GPtrArray) warnings = cs_nccl_env_warnings_for(env, nccl_version, &version_notes);
    for (guint i = 0; i < warnings->len; i++)
        fprintf(f, "# modelled: warning: %s\n", (const char *)g_ptr_array_index(warnings, i));
    for (guint i = 0; version_notes != NULL && i < version_notes->len; i++)
        fprintf(f, "# modelled: note: %s\n", (const char *)g_ptr_array_index(version_notes, i));
    for (guint i = 0; i < c->predicted->notes->len; i++)
        fprintf(f, "# modelled: %s\n", (const char *)g_ptr_array_index(c->predicted->notes, i));
    for (guint i = 0; c->findings != NULL && i < c->findings->len; i++)
        fprintf(f, "# finding: %s\n", (const char *)g_ptr_array_index(c->findings, i));
    fprintf(f, "# compared: %s columns (the other placement is not used); error = (predicted - measured) / measured;\n"
               "# compared: busbw error from the times (t_measured / t_predicted - 1: the same, without busbw's rounding)\n",
            placement_name(v->placement));
    if (v->unmatched > 0)
        fprintf(f, "# compared: %d measured sizes have no prediction\n", v->unmatched);
    if (v->resized > 0)
        fprintf(f, "# compared: %d measured sizes are not what nccl-tests prints for its %d ranks (a size it rounds "
                   "down to a whole count per rank); each is compared with the prediction for the size nccl-tests "
                   "runs for it\n", v->resized, m->nranks);
    if (calibrated_on(params->calibration_source, log))
        fprintf(f, "# compared: note: %s was fitted to this log, so these errors are in-sample (a fit judged on "
                   "its own data), not a validation; judge it on runs it was not fitted to\n",
                params->calibration_source);
    fprintf(f, "#\n");
    fprintf(f, "# %10s  %10s  %10s  %8s  %10s  %10s  %9s  %13s  %6s  %4s\n", "size", "measured", "predicted",
            "time", "measured", "predicted", "busbw", "algo", "proto", "nch");
    fprintf(f, "# %10s  %10s  %10s  %8s  %10s  %10s  %9s  %13s  %6s  %4s\n", "(B)", "(us)", "(us)", "error",
            "(GB/s)", "(GB/s)", "error", "(predicted)", "", "");
    for (guint i = 0; i < v->rows->len; i++) {
        const cs_validate_row_t *r = &g_array_index(v->rows, cs_validate_row_t, i);
        char mt[32], pt[32], te[32], mb[32], pb[32], be[32], nch[16];
        fmt_num(mt, sizeof mt, r->meas_us);
        fmt_num(pt, sizeof pt, r->pred_us);
        fmt_err(te, sizeof te, r->time_err);
        fmt_num(mb, sizeof mb, r->meas_busbw);
        fmt_num(pb, sizeof pb, r->pred_busbw);
        fmt_err(be, sizeof be, r->busbw_err);
        if (r->nchannels > 0)
            g_snprintf(nch, sizeof nch, "%d", r->nchannels);
        else
            g_strlcpy(nch, "-", sizeof nch);
        fprintf(f, "  %10" G_GUINT64_FORMAT "  %10s  %10s  %8s  %10s  %10s  %9s  %13s  %6s  %4s\n", r->size, mt, pt,
                te, mb, pb, be, r->algo[0] ? r->algo : "-", r->proto[0] ? r->proto : "-", nch);
    }
    fprintf(f, "#\n");
    print_summary_line(f, "busbw >=1MiB", &v->busbw_large, CS_VALIDATE_BUSBW_TARGET);
    print_summary_line(f, "time <=64KiB", &v->time_small, CS_VALIDATE_TIME_TARGET);
    if (c->v_before != NULL) {
        /* the same comparison before calibration: what the file changed */
        print_summary_line(f, "busbw >=1MiB (built-in parameters, before calibration)", &c->v_before->busbw_large,
                           CS_VALIDATE_BUSBW_TARGET);
        print_summary_line(f, "time <=64KiB (built-in parameters, before calibration)", &c->v_before->time_small,
                           CS_VALIDATE_TIME_TARGET);
    }
}

/* ---- JSON and CSV ------------------------------------------------------------ */

static void json_num(GString *g, double v)
{
    if (isnan(v) || isinf(v))
        g_string_append(g, "null");
    else
        g_string_append_printf(g, "%.6g", v);
}

static void json_str(GString *g, const char *s)
{
    /* a path or a log's text that is not UTF-8 (JSON must be): U+FFFD for its bad bytes */
    g_autofree char *valid = g_utf8_validate(s, -1, NULL) ? NULL : g_utf8_make_valid(s, -1);
    if (valid != NULL)
        s = valid;
    g_string_append_c(g, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            g_string_append_printf(g, "\\%c", *p);
        else if (*p < 0x20)
            g_string_append_printf(g, "\\u%04x", *p);
        else
            g_string_append_c(g, (char)*p);
    }
    g_string_append_c(g, '"');
}

static void json_stat(GString *g, const char *name, const cs_validate_stat_t *s, double target)
{
    g_string_append_printf(g, "      \"%s\": {\"n\": %d, \"median_abs_error\": ", name, s->n);
    json_num(g, s->median);
    g_string_append(g, ", \"worst_error\": ");
    json_num(g, s->worst);
    g_string_append_printf(g, ", \"worst_size\": %" G_GUINT64_FORMAT ", \"target\": %.2f, \"result\": \"%s\"}",
                           s->n ? s->worst_size : 0, target,
                           s->n == 0 ? "none" : cs_validate_stat_pass(s, target) ? "pass" : "miss");
}

static char *comparison_json(const char *log, const GArray *cmp)
{
    GString *g = g_string_new("{\n  \"measured\": ");
    json_str(g, log);
    g_string_append(g, ",\n  \"error\": \"(predicted - measured) / measured\",\n  \"tables\": [\n");
    for (guint t = 0; t < cmp->len; t++) {
        const compared_t *c = &g_array_index(cmp, compared_t, t);
        g_string_append_printf(g, "    {\"table\": %d, \"line\": %d, \"collective\": \"%s\", \"nranks\": %d, "
                               "\"placement\": \"%s\", \"producer\": ", c->number, c->line,
                               cs_coll_name(c->measured->coll), c->measured->nranks,
                               placement_name(c->v->placement));
        json_str(g, c->predicted->producer);
        /* what the run's NCCL INFO lines said, and where the model differs */
        g_autofree char *seen = c->seen != NULL ? cs_nccl_info_summary(c->seen) : NULL;
        g_string_append(g, ",\n     \"nccl_info\": ");
        if (seen != NULL)
            json_str(g, seen);
        else
            g_string_append(g, "null");
        g_string_append(g, ", \"findings\": [");
        for (guint i = 0; c->findings != NULL && i < c->findings->len; i++) {
            g_string_append(g, i > 0 ? ", " : "");
            json_str(g, g_ptr_array_index(c->findings, i));
        }
        g_string_append(g, "]");
        g_string_append(g, ",\n     \"rows\": [\n");
        for (guint i = 0; i < c->v->rows->len; i++) {
            const cs_validate_row_t *r = &g_array_index(c->v->rows, cs_validate_row_t, i);
            g_string_append_printf(g, "       {\"size\": %" G_GUINT64_FORMAT ", \"measured_us\": ", r->size);
            json_num(g, r->meas_us < 0 ? NAN : r->meas_us);
            g_string_append(g, ", \"predicted_us\": ");
            json_num(g, r->pred_us < 0 ? NAN : r->pred_us);
            g_string_append(g, ", \"time_error\": ");
            json_num(g, r->time_err);
            g_string_append(g, ", \"measured_busbw\": ");
            json_num(g, r->meas_busbw < 0 ? NAN : r->meas_busbw);
            g_string_append(g, ", \"predicted_busbw\": ");
            json_num(g, r->pred_busbw < 0 ? NAN : r->pred_busbw);
            g_string_append(g, ", \"busbw_error\": ");
            json_num(g, r->busbw_err);
            g_string_append(g, ", \"algo\": ");
            json_str(g, r->algo);
            g_string_append(g, ", \"proto\": ");
            json_str(g, r->proto);
            g_string_append_printf(g, ", \"nchannels\": %d}%s\n", r->nchannels, i + 1 < c->v->rows->len ? "," : "");
        }
        g_string_append(g, "     ],\n     \"summary\": {\n");
        json_stat(g, "busbw_at_least_1MiB", &c->v->busbw_large, CS_VALIDATE_BUSBW_TARGET);
        g_string_append(g, ",\n");
        json_stat(g, "time_at_most_64KiB", &c->v->time_small, CS_VALIDATE_TIME_TARGET);
        if (c->v_before != NULL) {
            /* the same with the built-in parameters, when a calibration file is used */
            g_string_append(g, "\n     },\n     \"summary_before_calibration\": {\n");
            json_stat(g, "busbw_at_least_1MiB", &c->v_before->busbw_large, CS_VALIDATE_BUSBW_TARGET);
            g_string_append(g, ",\n");
            json_stat(g, "time_at_most_64KiB", &c->v_before->time_small, CS_VALIDATE_TIME_TARGET);
        }
        g_string_append_printf(g, "\n     }}%s\n", t + 1 < cmp->len ? "," : "");
    }
    g_string_append(g, "  ]\n}\n");
    return g_string_free(g, FALSE);
}

static void csv_num(GString *g, double v)
{
    g_string_append_c(g, ',');
    if (!isnan(v) && !isinf(v))
        g_string_append_printf(g, "%.6g", v);
}

static char *comparison_csv(const GArray *cmp)
{
    GString *g = g_string_new("table,size,measured_us,predicted_us,time_error,measured_busbw,predicted_busbw,"
                              "busbw_error,algo,proto,nchannels\n");
    for (guint t = 0; t < cmp->len; t++) {
        const compared_t *c = &g_array_index(cmp, compared_t, t);
        for (guint i = 0; i < c->v->rows->len; i++) {
            const cs_validate_row_t *r = &g_array_index(c->v->rows, cs_validate_row_t, i);
            g_string_append_printf(g, "%d,%" G_GUINT64_FORMAT, c->number, r->size);
            csv_num(g, r->meas_us < 0 ? NAN : r->meas_us);
            csv_num(g, r->pred_us < 0 ? NAN : r->pred_us);
            csv_num(g, r->time_err);
            csv_num(g, r->meas_busbw < 0 ? NAN : r->meas_busbw);
            csv_num(g, r->pred_busbw < 0 ? NAN : r->pred_busbw);
            csv_num(g, r->busbw_err);
            g_string_append_printf(g, ",%s,%s,%d\n", r->algo, r->proto, r->nchannels);
        }
    }
    return g_string_free(g, FALSE);
}

/* ---- the output files ------------------------------------------------------------ */

/* --svg: every compared table's measurement and prediction, named by the
 * log's base name (the plot holds no path of this machine). */
static char *comparison_svg(const char *log, const GArray *cmp, const cs_topo_t *topo, const cs_params_t *params)
{
    g_autofree cs_validate_plot_table_t *t = g_new0(cs_validate_plot_table_t, MAX(1, cmp->len));
    for (guint i = 0; i < cmp->len; i++) {
        const compared_t *c = &g_array_index(cmp, compared_t, i);
        t[i] = (cs_validate_plot_table_t){ .number = c->number, .measured = c->measured, .v = c->v };
    }
    g_autofree char *base = g_path_get_basename(log);
    g_autofree char *params_desc = NULL;
    if (params->calibration_source != NULL) {
        g_autofree char *cb = g_path_get_basename(params->calibration_source);
        params_desc = g_strdup_printf("calibrated parameters from %s", cb);
    } else {
        params_desc = g_strdup("built-in parameters");
    }
    const compared_t *c0 = &g_array_index(cmp, compared_t, 0);
    cs_validate_plot_t p = { .log = base, .model = c0->predicted->producer, .params = params_desc,
                             .topology = topo->description != NULL ? topo->description : topo->source };
    return cs_validate_svg(&p, t, (int)cmp->len);
}

/* Before the log is read or anything priced: each file can be written,
 * none named twice. */
static gboolean check_outputs(const validate_args_t *a, GError **err)
{
    const char *paths[3], *names[3];
    int n = 0;
    if (a->json_out != NULL)
        names[n] = "collsim: --json", paths[n++] = a->json_out;
    if (a->csv_out != NULL)
        names[n] = "collsim: --csv", paths[n++] = a->csv_out;
    if (a->svg_out != NULL)
        names[n] = "collsim: --svg", paths[n++] = a->svg_out;
    return cs_output_check(n, paths, names, err);
}

/* --json, --csv, --svg: all written or none, before the report. */
static gboolean write_outputs(const validate_args_t *a, const GArray *cmp, const cs_topo_t *topo,
                              const cs_params_t *params, GError **err)
{
    const char *paths[3], *data[3];
    int n = 0;
    g_autofree char *json = a->json_out != NULL ? comparison_json(a->log, cmp) : NULL;
    g_autofree char *csv = a->csv_out != NULL ? comparison_csv(cmp) : NULL;
    g_autofree char *svg = a->svg_out != NULL ? comparison_svg(a->log, cmp, topo, params) : NULL;
    if (json != NULL)
        paths[n] = a->json_out, data[n++] = json;
    if (csv != NULL)
        paths[n] = a->csv_out, data[n++] = csv;
    if (svg != NULL)
        paths[n] = a->svg_out, data[n++] = svg;
    return cs_output_write(n, paths, data, NULL, err);
}

/* ---- the comparison ---------------------------------------------------------- */

/* One engine sweep, or with 'skip' one sweep per size when the engine
 * refuses some size as unsupported (CS_ERROR_UNSUPPORTED, e.g. an algorithm
 * it does not model): the refused sizes are left out of the result, each
 * with a note "skipped size N (ALGO): why", and the rest are priced.
 * Any other error fails. The notes are appended to 'skipped', the refused
 * algorithms (once each) to 'algos'. NULL with no error set when every size
 * was refused. */
static cs_result_t *run_sweep_skipping(const cs_engine_ops_t *ops, const cs_engine_job_t *job, const guint64 *sizes,
                                       int n, gboolean skip, GPtrArray *skipped, GPtrArray *algos, GError **err)
{
    g_autoptr(GError) e = NULL;
    cs_result_t *whole = cs_engine_run_sweep(ops, job, sizes, n, &e);
    if (whole != NULL || !skip || !g_error_matches(e, CS_ERROR, CS_ERROR_UNSUPPORTED)) {
        /* an engine that cannot price some size: the way to price the rest */
        if (whole == NULL && !skip && g_error_matches(e, CS_ERROR, CS_ERROR_UNSUPPORTED)) {
            char *m = g_strdup_printf(strstr(e->message, "; expected") != NULL
                                          ? "%s, or --skip-unsupported to leave such sizes out"
                                          : "%s; expected --skip-unsupported to leave such sizes out", e->message);
            g_free(e->message);
            e->message = m;
        }
        if (whole == NULL)
            g_propagate_error(err, g_steal_pointer(&e));
        return whole;
    }
    cs_result_t *out = NULL;
    const cs_comm_info_t *info = cs_comm_info(job->comm);
    for (int i = 0; i < n; i++) {
        g_autoptr(GError) ei = NULL;
        g_autoptr(cs_result_t) one = cs_engine_run_sweep(ops, job, &sizes[i], 1, &ei);
        if (one == NULL) {
            if (!g_error_matches(ei, CS_ERROR, CS_ERROR_UNSUPPORTED)) {
                g_propagate_error(err, g_steal_pointer(&ei));
                cs_result_free(out);
                return NULL;
            }
            /* what NCCL would run at this size: the report names it */
            guint64 count = cs_coll_count(job->coll, sizes[i], job->dtype, info->nranks);
            cs_decision_t d;
            const char *algo = "?";
            if (cs_comm_decide_op(job->comm, job->coll, job->dtype, job->redop,
                               cs_coll_nccl_bytes(job->coll, count, job->dtype, info->nranks), &d, NULL))
                algo = cs_algo_name(d.algo);
            /* the engine's message without cs_engine_run_sweep's "size N: " */
            g_autofree char *prefix = g_strdup_printf("size %" G_GUINT64_FORMAT ": ", sizes[i]);
            const char *why = g_str_has_prefix(ei->message, prefix) ? ei->message + strlen(prefix) : ei->message;
            if (!g_ptr_array_find_with_equal_func(algos, algo, g_str_equal, NULL))
                g_ptr_array_add(algos, g_strdup(algo));
            g_ptr_array_add(skipped, g_strdup_printf("skipped size %" G_GUINT64_FORMAT " (%s): not priced: %s",
                                                     sizes[i], algo, why));
            continue;
        }
        if (out == NULL)
            out = g_steal_pointer(&one);
        else
            g_array_append_vals(out->rows, one->rows->data, one->rows->len);
    }
    return out;
}

/* The prediction of one measured table: one engine sweep per (type,
 * reduction, root) group of its rows (nccl-tests -d all / -o all / -r -1
 * print several), over the same sizes. With 'skip', sizes the engine
 * refuses are left out (noted in the result). */
static cs_result_t *predict_table(const cs_engine_ops_t *ops, const cs_topo_t *topo, const cs_comm_t *comm,
                                  const cs_params_t *params, const cs_scenario_t *s, const cs_result_t *m, gboolean skip,
                                  const char *where, GError **err)
{
    g_autoptr(GPtrArray) skipped = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GPtrArray) algos = g_ptr_array_new_with_free_func(g_free);
    cs_result_t *out = NULL;
    g_autofree gboolean *done = g_new0(gboolean, m->rows->len);
    g_autofree guint64 *sizes = g_new(guint64, MAX(m->rows->len, 1));
    for (guint i = 0; i < m->rows->len; i++) {
        if (done[i])
            continue;
        const cs_result_row_t *g = &g_array_index(m->rows, cs_result_row_t, i);
        int n = 0;
        for (guint j = i; j < m->rows->len; j++) {
            const cs_result_row_t *r = &g_array_index(m->rows, cs_result_row_t, j);
            if (done[j] || r->dtype != g->dtype || r->redop != g->redop || r->root != g->root)
                continue;
            done[j] = TRUE;
            sizes[n++] = r->size;
        }
        if (cs_coll_has_root(m->coll) && g->root >= topo->ngpus) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: root %d is not a rank of the topology; expected 0 to %d",
                        where, g->root, topo->ngpus - 1);
            cs_result_free(out);
            return NULL;
        }
        cs_engine_job_t job = {
            .topo = topo, .comm = comm, .params = params, .coll = m->coll, .dtype = g->dtype,
            .redop = g->redop, .root = cs_coll_has_root(m->coll) ? MAX(g->root, 0) : -1, .seed = s->seed,
            .exact = s->exact, .fabric = &s->fabric,
        };
        GError *e = NULL;
        g_autoptr(cs_result_t) p = run_sweep_skipping(ops, &job, sizes, n, skip, skipped, algos, &e);
        if (p == NULL && e != NULL) {
            g_propagate_prefixed_error(err, e, "%s: ", where);
            cs_result_free(out);
            return NULL;
        }
        if (p == NULL)
            continue;   /* every size of this group refused */
        if (out == NULL) {
            out = g_steal_pointer(&p);
        } else {
            g_array_append_vals(out->rows, p->rows->data, p->rows->len);
        }
    }
    if (out == NULL) {
        g_ptr_array_add(algos, NULL);
        g_autofree char *names = g_strjoinv(", ", (char **)algos->pdata);
        g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED,
                    "%s: the %s engine priced none of the %u sizes: it does not model %s (what NCCL picks "
                    "here); expected an engine that does (e.g. --model analytic)", where, ops->name, skipped->len,
                    names);
        return NULL;
    }
    for (guint i = 0; i < skipped->len; i++)
        cs_result_add_note(out, "%s", (const char *)g_ptr_array_index(skipped, i));
    return out;
}

/* What a run's NCCL up to 2.22 does between the GPUs of one process
 * (cs_comm_p2p_direct), said where the version or its bound implies it */
#define DIRECT_NOTE ", its GPUs of one process writing into each other's buffers (P2P/direct pointer, up to 2.22)"

/* The median of the signed bus bandwidth errors at >= 1 MiB; NAN without
 * such sizes. */
static double large_median(const cs_validation_t *v)
{
    g_autofree double *e = g_new(double, MAX(1, v->rows->len));
    int n = 0;
    for (guint i = 0; i < v->rows->len; i++) {
        const cs_validate_row_t *r = &g_array_index(v->rows, cs_validate_row_t, i);
        if (r->size >= CS_VALIDATE_LARGE_MIN)
            e[n++] = r->busbw_err;
    }
    return cs_validate_median(e, n);
}

/* A run several times slower than predicted at every large size, where
 * its log says nothing of what NCCL did (no NCCL INFO line read): a hint at the usual
 * causes, which only the run's settings or its NCCL_DEBUG=INFO lines can
 * confirm. The median of the signed errors at >= 1 MiB is +300 % or
 * more: the prediction is at least 4 times the measured bandwidth. */
static void far_below(const cs_validation_t *v, const cs_nccl_info_t *seen, GPtrArray *findings)
{
    if (findings->len > 0 || (seen != NULL && cs_nccl_info_any(seen)))
        return;
    double med = large_median(v);
    if (med >= 3.0)
        g_ptr_array_add(findings, g_strdup_printf(
                "the measured bus bandwidth is %.0fx below the prediction (the median at sizes >= 1 MiB) and "
                "the log does not say what NCCL did: a run this far off usually had NCCL fall back (peer-to-peer, "
                "InfiniBand or GPUDirect RDMA disabled, sockets, the wrong interface or HCA); give validate the "
                "run's NCCL_* settings with --env, or take the log with NCCL_DEBUG=INFO, whose lines it compares "
                "with the model", med + 1));
}

/* A table whose per-rank chunks (all-gather, reduce-scatter: size / ranks;
 * all-to-all: the chunk each peer gets) are not whole 16-byte units at
 * sizes >= 1 MiB, far slower than predicted: the rank's chunk of the
 * output (or input) buffer then starts off a 16-byte boundary where its
 * peers' buffers do not, and NCCL's copy kernels use 16-byte loads and
 * stores only where every pointer is 16-byte aligned (common_kernel.h:
 * v2.5 ReduceOrCopyMulti copies element by element when the alignments
 * differ, 2.6-2.16 by type, 2.17+ reduceCopy in packs of one element).
 * nccl-tests trims the chunks "so that non-pow2 ranks have buffer
 * addresses aligned suitably for performance" since 2.13.12 (commit
 * 29f4114, 2024-12; 2.13.4, 2022, trimmed them to 4 elements: 16 bytes
 * of a float, 8 of a half); collsim prices the aligned
 * buffers it and collsim run use, not the narrow copy. A hint, as
 * few_processes's: the median signed error at >= 1 MiB is +25 % or more. */
static void misaligned_chunks(const cs_validation_t *v, const cs_result_t *measured, GPtrArray *findings)
{
    cs_coll_t coll = measured->coll;
    if ((coll != CS_COLL_ALLGATHER && coll != CS_COLL_REDUCESCATTER && coll != CS_COLL_ALLTOALL) ||
        measured->nranks < 2)
        return;
    int large = 0, off = 0;
    guint64 example = 0, chunk = 0;
    for (guint i = 0; i < v->rows->len; i++) {
        const cs_validate_row_t *r = &g_array_index(v->rows, cs_validate_row_t, i);
        if (r->size < CS_VALIDATE_LARGE_MIN)
            continue;
        large++;
        if (r->size % (guint64)measured->nranks != 0 || r->size / (guint64)measured->nranks % 16 != 0) {
            if (off++ == 0) {
                example = r->size;
                chunk = r->size / (guint64)measured->nranks;
            }
        }
    }
    if (off == 0 || !(large_median(v) >= 0.25))
        return;
    int ranks_off = 0;   /* ranks whose chunk starts off a boundary at that size */
    for (int k = 1; k < measured->nranks; k++)
        ranks_off += (guint64)k * chunk % 16 != 0;
    g_ptr_array_add(findings, g_strdup_printf(
            "at %d of the %d sizes >= 1 MiB a rank's chunk is not a multiple of 16 bytes (%" G_GUINT64_FORMAT
            " B over %d ranks: %" G_GUINT64_FORMAT " B a chunk, %d of the ranks' chunks start off a 16-byte "
            "boundary), and NCCL copies with 16-byte loads and stores only where every pointer is aligned "
            "(common_kernel.h; otherwise an element at a time), slower wherever the GPUs' copies bound the "
            "collective; nccl-tests trims chunks to 16 bytes since 2.13.12 (2.13.4: to 4 elements), as "
            "collsim run does, and collsim prices those aligned buffers: the prediction is %.1fx the measured "
            "bus bandwidth (the median at sizes >= 1 MiB), not a prediction of this misaligned run",
            off, large, example, measured->nranks, chunk, ranks_off, large_median(v) + 1));
}

/* A run of at most two processes over several nodes, each driving several
 * GPUs, far slower than predicted, where no NCCL line said on which CPUs
 * its threads ran: Open MPI's mpirun binds each of at most two processes
 * to one core unless told otherwise (mpirun(1), "Process binding": bind
 * to core when the number of processes is <= 2), which puts every GPU's
 * network proxy thread of a process on that core; collsim does not price
 * the proxies' CPU time. A hint, as far_below's: the median signed error
 * at >= 1 MiB is +25 % or more (the prediction is at least 1.25 times the
 * measured bandwidth). Not where the log's command line binds otherwise
 * or is not Open MPI's launcher, nor for SendRecv (one pair a node crosses
 * the network: one busy proxy). */
static void few_processes(const cs_validation_t *v, const cs_nccl_info_t *seen, const cs_comm_info_t *ci,
                          const char *layout_from, const char *command, cs_coll_t coll, GPtrArray *findings)
{
    int procs = ci->procs_per_node * ci->nnodes;
    int gpus = ci->threads_per_proc * ci->gpus_per_thread;
    if ((seen != NULL && seen->cpu_lines > 0) || ci->nnodes < 2 || procs > 2 || gpus < 2 ||
        coll == CS_COLL_SENDRECV)
        return;
    if (command != NULL) {
        static const char *const binds[] = { "bind-to", "--cpu-bind", "--cpu_bind", "-cpu-set", "--cpu-set", NULL };
        for (int i = 0; binds[i] != NULL; i++)
            if (strstr(command, binds[i]) != NULL)
                return;
        const char *launcher = cs_nccltests_launcher(command);
        if (launcher != NULL && strcmp(launcher, "mpirun") != 0 && strcmp(launcher, "mpiexec") != 0 &&
            strcmp(launcher, "orterun") != 0)
            return;
    }
    double med = large_median(v);
    if (!(med >= 0.25))
        return;
    g_ptr_array_add(findings, g_strdup_printf(
            "the run is %d processes of %d GPUs each on %d nodes (%s) and the prediction is %.1fx its measured "
            "bus bandwidth (the median at sizes >= 1 MiB): started by Open MPI's mpirun without --bind-to, each "
            "process is bound to one core (mpirun(1): bind to core when there are at most 2 processes), where "
            "its %d GPUs' network proxy threads (one a GPU, posting and polling every network transfer) and the "
            "caller's share it, which collsim does not price; NCCL_DEBUG=INFO prints the set (its "
            "'ncclTopoGetCpuAffinity' or 'Setting affinity' lines, which validate reads), and mpirun --bind-to "
            "none frees them",
            procs, gpus, ci->nnodes, layout_from != NULL ? layout_from : "the model's layout", med + 1, gpus));
}

static void env_notes_add(GPtrArray **notes_p, char *note)
{
    if (*notes_p == NULL)
        *notes_p = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(*notes_p, note);
}

/* The NCCL variables the log records for its run (nccl-tests -J's "env")
 * into env, where neither a flag nor the scenario sets them: those NCCL
 * reads, but not those naming the run's own devices or files (an
 * NCCL_IB_HCA of its host's HCAs would match none of a preset's and turn
 * the model to sockets); those, and the ones NCCL does not read
 * (NCCL_VERSION, NCCL_HOME of a container), are named in *notes_p. */
static void log_env(const char *path, const cs_nccltests_log_t *log, cs_nccl_env_t *env, GPtrArray **notes_p)
{
    static const char *const host_own[] = { "NCCL_SOCKET_IFNAME", "NCCL_IB_HCA", "NCCL_TOPO_FILE", "NCCL_GRAPH_FILE",
                                            "NCCL_GRAPH_DUMP_FILE", "NCCL_TOPO_DUMP_FILE", "NCCL_DEBUG_FILE",
                                            "NCCL_CONF_FILE", "NCCL_HOSTID", "NCCL_COMM_ID", "NCCL_NET_PLUGIN",
                                            "NCCL_TUNER_PLUGIN", "NCCL_PROFILER_PLUGIN", "NCCL_TUNER_CONFIG_FILE" };
    g_autoptr(GString) not_own = g_string_new(NULL), not_read = g_string_new(NULL);
    for (guint i = 0; i < log->env->len; i++) {
        const char *kv = g_ptr_array_index(log->env, i);
        const char *eq = strchr(kv, '=');
        g_autofree char *name = g_strndup(kv, eq - kv);
        gboolean own = FALSE;
        for (guint k = 0; k < G_N_ELEMENTS(host_own); k++)
            own |= strcmp(name, host_own[k]) == 0;
        if (!cs_scenario_is_nccl_name(name) || !cs_nccl_env_is_known(name)) {
            g_string_append_printf(not_read, "%s%s", not_read->len ? ", " : "", name);
        } else if (own) {
            g_string_append_printf(not_own, "%s%s", not_own->len ? ", " : "", kv);
        } else if (cs_nccl_env_get(env, name) == NULL) {
            g_autofree char *origin = g_strdup_printf("%s:%d: \"env\"", path, g_array_index(log->env_lines, int, i));
            cs_nccl_env_set(env, name, eq + 1, origin);
        }
    }
    if (not_own->len > 0)
        env_notes_add(notes_p, g_strdup_printf("the log's \"env\" %s not applied: %s this host's own devices or "
                                               "files, which the topology's need not be (--env, with the "
                                               "topology's names, predicts it)", not_own->str,
                                               strchr(not_own->str, ',') != NULL ? "they name" : "it names"));
    if (not_read->len > 0)
        env_notes_add(notes_p, g_strdup_printf("the log's \"env\" %s not applied: NCCL v2.28.9 reads no such "
                                               "variable", not_read->str));
}

/* The log's GPUs (its '# Rank' lines' names) of another family than the
 * topology's: the prediction is for other hardware. The finding's text,
 * or NULL where they agree or either is not known. */
static char *gpu_mismatch(const cs_nccl_info_t *seen, const cs_topo_t *topo, const char *log)
{
    if (seen == NULL || seen->rank_gpu.count == 0 || topo->ngpus == 0)
        return NULL;
    const cs_gpu_model_t *m = cs_topo_rank_dev(topo, 0)->gpu;
    const char *ran = cs_gpu_family(seen->rank_gpu.text);
    const char *model = m != NULL ? cs_gpu_family(m->marketing) : NULL;
    if (ran == NULL || model == NULL || strcmp(ran, model) == 0)
        return NULL;
    /* the catalogue's model of that family: the first of the log's form
     * factor (PCIe or not), else the first */
    const cs_gpu_model_t *want = NULL, *first = NULL;
    gboolean pcie = strstr(seen->rank_gpu.text, "PCIe") != NULL;
    g_auto(GStrv) names = g_strsplit(cs_gpu_model_names(), ", ", -1);
    for (int i = 0; names[i] != NULL && want == NULL; i++) {
        const cs_gpu_model_t *g = cs_gpu_model_find(names[i]);
        if (g == NULL || g_strcmp0(cs_gpu_family(g->marketing), ran) != 0)
            continue;
        if (first == NULL)
            first = g;
        if ((strstr(g->marketing, "PCIe") != NULL) == pcie)
            want = g;
    }
    if (want == NULL)
        want = first;
    return g_strdup_printf("%s:%d: the run's GPUs are %s (the log's devices), the topology's %s (%s): the "
                           "prediction is for other GPUs; expected a topology of the measured machine (--topo: "
                           "a preset or file with %s GPUs%s%s)", log, seen->rank_gpu.line, seen->rank_gpu.text,
                           m->marketing, m->name, ran, want != NULL ? ", catalogue model " : "",
                           want != NULL ? want->name : "");
}

static int validate(validate_args_t *a, GError **err)
{
    cs_scenario_t s;
    cs_scenario_init(&s);
    cs_params_t params;
    cs_params_init_defaults(&params);
    g_autoptr(GArray) cmp = g_array_new(FALSE, TRUE, sizeof(compared_t));
    g_array_set_clear_func(cmp, compared_clear);
    g_autoptr(cs_nccltests_log_t) log = NULL;
    g_autoptr(cs_topo_t) topo = NULL;
    g_autoptr(cs_comm_t) comm = NULL;
    g_autofree char *layout_from = NULL;   /* where the measured run's process layout came from */
    gboolean gpu_warned = FALSE;           /* a GPU mismatch said on stderr once */
    g_autofree char *own_note = NULL;      /* ": table N " of the notes about --table N */
    g_autoptr(GPtrArray) env_notes = NULL; /* the log's "env" left out, for each table's notes */
    g_autofree char *bound_owned = NULL;   /* where the bound on its NCCL came from, when built here */
    int status = 2;

    if (!check_outputs(a, err))
        goto out;
    /* A version flag is the version alone (a log's line may go on, "+cuda12.2"):
     * "2.19.3junk" or "2.19.3.4" is refused, not read as 2.19.3 */
    if (a->nccl_version != NULL && !cs_nccl_version_whole(a->nccl_version)) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: --nccl-version: '%s' is not a version; expected "
                    "MAJOR.MINOR[.PATCH], e.g. 2.19.3", a->nccl_version);
        goto out;
    }
    if (a->nccl_version_max != NULL && !cs_nccl_version_whole(a->nccl_version_max)) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: --nccl-version-max: '%s' is not a version; expected "
                    "MAJOR.MINOR[.PATCH], e.g. 2.17.1", a->nccl_version_max);
        goto out;
    }
    if (a->scenario != NULL && !cs_scenario_load(&s, a->scenario, err))
        goto out;
    cs_topo_spec_merge(&s.topo, &a->topo);
    if (a->procs_per_node != NULL &&
        !cs_scenario_set(&s, "collective", "procs-per-node", a->procs_per_node, "collsim: --procs-per-node", NULL, err)) {
        g_prefix_error(err, "collsim: --procs-per-node: ");
        goto out;
    }
    if (a->nthreads != NULL && !cs_scenario_set(&s, "collective", "nthreads", a->nthreads, "collsim: -t", NULL, err)) {
        g_prefix_error(err, "collsim: -t: ");
        goto out;
    }
    /* the measured run's settings only: not this shell's environment */
    for (guint i = 0; i < a->envs->len; i++) {
        const char *kv = g_ptr_array_index(a->envs, i);
        const char *eq = strchr(kv, '=');
        g_autofree char *name = g_strndup(kv, eq - kv);
        cs_nccl_env_set(s.env, name, eq + 1, "--env");
    }
    if (a->model != NULL) {
        g_free(s.model);
        s.model = g_strdup(a->model);
    }
    if (a->calibration != NULL) {
        g_free(s.calibration);
        s.calibration = g_strdup(a->calibration);
    }
    const cs_engine_ops_t *ops = cs_engine_find(s.model != NULL ? s.model : "analytic");
    if (ops == NULL) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: --model: unknown model '%s'; expected one of %s",
                    s.model, cs_engine_names());
        goto out;
    }
    cs_nccltests_hint_t hint = { .has_coll = FALSE };
    if (a->op != NULL && !cs_coll_parse(a->op, &hint.coll)) {
        cs_set_flag_error(err, "--op", "unknown collective '%s'; expected broadcast, reduce, allgather, "
                          "reducescatter, allreduce, sendrecv or alltoall", a->op);
        goto out;
    }
    hint.has_coll = a->op != NULL;
    /* a scenario's [collective] op is the --op of the run it describes */
    const char *op_from = cs_run_args_origin(&s, "collective.op", NULL);
    if (hint.has_coll && op_from != NULL && hint.coll != s.coll)
        fprintf(stderr, "collsim: warning: --op %s over the scenario's op %s (%s): the flag's is taken\n", a->op,
                cs_coll_name(s.coll), op_from);
    if (!hint.has_coll && op_from != NULL) {
        hint.coll = s.coll;
        hint.has_coll = TRUE;
    }
    if (s.calibration != NULL && !cs_params_load(&params, s.calibration, err))
        goto out;
    /* the [fabric] section: its keys checked together, and a warning
     * where the model does not read it */
    if (!cs_scenario_fabric_check(&s.fabric, err))
        goto out;
    {
        g_autoptr(GPtrArray) ignored = g_ptr_array_new_with_free_func(g_free);
        cs_engine_ignored_settings(ops, &s.fabric, s.env, ignored);
        for (guint i = 0; i < ignored->len; i++)
            fprintf(stderr, "collsim: warning: %s\n", (const char *)g_ptr_array_index(ignored, i));
    }
    topo = cs_topo_spec_build(&s.topo, err);
    if (topo == NULL)
        goto out;
    hint.nranks = topo->ngpus;
    log = cs_nccltests_log_load_hint(a->log, &hint, err);
    if (log == NULL)
        goto out;
    log_env(a->log, log, s.env, &env_notes);
    /* the outputs again, now that the log, scenario and topology are read:
     * one named as an input is refused here, with its flag */
    if (!check_outputs(a, err))
        goto out;

    /* which tables */
    if (a->table > log->ntables) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: no table %d; expected 1 to %d (the log has %d)", a->log,
                    a->table, log->ntables, log->ntables);
        goto out;
    }
    for (guint i = 0; i < log->results->len; i++) {
        int number = g_array_index(log->table_numbers, int, i);
        if (a->table == 0 || a->table == number) {
            compared_t c = { .measured = g_ptr_array_index(log->results, i), .number = number,
                             .line = g_array_index(log->table_lines, int, i),
                             .seen = g_ptr_array_index(log->nccl_info, i),
                             .command = g_ptr_array_index(log->commands, i) };
            g_array_append_val(cmp, c);
        }
    }
    if (cmp->len == 0) {
        /* the reason is in the notes: "FILE:LINE: table N skipped: ..." */
        g_autofree char *key = g_strdup_printf(": table %d skipped", a->table);
        const char *why = NULL;
        for (guint i = 0; i < log->notes->len && why == NULL; i++)
            if (a->table == 0 || strstr(g_ptr_array_index(log->notes, i), key) != NULL)
                why = g_ptr_array_index(log->notes, i);
        if (why != NULL)
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s", why);
        else
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: no table to compare", a->log);
        goto out;
    }
    for (guint i = 0; i < cmp->len; i++) {
        compared_t *c = &g_array_index(cmp, compared_t, i);
        const cs_result_t *m = c->measured;
        /* the log's '# Rank' lines name hosts: one per node, except the
         * trays of an NVLink domain (an NVL72 rack is one node of 18) */
        int nhosts = cs_topo_rank_hosts(topo, NULL);
        if (m->nranks != topo->ngpus || (m->nnodes > 0 && m->nnodes != nhosts)) {
            /* the log counts hosts; where the topology's hosts are not its
             * nodes (NVLink-domain trays), both sides say hosts */
            const char *unit = nhosts != topo->nnodes ? "host" : "node";
            char nodes[32] = "", hosts[32] = "";
            if (m->nnodes > 0)
                g_snprintf(nodes, sizeof nodes, " on %d %s%s", m->nnodes, unit, m->nnodes == 1 ? "" : "s");
            if (nhosts != topo->nnodes)
                g_snprintf(hosts, sizeof hosts, " (%d hosts)", nhosts);
            /* a log of several tables over different rank counts: --table picks one */
            g_autoptr(GString) others = g_string_new(NULL);
            gboolean differ = FALSE;
            for (guint k = 0; k < cmp->len; k++)
                differ |= g_array_index(cmp, compared_t, k).measured->nranks != m->nranks;
            if (a->table == 0 && differ) {
                g_string_append(others, "; or --table N for one of its tables (their ranks:");
                for (guint k = 0; k < cmp->len && k < 12; k++) {
                    const compared_t *o = &g_array_index(cmp, compared_t, k);
                    g_string_append_printf(others, "%s table %d: %d", k > 0 ? "," : "", o->number, o->measured->nranks);
                }
                g_string_append_printf(others, "%s)", cmp->len > 12 ? ", ..." : "");
            }
            cs_set_error_at(err, a->log, c->line,
                            "table %d was measured over %d ranks%s but the topology has %d GPUs on %d "
                            "node%s%s; expected topology flags that match the run (--nodes, --gpus)%s",
                            c->number, m->nranks, nodes, topo->ngpus, topo->nnodes, topo->nnodes == 1 ? "" : "s",
                            hosts, others->str);
            goto out;
        }
    }

    /* The measured run's process layout: the flags, the scenario, else the
     * log's own "# nThread T nGpus G" when every compared table says the
     * same and it divides the nodes' GPUs (else one process per GPU) */
    if (a->procs_per_node != NULL || a->nthreads != NULL) {
        layout_from = g_strdup("as --procs-per-node / -t say");
        /* said where the log's own line tells another layout */
        int gpn = topo->ngpus / MAX(1, topo->nnodes), fp = 0, ft = 0, fg = 0;
        cs_run_args_layout(&s, gpn, &fp, &ft, &fg);
        for (guint i = 0; i < cmp->len; i++) {
            const cs_result_t *m = g_array_index(cmp, compared_t, i).measured;
            if (m->proc_threads <= 0 || m->proc_gpus <= 0 || (m->proc_threads == ft && m->proc_gpus == fg))
                continue;
            fprintf(stderr, "collsim: warning: --procs-per-node / -t (%d process%s a node, %d thread%s x %d GPU%s) "
                    "over the log's layout (table %d: %d thread%s x %d GPU%s a process): the flags' is priced\n", fp,
                    fp == 1 ? "" : "es", ft, ft == 1 ? "" : "s", fg, fg == 1 ? "" : "s",
                    g_array_index(cmp, compared_t, i).number, m->proc_threads, m->proc_threads == 1 ? "" : "s",
                    m->proc_gpus, m->proc_gpus == 1 ? "" : "s");
            break;
        }
    } else if (s.procs_per_node > 0 || s.nthreads > 0)
        layout_from = g_strdup("as the scenario says");
    else if (cmp->len > 0) {
        const cs_result_t *m0 = g_array_index(cmp, compared_t, 0).measured;
        int th = m0->proc_threads, g = m0->proc_gpus, gpn = topo->ngpus / MAX(1, topo->nnodes);
        for (guint i = 1; i < cmp->len; i++) {
            const cs_result_t *m = g_array_index(cmp, compared_t, i).measured;
            if (m->proc_threads != th || m->proc_gpus != g)
                th = g = 0;
        }
        if (th > 0 && g > 0 && th * g > 1 && gpn % (th * g) == 0) {
            g_autofree char *ppn = g_strdup_printf("%d", gpn / (th * g)), *nt = g_strdup_printf("%d", th);
            if (!cs_scenario_set(&s, "collective", "procs-per-node", ppn, "the log's nThread/nGpus line", NULL, err) ||
                (th > 1 && !cs_scenario_set(&s, "collective", "nthreads", nt, "the log's nThread/nGpus line", NULL,
                                            err)))
                goto out;
            layout_from = log->json ? g_strdup_printf("from the log's \"config\": nthreads %d, ngpus %d", th, g)
                          : m0->proc_from_line > 0
                              ? g_strdup_printf("from the log's command line at line %d: -t %d -g %d", m0->proc_from_line, th, g)
                              : g_strdup_printf("from the log's \"nThread %d nGpus %d\"", th, g);
        }
    }
    comm = cs_comm_new(topo, s.env, err);
    if (comm == NULL || !cs_run_args_apply_layout(&s, comm, err))
        goto out;
    /* The measured run's NCCL, the flag's over the log's line (checked
     * first, with the other flags): only what the model prices by version
     * follows it (cs_comm_host_work_channels). The flags are for logs that
     * do not say; over a log that does, the output says which wins. */
    if (a->nccl_version != NULL && log->nccl_version != NULL &&
        cs_nccl_version_code(a->nccl_version, NULL) != cs_nccl_version_code(log->nccl_version, NULL))
        fprintf(stderr, "collsim: warning: --nccl-version %s over the log's NCCL version %s: the flag's is priced\n",
                a->nccl_version, log->nccl_version);
    if (a->nccl_version_max != NULL && (a->nccl_version != NULL || log->nccl_version != NULL))
        fprintf(stderr, "collsim: warning: --nccl-version-max %s is not used: the run's NCCL version is %s (%s)\n",
                a->nccl_version_max, a->nccl_version != NULL ? a->nccl_version : log->nccl_version,
                a->nccl_version != NULL ? "--nccl-version" : "the log's");
    cs_predict_measured_nccl(comm, a->nccl_version, log);
    /* the flag's bound where no version is known, or the log's if tighter */
    const char *bound_from = NULL;
    char bound_patch[8] = "";   /* the flag's patch level, as given (a log's bound is a minor release) */
    if (cs_comm_info(comm)->nccl_version == 0) {
        int seen = cs_comm_info(comm)->nccl_version_max;
        if (cs_predict_measured_nccl_max(comm, a->nccl_version_max)) {
            int flag = cs_comm_info(comm)->nccl_version_max;
            bound_from = "--nccl-version-max";
            if (flag % 100 > 0)
                g_snprintf(bound_patch, sizeof bound_patch, ".%d", flag % 100);
        } else if (seen > 0) {
            if (a->nccl_version_max != NULL)
                fprintf(stderr, "collsim: warning: --nccl-version-max %s is not used: the log's line %d bounds the "
                        "run's NCCL tighter (%s)\n", a->nccl_version_max, log->nccl_version_max_line,
                        log->nccl_version_max_why);
            bound_owned = g_strdup_printf("the log's line %d: %s", log->nccl_version_max_line,
                                         log->nccl_version_max_why);
            bound_from = bound_owned;
        }
    }
    for (guint i = 0; i < cmp->len; i++) {
        compared_t *c = &g_array_index(cmp, compared_t, i);
        g_autofree char *where = g_strdup_printf("%s:%d: table %d", a->log, c->line, c->number);
        c->predicted = predict_table(ops, topo, comm, &params, &s, c->measured, a->skip_unsupported, where,
                                     err);
        if (c->predicted == NULL)
            goto out;
        for (guint k = 0; env_notes != NULL && k < env_notes->len; k++)
            cs_result_add_note(c->predicted, "%s", (const char *)g_ptr_array_index(env_notes, k));
        /* the layout the model runs (cs_run_args_apply_layout set it) */
        const cs_comm_info_t *ci = cs_comm_info(comm);
        cs_result_add_note(c->predicted, "process layout: %d process%s per node, %d thread%s x %d GPU%s each (%s)",
                           ci->procs_per_node, ci->procs_per_node == 1 ? "" : "es", ci->threads_per_proc,
                           ci->threads_per_proc == 1 ? "" : "s", ci->gpus_per_thread,
                           ci->gpus_per_thread == 1 ? "" : "s",
                           layout_from != NULL ? layout_from : "nccl-tests' multi-node default: one per GPU");
        if (ci->nccl_version > 0)
            cs_result_add_note(c->predicted, "NCCL %d.%d.%d (%s): a call's host side follows it (%s)%s%s%s; NCCL's "
                               "other decisions are v2.28.9's", ci->nccl_version / 10000,
                               ci->nccl_version / 100 % 100, ci->nccl_version % 100,
                               a->nccl_version != NULL ? "--nccl-version" : "the log's",
                               ci->nccl_version < 22200 ? "up to 2.21 its work is built per channel: "
                                                          "lat.launch.cpu.chan"
                                                        : "from 2.22 one work item for all channels",
                               ci->nccl_nch > 0 ? ", and its rings: one per NIC, doubled with NVLink (2.4)" : "",
                               cs_comm_p2p_direct(ci) ? DIRECT_NOTE : "",
                               cs_tree_phases_in_sequence(ci->nccl_version)
                                   ? ", the Simple tree's reduce up, then broadcast down (up to 2.7)"
                                   : ci->nccl_version >= 22902 && ci->cc >= 100
                                   ? (ci->nnodes > 1 && cs_comm_nvls_tree_corrected(comm)
                                          ? ", its tuner's Blackwell ring LL128 ceiling and NVLSTree size correction"
                                          : ", its tuner's Blackwell ring LL128 ceiling")
                                   : "");
        if (ci->nccltests_version > 0 && c->measured->coll == CS_COLL_ALLTOALL)
            cs_result_add_note(c->predicted, "nccl-tests %d.%d.%d built on NCCL %d.%d.%d headers (the log's): "
                               "AlltoAll %s (lat.launch.cpu.api)", ci->nccltests_version / 10000,
                               ci->nccltests_version / 100 % 100, ci->nccltests_version % 100,
                               ci->nccltests_headers / 10000, ci->nccltests_headers / 100 % 100,
                               ci->nccltests_headers % 100,
                               cs_comm_p2p_extra_calls(ci, CS_COLL_ALLTOALL, ci->nranks) == 0
                                   ? "is one ncclAlltoAll per GPU"
                                   : "is ncclSend and ncclRecv per peer per GPU");
        if (ci->nccl_version == 0 && ci->nccl_version_max > 0)
            cs_result_add_note(c->predicted, "NCCL <= %d.%d%s (%s): a call's host side follows it (%s)%s; NCCL's "
                               "decisions are v2.28.9's", ci->nccl_version_max / 10000,
                               ci->nccl_version_max / 100 % 100, bound_patch, bound_from,
                               ci->nccl_version_max < 22200 ? "up to 2.21 its work is built per channel: "
                                                              "lat.launch.cpu.chan"
                                                            : "a bound above 2.21 says nothing of it: one work item",
                               cs_comm_p2p_direct(ci) ? DIRECT_NOTE : "");
        c->v = cs_validate_compare(c->measured, c->predicted, CS_OOP, err);
        if (c->v == NULL)
            goto out;
        /* what the run's NCCL said it did, against the model's decisions */
        c->findings = g_ptr_array_new_with_free_func(g_free);
        cs_validate_findings(c->seen, comm, a->log, c->findings);
        /* other GPUs than the topology's explain a gap before any hint */
        char *other = gpu_mismatch(c->seen, topo, a->log);
        if (other != NULL) {
            if (!gpu_warned)
                fprintf(stderr, "collsim: warning: %s\n", other);
            gpu_warned = TRUE;
            g_ptr_array_insert(c->findings, 0, other);
        } else {
            misaligned_chunks(c->v, c->measured, c->findings);
            far_below(c->v, c->seen, c->findings);
            few_processes(c->v, c->seen, ci, layout_from, c->command, c->measured->coll, c->findings);
        }
        if (params.calibration_source != NULL) {
            cs_params_t builtin;
            cs_params_init_defaults(&builtin);
            g_autoptr(cs_result_t) before = predict_table(ops, topo, comm, &builtin, &s, c->measured,
                                                          a->skip_unsupported, where, err);
            if (before == NULL)
                goto out;
            c->v_before = cs_validate_compare(c->measured, before, CS_OOP, err);
            if (c->v_before == NULL)
                goto out;
        }
    }

    /* files first, atomically, all or none; then the report */
    if (!write_outputs(a, cmp, topo, &params, err)) {
        status = cs_error_exit_status(*err);
        goto out;
    }
    /* the notes are each about a table ("FILE:LINE: table N ..."): with
     * --table, those of the one compared */
    own_note = g_strdup_printf(": table %d ", a->table);
    guint noted = 0;
    for (guint i = 0; i < log->notes->len; i++) {
        const char *n = g_ptr_array_index(log->notes, i);
        if (a->table == 0 || strstr(n, own_note) != NULL) {
            printf("# log: %s\n", n);
            noted++;
        }
    }
    {
        /* the NCCL variables' warnings on stderr too, once (collsim(1)
         * ENVIRONMENT), as run does; the report's header has them per table */
        g_autoptr(GPtrArray) warned = cs_nccl_env_warnings_for(
            s.env, a->nccl_version != NULL ? a->nccl_version : log->nccl_version, NULL);
        for (guint i = 0; i < warned->len; i++)
            fprintf(stderr, "collsim: warning: %s\n", (const char *)g_ptr_array_index(warned, i));
    }
    for (guint i = 0; i < cmp->len; i++) {
        if (i > 0 || noted > 0)
            printf("\n");
        /* the env notes judge variables by the run's NCCL: the flag's when given */
        print_comparison(stdout, a->log, a->nccl_version != NULL ? a->nccl_version : log->nccl_version,
                         &g_array_index(cmp, compared_t, i), topo, s.env, &params);
    }
    /* a failed write: one line (the output module's), exit 3, as run does */
    if (!cs_output_stdout_flush(err)) {
        status = cs_error_exit_status(*err);
        goto out;
    }
    status = 0;
    /* Rows of the compared tables the reader could not read (a negative
     * or cut-off size): the comparison is incomplete, which is a failed
     * check (exit status 1), each row named on standard error. */
    int unread = 0;
    for (guint i = 0; i < log->unread->len; i++) {
        int number = g_array_index(log->unread_tables, int, i);
        if (a->table == 0 || a->table == number) {
            fprintf(stderr, "%s\n", (const char *)g_ptr_array_index(log->unread, i));
            unread++;
        }
    }
    if (unread > 0) {
        fprintf(stderr, "collsim: validate: %d row%s of %s not read; expected every row of the compared "
                "table%s read\n", unread, unread == 1 ? "" : "s", a->log, cmp->len == 1 ? "" : "s");
        status = CS_EXIT_FINDINGS;
    }
    /* With --fail-on-miss a table whose median misses a target is a
     * failed check too (collsim(1) EXIT STATUS), so that a script can gate
     * on the exit status; the report above is whole either way. Without
     * it the report is the answer and the exit status says it was made. */
    int missed = 0;
    for (guint i = 0; i < cmp->len && a->fail_on_miss; i++) {
        const cs_validation_t *v = g_array_index(cmp, compared_t, i).v;
        if ((v->busbw_large.n > 0 && !cs_validate_stat_pass(&v->busbw_large, CS_VALIDATE_BUSBW_TARGET)) ||
            (v->time_small.n > 0 && !cs_validate_stat_pass(&v->time_small, CS_VALIDATE_TIME_TARGET)))
            missed++;
    }
    if (missed > 0) {
        fprintf(stderr, "collsim: validate: %d of %u compared table%s of %s miss%s a target (median busbw "
                "error <= %.0f%% at >= 1 MiB, time error <= %.0f%% at <= 64 KiB); see the summary lines\n",
                missed, cmp->len, cmp->len == 1 ? "" : "s", a->log, missed == 1 ? "es" : "",
                CS_VALIDATE_BUSBW_TARGET * 100, CS_VALIDATE_TIME_TARGET * 100);
        status = CS_EXIT_FINDINGS;
    }
out:
    g_array_set_size(cmp, 0);
    cs_params_clear(&params);
    cs_scenario_clear(&s);
    return status;
}

int cs_cmd_validate(int argc, char **argv)
{
    validate_args_t a;
    memset(&a, 0, sizeof a);
    a.envs = g_ptr_array_new_with_free_func(g_free);
    cs_topo_spec_init(&a.topo);
    g_set_prgname("collsim validate");

    g_autoptr(GError) err = NULL;
    int status = 2;
    if (parse_args(&a, argc, argv, &err)) {
        status = validate(&a, &err);
    }
    if (status == 2 || (status == CS_EXIT_RESOURCE && err != NULL))
        status = cs_cli_fail(err);
    g_ptr_array_unref(a.envs);
    cs_topo_spec_clear(&a.topo);
    g_free(a.scenario);
    g_free(a.op);
    g_free(a.json_out);
    g_free(a.csv_out);
    g_free(a.svg_out);
    g_free(a.model);
    g_free(a.calibration);
    g_free(a.procs_per_node);
    g_free(a.nccl_version);
    g_free(a.nccl_version_max);
    g_free(a.nthreads);
    g_free(a.log);
    return status;
}
