/* Private to the analytic engine and its tests: the hardware summary the
 * engine derives once per job from the topology and NCCL's communicator
 * choices, and the closed-form time of one call. Formulas:
 * docs/model-analytic.md. */
#ifndef CS_ENGINE_ANALYTIC_INT_H
#define CS_ENGINE_ANALYTIC_INT_H

#include "sim/cs_engine.h"
#include "sim/cs_fabric_load.h"
#include "models/cs_shm.h"

/* The engine's ops table, registered in cs_engine.c. */
extern const cs_engine_ops_t cs_engine_analytic;

/* Channels the summary prices rings for (device.h MAXCHANNELS). */
#define CS_ANALYTIC_MAXCH 64

/* Everything the per-call formulas need, in SI units (bytes/s, seconds).
 * Bandwidths are payload rates with link efficiencies applied but before
 * the protocol's wire efficiency. */
typedef struct {
    int nranks, nnodes, ppn;
    int arch;                 /* 0 sm70, 1 sm80, 2 sm90, 3 sm100 */
    gboolean mnnvl;           /* nodes joined by NVLink: one NVLink domain */
    int gpus_per_thread;      /* GPUs one host thread launches (the layout's nccl-tests -g); 0 = 1 */
    int p2p_extra_calls[2];   /* NCCL calls beyond one per GPU: [0] SendRecv, [1] AlltoAll (cs_comm_p2p_extra_calls) */
    int nccl_version;         /* the newest NCCL the measured run can have used (cs_comm_nccl_version_at_most); 0 = the modelled v2.28.9 */
    gboolean tree_seq;        /* its Simple tree runs up, then down (cs_tree_phases_in_sequence: the
                               * version itself, not a bound, as the flow engine's program) */

    cs_transport_t intra_xport;
    gboolean ring_net;        /* a ring has a network edge (cs_engine_ring_net) */
    gboolean ring_recv_copies;/* an all-reduce ring's last step copies out of the FIFO (cs_engine_ring_recv_copies) */
    double intra_bw;          /* busiest intra-node ring edge, all channels; 0 = none */
    double chain_bw;          /* the same for the chain from the root (Broadcast, Reduce) */
    int ring_nch;             /* channels whose rings were priced: the communicator's (1 without one) */
    double intra_bw_ch[CS_ANALYTIC_MAXCH]; /* [k-1]: intra_bw of a call on channels 0..k-1 */
    double chain_bw_ch[CS_ANALYTIC_MAXCH]; /* [k-1]: chain_bw of the same */
    double intra_bw_ch_ll[CS_ANALYTIC_MAXCH]; /* the same two for LL/LL128: without SHM's */
    double chain_bw_ch_ll[CS_ANALYTIC_MAXCH]; /* proxy copy (Simple's only); else equal */
    double intra_lat;         /* topology latency of the slowest intra edge */

    cs_transport_t inter_xport;
    double nic_bw;            /* one used NIC: port x efficiency, GPU-NIC path bound */
    double nic_port_bw;      /* the NICs' port payload rate, before the GPU-NIC path bounds it */
    int nics;                 /* NICs per node the channels spread over */
    double net_lat_near;      /* wire + switches between neighbouring nodes */
    double net_lat_far;       /* ... between the first and the last node */

    double nvls_bw;           /* per GPU, NVLS; 0 = no NVLink */
    int nvls_heads;           /* NVLS heads per node (cs_program_nvls_heads; the domain's GPUs when mnnvl) */
    double nvls_nic_share;    /* NVLSTree: the busiest head NIC's part of its node's network bytes */
    double mem_bw;            /* slowest GPU memory x eff.mem */

    /* CollNet (SHARP): CollNetDirect's heads per node; the NICs node 0's
     * CollNetChain channels meet SHARP through (distinct) */
    int collnet_heads;
    int collnet_chain_nics;
    double collnet_nvl_bw;    /* a GPU's NVLink port rate each way (slowest GPU) x eff.nvlink; 0 = none */
    double collnet_chain_nvl; /* CollNetChain: the busiest GPU's NVLink sends per byte of S, its
                               * chain positions over the channels (2 in the middle, 1 at an end) */

    int tree_degsum;          /* max over nodes of its degree in tree 0 + tree 1 */
    int tree_depth;           /* hops from a tree's root to its deepest leaf */

    /* Point-to-point (SendRecv, AlltoAll): cs_analytic_p2p_init */
    gboolean p2p;
    double p2p_edge_bw;       /* slowest intra-node peer edge with every edge of the pattern busy; 0 = none */
    double p2p_edge_lat;      /* topology latency of the slowest such edge */
    cs_transport_t p2p_xport; /* costliest intra-node peer transport */
    double p2p_nic_bw;        /* a GPU's network rate for its peers on other nodes; 0 = none */
    gboolean p2p_shm;         /* some intra-node peer edge goes through SHM */
    gboolean p2p_shm_ce_recv; /* ... and every such edge's receive is the proxy's copy (Simple) */
    const cs_comm_info_t *p2p_info; /* the communicator's p2p setup (borrowed) */

    cs_shm_mode_t shm_mode;   /* SHM edges' copy for Simple (cs_shm.h); zeroed: direct */
} cs_analytic_hw_t;

/* Derives the summary. 'comm' may be NULL (tests): per-pair transports then
 * come from info->intra / info->inter. 'root' is the rank chains start from. */
gboolean cs_analytic_hw_init(cs_analytic_hw_t *hw, const cs_topo_t *t, const cs_comm_info_t *info,
                             const cs_comm_t *comm, const cs_params_t *p, int root, GError **err);

/* The point-to-point summary of 'coll' (SendRecv: rank -> rank+1;
 * AlltoAll: every pair), after cs_analytic_hw_init. */
gboolean cs_analytic_p2p_init(cs_analytic_hw_t *hw, const cs_topo_t *t, const cs_comm_info_t *info,
                              const cs_comm_t *comm, const cs_params_t *p, cs_coll_t coll, GError **err);

/* What the bandwidth term of a call was priced on: the resource whose
 * seconds per byte of S are the largest. */
typedef enum {
    CS_LIMIT_NONE = 0,
    CS_LIMIT_FABRIC,          /* the most loaded link of the routed network edges */
    CS_LIMIT_NIC,             /* the NIC rate (port, GPU-NIC path, staging, proxies) */
    CS_LIMIT_INTRA,           /* intra-node edges */
    CS_LIMIT_SM,              /* the channels' SM throughput */
    CS_LIMIT_MEM,             /* GPU memory */
    CS_LIMIT_NVLS,            /* NVLink ports at the NVLS rate */
    CS_LIMIT_NVLS_COPY,       /* NVLS all-reduce's copy warps, a head's chunk at a time */
    CS_LIMIT_HOST,            /* the host thread issuing its GPUs' kernels (the process layout) */
} cs_limit_kind_t;

typedef struct {
    cs_limit_kind_t kind;
    double spb;               /* seconds per byte of S */
    double busy;              /* S x spb / the call's time */
} cs_analytic_limit_t;

/* Time of one call, in seconds, out-of-place [CS_OOP] and in-place
 * [CS_INP]. 'fab' (may be NULL: no routed network bound) is the call's
 * routed network bound (cs_fabric_load_bound); 'limit_p' (may be NULL)
 * receives what the bandwidth term was priced on. Errors: algorithms the
 * engine does not model (CollNet other than all-reduce across nodes). */
gboolean cs_analytic_time_routed(const cs_analytic_hw_t *hw, const cs_params_t *p, cs_coll_t coll,
                                 const cs_engine_call_t *call, const cs_fabric_bound_t *fab, double time_s[2],
                                 cs_analytic_limit_t *limit_p, GError **err);
/* The same without a routed bound (tests with hand-written communicators). */
gboolean cs_analytic_time(const cs_analytic_hw_t *hw, const cs_params_t *p, cs_coll_t coll,
                          const cs_engine_call_t *call, double time_s[2], GError **err);

/* The bottleneck as one line: "bottleneck: leaf0 -> spine1 (net), loaded
 * 2.00x the busiest NIC port, fabric 4:1 oversubscribed (99.1% busy)";
 * g_free it. 'fabric' and 'fab' may be NULL when there is no network. */
char *cs_analytic_describe(const cs_analytic_hw_t *hw, const cs_topo_t *t, const cs_fabric_load_t *fabric,
                           const cs_decision_t *d, const cs_fabric_bound_t *fab, const cs_analytic_limit_t *lim);
/* The engine's last call's bottleneck (cs_analytic_describe) from its
 * state; NULL before a call. g_free it. */
char *cs_analytic_bottleneck(void *state);

/* NCCL's double binary tree over 'nnodes' nodes (trees.cc ncclGetDtree):
 * the largest degree a node has in both trees together, and the depth. */
void cs_analytic_dtree_shape(int nnodes, int *degsum_p, int *depth_p);
/* The tree all-reduce's network bytes per byte of S at the busiest NIC
 * when its phases run one after the other (NCCL <= 2.7,
 * cs_tree_phases_in_sequence) on 'nch' channels: 4 on one channel (one
 * binary tree: 2 S received, then 2 S sent), 2 on two (the two trees). */
double cs_analytic_tree_seq_load(int nnodes, int nch);

#endif
