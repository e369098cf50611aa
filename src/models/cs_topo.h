/* The topology graph: devices (GPUs, NVSwitches, PCIe switches, CPU
 * sockets, NICs, fabric switches) and directed links with bandwidth and
 * latency. Built once (from our XML, an NCCL topology dump or a preset
 * builder), frozen by cs_topo_finish(), then read-only.
 *
 * Ranks: the GPUs in node order, then local order, as nccl-tests with one
 * process per GPU numbers them. */
#ifndef CS_TOPO_H
#define CS_TOPO_H

#include <glib.h>
#include "models/cs_hw.h"

typedef enum {
    CS_DEV_GPU = 0,
    CS_DEV_NVSWITCH,
    CS_DEV_PCISW,     /* PCIe switch or bridge */
    CS_DEV_CPU,       /* CPU socket with its root complex */
    CS_DEV_NIC,
    CS_DEV_SWITCH,    /* fabric (network) switch */
    CS_DEV_KIND_COUNT
} cs_dev_kind_t;


/* Link kinds, numbered as NCCL's link types where they exist (topo.h):
 * LOC 0, NVL 1, C2C 3, PCI 4, SYS 9, NET 10. */
typedef enum {
    CS_LINK_NVL = 1,  /* NVLink, GPU-GPU or GPU-NVSwitch */
    CS_LINK_C2C = 3,  /* NVLink-C2C (Grace) */
    CS_LINK_PCI = 4,  /* PCIe */
    CS_LINK_SYS = 9,  /* inter-socket (UPI, xGMI, ...) */
    CS_LINK_NET = 10  /* network cable: NIC-switch, switch-switch, NIC-NIC */
} cs_link_kind_t;

typedef struct {
    cs_dev_kind_t kind;
    char *name;              /* unique: "n3.gpu5", "n0.nic2", "leaf1", ... */
    int node;                /* node index; -1 for fabric switches */
    int line;                /* line in the source file, 0 for presets */

    /* GPU */
    const cs_gpu_model_t *gpu;
    int local;               /* index among the node's GPUs (or NICs, for NICs) */
    int rank;                /* GPU: global rank; others: -1 */
    gboolean gdr;            /* GPU or NIC: GPUDirect RDMA capable */
    gint64 pci_busid;        /* GPU: its PCI bus id as NCCL numbers its GPU
                              * nodes (utils.cc busIdToInt64: "0000:03:00.0"
                              * -> 0x3000, "GPU/0-3000" in NCCL's log); 0
                              * unknown (presets) */
    int p2p_force;           /* GPU: PCIe peer-to-peer as this node's driver
                              * allows it: 0 = the model's gpu->p2p, 1 = on
                              * (e.g. a patched GeForce driver), -1 = off.
                              * Read it through cs_device_p2p(). */

    /* CPU */
    cs_cpu_vendor_t vendor;
    int socket;              /* CPU: socket number (NUMA id) */
    int familyid, modelid;   /* CPU: x86 CPUID family/model as NCCL's XML
                              * carries them (NCCL picks the Intel SYS bw
                              * from them: BDW/SKL/SRP/ERP); 0 = unknown */

    /* NIC */
    cs_nic_kind_t nic_kind;
    double nic_bw;           /* bytes/s per port per direction */
    int nic_ports;
    char *ifname;            /* NIC: netdev name ("mlx5_0" for RDMA, "eth0") or NULL */

    /* fabric switch */
    int tier;                /* 0 = leaf, 1 = spine, 2 = core */
} cs_device_t;

typedef struct {
    int src, dst;            /* device indices */
    int reverse;             /* index of the link in the other direction */
    cs_link_kind_t kind;
    double bw;               /* physical bytes/s in this direction */
    double lat;              /* seconds */
    int count;               /* NVLink: links bundled; otherwise 1 */
    int pcie_gen, pcie_width;/* PCI links */
    double nccl_bw;          /* GB/s as NCCL's topology detection would set it
                              * (topo.cc rules; see cs_topo_nccl_link_bw) */
    int line;
} cs_link_t;

typedef enum { CS_FABRIC_NONE = 0, CS_FABRIC_RAIL, CS_FABRIC_FAT_TREE, CS_FABRIC_CUSTOM } cs_fabric_kind_t;

typedef struct {
    cs_fabric_kind_t kind;
    double oversubscription; /* leaf downlink bw / uplink bw; 1 = non-blocking */
    int nodes_per_leaf;      /* nodes whose NICs of one rail share a leaf */
    double switch_lat;       /* per switch hop, seconds */
} cs_fabric_t;

typedef struct cs_topo {
    cs_device_t *devs;
    int ndevs, devs_cap;
    cs_link_t *links;
    int nlinks, links_cap;

    /* Filled by cs_topo_finish(): outgoing links of device d are
     * adj[adj_off[d] .. adj_off[d+1]-1] (link indices). */
    int *adj_off, *adj;

    int nnodes;
    int ngpus;               /* = number of ranks */
    int *rank_dev;           /* rank -> device index */
    int *node_first_rank;    /* node -> first rank (nnodes+1 entries) */

    cs_fabric_t fabric;
    char *source;            /* file name or "preset:dgx-h100 --nodes 4 ..." */
    char *description;       /* one line for output headers */
    gboolean finished;
} cs_topo_t;

cs_topo_t *cs_topo_new(const char *source);
void cs_topo_free(cs_topo_t *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(cs_topo_t, cs_topo_free)

/* Adds a device (the struct is copied; name and ifname are duplicated).
 * Returns its index. The name must be unique (checked by cs_topo_finish). */
int cs_topo_add_device(cs_topo_t *t, const cs_device_t *dev);
/* Adds a bidirectional link a<->b with the same bandwidth both ways; returns
 * the index of a->b (b->a is at .reverse). nccl_bw is computed at finish. */
int cs_topo_add_link(cs_topo_t *t, int a, int b, cs_link_kind_t kind,
                     double bw, double lat, int line);
/* Lookup by name; -1 if absent. Linear before finish, hashed after. */
int cs_topo_find(const cs_topo_t *t, const char *name);

/* Freezes the graph: builds adjacency, assigns ranks (node order, then local
 * GPU order), fills nccl_bw, and validates: unique names, positive
 * bandwidths, at least one GPU, every GPU reachable from every other GPU
 * (inside a node through NVLink/PCIe/CPU; across nodes through NICs and the
 * fabric). On failure the message names the device (and file:line when the
 * device came from a file). */
gboolean cs_topo_finish(cs_topo_t *t, GError **err);

/* Restricts each node to its first n GPUs, as nccl-tests -g n would use them:
 * returns a new finished topology without the other GPUs and their links. */
cs_topo_t *cs_topo_restrict_gpus(const cs_topo_t *t, int n, GError **err);

/* A job's view of a machine: only the GPUs with keep[rank] (ngpus
 * entries), only the nodes that keep any (renumbered in order, their
 * GPUs numbered from 0 again), fabric switches as they are; every other
 * device and link copied unchanged, so the job's paths are the machine's.
 * Outputs: rank_map (new rank -> machine rank) and link_map (new link ->
 * machine link), g_free them. */
cs_topo_t *cs_topo_select(const cs_topo_t *t, const gboolean *keep, int **rank_map_p, int **link_map_p,
                          GError **err);

/* NCCL's view of a link's bandwidth in GB/s (topo.h/topo.cc, v2.28.9):
 * NVLink count * per-link (SM60 18, SM70 20, SM80 20, SM86 12, SM90 20.6,
 * SM100 40.1); PCI width*gen-speed/80 (Gen3/4/5 x16 = 12/24/48); SYS by CPU
 * (Intel SKL 10 / SRP 22 / ERP 40, AMD 16, ARM 6, Power 32); NET speed/8000
 * Mb/s; C2C bw*count. */
double cs_topo_nccl_link_bw(const cs_topo_t *t, const cs_link_t *l);

const char *cs_dev_kind_name(cs_dev_kind_t k);   /* "gpu", "nvswitch", "pcisw", "cpu", "nic", "switch" */
const char *cs_link_kind_name(cs_link_kind_t k); /* "nvlink", "c2c", "pcie", "sys", "net" */
const char *cs_cpu_vendor_name(cs_cpu_vendor_t v);

/* Convenience queries. */
static inline const cs_device_t *cs_topo_rank_dev(const cs_topo_t *t, int rank)
{ return &t->devs[t->rank_dev[rank]]; }
/* Whether the driver lets this GPU do PCIe peer-to-peer (p2p_force, else
 * the model's default). */
static inline gboolean cs_device_p2p(const cs_device_t *d)
{ return d->p2p_force != 0 ? d->p2p_force > 0 : (d->gpu != NULL && d->gpu->p2p); }
int cs_topo_node_gpus(const cs_topo_t *t, int node);   /* ranks on node */
int cs_topo_node_nics(const cs_topo_t *t, int node, int *nic_devs, int max); /* NIC device indices, local order */
int cs_topo_node_cpu_of(const cs_topo_t *t, int dev);  /* the CPU socket device a device hangs under, -1 */
/* The hosts (operating-system instances) the ranks run on: a host is the
 * GPUs that share CPUs, joined by PCIe, C2C and the sockets' SYS links,
 * never by NVLink or the network. A node is one host, except an NVLink
 * domain of several trays (an NVL72 rack is one node of 18 hosts, as NCCL
 * fuses the MNNVL clique into one system). A node with a GPU that no CPU
 * reaches counts as one host. Fills host_of_rank[rank] (ngpus entries,
 * hosts numbered from 0 in rank order) when it is not NULL; returns the
 * number of hosts. */
int cs_topo_rank_hosts(const cs_topo_t *t, int *host_of_rank);
/* A PCI bus id "DDDD:BB:DD.F" (or without ".F"; hex, either case) as NCCL
 * numbers it (busIdToInt64: the hex digits read as one number, 0x3000 for
 * 0000:03:00.0). FALSE, *id_p unset, for anything else. */
gboolean cs_topo_busid_parse(const char *s, gint64 *id_p);
/* The same id written back as "DDDD:BB:DD.F" (lower case) into buf. */
void cs_topo_busid_format(gint64 id, char buf[24]);
/* The device's PCIe (or C2C) path from the CPU it hangs under: chain[0]
 * the CPU, then the switches, last the device itself; returns its length,
 * 0 when there is none or it does not fit in max. */
int cs_topo_pci_chain(const cs_topo_t *t, int dev, int *chain, int max);
int cs_topo_link_gpu_sm(const cs_topo_t *t, int link);  /* compute capability of the link's GPU end (src first), 0 none */

#endif
