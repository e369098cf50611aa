/* The cluster builder: copies a one-node topology o->nodes times, gives each
 * node its NICs (retyped and counted as asked) and joins them with a rail or
 * fat-tree fabric of leaf, spine and (when one spine layer cannot reach
 * every leaf) core switches. Work is linear in the size of the result. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "models/cs_presets-int.h"
#include "util/cs_error.h"

/* ---- option checks ------------------------------------------------------- */

gboolean cs_build_opts_check(const cs_build_opts_t *o, GError **err)
{
    if (o->nodes < 1 || o->nodes > CS_MAX_NODES) {
        cs_set_flag_error(err, "--nodes", "%d is out of range; expected " CS_NODES_EXPECTED, o->nodes);
        return FALSE;
    }
    if (o->gpus < 0) {
        cs_set_flag_error(err, "--gpus", "%d; expected a positive number of GPUs per node", o->gpus);
        return FALSE;
    }
    if (o->sockets < 0 || o->sockets > 2) {
        cs_set_flag_error(err, "--sockets", "%d; expected 1 or 2", o->sockets);
        return FALSE;
    }
    if (o->p2p < -1 || o->p2p > 1) {
        cs_set_flag_error(err, "--p2p", "%d; expected on or off", o->p2p);
        return FALSE;
    }
    if (o->nic != NULL && cs_nic_type_find(o->nic) == NULL) {
        cs_set_flag_error(err, "--nic", "unknown NIC type '%s'; expected one of %s",
                          o->nic, cs_nic_type_names());
        return FALSE;
    }
    if (o->nics_per_node < 0 || o->nics_per_node > CS_MAX_NICS_PER_NODE) {
        cs_set_flag_error(err, "--nics-per-node", "%d is out of range; expected " CS_NICS_EXPECTED,
                          o->nics_per_node);
        return FALSE;
    }
    if (o->fabric != NULL && strcmp(o->fabric, "rail") != 0 && strcmp(o->fabric, "fat-tree") != 0) {
        cs_set_flag_error(err, "--fabric", "unknown fabric '%s'; expected rail or fat-tree", o->fabric);
        return FALSE;
    }
    if (o->oversubscription != 0 && !(o->oversubscription >= 1 && isfinite(o->oversubscription))) {
        cs_set_flag_error(err, "--oversubscription", "%g; expected a ratio >= 1 (1 = non-blocking)",
                          o->oversubscription);
        return FALSE;
    }
    return TRUE;
}

/* ---- fabric switch radix ----------------------------------------------------
 * Ports at the NIC's speed on the switch a cluster of that NIC would use.
 * nodes_per_leaf (rail) = radix / 2: half the ports down, half up. */
typedef struct {
    gboolean ib;             /* InfiniBand; otherwise Ethernet (RoCE or plain) */
    double min_gbps;         /* applies from this NIC speed up */
    int radix;
    const char *sw;          /* the switch, for the description */
} radix_t;

static const radix_t radixes[] = {
    /* NVIDIA Quantum-X800 Q3400 datasheet: 144 ports of 800G XDR. */
    { TRUE, 800, 144, "Quantum-X800" },
    /* NVIDIA Quantum-2 QM9700 datasheet: 64 ports of 400G NDR. */
    { TRUE, 400, 64, "Quantum-2" },
    /* NVIDIA Quantum QM8700 datasheet: 40 ports of 200G HDR. */
    { TRUE, 200, 40, "Quantum" },
    /* NVIDIA Switch-IB 2 SB7800 datasheet: 36 ports of 100G EDR (and older). */
    { TRUE, 0, 36, "Switch-IB 2" },
    /* NVIDIA Spectrum-4 SN5600 datasheet: 64 ports of 800GbE. */
    { FALSE, 800, 64, "Spectrum-4 SN5600" },
    /* Spectrum-4 SN5400 / Broadcom Tomahawk 4 (25.6 Tb/s): 64 ports of 400GbE. */
    { FALSE, 400, 64, "Spectrum-4 SN5400" },
    /* NVIDIA Spectrum-3 SN4600 datasheet: 64 ports of 200GbE. */
    { FALSE, 200, 64, "Spectrum-3 SN4600" },
    /* NVIDIA Spectrum-3 SN4600C datasheet: 64 ports of 100GbE. */
    { FALSE, 100, 64, "Spectrum-3 SN4600C" },
    /* NVIDIA Spectrum SN2410 datasheet: 48 ports of 25GbE (+8 uplinks). */
    { FALSE, 25, 48, "Spectrum SN2410" },
    /* A 48-port 1/10GbE top-of-rack switch, the common access switch. */
    { FALSE, 0, 48, "48-port ToR" },
};

static const radix_t *radix_of(const cs_nic_type_t *nt)
{
    double gbps = nt->bw * 8 / 1e9;
    for (gsize i = 0; i < G_N_ELEMENTS(radixes); i++)
        if (radixes[i].ib == (nt->kind == CS_NIC_IB) && gbps >= radixes[i].min_gbps * 0.95)
            return &radixes[i];
    g_assert_not_reached();
}

/* ---- the NIC type of a node's NICs ----------------------------------------- */

/* The catalogue type of a NIC device (same kind, bandwidth within 1%), or a
 * synthetic type with the latency of the nearest catalogue speed. */
static void nic_type_of(const cs_device_t *d, cs_nic_type_t *nt_p, char **label_p)
{
    g_auto(GStrv) names = g_strsplit(cs_nic_type_names(), ", ", -1);
    const cs_nic_type_t *best = NULL;
    for (int i = 0; names[i] != NULL; i++) {
        const cs_nic_type_t *c = cs_nic_type_find(names[i]);
        if (c == NULL || c->kind != d->nic_kind)
            continue;
        if (fabs(c->bw - d->nic_bw) <= 0.01 * c->bw) {
            *nt_p = *c;
            *label_p = g_strdup(c->name);
            return;
        }
        if (best == NULL || fabs(log(c->bw / d->nic_bw)) < fabs(log(best->bw / d->nic_bw)))
            best = c;
    }
    g_assert(best != NULL);   /* the catalogue has every kind */
    *nt_p = *best;
    nt_p->name = NULL;
    nt_p->bw = d->nic_bw;
    nt_p->rdma = d->nic_kind != CS_NIC_ETH;
    *label_p = g_strdup_printf("%s-%.0fg", cs_nic_kind_name(d->nic_kind), d->nic_bw * 8 / 1e9);
}

/* ---- the per-node plan ----------------------------------------------------- */

typedef struct {
    int ndevs;               /* devices of the input node */
    int *pos;                /* input device -> position in a copied node, -1 = dropped */
    int nkept;               /* copied devices per node, extra NICs included */
    int *nic_pos;            /* NIC k -> position in a copied node (k < nics) */
    int nics;                /* NICs per node */
    int nextra;              /* NICs added beyond the node's own */
    int *extra_parent;       /* input device each extra NIC hangs under */
    int *extra_gen;
    GArray *copy_links;      /* input link indices (a->b with a < b's index) to copy */
    cs_nic_type_t nt;        /* the NICs' type after the build */
    char *nt_label;
    gboolean retype;
} plan_t;

static void plan_clear(plan_t *p)
{
    g_free(p->pos);
    g_free(p->nic_pos);
    g_free(p->extra_parent);
    g_free(p->extra_gen);
    if (p->copy_links != NULL)
        g_array_unref(p->copy_links);
    g_free(p->nt_label);
}

/* Highest PCIe generation among the links of device d. */
static int dev_pcie_gen(const cs_topo_t *t, int d)
{
    int gen = 0;
    for (int l = 0; l < t->nlinks; l++)
        if (t->links[l].kind == CS_LINK_PCI && t->links[l].src == d)
            gen = MAX(gen, t->links[l].pcie_gen);
    return gen;
}

static gboolean has_pci_neighbour(const cs_topo_t *t, int d, cs_dev_kind_t kind)
{
    for (int l = 0; l < t->nlinks; l++)
        if (t->links[l].src == d && t->links[l].kind == CS_LINK_PCI && t->devs[t->links[l].dst].kind == kind)
            return TRUE;
    return FALSE;
}

static int cmp_nic_local(gconstpointer a, gconstpointer b, gpointer user)
{
    const cs_topo_t *t = user;
    int x = *(const int *)a, y = *(const int *)b;
    int lx = t->devs[x].local, ly = t->devs[y].local;
    return lx != ly ? (lx < ly ? -1 : 1) : (x < y ? -1 : x > y);
}

static gboolean plan_make(const cs_topo_t *node, const cs_build_opts_t *o, int nodes, plan_t *p, GError **err)
{
    const char *src = node->source != NULL ? node->source : "topology";
    memset(p, 0, sizeof *p);
    p->ndevs = node->ndevs;
    for (int d = 0; d < node->ndevs; d++)
        if (node->devs[d].node > 0 || node->devs[d].kind == CS_DEV_SWITCH) {
            cs_set_error_at(err, src, node->devs[d].line,
                            "--nodes needs a one-node topology, but device '%s' is %s; "
                            "expected the devices of a single node", node->devs[d].name,
                            node->devs[d].kind == CS_DEV_SWITCH ? "a fabric switch" : "on another node");
            return FALSE;
        }

    /* the node's NICs, in local order */
    g_autoptr(GArray) nics = g_array_new(FALSE, FALSE, sizeof(int));
    for (int d = 0; d < node->ndevs; d++)
        if (node->devs[d].kind == CS_DEV_NIC)
            g_array_append_val(nics, d);
    g_array_sort_with_data(nics, cmp_nic_local, (gpointer)node);
    int have = nics->len;

    p->nics = o->nics_per_node > 0 ? o->nics_per_node : have;
    if (o->nic != NULL) {
        p->nt = *cs_nic_type_find(o->nic);
        p->nt_label = g_strdup(p->nt.name);
        p->retype = TRUE;
    } else if (have > 0) {
        nic_type_of(&node->devs[g_array_index(nics, int, 0)], &p->nt, &p->nt_label);
    } else if (p->nics > 0) {
        cs_set_flag_error(err, "--nics-per-node", "the node has no NIC to copy; expected --nic "
                          "with one of %s", cs_nic_type_names());
        return FALSE;
    }
    if (nodes > 1 && p->nics == 0 && o->nic != NULL) {
        /* --nic retypes the node's NICs; a node with none needs a count */
        cs_set_flag_error(err, "--nics-per-node", "%d nodes need a network, but the node has no NIC for --nic %s "
                          "to retype; expected --nics-per-node N (NICs added to the node)", nodes, o->nic);
        return FALSE;
    }
    if (nodes > 1 && p->nics == 0) {
        cs_set_flag_error(err, "--nic", "%d nodes need a network, but the node has no NIC; "
                          "expected --nic with one of %s", nodes, cs_nic_type_names());
        return FALSE;
    }

    /* where extra NICs go: PCIe switches that carry a GPU, else any PCIe
     * switch, else the CPU sockets */
    p->nextra = MAX(0, p->nics - have);
    if (p->nextra > 0) {
        g_autoptr(GArray) parents = g_array_new(FALSE, FALSE, sizeof(int));
        for (int pass = 0; pass < 3 && parents->len == 0; pass++)
            for (int d = 0; d < node->ndevs; d++) {
                const cs_device_t *dv = &node->devs[d];
                if ((pass == 0 && dv->kind == CS_DEV_PCISW && has_pci_neighbour(node, d, CS_DEV_GPU)) ||
                    (pass == 1 && dv->kind == CS_DEV_PCISW) || (pass == 2 && dv->kind == CS_DEV_CPU))
                    g_array_append_val(parents, d);
            }
        if (parents->len == 0) {
            cs_set_error_at(err, src, 0, "no PCIe switch or CPU to attach %d more NICs to; "
                            "expected a node with a PCIe tree", p->nextra);
            return FALSE;
        }
        p->extra_parent = g_new(int, p->nextra);
        p->extra_gen = g_new(int, p->nextra);
        for (int j = 0; j < p->nextra; j++) {
            int parent = g_array_index(parents, int, j % parents->len);
            int gen = dev_pcie_gen(node, parent);
            p->extra_parent[j] = parent;
            p->extra_gen[j] = gen > 0 ? MIN(gen, p->nt.pcie_gen) : p->nt.pcie_gen;
        }
    }

    /* keep every device but the NICs past the count */
    p->pos = g_new(int, node->ndevs);
    p->nic_pos = g_new(int, MAX(1, p->nics));
    for (int d = 0; d < node->ndevs; d++)
        p->pos[d] = 0;
    for (int k = p->nics; k < have; k++)
        p->pos[g_array_index(nics, int, k)] = -1;
    for (int d = 0; d < node->ndevs; d++)
        if (p->pos[d] == 0)
            p->pos[d] = p->nkept++;
    for (int k = 0; k < MIN(have, p->nics); k++)
        p->nic_pos[k] = p->pos[g_array_index(nics, int, k)];
    for (int j = 0; j < p->nextra; j++)
        p->nic_pos[have + j] = p->nkept++;

    p->copy_links = g_array_new(FALSE, FALSE, sizeof(int));
    for (int l = 0; l < node->nlinks; l++) {
        const cs_link_t *ln = &node->links[l];
        if (l < ln->reverse && p->pos[ln->src] >= 0 && p->pos[ln->dst] >= 0)
            g_array_append_val(p->copy_links, l);
    }
    return TRUE;
}

/* ---- copying the nodes ------------------------------------------------------ */

static int add_link_like(cs_topo_t *t, int a, int b, const cs_link_t *fwd, const cs_link_t *rev)
{
    int l = cs_topo_add_link(t, a, b, fwd->kind, fwd->bw, fwd->lat, fwd->line);
    cs_link_t *f = &t->links[l], *r = &t->links[t->links[l].reverse];
    f->count = fwd->count;
    f->pcie_gen = fwd->pcie_gen;
    f->pcie_width = fwd->pcie_width;
    r->count = rev->count;
    r->pcie_gen = rev->pcie_gen;
    r->pcie_width = rev->pcie_width;
    r->bw = rev->bw;
    r->lat = rev->lat;
    return l;
}

/* Copies node k; returns the device index of its first device (copied
 * devices are contiguous, in plan order). */
static int copy_node(cs_topo_t *t, const cs_topo_t *node, const plan_t *p, int k, gboolean prefix)
{
    char name[256], ifname[64];
    int base = t->ndevs;
    for (int d = 0; d < node->ndevs; d++) {
        if (p->pos[d] < 0)
            continue;
        cs_device_t dv = node->devs[d];
        if (prefix) {
            g_snprintf(name, sizeof name, "n%d.%s", k, node->devs[d].name);
            dv.name = name;
        }
        dv.node = k;
        dv.rank = -1;
        if (dv.kind == CS_DEV_NIC && p->retype) {
            cs_pb_nic_fill(&dv, &p->nt, dv.local);
            g_snprintf(ifname, sizeof ifname, p->nt.rdma ? "mlx5_%d" : "eth%d", dv.local);
            dv.ifname = ifname;
        }
        int idx = cs_topo_add_device(t, &dv);
        g_assert(idx == base + p->pos[d]);
    }
    int have = p->nics - p->nextra;
    for (int j = 0; j < p->nextra; j++) {
        int local = have + j;
        cs_device_t dv;
        memset(&dv, 0, sizeof dv);
        dv.kind = CS_DEV_NIC;
        if (prefix)
            g_snprintf(name, sizeof name, "n%d.nic%d", k, local);
        else
            g_snprintf(name, sizeof name, "nic%d", local);
        dv.name = name;
        dv.node = k;
        dv.rank = -1;
        dv.socket = -1;
        cs_pb_nic_fill(&dv, &p->nt, local);
        g_snprintf(ifname, sizeof ifname, p->nt.rdma ? "mlx5_%d" : "eth%d", local);
        dv.ifname = ifname;
        int idx = cs_topo_add_device(t, &dv);
        g_assert(idx == base + p->nic_pos[local]);
    }
    for (guint i = 0; i < p->copy_links->len; i++) {
        const cs_link_t *fwd = &node->links[g_array_index(p->copy_links, int, i)];
        add_link_like(t, base + p->pos[fwd->src], base + p->pos[fwd->dst], fwd, &node->links[fwd->reverse]);
    }
    for (int j = 0; j < p->nextra; j++) {
        int gen = p->extra_gen[j], width = p->nt.pcie_width;
        int l = cs_topo_add_link(t, base + p->pos[p->extra_parent[j]], base + p->nic_pos[have + j],
                                 CS_LINK_PCI, cs_pcie_bw(gen, width), CS_PB_LAT_PCIE, 0);
        t->links[l].pcie_gen = t->links[t->links[l].reverse].pcie_gen = gen;
        t->links[l].pcie_width = t->links[t->links[l].reverse].pcie_width = width;
    }
    return base;
}

/* ---- the fabric -------------------------------------------------------------
 * Cables carry no latency of their own (propagation, ~5 ns/m, is left out);
 * the time through each switch is t->fabric.switch_lat, the NIC type's
 * switch latency, which the engines add per switch crossed, as for fabrics
 * read from XML (cs_topo_xml_default_lat). */

static int add_switch(cs_topo_t *t, const char *name, int tier)
{
    cs_device_t dv;
    memset(&dv, 0, sizeof dv);
    dv.kind = CS_DEV_SWITCH;
    dv.name = (char *)name;
    dv.node = -1;
    dv.local = -1;
    dv.rank = -1;
    dv.socket = -1;
    dv.tier = tier;
    return cs_topo_add_device(t, &dv);
}

static void cable(cs_topo_t *t, int a, int b, double bw)
{
    cs_topo_add_link(t, a, b, CS_LINK_NET, bw, 0.0, 0);
}

/* Switches above L leaves of radix R, each leaf with uplink capacity U:
 * - L <= R: one spine layer of min(R/2, ceil(L/2)) spines (as many as the
 *   leaves' uplink ports fill), every leaf cabled to every spine with U/S;
 * - L > R: pods of R/2 leaves, each with R/2 spines (U/(R/2) from each
 *   leaf), and R/2 core planes: spine j of every pod goes to core j with
 *   the spine's whole downlink capacity (non-blocking above the leaves).
 * Parallel cables between two switches are one link of their summed
 * bandwidth; a spine or core with more neighbours than ports stands for a
 * block of switches. */
static void build_clos(cs_topo_t *t, const int *leaves, int L, int R, double U)
{
    char name[64];
    if (L <= 1)
        return;
    if (L <= R) {
        int S = MIN(R / 2, (L + 1) / 2);
        for (int s = 0; s < S; s++) {
            g_snprintf(name, sizeof name, "spine%d", s);
            int sp = add_switch(t, name, 1);
            for (int i = 0; i < L; i++)
                cable(t, leaves[i], sp, U / S);
        }
        return;
    }
    int per_pod = R / 2, S = R / 2, npods = (L + per_pod - 1) / per_pod;
    int first_core = -1;
    for (int c = 0; c < S; c++) {
        g_snprintf(name, sizeof name, "core%d", c);
        int id = add_switch(t, name, 2);
        if (c == 0)
            first_core = id;
    }
    for (int pod = 0; pod < npods; pod++) {
        int lo = pod * per_pod, hi = MIN(L, lo + per_pod);
        for (int s = 0; s < S; s++) {
            g_snprintf(name, sizeof name, "pod%d.spine%d", pod, s);
            int sp = add_switch(t, name, 1);
            for (int i = lo; i < hi; i++)
                cable(t, leaves[i], sp, U / S);
            cable(t, sp, first_core + s, (hi - lo) * U / S);
        }
    }
}

static void build_fabric(cs_topo_t *t, const plan_t *p, const int *node_base, int nodes,
                         gboolean rail, double over)
{
    const radix_t *rx = radix_of(&p->nt);
    int R = rx->radix, P = R / 2, K = p->nics;
    char name[64];
    int nleaves, npl;
    g_autofree int *leaves = NULL;

    if (rail) {
        npl = P;
        int G = (nodes + npl - 1) / npl;
        nleaves = K * G;
        leaves = g_new(int, nleaves);
        for (int k = 0; k < K; k++)
            for (int g = 0; g < G; g++) {
                g_snprintf(name, sizeof name, "rail%d.leaf%d", k, g);
                leaves[k * G + g] = add_switch(t, name, 0);
            }
        for (int n = 0; n < nodes; n++)
            for (int k = 0; k < K; k++)
                cable(t, node_base[n] + p->nic_pos[k], leaves[k * G + n / npl], t->devs[node_base[n] + p->nic_pos[k]].nic_bw);
    } else {
        npl = MAX(1, P / K);
        nleaves = (int)(((gint64)nodes * K + P - 1) / P);
        leaves = g_new(int, nleaves);
        for (int i = 0; i < nleaves; i++) {
            g_snprintf(name, sizeof name, "leaf%d", i);
            leaves[i] = add_switch(t, name, 0);
        }
        for (int n = 0; n < nodes; n++)
            for (int k = 0; k < K; k++) {
                gint64 pos = (gint64)n * K + k;
                cable(t, node_base[n] + p->nic_pos[k], leaves[pos / P], t->devs[node_base[n] + p->nic_pos[k]].nic_bw);
            }
    }
    /* a leaf's uplinks carry its downlink capacity (P ports at the NIC's
     * speed) divided by the oversubscription. Rails of a single group stay
     * apart (no spine): traffic between rails crosses NVLink/PCIe inside a
     * node (NCCL's PXN) rather than the network. */
    if (!rail || nleaves > K)
        build_clos(t, leaves, nleaves, R, P * p->nt.bw / over);
    t->fabric.kind = rail ? CS_FABRIC_RAIL : CS_FABRIC_FAT_TREE;
    t->fabric.oversubscription = over;
    t->fabric.nodes_per_leaf = npl;
    t->fabric.switch_lat = p->nt.lat;
}

/* ---- the builder ------------------------------------------------------------ */

cs_topo_t *cs_cluster_build(const cs_topo_t *node, const cs_build_opts_t *opts, GError **err)
{
    cs_build_opts_t dflt;
    const cs_build_opts_t *o = opts;
    if (o == NULL) {
        cs_build_opts_init(&dflt);
        o = &dflt;
    }
    if (!cs_build_opts_check(o, err))
        return NULL;
    int nodes = o->nodes;
    double over = o->oversubscription > 0 ? o->oversubscription : 1.0;

    plan_t p;
    if (!plan_make(node, o, nodes, &p, err)) {
        plan_clear(&p);
        return NULL;
    }
    /* one node uses no network (NCCL keeps it on NVLink/PCIe/SHM), so it
     * gets a fabric only when one is asked for */
    gboolean want_fabric = p.nics > 0 && (nodes > 1 || o->fabric != NULL);
    gboolean rail = o->fabric != NULL ? strcmp(o->fabric, "rail") == 0 : p.nics > 1;

    GString *src = g_string_new(node->source != NULL ? node->source : "topology");
    if (nodes > 1)
        g_string_append_printf(src, " --nodes %d", nodes);
    if (want_fabric || p.retype || o->nics_per_node > 0)
        g_string_append_printf(src, " --nic %s --nics-per-node %d", p.nt_label, p.nics);
    if (want_fabric) {
        g_string_append_printf(src, " --fabric %s", rail ? "rail" : "fat-tree");
        if (over != 1.0)
            g_string_append_printf(src, " --oversubscription %g", over);
    }
    cs_topo_t *t = cs_topo_new(src->str);
    g_string_free(src, TRUE);

    g_autofree int *node_base = g_new(int, nodes);
    for (int k = 0; k < nodes; k++)
        node_base[k] = copy_node(t, node, &p, k, nodes > 1);
    if (want_fabric)
        build_fabric(t, &p, node_base, nodes, rail, over);

    GString *desc = g_string_new(NULL);
    if (nodes > 1)
        g_string_append_printf(desc, "%d x ", nodes);
    g_string_append(desc, node->description != NULL ? node->description : "node");
    if (p.nics > 0)
        g_string_append_printf(desc, ", %dx %s per node", p.nics, p.nt_label);
    if (want_fabric) {
        g_string_append_printf(desc, ", %s fabric", rail ? "rail" : "fat-tree");
        if (over != 1.0)
            g_string_append_printf(desc, " (%g:1 oversubscribed)", over);
    }
    g_free(t->description);
    t->description = g_string_free(desc, FALSE);
    plan_clear(&p);

    if (!cs_topo_finish(t, err)) {
        cs_topo_free(t);
        return NULL;
    }
    return t;
}
