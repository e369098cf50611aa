/* Never hang (cs_pkt_net.h): PFC deadlock and stall detection.
 *
 * Run at PFC refreshes and InfiniBand credit refreshes (the only events
 * that repeat for ever with nothing else happening), at most once per
 * eighth of the detection time D.
 *
 * InfiniBand: "paused for good" reads "its sender holds a packet its
 * credits do not cover" (the far end's input buffer is full); the rest is
 * the same, since a full input buffer frees only as its packets leave.
 *
 * Dead set, per priority p: the links that stay paused on p for good as
 * things stand. A candidate is a link whose far end asserts a pause that
 * its refresh keeps up and whose sender honours it (no watchdog on it,
 * which would break the pause), entering a switch with a buffer or a host
 * whose receive path is stalled for good. A candidate entering a switch
 * stays in the set only while every packet it brought there waits in the
 * p queue of a link of the set (its buffer cannot drain, so its pause
 * cannot end) and there is at least one (the greatest fixed point,
 * removing links until nothing changes). Every packet is found by walking
 * the switches' egress queues (a packet at a switch came in by
 * route->port[hop - 1] and waits on route->port[hop]): no bookkeeping on
 * the hot path.
 *
 * A cycle in the dead set (following from each link the lowest-numbered
 * link its packets wait on) on which no packet has started for D is a
 * cyclic buffer dependency: the net stops and reports it. The dead set
 * alone is not enough: a switch's dynamic threshold rises when other
 * traffic leaves, which can release a pause without its own bytes
 * draining; D says how long it must have held.
 * Quiet: when every packet the net holds (pause frames aside) is in a dead
 * queue or in a receive path stalled for good, and no QP, DCQCN or
 * receive-path timer is pending, nothing can ever move again: the net
 * says so (cs_pkt_net_next gives CS_TIME_NEVER) and reports a stall. */
#include "config.h"

#include <string.h>

#include "sim/cs_pkt_net-int.h"

#define IDX(l, p) ((gsize)(l) * CS_PKT_PRIOS + (gsize)(p))

static gboolean candidate(const cs_pkt_net_t *net, const link_t *l, int p, cs_time_t now)
{
    if (l->cred != NULL) {
        /* InfiniBand: its sender holds a packet its credits do not cover */
        const cs_pkt_t *h = cs_pkt_port_queue_head(l->port, p);
        if (h == NULL || cs_pkt_credit_may_send(l->cred, p, h->wire))
            return FALSE;
        const node_t *n = node_of(net, l->to);
        return n->host ? net_host_stalled_for_good(n, now) : TRUE;
    }
    if (!cs_pkt_pfc_asserted(l->pfc, p) || !cs_pkt_pfc_paused(l->pfc, p, now)
        || cs_pkt_pfc_watchdog(l->pfc) || !cs_pkt_pfc_refresh_holds(l->pfc))
        return FALSE;
    const node_t *n = node_of(net, l->to);
    return n->host ? net_host_stalled_for_good(n, now) : n->mmu != NULL;
}

/* The packet's ingress at the switch whose queue holds it. */
static inline int ingress(const cs_pkt_t *pkt)
{
    return pkt->route->port[pkt->hop - 1];
}

/* Every packet waiting in a switch's egress queue: the queue's link e,
 * its priority p, and the link x it came in by (the ingress). The walk
 * the dead set makes three times; nothing is kept on the hot path. */
typedef void (*queued_fn)(guint e, int p, int x, void *ctx);

static void walk_queued(const cs_pkt_net_t *net, queued_fn fn, void *ctx)
{
    for (guint e = 0; e < net->links->len; e++) {
        const link_t *E = link_of(net, (int)e);
        if (node_of(net, E->from)->host)
            continue;
        for (int p = 0; p < CS_PKT_PRIOS; p++)
            for (const cs_pkt_t *k = cs_pkt_port_queue_head(E->port, p); k != NULL; k = k->next)
                if (k->hop > 0)       /* made here (a SHARP aggregation node's): no ingress holds it */
                    fn(e, p, ingress(k), ctx);
    }
}

typedef struct {
    guint8 *dead;
    int *succ;
    guint32 *held;
    gboolean changed;
} dead_walk_t;

static void count_held(guint e, int p, int x, void *ctx)
{
    (void)e;
    ((dead_walk_t *)ctx)->held[IDX(x, p)]++;
}

/* a dead ingress whose packet waits on a live queue can drain: not dead */
static void drop_live(guint e, int p, int x, void *ctx)
{
    dead_walk_t *w = ctx;
    if (w->dead[IDX(x, p)] && !w->dead[IDX(e, p)]) {
        w->dead[IDX(x, p)] = 0;
        w->changed = TRUE;
    }
}

static void lowest_succ(guint e, int p, int x, void *ctx)
{
    dead_walk_t *w = ctx;
    gsize i = IDX(x, p);
    if (w->dead[i] && (w->succ[i] < 0 || (int)e < w->succ[i]))
        w->succ[i] = (int)e;
}

/* dead[IDX(l, p)]: the dead set; succ[IDX(l, p)]: for a dead link into a
 * switch, the lowest link its packets wait on there (-1 otherwise). */
static void dead_set(const cs_pkt_net_t *net, cs_time_t now, guint8 *dead, int *succ)
{
    guint nl = net->links->len;
    dead_walk_t w = { dead, succ, g_new0(guint32, (gsize)nl * CS_PKT_PRIOS), FALSE };
    for (guint l = 0; l < nl; l++)
        for (int p = 0; p < CS_PKT_PRIOS; p++) {
            dead[IDX(l, p)] = (guint8)candidate(net, link_of(net, (int)l), p, now);
            succ[IDX(l, p)] = -1;
        }
    walk_queued(net, count_held, &w);
    for (guint l = 0; l < nl; l++)
        if (!node_of(net, link_of(net, (int)l)->to)->host)
            for (int p = 0; p < CS_PKT_PRIOS; p++)
                if (w.held[IDX(l, p)] == 0)
                    dead[IDX(l, p)] = 0;
    do {
        w.changed = FALSE;
        walk_queued(net, drop_live, &w);
    } while (w.changed);
    walk_queued(net, lowest_succ, &w);
    g_free(w.held);
}

static void report(cs_pkt_net_t *net, cs_pkt_stuck_kind_t kind, int prio, const int *links, int n, int host,
                   cs_time_t now)
{
    if (net->dl.kind != CS_PKT_STUCK_NONE)
        return;                       /* the first report stays */
    net->dl_links = g_new(int, MAX(n, 1));
    net->dl_nodes = g_new(int, MAX(n, 1));
    for (int i = 0; i < n; i++) {
        net->dl_links[i] = links[i];
        net->dl_nodes[i] = link_of(net, links[i])->from;
    }
    net->dl = (cs_pkt_deadlock_t) {
        .kind = kind, .prio = prio, .detected = now, .nlinks = n,
        .links = net->dl_links, .nodes = net->dl_nodes, .host = host,
    };
    if (net->dl_hook != NULL)
        net->dl_hook(net->dl_ctx, &net->dl);
}

/* Walks the dead set from each link in turn (priorities, then ids,
 * ascending). Returns TRUE when a cycle unmoved for D was reported. Sets
 * *any_cycle when it met a cycle at all, and the longest chain that ends
 * at a host in chain/nchain/chain_prio. */
static gboolean find_cycle(cs_pkt_net_t *net, cs_time_t now, const guint8 *dead, const int *succ,
                           gboolean *any_cycle, int *chain, int *nchain, int *chain_prio)
{
    guint nl = net->links->len;
    int *stamp = g_new(int, nl), *path = g_new(int, nl + 1);
    gboolean stopped = FALSE;
    *any_cycle = FALSE;
    *nchain = 0;
    for (int p = 0; p < CS_PKT_PRIOS && !stopped; p++) {
        for (guint i = 0; i < nl; i++)
            stamp[i] = -1;
        for (guint x = 0; x < nl && !stopped; x++) {
            if (!dead[IDX(x, p)] || stamp[x] >= 0)
                continue;
            int n = 0, cur = (int)x;
            while (cur >= 0 && dead[IDX(cur, p)] && stamp[cur] < 0) {
                stamp[cur] = (int)x;
                path[n++] = cur;
                cur = succ[IDX(cur, p)];
            }
            if (cur >= 0 && dead[IDX(cur, p)] && stamp[cur] == (int)x) {
                /* a cycle: from cur's place on the path to its end */
                int at = 0;
                while (path[at] != cur)
                    at++;
                int len = n - at;
                *any_cycle = TRUE;
                gboolean unmoved = TRUE;
                int low = at;
                for (int k = at; k < n; k++) {
                    const link_t *l = link_of(net, path[k]);
                    unmoved &= l->last_tx < 0 || now - l->last_tx >= net->pfc_cfg.deadlock_ps;
                    if (path[k] < path[low])
                        low = k;
                }
                if (unmoved) {
                    int cyc[len];
                    for (int k = 0; k < len; k++)
                        cyc[k] = path[at + (low - at + k) % len];
                    report(net, CS_PKT_STUCK_CYCLE, p, cyc, len, -1, now);
                    stopped = TRUE;
                }
            } else if (cur < 0 && n > *nchain && node_of(net, link_of(net, path[n - 1])->to)->host) {
                memcpy(chain, path, (gsize)n * sizeof *chain);
                *nchain = n;
                *chain_prio = p;
            }
        }
    }
    g_free(stamp);
    g_free(path);
    return stopped;
}

/* Can anything still change besides pause refreshes? */
static gboolean timers_pending(const cs_pkt_net_t *net)
{
    if (net->starts_pending > 0)
        return TRUE;
    for (guint i = 0; i < net->flows->len; i++) {
        const flow_t *f = flow_at(net, (int)i);
        if (cs_evq_scheduled(f->pace_ev) || cs_evq_scheduled(f->rto_ev)
            || (f->timer_ev != NULL && cs_evq_scheduled(f->timer_ev)))
            return TRUE;
    }
    for (guint i = 0; i < net->nodes->len; i++) {
        const host_rx_t *rx = node_of(net, (int)i)->rx;
        if (rx != NULL && cs_evq_scheduled(rx->ev))
            return TRUE;
    }
    return FALSE;
}

gboolean net_stuck_check(cs_pkt_net_t *net, cs_time_t now)
{
    if (net->stopped || net_quiet(net) || now < net->next_check)
        return net->stopped;
    net->next_check = now + MAX(net->pfc_cfg.deadlock_ps / 8, 1);
    guint nl = net->links->len;
    guint8 *dead = g_new(guint8, (gsize)nl * CS_PKT_PRIOS);
    int *succ = g_new(int, (gsize)nl * CS_PKT_PRIOS), *chain = g_new(int, nl + 1);
    dead_set(net, now, dead, succ);
    gboolean any_cycle;
    int nchain, chain_prio = 0;
    net->stopped = find_cycle(net, now, dead, succ, &any_cycle, chain, &nchain, &chain_prio);
    if (!net->stopped && !any_cycle && !timers_pending(net)) {
        /* quiet? every packet held is dead, or in a receive path stalled for good */
        guint64 stuck = 0;
        int host = -1, host_prio = 0;
        for (guint l = 0; l < nl; l++)
            for (int p = 0; p < CS_PKT_PRIOS; p++)
                if (dead[IDX(l, p)])
                    stuck += cs_pkt_port_queue_len(link_of(net, (int)l)->port, p);
        for (guint i = 0; i < net->nodes->len; i++) {
            const node_t *n = node_of(net, (int)i);
            if (net_host_stalled_for_good(n, now) && n->rx->npkts > 0) {
                stuck += n->rx->npkts;
                if (host < 0) {
                    host = (int)i;
                    while (host_prio < CS_PKT_PRIOS - 1 && n->rx->bytes[host_prio] == 0)
                        host_prio++;
                }
            }
        }
        if (stuck > 0 && stuck == cs_pkt_pool_in_use(net->pool) - net->pause_alive) {
            net->quiet = TRUE;
            net->quiet_moves = net->moves;
            if (nchain > 0)
                report(net, CS_PKT_STUCK_STALL, chain_prio, chain, nchain,
                       link_of(net, chain[nchain - 1])->to, now);
            else
                report(net, CS_PKT_STUCK_STALL, host_prio, NULL, 0, host, now);
        }
    }
    g_free(dead);
    g_free(succ);
    g_free(chain);
    return net->stopped;
}

void net_stuck_free(cs_pkt_net_t *net)
{
    g_free(net->dl_links);
    g_free(net->dl_nodes);
}

const cs_pkt_deadlock_t *cs_pkt_net_deadlock(const cs_pkt_net_t *net)
{
    return net->dl.kind != CS_PKT_STUCK_NONE ? &net->dl : NULL;
}

void cs_pkt_net_set_deadlock_hook(cs_pkt_net_t *net, cs_pkt_net_deadlock_fn fn, void *ctx)
{
    net->dl_hook = fn;
    net->dl_ctx = ctx;
}
