/* Topology graph: freezing, ranks, NCCL link bandwidths, validation
 * messages, restriction and node queries. */
#include "config.h"

#include <string.h>

#include "models/cs_topo.h"
#include "util/cs_error.h"
#include "topo-fixture.h"

static void test_basic(void)
{
    fixture_ids_t f;
    g_autoptr(cs_topo_t) t = fixture_node(&f);
    g_assert_true(t->finished);
    g_assert_cmpint(t->ngpus, ==, 5);
    g_assert_cmpint(t->nnodes, ==, 1);
    g_assert_cmpint(t->node_first_rank[0], ==, 0);
    g_assert_cmpint(t->node_first_rank[1], ==, 5);
    g_assert_cmpint(cs_topo_node_gpus(t, 0), ==, 5);
    g_assert_cmpint(cs_topo_node_gpus(t, 1), ==, 0);
    for (int r = 0; r < 5; r++) {
        g_assert_cmpint(t->rank_dev[r], ==, f.gpu[r]);
        g_assert_cmpint(cs_topo_rank_dev(t, r)->rank, ==, r);
    }
    g_assert_cmpint(t->devs[f.nic0].rank, ==, -1);
    g_assert_cmpint(cs_topo_find(t, "gpu3"), ==, f.gpu[3]);
    g_assert_cmpint(cs_topo_find(t, "sw1b"), ==, f.sw1b);
    g_assert_cmpint(cs_topo_find(t, "nope"), ==, -1);
    /* Adjacency: every link appears once under its source. */
    int total = 0;
    for (int d = 0; d < t->ndevs; d++)
        for (int k = t->adj_off[d]; k < t->adj_off[d + 1]; k++) {
            g_assert_cmpint(t->links[t->adj[k]].src, ==, d);
            total++;
        }
    g_assert_cmpint(total, ==, t->nlinks);
    /* gpu2: sw1b, gpu0, gpu3. */
    g_assert_cmpint(t->adj_off[f.gpu[2] + 1] - t->adj_off[f.gpu[2]], ==, 3);
    /* Count set on a->b only reaches b->a. */
    const cs_link_t *l = &t->links[f.l_gpu0_gpu2];
    g_assert_cmpint(t->links[l->reverse].count, ==, 4);
    g_assert_cmpint(t->links[l->reverse].src, ==, f.gpu[2]);
}

static void test_nccl_bw(void)
{
    fixture_ids_t f;
    g_autoptr(cs_topo_t) t = fixture_node(&f);
    /* NVLink 4 x SM90 20.6 = 82.4 both ways (topo.h SM90_NVLINK_BW). */
    const cs_link_t *nv = &t->links[f.l_gpu0_gpu2];
    g_assert_cmpfloat_with_epsilon(nv->nccl_bw, 82.4, 1e-9);
    g_assert_cmpfloat_with_epsilon(t->links[nv->reverse].nccl_bw, 82.4, 1e-9);
    /* Gen4 x16 = 16*120/80 = 24; physical 31.5 GB/s. */
    const cs_link_t *p4 = &t->links[f.l_gpu1_sw1a];
    g_assert_cmpfloat_with_epsilon(p4->nccl_bw, 24.0, 1e-9);
    g_assert_cmpfloat_with_epsilon(t->links[p4->reverse].nccl_bw, 24.0, 1e-9);
    for (int i = 0; i < t->nlinks; i++) {
        const cs_link_t *l = &t->links[i];
        if (l->kind == CS_LINK_SYS)   /* Intel: Sapphire Rapids 22 */
            g_assert_cmpfloat_with_epsilon(l->nccl_bw, 22.0, 1e-9);
        if (l->kind == CS_LINK_PCI && l->pcie_gen == 5)
            g_assert_cmpfloat_with_epsilon(l->nccl_bw, 48.0, 1e-9);
        if (l->kind == CS_LINK_PCI && l->pcie_gen == 3)
            g_assert_cmpfloat_with_epsilon(l->nccl_bw, 12.0, 1e-9);
    }

    /* Stand-alone link rules on a scratch graph. */
    g_autoptr(cs_topo_t) s = cs_topo_new("scratch");
    cs_device_t d = { .kind = CS_DEV_GPU, .name = "g0", .gpu = cs_gpu_model_find("a100-sxm") };
    int g0 = cs_topo_add_device(s, &d);
    d.name = "g1";
    d.local = 1;
    d.gpu = cs_gpu_model_find("rtx3090");
    int g1 = cs_topo_add_device(s, &d);
    cs_device_t c = { .kind = CS_DEV_CPU, .name = "c0", .vendor = CS_CPU_AMD };
    int c0 = cs_topo_add_device(s, &c);
    c.name = "c1";
    c.vendor = CS_CPU_ARM;
    int c1 = cs_topo_add_device(s, &c);
    cs_device_t n = { .kind = CS_DEV_NIC, .name = "nic", .nic_bw = 25e9 };
    int nic = cs_topo_add_device(s, &n);
    int nv3 = cs_topo_add_link(s, g0, g1, CS_LINK_NVL, 12 * 25e9, 0, 0);
    s->links[nv3].count = 12;
    int pw8 = cs_topo_add_link(s, g0, c0, CS_LINK_PCI, cs_pcie_bw(4, 8), 0, 0);
    s->links[pw8].pcie_gen = 4;
    s->links[pw8].pcie_width = 8;
    /* No gen or width: scaled from the physical Gen5 x16 rate -> 48. */
    int pbw = cs_topo_add_link(s, g1, c0, CS_LINK_PCI, cs_pcie_bw(5, 16), 0, 0);
    int sys = cs_topo_add_link(s, c0, c1, CS_LINK_SYS, 50e9, 0, 0);
    cs_topo_add_link(s, c1, nic, CS_LINK_PCI, 25e9, 0, 0);
    g_autoptr(GError) err = NULL;
    g_assert_true(cs_topo_finish(s, &err));
    g_assert_no_error(err);
    /* a100 end: 12 x 20 = 240; the rtx3090 end (sm86): 12 x 12 = 144. */
    g_assert_cmpfloat_with_epsilon(s->links[nv3].nccl_bw, 240.0, 1e-9);
    g_assert_cmpfloat_with_epsilon(s->links[s->links[nv3].reverse].nccl_bw, 144.0, 1e-9);
    g_assert_cmpfloat_with_epsilon(s->links[pw8].nccl_bw, 12.0, 1e-9);   /* 8*120/80 */
    g_assert_cmpfloat_with_epsilon(s->links[pbw].nccl_bw, 48.0, 1e-9);
    g_assert_cmpfloat_with_epsilon(s->links[sys].nccl_bw, 16.0, 1e-9);   /* AMD side first */
    g_assert_cmpfloat_with_epsilon(s->links[s->links[sys].reverse].nccl_bw, 6.0, 1e-9); /* ARM */
    /* NET: 400 Gb/s = 50e9 B/s -> speed 400000 Mb/s / 8000 = 50. */
    cs_link_t nl = { .src = c0, .dst = c1, .kind = CS_LINK_NET, .bw = 50e9, .count = 1 };
    g_assert_cmpfloat_with_epsilon(cs_topo_nccl_link_bw(s, &nl), 50.0, 1e-9);
    cs_link_t cl = { .src = g0, .dst = c0, .kind = CS_LINK_C2C, .bw = 450e9, .count = 1 };
    g_assert_cmpfloat_with_epsilon(cs_topo_nccl_link_bw(s, &cl), 450.0, 1e-9);
}

static void test_ranks_multi_node(void)
{
    g_autoptr(cs_topo_t) t = cs_topo_new("multi");
    /* Added out of order: ranks must follow (node, local). */
    int g11 = fx_dev(t, CS_DEV_GPU, "n1.gpu1", 1, 1, 0);
    int g00 = fx_dev(t, CS_DEV_GPU, "n0.gpu0", 0, 0, 0);
    int g10 = fx_dev(t, CS_DEV_GPU, "n1.gpu0", 1, 0, 0);
    int g01 = fx_dev(t, CS_DEV_GPU, "n0.gpu1", 0, 1, 0);
    int g30 = fx_dev(t, CS_DEV_GPU, "n3.gpu0", 3, 0, 0);   /* node 2 has no GPU */
    int sw = fx_dev(t, CS_DEV_SWITCH, "leaf", -1, 0, 0);
    int gs[] = { g00, g01, g10, g11, g30 };
    for (int i = 0; i < 5; i++)
        cs_topo_add_link(t, gs[i], sw, CS_LINK_NET, 50e9, 1e-6, 0);
    g_autoptr(GError) err = NULL;
    g_assert_true(cs_topo_finish(t, &err));
    g_assert_cmpint(t->nnodes, ==, 4);
    g_assert_cmpint(t->ngpus, ==, 5);
    for (int r = 0; r < 5; r++)
        g_assert_cmpint(t->rank_dev[r], ==, gs[r]);
    int first[] = { 0, 2, 4, 4, 5 };
    for (int n = 0; n <= 4; n++)
        g_assert_cmpint(t->node_first_rank[n], ==, first[n]);
    g_assert_cmpint(cs_topo_node_gpus(t, 2), ==, 0);
    g_assert_cmpint(cs_topo_node_gpus(t, 3), ==, 1);
    /* Finishing twice is harmless. */
    g_assert_true(cs_topo_finish(t, &err));
}

static void expect_error(cs_topo_t *t, const char *msg)
{
    g_autoptr(GError) err = NULL;
    g_assert_false(cs_topo_finish(t, &err));
    g_assert_nonnull(err);
    g_assert_cmpstr(err->message, ==, msg);
    g_assert_false(t->finished);
    g_assert_null(t->rank_dev);
}

static void test_errors(void)
{
    {
        g_autoptr(cs_topo_t) t = cs_topo_new("t.xml");
        fx_dev(t, CS_DEV_GPU, "g0", 0, 0, 3);
        fx_dev(t, CS_DEV_GPU, "g0", 0, 1, 7);
        expect_error(t, "t.xml:7: duplicate device id 'g0'; ids must be unique");
    }
    {
        g_autoptr(cs_topo_t) t = cs_topo_new("preset:x");
        fx_dev(t, CS_DEV_GPU, "g0", 0, 0, 0);
        fx_dev(t, CS_DEV_GPU, "g0", 0, 1, 0);
        expect_error(t, "collsim: topology 'preset:x': duplicate device id 'g0'; ids must be unique");
    }
    {
        g_autoptr(cs_topo_t) t = cs_topo_new("t.xml");
        fx_dev(t, CS_DEV_CPU, "c", 0, 0, 2);
        expect_error(t, "collsim: topology 't.xml': no GPU in the topology; expected at least one GPU");
    }
    {
        g_autoptr(cs_topo_t) t = cs_topo_new("t.xml");
        int a = fx_dev(t, CS_DEV_GPU, "a", 0, 0, 2);
        int b = fx_dev(t, CS_DEV_GPU, "b", 0, 1, 3);
        cs_topo_add_link(t, a, b, CS_LINK_NVL, 0, 0, 9);
        expect_error(t, "t.xml:9: link 'a' - 'b' has bandwidth 0 B/s; expected a positive bandwidth");
    }
    {
        g_autoptr(cs_topo_t) t = cs_topo_new("t.xml");
        int a = fx_dev(t, CS_DEV_GPU, "a", 0, 0, 2);
        int b = fx_dev(t, CS_DEV_GPU, "b", 0, 1, 3);
        cs_topo_add_link(t, a, b, CS_LINK_NVL, 1e9, -1e-6, 10);
        expect_error(t, "t.xml:10: link 'a' - 'b' has latency -1e-06 s; expected a latency >= 0");
    }
    {
        g_autoptr(cs_topo_t) t = cs_topo_new("t.xml");
        int a = fx_dev(t, CS_DEV_GPU, "a", 0, 0, 2);
        cs_topo_add_link(t, a, 5, CS_LINK_PCI, 1e9, 0, 11);
        expect_error(t, "t.xml:11: link 0 connects device 0 to device 5; expected indices below 1");
    }
    {
        g_autoptr(cs_topo_t) t = cs_topo_new("t.xml");
        fx_dev(t, CS_DEV_GPU, "a", 0, 0, 2);
        fx_dev(t, CS_DEV_GPU, "b", 0, 0, 4);
        expect_error(t, "t.xml:4: GPUs 'a' and 'b' both have local index 0 on node 0; expected distinct indices");
    }
    {
        /* Two nodes with NICs but no fabric between them. */
        g_autoptr(cs_topo_t) t = cs_topo_new("t.xml");
        int g0 = fx_dev(t, CS_DEV_GPU, "n0.gpu0", 0, 0, 3);
        int n0 = fx_dev(t, CS_DEV_NIC, "n0.nic0", 0, 0, 4);
        int g1 = fx_dev(t, CS_DEV_GPU, "n1.gpu0", 1, 0, 6);
        int n1 = fx_dev(t, CS_DEV_NIC, "n1.nic0", 1, 0, 7);
        fx_pci(t, g0, n0, 4);
        fx_pci(t, g1, n1, 4);
        expect_error(t, "t.xml:6: GPU 'n1.gpu0' has no path to GPU 'n0.gpu0'; expected NVLink, "
                        "PCIe or a NIC and fabric connecting them");
        /* Cabling the NICs back to back fixes it; a failed finish left no state behind. */
        cs_topo_add_link(t, n0, n1, CS_LINK_NET, 25e9, 1e-6, 8);
        g_autoptr(GError) err = NULL;
        g_assert_true(cs_topo_finish(t, &err));
        g_assert_no_error(err);
        g_assert_cmpint(t->ngpus, ==, 2);
    }
    {
        g_autoptr(GError) err = NULL;
        fixture_ids_t f;
        g_autoptr(cs_topo_t) t = fixture_node(&f);
        g_assert_null(cs_topo_restrict_gpus(t, 0, &err));
        g_assert_error(err, CS_ERROR, CS_ERROR_INPUT);
    }
}

static void test_restrict(void)
{
    fixture_ids_t f;
    g_autoptr(cs_topo_t) t = fixture_node(&f);
    g_autoptr(GError) err = NULL;
    g_autoptr(cs_topo_t) r = cs_topo_restrict_gpus(t, 3, &err);
    g_assert_no_error(err);
    g_assert_nonnull(r);
    g_assert_true(r->finished);
    g_assert_cmpint(r->ngpus, ==, 3);
    g_assert_cmpint(r->ndevs, ==, t->ndevs - 2);
    g_assert_cmpint(cs_topo_find(r, "gpu3"), ==, -1);
    g_assert_cmpint(cs_topo_find(r, "gpu4"), ==, -1);
    g_assert_cmpstr(cs_topo_rank_dev(r, 2)->name, ==, "gpu2");
    /* Dropped: sw2-gpu3, cpu0-gpu4, gpu2-gpu3 NVLink = 3 pairs. */
    g_assert_cmpint(r->nlinks, ==, t->nlinks - 6);
    /* Attributes survive: the gpu0-gpu2 bundle still has 4 links. */
    int g0 = cs_topo_find(r, "gpu0"), g2 = cs_topo_find(r, "gpu2");
    gboolean found = FALSE;
    for (int k = r->adj_off[g0]; k < r->adj_off[g0 + 1]; k++) {
        const cs_link_t *l = &r->links[r->adj[k]];
        if (l->dst == g2) {
            found = TRUE;
            g_assert_cmpint(l->count, ==, 4);
            g_assert_cmpfloat_with_epsilon(l->nccl_bw, 82.4, 1e-9);
        }
    }
    g_assert_true(found);
    /* Restricting to one GPU per node still works; more than present is a copy. */
    g_autoptr(cs_topo_t) one = cs_topo_restrict_gpus(t, 1, &err);
    g_assert_no_error(err);
    g_assert_cmpint(one->ngpus, ==, 1);
    g_autoptr(cs_topo_t) all = cs_topo_restrict_gpus(t, 8, &err);
    g_assert_no_error(err);
    g_assert_cmpint(all->ngpus, ==, 5);
    g_assert_cmpint(all->nlinks, ==, t->nlinks);
}

static void test_restrict_disconnects(void)
{
    /* gpu1 reaches gpu0 only through gpu2's NVLinks: dropping gpu2 must
     * fail with the unreachable-GPU error. */
    g_autoptr(cs_topo_t) t = cs_topo_new("chain");
    int g0 = fx_dev(t, CS_DEV_GPU, "g0", 0, 0, 0);
    int g1 = fx_dev(t, CS_DEV_GPU, "g1", 0, 1, 0);
    int g2 = fx_dev(t, CS_DEV_GPU, "g2", 0, 2, 0);
    fx_nvl(t, g0, g2, 1);
    fx_nvl(t, g1, g2, 1);
    g_autoptr(GError) err = NULL;
    g_assert_true(cs_topo_finish(t, &err));
    g_autoptr(cs_topo_t) r = cs_topo_restrict_gpus(t, 2, &err);
    g_assert_null(r);
    g_assert_error(err, CS_ERROR, CS_ERROR_TOPOLOGY);
    g_assert_nonnull(strstr(err->message, "GPU 'g1' has no path to GPU 'g0'"));
}

static void test_queries(void)
{
    fixture_ids_t f;
    g_autoptr(cs_topo_t) t = fixture_node(&f);
    g_assert_cmpint(cs_topo_node_cpu_of(t, f.gpu[0]), ==, f.cpu0);
    g_assert_cmpint(cs_topo_node_cpu_of(t, f.gpu[1]), ==, f.cpu0);
    g_assert_cmpint(cs_topo_node_cpu_of(t, f.gpu[2]), ==, f.cpu0);
    g_assert_cmpint(cs_topo_node_cpu_of(t, f.gpu[3]), ==, f.cpu1);
    g_assert_cmpint(cs_topo_node_cpu_of(t, f.gpu[4]), ==, f.cpu0);
    g_assert_cmpint(cs_topo_node_cpu_of(t, f.nic0), ==, f.cpu0);
    g_assert_cmpint(cs_topo_node_cpu_of(t, f.cpu1), ==, f.cpu1);
    g_assert_cmpint(cs_topo_node_cpu_of(t, f.sw2), ==, f.cpu1);
    g_assert_cmpint(cs_topo_node_cpu_of(t, -1), ==, -1);
    /* PCIe paths from the CPU down: through both switch levels, and not
     * through gpu2's NVLinks (gpu3 hangs under sw2 of cpu1) */
    int chain[8];
    g_assert_cmpint(cs_topo_pci_chain(t, f.gpu[1], chain, 8), ==, 4);
    g_assert_cmpint(chain[0], ==, f.cpu0);
    g_assert_cmpint(chain[1], ==, f.sw0);
    g_assert_cmpint(chain[2], ==, f.sw1a);
    g_assert_cmpint(chain[3], ==, f.gpu[1]);
    g_assert_cmpint(cs_topo_pci_chain(t, f.nic0, chain, 8), ==, 4);
    g_assert_cmpint(chain[2], ==, f.sw1b);
    g_assert_cmpint(cs_topo_pci_chain(t, f.gpu[3], chain, 8), ==, 3);
    g_assert_cmpint(chain[0], ==, f.cpu1);
    g_assert_cmpint(chain[1], ==, f.sw2);
    g_assert_cmpint(cs_topo_pci_chain(t, f.gpu[4], chain, 8), ==, 2);
    g_assert_cmpint(cs_topo_pci_chain(t, f.cpu1, chain, 8), ==, 1);
    g_assert_cmpint(chain[0], ==, f.cpu1);
    g_assert_cmpint(cs_topo_pci_chain(t, f.gpu[1], chain, 3), ==, 0);   /* does not fit */
    g_assert_cmpint(cs_topo_pci_chain(t, -1, chain, 8), ==, 0);

    /* NICs in local order, whatever the order they were added in. */
    g_autoptr(cs_topo_t) m = cs_topo_new("nics");
    int g = fx_dev(m, CS_DEV_GPU, "g", 0, 0, 0);
    int c = fx_dev(m, CS_DEV_CPU, "c", 0, 0, 0);
    int n2 = fx_dev(m, CS_DEV_NIC, "n2", 0, 2, 0);
    int n0 = fx_dev(m, CS_DEV_NIC, "n0", 0, 0, 0);
    int n1 = fx_dev(m, CS_DEV_NIC, "n1", 0, 1, 0);
    int nodeless = fx_dev(m, CS_DEV_NIC, "x", 1, 0, 0);
    fx_pci(m, g, c, 4);
    fx_pci(m, n2, c, 4);
    fx_pci(m, n0, c, 4);
    fx_pci(m, n1, c, 4);
    fx_pci(m, nodeless, c, 4);
    g_autoptr(GError) err = NULL;
    g_assert_true(cs_topo_finish(m, &err));
    int nics[4] = { -1, -1, -1, -1 };
    g_assert_cmpint(cs_topo_node_nics(m, 0, NULL, 0), ==, 3);
    g_assert_cmpint(cs_topo_node_nics(m, 0, nics, 4), ==, 3);
    g_assert_cmpint(nics[0], ==, n0);
    g_assert_cmpint(nics[1], ==, n1);
    g_assert_cmpint(nics[2], ==, n2);
    g_assert_cmpint(nics[3], ==, -1);
    g_assert_cmpint(cs_topo_node_nics(m, 0, nics, 2), ==, 2);
    g_assert_cmpint(cs_topo_node_nics(m, 1, nics, 4), ==, 1);
    g_assert_cmpint(nics[0], ==, nodeless);
    g_assert_cmpint(cs_topo_node_nics(m, 7, nics, 4), ==, 0);

    g_assert_cmpstr(cs_dev_kind_name(CS_DEV_PCISW), ==, "pcisw");
    g_assert_cmpstr(cs_dev_kind_name(CS_DEV_SWITCH), ==, "switch");
    g_assert_cmpstr(cs_link_kind_name(CS_LINK_NVL), ==, "nvlink");
    g_assert_cmpstr(cs_link_kind_name(CS_LINK_NET), ==, "net");
    g_assert_cmpstr(cs_cpu_vendor_name(CS_CPU_AMD), ==, "amd");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/topo/basic", test_basic);
    g_test_add_func("/topo/nccl-bw", test_nccl_bw);
    g_test_add_func("/topo/ranks-multi-node", test_ranks_multi_node);
    g_test_add_func("/topo/errors", test_errors);
    g_test_add_func("/topo/restrict", test_restrict);
    g_test_add_func("/topo/restrict-disconnects", test_restrict_disconnects);
    g_test_add_func("/topo/queries", test_queries);
    return g_test_run();
}
