/* Private to the flow engine and its tests and benchmark. Model:
 * docs/model-flow.md. */
#ifndef CS_ENGINE_FLOW_INT_H
#define CS_ENGINE_FLOW_INT_H

#include "sim/cs_engine.h"
#include "sim/cs_evq.h"
#include "models/cs_paths.h"

/* The engine's ops table, registered in cs_engine.c. */
extern const cs_engine_ops_t cs_engine_flow;

typedef struct {
    double time_s;           /* the call's time, launch included */
    guint64 events;          /* events processed */
    guint64 recomputes;      /* max-min fair share computations */
    guint64 touched;         /* lanes whose share they computed, summed */
    guint64 changed;         /* ... of which the rate changed */
    int lanes;               /* (channel, position) pairs simulated */
    gboolean folded;         /* simulated one period of each ring */
    int period;              /* ring positions simulated per channel (rings); flow classes (dataflow) */
    gboolean approx;         /* ... with latencies averaged over the periods */
    double spread_s;         /* the widest range of latencies averaged, seconds */
    double spread_rel;       /* ... relative to their mean */
    gboolean dataflow;       /* Tree/NVLS/NVLSTree program */
    int flows;               /* ... folded: its flows (merged channels' left out) */
} cs_flow_stats_t;

/* ---- the network as the simulating engines see it (cs_flow_net.c) ----
 * Resources: the topology's directed links (index = link), then per GPU
 * rank r: its NVLink out-port (nlinks + 3r), in-port (+1) and memory (+2),
 * then per device d the host memory of a CPU socket (nlinks + 3 ngpus + d;
 * cs_shm.h; unlimited for other devices).
 * A ring edge is the list of resources one slice crosses, each with its
 * coefficient (resource bytes per payload byte: 1 / (link efficiency x
 * protocol wire efficiency)), and the latency paid after the data is sent.
 * Shared by the flow engine and the SimGrid engine. */
#define CS_FLOW_HMAX (2 * CS_PATH_MAX_HOPS + 4)   /* hops of one edge, memory included */

typedef struct {
    int res;
    double coeff;            /* resource bytes per payload byte */
} cs_flow_hop_t;

typedef struct {
    int n;                   /* hops, memory not included */
    cs_flow_hop_t h[CS_FLOW_HMAX];
    double lat;              /* seconds, paid after the data is sent */
    double cap;              /* bytes/s: the edge's own ceiling on its
                              * channel (SHM: cs_shm_chan_bw), 0 none */
} cs_flow_edge_t;

typedef struct {
    const cs_topo_t *topo;
    const cs_comm_t *comm;
    const cs_comm_info_t *info;
    const cs_params_t *par;
    cs_coll_t coll;
    int root;                /* first position of chains */
    cs_path_cache_t *cache;
    int arch;                /* 0 sm70, 1 sm80, 2 sm90, 3 sm100 */
    int nres;
    double *res_cap;         /* bytes/s per resource */
    int *nic_dev;            /* node * nics_max + k -> NIC device, -1 */
    int nics_max;
    GHashTable *sharp;       /* CollNet: SHARP aggregation tree per NIC rail k (cs_flow_net.c), built on demand */
} cs_flow_net_t;

gboolean cs_flow_net_init(cs_flow_net_t *n, const cs_engine_job_t *job, GError **err);
/* How many resources a topology has, the index of device 'dev''s host
 * memory and of rank 'rank''s NET/Socket proxy (dir 0 sends, 1
 * receives: bw.socket.proxy each, as the analytic engine's node bound),
 * in the layout above. */
static inline int cs_flow_nres(const cs_topo_t *t) { return t->nlinks + 5 * t->ngpus + t->ndevs; }
static inline int cs_flow_res_host_mem(const cs_topo_t *t, int dev) { return t->nlinks + 3 * t->ngpus + dev; }
static inline int cs_flow_res_socket_proxy(const cs_topo_t *t, int rank, int dir)
{
    return t->nlinks + 3 * t->ngpus + t->ndevs + 2 * rank + dir;
}
/* The resources of a topology and their capacities (bytes/s), as above;
 * and a resource's name for link statistics and traces (g_free it). */
double *cs_flow_res_caps(const cs_topo_t *t, const cs_params_t *par, int *nres_p);
char *cs_flow_res_name(const cs_topo_t *t, int res);
void cs_flow_net_clear(cs_flow_net_t *n);
static inline int cs_flow_res_nvl_out(const cs_flow_net_t *n, int rank) { return n->topo->nlinks + 3 * rank; }
static inline int cs_flow_res_nvl_in(const cs_flow_net_t *n, int rank) { return n->topo->nlinks + 3 * rank + 1; }
static inline int cs_flow_res_mem(const cs_flow_net_t *n, int rank) { return n->topo->nlinks + 3 * rank + 2; }
/* Protocol wire efficiency, one channel's payload ceiling (bytes/s), and
 * the launch cost of a call (seconds), from cs_params as the analytic
 * engine reads them. */
double cs_flow_proto_eff(const cs_flow_net_t *n, cs_proto_t pr);
double cs_flow_channel_bw(const cs_flow_net_t *n, cs_proto_t pr, int nthreads);
double cs_flow_launch(const cs_flow_net_t *n);
/* The host's side of a call on 'nchannels' channels (seconds): the thread
 * that drives the most GPUs issues their parts one after the other (the
 * communicator's process layout, cs_comm_set_layout); calls timed back to
 * back take at least this each (cs_params_launch_host_s). */
double cs_flow_launch_host(const cs_flow_net_t *n, int nchannels);
/* Channels 0..nch-1 of 'algo' (Tree; else Ring) as NCCL's search built
 * them (cs_comm_chan_order; nch x nranks, g_free it): cs_program_new's
 * orders. */
int *cs_flow_chan_orders(const cs_flow_net_t *n, cs_algo_t algo, int nch);
/* The orders of a call's program (cs_program_new): every channel of the
 * decision its own ring, or its tree chain for Tree all-reduce, on one
 * node as on several (g_free it). */
int *cs_flow_prog_orders(const cs_flow_net_t *n, const cs_decision_t *d);
/* The edge from rank a to rank b of channel ch with protocol pr; across
 * nodes each side leaves or enters through the NIC NCCL's ring search gave
 * it on that channel (cs_comm_chan_nic; the node's NIC ch % nics_used
 * where it names none), ECMP hash ch. Errors: no path. */
gboolean cs_flow_build_edge(const cs_flow_net_t *n, int ch, int a, int b, cs_proto_t pr,
                            cs_flow_edge_t *e_p, GError **err);

/* An NVLS flow's resources (the GPU's NVLink ports) for its reduction or
 * its multicast of one slice, and the latency NCCL's NVLS round adds once
 * per call (lat.nvls, as the analytic engine). */
void cs_flow_build_nvls(const cs_flow_net_t *n, int rank, gboolean reduce, int ppn, cs_proto_t pr,
                        cs_flow_edge_t *e_p);
double cs_flow_nvls_lat(const cs_flow_net_t *n);
/* CollNet (SHARP): the network round NCCL's tuning table charges a call
 * of 'algo' once (lat.collnet.direct / .chain, seconds), beyond the wire
 * and switch hops its flows' edges carry. */
double cs_flow_collnet_lat(const cs_flow_net_t *n, cs_algo_t algo);
/* The edge of flow 'fl' of channel ch of a dataflow program (cs_program.h):
 * a P2P flow (Tree) over the tree graph's NICs (cs_comm_chan_nic), or where fl->net_local names a GPU
 * (NVLSTree) through the NIC of the NVLS channels its sender heads
 * (cs_comm_chan_nic, search.cc getNvlsNetDev), where it is
 * CS_PROG_NET_P2P (SendRecv, AlltoAll) through each GPU's own NIC for the
 * p2p channel (a send to itself: no hop, a copy in its memory); an NVLS
 * flow over cs_flow_build_nvls. Errors: no path. */
struct cs_prog_flow;
gboolean cs_flow_build_flow_edge(const cs_flow_net_t *n, const struct cs_prog_flow *fl, int ch, cs_proto_t pr,
                                 cs_flow_edge_t *e_p, GError **err);

/* The payload ceiling of flow 'fi' (channel ch) of program 'prog' over
 * its edge 'e' (built by cs_flow_build_flow_edge): the channel's ceiling
 * 'chan_cap' over its cap_div, for a point-to-point flow that crosses the
 * network at most NCCL_P2P_PER_CHANNEL_NET_BW (info->p2p_net_ch_bw), and
 * for an NVLS all-reduce flow its first unit (one head's chunk) over its
 * step's copy rounds (cs_engine_nvls_step_floor, as the analytic engine). */
struct cs_program;
double cs_flow_flow_cap(const cs_flow_net_t *n, const struct cs_program *prog, int ch, int fi,
                        const cs_flow_edge_t *e, double chan_cap);

/* A flow's ceiling 'cap' (cs_flow_flow_cap) under its edge's SHM ceiling
 * (e->cap: cs_shm_chan_bw per channel): a collective lane takes it whole,
 * the receiving point-to-point works of a channel's batch share it. */
double cs_flow_shm_cap(gboolean p2p, const struct cs_prog_flow *fl, const cs_flow_edge_t *e, double cap);

/* Seconds after its last step arrives that a p2p Simple flow's receiver
 * still copies it out: a step is received only once wholly sent
 * (prims_simple.h waitPeer / postPeer), at the CTA's rate 'chan_cap'
 * (bytes/s), as the analytic engine's fill (t_p2p); 0 for LL, for a send
 * to the rank itself (one copy, sendrecv.h isCopy), for a direct one (the
 * sender writes into the receiver's buffer: cs_prog_flow_t.direct) and
 * for collectives. */
double cs_flow_p2p_drain(gboolean p2p, cs_proto_t pr, const struct cs_prog_flow *fl, double chan_cap);

/* The shape of one call's program before any folding (what the engines'
 * memory follows): lanes (ring: channels x positions; dataflow: flows),
 * dependencies between flows, and the units each lane moves at most. */
typedef struct {
    gint64 lanes, deps;
    gint64 units;            /* largest lane's units (ring: ops) */
    gboolean dataflow;
} cs_flow_shape_t;
gboolean cs_flow_program_shape(const cs_flow_net_t *n, const cs_engine_call_t *call, cs_flow_shape_t *shape_p,
                               GError **err);

typedef struct cs_flow cs_flow_t;

/* A flow engine for one job (cs_flow_simulate), or for a shared machine
 * that several jobs run on (cs_flow_run). */
cs_flow_t *cs_flow_new(const cs_engine_job_t *job, GError **err);
cs_flow_t *cs_flow_new_shared(const cs_topo_t *topo, const cs_params_t *params);
void cs_flow_free(cs_flow_t *f);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(cs_flow_t, cs_flow_free)
/* How much of a ring one call simulates (docs/model-flow.md, "Exact
 * reductions" and "Approximate folding"): every position (NONE); one
 * period where the ring repeats exactly (EXACT); that, or where it still
 * leaves more than CS_FLOW_EXACT_WORK transfers, one period of a ring that
 * repeats but for its edges' latencies, which are averaged over the
 * periods (AUTO, what --model flow does); the smaller of the two
 * (APPROX, for tests and benchmarks). Dataflow programs fold exactly
 * (classes of alike flows) in every mode but NONE. */
typedef enum {
    CS_FLOW_FOLD_NONE,
    CS_FLOW_FOLD_EXACT,
    CS_FLOW_FOLD_AUTO,
    CS_FLOW_FOLD_APPROX,
} cs_flow_fold_t;
#define CS_FLOW_EXACT_WORK 67108864.0   /* transfers (lanes x ops): about half a minute */

/* Simulates one call, folding rings as 'fold' allows (tests compare
 * CS_FLOW_FOLD_NONE with the others). */
gboolean cs_flow_simulate(cs_flow_t *f, const cs_engine_call_t *call, cs_flow_fold_t fold,
                          cs_flow_stats_t *stats_p, GError **err);
/* The last run's link statistics (cs_engine.h). */
cs_link_stats_t *cs_flow_link_stats(const cs_flow_t *f);
/* A call's times (out of place, in place) from its simulated 'sim_s':
 * no less than the host's floor (cs_flow_call_host), and a ring's passes
 * over the rank's own part (cs_engine_ring_pass_s: reduce-scatter's last
 * step, all-gather's copy out of place). The flow and packet engines'
 * predict. */
void cs_flow_call_times(const cs_flow_t *f, const cs_engine_call_t *call, double sim_s, double time_s[2]);
/* The host's floor of one call of the creating job (seconds,
 * cs_flow_launch_host on the call's channels): calls timed back to back
 * take at least this; the flow and packet engines' predict apply it. */
double cs_flow_call_host(const cs_flow_t *f, const cs_engine_call_t *call);
/* Where the timeline of every run goes (NULL: nowhere). With a sink,
 * channels are not merged and rings not folded, so every rank and
 * channel has its own track. */
void cs_flow_set_sink(cs_flow_t *f, cs_sim_sink_t *sink);
/* Max-min shares: recomputed over what each start or end can change
 * (incremental, the default) or over whole connected components (FALSE,
 * for tests that compare the two). */
void cs_flow_set_full_maxmin(cs_flow_t *f, gboolean full);
/* The max-min solver alone (tests): 'nlanes' transfers over 'nres'
 * resources of capacities caps; lane i has a ceiling lane_cap[i], a weight
 * mult[i] and hops [hop_off[i], hop_off[i+1]) on hop_res with coefficient
 * hop_coeff. 'seq' toggles lanes on and off (index >= 0) and asks for the
 * shares (-1): each -1 fills one row of 'rates' (nlanes entries; 0 for a
 * lane that is off), incrementally or ('full') over whole components.
 * touched_p (may be NULL): lanes whose shares were computed, summed. */
gboolean cs_flow_maxmin_replay(int nres, const double *caps, int nlanes, const double *lane_cap, const double *mult,
                               const int *hop_off, const int *hop_res, const double *hop_coeff, int nseq,
                               const int *seq, gboolean full, double *rates, guint64 *touched_p);
/* A transport for the network part of edges (the packet engine,
 * docs/model-packet.md). With one set, an edge that crosses the network
 * (links of kind NET) keeps the fair sharing of its node-side resources
 * (GPU memory, NVLink, PCIe, the channel's ceiling), which sets its lane's
 * rate; the network links are the transport's: each unit the lane sends
 * is a message (its payload over the protocol's efficiency, bytes) paced
 * at that rate (bytes/s, updated as shares change); the lane's op ends
 * when the transport reports the message left the sending NIC
 * (cs_flow_xport_sent), and its unit arrives the edge's node-side latency
 * after the transport reports it delivered (cs_flow_xport_delivered).
 * Channels are not merged and rings not folded: every lane its own
 * messages. Times are the flow engine's (integer picoseconds from the
 * run's start). */
typedef struct {
    /* Lane 'lane' of job 'job', channel ch, crosses the network from NIC
     * device src_nic to dst_nic (the shared topology); once per lane
     * before the run. */
    gboolean (*lane)(void *ctx, int lane, int job, int ch, int src_nic, int dst_nic, GError **err);
    void (*send)(void *ctx, int lane, double bytes, cs_time_t now);
    void (*rate)(void *ctx, int lane, double bytes_per_s, cs_time_t now);
    /* time of its next event, CS_TIME_NEVER: none */
    cs_time_t (*next)(void *ctx);
    /* runs its events at time t (none is earlier); FALSE with err when
     * the run cannot go on (a QP ran out of retries) */
    gboolean (*run)(void *ctx, cs_time_t t, GError **err);
    /* The transport models the receivers' side from the NIC inward (a
     * receive path draining at its links' rate): those links leave the
     * lanes' fair shares, so a slow receiver holds its senders back
     * through the transport, not by a share they know. */
    gboolean rx_path;
    /* CollNet's lanes (a head's slice up the SHARP tree, the result down
     * it; NULL: lane() as any other): once per such lane instead of
     * lane(). 'group': the lane of the ROOT flow it feeds or is fed by
     * (one reduction stream: a channel and head); 'nic' the node's NIC;
     * 'links' its route up the tree, topology links from the NIC to the
     * root switch (a DOWN lane's too, in that order). */
    gboolean (*coll_lane)(void *ctx, int lane, int job, int ch, int group, gboolean up, int nic, const int *links,
                          int nlinks, GError **err);
} cs_flow_xport_t;

void cs_flow_set_xport(cs_flow_t *f, const cs_flow_xport_t *x, void *ctx);
/* The transport's reports, from inside its run(), at that time. */
void cs_flow_xport_sent(cs_flow_t *f, int lane);
void cs_flow_xport_delivered(cs_flow_t *f, int lane);

/* What a run of tasks refuses before it starts, CS_ERROR_INPUT: a task
 * with both or neither of a communicator and busy times, busy or ready
 * times that are not finite and >= 0, a dependency that names a call
 * that does not exist (its own call, the task or the task's call out of
 * range). A cycle of dependencies is found by running (cs_flow_run). */
gboolean cs_flow_check_tasks(const cs_engine_task_t *tasks, int ntasks, GError **err);

/* Runs several tasks on a shared engine (cs_flow_new_shared): each task's
 * calls one after another from its start, a call launched once the
 * previous one ended, the calls it depends on ended, its ready time came
 * and the host issued it; its kernel starts a launch gap later (a compute
 * task's call instead lasts its busy time and moves nothing). end_s
 * (ntasks entries): when each task's last call ended; each task's span_s
 * (where given): every call's launchable time and end, written only when
 * the run succeeds. Errors: cs_flow_check_tasks's; a cycle of
 * dependencies (CS_ERROR_INPUT, naming it). Folding is off; channel
 * merging stays (exact). */
gboolean cs_flow_run(cs_flow_t *f, const cs_engine_task_t *tasks, int ntasks, double *end_s,
                     cs_flow_stats_t *stats_p, GError **err);

#endif
