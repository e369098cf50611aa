/* An egress port of the packet engine: eight priority queues, a scheduler
 * and the link it drives (issue #11, part 1).
 *
 * Scheduler: priorities marked strict are served first, highest number
 * first (802.1Q: 7 is the highest); the others share what is left by
 * deficit round robin on wire bytes (Shreedhar and Varghese, SIGCOMM'95),
 * each with a quantum of weight x quantum bytes. The default quantum is
 * the largest RoCEv2 frame, so every visit to a backlogged queue sends at
 * least one packet.
 *
 * Link: serialization takes wire bytes x 8 / rate, in integer picoseconds:
 * the quotient, plus one whenever the remainders carried from packet to
 * packet add up to a whole picosecond, so a long run keeps the exact rate
 * and every run the same times. Then propagation. The port is store and
 * forward: a packet reaches the far end when its last bit does.
 *
 * Events (integer picoseconds, cs_evq): a port owns two events, reused for
 * its whole life: CS_PKT_EV_TX_DONE, scheduled while the port serializes
 * (one event per busy period's current packet, never one per queued
 * packet: queued packets wait in their FIFO unscheduled), and
 * CS_PKT_EV_ARRIVE for the head of the packets in flight on the wire.
 * In-flight packets live in the port's own FIFO with their arrival times
 * (nondecreasing: each starts after the last finished serializing), and
 * only the head's arrival is in the event queue, as in htsim's pipes.
 * cs_evq's streams would do the same but are 16 per queue, far fewer than
 * a fabric's links, and their times must be nondecreasing across all the
 * links that share one, which links of different rates break. Both events
 * carry the port id in ev->a; whoever pops them hands them to
 * cs_pkt_port_event.
 *
 * InfiniBand ports may use VL arbitration instead (cfg.arb, IBA vol 1
 * section 7.6.9, "VL Arbitration and Prioritization"): two tables of
 * (VL, weight) entries, weight in 64-byte units (0: the entry is skipped).
 * Each table is walked in order: the current entry's VL sends while its
 * weight lasts and it has a packet that may go (a packet starts if any
 * weight is left and may overdraw it, which is then dropped, not carried:
 * with 4 KB packets a weight under 64 is one packet per turn); an entry
 * whose VL has nothing that may go hands over to the next. The high table
 * is served first until it has sent the Limit of High-Priority (units of
 * 4096 bytes; 255: no limit; 0: one packet) since a low-table packet last
 * went; then one low-table packet goes, when there is one, and the count
 * starts again. A VL in neither table with a weight is never served.
 * VL15 (subnet management) is the control FIFO below: above every table
 * and never asked may_send, as IBA exempts VL15 from credits. The port
 * treats its queue numbers as VLs and knows nothing of credits.
 *
 * Hooks (a const table): 'dequeued' runs as a packet leaves its queue for
 * the wire (the network marks ECN there, cs_pkt_ecn.h); 'may_send' is
 * link-level flow control, asked before a priority's head is started:
 * "always" with no hook (cs_pkt_port_hooks_always), PFC pause
 * (cs_pkt_pfc.h, wired by cs_pkt_net.c), per-VL credits (InfiniBand)
 * later. When flow control lets a priority go again it calls
 * cs_pkt_port_kick, so the port itself knows nothing of PFC or credits.
 *
 * Control frames (cs_pkt_port_enqueue_ctrl: PFC pause frames) have their
 * own FIFO, served before every priority at the next packet boundary,
 * never asked may_send and never passed to 'dequeued': a MAC control frame
 * waits for the frame on the wire (no preemption mid-frame) but not for
 * the data queues. The HPCC ns-3 fork instead puts pause frames in its
 * queue 0 among the round-robin data queues (fabric-models.md section 3),
 * which delays an XOFF behind other queues' turns by more than the
 * headroom formula allows for. */
#ifndef CS_PKT_PORT_H
#define CS_PKT_PORT_H

#include <glib.h>

#include "sim/cs_evq.h"
#include "sim/cs_pkt.h"

enum {
    CS_PKT_EV_TX_DONE = 0x100,        /* a = port id */
    CS_PKT_EV_ARRIVE,                 /* a = port id */
};

typedef struct cs_pkt_port cs_pkt_port_t;

typedef struct cs_pkt_port_hooks {
    /* The packet left queue pkt->prio and starts on the wire. May be NULL. */
    void (*dequeued)(void *ctx, cs_pkt_port_t *port, cs_pkt_t *pkt, cs_time_t now);
    /* May priority 'prio' start a packet now? NULL means always. */
    gboolean (*may_send)(void *ctx, const cs_pkt_port_t *port, int prio, cs_time_t now);
} cs_pkt_port_hooks_t;

extern const cs_pkt_port_hooks_t cs_pkt_port_hooks_always;

/* The far end: receives each packet when its last bit arrives; it owns
 * the packet from then on. */
typedef void (*cs_pkt_deliver_fn)(void *ctx, cs_pkt_port_t *port, cs_pkt_t *pkt, cs_time_t now);

/* VL arbitration tables (see above); IBA's port has 64 entries per table. */
#define CS_PKT_ARB_ENTRIES 64
#define CS_PKT_ARB_UNLIMITED 255      /* Limit of High-Priority: no limit */
typedef struct {
    guint8 vl, weight;                /* weight: 64-byte units, 0 skips the entry */
} cs_pkt_arb_entry_t;
typedef struct {
    cs_pkt_arb_entry_t high[CS_PKT_ARB_ENTRIES], low[CS_PKT_ARB_ENTRIES];
    guint8 nhigh, nlow;               /* entries used */
    guint8 high_limit;                /* 4096-byte units; 0: one packet; 255: unlimited */
} cs_pkt_arb_t;

typedef struct {
    guint64 rate_bps;                 /* link rate, bits per second */
    cs_time_t prop_ps;                /* propagation delay */
    guint8 strict;                    /* bit p set: priority p is strict */
    guint32 weight[CS_PKT_PRIOS];     /* DRR weights of the non-strict priorities, >= 1 */
    guint32 quantum;                  /* DRR bytes per unit of weight; 0: CS_PKT_WIRE_MAX */
    /* non-NULL: VL arbitration by these tables instead of strict priority
     * and DRR (strict must be 0); shared, so it must outlive the port */
    const cs_pkt_arb_t *arb;
} cs_pkt_port_cfg_t;

/* No strict priority, all weights 1, default quantum, no VL arbitration. */
void cs_pkt_port_cfg_init(cs_pkt_port_cfg_t *cfg, guint64 rate_bps, cs_time_t prop_ps);
/* Whether 'arb' is a set of tables a port can run: at most
 * CS_PKT_ARB_ENTRIES entries each, every VL below CS_PKT_PRIOS. */
gboolean cs_pkt_arb_valid(const cs_pkt_arb_t *arb);
/* Whether VL 'vl' has an entry of nonzero weight in either table (it is
 * served at all). */
gboolean cs_pkt_arb_serves(const cs_pkt_arb_t *arb, int vl);

cs_pkt_port_t *cs_pkt_port_new(int id, const cs_pkt_port_cfg_t *cfg, cs_evq_t *evq,
                               const cs_pkt_port_hooks_t *hooks, void *hooks_ctx,
                               cs_pkt_deliver_fn deliver, void *deliver_ctx);
/* Frees the port and its events; packets still queued or in flight are
 * returned to 'pool'. */
void cs_pkt_port_free(cs_pkt_port_t *port, cs_pkt_pool_t *pool);

/* Queues a packet at priority pkt->prio; starts it at once if the link is idle. */
void cs_pkt_port_enqueue(cs_pkt_port_t *port, cs_pkt_t *pkt, cs_time_t now);
/* Queues a link control frame ahead of all data (see above). */
void cs_pkt_port_enqueue_ctrl(cs_pkt_port_t *port, cs_pkt_t *pkt, cs_time_t now);
/* Flow control let a priority go again: start the link if it is idle. */
void cs_pkt_port_kick(cs_pkt_port_t *port, cs_time_t now);
/* Handles one of this port's popped events (CS_PKT_EV_TX_DONE, CS_PKT_EV_ARRIVE). */
void cs_pkt_port_event(cs_pkt_port_t *port, cs_event_t *ev);

/* Takes every packet out of queue 'prio', handing each to 'drop' (which
 * then owns it): a PFC watchdog's drop action. Returns how many. */
typedef void (*cs_pkt_drop_fn)(void *ctx, cs_pkt_t *pkt, cs_time_t now);
guint32 cs_pkt_port_flush(cs_pkt_port_t *port, int prio, cs_time_t now, cs_pkt_drop_fn drop, void *ctx);
/* The oldest packet of queue 'prio' (follow ->next), NULL when empty: for
 * inspection only (deadlock detection). */
const cs_pkt_t *cs_pkt_port_queue_head(const cs_pkt_port_t *port, int prio);

/* Serialization time of 'wire' bytes, advancing the port's remainder. */
cs_time_t cs_pkt_port_ser_time(cs_pkt_port_t *port, guint32 wire);

int cs_pkt_port_id(const cs_pkt_port_t *port);
const cs_pkt_port_cfg_t *cs_pkt_port_cfg(const cs_pkt_port_t *port);
gboolean cs_pkt_port_busy(const cs_pkt_port_t *port);
guint64 cs_pkt_port_queue_bytes(const cs_pkt_port_t *port, int prio);   /* wire bytes queued */
guint32 cs_pkt_port_queue_len(const cs_pkt_port_t *port, int prio);
guint64 cs_pkt_port_queue_max(const cs_pkt_port_t *port, int prio);     /* high-water, wire bytes */
/* Queued wire bytes averaged over time from 0 to 'now' (>= the last change). */
double cs_pkt_port_queue_avg(const cs_pkt_port_t *port, int prio, cs_time_t now);
guint64 cs_pkt_port_tx_bytes(const cs_pkt_port_t *port, int prio);      /* wire bytes sent */
guint64 cs_pkt_port_tx_pkts(const cs_pkt_port_t *port, int prio);
guint64 cs_pkt_port_ctrl_pkts(const cs_pkt_port_t *port);              /* control frames sent */

#endif
