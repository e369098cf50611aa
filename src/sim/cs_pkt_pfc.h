/* PFC, IEEE 802.1Qbb priority flow control, as the packet engine's link
 * layer for RoCE (issue #11): one cs_pkt_pfc_t per one-way link, holding
 * both ends of that link's pause machinery.
 *
 * - Receiving end of pauses (the link's sender, e.g. a host NIC): a pause
 *   frame for priority p with timer q > 0 stops p from starting a packet
 *   for q quanta of 512 bit-times at the link's rate (5.12 ns at 100G, so
 *   65535 quanta = 335.5 us; 1.28 ns at 400G), counted from the frame's
 *   arrival; a new XOFF restarts the timer; q = 0 (XON) resumes at once.
 *   The packet already on the wire finishes (the port asks may_send only
 *   at packet boundaries). A priority whose XON is lost resumes when its
 *   quanta expire. Resuming calls cs_pkt_port_kick. cs_pkt_pfc_may_send
 *   answers the port's may_send hook (the network's hook calls it);
 *   the port itself knows nothing of PFC.
 * - Sending end of pauses (the switch the link enters): the MMU's XOFF
 *   sends a pause frame with 'quanta' (default 65535: vendors send a large
 *   XOFF and then an explicit XON [CISCO]), refreshed every 'refresh_ps'
 *   while the MMU still wants the pause, so the sender never resumes into
 *   a full buffer; the MMU's XON sends quanta 0. Default refresh: half the
 *   pause time (assumption: 802.1Qbb leaves the refresh to the
 *   implementation and the sources in fabric-models.md give no interval;
 *   half leaves the frame's trip and a lost refresh's successor margin).
 *   Frames go out through a callback (the network puts them on the link
 *   the other way, cs_pkt_port_enqueue_ctrl) and come back through
 *   cs_pkt_pfc_receive.
 * - Watchdog (at the receiving end, when enabled for the link: the
 *   network enables it on switch egress links, as switch PFC watchdogs
 *   run there): a priority paused without a break for 'watchdog_ps' while
 *   its queue holds packets is declared stormed (a trip); it then ignores
 *   pause frames on that priority (they are still counted) and the
 *   network drops its queued and arriving packets, until no pause frame
 *   has arrived for 'watchdog_restore_ps'. This is what NVIDIA Spectrum
 *   (Cumulus "PFC watchdog"), Arista EOS ("priority-flow-control pause
 *   watchdog", action drop) and Cisco Nexus ("PFC watchdog", shutdown
 *   then auto-restore) document: detection of a queue stuck in the paused
 *   state with packets, a drop action, restoration once pauses stop. A
 *   paused queue found empty at the deadline is looked at again one
 *   detection time later (a pause that holds nothing back is no storm).
 * Counters per priority: pause frames sent (XOFF, XON) for this link by
 * its far end, frames received by its sender, time paused, watchdog trips. */
#ifndef CS_PKT_PFC_H
#define CS_PKT_PFC_H

#include <glib.h>

#include "sim/cs_evq.h"
#include "sim/cs_pkt.h"
#include "sim/cs_pkt_port.h"

/* Pause frame: 64 B (DA, SA, EtherType 0x8808, opcode 0x0101, priority
 * vector, 8 timers, pad, FCS) [HW][CISCO], plus preamble/SFD 8 and the
 * inter-frame gap 12 on the wire. */
#define CS_PKT_PFC_FRAME 64
#define CS_PKT_PFC_WIRE (CS_PKT_PFC_FRAME + 8 + 12)
#define CS_PKT_PFC_QUANTUM_BITS 512
#define CS_PKT_PFC_QUANTA_MAX 65535

enum {
    CS_PKT_EV_PFC_EXPIRE = 0x300,     /* a = link id, b = priority */
    CS_PKT_EV_PFC_REFRESH,            /* a = link id, b = priority */
    CS_PKT_EV_PFC_WATCHDOG,           /* a = link id, b = priority: detection or restoration */
};

/* Deadlock detection time by default: a pause cycle that holds for 1 ms
 * with nothing moving on it is reported (cs_pkt_net.h). An assumption:
 * long against a pause's refresh (167 us at 100G) and a buffer's drain
 * time (a 12 MB buffer at 100G: 1 ms), short against a run. */
#define CS_PKT_PFC_DEADLOCK_DEFAULT ((cs_time_t)1000000000)

typedef struct {
    guint16 quanta;                   /* XOFF timer, 1-65535 */
    cs_time_t refresh_ps;             /* XOFF refresh; 0: half the pause time */
    cs_time_t watchdog_ps;            /* watchdog detection time; 0: no watchdog */
    cs_time_t watchdog_restore_ps;    /* stormed until no pause for this long; 0: the detection time */
    cs_time_t deadlock_ps;            /* pause cycle reported after this long unmoved (> 0) */
} cs_pkt_pfc_cfg_t;

void cs_pkt_pfc_cfg_init(cs_pkt_pfc_cfg_t *cfg);

typedef struct cs_pkt_pfc cs_pkt_pfc_t;

/* Sends a pause frame (quanta 0 = XON) for 'prio' of link 'link' back
 * towards the link's sender. */
typedef void (*cs_pkt_pfc_send_fn)(void *ctx, int link, int prio, guint16 quanta, cs_time_t now);

/* Link 'id' driven by 'port'; 'cfg' is read when pausing (it must outlive
 * the object). */
cs_pkt_pfc_t *cs_pkt_pfc_new(int id, cs_pkt_port_t *port, cs_evq_t *evq,
                             const cs_pkt_pfc_cfg_t *cfg, cs_pkt_pfc_send_fn send, void *ctx);
void cs_pkt_pfc_free(cs_pkt_pfc_t *pfc);

/* Picoseconds of 'quanta' at 'rate_bps', rounded to the nearest. */
cs_time_t cs_pkt_pfc_quanta_ps(guint32 quanta, guint64 rate_bps);

/* Receiving end: a pause frame for 'prio' reached the link's sender. */
void cs_pkt_pfc_receive(cs_pkt_pfc_t *pfc, int prio, guint16 quanta, cs_time_t now);
gboolean cs_pkt_pfc_may_send(const cs_pkt_pfc_t *pfc, int prio, cs_time_t now);
gboolean cs_pkt_pfc_paused(const cs_pkt_pfc_t *pfc, int prio, cs_time_t now);

/* Sending end: the far end's MMU wants 'prio' paused / let go. XOFF while
 * already asserted and XON while not are no-ops. */
void cs_pkt_pfc_xoff(cs_pkt_pfc_t *pfc, int prio, cs_time_t now);
void cs_pkt_pfc_xon(cs_pkt_pfc_t *pfc, int prio, cs_time_t now);
gboolean cs_pkt_pfc_asserted(const cs_pkt_pfc_t *pfc, int prio);
/* The refresh timer asks whether the pause is still wanted. */
typedef gboolean (*cs_pkt_pfc_still_fn)(void *ctx, int link, int prio);
void cs_pkt_pfc_set_still(cs_pkt_pfc_t *pfc, cs_pkt_pfc_still_fn still);

/* The watchdog (above) on this link: 'storm' is called as a priority
 * trips, to drop what its queue holds. */
typedef void (*cs_pkt_pfc_storm_fn)(void *ctx, int link, int prio, cs_time_t now);
void cs_pkt_pfc_set_watchdog(cs_pkt_pfc_t *pfc, cs_pkt_pfc_storm_fn storm);
gboolean cs_pkt_pfc_watchdog(const cs_pkt_pfc_t *pfc);
gboolean cs_pkt_pfc_stormed(const cs_pkt_pfc_t *pfc, int prio);
guint64 cs_pkt_pfc_trips(const cs_pkt_pfc_t *pfc, int prio);
/* Does the far end's refresh keep a pause up without a break (its
 * interval shorter than the pause time)? */
gboolean cs_pkt_pfc_refresh_holds(const cs_pkt_pfc_t *pfc);

/* One of this object's popped events (CS_PKT_EV_PFC_*). */
void cs_pkt_pfc_event(cs_pkt_pfc_t *pfc, cs_event_t *ev);

guint64 cs_pkt_pfc_xoff_sent(const cs_pkt_pfc_t *pfc, int prio);
guint64 cs_pkt_pfc_xon_sent(const cs_pkt_pfc_t *pfc, int prio);
guint64 cs_pkt_pfc_received(const cs_pkt_pfc_t *pfc, int prio);
/* Time 'prio' was paused up to 'now'. */
cs_time_t cs_pkt_pfc_paused_ps(const cs_pkt_pfc_t *pfc, int prio, cs_time_t now);

#endif
