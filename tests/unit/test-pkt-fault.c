/* The packet network's faults and their counters (issue #11): hosts'
 * receive paths and their stalls, the PFC watchdog, deadlock and stall
 * detection, per-link counters and the timeline sampler. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "sim/cs_pkt_net.h"

#define GBPS 1000000000ull
#define NS 1000                       /* ps */
#define US (1000 * NS)

/* a -> s -> b, 100G both hops, a->s 1000 ns, s->b 500 ns (100 m), links
 * back for pauses; s gets a 'buffer'-byte MMU (priority 3 lossless). */
typedef struct {
    cs_pkt_net_t *net;
    int a, s, b;
    int as, sb, bs, sa;
} chain_t;

static void chain_new_mask(chain_t *c, guint64 buffer, guint8 lossless)
{
    c->net = cs_pkt_net_new();
    c->a = cs_pkt_net_add_host(c->net);
    c->s = cs_pkt_net_add_switch(c->net);
    c->b = cs_pkt_net_add_host(c->net);
    cs_pkt_mmu_cfg_t mc;
    cs_pkt_mmu_cfg_init(&mc, buffer);
    mc.lossless = lossless;
    g_assert_cmpint(cs_pkt_net_set_buffer(c->net, c->s, &mc, -1), ==, 0);
    cs_pkt_port_cfg_t up, down;
    cs_pkt_port_cfg_init(&up, 100 * GBPS, 1000 * NS);
    cs_pkt_port_cfg_init(&down, 100 * GBPS, 500 * NS);
    c->as = cs_pkt_net_add_link(c->net, c->a, c->s, &up);
    c->sb = cs_pkt_net_add_link(c->net, c->s, c->b, &down);
    c->bs = cs_pkt_net_add_link(c->net, c->b, c->s, &down);
    c->sa = cs_pkt_net_add_link(c->net, c->s, c->a, &up);
}

static void chain_new(chain_t *c, guint64 buffer)
{
    chain_new_mask(c, buffer, 1u << 3);
}

/* One flow of n 4096-B packets (a WRITE: RETH on the first) from a to b. */
static int chain_flow(chain_t *c, guint64 npkts, int prio)
{
    cs_pkt_flow_cfg_t fc = { .bytes = npkts * 4096, .mtu = 4096, .prio = prio, .write = TRUE };
    int route[2] = { c->as, c->sb };
    return cs_pkt_net_add_flow(c->net, route, 2, &fc);
}

/* The first packet (4194 wire B) is at b at 335520 + 1 us + 335520 +
 * 500 ns = 2171040 ps. A 4096-B payload drains at 50 Gb/s in 655360 ps
 * (exact), slower than packets arrive (334240 ps apart at 100G), so the
 * receive path is never idle after that: the k-th drain starts at
 * 2171040 + k x 655360. */
#define FIRST_AT 2171040
#define DRAIN_50G 655360

/* Host b drains at 50 Gb/s: the flow completes as its last packet drains,
 * 2171040 + 400 x 655360 (the drain's 50 Gb/s exactly, not the link's
 * 100); the NIC pauses s->b (lossless priority 3) and never drops; its
 * buffer stays within 156096 B; the thresholds follow the rule (headroom
 * at 100G, 100 m for the largest frame, 4178 B without preamble and gap:
 * (4178 x 8 + 160 + 672 + 122880 + 201728 + 2 x 100 m x 5 ns x 100G +
 * 4178 x 8) / 8 = 61536 B; XOFF 156096 - 61536 = 94560; XON 94560 -
 * 4198, the largest frame on the wire = 90362). */
static void test_host_rx_rate(void)
{
    chain_t c;
    chain_new(&c, 1000000);
    g_assert_cmpint(cs_pkt_net_set_host_rx(c.net, c.b, 50e9, 0), ==, 0);
    guint64 xoff, xon;
    cs_pkt_net_host_rx_thresholds(c.net, c.b, &xoff, &xon);
    g_assert_cmpuint(cs_pkt_headroom_bytes(4178, 100 * GBPS, 100), ==, 61536);
    g_assert_cmpuint(xoff, ==, 94560);
    g_assert_cmpuint(xon, ==, 90362);
    int f = chain_flow(&c, 400, 3);
    cs_pkt_net_run(c.net, CS_TIME_NEVER);
    g_assert_cmpuint(cs_pkt_net_flow_delivered(c.net, f), ==, 400 * 4096);
    g_assert_cmpint(cs_pkt_net_flow_first(c.net, f), ==, FIRST_AT + DRAIN_50G);
    g_assert_cmpint(cs_pkt_net_flow_done(c.net, f), ==, FIRST_AT + 400 * (cs_time_t)DRAIN_50G);
    g_assert_cmpuint(cs_pkt_net_flow_dropped(c.net, f), ==, 0);
    cs_pkt_link_stats_t st;
    cs_pkt_net_link_stats(c.net, c.sb, 3, &st);
    g_assert_cmpuint(st.xoff_sent, >, 0);
    g_assert_cmpuint(st.pause_received, ==, st.xoff_sent + st.xon_sent);
    g_assert_cmpint(st.paused_ps, >, 0);
    g_assert_cmpuint(st.drops_buffer, ==, 0);
    g_assert_cmpuint(cs_pkt_net_host_rx_max(c.net, c.b), <=, 156096);
    g_assert_cmpuint(cs_pkt_net_host_rx_max(c.net, c.b), >=, xoff);
    g_assert_cmpuint(cs_pkt_net_host_rx_bytes(c.net, c.b, 3), ==, 0);
    g_assert_cmpuint(cs_pkt_pool_in_use(cs_pkt_net_pool(c.net)), ==, 0);
    g_assert_null(cs_pkt_net_deadlock(c.net));
    cs_pkt_net_free(c.net);
}

/* A host with a receive path at the link's own rate changes nothing but
 * the drain time of each packet; without one, delivery is at arrival. */
static void test_host_rx_unset(void)
{
    chain_t c;
    chain_new(&c, 1000000);
    int f = chain_flow(&c, 10, 3);
    cs_pkt_net_run(c.net, CS_TIME_NEVER);
    g_assert_cmpint(cs_pkt_net_flow_first(c.net, f), ==, FIRST_AT);
    cs_pkt_net_free(c.net);
    /* a bad configuration: a buffer below headroom + the largest frame */
    chain_new(&c, 1000000);
    g_assert_cmpint(cs_pkt_net_set_host_rx(c.net, c.b, 50e9, 61536 + 4197), ==, -1);
    g_assert_cmpint(cs_pkt_net_set_host_rx(c.net, c.b, 50e9, 61536 + 4198), ==, 0);
    /* misuse: twice, or on a switch */
    g_test_expect_message(G_LOG_DOMAIN, G_LOG_LEVEL_CRITICAL, "*n->rx == NULL*");
    g_assert_cmpint(cs_pkt_net_set_host_rx(c.net, c.b, 50e9, 0), ==, -1);
    g_test_expect_message(G_LOG_DOMAIN, G_LOG_LEVEL_CRITICAL, "*n->host*");
    g_assert_cmpint(cs_pkt_net_set_host_rx(c.net, c.s, 50e9, 0), ==, -1);
    g_test_assert_expected_messages();
    cs_pkt_net_free(c.net);
}

/* Lossy priority 1 into a 20000-B receive buffer drained at 50 Gb/s (no
 * lossless priority at the switch, so the NIC has none: a buffer below
 * the headroom is fine): drops at full, never pauses; what is not
 * dropped arrives. */
static void test_host_rx_lossy(void)
{
    chain_t c;
    chain_new_mask(&c, 1000000, 0);
    g_assert_cmpint(cs_pkt_net_set_host_rx(c.net, c.b, 50e9, 20000), ==, 0);
    const guint64 n = 200;
    int f = chain_flow(&c, n, 1);
    cs_pkt_net_run(c.net, CS_TIME_NEVER);
    guint64 drops = cs_pkt_net_host_rx_drops(c.net, c.b, 1);
    cs_pkt_link_stats_t st;
    cs_pkt_net_link_stats(c.net, c.sb, 1, &st);
    g_assert_cmpuint(st.xoff_sent, ==, 0);
    g_assert_cmpuint(st.drops_buffer, ==, drops);
    g_assert_cmpuint(cs_pkt_net_flow_dropped(c.net, f), ==, drops);
    g_assert_cmpuint(cs_pkt_net_flow_delivered(c.net, f), ==, (n - drops) * 4096);
    /* arrivals every 334240 ps from 2171040 to 2171040 + 199 x 334240 =
     * 68684800; drains every 655360 from 2171040: about 102 drained by
     * then, plus what the buffer (4 packets of 4178 B) holds */
    guint64 kept = n - drops;
    g_assert_cmpuint(kept, >=, (199 * 334240) / DRAIN_50G);
    g_assert_cmpuint(kept, <=, (199 * 334240) / DRAIN_50G + 6);
    g_assert_cmpuint(cs_pkt_net_host_rx_max(c.net, c.b), <=, 20000);
    cs_pkt_net_free(c.net);
}

/* b's receive path stalls in [10 us, 60 us): drains 0..10 start at
 * 2171040 + k x 655360 and end by 10 us (the 11th would end at
 * 9380000 + 655360 > 10 us, so it waits); then it is never idle again:
 * done at 60 us + 389 x 655360. The NIC pauses s->b, the switch's buffer
 * fills and pauses a->s (hop by hop); nothing is lost. */
static void test_host_stall(void)
{
    chain_t c;
    chain_new(&c, 1000000);
    g_test_expect_message(G_LOG_DOMAIN, G_LOG_LEVEL_CRITICAL, "*rx != NULL*");   /* no receive path yet */
    g_assert_cmpint(cs_pkt_net_host_stall(c.net, c.b, 10 * US, 60 * US), ==, -1);
    g_test_assert_expected_messages();
    g_assert_cmpint(cs_pkt_net_set_host_rx(c.net, c.b, 50e9, 0), ==, 0);
    g_assert_cmpint(cs_pkt_net_host_stall(c.net, c.b, 10 * US, 60 * US), ==, 0);
    int f = chain_flow(&c, 400, 3);
    cs_pkt_net_run(c.net, CS_TIME_NEVER);
    g_assert_cmpuint(cs_pkt_net_flow_delivered(c.net, f), ==, 400 * 4096);
    g_assert_cmpint(cs_pkt_net_flow_done(c.net, f), ==, 60 * US + 389 * (cs_time_t)DRAIN_50G);
    g_assert_cmpuint(cs_pkt_net_flow_dropped(c.net, f), ==, 0);
    cs_pkt_link_stats_t sb, as;
    cs_pkt_net_link_stats(c.net, c.sb, 3, &sb);
    cs_pkt_net_link_stats(c.net, c.as, 3, &as);
    g_assert_cmpuint(sb.xoff_sent, >, 0);
    g_assert_cmpuint(as.xoff_sent, >, 0);
    g_assert_cmpint(as.paused_ps, >, 0);
    g_assert_null(cs_pkt_net_deadlock(c.net));
    cs_pkt_net_free(c.net);
}


/* ---- a receive path that stops for good: the PFC storm lab ----------- */

typedef struct {
    int calls;
    cs_pkt_deadlock_t dl;
} dl_log_t;

static void dl_hook(void *ctx, const cs_pkt_deadlock_t *dl)
{
    dl_log_t *l = ctx;
    l->calls++;
    l->dl = *dl;
}

/* b stops draining at 10 us for good (drains 0..10 done, as in
 * /pkt-fault/host/stall): its NIC pauses s->b, s pauses a->s, and then
 * only pause refreshes would run. The run returns, the net says it has
 * nothing left (next: NEVER), and the stall is reported once: priority
 * 3, the chain a->s, s->b paused for good, host b. */
static void test_stall_forever(void)
{
    chain_t c;
    chain_new(&c, 1000000);
    dl_log_t log = { 0 };
    cs_pkt_net_set_deadlock_hook(c.net, dl_hook, &log);
    g_assert_cmpint(cs_pkt_net_set_host_rx(c.net, c.b, 50e9, 0), ==, 0);
    g_assert_cmpint(cs_pkt_net_host_stall(c.net, c.b, 10 * US, CS_TIME_NEVER), ==, 0);
    int f = chain_flow(&c, 400, 3);
    cs_pkt_net_run(c.net, CS_TIME_NEVER);
    g_assert_cmpint(cs_pkt_net_next(c.net), ==, CS_TIME_NEVER);
    g_assert_cmpuint(cs_pkt_net_flow_delivered(c.net, f), ==, 11 * 4096);
    g_assert_cmpuint(cs_pkt_net_flow_dropped(c.net, f), ==, 0);
    const cs_pkt_deadlock_t *dl = cs_pkt_net_deadlock(c.net);
    g_assert_nonnull(dl);
    g_assert_cmpint(log.calls, ==, 1);
    g_assert_cmpint(dl->kind, ==, CS_PKT_STUCK_STALL);
    g_assert_cmpint(dl->prio, ==, 3);
    g_assert_cmpint(dl->host, ==, c.b);
    g_assert_cmpint(dl->nlinks, ==, 2);
    g_assert_cmpint(dl->links[0], ==, c.as);
    g_assert_cmpint(dl->links[1], ==, c.sb);
    g_assert_cmpint(dl->nodes[0], ==, c.a);
    g_assert_cmpint(dl->nodes[1], ==, c.s);
    g_assert_cmpint(dl->detected, >, 10 * US);
    g_assert_cmpint(dl->detected, <, 2000 * US);
    g_assert_cmpint(cs_pkt_net_link_state(c.net, c.sb, 3), ==, CS_PKT_LINK_PAUSED);
    g_assert_cmpint(cs_pkt_net_link_state(c.net, c.as, 3), ==, CS_PKT_LINK_PAUSED);
    /* a later run to a finite time goes on refreshing the pauses */
    cs_pkt_link_stats_t before, after;
    cs_pkt_net_link_stats(c.net, c.sb, 3, &before);
    cs_pkt_net_run(c.net, dl->detected + 1000 * US);
    cs_pkt_net_link_stats(c.net, c.sb, 3, &after);
    g_assert_cmpuint(after.xoff_sent, >, before.xoff_sent);
    g_assert_cmpint(log.calls, ==, 1);
    cs_pkt_net_free(c.net);
}

/* The same with s's PFC watchdog (detection 100 us, restoration 1 ms:
 * longer than the NIC's pause refresh, 167.77 us at 100G, else the
 * watchdog would restore between two refreshes and trip again): s->b
 * trips once and drops
 * what it holds and what comes for it; a->s runs again; b's buffer
 * keeps what it had, its NIC pausing for ever: the run returns with the
 * stall reported (no link paused for good: the watchdog ignores the
 * pauses). Every packet is delivered, dropped, or held by b. */
static void test_stall_watchdog(void)
{
    chain_t c;
    chain_new(&c, 1000000);
    cs_pkt_pfc_cfg_t pc;
    cs_pkt_pfc_cfg_init(&pc);
    pc.watchdog_ps = 100 * US;
    pc.watchdog_restore_ps = 1000 * US;
    cs_pkt_net_set_pfc(c.net, &pc);
    g_assert_cmpint(cs_pkt_net_set_host_rx(c.net, c.b, 50e9, 0), ==, 0);
    g_assert_cmpint(cs_pkt_net_host_stall(c.net, c.b, 10 * US, CS_TIME_NEVER), ==, 0);
    int f = chain_flow(&c, 400, 3);
    cs_pkt_net_run(c.net, CS_TIME_NEVER);
    g_assert_cmpint(cs_pkt_net_next(c.net), ==, CS_TIME_NEVER);
    cs_pkt_link_stats_t sb;
    cs_pkt_net_link_stats(c.net, c.sb, 3, &sb);
    g_assert_cmpuint(sb.watchdog_trips, ==, 1);
    g_assert_cmpuint(sb.drops_watchdog, >, 0);
    g_assert_cmpuint(sb.drops_watchdog, ==, cs_pkt_net_flow_dropped(c.net, f));
    g_assert_cmpint(cs_pkt_net_link_state(c.net, c.sb, 3), ==, CS_PKT_LINK_STORMED);
    g_assert_cmpint(cs_pkt_net_link_state(c.net, c.as, 3), ==, CS_PKT_LINK_RUNNING);
    g_assert_cmpuint(cs_pkt_net_flow_delivered(c.net, f), ==, 11 * 4096);
    guint64 held = cs_pkt_net_host_rx_bytes(c.net, c.b, 3);
    g_assert_cmpuint(held % 4178, ==, 0);
    g_assert_cmpuint(11 + cs_pkt_net_flow_dropped(c.net, f) + held / 4178, ==, 400);
    const cs_pkt_deadlock_t *dl = cs_pkt_net_deadlock(c.net);
    g_assert_nonnull(dl);
    g_assert_cmpint(dl->kind, ==, CS_PKT_STUCK_STALL);
    g_assert_cmpint(dl->host, ==, c.b);
    g_assert_cmpint(dl->nlinks, ==, 0);
    cs_pkt_net_free(c.net);
}

/* ---- a sampler that changes nothing ----------------------------------- */

typedef struct {
    cs_pkt_net_t *net;
    int link;
    guint64 n, paused, stormed;
    cs_time_t first, last;
} sample_log_t;

static void sample(void *ctx, cs_time_t now)
{
    sample_log_t *l = ctx;
    if (l->n++ == 0)
        l->first = now;
    l->last = now;
    g_assert_cmpint(cs_pkt_net_now(l->net), ==, now);
    cs_pkt_link_state_t st = cs_pkt_net_link_state(l->net, l->link, 3);
    l->paused += st == CS_PKT_LINK_PAUSED;
    l->stormed += st == CS_PKT_LINK_STORMED;
}

typedef struct {
    guint64 events, delivered, dropped;
    cs_time_t done, end;
    cs_pkt_link_stats_t sb, as;
} stall_run_t;

/* b stalls in [10 us, until); with a watchdog when wd > 0 (restoration
 * 1 ms). */
static void stall_run(cs_time_t until, cs_time_t wd, sample_log_t *log, stall_run_t *r)
{
    chain_t c;
    chain_new(&c, 1000000);
    if (wd > 0) {
        cs_pkt_pfc_cfg_t pc;
        cs_pkt_pfc_cfg_init(&pc);
        pc.watchdog_ps = wd;
        pc.watchdog_restore_ps = 1000 * US;
        cs_pkt_net_set_pfc(c.net, &pc);
    }
    g_assert_cmpint(cs_pkt_net_set_host_rx(c.net, c.b, 50e9, 0), ==, 0);
    g_assert_cmpint(cs_pkt_net_host_stall(c.net, c.b, 10 * US, until), ==, 0);
    if (log != NULL) {
        log->net = c.net;
        log->link = c.sb;
        cs_pkt_net_set_sampler(c.net, 1 * US, sample, log);
    }
    int f = chain_flow(&c, 400, 3);
    memset(r, 0, sizeof *r);
    r->events = cs_pkt_net_run(c.net, CS_TIME_NEVER);
    g_assert_cmpint(cs_pkt_net_next(c.net), ==, CS_TIME_NEVER);
    r->delivered = cs_pkt_net_flow_delivered(c.net, f);
    r->dropped = cs_pkt_net_flow_dropped(c.net, f);
    r->done = cs_pkt_net_flow_done(c.net, f);
    r->end = cs_pkt_net_now(c.net);
    cs_pkt_net_link_stats(c.net, c.sb, 3, &r->sb);
    cs_pkt_net_link_stats(c.net, c.as, 3, &r->as);
    cs_pkt_net_free(c.net);
}

/* The stall of /pkt-fault/host/stall sampled every 1 us: the same events
 * and counters as without; a packet is alive from 0 to the last drain
 * (done, 314935040 ps), so samples at 1, 2, ... 314 us: 314 of them; s->b
 * is seen paused during the stall. */
static void test_sampler(void)
{
    stall_run_t r0, r1;
    sample_log_t log = { 0 };
    stall_run(60 * US, 0, NULL, &r0);
    stall_run(60 * US, 0, &log, &r1);
    g_assert_cmpmem(&r0, sizeof r0, &r1, sizeof r1);
    g_assert_cmpint(r1.done, ==, 314935040);
    g_assert_cmpuint(log.n, ==, 314);
    g_assert_cmpint(log.first, ==, 1 * US);
    g_assert_cmpint(log.last, ==, 314 * US);
    g_assert_cmpuint(log.paused, >, 40);
    g_assert_cmpuint(log.stormed, ==, 0);
    /* an idle net with a sampler has nothing to run */
    g_autoptr(cs_pkt_net_t) idle = cs_pkt_net_new();
    sample_log_t none = { .net = idle };
    cs_pkt_net_set_sampler(idle, 1 * US, sample, &none);
    g_assert_cmpint(cs_pkt_net_next(idle), ==, CS_TIME_NEVER);
    g_assert_cmpuint(cs_pkt_net_run(idle, CS_TIME_NEVER), ==, 0);
    g_assert_cmpuint(none.n, ==, 0);
}

/* A stall of [10 us, 400 us) with a 100-us watchdog at s: s->b trips
 * once (the NIC's pause holds it from ~10 us), is seen stormed, drops;
 * after the stall the NIC lets s->b go (XON) and, 1 ms without a pause
 * later, the watchdog restores it: the run ends no earlier. Every packet
 * is delivered or dropped. */
static void test_watchdog_restore(void)
{
    stall_run_t r;
    sample_log_t log = { 0 };
    stall_run(400 * US, 100 * US, &log, &r);
    g_assert_cmpuint(r.sb.watchdog_trips, ==, 1);
    g_assert_cmpuint(r.sb.drops_watchdog, >, 0);
    g_assert_cmpuint(r.dropped, ==, r.sb.drops_watchdog);
    g_assert_cmpuint(r.delivered + r.dropped * 4096, ==, 400 * 4096);
    g_assert_cmpuint(log.stormed, >, 100);
    g_assert_cmpuint(log.paused, >, 50);
    g_assert_cmpuint(r.sb.xon_sent, >, 0);
    g_assert_cmpuint(r.sb.pause_received, ==, r.sb.xoff_sent + r.sb.xon_sent);
    /* a pause-free spell of 100 us after the last frame ended the storm */
    g_assert_cmpint(r.end, >=, 400 * US + 1000 * US);
}

/* ---- counters, exact ---------------------------------------------------- */

/* Two packets a -> s -> b (4194 and 4178 wire B): the second waits in
 * a's queue while the first serializes (335520 ps), and 1280 ps at s (it
 * arrives at 1335520 + 334240 = 1669760, the first leaves s->b at
 * 1335520 + 335520 = 1671040). The run ends as it reaches b: 1671040 +
 * 334240 + 500 ns = 2505280. Time-averages over [0, 2505280]; maxima
 * count the first packet, queued and started at the same instant. */
static void test_counters(void)
{
    chain_t c;
    chain_new(&c, 1000000);
    int f = chain_flow(&c, 2, 3);
    g_assert_cmpfloat(cs_pkt_net_qp_rate(c.net, f), ==, 100e9);
    cs_pkt_net_qp_set_rate(c.net, f, 25e9, 0);
    g_assert_cmpfloat(cs_pkt_net_qp_rate(c.net, f), ==, 25e9);
    cs_pkt_net_qp_set_rate(c.net, f, 0, 0);
    cs_pkt_net_run(c.net, CS_TIME_NEVER);
    const double end = 2505280;
    g_assert_cmpint(cs_pkt_net_now(c.net), ==, (cs_time_t)end);
    cs_pkt_link_stats_t as, sb;
    cs_pkt_net_link_stats(c.net, c.as, 3, &as);
    cs_pkt_net_link_stats(c.net, c.sb, 3, &sb);
    g_assert_cmpuint(as.tx_pkts, ==, 2);
    g_assert_cmpuint(as.tx_bytes, ==, 4194 + 4178);
    g_assert_cmpuint(as.queue_max, ==, 4194);
    g_assert_cmpfloat(fabs(as.queue_avg - 4178.0 * 335520 / end), <, 1e-9);
    g_assert_cmpuint(sb.queue_max, ==, 4194);
    g_assert_cmpfloat(fabs(sb.queue_avg - 4178.0 * 1280 / end), <, 1e-9);
    guint64 max;
    double avg;
    cs_pkt_net_switch_buffer(c.net, c.s, &max, &avg);
    g_assert_cmpuint(max, ==, 4194);
    g_assert_cmpfloat(fabs(avg - 4178.0 * 1280 / end), <, 1e-9);
    g_assert_cmpuint(as.xoff_sent + as.pause_received + as.drops_buffer + as.drops_watchdog, ==, 0);
    cs_pkt_net_switch_buffer(c.net, c.a, &max, &avg);   /* a host: no buffer */
    g_assert_cmpuint(max, ==, 0);
    cs_pkt_net_free(c.net);
}

/* ---- deadlock: a cyclic buffer dependency ------------------------------ */

/* Switches s0, s1, s2 in a ring (clockwise links s_i -> s_i+1 and the
 * links back, for pauses), host h_i on s_i, all 100G with 100 ns cables,
 * 400 KB buffers, priority 3 lossless. Flow i goes h_i -> s_i -> s_i+1
 * -> s_i+2 -> h_i+2: two hops clockwise, so each ring link carries a
 * flow that entered at its switch and one in transit, and each transit
 * packet waits on the next ring link: the classic cyclic dependency
 * (fabric-models.md section 3, [RAS]). */
typedef struct {
    guint64 delivered[3], dropped[3], trips, wd_drops;
    guint64 events;
    int cw[3];                        /* s_i -> s_i+1 */
    int sw[3];
    gboolean stopped;
    cs_pkt_deadlock_t dl;
    int dl_links[3], dl_nodes[3];
    int hook_calls;
} ring_t;

static void ring_run(cs_time_t watchdog, ring_t *r)
{
    memset(r, 0, sizeof *r);
    g_autoptr(cs_pkt_net_t) net = cs_pkt_net_new();
    if (watchdog > 0) {
        cs_pkt_pfc_cfg_t pc;
        cs_pkt_pfc_cfg_init(&pc);
        pc.watchdog_ps = watchdog;
        cs_pkt_net_set_pfc(net, &pc);
    }
    int h[3], in[3], out[3];
    for (int i = 0; i < 3; i++)
        r->sw[i] = cs_pkt_net_add_switch(net);
    for (int i = 0; i < 3; i++)
        h[i] = cs_pkt_net_add_host(net);
    cs_pkt_mmu_cfg_t mc;
    cs_pkt_mmu_cfg_init(&mc, 400000);
    for (int i = 0; i < 3; i++)
        g_assert_cmpint(cs_pkt_net_set_buffer(net, r->sw[i], &mc, -1), ==, 0);
    cs_pkt_port_cfg_t pc;
    cs_pkt_port_cfg_init(&pc, 100 * GBPS, 100 * NS);
    for (int i = 0; i < 3; i++) {
        in[i] = cs_pkt_net_add_link(net, h[i], r->sw[i], &pc);
        out[i] = cs_pkt_net_add_link(net, r->sw[i], h[i], &pc);
    }
    for (int i = 0; i < 3; i++)
        r->cw[i] = cs_pkt_net_add_link(net, r->sw[i], r->sw[(i + 1) % 3], &pc);
    for (int i = 0; i < 3; i++)
        cs_pkt_net_add_link(net, r->sw[(i + 1) % 3], r->sw[i], &pc);
    dl_log_t log = { 0 };
    cs_pkt_net_set_deadlock_hook(net, dl_hook, &log);
    cs_pkt_flow_cfg_t fc = { .bytes = 40000 * 4096, .mtu = 4096, .prio = 3, .write = TRUE };
    int f[3];
    for (int i = 0; i < 3; i++) {
        int route[4] = { in[i], r->cw[i], r->cw[(i + 1) % 3], out[(i + 2) % 3] };
        f[i] = cs_pkt_net_add_flow(net, route, 4, &fc);
    }
    r->events = cs_pkt_net_run(net, CS_TIME_NEVER);
    g_assert_cmpint(cs_pkt_net_next(net), ==, CS_TIME_NEVER);
    for (int i = 0; i < 3; i++) {
        r->delivered[i] = cs_pkt_net_flow_delivered(net, f[i]);
        r->dropped[i] = cs_pkt_net_flow_dropped(net, f[i]);
        cs_pkt_link_stats_t st;
        cs_pkt_net_link_stats(net, r->cw[i], 3, &st);
        r->trips += st.watchdog_trips;
        r->wd_drops += st.drops_watchdog;
    }
    const cs_pkt_deadlock_t *dl = cs_pkt_net_deadlock(net);
    r->stopped = dl != NULL;
    r->hook_calls = log.calls;
    if (dl != NULL) {
        r->dl = *dl;
        g_assert_cmpint(dl->nlinks, <=, 3);
        memcpy(r->dl_links, dl->links, (gsize)dl->nlinks * sizeof(int));
        memcpy(r->dl_nodes, dl->nodes, (gsize)dl->nlinks * sizeof(int));
        r->dl.links = r->dl.nodes = NULL;
    }
    g_test_message("ring, watchdog %.0f us: %s at %.1f us, delivered %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT
                   "/%" G_GUINT64_FORMAT ", dropped %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT
                   ", trips %" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT " events",
                   watchdog / 1e6, dl == NULL ? "no deadlock" : "deadlock", dl != NULL ? dl->detected / 1e6 : 0.0,
                   r->delivered[0], r->delivered[1], r->delivered[2], r->dropped[0], r->dropped[1], r->dropped[2],
                   r->trips, r->events);
}

/* Without a watchdog the ring deadlocks: the net stops, reporting the
 * three clockwise links in order from the lowest id (s0->s1, s1->s2,
 * s2->s0), their switches, priority 3, and a time at least the
 * detection time (1 ms) after the start; the hook ran once. No flow
 * completed and nothing was dropped (lossless). */
static void test_deadlock_ring(void)
{
    ring_t r;
    ring_run(0, &r);
    g_assert_true(r.stopped);
    g_assert_cmpint(r.hook_calls, ==, 1);
    g_assert_cmpint(r.dl.kind, ==, CS_PKT_STUCK_CYCLE);
    g_assert_cmpint(r.dl.prio, ==, 3);
    g_assert_cmpint(r.dl.host, ==, -1);
    g_assert_cmpint(r.dl.nlinks, ==, 3);
    for (int i = 0; i < 3; i++) {
        g_assert_cmpint(r.dl_links[i], ==, r.cw[i]);
        g_assert_cmpint(r.dl_nodes[i], ==, r.sw[i]);
        g_assert_cmpuint(r.delivered[i], <, 40000ull * 4096);
        g_assert_cmpuint(r.dropped[i], ==, 0);
    }
    g_assert_cmpint(r.dl.detected, >=, CS_PKT_PFC_DEADLOCK_DEFAULT);
    ring_t again;
    ring_run(0, &again);
    g_assert_cmpmem(&r, sizeof r, &again, sizeof again);
}

/* With a 200-us watchdog at every switch the same ring never stops: the
 * stormed ring links drop instead, every packet is delivered or dropped,
 * and no deadlock is reported. */
static void test_deadlock_ring_watchdog(void)
{
    ring_t r;
    ring_run(200 * US, &r);
    g_assert_false(r.stopped);
    g_assert_cmpuint(r.trips, >, 0);
    g_assert_cmpuint(r.wd_drops, >, 0);
    for (int i = 0; i < 3; i++)
        g_assert_cmpuint(r.delivered[i] + r.dropped[i] * 4096, ==, 40000ull * 4096);
}

/* ---- the pool's limit (the engine's memory guard) --------------------- */

/* b stops draining from 0 to 1 ms; a sends 20000 packets into a switch
 * with a 1 GB buffer. Without a limit they queue (b's NIC pauses s->b; a
 * pauses only when the queue reaches alpha x free, about 110 MB, which
 * 20000 packets (84 MB of wire) never do) and all arrive after the stall.
 * With a limit of 2000 packets the net stops as the pool passes it: fewer
 * packets delivered, the net says it overflowed, and it does not run
 * again. */
static void pool_limit_run(gsize limit, guint64 *delivered_p, gboolean *overflow_p, gsize *cap_p)
{
    chain_t c;
    chain_new(&c, 1000000000);
    g_assert_cmpint(cs_pkt_net_set_host_rx(c.net, c.b, 100e9, 0), ==, 0);
    g_assert_cmpint(cs_pkt_net_host_stall(c.net, c.b, 0, 1000 * US), ==, 0);
    cs_pkt_net_set_pool_limit(c.net, limit);
    int f = chain_flow(&c, 20000, 3);
    cs_pkt_net_run(c.net, CS_TIME_NEVER);
    *overflow_p = cs_pkt_net_overflowed(c.net);
    if (*overflow_p) {
        guint64 ev = cs_pkt_net_run(c.net, CS_TIME_NEVER);   /* stopped for good */
        g_assert_cmpuint(ev, ==, 0);
    }
    *delivered_p = cs_pkt_net_flow_delivered(c.net, f);
    *cap_p = cs_pkt_pool_capacity(cs_pkt_net_pool(c.net));
    cs_pkt_net_free(c.net);
}

static void test_pool_limit(void)
{
    guint64 deliv;
    gboolean over;
    gsize cap;
    pool_limit_run(0, &deliv, &over, &cap);
    g_assert_false(over);
    g_assert_cmpuint(deliv, ==, 20000ull * 4096);
    g_assert_cmpuint(cap, >, 2000);
    pool_limit_run(2000, &deliv, &over, &cap);
    g_assert_true(over);
    g_assert_cmpuint(deliv, ==, 0);            /* stopped inside the stall */
    g_assert_cmpuint(cap, >, 2000);
    g_assert_cmpuint(cap, <, 2000 + 2048);     /* within 1024 events: a block or two more */
}

/* ---- when a QP would run out of retries ------------------------------- */

static void fail_hook(void *ctx, int qp, cs_time_t now)
{
    (void)qp;
    *(cs_time_t *)ctx = now;
}

/* A QP (ACK per packet, timeout 4.096 us x 2^8 = 1048576 ns, 3 retries)
 * a -> s -> b; b stops draining at 20 us for good, so from then on no
 * ACK comes back after the last packets in flight. cs_pkt_net_qp_fail_at, asked at 100 us (before any
 * timeout), says when the QP fails: its timer's deadline (last ACK + T)
 * plus 3 more timeouts; running on, the QP's 'failed' hook fires then. */
static void test_qp_fail_at(void)
{
    chain_t c;
    chain_new(&c, 100000000);
    g_assert_cmpint(cs_pkt_net_set_host_rx(c.net, c.b, 100e9, 0), ==, 0);
    g_assert_cmpint(cs_pkt_net_host_stall(c.net, c.b, 20 * US, CS_TIME_NEVER), ==, 0);
    cs_time_t failed = -1;
    static const cs_pkt_qp_hooks_t hooks = { NULL, NULL, fail_hook };
    cs_pkt_net_set_qp_hooks(c.net, &hooks, &failed);
    cs_pkt_qp_cfg_t qc = { .mtu = 4096, .prio = 3, .ack_interval = 1, .timeout = CS_PKT_QP_TIMEOUT_PS(8),
                           .retry_cnt = 3 };
    int route[2] = { c.as, c.sb };
    int qp = cs_pkt_net_add_qp(c.net, route, 2, &qc);
    g_assert_cmpint(cs_pkt_net_qp_fail_at(c.net, qp), ==, CS_TIME_NEVER);   /* nothing out */
    cs_pkt_net_qp_post(c.net, qp, 4096ull * 4000, 0);
    cs_pkt_net_run(c.net, 100 * US);
    cs_time_t predicted = cs_pkt_net_qp_fail_at(c.net, qp);
    g_assert_cmpint(cs_pkt_net_qp_timeouts(c.net, qp), ==, 0);
    /* the last ACK came after the first packet and soon after the stall
     * began (the packets on the wire and in the NIC's headroom are still
     * accepted and acknowledged) */
    g_assert_cmpint(predicted, >, 4 * CS_PKT_QP_TIMEOUT_PS(8));
    g_assert_cmpint(predicted, <=, 25 * US + 4 * CS_PKT_QP_TIMEOUT_PS(8));
    cs_pkt_net_run(c.net, CS_TIME_NEVER);
    g_assert_true(cs_pkt_net_qp_failed(c.net, qp));
    g_assert_cmpint(failed, ==, predicted);
    g_assert_cmpint(cs_pkt_net_qp_fail_at(c.net, qp), ==, CS_TIME_NEVER);  /* failed */
    cs_pkt_net_free(c.net);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/pkt-fault/host/rx-rate", test_host_rx_rate);
    g_test_add_func("/pkt-fault/host/rx-unset", test_host_rx_unset);
    g_test_add_func("/pkt-fault/host/rx-lossy", test_host_rx_lossy);
    g_test_add_func("/pkt-fault/host/stall", test_host_stall);
    g_test_add_func("/pkt-fault/stall/forever", test_stall_forever);
    g_test_add_func("/pkt-fault/stall/watchdog", test_stall_watchdog);
    g_test_add_func("/pkt-fault/watchdog/restore", test_watchdog_restore);
    g_test_add_func("/pkt-fault/sampler", test_sampler);
    g_test_add_func("/pkt-fault/counters", test_counters);
    g_test_add_func("/pkt-fault/deadlock/ring", test_deadlock_ring);
    g_test_add_func("/pkt-fault/deadlock/ring-watchdog", test_deadlock_ring_watchdog);
    g_test_add_func("/pkt-fault/pool-limit", test_pool_limit);
    g_test_add_func("/pkt-fault/qp-fail-at", test_qp_fail_at);
    return g_test_run();
}
