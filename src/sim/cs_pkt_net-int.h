/* The packet network's internals, shared by its parts (cs_pkt_net.c:
 * topology, forwarding, PFC wiring and the event loop; cs_pkt_qp.c: the
 * queue pairs; cs_pkt_host.c: the hosts' receive paths; cs_pkt_stuck.c:
 * deadlock and stall detection). Not for use outside src/sim/cs_pkt_*. */
#ifndef CS_PKT_NET_INT_H
#define CS_PKT_NET_INT_H

#include "sim/cs_pkt_net.h"

typedef struct {
    gboolean host;
    guint64 delivered;                /* payload sunk here */
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
    int mmu_port;                     /* ingress index in the MMU of 'to'; -1: none */
    int rev;                          /* the link to -> from; -1: none (pauses cannot go back) */
    gboolean ecn;                     /* marks at egress (its switch's setting) */
    cs_pkt_ecn_cfg_t ecn_cfg;
    cs_pkt_rng_t rng;                 /* RED draws, seeded from the run's seed and the link id */
    guint64 marks[CS_PKT_PRIOS];
} link_t;

/* A message posted to a QP: packets [start, end) of the QP. */
typedef struct {
    guint64 start, end, bytes;
} msg_t;

/* A flow: a QP doing RDMA WRITEs (cs_pkt_net.h). */
typedef struct {
    cs_pkt_qp_cfg_t cfg;
    gboolean write;                   /* RETH on each message's first packet */
    cs_pkt_route_t *route;
    cs_pkt_route_t *back;             /* ACKs and CNPs, receiver to sender; NULL: none */
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
    guint64 ooo, retx, timeouts, naks;
    cs_time_t first, done;
    /* loss recovery */
    int retries;
    cs_time_t rto_at;                 /* the timer's deadline while packets are out */
    gboolean failed;
    /* rate limiter: DCQCN's reaction point and the host's cap */
    double cap_bps;                   /* <= 0: none */
    cs_time_t next_send;              /* the next packet may go then */
    cs_pkt_dcqcn_cfg_t *dcqcn;        /* NULL: none */
    cs_pkt_dcqcn_rp_t rp;
    cs_time_t last_cnp;               /* notification point: last CNP sent, -1: none */
    guint64 cnps_sent, cnps_received;
    cs_event_t *pace_ev, *timer_ev, *rto_ev;   /* a = flow id; timer_ev only with DCQCN */
} flow_t;

struct cs_pkt_net {
    cs_evq_t *evq;
    cs_pkt_pool_t *pool;
    GArray *nodes;                    /* node_t */
    GArray *links;                    /* link_t, index = port id */
    GArray *flows;                    /* flow_t */
    cs_pkt_pfc_cfg_t pfc_cfg;
    cs_pkt_net_observer_fn observer;
    void *observer_ctx;
    cs_pkt_qp_hooks_t qp_hooks;
    void *qp_ctx;
    cs_time_t now;
    guint64 seed;                     /* RED draws */
};

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

/* cs_pkt_qp.c */
void net_qp_sent(cs_pkt_net_t *net, int id, const cs_pkt_t *pkt, cs_time_t now);
void net_qp_pump(cs_pkt_net_t *net, int id, cs_time_t now);
void net_qp_rto(cs_pkt_net_t *net, int id, cs_time_t now);
void net_sink(cs_pkt_net_t *net, int node, cs_pkt_t *pkt, cs_time_t now);

#endif
