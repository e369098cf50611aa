/* A minimal packet network to exercise packets, framing and ports: hosts
 * and switches joined by one-way links (an egress port each), flows that
 * stream a message from a host along a fixed route, switches that forward
 * each packet to the next port of its route, and a sink at the destination
 * host counting delivered payload. Switches may mark ECN at egress
 * (cs_pkt_ecn.h) and flows may run DCQCN (cs_pkt_dcqcn.h).
 *
 * A flow is a reliable-connected queue pair (QP) doing RDMA WRITEs:
 * messages are posted to it over time (cs_pkt_net_qp_post) and leave in
 * order, segmented at its MTU. With ACKs on (ack_interval > 0) the
 * receiver accepts packets only in PSN order, acknowledges every
 * ack_interval-th packet and each message's last, drops a packet that
 * comes out of order and NAKs once per gap; the sender goes back to the
 * NAKed PSN (go-back-N), and to its oldest unacknowledged one when its
 * retransmission timer expires; after retry_cnt retries the QP fails, as
 * an RC QP with IBV_WC_RETRY_EXC_ERR does. cs_pkt_net_add_flow is a QP
 * with one message, no ACKs, posted at its start.
 *
 * A switch's buffer is unbounded until cs_pkt_net_set_buffer gives it a
 * shared-buffer MMU (cs_pkt_mmu.h): then each arriving packet is admitted
 * to its (ingress link, priority) group or dropped, leaves the accounting
 * as it starts on its egress wire, and the MMU's XOFF/XON drive PFC
 * (cs_pkt_pfc.h) on the ingress link: pause frames go back on the link
 * the other way (found when links are added; none, no pause), ahead of
 * its data. Every link has a PFC state; its sender honours the pauses.
 *
 * A host drains what reaches it at once, unless cs_pkt_net_set_host_rx
 * gives it a receive path (the NIC's receive buffer, drained into the
 * host at its PCIe/GPU path's rate, cs_pkt_host.c): then a slow path
 * backs up into the NIC's buffer, which pauses the link into it on a
 * lossless priority and drops at full on a lossy one. ACKs and CNPs are
 * the NIC's own business and skip it.
 *
 * Never hangs: a cycle of paused links holding each other's packets (a
 * cyclic buffer dependency) that nothing moves on for the detection time
 * stops the net (cs_pkt_net_deadlock, a hook); a net where every packet
 * left waits for good (a receive path stalled forever, or such a cycle)
 * and only pause refreshes would still run is quiet: cs_pkt_net_next
 * says CS_TIME_NEVER and cs_pkt_net_run(CS_TIME_NEVER) returns, with the
 * stall reported the same way (cs_pkt_stuck.c).
 *
 * A flow keeps CS_PKT_NET_WINDOW packets in its host's egress queue and
 * makes the next one as one leaves, so the link never idles for lack of a
 * packet and memory follows packets in flight, not message size. */
#ifndef CS_PKT_NET_H
#define CS_PKT_NET_H

#include <glib.h>

#include "sim/cs_evq.h"
#include "sim/cs_pkt.h"
#include "sim/cs_pkt_dcqcn.h"
#include "sim/cs_pkt_ecn.h"
#include "sim/cs_pkt_frame.h"
#include "sim/cs_pkt_mmu.h"
#include "sim/cs_pkt_pfc.h"
#include "sim/cs_pkt_credit.h"
#include "sim/cs_pkt_ibcc.h"
#include "sim/cs_pkt_port.h"

#define CS_PKT_NET_WINDOW 2
/* Cable length from a link's propagation delay: ~5 ns/m (fabric-models.md
 * section 3: Cisco 476 ns/100 m twinax, 513 ns/100 m single-mode fibre). */
#define CS_PKT_NET_PS_PER_M 5000.0

/* A CNP's payload (fabric-models.md section 1: a 64-B control packet;
 * the brief's figure, framing added as for data). */
#define CS_PKT_CNP_PAYLOAD 64

enum {
    CS_PKT_EV_FLOW_START = 0x200,     /* a = flow id */
    CS_PKT_EV_FLOW_PACE,              /* a = flow id: a paced flow's rate limiter */
    CS_PKT_EV_DCQCN_TIMER,            /* a = flow id: its increase timer */
    CS_PKT_EV_QP_RTO,                 /* a = flow id: its retransmission timer */
    CS_PKT_EV_HOST_RX,                /* a = node: its receive path drained a packet, or a stall ended */
};

/* A ConnectX NIC's lossless receive buffer: 156096 B as `mlnx_qos` shows
 * it (fabric-models.md section 3, [CN]). */
#define CS_PKT_NIC_RX_BUFFER 156096

/* The retransmission timeout of an RC QP: 4.096 us x 2^timeout (IBA
 * 9.7.6.1.3 local ACK timeout; NCCL sets NCCL_IB_TIMEOUT, default 20:
 * 4.3 s, net_ib/connect.cc). */
#define CS_PKT_QP_TIMEOUT_PS(t) ((cs_time_t)4096000 << (t))

typedef struct cs_pkt_net cs_pkt_net_t;

/* What stopped or quieted the net for good (see above). */
typedef enum {
    CS_PKT_STUCK_NONE = 0,
    CS_PKT_STUCK_CYCLE,               /* a cyclic buffer dependency: the net stopped */
    CS_PKT_STUCK_STALL,               /* everything left waits on a receive path stalled for good */
} cs_pkt_stuck_kind_t;

typedef struct {
    cs_pkt_stuck_kind_t kind;
    int prio;
    cs_time_t detected;
    /* CYCLE: its links in order (each enters the node the next leaves),
     * from the one with the lowest id; STALL: the longest chain of links
     * paused for good, ending at the stalled host (none when the links
     * are not paused, e.g. its switch's watchdog drops instead) */
    int nlinks;
    const int *links;
    const int *nodes;                 /* nodes[i]: the node links[i] leaves */
    int host;                         /* STALL: the stalled host; CYCLE: -1 */
} cs_pkt_deadlock_t;

typedef void (*cs_pkt_net_deadlock_fn)(void *ctx, const cs_pkt_deadlock_t *dl);
typedef void (*cs_pkt_net_sample_fn)(void *ctx, cs_time_t now);

/* Called as each packet reaches its destination host and is accepted
 * (before it is freed); a packet kept past a gap, once the gap fills. */
typedef void (*cs_pkt_net_observer_fn)(void *ctx, const cs_pkt_t *pkt, cs_time_t now);

cs_pkt_net_t *cs_pkt_net_new(void);
void cs_pkt_net_free(cs_pkt_net_t *net);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(cs_pkt_net_t, cs_pkt_net_free)

int cs_pkt_net_add_host(cs_pkt_net_t *net);
int cs_pkt_net_add_switch(cs_pkt_net_t *net);
/* A one-way link from node 'from' to node 'to'; returns its egress port id. */
int cs_pkt_net_add_link(cs_pkt_net_t *net, int from, int to, const cs_pkt_port_cfg_t *cfg);

typedef struct {
    guint64 bytes;                    /* message size */
    guint32 mtu;
    int prio;
    gboolean write;                   /* an RDMA WRITE: RETH on the first packet */
    cs_pkt_frame_t frame;
    cs_time_t start;
} cs_pkt_flow_cfg_t;

/* A flow along the ports 'route' (copied): the first leaves a host, each
 * next leaves the node the last reaches, the last reaches a host. Returns
 * the flow id, or -1 for an invalid route or configuration. */
int cs_pkt_net_add_flow(cs_pkt_net_t *net, const int *route, int nroute,
                        const cs_pkt_flow_cfg_t *cfg);

/* Gives switch 'sw' a shared buffer (once; before or after its links are
 * added). 'headroom' per lossless PG of each ingress link: -1 for the
 * formula (its rate, its cable from its propagation delay, the largest
 * RoCEv2 frame), else forced bytes. Returns 0, or -1 for a bad
 * configuration or node. */
int cs_pkt_net_set_buffer(cs_pkt_net_t *net, int sw, const cs_pkt_mmu_cfg_t *cfg, gint64 headroom);
/* PFC settings used by every link (default cs_pkt_pfc_cfg_init): pause
 * timers, the watchdog (on switch egress links) and the deadlock
 * detection time. Before the run starts. */
void cs_pkt_net_set_pfc(cs_pkt_net_t *net, const cs_pkt_pfc_cfg_t *cfg);
/* InfiniBand's link layer instead of PFC (cs_pkt_credit.h): every link's
 * receiving end has 'blocks[vl]' credits of 64 B per VL (a switch port's
 * input buffer, a NIC's receive buffer), flow-control packets go back on
 * the link the other way, and nothing is dropped or paused. Switches take
 * no shared buffer (cs_pkt_net_set_buffer refuses) and mark nothing; a
 * host's receive path holds its packets' credits until it drains them.
 * Before any link is added. Returns 0, or -1 (links exist, a buffer was
 * set, or refresh_ps <= 0). */
typedef struct {
    guint32 blocks[CS_PKT_PRIOS];
    cs_time_t refresh_ps;             /* periodic update; 0: CS_PKT_CREDIT_REFRESH_DEFAULT */
    /* > 0: instead of blocks[], each link's buffer per VL holds this long
     * of its own line rate, and never less than its credit loop (a
     * 'frame' and a flow-control packet at its rate, its propagation both
     * ways) and two frames more */
    double buffer_s;
    guint32 frame;                    /* the largest frame, wire bytes (with buffer_s) */
} cs_pkt_credit_cfg_t;
int cs_pkt_net_set_credit(cs_pkt_net_t *net, const cs_pkt_credit_cfg_t *cfg);
gboolean cs_pkt_net_credit(const cs_pkt_net_t *net);
/* Per link and VL: flow-control packets sent back for it, time its sender
 * waited for credits with a packet ready, credits in use at its far end,
 * and its buffer (credits). */
guint32 cs_pkt_net_credit_buffer(const cs_pkt_net_t *net, int link, int vl);
guint64 cs_pkt_net_credit_fc_sent(const cs_pkt_net_t *net, int link, int vl);
cs_time_t cs_pkt_net_credit_starved_ps(const cs_pkt_net_t *net, int link, int vl);
guint32 cs_pkt_net_credit_used(const cs_pkt_net_t *net, int link, int vl);

/* InfiniBand congestion control (cs_pkt_ibcc.h) on a credit net: every
 * switch egress marks FECN by 'cfg' (the threshold against the link's
 * far-end buffer per VL), receivers return BECNs, and every QP added
 * afterwards is paced by its CCTI's inter-packet delay. Before any QP is
 * added. Returns 0, or -1 (not a credit net, QPs exist, invalid cfg). */
int cs_pkt_net_set_ibcc(cs_pkt_net_t *net, const cs_pkt_ibcc_cfg_t *cfg);
/* Per QP: BECNs its sender received and its receiver sent, its CCTI now,
 * the highest it reached and its time-average over [0, now]; zeros
 * without IB CC. */
typedef struct {
    guint64 becns_received, becns_sent;
    guint32 ccti, ccti_max;
    double ccti_avg;
} cs_pkt_qp_ibcc_t;
void cs_pkt_net_qp_ibcc(cs_pkt_net_t *net, int qp, cs_pkt_qp_ibcc_t *out);
/* The port a QP's packets leave its host by (its route's first). */
int cs_pkt_net_qp_port(const cs_pkt_net_t *net, int qp);
/* Whether the link's VL head waits for credits now (FALSE off IB). */
gboolean cs_pkt_net_credit_starving(const cs_pkt_net_t *net, int link, int vl);

/* The run's seed: RED draws (each link's generator from it and the link
 * id). Default 0. */
void cs_pkt_net_set_seed(cs_pkt_net_t *net, guint64 seed);
/* Switch 'sw' marks ECN at every egress link, present and later: with
 * 'cfg', or NULL for the defaults of each link's rate
 * (cs_pkt_ecn_cfg_for_rate). Returns 0, or -1. */
int cs_pkt_net_set_ecn(cs_pkt_net_t *net, int sw, const cs_pkt_ecn_cfg_t *cfg);
/* Flow 'flow' runs DCQCN (cs_pkt_dcqcn.h), before it starts: its
 * receiver is a notification point (CNPs back along the reverse links of
 * its route, which must exist), its host paces it at the reaction
 * point's rate. Returns 0, or -1. */
int cs_pkt_net_set_dcqcn(cs_pkt_net_t *net, int flow, const cs_pkt_dcqcn_cfg_t *cfg);

void cs_pkt_net_set_observer(cs_pkt_net_t *net, cs_pkt_net_observer_fn fn, void *ctx);

/* ---- hosts' receive paths ---- */
/* Host 'host' gets a receive buffer of 'buffer_bytes' per priority (0:
 * CS_PKT_NIC_RX_BUFFER) drained into the host at 'bps' of payload (> 0).
 * On a lossless priority (those of the switch its link comes from, else
 * priority 3) the NIC pauses that link at XOFF = buffer - headroom (the
 * link's, as a switch computes it) and lets it go at XON = XOFF - the
 * largest frame, the rule of the Linux mlx5 driver (port_buffer.c:
 * xoff = size - xoff headroom, xon = xoff - max MTU); a packet that finds
 * its priority full is dropped. Returns 0, or -1 (not a host, bps <= 0,
 * set twice, or a buffer below headroom + the largest frame on a
 * lossless priority when its link exists already, as mlx5 refuses). */
int cs_pkt_net_set_host_rx(cs_pkt_net_t *net, int host, double bps, guint64 buffer_bytes);
/* The host's receive path drains nothing in [from, until) (CS_TIME_NEVER:
 * for good): a drain that would overlap it waits for 'until'; one under
 * way when it is set finishes. One stall per host (a new one replaces
 * it). Needs a receive path. Returns 0, or -1. */
int cs_pkt_net_host_stall(cs_pkt_net_t *net, int host, cs_time_t from, cs_time_t until);
/* Its buffer now (wire bytes of a priority), high-water and time-average
 * from 0 to now (all priorities), drops, and the thresholds. */
guint64 cs_pkt_net_host_rx_bytes(const cs_pkt_net_t *net, int host, int prio);
guint64 cs_pkt_net_host_rx_max(const cs_pkt_net_t *net, int host);
double cs_pkt_net_host_rx_avg(const cs_pkt_net_t *net, int host);
guint64 cs_pkt_net_host_rx_drops(const cs_pkt_net_t *net, int host, int prio);
void cs_pkt_net_host_rx_thresholds(const cs_pkt_net_t *net, int host, guint64 *xoff, guint64 *xon);

/* ---- never hang ---- */
/* What stopped or quieted the net, NULL while nothing did (the first
 * report stays). The hook runs once, as it is detected. */
const cs_pkt_deadlock_t *cs_pkt_net_deadlock(const cs_pkt_net_t *net);
void cs_pkt_net_set_deadlock_hook(cs_pkt_net_t *net, cs_pkt_net_deadlock_fn fn, void *ctx);

/* ---- counters ---- */
typedef struct {
    guint64 tx_pkts, tx_bytes;        /* packets (data, ACK, CNP) and their wire bytes sent */
    guint64 xoff_sent, xon_sent;      /* pause frames for this link sent by its far end */
    guint64 pause_received;           /* ... and received by its sender */
    cs_time_t paused_ps;              /* time its sender was paused, up to now */
    guint64 drops_buffer;             /* arrived over it and found no room (switch or NIC buffer) */
    guint64 drops_watchdog;           /* dropped by its stormed queue */
    guint64 watchdog_trips;
    guint64 ecn_marks;                /* InfiniBand CC: FECN marks */
    guint64 queue_max;                /* its egress queue, wire bytes */
    double queue_avg;                 /* ... averaged over time from 0 to now */
} cs_pkt_link_stats_t;

void cs_pkt_net_link_stats(const cs_pkt_net_t *net, int link, int prio, cs_pkt_link_stats_t *out);
/* A switch's buffer: high-water and time-average from 0 to now (bytes);
 * both 0 for an unbounded one. */
void cs_pkt_net_switch_buffer(const cs_pkt_net_t *net, int sw, guint64 *max, double *avg);
/* The rate a QP may send at now (bits/s of wire bytes): the lower of its
 * DCQCN rate (when limited) and its host cap, else its link's rate. */
double cs_pkt_net_qp_rate(const cs_pkt_net_t *net, int qp);

typedef enum {
    CS_PKT_LINK_RUNNING = 0,
    CS_PKT_LINK_PAUSED,               /* its sender honours a pause on the priority */
    CS_PKT_LINK_STORMED,              /* its watchdog tripped: pauses ignored, packets dropped */
} cs_pkt_link_state_t;
cs_pkt_link_state_t cs_pkt_net_link_state(const cs_pkt_net_t *net, int link, int prio);

/* ---- timelines ---- */
/* Calls fn(ctx, t) at every t = k x period (k >= 1) at which a packet is
 * queued or in flight anywhere, before the events at t; never while the
 * net is idle, never as an event (cs_pkt_net_next never returns its
 * times) and without changing anything else. period 0 or fn NULL: off. */
void cs_pkt_net_set_sampler(cs_pkt_net_t *net, cs_time_t period, cs_pkt_net_sample_fn fn, void *ctx);

/* ---- queue pairs ---- */
typedef struct {
    guint32 mtu;
    int prio;
    cs_pkt_frame_t frame;
    guint32 ack_interval;             /* ACK every n-th packet and each message's last; 0: none (no recovery) */
    cs_time_t timeout;                /* retransmission timeout (CS_PKT_QP_TIMEOUT_PS); 0: none */
    int retry_cnt;                    /* retries before the QP fails (NCCL_IB_RETRY_CNT, 7) */
    /* selective repeat (needs ACKs): the receiver keeps the packets after
     * a gap and NAKs each gap once with its first PSN and length; the
     * sender sends again only those PSNs. A timeout still goes back to
     * the oldest unacknowledged packet. The observer sees each packet
     * once, as it is accepted in order: a kept one when the gap before it
     * fills (at that time, as a copy of the filling packet with its own
     * PSN and payload). FALSE: go-back-N */
    gboolean selective;
    /* adaptive routing's receiver: a packet past a gap is kept and the gap
     * is never NAKed (packets of one QP take different routes, so a gap is
     * reordering; on a lossless fabric it fills, and the timer covers a
     * real loss). Needs ACKs. */
    gboolean reorder;
} cs_pkt_qp_cfg_t;

/* What a QP tells its owner, each at the moment it happens. */
typedef struct {
    /* the last packet of the QP's oldest message not reported yet started on
     * the sender's wire (its first transmission; the hook runs as it leaves
     * the queue, one serialization before its last bit is out) */
    void (*sent)(void *ctx, int qp, cs_time_t now);
    /* ... reached the receiver with every packet before it (in order) */
    void (*delivered)(void *ctx, int qp, cs_time_t now);
    /* the QP ran out of retries: no message of it will complete */
    void (*failed)(void *ctx, int qp, cs_time_t now);
} cs_pkt_qp_hooks_t;

/* Switch 'sw' may end QPs (an aggregation node of SHARP, cs_pkt_sharp.h,
 * is an InfiniBand end-node inside the switch): a QP's route may start
 * or end there; its packets are made and consumed there. */
void cs_pkt_net_set_endpoint(cs_pkt_net_t *net, int sw);
/* An idle QP along 'route' (as cs_pkt_net_add_flow); with ACKs or DCQCN
 * its reverse route must exist. Returns its id (a flow id), or -1. */
int cs_pkt_net_add_qp(cs_pkt_net_t *net, const int *route, int nroute, const cs_pkt_qp_cfg_t *cfg);
void cs_pkt_net_set_qp_hooks(cs_pkt_net_t *net, const cs_pkt_qp_hooks_t *hooks, void *ctx);
/* Adaptive routing (InfiniBand, issue #14): the QP's data packets that may
 * be routed adaptively (cs_pkt_net_qp_post: all; cs_pkt_net_qp_post_ar:
 * those of a WRITE sent apart from its immediate) may take any of 'n'
 * routes (ports[off[i] .. off[i + 1]) each; all from the QP's first port
 * to its last node, the QP's own route among them). At each
 * switch where the routes that share the packet's hops so far part, the
 * packet leaves by the candidate port whose queue on its priority holds
 * the fewest bytes (ties: the route it is on, then the first), as
 * switches' adaptive routing does per packet. ACKs keep the QP's route
 * back. Returns 0, or -1 (bad routes). */
int cs_pkt_net_set_qp_routes(cs_pkt_net_t *net, int qp, const int *ports, const int *off, int n);
/* Per QP: packets that left a switch by another route than the one they
 * were on (adaptive routing's choices), and data packets that arrived out
 * of order. */
guint64 cs_pkt_net_qp_ar_moves(const cs_pkt_net_t *net, int qp);
/* Posts a WRITE of 'bytes' at 'now' (no earlier than the last event run).
 * With adaptive routes (cs_pkt_net_set_qp_routes) all its packets take
 * them. */
void cs_pkt_net_qp_post(cs_pkt_net_t *net, int qp, guint64 bytes, cs_time_t now);
/* NCCL's send on an adaptive-routing QP (net_ib/p2p.cc, ncclIbMultiSend):
 * with 'imm_apart' (NCCL: the message is above NCCL_IB_AR_THRESHOLD) an
 * RDMA WRITE of 'bytes' whose packets may take the adaptive routes, then a
 * WRITE with immediate of no payload, one packet, on the QP's own route;
 * the message is delivered when that packet is in with everything before
 * it. Without, one WRITE with immediate, every packet on the QP's route.
 * Only RDMA WRITE packets are routed adaptively: a WRITE with immediate
 * consumes a receive request and completes it, so it must arrive in order
 * (the reason NCCL sends the bulk "in a separate message which can
 * leverage adaptive routing", NCCL_IB_AR_THRESHOLD's documentation). */
void cs_pkt_net_qp_post_ar(cs_pkt_net_t *net, int qp, guint64 bytes, gboolean imm_apart, cs_time_t now);
/* The sender's rate limit besides DCQCN (bits/s of wire bytes; <= 0:
 * none): the host path's share, set by the engine as it changes. */
void cs_pkt_net_qp_set_rate(cs_pkt_net_t *net, int qp, double bps, cs_time_t now);
/* Time of the next event, CS_TIME_NEVER when none. */
cs_time_t cs_pkt_net_next(const cs_pkt_net_t *net);
/* Per QP: packets sent again (go-back-N), timeouts, NAKs received,
 * packets its receiver dropped as out of order, whether it failed. */
guint64 cs_pkt_net_qp_retransmitted(const cs_pkt_net_t *net, int qp);
guint64 cs_pkt_net_qp_timeouts(const cs_pkt_net_t *net, int qp);
guint64 cs_pkt_net_qp_naks(const cs_pkt_net_t *net, int qp);
guint64 cs_pkt_net_qp_out_of_order(const cs_pkt_net_t *net, int qp);
gboolean cs_pkt_net_qp_failed(const cs_pkt_net_t *net, int qp);
/* When the QP would run out of retries if nothing reached it again (its
 * timer's next expiry plus a timeout per retry left): what a stopped net
 * (a deadlock) leaves NCCL to see. CS_TIME_NEVER when it has nothing
 * unacknowledged out, has failed, or runs no timer. */
cs_time_t cs_pkt_net_qp_fail_at(const cs_pkt_net_t *net, int qp);

/* Runs every event at or before 'until' (CS_TIME_NEVER: until none is
 * left). Returns the events handled. */
guint64 cs_pkt_net_run(cs_pkt_net_t *net, cs_time_t until);

cs_time_t cs_pkt_net_now(const cs_pkt_net_t *net);
guint64 cs_pkt_net_events(const cs_pkt_net_t *net);
cs_pkt_pool_t *cs_pkt_net_pool(cs_pkt_net_t *net);
/* The most packets the pool may hold (0: no limit). Past it cs_pkt_net_run
 * stops (checked as each run starts and every 1024 events) and
 * cs_pkt_net_overflowed() says so; the net
 * does not run again. For the engine's memory limit: queues that keep
 * growing must not exhaust the machine. */
void cs_pkt_net_set_pool_limit(cs_pkt_net_t *net, gsize packets);
gboolean cs_pkt_net_overflowed(const cs_pkt_net_t *net);
cs_pkt_port_t *cs_pkt_net_port(cs_pkt_net_t *net, int port);

/* Payload delivered; first arrival and completion (last packet in), -1 before. */
guint64 cs_pkt_net_flow_delivered(const cs_pkt_net_t *net, int flow);
cs_time_t cs_pkt_net_flow_first(const cs_pkt_net_t *net, int flow);
cs_time_t cs_pkt_net_flow_done(const cs_pkt_net_t *net, int flow);
/* Packets of the flow dropped (switch buffers, receive buffers, watchdogs). */
guint64 cs_pkt_net_flow_dropped(const cs_pkt_net_t *net, int flow);
/* A link's PFC state and counters; a switch's MMU (NULL: unbounded) and
 * a link's index in the MMU of the switch it enters (-1: none). */
cs_pkt_pfc_t *cs_pkt_net_pfc(cs_pkt_net_t *net, int link);
cs_pkt_mmu_t *cs_pkt_net_mmu(cs_pkt_net_t *net, int sw);
int cs_pkt_net_mmu_port(const cs_pkt_net_t *net, int link);
/* Packets marked CE as they left 'link' at priority 'prio'. */
guint64 cs_pkt_net_ecn_marks(const cs_pkt_net_t *net, int link, int prio);
/* CNPs the flow's receiver sent, and its sender got. */
guint64 cs_pkt_net_flow_cnps_sent(const cs_pkt_net_t *net, int flow);
guint64 cs_pkt_net_flow_cnps_received(const cs_pkt_net_t *net, int flow);
/* The flow's reaction point (rate, alpha, cuts), NULL without DCQCN. */
const cs_pkt_dcqcn_rp_t *cs_pkt_net_flow_rp(const cs_pkt_net_t *net, int flow);
/* Payload delivered to a host (all flows). */
guint64 cs_pkt_net_host_delivered(const cs_pkt_net_t *net, int host);

#endif
