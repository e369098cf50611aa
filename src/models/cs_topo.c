/* The topology graph: building, freezing (adjacency, ranks, NCCL link
 * bandwidths, validation) and small queries.
 *
 * Link attributes that cs_topo_add_link() does not take (count for NVLink
 * bundles, pcie_gen/pcie_width for PCIe) are written by the caller into
 * t->links[l] before cs_topo_finish(); writing only the a->b direction is
 * enough, finish copies them onto the reverse link when it still holds the
 * defaults (count 1, gen/width 0). */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "models/cs_topo-int.h"
#include "util/cs_error.h"

/* NCCL topo.h (v2.28.9) constants, GB/s. */
#define NCCL_SM60_NVLINK_BW 18.0
#define NCCL_SM70_NVLINK_BW 20.0
#define NCCL_SM80_NVLINK_BW 20.0
#define NCCL_SM86_NVLINK_BW 12.0
#define NCCL_SM90_NVLINK_BW 20.6
#define NCCL_SM100_NVLINK_BW 40.1
#define NCCL_LOC_BW 5000.0
#define NCCL_AMD_BW 16.0
#define NCCL_SRP_QPI_BW 22.0
#define NCCL_P9_BW 32.0
#define NCCL_ARM_BW 6.0

static void topo_error(GError **err, const cs_topo_t *t, cs_error_code_t code, int line,
                       const char *fmt, ...) G_GNUC_PRINTF(5, 6);

static void topo_error(GError **err, const cs_topo_t *t, cs_error_code_t code, int line,
                       const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    const char *src = t->source ? t->source : "(unnamed)";
    if (line > 0)
        g_set_error(err, CS_ERROR, code, "%s:%d: %s", src, line, msg);
    else
        g_set_error(err, CS_ERROR, code, "collsim: topology '%s': %s", src, msg);
}

cs_topo_t *cs_topo_new(const char *source)
{
    cs_topo_priv_t *p = g_new0(cs_topo_priv_t, 1);
    g_mutex_init(&p->route_lock);
    g_mutex_init(&p->intra_lock);
    p->pub.source = g_strdup(source);
    p->pub.fabric.oversubscription = 1.0;
    return &p->pub;
}

/* Drops everything cs_topo_finish() derived, so a failed or repeated finish
 * starts clean. */
static void topo_clear_derived(cs_topo_t *t)
{
    cs_topo_priv_t *p = cs_topo_priv(t);
    g_clear_pointer(&t->adj_off, g_free);
    g_clear_pointer(&t->adj, g_free);
    g_clear_pointer(&t->rank_dev, g_free);
    g_clear_pointer(&t->node_first_rank, g_free);
    g_clear_pointer(&p->names, g_hash_table_unref);
    g_clear_pointer(&p->node_dev_off, g_free);
    g_clear_pointer(&p->node_devs, g_free);
    g_clear_pointer(&p->dev_pos, g_free);
    g_clear_pointer(&p->node_nic_off, g_free);
    g_clear_pointer(&p->node_nics, g_free);
    if (p->route != NULL && p->route_free != NULL)
        p->route_free(p->route);
    p->route = NULL;
    if (p->intra != NULL && p->intra_free != NULL)
        p->intra_free(p->intra);
    p->intra = NULL;
    t->nnodes = 0;
    t->ngpus = 0;
    t->finished = FALSE;
}

void cs_topo_free(cs_topo_t *t)
{
    if (t == NULL)
        return;
    cs_topo_priv_t *p = cs_topo_priv(t);
    topo_clear_derived(t);
    for (int i = 0; i < t->ndevs; i++) {
        g_free(t->devs[i].name);
        g_free(t->devs[i].ifname);
    }
    g_free(t->devs);
    g_free(t->links);
    g_free(t->source);
    g_free(t->description);
    g_mutex_clear(&p->route_lock);
    g_mutex_clear(&p->intra_lock);
    g_free(p);
}

int cs_topo_add_device(cs_topo_t *t, const cs_device_t *dev)
{
    g_return_val_if_fail(t != NULL && dev != NULL && !t->finished, -1);
    if (t->ndevs == t->devs_cap) {
        t->devs_cap = t->devs_cap ? 2 * t->devs_cap : 64;
        t->devs = g_renew(cs_device_t, t->devs, t->devs_cap);
    }
    cs_device_t *d = &t->devs[t->ndevs];
    *d = *dev;
    d->name = g_strdup(dev->name ? dev->name : "");
    d->ifname = g_strdup(dev->ifname);
    d->rank = -1;
    return t->ndevs++;
}

int cs_topo_add_link(cs_topo_t *t, int a, int b, cs_link_kind_t kind,
                     double bw, double lat, int line)
{
    g_return_val_if_fail(t != NULL && !t->finished, -1);
    if (t->nlinks + 2 > t->links_cap) {
        t->links_cap = t->links_cap ? 2 * t->links_cap : 128;
        t->links = g_renew(cs_link_t, t->links, t->links_cap);
    }
    int i = t->nlinks;
    cs_link_t *l = &t->links[i];
    memset(l, 0, 2 * sizeof(*l));
    l[0] = (cs_link_t){ .src = a, .dst = b, .reverse = i + 1, .kind = kind, .bw = bw,
                        .lat = lat, .count = 1, .line = line };
    l[1] = (cs_link_t){ .src = b, .dst = a, .reverse = i, .kind = kind, .bw = bw,
                        .lat = lat, .count = 1, .line = line };
    t->nlinks += 2;
    return i;
}

int cs_topo_find(const cs_topo_t *t, const char *name)
{
    g_return_val_if_fail(t != NULL, -1);
    if (name == NULL)
        return -1;
    cs_topo_priv_t *p = cs_topo_priv(t);
    if (t->finished && p->names != NULL)
        return GPOINTER_TO_INT(g_hash_table_lookup(p->names, name)) - 1;
    for (int i = 0; i < t->ndevs; i++)
        if (strcmp(t->devs[i].name, name) == 0)
            return i;
    return -1;
}

/* ---- NCCL's link bandwidths ---------------------------------------- */

/* ncclTopoNVLinkBw, topo.cc (v2.28.9); an unknown SM gets SM80's figure as
 * there. */
static double nccl_nvlink_bw(int sm)
{
    return sm >= 100 ? NCCL_SM100_NVLINK_BW :
           sm >= 90  ? NCCL_SM90_NVLINK_BW :
           sm == 86  ? NCCL_SM86_NVLINK_BW :
           sm >= 80  ? NCCL_SM80_NVLINK_BW :
           sm >= 70  ? NCCL_SM70_NVLINK_BW :
           sm >= 60  ? NCCL_SM60_NVLINK_BW :
                       NCCL_SM80_NVLINK_BW;
}

static int dev_sm(const cs_device_t *d)
{
    return d->kind == CS_DEV_GPU && d->gpu != NULL ? d->gpu->sm : 0;
}

/* SM for an NVLink that has no GPU end (NVSwitch to NVSwitch): that of the
 * first GPU of the same node, 0 (unknown) if none. */
static int node_sm(const cs_topo_t *t, int node)
{
    cs_topo_priv_t *p = cs_topo_priv(t);
    if (p->node_dev_off != NULL && node >= 0 && node < t->nnodes) {
        for (int i = p->node_dev_off[node]; i < p->node_dev_off[node + 1]; i++)
            if (dev_sm(&t->devs[p->node_devs[i]]) > 0)
                return dev_sm(&t->devs[p->node_devs[i]]);
        return 0;
    }
    for (int i = 0; i < t->ndevs; i++)
        if (t->devs[i].node == node && dev_sm(&t->devs[i]) > 0)
            return dev_sm(&t->devs[i]);
    return 0;
}

/* ncclTopoGetInterCpuBw, topo.cc: Intel depends on the CPU model (BDW 6,
 * SKL 10, SRP 22, ERP 40), known from familyid/modelid when the source gives
 * them; otherwise Sapphire Rapids (22), the generation of DGX H100-class
 * hosts. Unknown vendors get LOC_BW as in NCCL. */
static double nccl_sys_bw(const cs_device_t *cpu)
{
    switch (cpu->vendor) {
    case CS_CPU_INTEL:
        /* topo.cc:748-751 classifies Intel x86 by CPUID (family 6): model
         * >= 0xCF Emerald Rapids, >= 0x8F Sapphire Rapids, >= 0x55 Skylake,
         * else Broadwell; topo.cc:70-74 then picks ERP 40 / SRP 22 / SKL 10 /
         * BDW 6 GB/s. Without a CPUID we take Sapphire Rapids. */
        if (cpu->familyid == 6 && cpu->modelid > 0) {
            if (cpu->modelid >= 0xCF) return 40.0;
            if (cpu->modelid >= 0x8F) return NCCL_SRP_QPI_BW;
            if (cpu->modelid >= 0x55) return 10.0;
            return 6.0;
        }
        return NCCL_SRP_QPI_BW;
    case CS_CPU_AMD:   return NCCL_AMD_BW;
    case CS_CPU_ARM:   return NCCL_ARM_BW;
    case CS_CPU_POWER: return NCCL_P9_BW;
    case CS_CPU_OTHER: return NCCL_LOC_BW;
    }
    return NCCL_LOC_BW;
}

/* ncclTopoGetPciNode / topo.cc:423-492: width * speed / 80 with speed
 * 15/30/60/120/240/480 for 2.5..64 GT/s, 60 if unknown, width 0 -> 16. */
static double nccl_pci_bw(const cs_link_t *l)
{
    static const double speed[] = { 0, 15, 30, 60, 120, 240, 480 };
    int width = l->pcie_width > 0 ? l->pcie_width : 16;
    if (l->pcie_gen >= 1 && l->pcie_gen <= 6)
        return width * speed[l->pcie_gen] / 80.0;
    if (l->pcie_width > 0)
        return width * 60.0 / 80.0;
    /* Neither generation nor width given (our XML may only say bw=): scale
     * the physical figure by NCCL's ratio for 128b/130b links (Gen3 x16:
     * 12 GB/s for 15.75 GB/s), which reproduces width*speed/80 exactly for
     * Gen3..Gen6 of any width. */
    return l->bw / 1e9 * (12.0 / (8e9 * 128.0 / 130.0 / 8.0 * 16 / 1e9));
}

double cs_topo_nccl_link_bw(const cs_topo_t *t, const cs_link_t *l)
{
    const cs_device_t *a = &t->devs[l->src], *b = &t->devs[l->dst];
    int count = l->count > 0 ? l->count : 1;
    switch (l->kind) {
    case CS_LINK_NVL: {
        int sm = a->kind == CS_DEV_GPU ? dev_sm(a) : b->kind == CS_DEV_GPU ? dev_sm(b) :
                 node_sm(t, a->node);
        return count * nccl_nvlink_bw(sm);
    }
    case CS_LINK_C2C:
        /* topo.cc: C2C bw attribute (MB/s per link) * count / 1000; our bw
         * already covers the whole bundle. */
        return l->bw / 1e9;
    case CS_LINK_PCI:
        return nccl_pci_bw(l);
    case CS_LINK_SYS: {
        const cs_device_t *cpu = a->kind == CS_DEV_CPU ? a : b;
        if (cpu->kind != CS_DEV_CPU)
            return NCCL_LOC_BW;
        return nccl_sys_bw(cpu);
    }
    case CS_LINK_NET:
        /* topo.cc:371-394: speed (Mb/s) / 8000 = GB/s of the line rate. */
        return l->bw / 1e9;
    }
    return l->bw / 1e9;
}

/* ---- freezing ------------------------------------------------------ */

static int gpu_order_cmp(gconstpointer pa, gconstpointer pb, gpointer data)
{
    const cs_topo_t *t = data;
    const cs_device_t *a = &t->devs[*(const int *)pa], *b = &t->devs[*(const int *)pb];
    if (a->node != b->node)
        return a->node < b->node ? -1 : 1;
    if (a->local != b->local)
        return a->local < b->local ? -1 : 1;
    return *(const int *)pa - *(const int *)pb;
}

static gboolean topo_check_devices(cs_topo_t *t, GHashTable *names, GError **err)
{
    /* a host names each NIC once (NCCL_IB_HCA, NET/IB's lines), whichever
     * reader built it (collsim XML, an NCCL dump, a preset) */
    g_autoptr(GHashTable) ifnames = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (int i = 0; i < t->ndevs; i++) {
        const cs_device_t *d = &t->devs[i];
        if (d->kind == CS_DEV_NIC && d->ifname != NULL) {
            char *key = g_strdup_printf("%d\t%s", d->node, d->ifname);
            gpointer prev = g_hash_table_lookup(ifnames, key);
            if (prev != NULL) {
                const cs_device_t *o = &t->devs[GPOINTER_TO_INT(prev) - 1];
                topo_error(err, t, CS_ERROR_INPUT, d->line, "NIC '%s' has ifname \"%s\", as NIC '%s' at line %d "
                           "does; expected device names unique within a node", d->name, d->ifname, o->name, o->line);
                g_free(key);
                return FALSE;
            }
            g_hash_table_insert(ifnames, key, GINT_TO_POINTER(i + 1));
        }
        if (d->name[0] == '\0') {
            topo_error(err, t, CS_ERROR_INPUT, d->line,
                       "a %s device has no id; every device needs a unique id",
                       cs_dev_kind_name(d->kind));
            return FALSE;
        }
        if (g_hash_table_contains(names, d->name)) {
            topo_error(err, t, CS_ERROR_INPUT, d->line,
                       "duplicate device id '%s'; ids must be unique", d->name);
            return FALSE;
        }
        g_hash_table_insert(names, d->name, GINT_TO_POINTER(i + 1));
        if (d->kind == CS_DEV_GPU && d->node < 0) {
            topo_error(err, t, CS_ERROR_INPUT, d->line,
                       "GPU '%s' belongs to no node; expected a node index >= 0", d->name);
            return FALSE;
        }
        if (d->kind == CS_DEV_GPU && d->local < 0) {
            topo_error(err, t, CS_ERROR_INPUT, d->line,
                       "GPU '%s' has local index %d; expected >= 0", d->name, d->local);
            return FALSE;
        }
        if (d->kind == CS_DEV_NIC && d->nic_bw < 0) {
            topo_error(err, t, CS_ERROR_INPUT, d->line,
                       "NIC '%s' has bandwidth %g B/s; expected a positive bandwidth",
                       d->name, d->nic_bw);
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean topo_check_links(cs_topo_t *t, GError **err)
{
    for (int i = 0; i < t->nlinks; i++) {
        cs_link_t *l = &t->links[i];
        if (l->src < 0 || l->src >= t->ndevs || l->dst < 0 || l->dst >= t->ndevs) {
            topo_error(err, t, CS_ERROR_INPUT, l->line,
                       "link %d connects device %d to device %d; expected indices below %d",
                       i, l->src, l->dst, t->ndevs);
            return FALSE;
        }
        const char *a = t->devs[l->src].name, *b = t->devs[l->dst].name;
        if (l->src == l->dst) {
            topo_error(err, t, CS_ERROR_INPUT, l->line,
                       "link connects '%s' to itself; expected two different devices", a);
            return FALSE;
        }
        if (!(l->bw > 0) || !isfinite(l->bw)) {
            topo_error(err, t, CS_ERROR_INPUT, l->line,
                       "link '%s' - '%s' has bandwidth %g B/s; expected a positive bandwidth",
                       a, b, l->bw);
            return FALSE;
        }
        if (!(l->lat >= 0) || !isfinite(l->lat)) {
            topo_error(err, t, CS_ERROR_INPUT, l->line,
                       "link '%s' - '%s' has latency %g s; expected a latency >= 0", a, b, l->lat);
            return FALSE;
        }
        if (l->count < 1) {
            topo_error(err, t, CS_ERROR_INPUT, l->line,
                       "link '%s' - '%s' bundles %d links; expected at least 1", a, b, l->count);
            return FALSE;
        }
    }
    /* Attributes the caller set on one direction only (see top). */
    for (int i = 0; i < t->nlinks; i++) {
        cs_link_t *l = &t->links[i], *r = &t->links[l->reverse];
        if (r->count == 1 && l->count > 1)
            r->count = l->count;
        if (r->pcie_gen == 0)
            r->pcie_gen = l->pcie_gen;
        if (r->pcie_width == 0)
            r->pcie_width = l->pcie_width;
    }
    return TRUE;
}

/* Ranks: GPUs sorted by (node, local). */
static gboolean topo_assign_ranks(cs_topo_t *t, GError **err)
{
    int ngpus = 0, maxnode = -1;
    for (int i = 0; i < t->ndevs; i++) {
        if (t->devs[i].kind == CS_DEV_GPU)
            ngpus++;
        maxnode = MAX(maxnode, t->devs[i].node);
    }
    if (ngpus == 0) {
        topo_error(err, t, CS_ERROR_INPUT, 0, "no GPU in the topology; expected at least one GPU");
        return FALSE;
    }
    int *rank_dev = g_new(int, ngpus);
    for (int i = 0, r = 0; i < t->ndevs; i++)
        if (t->devs[i].kind == CS_DEV_GPU)
            rank_dev[r++] = i;
    g_qsort_with_data(rank_dev, ngpus, sizeof(int), gpu_order_cmp, t);
    for (int r = 1; r < ngpus; r++) {
        const cs_device_t *a = &t->devs[rank_dev[r - 1]], *b = &t->devs[rank_dev[r]];
        if (a->node == b->node && a->local == b->local) {
            topo_error(err, t, CS_ERROR_INPUT, b->line,
                       "GPUs '%s' and '%s' both have local index %d on node %d; expected distinct indices",
                       a->name, b->name, b->local, b->node);
            g_free(rank_dev);
            return FALSE;
        }
    }
    t->nnodes = maxnode + 1;
    t->ngpus = ngpus;
    t->rank_dev = rank_dev;
    t->node_first_rank = g_new0(int, t->nnodes + 1);
    for (int r = 0; r < ngpus; r++) {
        t->devs[rank_dev[r]].rank = r;
        t->node_first_rank[t->devs[rank_dev[r]].node + 1]++;
    }
    for (int n = 0; n < t->nnodes; n++)
        t->node_first_rank[n + 1] += t->node_first_rank[n];
    return TRUE;
}

static void topo_build_adjacency(cs_topo_t *t)
{
    t->adj_off = g_new0(int, t->ndevs + 1);
    t->adj = g_new(int, MAX(t->nlinks, 1));
    for (int i = 0; i < t->nlinks; i++)
        t->adj_off[t->links[i].src + 1]++;
    for (int d = 0; d < t->ndevs; d++)
        t->adj_off[d + 1] += t->adj_off[d];
    g_autofree int *fill = g_memdup2(t->adj_off, sizeof(int) * t->ndevs);
    for (int i = 0; i < t->nlinks; i++)
        t->adj[fill[t->links[i].src]++] = i;
}

static int nic_order_cmp(gconstpointer pa, gconstpointer pb, gpointer data)
{
    const cs_topo_t *t = data;
    const cs_device_t *a = &t->devs[*(const int *)pa], *b = &t->devs[*(const int *)pb];
    if (a->local != b->local)
        return a->local < b->local ? -1 : 1;
    return *(const int *)pa - *(const int *)pb;
}

static void topo_build_node_lists(cs_topo_t *t)
{
    cs_topo_priv_t *p = cs_topo_priv(t);
    int nn = t->nnodes;
    p->node_dev_off = g_new0(int, nn + 1);
    p->node_nic_off = g_new0(int, nn + 1);
    for (int i = 0; i < t->ndevs; i++) {
        int n = t->devs[i].node;
        if (n < 0)
            continue;
        p->node_dev_off[n + 1]++;
        if (t->devs[i].kind == CS_DEV_NIC)
            p->node_nic_off[n + 1]++;
    }
    for (int n = 0; n < nn; n++) {
        p->node_dev_off[n + 1] += p->node_dev_off[n];
        p->node_nic_off[n + 1] += p->node_nic_off[n];
    }
    p->node_devs = g_new(int, MAX(p->node_dev_off[nn], 1));
    p->node_nics = g_new(int, MAX(p->node_nic_off[nn], 1));
    p->dev_pos = g_new(int, MAX(t->ndevs, 1));
    g_autofree int *dfill = g_memdup2(p->node_dev_off, sizeof(int) * nn);
    g_autofree int *nfill = g_memdup2(p->node_nic_off, sizeof(int) * nn);
    for (int i = 0; i < t->ndevs; i++) {
        int n = t->devs[i].node;
        p->dev_pos[i] = -1;
        if (n < 0)
            continue;
        p->dev_pos[i] = dfill[n] - p->node_dev_off[n];
        p->node_devs[dfill[n]++] = i;
        if (t->devs[i].kind == CS_DEV_NIC)
            p->node_nics[nfill[n]++] = i;
    }
    for (int n = 0; n < nn; n++)
        g_qsort_with_data(p->node_nics + p->node_nic_off[n],
                          p->node_nic_off[n + 1] - p->node_nic_off[n], sizeof(int),
                          nic_order_cmp, t);
}

/* Every GPU must reach rank 0's GPU; any device may relay for this check
 * (which path NCCL would take is cs_paths' business). */
static gboolean topo_check_connected(cs_topo_t *t, GError **err)
{
    g_autofree guint8 *seen = g_new0(guint8, t->ndevs);
    g_autofree int *queue = g_new(int, t->ndevs);
    int head = 0, tail = 0, root = t->rank_dev[0];
    seen[root] = 1;
    queue[tail++] = root;
    while (head < tail) {
        int d = queue[head++];
        for (int k = t->adj_off[d]; k < t->adj_off[d + 1]; k++) {
            int r = t->links[t->adj[k]].dst;
            if (!seen[r]) {
                seen[r] = 1;
                queue[tail++] = r;
            }
        }
    }
    for (int r = 1; r < t->ngpus; r++) {
        const cs_device_t *g = &t->devs[t->rank_dev[r]];
        if (!seen[t->rank_dev[r]]) {
            topo_error(err, t, CS_ERROR_TOPOLOGY, g->line,
                       "GPU '%s' has no path to GPU '%s'; expected NVLink, PCIe or a NIC and "
                       "fabric connecting them", g->name, t->devs[root].name);
            return FALSE;
        }
    }
    return TRUE;
}

gboolean cs_topo_finish(cs_topo_t *t, GError **err)
{
    g_return_val_if_fail(t != NULL, FALSE);
    if (t->finished)
        return TRUE;
    topo_clear_derived(t);
    cs_topo_priv_t *p = cs_topo_priv(t);
    p->names = g_hash_table_new(g_str_hash, g_str_equal);
    if (!topo_check_devices(t, p->names, err) || !topo_check_links(t, err) ||
        !topo_assign_ranks(t, err))
        goto err_clear;
    topo_build_adjacency(t);
    if (!topo_check_connected(t, err))
        goto err_clear;
    topo_build_node_lists(t);
    for (int i = 0; i < t->nlinks; i++)
        t->links[i].nccl_bw = cs_topo_nccl_link_bw(t, &t->links[i]);
    t->finished = TRUE;
    return TRUE;

err_clear:
    for (int i = 0; i < t->ndevs; i++)
        t->devs[i].rank = -1;
    topo_clear_derived(t);
    return FALSE;
}

/* Copies every link pair of t whose ends are both kept (map[dev] >= 0)
 * into r, each direction as it is; lmap (may be NULL) gets, per new link,
 * the old link's index. */
static void copy_links(const cs_topo_t *t, const int *map, cs_topo_t *r, GArray *lmap)
{
    for (int i = 0; i < t->nlinks; i++) {
        const cs_link_t *l = &t->links[i];
        if (l->reverse < i)      /* each pair once, from its a->b side */
            continue;
        if (l->src < 0 || l->src >= t->ndevs || l->dst < 0 || l->dst >= t->ndevs ||
            map[l->src] < 0 || map[l->dst] < 0)
            continue;
        int k = cs_topo_add_link(r, map[l->src], map[l->dst], l->kind, l->bw, l->lat, l->line);
        for (int j = 0; j < 2; j++) {
            const cs_link_t *s = j ? &t->links[l->reverse] : l;
            cs_link_t *dl = &r->links[k + j];
            dl->bw = s->bw;
            dl->lat = s->lat;
            dl->count = s->count;
            dl->pcie_gen = s->pcie_gen;
            dl->pcie_width = s->pcie_width;
            if (lmap != NULL) {
                int old = j ? l->reverse : i;
                g_array_append_val(lmap, old);
            }
        }
    }
}

cs_topo_t *cs_topo_restrict_gpus(const cs_topo_t *t, int n, GError **err)
{
    g_return_val_if_fail(t != NULL, NULL);
    if (n < 1) {
        topo_error(err, t, CS_ERROR_INPUT, 0,
                   "cannot keep %d GPUs per node; expected at least 1", n);
        return NULL;
    }
    g_autoptr(cs_topo_t) r = cs_topo_new(t->source);
    r->fabric = t->fabric;
    r->description = g_strdup(t->description);
    g_autofree int *map = g_new(int, MAX(t->ndevs, 1));
    for (int i = 0; i < t->ndevs; i++) {
        const cs_device_t *d = &t->devs[i];
        map[i] = d->kind == CS_DEV_GPU && d->local >= n ? -1 : cs_topo_add_device(r, d);
    }
    copy_links(t, map, r, NULL);
    if (!cs_topo_finish(r, err))
        return NULL;
    return g_steal_pointer(&r);
}

cs_topo_t *cs_topo_select(const cs_topo_t *t, const gboolean *keep, int **rank_map_p, int **link_map_p,
                          GError **err)
{
    g_return_val_if_fail(t != NULL && t->finished && keep != NULL, NULL);
    g_autofree int *node_new = g_new(int, MAX(1, t->nnodes));
    g_autofree int *local_new = g_new0(int, MAX(1, t->nnodes));
    for (int n = 0; n < t->nnodes; n++)
        node_new[n] = -1;
    int nn = 0;
    for (int r = 0; r < t->ngpus; r++) {
        int n = cs_topo_rank_dev(t, r)->node;
        if (keep[r] && node_new[n] < 0)
            node_new[n] = nn++;
    }
    if (nn == 0) {
        topo_error(err, t, CS_ERROR_INPUT, 0, "no GPU selected; expected at least one");
        return NULL;
    }
    g_autoptr(cs_topo_t) r = cs_topo_new(t->source);
    r->fabric = t->fabric;
    r->description = g_strdup(t->description);
    g_autofree int *map = g_new(int, MAX(t->ndevs, 1));
    for (int i = 0; i < t->ndevs; i++) {
        const cs_device_t *d = &t->devs[i];
        gboolean in = d->kind == CS_DEV_GPU ? keep[d->rank] : d->node < 0 || node_new[d->node] >= 0;
        map[i] = -1;
        if (!in)
            continue;
        cs_device_t c = *d;
        if (d->node >= 0)
            c.node = node_new[d->node];
        map[i] = cs_topo_add_device(r, &c);
    }
    /* GPUs keep their order on each node and are numbered from 0 again, as
     * a process that sees only them (CUDA_VISIBLE_DEVICES) numbers them */
    for (int k = 0; k < t->ngpus; k++) {
        int d = t->rank_dev[k];
        if (map[d] >= 0)
            r->devs[map[d]].local = local_new[r->devs[map[d]].node]++;
    }
    GArray *lmap = g_array_new(FALSE, FALSE, sizeof(int));
    copy_links(t, map, r, lmap);
    if (!cs_topo_finish(r, err)) {
        g_array_free(lmap, TRUE);
        return NULL;
    }
    g_autofree int *back = g_new(int, MAX(1, t->ndevs));
    for (int i = 0; i < t->ndevs; i++)
        if (map[i] >= 0)
            back[map[i]] = i;
    int *rank_map = g_new(int, r->ngpus);
    for (int k = 0; k < r->ngpus; k++)
        rank_map[k] = t->devs[back[r->rank_dev[k]]].rank;
    *rank_map_p = rank_map;
    *link_map_p = (int *)g_array_free(lmap, FALSE);
    return g_steal_pointer(&r);
}

/* ---- names and queries --------------------------------------------- */

const char *cs_dev_kind_name(cs_dev_kind_t k)
{
    static const char *const names[] = { "gpu", "nvswitch", "pcisw", "cpu", "nic", "switch" };
    return (unsigned)k < G_N_ELEMENTS(names) ? names[k] : "?";
}

const char *cs_link_kind_name(cs_link_kind_t k)
{
    switch (k) {
    case CS_LINK_NVL: return "nvlink";
    case CS_LINK_C2C: return "c2c";
    case CS_LINK_PCI: return "pcie";
    case CS_LINK_SYS: return "sys";
    case CS_LINK_NET: return "net";
    }
    return "?";
}

const char *cs_cpu_vendor_name(cs_cpu_vendor_t v)
{
    static const char *const names[] = { "intel", "amd", "arm", "power", "other" };
    return (unsigned)v < G_N_ELEMENTS(names) ? names[v] : "?";
}

int cs_topo_node_gpus(const cs_topo_t *t, int node)
{
    g_return_val_if_fail(t != NULL && t->finished, 0);
    if (node < 0 || node >= t->nnodes)
        return 0;
    return t->node_first_rank[node + 1] - t->node_first_rank[node];
}

/* With nic_devs == NULL returns how many NICs the node has; otherwise
 * writes at most max indices and returns how many it wrote. */
int cs_topo_node_nics(const cs_topo_t *t, int node, int *nic_devs, int max)
{
    g_return_val_if_fail(t != NULL && t->finished, 0);
    if (node < 0 || node >= t->nnodes)
        return 0;
    cs_topo_priv_t *p = cs_topo_priv(t);
    int first = p->node_nic_off[node], n = p->node_nic_off[node + 1] - first;
    if (nic_devs == NULL)
        return n;
    n = MIN(n, max);
    for (int i = 0; i < n; i++)
        nic_devs[i] = p->node_nics[first + i];
    return MAX(n, 0);
}

/* Up to 'max' hex digits at *p into *v (shifted in); how many were read. */
static int hex_digits(const char **p, int max, guint64 *v)
{
    int n = 0;
    for (; n < max && g_ascii_isxdigit(**p); (*p)++, n++)
        *v = *v << 4 | (guint64)g_ascii_xdigit_value(**p);
    return n;
}

gboolean cs_topo_busid_parse(const char *s, gint64 *id_p)
{
    /* DDDD:BB:DD[.F]: 1-8 domain digits, 2 bus, 2 device, 1 function */
    if (s == NULL)
        return FALSE;
    const char *p = s;
    guint64 v = 0;
    if (hex_digits(&p, 8, &v) == 0 || *p++ != ':' || hex_digits(&p, 2, &v) != 2 || *p++ != ':' ||
        hex_digits(&p, 2, &v) != 2)
        return FALSE;
    if (*p == '\0')
        v <<= 4;   /* function 0 */
    else if (*p++ != '.' || hex_digits(&p, 1, &v) != 1 || *p != '\0')
        return FALSE;
    *id_p = (gint64)v;
    return TRUE;
}

void cs_topo_busid_format(gint64 id, char buf[24])
{
    guint64 v = (guint64)id;
    g_snprintf(buf, 24, "%04x:%02x:%02x.%x", (unsigned)(v >> 20), (unsigned)(v >> 12) & 0xff,
               (unsigned)(v >> 4) & 0xff, (unsigned)v & 0xf);
}

/* The CPU reached in the fewest PCIe (or C2C, for Grace) hops without
 * crossing another GPU, NIC or CPU, and the switches on the way: BFS over
 * the node's devices only, so this stays cheap on big graphs. */
int cs_topo_pci_chain(const cs_topo_t *t, int dev, int *chain, int max)
{
    g_return_val_if_fail(t != NULL && t->finished, 0);
    if (dev < 0 || dev >= t->ndevs || max < 1)
        return 0;
    if (t->devs[dev].kind == CS_DEV_CPU) {
        chain[0] = dev;
        return 1;
    }
    cs_topo_priv_t *p = cs_topo_priv(t);
    int node = t->devs[dev].node;
    if (node < 0)
        return 0;
    int ndev = p->node_dev_off[node + 1] - p->node_dev_off[node];
    g_autofree int *from = g_new(int, ndev);   /* BFS parent, by node position; -2 unseen */
    g_autofree int *queue = g_new(int, ndev);
    for (int i = 0; i < ndev; i++)
        from[i] = -2;
    int head = 0, tail = 0;
    queue[tail++] = dev;
    from[p->dev_pos[dev]] = -1;
    while (head < tail) {
        int d = queue[head++];
        if (d != dev && t->devs[d].kind != CS_DEV_PCISW && t->devs[d].kind != CS_DEV_NVSWITCH)
            continue;   /* only switches relay */
        for (int k = t->adj_off[d]; k < t->adj_off[d + 1]; k++) {
            const cs_link_t *l = &t->links[t->adj[k]];
            if (l->kind != CS_LINK_PCI && l->kind != CS_LINK_C2C)
                continue;
            if (t->devs[l->dst].kind == CS_DEV_CPU) {
                int n = 0;   /* CPU first, then down to dev */
                for (int x = d; x >= 0; x = from[p->dev_pos[x]])
                    n++;
                if (n + 1 > max)
                    return 0;
                chain[0] = l->dst;   /* d is next below the CPU, dev at the end */
                int at = 1;
                for (int x = d; x >= 0; x = from[p->dev_pos[x]])
                    chain[at++] = x;
                return n + 1;
            }
            if (t->devs[l->dst].node != node || from[p->dev_pos[l->dst]] != -2)
                continue;
            from[p->dev_pos[l->dst]] = d;
            queue[tail++] = l->dst;
        }
    }
    return 0;
}

int cs_topo_node_cpu_of(const cs_topo_t *t, int dev)
{
    g_return_val_if_fail(t != NULL && t->finished, -1);
    if (dev < 0 || dev >= t->ndevs)
        return -1;
    if (t->devs[dev].kind == CS_DEV_CPU)
        return dev;
    int node = t->devs[dev].node;
    if (node < 0)
        return -1;
    /* a chain holds the node's devices at most, and a CPU */
    cs_topo_priv_t *p = cs_topo_priv(t);
    int max = p->node_dev_off[node + 1] - p->node_dev_off[node] + 1;
    g_autofree int *chain = g_new(int, max);
    return cs_topo_pci_chain(t, dev, chain, max) > 0 ? chain[0] : -1;
}

static int host_root(int *parent, int d)
{
    while (parent[d] != d)
        d = parent[d] = parent[parent[d]];
    return d;
}

int cs_topo_rank_hosts(const cs_topo_t *t, int *host_of_rank)
{
    g_return_val_if_fail(t != NULL && t->finished, 0);
    /* devices joined by what stays inside one host's chassis */
    g_autofree int *parent = g_new(int, t->ndevs);
    g_autofree gboolean *has_cpu = g_new0(gboolean, t->ndevs);
    for (int d = 0; d < t->ndevs; d++)
        parent[d] = d;
    for (int i = 0; i < t->nlinks; i++) {
        const cs_link_t *l = &t->links[i];
        if (l->kind != CS_LINK_PCI && l->kind != CS_LINK_SYS && l->kind != CS_LINK_C2C)
            continue;
        int a = host_root(parent, l->src), b = host_root(parent, l->dst);
        if (a != b)
            parent[MAX(a, b)] = MIN(a, b);
    }
    for (int d = 0; d < t->ndevs; d++)
        if (t->devs[d].kind == CS_DEV_CPU)
            has_cpu[host_root(parent, d)] = TRUE;
    /* a node with a GPU no CPU reaches: all its GPUs on its first GPU's host */
    g_autofree gboolean *whole = g_new0(gboolean, MAX(1, t->nnodes));
    for (int r = 0; r < t->ngpus; r++)
        if (!has_cpu[host_root(parent, t->rank_dev[r])])
            whole[t->devs[t->rank_dev[r]].node] = TRUE;
    g_autofree int *number = g_new(int, t->ndevs);
    for (int d = 0; d < t->ndevs; d++)
        number[d] = -1;
    int nhosts = 0;
    for (int r = 0; r < t->ngpus; r++) {
        const cs_device_t *g = cs_topo_rank_dev(t, r);
        int root = whole[g->node] ? host_root(parent, t->rank_dev[t->node_first_rank[g->node]])
                                  : host_root(parent, t->rank_dev[r]);
        if (number[root] < 0)
            number[root] = nhosts++;
        if (host_of_rank != NULL)
            host_of_rank[r] = number[root];
    }
    return nhosts;
}

int cs_topo_link_gpu_sm(const cs_topo_t *t, int link)
{
    const cs_link_t *l = &t->links[link];
    const cs_device_t *a = &t->devs[l->src], *b = &t->devs[l->dst];
    if (a->kind == CS_DEV_GPU && a->gpu != NULL)
        return a->gpu->sm;
    if (b->kind == CS_DEV_GPU && b->gpu != NULL)
        return b->gpu->sm;
    return 0;
}
