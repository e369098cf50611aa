/* Topology files: the example topologies and test files load with the
 * counts, derived bandwidths and NCCL paths worked out by hand below; every
 * bad file fails with exactly its one-line message; NCCL's dump of a DGX
 * H100 gives the expected GPUs, NVSwitch and NIC placement; writing and
 * reading back gives the same graph. */
#include "config.h"

#include <string.h>
#include <glib/gstdio.h>
#include <libxml/tree.h>

#include "io/cs_topo_xml.h"
#include "models/cs_paths.h"
#include "models/cs_presets.h"
#include "util/cs_error.h"

/* Hand-derived PCIe figures (128b/130b coding from Gen3 on):
 * Gen5 x16 = 32 GT/s * 16 lanes * 128/130 / 8 bits, and so on. */
#define PCIE5_X16 (32e9 * 16 * 128.0 / 130.0 / 8)
#define PCIE4_X16 (16e9 * 16 * 128.0 / 130.0 / 8)
#define PCIE3_X16 (8e9 * 16 * 128.0 / 130.0 / 8)
#define EPS_BW 1e3          /* bytes/s: far below any rounding that matters */

static char *data_path(const char *name)
{
    return g_test_build_filename(G_TEST_DIST, "data", "xml", name, NULL);
}

static char *topo_path(const char *name)
{
    return g_test_build_filename(G_TEST_DIST, "..", "topologies", name, NULL);
}

static cs_topo_t *load_ok(const char *path)
{
    g_autoptr(GError) err = NULL;
    cs_topo_t *t = cs_topo_xml_load(path, &err);
    if (t == NULL)
        g_error("%s", err->message);
    g_assert_true(t->finished);
    return t;
}

static cs_topo_t *load_str(const char *xml, const char *name, GError **err)
{
    return cs_topo_xml_load_mem(xml, strlen(xml), name, err);
}

static int dev(const cs_topo_t *t, const char *name)
{
    int d = cs_topo_find(t, name);
    if (d < 0)
        g_error("no device %s", name);
    return d;
}

/* The a->b link of a given kind, or NULL. */
static const cs_link_t *link_between(const cs_topo_t *t, const char *a, const char *b, cs_link_kind_t kind)
{
    int da = dev(t, a), db = dev(t, b);
    for (int k = t->adj_off[da]; k < t->adj_off[da + 1]; k++) {
        const cs_link_t *l = &t->links[t->adj[k]];
        if (l->dst == db && l->kind == kind)
            return l;
    }
    return NULL;
}

static const cs_link_t *need_link(const cs_topo_t *t, const char *a, const char *b, cs_link_kind_t kind)
{
    const cs_link_t *l = link_between(t, a, b, kind);
    if (l == NULL)
        g_error("no %s link %s - %s", cs_link_kind_name(kind), a, b);
    return l;
}

static void assert_path(const cs_topo_t *t, const char *a, const char *b, cs_path_type_t type, double bw)
{
    cs_path_t p;
    cs_path_intra(t, dev(t, a), dev(t, b), FALSE, &p);
    if (p.type != type)
        g_error("path %s -> %s is %s; expected %s", a, b, cs_path_type_name(p.type), cs_path_type_name(type));
    if (bw > 0)
        g_assert_cmpfloat_with_epsilon(p.bw, bw, EPS_BW);
}

static int count_kind(const cs_topo_t *t, cs_dev_kind_t k)
{
    int n = 0;
    for (int i = 0; i < t->ndevs; i++)
        n += t->devs[i].kind == k;
    return n;
}

/* ---- example topologies ------------------------------------------------- */

static void test_dgx_h100(void)
{
    g_autofree char *path = topo_path("dgx-h100.xml");
    g_autoptr(cs_topo_t) t = load_ok(path);
    g_assert_cmpint(t->nnodes, ==, 1);
    g_assert_cmpint(t->ngpus, ==, 8);
    /* 2 CPUs, 8 GPUs, 8 PCIe switches, 8 NICs, 1 NVSwitch. */
    g_assert_cmpint(t->ndevs, ==, 27);
    /* sys + 8 x (cpu-switch, switch-gpu, switch-nic, gpu-nvswitch) */
    g_assert_cmpint(t->nlinks, ==, 2 * 33);
    g_assert_cmpstr(t->description, ==, "DGX H100 (8x H100-SXM, NVLink4 via NVSwitch)");
    const cs_device_t *g3 = &t->devs[dev(t, "gpu3")];
    g_assert_cmpstr(g3->gpu->name, ==, "h100-sxm");
    g_assert_cmpint(g3->rank, ==, 3);
    g_assert_true(g3->gdr);

    /* NVLink: 18 links x 25 GB/s (H100 NVLink4 per link per direction);
     * NCCL's view: 18 x 20.6 (topo.h SM90_NVLINK_BW). */
    const cs_link_t *nvl = need_link(t, "gpu0", "nvs0", CS_LINK_NVL);
    g_assert_cmpint(nvl->count, ==, 18);
    g_assert_cmpfloat_with_epsilon(nvl->bw, 18 * 25e9, EPS_BW);
    g_assert_cmpfloat_with_epsilon(nvl->nccl_bw, 18 * 20.6, 1e-9);
    g_assert_cmpfloat_with_epsilon(need_link(t, "nvs0", "gpu0", CS_LINK_NVL)->bw, 18 * 25e9, EPS_BW);
    /* PCIe: the GPU's and NIC's own Gen5 x16; NCCL 16 * 240 / 80 = 48. */
    const cs_link_t *pg = need_link(t, "pcisw0", "gpu0", CS_LINK_PCI);
    g_assert_cmpint(pg->pcie_gen, ==, 5);
    g_assert_cmpint(pg->pcie_width, ==, 16);
    g_assert_cmpfloat_with_epsilon(pg->bw, PCIE5_X16, EPS_BW);
    g_assert_cmpfloat_with_epsilon(pg->nccl_bw, 48.0, 1e-9);
    g_assert_cmpfloat_with_epsilon(need_link(t, "pcisw4", "nic4", CS_LINK_PCI)->bw, PCIE5_X16, EPS_BW);
    /* Intel sockets: 4 UPI x 16 GT/s x 2 bytes. */
    g_assert_cmpfloat_with_epsilon(need_link(t, "cpu0", "cpu1", CS_LINK_SYS)->bw, 128e9, EPS_BW);
    /* ib-ndr: 400 Gb/s. */
    g_assert_cmpfloat_with_epsilon(t->devs[dev(t, "nic2")].nic_bw, 50e9, EPS_BW);
    g_assert_cmpstr(t->devs[dev(t, "nic2")].ifname, ==, "mlx5_2");
    g_assert_cmpint(t->devs[dev(t, "nic2")].nic_kind, ==, CS_NIC_IB);

    assert_path(t, "gpu0", "gpu7", CS_PATH_NVL, 18 * 25e9);
    assert_path(t, "gpu0", "nic0", CS_PATH_PIX, PCIE5_X16);
    assert_path(t, "gpu5", "nic5", CS_PATH_PIX, PCIE5_X16);
    assert_path(t, "gpu0", "nic1", CS_PATH_PHB, PCIE5_X16);
    assert_path(t, "gpu0", "nic4", CS_PATH_SYS, PCIE5_X16);
}

/* The example file describes the dgx-h100 preset: same devices, same links. */
static void test_dgx_h100_matches_preset(void)
{
    g_autofree char *path = topo_path("dgx-h100.xml");
    g_autoptr(cs_topo_t) f = load_ok(path);
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    g_autoptr(GError) err = NULL;
    g_autoptr(cs_topo_t) p = cs_preset_build("dgx-h100", &o, &err);
    g_assert_no_error(err);
    g_assert_cmpint(f->ndevs, ==, p->ndevs);
    g_assert_cmpint(f->nlinks, ==, p->nlinks);
    for (int i = 0; i < p->ndevs; i++) {
        const cs_device_t *a = &p->devs[i];
        int j = cs_topo_find(f, a->name);
        if (j < 0)
            g_error("the file lacks the preset's %s", a->name);
        const cs_device_t *b = &f->devs[j];
        g_assert_cmpint(a->kind, ==, b->kind);
        g_assert_true(a->gpu == b->gpu);
        g_assert_cmpint(a->rank, ==, b->rank);
        g_assert_cmpint(a->gdr, ==, b->gdr);
        g_assert_cmpfloat(a->nic_bw, ==, b->nic_bw);
        g_assert_cmpint(a->vendor, ==, b->vendor);
        g_assert_cmpint(a->familyid, ==, b->familyid);
        g_assert_cmpint(a->modelid, ==, b->modelid);
    }
    for (int i = 0; i < p->nlinks; i++) {
        const cs_link_t *a = &p->links[i];
        const cs_link_t *b = need_link(f, p->devs[a->src].name, p->devs[a->dst].name, a->kind);
        g_assert_cmpfloat_with_epsilon(a->bw, b->bw, EPS_BW);
        g_assert_cmpfloat(a->lat, ==, b->lat);
        g_assert_cmpint(a->count, ==, b->count);
        g_assert_cmpint(a->pcie_gen, ==, b->pcie_gen);
        g_assert_cmpint(a->pcie_width, ==, b->pcie_width);
        g_assert_cmpfloat_with_epsilon(a->nccl_bw, b->nccl_bw, 1e-9);
    }
}

static void test_pcie_2socket(void)
{
    g_autofree char *path = topo_path("pcie-2socket.xml");
    g_autoptr(cs_topo_t) t = load_ok(path);
    g_assert_cmpint(t->ngpus, ==, 8);
    g_assert_cmpint(t->ndevs, ==, 16);
    g_assert_cmpint(t->nlinks, ==, 2 * 15);
    /* L40S: Gen4 x16; roce-100g NIC: Gen3 x16; AMD sockets 4 x 32 GB/s. */
    g_assert_cmpfloat_with_epsilon(need_link(t, "sw0", "gpu1", CS_LINK_PCI)->bw, PCIE4_X16, EPS_BW);
    g_assert_cmpfloat_with_epsilon(need_link(t, "sw2", "nic1", CS_LINK_PCI)->bw, PCIE3_X16, EPS_BW);
    g_assert_cmpfloat_with_epsilon(need_link(t, "cpu0", "cpu1", CS_LINK_SYS)->bw, 128e9, EPS_BW);
    g_assert_cmpint(t->devs[dev(t, "nic0")].nic_kind, ==, CS_NIC_ROCE);
    g_assert_cmpfloat_with_epsilon(t->devs[dev(t, "nic0")].nic_bw, 12.5e9, EPS_BW);
    g_assert_cmpint(count_kind(t, CS_DEV_NVSWITCH), ==, 0);
    assert_path(t, "gpu0", "gpu1", CS_PATH_PIX, PCIE4_X16);
    assert_path(t, "gpu0", "gpu2", CS_PATH_PHB, PCIE4_X16);
    assert_path(t, "gpu0", "gpu4", CS_PATH_SYS, PCIE4_X16);
    assert_path(t, "gpu1", "nic0", CS_PATH_PIX, PCIE3_X16);
    assert_path(t, "gpu6", "nic1", CS_PATH_PHB, PCIE3_X16);
}

static void test_cluster_rail(void)
{
    g_autofree char *path = topo_path("cluster-2node-rail.xml");
    g_autoptr(cs_topo_t) t = load_ok(path);
    g_assert_cmpint(t->nnodes, ==, 2);
    g_assert_cmpint(t->ngpus, ==, 8);
    /* 2 x (cpu, 2 switches, 4 GPUs, 2 NICs) + 3 fabric switches */
    g_assert_cmpint(t->ndevs, ==, 21);
    /* 2 x (2 + 4 + 6 + 2) + 4 NIC cables + 2 leaf-spine */
    g_assert_cmpint(t->nlinks, ==, 2 * 34);
    g_assert_cmpint(t->devs[dev(t, "n1.gpu0")].rank, ==, 4);
    g_assert_cmpint(t->devs[dev(t, "n1.gpu0")].node, ==, 1);
    g_assert_cmpint(t->devs[dev(t, "spine0")].node, ==, -1);
    g_assert_cmpint(t->devs[dev(t, "spine0")].tier, ==, 1);
    /* A100 NVLink3: 4 x 25 GB/s. */
    g_assert_cmpfloat_with_epsilon(need_link(t, "n1.gpu2", "n1.gpu3", CS_LINK_NVL)->bw, 100e9, EPS_BW);
    /* Cable defaults to the NIC speed (roce-200g: 25 GB/s); leaf-spine as written. */
    g_assert_cmpfloat_with_epsilon(need_link(t, "n1.nic1", "rail1", CS_LINK_NET)->bw, 25e9, EPS_BW);
    const cs_link_t *up = need_link(t, "rail0", "spine0", CS_LINK_NET);
    g_assert_cmpfloat_with_epsilon(up->bw, 100e9, EPS_BW);
    g_assert_cmpint(up->count, ==, 2);
    g_assert_cmpint(t->fabric.kind, ==, CS_FABRIC_RAIL);
    g_assert_cmpint(t->fabric.nodes_per_leaf, ==, 2);
    /* The catalogue's RoCE switch latency (cs_hw.c: 600 ns). */
    g_assert_cmpfloat_with_epsilon(t->fabric.switch_lat, cs_nic_type_find("roce-200g")->lat, 1e-15);
    assert_path(t, "n0.gpu0", "n0.gpu3", CS_PATH_NVL, 100e9);
    assert_path(t, "n0.gpu0", "n0.nic0", CS_PATH_PIX, PCIE4_X16);
    cs_path_t p;
    g_assert_true(cs_path_net(t, dev(t, "n0.nic0"), dev(t, "n1.nic1"), 0, &p));
    g_assert_cmpint(p.nhops, ==, 4);   /* nic, rail0, spine0, rail1, nic */
    g_assert_cmpfloat_with_epsilon(p.bw, 25e9, EPS_BW);
}

static void test_cluster_implicit(void)
{
    g_autofree char *path = topo_path("cluster-16node-fat-tree.xml");
    g_autoptr(cs_topo_t) t = load_ok(path);
    g_assert_cmpint(t->nnodes, ==, 16);
    g_assert_cmpint(t->ngpus, ==, 64);
    g_assert_cmpint(t->devs[dev(t, "n15.gpu3")].rank, ==, 63);
    g_assert_cmpint(t->fabric.kind, ==, CS_FABRIC_FAT_TREE);
    g_assert_cmpfloat(t->fabric.oversubscription, ==, 1.0);
    g_assert_cmpstr(t->source, ==, path);
    g_assert_cmpstr(t->description, ==, "16 nodes x 4 H100-PCIe, NDR fat tree");
    /* H100 PCIe NVLink bridge: 12 x 25 GB/s. */
    g_assert_cmpfloat_with_epsilon(need_link(t, "n7.gpu2", "n7.gpu3", CS_LINK_NVL)->bw, 300e9, EPS_BW);
    g_assert_cmpint(count_kind(t, CS_DEV_NIC), ==, 16);
    g_assert_cmpint(count_kind(t, CS_DEV_SWITCH), >=, 1);
    cs_path_t p;
    g_assert_true(cs_path_net(t, dev(t, "n0.nic0"), dev(t, "n15.nic0"), 0, &p));
    g_assert_cmpfloat_with_epsilon(p.bw, 50e9, EPS_BW);
}

/* ---- NCCL's dump ---------------------------------------------------------- */

static void test_nccl_dump(void)
{
    g_autofree char *path = data_path("nccl-dgx-h100.xml");
    g_autoptr(cs_topo_t) t = load_ok(path);
    g_assert_cmpint(t->nnodes, ==, 1);
    g_assert_cmpint(t->ngpus, ==, 8);
    /* 2 CPUs, 9 bridges, 8 GPUs, 9 NICs (8 compute, 1 dual-port), 1 NVSwitch */
    g_assert_cmpint(count_kind(t, CS_DEV_CPU), ==, 2);
    g_assert_cmpint(count_kind(t, CS_DEV_PCISW), ==, 9);
    g_assert_cmpint(count_kind(t, CS_DEV_NIC), ==, 9);
    g_assert_cmpint(count_kind(t, CS_DEV_NVSWITCH), ==, 1);
    g_assert_cmpint(t->ndevs, ==, 29);
    for (int r = 0; r < 8; r++) {
        const cs_device_t *g = cs_topo_rank_dev(t, r);
        g_assert_cmpstr(g->gpu->name, ==, "h100-sxm");   /* PCI id 0x2330 */
        g_assert_cmpint(g->pci_busid, !=, 0);            /* NCCL's GPU/0-<bus id> */
        g_assert_true(g->gdr);
        /* The four NVSwitch targets (5+4+4+5 links) are one NVSwitch. */
        const cs_link_t *l = need_link(t, g->name, "nvs0", CS_LINK_NVL);
        g_assert_cmpint(l->count, ==, 18);
        g_assert_cmpfloat_with_epsilon(l->bw, 18 * 25e9, EPS_BW);
        g_assert_cmpfloat_with_epsilon(l->nccl_bw, 18 * 20.6, 1e-9);
    }
    const cs_device_t *n0 = &t->devs[dev(t, "nic0")];
    g_assert_cmpstr(n0->ifname, ==, "mlx5_0");
    g_assert_cmpint(n0->nic_kind, ==, CS_NIC_IB);    /* class 0x0207: InfiniBand */
    g_assert_cmpfloat_with_epsilon(n0->nic_bw, 400000e6 / 8, EPS_BW);
    g_assert_true(n0->gdr);
    g_assert_cmpint(n0->nic_ports, ==, 1);
    const cs_device_t *n8 = &t->devs[dev(t, "nic8")];
    g_assert_cmpstr(n8->ifname, ==, "mlx5_8");
    g_assert_cmpint(n8->nic_ports, ==, 2);
    g_assert_cmpfloat_with_epsilon(n8->nic_bw, 200000e6 / 8, EPS_BW);
    g_assert_cmpint(n8->nic_kind, ==, CS_NIC_IB);    /* NCCL does not say; default */
    /* SPR (family 6, model 143 >= 0x8F): 4 UPI x 16 GT/s x 2 bytes. */
    g_assert_cmpfloat_with_epsilon(need_link(t, "cpu0", "cpu1", CS_LINK_SYS)->bw, 128e9, EPS_BW);
    g_assert_cmpint(t->devs[dev(t, "cpu1")].vendor, ==, CS_CPU_INTEL);
    g_assert_cmpint(t->devs[dev(t, "cpu1")].socket, ==, 1);
    g_assert_cmpint(t->devs[dev(t, "cpu1")].familyid, ==, 6);
    g_assert_cmpint(t->devs[dev(t, "cpu1")].modelid, ==, 143);
    g_assert_cmpfloat_with_epsilon(need_link(t, "cpu0", "cpu1", CS_LINK_SYS)->nccl_bw, 22.0, 1e-9);
    /* Each GPU shares a bridge with its NIC: PIX, at the PCIe Gen5 x16 rate. */
    for (int i = 0; i < 8; i++) {
        char g[16], n[16];
        g_snprintf(g, sizeof g, "gpu%d", i);
        g_snprintf(n, sizeof n, "nic%d", i);
        assert_path(t, g, n, CS_PATH_PIX, PCIE5_X16);
        g_assert_cmpint(t->devs[dev(t, n)].local, ==, i);
    }
    assert_path(t, "gpu0", "nic1", CS_PATH_PHB, 0);
    assert_path(t, "gpu0", "nic4", CS_PATH_SYS, 0);
    assert_path(t, "gpu0", "gpu5", CS_PATH_NVL, 18 * 25e9);
    assert_path(t, "gpu3", "nic8", CS_PATH_PHB, 0);
}

/* NIC kinds and placements the dump does not state directly. */
static void test_nccl_nic_kinds(void)
{
    static const char xml[] =
        "<system version=\"1\">\n"
        "  <cpu numaid=\"0\" arch=\"x86_64\" vendor=\"AuthenticAMD\" familyid=\"23\" modelid=\"49\">\n"
        "    <pci busid=\"0000:01:00.0\" class=\"0x060400\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n"
        "      <pci busid=\"0000:02:00.0\" class=\"0x030000\" vendor=\"0x10de\" device=\"0x2684\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n"
        "        <gpu dev=\"0\" sm=\"89\" rank=\"0\" gdr=\"0\"/>\n"
        "      </pci>\n"
        "      <pci busid=\"0000:03:00.0\" class=\"0x020000\" link_speed=\"8.0 GT/s PCIe\" link_width=\"8\">\n"
        "        <nic><net name=\"rocep3s0\" dev=\"1\" speed=\"100000\" port=\"1\" gdr=\"1\"/></nic>\n"
        "      </pci>\n"
        "      <pci busid=\"0000:04:00.0\" class=\"0x020000\" link_speed=\"\" link_width=\"\">\n"
        "        <nic><net name=\"mlx5_1\" dev=\"2\" speed=\"-1\" port=\"1\" gdr=\"0\"/></nic>\n"
        "      </pci>\n"
        "    </pci>\n"
        "    <nic><net name=\"eth0\" dev=\"0\" speed=\"10000\" port=\"0\" gdr=\"0\"/></nic>\n"
        "  </cpu>\n"
        "</system>\n";
    g_autoptr(GError) err = NULL;
    g_autoptr(cs_topo_t) t = load_str(xml, "kinds.xml", &err);
    g_assert_no_error(err);
    g_assert_cmpstr(cs_topo_rank_dev(t, 0)->gpu->name, ==, "rtx4090");   /* PCI id 0x2684 */
    g_assert_false(cs_topo_rank_dev(t, 0)->gdr);
    /* NICs in net dev order: eth0 (on the CPU), rocep3s0, mlx5_1. */
    const cs_device_t *a = &t->devs[dev(t, "nic0")], *b = &t->devs[dev(t, "nic1")], *c = &t->devs[dev(t, "nic2")];
    g_assert_cmpstr(a->ifname, ==, "eth0");
    g_assert_cmpint(a->nic_kind, ==, CS_NIC_ETH);
    g_assert_cmpstr(b->ifname, ==, "rocep3s0");
    g_assert_cmpint(b->nic_kind, ==, CS_NIC_ROCE);
    g_assert_cmpstr(c->ifname, ==, "mlx5_1");
    g_assert_cmpint(c->nic_kind, ==, CS_NIC_IB);
    /* speed -1: NCCL's 10000 Mb/s. */
    g_assert_cmpfloat_with_epsilon(c->nic_bw, 10000e6 / 8, EPS_BW);
    /* Empty link attributes: NCCL's fallbacks, Gen3 and x16. */
    const cs_link_t *lc = need_link(t, "pcisw0", "nic2", CS_LINK_PCI);
    g_assert_cmpint(lc->pcie_gen, ==, 3);
    g_assert_cmpint(lc->pcie_width, ==, 16);
    g_assert_cmpfloat_with_epsilon(need_link(t, "pcisw0", "nic1", CS_LINK_PCI)->bw,
                                   8e9 * 8 * 128.0 / 130.0 / 8, EPS_BW);
    /* A NIC without PCI path hangs off the CPU (NCCL's LOC_BW link). */
    g_assert_cmpfloat_with_epsilon(need_link(t, "cpu0", "nic0", CS_LINK_PCI)->bw, 5000e9, EPS_BW);
    assert_path(t, "gpu0", "nic1", CS_PATH_PIX, 0);
    assert_path(t, "gpu0", "nic0", CS_PATH_PHB, 0);
    g_assert_cmpint(t->devs[dev(t, "cpu0")].vendor, ==, CS_CPU_AMD);
}

/* GPU-GPU NVLink, listed by both GPUs, is one bundle; POWER NVLink to the
 * CPU; Grace C2C. */
static void test_nccl_links(void)
{
    static const char xml[] =
        "<system version=\"1\">\n"
        "  <cpu numaid=\"0\" arch=\"arm64\">\n"
        "    <pci busid=\"0009:01:00.0\" class=\"0x030200\" vendor=\"0x10de\" device=\"0x20b2\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n"
        "      <gpu dev=\"0\" sm=\"80\" rank=\"0\" gdr=\"1\">\n"
        "        <nvlink target=\"0009:02:00.0\" count=\"4\" tclass=\"0x030200\"/>\n"
        "        <c2c bw=\"45000\" count=\"10\"/>\n"
        "      </gpu>\n"
        "    </pci>\n"
        "    <pci busid=\"0009:02:00.0\" class=\"0x030200\" vendor=\"0x10de\" device=\"0x20b2\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n"
        "      <gpu dev=\"1\" sm=\"80\" rank=\"1\" gdr=\"1\">\n"
        "        <nvlink target=\"0009:01:00.0\" count=\"4\" tclass=\"0x030200\"/>\n"
        "        <nvlink target=\"0009:09:00.0\" count=\"2\" tclass=\"0x030200\"/>\n"
        "      </gpu>\n"
        "    </pci>\n"
        "  </cpu>\n"
        "</system>\n";
    g_autoptr(GError) err = NULL;
    g_autoptr(cs_topo_t) t = load_str(xml, "links.xml", &err);
    g_assert_no_error(err);
    g_assert_cmpint(t->nlinks, ==, 2 * 4);   /* 2 PCIe, 1 NVLink, 1 C2C */
    const cs_link_t *l = need_link(t, "gpu0", "gpu1", CS_LINK_NVL);
    g_assert_cmpint(l->count, ==, 4);
    g_assert_cmpfloat_with_epsilon(l->bw, 4 * 25e9, EPS_BW);
    const cs_link_t *c = need_link(t, "gpu0", "cpu0", CS_LINK_C2C);
    g_assert_cmpfloat_with_epsilon(c->bw, 45000e6 * 10, EPS_BW);
    g_assert_cmpfloat_with_epsilon(c->nccl_bw, 450.0, 1e-9);
    g_assert_cmpint(t->devs[dev(t, "cpu0")].vendor, ==, CS_CPU_ARM);
}

/* A sys link without bw= between AMD sockets: the catalogue part of their
 * CPUID family (EPYC 9005 Turin 0x1A, 9004 Genoa 0x19 from model 0x10:
 * 4 xGMI3 x16 at 32 GT/s), Rome's figure without one or for Zen 3. */
static void test_sys_amd_families(void)
{
    static const struct { const char *cpuid; double bw; } cases[] = {
        { " familyid=\"26\" modelid=\"2\"", 256e9 },
        { " familyid=\"25\" modelid=\"17\"", 256e9 },
        { " familyid=\"25\" modelid=\"1\"", 128e9 },
        { "", 128e9 },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *xml = g_strdup_printf(
            "<?xml version=\"1.0\"?>\n<collsim-topology version=\"1\">\n  <node>\n"
            "    <cpu id=\"c0\" vendor=\"amd\" socket=\"0\"%s/>\n"
            "    <cpu id=\"c1\" vendor=\"amd\" socket=\"1\"%s/>\n"
            "    <gpu id=\"g0\" model=\"l40s\"/>\n"
            "    <link a=\"c0\" b=\"c1\" type=\"sys\"/>\n"
            "    <link a=\"c0\" b=\"g0\" type=\"pcie\" gen=\"4\"/>\n"
            "  </node>\n</collsim-topology>\n", cases[i].cpuid, cases[i].cpuid);
        g_autoptr(GError) err = NULL;
        g_autoptr(cs_topo_t) t = load_str(xml, "amd.xml", &err);
        g_assert_no_error(err);
        g_assert_cmpfloat_with_epsilon(need_link(t, "c0", "c1", CS_LINK_SYS)->bw, cases[i].bw, EPS_BW);
    }
}

/* ---- our format: derived and explicit values ------------------------------ */

static void test_derived(void)
{
    static const char xml[] =
        "<?xml version=\"1.0\"?>\n"
        "<collsim-topology version=\"1\">\n"
        "  <node>\n"
        "    <cpu id=\"c0\" vendor=\"amd\"/>\n"
        "    <cpu id=\"c1\" vendor=\"arm\" socket=\"7\"/>\n"
        "    <gpu id=\"g0\" model=\"h100-sxm\" p2p=\"no\"/>\n"
        "    <gpu id=\"g1\" model=\"h100\" gdr=\"no\" p2p=\"yes\"/>\n"
        "    <gpu id=\"g2\" model=\"gb200\"/>\n"
        "    <nvswitch id=\"sw\"/>\n"
        "    <nic id=\"e0\" kind=\"ethernet\" speed=\"25Gbps\" ports=\"2\"/>\n"
        "    <nic id=\"r0\" kind=\"roce\" speed=\"50GB/s\" gdr=\"no\" ifname=\"mlx5_3\"/>\n"
        "    <nic id=\"t0\" type=\"ib-hdr\" speed=\"100Gbps\"/>\n"
        "    <link a=\"c0\" b=\"c1\" type=\"sys\"/>\n"
        "    <link a=\"g0\" b=\"g1\" type=\"nvlink\"/>\n"
        "    <link a=\"g0\" b=\"sw\" type=\"nvlink\" count=\"17\"/>\n"
        "    <link a=\"g1\" b=\"sw\" type=\"nvlink\" count=\"17\"/>\n"
        "    <link a=\"g2\" b=\"sw\" type=\"nvlink\" lat=\"250ns\"/>\n"
        "    <link a=\"g2\" b=\"c1\" type=\"c2c\"/>\n"
        "    <link a=\"c0\" b=\"g0\" type=\"pcie\" gen=\"4\"/>\n"
        "    <link a=\"c0\" b=\"g1\" type=\"pcie\" bw=\"10GB/s\" lat=\"1us\"/>\n"
        "    <link a=\"c0\" b=\"e0\" type=\"pcie\" gen=\"3\" width=\"8\"/>\n"
        "    <link a=\"c0\" b=\"r0\" type=\"pcie\" bw=\"32GB/s\"/>\n"
        "    <link a=\"c1\" b=\"t0\" type=\"pcie\"/>\n"
        "  </node>\n"
        "</collsim-topology>\n";
    g_autoptr(GError) err = NULL;
    g_autoptr(cs_topo_t) t = load_str(xml, "derived.xml", &err);
    g_assert_no_error(err);
    /* sys: the slower of AMD (128 GB/s) and Arm (NCCL's 6 GB/s). */
    g_assert_cmpfloat_with_epsilon(need_link(t, "c0", "c1", CS_LINK_SYS)->bw, 6e9, EPS_BW);
    g_assert_cmpint(t->devs[dev(t, "c0")].socket, ==, 0);
    g_assert_cmpint(t->devs[dev(t, "c1")].socket, ==, 7);
    /* GPU-GPU NVLink defaults to 1 link; to an NVSwitch, all the GPU's links. */
    const cs_link_t *gg = need_link(t, "g0", "g1", CS_LINK_NVL);
    g_assert_cmpint(gg->count, ==, 1);
    g_assert_cmpfloat_with_epsilon(gg->bw, 25e9, EPS_BW);
    g_assert_cmpfloat_with_epsilon(need_link(t, "g0", "sw", CS_LINK_NVL)->bw, 17 * 25e9, EPS_BW);
    const cs_link_t *g2sw = need_link(t, "sw", "g2", CS_LINK_NVL);
    g_assert_cmpint(g2sw->count, ==, 18);
    g_assert_cmpfloat_with_epsilon(g2sw->bw, 18 * 50e9, EPS_BW);   /* NVLink5: 50 GB/s per link */
    g_assert_cmpfloat_with_epsilon(g2sw->lat, 250e-9, 1e-18);
    g_assert_cmpfloat(need_link(t, "g0", "g1", CS_LINK_NVL)->lat, ==, 0.0);
    /* C2C: 450 GB/s per direction (Grace Hopper datasheet). */
    g_assert_cmpfloat_with_epsilon(need_link(t, "c1", "g2", CS_LINK_C2C)->bw, 450e9, EPS_BW);
    /* pcie: gen from the file, width from the GPU; explicit bw wins. */
    const cs_link_t *p0 = need_link(t, "c0", "g0", CS_LINK_PCI);
    g_assert_cmpint(p0->pcie_gen, ==, 4);
    g_assert_cmpint(p0->pcie_width, ==, 16);
    g_assert_cmpfloat_with_epsilon(p0->bw, PCIE4_X16, EPS_BW);
    const cs_link_t *p1 = need_link(t, "g1", "c0", CS_LINK_PCI);
    g_assert_cmpfloat_with_epsilon(p1->bw, 10e9, EPS_BW);
    g_assert_cmpfloat_with_epsilon(p1->lat, 1e-6, 1e-18);
    g_assert_cmpfloat_with_epsilon(need_link(t, "c0", "e0", CS_LINK_PCI)->bw, 8e9 * 8 * 128.0 / 130.0 / 8, EPS_BW);
    g_assert_cmpfloat_with_epsilon(need_link(t, "c0", "r0", CS_LINK_PCI)->bw, 32e9, EPS_BW);
    /* ib-hdr: Gen4 x16 host interface. */
    g_assert_cmpfloat_with_epsilon(need_link(t, "c1", "t0", CS_LINK_PCI)->bw, PCIE4_X16, EPS_BW);
    /* NICs */
    const cs_device_t *e0 = &t->devs[dev(t, "e0")], *r0 = &t->devs[dev(t, "r0")], *t0 = &t->devs[dev(t, "t0")];
    g_assert_cmpint(e0->nic_kind, ==, CS_NIC_ETH);
    g_assert_false(e0->gdr);
    g_assert_cmpint(e0->nic_ports, ==, 2);
    g_assert_cmpfloat_with_epsilon(e0->nic_bw, 25e9 / 8, EPS_BW);
    g_assert_cmpint(r0->nic_kind, ==, CS_NIC_ROCE);
    g_assert_false(r0->gdr);
    g_assert_cmpstr(r0->ifname, ==, "mlx5_3");
    g_assert_cmpfloat_with_epsilon(r0->nic_bw, 50e9, EPS_BW);
    g_assert_cmpint(t0->nic_kind, ==, CS_NIC_IB);
    g_assert_true(t0->gdr);
    g_assert_cmpfloat_with_epsilon(t0->nic_bw, 12.5e9, EPS_BW);  /* speed overrides the type */
    g_assert_cmpint(t0->local, ==, 2);
    /* GPUs */
    const cs_device_t *g0 = &t->devs[dev(t, "g0")], *g1 = &t->devs[dev(t, "g1")];
    g_assert_false(cs_device_p2p(g0));
    g_assert_cmpint(g0->p2p_force, ==, -1);
    g_assert_true(cs_device_p2p(g1));
    g_assert_false(g1->gdr);
    g_assert_cmpstr(g1->gpu->name, ==, "h100-sxm");
    g_assert_cmpint(g1->rank, ==, 1);
}

/* ---- bad files ------------------------------------------------------------ */

static const struct {
    const char *file;
    const char *message;
} bad_files[] = {
    { "bad-empty.xml", "bad-empty.xml:1: empty file; expected a <collsim-topology> or NCCL <system> document" },
    { "bad-oversub-one-leaf.xml", "bad-oversub-one-leaf.xml:8: oversubscription=\"2\" does not apply: the fat-tree fabric of 2 nodes is one leaf switch, with no spine; expected it from 33 nodes up, or oversubscription=\"1\"" },
    { "bad-not-xml.xml", "bad-not-xml.xml:4: Opening and ending tag mismatch: gpu line 3 and node; expected well-formed XML" },
    { "bad-doctype.xml", "bad-doctype.xml:2: a <!DOCTYPE> is not allowed; expected a plain XML document without DTD" },
    { "bad-nic-two-cables.xml", "bad-nic-two-cables.xml:44: NIC 'n0.nic0' (line 34) has 1 port and this link gives it cable 2 (the first at line 43); expected one cable a port (ports=\"N\" on the <nic>, or another NIC named here)" },
    { "bad-root.xml", "bad-root.xml:2: unknown root element <topology>; expected <collsim-topology> (collsim-topology(5)) or <system> (an NCCL_TOPO_DUMP_FILE dump)" },
    { "bad-version.xml", "bad-version.xml:2: unsupported version=\"2\"; expected version=\"1\"" },
    { "bad-unknown-element.xml", "bad-unknown-element.xml:5: unknown element <gpus> inside <node>; expected <cpu>, <pcisw>, <gpu>, <nvswitch>, <nic> or <link>" },
    { "bad-unknown-attr.xml", "bad-unknown-attr.xml:4: unknown attribute 'modle' on <gpu>; expected one of id, model, gdr, p2p or busid" },
    { "bad-text.xml", "bad-text.xml:5: unexpected text inside <node>; expected only elements and comments" },
    { "bad-missing-model.xml", "bad-missing-model.xml:5: missing attribute 'model' on <gpu>; expected a GPU model from the catalogue" },
    { "bad-gpu-model.xml", NULL /* built below: lists the catalogue */ },
    { "bad-dup-id.xml", "bad-dup-id.xml:6: duplicate id 'gpu0' (first at line 4); expected ids unique within a <node>" },
    { "bad-dup-ifname.xml", "bad-dup-ifname.xml:7: NIC 'nic1' has ifname \"mlx5_1\", as NIC 'nic0' at line 6 does; "
                            "expected device names unique within a node" },
    { "bad-busid.xml", "bad-busid.xml:4: bad busid '0000:1b:00.0.1' on <gpu>; expected a PCI bus id such as \"0000:03:00.0\"" },
    { "bad-dup-busid.xml", "bad-dup-busid.xml:5: GPU 'gpu1' has busid '0000:1B:00', as GPU 'gpu0' at line 4 has; "
                           "expected each GPU's own bus id" },
    { "bad-link-unknown.xml", "bad-link-unknown.xml:8: unknown device 'gpu9' in a=; expected the id of a device declared in this <node>" },
    { "bad-link-type.xml", "bad-link-type.xml:6: unknown link type 'nvlnk'; expected nvlink, pcie, sys or c2c" },
    { "bad-bw-unit.xml", "bad-bw-unit.xml:7: bad bw=\"400Gbx\" on <link>; expected a bandwidth of at least 1Mbps such as \"400Gbps\", \"50GB/s\" or \"5e10\" (bytes/s)" },
    { "bad-lat.xml", "bad-lat.xml:6: bad lat=\"-1us\" on <link>; expected a time from 0 to 1s such as \"500ns\", \"1.5us\" or \"2e-6\" (seconds)" },
    { "bad-lat-huge.xml", "bad-lat-huge.xml:6: bad lat=\"1e300\" on <link>; expected a time from 0 to 1s such as \"500ns\", \"1.5us\" or \"2e-6\" (seconds)" },
    { "bad-bw-slow.xml", "bad-bw-slow.xml:6: bad bw=\"1Kbps\" on <link>; expected a bandwidth of at least 1Mbps such as \"400Gbps\", \"50GB/s\" or \"5e10\" (bytes/s)" },
    { "bad-pcie-nogen.xml", "bad-pcie-nogen.xml:8: pcie link 'cpu0' - 'sw0' has no generation; expected gen= and width= (or bw=) when neither end is a GPU or a catalogue NIC" },
    { "bad-nvlink-count.xml", "bad-nvlink-count.xml:9: GPU 'gpu0' would use 20 NVLinks; expected at most 18 for model h100-sxm" },
    { "bad-sys-link.xml", "bad-sys-link.xml:6: sys link between cpu 'cpu0' and gpu 'gpu0'; expected two cpus" },
    { "bad-socket.xml", "bad-socket.xml:4: bad socket=\"-1\" on <cpu>; expected an integer from 0 to 1023" },
    { "bad-nic-kind.xml", "bad-nic-kind.xml:5: unknown NIC kind 'omnipath'; expected ib, roce or ethernet" },
    { "bad-nic-nospeed.xml", "bad-nic-nospeed.xml:5: missing attribute 'speed' on <nic>; expected a port speed such as speed=\"400Gbps\" (or type=\"NAME\" from the catalogue)" },
    { "bad-count.xml", "bad-count.xml:3: bad count=\"0\" on <node>; expected an integer from 1 to 65536" },
    { "bad-no-fabric.xml", "bad-no-fabric.xml:2: 2 nodes but no <fabric>; expected a <fabric> element joining them" },
    { "bad-fabric-kind.xml", "bad-fabric-kind.xml:8: unknown fabric kind 'torus'; expected rail, fat-tree or custom" },
    { "bad-fabric-unknown-nic.xml", "bad-fabric-unknown-nic.xml:11: unknown device 'n2.nic0' in a=; expected a <switch> id of this fabric or a NIC, written n<k>.<id> (\"n0.nic0\") when there are several nodes" },
    { "bad-fabric-unwired-nic.xml", "bad-fabric-unwired-nic.xml:8: NIC 'n1.nic0' (line 5) has no link in <fabric>; expected a <link a=\"n1.nic0\" b=\"SWITCH\"/> for every NIC of a node (or the NIC removed from its <node>)" },
    { "bad-switch-nobw.xml", "bad-switch-nobw.xml:13: switch-to-switch link 'leaf0' - 'leaf1' has no bandwidth; expected bw= such as bw=\"400Gbps\"" },
    { "bad-disconnected.xml", "bad-disconnected.xml:5: GPU 'gpu1' has no path to GPU 'gpu0'; expected NVLink, PCIe or a NIC and fabric connecting them" },
    { "bad-nccl-rank.xml", "bad-nccl-rank.xml:4: bad rank=\"zero\" on <gpu>; expected an integer from 0 to 2147483647" },
    { "bad-nccl-nogpu.xml", "bad-nccl-nogpu.xml:1: no <gpu> with a rank; expected an NCCL topology dump with at least one GPU" },
    { "bad-nccl-dup-rank.xml", "bad-nccl-dup-rank.xml:8: duplicate rank 0 (first at line 5); expected one GPU per rank" },
    { "bad-nccl-dup-busid.xml", "bad-nccl-dup-busid.xml:8: a second GPU at bus id 0000:18:00.0 (the first at line 3); "
                                "expected each GPU's own bus id, as NCCL writes them" },
    /* the same id spelled otherwise (NCCL compares bus ids by value; found by fuzz-topo-xml: the
     * written file, where both read 0000:18:00.0, did not load) */
    { "bad-nccl-dup-busid-forms.xml", "bad-nccl-dup-busid-forms.xml:8: a second GPU at bus id 0000:18:00.0 (the first "
                                      "at line 3); expected each GPU's own bus id, as NCCL writes them" },
    { "bad-nccl-class.xml", "bad-nccl-class.xml:3: missing attribute 'class' on <pci>; expected a PCI class such as \"0x060400\"" },
    { "bad-nccl-two-hosts.xml", "bad-nccl-two-hosts.xml:7: a second host (host_hash 0x2222, first 0x1111 at line 2); expected a one-node dump (replicate it with --nodes)" },
    { "bad-nccl-sm.xml", NULL /* built below */ },
};

static void test_bad_files(void)
{
    for (gsize i = 0; i < G_N_ELEMENTS(bad_files); i++) {
        g_autofree char *path = data_path(bad_files[i].file);
        g_autofree char *buf = NULL;
        gsize len = 0;
        g_assert_true(g_file_get_contents(path, &buf, &len, NULL));
        g_autoptr(GError) err = NULL;
        g_autoptr(cs_topo_t) t = cs_topo_xml_load_mem(buf, len, bad_files[i].file, &err);
        g_assert_null(t);
        g_assert_nonnull(err);
        g_autofree char *want = NULL;
        if (strcmp(bad_files[i].file, "bad-gpu-model.xml") == 0)
            want = g_strdup_printf("bad-gpu-model.xml:4: unknown GPU model 'h1000'; expected one of %s",
                                   cs_gpu_model_names());
        else if (strcmp(bad_files[i].file, "bad-nccl-sm.xml") == 0)
            want = g_strdup_printf("bad-nccl-sm.xml:4: unknown GPU (PCI device 0x9999, sm 61); expected a "
                                   "GPU known to the catalogue: %s", cs_gpu_model_names());
        else
            want = g_strdup(bad_files[i].message);
        g_assert_cmpstr(err->message, ==, want);
        g_assert_null(strchr(err->message, '\n'));
    }
}

/* A file's nodes have the limit of every other way to say a number of
 * nodes (--nodes, [topology] nodes): CS_MAX_NODES, on one <node> and on
 * the file's nodes in all. */
static void test_node_limit(void)
{
    static const char *const head = "<?xml version=\"1.0\"?>\n<collsim-topology version=\"1\">\n";
    static const char *const node = "  <node count=\"%d\"><gpu id=\"gpu0\" model=\"h100-sxm\"/></node>\n";
    g_assert_cmpint(CS_MAX_NODES, ==, 65536);
    {
        g_autofree char *one = g_strdup_printf(node, CS_MAX_NODES + 1);
        g_autofree char *xml = g_strconcat(head, one, "</collsim-topology>\n", NULL);
        g_autoptr(GError) err = NULL;
        g_autoptr(cs_topo_t) t = cs_topo_xml_load_mem(xml, strlen(xml), "big.xml", &err);
        g_assert_null(t);
        g_assert_cmpstr(err->message, ==, "big.xml:3: bad count=\"65537\" on <node>; expected an integer from 1 to 65536");
    }
    {
        /* each <node> within the limit, the two together one past it */
        g_autofree char *a = g_strdup_printf(node, CS_MAX_NODES);
        g_autofree char *b = g_strdup_printf(node, 1);
        g_autofree char *xml = g_strconcat(head, a, b, "</collsim-topology>\n", NULL);
        g_autoptr(GError) err = NULL;
        g_autoptr(cs_topo_t) t = cs_topo_xml_load_mem(xml, strlen(xml), "sum.xml", &err);
        g_assert_null(t);
        g_assert_cmpstr(err->message, ==, "sum.xml:4: too large: 65537 nodes and 65537 devices so far; "
                                          "expected at most 65536 nodes and 4000000 devices");
    }
}

/* Every file of tests/data/xml named bad-* is in the table above. */
static void test_bad_files_listed(void)
{
    g_autofree char *dir = g_test_build_filename(G_TEST_DIST, "data", "xml", NULL);
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    g_assert_nonnull(d);
    const char *name;
    int n = 0;
    while ((name = g_dir_read_name(d)) != NULL) {
        if (!g_str_has_prefix(name, "bad-"))
            continue;
        gboolean found = FALSE;
        for (gsize i = 0; i < G_N_ELEMENTS(bad_files); i++)
            found |= strcmp(bad_files[i].file, name) == 0;
        if (!found)
            g_error("%s has no expected message", name);
        n++;
    }
    g_assert_cmpint(n, ==, G_N_ELEMENTS(bad_files));
}

static void test_load_path(void)
{
    g_autoptr(GError) err = NULL;
    g_assert_null(cs_topo_xml_load("/nonexistent/topo.xml", &err));
    g_assert_cmpstr(err->message, ==, "/nonexistent/topo.xml: cannot read the file (No such file or directory); "
                    "expected a readable topology file");
    g_clear_error(&err);
    /* The file's path, as given, starts the message. */
    g_autofree char *path = data_path("bad-version.xml");
    g_assert_null(cs_topo_xml_load(path, &err));
    g_autofree char *want = g_strdup_printf("%s:2: unsupported version=\"2\"; expected version=\"1\"", path);
    g_assert_cmpstr(err->message, ==, want);
}

/* libxml2 must not print anything itself (only our one line). */
static void test_quiet(void)
{
    if (g_test_subprocess()) {
        g_autoptr(GError) err = NULL;
        g_assert_null(load_str("<collsim-topology version=\"1\"><node></collsim-topology>", "q.xml", &err));
        g_assert_null(load_str("<collsim-topology version=\"1\"><node><gpu id=\"g\" model=\"h100\"/>"
                               "<nic id=\"n\" kind=\"IB\" speed=\"1Gbps\"/></node></collsim-topology>",
                               "q.xml", &err));
        return;
    }
    g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
    g_test_trap_assert_passed();
    g_test_trap_assert_stderr("");
    g_test_trap_assert_stdout("");
}

/* After collsim's own checks the schema has the last word: with a schema
 * that does not know <pcisw> (found through $COLLSIM_DATADIR, which wins
 * over the installed and source copies), a file with one fails there with
 * libxml2's message, on the element's line. */
static void test_schema(void)
{
    if (g_test_subprocess()) {
        g_setenv("COLLSIM_DATADIR", g_getenv("TEST_TOPO_XML_DATADIR"), TRUE);
        g_autofree char *path = topo_path("pcie-2socket.xml");
        g_autofree char *buf = NULL;
        gsize len = 0;
        g_assert_true(g_file_get_contents(path, &buf, &len, NULL));
        g_autoptr(GError) err = NULL;
        g_assert_null(cs_topo_xml_load_mem(buf, len, "p.xml", &err));
        g_print("%s\n", err->message);
        return;
    }
    g_autofree char *dir = g_dir_make_tmp("test-topo-xml-XXXXXX", NULL);
    g_autofree char *sub = g_build_filename(dir, "topologies", NULL);
    g_autofree char *rng = g_build_filename(sub, "collsim-topology.rng", NULL);
    g_autofree char *orig = topo_path("collsim-topology.rng");
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(orig, &text, NULL, NULL));
    g_auto(GStrv) parts = g_strsplit(text, "<ref name=\"pcisw\"/>", -1);
    g_assert_cmpint(g_strv_length(parts), ==, 2);   /* <node> refers to it once */
    g_autofree char *strict = g_strconcat(parts[0], parts[1], NULL);
    g_assert_cmpint(g_mkdir_with_parents(sub, 0700), ==, 0);
    g_assert_true(g_file_set_contents(rng, strict, -1, NULL));
    g_setenv("TEST_TOPO_XML_DATADIR", dir, TRUE);
    g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
    g_test_trap_assert_passed();
    g_test_trap_assert_stdout("p.xml:19: Did not expect element pcisw there; expected a document valid "
                              "against collsim-topology.rng\n");
    g_test_trap_assert_stderr("");
    g_remove(rng);
    g_remove(sub);
    g_remove(dir);
}

/* ---- writing -------------------------------------------------------------- */

static void assert_same(const cs_topo_t *a, const cs_topo_t *b)
{
    g_assert_cmpint(a->ndevs, ==, b->ndevs);
    g_assert_cmpint(a->nlinks, ==, b->nlinks);
    g_assert_cmpint(a->nnodes, ==, b->nnodes);
    g_assert_cmpint(a->ngpus, ==, b->ngpus);
    for (int i = 0; i < a->ndevs; i++) {
        const cs_device_t *x = &a->devs[i], *y = &b->devs[i];
        g_assert_cmpstr(x->name, ==, y->name);
        g_assert_cmpint(x->kind, ==, y->kind);
        g_assert_cmpint(x->node, ==, y->node);
        g_assert_true(x->gpu == y->gpu);
        g_assert_cmpint(x->local, ==, y->local);
        g_assert_cmpint(x->rank, ==, y->rank);
        g_assert_cmpint(x->gdr, ==, y->gdr);
        g_assert_cmpint(x->pci_busid, ==, y->pci_busid);
        g_assert_cmpint(cs_device_p2p(x), ==, cs_device_p2p(y));
        g_assert_cmpint(x->vendor, ==, y->vendor);
        g_assert_cmpint(x->socket, ==, y->socket);
        g_assert_cmpint(x->familyid, ==, y->familyid);
        g_assert_cmpint(x->modelid, ==, y->modelid);
        if (x->kind == CS_DEV_NIC) {
            g_assert_cmpint(x->nic_kind, ==, y->nic_kind);
            g_assert_cmpfloat(x->nic_bw, ==, y->nic_bw);
            g_assert_cmpint(MAX(x->nic_ports, 1), ==, y->nic_ports);
            g_assert_cmpstr(x->ifname, ==, y->ifname);
        }
        g_assert_cmpint(x->tier, ==, y->tier);
    }
    for (int i = 0; i < a->nlinks; i++) {
        const cs_link_t *x = &a->links[i], *y = &b->links[i];
        g_assert_cmpint(x->src, ==, y->src);
        g_assert_cmpint(x->dst, ==, y->dst);
        g_assert_cmpint(x->reverse, ==, y->reverse);
        g_assert_cmpint(x->kind, ==, y->kind);
        g_assert_cmpfloat(x->bw, ==, y->bw);        /* exact: %.17g */
        g_assert_cmpfloat(x->lat, ==, y->lat);
        g_assert_cmpint(x->count, ==, y->count);
        g_assert_cmpint(x->pcie_gen, ==, y->pcie_gen);
        g_assert_cmpint(x->pcie_width, ==, y->pcie_width);
        g_assert_cmpfloat(x->nccl_bw, ==, y->nccl_bw);
    }
    g_assert_cmpint(a->fabric.kind, ==, b->fabric.kind);
    g_assert_cmpfloat(a->fabric.oversubscription, ==, b->fabric.oversubscription);
    g_assert_cmpfloat(a->fabric.switch_lat, ==, b->fabric.switch_lat);
    g_assert_cmpstr(a->description, ==, b->description);
}

static void roundtrip(const cs_topo_t *t)
{
    g_autofree char *xml = cs_topo_xml_write(t);
    g_autofree char *again = cs_topo_xml_write(t);
    g_assert_cmpstr(xml, ==, again);   /* deterministic */
    g_assert_cmpuint(cs_topo_xml_length(t), ==, strlen(xml));   /* counted as written */
    g_assert_true(g_str_has_prefix(xml, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<collsim-topology version=\"1\""));
    g_autoptr(GError) err = NULL;
    g_autoptr(cs_topo_t) u = load_str(xml, "written.xml", &err);
    if (u == NULL)
        g_error("%s\n%s", err->message, xml);
    assert_same(t, u);
    /* And a second generation is the same text. */
    g_autofree char *xml2 = cs_topo_xml_write(u);
    g_assert_cmpstr(xml, ==, xml2);
}

static void test_roundtrip_files(void)
{
    static const char *const topos[] = { "dgx-h100.xml", "pcie-2socket.xml", "cluster-2node-rail.xml",
                                         "cluster-16node-fat-tree.xml", "rtxpro6000-turin-nps4.xml" };
    for (gsize i = 0; i < G_N_ELEMENTS(topos); i++) {
        g_autofree char *path = topo_path(topos[i]);
        g_autoptr(cs_topo_t) t = load_ok(path);
        roundtrip(t);
    }
    g_autofree char *dump = data_path("nccl-dgx-h100.xml");
    g_autoptr(cs_topo_t) t = load_ok(dump);
    roundtrip(t);
}

/* PCI bus ids as NCCL numbers them (utils.cc busIdToInt64), and back. */
static void test_busid(void)
{
    static const struct { const char *s; gint64 id; const char *back; } ok[] = {
        { "0000:03:00.0", 0x3000, "0000:03:00.0" },
        { "0001:04:00.0", 0x104000, "0001:04:00.0" },
        { "0000:C7:00", 0xc7000, "0000:c7:00.0" },
        { "0:1b:00.1", 0x1b001, "0000:1b:00.1" },
        { "abcd1234:ff:1f.7", 0xabcd1234ff1f7LL, "abcd1234:ff:1f.7" },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(ok); i++) {
        gint64 id = -1;
        g_assert_true(cs_topo_busid_parse(ok[i].s, &id));
        g_assert_cmpint(id, ==, ok[i].id);
        char buf[24];
        cs_topo_busid_format(id, buf);
        g_assert_cmpstr(buf, ==, ok[i].back);
    }
    static const char *const bad[] = { "", "0000", "0000:03", "0000:3:00.0", "0000:03:0.0", "0000:03:00.",
                                       "0000:03:00.00", "0000:03:00.0 x", "x000:03:00.0", ":03:00.0",
                                       "123456789:03:00.0", "0000-03-00.0" };
    for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
        gint64 id = 7;
        g_assert_false(cs_topo_busid_parse(bad[i], &id));
        g_assert_cmpint(id, ==, 7);   /* output set only on success */
    }
    g_assert_false(cs_topo_busid_parse(NULL, NULL));
}

static void test_roundtrip_presets(void)
{
    static const char *const presets[] = { "dgx-h100", "dgx1-v100", "dgx-a100", "pcie" };
    for (gsize i = 0; i < G_N_ELEMENTS(presets); i++) {
        if (!cs_preset_exists(presets[i]))
            g_error("no preset %s", presets[i]);
        for (int nodes = 1; nodes <= 3; nodes += 2) {
            cs_build_opts_t o;
            cs_build_opts_init(&o);
            o.nodes = nodes;
            if (strcmp(presets[i], "pcie") == 0) {
                o.gpu = "rtx4090";   /* consumer cards: P2P off by default */
                o.p2p = 1;           /* ... forced on: p2p_force must survive */
                o.nic = "eth-25g";
                o.nics_per_node = 2;
                o.fabric = "fat-tree";
                o.oversubscription = 1.5;
            }
            g_autoptr(GError) err = NULL;
            g_autoptr(cs_topo_t) t = cs_preset_build(presets[i], &o, &err);
            g_assert_no_error(err);
            roundtrip(t);
        }
    }
}

/* What the writer puts in: explicit figures, n<k>. stripped inside nodes. */
static void test_write_content(void)
{
    g_autofree char *path = topo_path("cluster-2node-rail.xml");
    g_autoptr(cs_topo_t) t = load_ok(path);
    g_autofree char *xml = cs_topo_xml_write(t);
    g_assert_nonnull(strstr(xml, "<gpu id=\"gpu0\" model=\"a100-sxm\" gdr=\"yes\"/>"));
    g_assert_nonnull(strstr(xml, "<link a=\"gpu0\" b=\"gpu1\" type=\"nvlink\" count=\"4\" bw=\"100000000000\" lat=\"0\"/>"));
    g_assert_nonnull(strstr(xml, "<link a=\"n1.nic1\" b=\"rail1\" type=\"net\" bw=\"25000000000\" lat=\"0\"/>"));
    g_assert_nonnull(strstr(xml, "<fabric kind=\"rail\" oversubscription=\"1\" nodes-per-leaf=\"2\""));
    g_assert_nonnull(strstr(xml, "<switch id=\"spine0\" tier=\"1\"/>"));
}

/* Attribute values escaped as libxml2 escapes them (the reader reads them
 * back, and files written before keep their bytes); control characters,
 * which XML 1.0 cannot carry, as '?'. */
static void test_write_escapes(void)
{
    g_autofree char *path = topo_path("dgx-h100.xml");
    g_autoptr(cs_topo_t) t = load_ok(path);
    g_free(t->description);
    t->description = g_strdup("a & b <c> \"d\" 'e' \u00e9\tf\ng");
    g_autofree char *xml = cs_topo_xml_write(t);
    g_assert_nonnull(strstr(xml, "description=\"a &amp; b &lt;c&gt; &quot;d&quot; 'e' \u00e9?f?g\">\n  <node>\n"));
    g_assert_cmpuint(cs_topo_xml_length(t), ==, strlen(xml));
    g_autoptr(GError) err = NULL;
    g_autoptr(cs_topo_t) u = load_str(xml, "escaped.xml", &err);
    g_assert_no_error(err);
    g_assert_cmpstr(u->description, ==, "a & b <c> \"d\" 'e' \u00e9?f?g");
    g_assert_true(g_str_has_suffix(xml, "  </node>\n</collsim-topology>\n"));
    /* the same value as libxml2's formatted dump writes it */
    xmlDocPtr doc = xmlNewDoc((const xmlChar *)"1.0");
    xmlNodePtr root = xmlNewNode(NULL, (const xmlChar *)"collsim-topology");
    xmlDocSetRootElement(doc, root);
    xmlSetProp(root, (const xmlChar *)"description", (const xmlChar *)u->description);
    xmlChar *mem = NULL;
    int len = 0;
    xmlDocDumpFormatMemoryEnc(doc, &mem, &len, "UTF-8", 1);
    const char *tag = strstr((const char *)mem, " description=");
    g_assert_nonnull(tag);
    g_autofree char *attr = g_strndup(tag, strchr(tag + 14, '"') + 1 - tag);
    g_assert_nonnull(strstr(xml, attr));
    xmlFree(mem);
    xmlFreeDoc(doc);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/topo-xml/dgx-h100", test_dgx_h100);
    g_test_add_func("/topo-xml/dgx-h100-matches-preset", test_dgx_h100_matches_preset);
    g_test_add_func("/topo-xml/pcie-2socket", test_pcie_2socket);
    g_test_add_func("/topo-xml/cluster-rail", test_cluster_rail);
    g_test_add_func("/topo-xml/cluster-implicit", test_cluster_implicit);
    g_test_add_func("/topo-xml/nccl-dump", test_nccl_dump);
    g_test_add_func("/topo-xml/nccl-nic-kinds", test_nccl_nic_kinds);
    g_test_add_func("/topo-xml/nccl-links", test_nccl_links);
    g_test_add_func("/topo-xml/sys-amd-families", test_sys_amd_families);
    g_test_add_func("/topo-xml/derived", test_derived);
    g_test_add_func("/topo-xml/bad-files", test_bad_files);
    g_test_add_func("/topo-xml/bad-files-listed", test_bad_files_listed);
    g_test_add_func("/topo-xml/node-limit", test_node_limit);
    g_test_add_func("/topo-xml/load-path", test_load_path);
    g_test_add_func("/topo-xml/quiet", test_quiet);
    g_test_add_func("/topo-xml/schema", test_schema);
    g_test_add_func("/topo-xml/roundtrip-files", test_roundtrip_files);
    g_test_add_func("/topo-xml/busid", test_busid);
    g_test_add_func("/topo-xml/roundtrip-presets", test_roundtrip_presets);
    g_test_add_func("/topo-xml/write-content", test_write_content);
    g_test_add_func("/topo-xml/write-escapes", test_write_escapes);
    return g_test_run();
}
