/* NCCL's decisions on small hand-built topologies. Expected values are
 * derived by hand from the NCCL v2.28.9 rules in reference nccl-model.md
 * (search speeds, ncclTopoDupChannels, ncclTopoPostset, ncclTopoTuneModel);
 * each test says how. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "models/cs_decide.h"
#include "models/cs_hw.h"
#include "models/cs_presets.h"

#define NDR_BW (400e9 / 8)   /* bytes/s: NCCL sees 400000 Mb/s = 50 GB/s */

/* ---- topology builders --------------------------------------------------- */

/* Adds a device named "n<node>.<what><i>". */
static int dev(cs_topo_t *t, cs_dev_kind_t kind, int node, const char *what, int i)
{
    char name[64];
    g_snprintf(name, sizeof name, "n%d.%s%d", node, what, i);
    cs_device_t d;
    memset(&d, 0, sizeof d);
    d.kind = kind;
    d.name = name;
    d.node = node;
    d.local = -1;
    d.rank = -1;
    d.socket = -1;
    return cs_topo_add_device(t, &d);
}

static void pci(cs_topo_t *t, int a, int b, int gen)
{
    int l = cs_topo_add_link(t, a, b, CS_LINK_PCI, cs_pcie_bw(gen, 16), 100e-9, 0);
    int r = t->links[l].reverse;
    t->links[l].pcie_gen = t->links[r].pcie_gen = gen;
    t->links[l].pcie_width = t->links[r].pcie_width = 16;
}

static void nvl(cs_topo_t *t, int a, int b, int count, const cs_gpu_model_t *m)
{
    int l = cs_topo_add_link(t, a, b, CS_LINK_NVL, count * m->nvlink_bw, 100e-9, 0);
    t->links[l].count = t->links[t->links[l].reverse].count = count;
}

/* A DGX H100-like node: Intel CPU; per GPU a PCIe Gen5 switch carrying the
 * GPU and (optionally) an NDR NIC; all GPUs on one NVSwitch with 18
 * NVLinks each. Returns the NIC device indices through nics[]. */
static void hopper_node(cs_topo_t *t, int node, gboolean with_nics, int *nics)
{
    const cs_gpu_model_t *m = cs_gpu_model_find("h100-sxm");
    g_assert_nonnull(m);
    int cpu = dev(t, CS_DEV_CPU, node, "cpu", 0);
    t->devs[cpu].vendor = CS_CPU_INTEL;
    t->devs[cpu].socket = 0;
    int nvs = dev(t, CS_DEV_NVSWITCH, node, "nvs", 0);
    for (int i = 0; i < 8; i++) {
        int sw = dev(t, CS_DEV_PCISW, node, "sw", i);
        int g = dev(t, CS_DEV_GPU, node, "gpu", i);
        t->devs[g].gpu = m;
        t->devs[g].local = i;
        t->devs[g].gdr = TRUE;
        pci(t, cpu, sw, 5);
        pci(t, sw, g, 5);
        nvl(t, g, nvs, 18, m);
        if (with_nics) {
            int n = dev(t, CS_DEV_NIC, node, "nic", i);
            cs_device_t *d = &t->devs[n];
            d->local = i;
            d->nic_kind = CS_NIC_IB;
            d->nic_bw = NDR_BW;
            d->nic_ports = 1;
            d->gdr = TRUE;
            d->ifname = g_strdup_printf("mlx5_%d", i);
            pci(t, sw, n, 5);
            nics[i] = n;
        }
    }
}

static cs_topo_t *hopper(int nodes)
{
    cs_topo_t *t = cs_topo_new("test:hopper");
    int nics[64][8];
    for (int n = 0; n < nodes; n++)
        hopper_node(t, n, nodes > 1, nics[n]);
    if (nodes > 1) {
        /* one rail switch per NIC index */
        for (int i = 0; i < 8; i++) {
            int sw = dev(t, CS_DEV_SWITCH, -1, "leaf", i);
            for (int n = 0; n < nodes; n++)
                cs_topo_add_link(t, nics[n][i], sw, CS_LINK_NET, NDR_BW, 1e-6, 0);
        }
    }
    g_autoptr(GError) err = NULL;
    g_assert_true(cs_topo_finish(t, &err));
    return t;
}

/* Two GeForce RTX 4090 under one PCIe Gen4 switch (no P2P in the driver,
 * unless p2p_force = 1: a patched driver). */
static cs_topo_t *consumer_pair(int p2p_force)
{
    const cs_gpu_model_t *m = cs_gpu_model_find("rtx4090");
    g_assert_nonnull(m);
    g_assert_false(m->p2p);
    cs_topo_t *t = cs_topo_new("test:consumer");
    int cpu = dev(t, CS_DEV_CPU, 0, "cpu", 0);
    t->devs[cpu].vendor = CS_CPU_INTEL;
    t->devs[cpu].socket = 0;
    int sw = dev(t, CS_DEV_PCISW, 0, "sw", 0);
    pci(t, cpu, sw, 4);
    for (int i = 0; i < 2; i++) {
        int g = dev(t, CS_DEV_GPU, 0, "gpu", i);
        t->devs[g].gpu = m;
        t->devs[g].local = i;
        t->devs[g].p2p_force = p2p_force;
        pci(t, sw, g, 4);
    }
    g_autoptr(GError) err = NULL;
    g_assert_true(cs_topo_finish(t, &err));
    return t;
}

static cs_comm_t *comm_with(const cs_topo_t *t, const char *const *kv)
{
    g_autoptr(cs_nccl_env_t) e = cs_nccl_env_new();
    for (int i = 0; kv != NULL && kv[i] != NULL; i += 2)
        cs_nccl_env_set(e, kv[i], kv[i + 1], "test.ini:7");
    g_autoptr(GError) err = NULL;
    cs_comm_t *c = cs_comm_new(t, e, &err);
    if (c == NULL)
        g_error("cs_comm_new: %s", err->message);
    return c;
}

static void decide(const cs_comm_t *c, cs_coll_t coll, guint64 bytes, cs_decision_t *d)
{
    g_autoptr(GError) err = NULL;
    if (!cs_comm_decide(c, coll, CS_DTYPE_FLOAT, bytes, d, &err))
        g_error("cs_comm_decide: %s", err->message);
}

static void assert_ring_permutation(const cs_comm_info_t *in)
{
    g_autofree gboolean *seen = g_new0(gboolean, in->nranks);
    for (int i = 0; i < in->nranks; i++) {
        int r = in->ring_order[i];
        g_assert_true(r >= 0 && r < in->nranks && !seen[r]);
        seen[r] = TRUE;
    }
}

/* ---- one NVSwitch node ---------------------------------------------------- */

/* Ring search (sm90 intra speeds 60,50,40,...): GPU<->NVS carries
 * 18 x 20.6 = 370.8 GB/s; at 60 six channels fit (360), no lower speed
 * beats 360; ncclTopoDupChannels (bw 60 >= 25) -> 12 x 30. Tree gets 12.
 * Postset doubles to 24. NVLS: 8 heads, each link carries 7 + 2 x speed,
 * 9 x 40 = 360 <= 370.8 at 40; pass 2 raises bwInter to 60. */
static void test_nvswitch_graphs(void)
{
    g_autoptr(cs_topo_t) t = hopper(1);
    g_autoptr(cs_comm_t) c = comm_with(t, NULL);
    const cs_comm_info_t *in = cs_comm_info(c);
    g_assert_cmpint(in->nranks, ==, 8);
    g_assert_cmpint(in->nnodes, ==, 1);
    g_assert_cmpint(in->cc, ==, 90);
    g_assert_true(in->nvswitch);
    g_assert_cmpint(in->ring_nch, ==, 12);
    g_assert_cmpint(in->tree_nch, ==, 12);
    g_assert_cmpfloat_with_epsilon(in->bw_intra, 30.0, 1e-9);
    g_assert_cmpint(in->comm_nch, ==, 24);
    g_assert_cmpint(in->nvls_nch, ==, 8);
    g_assert_true(in->nvls_supported);
    g_assert_false(in->nvls_tree_supported);
    g_assert_cmpint(in->intra_transport, ==, CS_XPORT_P2P_NVL);
    g_assert_cmpint(in->type_intra, ==, CS_PATH_NVL);
    for (int i = 0; i < 8; i++)
        g_assert_cmpint(in->ring_order[i], ==, i);   /* forced PCI order first */
    g_autofree char *sum = cs_comm_transport_summary(c);
    g_assert_cmpstr(sum, ==, "P2P/NVL intra");
}

/* Ring LL: min(llMaxBw 141, 360 x .5) = 141 -> algbw x 8/14 = 80.571;
 * latency 6.6 + 14 x 0.6 = 15.0. Tree LL: 6.8 + 2 x 7 x 0.6 = 15.2. NVLS
 * 25. So at 8 B Ring/LL; threads: 8 B < nc*512*64 trims to 1 channel and
 * 64 threads, raised to the 3-warp minimum 96. */
static void test_nvswitch_small(void)
{
    g_autoptr(cs_topo_t) t = hopper(1);
    g_autoptr(cs_comm_t) c = comm_with(t, NULL);
    cs_decision_t d;
    decide(c, CS_COLL_ALLREDUCE, 8, &d);
    g_assert_cmpint(d.algo, ==, CS_ALGO_RING);
    g_assert_cmpint(d.proto, ==, CS_PROTO_LL);
    g_assert_cmpint(d.nchannels, ==, 1);
    g_assert_cmpint(d.nthreads, ==, 96);
    g_assert_cmpfloat_with_epsilon(d.nccl_lat_us, 15.0, 1e-4);
    g_assert_cmpfloat_with_epsilon(d.nccl_bw, 141.0 * 8 / 14, 1e-3);
    g_assert_cmpfloat_with_epsilon(d.table_us[CS_ALGO_TREE][CS_PROTO_LL], 15.2 + 8 / (1000 * 360 * .92 / 3.8 * .5), 1e-3);
    g_assert_cmpfloat_with_epsilon(d.table_us[CS_ALGO_NVLS][CS_PROTO_SIMPLE], 25.0 + 8 / (1000.0 * 272.0), 1e-3);
    /* NVLS has Simple only; NVLSTree and CollNet are off on one node */
    g_assert_cmpfloat(d.table_us[CS_ALGO_NVLS][CS_PROTO_LL], ==, -1);
    g_assert_cmpfloat(d.table_us[CS_ALGO_NVLS_TREE][CS_PROTO_SIMPLE], ==, -1);
    g_assert_cmpfloat(d.table_us[CS_ALGO_COLLNET_DIRECT][CS_PROTO_SIMPLE], ==, -1);
    g_assert_cmpfloat(d.table_us[CS_ALGO_PAT][CS_PROTO_SIMPLE], ==, -1);
    /* LL128 on: typeIntra NVL <= NVB, typeInter PIX, sm90 */
    g_assert_cmpfloat(d.table_us[CS_ALGO_RING][CS_PROTO_LL128], >, 0);
}

/* 1 GiB: NVLS bw = 40 x .85 x 7/8 x 2 = 59.5 per channel (< bwInter 60),
 * x 8 channels = 476 busBw, x 8/14 = 272 algbw; time = 25 + 2^30/272000.
 * Ring Simple = 56 + 2^30/205714 loses. NVLS uses the 16 NVLS channels. */
static void test_nvswitch_large(void)
{
    g_autoptr(cs_topo_t) t = hopper(1);
    g_autoptr(cs_comm_t) c = comm_with(t, NULL);
    cs_decision_t d;
    guint64 n = G_GUINT64_CONSTANT(1) << 30;
    decide(c, CS_COLL_ALLREDUCE, n, &d);
    g_assert_cmpint(d.algo, ==, CS_ALGO_NVLS);
    g_assert_cmpint(d.proto, ==, CS_PROTO_SIMPLE);
    g_assert_cmpint(d.nchannels, ==, 16);
    g_assert_cmpint(d.nthreads, ==, 640);
    g_assert_cmpfloat_with_epsilon(d.nccl_bw, 272.0, 1e-2);
    g_assert_cmpfloat_with_epsilon(d.nccl_time_us, 25.0 + n / 272000.0, 0.5);
    g_assert_cmpfloat_with_epsilon(d.table_us[CS_ALGO_RING][CS_PROTO_SIMPLE],
                                   56.0 + n / (1000 * 360.0 * 8 / 14), 0.5);
    g_assert_cmpuint(d.chunk_bytes, ==, 131072);   /* NCCL_NVLS_CHUNKSIZE */

    /* NCCL_ALGO=Ring: Ring Simple, 24 channels, 512+32 threads, 2 MiB chunks */
    const char *kv[] = { "NCCL_ALGO", "Ring", NULL };
    g_autoptr(cs_comm_t) r = comm_with(t, kv);
    decide(r, CS_COLL_ALLREDUCE, n, &d);
    g_assert_cmpint(d.algo, ==, CS_ALGO_RING);
    g_assert_cmpint(d.proto, ==, CS_PROTO_SIMPLE);
    g_assert_cmpint(d.nchannels, ==, 24);
    g_assert_cmpint(d.nthreads, ==, 544);
    g_assert_cmpuint(d.chunk_bytes, ==, 2u << 20);
    g_assert_cmpfloat(d.table_us[CS_ALGO_NVLS][CS_PROTO_SIMPLE], ==, -1);
    g_assert_cmpfloat(d.table_us[CS_ALGO_TREE][CS_PROTO_LL], ==, -1);
    decide(r, CS_COLL_ALLREDUCE, 8, &d);
    g_assert_cmpint(d.algo, ==, CS_ALGO_RING);
    g_assert_cmpint(d.proto, ==, CS_PROTO_LL);

    /* int8 has no NVLS reduction: Ring or Tree */
    g_autoptr(GError) err = NULL;
    g_assert_true(cs_comm_decide(c, CS_COLL_ALLREDUCE, CS_DTYPE_INT8, n, &d, &err));
    g_assert_cmpint(d.algo, !=, CS_ALGO_NVLS);
    /* nor a product, an average (a sum with a scaling), or min/max of
     * float; min/max of half it has (device.h ncclNvlsSupported) */
    static const struct { cs_dtype_t t; cs_redop_t op; gboolean nvls; } ops[] = {
        { CS_DTYPE_FLOAT, CS_REDOP_SUM, TRUE }, { CS_DTYPE_FLOAT, CS_REDOP_PROD, FALSE },
        { CS_DTYPE_FLOAT, CS_REDOP_AVG, FALSE }, { CS_DTYPE_FLOAT, CS_REDOP_MAX, FALSE },
        { CS_DTYPE_HALF, CS_REDOP_MIN, TRUE }, { CS_DTYPE_HALF, CS_REDOP_AVG, FALSE },
        { CS_DTYPE_INT32, CS_REDOP_MAX, TRUE },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(ops); i++) {
        g_assert_true(cs_comm_decide_op(c, CS_COLL_ALLREDUCE, ops[i].t, ops[i].op, n, &d, &err));
        g_assert_cmpint(d.algo == CS_ALGO_NVLS, ==, ops[i].nvls);
    }
    /* AllGather on one node may use NVLS; broadcast is Ring only */
    decide(c, CS_COLL_BROADCAST, n, &d);
    g_assert_cmpint(d.algo, ==, CS_ALGO_RING);
}

/* NCCL_P2P_DISABLE=1: every pair goes through the CPU (SHM), paths are
 * PHB over PCIe Gen5 (48 GB/s) with Intel's 6/5 overhead: 40 x 1.2 = 48
 * fits once -> 1 x 40, duplicated to 2 x 20 (40 >= 25, only 1 channel).
 * typeIntra PHB disables LL128. */
static void test_p2p_disable(void)
{
    g_autoptr(cs_topo_t) t = hopper(1);
    const char *kv[] = { "NCCL_P2P_DISABLE", "1", NULL };
    g_autoptr(cs_comm_t) c = comm_with(t, kv);
    const cs_comm_info_t *in = cs_comm_info(c);
    g_assert_cmpint(in->intra_transport, ==, CS_XPORT_SHM);
    g_assert_cmpint(in->type_intra, ==, CS_PATH_PHB);
    g_assert_cmpint(in->ring_nch, ==, 2);
    g_assert_cmpfloat_with_epsilon(in->bw_intra, 20.0, 1e-9);
    g_assert_cmpint(in->comm_nch, ==, 4);
    cs_link_choice_t ch;
    cs_comm_pair(c, 0, 5, &ch);
    g_assert_cmpint(ch.transport, ==, CS_XPORT_SHM);
    cs_decision_t d;
    decide(c, CS_COLL_ALLREDUCE, 1 << 20, &d);
    g_assert_cmpfloat(d.table_us[CS_ALGO_RING][CS_PROTO_LL128], ==, -1);
    g_assert_cmpfloat(d.table_us[CS_ALGO_TREE][CS_PROTO_LL128], ==, -1);
}

/* ---- two nodes with 8 NDR NICs -------------------------------------------- */

/* Inter speeds (sm90) start at 48 = min(PCIe Gen5 48, NIC 50). With
 * crossNic 0 a ring cannot come back to its NIC through PIX; with PXN it
 * costs 8 NVLink crossings per channel (7 channels); NCCL_CROSS_NIC=2 rings
 * enter on one NIC and leave on the neighbour's: 8 channels x 48, and
 * 8 x 48 >= 370.8 ends the search. No dup (cc > 80, bw < 50, nch > 4).
 * Postset: 16 (the sm90 multi-node doubling needs nch < 16). */
static void test_two_nodes(void)
{
    g_autoptr(cs_topo_t) t = hopper(2);
    g_autoptr(cs_comm_t) c = comm_with(t, NULL);
    const cs_comm_info_t *in = cs_comm_info(c);
    g_assert_cmpint(in->nnodes, ==, 2);
    g_assert_cmpint(in->ppn, ==, 8);
    g_assert_cmpint(in->ring_nch, ==, 8);
    g_assert_cmpfloat_with_epsilon(in->bw_intra, 48.0, 1e-9);
    g_assert_cmpfloat_with_epsilon(in->bw_inter, 48.0, 1e-9);
    g_assert_cmpint(in->type_inter, ==, CS_PATH_PIX);
    g_assert_cmpint(in->comm_nch, ==, 16);
    g_assert_cmpint(in->inter_transport, ==, CS_XPORT_NET_IB);
    g_assert_true(in->gdr);
    g_assert_cmpint(in->nics_used, ==, 8);
    g_assert_cmpfloat_with_epsilon(in->nic_bw, NDR_BW, 1);
    g_assert_cmpstr(in->net_device, ==, "mlx5_0");
    g_assert_true(in->nvls_supported);
    g_assert_true(in->nvls_tree_supported);
    assert_ring_permutation(in);
    /* node 0's ring ends on the GPU whose NIC node 1's ring enters by */
    g_assert_cmpint(in->ring_order[7] + 8, ==, in->ring_order[8]);
    cs_link_choice_t ch;
    cs_comm_pair(c, 3, 11, &ch);
    g_assert_cmpint(ch.transport, ==, CS_XPORT_NET_IB);
    g_assert_true(ch.gdr);
    cs_comm_pair(c, 3, 4, &ch);
    g_assert_cmpint(ch.transport, ==, CS_XPORT_P2P_NVL);
    g_autofree char *sum = cs_comm_transport_summary(c);
    g_assert_true(g_str_has_prefix(sum, "P2P/NVL intra, NET/IB GDR inter (8 NICs"));
}

/* 8 B: Tree LL = 6.8 + 2 x (7 x 0.6 + log2(2) x 5.0) = 25.2 us; Ring LL =
 * 6.6 + 28 x max(0.6, 1.0) + 2 x 2.7 = 40.0. 1 GiB: NVLSTree, bw =
 * min(40 x .85 x 7/8 x 2, 48 x 2, 57.7) = 57.7 x 8 = 461.6, x 16/30;
 * latency 25 + 2 x 20.9 = 66.8. Ring Simple (forced): 8 x 48 x 16/30 =
 * 204.8; latency (8.4 + 28 x 3.4 + 2 x 14) x 1.4. */
static void test_two_nodes_decisions(void)
{
    g_autoptr(cs_topo_t) t = hopper(2);
    g_autoptr(cs_comm_t) c = comm_with(t, NULL);
    cs_decision_t d;
    guint64 n = G_GUINT64_CONSTANT(1) << 30;
    decide(c, CS_COLL_ALLREDUCE, 8, &d);
    g_assert_cmpint(d.algo, ==, CS_ALGO_TREE);
    g_assert_cmpint(d.proto, ==, CS_PROTO_LL);
    g_assert_cmpfloat_with_epsilon(d.nccl_lat_us, 25.2, 1e-4);
    g_assert_cmpfloat_with_epsilon(d.table_us[CS_ALGO_RING][CS_PROTO_LL], 40.0 + 8 / (1000 * 45.0 * 16 / 30), 1e-3);
    g_assert_cmpfloat(d.table_us[CS_ALGO_NVLS][CS_PROTO_SIMPLE], ==, -1);   /* needs CollNet */

    decide(c, CS_COLL_ALLREDUCE, n, &d);
    g_assert_cmpint(d.algo, ==, CS_ALGO_NVLS_TREE);
    g_assert_cmpint(d.proto, ==, CS_PROTO_SIMPLE);
    g_assert_cmpfloat_with_epsilon(d.nccl_bw, 57.7 * 8 * 16 / 30, 1e-2);
    g_assert_cmpfloat_with_epsilon(d.nccl_lat_us, 66.8, 1e-3);
    g_assert_cmpint(d.nchannels, ==, 16);

    const char *kv[] = { "NCCL_ALGO", "ring", NULL };
    g_autoptr(cs_comm_t) r = comm_with(t, kv);
    decide(r, CS_COLL_ALLREDUCE, n, &d);
    g_assert_cmpint(d.algo, ==, CS_ALGO_RING);
    g_assert_cmpint(d.proto, ==, CS_PROTO_SIMPLE);
    g_assert_cmpfloat_with_epsilon(d.nccl_bw, 204.8, 1e-3);
    g_assert_cmpfloat_with_epsilon(d.nccl_lat_us, (8.4 + 28 * 3.4 + 2 * 14) * 1.4, 1e-3);
    g_assert_cmpfloat_with_epsilon(d.nccl_time_us, (8.4 + 28 * 3.4 + 2 * 14) * 1.4 + n / 204800.0, 0.5);
    g_assert_cmpint(d.nchannels, ==, 16);
    /* below 64 B per channel and rank the 1.4 plateau factor is off */
    decide(r, CS_COLL_ALLREDUCE, 1024, &d);
    g_assert_cmpfloat_with_epsilon(d.table_us[CS_ALGO_RING][CS_PROTO_SIMPLE],
                                   8.4 + 28 * 3.4 + 2 * 14 + 1024 / 204800.0, 1e-3);
}

/* NCCL_IB_DISABLE=1: the Socket transport over the IPoIB interfaces, never
 * GDR, so the GPU->NIC paths go through the CPU (PHB) and LL128 is off. */
static void test_ib_disable(void)
{
    g_autoptr(cs_topo_t) t = hopper(2);
    const char *kv[] = { "NCCL_IB_DISABLE", "1", NULL };
    g_autoptr(cs_comm_t) c = comm_with(t, kv);
    const cs_comm_info_t *in = cs_comm_info(c);
    g_assert_cmpint(in->inter_transport, ==, CS_XPORT_NET_SOCKET);
    g_assert_false(in->gdr);
    g_assert_cmpint(in->type_inter, >=, CS_PATH_PHB);
    g_assert_true(g_str_has_prefix(in->net_device, "ib"));
    cs_link_choice_t ch;
    cs_comm_pair(c, 0, 8, &ch);
    g_assert_cmpint(ch.transport, ==, CS_XPORT_NET_SOCKET);
    g_assert_false(ch.gdr);
    cs_decision_t d;
    decide(c, CS_COLL_ALLREDUCE, 1 << 20, &d);
    g_assert_cmpfloat(d.table_us[CS_ALGO_RING][CS_PROTO_LL128], ==, -1);

    /* NCCL_NET=Socket with NCCL_SOCKET_IFNAME naming nothing: NCCL fails */
    const char *bad[] = { "NCCL_NET", "Socket", "NCCL_SOCKET_IFNAME", "eth", NULL };
    g_autoptr(cs_nccl_env_t) e = cs_nccl_env_new();
    for (int i = 0; bad[i]; i += 2)
        cs_nccl_env_set(e, bad[i], bad[i + 1], "--env");
    g_autoptr(GError) err = NULL;
    g_assert_null(cs_comm_new(t, e, &err));
    g_assert_true(strstr(err->message, "NCCL_SOCKET_IFNAME=eth matches no interface") != NULL);
}

/* NCCL_IB_HCA keeps a subset: "=mlx5_0" exact, "^mlx5_1" excludes. */
static void test_ib_hca(void)
{
    g_autoptr(cs_topo_t) t = hopper(2);
    const char *kv[] = { "NCCL_IB_HCA", "=mlx5_0,mlx5_1:1", NULL };
    g_autoptr(cs_comm_t) c = comm_with(t, kv);
    const cs_comm_info_t *in = cs_comm_info(c);
    g_assert_cmpint(in->inter_transport, ==, CS_XPORT_NET_IB);
    g_assert_cmpint(in->nics_used, <=, 2);
    /* 2 NICs of 50 GB/s: at most 2 x 48 GB/s per direction */
    g_assert_cmpfloat(in->ring_nch * in->bw_inter, <=, 2 * 50.0);

    const char *none[] = { "NCCL_IB_HCA", "mlx4", "NCCL_NET", "IB", NULL };
    g_autoptr(cs_nccl_env_t) e = cs_nccl_env_new();
    for (int i = 0; none[i]; i += 2)
        cs_nccl_env_set(e, none[i], none[i + 1], "--env");
    g_autoptr(GError) err = NULL;
    g_assert_null(cs_comm_new(t, e, &err));
    g_assert_true(strstr(err->message, "NCCL_NET=IB") != NULL);
}

/* ---- consumer PCIe pair -------------------------------------------------- */

/* No P2P: SHM through the CPU. Path GPU->sw->CPU->sw->GPU is PHB at 24 GB/s
 * (Gen4), and both directions cross the same sw<->CPU link with Intel's
 * 6/5: 2 x 1.2 x S <= 24 -> S = 10 (sm<90 list 40,30,20,18,15,12,10). One
 * channel, no dup (10 < 25), comm 2. LL128 off (PHB > NVB). 8 B: Ring LL
 * 6.6 + 2 x 1.0 = 8.6 beats Tree LL 6.8 + 2 x 1.0 = 8.8. 1 GiB: Ring
 * Simple, 10 x 2/2 GB/s; 256 threads (bw x nch <= 12) + 32. */
static void test_consumer_shm(void)
{
    g_autoptr(cs_topo_t) t = consumer_pair(0);
    g_autoptr(cs_comm_t) c = comm_with(t, NULL);
    const cs_comm_info_t *in = cs_comm_info(c);
    g_assert_cmpint(in->intra_transport, ==, CS_XPORT_SHM);
    g_assert_cmpint(in->ring_nch, ==, 1);
    g_assert_cmpfloat_with_epsilon(in->bw_intra, 10.0, 1e-9);
    g_assert_cmpint(in->comm_nch, ==, 2);
    g_assert_false(in->nvls_supported);
    cs_decision_t d;
    decide(c, CS_COLL_ALLREDUCE, 8, &d);
    g_assert_cmpint(d.algo, ==, CS_ALGO_RING);
    g_assert_cmpint(d.proto, ==, CS_PROTO_LL);
    g_assert_cmpfloat_with_epsilon(d.nccl_lat_us, 8.6, 1e-4);
    /* The tree (a chain 0 -> 1) crosses the sw<->CPU link once per
     * channel: 1.2 x 20 <= 24, so the tree graph runs at 20:
     * Tree LL = min(20 x .92, 24) / 3.8 x .5 GB/s. */
    g_assert_cmpfloat_with_epsilon(d.table_us[CS_ALGO_TREE][CS_PROTO_LL], 8.8 + 8 / (1000 * 20 * .92 / 3.8 * .5), 1e-3);
    for (int a = 0; a < CS_ALGO_COUNT; a++)
        g_assert_cmpfloat(d.table_us[a][CS_PROTO_LL128], ==, -1);
    decide(c, CS_COLL_ALLREDUCE, G_GUINT64_CONSTANT(1) << 30, &d);
    g_assert_cmpint(d.algo, ==, CS_ALGO_RING);
    g_assert_cmpint(d.proto, ==, CS_PROTO_SIMPLE);
    g_assert_cmpfloat_with_epsilon(d.nccl_bw, 10.0, 1e-6);
    g_assert_cmpint(d.nthreads, ==, 288);

    /* The user can force LL128 on (NCCL_PROTO=LL128 bypasses the default rule). */
    const char *kv[] = { "NCCL_PROTO", "LL128", NULL };
    g_autoptr(cs_comm_t) f = comm_with(t, kv);
    decide(f, CS_COLL_ALLREDUCE, 1 << 20, &d);
    g_assert_cmpint(d.proto, ==, CS_PROTO_LL128);

}

/* The node allows PCIe P2P (patched driver): P2P/PCI over the switch, PIX,
 * 24 GB/s each way per GPU link: 20 fits once, 12 twice (24 >= totalBw 24
 * ends the search): 2 x 12. */
static void test_consumer_p2p_forced(void)
{
    g_autoptr(cs_topo_t) t = consumer_pair(1);
    g_autoptr(cs_comm_t) c = comm_with(t, NULL);
    const cs_comm_info_t *in = cs_comm_info(c);
    g_assert_cmpint(in->intra_transport, ==, CS_XPORT_P2P_PCI);
    g_assert_cmpint(in->type_intra, ==, CS_PATH_PIX);
    g_assert_cmpint(in->ring_nch, ==, 2);
    g_assert_cmpfloat_with_epsilon(in->bw_intra, 12.0, 1e-9);
    /* NCCL_P2P_LEVEL=LOC turns it back into SHM */
    const char *kv[] = { "NCCL_P2P_LEVEL", "LOC", NULL };
    g_autoptr(cs_comm_t) l = comm_with(t, kv);
    g_assert_cmpint(cs_comm_info(l)->intra_transport, ==, CS_XPORT_SHM);
}

static void test_single_rank(void)
{
    const cs_gpu_model_t *m = cs_gpu_model_find("h100-sxm");
    g_autoptr(cs_topo_t) t = cs_topo_new("test:one");
    int cpu = dev(t, CS_DEV_CPU, 0, "cpu", 0);
    t->devs[cpu].vendor = CS_CPU_AMD;
    int g = dev(t, CS_DEV_GPU, 0, "gpu", 0);
    t->devs[g].gpu = m;
    t->devs[g].local = 0;
    pci(t, cpu, g, 5);
    g_autoptr(GError) err = NULL;
    g_assert_true(cs_topo_finish(t, &err));
    g_autoptr(cs_comm_t) c = comm_with(t, NULL);
    cs_decision_t d;
    decide(c, CS_COLL_ALLREDUCE, 1 << 20, &d);
    g_assert_cmpint(d.algo, ==, CS_ALGO_RING);
    g_assert_cmpint(d.proto, ==, CS_PROTO_SIMPLE);
    g_assert_cmpfloat(d.nccl_time_us, ==, 0);
    g_autofree char *sum = cs_comm_transport_summary(c);
    g_assert_cmpstr(sum, ==, "one rank (no transport)");
}

/* ---- errors ----------------------------------------------------------------- */

static void test_errors(void)
{
    g_autoptr(cs_topo_t) t = hopper(2);
    /* NVLS needs CollNet across nodes: nothing left for allreduce */
    const char *kv[] = { "NCCL_ALGO", "NVLS", NULL };
    g_autoptr(cs_comm_t) c = comm_with(t, kv);
    cs_decision_t d;
    g_autoptr(GError) err = NULL;
    g_assert_false(cs_comm_decide(c, CS_COLL_ALLREDUCE, CS_DTYPE_FLOAT, 1 << 20, &d, &err));
    g_assert_cmpstr(err->message, ==, "test.ini:7: NCCL_ALGO=NVLS: no algorithm allowed for "
                    "allreduce on this topology; expected one of Tree, Ring, NVLSTree");
    g_clear_error(&err);
    /* Broadcast is Ring only */
    const char *kv2[] = { "NCCL_ALGO", "Tree", NULL };
    g_autoptr(cs_comm_t) c2 = comm_with(t, kv2);
    g_assert_false(cs_comm_decide(c2, CS_COLL_BROADCAST, CS_DTYPE_FLOAT, 1 << 20, &d, &err));
    g_assert_true(strstr(err->message, "NCCL_ALGO=Tree: no algorithm allowed for broadcast") != NULL);
    g_assert_true(strstr(err->message, "expected one of Ring") != NULL);
    g_clear_error(&err);
    /* a bad value stops the communicator */
    g_autoptr(cs_nccl_env_t) e = cs_nccl_env_new();
    cs_nccl_env_set(e, "NCCL_PROTO", "Simpel", "scen.ini:3");
    g_assert_null(cs_comm_new(t, e, &err));
    g_assert_true(g_str_has_prefix(err->message, "scen.ini:3: NCCL_PROTO=Simpel: unknown protocol"));
}

/* ---- presets (H2's builders) ---------------------------------------------- */

static void test_preset_dgx_h100(void)
{
    if (!cs_preset_exists("dgx-h100")) {
        g_test_skip("no dgx-h100 preset");
        return;
    }
    for (int nodes = 1; nodes <= 2; nodes++) {
        cs_build_opts_t o;
        cs_build_opts_init(&o);
        o.nodes = nodes;
        g_autoptr(GError) err = NULL;
        g_autoptr(cs_topo_t) t = cs_preset_build("dgx-h100", &o, &err);
        g_assert_nonnull(t);
        g_autoptr(cs_comm_t) c = comm_with(t, NULL);
        const cs_comm_info_t *in = cs_comm_info(c);
        cs_decision_t d;
        decide(c, CS_COLL_ALLREDUCE, G_GUINT64_CONSTANT(1) << 30, &d);
        /* the preset is wired like hopper(): the same decisions */
        g_assert_cmpint(in->ring_nch, ==, nodes == 1 ? 12 : 8);
        g_assert_cmpint(in->comm_nch, ==, nodes == 1 ? 24 : 16);
        g_assert_cmpint(d.algo, ==, nodes == 1 ? CS_ALGO_NVLS : CS_ALGO_NVLS_TREE);
        assert_ring_permutation(in);
    }
}

/* GB200 NVL72 racks (issue 12 item 8; docs/model-analytic.md "NVL72
 * racks"): what NCCL runs there, from its source.
 * - One rack of 72, NVLS off: Ring. The search finds 8 rings at 90 GB/s
 *   (sm100 intra speeds; 18 NVLinks x 40 = 720, the GPU's total), the
 *   duplication (bw 90 >= 50) gives 16 x 45, the postset 32 channels.
 * - One rack with NVLS: 24 NVLS channels inside one NVLink domain
 *   (nvls.cc v2.27.3 NVLS_NCHANNELS_SM100_NVL), 32 heads (search.cc: the
 *   NVLS graph's maxChannels = min(NCCL_MAX_NVLS_ARITY 32, GPUs)).
 * - Two racks of 64 over RoCE: NVLSTree (NVLS across nodes needs SHARP) on
 *   32 channels (NVLS_NCHANNELS_SM100), 32 heads, chunk NCCL_NVLS_CHUNKSIZE
 *   128 KiB at 8 GiB (enqueue.cc calcCollChunking shrinks it only below
 *   4 x 32 x 32 chunks). */
static void test_preset_nvl72(void)
{
    if (!cs_preset_exists("gb200-nvl72")) {
        g_test_skip("no gb200-nvl72 preset");
        return;
    }
    const guint64 gib = G_GUINT64_CONSTANT(1) << 30;
    for (int nvls = 0; nvls <= 1; nvls++) {
        cs_build_opts_t o;
        cs_build_opts_init(&o);
        g_autoptr(GError) err = NULL;
        g_autoptr(cs_topo_t) t = cs_preset_build("gb200-nvl72", &o, &err);
        g_assert_nonnull(t);
        const char *off[] = { "NCCL_NVLS_ENABLE", "0", NULL };
        g_autoptr(cs_comm_t) c = comm_with(t, nvls ? NULL : off);
        const cs_comm_info_t *in = cs_comm_info(c);
        g_assert_cmpint(in->nranks, ==, 72);
        g_assert_cmpint(in->ring_nch, ==, 16);
        g_assert_cmpint(in->comm_nch, ==, 32);
        cs_decision_t d;
        decide(c, CS_COLL_ALLREDUCE, 4 * gib, &d);
        g_assert_cmpint(d.algo, ==, nvls ? CS_ALGO_NVLS : CS_ALGO_RING);
        g_assert_cmpint(d.proto, ==, CS_PROTO_SIMPLE);
        g_assert_cmpint(d.nchannels, ==, nvls ? 24 : 32);
        if (nvls)
            g_assert_cmpint(in->nvls_nch, ==, 32);
    }
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    o.nodes = 2;
    o.gpus = 64;
    o.nic = "roce-400g";
    g_autoptr(GError) err = NULL;
    g_autoptr(cs_topo_t) t = cs_preset_build("gb200-nvl72", &o, &err);
    g_assert_nonnull(t);
    g_autoptr(cs_comm_t) c = comm_with(t, NULL);
    const cs_comm_info_t *in = cs_comm_info(c);
    g_assert_cmpint(in->nranks, ==, 128);
    g_assert_cmpint(in->nvls_nch, ==, 32);
    cs_decision_t d;
    decide(c, CS_COLL_ALLREDUCE, 8 * gib, &d);
    g_assert_cmpint(d.algo, ==, CS_ALGO_NVLS_TREE);
    g_assert_cmpint(d.nchannels, ==, 32);
    g_assert_cmpint(d.chunk_bytes, ==, 128 * 1024);
}

/* The measured run's NCCL where its tuner differs from v2.28.9's: 2.29.2
 * and 2.29.3 lowered Blackwell's ring LL128 ceiling per channel (tuning.cc
 * perChMaxRingLL128Bws 2 x 36.7 -> 34.5 on one node; 40 from 2.29.7), so
 * a 16 MiB all-gather on 8 B200 turns from LL128 to Simple; Hopper keeps
 * its decision, and an unknown version is v2.28.9's. */
static void test_nccl_version_tuner(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(cs_topo_t) t = cs_preset_build("dgx-b200", NULL, &err);
    g_assert_nonnull(t);
    g_autoptr(cs_comm_t) c = comm_with(t, NULL);
    cs_decision_t d;
    decide(c, CS_COLL_ALLGATHER, 16u << 20, &d);
    g_assert_cmpint(d.algo, ==, CS_ALGO_RING);
    g_assert_cmpint(d.proto, ==, CS_PROTO_LL128);
    float ll128 = (float)d.table_us[CS_ALGO_RING][CS_PROTO_LL128];
    g_assert_cmpint(cs_comm_set_nccl_version(c, "2.29.3"), ==, 22903);
    decide(c, CS_COLL_ALLGATHER, 16u << 20, &d);
    g_assert_cmpint(d.proto, ==, CS_PROTO_SIMPLE);
    g_assert_cmpfloat(d.table_us[CS_ALGO_RING][CS_PROTO_LL128], >, ll128);
    g_assert_cmpint(cs_comm_set_nccl_version(c, "2.29.7"), ==, 22907);
    decide(c, CS_COLL_ALLGATHER, 16u << 20, &d);
    float v2297 = (float)d.table_us[CS_ALGO_RING][CS_PROTO_LL128];
    g_assert_cmpfloat(v2297, >, ll128);
    g_assert_cmpint(cs_comm_set_nccl_version(c, "2.28.9"), ==, 22809);
    decide(c, CS_COLL_ALLGATHER, 16u << 20, &d);
    g_assert_cmpint(d.proto, ==, CS_PROTO_LL128);
    g_assert_cmpfloat(fabs(d.table_us[CS_ALGO_RING][CS_PROTO_LL128] - ll128), <, 1e-3);

    /* two B200 nodes (x86 hosts): NVLSTree all-reduce takes the tree's
     * size correction from 2.29.2 (Simple: 0.9 at 256 and 512 MiB), so
     * its estimate grows; not before, and not on one node (no NVLSTree) */
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    o.nodes = 2;
    g_autoptr(cs_topo_t) t2 = cs_preset_build("dgx-b200", &o, &err);
    g_assert_nonnull(t2);
    g_autoptr(cs_comm_t) c2 = comm_with(t2, NULL);
    g_assert_false(cs_comm_nvls_tree_corrected(c2));
    static const guint64 nvls_sizes[] = { 256u << 20, 512u << 20 };
    for (gsize i = 0; i < G_N_ELEMENTS(nvls_sizes); i++) {
        decide(c2, CS_COLL_ALLREDUCE, nvls_sizes[i], &d);
        double t0 = d.table_us[CS_ALGO_NVLS_TREE][CS_PROTO_SIMPLE];
        g_assert_cmpfloat(t0, >, 0);
        g_assert_cmpint(cs_comm_set_nccl_version(c2, "2.29.3"), ==, 22903);
        g_assert_true(cs_comm_nvls_tree_corrected(c2));
        decide(c2, CS_COLL_ALLREDUCE, nvls_sizes[i], &d);
        g_assert_cmpfloat(d.table_us[CS_ALGO_NVLS_TREE][CS_PROTO_SIMPLE], >, t0 * 1.05);
        g_assert_cmpint(cs_comm_set_nccl_version(c2, "2.28.9"), ==, 22809);
        decide(c2, CS_COLL_ALLREDUCE, nvls_sizes[i], &d);
        g_assert_cmpfloat(fabs(d.table_us[CS_ALGO_NVLS_TREE][CS_PROTO_SIMPLE] - t0), <, 1e-3);
    }

    g_autoptr(cs_topo_t) h = cs_preset_build("dgx-h100", NULL, &err);
    g_autoptr(cs_comm_t) ch = comm_with(h, NULL);
    decide(ch, CS_COLL_ALLGATHER, 16u << 20, &d);
    double before = d.table_us[CS_ALGO_RING][CS_PROTO_LL128];
    g_assert_cmpint(cs_comm_set_nccl_version(ch, "2.29.3"), ==, 22903);
    decide(ch, CS_COLL_ALLGATHER, 16u << 20, &d);
    g_assert_cmpfloat(fabs(d.table_us[CS_ALGO_RING][CS_PROTO_LL128] - before), <, 1e-3);
}

/* Many identical nodes share one search; rings stay permutations and the
 * decision does not depend on the node count beyond the model's terms. */
static void test_many_nodes(void)
{
    g_autoptr(cs_topo_t) t = hopper(16);
    g_autoptr(cs_comm_t) c = comm_with(t, NULL);
    const cs_comm_info_t *in = cs_comm_info(c);
    g_assert_cmpint(in->nranks, ==, 128);
    g_assert_cmpint(in->nnodes, ==, 16);
    g_assert_cmpint(in->ring_nch, ==, 8);
    assert_ring_permutation(in);
    cs_decision_t d;
    decide(c, CS_COLL_ALLREDUCE, 8, &d);
    /* Tree LL: 6.8 + 2 x (7 x 0.6 + log2(16) x 5.0) = 55.2 */
    g_assert_cmpint(d.algo, ==, CS_ALGO_TREE);
    g_assert_cmpfloat_with_epsilon(d.nccl_lat_us, 55.2, 1e-3);
}

/* NCCL's network fallbacks reach the header through the environment's log
 * (issue #9: NCCL_IB_HCA matching nothing fell back to sockets without a
 * word; NCCL_IB_GID_INDEX=99 was silently accepted). */
static cs_topo_t *two_h100(const char *nic)
{
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    o.nodes = 2;
    o.nic = nic;
    g_autoptr(GError) err = NULL;
    cs_topo_t *t = cs_preset_build("dgx-h100", &o, &err);
    g_assert_no_error(err);
    return t;
}

static GPtrArray *warnings_with(const cs_topo_t *t, const char *name, const char *value)
{
    g_autoptr(cs_nccl_env_t) e = cs_nccl_env_new();
    cs_nccl_env_set(e, name, value, "s.ini:9");
    g_autoptr(GError) err = NULL;
    g_autoptr(cs_comm_t) c = cs_comm_new(t, e, &err);
    g_assert_no_error(err);
    GPtrArray *w = cs_nccl_env_warnings(e);
    /* a second communicator over the same settings logs nothing twice */
    g_autoptr(cs_comm_t) again = cs_comm_new(t, e, &err);
    g_autoptr(GPtrArray) w2 = cs_nccl_env_warnings(e);
    g_assert_cmpuint(w2->len, ==, w->len);
    return w;
}

static void test_fallback_warnings(void)
{
    g_autoptr(cs_topo_t) ib = two_h100(NULL);
    g_autoptr(cs_topo_t) roce = two_h100("roce-400g");

    g_autoptr(GPtrArray) hca = warnings_with(ib, "NCCL_IB_HCA", "mlx5_9");
    g_assert_cmpuint(hca->len, ==, 1);
    const char *w = g_ptr_array_index(hca, 0);
    g_assert_true(g_str_has_prefix(w, "NCCL_IB_HCA=mlx5_9 (s.ini:9) matches none of node 0's RDMA devices "
                                      "(mlx5_0, mlx5_1, mlx5_2, mlx5_3, mlx5_4, mlx5_5, mlx5_6, mlx5_7): "
                                      "NCCL logs \"NET/IB : No device found.\" (net_ib.cc) and falls back to TCP "
                                      "sockets (NET/Socket over ib0)"));
    g_assert_nonnull(strstr(w, "expected [nccl] NCCL_IB_HCA"));
    /* a subset that matches is a choice, not a fallback */
    g_autoptr(GPtrArray) some = warnings_with(ib, "NCCL_IB_HCA", "mlx5_0,mlx5_1");
    g_assert_cmpuint(some->len, ==, 0);

    g_autoptr(GPtrArray) off = warnings_with(roce, "NCCL_IB_DISABLE", "1");
    g_assert_cmpuint(off->len, ==, 1);
    g_assert_true(g_str_has_prefix(g_ptr_array_index(off, 0), "NCCL_IB_DISABLE=1 (s.ini:9): node 0's RDMA "
                                                              "devices (mlx5_0, "));
    g_assert_nonnull(strstr(g_ptr_array_index(off, 0), "IP interfaces: eth0, "));
    g_assert_nonnull(strstr(g_ptr_array_index(off, 0), "expected [nccl] NCCL_IB_DISABLE = 0"));

    g_autoptr(GPtrArray) gid = warnings_with(roce, "NCCL_IB_GID_INDEX", "99");
    g_assert_cmpuint(gid->len, ==, 1);
    g_assert_true(g_str_has_prefix(g_ptr_array_index(gid, 0), "NCCL_IB_GID_INDEX=99 (s.ini:9) is beyond the GIDs "
                                                              "of a RoCE port with one IPv4 address (0 to 3"));
    g_autoptr(GPtrArray) gid3 = warnings_with(roce, "NCCL_IB_GID_INDEX", "3");
    g_assert_cmpuint(gid3->len, ==, 0);
    g_autoptr(GPtrArray) gid_ib = warnings_with(ib, "NCCL_IB_GID_INDEX", "3");
    g_assert_cmpuint(gid_ib->len, ==, 1);
    g_assert_nonnull(strstr(g_ptr_array_index(gid_ib, 0), "are InfiniBand, where NCCL ignores it"));

    /* one node uses no network: nothing to warn about */
    g_autoptr(cs_topo_t) one = cs_preset_build("dgx-h100", NULL, NULL);
    g_autoptr(GPtrArray) none = warnings_with(one, "NCCL_IB_HCA", "mlx5_9");
    g_assert_cmpuint(none->len, ==, 0);

    /* a socket list that matches nothing names the interfaces and the key */
    g_autoptr(cs_nccl_env_t) e = cs_nccl_env_new();
    cs_nccl_env_set(e, "NCCL_SOCKET_IFNAME", "eno", "--env");
    g_autoptr(GError) err = NULL;
    g_assert_null(cs_comm_new(roce, e, &err));
    g_assert_nonnull(strstr(err->message, "matches no interface of node 0 (eth0, eth1, eth2, eth3, eth4, eth5, "
                                          "eth6, eth7, lo); NCCL logs \"Bootstrap : no socket interface found\""));
    g_assert_nonnull(strstr(err->message, "expected [nccl] NCCL_SOCKET_IFNAME"));
}

/* ---- CollNet (SHARP) ------------------------------------------------------ */

static cs_topo_t *a100_nodes(int nodes, const char *nic, int nics)
{
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    o.nodes = nodes;
    o.nic = nic;
    o.nics_per_node = nics;
    g_autoptr(GError) err = NULL;
    cs_topo_t *t = cs_preset_build("dgx-a100", &o, &err);
    g_assert_no_error(err);
    return t;
}

/* 8 DGX A100 with 4 HDR NICs, NCCL_COLLNET_ENABLE=1 (the coreweave SHARP
 * runs' shape). The searches (topo graph): ring 4 channels at 24/24 GB/s
 * (one per NIC), the CollNet chain (pattern TREE) 4 at 48/24, the direct
 * graph 4 heads at 48/24 (one per NIC: GPUs 0-3). Postset: 4 x 2 = 8, and
 * since the chain's bwIntra 48 > bwInter 24 with 8 ranks per node,
 * CollNet's 8 + 8/2 = 12 (connect.cc). tuning.cc, Simple, nNodes 8:
 *  - CollNetChain: busBw = 4 x 48 = 192, algo bw x .5 = 96 GB/s;
 *    latency 2 x 7 x 2.8 (NVLink hwLat) + 30 (NET) = 69.2 us;
 *  - CollNetDirect: 192 / (2 - (2-1)/2) = 128 (ppn/nCh = 2), x .5 = 64;
 *    latency 2 x (1 x 3.7 + 7 x 0.4) + 31 = 44 us;
 * so CollNetChain wins at 1 GiB (Ring: 4 x 24 x 64/126 = 48.8). Channels
 * 12 (1 GiB passes every threshold), 640 threads; chunks (enqueue.cc
 * calcCollChunking): direct 512K halves while 1G/(12 x 4 heads x chunk) <
 * 2 x 64 -> 128K; chain 256K halves while 1G/(12 x chunk) < 8 x 64 -> 128K. */
static void test_collnet_decisions(void)
{
    g_autoptr(cs_topo_t) t = a100_nodes(8, "ib-hdr", 4);
    {
        g_autoptr(cs_comm_t) off = comm_with(t, NULL);
        g_assert_false(cs_comm_info(off)->collnet_supported);
        g_assert_cmpint(cs_comm_info(off)->comm_nch, ==, 8);
        g_assert_null(cs_comm_collnet_note(off));
    }
    static const char *const on[] = { "NCCL_COLLNET_ENABLE", "1", NULL };
    g_autoptr(cs_comm_t) c = comm_with(t, on);
    const cs_comm_info_t *in = cs_comm_info(c);
    g_assert_true(in->collnet_supported);
    g_assert_cmpint(in->collnet_heads, ==, 4);
    g_assert_cmpint(in->ring_nch, ==, 4);
    g_assert_cmpint(in->comm_nch, ==, 12);
    g_assert_nonnull(strstr(cs_comm_collnet_note(c), "assuming Quantum switches with SHARP"));
    cs_decision_t d;
    decide(c, CS_COLL_ALLREDUCE, G_GUINT64_CONSTANT(1) << 30, &d);
    g_assert_cmpint(d.algo, ==, CS_ALGO_COLLNET_CHAIN);
    g_assert_cmpint(d.proto, ==, CS_PROTO_SIMPLE);
    g_assert_cmpfloat_with_epsilon(d.nccl_bw, 96.0, 1e-3);
    g_assert_cmpfloat_with_epsilon(d.nccl_lat_us, 69.2, 1e-3);
    g_assert_cmpint(d.nchannels, ==, 12);
    g_assert_cmpint(d.nthreads, ==, 640);
    g_assert_cmpuint(d.chunk_bytes, ==, 131072);
    g_assert_cmpfloat_with_epsilon(d.table_us[CS_ALGO_COLLNET_DIRECT][CS_PROTO_SIMPLE],
                                   44.0 + 1073741824.0 / (1000 * 64.0), 1e-2 * 20);
    /* Simple only */
    g_assert_cmpfloat(d.table_us[CS_ALGO_COLLNET_CHAIN][CS_PROTO_LL], ==, -1);
    /* other collectives: no CollNet (AllGather/ReduceScatter need the
     * plugin's iallgather/ireducescatter, not modelled) */
    decide(c, CS_COLL_ALLGATHER, G_GUINT64_CONSTANT(1) << 30, &d);
    g_assert_cmpint(d.algo, ==, CS_ALGO_RING);

    static const char *const direct[] = { "NCCL_COLLNET_ENABLE", "1", "NCCL_ALGO", "collnetdirect", NULL };
    g_autoptr(cs_comm_t) cd = comm_with(t, direct);
    decide(cd, CS_COLL_ALLREDUCE, G_GUINT64_CONSTANT(1) << 30, &d);
    g_assert_cmpint(d.algo, ==, CS_ALGO_COLLNET_DIRECT);
    g_assert_cmpfloat_with_epsilon(d.nccl_bw, 64.0, 1e-3);
    g_assert_cmpfloat_with_epsilon(d.nccl_lat_us, 44.0, 1e-3);
    g_assert_cmpuint(d.chunk_bytes, ==, 131072);
    /* small calls: the CollNet channel tuning (enqueue.cc) cuts channels
     * while 64 KiB < nc x 640 x 4 heads x threshold, down to each switch
     * 8, 4, 2, 1 in turn, the threshold halving at nc = 12, 6, 3 (512 ->
     * 64): 65536 < 2 x 640 x 4 x 64 still, so 1 channel; threads stay */
    decide(cd, CS_COLL_ALLREDUCE, 65536, &d);
    g_assert_cmpint(d.algo, ==, CS_ALGO_COLLNET_DIRECT);
    g_assert_cmpint(d.nthreads, ==, 640);
    g_assert_cmpint(d.nchannels, ==, 1);

    /* the SHARP plugin reduces no fp8 (sharp_plugin.c typeConvert) */
    static const char *const chain[] = { "NCCL_COLLNET_ENABLE", "1", "NCCL_ALGO", "COLLNETCHAIN", NULL };
    g_autoptr(cs_comm_t) cc = comm_with(t, chain);
    g_autoptr(GError) err = NULL;
    g_assert_true(cs_comm_decide(cc, CS_COLL_ALLREDUCE, CS_DTYPE_FLOAT, 1 << 20, &d, &err));
    g_assert_cmpint(d.algo, ==, CS_ALGO_COLLNET_CHAIN);
    g_assert_false(cs_comm_decide(cc, CS_COLL_ALLREDUCE, CS_DTYPE_FP8E4M3, 1 << 20, &d, &err));
    g_assert_nonnull(strstr(err->message, "NCCL_ALGO=COLLNETCHAIN"));
}

/* CollNet stays off, with the reason in the note: RoCE NICs (no SHARP),
 * fewer nodes than NCCL_COLLNET_NODE_THRESHOLD, one node. */
static void test_collnet_off(void)
{
    static const char *const on[] = { "NCCL_COLLNET_ENABLE", "1", NULL };
    g_autoptr(cs_topo_t) roce = a100_nodes(2, "roce-100g", 4);
    g_autoptr(cs_comm_t) c = comm_with(roce, on);
    g_assert_false(cs_comm_info(c)->collnet_supported);
    g_assert_cmpint(cs_comm_info(c)->comm_nch, ==, 2 * cs_comm_info(c)->ring_nch);
    g_assert_nonnull(strstr(cs_comm_collnet_note(c), "RoCE"));
    cs_decision_t d;
    g_autoptr(GError) err = NULL;
    static const char *const forced[] = { "NCCL_COLLNET_ENABLE", "1", "NCCL_ALGO", "CollNetChain", NULL };
    g_autoptr(cs_comm_t) cf = comm_with(roce, forced);
    g_assert_false(cs_comm_decide(cf, CS_COLL_ALLREDUCE, CS_DTYPE_FLOAT, 1 << 20, &d, &err));

    g_autoptr(cs_topo_t) ib = a100_nodes(4, "ib-hdr", 4);
    static const char *const thr[] = { "NCCL_COLLNET_ENABLE", "1", "NCCL_COLLNET_NODE_THRESHOLD", "5", NULL };
    g_autoptr(cs_comm_t) ct = comm_with(ib, thr);
    g_assert_false(cs_comm_info(ct)->collnet_supported);
    g_assert_nonnull(strstr(cs_comm_collnet_note(ct), "fewer than NCCL_COLLNET_NODE_THRESHOLD (5)"));
    static const char *const thr4[] = { "NCCL_COLLNET_ENABLE", "1", "NCCL_COLLNET_NODE_THRESHOLD", "4", NULL };
    g_autoptr(cs_comm_t) c4 = comm_with(ib, thr4);
    g_assert_true(cs_comm_info(c4)->collnet_supported);

    g_autoptr(cs_nccl_env_t) e = cs_nccl_env_new();
    cs_nccl_env_set(e, "NCCL_COLLNET_ENABLE", "1", "t.ini:1");
    cs_nccl_env_set(e, "NCCL_COLLNET_NODE_THRESHOLD", "two", "t.ini:2");
    g_clear_error(&err);
    g_assert_null(cs_comm_new(ib, e, &err));
    g_assert_nonnull(strstr(err->message, "t.ini:2: NCCL_COLLNET_NODE_THRESHOLD=two: not an integer"));

    g_autoptr(cs_topo_t) one = a100_nodes(1, "ib-hdr", 4);
    g_autoptr(cs_comm_t) c1 = comm_with(one, on);
    g_assert_false(cs_comm_info(c1)->collnet_supported);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/decide/nvswitch/graphs", test_nvswitch_graphs);
    g_test_add_func("/decide/nvswitch/small", test_nvswitch_small);
    g_test_add_func("/decide/nvswitch/large", test_nvswitch_large);
    g_test_add_func("/decide/nvswitch/p2p-disable", test_p2p_disable);
    g_test_add_func("/decide/two-nodes/graphs", test_two_nodes);
    g_test_add_func("/decide/two-nodes/decisions", test_two_nodes_decisions);
    g_test_add_func("/decide/two-nodes/ib-disable", test_ib_disable);
    g_test_add_func("/decide/two-nodes/ib-hca", test_ib_hca);
    g_test_add_func("/decide/consumer/shm", test_consumer_shm);
    g_test_add_func("/decide/consumer/p2p-forced", test_consumer_p2p_forced);
    g_test_add_func("/decide/single-rank", test_single_rank);
    g_test_add_func("/decide/errors", test_errors);
    g_test_add_func("/decide/preset/dgx-h100", test_preset_dgx_h100);
    g_test_add_func("/decide/preset/nvl72", test_preset_nvl72);
    g_test_add_func("/decide/many-nodes", test_many_nodes);
    g_test_add_func("/decide/nccl-version-tuner", test_nccl_version_tuner);
    g_test_add_func("/decide/fallback-warnings", test_fallback_warnings);
    g_test_add_func("/decide/collnet/decisions", test_collnet_decisions);
    g_test_add_func("/decide/collnet/off", test_collnet_off);
    return g_test_run();
}
