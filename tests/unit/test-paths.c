/* Paths: NCCL's intra-node classification on the hand-built fixture node,
 * P2C, fabric routes with ECMP, and the per-node cache. Expected values
 * are worked out by hand from the fixture drawing in topo-fixture.h and
 * the rules of paths.cc. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "models/cs_paths.h"
#include "topo-fixture.h"

#define EPS 1e-6

static void check_path(const cs_topo_t *t, int src, int dst, gboolean nvb_disable,
                       cs_path_type_t type, int nhops, double nccl_bw, double bw, double lat)
{
    cs_path_t p;
    gboolean ok = cs_path_intra(t, src, dst, nvb_disable, &p);
    g_assert_true(ok);
    g_assert_cmpstr(cs_path_type_name(p.type), ==, cs_path_type_name(type));
    g_assert_cmpint(p.nhops, ==, nhops);
    g_assert_cmpfloat_with_epsilon(p.nccl_bw, nccl_bw, EPS);
    g_assert_cmpfloat_with_epsilon(p.bw, bw, 1);
    g_assert_cmpfloat_with_epsilon(p.lat, lat, 1e-12);
    /* The links chain from src to dst. */
    int at = src;
    for (int i = 0; i < p.nhops; i++) {
        g_assert_cmpint(t->links[p.links[i]].src, ==, at);
        at = t->links[p.links[i]].dst;
    }
    g_assert_cmpint(at, ==, dst);
}

static void test_types(void)
{
    fixture_ids_t f;
    g_autoptr(cs_topo_t) t = fixture_node(&f);
    const double g5 = cs_pcie_bw(5, 16), g4 = cs_pcie_bw(4, 16), g3 = cs_pcie_bw(3, 16);
    const int *g = f.gpu;

    /* NVLink bundle of 4: 4 x 20.6 GB/s (SM90), 4 x 25 GB/s physical. */
    check_path(t, g[0], g[2], FALSE, CS_PATH_NVL, 1, 82.4, 100e9, 50e-9);
    check_path(t, g[2], g[0], FALSE, CS_PATH_NVL, 1, 82.4, 100e9, 50e-9);
    /* One switch: gpu0-sw1a-gpu1, bottleneck the Gen4 link (24 / 31.5). */
    check_path(t, g[0], g[1], FALSE, CS_PATH_PIX, 2, 24.0, g4, 200e-9);
    /* Two switch levels without the CPU; gpu0's NVLink cannot relay PCIe. */
    check_path(t, g[1], g[2], FALSE, CS_PATH_PXB, 4, 24.0, g4, 400e-9);
    check_path(t, g[2], g[1], FALSE, CS_PATH_PXB, 4, 24.0, g4, 400e-9);
    /* Through cpu0's root complex: gpu4 is on a Gen3 root port (12). */
    check_path(t, g[4], g[0], FALSE, CS_PATH_PHB, 4, 12.0, g3, 400e-9);
    /* Across sockets: SYS, Intel inter-socket 22 GB/s, physical 40 GB/s
     * SYS link vs the Gen4 31.5 GB/s leaf. 5 PCIe hops + 1 SYS. */
    check_path(t, g[1], g[3], FALSE, CS_PATH_SYS, 6, 22.0, g4, 5 * 100e-9 + 200e-9);
    /* NVLink through gpu2: NVB, bottleneck the 2-link bundle (41.2, 50e9). */
    check_path(t, g[0], g[3], FALSE, CS_PATH_NVB, 2, 41.2, 50e9, 100e-9);
    check_path(t, g[3], g[0], FALSE, CS_PATH_NVB, 2, 41.2, 50e9, 100e-9);
    /* NVB disabled: back to PCIe across sockets. */
    check_path(t, g[0], g[3], TRUE, CS_PATH_SYS, 6, 22.0, 40e9, 5 * 100e-9 + 200e-9);
    /* The NVL hop is unaffected by nvb_disable. */
    check_path(t, g[0], g[2], TRUE, CS_PATH_NVL, 1, 82.4, 100e9, 50e-9);

    /* GPU <-> NIC. gpu0 must not use gpu2 as a PCIe relay (that is PXN,
     * decided elsewhere). */
    check_path(t, g[2], f.nic0, FALSE, CS_PATH_PIX, 2, 48.0, g5, 200e-9);
    check_path(t, g[0], f.nic0, FALSE, CS_PATH_PXB, 4, 48.0, g5, 400e-9);
    check_path(t, f.nic0, g[0], FALSE, CS_PATH_PXB, 4, 48.0, g5, 400e-9);
    check_path(t, g[4], f.nic0, FALSE, CS_PATH_PHB, 4, 12.0, g3, 400e-9);
    check_path(t, g[3], f.nic0, FALSE, CS_PATH_SYS, 6, 22.0, 40e9, 5 * 100e-9 + 200e-9);

    /* Self and impossible requests. */
    cs_path_t p;
    g_assert_true(cs_path_intra(t, g[1], g[1], FALSE, &p));
    g_assert_cmpint(p.type, ==, CS_PATH_LOC);
    g_assert_cmpint(p.nhops, ==, 0);
    g_assert_false(cs_path_intra(t, g[1], 999, FALSE, &p));
    g_assert_cmpint(p.type, ==, CS_PATH_DIS);
}

static void test_type_names(void)
{
    cs_path_type_t p = CS_PATH_DIS;
    g_assert_cmpstr(cs_path_type_name(CS_PATH_NVB), ==, "NVB");
    g_assert_cmpstr(cs_path_type_name(CS_PATH_P2C), ==, "P2C");
    g_assert_cmpstr(cs_path_type_name(CS_PATH_PXN), ==, "PXN");
    g_assert_cmpstr(cs_path_type_name(CS_PATH_DIS), ==, "DIS");
    g_assert_true(cs_path_type_parse("PHB", &p));
    g_assert_cmpint(p, ==, CS_PATH_PHB);
    g_assert_true(cs_path_type_parse("nvl", &p));
    g_assert_cmpint(p, ==, CS_PATH_NVL);
    /* Old integers: 0-5 = LOC, PIX, PXB, PHB, SYS, SYS (paths.cc levelsOldToNew). */
    static const cs_path_type_t old[] = { CS_PATH_LOC, CS_PATH_PIX, CS_PATH_PXB,
                                          CS_PATH_PHB, CS_PATH_SYS, CS_PATH_SYS };
    for (int i = 0; i < 6; i++) {
        char s[2] = { (char)('0' + i), 0 };
        g_assert_true(cs_path_type_parse(s, &p));
        g_assert_cmpint(p, ==, old[i]);
    }
    p = CS_PATH_NVL;
    g_assert_false(cs_path_type_parse("6", &p));
    g_assert_false(cs_path_type_parse("PIXX", &p));
    g_assert_false(cs_path_type_parse("", &p));
    g_assert_cmpint(p, ==, CS_PATH_NVL);
}

static void test_p2c(void)
{
    /* Grace-like: the GPU reaches its CPU over C2C, the NIC hangs off that
     * CPU's root port. gpu -C2C- cpu -PCIe- nic is PHB by the link rules,
     * then P2C by ncclTopoComputePaths. */
    g_autoptr(cs_topo_t) t = cs_topo_new("grace");
    int gpu = fx_dev(t, CS_DEV_GPU, "gpu", 0, 0, 0);
    int cpu = fx_dev(t, CS_DEV_CPU, "cpu", 0, 0, 0);
    t->devs[cpu].vendor = CS_CPU_ARM;
    int nic = fx_dev(t, CS_DEV_NIC, "nic", 0, 0, 0);
    int other = fx_dev(t, CS_DEV_GPU, "gpu1", 0, 1, 0);
    cs_topo_add_link(t, gpu, cpu, CS_LINK_C2C, 450e9, 0, 0);
    fx_pci(t, cpu, nic, 5);
    fx_pci(t, cpu, other, 5);
    g_autoptr(GError) err = NULL;
    g_assert_true(cs_topo_finish(t, &err));
    check_path(t, gpu, nic, FALSE, CS_PATH_P2C, 2, 48.0, cs_pcie_bw(5, 16), 100e-9);
    check_path(t, nic, gpu, FALSE, CS_PATH_P2C, 2, 48.0, cs_pcie_bw(5, 16), 100e-9);
    /* Without C2C the same shape stays PHB. */
    check_path(t, other, nic, FALSE, CS_PATH_PHB, 2, 48.0, cs_pcie_bw(5, 16), 200e-9);
    /* GPU to GPU over C2C then PCIe through the CPU: PHB. */
    check_path(t, gpu, other, FALSE, CS_PATH_PHB, 2, 48.0, cs_pcie_bw(5, 16), 100e-9);

    g_autoptr(cs_path_cache_t) c = cs_path_cache_new(t, FALSE);
    g_assert_cmpint(cs_path_cache_nic(c, 0, 0)->type, ==, CS_PATH_P2C);
    g_assert_cmpint(cs_path_cache_nic(c, 1, 0)->type, ==, CS_PATH_PHB);
}

/* Two nodes (fixture shape each, nic0 of node n on leaf n) and two spines;
 * every NET cable 50 GB/s, 500 ns. leaf0-spine0 is doubled. */
typedef struct {
    fixture_ids_t n0, n1;
    int leaf0, leaf1, spine0, spine1;
} fabric_ids_t;

static cs_topo_t *two_nodes(fabric_ids_t *f)
{
    cs_topo_t *t = cs_topo_new("two-nodes");
    fixture_add_node(t, 0, "n0.", &f->n0);
    fixture_add_node(t, 1, "n1.", &f->n1);
    f->leaf0 = fx_dev(t, CS_DEV_SWITCH, "leaf0", -1, 0, 0);
    f->leaf1 = fx_dev(t, CS_DEV_SWITCH, "leaf1", -1, 0, 0);
    f->spine0 = fx_dev(t, CS_DEV_SWITCH, "spine0", -1, 0, 0);
    f->spine1 = fx_dev(t, CS_DEV_SWITCH, "spine1", -1, 0, 0);
    cs_topo_add_link(t, f->n0.nic0, f->leaf0, CS_LINK_NET, 50e9, 500e-9, 0);
    cs_topo_add_link(t, f->n1.nic0, f->leaf1, CS_LINK_NET, 50e9, 500e-9, 0);
    cs_topo_add_link(t, f->leaf0, f->spine0, CS_LINK_NET, 50e9, 500e-9, 0);
    cs_topo_add_link(t, f->leaf0, f->spine0, CS_LINK_NET, 50e9, 500e-9, 0);
    cs_topo_add_link(t, f->leaf0, f->spine1, CS_LINK_NET, 50e9, 500e-9, 0);
    cs_topo_add_link(t, f->leaf1, f->spine0, CS_LINK_NET, 50e9, 500e-9, 0);
    cs_topo_add_link(t, f->leaf1, f->spine1, CS_LINK_NET, 50e9, 500e-9, 0);
    g_autoptr(GError) err = NULL;
    gboolean ok = cs_topo_finish(t, &err);
    g_assert_no_error(err);
    g_assert_true(ok);
    return t;
}

static void test_net(void)
{
    fabric_ids_t f;
    g_autoptr(cs_topo_t) t = two_nodes(&f);
    int a = f.n0.nic0, b = f.n1.nic0;
    int seen_links[3] = { -1, -1, -1 }, nseen = 0, via[2] = { 0, 0 };
    for (guint32 h = 0; h < 256; h++) {
        cs_path_t p, q;
        g_assert_true(cs_path_net(t, a, b, h, &p));
        g_assert_cmpint(p.type, ==, CS_PATH_NET);
        g_assert_cmpint(p.nhops, ==, 4);
        g_assert_cmpfloat_with_epsilon(p.bw, 50e9, 1);
        g_assert_cmpfloat_with_epsilon(p.nccl_bw, 50.0, EPS);
        g_assert_cmpfloat_with_epsilon(p.lat, 2e-6, 1e-12);
        g_assert_cmpint(t->links[p.links[0]].src, ==, a);
        g_assert_cmpint(t->links[p.links[0]].dst, ==, f.leaf0);
        int spine = t->links[p.links[1]].dst;
        g_assert_true(spine == f.spine0 || spine == f.spine1);
        via[spine == f.spine1]++;
        g_assert_cmpint(t->links[p.links[2]].dst, ==, f.leaf1);
        g_assert_cmpint(t->links[p.links[3]].dst, ==, b);
        /* Same hash, same route. */
        g_assert_true(cs_path_net(t, a, b, h, &q));
        g_assert_cmpint(memcmp(p.links, q.links, sizeof(int) * 4), ==, 0);
        int k;
        for (k = 0; k < nseen; k++)
            if (seen_links[k] == p.links[1])
                break;
        if (k == nseen) {
            g_assert_cmpint(nseen, <, 3);
            seen_links[nseen++] = p.links[1];
        }
    }
    /* All three uplinks of leaf0 (two parallel cables to spine0) get used,
     * spine0 about twice as often as spine1. */
    g_assert_cmpint(nseen, ==, 3);
    g_assert_cmpint(via[0], >, via[1]);
    g_assert_cmpint(via[1], >, 256 / 6);

    /* Every route: the three uplinks, each continued by its spine's one
     * link down (adaptive routing's alternatives); each hashed route is
     * one of them; max bounds the count. */
    cs_path_t all[8];
    int nall = cs_path_net_all(t, a, b, all, 8);
    g_assert_cmpint(nall, ==, 3);
    for (int i = 0; i < nall; i++) {
        g_assert_cmpint(all[i].nhops, ==, 4);
        g_assert_cmpint(all[i].links[1], ==, seen_links[0] == all[i].links[1] || seen_links[1] == all[i].links[1]
                                                || seen_links[2] == all[i].links[1] ? all[i].links[1] : -1);
        g_assert_cmpint(t->links[all[i].links[3]].dst, ==, b);
        for (int j = 0; j < i; j++)
            g_assert_cmpint(memcmp(all[i].links, all[j].links, sizeof(int) * 4), !=, 0);
    }
    g_assert_cmpint(cs_path_net_all(t, a, b, all, 2), ==, 2);
    g_assert_cmpint(cs_path_net_all(t, a, a, all, 8), ==, 0);

    /* Reverse direction works too and ends at a. */
    cs_path_t p;
    g_assert_true(cs_path_net(t, b, a, 7, &p));
    g_assert_cmpint(p.nhops, ==, 4);
    g_assert_cmpint(t->links[p.links[3]].dst, ==, a);
    /* Same NIC: local. A NIC without cables: no route. */
    g_assert_true(cs_path_net(t, a, a, 0, &p));
    g_assert_cmpint(p.type, ==, CS_PATH_LOC);
    g_assert_false(cs_path_net(t, a, f.n0.gpu[0], 0, &p));
    g_assert_cmpint(p.type, ==, CS_PATH_DIS);
}

static void test_net_direct(void)
{
    /* Back-to-back cable: one hop, and GPUs or NICs never relay. */
    g_autoptr(cs_topo_t) t = cs_topo_new("b2b");
    int g0 = fx_dev(t, CS_DEV_GPU, "g0", 0, 0, 0);
    int n0 = fx_dev(t, CS_DEV_NIC, "n0", 0, 0, 0);
    int g1 = fx_dev(t, CS_DEV_GPU, "g1", 1, 0, 0);
    int n1 = fx_dev(t, CS_DEV_NIC, "n1", 1, 0, 0);
    int n2 = fx_dev(t, CS_DEV_NIC, "n2", 2, 0, 0);
    fx_pci(t, g0, n0, 4);
    fx_pci(t, g1, n1, 4);
    cs_topo_add_link(t, n0, n1, CS_LINK_NET, 12.5e9, 1e-6, 0);
    cs_topo_add_link(t, n1, n2, CS_LINK_NET, 12.5e9, 1e-6, 0);
    g_autoptr(GError) err = NULL;
    g_assert_true(cs_topo_finish(t, &err));
    cs_path_t p;
    g_assert_true(cs_path_net(t, n0, n1, 123, &p));
    g_assert_cmpint(p.nhops, ==, 1);
    g_assert_cmpfloat_with_epsilon(p.nccl_bw, 12.5, EPS);
    g_assert_false(cs_path_net(t, n0, n2, 0, &p));   /* n1 is a NIC, not a switch */
}

static void test_cache(void)
{
    fabric_ids_t f;
    g_autoptr(cs_topo_t) t = two_nodes(&f);
    g_autoptr(cs_path_cache_t) c = cs_path_cache_new(t, FALSE);
    g_autoptr(cs_path_cache_t) cn = cs_path_cache_new(t, TRUE);
    g_assert_cmpint(t->ngpus, ==, 10);
    for (int node = 0; node < 2; node++) {
        int base = node * 5;
        /* Ranks follow the local index, so rank base+i is gpu i. */
        g_assert_cmpint(cs_path_cache_gpu(c, base + 0, base + 2)->type, ==, CS_PATH_NVL);
        g_assert_cmpint(cs_path_cache_gpu(c, base + 0, base + 1)->type, ==, CS_PATH_PIX);
        g_assert_cmpint(cs_path_cache_gpu(c, base + 1, base + 2)->type, ==, CS_PATH_PXB);
        g_assert_cmpint(cs_path_cache_gpu(c, base + 4, base + 0)->type, ==, CS_PATH_PHB);
        g_assert_cmpint(cs_path_cache_gpu(c, base + 1, base + 3)->type, ==, CS_PATH_SYS);
        g_assert_cmpint(cs_path_cache_gpu(c, base + 0, base + 3)->type, ==, CS_PATH_NVB);
        g_assert_cmpint(cs_path_cache_gpu(cn, base + 0, base + 3)->type, ==, CS_PATH_SYS);
        g_assert_cmpint(cs_path_cache_gpu(c, base + 3, base + 3)->type, ==, CS_PATH_LOC);
        g_assert_cmpint(cs_path_cache_nic(c, base + 2, 0)->type, ==, CS_PATH_PIX);
        g_assert_cmpint(cs_path_cache_nic(c, base + 0, 0)->type, ==, CS_PATH_PXB);
        g_assert_cmpint(cs_path_cache_nic(c, base + 3, 0)->type, ==, CS_PATH_SYS);
        g_assert_null(cs_path_cache_nic(c, base + 3, 1));
        /* Cached entries equal direct queries, links included. */
        for (int a = 0; a < 5; a++)
            for (int b = 0; b < 5; b++) {
                if (a == b)
                    continue;
                cs_path_t p;
                g_assert_true(cs_path_intra(t, t->rank_dev[base + a], t->rank_dev[base + b], FALSE, &p));
                const cs_path_t *e = cs_path_cache_gpu(c, base + a, base + b);
                g_assert_cmpint(e->type, ==, p.type);
                g_assert_cmpint(e->nhops, ==, p.nhops);
                g_assert_cmpint(memcmp(e->links, p.links, sizeof(int) * p.nhops), ==, 0);
                g_assert_cmpfloat(e->bw, ==, p.bw);
                g_assert_cmpfloat(e->nccl_bw, ==, p.nccl_bw);
            }
    }
    /* Different nodes: not an intra-node path. */
    g_assert_null(cs_path_cache_gpu(c, 0, 5));
    cs_path_t p;
    g_assert_false(cs_path_intra(t, f.n0.gpu[0], f.n1.gpu[0], FALSE, &p));
    g_assert_cmpint(p.type, ==, CS_PATH_DIS);
    /* Fabric switches are never part of an intra-node path. */
    g_assert_false(cs_path_intra(t, f.leaf0, f.n0.nic0, FALSE, &p));
}

/* 1000 nodes of 8 GPUs (DGX-like: 4 NVSwitches, 4 PCIe switches with two
 * GPUs and two NICs each, 2 CPUs), one leaf per 32 nodes per rail and 8
 * spines per rail: the cache must build quickly. */
static void test_scale(void)
{
    const int nodes = 1000, gpn = 8;
    g_autoptr(cs_topo_t) t = cs_topo_new("scale");
    char name[64];
    int leaves = (nodes + 31) / 32;
    int leaf[8][32], spine[8][8];
    for (int r = 0; r < 8; r++) {
        for (int l = 0; l < leaves; l++) {
            g_snprintf(name, sizeof(name), "leaf%d.%d", r, l);
            leaf[r][l] = fx_dev(t, CS_DEV_SWITCH, name, -1, 0, 0);
        }
        for (int s = 0; s < 8; s++) {
            g_snprintf(name, sizeof(name), "spine%d.%d", r, s);
            spine[r][s] = fx_dev(t, CS_DEV_SWITCH, name, -1, 0, 0);
            for (int l = 0; l < leaves; l++)
                cs_topo_add_link(t, leaf[r][l], spine[r][s], CS_LINK_NET, 50e9, 130e-9, 0);
        }
    }
    for (int n = 0; n < nodes; n++) {
#define NAME(...) (g_snprintf(name, sizeof(name), __VA_ARGS__), name)
        int cpu[2], nvs[4], psw[4];
        for (int i = 0; i < 2; i++) {
            cpu[i] = fx_dev(t, CS_DEV_CPU, NAME("n%d.cpu%d", n, i), n, i, 0);
            t->devs[cpu[i]].vendor = CS_CPU_INTEL;
        }
        cs_topo_add_link(t, cpu[0], cpu[1], CS_LINK_SYS, 60e9, 100e-9, 0);
        for (int i = 0; i < 4; i++) {
            nvs[i] = fx_dev(t, CS_DEV_NVSWITCH, NAME("n%d.nvs%d", n, i), n, i, 0);
            psw[i] = fx_dev(t, CS_DEV_PCISW, NAME("n%d.psw%d", n, i), n, i, 0);
            fx_pci(t, cpu[i / 2], psw[i], 5);
        }
        for (int g = 0; g < gpn; g++) {
            int gpu = fx_dev(t, CS_DEV_GPU, NAME("n%d.gpu%d", n, g), n, g, 0);
            int nic = fx_dev(t, CS_DEV_NIC, NAME("n%d.nic%d", n, g), n, g, 0);
            fx_pci(t, psw[g / 2], gpu, 5);
            fx_pci(t, psw[g / 2], nic, 5);
            for (int i = 0; i < 4; i++)
                fx_nvl(t, gpu, nvs[i], i < 2 ? 5 : 4);
            cs_topo_add_link(t, nic, leaf[g][n / 32], CS_LINK_NET, 50e9, 130e-9, 0);
        }
#undef NAME
    }
    g_autoptr(GError) err = NULL;
    gint64 t0 = g_get_monotonic_time();
    g_assert_true(cs_topo_finish(t, &err));
    gint64 t1 = g_get_monotonic_time();
    g_autoptr(cs_path_cache_t) c = cs_path_cache_new(t, FALSE);
    gint64 t2 = g_get_monotonic_time();
    g_test_message("finish %.1f ms, path cache %.1f ms", (t1 - t0) / 1e3, (t2 - t1) / 1e3);
    g_assert_cmpint(t->ngpus, ==, nodes * gpn);
    /* GPU-NVSwitch-GPU: NVL over one switch plane; among equal types NCCL
     * keeps the widest, a 5-link plane: 5 x 20.6 = 103 GB/s. */
    const cs_path_t *p = cs_path_cache_gpu(c, 8 * 999 + 1, 8 * 999 + 6);
    g_assert_cmpint(p->type, ==, CS_PATH_NVL);
    g_assert_cmpint(p->nhops, ==, 2);
    g_assert_cmpfloat_with_epsilon(p->nccl_bw, 103.0, EPS);
    g_assert_cmpint(cs_path_cache_nic(c, 8 * 500 + 3, 3)->type, ==, CS_PATH_PIX);
    g_assert_cmpint(cs_path_cache_nic(c, 8 * 500 + 3, 2)->type, ==, CS_PATH_PIX);
    g_assert_cmpint(cs_path_cache_nic(c, 8 * 500 + 3, 0)->type, ==, CS_PATH_PHB);
    g_assert_cmpint(cs_path_cache_nic(c, 8 * 500 + 3, 7)->type, ==, CS_PATH_SYS);
    /* Rail route between far nodes: nic - leaf - spine - leaf - nic. */
    int nics_a[8], nics_b[8];
    g_assert_cmpint(cs_topo_node_nics(t, 0, nics_a, 8), ==, 8);
    g_assert_cmpint(cs_topo_node_nics(t, 999, nics_b, 8), ==, 8);
    gint64 t3 = g_get_monotonic_time();
    cs_path_t q;
    for (int n = 1; n < nodes; n++) {
        int nb[8];
        cs_topo_node_nics(t, n, nb, 8);
        g_assert_true(cs_path_net(t, nics_a[5], nb[5], (guint32)n, &q));
        g_assert_cmpint(q.nhops, ==, n < 32 ? 2 : 4);
    }
    gint64 t4 = g_get_monotonic_time();
    g_test_message("999 fabric routes %.1f ms", (t4 - t3) / 1e3);
    /* Loose bounds: catch quadratic behaviour, not scheduling noise
     * (sanitizer builds are several times slower). */
    g_assert_cmpint(t2 - t1, <, 5 * G_USEC_PER_SEC);
    g_assert_cmpint(t4 - t3, <, 2 * G_USEC_PER_SEC);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/paths/types", test_types);
    g_test_add_func("/paths/type-names", test_type_names);
    g_test_add_func("/paths/p2c", test_p2c);
    g_test_add_func("/paths/net", test_net);
    g_test_add_func("/paths/net-direct", test_net_direct);
    g_test_add_func("/paths/cache", test_cache);
    g_test_add_func("/paths/scale", test_scale);
    return g_test_run();
}
