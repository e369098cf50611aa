/* What NCCL would decide for a communicator over a topology with a given
 * environment: transports per peer pair, the ring/tree graph search (channel
 * count, bwIntra, bwInter, path types), and per collective call the
 * algorithm, protocol, channels and threads chosen by NCCL's cost model
 * (tuning.cc / enqueue.cc, v2.28.9; facts in reference nccl-model.md §1).
 *
 * These are NCCL's decisions, not a time prediction: the engines price them
 * against the hardware. nccl_time_us is NCCL's own estimate, kept for
 * explanation and comparison. */
#ifndef CS_DECIDE_H
#define CS_DECIDE_H

#include "models/cs_topo.h"
#include "models/cs_paths.h"
#include "models/cs_coll.h"
#include "models/cs_nccl_env.h"

typedef enum {
    CS_XPORT_P2P_NVL = 0,  /* P2P over NVLink (or NVSwitch) */
    CS_XPORT_P2P_PCI,      /* P2P over PCIe */
    CS_XPORT_SHM,          /* through host memory */
    CS_XPORT_NET_IB,       /* NET over IB verbs (IB or RoCE NIC) */
    CS_XPORT_NET_SOCKET,   /* NET over TCP sockets */
    CS_XPORT_COUNT
} cs_transport_t;

const char *cs_transport_name(cs_transport_t x); /* "P2P/NVL", "P2P/PCI", "SHM", "NET/IB", "NET/Socket" */

typedef struct {
    cs_transport_t transport;
    gboolean gdr;              /* NET: GPUDirect RDMA used (else host-staged) */
    gboolean p2p_read;         /* P2P read mode (NVLink sm80+) */
    cs_path_type_t path;       /* NCCL path type between the peers (NET across nodes) */
    double nccl_bw;            /* GB/s NCCL attributes to the path */
} cs_link_choice_t;

typedef struct {
    /* communicator shape */
    int nranks, nnodes, ppn;   /* ppn = min over nodes */
    int cc;                    /* min SM arch over GPUs (sm*10: 70, 80, 90, 100) */
    gboolean mixed_cc;
    cs_cpu_vendor_t cpu_vendor;
    gboolean nvswitch;         /* GPUs reach each other through NVSwitch */

    /* intra-node choices (node 0 shown; decisions take the min over nodes) */
    cs_transport_t intra_transport;  /* between ring neighbours in a node: the worst of node 0's */
    int intra_edges[CS_XPORT_COUNT]; /* node 0's ring edges by transport */
    cs_path_type_t type_intra;       /* worst path type along the intra ring */
    /* inter-node */
    cs_transport_t inter_transport;  /* NET/IB or NET/Socket */
    gboolean gdr;                    /* GDR used by the network transport */
    cs_path_type_t type_inter;       /* GPU-to-NIC path type (NCCL's typeInter) */
    int nics_used;                   /* NICs per node the rings use */
    int nics_node;                   /* NICs node 0 has (NCCL's search may use fewer) */
    double nic_bw;                   /* bytes/s of one used NIC port (socket: interface speed) */
    char *net_device;                /* "mlx5_0" / interface chosen for sockets */

    /* graph search results (search.cc), before ncclTopoPostset */
    int ring_nch, tree_nch, nvls_nch;
    double bw_intra, bw_inter;       /* GB/s per channel, NCCL's units */
    gboolean nvls_supported, nvls_tree_supported, collnet_supported;

    int collnet_heads;               /* CollNet on: GPUs per node that meet the SHARP network in
                                      * CollNetDirect (connect.cc connectCollNet nHeads), else 0 */
    int comm_nch;                    /* after postset doubling and MIN/MAX_NCHANNELS */
    int *ring_order;                 /* nranks entries: channel 0 ring, rank at each position */

    /* per-pair choice for neighbours in ring order (intra) */
    cs_link_choice_t intra, inter;

    /* Point-to-point (SendRecv, AlltoAll; cs_p2p.h): NCCL's p2p setup
     * (init.cc computeBuffSizes, ncclP2pSchedule; paths.cc
     * ncclTopoComputeP2pChannelsPerPeer/ncclTopoComputeP2pChannels). */
    int p2p_nch;                     /* p2pnChannels: a power of two */
    int p2p_nch_per_peer;            /* p2pnChannelsPerPeer: a power of two */
    int p2p_group;                   /* p2pSchedGroupSize: ranks per schedule group */
    guint64 p2p_chunk;               /* p2pChunkSize: Simple step bytes */
    guint64 p2p_ll_threshold;        /* NCCL_P2P_LL_THRESHOLD, bytes per channel */
    guint64 p2p_chunk_param;         /* NCCL_CHUNK_SIZE; 0 = unset */
    int p2p_net_per_gpu;             /* NICs a GPU's network peers use (topo.cc ncclTopoGetLocalNetCountByBw) */
    double p2p_net_ch_bw;            /* NCCL_P2P_PER_CHANNEL_NET_BW: GB/s NCCL expects of a channel's network sends */
    gboolean p2p_direct_disable;     /* NCCL_P2P_DIRECT_DISABLE=1 (cs_comm_p2p_direct) */

    /* How nccl-tests runs the ranks (cs_comm_set_layout): processes per
     * node (mpirun -N), threads per process (-t) and GPUs per thread (-g).
     * Default: one process per GPU (1 thread, 1 GPU), as nccl-tests'
     * multi-node examples (mpirun -np N ... -g 1). */
    int procs_per_node, threads_per_proc, gpus_per_thread;
    /* The NCCL the measured run used, where it is known
     * (cs_comm_set_nccl_version: major x 10000 + minor x 100 + patch); 0 =
     * the modelled v2.28.9. Only mechanisms that differ by version and are
     * modelled for both follow it (cs_comm_host_work_channels); every
     * decision stays v2.28.9's but the channel count below and, from
     * 2.29.2, the tuner's Blackwell ring LL128 ceiling and NVLSTree
     * correction (cs_comm_tune, rerun when the version is set). */
    int nccl_version;
    /* Where the version is not known, the newest the run can have used,
     * from a line of its log that only older NCCLs print
     * (cs_comm_set_nccl_version_max, same code); 0 = no such bound. */
    int nccl_version_max;
    /* The nccl-tests build of the measured run, where its log says it
     * ("# nccl-tests version 2.18.3 nccl-headers=22903 ...": the same
     * codes, 0 = not known): which NCCL calls the benchmark makes per
     * iteration follows it (cs_comm_p2p_extra_calls). */
    int nccltests_version, nccltests_headers;
    /* The channels every Ring and Tree call of that NCCL runs on, where its
     * rule is modelled and differs from v2.28.9's (cs_comm_set_nccl_version:
     * NCCL 2.4 across nodes); 0 = the v2.28.9 decision's. */
    int nccl_nch;
} cs_comm_info_t;

typedef struct cs_comm cs_comm_t;

/* Analyses the communicator made of every GPU of the topology (ranks in
 * rank order). Errors: settings that NCCL would refuse (unknown algorithm
 * forced with no fallback, ...), no usable network between nodes. */
cs_comm_t *cs_comm_new(const cs_topo_t *t, const cs_nccl_env_t *env, GError **err);
void cs_comm_free(cs_comm_t *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(cs_comm_t, cs_comm_free)
const cs_comm_info_t *cs_comm_info(const cs_comm_t *c);
const cs_topo_t *cs_comm_topo(const cs_comm_t *c);
const cs_nccl_settings_t *cs_comm_settings(const cs_comm_t *c);
/* Sets the process layout: 'procs' processes per node (0: one per GPU),
 * each with 'threads' threads (nccl-tests -t; 0 or 1: one) driving the
 * node's GPUs in equal shares (nccl-tests -g = GPUs per node / (procs x
 * threads)). Errors ("what; expected", no prefix): a layout that does
 * not divide every node's GPUs. It changes no decision of NCCL's here, only
 * what the engines charge to launch a call (cs_engine_analytic-int.h
 * cs_launch_host_s). */
gboolean cs_comm_set_layout(cs_comm_t *c, int procs, int threads, GError **err);
/* Sets the NCCL version of the measured run ("2.19.3"; NULL or unparsable:
 * the modelled v2.28.9). It changes the host's cost of a call
 * (cs_comm_host_work_channels), NCCL 2.4's channel count across nodes
 * (info.nccl_nch: one ring per NIC, cs_decide.c v24_channels) and, in the
 * engines, the tree all-reduce's phases (cs_tree_phases_in_sequence); no
 * other decision. Returns the version code set (0: none). */
int cs_comm_set_nccl_version(cs_comm_t *c, const char *version);
/* Bounds the measured run's NCCL from above where its version is not
 * known: 'code' (major x 10000 + minor x 100 + patch; 0 = no bound) is the
 * newest release that prints a line its log shows. It serves only where a
 * mechanism changed at a version above the bound, and like the version it
 * changes no decision (cs_comm_nccl_version_at_most). */
void cs_comm_set_nccl_version_max(cs_comm_t *c, int code);
/* Whether NCCL's tuner gives NVLSTree all-reduce the tree's size
 * correction: from 2.29.2, on Blackwell with x86 hosts (tuning.cc
 * ncclTopoGetAlgoTime, comm->cpuArch); the measured run's version
 * (cs_comm_set_nccl_version), FALSE where it is not known. */
gboolean cs_comm_nvls_tree_corrected(const cs_comm_t *c);
/* The newest NCCL the measured run can have used: its version where
 * known, else the bound (cs_comm_set_nccl_version_max), else 0 (unknown:
 * the modelled v2.28.9). */
static inline int cs_comm_nccl_version_at_most(const cs_comm_info_t *ci)
{
    return ci->nccl_version > 0 ? ci->nccl_version : ci->nccl_version_max;
}
/* Whether a rank's P2P connections to the GPUs of its own process use
 * direct pointers: the sender writes into the receiver's user buffer (or,
 * in P2P read mode, the receiver reads from the sender's), one copy where
 * the connection's FIFO takes two. NCCL up to 2.22 does it between GPUs
 * of one process (nccl-tests -g or -t: transport/p2p.cc P2P_SAME_PID sets
 * P2P_DIRECT and NCCL_DIRECT_WRITE or NCCL_DIRECT_READ on the connection
 * unless NCCL_P2P_DIRECT_DISABLE=1; prims_simple.h v2.22.3 setDataPtrs
 * exchanges the user buffer whenever the connection allows it); from 2.23
 * only for registered buffers (setDataPtrs: Direct && ipcReg), which
 * nccl-tests does not register unless asked. A run whose NCCL is not
 * known is taken as v2.28.9: no direct pointers. */
static inline gboolean cs_comm_p2p_direct(const cs_comm_info_t *ci)
{
    int v = cs_comm_nccl_version_at_most(ci);
    gboolean one_process = ci->procs_per_node == 1 && ci->nranks / MAX(1, ci->nnodes) > 1;
    gboolean p2p = ci->intra_transport == CS_XPORT_P2P_NVL || ci->intra_transport == CS_XPORT_P2P_PCI;
    return one_process && p2p && v > 0 && v < 22300 && !ci->p2p_direct_disable;
}
/* Sets the measured run's nccl-tests build: its version and the NCCL
 * headers it was built with (codes, 0 = not known). Like the NCCL version
 * it changes no decision, only the host's cost of a call. */
void cs_comm_set_nccltests_build(cs_comm_t *c, int version, int headers);
/* NCCL calls nccl-tests makes per GPU for one iteration of 'coll' beyond
 * the first, each one more ncclEnqueueCheck on the launching thread
 * (lat.launch.cpu.api): SendRecv calls ncclSend and ncclRecv (1 more);
 * AlltoAll ncclSend and ncclRecv for each of the n peers (2n - 1 more),
 * but one ncclAlltoAll (0 more) where nccl-tests >= 2.17.0 is built on NCCL
 * >= 2.28 headers and runs on NCCL >= 2.28 (src/alltoall.cu
 * AlltoAllRunColl, v2.17.0 to v2.18.3; before 2.17.0 always the pairs).
 * A build that is not known is taken for the pairs. */
static inline int cs_comm_p2p_extra_calls(const cs_comm_info_t *ci, cs_coll_t coll, int nranks)
{
    if (coll == CS_COLL_SENDRECV)
        return 1;
    if (coll != CS_COLL_ALLTOALL)
        return 0;
    gboolean one_call = ci->nccltests_version >= 21700 && ci->nccltests_headers >= 22800 &&
                        (ci->nccl_version == 0 || ci->nccl_version >= 22800);
    return one_call ? 0 : 2 * MAX(1, nranks) - 1;
}
/* The channels of a call on 'nchannels' whose work the launching thread
 * builds and uploads one by one, for an NCCL no newer than 'nccl_version'
 * (cs_comm_nccl_version_at_most): all of them up to 2.21 (a 512-byte ncclWork per
 * channel, enqueue.cc v2.19.3 uploadWork), one from 2.22 on (one
 * ncclDevWorkColl for the channel range, v2.22.3) and for the modelled
 * v2.28.9 (0). */
static inline int cs_comm_host_work_channels(int nccl_version, int nchannels)
{
    return nccl_version > 0 && nccl_version < 22200 ? MAX(1, nchannels) : 1;
}
/* Whether NCCL 'nccl_version' (a cs_comm_info_t code) runs the Simple tree
 * all-reduce's two phases one after the other: up to 2.7 every channel's
 * threads reduce the whole buffer up the tree, then broadcast it down
 * (device/all_reduce.h ncclAllReduceTreeKernel, v2.4.7 to v2.7.8: two
 * loops over the buffer); from 2.8 the threads are split between the two,
 * which run at once (v2.8.3 runTreeSplit: nthreadsSplit), as in the
 * modelled v2.28.9 (0). */
static inline gboolean cs_tree_phases_in_sequence(int nccl_version)
{
    return nccl_version > 0 && nccl_version < 20800;
}
/* Transport NCCL would use between two ranks. */
void cs_comm_pair(const cs_comm_t *c, int rank_a, int rank_b, cs_link_choice_t *out);

typedef struct {
    cs_algo_t algo;
    cs_proto_t proto;
    int nchannels;             /* channels used for this call */
    int nthreads;
    double nccl_time_us;       /* NCCL's cost-model estimate for the winner */
    double nccl_bw;            /* GB/s NCCL's model gives the winner (algo bw) */
    double nccl_lat_us;        /* its latency term */
    guint64 chunk_bytes;       /* chunk size the kernel moves per step */
    double table_us[CS_ALGO_COUNT][CS_PROTO_COUNT]; /* the whole cost table, -1 = not allowed */
} cs_decision_t;

/* Decision for one call of 'coll' moving nBytes (NCCL's nBytes: count *
 * typesize, times nranks for AllGather/ReduceScatter/AlltoAll). FALSE with
 * an error when no algorithm/protocol is allowed (e.g. NCCL_ALGO=nvls on
 * PCIe). SendRecv and AlltoAll (cs_coll_is_p2p) get algo CS_ALGO_P2P, the
 * protocol, channels per peer and step bytes of one send as NCCL's p2p
 * planner picks them (cs_p2p.h), no cost table (nccl_time_us -1). */
gboolean cs_comm_decide(const cs_comm_t *c, cs_coll_t coll, cs_dtype_t dtype,
                        guint64 nbytes, cs_decision_t *d_p, GError **err);
/* The same for a reduction 'redop' (cs_comm_decide: a sum): NVLS takes
 * only the reductions its multimem instructions have (device.h
 * ncclNvlsSupported), so a product, an average, or a min/max of float or
 * double runs Ring or Tree. */
gboolean cs_comm_decide_op(const cs_comm_t *c, cs_coll_t coll, cs_dtype_t dtype, cs_redop_t redop,
                           guint64 nbytes, cs_decision_t *d_p, GError **err);
/* The decision NCCL would take with NCCL_ALGO naming only 'algo' and
 * NCCL_PROTO naming only 'proto' (a cs_algo_t, cs_proto_t; -1: that
 * variable unset), on top of the comm's own restrictions: the rest as its
 * tuner picks it, channels and threads; FALSE when nothing is available
 * for this call. Not for point-to-point. */
gboolean cs_comm_decide_forced(const cs_comm_t *c, cs_coll_t coll, cs_dtype_t dtype, cs_redop_t redop,
                               guint64 nbytes, int algo, int proto, cs_decision_t *d_p, GError **err);

/* Channel 'ch' of algorithm 'algo' (Tree; anything else: Ring) as NCCL's
 * search built it, nranks entries: each node's ranks in a block, in the
 * order the channel visits them (graph channel ch % nChannels). Ring: the
 * ring, crossNic 2 swaps as connect.cc; channel 0's is info->ring_order.
 * Tree: the chain up to the GPU that meets the other nodes, which comes
 * last (connect.cc ncclTopoPreset: treeIntra[0], reversed). */
void cs_comm_chan_order(const cs_comm_t *c, cs_algo_t algo, int ch, int *order);
/* The NIC through which 'rank' sends and receives
 * across nodes on channel 'ch' of algorithm 'algo' (Ring, Tree, NVLS,
 * NVLSTree), as NCCL's graph search chose it (search.cc ncclTopoGetNetDev):
 * ring/tree graph channel ch % nChannels, inter[2c] for the channel's
 * first GPU and inter[2c+1] for any other; NVLS: the ch-th (modulo) of
 * the NVLS channels 'rank' heads (search.cc getNvlsNetDev). Returned as
 * its index among the NICs of the rank's node (cs_topo_node_nics order).
 * -1: a single node, no such graph, a socket on "lo", or an NVLS rank
 * heading none. CS_ALGO_P2P: the rank's own NIC for p2p channel 'ch'
 * (topo.cc ncclTopoGetLocalNet). */
int cs_comm_chan_nic(const cs_comm_t *c, cs_algo_t algo, int rank, int ch);

/* CollNet (SHARP): what the run assumed, or why NCCL_COLLNET_ENABLE=1
 * left it off, as one line for the output's notes; NULL when
 * NCCL_COLLNET_ENABLE is not set (cs_decide_collnet.c). */
const char *cs_comm_collnet_note(const cs_comm_t *c);

/* A short human summary ("P2P/NVL intra, NET/IB GDR inter (8 NICs)"). */
char *cs_comm_transport_summary(const cs_comm_t *c);

#endif
