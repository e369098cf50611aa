/* The minimal packet network (see cs_pkt_net.h). */
#include "config.h"

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

typedef struct {
    cs_pkt_flow_cfg_t cfg;
    cs_pkt_route_t *route;
    guint64 npkts, next;              /* packets in the message, next to make */
    guint64 delivered, arrived;       /* payload, packets */
    guint64 dropped;                  /* packets */
    cs_time_t first, done;
    /* DCQCN (cs_pkt_net_set_dcqcn); dcqcn NULL: none, the flow runs at line rate */
    cs_pkt_dcqcn_cfg_t *dcqcn;
    cs_pkt_dcqcn_rp_t rp;             /* reaction point at the sender */
    cs_pkt_route_t *back;             /* the CNPs' route, receiver to sender */
    cs_time_t last_cnp;               /* notification point: last CNP sent, -1: none */
    guint64 cnps_sent, cnps_received;
    guint32 owed;                     /* packets the window lets go, waiting for the pacer */
    cs_time_t next_send;              /* pacer: the next packet may go then */
    cs_event_t *pace_ev, *timer_ev;   /* a = flow id */
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
    cs_time_t now;
    guint64 seed;                     /* RED draws */
};

static void net_dequeued(void *ctx, cs_pkt_port_t *port, cs_pkt_t *pkt, cs_time_t now);
static gboolean net_may_send(void *ctx, const cs_pkt_port_t *port, int prio, cs_time_t now);

/* Every port: as a packet leaves, a host makes its flow's next packet and
 * a switch gives its buffer back; PFC decides whether a priority may go. */
static const cs_pkt_port_hooks_t net_hooks = { net_dequeued, net_may_send };

cs_pkt_net_t *cs_pkt_net_new(void)
{
    cs_pkt_net_t *net = g_new0(cs_pkt_net_t, 1);
    net->evq = cs_evq_new();
    net->pool = cs_pkt_pool_new();
    net->nodes = g_array_new(FALSE, TRUE, sizeof(node_t));
    net->links = g_array_new(FALSE, TRUE, sizeof(link_t));
    net->flows = g_array_new(FALSE, TRUE, sizeof(flow_t));
    cs_pkt_pfc_cfg_init(&net->pfc_cfg);
    return net;
}

void cs_pkt_net_free(cs_pkt_net_t *net)
{
    if (net == NULL)
        return;
    for (guint i = 0; i < net->links->len; i++) {
        cs_pkt_pfc_free(g_array_index(net->links, link_t, i).pfc);
        cs_pkt_port_free(g_array_index(net->links, link_t, i).port, net->pool);
    }
    for (guint i = 0; i < net->nodes->len; i++)
        cs_pkt_mmu_free(g_array_index(net->nodes, node_t, i).mmu);
    for (guint i = 0; i < net->flows->len; i++) {
        flow_t *f = &g_array_index(net->flows, flow_t, i);
        cs_pkt_route_free(f->route);
        cs_pkt_route_free(f->back);
        g_free(f->dcqcn);
        for (int k = 0; k < 2; k++) {
            cs_event_t *ev = k == 0 ? f->pace_ev : f->timer_ev;
            if (ev == NULL)
                continue;
            if (cs_evq_scheduled(ev))
                cs_evq_cancel(net->evq, ev);
            cs_evq_release(net->evq, ev);
        }
    }
    g_array_free(net->flows, TRUE);
    g_array_free(net->links, TRUE);
    g_array_free(net->nodes, TRUE);
    cs_pkt_pool_free(net->pool);
    cs_evq_free(net->evq);
    g_free(net);
}

static int add_node(cs_pkt_net_t *net, gboolean host)
{
    node_t n = { .host = host, .headroom = -1 };
    g_array_append_val(net->nodes, n);
    return (int)net->nodes->len - 1;
}

int cs_pkt_net_add_host(cs_pkt_net_t *net) { return add_node(net, TRUE); }
int cs_pkt_net_add_switch(cs_pkt_net_t *net) { return add_node(net, FALSE); }

static void deliver(void *ctx, cs_pkt_port_t *port, cs_pkt_t *pkt, cs_time_t now);
static void pfc_send(void *ctx, int link, int prio, guint16 quanta, cs_time_t now);
static gboolean pfc_still(void *ctx, int link, int prio);

static link_t *link_of(const cs_pkt_net_t *net, int port)
{
    return &g_array_index(net->links, link_t, port);
}

static node_t *node_of(const cs_pkt_net_t *net, int node)
{
    return &g_array_index(net->nodes, node_t, node);
}

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
    link_t l = { .from = from, .to = to, .port = port, .mmu_port = -1, .rev = -1 };
    l.pfc = cs_pkt_pfc_new(id, port, net->evq, &net->pfc_cfg, pfc_send, net);
    cs_pkt_pfc_set_still(l.pfc, pfc_still);
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
    return id;
}

int cs_pkt_net_set_buffer(cs_pkt_net_t *net, int sw, const cs_pkt_mmu_cfg_t *cfg, gint64 headroom)
{
    g_return_val_if_fail(sw >= 0 && (guint)sw < net->nodes->len, -1);
    node_t *n = node_of(net, sw);
    g_return_val_if_fail(!n->host && n->mmu == NULL, -1);
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
    g_return_if_fail(cfg->quanta > 0);
    net->pfc_cfg = *cfg;
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
    cs_pkt_port_enqueue_ctrl(link_of(net, l->rev)->port, p, now);
}

/* The refresh timer's question: does the switch still want 'link' paused? */
static gboolean pfc_still(void *ctx, int link, int prio)
{
    cs_pkt_net_t *net = ctx;
    const link_t *l = link_of(net, link);
    const node_t *n = node_of(net, l->to);
    return n->mmu != NULL && !cs_pkt_mmu_may_xon(n->mmu, l->mmu_port, prio);
}

static gboolean net_may_send(void *ctx, const cs_pkt_port_t *port, int prio, cs_time_t now)
{
    return cs_pkt_pfc_may_send(link_of(ctx, cs_pkt_port_id(port))->pfc, prio, now);
}

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
    return src->host && dst->host;
}

int cs_pkt_net_add_flow(cs_pkt_net_t *net, const int *route, int nroute,
                        const cs_pkt_flow_cfg_t *cfg)
{
    g_return_val_if_fail(route_ok(net, route, nroute), -1);
    g_return_val_if_fail(cs_pkt_frame_mtu_valid(cfg->mtu), -1);
    g_return_val_if_fail(cfg->prio >= 0 && cfg->prio < CS_PKT_PRIOS && cfg->start >= 0, -1);
    flow_t f = {
        .cfg = *cfg,
        .route = cs_pkt_route_new(route, nroute),
        .npkts = cs_pkt_frame_npkts(cfg->bytes, cfg->mtu),
        .first = -1,
        .done = -1,
    };
    g_array_append_val(net->flows, f);
    int id = (int)net->flows->len - 1;
    cs_event_t *ev = cs_evq_alloc(net->evq);
    ev->kind = CS_PKT_EV_FLOW_START;
    ev->a = id;
    cs_evq_push(net->evq, ev, cfg->start);
    return id;
}

static flow_t *flow_at(const cs_pkt_net_t *net, int id)
{
    return &g_array_index(net->flows, flow_t, id);
}

int cs_pkt_net_set_dcqcn(cs_pkt_net_t *net, int flow, const cs_pkt_dcqcn_cfg_t *cfg)
{
    g_return_val_if_fail(flow >= 0 && (guint)flow < net->flows->len, -1);
    g_return_val_if_fail(cfg != NULL && cs_pkt_dcqcn_cfg_valid(cfg), -1);
    flow_t *f = flow_at(net, flow);
    g_return_val_if_fail(f->dcqcn == NULL && f->next == 0, -1);
    int n = f->route->n;
    int back[n];
    for (int i = 0; i < n; i++) {
        back[i] = link_of(net, f->route->port[n - 1 - i])->rev;
        g_return_val_if_fail(back[i] >= 0, -1);   /* no way back for CNPs */
    }
    f->back = cs_pkt_route_new(back, n);
    f->dcqcn = g_memdup2(cfg, sizeof *cfg);
    cs_pkt_dcqcn_rp_init(&f->rp, f->dcqcn, cs_pkt_port_cfg(link_of(net, f->route->port[0])->port)->rate_bps);
    f->last_cnp = -1;
    f->pace_ev = cs_evq_alloc(net->evq);
    f->pace_ev->kind = CS_PKT_EV_FLOW_PACE;
    f->pace_ev->a = flow;
    f->timer_ev = cs_evq_alloc(net->evq);
    f->timer_ev->kind = CS_PKT_EV_DCQCN_TIMER;
    f->timer_ev->a = flow;
    return 0;
}

static void evq_at(cs_evq_t *q, cs_event_t *ev, cs_time_t t)
{
    if (cs_evq_scheduled(ev))
        cs_evq_reschedule(q, ev, t);
    else
        cs_evq_push(q, ev, t);
}

void cs_pkt_net_set_observer(cs_pkt_net_t *net, cs_pkt_net_observer_fn fn, void *ctx)
{
    net->observer = fn;
    net->observer_ctx = ctx;
}

/* Makes the flow's next packet and queues it at its first port. */
static void flow_emit(cs_pkt_net_t *net, int id, cs_time_t now)
{
    flow_t *f = &g_array_index(net->flows, flow_t, id);
    if (f->next == f->npkts)
        return;
    const cs_pkt_flow_cfg_t *c = &f->cfg;
    cs_pkt_t *p = cs_pkt_alloc(net->pool);
    p->route = f->route;
    p->flow = (guint32)id;
    p->psn = (guint32)(f->next & 0xffffff);        /* BTH PSN: 24 bits */
    p->payload = cs_pkt_frame_payload(c->bytes, c->mtu, f->next);
    p->wire = cs_pkt_frame_wire(&c->frame, c->bytes, c->mtu, f->next, c->write);
    p->prio = (guint8)c->prio;
    p->flags = CS_PKT_F_ECT | (c->write && f->next == 0 ? CS_PKT_F_FIRST : 0)
               | (f->next + 1 == f->npkts ? CS_PKT_F_LAST : 0);
    f->next++;
    cs_pkt_port_enqueue(link_of(net, f->route->port[0])->port, p, now);
}

/* A DCQCN flow's pacer: lets the packets its window owes go, one per
 * gap of its rate limiter, and waits for the next with its event. */
static void flow_pace(cs_pkt_net_t *net, int id, cs_time_t now)
{
    flow_t *f = flow_at(net, id);
    while (f->owed > 0 && now >= f->next_send && f->next < f->npkts) {
        f->owed--;
        flow_emit(net, id, now);      /* may run net_dequeued for this flow: re-read */
        f = flow_at(net, id);
    }
    if (f->owed > 0 && f->next < f->npkts)
        evq_at(net->evq, f->pace_ev, f->next_send);
}

/* A packet of a DCQCN flow left its host: the byte counter counts it,
 * the next may go one gap at the current rate later. */
static void flow_sent(cs_pkt_net_t *net, int id, const cs_pkt_t *pkt, cs_time_t now)
{
    flow_t *f = flow_at(net, id);
    cs_pkt_dcqcn_rp_sent(&f->rp, pkt->wire);
    f->next_send = now + cs_pkt_dcqcn_rp_gap(&f->rp, pkt->wire);
    f->owed++;
    flow_pace(net, id, now);
}

static void net_dequeued(void *ctx, cs_pkt_port_t *port, cs_pkt_t *pkt, cs_time_t now)
{
    cs_pkt_net_t *net = ctx;
    if (pkt->hop == 0) {              /* leaving its source */
        if (pkt->flags & CS_PKT_F_CNP)
            return;
        if (flow_at(net, (int)pkt->flow)->dcqcn != NULL)
            flow_sent(net, (int)pkt->flow, pkt, now);
        else
            flow_emit(net, (int)pkt->flow, now);
        return;
    }
    link_t *out = link_of(net, cs_pkt_port_id(port));
    /* RED on the bytes of this (port, priority) including the packet
     * (HPCC's dequeue convention, cs_pkt_ecn.h) */
    if (out->ecn && cs_pkt_ecn_mark(&out->ecn_cfg, &out->rng, pkt,
                                    cs_pkt_port_queue_bytes(port, pkt->prio) + pkt->wire))
        out->marks[pkt->prio]++;
    const node_t *n = node_of(net, out->from);
    if (n->mmu == NULL)
        return;
    link_t *in = link_of(net, pkt->route->port[pkt->hop - 1]);
    cs_pkt_mmu_release(n->mmu, in->mmu_port, pkt->prio, pkt->wire);
    if (cs_pkt_pfc_asserted(in->pfc, pkt->prio) && cs_pkt_mmu_may_xon(n->mmu, in->mmu_port, pkt->prio))
        cs_pkt_pfc_xon(in->pfc, pkt->prio, now);
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
    cs_pkt_t *p = cs_pkt_alloc(net->pool);
    p->route = f->back;
    p->flow = pkt->flow;
    p->wire = CS_PKT_ROCE_OVERHEAD + CS_PKT_CNP_PAYLOAD + (f->cfg.frame.vlan ? CS_PKT_VLAN_TAG : 0);
    p->prio = (guint8)f->dcqcn->cnp_prio;
    p->flags = CS_PKT_F_CNP;
    cs_pkt_port_enqueue(link_of(net, f->back->port[0])->port, p, now);
}

/* Reaction point: a CNP reached the sender. */
static void rp_receive(cs_pkt_net_t *net, int id, cs_time_t now)
{
    flow_t *f = flow_at(net, id);
    f->cnps_received++;
    if (cs_pkt_dcqcn_rp_cnp(&f->rp, now))
        evq_at(net->evq, f->timer_ev, now + f->dcqcn->timer);
}

static void sink(cs_pkt_net_t *net, int node, cs_pkt_t *pkt, cs_time_t now)
{
    if (pkt->flags & CS_PKT_F_CNP) {
        rp_receive(net, (int)pkt->flow, now);
        cs_pkt_release(net->pool, pkt);
        return;
    }
    np_receive(net, pkt, now);
    flow_t *f = &g_array_index(net->flows, flow_t, pkt->flow);
    g_array_index(net->nodes, node_t, node).delivered += pkt->payload;
    f->delivered += pkt->payload;
    f->arrived++;
    if (f->first < 0)
        f->first = now;
    if (f->arrived == f->npkts)
        f->done = now;
    if (net->observer != NULL)
        net->observer(net->observer_ctx, pkt, now);
    cs_pkt_release(net->pool, pkt);
}

/* A packet's last bit reached the far end of 'port': sink it or forward
 * it to the next port of its route. */
static void deliver(void *ctx, cs_pkt_port_t *port, cs_pkt_t *pkt, cs_time_t now)
{
    cs_pkt_net_t *net = ctx;
    link_t *in = link_of(net, cs_pkt_port_id(port));
    int node = in->to;
    if (pkt->flags & CS_PKT_F_PAUSE) {
        cs_pkt_pfc_receive(link_of(net, (int)pkt->flow)->pfc, pkt->prio, (guint16)pkt->psn, now);
        cs_pkt_release(net->pool, pkt);
        return;
    }
    pkt->hop++;
    int next = cs_pkt_next_port(pkt);
    if (next < 0) {
        sink(net, node, pkt, now);
        return;
    }
    const link_t *l = link_of(net, next);
    g_assert(l->from == node);
    cs_pkt_mmu_t *mmu = node_of(net, node)->mmu;
    if (mmu != NULL) {
        if (!cs_pkt_mmu_admit(mmu, in->mmu_port, pkt->prio, pkt->wire)) {
            /* a lossless PG that must drop is congested whatever its
             * shared use says (its headroom is smaller than a packet):
             * pause it */
            if (cs_pkt_mmu_lossless(mmu, pkt->prio))
                cs_pkt_pfc_xoff(in->pfc, pkt->prio, now);
            g_array_index(net->flows, flow_t, pkt->flow).dropped++;
            cs_pkt_release(net->pool, pkt);
            return;
        }
        if (cs_pkt_mmu_want_xoff(mmu, in->mmu_port, pkt->prio))
            cs_pkt_pfc_xoff(in->pfc, pkt->prio, now);
    }
    cs_pkt_port_enqueue(l->port, pkt, now);
}

guint64 cs_pkt_net_run(cs_pkt_net_t *net, cs_time_t until)
{
    guint64 n = 0;
    for (;;) {
        cs_event_t *ev = cs_evq_peek(net->evq);
        if (ev == NULL || ev->time > until)
            break;
        cs_evq_pop(net->evq);
        net->now = ev->time;
        n++;
        switch (ev->kind) {
        case CS_PKT_EV_TX_DONE:
        case CS_PKT_EV_ARRIVE:
            cs_pkt_port_event(link_of(net, ev->a)->port, ev);   /* the port's own event */
            break;
        case CS_PKT_EV_PFC_EXPIRE:
        case CS_PKT_EV_PFC_REFRESH:
            cs_pkt_pfc_event(link_of(net, ev->a)->pfc, ev);     /* the link's PFC timer */
            break;
        case CS_PKT_EV_FLOW_PACE:
            flow_pace(net, ev->a, net->now);
            break;
        case CS_PKT_EV_DCQCN_TIMER: {
            flow_t *f = flow_at(net, ev->a);
            /* a flow with nothing left to send has no rate to raise */
            if (f->next < f->npkts && cs_pkt_dcqcn_rp_timer(&f->rp))
                cs_evq_push(net->evq, ev, net->now + f->dcqcn->timer);
            break;
        }
        case CS_PKT_EV_FLOW_START: {
            int id = ev->a;
            cs_evq_release(net->evq, ev);
            for (int k = 0; k < CS_PKT_NET_WINDOW; k++)
                flow_emit(net, id, net->now);
            break;
        }
        default:
            g_assert_not_reached();
        }
    }
    return n;
}

cs_time_t cs_pkt_net_now(const cs_pkt_net_t *net) { return net->now; }
guint64 cs_pkt_net_events(const cs_pkt_net_t *net) { return cs_evq_popped(net->evq); }
cs_pkt_pool_t *cs_pkt_net_pool(cs_pkt_net_t *net) { return net->pool; }

cs_pkt_port_t *cs_pkt_net_port(cs_pkt_net_t *net, int port)
{
    g_return_val_if_fail(port >= 0 && (guint)port < net->links->len, NULL);
    return link_of(net, port)->port;
}

static const flow_t *flow_of(const cs_pkt_net_t *net, int flow)
{
    return &g_array_index(net->flows, flow_t, flow);
}

guint64 cs_pkt_net_flow_delivered(const cs_pkt_net_t *net, int flow) { return flow_of(net, flow)->delivered; }
cs_time_t cs_pkt_net_flow_first(const cs_pkt_net_t *net, int flow) { return flow_of(net, flow)->first; }
cs_time_t cs_pkt_net_flow_done(const cs_pkt_net_t *net, int flow) { return flow_of(net, flow)->done; }
guint64 cs_pkt_net_flow_dropped(const cs_pkt_net_t *net, int flow) { return flow_of(net, flow)->dropped; }

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
    return g_array_index(net->nodes, node_t, host).delivered;
}

guint64 cs_pkt_net_ecn_marks(const cs_pkt_net_t *net, int link, int prio)
{
    g_return_val_if_fail(link >= 0 && (guint)link < net->links->len, 0);
    g_return_val_if_fail(prio >= 0 && prio < CS_PKT_PRIOS, 0);
    return link_of(net, link)->marks[prio];
}

guint64 cs_pkt_net_flow_cnps_sent(const cs_pkt_net_t *net, int flow) { return flow_of(net, flow)->cnps_sent; }
guint64 cs_pkt_net_flow_cnps_received(const cs_pkt_net_t *net, int flow) { return flow_of(net, flow)->cnps_received; }

const cs_pkt_dcqcn_rp_t *cs_pkt_net_flow_rp(const cs_pkt_net_t *net, int flow)
{
    const flow_t *f = flow_of(net, flow);
    return f->dcqcn != NULL ? &f->rp : NULL;
}
