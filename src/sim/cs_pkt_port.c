/* Egress port: priority FIFOs, strict priority + deficit round robin or
 * InfiniBand VL arbitration, and
 * a link with serialization and propagation (design in cs_pkt_port.h). */
#include "config.h"

#include "sim/cs_pkt_frame.h"
#include "sim/cs_pkt_port.h"

typedef struct {
    cs_pkt_t *head, *tail;
    guint64 bytes;                    /* wire bytes */
    guint32 len;
} fifo_t;

struct cs_pkt_port {
    int id;
    cs_pkt_port_cfg_t cfg;
    cs_evq_t *evq;
    const cs_pkt_port_hooks_t *hooks;
    void *hooks_ctx;
    cs_pkt_deliver_fn deliver;
    void *deliver_ctx;

    fifo_t q[CS_PKT_PRIOS];
    guint64 quantum[CS_PKT_PRIOS];    /* weight x quantum */
    guint64 deficit[CS_PKT_PRIOS];
    int drr_cur;                      /* the queue DRR is visiting */
    gboolean drr_granted;             /* it got its quantum on this visit */
    /* VL arbitration (cfg.arb): per table (0 high, 1 low) the entry being
     * served, its weight left in bytes and whether it was entered; the VLs
     * each table serves; high-table bytes since a low-table packet */
    int arb_idx[2];
    gint64 arb_left[2];
    gboolean arb_in[2];
    guint8 arb_mask[2];
    guint64 arb_high_sent;
    gboolean busy;                    /* serializing a packet */
    guint64 ser_rem;                  /* carried remainder, bits x 10^12 mod rate */

    fifo_t ctrl;                      /* link control frames (PFC pause), ahead of data */
    fifo_t wire;                      /* in flight, arrival times nondecreasing */
    cs_event_t *tx_ev, *arr_ev;

    guint64 qmax[CS_PKT_PRIOS];
    double qarea[CS_PKT_PRIOS];       /* queued bytes x ps up to qarea_t: the time-average's integral */
    cs_time_t qarea_t[CS_PKT_PRIOS];
    guint64 tx_bytes[CS_PKT_PRIOS], tx_pkts[CS_PKT_PRIOS];
    guint64 ctrl_pkts;
};

const cs_pkt_port_hooks_t cs_pkt_port_hooks_always = { NULL, NULL };

static inline void fifo_push(fifo_t *f, cs_pkt_t *p)
{
    p->next = NULL;
    if (f->tail != NULL)
        f->tail->next = p;
    else
        f->head = p;
    f->tail = p;
    f->bytes += p->wire;
    f->len++;
}

static inline cs_pkt_t *fifo_pop(fifo_t *f)
{
    cs_pkt_t *p = f->head;
    f->head = p->next;
    if (f->head == NULL)
        f->tail = NULL;
    f->bytes -= p->wire;
    f->len--;
    p->next = NULL;
    return p;
}

/* Brings queue p's integral up to 'now' before its bytes change. */
static inline void q_account(cs_pkt_port_t *port, int p, cs_time_t now)
{
    port->qarea[p] += (double)port->q[p].bytes * (double)(now - port->qarea_t[p]);
    port->qarea_t[p] = now;
}

void cs_pkt_port_cfg_init(cs_pkt_port_cfg_t *cfg, guint64 rate_bps, cs_time_t prop_ps)
{
    *cfg = (cs_pkt_port_cfg_t) { .rate_bps = rate_bps, .prop_ps = prop_ps };
    for (int p = 0; p < CS_PKT_PRIOS; p++)
        cfg->weight[p] = 1;
}

gboolean cs_pkt_arb_valid(const cs_pkt_arb_t *arb)
{
    if (arb->nhigh > CS_PKT_ARB_ENTRIES || arb->nlow > CS_PKT_ARB_ENTRIES)
        return FALSE;
    for (int i = 0; i < arb->nhigh; i++)
        if (arb->high[i].vl >= CS_PKT_PRIOS)
            return FALSE;
    for (int i = 0; i < arb->nlow; i++)
        if (arb->low[i].vl >= CS_PKT_PRIOS)
            return FALSE;
    return TRUE;
}

/* The VLs a table serves: those with an entry of nonzero weight. */
static guint8 arb_mask(const cs_pkt_arb_entry_t *e, int n)
{
    guint8 m = 0;
    for (int i = 0; i < n; i++)
        if (e[i].weight > 0)
            m |= (guint8)(1u << e[i].vl);
    return m;
}

gboolean cs_pkt_arb_serves(const cs_pkt_arb_t *arb, int vl)
{
    return ((arb_mask(arb->high, arb->nhigh) | arb_mask(arb->low, arb->nlow)) >> vl) & 1;
}

cs_pkt_port_t *cs_pkt_port_new(int id, const cs_pkt_port_cfg_t *cfg, cs_evq_t *evq,
                               const cs_pkt_port_hooks_t *hooks, void *hooks_ctx,
                               cs_pkt_deliver_fn deliver, void *deliver_ctx)
{
    g_return_val_if_fail(cfg->rate_bps > 0 && cfg->prop_ps >= 0 && deliver != NULL, NULL);
    g_return_val_if_fail(cfg->arb == NULL || (cfg->strict == 0 && cs_pkt_arb_valid(cfg->arb)), NULL);
    for (int p = 0; p < CS_PKT_PRIOS; p++)
        g_return_val_if_fail((cfg->strict >> p & 1) || cfg->weight[p] >= 1, NULL);
    cs_pkt_port_t *port = g_new0(cs_pkt_port_t, 1);
    port->id = id;
    port->cfg = *cfg;
    port->evq = evq;
    port->hooks = hooks != NULL ? hooks : &cs_pkt_port_hooks_always;
    port->hooks_ctx = hooks_ctx;
    port->deliver = deliver;
    port->deliver_ctx = deliver_ctx;
    guint64 unit = cfg->quantum > 0 ? cfg->quantum : CS_PKT_WIRE_MAX;
    for (int p = 0; p < CS_PKT_PRIOS; p++)
        port->quantum[p] = (guint64)cfg->weight[p] * unit;
    if (cfg->arb != NULL) {
        port->arb_mask[0] = arb_mask(cfg->arb->high, cfg->arb->nhigh);
        port->arb_mask[1] = arb_mask(cfg->arb->low, cfg->arb->nlow);
    }
    port->tx_ev = cs_evq_alloc(evq);
    port->tx_ev->kind = CS_PKT_EV_TX_DONE;
    port->tx_ev->a = id;
    port->arr_ev = cs_evq_alloc(evq);
    port->arr_ev->kind = CS_PKT_EV_ARRIVE;
    port->arr_ev->a = id;
    return port;
}

static void fifo_drain(fifo_t *f, cs_pkt_pool_t *pool)
{
    while (f->head != NULL)
        cs_pkt_release(pool, fifo_pop(f));
}

void cs_pkt_port_free(cs_pkt_port_t *port, cs_pkt_pool_t *pool)
{
    if (port == NULL)
        return;
    for (int p = 0; p < CS_PKT_PRIOS; p++)
        fifo_drain(&port->q[p], pool);
    fifo_drain(&port->ctrl, pool);
    fifo_drain(&port->wire, pool);
    cs_evq_cancel(port->evq, port->tx_ev);
    cs_evq_cancel(port->evq, port->arr_ev);
    cs_evq_release(port->evq, port->tx_ev);
    cs_evq_release(port->evq, port->arr_ev);
    g_free(port);
}

cs_time_t cs_pkt_port_ser_time(cs_pkt_port_t *port, guint32 wire)
{
    /* wire x 8 x 10^12 fits 64 bits for any frame below 2^20 bytes */
    g_return_val_if_fail(wire < (1u << 20), 0);
    guint64 num = (guint64)wire * 8u * 1000000000000ull, rate = port->cfg.rate_bps;
    guint64 ps = num / rate;
    port->ser_rem += num % rate;
    if (port->ser_rem >= rate) {
        port->ser_rem -= rate;
        ps++;
    }
    return (cs_time_t)ps;
}

static inline gboolean may_send(const cs_pkt_port_t *port, int p, cs_time_t now)
{
    return port->hooks->may_send == NULL || port->hooks->may_send(port->hooks_ctx, port, p, now);
}

/* Table t's (0 high, 1 low) next VL among 'ok', charging its entry the
 * head packet's bytes; -1 when none of its entries can send. Checks the
 * current entry, then each entry once: an entry left is entered afresh
 * with its full weight. */
static int arb_table(cs_pkt_port_t *port, int t, guint8 ok)
{
    const cs_pkt_arb_t *a = port->cfg.arb;
    const cs_pkt_arb_entry_t *e = t == 0 ? a->high : a->low;
    int n = t == 0 ? a->nhigh : a->nlow;
    for (int i = 0; i <= n && n > 0; i++) {
        const cs_pkt_arb_entry_t *x = &e[port->arb_idx[t]];
        if (x->weight > 0 && (ok >> x->vl & 1)) {
            if (!port->arb_in[t]) {
                port->arb_left[t] = (gint64)x->weight * 64;
                port->arb_in[t] = TRUE;
            }
            if (port->arb_left[t] > 0) {
                port->arb_left[t] -= port->q[x->vl].head->wire;
                return x->vl;
            }
        }
        port->arb_idx[t] = (port->arb_idx[t] + 1) % n;
        port->arb_in[t] = FALSE;
    }
    return -1;
}

/* VL arbitration (cs_pkt_port.h): the high table while it is within its
 * limit or the low table has nothing that may go, else the low table. */
static int pick_arb(cs_pkt_port_t *port, guint8 ok)
{
    const cs_pkt_arb_t *a = port->cfg.arb;
    gboolean high = (ok & port->arb_mask[0]) != 0, low = (ok & port->arb_mask[1]) != 0;
    gboolean limit_hit = a->high_limit != CS_PKT_ARB_UNLIMITED && port->arb_high_sent > 0 &&
                         port->arb_high_sent >= (guint64)a->high_limit * 4096;
    if (high && !(limit_hit && low)) {
        int vl = arb_table(port, 0, ok);
        port->arb_high_sent += port->q[vl].head->wire;
        return vl;
    }
    if (!low)
        return -1;
    port->arb_high_sent = 0;
    return arb_table(port, 1, ok);
}

/* The priority to serve next, or -1 when nothing may go. */
static int pick(cs_pkt_port_t *port, cs_time_t now)
{
    guint8 strict = port->cfg.strict;
    guint8 ok = 0;                    /* priorities with packets that may go now */
    for (int p = CS_PKT_PRIOS - 1; p >= 0; p--) {
        if (port->q[p].head == NULL || !may_send(port, p, now))
            continue;
        if (strict >> p & 1)
            return p;
        ok |= (guint8)(1u << p);
    }
    if (ok == 0)
        return -1;
    if (port->cfg.arb != NULL)
        return pick_arb(port, ok);
    /* Deficit round robin. A queue found empty forgets its deficit (it
     * was idle); a paused one keeps it and is skipped without a quantum.
     * Terminates: some queue is eligible and gains a quantum per round. */
    for (;;) {
        int p = port->drr_cur;
        if (!(strict >> p & 1)) {
            cs_pkt_t *head = port->q[p].head;
            if (head == NULL) {
                port->deficit[p] = 0;
            } else if (ok >> p & 1) {
                if (!port->drr_granted) {
                    port->deficit[p] += port->quantum[p];
                    port->drr_granted = TRUE;
                }
                if (head->wire <= port->deficit[p]) {
                    port->deficit[p] -= head->wire;
                    return p;
                }
            }
        }
        port->drr_cur = (p + 1) % CS_PKT_PRIOS;
        port->drr_granted = FALSE;
    }
}

/* Starts the next packet on an idle link, or leaves it idle. */
static void start(cs_pkt_port_t *port, cs_time_t now)
{
    cs_pkt_t *pkt;
    gboolean ctrl = port->ctrl.head != NULL;
    int p = -1;
    if (ctrl) {
        pkt = fifo_pop(&port->ctrl);  /* never flow-controlled, never marked */
        port->ctrl_pkts++;
    } else {
        p = pick(port, now);
        if (p < 0) {
            port->busy = FALSE;
            return;
        }
        q_account(port, p, now);
        pkt = fifo_pop(&port->q[p]);
        port->tx_bytes[p] += pkt->wire;
        port->tx_pkts[p]++;
    }
    port->busy = TRUE;                /* before the hook: what it enqueues waits */
    cs_time_t ser = cs_pkt_port_ser_time(port, pkt->wire);
    cs_evq_push(port->evq, port->tx_ev, now + ser);
    pkt->t = now + ser + port->cfg.prop_ps;
    if (!ctrl && port->hooks->dequeued != NULL)
        port->hooks->dequeued(port->hooks_ctx, port, pkt, now);
    fifo_push(&port->wire, pkt);
    if (!cs_evq_scheduled(port->arr_ev))
        cs_evq_push(port->evq, port->arr_ev, pkt->t);
}

void cs_pkt_port_enqueue(cs_pkt_port_t *port, cs_pkt_t *pkt, cs_time_t now)
{
    g_return_if_fail(pkt->prio < CS_PKT_PRIOS);
    fifo_t *q = &port->q[pkt->prio];
    q_account(port, pkt->prio, now);
    fifo_push(q, pkt);
    if (q->bytes > port->qmax[pkt->prio])
        port->qmax[pkt->prio] = q->bytes;
    if (!port->busy)
        start(port, now);
}

void cs_pkt_port_enqueue_ctrl(cs_pkt_port_t *port, cs_pkt_t *pkt, cs_time_t now)
{
    fifo_push(&port->ctrl, pkt);
    if (!port->busy)
        start(port, now);
}

void cs_pkt_port_kick(cs_pkt_port_t *port, cs_time_t now)
{
    if (!port->busy)
        start(port, now);
}

void cs_pkt_port_event(cs_pkt_port_t *port, cs_event_t *ev)
{
    cs_time_t now = ev->time;
    if (ev == port->tx_ev) {
        port->busy = FALSE;
        start(port, now);
        return;
    }
    g_return_if_fail(ev == port->arr_ev && port->wire.head != NULL);
    cs_pkt_t *pkt = fifo_pop(&port->wire);
    g_assert(pkt->t == now);
    /* rescheduled before delivering, so that anything the far end puts
     * on this same wire finds the event already scheduled */
    if (port->wire.head != NULL)
        cs_evq_push(port->evq, port->arr_ev, port->wire.head->t);
    port->deliver(port->deliver_ctx, port, pkt, now);
}

guint32 cs_pkt_port_flush(cs_pkt_port_t *port, int prio, cs_time_t now, cs_pkt_drop_fn drop, void *ctx)
{
    g_return_val_if_fail(prio >= 0 && prio < CS_PKT_PRIOS, 0);
    guint32 n = 0;
    q_account(port, prio, now);
    while (port->q[prio].head != NULL) {
        drop(ctx, fifo_pop(&port->q[prio]), now);
        n++;
    }
    return n;
}

const cs_pkt_t *cs_pkt_port_queue_head(const cs_pkt_port_t *port, int prio) { return port->q[prio].head; }

double cs_pkt_port_queue_avg(const cs_pkt_port_t *port, int prio, cs_time_t now)
{
    g_return_val_if_fail(prio >= 0 && prio < CS_PKT_PRIOS, 0);
    if (now <= 0)
        return 0;
    double area = port->qarea[prio] + (double)port->q[prio].bytes * (double)(now - port->qarea_t[prio]);
    return area / (double)now;
}

int cs_pkt_port_id(const cs_pkt_port_t *port) { return port->id; }
const cs_pkt_port_cfg_t *cs_pkt_port_cfg(const cs_pkt_port_t *port) { return &port->cfg; }
gboolean cs_pkt_port_busy(const cs_pkt_port_t *port) { return port->busy; }
guint64 cs_pkt_port_queue_bytes(const cs_pkt_port_t *port, int prio) { return port->q[prio].bytes; }
guint32 cs_pkt_port_queue_len(const cs_pkt_port_t *port, int prio) { return port->q[prio].len; }
guint64 cs_pkt_port_queue_max(const cs_pkt_port_t *port, int prio) { return port->qmax[prio]; }
guint64 cs_pkt_port_tx_bytes(const cs_pkt_port_t *port, int prio) { return port->tx_bytes[prio]; }
guint64 cs_pkt_port_tx_pkts(const cs_pkt_port_t *port, int prio) { return port->tx_pkts[prio]; }
guint64 cs_pkt_port_ctrl_pkts(const cs_pkt_port_t *port) { return port->ctrl_pkts; }
