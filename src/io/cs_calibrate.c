/* Fitting the parameters of the time models to measured results
 * (docs/calibration.md):
 *   1. sensitivity: each parameter is moved by 10 % (0.1 us for latencies
 *      near 0) and the change of every predicted log-time is recorded; a
 *      parameter is fitted only on the size range that it moves, latency
 *      terms (us) on sizes <= 64 KiB and the others (bandwidths,
 *      efficiencies) on sizes >= 1 MiB, falling back to the other range
 *      only where the preferred one does not constrain it;
 *   2. bounded coordinate descent: per parameter, a grid scan over its
 *      valid range then golden-section search, minimising a robust (Cauchy)
 *      loss of log(t_predicted / t_measured) over the sizes of its range, a
 *      few sweeps in parameter order (deterministic);
 *   3. parameters that moved by less than min_move are kept as they were. */
#include "config.h"
#include "io/cs_calibrate.h"
#include "io/cs_validate.h"
#include "util/cs_error.h"

#include <math.h>
#include <string.h>

/* One (type, reduction, root) group of a result's rows: one engine sweep. */
typedef struct {
    cs_dtype_t dtype;
    cs_redop_t redop;
    int root;
    guint64 *sizes;
    int *point;          /* index into the set's points, per size; -1 = not used */
    int n;
} sweep_t;

typedef struct {
    char *label;
    cs_result_t *measured;
    cs_topo_t *topo;
    cs_comm_t *comm;
    GArray *sweeps;      /* sweep_t */
    int npoints;
} input_t;

typedef struct {
    int input;
    guint64 size;
    cs_calib_range_t range;
    double log_meas;
    double log_pred;     /* with the current parameters */
} point_t;

struct cs_calib_set {
    const cs_engine_ops_t *ops;
    GPtrArray *inputs;   /* input_t* */
    GArray *points;      /* point_t */
};

static void input_free(gpointer p)
{
    input_t *in = p;
    for (guint i = 0; i < in->sweeps->len; i++) {
        sweep_t *w = &g_array_index(in->sweeps, sweep_t, i);
        g_free(w->sizes);
        g_free(w->point);
    }
    g_array_unref(in->sweeps);
    cs_result_free(in->measured);
    cs_comm_free(in->comm);
    cs_topo_free(in->topo);
    g_free(in->label);
    g_free(in);
}

cs_calib_set_t *cs_calib_set_new(const cs_engine_ops_t *ops)
{
    cs_calib_set_t *s = g_new0(cs_calib_set_t, 1);
    s->ops = ops;
    s->inputs = g_ptr_array_new_with_free_func(input_free);
    s->points = g_array_new(FALSE, FALSE, sizeof(point_t));
    return s;
}

void cs_calib_set_free(cs_calib_set_t *s)
{
    if (s == NULL)
        return;
    g_ptr_array_unref(s->inputs);
    g_array_unref(s->points);
    g_free(s);
}

int cs_calib_set_count(const cs_calib_set_t *s)
{
    return (int)s->inputs->len;
}

static cs_calib_range_t range_of(guint64 size)
{
    if (size <= CS_VALIDATE_SMALL_MAX)
        return CS_CALIB_SMALL;
    if (size >= CS_VALIDATE_LARGE_MIN)
        return CS_CALIB_LARGE;
    return CS_CALIB_NONE;
}

/* Predicts every sweep of one input with 'params' and stores the log
 * times in the points (or into 'out' when not NULL, indexed by point). */
static gboolean predict_input(const cs_calib_set_t *s, int idx, const cs_params_t *params, double *out,
                              GError **err)
{
    input_t *in = g_ptr_array_index(s->inputs, idx);
    for (guint w = 0; w < in->sweeps->len; w++) {
        const sweep_t *sw = &g_array_index(in->sweeps, sweep_t, w);
        cs_engine_job_t job = {
            .topo = in->topo, .comm = in->comm, .params = params, .coll = in->measured->coll,
            .dtype = sw->dtype, .redop = sw->redop, .root = sw->root, .seed = 1,
        };
        g_autoptr(cs_result_t) r = cs_engine_run_sweep(s->ops, &job, sw->sizes, sw->n, err);
        if (r == NULL) {
            g_prefix_error(err, "%s: ", in->label);
            return FALSE;
        }
        for (int i = 0; i < sw->n && i < (int)r->rows->len; i++) {
            if (sw->point[i] < 0)
                continue;
            double t = g_array_index(r->rows, cs_result_row_t, i).time_us[CS_OOP];
            double lt = t > 0 ? log(t) : NAN;
            if (out != NULL)
                out[sw->point[i]] = lt;
            else
                g_array_index(s->points, point_t, sw->point[i]).log_pred = lt;
        }
    }
    return TRUE;
}

gboolean cs_calib_set_add(cs_calib_set_t *s, const char *label, cs_result_t *measured, cs_topo_t *topo,
                          cs_comm_t *comm, GError **err)
{
    input_t *in = g_new0(input_t, 1);
    in->label = g_strdup(label);
    in->measured = measured;
    in->topo = topo;
    in->comm = comm;
    in->sweeps = g_array_new(FALSE, TRUE, sizeof(sweep_t));
    int idx = (int)s->inputs->len;
    g_ptr_array_add(s->inputs, in);
    guint first_point = s->points->len;
    guint nrows = measured->rows->len;
    g_autofree gboolean *done = g_new0(gboolean, MAX(nrows, 1));

    if (measured->nranks == 0)
        measured->nranks = topo->ngpus;   /* not stated: the hardware's, as validate assumes */
    if (measured->nranks != topo->ngpus) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                    "%s: measured over %d ranks but the topology has %d GPUs; expected topology flags that match "
                    "the run (--nodes, --gpus)", label, measured->nranks, topo->ngpus);
        goto fail;
    }
    for (guint i = 0; i < nrows; i++) {
        if (done[i])
            continue;
        const cs_result_row_t *g = &g_array_index(measured->rows, cs_result_row_t, i);
        sweep_t sw = { .dtype = g->dtype, .redop = g->redop,
                       .root = cs_coll_has_root(measured->coll) ? MAX(g->root, 0) : -1 };
        if (cs_coll_has_root(measured->coll) && g->root >= topo->ngpus) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: root %d is not a rank of the topology; expected 0 to %d",
                        label, g->root, topo->ngpus - 1);
            goto fail;
        }
        sw.sizes = g_new(guint64, nrows);
        sw.point = g_new(int, nrows);
        for (guint j = i; j < nrows; j++) {
            const cs_result_row_t *r = &g_array_index(measured->rows, cs_result_row_t, j);
            if (done[j] || r->dtype != g->dtype || r->redop != g->redop || r->root != g->root)
                continue;
            done[j] = TRUE;
            sw.sizes[sw.n] = r->size;
            sw.point[sw.n] = -1;
            double t = r->time_us[CS_OOP];
            cs_calib_range_t rg = range_of(r->size);
            if (t > 0 && isfinite(t) && r->size > 0 && rg != CS_CALIB_NONE) {
                point_t p = { .input = idx, .size = r->size, .range = rg, .log_meas = log(t), .log_pred = NAN };
                sw.point[sw.n] = (int)s->points->len;
                g_array_append_val(s->points, p);
                in->npoints++;
            }
            sw.n++;
        }
        g_array_append_val(in->sweeps, sw);
    }
    if (in->npoints == 0) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: no size <= 64 KiB or >= 1 MiB with a measured out-of-place "
                    "time; expected a sweep such as -b 8 -e 1G -f 2", label);
        goto fail;
    }
    return TRUE;

fail:
    g_array_set_size(s->points, first_point);
    g_ptr_array_remove_index(s->inputs, (guint)idx);
    return FALSE;
}

/* ---- the objective ---------------------------------------------------------- */

/* Cauchy (Lorentzian) loss of a log error r with scale c: about r^2 / 2
 * for |r| << c, growing only logarithmically beyond, so that sizes the
 * model misses by a wide margin (a structure it lacks, a broken run) do
 * not drag the parameters the other sizes agree on. */
static double robust_loss(double r, double c)
{
    return 0.5 * c * c * log1p((r / c) * (r / c));
}

/* The error validate prints, from a log ratio: busbw error at large sizes
 * (t_meas / t_pred - 1), time error at small ones. */
static double shown_error(const point_t *p, double log_pred)
{
    double r = log_pred - p->log_meas;
    return p->range == CS_CALIB_LARGE ? exp(-r) - 1 : exp(r) - 1;
}

typedef struct {
    cs_calib_set_t *s;
    cs_params_t work;
    cs_param_id_t id;
    cs_calib_range_t range;
    gboolean *affected;     /* per input */
    double *pred;           /* per point, scratch */
    double scale;
    GError **err;
    gboolean failed;
} objective_t;

/* Loss over the points of o->range, predicting only the inputs the
 * parameter affects (the others keep their stored predictions). */
static double objective(objective_t *o, double v)
{
    if (o->failed)
        return INFINITY;
    o->work.v[o->id] = v;
    cs_calib_set_t *s = o->s;
    for (guint i = 0; i < s->inputs->len; i++)
        if (o->affected[i] && !predict_input(s, (int)i, &o->work, o->pred, o->err)) {
            o->failed = TRUE;
            return INFINITY;
        }
    double sum = 0;
    for (guint k = 0; k < s->points->len; k++) {
        const point_t *p = &g_array_index(s->points, point_t, k);
        if (p->range != o->range)
            continue;
        double lp = o->affected[p->input] ? o->pred[k] : p->log_pred;
        if (isnan(lp))
            return INFINITY;   /* the engine cannot price it with this value */
        sum += robust_loss(lp - p->log_meas, o->scale);
    }
    return sum;
}

/* The values a parameter may take (cs_params_load's validity rules), and
 * a search interval inside them around v. */
static void search_bounds(cs_param_id_t id, double v, double *lo_p, double *hi_p, gboolean *log_p)
{
    const char *unit = cs_param_unit(id);
    if (strcmp(unit, "fraction") == 0) {
        *lo_p = 0.02;
        *hi_p = 1.0;
        *log_p = FALSE;
    } else if (strcmp(unit, "GB/s") == 0) {
        *lo_p = v / 8;
        *hi_p = v * 8;
        *log_p = TRUE;
    } else {
        *lo_p = 0;
        *hi_p = MAX(8 * v, strcmp(unit, "us") == 0 ? 2.0 : 8.0);
        *log_p = FALSE;
    }
}

#define GRID 24
#define GOLDEN_ITERS 40

/* Minimises the objective over one parameter: grid scan, then golden
 * section between the best grid point's neighbours. Returns the best
 * value found (the current one unless something is strictly better). */
static double minimise(objective_t *o, double cur)
{
    double lo, hi;
    gboolean lg;
    search_bounds(o->id, cur, &lo, &hi, &lg);
    double xs[GRID + 1];
    double best_x = cur, best_f = objective(o, cur);
    int best_k = -1;
    for (int k = 0; k <= GRID; k++) {
        double t = (double)k / GRID;
        xs[k] = lg ? lo * pow(hi / lo, t) : lo + (hi - lo) * t;
        if (xs[k] <= 0 && strcmp(cs_param_unit(o->id), "us") != 0 && strcmp(cs_param_unit(o->id), "stages") != 0)
            continue;
        double f = objective(o, xs[k]);
        if (f < best_f) {
            best_f = f;
            best_x = xs[k];
            best_k = k;
        }
    }
    /* bracket: the neighbours of the best grid point (or of cur) */
    double a, b;
    if (best_k >= 0) {
        a = xs[MAX(best_k - 1, 0)];
        b = xs[MIN(best_k + 1, GRID)];
    } else {
        a = MAX(lo, cur - (hi - lo) / GRID);
        b = MIN(hi, cur + (hi - lo) / GRID);
    }
    const double gr = (sqrt(5.0) - 1) / 2;
    double c = b - gr * (b - a), d = a + gr * (b - a);
    double fc = objective(o, c), fd = objective(o, d);
    for (int it = 0; it < GOLDEN_ITERS && !o->failed; it++) {
        if (fc < fd) {
            b = d;
            d = c;
            fd = fc;
            c = b - gr * (b - a);
            fc = objective(o, c);
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + gr * (b - a);
            fd = objective(o, d);
        }
    }
    double x = fc < fd ? c : d, fx = MIN(fc, fd);
    if (fx < best_f) {
        best_f = fx;
        best_x = x;
    }
    return best_x;
}

static gboolean predict_all(cs_calib_set_t *s, const cs_params_t *p, double *out, GError **err);

/* Loss of range rg with every parameter of that range at prev + t (work -
 * prev), clamped to its bounds. */
static double pattern_loss(cs_calib_set_t *s, const cs_params_t *work, const cs_params_t *prev,
                           const cs_calib_range_t *range, cs_calib_range_t rg, double t, double *pred, double scale,
                           GError **err, gboolean *failed)
{
    cs_params_t p = *work;
    for (int id = 0; id < CS_P_COUNT; id++) {
        if (range[id] != rg)
            continue;
        double lo, hi;
        gboolean lg;
        search_bounds((cs_param_id_t)id, prev->v[id], &lo, &hi, &lg);
        double v = prev->v[id] + t * (work->v[id] - prev->v[id]);
        if (strcmp(cs_param_unit((cs_param_id_t)id), "fraction") == 0 || strcmp(cs_param_unit((cs_param_id_t)id), "GB/s") == 0)
            lo = MAX(lo, 1e-6);
        p.v[id] = CLAMP(v, MAX(lo, 0), strcmp(cs_param_unit((cs_param_id_t)id), "fraction") == 0 ? 1.0 : G_MAXDOUBLE);
    }
    if (!predict_all(s, &p, pred, err)) {
        *failed = TRUE;
        return INFINITY;
    }
    double sum = 0;
    for (guint k = 0; k < s->points->len; k++) {
        const point_t *pt = &g_array_index(s->points, point_t, k);
        if (pt->range != rg)
            continue;
        if (isnan(pred[k]))
            return INFINITY;
        sum += robust_loss(pred[k] - pt->log_meas, scale);
    }
    return sum;
}

static gboolean pattern_move(cs_calib_set_t *s, cs_params_t *work, const cs_params_t *prev,
                             const cs_calib_range_t *range, cs_calib_range_t rg, const gboolean *affected,
                             double *pred, double scale, GError **err)
{
    (void)affected;
    gboolean failed = FALSE, any = FALSE;
    for (int id = 0; id < CS_P_COUNT; id++)
        any |= range[id] == rg && work->v[id] != prev->v[id];
    if (!any)
        return TRUE;
    double best_t = 1, best_f = pattern_loss(s, work, prev, range, rg, 1, pred, scale, err, &failed);
    /* t in [1, 64], geometric steps: the valley is long */
    for (double t = 1.5; t <= 64 && !failed; t *= 1.5) {
        double f = pattern_loss(s, work, prev, range, rg, t, pred, scale, err, &failed);
        if (f < best_f) {
            best_f = f;
            best_t = t;
        }
    }
    if (failed)
        return FALSE;
    if (best_t > 1) {
        /* refine between the neighbours */
        double a = best_t / 1.5, b = best_t * 1.5;
        const double gr = (sqrt(5.0) - 1) / 2;
        for (int it = 0; it < 30 && !failed; it++) {
            double c = b - gr * (b - a), d = a + gr * (b - a);
            if (pattern_loss(s, work, prev, range, rg, c, pred, scale, err, &failed) <
                pattern_loss(s, work, prev, range, rg, d, pred, scale, err, &failed))
                b = d;
            else
                a = c;
        }
        double t = (a + b) / 2;
        if (!failed && pattern_loss(s, work, prev, range, rg, t, pred, scale, err, &failed) < best_f)
            best_t = t;
        if (failed)
            return FALSE;
        cs_params_t p = *work;
        for (int id = 0; id < CS_P_COUNT; id++) {
            if (range[id] != rg)
                continue;
            double v = prev->v[id] + best_t * (work->v[id] - prev->v[id]);
            if (strcmp(cs_param_unit((cs_param_id_t)id), "fraction") == 0)
                v = CLAMP(v, 1e-6, 1.0);
            else if (strcmp(cs_param_unit((cs_param_id_t)id), "GB/s") == 0)
                v = MAX(v, 1e-6);
            else
                v = MAX(v, 0);
            p.v[id] = v;
        }
        *work = p;
    }
    return TRUE;
}

gboolean cs_calib_param_fittable(cs_param_id_t id)
{
    return id != CS_P_PROTO_EFF_LL && id != CS_P_PROTO_EFF_LL128 && id != CS_P_PROTO_EFF_SIMPLE;
}

void cs_calib_opts_init(cs_calib_opts_t *o)
{
    o->threshold = 0.005;
    o->min_sizes = 2;
    o->sweeps = 40;
    o->scale = 0.1;
    o->min_move = 0.005;
    o->step = NULL;
    o->step_data = NULL;
}

static double round4(double v)
{
    char buf[64];
    g_ascii_formatd(buf, sizeof buf, "%.4g", v);
    return g_ascii_strtod(buf, NULL);
}

static gboolean predict_all(cs_calib_set_t *s, const cs_params_t *p, double *out, GError **err)
{
    for (guint i = 0; i < s->inputs->len; i++)
        if (!predict_input(s, (int)i, p, out, err))
            return FALSE;
    return TRUE;
}

/* Median |shown error| over the points with mask set (NULL: of range rg). */
static double median_error(const cs_calib_set_t *s, const double *pred, const gboolean *mask, cs_calib_range_t rg,
                           int *n_p)
{
    g_autofree double *e = g_new(double, MAX(s->points->len, 1));
    int n = 0;
    for (guint k = 0; k < s->points->len; k++) {
        const point_t *p = &g_array_index(s->points, point_t, k);
        if (mask != NULL ? !mask[k] : p->range != rg)
            continue;
        if (!isnan(pred[k]))
            e[n++] = shown_error(p, pred[k]);
    }
    if (n_p != NULL)
        *n_p = n;
    return cs_validate_median_abs(e, n);
}

gboolean cs_calibrate_fit(cs_calib_set_t *s, const cs_params_t *start, const cs_calib_opts_t *opts,
                          cs_params_t *params_p, cs_calib_fit_t *fit_p, GError **err)
{
    guint np = s->points->len, ni = s->inputs->len;
    g_autofree double *base = g_new(double, MAX(np, 1));
    g_autofree double *moved = g_new(double, MAX(np, 1));
    g_autofree double *moved2 = g_new(double, MAX(np, 1));
    g_autofree double *sens = g_new0(double, (gsize)CS_P_COUNT * MAX(np, 1));
    g_autofree double *mag = g_new0(double, (gsize)CS_P_COUNT * MAX(np, 1));
    g_autofree gboolean *affected = g_new0(gboolean, (gsize)CS_P_COUNT * MAX(ni, 1));
    g_autofree gboolean *mask = g_new0(gboolean, (gsize)CS_P_COUNT * MAX(np, 1));
    cs_calib_fit_t fit;
    memset(&fit, 0, sizeof fit);
    cs_params_t work = *start;
    work.calibration_source = NULL;

    if (ni == 0) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: calibrate: no results given; expected LOG --topo PRESET");
        return FALSE;
    }
    if (!predict_all(s, &work, base, err))
        return FALSE;
    for (guint k = 0; k < np; k++)
        g_array_index(s->points, point_t, k).log_pred = base[k];

    /* 1. sensitivities and the range each parameter is fitted on */
    for (int id = 0; id < CS_P_COUNT; id++) {
        fit.before[id] = fit.after[id] = start->v[id];
        fit.twin[id] = -1;
        if (!cs_calib_param_fittable((cs_param_id_t)id))
            continue;
        if (opts->step != NULL) {
            g_autofree char *what = g_strdup_printf("calibrate: how %s moves the predictions",
                                                    cs_param_name((cs_param_id_t)id));
            opts->step(opts->step_data, what);
        }
        double v = start->v[id];
        const char *unit = cs_param_unit((cs_param_id_t)id);
        /* both ways: the models take minima and maxima of bottlenecks, so
         * one side alone can show no effect at a kink */
        double dv = strcmp(unit, "us") == 0 ? MAX(0.1 * v, 0.1) : 0.1 * v;
        if (dv == 0)
            dv = 0.1;
        double up = strcmp(unit, "fraction") == 0 ? MIN(v + dv, 1.0) : v + dv;
        double dn = MAX(v - dv, 0.0);
        if (strcmp(unit, "us") != 0 && strcmp(unit, "stages") != 0 && dn <= 0)
            dn = v / 2;
        cs_params_t p = work;
        p.v[id] = up;
        if (up != v && !predict_all(s, &p, moved, err))
            return FALSE;
        p.v[id] = dn;
        if (dn != v && !predict_all(s, &p, moved2, err))
            return FALSE;
        int cnt[3] = { 0, 0, 0 };
        for (guint k = 0; k < np; k++) {
            const point_t *pt = &g_array_index(s->points, point_t, k);
            double du = up != v ? moved[k] - base[k] : 0, dd = dn != v ? base[k] - moved2[k] : 0;
            if (isnan(du))
                du = 0;
            if (isnan(dd))
                dd = 0;
            double d = MAX(fabs(du), fabs(dd));
            sens[(gsize)id * np + k] = du + dd;     /* the direction, for separability */
            mag[(gsize)id * np + k] = d;
            if (d > 0)
                affected[(gsize)id * ni + pt->input] = TRUE;
            if (d > opts->threshold)
                cnt[pt->range]++;
        }
        cs_calib_range_t pref = strcmp(unit, "us") == 0 ? CS_CALIB_SMALL : CS_CALIB_LARGE;
        cs_calib_range_t other = pref == CS_CALIB_SMALL ? CS_CALIB_LARGE : CS_CALIB_SMALL;
        cs_calib_range_t rg = cnt[pref] >= opts->min_sizes ? pref
                            : cnt[other] >= opts->min_sizes ? other : CS_CALIB_NONE;
        fit.range[id] = rg;
        if (rg == CS_CALIB_NONE)
            continue;
        g_autofree gboolean *seen = g_new0(gboolean, ni);
        for (guint k = 0; k < np; k++) {
            const point_t *pt = &g_array_index(s->points, point_t, k);
            if (pt->range == rg && mag[(gsize)id * np + k] > opts->threshold) {
                mask[(gsize)id * np + k] = TRUE;
                fit.nsizes[id]++;
                if (!seen[pt->input]) {
                    seen[pt->input] = TRUE;
                    fit.nresults[id]++;
                }
            }
        }
    }

    /* 1b. parameters the results cannot tell apart: where two parameters
     * move the predictions of a range in the same proportions (|cosine|
     * of their sensitivity vectors above 0.995, e.g. lat.launch and
     * lat.launch.per_gpu with one process per node), only the first in
     * the parameter list (the more general one) is fitted. */
    {
        double norm[CS_P_COUNT];
        int order[CS_P_COUNT], no = 0;
        for (int id = 0; id < CS_P_COUNT; id++) {
            fit.twin[id] = -1;
            norm[id] = 0;
            if (fit.range[id] == CS_CALIB_NONE)
                continue;
            for (guint k = 0; k < np; k++)
                if (g_array_index(s->points, point_t, k).range == fit.range[id])
                    norm[id] += sens[(gsize)id * np + k] * sens[(gsize)id * np + k];
            norm[id] = sqrt(norm[id]);
            order[no++] = id;
        }
        for (int i = 0; i < no; i++) {
            int a = order[i];
            for (int j = 0; j < i; j++) {
                int b = order[j];
                if (fit.range[b] != fit.range[a] || fit.twin[b] >= 0)
                    continue;
                double dot = 0;
                for (guint k = 0; k < np; k++)
                    if (g_array_index(s->points, point_t, k).range == fit.range[a])
                        dot += sens[(gsize)a * np + k] * sens[(gsize)b * np + k];
                if (norm[a] > 0 && norm[b] > 0 && fabs(dot) / (norm[a] * norm[b]) > 0.995) {
                    fit.twin[a] = b;
                    break;
                }
            }
        }
        for (int id = 0; id < CS_P_COUNT; id++)
            if (fit.twin[id] >= 0)
                fit.range[id] = CS_CALIB_NONE;
    }

    /* 2. coordinate descent, each sweep followed by a pattern move (a line
     * search along the sweep's total step, per range), which crosses the
     * narrow valleys of correlated parameters (lat.launch, lat.hop.*) that
     * plain coordinate steps zigzag down */
    g_autofree double *scratch = g_new(double, MAX(np, 1));
    for (int sweep = 0; sweep < opts->sweeps; sweep++) {
        if (opts->step != NULL) {
            g_autofree char *what = g_strdup_printf("calibrate: fitting, sweep %d (at most %d)", sweep + 1,
                                                    opts->sweeps);
            opts->step(opts->step_data, what);
        }
        gboolean any = FALSE;
        cs_params_t prev = work;
        for (int id = 0; id < CS_P_COUNT; id++) {
            if (fit.range[id] == CS_CALIB_NONE)
                continue;
            objective_t o = { .s = s, .work = work, .id = (cs_param_id_t)id, .range = fit.range[id],
                              .affected = &affected[(gsize)id * ni], .pred = scratch, .scale = opts->scale,
                              .err = err };
            double cur = work.v[id];
            double f0 = objective(&o, cur);
            double x = minimise(&o, cur);
            double f1 = objective(&o, x);
            if (o.failed)
                return FALSE;
            if (f1 < f0 - 1e-12 * (1 + f0) && x != cur) {
                work.v[id] = x;
                if (fabs(x - cur) > 1e-4 * MAX(fabs(cur), 1e-3))
                    any = TRUE;
            }
            /* keep the stored predictions in step with work */
            if (!predict_all(s, &work, base, err))
                return FALSE;
            for (guint k = 0; k < np; k++)
                g_array_index(s->points, point_t, k).log_pred = base[k];
        }
        for (int rg = CS_CALIB_SMALL; rg <= CS_CALIB_LARGE && any; rg++)
            if (!pattern_move(s, &work, &prev, fit.range, (cs_calib_range_t)rg, affected, scratch, opts->scale, err))
                return FALSE;
        fit.sweeps_done = sweep + 1;
        if (!any)
            break;
    }

    /* 3. keep what barely moved; round what is written */
    cs_params_t out = *start;
    for (int id = 0; id < CS_P_COUNT; id++) {
        if (fit.range[id] == CS_CALIB_NONE)
            continue;
        double a = start->v[id], b = round4(work.v[id]);
        if (fabs(b - a) > opts->min_move * MAX(fabs(a), 0.01)) {
            fit.moved[id] = TRUE;
            out.v[id] = b;
            out.calibrated[id] = TRUE;
        }
        fit.after[id] = out.v[id];
    }
    cs_params_t st = *start;
    g_autofree double *before = g_new(double, MAX(np, 1));
    if (!predict_all(s, &st, before, err) || !predict_all(s, &out, base, err))
        return FALSE;
    for (guint k = 0; k < np; k++)
        g_array_index(s->points, point_t, k).log_pred = base[k];
    for (int id = 0; id < CS_P_COUNT; id++) {
        if (fit.range[id] == CS_CALIB_NONE)
            continue;
        fit.med_before[id] = median_error(s, before, &mask[(gsize)id * np], CS_CALIB_NONE, NULL);
        fit.med_after[id] = median_error(s, base, &mask[(gsize)id * np], CS_CALIB_NONE, NULL);
    }
    for (int rg = CS_CALIB_SMALL; rg <= CS_CALIB_LARGE; rg++) {
        fit.med_range_before[rg] = median_error(s, before, NULL, (cs_calib_range_t)rg, &fit.n_range[rg]);
        fit.med_range_after[rg] = median_error(s, base, NULL, (cs_calib_range_t)rg, NULL);
    }
    out.calibration_source = NULL;
    *params_p = out;
    *fit_p = fit;
    return TRUE;
}

/* ---- the file ----------------------------------------------------------------- */

static void append_pct(GString *g, double v)
{
    if (isnan(v))
        g_string_append(g, "-");
    else
        g_string_append_printf(g, "%.1f%%", v * 100);
}

static void append_value(GString *g, double v)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_string_append(g, g_ascii_formatd(buf, sizeof buf, "%.4g", v));
}

/* ---- physical ranges ------------------------------------------------------- */

typedef struct {
    cs_param_id_t id;
    double lo, hi;
    const char *source;
} physical_t;

static const physical_t physical[] = {
    /* Upper: the payload share of a 4096-byte RDMA packet. InfiniBand adds
     * LRH 8 + BTH 12 + RETH 16 + ICRC 4 + VCRC 2 = 42 bytes (IBTA spec vol.
     * 1, ch. 5 and 9): 0.99; RoCE v2 adds Ethernet 14 + FCS 4 + preamble
     * and gap 20, IPv4 20, UDP 8, BTH 12, ICRC 4 = 82 bytes: 0.98. Lower: a
     * healthy ConnectX-7 NDR link moves 98 % of 400 Gb/s in ib_write_bw
     * (shared data perftest-ib-ndr400-cx7-b2b-*: 392.3 Gb/s); NCCL's proxy
     * costs a few percent more (the built-in 0.97 was fitted on healthy
     * 8x NDR runs); below 0.8 the system loses a fifth of the line rate. */
    { CS_P_EFF_NET, 0.80, 0.99,
      "4 KiB RDMA packet headers (IB 42 B, RoCE v2 82 B) and perftest's 98% of 400G on healthy NDR" },
};

void cs_calib_physical_bounds(cs_param_id_t id, double *lo_p, double *hi_p)
{
    for (gsize i = 0; i < G_N_ELEMENTS(physical); i++)
        if (physical[i].id == id) {
            *lo_p = physical[i].lo;
            *hi_p = physical[i].hi;
            return;
        }
    double d = cs_param_default(id);
    *lo_p = d / 2;
    *hi_p = strcmp(cs_param_unit(id), "fraction") == 0 ? MIN(d * 2, 1.0) : d * 2;
}

const char *cs_calib_outside_reading(cs_param_id_t id, double v)
{
    double lo, hi;
    gboolean inside;
    g_free(cs_calib_physical_range(id, v, &inside));
    if (inside)
        return NULL;
    cs_calib_physical_bounds(id, &lo, &hi);
    /* a time or a count of stages costs more the larger it is; a rate or
     * a share of one the smaller */
    const char *u = cs_param_unit(id);
    gboolean cost = strcmp(u, "us") == 0 || strcmp(u, "ns") == 0 || strcmp(u, "s") == 0 ||
                    strcmp(u, "stages") == 0 || strcmp(u, "ms") == 0;
    gboolean worse = cost ? v > hi : v < lo;
    return worse ? "the measured system loses what healthy hardware does not (check it: collsim doctor, "
                   "perftest); this value describes that system, not the parts"
                 : "better than healthy hardware measures: the fit takes up another part of the model's error "
                   "(or the data's), not a property of the parts";
}

char *cs_calib_physical_range(cs_param_id_t id, double v, gboolean *inside_p)
{
    for (gsize i = 0; i < G_N_ELEMENTS(physical); i++)
        if (physical[i].id == id) {
            *inside_p = v >= physical[i].lo && v <= physical[i].hi;
            return g_strdup_printf("%g to %g (%s)", physical[i].lo, physical[i].hi, physical[i].source);
        }
    double d = cs_param_default(id), lo = d / 2, hi = d * 2;
    if (strcmp(cs_param_unit(id), "fraction") == 0)
        hi = MIN(hi, 1.0);   /* a share of a link cannot exceed the link */
    *inside_p = v >= lo && v <= hi;
    return g_strdup_printf("%.4g to %.4g (half to twice the built-in %.4g, fitted on healthy systems: "
                           "cs_params_list.h)", lo, hi, d);
}

const char *cs_calib_in_sample_note(void)
{
    return "the errors after the fit are in-sample: judged on the same sizes it was fitted to, they show "
           "how well it fits, not how well it predicts; validate it on other runs (collsim validate "
           "--calibration FILE LOG)";
}

char *cs_calibrate_ini(const cs_calib_set_t *s, const cs_params_t *start, const cs_params_t *fitted,
                       const cs_calib_fit_t *fit, const char *header)
{
    GString *g = g_string_new(NULL);
    if (header != NULL) {
        g_auto(GStrv) lines = g_strsplit(header, "\n", -1);
        for (int i = 0; lines[i] != NULL; i++)
            if (lines[i][0] != '\0' || lines[i + 1] != NULL)
                g_string_append_printf(g, "#%s%s\n", lines[i][0] ? " " : "", lines[i]);
    }
    g_string_append_printf(g, "# inputs (%u):\n", s->inputs->len);
    for (guint i = 0; i < s->inputs->len; i++) {
        const input_t *in = g_ptr_array_index(s->inputs, i);
        g_string_append_printf(g, "#   %s: %s, %s, %d ranks, %d sizes used\n", in->label, in->measured->producer,
                               cs_coll_name(in->measured->coll), in->measured->nranks, in->npoints);
    }
    static const char *const rname[] = { "", "time <=64KiB", "busbw >=1MiB" };
    for (int rg = CS_CALIB_LARGE; rg >= CS_CALIB_SMALL; rg--) {
        g_string_append_printf(g, "# all sizes, %s: n=%d median |error| before ", rname[rg], fit->n_range[rg]);
        append_pct(g, fit->med_range_before[rg]);
        g_string_append(g, ", after ");
        append_pct(g, fit->med_range_after[rg]);
        g_string_append(g, "\n");
    }
    int kept = 0, unconstrained = 0;
    GString *kl = g_string_new(NULL);
    for (int id = 0; id < CS_P_COUNT; id++) {
        if (fit->range[id] == CS_CALIB_NONE) {
            unconstrained++;
        } else if (!fit->moved[id]) {
            kept++;
            g_string_append_printf(kl, "%s%s", kl->len ? ", " : "", cs_param_name((cs_param_id_t)id));
        }
    }
    if (kept > 0)
        g_string_append_printf(g, "# constrained but kept (the fit moved them by less than 0.5%%): %s\n", kl->str);
    g_string_free(kl, TRUE);
    for (int id = 0; id < CS_P_COUNT; id++)
        if (fit->twin[id] >= 0) {
            g_string_append_printf(g, "# not separable from %s on these results, not fitted: %s\n",
                                   cs_param_name((cs_param_id_t)fit->twin[id]), cs_param_name((cs_param_id_t)id));
            unconstrained--;
        }
    g_string_append_printf(g, "# not constrained by these results, not written: %d parameters\n", unconstrained);
    g_string_append_printf(g, "# note: %s\n", cs_calib_in_sample_note());
    g_string_append(g, "\n[params]\n");
    for (int id = 0; id < CS_P_COUNT; id++) {
        if (!fit->moved[id] && start->calibrated[id]) {
            /* the start file's value, carried over so that nothing it set is lost */
            g_string_append_printf(g, "# from the start file, %s\n%s = ",
                                   fit->range[id] == CS_CALIB_NONE ? "not constrained by these results"
                                                                   : "confirmed (moved by less than 0.5%)",
                                   cs_param_name((cs_param_id_t)id));
            append_value(g, start->v[id]);
            g_string_append(g, "\n");
            continue;
        }
        if (!fit->moved[id])
            continue;
        g_string_append(g, "# was ");
        append_value(g, start->v[id]);
        g_string_append_printf(g, " (%s), fitted from %d sizes (%s) in %d result%s; median error before ",
                               start->calibrated[id] ? "start file" : "default", fit->nsizes[id],
                               rname[fit->range[id]], fit->nresults[id], fit->nresults[id] == 1 ? "" : "s");
        append_pct(g, fit->med_before[id]);
        g_string_append(g, ", after ");
        append_pct(g, fit->med_after[id]);
        gboolean inside;
        g_autofree char *range = cs_calib_physical_range((cs_param_id_t)id, fitted->v[id], &inside);
        if (!inside)
            g_string_append_printf(g, "\n# warning: outside its physical range, %s: %s", range,
                                   cs_calib_outside_reading((cs_param_id_t)id, fitted->v[id]));
        g_string_append_printf(g, "\n%s = ", cs_param_name((cs_param_id_t)id));
        append_value(g, fitted->v[id]);
        g_string_append_printf(g, "\n");
    }
    return g_string_free(g, FALSE);
}
