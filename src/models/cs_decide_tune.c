/* NCCL's cost model and per-call choices (NCCL v2.28.9):
 *  - tuning.cc ncclTopoTuneModel: bandwidth and latency of every
 *    (collective, algorithm, protocol), enables, thread counts/thresholds;
 *  - tuning.cc ncclTopoGetAlgoTime and enqueue.cc updateCollCostTable /
 *    topoGetAlgoInfo: the cost table, the winner, channels and threads;
 *  - enqueue.cc calcCollChunking: the chunk size.
 * Arithmetic is in float as NCCL's, so that near-ties break the same way. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "models/cs_decide_int.h"
#include "models/cs_p2p.h"
#include "util/cs_error.h"

enum { HW_NVLINK = 0, HW_PCI = 1, HW_NET = 2 };

/* tuning.cc ncclTunerConstantsDefaults, {LL, LL128, Simple} */
static const float base_lat[CS_ALGO_COUNT][CS_PROTO_COUNT] = {
    { 6.8f, 14.0f, 8.4f }, { 6.6f, 14.0f, 8.4f },   /* Tree, Ring */
    { 0, 0, 0 }, { 0, 0, 0 },                       /* CollNetDirect, CollNetChain */
    { 0, 0, 0 }, { 0, 0, 0 },                       /* NVLS, NVLSTree */
    { 8.0f, 8.0f, 8.0f }                            /* PAT */
};
static const float hw_lat[3][CS_ALGO_COUNT][CS_PROTO_COUNT] = {
    {   /* NVLINK */
        { .6f, 1.25f, 4.0f }, { .6f, 1.9f, 3.4f }, { 0, 0, 3.7f }, { 0, 0, 2.8f },
        { 0, 0, 25.0f }, { 0, 0, 25.0f }, { 0, 0, 4.0f } },
    {   /* PCI */
        { 1.0f, 1.9f, 4.0f }, { 1.0f, 2.5f, 5.7f }, { 0, 0, 3.7f }, { 0, 0, 2.8f },
        { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 4.0f } },
    {   /* NET */
        { 5.0f, 8.5f, 14.0f }, { 2.7f, 4.0f, 14.0f }, { 0, 0, 31.0f }, { 0, 0, 30.0f },
        { 0, 0, 18.0f }, { 0, 0, 20.9f }, { 0, 0, 14.0f } },
};
/* rows Volta, Ampere, Hopper, Blackwell; columns nNodes 1, 2, >2 */
static const float ll_max_bws[4][3] = {
    { 39.0f, 39.0f, 20.4f }, { 87.7f, 22.5f, 19.0f }, { 141.0f, 45.0f, 35.0f },
    { 2 * 141.0f, 2 * 45.0f, 2 * 35.0f } };
static const float per_ch_max_ring_ll128_bws[4][3] = {
    { 20.0f, 20.0f, 20.0f }, { 20.0f, 20.0f, 20.0f }, { 36.7f, 36.7f, 36.7f },
    { 2 * 36.7f, 34.6f, 2 * 36.7f } };
/* Blackwell's row in the NCCL the measured run used, where it differs from
 * v2.28.9's (cs_comm_set_nccl_version): tuning.cc v2.29.2 and v2.29.3
 * {34.5, 34.6, 34.5}, v2.29.7 {40.0, 40.0, 40.0} (the newest source at
 * hand, taken for later versions too). */
static const float per_ch_max_ring_ll128_bw_sm100_v2292[3] = { 34.5f, 34.6f, 34.5f };
static const float per_ch_max_ring_ll128_bw_sm100_v2297[3] = { 40.0f, 40.0f, 40.0f };
static const float per_ch_max_tree_ll128_bws[4][3] = {
    { 20.0f, 20.0f, 20.0f }, { 20.0f, 20.0f, 20.0f }, { 36.7f, 36.7f, 29.0f },
    { 55.6f, 31.67f, 20.0f } };
static const float per_ch_max_tree_bws[4][3] = {
    { 26.5f, 18.5f, 10.0f }, { 24.0f, 23.6f, 17.8f }, { 38.7f, 41.4f, 36.0f },
    { 70.0f, 42.8f, 24.0f } };
static const float per_ch_max_nvls_tree_bws[4][3] = {
    { 26.5f, 18.5f, 10.0f }, { 24.0f, 23.6f, 17.8f }, { 0.0f, 57.7f, 45.5f },
    { 0.0f, 96.0f, 43.8f } };
static const float nvls_efficiency[4] = { 0.0f, 0.0f, 0.85f, 0.74f };

/* tuning.cc treeCorrectionFactor, 64 B .. 256 MiB (Tree, every version:
 * the first 23) and .. 512 MiB (the 24th, v2.29.2 on, read by NVLSTree) */
static const float tree_corr[CS_PROTO_COUNT][24] = {
    { 1.0f, 1.0f, 1.0f, 1.0f, .9f, .8f, .7f, .7f, .7f, .7f, .6f, .5f, .4f, .4f, .5f, .6f, .7f,
      .8f, .9f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f },
    { 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, .9f, .8f, .8f, .8f, .7f, .6f, .6f, .6f, .6f, .6f, .6f, .8f,
      .9f, .9f, .9f, .9f, 1.0f, 1.0f, 1.0f },
    { .9f, .9f, .9f, .9f, .9f, .9f, .9f, .8f, .7f, .6f, .6f, .5f, .5f, .5f, .5f, .6f, .7f, .8f,
      .7f, .7f, .8f, .9f, .9f, .9f } };

#define WARP_SIZE 32
#define NCCL_MAX_NTHREADS 640
#define NCCL_SIMPLE_MAX_NTHREADS 512
#define NCCL_LL_MAX_NTHREADS 512
#define NCCL_LL128_MAX_NTHREADS 640
#define NCCL_STEPS 8
#define MAX_DEV_WORK_BATCH_COLLS 10   /* 1024 / sizeof(ncclDevWorkColl) = 1024/96 on x86-64 */

/* utils.h log2i: floor(log2 n), -1 for 0 */
static int log2i(guint64 n)
{
    return n == 0 ? -1 : 63 - __builtin_clzll(n);
}

static int cc_index(int cc)
{
    return cc >= 100 ? 3 : cc >= 90 ? 2 : cc >= 80 ? 1 : 0;
}

/* tuning.cc: CollNet algorithms disabled (collnetEnable 0, CollNetChain
 * without collNetChainSupport, CollNetDirect without an NVSwitch). */
static gboolean collnet_off(const cs_comm_t *c, int a)
{
    if (a != CS_ALGO_COLLNET_DIRECT && a != CS_ALGO_COLLNET_CHAIN)
        return FALSE;
    if (!c->collnet)
        return TRUE;
    if (a == CS_ALGO_COLLNET_CHAIN && !c->collnet_chain_support)
        return TRUE;
    return a == CS_ALGO_COLLNET_DIRECT && !c->info.nvswitch;
}

void cs_comm_tune(cs_comm_t *c)
{
    cs_tune_t *tu = &c->tune;
    const cs_nccl_settings_t *s = &c->s;
    int nranks = c->info.nranks, nnodes = c->nnodes;
    int cc_min = c->info.cc, cc_max = c->cc_max;
    memset(tu, 0, sizeof *tu);

    /* Threads (tuning.cc getNthreads; NCCL_NTHREADS validated in cs_nccl_env.c). */
    int simple_def = c->graph_bw_intra[CS_ALGO_RING] * c->graph_nch[CS_ALGO_RING] <= CS_PCI_BW ? 256
                                                                                          : NCCL_SIMPLE_MAX_NTHREADS;
    tu->max_threads[CS_ALGO_RING][CS_PROTO_SIMPLE] = s->nthreads > 0 ? s->nthreads : simple_def;
    tu->max_threads[CS_ALGO_TREE][CS_PROTO_SIMPLE] = s->nthreads > 0 ? s->nthreads : NCCL_SIMPLE_MAX_NTHREADS;
    tu->max_threads[CS_ALGO_COLLNET_DIRECT][CS_PROTO_SIMPLE] =
        tu->max_threads[CS_ALGO_COLLNET_CHAIN][CS_PROTO_SIMPLE] =
        tu->max_threads[CS_ALGO_NVLS][CS_PROTO_SIMPLE] =
        tu->max_threads[CS_ALGO_NVLS_TREE][CS_PROTO_SIMPLE] = NCCL_MAX_NTHREADS;
    tu->max_threads[CS_ALGO_RING][CS_PROTO_LL] = tu->max_threads[CS_ALGO_TREE][CS_PROTO_LL] =
        s->nthreads > 0 ? s->nthreads : NCCL_LL_MAX_NTHREADS;
    tu->max_threads[CS_ALGO_RING][CS_PROTO_LL128] = tu->max_threads[CS_ALGO_TREE][CS_PROTO_LL128] =
        s->ll128_nthreads > 0 ? s->ll128_nthreads : NCCL_LL128_MAX_NTHREADS;

    /* Buffers (init.cc computeBuffSizes). */
    tu->buff_size[CS_PROTO_LL] = s->ll_buffsize > 0 ? s->ll_buffsize : 8 * NCCL_LL_MAX_NTHREADS * NCCL_STEPS * 16;
    tu->buff_size[CS_PROTO_LL128] = s->ll128_buffsize > 0 ? s->ll128_buffsize
                                                          : 120 * NCCL_LL128_MAX_NTHREADS * NCCL_STEPS * 8;
    tu->buff_size[CS_PROTO_SIMPLE] = s->buffsize > 0 ? s->buffsize : 1 << 22;

    /* Thread thresholds (comm.h; NCCL_THREAD_THRESHOLDS for Tree and Ring). */
    for (int a = 0; a < CS_ALGO_COUNT; a++) {
        tu->thread_threshold[a][CS_PROTO_LL] = 8;
        tu->thread_threshold[a][CS_PROTO_LL128] = 8;
        tu->thread_threshold[a][CS_PROTO_SIMPLE] = 64;
    }
    tu->thread_threshold[CS_ALGO_RING][CS_PROTO_LL] *= nranks;
    tu->thread_threshold[CS_ALGO_COLLNET_DIRECT][CS_PROTO_SIMPLE] = 512;
    tu->thread_threshold[CS_ALGO_COLLNET_CHAIN][CS_PROTO_SIMPLE] = 512;
    for (int a = 0; a < 2; a++)
        for (int p = 0; p < CS_PROTO_COUNT; p++)
            if (s->thread_thresholds[a][p] >= 0)
                tu->thread_threshold[a][p] = s->thread_thresholds[a][p];

    if (nranks <= 1)
        return;

    int ci = cc_index(cc_min);
    int i2 = nnodes <= 2 ? nnodes - 1 : 2;
    /* LL: one node looks at the GPU, several at the CPU (AMD or mixed: row 1) */
    int i1 = nnodes == 1 ? ci : c->cpu_amd_or_mixed ? 1 : 0;
    float ll_max_bw = ll_max_bws[i1][i2];
    float per_ch_tree = per_ch_max_tree_bws[ci][i2];
    float per_ch_ring_ll128 = per_ch_max_ring_ll128_bws[ci][i2];
    if (ci == 3 && c->info.nccl_version >= 22907)
        per_ch_ring_ll128 = per_ch_max_ring_ll128_bw_sm100_v2297[i2];
    else if (ci == 3 && c->info.nccl_version >= 22902)
        per_ch_ring_ll128 = per_ch_max_ring_ll128_bw_sm100_v2292[i2];
    float per_ch_tree_ll128 = per_ch_max_tree_ll128_bws[ci][i2];
    float per_ch_nvls_tree = per_ch_max_nvls_tree_bws[ci][i2];
    float hwl[3][CS_ALGO_COUNT][CS_PROTO_COUNT];
    memcpy(hwl, hw_lat, sizeof hwl);
    /* POWER: Tree/Simple gets Ring's PCI latency */
    if (c->vendor == CS_CPU_POWER)
        hwl[HW_PCI][CS_ALGO_TREE][CS_PROTO_SIMPLE] = hwl[HW_PCI][CS_ALGO_RING][CS_PROTO_SIMPLE];
    float ppn = (float)nranks / nnodes;

    int intra_hw[CS_ALGO_COUNT], hw[CS_ALGO_COUNT];
    for (int a = 0; a < CS_ALGO_COUNT; a++) {
        intra_hw[a] = c->graph_type_intra[a] == CS_PATH_NVL ? HW_NVLINK : HW_PCI;
        hw[a] = nnodes == 1 ? intra_hw[a] : HW_NET;
    }
    /* tuning.cc getNetOverhead: NCCL_NET_OVERHEAD (ns), else 1 us Intel,
     * 2 us AMD, 1 us otherwise */
    float net_overhead_base = s->net_overhead_us >= 0 ? (float)s->net_overhead_us :
                              c->vendor == CS_CPU_AMD && !c->vendor_mixed ? 2.0f : 1.0f;

    for (int coll = 0; coll < CS_COLL_COUNT; coll++) {
        int nsteps = coll == CS_COLL_ALLREDUCE ? 2 * (nranks - 1) :
                     coll == CS_COLL_REDUCESCATTER || coll == CS_COLL_ALLGATHER ? nranks - 1 : nranks;
        for (int a = 0; a < CS_ALGO_COUNT; a++) {
            if ((coll == CS_COLL_BROADCAST || coll == CS_COLL_REDUCE) && a != CS_ALGO_RING)
                continue;
            if ((coll == CS_COLL_REDUCESCATTER || coll == CS_COLL_ALLGATHER) && a != CS_ALGO_PAT &&
                a != CS_ALGO_RING && a != CS_ALGO_NVLS && a != CS_ALGO_COLLNET_DIRECT)
                continue;
            if (coll == CS_COLL_ALLREDUCE && a == CS_ALGO_PAT)
                continue;
            int gnch = c->graph_nch[a];
            float bw_intra = (float)c->graph_bw_intra[a], bw_inter = (float)c->graph_bw_inter[a];
            for (int p = 0; p < CS_PROTO_COUNT; p++) {
                if ((a == CS_ALGO_NVLS || a == CS_ALGO_NVLS_TREE) && p != CS_PROTO_SIMPLE)
                    continue;
                if ((coll == CS_COLL_REDUCESCATTER || coll == CS_COLL_ALLGATHER) && a == CS_ALGO_PAT &&
                    (p != CS_PROTO_SIMPLE || !c->pat_support))
                    continue;
                gboolean collnet = a == CS_ALGO_COLLNET_DIRECT || a == CS_ALGO_COLLNET_CHAIN;
                float bw = nnodes <= 2 || collnet ? bw_intra : bw_inter;
                if (a == CS_ALGO_NVLS || a == CS_ALGO_NVLS_TREE) {
                    if (gnch < 2)
                        continue;
                    float intra = bw_intra * nvls_efficiency[ci] * (gnch - 1) / gnch;
                    if (coll == CS_COLL_ALLREDUCE)
                        intra *= 2.0f;   /* AllReduce pipelines two operations */
                    else
                        intra *= (ppn - 1) / ppn;
                    float inter = bw_inter * (nnodes <= 2 && a == CS_ALGO_NVLS_TREE ? 2 : 1);
                    bw = MIN(intra, inter);
                    if (a == CS_ALGO_NVLS_TREE)
                        bw = MIN(bw, per_ch_nvls_tree);
                }
                float bus = gnch * bw;
                if (a == CS_ALGO_RING && p == CS_PROTO_LL)
                    bus = MIN(ll_max_bw, bus * .5f);
                if (a == CS_ALGO_RING && p == CS_PROTO_LL128)
                    bus = MIN(bus * 0.92f, gnch * per_ch_ring_ll128);
                if (a == CS_ALGO_TREE && coll == CS_COLL_ALLREDUCE)
                    bus = MIN(bus * .92f, gnch * per_ch_tree);
                if (a == CS_ALGO_TREE && p == CS_PROTO_LL)
                    bus = MIN(bus * 1.0f / 3.8f, ll_max_bw);
                if (a == CS_ALGO_TREE && p == CS_PROTO_LL128)
                    bus = MIN(bus * (nnodes == 1 ? 7.0f / 9.0f : 120.0f / 128.0f), gnch * per_ch_tree_ll128);
                if (a == CS_ALGO_TREE && c->max_tree_pattern == CS_PATTERN_TREE)
                    bus *= .85f;
                if (a == CS_ALGO_PAT)
                    bus *= .75f;
                /* CollNet: Simple only; CollNetDirect's GPU/NIC ratio (every
                 * GPU needs a local NIC for full speed) and Hopper's .85 */
                if (collnet && p != CS_PROTO_SIMPLE)
                    bus = 0;
                if (a == CS_ALGO_COLLNET_DIRECT && p == CS_PROTO_SIMPLE) {
                    if (coll == CS_COLL_ALLGATHER || coll == CS_COLL_REDUCESCATTER) {
                        bus = ppn * MIN(bw_intra, bw_inter * 0.9f);
                    } else {
                        float factor = (float)(ppn / (1.0 * gnch));
                        factor -= (factor - 1) / 2;
                        bus /= factor;
                        if (cc_min >= 90)
                            bus *= .85f;
                    }
                }
                /* NVLS/CollNetDirect AllGather/ReduceScatter across nodes need
                 * CollNet's iallgather/ireducescatter: not modelled, off */
                if ((a == CS_ALGO_NVLS || a == CS_ALGO_COLLNET_DIRECT) && p == CS_PROTO_SIMPLE &&
                    (coll == CS_COLL_ALLGATHER || coll == CS_COLL_REDUCESCATTER) && nnodes > 1)
                    bus = 0;
                /* bus bandwidth -> algorithm bandwidth */
                if (!(a != CS_ALGO_RING && (coll == CS_COLL_ALLGATHER || coll == CS_COLL_REDUCESCATTER))) {
                    float ratio = a == CS_ALGO_RING || a == CS_ALGO_NVLS || a == CS_ALGO_NVLS_TREE
                                      ? (1.0f * nranks) / nsteps : .5f;
                    bus *= ratio;
                }
                tu->bw[coll][a][p] = bus;

                float lat = base_lat[a][p];
                float intra_lat = hwl[intra_hw[a]][a][p];
                float inter_lat = ppn == 1 ? hwl[HW_NET][CS_ALGO_TREE][p] : hwl[HW_NET][a][p];
                inter_lat += (float)c->graph_lat_inter[a];
                if (p == CS_PROTO_SIMPLE)
                    inter_lat += (float)c->graph_lat_inter[a];   /* the flush */
                if (a == CS_ALGO_RING) {
                    float l = hwl[hw[a]][a][p];
                    if (coll == CS_COLL_REDUCE || coll == CS_COLL_BROADCAST) {
                        if (c->graph_same[a]) {
                            lat += l;
                        } else {
                            if (p == CS_PROTO_SIMPLE)
                                l = hwl[hw[a]][CS_ALGO_TREE][p];
                            lat += nsteps * l;
                        }
                    } else {
                        float net_ov = 0.0f;
                        if (nnodes > 1) {
                            net_ov = net_overhead_base;
                            if (p == CS_PROTO_SIMPLE)
                                net_ov *= 3;
                        }
                        intra_lat = MAX(intra_lat, net_ov);
                        int n_inter = nnodes == 1 ? 0 : coll == CS_COLL_ALLREDUCE ? 2 * (nnodes - 1) : nnodes - 1;
                        lat += (nsteps - n_inter) * intra_lat + n_inter * inter_lat;
                    }
                } else if (a == CS_ALGO_TREE) {
                    if (coll == CS_COLL_ALLREDUCE)
                        lat += 2 * ((nranks / nnodes - 1) * intra_lat + log2i(nnodes) * inter_lat);
                } else if (a == CS_ALGO_COLLNET_DIRECT) {
                    lat += 2 * (MIN(1, nranks / nnodes - 1) * intra_lat + (nranks / nnodes - 1) * 0.4f) + inter_lat;
                } else if (a == CS_ALGO_COLLNET_CHAIN) {
                    lat += 2 * (nranks / nnodes - 1) * intra_lat + inter_lat;
                } else if (a == CS_ALGO_NVLS) {
                    lat = intra_lat;
                    if (nnodes > 1)
                        lat += inter_lat;
                } else if (a == CS_ALGO_NVLS_TREE) {
                    lat += intra_lat + 2 * log2i(nnodes) * inter_lat;
                } else if (a == CS_ALGO_PAT) {
                    if (coll == CS_COLL_ALLGATHER || coll == CS_COLL_REDUCESCATTER)
                        lat += log2i(nnodes) * (inter_lat / 3.5f) + nranks * 2.8f;
                }
                tu->lat[coll][a][p] = lat;
            }
        }
    }

    for (int coll = 0; coll < CS_COLL_COUNT; coll++)
        for (int a = 0; a < CS_ALGO_COUNT; a++) {
            gboolean any = FALSE;
            for (int p = 0; p < CS_PROTO_COUNT; p++)
                any |= tu->bw[coll][a][p] > 0;
            tu->avail[coll][a] = any && !(nnodes == 1 && a == CS_ALGO_NVLS_TREE) &&
                                 !(a == CS_ALGO_NVLS && nnodes > 1) && !collnet_off(c, a);
        }

    /* Enables (tuning.cc): NCCL_ALGO / NCCL_PROTO from the settings, then
     * NVLSTree off on one node, CollNet (and multi-node NVLS, which needs
     * CollNet) off, and LL128's default rule. */
    for (int coll = 0; coll < CS_COLL_COUNT; coll++) {
        for (int a = 0; a < CS_ALGO_COUNT; a++) {
            gboolean algo_on = s->algo_enabled[coll][a] != 0;
            if (nnodes == 1 && a == CS_ALGO_NVLS_TREE)
                algo_on = FALSE;
            /* CollNet off (and NVLS across nodes, which needs it); on:
             * CollNetChain needs collNetChainSupport, CollNetDirect an
             * NVSwitch. NVLS across nodes with SHARP is not modelled:
             * left out even with CollNet on (the note says so). */
            if (collnet_off(c, a) || (a == CS_ALGO_NVLS && nnodes > 1))
                algo_on = FALSE;
            for (int p = 0; p < CS_PROTO_COUNT; p++) {
                int pe = s->proto_enabled[coll][p];
                if (p == CS_PROTO_LL128) {
                    int def = 1;
                    if (s->ll128_c2c && cc_min >= 90)
                        def &= c->graph_type_inter[a] <= CS_PATH_PXN;
                    else
                        def &= c->graph_type_inter[a] <= CS_PATH_PXB;
                    def &= c->graph_type_intra[a] <= CS_PATH_NVB;
                    def &= cc_min == cc_max;
                    def &= !(cc_min < 70);
                    if (pe == 2)
                        pe = def;
                    else if (pe == 1 && !def && algo_on && a != CS_ALGO_COLLNET_DIRECT &&
                             a != CS_ALGO_COLLNET_CHAIN && a != CS_ALGO_NVLS && a != CS_ALGO_NVLS_TREE)
                        c->ll128_forced_unsafe = TRUE;   /* NCCL's default would leave it off */
                }
                if (pe == 0 || !algo_on)
                    tu->bw[coll][a][p] = 0;
            }
        }
    }
}

gboolean cs_comm_nvls_tree_corrected(const cs_comm_t *c)
{
    return c->info.nccl_version >= 22902 && c->info.cc >= 100 && c->vendor != CS_CPU_ARM &&
           c->vendor != CS_CPU_POWER;
}

/* tuning.cc ncclTopoGetAlgoTime, numPipeOps = 1 */
static float algo_time(const cs_comm_t *c, int coll, int a, int p, guint64 nbytes, float *bw_p,
                       float *lat_p)
{
    float bw = c->tune.bw[coll][a][p];
    float lat = c->tune.lat[coll][a][p];
    if (bw == 0)
        return -1.0f;
    int log_size = log2i(nbytes >> 6);
    if (a == CS_ALGO_TREE && coll == CS_COLL_ALLREDUCE && log_size >= 0 && log_size < 23)
        bw *= tree_corr[p][log_size];
    /* tuning.cc from v2.29.2: NVLSTree all-reduce takes the tree's
     * correction too on Blackwell with x86 hosts (comm->cpuArch: neither
     * Arm nor POWER), up to its table's new 24th entry */
    if (a == CS_ALGO_NVLS_TREE && coll == CS_COLL_ALLREDUCE && cs_comm_nvls_tree_corrected(c) &&
        log_size >= 0 && log_size < 24)
        bw *= tree_corr[p][log_size];
    if (a == CS_ALGO_RING && p == CS_PROTO_SIMPLE && c->nnodes > 1 && coll == CS_COLL_ALLREDUCE &&
        nbytes / ((guint64)c->info.comm_nch * c->info.nranks) >= 64)
        lat *= c->info.cc < 80 ? 1.9f : 1.4f;   /* plateau effect of ring */
    int lat_count = a == CS_ALGO_RING ? 1 : (1 + MAX_DEV_WORK_BATCH_COLLS - 1) / MAX_DEV_WORK_BATCH_COLLS;
    *bw_p = bw;
    *lat_p = lat;
    return lat * lat_count + (float)nbytes / (1000 * bw);
}

/* device.h ncclNvlsSupported: the multimem reductions NVLS has, sum for
 * every type it takes, min and max for the integer and 16-bit float ones.
 * An average is a sum with a scaling before or after (enqueue.cc
 * hostToDevRedOp: ncclDevPreMulSum for floats, ncclDevSumPostDiv for
 * integers), not ncclDevSum: no NVLS; nor for a product. */
static gboolean nvls_type_ok(cs_dtype_t t, cs_redop_t op)
{
    switch (t) {
    case CS_DTYPE_INT32: case CS_DTYPE_UINT32: case CS_DTYPE_INT64: case CS_DTYPE_UINT64:
    case CS_DTYPE_HALF: case CS_DTYPE_BFLOAT16:
        return op == CS_REDOP_SUM || op == CS_REDOP_MIN || op == CS_REDOP_MAX;
    case CS_DTYPE_FLOAT: case CS_DTYPE_DOUBLE:
        return op == CS_REDOP_SUM;
    default:
        return FALSE;
    }
}

/* Algorithms this topology allows for the collective, whatever NCCL_ALGO
 * and NCCL_PROTO say (for the error message). */
static char *allowed_list(const cs_comm_t *c, cs_coll_t coll)
{
    GString *s = g_string_new(NULL);
    for (int a = 0; a < CS_ALGO_COUNT; a++)
        if (c->tune.avail[coll][a])
            g_string_append_printf(s, "%s%s", s->len ? ", " : "", cs_algo_name(a));
    return g_string_free(s, FALSE);
}

/* enqueue.cc calcCollChunking: bytes per chunk (aligned to the grain). */
static guint64 chunk_size(const cs_comm_t *c, cs_coll_t coll, int a, int p, int nc, guint64 nbytes)
{
    static const int grain[CS_PROTO_COUNT] = { 16, 1920, 512 };   /* device.h ncclProtoGrainSize */
    const cs_tune_t *tu = &c->tune;
    gboolean steps42 = p == CS_PROTO_SIMPLE && a == CS_ALGO_RING &&
                       (coll == CS_COLL_ALLREDUCE || coll == CS_COLL_ALLGATHER || coll == CS_COLL_REDUCESCATTER);
    guint64 step = tu->buff_size[p] / NCCL_STEPS;
    guint64 chunk = step * (steps42 ? 4 : 1);   /* collectives.h *_CHUNKSTEPS */
    if (p == CS_PROTO_LL)
        chunk /= 2;
    if (p == CS_PROTO_LL128)
        chunk = chunk / 16 * 15;
    guint64 heads = (guint64)MAX(c->nvls_heads, 1);
    if (a == CS_ALGO_COLLNET_DIRECT) {
        /* depth 2 where a rank has heads above or peers below
         * (connect.cc connectCollNet), the direct graph's heads */
        guint64 dh = (guint64)MAX(1, c->collnet_direct_heads);
        guint64 depth = c->info.ppn > 1 || dh > 1 ? 2 : 1;
        while (nbytes / ((guint64)nc * dh * chunk) < depth * 64 && chunk > 131072)
            chunk /= 2;
        while (nbytes / ((guint64)nc * dh * chunk) < depth * 8 && chunk > 65536)
            chunk /= 2;
        while (nbytes / ((guint64)nc * dh * chunk) < depth * 8 && chunk > 32768)
            chunk /= 2;
    } else if (a == CS_ALGO_COLLNET_CHAIN) {
        /* at most 256 KiB; depth = ranks per node (connect.cc) */
        guint64 depth = (guint64)MAX(1, c->info.nranks / c->nnodes);
        chunk = MIN((guint64)256 * 1024, tu->buff_size[CS_PROTO_SIMPLE] / NCCL_STEPS);
        while (nbytes / ((guint64)nc * chunk) < depth * 64 && chunk > 131072)
            chunk /= 2;
        while (nbytes / ((guint64)nc * chunk) < depth * 8 && chunk > 65536)
            chunk /= 2;
        while (nbytes / ((guint64)nc * chunk) < depth && chunk > 32768)
            chunk /= 2;
    } else if (a == CS_ALGO_NVLS) {
        guint64 max_chunk = (guint64)c->s.nvls_chunksize;
        if (c->nnodes > 1 && tu->bw[CS_COLL_ALLREDUCE][CS_ALGO_NVLS][CS_PROTO_SIMPLE] < 150)
            max_chunk = 32768;
        chunk = MIN(chunk, max_chunk);
        guint64 ops = (guint64)nc * heads;
        if (nbytes < 64 * ops * chunk && chunk > 65536)
            chunk = 65536;
        if (nbytes < 8 * ops * chunk && chunk > 32768)
            chunk = 32768;
        if (nbytes < 2 * ops * chunk && chunk > 16384)
            chunk = 16384;
    } else if (a == CS_ALGO_NVLS_TREE) {
        guint64 ops = (guint64)nc * heads;
        chunk = (guint64)c->s.nvls_chunksize;
        guint64 max_chunk = c->nnodes >= 4 ? 65536 : chunk;   /* NCCL_NVLSTREE_MAX_CHUNKSIZE auto */
        chunk = MIN(chunk, max_chunk);
        if (nbytes < 32 * ops * chunk && chunk > 262144)
            chunk = 262144;
        if (nbytes < 16 * ops * chunk && chunk > 131072)
            chunk = 131072;
        if (nbytes < 4 * ops * chunk && chunk > 65536)
            chunk = 65536;
        if (nbytes < 1 * ops * chunk && chunk > 32768)
            chunk = 32768;
    } else if (a == CS_ALGO_TREE && p == CS_PROTO_LL128) {
        float ppn = c->info.nranks / (float)c->nnodes;
        float nsteps = 1 + log2i(c->nnodes) + 0.1f * ppn;
        while (nbytes / ((guint64)nc * chunk) < nsteps * 64 / ppn && chunk > 131072)
            chunk /= 2;
        while (nbytes / ((guint64)nc * chunk) < nsteps * 16 / ppn && chunk > 32768)
            chunk /= 2;
    } else if (coll == CS_COLL_ALLGATHER && a == CS_ALGO_PAT) {
        while (chunk * nc * 32 > nbytes && chunk > 65536)
            chunk /= 2;
    } else if (coll == CS_COLL_REDUCESCATTER && a == CS_ALGO_PAT) {
        while (chunk * nc * 16 > nbytes && chunk > 65536)
            chunk /= 2;
    }
    return chunk / grain[p] * grain[p];
}

/* SendRecv and AlltoAll: no algorithm or cost table; the plan of one send
 * (cs_p2p_op: a network peer's where the call has any). NCCL runs p2p
 * kernels with NCCL_MAX_NTHREADS (enqueue.cc scheduleP2pTasksToPlan). */
static gboolean decide_p2p(const cs_comm_t *c, cs_coll_t coll, guint64 nbytes, cs_decision_t *d_p)
{
    const cs_comm_info_t *in = &c->info;
    cs_decision_t d;
    memset(&d, 0, sizeof d);
    for (int a = 0; a < CS_ALGO_COUNT; a++)
        for (int p = 0; p < CS_PROTO_COUNT; p++)
            d.table_us[a][p] = -1;
    cs_p2p_op_t op;
    cs_p2p_op(in, (gint64)cs_p2p_bytes_per_peer(coll, nbytes, in->nranks), in->nnodes > 1, &op);
    d.algo = CS_ALGO_P2P;
    d.proto = op.proto;
    d.nchannels = op.nch;
    d.nthreads = 640;   /* device.h NCCL_MAX_NTHREADS */
    d.chunk_bytes = op.chunk;
    d.nccl_time_us = -1;
    d.nccl_bw = -1;
    d.nccl_lat_us = -1;
    *d_p = d;
    return TRUE;
}

gboolean cs_comm_decide(const cs_comm_t *c, cs_coll_t coll, cs_dtype_t dtype, guint64 nbytes,
                        cs_decision_t *d_p, GError **err)
{
    return cs_comm_decide_op(c, coll, dtype, CS_REDOP_SUM, nbytes, d_p, err);
}

/* cs_comm_decide_op, its choice among algorithm 'only' alone where
 * 'only' >= 0 and protocol 'only_p' alone where 'only_p' >= 0 (what
 * NCCL_ALGO and NCCL_PROTO naming them would leave NCCL's tuner). */
static gboolean decide(const cs_comm_t *c, cs_coll_t coll, cs_dtype_t dtype, cs_redop_t redop, guint64 nbytes,
                       int only, int only_p, cs_decision_t *d_p, GError **err)
{
    if (cs_coll_is_p2p(coll))
        return decide_p2p(c, coll, nbytes, d_p);
    cs_decision_t d;
    memset(&d, 0, sizeof d);
    float bws[CS_ALGO_COUNT][CS_PROTO_COUNT] = { { 0 } }, lats[CS_ALGO_COUNT][CS_PROTO_COUNT] = { { 0 } };
    float table[CS_ALGO_COUNT][CS_PROTO_COUNT];
    for (int a = 0; a < CS_ALGO_COUNT; a++)
        for (int p = 0; p < CS_PROTO_COUNT; p++)
            table[a][p] = -1.0f;
    int nranks = c->info.nranks;
    if (nranks == 1) {
        table[CS_ALGO_RING][CS_PROTO_SIMPLE] = 0.0f;
    } else {
        gboolean nvls_ok = c->nvls_support && (nvls_type_ok(dtype, redop) || coll == CS_COLL_ALLGATHER);
        for (int a = 0; a < CS_ALGO_COUNT; a++) {
            /* enqueue.cc ncclGetCollNetSupport (the plugin's reduce
             * support for reductions) and updateCollCostTable: CollNet
             * only up to NCCL_MAX_DIRECT_ARITY + 1 local ranks */
            if ((a == CS_ALGO_COLLNET_DIRECT || a == CS_ALGO_COLLNET_CHAIN) &&
                (!c->collnet || c->max_local_ranks > CS_MAX_DIRECT_ARITY + 1 ||
                 ((coll == CS_COLL_ALLREDUCE || coll == CS_COLL_REDUCE || coll == CS_COLL_REDUCESCATTER) &&
                  !cs_collnet_type_ok(dtype))))
                continue;
            if ((a == CS_ALGO_NVLS || a == CS_ALGO_NVLS_TREE) &&
                (!nvls_ok || (coll != CS_COLL_ALLREDUCE && c->local_ranks > CS_NVLS_MAX_ARITY)))
                continue;
            if (a == CS_ALGO_NVLS && c->nnodes > 1)
                continue;
            /* enqueue.cc updateCollCostTable: PAT reduce-scatter has no
             * scaling (an average: ncclDevPreMulSum or ncclDevSumPostDiv) */
            if (a == CS_ALGO_PAT && coll == CS_COLL_REDUCESCATTER && redop == CS_REDOP_AVG)
                continue;
            for (int p = 0; p < CS_PROTO_COUNT; p++) {
                table[a][p] = (only >= 0 && a != only) || (only_p >= 0 && p != only_p)
                                  ? -1.0f : algo_time(c, coll, a, p, nbytes, &bws[a][p], &lats[a][p]);
                /* fp8 reductions over deep rings lose precision: least preferred */
                if ((dtype == CS_DTYPE_FP8E4M3 || dtype == CS_DTYPE_FP8E5M2) && a == CS_ALGO_RING &&
                    nranks > 8)
                    table[a][p] *= 1024.0f;
            }
        }
    }
    float min_time = 3600000000.0f;
    int algo = -1, proto = -1;
    for (int a = 0; a < CS_ALGO_COUNT; a++)
        for (int p = 0; p < CS_PROTO_COUNT; p++) {
            d.table_us[a][p] = table[a][p] >= 0.0f ? table[a][p] : -1.0;
            if (table[a][p] == -1.0f)
                continue;
            if (table[a][p] >= 0.0f && table[a][p] < min_time) {
                algo = a;
                proto = p;
                min_time = table[a][p];
            }
        }
    if (algo < 0) {
        /* an algorithm priced, but at NCCL's ceiling or above: NCCL
         * refuses the call the same way (tuning.cc topoGetAlgoInfo:
         * minTime 3600000000 us, "no algorithm/protocol available"),
         * whatever NCCL_ALGO and NCCL_PROTO allow */
        gboolean slow = FALSE;
        for (int a = 0; a < CS_ALGO_COUNT; a++)
            for (int p = 0; p < CS_PROTO_COUNT; p++)
                slow |= table[a][p] >= min_time;
        if (slow) {
            cs_set_error_at(err, NULL, 0, "no algorithm available for %s of %" G_GUINT64_FORMAT " bytes on "
                            "this topology: NCCL's tuner prices every algorithm above its one-hour ceiling "
                            "(tuning.cc), and NCCL refuses such a call; expected a smaller size",
                            cs_coll_name(coll), (guint64)nbytes);
            return FALSE;
        }
        g_autofree char *allowed = allowed_list(c, coll);
        if (c->algo_env != NULL || c->proto_env != NULL) {
            /* name the variable that restricts the choice (and the other
             * one when both are set) */
            gboolean by_algo = c->algo_env != NULL;
            g_autofree char *also = by_algo && c->proto_env != NULL
                                        ? g_strdup_printf(" (with NCCL_PROTO=%s)", c->proto_env)
                                        : g_strdup("");
            cs_set_error_at(err, by_algo ? c->algo_origin : c->proto_origin, 0,
                            "%s=%s%s: no algorithm allowed for %s on this topology; expected "
                            "one of %s", by_algo ? "NCCL_ALGO" : "NCCL_PROTO",
                            by_algo ? c->algo_env : c->proto_env, also, cs_coll_name(coll),
                            *allowed ? allowed : "Ring");
        } else {
            cs_set_error_at(err, NULL, 0, "no algorithm available for %s with %s on this "
                            "topology", cs_coll_name(coll), cs_dtype_name(dtype));
        }
        return FALSE;
    }

    /* enqueue.cc topoGetAlgoInfo: channels and threads */
    int nc = c->info.comm_nch;
    int nt = c->tune.max_threads[algo][proto];
    guint64 thr = (guint64)c->tune.thread_threshold[algo][proto];
    if (algo == CS_ALGO_COLLNET_DIRECT) {
        /* CollNet channel tuning: thresholds scaled by the heads, halved
         * as the count crosses 1.5 x each power of two from 16 down */
        guint64 heads = (guint64)MAX(1, c->collnet_direct_heads);
        int nc_switch = 16;
        gboolean more = TRUE;
        while (nc_switch >= 1 && more) {
            while ((more = nbytes < (guint64)nc * nt * heads * thr) && nc > nc_switch) {
                if (nc == nc_switch + nc_switch / 2)
                    thr /= 2;
                nc--;
            }
            nc_switch /= 2;
        }
    } else if (algo == CS_ALGO_NVLS || algo == CS_ALGO_NVLS_TREE) {
        nc = c->nnodes > 1 && algo == CS_ALGO_NVLS ? MIN(c->nvls_channels, c->info.comm_nch)
                                                   : c->nvls_channels;
    } else {
        while (nbytes < (guint64)nc * nt * thr) {
            if (nc >= 2)
                nc--;
            else
                break;
        }
    }
    /* the measured run's NCCL, where its channel rule is modelled
     * (cs_comm_set_nccl_version: 2.4 builds one ring per NIC) */
    if (c->info.nccl_nch > 0 && (algo == CS_ALGO_RING || algo == CS_ALGO_TREE))
        nc = MIN(nc, c->info.nccl_nch);
    if (algo != CS_ALGO_NVLS && algo != CS_ALGO_NVLS_TREE && algo != CS_ALGO_COLLNET_DIRECT) {
        while (nbytes < (guint64)nc * nt * thr) {
            if (nt % 128 == 0)
                nt /= 2;
            else
                break;
        }
    }
    if (proto == CS_PROTO_SIMPLE) {
        if (algo == CS_ALGO_RING)
            nt += WARP_SIZE;       /* extra warp for sync */
        if (algo == CS_ALGO_TREE)
            nt += 4 * WARP_SIZE;   /* split thread model */
    }
    nt = nt / WARP_SIZE < 3 ? 3 * WARP_SIZE : nt;
    if (algo == CS_ALGO_TREE || algo == CS_ALGO_PAT)
        nt = NCCL_MAX_NTHREADS;

    d.algo = algo;
    d.proto = proto;
    d.nchannels = nc;
    d.nthreads = nt;
    d.nccl_time_us = min_time;
    d.nccl_bw = bws[algo][proto];
    d.nccl_lat_us = lats[algo][proto];
    d.chunk_bytes = nranks == 1 ? 0 : chunk_size(c, coll, algo, proto, nc, nbytes);
    *d_p = d;
    return TRUE;
}

gboolean cs_comm_decide_op(const cs_comm_t *c, cs_coll_t coll, cs_dtype_t dtype, cs_redop_t redop,
                           guint64 nbytes, cs_decision_t *d_p, GError **err)
{
    g_return_val_if_fail(c != NULL && d_p != NULL && coll < CS_OP_COUNT, FALSE);
    return decide(c, coll, dtype, redop, nbytes, -1, -1, d_p, err);
}

gboolean cs_comm_decide_forced(const cs_comm_t *c, cs_coll_t coll, cs_dtype_t dtype, cs_redop_t redop,
                               guint64 nbytes, int algo, int proto, cs_decision_t *d_p, GError **err)
{
    g_return_val_if_fail(c != NULL && d_p != NULL && coll < CS_OP_COUNT && !cs_coll_is_p2p(coll), FALSE);
    g_return_val_if_fail(algo >= -1 && algo < CS_ALGO_COUNT && proto >= -1 && proto < CS_PROTO_COUNT, FALSE);
    return decide(c, coll, dtype, redop, nbytes, algo, proto, d_p, err);
}
