/* InfiniBand credit-based flow control per VL (design in cs_pkt_credit.h). */
#include "config.h"

#include "sim/cs_pkt_credit.h"

struct cs_pkt_credit {
    int id;
    cs_evq_t *evq;
    cs_pkt_credit_send_fn send;
    void *ctx;
    cs_time_t refresh_ps;
    cs_event_t *refresh_ev;
    /* receiving end */
    guint32 blocks[CS_PKT_PRIOS];     /* buffer per VL */
    guint32 used[CS_PKT_PRIOS];
    guint64 freed[CS_PKT_PRIOS];      /* blocks freed since the start */
    /* sending end */
    guint64 fctbs[CS_PKT_PRIOS];      /* blocks sent */
    guint64 limit[CS_PKT_PRIOS];      /* FCCL last heard */
    cs_time_t starve_from[CS_PKT_PRIOS];   /* -1: not starved */
    cs_time_t starved[CS_PKT_PRIOS];
    gboolean waited[CS_PKT_PRIOS];    /* the VL waited for credits since its last packet started */
    guint64 fc_sent[CS_PKT_PRIOS];
};

cs_pkt_credit_t *cs_pkt_credit_new(int id, const guint32 blocks[CS_PKT_PRIOS], cs_time_t refresh_ps, cs_evq_t *evq,
                                   cs_pkt_credit_send_fn send, void *ctx)
{
    g_return_val_if_fail(refresh_ps > 0 && send != NULL, NULL);
    cs_pkt_credit_t *c = g_new0(cs_pkt_credit_t, 1);
    c->id = id;
    c->evq = evq;
    c->send = send;
    c->ctx = ctx;
    c->refresh_ps = refresh_ps;
    for (int v = 0; v < CS_PKT_PRIOS; v++) {
        c->blocks[v] = blocks[v];
        c->limit[v] = blocks[v];      /* advertised as the link comes up */
        c->starve_from[v] = -1;
    }
    c->refresh_ev = cs_evq_alloc(evq);
    c->refresh_ev->kind = CS_PKT_EV_CREDIT_REFRESH;
    c->refresh_ev->a = id;
    return c;
}

void cs_pkt_credit_free(cs_pkt_credit_t *c)
{
    if (c == NULL)
        return;
    cs_evq_cancel(c->evq, c->refresh_ev);
    cs_evq_release(c->evq, c->refresh_ev);
    g_free(c);
}

gboolean cs_pkt_credit_may_send(const cs_pkt_credit_t *c, int vl, guint32 wire)
{
    return c->fctbs[vl] + cs_pkt_credit_blocks(wire) <= c->limit[vl];
}

void cs_pkt_credit_sent(cs_pkt_credit_t *c, int vl, guint32 wire)
{
    g_return_if_fail(cs_pkt_credit_may_send(c, vl, wire));
    c->fctbs[vl] += cs_pkt_credit_blocks(wire);
    c->waited[vl] = FALSE;
}

gboolean cs_pkt_credit_waited(const cs_pkt_credit_t *c, int vl) { return c->waited[vl]; }
gboolean cs_pkt_credit_starving(const cs_pkt_credit_t *c, int vl) { return c->starve_from[vl] >= 0; }

static void starve_end(cs_pkt_credit_t *c, int vl, cs_time_t now)
{
    if (c->starve_from[vl] >= 0) {
        c->starved[vl] += now - c->starve_from[vl];
        c->starve_from[vl] = -1;
    }
}

gboolean cs_pkt_credit_receive(cs_pkt_credit_t *c, int vl, guint64 fccl, cs_time_t now)
{
    if (fccl <= c->limit[vl])
        return FALSE;                 /* a repeat (a periodic update) */
    c->limit[vl] = fccl;
    starve_end(c, vl, now);           /* the port tries again; still short, it starves anew */
    return TRUE;
}

void cs_pkt_credit_starve(cs_pkt_credit_t *c, int vl, cs_time_t now)
{
    if (c->starve_from[vl] < 0)
        c->starve_from[vl] = now;
    c->waited[vl] = TRUE;
}

static void refresh_arm(cs_pkt_credit_t *c, cs_time_t now)
{
    if (!cs_evq_scheduled(c->refresh_ev))
        cs_evq_push(c->evq, c->refresh_ev, now + c->refresh_ps);
}

void cs_pkt_credit_take(cs_pkt_credit_t *c, int vl, guint32 wire, cs_time_t now)
{
    guint32 b = cs_pkt_credit_blocks(wire);
    g_return_if_fail(c->used[vl] + b <= c->blocks[vl]);
    c->used[vl] += b;
    refresh_arm(c, now);
}

void cs_pkt_credit_release(cs_pkt_credit_t *c, int vl, guint32 wire, cs_time_t now)
{
    guint32 b = cs_pkt_credit_blocks(wire);
    g_return_if_fail(c->used[vl] >= b);
    c->used[vl] -= b;
    c->freed[vl] += b;
    c->send(c->ctx, c->id, vl, now);
}

guint64 cs_pkt_credit_fccl(const cs_pkt_credit_t *c, int vl)
{
    return c->freed[vl] + c->blocks[vl];
}

guint32 cs_pkt_credit_used(const cs_pkt_credit_t *c, int vl) { return c->used[vl]; }
guint32 cs_pkt_credit_buffer(const cs_pkt_credit_t *c, int vl) { return c->blocks[vl]; }

void cs_pkt_credit_event(cs_pkt_credit_t *c, cs_event_t *ev)
{
    g_return_if_fail(ev == c->refresh_ev);
    gboolean busy = FALSE;
    for (int v = 0; v < CS_PKT_PRIOS; v++) {
        if (c->used[v] == 0)
            continue;
        busy = TRUE;
        c->send(c->ctx, c->id, v, ev->time);
    }
    if (busy)
        cs_evq_push(c->evq, c->refresh_ev, ev->time + c->refresh_ps);
}

guint64 cs_pkt_credit_fc_sent(const cs_pkt_credit_t *c, int vl) { return c->fc_sent[vl]; }
void cs_pkt_credit_fc_count(cs_pkt_credit_t *c, int vl) { c->fc_sent[vl]++; }

cs_time_t cs_pkt_credit_starved_ps(const cs_pkt_credit_t *c, int vl, cs_time_t now)
{
    return c->starved[vl] + (c->starve_from[vl] >= 0 ? now - c->starve_from[vl] : 0);
}

