/* NCCL's SHM transport between two GPUs of one host (cs_shm.h). */
#include "config.h"

#include <math.h>
#include <string.h>

#include "models/cs_shm.h"
#include "models/cs_hw.h"

void cs_shm_mode(const cs_nccl_settings_t *s, cs_proto_t proto, cs_shm_mode_t *out)
{
    /* shm.cc initCeOperation and its proxy progress ("Only Simple uses
     * cudaMemcpy"); NCCL_SHM_LOCALITY other than 1 or 2 is refused by
     * cs_nccl_env_settings (NCCL warns and takes 2). */
    gboolean ce = s->shm_use_cuda_memcpy == 1 && proto == CS_PROTO_SIMPLE;
    out->ce_send = ce && (s->shm_memcpy_mode & 1);
    out->ce_recv = ce && (s->shm_memcpy_mode & 2);
    out->locality = s->shm_locality == 1 ? 1 : 2;
}

gboolean cs_shm_route(const cs_topo_t *t, int dev_a, int dev_b, int locality, gboolean nvb_disable,
                      cs_shm_route_t *out)
{
    /* The buffer: shmRecvSetup allocates it with the receiver's proxy
     * (SHM_LOCALITY 2), shmSendSetup with the sender's (1); cuMem host
     * memory on the GPU's host NUMA node (alloc.h ncclCuMemHostAlloc,
     * CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID), or /dev/shm pages first touched
     * by that proxy thread, bound near its GPU (init.cc
     * ncclTopoGetCpuAffinity) when the process's affinity allows. */
    int cpu = cs_topo_node_cpu_of(t, locality == 1 ? dev_a : dev_b);
    cs_path_t up, down;
    memset(out, 0, sizeof *out);
    out->mem_cpu = -1;
    if (cpu < 0 || !cs_path_intra(t, dev_a, cpu, nvb_disable, &up) || !cs_path_intra(t, cpu, dev_b, nvb_disable, &down))
        return FALSE;
    memcpy(out->links, up.links, sizeof(int) * up.nhops);
    memcpy(out->links + up.nhops, down.links, sizeof(int) * down.nhops);
    out->nup = up.nhops;
    out->ndown = down.nhops;
    out->mem_cpu = cpu;
    out->lat = up.lat + down.lat;
    return TRUE;
}

double cs_shm_side_eff(const cs_params_t *p, gboolean ce, gboolean twoway)
{
    if (ce)
        return cs_params_get(p, CS_P_EFF_SHM_CE);
    return cs_params_get(p, twoway ? CS_P_EFF_SHM : CS_P_EFF_SHM_ONEWAY);
}

double cs_shm_chan_bw(const cs_params_t *p, int arch, gboolean ce_recv, gboolean twoway)
{
    static const cs_param_id_t ids[4] = { CS_P_CH_SHM_SM70, CS_P_CH_SHM_SM80, CS_P_CH_SHM_SM90, CS_P_CH_SHM_SM100 };
    if (ce_recv || !twoway)
        return INFINITY;
    return cs_params_get(p, ids[CLAMP(arch, 0, 3)]) * 1e9;
}

double cs_shm_host_mem_bw(const cs_topo_t *t, int cpu_dev, const cs_params_t *p)
{
    if (cpu_dev < 0 || cpu_dev >= t->ndevs || t->devs[cpu_dev].kind != CS_DEV_CPU)
        return INFINITY;
    const cs_device_t *d = &t->devs[cpu_dev];
    const cs_cpu_part_t *part = cs_cpu_part_by_cpuid(d->vendor, d->familyid, d->modelid);
    if (part == NULL || part->mem_bw <= 0)
        return INFINITY;
    return part->mem_bw * cs_params_get(p, CS_P_EFF_HOST_MEM);
}

double cs_shm_step_lat_us(const cs_params_t *p, const cs_shm_mode_t *m)
{
    return cs_params_get(p, CS_P_LAT_HOP_SHM) + ((m->ce_send ? 1 : 0) + (m->ce_recv ? 1 : 0)) * cs_params_get(p, CS_P_LAT_SHM_CE);
}

char *cs_shm_note(const cs_comm_t *comm)
{
    const cs_topo_t *t = cs_comm_topo(comm);
    const cs_comm_info_t *info = cs_comm_info(comm);
    const cs_nccl_settings_t *s = cs_comm_settings(comm);
    if (t->nnodes < 1)
        return NULL;
    int r0 = t->node_first_rank[0], r1 = t->node_first_rank[1];
    int pairs = 0, cross = 0, amd_sys = 0;
    for (int a = r0; a < r1; a++)
        for (int b = a + 1; b < r1; b++) {
            cs_link_choice_t lc;
            cs_comm_pair(comm, a, b, &lc);
            if (lc.transport != CS_XPORT_SHM)
                continue;
            int ca = cs_topo_node_cpu_of(t, t->rank_dev[a]), cb = cs_topo_node_cpu_of(t, t->rank_dev[b]);
            pairs++;
            cross += ca != cb;
            amd_sys += ca >= 0 && t->devs[ca].vendor == CS_CPU_AMD && lc.path == CS_PATH_SYS;
        }
    if (pairs == 0)
        return NULL;
    GString *g = g_string_new(NULL);
    g_string_append_printf(g, "SHM: %d GPU pair%s of node 0 move%s data through host memory (the sender's SMs "
                           "store to a pinned buffer in the %s's memory, the other GPU's SMs load it; "
                           "transport/shm.cc)", pairs, pairs == 1 ? "" : "s", pairs == 1 ? "s" : "",
                           s->shm_locality == 1 ? "sender" : "receiver");
    if (s->shm_use_cuda_memcpy == 1)
        g_string_append_printf(g, "; NCCL_SHM_USE_CUDA_MEMCPY=1: the proxy's cudaMemcpy does %s of Simple steps",
                               s->shm_memcpy_mode == 3 ? "both sides" : s->shm_memcpy_mode == 2 ? "the receiver's side"
                                                                                              : "the sender's side");
    if (cross > 0)
        g_string_append_printf(g, "; %d cross a socket link", cross);
    if (amd_sys > 0 && s->p2p_level < 0)
        g_string_append_printf(g, "; %d %s SYS on an AMD host, where NCCL allows P2P only with at most 2 GPUs "
                               "(graph/paths.cc ncclTopoCheckP2p): NCCL_P2P_LEVEL=SYS lets %s use P2P", amd_sys,
                               amd_sys == 1 ? "is" : "are", amd_sys == 1 ? "it" : "them");
    if (info->gpus_per_thread * MAX(1, info->threads_per_proc) > 1)
        g_string_append(g, "; one process drives several GPUs, so its buffers are /dev/shm pages placed by "
                        "its threads, which NCCL binds to the process's CPUs near each GPU (init.cc "
                        "ncclTopoGetCpuAffinity): a process bound to one core or NUMA node (mpirun -np 1 binds "
                        "to a core) puts every buffer there and all SHM traffic shares that node's memory and "
                        "socket links, which collsim does not model; NCCL_IGNORE_CPU_AFFINITY=1 or an unbound "
                        "launch keeps each buffer near its GPU");
    return g_string_free(g, FALSE);
}
