/* Queue pairs: the sender (segmentation, pacing, go-back-N, the
 * retransmission timer) and the receiver (in-order acceptance, ACK/NAK,
 * the DCQCN notification point) of cs_pkt_net.h. */
#include "config.h"

#include <math.h>

#include "sim/cs_pkt_net-int.h"

static gboolean route_ok(const cs_pkt_net_t *net, const int *route, int n)
{
    if (n < 1)
        return FALSE;
    for (int i = 0; i < n; i++)
        if (route[i] < 0 || (guint)route[i] >= net->links->len)
            return FALSE;
    for (int i = 1; i < n; i++)
        if (link_of(net, route[i])->from != link_of(net, route[i - 1])->to)
            return FALSE;
    const node_t *src = node_of(net, link_of(net, route[0])->from);
    const node_t *dst = node_of(net, link_of(net, route[n - 1])->to);
    return (src->host || src->endpoint) && (dst->host || dst->endpoint);
}

static cs_event_t *flow_event(cs_pkt_net_t *net, int id, int kind)
{
    cs_event_t *ev = cs_evq_alloc(net->evq);
    ev->kind = kind;
    ev->a = id;
    return ev;
}

/* The reverse of a route (ACKs, CNPs), NULL when a link has no way back. */
static cs_pkt_route_t *route_back(const cs_pkt_net_t *net, const cs_pkt_route_t *r)
{
    int back[r->n];
    for (int i = 0; i < r->n; i++) {
        back[i] = link_of(net, r->port[r->n - 1 - i])->rev;
        if (back[i] < 0)
            return NULL;
    }
    return cs_pkt_route_new(back, r->n);
}

/* The retransmission timer's stream for a timeout: every QP arms its
 * timer 'now + timeout', so the deadlines of QPs with the same timeout
 * come in time order and skip the heap (cs_evq streams); a deadline that
 * progress moved goes to the heap (net_qp_rto). Past CS_EVQ_STREAMS
 * distinct timeouts, the heap: -1. */
static int rto_stream_for(cs_pkt_net_t *net, cs_time_t timeout)
{
    for (int i = 0; i < net->rto_streams; i++)
        if (net->rto_timeout[i] == timeout)
            return i;
    if (net->rto_streams == CS_EVQ_STREAMS)
        return -1;
    net->rto_timeout[net->rto_streams] = timeout;
    return net->rto_streams++;
}

/* Schedules the QP's timer at 'at' (now + its timeout) on its stream
 * (which sends it to the heap if a caller's clock ran behind the
 * stream's last deadline), or on the heap. */
static void rto_push(cs_pkt_net_t *net, flow_t *f, cs_time_t at)
{
    if (f->rto_stream >= 0)
        cs_evq_push_stream(net->evq, f->rto_ev, at, f->rto_stream);
    else
        cs_evq_push(net->evq, f->rto_ev, at);
}

static int add_qp(cs_pkt_net_t *net, const int *route, int nroute, const cs_pkt_qp_cfg_t *cfg, gboolean write)
{
    g_return_val_if_fail(route_ok(net, route, nroute), -1);
    g_return_val_if_fail(cs_pkt_frame_mtu_valid(cfg->mtu), -1);
    g_return_val_if_fail(cfg->prio >= 0 && cfg->prio < CS_PKT_PRIOS && cfg->timeout >= 0 && cfg->retry_cnt >= 0, -1);
    g_return_val_if_fail(!cfg->selective || cfg->ack_interval > 0, -1);
    flow_t f = {
        .cfg = *cfg,
        .write = write,
        .route = cs_pkt_route_new(route, nroute),
        .first = -1,
        .done = -1,
        .last_cnp = -1,
        .timer_due = -1,
        .ibcc = net->ibcc,
    };
    if (f.ibcc != NULL)
        cs_pkt_ibcc_ca_init(&f.ca, f.ibcc, net->now);
    /* ACKs and IB CC's BECNs go back along the reverse route */
    if ((cfg->ack_interval > 0 || f.ibcc != NULL) && (f.back = route_back(net, f.route)) == NULL) {
        cs_pkt_route_free(f.route);
        g_return_val_if_reached(-1);   /* no way back for ACKs */
    }
    f.mcap = 4;
    f.msgs = g_new(msg_t, f.mcap);
    f.rto_stream = rto_stream_for(net, cfg->timeout);
    g_array_append_val(net->flows, f);
    int id = (int)net->flows->len - 1;
    flow_t *q = flow_at(net, id);
    q->pace_ev = flow_event(net, id, CS_PKT_EV_FLOW_PACE);
    q->rto_ev = flow_event(net, id, CS_PKT_EV_QP_RTO);
    return id;
}

int cs_pkt_net_add_qp(cs_pkt_net_t *net, const int *route, int nroute, const cs_pkt_qp_cfg_t *cfg)
{
    return add_qp(net, route, nroute, cfg, TRUE);
}

int cs_pkt_net_set_qp_routes(cs_pkt_net_t *net, int qp, const int *ports, const int *off, int n)
{
    g_return_val_if_fail(qp >= 0 && (guint)qp < net->flows->len && n >= 1 && off[0] == 0, -1);
    flow_t *f = flow_at(net, qp);
    g_return_val_if_fail(f->alts == NULL, -1);
    int first = f->route->port[0];
    int last = link_of(net, f->route->port[f->route->n - 1])->to;
    for (int i = 0; i < n; i++) {
        int len = off[i + 1] - off[i];
        if (len < 1 || ports[off[i]] != first || link_of(net, ports[off[i + 1] - 1])->to != last)
            return -1;
        for (int k = 1; k < len; k++)
            if (link_of(net, ports[off[i] + k])->from != link_of(net, ports[off[i] + k - 1])->to)
                return -1;
    }
    f->alts = g_new(cs_pkt_route_t *, n);
    for (int i = 0; i < n; i++)
        f->alts[i] = cs_pkt_route_new(ports + off[i], off[i + 1] - off[i]);
    f->nalts = n;
    return 0;
}

/* The packet is at the switch its hop - 1 port led to. The candidates are
 * the routes that share its ports so far; among their next ports, the one
 * whose queue on the packet's priority holds the fewest bytes. */
void net_qp_ar_pick(cs_pkt_net_t *net, cs_pkt_t *pkt)
{
    flow_t *f = flow_at(net, (int)pkt->flow);
    const cs_pkt_route_t *cur = pkt->route;
    int h = pkt->hop;
    if (h >= cur->n)
        return;                       /* arrived */
    const cs_pkt_route_t *best = NULL;
    guint64 best_q = G_MAXUINT64;
    for (int i = -1; i < f->nalts; i++) {
        const cs_pkt_route_t *r = i < 0 ? cur : f->alts[i];   /* the route it is on first: it wins ties */
        if (r->n <= h || (i >= 0 && r == cur))
            continue;
        gboolean same = TRUE;
        for (int k = 0; k < h && same; k++)
            same = r->port[k] == cur->port[k];
        if (!same)
            continue;
        guint64 q = cs_pkt_port_queue_bytes(link_of(net, r->port[h])->port, pkt->prio);
        if (q < best_q) {
            best_q = q;
            best = r;
        }
    }
    if (best != NULL && best->port[h] != cur->port[h]) {
        pkt->route = best;
        f->ar_moves++;
    }
}

void cs_pkt_net_set_qp_hooks(cs_pkt_net_t *net, const cs_pkt_qp_hooks_t *hooks, void *ctx)
{
    net->qp_hooks = *hooks;
    net->qp_ctx = ctx;
}

int cs_pkt_net_add_flow(cs_pkt_net_t *net, const int *route, int nroute,
                        const cs_pkt_flow_cfg_t *cfg)
{
    g_return_val_if_fail(cfg->start >= 0, -1);
    cs_pkt_qp_cfg_t qc = { .mtu = cfg->mtu, .prio = cfg->prio, .frame = cfg->frame };
    int id = add_qp(net, route, nroute, &qc, cfg->write);
    if (id < 0)
        return -1;
    /* the message's size now, posted at its start (CS_PKT_EV_FLOW_START: a = id, b = -1) */
    cs_event_t *ev = flow_event(net, id, CS_PKT_EV_FLOW_START);
    ev->b = -1;
    net->starts_pending++;
    flow_at(net, id)->msgs[0].bytes = cfg->bytes;
    cs_evq_push(net->evq, ev, cfg->start);
    return id;
}

int cs_pkt_net_set_dcqcn(cs_pkt_net_t *net, int flow, const cs_pkt_dcqcn_cfg_t *cfg)
{
    g_return_val_if_fail(flow >= 0 && (guint)flow < net->flows->len, -1);
    g_return_val_if_fail(cfg != NULL && cs_pkt_dcqcn_cfg_valid(cfg), -1);
    flow_t *f = flow_at(net, flow);
    g_return_val_if_fail(f->dcqcn == NULL && f->next == 0, -1);
    if (f->back == NULL && (f->back = route_back(net, f->route)) == NULL)
        g_return_val_if_reached(-1);   /* no way back for CNPs */
    f->dcqcn = g_memdup2(cfg, sizeof *cfg);
    cs_pkt_dcqcn_rp_init(&f->rp, f->dcqcn, cs_pkt_port_cfg(link_of(net, f->route->port[0])->port)->rate_bps);
    f->timer_ev = flow_event(net, flow, CS_PKT_EV_DCQCN_TIMER);
    return 0;
}

/* ---- the sender -------------------------------------------------------- */

static inline msg_t *msg_of(flow_t *f, guint64 m)
{
    return &f->msgs[m % f->mcap];
}

/* A ring of flags for PSNs [base, base + cap), at PSN % cap: made
 * large enough for 'psn' (doubling; a flow's first gap allocates it). */
static void ring_fit(guint8 **ring, guint64 *cap, guint64 base, guint64 psn)
{
    if (psn < base + *cap)
        return;
    guint64 ncap = MAX(*cap, 64);
    while (psn >= base + ncap)
        ncap *= 2;
    guint8 *n = g_new0(guint8, ncap);
    for (guint64 p = base; p < base + *cap; p++)
        n[p % ncap] = (*ring)[p % *cap];
    g_free(*ring);
    *ring = n;
    *cap = ncap;
}

/* The message (number) packet 'psn' is in, from message 'm' on. */
static guint64 msg_find(flow_t *f, guint64 m, guint64 psn)
{
    while (msg_of(f, m)->end <= psn)
        m++;
    return m;
}

/* Whether packet 'psn' of message 'm' is the WRITE with immediate of no
 * payload posted after the message's data (MSG_IMM_APART). */
static inline gboolean msg_imm(const msg_t *m, guint64 psn)
{
    return m->kind == MSG_IMM_APART && psn + 1 == m->end;
}

/* The payload of packet 'psn' of message 'm'. */
static guint32 msg_payload(const flow_t *f, const msg_t *m, guint64 psn)
{
    return msg_imm(m, psn) ? 0 : cs_pkt_frame_payload(m->bytes, f->cfg.mtu, psn - m->start);
}

/* Makes packet 'psn' of message 'mi' and queues it at its first port. */
static void emit_psn(cs_pkt_net_t *net, flow_t *f, int id, guint64 mi, guint64 psn, cs_time_t now)
{
    const msg_t *m = msg_of(f, mi);
    const cs_pkt_qp_cfg_t *c = &f->cfg;
    guint64 i = psn - m->start;
    gboolean imm = msg_imm(m, psn);
    cs_pkt_t *p = cs_pkt_alloc(net->pool);
    p->route = f->route;
    p->flow = (guint32)id;
    p->psn = (guint32)psn;
    p->payload = msg_payload(f, m, psn);
    /* the WRITE with immediate alone: headers and a RETH (its 4-B ImmDt,
     * like a message's last packet's, is not counted) */
    p->wire = imm ? cs_pkt_frame_overhead(&c->frame, f->write ? CS_PKT_HDR_WRITE_FIRST : CS_PKT_HDR_MIDDLE)
                  : cs_pkt_frame_wire(&c->frame, m->bytes, c->mtu, i, f->write);
    p->prio = (guint8)c->prio;
    p->flags = CS_PKT_F_ECT | (f->write && (i == 0 || imm) ? CS_PKT_F_FIRST : 0) |
               (psn + 1 == m->end ? CS_PKT_F_LAST : 0) |
               (f->alts != NULL && (m->kind == MSG_AR || (m->kind == MSG_IMM_APART && !imm)) ? CS_PKT_F_AR : 0);
    if (psn < f->hw)
        f->retx++;
    f->queued++;
    cs_pkt_port_enqueue(link_of(net, f->route->port[0])->port, p, now);
}

/* Makes the flow's next packet: a PSN a selective NAK asked for, else
 * the next in order. */
static void flow_emit(cs_pkt_net_t *net, flow_t *f, int id, cs_time_t now)
{
    if (f->rs_count > 0) {
        guint64 p = MAX(f->rs_low, f->una);
        while (!f->resend[p % f->rcap])
            p++;
        f->resend[p % f->rcap] = 0;
        f->rs_count--;
        f->rs_low = p + 1;
        emit_psn(net, f, id, msg_find(f, f->mfirst, p), p, now);
        return;
    }
    f->emsg = msg_find(f, f->emsg, f->next);
    guint64 psn = f->next++;
    emit_psn(net, f, id, f->emsg, psn, now);
}

/* Forgets the PSNs to send again in [from, to). */
static void resend_clear(flow_t *f, guint64 from, guint64 to)
{
    for (guint64 p = from; p < to && f->rs_count > 0; p++)
        if (f->resend[p % f->rcap]) {
            f->resend[p % f->rcap] = 0;
            f->rs_count--;
        }
}

static gboolean flow_paced(const flow_t *f)
{
    return f->dcqcn != NULL || f->cap_bps > 0 || f->ibcc != NULL;
}

/* The rate the QP is paced at: the lower of DCQCN's RC (while limited)
 * and the host's cap; 0: not paced. */
static double pace_rate(const flow_t *f)
{
    double r = f->dcqcn != NULL && f->rp.limited ? f->rp.rc : 0;
    if (f->cap_bps > 0)
        r = r > 0 ? MIN(r, f->cap_bps) : f->cap_bps;
    return r;
}

/* The pacing rate went from 'old' to the QP's current one at 'now': the
 * gap under way was taken at the old rate, so what is left of it is
 * scaled by old/new (a pacer that earns its credit at the rate of the
 * moment; the HPCC ns-3 fork's RdmaHw::ChangeRate also moves the next
 * send time at every rate change, [H]). Without this a packet sent at a
 * cut rate of a few Mb/s waits its whole gap however the rate rises. */
static void pace_rescale(cs_pkt_net_t *net, flow_t *f, double old, cs_time_t now)
{
    double r = pace_rate(f);
    if (r == old || f->next_send <= now)
        return;
    if (r == 0)
        f->next_send = now;
    else if (old > 0)
        f->next_send = now + (cs_time_t)ceil((double)(f->next_send - now) * old / r);
    if (cs_evq_scheduled(f->pace_ev))
        cs_evq_reschedule(net->evq, f->pace_ev, f->next_send);
}

/* The DCQCN increase timer stopped while the QP idled: its expiries in
 * [timer_due, now] at once (cs_pkt_dcqcn_rp_timers), as the NIC's
 * free-running timer would have applied them, and the timer runs again
 * in the same phase while the QP stays limited. */
static void timer_resume(cs_pkt_net_t *net, flow_t *f, cs_time_t now)
{
    if (f->timer_due < 0)
        return;
    cs_time_t period = f->dcqcn->timer;
    guint64 k = now >= f->timer_due ? (guint64)((now - f->timer_due) / period) + 1 : 0;
    cs_time_t at = f->timer_due + (cs_time_t)k * period;
    f->timer_due = -1;
    double old = pace_rate(f);
    if (cs_pkt_dcqcn_rp_timers(&f->rp, k))
        evq_at(net->evq, f->timer_ev, at);
    pace_rescale(net, f, old, now);
}

/* Packets left to send: new ones, or ones selective repeat sends again. */
static inline gboolean has_work(const flow_t *f)
{
    return f->next < f->npkts || f->rs_count > 0;
}

/* The DCQCN increase timer expired (CS_PKT_EV_DCQCN_TIMER, 'ev'). A QP
 * with nothing left to send stops it; the NIC's keeps running, so the
 * expiries it misses are applied when it is busy again (timer_resume). */
void net_qp_timer(cs_pkt_net_t *net, int id, cs_event_t *ev, cs_time_t now)
{
    flow_t *f = flow_at(net, id);
    if (!has_work(f)) {
        f->timer_due = now;
        return;
    }
    double old = pace_rate(f);
    if (cs_pkt_dcqcn_rp_timer(&f->rp))
        cs_evq_push(net->evq, ev, now + f->dcqcn->timer);
    pace_rescale(net, f, old, now);
}

/* Keeps up to CS_PKT_NET_WINDOW of the flow's packets in its host's
 * queue; a paced flow one at a time, each a gap of its rate limiter after
 * the last started on the wire. */
void net_qp_pump(cs_pkt_net_t *net, int id, cs_time_t now)
{
    flow_t *f = flow_at(net, id);
    if (f->timer_due >= 0 && has_work(f))
        timer_resume(net, f, now);
    while (!f->failed && f->queued < CS_PKT_NET_WINDOW && has_work(f)) {
        gboolean paced = flow_paced(f);
        if (paced && (now < f->next_send || f->queued > 0)) {
            if (f->queued == 0)
                evq_at(net->evq, f->pace_ev, f->next_send);
            return;
        }
        flow_emit(net, f, id, now);   /* may run net_dequeued for this flow: re-read */
        f = flow_at(net, id);
    }
}

static void rto_arm(cs_pkt_net_t *net, flow_t *f, cs_time_t now)
{
    if (f->cfg.timeout <= 0 || f->cfg.ack_interval == 0)
        return;
    f->rto_at = now + f->cfg.timeout;
    if (!cs_evq_scheduled(f->rto_ev))
        rto_push(net, f, f->rto_at);
}

/* A packet of the flow left its host: the rate limiter spaces the next
 * one; the first transmission of a message's last packet is reported. */
void net_qp_sent(cs_pkt_net_t *net, int id, const cs_pkt_t *pkt, cs_time_t now)
{
    flow_t *f = flow_at(net, id);
    f->queued--;
    if (flow_paced(f)) {
        cs_time_t gap = 0;
        if (f->dcqcn != NULL) {
            cs_pkt_dcqcn_rp_sent(&f->rp, pkt->wire);
            gap = cs_pkt_dcqcn_rp_gap(&f->rp, pkt->wire);
        }
        if (f->cap_bps > 0)
            gap = MAX(gap, (cs_time_t)((double)pkt->wire * 8e12 / f->cap_bps));
        if (f->ibcc != NULL) {
            /* IB CC: the packet's time on the NIC's link and CCT[CCTI]'s delay after it */
            double line = (double)cs_pkt_port_cfg(link_of(net, f->route->port[0])->port)->rate_bps;
            cs_time_t pkt_ps = (cs_time_t)((double)pkt->wire * 8e12 / line);
            gap = MAX(gap, pkt_ps + cs_pkt_ibcc_ca_delay(&f->ca, f->ibcc, pkt_ps, now));
        }
        f->next_send = now + gap;
    }
    if ((guint64)pkt->psn >= f->hw) {
        if (f->hw == f->una)
            rto_arm(net, f, now);     /* nothing was out: the timer starts */
        f->hw = (guint64)pkt->psn + 1;
        while (f->sent_msgs < f->nmsgs && msg_of(f, f->sent_msgs)->end <= f->hw) {
            f->sent_msgs++;
            if (net->qp_hooks.sent != NULL)
                net->qp_hooks.sent(net->qp_ctx, id, now);
            f = flow_at(net, id);     /* the hook may post */
        }
    }
    net_qp_pump(net, id, now);
}

static void qp_post(cs_pkt_net_t *net, int qp, guint64 bytes, msg_kind_t kind, cs_time_t now)
{
    g_return_if_fail(qp >= 0 && (guint)qp < net->flows->len);
    net_touch(net, now);
    flow_t *f = flow_at(net, qp);
    guint64 np = cs_pkt_frame_npkts(bytes, f->cfg.mtu) + (kind == MSG_IMM_APART ? 1 : 0);
    /* PSNs are the QP's packet indices: refused before anything changes */
    g_return_if_fail(f->npkts + np <= G_MAXUINT32);
    if (f->nmsgs - f->mfirst == f->mcap) {
        /* grow the ring, keeping each live message at number % mcap */
        guint ncap = f->mcap * 2;
        msg_t *n = g_new(msg_t, ncap);
        for (guint64 m = f->mfirst; m < f->nmsgs; m++)
            n[m % ncap] = f->msgs[m % f->mcap];
        g_free(f->msgs);
        f->msgs = n;
        f->mcap = ncap;
    }
    *msg_of(f, f->nmsgs) = (msg_t){ f->npkts, f->npkts + np, bytes, kind };
    f->nmsgs++;
    f->npkts += np;
    net_qp_pump(net, qp, now);
}

void cs_pkt_net_qp_post(cs_pkt_net_t *net, int qp, guint64 bytes, cs_time_t now)
{
    qp_post(net, qp, bytes, MSG_AR, now);
}

void cs_pkt_net_qp_post_ar(cs_pkt_net_t *net, int qp, guint64 bytes, gboolean imm_apart, cs_time_t now)
{
    qp_post(net, qp, bytes, imm_apart ? MSG_IMM_APART : MSG_STATIC, now);
}

void cs_pkt_net_qp_set_rate(cs_pkt_net_t *net, int qp, double bps, cs_time_t now)
{
    g_return_if_fail(qp >= 0 && (guint)qp < net->flows->len);
    net_touch(net, now);
    flow_t *f = flow_at(net, qp);
    double old = pace_rate(f);
    f->cap_bps = bps > 0 ? bps : 0;
    pace_rescale(net, f, old, now);
    net_qp_pump(net, qp, now);
}

/* Messages both acknowledged (without ACKs: delivered) and delivered
 * leave the ring. */
static void flow_trim(flow_t *f)
{
    guint64 done = f->cfg.ack_interval > 0 ? MIN(f->una, f->expect) : f->expect;
    while (f->mfirst < f->deliv_msgs && f->mfirst < f->emsg && msg_of(f, f->mfirst)->end <= done)
        f->mfirst++;
}

/* The retransmission timer: nothing acknowledged for a timeout while
 * packets are out: go back to the oldest, or fail after retry_cnt
 * retries (NCCL: "transport retry counter exceeded", IBV_WC_RETRY_EXC_ERR). */
void net_qp_rto(cs_pkt_net_t *net, int id, cs_time_t now)
{
    flow_t *f = flow_at(net, id);
    if (f->failed || f->una >= f->hw)
        return;                       /* everything out is acknowledged: idle */
    if (now < f->rto_at) {
        /* progress moved the deadline: to the heap, as it may come
         * before timers other QPs armed since (not the stream's order) */
        cs_evq_push(net->evq, f->rto_ev, f->rto_at);
        return;
    }
    f->timeouts++;
    if (f->retries >= f->cfg.retry_cnt) {
        f->failed = TRUE;
        if (net->qp_hooks.failed != NULL)
            net->qp_hooks.failed(net->qp_ctx, id, now);
        return;
    }
    f->retries++;
    resend_clear(f, f->una, f->hw);   /* all of them go again */
    f->next = f->una;
    f->emsg = f->mfirst;
    f->rto_at = now + f->cfg.timeout;
    rto_push(net, f, f->rto_at);
    net_qp_pump(net, id, now);
}

/* An ACK (every packet before psn is in) or a NAK (and go back to psn)
 * reached the sender. */
static void flow_ack(cs_pkt_net_t *net, int id, const cs_pkt_t *pkt, cs_time_t now)
{
    flow_t *f = flow_at(net, id);
    guint64 psn = pkt->psn;
    if ((pkt->flags & CS_PKT_F_NAK) && f->cfg.selective) {
        /* the gap [psn, psn + payload): those PSNs go again, no others */
        f->naks++;
        for (guint64 p = MAX(psn, f->una); p < psn + pkt->payload && p < f->hw; p++) {
            ring_fit(&f->resend, &f->rcap, f->una, p);
            if (!f->resend[p % f->rcap]) {
                if (f->rs_count == 0 || p < f->rs_low)
                    f->rs_low = p;
                f->resend[p % f->rcap] = 1;
                f->rs_count++;
            }
        }
        net_qp_pump(net, id, now);
        return;
    }
    if (psn > f->una) {
        resend_clear(f, f->una, psn);
        f->una = psn;
        f->retries = 0;
        f->rto_at = now + f->cfg.timeout;
        flow_trim(f);
        /* nothing out: the timer stops (rto_arm starts it with the next
         * packet), so an idle QP leaves no event that would move the
         * net's clock a timeout past its last ACK */
        if (f->una >= f->hw && cs_evq_scheduled(f->rto_ev))
            cs_evq_cancel(net->evq, f->rto_ev);
    }
    if (pkt->flags & CS_PKT_F_NAK) {
        f->naks++;
        if (f->next > psn) {
            f->next = psn;
            f->emsg = f->mfirst;
        }
        net_qp_pump(net, id, now);
    }
}

/* ---- the receiver ------------------------------------------------------ */

/* A packet back to the sender along the flow's reverse route: 'extra'
 * bytes (an AETH, a CNP's payload) besides the framing of a packet. */
static void send_back(cs_pkt_net_t *net, flow_t *f, guint32 flow, guint32 flags, guint32 psn, guint32 extra, int prio,
                      guint32 count, cs_time_t now)
{
    cs_pkt_t *p = cs_pkt_alloc(net->pool);
    p->route = f->back;
    p->flow = flow;
    p->psn = psn;
    p->wire = extra + cs_pkt_frame_overhead(&f->cfg.frame, CS_PKT_HDR_MIDDLE);
    p->prio = (guint8)prio;
    p->flags = (guint16)flags;
    p->payload = count;               /* a selective NAK's gap length */
    cs_pkt_port_enqueue(link_of(net, f->back->port[0])->port, p, now);
}

/* Notification point: a CE-marked packet of a DCQCN flow with no CNP in
 * the last gap sends one back, a 64-B payload on the CNP priority. */
static void np_receive(cs_pkt_net_t *net, const cs_pkt_t *pkt, cs_time_t now)
{
    flow_t *f = flow_at(net, (int)pkt->flow);
    if (f->dcqcn == NULL || !(pkt->flags & CS_PKT_F_CE))
        return;
    if (f->last_cnp >= 0 && now - f->last_cnp < f->dcqcn->cnp_gap)
        return;
    f->last_cnp = now;
    f->cnps_sent++;
    send_back(net, f, pkt->flow, CS_PKT_F_CNP, 0, CS_PKT_CNP_PAYLOAD, f->dcqcn->cnp_prio, 0, now);
}

/* Reaction point: a CNP reached the sender. */
static void rp_receive(cs_pkt_net_t *net, int id, cs_time_t now)
{
    flow_t *f = flow_at(net, id);
    f->cnps_received++;
    timer_resume(net, f, now);        /* the expiries before the CNP come first */
    double old = pace_rate(f);
    if (cs_pkt_dcqcn_rp_cnp(&f->rp, now))
        evq_at(net->evq, f->timer_ev, now + f->dcqcn->timer);
    pace_rescale(net, f, old, now);
}

/* An ACK or NAK for 'psn' (the next PSN the receiver expects). */
static void send_ack(cs_pkt_net_t *net, flow_t *f, guint32 flow, gboolean nak, cs_time_t now)
{
    guint32 becn = 0;
    if (f->becn_due) {                /* IB CC: the BECN rides on this ACK */
        f->becn_due = FALSE;
        f->becns_sent++;
        becn = CS_PKT_F_BECN;
    }
    send_back(net, f, flow, CS_PKT_F_ACK | (nak ? CS_PKT_F_NAK : 0) | becn, (guint32)f->expect,
              CS_PKT_AETH, f->cfg.prio, 0, now);
}

/* IB CC: the destination owes a BECN for a FECN-marked packet that no
 * ACK carried (none was due for it): a CNP with BECN at once, IB framing
 * and no payload, on the data's VL (cs_pkt_ibcc.h). */
static void ibcc_becn_out(cs_pkt_net_t *net, flow_t *f, guint32 flow, cs_time_t now)
{
    if (!f->becn_due)
        return;
    f->becn_due = FALSE;
    f->becns_sent++;
    send_back(net, f, flow, CS_PKT_F_CNP | CS_PKT_F_BECN, 0, 0, f->cfg.prio, 0, now);
}

/* Selective repeat: a packet past a gap is kept; the first beyond
 * everything seen NAKs the gap it ends (each gap once). Returns FALSE
 * for a duplicate of a kept one. */
static gboolean keep(cs_pkt_net_t *net, flow_t *f, const cs_pkt_t *pkt, cs_time_t now)
{
    guint64 psn = pkt->psn;
    ring_fit(&f->held, &f->hcap, f->expect, psn);
    if (f->held[psn % f->hcap])
        return FALSE;
    f->held[psn % f->hcap] = 1;
    f->ooo++;
    guint64 from = MAX(f->seen, f->expect);
    if (psn > from && !f->cfg.reorder)
        send_back(net, f, pkt->flow, CS_PKT_F_ACK | CS_PKT_F_NAK, (guint32)from, CS_PKT_AETH,
                  f->cfg.prio, (guint32)(psn - from), now);
    f->seen = MAX(f->seen, psn + 1);
    return TRUE;
}

/* Payload 'bytes' of the flow accepted in order at 'node'. */
static void accept_payload(cs_pkt_net_t *net, int node, flow_t *f, guint64 bytes)
{
    f->expect++;
    node_of(net, node)->delivered += bytes;
    f->delivered += bytes;
    f->arrived++;
}

/* A data packet reached its destination: accepted in PSN order, else
 * dropped (go-back-N) with one NAK per gap. Returns whether accepted;
 * the payloads of kept packets it let follow are in net->drained. */
static gboolean receive(cs_pkt_net_t *net, int node, const cs_pkt_t *pkt, cs_time_t now)
{
    int id = (int)pkt->flow;
    flow_t *f = flow_at(net, id);
    gboolean acks = f->cfg.ack_interval > 0;
    if (acks && (guint64)pkt->psn != f->expect) {
        if ((guint64)pkt->psn > f->expect && (f->cfg.selective || f->cfg.reorder)) {
            keep(net, f, pkt, now);
        } else if ((guint64)pkt->psn > f->expect) {
            f->ooo++;
            if (!f->nak_out) {
                f->nak_out = TRUE;
                send_ack(net, f, pkt->flow, TRUE, now);
            }
        } else {
            send_ack(net, f, pkt->flow, FALSE, now);   /* a duplicate: its ACK was lost */
        }
        return FALSE;
    }
    f->nak_out = FALSE;
    accept_payload(net, node, f, pkt->payload);
    if (f->first < 0)
        f->first = now;
    /* the packets kept after this one follow it in order */
    gboolean drained = FALSE;
    guint64 mi = f->deliv_msgs;
    while (f->hcap > 0 && f->expect < f->seen && f->held[f->expect % f->hcap]) {
        f->held[f->expect % f->hcap] = 0;
        mi = msg_find(f, mi, f->expect);
        const msg_t *m = msg_of(f, mi);
        guint32 payload = msg_payload(f, m, f->expect);
        accept_payload(net, node, f, payload);
        g_array_append_val(net->drained, payload);   /* the observer sees it too (net_sink) */
        drained = TRUE;
    }
    if (acks && (++f->since_ack >= f->cfg.ack_interval || (pkt->flags & CS_PKT_F_LAST) || drained)) {
        f->since_ack = 0;
        send_ack(net, f, pkt->flow, FALSE, now);
    }
    while (f->deliv_msgs < f->nmsgs && msg_of(f, f->deliv_msgs)->end <= f->expect) {
        f->deliv_msgs++;
        f->done = now;
        if (net->qp_hooks.delivered != NULL)
            net->qp_hooks.delivered(net->qp_ctx, id, now);
        f = flow_at(net, id);
    }
    flow_trim(f);
    return TRUE;
}

void net_sink(cs_pkt_net_t *net, int node, cs_pkt_t *pkt, cs_time_t now)
{
    if (pkt->flags & CS_PKT_F_BECN) {  /* IB CC: the source HCA raises its index */
        flow_t *f = flow_at(net, (int)pkt->flow);
        cs_pkt_ibcc_ca_becn(&f->ca, f->ibcc, now);
    }
    if (pkt->flags & CS_PKT_F_CNP) {
        if (!(pkt->flags & CS_PKT_F_BECN))
            rp_receive(net, (int)pkt->flow, now);
    } else if (pkt->flags & CS_PKT_F_ACK) {
        flow_ack(net, (int)pkt->flow, pkt, now);
    } else {
        flow_t *f = flow_at(net, (int)pkt->flow);
        if (f->ibcc != NULL && (pkt->flags & CS_PKT_F_CE))
            f->becn_due = TRUE;
        np_receive(net, pkt, now);
        g_array_set_size(net->drained, 0);
        gboolean ok = receive(net, node, pkt, now);
        f = flow_at(net, (int)pkt->flow);
        if (f->ibcc != NULL)
            ibcc_becn_out(net, f, pkt->flow, now);
        if (ok && net->observer != NULL) {
            /* every accepted packet once, in PSN order: this one, then
             * those kept past a gap it filled (selective repeat or
             * reordering; SHARP counts them, issue: a loss would hang it) */
            net->observer(net->observer_ctx, pkt, now);
            cs_pkt_t k = *pkt;
            for (guint i = 0; i < net->drained->len; i++) {
                k.psn = pkt->psn + 1 + i;
                k.payload = g_array_index(net->drained, guint32, i);
                net->observer(net->observer_ctx, &k, now);
            }
        }
    }
    cs_pkt_release(net->pool, pkt);
}
static const flow_t *flow_of(const cs_pkt_net_t *net, int flow)
{
    return &g_array_index(net->flows, flow_t, flow);
}

guint64 cs_pkt_net_flow_delivered(const cs_pkt_net_t *net, int flow) { return flow_of(net, flow)->delivered; }
cs_time_t cs_pkt_net_flow_first(const cs_pkt_net_t *net, int flow) { return flow_of(net, flow)->first; }
cs_time_t cs_pkt_net_flow_done(const cs_pkt_net_t *net, int flow) { return flow_of(net, flow)->done; }
guint64 cs_pkt_net_flow_dropped(const cs_pkt_net_t *net, int flow) { return flow_of(net, flow)->dropped; }
guint64 cs_pkt_net_qp_retransmitted(const cs_pkt_net_t *net, int qp) { return flow_of(net, qp)->retx; }
guint64 cs_pkt_net_qp_timeouts(const cs_pkt_net_t *net, int qp) { return flow_of(net, qp)->timeouts; }
guint64 cs_pkt_net_qp_naks(const cs_pkt_net_t *net, int qp) { return flow_of(net, qp)->naks; }
guint64 cs_pkt_net_qp_out_of_order(const cs_pkt_net_t *net, int qp) { return flow_of(net, qp)->ooo; }
gboolean cs_pkt_net_qp_failed(const cs_pkt_net_t *net, int qp) { return flow_of(net, qp)->failed; }
guint64 cs_pkt_net_qp_ar_moves(const cs_pkt_net_t *net, int qp) { return flow_of(net, qp)->ar_moves; }

/* Timeouts at rto_at, rto_at + T, ...: each while retries < retry_cnt
 * goes back and retries; the one after the last retry fails (net_qp_rto). */
cs_time_t cs_pkt_net_qp_fail_at(const cs_pkt_net_t *net, int qp)
{
    const flow_t *f = flow_of(net, qp);
    if (f->failed || f->una >= f->hw || f->cfg.timeout <= 0 || f->cfg.ack_interval == 0)
        return CS_TIME_NEVER;
    return f->rto_at + (cs_time_t)(f->cfg.retry_cnt - MIN(f->retries, f->cfg.retry_cnt)) * f->cfg.timeout;
}

guint64 cs_pkt_net_flow_cnps_sent(const cs_pkt_net_t *net, int flow) { return flow_of(net, flow)->cnps_sent; }
guint64 cs_pkt_net_flow_cnps_received(const cs_pkt_net_t *net, int flow) { return flow_of(net, flow)->cnps_received; }

void cs_pkt_net_qp_ibcc(cs_pkt_net_t *net, int qp, cs_pkt_qp_ibcc_t *out)
{
    g_return_if_fail(qp >= 0 && (guint)qp < net->flows->len);
    flow_t *f = flow_at(net, qp);
    *out = (cs_pkt_qp_ibcc_t){ 0 };
    if (f->ibcc == NULL)
        return;
    out->ccti_avg = cs_pkt_ibcc_ca_avg(&f->ca, f->ibcc, net->now);
    out->ccti = f->ca.ccti;
    out->ccti_max = f->ca.ccti_max;
    out->becns_received = f->ca.becns;
    out->becns_sent = f->becns_sent;
}

int cs_pkt_net_qp_port(const cs_pkt_net_t *net, int qp)
{
    g_return_val_if_fail(qp >= 0 && (guint)qp < net->flows->len, -1);
    return flow_of(net, qp)->route->port[0];
}

const cs_pkt_dcqcn_rp_t *cs_pkt_net_flow_rp(const cs_pkt_net_t *net, int flow)
{
    const flow_t *f = flow_of(net, flow);
    return f->dcqcn != NULL ? &f->rp : NULL;
}

double cs_pkt_net_qp_rate(const cs_pkt_net_t *net, int qp)
{
    g_return_val_if_fail(qp >= 0 && (guint)qp < net->flows->len, 0);
    const flow_t *f = flow_of(net, qp);
    double r = (double)cs_pkt_port_cfg(link_of(net, f->route->port[0])->port)->rate_bps;
    if (f->dcqcn != NULL && f->rp.limited)
        r = MIN(r, f->rp.rc);
    if (f->cap_bps > 0)
        r = MIN(r, f->cap_bps);
    return r;
}
