/* Preset and cluster builders. Expected counts are derived by hand from the
 * vendor layouts documented in cs_preset_nodes.c (and repeated here), not
 * read back from the builder. */
#include "config.h"

#include <string.h>

#include "models/cs_presets.h"
#include "util/cs_error.h"
#include "presets-util.h"

/* ---- helpers ---------------------------------------------------------------- */

static int nvl_count(const cs_topo_t *t, const char *a, const char *b)
{
    const cs_link_t *l = link_between(t, dev(t, a), dev(t, b));
    return l != NULL && l->kind == CS_LINK_NVL ? l->count : 0;
}

/* total NVLink lanes leaving device d */
static int nvl_total(const cs_topo_t *t, int d)
{
    int n = 0;
    for (int i = t->adj_off[d]; i < t->adj_off[d + 1]; i++)
        if (t->links[t->adj[i]].kind == CS_LINK_NVL)
            n += t->links[t->adj[i]].count;
    return n;
}

/* the PCIe switch a device hangs from (its PCI neighbour of kind PCISW that
 * is not below it); for GPUs/NICs there is exactly one PCI link */
static int pci_parent(const cs_topo_t *t, int d)
{
    int parent = -1;
    for (int i = t->adj_off[d]; i < t->adj_off[d + 1]; i++) {
        const cs_link_t *l = &t->links[t->adj[i]];
        if (l->kind == CS_LINK_PCI) {
            g_assert_cmpint(parent, ==, -1);
            parent = l->dst;
        }
    }
    return parent;
}

static int net_switch_of(const cs_topo_t *t, int nic)
{
    int sw = -1;
    for (int i = t->adj_off[nic]; i < t->adj_off[nic + 1]; i++) {
        const cs_link_t *l = &t->links[t->adj[i]];
        if (l->kind == CS_LINK_NET) {
            g_assert_cmpint(sw, ==, -1);
            sw = l->dst;
        }
    }
    return sw;
}

/* ---- DGX-1 (V100) ------------------------------------------------------------ */

/* nvidia-smi topo -m on a DGX-1V (NV1/NV2), typed in independently of the
 * builder's table. */
static const struct { int a, b, n; } dgx1_pairs[] = {
    { 0, 1, 1 }, { 0, 2, 1 }, { 0, 3, 2 }, { 0, 4, 2 }, { 1, 2, 2 }, { 1, 3, 1 },
    { 1, 5, 2 }, { 2, 3, 2 }, { 2, 6, 1 }, { 3, 7, 1 }, { 4, 5, 1 }, { 4, 6, 1 },
    { 4, 7, 2 }, { 5, 6, 2 }, { 5, 7, 1 }, { 6, 7, 2 },
};

static void test_dgx1(void)
{
    g_autoptr(cs_topo_t) t = build("dgx1-v100", NULL);
    /* 8 GPUs, 2 CPUs, 4 PCIe switches, 4 NICs */
    g_assert_cmpint(t->ndevs, ==, 18);
    g_assert_cmpint(count_devs(t, CS_DEV_GPU), ==, 8);
    g_assert_cmpint(count_devs(t, CS_DEV_NVSWITCH), ==, 0);
    g_assert_cmpint(count_devs(t, CS_DEV_PCISW), ==, 4);
    g_assert_cmpint(count_devs(t, CS_DEV_NIC), ==, 4);
    /* PCIe: 4 switch uplinks + 8 GPUs + 4 NICs; 16 GPU pairs with NVLink; QPI */
    g_assert_cmpint(count_links(t, CS_LINK_PCI), ==, 16);
    g_assert_cmpint(count_links(t, CS_LINK_NVL), ==, 16);
    g_assert_cmpint(count_links(t, CS_LINK_SYS), ==, 1);
    g_assert_cmpint(t->nlinks, ==, 2 * 33);

    int total = 0;
    for (gsize i = 0; i < G_N_ELEMENTS(dgx1_pairs); i++) {
        char a[8], b[8];
        g_snprintf(a, sizeof a, "gpu%d", dgx1_pairs[i].a);
        g_snprintf(b, sizeof b, "gpu%d", dgx1_pairs[i].b);
        g_assert_cmpint(nvl_count(t, a, b), ==, dgx1_pairs[i].n);
        g_assert_cmpint(nvl_count(t, b, a), ==, dgx1_pairs[i].n);
        total += dgx1_pairs[i].n;
        /* V100 NVLink2: 25 GB/s per link per direction */
        g_assert_cmpfloat_with_epsilon(link_between(t, dev(t, a), dev(t, b))->bw,
                                       dgx1_pairs[i].n * 25e9, 1);
    }
    g_assert_cmpint(total, ==, 24);
    for (int g = 0; g < 8; g++) {
        char a[8];
        g_snprintf(a, sizeof a, "gpu%d", g);
        g_assert_cmpint(nvl_total(t, dev(t, a)), ==, 6);
    }
    g_assert_cmpint(nvl_count(t, "gpu0", "gpu5"), ==, 0);
    g_assert_cmpint(nvl_count(t, "gpu3", "gpu4"), ==, 0);

    /* GPUs 2k, 2k+1 and NIC k share PCIe switch k; switches 0-1 on socket 0 */
    for (int k = 0; k < 4; k++) {
        char g0[8], g1[8], n[8];
        g_snprintf(g0, sizeof g0, "gpu%d", 2 * k);
        g_snprintf(g1, sizeof g1, "gpu%d", 2 * k + 1);
        g_snprintf(n, sizeof n, "nic%d", k);
        int sw = pci_parent(t, dev(t, n));
        g_assert_cmpint(t->devs[sw].kind, ==, CS_DEV_PCISW);
        g_assert_cmpint(pci_parent(t, dev(t, g0)), ==, sw);
        g_assert_cmpint(pci_parent(t, dev(t, g1)), ==, sw);
        int cpu = cs_topo_node_cpu_of(t, dev(t, g0));
        g_assert_cmpint(t->devs[cpu].socket, ==, k / 2);
        const cs_device_t *nic = &t->devs[dev(t, n)];
        g_assert_cmpfloat_with_epsilon(nic->nic_bw, 100e9 / 8, 1);
        g_assert_cmpint(nic->nic_kind, ==, CS_NIC_IB);
        g_assert_true(nic->gdr);
    }
    /* Gen3 x16 everywhere: 8 GT/s * 128/130 * 16 / 8 */
    const cs_link_t *l = link_between(t, dev(t, "gpu0"), pci_parent(t, dev(t, "gpu0")));
    g_assert_cmpint(l->pcie_gen, ==, 3);
    g_assert_cmpint(l->pcie_width, ==, 16);
    g_assert_cmpfloat_with_epsilon(l->bw, 8e9 * 128 / 130 * 16 / 8, 1);
    /* QPI: 2 links x 9.6 GT/s x 2 bytes */
    l = link_between(t, dev(t, "cpu0"), dev(t, "cpu1"));
    g_assert_cmpfloat_with_epsilon(l->bw, 38.4e9, 1);
    g_assert_cmpint(t->devs[dev(t, "cpu0")].vendor, ==, CS_CPU_INTEL);
    g_assert_cmpint(t->devs[dev(t, "cpu0")].modelid, ==, 0x4F);   /* Broadwell-EP */
    g_assert_cmpint(t->fabric.kind, ==, CS_FABRIC_NONE);
    g_assert_cmpstr(t->source, ==, "preset:dgx1-v100");
}

/* ---- DGX A100 ----------------------------------------------------------------- */

static void test_dgx_a100(void)
{
    g_autoptr(cs_topo_t) t = build("dgx-a100", NULL);
    /* 8 GPUs + 2 CPUs + 4 fused PEX switches + 8 NICs + the NVSwitch plane
     * (6 chips as one device) */
    g_assert_cmpint(t->ndevs, ==, 23);
    g_assert_cmpint(count_devs(t, CS_DEV_NVSWITCH), ==, 1);
    g_assert_cmpint(count_devs(t, CS_DEV_PCISW), ==, 4);
    g_assert_cmpint(count_devs(t, CS_DEV_NIC), ==, 8);
    /* PCIe: 4 CPU-switch + 8 GPU + 8 NIC; NVLink 8 bundles */
    g_assert_cmpint(count_links(t, CS_LINK_PCI), ==, 20);
    g_assert_cmpint(count_links(t, CS_LINK_NVL), ==, 8);
    g_assert_cmpint(t->nlinks, ==, 2 * (20 + 8 + 1));
    for (int g = 0; g < 8; g++) {
        char a[8];
        g_snprintf(a, sizeof a, "gpu%d", g);
        /* 6 switches x 2 links, NVLink3 25 GB/s per link per direction */
        g_assert_cmpint(nvl_total(t, dev(t, a)), ==, 12);
        g_assert_cmpint(nvl_count(t, a, "nvs0"), ==, 12);
        g_assert_cmpfloat_with_epsilon(link_between(t, dev(t, a), dev(t, "nvs0"))->bw, 300e9, 1);
    }
    /* GPUs 0 and 1 and NICs 0 and 1 on one (fused) switch */
    int base = pci_parent(t, dev(t, "gpu0"));
    g_assert_cmpint(pci_parent(t, dev(t, "gpu1")), ==, base);
    g_assert_cmpint(pci_parent(t, dev(t, "nic0")), ==, base);
    g_assert_cmpint(pci_parent(t, dev(t, "nic1")), ==, base);
    g_assert_cmpint(pci_parent(t, dev(t, "nic2")), !=, base);
    g_assert_cmpint(t->devs[dev(t, "cpu1")].vendor, ==, CS_CPU_AMD);
    g_assert_cmpint(t->devs[cs_topo_node_cpu_of(t, dev(t, "gpu5"))].socket, ==, 1);
    /* two sockets, one host */
    g_assert_cmpint(cs_topo_rank_hosts(t, NULL), ==, 1);
    g_assert_cmpfloat_with_epsilon(t->devs[dev(t, "nic7")].nic_bw, 200e9 / 8, 1);
    g_assert_cmpint(link_between(t, dev(t, "gpu0"), base)->pcie_gen, ==, 4);
}

/* ---- Hopper / Blackwell ------------------------------------------------------- */

static void check_hgx(const char *preset, const char *gpu_model, int per_gpu, double link_bw)
{
    g_autoptr(cs_topo_t) t = build(preset, NULL);
    /* 8 GPUs + 2 CPUs + 8 PCIe switches + 8 NICs + the NVSwitch plane */
    g_assert_cmpint(t->ndevs, ==, 27);
    g_assert_cmpint(count_devs(t, CS_DEV_NVSWITCH), ==, 1);
    g_assert_cmpint(count_links(t, CS_LINK_PCI), ==, 24);
    g_assert_cmpint(count_links(t, CS_LINK_NVL), ==, 8);
    g_assert_cmpint(count_links(t, CS_LINK_SYS), ==, 1);
    g_assert_cmpint(t->nlinks, ==, 2 * 33);
    for (int g = 0; g < 8; g++) {
        char a[8], n[8];
        g_snprintf(a, sizeof a, "gpu%d", g);
        g_snprintf(n, sizeof n, "nic%d", g);
        g_assert_cmpstr(t->devs[dev(t, a)].gpu->name, ==, gpu_model);
        g_assert_cmpint(nvl_total(t, dev(t, a)), ==, per_gpu);
        g_assert_cmpfloat_with_epsilon(link_between(t, dev(t, a), dev(t, "nvs0"))->bw,
                                       per_gpu * link_bw, 1);
        /* GPU g and NIC g alone under PCIe Gen5 switch g (PIX) */
        int sw = pci_parent(t, dev(t, a));
        g_assert_cmpint(pci_parent(t, dev(t, n)), ==, sw);
        g_assert_cmpint(t->adj_off[sw + 1] - t->adj_off[sw], ==, 3);
        g_assert_cmpint(link_between(t, dev(t, a), sw)->pcie_gen, ==, 5);
        g_assert_cmpint(t->devs[cs_topo_node_cpu_of(t, dev(t, a))].socket, ==, g / 4);
        g_assert_cmpfloat_with_epsilon(t->devs[dev(t, n)].nic_bw, 400e9 / 8, 1);
    }
    g_assert_cmpstr(t->devs[dev(t, "nic3")].ifname, ==, "mlx5_3");
}

static void test_hgx(void)
{
    /* H100/H200: 5+4+4+5 = 18 NVLink4; H800: 8; B200: 9+9 = 18 NVLink5.
     * NVLink4 25 GB/s, NVLink5 50 GB/s per link per direction */
    check_hgx("dgx-h100", "h100-sxm", 18, 25e9);
    check_hgx("dgx-h800", "h800-sxm", 8, 25e9);
    check_hgx("hgx-h200", "h200-sxm", 18, 25e9);
    check_hgx("dgx-b200", "b200", 18, 50e9);

    g_autoptr(cs_topo_t) t = build("dgx-b200", NULL);
    g_assert_cmpint(t->devs[dev(t, "cpu0")].modelid, ==, 0xCF);   /* Emerald Rapids */
    /* UPI 4 x 20 GT/s x 2 bytes */
    g_assert_cmpfloat_with_epsilon(link_between(t, dev(t, "cpu0"), dev(t, "cpu1"))->bw, 160e9, 1);
    g_assert_cmpstr(t->description, ==, "DGX B200 (8x B200, NVLink5 via NVSwitch)");
}

/* ---- the PCIe server ------------------------------------------------------------ */

static void test_pcie(void)
{
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    o.gpu = "l40s";
    g_autoptr(cs_topo_t) t = build("pcie", &o);
    /* 8 GPUs, 2 sockets (8 > 4), 4 switches of 2 GPUs, no NIC */
    g_assert_cmpint(t->ngpus, ==, 8);
    g_assert_cmpint(count_devs(t, CS_DEV_CPU), ==, 2);
    g_assert_cmpint(count_devs(t, CS_DEV_PCISW), ==, 4);
    g_assert_cmpint(count_devs(t, CS_DEV_NIC), ==, 0);
    g_assert_cmpint(count_links(t, CS_LINK_PCI), ==, 12);
    g_assert_cmpint(count_links(t, CS_LINK_NVL), ==, 0);
    g_assert_cmpint(pci_parent(t, dev(t, "gpu2")), ==, pci_parent(t, dev(t, "gpu3")));
    g_assert_cmpint(t->devs[cs_topo_node_cpu_of(t, dev(t, "gpu3"))].socket, ==, 0);
    g_assert_cmpint(t->devs[cs_topo_node_cpu_of(t, dev(t, "gpu4"))].socket, ==, 1);
    g_assert_true(cs_device_p2p(&t->devs[dev(t, "gpu0")]));   /* L40S: P2P on */
    g_assert_cmpstr(t->source, ==, "preset:pcie --gpu l40s --gpus 8 --sockets 2");
    g_clear_pointer(&t, cs_topo_free);

    /* 4 RTX 3090 with bridges asked: 1 socket, 2 switches, bridges 0-1 and
     * 2-3 of 4 links at 14.0625 GB/s; GeForce: no P2P unless forced */
    o.gpu = "rtx3090";
    o.gpus = 4;
    o.nvlink_bridge = CS_BRIDGE_PAIRS;
    t = build("pcie", &o);
    g_assert_cmpint(count_devs(t, CS_DEV_CPU), ==, 1);
    g_assert_cmpint(count_devs(t, CS_DEV_PCISW), ==, 2);
    g_assert_cmpint(nvl_count(t, "gpu0", "gpu1"), ==, 4);
    g_assert_cmpint(nvl_count(t, "gpu2", "gpu3"), ==, 4);
    g_assert_cmpint(nvl_count(t, "gpu1", "gpu2"), ==, 0);
    g_assert_cmpfloat_with_epsilon(link_between(t, dev(t, "gpu0"), dev(t, "gpu1"))->bw, 56.25e9, 1);
    g_assert_false(cs_device_p2p(&t->devs[dev(t, "gpu0")]));
    g_clear_pointer(&t, cs_topo_free);

    o.nvlink_bridge = CS_BRIDGE_UNSET;
    o.gpu = "rtx4090";
    o.gpus = 2;
    o.p2p = 1;
    t = build("pcie", &o);
    g_assert_true(cs_device_p2p(&t->devs[dev(t, "gpu1")]));
    g_assert_nonnull(strstr(t->source, "--p2p on"));
    g_clear_pointer(&t, cs_topo_free);

    /* 3 GPUs on 2 sockets: 2 + 1, each socket its own switch(es); one NIC
     * by default (issue 12 item 5), on the first switch; with
     * --nics-per-node 2 one per switch */
    o.gpu = "l40s";
    o.gpus = 3;
    o.sockets = 2;
    o.p2p = 0;
    o.nic = "roce-100g";
    t = build("pcie", &o);
    g_assert_cmpint(count_devs(t, CS_DEV_PCISW), ==, 2);
    g_assert_cmpint(count_devs(t, CS_DEV_NIC), ==, 1);
    g_assert_cmpint(pci_parent(t, dev(t, "nic0")), ==, pci_parent(t, dev(t, "gpu0")));
    g_assert_nonnull(strstr(t->description, "1x roce-100g NIC per node (the pcie default"));
    g_clear_pointer(&t, cs_topo_free);
    o.nics_per_node = 2;
    t = build("pcie", &o);
    g_assert_cmpint(count_devs(t, CS_DEV_NIC), ==, 2);
    g_assert_cmpint(t->devs[cs_topo_node_cpu_of(t, dev(t, "gpu1"))].socket, ==, 0);
    g_assert_cmpint(t->devs[cs_topo_node_cpu_of(t, dev(t, "gpu2"))].socket, ==, 1);
    g_assert_cmpint(pci_parent(t, dev(t, "nic1")), ==, pci_parent(t, dev(t, "gpu2")));
    g_assert_false(cs_device_p2p(&t->devs[dev(t, "gpu0")]));
    g_assert_cmpint(t->fabric.kind, ==, CS_FABRIC_NONE);
}

/* The pcie preset's sockets: an Intel part of the GPU's PCIe generation
 * unless --cpu names one; an AMD part makes the sockets AMD for NCCL's
 * rules (AMD_BW, the search's refusal of SYS paths inside a node), with
 * the catalogue's xGMI figure as the physical link. */
static void test_pcie_cpu(void)
{
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    o.gpu = "l40s";
    g_autoptr(cs_topo_t) t = build("pcie", &o);
    const cs_device_t *c0 = &t->devs[dev(t, "cpu0")];
    g_assert_cmpint(c0->vendor, ==, CS_CPU_INTEL);
    g_assert_cmpint(c0->modelid, ==, 0x6A);             /* Gen4: Ice Lake-SP */
    g_assert_null(strstr(t->source, "--cpu"));
    g_clear_pointer(&t, cs_topo_free);

    o.gpu = "rtx5090";
    o.cpu = "turin";
    t = build("pcie", &o);
    c0 = &t->devs[dev(t, "cpu0")];
    g_assert_cmpint(c0->vendor, ==, CS_CPU_AMD);
    g_assert_cmpint(c0->familyid, ==, 0x1A);
    g_assert_cmpint(t->devs[dev(t, "cpu1")].vendor, ==, CS_CPU_AMD);
    g_assert_cmpfloat_with_epsilon(link_between(t, dev(t, "cpu0"), dev(t, "cpu1"))->bw, 256e9, 1);
    g_assert_nonnull(strstr(t->description, "2 x AMD EPYC 9005 (Turin)"));
    g_assert_cmpstr(t->source, ==, "preset:pcie --gpu rtx5090 --gpus 8 --sockets 2 --cpu turin");
    g_clear_pointer(&t, cs_topo_free);

    /* one socket: no inter-socket link, the part still names the vendor */
    o.gpus = 2;
    o.cpu = "genoa";
    t = build("pcie", &o);
    g_assert_cmpint(count_devs(t, CS_DEV_CPU), ==, 1);
    g_assert_cmpint(t->devs[dev(t, "cpu0")].familyid, ==, 0x19);
    g_clear_pointer(&t, cs_topo_free);

    /* only x86 parts: a Grace is a superchip's, not a PCIe server's */
    o.cpu = "grace";
    expect_error("pcie", &o, "collsim: --cpu: unknown CPU part 'grace'", "bdw, skl, icx, spr, emr, rome, genoa, turin");
    cs_build_opts_init(&o);
    o.cpu = "rome";
    expect_error("dgx-a100", &o, "collsim: --cpu: applies to the pcie preset only", "no --cpu with dgx-a100");

    /* CPUIDs as NCCL's XML carries them find the same parts; Zen 3
     * (family 0x19 below model 0x10) has none */
    g_assert_cmpstr(cs_cpu_part_by_cpuid(CS_CPU_AMD, 0x1A, 0x02)->key, ==, "turin");
    g_assert_cmpstr(cs_cpu_part_by_cpuid(CS_CPU_AMD, 0x19, 0x11)->key, ==, "genoa");
    g_assert_null(cs_cpu_part_by_cpuid(CS_CPU_AMD, 0x19, 0x01));
    g_assert_cmpstr(cs_cpu_part_by_cpuid(CS_CPU_AMD, 23, 0x31)->key, ==, "rome");
    g_assert_null(cs_cpu_part_find_x86("gb10-cpu"));
    g_assert_nonnull(cs_cpu_part_find("gb10-cpu"));
}

/* An AWS g4dn-class host: one T4 (Gen3 x16, a data-centre part: P2P and
 * GPUDirect RDMA), a 50 GbE NIC (sockets: no RDMA). */
static void test_pcie_t4(void)
{
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    o.gpu = "tesla-t4";
    o.gpus = 1;
    o.nic = "eth-50g";
    g_autoptr(cs_topo_t) t = build("pcie", &o);
    const cs_device_t *g0 = &t->devs[dev(t, "gpu0")];
    g_assert_cmpstr(g0->gpu->name, ==, "t4");
    g_assert_cmpint(g0->gpu->sm, ==, 75);
    g_assert_true(cs_device_p2p(g0));
    g_assert_true(g0->gdr);
    g_assert_cmpint(link_between(t, pci_parent(t, dev(t, "gpu0")), dev(t, "gpu0"))->pcie_gen, ==, 3);
    const cs_device_t *n0 = &t->devs[dev(t, "nic0")];
    g_assert_cmpfloat_with_epsilon(n0->nic_bw, 50e9 / 8, 1);
    g_assert_cmpint(n0->nic_kind, ==, CS_NIC_ETH);
    g_assert_cmpstr(cs_gpu_model_by_pci(0x10de, 0x1eb8)->name, ==, "t4");
}

/* ---- clusters ------------------------------------------------------------------- */

static void test_cluster_h100(void)
{
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    o.nodes = 4;
    g_autoptr(cs_topo_t) t = build("dgx-h100", &o);
    g_assert_cmpint(t->ngpus, ==, 32);
    g_assert_cmpint(t->nnodes, ==, 4);
    for (int r = 0; r < 32; r++) {
        const cs_device_t *g = cs_topo_rank_dev(t, r);
        char name[16];
        g_snprintf(name, sizeof name, "n%d.gpu%d", r / 8, r % 8);
        g_assert_cmpstr(g->name, ==, name);
        g_assert_cmpint(g->node, ==, r / 8);
        g_assert_cmpint(g->local, ==, r % 8);
        g_assert_cmpint(g->rank, ==, r);
    }
    /* rail: 8 NICs per node, 32 nodes per Quantum-2 leaf (64 ports / 2), so
     * one leaf per rail and no spine */
    g_assert_cmpint(count_devs(t, CS_DEV_SWITCH), ==, 8);
    g_assert_cmpint(t->ndevs, ==, 4 * 27 + 8);
    g_assert_cmpint(t->fabric.kind, ==, CS_FABRIC_RAIL);
    g_assert_cmpint(t->fabric.nodes_per_leaf, ==, 32);
    g_assert_cmpfloat_with_epsilon(t->fabric.oversubscription, 1.0, 1e-12);
    g_assert_cmpfloat_with_epsilon(t->fabric.switch_lat, cs_nic_type_find("ib-ndr")->lat, 1e-15);
    for (int n = 0; n < 4; n++)
        for (int k = 0; k < 8; k++) {
            char nic[16], leaf[16];
            g_snprintf(nic, sizeof nic, "n%d.nic%d", n, k);
            g_snprintf(leaf, sizeof leaf, "rail%d.leaf0", k);
            g_assert_cmpint(net_switch_of(t, dev(t, nic)), ==, dev(t, leaf));
        }
    g_assert_cmpint(count_links(t, CS_LINK_NET), ==, 32);
    g_assert_cmpstr(t->source, ==, "preset:dgx-h100 --nodes 4 --nic ib-ndr --nics-per-node 8 --fabric rail");
    g_assert_cmpstr(t->description, ==,
                    "4 x DGX H100 (8x H100-SXM, NVLink4 via NVSwitch), 8x ib-ndr per node, rail fabric");
    /* cables carry the NIC's rate and no latency (the switch's is in
     * fabric.switch_lat) */
    const cs_link_t *up = link_between(t, dev(t, "n0.nic0"), dev(t, "rail0.leaf0"));
    g_assert_cmpfloat_with_epsilon(up->bw, 50e9, 1);
    g_assert_cmpfloat_with_epsilon(up->lat, 0.0, 1e-15);
}

/* uplink capacity of a leaf: sum of its links to tier-1 switches */
static double leaf_uplink(const cs_topo_t *t, int leaf, int *nup_p)
{
    double bw = 0;
    int n = 0;
    for (int i = t->adj_off[leaf]; i < t->adj_off[leaf + 1]; i++) {
        const cs_link_t *l = &t->links[t->adj[i]];
        if (t->devs[l->dst].kind == CS_DEV_SWITCH && t->devs[l->dst].tier == 1) {
            bw += l->bw;
            n++;
        }
    }
    *nup_p = n;
    return bw;
}

static void test_oversubscription(void)
{
    /* 64 DGX H100 = 2 groups of 32 per rail: 16 leaves, ceil(16/2) = 8
     * spines, each leaf's uplinks = 32 ports x 400G / oversubscription */
    for (int i = 0; i < 2; i++) {
        double over = i == 0 ? 1.0 : 2.0;
        cs_build_opts_t o;
        cs_build_opts_init(&o);
        o.nodes = 64;
        o.oversubscription = over;
        g_autoptr(cs_topo_t) t = build("dgx-h100", &o);
        g_assert_cmpint(t->ngpus, ==, 512);
        int leaves = 0, spines = 0;
        for (int d = 0; d < t->ndevs; d++)
            if (t->devs[d].kind == CS_DEV_SWITCH) {
                if (t->devs[d].tier == 0) {
                    int nup;
                    leaves++;
                    g_assert_cmpfloat_with_epsilon(leaf_uplink(t, d, &nup), 32 * 50e9 / over, 1);
                    g_assert_cmpint(nup, ==, 8);
                } else {
                    g_assert_cmpint(t->devs[d].tier, ==, 1);
                    spines++;
                }
            }
        g_assert_cmpint(leaves, ==, 16);
        g_assert_cmpint(spines, ==, 8);
        g_assert_cmpint(net_switch_of(t, dev(t, "n33.nic5")), ==, dev(t, "rail5.leaf1"));
        g_assert_cmpfloat_with_epsilon(t->fabric.oversubscription, over, 1e-12);
        if (over > 1)
            g_assert_nonnull(strstr(t->source, "--oversubscription 2"));
    }
}

static void test_fat_tree(void)
{
    /* fat-tree: all 8 NICs of a node on one leaf; 32 down ports hold 4
     * nodes; 8 nodes -> 2 leaves and 1 spine */
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    o.nodes = 8;
    o.fabric = "fat-tree";
    g_autoptr(cs_topo_t) t = build("dgx-h100", &o);
    g_assert_cmpint(t->fabric.kind, ==, CS_FABRIC_FAT_TREE);
    g_assert_cmpint(t->fabric.nodes_per_leaf, ==, 4);
    g_assert_cmpint(count_devs(t, CS_DEV_SWITCH), ==, 3);
    g_assert_cmpint(net_switch_of(t, dev(t, "n3.nic7")), ==, dev(t, "leaf0"));
    g_assert_cmpint(net_switch_of(t, dev(t, "n4.nic0")), ==, dev(t, "leaf1"));
    int nup;
    g_assert_cmpfloat_with_epsilon(leaf_uplink(t, dev(t, "leaf1"), &nup), 32 * 50e9, 1);
    g_assert_cmpint(nup, ==, 1);
}

static void test_ethernet_single_nic(void)
{
    /* 16 nodes of one RTX 2080 Ti on 10 GbE (NCCL's socket transport): one
     * NIC per node -> fat-tree default, 24 down ports on a 48-port switch */
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    o.gpu = "rtx2080ti";
    o.gpus = 1;
    o.nodes = 16;
    o.nic = "eth-10g";
    g_autoptr(cs_topo_t) t = build("pcie", &o);
    g_assert_cmpint(t->ngpus, ==, 16);
    g_assert_cmpint(t->fabric.kind, ==, CS_FABRIC_FAT_TREE);
    g_assert_cmpint(count_devs(t, CS_DEV_SWITCH), ==, 1);
    const cs_device_t *nic = &t->devs[dev(t, "n15.nic0")];
    g_assert_cmpstr(nic->ifname, ==, "eth0");
    g_assert_false(nic->gdr);
    g_assert_cmpint(nic->nic_kind, ==, CS_NIC_ETH);
    g_assert_cmpfloat_with_epsilon(nic->nic_bw, 10e9 / 8, 1);

    /* plain 1 GbE works too */
    o.nic = "eth-1g";
    g_autoptr(cs_topo_t) t1 = build("pcie", &o);
    g_assert_cmpfloat_with_epsilon(t1->devs[dev(t1, "n0.nic0")].nic_bw, 1e9 / 8, 1);
}

static void test_nic_count_and_type(void)
{
    /* DGX A100 on RoCE 200G with 4 of its 8 NICs */
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    o.nodes = 2;
    o.nic = "roce-200g";
    o.nics_per_node = 4;
    g_autoptr(cs_topo_t) t = build("dgx-a100", &o);
    int nics[64];
    g_assert_cmpint(cs_topo_node_nics(t, 1, nics, 64), ==, 4);
    for (int k = 0; k < 4; k++) {
        g_assert_cmpint(t->devs[nics[k]].nic_kind, ==, CS_NIC_ROCE);
        g_assert_cmpint(t->devs[nics[k]].local, ==, k);
    }
    g_assert_cmpint(cs_topo_find(t, "n0.nic4"), ==, -1);
    g_assert_cmpint(count_links(t, CS_LINK_NET), ==, 8);
    g_clear_pointer(&t, cs_topo_free);

    /* 16 NICs on a DGX H100: 8 more, one under each GPU's switch */
    cs_build_opts_init(&o);
    o.nodes = 2;
    o.nics_per_node = 16;
    t = build("dgx-h100", &o);
    g_assert_cmpint(cs_topo_node_nics(t, 0, nics, 64), ==, 16);
    g_assert_cmpint(pci_parent(t, dev(t, "n1.nic8")), ==, pci_parent(t, dev(t, "n1.gpu0")));
    g_assert_cmpint(pci_parent(t, dev(t, "n1.nic15")), ==, pci_parent(t, dev(t, "n1.gpu7")));
    g_assert_cmpint(count_devs(t, CS_DEV_SWITCH), ==, 16);   /* 16 rails, 1 leaf each */
}

static void test_restrict(void)
{
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    o.gpus = 4;
    g_autoptr(cs_topo_t) t = build("dgx-h100", &o);
    g_assert_cmpint(t->ngpus, ==, 4);
    g_assert_cmpint(cs_topo_find(t, "gpu4"), ==, -1);
    g_assert_cmpint(cs_topo_rank_dev(t, 3)->local, ==, 3);
    g_assert_cmpstr(t->source, ==, "preset:dgx-h100 --gpus 4");
    g_assert_nonnull(strstr(t->description, "first 4 of 8"));
    g_clear_pointer(&t, cs_topo_free);

    o.nodes = 2;
    t = build("dgx1-v100", &o);
    g_assert_cmpint(t->ngpus, ==, 8);
    g_assert_cmpstr(cs_topo_rank_dev(t, 4)->name, ==, "n1.gpu0");
    /* the first quad keeps its NVLinks: 0-3 double */
    g_assert_cmpint(nvl_count(t, "n1.gpu0", "n1.gpu3"), ==, 2);
}

static void test_big(void)
{
    /* 1000 x DGX H100 (8000 GPUs): 8 rails x 32 groups = 256 leaves > 64,
     * so pods of 32 leaves with 32 spines each and 32 cores */
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    o.nodes = 1000;
    gint64 t0 = g_get_monotonic_time();
    g_autoptr(cs_topo_t) t = build("dgx-h100", &o);
    gint64 us = g_get_monotonic_time() - t0;
    if (g_test_verbose())
        g_printerr("1000 x dgx-h100: %.1f ms\n", us / 1000.0);
    g_assert_cmpint(t->ngpus, ==, 8000);
    int leaves = 0, spines = 0, cores = 0;
    for (int d = 0; d < t->ndevs; d++)
        if (t->devs[d].kind == CS_DEV_SWITCH)
            (t->devs[d].tier == 0 ? &leaves : t->devs[d].tier == 1 ? &spines : &cores)[0]++;
    g_assert_cmpint(leaves, ==, 256);
    g_assert_cmpint(spines, ==, 8 * 32);
    g_assert_cmpint(cores, ==, 32);
    g_assert_cmpint(cs_topo_rank_dev(t, 7999)->node, ==, 999);
    g_clear_pointer(&t, cs_topo_free);

    /* 16384 GPUs */
    o.nodes = 2048;
    t0 = g_get_monotonic_time();
    t = build("dgx-b200", &o);
    us = g_get_monotonic_time() - t0;
    if (g_test_verbose())
        g_printerr("2048 x dgx-b200: %.1f ms\n", us / 1000.0);
    g_assert_cmpint(t->ngpus, ==, 16384);
    /* 8 rails x 64 groups = 512 leaves: 16 pods x 32 spines, 32 cores; a
     * spine's core link carries its pod's 32 leaves x U/32 = U */
    int sp = dev(t, "pod15.spine31"), core = dev(t, "core31");
    g_assert_cmpfloat_with_epsilon(link_between(t, sp, core)->bw, 32 * 50e9, 1);
    g_assert_cmpint(net_switch_of(t, dev(t, "n2047.nic7")), ==, dev(t, "rail7.leaf63"));
}

static void test_cluster_from_node(void)
{
    /* a hand-made node without NICs (as a file would give), NICs added
     * under its one PCIe switch */
    g_autoptr(cs_topo_t) n = cs_topo_new("mynode.xml");
    cs_device_t d;
    memset(&d, 0, sizeof d);
    d.kind = CS_DEV_CPU;
    d.name = "cpu0";
    d.local = -1;
    int cpu = cs_topo_add_device(n, &d);
    d.kind = CS_DEV_PCISW;
    d.name = "sw";
    int sw = cs_topo_add_device(n, &d);
    d.kind = CS_DEV_GPU;
    d.gpu = cs_gpu_model_find("l40s");
    for (int i = 0; i < 2; i++) {
        char name[8];
        g_snprintf(name, sizeof name, "g%d", i);
        d.name = name;
        d.local = i;
        int g = cs_topo_add_device(n, &d);
        cs_topo_add_link(n, sw, g, CS_LINK_PCI, 25e9, 0, 0);
    }
    cs_topo_add_link(n, cpu, sw, CS_LINK_PCI, 25e9, 0, 0);
    n->description = g_strdup("my node");
    GError *err = NULL;
    g_assert_true(cs_topo_finish(n, &err));

    cs_build_opts_t o;
    cs_build_opts_init(&o);
    o.nodes = 3;
    g_assert_null(cs_cluster_build(n, &o, &err));
    g_assert_error(err, CS_ERROR, CS_ERROR_INPUT);
    g_assert_nonnull(strstr(err->message, "--nic"));
    g_clear_error(&err);

    o.nic = "roce-400g";
    o.nics_per_node = 2;
    g_autoptr(cs_topo_t) t = cs_cluster_build(n, &o, &err);
    g_assert_no_error(err);
    g_assert_cmpint(t->ngpus, ==, 6);
    g_assert_cmpint(pci_parent(t, dev(t, "n2.nic1")), ==, dev(t, "n2.sw"));
    g_assert_cmpstr(t->devs[dev(t, "n2.nic1")].ifname, ==, "mlx5_1");
    g_assert_cmpint(t->fabric.kind, ==, CS_FABRIC_RAIL);
    g_assert_cmpstr(t->description, ==, "3 x my node, 2x roce-400g per node, rail fabric");
    g_assert_cmpstr(t->source, ==, "mynode.xml --nodes 3 --nic roce-400g --nics-per-node 2 --fabric rail");

    /* a cluster is not a node */
    cs_build_opts_init(&o);
    o.nodes = 2;
    g_assert_null(cs_cluster_build(t, &o, &err));
    g_assert_nonnull(strstr(err->message, "one-node"));
    g_clear_error(&err);
}

static void test_errors(void)
{
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    expect_error("dgx-z", &o, "collsim: --topo: unknown preset 'dgx-z'", "dgx-h100, dgx-h800");
    o.nodes = 0;
    expect_error("dgx-h100", &o, "--nodes", NULL);
    cs_build_opts_init(&o);
    o.oversubscription = 0.5;
    expect_error("dgx-h100", &o, "--oversubscription", ">= 1");
    cs_build_opts_init(&o);
    o.nic = "ib-foo";
    expect_error("dgx-h100", &o, "unknown NIC type 'ib-foo'", "ib-ndr");
    cs_build_opts_init(&o);
    o.fabric = "torus";
    expect_error("dgx-h100", &o, "unknown fabric 'torus'", "rail or fat-tree");
    cs_build_opts_init(&o);
    o.nics_per_node = -1;
    expect_error("dgx-h100", &o, "--nics-per-node", NULL);
    o.nics_per_node = 145;
    expect_error("dgx-h100", &o, "collsim: --nics-per-node: 145 is out of range",
                 "expected a number of NICs per node from 1 to 144");
    cs_build_opts_init(&o);
    o.nodes = 65537;
    expect_error("dgx-h100", &o, "collsim: --nodes: 65537 is out of range",
                 "expected a number of nodes from 1 to 65536");
    /* a fixed machine takes no node option (was silently ignored) */
    cs_build_opts_init(&o);
    o.gpu = "l40s";
    expect_error("dgx-h100", &o, "collsim: --gpu: applies to the pcie preset only", "expected no --gpu with dgx-h100");
    cs_build_opts_init(&o);
    o.sockets = 1;
    expect_error("dgx-b200", &o, "collsim: --sockets: applies to the pcie preset only", "no --sockets with dgx-b200");
    cs_build_opts_init(&o);
    o.p2p = 0;
    expect_error("dgx1-v100", &o, "collsim: --p2p: applies to the pcie preset only", "no --p2p with dgx1-v100");
    g_assert_true(cs_preset_takes_node_options("pcie"));
    g_assert_false(cs_preset_takes_node_options("hgx-h200"));
    g_assert_null(cs_preset_node_option_refusal("pcie", "--gpu"));
    cs_build_opts_init(&o);
    o.gpus = 9;
    expect_error("dgx-h100", &o, "--gpus", "1..8");
    cs_build_opts_init(&o);
    expect_error("pcie", &o, "collsim: --gpu: the pcie preset needs a GPU model", "l40s");
    o.gpu = "h100-sxm";
    expect_error("pcie", &o, "--gpu", "dgx");
    o.gpu = "nosuchgpu";
    expect_error("pcie", &o, "unknown GPU model 'nosuchgpu'", NULL);
    o.gpu = "l40s";
    o.nodes = 2;
    expect_error("pcie", &o, "--nic", "no NIC");
}

static void test_names_docs(void)
{
    static const char *const names[] = { "dgx1-v100", "dgx-a100", "dgx-h100", "dgx-h800",
                                         "hgx-h200", "dgx-b200", "pcie" };
    for (gsize i = 0; i < G_N_ELEMENTS(names); i++) {
        g_assert_true(cs_preset_exists(names[i]));
        g_assert_nonnull(strstr(cs_preset_names(), names[i]));
        g_assert_nonnull(cs_preset_doc(names[i]));
        g_assert_null(strchr(cs_preset_doc(names[i]), '\n'));
    }
    g_assert_false(cs_preset_exists("dgx-h1000"));
    g_assert_null(cs_preset_doc("dgx-h1000"));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/presets/dgx1-v100", test_dgx1);
    g_test_add_func("/presets/dgx-a100", test_dgx_a100);
    g_test_add_func("/presets/hgx", test_hgx);
    g_test_add_func("/presets/pcie", test_pcie);
    g_test_add_func("/presets/pcie-cpu", test_pcie_cpu);
    g_test_add_func("/presets/pcie-t4", test_pcie_t4);
    g_test_add_func("/presets/cluster-h100", test_cluster_h100);
    g_test_add_func("/presets/oversubscription", test_oversubscription);
    g_test_add_func("/presets/fat-tree", test_fat_tree);
    g_test_add_func("/presets/ethernet", test_ethernet_single_nic);
    g_test_add_func("/presets/nic-count-type", test_nic_count_and_type);
    g_test_add_func("/presets/restrict", test_restrict);
    g_test_add_func("/presets/big", test_big);
    g_test_add_func("/presets/cluster-from-node", test_cluster_from_node);
    g_test_add_func("/presets/errors", test_errors);
    g_test_add_func("/presets/names-docs", test_names_docs);
    return g_test_run();
}
