/* The packet network's internals, shared by its parts (cs_pkt_net.c:
 * topology, forwarding, PFC wiring and the event loop; cs_pkt_qp.c: the
 * queue pairs; cs_pkt_host.c: the hosts' receive paths; cs_pkt_stuck.c:
 * deadlock and stall detection). Not for use outside src/sim/cs_pkt_*. */
#ifndef CS_PKT_NET_INT_H
#define CS_PKT_NET_INT_H

#include "sim/cs_pkt_net.h"

/* A host's receive path (cs_pkt_host.c): the NIC's receive buffer,
 * drained into the host at 'bps' of payload, one packet at a time. */
typedef struct {
    double bps;
    guint64 buffer;                   /* per priority, wire bytes */
    guint64 xoff, xon;                /* lossless thresholds, wire bytes of a priority */
    cs_pkt_t *head, *tail;            /* arrival order */
    guint64 bytes[CS_PKT_PRIOS];
    guint32 npkts;
    guint64 total, max;               /* all priorities */
    double area;                      /* total x ps up to area_t (time-average) */
    cs_time_t area_t;
    guint64 drops[CS_PKT_PRIOS];
    gboolean busy;                    /* draining the head */
    double rem;                       /* fraction of a ps carried between drains */
    cs_time_t stall_from, stall_until;   /* drains nothing in [from, until); from -1: no stall */
    cs_event_t *ev;                   /* CS_PKT_EV_HOST_RX, a = node */
} host_rx_t;

typedef struct {
    gboolean host;
    gboolean endpoint;                /* a switch that ends QPs (SHARP's aggregation nodes, cs_pkt_sharp.h) */
    guint64 delivered;                /* payload sunk here */
    host_rx_t *rx;                    /* hosts with a receive path; NULL: drained at once */
    int in_link;                      /* the first link into this node (a host's NIC port); -1 */
    double occ_area;                  /* switch buffer bytes x ps up to occ_t */
    cs_time_t occ_t;
    cs_pkt_mmu_t *mmu;                /* switches with a finite buffer; NULL: unbounded */
    gint64 headroom;                  /* forced headroom per lossless PG; -1: the formula */
    gboolean ecn;                     /* switches that mark at egress */
    gboolean ecn_by_rate;             /* defaults per link rate, else ecn_cfg */
    cs_pkt_ecn_cfg_t ecn_cfg;
} node_t;

typedef struct {
    int from, to;                     /* nodes */
    cs_pkt_port_t *port;
    cs_pkt_pfc_t *pfc;
    cs_pkt_credit_t *cred;            /* InfiniBand: its credits (net->credit); else NULL */
    cs_pkt_t *fc_wait[CS_PKT_PRIOS];  /* a flow-control packet for it queued on the way back, not yet sent */
    int mmu_port;                     /* ingress index in the MMU of 'to'; -1: none */
    int rev;                          /* the link to -> from; -1: none (pauses cannot go back) */
    gboolean ecn;                     /* marks at egress (its switch's setting) */
    cs_pkt_ecn_cfg_t ecn_cfg;
    cs_pkt_rng_t rng;                 /* RED draws, seeded from the run's seed and the link id */
    guint64 marks[CS_PKT_PRIOS];      /* ECN marks (RoCE) or FECN marks (InfiniBand CC) */
    cs_pkt_ibcc_mark_t fecn[CS_PKT_PRIOS];   /* InfiniBand CC's marker per VL (switch egress) */
    guint64 drops[CS_PKT_PRIOS];      /* arrived over this link, no room at its far end */
    guint64 wd_drops[CS_PKT_PRIOS];   /* dropped from or for its stormed queue */
    cs_time_t last_tx;                /* a packet last started on it (-1: never) */
} link_t;

/* How a message's packets go with adaptive routes (cs_pkt_net_qp_post_ar). */
typedef enum {
    MSG_AR,                           /* every packet may be routed adaptively (cs_pkt_net_qp_post) */
    MSG_STATIC,                       /* one WRITE with immediate: every packet on the QP's route */
    MSG_IMM_APART,                    /* a WRITE routed adaptively, then packet end - 1: the WRITE with
                                       * immediate of no payload, on the QP's route */
} msg_kind_t;

/* A message posted to a QP: packets [start, end) of the QP. */
typedef struct {
    guint64 start, end, bytes;
    msg_kind_t kind;
} msg_t;

/* A flow: a QP doing RDMA WRITEs (cs_pkt_net.h). */
typedef struct {
    cs_pkt_qp_cfg_t cfg;
    gboolean write;                   /* RETH on each message's first packet */
    cs_pkt_route_t *route;
    cs_pkt_route_t *back;             /* ACKs and CNPs, receiver to sender; NULL: none */
    cs_pkt_route_t **alts;            /* adaptive routing: the routes its data may take; NULL: none */
    int nalts;
    guint64 ar_moves;                 /* data packets moved to another route at a switch */
    /* messages not yet both acknowledged and delivered: numbers
     * [mfirst, nmsgs), at msgs[number % mcap] */
    msg_t *msgs;
    guint mcap;
    guint64 mfirst, nmsgs;
    guint64 emsg;                     /* the message 'next' is in */
    guint64 npkts;                    /* packets posted */
    guint64 next;                     /* next packet to make (goes back on a NAK or timeout) */
    guint64 hw;                       /* packets that left the sender at least once */
    guint64 una;                      /* oldest packet not acknowledged */
    guint64 sent_msgs, deliv_msgs;    /* messages reported sent / delivered */
    guint32 queued;                   /* its packets in its host's egress queue */
    /* receiver */
    guint64 expect;                   /* next PSN it accepts */
    guint32 since_ack;
    gboolean nak_out;                 /* a NAK for 'expect' is out */
    guint64 delivered, arrived;       /* payload, packets accepted */
    guint64 dropped;                  /* packets dropped by switch buffers */
    /* selective repeat: the receiver's kept packets (1 at PSN % hcap for
     * PSNs in [expect, expect + hcap)) and the end of the highest PSN seen
     * (gaps below it are NAKed); the sender's PSNs to send again (1 at
     * PSN % rcap for [una, una + rcap)), rs_count of them, none below rs_low */
    guint8 *held, *resend;
    guint64 hcap, seen, rcap, rs_low, rs_count;
    guint64 ooo, retx, timeouts, naks;
    cs_time_t first, done;
    /* loss recovery */
    int retries;
    cs_time_t rto_at;                 /* the timer's deadline while packets are out */
    int rto_stream;                   /* the event queue's stream for its timeout; -1: the heap */
    gboolean failed;
    /* rate limiter: DCQCN's reaction point and the host's cap */
    double cap_bps;                   /* <= 0: none */
    cs_time_t next_send;              /* the next packet may go then */
    cs_pkt_dcqcn_cfg_t *dcqcn;        /* NULL: none */
    cs_pkt_dcqcn_rp_t rp;
    /* the increase timer stops while the QP has nothing to send (no event
     * runs for an idle QP); then its next expiry, applied with those it
     * missed when the QP is busy again or hears a CNP; -1: running or off */
    cs_time_t timer_due;
    cs_time_t last_cnp;               /* notification point: last CNP sent, -1: none */
    guint64 cnps_sent, cnps_received;
    /* InfiniBand CC (cs_pkt_ibcc.h): the source HCA's index; the
     * receiver owes a BECN for a FECN-marked packet (on its ACK, else a
     * CNP) */
    const cs_pkt_ibcc_cfg_t *ibcc;    /* NULL: off */
    cs_pkt_ibcc_ca_t ca;
    gboolean becn_due;
    guint64 becns_sent;
    cs_event_t *pace_ev, *timer_ev, *rto_ev;   /* a = flow id; timer_ev only with DCQCN */
} flow_t;

struct cs_pkt_net {
    cs_evq_t *evq;
    cs_pkt_pool_t *pool;
    GArray *nodes;                    /* node_t */
    GArray *links;                    /* link_t, index = port id */
    GArray *flows;                    /* flow_t */
    cs_pkt_pfc_cfg_t pfc_cfg;
    gboolean credit;                  /* InfiniBand: credits instead of PFC (cs_pkt_net_set_credit) */
    cs_pkt_credit_cfg_t credit_cfg;
    cs_pkt_ibcc_cfg_t *ibcc;          /* InfiniBand CC (cs_pkt_net_set_ibcc); NULL: off */
    cs_pkt_net_observer_fn observer;
    void *observer_ctx;
    GArray *drained;                  /* guint32: payloads a receive accepted from those kept (scratch) */
    cs_pkt_qp_hooks_t qp_hooks;
    void *qp_ctx;
    cs_time_t now;
    /* QPs' retransmission timers: one event stream per timeout value
     * (cs_pkt_qp.c rto_push), the value of each stream used so far */
    cs_time_t rto_timeout[CS_EVQ_STREAMS];
    int rto_streams;
    guint64 seed;                     /* RED draws */
    /* stuck detection (cs_pkt_stuck.c) */
    guint64 moves;                    /* counts everything but PFC timers and pause frames */
    gboolean quiet;                   /* nothing can move again, while moves == quiet_moves */
    guint64 quiet_moves;
    gboolean stopped;                 /* a deadlock stopped the net */
    gsize pool_limit;                 /* packets; 0: none (cs_pkt_net_set_pool_limit) */
    gboolean overflow;                /* the pool passed it: the net stopped */
    cs_time_t next_check;
    guint64 pause_alive;              /* pause frames in queues and on wires */
    guint64 starts_pending;           /* CS_PKT_EV_FLOW_START scheduled */
    cs_pkt_deadlock_t dl;             /* kind 0: none reported */
    int *dl_links, *dl_nodes;
    cs_pkt_net_deadlock_fn dl_hook;
    void *dl_ctx;
    /* sampler */
    cs_time_t sample_period, sample_next;
    cs_pkt_net_sample_fn sample_fn;
    void *sample_ctx;
};

static inline gboolean net_quiet(const cs_pkt_net_t *net)
{
    return net->stopped || (net->quiet && net->quiet_moves == net->moves);
}

static inline link_t *link_of(const cs_pkt_net_t *net, int port)
{
    return &g_array_index(net->links, link_t, port);
}

static inline node_t *node_of(const cs_pkt_net_t *net, int node)
{
    return &g_array_index(net->nodes, node_t, node);
}

static inline flow_t *flow_at(const cs_pkt_net_t *net, int id)
{
    return &g_array_index(net->flows, flow_t, id);
}

static inline void evq_at(cs_evq_t *q, cs_event_t *ev, cs_time_t t)
{
    if (cs_evq_scheduled(ev))
        cs_evq_reschedule(q, ev, t);
    else
        cs_evq_push(q, ev, t);
}

/* Something from outside changed the net at 'now' (cs_pkt_net.c). */
void net_touch(cs_pkt_net_t *net, cs_time_t now);
/* InfiniBand: a packet that came in by link 'in' left its node (or was
 * written to its host): its credits go back. */
static inline void net_credit_release(cs_pkt_net_t *net, link_t *in, const cs_pkt_t *pkt, cs_time_t now)
{
    if (in->cred != NULL)
        cs_pkt_credit_release(in->cred, pkt->prio, pkt->wire, now);
}
/* Drops a packet the network holds: counted for its flow, freed. */
void net_drop(cs_pkt_net_t *net, cs_pkt_t *pkt);

/* cs_pkt_host.c */
void net_host_arrive(cs_pkt_net_t *net, int node, link_t *in, cs_pkt_t *pkt, cs_time_t now);
void net_host_event(cs_pkt_net_t *net, int node, cs_time_t now);
gboolean net_host_still(const cs_pkt_net_t *net, int node, int prio);
void net_host_link_added(cs_pkt_net_t *net, int node);
gboolean net_host_stalled_for_good(const node_t *n, cs_time_t now);
void net_host_free(cs_pkt_net_t *net, node_t *n);

/* cs_pkt_stuck.c: at a PFC refresh; TRUE when the net stopped */
gboolean net_stuck_check(cs_pkt_net_t *net, cs_time_t now);
void net_stuck_free(cs_pkt_net_t *net);

/* cs_pkt_qp.c */
/* Adaptive routing at the switch a data packet is at, before it picks
 * its next port (hop = the next egress index). */
void net_qp_ar_pick(cs_pkt_net_t *net, cs_pkt_t *pkt);
void net_qp_sent(cs_pkt_net_t *net, int id, const cs_pkt_t *pkt, cs_time_t now);
void net_qp_pump(cs_pkt_net_t *net, int id, cs_time_t now);
void net_qp_rto(cs_pkt_net_t *net, int id, cs_time_t now);
void net_qp_timer(cs_pkt_net_t *net, int id, cs_event_t *ev, cs_time_t now);
void net_sink(cs_pkt_net_t *net, int node, cs_pkt_t *pkt, cs_time_t now);

#endif
