/* SHARP in-switch aggregation on the packet network (cs_pkt_sharp.h,
 * issue #14 item 5): four hosts under two leaves and a spine, one group.
 * Every member's result arrives about one slice's serialization after it
 * starts (streaming: the root's first reduced packet goes down while the
 * rest go up), every tree link carries the slice once each way (data one
 * way, its ACKs the other), each switch reduces it once and copies it to
 * each child, a late member makes the root hold what the others sent,
 * and routes that are not one tree are refused. */
#include "config.h"

#include <string.h>

#include "sim/cs_pkt_sharp.h"

#define GBPS 1000000000ull
#define NS ((cs_time_t)1000)
#define US ((cs_time_t)1000000)
#define P 100                         /* packets per slice */

static const cs_pkt_frame_t ib_frame = { .ib = TRUE };

typedef struct {
    cs_pkt_net_t *net;
    cs_pkt_sharp_t *s;
    int host[4], leaf[2], spine;
    int up[4][2], down[4][2];         /* ports: host's and its leaf's route up, and back */
    int nqps, nsent[8], ndeliv[8];
    cs_time_t deliv[8];
} tree_t;

static void h_sent(void *ctx, int lane, cs_time_t now)
{
    (void)now;
    ((tree_t *)ctx)->nsent[lane]++;
}

static void h_delivered(void *ctx, int lane, cs_time_t now)
{
    tree_t *t = ctx;
    t->ndeliv[lane]++;
    t->deliv[lane] = now;
}

static const cs_pkt_sharp_hooks_t hooks = { h_sent, h_delivered };

static void q_sent(void *ctx, int qp, cs_time_t now)
{
    cs_pkt_sharp_qp_sent(((tree_t *)ctx)->s, qp, now);
}

static const cs_pkt_qp_hooks_t qp_hooks = { q_sent, NULL, NULL };

static void observe(void *ctx, const cs_pkt_t *pkt, cs_time_t now)
{
    cs_pkt_sharp_observe(((tree_t *)ctx)->s, pkt, now);
}

static void new_qp(void *ctx, int qp, int lane)
{
    (void)qp;
    (void)lane;
    ((tree_t *)ctx)->nqps++;
}

/* hosts 0, 1 under leaf 0, hosts 2, 3 under leaf 1, both leaves under
 * the spine; 100 Gb/s, 100 ns each way; credits well above the product */
static void build_sel(tree_t *t, gboolean selective)
{
    memset(t, 0, sizeof *t);
    t->net = cs_pkt_net_new();
    /* selective: no credits, so host_rx below can drop (a lossy priority) */
    if (!selective) {
        cs_pkt_credit_cfg_t cc = { .refresh_ps = 0 };
        for (int v = 0; v < CS_PKT_PRIOS; v++)
            cc.blocks[v] = 65 * 16;
        g_assert_cmpint(cs_pkt_net_set_credit(t->net, &cc), ==, 0);
    }
    for (int i = 0; i < 4; i++)
        t->host[i] = cs_pkt_net_add_host(t->net);
    t->leaf[0] = cs_pkt_net_add_switch(t->net);
    t->leaf[1] = cs_pkt_net_add_switch(t->net);
    t->spine = cs_pkt_net_add_switch(t->net);
    cs_pkt_port_cfg_t pc;
    cs_pkt_port_cfg_init(&pc, 100 * GBPS, 100 * NS);
    int lu[2], ld[2];
    for (int l = 0; l < 2; l++) {
        lu[l] = cs_pkt_net_add_link(t->net, t->leaf[l], t->spine, &pc);
        ld[l] = cs_pkt_net_add_link(t->net, t->spine, t->leaf[l], &pc);
    }
    for (int i = 0; i < 4; i++) {
        t->up[i][0] = cs_pkt_net_add_link(t->net, t->host[i], t->leaf[i / 2], &pc);
        t->down[i][0] = cs_pkt_net_add_link(t->net, t->leaf[i / 2], t->host[i], &pc);
        t->up[i][1] = lu[i / 2];
        t->down[i][1] = ld[i / 2];
    }
    cs_pkt_qp_cfg_t qc = { .mtu = 4096, .prio = 0, .frame = ib_frame, .ack_interval = 1,
                           .timeout = CS_PKT_QP_TIMEOUT_PS(20), .retry_cnt = 7, .selective = selective };
    t->s = cs_pkt_sharp_new(t->net, &qc, &hooks, t);
    cs_pkt_net_set_qp_hooks(t->net, &qp_hooks, t);
    cs_pkt_net_set_observer(t->net, observe, t);
}

static void build(tree_t *t)
{
    build_sel(t, FALSE);
}

static void hops_of(const tree_t *t, int i, cs_pkt_sharp_hop_t *h)
{
    h[0] = (cs_pkt_sharp_hop_t){ t->up[i][0], t->down[i][0], t->host[i], t->leaf[i / 2] };
    h[1] = (cs_pkt_sharp_hop_t){ t->up[i][1], t->down[i][1], t->leaf[i / 2], t->spine };
}

static void members_on(tree_t *t, int prio)
{
    const char *why = NULL;
    for (int i = 0; i < 4; i++) {
        cs_pkt_sharp_hop_t h[2];
        hops_of(t, i, h);
        g_assert_true(cs_pkt_sharp_member(t->s, 7, i, TRUE, prio, h, 2, new_qp, t, &why));
        g_assert_true(cs_pkt_sharp_member(t->s, 7, 4 + i, FALSE, prio, h, 2, new_qp, t, &why));
    }
    g_assert_cmpint(t->nqps, ==, 12);  /* 6 tree edges, a QP each way */
    g_assert_cmpint(cs_pkt_sharp_ngroups(t->s), ==, 1);
}

static void members(tree_t *t)
{
    members_on(t, 0);
}

static void teardown(tree_t *t)
{
    cs_pkt_sharp_free(t->s);
    cs_pkt_net_free(t->net);
}

/* One slice of P packets from every member at 0 (host 3's 'late' later). */
static void run(tree_t *t, cs_time_t late)
{
    build(t);
    members(t);
    for (int i = 0; i < 4; i++) {
        cs_pkt_sharp_send(t->s, 4 + i, (guint64)P * 4096, 0);
        g_assert_cmpint(t->nsent[4 + i], ==, 1);   /* the switches send the result */
    }
    for (int i = 0; i < 3; i++)
        cs_pkt_sharp_send(t->s, i, (guint64)P * 4096, 0);
    if (late > 0)
        cs_pkt_net_run(t->net, late);
    cs_pkt_sharp_send(t->s, 3, (guint64)P * 4096, late);
    cs_pkt_net_run(t->net, CS_TIME_NEVER);
}

static void test_sharp_tree(void)
{
    tree_t t;
    run(&t, 0);
    /* a packet's serialization: 4096 B + IB's 26 (+ RETH 16 on an AN's
     * one-packet messages) at 100 Gb/s */
    const double ser = (4096.0 + CS_PKT_IB_OVERHEAD + CS_PKT_RETH) * 8 / 100e9 * CS_PS_PER_S;
    for (int i = 0; i < 4; i++) {
        g_assert_cmpint(t.nsent[i], ==, 1);
        g_assert_cmpint(t.ndeliv[i], ==, 1);
        g_assert_cmpint(t.ndeliv[4 + i], ==, 1);
        g_assert_cmpint(t.deliv[i], ==, t.deliv[0]);   /* reduced at the root: every member's up ends */
        g_assert_cmpint(t.deliv[4 + i], >=, t.deliv[0]);
    }
    /* streaming: the result's last packet is four hops (serialization +
     * 100 ns each) behind the last one sent up, not a second slice */
    double end = (double)t.deliv[4];
    g_test_message("result at %.3f us; %d packets take %.3f us on one link", end / 1e6, P, P * ser / 1e6);
    g_assert_cmpfloat(end, >, P * ser);
    g_assert_cmpfloat(end, <, (P + 6) * ser + 4 * 100 * NS);
    /* each tree link: the slice once each way (P data, P ACKs of the
     * other way's data) */
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 2; k++) {
            cs_pkt_link_stats_t a, b;
            cs_pkt_net_link_stats(t.net, t.up[i][k], 0, &a);
            cs_pkt_net_link_stats(t.net, t.down[i][k], 0, &b);
            g_assert_cmpuint(a.tx_pkts, ==, 2 * P);
            g_assert_cmpuint(b.tx_pkts, ==, 2 * P);
        }
    cs_pkt_sharp_stats_t st;
    g_assert_true(cs_pkt_sharp_switch_stats(t.s, t.spine, &st));
    g_assert_cmpuint(st.reduced, ==, P);
    g_assert_cmpuint(st.replicated, ==, 2 * P);
    for (int l = 0; l < 2; l++) {
        g_assert_true(cs_pkt_sharp_switch_stats(t.s, t.leaf[l], &st));
        g_assert_cmpuint(st.reduced, ==, P);
        g_assert_cmpuint(st.replicated, ==, 2 * P);
        g_assert_cmpuint(st.held_max, <=, 2);   /* children in step */
    }
    g_assert_false(cs_pkt_sharp_switch_stats(t.s, t.host[0], &st));
    teardown(&t);
}

/* Host 3 starts 10 us late: the spine holds leaf 0's reduced packets
 * (about 10 us / ser of them) until leaf 1's come, and everything ends
 * about 10 us later. */
static void test_sharp_late(void)
{
    tree_t t0, t;
    run(&t0, 0);
    run(&t, 10 * US);
    const double ser = (4096.0 + CS_PKT_IB_OVERHEAD + CS_PKT_RETH) * 8 / 100e9 * CS_PS_PER_S;
    cs_pkt_sharp_stats_t sp, l1;
    g_assert_true(cs_pkt_sharp_switch_stats(t.s, t.spine, &sp));
    g_assert_true(cs_pkt_sharp_switch_stats(t.s, t.leaf[1], &l1));
    g_test_message("late member: spine held %" G_GUINT64_FORMAT " packets at most, leaf1 %" G_GUINT64_FORMAT
                   "; result at %.3f us (%.3f on time)", sp.held_max, l1.held_max, t.deliv[4] / 1e6,
                   t0.deliv[4] / 1e6);
    g_assert_cmpuint(l1.held_max, >=, (guint64)(0.8 * 10 * US / ser));
    g_assert_cmpuint(l1.held_max, <=, P);
    double shift = (double)(t.deliv[4] - t0.deliv[4]);
    g_assert_cmpfloat(shift, >, 9.5 * US);
    g_assert_cmpfloat(shift, <, 10.5 * US);
    teardown(&t0);
    teardown(&t);
}

/* Selective repeat with a loss on a tree edge: host 0's receive buffer
 * (lossy priority 0, the default 156096 B drained at 25 Gb/s, a quarter
 * of the link's rate: 100 packets come faster than it drains)
 * drops some of the result coming down leaf 0 -> host 0; the packets
 * after each gap are kept and accepted when the retransmission fills it.
 * (No credits here: on credits the NIC would hold back, not drop.)
 * Every accepted packet must reach the tree once, kept ones included, or
 * host 0 never completes. */
static void test_sharp_selective_loss(void)
{
    tree_t t;
    build_sel(&t, TRUE);
    g_assert_cmpint(cs_pkt_net_set_host_rx(t.net, t.host[0], 25e9, 0), ==, 0);
    members(&t);
    for (int i = 0; i < 4; i++) {
        cs_pkt_sharp_send(t.s, 4 + i, (guint64)P * 4096, 0);
        cs_pkt_sharp_send(t.s, i, (guint64)P * 4096, 0);
    }
    cs_pkt_net_run(t.net, CS_TIME_NEVER);
    guint64 drops = cs_pkt_net_host_rx_drops(t.net, t.host[0], 0);
    g_test_message("host 0 dropped %" G_GUINT64_FORMAT " result packets", drops);
    g_assert_cmpuint(drops, >, 0);
    for (int i = 0; i < 8; i++)
        g_assert_cmpint(t.ndeliv[i], ==, 1);
    cs_pkt_sharp_stats_t st;
    g_assert_true(cs_pkt_sharp_switch_stats(t.s, t.spine, &st));
    g_assert_cmpuint(st.reduced, ==, P);
    teardown(&t);
}

/* A group on VL 2 (its job's): every tree QP's data and ACKs ride VL 2,
 * none VL 0 (the qc given to cs_pkt_sharp_new says 0). */
static void test_sharp_vl(void)
{
    tree_t t;
    build(&t);
    members_on(&t, 2);
    for (int i = 0; i < 4; i++) {
        cs_pkt_sharp_send(t.s, 4 + i, (guint64)P * 4096, 0);
        cs_pkt_sharp_send(t.s, i, (guint64)P * 4096, 0);
    }
    cs_pkt_net_run(t.net, CS_TIME_NEVER);
    for (int i = 0; i < 8; i++)
        g_assert_cmpint(t.ndeliv[i], ==, 1);
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 2; k++) {
            cs_pkt_link_stats_t a0, a2;
            cs_pkt_net_link_stats(t.net, t.up[i][k], 0, &a0);
            cs_pkt_net_link_stats(t.net, t.up[i][k], 2, &a2);
            g_assert_cmpuint(a0.tx_pkts, ==, 0);
            g_assert_cmpuint(a2.tx_pkts, ==, 2 * P);
        }
    teardown(&t);
}

/* Routes that are not one tree: a child with two parents, two roots. */
static void test_sharp_not_tree(void)
{
    tree_t t;
    build(&t);
    const char *why = NULL;
    cs_pkt_sharp_hop_t h[2];
    hops_of(&t, 0, h);
    g_assert_true(cs_pkt_sharp_member(t.s, 1, 0, TRUE, 0, h, 2, new_qp, &t, &why));
    /* host 1 stops at its leaf: a second root */
    hops_of(&t, 1, h);
    g_assert_false(cs_pkt_sharp_member(t.s, 1, 1, TRUE, 0, h, 1, new_qp, &t, &why));
    g_assert_nonnull(strstr(why, "two roots"));
    /* host 0 again, now claimed by leaf 1's route (another parent) */
    hops_of(&t, 2, h);
    h[0].child = t.host[0];
    g_assert_false(cs_pkt_sharp_member(t.s, 1, 2, TRUE, 0, h, 2, new_qp, &t, &why));
    g_assert_nonnull(strstr(why, "two parents"));
    teardown(&t);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/pkt-sharp/tree", test_sharp_tree);
    g_test_add_func("/pkt-sharp/late-member", test_sharp_late);
    g_test_add_func("/pkt-sharp/selective-loss", test_sharp_selective_loss);
    g_test_add_func("/pkt-sharp/vl", test_sharp_vl);
    g_test_add_func("/pkt-sharp/not-a-tree", test_sharp_not_tree);
    return g_test_run();
}
