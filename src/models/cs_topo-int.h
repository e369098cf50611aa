/* Private to the topology area (cs_topo.c, cs_paths.c): the state that
 * cs_topo_finish() derives and that the public struct does not show.
 * cs_topo_new() allocates this larger struct; a cs_topo_t pointer is the
 * address of its first member, so never allocate a cs_topo_t elsewhere. */
#ifndef CS_TOPO_INT_H
#define CS_TOPO_INT_H

#include "models/cs_topo.h"

typedef struct {
    cs_topo_t pub;               /* must stay first */
    GHashTable *names;           /* name -> device index + 1, after finish */

    /* Devices of node n: node_devs[node_dev_off[n] .. node_dev_off[n+1]-1],
     * in index order; NICs of node n, in local order, likewise. */
    int *node_dev_off, *node_devs;
    int *dev_pos;                /* device -> position in its node's list, -1 */
    int *node_nic_off, *node_nics;

    /* Fabric routing tables, built lazily by cs_paths.c (logically const,
     * so guarded by a lock) and freed with the topology. */
    GMutex route_lock;
    void *route;
    GDestroyNotify route_free;

    /* Intra-node searches already made (cs_paths.c cs_path_intra),
     * likewise built lazily, logically const, under their own lock. */
    GMutex intra_lock;
    void *intra;
    GDestroyNotify intra_free;
} cs_topo_priv_t;

static inline cs_topo_priv_t *cs_topo_priv(const cs_topo_t *t)
{
    return (cs_topo_priv_t *)t;
}

#endif
