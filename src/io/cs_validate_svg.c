/* collsim validate --svg: a measurement and its prediction on one plot (see
 * cs_validate.h). It draws the comparison's rows and computes nothing but
 * the band's ends, which are the targets applied to the measured values. */
#include "config.h"
#include "io/cs_validate.h"
#include "io/cs_svg.h"
#include "models/cs_coll.h"

#include <math.h>

/* "busbw >=1MiB median 4.2% (pass)" */
static void stat_text(GString *g, const char *what, const cs_validate_stat_t *s, double target)
{
    if (s->n == 0)
        g_string_append_printf(g, "%s: no sizes", what);
    else
        g_string_append_printf(g, "%s median %.1f%% (%s)", what, s->median * 100,
                               cs_validate_stat_pass(s, target) ? "pass" : "miss");
}

char *cs_validate_svg(const cs_validate_plot_t *p, const cs_validate_plot_table_t *t, int n)
{
    g_autoptr(GPtrArray) keep = g_ptr_array_new_with_free_func(g_free);
    g_autofree cs_svg_series_t *series = g_new0(cs_svg_series_t, MAX(1, 2 * n));
    GString *title = g_string_new(NULL);
    GString *sub = g_string_new(p->log);
    for (int i = 0; i < n; i++) {
        const cs_validation_t *v = t[i].v;
        const cs_result_t *m = t[i].measured;
        const cs_result_row_t *r0 = m->rows->len > 0 ? &g_array_index(m->rows, cs_result_row_t, 0) : NULL;
        int k = (int)v->rows->len;
        double *size = g_new0(double, MAX(1, k));
        double *mbw = g_new0(double, MAX(1, k)), *pbw = g_new0(double, MAX(1, k));
        double *mt = g_new0(double, MAX(1, k)), *pt = g_new0(double, MAX(1, k));
        double *bwlo = g_new0(double, MAX(1, k)), *bwhi = g_new0(double, MAX(1, k));
        double *tlo = g_new0(double, MAX(1, k)), *thi = g_new0(double, MAX(1, k));
        char **algo = g_new0(char *, k + 1);
        for (int j = 0; j < k; j++) {
            const cs_validate_row_t *r = &g_array_index(v->rows, cs_validate_row_t, j);
            size[j] = (double)r->size;
            /* unrounded where the log's time allows, as the busbw error is */
            mbw[j] = r->meas_busbw_t > 0 ? r->meas_busbw_t : r->meas_busbw;
            pbw[j] = r->pred_us > 0 ? r->pred_busbw : -1;
            mt[j] = r->meas_us;
            pt[j] = r->pred_us;
            /* the targets as validate judges them: busbw at >= 1 MiB, time at <= 64 KiB */
            bwlo[j] = bwhi[j] = tlo[j] = thi[j] = -1;
            if (r->size >= CS_VALIDATE_LARGE_MIN && mbw[j] > 0) {
                bwlo[j] = mbw[j] * (1 - CS_VALIDATE_BUSBW_TARGET);
                bwhi[j] = mbw[j] * (1 + CS_VALIDATE_BUSBW_TARGET);
            }
            if (r->size > 0 && r->size <= CS_VALIDATE_SMALL_MAX && r->meas_us > 0) {
                tlo[j] = r->meas_us * (1 - CS_VALIDATE_TIME_TARGET);
                thi[j] = r->meas_us * (1 + CS_VALIDATE_TIME_TARGET);
            }
            if (r->pred_us > 0 && r->algo[0] != '\0') {
                algo[j] = g_strdup_printf("%s/%s", r->algo, r->proto);
                g_ptr_array_add(keep, algo[j]);
            }
        }
        double *arrays[] = { size, mbw, pbw, mt, pt, bwlo, bwhi, tlo, thi };
        for (guint a = 0; a < G_N_ELEMENTS(arrays); a++)
            g_ptr_array_add(keep, arrays[a]);
        g_ptr_array_add(keep, algo);

        GString *what = g_string_new(cs_coll_name(m->coll));
        if (r0 != NULL) {
            g_string_append_printf(what, ", %s", cs_dtype_name(r0->dtype));
            if (cs_coll_has_redop(m->coll))
                g_string_append_printf(what, " %s", cs_redop_name(r0->redop));
        }
        g_string_append_printf(what, ", %d ranks", m->nranks);
        if (m->nnodes > 0)
            g_string_append_printf(what, " on %d node%s", m->nnodes, m->nnodes == 1 ? "" : "s");
        char *ml = g_strdup_printf("measured: table %d (%s)", t[i].number, what->str);
        GString *pl = g_string_new(NULL);
        g_string_append_printf(pl, "%s: table %d; ", p->model, t[i].number);
        stat_text(pl, "busbw >=1MiB", &v->busbw_large, CS_VALIDATE_BUSBW_TARGET);
        g_string_append(pl, ", ");
        stat_text(pl, "time <=64KiB", &v->time_small, CS_VALIDATE_TIME_TARGET);
        char *plabel = g_string_free(pl, FALSE);
        g_ptr_array_add(keep, ml);
        g_ptr_array_add(keep, plabel);
        series[2 * i] = (cs_svg_series_t){ .label = ml, .n = k, .size = size, .busbw = mbw, .time_us = mt,
                                           .colour = i + 1, .band_lo = { bwlo, tlo }, .band_hi = { bwhi, thi } };
        series[2 * i + 1] = (cs_svg_series_t){ .label = plabel, .n = k, .size = size, .busbw = pbw, .time_us = pt,
                                               .algo = (const char *const *)algo, .colour = i + 1, .dashed = TRUE };
        if (i == 0)
            g_string_append(title, what->str);
        g_string_append_printf(sub, "%s table %d", i == 0 ? "," : i + 1 == n ? " and" : ",", t[i].number);
        g_string_free(what, TRUE);
    }
    if (n > 1)
        g_string_printf(title, "%d tables", n);
    g_string_append_printf(title, ": measured vs %s", p->model);
    g_string_append_printf(sub, "\nmodelled topology: %s", p->topology);
    g_autofree char *caption = g_strdup_printf(
        "measured (solid): the nccl-tests log %s, out-of-place columns; its busbw from the log's time by "
        "nccl-tests's formula (the printed column is rounded). predicted (dashed): %s with %s, a model, not a "
        "measurement; a ring marks where its algorithm/protocol changes.\n"
        "shaded: the target band around the measurement, busbw within \xc2\xb1%.0f%% at sizes >= 1 MiB and time within \xc2\xb1"
        "%.0f%% at sizes <= 64 KiB (where collsim validate judges them): a predicted point inside it meets the "
        "target at that size. (collsim %s validate)",
        p->log, p->model, p->params, CS_VALIDATE_BUSBW_TARGET * 100, CS_VALIDATE_TIME_TARGET * 100, PACKAGE_VERSION);
    g_autofree char *subtitle = g_string_free(sub, FALSE);
    g_autofree char *ttl = g_string_free(title, FALSE);
    cs_svg_opts_t o = { .title = ttl, .subtitle = subtitle, .caption = caption, .time_panel = TRUE };
    return cs_svg_plot(series, 2 * n, &o);
}
