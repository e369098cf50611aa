/* cs_shm: NCCL's SHM transport as the engines price it. Expectations are
 * derived in the comments from NCCL's source (transport/shm.cc) and the
 * parts catalogue (cs_hw.c), not read back from the code. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "models/cs_shm.h"
#include "models/cs_presets.h"
#include "models/cs_decide.h"
#include "sim/cs_engine_analytic-int.h"

static cs_params_t P;

static void settings(cs_nccl_settings_t *s, const char *n1, const char *v1, const char *n2, const char *v2)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(cs_nccl_env_t) e = cs_nccl_env_new();
    if (n1 != NULL)
        cs_nccl_env_set(e, n1, v1, "test");
    if (n2 != NULL)
        cs_nccl_env_set(e, n2, v2, "test");
    g_assert_true(cs_nccl_env_settings(e, s, &err));
    g_assert_no_error(err);
}

/* shm.cc initCeOperation: useMemcpySend = USE_CUDA_MEMCPY && (MODE & 1),
 * useMemcpyRecv = ... && (MODE & 2); MODE defaults to 1 (sender side);
 * only Simple copies; SHM_LOCALITY defaults to 2 (receiver side). */
static void test_mode(void)
{
    cs_nccl_settings_t s;
    cs_shm_mode_t m;
    settings(&s, NULL, NULL, NULL, NULL);
    cs_shm_mode(&s, CS_PROTO_SIMPLE, &m);
    g_assert_false(m.ce_send || m.ce_recv);
    g_assert_cmpint(m.locality, ==, 2);
    cs_nccl_settings_clear(&s);

    settings(&s, "NCCL_SHM_USE_CUDA_MEMCPY", "1", NULL, NULL);
    cs_shm_mode(&s, CS_PROTO_SIMPLE, &m);
    g_assert_true(m.ce_send);
    g_assert_false(m.ce_recv);
    cs_shm_mode(&s, CS_PROTO_LL, &m);
    g_assert_false(m.ce_send || m.ce_recv);
    cs_nccl_settings_clear(&s);

    settings(&s, "NCCL_SHM_USE_CUDA_MEMCPY", "1", "NCCL_SHM_MEMCPY_MODE", "3");
    cs_shm_mode(&s, CS_PROTO_SIMPLE, &m);
    g_assert_true(m.ce_send && m.ce_recv);
    cs_nccl_settings_clear(&s);

    /* the mode alone does nothing without USE_CUDA_MEMCPY */
    settings(&s, "NCCL_SHM_MEMCPY_MODE", "2", "NCCL_SHM_LOCALITY", "1");
    cs_shm_mode(&s, CS_PROTO_SIMPLE, &m);
    g_assert_false(m.ce_send || m.ce_recv);
    g_assert_cmpint(m.locality, ==, 1);
    cs_nccl_settings_clear(&s);

    /* NCCL warns and ignores a locality other than 1 or 2; collsim refuses it */
    g_autoptr(GError) err = NULL;
    g_autoptr(cs_nccl_env_t) e = cs_nccl_env_new();
    cs_nccl_env_set(e, "NCCL_SHM_LOCALITY", "3", "scen.ini:7");
    g_assert_false(cs_nccl_env_settings(e, &s, &err));
    g_assert_nonnull(err);
    g_assert_nonnull(strstr(err->message, "NCCL_SHM_LOCALITY"));
}

static cs_topo_t *pcie2(int sockets)
{
    g_autoptr(GError) err = NULL;
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    o.gpu = "rtx4090";
    o.gpus = 2;
    o.sockets = sockets;
    o.p2p = 0;
    cs_topo_t *t = cs_preset_build("pcie", &o, &err);
    g_assert_no_error(err);
    return t;
}

static int find_dev(const cs_topo_t *t, const char *name)
{
    for (int d = 0; d < t->ndevs; d++)
        if (g_strcmp0(t->devs[d].name, name) == 0)
            return d;
    g_assert_not_reached();
    return -1;
}

/* Two GPUs on two sockets (pcie preset: GPU, its switch, its socket). The
 * buffer is at the receiver's socket by default: the sender's writes go
 * gpu0 -> pcisw -> cpu0 -> cpu1 (3 links), the receiver reads cpu1 ->
 * pcisw -> gpu1 (2 links). With locality 1 the buffer is at cpu0: up 2,
 * down 3, the socket link on the reads' side. */
static void test_route(void)
{
    g_autoptr(cs_topo_t) t = pcie2(2);
    int g0 = find_dev(t, "gpu0"), g1 = find_dev(t, "gpu1");
    int c0 = find_dev(t, "cpu0"), c1 = find_dev(t, "cpu1");
    cs_shm_route_t r;
    g_assert_true(cs_shm_route(t, g0, g1, 2, FALSE, &r));
    g_assert_cmpint(r.mem_cpu, ==, c1);
    g_assert_cmpint(r.nup, ==, 3);
    g_assert_cmpint(r.ndown, ==, 2);
    g_assert_cmpint(t->links[r.links[2]].kind, ==, CS_LINK_SYS);
    g_assert_cmpint(t->links[r.links[r.nup + r.ndown - 1]].dst, ==, g1);
    g_assert_true(cs_shm_route(t, g0, g1, 1, FALSE, &r));
    g_assert_cmpint(r.mem_cpu, ==, c0);
    g_assert_cmpint(r.nup, ==, 2);
    g_assert_cmpint(r.ndown, ==, 3);
    g_assert_cmpint(t->links[r.links[2]].kind, ==, CS_LINK_SYS);
    /* one socket: no socket link either way */
    g_autoptr(cs_topo_t) t1 = pcie2(1);
    g0 = find_dev(t1, "gpu0");
    g1 = find_dev(t1, "gpu1");
    g_assert_true(cs_shm_route(t1, g0, g1, 2, FALSE, &r));
    for (int h = 0; h < r.nup + r.ndown; h++)
        g_assert_cmpint(t1->links[r.links[h]].kind, ==, CS_LINK_PCI);
}

static void test_side_eff_and_mem(void)
{
    g_assert_cmpfloat(cs_shm_side_eff(&P, FALSE, TRUE), ==, cs_params_get(&P, CS_P_EFF_SHM));
    g_assert_cmpfloat(cs_shm_side_eff(&P, FALSE, FALSE), ==, cs_params_get(&P, CS_P_EFF_SHM_ONEWAY));
    g_assert_cmpfloat(cs_shm_side_eff(&P, TRUE, TRUE), ==, cs_params_get(&P, CS_P_EFF_SHM_CE));
    /* the pcie preset with a Gen4/Gen5 card has Sapphire Rapids sockets
     * (rtx4090 is Gen4: Ice Lake-SP): 8 channels DDR4-3200 x 8 bytes =
     * 204.8 GB/s, x eff.host.mem */
    g_autoptr(cs_topo_t) t = pcie2(1);
    int c0 = find_dev(t, "cpu0");
    g_assert_cmpfloat_with_epsilon(cs_shm_host_mem_bw(t, c0, &P), 204.8e9 * cs_params_get(&P, CS_P_EFF_HOST_MEM), 1e3);
    g_assert_true(isinf(cs_shm_host_mem_bw(t, find_dev(t, "gpu0"), &P)));
    cs_shm_mode_t m = { TRUE, TRUE, 2 };
    g_assert_cmpfloat_with_epsilon(cs_shm_step_lat_us(&P, &m),
                                   cs_params_get(&P, CS_P_LAT_HOP_SHM) + 2 * cs_params_get(&P, CS_P_LAT_SHM_CE), 1e-12);
}

static cs_comm_t *h100_shm_comm(cs_topo_t **t_p, const char *memcpy_mode)
{
    g_autoptr(GError) err = NULL;
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    o.gpus = 4;
    cs_topo_t *t = cs_preset_build("dgx-h100", &o, &err);
    g_assert_no_error(err);
    g_autoptr(cs_nccl_env_t) env = cs_nccl_env_new();
    cs_nccl_env_set(env, "NCCL_P2P_DISABLE", "1", "test");
    cs_nccl_env_set(env, "NCCL_NVLS_ENABLE", "0", "test");
    if (memcpy_mode != NULL) {
        cs_nccl_env_set(env, "NCCL_SHM_USE_CUDA_MEMCPY", "1", "test");
        cs_nccl_env_set(env, "NCCL_SHM_MEMCPY_MODE", memcpy_mode, "test");
    }
    cs_comm_t *comm = cs_comm_new(t, env, &err);
    g_assert_no_error(err);
    *t_p = t;
    return comm;
}

/* A GPU that sends and receives over SHM loads host memory behind its own
 * posted writes: each channel receives at most chan.shm.smXX. Without
 * that ceiling the DGX A100/H100 and DGX-1 P2P-off rings of the validation
 * set were priced 20-47% fast (docs/validation.md). */
static void test_chan_ceiling(void)
{
    g_assert_cmpfloat(cs_shm_chan_bw(&P, 1, FALSE, TRUE), ==, cs_params_get(&P, CS_P_CH_SHM_SM80) * 1e9);
    g_assert_cmpfloat(cs_shm_chan_bw(&P, 2, FALSE, TRUE), ==, cs_params_get(&P, CS_P_CH_SHM_SM90) * 1e9);
    g_assert_true(isinf(cs_shm_chan_bw(&P, 1, TRUE, TRUE)));    /* the proxy copies */
    g_assert_true(isinf(cs_shm_chan_bw(&P, 1, FALSE, FALSE)));  /* receives only */
    /* 4 H100 with P2P off: 4 channels x 6 GB/s = 24 GB/s, below the host
     * memory's 28.8 */
    g_autoptr(GError) err = NULL;
    g_autoptr(cs_topo_t) t = NULL;
    g_autoptr(cs_comm_t) comm = h100_shm_comm(&t, NULL);
    const cs_comm_info_t *info = cs_comm_info(comm);
    cs_analytic_hw_t hw;
    g_assert_true(cs_analytic_hw_init(&hw, t, info, comm, &P, 0, &err));
    g_assert_no_error(err);
    double want = hw.ring_nch * cs_params_get(&P, CS_P_CH_SHM_SM90) * 1e9;
    g_assert_cmpint(hw.ring_nch, ==, 4);
    g_assert_cmpfloat_with_epsilon(hw.intra_bw, want, want * 1e-9);
    /* the proxy's cudaMemcpy on the receiving side lifts the ceiling
     * (host memory decides again) */
    g_autoptr(cs_topo_t) t2 = NULL;
    g_autoptr(cs_comm_t) comm2 = h100_shm_comm(&t2, "2");
    cs_analytic_hw_t hw2;
    g_assert_true(cs_analytic_hw_init(&hw2, t2, cs_comm_info(comm2), comm2, &P, 0, &err));
    g_assert_cmpfloat(hw2.intra_bw, >, want * 1.1);
}

/* The analytic engine: 4 H100 of a DGX H100 with P2P off move their ring
 * through socket 0's memory (the preset's GPUs 0-3 are under socket 0,
 * buffers at the receivers): 4 edges x 2 touches share 8 x DDR5-4800 x 8
 * bytes = 307.2 GB/s x eff.host.mem, below what the Gen5 x16 links give
 * (63 GB/s x eff.pcie x eff.shm), with the channels' SHM ceiling lifted
 * (test_chan_ceiling). */
static void test_analytic_host_memory(void)
{
    g_autoptr(GError) err = NULL;
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    o.gpus = 4;
    g_autoptr(cs_topo_t) t = cs_preset_build("dgx-h100", &o, &err);
    g_assert_no_error(err);
    g_autoptr(cs_nccl_env_t) env = cs_nccl_env_new();
    cs_nccl_env_set(env, "NCCL_P2P_DISABLE", "1", "test");
    cs_nccl_env_set(env, "NCCL_NVLS_ENABLE", "0", "test");
    g_autoptr(cs_comm_t) comm = cs_comm_new(t, env, &err);
    g_assert_no_error(err);
    const cs_comm_info_t *info = cs_comm_info(comm);
    g_assert_cmpint(info->intra_transport, ==, CS_XPORT_SHM);
    cs_analytic_hw_t hw;
    cs_params_t P1 = P;
    P1.v[CS_P_CH_SHM_SM90] = 1000;
    g_assert_true(cs_analytic_hw_init(&hw, t, info, comm, &P1, 0, &err));
    g_assert_no_error(err);
    double mem = 8 * 4800e6 * 8 * cs_params_get(&P, CS_P_EFF_HOST_MEM) / (4 * 2);
    g_assert_cmpfloat_with_epsilon(hw.intra_bw, mem, mem * 1e-9);
    /* with twice the memory efficiency the links decide again */
    cs_params_t Q = P1;
    Q.v[CS_P_EFF_HOST_MEM] = 2 * P.v[CS_P_EFF_HOST_MEM];
    cs_analytic_hw_t hw2;
    g_assert_true(cs_analytic_hw_init(&hw2, t, info, comm, &Q, 0, &err));
    g_assert_cmpfloat(hw2.intra_bw, >, hw.intra_bw * 1.01);
    g_assert_cmpfloat(hw2.intra_bw, <, 2 * mem);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    cs_params_init_defaults(&P);
    g_test_add_func("/shm/mode", test_mode);
    g_test_add_func("/shm/route", test_route);
    g_test_add_func("/shm/side-eff-mem", test_side_eff_and_mem);
    g_test_add_func("/shm/analytic-host-memory", test_analytic_host_memory);
    g_test_add_func("/shm/chan-ceiling", test_chan_ceiling);
    int rc = g_test_run();
    cs_params_clear(&P);
    return rc;
}
