/* Rank programs: what each rank of each channel does for one collective
 * call, generated from NCCL's decisions (cs_decide.h) and executed by the
 * simulating engines. Data path facts: reference nccl-model.md section 2
 * (NCCL_STEPS = 8 slots per connection, chunk and slice steps, the ring
 * all-reduce loop of device/all_reduce.h).
 *
 * A program is stored compactly: per channel, the ring order (rank at each
 * position) and the byte count; the per-rank operation lists are expanded
 * on demand by cs_program_op(), so a 16384-rank ring costs nch x nranks
 * integers. Supported shapes: the ring (AllReduce: n-1 reduce-scatter then
 * n-1 all-gather steps per loop; AllGather and ReduceScatter: n-1 steps),
 * the pipelined chain of Broadcast and Reduce (the ring from the root,
 * without the edge back into it), and dataflow programs for Tree, NVLS and
 * NVLSTree all-reduce and for the point-to-point SendRecv and AlltoAll
 * (cs_prog_flow_t below; docs/model-flow.md).
 *
 * Rings and chains: operations of one (channel, position), in the order the channel's CTA
 * runs them: each may consume one unit (a slice) received from the
 * previous position and may send one unit to the next. A sender may be at
 * most 'credit' units ahead of what its receiver has consumed (the 8-slot
 * pipeline: credit = NCCL_STEPS / sliceSteps). */
#ifndef CS_PROGRAM_H
#define CS_PROGRAM_H

#include "models/cs_decide.h"
#include "models/cs_p2p.h"

#define CS_NCCL_STEPS 8   /* device.h NCCL_STEPS */

typedef struct cs_program {
    cs_coll_t coll;
    cs_algo_t algo;
    cs_proto_t proto;
    int nthreads;            /* threads of a channel's CTA (NCCL_NTHREADS); 0 = the protocol's full count */
    gboolean chain;          /* Broadcast/Reduce: a chain from position 0 */
    int nranks, nch;
    int *order;              /* nch x nranks: order[ch * nranks + pos] = rank */
    guint64 *ch_bytes;       /* payload each channel carries (NCCL's nBytes split) */
    guint64 chunk;           /* bytes per rank per step, full loops */
    int slices;              /* units per chunk: chunkSteps / sliceSteps */
    int credit;              /* units a sender may run ahead: NCCL_STEPS / sliceSteps */
    int steps;               /* sending steps per loop: 2(n-1), n-1, or 1 (chain) */
    gboolean reduces;        /* steps combine received data with local data */
    /* Chains on one node: timed as nccl-tests times them, streamed behind
     * the previous back-to-back call, so no per-call pipeline fill: the
     * engines forward a unit on its first bytes (as LL/LL128 chains do)
     * whatever the protocol; see cs_program_new */
    gboolean streamed;
    /* Rings (AllReduce, AllGather, ReduceScatter) on one node: every hop's
     * latency once per call, the units moving at the links' rate without
     * it, as the analytic engine prices them (t_ring); see cs_program_new */
    gboolean latency_once;
    /* Dataflow shapes (Tree AllReduce, NVLS, NVLSTree): 'nflows' > 0 and
     * the ring fields above other than coll/algo/proto/nranks/nch/ch_bytes/
     * chunk/credit are unused. See cs_prog_flow_t. */
    int nflows;              /* all channels together */
    struct cs_prog_flow *flows;
    int *flow_off;           /* nch + 1: channel c owns flows [flow_off[c], flow_off[c+1]) */
    int *dep_off;            /* nflows + 1, into deps */
    struct cs_prog_dep *deps;
    guint64 unit;            /* bytes of the channel's data one unit covers */
    gboolean nvls;           /* flows through the NVSwitch (NVLS, NVLSTree) */
    gboolean p2p;            /* SendRecv/AlltoAll: every flow its own bytes and unit */
    gboolean collnet;        /* CollNetDirect/CollNetChain all-reduce (SHARP) */
} cs_program_t;

/* Dataflow programs: per channel, a set of flows. A flow is one directed
 * stream of units from a sender to a receiver (a tree edge one way, a
 * GPU's NVLS reduction or multicast through the NVSwitch, or one part of
 * a point-to-point send); it sends its units in order, unit u carrying
 * cs_program_flow_bytes(u). Unit u may start when every dependency's unit
 * u - lag has arrived (CS_PROG_LAG_END: its last unit, so the flow starts
 * once that one has wholly arrived), and when the receiver has consumed
 * unit u - credit (a unit is consumed when every flow that depends on it
 * with lag 0 has sent its own unit u; a unit nothing depends on is
 * consumed on arrival).
 *
 * SendRecv and AlltoAll (cs_p2p.h): one flow per part of every send, on
 * the p2p channel NCCL gives that part (cs_p2p_channel), its own bytes
 * and unit (the p2p step: cs_p2p_op's chunk, a network peer's where the
 * peer is on another node); a self send (AlltoAll's round 0) has src ==
 * dst. A channel's CTA runs its works (a round's send and receive) in
 * batches of up to CS_P2P_PER_BATCH rounds of one group of 8, one batch
 * after the other (enqueue.cc ncclAddWorkBatchToPlan; the kernel loads a
 * batch, runs it, then the next): a flow of a batch depends with
 * CS_PROG_LAG_END on every flow of the previous batch of its channel at
 * its sender and at its receiver. A batch's CTA copies a peer's part at
 * each end (the send, the receive) and a self part once: cap_div is the
 * larger of the two ends' batches' copies, the CTA as one pool (p2p_new
 * says why not NCCL's even split of warps). */
#define CS_PROG_LAG_END G_MININT
/* net_local of a point-to-point flow: across nodes it leaves and enters
 * through each GPU's own NIC for its channel (cs_comm_chan_nic with
 * CS_ALGO_P2P, topo.cc ncclTopoGetLocalNet). */
#define CS_PROG_NET_P2P (-2)
typedef enum {
    CS_FLOW_P2P = 0,         /* rank src -> rank dst over their edge */
    CS_FLOW_NVLS_REDUCE,     /* src's slice, reduced by the NVSwitch (multimem.ld_reduce), back to src */
    CS_FLOW_NVLS_MCAST,      /* src's reduced slice multicast to its node's GPUs (multimem.st) */
    /* CollNet (SHARP): head src's slice from its GPU through its NIC up
     * the switches' aggregation tree; the reduction at the tree's root
     * (no resource of its own: the switches reduce at line rate); the
     * result from the root back down to head src. net_local holds the
     * algorithm (CS_ALGO_COLLNET_DIRECT / _CHAIN), whose NIC the head
     * uses (cs_comm_chan_nic). Links the tree shares carry a slice once
     * each way (cs_flow_build_flow_edge: fractional coefficients). */
    CS_FLOW_COLLNET_UP,
    CS_FLOW_COLLNET_ROOT,
    CS_FLOW_COLLNET_DOWN,
} cs_prog_flow_kind_t;

typedef struct cs_prog_flow {
    cs_prog_flow_kind_t kind;
    int src, dst;            /* ranks (NVLS: both the GPU) */
    int net_local;           /* >= 0: NVLSTree, the head index h of a network edge between h-th heads */
    int mem_passes;          /* passes over a unit through the sender's GPU memory */
    double share;            /* fraction of a unit this flow carries (NVLS: 1/heads) */
    double cap_div;          /* the channel's ceiling is divided among this many flows of a GPU */
    double recv_div;         /* point-to-point: the works of its receiver's batch that receive
                              * from another rank, sharing that channel's SHM ceiling (0: 1) */
    guint64 bytes, unit;     /* point-to-point: the part's bytes and step (else 0: share x the channel's) */
    gboolean direct;         /* point-to-point: one copy between the user buffers, no receive out of a
                              * FIFO (cs_comm_p2p_direct: GPUs of one process, NCCL <= 2.22) */
} cs_prog_flow_t;

typedef struct cs_prog_dep {
    int flow;                /* index into flows */
    int lag;                 /* needs unit u - lag of it */
} cs_prog_dep_t;

typedef struct {
    gboolean send;           /* sends a unit to the next position */
    gint64 send_unit;        /* index among this position's sends */
    gint64 consume;          /* index of the previous position's unit it needs; -1 none */
    double bytes;            /* payload of the unit sent (or received) */
    int mem_passes;          /* passes over the unit through GPU memory: 2 copy, 3 reduce */
} cs_prog_op_t;

/* Builds the program of one call. 'orders' (may be NULL): per channel,
 * its ring (nch x nranks, the rank at each position, each node's ranks a
 * block as NCCL's ring search ordered them: cs_comm_ring_order), where
 * the last GPU of a node's block leaves the node and the first enters it;
 * NULL: channel 0's ring (info->ring_order) for every channel. 'root' is
 * the first position of chains. Tree AllReduce, NVLS and NVLSTree
 * AllReduce are dataflow programs (nflows > 0); a Tree channel's chain
 * ends at the GPU its ring leaves the node from (the tree's head). NVLS
 * and NVLSTree: channel 0's order gives each node's NVLS heads first in
 * its block, head h at place h (cs_program_nvls_heads of them; NULL: each
 * node's first GPUs), as cs_flow_prog_orders lists them.
 * SendRecv and AlltoAll (algo P2P) are dataflow programs over the
 * communicator's p2p channels (nch = info->p2p_nch; 'orders' unused).
 * CollNetDirect and CollNetChain AllReduce across nodes are dataflow
 * programs (device/all_reduce.h runCollNet*): Chain per channel the
 * channel's chain up to its head (cs_comm_chan_order: the head last), the
 * head's slice into SHARP and back, and down the chain; Direct per
 * channel and head h (info->collnet_heads per node, the first of each
 * node's block: cs_comm_chan_order) every other GPU's scatter of slice h
 * to head h, the head's reduction into SHARP, the result back and its
 * copy to every other GPU.
 * Errors: CollNet on one node or other than AllReduce, PAT, NVLS other
 * than AllReduce, NVLS across nodes (needs SHARP). */
cs_program_t *cs_program_new(const cs_comm_info_t *info, cs_coll_t coll, const cs_decision_t *d,
                             guint64 nbytes, int root, const int *orders, GError **err);
void cs_program_free(cs_program_t *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(cs_program_t, cs_program_free)

static inline int cs_program_rank(const cs_program_t *p, int ch, int pos)
{ return p->order[(gsize)ch * p->nranks + pos]; }

/* Loops of a channel, and the per-rank chunk of one loop (the last loop's
 * chunk covers what is left). */
gint64 cs_program_nloops(const cs_program_t *p, int ch);
double cs_program_chunk(const cs_program_t *p, int ch, gint64 loop);
/* Operations of one position of a channel, and the op-th of them. */
gint64 cs_program_nops(const cs_program_t *p, int ch, int pos);
void cs_program_op(const cs_program_t *p, int ch, int pos, gint64 op, cs_prog_op_t *op_p);
/* Dataflow programs: units of a channel, and the bytes of the channel's
 * data unit u covers (a flow carries share x that; not point-to-point). */
gint64 cs_program_units(const cs_program_t *p, int ch);
double cs_program_unit_bytes(const cs_program_t *p, int ch, gint64 u);
/* Units flow 'fi' (of channel ch) sends, and the payload of its unit u:
 * what every engine uses, point-to-point or not. */
gint64 cs_program_flow_units(const cs_program_t *p, int ch, int fi);
double cs_program_flow_bytes(const cs_program_t *p, int ch, int fi, gint64 u);
/* Whether the position sends at all / receives at all. */
gboolean cs_program_sends(const cs_program_t *p, int pos);
gboolean cs_program_receives(const cs_program_t *p, int pos);
/* A latency_once ring's latency per call: 'steps' hops at the mean of a
 * channel's edge latencies ('lat': nch x nranks, the edge position pos
 * sends on, in any unit), the slowest channel's; 0 for other programs. */
double cs_program_latency_once(const cs_program_t *p, const double *lat);

/* NCCL's double binary tree (trees.cc ncclGetDtree): the parent of node r
 * in tree 0 or 1 over n nodes, -1 for a root. */
int cs_dtree_parent(int n, int tree, int r);
/* The tree (0 or 1) channel c of nch takes in Tree and NVLSTree programs. */
int cs_program_tree_of(int nch, int c);

/* NVLS and NVLSTree: the NVLS heads per node, NCCL's nvls->nHeads, the
 * GPUs that reduce, multicast and (NVLSTree) meet the other nodes over
 * their NICs: the first GPUs of the NVLS graph's channels (connect.cc
 * ncclTopoPreset nvlsHeads, one per channel as NCCL's search finds them),
 * at most NCCL_MAX_NVLS_ARITY (32: search.cc), so 32 of a 72-GPU NVL72
 * rack: info->nvls_nch, at most ppn (ppn where it is 0: no search). */
int cs_program_nvls_heads(const cs_comm_info_t *info);

#endif
