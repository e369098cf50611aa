/* The presets of issue 12 item 5: the pcie presets' NVLink bridge choice
 * and NIC count, the GB200/GB300 NVL72 racks, DGX Spark and the two-card
 * NVLink-bridged workstation. Expected figures come from the vendor
 * numbers cited in cs_hw.c / cs_preset_nodes.c, recomputed here by hand
 * (the derivation is in each comment), not read back from the builder. */
#include "config.h"

#include <string.h>

#include "models/cs_paths.h"
#include "models/cs_presets.h"
#include "util/cs_error.h"
#include "presets-util.h"

/* ---- pcie: bridges are a choice, one NIC by default ------------------------ */

static void test_pcie_bridge(void)
{
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    o.gpu = "a100-pcie";
    /* default: no bridge, said in the description and the source */
    g_autoptr(cs_topo_t) t = build("pcie", &o);
    g_assert_cmpint(count_links(t, CS_LINK_NVL), ==, 0);
    g_assert_nonnull(strstr(t->description, "no NVLink bridge (--nvlink-bridge pairs adds them)"));
    g_assert_nonnull(strstr(t->source, "--nvlink-bridge none"));
    g_clear_pointer(&t, cs_topo_free);

    /* pairs: 8 GPUs -> bridges 0-1, 2-3, 4-5, 6-7; the A100 PCIe bridge set
     * is 12 links (600 GB/s bidirectional) = 300 GB/s per direction */
    o.nvlink_bridge = CS_BRIDGE_PAIRS;
    t = build("pcie", &o);
    g_assert_cmpint(count_links(t, CS_LINK_NVL), ==, 4);
    const cs_link_t *l = link_between(t, dev(t, "gpu6"), dev(t, "gpu7"));
    g_assert_nonnull(l);
    g_assert_cmpint(l->count, ==, 12);
    g_assert_cmpfloat_with_epsilon(l->bw, 300e9, 1);
    g_assert_null(link_between(t, dev(t, "gpu1"), dev(t, "gpu2")));
    g_assert_nonnull(strstr(t->source, "--nvlink-bridge pairs"));
    g_clear_pointer(&t, cs_topo_free);

    /* a card without a bridge connector, one GPU, a fixed machine */
    o.gpu = "rtx4090";
    expect_error("pcie", &o, "collsim: --nvlink-bridge: rtx4090 has no NVLink bridge connector", "expected none");
    o.gpu = "a40";
    o.gpus = 1;
    expect_error("pcie", &o, "collsim: --nvlink-bridge: pairs needs at least 2 GPUs", NULL);
    cs_build_opts_init(&o);
    o.nvlink_bridge = CS_BRIDGE_NONE;
    expect_error("dgx-h100", &o, "collsim: --nvlink-bridge: applies to the pcie preset only", "dgx-h100");
    expect_error("gb200-nvl72", &o, "collsim: --nvlink-bridge: applies to the pcie preset only", "gb200-nvl72");
}

static void test_pcie_nics(void)
{
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    o.gpu = "l40s";
    o.nic = "ib-ndr";
    /* one NIC per node unless asked, under the first switch (GPUs 0-1) */
    g_autoptr(cs_topo_t) t = build("pcie", &o);
    g_assert_cmpint(count_devs(t, CS_DEV_NIC), ==, 1);
    g_assert_nonnull(link_between(t, dev(t, "pcisw0"), dev(t, "nic0")));
    g_assert_nonnull(strstr(t->description, "1x ib-ndr NIC per node (the pcie default"));
    g_clear_pointer(&t, cs_topo_free);
    /* two nodes: still one per node */
    o.nodes = 2;
    t = build("pcie", &o);
    int nics[8];
    g_assert_cmpint(cs_topo_node_nics(t, 1, nics, 8), ==, 1);
    g_assert_nonnull(strstr(t->description, "1x ib-ndr per node"));
    g_clear_pointer(&t, cs_topo_free);
    /* 4 asked on 8 GPUs: one per switch (4 switches of 2 GPUs) */
    o.nodes = 1;
    o.nics_per_node = 4;
    t = build("pcie", &o);
    g_assert_cmpint(count_devs(t, CS_DEV_NIC), ==, 4);
    for (int k = 0; k < 4; k++) {
        char sw[16], nic[16];
        g_snprintf(sw, sizeof sw, "pcisw%d", k);
        g_snprintf(nic, sizeof nic, "nic%d", k);
        g_assert_nonnull(link_between(t, dev(t, sw), dev(t, nic)));
    }
    g_assert_null(strstr(t->description, "the pcie default"));
}

/* ---- two bridged cards ------------------------------------------------------- */

static void test_nvlink_pair(void)
{
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    /* RTX A6000 by default: 1 socket, 1 switch, the 2-way bridge of 4 GA102
     * links at 112.5/2/4 = 14.0625 GB/s = 56.25 GB/s per direction */
    g_autoptr(cs_topo_t) t = build("pcie-nvlink-pair", &o);
    g_assert_cmpint(t->ngpus, ==, 2);
    g_assert_cmpint(count_devs(t, CS_DEV_CPU), ==, 1);
    g_assert_cmpint(count_devs(t, CS_DEV_PCISW), ==, 1);
    g_assert_cmpstr(cs_topo_rank_dev(t, 0)->gpu->name, ==, "rtx-a6000");
    const cs_link_t *l = link_between(t, dev(t, "gpu0"), dev(t, "gpu1"));
    g_assert_nonnull(l);
    g_assert_cmpint(l->kind, ==, CS_LINK_NVL);
    g_assert_cmpint(l->count, ==, 4);
    g_assert_cmpfloat_with_epsilon(l->bw, 56.25e9, 1);
    g_assert_true(g_str_has_prefix(t->description, "Workstation (2x RTX-A6000, NVLink bridges on GPU pairs"));
    g_clear_pointer(&t, cs_topo_free);
    /* the RTX 3090 pair (GeForce: P2P only over the bridge) and the
     * unbridged comparison */
    o.gpu = "rtx3090";
    t = build("pcie-nvlink-pair", &o);
    g_assert_cmpfloat_with_epsilon(link_between(t, dev(t, "gpu0"), dev(t, "gpu1"))->bw, 56.25e9, 1);
    g_clear_pointer(&t, cs_topo_free);
    o.nvlink_bridge = CS_BRIDGE_NONE;
    t = build("pcie-nvlink-pair", &o);
    g_assert_cmpint(count_links(t, CS_LINK_NVL), ==, 0);
}

/* ---- NVL72 racks -------------------------------------------------------------- */

static void check_rack_gpu(const cs_topo_t *t, int local, double nic_bw)
{
    char name[16];
    g_snprintf(name, sizeof name, "gpu%d", local);
    int g = dev(t, name);
    /* 18 NVLink5 links of 50 GB/s to the switch plane: 900 GB/s each way
     * (1.8 TB/s bidirectional per GPU) */
    const cs_link_t *nv = link_between(t, g, dev(t, "nvs0"));
    g_assert_nonnull(nv);
    g_assert_cmpint(nv->count, ==, 18);
    g_assert_cmpfloat_with_epsilon(nv->bw, 900e9, 1);
    /* C2C to its Grace: GPUs 4k, 4k+1 on cpu 2k, 4k+2, 4k+3 on 2k+1 */
    char cpu[16];
    g_snprintf(cpu, sizeof cpu, "cpu%d", local / 2);
    const cs_link_t *c2c = link_between(t, g, dev(t, cpu));
    g_assert_nonnull(c2c);
    g_assert_cmpint(c2c->kind, ==, CS_LINK_C2C);
    g_assert_cmpfloat_with_epsilon(c2c->bw, 225e9, 1);   /* 900 GB/s bidir / 2 GPUs / 2 ways */
    char nic[16];
    g_snprintf(nic, sizeof nic, "nic%d", local);
    g_assert_cmpfloat_with_epsilon(t->devs[dev(t, nic)].nic_bw, nic_bw, 1);
}

static void test_gb200_nvl72(void)
{
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    g_autoptr(cs_topo_t) t = build("gb200-nvl72", &o);
    /* one NVLink domain = one node: 72 GPUs, 18 trays x 2 Grace, one
     * switch plane, a ConnectX-7 400G (50 GB/s) per GPU */
    g_assert_cmpint(t->nnodes, ==, 1);
    g_assert_cmpint(t->ngpus, ==, 72);
    g_assert_cmpint(count_devs(t, CS_DEV_CPU), ==, 36);
    g_assert_cmpint(count_devs(t, CS_DEV_NVSWITCH), ==, 1);
    g_assert_cmpint(count_devs(t, CS_DEV_NIC), ==, 72);
    g_assert_cmpint(count_links(t, CS_LINK_NVL), ==, 72);
    g_assert_cmpint(count_links(t, CS_LINK_C2C), ==, 72);
    g_assert_cmpint(count_links(t, CS_LINK_SYS), ==, 18);   /* the two Graces of each tray */
    for (int g = 0; g < 72; g += 13)
        check_rack_gpu(t, g, 50e9);
    /* Graces of different trays are not joined; those of a tray are */
    g_assert_nonnull(link_between(t, dev(t, "cpu34"), dev(t, "cpu35")));
    g_assert_null(link_between(t, dev(t, "cpu1"), dev(t, "cpu2")));
    /* the NIC hangs under the Grace (PCIe Gen5 x16): GPU -> NIC is C2C then
     * PHB, NCCL's P2C; GPU -> GPU of another tray is one NVLink hop through
     * the switch */
    g_assert_nonnull(link_between(t, dev(t, "cpu0"), dev(t, "nic1")));
    g_autoptr(cs_path_cache_t) pc = cs_path_cache_new(t, FALSE);
    g_assert_cmpint(cs_path_cache_nic(pc, 1, 1)->type, ==, CS_PATH_P2C);
    g_assert_cmpint(cs_path_cache_gpu(pc, 0, 71)->type, ==, CS_PATH_NVL);
    g_assert_nonnull(strstr(t->description, "72x GB200 in one NVLink domain"));
    /* one node of 18 hosts, a tray each, ranks in tray blocks */
    int host[72];
    g_assert_cmpint(cs_topo_rank_hosts(t, host), ==, 18);
    for (int r = 0; r < 72; r++)
        g_assert_cmpint(host[r], ==, r / 4);
    g_clear_pointer(&t, cs_topo_free);

    /* --gpus 8: the first 2 trays only (their NICs and Graces) */
    o.gpus = 8;
    t = build("gb200-nvl72", &o);
    g_assert_cmpint(t->ngpus, ==, 8);
    g_assert_cmpint(count_devs(t, CS_DEV_NIC), ==, 8);
    g_assert_cmpint(count_devs(t, CS_DEV_CPU), ==, 4);
    g_assert_nonnull(strstr(t->description, "2 of 18 compute trays"));
    g_clear_pointer(&t, cs_topo_free);
    /* --gpus 6: two trays built, the first 6 GPUs kept */
    o.gpus = 6;
    t = build("gb200-nvl72", &o);
    g_assert_cmpint(t->ngpus, ==, 6);
    g_assert_cmpint(count_devs(t, CS_DEV_CPU), ==, 4);
    g_clear_pointer(&t, cs_topo_free);
    o.gpus = 73;
    expect_error("gb200-nvl72", &o, "collsim: --gpus: 73 GPUs per node, but gb200-nvl72 has 72", "1..72");

    /* 3 racks of 64 GPUs over RoCE 400G: 3 nodes, 64 NICs each, a rail
     * fabric (one rail per NIC position) */
    o.gpus = 64;
    o.nodes = 3;
    o.nic = "roce-400g";
    t = build("gb200-nvl72", &o);
    g_assert_cmpint(t->nnodes, ==, 3);
    g_assert_cmpint(t->ngpus, ==, 192);
    int nics[128];
    g_assert_cmpint(cs_topo_node_nics(t, 2, nics, 128), ==, 64);
    g_assert_cmpint(t->devs[nics[0]].nic_kind, ==, CS_NIC_ROCE);
    g_assert_cmpint(t->fabric.kind, ==, CS_FABRIC_RAIL);
    /* the network joins no hosts: 16 trays a rack */
    g_assert_cmpint(cs_topo_rank_hosts(t, NULL), ==, 48);
    g_clear_pointer(&t, cs_topo_free);

    cs_build_opts_init(&o);
    o.gpu = "gb200";
    expect_error("gb200-nvl72", &o, "collsim: --gpu: applies to the pcie preset only", NULL);
    o.gpu = NULL;
    cs_build_opts_init(&o);
    o.gpu = "gb200";
    expect_error("pcie", &o, "gb200 is an SXM/superchip module", "or the gb200-nvl72 preset");
}

static void test_gb300_nvl72(void)
{
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    g_autoptr(cs_topo_t) t = build("gb300-nvl72", &o);
    g_assert_cmpint(t->ngpus, ==, 72);
    g_assert_cmpint(count_devs(t, CS_DEV_NIC), ==, 72);
    /* ConnectX-8 800G = 100 GB/s per GPU, behind its own PCIe switch that
     * the GPU shares (PCIe Gen6 x16 each), up to the Grace at Gen5 */
    check_rack_gpu(t, 0, 100e9);
    check_rack_gpu(t, 71, 100e9);
    int sw = dev(t, "pcisw5");
    g_assert_cmpint(link_between(t, sw, dev(t, "gpu5"))->pcie_gen, ==, 6);
    g_assert_cmpint(link_between(t, sw, dev(t, "nic5"))->pcie_gen, ==, 6);
    g_assert_cmpint(link_between(t, sw, dev(t, "cpu2"))->pcie_gen, ==, 5);
    g_autoptr(cs_path_cache_t) pc = cs_path_cache_new(t, FALSE);
    g_assert_cmpint(cs_path_cache_nic(pc, 5, 5)->type, ==, CS_PATH_PIX);
    g_assert_cmpint(t->devs[dev(t, "nic5")].nic_kind, ==, CS_NIC_IB);
}

/* ---- DGX Spark ------------------------------------------------------------------- */

static void test_dgx_spark(void)
{
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    g_autoptr(cs_topo_t) t = build("dgx-spark", &o);
    g_assert_cmpint(t->ngpus, ==, 1);
    g_assert_cmpint(count_devs(t, CS_DEV_CPU), ==, 1);
    g_assert_cmpstr(cs_topo_rank_dev(t, 0)->gpu->name, ==, "gb10");
    /* C2C: 5 x PCIe Gen5 x16 = 5 x 32e9 x 128/130 x 16 / 8 bytes/s */
    const cs_link_t *c2c = link_between(t, dev(t, "gpu0"), dev(t, "cpu0"));
    g_assert_cmpint(c2c->kind, ==, CS_LINK_C2C);
    g_assert_cmpfloat_with_epsilon(c2c->bw, 5 * 32e9 * 128 / 130 * 16 / 8, 1);
    /* the 200 GbE port as two RDMA devices of 100 Gb/s, each on Gen5 x4 */
    g_assert_cmpint(count_devs(t, CS_DEV_NIC), ==, 2);
    for (int k = 0; k < 2; k++) {
        char nic[16];
        g_snprintf(nic, sizeof nic, "nic%d", k);
        const cs_device_t *n = &t->devs[dev(t, nic)];
        g_assert_cmpfloat_with_epsilon(n->nic_bw, 12.5e9, 1);
        g_assert_cmpint(n->nic_kind, ==, CS_NIC_ROCE);
        g_assert_cmpint(link_between(t, dev(t, "cpu0"), dev(t, nic))->pcie_width, ==, 4);
    }
    g_clear_pointer(&t, cs_topo_free);
    /* the usual pair of boxes */
    o.nodes = 2;
    t = build("dgx-spark", &o);
    g_assert_cmpint(t->nnodes, ==, 2);
    g_assert_cmpint(t->ngpus, ==, 2);
    g_assert_cmpint(count_devs(t, CS_DEV_NIC), ==, 4);
    /* two boxes cabled back to back: a host each */
    int host[2];
    g_assert_cmpint(cs_topo_rank_hosts(t, host), ==, 2);
    g_assert_cmpint(host[1], ==, 1);
}

static void test_names(void)
{
    static const char *const names[] = { "gb200-nvl72", "gb300-nvl72", "dgx-spark", "pcie-nvlink-pair" };
    for (gsize i = 0; i < G_N_ELEMENTS(names); i++) {
        g_assert_true(cs_preset_exists(names[i]));
        g_assert_nonnull(strstr(cs_preset_names(), names[i]));
        g_assert_nonnull(cs_preset_doc(names[i]));
        g_assert_null(strchr(cs_preset_doc(names[i]), '\n'));
    }
    g_assert_true(cs_preset_takes_node_options("pcie-nvlink-pair"));
    g_assert_false(cs_preset_takes_node_options("dgx-spark"));
    g_assert_false(cs_preset_takes_node_options("gb300-nvl72"));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/presets-planner/pcie-bridge", test_pcie_bridge);
    g_test_add_func("/presets-planner/pcie-nics", test_pcie_nics);
    g_test_add_func("/presets-planner/nvlink-pair", test_nvlink_pair);
    g_test_add_func("/presets-planner/gb200-nvl72", test_gb200_nvl72);
    g_test_add_func("/presets-planner/gb300-nvl72", test_gb300_nvl72);
    g_test_add_func("/presets-planner/dgx-spark", test_dgx_spark);
    g_test_add_func("/presets-planner/names", test_names);
    return g_test_run();
}
