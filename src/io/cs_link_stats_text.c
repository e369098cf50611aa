/* The --link-stats block. Every number is derived from the engine's
 * cs_link_stats_t (a model's output), and the title says so. Lines start
 * with "# " so nccl-tests log parsers (ours included) skip them. The
 * program sets only LC_CTYPE, so printf's decimal point is '.'. */
#include "config.h"
#include "io/cs_link_stats_text.h"

#include <math.h>

char *cs_format_bytes_human(double bytes, char *buf, size_t n)
{
    static const char *units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
    if (!isfinite(bytes) || bytes < 0)
        bytes = 0;
    int u = 0;
    double v = bytes;
    while (u < (int)G_N_ELEMENTS(units) - 1 && v >= 1024) {
        v /= 1024;
        u++;
    }
    if (v == floor(v))
        snprintf(buf, n, "%.0f %s", v, units[u]);
    else
        snprintf(buf, n, "%.2f %s", v, units[u]);
    return buf;
}

/* Busy fraction in percent: bytes / (cap x time); 0 when undefined. */
static double util_percent(const cs_link_stat_t *l, double time_s)
{
    if (l->cap <= 0 || time_s <= 0)
        return 0;
    return 100.0 * l->bytes / (l->cap * time_s);
}

/* A bound that is no listed link (s->limit), then the busiest link the
 * call loaded, or that none carried data. */
static void write_limit(FILE *f, const cs_link_stats_t *s, const char *prefix)
{
    if (s->n == 0 && s->unrouted != NULL)
        fprintf(f, "# %sbottleneck: %s; no network link is listed: %s\n", prefix, s->limit, s->unrouted);
    else if (s->n == 0 && s->unlisted)
        fprintf(f, "# %sbottleneck: %s; the model lists no link loads of point-to-point calls\n", prefix, s->limit);
    else if (s->n == 0)
        fprintf(f, "# %sbottleneck: %s; no network link carried data\n", prefix, s->limit);
    else
        fprintf(f, "# %sbottleneck: %s; the busiest network link: %s (%.1f%% busy)\n", prefix, s->limit,
                s->links[0].name, util_percent(&s->links[0], s->time_s));
}

void cs_write_link_stats(FILE *f, const cs_link_stats_t *s, const char *what, int max)
{
    int n = s != NULL ? s->n : 0;
    double time_s = s != NULL ? s->time_s : 0;
    const char *source = s != NULL && s->source != NULL ? s->source : "model:flow";
    fprintf(f, "# Link statistics (%s%s%s, %.1f us):\n", source, what != NULL ? ", " : "", what != NULL ? what : "",
            time_s * 1e6);
    int shown = max < 0 || max > n ? n : max;
    if (shown > 0)
        fprintf(f, "# %8s %10s %10s %12s  %s\n", "util%", "avg GB/s", "cap GB/s", "carried", "link");
    for (int i = 0; i < shown; i++) {
        const cs_link_stat_t *l = &s->links[i];
        char carried[32];
        fprintf(f, "# %8.1f %10.2f %10.2f %12s  %s\n", util_percent(l, time_s),
                time_s > 0 ? l->bytes / time_s / 1e9 : 0.0, l->cap / 1e9,
                cs_format_bytes_human(l->bytes, carried, sizeof carried), l->name);
    }
    if (shown < n)
        fprintf(f, "# ... %d more links carried traffic\n", n - shown);
    if (s != NULL && s->limit != NULL)
        write_limit(f, s, "");
    else if (n == 0)
        fprintf(f, "# bottleneck: none (no link carried data)\n");
    else
        fprintf(f, "# bottleneck: %s (%.1f%% busy on average)\n", s->links[0].name,
                util_percent(&s->links[0], time_s));
}

void cs_write_bottleneck_line(FILE *f, const cs_link_stats_t *s, const char *prefix)
{
    if (prefix == NULL)
        prefix = "";
    if (s != NULL && s->limit != NULL)
        write_limit(f, s, prefix);
    else if (s == NULL || s->n == 0)
        fprintf(f, "# %sbottleneck: none (no link carried data)\n", prefix);
    else
        fprintf(f, "# %sbottleneck: %s (%.1f%% busy)\n", prefix, s->links[0].name,
                util_percent(&s->links[0], s->time_s));
}

static int port_cmp(const void *a, const void *b)
{
    const cs_net_port_counters_t *x = *(const cs_net_port_counters_t *const *)a;
    const cs_net_port_counters_t *y = *(const cs_net_port_counters_t *const *)b;
    if (x->paused_us != y->paused_us)
        return x->paused_us > y->paused_us ? -1 : 1;
    if (x->starved_us != y->starved_us)
        return x->starved_us > y->starved_us ? -1 : 1;
    if (x->queue_max_bytes != y->queue_max_bytes)
        return x->queue_max_bytes > y->queue_max_bytes ? -1 : 1;
    int c = strcmp(x->link, y->link);
    return c != 0 ? c : x->prio - y->prio;
}

void cs_write_net_counters(FILE *f, const cs_net_counters_t *c, const char *what, int max)
{
    g_autofree char *cc = c->ibcc ? g_strdup_printf(", IB congestion control: %" G_GUINT64_FORMAT " FECN marks, %"
                                                    G_GUINT64_FORMAT " BECNs, highest CCTI %u", c->ecn_marks,
                                                    c->becns, c->ccti_max)
                                  : g_strdup("");
    if (c->credit)
        fprintf(f, "#\n# Network counters (model:packet, InfiniBand)%s%s: %" G_GUINT64_FORMAT " flow-control "
                   "packets, senders credit-starved %.1f us in all, %" G_GUINT64_FORMAT " packets sent another way by "
                   "adaptive routing, %" G_GUINT64_FORMAT " drops, %" G_GUINT64_FORMAT " retransmitted, %"
                   G_GUINT64_FORMAT " NAKs, %" G_GUINT64_FORMAT " timeouts%s\n",
                what != NULL ? ", " : "", what != NULL ? what : "", c->fc_packets, c->starved_us, c->ar_moves,
                c->drops, c->retransmitted, c->naks, c->timeouts, cc);
    else
        fprintf(f, "#\n# Network counters (model:packet)%s%s: %" G_GUINT64_FORMAT " pause frames, links paused %.1f us "
                   "in all, %" G_GUINT64_FORMAT " ECN marks, %" G_GUINT64_FORMAT " CNPs, %" G_GUINT64_FORMAT
                   " drops, %" G_GUINT64_FORMAT " retransmitted, %" G_GUINT64_FORMAT " NAKs, %" G_GUINT64_FORMAT
                   " timeouts\n", what != NULL ? ", " : "", what != NULL ? what : "", c->pause_frames, c->paused_us,
                c->ecn_marks, c->cnps, c->drops, c->retransmitted, c->naks, c->timeouts);
    g_autofree const cs_net_port_counters_t **order = g_new(const cs_net_port_counters_t *, MAX(1, c->nports));
    for (int i = 0; i < c->nports; i++)
        order[i] = &c->ports[i];
    qsort(order, (size_t)c->nports, sizeof *order, port_cmp);
    int n = max < 0 ? c->nports : MIN(max, c->nports);
    if (c->ibcc)
        fprintf(f, "#    VL     packets     FCs starved(us)   queue max   queue avg    FECN   BECNs CCTI avg  max  "
                   "link\n");
    else if (c->credit)
        fprintf(f, "#    VL     packets     FCs starved(us)   queue max   queue avg  link\n");
    else
        fprintf(f, "#  prio     packets  pauses  paused(us)  ECN marks   drops   queue max   queue avg  link\n");
    for (int i = 0; i < n; i++) {
        const cs_net_port_counters_t *p = order[i];
        char qmax[32], qavg[32];
        cs_format_bytes_human(p->queue_max_bytes, qmax, sizeof qmax);
        cs_format_bytes_human(p->queue_avg_bytes, qavg, sizeof qavg);
        if (c->ibcc)
            fprintf(f, "#  %4d %11" G_GUINT64_FORMAT " %7" G_GUINT64_FORMAT " %11.1f %11s %11s %7" G_GUINT64_FORMAT
                       " %7" G_GUINT64_FORMAT " %8.1f %4u  %s\n", p->prio, p->tx_pkts, p->fc_sent, p->starved_us, qmax,
                    qavg, p->ecn_marks, p->becns, p->ccti_avg, p->ccti_max, p->link);
        else if (c->credit)
            fprintf(f, "#  %4d %11" G_GUINT64_FORMAT " %7" G_GUINT64_FORMAT " %11.1f %11s %11s  %s\n", p->prio,
                    p->tx_pkts, p->fc_sent, p->starved_us, qmax, qavg, p->link);
        else
            fprintf(f, "#  %4d %11" G_GUINT64_FORMAT " %7" G_GUINT64_FORMAT " %11.1f %10" G_GUINT64_FORMAT " %7"
                       G_GUINT64_FORMAT " %11s %11s  %s\n", p->prio, p->tx_pkts, p->pause_sent, p->paused_us,
                    p->ecn_marks, p->drops, qmax, qavg, p->link);
    }
    if (n < c->nports)
        fprintf(f, "# ... %d more (link, %s) pairs carried packets\n", c->nports - n, c->credit ? "VL" : "priority");
    for (int i = 0; i < c->nbuffers; i++) {
        char hw[32];
        char avg[32];
        fprintf(f, "#  buffer of %s: high-water %s, time-average %s\n", c->buffers[i].name,
                cs_format_bytes_human(c->buffers[i].buffer_max_bytes, hw, sizeof hw),
                cs_format_bytes_human(c->buffers[i].buffer_avg_bytes, avg, sizeof avg));
    }
    if (c->sharp)
        fprintf(f, "#  SHARP aggregation: packets reduced %" G_GUINT64_FORMAT ", copies sent down %" G_GUINT64_FORMAT
                   ", most held at once by a switch %" G_GUINT64_FORMAT "\n", c->sharp_reduced, c->sharp_copies_down,
                c->sharp_held_max);
    for (int i = 0; i < c->nsharp; i++)
        fprintf(f, "#  SHARP at %s: reduced %" G_GUINT64_FORMAT ", copies down %" G_GUINT64_FORMAT ", held at most %"
                   G_GUINT64_FORMAT "\n", c->sharp_switches[i].name, c->sharp_switches[i].reduced,
                c->sharp_switches[i].copies_down, c->sharp_switches[i].held_max);
}
