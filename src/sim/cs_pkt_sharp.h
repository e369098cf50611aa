/* SHARP in-switch aggregation on the packet network (issue #14 item 5):
 * NCCL's CollNet all-reduce over InfiniBand, its reduction done by the
 * switches of an aggregation tree (docs/model-packet.md, "SHARP").
 *
 * A group is one SHARP reduction stream (a CollNet channel and head: the
 * flow engine's ROOT flow); its members are the nodes' NICs, each with its
 * route up the rail's tree (the flow engine's: the union of the routes to
 * the first node's NIC, cs_flow_net.c). Every switch on a route has an
 * aggregation node (AN) for the group. Each tree edge (a child, NIC or AN,
 * to its parent AN) is a reliable connection each way: an RC QP of the
 * net up and one down, over the real links (credits, contention, ACKs,
 * counters apply). SHARP's ANs are InfiniBand end-nodes in the switch
 * that reach their children over reliable transport (Graham et al.,
 * "Scalable Hierarchical Aggregation Protocol (SHArP)", COMHPC 2016; as
 * recalled, not re-read here).
 *
 * Up: a member's message (a CollNet step's slice) is posted on its NIC's
 * QP to its leaf AN. An AN counts the packets of each child in order; the
 * k-th packets of all its children reduce into one, which it sends to its
 * parent as soon as the last of them arrived (streaming aggregation,
 * SHARPv2's SAT: packet by packet, not message by message). The root's
 * reduced packet k is the result's packet k: it goes down at once, each
 * AN sending a copy to every child (SHARP's result distribution down the
 * tree; modelled as per-edge reliable sends, not IB multicast). A
 * member's up message completes when the root has reduced its last
 * packet; its down message when its NIC has the result's last packet (and
 * the member has posted it: NCCL's receive for it).
 *
 * Assumptions (the header of a run says so):
 * - an AN reduces at line rate: a reduced packet leaves as the last input
 *   arrives (store and forward, as every switch here), no ALU time;
 * - an AN's buffer is not bounded of its own: it holds one packet's worth
 *   per (group, packet) until every child's packet arrived, and the
 *   packets outstanding per group are bounded by the hosts (NCCL's
 *   CollNet steps in flight, the engine's lane window), not by SHARP's
 *   outstanding-operation limit, for which no public figure was found.
 *   The high-water of packets held per AN is counted (memory follows
 *   packets in flight);
 * - the data's VL and the QPs' settings (MTU, ACKs, timeout) are NCCL's
 *   connections'; a SHARP header beyond IB's is not added. */
#ifndef CS_PKT_SHARP_H
#define CS_PKT_SHARP_H

#include <glib.h>

#include "sim/cs_pkt_net.h"

typedef struct cs_pkt_sharp cs_pkt_sharp_t;

/* What the owner hears: a member's up message left its NIC (sent), its
 * up message was reduced at the root or its down message arrived
 * (delivered). 'lane' is the owner's id for the member's up or down
 * stream. */
typedef struct {
    void (*sent)(void *ctx, int lane, cs_time_t now);
    void (*delivered)(void *ctx, int lane, cs_time_t now);
} cs_pkt_sharp_hooks_t;

/* One hop of a member's route up its tree: the net port from child to
 * parent, the port back, the child's node and the parent's (a switch). */
typedef struct {
    int up, down;
    int child, parent;
} cs_pkt_sharp_hop_t;

/* Over 'net' (a credit net: InfiniBand); the tree's QPs get 'qc'
 * (reorder off: one route). Marks the switches it uses as QP endpoints. */
cs_pkt_sharp_t *cs_pkt_sharp_new(cs_pkt_net_t *net, const cs_pkt_qp_cfg_t *qc, const cs_pkt_sharp_hooks_t *hooks,
                                 void *ctx);
void cs_pkt_sharp_free(cs_pkt_sharp_t *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(cs_pkt_sharp_t, cs_pkt_sharp_free)

/* Member 'lane' of group 'group' (any int the owner picks), its up
 * (up TRUE) or down stream, with its route up from its NIC to the root
 * (hops[0].child its NIC's host node). The tree's QPs are added to the
 * net as edges first appear, on priority (InfiniBand: VL) 'prio' (its
 * job's: a group is one job's; the other fields from the 'qc' given to
 * cs_pkt_sharp_new); new_qp(ctx, qp, lane) is called for each
 * (the owner's QP table). Returns FALSE with 'why' (static text) when the
 * routes of a group do not form one tree (a node with two parents, two
 * roots) or a QP cannot be added. Before the run. */
gboolean cs_pkt_sharp_member(cs_pkt_sharp_t *s, int group, int lane, gboolean up, int prio,
                             const cs_pkt_sharp_hop_t *hops, int nhops, void (*new_qp)(void *ctx, int qp, int lane), void *qctx, const char **why);
/* Whether 'lane' is a member's stream (then the owner sends through
 * cs_pkt_sharp_send), and whether a QP of the net is the tree's. */
gboolean cs_pkt_sharp_lane(const cs_pkt_sharp_t *s, int lane);
gboolean cs_pkt_sharp_qp(const cs_pkt_sharp_t *s, int qp);
/* A member's next message of 'bytes' at 'now': up, posted on its NIC's
 * QP; down, the result it waits for (sent at once: the switches send). */
void cs_pkt_sharp_send(cs_pkt_sharp_t *s, int lane, guint64 bytes, cs_time_t now);
/* The up stream's rate limit (its node-side share, bits/s of wire). */
void cs_pkt_sharp_rate(cs_pkt_sharp_t *s, int lane, double bps, cs_time_t now);
/* The net's QP hook 'sent' and observer, for the tree's QPs (the owner
 * forwards them; a QP that is not the tree's is ignored). */
void cs_pkt_sharp_qp_sent(cs_pkt_sharp_t *s, int qp, cs_time_t now);
void cs_pkt_sharp_observe(cs_pkt_sharp_t *s, const cs_pkt_t *pkt, cs_time_t now);

/* Counters, summed over groups, per switch node: packets it reduced
 * (each from all its children's), copies it sent down, the most packets
 * it held at once waiting for a slower child. */
typedef struct {
    guint64 reduced, replicated, held_max;
} cs_pkt_sharp_stats_t;
/* FALSE when the node is no group's AN. */
gboolean cs_pkt_sharp_switch_stats(const cs_pkt_sharp_t *s, int node, cs_pkt_sharp_stats_t *out);
int cs_pkt_sharp_ngroups(const cs_pkt_sharp_t *s);

#endif
