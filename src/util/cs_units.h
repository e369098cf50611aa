/* Parsing and printing of sizes, bandwidths and times with units. */
#ifndef CS_UNITS_H
#define CS_UNITS_H

#include <glib.h>

/* "8", "1K", "32M", "1G", "4KiB", "1MB" (K/M/G are powers of 1024, as in
 * nccl-tests). Fails on empty, negative, non-numeric or overflowing input. */
gboolean cs_parse_size(const char *s, guint64 *bytes_p);

/* "400Gbps", "400Gb/s", "25GB/s", "25GBps", "12.5e9" (plain number = bytes/s).
 * Decimal prefixes (G = 1e9), bits when the unit has a lower-case b.
 * Result in bytes per second; must be > 0. */
gboolean cs_parse_bandwidth(const char *s, double *bytes_per_s_p);

/* "1.5us", "500ns", "2ms", "1s", "0" (plain number = seconds). Result in
 * seconds; must be >= 0. */
gboolean cs_parse_time(const char *s, double *seconds_p);

/* Strict integer/double parsing of a whole string. */
gboolean cs_parse_int(const char *s, gint64 min, gint64 max, gint64 *v_p);
/* The same in a given base (0: as strtoll, "0x" hex and "0" octal, as NCCL
 * reads its integer variables). */
gboolean cs_parse_int_base(const char *s, int base, gint64 min, gint64 max, gint64 *v_p);
gboolean cs_parse_double(const char *s, double *v_p);
/* Whether a text holds no control character (a line break, a tab, DEL):
 * one that is printed as one line of a header. */
gboolean cs_text_one_line(const char *s);

/* Human formats, returned newly allocated: "400 Gb/s", "1.50 us", "32 MiB". */
char *cs_format_bandwidth(double bytes_per_s);
char *cs_format_time(double seconds);
char *cs_format_size(guint64 bytes);

#endif
