/* The SimGrid engine: the bandwidth oracle (a ring all-reduce whose time
 * is known in closed form once the fixed costs are zero), and the
 * cross-check with the native flow engine on contention scenarios, where
 * both engines run the same rank programs with the same parameters and
 * differ only in who shares the links (docs/model-simgrid.md). */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib/gstdio.h>

#include "sim/cs_engine_simgrid-int.h"
#include "sim/cs_engine_flow-int.h"
#include "models/cs_presets.h"
#include "engine-fixture.h"

/* Latency of every link one_gpu_nodes() builds: 0 for the oracle, whose
 * closed form has no latency term. */
static double link_lat = 100e-9;

static void add_pci(cs_topo_t *t, int a, int b)
{
    int l = cs_topo_add_link(t, a, b, CS_LINK_PCI, cs_pcie_bw(5, 16), link_lat, 0);
    t->links[l].pcie_gen = 5;
    t->links[l].pcie_width = 16;
}

/* 'nodes' nodes of one GPU and one 25 GB/s NIC (GPU and NIC under one
 * PCIe switch), node i's NIC on leaf leaf_of[i] (NULL: all on leaf 0);
 * leaves joined by one spine with 'spine_bw' links (0: one leaf). */
static cs_topo_t *one_gpu_nodes(int nodes, const int *leaf_of, int nleaves, double spine_bw)
{
    cs_topo_t *t = cs_topo_new("test:one-gpu-nodes");
    char name[32];
    int leaf[8];
    g_assert_cmpint(nleaves, <=, 8);
    for (int l = 0; l < nleaves; l++) {
        g_snprintf(name, sizeof name, "leaf%d", l);
        leaf[l] = fix_add_dev(t, CS_DEV_SWITCH, name, -1, 0);
    }
    if (nleaves > 1) {
        int spine = fix_add_dev(t, CS_DEV_SWITCH, "spine0", -1, 0);
        t->devs[spine].tier = 1;
        for (int l = 0; l < nleaves; l++)
            cs_topo_add_link(t, leaf[l], spine, CS_LINK_NET, spine_bw, link_lat, 0);
    }
    for (int n = 0; n < nodes; n++) {
        g_snprintf(name, sizeof name, "n%d.cpu0", n);
        int cpu = fix_add_dev(t, CS_DEV_CPU, name, n, 0);
        g_snprintf(name, sizeof name, "n%d.sw0", n);
        int sw = fix_add_dev(t, CS_DEV_PCISW, name, n, 0);
        g_snprintf(name, sizeof name, "n%d.gpu0", n);
        int gpu = fix_add_dev(t, CS_DEV_GPU, name, n, 0);
        g_snprintf(name, sizeof name, "n%d.nic0", n);
        int nic = fix_add_dev(t, CS_DEV_NIC, name, n, 0);
        add_pci(t, sw, cpu);
        add_pci(t, gpu, sw);
        add_pci(t, nic, sw);
        cs_topo_add_link(t, nic, leaf[leaf_of != NULL ? leaf_of[n] : 0], CS_LINK_NET, 25e9, link_lat, 0);
    }
    GError *err = NULL;
    g_assert_true(cs_topo_finish(t, &err));
    g_assert_no_error(err);
    return t;
}

/* The collective the helpers below run (all-reduce unless a test says). */
static cs_coll_t coll = CS_COLL_ALLREDUCE;

static cs_engine_job_t job_of(job_fix_t *j)
{
    return (cs_engine_job_t){ .topo = j->topo, .comm = j->comm, .params = &j->params,
                              .coll = coll, .dtype = CS_DTYPE_FLOAT };
}

static double simgrid_time(job_fix_t *j, guint64 bytes, const char *platform, cs_simgrid_stats_t *st_p)
{
    GError *err = NULL;
    cs_engine_job_t job = job_of(j);
    cs_decision_t d;
    g_assert_true(cs_comm_decide(j->comm, coll, CS_DTYPE_FLOAT, bytes, &d, &err));
    g_assert_no_error(err);
    cs_engine_call_t call = { .size = bytes, .count = bytes / 4, .nccl_bytes = bytes, .decision = &d };
    cs_simgrid_stats_t st;
    gboolean ok = cs_simgrid_simulate(&job, &call, platform, &st, &err);
    g_assert_no_error(err);
    g_assert_true(ok);
    if (st_p != NULL)
        *st_p = st;
    return st.time_s;
}

static double flow_time(job_fix_t *j, guint64 bytes)
{
    GError *err = NULL;
    cs_engine_job_t job = job_of(j);
    cs_decision_t d;
    g_assert_true(cs_comm_decide(j->comm, coll, CS_DTYPE_FLOAT, bytes, &d, &err));
    g_assert_no_error(err);
    cs_engine_call_t call = { .size = bytes, .count = bytes / 4, .nccl_bytes = bytes, .decision = &d };
    g_autoptr(cs_flow_t) f = cs_flow_new(&job, &err);
    g_assert_no_error(err);
    cs_flow_stats_t st;
    /* The whole ring, as SimGrid simulates it. */
    gboolean ok = cs_flow_simulate(f, &call, CS_FLOW_FOLD_NONE, &st, &err);
    g_assert_no_error(err);
    g_assert_true(ok);
    return st.time_s;
}

/* Fixed costs to zero (every parameter in microseconds), efficiencies to
 * one, per-channel and memory ceilings out of the way: what is left is
 * the bandwidth term of the links. */
static void params_bandwidth_only(cs_params_t *p)
{
    for (int i = 0; i < CS_P_COUNT; i++) {
        const char *u = cs_param_unit((cs_param_id_t)i);
        const char *name = cs_param_name((cs_param_id_t)i);
        if (strcmp(u, "us") == 0)
            p->v[i] = 0;
        else if (g_str_has_prefix(name, "chan."))
            p->v[i] = 1e6;   /* GB/s per channel: never binds */
        else if (g_str_has_prefix(name, "eff.") || g_str_has_prefix(name, "proto.eff."))
            p->v[i] = 1.0;
    }
    p->v[CS_P_EFF_MEM] = 1e6;
}

/* The oracle (codebase-conventions B3): 8 GPUs each with one 25 GB/s link
 * to a switch, Ring Simple all-reduce of 1 GiB: every rank sends
 * 2(n-1)/n of the buffer through its own link, so the time is exactly
 * 2*7/8*2^30/25e9 = 75.16 ms. */
static void test_oracle(void)
{
    job_fix_t j;
    link_lat = 0;
    fix_init(&j, one_gpu_nodes(8, NULL, 1, 0), "Ring", "Simple");
    link_lat = 100e-9;
    params_bandwidth_only(&j.params);
    double want = 2.0 * 7 / 8 * (double)(G_GUINT64_CONSTANT(1) << 30) / 25e9;
    cs_simgrid_stats_t st;
    double t = simgrid_time(&j, G_GUINT64_CONSTANT(1) << 30, NULL, &st);
    g_test_message("oracle: simgrid %.9f s, closed form %.9f s (%+.2e), %d lanes, %d links", t, want,
                   t / want - 1, st.lanes, st.links);
    g_assert_cmpfloat(fabs(t / want - 1), <, 1e-6);
    g_assert_cmpfloat(st.quant_err, ==, 0);
    fix_clear(&j);
}

/* With the real fixed costs the time is the bandwidth term plus launch
 * and step latencies: more than the oracle, and by no more than the
 * latencies of a pipeline fill and drain (2(n-1) steps per loop is a
 * generous bound for 1 GiB). */
static void test_fixed_costs(void)
{
    job_fix_t j;
    fix_init(&j, one_gpu_nodes(8, NULL, 1, 0), "Ring", "Simple");
    double bw = 25e9 * cs_params_get(&j.params, CS_P_EFF_NET);
    double want = 2.0 * 7 / 8 * (double)(G_GUINT64_CONSTANT(1) << 30) / bw;
    double t = simgrid_time(&j, G_GUINT64_CONSTANT(1) << 30, NULL, NULL);
    double tf = flow_time(&j, G_GUINT64_CONSTANT(1) << 30);
    g_test_message("defaults: simgrid %.6f s, flow %.6f s, bandwidth term %.6f s", t, tf, want);
    g_assert_cmpfloat(t, >, want);
    g_assert_cmpfloat(t, <, want * 1.05);
    g_assert_cmpfloat(fabs(t / tf - 1), <, 0.01);
    fix_clear(&j);
}

static void cross_check(const char *what, job_fix_t *j, guint64 bytes, double *ratio_p,
                        cs_simgrid_stats_t *st_p)
{
    cs_simgrid_stats_t st;
    double ts = simgrid_time(j, bytes, NULL, &st);
    double tf = flow_time(j, bytes);
    g_test_message("%s: simgrid %.3f us, flow %.3f us (%+.3f%%), %d lanes, %d SimGrid links, "
                   "coefficient rounding %.2e", what, ts * 1e6, tf * 1e6, (ts / tf - 1) * 100, st.lanes,
                   st.links, st.quant_err);
    g_assert_cmpfloat(fabs(ts / tf - 1), <, 0.01);
    if (ratio_p != NULL)
        *ratio_p = ts / tf;
    if (st_p != NULL)
        *st_p = st;
}

/* Incast onto one link: two nodes of two GPUs without peer-to-peer
 * (SHM through the CPU) behind one PCIe switch, whose uplink to the CPU
 * also carries the NIC's traffic (the flow engine's shared-uplink case).
 * The uplink sees both kinds of flow, with different efficiencies. */
static void test_incast(void)
{
    job_fix_t j;
    fix_init(&j, fix_shared_uplink(), "Ring", NULL);
    cs_simgrid_stats_t st;
    cross_check("incast (shared PCIe uplink)", &j, G_GUINT64_CONSTANT(256) << 20, NULL, &st);
    /* SHM and GPUDirect flows cross the uplink with different
     * efficiencies: approximated by integer multiplicities, closely. */
    g_assert_cmpfloat(st.quant_err, >, 0);
    g_assert_cmpfloat(st.quant_err, <, 1e-3);
    fix_clear(&j);
}

/* Two rings sharing a spine: four one-GPU nodes, two per leaf, leaves
 * joined through one spine by links of half a NIC's bandwidth. Every
 * channel's ring crosses the spine twice (leaf0 -> leaf1 and back), so
 * all channels share the two spine links, which are the bottleneck. */
static void test_shared_spine(void)
{
    static const int leaf_of[4] = { 0, 0, 1, 1 };
    job_fix_t j;
    fix_init(&j, one_gpu_nodes(4, leaf_of, 2, 12.5e9), "Ring", "Simple");
    /* The bottleneck is the spine: the closed form is 2*3/4*S over
     * 12.5 GB/s at eff.net; the engines agree with each other and stay
     * above it. */
    guint64 S = G_GUINT64_CONSTANT(256) << 20;
    double ratio;
    cross_check("two rings sharing a spine", &j, S, &ratio, NULL);
    double bound = 2.0 * 3 / 4 * (double)S / (12.5e9 * cs_params_get(&j.params, CS_P_EFF_NET));
    g_assert_cmpfloat(simgrid_time(&j, S, NULL, NULL), >, bound);
    fix_clear(&j);
}

/* An oversubscribed fat-tree from the presets: five DGX H100 nodes (8
 * NDR NICs each) on an 8:1 fat-tree (cluster builder): a 64-port leaf
 * takes four nodes, so the ring crosses the spine from node 3 to node 4
 * and back, and the leaf's uplinks (32 x 50 GB/s / 8 = 200 GB/s) are
 * narrower than the eight NICs that cross them. */
static void test_fat_tree(void)
{
    GError *err = NULL;
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    o.nodes = 5;
    o.fabric = "fat-tree";
    o.oversubscription = 8;
    cs_topo_t *t = cs_preset_build("dgx-h100", &o, &err);
    g_assert_no_error(err);
    g_assert_cmpint(cs_topo_find(t, "spine0"), >=, 0);
    job_fix_t j;
    fix_init(&j, t, "Ring", "Simple");
    guint64 S = G_GUINT64_CONSTANT(64) << 20;
    cross_check("dgx-h100 x5, 8:1 fat-tree", &j, S, NULL, NULL);
    /* The spine binds: slower than the same ring on a non-blocking tree. */
    job_fix_t nb;
    o.oversubscription = 1;
    fix_init(&nb, cs_preset_build("dgx-h100", &o, &err), "Ring", "Simple");
    g_assert_no_error(err);
    double t8 = simgrid_time(&j, S, NULL, NULL), t1 = simgrid_time(&nb, S, NULL, NULL);
    g_test_message("8:1 %.3f us, 1:1 %.3f us", t8 * 1e6, t1 * 1e6);
    g_assert_cmpfloat(t8, >, t1 * 1.05);
    fix_clear(&nb);
    fix_clear(&j);
}

/* Broadcast and Reduce run as chains; LL and LL128 chains forward each
 * line on arrival (cut-through), Simple ones a slice at a time. One DGX
 * H100, every protocol, two sizes: the engines agree. */
static void test_chains(void)
{
    static const char *const protos[] = { "LL", "LL128", "Simple" };
    static const cs_coll_t colls[] = { CS_COLL_BROADCAST, CS_COLL_REDUCE };
    for (gsize c = 0; c < G_N_ELEMENTS(colls); c++)
        for (gsize p = 0; p < G_N_ELEMENTS(protos); p++) {
            job_fix_t j;
            coll = colls[c];
            cs_build_opts_t o;
            cs_build_opts_init(&o);
            GError *err = NULL;
            cs_topo_t *t = cs_preset_build("dgx-h100", &o, &err);
            g_assert_no_error(err);
            fix_init(&j, t, "Ring", protos[p]);
            char what[64];
            for (guint64 S = 64 << 10; S <= (G_GUINT64_CONSTANT(16) << 20); S <<= 8) {
                g_snprintf(what, sizeof what, "%s %s %" G_GUINT64_FORMAT " B", cs_coll_name(coll), protos[p], S);
                cross_check(what, &j, S, NULL, NULL);
            }
            fix_clear(&j);
        }
    coll = CS_COLL_ALLREDUCE;
}

static cs_topo_t *dgx_h100(int nodes)
{
    GError *err = NULL;
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    o.nodes = nodes;
    cs_topo_t *t = cs_preset_build("dgx-h100", &o, &err);
    g_assert_no_error(err);
    return t;
}

/* A dataflow program (Tree, NVLS, NVLSTree all-reduce) where NCCL picks
 * 'algo' with 'proto': both engines run every flow with its dependencies,
 * credits and latencies; they agree within 1%. The SimGrid time must also
 * exceed 'floor_s' (a bound that only holds with the flows ordered by
 * their dependencies; 0: none). */
static double dataflow_check(job_fix_t *j, guint64 bytes, cs_algo_t algo, cs_proto_t proto, double floor_s)
{
    GError *err = NULL;
    cs_decision_t d;
    g_assert_true(cs_comm_decide(j->comm, coll, CS_DTYPE_FLOAT, bytes, &d, &err));
    g_assert_no_error(err);
    g_assert_cmpint(d.algo, ==, algo);
    g_assert_cmpint(d.proto, ==, proto);
    char what[96];
    g_snprintf(what, sizeof what, "%s %s %d node(s) %" G_GUINT64_FORMAT " B", cs_algo_name(algo),
               cs_proto_name(proto), cs_comm_info(j->comm)->nnodes, bytes);
    cs_simgrid_stats_t st;
    double ratio;
    cross_check(what, j, bytes, &ratio, &st);
    /* one actor per flow: more than one per (channel, rank) */
    g_assert_cmpint(st.lanes, >, d.nchannels * cs_comm_info(j->comm)->nranks);
    double t = simgrid_time(j, bytes, NULL, NULL);
    g_test_message("  above the floor %.3f us by %.3f us", floor_s * 1e6, (t - floor_s) * 1e6);
    g_assert_cmpfloat(t, >, floor_s);
    return t;
}

/* The unit-by-unit critical path of a tree all-reduce through 'nn' nodes
 * of 'ppn' GPUs, by hand: a unit climbs each node's chain (ppn-1 NVLink
 * edges), the double binary tree up and down (depth network edges each
 * way), and the chains down again, each edge paying its latency after its
 * data (lat.hop.nvlink + lat.sync.<proto> [+ lat.sync.simple.nvlink];
 * lat.hop.net + lat.sync.<proto> [+ lat.net.simple]). Flows started
 * without waiting for their inputs would overlap these. */
static double tree_path_lat(const cs_params_t *p, int nn, int ppn, cs_proto_t proto)
{
    double sync = cs_params_get(p, proto == CS_PROTO_SIMPLE ? CS_P_LAT_SYNC_SIMPLE : proto == CS_PROTO_LL128
                                                                                        ? CS_P_LAT_SYNC_LL128
                                                                                        : CS_P_LAT_SYNC_LL);
    double nvl = cs_params_get(p, CS_P_LAT_HOP_NVLINK) + sync, net = cs_params_get(p, CS_P_LAT_HOP_NET) + sync;
    if (proto == CS_PROTO_SIMPLE) {
        nvl += cs_params_get(p, CS_P_LAT_SYNC_SIMPLE_NVLINK);
        net += cs_params_get(p, CS_P_LAT_NET_SIMPLE);
    }
    int depth = 0;
    while ((1 << depth) < nn)
        depth++;   /* a binary tree over nn nodes is at least this deep */
    return (2.0 * (ppn - 1) * nvl + 2.0 * depth * net) * 1e-6;
}

/* Tree all-reduce (NCCL_ALGO=Tree) on 2 and 4 DGX H100: per channel the
 * chain through each node's GPUs and the double binary tree between the
 * nodes, reduce-up and broadcast-down concurrent, the tree edges through
 * the channel's NIC. LL128 at 1 MiB (latency-bound: the critical path is
 * most of the time) and Simple at the first power of two from 64 MiB
 * where NCCL picks it (512 MiB on 2 nodes, 64 MiB on 4). Floor: launch
 * plus the longer of the critical path and the NVLink out-ports' bytes
 * (per channel the chain up and down: 2 (ppn - 1) edges per node, so the
 * busiest of a node's 8 ports carries at least 2 S 7/8, at eff.nvlink x
 * proto.eff). */
static void test_tree(void)
{
    static const int nodes[] = { 2, 4 };
    for (gsize i = 0; i < G_N_ELEMENTS(nodes); i++) {
        job_fix_t j;
        fix_init(&j, dgx_h100(nodes[i]), "Tree", NULL);
        double launch = cs_params_get(&j.params, CS_P_LAT_LAUNCH) * 1e-6;
        double port = 450e9 * cs_params_nvlink_eff(&j.params, 90);   /* H100: NVLink4 */
        double lat = tree_path_lat(&j.params, nodes[i], 8, CS_PROTO_LL128);
        double vol = 2.0 * 7 / 8 * (1 << 20) / (port * cs_params_get(&j.params, CS_P_PROTO_EFF_LL128));
        dataflow_check(&j, G_GUINT64_CONSTANT(1) << 20, CS_ALGO_TREE, CS_PROTO_LL128, launch + MAX(lat, vol));
        guint64 S = G_GUINT64_CONSTANT(64) << 20;
        for (;; S <<= 1) {
            cs_decision_t d;
            GError *err = NULL;
            g_assert_true(cs_comm_decide(j.comm, coll, CS_DTYPE_FLOAT, S, &d, &err));
            if (d.proto == CS_PROTO_SIMPLE)
                break;
            g_assert_cmpuint(S, <, G_GUINT64_CONSTANT(4) << 30);
        }
        lat = tree_path_lat(&j.params, nodes[i], 8, CS_PROTO_SIMPLE);
        vol = 2.0 * 7 / 8 * (double)S / (port * cs_params_get(&j.params, CS_P_PROTO_EFF_SIMPLE));
        dataflow_check(&j, S, CS_ALGO_TREE, CS_PROTO_SIMPLE, launch + MAX(lat, vol));
        fix_clear(&j);
    }
}

/* NVLS all-reduce on one DGX H100 (NCCL's pick from 4 MiB): each GPU's
 * NVSwitch reduction and multicast of its slice, the multicast after the
 * reduction, the reduction of unit u after the multicasts of unit u - 8
 * (slot reuse). Its NVLink ports carry S (1 + 1/8) each way at
 * eff.nvls.sm90: the time exceeds that volume plus the latency of the
 * last transfer (lat.sync.simple), launch and the once-per-call NVLS
 * latency. */
static void test_nvls(void)
{
    job_fix_t j;
    fix_init(&j, dgx_h100(1), "NVLS", NULL);
    const cs_params_t *p = &j.params;
    static const guint64 sizes[] = { G_GUINT64_CONSTANT(4) << 20, G_GUINT64_CONSTANT(256) << 20 };
    for (gsize i = 0; i < G_N_ELEMENTS(sizes); i++) {
        double vol = 9.0 / 8 * (double)sizes[i] / (450e9 * cs_params_get(p, CS_P_EFF_NVLS_SM90));
        double fixed = (cs_params_get(p, CS_P_LAT_LAUNCH) + cs_params_get(p, CS_P_LAT_NVLS) +
                        cs_params_get(p, CS_P_LAT_SYNC_SIMPLE)) * 1e-6;
        dataflow_check(&j, sizes[i], CS_ALGO_NVLS, CS_PROTO_SIMPLE, vol + fixed);
    }
    fix_clear(&j);
}

/* NVLSTree on two DGX H100 (NCCL's pick from 4 MiB on 2 nodes): NVLS
 * in each node, and per GPU a tree edge to the other node's GPU of the
 * same local index, through the NIC nearest to it. Floor: launch, NVLS
 * latency, and the longer of a unit's path (its reduction, the network
 * edge up and back: one tree level each way on 2 nodes, its multicast)
 * and the NVLink ports' volume as in NVLS plus one step's latency. */
static void test_nvls_tree(void)
{
    job_fix_t j;
    fix_init(&j, dgx_h100(2), NULL, NULL);
    const cs_params_t *p = &j.params;
    double sync = cs_params_get(p, CS_P_LAT_SYNC_SIMPLE);
    double net = cs_params_get(p, CS_P_LAT_HOP_NET) + sync + cs_params_get(p, CS_P_LAT_NET_SIMPLE);
    double fixed = (cs_params_get(p, CS_P_LAT_LAUNCH) + cs_params_get(p, CS_P_LAT_NVLS)) * 1e-6;
    double path = (2 * sync + 2 * net) * 1e-6;
    static const guint64 sizes[] = { G_GUINT64_CONSTANT(16) << 20, G_GUINT64_CONSTANT(256) << 20 };
    for (gsize i = 0; i < G_N_ELEMENTS(sizes); i++) {
        double vol = 9.0 / 8 * (double)sizes[i] / (450e9 * cs_params_get(p, CS_P_EFF_NVLS_SM90)) + sync * 1e-6;
        dataflow_check(&j, sizes[i], CS_ALGO_NVLS_TREE, CS_PROTO_SIMPLE, fixed + MAX(path, vol));
    }
    fix_clear(&j);
}

/* GPU memory made the bottleneck (eff.mem 0.01: about 34 GB/s per H100):
 * Tree flows pass each unit 2 (copy) or 3 (reduce) times through the
 * sender's memory, so the coefficients differ on one resource, the
 * flows of one GPU run at different speeds and the credits bind. */
static void test_tree_memory(void)
{
    static const int nodes[] = { 1, 2 };
    for (gsize i = 0; i < G_N_ELEMENTS(nodes); i++) {
        job_fix_t j;
        fix_init(&j, dgx_h100(nodes[i]), "Tree", "Simple");
        j.params.v[CS_P_EFF_MEM] = 0.01;
        dataflow_check(&j, G_GUINT64_CONSTANT(64) << 20, CS_ALGO_TREE, CS_PROTO_SIMPLE, 0);
        fix_clear(&j);
    }
}

/* A long-haul network (lat.hop.net 50 us) under Tree LL128 at 16 MiB on
 * 2 DGX H100: a tree edge's latency exceeds the time to send 8 units, so
 * the 8-slot credit paces the senders (ignoring it makes SimGrid 9.7%
 * faster); both engines agree. */
static void test_tree_credit(void)
{
    job_fix_t j;
    fix_init(&j, dgx_h100(2), "Tree", "LL128");
    j.params.v[CS_P_LAT_HOP_NET] = 50;
    dataflow_check(&j, G_GUINT64_CONSTANT(16) << 20, CS_ALGO_TREE, CS_PROTO_LL128, 0);
    fix_clear(&j);
}

/* The platform file says what SimGrid was given: the CM02 routes of the
 * oracle use one NIC link per direction, at its bandwidth. */
/* SendRecv and AlltoAll: both engines run the same point-to-point flows
 * (cs_program.h), with the batch waits where a channel runs two batches
 * (one p2p channel, 16 ranks); within 1%. */
static void test_p2p(void)
{
    static const struct { int nodes; cs_coll_t coll; guint64 bytes; const char *max_nch; } cases[] = {
        { 1, CS_COLL_ALLTOALL, G_GUINT64_CONSTANT(64) << 20, NULL },
        { 1, CS_COLL_SENDRECV, G_GUINT64_CONSTANT(1) << 20, NULL },
        { 2, CS_COLL_SENDRECV, G_GUINT64_CONSTANT(16) << 20, NULL },
        { 2, CS_COLL_ALLTOALL, G_GUINT64_CONSTANT(16) << 20, "1" },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        job_fix_t j;
        GError *err = NULL;
        j.topo = dgx_h100(cases[i].nodes);
        g_autoptr(cs_nccl_env_t) env = cs_nccl_env_new();
        if (cases[i].max_nch != NULL)
            cs_nccl_env_set(env, "NCCL_MAX_P2P_NCHANNELS", cases[i].max_nch, "test");
        j.comm = cs_comm_new(j.topo, env, &err);
        g_assert_no_error(err);
        cs_params_init_defaults(&j.params);
        coll = cases[i].coll;
        char what[96];
        g_snprintf(what, sizeof what, "%s %d node(s) %" G_GUINT64_FORMAT " B%s", cs_coll_name(coll),
                   cases[i].nodes, cases[i].bytes, cases[i].max_nch != NULL ? ", one p2p channel" : "");
        cross_check(what, &j, cases[i].bytes, NULL, NULL);
        coll = CS_COLL_ALLREDUCE;
        fix_clear(&j);
    }
}

static void test_platform_file(void)
{
    job_fix_t j;
    fix_init(&j, one_gpu_nodes(2, NULL, 1, 0), "Ring", "Simple");
    params_bandwidth_only(&j.params);
    g_autofree char *dir = g_dir_make_tmp("test-simgrid-XXXXXX", NULL);
    g_assert_nonnull(dir);
    g_autofree char *path = g_build_filename(dir, "platform.xml", NULL);
    simgrid_time(&j, G_GUINT64_CONSTANT(1) << 20, path, NULL);
    g_autofree char *xml = NULL;
    g_assert_true(g_file_get_contents(path, &xml, NULL, NULL));
    g_assert_nonnull(strstr(xml, "bandwidth=\"25000000000Bps\" latency=\"0s\"/><!-- n0.nic0 -&gt; leaf0 (net)"));
    g_assert_nonnull(strstr(xml, "<!-- leaf0 -&gt; n1.nic0 (net)"));
    g_assert_nonnull(strstr(xml, "dst=\"sink\""));
    g_remove(path);
    g_rmdir(dir);
    fix_clear(&j);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/simgrid/oracle", test_oracle);
    g_test_add_func("/simgrid/fixed-costs", test_fixed_costs);
    g_test_add_func("/simgrid/platform-file", test_platform_file);
    g_test_add_func("/simgrid/cross/incast", test_incast);
    g_test_add_func("/simgrid/cross/shared-spine", test_shared_spine);
    g_test_add_func("/simgrid/cross/fat-tree", test_fat_tree);
    g_test_add_func("/simgrid/cross/chains", test_chains);
    g_test_add_func("/simgrid/cross/tree", test_tree);
    g_test_add_func("/simgrid/cross/tree-memory", test_tree_memory);
    g_test_add_func("/simgrid/cross/tree-credit", test_tree_credit);
    g_test_add_func("/simgrid/cross/nvls", test_nvls);
    g_test_add_func("/simgrid/cross/nvls-tree", test_nvls_tree);
    g_test_add_func("/simgrid/cross/p2p", test_p2p);
    return g_test_run();
}
