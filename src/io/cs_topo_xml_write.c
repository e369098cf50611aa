/* Writing a topology as collsim-topology(5) XML, streamed: the text is
 * produced element by element into a string, or only counted. A cluster of
 * thousands of nodes is tens of MiB of XML; a document tree of it took a
 * GiB and seconds to build (12000 DGX H100 nodes: 66 MiB of text, 1 GiB of
 * tree), only for `topo xml` to find it past the 64 MiB a topology file may
 * have. The text is byte for byte what libxml2's formatted dump of the same
 * tree gave (two spaces a level, empty elements closed with "/>", the
 * attributes in the order written), so files written before read the same. */
#include "config.h"
#include "io/cs_topo_xml.h"

#include <string.h>

typedef struct {
    GString *s;        /* NULL: count only */
    gsize len;
    gboolean open;     /* a start tag is waiting for its '>' or "/>" */
    int depth;
} xw_t;

static void put(xw_t *w, const char *p, gsize n)
{
    w->len += n;
    if (w->s != NULL)
        g_string_append_len(w->s, p, n);
}

static void puts_(xw_t *w, const char *p)
{
    put(w, p, strlen(p));
}

static void indent(xw_t *w)
{
    static const char spaces[] = "                                ";
    for (int d = w->depth * 2; d > 0; d -= (int)sizeof spaces - 1)
        put(w, spaces, MIN(d, (int)sizeof spaces - 1));
}

/* Closes a pending start tag that gets children. */
static void close_open(xw_t *w)
{
    if (w->open) {
        puts_(w, ">\n");
        w->open = FALSE;
    }
}

static void start(xw_t *w, const char *tag)
{
    close_open(w);
    indent(w);
    puts_(w, "<");
    puts_(w, tag);
    w->open = TRUE;
    w->depth++;
}

static void end(xw_t *w, const char *tag)
{
    w->depth--;
    if (w->open) {
        puts_(w, "/>\n");
        w->open = FALSE;
        return;
    }
    indent(w);
    puts_(w, "</");
    puts_(w, tag);
    puts_(w, ">\n");
}

/* An attribute value as libxml2 escapes it in a UTF-8 document: the markup
 * characters and the three whitespace controls as references; any other
 * control character is '?' (XML 1.0 cannot carry it; a description may
 * come from a file name); invalid UTF-8 is made valid first. */
static void attr(xw_t *w, const char *name, const char *v)
{
    g_autofree char *clean = g_utf8_make_valid(v, -1);
    puts_(w, " ");
    puts_(w, name);
    puts_(w, "=\"");
    const char *run = clean;
    for (const char *p = clean;; p++) {
        unsigned char c = (unsigned char)*p;
        const char *rep = c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : c == '"' ? "&quot;"
                        : (c < 0x20 && c != '\0') || c == 0x7f ? "?" : NULL;
        if (rep == NULL && c != '\0')
            continue;
        put(w, run, p - run);
        if (c == '\0')
            break;
        puts_(w, rep);
        run = p + 1;
    }
    puts_(w, "\"");
}

static void attr_num(xw_t *w, const char *name, double v)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    /* %.17g: strtod reads back the very same double. */
    g_ascii_formatd(buf, sizeof buf, "%.17g", v);
    attr(w, name, buf);
}

static void attr_int(xw_t *w, const char *name, int v)
{
    char buf[32];
    g_snprintf(buf, sizeof buf, "%d", v);
    attr(w, name, buf);
}

/* "--" may not appear inside a comment: "-_" instead. */
static void comment(xw_t *w, const char *text)
{
    close_open(w);
    indent(w);
    g_autofree char *t = g_strdup(text);
    for (char *p = strstr(t, "--"); p != NULL; p = strstr(p, "--"))
        p[1] = '_';
    puts_(w, "<!--");
    puts_(w, t);
    puts_(w, "-->\n");
}

/* A device's id inside its <node>: its name without "n<node>." when the
 * reader will put that prefix back, that is when the file has several
 * nodes (stamp_node). With one node the name is the id as it is: stripping
 * there would write "n0.gpu0" and "gpu0" both as "gpu0". */
static const char *local_id(const cs_device_t *d, gboolean prefixed)
{
    char prefix[32];
    g_snprintf(prefix, sizeof prefix, "n%d.", d->node);
    return prefixed && d->node >= 0 && g_str_has_prefix(d->name, prefix) ? d->name + strlen(prefix) : d->name;
}

static void write_device(xw_t *w, const cs_device_t *d, gboolean prefixed)
{
    const char *tag = cs_dev_kind_name(d->kind);
    start(w, tag);
    attr(w, "id", d->kind == CS_DEV_SWITCH ? d->name : local_id(d, prefixed));
    switch (d->kind) {
    case CS_DEV_GPU:
        attr(w, "model", d->gpu != NULL ? d->gpu->name : "?");
        attr(w, "gdr", d->gdr ? "yes" : "no");
        if (d->p2p_force != 0)
            attr(w, "p2p", d->p2p_force > 0 ? "yes" : "no");
        if (d->pci_busid != 0) {
            char bus[24];
            cs_topo_busid_format(d->pci_busid, bus);
            attr(w, "busid", bus);
        }
        break;
    case CS_DEV_CPU:
        attr(w, "vendor", cs_cpu_vendor_name(d->vendor));
        if (d->socket >= 0)
            attr_int(w, "socket", d->socket);
        if (d->familyid > 0 || d->modelid > 0) {
            attr_int(w, "familyid", d->familyid);
            attr_int(w, "modelid", d->modelid);
        }
        break;
    case CS_DEV_NIC:
        attr(w, "kind", cs_nic_kind_name(d->nic_kind));
        attr_num(w, "speed", d->nic_bw);
        attr_int(w, "ports", d->nic_ports > 0 ? d->nic_ports : 1);
        attr(w, "gdr", d->gdr ? "yes" : "no");
        if (d->ifname != NULL && d->ifname[0] != '\0')
            attr(w, "ifname", d->ifname);
        break;
    case CS_DEV_SWITCH:
        attr_int(w, "tier", d->tier);
        break;
    case CS_DEV_NVSWITCH:
    case CS_DEV_PCISW:
    case CS_DEV_KIND_COUNT:
        break;
    }
    end(w, tag);
}

static void write_link(xw_t *w, const cs_topo_t *t, const cs_link_t *l, gboolean fabric, gboolean prefixed)
{
    const cs_device_t *a = &t->devs[l->src], *b = &t->devs[l->dst];
    start(w, "link");
    attr(w, "a", fabric ? a->name : local_id(a, prefixed));
    attr(w, "b", fabric ? b->name : local_id(b, prefixed));
    attr(w, "type", cs_link_kind_name(l->kind));
    if (l->kind == CS_LINK_NVL || l->kind == CS_LINK_C2C || (l->kind == CS_LINK_NET && l->count > 1))
        attr_int(w, "count", l->count);
    if (l->kind == CS_LINK_PCI && l->pcie_gen > 0)
        attr_int(w, "gen", l->pcie_gen);
    if (l->kind == CS_LINK_PCI && l->pcie_width > 0)
        attr_int(w, "width", l->pcie_width);
    attr_num(w, "bw", l->bw);
    attr_num(w, "lat", l->lat);
    end(w, "link");
}

static const char *fabric_kind_name(cs_fabric_kind_t k)
{
    switch (k) {
    case CS_FABRIC_RAIL: return "rail";
    case CS_FABRIC_FAT_TREE: return "fat-tree";
    case CS_FABRIC_CUSTOM: return "custom";
    case CS_FABRIC_NONE: break;
    }
    return "custom";
}

/* A link written inside its node: both ends on that node, not a cable. */
static int link_node(const cs_topo_t *t, const cs_link_t *l)
{
    int na = t->devs[l->src].node, nb = t->devs[l->dst].node;
    return l->kind != CS_LINK_NET && na >= 0 && na == nb ? na : -1;
}

/* Every device and link explicitly (no derived values, no count=
 * replication), so that reading it back gives the same graph whatever
 * built the original. With several nodes, node devices' names must be
 * "n<node>.<id>" (as the reader and the cluster builder name them) for the
 * names to survive; with one node any name does. Each node's devices, then
 * its links, in index order; then the fabric's. */
static void write_topo(xw_t *w, const cs_topo_t *t)
{
    puts_(w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    start(w, "collsim-topology");
    attr(w, "version", "1");
    if (t->description != NULL)
        attr(w, "description", t->description);

    int nnodes = 0;
    for (int i = 0; i < t->ndevs; i++)
        nnodes = MAX(nnodes, t->devs[i].node + 1);
    /* the node's devices and links, by node: counting sort of the indices */
    g_autofree int *dev_off = g_new0(int, nnodes + 2), *link_off = g_new0(int, nnodes + 2);
    g_autofree int *devs = g_new(int, MAX(t->ndevs, 1)), *links = g_new(int, MAX(t->nlinks, 1));
    gboolean any_fabric = FALSE;
    for (int i = 0; i < t->ndevs; i++) {
        if (t->devs[i].node >= 0)
            dev_off[t->devs[i].node + 2]++;
        else
            any_fabric = TRUE;
    }
    for (int i = 0; i < t->nlinks; i++) {
        const cs_link_t *l = &t->links[i];
        if (l->reverse < i)   /* each pair once, from the lower index */
            continue;
        int n = link_node(t, l);
        if (n >= 0)
            link_off[n + 2]++;
        else
            any_fabric = TRUE;
    }
    for (int n = 0; n < nnodes; n++) {
        dev_off[n + 2] += dev_off[n + 1];
        link_off[n + 2] += link_off[n + 1];
    }
    for (int i = 0; i < t->ndevs; i++)
        if (t->devs[i].node >= 0)
            devs[dev_off[t->devs[i].node + 1]++] = i;
    for (int i = 0; i < t->nlinks; i++) {
        int n = t->links[i].reverse < i ? -1 : link_node(t, &t->links[i]);
        if (n >= 0)
            links[link_off[n + 1]++] = i;
    }

    /* the reader names devices "n<k>.<id>" when there are several <node>s */
    gboolean prefixed = nnodes > 1;
    for (int n = 0; n < nnodes; n++) {
        start(w, "node");
        for (int k = dev_off[n]; k < dev_off[n + 1]; k++)
            write_device(w, &t->devs[devs[k]], prefixed);
        for (int k = link_off[n]; k < link_off[n + 1]; k++)
            write_link(w, t, &t->links[links[k]], FALSE, prefixed);
        end(w, "node");
    }
    if (any_fabric || t->fabric.kind != CS_FABRIC_NONE) {
        start(w, "fabric");
        attr(w, "kind", fabric_kind_name(t->fabric.kind));
        attr_num(w, "oversubscription", t->fabric.oversubscription >= 1 ? t->fabric.oversubscription : 1);
        if (any_fabric) {
            attr_int(w, "nodes-per-leaf", MAX(t->fabric.nodes_per_leaf, 1));
            attr_num(w, "switch-lat", t->fabric.switch_lat);
        }
        for (int i = 0; i < t->ndevs; i++)
            if (t->devs[i].node < 0)
                write_device(w, &t->devs[i], prefixed);
        for (int i = 0; i < t->nlinks; i++) {
            const cs_link_t *l = &t->links[i];
            if (l->reverse < i)
                continue;
            int na = t->devs[l->src].node, nb = t->devs[l->dst].node;
            if (l->kind == CS_LINK_NET)
                write_link(w, t, l, TRUE, prefixed);
            else if (na < 0 || na != nb) {
                g_autofree char *what = g_strdup_printf(" %s link %s to %s spans nodes: not "
                                                        "expressible in collsim-topology(5) ",
                                                        cs_link_kind_name(l->kind),
                                                        t->devs[l->src].name, t->devs[l->dst].name);
                comment(w, what);
            }
        }
        end(w, "fabric");
    }
    end(w, "collsim-topology");
}

char *cs_topo_xml_write(const cs_topo_t *t)
{
    g_return_val_if_fail(t != NULL, NULL);
    xw_t w = { .s = g_string_new(NULL) };
    write_topo(&w, t);
    return g_string_free(w.s, FALSE);
}

gsize cs_topo_xml_length(const cs_topo_t *t)
{
    g_return_val_if_fail(t != NULL, 0);
    xw_t w = { .s = NULL };
    write_topo(&w, t);
    return w.len;
}
