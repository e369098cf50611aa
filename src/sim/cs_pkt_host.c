/* Hosts' receive paths (cs_pkt_net.h): the NIC's receive buffer, drained
 * into the host at its PCIe/GPU path's rate.
 *
 * Rules:
 * - Data packets that reach a host with a receive path queue in its
 *   buffer in arrival order; ACKs and CNPs do not (the NIC's transport
 *   consumes them, nothing is written to host memory).
 * - The head drains in payload x 8 / bps (a DMA write of the payload;
 *   the fraction of a picosecond is carried to the next, so a long run
 *   keeps the exact rate); the packet leaves the buffer and reaches the
 *   receiver's QP logic (ACKs, delivery hooks) when its drain ends.
 * - Each priority may hold 'buffer' wire bytes (mlx5 maps a PFC priority
 *   to a receive buffer of its own, mlnx_qos --prio2buffer/--buffer_size;
 *   modelled as one buffer of that size per priority). A packet that does
 *   not fit is dropped, on any priority.
 * - Lossless priorities: XOFF on the link into the host when the
 *   priority's bytes reach 'xoff', XON when they fall to 'xon' (rule and
 *   source in cs_pkt_net.h); the pause is refreshed while still above.
 * - A stall [from, until) starts no drain that would overlap it.
 * - InfiniBand (credits, cs_pkt_net_set_credit): the link's credits are
 *   the buffer; a packet holds its link's credits until it is drained,
 *   never overflows, and nothing pauses. */
#include "config.h"

#include "sim/cs_pkt_net-int.h"

/* mlx5 takes the pause headroom from cable length and MTU; here the
 * same formula a switch uses for its ingress (cs_pkt_headroom_bytes on
 * the link's rate and cable), so both ends of a link agree. */
static guint64 rx_headroom(const link_t *in)
{
    const cs_pkt_port_cfg_t *c = cs_pkt_port_cfg(in->port);
    return cs_pkt_headroom_bytes(CS_PKT_WIRE_MAX - CS_PKT_PREAMBLE_SFD - CS_PKT_IFG, c->rate_bps,
                                 (double)c->prop_ps / CS_PKT_NET_PS_PER_M);
}

/* XOFF = buffer - headroom, XON = XOFF - the largest frame (clamped at
 * 0 when the buffer is too small: then it pauses at once). */
static void rx_thresholds(host_rx_t *rx, const link_t *in)
{
    guint64 hr = rx_headroom(in);
    rx->xoff = rx->buffer > hr ? rx->buffer - hr : 0;
    rx->xon = rx->xoff > CS_PKT_WIRE_MAX ? rx->xoff - CS_PKT_WIRE_MAX : 0;
}

/* The priorities a NIC treats as lossless: those of the switch its link
 * comes from (DCBX: the NIC takes the switch's PFC settings), else
 * priority 3, RoCE's usual one (cs_pkt_mmu_cfg_init). */
static guint8 rx_lossless(const cs_pkt_net_t *net, const node_t *n)
{
    if (n->in_link >= 0) {
        const node_t *up = node_of(net, link_of(net, n->in_link)->from);
        if (up->mmu != NULL)
            return cs_pkt_mmu_cfg(up->mmu)->lossless;
    }
    return CS_PKT_MMU_LOSSLESS_DEFAULT;   /* no configuration per packet */
}

int cs_pkt_net_set_host_rx(cs_pkt_net_t *net, int host, double bps, guint64 buffer_bytes)
{
    g_return_val_if_fail(host >= 0 && (guint)host < net->nodes->len, -1);
    node_t *n = node_of(net, host);
    g_return_val_if_fail(n->host && n->rx == NULL && bps > 0 && bps < G_MAXDOUBLE, -1);
    host_rx_t *rx = g_new0(host_rx_t, 1);
    rx->bps = bps;
    rx->buffer = buffer_bytes > 0 ? buffer_bytes : CS_PKT_NIC_RX_BUFFER;
    rx->stall_from = -1;
    if (n->in_link >= 0) {
        const link_t *in = link_of(net, n->in_link);
        if (!net->credit && rx_lossless(net, n) != 0 && rx->buffer < rx_headroom(in) + CS_PKT_WIRE_MAX) {
            g_free(rx);
            return -1;
        }
        rx_thresholds(rx, in);
    }
    rx->ev = cs_evq_alloc(net->evq);
    rx->ev->kind = CS_PKT_EV_HOST_RX;
    rx->ev->a = host;
    n->rx = rx;
    return 0;
}

void net_host_link_added(cs_pkt_net_t *net, int node)
{
    node_t *n = node_of(net, node);
    if (n->rx != NULL && n->in_link >= 0)
        rx_thresholds(n->rx, link_of(net, n->in_link));
}

void net_host_free(cs_pkt_net_t *net, node_t *n)
{
    host_rx_t *rx = n->rx;
    if (rx == NULL)
        return;
    while (rx->head != NULL) {
        cs_pkt_t *p = rx->head;
        rx->head = p->next;
        cs_pkt_release(net->pool, p);
    }
    cs_evq_cancel(net->evq, rx->ev);
    cs_evq_release(net->evq, rx->ev);
    g_free(rx);
    n->rx = NULL;
}

static inline void rx_account(host_rx_t *rx, cs_time_t now)
{
    rx->area += (double)rx->total * (double)(now - rx->area_t);
    rx->area_t = now;
}

gboolean net_host_stalled_for_good(const node_t *n, cs_time_t now)
{
    const host_rx_t *rx = n->rx;
    return rx != NULL && rx->stall_from >= 0 && rx->stall_from <= now && rx->stall_until == CS_TIME_NEVER;
}

/* Starts draining the head, unless busy, empty or stalled. */
static void rx_start(cs_pkt_net_t *net, host_rx_t *rx, cs_time_t now)
{
    if (rx->busy || rx->head == NULL)
        return;
    double t = (double)rx->head->payload * 8 * CS_PS_PER_S / rx->bps + rx->rem;
    cs_time_t d = (cs_time_t)t;
    /* the drain occupies [now, now + d), at least an instant */
    if (rx->stall_from >= 0 && now < rx->stall_until && now + MAX(d, 1) > rx->stall_from) {
        if (rx->stall_until != CS_TIME_NEVER)
            evq_at(net->evq, rx->ev, rx->stall_until);
        return;
    }
    rx->rem = t - (double)d;
    rx->busy = TRUE;
    evq_at(net->evq, rx->ev, now + d);
}

void net_host_arrive(cs_pkt_net_t *net, int node, link_t *in, cs_pkt_t *pkt, cs_time_t now)
{
    node_t *n = node_of(net, node);
    host_rx_t *rx = n->rx;
    int p = pkt->prio;
    gboolean lossless = !net->credit && (rx_lossless(net, n) >> p & 1);
    gboolean ours = n->in_link == cs_pkt_port_id(in->port);   /* the NIC pauses its own port's link */
    if (!net->credit && rx->bytes[p] + pkt->wire > rx->buffer) {
        if (lossless && ours)
            cs_pkt_pfc_xoff(in->pfc, p, now);
        rx->drops[p]++;
        in->drops[p]++;
        net_drop(net, pkt);
        return;
    }
    rx_account(rx, now);
    pkt->next = NULL;
    if (rx->tail != NULL)
        rx->tail->next = pkt;
    else
        rx->head = pkt;
    rx->tail = pkt;
    rx->bytes[p] += pkt->wire;
    rx->total += pkt->wire;
    rx->npkts++;
    rx->max = MAX(rx->max, rx->total);
    if (lossless && ours && rx->bytes[p] >= rx->xoff)
        cs_pkt_pfc_xoff(in->pfc, p, now);
    rx_start(net, rx, now);
}

void net_host_event(cs_pkt_net_t *net, int node, cs_time_t now)
{
    node_t *n = node_of(net, node);
    host_rx_t *rx = n->rx;
    if (rx->busy) {
        cs_pkt_t *pkt = rx->head;
        rx->head = pkt->next;
        if (rx->head == NULL)
            rx->tail = NULL;
        pkt->next = NULL;
        rx_account(rx, now);
        int p = pkt->prio;
        rx->bytes[p] -= pkt->wire;
        rx->total -= pkt->wire;
        rx->npkts--;
        rx->busy = FALSE;
        net_credit_release(net, link_of(net, pkt->route->port[pkt->hop - 1]), pkt, now);
        if (n->in_link >= 0 && !net->credit) {
            cs_pkt_pfc_t *pfc = link_of(net, n->in_link)->pfc;
            if (cs_pkt_pfc_asserted(pfc, p) && rx->bytes[p] <= rx->xon)
                cs_pkt_pfc_xon(pfc, p, now);
        }
        rx_start(net, rx, now);
        net_sink(net, node, pkt, now);
        return;
    }
    rx_start(net, rx, now);           /* a stall ended */
}

gboolean net_host_still(const cs_pkt_net_t *net, int node, int prio)
{
    const host_rx_t *rx = node_of(net, node)->rx;
    return rx != NULL && rx->bytes[prio] > rx->xon;
}

int cs_pkt_net_host_stall(cs_pkt_net_t *net, int host, cs_time_t from, cs_time_t until)
{
    g_return_val_if_fail(host >= 0 && (guint)host < net->nodes->len, -1);
    host_rx_t *rx = node_of(net, host)->rx;
    g_return_val_if_fail(rx != NULL && from >= 0 && until > from, -1);
    rx->stall_from = from;
    rx->stall_until = until;
    net_touch(net, net->now);
    if (!rx->busy) {                  /* a wait for an older stall's end is taken again */
        cs_evq_cancel(net->evq, rx->ev);
        rx_start(net, rx, net->now);
    }
    return 0;
}

static const host_rx_t *rx_of(const cs_pkt_net_t *net, int host)
{
    g_return_val_if_fail(host >= 0 && (guint)host < net->nodes->len, NULL);
    return node_of(net, host)->rx;
}

guint64 cs_pkt_net_host_rx_bytes(const cs_pkt_net_t *net, int host, int prio)
{
    const host_rx_t *rx = rx_of(net, host);
    g_return_val_if_fail(prio >= 0 && prio < CS_PKT_PRIOS, 0);
    return rx != NULL ? rx->bytes[prio] : 0;
}

guint64 cs_pkt_net_host_rx_max(const cs_pkt_net_t *net, int host)
{
    const host_rx_t *rx = rx_of(net, host);
    return rx != NULL ? rx->max : 0;
}

double cs_pkt_net_host_rx_avg(const cs_pkt_net_t *net, int host)
{
    const host_rx_t *rx = rx_of(net, host);
    if (rx == NULL || net->now <= 0)
        return 0;
    return (rx->area + (double)rx->total * (double)(net->now - rx->area_t)) / (double)net->now;
}

guint64 cs_pkt_net_host_rx_drops(const cs_pkt_net_t *net, int host, int prio)
{
    const host_rx_t *rx = rx_of(net, host);
    g_return_val_if_fail(prio >= 0 && prio < CS_PKT_PRIOS, 0);
    return rx != NULL ? rx->drops[prio] : 0;
}

void cs_pkt_net_host_rx_thresholds(const cs_pkt_net_t *net, int host, guint64 *xoff, guint64 *xon)
{
    const host_rx_t *rx = rx_of(net, host);
    *xoff = rx != NULL ? rx->xoff : 0;
    *xon = rx != NULL ? rx->xon : 0;
}
