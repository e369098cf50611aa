/* The packet engine's foundation (issue #11, part 1): RoCEv2 framing,
 * ports (strict priority, deficit round robin, serialization and
 * propagation), the packet pool, a minimal network, the switch MMU and
 * PFC. */
#include "config.h"

#include <math.h>

#include "sim/cs_pkt.h"
#include "sim/cs_pkt_dcqcn.h"
#include "sim/cs_pkt_ecn.h"
#include "sim/cs_pkt_frame.h"
#include "sim/cs_pkt_mmu.h"
#include "sim/cs_pkt_net.h"
#include "sim/cs_pkt_pfc.h"
#include "sim/cs_pkt_port.h"

#define GBPS 1000000000ull
#define NS 1000                       /* ps */

/* fabric-models.md section 4, goodput over MAC rate in percent. */
static void test_frame_table(void)
{
    static const struct { guint32 mtu; double roce, vlan, reth, ib, ib_grh; } table[] = {
        { 1024, 92.59, 92.25, 91.27, 97.5, 93.9 },
        { 2048, 96.15, 95.97, 95.43, 98.75, 96.9 },
        { 4096, 98.04, 97.94, 97.66, 99.37, 98.4 },
    };
    cs_pkt_frame_t plain = { .vlan = FALSE }, vlan = { .vlan = TRUE };
    /* IB: LRH + BTH + ICRC + VCRC; a VLAN setting means nothing there */
    cs_pkt_frame_t ib = { .ib = TRUE, .vlan = TRUE }, ib_grh = { .ib = TRUE, .grh = TRUE };
    g_assert_cmpuint(CS_PKT_IB_OVERHEAD, ==, 26);
    g_assert_cmpuint(CS_PKT_ROCE_OVERHEAD, ==, 82);
    for (gsize i = 0; i < G_N_ELEMENTS(table); i++) {
        guint32 mtu = table[i].mtu;
        g_assert_cmpfloat_with_epsilon(100 * cs_pkt_frame_goodput(&plain, mtu, CS_PKT_HDR_MIDDLE),
                                       table[i].roce, 0.01);
        g_assert_cmpfloat_with_epsilon(100 * cs_pkt_frame_goodput(&vlan, mtu, CS_PKT_HDR_MIDDLE),
                                       table[i].vlan, 0.01);
        g_assert_cmpfloat_with_epsilon(100 * cs_pkt_frame_goodput(&plain, mtu,
                                                                  CS_PKT_HDR_WRITE_FIRST),
                                       table[i].reth, 0.01);
        /* the table's IB columns are rounded to 0.05 */
        g_assert_cmpfloat_with_epsilon(100 * cs_pkt_frame_goodput(&ib, mtu, CS_PKT_HDR_MIDDLE), table[i].ib, 0.05);
        g_assert_cmpfloat_with_epsilon(100 * cs_pkt_frame_goodput(&ib_grh, mtu, CS_PKT_HDR_MIDDLE),
                                       table[i].ib_grh, 0.05);
    }
    g_assert_cmpuint(cs_pkt_frame_overhead(&ib, CS_PKT_HDR_ACK), ==, 30);
    /* 400 Gb/s at 4096 -> 392.2 Gb/s in fabric-models.md, which is 400 x
     * the rounded 98.04%; exactly 400 x 4096 / 4178 = 392.149 */
    g_assert_cmpfloat_with_epsilon(400 * cs_pkt_frame_goodput(&plain, 4096, CS_PKT_HDR_MIDDLE),
                                   392.149, 0.001);
    g_assert_cmpuint(cs_pkt_frame_overhead(&plain, CS_PKT_HDR_ACK), ==, 86);
}

static void test_frame_segment(void)
{
    cs_pkt_frame_t f = { .vlan = FALSE };
    g_assert_cmpuint(cs_pkt_frame_npkts(10000, 4096), ==, 3);
    g_assert_cmpuint(cs_pkt_frame_npkts(8192, 4096), ==, 2);
    g_assert_cmpuint(cs_pkt_frame_npkts(0, 1024), ==, 1);
    g_assert_cmpuint(cs_pkt_frame_payload(10000, 4096, 0), ==, 4096);
    g_assert_cmpuint(cs_pkt_frame_payload(10000, 4096, 2), ==, 1808);
    g_assert_cmpuint(cs_pkt_frame_wire(&f, 10000, 4096, 0, TRUE), ==, 4096 + 82 + 16);
    g_assert_cmpuint(cs_pkt_frame_wire(&f, 10000, 4096, 1, TRUE), ==, 4096 + 82);
    g_assert_cmpuint(cs_pkt_frame_wire(&f, 10000, 4096, 2, TRUE), ==, 1808 + 82);
    g_assert_cmpuint(cs_pkt_frame_wire(&f, 0, 1024, 0, FALSE), ==, 82);
    guint64 sum = 0;
    for (guint64 i = 0; i < cs_pkt_frame_npkts(1000000, 2048); i++)
        sum += cs_pkt_frame_wire(&f, 1000000, 2048, i, TRUE);
    g_assert_cmpuint(cs_pkt_frame_msg_wire(&f, 1000000, 2048, TRUE), ==, sum);
    g_assert_cmpuint(sum, ==, 1000000 + 489 * 82 + 16);
    g_assert_true(cs_pkt_frame_mtu_valid(1024) && cs_pkt_frame_mtu_valid(4096));
    g_assert_false(cs_pkt_frame_mtu_valid(1500) || cs_pkt_frame_mtu_valid(9000));
}

/* Host a -> host b over one link. */
static cs_pkt_net_t *two_hosts(const cs_pkt_port_cfg_t *cfg, int *port)
{
    cs_pkt_net_t *net = cs_pkt_net_new();
    int a = cs_pkt_net_add_host(net), b = cs_pkt_net_add_host(net);
    *port = cs_pkt_net_add_link(net, a, b, cfg);
    g_assert_cmpint(*port, >=, 0);
    return net;
}

static cs_pkt_flow_cfg_t flow_cfg(guint64 bytes, guint32 mtu, int prio)
{
    return (cs_pkt_flow_cfg_t) { .bytes = bytes, .mtu = mtu, .prio = prio };
}

/* One sender saturating 400 Gb/s with 4096-B packets: 392.2 Gb/s of payload. */
static void test_saturate(void)
{
    cs_pkt_port_cfg_t cfg;
    cs_pkt_port_cfg_init(&cfg, 400 * GBPS, 500 * NS);
    int port;
    g_autoptr(cs_pkt_net_t) net = two_hosts(&cfg, &port);
    cs_pkt_flow_cfg_t fc = flow_cfg(20000ull * 4096, 4096, 3);
    int f = cs_pkt_net_add_flow(net, &port, 1, &fc);
    cs_pkt_net_run(net, CS_TIME_NEVER);
    g_assert_cmpuint(cs_pkt_net_flow_delivered(net, f), ==, fc.bytes);
    cs_time_t busy = cs_pkt_net_flow_done(net, f) - cfg.prop_ps;   /* first bit out to last bit out */
    double gbps = (double)fc.bytes * 8 / ((double)busy / CS_PS_PER_S) / 1e9;
    g_assert_cmpfloat(fabs(gbps - 392.2) / 392.2, <, 0.001);
    /* and the formula, to rounding */
    cs_pkt_frame_t plain = { FALSE };
    g_assert_cmpfloat(fabs(gbps / 400 - cs_pkt_frame_goodput(&plain, 4096, CS_PKT_HDR_MIDDLE)),
                      <, 1e-9);
}

typedef struct {
    cs_time_t stop;                   /* count arrivals up to this time */
    guint64 pkts[2], bytes[2];
    guint64 hash;                     /* of every arrival: flow, psn, time */
} watch_t;

static void watch(void *ctx, const cs_pkt_t *pkt, cs_time_t now)
{
    watch_t *w = ctx;
    w->hash = (w->hash ^ ((guint64)pkt->flow << 32 | pkt->psn)) * 1099511628211ull;
    w->hash = (w->hash ^ (guint64)now) * 1099511628211ull;
    if (now <= w->stop && pkt->flow < 2) {
        w->pkts[pkt->flow]++;
        w->bytes[pkt->flow] += pkt->payload;
    }
}

/* Flows 0 (priority 3, queued first) and 1 (priority 6) share one link. */
static void run_strict(guint8 strict, watch_t *w)
{
    cs_pkt_port_cfg_t cfg;
    cs_pkt_port_cfg_init(&cfg, 100 * GBPS, 1000 * NS);
    cfg.strict = strict;
    int port;
    g_autoptr(cs_pkt_net_t) net = two_hosts(&cfg, &port);
    cs_pkt_flow_cfg_t lo = flow_cfg(200 * 4096, 4096, 3), hi = flow_cfg(200 * 4096, 4096, 6);
    g_assert_cmpint(cs_pkt_net_add_flow(net, &port, 1, &lo), ==, 0);
    g_assert_cmpint(cs_pkt_net_add_flow(net, &port, 1, &hi), ==, 1);
    cs_pkt_net_run(net, CS_TIME_NEVER);
    /* count priority 3's arrivals up to priority 6's completion: run again */
    g_autoptr(cs_pkt_net_t) again = two_hosts(&cfg, &port);
    cs_pkt_net_add_flow(again, &port, 1, &lo);
    cs_pkt_net_add_flow(again, &port, 1, &hi);
    *w = (watch_t) { .stop = cs_pkt_net_flow_done(net, 1) };
    cs_pkt_net_set_observer(again, watch, w);
    cs_pkt_net_run(again, CS_TIME_NEVER);
    g_assert_cmpuint(cs_pkt_net_flow_delivered(again, 0), ==, lo.bytes);
}

static void test_strict(void)
{
    watch_t w;
    run_strict(1u << 6, &w);
    /* priority 6 all through; priority 3 only the packet already on the wire */
    g_assert_cmpuint(w.pkts[1], ==, 200);
    g_assert_cmpuint(w.pkts[0], <=, 1);
    /* control: with no strict priority the two interleave */
    run_strict(0, &w);
    g_assert_cmpuint(w.pkts[0], >=, 190);
}

/* Two backlogged priorities (1 with 4096-B packets, 2 with 1024-B ones)
 * share 100 Gb/s by DRR: bytes follow the weights, not packet counts. */
static void drr_share(guint32 w1, guint32 w2, double want1)
{
    cs_pkt_port_cfg_t cfg;
    cs_pkt_port_cfg_init(&cfg, 100 * GBPS, 0);
    cfg.weight[1] = w1;
    cfg.weight[2] = w2;
    int port;
    g_autoptr(cs_pkt_net_t) net = two_hosts(&cfg, &port);
    cs_pkt_flow_cfg_t a = flow_cfg(1ull << 30, 4096, 1), b = flow_cfg(1ull << 30, 1024, 2);
    cs_pkt_net_add_flow(net, &port, 1, &a);
    cs_pkt_net_add_flow(net, &port, 1, &b);
    cs_pkt_net_run(net, 100 * 1000 * NS);   /* 100 us: ~1.25 MB, both backlogged */
    cs_pkt_port_t *p = cs_pkt_net_port(net, port);
    double b1 = (double)cs_pkt_port_tx_bytes(p, 1), b2 = (double)cs_pkt_port_tx_bytes(p, 2);
    g_assert_cmpfloat(b1 + b2, >, 1e6);
    g_test_message("weights %u:%u -> %.4f of wire bytes to priority 1", w1, w2, b1 / (b1 + b2));
    g_assert_cmpfloat(fabs(b1 / (b1 + b2) - want1), <, 0.01);
}

static void test_drr(void)
{
    drr_share(1, 1, 0.5);
    drr_share(3, 1, 0.75);
    drr_share(1, 3, 0.25);
}

/* InfiniBand VL arbitration (IBA 7.6.9): two backlogged VLs, 1 and 2,
 * with 4096-B packets through one port with tables 'arb': the share of
 * wire bytes VL 1 gets in 100 us (both stay backlogged). */
static double arb_share(const cs_pkt_arb_t *arb)
{
    cs_pkt_port_cfg_t cfg;
    cs_pkt_port_cfg_init(&cfg, 100 * GBPS, 0);
    cfg.arb = arb;
    int port;
    g_autoptr(cs_pkt_net_t) net = two_hosts(&cfg, &port);
    cs_pkt_flow_cfg_t a = flow_cfg(1ull << 30, 4096, 1), b = flow_cfg(1ull << 30, 4096, 2);
    cs_pkt_net_add_flow(net, &port, 1, &a);
    cs_pkt_net_add_flow(net, &port, 1, &b);
    cs_pkt_net_run(net, 100 * 1000 * NS);
    cs_pkt_port_t *p = cs_pkt_net_port(net, port);
    double b1 = (double)cs_pkt_port_tx_bytes(p, 1), b2 = (double)cs_pkt_port_tx_bytes(p, 2);
    g_assert_cmpfloat(b1 + b2, >, 1e6);
    return b1 / (b1 + b2);
}

static cs_pkt_arb_t arb_tables(int hvl, int hw, int lvl1, int lw1, int lvl2, int lw2, int limit)
{
    cs_pkt_arb_t a = { .high_limit = (guint8)limit };
    if (hvl >= 0)
        a.high[a.nhigh++] = (cs_pkt_arb_entry_t){ (guint8)hvl, (guint8)hw };
    a.low[a.nlow++] = (cs_pkt_arb_entry_t){ (guint8)lvl1, (guint8)lw1 };
    if (lvl2 >= 0)
        a.low[a.nlow++] = (cs_pkt_arb_entry_t){ (guint8)lvl2, (guint8)lw2 };
    g_assert_true(cs_pkt_arb_valid(&a));
    return a;
}

static void test_vlarb(void)
{
    /* weights 192:64 (12288:4096 B) in one table: 3 packets to 1, as
     * bytes 3:1; DRR with equal weights would give 1:1 */
    cs_pkt_arb_t a = arb_tables(-1, 0, 1, 192, 2, 64, 0);
    g_assert_cmpfloat(fabs(arb_share(&a) - 0.75), <, 0.01);
    /* weights 3:1 are 192 and 64 bytes, below one 4 KB packet: a packet
     * per turn each, 1:1 (a started packet may overdraw its weight) */
    a = arb_tables(-1, 0, 1, 3, 2, 1, 0);
    g_assert_cmpfloat(fabs(arb_share(&a) - 0.5), <, 0.01);
    /* weight 0 skips the entry: VL 2 starves while VL 1 has packets */
    a = arb_tables(-1, 0, 1, 64, 2, 0, 0);
    g_assert_cmpfloat(arb_share(&a), ==, 1.0);
    g_assert_false(cs_pkt_arb_serves(&a, 2));
    g_assert_true(cs_pkt_arb_serves(&a, 1));
    /* VL 1 high priority, VL 2 low: unlimited, VL 2 gets at most the
     * packet that went before VL 1's first */
    a = arb_tables(1, 4, 2, 4, -1, 0, CS_PKT_ARB_UNLIMITED);
    g_assert_cmpfloat(arb_share(&a), >, 0.99);
    /* limit 0: one high packet, then one low (OpenSM's default limit) */
    a = arb_tables(1, 4, 2, 4, -1, 0, 0);
    g_assert_cmpfloat(fabs(arb_share(&a) - 0.5), <, 0.01);
    /* limit 4: 16 KB of high, four 4 KB packets (the fourth starts at
     * 12.5 KB), then one low: 4:1 */
    a = arb_tables(1, 4, 2, 4, -1, 0, 4);
    g_assert_cmpfloat(fabs(arb_share(&a) - 0.8), <, 0.01);
    /* a VL past the engine's eight is no table a port can run */
    a.low[0].vl = CS_PKT_PRIOS;
    g_assert_false(cs_pkt_arb_valid(&a));
}

/* a -> s1 -> s2 -> b at three rates and delays: one packet arrives after
 * the three serializations and the three propagation delays, each once. */
static cs_time_t chain_arrival(cs_time_t prop1, cs_time_t prop2, cs_time_t prop3)
{
    g_autoptr(cs_pkt_net_t) net = cs_pkt_net_new();
    int a = cs_pkt_net_add_host(net), s1 = cs_pkt_net_add_switch(net);
    int s2 = cs_pkt_net_add_switch(net), b = cs_pkt_net_add_host(net);
    cs_pkt_port_cfg_t c1, c2, c3;
    cs_pkt_port_cfg_init(&c1, 400 * GBPS, prop1);
    cs_pkt_port_cfg_init(&c2, 100 * GBPS, prop2);
    cs_pkt_port_cfg_init(&c3, 200 * GBPS, prop3);
    int route[3] = {
        cs_pkt_net_add_link(net, a, s1, &c1),
        cs_pkt_net_add_link(net, s1, s2, &c2),
        cs_pkt_net_add_link(net, s2, b, &c3),
    };
    cs_pkt_net_add_link(net, s1, a, &c1);       /* reverse links, unused */
    cs_pkt_net_add_link(net, b, s2, &c3);
    cs_pkt_flow_cfg_t fc = flow_cfg(1000, 1024, 3);
    int f = cs_pkt_net_add_flow(net, route, 3, &fc);
    cs_pkt_net_run(net, CS_TIME_NEVER);
    g_assert_cmpuint(cs_pkt_net_flow_delivered(net, f), ==, 1000);
    return cs_pkt_net_flow_done(net, f);
}

static void test_prop_once_per_hop(void)
{
    /* 1082 wire bytes: 8656 bits -> 21640 ps at 400G, 86560 at 100G, 43280 at 200G */
    cs_time_t ser = 21640 + 86560 + 43280;
    g_assert_cmpint(chain_arrival(0, 0, 0), ==, ser);
    g_assert_cmpint(chain_arrival(1000 * NS, 2500 * NS, 700 * NS), ==, ser + 4200 * NS);
    g_assert_cmpint(chain_arrival(0, 2500 * NS, 0), ==, ser + 2500 * NS);
}

static void drop(void *ctx, cs_pkt_port_t *port, cs_pkt_t *pkt, cs_time_t now)
{
    (void)port;
    (void)now;
    cs_pkt_release(ctx, pkt);
}

/* Serialization in integer picoseconds keeps the exact rate over many
 * packets: 1000 B at 300 Gb/s is 26666.67 ps. */
static void test_ser_remainder(void)
{
    g_autoptr(cs_evq_t) q = cs_evq_new();
    g_autoptr(cs_pkt_pool_t) pool = cs_pkt_pool_new();
    cs_pkt_port_cfg_t cfg;
    cs_pkt_port_cfg_init(&cfg, 300 * GBPS, 0);
    cs_pkt_port_t *port = cs_pkt_port_new(0, &cfg, q, NULL, NULL, drop, pool);
    cs_time_t sum = 0;
    for (int i = 0; i < 3000; i++) {
        cs_time_t t = cs_pkt_port_ser_time(port, 1000);
        g_assert_true(t == 26666 || t == 26667);
        sum += t;
    }
    g_assert_cmpint(sum, ==, 80000000);
    cs_pkt_port_free(port, pool);
}

/* A standalone port with a test flow-control hook: priority 3 is held
 * until released and kicked, the seam PFC and credits will use. */
typedef struct {
    gboolean hold3;
    cs_pkt_pool_t *pool;
    guint64 got[CS_PKT_PRIOS];
    cs_time_t last;
    guint8 order[64];                 /* priorities in arrival order, the first 64 */
    int n;
} seam_t;

static gboolean seam_may_send(void *ctx, const cs_pkt_port_t *port, int prio, cs_time_t now)
{
    (void)port;
    (void)now;
    return !(prio == 3 && ((seam_t *)ctx)->hold3);
}

static void seam_deliver(void *ctx, cs_pkt_port_t *port, cs_pkt_t *pkt, cs_time_t now)
{
    (void)port;
    seam_t *s = ctx;
    s->got[pkt->prio]++;
    s->last = now;
    if (s->n < 64)
        s->order[s->n++] = pkt->prio;
    cs_pkt_release(s->pool, pkt);
}

static const cs_pkt_port_hooks_t seam_hooks = { NULL, seam_may_send };

static void seam_run(cs_evq_t *q, cs_pkt_port_t *port)
{
    cs_event_t *ev;
    while ((ev = cs_evq_pop(q)) != NULL)
        cs_pkt_port_event(port, ev);
}

/* Twenty 1000-B packets on 'port', alternating priorities 1 and 3 (1 first). */
static void seam_fill(cs_pkt_port_t *port, cs_pkt_pool_t *pool, cs_pkt_route_t *r)
{
    for (int i = 0; i < 20; i++) {
        cs_pkt_t *p = cs_pkt_alloc(pool);
        p->route = r;
        p->prio = i % 2 ? 3 : 1;
        p->wire = p->payload = 1000;
        cs_pkt_port_enqueue(port, p, 0);
    }
}

static void test_flow_control_seam(void)
{
    g_autoptr(cs_evq_t) q = cs_evq_new();
    g_autoptr(cs_pkt_pool_t) pool = cs_pkt_pool_new();
    seam_t s = { .hold3 = TRUE, .pool = pool };
    cs_pkt_port_cfg_t cfg;
    cs_pkt_port_cfg_init(&cfg, 100 * GBPS, 10 * NS);
    cs_pkt_port_t *port = cs_pkt_port_new(7, &cfg, q, &seam_hooks, &s, seam_deliver, &s);
    cs_pkt_route_t *r = cs_pkt_route_new((const int[]) { 7 }, 1);
    seam_fill(port, pool, r);
    seam_run(q, port);
    g_assert_cmpuint(s.got[1], ==, 10);
    g_assert_cmpuint(s.got[3], ==, 0);
    g_assert_cmpuint(cs_pkt_port_queue_len(port, 3), ==, 10);
    g_assert_cmpuint(cs_pkt_port_queue_bytes(port, 3), ==, 10000);
    g_assert_false(cs_pkt_port_busy(port));
    cs_time_t resume = s.last + 5 * NS;
    s.hold3 = FALSE;
    cs_pkt_port_kick(port, resume);
    seam_run(q, port);
    g_assert_cmpuint(s.got[3], ==, 10);
    g_assert_cmpint(s.last, ==, resume + 10 * 80000 + 10 * NS);   /* 1000 B at 100G: 80 ns */
    g_assert_cmpuint(cs_pkt_pool_in_use(pool), ==, 0);
    cs_pkt_port_free(port, pool);
    cs_pkt_route_free(r);
}

/* VL arbitration behind flow control: VL 3 high priority with no limit,
 * VL 1 low. While VL 3 may not send (no credits) the arbiter passes its
 * entry by and VL 1 goes; once it may, all of VL 3's packets go before
 * VL 1's. The port asks may_send, nothing else. */
static void test_vlarb_seam(void)
{
    g_autoptr(cs_evq_t) q = cs_evq_new();
    g_autoptr(cs_pkt_pool_t) pool = cs_pkt_pool_new();
    cs_pkt_arb_t arb = { .nhigh = 1, .nlow = 1, .high_limit = CS_PKT_ARB_UNLIMITED };
    arb.high[0] = (cs_pkt_arb_entry_t){ 3, 255 };
    arb.low[0] = (cs_pkt_arb_entry_t){ 1, 4 };
    cs_pkt_port_cfg_t cfg;
    cs_pkt_port_cfg_init(&cfg, 100 * GBPS, 10 * NS);
    cfg.arb = &arb;
    cs_pkt_route_t *r = cs_pkt_route_new((const int[]) { 7 }, 1);
    for (int held = 1; held >= 0; held--) {
        seam_t s = { .hold3 = held, .pool = pool };
        cs_pkt_port_t *port = cs_pkt_port_new(7, &cfg, q, &seam_hooks, &s, seam_deliver, &s);
        g_assert_nonnull(port);
        /* a VL-1 packet first, so that it is on the wire as the rest queue */
        seam_fill(port, pool, r);
        seam_run(q, port);
        if (held) {
            g_assert_cmpuint(s.got[1], ==, 10);
            g_assert_cmpuint(s.got[3], ==, 0);
            s.hold3 = FALSE;
            cs_pkt_port_kick(port, s.last);
            seam_run(q, port);
        } else {
            /* VL 1's first packet, then VL 3's ten (255 x 64 B > 10 x 1000 B), then VL 1's nine */
            for (int i = 0; i < 20; i++)
                g_assert_cmpuint(s.order[i], ==, i == 0 || i > 10 ? 1 : 3);
        }
        g_assert_cmpuint(s.got[1] + s.got[3], ==, 20);
        cs_pkt_port_free(port, pool);
    }
    /* strict priority does not mix with VL arbitration */
    cfg.strict = 1u << 3;
    g_test_expect_message(G_LOG_DOMAIN, G_LOG_LEVEL_CRITICAL, "*arb*");
    g_assert_null(cs_pkt_port_new(7, &cfg, q, &seam_hooks, NULL, seam_deliver, NULL));
    g_test_assert_expected_messages();
    g_assert_cmpuint(cs_pkt_pool_in_use(pool), ==, 0);
    cs_pkt_route_free(r);
}

/* a -> s -> b, 100000 packets: the pool grows while the first packets
 * fill the path, then never; a second message reuses it. The host's link
 * is the slower one: with no PFC yet, a faster one would pile packets up
 * in the switch without bound. */
static void test_pool_reuse(void)
{
    g_autoptr(cs_pkt_net_t) net = cs_pkt_net_new();
    int a = cs_pkt_net_add_host(net), s = cs_pkt_net_add_switch(net), b = cs_pkt_net_add_host(net);
    cs_pkt_port_cfg_t fast, slow;
    cs_pkt_port_cfg_init(&fast, 400 * GBPS, 2000 * NS);
    cs_pkt_port_cfg_init(&slow, 100 * GBPS, 2000 * NS);
    int route[2] = { cs_pkt_net_add_link(net, a, s, &slow), cs_pkt_net_add_link(net, s, b, &fast) };
    cs_pkt_flow_cfg_t fc = flow_cfg(100000ull * 1024, 1024, 3);
    int f1 = cs_pkt_net_add_flow(net, route, 2, &fc);
    cs_pkt_net_run(net, CS_TIME_NEVER);
    g_assert_cmpuint(cs_pkt_net_flow_delivered(net, f1), ==, fc.bytes);
    cs_pkt_pool_t *pool = cs_pkt_net_pool(net);
    guint64 grows = cs_pkt_pool_grows(pool);
    gsize cap = cs_pkt_pool_capacity(pool);
    g_test_message("pool: %" G_GUINT64_FORMAT " blocks, %zu packets for 100000 sent", grows, cap);
    g_assert_cmpuint(cs_pkt_pool_in_use(pool), ==, 0);
    /* packets in flight, bounded by the window and the wires, not the message */
    g_assert_cmpuint(cap, <, 1000);
    fc.start = cs_pkt_net_now(net) + 1000 * NS;
    int f2 = cs_pkt_net_add_flow(net, route, 2, &fc);
    cs_pkt_net_run(net, CS_TIME_NEVER);
    g_assert_cmpuint(cs_pkt_net_flow_delivered(net, f2), ==, fc.bytes);
    g_assert_cmpuint(cs_pkt_pool_grows(pool), ==, grows);
    g_assert_cmpuint(cs_pkt_pool_capacity(pool), ==, cap);
}

/* Two senders through one switch into one host; returns the run's
 * events, both completion times and a hash of every arrival. */
static void det_run(guint64 *events, cs_time_t done[2], guint64 *hash)
{
    g_autoptr(cs_pkt_net_t) net = cs_pkt_net_new();
    int a = cs_pkt_net_add_host(net), c = cs_pkt_net_add_host(net);
    int s = cs_pkt_net_add_switch(net), b = cs_pkt_net_add_host(net);
    cs_pkt_port_cfg_t edge, down;
    cs_pkt_port_cfg_init(&edge, 200 * GBPS, 300 * NS);
    cs_pkt_port_cfg_init(&down, 100 * GBPS, 700 * NS);
    down.weight[2] = 2;
    int sb = cs_pkt_net_add_link(net, s, b, &down);
    int r1[2] = { cs_pkt_net_add_link(net, a, s, &edge), sb };
    int r2[2] = { cs_pkt_net_add_link(net, c, s, &edge), sb };
    cs_pkt_flow_cfg_t f1 = flow_cfg(3000000, 4096, 3), f2 = flow_cfg(2000000, 1024, 2);
    f2.start = 1234 * NS;
    f2.write = TRUE;
    cs_pkt_net_add_flow(net, r1, 2, &f1);
    cs_pkt_net_add_flow(net, r2, 2, &f2);
    watch_t w = { .stop = -1 };
    cs_pkt_net_set_observer(net, watch, &w);
    *events = cs_pkt_net_run(net, CS_TIME_NEVER);
    g_assert_cmpuint(*events, ==, cs_pkt_net_events(net));
    done[0] = cs_pkt_net_flow_done(net, 0);
    done[1] = cs_pkt_net_flow_done(net, 1);
    g_assert_cmpuint(cs_pkt_net_host_delivered(net, b), ==, 5000000);
    *hash = w.hash;
}

static void test_determinism(void)
{
    guint64 e1, e2, h1, h2;
    cs_time_t d1[2], d2[2];
    det_run(&e1, d1, &h1);
    det_run(&e2, d2, &h2);
    g_assert_cmpuint(e1, >, 0);
    g_assert_cmpuint(e1, ==, e2);
    g_assert_cmpint(d1[0], ==, d2[0]);
    g_assert_cmpint(d1[1], ==, d2[1]);
    g_assert_cmpuint(h1, ==, h2);
}


/* fabric-models.md section 3's derived examples: 100G, 100 m, 9216 MTU
 * ~= 71.6 KB; 25G, 100 m ~= 27.6 KB (within 2%). Pause quanta: 65535 at
 * 100G = 335.5 us, one quantum at 400G = 1.28 ns. */
static void test_headroom(void)
{
    double h100 = (double)cs_pkt_headroom_bytes(9216, 100 * GBPS, 100);
    double h25 = (double)cs_pkt_headroom_bytes(9216, 25 * GBPS, 100);
    g_test_message("headroom: 100G %.0f B, 25G %.0f B", h100, h25);
    g_assert_cmpfloat(fabs(h100 - 71600) / 71600, <, 0.02);
    g_assert_cmpfloat(fabs(h25 - 27600) / 27600, <, 0.02);
    /* the cable counts both ways: 100 m more at 100G is 2 x 500 ns = 12500 B */
    g_assert_cmpuint(cs_pkt_headroom_bytes(9216, 100 * GBPS, 200)
                     - cs_pkt_headroom_bytes(9216, 100 * GBPS, 100), ==, 12500);
    g_assert_cmpint(cs_pkt_pfc_quanta_ps(65535, 100 * GBPS), ==, 335539200);
    g_assert_cmpint(cs_pkt_pfc_quanta_ps(1, 400 * GBPS), ==, 1280);
}

/* The MMU alone: one lossless PG fills the shared pool to the dynamic
 * threshold (S = alpha (F - S): F / 9 at alpha 1/8), then its headroom,
 * then drops; XON only a resume offset below the threshold; a lossy PG
 * drops at its share and never wants a pause. */
static void test_mmu(void)
{
    cs_pkt_mmu_cfg_t cfg;
    cs_pkt_mmu_cfg_init(&cfg, 1000000);
    cfg.reserve = 0;
    cfg.lossless = 1u << 3;
    g_autoptr(cs_pkt_mmu_t) mmu = cs_pkt_mmu_new(&cfg);
    int a = cs_pkt_mmu_add_port(mmu, 10000), b = cs_pkt_mmu_add_port(mmu, 10000);
    g_assert_cmpuint(cs_pkt_mmu_threshold(mmu), ==, (1000000 - 20000) / 8);
    int n = 0;
    while (!cs_pkt_mmu_want_xoff(mmu, a, 3)) {
        g_assert_true(cs_pkt_mmu_admit(mmu, a, 3, 1000));
        n++;
    }
    /* F = 980000: the PG pauses at F / 9 = 108889, rounded up to a packet */
    g_assert_cmpint(n, ==, 109);
    g_assert_cmpuint(cs_pkt_mmu_pg_headroom_max(mmu, a, 3), ==, 0);
    for (int i = 0; i < 10; i++)
        g_assert_true(cs_pkt_mmu_admit(mmu, a, 3, 1000));     /* into the headroom */
    g_assert_cmpuint(cs_pkt_mmu_pg_headroom_max(mmu, a, 3), ==, 10000);
    g_assert_false(cs_pkt_mmu_admit(mmu, a, 3, 1000));        /* headroom full: drop */
    g_assert_cmpuint(cs_pkt_mmu_drops(mmu, a, 3), ==, 1);
    /* drain: no XON while the headroom holds bytes, nor at 1 KB below */
    for (int i = 0; i < 10; i++) {
        g_assert_false(cs_pkt_mmu_may_xon(mmu, a, 3));
        cs_pkt_mmu_release(mmu, a, 3, 1000);
    }
    g_assert_false(cs_pkt_mmu_may_xon(mmu, a, 3));
    int released = 0;
    while (!cs_pkt_mmu_may_xon(mmu, a, 3)) {
        cs_pkt_mmu_release(mmu, a, 3, 1000);
        released++;
    }
    /* threshold rises as shared falls: S + 3072 <= (980000 - S) / 8, S <= 106158 */
    g_assert_cmpint(released, ==, 3);
    g_assert_cmpuint(cs_pkt_mmu_pg_bytes(mmu, a, 3), ==, 106000);
    /* lossy priority 1 on port b: fills its share, then drops, never pauses */
    int ok = 0;
    while (cs_pkt_mmu_admit(mmu, b, 1, 1000))
        ok++;
    g_assert_cmpint(ok, >, 50);
    g_assert_false(cs_pkt_mmu_want_xoff(mmu, b, 1));
    g_assert_cmpuint(cs_pkt_mmu_drops(mmu, b, 1), ==, 1);
    g_assert_cmpuint(cs_pkt_mmu_pg_headroom_max(mmu, b, 1), ==, 0);
    g_assert_cmpuint(cs_pkt_mmu_used(mmu), ==, 106000 + (guint64)ok * 1000);
}

/* 2:1 incast: hosts a and c at 100 Gb/s through switch s into host b at
 * 100 Gb/s, 100 m cables (500 ns), both ways so pauses can go back. */
typedef struct {
    guint64 buffer;
    guint32 reserve;
    gint64 headroom;                  /* -1: the formula */
    int prio;
    guint16 quanta;                   /* 0: default */
    guint64 bytes;                    /* per sender */
    cs_time_t window;                 /* shares measured up to here */
    gboolean ecn;                     /* the switch marks (defaults for 100G) */
    const cs_pkt_dcqcn_cfg_t *dcqcn;  /* both flows run DCQCN; NULL: none */
    guint64 seed;
    cs_time_t settle;                 /* > 0: rates and queue samples from here to the window */
} incast_cfg_t;

typedef struct {
    guint64 window_bytes[2];          /* payload delivered per sender in the window */
    guint64 egress_window;            /* wire bytes sent by s -> b in the window */
    guint64 delivered[2], dropped[2];
    guint64 xoff[2], xon[2], received[2];
    cs_time_t paused[2];
    guint64 used_max, hdrm_max, events;
    guint64 paused_any;               /* any pause on any link, any priority (no padding: memcmp) */
    guint64 settled_bytes[2];         /* payload delivered per sender from settle to window */
    guint64 marks, cnps_sent[2], cnps_received[2], cuts[2];
    guint64 samples, samples_over_kmax, queue_max_settled;   /* egress queue, every 1 us */
} incast_t;

static void incast(const incast_cfg_t *ic, incast_t *r)
{
    g_autoptr(cs_pkt_net_t) net = cs_pkt_net_new();
    int a = cs_pkt_net_add_host(net), c = cs_pkt_net_add_host(net);
    int s = cs_pkt_net_add_switch(net), b = cs_pkt_net_add_host(net);
    if (ic->quanta > 0) {
        cs_pkt_pfc_cfg_t pc;
        cs_pkt_pfc_cfg_init(&pc);
        pc.quanta = ic->quanta;
        cs_pkt_net_set_pfc(net, &pc);
    }
    cs_pkt_mmu_cfg_t mc;
    cs_pkt_mmu_cfg_init(&mc, ic->buffer);
    mc.reserve = ic->reserve;
    g_assert_cmpint(cs_pkt_net_set_buffer(net, s, &mc, ic->headroom), ==, 0);
    cs_pkt_port_cfg_t pc;
    cs_pkt_port_cfg_init(&pc, 100 * GBPS, 500 * NS);
    int as = cs_pkt_net_add_link(net, a, s, &pc), cs = cs_pkt_net_add_link(net, c, s, &pc);
    int sb = cs_pkt_net_add_link(net, s, b, &pc);
    cs_pkt_net_add_link(net, s, a, &pc);
    cs_pkt_net_add_link(net, s, c, &pc);
    cs_pkt_net_add_link(net, b, s, &pc);
    cs_pkt_flow_cfg_t fc = flow_cfg(ic->bytes, 4096, ic->prio);
    int r0[2] = { as, sb }, r1[2] = { cs, sb };
    int f0 = cs_pkt_net_add_flow(net, r0, 2, &fc), f1 = cs_pkt_net_add_flow(net, r1, 2, &fc);
    cs_pkt_net_set_seed(net, ic->seed);
    if (ic->ecn)
        g_assert_cmpint(cs_pkt_net_set_ecn(net, s, NULL), ==, 0);
    if (ic->dcqcn != NULL) {
        g_assert_cmpint(cs_pkt_net_set_dcqcn(net, f0, ic->dcqcn), ==, 0);
        g_assert_cmpint(cs_pkt_net_set_dcqcn(net, f1, ic->dcqcn), ==, 0);
    }
    *r = (incast_t) { 0 };
    if (ic->settle > 0) {
        cs_pkt_ecn_cfg_t ec;
        cs_pkt_ecn_cfg_for_rate(&ec, 100 * GBPS);
        r->events = cs_pkt_net_run(net, ic->settle);
        r->settled_bytes[0] = cs_pkt_net_flow_delivered(net, f0);
        r->settled_bytes[1] = cs_pkt_net_flow_delivered(net, f1);
        for (cs_time_t t = ic->settle + 1000 * NS; t <= ic->window; t += 1000 * NS) {
            r->events += cs_pkt_net_run(net, t);
            guint64 q = cs_pkt_port_queue_bytes(cs_pkt_net_port(net, sb), ic->prio);
            r->samples++;
            r->samples_over_kmax += q > ec.kmax;
            r->queue_max_settled = MAX(r->queue_max_settled, q);
        }
        r->settled_bytes[0] = cs_pkt_net_flow_delivered(net, f0) - r->settled_bytes[0];
        r->settled_bytes[1] = cs_pkt_net_flow_delivered(net, f1) - r->settled_bytes[1];
    }
    r->events += cs_pkt_net_run(net, ic->window);
    r->window_bytes[0] = cs_pkt_net_flow_delivered(net, f0);
    r->window_bytes[1] = cs_pkt_net_flow_delivered(net, f1);
    for (int p = 0; p < CS_PKT_PRIOS; p++)
        r->egress_window += cs_pkt_port_tx_bytes(cs_pkt_net_port(net, sb), p);
    r->events += cs_pkt_net_run(net, CS_TIME_NEVER);
    cs_time_t end = cs_pkt_net_now(net);
    int in[2] = { as, cs }, fl[2] = { f0, f1 };
    cs_pkt_mmu_t *mmu = cs_pkt_net_mmu(net, s);
    for (int i = 0; i < 2; i++) {
        cs_pkt_pfc_t *pfc = cs_pkt_net_pfc(net, in[i]);
        r->delivered[i] = cs_pkt_net_flow_delivered(net, fl[i]);
        r->dropped[i] = cs_pkt_net_flow_dropped(net, fl[i]);
        r->xoff[i] = cs_pkt_pfc_xoff_sent(pfc, ic->prio);
        r->xon[i] = cs_pkt_pfc_xon_sent(pfc, ic->prio);
        r->received[i] = cs_pkt_pfc_received(pfc, ic->prio);
        r->paused[i] = cs_pkt_pfc_paused_ps(pfc, ic->prio, end);
        r->hdrm_max = MAX(r->hdrm_max, cs_pkt_mmu_pg_headroom_max(mmu, cs_pkt_net_mmu_port(net, in[i]),
                                                                 ic->prio));
        g_assert_cmpuint(r->dropped[i], ==,
                         cs_pkt_mmu_drops(mmu, cs_pkt_net_mmu_port(net, in[i]), ic->prio));
        r->cnps_sent[i] = cs_pkt_net_flow_cnps_sent(net, fl[i]);
        r->cnps_received[i] = cs_pkt_net_flow_cnps_received(net, fl[i]);
        const cs_pkt_dcqcn_rp_t *rp = cs_pkt_net_flow_rp(net, fl[i]);
        r->cuts[i] = rp != NULL ? rp->cuts : 0;
    }
    r->marks = cs_pkt_net_ecn_marks(net, sb, ic->prio);
    for (int l = 0; l < 6; l++)
        for (int p = 0; p < CS_PKT_PRIOS; p++)
            r->paused_any |= cs_pkt_pfc_received(cs_pkt_net_pfc(net, l), p) > 0
                             || cs_pkt_pfc_xoff_sent(cs_pkt_net_pfc(net, l), p) > 0;
    r->used_max = cs_pkt_mmu_used_max(mmu);
    g_assert_cmpuint(cs_pkt_mmu_used(mmu), ==, 0);     /* everything left gave its bytes back */
    g_assert_cmpuint(cs_pkt_pool_in_use(cs_pkt_net_pool(net)), ==, 0);
    g_test_message("incast prio %d: window %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT
                   " B, egress %" G_GUINT64_FORMAT " B, drops %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT
                   ", xoff %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT ", xon %" G_GUINT64_FORMAT
                   "/%" G_GUINT64_FORMAT ", paused %.1f/%.1f us, buffer max %" G_GUINT64_FORMAT
                   ", headroom max %" G_GUINT64_FORMAT,
                   ic->prio, r->window_bytes[0], r->window_bytes[1], r->egress_window,
                   r->dropped[0], r->dropped[1], r->xoff[0], r->xoff[1], r->xon[0], r->xon[1],
                   r->paused[0] / 1e6, r->paused[1] / 1e6, r->used_max, r->hdrm_max);
    g_test_message("  marks %" G_GUINT64_FORMAT ", cnps %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT
                   " (received %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT "), cuts %" G_GUINT64_FORMAT
                   "/%" G_GUINT64_FORMAT ", settled %.2f/%.2f Gb/s, queue over Kmax %" G_GUINT64_FORMAT
                   "/%" G_GUINT64_FORMAT " samples, max %" G_GUINT64_FORMAT " B",
                   r->marks, r->cnps_sent[0], r->cnps_sent[1], r->cnps_received[0], r->cnps_received[1],
                   r->cuts[0], r->cuts[1],
                   ic->settle > 0 ? r->settled_bytes[0] * 8e3 / (double)(ic->window - ic->settle) : 0,
                   ic->settle > 0 ? r->settled_bytes[1] * 8e3 / (double)(ic->window - ic->settle) : 0,
                   r->samples_over_kmax, r->samples, r->queue_max_settled);
}

static const incast_cfg_t incast_base = {
    .buffer = 1000000, .reserve = CS_PKT_MMU_RESERVE_DEFAULT, .headroom = -1, .prio = 3,
    .bytes = 8000000, .window = 400 * 1000 * NS,
};

/* Lossless: no drop, the egress link busy all along, both senders paused
 * (frames sent and received), each gets half. */
static void test_incast_lossless(void)
{
    incast_t r;
    incast(&incast_base, &r);
    double busy = (double)r.egress_window * 8 / (100e9 * (double)incast_base.window / CS_PS_PER_S);
    g_assert_cmpfloat(busy, >, 0.99);
    for (int i = 0; i < 2; i++) {
        g_assert_cmpuint(r.dropped[i], ==, 0);
        g_assert_cmpuint(r.delivered[i], ==, incast_base.bytes);
        g_assert_cmpuint(r.xoff[i], >, 0);
        g_assert_cmpuint(r.received[i], >, 0);
        g_assert_cmpuint(r.received[i], ==, r.xoff[i] + r.xon[i]);
        g_assert_cmpint(r.paused[i], >, 0);
        double share = (double)r.window_bytes[i] / (double)(r.window_bytes[0] + r.window_bytes[1]);
        g_assert_cmpfloat(fabs(share - 0.5), <, 0.02);
    }
    /* the default 65535 quanta never run out here: each pause ends by XON */
    g_assert_cmpuint(r.xoff[0], <=, r.xon[0] + 1);
    g_assert_cmpuint(r.used_max, <=, incast_base.buffer);
}

/* Short pause timers (200 quanta = 1.024 us at 100G, refresh every
 * 512 ns): while congested the switch refreshes its XOFF before the timer
 * runs out, so there is still no drop and more XOFFs than XONs. */
static void test_incast_refresh(void)
{
    incast_cfg_t ic = incast_base;
    ic.quanta = 200;
    incast_t r;
    incast(&ic, &r);
    for (int i = 0; i < 2; i++) {
        g_assert_cmpuint(r.dropped[i], ==, 0);
        g_assert_cmpuint(r.delivered[i], ==, ic.bytes);
        g_assert_cmpuint(r.xoff[i], >, r.xon[i] + 10);
    }
}

/* Too little headroom (a tiny buffer, 2000 B forced: less than one
 * 4178-B packet, against ~12.5 KB in flight on 100 m at 100G): the
 * lossless priority drops. */
static void test_incast_small_headroom(void)
{
    incast_cfg_t ic = incast_base;
    ic.buffer = 64000;
    ic.reserve = 0;
    ic.headroom = 2000;
    incast_t r;
    incast(&ic, &r);
    g_assert_cmpuint(r.dropped[0] + r.dropped[1], >, 0);
    g_assert_cmpuint(r.xoff[0] + r.xoff[1], >, 0);
    g_assert_cmpuint(r.delivered[0] + r.delivered[1], <, 2 * ic.bytes);
}

/* A lossy priority in the same incast drops at its share and never pauses. */
static void test_incast_lossy(void)
{
    incast_cfg_t ic = incast_base;
    ic.prio = 1;
    incast_t r;
    incast(&ic, &r);
    g_assert_cmpuint(r.dropped[0] + r.dropped[1], >, 0);
    g_assert_false(r.paused_any);
    g_assert_cmpuint(r.hdrm_max, ==, 0);
}

/* Same inputs, same counters. */
static void test_incast_determinism(void)
{
    incast_t r1, r2;
    incast_cfg_t ic = incast_base;
    ic.quanta = 200;
    incast(&ic, &r1);
    incast(&ic, &r2);
    g_assert_cmpuint(r1.events, >, 0);
    g_assert_cmpmem(&r1, sizeof r1, &r2, sizeof r2);
}

/* A standalone 100G port with PFC: priority 3 paused by an XOFF of 1000
 * quanta (5.12 us) whose XON is lost resumes when the quanta expire;
 * with the XON delivered at 1 us it resumes then. */
typedef struct {
    cs_pkt_pool_t *pool;
    cs_pkt_pfc_t *pfc;
    cs_time_t first3;
    guint64 got3;
} pfc_sink_t;

static void pfc_deliver(void *ctx, cs_pkt_port_t *port, cs_pkt_t *pkt, cs_time_t now)
{
    (void)port;
    pfc_sink_t *k = ctx;
    if (pkt->prio == 3 && k->got3++ == 0)
        k->first3 = now;
    cs_pkt_release(k->pool, pkt);
}

static gboolean pfc_may_send(void *ctx, const cs_pkt_port_t *port, int prio, cs_time_t now)
{
    (void)port;
    return cs_pkt_pfc_may_send(((pfc_sink_t *)ctx)->pfc, prio, now);
}

static const cs_pkt_port_hooks_t pfc_test_hooks = { NULL, pfc_may_send };

static void no_send(void *ctx, int link, int prio, guint16 quanta, cs_time_t now)
{
    (void)ctx; (void)link; (void)prio; (void)quanta; (void)now;
}

/* Returns when the first priority-3 packet arrived; XON at 'xon_at'
 * (-1: lost). */
static cs_time_t pfc_resume(cs_time_t xon_at, cs_time_t *paused)
{
    g_autoptr(cs_evq_t) q = cs_evq_new();
    g_autoptr(cs_pkt_pool_t) pool = cs_pkt_pool_new();
    pfc_sink_t k = { .pool = pool, .first3 = -1 };
    cs_pkt_pfc_cfg_t cfg;
    cs_pkt_pfc_cfg_init(&cfg);
    cs_pkt_port_cfg_t pc;
    cs_pkt_port_cfg_init(&pc, 100 * GBPS, 10 * NS);
    cs_pkt_port_t *port = cs_pkt_port_new(0, &pc, q, &pfc_test_hooks, &k, pfc_deliver, &k);
    k.pfc = cs_pkt_pfc_new(0, port, q, &cfg, no_send, NULL);
    cs_pkt_pfc_receive(k.pfc, 3, 1000, 0);
    g_assert_true(cs_pkt_pfc_paused(k.pfc, 3, 0));
    cs_pkt_route_t *r = cs_pkt_route_new((const int[]) { 0 }, 1);
    for (int i = 0; i < 10; i++) {
        cs_pkt_t *p = cs_pkt_alloc(pool);
        p->route = r;
        p->prio = 3;
        p->wire = p->payload = 1000;
        cs_pkt_port_enqueue(port, p, 0);
    }
    cs_event_t *xon = NULL;
    if (xon_at >= 0) {
        xon = cs_evq_alloc(q);
        xon->kind = 1;
        cs_evq_push(q, xon, xon_at);
    }
    cs_event_t *ev;
    while ((ev = cs_evq_pop(q)) != NULL) {
        if (ev == xon)
            cs_pkt_pfc_receive(k.pfc, 3, 0, ev->time);
        else if (ev->kind == CS_PKT_EV_PFC_EXPIRE || ev->kind == CS_PKT_EV_PFC_REFRESH)
            cs_pkt_pfc_event(k.pfc, ev);
        else
            cs_pkt_port_event(port, ev);
    }
    if (xon != NULL)
        cs_evq_release(q, xon);
    g_assert_cmpuint(k.got3, ==, 10);
    g_assert_false(cs_pkt_pfc_paused(k.pfc, 3, k.first3));
    g_assert_cmpuint(cs_pkt_pfc_received(k.pfc, 3), ==, xon_at >= 0 ? 2 : 1);
    *paused = cs_pkt_pfc_paused_ps(k.pfc, 3, k.first3);
    cs_pkt_pfc_free(k.pfc);
    cs_pkt_port_free(port, pool);
    cs_pkt_route_free(r);
    return k.first3;
}

static void test_pfc_xon_lost(void)
{
    cs_time_t paused;
    /* 1000 quanta x 5.12 ns = 5.12 us, then 1000 B at 100G (80 ns) and 10 ns */
    g_assert_cmpint(pfc_resume(-1, &paused), ==, 5120 * NS + 80 * NS + 10 * NS);
    g_assert_cmpint(paused, ==, 5120 * NS);
    g_assert_cmpint(pfc_resume(1000 * NS, &paused), ==, 1000 * NS + 80 * NS + 10 * NS);
    g_assert_cmpint(paused, ==, 1000 * NS);
}

/* RED at a 100G port (400/1600 KB, Pmax 0.2): the marking frequency over
 * many draws at Kmin, halfway and Kmax matches the formula within 5
 * standard deviations; above Kmax every packet, a packet that is not ECT
 * none. */
static void test_ecn_red(void)
{
    cs_pkt_ecn_cfg_t c;
    cs_pkt_ecn_cfg_for_rate(&c, 100 * GBPS);
    g_assert_cmpuint(c.kmin, ==, 400000);
    g_assert_cmpuint(c.kmax, ==, 1600000);
    g_assert_cmpfloat(c.pmax, ==, 0.2);
    cs_pkt_ecn_cfg_t c25, c400;
    cs_pkt_ecn_cfg_for_rate(&c25, 25 * GBPS);
    cs_pkt_ecn_cfg_for_rate(&c400, 400 * GBPS);
    g_assert_cmpuint(c25.kmin, ==, 100000);
    g_assert_cmpuint(c25.kmax, ==, 400000);
    g_assert_cmpuint(c400.kmin, ==, 800000);
    g_assert_cmpuint(c400.kmax, ==, 3200000);
    const guint64 q[] = { 400000, 1000000, 1600000, 1600001, 5000000 };
    const double want[] = { 0, 0.1, 0.2, 1, 1 };
    const int n = 200000;
    cs_pkt_rng_t rng;
    cs_pkt_rng_seed(&rng, 42, 7);
    for (guint i = 0; i < G_N_ELEMENTS(q); i++) {
        g_assert_cmpfloat(fabs(cs_pkt_ecn_prob(&c, q[i]) - want[i]), <, 1e-12);
        int marked = 0;
        for (int k = 0; k < n; k++) {
            cs_pkt_t p = { .flags = CS_PKT_F_ECT };
            marked += cs_pkt_ecn_mark(&c, &rng, &p, q[i]);
            g_assert_cmpint(!!(p.flags & CS_PKT_F_CE), ==, p.flags != CS_PKT_F_ECT);
        }
        double sd = sqrt(n * want[i] * (1 - want[i]));
        g_test_message("RED q=%" G_GUINT64_FORMAT ": %d of %d marked, want %.0f +- %.0f",
                       q[i], marked, n, n * want[i], sd);
        g_assert_cmpfloat(fabs(marked - n * want[i]), <=, 5 * sd + 1e-9);
    }
    cs_pkt_t p = { .flags = 0 };
    g_assert_false(cs_pkt_ecn_mark(&c, &rng, &p, 5000000));
    g_assert_cmpint(p.flags, ==, 0);
    /* the same seed and stream give the same draws, another stream others */
    cs_pkt_rng_t a, b, d;
    cs_pkt_rng_seed(&a, 1, 3);
    cs_pkt_rng_seed(&b, 1, 3);
    cs_pkt_rng_seed(&d, 1, 4);
    double ua = cs_pkt_rng_uniform(&a);
    g_assert_cmpfloat(ua, ==, cs_pkt_rng_uniform(&b));
    g_assert_cmpfloat(ua, !=, cs_pkt_rng_uniform(&d));
}

/* The reaction point's arithmetic with the ConnectX defaults at 100G
 * (but RT clamped at every cut, as in the paper): the first CNP cuts to
 * 1 - alpha0/2; a second within the 4 us monitor period cuts nothing; one
 * after it cuts with alpha decayed over the periods between; the timer's
 * first expiry is fast recovery, the next ones additive (F = 1); the byte
 * counter counts 32767-B stages. Then ConnectX's clamp rule: RT stays
 * through cuts in a row, follows RC after a timer increase. */
static void test_dcqcn_rp(void)
{
    cs_pkt_dcqcn_cfg_t c;
    cs_pkt_dcqcn_cfg_connectx(&c);
    g_assert_true(cs_pkt_dcqcn_cfg_valid(&c));
    g_assert_false(c.clamp_tgt);
    c.byte_reset = 32767;             /* the byte counter's arithmetic (the preset has none) */
    cs_pkt_dcqcn_rp_t rq;
    cs_pkt_dcqcn_rp_init(&rq, &c, 100 * GBPS);
    cs_pkt_dcqcn_rp_cnp(&rq, 0);
    g_assert_true(cs_pkt_dcqcn_rp_cnp(&rq, 5000 * NS));
    g_assert_cmpfloat(rq.rt, ==, 100e9);
    g_assert_true(cs_pkt_dcqcn_rp_timer(&rq));
    double before = rq.rc;
    g_assert_true(cs_pkt_dcqcn_rp_cnp(&rq, 10000 * NS));
    g_assert_cmpfloat(rq.rt, ==, before);
    c.clamp_tgt = TRUE;
    cs_pkt_dcqcn_rp_t rp;
    cs_pkt_dcqcn_rp_init(&rp, &c, 100 * GBPS);
    g_assert_false(rp.limited);
    g_assert_cmpint(cs_pkt_dcqcn_rp_gap(&rp, 4000), ==, 0);
    g_assert_true(cs_pkt_dcqcn_rp_cnp(&rp, 0));
    double a0 = 1023.0 / 1024;
    g_assert_cmpfloat(fabs(rp.rc - 100e9 * (1 - a0 / 2)), <, 1);
    g_assert_cmpfloat(rp.rt, ==, 100e9);
    g_assert_true(rp.limited);
    g_assert_false(cs_pkt_dcqcn_rp_cnp(&rp, 3999 * NS));   /* within the monitor period */
    double rc1 = rp.rc;
    g_assert_true(cs_pkt_dcqcn_rp_cnp(&rp, 10000 * NS));
    /* alpha: period [0,1us) had CNPs (+g), [3,4us) too, the others decayed */
    double g = 5.0 / 1024, a = a0;
    for (int k = 1; k <= 10; k++)
        a = (1 - g) * a + (k == 1 || k == 4 ? g : 0);
    g_assert_cmpfloat(fabs(rp.alpha - a), <, 1e-12);
    g_assert_cmpfloat(fabs(rp.rc - rc1 * (1 - a / 2)), <, 1);
    g_assert_cmpfloat(fabs(rp.rt - rc1), <, 1e-6);
    double rc2 = rp.rc, rt2 = rp.rt;
    g_assert_true(cs_pkt_dcqcn_rp_timer(&rp));                  /* stage 0 < F: fast recovery */
    g_assert_cmpfloat(fabs(rp.rc - (rc2 + rt2) / 2), <, 1e-3);
    g_assert_cmpfloat(rp.rt, ==, rt2);
    double rc3 = rp.rc;
    g_assert_true(cs_pkt_dcqcn_rp_timer(&rp));                  /* stage 1 = F: additive */
    g_assert_cmpfloat(fabs(rp.rt - (rt2 + 5e6)), <, 1e-3);
    g_assert_cmpfloat(fabs(rp.rc - (rc3 + rp.rt) / 2), <, 1e-3);
    double rt4 = rp.rt;
    cs_pkt_dcqcn_rp_sent(&rp, 32766);
    g_assert_cmpfloat(rp.rt, ==, rt4);
    cs_pkt_dcqcn_rp_sent(&rp, 1);                               /* byte stage 0, timer 2: additive */
    g_assert_cmpfloat(fabs(rp.rt - (rt4 + 5e6)), <, 1e-3);
    g_assert_cmpint(rp.b_stage, ==, 1);
    /* both stages >= F: hyper, 50 Mb/s x (1 - 1 + 1) */
    double rt5 = rp.rt;
    cs_pkt_dcqcn_rp_sent(&rp, 32767);
    g_assert_cmpfloat(fabs(rp.rt - (rt5 + 50e6)), <, 1e-3);
    /* the gap of a 4000-B packet at RC */
    g_assert_cmpint(cs_pkt_dcqcn_rp_gap(&rp, 4000), ==, (cs_time_t)ceil(4000 * 8 * 1e12 / rp.rc));
    /* the timer ends when RC is back at the line rate */
    int n = 0;
    while (cs_pkt_dcqcn_rp_timer(&rp))
        n++;
    g_assert_cmpint(n, >, 0);
    g_assert_false(rp.limited);
    g_assert_cmpfloat(rp.rc, ==, 100e9);
    cs_pkt_dcqcn_cfg_t pc;
    cs_pkt_dcqcn_cfg_paper(&pc);
    g_assert_true(cs_pkt_dcqcn_cfg_valid(&pc));
}

/* 2:1 incast at 100G, a 16 MB buffer (each sender's share of it ~1.6
 * MB, above Kmax), flows of 40 MB; rates measured from 1 to 5 ms. */
static cs_pkt_dcqcn_cfg_t dcqcn_cx, dcqcn_paper;

static const incast_cfg_t incast_dcqcn = {
    .buffer = 16000000, .reserve = CS_PKT_MMU_RESERVE_DEFAULT, .headroom = -1, .prio = 1,
    .bytes = 40000000, .window = (cs_time_t)5000 * 1000 * NS, .settle = (cs_time_t)1000 * 1000 * NS,
    .seed = 1,
};

/* Lossy priority with the DCQCN paper's parameters: with ECN and DCQCN
 * each sender gets C/2 within 20% after a millisecond, the egress queue
 * stays below Kmax nearly always, CNPs flow, and far fewer packets are
 * dropped than without. (The ConnectX defaults at these thresholds
 * oscillate instead: docs/model-packet.md.) */
static void test_dcqcn_incast_lossy(void)
{
    cs_pkt_dcqcn_cfg_paper(&dcqcn_paper);
    incast_cfg_t ic = incast_dcqcn;
    incast_t plain, dc;
    incast(&ic, &plain);
    ic.ecn = TRUE;
    ic.dcqcn = &dcqcn_paper;
    incast(&ic, &dc);
    double half = 100e9 * cs_pkt_frame_goodput(&(cs_pkt_frame_t) { 0 }, 4096, CS_PKT_HDR_MIDDLE) / 2;
    for (int i = 0; i < 2; i++) {
        double rate = dc.settled_bytes[i] * 8 * CS_PS_PER_S / (double)(ic.window - ic.settle);
        g_assert_cmpfloat(fabs(rate / half - 1), <, 0.2);
        g_assert_cmpuint(dc.cnps_sent[i], >, 0);
        g_assert_cmpuint(dc.cnps_received[i], ==, dc.cnps_sent[i]);
        g_assert_cmpuint(dc.cuts[i], >, 0);
        g_assert_cmpuint(dc.cuts[i], <=, dc.cnps_received[i]);
        g_assert_cmpuint(plain.cnps_sent[i], ==, 0);
    }
    g_assert_cmpuint(dc.marks, >, 0);
    g_assert_cmpuint(plain.marks, ==, 0);
    g_assert_cmpuint(dc.samples, ==, 4000);
    g_assert_cmpuint(dc.samples_over_kmax, <, dc.samples / 20);
    g_assert_cmpuint(plain.dropped[0] + plain.dropped[1], >, 100);
    g_assert_cmpuint((dc.dropped[0] + dc.dropped[1]) * 10, <, plain.dropped[0] + plain.dropped[1]);
}

/* Lossless priority (PFC): DCQCN keeps the queue below the pause
 * threshold, so fewer pause frames than with PFC alone, with either
 * preset. */
static void dcqcn_lossless(const cs_pkt_dcqcn_cfg_t *d)
{
    incast_cfg_t ic = incast_dcqcn;
    ic.prio = 3;
    incast_t pfc, dc;
    incast(&ic, &pfc);
    ic.ecn = TRUE;
    ic.dcqcn = d;
    incast(&ic, &dc);
    for (int i = 0; i < 2; i++) {
        g_assert_cmpuint(pfc.dropped[i] + dc.dropped[i], ==, 0);
        g_assert_cmpuint(dc.delivered[i], ==, ic.bytes);
    }
    g_assert_cmpuint(pfc.xoff[0] + pfc.xoff[1], >, 0);
    g_assert_cmpuint(dc.xoff[0] + dc.xoff[1], <, pfc.xoff[0] + pfc.xoff[1]);
    g_assert_cmpuint(dc.cnps_sent[0] + dc.cnps_sent[1], >, 0);
}

static void test_dcqcn_incast_lossless(void)
{
    cs_pkt_dcqcn_cfg_connectx(&dcqcn_cx);
    cs_pkt_dcqcn_cfg_paper(&dcqcn_paper);
    dcqcn_lossless(&dcqcn_cx);
    dcqcn_lossless(&dcqcn_paper);
}

/* Same seed, same counters; another seed, other RED draws. */
static void test_dcqcn_determinism(void)
{
    cs_pkt_dcqcn_cfg_connectx(&dcqcn_cx);
    incast_cfg_t ic = incast_dcqcn;
    ic.ecn = TRUE;
    ic.dcqcn = &dcqcn_cx;
    ic.bytes = 5000000;
    ic.settle = 0;
    ic.window = 200 * 1000 * NS;
    incast_t r1, r2, r3;
    incast(&ic, &r1);
    incast(&ic, &r2);
    g_assert_cmpuint(r1.marks, >, 0);
    g_assert_cmpmem(&r1, sizeof r1, &r2, sizeof r2);
    ic.seed = 2;
    incast(&ic, &r3);
    g_assert_cmpuint(r3.marks, >, 0);
    g_assert_true(memcmp(&r1, &r3, sizeof r1) != 0);
}

/* ---- queue pairs (cs_pkt_net_qp_*) ------------------------------------- */

#define QP_MAX 8
#define QP_EV_MAX 16

/* Every hook call, per QP, with its time (all 64-bit fields: no padding,
 * so two logs compare with memcmp). */
typedef struct {
    guint64 nsent[QP_MAX], ndeliv[QP_MAX], nfailed[QP_MAX];
    cs_time_t sent[QP_MAX][QP_EV_MAX], deliv[QP_MAX][QP_EV_MAX], failed[QP_MAX];
} qp_log_t;

/* Records the n-th event of a kind (the first QP_EV_MAX kept). */
static void qp_log_event(cs_time_t (*at)[QP_EV_MAX], guint64 *n, int qp, cs_time_t now)
{
    g_assert_cmpint(qp, <, QP_MAX);
    if (n[qp] < QP_EV_MAX)
        at[qp][n[qp]] = now;
    n[qp]++;
}

static void qp_log_sent(void *ctx, int qp, cs_time_t now)
{
    qp_log_t *l = ctx;
    qp_log_event(l->sent, l->nsent, qp, now);
}

static void qp_log_delivered(void *ctx, int qp, cs_time_t now)
{
    qp_log_t *l = ctx;
    qp_log_event(l->deliv, l->ndeliv, qp, now);
}

static void qp_log_failed(void *ctx, int qp, cs_time_t now)
{
    qp_log_t *l = ctx;
    g_assert_cmpint(qp, <, QP_MAX);
    l->failed[qp] = now;
    l->nfailed[qp]++;
}

static const cs_pkt_qp_hooks_t qp_log_hooks = { qp_log_sent, qp_log_delivered, qp_log_failed };

/* Host a -> switch s -> host b: a->s at 'up' bps with 1000 ns, s->b at
 * 'down' with 500 ns, and with 'back' the links the other way at the same
 * rates and delays (ACKs). route[0..1] = a->s, s->b; rev[0..1] = b->s,
 * s->a (-1 without 'back'). */
static cs_pkt_net_t *qp_chain(guint64 up, guint64 down, gboolean back, int route[2], int rev[2], int *sw)
{
    cs_pkt_net_t *net = cs_pkt_net_new();
    int a = cs_pkt_net_add_host(net), s = cs_pkt_net_add_switch(net), b = cs_pkt_net_add_host(net);
    cs_pkt_port_cfg_t cu, cd;
    cs_pkt_port_cfg_init(&cu, up, 1000 * NS);
    cs_pkt_port_cfg_init(&cd, down, 500 * NS);
    route[0] = cs_pkt_net_add_link(net, a, s, &cu);
    route[1] = cs_pkt_net_add_link(net, s, b, &cd);
    rev[0] = rev[1] = -1;
    if (back) {
        rev[0] = cs_pkt_net_add_link(net, b, s, &cd);
        rev[1] = cs_pkt_net_add_link(net, s, a, &cu);
    }
    if (sw != NULL)
        *sw = s;
    return net;
}

static cs_pkt_qp_cfg_t qp_cfg(guint32 ack_interval, cs_time_t timeout, int retry_cnt, int prio)
{
    return (cs_pkt_qp_cfg_t) { .mtu = 4096, .prio = prio, .ack_interval = ack_interval,
                               .timeout = timeout, .retry_cnt = retry_cnt };
}

/* The three messages of /pkt/qp/messages and /pkt/qp/acks on a 100G ->
 * 400G chain, MTU 4096, WRITEs (RETH, 16 B, on each message's first
 * packet; 82 B of RoCEv2 framing on every packet). Serialization is wire
 * x 80 ps at 100G, wire x 20 ps at 400G (both exact).
 *  m1: 10000 B at 0: packets 4096+98 = 4194, 4096+82 = 4178, 1808+82 =
 *      1890 wire B: 335520, 334240, 151200 ps on a->s. The last starts at
 *      335520 + 334240 = 669760 (sent), ends 820960, reaches s at
 *      1820960; s->b is free (its previous packet, at s from 1669760,
 *      took 83560 ps), 1890 x 20 = 37800 ps, +500 ns: delivered 2358760.
 *  m2: 4096 B at 5 us: one 4194-B packet: sent 5000000, ends 5335520, at
 *      s 6335520, + 83880 + 500000: delivered 6919400.
 *  m3: 20000 B at 5.1 us, while m2's packet is still on a->s (to
 *      5335520): packets 4194, 4178 x 3, 3616+82 = 3698 wire B start on
 *      a->s at 5335520 + 335520 + 3 x 334240 = 6673760 (sent), end +
 *      3698 x 80 = 295840 -> 6969600, at s 7969600 (s->b long idle), +
 *      3698 x 20 = 73960 + 500000: delivered 8543560. */
static const guint64 qp_msg_bytes[3] = { 10000, 4096, 20000 };
static const cs_time_t qp_msg_post[3] = { 0, 5000 * NS, 5100 * NS };
static const cs_time_t qp_msg_sent[3] = { 669760, 5000000, 6673760 };
static const cs_time_t qp_msg_deliv[3] = { 2358760, 6919400, 8543560 };

static void qp_messages(guint32 ack_interval, qp_log_t *log, guint64 ack_pkts[2], guint64 ack_bytes[2],
                        int *qp_out, cs_pkt_net_t **net_out)
{
    int route[2], rev[2];
    cs_pkt_net_t *net = qp_chain(100 * GBPS, 400 * GBPS, ack_interval > 0, route, rev, NULL);
    cs_pkt_qp_cfg_t qc = qp_cfg(ack_interval, ack_interval > 0 ? CS_PKT_QP_TIMEOUT_PS(4) : 0, 7, 3);
    int qp = cs_pkt_net_add_qp(net, route, 2, &qc);
    g_assert_cmpint(qp, ==, 0);
    memset(log, 0, sizeof *log);
    cs_pkt_net_set_qp_hooks(net, &qp_log_hooks, log);
    for (int m = 0; m < 3; m++) {
        cs_pkt_net_run(net, qp_msg_post[m]);
        cs_pkt_net_qp_post(net, qp, qp_msg_bytes[m], qp_msg_post[m]);
    }
    cs_pkt_net_run(net, CS_TIME_NEVER);
    g_assert_cmpint(cs_pkt_net_next(net), ==, CS_TIME_NEVER);
    g_assert_cmpuint(cs_pkt_pool_in_use(cs_pkt_net_pool(net)), ==, 0);
    for (int i = 0; i < 2; i++) {
        ack_pkts[i] = rev[i] < 0 ? 0 : cs_pkt_port_tx_pkts(cs_pkt_net_port(net, rev[i]), 3);
        ack_bytes[i] = rev[i] < 0 ? 0 : cs_pkt_port_tx_bytes(cs_pkt_net_port(net, rev[i]), 3);
    }
    *qp_out = qp;
    *net_out = net;
}

static void qp_messages_check(const qp_log_t *log, const cs_pkt_net_t *net, int qp)
{
    g_assert_cmpuint(log->nsent[qp], ==, 3);
    g_assert_cmpuint(log->ndeliv[qp], ==, 3);
    g_assert_cmpuint(log->nfailed[qp], ==, 0);
    for (int m = 0; m < 3; m++) {
        g_assert_cmpint(log->sent[qp][m], ==, qp_msg_sent[m]);
        g_assert_cmpint(log->deliv[qp][m], ==, qp_msg_deliv[m]);
        g_assert_cmpint(log->sent[qp][m], <, log->deliv[qp][m]);
    }
    g_assert_cmpuint(cs_pkt_net_flow_delivered(net, qp), ==, 10000 + 4096 + 20000);
    g_assert_cmpint(cs_pkt_net_flow_done(net, qp), ==, qp_msg_deliv[2]);
    g_assert_cmpuint(cs_pkt_net_qp_retransmitted(net, qp), ==, 0);
    g_assert_cmpuint(cs_pkt_net_qp_timeouts(net, qp), ==, 0);
    g_assert_cmpuint(cs_pkt_net_qp_naks(net, qp), ==, 0);
    g_assert_cmpuint(cs_pkt_net_qp_out_of_order(net, qp), ==, 0);
    g_assert_false(cs_pkt_net_qp_failed(net, qp));
}

/* Three messages posted at different times, ACKs off: each reported sent
 * as its last packet starts on the host's wire (the port's 'dequeued'
 * moment) and delivered as that packet's last bit reaches b, in order. */
static void test_qp_messages(void)
{
    qp_log_t log;
    guint64 ack_pkts[2], ack_bytes[2];
    int qp;
    cs_pkt_net_t *net;
    qp_messages(0, &log, ack_pkts, ack_bytes, &qp, &net);
    qp_messages_check(&log, net, qp);
    cs_pkt_net_free(net);
}

/* The same with an ACK for every packet: 9 data packets -> 9 ACKs of
 * 82 + 4 (AETH) = 86 wire B on b->s and on s->a; they travel the other
 * way, so the data's times are those without ACKs; the timer (65.5 us)
 * never fires. */
static void test_qp_acks(void)
{
    qp_log_t log;
    guint64 ack_pkts[2], ack_bytes[2];
    int qp;
    cs_pkt_net_t *net;
    qp_messages(1, &log, ack_pkts, ack_bytes, &qp, &net);
    qp_messages_check(&log, net, qp);
    for (int i = 0; i < 2; i++) {
        g_assert_cmpuint(ack_pkts[i], ==, 3 + 1 + 5);
        g_assert_cmpuint(ack_bytes[i], ==, 9 * (CS_PKT_ROCE_OVERHEAD + CS_PKT_AETH));
    }
    g_assert_cmpuint(CS_PKT_ROCE_OVERHEAD + CS_PKT_AETH, ==, 86);
    cs_pkt_net_free(net);
    /* ACKs every 4th packet and on each message's last, the count
     * restarting at each ACK: the QP's packets 1-3 are m1 (ACK at its last,
     * 3), 4 is m2 (ACK), 5-9 are m3 (ACK at 8, the 4th since 4, and at its
     * last, 9): 4 ACKs */
    qp_messages(4, &log, ack_pkts, ack_bytes, &qp, &net);
    qp_messages_check(&log, net, qp);
    g_assert_cmpuint(ack_pkts[0], ==, 4);
    g_assert_cmpuint(ack_pkts[1], ==, 4);
    cs_pkt_net_free(net);
    /* 40 messages posted at once (1000 B to 40000 B, 820000 B in all):
     * the QP's ring of unfinished messages grows past its first 4 while
     * they are in flight; each is reported sent and delivered once, in
     * order, delivered after sent */
    int route[2], rev[2];
    net = qp_chain(100 * GBPS, 400 * GBPS, TRUE, route, rev, NULL);
    cs_pkt_qp_cfg_t qc = qp_cfg(1, CS_PKT_QP_TIMEOUT_PS(4), 7, 3);
    qp = cs_pkt_net_add_qp(net, route, 2, &qc);
    memset(&log, 0, sizeof log);
    cs_pkt_net_set_qp_hooks(net, &qp_log_hooks, &log);
    for (guint64 k = 1; k <= 40; k++)
        cs_pkt_net_qp_post(net, qp, 1000 * k, 0);
    cs_pkt_net_run(net, CS_TIME_NEVER);
    g_assert_cmpuint(log.nsent[qp], ==, 40);
    g_assert_cmpuint(log.ndeliv[qp], ==, 40);
    for (int k = 0; k < QP_EV_MAX; k++) {
        g_assert_cmpint(log.sent[qp][k], <, log.deliv[qp][k]);
        if (k > 0)
            g_assert_cmpint(log.deliv[qp][k - 1], <, log.deliv[qp][k]);
    }
    g_assert_cmpuint(cs_pkt_net_flow_delivered(net, qp), ==, 820000);
    g_assert_cmpuint(cs_pkt_net_qp_retransmitted(net, qp), ==, 0);
    g_assert_cmpuint(cs_pkt_pool_in_use(cs_pkt_net_pool(net)), ==, 0);
    cs_pkt_net_free(net);
}

/* Once every packet is acknowledged, no timer is left: the net has no
 * next event and its clock stays at the last ACK. m1 of /pkt/qp/messages
 * alone with an ACK per packet: its last packet reaches b at 2358760;
 * its ACK (86 wire B) takes 86 x 20 = 1720 ps on b->s at 400G + 500 ns,
 * then 86 x 80 = 6880 ps on s->a at 100G + 1000 ns (both links idle: the
 * ACK before it left b 151200 ps earlier): at a at 3867360. */
static void test_qp_idle_no_timer(void)
{
    int route[2], rev[2];
    g_autoptr(cs_pkt_net_t) net = qp_chain(100 * GBPS, 400 * GBPS, TRUE, route, rev, NULL);
    cs_pkt_qp_cfg_t qc = qp_cfg(1, CS_PKT_QP_TIMEOUT_PS(20), 7, 3);
    int qp = cs_pkt_net_add_qp(net, route, 2, &qc);
    qp_log_t log = { 0 };
    cs_pkt_net_set_qp_hooks(net, &qp_log_hooks, &log);
    cs_pkt_net_qp_post(net, qp, 10000, 0);
    cs_pkt_net_run(net, 3867360);
    g_assert_cmpint(log.deliv[qp][0], ==, 2358760);
    g_assert_cmpint(cs_pkt_net_next(net), ==, CS_TIME_NEVER);
    cs_pkt_net_run(net, CS_TIME_NEVER);
    g_assert_cmpint(cs_pkt_net_now(net), ==, 3867360);
    g_assert_cmpuint(cs_pkt_net_qp_timeouts(net, qp), ==, 0);
    /* and it starts again with the next message's first packet: a lost
     * tail would still time out (/pkt/qp/tail-loss-timeout) */
    cs_pkt_net_qp_post(net, qp, 4096, 4000 * NS);
    g_assert_cmpint(cs_pkt_net_next(net), !=, CS_TIME_NEVER);
    cs_pkt_net_run(net, CS_TIME_NEVER);
    g_assert_cmpuint(cs_pkt_net_flow_delivered(net, qp), ==, 10000 + 4096);
    g_assert_cmpint(cs_pkt_net_now(net), <, 4000 * NS + CS_PKT_QP_TIMEOUT_PS(20));
}

/* A host-side rate cap of 25 Gb/s on a 100G host link (the switch's
 * 400G link never queues): packets start a gap of wire x 8 / cap apart,
 * 4178 x 320 = 1336960 ps for a full one (4194 x 320 = 1342080 for the
 * first, with RETH), so the goodput is 25 G x 4096 / 4178; raising the
 * cap to 50G doubles it. */
static void test_qp_rate_cap(void)
{
    int route[2], rev[2];
    /* exact times first: 10 full packets at 25G; the last starts at
     * 1342080 + 8 x 1336960 = 12037760 (sent), ends + 334240, reaches s
     * 1 us later, + 83560 at 400G + 500 ns: delivered 13955560 */
    {
        g_autoptr(cs_pkt_net_t) net = qp_chain(100 * GBPS, 400 * GBPS, FALSE, route, rev, NULL);
        cs_pkt_qp_cfg_t qc = qp_cfg(0, 0, 7, 3);
        int qp = cs_pkt_net_add_qp(net, route, 2, &qc);
        qp_log_t log = { 0 };
        cs_pkt_net_set_qp_hooks(net, &qp_log_hooks, &log);
        cs_pkt_net_qp_set_rate(net, qp, 25e9, 0);
        cs_pkt_net_qp_post(net, qp, 10 * 4096, 0);
        cs_pkt_net_run(net, CS_TIME_NEVER);
        g_assert_cmpuint(log.nsent[qp], ==, 1);
        g_assert_cmpuint(log.ndeliv[qp], ==, 1);
        g_assert_cmpint(log.sent[qp][0], ==, 12037760);
        g_assert_cmpint(log.deliv[qp][0], ==, 13955560);
    }
    /* raising the cap mid-gap: 3 packets at 25G start at 0 and 1342080,
     * the third would at 1342080 + 1336960 = 2679040; 50G from 2 us
     * halves what is left of the gap, 679040 -> 339520: it goes at
     * 2339520 (the pacer earned 657920 ps of credit at 25G, the rest at
     * 50G) */
    {
        g_autoptr(cs_pkt_net_t) net = qp_chain(100 * GBPS, 400 * GBPS, FALSE, route, rev, NULL);
        cs_pkt_qp_cfg_t qc = qp_cfg(0, 0, 7, 3);
        int qp = cs_pkt_net_add_qp(net, route, 2, &qc);
        qp_log_t log = { 0 };
        cs_pkt_net_set_qp_hooks(net, &qp_log_hooks, &log);
        cs_pkt_net_qp_set_rate(net, qp, 25e9, 0);
        cs_pkt_net_qp_post(net, qp, 3 * 4096, 0);
        cs_pkt_net_run(net, 2000 * NS);
        g_assert_cmpuint(log.nsent[qp], ==, 0);
        cs_pkt_net_qp_set_rate(net, qp, 50e9, 2000 * NS);
        cs_pkt_net_run(net, CS_TIME_NEVER);
        g_assert_cmpuint(log.nsent[qp], ==, 1);
        g_assert_cmpint(log.sent[qp][0], ==, 2339520);
    }
    g_autoptr(cs_pkt_net_t) net = qp_chain(100 * GBPS, 400 * GBPS, FALSE, route, rev, NULL);
    cs_pkt_qp_cfg_t qc = qp_cfg(0, 0, 7, 3);
    int qp = cs_pkt_net_add_qp(net, route, 2, &qc);
    cs_pkt_net_qp_set_rate(net, qp, 25e9, 0);
    cs_pkt_net_qp_post(net, qp, 12000ull * 4096, 0);
    const cs_time_t ms = (cs_time_t)1000 * 1000 * NS;
    double ratio = 4096.0 / 4178;
    guint64 d[5];
    for (int k = 1; k <= 4; k++) {
        if (k == 3)
            cs_pkt_net_qp_set_rate(net, qp, 50e9, 2 * ms);
        cs_pkt_net_run(net, k * ms);
        d[k] = cs_pkt_net_flow_delivered(net, qp);
    }
    double r25 = (double)(d[2] - d[1]) * 8 * CS_PS_PER_S / (double)ms;
    double r50 = (double)(d[4] - d[3]) * 8 * CS_PS_PER_S / (double)ms;
    g_test_message("rate cap: %.3f Gb/s at 25G, %.3f Gb/s at 50G", r25 / 1e9, r50 / 1e9);
    g_assert_cmpfloat(fabs(r25 / (25e9 * ratio) - 1), <, 0.01);
    g_assert_cmpfloat(fabs(r50 / (50e9 * ratio) - 1), <, 0.01);
    /* lifting the cap: line rate, 100G x 4096 / 4178 (and the message completes) */
    cs_pkt_net_qp_set_rate(net, qp, 0, 4 * ms);
    cs_pkt_net_run(net, 5 * ms);
    double r100 = (double)(cs_pkt_net_flow_delivered(net, qp) - d[4]) * 8 * CS_PS_PER_S / (double)ms;
    g_assert_cmpfloat(fabs(r100 / (100e9 * ratio) - 1), <, 0.01);
    cs_pkt_net_run(net, CS_TIME_NEVER);
    g_assert_cmpuint(cs_pkt_net_flow_delivered(net, qp), ==, 12000ull * 4096);
}

/* A DCQCN QP cut during one message and idle after it: the NIC's
 * increase timer keeps running (its phase set by the last cut), so the
 * next message starts at the rate of every expiry up to its post, not at
 * the cut rate. 400G into 100G through a switch that marks every packet
 * (Kmin 0, Kmax 1 B); ConnectX values without the byte counter, so the
 * timer alone raises the rate. Expected: the state at the end of the
 * first message with the expiries it had not applied, floor((post -
 * last_cut) / timer) - t_stage of them, applied at once. */
static void test_qp_dcqcn_idle_timer(void)
{
    int route[2], rev[2], sw;
    g_autoptr(cs_pkt_net_t) net = qp_chain(400 * GBPS, 100 * GBPS, TRUE, route, rev, &sw);
    cs_pkt_ecn_cfg_t ecn = { .kmin = 0, .kmax = 1, .pmax = 1 };
    g_assert_cmpint(cs_pkt_net_set_ecn(net, sw, &ecn), ==, 0);
    cs_pkt_qp_cfg_t qc = qp_cfg(0, 0, 7, 3);
    int qp = cs_pkt_net_add_qp(net, route, 2, &qc);
    cs_pkt_dcqcn_cfg_t cx;
    cs_pkt_dcqcn_cfg_connectx(&cx);
    cx.byte_reset = 0;
    g_assert_cmpint(cs_pkt_net_set_dcqcn(net, qp, &cx), ==, 0);
    cs_pkt_net_qp_post(net, qp, 1000000, 0);
    cs_pkt_net_run(net, CS_TIME_NEVER);
    g_assert_cmpuint(cs_pkt_net_flow_delivered(net, qp), ==, 1000000);
    const cs_pkt_dcqcn_rp_t *rp = cs_pkt_net_flow_rp(net, qp);
    g_assert_cmpuint(rp->cuts, >, 0);
    g_assert_true(rp->limited);
    cs_pkt_dcqcn_rp_t want = *rp;
    cs_time_t period = cx.timer;
    cs_time_t post = rp->last_cut + 5 * period + period / 2;
    g_assert_cmpint(cs_pkt_net_now(net), <, post);
    guint64 k = (guint64)((post - rp->last_cut) / period) - (guint64)rp->t_stage;
    g_assert_cmpuint(k, >, 0);
    g_assert_true(cs_pkt_dcqcn_rp_timers(&want, k));
    cs_pkt_net_run(net, post);
    cs_pkt_net_qp_post(net, qp, 4096, post);
    rp = cs_pkt_net_flow_rp(net, qp);
    g_test_message("idle %" G_GUINT64_FORMAT " expiries: %.3f -> %.3f Gb/s", k, want.rc / 1e9, rp->rc / 1e9);
    g_assert_cmpfloat(rp->rc, ==, want.rc);
    g_assert_cmpfloat(rp->rt, ==, want.rt);
    g_assert_cmpint(rp->t_stage, ==, want.t_stage);
    g_assert_true(rp->limited);
}

/* n senders at 100G through switch s into host b at 100G (500 ns cables,
 * links both ways), a 1 MB buffer, lossy priority 1 (no PFC), one QP each
 * with an ACK per packet, a 65.5 us timeout (NCCL_IB_TIMEOUT 4) and 7
 * retries, QP i posting 'bytes' at i x 'stagger'. */
typedef struct {
    guint64 delivered[QP_MAX], dropped[QP_MAX], retx[QP_MAX], timeouts[QP_MAX];
    guint64 naks[QP_MAX], ooo[QP_MAX], failed[QP_MAX];
    guint64 events, end;
    qp_log_t log;
} qp_incast_t;

static void qp_incast_sel(int n, guint64 bytes, cs_time_t stagger, gboolean selective, qp_incast_t *r)
{
    g_assert_cmpint(n, <=, QP_MAX);
    memset(r, 0, sizeof *r);
    g_autoptr(cs_pkt_net_t) net = cs_pkt_net_new();
    int h[QP_MAX], in[QP_MAX];
    for (int i = 0; i < n; i++)
        h[i] = cs_pkt_net_add_host(net);
    int s = cs_pkt_net_add_switch(net), b = cs_pkt_net_add_host(net);
    cs_pkt_mmu_cfg_t mc;
    cs_pkt_mmu_cfg_init(&mc, 1000000);
    g_assert_false(mc.lossless >> 1 & 1);
    g_assert_cmpint(cs_pkt_net_set_buffer(net, s, &mc, -1), ==, 0);
    cs_pkt_port_cfg_t pc;
    cs_pkt_port_cfg_init(&pc, 100 * GBPS, 500 * NS);
    int sb = cs_pkt_net_add_link(net, s, b, &pc);
    cs_pkt_net_add_link(net, b, s, &pc);
    for (int i = 0; i < n; i++) {
        in[i] = cs_pkt_net_add_link(net, h[i], s, &pc);
        cs_pkt_net_add_link(net, s, h[i], &pc);
    }
    cs_pkt_net_set_qp_hooks(net, &qp_log_hooks, &r->log);
    cs_pkt_qp_cfg_t qc = qp_cfg(1, CS_PKT_QP_TIMEOUT_PS(4), 7, 1);
    qc.selective = selective;
    for (int i = 0; i < n; i++) {
        int route[2] = { in[i], sb };
        g_assert_cmpint(cs_pkt_net_add_qp(net, route, 2, &qc), ==, i);
    }
    for (int i = 0; i < n; i++) {
        r->events += cs_pkt_net_run(net, i * stagger);
        cs_pkt_net_qp_post(net, i, bytes, i * stagger);
    }
    r->events += cs_pkt_net_run(net, CS_TIME_NEVER);
    r->end = (guint64)cs_pkt_net_now(net);
    g_assert_cmpint(cs_pkt_net_next(net), ==, CS_TIME_NEVER);
    g_assert_cmpuint(cs_pkt_mmu_used(cs_pkt_net_mmu(net, s)), ==, 0);
    g_assert_cmpuint(cs_pkt_pool_in_use(cs_pkt_net_pool(net)), ==, 0);
    for (int i = 0; i < n; i++) {
        r->delivered[i] = cs_pkt_net_flow_delivered(net, i);
        r->dropped[i] = cs_pkt_net_flow_dropped(net, i);
        r->retx[i] = cs_pkt_net_qp_retransmitted(net, i);
        r->timeouts[i] = cs_pkt_net_qp_timeouts(net, i);
        r->naks[i] = cs_pkt_net_qp_naks(net, i);
        r->ooo[i] = cs_pkt_net_qp_out_of_order(net, i);
        r->failed[i] = cs_pkt_net_qp_failed(net, i);
        g_test_message("qp incast %d:1, qp %d: delivered %" G_GUINT64_FORMAT " at %.1f us, dropped %"
                       G_GUINT64_FORMAT ", retransmitted %" G_GUINT64_FORMAT ", timeouts %" G_GUINT64_FORMAT
                       ", naks %" G_GUINT64_FORMAT ", out of order %" G_GUINT64_FORMAT,
                       n, i, r->delivered[i], cs_pkt_net_flow_done(net, i) / 1e6, r->dropped[i], r->retx[i],
                       r->timeouts[i], r->naks[i], r->ooo[i]);
    }
}

static void qp_incast(int n, guint64 bytes, cs_time_t stagger, qp_incast_t *r)
{
    qp_incast_sel(n, bytes, stagger, FALSE, r);
}

/* Selective repeat on the lossy 2:1 incast of /pkt/qp/gbn-lossy: the
 * receiver keeps what follows a gap, so the senders send again only what
 * was dropped: every byte arrives, each message is reported once, and
 * fewer packets are sent again than with go-back-N (which sends again
 * every packet after each gap). A dropped packet is sent again at least
 * once, so retransmitted >= dropped - (drops of the last tries, which the
 * timer re-sends in its go-back) for each QP; NAKs carry each gap once. */
static void test_qp_selective_lossy(void)
{
    const guint64 bytes = 2000000;
    qp_incast_t g, r;
    qp_incast_sel(2, bytes, 0, FALSE, &g);
    qp_incast_sel(2, bytes, 0, TRUE, &r);
    guint64 gretx = 0, sretx = 0;
    for (int i = 0; i < 2; i++) {
        g_assert_cmpuint(r.dropped[i], >, 0);
        g_assert_cmpuint(r.delivered[i], ==, bytes);
        g_assert_cmpuint(r.failed[i], ==, 0);
        g_assert_cmpuint(r.log.nsent[i], ==, 1);
        g_assert_cmpuint(r.log.ndeliv[i], ==, 1);
        g_assert_cmpuint(r.log.nfailed[i], ==, 0);
        g_assert_cmpint(r.log.sent[i][0], <, r.log.deliv[i][0]);
        g_assert_cmpuint(r.naks[i], >, 0);
        g_assert_cmpuint(r.retx[i], >=, r.naks[i]);
        gretx += g.retx[i];
        sretx += r.retx[i];
    }
    g_test_message("2:1 lossy: retransmitted %" G_GUINT64_FORMAT " (go-back-N) vs %" G_GUINT64_FORMAT
                   " (selective); done at %.1f vs %.1f us", gretx, sretx, g.end / 1e6, r.end / 1e6);
    g_assert_cmpuint(sretx, <, gretx);
}

/* Lossy 2:1 incast: the switch drops (each sender's group fills its
 * share of the buffer at 100G while s->b drains it at 50G), the receiver
 * NAKs the gaps, go-back-N and the timer recover: every byte arrives,
 * each message reported sent then delivered once, no QP fails. */
static void test_qp_gbn_lossy(void)
{
    const guint64 bytes = 2000000;
    qp_incast_t r;
    qp_incast(2, bytes, 0, &r);
    for (int i = 0; i < 2; i++) {
        g_assert_cmpuint(r.dropped[i], >, 0);
        g_assert_cmpuint(r.delivered[i], ==, bytes);
        g_assert_cmpuint(r.failed[i], ==, 0);
        g_assert_cmpuint(r.log.nfailed[i], ==, 0);
        g_assert_cmpuint(r.log.nsent[i], ==, 1);
        g_assert_cmpuint(r.log.ndeliv[i], ==, 1);
        g_assert_cmpint(r.log.sent[i][0], <, r.log.deliv[i][0]);
        g_assert_cmpuint(r.retx[i], >, 0);
        g_assert_cmpuint(r.naks[i], >, 0);
        /* recovery is by NAK, the timer a rare fallback */
        g_assert_cmpuint(r.timeouts[i] * 10, <, r.naks[i]);
        /* one NAK per gap: each gap drops every packet sent before its
         * go-back arrives, a round trip of 2 us of cable alone (6 packet
         * times at 100G) plus the queue */
        g_assert_cmpuint(r.naks[i] * 4, <, r.ooo[i]);
    }
}

/* The same at 4:1 (1 MB each): each QP either completes or fails once
 * (its 'failed' hook, no 'delivered'), and the run ends (no livelock).
 * Today every QP fails: each sender's group is admitted one packet in
 * four, at a fixed phase of the host's never-idle packet grid, and the
 * retransmission timer's period (65.536 us, 196.07 packet times of
 * 4178 B at 100G) keeps the go-back packet (the oldest unacknowledged)
 * on a dropped slot at every expiry; after the first NAK the receiver
 * stays silent (one NAK per gap), so only the timer could recover. A
 * model question (no congestion control, no jitter), reported as
 * incomplete rather than asserted either way. */
static void test_qp_gbn_lossy_4to1(void)
{
    const guint64 bytes = 1000000;
    qp_incast_t r;
    qp_incast(4, bytes, 0, &r);
    int failed = 0;
    for (int i = 0; i < 4; i++) {
        g_assert_cmpuint(r.dropped[i], >, 0);
        g_assert_cmpuint(r.log.nsent[i], <=, 1);
        if (r.failed[i]) {
            failed++;
            g_assert_cmpuint(r.log.nfailed[i], ==, 1);
            g_assert_cmpuint(r.log.ndeliv[i], ==, 0);
            g_assert_cmpuint(r.delivered[i], <, bytes);
            g_assert_cmpuint(r.timeouts[i], >=, 8);
            g_assert_cmpint(r.log.failed[i], <=, (cs_time_t)r.end);
        } else {
            g_assert_cmpuint(r.log.nfailed[i], ==, 0);
            g_assert_cmpuint(r.log.nsent[i], ==, 1);
            g_assert_cmpuint(r.log.ndeliv[i], ==, 1);
            g_assert_cmpuint(r.delivered[i], ==, bytes);
        }
    }
    if (failed > 0)
        g_test_incomplete("lossy 4:1 go-back-N without congestion control: QPs exhaust their retries "
                          "(the go-back packet phase-locked on a dropped slot)");
}

/* The chain at 100G up and 10G down with a 3-packet tail-drop buffer at
 * s (12634 B = 3 x 4178 + 100: no reserve, no lossless priority, an alpha
 * so large the dynamic threshold never binds, so only "memory full"
 * drops). An 8-packet message (8 x 4096 B: 4194, then 4178 wire B)
 * reaches s every 334240 ps while s->b takes 4194 x 800 = 3355200 ps for
 * the first: p0 starts on s->b at once (its bytes released), p1-p3 fill
 * the buffer, p4-p7 (at s by 1 us + 335520 + 7 x 334240 = 3675200 <
 * 4690720, when s->b frees) are dropped. The receiver sees p0-p3 in
 * order and no gap, so no NAK: only the timer recovers.
 *  s->b sends p3 from 11375520 to 14717920, b has it 500 ns later
 *  (15217920); its ACK (86 B: 68800 ps at 10G, 500 ns, 6880 ps at 100G,
 *  1 us) reaches a at 16793600, the timer's deadline becomes 16793600 +
 *  65536000 = 82329600: then p4-p7 go again (4 retransmitted), p4 starts
 *  on s->b at 82329600 + 334240 + 1 us = 83663840 and p7 ends 4 x 3342400
 *  later, 97033440, delivered 500 ns after: 97533440.
 * The same message again at 200 us, all idle by then (the last ACK at
 * 99109120, no timer left after it): the same times 200 us later. With one retry allowed, the second timeout must not fail
 * the QP: the ACKs between restored its retries. */
static void test_qp_tail_loss_timeout(void)
{
    int route[2], rev[2], s;
    g_autoptr(cs_pkt_net_t) net = qp_chain(100 * GBPS, 10 * GBPS, TRUE, route, rev, &s);
    cs_pkt_mmu_cfg_t mc;
    cs_pkt_mmu_cfg_init(&mc, 3 * 4178 + 100);
    mc.reserve = 0;
    mc.lossless = 0;
    mc.alpha = 1e6;
    g_assert_cmpint(cs_pkt_net_set_buffer(net, s, &mc, -1), ==, 0);
    cs_pkt_qp_cfg_t qc = qp_cfg(1, CS_PKT_QP_TIMEOUT_PS(4), 1, 3);
    g_assert_cmpint(CS_PKT_QP_TIMEOUT_PS(4), ==, 65536000);
    int qp = cs_pkt_net_add_qp(net, route, 2, &qc);
    qp_log_t log = { 0 };
    cs_pkt_net_set_qp_hooks(net, &qp_log_hooks, &log);
    const cs_time_t again = 200 * 1000 * NS;
    for (guint64 m = 1; m <= 2; m++) {
        cs_time_t t0 = m == 1 ? 0 : again;
        cs_pkt_net_run(net, t0);
        g_assert_cmpint(cs_pkt_net_next(net), ==, CS_TIME_NEVER);
        cs_pkt_net_qp_post(net, qp, 8 * 4096, t0);
        cs_pkt_net_run(net, CS_TIME_NEVER);
        g_assert_cmpuint(cs_pkt_net_flow_dropped(net, qp), ==, 4 * m);
        g_assert_cmpuint(cs_pkt_net_qp_timeouts(net, qp), ==, m);
        g_assert_cmpuint(cs_pkt_net_qp_retransmitted(net, qp), ==, 4 * m);
        g_assert_cmpuint(cs_pkt_net_qp_naks(net, qp), ==, 0);
        g_assert_cmpuint(cs_pkt_net_qp_out_of_order(net, qp), ==, 0);
        g_assert_false(cs_pkt_net_qp_failed(net, qp));
        g_assert_cmpuint(cs_pkt_net_flow_delivered(net, qp), ==, m * 8 * 4096);
        g_assert_cmpuint(log.nsent[qp], ==, m);
        g_assert_cmpint(log.sent[qp][m - 1], ==, t0 + 335520 + 6 * 334240);   /* p7's first start */
        g_assert_cmpuint(log.ndeliv[qp], ==, m);
        g_assert_cmpint(log.deliv[qp][m - 1], ==, t0 + 97533440);
        g_assert_cmpuint(log.nfailed[qp], ==, 0);
        g_assert_cmpint(cs_pkt_net_next(net), ==, CS_TIME_NEVER);
        g_assert_cmpuint(cs_pkt_mmu_used(cs_pkt_net_mmu(net, s)), ==, 0);
        g_assert_cmpuint(cs_pkt_pool_in_use(cs_pkt_net_pool(net)), ==, 0);
    }
}

/* A switch with no buffer at all (0 B: every packet is "memory full")
 * drops every packet of a 3-packet message (4194, 4178, 1890 wire B)
 * posted at 1 us: the timer, armed as the first packet starts on a->s at
 * 1 us, expires every 'timeout' with no ACK, each time sending the three
 * again, and the (retry_cnt + 1)-th expiry fails the QP, once, at 1 us +
 * (retry_cnt + 1) x timeout; then nothing is left to run, and a message
 * posted to the failed QP sends nothing. */
static void qp_retry_exhausted(int t, int retry_cnt)
{
    int route[2], rev[2], s;
    g_autoptr(cs_pkt_net_t) net = qp_chain(100 * GBPS, 400 * GBPS, TRUE, route, rev, &s);
    cs_pkt_mmu_cfg_t mc;
    cs_pkt_mmu_cfg_init(&mc, 0);
    mc.reserve = 0;
    g_assert_cmpint(cs_pkt_net_set_buffer(net, s, &mc, -1), ==, 0);
    cs_pkt_qp_cfg_t qc = qp_cfg(1, CS_PKT_QP_TIMEOUT_PS(t), retry_cnt, 1);
    int qp = cs_pkt_net_add_qp(net, route, 2, &qc);
    qp_log_t log = { 0 };
    cs_pkt_net_set_qp_hooks(net, &qp_log_hooks, &log);
    const cs_time_t t0 = 1000 * NS;
    cs_pkt_net_run(net, t0);
    cs_pkt_net_qp_post(net, qp, 10000, t0);
    guint64 events = cs_pkt_net_run(net, CS_TIME_NEVER);
    cs_time_t want = t0 + (cs_time_t)(retry_cnt + 1) * CS_PKT_QP_TIMEOUT_PS(t);
    g_test_message("retry_cnt %d, timeout %d: failed at %.3f us after %" G_GUINT64_FORMAT " events",
                   retry_cnt, t, log.failed[qp] / 1e6, events);
    g_assert_cmpuint(log.nfailed[qp], ==, 1);
    g_assert_cmpint(log.failed[qp], ==, want);
    g_assert_true(cs_pkt_net_qp_failed(net, qp));
    g_assert_cmpint(cs_pkt_net_next(net), ==, CS_TIME_NEVER);
    g_assert_cmpint(cs_pkt_net_now(net), ==, want);
    g_assert_cmpuint(cs_pkt_net_qp_timeouts(net, qp), ==, (guint64)retry_cnt + 1);
    g_assert_cmpuint(cs_pkt_net_qp_retransmitted(net, qp), ==, 3 * (guint64)retry_cnt);
    g_assert_cmpuint(cs_pkt_net_flow_dropped(net, qp), ==, 3 * ((guint64)retry_cnt + 1));
    g_assert_cmpuint(cs_pkt_net_flow_delivered(net, qp), ==, 0);
    g_assert_cmpuint(log.ndeliv[qp], ==, 0);
    g_assert_cmpuint(log.nsent[qp], ==, 1);
    g_assert_cmpint(log.sent[qp][0], ==, t0 + 335520 + 334240);
    /* the failed QP takes no more work */
    cs_pkt_net_qp_post(net, qp, 4096, want);
    g_assert_cmpint(cs_pkt_net_next(net), ==, CS_TIME_NEVER);
    g_assert_cmpuint(cs_pkt_net_run(net, CS_TIME_NEVER), ==, 0);
    g_assert_cmpuint(log.nfailed[qp], ==, 1);
    g_assert_cmpuint(log.nsent[qp], ==, 1);
    g_assert_cmpuint(cs_pkt_pool_in_use(cs_pkt_net_pool(net)), ==, 0);
}

static void test_qp_retry_exhausted(void)
{
    qp_retry_exhausted(4, 7);         /* 1 us + 8 x 65.536 us = 525.288 us */
    qp_retry_exhausted(1, 0);         /* 1 us + 8.192 us: the first expiry fails */
}

/* The lossy 2:1 incast twice, the second sender posting 3.21 us after
 * the first: the same counters, hook times and events. */
static void test_qp_determinism(void)
{
    qp_incast_t r1, r2;
    qp_incast(2, 1000000, 3210 * NS, &r1);
    qp_incast(2, 1000000, 3210 * NS, &r2);
    g_assert_cmpuint(r1.events, >, 0);
    g_assert_cmpuint(r1.retx[0] + r1.retx[1], >, 0);
    g_assert_cmpuint(r1.log.ndeliv[0] + r1.log.ndeliv[1], ==, 2);
    g_assert_cmpmem(&r1, sizeof r1, &r2, sizeof r2);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/pkt/frame-table", test_frame_table);
    g_test_add_func("/pkt/frame-segment", test_frame_segment);
    g_test_add_func("/pkt/saturate-400g", test_saturate);
    g_test_add_func("/pkt/strict", test_strict);
    g_test_add_func("/pkt/drr", test_drr);
    g_test_add_func("/pkt/vlarb", test_vlarb);
    g_test_add_func("/pkt/prop-once-per-hop", test_prop_once_per_hop);
    g_test_add_func("/pkt/ser-remainder", test_ser_remainder);
    g_test_add_func("/pkt/flow-control-seam", test_flow_control_seam);
    g_test_add_func("/pkt/vlarb-seam", test_vlarb_seam);
    g_test_add_func("/pkt/pool-reuse", test_pool_reuse);
    g_test_add_func("/pkt/determinism", test_determinism);
    g_test_add_func("/pkt/headroom", test_headroom);
    g_test_add_func("/pkt/mmu", test_mmu);
    g_test_add_func("/pkt/pfc/incast-lossless", test_incast_lossless);
    g_test_add_func("/pkt/pfc/incast-refresh", test_incast_refresh);
    g_test_add_func("/pkt/pfc/incast-small-headroom", test_incast_small_headroom);
    g_test_add_func("/pkt/pfc/incast-lossy", test_incast_lossy);
    g_test_add_func("/pkt/pfc/incast-determinism", test_incast_determinism);
    g_test_add_func("/pkt/pfc/xon-lost", test_pfc_xon_lost);
    g_test_add_func("/pkt/ecn/red", test_ecn_red);
    g_test_add_func("/pkt/dcqcn/rp", test_dcqcn_rp);
    g_test_add_func("/pkt/dcqcn/incast-lossy", test_dcqcn_incast_lossy);
    g_test_add_func("/pkt/dcqcn/incast-lossless", test_dcqcn_incast_lossless);
    g_test_add_func("/pkt/dcqcn/determinism", test_dcqcn_determinism);
    g_test_add_func("/pkt/qp/messages", test_qp_messages);
    g_test_add_func("/pkt/qp/acks", test_qp_acks);
    g_test_add_func("/pkt/qp/idle-no-timer", test_qp_idle_no_timer);
    g_test_add_func("/pkt/qp/rate-cap", test_qp_rate_cap);
    g_test_add_func("/pkt/qp/dcqcn-idle-timer", test_qp_dcqcn_idle_timer);
    g_test_add_func("/pkt/qp/gbn-lossy", test_qp_gbn_lossy);
    g_test_add_func("/pkt/qp/selective-lossy", test_qp_selective_lossy);
    g_test_add_func("/pkt/qp/gbn-lossy-4to1", test_qp_gbn_lossy_4to1);
    g_test_add_func("/pkt/qp/tail-loss-timeout", test_qp_tail_loss_timeout);
    g_test_add_func("/pkt/qp/retry-exhausted", test_qp_retry_exhausted);
    g_test_add_func("/pkt/qp/determinism", test_qp_determinism);
    return g_test_run();
}
