/* The minimal packet network (see cs_pkt_net.h). */
#include "config.h"

#include "sim/cs_pkt_net.h"

typedef struct {
    gboolean host;
    guint64 delivered;                /* payload sunk here */
} node_t;

typedef struct {
    int from, to;                     /* nodes */
    cs_pkt_port_t *port;
} link_t;

typedef struct {
    cs_pkt_flow_cfg_t cfg;
    cs_pkt_route_t *route;
    guint64 npkts, next;              /* packets in the message, next to make */
    guint64 delivered, arrived;       /* payload, packets */
    cs_time_t first, done;
} flow_t;

struct cs_pkt_net {
    cs_evq_t *evq;
    cs_pkt_pool_t *pool;
    GArray *nodes;                    /* node_t */
    GArray *links;                    /* link_t, index = port id */
    GArray *flows;                    /* flow_t */
    cs_pkt_net_observer_fn observer;
    void *observer_ctx;
    cs_time_t now;
};

static void host_dequeued(void *ctx, cs_pkt_port_t *port, cs_pkt_t *pkt, cs_time_t now);

/* Host ports make the next packet of a flow as one leaves; links are
 * always free to send (no PFC yet). */
static const cs_pkt_port_hooks_t host_hooks = { host_dequeued, NULL };

cs_pkt_net_t *cs_pkt_net_new(void)
{
    cs_pkt_net_t *net = g_new0(cs_pkt_net_t, 1);
    net->evq = cs_evq_new();
    net->pool = cs_pkt_pool_new();
    net->nodes = g_array_new(FALSE, TRUE, sizeof(node_t));
    net->links = g_array_new(FALSE, TRUE, sizeof(link_t));
    net->flows = g_array_new(FALSE, TRUE, sizeof(flow_t));
    return net;
}

void cs_pkt_net_free(cs_pkt_net_t *net)
{
    if (net == NULL)
        return;
    for (guint i = 0; i < net->links->len; i++)
        cs_pkt_port_free(g_array_index(net->links, link_t, i).port, net->pool);
    for (guint i = 0; i < net->flows->len; i++)
        cs_pkt_route_free(g_array_index(net->flows, flow_t, i).route);
    g_array_free(net->flows, TRUE);
    g_array_free(net->links, TRUE);
    g_array_free(net->nodes, TRUE);
    cs_pkt_pool_free(net->pool);
    cs_evq_free(net->evq);
    g_free(net);
}

static int add_node(cs_pkt_net_t *net, gboolean host)
{
    node_t n = { .host = host };
    g_array_append_val(net->nodes, n);
    return (int)net->nodes->len - 1;
}

int cs_pkt_net_add_host(cs_pkt_net_t *net) { return add_node(net, TRUE); }
int cs_pkt_net_add_switch(cs_pkt_net_t *net) { return add_node(net, FALSE); }

static void deliver(void *ctx, cs_pkt_port_t *port, cs_pkt_t *pkt, cs_time_t now);

int cs_pkt_net_add_link(cs_pkt_net_t *net, int from, int to, const cs_pkt_port_cfg_t *cfg)
{
    g_return_val_if_fail(from >= 0 && (guint)from < net->nodes->len, -1);
    g_return_val_if_fail(to >= 0 && (guint)to < net->nodes->len && to != from, -1);
    int id = (int)net->links->len;
    gboolean host = g_array_index(net->nodes, node_t, from).host;
    cs_pkt_port_t *port = cs_pkt_port_new(id, cfg, net->evq, host ? &host_hooks : NULL, net,
                                          deliver, net);
    if (port == NULL)
        return -1;
    link_t l = { .from = from, .to = to, .port = port };
    g_array_append_val(net->links, l);
    return id;
}

static const link_t *link_of(const cs_pkt_net_t *net, int port)
{
    return &g_array_index(net->links, link_t, port);
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
    const node_t *src = &g_array_index(net->nodes, node_t, link_of(net, route[0])->from);
    const node_t *dst = &g_array_index(net->nodes, node_t, link_of(net, route[n - 1])->to);
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

static void host_dequeued(void *ctx, cs_pkt_port_t *port, cs_pkt_t *pkt, cs_time_t now)
{
    (void)port;
    if (pkt->hop == 0)                /* leaving its source */
        flow_emit(ctx, (int)pkt->flow, now);
}

static void sink(cs_pkt_net_t *net, int node, cs_pkt_t *pkt, cs_time_t now)
{
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
    int node = link_of(net, cs_pkt_port_id(port))->to;
    pkt->hop++;
    int next = cs_pkt_next_port(pkt);
    if (next < 0) {
        sink(net, node, pkt, now);
        return;
    }
    const link_t *l = link_of(net, next);
    g_assert(l->from == node);
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

guint64 cs_pkt_net_host_delivered(const cs_pkt_net_t *net, int host)
{
    return g_array_index(net->nodes, node_t, host).delivered;
}
