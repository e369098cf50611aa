/* Benchmark: the packet engine's speed and memory (issue #11 item 10).
 *
 * Usage: bench-packet [all|incast|engine|memory] [GiB]
 *
 * incast: N:1 incasts on the packet network alone (cs_pkt_net), one core:
 *   packet events per CPU second and packet hops (packets leaving a port)
 *   per CPU second, against the target of 10 million packet
 *   events per second. 'GiB' (default 8) is the payload into the receiver.
 *   - 64:1 at 400G, lossless priority, PFC with the formula's headroom
 *     (flows without ACKs: the network's cost alone);
 *   - 16:1 at 100G, the same with RED/ECN marking at the switch;
 *   - 16:1 at 400G, RC QPs with an ACK per packet (as the engine runs
 *     them), PFC;
 *   - 16:1 at 100G, DCQCN with ConnectX's defaults (paced senders), PFC
 *     and ECN;
 *   - 16:1 and 64:1 at 400G on InfiniBand (issue #14 item 9): RC QPs
 *     with ACKs, credits per VL (10000 per input port, the engine's
 *     default at 400G), flow-control packets; and the 16:1 again with
 *     IB congestion control on at the engine's defaults (FECN at the
 *     switch, BECN on the ACKs, paced senders).
 * engine: a 64-GPU all-reduce of 1 GiB (8 x dgx-h100, 8 x roce-400g per
 *   node, the preset's rail fabric; NCCL's own choice of algorithm)
 *   through the library as `collsim run --model packet` prices it (the
 *   engine's open, predict, close), target under 60 s; the events are
 *   the engine's own count (its -v line, printed as it is). Then the
 *   whole engine's events per CPU second (packet and flow events, the
 *   flow engine's programs included) on collectives of other shapes on
 *   the same cluster: all-reduce with NCCL_ALGO=Ring, all-gather and
 *   reduce-scatter; and the lowest of them all against the 10 M
 *   events/s.
 * memory: packets in the pool (the high-water of packets alive, sampled
 *   every simulated microsecond, and the pool's capacity) for a 1 MiB
 *   and a 1 GiB message on one QP, and for 8:1 incasts of 1 MiB, 64 MiB
 *   and 1 GiB per sender (an incast's packets alive are its switch queue,
 *   which stops growing at the pause thresholds); the target:
 *   memory follows packets in flight, never the message size (ratio
 *   1.0). And the process's peak RSS after an engine call of 1 MiB and
 *   then of 1 GiB.
 *
 *   And the bytes each item of the network allocates (glibc's mallinfo2
 *   in-use bytes around building it), which the engine's memory estimate
 *   uses (cs_engine_packet.c, PK_BYTES_PER_*): per NET link (port, PFC,
 *   MMU entry, receive path), per QP when added and once it has run.
 *
 * Nothing is asserted; every ratio printed is measured in this run.
 * CPU seconds (getrusage), as bench-flow: the machine may be shared. */
#include "config.h"

#include "bench-util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "models/cs_decide.h"
#include "models/cs_fabric_cfg.h"
#include "models/cs_params.h"
#include "models/cs_presets.h"
#include "sim/cs_engine.h"
#include "sim/cs_pkt.h"
#include "sim/cs_pkt_dcqcn.h"
#include "sim/cs_pkt_mmu.h"
#include "sim/cs_pkt_net.h"

#define GBPS 1000000000ull
#define NS ((cs_time_t)1000)
#define US ((cs_time_t)1000000)
#define MIB (1024ull * 1024)
#define GIB (1024ull * MIB)

#define TARGET_EVENTS_S 10e6          /* issue #11 item 10 */
#define TARGET_ENGINE_S 60.0

/* ---- incasts on the packet network ------------------------------------ */

typedef enum { IC_FLOWS, IC_ECN, IC_QPS, IC_DCQCN, IC_IB_QPS, IC_IB_CC } ic_kind_t;

typedef struct {
    const char *name;
    ic_kind_t kind;
    int n;
    guint64 rate;
} ic_cfg_t;

typedef struct {
    guint64 events, hops, delivered, drops, pool_peak, pool_cap;
    double cpu, wall;
    cs_time_t sim_end;                /* the last flow's last packet in (an idle QP's lazy
                                       * retransmission timer may pop later, to no effect) */
} ic_out_t;

/* N senders -> one switch -> one receiver, 100 m cables (500 ns), every
 * link both ways, priority 3 lossless. The switch buffer: the HPCC
 * fork's 16 MB per 50 Gb/s of its ports (fabric-models.md section 9, as
 * the engine sizes its switches), headroom from the formula. 'sample':
 * take the pool's in-use packets every simulated microsecond (memory
 * runs; the speed runs do not sample). */
static void incast_run(const ic_cfg_t *ic, guint64 per_sender, gboolean sample, ic_out_t *o)
{
    memset(o, 0, sizeof *o);
    g_autoptr(cs_pkt_net_t) net = cs_pkt_net_new();
    gboolean ib = ic->kind == IC_IB_QPS || ic->kind == IC_IB_CC;
    if (ib) {
        /* InfiniBand: credits per VL, 640 KB per input port (the engine's
         * default at 400G), instead of a shared buffer and PFC */
        cs_pkt_credit_cfg_t cc = { .refresh_ps = 0 };
        for (int v = 0; v < CS_PKT_PRIOS; v++)
            cc.blocks[v] = 10000;
        cs_pkt_net_set_credit(net, &cc);
        if (ic->kind == IC_IB_CC) {
            /* IB congestion control at the engine's defaults (ibcc = on) */
            cs_pkt_ibcc_cfg_t icc;
            cs_pkt_ibcc_cfg_default(&icc);
            if (cs_pkt_net_set_ibcc(net, &icc) != 0)
                g_error("bench-packet: IB congestion control could not be set; the case would time a run without it");
        }
    }
    int *host = g_new(int, ic->n), *up = g_new(int, ic->n);
    for (int i = 0; i < ic->n; i++)
        host[i] = cs_pkt_net_add_host(net);
    int sw = cs_pkt_net_add_switch(net), dst = cs_pkt_net_add_host(net);
    cs_pkt_mmu_cfg_t mc;
    cs_fabric_cfg_t fc0;              /* the engine's rule for a switch of this port rate */
    cs_fabric_cfg_init(&fc0);
    const char *why;
    cs_pkt_mmu_cfg_init(&mc, cs_fabric_switch_buffer(&fc0, ic->rate, &why));
    cs_fabric_cfg_clear(&fc0);
    if (!ib)
        cs_pkt_net_set_buffer(net, sw, &mc, -1);
    if (ic->kind == IC_ECN || ic->kind == IC_DCQCN)
        cs_pkt_net_set_ecn(net, sw, NULL);
    cs_pkt_port_cfg_t pc;
    cs_pkt_port_cfg_init(&pc, ic->rate, 500 * NS);
    int nlinks = 0;
    for (int i = 0; i < ic->n; i++) {
        up[i] = cs_pkt_net_add_link(net, host[i], sw, &pc);
        cs_pkt_net_add_link(net, sw, host[i], &pc);
        nlinks += 2;
    }
    int down = cs_pkt_net_add_link(net, sw, dst, &pc);
    int back = cs_pkt_net_add_link(net, dst, sw, &pc);
    nlinks += 2;
    cs_pkt_dcqcn_cfg_t dc;
    cs_pkt_dcqcn_cfg_connectx(&dc);
    for (int i = 0; i < ic->n; i++) {
        int route[2] = { up[i], down };
        if (ic->kind == IC_QPS || ib) {
            (void)back;
            cs_pkt_qp_cfg_t qc = { .mtu = 4096, .prio = ib ? 0 : 3, .ack_interval = 1, .frame = { .ib = ib },
                                   .timeout = CS_PKT_QP_TIMEOUT_PS(20), .retry_cnt = 7 };
            int qp = cs_pkt_net_add_qp(net, route, 2, &qc);
            cs_pkt_net_qp_post(net, qp, per_sender, 0);
        } else {
            cs_pkt_flow_cfg_t fc = { .bytes = per_sender, .mtu = 4096, .prio = 3, .write = TRUE };
            int f = cs_pkt_net_add_flow(net, route, 2, &fc);
            if (ic->kind == IC_DCQCN)
                cs_pkt_net_set_dcqcn(net, f, &dc);
        }
    }
    cs_pkt_pool_t *pool = cs_pkt_net_pool(net);
    double c0 = bench_cpu_now(), w0 = bench_now();
    if (sample) {
        for (cs_time_t t = US; cs_pkt_net_next(net) != CS_TIME_NEVER; t += US) {
            o->events += cs_pkt_net_run(net, t);
            o->pool_peak = MAX(o->pool_peak, cs_pkt_pool_in_use(pool));
        }
    } else {
        o->events = cs_pkt_net_run(net, CS_TIME_NEVER);
    }
    o->cpu = bench_cpu_now() - c0;
    o->wall = bench_now() - w0;
    o->pool_cap = cs_pkt_pool_capacity(pool);
    for (int l = 0; l < nlinks; l++)
        for (int p = 0; p < CS_PKT_PRIOS; p++)
            o->hops += cs_pkt_port_tx_pkts(cs_pkt_net_port(net, l), p);
    for (int i = 0; i < ic->n; i++) {
        o->sim_end = MAX(o->sim_end, cs_pkt_net_flow_done(net, i));
        o->delivered += cs_pkt_net_flow_delivered(net, i);
        o->drops += cs_pkt_net_flow_dropped(net, i);
    }
    g_free(host);
    g_free(up);
}

static void bench_incast(double gib)
{
    static const ic_cfg_t runs[] = {
        { "64:1 400G PFC", IC_FLOWS, 64, 400 * GBPS },
        { "16:1 100G PFC+ECN", IC_ECN, 16, 100 * GBPS },
        { "16:1 400G QPs+ACKs PFC", IC_QPS, 16, 400 * GBPS },
        { "16:1 100G DCQCN(CX)", IC_DCQCN, 16, 100 * GBPS },
        { "16:1 400G IB QPs credits", IC_IB_QPS, 16, 400 * GBPS },
        { "64:1 400G IB QPs credits", IC_IB_QPS, 64, 400 * GBPS },
        { "16:1 400G IB credits+CC", IC_IB_CC, 16, 400 * GBPS },
    };
    guint64 total = (guint64)(gib * (double)GIB);
    printf("# incast: packet events per CPU second on one core, %.2f GiB into the receiver "
           "(target: >= %.0f M events/s)\n", gib, TARGET_EVENTS_S / 1e6);
    printf("# %-24s %8s %12s %12s %8s %8s %11s %11s %9s\n", "run", "sim_ms", "events", "pkt_hops", "cpu_s",
           "wall_s", "events/s", "hops/s", "vs_target");
    for (gsize r = 0; r < G_N_ELEMENTS(runs); r++) {
        ic_out_t o;
        incast_run(&runs[r], total / (guint64)runs[r].n, FALSE, &o);
        double eps = (double)o.events / MAX(o.cpu, 1e-9);
        printf("  %-24s %8.3f %12" G_GUINT64_FORMAT " %12" G_GUINT64_FORMAT " %8.3f %8.3f %11.3g %11.3g %8.2fx%s\n",
               runs[r].name, (double)o.sim_end / 1e9, o.events, o.hops, o.cpu, o.wall, eps,
               (double)o.hops / MAX(o.cpu, 1e-9), eps / TARGET_EVENTS_S,
               o.delivered == total / (guint64)runs[r].n * (guint64)runs[r].n ? "" : "  (not all delivered)");
        fflush(stdout);
    }
}

/* ---- the engine through the library ------------------------------------ */

typedef struct {
    double sim_s, cpu, wall;
    long rss_kib;
    char *counters;
    cs_decision_t d;
} eng_out_t;

/* The collective an engine call prices: NCCL's choice unless 'algo'
 * (NCCL_ALGO) is set. */
typedef struct {
    const char *name;
    cs_coll_t coll;
    const char *algo;
    guint64 size;                     /* nccl-tests' size column */
} eng_cfg_t;

static gboolean engine_call(const eng_cfg_t *ec, eng_out_t *o)
{
    GError *err = NULL;
    cs_params_t params;
    cs_params_init_defaults(&params);
    cs_build_opts_t bo;
    cs_build_opts_init(&bo);
    bo.nodes = 8;
    bo.nic = "roce-400g";
    gboolean ok = FALSE;
    void *state = NULL;
    const cs_engine_ops_t *ops = cs_engine_find("packet");
    g_autoptr(cs_topo_t) topo = cs_preset_build("dgx-h100", &bo, &err);
    g_autoptr(cs_nccl_env_t) env = cs_nccl_env_new();
    if (ec->algo != NULL)
        cs_nccl_env_set(env, "NCCL_ALGO", ec->algo, "bench-packet");
    g_autoptr(cs_comm_t) comm = topo != NULL ? cs_comm_new(topo, env, &err) : NULL;
    int nranks = comm != NULL ? cs_comm_info(comm)->nranks : 0;
    guint64 count = cs_coll_count(ec->coll, ec->size, CS_DTYPE_FLOAT, nranks);
    guint64 nb = cs_coll_nccl_bytes(ec->coll, count, CS_DTYPE_FLOAT, nranks);
    if (ops == NULL || comm == NULL || !cs_comm_decide(comm, ec->coll, CS_DTYPE_FLOAT, nb, &o->d, &err))
        goto out_params;
    cs_engine_job_t job = { .topo = topo, .comm = comm, .params = &params, .coll = ec->coll,
                            .dtype = CS_DTYPE_FLOAT, .redop = CS_REDOP_SUM, .root = -1 };
    cs_engine_call_t call = { .size = ec->size, .count = count, .nccl_bytes = nb, .decision = &o->d };
    double c0 = bench_cpu_now(), w0 = bench_now();
    if (ops->open != NULL && !ops->open(&job, &state, &err))
        goto out_params;
    double t[2];
    if (!ops->predict(state, &job, &call, t, &err))
        goto out_state;
    o->cpu = bench_cpu_now() - c0;
    o->wall = bench_now() - w0;
    o->sim_s = t[0];
    o->counters = ops->counters != NULL ? ops->counters(state) : NULL;
    o->rss_kib = bench_peak_rss_kib(FALSE);
    ok = TRUE;
out_state:
    if (ops->close != NULL)
        ops->close(state);
out_params:
    cs_params_clear(&params);
    if (!ok) {
        fprintf(stderr, "bench-packet: %s\n", err != NULL ? err->message : "no packet engine");
        g_clear_error(&err);
    }
    return ok;
}

/* Packet + flow events per CPU second of a call (its -v counters), or
 * -1 when they are missing. */
static double call_events_s(const eng_out_t *o, guint64 *pe, guint64 *fe)
{
    *pe = *fe = 0;
    if (o->counters == NULL
        || sscanf(o->counters, "packet events %" G_GUINT64_FORMAT ", flow events %" G_GUINT64_FORMAT, pe, fe) != 2)
        return -1;
    return (double)(*pe + *fe) / MAX(o->cpu, 1e-9);
}

static gboolean bench_engine(void)
{
    static const eng_cfg_t runs[] = {
        { "all-reduce 1 GiB (NCCL's choice)", CS_COLL_ALLREDUCE, NULL, GIB },
        { "all-reduce 1 GiB NCCL_ALGO=Ring", CS_COLL_ALLREDUCE, "Ring", GIB },
        { "all-gather 1 GiB", CS_COLL_ALLGATHER, NULL, GIB },
        { "reduce-scatter 1 GiB", CS_COLL_REDUCESCATTER, NULL, GIB },
    };
    enum { NRUNS = G_N_ELEMENTS(runs) };
    eng_out_t o[NRUNS];
    memset(o, 0, sizeof o);
    printf("# engine: all-reduce of 1 GiB float, 8 x dgx-h100 (64 GPUs), 8 x roce-400g per node, rail fabric, "
           "through the library (open + predict + close) (target: < %.0f s)\n", TARGET_ENGINE_S);
    gboolean ok = engine_call(&runs[0], &o[0]);
    if (ok) {
        printf("  %s/%s, %d channels: simulated %.1f us; CPU %.2f s, wall %.2f s: %.2fx under the target (wall)\n",
               cs_algo_name(o[0].d.algo), cs_proto_name(o[0].d.proto), o[0].d.nchannels, o[0].sim_s * 1e6,
               o[0].cpu, o[0].wall, TARGET_ENGINE_S / MAX(o[0].wall, 1e-9));
        guint64 pe, fe;
        double eps = call_events_s(&o[0], &pe, &fe);
        if (eps >= 0)
            printf("  events: %" G_GUINT64_FORMAT " packet + %" G_GUINT64_FORMAT " flow = %.3g per CPU second "
                   "(%.2fx the %.0f M target)\n", pe, fe, eps, eps / TARGET_EVENTS_S, TARGET_EVENTS_S / 1e6);
        printf("  engine -v: %s\n", o[0].counters != NULL ? o[0].counters : "(none)");
        /* the whole engine's speed on collectives of other shapes */
        printf("# collectives: the whole engine's events (packet + flow) per CPU second, same cluster "
               "(target: >= %.0f M events/s each)\n", TARGET_EVENTS_S / 1e6);
        printf("# %-34s %-20s %9s %10s %8s %9s %9s\n", "collective", "algorithm", "sim_us", "events", "cpu_s",
               "events/s", "vs_target");
    }
    double lowest = -1, all_ev = 0, all_cpu = 0;
    for (gsize r = 0; ok && r < NRUNS; r++) {
        if (r > 0 && !engine_call(&runs[r], &o[r])) {
            ok = FALSE;
            break;
        }
        guint64 pe, fe;
        double eps = call_events_s(&o[r], &pe, &fe);
        g_autofree char *alg = g_strdup_printf("%s/%s x%d", cs_algo_name(o[r].d.algo), cs_proto_name(o[r].d.proto),
                                               o[r].d.nchannels);
        if (eps < 0) {
            printf("  %-34s %-20s (no event counters)\n", runs[r].name, alg);
        } else {
            printf("  %-34s %-20s %9.1f %10" G_GUINT64_FORMAT " %8.3f %9.3g %8.2fx\n", runs[r].name, alg,
                   o[r].sim_s * 1e6, pe + fe, o[r].cpu, eps, eps / TARGET_EVENTS_S);
            lowest = lowest < 0 ? eps : MIN(lowest, eps);
            all_ev += (double)(pe + fe);
            all_cpu += o[r].cpu;
        }
        fflush(stdout);
    }
    if (ok && lowest >= 0)
        printf("  collective events/s: lowest %.2f M/s, all together %.2f M/s (target %.0f M/s): lowest %.2fx\n",
               lowest / 1e6, all_ev / MAX(all_cpu, 1e-9) / 1e6, TARGET_EVENTS_S / 1e6, lowest / TARGET_EVENTS_S);
    for (gsize r = 0; r < NRUNS; r++)
        g_free(o[r].counters);
    return ok;
}

/* ---- memory against message size ---------------------------------------- */

/* One RC QP (ACK per packet) host -> switch -> host at 400G with one
 * message: the pool's high-water and capacity. */
static void qp_pool(guint64 bytes, guint64 *peak, guint64 *cap)
{
    g_autoptr(cs_pkt_net_t) net = cs_pkt_net_new();
    int a = cs_pkt_net_add_host(net), s = cs_pkt_net_add_switch(net), b = cs_pkt_net_add_host(net);
    cs_pkt_port_cfg_t pc;
    cs_pkt_port_cfg_init(&pc, 400 * GBPS, 500 * NS);
    int route[2] = { cs_pkt_net_add_link(net, a, s, &pc), cs_pkt_net_add_link(net, s, b, &pc) };
    cs_pkt_net_add_link(net, b, s, &pc);
    cs_pkt_net_add_link(net, s, a, &pc);
    cs_pkt_qp_cfg_t qc = { .mtu = 4096, .prio = 3, .ack_interval = 1, .timeout = CS_PKT_QP_TIMEOUT_PS(20),
                           .retry_cnt = 7 };
    int qp = cs_pkt_net_add_qp(net, route, 2, &qc);
    cs_pkt_net_qp_post(net, qp, bytes, 0);
    *peak = 0;
    for (cs_time_t t = US; cs_pkt_net_next(net) != CS_TIME_NEVER; t += US) {
        cs_pkt_net_run(net, t);
        *peak = MAX(*peak, cs_pkt_pool_in_use(cs_pkt_net_pool(net)));
    }
    *cap = cs_pkt_pool_capacity(cs_pkt_net_pool(net));
}

#ifdef __GLIBC__
static double heap_used(void)
{
    struct mallinfo2 m = mallinfo2();
    return (double)m.uordblks + (double)m.hblkhd;
}

/* H hosts on one switch (a link each way, a 64 MB MMU, receive paths),
 * then Q QPs with DCQCN between neighbours, then 64 KiB posted on each
 * and 1 us run: bytes per link and per QP. */
static void per_item(int H, int Q)
{
    double u0 = heap_used();
    cs_pkt_net_t *net = cs_pkt_net_new();
    int sw = cs_pkt_net_add_switch(net);
    g_autofree int *up = g_new(int, H), *down = g_new(int, H);
    cs_pkt_port_cfg_t pc;
    cs_pkt_port_cfg_init(&pc, 400 * GBPS, 500 * NS);
    for (int i = 0; i < H; i++) {
        int h = cs_pkt_net_add_host(net);
        up[i] = cs_pkt_net_add_link(net, h, sw, &pc);
        down[i] = cs_pkt_net_add_link(net, sw, h, &pc);
        cs_pkt_net_set_host_rx(net, h, 400e9, 1 << 20);
    }
    cs_pkt_mmu_cfg_t mc;
    cs_pkt_mmu_cfg_init(&mc, 64000000);
    mc.lossless = 1u << 3;
    cs_pkt_net_set_buffer(net, sw, &mc, -1);
    double u1 = heap_used();
    cs_pkt_qp_cfg_t qc = { .mtu = 4096, .prio = 3, .ack_interval = 1, .timeout = CS_PKT_QP_TIMEOUT_PS(20),
                           .retry_cnt = 7 };
    cs_pkt_dcqcn_cfg_t dc;
    cs_pkt_dcqcn_cfg_connectx(&dc);
    for (int q = 0; q < Q; q++) {
        int route[2] = { up[q % H], down[(q + 1) % H] };
        cs_pkt_net_set_dcqcn(net, cs_pkt_net_add_qp(net, route, 2, &qc), &dc);
    }
    double u2 = heap_used();
    for (int q = 0; q < Q; q++)
        cs_pkt_net_qp_post(net, q, 64 * 1024, 0);
    cs_pkt_net_run(net, US);
    double u3 = heap_used();
    printf("  per item (%d hosts, %d QPs): %.0f B per NET link (port, PFC, MMU entry, receive path), "
           "%.0f B per QP added, %.0f B per QP after 64 KiB and 1 us (pool blocks of packets in flight included)\n",
           H, Q, (u1 - u0) / (2.0 * H), (u2 - u1) / Q, (u3 - u1) / Q);
    cs_pkt_net_free(net);
}
#endif

static gboolean bench_memory(void)
{
#ifdef __GLIBC__
    per_item(1024, 4096);
    per_item(1024, 32768);
#endif
    printf("# memory: packets alive at once (high-water, sampled every simulated us) and pool capacity, "
           "1 MiB against 1 GiB (target: ratio 1.0, memory never grows with message size)\n");
    guint64 p1, c1, p2, c2;
    qp_pool(MIB, &p1, &c1);
    qp_pool(GIB, &p2, &c2);
    printf("  one QP, 400G, ACKs:  1 MiB: peak %" G_GUINT64_FORMAT " packets, capacity %" G_GUINT64_FORMAT
           "; 1 GiB: peak %" G_GUINT64_FORMAT ", capacity %" G_GUINT64_FORMAT "; ratio %.2f (capacity %.2f)\n",
           p1, c1, p2, c2, (double)p2 / (double)MAX(p1, 1), (double)c2 / (double)MAX(c1, 1));
    /* An incast's packets alive are its switch's queue: they grow with
     * the message until the PGs reach their pause thresholds, and then
     * stop, bounded by the buffer (128 MB here: at most 128e6 / 4178 =
     * 30636 packets queued, plus two per sender at its NIC and those on
     * the wires). 1 MiB per sender ends before the queue gets there, so
     * the ratio that shows whether memory follows the message is 1 GiB
     * against 64 MiB; 1 MiB is printed too. */
    static const ic_cfg_t ic = { "8:1 400G PFC", IC_FLOWS, 8, 400 * GBPS };
    static const guint64 sizes[] = { MIB, 64 * MIB, GIB };
    ic_out_t o[3];
    for (int i = 0; i < 3; i++)
        incast_run(&ic, sizes[i], TRUE, &o[i]);
    printf("  8:1 incast, 400G, PFC, 128 MB switch buffer, per sender 1 MiB / 64 MiB / 1 GiB: peak %" G_GUINT64_FORMAT
           " / %" G_GUINT64_FORMAT " / %" G_GUINT64_FORMAT " packets (capacity %" G_GUINT64_FORMAT " / %"
           G_GUINT64_FORMAT " / %" G_GUINT64_FORMAT "); 1 GiB vs 64 MiB %.2f (capacity %.2f), vs 1 MiB %.2f; "
           "bound: buffer / 4178 B = %.0f packets\n",
           o[0].pool_peak, o[1].pool_peak, o[2].pool_peak, o[0].pool_cap, o[1].pool_cap, o[2].pool_cap,
           (double)o[2].pool_peak / (double)MAX(o[1].pool_peak, 1), (double)o[2].pool_cap / (double)MAX(o[1].pool_cap, 1),
           (double)o[2].pool_peak / (double)MAX(o[0].pool_peak, 1), 128e6 / 4178);
    eng_out_t e1 = { 0 }, e2 = { 0 };
    static const eng_cfg_t small = { "all-reduce 1 MiB", CS_COLL_ALLREDUCE, NULL, MIB };
    static const eng_cfg_t large = { "all-reduce 1 GiB", CS_COLL_ALLREDUCE, NULL, GIB };
    if (!engine_call(&small, &e1) || !engine_call(&large, &e2))
        return FALSE;
    printf("  engine, 64 GPUs: peak RSS after the 1 MiB call %.1f MiB, after the 1 GiB call %.1f MiB "
           "(ratio %.2f; the process's high-water: the second includes the first)\n",
           e1.rss_kib / 1024.0, e2.rss_kib / 1024.0, (double)e2.rss_kib / (double)MAX(e1.rss_kib, 1));
    g_free(e1.counters);
    g_free(e2.counters);
    return TRUE;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "all";
    double gib = argc > 2 ? g_ascii_strtod(argv[2], NULL) : 8.0;
    gboolean all = g_str_equal(what, "all");
    if (!all && !g_str_equal(what, "incast") && !g_str_equal(what, "engine") && !g_str_equal(what, "memory")) {
        fprintf(stderr, "usage: bench-packet [all|incast|engine|memory] [GiB]\n");
        return 2;
    }
    if (gib <= 0)
        gib = 8.0;
    printf("# bench-packet: the packet engine (issue #11 item 10); CPU seconds from getrusage, one core\n");
    if (all || g_str_equal(what, "incast"))
        bench_incast(gib);
    if ((all || g_str_equal(what, "engine")) && !bench_engine())
        return 1;
    if ((all || g_str_equal(what, "memory")) && !bench_memory())
        return 1;
    return 0;
}
