/* Self-contained SVG plots (see cs_svg.h): no script, no external font or
 * style sheet, so a browser shows the file alone. Every coordinate is
 * printed with two decimals in the C locale: same input, same bytes. */
#include "config.h"
#include "io/cs_svg.h"

#include <math.h>
#include <string.h>

/* Page geometry, pixels. */
#define W 880.0           /* page width */
#define ML 84.0           /* left margin: y tick labels and axis title */
#define MR 24.0
#define PW (W - ML - MR)  /* plot width */
#define PH 300.0          /* plot height of one panel */
#define TOP 52.0          /* first panel's top: the title above */
#define GAP 72.0          /* below a panel: x tick labels and x axis title */
#define LEGEND_ROW 18.0
#define SUB_ROW 16.0      /* a subtitle line */
#define CAPTION_ROW 16.0  /* a caption line */
#define CAPTION_CHARS 120 /* a caption line's characters: 12px italic sans fits the plot's width */

/* Ten distinguishable colours, then the same with dashes. */
static const char *const colours[] = { "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                       "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf" };
static const char *const dashes[] = { NULL, "7 4", "2 3", "9 3 2 3" };

typedef struct {
    double x0, x1;        /* log2 of the size axis's ends */
    double y0, y1;        /* log10 of the value axis's ends (whole decades) */
    double top;           /* panel's top edge */
} axes_t;

static void num(GString *g, double v)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    if (fabs(v) < 0.005)
        v = 0;            /* no "-0.00" */
    g_string_append(g, g_ascii_formatd(buf, sizeof buf, "%.2f", v));
}

char *cs_svg_escape(const char *s)
{
    g_autofree char *v = g_utf8_make_valid(s != NULL ? s : "", -1);
    for (char *c = v; *c != '\0'; c++)
        if ((unsigned char)*c < 0x20 && *c != '\t' && *c != '\n' && *c != '\r')
            *c = '?';
    return g_markup_escape_text(v, -1);
}

static void text_escaped(GString *g, const char *s)
{
    g_autofree char *e = cs_svg_escape(s);
    g_string_append(g, e);
}

char *cs_svg_size_label(double bytes, char *buf, gsize len)
{
    static const char units[] = { 0, 'K', 'M', 'G', 'T', 'P' };
    int u = 0;
    while (u + 1 < (int)G_N_ELEMENTS(units) && bytes >= 1024.0) {
        bytes /= 1024.0;
        u++;
    }
    char v[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_formatd(v, sizeof v, "%g", bytes);
    if (units[u] != 0)
        g_snprintf(buf, len, "%s%c", v, units[u]);
    else
        g_snprintf(buf, len, "%s", v);
    return buf;
}

static gboolean valid(double v)
{
    return isfinite(v) && v > 0;
}

/* The value a series plots in a panel: bandwidth (panel 0) or time. */
static const double *panel_values(const cs_svg_series_t *s, int panel)
{
    return panel == 0 ? s->busbw : s->time_us;
}

static gboolean band_at(const cs_svg_series_t *s, int panel, int k)
{
    return s->band_lo[panel] != NULL && s->band_hi[panel] != NULL && valid(s->size[k]) &&
           valid(s->band_lo[panel][k]) && valid(s->band_hi[panel][k]);
}

static const char *series_colour(const cs_svg_series_t *s, int i)
{
    int nc = (int)G_N_ELEMENTS(colours);
    return colours[(s->colour > 0 ? s->colour - 1 : i) % nc];
}

/* Log ranges over every valid point; a default decade when none. */
static void ranges(const cs_svg_series_t *series, int n, int panel, axes_t *a)
{
    double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
    for (int i = 0; i < n; i++) {
        const double *v = panel_values(&series[i], panel);
        for (int k = 0; v != NULL && k < series[i].n; k++) {
            if (!valid(series[i].size[k]) || !valid(v[k]))
                continue;
            xmin = MIN(xmin, series[i].size[k]);
            xmax = MAX(xmax, series[i].size[k]);
            ymin = MIN(ymin, v[k]);
            ymax = MAX(ymax, v[k]);
        }
        for (int k = 0; k < series[i].n; k++)
            if (band_at(&series[i], panel, k)) {
                xmin = MIN(xmin, series[i].size[k]);
                xmax = MAX(xmax, series[i].size[k]);
                ymin = MIN(ymin, series[i].band_lo[panel][k]);
                ymax = MAX(ymax, series[i].band_hi[panel][k]);
            }
    }
    if (!isfinite(xmin)) {
        xmin = 1024;
        xmax = 1 << 30;
        ymin = 1;
        ymax = 100;
    }
    a->x0 = floor(log2(xmin));
    a->x1 = ceil(log2(xmax));
    if (a->x1 <= a->x0) {
        a->x0 -= 1;
        a->x1 += 1;
    }
    a->y0 = floor(log10(ymin));
    a->y1 = ceil(log10(ymax));
    if (a->y1 <= a->y0)
        a->y1 = a->y0 + 1;
}

static double px(const axes_t *a, double size)
{
    return ML + (log2(size) - a->x0) / (a->x1 - a->x0) * PW;
}

static double py(const axes_t *a, double v)
{
    return a->top + PH - (log10(v) - a->y0) / (a->y1 - a->y0) * PH;
}

/* mult x 10^decade as a tick label: GB/s plain, time with its unit */
static void value_label(int panel, int decade, double mult, char *buf, gsize len)
{
    char v[G_ASCII_DTOSTR_BUF_SIZE];
    if (panel == 0) {
        g_snprintf(buf, len, "%s", g_ascii_formatd(v, sizeof v, "%g", mult * pow(10, decade)));
        return;
    }
    /* microseconds as people read them */
    static const struct { int shift; const char *unit; } u[] = { { 6, "s" }, { 3, "ms" }, { 0, "us" }, { -3, "ns" } };
    for (guint i = 0; i < G_N_ELEMENTS(u); i++)
        if (decade >= u[i].shift || i + 1 == G_N_ELEMENTS(u)) {
            g_snprintf(buf, len, "%s %s", g_ascii_formatd(v, sizeof v, "%g", mult * pow(10, decade - u[i].shift)),
                       u[i].unit);
            return;
        }
}

static void line(GString *g, double x1, double y1, double x2, double y2, const char *cls)
{
    g_string_append_printf(g, "<line class=\"%s\" x1=\"", cls);
    num(g, x1);
    g_string_append(g, "\" y1=\"");
    num(g, y1);
    g_string_append(g, "\" x2=\"");
    num(g, x2);
    g_string_append(g, "\" y2=\"");
    num(g, y2);
    g_string_append(g, "\"/>\n");
}

static void text(GString *g, double x, double y, const char *cls, const char *anchor, const char *s)
{
    g_string_append_printf(g, "<text class=\"%s\" x=\"", cls);
    num(g, x);
    g_string_append(g, "\" y=\"");
    num(g, y);
    g_string_append_printf(g, "\" text-anchor=\"%s\">", anchor);
    text_escaped(g, s);
    g_string_append(g, "</text>\n");
}

static void frame(GString *g, const axes_t *a, int panel)
{
    double bottom = a->top + PH;
    /* x ticks at powers of two, every k-th so that at most 12 show */
    int k = 1;
    while ((a->x1 - a->x0) / k > 12)
        k = k < 5 ? k + 1 : k * 2;
    for (double e = ceil(a->x0 / k) * k; e <= a->x1; e += k) {
        double x = ML + (e - a->x0) / (a->x1 - a->x0) * PW;
        char lab[16];
        line(g, x, a->top, x, bottom, "grid");
        line(g, x, bottom, x, bottom + 5, "tick");
        text(g, x, bottom + 18, "tl", "middle", cs_svg_size_label(ldexp(1, (int)e), lab, sizeof lab));
    }
    int step = a->y1 - a->y0 > 10 ? 2 : 1;
    for (int d = (int)a->y0; d <= (int)a->y1; d += step) {
        /* two decades or fewer: 2x and 5x too, or the axis says little */
        static const double mult[] = { 1, 2, 5 };
        for (int m = 0; m < (a->y1 - a->y0 <= 2 ? 3 : 1); m++) {
            double lv = d + log10(mult[m]);
            if (lv > a->y1)
                break;
            double y = a->top + PH - (lv - a->y0) / (a->y1 - a->y0) * PH;
            char lab[48];
            value_label(panel, d, mult[m], lab, sizeof lab);
            line(g, ML, y, ML + PW, y, "grid");
            line(g, ML - 5, y, ML, y, "tick");
            text(g, ML - 8, y + 4, "tl", "end", lab);
        }
    }
    g_string_append(g, "<rect class=\"frame\" x=\"");
    num(g, ML);
    g_string_append(g, "\" y=\"");
    num(g, a->top);
    g_string_append(g, "\" width=\"");
    num(g, PW);
    g_string_append(g, "\" height=\"");
    num(g, PH);
    g_string_append(g, "\"/>\n");
    text(g, ML + PW / 2, bottom + 38, "axis", "middle", "message size (bytes; K, M, G = 2^10, 2^20, 2^30)");
    const char *ytitle = panel == 0 ? "bus bandwidth (GB/s)" : "time per call";
    g_string_append(g, "<text class=\"axis\" text-anchor=\"middle\" transform=\"translate(18,");
    num(g, a->top + PH / 2);
    g_string_append(g, ") rotate(-90)\">");
    text_escaped(g, ytitle);
    g_string_append(g, "</text>\n");
}

static void style_attrs(GString *g, const cs_svg_series_t *s, int i)
{
    int nc = (int)G_N_ELEMENTS(colours);
    g_string_append_printf(g, " stroke=\"%s\"", series_colour(s, i));
    const char *d = s->dashed ? "7 4" : s->colour > 0 ? NULL : dashes[(i / nc) % (int)G_N_ELEMENTS(dashes)];
    if (d != NULL)
        g_string_append_printf(g, " stroke-dasharray=\"%s\"", d);
}

/* One design's curve in one panel: a path (broken where a point is
 * missing), a dot per point, and where the algorithm changes, a ring and
 * its name. */
static void curve(GString *g, const axes_t *a, const cs_svg_series_t *s, int i, int panel)
{
    const double *v = panel_values(s, panel);
    const char *colour = series_colour(s, i);
    g_string_append_printf(g, "<g class=\"series\" data-series=\"%d\">\n<path class=\"curve\" d=\"", i);
    gboolean pen_down = FALSE, first = TRUE;
    double last = 0;
    for (int k = 0; k < s->n; k++) {
        if (!valid(s->size[k]) || !valid(v[k])) {
            pen_down = FALSE;
            continue;
        }
        if (s->size[k] <= last)
            pen_down = FALSE;   /* a new group of rows: not joined to the last */
        last = s->size[k];
        g_string_append_printf(g, "%s%c", first ? "" : " ", pen_down ? 'L' : 'M');
        num(g, px(a, s->size[k]));
        g_string_append_c(g, ' ');
        num(g, py(a, v[k]));
        pen_down = TRUE;
        first = FALSE;
    }
    g_string_append(g, "\" fill=\"none\" stroke-width=\"2\"");
    style_attrs(g, s, i);
    g_string_append(g, "/>\n");
    const char *prev = NULL;
    for (int k = 0; k < s->n; k++) {
        if (!valid(s->size[k]) || !valid(v[k]))
            continue;
        double x = px(a, s->size[k]), y = py(a, v[k]);
        const char *al = s->algo != NULL ? s->algo[k] : NULL;
        gboolean change = al != NULL && (prev == NULL || strcmp(prev, al) != 0);
        g_string_append_printf(g, "<circle class=\"%s\" cx=\"", change ? "change" : "pt");
        num(g, x);
        g_string_append(g, "\" cy=\"");
        num(g, y);
        g_string_append_printf(g, "\" r=\"%s\" fill=\"%s\" stroke=\"%s\"/>\n",
                               change ? "4.5" : s->dashed ? "2.5" : "2",
                               change || s->dashed ? "#ffffff" : colour, colour);
        if (change) {
            /* staggered by design so that labels of curves that meet do
             * not print over each other */
            double ly = y - 9 - 11 * (i % 3);
            if (ly < a->top + 10)
                ly = y + 16 + 11 * (i % 3);
            gboolean right = x > ML + PW - 90;
            /* (a style: the sheet's text rule outranks a fill attribute) */
            g_string_append_printf(g, "<text class=\"algo\" style=\"fill: %s\" x=\"", colour);
            num(g, right ? x - 6 : x + 6);
            g_string_append(g, "\" y=\"");
            num(g, ly);
            g_string_append_printf(g, "\" text-anchor=\"%s\">", right ? "end" : "start");
            text_escaped(g, al);
            g_string_append(g, "</text>\n");
        }
        if (al != NULL)
            prev = al;
    }
    g_string_append(g, "</g>\n");
}

/* A series' band in one panel: a shaded area over each run of points with
 * growing sizes (a lone point: a vertical bar). */
static void band(GString *g, const axes_t *a, const cs_svg_series_t *s, int i, int panel)
{
    if (s->band_lo[panel] == NULL || s->band_hi[panel] == NULL)
        return;
    const double *lo = s->band_lo[panel], *hi = s->band_hi[panel];
    const char *colour = series_colour(s, i);
    int k = 0;
    while (k < s->n) {
        if (!band_at(s, panel, k)) {
            k++;
            continue;
        }
        int end = k + 1;   /* the run is [k, end) */
        while (end < s->n && band_at(s, panel, end) && s->size[end] > s->size[end - 1])
            end++;
        if (end - k == 1) {
            g_string_append_printf(g, "<line class=\"band\" data-series=\"%d\" stroke=\"%s\" stroke-width=\"6\" "
                                      "stroke-opacity=\"0.18\" x1=\"", i, colour);
            num(g, px(a, s->size[k]));
            g_string_append(g, "\" y1=\"");
            num(g, py(a, lo[k]));
            g_string_append(g, "\" x2=\"");
            num(g, px(a, s->size[k]));
            g_string_append(g, "\" y2=\"");
            num(g, py(a, hi[k]));
            g_string_append(g, "\"/>\n");
        } else {
            g_string_append_printf(g, "<path class=\"band\" data-series=\"%d\" fill=\"%s\" fill-opacity=\"0.18\" "
                                      "stroke=\"none\" d=\"", i, colour);
            for (int j = k; j < end; j++) {
                g_string_append(g, j == k ? "M" : " L");
                num(g, px(a, s->size[j]));
                g_string_append_c(g, ' ');
                num(g, py(a, hi[j]));
            }
            for (int j = end - 1; j >= k; j--) {
                g_string_append(g, " L");
                num(g, px(a, s->size[j]));
                g_string_append_c(g, ' ');
                num(g, py(a, lo[j]));
            }
            g_string_append(g, " Z\"/>\n");
        }
        k = end;
    }
}

/* Splits text into lines at '\n', and a line longer than 'width'
 * characters (UTF-8 counted as characters) at its last space before the
 * limit, or at the limit when it has none. */
static GPtrArray *wrap_lines(const char *text, int width)
{
    GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
    g_auto(GStrv) parts = g_strsplit(text != NULL ? text : "", "\n", -1);
    for (int i = 0; parts[i] != NULL; i++) {
        const char *p = parts[i];
        while (g_utf8_strlen(p, -1) > width) {
            const char *lim = g_utf8_offset_to_pointer(p, width);
            const char *cut = lim;
            while (cut > p && *cut != ' ')
                cut--;
            if (cut == p)
                cut = lim;
            g_ptr_array_add(out, g_strndup(p, cut - p));
            p = *cut == ' ' ? cut + 1 : cut;
        }
        g_ptr_array_add(out, g_strdup(p));
    }
    return out;
}

char *cs_svg_plot(const cs_svg_series_t *series, int n, const cs_svg_opts_t *o)
{
    int npanels = o->time_panel ? 2 : 1;
    g_autoptr(GPtrArray) sub = o->subtitle != NULL ? wrap_lines(o->subtitle, CAPTION_CHARS) : NULL;
    g_autoptr(GPtrArray) cap = wrap_lines(o->caption, CAPTION_CHARS);
    double top = TOP + (sub != NULL ? sub->len * SUB_ROW : 0);
    double legend_top = top + npanels * (PH + GAP) - 8;
    double caption_y = legend_top + MAX(n, 1) * LEGEND_ROW + 16;
    double height = caption_y + (cap->len - 1) * CAPTION_ROW + 16;
    GString *g = g_string_new("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    g_string_append(g, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"");
    num(g, W);
    g_string_append(g, "\" height=\"");
    num(g, height);
    g_string_append(g, "\" viewBox=\"0 0 ");
    num(g, W);
    g_string_append_c(g, ' ');
    num(g, height);
    g_string_append(g, "\">\n<title>");
    text_escaped(g, o->title);
    g_string_append(g, "</title>\n<desc>");
    text_escaped(g, o->caption);
    g_string_append(g, "</desc>\n"
                       "<style>\n"
                       "text { font-family: sans-serif; font-size: 12px; fill: #222222; }\n"
                       ".title { font-size: 16px; font-weight: bold; }\n"
                       ".axis { font-size: 12px; }\n"
                       ".tl { font-size: 11px; fill: #444444; }\n"
                       ".algo { font-size: 10px; font-weight: bold; }\n"
                       ".caption { font-size: 12px; font-style: italic; fill: #555555; }\n"
                       ".subtitle { font-size: 12px; fill: #333333; }\n"
                       ".grid { stroke: #e4e4e4; stroke-width: 1; }\n"
                       ".tick { stroke: #444444; stroke-width: 1; }\n"
                       ".frame { fill: none; stroke: #444444; stroke-width: 1; }\n"
                       "</style>\n"
                       "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
    text(g, W / 2, 28, "title", "middle", o->title);
    for (guint l = 0; sub != NULL && l < sub->len; l++)
        text(g, W / 2, 28 + SUB_ROW * (l + 1), "subtitle", "middle", g_ptr_array_index(sub, l));
    for (int p = 0; p < npanels; p++) {
        axes_t a;
        ranges(series, n, p, &a);
        a.top = top + p * (PH + GAP);
        g_string_append_printf(g, "<g class=\"panel\" id=\"%s\">\n", p == 0 ? "busbw" : "time");
        frame(g, &a, p);
        for (int i = 0; i < n; i++)
            band(g, &a, &series[i], i, p);
        for (int i = 0; i < n; i++)
            if (panel_values(&series[i], p) != NULL)
                curve(g, &a, &series[i], i, p);
        g_string_append(g, "</g>\n");
    }
    g_string_append(g, "<g class=\"legend\">\n");
    for (int i = 0; i < n; i++) {
        double y = legend_top + i * LEGEND_ROW;
        if (series[i].band_lo[0] != NULL || series[i].band_lo[1] != NULL) {
            g_string_append_printf(g, "<rect class=\"band\" fill=\"%s\" fill-opacity=\"0.18\" x=\"",
                                   series_colour(&series[i], i));
            num(g, ML);
            g_string_append(g, "\" y=\"");
            num(g, y - 6);
            g_string_append(g, "\" width=\"28\" height=\"12\"/>\n");
        }
        g_string_append(g, "<line x1=\"");
        num(g, ML);
        g_string_append(g, "\" y1=\"");
        num(g, y);
        g_string_append(g, "\" x2=\"");
        num(g, ML + 28);
        g_string_append(g, "\" y2=\"");
        num(g, y);
        g_string_append(g, "\" stroke-width=\"2\"");
        style_attrs(g, &series[i], i);
        g_string_append(g, "/>\n");
        text(g, ML + 36, y + 4, "legend", "start", series[i].label);
    }
    g_string_append(g, "</g>\n");
    for (guint l = 0; l < cap->len; l++)
        text(g, ML, caption_y + l * CAPTION_ROW, "caption", "start", g_ptr_array_index(cap, l));
    g_string_append(g, "</svg>\n");
    return g_string_free(g, FALSE);
}
