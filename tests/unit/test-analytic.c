/* The analytic engine against oracles derived by hand from the formulas of
 * docs/model-analytic.md, on tiny hand-built topologies with hand-written
 * communicator choices (no decision code involved), plus monotonicity and
 * determinism. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "sim/cs_engine_analytic-int.h"
#include "models/cs_presets.h"
#include "util/cs_error.h"

#define US 1e-6
#define GB 1e9

static cs_params_t P;

static double par(cs_param_id_t id)
{
    return cs_params_get(&P, id);
}

static void assert_rel(double got, double want)
{
    if (!(fabs(got - want) <= 1e-9 * fabs(want)))
        g_error("got %.15g, want %.15g (rel %.3g)", got, want, fabs(got - want) / fabs(want));
}

/* ---- topology builders ------------------------------------------------ */

static int dev(cs_topo_t *t, cs_dev_kind_t kind, const char *name, int node, int local, const char *gpu)
{
    cs_device_t d = { 0 };
    d.kind = kind;
    d.name = (char *)name;
    d.node = node;
    d.local = local;
    d.rank = -1;
    if (kind == CS_DEV_GPU) {
        d.gpu = cs_gpu_model_find(gpu);
        g_assert_nonnull(d.gpu);
        d.gdr = TRUE;
    } else if (kind == CS_DEV_NIC) {
        d.nic_kind = CS_NIC_IB;
        d.nic_bw = 50e9;
        d.nic_ports = 1;
        d.gdr = TRUE;
    } else if (kind == CS_DEV_CPU) {
        d.vendor = CS_CPU_INTEL;
    }
    return cs_topo_add_device(t, &d);
}

static int pci(cs_topo_t *t, int a, int b, int gen, double lat)
{
    int l = cs_topo_add_link(t, a, b, CS_LINK_PCI, cs_pcie_bw(gen, 16), lat, 0);
    t->links[l].pcie_gen = t->links[t->links[l].reverse].pcie_gen = gen;
    t->links[l].pcie_width = t->links[t->links[l].reverse].pcie_width = 16;
    return l;
}

static void finish(cs_topo_t *t)
{
    g_autoptr(GError) err = NULL;
    gboolean ok = cs_topo_finish(t, &err);
    g_assert_no_error(err);
    g_assert_true(ok);
}

/* One node: cpu - sw - {gpu0, gpu1}, all PCIe Gen 'gen' x16, 100 ns per link. */
static cs_topo_t *topo_pcie2(const char *gpu, int gen)
{
    cs_topo_t *t = cs_topo_new("test:pcie2");
    int cpu = dev(t, CS_DEV_CPU, "cpu0", 0, 0, NULL);
    int sw = dev(t, CS_DEV_PCISW, "sw0", 0, 0, NULL);
    int g0 = dev(t, CS_DEV_GPU, "gpu0", 0, 0, gpu);
    int g1 = dev(t, CS_DEV_GPU, "gpu1", 0, 1, gpu);
    pci(t, cpu, sw, gen, 100e-9);
    pci(t, sw, g0, gen, 100e-9);
    pci(t, sw, g1, gen, 100e-9);
    finish(t);
    return t;
}

/* One node: 8 H100 SXM on one NVSwitch with 18 links of 25 GB/s each. */
static cs_topo_t *topo_nvswitch8(void)
{
    cs_topo_t *t = cs_topo_new("test:nvswitch8");
    int cpu = dev(t, CS_DEV_CPU, "cpu0", 0, 0, NULL);
    int nvs = dev(t, CS_DEV_NVSWITCH, "nvs0", 0, 0, NULL);
    for (int i = 0; i < 8; i++) {
        char name[16];
        g_snprintf(name, sizeof name, "gpu%d", i);
        int g = dev(t, CS_DEV_GPU, name, 0, i, "h100-sxm");
        int l = cs_topo_add_link(t, g, nvs, CS_LINK_NVL, 18 * 25e9, 0, 0);
        t->links[l].count = t->links[t->links[l].reverse].count = 18;
        pci(t, cpu, g, 5, 0);
    }
    finish(t);
    return t;
}

/* Two nodes, 'gpus' GPUs each: cpu - sw(Gen5) - {gpus, nic}; NICs joined
 * by a leaf switch with cables of the NIC's speed; switch latency 'swlat'. */
static cs_topo_t *topo_net2g(double nic_bw, double swlat, int gpus)
{
    cs_topo_t *t = cs_topo_new("test:net2");
    int nics[2];
    for (int n = 0; n < 2; n++) {
        char name[32];
        g_snprintf(name, sizeof name, "n%d.cpu0", n);
        int cpu = dev(t, CS_DEV_CPU, name, n, 0, NULL);
        g_snprintf(name, sizeof name, "n%d.sw0", n);
        int sw = dev(t, CS_DEV_PCISW, name, n, 0, NULL);
        g_snprintf(name, sizeof name, "n%d.nic0", n);
        nics[n] = dev(t, CS_DEV_NIC, name, n, 0, NULL);
        t->devs[nics[n]].nic_bw = nic_bw;
        pci(t, cpu, sw, 5, 0);
        pci(t, sw, nics[n], 5, 0);
        for (int i = 0; i < gpus; i++) {
            g_snprintf(name, sizeof name, "n%d.gpu%d", n, i);
            int g = dev(t, CS_DEV_GPU, name, n, i, "h100-sxm");
            pci(t, sw, g, 5, 0);
        }
    }
    int leaf = dev(t, CS_DEV_SWITCH, "leaf0", -1, 0, NULL);
    for (int n = 0; n < 2; n++)
        cs_topo_add_link(t, nics[n], leaf, CS_LINK_NET, nic_bw, 0, 0);
    t->fabric.kind = CS_FABRIC_RAIL;
    t->fabric.oversubscription = 1;
    t->fabric.nodes_per_leaf = 2;
    t->fabric.switch_lat = swlat;
    finish(t);
    return t;
}

static cs_topo_t *topo_net2(double nic_bw, double swlat)
{
    return topo_net2g(nic_bw, swlat, 1);
}

/* Communicator choices as NCCL would make them for these small cases. */
typedef struct {
    cs_comm_info_t info;
    int order[16];
} comm_fix_t;

static void comm_fix(comm_fix_t *c, const cs_topo_t *t, cs_transport_t intra, cs_transport_t inter, int nics,
                     double nic_bw, gboolean gdr)
{
    memset(c, 0, sizeof *c);
    c->info.nranks = t->ngpus;
    c->info.nnodes = t->nnodes;
    c->info.ppn = t->ngpus / t->nnodes;
    c->info.cc = cs_topo_rank_dev(t, 0)->gpu->sm;
    c->info.intra_transport = intra;
    c->info.inter_transport = inter;
    c->info.gdr = gdr;
    c->info.nics_used = nics;
    c->info.nic_bw = nic_bw;
    for (int i = 0; i < t->ngpus; i++)
        c->order[i] = i;
    c->info.ring_order = c->order;
    c->info.intra.transport = intra;
    c->info.inter.transport = inter;
    c->info.inter.gdr = gdr;
}

static void hw_of(cs_analytic_hw_t *hw, const cs_topo_t *t, const comm_fix_t *c)
{
    g_autoptr(GError) err = NULL;
    gboolean ok = cs_analytic_hw_init(hw, t, &c->info, NULL, &P, 0, &err);
    g_assert_no_error(err);
    g_assert_true(ok);
}

static double time_of(const cs_analytic_hw_t *hw, cs_coll_t coll, cs_algo_t a, cs_proto_t p, int nch,
                      int nthreads, guint64 chunk, double S)
{
    cs_decision_t d;
    memset(&d, 0, sizeof d);
    d.algo = a;
    d.proto = p;
    d.nchannels = nch;
    d.nthreads = nthreads;
    d.chunk_bytes = chunk;
    cs_engine_call_t call = { .size = (guint64)S, .count = (guint64)S / 4, .nccl_bytes = (guint64)S, .decision = &d };
    double t[2];
    g_autoptr(GError) err = NULL;
    gboolean ok = cs_analytic_time(hw, &P, coll, &call, t, &err);
    g_assert_no_error(err);
    g_assert_true(ok);
    /* A ring passes each rank's own S/n through its channels once more at
     * their copy rate while the links idle (cs_engine_ring_pass_s): out of
     * place an all-gather's copy into the output, in both placements a
     * reduce-scatter's last step where no ring edge is the network's. Else
     * the two placements agree. The time returned is the algorithm's,
     * without that pass, for the oracles. */
    gboolean ring = a == CS_ALGO_RING && hw->nranks > 1;
    static const int full[CS_PROTO_COUNT] = { 512, 640, 512 };
    double pass = S / hw->nranks /
                  (nch * par(CS_P_CH_SIMPLE_SM70 + hw->arch) * 1e9 *
                   (nthreads > 0 ? MIN(1.0, (double)nthreads / full[p]) : 1.0));
    if (ring && coll == CS_COLL_ALLGATHER) {
        assert_rel(t[CS_OOP], t[CS_INP] + pass);
    } else if (ring && coll == CS_COLL_REDUCESCATTER && !hw->ring_net) {
        g_assert_cmpfloat(t[CS_OOP], ==, t[CS_INP]);
        return t[CS_INP] - pass;
    } else {
        g_assert_cmpfloat(t[CS_OOP], ==, t[CS_INP]);
    }
    return t[CS_INP];
}

/* ---- oracles ---------------------------------------------------------- */

/* Launch cost: the GPU's side of a call. The host's (one process per GPU
 * in these fixtures: lat.launch.cpu per call) is below every time priced
 * here; test_host_launch prices the layouts where it binds. */
static double launch(void)
{
    return par(CS_P_LAT_LAUNCH) * US;
}

/* A ring's time (docs/model-analytic.md, "Ring AllReduce, AllGather,
 * ReduceScatter") with hops of latency hi inside nodes and hn between
 * them (synchronisation included), 'inter' of the 'hops' crossing nodes,
 * ppn ranks per node, every rank sending v S at the rate b over nch
 * channels in chunks of 'chunk' bytes, across nodes: per loop the steps' slices, plus the
 * best run of hops whose latency the other slices do not cover, or the
 * credits' bound, whichever is longer. */
static double ring_oracle(double S, int n, int ppn, int nch, double chunk, gboolean simple, double v, double b,
                          double hops, double inter, double hi, double hn)
{
    int K = simple ? 2 : 1, C = 8 / K;
    double D = S / nch, loop = n * chunk, nloops = MAX(1, ceil(D / loop));
    double last = MIN(chunk, ceil((D - (nloops - 1) * loop) / n));
    double rate = v / (v / b) / nch;   /* one channel's edge */
    double hmax = inter > 0 ? (hops > inter ? MAX(hi, hn) : hn) : hi;
    double t = 0, w = 0;
    for (int i = 0; i < 2; i++) {
        double ts = (i == 0 ? chunk : last) / K / rate, m = i == 0 ? nloops - 1 : 1;
        double gi = hi - (K - 1) * ts, gn = hn - (K - 1) * ts;
        double run = MAX(0, MAX((hops - inter) * gi + inter * gn, inter > 0 ? (ppn - 1) * MAX(0, gi) + MAX(0, gn) : 0));
        t += m * (hops * K * ts + run);
        w += m * hops * K * (2 * ts + hmax) / C;
    }
    return MAX(t, w);
}

/* 2 GPUs behind one PCIe switch, ring Simple: every directed link carries
 * one ring edge, so the ring moves PCIe x eff.pcie; n = 2 moves S per rank
 * in 2 steps of 2 links' latency plus the hop and Simple sync costs. */
static void test_pcie_ring(void)
{
    g_autoptr(cs_topo_t) t = topo_pcie2("h100-pcie", 4);
    comm_fix_t c;
    comm_fix(&c, t, CS_XPORT_P2P_PCI, CS_XPORT_NET_IB, 0, 0, FALSE);
    cs_analytic_hw_t hw;
    hw_of(&hw, t, &c);
    g_assert_false(hw.ring_net);   /* P2P edges: a reduce-scatter pays its last step (time_of) */
    double B = cs_pcie_bw(4, 16) * par(CS_P_EFF_PCIE);
    assert_rel(hw.intra_bw, B);
    assert_rel(hw.intra_lat, 200e-9);

    double S = 1 << 30;
    double h = 200e-9 + (par(CS_P_LAT_HOP_PCIE) + par(CS_P_LAT_SYNC_SIMPLE)) * US;
    /* One node keeps every hop's latency, however large the slices; each
     * chunk ends with a copy out of the FIFO that sends nothing, S/n over
     * the 2 channels' CTAs (cs_engine_ring_recv_copies: P2P, one process
     * per GPU) */
    g_assert_true(hw.ring_recv_copies);
    double R = 2 * par(CS_P_CH_SIMPLE_SM90) * GB;
    assert_rel(time_of(&hw, CS_COLL_ALLREDUCE, CS_ALGO_RING, CS_PROTO_SIMPLE, 2, 512, 0, S),
               launch() + 2 * h + S / B + S / 2 / R);
    /* Large sizes: busbw (= algbw for n = 2) tends to the link rate and
     * that copy in series */
    double big = 1e15;
    double tb = time_of(&hw, CS_COLL_ALLREDUCE, CS_ALGO_RING, CS_PROTO_SIMPLE, 2, 512, 0, big);
    g_assert_cmpfloat(fabs(big / tb / (1 / (1 / B + 1 / (2 * R))) - 1), <, 1e-9);
    /* where the sender writes into the output (one process, NCCL <= 2.22)
     * there is no copy */
    hw.ring_recv_copies = FALSE;
    assert_rel(time_of(&hw, CS_COLL_ALLREDUCE, CS_ALGO_RING, CS_PROTO_SIMPLE, 2, 512, 0, S), launch() + 2 * h + S / B);
    tb = time_of(&hw, CS_COLL_ALLREDUCE, CS_ALGO_RING, CS_PROTO_SIMPLE, 2, 512, 0, big);
    g_assert_cmpfloat(fabs(big / tb / B - 1), <, 1e-9);
    hw.ring_recv_copies = TRUE;

    /* LL halves the link's payload rate, and 2 Hopper LL channels may
     * move less: the lower binds. */
    double hll = 200e-9 + (par(CS_P_LAT_HOP_PCIE) + par(CS_P_LAT_SYNC_LL)) * US;
    double bll = MIN(B * par(CS_P_PROTO_EFF_LL), 2 * par(CS_P_CH_LL_SM90) * GB);
    assert_rel(time_of(&hw, CS_COLL_ALLREDUCE, CS_ALGO_RING, CS_PROTO_LL, 2, 512, 0, S),
               launch() + 2 * hll + S / bll + S / 2 / R);

    /* Broadcast over the 2-rank chain: 1 step, S over the one edge 0 -> 1,
     * which has its links to itself as in the ring; no fill with a single
     * stage. */
    assert_rel(hw.chain_bw, B);
    assert_rel(time_of(&hw, CS_COLL_BROADCAST, CS_ALGO_RING, CS_PROTO_SIMPLE, 2, 512, 0, S), launch() + h + S / B);
}

/* Without P2P the edges go up to the CPU and down again: in the ring the
 * switch's uplink carries both edges each way, and both GPUs send and
 * receive (eff.shm); the broadcast chain 0 -> 1 loads it once each way and
 * its sender only sends (eff.shm.oneway). */
static void test_shm_ring(void)
{
    g_autoptr(cs_topo_t) t = topo_pcie2("rtx2080ti", 3);
    comm_fix_t c;
    comm_fix(&c, t, CS_XPORT_SHM, CS_XPORT_NET_IB, 0, 0, FALSE);
    cs_analytic_hw_t hw;
    hw_of(&hw, t, &c);
    /* ... and in the ring each channel's CTA receives at most
     * chan.shm.sm70 (cs_shm_chan_bw: its loads wait behind its GPU's own
     * posted writes), which binds the fixture's one channel; the chain's
     * receiver sends nothing, so its channel is not bound */
    double B = MIN(cs_pcie_bw(3, 16) * par(CS_P_EFF_PCIE) / 2 * par(CS_P_EFF_SHM),
                   hw.ring_nch * par(CS_P_CH_SHM_SM70) * 1e9);
    double Bc = cs_pcie_bw(3, 16) * par(CS_P_EFF_PCIE) * par(CS_P_EFF_SHM_ONEWAY);
    g_assert_cmpint(hw.ring_nch, ==, 1);
    g_assert_cmpfloat(B, <, cs_pcie_bw(3, 16) * par(CS_P_EFF_PCIE) / 2 * par(CS_P_EFF_SHM));
    assert_rel(hw.intra_bw, B);
    assert_rel(hw.chain_bw, Bc);
    assert_rel(hw.intra_lat, 400e-9);
    g_assert_cmpint(hw.arch, ==, 0);

    /* AllGather, n = 2: 1 step, S/2 per rank. */
    double S = 256 << 20;
    double h = 400e-9 + (par(CS_P_LAT_HOP_SHM) + par(CS_P_LAT_SYNC_SIMPLE)) * US;
    assert_rel(time_of(&hw, CS_COLL_ALLGATHER, CS_ALGO_RING, CS_PROTO_SIMPLE, 2, 512, 0, S), launch() + h + S / 2 / B);
    assert_rel(time_of(&hw, CS_COLL_REDUCE, CS_ALGO_RING, CS_PROTO_SIMPLE, 2, 512, 0, S), launch() + h + S / Bc);
}

/* 8 GPUs on one NVSwitch: each GPU's NVLink port carries one ring edge out
 * and one in; 2(n-1) = 14 steps; 2(n-1)/n S per rank. */
static void test_nvswitch(void)
{
    g_autoptr(cs_topo_t) t = topo_nvswitch8();
    comm_fix_t c;
    comm_fix(&c, t, CS_XPORT_P2P_NVL, CS_XPORT_NET_IB, 0, 0, FALSE);
    cs_analytic_hw_t hw;
    hw_of(&hw, t, &c);
    double B = 450e9 * cs_params_nvlink_eff(&P, 90);   /* H100: NVLink4 */
    assert_rel(hw.intra_bw, B);
    assert_rel(hw.chain_bw, B);
    assert_rel(hw.nvls_bw, 450e9 * par(CS_P_EFF_NVLS_SM90));

    double L = launch(), S = 1 << 30;
    double hs = (par(CS_P_LAT_HOP_NVLINK) + par(CS_P_LAT_SYNC_SIMPLE_NVLINK) + par(CS_P_LAT_SYNC_SIMPLE)) * US;
    g_assert_cmpfloat(16 * par(CS_P_CH_SIMPLE_SM90) * GB, >, B);
    /* (and each chunk's copy out of the FIFO, S/8 over the CTAs) */
    double b16 = 16 * par(CS_P_CH_SIMPLE_SM90) * GB;
    assert_rel(time_of(&hw, CS_COLL_ALLREDUCE, CS_ALGO_RING, CS_PROTO_SIMPLE, 16, 512, 0, S),
               L + 14 * hs + 14.0 / 8 * S / B + S / 8 / b16);
    /* Two channels: the SMs bind (2 x 38.7 GB/s < 351 GB/s). */
    double bsm = 2 * par(CS_P_CH_SIMPLE_SM90) * GB;
    g_assert_cmpfloat(bsm, <, B);
    assert_rel(time_of(&hw, CS_COLL_ALLREDUCE, CS_ALGO_RING, CS_PROTO_SIMPLE, 2, 512, 0, S),
               L + 14 * hs + 14.0 / 8 * S / bsm + S / 8 / bsm);
    /* LL: 16 channels of chan.ll.sm90 bind below half the link; with half
     * of the 512 threads of a full LL block they move half as much. */
    double hl = (par(CS_P_LAT_HOP_NVLINK) + par(CS_P_LAT_SYNC_LL)) * US;
    double bll = 16 * par(CS_P_CH_LL_SM90) * GB;
    g_assert_cmpfloat(bll, <, B * par(CS_P_PROTO_EFF_LL));
    assert_rel(time_of(&hw, CS_COLL_ALLREDUCE, CS_ALGO_RING, CS_PROTO_LL, 16, 512, 0, 1 << 20),
               L + 14 * hl + 14.0 / 8 * (1 << 20) / bll + (1 << 20) / 8 / b16);
    assert_rel(time_of(&hw, CS_COLL_ALLREDUCE, CS_ALGO_RING, CS_PROTO_LL, 16, 256, 0, 1 << 20),
               L + 14 * hl + 14.0 / 8 * (1 << 20) / (bll / 2) + (1 << 20) / 8 / (b16 / 2));
    /* ReduceScatter: n-1 steps, (n-1)/n S. */
    assert_rel(time_of(&hw, CS_COLL_REDUCESCATTER, CS_ALGO_RING, CS_PROTO_SIMPLE, 16, 512, 0, S),
               L + 7 * hs + 7.0 / 8 * S / B);
    /* Broadcast chain of 8: 7 hops' latency, S per link; back to back
     * calls stream their Simple chunks through the chain, so no per-call
     * fill of 6 chunks (it would add 6 x 512 KiB x 16 channels / B) ... */
    double chunk = 512 << 10;
    assert_rel(time_of(&hw, CS_COLL_BROADCAST, CS_ALGO_RING, CS_PROTO_SIMPLE, 16, 512, (guint64)chunk, S),
               L + 7 * hs + S / B);
    /* ... nor with LL, which forwards line by line. */
    assert_rel(time_of(&hw, CS_COLL_BROADCAST, CS_ALGO_RING, CS_PROTO_LL, 16, 512, (guint64)chunk, S),
               L + 7 * hl + S / bll);

    /* NVLS: S(1 + 1/8) per GPU at the NVLS rate. Each of the 16 channel
     * lanes moves S/16 in steps of 8 heads x 128 KiB, each step paying the
     * Simple synchronisation, through pipe.nvls.stages stages. */
    double bn = hw.nvls_bw, nchunk = 128 << 10;
    double D = S / 16, k = ceil(D / (8 * nchunk)), d = par(CS_P_PIPE_NVLS_STAGES);
    double lane_b = bn / (9.0 / 8) / 16;   /* bytes of S per second per lane */
    double tau = par(CS_P_LAT_SYNC_SIMPLE) * US;
    assert_rel(time_of(&hw, CS_COLL_ALLREDUCE, CS_ALGO_NVLS, CS_PROTO_SIMPLE, 16, 512, (guint64)nchunk, S),
               L + par(CS_P_LAT_NVLS) * US + (k + d - 1) * (D / k / lane_b + tau));
    /* At the largest sizes the per-step synchronisation takes a fixed
     * share: busbw -> 2(n-1)/n x B_nvls/(1 + 1/n) x step/(step + tau). */
    double big = ldexp(1.0, 46);
    double tb = time_of(&hw, CS_COLL_ALLREDUCE, CS_ALGO_NVLS, CS_PROTO_SIMPLE, 16, 512, (guint64)nchunk, big);
    double step = 8 * nchunk / lane_b;
    double want_busbw = 14.0 / 8 * bn / (9.0 / 8) * step / (step + tau);
    g_assert_cmpfloat(fabs(big / tb * 14.0 / 8 / want_busbw - 1), <, 1e-6);

    /* NVLS all-reduce's copy warps take a step's chunks one head after
     * the other, 4 KiB a warp a round (cs_engine_nvls_step_floor): on one
     * node of 8 ranks 7 workers (scatter 8 warps less the posting one,
     * gather 7), up to 6 ranks 6, across nodes 7 (3 reduce and 2
     * broadcast warps); nothing before Hopper. */
    double r90 = par(CS_P_LAT_NVLS_ROUND_SM90) * US, r100 = par(CS_P_LAT_NVLS_ROUND_SM100) * US;
    assert_rel(cs_engine_nvls_step_floor(&P, 2, 8, FALSE, 8, 32768, 262144), 16 * r90);     /* 8 x ceil(32/28) */
    assert_rel(cs_engine_nvls_step_floor(&P, 3, 8, FALSE, 8, 131072, 1048576), 40 * r100);   /* 8 x ceil(128/28) */
    assert_rel(cs_engine_nvls_step_floor(&P, 3, 8, FALSE, 8, 16384, 131072), 8 * r100);
    assert_rel(cs_engine_nvls_step_floor(&P, 3, 4, FALSE, 4, 32768, 131072), 8 * r100);     /* 4 x ceil(32/24) */
    assert_rel(cs_engine_nvls_step_floor(&P, 3, 4, FALSE, 4, 24576, 98304), 4 * r100);
    assert_rel(cs_engine_nvls_step_floor(&P, 2, 16, TRUE, 8, 65536, 524288), 24 * r90);     /* 8 x ceil(64/28) */
    g_assert_cmpfloat(cs_engine_nvls_step_floor(&P, 1, 8, FALSE, 8, 32768, 262144), ==, 0);
    /* a partial step lays its bytes over the heads in parts of its rest
     * by the heads rounded up to 16 KiB, and the warps skip the heads
     * whose part is empty: 8 B is one part, one round, on 8 heads as on
     * 32; 40000 B on 32 heads: parts of 16 KiB, 3 parts, 3 rounds; 100
     * KiB on 4 heads: 32 KiB parts of ceil(32/24) = 2 rounds, the last 4
     * KiB 1: 7 */
    assert_rel(cs_engine_nvls_step_floor(&P, 3, 8, FALSE, 8, 16384, 8), r100);
    assert_rel(cs_engine_nvls_step_floor(&P, 3, 72, FALSE, 32, 16384, 8), r100);
    assert_rel(cs_engine_nvls_step_floor(&P, 3, 72, FALSE, 32, 16384, 40000), 3 * r100);
    assert_rel(cs_engine_nvls_step_floor(&P, 3, 4, FALSE, 4, 65536, 102400), 7 * r100);
    /* a channel: its full steps, then its rest (24 channels x 8 heads x
     * 16 KiB steps: 4 MiB is 174763 B a channel, one step of 8 rounds and
     * a rest of 43691 B in 3 parts of 16 KiB: 3 rounds) */
    assert_rel(cs_engine_nvls_channel_floor(&P, 3, 8, FALSE, 8, 16384, 8), r100);
    assert_rel(cs_engine_nvls_channel_floor(&P, 3, 72, FALSE, 32, 16384, 8.0 / 24), r100);
    assert_rel(cs_engine_nvls_channel_floor(&P, 3, 8, FALSE, 8, 16384, (4 << 20) / 24.0), 11 * r100);
    /* Where the rounds take longer than the step's bytes at the NVLS
     * rate, every step takes them (a round of 5 us here: 16 rounds of 32
     * KiB chunks = 80 us against 16 us of bytes). */
    double keep = P.v[CS_P_LAT_NVLS_ROUND_SM90];
    P.v[CS_P_LAT_NVLS_ROUND_SM90] = 5.0;
    double S64 = 64 << 20, c32 = 32 << 10, D64 = S64 / 16, k64 = ceil(D64 / (8 * c32));
    g_assert_cmpfloat(D64 / k64 / lane_b, <, 16 * 5 * US);
    assert_rel(time_of(&hw, CS_COLL_ALLREDUCE, CS_ALGO_NVLS, CS_PROTO_SIMPLE, 16, 512, (guint64)c32, S64),
               L + par(CS_P_LAT_NVLS) * US + (k64 + d - 1) * (16 * 5 * US + tau));
    P.v[CS_P_LAT_NVLS_ROUND_SM90] = keep;
    /* at the default round the bytes bind there (16 rounds of 1 us) */
    assert_rel(time_of(&hw, CS_COLL_ALLREDUCE, CS_ALGO_NVLS, CS_PROTO_SIMPLE, 16, 512, (guint64)c32, S64),
               L + par(CS_P_LAT_NVLS) * US + (k64 + d - 1) * (MAX(D64 / k64 / lane_b, 16 * r90) + tau));

    /* Tree inside one node: a chain of 7 hops up and 7 down; each GPU
     * sends 2S over its port, as its SMs do; Simple fills 13 chunks. */
    double rate = MIN(B, 16 * par(CS_P_CH_SIMPLE_SM90) * GB) / 2;   /* bytes of S per second */
    assert_rel(time_of(&hw, CS_COLL_ALLREDUCE, CS_ALGO_TREE, CS_PROTO_SIMPLE, 16, 512, (guint64)chunk, S),
               L + 14 * hs + S / rate + 13 * chunk / (rate / 16));
}

/* Two nodes, one GPU each, one 50 GB/s NIC: the ring's two edges are the
 * network; each step crosses one switch. */
static void test_net(void)
{
    double swlat = 130e-9;
    g_autoptr(cs_topo_t) t = topo_net2(50e9, swlat);
    comm_fix_t c;
    comm_fix(&c, t, CS_XPORT_P2P_NVL, CS_XPORT_NET_IB, 1, 50e9, TRUE);
    cs_analytic_hw_t hw;
    hw_of(&hw, t, &c);
    double B = 50e9 * par(CS_P_EFF_NET);
    g_assert_cmpfloat(cs_pcie_bw(5, 16) * par(CS_P_EFF_PCIE_DMA), >, B);
    assert_rel(hw.nic_bw, B);
    assert_rel(hw.net_lat_near, swlat);
    g_assert_cmpint(hw.tree_degsum, ==, 2);
    g_assert_cmpint(hw.tree_depth, ==, 1);

    double L = launch(), S = 1 << 30;
    double h = swlat + (par(CS_P_LAT_HOP_NET) + par(CS_P_LAT_SYNC_SIMPLE) + par(CS_P_LAT_NET_SIMPLE)) * US;
    assert_rel(time_of(&hw, CS_COLL_ALLREDUCE, CS_ALGO_RING, CS_PROTO_SIMPLE, 2, 512, 0, S), L + S / B);
    /* The NIC sends while the CTAs run reduce-scatter's last step: no
     * pass over the rank's own part on a ring across the network. */
    g_assert_true(hw.ring_net);
    assert_rel(time_of(&hw, CS_COLL_REDUCESCATTER, CS_ALGO_RING, CS_PROTO_SIMPLE, 2, 512, 0, S), L + S / 2 / B);
    /* Across nodes a step's second slice covers the hop at 1 GiB; at
     * 64 KiB (16 KiB slices, 0.3 us) little of it. */
    double s64 = 64 << 10;
    assert_rel(time_of(&hw, CS_COLL_ALLREDUCE, CS_ALGO_RING, CS_PROTO_SIMPLE, 2, 512, 0, s64),
               L + ring_oracle(s64, 2, 1, 2, s64 / 2, TRUE, 1.0, B, 2, 2, 0, h));
    g_assert_cmpfloat(ring_oracle(s64, 2, 1, 2, s64 / 2, TRUE, 1.0, B, 2, 2, 0, h), >, s64 / B + 1.9 * h);

    /* Tree on 2 nodes: each node sends S/2 on its one edge in each tree,
     * so S per direction; the SMs move 2S over 2 channels; 2 stages. */
    double chunk = 512 << 10, bsm = 2 * par(CS_P_CH_SIMPLE_SM90) * GB;
    double rate = MIN(bsm / 2, B);   /* bytes of S per second */
    assert_rel(time_of(&hw, CS_COLL_ALLREDUCE, CS_ALGO_TREE, CS_PROTO_SIMPLE, 2, 512, (guint64)chunk, S),
               L + 2 * h + S / rate + 1 * chunk / (rate / 2));

    /* Without GPUDirect the data bounces through host memory: GPU -> CPU
     * and CPU -> NIC, each Gen5 x16 at the DMA efficiency, times the
     * staging efficiency. */
    comm_fix(&c, t, CS_XPORT_P2P_NVL, CS_XPORT_NET_IB, 1, 50e9, FALSE);
    hw_of(&hw, t, &c);
    double staged = cs_pcie_bw(5, 16) * par(CS_P_EFF_PCIE_DMA) * par(CS_P_EFF_HOST_STAGED);
    assert_rel(hw.nic_bw, MIN(B, staged));

    /* Sockets: the interface speed times the socket efficiency; hop cost
     * of the TCP stack. */
    comm_fix(&c, t, CS_XPORT_P2P_NVL, CS_XPORT_NET_SOCKET, 1, 1.25e9, FALSE);
    hw_of(&hw, t, &c);
    double bsock = 1.25e9 * par(CS_P_EFF_SOCKET);
    assert_rel(hw.nic_bw, bsock);
    double hsock = swlat + (par(CS_P_LAT_HOP_SOCKET) + par(CS_P_LAT_SYNC_LL)) * US;
    assert_rel(time_of(&hw, CS_COLL_ALLREDUCE, CS_ALGO_RING, CS_PROTO_LL, 1, 512, 0, 4096),
               L + 2 * hsock + 4096 / MIN(bsock * par(CS_P_PROTO_EFF_LL), par(CS_P_CH_LL_SM90) * GB));
}

/* A Simple tree's fill across a slow network: the first chunk crosses
 * each stage at that stage's own rate. Two GPUs a node behind one PCIe
 * switch add two chain stages over PCIe; over 1.25 GB/s sockets they must
 * add their PCIe chunk times, not two more chunks at the sockets' rate
 * (which priced 2 x 8 L40S over 1 GbE at 162 ms for a 2 MiB Tree
 * all-reduce, the flow engine 21 ms). */
static void test_tree_fill_stages(void)
{
    g_autoptr(cs_topo_t) t1 = topo_net2g(1.25e9, 130e-9, 1);
    g_autoptr(cs_topo_t) t2 = topo_net2g(1.25e9, 130e-9, 2);
    comm_fix_t c1, c2;
    comm_fix(&c1, t1, CS_XPORT_P2P_PCI, CS_XPORT_NET_SOCKET, 1, 1.25e9, FALSE);
    comm_fix(&c2, t2, CS_XPORT_P2P_PCI, CS_XPORT_NET_SOCKET, 1, 1.25e9, FALSE);
    cs_analytic_hw_t h1, h2;
    hw_of(&h1, t1, &c1);
    hw_of(&h2, t2, &c2);
    double S = 4 << 20, chunk = 512 << 10;
    double x1 = time_of(&h1, CS_COLL_ALLREDUCE, CS_ALGO_TREE, CS_PROTO_SIMPLE, 2, 512, (guint64)chunk, S);
    double x2 = time_of(&h2, CS_COLL_ALLREDUCE, CS_ALGO_TREE, CS_PROTO_SIMPLE, 2, 512, (guint64)chunk, S);
    /* one chunk of one of the two lanes at the sockets' rate */
    double net_chunk = chunk / (h1.nic_bw / 2);
    g_assert_cmpfloat(x2, >, x1);
    g_assert_cmpfloat(x2 - x1, <, 0.1 * net_chunk);
    /* the same for a chain (Broadcast) across the two nodes */
    double b1 = time_of(&h1, CS_COLL_BROADCAST, CS_ALGO_RING, CS_PROTO_SIMPLE, 2, 512, (guint64)chunk, S);
    double b2 = time_of(&h2, CS_COLL_BROADCAST, CS_ALGO_RING, CS_PROTO_SIMPLE, 2, 512, (guint64)chunk, S);
    g_assert_cmpfloat(b2 - b1, <, 0.1 * net_chunk);
}

/* NCCL's double binary trees, worked by hand from trees.cc's rules:
 * n=2: 0-1 / 1-0; n=3: 0-2-1 / 1-0-2; n=4: 0-2, 2-1, 2-3 / mirror 3-1,
 * 1-2, 1-0; n=5: 0-4, 4-2, 2-1, 2-3 / shifted 1-0, 0-3, 3-2, 3-4; n=8:
 * 0-4, 4-2, 4-6, 2-1, 2-3, 6-5, 6-7, every node of degree 3 in one tree a
 * leaf in the mirrored other. */
static void test_dtree(void)
{
    static const struct { int n, degsum, depth; } cases[] = {
        { 1, 0, 0 }, { 2, 2, 1 }, { 3, 3, 2 }, { 4, 4, 2 }, { 5, 4, 3 }, { 8, 4, 3 }, { 16, 4, 4 },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        int degsum = -1, depth = -1;
        cs_analytic_dtree_shape(cases[i].n, &degsum, &depth);
        g_assert_cmpint(degsum, ==, cases[i].degsum);
        g_assert_cmpint(depth, ==, cases[i].depth);
    }
}

/* The tree all-reduce with its phases one after the other (NCCL <= 2.7):
 * the busiest NIC's bytes per byte of S. One channel takes the first
 * binary tree alone: an inner node receives 2 S up, then sends 2 S down
 * (4); two channels take both trees, S/2 each (2, as the double tree run
 * at once); three: two channels on tree 0 (init.cc v2.4.7: c <
 * DIVUP(3, 2)), an inner node of tree 0 receives 2 x 2/3 S. Two nodes:
 * one edge, S each way per phase on one tree, S/2 on each of two. */
static void test_tree_seq_load(void)
{
    static const struct { int n, nch; double load; } cases[] = {
        { 1, 1, 0 }, { 2, 1, 2 }, { 2, 2, 1 }, { 16, 1, 4 }, { 16, 2, 2 }, { 16, 3, 8.0 / 3 }, { 16, 4, 2 },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        double got = cs_analytic_tree_seq_load(cases[i].n, cases[i].nch);
        if (fabs(got - cases[i].load) > 1e-12)
            g_error("%d nodes, %d channels: load %g, expected %g", cases[i].n, cases[i].nch, got, cases[i].load);
    }
}

/* With the decision fixed, a bigger message never takes less time, and
 * faster links never make it slower. */
static void test_monotonic(void)
{
    g_autoptr(cs_topo_t) t4 = topo_pcie2("h100-pcie", 4);
    g_autoptr(cs_topo_t) t5 = topo_pcie2("h100-pcie", 5);
    g_autoptr(cs_topo_t) tn = topo_nvswitch8();
    g_autoptr(cs_topo_t) slow = topo_net2(25e9, 130e-9);
    g_autoptr(cs_topo_t) fast = topo_net2(50e9, 130e-9);
    comm_fix_t c4, c5, cn, cs, cf;
    comm_fix(&c4, t4, CS_XPORT_P2P_PCI, CS_XPORT_NET_IB, 0, 0, FALSE);
    comm_fix(&c5, t5, CS_XPORT_P2P_PCI, CS_XPORT_NET_IB, 0, 0, FALSE);
    comm_fix(&cn, tn, CS_XPORT_P2P_NVL, CS_XPORT_NET_IB, 0, 0, FALSE);
    comm_fix(&cs, slow, CS_XPORT_P2P_NVL, CS_XPORT_NET_IB, 1, 25e9, TRUE);
    comm_fix(&cf, fast, CS_XPORT_P2P_NVL, CS_XPORT_NET_IB, 1, 50e9, TRUE);
    cs_analytic_hw_t h4, h5, hn, hs, hf;
    hw_of(&h4, t4, &c4);
    hw_of(&h5, t5, &c5);
    hw_of(&hn, tn, &cn);
    hw_of(&hs, slow, &cs);
    hw_of(&hf, fast, &cf);

    static const cs_coll_t colls[] = { CS_COLL_ALLREDUCE, CS_COLL_ALLGATHER, CS_COLL_REDUCESCATTER,
                                       CS_COLL_BROADCAST, CS_COLL_REDUCE };
    static const cs_algo_t algos[] = { CS_ALGO_TREE, CS_ALGO_RING };
    for (gsize ci = 0; ci < G_N_ELEMENTS(colls); ci++)
        for (int pr = 0; pr < CS_PROTO_COUNT; pr++)
            for (gsize ai = 0; ai < G_N_ELEMENTS(algos); ai++) {
                cs_algo_t a = algos[ai];
                double prev4 = 0, prevn = 0, prevs = 0;
                for (int k = 0; k <= 36; k++) {
                    double S = ldexp(1.0, k);
                    double x4 = time_of(&h4, colls[ci], a, pr, 4, 512, 512 << 10, S);
                    double x5 = time_of(&h5, colls[ci], a, pr, 4, 512, 512 << 10, S);
                    double xn = time_of(&hn, colls[ci], a, pr, 8, 512, 512 << 10, S);
                    double xs = time_of(&hs, colls[ci], a, pr, 4, 512, 512 << 10, S);
                    double xf = time_of(&hf, colls[ci], a, pr, 4, 512, 512 << 10, S);
                    g_assert_cmpfloat(x4, >=, prev4);
                    g_assert_cmpfloat(xn, >=, prevn);
                    g_assert_cmpfloat(xs, >=, prevs);
                    g_assert_cmpfloat(x5, <=, x4);
                    g_assert_cmpfloat(xf, <=, xs);
                    prev4 = x4;
                    prevn = xn;
                    prevs = xs;
                }
            }
    /* NVLS, too, across NCCL's chunk sizes. */
    static const guint64 chunks[] = { 16384, 32768, 65536, 131072 };
    for (gsize ci = 0; ci < G_N_ELEMENTS(chunks); ci++) {
        double prev = 0;
        for (int k = 0; k <= 36; k++) {
            double x = time_of(&hn, CS_COLL_ALLREDUCE, CS_ALGO_NVLS, CS_PROTO_SIMPLE, 16, 512, chunks[ci], ldexp(1.0, k));
            g_assert_cmpfloat(x, >=, prev);
            prev = x;
        }
        /* and between the powers of two: NCCL's steps are whole but the
         * last (all_reduce.h runNvls), so a byte more does not shorten the
         * pipeline's fill (k + 1 shorter steps made 8 MiB + 4 KiB 30 %
         * faster than 8 MiB); only the copy warps' rounds of a last step
         * laid out in 16 KiB parts may save one (cs_engine_nvls_step_floor,
         * a few per cent) */
        prev = 0;
        for (double S = 1 << 20; S <= 16 << 20; S += 4096) {
            double x = time_of(&hn, CS_COLL_ALLREDUCE, CS_ALGO_NVLS, CS_PROTO_SIMPLE, 16, 512, chunks[ci], S);
            g_assert_cmpfloat(x, >=, prev * 0.95);
            prev = x;
        }
    }
}

static void test_determinism(void)
{
    g_autoptr(cs_topo_t) t = topo_nvswitch8();
    comm_fix_t c;
    comm_fix(&c, t, CS_XPORT_P2P_NVL, CS_XPORT_NET_IB, 0, 0, FALSE);
    cs_analytic_hw_t a, b;
    memset(&a, 0xa5, sizeof a);
    memset(&b, 0x5a, sizeof b);
    hw_of(&a, t, &c);
    hw_of(&b, t, &c);
    g_assert_cmpfloat(a.intra_bw, ==, b.intra_bw);
    g_assert_cmpfloat(a.nvls_bw, ==, b.nvls_bw);
    double x = time_of(&a, CS_COLL_ALLREDUCE, CS_ALGO_RING, CS_PROTO_LL128, 16, 640, 0, 12345678);
    double y = time_of(&b, CS_COLL_ALLREDUCE, CS_ALGO_RING, CS_PROTO_LL128, 16, 640, 0, 12345678);
    g_assert_cmpmem(&x, sizeof x, &y, sizeof y);
}

/* NVLS all-reduce's heads' share (cs_engine_nvls_ar_share): 1 on the 8
 * GPUs of 8 heads the efficiencies were fitted on; over the heads'
 * S(1 + 1/m) it leaves a GPU an algbw of (m-1)/m x n/(n-1) of that
 * node's, NCCL's own shape: 64 GPUs of an NVL72 rack with 32 heads keep
 * 0.984 of 8 GPUs' algbw (the OCI GB300 runs: 472 against 480 GB/s),
 * where the heads' traffic alone would give them 9 % more. */
static void test_nvls_share(void)
{
    assert_rel(cs_engine_nvls_ar_share(8, 8), 1.0);
    double algbw8 = cs_engine_nvls_ar_share(8, 8) / (1 + 1.0 / 8);
    double algbw64 = cs_engine_nvls_ar_share(32, 64) / (1 + 1.0 / 32);
    assert_rel(algbw64 / algbw8, (31.0 / 32) * (64.0 / 63) / ((7.0 / 8) * (8.0 / 7)));
    g_assert_cmpfloat(algbw64 / algbw8, <, 1.0);
    /* degenerate counts stay finite and positive */
    g_assert_cmpfloat(cs_engine_nvls_ar_share(0, 1), >, 0);
    g_assert_true(isfinite(cs_engine_nvls_ar_share(1, 1)));
}

/* NVLS across nodes needs SHARP (NVLS+CollNet), which is not modelled;
 * CollNet is modelled for all-reduce across nodes only, and CollNetDirect
 * needs its heads (none in a hand-written communicator). */
static void test_unsupported(void)
{
    g_autoptr(cs_topo_t) t = topo_net2(50e9, 0);
    comm_fix_t c;
    comm_fix(&c, t, CS_XPORT_P2P_NVL, CS_XPORT_NET_IB, 1, 50e9, TRUE);
    cs_analytic_hw_t hw;
    hw_of(&hw, t, &c);
    static const cs_algo_t algos[] = { CS_ALGO_COLLNET_DIRECT, CS_ALGO_COLLNET_CHAIN, CS_ALGO_NVLS };
    static const cs_coll_t colls[] = { CS_COLL_ALLREDUCE, CS_COLL_ALLGATHER, CS_COLL_ALLREDUCE };
    static const char *const why[] = { "all-reduce across nodes only", "all-reduce across nodes only",
                                       "not modelled" };
    for (gsize i = 0; i < G_N_ELEMENTS(algos); i++) {
        cs_decision_t d = { .algo = algos[i], .proto = CS_PROTO_SIMPLE, .nchannels = 2 };
        cs_engine_call_t call = { .size = 4096, .count = 1024, .nccl_bytes = 4096, .decision = &d };
        double tm[2] = { -1, -1 };
        g_autoptr(GError) err = NULL;
        g_assert_false(cs_analytic_time(&hw, &P, colls[i], &call, tm, &err));
        g_assert_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED);
        g_assert_nonnull(strstr(err->message, why[i]));
        g_assert_cmpfloat(tm[0], ==, -1);
    }
}

/* 8 DGX H100 with 8 NDR NICs each on a 2:1 fat-tree (two leaves, one
 * spine), the machine of the link-statistics and CollNet checks. */
static cs_topo_t *ndr_fat_tree_8(void)
{
    g_autoptr(GError) err = NULL;
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    o.nodes = 8;
    o.nic = "ib-ndr";
    o.nics_per_node = 8;
    o.fabric = "fat-tree";
    o.oversubscription = 2;
    cs_topo_t *t = cs_preset_build("dgx-h100", &o, &err);
    g_assert_no_error(err);
    return t;
}

/* CollNet (SHARP) through the engine: 8 DGX H100 with 8 NDR NICs on a
 * 2:1 fat-tree (32-port leaves: nodes 0-3 on leaf0, 4-7 on leaf1),
 * NCCL_COLLNET_ENABLE=1, CollNetDirect forced, Simple at 8 GiB. 8 heads
 * per node (one per NIC), each sends S/8 up its rail's SHARP tree and gets
 * S/8 back: every NIC port carries S/8 each way, and across the spines
 * each rail's tree (rooted at leaf0, the first node's) carries the slice
 * once each way: leaf1 -> spine (leaf1's 4 nodes' partial sum) and spine
 * -> leaf0 up, the reverse down, so S/8 per rail and direction, S over
 * the 8 rails. The bandwidth term: a head sends (8 - 1 + 8 - 1) / 8 =
 * 1.75 S over its NVLink (scatter to the 7 other heads, copy to the 7
 * other GPUs), which binds before its NIC (S/8 at 50 GB/s x eff.net). */
static void test_collnet(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(cs_topo_t) t = ndr_fat_tree_8();
    g_autoptr(cs_nccl_env_t) env = cs_nccl_env_new();
    cs_nccl_env_set(env, "NCCL_COLLNET_ENABLE", "1", "test");
    cs_nccl_env_set(env, "NCCL_ALGO", "CollNetDirect", "test");
    g_autoptr(cs_comm_t) comm = cs_comm_new(t, env, &err);
    g_assert_no_error(err);
    g_assert_cmpint(cs_comm_info(comm)->collnet_heads, ==, 8);
    cs_engine_job_t job = { .topo = t, .comm = comm, .params = &P, .coll = CS_COLL_ALLREDUCE,
                            .dtype = CS_DTYPE_FLOAT };
    guint64 S = G_GUINT64_CONSTANT(8) << 30;
    cs_decision_t d;
    g_assert_true(cs_comm_decide(comm, CS_COLL_ALLREDUCE, CS_DTYPE_FLOAT, S, &d, &err));
    g_assert_cmpint(d.algo, ==, CS_ALGO_COLLNET_DIRECT);
    cs_engine_call_t call = { .size = S, .count = S / 4, .nccl_bytes = S, .decision = &d };
    void *state = NULL;
    g_assert_true(cs_engine_analytic.open(&job, &state, &err));
    double tm[2];
    g_assert_true(cs_engine_analytic.predict(state, &job, &call, tm, &err));
    g_autoptr(cs_link_stats_t) st = cs_engine_analytic.link_stats(state);
    g_autofree char *why = cs_analytic_bottleneck(state);
    cs_engine_analytic.close(state);
    g_test_message("%s", why);
    g_assert_nonnull(strstr(why, "intra-node"));
    /* NVLink: 18 x 25 GB/s x eff.nvlink.sm90 for 1.75 S; the latency is under
     * 1% of 8 GiB's time */
    double nvl = 1.75 * (double)S / (18 * 25e9 * cs_params_nvlink_eff(&P, 90) * par(CS_P_PROTO_EFF_SIMPLE));
    g_assert_cmpfloat(tm[CS_OOP], >, nvl);
    g_assert_cmpfloat(tm[CS_OOP], <, nvl * 1.01);
    double slice = (double)S / 8 / (par(CS_P_EFF_NET) * par(CS_P_PROTO_EFF_SIMPLE));
    double up1 = 0, dn1 = 0, up0 = 0, dn0 = 0;
    int nic_ports = 0;
    for (int i = 0; i < st->n; i++) {
        const char *nm = st->links[i].name;
        if (g_str_has_prefix(nm, "leaf1 -> spine"))
            up1 += st->links[i].bytes;
        else if (g_str_has_prefix(nm, "spine") && strstr(nm, "-> leaf0 "))
            up0 += st->links[i].bytes;
        else if (g_str_has_prefix(nm, "leaf0 -> spine"))
            dn0 += st->links[i].bytes;
        else if (g_str_has_prefix(nm, "spine") && strstr(nm, "-> leaf1 "))
            dn1 += st->links[i].bytes;
        else if (strstr(nm, ".nic") != NULL) {
            g_assert_cmpfloat(fabs(st->links[i].bytes - slice), <, 1e-6 * slice);
            nic_ports++;
        }
    }
    g_assert_cmpint(nic_ports, ==, 8 * 8 * 2);   /* every NIC port, each way */
    g_assert_cmpfloat(fabs(up1 - 8 * slice), <, 1e-6 * slice);
    g_assert_cmpfloat(fabs(up0 - 8 * slice), <, 1e-6 * slice);
    g_assert_cmpfloat(fabs(dn0 - 8 * slice), <, 1e-6 * slice);
    g_assert_cmpfloat(fabs(dn1 - 8 * slice), <, 1e-6 * slice);
}

/* The fabric through the engine: 16 DGX H100 nodes, 8 NICs of 400 Gb/s
 * each, one fat-tree of leaves with 32 ports down, Simple at 1 GiB. A
 * ring crosses each leaf boundary once per channel and direction: 16
 * channels' 24 GB/s fit a leaf's uplinks even at 4:1 (32 x 50 / 4 = 400
 * GB/s), so its NIC ports stay the bottleneck and its time does not move.
 * Tree's edges between nodes of different leaves are many more: at 4:1 a
 * leaf -> spine link binds and the time grows. */
static double fabric_run(int nodes, double oversub, const char *algo, char **why_p)
{
    g_autoptr(GError) err = NULL;
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    o.nodes = nodes;
    o.nic = "roce-400g";
    o.nics_per_node = 8;
    o.fabric = "fat-tree";
    o.oversubscription = oversub;
    g_autoptr(cs_topo_t) t = cs_preset_build("dgx-h100", &o, &err);
    g_assert_no_error(err);
    g_autoptr(cs_nccl_env_t) env = cs_nccl_env_new();
    cs_nccl_env_set(env, "NCCL_ALGO", algo, "test");
    cs_nccl_env_set(env, "NCCL_PROTO", "Simple", "test");
    g_autoptr(cs_comm_t) comm = cs_comm_new(t, env, &err);
    g_assert_no_error(err);
    cs_engine_job_t job = { .topo = t, .comm = comm, .params = &P, .coll = CS_COLL_ALLREDUCE,
                            .dtype = CS_DTYPE_FLOAT };
    guint64 S = 1 << 30;
    cs_decision_t d;
    g_assert_true(cs_comm_decide(comm, CS_COLL_ALLREDUCE, CS_DTYPE_FLOAT, S, &d, &err));
    cs_engine_call_t call = { .size = S, .count = S / 4, .nccl_bytes = S, .decision = &d };
    void *state = NULL;
    g_assert_true(cs_engine_analytic.open(&job, &state, &err));
    g_assert_no_error(err);
    double tm[2];
    g_assert_true(cs_engine_analytic.predict(state, &job, &call, tm, &err));
    g_assert_no_error(err);
    *why_p = cs_analytic_bottleneck(state);
    cs_engine_analytic.close(state);
    return tm[CS_OOP];
}

static void test_fabric(void)
{
    g_autofree char *why1 = NULL, *why4 = NULL, *whyt1 = NULL, *whyt4 = NULL;
    double r1 = fabric_run(16, 1, "Ring", &why1);
    double r4 = fabric_run(16, 4, "Ring", &why4);
    double t1 = fabric_run(16, 1, "Tree", &whyt1);
    double t4 = fabric_run(16, 4, "Tree", &whyt4);
    g_test_message("Ring 1:1 %.1f us, %s; 4:1 %.1f us, %s", r1 * 1e6, why1, r4 * 1e6, why4);
    g_test_message("Tree 1:1 %.1f us, %s; 4:1 %.1f us, %s", t1 * 1e6, whyt1, t4 * 1e6, whyt4);
    g_assert_nonnull(strstr(why1, "bottleneck: n0.nic0 -> leaf0 (net)"));
    g_assert_nonnull(strstr(why4, "bottleneck: n0.nic0 -> leaf0 (net)"));
    assert_rel(r4, r1);
    g_assert_null(strstr(whyt1, "-> spine"));
    g_assert_nonnull(strstr(whyt4, "-> spine"));
    g_assert_nonnull(strstr(whyt4, "the busiest NIC port, fabric 4:1 oversubscribed"));
    g_assert_cmpfloat(t4, >, 1.5 * t1);
}

static const cs_link_stat_t *find_stat(const cs_link_stats_t *st, const char *name)
{
    for (int i = 0; i < st->n; i++)
        if (strcmp(st->links[i].name, name) == 0)
            return &st->links[i];
    return NULL;
}

/* Link statistics, derived by hand: 8 DGX H100 nodes (64 ranks), 8 NICs
 * of ib-ndr each, a fat-tree of 32-port-down leaves at 2:1: two leaves of
 * four nodes and one spine (cs_cluster.c: min(R/2, ceil(L/2)) spines), each
 * leaf cabled to it with its down capacity / 2. Ring, Simple, S = 1 GiB:
 * every channel's ring runs through the nodes in order, so it leaves leaf0
 * once (node 3 -> 4) and leaf1 once (7 -> 0), and each network edge
 * carries 2(n-1)/n of the channel's S/nch. All channels together put
 * 2(n-1)/n S payload, / eff.net (link efficiency) / proto.eff.simple (wire
 * bytes), on leaf0 -> spine0, spine0 -> leaf1 and back, and on each
 * node's NIC ports summed. */
static void test_link_stats(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(cs_topo_t) t = ndr_fat_tree_8();
    g_autoptr(cs_nccl_env_t) env = cs_nccl_env_new();
    cs_nccl_env_set(env, "NCCL_ALGO", "Ring", "test");
    cs_nccl_env_set(env, "NCCL_PROTO", "Simple", "test");
    g_autoptr(cs_comm_t) comm = cs_comm_new(t, env, &err);
    g_assert_no_error(err);
    cs_engine_job_t job = { .topo = t, .comm = comm, .params = &P, .coll = CS_COLL_ALLREDUCE,
                            .dtype = CS_DTYPE_FLOAT };
    guint64 S = 1 << 30;
    cs_decision_t d;
    g_assert_true(cs_comm_decide(comm, CS_COLL_ALLREDUCE, CS_DTYPE_FLOAT, S, &d, &err));
    g_assert_cmpint(d.algo, ==, CS_ALGO_RING);
    g_assert_cmpint(d.proto, ==, CS_PROTO_SIMPLE);
    cs_engine_call_t call = { .size = S, .count = S / 4, .nccl_bytes = S, .decision = &d };
    void *state = NULL;
    g_assert_true(cs_engine_analytic.open(&job, &state, &err));
    double tm[2];
    g_assert_true(cs_engine_analytic.predict(state, &job, &call, tm, &err));
    g_assert_nonnull(cs_engine_analytic.link_stats);
    g_assert_false(cs_engine_analytic.timeline);
    g_autoptr(cs_link_stats_t) st = cs_engine_analytic.link_stats(state);
    cs_engine_analytic.close(state);

    g_assert_nonnull(st->source);
    g_assert_nonnull(strstr(st->source, "model:analytic"));
    g_assert_cmpfloat(st->time_s, ==, tm[CS_OOP]);
    int n = 64;
    double want = 2.0 * (n - 1) / n * (double)S / (par(CS_P_EFF_NET) * par(CS_P_PROTO_EFF_SIMPLE));
    /* the uplink: leaf0's down capacity (32 NIC ports) / 2 */
    double down = 0;
    for (int l = 0; l < t->nlinks; l++)
        if (strcmp(t->devs[t->links[l].src].name, "leaf0") == 0 && t->devs[t->links[l].dst].kind == CS_DEV_NIC)
            down += t->links[l].bw;
    g_assert_cmpfloat(down, ==, 32 * 50e9);
    static const char *const fabric[] = { "leaf0 -> spine0 (net)", "spine0 -> leaf1 (net)",
                                          "leaf1 -> spine0 (net)", "spine0 -> leaf0 (net)" };
    int switch_links = 0;
    for (int i = 0; i < st->n; i++)
        switch_links += strstr(st->links[i].name, "spine") != NULL;
    g_assert_cmpint(switch_links, ==, 4);
    for (gsize k = 0; k < G_N_ELEMENTS(fabric); k++) {
        const cs_link_stat_t *l = find_stat(st, fabric[k]);
        g_assert_nonnull(l);
        assert_rel(l->bytes, want);
        assert_rel(l->cap, down / 2);
    }
    /* each node's NIC ports, up, together */
    for (int node = 0; node < 8; node++) {
        double sum = 0;
        g_autofree char *prefix = g_strdup_printf("n%d.nic", node);
        for (int i = 0; i < st->n; i++)
            if (g_str_has_prefix(st->links[i].name, prefix) && strstr(st->links[i].name, "-> leaf") != NULL)
                sum += st->links[i].bytes;
        assert_rel(sum, want);
    }
    /* busiest first, ties by name; the busiest is a NIC port (a 50 GB/s
     * port carries 1/8 of a node's 2(n-1)/n S, the 800 GB/s uplink all) */
    for (int i = 1; i < st->n; i++) {
        double u0 = st->links[i - 1].bytes / st->links[i - 1].cap, u1 = st->links[i].bytes / st->links[i].cap;
        g_assert_true(u0 > u1 - 1e-9 || (fabs(u0 - u1) <= 1e-9 && strcmp(st->links[i - 1].name, st->links[i].name) < 0));
    }
    g_assert_nonnull(strstr(st->links[0].name, "nic"));
}

/* DGX-1 (hybrid cube-mesh, NVLink2): NCCL's search gives 12 channels over
 * distinct rings (test-graph.c: "0 3 2 1 5 6 7 4" on channels 0, 1, 6, 7,
 * its reverse on 2, 3, 8, 9, over the double links; "0 1 3 7 5 4 6 2" on
 * 4 and 10 and its reverse on 5 and 11, over the single links). A call on
 * k channels loads each directed link with its channels' edges:
 *   k = 1, 2: ring A only, every edge a double link: 2 links' rate;
 *   k = 4: A twice and its reverse twice: each direction of a double link
 *          carries 2 of the 4 channels: 4 links' rate;
 *   k = 12: every directed double link carries 4 channels' edges (2 links),
 *          every directed single link 2 (1 link): each channel edge gets
 *          half a link, 12 of them: the GPU's 6 links.
 * Channel 0's ring alone (the engine before) priced 2 links at every k. */
static void test_dgx1_rings(void)
{
    g_autoptr(GError) err = NULL;
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    g_autoptr(cs_topo_t) t = cs_preset_build("dgx1-v100", &o, &err);
    g_assert_no_error(err);
    g_autoptr(cs_nccl_env_t) env = cs_nccl_env_new();
    g_autoptr(cs_comm_t) comm = cs_comm_new(t, env, &err);
    g_assert_no_error(err);
    const cs_comm_info_t *info = cs_comm_info(comm);
    g_assert_cmpint(info->comm_nch, ==, 12);
    /* one NVLink2 link's rate, from GPU 0's six (to 4 neighbours: two
     * doubled, two single; a doubled pair is one link of twice the rate) */
    double link = 0;
    int nl = 0;
    int d0 = t->rank_dev[0];
    for (int k = t->adj_off[d0]; k < t->adj_off[d0 + 1]; k++)
        if (t->links[t->adj[k]].kind == CS_LINK_NVL) {
            link += t->links[t->adj[k]].bw;
            nl++;
        }
    g_assert_cmpint(nl, ==, 4);
    link = link / 6 * cs_params_nvlink_eff(&P, 70);   /* V100: NVLink2 */
    cs_analytic_hw_t hw;
    g_assert_true(cs_analytic_hw_init(&hw, t, info, comm, &P, 0, &err));
    g_assert_no_error(err);
    g_assert_cmpint(hw.ring_nch, ==, 12);
    assert_rel(hw.intra_bw_ch[0], 2 * link);
    assert_rel(hw.intra_bw_ch[1], 2 * link);
    assert_rel(hw.intra_bw_ch[3], 4 * link);
    assert_rel(hw.intra_bw, 6 * link);
    assert_rel(hw.intra_bw_ch[11], 6 * link);
}

/* DGX Spark: without GPUDirect the bounce through host memory costs the
 * staging efficiency only across PCIe; the GB10 reaches its memory over
 * C2C, so the NIC rate is the GPUDirect one (C2C, then the NIC's Gen5 x4). */
static void test_net_c2c_staged(void)
{
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    o.nodes = 2;
    g_autoptr(GError) err = NULL;
    g_autoptr(cs_topo_t) t = cs_preset_build("dgx-spark", &o, &err);
    g_assert_no_error(err);
    comm_fix_t c;
    cs_analytic_hw_t staged, direct;
    comm_fix(&c, t, CS_XPORT_P2P_NVL, CS_XPORT_NET_IB, 2, 12.5e9, FALSE);
    hw_of(&staged, t, &c);
    comm_fix(&c, t, CS_XPORT_P2P_NVL, CS_XPORT_NET_IB, 2, 12.5e9, TRUE);
    hw_of(&direct, t, &c);
    assert_rel(staged.nic_bw, direct.nic_bw);
    assert_rel(direct.nic_bw, MIN(12.5e9 * par(CS_P_EFF_NET), cs_pcie_bw(5, 4) * par(CS_P_EFF_PCIE_DMA)));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    cs_params_init_defaults(&P);
    g_test_add_func("/analytic/pcie-ring", test_pcie_ring);
    g_test_add_func("/analytic/shm-ring", test_shm_ring);
    g_test_add_func("/analytic/nvswitch", test_nvswitch);
    g_test_add_func("/analytic/dgx1-rings", test_dgx1_rings);
    g_test_add_func("/analytic/net", test_net);
    g_test_add_func("/analytic/net-c2c-staged", test_net_c2c_staged);
    g_test_add_func("/analytic/tree-fill-stages", test_tree_fill_stages);
    g_test_add_func("/analytic/dtree", test_dtree);
    g_test_add_func("/analytic/tree-seq-load", test_tree_seq_load);
    g_test_add_func("/analytic/monotonic", test_monotonic);
    g_test_add_func("/analytic/determinism", test_determinism);
    g_test_add_func("/analytic/unsupported", test_unsupported);
    g_test_add_func("/analytic/nvls-share", test_nvls_share);
    g_test_add_func("/analytic/collnet", test_collnet);
    g_test_add_func("/analytic/fabric", test_fabric);
    g_test_add_func("/analytic/link-stats", test_link_stats);
    int rc = g_test_run();
    cs_params_clear(&P);
    return rc;
}
