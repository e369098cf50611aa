/* An engine prices NCCL's decisions against the hardware and fills result
 * rows. Each engine is one const ops table (cs_engine_ops_t) registered in
 * cs_engine.c; the core never knows which one runs. Adding an engine
 * touches its own file and one registration line. */
#ifndef CS_ENGINE_H
#define CS_ENGINE_H

#include "models/cs_topo.h"
#include "models/cs_decide.h"
#include "models/cs_params.h"
#include "models/cs_result.h"
#include "models/cs_fabric_cfg.h"
#include "models/cs_p2p.h"

#include <math.h>
#include <sys/types.h>

/* What an engine that simulates a timeline (ops->timeline) reports while it
 * runs, for --trace. Times are seconds from the start of the engine's run
 * (one call of a sweep, or one run of several jobs); 'job' is the job's
 * index (0 for a single job) and 'rank' a rank of that job. An
 * implementation embeds this struct first; any callback may be NULL. */
typedef struct cs_sim_sink cs_sim_sink_t;
struct cs_sim_sink {
    /* rank sent 'bytes' to rank 'peer' (-1: through the NVSwitch, NVLS) on
     * channel ch from t0 to t1 */
    void (*span)(cs_sim_sink_t *s, int job, int rank, int ch, int peer, double t0, double t1, double bytes);
    /* resource 'res' (named 'name') is busy at 'util' (0 to 1) from t on */
    void (*counter)(cs_sim_sink_t *s, int res, const char *name, double t, double util);
    /* one call of a job: iteration 'iter' ran from t0 to t1 */
    void (*call)(cs_sim_sink_t *s, int job, int iter, double t0, double t1);
    /* the run ended at t */
    void (*end)(cs_sim_sink_t *s, double t);
    /* a run is about to start; 'label' says what it is ("allreduce 32 MiB") */
    void (*begin)(cs_sim_sink_t *s, const char *label);
    /* a quantity of the fabric named 'track' ("queue leaf0 -> n1.nic0 prio
     * 3") is 'value', in 'unit' ("bytes", "paused", "Gb/s"), from t on
     * (a packet-level engine) */
    void (*gauge)(cs_sim_sink_t *s, const char *track, const char *unit, double t, double value);
};

/* What each link carried in one run (the links that carried anything),
 * for --link-stats: simulated by a timeline engine (flow), or the loads
 * the analytic engine priced in closed form ('source' says which). */
typedef struct {
    char *name;              /* "n0.gpu0 -> n0.pcisw0 (pcie)", "n0.gpu0 memory" */
    double cap;              /* bytes/s */
    double bytes;            /* wire bytes carried */
} cs_link_stat_t;

typedef struct {
    double time_s;           /* the run's length (analytic: the predicted time) */
    int n;
    cs_link_stat_t *links;   /* busiest first (bytes / cap), ties by name */
    /* Where the numbers come from, for the title of --link-stats
     * ("model:analytic, ..."); static; NULL: "model:flow". */
    const char *source;
    /* A packet-level engine's counters of the same run (per link and
     * priority, buffers), or NULL; freed with the statistics. */
    cs_net_counters_t *net;
    /* What bound the call where that is not a link listed here, in the
     * engine's words with its busy share ("channel throughput (24
     * channels, chan.simple.sm100) (97.0% busy)"): the analytic engine
     * prices NVLink, the SMs, NVLS, memory and the host in closed form and
     * lists network links only. NULL: the busiest link listed is the
     * bottleneck. Freed with the statistics. */
    char *limit;
    /* The engine lists no link loads for this call at all (the analytic
     * engine's point-to-point calls), so an empty list says nothing of
     * the network. */
    gboolean unlisted;
    /* Why the engine lists no link of this call where it should (the
     * analytic engine's bound could not route its network edges), or
     * NULL. Freed with the statistics. */
    char *unrouted;
} cs_link_stats_t;

void cs_link_stats_free(cs_link_stats_t *s);
/* Sorts s->links busiest first: utilization (bytes / cap) in steps of
 * 1e-9, so that links that carried the same bytes by different sums
 * (rounding) tie, and ties by name (the flow engine's order). */
void cs_link_stats_sort(cs_link_stats_t *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(cs_link_stats_t, cs_link_stats_free)

typedef struct {
    const cs_topo_t *topo;
    const cs_comm_t *comm;
    const cs_params_t *params;
    cs_coll_t coll;
    cs_dtype_t dtype;
    cs_redop_t redop;
    int root;
    guint64 seed;
    gboolean exact;          /* no approximation that would save time (flow: averaged ring latencies) */
    /* Optional: */
    cs_sim_sink_t *sink;     /* engines with ops->timeline: receives the timeline of every call */
    GPtrArray *link_stats;   /* engines with ops->link_stats: cs_engine_run_sweep appends one
                              * cs_link_stats_t per size priced; NULL: none wanted (and none built) */
    const cs_fabric_cfg_t *fabric; /* engines with ops->fabric: the [fabric] section; NULL: its defaults */
    gboolean time_steps;     /* cs_engine_sweep_next measures each size's CPU and wall time
                              * (collsim run -v); else they stay 0: the clocks are system
                              * calls, and a fit prices thousands of sizes */
    gboolean alternatives;   /* engines with ops->closed_form: each size also prices the
                              * algorithms NCCL's tuner passed over, and the sweep notes where
                              * one takes much less time than NCCL's pick (collsim run) */
} cs_engine_job_t;

/* One call of the collective: inputs and the decision already taken. */
typedef struct {
    guint64 size;          /* swept size, bytes (nccl-tests column) */
    guint64 count;         /* elements per rank */
    guint64 nccl_bytes;    /* NCCL's nBytes */
    const cs_decision_t *decision;
} cs_engine_call_t;

typedef struct cs_engine_multi cs_engine_multi_t;   /* several jobs at once, below */

/* What one call will take, estimated from the program's size before it
 * runs (ops->estimate): the memory the engine allocates for it, beyond
 * what the process holds already, and its wall time where the engine can
 * tell. Per-item costs are measured (docs/model-*.md, "Memory"). */
typedef struct {
    double bytes;
    double seconds;          /* < 0: no estimate */
} cs_engine_cost_t;

typedef struct cs_engine_ops {
    const char *name;          /* "analytic", "flow", "packet", "simgrid" */
    const char *description;
    /* Optional per-job state (e.g. an expanded network). */
    gboolean (*open)(const cs_engine_job_t *job, void **state_p, GError **err);
    /* Time of one call in seconds, in-place and out-of-place (they may
     * differ: in-place saves a copy for some algorithms). */
    gboolean (*predict)(void *state, const cs_engine_job_t *job, const cs_engine_call_t *call,
                        double time_s[2], GError **err);
    void (*close)(void *state);
    /* Optional: the cost of one call (after open), so that a call that
     * would exhaust the machine is refused before it starts
     * (cs_engine_sweep_new, cs_engine_run_jobs). Errors: as predict's. */
    gboolean (*estimate)(void *state, const cs_engine_job_t *job, const cs_engine_call_t *call,
                         cs_engine_cost_t *cost_p, GError **err);
    /* Optional: the same for a run of several jobs (run_jobs). */
    gboolean (*estimate_jobs)(const cs_engine_multi_t *m, cs_engine_cost_t *cost_p, GError **err);
    /* Optional: what the engine assumed for this job that the output
     * should say (after open), as notes (a NULL-terminated vector,
     * g_strfreev it), e.g. the packet engine's fabric settings. */
    char **(*notes)(void *state);
    /* Optional: what the last predict approximated to save time, as one
     * sentence (g_free it), or NULL when nothing; job->exact turns such
     * approximations off. cs_engine_run_sweep notes it with the sizes. */
    char *(*approximation)(void *state);
    /* Optional: the engine's counters for the last predict, as one line of
     * text for `collsim run -v` (e.g. "events 123456, max-min recomputes
     * 789, 2.1e6 events/s, CPU 0.06 s"); g_free it; NULL when it has none. */
    char *(*counters)(void *state);
    /* Optional: what bound the last predict, when worth a note, as one
     * phrase without numbers that vary with the size (e.g. "leaf2 ->
     * spine0 (net), loaded 1.75x the busiest NIC port, fabric 4:1
     * oversubscribed"); g_free it; NULL: nothing to note. cs_engine_run_sweep
     * notes it with the sizes: "bottleneck for 1 GiB to 4 GiB: <what>". */
    char *(*bottleneck)(void *state);
    /* Optional: what the network did in the last predict, per link and
     * priority (a packet-level engine), for --json and --link-stats;
     * cs_engine_run_sweep keeps it with the row (cs_result_t.net). */
    cs_net_counters_t *(*net_counters)(void *state);
    /* The last predict's link statistics (busiest first), for
     * --link-stats; optional. An engine with timeline simulates them; the
     * analytic engine reports the loads it priced. */
    cs_link_stats_t *(*link_stats)(void *state);
    /* Engines that simulate a timeline: they honour job->sink, report the
     * run several jobs at once (--trace needs it). */
    gboolean timeline;
    /* Engines that read job->fabric (the [fabric] section); the others
     * ignore it and the output says so (cs_engine_ignored_settings). */
    gboolean fabric;
    /* Engines that price a call in closed form, in microseconds: cheap
     * enough to price the algorithms NCCL passed over (job->alternatives). */
    gboolean closed_form;
    /* Engines that make an approximation only to save time, which
     * job->exact turns off (the flow engine's fold of a long ring); for
     * the others --exact changes nothing and the output says so
     * (cs_engine_ignored_exact). */
    gboolean exact_option;
    gboolean (*run_jobs)(const cs_engine_multi_t *m, double *end_s, cs_link_stats_t **stats_p, GError **err);
    /* Optional: what the engine assumes for a run of several jobs, as
     * notes for the output's header (as 'notes'); NULL on an error it
     * would report when running. */
    char **(*notes_jobs)(const cs_engine_multi_t *m);
} cs_engine_ops_t;

/* A call of one task that waits for a call of another (workloads:
 * collsim step): call 'iter' of the task that holds it is not launched
 * before call 'task_iter' of task 'task' ended. */
typedef struct {
    int iter;
    int task, task_iter;
} cs_engine_dep_t;

/* Several jobs sharing one machine. Each job has its own topology (the
 * shared one restricted to its GPUs, cs_topo_select) and communicator; the
 * maps place its ranks and links in the shared topology.
 *
 * A task's calls run one after another, in order, as on one CUDA stream.
 * Workloads (collsim step) add, per call: a time before which it is not
 * launched, calls of other tasks it waits for, and compute tasks (no
 * communicator: call k keeps the task's GPUs busy busy_s[k] seconds and
 * moves nothing). Jobs leave these NULL/0. */
typedef struct {
    cs_engine_job_t job;
    const char *name;        /* scenario jobs: the [job NAME]'s NAME, for messages; NULL: none (workloads) */
    const char *origin;      /* scenario jobs: where its [job] section starts ("file:line"); NULL: none */
    const int *rank_map;     /* job rank -> shared rank; NULL: the same */
    const int *link_map;     /* job link -> shared link; NULL: the same */
    cs_engine_call_t call;   /* decided (compute task: decision NULL) */
    double start_s;          /* first call's launch */
    int iters;               /* calls back to back */
    const double *ready_s;   /* iters entries or NULL: call k not launched before ready_s[k] (shared clock) */
    const double *busy_s;    /* compute task (job.comm NULL): iters entries, call k's length; no launch gap */
    int ndeps;
    const cs_engine_dep_t *deps;   /* ndeps entries, sorted by iter; each names a task's call */
    /* out, or NULL: 2 * iters entries, call k's launch (span_s[2k]: when
     * it became launchable, so that its launch gap is inside its span as
     * it is inside its time alone) and end; written only when the run
     * succeeds */
    double *span_s;
} cs_engine_task_t;

struct cs_engine_multi {
    const cs_topo_t *topo;   /* the shared machine */
    const cs_params_t *params;
    cs_sim_sink_t *sink;     /* or NULL */
    int ntasks;
    const cs_engine_task_t *tasks;
};

/* One job's outcome in a run of several. */
typedef struct {
    cs_decision_t decision;
    double end_s;            /* end of its last call, shared machine */
    double alone_s;          /* the same job alone on the machine: its time */
} cs_engine_outcome_t;

/* Decides each task's call (task->call.decision is set from 'decisions'),
 * runs them together, then each alone. outcomes: ntasks entries. stats_p
 * (may be NULL): the link statistics of the shared run. Errors: the engine
 * cannot run several jobs. */
gboolean cs_engine_run_jobs(const cs_engine_ops_t *ops, cs_engine_multi_t *m, cs_engine_outcome_t *outcomes,
                            cs_link_stats_t **stats_p, GError **err);

/* A workload's tasks (collsim step), run once together: decides each
 * communication task's call ('decisions': ntasks entries, compute tasks'
 * left zeroed), refuses past the memory limit (ops->estimate_jobs), runs
 * them with their dependencies and fills each task's span_s. Errors: the
 * engine cannot run several tasks (no run_jobs), NCCL refuses a call, a
 * dependency names no call, the tasks wait for each other in a cycle. */
gboolean cs_engine_run_graph(const cs_engine_ops_t *ops, const cs_engine_multi_t *m, cs_decision_t *decisions,
                             GError **err);

const cs_engine_ops_t *cs_engine_find(const char *name);
/* Comma-separated names of the engines built in. */
const char *cs_engine_names(void);
/* What an engine that does not simulate packets (!ops->fabric) leaves out
 * of the settings given: a [fabric] section, and the NCCL variables only
 * the packet engine reads (queue pairs per connection, adaptive routing,
 * IB timeouts and retries); a warning each, appended to 'out' (g_free'd
 * strings), none for the packet engine. */
void cs_engine_ignored_settings(const cs_engine_ops_t *ops, const cs_fabric_cfg_t *cfg, const cs_nccl_env_t *env,
                                GPtrArray *out);
/* The same for --exact (scenario key exact) given to an engine without
 * ops->exact_option: one warning appended to 'out', none otherwise. */
void cs_engine_ignored_exact(const cs_engine_ops_t *ops, gboolean exact, GPtrArray *out);

/* Runs a whole sweep: decides each size, prices it with the engine, fills a
 * result whose producer is "model:<engine>". sizes has nsizes entries.
 * (cs_engine_sweep_new and cs_engine_sweep_next in a loop.) */
cs_result_t *cs_engine_run_sweep(const cs_engine_ops_t *ops, const cs_engine_job_t *job,
                                 const guint64 *sizes, int nsizes, GError **err);

/* The same one size at a time, for callers that print each row as it is
 * priced (collsim run): new, then next until it returns 0, then finish.
 * Data flows one way: the engine fills a row, the caller reads it. */
typedef struct cs_engine_sweep cs_engine_sweep_t;

/* What pricing one size took, for `collsim run -v`. */
typedef struct {
    guint index;             /* the row just filled: r->rows[index] */
    double cpu_s;            /* the calling thread's CPU time spent in it (job->time_steps; else 0) */
    double wall_s;           /* wall-clock time spent in it (job->time_steps; else 0) */
    const char *counters;    /* the engine's counters (ops->counters), or NULL */
} cs_engine_step_t;

/* Opens the engine, decides every size (so that NCCL's refusals come before
 * any row) and starts the result with what is known before pricing: its
 * producer, source and the notes on transports and parameters. */
cs_engine_sweep_t *cs_engine_sweep_new(const cs_engine_ops_t *ops, const cs_engine_job_t *job,
                                       const guint64 *sizes, int nsizes, GError **err);
/* The result as priced so far (rows 0 to the last step). Before the first
 * step the caller may add notes or set its source. */
cs_result_t *cs_engine_sweep_result(cs_engine_sweep_t *sw);
/* Prices the next size and appends its row: 1 (*step_p says which row and
 * what it took; valid until the next call), 0 when every size is priced,
 * -1 on error or when interrupted (cs_engine_interrupted(); err says
 * "interrupted"). */
int cs_engine_sweep_next(cs_engine_sweep_t *sw, const cs_engine_step_t **step_p, GError **err);
/* Adds what only the end knows (notes on approximations, after the notes
 * of the header; the average bus bandwidth), closes the engine, frees sw
 * and returns the result. Call it after next returned 0. */
cs_result_t *cs_engine_sweep_finish(cs_engine_sweep_t *sw);
/* Closes the engine and drops the result (a sweep not finished). */
void cs_engine_sweep_free(cs_engine_sweep_t *sw);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(cs_engine_sweep_t, cs_engine_sweep_free)

/* Memory. An engine's call may use at most the smaller of the memory
 * available (MemAvailable in /proc/meminfo, and the cgroup's memory.max
 * less its memory.current where one is set) and the --max-memory limit
 * (cs_engine_set_max_memory; 0: none). A sweep or a run of jobs whose
 * estimate (ops->estimate) passes it is refused before it starts, with one
 * line naming the estimate, the limit and what to try instead,
 * CS_ERROR_RESOURCE (exit status 3). */
void cs_engine_set_max_memory(guint64 bytes);
/* The limit now, in bytes (G_MAXUINT64: none known); *what_p (may be
 * NULL) says where it comes from ("--max-memory", "the memory available",
 * "the cgroup's memory.max"). */
guint64 cs_engine_memory_limit(const char **what_p);
/* Refuses a call costing 'cost' of engine 'ops' on 'nnodes' nodes past the
 * limit; TRUE when it fits. 'jobs': several jobs at once (the suggestion
 * then leaves out engines that cannot run them together). */
gboolean cs_engine_check_cost(const cs_engine_ops_t *ops, int nnodes, gboolean jobs, const cs_engine_cost_t *cost,
                              GError **err);

/* Child processes. An engine or backend that forks registers each child
 * while it runs (cs_engine_child_add, then cs_engine_child_remove once
 * reaped); cs_engine_kill_children() sends them SIGKILL and is
 * async-signal-safe, for the command's SIGINT/SIGTERM handlers. In the
 * child, cs_engine_child_bind() right after fork makes the kernel kill it
 * when its parent dies (Linux PR_SET_PDEATHSIG; elsewhere nothing), and
 * returns FALSE when the parent is gone already (the child should _exit). */
void cs_engine_child_add(pid_t pid);
void cs_engine_child_remove(pid_t pid);
void cs_engine_kill_children(void);
gboolean cs_engine_child_bind(pid_t parent);

/* Ctrl-C, or a SIGTERM or SIGHUP (a batch scheduler's time limit, a
 * closed terminal). The command's handler calls cs_engine_interrupt(sig)
 * (it only sets a volatile sig_atomic_t, so it is async-signal-safe). The
 * sweep checks the flag between sizes; an engine whose single predict (or
 * run_jobs) can run for more than about a second polls
 * cs_engine_interrupted() in its event loop, every few thousand events,
 * and returns FALSE with any error when it is set: the caller reports the
 * interruption, not that error. The analytic engine needs no polling. */
void cs_engine_interrupt(int sig);   /* also kills the registered children; the first signal is kept */
gboolean cs_engine_interrupted(void);
int cs_engine_interrupt_signal(void);   /* that signal, 0: none */
/* The share of a channel's ceiling a call's CTA keeps with 'nthreads'
 * threads: NCCL gives small calls fewer threads (enqueue.cc: nt halves
 * while nBytes < nc * nt * threshold), and a CTA's throughput is bound by
 * the bytes its threads keep in flight, so it scales with the threads up
 * to the protocol's full block (device.h: NCCL_LL_MAX_NTHREADS 512,
 * NCCL_LL128_MAX_NTHREADS 640, NCCL_SIMPLE_MAX_NTHREADS 512). 0 threads:
 * the full block. */
static inline double cs_engine_threads_share(cs_proto_t pr, int nthreads)
{
    static const int full[CS_PROTO_COUNT] = { 512, 640, 512 };
    return nthreads > 0 ? MIN(1.0, (double)nthreads / full[pr]) : 1.0;
}

/* A ring channel is one group of warps that runs its steps in order
 * (device/all_gather.h, reduce_scatter.h runRing: a step's copy ends
 * before the next step starts), so a pass over the rank's own part that
 * moves nothing over a link holds the channel while its links idle. Three
 * such passes, each the rank's S/n at the channels' full Simple copy rate
 * (chan.simple.<arch>, taken at the call's threads:
 * cs_engine_threads_share) on top of the ring's time; 'pass_s' gets the
 * seconds to add out of place [CS_OOP] and in place [CS_INP] (0 for
 * anything else). Every engine adds them the same way.
 *
 * - ReduceScatter, both placements, on a ring whose every edge the CTAs
 *   drive ('net' FALSE: P2P and SHM, one node or one NVLink domain): the
 *   last step of every chunk, recvReduceCopy, reduces what the previous
 *   rank sent (its FIFO: reduce-scatter has no direct mode) with the
 *   rank's own input into its output and sends nothing. With n ranks a
 *   chunk's n-1 link steps are followed by this one, which weighs most on
 *   few ranks. Measured against Reduce (one way, the same links, no such
 *   step on any rank; 16 GiB busbw): B200 -g 2/4/8 541/665/694 against
 *   711/701/701, 2 and 4 RTX PRO 6000 over PCIe 24.9/33.9 against
 *   44.2/42.6, in place as out of place. The reduction reads two inputs,
 *   but the Simple copy rate prices it: the data holds no separate rate
 *   for it. A network edge is the NIC's: the proxy posts what the CTA put
 *   in the FIFO and the NIC sends it while the CTA reduces, so a ring
 *   across nodes does not idle its bottleneck there (2 x B200 over RoCE,
 *   one GPU each: all-gather in place at 45.1 GB/s busbw, the NIC's rate,
 *   with the same local last step, recv, on both ranks).
 * - Out-of-place AllGather: the first step of every channel copies the
 *   rank's own chunk into its output as it sends it (directCopySend, one
 *   read and two writes, where in place it is directSend), so a rank's own
 *   S/n passes its CTAs once more than in place. Measured, that copy adds
 *   its time at the channels' copy rate to the call rather than hiding
 *   behind the links, on every interconnect in the data: out of place /
 *   in place busbw B200 -g 2/4/8 481/628/672 against 584/667/684 (16
 *   GiB), 2 x B200 over RoCE (GKE, 4 channels) 36.7 against 45.1, A100 -g
 *   8 223 against 230, 2 x RTX 2080 Ti over SHM and 2-4 RTX PRO 6000 over
 *   PCIe alike. Where it does not show: H200 -g 8 (NCCL unstated) 369
 *   both ways, and Broadcast, whose root runs the same directCopySend on
 *   every step at the links' rate; so the two writes alone are not the
 *   whole mechanism, and this is the measured cost, not a simulation of
 *   it. The copy into the output is a plain copy whatever the protocol.
 * - AllReduce, both placements, where 'recv_copies'
 *   (cs_engine_ring_recv_copies below): the last step's copy out of the
 *   FIFO. */
static inline void cs_engine_ring_pass_s(cs_coll_t coll, const cs_decision_t *d, int nranks, gboolean net,
                                         gboolean recv_copies, double S, double ch_bw, double pass_s[2])
{
    pass_s[CS_OOP] = pass_s[CS_INP] = 0;
    if (d->algo != CS_ALGO_RING || nranks < 2 || !(ch_bw > 0))
        return;
    double t = S / nranks / (MAX(1, d->nchannels) * ch_bw * cs_engine_threads_share(d->proto, d->nthreads));
    if (coll == CS_COLL_REDUCESCATTER && !net)
        pass_s[CS_OOP] = pass_s[CS_INP] = t;
    else if (coll == CS_COLL_ALLGATHER)
        pass_s[CS_OOP] = t;
    else if (coll == CS_COLL_ALLREDUCE && recv_copies)
        pass_s[CS_OOP] = pass_s[CS_INP] = t;
}

/* A point-to-point part moves with Simple a step (the op's chunk,
 * p2pChunkSize: NCCL_P2P_NVL_CHUNKSIZE 512 KiB over NVLink,
 * NCCL_P2P_PCI_CHUNKSIZE 128 KiB otherwise) at a time, and its warp group
 * waits out each step's end before it copies the next: prims_simple.h
 * genericOp ends a slice with barrier() and postPeer, whose poster thread
 * fences (fence_acq_rel_sys) and stores the step, and the next slice's
 * subBarrier holds every thread until it has; sendrecv.h runs its parts
 * with ProtoSimple<1,1>, one step a slice. A collective's ring pays the
 * same once per slice of several steps (1 MiB for an all-reduce), which
 * the links hide. The seconds this adds to the busiest channel's CTA,
 * 'sync_s' (the protocol's per-step synchronisation, lat.sync.simple) a
 * step of each part, its works of a batch side by side: what bounds two
 * RTX PRO 6000 over PCIe to 18.2 GB/s a channel each way (sendrecv, 1 and
 * 2 channels: 128 KiB steps) where the same CTA's collectives reach the
 * link. 'op': the parts' plan (the network one where a peer is on
 * another node: its steps are the network chunk, as the flow engine's
 * units). The first step's is also in the batch's latency (tau), under a
 * microsecond a batch, in both engines alike. lat.sync.simple.nvlink is
 * not taken per step: it was fitted as a ring's per-call latency, and at
 * 4 us a 512 KiB step it would put the B200 send/receive tables 15 %
 * slow. 0 for LL (its flags ride in the lines). */
static inline double cs_engine_p2p_step_sync_s(const cs_p2p_plan_t *plan, const cs_p2p_op_t *op,
                                               double bytes_per_peer, cs_proto_t proto, double sync_s)
{
    if (proto != CS_PROTO_SIMPLE || op->chunk == 0 || !(bytes_per_peer > 0))
        return 0;
    double steps = ceil(bytes_per_peer / MAX(1, op->nch) / (double)op->chunk);
    return MAX(1, plan->max_batches) * steps * sync_s;
}

/* The same for an engine that streams a part at a rate: a CTA that moves
 * 'cap' bytes/s and waits 'sync_s' after every step of 'step' bytes moves
 * step / (step / cap + sync_s). */
static inline double cs_engine_p2p_step_cap(double cap, double step, double sync_s)
{
    if (!(cap > 0) || !(step > 0) || !(sync_s > 0))
        return cap;
    return step / (step / cap + sync_s);
}

/* Whether a ring of the communicator has a network edge (NET over IB
 * verbs or sockets, between nodes or, where P2P and SHM are off, inside
 * one): cs_engine_ring_pass_s's 'net'. */
static inline gboolean cs_engine_ring_net(const cs_comm_info_t *info)
{
    gboolean inter = info->inter_transport == CS_XPORT_NET_IB || info->inter_transport == CS_XPORT_NET_SOCKET;
    gboolean intra = info->intra_transport == CS_XPORT_NET_IB || info->intra_transport == CS_XPORT_NET_SOCKET;
    return intra || (info->nnodes > 1 && inter);
}

/* The third pass ('recv_copies' of cs_engine_ring_pass_s): AllReduce on a
 * ring of peer-to-peer edges ends every chunk with directRecv
 * (device/all_reduce.h runRing), which copies the reduced chunk the
 * previous rank sent from the FIFO into the output and sends nothing: one
 * pass of the rank's S/n after the 2(n-1) link steps, as reduce-scatter's
 * last step. Not where the sender writes into the output itself: NCCL up
 * to 2.22 does (DirectWrite, prims_simple.h loadRecvConn) between GPUs of
 * one process (P2P/direct pointer: nccl-tests -g or -t, cs_comm_p2p_direct),
 * from 2.23 only into registered buffers (loadRecvConn: Direct && regFlag;
 * nccl-tests registers none by default). Over SHM the copy out of host memory is the
 * edge's own receive side (eff.shm), priced with the link. Measured
 * (busbw, >= 1 GiB): 2 and 4 RTX PRO 6000 over PCIe, NCCL 2.29.3 -g 2 and
 * -g 4, all-reduce 34.2/39.3 against broadcast 44.6/43.1: the pass weighs
 * 1/2 of the link time on two ranks, 1/6 on four; B200 -g 2 (2.29.3) 638
 * against 711. The Azure A100 -g 8 (<= 2.12) and the 2.19.3 A100 -g 8
 * tables run without it. A run whose version is not known is priced as
 * v2.28.9, with it. A ring with a network edge has none (as reduce-
 * scatter's: the NIC sends while the CTA copies). */
static inline gboolean cs_engine_ring_recv_copies(const cs_comm_info_t *info)
{
    if ((info->intra_transport != CS_XPORT_P2P_NVL && info->intra_transport != CS_XPORT_P2P_PCI) ||
        cs_engine_ring_net(info))
        return FALSE;
    return !cs_comm_p2p_direct(info);
}

/* The share of its NVSwitch port rate a GPU keeps in a call: all-to-all
 * with more than two GPUs a node sends to several peers at once
 * (eff.nvswitch.fanout); one peer at a time (rings, chains, SendRecv)
 * keeps it all. The analytic and flow engines both take it from here. */
static inline double cs_engine_nvswitch_share(const cs_params_t *p, cs_coll_t coll, int ppn)
{
    return coll == CS_COLL_ALLTOALL && ppn > 2 ? cs_params_get(p, CS_P_EFF_NVSWITCH_FANOUT) : 1.0;
}

/* NVLS all-reduce: the share of its NVLS rate (eff.nvls.<arch> of the
 * NVLink bandwidth, fitted on 8-GPU nodes with a head each) a GPU keeps
 * with 'heads' NVLS heads among 'nranks' ranks. Both engines move the
 * heads' S(1 + 1/heads) each way (the switch's reduction, then the
 * multicast), which alone would have the per-GPU rate rise with the
 * heads; measured, it does not (OCI GB300 NVL72 in one run set: 8 GPUs
 * with 8 heads 838-842 GB/s busbw, algbw 480; 64 GPUs with 32 heads
 * 897-930, algbw 472, where S(1 + 1/heads) gives +9 %). NCCL's own model
 * has that shape (tuning.cc: nHeads channels at (nHeads - 1)/nHeads of
 * their rate, busbw twice that, algbw = busbw n / (2 (n - 1)): an algbw of
 * (m - 1)/m x n/(n - 1) of the rate, about constant in n with a head per
 * GPU); this share gives it over the heads' traffic, 1 on 8 GPUs of 8
 * heads where the efficiencies were fitted. 'domain' is the GPUs of the
 * NVLink domain the NVLS stage runs in (a node, or an NVL72 rack's): NVLSTree
 * runs one per node, as the single-node NVLS the efficiencies come from
 * (NCCL's n/(n - 1) there counts every node's ranks, which the measured
 * 2-node H100 NVLSTree run does not follow: 469 GB/s busbw at 16 GiB,
 * one node's NVLS 474-482, where that n would take 7 % off). The analytic and flow
 * engines both take it from here. */
static inline double cs_engine_nvls_ar_share(int heads, int domain)
{
    double m = MAX(2, heads), n = MAX(2, domain);
    const double fitted = (1.0 - 1.0 / 64) * 8 / 7;   /* 8 heads of 8 GPUs */
    return (1.0 - 1.0 / (m * m)) * n / (n - 1) / fitted;
}

/* NVLS all-reduce: the least time (seconds) one channel's step of
 * 'step_bytes' takes from its copies (NCCL 2.29 device/all_reduce.h, NVLS
 * roles, 640 threads: 20 warps). A step lays its bytes head after head in
 * parts of 'chunk'; a channel's last, partial step in parts of its rest
 * over the heads rounded up to 16 KiB (lastChunkSize = alignUp(divUp(rem,
 * nHeads), 16384 / sizeof(T))). The scatter warps copy each head's part
 * in turn, the gather warps each head's result (prims_simple.h
 * ScatterGatherOp: one reduceCopy a peer, over the workers, none for a
 * peer whose part is empty: realPeerSize > 0; the scatter gives one warp
 * to posting, as every sender of 3 warps or more), and a copy hands a
 * warp 4 KiB at a time (Unroll 8 x 32 lanes x 16 B), so a part of b bytes
 * takes ceil(b / (workers x 4 KiB)) rounds, each lat.nvls.round.<arch>.
 * Warps: NVLS 5 reduce warps with more than 6 ranks (7 up to 6), the
 * scatter the half of the rest rounded up, the gather the other;
 * NVLSTree ('nvls_tree': its network side, nvls->out) 3 reduce and 2
 * broadcast warps. 0 before Hopper. The analytic and flow engines both
 * take it from here. */
static inline double cs_engine_nvls_step_floor(const cs_params_t *p, int arch, int nranks, gboolean nvls_tree,
                                               int heads, double chunk, double step_bytes)
{
    if (arch < 2 || heads < 1 || !(chunk > 0) || !(step_bytes > 0))
        return 0;
    const int warps = 20;   /* NCCL_MAX_NTHREADS / WARP_SIZE */
    int reduce = nvls_tree ? 3 : nranks <= 6 ? 7 : 5, bcast = nvls_tree ? 2 : 0;
    int scatter = (warps - reduce - bcast + 1) / 2 - 1, gather = (warps - reduce - bcast) / 2;
    double w = MAX(1, MIN(scatter, gather)) * 4096.0;
    double part = chunk, parts = heads;
    if (step_bytes < heads * chunk) {
        part = ceil(ceil(step_bytes / heads) / 16384.0) * 16384.0;
        parts = ceil(step_bytes / part);
    }
    double last = step_bytes - (parts - 1) * part;
    double rounds = (parts - 1) * ceil(part / w) + ceil(MIN(part, last) / w);
    cs_param_id_t id = arch >= 3 ? CS_P_LAT_NVLS_ROUND_SM100 : CS_P_LAT_NVLS_ROUND_SM90;
    return rounds * cs_params_get(p, id) * 1e-6;
}

/* The copy rounds of a channel's 'D' bytes (seconds): its full steps of
 * heads x chunk, then its rest as one partial step
 * (cs_engine_nvls_step_floor). NCCL gives every channel a contiguous
 * share of the call (device/common.h ncclCollCbdPart), so a call smaller
 * than a step is one part a channel, one round, not a round per head. */
static inline double cs_engine_nvls_channel_floor(const cs_params_t *p, int arch, int nranks, gboolean nvls_tree,
                                                  int heads, double chunk, double D)
{
    if (!(chunk > 0) || !(D > 0) || heads < 1)
        return 0;
    double step = heads * chunk;
    double full = floor(D / step), rest = D - full * step;
    double t = full > 0 ? full * cs_engine_nvls_step_floor(p, arch, nranks, nvls_tree, heads, chunk, step) : 0;
    if (rest > 0)
        t += cs_engine_nvls_step_floor(p, arch, nranks, nvls_tree, heads, chunk, rest);
    return t;
}

/* CPU seconds the calling thread has used (CLOCK_THREAD_CPUTIME_ID), 0 if
 * unknown: the engines price a call in the thread that asks, so this is
 * the call's CPU without the progress thread's; and it is the cheap clock
 * (the process clock sums every thread in the kernel, which cost
 * calibrate's fit, thousands of analytic sweeps, a quarter of its time). */
double cs_engine_cpu_seconds(void);

#endif
