/* Private to the preset and cluster builders (cs_presets.c,
 * cs_preset_nodes.c, cs_cluster.c): device/link helpers and the node
 * builder table. */
#ifndef CS_PRESETS_INT_H
#define CS_PRESETS_INT_H

#include "models/cs_presets.h"


/* Physical latency of one intra-node hop; the protocol costs NCCL adds
 * (hwLat) live in the parameter set, not here. */
#define CS_PB_LAT_NVLINK 0.0
#define CS_PB_LAT_PCIE   0.0
#define CS_PB_LAT_SYS    0.0

int cs_pb_gpu(cs_topo_t *t, const cs_gpu_model_t *m, int local, int p2p_force);
int cs_pb_plain(cs_topo_t *t, cs_dev_kind_t kind, const char *name);
int cs_pb_cpu(cs_topo_t *t, const cs_cpu_part_t *cpu, int socket);
/* A NIC of the given type: RDMA types are named mlx5_<local> (ConnectX
 * driver naming, what NCCL_IB_HCA matches), others eth<local>. */
void cs_pb_nic_fill(cs_device_t *d, const cs_nic_type_t *nt, int local);
int cs_pb_nic(cs_topo_t *t, const cs_nic_type_t *nt, int local);
int cs_pb_pci(cs_topo_t *t, int a, int b, int gen, int width);
int cs_pb_nvl(cs_topo_t *t, int a, int b, int count, double per_link_bw);
int cs_pb_sys(cs_topo_t *t, int a, int b, const cs_cpu_part_t *cpu);
/* NVLink-C2C between a GPU and its CPU: bw bytes/s per direction. */
int cs_pb_c2c(cs_topo_t *t, int gpu, int cpu, double bw);

/* The node presets. A builder returns an unfinished one-node topology
 * (node 0, names without a node prefix) with its description set. */
typedef cs_topo_t *(*cs_node_builder_t)(const cs_build_opts_t *o, GError **err);

typedef struct {
    const char *name;
    const char *doc;           /* one line for --help and docs */
    const char *nic;           /* the NIC type the node ships with, or NULL */
    cs_node_builder_t build;
    gboolean node_options;     /* built from --gpu/--sockets/--p2p/--nvlink-bridge
                                * (the PCIe presets); others are fixed machines */
} cs_node_preset_t;

/* Range checks of the options shared by presets and --nodes on files. */
gboolean cs_build_opts_check(const cs_build_opts_t *o, GError **err);

const cs_node_preset_t *cs_node_preset_find(const char *name);
const cs_node_preset_t *cs_node_preset_at(int i);   /* NULL past the end */

#endif
