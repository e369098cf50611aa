/* Preset machines and builders: node presets (dgx1-v100, dgx-a100,
 * dgx-h100, dgx-h800, hgx-h200, dgx-b200), NVL72 racks (gb200-nvl72,
 * gb300-nvl72), DGX Spark, the generic PCIe server and its two-card
 * NVLink-bridged workstation, and the cluster builder that replicates a
 * node over a rail or fat-tree fabric.
 * Every number comes from the parts catalogue (cs_hw.c) or a cited vendor
 * document, never from a measured collective result. */
#ifndef CS_PRESETS_H
#define CS_PRESETS_H

#include "models/cs_topo.h"

/* The limits of a built cluster, stated once for the flags, the scenario
 * keys, the builders, the help and the man pages: at most CS_MAX_NODES
 * nodes (a 1024-node flow run already takes seconds; 65536 nodes of 8 GPUs
 * is half a million GPUs) and CS_MAX_NICS_PER_NODE NICs per node asked
 * with --nics-per-node: an NVL72 rack is one node (NCCL fuses the NVLink
 * domain's hosts into one system), and a GB300 NVL72 with 8 x 400G per
 * compute tray has 18 x 8 = 144. NCCL's own per-host limit (MAX_IB_DEVS,
 * 32 in net_ib) is per tray there, not per rack. */
#define CS_MAX_NODES 65536
#define CS_MAX_NICS_PER_NODE 144
#define CS_NODES_EXPECTED "a number of nodes from 1 to " G_STRINGIFY(CS_MAX_NODES)
#define CS_NICS_EXPECTED "a number of NICs per node from 1 to " G_STRINGIFY(CS_MAX_NICS_PER_NODE)

/* NVLink bridges of the PCIe cards (--nvlink-bridge): unset is the
 * preset's default (none for pcie, pairs for pcie-nvlink-pair). */
typedef enum { CS_BRIDGE_UNSET = 0, CS_BRIDGE_NONE, CS_BRIDGE_PAIRS } cs_nvlink_bridge_t;

typedef struct {
    const char *gpu;         /* pcie preset: GPU model (default per preset) */
    int gpus;                /* pcie preset: GPUs per node (default 8); any preset: 0 = all */
    int sockets;             /* pcie preset: 1 or 2 (default 2) */
    const char *cpu;         /* pcie preset: x86 CPU part (cs_cpu_part_find_x86); NULL = by PCIe generation */
    int p2p;                 /* pcie preset: 1 on, 0 off, -1 = the GPU's default */
    cs_nvlink_bridge_t nvlink_bridge; /* pcie presets: bridges on GPU pairs */
    int nodes;               /* >= 1 (default 1) */
    const char *nic;         /* NIC type name (cs_nic_type_find); NULL = preset's */
    int nics_per_node;       /* 0 = preset's (pcie: one NIC with --nic) */
    const char *fabric;      /* "rail" or "fat-tree"; NULL = rail if NICs per node > 1 */
    double oversubscription; /* >= 1; 0 = 1 */
} cs_build_opts_t;

void cs_build_opts_init(cs_build_opts_t *o);

/* Builds a finished topology from a preset name. Unknown names or bad
 * options: an error naming what was expected ("collsim: --topo: unknown
 * preset 'x'; expected one of ..."). */
cs_topo_t *cs_preset_build(const char *name, const cs_build_opts_t *o, GError **err);
gboolean cs_preset_exists(const char *name);
const char *cs_preset_names(void);   /* comma-separated */
const char *cs_preset_doc(const char *name);

/* Whether a preset is built from the node options gpu, sockets, cpu, p2p and
 * nvlink-bridge (the pcie presets); the others are fixed machines whose
 * GPUs, sockets and GPU-to-GPU links come from the vendor, so those options
 * are an error with them. cs_preset_node_option_refusal returns that error's text
 * ("applies to the pcie preset only (...); expected no OPTION with NAME"),
 * or NULL when the preset takes the option. */
gboolean cs_preset_takes_node_options(const char *name);
char *cs_preset_node_option_refusal(const char *name, const char *option);

/* Turns a one-node topology (from a preset or a file) into a cluster of
 * o->nodes copies joined by NICs and a fabric, honouring nic / nics_per_node
 * / fabric / oversubscription. Used for files with --nodes too. */
cs_topo_t *cs_cluster_build(const cs_topo_t *node, const cs_build_opts_t *o, GError **err);

#endif
