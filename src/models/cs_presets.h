/* Preset machines and builders: node presets (dgx1-v100, dgx-a100,
 * dgx-h100, dgx-h800, hgx-h200, dgx-b200), the generic PCIe server, and the
 * cluster builder that replicates a node over a rail or fat-tree fabric.
 * Every number comes from the parts catalogue (cs_hw.c) or a cited vendor
 * document, never from a measured collective result. */
#ifndef CS_PRESETS_H
#define CS_PRESETS_H

#include "models/cs_topo.h"

typedef struct {
    const char *gpu;         /* pcie preset: GPU model (default per preset) */
    int gpus;                /* pcie preset: GPUs per node (default 8); any preset: 0 = all */
    int sockets;             /* pcie preset: 1 or 2 (default 2) */
    int p2p;                 /* pcie preset: 1 on, 0 off, -1 = the GPU's default */
    int nodes;               /* >= 1 (default 1) */
    const char *nic;         /* NIC type name (cs_nic_type_find); NULL = preset's */
    int nics_per_node;       /* 0 = preset's */
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

/* Turns a one-node topology (from a preset or a file) into a cluster of
 * o->nodes copies joined by NICs and a fabric, honouring nic / nics_per_node
 * / fabric / oversubscription. Used for files with --nodes too. */
cs_topo_t *cs_cluster_build(const cs_topo_t *node, const cs_build_opts_t *o, GError **err);

#endif
