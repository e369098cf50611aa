/* Joining two results by size and summarising the errors. No model here:
 * the numbers come from the two results as given. */
#include "config.h"
#include "io/cs_validate.h"
#include "util/cs_error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    guint64 size;
    guint idx;
} size_idx_t;

static int cmp_size_idx(const void *a, const void *b)
{
    const size_idx_t *x = a, *y = b;
    if (x->size != y->size)
        return x->size < y->size ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(const double *v, int n, gboolean absolute)
{
    g_autofree double *a = g_new(double, MAX(n, 1));
    int m = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(v[i]))
            a[m++] = absolute ? fabs(v[i]) : v[i];
    if (m == 0)
        return NAN;
    qsort(a, (size_t)m, sizeof *a, cmp_double);
    return m % 2 ? a[m / 2] : (a[m / 2 - 1] + a[m / 2]) / 2;
}

double cs_validate_median_abs(const double *v, int n)
{
    return median_of(v, n, TRUE);
}

double cs_validate_median(const double *v, int n)
{
    return median_of(v, n, FALSE);
}

static double rel_err(double pred, double meas)
{
    if (!(meas > 0) || !(pred >= 0))
        return NAN;
    return (pred - meas) / meas;
}

/* Summary of the errors of the rows whose size is in [lo, hi]. */
static void summarise(const GArray *rows, guint64 lo, guint64 hi, gboolean busbw, cs_validate_stat_t *s)
{
    g_autofree double *e = g_new(double, MAX(rows->len, 1));
    memset(s, 0, sizeof *s);
    s->median = s->worst = NAN;
    for (guint i = 0; i < rows->len; i++) {
        const cs_validate_row_t *r = &g_array_index(rows, cs_validate_row_t, i);
        double err = busbw ? r->busbw_err : r->time_err;
        if (r->size < lo || r->size > hi || isnan(err))
            continue;
        e[s->n++] = err;
        if (isnan(s->worst) || fabs(err) > fabs(s->worst)) {
            s->worst = err;
            s->worst_size = r->size;
        }
    }
    s->median = cs_validate_median_abs(e, s->n);
}

cs_validation_t *cs_validate_compare(const cs_result_t *measured, const cs_result_t *predicted,
                                     int placement, GError **err)
{
    g_return_val_if_fail(measured != NULL && predicted != NULL, NULL);
    g_return_val_if_fail(placement == CS_OOP || placement == CS_INP, NULL);
    if (measured->coll != predicted->coll) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                    "%s: measured %s but predicted %s; expected the same collective",
                    measured->source, cs_coll_name(measured->coll), cs_coll_name(predicted->coll));
        return NULL;
    }
    if (measured->nranks > 0 && predicted->nranks > 0 && measured->nranks != predicted->nranks) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                    "%s: measured over %d ranks but predicted over %d; expected the same rank count",
                    measured->source, measured->nranks, predicted->nranks);
        return NULL;
    }

    guint np = predicted->rows->len;
    g_autofree size_idx_t *idx = g_new(size_idx_t, MAX(np, 1));
    for (guint i = 0; i < np; i++) {
        idx[i].size = g_array_index(predicted->rows, cs_result_row_t, i).size;
        idx[i].idx = i;
    }
    qsort(idx, np, sizeof *idx, cmp_size_idx);

    g_autoptr(cs_validation_t) v = g_new0(cs_validation_t, 1);
    v->placement = placement;
    v->rows = g_array_new(FALSE, TRUE, sizeof(cs_validate_row_t));
    int matched = 0;
    /* size -> measured rows of that size so far (lookups only) */
    g_autoptr(GHashTable) seen = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    for (guint i = 0; i < measured->rows->len; i++) {
        const cs_result_row_t *m = &g_array_index(measured->rows, cs_result_row_t, i);
        /* the k-th measured row of this size pairs with the k-th predicted one */
        gint64 key = (gint64)m->size;
        /* A per-rank split collective (alltoall, allgather, ...) runs
         * count = size / (type x ranks), rounded down to 16 bytes a rank
         * (cs_coll_count, as nccl-tests' getCollByteCount), and the engine
         * prices and prints that size. A log row whose size is not what
         * nccl-tests prints for that request (a pasted table) pairs with
         * the prediction for the size the run actually had. */
        guint64 runs = m->size;
        if (measured->nranks > 0) {
            guint64 c = cs_coll_count(measured->coll, m->size, m->dtype, measured->nranks);
            runs = cs_coll_print_size(measured->coll, c, m->dtype, measured->nranks);
        }
        if (runs != m->size && runs > 0) {
            key = (gint64)runs;
            v->resized++;
        }
        guint k = GPOINTER_TO_UINT(g_hash_table_lookup(seen, &key));
        gint64 *kp = g_new(gint64, 1);
        *kp = key;
        g_hash_table_replace(seen, kp, GUINT_TO_POINTER(k + 1));
        size_t lo = 0, hi = np;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (idx[mid].size < (guint64)key)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo + k >= np || idx[lo + k].size != (guint64)key) {
            v->unmatched++;
            continue;
        }
        const cs_result_row_t *p = &g_array_index(predicted->rows, cs_result_row_t, idx[lo + k].idx);
        cs_validate_row_t r = { .size = m->size };
        r.meas_us = m->time_us[placement];
        r.pred_us = p->time_us[placement];
        r.meas_busbw = m->busbw[placement];
        r.pred_busbw = p->busbw[placement];
        {
            cs_result_row_t mc = *m;
            cs_result_row_fill_bw(measured, &mc);
            r.meas_busbw_t = mc.busbw[placement] > 0 ? mc.busbw[placement] : -1;
        }
        /* a zero-byte call has no meaningful time or bandwidth ratio */
        r.time_err = m->size > 0 && r.meas_us > 0 ? rel_err(r.pred_us, r.meas_us) : NAN;
        /* busbw = bytes x factor / time for both (same collective, ranks
         * and size), so its error is t_meas / t_pred - 1; from the times,
         * which logs print with more digits than busbw (0.08 GB/s). */
        if (m->size == 0)
            r.busbw_err = NAN;
        else if (r.meas_us > 0 && r.pred_us > 0)
            r.busbw_err = r.meas_us / r.pred_us - 1;
        else
            r.busbw_err = rel_err(r.pred_busbw, r.meas_busbw);
        g_strlcpy(r.algo, p->algo, sizeof r.algo);
        g_strlcpy(r.proto, p->proto, sizeof r.proto);
        g_strlcpy(r.transport, p->transport, sizeof r.transport);
        r.nchannels = p->nchannels;
        g_array_append_val(v->rows, r);
        matched++;
    }
    if (matched == 0) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                    "%s: no measured size has a prediction; expected predictions for the sizes of the log",
                    measured->source);
        return NULL;
    }
    summarise(v->rows, CS_VALIDATE_LARGE_MIN, G_MAXUINT64, TRUE, &v->busbw_large);
    summarise(v->rows, 1, CS_VALIDATE_SMALL_MAX, FALSE, &v->time_small);
    return g_steal_pointer(&v);
}

void cs_validation_free(cs_validation_t *v)
{
    if (v == NULL)
        return;
    if (v->rows != NULL)
        g_array_unref(v->rows);
    g_free(v);
}

gboolean cs_validate_stat_pass(const cs_validate_stat_t *s, double target)
{
    return s->n > 0 && !isnan(s->median) && s->median <= target;
}
