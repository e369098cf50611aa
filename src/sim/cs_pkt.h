/* The packet engine's packet record and its pool (issue #11, part 1).
 *
 * A packet is a fixed-size record taken from a free list: after warm-up no
 * packet touches the allocator (the pool grows in blocks while a run climbs
 * to its high-water mark of packets in queues and on wires, and
 * cs_pkt_pool_grows() counts those growths so tests can check it stops).
 *
 * As in htsim (fabric-models.md section 7), a packet carries its route: a
 * pointer to an immutable array of egress port ids computed once per QP,
 * and the index of the next hop, so no switch looks anything up per
 * packet. Routes are shared by every packet of their QP and outlive them;
 * whoever computed a route frees it (cs_pkt_route_free). */
#ifndef CS_PKT_H
#define CS_PKT_H

#include <glib.h>

#include "sim/cs_evq.h"

#define CS_PKT_PRIOS 8                /* IEEE 802.1Q priorities 0-7 */

/* Packet flags. */
enum {
    CS_PKT_F_ECT   = 1 << 0,          /* ECN-capable transport (ECT(0) in the ToS byte) */
    CS_PKT_F_CE    = 1 << 1,          /* congestion experienced: marked by a switch (InfiniBand: FECN) */
    CS_PKT_F_ACK   = 1 << 2,          /* an ACK (carries an AETH) */
    CS_PKT_F_CNP   = 1 << 3,          /* a congestion notification packet */
    CS_PKT_F_PAUSE = 1 << 4,          /* a PFC pause frame (link-local, no route) */
    CS_PKT_F_FIRST = 1 << 5,          /* first packet of a WRITE (carries a RETH) */
    CS_PKT_F_LAST  = 1 << 6,          /* last packet of its message */
    CS_PKT_F_NAK   = 1 << 7,          /* with ACK: a NAK (PSN sequence error), psn = the one expected */
    CS_PKT_F_BECN  = 1 << 8,          /* InfiniBand: BECN, on an ACK or a CNP (cs_pkt_ibcc.h) */
    CS_PKT_F_AR    = 1 << 9,          /* InfiniBand: a data packet switches may route adaptively (cs_pkt_net_set_qp_routes) */
};

/* An immutable route: the egress ports a packet crosses, in order (the
 * source NIC's port first). */
typedef struct cs_pkt_route {
    int n;
    int port[];
} cs_pkt_route_t;

cs_pkt_route_t *cs_pkt_route_new(const int *ports, int n);
void cs_pkt_route_free(cs_pkt_route_t *r);

typedef struct cs_pkt {
    struct cs_pkt *next;              /* link in a queue, a wire or the free list */
    cs_time_t t;                      /* on a wire: arrival at the far end */
    const cs_pkt_route_t *route;
    guint32 flow;                     /* flow / QP id */
    guint32 psn;                      /* packet sequence number (the QP's packet index; BTH's 24-bit wrap not modelled) */
    guint32 payload;                  /* payload bytes */
    guint32 wire;                     /* bytes on the wire, framing included */
    guint16 hop;                      /* index in route->port of the next egress port */
    guint8 prio;                      /* 0-7 */
    guint16 flags;                    /* CS_PKT_F_* */
} cs_pkt_t;

/* The egress port this packet leaves by next, or -1 when it has arrived. */
static inline int cs_pkt_next_port(const cs_pkt_t *p)
{
    return p->hop < p->route->n ? p->route->port[p->hop] : -1;
}

typedef struct cs_pkt_pool cs_pkt_pool_t;

cs_pkt_pool_t *cs_pkt_pool_new(void);
void cs_pkt_pool_free(cs_pkt_pool_t *pool);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(cs_pkt_pool_t, cs_pkt_pool_free)

/* A zeroed packet from the free list. */
cs_pkt_t *cs_pkt_alloc(cs_pkt_pool_t *pool);
void cs_pkt_release(cs_pkt_pool_t *pool, cs_pkt_t *p);

guint64 cs_pkt_pool_grows(const cs_pkt_pool_t *pool);    /* blocks allocated so far */
gsize cs_pkt_pool_capacity(const cs_pkt_pool_t *pool);   /* packets in all blocks */
gsize cs_pkt_pool_in_use(const cs_pkt_pool_t *pool);

#endif
