/* Shared by the benchmarks: wall clock, CPU time and peak memory, measured in the run
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

/* Seconds of CPU this process has used (every thread): what a timing on
 * a machine shared with other work should compare. */
static inline double bench_cpu_now(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec / 1e6 + (double)u.ru_stime.tv_sec +
           (double)u.ru_stime.tv_usec / 1e6;
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
