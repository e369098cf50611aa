/* InfiniBand credit-based link-level flow control, the packet engine's
 * link layer for IB (issue #14; IBA volume 1 section 7.9, fabric-models.md
 * section 4): one cs_pkt_credit_t per one-way link, holding both ends of
 * that link's credit accounting, per virtual lane (VL 0-7, the packet's
 * 'prio'; VL15, management, is not simulated).
 *
 * - Receiving end (the node the link enters): a receive buffer of
 *   'blocks[vl]' credits of 64 bytes per VL. A packet holds
 *   ceil(wire / 64) of them from its arrival until it leaves the node (a
 *   switch: when it starts on its egress wire; a host: when its NIC has
 *   written it to memory). The Flow Control Credit Limit the receiver
 *   advertises is FCCL = blocks freed so far + blocks[vl] (the spec's
 *   "ABR + free blocks" counted from the link's start).
 * - Sending end (the link's port): FCTBS, the blocks it has sent on each
 *   VL, and the FCCL last heard; a packet may start only while FCTBS +
 *   its blocks <= FCCL, so the receiver always has room: lossless by
 *   construction, no drop and no pause. A VL out of credits holds its
 *   queue (the port serves the other VLs); a flow-control packet that
 *   raises the limit kicks the port.
 * - Flow-control packets: the network carries the FCCL back on the link
 *   the other way, ahead of data and exempt from credits, when it rises
 *   (one per VL waits at a time; a later change updates the waiting one,
 *   since the sender only needs the latest), and every 'refresh_ps' while
 *   the VL holds blocks at the receiver (the spec's periodic update,
 *   which guards against a lost update; nothing is lost here, so it
 *   repeats the value and costs wire time only).
 * Counters are 64-bit (the spec's 12-bit modular counters wrap; their
 * differences are the same). The initial FCCL is the buffer (the link's
 * initialisation exchanges it before data flows). */
#ifndef CS_PKT_CREDIT_H
#define CS_PKT_CREDIT_H

#include <glib.h>

#include "sim/cs_evq.h"
#include "sim/cs_pkt.h"

#define CS_PKT_CREDIT_BLOCK 64
/* A flow-control packet: 6 bytes in the spec (op, FCTBS, VL, FCCL,
 * LPCRC); 8 on the wire as the Mellanox flit model takes it ([IBM]
 * fabric-models.md section 4). */
#define CS_PKT_CREDIT_FC_WIRE 8
/* The periodic update by default: 4.096 us, the Mellanox flit model's
 * credMinTime ([IBM] modules.ini). */
#define CS_PKT_CREDIT_REFRESH_DEFAULT ((cs_time_t)4096000)

enum {
    CS_PKT_EV_CREDIT_REFRESH = 0x400, /* a = link id */
};

static inline guint32 cs_pkt_credit_blocks(guint32 wire)
{
    return (wire + CS_PKT_CREDIT_BLOCK - 1) / CS_PKT_CREDIT_BLOCK;
}

typedef struct cs_pkt_credit cs_pkt_credit_t;

/* Puts a flow-control packet for 'vl' of link 'link' on the link the
 * other way (the network; it reads the value with cs_pkt_credit_fccl). */
typedef void (*cs_pkt_credit_send_fn)(void *ctx, int link, int vl, cs_time_t now);

/* Link 'id' with a receive buffer of blocks[vl] credits per VL (a VL with
 * 0 carries nothing); 'refresh_ps' > 0. */
cs_pkt_credit_t *cs_pkt_credit_new(int id, const guint32 blocks[CS_PKT_PRIOS], cs_time_t refresh_ps, cs_evq_t *evq,
                                   cs_pkt_credit_send_fn send, void *ctx);
void cs_pkt_credit_free(cs_pkt_credit_t *c);

/* Sending end. */
gboolean cs_pkt_credit_may_send(const cs_pkt_credit_t *c, int vl, guint32 wire);
void cs_pkt_credit_sent(cs_pkt_credit_t *c, int vl, guint32 wire);
/* Whether the VL's head waited for credits since the VL's last packet
 * started (read before cs_pkt_credit_sent, which clears it): IB CC's
 * victim test (cs_pkt_ibcc.h). */
gboolean cs_pkt_credit_waited(const cs_pkt_credit_t *c, int vl);
/* Whether the VL's head waits for credits now. */
gboolean cs_pkt_credit_starving(const cs_pkt_credit_t *c, int vl);
/* A flow-control packet arrived at the sender: TRUE when it raised the
 * limit (the caller kicks the port). */
gboolean cs_pkt_credit_receive(cs_pkt_credit_t *c, int vl, guint64 fccl, cs_time_t now);

/* Receiving end. A packet arrived (it must fit: the sender checked). */
void cs_pkt_credit_take(cs_pkt_credit_t *c, int vl, guint32 wire, cs_time_t now);
/* It left the node: its blocks are free, the limit rises and a
 * flow-control packet goes back. */
void cs_pkt_credit_release(cs_pkt_credit_t *c, int vl, guint32 wire, cs_time_t now);
guint64 cs_pkt_credit_fccl(const cs_pkt_credit_t *c, int vl);
guint32 cs_pkt_credit_used(const cs_pkt_credit_t *c, int vl);
guint32 cs_pkt_credit_buffer(const cs_pkt_credit_t *c, int vl);

/* The refresh timer (CS_PKT_EV_CREDIT_REFRESH). */
void cs_pkt_credit_event(cs_pkt_credit_t *c, cs_event_t *ev);

/* The network put a new flow-control packet on the wire for 'vl' (an
 * update written into one still waiting is not another packet). */
void cs_pkt_credit_fc_count(cs_pkt_credit_t *c, int vl);
/* Counters: flow-control packets sent for this link; time the sender
 * had a packet waiting on 'vl' without credits for it (credit-starved),
 * up to 'now'. The starved clock runs from cs_pkt_credit_starve (the port
 * found the VL's head blocked) to the limit that lets it go. */
guint64 cs_pkt_credit_fc_sent(const cs_pkt_credit_t *c, int vl);
void cs_pkt_credit_starve(cs_pkt_credit_t *c, int vl, cs_time_t now);
cs_time_t cs_pkt_credit_starved_ps(const cs_pkt_credit_t *c, int vl, cs_time_t now);

#endif
