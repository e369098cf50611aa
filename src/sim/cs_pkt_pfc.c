/* PFC link layer (design in cs_pkt_pfc.h). */
#include "config.h"

#include <math.h>

#include "sim/cs_pkt_pfc.h"

typedef struct {
    /* receiving end */
    cs_time_t until;                  /* paused before this time */
    cs_time_t since;                  /* start of the current pause; -1: not paused */
    cs_time_t paused_ps;              /* closed pauses */
    cs_event_t *expire;
    guint64 received;
    /* watchdog */
    gboolean stormed;
    cs_time_t last_pause;             /* last pause frame received while stormed */
    cs_event_t *wd;                   /* detection, then restoration */
    guint64 trips;
    /* sending end */
    gboolean asserted;
    cs_event_t *refresh;
    guint64 xoff_sent, xon_sent;
} prio_t;

struct cs_pkt_pfc {
    int id;
    cs_pkt_port_t *port;
    cs_evq_t *evq;
    const cs_pkt_pfc_cfg_t *cfg;
    cs_pkt_pfc_send_fn send;
    cs_pkt_pfc_still_fn still;
    cs_pkt_pfc_storm_fn storm;        /* watchdog on; NULL: off */
    void *ctx;
    prio_t p[CS_PKT_PRIOS];
};

void cs_pkt_pfc_cfg_init(cs_pkt_pfc_cfg_t *cfg)
{
    *cfg = (cs_pkt_pfc_cfg_t) { .quanta = CS_PKT_PFC_QUANTA_MAX, .deadlock_ps = CS_PKT_PFC_DEADLOCK_DEFAULT };
}

cs_pkt_pfc_t *cs_pkt_pfc_new(int id, cs_pkt_port_t *port, cs_evq_t *evq,
                             const cs_pkt_pfc_cfg_t *cfg, cs_pkt_pfc_send_fn send, void *ctx)
{
    g_return_val_if_fail(port != NULL && cfg != NULL && cfg->quanta > 0, NULL);
    cs_pkt_pfc_t *pfc = g_new0(cs_pkt_pfc_t, 1);
    pfc->id = id;
    pfc->port = port;
    pfc->evq = evq;
    pfc->cfg = cfg;
    pfc->send = send;
    pfc->ctx = ctx;
    for (int p = 0; p < CS_PKT_PRIOS; p++)
        pfc->p[p].since = -1;
    return pfc;
}

static void event_free(cs_evq_t *q, cs_event_t *ev)
{
    if (ev == NULL)
        return;
    cs_evq_cancel(q, ev);
    cs_evq_release(q, ev);
}

void cs_pkt_pfc_free(cs_pkt_pfc_t *pfc)
{
    if (pfc == NULL)
        return;
    for (int p = 0; p < CS_PKT_PRIOS; p++) {
        event_free(pfc->evq, pfc->p[p].expire);
        event_free(pfc->evq, pfc->p[p].refresh);
        event_free(pfc->evq, pfc->p[p].wd);
    }
    g_free(pfc);
}

void cs_pkt_pfc_set_still(cs_pkt_pfc_t *pfc, cs_pkt_pfc_still_fn still) { pfc->still = still; }
void cs_pkt_pfc_set_watchdog(cs_pkt_pfc_t *pfc, cs_pkt_pfc_storm_fn storm) { pfc->storm = storm; }
gboolean cs_pkt_pfc_watchdog(const cs_pkt_pfc_t *pfc) { return pfc->storm != NULL && pfc->cfg->watchdog_ps > 0; }

cs_time_t cs_pkt_pfc_quanta_ps(guint32 quanta, guint64 rate_bps)
{
    g_return_val_if_fail(rate_bps > 0, 0);
    /* 65535 x 512 x 10^12 overflows 64 bits; a double holds the < 2^53 ps exactly enough */
    return (cs_time_t)llround((double)quanta * CS_PKT_PFC_QUANTUM_BITS * CS_PS_PER_S
                              / (double)rate_bps);
}

/* Allocates a timer event on first use. */
static void arm(cs_pkt_pfc_t *pfc, cs_event_t **slot, int kind, int prio, cs_time_t t)
{
    if (*slot == NULL) {
        *slot = cs_evq_alloc(pfc->evq);
        (*slot)->kind = kind;
        (*slot)->a = pfc->id;
        (*slot)->b = prio;
    }
    if (cs_evq_scheduled(*slot))
        cs_evq_reschedule(pfc->evq, *slot, t);
    else
        cs_evq_push(pfc->evq, *slot, t);
}

static void end_pause(cs_pkt_pfc_t *pfc, int prio, cs_time_t end)
{
    prio_t *s = &pfc->p[prio];
    if (s->since < 0)
        return;
    s->paused_ps += end - s->since;
    s->since = -1;
    s->until = end;
    if (s->expire != NULL)
        cs_evq_cancel(pfc->evq, s->expire);
    if (s->wd != NULL && !s->stormed)
        cs_evq_cancel(pfc->evq, s->wd);
    cs_pkt_port_kick(pfc->port, end);
}

void cs_pkt_pfc_receive(cs_pkt_pfc_t *pfc, int prio, guint16 quanta, cs_time_t now)
{
    g_return_if_fail(prio >= 0 && prio < CS_PKT_PRIOS);
    prio_t *s = &pfc->p[prio];
    s->received++;
    if (s->stormed) {                 /* ignored; restoration waits for a quiet spell */
        s->last_pause = now;
        return;
    }
    if (quanta == 0) {                /* XON */
        end_pause(pfc, prio, now);
        return;
    }
    if (s->since < 0) {
        s->since = now;
        if (cs_pkt_pfc_watchdog(pfc))
            arm(pfc, &s->wd, CS_PKT_EV_PFC_WATCHDOG, prio, now + pfc->cfg->watchdog_ps);
    }
    s->until = now + cs_pkt_pfc_quanta_ps(quanta, cs_pkt_port_cfg(pfc->port)->rate_bps);
    arm(pfc, &s->expire, CS_PKT_EV_PFC_EXPIRE, prio, s->until);
}

gboolean cs_pkt_pfc_paused(const cs_pkt_pfc_t *pfc, int prio, cs_time_t now)
{
    const prio_t *s = &pfc->p[prio];
    return s->since >= 0 && now < s->until;
}

gboolean cs_pkt_pfc_stormed(const cs_pkt_pfc_t *pfc, int prio) { return pfc->p[prio].stormed; }
guint64 cs_pkt_pfc_trips(const cs_pkt_pfc_t *pfc, int prio) { return pfc->p[prio].trips; }

gboolean cs_pkt_pfc_may_send(const cs_pkt_pfc_t *pfc, int prio, cs_time_t now)
{
    return !cs_pkt_pfc_paused(pfc, prio, now);
}

static cs_time_t refresh_interval(const cs_pkt_pfc_t *pfc)
{
    if (pfc->cfg->refresh_ps > 0)
        return pfc->cfg->refresh_ps;
    cs_time_t t = cs_pkt_pfc_quanta_ps(pfc->cfg->quanta, cs_pkt_port_cfg(pfc->port)->rate_bps) / 2;
    return MAX(t, 1);
}

static void send_xoff(cs_pkt_pfc_t *pfc, int prio, cs_time_t now)
{
    prio_t *s = &pfc->p[prio];
    s->xoff_sent++;
    pfc->send(pfc->ctx, pfc->id, prio, pfc->cfg->quanta, now);
    arm(pfc, &s->refresh, CS_PKT_EV_PFC_REFRESH, prio, now + refresh_interval(pfc));
}

void cs_pkt_pfc_xoff(cs_pkt_pfc_t *pfc, int prio, cs_time_t now)
{
    g_return_if_fail(prio >= 0 && prio < CS_PKT_PRIOS);
    prio_t *s = &pfc->p[prio];
    if (s->asserted)
        return;
    s->asserted = TRUE;
    send_xoff(pfc, prio, now);
}

void cs_pkt_pfc_xon(cs_pkt_pfc_t *pfc, int prio, cs_time_t now)
{
    g_return_if_fail(prio >= 0 && prio < CS_PKT_PRIOS);
    prio_t *s = &pfc->p[prio];
    if (!s->asserted)
        return;
    s->asserted = FALSE;
    if (s->refresh != NULL)
        cs_evq_cancel(pfc->evq, s->refresh);
    s->xon_sent++;
    pfc->send(pfc->ctx, pfc->id, prio, 0, now);
}

gboolean cs_pkt_pfc_asserted(const cs_pkt_pfc_t *pfc, int prio) { return pfc->p[prio].asserted; }

gboolean cs_pkt_pfc_refresh_holds(const cs_pkt_pfc_t *pfc)
{
    return refresh_interval(pfc) < cs_pkt_pfc_quanta_ps(pfc->cfg->quanta, cs_pkt_port_cfg(pfc->port)->rate_bps);
}

static cs_time_t restore_ps(const cs_pkt_pfc_t *pfc)
{
    return pfc->cfg->watchdog_restore_ps > 0 ? pfc->cfg->watchdog_restore_ps : pfc->cfg->watchdog_ps;
}

/* The watchdog's deadline: trip a priority paused all along with packets
 * waiting, or restore a stormed one after a quiet spell. */
static void watchdog_event(cs_pkt_pfc_t *pfc, int prio, cs_time_t now)
{
    prio_t *s = &pfc->p[prio];
    if (s->stormed) {
        cs_time_t at = s->last_pause + restore_ps(pfc);
        if (now >= at)
            s->stormed = FALSE;       /* honours pauses again from the next frame */
        else
            cs_evq_push(pfc->evq, s->wd, at);
        return;
    }
    if (!cs_pkt_pfc_paused(pfc, prio, now))
        return;
    if (cs_pkt_port_queue_len(pfc->port, prio) == 0) {
        cs_evq_push(pfc->evq, s->wd, now + pfc->cfg->watchdog_ps);
        return;
    }
    s->trips++;
    s->stormed = TRUE;
    s->last_pause = now;
    pfc->storm(pfc->ctx, pfc->id, prio, now);   /* drops what the queue holds */
    end_pause(pfc, prio, now);        /* closes the paused time, kicks the port */
    cs_evq_push(pfc->evq, s->wd, now + restore_ps(pfc));
}

void cs_pkt_pfc_event(cs_pkt_pfc_t *pfc, cs_event_t *ev)
{
    int prio = ev->b;
    prio_t *s = &pfc->p[prio];
    if (ev == s->wd) {
        watchdog_event(pfc, prio, ev->time);
        return;
    }
    if (ev == s->expire) {
        /* the timer ran out with no XON: the sender resumes on its own */
        if (s->since >= 0 && ev->time >= s->until)
            end_pause(pfc, prio, s->until);
        return;
    }
    g_return_if_fail(ev == s->refresh && s->asserted);
    if (pfc->still != NULL && !pfc->still(pfc->ctx, pfc->id, prio))
        cs_pkt_pfc_xon(pfc, prio, ev->time);
    else
        send_xoff(pfc, prio, ev->time);
}

guint64 cs_pkt_pfc_xoff_sent(const cs_pkt_pfc_t *pfc, int prio) { return pfc->p[prio].xoff_sent; }
guint64 cs_pkt_pfc_xon_sent(const cs_pkt_pfc_t *pfc, int prio) { return pfc->p[prio].xon_sent; }
guint64 cs_pkt_pfc_received(const cs_pkt_pfc_t *pfc, int prio) { return pfc->p[prio].received; }

cs_time_t cs_pkt_pfc_paused_ps(const cs_pkt_pfc_t *pfc, int prio, cs_time_t now)
{
    const prio_t *s = &pfc->p[prio];
    cs_time_t t = s->paused_ps;
    if (s->since >= 0)
        t += MIN(now, s->until) - s->since;
    return t;
}
