/* Hand-built topologies shared by test-topo and test-paths.
 *
 * fixture_node(): one node, Intel CPUs, 5 GPUs (h100-sxm), one NIC:
 *
 *   cpu0 ==SYS== cpu1
 *    |  \          \
 *   sw0  gpu4      sw2
 *   /  \             \
 * sw1a  sw1b         gpu3
 *  | \    | \
 * gpu0 gpu1 gpu2 nic0
 *
 * NVLink: gpu0-gpu2 (4 links), gpu2-gpu3 (2 links).
 * PCIe Gen5 x16 everywhere except gpu1-sw1a (Gen4 x16) and cpu0-gpu4
 * (Gen3 x16). Every PCIe link: 100 ns; NVLink 50 ns; SYS 200 ns. */
#ifndef TOPO_FIXTURE_H
#define TOPO_FIXTURE_H

#include "models/cs_topo.h"

typedef struct {
    int cpu0, cpu1, sw0, sw1a, sw1b, sw2, gpu[5], nic0;
    int l_gpu1_sw1a, l_gpu0_gpu2;
} fixture_ids_t;

G_GNUC_UNUSED static int fx_dev(cs_topo_t *t, cs_dev_kind_t kind, const char *name, int node, int local, int line)
{
    cs_device_t d = { 0 };
    d.kind = kind;
    d.name = (char *)name;
    d.node = node;
    d.local = local;
    d.line = line;
    if (kind == CS_DEV_GPU) {
        d.gpu = cs_gpu_model_find("h100-sxm");
        d.gdr = TRUE;
    }
    if (kind == CS_DEV_NIC) {
        d.nic_kind = CS_NIC_IB;
        d.nic_bw = 50e9;
        d.nic_ports = 1;
        d.gdr = TRUE;
    }
    return cs_topo_add_device(t, &d);
}

G_GNUC_UNUSED static int fx_pci(cs_topo_t *t, int a, int b, int gen)
{
    int l = cs_topo_add_link(t, a, b, CS_LINK_PCI, cs_pcie_bw(gen, 16), 100e-9, 0);
    t->links[l].pcie_gen = gen;
    t->links[l].pcie_width = 16;
    return l;
}

G_GNUC_UNUSED static int fx_nvl(cs_topo_t *t, int a, int b, int count)
{
    int l = cs_topo_add_link(t, a, b, CS_LINK_NVL, count * 25e9, 50e-9, 0);
    t->links[l].count = count;
    return l;
}

/* Adds the node's devices with the given name prefix ("n0."). */
G_GNUC_UNUSED static void fixture_add_node(cs_topo_t *t, int node, const char *pfx, fixture_ids_t *f)
{
    char name[64];
#define N(s) (g_snprintf(name, sizeof(name), "%s%s", pfx, s), name)
    f->cpu0 = fx_dev(t, CS_DEV_CPU, N("cpu0"), node, 0, 0);
    f->cpu1 = fx_dev(t, CS_DEV_CPU, N("cpu1"), node, 1, 0);
    t->devs[f->cpu0].vendor = t->devs[f->cpu1].vendor = CS_CPU_INTEL;
    t->devs[f->cpu1].socket = 1;
    f->sw0 = fx_dev(t, CS_DEV_PCISW, N("sw0"), node, 0, 0);
    f->sw1a = fx_dev(t, CS_DEV_PCISW, N("sw1a"), node, 0, 0);
    f->sw1b = fx_dev(t, CS_DEV_PCISW, N("sw1b"), node, 0, 0);
    f->sw2 = fx_dev(t, CS_DEV_PCISW, N("sw2"), node, 0, 0);
    for (int i = 0; i < 5; i++) {
        char g[16];
        g_snprintf(g, sizeof(g), "gpu%d", i);
        f->gpu[i] = fx_dev(t, CS_DEV_GPU, N(g), node, i, 0);
    }
    f->nic0 = fx_dev(t, CS_DEV_NIC, N("nic0"), node, 0, 0);
#undef N
    cs_topo_add_link(t, f->cpu0, f->cpu1, CS_LINK_SYS, 40e9, 200e-9, 0);
    fx_pci(t, f->cpu0, f->sw0, 5);
    fx_pci(t, f->sw0, f->sw1a, 5);
    fx_pci(t, f->sw0, f->sw1b, 5);
    fx_pci(t, f->cpu1, f->sw2, 5);
    fx_pci(t, f->sw1a, f->gpu[0], 5);
    f->l_gpu1_sw1a = fx_pci(t, f->gpu[1], f->sw1a, 4);
    fx_pci(t, f->sw1b, f->gpu[2], 5);
    fx_pci(t, f->sw1b, f->nic0, 5);
    fx_pci(t, f->sw2, f->gpu[3], 5);
    fx_pci(t, f->cpu0, f->gpu[4], 3);
    f->l_gpu0_gpu2 = fx_nvl(t, f->gpu[0], f->gpu[2], 4);
    fx_nvl(t, f->gpu[2], f->gpu[3], 2);
}

G_GNUC_UNUSED static cs_topo_t *fixture_node(fixture_ids_t *f)
{
    cs_topo_t *t = cs_topo_new("fixture");
    fixture_add_node(t, 0, "", f);
    g_autoptr(GError) err = NULL;
    gboolean ok = cs_topo_finish(t, &err);
    g_assert_no_error(err);
    g_assert_true(ok);
    return t;
}

#endif
