/* --link-stats: what each link carried in one engine run, as comment lines
 * ("# ...") after the nccl-tests table, so that log parsers skip them. */
#ifndef CS_LINK_STATS_TEXT_H
#define CS_LINK_STATS_TEXT_H

#include <stdio.h>
#include "sim/cs_engine.h"

/* A title line naming the model and 'what' (a caller's description, e.g.
 * "allreduce 1 GiB"; may be NULL) and the run's length; then per link:
 * utilization (bytes / (cap x time)) in %, average GB/s carried (bytes /
 * time / 1e9), capacity GB/s, bytes carried, name. At most 'max' links (the
 * busiest; max < 0: all), then "# ... N more links carried traffic" when
 * cut; then "# bottleneck: NAME (U% busy on average)", or where the
 * engine names a bound that is no listed link (s->limit) "# bottleneck:
 * LIMIT; the busiest network link: NAME (U% busy)" (or "; no network link
 * carried data"). s may be NULL (no link carried anything). */
void cs_write_link_stats(FILE *f, const cs_link_stats_t *s, const char *what, int max);

/* One line, "# PREFIXbottleneck: NAME (U% busy)", the engine's bound as
 * above when it has one, or "# PREFIXbottleneck: none (no link carried
 * data)"; prefix (may be NULL) is printed verbatim, e.g. "1 GiB: ". */
void cs_write_bottleneck_line(FILE *f, const cs_link_stats_t *s, const char *prefix);

/* A packet engine's counters of one call (cs_net_counters_t): its totals,
 * then per link and priority, most paused first then deepest queue: the
 * packets sent, pause frames sent back and time paused, ECN marks, drops,
 * queue maximum and time-average; at most 'max' rows; then each switch's
 * buffer high-water. */
void cs_write_net_counters(FILE *f, const cs_net_counters_t *c, const char *what, int max);

/* Bytes in binary units for people: "512 B", "64 KiB", "1.50 GiB" (two
 * decimals unless whole). Returns buf; 32 bytes are enough. */
char *cs_format_bytes_human(double bytes, char *buf, size_t n);

#endif
