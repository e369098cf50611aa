/* DCQCN at the packet level (issue #11): the ConnectX preset against an
 * N:1 incast at 400G, and the DCQCN paper's preset against the fluid
 * model's fixed point (Zhu et al., CoNEXT'16, fabric-models.md sections
 * 1 and 9). Every incast: N hosts -> one switch -> one host, one-way
 * links both ways with 1 us of propagation, the switch with a shared
 * buffer (headroom by the formula) marking ECN at egress, one long flow
 * per sender on priority 3 (lossless) with DCQCN. */
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
#define US ((cs_time_t)1000000)       /* ps */
#define MAXN 16
#define PRIO 3

typedef struct {
    int n;                            /* senders */
    guint64 rate_bps;
    guint32 mtu;
    guint64 buffer;                   /* switch buffer bytes */
    const cs_pkt_ecn_cfg_t *ecn;      /* NULL: defaults by link rate */
    const cs_pkt_dcqcn_cfg_t *dcqcn;  /* NULL: none */
    guint64 seed;
    cs_time_t w0, w1;                 /* measured from w0 to w1 */
} incast_cfg_t;

typedef struct {
    double goodput_bps[MAXN];         /* payload per sender over the window */
    double total_bps, jain;
    double queue_avg;                 /* egress queue bytes, sampled every 1 us */
    double over_kmax;                 /* fraction of those samples above Kmax */
    guint64 marks, pkts;              /* on the bottleneck in the window */
    guint64 xoff;                     /* XOFF sent to the senders, whole run */
    guint64 dropped, cnps;
} incast_t;

static double jain(const double *x, int n)
{
    double s = 0, s2 = 0;
    for (int i = 0; i < n; i++) {
        s += x[i];
        s2 += x[i] * x[i];
    }
    return s * s / (n * s2);
}

static void incast(const incast_cfg_t *ic, incast_t *r)
{
    g_assert_cmpint(ic->n, <=, MAXN);
    g_autoptr(cs_pkt_net_t) net = cs_pkt_net_new();
    int host[MAXN], up[MAXN], fl[MAXN];
    for (int i = 0; i < ic->n; i++)
        host[i] = cs_pkt_net_add_host(net);
    int sw = cs_pkt_net_add_switch(net), dst = cs_pkt_net_add_host(net);
    cs_pkt_mmu_cfg_t mc;
    cs_pkt_mmu_cfg_init(&mc, ic->buffer);
    g_assert_cmpint(cs_pkt_net_set_buffer(net, sw, &mc, -1), ==, 0);
    cs_pkt_port_cfg_t pc;
    cs_pkt_port_cfg_init(&pc, ic->rate_bps, 1 * US);
    for (int i = 0; i < ic->n; i++)
        up[i] = cs_pkt_net_add_link(net, host[i], sw, &pc);
    int down = cs_pkt_net_add_link(net, sw, dst, &pc);
    for (int i = 0; i < ic->n; i++)
        cs_pkt_net_add_link(net, sw, host[i], &pc);
    cs_pkt_net_add_link(net, dst, sw, &pc);
    cs_pkt_net_set_seed(net, ic->seed);
    g_assert_cmpint(cs_pkt_net_set_ecn(net, sw, ic->ecn), ==, 0);
    cs_pkt_ecn_cfg_t ec;
    if (ic->ecn != NULL)
        ec = *ic->ecn;
    else
        cs_pkt_ecn_cfg_for_rate(&ec, ic->rate_bps);
    /* more than the run can send: every flow is still sending at w1 */
    guint64 bytes = (guint64)((double)ic->rate_bps / 8 * (double)ic->w1 / CS_PS_PER_S) + 1000000;
    for (int i = 0; i < ic->n; i++) {
        cs_pkt_flow_cfg_t fc = { .bytes = bytes, .mtu = ic->mtu, .prio = PRIO };
        int route[2] = { up[i], down };
        fl[i] = cs_pkt_net_add_flow(net, route, 2, &fc);
        g_assert_cmpint(fl[i], >=, 0);
        if (ic->dcqcn != NULL)
            g_assert_cmpint(cs_pkt_net_set_dcqcn(net, fl[i], ic->dcqcn), ==, 0);
    }
    cs_pkt_port_t *port = cs_pkt_net_port(net, down);
    *r = (incast_t) { 0 };
    cs_pkt_net_run(net, ic->w0);
    guint64 d0[MAXN];
    for (int i = 0; i < ic->n; i++)
        d0[i] = cs_pkt_net_flow_delivered(net, fl[i]);
    guint64 m0 = cs_pkt_net_ecn_marks(net, down, PRIO), p0 = cs_pkt_port_tx_pkts(port, PRIO);
    double qsum = 0;
    guint64 samples = 0, over = 0;
    for (cs_time_t t = ic->w0 + US; t <= ic->w1; t += US) {
        cs_pkt_net_run(net, t);
        guint64 q = cs_pkt_port_queue_bytes(port, PRIO);
        qsum += (double)q;
        over += q > ec.kmax;
        samples++;
    }
    double secs = (double)(ic->w1 - ic->w0) / CS_PS_PER_S;
    for (int i = 0; i < ic->n; i++) {
        r->goodput_bps[i] = (double)(cs_pkt_net_flow_delivered(net, fl[i]) - d0[i]) * 8 / secs;
        r->total_bps += r->goodput_bps[i];
        r->xoff += cs_pkt_pfc_xoff_sent(cs_pkt_net_pfc(net, up[i]), PRIO);
        r->dropped += cs_pkt_net_flow_dropped(net, fl[i]);
        r->cnps += cs_pkt_net_flow_cnps_received(net, fl[i]);
    }
    r->jain = jain(r->goodput_bps, ic->n);
    r->queue_avg = qsum / (double)samples;
    r->over_kmax = (double)over / (double)samples;
    r->marks = cs_pkt_net_ecn_marks(net, down, PRIO) - m0;
    r->pkts = cs_pkt_port_tx_pkts(port, PRIO) - p0;
}

/* Payload rate of a saturated link at this MTU (fabric-models.md section 4). */
static double line_goodput(guint64 rate_bps, guint32 mtu)
{
    return (double)rate_bps * cs_pkt_frame_goodput(&(cs_pkt_frame_t) { 0 }, mtu, CS_PKT_HDR_MIDDLE);
}

/* ---- the ConnectX preset ------------------------------------------------ */

static void connectx(cs_pkt_dcqcn_cfg_t *c)
{
    cs_pkt_dcqcn_cfg_connectx(c);
    g_assert_cmpuint(c->byte_reset, ==, 0);     /* no byte counter: see cs_pkt_dcqcn.c */
}

/* k timer expiries at once are k expiries one by one, and stop once the
 * flow is unlimited. */
static void test_rp_timers(void)
{
    cs_pkt_dcqcn_cfg_t c;
    connectx(&c);
    cs_pkt_dcqcn_rp_t a, b;
    cs_pkt_dcqcn_rp_init(&a, &c, 400 * GBPS);
    g_assert_true(cs_pkt_dcqcn_rp_cnp(&a, 0));
    g_assert_true(cs_pkt_dcqcn_rp_cnp(&a, 5 * US));
    b = a;
    for (int i = 0; i < 7; i++)
        g_assert_true(cs_pkt_dcqcn_rp_timer(&a));
    g_assert_true(cs_pkt_dcqcn_rp_timers(&b, 7));
    g_assert_cmpmem(&a, sizeof a, &b, sizeof b);
    g_assert_cmpfloat(b.rc, <, b.line);
    /* enough expiries: back at the line rate, the rest unused */
    g_assert_false(cs_pkt_dcqcn_rp_timers(&b, G_MAXUINT64));
    g_assert_false(b.limited);
    g_assert_cmpfloat(b.rc, ==, b.line);
    g_assert_false(cs_pkt_dcqcn_rp_timers(&b, 3));
}

/* One flow, DCQCN on, nothing congests: the framing-limited line rate
 * (392.2 Gb/s of payload at 400G and 4096 B), no mark, no CNP. */
static void test_single_flow(void)
{
    cs_pkt_dcqcn_cfg_t c;
    connectx(&c);
    incast_cfg_t ic = { .n = 1, .rate_bps = 400 * GBPS, .mtu = 4096, .buffer = 128000000,
                        .dcqcn = &c, .seed = 1, .w0 = 200 * US, .w1 = 2200 * US };
    incast_t r;
    incast(&ic, &r);
    double line = line_goodput(ic.rate_bps, ic.mtu);
    g_test_message("single flow: %.2f Gb/s of %.2f", r.total_bps / 1e9, line / 1e9);
    g_assert_cmpfloat(fabs(r.total_bps / line - 1), <, 0.001);
    g_assert_cmpuint(r.marks + r.cnps + r.xoff + r.dropped, ==, 0);
}

/* N:1 at 400G, ConnectX preset, ECN by link rate (800/3200 KB), a
 * 128-MB buffer (16 MB per 50G, the HPCC rule the engine uses). Once
 * converged (from 3 ms; the flows start together at the line rate and
 * the first cuts overshoot, see doc), the senders fill the link (>= 95%
 * of the framing limit), share it (Jain >= 0.99), DCQCN alone holds the
 * queue: no pause frame in the whole run, the queue mostly below Kmax. */
static void incast_400g(int n)
{
    cs_pkt_dcqcn_cfg_t c;
    connectx(&c);
    incast_cfg_t ic = { .n = n, .rate_bps = 400 * GBPS, .mtu = 4096, .buffer = 128000000,
                        .dcqcn = &c, .seed = 1, .w0 = 3000 * US, .w1 = 5000 * US };
    incast_t r, early;
    incast(&ic, &r);
    ic.w0 = 200 * US;
    ic.w1 = 2200 * US;
    incast(&ic, &early);
    double line = line_goodput(ic.rate_bps, ic.mtu);
    g_test_message("%d:1 at 400G: 3-5 ms %.1f%% of the line, Jain %.4f, queue %.0f KB (over Kmax %.2f%%), "
                   "XOFF %" G_GUINT64_FORMAT ", CNPs %" G_GUINT64_FORMAT "; 0.2-2.2 ms %.1f%%, Jain %.4f",
                   n, 100 * r.total_bps / line, r.jain, r.queue_avg / 1e3, 100 * r.over_kmax, r.xoff, r.cnps,
                   100 * early.total_bps / line, early.jain);
    g_assert_cmpfloat(r.total_bps / line, >=, 0.95);
    g_assert_cmpfloat(r.jain, >=, 0.99);
    g_assert_cmpuint(r.xoff, ==, 0);
    g_assert_cmpuint(r.dropped, ==, 0);
    g_assert_cmpuint(r.marks, >, 0);
    g_assert_cmpfloat(r.over_kmax, <, 0.05);
}

static void test_incast_2to1(void)
{
    incast_400g(2);
}

static void test_incast_4to1(void)
{
    incast_400g(4);
}

/* The byte counter read as bytes (RPG_BYTE_RESET 32767): between cuts
 * the rate goes back to the unclamped target, DCQCN does not hold the
 * 2:1 incast and PFC does (why the preset leaves it out). */
static void test_byte_counter_as_bytes(void)
{
    cs_pkt_dcqcn_cfg_t c;
    cs_pkt_dcqcn_cfg_connectx(&c);
    c.byte_reset = 32767;               /* the firmware's value, in bytes */
    incast_cfg_t ic = { .n = 2, .rate_bps = 400 * GBPS, .mtu = 4096, .buffer = 128000000,
                        .dcqcn = &c, .seed = 1, .w0 = 200 * US, .w1 = 2200 * US };
    incast_t r;
    incast(&ic, &r);
    cs_pkt_ecn_cfg_t ec;
    cs_pkt_ecn_cfg_for_rate(&ec, ic.rate_bps);
    g_test_message("byte counter 32767 B: queue %.0f KB, XOFF %" G_GUINT64_FORMAT, r.queue_avg / 1e3, r.xoff);
    g_assert_cmpuint(r.xoff, >, 0);
    g_assert_cmpfloat(r.queue_avg, >, (double)ec.kmax);
}

/* ---- the fluid model's fixed point (the paper's preset) ----------------- */

/* The CoNEXT'16 fluid model (fabric-models.md section 1, eqs. 5-9) in
 * packets: C and R_AI in packets/s, B in packets, tau (CNP interval),
 * tau' (alpha period), T (timer) in seconds. */
typedef struct {
    double c, rai, b, tau, taup, t;
    int f;
    double kmin, kmax, pmax;          /* bytes */
} fluid_t;

static fluid_t fluid_of(const cs_pkt_dcqcn_cfg_t *d, const cs_pkt_ecn_cfg_t *e, guint64 rate_bps, double wire)
{
    return (fluid_t) {
        .c = (double)rate_bps / (8 * wire), .rai = (double)d->ai_bps / (8 * wire),
        .b = (double)d->byte_reset / wire, .tau = (double)d->cnp_gap / CS_PS_PER_S,
        .taup = (double)d->alpha_period / CS_PS_PER_S, .t = (double)d->timer / CS_PS_PER_S, .f = d->f,
        .kmin = (double)e->kmin, .kmax = (double)e->kmax, .pmax = e->pmax,
    };
}

/* Small-p approximation: p* = cbrt(R_AI N^2 / (tau' C^2) (1/B + N/(T C))^2). */
static double fluid_p_approx(const fluid_t *m, int n)
{
    double x = 1 / m->b + n / (m->t * m->c);
    return cbrt(m->rai * n * n / (m->taup * m->c * m->c) * x * x);
}

/* The fixed point of eqs. 7-9 themselves at RC = C/N: alpha from (7),
 * RT - RC from (9), then the p where (8)'s decrease and increase terms
 * balance, by bisection on a log scale (the balance falls with p). */
static double fluid_residual(const fluid_t *m, int n, double p)
{
    double r = m->c / n;
    double alpha = 1 - pow(1 - p, m->taup * r);
    double cut = 1 - pow(1 - p, m->tau * r);
    double eb = r * p / (pow(1 - p, -m->b) - 1), et = r * p / (pow(1 - p, -m->t * r) - 1);
    double gap = (r * alpha / (2 * m->tau)) * cut / ((eb + et) / 2);     /* RT - RC */
    return -(gap / m->tau) * cut + m->rai * pow(1 - p, m->f * m->b) * eb + m->rai * pow(1 - p, m->f * m->t * r) * et;
}

static double fluid_p(const fluid_t *m, int n)
{
    double lo = 1e-7, hi = 0.5;
    g_assert_cmpfloat(fluid_residual(m, n, lo), >, 0);
    g_assert_cmpfloat(fluid_residual(m, n, hi), <, 0);
    for (int i = 0; i < 100; i++) {
        double mid = sqrt(lo * hi);
        if (fluid_residual(m, n, mid) > 0)
            lo = mid;
        else
            hi = mid;
    }
    return sqrt(lo * hi);
}

/* RED inverted (eq. 5): the queue at which the probability is p. */
static double fluid_queue(const fluid_t *m, double p)
{
    return m->kmin + p / m->pmax * (m->kmax - m->kmin);
}

/* 40G, 1-KB payloads, the paper's preset and thresholds (Kmin 5 KB,
 * Kmax 200 KB, Pmax 1%), a buffer so large that PFC never fires (the
 * model has none), measured from 20 to 100 ms. The model's packets are
 * the wire's (1106 B), as its link capacity and its byte counter count
 * them. The model's fixed point has the queue inside the RED band; the
 * simulated queue fluctuates around it and now and then crosses Kmax,
 * where every packet is marked, so the marking probability compared is
 * the band's: marks less the packets sent while the queue was above Kmax
 * (the link is busy throughout: the fraction of time), over the packets
 * sent while it was not. The CNP rule and the marking point differ from
 * the model's (at most one CNP per 50 us on the first marked packet,
 * marking at dequeue rather than on arrival): neither moves a fixed
 * point. The cube-root approximation is logged beside it: at N = 10 it
 * is 29% off the equations' own fixed point (p tau r is not small). */
static void fluid_case(int n)
{
    cs_pkt_dcqcn_cfg_t d;
    cs_pkt_dcqcn_cfg_paper(&d);
    /* Zhu'15 at 40G: Kmin 5 KB, Kmax 200 KB, Pmax 1% (fabric-models.md section 1) */
    cs_pkt_ecn_cfg_t e = { 5 * 1024, 200 * 1024, 0.01 };
    incast_cfg_t ic = { .n = n, .rate_bps = 40 * GBPS, .mtu = 1024, .buffer = 1000000000, .ecn = &e,
                        .dcqcn = &d, .seed = 1, .w0 = 20000 * US, .w1 = 100000 * US };
    incast_t r;
    incast(&ic, &r);
    double wire = 1024 + CS_PKT_ROCE_OVERHEAD;
    fluid_t m = fluid_of(&d, &e, ic.rate_bps, wire);
    double p = fluid_p_approx(&m, n), q = fluid_queue(&m, p);
    double pe = fluid_p(&m, n);
    double above = r.over_kmax * (double)r.pkts;
    double p_band = ((double)r.marks - above) / ((double)r.pkts - above);
    double line = line_goodput(ic.rate_bps, ic.mtu);
    g_test_message("N=%d: queue %.1f KiB (model %.1f, eqs. 7-9 solved %.1f), marking %.3g in the band, %.3g in "
                   "all (model %.3g, solved %.3g), over Kmax %.2f%% of the time, %.1f%% of the line, Jain %.4f",
                   n, r.queue_avg / 1024, q / 1024, fluid_queue(&m, pe) / 1024, p_band,
                   (double)r.marks / (double)r.pkts, p, pe, 100 * r.over_kmax, 100 * r.total_bps / line, r.jain);
    g_assert_cmpuint(r.xoff + r.dropped, ==, 0);
    g_assert_cmpfloat(r.jain, >=, 0.99);
    g_assert_cmpfloat(r.total_bps / line, >=, 0.95);
    g_assert_cmpfloat(fabs(r.queue_avg / q - 1), <=, 0.2);
    g_assert_cmpfloat(fabs(p_band / p - 1), <=, 0.2);
}

static void test_fluid_2(void)
{
    fluid_case(2);
}

static void test_fluid_4(void)
{
    fluid_case(4);
}

static void test_fluid_10(void)
{
    fluid_case(10);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/pkt-dcqcn/rp-timers", test_rp_timers);
    g_test_add_func("/pkt-dcqcn/single-flow-line-rate", test_single_flow);
    g_test_add_func("/pkt-dcqcn/incast-400g-2to1", test_incast_2to1);
    g_test_add_func("/pkt-dcqcn/incast-400g-4to1", test_incast_4to1);
    g_test_add_func("/pkt-dcqcn/byte-counter-as-bytes", test_byte_counter_as_bytes);
    g_test_add_func("/pkt-dcqcn/fluid-fixed-point-2", test_fluid_2);
    g_test_add_func("/pkt-dcqcn/fluid-fixed-point-4", test_fluid_4);
    g_test_add_func("/pkt-dcqcn/fluid-fixed-point-10", test_fluid_10);
    return g_test_run();
}
