/* The lossy incast of tests/cli/ns3-crosscheck.sh on collsim's packet
 * network (cs_pkt_net.h), for comparison with tests/ns3/incast-ns3.cc,
 * which runs it in ns-3 and prints the same keys:
 *
 *   N senders -> one switch -> one receiver, every link at the same rate
 *   and propagation delay, priority 0 lossy (no PFC), RoCEv2 packets of
 *   'payload' bytes (WRITE-middle headers: payload + 82 wire bytes,
 *   cs_pkt_frame.h), each sender one flow without ACKs streaming at line
 *   rate from t = 0 (a QP without congestion control), the switch's buffer
 *   a plain drop-tail of 'buffer-pkts' packets: a shared-buffer MMU with
 *   no reserve and alpha = buffer bytes, so a packet is admitted exactly
 *   when the bytes held plus its own fit the buffer (cs_pkt_mmu_admit: its
 *   share alpha x free >= alpha x packet >= buffer never binds).
 *   With pmax > 0 the switch marks ECN with RED at Kmin/Kmax/Pmax given in
 *   packets (x wire bytes), at dequeue (cs_pkt_ecn.h).
 *
 * Prints one line: model=collsim and key=value pairs (sent, delivered,
 * goodput_gbps, dropped, marked, first_ps, last_ps, events, wall_s,
 * events_per_s). Also the benchmark's collsim side (bench/bench-ns3.sh). */
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>

#include "sim/cs_pkt_net.h"

#define PS_PER_S G_GUINT64_CONSTANT(1000000000000)

typedef struct {
    guint64 pkts, ce;
    cs_time_t first, last;
} sink_t;

static void on_deliver(void *ctx, const cs_pkt_t *pkt, cs_time_t now)
{
    sink_t *s = ctx;
    if (s->pkts == 0)
        s->first = now;
    s->last = now;
    s->pkts++;
    s->ce += (pkt->flags & CS_PKT_F_CE) != 0;
}

int main(int argc, char **argv)
{
    gint senders = 4, payload = 1024, buffer_pkts = 200;
    gint64 seed = 1;
    double rate_gbps = 100, prop_ns = 500, time_us = 2000;
    double kmin_pkts = 0, kmax_pkts = 0, pmax = 0;
    GOptionEntry entries[] = {
        { "senders", 0, 0, G_OPTION_ARG_INT, &senders, "senders into the switch", "N" },
        { "payload", 0, 0, G_OPTION_ARG_INT, &payload, "RoCE payload bytes per packet (the MTU)", "B" },
        { "rate-gbps", 0, 0, G_OPTION_ARG_DOUBLE, &rate_gbps, "every link's rate, Gb/s", "R" },
        { "prop-ns", 0, 0, G_OPTION_ARG_DOUBLE, &prop_ns, "every link's propagation delay, ns", "D" },
        { "buffer-pkts", 0, 0, G_OPTION_ARG_INT, &buffer_pkts, "bottleneck buffer, packets", "K" },
        { "time-us", 0, 0, G_OPTION_ARG_DOUBLE, &time_us, "simulated time, us", "T" },
        { "kmin-pkts", 0, 0, G_OPTION_ARG_DOUBLE, &kmin_pkts, "RED Kmin, packets", "P" },
        { "kmax-pkts", 0, 0, G_OPTION_ARG_DOUBLE, &kmax_pkts, "RED Kmax, packets", "P" },
        { "pmax", 0, 0, G_OPTION_ARG_DOUBLE, &pmax, "RED probability at Kmax; 0: no marking", "P" },
        { "seed", 0, 0, G_OPTION_ARG_INT64, &seed, "the run's seed (RED draws)", "S" },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    g_autoptr(GOptionContext) ctx = g_option_context_new("- a lossy incast on collsim's packet network");
    g_option_context_add_main_entries(ctx, entries, NULL);
    g_autoptr(GError) err = NULL;
    if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
        fprintf(stderr, "incast-collsim: %s\n", err->message);
        return 2;
    }
    if (senders < 1 || buffer_pkts < 1 || !cs_pkt_frame_mtu_valid((guint32)payload) || rate_gbps <= 0
        || prop_ns < 0 || time_us <= 0 || pmax < 0 || pmax > 1 || (pmax > 0 && !(kmin_pkts < kmax_pkts))) {
        fprintf(stderr, "incast-collsim: bad arguments (payload: a power of two 256..4096)\n");
        return 2;
    }

    const cs_pkt_frame_t frame = { .vlan = FALSE };
    const guint32 wire = cs_pkt_frame_wire(&frame, payload, payload, 0, FALSE);
    const guint64 bps = (guint64)(rate_gbps * 1e9 + 0.5);
    const cs_time_t until = (cs_time_t)(time_us * 1e6 + 0.5);

    g_autoptr(cs_pkt_net_t) net = cs_pkt_net_new();
    int sw = cs_pkt_net_add_switch(net), rx = cs_pkt_net_add_host(net);
    cs_pkt_mmu_cfg_t mc;
    cs_pkt_mmu_cfg_init(&mc, (guint64)buffer_pkts * wire);
    mc.reserve = 0;
    mc.lossless = 0;
    mc.alpha = (double)mc.buffer;
    if (cs_pkt_net_set_buffer(net, sw, &mc, 0) != 0) {
        fprintf(stderr, "incast-collsim: the switch refused its buffer\n");
        return 1;
    }
    cs_pkt_port_cfg_t pc;
    cs_pkt_port_cfg_init(&pc, bps, (cs_time_t)(prop_ns * 1000 + 0.5));
    int down = cs_pkt_net_add_link(net, sw, rx, &pc);
    /* enough packets for the whole run and a few more: never finishes */
    guint64 pkts = (guint64)until / ((guint64)wire * 8 * PS_PER_S / bps) + 16;
    cs_pkt_flow_cfg_t fc = {
        .bytes = pkts * (guint64)payload, .mtu = (guint32)payload, .prio = 0, .write = FALSE,
        .frame = frame, .start = 0,
    };
    g_autofree int *up = g_new(int, senders);
    g_autofree int *flow = g_new(int, senders);
    for (int i = 0; i < senders; i++) {
        int h = cs_pkt_net_add_host(net);
        up[i] = cs_pkt_net_add_link(net, h, sw, &pc);
        int route[2] = { up[i], down };
        flow[i] = cs_pkt_net_add_flow(net, route, 2, &fc);
    }
    cs_pkt_net_set_seed(net, (guint64)seed);
    if (pmax > 0) {
        cs_pkt_ecn_cfg_t ec = {
            .kmin = (guint64)(kmin_pkts * wire + 0.5), .kmax = (guint64)(kmax_pkts * wire + 0.5), .pmax = pmax,
        };
        if (cs_pkt_net_set_ecn(net, sw, &ec) != 0) {
            fprintf(stderr, "incast-collsim: the switch refused its ECN settings\n");
            return 1;
        }
    }
    sink_t sink = { 0 };
    cs_pkt_net_set_observer(net, on_deliver, &sink);

    gint64 t0 = g_get_monotonic_time();
    cs_pkt_net_run(net, until);
    double wall = (double)(g_get_monotonic_time() - t0) / 1e6;
    guint64 events = cs_pkt_net_events(net);

    guint64 sent = 0, dropped = 0;
    for (int i = 0; i < senders; i++) {
        sent += cs_pkt_port_tx_pkts(cs_pkt_net_port(net, up[i]), 0);
        dropped += cs_pkt_net_flow_dropped(net, flow[i]);
    }
    double goodput = (double)sink.pkts * payload * 8 / (time_us * 1e-6) / 1e9;
    printf("model=collsim senders=%d payload=%d wire=%u ser_ps=%" G_GUINT64_FORMAT " sent=%" G_GUINT64_FORMAT
           " delivered=%" G_GUINT64_FORMAT " goodput_gbps=%.6f dropped=%" G_GUINT64_FORMAT
           " marked=%" G_GUINT64_FORMAT " first_ps=%" G_GINT64_FORMAT " last_ps=%" G_GINT64_FORMAT
           " events=%" G_GUINT64_FORMAT " wall_s=%.6f events_per_s=%.0f\n",
           senders, payload, wire, (guint64)wire * 8 * PS_PER_S / bps, sent, sink.pkts, goodput, dropped,
           sink.ce, (gint64)sink.first, (gint64)sink.last, events, wall, wall > 0 ? (double)events / wall : 0.0);
    return 0;
}
