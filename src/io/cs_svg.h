/* Plots as self-contained SVG: bus bandwidth (and time, a second panel)
 * against size on log axes, one curve per design (or a measurement and its
 * prediction, with a shaded band), with a marker and a label where NCCL's
 * algorithm changes along a curve. A writer: it draws what it is given and
 * computes no model quantity. The same input gives the same bytes (numbers
 * are printed in the C locale with fixed decimals). */
#ifndef CS_SVG_H
#define CS_SVG_H

#include <glib.h>

typedef struct {
    const char *label;          /* legend text: the design's name */
    int n;                      /* points */
    const double *size;         /* bytes, > 0 (a point with size <= 0 is skipped) */
    const double *busbw;        /* GB/s; <= 0 or not finite: no point (the curve breaks) */
    const double *time_us;      /* microseconds; <= 0 or not finite: no point; NULL: no time curve */
    const char *const *algo;    /* per point "Ring/LL" or NULL; a change is marked and labelled */
    /* Optional (zero: as above) */
    int colour;                 /* 0: by the series' place; k > 0: the palette's k-th colour, so that
                                 * series that belong together (a measurement, its prediction) share one */
    gboolean dashed;            /* a dashed line and hollow points (a prediction beside its measurement) */
    const double *band_lo[2];   /* per point, a band shaded in the series' colour: bandwidth [0] and */
    const double *band_hi[2];   /* time [1] panel; NULL: none; a point whose ends are not > 0: none there */
} cs_svg_series_t;

typedef struct {
    const char *title;          /* top line, e.g. "allreduce: ring vs tree" */
    const char *subtitle;       /* NULL, or lines under the title ('\n' separates them) */
    const char *caption;        /* bottom, e.g. "model: analytic prediction, not a measurement"; '\n'
                                 * separates lines, and a line too long for the page is wrapped */
    gboolean time_panel;        /* draw the time panel under the bandwidth one */
} cs_svg_opts_t;

/* The SVG document (g_free it). n may be 0 (empty axes). A curve breaks
 * where its size does not grow (a table with several types or roots). */
char *cs_svg_plot(const cs_svg_series_t *series, int n, const cs_svg_opts_t *o);

/* A size on the axis, binary units as nccl-tests's flags write them: "512",
 * "1K", "64K", "1M", "1G", "2T". Returns buf; 16 bytes are enough. */
char *cs_svg_size_label(double bytes, char *buf, gsize len);
/* 's' as XML character data or an attribute value (g_free it): escaped,
 * bytes that are not UTF-8 (a file name's) as U+FFFD, and the control
 * characters XML 1.0 does not allow as '?'. NULL: "". */
char *cs_svg_escape(const char *s);

#endif
