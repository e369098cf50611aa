/* A workload's step (collsim step) as a table, JSON and an SVG timeline.
 * Writers only: every number comes from the plan (cs_workload.h) or the
 * engine's run (cs_step.h). The same input gives the same bytes. */
#ifndef CS_WRITE_STEP_H
#define CS_WRITE_STEP_H

#include <stdio.h>
#include "models/cs_workload.h"
#include "sim/cs_step.h"

typedef struct {
    const cs_wl_spec_t *spec;
    const cs_wl_plan_t *plan;
    const cs_step_result_t *r;
    const char *title;           /* the scenario's name, or NULL */
    const char *topo_desc;       /* the machine */
    const char *producer;        /* "model:flow" */
    double gpu_flops;            /* sustained FLOP/s per GPU the plan used (0: given times) */
    const char *compute_src;     /* where gpu_flops comes from, one phrase */
    const char *const *warnings; /* NULL-terminated, or NULL: NCCL variable warnings */
} cs_step_report_t;

/* The summary table; 'ops': also every op of the plan with its times (-v). */
void cs_write_step_table(FILE *f, const cs_step_report_t *rep, gboolean ops);
/* Whether every latency target the spec sets (target-allreduce,
 * target-token) is met, as the table says "met" or "missed". */
gboolean cs_write_step_targets_met(const cs_step_report_t *rep);
char *cs_write_step_json(const cs_step_report_t *rep);
/* The step's timeline: one row per stage and stream (compute, each group's
 * communicator), each op a bar from its first instance's start to its last
 * one's end. */
char *cs_write_step_svg(const cs_step_report_t *rep);

#endif
