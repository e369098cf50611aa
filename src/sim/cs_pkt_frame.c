/* RoCEv2 and InfiniBand framing arithmetic (sizes and sources in
 * cs_pkt_frame.h). */
#include "config.h"

#include "sim/cs_pkt_frame.h"

gboolean cs_pkt_frame_mtu_valid(guint32 mtu)
{
    return mtu >= 256 && mtu <= CS_PKT_MTU_MAX && (mtu & (mtu - 1)) == 0;
}

guint32 cs_pkt_frame_overhead(const cs_pkt_frame_t *f, cs_pkt_hdr_t h)
{
    guint32 o = f->ib ? CS_PKT_IB_OVERHEAD + (f->grh ? CS_PKT_IB_GRH : 0)
                      : CS_PKT_ROCE_OVERHEAD + (f->vlan ? CS_PKT_VLAN_TAG : 0);
    switch (h) {
    case CS_PKT_HDR_WRITE_FIRST:
        return o + CS_PKT_RETH;
    case CS_PKT_HDR_ACK:
        return o + CS_PKT_AETH;
    case CS_PKT_HDR_MIDDLE:
        break;
    }
    return o;
}

guint64 cs_pkt_frame_npkts(guint64 bytes, guint32 mtu)
{
    g_return_val_if_fail(mtu > 0, 0);
    return bytes == 0 ? 1 : (bytes + mtu - 1) / mtu;
}

guint32 cs_pkt_frame_payload(guint64 bytes, guint32 mtu, guint64 i)
{
    g_return_val_if_fail(i < cs_pkt_frame_npkts(bytes, mtu), 0);
    guint64 left = bytes - i * mtu;
    return (guint32)MIN(left, (guint64)mtu);
}

guint32 cs_pkt_frame_wire(const cs_pkt_frame_t *f, guint64 bytes, guint32 mtu, guint64 i,
                          gboolean write)
{
    cs_pkt_hdr_t h = write && i == 0 ? CS_PKT_HDR_WRITE_FIRST : CS_PKT_HDR_MIDDLE;
    return cs_pkt_frame_payload(bytes, mtu, i) + cs_pkt_frame_overhead(f, h);
}

guint64 cs_pkt_frame_msg_wire(const cs_pkt_frame_t *f, guint64 bytes, guint32 mtu, gboolean write)
{
    guint64 n = cs_pkt_frame_npkts(bytes, mtu);
    return bytes + n * cs_pkt_frame_overhead(f, CS_PKT_HDR_MIDDLE) + (write ? CS_PKT_RETH : 0);
}

double cs_pkt_frame_goodput(const cs_pkt_frame_t *f, guint32 mtu, cs_pkt_hdr_t h)
{
    return (double)mtu / (double)(mtu + cs_pkt_frame_overhead(f, h));
}
