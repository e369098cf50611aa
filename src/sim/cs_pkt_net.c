/* The minimal packet network (see cs_pkt_net.h). */
#include "config.h"

#include <math.h>

#include "sim/cs_pkt_net-int.h"

static void net_dequeued(void *ctx, cs_pkt_port_t *port, cs_pkt_t *pkt, cs_time_t now);
static gboolean net_may_send(void *ctx, const cs_pkt_port_t *port, int prio, cs_time_t now);

/* Every port: as a packet leaves, a host makes its flow's next packet and
 * a switch gives its buffer back; PFC decides whether a priority may go. */
static const cs_pkt_port_hooks_t net_hooks = { net_dequeued, net_may_send };

#define NET_CAL_SHIFT 10
#define NET_CAL_BUCKETS 4096

cs_pkt_net_t *cs_pkt_net_new(void)
{
    cs_pkt_net_t *net = g_new0(cs_pkt_net_t, 1);
    net->evq = cs_evq_new();
    /* the near future in a calendar: 4096 buckets of 1.024 ns (4.2 us
     * ahead), where a network's serializations (83.6 ns for 4 KB at 400G),
     * arrivals (a link's delay) and pacing gaps mostly fall, a few events
     * a bucket */
    cs_evq_set_calendar(net->evq, NET_CAL_SHIFT, NET_CAL_BUCKETS);
    net->pool = cs_pkt_pool_new();
    net->nodes = g_array_new(FALSE, TRUE, sizeof(node_t));
    net->links = g_array_new(FALSE, TRUE, sizeof(link_t));
    net->flows = g_array_new(FALSE, TRUE, sizeof(flow_t));
    net->drained = g_array_new(FALSE, FALSE, sizeof(guint32));
    cs_pkt_pfc_cfg_init(&net->pfc_cfg);
    return net;
}

void cs_pkt_net_free(cs_pkt_net_t *net)
{
    if (net == NULL)
        return;
    for (guint i = 0; i < net->links->len; i++) {
        cs_pkt_pfc_free(g_array_index(net->links, link_t, i).pfc);
        cs_pkt_credit_free(g_array_index(net->links, link_t, i).cred);
        cs_pkt_port_free(g_array_index(net->links, link_t, i).port, net->pool);
    }
    for (guint i = 0; i < net->nodes->len; i++) {
        cs_pkt_mmu_free(g_array_index(net->nodes, node_t, i).mmu);
        net_host_free(net, &g_array_index(net->nodes, node_t, i));
    }
    net_stuck_free(net);
    for (guint i = 0; i < net->flows->len; i++) {
        flow_t *f = &g_array_index(net->flows, flow_t, i);
        cs_pkt_route_free(f->route);
        cs_pkt_route_free(f->back);
        for (int a = 0; a < f->nalts; a++)
            cs_pkt_route_free(f->alts[a]);
        g_free(f->alts);
        g_free(f->dcqcn);
        g_free(f->msgs);
        g_free(f->held);
        g_free(f->resend);
        for (int k = 0; k < 3; k++) {
            cs_event_t *ev = k == 0 ? f->pace_ev : k == 1 ? f->timer_ev : f->rto_ev;
            if (ev == NULL)
                continue;
            if (cs_evq_scheduled(ev))
                cs_evq_cancel(net->evq, ev);
            cs_evq_release(net->evq, ev);
        }
    }
    g_free(net->ibcc);
    g_array_free(net->flows, TRUE);
    g_array_free(net->drained, TRUE);
    g_array_free(net->links, TRUE);
    g_array_free(net->nodes, TRUE);
    cs_pkt_pool_free(net->pool);
    cs_evq_free(net->evq);
    g_free(net);
}

static int add_node(cs_pkt_net_t *net, gboolean host)
{
    node_t n = { .host = host, .headroom = -1, .in_link = -1 };
    g_array_append_val(net->nodes, n);
    return (int)net->nodes->len - 1;
}

int cs_pkt_net_add_host(cs_pkt_net_t *net) { return add_node(net, TRUE); }
void cs_pkt_net_set_endpoint(cs_pkt_net_t *net, int sw)
{
    g_return_if_fail(sw >= 0 && (guint)sw < net->nodes->len);
    node_of(net, sw)->endpoint = TRUE;
}
int cs_pkt_net_add_switch(cs_pkt_net_t *net) { return add_node(net, FALSE); }

static void deliver(void *ctx, cs_pkt_port_t *port, cs_pkt_t *pkt, cs_time_t now);
static void pfc_send(void *ctx, int link, int prio, guint16 quanta, cs_time_t now);
static void credit_send(void *ctx, int link, int vl, cs_time_t now);
static gboolean pfc_still(void *ctx, int link, int prio);
static void net_storm(void *ctx, int link, int prio, cs_time_t now);


/* The headroom of link l's PGs in the MMU of the switch it enters: the
 * formula for its rate and its cable (its propagation delay at 5 ns/m,
 * fabric-models.md section 3) and the largest RoCEv2 frame, or the forced
 * value. */
static void mmu_add_ingress(cs_pkt_net_t *net, link_t *l)
{
    node_t *n = node_of(net, l->to);
    const cs_pkt_port_cfg_t *c = cs_pkt_port_cfg(l->port);
    guint64 hr = n->headroom >= 0
        ? (guint64)n->headroom
        : cs_pkt_headroom_bytes(CS_PKT_WIRE_MAX - CS_PKT_PREAMBLE_SFD - CS_PKT_IFG, c->rate_bps,
                                (double)c->prop_ps / CS_PKT_NET_PS_PER_M);
    l->mmu_port = cs_pkt_mmu_add_port(n->mmu, hr);
}

/* Link l marks at egress with its switch's setting, draws seeded. */
static void link_set_ecn(cs_pkt_net_t *net, link_t *l)
{
    const node_t *n = node_of(net, l->from);
    l->ecn = TRUE;
    if (n->ecn_by_rate)
        cs_pkt_ecn_cfg_for_rate(&l->ecn_cfg, cs_pkt_port_cfg(l->port)->rate_bps);
    else
        l->ecn_cfg = n->ecn_cfg;
    cs_pkt_rng_seed(&l->rng, net->seed, (guint64)cs_pkt_port_id(l->port));
}

int cs_pkt_net_add_link(cs_pkt_net_t *net, int from, int to, const cs_pkt_port_cfg_t *cfg)
{
    g_return_val_if_fail(from >= 0 && (guint)from < net->nodes->len, -1);
    g_return_val_if_fail(to >= 0 && (guint)to < net->nodes->len && to != from, -1);
    int id = (int)net->links->len;
    cs_pkt_port_t *port = cs_pkt_port_new(id, cfg, net->evq, &net_hooks, net, deliver, net);
    if (port == NULL)
        return -1;
    link_t l = { .from = from, .to = to, .port = port, .mmu_port = -1, .rev = -1, .last_tx = -1 };
    l.pfc = cs_pkt_pfc_new(id, port, net->evq, &net->pfc_cfg, pfc_send, net);
    if (net->credit) {
        const cs_pkt_credit_cfg_t *cc = &net->credit_cfg;
        guint32 blocks[CS_PKT_PRIOS];
        for (int v = 0; v < CS_PKT_PRIOS; v++)
            blocks[v] = cc->blocks[v];
        if (cc->buffer_s > 0) {
            /* this link's rate and cable: rate x buffer_s, at least its loop and two frames */
            double bps = (double)cfg->rate_bps / 8, prop = (double)cfg->prop_ps / CS_PS_PER_S;
            double loop = (cc->frame + CS_PKT_CREDIT_FC_WIRE) / bps + 2 * prop;
            double bytes = MAX(bps * cc->buffer_s, loop * bps + 2.0 * cc->frame);
            for (int v = 0; v < CS_PKT_PRIOS; v++)
                blocks[v] = (guint32)ceil(bytes / CS_PKT_CREDIT_BLOCK);
        }
        l.cred = cs_pkt_credit_new(id, blocks, cc->refresh_ps, net->evq, credit_send, net);
    }
    cs_pkt_pfc_set_still(l.pfc, pfc_still);
    if (!node_of(net, from)->host)
        cs_pkt_pfc_set_watchdog(l.pfc, net_storm);   /* switch egress: its watchdog, when configured */
    for (guint i = 0; i < net->links->len && l.rev < 0; i++) {
        link_t *o = link_of(net, (int)i);
        if (o->from == to && o->to == from && o->rev < 0) {
            l.rev = (int)i;
            o->rev = id;
        }
    }
    g_array_append_val(net->links, l);
    if (node_of(net, to)->mmu != NULL)
        mmu_add_ingress(net, link_of(net, id));
    if (node_of(net, from)->ecn)
        link_set_ecn(net, link_of(net, id));
    if (node_of(net, to)->in_link < 0) {
        node_of(net, to)->in_link = id;
        net_host_link_added(net, to);
    }
    return id;
}

int cs_pkt_net_set_buffer(cs_pkt_net_t *net, int sw, const cs_pkt_mmu_cfg_t *cfg, gint64 headroom)
{
    g_return_val_if_fail(sw >= 0 && (guint)sw < net->nodes->len, -1);
    node_t *n = node_of(net, sw);
    g_return_val_if_fail(!n->host && n->mmu == NULL && !net->credit, -1);
    n->mmu = cs_pkt_mmu_new(cfg);
    if (n->mmu == NULL)
        return -1;
    n->headroom = headroom;
    for (guint i = 0; i < net->links->len; i++)
        if (link_of(net, (int)i)->to == sw)
            mmu_add_ingress(net, link_of(net, (int)i));
    return 0;
}

void cs_pkt_net_set_seed(cs_pkt_net_t *net, guint64 seed)
{
    net->seed = seed;
    for (guint i = 0; i < net->links->len; i++)
        cs_pkt_rng_seed(&link_of(net, (int)i)->rng, seed, i);
}

int cs_pkt_net_set_ecn(cs_pkt_net_t *net, int sw, const cs_pkt_ecn_cfg_t *cfg)
{
    g_return_val_if_fail(sw >= 0 && (guint)sw < net->nodes->len, -1);
    node_t *n = node_of(net, sw);
    g_return_val_if_fail(!n->host, -1);
    g_return_val_if_fail(cfg == NULL || cs_pkt_ecn_cfg_valid(cfg), -1);
    n->ecn = TRUE;
    n->ecn_by_rate = cfg == NULL;
    if (cfg != NULL)
        n->ecn_cfg = *cfg;
    for (guint i = 0; i < net->links->len; i++)
        if (link_of(net, (int)i)->from == sw)
            link_set_ecn(net, link_of(net, (int)i));
    return 0;
}

void cs_pkt_net_set_pfc(cs_pkt_net_t *net, const cs_pkt_pfc_cfg_t *cfg)
{
    g_return_if_fail(cfg->quanta > 0 && cfg->refresh_ps >= 0 && cfg->watchdog_ps >= 0);
    g_return_if_fail(cfg->watchdog_restore_ps >= 0 && cfg->deadlock_ps > 0);
    net->pfc_cfg = *cfg;
}

int cs_pkt_net_set_credit(cs_pkt_net_t *net, const cs_pkt_credit_cfg_t *cfg)
{
    g_return_val_if_fail(cfg->refresh_ps >= 0 && cfg->buffer_s >= 0, -1);
    g_return_val_if_fail(cfg->buffer_s == 0 || cfg->frame > 0, -1);
    if (net->links->len > 0)
        return -1;
    for (guint i = 0; i < net->nodes->len; i++)
        if (node_of(net, (int)i)->mmu != NULL)
            return -1;
    net->credit = TRUE;
    net->credit_cfg = *cfg;
    if (net->credit_cfg.refresh_ps == 0)
        net->credit_cfg.refresh_ps = CS_PKT_CREDIT_REFRESH_DEFAULT;
    return 0;
}

gboolean cs_pkt_net_credit(const cs_pkt_net_t *net) { return net->credit; }

int cs_pkt_net_set_ibcc(cs_pkt_net_t *net, const cs_pkt_ibcc_cfg_t *cfg)
{
    g_return_val_if_fail(cfg != NULL, -1);
    if (!net->credit || net->flows->len > 0 || net->ibcc != NULL || !cs_pkt_ibcc_cfg_valid(cfg))
        return -1;
    net->ibcc = g_memdup2(cfg, sizeof *cfg);
    return 0;
}

/* A flow-control packet for VL 'vl' of 'link' on the link the other way,
 * ahead of data, exempt from credits (a pause-flagged control frame: the
 * net is either PFC or credits). It carries the link in 'flow' and the
 * FCCL in psn (low 32 bits) and payload (high). One waits per VL: a later
 * limit is written into the waiting one, which the sender then hears. */
static void credit_send(void *ctx, int link, int vl, cs_time_t now)
{
    cs_pkt_net_t *net = ctx;
    link_t *l = link_of(net, link);
    if (l->rev < 0)
        return;                       /* no way back: the sender never hears it (its credits run out) */
    guint64 v = cs_pkt_credit_fccl(l->cred, vl);
    cs_pkt_t *p = l->fc_wait[vl];
    if (p == NULL || p->t != 0) {     /* none waits, or it is on the wire already */
        p = cs_pkt_alloc(net->pool);
        p->flags = CS_PKT_F_PAUSE;
        p->wire = CS_PKT_CREDIT_FC_WIRE;
        p->prio = (guint8)vl;
        p->flow = (guint32)link;
        net->pause_alive++;
        l->fc_wait[vl] = p;
        cs_pkt_credit_fc_count(l->cred, vl);
        cs_pkt_port_enqueue_ctrl(link_of(net, l->rev)->port, p, now);
    }
    p->psn = (guint32)v;
    p->payload = (guint32)(v >> 32);
}

/* A pause frame for link 'link' leaves by the link the other way, ahead
 * of its data; it carries its timer in the PSN field and the paused link
 * in the flow field. */
static void pfc_send(void *ctx, int link, int prio, guint16 quanta, cs_time_t now)
{
    cs_pkt_net_t *net = ctx;
    const link_t *l = link_of(net, link);
    if (l->rev < 0)
        return;                       /* no way back: the sender never hears it */
    cs_pkt_t *p = cs_pkt_alloc(net->pool);
    p->flags = CS_PKT_F_PAUSE;
    p->wire = CS_PKT_PFC_WIRE;
    p->prio = (guint8)prio;
    p->psn = quanta;
    p->flow = (guint32)link;
    net->pause_alive++;
    cs_pkt_port_enqueue_ctrl(link_of(net, l->rev)->port, p, now);
}

/* The refresh timer's question: does the switch (or the host's NIC)
 * still want 'link' paused? */
static gboolean pfc_still(void *ctx, int link, int prio)
{
    cs_pkt_net_t *net = ctx;
    const link_t *l = link_of(net, link);
    const node_t *n = node_of(net, l->to);
    if (n->host)
        return net_host_still(net, l->to, prio);
    return n->mmu != NULL && !cs_pkt_mmu_may_xon(n->mmu, l->mmu_port, prio);
}

/* Brings a switch's occupancy integral up to 'now' before it changes. */
static inline void occ_account(node_t *n, cs_time_t now)
{
    n->occ_area += (double)cs_pkt_mmu_used(n->mmu) * (double)(now - n->occ_t);
    n->occ_t = now;
}

void net_drop(cs_pkt_net_t *net, cs_pkt_t *pkt)
{
    flow_at(net, (int)pkt->flow)->dropped++;
    cs_pkt_release(net->pool, pkt);
}

/* A packet leaves its switch's buffer (it starts on the egress wire, or a
 * stormed queue drops it): the bytes go back to its ingress, whose pause
 * may end. */
static void switch_release(cs_pkt_net_t *net, node_t *n, const cs_pkt_t *pkt, cs_time_t now)
{
    if (n->mmu == NULL)
        return;
    link_t *in = link_of(net, pkt->route->port[pkt->hop - 1]);
    occ_account(n, now);
    cs_pkt_mmu_release(n->mmu, in->mmu_port, pkt->prio, pkt->wire);
    if (cs_pkt_pfc_asserted(in->pfc, pkt->prio) && cs_pkt_mmu_may_xon(n->mmu, in->mmu_port, pkt->prio))
        cs_pkt_pfc_xon(in->pfc, pkt->prio, now);
}

/* A packet taken from a stormed queue: its switch gives its buffer back
 * (which may let its ingress go), then it is dropped. */
static void storm_drop(void *ctx, cs_pkt_t *pkt, cs_time_t now)
{
    cs_pkt_net_t *net = ctx;
    link_t *out = link_of(net, pkt->route->port[pkt->hop]);
    out->wd_drops[pkt->prio]++;
    switch_release(net, node_of(net, out->from), pkt, now);
    net_drop(net, pkt);
}

/* The watchdog of switch egress 'link' tripped on 'prio': drop its queue. */
static void net_storm(void *ctx, int link, int prio, cs_time_t now)
{
    cs_pkt_net_t *net = ctx;
    net->moves++;
    cs_pkt_port_flush(link_of(net, link)->port, prio, now, storm_drop, net);
}

static gboolean net_may_send(void *ctx, const cs_pkt_port_t *port, int prio, cs_time_t now)
{
    link_t *l = link_of(ctx, cs_pkt_port_id(port));
    if (l->cred == NULL)
        return cs_pkt_pfc_may_send(l->pfc, prio, now);
    if (cs_pkt_credit_may_send(l->cred, prio, cs_pkt_port_queue_head(port, prio)->wire))
        return TRUE;
    cs_pkt_credit_starve(l->cred, prio, now);
    return FALSE;
}

void cs_pkt_net_set_observer(cs_pkt_net_t *net, cs_pkt_net_observer_fn fn, void *ctx)
{
    net->observer = fn;
    net->observer_ctx = ctx;
}

/* InfiniBand CC at a switch egress: FECN on a data packet leaving a VL
 * whose queue (the packet included) is above the threshold, the
 * threshold a share of one input buffer of the VL at the link's far end
 * (cs_pkt_ibcc.h); a VL that waited for credits is a victim. */
static void ibcc_mark(cs_pkt_net_t *net, link_t *l, const cs_pkt_port_t *port, cs_pkt_t *pkt)
{
    int vl = pkt->prio;
    guint64 buffer = (guint64)cs_pkt_credit_buffer(l->cred, vl) * CS_PKT_CREDIT_BLOCK;
    guint64 q = cs_pkt_port_queue_bytes(port, vl) + pkt->wire;
    if (cs_pkt_ibcc_mark(net->ibcc, &l->fecn[vl], q, cs_pkt_ibcc_threshold_bytes(net->ibcc->threshold, buffer),
                         pkt->wire, cs_pkt_credit_waited(l->cred, vl))) {
        pkt->flags |= CS_PKT_F_CE;
        l->marks[vl]++;
    }
}

static void net_dequeued(void *ctx, cs_pkt_port_t *port, cs_pkt_t *pkt, cs_time_t now)
{
    cs_pkt_net_t *net = ctx;
    net->moves++;
    link_t *self = link_of(net, cs_pkt_port_id(port));
    self->last_tx = now;
    if (self->cred != NULL) {
        if (net->ibcc != NULL && pkt->hop > 0 && !(pkt->flags & (CS_PKT_F_ACK | CS_PKT_F_CNP)))
            ibcc_mark(net, self, port, pkt);  /* before sent(): it reads whether the VL waited */
        cs_pkt_credit_sent(self->cred, pkt->prio, pkt->wire);
        if (pkt->hop > 0)             /* it leaves the switch: its input buffer frees */
            net_credit_release(net, link_of(net, pkt->route->port[pkt->hop - 1]), pkt, now);
    }
    if (pkt->hop == 0) {              /* leaving its source */
        if (!(pkt->flags & (CS_PKT_F_CNP | CS_PKT_F_ACK)))
            net_qp_sent(net, (int)pkt->flow, pkt, now);
        return;
    }
    link_t *out = link_of(net, cs_pkt_port_id(port));
    /* RED on the bytes of this (port, priority) including the packet
     * (HPCC's dequeue convention, cs_pkt_ecn.h) */
    if (out->ecn && cs_pkt_ecn_mark(&out->ecn_cfg, &out->rng, pkt,
                                    cs_pkt_port_queue_bytes(port, pkt->prio) + pkt->wire))
        out->marks[pkt->prio]++;
    switch_release(net, node_of(net, out->from), pkt, now);
}


/* A packet's last bit reached the far end of 'port': sink it or forward
 * it to the next port of its route. */
static void deliver(void *ctx, cs_pkt_port_t *port, cs_pkt_t *pkt, cs_time_t now)
{
    cs_pkt_net_t *net = ctx;
    link_t *in = link_of(net, cs_pkt_port_id(port));
    int node = in->to;
    if (pkt->flags & CS_PKT_F_PAUSE) {
        link_t *of = link_of(net, (int)pkt->flow);
        if (of->cred != NULL) {
            if (of->fc_wait[pkt->prio] == pkt)
                of->fc_wait[pkt->prio] = NULL;
            if (cs_pkt_credit_receive(of->cred, pkt->prio, (guint64)pkt->payload << 32 | pkt->psn, now))
                cs_pkt_port_kick(of->port, now);
        } else {
            cs_pkt_pfc_receive(of->pfc, pkt->prio, (guint16)pkt->psn, now);
        }
        net->pause_alive--;
        cs_pkt_release(net->pool, pkt);
        return;
    }
    net->moves++;
    if (in->cred != NULL)
        cs_pkt_credit_take(in->cred, pkt->prio, pkt->wire, now);
    pkt->hop++;
    if (G_UNLIKELY(pkt->flags & CS_PKT_F_AR))
        net_qp_ar_pick(net, pkt);
    int next = cs_pkt_next_port(pkt);
    node_t *nd = node_of(net, node);
    if (next < 0) {
        if (nd->rx != NULL && !(pkt->flags & (CS_PKT_F_ACK | CS_PKT_F_CNP))) {
            net_host_arrive(net, node, in, pkt, now);
        } else {
            net_credit_release(net, in, pkt, now);   /* consumed at once */
            net_sink(net, node, pkt, now);
        }
        return;
    }
    link_t *l = link_of(net, next);
    g_assert(l->from == node);
    if (G_UNLIKELY(cs_pkt_pfc_stormed(l->pfc, pkt->prio))) {
        l->wd_drops[pkt->prio]++;     /* a stormed queue drops what comes for it */
        net_drop(net, pkt);
        return;
    }
    cs_pkt_mmu_t *mmu = nd->mmu;
    if (mmu != NULL) {
        occ_account(nd, now);
        if (!cs_pkt_mmu_admit(mmu, in->mmu_port, pkt->prio, pkt->wire)) {
            /* a lossless PG that must drop is congested whatever its
             * shared use says (its headroom is smaller than a packet):
             * pause it */
            if (cs_pkt_mmu_lossless(mmu, pkt->prio))
                cs_pkt_pfc_xoff(in->pfc, pkt->prio, now);
            in->drops[pkt->prio]++;
            net_drop(net, pkt);
            return;
        }
        if (cs_pkt_mmu_want_xoff(mmu, in->mmu_port, pkt->prio))
            cs_pkt_pfc_xoff(in->pfc, pkt->prio, now);
    }
    cs_pkt_port_enqueue(l->port, pkt, now);
}

/* The sampler's next time, while the net holds packets; NEVER while it
 * is idle (checked as it runs, so its times never enter the event queue
 * nor take sequence numbers from it). */
static void sample_until(cs_pkt_net_t *net, cs_time_t t)
{
    if (t == CS_TIME_NEVER)
        return;                       /* no event left: nothing would change */
    while (net->sample_next <= t) {
        if (cs_pkt_pool_in_use(net->pool) == 0) {
            /* idle: nothing changes before the next event, skip past it */
            net->sample_next = (t / net->sample_period + 1) * net->sample_period;
            return;
        }
        cs_time_t save = net->now;
        net->now = net->sample_next;  /* getters read the sample's time */
        net->sample_fn(net->sample_ctx, net->sample_next);
        net->now = save;
        net->sample_next += net->sample_period;
    }
}

guint64 cs_pkt_net_run(cs_pkt_net_t *net, cs_time_t until)
{
    guint64 n = 0;
    for (;;) {
        if (net->stopped || net->overflow || (until == CS_TIME_NEVER && net_quiet(net)))
            break;
        if ((n & 1023) == 0 && net->pool_limit > 0 && cs_pkt_pool_capacity(net->pool) > net->pool_limit) {
            net->overflow = TRUE;
            break;
        }
        cs_event_t *ev = cs_evq_peek(net->evq);
        if (net->sample_fn != NULL)
            sample_until(net, MIN(ev != NULL ? ev->time : CS_TIME_NEVER, until));
        if (ev == NULL || ev->time > until)
            break;
        if ((ev->kind == CS_PKT_EV_PFC_REFRESH || ev->kind == CS_PKT_EV_CREDIT_REFRESH) &&
            net_stuck_check(net, ev->time)) {
            net->now = ev->time;
            break;                    /* a deadlock: the net stops */
        }
        cs_evq_pop(net->evq);
        net->now = ev->time;
        n++;
        switch (ev->kind) {
        case CS_PKT_EV_TX_DONE:
        case CS_PKT_EV_ARRIVE:
            cs_pkt_port_event(link_of(net, ev->a)->port, ev);   /* the port's own event */
            break;
        case CS_PKT_EV_PFC_WATCHDOG:
            net->moves++;
            /* fall through */
        case CS_PKT_EV_PFC_EXPIRE:
        case CS_PKT_EV_PFC_REFRESH:
            cs_pkt_pfc_event(link_of(net, ev->a)->pfc, ev);     /* the link's PFC timer */
            break;
        case CS_PKT_EV_CREDIT_REFRESH:
            cs_pkt_credit_event(link_of(net, ev->a)->cred, ev);   /* the link's periodic update */
            break;
        case CS_PKT_EV_HOST_RX:
            net->moves++;
            net_host_event(net, ev->a, net->now);
            break;
        case CS_PKT_EV_FLOW_PACE:
            net->moves++;
            net_qp_pump(net, ev->a, net->now);
            break;
        case CS_PKT_EV_QP_RTO:
            net->moves++;
            net_qp_rto(net, ev->a, net->now);
            break;
        case CS_PKT_EV_DCQCN_TIMER:
            net->moves++;
            net_qp_timer(net, ev->a, ev, net->now);
            break;
        case CS_PKT_EV_FLOW_START: {
            int id = ev->a;
            net->starts_pending--;
            cs_evq_release(net->evq, ev);
            cs_pkt_net_qp_post(net, id, flow_at(net, id)->msgs[0].bytes, net->now);
            break;
        }
        default:
            g_assert_not_reached();
        }
    }
    return n;
}

cs_time_t cs_pkt_net_next(const cs_pkt_net_t *net)
{
    if (net_quiet(net))
        return CS_TIME_NEVER;
    const cs_event_t *ev = cs_evq_peek(net->evq);
    return ev != NULL ? ev->time : CS_TIME_NEVER;
}

cs_time_t cs_pkt_net_now(const cs_pkt_net_t *net) { return net->now; }
guint64 cs_pkt_net_events(const cs_pkt_net_t *net) { return cs_evq_popped(net->evq); }
cs_pkt_pool_t *cs_pkt_net_pool(cs_pkt_net_t *net) { return net->pool; }

void cs_pkt_net_set_pool_limit(cs_pkt_net_t *net, gsize packets) { net->pool_limit = packets; }

gboolean cs_pkt_net_overflowed(const cs_pkt_net_t *net) { return net->overflow; }

static const cs_pkt_credit_t *cred_of(const cs_pkt_net_t *net, int link, int vl)
{
    g_return_val_if_fail(link >= 0 && (guint)link < net->links->len && vl >= 0 && vl < CS_PKT_PRIOS, NULL);
    return g_array_index(net->links, link_t, link).cred;
}

guint64 cs_pkt_net_credit_fc_sent(const cs_pkt_net_t *net, int link, int vl)
{
    const cs_pkt_credit_t *c = cred_of(net, link, vl);
    return c != NULL ? cs_pkt_credit_fc_sent(c, vl) : 0;
}

gboolean cs_pkt_net_credit_starving(const cs_pkt_net_t *net, int link, int vl)
{
    const cs_pkt_credit_t *c = cred_of(net, link, vl);
    return c != NULL && cs_pkt_credit_starving(c, vl);
}

cs_time_t cs_pkt_net_credit_starved_ps(const cs_pkt_net_t *net, int link, int vl)
{
    const cs_pkt_credit_t *c = cred_of(net, link, vl);
    return c != NULL ? cs_pkt_credit_starved_ps(c, vl, net->now) : 0;
}

guint32 cs_pkt_net_credit_buffer(const cs_pkt_net_t *net, int link, int vl)
{
    const cs_pkt_credit_t *c = cred_of(net, link, vl);
    return c != NULL ? cs_pkt_credit_buffer(c, vl) : 0;
}

guint32 cs_pkt_net_credit_used(const cs_pkt_net_t *net, int link, int vl)
{
    const cs_pkt_credit_t *c = cred_of(net, link, vl);
    return c != NULL ? cs_pkt_credit_used(c, vl) : 0;
}

cs_pkt_port_t *cs_pkt_net_port(cs_pkt_net_t *net, int port)
{
    g_return_val_if_fail(port >= 0 && (guint)port < net->links->len, NULL);
    return link_of(net, port)->port;
}


cs_pkt_pfc_t *cs_pkt_net_pfc(cs_pkt_net_t *net, int link)
{
    g_return_val_if_fail(link >= 0 && (guint)link < net->links->len, NULL);
    return link_of(net, link)->pfc;
}

cs_pkt_mmu_t *cs_pkt_net_mmu(cs_pkt_net_t *net, int sw)
{
    g_return_val_if_fail(sw >= 0 && (guint)sw < net->nodes->len, NULL);
    return node_of(net, sw)->mmu;
}

int cs_pkt_net_mmu_port(const cs_pkt_net_t *net, int link)
{
    g_return_val_if_fail(link >= 0 && (guint)link < net->links->len, -1);
    return link_of(net, link)->mmu_port;
}

guint64 cs_pkt_net_host_delivered(const cs_pkt_net_t *net, int host)
{
    return node_of(net, host)->delivered;
}

guint64 cs_pkt_net_ecn_marks(const cs_pkt_net_t *net, int link, int prio)
{
    g_return_val_if_fail(link >= 0 && (guint)link < net->links->len, 0);
    g_return_val_if_fail(prio >= 0 && prio < CS_PKT_PRIOS, 0);
    return link_of(net, link)->marks[prio];
}


void cs_pkt_net_set_sampler(cs_pkt_net_t *net, cs_time_t period, cs_pkt_net_sample_fn fn, void *ctx)
{
    g_return_if_fail(period >= 0);
    net->sample_fn = period > 0 ? fn : NULL;
    net->sample_ctx = ctx;
    net->sample_period = period;
    if (net->sample_fn != NULL)
        net->sample_next = (net->now / period + 1) * period;
}

/* Something from outside (a post, a rate, a stall) at 'now': samples
 * skipped while the net was idle stay skipped. */
void net_touch(cs_pkt_net_t *net, cs_time_t now)
{
    net->moves++;
    if (net->sample_fn != NULL && net->sample_next < now)
        net->sample_next = (now + net->sample_period - 1) / net->sample_period * net->sample_period;
}

void cs_pkt_net_link_stats(const cs_pkt_net_t *net, int link, int prio, cs_pkt_link_stats_t *out)
{
    g_return_if_fail(link >= 0 && (guint)link < net->links->len && prio >= 0 && prio < CS_PKT_PRIOS);
    const link_t *l = link_of(net, link);
    *out = (cs_pkt_link_stats_t) {
        .tx_pkts = cs_pkt_port_tx_pkts(l->port, prio),
        .tx_bytes = cs_pkt_port_tx_bytes(l->port, prio),
        .xoff_sent = cs_pkt_pfc_xoff_sent(l->pfc, prio),
        .xon_sent = cs_pkt_pfc_xon_sent(l->pfc, prio),
        .pause_received = cs_pkt_pfc_received(l->pfc, prio),
        .paused_ps = cs_pkt_pfc_paused_ps(l->pfc, prio, net->now),
        .drops_buffer = l->drops[prio],
        .drops_watchdog = l->wd_drops[prio],
        .watchdog_trips = cs_pkt_pfc_trips(l->pfc, prio),
        .ecn_marks = l->marks[prio],
        .queue_max = cs_pkt_port_queue_max(l->port, prio),
        .queue_avg = cs_pkt_port_queue_avg(l->port, prio, net->now),
    };
}

void cs_pkt_net_switch_buffer(const cs_pkt_net_t *net, int sw, guint64 *max, double *avg)
{
    g_return_if_fail(sw >= 0 && (guint)sw < net->nodes->len);
    const node_t *n = node_of(net, sw);
    *max = 0;
    *avg = 0;
    if (n->mmu == NULL)
        return;
    *max = cs_pkt_mmu_used_max(n->mmu);
    if (net->now > 0)
        *avg = (n->occ_area + (double)cs_pkt_mmu_used(n->mmu) * (double)(net->now - n->occ_t)) / (double)net->now;
}

cs_pkt_link_state_t cs_pkt_net_link_state(const cs_pkt_net_t *net, int link, int prio)
{
    g_return_val_if_fail(link >= 0 && (guint)link < net->links->len && prio >= 0 && prio < CS_PKT_PRIOS,
                         CS_PKT_LINK_RUNNING);
    const cs_pkt_pfc_t *pfc = link_of(net, link)->pfc;
    if (cs_pkt_pfc_stormed(pfc, prio))
        return CS_PKT_LINK_STORMED;
    return cs_pkt_pfc_paused(pfc, prio, net->now) ? CS_PKT_LINK_PAUSED : CS_PKT_LINK_RUNNING;
}
