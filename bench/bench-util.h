/* Shared by the benchmarks: wall clock and peak memory, measured in the run
 * that prints them. Header-only, static: each benchmark includes it once. */
#ifndef CS_BENCH_UTIL_H
#define CS_BENCH_UTIL_H

#include <glib.h>
#include <sys/resource.h>

/* Seconds on the monotonic clock. */
static inline double bench_now(void)
{
    return (double)g_get_monotonic_time() / 1e6;
}

/* Peak resident set in KiB of this process or, with 'children', of the
 * larger of it and its waited-for children (SimGrid's own process). */
static inline long bench_peak_rss_kib(gboolean children)
{
    struct rusage self, kids;
    getrusage(RUSAGE_SELF, &self);
    if (!children)
        return self.ru_maxrss;
    getrusage(RUSAGE_CHILDREN, &kids);
    return MAX(self.ru_maxrss, kids.ru_maxrss);
}

#endif
