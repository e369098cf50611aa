/* The network load of one call, in closed form: each channel's network
 * edges (ring neighbours on different nodes, Tree and NVLSTree edges
 * between nodes) routed exactly as the flow engine routes them (the shared
 * network view of cs_flow_net.c: GPU -> NIC path, the NIC the channel
 * uses, the fabric route with the channel as ECMP hash, NIC -> GPU), every
 * resource loaded with the bytes the channels put on it per byte of the
 * call, and the most loaded resource (bytes / capacity). Used by the
 * analytic engine for its network bandwidth term and its bottleneck;
 * docs/model-analytic.md. */
#ifndef CS_FABRIC_LOAD_H
#define CS_FABRIC_LOAD_H

#include "sim/cs_engine.h"

typedef struct cs_fabric_load cs_fabric_load_t;

/* The most loaded network resource of one call shape. Loads are wire
 * bytes (link efficiencies applied, protocol wire efficiency not) per byte
 * of NCCL's nBytes S. */
typedef struct {
    double spb;          /* seconds per byte of S on the most loaded resource; 0: no network edge */
    int res;             /* that resource (cs_flow_res_* numbering), -1 none */
    double nic_spb;      /* ... on the busiest NIC port (NIC -> switch), 0 none */
    double wire_lat;     /* mean over the network edges of their links' and switches' latency, s */
    const char *skipped; /* not NULL: the call's edges could not be routed, and why */
    double net_edges;    /* network connections the call's channels open (edges between nodes) */
    double net_wire;     /* wire bytes on all network links together per byte of S (each hop counted) */
} cs_fabric_bound_t;

/* Per job; NULL with *err set when the network view cannot be built. */
cs_fabric_load_t *cs_fabric_load_new(const cs_engine_job_t *job, GError **err);
void cs_fabric_load_free(cs_fabric_load_t *fl);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(cs_fabric_load_t, cs_fabric_load_free)

/* The bound of a decision (computed once per algorithm and channel count,
 * then remembered). The channels are taken to carry S/nch each. PAT is
 * priced on the ring's routes. */
void cs_fabric_load_bound(cs_fabric_load_t *fl, const cs_decision_t *d, cs_fabric_bound_t *b_p);

/* One network link the bound of a decision loaded. */
typedef struct {
    int res;             /* the link (cs_flow_res_* numbering: a topology link) */
    double load;         /* wire bytes per byte of S (link efficiency applied, protocol wire efficiency not) */
    double cap;          /* bytes/s */
} cs_fabric_link_load_t;

/* The network links (NIC ports, leaf, spine and core links) the bound of
 * 'd' priced, with their loads, in link order; *n_p entries (0: none, e.g.
 * the edges were not routed). Built on the first request for a decision
 * (algorithm, channels), not by cs_fabric_load_bound, and kept by fl. */
const cs_fabric_link_load_t *cs_fabric_load_links(cs_fabric_load_t *fl, const cs_decision_t *d, int *n_p);

/* A resource's name ("leaf0 -> spine1 (net)"); g_free it. */
char *cs_fabric_load_res_name(const cs_fabric_load_t *fl, int res);

#endif
