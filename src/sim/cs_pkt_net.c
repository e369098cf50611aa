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

/* A message posted to a QP: packets [start, end) of the QP. */
typedef struct {
    guint64 start, end, bytes;
} msg_t;

/* A flow: a QP doing RDMA WRITEs (cs_pkt_net.h). */
typedef struct {
    cs_pkt_qp_cfg_t cfg;
    gboolean write;                   /* RETH on each message's first packet */
    cs_pkt_route_t *route;
    cs_pkt_route_t *back;             /* ACKs and CNPs, receiver to sender; NULL: none */
    /* messages not yet both acknowledged and delivered: numbers
     * [mfirst, nmsgs), at msgs[number % mcap] */
    msg_t *msgs;
    guint mcap;
    guint64 mfirst, nmsgs;
    guint64 emsg;                     /* the message 'next' is in */
    guint64 npkts;                    /* packets posted */
    guint64 next;                     /* next packet to make (goes back on a NAK or timeout) */
    guint64 hw;                       /* packets that left the sender at least once */
    guint64 una;                      /* oldest packet not acknowledged */
    guint64 sent_msgs, deliv_msgs;    /* messages reported sent / delivered */
    guint32 queued;                   /* its packets in its host's egress queue */
    /* receiver */
    guint64 expect;                   /* next PSN it accepts */
    guint32 since_ack;
    gboolean nak_out;                 /* a NAK for 'expect' is out */
    guint64 delivered, arrived;       /* payload, packets accepted */
    guint64 dropped;                  /* packets dropped by switch buffers */
    guint64 ooo, retx, timeouts, naks;
    cs_time_t first, done;
    /* loss recovery */
    int retries;
    cs_time_t rto_at;                 /* the timer's deadline while packets are out */
    gboolean failed;
    /* rate limiter: DCQCN's reaction point and the host's cap */
    double cap_bps;                   /* <= 0: none */
    cs_time_t next_send;              /* the next packet may go then */
    cs_pkt_dcqcn_cfg_t *dcqcn;        /* NULL: none */
    cs_pkt_dcqcn_rp_t rp;
    cs_time_t last_cnp;               /* notification point: last CNP sent, -1: none */
    guint64 cnps_sent, cnps_received;
    cs_event_t *pace_ev, *timer_ev, *rto_ev;   /* a = flow id; timer_ev only with DCQCN */
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
    cs_pkt_qp_hooks_t qp_hooks;
    void *qp_ctx;
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
        g_free(f->msgs);
        for (int k = 0; k < 3; k++) {
            cs_event_t *ev = k == 0 ? f->pace_ev : k == 1 ? f->timer_ev : f->rto_ev;
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

static flow_t *flow_at(const cs_pkt_net_t *net, int id)
{
    return &g_array_index(net->flows, flow_t, id);
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

static int add_qp(cs_pkt_net_t *net, const int *route, int nroute, const cs_pkt_qp_cfg_t *cfg, gboolean write)
{
    g_return_val_if_fail(route_ok(net, route, nroute), -1);
    g_return_val_if_fail(cs_pkt_frame_mtu_valid(cfg->mtu), -1);
    g_return_val_if_fail(cfg->prio >= 0 && cfg->prio < CS_PKT_PRIOS && cfg->timeout >= 0 && cfg->retry_cnt >= 0, -1);
    flow_t f = {
        .cfg = *cfg,
        .write = write,
        .route = cs_pkt_route_new(route, nroute),
        .first = -1,
        .done = -1,
        .last_cnp = -1,
    };
    if (cfg->ack_interval > 0 && (f.back = route_back(net, f.route)) == NULL) {
        cs_pkt_route_free(f.route);
        g_return_val_if_reached(-1);   /* no way back for ACKs */
    }
    f.mcap = 4;
    f.msgs = g_new(msg_t, f.mcap);
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

/* ---- the sender -------------------------------------------------------- */

static inline msg_t *msg_of(flow_t *f, guint64 m)
{
    return &f->msgs[m % f->mcap];
}

/* Makes the flow's next packet and queues it at its first port. */
static void flow_emit(cs_pkt_net_t *net, flow_t *f, int id, cs_time_t now)
{
    while (f->next >= msg_of(f, f->emsg)->end)
        f->emsg++;
    const msg_t *m = msg_of(f, f->emsg);
    const cs_pkt_qp_cfg_t *c = &f->cfg;
    guint64 i = f->next - m->start;
    cs_pkt_t *p = cs_pkt_alloc(net->pool);
    p->route = f->route;
    p->flow = (guint32)id;
    p->psn = (guint32)f->next;
    p->payload = cs_pkt_frame_payload(m->bytes, c->mtu, i);
    p->wire = cs_pkt_frame_wire(&c->frame, m->bytes, c->mtu, i, f->write);
    p->prio = (guint8)c->prio;
    p->flags = CS_PKT_F_ECT | (f->write && i == 0 ? CS_PKT_F_FIRST : 0) | (f->next + 1 == m->end ? CS_PKT_F_LAST : 0);
    if (f->next < f->hw)
        f->retx++;
    f->next++;
    f->queued++;
    cs_pkt_port_enqueue(link_of(net, f->route->port[0])->port, p, now);
}

static gboolean flow_paced(const flow_t *f)
{
    return f->dcqcn != NULL || f->cap_bps > 0;
}

/* Keeps up to CS_PKT_NET_WINDOW of the flow's packets in its host's
 * queue; a paced flow one at a time, each a gap of its rate limiter after
 * the last started on the wire. */
static void flow_pump(cs_pkt_net_t *net, int id, cs_time_t now)
{
    flow_t *f = flow_at(net, id);
    while (!f->failed && f->queued < CS_PKT_NET_WINDOW && f->next < f->npkts) {
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
        cs_evq_push(net->evq, f->rto_ev, f->rto_at);
}

/* A packet of the flow left its host: the rate limiter spaces the next
 * one; the first transmission of a message's last packet is reported. */
static void flow_sent(cs_pkt_net_t *net, int id, const cs_pkt_t *pkt, cs_time_t now)
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
    flow_pump(net, id, now);
}

void cs_pkt_net_qp_post(cs_pkt_net_t *net, int qp, guint64 bytes, cs_time_t now)
{
    g_return_if_fail(qp >= 0 && (guint)qp < net->flows->len);
    flow_t *f = flow_at(net, qp);
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
    guint64 np = cs_pkt_frame_npkts(bytes, f->cfg.mtu);
    *msg_of(f, f->nmsgs) = (msg_t){ f->npkts, f->npkts + np, bytes };
    f->nmsgs++;
    f->npkts += np;
    g_return_if_fail(f->npkts <= G_MAXUINT32);   /* PSNs are the QP's packet indices */
    flow_pump(net, qp, now);
}

void cs_pkt_net_qp_set_rate(cs_pkt_net_t *net, int qp, double bps, cs_time_t now)
{
    g_return_if_fail(qp >= 0 && (guint)qp < net->flows->len);
    flow_t *f = flow_at(net, qp);
    double old = f->cap_bps;
    f->cap_bps = bps > 0 ? bps : 0;
    if (f->cap_bps == old)
        return;
    /* the gap already running was taken at the old rate: a faster one
     * lets the next packet go now */
    if (f->cap_bps == 0 || (old > 0 && f->cap_bps > old))
        f->next_send = MIN(f->next_send, now);
    flow_pump(net, qp, now);
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
static void flow_rto(cs_pkt_net_t *net, int id, cs_time_t now)
{
    flow_t *f = flow_at(net, id);
    if (f->failed || f->una >= f->hw)
        return;                       /* everything out is acknowledged: idle */
    if (now < f->rto_at) {
        cs_evq_push(net->evq, f->rto_ev, f->rto_at);   /* progress moved the deadline */
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
    f->next = f->una;
    f->emsg = f->mfirst;
    f->rto_at = now + f->cfg.timeout;
    cs_evq_push(net->evq, f->rto_ev, f->rto_at);
    flow_pump(net, id, now);
}

/* An ACK (every packet before psn is in) or a NAK (and go back to psn)
 * reached the sender. */
static void flow_ack(cs_pkt_net_t *net, int id, const cs_pkt_t *pkt, cs_time_t now)
{
    flow_t *f = flow_at(net, id);
    guint64 psn = pkt->psn;
    if (psn > f->una) {
        f->una = psn;
        f->retries = 0;
        f->rto_at = now + f->cfg.timeout;
        flow_trim(f);
    }
    if (pkt->flags & CS_PKT_F_NAK) {
        f->naks++;
        if (f->next > psn) {
            f->next = psn;
            f->emsg = f->mfirst;
        }
        flow_pump(net, id, now);
    }
}

static void net_dequeued(void *ctx, cs_pkt_port_t *port, cs_pkt_t *pkt, cs_time_t now)
{
    cs_pkt_net_t *net = ctx;
    if (pkt->hop == 0) {              /* leaving its source */
        if (!(pkt->flags & (CS_PKT_F_CNP | CS_PKT_F_ACK)))
            flow_sent(net, (int)pkt->flow, pkt, now);
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

/* ---- the receiver ------------------------------------------------------ */

/* A packet back to the sender along the flow's reverse route. */
static void send_back(cs_pkt_net_t *net, flow_t *f, guint32 flow, guint32 flags, guint32 psn, guint32 wire, int prio,
                      cs_time_t now)
{
    cs_pkt_t *p = cs_pkt_alloc(net->pool);
    p->route = f->back;
    p->flow = flow;
    p->psn = psn;
    p->wire = wire + (f->cfg.frame.vlan ? CS_PKT_VLAN_TAG : 0);
    p->prio = (guint8)prio;
    p->flags = (guint8)flags;
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
    send_back(net, f, pkt->flow, CS_PKT_F_CNP, 0, CS_PKT_ROCE_OVERHEAD + CS_PKT_CNP_PAYLOAD, f->dcqcn->cnp_prio, now);
}

/* Reaction point: a CNP reached the sender. */
static void rp_receive(cs_pkt_net_t *net, int id, cs_time_t now)
{
    flow_t *f = flow_at(net, id);
    f->cnps_received++;
    if (cs_pkt_dcqcn_rp_cnp(&f->rp, now))
        evq_at(net->evq, f->timer_ev, now + f->dcqcn->timer);
}

/* An ACK or NAK for 'psn' (the next PSN the receiver expects). */
static void send_ack(cs_pkt_net_t *net, flow_t *f, guint32 flow, gboolean nak, cs_time_t now)
{
    send_back(net, f, flow, CS_PKT_F_ACK | (nak ? CS_PKT_F_NAK : 0), (guint32)f->expect,
              CS_PKT_ROCE_OVERHEAD + CS_PKT_AETH, f->cfg.prio, now);
}

/* A data packet reached its destination: accepted in PSN order, else
 * dropped (go-back-N) with one NAK per gap. Returns whether accepted. */
static gboolean receive(cs_pkt_net_t *net, int node, const cs_pkt_t *pkt, cs_time_t now)
{
    int id = (int)pkt->flow;
    flow_t *f = flow_at(net, id);
    gboolean acks = f->cfg.ack_interval > 0;
    if (acks && (guint64)pkt->psn != f->expect) {
        if ((guint64)pkt->psn > f->expect) {
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
    f->expect++;
    f->nak_out = FALSE;
    node_of(net, node)->delivered += pkt->payload;
    f->delivered += pkt->payload;
    f->arrived++;
    if (f->first < 0)
        f->first = now;
    if (acks && (++f->since_ack >= f->cfg.ack_interval || (pkt->flags & CS_PKT_F_LAST))) {
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

static void sink(cs_pkt_net_t *net, int node, cs_pkt_t *pkt, cs_time_t now)
{
    if (pkt->flags & CS_PKT_F_CNP) {
        rp_receive(net, (int)pkt->flow, now);
    } else if (pkt->flags & CS_PKT_F_ACK) {
        flow_ack(net, (int)pkt->flow, pkt, now);
    } else {
        np_receive(net, pkt, now);
        if (receive(net, node, pkt, now) && net->observer != NULL)
            net->observer(net->observer_ctx, pkt, now);
    }
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
            flow_at(net, (int)pkt->flow)->dropped++;
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
            flow_pump(net, ev->a, net->now);
            break;
        case CS_PKT_EV_QP_RTO:
            flow_rto(net, ev->a, net->now);
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
    const cs_event_t *ev = cs_evq_peek(net->evq);
    return ev != NULL ? ev->time : CS_TIME_NEVER;
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
guint64 cs_pkt_net_qp_retransmitted(const cs_pkt_net_t *net, int qp) { return flow_of(net, qp)->retx; }
guint64 cs_pkt_net_qp_timeouts(const cs_pkt_net_t *net, int qp) { return flow_of(net, qp)->timeouts; }
guint64 cs_pkt_net_qp_naks(const cs_pkt_net_t *net, int qp) { return flow_of(net, qp)->naks; }
guint64 cs_pkt_net_qp_out_of_order(const cs_pkt_net_t *net, int qp) { return flow_of(net, qp)->ooo; }
gboolean cs_pkt_net_qp_failed(const cs_pkt_net_t *net, int qp) { return flow_of(net, qp)->failed; }

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

guint64 cs_pkt_net_flow_cnps_sent(const cs_pkt_net_t *net, int flow) { return flow_of(net, flow)->cnps_sent; }
guint64 cs_pkt_net_flow_cnps_received(const cs_pkt_net_t *net, int flow) { return flow_of(net, flow)->cnps_received; }

const cs_pkt_dcqcn_rp_t *cs_pkt_net_flow_rp(const cs_pkt_net_t *net, int flow)
{
    const flow_t *f = flow_of(net, flow);
    return f->dcqcn != NULL ? &f->rp : NULL;
}
