/* Shared by the engine tests (test-flow, test-simgrid): a job over a
 * topology with NCCL_ALGO/NCCL_PROTO set, hand-built devices, and the
 * shared-uplink topology both engines are checked on. Header-only, static:
 * each test program includes it once. */
#ifndef CS_TEST_ENGINE_FIXTURE_H
#define CS_TEST_ENGINE_FIXTURE_H

#include "models/cs_decide.h"
#include "models/cs_params.h"
#include "models/cs_topo.h"

typedef struct {
    cs_topo_t *topo;
    cs_comm_t *comm;
    cs_params_t params;
} job_fix_t;

/* Takes ownership of 'topo'; algo/proto may be NULL (NCCL's choice). */
static inline void fix_init(job_fix_t *j, cs_topo_t *topo, const char *algo, const char *proto)
{
    GError *err = NULL;
    j->topo = topo;
    g_autoptr(cs_nccl_env_t) env = cs_nccl_env_new();
    if (algo != NULL)
        cs_nccl_env_set(env, "NCCL_ALGO", algo, "test");
    if (proto != NULL)
        cs_nccl_env_set(env, "NCCL_PROTO", proto, "test");
    j->comm = cs_comm_new(topo, env, &err);
    g_assert_no_error(err);
    cs_params_init_defaults(&j->params);
}

static inline void fix_clear(job_fix_t *j)
{
    cs_comm_free(j->comm);
    cs_topo_free(j->topo);
    cs_params_clear(&j->params);
}

/* GPUs are H100 SXM, NICs 25 GB/s IB, both GPUDirect capable; CPUs Intel. */
static inline int fix_add_dev(cs_topo_t *t, cs_dev_kind_t kind, const char *name, int node, int local)
{
    cs_device_t d = { 0 };
    d.kind = kind;
    d.name = (char *)name;
    d.node = node;
    d.local = local;
    if (kind == CS_DEV_GPU) {
        d.gpu = cs_gpu_model_find("h100-sxm");
        d.gdr = TRUE;
    } else if (kind == CS_DEV_NIC) {
        d.nic_kind = CS_NIC_IB;
        d.nic_bw = 25e9;
        d.nic_ports = 1;
        d.gdr = TRUE;
    } else if (kind == CS_DEV_CPU) {
        d.vendor = CS_CPU_INTEL;
    }
    return cs_topo_add_device(t, &d);
}

static inline void fix_add_pci(cs_topo_t *t, int a, int b, int gen, double lat)
{
    int l = cs_topo_add_link(t, a, b, CS_LINK_PCI, cs_pcie_bw(gen, 16), lat, 0);
    t->links[l].pcie_gen = gen;
    t->links[l].pcie_width = 16;
}

/* Two nodes, each: a CPU, one PCIe Gen4 switch with two GPUs without P2P
 * (so their ring edge goes through host memory, over the switch uplink),
 * and a 25 GB/s NIC on the CPU; the NICs on one leaf. The switch uplink
 * carries both the intra-node edge and the network edge. */
static inline cs_topo_t *fix_shared_uplink(void)
{
    cs_topo_t *t = cs_topo_new("test:shared-uplink");
    int nics[2];
    char name[32];
    for (int n = 0; n < 2; n++) {
        g_snprintf(name, sizeof name, "n%d.cpu0", n);
        int cpu = fix_add_dev(t, CS_DEV_CPU, name, n, 0);
        g_snprintf(name, sizeof name, "n%d.sw0", n);
        int sw = fix_add_dev(t, CS_DEV_PCISW, name, n, 0);
        fix_add_pci(t, sw, cpu, 4, 100e-9);
        for (int g = 0; g < 2; g++) {
            g_snprintf(name, sizeof name, "n%d.gpu%d", n, g);
            int gi = fix_add_dev(t, CS_DEV_GPU, name, n, g);
            t->devs[gi].p2p_force = -1;
            fix_add_pci(t, gi, sw, 4, 100e-9);
        }
        g_snprintf(name, sizeof name, "n%d.nic0", n);
        nics[n] = fix_add_dev(t, CS_DEV_NIC, name, n, 0);
        fix_add_pci(t, nics[n], cpu, 4, 100e-9);
    }
    int leaf = fix_add_dev(t, CS_DEV_SWITCH, "leaf0", -1, 0);
    for (int n = 0; n < 2; n++)
        cs_topo_add_link(t, nics[n], leaf, CS_LINK_NET, 25e9, 100e-9, 0);
    GError *err = NULL;
    g_assert_true(cs_topo_finish(t, &err));
    g_assert_no_error(err);
    return t;
}

#endif
