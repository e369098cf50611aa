/* The executor of a workload (collsim step): places a plan's groups on a
 * machine as NCCL communicators (cs_wl_group_ranks: TP within a node, DP,
 * PP and EP across nodes), turns every op into calls of engine tasks (one
 * task per communicator and call size, one per compute stream), and prices
 * the step:
 *  - engines that run several tasks together (flow, packet) run all of them
 *    at once, with their dependencies, so that overlapping groups share
 *    links and calls overlap compute as they would (cs_engine_run_graph);
 *  - the others (analytic) price each call alone and schedule the plan in
 *    closed form; the result says so.
 * Data flows one way: plan -> tasks -> engine -> spans -> cs_step_result_t
 * -> writers (io/cs_write_step.h). */
#ifndef CS_STEP_H
#define CS_STEP_H

#include "models/cs_workload.h"
#include "sim/cs_engine.h"

typedef struct {
    const cs_wl_plan_t *plan;
    const cs_topo_t *topo;       /* the machine: plan->world GPUs */
    const cs_nccl_env_t *env;    /* NCCL's variables, for every communicator */
    const cs_params_t *params;
    const cs_fabric_cfg_t *fabric;
    guint64 seed;
    gboolean exact;              /* the engines' exact mode (cs_engine_job_t.exact) */
    cs_sim_sink_t *sink;         /* engines with a timeline: every task's calls; or NULL */
    /* --trace: names each task's track (task index, its name), or NULL */
    void (*name_task)(void *data, int task, const char *name);
    void *name_data;
} cs_step_in_t;

/* One op of the plan, over all its instances (every TP group, ...). */
typedef struct {
    double start_s, end_s;       /* first instance's start, last one's end */
    double mean_s;               /* the length of one instance's call, mean over instances */
    int instances;
} cs_step_op_t;

/* One kind of call in the step: a collective of one size on one group kind. */
typedef struct {
    cs_wl_group_t group;
    cs_coll_t coll;
    guint64 size;
    int group_size;              /* ranks per communicator */
    int group_nodes;             /* nodes a communicator spans: calls of one kind on communicators
                                  * of another shape (NVLink pairs, pairs across nodes) are rows apart */
    int calls;                   /* per step on one communicator (one stage) */
    double mean_s;               /* length of one call, mean over calls and communicators */
    double alone_s;              /* the same call alone on the machine (analytic: its price) */
    double total_s;              /* calls x mean on one GPU */
    double busbw;                /* GB/s of one call: nccl-tests' bus bandwidth of size / mean */
    cs_decision_t decision;
} cs_step_call_t;

typedef struct {
    const char *engine;          /* "analytic", "flow", ... (static) */
    gboolean together;           /* calls ran together (contention, overlap) or each alone */
    int nops;
    cs_step_op_t *ops;           /* plan order */
    int ncalls;
    cs_step_call_t *calls;       /* by group, collective, size */
    int ntasks;
    double step_s;               /* the step (training) or token (inference) */
    double free_s;               /* the same plan with communication free: compute and its order alone */
    double compute_s;            /* the busiest compute stream's busy time */
    double phase_s[CS_WL_NPHASES]; /* ... per phase */
    double comm_s[CS_WL_NGROUPS];  /* sum of one GPU's calls per group kind (busiest communicator) */
    double exposed_s;            /* step_s - free_s: what communication adds to the step */
    double bubble_s;             /* free_s - compute_s: idle time with free communication (pipeline bubble) */
    char *transport[CS_WL_NGROUPS]; /* each group kind's communicators: NCCL's transports
                                 * (cs_comm_transport_summary), the distinct ones joined by
                                 * "; ", NULL: none of that kind */
    char **notes;                /* NULL-terminated */
} cs_step_result_t;

/* Prices one step of in->plan with engine 'ops'. Errors: NCCL refuses a
 * call, the machine lacks the plan's GPUs, the engine fails or is
 * interrupted (as cs_engine_run_graph). */
cs_step_result_t *cs_step_run(const cs_engine_ops_t *ops, const cs_step_in_t *in, GError **err);
void cs_step_result_free(cs_step_result_t *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(cs_step_result_t, cs_step_result_free)

#endif
