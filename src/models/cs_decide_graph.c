/* NCCL's view of one node and its channel search (NCCL v2.28.9):
 *  - paths.cc ncclTopoComputePaths: GPU pairs without P2P go through the
 *    CPU; PXN (a NIC reached through an NVLink peer); no GPUDirect RDMA
 *    means through the CPU;
 *  - search.cc ncclTopoCompute: the recursive ring / tree / NVLS search at
 *    a list of per-channel speeds, each channel taking its bandwidth off
 *    every link it crosses, then ncclTopoDupChannels and the second pass.
 * The code is ours; the rules, constants and search order are NCCL's.
 * What differs is listed in docs/model-decisions.md. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "models/cs_decide_int.h"

/* ---- small helpers --------------------------------------------------- */

/* paths.cc mergePathType: C2C + PHB is P2C, otherwise the worse type. */
static int merge_type(int a, int b)
{
    int hi = MAX(a, b), lo = MIN(a, b);
    return hi == CS_PATH_PHB && lo == CS_PATH_C2C ? CS_PATH_P2C : hi;
}

/* A path as a list of topology links (before reduction to slots). */
#define LPATH_MAX (2 * CS_PATH_MAX_HOPS + 4)
typedef struct {
    int type;
    double bw;
    int n;
    int links[LPATH_MAX];
} lpath_t;

static void lpath_from(lpath_t *l, const cs_path_t *p)
{
    l->type = p->type;
    l->bw = p->nccl_bw;
    l->n = MIN(p->nhops, LPATH_MAX);
    memcpy(l->links, p->links, sizeof(int) * l->n);
}

static void lpath_intra(const cs_sys_t *sys, int a, int b, lpath_t *l)
{
    cs_path_t p;
    cs_path_intra(sys->t, a, b, sys->s->nvb_disable, &p);
    lpath_from(l, &p);
}

/* paths.cc addInterStep: src -> mid, then mid -> dst. */
static void lpath_concat(lpath_t *out, const lpath_t *a, const lpath_t *b)
{
    lpath_t r;
    r.type = merge_type(a->type, b->type);
    r.bw = MIN(a->bw, b->bw);
    r.n = MIN(a->n + b->n, LPATH_MAX);
    memcpy(r.links, a->links, sizeof(int) * a->n);
    memcpy(r.links + a->n, b->links, sizeof(int) * (r.n - a->n));
    *out = r;
}

/* ---- P2P between two GPUs (paths.cc ncclTopoCheckP2p) ------------------ */

/* NVML reports P2P between two GPUs of a host when they share NVLink, or
 * when the driver allows PCIe P2P on both (GeForce cards: off unless the
 * node says otherwise, cs_device_p2p). */
static gboolean nvml_p2p(const cs_topo_t *t, int a, int b, int type)
{
    if (type <= CS_PATH_NVB)
        return TRUE;
    return cs_device_p2p(&t->devs[a]) && cs_device_p2p(&t->devs[b]);
}

gboolean cs_sys_p2p(const cs_topo_t *t, const cs_nccl_settings_t *s, int dev_a, int dev_b,
                    int host_gpus, cs_path_t *path_p)
{
    cs_path_t p;
    cs_path_intra(t, dev_a, dev_b, s->nvb_disable, &p);
    if (path_p != NULL)
        *path_p = p;
    if (p.type >= CS_PATH_NET)
        return FALSE;
    /* Default PXB; SYS on AMD x86 with at most two GPUs; user level wins. */
    int level = CS_PATH_PXB;
    int cpu = cs_topo_node_cpu_of(t, dev_a);
    if (cpu >= 0 && t->devs[cpu].vendor == CS_CPU_AMD && host_gpus <= 2)
        level = CS_PATH_SYS;
    if (s->p2p_level >= 0)
        level = s->p2p_level;
    if ((int)p.type > level)
        return FALSE;
    return nvml_p2p(t, dev_a, dev_b, p.type);
}

/* ---- building the system --------------------------------------------- */

typedef struct {
    cs_sys_t *sys;
    GHashTable *link_slot;   /* link index + 1 -> slot + 1 */
    GArray *cap0;            /* double per slot */
    int *up, *dn;            /* merged NVS slots per GPU, -1 */
    int *net_in, *net_out;   /* per net */
} build_t;

static int new_slot(build_t *b, double cap)
{
    g_array_append_val(b->cap0, cap);
    return (int)b->cap0->len - 1;
}

static int slot_of_link(build_t *b, int link)
{
    gpointer v = g_hash_table_lookup(b->link_slot, GINT_TO_POINTER(link + 1));
    if (v != NULL)
        return GPOINTER_TO_INT(v) - 1;
    int s = new_slot(b, b->sys->t->links[link].nccl_bw);
    g_hash_table_insert(b->link_slot, GINT_TO_POINTER(link + 1), GINT_TO_POINTER(s + 1));
    return s;
}

static int gpu_index(const cs_sys_t *sys, int dev)
{
    for (int g = 0; g < sys->ngpus; g++)
        if (sys->gpu_dev[g] == dev)
            return g;
    return -1;
}

static void push_hop(cs_sys_t *sys, int slot, double mult)
{
    cs_hop_t h = { slot, mult };
    g_array_append_val(sys->hops, h);
}

static double slot_cap0(build_t *b, int slot)
{
    return g_array_index(b->cap0, double, slot);
}

/* Reduces a link path to slots. NVSwitch hops become the merged NVS up /
 * down slots of the GPUs at either end. 'from_gpu' says whether the path
 * starts at a GPU (search.cc followPath: the Intel PCIe overhead applies
 * to PHB paths from a GPU, the 1/8 reverse charge into pre-Ampere GPUs to
 * paths that do not start at a GPU). Extra slots (NET links) are added by
 * the caller before or after. Returns NCCL's hop count. */
static int emit_links(build_t *b, const lpath_t *l, gboolean from_gpu)
{
    cs_sys_t *sys = b->sys;
    const cs_topo_t *t = sys->t;
    gboolean intel = FALSE;
    for (int i = 0; i < l->n; i++) {
        const cs_device_t *d = &t->devs[t->links[l->links[i]].dst];
        if (d->kind == CS_DEV_CPU && d->vendor == CS_CPU_INTEL)
            intel = TRUE;
    }
    double pci_mult = from_gpu && l->type == CS_PATH_PHB && intel ? 6.0 / 5.0 : 1.0;
    int count = 0;
    for (int i = 0; i < l->n; i++) {
        const cs_link_t *lk = &t->links[l->links[i]];
        const cs_device_t *src = &t->devs[lk->src], *dst = &t->devs[lk->dst];
        int slot;
        double mult = lk->kind == CS_LINK_PCI ? pci_mult : 1.0;
        if (src->kind == CS_DEV_GPU && dst->kind == CS_DEV_NVSWITCH) {
            int g = gpu_index(sys, lk->src);
            if (g < 0 || b->up[g] < 0)
                slot = slot_of_link(b, l->links[i]);
            else
                slot = b->up[g];
        } else if (src->kind == CS_DEV_NVSWITCH && dst->kind == CS_DEV_NVSWITCH) {
            continue;   /* inside the merged NVS node */
        } else if (src->kind == CS_DEV_NVSWITCH && dst->kind == CS_DEV_GPU) {
            int g = gpu_index(sys, lk->dst);
            slot = g < 0 || b->dn[g] < 0 ? slot_of_link(b, l->links[i]) : b->dn[g];
        } else {
            slot = slot_of_link(b, l->links[i]);
        }
        push_hop(sys, slot, mult);
        count++;
        if (!from_gpu && dst->kind == CS_DEV_GPU && dst->gpu != NULL && dst->gpu->sm < 80) {
            int rev;
            if (src->kind == CS_DEV_NVSWITCH) {
                int g = gpu_index(sys, lk->dst);
                rev = g >= 0 && b->up[g] >= 0 ? b->up[g] : slot_of_link(b, lk->reverse);
            } else {
                rev = slot_of_link(b, lk->reverse);
            }
            push_hop(sys, rev, mult / 8.0);
        }
    }
    return count;
}

/* The bottleneck of the main hops (not the reverse charges). */
static double hops_bw(build_t *b, int off, int n)
{
    double bw = INFINITY;
    for (int i = off; i < off + n; i++) {
        const cs_hop_t *h = &g_array_index(b->sys->hops, cs_hop_t, i);
        if (h->mult < 1.0)
            continue;
        bw = MIN(bw, slot_cap0(b, h->slot));
    }
    return isfinite(bw) ? bw : CS_LOC_BW;
}

static void set_spath(build_t *b, cs_spath_t *sp, const lpath_t *l, gboolean from_gpu,
                      int pre_slot, int post_slot)
{
    cs_sys_t *sys = b->sys;
    sp->type = l->type;
    sp->off = (int)sys->hops->len;
    int count = 0;
    if (l->type >= CS_PATH_DIS) {
        sp->n = 0;
        sp->nhops = 0;
        sp->bw = 0;
        return;
    }
    if (pre_slot >= 0) {
        push_hop(sys, pre_slot, 1.0);
        count++;
    }
    count += emit_links(b, l, from_gpu);
    if (post_slot >= 0) {
        push_hop(sys, post_slot, 1.0);
        count++;
    }
    sp->n = (int)sys->hops->len - sp->off;
    sp->nhops = count;
    sp->bw = l->n == 0 && pre_slot < 0 && post_slot < 0 ? CS_LOC_BW : hops_bw(b, sp->off, sp->n);
}

/* The CPU NCCL calls local to a GPU (paths.cc ncclGetLocalCpu). */
static int local_cpu(const cs_sys_t *sys, int g)
{
    return cs_topo_node_cpu_of(sys->t, sys->gpu_dev[g]);
}

/* Raw GPU <-> network device path: through PCIe to the NIC, or for the
 * loopback interface to the CPU the NIC node hangs off. */
static void raw_net_path(const cs_sys_t *sys, int g, int n, gboolean to_net, lpath_t *l)
{
    const cs_netdev_t *nd = &sys->nets[n];
    int gd = sys->gpu_dev[g];
    int other = nd->dev >= 0 ? nd->dev : local_cpu(sys, 0);
    if (other < 0) {
        l->type = CS_PATH_DIS;
        l->n = 0;
        l->bw = 0;
        return;
    }
    if (to_net)
        lpath_intra(sys, gd, other, l);
    else
        lpath_intra(sys, other, gd, l);
    if (l->type < CS_PATH_DIS)
        l->bw = MIN(l->bw, nd->speed);
}

/* paths.cc ncclTopoCheckGdr (read = 0): NIC and GPU support it and the
 * distance (the PXN relay's, P2C counted as C2C) is within
 * NCCL_NET_GDR_LEVEL (default PXB). */
static gboolean check_gdr(const cs_sys_t *sys, int g, int n, const lpath_t *raw_peer, int type)
{
    if (!sys->nets[n].gdr || !sys->t->devs[sys->gpu_dev[g]].gdr)
        return FALSE;
    int level = sys->s->net_gdr_level >= 0 ? sys->s->net_gdr_level : CS_PATH_PXB;
    int distance = type;
    if (distance == CS_PATH_PXN && raw_peer != NULL)
        distance = raw_peer->type;
    /* paths.cc ncclTopoCheckGdr: NCCL_NET_GDR_C2C (default 1) takes a
     * GPU that reaches the NIC through its CPU over C2C as C2C-close; 0
     * leaves it the P2C path, beyond the default level */
    if (distance == CS_PATH_P2C && sys->s->net_gdr_c2c != 0)
        distance = CS_PATH_C2C;
    return distance <= level;
}

/* topo.cc ncclTopoGetLocal: the best paths (most bandwidth, then lowest
 * type) from one device to a set; returns the count and the type. */
static int best_set(const cs_spath_t *paths, int stride, int count, int *out, int *type_p)
{
    double max_bw = 0;
    int min_type = CS_PATH_DIS, n = 0;
    for (int i = 0; i < count; i++) {
        const cs_spath_t *p = &paths[i * stride];
        if (p->bw > max_bw || (p->bw == max_bw && p->type < min_type)) {
            max_bw = p->bw;
            min_type = p->type;
            n = 0;
        }
        if (p->bw == max_bw && p->type == min_type)
            out[n++] = i;
    }
    if (type_p != NULL)
        *type_p = min_type;
    return n;
}

static gboolean is_pow2(int v)
{
    return (v & (v - 1)) == 0;
}

/* topo.h mirrorBits */
static int mirror_bits(int val, int pow2)
{
    int m = 0;
    for (int b = 1, mb = pow2 >> 1; b < pow2; b <<= 1, mb >>= 1)
        if (val & b)
            m |= mb;
    return m;
}

static int local_net_compute(const cs_sys_t *sys, int g, int channel)
{
    int cnt = sys->gpu_nnets[g];
    if (cnt == 0)
        return -1;
    const int *local = sys->gpu_nets[g];
    /* NCCL_NETDEVS_POLICY=AUTO: nets per GPU = ceil(local nets / GPUs
     * sharing the first of them). */
    int *gpus = g_newa(int, sys->ngpus);
    int ngl = best_set(sys->n2g + local[0] * sys->ngpus, 1, sys->ngpus, gpus, NULL);
    int per_gpu = (cnt + MAX(ngl, 1) - 1) / MAX(ngl, 1);
    int net = sys->gpu_local[g];
    if (is_pow2(cnt))
        net = mirror_bits(net, cnt);
    net += channel % MAX(per_gpu, 1);
    return local[net % cnt];
}

int cs_sys_local_net(const cs_sys_t *sys, int g, int channel)
{
    if (sys->local_net != NULL)
        return sys->local_net[g * CS_MAXCHANNELS + channel % CS_MAXCHANNELS];
    return local_net_compute(sys, g, channel);
}

/* topo.cc ncclTopoGetLocalGpu */
static int net_local_gpu(const cs_sys_t *sys, int n)
{
    int *gpus = g_newa(int, sys->ngpus);
    int cnt = best_set(sys->n2g + n * sys->ngpus, 1, sys->ngpus, gpus, NULL);
    for (int c = 0; c < CS_MAXCHANNELS; c++)
        for (int i = 0; i < cnt; i++)
            if (cs_sys_local_net(sys, gpus[i], c) == n)
                return gpus[i];
    return -1;
}

static void compute_local_nets(cs_sys_t *sys)
{
    int G = sys->ngpus, N = sys->nnets;
    for (int g = 0; g < G; g++) {
        g_free(sys->gpu_nets[g]);
        sys->gpu_nets[g] = g_new0(int, MAX(N, 1));
        sys->gpu_nnets[g] = N > 0 ? best_set(sys->g2n + g * N, 1, N, sys->gpu_nets[g], NULL) : 0;
    }
    g_clear_pointer(&sys->local_net, g_free);
    for (int n = 0; n < N; n++)
        sys->net_local_gpu[n] = net_local_gpu(sys, n);
    int *cache = g_new(int, G * CS_MAXCHANNELS);
    for (int g = 0; g < G; g++)
        for (int c = 0; c < CS_MAXCHANNELS; c++)
            cache[g * CS_MAXCHANNELS + c] = local_net_compute(sys, g, c);
    sys->local_net = cache;
}

/* The order in which NCCL's topology lists the GPUs (the GPU node
 * indices, which its search tries in order and its fallback ring follows).
 * topo.cc ncclTopoGetSystem (v2.28.9): each rank's XML holds its own GPU
 * (ncclTopoFillGpu: the PCI path up to its CPU, each node created where
 * first needed) and then every NIC (ncclTopoProcessNet, in the network
 * plugin's order); the host's XMLs are fused in local rank order
 * (xml.cc ncclTopoFuseXml: a node not yet present is appended under its
 * parent) and ncclTopoGetSystemFromXml numbers the GPUs depth first. So a
 * CPU, switch or GPU takes its place where it first appears in: rank 0's
 * GPU path, the NICs' paths, the other ranks' GPU paths. On most machines
 * that is the rank order (CUDA's PCI order follows the CPUs); on the AMD
 * Turin NPS=4 node of rtxpro6000bw-x8-* (one GPU per NUMA node, the NICs
 * on NUMA nodes 3, 5 and 0) NCCL lists them 0 2 4 3 1 5 6 7, the ring its
 * log prints after "falling back to simple order". The NICs are the
 * node's in the topology's order (no NCCL_IB_HCA filter); a GPU without a
 * path to a CPU leaves the rank order. Output: sys->topo_order. */
enum { ORDER_MAXCHAIN = 16 };   /* CPU, switches, GPU: deeper PCIe trees keep the rank order */

typedef struct {
    int local;
    int n;
    int key[ORDER_MAXCHAIN];   /* first-appearance index of each node of its path, CPU first */
} order_key_t;

static int order_key_cmp(const void *a, const void *b)
{
    const order_key_t *x = a, *y = b;
    for (int i = 0; i < MIN(x->n, y->n); i++)
        if (x->key[i] != y->key[i])
            return x->key[i] < y->key[i] ? -1 : 1;
    return x->n != y->n ? (x->n < y->n ? -1 : 1) : x->local - y->local;
}

static void topo_order_compute(cs_sys_t *sys, const cs_topo_t *t, const int *gpu_devs, int G)
{
    for (int g = 0; g < G; g++)
        sys->topo_order[g] = g;
    int node = t->devs[gpu_devs[0]].node;
    int nn = cs_topo_node_nics(t, node, NULL, 0);
    g_autofree int *nics = g_new(int, MAX(nn, 1));
    nn = cs_topo_node_nics(t, node, nics, nn);
    g_autoptr(GHashTable) first = g_hash_table_new(g_direct_hash, g_direct_equal);
    g_autofree order_key_t *keys = g_new0(order_key_t, G);
    /* the devices whose paths build the XML, in the order they do: rank 0's
     * GPU, the NICs, the other GPUs (local index, -1 for a NIC) */
    for (int i = 0; i < G + nn; i++) {
        int local = i == 0 ? 0 : i <= nn ? -1 : i - nn;
        int dev = local >= 0 ? gpu_devs[local] : nics[i - 1];
        int chain[ORDER_MAXCHAIN];
        int n = cs_topo_pci_chain(t, dev, chain, ORDER_MAXCHAIN);
        if (n == 0 && local >= 0)
            return;   /* no CPU above a GPU: keep the rank order */
        for (int k = 0; k < n; k++) {
            gpointer at;
            if (!g_hash_table_lookup_extended(first, GINT_TO_POINTER(chain[k]), NULL, &at)) {
                at = GINT_TO_POINTER(g_hash_table_size(first));
                g_hash_table_insert(first, GINT_TO_POINTER(chain[k]), at);
            }
            if (local >= 0)
                keys[local].key[k] = GPOINTER_TO_INT(at);
        }
        if (local >= 0) {
            keys[local].local = local;
            keys[local].n = n;
        }
    }
    qsort(keys, G, sizeof *keys, order_key_cmp);
    for (int g = 0; g < G; g++)
        sys->topo_order[g] = keys[g].local;
}

cs_sys_t *cs_sys_new(const cs_topo_t *t, const cs_nccl_settings_t *s, const int *gpu_devs,
                     int ngpus, int host_gpus, const cs_netsel_t *nets, gboolean inter)
{
    cs_sys_t *sys = g_new0(cs_sys_t, 1);
    int G = ngpus;
    sys->t = t;
    sys->s = s;
    sys->ngpus = G;
    sys->gpu_dev = g_memdup2(gpu_devs, sizeof(int) * G);
    sys->gpu_local = g_new0(int, G);
    sys->topo_order = g_new0(int, G);
    topo_order_compute(sys, t, gpu_devs, G);
    sys->gpu_pci_bw = g_new0(double, G);
    sys->inter = inter;
    sys->nets = nets->devs;
    sys->nnets = nets->n;
    sys->hops = g_array_new(FALSE, FALSE, sizeof(cs_hop_t));
    sys->cc_min = G_MAXINT;
    sys->cc_max = 0;
    int cpu0 = cs_topo_node_cpu_of(t, gpu_devs[0]);
    sys->vendor = cpu0 >= 0 ? t->devs[cpu0].vendor : CS_CPU_OTHER;

    build_t b;
    b.sys = sys;
    b.link_slot = g_hash_table_new(g_direct_hash, g_direct_equal);
    b.cap0 = g_array_new(FALSE, FALSE, sizeof(double));
    b.up = g_new(int, G);
    b.dn = g_new(int, G);
    int N = sys->nnets;
    b.net_in = g_new(int, MAX(N, 1));
    b.net_out = g_new(int, MAX(N, 1));

    double total = 0;
    for (int g = 0; g < G; g++) {
        const cs_device_t *d = &t->devs[gpu_devs[g]];
        sys->gpu_local[g] = d->local;
        sys->cc_min = MIN(sys->cc_min, d->gpu->sm);
        sys->cc_max = MAX(sys->cc_max, d->gpu->sm);
        double up = 0, dn = 0, nvl = 0, pci = 0;
        for (int k = t->adj_off[gpu_devs[g]]; k < t->adj_off[gpu_devs[g] + 1]; k++) {
            const cs_link_t *l = &t->links[t->adj[k]];
            const cs_device_t *r = &t->devs[l->dst];
            if (l->kind == CS_LINK_NVL)
                nvl += l->nccl_bw;
            if (l->kind == CS_LINK_PCI) {
                pci = l->nccl_bw;
                sys->gpu_pci_bw[g] = MIN(l->nccl_bw, t->links[l->reverse].nccl_bw);
            }
            if (l->kind == CS_LINK_NVL && r->kind == CS_DEV_NVSWITCH) {
                up += l->nccl_bw;
                dn += t->links[l->reverse].nccl_bw;
            }
        }
        /* search.cc getTotalBw: NVLink sum, or the PCIe link */
        total = MAX(total, MAX(nvl, pci));
        b.up[g] = up > 0 ? new_slot(&b, up) : -1;
        b.dn[g] = dn > 0 ? new_slot(&b, dn) : -1;
        if (up > 0)
            sys->nvs = TRUE;
    }
    for (int n = 0; n < N; n++) {
        b.net_in[n] = new_slot(&b, nets->devs[n].speed);
        b.net_out[n] = new_slot(&b, nets->devs[n].speed);
    }

    /* GPU -> GPU: through the CPU of the destination when P2P is off
     * (paths.cc: addInterStep(CPU local to g, GPU p -> GPU g)). */
    sys->g2g = g_new0(cs_spath_t, G * G);
    for (int a = 0; a < G; a++) {
        for (int c = 0; c < G; c++) {
            lpath_t l;
            if (a == c) {
                l.type = CS_PATH_LOC;
                l.n = 0;
                l.bw = CS_LOC_BW;
            } else if (cs_sys_p2p(t, s, gpu_devs[a], gpu_devs[c], host_gpus, NULL)) {
                lpath_intra(sys, gpu_devs[a], gpu_devs[c], &l);
            } else {
                int cpu = local_cpu(sys, c);
                lpath_t l1, l2;
                lpath_intra(sys, gpu_devs[a], cpu, &l1);
                lpath_intra(sys, cpu, gpu_devs[c], &l2);
                lpath_concat(&l, &l1, &l2);
            }
            set_spath(&b, &sys->g2g[a * G + c], &l, TRUE, -1, -1);
        }
    }
    /* GPU <-> merged NVS */
    sys->g2s = g_new0(cs_spath_t, G);
    sys->s2g = g_new0(cs_spath_t, G);
    for (int g = 0; g < G; g++) {
        cs_spath_t *u = &sys->g2s[g], *d = &sys->s2g[g];
        if (b.up[g] < 0) {
            u->type = d->type = CS_PATH_DIS;
            continue;
        }
        u->type = d->type = CS_PATH_NVL;
        u->off = (int)sys->hops->len;
        push_hop(sys, b.up[g], 1.0);
        u->n = u->nhops = 1;
        u->bw = slot_cap0(&b, b.up[g]);
        d->off = (int)sys->hops->len;
        push_hop(sys, b.dn[g], 1.0);
        if (t->devs[gpu_devs[g]].gpu->sm < 80)
            push_hop(sys, b.up[g], 1.0 / 8.0);
        d->n = (int)sys->hops->len - d->off;
        d->nhops = 1;
        d->bw = slot_cap0(&b, b.dn[g]);
    }

    /* GPU <-> network devices (only "inter" systems keep their NETs:
     * ncclTopoTrimSystem). */
    sys->g2n = g_new0(cs_spath_t, MAX(G * N, 1));
    sys->n2g = g_new0(cs_spath_t, MAX(G * N, 1));
    sys->gpu_nets = g_new0(int *, G);
    sys->gpu_nnets = g_new0(int, G);
    sys->net_local_gpu = g_new0(int, MAX(N, 1));
    sys->net_bw = g_new0(double, MAX(N, 1));
    sys->gdr = g_new0(gboolean, MAX(G * N, 1));
    if (N > 0) {
        lpath_t *raw = g_new(lpath_t, G * N);      /* GPU -> NET */
        lpath_t *rraw = g_new(lpath_t, G * N);     /* NET -> GPU */
        for (int g = 0; g < G; g++)
            for (int n = 0; n < N; n++) {
                raw_net_path(sys, g, n, TRUE, &raw[g * N + n]);
                raw_net_path(sys, g, n, FALSE, &rraw[g * N + n]);
            }
        /* Raw slot paths first, to find each NIC's local GPU. */
        for (int g = 0; g < G; g++)
            for (int n = 0; n < N; n++) {
                set_spath(&b, &sys->g2n[g * N + n], &raw[g * N + n], TRUE, -1, b.net_out[n]);
                set_spath(&b, &sys->n2g[n * G + g], &rraw[g * N + n], FALSE, b.net_in[n], -1);
            }
        compute_local_nets(sys);
        int *peer_of = g_new(int, N);
        for (int n = 0; n < N; n++)
            peer_of[n] = sys->net_local_gpu[n];
        for (int n = 0; n < N; n++) {
            for (int g = 0; g < G; g++) {
                lpath_t up = raw[g * N + n], down = rraw[g * N + n];
                const lpath_t *peer_raw = NULL;
                /* PXN (paths.cc): relay through the NIC's local GPU when it
                 * sits close to the NIC (<= P2C, NCCL_PXN_C2C=1), is our
                 * NVLink peer, and is better placed than we are. GPU -> NIC
                 * direction only. */
                int p = peer_of[n];
                if (!s->pxn_disable && p >= 0 && p != g) {
                    const lpath_t *pr = &raw[p * N + n];
                    const cs_spath_t *pg = &sys->g2g[p * G + g];
                    if (pr->type <= CS_PATH_P2C && pg->type <= CS_PATH_NVL &&
                        (pr->bw > up.bw || up.type > CS_PATH_PXN)) {
                        lpath_t gp;
                        lpath_intra(sys, gpu_devs[g], gpu_devs[p], &gp);
                        lpath_concat(&up, &gp, pr);
                        up.type = CS_PATH_PXN;
                        peer_raw = pr;
                    }
                }
                /* No GPUDirect RDMA: through the GPU's CPU, both ways. */
                gboolean gdr = check_gdr(sys, g, n, peer_raw, up.type);
                sys->gdr[g * N + n] = gdr;
                if (up.type < CS_PATH_PHB && !gdr) {
                    int cpu = local_cpu(sys, g);
                    const cs_netdev_t *nd = &sys->nets[n];
                    if (cpu >= 0 && nd->dev >= 0) {
                        lpath_t a1, a2;
                        lpath_intra(sys, gpu_devs[g], cpu, &a1);
                        lpath_intra(sys, cpu, nd->dev, &a2);
                        lpath_concat(&up, &a1, &a2);
                        up.bw = MIN(up.bw, nd->speed);
                        lpath_intra(sys, nd->dev, cpu, &a1);
                        lpath_intra(sys, cpu, gpu_devs[g], &a2);
                        lpath_concat(&down, &a1, &a2);
                        down.bw = MIN(down.bw, nd->speed);
                    }
                }
                set_spath(&b, &sys->g2n[g * N + n], &up, TRUE, -1, b.net_out[n]);
                set_spath(&b, &sys->n2g[n * G + g], &down, FALSE, b.net_in[n], -1);
            }
        }
        g_free(peer_of);
        g_free(raw);
        g_free(rraw);
        compute_local_nets(sys);
        for (int n = 0; n < N; n++)
            sys->net_bw[n] = nets->devs[n].speed;
    }

    /* search.cc ncclTopoSearchInit */
    if (!inter && G == 1) {
        sys->max_bw = sys->total_bw = CS_LOC_BW;
    } else {
        double max_bw = 0;
        for (int g = 0; g < G; g++) {
            if (inter) {
                for (int n = 0; n < N; n++)
                    if (sys->g2n[g * N + n].nhops > 0)
                        max_bw = MAX(max_bw, sys->g2n[g * N + n].bw);
            } else {
                for (int c = 0; c < G; c++)
                    if (c != g && sys->g2g[g * G + c].nhops > 0)
                        max_bw = MAX(max_bw, sys->g2g[g * G + c].bw);
            }
        }
        sys->max_bw = max_bw;
        sys->total_bw = total;
    }

    /* paths.cc ncclTopoSplitNvLink: exactly two NVLink islands. */
    {
        int *dom = g_new(int, G), *cnt = g_new0(int, G), ndom = 0;
        for (int g = 0; g < G; g++)
            dom[g] = g;
        for (int g = 0; g < G; g++)
            for (int p = g + 1; p < G; p++)
                if (sys->g2g[g * G + p].type == CS_PATH_NVL)
                    dom[p] = dom[g];
        for (int g = 0; g < G; g++)
            cnt[dom[g]]++;
        for (int g = 0; g < G; g++)
            if (cnt[g] > 1)
                ndom++;
        sys->split_nvlink = ndom == 2;
        g_free(dom);
        g_free(cnt);
    }

    sys->nslots = (int)b.cap0->len;
    sys->cap = (double *)(void *)g_array_free(b.cap0, FALSE);
    sys->used = g_new0(guint64, G);
    g_hash_table_destroy(b.link_slot);
    g_free(b.up);
    g_free(b.dn);
    g_free(b.net_in);
    g_free(b.net_out);
    return sys;
}

void cs_sys_free(cs_sys_t *sys)
{
    if (sys == NULL)
        return;
    for (int g = 0; g < sys->ngpus; g++)
        g_free(sys->gpu_nets[g]);
    g_free(sys->gpu_nets);
    g_free(sys->gpu_nnets);
    g_free(sys->net_local_gpu);
    g_free(sys->net_bw);
    g_free(sys->gdr);
    g_free(sys->local_net);
    if (sys->net_lists != NULL)
        for (int i = 0; i < (sys->ngpus + 1) * (CS_PATH_DIS + 1); i++)
            g_free(sys->net_lists[i]);
    g_free(sys->net_lists);
    g_free(sys->net_list_len);
    g_free(sys->g2g);
    g_free(sys->g2n);
    g_free(sys->n2g);
    g_free(sys->g2s);
    g_free(sys->s2g);
    g_free(sys->gpu_dev);
    g_free(sys->gpu_local);
    g_free(sys->topo_order);
    g_free(sys->gpu_pci_bw);
    g_free(sys->cap);
    g_free(sys->used);
    g_array_free(sys->hops, TRUE);
    g_free(sys);
}

/* ---- graphs ------------------------------------------------------------ */

void cs_graph_init(cs_graph_t *g, int id, int pattern, int min_ch, int max_ch, int ngpus)
{
    memset(g, 0, sizeof *g);
    g->id = id;
    g->pattern = pattern;
    g->min_ch = min_ch;
    g->max_ch = max_ch;
    g->ngpus = ngpus;
    g->intra = g_new0(int, CS_MAXCHANNELS * MAX(ngpus, 1));
}

void cs_graph_clear(cs_graph_t *g)
{
    g_clear_pointer(&g->intra, g_free);
}

void cs_graph_copy(cs_graph_t *dst, const cs_graph_t *src)
{
    int *keep = dst->intra;
    g_assert(dst->ngpus == src->ngpus);
    *dst = *src;
    dst->intra = keep;
    memcpy(dst->intra, src->intra, sizeof(int) * CS_MAXCHANNELS * src->ngpus);
}

/* ---- the search (search.cc) -------------------------------------------- */

enum { K_NONE = -1, K_GPU = 0, K_NVS = 2, K_NET = 5 };
enum { FORCED_NONE = 0, FORCED_PCI = 1, FORCED_REPLAY = 2 };

#define SEARCH_GLOBAL_TIMEOUT (1 << 19)
#define SEARCH_TIMEOUT (1 << 14)
#define SEARCH_TIMEOUT_TREE (1 << 14)
#define SEARCH_TIMEOUT_SAMECHANNELS (1 << 8)

typedef struct {
    int g, start, intra_hops, intra_bw, inter_hops, inter_pci_bw, inter_bw;
} score_t;

typedef struct {
    cs_sys_t *sys;
    cs_graph_t *tmp, *save;
    int *time;
    gint64 *cap;             /* residual capacity per slot, 1/1000 GB/s (search.cc SUB_ROUND) */
    int **next;              /* per recursion depth: candidate GPUs */
    score_t *scores;         /* scratch for next_gpus */
    int *nets;               /* scratch for select_nets */
} search_t;

static const cs_spath_t *path_of(const cs_sys_t *sys, int k1, int i1, int k2, int i2)
{
    int G = sys->ngpus, N = sys->nnets;
    if (k1 == K_GPU && k2 == K_GPU)
        return &sys->g2g[i1 * G + i2];
    if (k1 == K_GPU && k2 == K_NET)
        return &sys->g2n[i1 * N + i2];
    if (k1 == K_NET && k2 == K_GPU)
        return &sys->n2g[i1 * G + i2];
    if (k1 == K_NVS && k2 == K_GPU)
        return &sys->s2g[i2];
    if (k1 == K_GPU && k2 == K_NVS)
        return &sys->g2s[i1];
    g_assert_not_reached();
    return NULL;
}

static gboolean is_tree(int pattern)
{
    return pattern == CS_PATTERN_BALANCED_TREE || pattern == CS_PATTERN_TREE ||
           pattern == CS_PATTERN_SPLIT_TREE;
}

/* Takes mult x the graph's bandwidth off every link of the path, or gives
 * it back for mult < 0 (search.cc ncclTopoFollowPath / followPath).
 * FALSE, with nothing taken, when the path is not allowed or does not fit. */
static gboolean follow(search_t *se, int k1, int i1, int k2, int i2, double mult)
{
    if (k1 == K_NONE)
        return TRUE;
    cs_sys_t *sys = se->sys;
    cs_graph_t *g = se->tmp;
    const cs_spath_t *p = path_of(sys, k1, i1, k2, i2);
    gboolean intra = (k1 == K_GPU || k1 == K_NVS) && (k2 == K_GPU || k2 == K_NVS);
    double bw = intra ? g->bw_intra : g->bw_inter;
    int type = intra ? g->type_intra : g->type_inter;
    if (p->type >= CS_PATH_DIS)
        return FALSE;
    if (mult > 0 && p->type > type)
        return FALSE;
    if (mult > 0 && is_tree(g->pattern)) {
        const cs_spath_t *rev = path_of(sys, k2, i2, k1, i1);
        if (rev->type > type)
            return FALSE;
    }
    bw *= mult;
    const cs_hop_t *hops = &g_array_index(sys->hops, cs_hop_t, p->off);
    gint64 *cap = se->cap;
    gint64 unit = llround(bw * 1000.0);
    int i;
    for (i = 0; i < p->n; i++) {
        gint64 need = hops[i].mult == 1.0 ? unit : llround(bw * hops[i].mult * 1000.0);
        if (need > 0 && cap[hops[i].slot] < need)
            break;
        cap[hops[i].slot] -= need;
    }
    if (i < p->n) {
        while (i-- > 0)
            cap[hops[i].slot] += hops[i].mult == 1.0 ? unit : llround(bw * hops[i].mult * 1000.0);
        return FALSE;
    }
    g->nhops += (int)(mult * p->nhops);
    return TRUE;
}

static void search_rec(search_t *se);
static void rec_gpu(search_t *se, int g, int step, int back_net, int back_first, int forced);

/* search.cc ncclTopoCompareGraphs */
static gboolean better(const cs_sys_t *sys, const cs_graph_t *g, const cs_graph_t *ref)
{
    if (g->nch < g->min_ch)
        return FALSE;
    if (g->pattern == CS_PATTERN_NVLS) {
        if (g->nch > ref->nch && g->nch <= sys->ngpus)
            return TRUE;
        return g->nch * g->bw_inter > ref->nch * ref->bw_inter;
    }
    if (g->nch * g->bw_intra > ref->nch * ref->bw_intra)
        return TRUE;
    if (g->nch * g->bw_intra < ref->nch * ref->bw_intra)
        return FALSE;
    return g->pattern == ref->pattern && g->cross_nic == ref->cross_nic && g->nhops < ref->nhops;
}

static void try_gpu(search_t *se, int step, int back_net, int back_first, int forced, int k,
                    int idx, int g)
{
    cs_sys_t *sys = se->sys;
    guint64 flag = G_GUINT64_CONSTANT(1) << se->tmp->nch;
    if (!follow(se, k, idx, K_GPU, g, 1))
        return;
    sys->used[g] ^= flag;
    rec_gpu(se, g, step, back_net, back_first, forced);
    sys->used[g] ^= flag;
    follow(se, k, idx, K_GPU, g, -1);
}

static int cmp_score(const void *a, const void *b)
{
    const score_t *s1 = a, *s2 = b;
    int d;
    if ((d = s2->inter_bw - s1->inter_bw))
        return d;
    if ((d = s2->inter_pci_bw - s1->inter_pci_bw))
        return d;
    if ((d = s1->inter_hops - s2->inter_hops))
        return d;
    if ((d = s2->intra_bw - s1->intra_bw))
        return d;
    if ((d = s1->intra_hops - s2->intra_hops))
        return d;
    return s1->start - s2->start;
}

/* A candidate next GPU of ncclTopoSearchNextGpuSort: a path to it, not
 * disconnected, not yet in this channel. */
static gboolean next_candidate(const search_t *se, int g, int c)
{
    const cs_sys_t *sys = se->sys;
    int G = sys->ngpus;
    const cs_spath_t *p = &sys->g2g[g * G + c];
    guint64 flag = G_GUINT64_CONSTANT(1) << se->tmp->nch;
    return c != g && p->nhops != 0 && p->type < CS_PATH_DIS && !(sys->used[c] & flag);
}

/* search.cc ncclTopoSearchNextGpuSort with NVSwitches: they prefer few
 * peers, so only the index neighbours that are candidates are kept, each
 * moved to the front of the sorted list in turn: the sort's order never
 * shows, and this finds the same list without it (an NVL72 domain's
 * search makes this call about a million times). */
static int next_nvs_neighbours(const search_t *se, int g, int *next)
{
    int G = se->sys->ngpus;
    int prev = (g - 1 + G) % G, nxt = (g + 1) % G;
    int first[2], nfirst;
    if (se->tmp->pattern == CS_PATTERN_RING) {
        first[0] = nxt;
        first[1] = prev;
        nfirst = 2;
    } else if (se->tmp->pattern == CS_PATTERN_SPLIT_TREE || se->tmp->pattern == CS_PATTERN_BALANCED_TREE) {
        first[0] = prev;
        first[1] = nxt;
        nfirst = 2;
    } else {
        first[0] = nxt;
        nfirst = 1;
    }
    if (nxt == prev && nfirst == 2)
        nfirst = 1;
    int count = 0;
    for (int f = 0; f < nfirst; f++) {
        if (!next_candidate(se, g, first[f]))
            continue;
        for (int i = count; i > 0; i--)
            next[i] = next[i - 1];
        next[0] = first[f];
        count++;
    }
    return count;
}

/* search.cc ncclTopoSearchNextGpuSort: candidates for the next GPU. */
static int next_gpus(search_t *se, int g, int sort_net, int *next)
{
    cs_sys_t *sys = se->sys;
    cs_graph_t *tmp = se->tmp;
    int G = sys->ngpus;
    score_t *sc = se->scores;
    int net = sort_net ? tmp->inter[tmp->nch * 2] : -1;
    int count = 0;
    if (sys->nvs)   /* the sort's order would not show */
        return next_nvs_neighbours(se, g, next);
    for (int i = 1; i < G; i++) {
        int c = (g + i) % G;
        if (!next_candidate(se, g, c))
            continue;
        const cs_spath_t *p = &sys->g2g[g * G + c];
        score_t s = { c, i, p->nhops, (int)p->bw, 0, 0, 0 };
        if (net >= 0) {
            const cs_spath_t *np = &sys->n2g[net * G + c];
            s.inter_hops = np->nhops;
            s.inter_pci_bw = (int)sys->gpu_pci_bw[c];
            s.inter_bw = (int)np->bw;
        }
        /* insertion sort: the lists are short and the order is total */
        int k = count++;
        while (k > 0 && cmp_score(&sc[k - 1], &s) > 0) {
            sc[k] = sc[k - 1];
            k--;
        }
        sc[k] = s;
    }
    gboolean same = TRUE;
    for (int i = 1; i < count; i++)
        if (sc[i].intra_bw != sc[0].intra_bw || sc[i].intra_hops != sc[0].intra_hops)
            same = FALSE;
    for (int i = 0; i < count; i++)
        next[i] = sort_net == -1 && same ? sc[count - 1 - i].g : sc[i].g;

    return count;
}

/* search.cc ncclTopoSelectNets: preferred NICs of the GPU(s), channel
 * first, then every other NIC whose path type is within type_inter. */
static int select_nets_compute(const cs_sys_t *sys, int type_inter, int gpu, int *nets)
{
    int G = sys->ngpus, N = sys->nnets, count = 0;
    for (int g = 0; g < G; g++) {
        if (gpu != -1 && gpu != g)
            continue;
        int local[CS_MAXCHANNELS], nl = 0;
        for (int c = 0; c < CS_MAXCHANNELS; c++) {
            int n = cs_sys_local_net(sys, g, c);
            if (n < 0)
                break;
            if (nl > 0 && n == local[0])
                break;
            local[nl++] = n;
        }
        for (int i = 0; i < nl; i++) {
            int f;
            for (f = 0; f < count && nets[f] != local[i]; f++)
                ;
            if (f == count)
                nets[count++] = local[i];
        }
    }
    for (int t = 0; t <= type_inter; t++) {
        for (int g = 0; g < G; g++) {
            if (gpu != -1 && gpu != g)
                continue;
            for (int n = 0; n < N && n < CS_MAXCHANNELS; n++) {
                if (sys->g2n[g * N + n].type != t)
                    continue;
                int f;
                for (f = 0; f < count && nets[f] != n; f++)
                    ;
                if (f == count)
                    nets[count++] = n;
            }
        }
    }
    return count;
}

/* The same lists come back again and again during a search: cache them. */
static int select_nets(cs_sys_t *sys, int type_inter, int gpu, int *nets)
{
    int slots = (sys->ngpus + 1) * (CS_PATH_DIS + 1);
    if (sys->net_lists == NULL) {
        sys->net_lists = g_new0(int *, slots);
        sys->net_list_len = g_new0(int, slots);
    }
    int k = (gpu + 1) * (CS_PATH_DIS + 1) + CLAMP(type_inter, 0, CS_PATH_DIS);
    if (sys->net_lists[k] == NULL) {
        sys->net_lists[k] = g_new(int, MAX(sys->nnets, 1));
        sys->net_list_len[k] = select_nets_compute(sys, type_inter, gpu, sys->net_lists[k]);
    }
    memcpy(nets, sys->net_lists[k], sizeof(int) * sys->net_list_len[k]);
    return sys->net_list_len[k];
}

/* search.cc ncclTopoSearchCheckNet (each of our net devices is its own
 * ASIC and port). */
static gboolean check_net(const cs_graph_t *g, int start, int n, int step)
{
    if (g->pattern == CS_PATTERN_TREE && n != start)
        return FALSE;
    if (g->pattern == CS_PATTERN_RING && g->cross_nic == 2) {
        if ((g->nch & 1) && n != g->inter[(g->nch - 1) * 2])
            return FALSE;
    } else if (g->cross_nic == 0) {
        if (n != start)
            return FALSE;
    }
    if (g->pattern == CS_PATTERN_BALANCED_TREE && step != 0 && n != g->inter[g->nch * 2 + 1])
        return FALSE;
    return TRUE;
}

/* search.cc ncclTopoSearchTryNvls: every GPU pulls from and pushes to the
 * NVSwitch, the head twice. */
static void try_nvls(search_t *se, int head)
{
    int G = se->sys->ngpus;
    int d0 = 0, d1 = 0;
    gboolean ok = TRUE;
    for (; d0 < G; d0++)
        if (!follow(se, K_NVS, 0, K_GPU, d0, d0 == head ? 2 : 1)) {
            ok = FALSE;
            break;
        }
    if (ok) {
        for (; d1 < G; d1++)
            if (!follow(se, K_GPU, d1, K_NVS, 0, d1 == head ? 2 : 1)) {
                ok = FALSE;
                break;
            }
        if (ok)
            rec_gpu(se, -1, G, -1, -1, FORCED_NONE);
        while (d1-- > 0)
            follow(se, K_GPU, d1, K_NVS, 0, d1 == head ? -2 : -1);
    }
    while (d0-- > 0)
        follow(se, K_NVS, 0, K_GPU, d0, d0 == head ? -2 : -1);
}

/* search.cc ncclTopoSearchTryCollnetDirect: the head g reaches every
 * GPU and every GPU reaches it, each path taking 1/(G-1) of bwIntra;
 * then the channel lists the other GPUs in index order after the head. */
static void try_collnet_direct(search_t *se, int head)
{
    int G = se->sys->ngpus;
    double mul = 1.0 / (G - 1);
    int fwd = 0, bwd = 0;
    gboolean ok = TRUE;
    for (; fwd < G; fwd++)
        if (!follow(se, K_GPU, head, K_GPU, fwd, mul)) {
            ok = FALSE;
            break;
        }
    if (ok) {
        for (; bwd < G; bwd++)
            if (!follow(se, K_GPU, bwd, K_GPU, head, mul)) {
                ok = FALSE;
                break;
            }
        if (ok) {
            cs_graph_t *tmp = se->tmp;
            int step = 1;
            for (int i = 0; i < G; i++)
                if (i != head)
                    tmp->intra[tmp->nch * G + step++] = i;
            rec_gpu(se, -1, G, -1, -1, FORCED_NONE);
        }
        while (bwd-- > 0)
            follow(se, K_GPU, bwd, K_GPU, head, -mul);
    }
    while (fwd-- > 0)
        follow(se, K_GPU, head, K_GPU, fwd, -mul);
}

/* Scratch lists per recursion depth (channel x step), two kinds: next
 * GPUs and NICs. Allocated once per depth and search. */
static int *depth_buf(search_t *se, int depth, int kind)
{
    int i = depth * 2 + kind;
    if (se->next[i] == NULL)
        se->next[i] = g_new(int, MAX(se->sys->ngpus, se->sys->nnets) + 1);
    return se->next[i];
}

static void rec_gpu(search_t *se, int g, int step, int back_net, int back_first, int forced)
{
    cs_sys_t *sys = se->sys;
    cs_graph_t *tmp = se->tmp;
    int G = sys->ngpus;
    if (*se->time <= 0)
        return;
    (*se->time)--;

    if (step == G) {
        tmp->nch++;
        if (better(sys, tmp, se->save)) {
            cs_graph_copy(se->save, tmp);
            if (tmp->nch == tmp->max_ch)
                *se->time = -1;
        }
        if (tmp->nch < tmp->max_ch)
            search_rec(se);
        tmp->nch--;
        return;
    }
    tmp->intra[tmp->nch * G + step] = g;
    if (step == back_net) {
        if (!sys->inter)
            return;
        int start = tmp->inter[tmp->nch * 2];
        int *nets = depth_buf(se, tmp->nch * G + step, 1);
        int nn = select_nets(sys, tmp->type_inter, g, nets);
        for (int i = 0; i < nn; i++) {
            int n = nets[i];
            if (!check_net(tmp, start, n, step))
                continue;
            int next_back = -1;
            double save_bw = tmp->bw_inter;
            if (tmp->pattern == CS_PATTERN_BALANCED_TREE) {
                /* half the NIC bandwidth on each of the first two GPUs */
                if (step == 0)
                    next_back = 1;
                tmp->bw_inter /= 2;
            }
            gboolean ok = follow(se, K_GPU, g, K_NET, n, 1);
            tmp->bw_inter = save_bw;
            if (ok) {
                tmp->inter[tmp->nch * 2 + 1] = n;
                rec_gpu(se, g, step, next_back, back_first, forced);
                if (tmp->pattern == CS_PATTERN_BALANCED_TREE)
                    tmp->bw_inter /= 2;
                follow(se, K_GPU, g, K_NET, n, -1);
                tmp->bw_inter = save_bw;
            }
        }
    } else if (tmp->pattern == CS_PATTERN_NVLS) {
        try_nvls(se, g);
    } else if (tmp->pattern == CS_PATTERN_COLLNET_DIRECT) {
        try_collnet_direct(se, g);
    } else if (step < G - 1) {
        int *next = depth_buf(se, tmp->nch * G + step, 0);
        int count;
        if (forced == FORCED_PCI) {
            next[0] = step + 1;
            count = 1;
        } else if (forced == FORCED_REPLAY) {
            next[0] = tmp->intra[(tmp->nch - 1) * G + step + 1];
            count = 1;
        } else {
            int sort_net = back_net == -1 ? 0 : back_net == step + 1 ? 1 : -1;
            count = next_gpus(se, g, sort_net, next);
        }
        for (int i = 0; i < count; i++)
            try_gpu(se, step + 1, back_net, back_first, forced, K_GPU, g, next[i]);
    } else if (step == back_first) {
        int first = tmp->intra[tmp->nch * G];
        if (follow(se, K_GPU, g, K_GPU, first, 1)) {
            rec_gpu(se, first, step + 1, back_net, -1, forced);
            follow(se, K_GPU, g, K_GPU, first, -1);
        }
    } else {
        rec_gpu(se, g, G, -1, -1, forced);
    }
}

static void rec_net(search_t *se, int back_net, int back_first)
{
    cs_sys_t *sys = se->sys;
    cs_graph_t *tmp = se->tmp;
    int G = sys->ngpus;
    int bw = (int)tmp->bw_inter;   /* search.cc keeps it in an int */
    int *nets = depth_buf(se, tmp->nch * G + G, 1);
    int nn = select_nets(sys, tmp->type_inter, -1, nets);
    gboolean found = FALSE;
    /* NVLS and CollNet Direct only look for NIC:GPU pairs, the heads */
    gboolean heads = tmp->pattern == CS_PATTERN_NVLS || tmp->pattern == CS_PATTERN_COLLNET_DIRECT;
    for (int i = 0; i < nn; i++) {
        if (heads && found)
            break;
        int n = nets[(tmp->nch + i) % nn];
        if (sys->net_bw[n] < bw)
            continue;
        if (tmp->pattern == CS_PATTERN_RING && tmp->cross_nic == 2 && (tmp->nch & 1) &&
            n != tmp->inter[(tmp->nch - 1) * 2 + 1])
            continue;
        tmp->inter[tmp->nch * 2] = n;
        tmp->lat_inter = 0;   /* net latency property: 0 for IB and Socket */
        sys->net_bw[n] -= bw;
        if (heads) {
            if (tmp->nch < nn) {
                int gpu = sys->net_local_gpu[n];
                if (gpu != -1) {
                    gboolean dup = FALSE;
                    for (int c = 0; c < tmp->nch; c++)
                        if (tmp->intra[c * G] == gpu)
                            dup = TRUE;
                    if (!dup) {
                        try_gpu(se, 0, back_net, back_first, FORCED_NONE, K_NET, n, gpu);
                        found = TRUE;
                    }
                }
            }
        } else if (tmp->nch > 0 && tmp->same_channels) {
            try_gpu(se, 0, back_net, back_first, FORCED_REPLAY, K_NET, n,
                    tmp->intra[(tmp->nch - 1) * G]);
        } else {
            if (tmp->nch == 0 && !sys->nvs) {
                /* the PCI order first, with its own small budget */
                int t = 1 << 10, *keep = se->time;
                se->time = &t;
                try_gpu(se, 0, back_net, back_first, FORCED_PCI, K_NET, n, 0);
                se->time = keep;
                if (t == -1)
                    *se->time = -1;
            }
            int lg = sys->net_local_gpu[n];
            if (lg != -1)
                try_gpu(se, 0, back_net, back_first, FORCED_NONE, K_NET, n, lg);
            int *locals = g_new(int, G), type;
            int nl = best_set(sys->n2g + n * G, 1, G, locals, &type);
            if (type != CS_PATH_DIS)
                for (int k = 0; k < nl; k++)
                    if (locals[k] != lg)
                        try_gpu(se, 0, back_net, back_first, FORCED_NONE, K_NET, n, locals[k]);
            g_free(locals);
        }
        sys->net_bw[n] += bw;
    }
}

static void search_rec(search_t *se)
{
    cs_sys_t *sys = se->sys;
    cs_graph_t *tmp = se->tmp;
    int G = sys->ngpus;
    /* search.cc ncclTopoSearchParams */
    int back_net = -1, back_first = -1;
    if (sys->inter) {
        back_net = tmp->pattern == CS_PATTERN_RING ? G - 1 :
                   tmp->pattern == CS_PATTERN_SPLIT_TREE ? 1 : 0;
        rec_net(se, back_net, back_first);
        return;
    }
    if (tmp->pattern == CS_PATTERN_RING)
        back_first = G - 1;
    if (tmp->pattern == CS_PATTERN_NVLS) {
        if (tmp->nch < G)
            try_gpu(se, 0, back_net, back_first, FORCED_NONE, K_NONE, -1, tmp->nch);
        return;
    }
    if (tmp->nch == 0)
        try_gpu(se, 0, back_net, back_first, FORCED_PCI, K_NONE, -1, 0);
    else
        try_gpu(se, 0, back_net, back_first, FORCED_REPLAY, K_NONE, -1,
                tmp->intra[(tmp->nch - 1) * G]);
    if (tmp->same_channels == 0 || tmp->nch == 0)
        for (int g = 0; g < G; g++)
            try_gpu(se, 0, back_net, back_first, FORCED_NONE, K_NONE, -1, g);
}

/* search.cc speed lists, GB/s per channel. */
static const double speed_intra[] = { 40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0,
                                      5.0, 4.0, 3.0 };
static const double speed_inter[] = { 48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0,
                                      9.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.4, 1.2, 0.24, 0.12 };
static const double sm90_speed_intra[] = { 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0,
                                           11.0, 6.0, 3.0 };
static const double sm90_speed_inter[] = { 48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0,
                                           17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24, 0.12 };
static const double sm100_speed_intra[] = { 90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 24.0,
                                            20.0, 19.0, 18.0 };
static const double sm100_speed_inter[] = { 96.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0,
                                            20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24,
                                            0.12 };

/* search.cc ncclTopoDupChannels */
static void dup_channels(cs_graph_t *g, int cc_min)
{
    if (g->nch == 0 || g->pattern == CS_PATTERN_NVLS || g->bw_intra < 25.0)
        return;
    if (cc_min > 80 && g->bw_intra < 50.0 && g->nch > 4)
        return;
    int dup = MIN(g->nch * 2, g->max_ch);
    for (int c = g->nch; c < dup; c++) {
        memcpy(g->intra + c * g->ngpus, g->intra + (c - g->nch) * g->ngpus, sizeof(int) * g->ngpus);
        g->inter[c * 2] = g->inter[(c - g->nch) * 2];
        g->inter[c * 2 + 1] = g->inter[(c - g->nch) * 2 + 1];
    }
    int f = (dup + g->nch - 1) / g->nch;
    g->bw_intra /= f;
    g->bw_inter /= f;
    g->nch = dup;
}

void cs_graph_compute(cs_sys_t *sys, cs_graph_t *graph)
{
    int G = sys->ngpus, N = sys->nnets;
    const cs_nccl_settings_t *s = sys->s;
    int cross_nic = N > 1 && (graph->pattern == CS_PATTERN_RING ||
                              graph->pattern == CS_PATTERN_BALANCED_TREE ||
                              graph->pattern == CS_PATTERN_SPLIT_TREE) ? s->cross_nic : 0;
    graph->cross_nic = cross_nic == 1;
    graph->bw_intra = graph->bw_inter = 0;
    graph->lat_inter = 0;
    int min_ti = CS_PATH_LOC, min_te = CS_PATH_PIX, max_ti = CS_PATH_SYS, max_te = CS_PATH_SYS;
    if (G > 1) {
        min_ti = CS_PATH_SYS;
        max_ti = CS_PATH_LOC;
        for (int a = 0; a < G; a++)
            for (int b = 0; b < G; b++)
                if (a != b) {
                    min_ti = MIN(min_ti, sys->g2g[a * G + b].type);
                    max_ti = MAX(max_ti, sys->g2g[a * G + b].type);
                }
    }
    if (sys->inter) {
        min_te = CS_PATH_SYS;
        max_te = CS_PATH_LOC;
        for (int g = 0; g < G; g++)
            for (int n = 0; n < N; n++) {
                min_te = MIN(min_te, sys->g2n[g * N + n].type);
                max_te = MAX(max_te, sys->g2n[g * N + n].type);
            }
        max_ti = max_te;
    }
    graph->type_intra = min_ti;
    graph->type_inter = min_te;
    graph->nch = 0;
    int try_same = graph->pattern == CS_PATTERN_NVLS ? 0 : 1;
    graph->same_channels = try_same;

    if (graph->pattern == CS_PATTERN_NVLS && (!sys->nvs || sys->cc_min < 90))
        return;
    if (graph->pattern == CS_PATTERN_NVLS)
        graph->max_ch = MIN(CS_NVLS_MAX_ARITY, G);
    if (graph->pattern == CS_PATTERN_COLLNET_DIRECT)
        graph->max_ch = MIN(CS_MAX_DIRECT_ARITY + 1, G);
    if (G == 1 && graph->pattern != CS_PATTERN_RING)
        graph->pattern = CS_PATTERN_TREE;
    if (!sys->inter && graph->pattern == CS_PATTERN_NVLS)
        graph->min_ch = graph->max_ch;
    if (graph->pattern == CS_PATTERN_RING && sys->split_nvlink && graph->max_ch >= 2 &&
        graph->min_ch == 1)
        graph->min_ch = 2;

    cs_graph_t tmp;
    cs_graph_init(&tmp, graph->id, graph->pattern, graph->min_ch, graph->max_ch, G);
    cs_graph_copy(&tmp, graph);

    const double *speeds;
    int nspeeds;
    if (!sys->inter) {
        speeds = sys->cc_min >= 100 ? sm100_speed_intra : sys->cc_min >= 90 ? sm90_speed_intra : speed_intra;
        nspeeds = sys->cc_min >= 100 ? G_N_ELEMENTS(sm100_speed_intra) :
                  sys->cc_min >= 90 ? G_N_ELEMENTS(sm90_speed_intra) : G_N_ELEMENTS(speed_intra);
    } else {
        speeds = sys->cc_min >= 100 ? sm100_speed_inter : sys->cc_min >= 90 ? sm90_speed_inter : speed_inter;
        nspeeds = sys->cc_min >= 100 ? G_N_ELEMENTS(sm100_speed_inter) :
                  sys->cc_min >= 90 ? G_N_ELEMENTS(sm90_speed_inter) : G_N_ELEMENTS(speed_inter);
    }
    int pass = 1, si = 0;
    double max_bw = sys->max_bw, total_bw = sys->total_bw;
    if (G > 1 && graph->pattern != CS_PATTERN_RING)
        total_bw *= G * 1.0 / (G - 1);
    while ((speeds[si] > max_bw || speeds[si] * graph->min_ch > total_bw) && si < nspeeds - 1)
        si++;
    tmp.bw_intra = tmp.bw_inter = speeds[si];
    long global_timeout = SEARCH_GLOBAL_TIMEOUT;
    int time = 0;
    search_t se = { sys, &tmp, graph, &time, NULL, NULL, NULL, NULL };
    int ndepth = (CS_MAXCHANNELS + 1) * (G + 1) * 2;
    se.next = g_new0(int *, ndepth);
    se.scores = g_new(score_t, G);
    se.cap = g_new(gint64, MAX(sys->nslots, 1));
    for (int i = 0; i < sys->nslots; i++)
        se.cap[i] = llround(sys->cap[i] * 1000.0);

    for (;;) {
        /* search: */
        time = tmp.same_channels ? SEARCH_TIMEOUT_SAMECHANNELS :
               tmp.pattern == CS_PATTERN_TREE ? SEARCH_TIMEOUT_TREE : SEARCH_TIMEOUT;
        tmp.nch = 0;
        global_timeout -= time;
        se.time = &time;
        search_rec(&se);

        gboolean done = time == -1 || graph->nch * graph->bw_inter >= sys->total_bw;
        if (!done && pass == 1) {
            if (tmp.same_channels == 1 &&
                !(sys->vendor == CS_CPU_AMD && tmp.type_intra == CS_PATH_SYS)) {
                tmp.same_channels = 0;
                continue;
            }
            tmp.same_channels = try_same;
            global_timeout += time;
            if (global_timeout < 0 && graph->nch > 0) {
                done = TRUE;
            } else {
                if (sys->cc_min >= 90 && tmp.pattern == CS_PATTERN_BALANCED_TREE) {
                    tmp.pattern = CS_PATTERN_TREE;
                    continue;
                }
                tmp.pattern = graph->pattern;
                int max_intra = sys->inter ? tmp.type_inter : max_ti;
                if (tmp.type_intra < max_intra && (graph->nch == 0 || tmp.type_intra < graph->type_intra)) {
                    tmp.type_intra += 1;
                    if (tmp.type_intra < CS_PATH_DIS)
                        continue;
                }
                tmp.type_intra = min_ti;
                if (sys->inter && tmp.type_inter < max_te &&
                    (graph->nch == 0 || tmp.type_inter < graph->type_inter || tmp.type_inter < CS_PATH_PXN)) {
                    tmp.type_inter += 1;
                    if (tmp.type_inter < CS_PATH_DIS)
                        continue;
                }
                tmp.type_inter = min_te;
                if (cross_nic == 2 && tmp.cross_nic == 0 &&
                    (graph->pattern == CS_PATTERN_RING || graph->pattern == CS_PATTERN_BALANCED_TREE)) {
                    tmp.cross_nic = 2;
                    continue;
                }
                tmp.cross_nic = cross_nic == 1;
                if (si < nspeeds - 1 && (graph->nch == 0 || speeds[si + 1] / graph->bw_inter > .49)) {
                    tmp.bw_inter = tmp.bw_intra = speeds[++si];
                    continue;
                }
                si = 0;
                while (speeds[si] > max_bw && si < nspeeds - 1)
                    si++;
                tmp.bw_intra = tmp.bw_inter = speeds[si];
                done = TRUE;
            }
        }
        /* done: */
        if (pass == 1) {
            time = -1;
            dup_channels(graph, sys->cc_min);
            cs_graph_copy(&tmp, graph);
            si = 0;
            while (speeds[si] > graph->bw_inter && si < nspeeds - 1)
                si++;
            tmp.bw_intra = tmp.bw_inter = speeds[si];
            tmp.min_ch = graph->nch;
            pass = 2;
        }
        if (time != 0 && si > 0) {
            if (graph->pattern == CS_PATTERN_RING) {
                tmp.bw_intra = tmp.bw_inter = speeds[--si];
                continue;
            } else if (graph->pattern == CS_PATTERN_NVLS && tmp.bw_inter == graph->bw_inter &&
                       tmp.bw_inter < tmp.bw_intra * 2) {
                tmp.min_ch = tmp.max_ch = graph->nch;
                tmp.bw_inter = speeds[--si];
                continue;
            } else if (tmp.bw_intra == graph->bw_intra && tmp.bw_intra < tmp.bw_inter * 2) {
                tmp.bw_intra = speeds[--si];
                continue;
            }
        }
        break;
    }
    cs_graph_clear(&tmp);
    for (int i = 0; i < ndepth; i++)
        g_free(se.next[i]);
    g_free(se.next);
    g_free(se.scores);
    g_free(se.cap);

    if (graph->nch == 0 && !graph->collnet && graph->pattern != CS_PATTERN_NVLS) {
        /* search.cc: no path found, fall back to the simple order, the
         * topology's GPU order (not for CollNet graphs: init.cc then
         * turns CollNet off) */
        for (int i = 0; i < G; i++)
            graph->intra[i] = sys->topo_order[i];
        graph->inter[0] = graph->inter[1] = 0;
        graph->bw_intra = graph->bw_inter = 0.1;
        graph->type_intra = graph->type_inter = CS_PATH_SYS;
        graph->nch = 1;
    }
}
