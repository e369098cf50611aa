/* NCCL's rings, trees and channel counts on known machines, as
 * `collsim topo graph` prints them (cs_graph_log.c over the reproduced
 * search, cs_decide_graph.c). Each expectation is derived by hand from
 * NCCL v2.28.9's search.cc (speed lists, the order candidates are tried
 * in, ncclTopoDupChannels), connect.cc (ncclTopoPreset, connectTrees,
 * ncclTopoPostset) and trees.cc (ncclGetBtree / ncclGetDtree); each test
 * says how. NCCL bandwidths (topo.h): NVLink2 20 GB/s per link on sm70,
 * 20 on sm80 (SM80_NVLINK_BW), 20.6 on sm90; PCIe Gen4 x16 24; Intel
 * QPI (SKL) 10. */
#include "config.h"

#include <string.h>

#include "models/cs_decide.h"
#include "models/cs_graph_log.h"
#include "models/cs_hw.h"
#include "models/cs_presets.h"

static cs_topo_t *preset(const char *name, const char *gpu, int nodes)
{
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    o.nodes = nodes;
    if (gpu != NULL)
        o.gpu = gpu;
    g_autoptr(GError) err = NULL;
    cs_topo_t *t = cs_preset_build(name, &o, &err);
    if (t == NULL)
        g_error("%s: %s", name, err->message);
    return t;
}

static cs_comm_t *comm_of(const cs_topo_t *t)
{
    g_autoptr(GError) err = NULL;
    cs_comm_t *c = cs_comm_new(t, NULL, &err);
    if (c == NULL)
        g_error("cs_comm_new: %s", err->message);
    return c;
}

/* Rank 0's lines that start (after "NCCL INFO ") with 'what', joined by
 * newlines. */
static char *lines_of(const cs_comm_t *c, const char *what)
{
    g_autofree char *all = cs_graph_log_info(c, 0);
    g_assert_nonnull(all);
    g_auto(GStrv) lines = g_strsplit(all, "\n", -1);
    GString *o = g_string_new(NULL);
    for (int i = 0; lines[i] != NULL; i++) {
        const char *p = strstr(lines[i], "NCCL INFO ");
        if (p != NULL && g_str_has_prefix(p + 10, what))
            g_string_append_printf(o, "%s\n", p + 10);
    }
    return g_string_free(o, FALSE);
}

/* Every final channel's ring visits every rank once and comes back to 0;
 * prev and next agree; channels past the count and ranks past the
 * communicator are refused. */
static void assert_consistent(const cs_comm_t *c)
{
    const cs_comm_info_t *in = cs_comm_info(c);
    for (int ch = 0; ch < in->comm_nch; ch++) {
        int cur = 0;
        for (int i = 0; i < in->nranks; i++) {
            int prev, next, up, down[3], p2, n2, u2, d2[3];
            g_assert_true(cs_graph_log_channel(c, cur, ch, &prev, &next, &up, down));
            g_assert_true(cs_graph_log_channel(c, next, ch, &p2, &n2, &u2, d2));
            g_assert_cmpint(p2, ==, cur);
            if (i < in->nranks - 1)
                g_assert_cmpint(next, !=, 0);
            cur = next;
        }
        g_assert_cmpint(cur, ==, 0);
    }
    int prev, next, up, down[3];
    g_assert_false(cs_graph_log_channel(c, 0, in->comm_nch, &prev, &next, &up, down));
    g_assert_false(cs_graph_log_channel(c, in->nranks, 0, &prev, &next, &up, down));
}

/* Tree links from both ends: r's up lists r among its children. */
static void assert_tree_links(const cs_comm_t *c)
{
    const cs_comm_info_t *in = cs_comm_info(c);
    for (int ch = 0; ch < in->comm_nch; ch++)
        for (int r = 0; r < in->nranks; r++) {
            int prev, next, up, down[3], p, n, u, d[3];
            g_assert_true(cs_graph_log_channel(c, r, ch, &prev, &next, &up, down));
            if (up < 0)
                continue;
            g_assert_true(cs_graph_log_channel(c, up, ch, &p, &n, &u, d));
            g_assert_true(d[0] == r || d[1] == r || d[2] == r);
        }
}

/* DGX-1 (V100, hybrid cube-mesh; sm70 speeds 40,30,20,...). At 40 only
 * the double links (40) carry a channel; they form the cycle
 * 0-3-2-1-5-6-7-4 (candidates sorted by bandwidth, ties by index after
 * the current GPU: from 0, GPU 3 before 4). The PCI order 0,1,2,3 fails
 * (3-4 has no NVLink, and SYS is past typeIntra). Channel 0 = 0 3 2 1 5 6
 * 7 4; its replay finds the double links full one way, channel 1 takes
 * them the other way: 0 4 7 6 5 1 2 3: 2 x 40 = 80 < 120 (6 links x 20).
 * Lower speeds: 30 fits 2 channels (60); at 20 (20/40 > .49) each
 * channel replays once on the double links and the two single-link
 * cycles follow, 0 1 3 7 5 4 6 2 and its reverse 0 2 6 4 5 7 3 1: 6 x 20 =
 * 120 = the NVLink total, done. No duplication (20 < 25); postset
 * doubles to 12. The tree graph (BALANCED_TREE, 6 channels) follows the
 * same chains, so rank 0's trees go down to its chain's next GPU. */
static void test_dgx1(void)
{
    g_autoptr(cs_topo_t) t = preset("dgx1-v100", NULL, 1);
    g_autoptr(cs_comm_t) c = comm_of(t);
    g_autofree char *ch = lines_of(c, "Channel ");
    const char *rings = "0 3 2 1 5 6 7 4\n0 3 2 1 5 6 7 4\n0 4 7 6 5 1 2 3\n0 4 7 6 5 1 2 3\n"
                        "0 1 3 7 5 4 6 2\n0 2 6 4 5 7 3 1\n";
    GString *want = g_string_new(NULL);
    g_auto(GStrv) r = g_strsplit(rings, "\n", -1);
    for (int k = 0; k < 12; k++)
        g_string_append_printf(want, "Channel %02d/12 : %s\n", k, r[k % 6]);
    g_assert_cmpstr(ch, ==, want->str);
    g_string_free(want, TRUE);
    g_autofree char *pat = lines_of(c, "Pattern 4");
    g_assert_cmpstr(pat, ==, "Pattern 4, crossNic 0, nChannels 6, bw 20.000000/20.000000, type NVL/PIX, sameChannels 0\n");
    g_autofree char *trees = lines_of(c, "Trees");
    g_assert_cmpstr(trees, ==, "Trees [0] 3/-1/-1->0->-1 [1] 3/-1/-1->0->-1 [2] 4/-1/-1->0->-1 [3] 4/-1/-1->0->-1 "
                    "[4] 1/-1/-1->0->-1 [5] 2/-1/-1->0->-1 [6] 3/-1/-1->0->-1 [7] 3/-1/-1->0->-1 "
                    "[8] 4/-1/-1->0->-1 [9] 4/-1/-1->0->-1 [10] 1/-1/-1->0->-1 [11] 2/-1/-1->0->-1\n");
    assert_consistent(c);
    assert_tree_links(c);
}

/* DGX-2 with 12 of its 16 V100 (the shared data's v100sxm3x12 run): every
 * GPU has 6 NVLinks (6 x 20 = 120) into the NVSwitch plane, which NCCL
 * merges into one NVS node. NVSwitch: only the next GPU (ring) is tried,
 * and the PCI order 0..11 is first. At 40, replays give 3 channels = 120,
 * the total: done. Duplicated (40 >= 25): 6 x 20. Pass 2 cannot raise
 * (6 x 30 > 120). Postset: 12 channels; 12 ranks: two-digit fields. */
static void test_dgx2(void)
{
    const cs_gpu_model_t *m = cs_gpu_model_find("v100-sxm");
    g_assert_nonnull(m);
    cs_topo_t *t = cs_topo_new("test:dgx2");
    cs_device_t d;
    memset(&d, 0, sizeof d);
    d.node = 0;
    d.local = d.rank = d.socket = -1;
    d.kind = CS_DEV_CPU;
    d.name = "cpu0";
    d.vendor = CS_CPU_INTEL;
    d.socket = 0;
    int cpu = cs_topo_add_device(t, &d);
    d.vendor = 0;
    d.socket = -1;
    d.kind = CS_DEV_NVSWITCH;
    d.name = "nvs";
    int nvs = cs_topo_add_device(t, &d);
    for (int i = 0; i < 12; i++) {
        char name[16];
        g_snprintf(name, sizeof name, "gpu%d", i);
        d.kind = CS_DEV_GPU;
        d.name = name;
        d.gpu = m;
        d.local = i;
        d.gdr = TRUE;
        int g = cs_topo_add_device(t, &d);
        int l = cs_topo_add_link(t, cpu, g, CS_LINK_PCI, cs_pcie_bw(3, 16), 100e-9, 0);
        t->links[l].pcie_gen = t->links[t->links[l].reverse].pcie_gen = 3;
        t->links[l].pcie_width = t->links[t->links[l].reverse].pcie_width = 16;
        l = cs_topo_add_link(t, g, nvs, CS_LINK_NVL, 6 * m->nvlink_bw, 100e-9, 0);
        t->links[l].count = t->links[t->links[l].reverse].count = 6;
    }
    g_autoptr(GError) err = NULL;
    g_assert_true(cs_topo_finish(t, &err));
    g_autoptr(cs_comm_t) c = comm_of(t);
    g_autofree char *pat = lines_of(c, "Pattern 4");
    g_assert_cmpstr(pat, ==, "Pattern 4, crossNic 0, nChannels 6, bw 20.000000/20.000000, type NVL/PIX, sameChannels 1\n");
    g_autofree char *ch = lines_of(c, "Channel ");
    GString *want = g_string_new(NULL);
    for (int k = 0; k < 12; k++)
        g_string_append_printf(want, "Channel %02d/12 :  0  1  2  3  4  5  6  7  8  9 10 11\n", k);
    g_assert_cmpstr(ch, ==, want->str);
    g_string_free(want, TRUE);
    assert_consistent(c);
    cs_topo_free(t);
}

/* DGX A100 (12 NVLinks x 20 = 240 into NVSwitch; sm80 speeds): at 40 the
 * PCI order 0..7 and its replays give 6 x 40 = 240, done; duplicated (40
 * >= 25, sm80 is not > 80) to 12 x 20; postset 24. DGX H100 (18 x 20.6 =
 * 370.8; sm90 speeds 60,50,...): 6 x 60 = 360; no lower speed beats 360
 * (equal totals lose on hops); duplicated (60 >= 50) to 12 x 30; postset
 * 24. Both: every channel the ring 0..7, and the tree a chain 0->1->...->7. */
static void test_nvswitch_presets(void)
{
    const char *names[] = { "dgx-a100", "dgx-h100" };
    const char *pats[] = { "Pattern 4, crossNic 0, nChannels 12, bw 20.000000/20.000000, type NVL/PIX, sameChannels 1\n",
                           "Pattern 4, crossNic 0, nChannels 12, bw 30.000000/30.000000, type NVL/PIX, sameChannels 1\n" };
    for (int p = 0; p < 2; p++) {
        g_autoptr(cs_topo_t) t = preset(names[p], NULL, 1);
        g_autoptr(cs_comm_t) c = comm_of(t);
        g_autofree char *pat = lines_of(c, "Pattern 4");
        g_assert_cmpstr(pat, ==, pats[p]);
        g_autofree char *ch = lines_of(c, "Channel ");
        GString *want = g_string_new(NULL);
        for (int k = 0; k < 24; k++)
            g_string_append_printf(want, "Channel %02d/24 : 0 1 2 3 4 5 6 7\n", k);
        g_assert_cmpstr(ch, ==, want->str);
        g_string_free(want, TRUE);
        int prev, next, up, down[3];
        g_assert_true(cs_graph_log_channel(c, 3, 13, &prev, &next, &up, down));
        g_assert_cmpint(prev, ==, 2);
        g_assert_cmpint(next, ==, 4);
        g_assert_cmpint(up, ==, 2);
        g_assert_cmpint(down[0], ==, 4);
        g_assert_cmpint(down[1], ==, -1);
        assert_consistent(c);
        assert_tree_links(c);
    }
}

/* Two-socket PCIe server, 8 L40S, two per Gen4 switch (24), Intel QPI 10.
 * Any ring crosses the sockets twice, so no channel fits above 10: the
 * search walks 20, 18, 15, 12 (nothing found yet) to 10, where the PCI
 * order 0..7 fits once (each QPI direction carries it); 9, 7, 5 (5/10 >
 * .49) find nothing better. 1 x 10, no duplication, postset 2. */
static void test_pcie(void)
{
    g_autoptr(cs_topo_t) t = preset("pcie", "l40s", 1);
    g_autoptr(cs_comm_t) c = comm_of(t);
    g_autofree char *pat = lines_of(c, "Pattern 4");
    g_assert_cmpstr(pat, ==, "Pattern 4, crossNic 0, nChannels 1, bw 10.000000/10.000000, type SYS/PIX, sameChannels 1\n");
    g_autofree char *ch = lines_of(c, "Channel ");
    g_assert_cmpstr(ch, ==, "Channel 00/02 : 0 1 2 3 4 5 6 7\nChannel 01/02 : 0 1 2 3 4 5 6 7\n");
    assert_consistent(c);
}

/* Two DGX H100 nodes: the trees (trees.cc, 2 nodes): tree 0 is rooted at
 * node 0, whose root-rank (treeIntra[0], here rank 0) gets node 1's
 * first rank (8) as a second child; tree 1 mirrors it: node 1 is the
 * root, rank 0's parent is rank 8. sm90 trees fall back to pattern TREE
 * (search.cc), so child0 and child1 are both treeIntra[0]. Channel c of
 * the agreed count nch uses tree 0, channel c + nch tree 1. */
static void test_two_nodes(void)
{
    g_autoptr(cs_topo_t) t = preset("dgx-h100", NULL, 2);
    g_autoptr(cs_comm_t) c = comm_of(t);
    const cs_comm_info_t *in = cs_comm_info(c);
    g_autofree char *pat = lines_of(c, "Pattern 3");
    g_assert_true(g_str_has_prefix(pat, "Pattern 3, crossNic 0, nChannels "));
    int nch = in->tree_nch;
    int prev, next, up, down[3];
    g_assert_true(cs_graph_log_channel(c, 0, 0, &prev, &next, &up, down));
    g_assert_cmpint(up, ==, -1);
    g_assert_cmpint(down[1], ==, 8);
    g_assert_true(cs_graph_log_channel(c, 0, nch, &prev, &next, &up, down));
    g_assert_cmpint(up, ==, 8);
    g_assert_true(cs_graph_log_channel(c, 8, nch, &prev, &next, &up, down));
    g_assert_cmpint(up, ==, -1);
    g_assert_cmpint(down[1], ==, 0);
    assert_consistent(c);
    assert_tree_links(c);
    g_autofree char *xml = cs_graph_log_dump_xml(c, 0);
    g_assert_nonnull(strstr(xml, "<net dev=\"0\"/>"));
    g_assert_null(cs_graph_log_dump_xml(c, 16));
    g_assert_null(cs_graph_log_info(c, 16));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/graph/dgx1", test_dgx1);
    g_test_add_func("/graph/dgx2", test_dgx2);
    g_test_add_func("/graph/nvswitch-presets", test_nvswitch_presets);
    g_test_add_func("/graph/pcie", test_pcie);
    g_test_add_func("/graph/two-nodes", test_two_nodes);
    return g_test_run();
}
