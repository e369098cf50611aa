/* collsim real --verbs: the sizes swept, the statistics of a run, and the
 * lines of perftest's result tables (ib_write_bw / ib_write_lat). */
#include "config.h"

#include <math.h>
#include <stdlib.h>

#include "real/verbs_int.h"

guint64 *vb_sweep_sizes(const vb_opts_t *o, int *n_p)
{
    if (!o->all) {
        guint64 *v = g_new(guint64, 1);
        v[0] = o->size;
        *n_p = 1;
        return v;
    }
    guint64 *v = g_new(guint64, VB_MAX_SIZE_LOG2);
    for (int i = 1; i <= VB_MAX_SIZE_LOG2; i++)
        v[i - 1] = G_GUINT64_CONSTANT(1) << i;
    *n_p = VB_MAX_SIZE_LOG2;
    return v;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double nearest_rank(const double *sorted, int n, double p)
{
    long k = (long)ceil(p * n - 1e-9);   /* guard 0.99*100 = 98.99999... */
    if (k < 1)
        k = 1;
    if (k > n)
        k = n;
    return sorted[k - 1];
}

void vb_lat_stats(double *samples, int n, vb_lat_stats_t *st_p)
{
    g_return_if_fail(n > 0);
    qsort(samples, (size_t)n, sizeof *samples, cmp_double);
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += samples[i];
    double avg = sum / n, var = 0;
    for (int i = 0; i < n; i++)
        var += (samples[i] - avg) * (samples[i] - avg);
    vb_lat_stats_t st = {
        .min = samples[0], .max = samples[n - 1], .median = samples[n / 2], .avg = avg,
        .stdev = sqrt(var / n), .p99 = nearest_rank(samples, n, 0.99), .p999 = nearest_rank(samples, n, 0.999),
    };
    *st_p = st;
}

void vb_bw_stats(const double *t_post, const double *t_done, int iters, guint64 size, int window,
                 double *peak_p, double *avg_p)
{
    g_return_if_fail(iters > 0);
    double total = t_done[iters - 1] - t_post[0];
    double avg = total > 0 ? (double)size * iters / total : 0;
    /* The peak: 'window' messages completed between completion i-window
     * and completion i (or from the first post for the first window). */
    if (window < 1)
        window = 1;
    double peak = avg;
    for (int i = 0; i < iters; i++) {
        int j = i - window;
        double t0 = j >= 0 ? t_done[j] : t_post[0];
        int nmsg = j >= 0 ? window : i + 1;
        double dt = t_done[i] - t0;
        if (dt > 0 && (double)size * nmsg / dt > peak)
            peak = (double)size * nmsg / dt;
    }
    *peak_p = peak;
    *avg_p = avg;
}

/* perftest's units: MiB/s by default, Gb/s (10^9 bit/s) with
 * --report_gbits (perftest_parameters.c, MEGAV = 2^20, 10^9 for Gb). */
static double bw_unit(double bytes_per_s, gboolean gbits)
{
    return gbits ? bytes_per_s * 8 / 1e9 : bytes_per_s / 1048576.0;
}

char *vb_bw_header(gboolean gbits)
{
    return g_strdup_printf(" #bytes     #iterations    BW peak[%s]    BW average[%s]   MsgRate[Mpps]",
                           gbits ? "Gb/sec" : "MiB/sec", gbits ? "Gb/sec" : "MiB/sec");
}

char *vb_bw_line(guint64 size, int iters, double peak, double avg, gboolean gbits)
{
    double mpps = size > 0 ? avg / (double)size / 1e6 : 0;
    return g_strdup_printf(" %-10" G_GUINT64_FORMAT " %-10d       %-10.2f         %-10.2f         %-7.6f",
                           size, iters, bw_unit(peak, gbits), bw_unit(avg, gbits), mpps);
}

char *vb_lat_header(void)
{
    return g_strdup(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]"
                    "    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec]");
}

char *vb_lat_line(guint64 size, int iters, const vb_lat_stats_t *st)
{
    return g_strdup_printf(" %-7" G_GUINT64_FORMAT " %-10d   %-7.2f        %-7.2f      %-7.2f          %-7.2f"
                           "        %-7.2f         %-7.2f                %-7.2f",
                           size, iters, st->min, st->max, st->median, st->avg, st->stdev, st->p99, st->p999);
}
