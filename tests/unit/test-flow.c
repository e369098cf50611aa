/* The flow engine against the analytic engine where nothing contends, the
 * node-symmetry fold against the whole ring, and a shared PCIe uplink that
 * only the flow engine sees. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "sim/cs_engine_flow-int.h"
#include "sim/cs_engine_analytic-int.h"
#include "models/cs_presets.h"
#include "models/cs_program.h"
#include "engine-fixture.h"

static cs_topo_t *preset_gpus(const char *name, int nodes, int gpus)
{
    GError *err = NULL;
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    o.nodes = nodes;
    o.gpus = gpus;
    cs_topo_t *t = cs_preset_build(name, &o, &err);
    g_assert_no_error(err);
    return t;
}

static cs_topo_t *preset(const char *name, int nodes)
{
    return preset_gpus(name, nodes, 0);
}

/* Times of one call by both engines. */
static void both_coll(job_fix_t *j, cs_coll_t coll, guint64 bytes, cs_flow_fold_t fold, double *flow_p,
                      double *analytic_p, cs_flow_stats_t *st_p)
{
    GError *err = NULL;
    cs_engine_job_t job = { .topo = j->topo, .comm = j->comm, .params = &j->params,
                            .coll = coll, .dtype = CS_DTYPE_FLOAT };
    cs_decision_t d;
    g_assert_true(cs_comm_decide(j->comm, coll, CS_DTYPE_FLOAT, bytes, &d, &err));
    g_assert_no_error(err);
    cs_engine_call_t call = { .size = bytes, .count = bytes / 4, .nccl_bytes = bytes, .decision = &d };
    g_autoptr(cs_flow_t) f = cs_flow_new(&job, &err);
    g_assert_no_error(err);
    g_assert_true(cs_flow_simulate(f, &call, fold, st_p, &err));
    g_assert_no_error(err);
    /* with what both engines add after the simulation (the host's floor,
     * a ring's passes over the rank's own part) */
    double tt[2];
    cs_flow_call_times(f, &call, st_p->time_s, tt);
    *flow_p = tt[CS_OOP];
    cs_analytic_hw_t hw;
    g_assert_true(cs_analytic_hw_init(&hw, j->topo, cs_comm_info(j->comm), j->comm, &j->params, 0, &err));
    double t[2];
    g_assert_true(cs_analytic_time(&hw, &j->params, coll, &call, t, &err));
    *analytic_p = t[CS_OOP];
}

static void both(job_fix_t *j, guint64 bytes, cs_flow_fold_t fold, double *flow_p, double *analytic_p,
                 cs_flow_stats_t *st_p)
{
    both_coll(j, CS_COLL_ALLREDUCE, bytes, fold, flow_p, analytic_p, st_p);
}

/* Broadcast chains of 16 ranks over 2 nodes: with LL and LL128 each line
 * is forwarded on arrival (no pipeline fill, as the analytic model says);
 * a store-and-forward chain would pay 14 more chunk times (3x at 1 MiB).
 * The flow engine follows each channel's ring from the root, which
 * crosses the network twice unless the root is where its node's ring
 * enters (the analytic model counts N-1 = 1 crossing): at 1 MiB, where
 * one network hop (about 6 us) is 15% of the time, 20%. Simple at
 * 256 MiB: within 5%. */
static void test_chain(void)
{
    job_fix_t j;
    fix_init(&j, preset("dgx-h100", 2), "Ring", NULL);
    static const guint64 sizes[] = { 1 << 20, 32 << 20, 256 << 20 };
    static const double tol[] = { 0.20, 0.10, 0.05 };
    for (gsize i = 0; i < G_N_ELEMENTS(sizes); i++) {
        double tf, ta;
        cs_flow_stats_t st;
        both_coll(&j, CS_COLL_BROADCAST, sizes[i], CS_FLOW_FOLD_AUTO, &tf, &ta, &st);
        g_test_message("broadcast %" G_GUINT64_FORMAT ": flow %.2f us, analytic %.2f us", sizes[i], tf * 1e6,
                       ta * 1e6);
        g_assert_false(st.folded);
        g_assert_cmpfloat(fabs(tf / ta - 1), <, tol[i]);
    }
    fix_clear(&j);
}

/* Broadcast and Reduce on one DGX H100, Ring Simple at 4-64 MiB: the
 * chain is timed streamed behind the previous call (cs_program_t.streamed),
 * so neither engine pays the store-and-forward fill of 7 chunks of up to
 * 512 KiB per channel: within 2% of the analytic engine (with the fill per
 * call the flow engine took 132, 312 and 455 us at 4, 16 and 64 MiB,
 * 1.9-3.2x the analytic 61, 97 and 240 us). */
static void test_chain_1node(void)
{
    job_fix_t j;
    fix_init(&j, preset("dgx-h100", 1), "Ring", NULL);
    static const cs_coll_t colls[] = { CS_COLL_BROADCAST, CS_COLL_REDUCE };
    static const guint64 sizes[] = { 4 << 20, 16 << 20, 64 << 20 };
    for (gsize c = 0; c < G_N_ELEMENTS(colls); c++)
        for (gsize i = 0; i < G_N_ELEMENTS(sizes); i++) {
            double tf, ta;
            cs_flow_stats_t st;
            both_coll(&j, colls[c], sizes[i], CS_FLOW_FOLD_AUTO, &tf, &ta, &st);
            g_test_message("%s %" G_GUINT64_FORMAT ": flow %.2f us, analytic %.2f us", cs_coll_name(colls[c]),
                           sizes[i], tf * 1e6, ta * 1e6);
            g_assert_cmpfloat(fabs(tf / ta - 1), <, 0.02);
        }
    fix_clear(&j);
}

/* One DGX H100, Ring Simple, 1 GiB: both engines see the same NVSwitch
 * ports, SM ceilings and steps; they differ only in how step latencies
 * add up (docs/model-flow.md): within 2%. */
static void test_agree_1node(void)
{
    job_fix_t j;
    fix_init(&j, preset("dgx-h100", 1), "Ring", NULL);
    double tf, ta;
    cs_flow_stats_t st;
    both(&j, G_GUINT64_CONSTANT(1) << 30, CS_FLOW_FOLD_AUTO, &tf, &ta, &st);
    g_test_message("1 node: flow %.2f us, analytic %.2f us (%+.2f%%)", tf * 1e6, ta * 1e6, (tf / ta - 1) * 100);
    g_assert_cmpfloat(fabs(tf / ta - 1), <, 0.02);
    g_assert_false(st.folded);
    /* The volume term alone: 14/8 S over the NVLink ports at eff.nvlink,
     * and each chunk's copy out of the FIFO (S/8 at the CTAs' rate: one
     * process per GPU, cs_engine_ring_recv_copies), below the time, and
     * the time within 10 step latencies of it. */
    double B = 450e9 * cs_params_nvlink_eff(&j.params, 90);   /* H100: NVLink4 */
    cs_decision_t d;
    g_assert_true(cs_comm_decide(j.comm, CS_COLL_ALLREDUCE, CS_DTYPE_FLOAT, G_GUINT64_CONSTANT(1) << 30, &d, NULL));
    double copy = (1 << 30) / 8.0 / (d.nchannels * cs_params_get(&j.params, CS_P_CH_SIMPLE_SM90) * 1e9 *
                                     cs_engine_threads_share(d.proto, d.nthreads));
    double vol = 14.0 / 8 * (1 << 30) / B + copy;
    g_assert_cmpfloat(tf, >, vol);
    g_assert_cmpfloat(tf, <, vol + 200e-6);
    fix_clear(&j);
}

/* Two DGX H100 nodes over 8 x NDR rails, Ring: within 5%. */
static void test_agree_2nodes(void)
{
    job_fix_t j;
    fix_init(&j, preset("dgx-h100", 2), "Ring", NULL);
    double tf, ta;
    cs_flow_stats_t st;
    both(&j, G_GUINT64_CONSTANT(1) << 30, CS_FLOW_FOLD_AUTO, &tf, &ta, &st);
    g_test_message("2 nodes: flow %.2f us, analytic %.2f us (%+.2f%%)", tf * 1e6, ta * 1e6, (tf / ta - 1) * 100);
    g_assert_cmpfloat(fabs(tf / ta - 1), <, 0.05);
    fix_clear(&j);
}

/* Four nodes: simulating one node of each ring (the fold) gives exactly
 * the time of the whole ring, with a quarter of the lanes. */
static void test_fold_exact(void)
{
    job_fix_t j;
    fix_init(&j, preset("dgx-h100", 4), "Ring", NULL);
    double full, folded, ta;
    cs_flow_stats_t s1, s2;
    both(&j, G_GUINT64_CONSTANT(64) << 20, CS_FLOW_FOLD_NONE, &full, &ta, &s1);
    both(&j, G_GUINT64_CONSTANT(64) << 20, CS_FLOW_FOLD_AUTO, &folded, &ta, &s2);
    g_assert_false(s1.folded);
    g_assert_true(s2.folded);
    g_test_message("lanes full %d folded %d, events %" G_GUINT64_FORMAT " vs %" G_GUINT64_FORMAT, s1.lanes, s2.lanes, s1.events, s2.events);
    g_assert_cmpint(s1.lanes, >=, 2 * s2.lanes);
    g_assert_cmpfloat(fabs(folded / full - 1), <, 1e-9);
    fix_clear(&j);
}

/* 64 nodes of one H100 each over 8 NDR rails: two leaves of 32 nodes per
 * rail, joined through spines. Channels that differ only in the spine
 * their leaf crossing takes (ECMP), which cannot saturate, are merged,
 * and the ring folds exactly per leaf: both give the whole ring's time.
 * The approximate fold (one node, the leaf crossings' extra latency
 * averaged over the 32 nodes of a leaf) stays within 1% (measured
 * 0.0-0.3%, docs/model-flow.md) and says so; CS_FLOW_FOLD_AUTO keeps the
 * exact fold at this size. */
static void test_fold_approx(void)
{
    static const char *const protos[] = { "LL", "LL128", "Simple" };
    for (gsize i = 0; i < G_N_ELEMENTS(protos); i++) {
        job_fix_t j;
        fix_init(&j, preset_gpus("dgx-h100", 64, 1), "Ring", protos[i]);
        guint64 bytes = G_GUINT64_CONSTANT(256) << 20;
        double full, exact, autof, approx, ta;
        cs_flow_stats_t s0, s1, s2, s3;
        both(&j, bytes, CS_FLOW_FOLD_NONE, &full, &ta, &s0);
        both(&j, bytes, CS_FLOW_FOLD_EXACT, &exact, &ta, &s1);
        both(&j, bytes, CS_FLOW_FOLD_AUTO, &autof, &ta, &s2);
        both(&j, bytes, CS_FLOW_FOLD_APPROX, &approx, &ta, &s3);
        g_test_message("%s: whole %.3f us (%d lanes), exact fold %.3f us (%d), approximate %.3f us (%d, %+.3f%%, "
                       "latencies within %.3f us)",
                       protos[i], full * 1e6, s0.lanes, exact * 1e6, s1.lanes, approx * 1e6, s3.lanes,
                       (approx / full - 1) * 100, s3.spread_s * 1e6);
        g_assert_false(s0.folded);
        g_assert_true(s1.folded && !s1.approx && s1.period == 32);
        g_assert_cmpint(s1.lanes, <, s0.lanes / 2);
        g_assert_cmpfloat(fabs(exact / full - 1), <, 1e-9);
        g_assert_true(s2.period == s1.period && !s2.approx && autof == exact);
        g_assert_true(s3.folded && s3.approx && s3.period < s1.period);
        g_assert_cmpfloat(s3.spread_s, >, 0);
        g_assert_cmpfloat(fabs(approx / full - 1), <, 0.01);
        fix_clear(&j);
    }
}

/* Two nodes of two GPUs without PCIe peer-to-peer (SHM through the CPU)
 * behind one PCIe switch, and one NIC on the CPU: the switch's uplink
 * carries both the SHM ring edge and the network edge. The analytic model
 * prices the two separately; the flow engine shares the link. */
static void test_contention(void)
{
    job_fix_t j;
    fix_init(&j, fix_shared_uplink(), "Ring", NULL);
    double tf, ta;
    cs_flow_stats_t st;
    both(&j, G_GUINT64_CONSTANT(1) << 30, CS_FLOW_FOLD_AUTO, &tf, &ta, &st);
    g_test_message("shared uplink: flow %.2f us, analytic %.2f us (%+.2f%%)", tf * 1e6, ta * 1e6,
                   (tf / ta - 1) * 100);
    g_assert_cmpfloat(tf, >, ta * 1.1);
    fix_clear(&j);
}

/* Tree AllReduce (NCCL_ALGO=Tree, Simple at these sizes) on 1, 2 and 4
 * DGX H100 nodes: per channel the chain through each node's GPUs and the
 * double binary tree between the nodes' heads, reduce-up and
 * broadcast-down concurrent. Both engines see the same busiest resource
 * (2 S over each NVLink port direction; on 2-4 nodes a head's NIC carries
 * S/2 per tree edge each way), so the time per byte is the same: between
 * 1 and 2 GiB the two engines' increments agree within 1%. The analytic
 * engine adds a whole pipeline fill ((2(ppn-1+depth)-1) chunks at the
 * channel's rate), the flow engine's fill is shorter (the first stages run
 * alone, at their ceiling): the flow time is 3-8% lower at 1 GiB and
 * within 5% at 2 GiB (docs/model-flow.md). */
static void test_tree(void)
{
    static const int nodes[] = { 1, 2, 4 };
    for (gsize i = 0; i < G_N_ELEMENTS(nodes); i++) {
        job_fix_t j;
        fix_init(&j, preset("dgx-h100", nodes[i]), "Tree", NULL);
        double tf1, ta1, tf2, ta2;
        cs_flow_stats_t st;
        both(&j, G_GUINT64_CONSTANT(1) << 30, CS_FLOW_FOLD_AUTO, &tf1, &ta1, &st);
        g_assert_true(st.dataflow);
        g_assert_false(st.approx);
        double tn;
        both(&j, G_GUINT64_CONSTANT(1) << 30, CS_FLOW_FOLD_NONE, &tn, &ta1, &st);
        g_assert_false(st.folded);
        g_assert_cmpfloat(fabs(tf1 / tn - 1), <, 1e-9);   /* the exact fold of alike flows */
        both(&j, G_GUINT64_CONSTANT(2) << 30, CS_FLOW_FOLD_AUTO, &tf2, &ta2, &st);
        g_test_message("tree, %d nodes: 1 GiB flow %.2f us, analytic %.2f us (%+.2f%%); 2 GiB %.2f / %.2f (%+.2f%%)",
                       nodes[i], tf1 * 1e6, ta1 * 1e6, (tf1 / ta1 - 1) * 100, tf2 * 1e6, ta2 * 1e6,
                       (tf2 / ta2 - 1) * 100);
        g_assert_cmpfloat(tf1 / ta1 - 1, <, 0.0);
        g_assert_cmpfloat(tf1 / ta1 - 1, >, -0.08);
        g_assert_cmpfloat(fabs(tf2 / ta2 - 1), <, 0.05);
        g_assert_cmpfloat(fabs((tf2 - tf1) / (ta2 - ta1) - 1), <, 0.01);
        fix_clear(&j);
    }
}

/* NVLS on one DGX H100 (NCCL picks it at 1-2 GiB): each GPU's reduction
 * and multicast of its slice load its NVLink ports with S(1+1/8) each way
 * at eff.nvls.sm90, as the analytic model; the analytic model also pays
 * every step's synchronisation in series, the flow engine overlaps them
 * (8-slot credit): flow within 5% below at 1 GiB, 3% at 2 GiB. The volume
 * alone, S(1+1/8) / (450 GB/s x eff.nvls.sm90), bounds the time below. */
static void test_nvls(void)
{
    job_fix_t j;
    fix_init(&j, preset("dgx-h100", 1), NULL, NULL);
    double tf, ta;
    cs_flow_stats_t st;
    static const guint64 sizes[] = { G_GUINT64_CONSTANT(1) << 30, G_GUINT64_CONSTANT(2) << 30 };
    static const double tol[] = { 0.05, 0.03 };
    for (gsize i = 0; i < G_N_ELEMENTS(sizes); i++) {
        cs_decision_t d;
        GError *err = NULL;
        g_assert_true(cs_comm_decide(j.comm, CS_COLL_ALLREDUCE, CS_DTYPE_FLOAT, sizes[i], &d, &err));
        g_assert_cmpint(d.algo, ==, CS_ALGO_NVLS);
        both(&j, sizes[i], CS_FLOW_FOLD_AUTO, &tf, &ta, &st);
        g_test_message("nvls %" G_GUINT64_FORMAT ": flow %.2f us, analytic %.2f us (%+.2f%%)", sizes[i], tf * 1e6,
                       ta * 1e6, (tf / ta - 1) * 100);
        g_assert_true(st.dataflow);
        g_assert_cmpfloat(fabs(tf / ta - 1), <, tol[i]);
        double vol = 9.0 / 8 * (double)sizes[i] / (450e9 * cs_params_get(&j.params, CS_P_EFF_NVLS_SM90));
        g_assert_cmpfloat(tf, >, vol);
    }
    fix_clear(&j);
}

/* NVLS all-reduce on one DGX B200 at 64 MiB (32 KiB chunks, 24
 * channels): a step's chunks come through the copy warps one head after
 * the other (8 heads x 2 rounds of lat.nvls.round.sm100,
 * cs_engine_nvls_step_floor), which the flow engine takes as each NVLS
 * flow's ceiling: the call takes at least its steps' rounds, and clearly
 * less without them. */
static void test_nvls_copy_rounds(void)
{
    job_fix_t j;
    fix_init(&j, preset("dgx-b200", 1), NULL, NULL);
    guint64 S = G_GUINT64_CONSTANT(64) << 20;
    cs_decision_t d;
    GError *err = NULL;
    g_assert_true(cs_comm_decide(j.comm, CS_COLL_ALLREDUCE, CS_DTYPE_FLOAT, S, &d, &err));
    g_assert_cmpint(d.algo, ==, CS_ALGO_NVLS);
    g_assert_cmpuint(d.chunk_bytes, ==, 32768);
    double D = (double)S / d.nchannels, k = ceil(D / (8.0 * d.chunk_bytes));
    double floor_s = cs_engine_nvls_step_floor(&j.params, 3, 8, FALSE, 8, (double)d.chunk_bytes, 8.0 * d.chunk_bytes);
    double tf, ta, tf0, ta0;
    cs_flow_stats_t st;
    both(&j, S, CS_FLOW_FOLD_AUTO, &tf, &ta, &st);
    j.params.v[CS_P_LAT_NVLS_ROUND_SM100] = 0;
    both(&j, S, CS_FLOW_FOLD_AUTO, &tf0, &ta0, &st);
    g_test_message("nvls copy rounds, 64 MiB on 8 B200: flow %.2f us (%.2f without), analytic %.2f us (%.2f), "
                   "%g steps of %.2f us", tf * 1e6, tf0 * 1e6, ta * 1e6, ta0 * 1e6, k, floor_s * 1e6);
    g_assert_cmpfloat(tf, >, k * floor_s);
    g_assert_cmpfloat(tf0, <, 0.9 * tf);
    g_assert_cmpfloat(ta0, <, 0.9 * ta);
    fix_clear(&j);
}

/* NVLSTree on two DGX H100 nodes (NCCL's pick at 128 MiB - 1 GiB): NVLS in
 * each node and per GPU a tree between the GPUs of the same local index,
 * through their own NICs. Within 10% of the analytic engine at 1 GiB. */
static void test_nvls_tree(void)
{
    job_fix_t j;
    fix_init(&j, preset("dgx-h100", 2), NULL, NULL);
    double tf, ta;
    cs_flow_stats_t st;
    guint64 bytes = G_GUINT64_CONSTANT(1) << 30;
    cs_decision_t d;
    GError *err = NULL;
    g_assert_true(cs_comm_decide(j.comm, CS_COLL_ALLREDUCE, CS_DTYPE_FLOAT, bytes, &d, &err));
    g_assert_cmpint(d.algo, ==, CS_ALGO_NVLS_TREE);
    both(&j, bytes, CS_FLOW_FOLD_AUTO, &tf, &ta, &st);
    g_test_message("nvlstree 2 nodes 1 GiB: flow %.2f us, analytic %.2f us (%+.2f%%)", tf * 1e6, ta * 1e6,
                   (tf / ta - 1) * 100);
    g_assert_true(st.dataflow);
    g_assert_cmpfloat(fabs(tf / ta - 1), <, 0.10);
    fix_clear(&j);
}

/* Identical channels of a dataflow program run as one with their weight
 * (NVLSTree: every GPU's tree leaves through its own NIC whatever the
 * channel): the same time as every channel simulated, which a sink (a
 * timeline with a track per channel) forces, with fewer events. */
static void test_df_merge(void)
{
    static const struct { const char *algo, *proto; guint64 bytes; } cases[] = {
        { "NVLSTree", NULL, G_GUINT64_CONSTANT(64) << 20 },
        { "Tree", "LL128", G_GUINT64_CONSTANT(1) << 20 },
        { "Tree", "Simple", G_GUINT64_CONSTANT(64) << 20 },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        job_fix_t j;
        fix_init(&j, preset("dgx-h100", 2), cases[i].algo, cases[i].proto);
        GError *err = NULL;
        cs_decision_t d;
        g_assert_true(cs_comm_decide(j.comm, CS_COLL_ALLREDUCE, CS_DTYPE_FLOAT, cases[i].bytes, &d, &err));
        cs_engine_job_t job = { .topo = j.topo, .comm = j.comm, .params = &j.params, .coll = CS_COLL_ALLREDUCE,
                                .dtype = CS_DTYPE_FLOAT };
        cs_engine_call_t call = { .size = cases[i].bytes, .count = cases[i].bytes / 4,
                                  .nccl_bytes = cases[i].bytes, .decision = &d };
        cs_flow_stats_t merged, every;
        g_autoptr(cs_flow_t) f = cs_flow_new(&job, &err);
        g_assert_no_error(err);
        g_assert_true(cs_flow_simulate(f, &call, CS_FLOW_FOLD_AUTO, &merged, &err));
        cs_sim_sink_t quiet = { 0 };
        cs_flow_set_sink(f, &quiet);
        g_assert_true(cs_flow_simulate(f, &call, CS_FLOW_FOLD_AUTO, &every, &err));
        g_assert_no_error(err);
        g_test_message("%s %s: merged %.3f us (%" G_GUINT64_FORMAT " events), every channel %.3f us (%" G_GUINT64_FORMAT
                       " events)", cases[i].algo, cs_proto_name(d.proto), merged.time_s * 1e6, merged.events,
                       every.time_s * 1e6, every.events);
        g_assert_true(merged.dataflow && every.dataflow);
        g_assert_cmpfloat(fabs(merged.time_s / every.time_s - 1), <, 1e-12);
        if (d.algo == CS_ALGO_NVLS_TREE)
            g_assert_cmpuint(merged.events * 4, <=, every.events);
        fix_clear(&j);
    }
}

/* Folded dataflow programs (docs/model-flow.md, "Folding dataflow
 * programs"): flows that load the binding resources alike, with the same
 * latency, and depend on and feed flows that do, run as one lane per
 * class: the same time as every flow simulated, within 1e-9 (the order of
 * floating-point sums), in every fold mode but NONE (no approximation).
 * Tree and NVLSTree on 6 and 16 DGX H100 nodes, Tree on 64 and 128
 * one-GPU nodes (two and four leaves). */
static void test_df_fold(void)
{
    static const struct { const char *algo; guint64 bytes; int nodes, gpus; } cases[] = {
        { "Tree", G_GUINT64_CONSTANT(64) << 20, 16, 0 },
        { "NVLSTree", G_GUINT64_CONSTANT(64) << 20, 16, 0 },
        { "Tree", G_GUINT64_CONSTANT(256) << 20, 6, 0 },
        { "Tree", G_GUINT64_CONSTANT(16) << 20, 64, 1 },
        { "Tree", G_GUINT64_CONSTANT(16) << 20, 128, 1 },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        job_fix_t j;
        fix_init(&j, preset_gpus("dgx-h100", cases[i].nodes, cases[i].gpus), cases[i].algo, NULL);
        double tn, te, tp, ta;
        cs_flow_stats_t sn, se, sp;
        both(&j, cases[i].bytes, CS_FLOW_FOLD_NONE, &tn, &ta, &sn);
        both(&j, cases[i].bytes, CS_FLOW_FOLD_EXACT, &te, &ta, &se);
        both(&j, cases[i].bytes, CS_FLOW_FOLD_APPROX, &tp, &ta, &sp);
        g_test_message("%s %d nodes: every flow %.4f us (%d lanes), folded %.4f us (%d classes of %d flows)",
                       cases[i].algo, cases[i].nodes, tn * 1e6, sn.lanes, te * 1e6, se.lanes, se.flows);
        g_assert_false(sn.folded);
        g_assert_true(se.folded && !se.approx);
        g_assert_cmpint(se.lanes * 4, <=, sn.lanes);
        g_assert_cmpint(se.period, ==, se.lanes);
        g_assert_cmpfloat(fabs(te / tn - 1), <, 1e-9);
        g_assert_true(sp.folded && !sp.approx);
        g_assert_cmpint(sp.lanes, ==, se.lanes);
        g_assert_cmpfloat(tp, ==, te);
        fix_clear(&j);
    }
}

/* One DGX-1 (hybrid cube-mesh: each GPU has two double and two single
 * NVLink2 links): NCCL's search gives its channels six distinct rings
 * that between them cross every link (test-graph.c has them from
 * search.cc). Each channel following its own ring, a 256 MiB Ring
 * all-reduce keeps every NVLink busy, the single links included; with
 * channel 0's ring on every channel (what the engines did before) the
 * links outside that ring carried nothing. */
static void test_dgx1_rings(void)
{
    job_fix_t j;
    fix_init(&j, preset("dgx1-v100", 1), "Ring", "Simple");
    GError *err = NULL;
    cs_engine_job_t job = { .topo = j.topo, .comm = j.comm, .params = &j.params,
                            .coll = CS_COLL_ALLREDUCE, .dtype = CS_DTYPE_FLOAT };
    guint64 bytes = G_GUINT64_CONSTANT(256) << 20;
    cs_decision_t d;
    g_assert_true(cs_comm_decide(j.comm, CS_COLL_ALLREDUCE, CS_DTYPE_FLOAT, bytes, &d, &err));
    cs_engine_call_t call = { .size = bytes, .count = bytes / 4, .nccl_bytes = bytes, .decision = &d };
    g_autoptr(cs_flow_t) f = cs_flow_new(&job, &err);
    g_assert_no_error(err);
    cs_flow_stats_t st;
    g_assert_true(cs_flow_simulate(f, &call, CS_FLOW_FOLD_AUTO, &st, &err));
    g_assert_no_error(err);
    g_autoptr(cs_link_stats_t) ls = cs_flow_link_stats(f);
    int nvl = 0;
    double least = 1;
    for (int l = 0; l < j.topo->nlinks; l++) {
        const cs_link_t *k = &j.topo->links[l];
        if (k->kind != CS_LINK_NVL)
            continue;
        g_autofree char *name = cs_flow_res_name(j.topo, l);
        double busy = 0;
        for (int i = 0; i < ls->n; i++)
            if (g_strcmp0(ls->links[i].name, name) == 0)
                busy = ls->links[i].bytes / (ls->links[i].cap * st.time_s);
        g_test_message("%s: %.1f%% busy", name, busy * 100);
        least = MIN(least, busy);
        nvl++;
    }
    /* 8 GPUs x 4 neighbours, both directions (double links are one link
     * of twice the width in the preset) */
    g_assert_cmpint(nvl, ==, 32);
    g_test_message("busbw %.1f GB/s, least busy NVLink %.1f%%", 2.0 * 7 / 8 * bytes / st.time_s / 1e9, least * 100);
    g_assert_cmpfloat(least, >, 0.8);
    fix_clear(&j);
}

/* ---- SendRecv and AlltoAll ------------------------------------------------ */

/* A job over 'topo' with NCCL variables (name, value pairs, NULL-ended). */
static void fix_init_env(job_fix_t *j, cs_topo_t *topo, const char *const *kv)
{
    GError *err = NULL;
    j->topo = topo;
    g_autoptr(cs_nccl_env_t) env = cs_nccl_env_new();
    for (int i = 0; kv != NULL && kv[i] != NULL; i += 2)
        cs_nccl_env_set(env, kv[i], kv[i + 1], "test");
    j->comm = cs_comm_new(topo, env, &err);
    g_assert_no_error(err);
    cs_params_init_defaults(&j->params);
}

/* One p2p call by the flow engine (link statistics into *ls_p when not
 * NULL) and, when ta_p is not NULL, by the analytic engine. */
static double p2p_run(job_fix_t *j, cs_coll_t coll, guint64 bytes, cs_flow_fold_t fold, cs_flow_stats_t *st_p,
                      cs_link_stats_t **ls_p, double *ta_p)
{
    GError *err = NULL;
    cs_engine_job_t job = { .topo = j->topo, .comm = j->comm, .params = &j->params,
                            .coll = coll, .dtype = CS_DTYPE_FLOAT };
    cs_decision_t d;
    g_assert_true(cs_comm_decide(j->comm, coll, CS_DTYPE_FLOAT, bytes, &d, &err));
    g_assert_no_error(err);
    g_assert_cmpint(d.algo, ==, CS_ALGO_P2P);
    cs_engine_call_t call = { .size = bytes, .count = bytes / 4, .nccl_bytes = bytes, .decision = &d };
    g_autoptr(cs_flow_t) f = cs_flow_new(&job, &err);
    g_assert_no_error(err);
    g_assert_true(cs_flow_simulate(f, &call, fold, st_p, &err));
    g_assert_no_error(err);
    if (ls_p != NULL)
        *ls_p = cs_flow_link_stats(f);
    if (ta_p != NULL) {
        const cs_engine_ops_t *ops = cs_engine_find("analytic");
        void *state = NULL;
        double t[2];
        g_assert_true(ops->open(&job, &state, &err));
        g_assert_no_error(err);
        g_assert_true(ops->predict(state, &job, &call, t, &err));
        g_assert_no_error(err);
        ops->close(state);
        *ta_p = t[CS_OOP];
    }
    return st_p->time_s;
}

/* Where nothing but the pattern's own flows share the links, the flow
 * engine's SendRecv and AlltoAll follow the analytic engine's bounds (the
 * same NVSwitch ports, NICs, per-channel CTA split between sends and
 * receives, NCCL_P2P_PER_CHANNEL_NET_BW per network part, memory) with
 * latencies paid per unit instead of per batch: within 2% on one and two
 * DGX H100 (rail fabric, PXN) and on 32 (256 ranks, two batches per
 * channel). */
static void test_p2p_agree(void)
{
    static const struct { int nodes; guint64 bytes; } cases[] = {
        { 1, G_GUINT64_CONSTANT(1) << 20 }, { 1, G_GUINT64_CONSTANT(64) << 20 }, { 1, G_GUINT64_CONSTANT(1) << 30 },
        { 2, G_GUINT64_CONSTANT(4) << 20 }, { 2, G_GUINT64_CONSTANT(256) << 20 },
        { 32, G_GUINT64_CONSTANT(64) << 20 },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        job_fix_t j;
        fix_init(&j, preset("dgx-h100", cases[i].nodes), NULL, NULL);
        for (int k = 0; k < 2; k++) {
            cs_coll_t coll = k == 0 ? CS_COLL_ALLTOALL : CS_COLL_SENDRECV;
            if (coll == CS_COLL_SENDRECV && cases[i].nodes > 2)
                continue;
            double ta, tf;
            cs_flow_stats_t st;
            tf = p2p_run(&j, coll, cases[i].bytes, CS_FLOW_FOLD_AUTO, &st, NULL, &ta);
            g_test_message("%s %d node(s) %" G_GUINT64_FORMAT " B: flow %.2f us, analytic %.2f us (%+.2f%%), "
                           "%d lanes", cs_coll_name(coll), cases[i].nodes, cases[i].bytes, tf * 1e6, ta * 1e6,
                           (tf / ta - 1) * 100, st.lanes);
            g_assert_true(st.dataflow);
            g_assert_cmpfloat(fabs(tf / ta - 1), <, 0.02);
        }
        fix_clear(&j);
    }
}

/* The same call twice gives the same time to the bit, and the same link
 * statistics; folding the flows into classes (exact) changes nothing. */
static void test_p2p_repeat(void)
{
    static const char *const env[] = { "NCCL_MAX_P2P_NCHANNELS", "1", NULL };
    job_fix_t j;
    /* one p2p channel: every round's works on channel 0, two batches of 8 */
    fix_init_env(&j, preset("dgx-h100", 2), env);
    for (int k = 0; k < 2; k++) {
        cs_coll_t coll = k == 0 ? CS_COLL_ALLTOALL : CS_COLL_SENDRECV;
        guint64 bytes = G_GUINT64_CONSTANT(32) << 20;
        cs_flow_stats_t s1, s2, sn;
        cs_link_stats_t *l1 = NULL, *l2 = NULL;
        double t1 = p2p_run(&j, coll, bytes, CS_FLOW_FOLD_NONE, &s1, &l1, NULL);
        double t2 = p2p_run(&j, coll, bytes, CS_FLOW_FOLD_NONE, &s2, &l2, NULL);
        double tn = p2p_run(&j, coll, bytes, CS_FLOW_FOLD_AUTO, &sn, NULL, NULL);
        g_test_message("%s: %.3f us, %d lanes; folded %.3f us, %d lanes", cs_coll_name(coll), t1 * 1e6, s1.lanes,
                       tn * 1e6, sn.lanes);
        g_assert_cmpfloat(t1, ==, t2);
        g_assert_cmpint(s1.events, ==, s2.events);
        g_assert_cmpint(l1->n, ==, l2->n);
        for (int i = 0; i < l1->n; i++) {
            g_assert_cmpstr(l1->links[i].name, ==, l2->links[i].name);
            g_assert_cmpfloat(l1->links[i].bytes, ==, l2->links[i].bytes);
        }
        g_assert_cmpfloat(fabs(tn / t1 - 1), <, 1e-9);
        g_assert_cmpint(sn.lanes, <, s1.lanes);
        cs_link_stats_free(l1);
        cs_link_stats_free(l2);
    }
    fix_clear(&j);
}

/* Batches: with one p2p channel, 16 ranks' AlltoAll runs rounds 0-7 then
 * 8-15 on it, one batch after the other, the CTA copying each peer part
 * twice (its send, its receive) and the part to the rank itself once:
 * each flow takes the CTA over its batch's copies (15, then 16). The
 * program: 16 x 16 sends of B = S/16 on channel 0, each of the second
 * batch waiting for the whole of every flow of the first at its two ends.
 * The time is at least the two batches' CTA terms: (15 + 16) x B /
 * channel ceiling. */
static void test_p2p_batches(void)
{
    static const char *const env[] = { "NCCL_MAX_P2P_NCHANNELS", "1", NULL };
    job_fix_t j;
    fix_init_env(&j, preset("dgx-h100", 2), env);
    const cs_comm_info_t *info = cs_comm_info(j.comm);
    g_assert_cmpint(info->p2p_nch, ==, 1);
    GError *err = NULL;
    guint64 bytes = G_GUINT64_CONSTANT(64) << 20, B = bytes / 16;
    cs_decision_t d;
    g_assert_true(cs_comm_decide(j.comm, CS_COLL_ALLTOALL, CS_DTYPE_FLOAT, bytes, &d, &err));
    g_autoptr(cs_program_t) p = cs_program_new(info, CS_COLL_ALLTOALL, &d, bytes, 0, NULL, &err);
    g_assert_no_error(err);
    g_assert_cmpint(p->nch, ==, 1);
    g_assert_cmpint(p->nflows, ==, 16 * 16);
    int first = 0;
    for (int fi = 0; fi < p->nflows; fi++) {
        const cs_prog_flow_t *fl = &p->flows[fi];
        g_assert_cmpuint(fl->bytes, ==, B);
        int nd = p->dep_off[fi + 1] - p->dep_off[fi];
        g_assert_cmpfloat(fl->cap_div, ==, nd == 0 ? 15 : 16);   /* the first batch waits for nothing */
        for (int k = p->dep_off[fi]; k < p->dep_off[fi + 1]; k++)
            g_assert_cmpint(p->deps[k].lag, ==, CS_PROG_LAG_END);
        /* the first batch: nothing to wait for; the second: the 8 sends
         * and 8 receives of each end's first batch (a self send once) */
        if (nd == 0)
            first++;
        else
            g_assert_cmpint(nd, >=, 16);
    }
    g_assert_cmpint(first, ==, 16 * 8);
    cs_flow_stats_t st;
    double tf = p2p_run(&j, CS_COLL_ALLTOALL, bytes, CS_FLOW_FOLD_AUTO, &st, NULL, NULL);
    double floor = (15 + 16) * (double)B / cs_flow_channel_bw(&(cs_flow_net_t){ .par = &j.params, .arch = 2 },
                                                                 d.proto, d.nthreads);
    g_test_message("alltoall, one p2p channel: %.2f us, the CTA floor %.2f us", tf * 1e6, floor * 1e6);
    g_assert_cmpfloat(tf, >, floor);
    g_assert_cmpfloat(tf, <, floor * 1.2);
    fix_clear(&j);
}

/* PXN on a rail fabric (no spine: rail k reaches only rail k): SendRecv's
 * edge from GPU 7 of node 0 to GPU 0 of node 1 crosses NVLink to node 0's
 * GPU 0 and leaves through its NIC (rail 0), as NCCL's p2p does by
 * default (NCCL_P2P_PXN_LEVEL 2); GPU 7's own NIC (rail 7) has no route
 * to rail 0. With NCCL_PXN_DISABLE=1 there is none: one clear error. */
static void test_p2p_pxn(void)
{
    job_fix_t j;
    fix_init(&j, preset("dgx-h100", 2), NULL, NULL);
    cs_link_stats_t *ls = NULL;
    cs_flow_stats_t st;
    p2p_run(&j, CS_COLL_SENDRECV, G_GUINT64_CONSTANT(64) << 20, CS_FLOW_FOLD_NONE, &st, &ls, NULL);
    double rail0 = 0, rail7 = 0;
    for (int i = 0; i < ls->n; i++) {
        if (g_str_has_prefix(ls->links[i].name, "n0.nic0 -> "))
            rail0 += ls->links[i].bytes;
        if (g_str_has_prefix(ls->links[i].name, "n0.nic7 -> "))
            rail7 += ls->links[i].bytes;
    }
    /* the links out of node 0's NIC 0 (to the fabric: GPU 7's sends; to
     * its PCIe switch: what node 1's GPU 7 sends to GPU 0) */
    g_test_message("out of node 0's NIC 0: %.0f B, NIC 7: %.0f B", rail0, rail7);
    g_assert_cmpfloat(rail0, >=, 64.0 * 1048576);
    g_assert_cmpfloat(rail7, ==, 0);
    cs_link_stats_free(ls);
    fix_clear(&j);

    static const char *const env[] = { "NCCL_PXN_DISABLE", "1", NULL };
    fix_init_env(&j, preset("dgx-h100", 2), env);
    GError *err = NULL;
    cs_engine_job_t job = { .topo = j.topo, .comm = j.comm, .params = &j.params,
                            .coll = CS_COLL_SENDRECV, .dtype = CS_DTYPE_FLOAT };
    cs_decision_t d;
    guint64 bytes = G_GUINT64_CONSTANT(1) << 20;
    g_assert_true(cs_comm_decide(j.comm, CS_COLL_SENDRECV, CS_DTYPE_FLOAT, bytes, &d, &err));
    cs_engine_call_t call = { .size = bytes, .count = bytes / 4, .nccl_bytes = bytes, .decision = &d };
    g_autoptr(cs_flow_t) f = cs_flow_new(&job, &err);
    g_assert_false(cs_flow_simulate(f, &call, CS_FLOW_FOLD_AUTO, &st, &err));
    g_assert_nonnull(err);
    g_test_message("%s", err->message);
    g_assert_nonnull(strstr(err->message, "the fabric has no route between them (a rail fabric"));
    g_error_free(err);
    fix_clear(&j);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/flow/agree-1node", test_agree_1node);
    g_test_add_func("/flow/agree-2nodes", test_agree_2nodes);
    g_test_add_func("/flow/fold-exact", test_fold_exact);
    g_test_add_func("/flow/fold-approx", test_fold_approx);
    g_test_add_func("/flow/contention", test_contention);
    g_test_add_func("/flow/chain", test_chain);
    g_test_add_func("/flow/chain-1node", test_chain_1node);
    g_test_add_func("/flow/tree", test_tree);
    g_test_add_func("/flow/nvls", test_nvls);
    g_test_add_func("/flow/nvls-copy-rounds", test_nvls_copy_rounds);
    g_test_add_func("/flow/nvls-tree", test_nvls_tree);
    g_test_add_func("/flow/df-merge", test_df_merge);
    g_test_add_func("/flow/df-fold", test_df_fold);
    g_test_add_func("/flow/dgx1-rings", test_dgx1_rings);
    g_test_add_func("/flow/p2p-agree", test_p2p_agree);
    g_test_add_func("/flow/p2p-repeat", test_p2p_repeat);
    g_test_add_func("/flow/p2p-batches", test_p2p_batches);
    g_test_add_func("/flow/p2p-pxn", test_p2p_pxn);
    return g_test_run();
}
