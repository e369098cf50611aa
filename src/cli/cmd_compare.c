/* collsim compare: several designs priced side by side.
 *
 * A design is a scenario file, or one base scenario with a --design
 * LABEL:KEY=VALUE[,KEY=VALUE] variant. Each is built as collsim run builds
 * its scenario (file < flags < environment < --env), then the variant's
 * settings on top, and priced by its model (cs_predict_scenario). The
 * designs must run one collective; the rows are the union of their swept
 * sizes (a size a design does not sweep shows '-'). One table: per size and
 * design the bus bandwidth, time, NCCL's algorithm/protocol/channels and
 * the bus bandwidth against the first design; then a verdict: which design
 * takes the shortest time over which sizes, and why (the algorithms, and
 * the busiest link where the model reports link statistics). */
#include "config.h"
#include "cli/cs_commands.h"
#include "cli/cs_predict.h"
#include "io/cs_run_args.h"
#include "io/cs_scenario-int.h"
#include "io/cs_svg.h"
#include "io/cs_writers.h"
#include "io/cs_output.h"
#include "io/cs_writers-int.h"
#include "io/cs_link_stats_text.h"
#include "util/cs_error.h"
#include "util/cs_units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Times within this fraction of the shortest are a tie. */
#define TIE 0.01

typedef struct {
    char *label;
    char *from;                  /* "a.ini", "base.ini + NCCL_ALGO=Ring" */
    char *ignored;               /* the file's [output] keys compare does not honour, or NULL */
    cs_prediction_t *p;
    GHashTable *row_of;          /* requested size -> row index + 1 */
} design_t;

typedef struct {
    char **files;                /* G_OPTION_REMAINING */
    GPtrArray *variants;         /* "LABEL:K=V,..." as given */
} compare_opts_t;

/* One verdict line: consecutive sizes with the same outcome. */
typedef struct {
    guint first, last;           /* rows of the union */
    int best, second;            /* designs; second -1 when only one ran */
    gboolean tie;
    double lo, hi;               /* second's time / best's time over the range */
} verdict_t;

static void design_clear(design_t *d)
{
    g_free(d->label);
    g_free(d->from);
    g_free(d->ignored);
    cs_prediction_free(d->p);
    if (d->row_of != NULL)
        g_hash_table_destroy(d->row_of);
}

/* ---- building the designs ------------------------------------------------------ */

static gboolean on_design(const char *option_name, const char *value, gpointer data, GError **err)
{
    compare_opts_t *o = data;
    /* a label used twice is refused here, before any design is priced */
    const char *colon = strchr(value, ':');
    gsize n = colon != NULL ? (gsize)(colon - value) : strlen(value);
    for (guint i = 0; i < o->variants->len; i++) {
        const char *v = g_ptr_array_index(o->variants, i);
        if (strncmp(v, value, n) == 0 && (v[n] == ':' || v[n] == '\0')) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                        "collsim: --design %.*s: the label is used twice; expected one label per design", (int)n,
                        value);
            return FALSE;
        }
    }
    g_ptr_array_add(o->variants, g_strdup(value));
    return TRUE;
}

/* The file's base name: short enough for a column heading (the scenario's
 * name, often a sentence, is in the design's header line). */
static char *file_label(const char *path)
{
    g_autofree char *base = g_path_get_basename(path);
    if (g_str_has_suffix(base, ".ini"))
        base[strlen(base) - 4] = '\0';
    return g_strdup(base);
}

/* The [output] keys the design's own file set: compare writes its own
 * files (--json, --csv, --svg) and no trace. A flag is refused instead. */
static gboolean check_outputs(const cs_scenario_t *s, design_t *d, GError **err)
{
    static const char *const keys[] = { "output.json", "output.csv", "output.svg", "output.trace",
                                        "output.link-stats", "output.alternatives" };
    GString *ign = g_string_new(NULL);
    for (guint i = 0; i < G_N_ELEMENTS(keys); i++) {
        const char *o = g_hash_table_lookup(s->origins, keys[i]);
        if (o == NULL)
            continue;
        if (g_str_has_prefix(o, "collsim:")) {
            if (strcmp(keys[i], "output.trace") == 0 || strcmp(keys[i], "output.alternatives") == 0) {
                gboolean tr = keys[i][7] == 't';
                g_string_free(ign, TRUE);
                g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                            "collsim: --%s: compare runs several designs; expected collsim run --%s for one",
                            tr ? "trace" : "alternatives", tr ? "trace" : "alternatives");
                return FALSE;
            }
            continue;
        }
        g_string_append_printf(ign, "%s%s", ign->len ? ", " : "", keys[i] + 7);
    }
    d->ignored = ign->len ? g_string_free(ign, FALSE) : (g_string_free(ign, TRUE), NULL);
    return TRUE;
}

/* file < flags < environment < --env, then the variant's settings. */
static gboolean build_design(cs_run_args_t *a, const char *file, const char *variant, cs_scenario_t *s,
                             design_t *d, GError **err)
{
    g_free(a->scenario);
    a->scenario = g_strdup(file);
    if (!cs_run_args_build(a, s, err))
        return FALSE;
    if (variant == NULL) {
        d->label = file_label(file);
        d->from = s->name != NULL ? g_strdup_printf("%s (\"%s\")", file, s->name) : g_strdup(file);
        return check_outputs(s, d, err);
    }
    const char *colon = strchr(variant, ':');
    g_autofree char *label = colon != NULL ? g_strndup(variant, colon - variant) : NULL;
    gboolean label_ok = label != NULL && *label != '\0';
    for (const char *p = label; label_ok && *p; p++)
        label_ok = g_ascii_isgraph(*p) || (*p & 0x80);
    if (!label_ok || !g_utf8_validate(label, -1, NULL)) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                    "collsim: --design: '%s' is not a design; expected LABEL:KEY=VALUE[,KEY=VALUE...] "
                    "(e.g. ring:NCCL_ALGO=Ring)", variant);
        cs_scenario_error_one_line(*err);
        return FALSE;
    }
    g_autoptr(GError) e = NULL;
    g_auto(GStrv) kv = cs_predict_split_settings(colon + 1, &e);
    if (kv == NULL) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: --design %s: %s", label, e->message);
        cs_scenario_error_one_line(*err);
        return FALSE;
    }
    g_autofree char *origin = g_strdup_printf("collsim: --design %s", label);
    GString *from = g_string_new(file != NULL ? file : "the flags");
    g_autoptr(GHashTable) keys = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (int i = 0; kv[i] != NULL; i += 2) {
        g_autofree char *group = NULL, *key = NULL;
        if (!cs_predict_key_resolve(kv[i], &group, &key, &e) ||
            !cs_predict_set(s, group, key, kv[i + 1], origin, &e)) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: %s: %s", origin, kv[i], e->message);
            cs_scenario_error_one_line(*err);
            g_string_free(from, TRUE);
            return FALSE;
        }
        /* one value a key, as sweep's --grid wants (nodes=2,nodes=3 took the last) */
        char *gk = g_strdup_printf("%s.%s", group, key);
        if (!g_hash_table_add(keys, gk)) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: %s is set twice; expected each key once in a design",
                        origin, gk);
            g_string_free(from, TRUE);
            return FALSE;
        }
        g_string_append_printf(from, "%s%s=%s", i == 0 ? " + " : ", ", kv[i], kv[i + 1]);
    }
    d->label = g_steal_pointer(&label);
    d->from = g_string_free(from, FALSE);
    return check_outputs(s, d, err);
}

static gboolean build_designs(cs_run_args_t *a, const compare_opts_t *o, GArray *designs, GError **err)
{
    /* -s FILE is the first scenario */
    g_autoptr(GPtrArray) fl = g_ptr_array_new_with_free_func(g_free);
    if (a->scenario != NULL)
        g_ptr_array_add(fl, g_strdup(a->scenario));
    for (int i = 0; o->files != NULL && o->files[i] != NULL; i++)
        g_ptr_array_add(fl, g_strdup(o->files[i]));
    const char *const *files = (const char *const *)fl->pdata;
    int nfiles = (int)fl->len;
    guint nvar = o->variants->len;
    if (nvar > 0 && nfiles > 1) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                    "collsim: --design: variants apply to one base scenario; expected one scenario file with "
                    "--design, or several files without");
        return FALSE;
    }
    guint n = nvar > 0 ? nvar : (guint)nfiles;
    if (n < 2) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                    "collsim: compare: %u design%s given; expected two or more (scenario files, or --design "
                    "LABEL:KEY=VALUE variants of one scenario)", n, n == 1 ? "" : "s");
        return FALSE;
    }
    for (guint i = 0; i < n; i++) {
        design_t d = { 0 };
        cs_scenario_t s;
        cs_scenario_init(&s);
        const char *file = nvar > 0 ? (nfiles > 0 ? files[0] : NULL) : files[i];
        const char *variant = nvar > 0 ? g_ptr_array_index(o->variants, i) : NULL;
        gboolean ok = build_design(a, file, variant, &s, &d, err);
        if (ok && a->dump) {
            g_autofree char *ini = cs_scenario_to_ini(&s);
            printf("# design %s: %s\n%s", d.label, d.from, ini);
        } else if (ok) {
            d.p = cs_predict_scenario(&s, "compare", TRUE, err);
            ok = d.p != NULL;
            /* which design failed: as sweep names its point */
            if (!ok && err != NULL && *err != NULL && d.label != NULL) {
                g_autofree char *m = g_strdup_printf("%s (design %s)", (*err)->message, d.label);
                g_free((*err)->message);
                (*err)->message = g_steal_pointer(&m);
            }
        }
        cs_scenario_clear(&s);
        g_array_append_val(designs, d);
        if (!ok)
            return FALSE;
    }
    return TRUE;
}

/* One collective; labels unique (files named alike get their index). */
static gboolean check_designs(GArray *designs, const compare_opts_t *o, GError **err)
{
    design_t *ds = (design_t *)(void *)designs->data;
    for (guint i = 1; i < designs->len; i++)
        if (ds[i].p->result->coll != ds[0].p->result->coll) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                        "collsim: compare: design %s runs %s and design %s %s; expected one collective for all "
                        "(--op sets it for every design)", ds[0].label, cs_coll_name(ds[0].p->result->coll),
                        ds[i].label, cs_coll_name(ds[i].p->result->coll));
            return FALSE;
        }
    for (guint i = 0; i < designs->len; i++)
        for (guint j = 0; j < i; j++)
            if (strcmp(ds[i].label, ds[j].label) == 0) {
                if (o->variants->len > 0) {
                    g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                                "collsim: --design %s: the label is used twice; expected one label per design",
                                ds[i].label);
                    return FALSE;
                }
                char *l = g_strdup_printf("%s#%u", ds[i].label, i + 1);
                g_free(ds[i].label);
                ds[i].label = l;
            }
    for (guint i = 0; i < designs->len; i++) {
        ds[i].row_of = g_hash_table_new(g_int64_hash, g_int64_equal);
        for (int k = 0; k < ds[i].p->nsizes; k++)
            g_hash_table_insert(ds[i].row_of, &ds[i].p->sizes[k], GINT_TO_POINTER(k + 1));
    }
    return TRUE;
}

/* ---- the comparison -------------------------------------------------------- */

static int cmp_u64(gconstpointer a, gconstpointer b)
{
    guint64 x = *(const guint64 *)a, y = *(const guint64 *)b;
    return x < y ? -1 : x > y;
}

/* Every design's requested sizes, sorted, once each. */
static GArray *union_sizes(const GArray *designs)
{
    GArray *u = g_array_new(FALSE, FALSE, sizeof(guint64));
    for (guint i = 0; i < designs->len; i++) {
        const design_t *d = &g_array_index(designs, design_t, i);
        g_array_append_vals(u, d->p->sizes, d->p->nsizes);
    }
    g_array_sort(u, cmp_u64);
    guint w = 0;
    for (guint i = 0; i < u->len; i++)
        if (w == 0 || g_array_index(u, guint64, i) != g_array_index(u, guint64, w - 1))
            g_array_index(u, guint64, w++) = g_array_index(u, guint64, i);
    g_array_set_size(u, w);
    return u;
}

/* The design's row for a requested size, or NULL. */
static const cs_result_row_t *row_at(const design_t *d, guint64 size)
{
    int k = GPOINTER_TO_INT(g_hash_table_lookup(d->row_of, &size)) - 1;
    return k >= 0 ? &g_array_index(d->p->result->rows, cs_result_row_t, k) : NULL;
}

/* The design's link statistics at a size, or NULL. NULL too when they
 * name no link: a model that loads only some links (analytic: the
 * network's) has nothing to say about a call that crosses none. */
static const cs_link_stats_t *stats_at(const design_t *d, guint64 size)
{
    int k = GPOINTER_TO_INT(g_hash_table_lookup(d->row_of, &size)) - 1;
    const cs_link_stats_t *st = k >= 0 && d->p->link_stats != NULL ? g_ptr_array_index(d->p->link_stats, k) : NULL;
    return st != NULL && st->n > 0 ? st : NULL;
}

static gboolean ran(const cs_result_row_t *r)
{
    return r != NULL && r->time_us[CS_OOP] > 0;
}

/* Best and runner-up by time at one size; FALSE when fewer than two ran. */
static gboolean rank_at(const GArray *designs, guint64 size, int *best_p, int *second_p)
{
    int best = -1, second = -1;
    for (guint i = 0; i < designs->len; i++) {
        const cs_result_row_t *r = row_at(&g_array_index(designs, design_t, i), size);
        if (!ran(r))
            continue;
        if (best < 0 || r->time_us[CS_OOP] < row_at(&g_array_index(designs, design_t, best), size)->time_us[CS_OOP]) {
            second = best;
            best = (int)i;
        } else if (second < 0 ||
                   r->time_us[CS_OOP] < row_at(&g_array_index(designs, design_t, second), size)->time_us[CS_OOP]) {
            second = (int)i;
        }
    }
    *best_p = best;
    *second_p = second;
    return second >= 0;
}

/* NCCL's algorithm and protocol (channels vary with size within one). */
static gboolean same_choice(const cs_result_row_t *a, const cs_result_row_t *b)
{
    return strcmp(a->algo, b->algo) == 0 && strcmp(a->proto, b->proto) == 0;
}

/* Consecutive sizes where the same design wins over the same runner-up
 * with the same choices (or the same designs tie) make one verdict. */
static GArray *verdicts(const GArray *designs, const GArray *sizes)
{
    GArray *v = g_array_new(FALSE, FALSE, sizeof(verdict_t));
    for (guint i = 0; i < sizes->len; i++) {
        guint64 size = g_array_index(sizes, guint64, i);
        int best, second;
        if (!rank_at(designs, size, &best, &second))
            continue;
        const design_t *b = &g_array_index(designs, design_t, best), *s = &g_array_index(designs, design_t, second);
        double ratio = row_at(s, size)->time_us[CS_OOP] / row_at(b, size)->time_us[CS_OOP];
        gboolean tie = ratio <= 1 + TIE;
        verdict_t *last = v->len > 0 ? &g_array_index(v, verdict_t, v->len - 1) : NULL;
        gboolean extend = last != NULL && last->last + 1 == i && last->tie == tie;
        if (extend && !tie) {
            guint64 ls = g_array_index(sizes, guint64, last->last);
            extend = last->best == best && last->second == second &&
                     same_choice(row_at(b, size), row_at(b, ls)) && same_choice(row_at(s, size), row_at(s, ls));
        }
        if (extend) {
            last->last = i;
            last->lo = MIN(last->lo, ratio);
            last->hi = MAX(last->hi, ratio);
        } else {
            verdict_t nv = { i, i, best, second, tie, ratio, ratio };
            g_array_append_val(v, nv);
        }
    }
    return v;
}

static void choice(GString *g, const cs_result_row_t *r)
{
    g_string_append_printf(g, "%s/%s", r->algo, r->proto);
}

/* "n0.nic0 -> leaf0 (net) at 97% of 50 GB/s" */
static void busiest(GString *g, const cs_link_stats_t *st)
{
    if (st == NULL || st->n == 0 || st->time_s <= 0) {
        g_string_append(g, "no link (nothing crossed one)");
        return;
    }
    const cs_link_stat_t *l = &st->links[0];
    double util = l->cap > 0 ? l->bytes / (l->cap * st->time_s) : 0;
    g_string_append_printf(g, "%s at %.0f%% of %.1f GB/s", l->name, 100 * util, l->cap / 1e9);
}

/* Whether design 'i' is within TIE of the best at every size of the
 * verdict (and priced at one at least): in a tie it is named with the
 * best two, not as "1.00x slower". */
static gboolean ties_best(const GArray *designs, const GArray *sizes, const verdict_t *v, guint i)
{
    const design_t *b = &g_array_index(designs, design_t, v->best), *d = &g_array_index(designs, design_t, i);
    int n = 0;
    for (guint k = v->first; k <= v->last; k++) {
        guint64 size = g_array_index(sizes, guint64, k);
        const cs_result_row_t *rd = row_at(d, size), *rb = row_at(b, size);
        if (rd == NULL || rb == NULL || !(rd->time_us[CS_OOP] > 0) || !(rb->time_us[CS_OOP] > 0))
            return FALSE;
        if (rd->time_us[CS_OOP] / rb->time_us[CS_OOP] > 1 + TIE)
            return FALSE;
        n++;
    }
    return n > 0;
}

/* The designs beyond the best two, each against the best over the
 * verdict's sizes: "; 4to1 1.03x to 1.19x slower" (every design the
 * verdict does not name, so none drops out of it); in a tie, not those
 * that tie too (named with the best two). */
static void others(GString *g, const GArray *designs, const GArray *sizes, const verdict_t *v)
{
    const design_t *b = &g_array_index(designs, design_t, v->best);
    for (guint i = 0; i < designs->len; i++) {
        if ((int)i == v->best || (int)i == v->second || (v->tie && ties_best(designs, sizes, v, i)))
            continue;
        const design_t *d = &g_array_index(designs, design_t, i);
        double lo = 0, hi = 0;
        int n = 0;
        for (guint k = v->first; k <= v->last; k++) {
            guint64 size = g_array_index(sizes, guint64, k);
            const cs_result_row_t *rd = row_at(d, size), *rb = row_at(b, size);
            if (rd == NULL || rb == NULL || !(rd->time_us[CS_OOP] > 0) || !(rb->time_us[CS_OOP] > 0))
                continue;
            double r = rd->time_us[CS_OOP] / rb->time_us[CS_OOP];
            lo = n ? MIN(lo, r) : r;
            hi = n ? MAX(hi, r) : r;
            n++;
        }
        if (n == 0)
            g_string_append_printf(g, "; %s ran none of these sizes", d->label);
        else if (hi - lo < 0.005)
            g_string_append_printf(g, "; %s %.2fx slower", d->label, lo);
        else
            g_string_append_printf(g, "; %s %.2fx to %.2fx slower", d->label, lo, hi);
    }
}

static char *verdict_text(const GArray *designs, const GArray *sizes, const verdict_t *v)
{
    GString *g = g_string_new(NULL);
    g_autofree char *a = cs_format_size(g_array_index(sizes, guint64, v->first));
    g_autofree char *z = cs_format_size(g_array_index(sizes, guint64, v->last));
    guint64 last = g_array_index(sizes, guint64, v->last);
    const design_t *b = &g_array_index(designs, design_t, v->best);
    const design_t *s = &g_array_index(designs, design_t, v->second);
    if (v->first == v->last)
        g_string_append_printf(g, "%s: ", a);
    else
        g_string_append_printf(g, "%s to %s: ", a, z);
    if (v->tie) {
        /* "a and b tie", "a, b and c tie": every design within TIE */
        g_string_append_printf(g, "%s", b->label);
        GPtrArray *more = g_ptr_array_new();
        g_ptr_array_add(more, (gpointer)s->label);
        for (guint i = 0; i < designs->len; i++)
            if ((int)i != v->best && (int)i != v->second && ties_best(designs, sizes, v, i))
                g_ptr_array_add(more, (gpointer)g_array_index(designs, design_t, i).label);
        for (guint i = 0; i < more->len; i++)
            g_string_append_printf(g, "%s%s", i + 1 == more->len ? " and " : ", ", (const char *)more->pdata[i]);
        g_ptr_array_free(more, TRUE);
        g_string_append_printf(g, " tie (within %.0f%%)", 100 * TIE);
        others(g, designs, sizes, v);
        return g_string_free(g, FALSE);
    }
    if (v->hi - v->lo < 0.005)
        g_string_append_printf(g, "%s wins, %.2fx faster than %s", b->label, v->lo, s->label);
    else
        g_string_append_printf(g, "%s wins, %.2fx to %.2fx faster than %s", b->label, v->lo, v->hi, s->label);
    const cs_result_row_t *rb = row_at(b, last), *rs = row_at(s, last);
    g_string_append(g, " (");
    if (same_choice(rb, rs)) {
        g_string_append(g, "both ");
        choice(g, rb);
    } else {
        choice(g, rb);
        g_string_append(g, " against ");
        choice(g, rs);
    }
    g_string_append_c(g, ')');
    others(g, designs, sizes, v);
    const cs_link_stats_t *sb = stats_at(b, last), *ss = stats_at(s, last);
    if (sb != NULL || ss != NULL) {
        g_string_append_printf(g, "; busiest link at %s: ", z);
        if (sb != NULL) {
            g_string_append_printf(g, "%s ", b->label);
            busiest(g, sb);
        }
        if (ss != NULL) {
            g_string_append_printf(g, "%s%s ", sb != NULL ? ", " : "", s->label);
            busiest(g, ss);
        }
    }
    return g_string_free(g, FALSE);
}

/* ---- outputs ------------------------------------------------------------------ */

/* "analytic" or "analytic, flow": the models the designs used, first-use order. */
static char *models_of(const GArray *designs)
{
    GString *g = g_string_new(NULL);
    for (guint i = 0; i < designs->len; i++) {
        const char *m = g_array_index(designs, design_t, i).p->ops->name;
        gboolean seen = FALSE;
        for (guint j = 0; j < i; j++)
            seen = seen || strcmp(g_array_index(designs, design_t, j).p->ops->name, m) == 0;
        if (!seen)
            g_string_append_printf(g, "%s%s", g->len ? ", " : "", m);
    }
    return g_string_free(g, FALSE);
}

static gboolean any_without_stats(const GArray *designs)
{
    for (guint i = 0; i < designs->len; i++)
        if (g_array_index(designs, design_t, i).p->link_stats == NULL)
            return TRUE;
    return FALSE;
}

static double ratio_to_first(const GArray *designs, guint i, guint64 size)
{
    const cs_result_row_t *r0 = row_at(&g_array_index(designs, design_t, 0), size);
    const cs_result_row_t *r = row_at(&g_array_index(designs, design_t, i), size);
    if (!ran(r0) || !ran(r) || r0->busbw[CS_OOP] <= 0)
        return -1;
    return r->busbw[CS_OOP] / r0->busbw[CS_OOP];
}

#define COL_BW 9
#define COL_T 11
#define COL_CH 18
#define COL_R 8

static int group_width(guint i)
{
    return COL_BW + COL_T + 2 + COL_CH + (i > 0 ? COL_R : 0);
}

static void write_table(FILE *f, const GArray *designs, const GArray *sizes, const GArray *v, gboolean link_lines)
{
    g_autofree char *models = models_of(designs);
    cs_coll_t coll = g_array_index(designs, design_t, 0).p->result->coll;
    fprintf(f, "# collsim %s comparison (model%s: %s) — every number is a model prediction, not a measurement\n",
            PACKAGE_VERSION, strchr(models, ',') != NULL ? "s" : "", models);
    fprintf(f, "# %s, %u designs\n", cs_coll_name(coll), designs->len);
    for (guint i = 0; i < designs->len; i++) {
        const design_t *d = &g_array_index(designs, design_t, i);
        const cs_result_t *r = d->p->result;
        fprintf(f, "# design %s: %s (model: %s): %d rank%s on %d node%s, %s\n", d->label, d->from, d->p->ops->name,
                r->nranks, r->nranks == 1 ? "" : "s", r->nnodes, r->nnodes == 1 ? "" : "s", d->p->topo_desc);
        for (guint k = 0; k < r->notes->len; k++)
            fprintf(f, "#   %s: %s\n", d->label, (const char *)g_ptr_array_index(r->notes, k));
        if (d->ignored != NULL)
            fprintf(f, "#   %s: its file's [output] %s not used: compare writes --json, --csv, --svg for all designs\n",
                    d->label, d->ignored);
    }
    fprintf(f, "# busbw, algbw: GB/s; time: us per call (out-of-place); ratio: bus bandwidth against %s's\n",
            g_array_index(designs, design_t, 0).label);
    if (any_without_stats(designs))
        fprintf(f, "# busiest links: named for the designs whose model reports link statistics (analytic: "
                   "network links, flow: every link)\n");
    fprintf(f, "#\n#%12s", "");
    for (guint i = 0; i < designs->len; i++) {
        const char *l = g_array_index(designs, design_t, i).label;
        int w = group_width(i);
        int len = (int)g_utf8_strlen(l, -1);
        if (len > w - 2) {
            g_autofree char *cut = g_utf8_substring(l, 0, MAX(1, w - 3));
            fprintf(f, "  %s~%*s", cut, w - 3 - (int)g_utf8_strlen(cut, -1), "");
        } else {
            fprintf(f, "  %s%*s", l, w - len, "");
        }
    }
    fprintf(f, "\n#%11s", "size");
    for (guint i = 0; i < designs->len; i++) {
        fprintf(f, "  %*s%*s  %-*s", COL_BW, "busbw", COL_T, "time", COL_CH, "algo/proto/nch");
        if (i > 0)
            fprintf(f, "%*s", COL_R, "ratio");
    }
    fputc('\n', f);
    for (guint k = 0; k < sizes->len; k++) {
        guint64 size = g_array_index(sizes, guint64, k);
        fprintf(f, "%12" G_GUINT64_FORMAT, size);
        for (guint i = 0; i < designs->len; i++) {
            const cs_result_row_t *r = row_at(&g_array_index(designs, design_t, i), size);
            if (r == NULL) {
                fprintf(f, "  %*s%*s  %-*s", COL_BW, "-", COL_T, "-", COL_CH, "-");
            } else {
                char ch[64];
                if (ran(r))
                    g_snprintf(ch, sizeof ch, "%s/%s/%d", r->algo, r->proto, r->nchannels);
                else
                    g_snprintf(ch, sizeof ch, "%s", r->algo);
                double t = r->time_us[CS_OOP];
                fprintf(f, "  %*.2f%*.*f  %-*s", COL_BW, r->busbw[CS_OOP], COL_T, t < 1e4 ? 2 : 0, t, COL_CH, ch);
            }
            if (i > 0) {
                double q = ratio_to_first(designs, i, size);
                if (q < 0)
                    fprintf(f, "%*s", COL_R, "-");
                else
                    fprintf(f, "%*.2fx", COL_R - 1, q);
            }
        }
        fputc('\n', f);
    }
    fprintf(f, "#\n# verdict (shortest time wins; within %.0f%% is a tie):\n", 100 * TIE);
    if (v->len == 0)
        fprintf(f, "#   none: at no size did two designs move data\n");
    for (guint i = 0; i < v->len; i++) {
        g_autofree char *t = verdict_text(designs, sizes, &g_array_index(v, verdict_t, i));
        fprintf(f, "#   %s\n", t);
    }
    if (link_lines) {
        fprintf(f, "#\n");
        for (guint i = 0; i < designs->len; i++) {
            const design_t *d = &g_array_index(designs, design_t, i);
            for (int k = 0; d->p->link_stats != NULL && k < d->p->nsizes; k++) {
                const cs_link_stats_t *st = g_ptr_array_index(d->p->link_stats, k);
                if (st == NULL || (st->n == 0 && st->limit == NULL))
                    continue;   /* nothing ran, or nothing the model names */
                g_autofree char *sz = cs_format_size(d->p->sizes[k]);
                g_autofree char *prefix = g_strdup_printf("%s %10s: ", d->label, sz);
                cs_write_bottleneck_line(f, st, prefix);
            }
            if (d->p->link_stats == NULL)
                fprintf(f, "# %s: the %s model reports no link statistics (--model analytic and flow do)\n", d->label,
                        d->p->ops->name);
        }
    }
    fprintf(f, "#\n");
}

static char *write_json(const GArray *designs, const GArray *sizes, const GArray *v)
{
    g_autofree char *models = models_of(designs);
    GString *g = g_string_new("{\n  \"producer\": \"collsim compare\",\n  \"version\": \"" PACKAGE_VERSION "\",\n");
    g_string_append(g, "  \"prediction\": true,\n  \"models\": ");
    cs_write_append_json_string(g, models);
    g_string_append(g, ",\n  \"collective\": ");
    cs_write_append_json_string(g, cs_coll_name(g_array_index(designs, design_t, 0).p->result->coll));
    g_string_append(g, ",\n  \"designs\": [");
    for (guint i = 0; i < designs->len; i++) {
        const design_t *d = &g_array_index(designs, design_t, i);
        g_string_append(g, i ? ",\n    {" : "\n    {");
        g_string_append(g, "\"label\": ");
        cs_write_append_json_string(g, d->label);
        g_string_append(g, ", \"from\": ");
        cs_write_append_json_string(g, d->from);
        g_string_append(g, ", \"producer\": ");
        cs_write_append_json_string(g, d->p->result->producer);
        g_string_append_printf(g, ", \"nranks\": %d, \"nnodes\": %d, \"topology\": ", d->p->result->nranks,
                               d->p->result->nnodes);
        cs_write_append_json_string(g, d->p->topo_desc);
        g_string_append(g, ", \"notes\": [");
        for (guint k = 0; k < d->p->result->notes->len; k++) {
            if (k)
                g_string_append(g, ", ");
            cs_write_append_json_string(g, g_ptr_array_index(d->p->result->notes, k));
        }
        g_string_append(g, "]}");
    }
    g_string_append(g, "\n  ],\n  \"rows\": [");
    for (guint k = 0; k < sizes->len; k++) {
        guint64 size = g_array_index(sizes, guint64, k);
        g_string_append_printf(g, "%s\n    {\"size\": %" G_GUINT64_FORMAT ", \"designs\": [", k ? "," : "", size);
        for (guint i = 0; i < designs->len; i++) {
            const cs_result_row_t *r = row_at(&g_array_index(designs, design_t, i), size);
            if (i)
                g_string_append(g, ", ");
            if (r == NULL) {
                g_string_append(g, "null");
                continue;
            }
            g_string_append_printf(g, "{\"printed_size\": %" G_GUINT64_FORMAT ", ", r->size);
            cs_write_append_json_num(g, "time_us", ran(r) ? r->time_us[CS_OOP] : -1);
            g_string_append(g, ", ");
            cs_write_append_json_num(g, "algbw", ran(r) ? r->algbw[CS_OOP] : -1);
            g_string_append(g, ", ");
            cs_write_append_json_num(g, "busbw", ran(r) ? r->busbw[CS_OOP] : -1);
            g_string_append(g, ", \"algo\": ");
            cs_write_append_json_string(g, r->algo);
            g_string_append(g, ", \"proto\": ");
            cs_write_append_json_string(g, ran(r) ? r->proto : NULL);
            g_string_append_printf(g, ", \"nchannels\": %d, ", r->nchannels);
            cs_write_append_json_num(g, "ratio", ratio_to_first(designs, i, size));
            g_string_append_c(g, '}');
        }
        int best, second;
        g_string_append(g, "], \"winner\": ");
        if (rank_at(designs, size, &best, &second) &&
            row_at(&g_array_index(designs, design_t, second), size)->time_us[CS_OOP] >
                (1 + TIE) * row_at(&g_array_index(designs, design_t, best), size)->time_us[CS_OOP])
            cs_write_append_json_string(g, g_array_index(designs, design_t, best).label);
        else
            g_string_append(g, "null");
        g_string_append_c(g, '}');
    }
    g_string_append(g, "\n  ],\n  \"verdict\": [");
    for (guint i = 0; i < v->len; i++) {
        const verdict_t *x = &g_array_index(v, verdict_t, i);
        g_autofree char *t = verdict_text(designs, sizes, x);
        g_string_append_printf(g, "%s\n    {\"from\": %" G_GUINT64_FORMAT ", \"to\": %" G_GUINT64_FORMAT ", \"winner\": ",
                               i ? "," : "", g_array_index(sizes, guint64, x->first),
                               g_array_index(sizes, guint64, x->last));
        if (x->tie)
            g_string_append(g, "null");
        else
            cs_write_append_json_string(g, g_array_index(designs, design_t, x->best).label);
        g_string_append(g, ", \"text\": ");
        cs_write_append_json_string(g, t);
        g_string_append_c(g, '}');
    }
    g_string_append(g, "\n  ]\n}\n");
    return g_string_free(g, FALSE);
}

static char *write_csv(const GArray *designs, const GArray *sizes)
{
    GString *g = g_string_new("size,design,producer,collective,nranks,nnodes,printed_size,time_us,algbw,busbw,"
                              "algo,proto,nchannels,ratio\n");
    for (guint k = 0; k < sizes->len; k++) {
        guint64 size = g_array_index(sizes, guint64, k);
        for (guint i = 0; i < designs->len; i++) {
            const design_t *d = &g_array_index(designs, design_t, i);
            const cs_result_row_t *r = row_at(d, size);
            if (r == NULL)
                continue;
            g_string_append_printf(g, "%" G_GUINT64_FORMAT ",", size);
            cs_write_csv_field(g, d->label);
            g_string_append_c(g, ',');
            cs_write_csv_field(g, d->p->result->producer);
            g_string_append_printf(g, ",%s,%d,%d,%" G_GUINT64_FORMAT, cs_coll_name(d->p->result->coll),
                                   d->p->result->nranks, d->p->result->nnodes, r->size);
            cs_predict_csv_num(g, ran(r) ? r->time_us[CS_OOP] : -1);
            cs_predict_csv_num(g, ran(r) ? r->algbw[CS_OOP] : -1);
            cs_predict_csv_num(g, ran(r) ? r->busbw[CS_OOP] : -1);
            g_string_append_c(g, ',');
            cs_write_csv_field(g, r->algo);
            g_string_append_c(g, ',');
            cs_write_csv_field(g, ran(r) ? r->proto : NULL);
            g_string_append_c(g, ',');
            if (r->nchannels > 0)
                g_string_append_printf(g, "%d", r->nchannels);
            cs_predict_csv_num(g, ratio_to_first(designs, i, size));
            g_string_append_c(g, '\n');
        }
    }
    return g_string_free(g, FALSE);
}

static char *write_svg(const GArray *designs)
{
    guint n = designs->len;
    g_autofree cs_svg_series_t *series = g_new0(cs_svg_series_t, n);
    g_autoptr(GPtrArray) keep = g_ptr_array_new_with_free_func(g_free);   /* the series' arrays */
    for (guint i = 0; i < n; i++) {
        const design_t *d = &g_array_index(designs, design_t, i);
        series[i] = cs_predict_svg_series(d->p->result, d->p->sizes, d->label, keep);
    }
    g_autofree char *models = models_of(designs);
    GString *title = g_string_new(cs_coll_name(g_array_index(designs, design_t, 0).p->result->coll));
    for (guint i = 0; i < n; i++)
        g_string_append_printf(title, "%s%s", i == 0 ? ": " : " vs ", g_array_index(designs, design_t, i).label);
    g_autofree char *caption = cs_predict_svg_caption(models, "compare");
    cs_svg_opts_t o = { .title = title->str, .caption = caption, .time_panel = TRUE };
    char *svg = cs_svg_plot(series, (int)n, &o);
    g_string_free(title, TRUE);
    return svg;
}

/* --json, --csv, --svg: all written or none, before the table. */
static gboolean write_files(const cs_scenario_t *flags, const GArray *designs, const GArray *sizes,
                            const GArray *v, GError **err)
{
    const char *paths[3], *data[3];
    int n = 0;
    g_autofree char *json = flags->json_out != NULL ? write_json(designs, sizes, v) : NULL;
    g_autofree char *csv = flags->csv_out != NULL ? write_csv(designs, sizes) : NULL;
    g_autofree char *svg = flags->svg_out != NULL ? write_svg(designs) : NULL;
    if (json != NULL)
        paths[n] = flags->json_out, data[n++] = json;
    if (csv != NULL)
        paths[n] = flags->csv_out, data[n++] = csv;
    if (svg != NULL)
        paths[n] = flags->svg_out, data[n++] = svg;
    return cs_output_write(n, paths, data, NULL, err);
}

/* Before any design is priced: each file can be written, none twice. */
static gboolean check_files(const cs_scenario_t *flags, GError **err)
{
    const char *paths[3], *names[3];
    int n = 0;
    if (flags->json_out != NULL)
        names[n] = "collsim: --json", paths[n++] = flags->json_out;
    if (flags->csv_out != NULL)
        names[n] = "collsim: --csv", paths[n++] = flags->csv_out;
    if (flags->svg_out != NULL)
        names[n] = "collsim: --svg", paths[n++] = flags->svg_out;
    return cs_output_check(n, paths, names, err);
}

static int compare(cs_run_args_t *a, const compare_opts_t *o, GError **err)
{
    g_autoptr(GArray) designs = g_array_new(FALSE, TRUE, sizeof(design_t));
    g_array_set_clear_func(designs, (GDestroyNotify)design_clear);
    if (!a->dump && !check_files(&a->scratch, err))
        return 2;
    if (!build_designs(a, o, designs, err))
        return cs_error_exit_status(*err);
    if (a->dump)
        return 0;
    if (!check_designs(designs, o, err))
        return 2;
    g_autoptr(GArray) sizes = union_sizes(designs);
    g_autoptr(GArray) v = verdicts(designs, sizes);
    if (!write_files(&a->scratch, designs, sizes, v, err))
        return cs_error_exit_status(*err);
    write_table(stdout, designs, sizes, v, a->scratch.link_stats);
    return cs_output_stdout_flush(err) ? 0 : cs_error_exit_status(*err);
}

static const cs_run_args_cmd_t compare_cmd = {
    .command = "compare",
    .parameter = "SCENARIO... | [SCENARIO] --design LABEL:KEY=VALUE... - compare designs side by side",
    .summary =
        "Prices each design with its model and prints one table: per size, each design's bus\n"
        "bandwidth, time, NCCL's algorithm/protocol/channels and its bus bandwidth against the\n"
        "first; then which design is fastest over which sizes, and why. A design is a scenario\n"
        "file, or a variant of one scenario: --design LABEL:KEY=VALUE[,KEY=VALUE...], where KEY is\n"
        "an NCCL_* name, a scenario key (topology.nodes, scenario.model) or a flag's long name.\n"
        "Flags (-b -e -f --op --nodes --model --env ...) apply to every design.",
    .description =
        "Examples:\n"
        "  collsim compare scenarios/dgx-h100.ini scenarios/dgx-a100.ini -b 1M -e 1G -f 2\n"
        "  collsim compare scenarios/default.ini --design ring:NCCL_ALGO=Ring --design tree:NCCL_ALGO=Tree\n"
        "  collsim compare --topo dgx-h100 --nodes 8 --nic ib-ndr --fabric fat-tree --model flow \\\n"
        "      --design 1to1:oversubscription=1 --design 4to1:oversubscription=4 --svg os.svg\n"
        "\nSee collsim-compare(1).",
    .extra_main = TRUE,
};

int cs_cmd_compare(int argc, char **argv)
{
    cs_run_args_t a;
    cs_run_args_init(&a);
    g_set_prgname("collsim compare");
    compare_opts_t o = { .variants = g_ptr_array_new_with_free_func(g_free) };
    GOptionEntry extra[] = {
        { "design", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_design,
          "A design: the scenario with these settings (repeatable; commas separate settings, \\, is a comma)",
          "LABEL:KEY=VALUE[,...]" },
        { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o.files, NULL, "SCENARIO..." },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    cs_run_args_cmd_t cmd = compare_cmd;
    cmd.extra = extra;
    cmd.extra_data = &o;

    g_autoptr(GError) err = NULL;
    int status;
    if (!cs_run_args_parse(&a, &cmd, argc, argv, &err))
        status = cs_cli_fail(err);
    else if ((status = compare(&a, &o, &err)) == CS_EXIT_INPUT || status == CS_EXIT_RESOURCE)
        cs_cli_fail(err);
    g_strfreev(o.files);
    g_ptr_array_unref(o.variants);
    cs_run_args_clear(&a);
    return status;
}
