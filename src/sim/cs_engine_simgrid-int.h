/* Private to the SimGrid engine and its tests. Model: docs/model-simgrid.md.
 * Only compiled where configure found SimGrid (HAVE_SIMGRID). cs_simgrid_simulate
 * is in the engine itself: a program that calls it links cs_engine_simgrid.c
 * and SimGrid (mk/simgrid.am). */
#ifndef CS_ENGINE_SIMGRID_INT_H
#define CS_ENGINE_SIMGRID_INT_H

#include "sim/cs_engine.h"

/* The registry's entry (cs_engine.c, under HAVE_SIMGRID): it loads the
 * engine on first use (cs_engine_simgrid_load.c) and forwards to it. */
extern const cs_engine_ops_t cs_engine_simgrid;
/* The engine itself (cs_engine_simgrid.c): in the module
 * collsim-simgrid.so that collsim loads, or linked into a test or a
 * benchmark, where the registry's entry uses it directly. */
extern const cs_engine_ops_t cs_engine_simgrid_impl;

typedef struct {
    double time_s;           /* the call's time, launch included */
    double gpu_s;            /* the same before the host's floor of the process layout */
    int lanes;               /* ring lanes ((channel, position) pairs) or
                              * dataflow flows, one actor each */
    int links;               /* SimGrid links in the generated platform */
    double quant_err;        /* worst relative error of a link coefficient
                              * approximated by an integer multiplicity (0 =
                              * every coefficient exact) */
} cs_simgrid_stats_t;

/* Simulates one call in a forked child process (SimGrid 3.32 can be
 * initialised once per process); the parent only waits for the answer.
 * 'platform_path' (may be NULL): also keep the generated platform XML
 * there, for inspection. */
gboolean cs_simgrid_simulate(const cs_engine_job_t *job, const cs_engine_call_t *call,
                             const char *platform_path, cs_simgrid_stats_t *stats_p, GError **err);

#endif
