/* InfiniBand credit-based flow control in the packet network (issue #14
 * items 1 and 8): throughput against a credit buffer below the
 * bandwidth-delay product (the formula), line rate above it, an incast
 * that never drops and never pauses, congestion spreading to a victim on
 * the same VL and not on another, byte-identical repeats, adaptive routing
 * spreading two colliding flows over two spines. */
#include "config.h"

#include <math.h>

#include "sim/cs_pkt_net.h"

#define GBPS 1000000000ull
#define NS ((cs_time_t)1000)
#define US ((cs_time_t)1000000)
#define IB_WIRE (4096 + CS_PKT_IB_OVERHEAD)      /* 4122 B: 65 credits */

static const cs_pkt_frame_t ib_frame = { .ib = TRUE };

static void credit_cfg(cs_pkt_credit_cfg_t *c, guint32 blocks)
{
    *c = (cs_pkt_credit_cfg_t) { .refresh_ps = 0 };
    for (int v = 0; v < CS_PKT_PRIOS; v++)
        c->blocks[v] = blocks;
}

/* ---- one link against its credit buffer ------------------------------- */

/* a -> b over one 100 Gb/s link of 'prop', b -> a for the flow-control
 * packets; b consumes each packet as it arrives (no receive path), so
 * its credits go back at once. One flow of n 4096-B packets on VL 0.
 * Returns the goodput (payload bits / s from the first packet's start to
 * the last one's arrival). */
static double one_link(guint32 blocks, cs_time_t prop, guint64 n, guint64 *fc_p, cs_time_t *starved_p)
{
    g_autoptr(cs_pkt_net_t) net = cs_pkt_net_new();
    cs_pkt_credit_cfg_t cc;
    credit_cfg(&cc, blocks);
    g_assert_cmpint(cs_pkt_net_set_credit(net, &cc), ==, 0);
    int a = cs_pkt_net_add_host(net), b = cs_pkt_net_add_host(net);
    cs_pkt_port_cfg_t pc;
    cs_pkt_port_cfg_init(&pc, 100 * GBPS, prop);
    int ab = cs_pkt_net_add_link(net, a, b, &pc);
    cs_pkt_net_add_link(net, b, a, &pc);
    cs_pkt_flow_cfg_t fc = { .bytes = n * 4096, .mtu = 4096, .prio = 0, .frame = ib_frame };
    int f = cs_pkt_net_add_flow(net, &ab, 1, &fc);
    cs_pkt_net_run(net, CS_TIME_NEVER);
    g_assert_cmpuint(cs_pkt_net_flow_delivered(net, f), ==, n * 4096);
    g_assert_cmpuint(cs_pkt_net_flow_dropped(net, f), ==, 0);
    if (fc_p != NULL)
        *fc_p = cs_pkt_net_credit_fc_sent(net, ab, 0);
    if (starved_p != NULL)
        *starved_p = cs_pkt_net_credit_starved_ps(net, ab, 0);
    cs_time_t t = cs_pkt_net_flow_done(net, f) - cs_pkt_net_flow_first(net, f);
    return (double)(n * 4096) * 8 / ((double)t / CS_PS_PER_S);
}

/* With k packets' worth of credits (65 blocks each), the sender sends k
 * packets, then one more per credit returned. A credit comes back one
 * loop after its packet started: its serialization (4122 B at 100 Gb/s =
 * 329.76 ns), the propagation there, the flow-control packet's
 * serialization (8 B = 0.64 ns) and the propagation back. Below the
 * bandwidth-delay product the goodput is k x 4096 x 8 / loop; above, the
 * line's 100 x 4096 / 4122 = 99.369 Gb/s. Within 2% (the bound;
 * the first window and the last packet's trip are the difference). */
static void test_credit_bdp(void)
{
    const cs_time_t prop = 1000 * NS;
    const double ser = IB_WIRE * 8 / 100e9, loop = ser + 2 * 1e-6 + CS_PKT_CREDIT_FC_WIRE * 8 / 100e9;
    const double line = 100e9 * 4096 / IB_WIRE;
    for (guint32 k = 1; k <= 10; k++) {
        guint64 fc;
        cs_time_t starved;
        double got = one_link(65 * k, prop, 4000, &fc, &starved);
        double want = MIN(line, k * 4096 * 8 / loop);
        g_test_message("%u packets of credits: %.3f Gb/s, formula %.3f Gb/s (%+.2f%%), %" G_GUINT64_FORMAT
                       " flow-control packets, starved %.1f us", k, got / 1e9, want / 1e9, (got / want - 1) * 100,
                       fc, starved / 1e6);
        g_assert_cmpfloat(fabs(got / want - 1), <, 0.02);
        /* below the product the sender waits for credits most of the time */
        if (k * 4096 * 8 / loop < 0.9 * line)
            g_assert_cmpint(starved, >, 0);
        /* one per packet freed: each goes out at once on the idle link
         * back (none waits to take a later limit), and at every periodic
         * tick the receiver holds nothing (it consumes on arrival) */
        g_assert_cmpuint(fc, ==, 4000);
    }
}

/* A credit buffer smaller than one packet never lets it go: the net
 * reports nothing moving rather than running for ever (the refresh timer
 * does not run: no credit is in use). */
static void test_credit_too_small(void)
{
    g_autoptr(cs_pkt_net_t) net = cs_pkt_net_new();
    cs_pkt_credit_cfg_t cc;
    credit_cfg(&cc, 64);              /* 4096 B: one 4122-B packet needs 65 */
    g_assert_cmpint(cs_pkt_net_set_credit(net, &cc), ==, 0);
    int a = cs_pkt_net_add_host(net), b = cs_pkt_net_add_host(net);
    cs_pkt_port_cfg_t pc;
    cs_pkt_port_cfg_init(&pc, 100 * GBPS, 100 * NS);
    int ab = cs_pkt_net_add_link(net, a, b, &pc);
    cs_pkt_net_add_link(net, b, a, &pc);
    cs_pkt_flow_cfg_t fc = { .bytes = 4096, .mtu = 4096, .prio = 0, .frame = ib_frame };
    int f = cs_pkt_net_add_flow(net, &ab, 1, &fc);
    cs_pkt_net_run(net, CS_TIME_NEVER);
    g_assert_cmpuint(cs_pkt_net_flow_delivered(net, f), ==, 0);
    g_assert_cmpint(cs_pkt_net_next(net), ==, CS_TIME_NEVER);
}

/* set_credit refuses once links exist, and buffers are refused after it. */
static void test_credit_setup(void)
{
    g_autoptr(cs_pkt_net_t) net = cs_pkt_net_new();
    cs_pkt_credit_cfg_t cc;
    credit_cfg(&cc, 1000);
    int a = cs_pkt_net_add_host(net), s = cs_pkt_net_add_switch(net);
    cs_pkt_port_cfg_t pc;
    cs_pkt_port_cfg_init(&pc, 100 * GBPS, 100 * NS);
    cs_pkt_net_add_link(net, a, s, &pc);
    g_assert_cmpint(cs_pkt_net_set_credit(net, &cc), ==, -1);
    g_assert_false(cs_pkt_net_credit(net));

    g_autoptr(cs_pkt_net_t) n2 = cs_pkt_net_new();
    g_assert_cmpint(cs_pkt_net_set_credit(n2, &cc), ==, 0);
    g_assert_true(cs_pkt_net_credit(n2));
    int sw = cs_pkt_net_add_switch(n2);
    cs_pkt_mmu_cfg_t mc;
    cs_pkt_mmu_cfg_init(&mc, 1000000);
    g_test_expect_message(G_LOG_DOMAIN, G_LOG_LEVEL_CRITICAL, "*credit*");
    g_assert_cmpint(cs_pkt_net_set_buffer(n2, sw, &mc, -1), ==, -1);
    g_test_assert_expected_messages();
}

/* ---- incast through a switch ------------------------------------------ */

/* n senders -> switch -> one receiver, 100 Gb/s links of 500 ns each
 * way; every input buffer 'blocks' per VL; with 'victim', a second
 * receiver (vh, reached by vdown) for test_credit_victim. */
typedef struct {
    cs_pkt_net_t *net;
    int sw, rx, vh;
    int up[16], down, vup, vdown;
} star_t;

static void star_new(star_t *s, int n, guint32 blocks, gboolean victim)
{
    s->net = cs_pkt_net_new();
    cs_pkt_credit_cfg_t cc;
    credit_cfg(&cc, blocks);
    g_assert_cmpint(cs_pkt_net_set_credit(s->net, &cc), ==, 0);
    s->sw = cs_pkt_net_add_switch(s->net);
    s->rx = cs_pkt_net_add_host(s->net);
    cs_pkt_port_cfg_t pc;
    cs_pkt_port_cfg_init(&pc, 100 * GBPS, 500 * NS);
    for (int i = 0; i < n; i++) {
        int h = cs_pkt_net_add_host(s->net);
        s->up[i] = cs_pkt_net_add_link(s->net, h, s->sw, &pc);
        cs_pkt_net_add_link(s->net, s->sw, h, &pc);
    }
    s->down = cs_pkt_net_add_link(s->net, s->sw, s->rx, &pc);
    cs_pkt_net_add_link(s->net, s->rx, s->sw, &pc);
    if (victim) {
        s->vh = cs_pkt_net_add_host(s->net);
        s->vdown = cs_pkt_net_add_link(s->net, s->sw, s->vh, &pc);
        cs_pkt_net_add_link(s->net, s->vh, s->sw, &pc);
    }
}

/* 8:1 incast with input buffers of 20 packets: nothing dropped, nothing
 * paused (no PFC frame), every byte delivered, the bottleneck busy (the
 * 8 x 2000 packets in 16000 x 329.76 ns plus a trip), and the senders
 * starved of credits most of the run (their input buffers fill behind
 * the one egress). */
static void test_credit_incast(void)
{
    star_t s;
    star_new(&s, 8, 65 * 20, FALSE);
    int f[8];
    for (int i = 0; i < 8; i++) {
        int route[2] = { s.up[i], s.down };
        cs_pkt_flow_cfg_t fc = { .bytes = 2000 * 4096, .mtu = 4096, .prio = 0, .frame = ib_frame };
        f[i] = cs_pkt_net_add_flow(s.net, route, 2, &fc);
    }
    cs_pkt_net_run(s.net, CS_TIME_NEVER);
    cs_time_t end = 0;
    for (int i = 0; i < 8; i++) {
        g_assert_cmpuint(cs_pkt_net_flow_delivered(s.net, f[i]), ==, 2000 * 4096);
        g_assert_cmpuint(cs_pkt_net_flow_dropped(s.net, f[i]), ==, 0);
        end = MAX(end, cs_pkt_net_flow_done(s.net, f[i]));
        g_assert_cmpint(cs_pkt_net_credit_starved_ps(s.net, s.up[i], 0), >, end / 2);
        /* one flow-control packet per packet freed, and the periodic
         * updates while its input buffer held packets (most of the run) */
        g_assert_cmpuint(cs_pkt_net_credit_fc_sent(s.net, s.up[i], 0), >, 2000 + end / CS_PKT_CREDIT_REFRESH_DEFAULT / 2);
    }
    cs_pkt_link_stats_t ls;
    cs_pkt_net_link_stats(s.net, s.down, 0, &ls);
    g_assert_cmpuint(ls.xoff_sent, ==, 0);
    g_assert_cmpuint(ls.drops_buffer, ==, 0);
    double busy = 16000 * 329.76e3;   /* ps */
    g_assert_cmpfloat((double)end, <, busy * 1.01 + 3 * US);
    g_assert_cmpfloat((double)end, >, busy);
    cs_pkt_net_free(s.net);
}

/* Congestion spreading: 4 senders into one receiver; the first sender
 * also sends to a second, idle receiver (the victim flow). Its packets
 * share the sender's link into the switch and, on the same VL, its input
 * buffer there, which the incast keeps full: the victim crawls at about
 * the incast's share. On another VL the buffer is its own: the victim
 * runs near line rate. Head-of-line blocking within a VL. */
static double victim_goodput(int victim_vl)
{
    star_t s;
    star_new(&s, 4, 65 * 20, TRUE);
    for (int i = 0; i < 4; i++) {
        int route[2] = { s.up[i], s.down };
        cs_pkt_flow_cfg_t fc = { .bytes = 3000 * 4096, .mtu = 4096, .prio = 0, .frame = ib_frame };
        cs_pkt_net_add_flow(s.net, route, 2, &fc);
    }
    int route[2] = { s.up[0], s.vdown };
    cs_pkt_flow_cfg_t vc = { .bytes = 500 * 4096, .mtu = 4096, .prio = victim_vl, .frame = ib_frame };
    int v = cs_pkt_net_add_flow(s.net, route, 2, &vc);
    cs_pkt_net_run(s.net, CS_TIME_NEVER);
    g_assert_cmpuint(cs_pkt_net_flow_delivered(s.net, v), ==, 500 * 4096);
    double t = (double)(cs_pkt_net_flow_done(s.net, v) - cs_pkt_net_flow_first(s.net, v)) / CS_PS_PER_S;
    cs_pkt_net_free(s.net);
    return 500 * 4096 * 8 / t;
}

static void test_credit_victim(void)
{
    double same = victim_goodput(0), other = victim_goodput(1);
    g_test_message("victim on the incast's VL %.2f Gb/s, on another VL %.2f Gb/s", same / 1e9, other / 1e9);
    /* same VL: its sender's link alternates the two flows but each packet
     * waits for the incast's credits: well under half the line */
    g_assert_cmpfloat(same, <, 40e9);
    /* another VL: it shares its sender's link with that sender's incast
     * flow, which waits for credits most of the time, and nothing holds
     * it at the switch */
    g_assert_cmpfloat(other, >, 45e9);
}

/* The same inputs give the same outputs. */
static void test_credit_repeat(void)
{
    guint64 fa, fb;
    cs_time_t sa, sb;
    double a = one_link(65 * 3, 1000 * NS, 500, &fa, &sa), b = one_link(65 * 3, 1000 * NS, 500, &fb, &sb);
    g_assert_cmpfloat(a, ==, b);
    g_assert_cmpuint(fa, ==, fb);
    g_assert_cmpint(sa, ==, sb);
}

/* ---- adaptive routing ------------------------------------------------- */

/* Two leaves of two hosts each, two spines, 100 Gb/s links of 500 ns
 * everywhere, credits. Flows h0 -> h2 and h1 -> h3 (QPs with ACKs, 4000
 * packets each), both statically routed over spine 0: they share leaf0 ->
 * spine0 and spine0 -> leaf1 and each gets half. With adaptive routing
 * (both spines as alternatives, the receiver tolerating reordering) the
 * leaf sends each packet up the emptier uplink: both run near line rate,
 * nothing is NAKed or sent again. */
typedef struct {
    cs_time_t end;
    guint64 moves, ooo, naks, retx;
    guint64 tx_pkts, tx_bytes;        /* on h0's link */
} ar_out_t;

/* How the QPs post (with 'ar', both spines as routes): cs_pkt_net_qp_post
 * (every packet routed adaptively), or cs_pkt_net_qp_post_ar with the
 * data apart from its immediate (a message above NCCL_IB_AR_THRESHOLD) or
 * not (at or below it). */
typedef enum { AR_POST, AR_APART, AR_IMM } ar_post_t;

static void ar_run(gboolean ar, ar_post_t how, ar_out_t *o)
{
    g_autoptr(cs_pkt_net_t) net = cs_pkt_net_new();
    cs_pkt_credit_cfg_t cc;
    credit_cfg(&cc, 65 * 40);
    g_assert_cmpint(cs_pkt_net_set_credit(net, &cc), ==, 0);
    int h[4], leaf[2], spine[2];
    for (int i = 0; i < 4; i++)
        h[i] = cs_pkt_net_add_host(net);
    for (int i = 0; i < 2; i++) {
        leaf[i] = cs_pkt_net_add_switch(net);
        spine[i] = cs_pkt_net_add_switch(net);
    }
    cs_pkt_port_cfg_t pc;
    cs_pkt_port_cfg_init(&pc, 100 * GBPS, 500 * NS);
    int up[4], down[4], lu[2][2], ld[2][2];   /* host <-> leaf; leaf l -> spine s, spine s -> leaf l */
    for (int i = 0; i < 4; i++) {
        up[i] = cs_pkt_net_add_link(net, h[i], leaf[i / 2], &pc);
        down[i] = cs_pkt_net_add_link(net, leaf[i / 2], h[i], &pc);
    }
    for (int l = 0; l < 2; l++)
        for (int sp = 0; sp < 2; sp++) {
            lu[l][sp] = cs_pkt_net_add_link(net, leaf[l], spine[sp], &pc);
            ld[sp][l] = cs_pkt_net_add_link(net, spine[sp], leaf[l], &pc);
        }
    cs_pkt_qp_cfg_t qc = { .mtu = 4096, .prio = 0, .frame = ib_frame, .ack_interval = 1,
                           .timeout = CS_PKT_QP_TIMEOUT_PS(20), .retry_cnt = 7, .reorder = ar };
    int qp[2];
    for (int k = 0; k < 2; k++) {
        int src = k, dst = 2 + k;
        int route[4] = { up[src], lu[0][0], ld[0][1], down[dst] };
        qp[k] = cs_pkt_net_add_qp(net, route, 4, &qc);
        g_assert_cmpint(qp[k], >=, 0);
        if (ar) {
            /* a route from elsewhere is refused */
            int bad[2] = { up[1 - src], down[dst] }, boff[2] = { 0, 2 };
            g_assert_cmpint(cs_pkt_net_set_qp_routes(net, qp[k], bad, boff, 1), ==, -1);
            int ports[8] = { up[src], lu[0][0], ld[0][1], down[dst], up[src], lu[0][1], ld[1][1], down[dst] };
            int off[3] = { 0, 4, 8 };
            g_assert_cmpint(cs_pkt_net_set_qp_routes(net, qp[k], ports, off, 2), ==, 0);
        }
        if (how == AR_POST)
            cs_pkt_net_qp_post(net, qp[k], 4000ull * 4096, 0);
        else
            cs_pkt_net_qp_post_ar(net, qp[k], 4000ull * 4096, how == AR_APART, 0);
    }
    cs_pkt_net_run(net, CS_TIME_NEVER);
    *o = (ar_out_t) { 0 };
    cs_pkt_link_stats_t ls;
    cs_pkt_net_link_stats(net, up[0], 0, &ls);
    o->tx_pkts = ls.tx_pkts;
    o->tx_bytes = ls.tx_bytes;
    for (int k = 0; k < 2; k++) {
        g_assert_cmpuint(cs_pkt_net_flow_delivered(net, qp[k]), ==, 4000ull * 4096);
        o->end = MAX(o->end, cs_pkt_net_flow_done(net, qp[k]));
        o->moves += cs_pkt_net_qp_ar_moves(net, qp[k]);
        o->ooo += cs_pkt_net_qp_out_of_order(net, qp[k]);
        o->naks += cs_pkt_net_qp_naks(net, qp[k]);
        o->retx += cs_pkt_net_qp_retransmitted(net, qp[k]);
    }
}

static void test_credit_ar(void)
{
    ar_out_t st, ar;
    ar_run(FALSE, AR_POST, &st);
    ar_run(TRUE, AR_POST, &ar);
    /* one flow alone: 4000 x 329.76 ns = 1.319 ms of serialization */
    const double alone = 4000 * 329.76e3;
    g_test_message("static routes: %.1f us (both on spine 0); adaptive: %.1f us, %" G_GUINT64_FORMAT
                   " packets moved, %" G_GUINT64_FORMAT " out of order", st.end / 1e6, ar.end / 1e6, ar.moves,
                   ar.ooo);
    g_assert_cmpuint(st.moves, ==, 0);
    g_assert_cmpfloat((double)st.end, >, 1.9 * alone);
    g_assert_cmpfloat((double)ar.end, <, 1.1 * alone);
    g_assert_cmpuint(ar.moves, >, 1000);
    g_assert_cmpuint(ar.naks, ==, 0);
    g_assert_cmpuint(ar.retx, ==, 0);
}

/* NCCL_IB_AR_THRESHOLD (net_ib/p2p.cc): a message above it is a WRITE the
 * switches route adaptively and a WRITE with immediate of no payload on
 * the QP's route, one packet of headers and a RETH more on the wire; at
 * or below it one WRITE with immediate, which adaptive routing leaves on
 * its route: the two flows collide on spine 0 as with static routing. */
static void test_credit_ar_threshold(void)
{
    ar_out_t st, all, apart, imm;
    ar_run(FALSE, AR_POST, &st);
    ar_run(TRUE, AR_POST, &all);
    ar_run(TRUE, AR_APART, &apart);
    ar_run(TRUE, AR_IMM, &imm);
    const double alone = 4000 * 329.76e3;
    g_test_message("WRITE apart: %.1f us, %" G_GUINT64_FORMAT " moved; one WRITE with immediate: %.1f us, %"
                   G_GUINT64_FORMAT " moved", apart.end / 1e6, apart.moves, imm.end / 1e6, imm.moves);
    /* at or below: nothing moves, the collision stays */
    g_assert_cmpuint(imm.moves, ==, 0);
    g_assert_cmpint(imm.end, ==, st.end);
    g_assert_cmpuint(imm.tx_pkts, ==, st.tx_pkts);
    /* above: spread as when every packet may move, one packet more */
    g_assert_cmpuint(apart.moves, >, 1000);
    g_assert_cmpfloat((double)apart.end, <, 1.1 * alone);
    g_assert_cmpuint(apart.naks, ==, 0);
    g_assert_cmpuint(apart.retx, ==, 0);
    g_assert_cmpuint(apart.tx_pkts, ==, all.tx_pkts + 1);
    const cs_pkt_frame_t f = ib_frame;
    g_assert_cmpuint(apart.tx_bytes, ==, all.tx_bytes + cs_pkt_frame_overhead(&f, CS_PKT_HDR_WRITE_FIRST));
    /* the message completes only with its immediate, after its data */
    g_assert_cmpint(apart.end, >, all.end);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/pkt-credit/bdp", test_credit_bdp);
    g_test_add_func("/pkt-credit/too-small", test_credit_too_small);
    g_test_add_func("/pkt-credit/setup", test_credit_setup);
    g_test_add_func("/pkt-credit/incast", test_credit_incast);
    g_test_add_func("/pkt-credit/victim", test_credit_victim);
    g_test_add_func("/pkt-credit/repeat", test_credit_repeat);
    g_test_add_func("/pkt-credit/adaptive-routing", test_credit_ar);
    g_test_add_func("/pkt-credit/ar-threshold", test_credit_ar_threshold);
    return g_test_run();
}
