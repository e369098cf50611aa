/* RoCEv2 and InfiniBand framing: the bytes a message costs on the wire.
 *
 * Per packet (fabric-models.md section 4; sources [PINGDO] pingdo.net
 * "RoCE v2 header overhead" and [CUM] NVIDIA Cumulus RoCE page; header
 * sizes from IEEE 802.3 / 802.1Q, RFC 791, RFC 768 and the InfiniBand
 * Architecture Specification Annex A17 (RoCEv2)):
 *   Ethernet header 14 (+4 with an 802.1Q VLAN tag) + IPv4 20 + UDP 8 +
 *   BTH 12 + payload + ICRC 4 + FCS 4, plus preamble/SFD 8 and the
 *   minimum inter-frame gap 12 that the wire also spends: 82 B per packet.
 *   RETH 16 on the first packet of an RDMA WRITE; AETH 4 on an ACK.
 * The goodput ratio at an MTU is MTU / (MTU + overhead): 92.59% at 1024,
 * 96.15% at 2048, 98.04% at 4096 (400 Gb/s x 98.04% = 392.2 Gb/s).
 *
 * InfiniBand (issue #14; IBA volume 1 chapters 5-7 and 9, fabric-models.md
 * section 4): LRH 8 (+ GRH 40 when routed between subnets) + BTH 12 +
 * payload + ICRC 4 + VCRC 2 = 26 B per packet; no preamble or gap counts,
 * as the IB data rates (EDR 100, HDR 200, NDR 400, XDR 800 Gb/s) are after
 * the line encoding. Goodput 97.5% / 98.75% / 99.37% at 1024 / 2048 / 4096
 * (93.9% / 96.9% / 98.4% with a GRH). */
#ifndef CS_PKT_FRAME_H
#define CS_PKT_FRAME_H

#include <glib.h>

#define CS_PKT_ETH_HDR 14
#define CS_PKT_VLAN_TAG 4
#define CS_PKT_IPV4_HDR 20
#define CS_PKT_UDP_HDR 8
#define CS_PKT_BTH 12
#define CS_PKT_ICRC 4
#define CS_PKT_FCS 4
#define CS_PKT_PREAMBLE_SFD 8
#define CS_PKT_IFG 12
#define CS_PKT_RETH 16
#define CS_PKT_AETH 4
#define CS_PKT_IB_LRH 8
#define CS_PKT_IB_GRH 40
#define CS_PKT_IB_VCRC 2
/* Every IB packet without a GRH: 26 B. */
#define CS_PKT_IB_OVERHEAD (CS_PKT_IB_LRH + CS_PKT_BTH + CS_PKT_ICRC + CS_PKT_IB_VCRC)
/* Every RoCEv2 packet without VLAN or extension headers: 82 B. */
#define CS_PKT_ROCE_OVERHEAD (CS_PKT_ETH_HDR + CS_PKT_IPV4_HDR + CS_PKT_UDP_HDR + CS_PKT_BTH \
                              + CS_PKT_ICRC + CS_PKT_FCS + CS_PKT_PREAMBLE_SFD + CS_PKT_IFG)
/* RoCE path MTUs are the InfiniBand ones, 256 to 4096 B (IBA 9.6.x). */
#define CS_PKT_MTU_MAX 4096
/* The largest RoCEv2 frame on the wire: a 4096-B first WRITE packet with a VLAN tag. */
#define CS_PKT_WIRE_MAX (CS_PKT_MTU_MAX + CS_PKT_ROCE_OVERHEAD + CS_PKT_VLAN_TAG + CS_PKT_RETH)

typedef struct {
    gboolean vlan;                    /* RoCE: 802.1Q tag present (PCP carries the priority) */
    gboolean ib;                      /* InfiniBand framing instead of RoCEv2 */
    gboolean grh;                     /* IB: a GRH on every packet (routed) */
} cs_pkt_frame_t;

/* What kind of packet a header set is for. */
typedef enum {
    CS_PKT_HDR_MIDDLE,                /* BTH only: a SEND, or a WRITE after its first */
    CS_PKT_HDR_WRITE_FIRST,           /* BTH + RETH */
    CS_PKT_HDR_ACK,                   /* BTH + AETH, no payload */
} cs_pkt_hdr_t;

gboolean cs_pkt_frame_mtu_valid(guint32 mtu);
/* Bytes on the wire besides the payload. */
guint32 cs_pkt_frame_overhead(const cs_pkt_frame_t *f, cs_pkt_hdr_t h);

/* Segmentation of a message of 'bytes' at 'mtu': ceil(bytes / mtu)
 * packets (one for an empty message, as a zero-byte WRITE still sends
 * one); packet i carries min(mtu, bytes - i * mtu). */
guint64 cs_pkt_frame_npkts(guint64 bytes, guint32 mtu);
guint32 cs_pkt_frame_payload(guint64 bytes, guint32 mtu, guint64 i);
/* Wire bytes of packet i of the message (RETH on packet 0 when 'write'). */
guint32 cs_pkt_frame_wire(const cs_pkt_frame_t *f, guint64 bytes, guint32 mtu, guint64 i,
                          gboolean write);
/* Wire bytes of the whole message. */
guint64 cs_pkt_frame_msg_wire(const cs_pkt_frame_t *f, guint64 bytes, guint32 mtu, gboolean write);

/* Goodput over the MAC rate for full packets of 'h' headers at 'mtu'
 * (fabric-models.md's "+RETH" column is h = CS_PKT_HDR_WRITE_FIRST:
 * one-packet writes). */
double cs_pkt_frame_goodput(const cs_pkt_frame_t *f, guint32 mtu, cs_pkt_hdr_t h);

#endif
