/* Paths between devices and NCCL's path classification (paths.cc, v2.28.9):
 * LOC, NVL, NVB, C2C, PIX, PXB, P2C, PXN, PHB, SYS, NET, DIS. */
#ifndef CS_PATHS_H
#define CS_PATHS_H

#include "models/cs_topo.h"

typedef enum {
    CS_PATH_LOC = 0, CS_PATH_NVL = 1, CS_PATH_NVB = 2, CS_PATH_C2C = 3,
    CS_PATH_PIX = 4, CS_PATH_PXB = 5, CS_PATH_P2C = 6, CS_PATH_PXN = 7,
    CS_PATH_PHB = 8, CS_PATH_SYS = 9, CS_PATH_NET = 10, CS_PATH_DIS = 11
} cs_path_type_t;

const char *cs_path_type_name(cs_path_type_t p);          /* "NVL", "PIX", ... */
gboolean cs_path_type_parse(const char *s, cs_path_type_t *p_p); /* names, or NCCL's old integers 0-5 */

#define CS_PATH_MAX_HOPS 32

typedef struct {
    cs_path_type_t type;
    double bw;           /* physical bottleneck, bytes/s */
    double nccl_bw;      /* NCCL's bottleneck, GB/s */
    double lat;          /* sum of link latencies, seconds */
    int nhops;
    int links[CS_PATH_MAX_HOPS];   /* link indices, src to dst */
} cs_path_t;

/* Intra-node path between two devices of the same node, chosen as NCCL's
 * ncclTopoSetPaths does: best (lowest) path type first, then higher
 * bandwidth, then fewer hops; GPUs
 * are crossed only by NVLink-to-NVLink hops (NVB), and not at all when
 * nvb_disable. Returns FALSE (type DIS) if there is none. */
gboolean cs_path_intra(const cs_topo_t *t, int src, int dst, gboolean nvb_disable, cs_path_t *p_p);

/* Path from a GPU to a NIC of its node (for GDR and NIC placement) and the
 * network route between two NICs through the fabric (ECMP choice by
 * 'hash'). */
gboolean cs_path_net(const cs_topo_t *t, int nic_a, int nic_b, guint32 hash, cs_path_t *p_p);
/* Every route cs_path_net can pick between two NICs (the shortest routes,
 * each choice of equal-cost links), at most 'max', in the order of the
 * candidates at each hop: for adaptive routing. Returns how many. */
int cs_path_net_all(const cs_topo_t *t, int nic_a, int nic_b, cs_path_t *out, int max);

/* Per-node cache of GPU<->GPU and GPU<->NIC intra paths, built once. */
/* TRUE if the GPU device reaches a CPU over NVLink-C2C (Grace Hopper,
 * Grace Blackwell, GB10): its loads and stores to host memory are
 * coherent C2C traffic, not PCIe reads. */
gboolean cs_path_gpu_c2c(const cs_topo_t *t, int gpu);

typedef struct cs_path_cache cs_path_cache_t;
cs_path_cache_t *cs_path_cache_new(const cs_topo_t *t, gboolean nvb_disable);
void cs_path_cache_free(cs_path_cache_t *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(cs_path_cache_t, cs_path_cache_free)
/* GPU rank to GPU rank on the same node, GPU rank to NIC (local index). */
const cs_path_t *cs_path_cache_gpu(const cs_path_cache_t *c, int rank_a, int rank_b);
const cs_path_t *cs_path_cache_nic(const cs_path_cache_t *c, int rank, int nic_local);

#endif
