/* Private to the decide area (cs_decide*.c): NCCL's per-node "system" as
 * the graph search sees it, the search graphs, and the communicator. Facts
 * from NCCL v2.28.9 (src/graph/search.cc, paths.cc, connect.cc, tuning.cc,
 * init.cc, enqueue.cc); simplifications are listed in docs/model-decisions.md. */
#ifndef CS_DECIDE_INT_H
#define CS_DECIDE_INT_H

#include "models/cs_decide.h"

#define CS_MAXCHANNELS 64          /* device.h MAXCHANNELS */
#define CS_NVLS_MAX_ARITY 32       /* device.h NCCL_MAX_NVLS_ARITY */
#define CS_LOC_BW 5000.0           /* topo.h LOC_BW, GB/s */
#define CS_PCI_BW 12.0             /* topo.h PCI_BW, GB/s (Gen3 x16) */

/* Graph patterns (graph.h NCCL_TOPO_PATTERN_*). */
enum {
    CS_PATTERN_BALANCED_TREE = 1,
    CS_PATTERN_SPLIT_TREE = 2,
    CS_PATTERN_TREE = 3,
    CS_PATTERN_RING = 4,
    CS_PATTERN_NVLS = 5,
    CS_PATTERN_COLLNET_DIRECT = 6
};

#define CS_MAX_DIRECT_ARITY 7      /* device.h NCCL_MAX_DIRECT_ARITY */

/* Network flavour NCCL ends up with (plugin/net.cc: IB first, then Socket). */
typedef enum { CS_NET_NONE = 0, CS_NET_IB, CS_NET_SOCKET } cs_net_kind_t;

/* One NCCL network device of a host: an RDMA NIC (IB transport) or an IP
 * interface (Socket transport). dev = -1 for the loopback interface. */
typedef struct {
    int dev;                  /* topology NIC device, -1 = "lo" */
    char *name;               /* "mlx5_0", "eth0", "ib0", "lo" */
    double speed;             /* GB/s, NCCL's speed/8000 */
    double bytes_per_s;       /* the same as bytes/s, for reports */
    gboolean gdr;             /* NCCL_PTR_CUDA: IB with a GDR-capable NIC */
} cs_netdev_t;

typedef struct {
    cs_net_kind_t kind;
    int n;
    cs_netdev_t *devs;
} cs_netsel_t;

/* One hop of a search path: a capacity slot and the share of the channel
 * bandwidth it takes there (1, 6/5 for PCIe through an Intel root complex,
 * 1/8 on the reverse link into a pre-Ampere GPU; search.cc followPath). */
typedef struct {
    int slot;
    double mult;
} cs_hop_t;

typedef struct {
    int type;                 /* cs_path_type_t; CS_PATH_DIS when none */
    double bw;                /* NCCL's bottleneck, GB/s */
    int nhops;                /* NCCL's hop count (links) */
    int off, n;               /* hops[off .. off+n-1] in cs_sys_t.hops */
} cs_spath_t;

/* The topology one NCCL rank sees (ncclTopoGetSystem + ncclTopoComputePaths
 * + ncclTopoTrimSystem): the GPUs of its NCCL node and the host's network
 * devices, with paths reduced to capacity slots. NVSwitches are merged into
 * one NVS node as NCCL does (topo.cc): each GPU has one up and one down
 * slot whose capacity is the sum of its NVLinks to NVSwitches. */
typedef struct {
    const cs_topo_t *t;
    const cs_nccl_settings_t *s;
    int ngpus;
    int *gpu_dev;             /* local index -> topology device */
    int *gpu_local;           /* local index -> host-local GPU index (NCCL's gpu.dev) */
    int *topo_order;          /* local indices in the order NCCL's topology lists the GPUs (cs_sys_new) */
    double *gpu_pci_bw;       /* search.cc gpuPciBw */
    int nnets;                /* 0 unless the system is "inter" */
    const cs_netdev_t *nets;
    int cc_min, cc_max;
    gboolean nvs;             /* NVSwitch present */
    gboolean inter;           /* other NCCL nodes exist (paths.cc system->inter) */
    cs_cpu_vendor_t vendor;   /* first CPU of the host (search.cc ncclTopoComputeCommCPU) */
    gboolean split_nvlink;    /* paths.cc ncclTopoSplitNvLink */

    int nslots;
    double *cap;              /* residual capacity per slot, GB/s */
    GArray *hops;             /* cs_hop_t */
    cs_spath_t *g2g;          /* [a*G+b] */
    cs_spath_t *g2n, *n2g;    /* [g*N+n], [n*G+g] */
    cs_spath_t *g2s, *s2g;    /* GPU <-> merged NVS, [g] */
    gboolean *gdr;            /* [g*N+n]: GPUDirect RDMA (paths.cc ncclTopoCheckGdr) */
    double *net_bw;           /* NET node bandwidth attribute, search.cc */
    int *net_local_gpu;       /* topo.cc ncclTopoGetLocalGpu */
    int **gpu_nets;           /* preferred NICs of each GPU (topo.cc ncclTopoGetLocal) */
    int *gpu_nnets;
    double max_bw, total_bw;  /* search.cc ncclTopoSearchInit */
    guint64 *used;            /* per GPU: channel bit mask */
    int *local_net;           /* [g*CS_MAXCHANNELS+c]: cs_sys_local_net, cached */
    int **net_lists;          /* select_nets results per (type_inter, gpu+1), lazy */
    int *net_list_len;
} cs_sys_t;

typedef struct {
    int id;                   /* 0 ring, 1 tree, 2 collnet chain, 3 nvls, 4 collnet direct (init.cc) */
    int pattern;
    gboolean collnet;         /* graph.h collNet: only NICs with CollNet support (search.cc) */
    int nch, min_ch, max_ch;
    double bw_intra, bw_inter, lat_inter;
    int type_intra, type_inter;
    int cross_nic, same_channels;
    int nhops;
    int ngpus;
    int *intra;               /* CS_MAXCHANNELS * ngpus local GPU indices */
    int inter[CS_MAXCHANNELS * 2];
} cs_graph_t;

/* cs_decide_net.c */
gboolean cs_netsel_host(const cs_topo_t *t, int host, const cs_nccl_settings_t *s,
                        gboolean need_net, cs_netsel_t *sel_p, GError **err);
/* What NCCL would log about the network it chose on a host that uses it
 * (an NCCL_IB_HCA that keeps no HCA, NCCL_IB_DISABLE beside RDMA NICs, a
 * GID index): lines for cs_nccl_env_log, naming the variables' origins
 * from env (NULL: none) and the [nccl] key to change. */
void cs_netsel_warnings(const cs_topo_t *t, int host, const cs_nccl_settings_t *s, const cs_netsel_t *sel,
                        const cs_nccl_env_t *env, GPtrArray *out);
void cs_netsel_clear(cs_netsel_t *sel);

/* cs_decide_graph.c */
cs_sys_t *cs_sys_new(const cs_topo_t *t, const cs_nccl_settings_t *s, const int *gpu_devs,
                     int ngpus, int host_gpus, const cs_netsel_t *nets, gboolean inter);
void cs_sys_free(cs_sys_t *sys);
/* Pair (a, b) of the system's GPUs: P2P allowed, and transport NCCL picks. */
gboolean cs_sys_p2p(const cs_topo_t *t, const cs_nccl_settings_t *s, int dev_a, int dev_b,
                    int host_gpus, cs_path_t *path_p);
void cs_graph_init(cs_graph_t *g, int id, int pattern, int min_ch, int max_ch, int ngpus);
void cs_graph_clear(cs_graph_t *g);
void cs_graph_copy(cs_graph_t *dst, const cs_graph_t *src);
void cs_graph_compute(cs_sys_t *sys, cs_graph_t *g);
/* topo.cc ncclTopoGetLocalNet */
int cs_sys_local_net(const cs_sys_t *sys, int g, int channel);

/* The communicator. */
typedef struct {
    float bw[CS_COLL_COUNT][CS_ALGO_COUNT][CS_PROTO_COUNT];   /* 0 = disabled */
    float lat[CS_COLL_COUNT][CS_ALGO_COUNT][CS_PROTO_COUNT];
    int max_threads[CS_ALGO_COUNT][CS_PROTO_COUNT];
    long thread_threshold[CS_ALGO_COUNT][CS_PROTO_COUNT];
    long buff_size[CS_PROTO_COUNT];
    gboolean avail[CS_COLL_COUNT][CS_ALGO_COUNT];   /* before NCCL_ALGO/NCCL_PROTO */
} cs_tune_t;

typedef struct {
    int host;                 /* topology node */
    int shape;                /* index into cs_comm.systems */
    int ngpus;
    int *ranks;               /* global ranks, local order */
} cs_nnode_t;

typedef struct {
    cs_sys_t *sys;
    cs_graph_t ring, tree, nvls;
    cs_graph_t cn_chain, cn_direct;   /* CollNet graphs (init.cc), searched only with CollNet on */
    cs_netsel_t net;          /* borrowed from the host shape */
    cs_link_choice_t *pairs;  /* [a*G+b] intra-node choices */
} cs_shape_t;

struct cs_comm {
    const cs_topo_t *t;
    cs_nccl_settings_t s;
    char *algo_env, *algo_origin, *proto_env, *proto_origin;
    cs_comm_info_t info;

    int nnodes;
    cs_nnode_t *nodes;
    int *rank_node, *rank_local;
    GPtrArray *shapes;        /* cs_shape_t*, one per distinct NCCL node */
    GPtrArray *hosts;         /* host shapes (private to cs_decide.c) */
    int *host_of;             /* topology node -> index into hosts, -1 */

    /* communicator-wide graphs after the AllGather3 min/max (init.cc) */
    int nch;                  /* comm nChannels before postset = ring/tree graph nch */
    int graph_nch[CS_ALGO_COUNT];
    double graph_bw_intra[CS_ALGO_COUNT], graph_bw_inter[CS_ALGO_COUNT], graph_lat_inter[CS_ALGO_COUNT];
    int graph_type_intra[CS_ALGO_COUNT], graph_type_inter[CS_ALGO_COUNT];
    int graph_same[CS_ALGO_COUNT];
    int max_tree_pattern;
    gboolean cpu_amd_or_mixed;
    cs_cpu_vendor_t vendor;
    gboolean vendor_mixed;
    int cc_max;
    gboolean nvls_support;
    int nvls_channels;
    int nvls_heads;
    int local_ranks;          /* ranks of node 0 (enqueue.cc comm->localRanks) */
    int max_local_ranks;
    gboolean pat_support;
    /* CollNet (SHARP; cs_decide_collnet.c): config.collnetEnable after
     * init.cc's checks, the heads (coll_net.cc ncclCollNetSetup), chain
     * support, the plugin's reduce support, and why it is off */
    gboolean collnet;
    gboolean collnet_plugin;  /* coll_net.h collNetSupport: the SHARP plugin (assumed on InfiniBand) */
    int collnet_heads_num;    /* comm->collNetHeadsNum */
    int collnet_direct_heads; /* channels[0].collnetDirect.nHeads: the direct graph's heads */
    gboolean collnet_chain_support;
    char *collnet_note;       /* one line for the output's notes, or NULL */
    cs_tune_t tune;
    /* NCCL_PROTO turns LL128 on for an algorithm whose paths NCCL's
     * default rule leaves it off on (tuning.cc: not NVLink-class): the
     * output warns (cs_comm_tune) */
    gboolean ll128_forced_unsafe;
};

/* cs_decide_tune.c */
void cs_comm_tune(cs_comm_t *c);

/* cs_decide_collnet.c */
/* Before the searches: whether NCCL would load a CollNet plugin here
 * (NCCL_COLLNET_ENABLE=1, several nodes, every host's NICs InfiniBand:
 * the SHARP plugin and Quantum switches assumed), with the note saying so
 * or why not. */
void cs_collnet_plugin(cs_comm_t *c, gboolean multi_host);
/* After AllGather3 (agree_graphs) and NVLS: init.cc's checks (chain
 * graph found, NCCL_COLLNET_NODE_THRESHOLD), the heads and chain support
 * (coll_net.cc ncclCollNetSetup). Errors: NCCL_COLLNET_NODE_THRESHOLD
 * that is not an integer. */
gboolean cs_collnet_setup(cs_comm_t *c, const cs_nccl_env_t *e, GError **err);
/* coll_net.cc collNetSupportMatrix with the SHARP plugin: (sum, dtype). */
gboolean cs_collnet_type_ok(cs_dtype_t t);
/* connect.cc ncclTopoPostset's CollNet channels: nch after doubling ->
 * nch + nch/2 where the chain graph's bwIntra > bwInter and nodes hold
 * several ranks. */
int cs_collnet_postset(const cs_comm_t *c, int nch);
/* cs_comm_chan_order for node n's block of CollNetChain (the chain, its
 * head last) and CollNetDirect (the heads first in head order, then the
 * other GPUs in local order); FALSE for other algorithms or without
 * CollNet. */
gboolean cs_collnet_chan_order(const cs_comm_t *c, int n, cs_algo_t algo, int ch, int *order);
/* The network device index (into the node's cs_sys_t nets) 'rank' meets
 * the SHARP network through on channel ch, -1 if it heads none. */
int cs_collnet_chan_net(const cs_comm_t *c, cs_algo_t algo, int rank, int ch);

#endif
