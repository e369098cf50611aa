/* NCCL's topology dump (NCCL_TOPO_DUMP_FILE, root <system>) read into one
 * node, following what NCCL's own reader keeps (src/graph/topo.cc,
 * ncclTopoGetSystemFromXml and the ncclTopoAdd* functions, v2.28.9):
 *
 *  - <cpu> = a NUMA domain, joined to every other one by a SYS link.
 *  - <pci> is classified by its class prefix as NCCL's kvDictPciClass does:
 *    with a <gpu> child (that has a rank) it is the GPU, with a <nic> child
 *    the NIC; a bridge (0x0604..) or any class NCCL does not know becomes a
 *    PCIe switch and its children are read; other devices (NVSwitch,
 *    storage controllers without <nic>) are skipped, as NCCL skips them.
 *    The PCIe link to the parent has the element's link_speed/link_width.
 *  - <nvlink> to an NVSwitch class (or anything that is not a GPU or CPU,
 *    NCCL's fallback) goes to one NVSwitch device per node: NCCL too
 *    collapses all NVSwitch targets into one NVS node. GPU targets give a
 *    GPU-GPU bundle (listed by both GPUs, added once); CPU targets (POWER)
 *    an NVLink to the GPU's CPU.
 *  - <c2c bw count> (bw in MB/s per link) links the GPU to its CPU.
 *  - <pcilink target> (switch partitions joined inside one chip) becomes a
 *    PCIe link of NCCL's LOC_BW between the two switches.
 *
 * NCCL's dump does not say whether a NIC runs InfiniBand or RoCE. We use
 * the PCI class (0x0207.. = InfiniBand controller), then the device name
 * ("roce", "bnxt_re", "irdma", "qedr", "erdma", "efa": RDMA over Ethernet;
 * netdev names such as eth0, ens1f0, ib0, bond0: the socket transport,
 * ethernet), and default to InfiniBand. A collsim XML file says it
 * explicitly when this guess is wrong. */
#include "config.h"
#include "io/cs_topo_xml_int.h"
#include "util/cs_error.h"
#include "util/cs_units.h"

#include <string.h>

/* NCCL src/graph/topo.h: LOC_BW 5000 GB/s, the bandwidth NCCL gives links
 * that are not a real bottleneck (NIC straight on the CPU, pcilink). */
#define NCCL_LOC_BW 5000e9

typedef struct {
    cs_device_t d;
    xmlNodePtr el;
    int parent;              /* record index, -1 for CPUs */
    int gen, width;          /* PCIe link to the parent; 0 = not PCIe-timed */
    double up_bw;            /* bandwidth of the link to the parent */
    char *busid;             /* lower case, for nvlink and pcilink targets */
    int key;                 /* sort key: GPU rank, NIC first net dev */
    int dev;                 /* device index once added */
} rec_t;

typedef struct {
    cs_xml_ctx_t *c;
    GArray *recs;            /* rec_t */
    char *host_hash;
    xmlNodePtr host_el;
    int nkind[CS_DEV_KIND_COUNT];
} nccl_t;

static rec_t *rec(nccl_t *s, int i)
{
    return &g_array_index(s->recs, rec_t, i);
}

/* NCCL keeps at most NCCL_TOPO_MAX_NODES (640, src/include/graph.h)
 * devices of each kind; more is not a dump NCCL wrote, and the all-pairs
 * SYS links must stay bounded. */
#define NCCL_TOPO_MAX_NODES 640

static int rec_add(nccl_t *s, cs_dev_kind_t kind, xmlNodePtr el, int parent)
{
    if (++s->nkind[kind] > NCCL_TOPO_MAX_NODES) {
        cs_xml_fail(s->c, el, "more than %d %s devices; expected at most %d of a kind, as NCCL "
                    "(NCCL_TOPO_MAX_NODES)", NCCL_TOPO_MAX_NODES, cs_dev_kind_name(kind),
                    NCCL_TOPO_MAX_NODES);
        return -1;
    }
    rec_t r;
    memset(&r, 0, sizeof r);
    r.d.kind = kind;
    r.d.local = -1;
    r.d.rank = -1;
    r.d.socket = -1;
    r.d.line = cs_xml_line(el);
    r.el = el;
    r.parent = parent;
    r.dev = -1;
    g_array_append_val(s->recs, r);
    return (int)s->recs->len - 1;
}

/* NCCL's kvDictPciGen: "32.0 GT/s PCIe" (or the older "32 GT/s") -> gen;
 * unknown or empty strings get NCCL's fallback of 60 (x100 Mb/s per lane),
 * i.e. Gen3. */
static int pcie_gen_of(const char *speed)
{
    static const struct { double gts; int gen; } gens[] = {
        { 2.5, 1 }, { 5.0, 2 }, { 8.0, 3 }, { 16.0, 4 }, { 32.0, 5 }, { 64.0, 6 },
    };
    double v;
    const char *unit;
    if (speed == NULL)
        return 3;
    char *end = NULL;
    v = g_ascii_strtod(speed, &end);
    unit = end;
    if (end == speed || strncmp(g_strchug((char *)unit), "GT/s", 4) != 0)
        return 3;
    for (gsize i = 0; i < G_N_ELEMENTS(gens); i++)
        if (v == gens[i].gts)
            return gens[i].gen;
    return 3;
}

static gboolean pci_link_attrs(nccl_t *s, xmlNodePtr el, rec_t *r)
{
    g_autofree char *speed = cs_xml_attr(el, "link_speed");
    g_autofree char *width = cs_xml_attr(el, "link_width");
    r->gen = pcie_gen_of(speed);
    gint64 w = 16;   /* NCCL: width 0 (not in /sys) counts as x16 */
    if (width != NULL && *g_strstrip(width) != '\0' &&
        !cs_xml_attr_int(s->c, el, "link_width", 0, 32, &w))
        return FALSE;
    r->width = w == 0 ? 16 : (int)w;
    r->up_bw = cs_pcie_bw(r->gen, r->width);
    return TRUE;
}

/* A bus id attribute, in the one form records are matched by: a valid id
 * as cs_topo_busid_format writes it (NCCL compares bus ids by value,
 * busIdToInt64, so "000:18:00.0" and "0000:18:00" name 0000:18:00.0),
 * anything else lower-cased as it stands. */
static char *busid_attr(nccl_t *s, xmlNodePtr el, const char *name)
{
    char *v = cs_xml_attr_req(s->c, el, name, "a PCI bus id such as \"0000:18:00.0\"");
    if (v == NULL)
        return NULL;
    gint64 id;
    char buf[24];
    char *canon;
    if (cs_topo_busid_parse(v, &id)) {
        cs_topo_busid_format(id, buf);
        canon = g_strdup(buf);
    } else {
        canon = g_ascii_strdown(v, -1);
    }
    g_free(v);
    return canon;
}

/* "0x10de" -> 0x10de; 0 when absent or not a number. */
static unsigned hex_attr(xmlNodePtr el, const char *name)
{
    g_autofree char *v = cs_xml_attr(el, name);
    if (v == NULL)
        return 0;
    char *end = NULL;
    guint64 x = g_ascii_strtoull(g_strstrip(v), &end, 0);
    return end != v && *end == '\0' && x <= G_MAXUINT ? (unsigned)x : 0;
}

/* The first record of a kind at a bus id, -1 if none. */
static int find_busid(nccl_t *s, cs_dev_kind_t kind, const char *busid)
{
    for (guint i = 0; i < s->recs->len; i++)
        if (rec(s, i)->d.kind == kind && g_strcmp0(rec(s, i)->busid, busid) == 0)
            return (int)i;
    return -1;
}

static gboolean read_gpu(nccl_t *s, xmlNodePtr pci, xmlNodePtr gpu, int parent)
{
    int r = rec_add(s, CS_DEV_GPU, pci, parent);
    if (r < 0)
        return FALSE;
    rec(s, r)->busid = busid_attr(s, pci, "busid");
    if (rec(s, r)->busid == NULL || !pci_link_attrs(s, pci, rec(s, r)))
        return FALSE;
    int same = find_busid(s, CS_DEV_GPU, rec(s, r)->busid);
    if (same != r)   /* an earlier GPU has it */
        return cs_xml_fail(s->c, pci, "a second GPU at bus id %s (the first at line %d); expected each GPU's "
                           "own bus id, as NCCL writes them", rec(s, r)->busid, cs_xml_line(rec(s, same)->el));
    if (!cs_topo_busid_parse(rec(s, r)->busid, &rec(s, r)->d.pci_busid))
        rec(s, r)->d.pci_busid = 0;   /* a name NCCL's log would not print: the CUDA index instead */
    gint64 rank = -1, sm = 0, gdr = 0;
    if (!cs_xml_attr_int(s->c, gpu, "rank", 0, G_MAXINT, &rank) ||
        !cs_xml_attr_int(s->c, gpu, "sm", 10, 1000, &sm) ||
        !cs_xml_attr_int(s->c, gpu, "gdr", 0, 1, &gdr))
        return FALSE;
    g_autofree char *sm_s = cs_xml_attr(gpu, "sm");
    if (sm_s == NULL)
        return cs_xml_fail(s->c, gpu, "missing attribute 'sm' on <gpu>; expected the compute "
                           "capability such as sm=\"90\"");
    unsigned vendor = hex_attr(pci, "vendor"), device = hex_attr(pci, "device");
    const cs_gpu_model_t *m = cs_gpu_model_by_pci(vendor, device);
    if (m == NULL)
        m = cs_gpu_model_by_sm((int)sm);
    if (m == NULL)
        return cs_xml_fail(s->c, gpu, "unknown GPU (PCI device 0x%04x, sm %d); expected a GPU "
                           "known to the catalogue: %s", device, (int)sm, cs_gpu_model_names());
    rec_t *g = rec(s, r);
    g->d.gpu = m;
    g->d.gdr = gdr != 0;
    g->d.line = cs_xml_line(gpu);
    g->key = (int)rank;
    return TRUE;
}

/* NIC kind from what the dump offers (see the top of the file). */
static cs_nic_kind_t nic_kind_of(const char *cls, const char *name)
{
    static const char *const roce[] = { "roce", "bnxt_re", "irdma", "qedr", "erdma", "efa" };
    static const char *const netdev[] = { "eth", "en", "ib", "bond", "lo", "wl", "docker", "br" };
    if (cls != NULL && g_str_has_prefix(cls, "0x0207"))
        return CS_NIC_IB;
    if (name == NULL)
        return CS_NIC_IB;
    for (gsize i = 0; i < G_N_ELEMENTS(roce); i++)
        if (strstr(name, roce[i]) != NULL)
            return CS_NIC_ROCE;
    for (gsize i = 0; i < G_N_ELEMENTS(netdev); i++) {
        size_t n = strlen(netdev[i]);
        /* eth0, ens1f0, ib0, bond0, lo: the prefix then a digit or a
         * systemd-style letter, never "_" (mlx5_0, hfi1_0 are RDMA devices). */
        if (strncmp(name, netdev[i], n) == 0 && strchr(name, '_') == NULL &&
            (name[n] == '\0' || g_ascii_isdigit(name[n]) || strchr("spox", name[n]) != NULL))
            return CS_NIC_ETH;
    }
    return CS_NIC_IB;
}

/* A <nic>: its <net> children with a dev attribute are its ports (NCCL
 * skips the others). Returns TRUE with *added FALSE when it has none. */
static gboolean read_nic(nccl_t *s, xmlNodePtr pci, xmlNodePtr nic, int parent)
{
    int nets = 0;
    gint64 first_dev = G_MAXINT;
    g_autofree char *cls = pci != NULL ? cs_xml_attr(pci, "class") : NULL;
    g_autofree char *ifname = NULL;
    cs_device_t d = { .kind = CS_DEV_NIC };
    for (xmlNodePtr n = cs_xml_first_elem(nic); n != NULL; n = cs_xml_next_elem(n)) {
        if (!cs_xml_is(n, "net"))
            continue;
        g_autofree char *dev_s = cs_xml_attr(n, "dev");
        if (dev_s == NULL)
            continue;
        gint64 dev = 0, speed = 0, gdr = 0;
        if (!cs_xml_attr_int(s->c, n, "dev", 0, G_MAXINT, &dev) ||
            !cs_xml_attr_int(s->c, n, "speed", G_MININT, G_MAXINT, &speed) ||
            !cs_xml_attr_int(s->c, n, "gdr", 0, 1, &gdr))
            return FALSE;
        if (nets++ > 0) {
            first_dev = MIN(first_dev, dev);
            continue;
        }
        first_dev = dev;
        if (speed <= 0)
            speed = 10000;   /* topo.cc ncclTopoAddNet: "Some NICs define speed = -1" */
        ifname = cs_xml_attr(n, "name");
        if (ifname != NULL && *g_strstrip(ifname) == '\0')
            g_clear_pointer(&ifname, g_free);   /* name="": no device name */
        d.nic_kind = nic_kind_of(cls, ifname);
        d.nic_bw = speed * 1e6 / 8;   /* Mb/s */
        d.gdr = gdr != 0;
        d.line = cs_xml_line(n);
    }
    if (nets == 0)
        return TRUE;
    xmlNodePtr at = pci != NULL ? pci : nic;
    int r = rec_add(s, CS_DEV_NIC, at, parent);
    if (r < 0)
        return FALSE;
    rec_t *x = rec(s, r);
    x->d.nic_kind = d.nic_kind;
    x->d.nic_bw = d.nic_bw;
    x->d.nic_ports = nets;
    x->d.gdr = d.gdr;
    x->d.ifname = g_steal_pointer(&ifname);
    x->d.line = d.line;
    x->key = (int)first_dev;
    if (pci == NULL) {
        x->up_bw = NCCL_LOC_BW;   /* topo.cc ncclTopoAddCpu: a NIC without PCI path */
        return TRUE;
    }
    /* Both ports of a multi-port card are <net>s of one <nic>: NCCL's IB
     * plugin reports function 0 for every port (net_ib/init.cc
     * ncclIbGetPciPath, "Merge multi-port NICs into the same PCI device"). */
    x->busid = busid_attr(s, pci, "busid");
    return x->busid != NULL && pci_link_attrs(s, pci, x);
}

static gboolean read_pci(nccl_t *s, xmlNodePtr el, int parent)
{
    g_autofree char *cls = cs_xml_attr_req(s->c, el, "class", "a PCI class such as \"0x060400\"");
    if (cls == NULL)
        return FALSE;
    g_strstrip(cls);
    xmlNodePtr gpu = NULL, nic = NULL;
    for (xmlNodePtr k = cs_xml_first_elem(el); k != NULL; k = cs_xml_next_elem(k)) {
        if (gpu == NULL && cs_xml_is(k, "gpu"))
            gpu = k;
        if (nic == NULL && cs_xml_is(k, "nic"))
            nic = k;
    }
    if (gpu != NULL) {
        g_autofree char *rank = cs_xml_attr(gpu, "rank");
        /* topo.cc ncclTopoAddPci: a GPU without rank is not in the job. */
        return rank == NULL || read_gpu(s, el, gpu, parent);
    }
    if (nic != NULL)
        return read_nic(s, el, nic, parent);
    /* kvDictPciClass order: bridge and CX-8 data direct are PCI, then
     * NVSwitch, CPU, GPU, NIC; anything else falls back to PCI. */
    gboolean is_pci = g_str_has_prefix(cls, "0x060400") || g_str_has_prefix(cls, "0x080100") ||
                      !(g_str_has_prefix(cls, "0x068000") || g_str_has_prefix(cls, "0x068001") ||
                        g_str_has_prefix(cls, "0x03") || g_str_has_prefix(cls, "0x02"));
    if (!is_pci)
        return TRUE;
    int r = rec_add(s, CS_DEV_PCISW, el, parent);
    if (r < 0)
        return FALSE;
    rec(s, r)->busid = busid_attr(s, el, "busid");
    if (rec(s, r)->busid == NULL || !pci_link_attrs(s, el, rec(s, r)))
        return FALSE;
    for (xmlNodePtr k = cs_xml_first_elem(el); k != NULL; k = cs_xml_next_elem(k))
        if (cs_xml_is(k, "pci") && !read_pci(s, k, r))
            return FALSE;
    return TRUE;
}

static gboolean read_cpu(nccl_t *s, xmlNodePtr el, int *ncpu)
{
    g_autofree char *hh = cs_xml_attr(el, "host_hash");
    if (s->host_el == NULL) {
        s->host_el = el;
        s->host_hash = g_strdup(hh);
    } else if (g_strcmp0(hh, s->host_hash) != 0) {
        return cs_xml_fail(s->c, el, "a second host (host_hash %s, first %s at line %d); expected "
                           "a one-node dump (replicate it with --nodes)", hh ? hh : "none",
                           s->host_hash ? s->host_hash : "none", cs_xml_line(s->host_el));
    }
    gint64 numa = -1, family = 0, model = 0;
    if (!cs_xml_attr_int(s->c, el, "numaid", -1, 4095, &numa))
        return FALSE;
    g_autofree char *arch = cs_xml_attr_req(s->c, el, "arch", "x86_64, arm64 or ppc64");
    if (arch == NULL)
        return FALSE;
    cs_cpu_vendor_t v = CS_CPU_OTHER;
    if (strcmp(g_strstrip(arch), "x86_64") == 0) {
        g_autofree char *vendor = cs_xml_attr_req(s->c, el, "vendor",
                                                  "the CPUID vendor such as \"GenuineIntel\"");
        if (vendor == NULL)
            return FALSE;
        v = strcmp(vendor, "GenuineIntel") == 0 ? CS_CPU_INTEL :
            strcmp(vendor, "AuthenticAMD") == 0 ? CS_CPU_AMD : CS_CPU_OTHER;
        if (!cs_xml_attr_int(s->c, el, "familyid", 0, 4095, &family) ||
            !cs_xml_attr_int(s->c, el, "modelid", 0, 4095, &model))
            return FALSE;
    } else if (strcmp(arch, "arm64") == 0) {
        v = CS_CPU_ARM;
    } else if (strcmp(arch, "ppc64") == 0) {
        v = CS_CPU_POWER;
    }
    int r = rec_add(s, CS_DEV_CPU, el, -1);
    if (r < 0)
        return FALSE;
    rec(s, r)->d.vendor = v;
    rec(s, r)->d.socket = numa >= 0 ? (int)numa : *ncpu;
    rec(s, r)->d.familyid = (int)family;
    rec(s, r)->d.modelid = (int)model;
    /* Intel's generation from the CPUID, as NCCL picks it. */
    rec(s, r)->up_bw = cs_topo_xml_sys_bw(v, (int)family, (int)model);
    (*ncpu)++;
    for (xmlNodePtr k = cs_xml_first_elem(el); k != NULL; k = cs_xml_next_elem(k)) {
        if (cs_xml_is(k, "pci") && !read_pci(s, k, r))
            return FALSE;
        if (cs_xml_is(k, "nic") && !read_nic(s, NULL, k, r))
            return FALSE;
    }
    return TRUE;
}

/* ---- second pass: NVLink, C2C and pcilink ------------------------------ */

static int rec_cpu(nccl_t *s, int r)
{
    while (r >= 0 && rec(s, r)->d.kind != CS_DEV_CPU)
        r = rec(s, r)->parent;
    return r;
}

typedef struct {
    int a, b;                /* record indices */
    cs_link_kind_t kind;
    int count;
    double bw;
    int line;
} plink_t;

static void plink_add(GArray *links, int a, int b, cs_link_kind_t kind, int count, double bw, int line)
{
    for (guint i = 0; i < links->len; i++) {
        plink_t *o = &g_array_index(links, plink_t, i);
        if (o->kind == kind && ((o->a == a && o->b == b) || (o->a == b && o->b == a)))
            return;   /* both GPUs list their shared bundle */
    }
    plink_t l = { a, b, kind, count, bw, line };
    g_array_append_val(links, l);
}

static gboolean read_gpu_links(nccl_t *s, int g, int *nvs_count, GArray *links)
{
    rec_t *gr = rec(s, g);
    xmlNodePtr gpu = NULL;
    for (xmlNodePtr k = cs_xml_first_elem(gr->el); k != NULL && gpu == NULL; k = cs_xml_next_elem(k))
        if (cs_xml_is(k, "gpu"))
            gpu = k;
    if (gpu == NULL)
        return TRUE;
    const cs_gpu_model_t *m = gr->d.gpu;
    for (xmlNodePtr k = cs_xml_first_elem(gpu); k != NULL; k = cs_xml_next_elem(k)) {
        if (cs_xml_is(k, "nvlink")) {
            gint64 count = 0;
            g_autofree char *count_s = cs_xml_attr_req(s->c, k, "count", "the number of links");
            g_autofree char *tclass = cs_xml_attr_req(s->c, k, "tclass", "a PCI class such as \"0x068000\"");
            if (count_s == NULL || tclass == NULL || !cs_xml_attr_int(s->c, k, "count", 1, 1024, &count))
                return FALSE;
            g_strstrip(tclass);
            if (!(m->nvlink_bw > 0))
                return cs_xml_fail(s->c, k, "<nvlink> on GPU model %s, which has no NVLink; expected "
                                   "a GPU with NVLink (check the PCI device id and sm)", m->name);
            if (g_str_has_prefix(tclass, "0x03")) {
                g_autofree char *target = busid_attr(s, k, "target");
                if (target == NULL)
                    return FALSE;
                int peer = find_busid(s, CS_DEV_GPU, target);
                if (peer < 0 || peer == g)
                    continue;   /* topo.cc: a peer outside the job adds nothing */
                double per = MIN(m->nvlink_bw, rec(s, peer)->d.gpu->nvlink_bw);
                plink_add(links, g, peer, CS_LINK_NVL, (int)count, count * per, cs_xml_line(k));
            } else if (g_str_has_prefix(tclass, "0x068001")) {
                int cpu = rec_cpu(s, g);
                if (cpu >= 0)
                    plink_add(links, g, cpu, CS_LINK_NVL, (int)count, count * m->nvlink_bw,
                              cs_xml_line(k));
            } else {
                *nvs_count += (int)count;
                if (*nvs_count > 1024)
                    return cs_xml_fail(s->c, k, "%d NVLinks from one GPU to NVSwitches; expected at "
                                       "most 1024", *nvs_count);
            }
        } else if (cs_xml_is(k, "c2c")) {
            gint64 count = 0, bw = 0;
            g_autofree char *count_s = cs_xml_attr_req(s->c, k, "count", "the number of links");
            g_autofree char *bw_s = cs_xml_attr_req(s->c, k, "bw", "MB/s per link");
            if (count_s == NULL || bw_s == NULL || !cs_xml_attr_int(s->c, k, "count", 1, 1024, &count) ||
                !cs_xml_attr_int(s->c, k, "bw", 1, G_MAXINT, &bw))
                return FALSE;
            int cpu = rec_cpu(s, g);
            if (cpu >= 0)   /* topo.cc ncclTopoAddC2c: bw * count / 1000 GB/s */
                plink_add(links, g, cpu, CS_LINK_C2C, (int)count, (double)bw * count * 1e6,
                          cs_xml_line(k));
        }
    }
    return TRUE;
}

static gboolean read_pcilinks(nccl_t *s, int r, GArray *links)
{
    for (xmlNodePtr k = cs_xml_first_elem(rec(s, r)->el); k != NULL; k = cs_xml_next_elem(k)) {
        if (!cs_xml_is(k, "pcilink"))
            continue;
        g_autofree char *target = busid_attr(s, k, "target");
        if (target == NULL)
            return FALSE;
        int peer = find_busid(s, CS_DEV_PCISW, target);
        if (peer >= 0 && peer != r)
            plink_add(links, r, peer, CS_LINK_PCI, 1, NCCL_LOC_BW, cs_xml_line(k));
    }
    return TRUE;
}

/* ---- assembling the node ----------------------------------------------- */

static int rec_order_cmp(gconstpointer pa, gconstpointer pb, gpointer data)
{
    nccl_t *s = data;
    const rec_t *a = rec(s, *(const int *)pa), *b = rec(s, *(const int *)pb);
    if (a->d.kind != b->d.kind)
        return a->d.kind == CS_DEV_CPU ? -1 : b->d.kind == CS_DEV_CPU ? 1 :
               a->d.kind == CS_DEV_PCISW ? -1 : b->d.kind == CS_DEV_PCISW ? 1 :
               a->d.kind == CS_DEV_GPU ? -1 : 1;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return *(const int *)pa - *(const int *)pb;
}

static void rec_name(cs_device_t *d, int nth)
{
    const char *stem = d->kind == CS_DEV_CPU ? "cpu" : d->kind == CS_DEV_PCISW ? "pcisw" :
                       d->kind == CS_DEV_GPU ? "gpu" : "nic";
    d->name = g_strdup_printf("%s%d", stem, nth);
}

static cs_topo_t *assemble(nccl_t *s, xmlNodePtr root)
{
    int n = (int)s->recs->len, ngpu = 0;
    g_autofree int *order = g_new(int, MAX(n, 1));
    for (int i = 0; i < n; i++) {
        order[i] = i;
        ngpu += rec(s, i)->d.kind == CS_DEV_GPU;
    }
    if (ngpu == 0)
        return cs_xml_fail(s->c, root, "no <gpu> with a rank; expected an NCCL topology dump with "
                           "at least one GPU"), NULL;
    g_qsort_with_data(order, n, sizeof(int), rec_order_cmp, s);

    g_autoptr(cs_topo_t) t = cs_topo_new(s->c->file);
    int nth[CS_DEV_KIND_COUNT] = { 0 };
    for (int i = 0; i < n; i++) {
        rec_t *r = rec(s, order[i]);
        if (r->d.kind == CS_DEV_GPU && i > 0 && rec(s, order[i - 1])->d.kind == CS_DEV_GPU &&
            rec(s, order[i - 1])->key == r->key) {
            const rec_t *o = rec(s, order[i - 1]);
            const rec_t *later = o->d.line > r->d.line ? o : r, *first = later == o ? r : o;
            cs_set_error_at(s->c->err, s->c->file, later->d.line, "duplicate rank %d (first at line "
                            "%d); expected one GPU per rank", r->key, first->d.line);
            return NULL;
        }
        cs_device_t d = r->d;
        d.node = 0;
        if (d.kind == CS_DEV_GPU || d.kind == CS_DEV_NIC)
            d.local = nth[d.kind];
        rec_name(&d, nth[d.kind]++);
        r->dev = cs_topo_add_device(t, &d);
        g_free(d.name);
    }

    /* Tree links, then SYS between NUMA domains, then the second-pass ones. */
    for (int i = 0; i < n; i++) {
        const rec_t *r = rec(s, order[i]);
        if (r->parent < 0)
            continue;
        int l = cs_topo_add_link(t, rec(s, r->parent)->dev, r->dev, CS_LINK_PCI, r->up_bw,
                                 cs_topo_xml_default_lat(CS_LINK_PCI), r->d.line);
        t->links[l].pcie_gen = t->links[l + 1].pcie_gen = r->gen;
        t->links[l].pcie_width = t->links[l + 1].pcie_width = r->width;
    }
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            const rec_t *a = rec(s, order[i]), *b = rec(s, order[j]);
            if (a->d.kind == CS_DEV_CPU && b->d.kind == CS_DEV_CPU)
                cs_topo_add_link(t, a->dev, b->dev, CS_LINK_SYS, MIN(a->up_bw, b->up_bw),
                                 cs_topo_xml_default_lat(CS_LINK_SYS), b->d.line);
        }

    g_autoptr(GArray) links = g_array_new(FALSE, FALSE, sizeof(plink_t));
    g_autofree int *nvs = g_new0(int, MAX(n, 1));
    gboolean any_nvs = FALSE;
    for (int i = 0; i < n; i++) {
        int r = order[i];
        if (rec(s, r)->d.kind == CS_DEV_GPU && !read_gpu_links(s, r, &nvs[r], links))
            return NULL;
        if (rec(s, r)->d.kind == CS_DEV_PCISW && !read_pcilinks(s, r, links))
            return NULL;
        any_nvs |= nvs[r] > 0;
    }
    if (any_nvs) {
        cs_device_t d = { .kind = CS_DEV_NVSWITCH, .name = "nvs0", .node = 0, .local = -1,
                          .rank = -1, .socket = -1, .line = cs_xml_line(root) };
        int sw = cs_topo_add_device(t, &d);
        for (int i = 0; i < n; i++) {
            int r = order[i];
            if (nvs[r] == 0)
                continue;
            const rec_t *g = rec(s, r);
            int l = cs_topo_add_link(t, g->dev, sw, CS_LINK_NVL, nvs[r] * g->d.gpu->nvlink_bw,
                                     cs_topo_xml_default_lat(CS_LINK_NVL), g->d.line);
            t->links[l].count = t->links[l + 1].count = nvs[r];
        }
    }
    for (guint i = 0; i < links->len; i++) {
        const plink_t *p = &g_array_index(links, plink_t, i);
        int l = cs_topo_add_link(t, rec(s, p->a)->dev, rec(s, p->b)->dev, p->kind, p->bw,
                                 cs_topo_xml_default_lat(p->kind), p->line);
        t->links[l].count = t->links[l + 1].count = p->count;
    }
    return g_steal_pointer(&t);
}

static void recs_free(GArray *recs)
{
    for (guint i = 0; i < recs->len; i++) {
        g_free(g_array_index(recs, rec_t, i).busid);
        g_free(g_array_index(recs, rec_t, i).d.ifname);
    }
    g_array_free(recs, TRUE);
}

/* Reads an NCCL <system> dump into a finished one-node topology. */
cs_topo_t *cs_topo_xml_load_nccl(cs_xml_ctx_t *c, xmlDocPtr doc)
{
    xmlNodePtr root = xmlDocGetRootElement(doc);
    nccl_t s = { c, g_array_new(FALSE, TRUE, sizeof(rec_t)), NULL, NULL, { 0 } };
    cs_topo_t *t = NULL;
    g_autofree char *base = g_path_get_basename(c->file);
    int ncpu = 0;
    for (xmlNodePtr k = cs_xml_first_elem(root); k != NULL; k = cs_xml_next_elem(k))
        if (cs_xml_is(k, "cpu") && !read_cpu(&s, k, &ncpu))
            goto out;
    t = assemble(&s, root);
    if (t == NULL)
        goto out;
    t->description = g_strdup_printf("%s (NCCL topology dump)", base);
    if (!cs_topo_finish(t, c->err))
        g_clear_pointer(&t, cs_topo_free);
out:
    recs_free(s.recs);
    g_free(s.host_hash);
    return t;
}
