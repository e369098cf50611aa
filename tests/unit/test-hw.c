/* Parts catalogue: PCIe arithmetic and lookups, checked against figures
 * worked out by hand from the specifications cited in cs_hw.c. */
#include "config.h"

#include <string.h>

#include "models/cs_hw.h"

static void test_pcie_bw(void)
{
    /* Gen1: 2.5 GT/s * 8/10 / 8 bits = 250 MB/s per lane. */
    g_assert_cmpfloat_with_epsilon(cs_pcie_bw(1, 1), 250e6, 1);
    g_assert_cmpfloat_with_epsilon(cs_pcie_bw(2, 4), 4 * 500e6, 1);
    /* Gen3 x16: 8e9 * 128/130 / 8 * 16 = 15.753846 GB/s. */
    g_assert_cmpfloat_with_epsilon(cs_pcie_bw(3, 16), 15753846153.8, 1e3);
    g_assert_cmpfloat_with_epsilon(cs_pcie_bw(4, 16), 31507692307.7, 1e3);
    g_assert_cmpfloat_with_epsilon(cs_pcie_bw(5, 16), 63015384615.4, 1e3);
    g_assert_cmpfloat_with_epsilon(cs_pcie_bw(5, 8), 31507692307.7, 1e3);
    g_assert_cmpfloat_with_epsilon(cs_pcie_bw(6, 1), 7876923076.9, 1e3);
    g_assert_cmpfloat(cs_pcie_bw(0, 16), ==, 0.0);
    g_assert_cmpfloat(cs_pcie_bw(7, 16), ==, 0.0);
    g_assert_cmpfloat(cs_pcie_bw(3, 0), ==, 0.0);
    g_assert_cmpfloat(cs_pcie_bw(3, 33), ==, 0.0);
}

static void test_gpu_lookup(void)
{
    const cs_gpu_model_t *h = cs_gpu_model_find("h100-sxm");
    g_assert_nonnull(h);
    g_assert_cmpint(h->sm, ==, 90);
    g_assert_cmpint(h->nvlinks, ==, 18);
    /* 900 GB/s bidirectional / 18 links / 2 directions. */
    g_assert_cmpfloat_with_epsilon(h->nvlink_bw * h->nvlinks * 2, 900e9, 1);
    g_assert_true(cs_gpu_model_find("H100") == h);
    g_assert_true(cs_gpu_model_find("h100") == h);
    g_assert_true(cs_gpu_model_find("a100") == cs_gpu_model_find("a100-sxm"));
    g_assert_true(cs_gpu_model_find("v100") == cs_gpu_model_find("v100-sxm"));
    g_assert_true(cs_gpu_model_find("h200") == cs_gpu_model_find("h200-sxm"));
    g_assert_nonnull(cs_gpu_model_find("b200"));
    g_assert_null(cs_gpu_model_find("h300"));
    g_assert_null(cs_gpu_model_find(NULL));

    const cs_gpu_model_t *b = cs_gpu_model_find("b200");
    g_assert_cmpint(b->sm, ==, 100);
    g_assert_cmpfloat_with_epsilon(b->nvlink_bw * b->nvlinks * 2, 1.8e12, 1);
    const cs_gpu_model_t *a = cs_gpu_model_find("a100-sxm");
    g_assert_cmpfloat_with_epsilon(a->nvlink_bw * a->nvlinks * 2, 600e9, 1);
    const cs_gpu_model_t *v = cs_gpu_model_find("v100-sxm");
    g_assert_cmpfloat_with_epsilon(v->nvlink_bw * v->nvlinks * 2, 300e9, 1);
    const cs_gpu_model_t *h8 = cs_gpu_model_find("h800-sxm");
    g_assert_cmpfloat_with_epsilon(h8->nvlink_bw * h8->nvlinks * 2, 400e9, 1);
    const cs_gpu_model_t *r3 = cs_gpu_model_find("rtx3090");
    g_assert_cmpfloat_with_epsilon(r3->nvlink_bw * r3->nvlinks * 2, 112.5e9, 1);

    /* Consumer GeForce: no GPUDirect RDMA, no PCIe P2P. */
    static const char *const geforce[] = { "rtx2080ti", "rtx3090", "rtx4090", "rtx5090" };
    for (gsize i = 0; i < G_N_ELEMENTS(geforce); i++) {
        const cs_gpu_model_t *g = cs_gpu_model_find(geforce[i]);
        g_assert_nonnull(g);
        g_assert_true(g->consumer);
        g_assert_false(g->gdr);
        g_assert_false(g->p2p);
    }
    g_assert_cmpint(cs_gpu_model_find("rtx4090")->nvlinks, ==, 0);
    g_assert_true(cs_gpu_model_find("l40s")->gdr);
    g_assert_true(cs_gpu_model_find("l40s")->p2p);
    g_assert_false(cs_gpu_model_find("l40s")->consumer);
    g_assert_cmpint(cs_gpu_model_find("gb10")->sm, ==, 120);
    g_assert_cmpint(cs_gpu_model_find("rtx-pro-6000")->sm, ==, 120);

    /* Every model is reachable by its own name and listed. */
    const char *names = cs_gpu_model_names();
    g_auto(GStrv) parts = g_strsplit(names, ", ", -1);
    g_assert_cmpuint(g_strv_length(parts), >=, 17);
    for (int i = 0; parts[i]; i++)
        g_assert_nonnull(cs_gpu_model_find(parts[i]));
    g_assert_nonnull(strstr(names, "h100-sxm"));
}

static void test_gpu_by_pci_sm(void)
{
    g_assert_true(cs_gpu_model_by_pci(0x10de, 0x2330) == cs_gpu_model_find("h100-sxm"));
    g_assert_true(cs_gpu_model_by_pci(0x10de, 0x20b2) == cs_gpu_model_find("a100-sxm"));
    g_assert_true(cs_gpu_model_by_pci(0x10de, 0x1db1) == cs_gpu_model_find("v100-sxm"));
    g_assert_true(cs_gpu_model_by_pci(0x10de, 0x2684) == cs_gpu_model_find("rtx4090"));
    g_assert_null(cs_gpu_model_by_pci(0x15b3, 0x2330));   /* Mellanox vendor */
    g_assert_null(cs_gpu_model_by_pci(0x10de, 0xffff));
    g_assert_cmpint(cs_gpu_model_by_sm(90)->sm, ==, 90);
    g_assert_cmpint(cs_gpu_model_by_sm(80)->sm, ==, 80);
    g_assert_cmpint(cs_gpu_model_by_sm(86)->sm, ==, 86);
    g_assert_cmpint(cs_gpu_model_by_sm(100)->sm, ==, 100);
    g_assert_true(cs_gpu_model_by_sm(121) == cs_gpu_model_find("gb10"));
    g_assert_null(cs_gpu_model_by_sm(35));
}

/* A GPU's family from the names CUDA prints and the catalogue's */
static void test_gpu_family(void)
{
    g_assert_cmpstr(cs_gpu_family("NVIDIA A100-SXM4-80GB"), ==, "a100");
    g_assert_cmpstr(cs_gpu_family("A100-SXM4-40GB"), ==, "a100");
    g_assert_cmpstr(cs_gpu_family("NVIDIA A100 80GB PCIe"), ==, "a100");
    g_assert_cmpstr(cs_gpu_family("NVIDIA B200"), ==, "b200");
    g_assert_cmpstr(cs_gpu_family("NVIDIA GB200"), ==, "gb200");
    g_assert_cmpstr(cs_gpu_family("Tesla V100-SXM2-32GB"), ==, "v100");
    g_assert_cmpstr(cs_gpu_family("NVIDIA GeForce RTX 2080 Ti"), ==, "rtx2080ti");
    g_assert_cmpstr(cs_gpu_family("NVIDIA RTX PRO 6000 Blackwell Server Edition"), ==, "rtx-pro-6000");
    g_assert_cmpstr(cs_gpu_family("NVIDIA RTX 6000 Ada Generation"), ==, "rtx6000-ada");
    g_assert_cmpstr(cs_gpu_family("Tesla T4"), ==, "t4");
    g_assert_null(cs_gpu_family("NVIDIA RTX A4000"));   /* not "A40" */
    g_assert_null(cs_gpu_family("NVIDIA GeForce RTX 4080"));
    g_assert_null(cs_gpu_family(NULL));
    /* every catalogue model names its family in its marketing name */
    const char *keys[] = { "v100-sxm", "a100-sxm", "a100-pcie", "h100-sxm", "h800-sxm", "h100-pcie", "h200-sxm",
                           "b200", "gb200", "gb300", "a40", "rtx-a6000", "rtx2080ti", "t4", "rtx3090", "rtx4090",
                           "rtx5090", "l40s", "rtx6000-ada", "rtx-pro-6000", "gb10" };
    for (gsize i = 0; i < G_N_ELEMENTS(keys); i++) {
        const cs_gpu_model_t *m = cs_gpu_model_find(keys[i]);
        g_assert_nonnull(m);
        g_assert_nonnull(cs_gpu_family(m->marketing));
    }
    g_assert_cmpstr(cs_gpu_family(cs_gpu_model_find("h100-pcie")->marketing), ==, "h100");
}

static void test_nic(void)
{
    const cs_nic_type_t *n = cs_nic_type_find("ib-ndr");
    g_assert_nonnull(n);
    g_assert_cmpint(n->kind, ==, CS_NIC_IB);
    g_assert_cmpfloat_with_epsilon(n->bw, 50e9, 1);      /* 400 Gb/s */
    g_assert_cmpint(n->pcie_gen, ==, 5);
    g_assert_true(n->rdma);
    g_assert_cmpfloat_with_epsilon(cs_nic_type_find("IB-HDR")->bw, 25e9, 1);
    g_assert_cmpfloat_with_epsilon(cs_nic_type_find("ib-edr")->bw, 12.5e9, 1);
    g_assert_cmpfloat_with_epsilon(cs_nic_type_find("roce-400g")->bw, 50e9, 1);
    g_assert_cmpfloat_with_epsilon(cs_nic_type_find("eth-1g")->bw, 125e6, 1);
    g_assert_false(cs_nic_type_find("eth-10g")->rdma);
    g_assert_cmpfloat_with_epsilon(cs_nic_type_find("eth-50g")->bw, 6.25e9, 1);   /* 50 Gb/s */
    g_assert_cmpint(cs_nic_type_find("roce-25g")->kind, ==, CS_NIC_ROCE);
    g_assert_null(cs_nic_type_find("ib-qdr"));
    /* The NIC's host interface must not be slower than its port. */
    g_auto(GStrv) parts = g_strsplit(cs_nic_type_names(), ", ", -1);
    g_assert_cmpuint(g_strv_length(parts), ==, 14);
    for (int i = 0; parts[i]; i++) {
        const cs_nic_type_t *t = cs_nic_type_find(parts[i]);
        g_assert_nonnull(t);
        g_assert_cmpfloat(cs_pcie_bw(t->pcie_gen, t->pcie_width), >=, t->bw);
        g_assert_cmpfloat(t->lat, >, 0);
    }

    cs_nic_kind_t k = CS_NIC_IB;
    g_assert_true(cs_nic_kind_parse("eth", &k));
    g_assert_cmpint(k, ==, CS_NIC_ETH);
    g_assert_true(cs_nic_kind_parse("RoCE", &k));
    g_assert_cmpint(k, ==, CS_NIC_ROCE);
    g_assert_true(cs_nic_kind_parse("ethernet", &k));
    g_assert_true(cs_nic_kind_parse("ib", &k));
    g_assert_cmpint(k, ==, CS_NIC_IB);
    g_assert_false(cs_nic_kind_parse("omnipath", &k));
    g_assert_cmpint(k, ==, CS_NIC_IB);
    g_assert_cmpstr(cs_nic_kind_name(CS_NIC_ETH), ==, "ethernet");
    g_assert_cmpstr(cs_nic_kind_name(CS_NIC_ROCE), ==, "roce");
    g_assert_cmpstr(cs_nic_kind_name(CS_NIC_IB), ==, "ib");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/hw/pcie-bw", test_pcie_bw);
    g_test_add_func("/hw/gpu-lookup", test_gpu_lookup);
    g_test_add_func("/hw/gpu-by-pci-sm", test_gpu_by_pci_sm);
    g_test_add_func("/hw/gpu-family", test_gpu_family);
    g_test_add_func("/hw/nic", test_nic);
    return g_test_run();
}
