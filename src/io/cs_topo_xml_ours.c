/* collsim's own topology format (collsim-topology(5)): reading with
 * precise per-element checks, and writing any topology back out.
 *
 * A <node> element is parsed once into a template (devices and links with
 * derived bandwidths), then stamped out 'count' times, the devices named
 * "n<k>.<id>" when the file has several nodes (bare ids with one, as the
 * cluster builder names them). The <fabric> either lists switches and
 * cables, or (rail or fat-tree with no children) is built by
 * cs_cluster_build() from the single node type. */
#include "config.h"
#include "io/cs_topo_xml.h"
#include "io/cs_topo_xml_int.h"
#include "models/cs_presets.h"
#include "util/cs_error.h"
#include "util/cs_units.h"

#include <math.h>
#include <string.h>

/* ---- documented defaults ----------------------------------------------- */

/* Per-direction latency of a link whose file gives no lat=. Intra-node hops
 * get 0, as the preset builders do (cs_presets-int.h CS_PB_LAT_*): NCCL's
 * per-hop protocol costs (tuning.cc hwLat) are in the parameter set, and
 * counting a physical figure here as well would charge them twice. Network
 * cables also get 0 here; the time through each fabric switch is
 * cs_fabric_t.switch_lat (default: the NIC type's switch latency from the
 * catalogue in cs_hw.c). */
double cs_topo_xml_default_lat(cs_link_kind_t kind)
{
    switch (kind) {
    case CS_LINK_NVL: return 0.0;
    case CS_LINK_C2C: return 0.0;
    case CS_LINK_PCI: return 0.0;
    case CS_LINK_SYS: return 0.0;
    case CS_LINK_NET: return 0.0;
    }
    return 0.0;
}

/* Socket-to-socket bandwidth per direction when a sys link gives no bw=:
 * the catalogue's CPU part of the same generation (cs_cpu_part_by_cpuid,
 * cs_hw.c, with its Intel ARK and AMD sources); an Intel CPU without a CPUID
 * gets Sapphire Rapids (the DGX H100 CPU), an AMD one EPYC Rome. Arm and
 * POWER: NCCL's own figures, ARM_BW 6 GB/s and P9_BW 32 GB/s
 * (src/graph/topo.h), for want of a vendor figure covering the range of
 * parts; other vendors likewise get 6 GB/s. */
double cs_topo_xml_sys_bw(cs_cpu_vendor_t v, int familyid, int modelid)
{
    const cs_cpu_part_t *part = cs_cpu_part_by_cpuid(v, familyid, modelid);
    if (part == NULL && v == CS_CPU_INTEL)
        part = cs_cpu_part_find("spr");
    if (part == NULL && v == CS_CPU_AMD)
        part = cs_cpu_part_find("rome");
    if (part != NULL)
        return part->sys_bw;
    return v == CS_CPU_POWER ? 32e9 : 6e9;
}

/* NVLink-C2C between a Grace CPU and its GPU: 900 GB/s total, 450 GB/s per
 * direction (NVIDIA Grace Hopper Superchip datasheet, 2023). */
#define C2C_BW_DEFAULT 450e9

/* Limits that keep a hostile file from asking for absurd amounts of memory
 * (and, under libFuzzer, for more than a fuzz iteration's time). Nodes: the
 * one limit of every way to say a number of nodes (flags, keys, presets'
 * builders), CS_MAX_NODES, for the file's nodes in all. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define MAX_NODES      64
#define MAX_DEVICES    20000
#else
#define MAX_NODES      CS_MAX_NODES
#define MAX_DEVICES    4000000
#endif

/* ---- element grammar --------------------------------------------------- */

static const char *const attrs_root[] = { "version", "description", NULL };
static const char *const attrs_node[] = { "id", "count", NULL };
static const char *const attrs_cpu[] = { "id", "vendor", "socket", "familyid", "modelid", NULL };
static const char *const attrs_plain[] = { "id", NULL };
static const char *const attrs_gpu[] = { "id", "model", "gdr", "p2p", "busid", NULL };
static const char *const attrs_nic[] = { "id", "type", "kind", "speed", "ports", "gdr", "ifname", NULL };
static const char *const attrs_link[] = { "a", "b", "type", "count", "gen", "width", "bw", "lat", NULL };
static const char *const attrs_fabric[] = { "kind", "oversubscription", "nodes-per-leaf", "switch-lat", NULL };
static const char *const attrs_switch[] = { "id", "tier", NULL };

static char *join_list(const char *const *v, const char *pre, const char *post)
{
    GString *s = g_string_new(NULL);
    for (int i = 0; v[i] != NULL; i++)
        g_string_append_printf(s, "%s%s%s%s", i == 0 ? "" : v[i + 1] == NULL ? " or " : ", ",
                               pre, v[i], post);
    return g_string_free(s, FALSE);
}

/* Unknown attributes and stray text are errors: a typo must not silently
 * fall back to a default. */
static gboolean check_element(cs_xml_ctx_t *c, xmlNodePtr el, const char *const *allowed)
{
    for (xmlAttrPtr a = el->properties; a != NULL; a = a->next) {
        gboolean ok = FALSE;
        for (int i = 0; a->ns == NULL && allowed[i] != NULL && !ok; i++)
            ok = strcmp((const char *)a->name, allowed[i]) == 0;
        if (!ok) {
            g_autofree char *list = join_list(allowed, "", "");
            return cs_xml_fail(c, el, "unknown attribute '%s' on <%s>; expected %s%s",
                               (const char *)a->name, (const char *)el->name,
                               allowed[0] ? "one of " : "no attributes", list);
        }
    }
    for (xmlNodePtr k = el->children; k != NULL; k = k->next) {
        if (k->type != XML_TEXT_NODE && k->type != XML_CDATA_SECTION_NODE)
            continue;
        for (const xmlChar *p = k->content; p != NULL && *p != '\0'; p++) {
            if (g_ascii_isspace(*p))
                continue;
            /* libxml2 gives a text node the line where it ends: count back
             * to the line of its first visible character. */
            int line = cs_xml_line(k);
            for (const xmlChar *q = p; *q != '\0'; q++)
                line -= *q == '\n';
            cs_set_error_at(c->err, c->file, MAX(line, 1), "unexpected text inside <%s>; expected "
                            "only elements and comments", (const char *)el->name);
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean check_empty(cs_xml_ctx_t *c, xmlNodePtr el)
{
    xmlNodePtr k = cs_xml_first_elem(el);
    if (k != NULL)
        return cs_xml_fail(c, k, "unexpected element <%s> inside <%s>; expected <%s/> to be empty",
                           (const char *)k->name, (const char *)el->name, (const char *)el->name);
    return TRUE;
}

/* Ids: what the schema's id pattern allows. */
static gboolean valid_id(const char *s)
{
    if (s == NULL || !(g_ascii_isalnum(s[0]) || s[0] == '_'))
        return FALSE;
    for (const char *p = s; *p != '\0'; p++)
        if (!(g_ascii_isalnum(*p) || *p == '_' || *p == '-' || *p == '.' || *p == ':'))
            return FALSE;
    return TRUE;
}

static char *get_id(cs_xml_ctx_t *c, xmlNodePtr el)
{
    char *id = cs_xml_attr_req(c, el, "id", "a unique name such as id=\"gpu0\"");
    if (id != NULL && !valid_id(id)) {
        cs_xml_fail(c, el, "bad id=\"%s\" on <%s>; expected letters, digits, '_', '-', '.' "
                    "or ':', starting with a letter, digit or '_'", id, (const char *)el->name);
        g_free(id);
        return NULL;
    }
    return id;
}

/* ---- node templates ---------------------------------------------------- */

typedef struct {
    cs_device_t d;           /* name: the local id; ifname owned */
    xmlNodePtr el;
    const cs_nic_type_t *nic_type;
    int nvl_used;            /* NVLinks counted so far on this GPU */
} tdev_t;

typedef struct {
    int a, b;                /* template device indices */
    cs_link_kind_t kind;
    double bw, lat;
    int count, gen, width;
    int line;
} tlink_t;

typedef struct {
    xmlNodePtr el;
    int count;
    GArray *devs;            /* tdev_t */
    GArray *links;           /* tlink_t */
    GHashTable *ids;         /* local id -> index + 1 */
    GHashTable *pairs;       /* (kind, a, b) -> line of the link, for repeats */
} tnode_t;

static void tnode_free(tnode_t *n)
{
    if (n == NULL)
        return;
    for (guint i = 0; n->devs != NULL && i < n->devs->len; i++) {
        tdev_t *d = &g_array_index(n->devs, tdev_t, i);
        g_free(d->d.name);
        g_free(d->d.ifname);
    }
    if (n->devs != NULL)
        g_array_free(n->devs, TRUE);
    if (n->links != NULL)
        g_array_free(n->links, TRUE);
    if (n->ids != NULL)
        g_hash_table_unref(n->ids);
    if (n->pairs != NULL)
        g_hash_table_unref(n->pairs);
    g_free(n);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC(tnode_t, tnode_free)

static tdev_t *tdev(tnode_t *n, int i)
{
    return &g_array_index(n->devs, tdev_t, i);
}

static gboolean tdev_add(cs_xml_ctx_t *c, tnode_t *n, xmlNodePtr el, tdev_t *td, char *id)
{
    gpointer prev = g_hash_table_lookup(n->ids, id);
    if (prev != NULL) {
        int first = cs_xml_line(tdev(n, GPOINTER_TO_INT(prev) - 1)->el);
        cs_xml_fail(c, el, "duplicate id '%s' (first at line %d); expected ids unique within "
                    "a <node>", id, first);
        g_free(id);
        g_free(td->d.ifname);
        return FALSE;
    }
    td->d.name = id;
    td->d.line = cs_xml_line(el);
    td->el = el;
    g_array_append_val(n->devs, *td);
    g_hash_table_insert(n->ids, id, GINT_TO_POINTER((int)n->devs->len));
    return TRUE;
}

static void tdev_init(tdev_t *td, cs_dev_kind_t kind)
{
    memset(td, 0, sizeof *td);
    td->d.kind = kind;
    td->d.local = -1;
    td->d.rank = -1;
    td->d.socket = -1;
}

static gboolean parse_cpu(cs_xml_ctx_t *c, tnode_t *n, xmlNodePtr el, int *ncpu)
{
    static const char *const vendors[] = { "intel", "amd", "arm", "power", "other", NULL };
    tdev_t td;
    tdev_init(&td, CS_DEV_CPU);
    if (!check_element(c, el, attrs_cpu) || !check_empty(c, el))
        return FALSE;
    char *id = get_id(c, el);
    if (id == NULL)
        return FALSE;
    g_autofree char *vendor = cs_xml_attr_req(c, el, "vendor", "intel, amd, arm, power or other");
    if (vendor == NULL)
        goto err_id;
    int v = 0;
    while (vendors[v] != NULL && strcmp(vendors[v], vendor) != 0)
        v++;
    if (vendors[v] == NULL) {
        cs_xml_fail(c, el, "unknown CPU vendor '%s'; expected intel, amd, arm, power or other", vendor);
        goto err_id;
    }
    td.d.vendor = (cs_cpu_vendor_t)v;
    gint64 socket = *ncpu;
    if (!cs_xml_attr_int(c, el, "socket", 0, 1023, &socket))
        goto err_id;
    td.d.socket = (int)socket;
    gint64 family = 0, model = 0;
    if (!cs_xml_attr_int(c, el, "familyid", 0, 4095, &family) ||
        !cs_xml_attr_int(c, el, "modelid", 0, 4095, &model))
        goto err_id;
    td.d.familyid = (int)family;
    td.d.modelid = (int)model;
    (*ncpu)++;
    return tdev_add(c, n, el, &td, id);

err_id:
    g_free(id);
    return FALSE;
}

static gboolean parse_plain(cs_xml_ctx_t *c, tnode_t *n, xmlNodePtr el, cs_dev_kind_t kind)
{
    tdev_t td;
    tdev_init(&td, kind);
    if (!check_element(c, el, attrs_plain) || !check_empty(c, el))
        return FALSE;
    char *id = get_id(c, el);
    return id != NULL && tdev_add(c, n, el, &td, id);
}

static gboolean parse_gpu(cs_xml_ctx_t *c, tnode_t *n, xmlNodePtr el, int *ngpu)
{
    tdev_t td;
    tdev_init(&td, CS_DEV_GPU);
    if (!check_element(c, el, attrs_gpu) || !check_empty(c, el))
        return FALSE;
    g_autofree char *p2ps = cs_xml_attr(el, "p2p");
    g_autofree char *busid = cs_xml_attr(el, "busid");
    char *id = get_id(c, el);
    if (id == NULL)
        return FALSE;
    g_autofree char *model = cs_xml_attr_req(c, el, "model", "a GPU model from the catalogue");
    if (model == NULL)
        goto err_id;
    td.d.gpu = cs_gpu_model_find(model);
    if (td.d.gpu == NULL) {
        cs_xml_fail(c, el, "unknown GPU model '%s'; expected one of %s", model, cs_gpu_model_names());
        goto err_id;
    }
    td.d.gdr = td.d.gpu->gdr;
    gboolean p2p = FALSE;
    if (!cs_xml_attr_bool(c, el, "gdr", &td.d.gdr))
        goto err_id;
    if (p2ps != NULL) {
        if (!cs_xml_attr_bool(c, el, "p2p", &p2p))
            goto err_id;
        td.d.p2p_force = p2p ? 1 : -1;
    }
    if (busid != NULL) {
        /* NCCL's name for the GPU in its log (collsim topo graph) */
        if (!cs_topo_busid_parse(g_strstrip(busid), &td.d.pci_busid)) {
            cs_xml_fail(c, el, "bad busid '%s' on <gpu>; expected a PCI bus id such as \"0000:03:00.0\"",
                        busid);
            goto err_id;
        }
        for (guint i = 0; i < n->devs->len; i++) {
            const tdev_t *o = tdev(n, (int)i);
            if (o->d.kind == CS_DEV_GPU && o->d.pci_busid == td.d.pci_busid) {
                cs_xml_fail(c, el, "GPU '%s' has busid '%s', as GPU '%s' at line %d has; expected each GPU's "
                            "own bus id", id, busid, o->d.name, o->d.line);
                goto err_id;
            }
        }
    }
    td.d.local = (*ngpu)++;
    return tdev_add(c, n, el, &td, id);

err_id:
    g_free(id);
    return FALSE;
}

static gboolean parse_nic(cs_xml_ctx_t *c, tnode_t *n, xmlNodePtr el, int *nnic)
{
    tdev_t td;
    tdev_init(&td, CS_DEV_NIC);
    if (!check_element(c, el, attrs_nic) || !check_empty(c, el))
        return FALSE;
    g_autofree char *type = cs_xml_attr(el, "type");
    g_autofree char *kind = cs_xml_attr(el, "kind");
    g_autofree char *speed = cs_xml_attr(el, "speed");
    char *id = get_id(c, el);
    if (id == NULL)
        return FALSE;
    if (type != NULL) {
        td.nic_type = cs_nic_type_find(g_strstrip(type));
        if (td.nic_type == NULL) {
            cs_xml_fail(c, el, "unknown NIC type '%s'; expected one of %s", type, cs_nic_type_names());
            goto err_id;
        }
        td.d.nic_kind = td.nic_type->kind;
        td.d.nic_bw = td.nic_type->bw;
        td.d.gdr = td.nic_type->rdma;
    } else if (kind == NULL) {
        cs_xml_fail(c, el, "missing attribute 'type' or 'kind' on <nic>; expected type=\"NAME\" "
                    "(one of %s) or kind=\"ib|roce|ethernet\" with speed=\"...\"", cs_nic_type_names());
        goto err_id;
    }
    if (kind != NULL) {
        /* The schema's spellings, in lower case. */
        g_strstrip(kind);
        gboolean lower = TRUE;
        for (const char *p = kind; *p != '\0'; p++)
            lower &= !g_ascii_isupper(*p);
        if (!lower || !cs_nic_kind_parse(kind, &td.d.nic_kind)) {
            cs_xml_fail(c, el, "unknown NIC kind '%s'; expected ib, roce or ethernet", kind);
            goto err_id;
        }
        if (type == NULL)
            td.d.gdr = td.d.nic_kind != CS_NIC_ETH;
    }
    if (speed == NULL && type == NULL) {
        cs_xml_fail(c, el, "missing attribute 'speed' on <nic>; expected a port speed such as "
                    "speed=\"400Gbps\" (or type=\"NAME\" from the catalogue)");
        goto err_id;
    }
    if (!cs_xml_attr_bw(c, el, "speed", &td.d.nic_bw))
        goto err_id;
    gint64 ports = 1;
    if (!cs_xml_attr_int(c, el, "ports", 1, 1024, &ports) || !cs_xml_attr_bool(c, el, "gdr", &td.d.gdr))
        goto err_id;
    td.d.nic_ports = (int)ports;
    td.d.ifname = cs_xml_attr(el, "ifname");
    if (td.d.ifname != NULL && *g_strstrip(td.d.ifname) == '\0') {
        cs_xml_fail(c, el, "empty ifname on <nic>; expected a device name such as \"mlx5_0\"");
        g_free(td.d.ifname);
        goto err_id;
    }
    td.d.local = (*nnic)++;
    return tdev_add(c, n, el, &td, id);

err_id:
    g_free(id);
    return FALSE;
}

static gboolean parse_link_type(cs_xml_ctx_t *c, xmlNodePtr el, gboolean in_fabric,
                                cs_link_kind_t *kind_p)
{
    static const struct { const char *name; cs_link_kind_t kind; } types[] = {
        { "nvlink", CS_LINK_NVL }, { "pcie", CS_LINK_PCI }, { "sys", CS_LINK_SYS },
        { "c2c", CS_LINK_C2C }, { "net", CS_LINK_NET },
    };
    g_autofree char *type = in_fabric ? cs_xml_attr(el, "type")
                                      : cs_xml_attr_req(c, el, "type", "nvlink, pcie, sys or c2c");
    if (type == NULL) {
        if (!in_fabric)
            return FALSE;
        *kind_p = CS_LINK_NET;
        return TRUE;
    }
    g_strstrip(type);
    for (gsize i = 0; i < G_N_ELEMENTS(types); i++)
        if (strcmp(type, types[i].name) == 0) {
            if (in_fabric != (types[i].kind == CS_LINK_NET))
                break;
            *kind_p = types[i].kind;
            return TRUE;
        }
    if (in_fabric)
        return cs_xml_fail(c, el, "link type '%s' inside <fabric>; expected net (node-internal "
                           "links belong inside <node>)", type);
    if (strcmp(type, "net") == 0)
        return cs_xml_fail(c, el, "link type 'net' inside <node>; expected nvlink, pcie, sys or "
                           "c2c (network cables belong inside <fabric>)");
    return cs_xml_fail(c, el, "unknown link type '%s'; expected nvlink, pcie, sys or c2c", type);
}

/* Looks up a link end among the node's ids. */
static int link_end(cs_xml_ctx_t *c, tnode_t *n, xmlNodePtr el, const char *attr)
{
    g_autofree char *id = cs_xml_attr_req(c, el, attr, "the id of a device in this <node>");
    if (id == NULL)
        return -1;
    gpointer v = g_hash_table_lookup(n->ids, id);
    if (v == NULL) {
        cs_xml_fail(c, el, "unknown device '%s' in %s=; expected the id of a device declared in "
                    "this <node>", id, attr);
        return -1;
    }
    return GPOINTER_TO_INT(v) - 1;
}

/* The PCIe generation and width a device brings to a link, 0 if none. */
static void pcie_of(const tdev_t *d, int *gen_p, int *width_p)
{
    *gen_p = *width_p = 0;
    if (d->d.kind == CS_DEV_GPU && d->d.gpu != NULL) {
        *gen_p = d->d.gpu->pcie_gen;
        *width_p = d->d.gpu->pcie_width;
    } else if (d->d.kind == CS_DEV_NIC && d->nic_type != NULL) {
        *gen_p = d->nic_type->pcie_gen;
        *width_p = d->nic_type->pcie_width;
    }
}

static int min_known(int a, int b)
{
    return a <= 0 ? b : b <= 0 ? a : MIN(a, b);
}

static gboolean parse_node_link(cs_xml_ctx_t *c, tnode_t *n, xmlNodePtr el)
{
    if (!check_element(c, el, attrs_link) || !check_empty(c, el))
        return FALSE;
    tlink_t l = { .line = cs_xml_line(el), .count = 1 };
    if (!parse_link_type(c, el, FALSE, &l.kind))
        return FALSE;
    if ((l.a = link_end(c, n, el, "a")) < 0 || (l.b = link_end(c, n, el, "b")) < 0)
        return FALSE;
    tdev_t *a = tdev(n, l.a), *b = tdev(n, l.b);
    const char *ka = cs_dev_kind_name(a->d.kind), *kb = cs_dev_kind_name(b->d.kind);
    if (l.a == l.b)
        return cs_xml_fail(c, el, "link from '%s' to itself; expected two different devices", a->d.name);
    gint64 key = ((gint64)l.kind * MAX_DEVICES + MIN(l.a, l.b)) * MAX_DEVICES + MAX(l.a, l.b);
    gpointer first = g_hash_table_lookup(n->pairs, &key);
    if (first != NULL)
        return cs_xml_fail(c, el, "duplicate %s link between '%s' and '%s' (first at line %d); "
                           "expected one <link> per pair (use count= for bundles)",
                           cs_link_kind_name(l.kind), a->d.name, b->d.name, GPOINTER_TO_INT(first));
    g_hash_table_insert(n->pairs, g_memdup2(&key, sizeof key), GINT_TO_POINTER(l.line));

    gboolean has_bw = FALSE;
    {
        g_autofree char *s = cs_xml_attr(el, "bw");
        has_bw = s != NULL;
    }
    if (!cs_xml_attr_bw(c, el, "bw", &l.bw))
        return FALSE;
    l.lat = cs_topo_xml_default_lat(l.kind);
    if (!cs_xml_attr_time(c, el, "lat", &l.lat))
        return FALSE;

    g_autofree char *count_s = cs_xml_attr(el, "count");
    g_autofree char *gen_s = cs_xml_attr(el, "gen");
    g_autofree char *width_s = cs_xml_attr(el, "width");
    if (count_s != NULL && l.kind != CS_LINK_NVL && l.kind != CS_LINK_C2C)
        return cs_xml_fail(c, el, "count= on a %s link; expected count only on nvlink or c2c links",
                           cs_link_kind_name(l.kind));
    if ((gen_s != NULL || width_s != NULL) && l.kind != CS_LINK_PCI)
        return cs_xml_fail(c, el, "%s= on a %s link; expected gen and width only on pcie links",
                           gen_s != NULL ? "gen" : "width", cs_link_kind_name(l.kind));

    switch (l.kind) {
    case CS_LINK_NVL: {
        const tdev_t *g = a->d.kind == CS_DEV_GPU ? a : b->d.kind == CS_DEV_GPU ? b : NULL;
        const tdev_t *o = g == a ? b : a;
        if (g == NULL)
            return cs_xml_fail(c, el, "nvlink between %s '%s' and %s '%s'; expected a GPU at one end",
                               ka, a->d.name, kb, b->d.name);
        if (o->d.kind != CS_DEV_GPU && o->d.kind != CS_DEV_NVSWITCH && o->d.kind != CS_DEV_CPU)
            return cs_xml_fail(c, el, "nvlink between GPU '%s' and %s '%s'; expected a GPU, "
                               "nvswitch or cpu at the other end", g->d.name,
                               cs_dev_kind_name(o->d.kind), o->d.name);
        gint64 count = o->d.kind == CS_DEV_NVSWITCH && g->d.gpu->nvlinks > 0 ? g->d.gpu->nvlinks : 1;
        if (!cs_xml_attr_int(c, el, "count", 1, 1024, &count))
            return FALSE;
        l.count = (int)count;
        double per = g->d.gpu->nvlink_bw;
        if (o->d.kind == CS_DEV_GPU)
            per = MIN(per, o->d.gpu->nvlink_bw);
        if (!has_bw && !(per > 0))
            return cs_xml_fail(c, el, "no NVLink on GPU model '%s' of '%s'; expected bw= on this "
                               "link or a GPU model with NVLink",
                               (o->d.kind == CS_DEV_GPU && !(o->d.gpu->nvlink_bw > 0) ? o : g)->d.gpu->name,
                               (o->d.kind == CS_DEV_GPU && !(o->d.gpu->nvlink_bw > 0) ? o : g)->d.name);
        if (!has_bw)
            l.bw = l.count * per;
        /* Catch a miscounted bundle against the part's link budget (a link
         * that states its bw= is taken as written). */
        for (int e = 0; e < 2 && !has_bw; e++) {
            tdev_t *d = e ? b : a;
            if (d->d.kind != CS_DEV_GPU)
                continue;
            d->nvl_used += l.count;
            if (d->d.gpu->nvlinks > 0 && d->nvl_used > d->d.gpu->nvlinks)
                return cs_xml_fail(c, el, "GPU '%s' would use %d NVLinks; expected at most %d for "
                                   "model %s", d->d.name, d->nvl_used, d->d.gpu->nvlinks,
                                   d->d.gpu->name);
        }
        break;
    }
    case CS_LINK_PCI: {
        if (a->d.kind == CS_DEV_NVSWITCH || b->d.kind == CS_DEV_NVSWITCH)
            return cs_xml_fail(c, el, "pcie link to nvswitch '%s'; expected nvswitches to carry "
                               "only nvlink links",
                               (a->d.kind == CS_DEV_NVSWITCH ? a : b)->d.name);
        int ga, wa, gb, wb;
        pcie_of(a, &ga, &wa);
        pcie_of(b, &gb, &wb);
        gint64 gen = min_known(ga, gb), width = min_known(wa, wb);
        if (!cs_xml_attr_int(c, el, "gen", 1, 6, &gen) || !cs_xml_attr_int(c, el, "width", 1, 32, &width))
            return FALSE;
        if (!has_bw && (gen <= 0 || width <= 0))
            return cs_xml_fail(c, el, "pcie link '%s' - '%s' has no %s; expected gen= and width= "
                               "(or bw=) when neither end is a GPU or a catalogue NIC",
                               a->d.name, b->d.name, gen <= 0 ? "generation" : "width");
        l.gen = (int)MAX(gen, 0);
        l.width = (int)MAX(width, 0);
        if (!has_bw)
            l.bw = cs_pcie_bw(l.gen, l.width);
        break;
    }
    case CS_LINK_SYS:
        if (a->d.kind != CS_DEV_CPU || b->d.kind != CS_DEV_CPU)
            return cs_xml_fail(c, el, "sys link between %s '%s' and %s '%s'; expected two cpus",
                               ka, a->d.name, kb, b->d.name);
        if (!has_bw)
            l.bw = MIN(cs_topo_xml_sys_bw(a->d.vendor, a->d.familyid, a->d.modelid),
                       cs_topo_xml_sys_bw(b->d.vendor, b->d.familyid, b->d.modelid));
        break;
    case CS_LINK_C2C: {
        gboolean ok = (a->d.kind == CS_DEV_GPU && b->d.kind == CS_DEV_CPU) ||
                      (a->d.kind == CS_DEV_CPU && b->d.kind == CS_DEV_GPU);
        if (!ok)
            return cs_xml_fail(c, el, "c2c link between %s '%s' and %s '%s'; expected a GPU and a cpu",
                               ka, a->d.name, kb, b->d.name);
        gint64 count = 1;
        if (!cs_xml_attr_int(c, el, "count", 1, 1024, &count))
            return FALSE;
        l.count = (int)count;
        if (!has_bw)
            l.bw = C2C_BW_DEFAULT;
        break;
    }
    case CS_LINK_NET:
        g_assert_not_reached();
    }
    g_array_append_val(n->links, l);
    return TRUE;
}

static tnode_t *parse_node(cs_xml_ctx_t *c, xmlNodePtr el)
{
    g_autoptr(tnode_t) n = g_new0(tnode_t, 1);
    n->el = el;
    n->devs = g_array_new(FALSE, TRUE, sizeof(tdev_t));
    n->links = g_array_new(FALSE, TRUE, sizeof(tlink_t));
    n->ids = g_hash_table_new(g_str_hash, g_str_equal);   /* keys owned by devs */
    n->pairs = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    if (!check_element(c, el, attrs_node))
        return NULL;
    gint64 count = 1;
    if (!cs_xml_attr_int(c, el, "count", 1, MAX_NODES, &count))
        return NULL;
    n->count = (int)count;
    {
        g_autofree char *id = cs_xml_attr(el, "id");
        if (id != NULL && !valid_id(id)) {
            cs_xml_fail(c, el, "bad id=\"%s\" on <node>; expected letters, digits, '_', '-', '.' "
                        "or ':'", id);
            return NULL;
        }
    }

    /* Devices first, so that links may name devices declared after them. */
    int ncpu = 0, ngpu = 0, nnic = 0;
    for (xmlNodePtr k = cs_xml_first_elem(el); k != NULL; k = cs_xml_next_elem(k)) {
        gboolean ok = TRUE;
        if (cs_xml_is(k, "cpu"))
            ok = parse_cpu(c, n, k, &ncpu);
        else if (cs_xml_is(k, "pcisw"))
            ok = parse_plain(c, n, k, CS_DEV_PCISW);
        else if (cs_xml_is(k, "nvswitch"))
            ok = parse_plain(c, n, k, CS_DEV_NVSWITCH);
        else if (cs_xml_is(k, "gpu"))
            ok = parse_gpu(c, n, k, &ngpu);
        else if (cs_xml_is(k, "nic"))
            ok = parse_nic(c, n, k, &nnic);
        else if (!cs_xml_is(k, "link"))
            ok = cs_xml_fail(c, k, "unknown element <%s> inside <node>; expected <cpu>, <pcisw>, "
                             "<gpu>, <nvswitch>, <nic> or <link>", (const char *)k->name);
        if (!ok)
            return NULL;
    }
    if (ngpu == 0)
        return cs_xml_fail(c, el, "<node> has no <gpu>; expected at least one GPU per node"), NULL;
    for (xmlNodePtr k = cs_xml_first_elem(el); k != NULL; k = cs_xml_next_elem(k))
        if (cs_xml_is(k, "link") && !parse_node_link(c, n, k))
            return NULL;
    return g_steal_pointer(&n);
}

/* Adds copy number 'node' of a template; 'prefix' names devices
 * "n<node>.<id>" (FALSE: the bare ids of a one-node topology). */
static void stamp_node(cs_topo_t *t, const tnode_t *n, int node, gboolean prefix, GHashTable *names)
{
    int base = t->ndevs;
    for (guint i = 0; i < n->devs->len; i++) {
        cs_device_t d = g_array_index(n->devs, tdev_t, i).d;
        g_autofree char *name = prefix ? g_strdup_printf("n%d.%s", node, d.name) : g_strdup(d.name);
        d.name = name;
        d.node = node;
        int idx = cs_topo_add_device(t, &d);
        if (names != NULL)
            g_hash_table_insert(names, t->devs[idx].name, GINT_TO_POINTER(idx + 1));
    }
    for (guint i = 0; i < n->links->len; i++) {
        const tlink_t *l = &g_array_index(n->links, tlink_t, i);
        int k = cs_topo_add_link(t, base + l->a, base + l->b, l->kind, l->bw, l->lat, l->line);
        for (int j = 0; j < 2; j++) {
            t->links[k + j].count = l->count;
            t->links[k + j].pcie_gen = l->gen;
            t->links[k + j].pcie_width = l->width;
        }
    }
}

/* ---- fabric ------------------------------------------------------------ */

typedef struct {
    cs_fabric_kind_t kind;
    const char *kind_name;
    double oversub;
    int nodes_per_leaf;
    double switch_lat;
    gboolean has_switch_lat, has_nodes_per_leaf;
    gboolean explicit_;      /* has <switch> or <link> children */
    xmlNodePtr el;
} fabric_t;

static gboolean parse_fabric_head(cs_xml_ctx_t *c, xmlNodePtr el, fabric_t *f)
{
    static const char *const kinds[] = { "rail", "fat-tree", "custom", NULL };
    static const cs_fabric_kind_t kvals[] = { CS_FABRIC_RAIL, CS_FABRIC_FAT_TREE, CS_FABRIC_CUSTOM };
    memset(f, 0, sizeof *f);
    f->el = el;
    f->oversub = 1.0;
    if (!check_element(c, el, attrs_fabric))
        return FALSE;
    g_autofree char *kind = cs_xml_attr_req(c, el, "kind", "rail, fat-tree or custom");
    if (kind == NULL)
        return FALSE;
    int i = 0;
    while (kinds[i] != NULL && strcmp(kinds[i], g_strstrip(kind)) != 0)
        i++;
    if (kinds[i] == NULL)
        return cs_xml_fail(c, el, "unknown fabric kind '%s'; expected rail, fat-tree or custom", kind);
    f->kind = kvals[i];
    f->kind_name = kinds[i];
    if (!cs_xml_attr_double(c, el, "oversubscription", 1.0, 1000.0, &f->oversub))
        return FALSE;
    gint64 npl = 0;
    g_autofree char *npl_s = cs_xml_attr(el, "nodes-per-leaf");
    g_autofree char *sl_s = cs_xml_attr(el, "switch-lat");
    if (!cs_xml_attr_int(c, el, "nodes-per-leaf", 1, MAX_NODES, &npl) ||
        !cs_xml_attr_time(c, el, "switch-lat", &f->switch_lat))
        return FALSE;
    f->nodes_per_leaf = (int)npl;
    f->has_nodes_per_leaf = npl_s != NULL;
    f->has_switch_lat = sl_s != NULL;
    for (xmlNodePtr k = cs_xml_first_elem(el); k != NULL; k = cs_xml_next_elem(k)) {
        if (cs_xml_is(k, "switch") || cs_xml_is(k, "link"))
            f->explicit_ = TRUE;
        else
            return cs_xml_fail(c, k, "unknown element <%s> inside <fabric>; expected <switch> or "
                               "<link>", (const char *)k->name);
    }
    if (!f->explicit_ && f->kind == CS_FABRIC_CUSTOM)
        return cs_xml_fail(c, el, "custom fabric without <switch> or <link>; expected the switches "
                           "and cables listed, or kind=\"rail\" or \"fat-tree\" to have them built");
    return TRUE;
}

/* The catalogue switch latency for NICs like this one: the entry of the
 * same kind whose speed is closest (the first on ties). */
static double nic_switch_lat(const cs_device_t *nic)
{
    static const char *const names[] = {
        "ib-edr", "ib-hdr", "ib-ndr", "ib-xdr", "roce-25g", "roce-100g", "roce-200g",
        "roce-400g", "eth-1g", "eth-10g", "eth-25g", "eth-100g",
    };
    const cs_nic_type_t *best = NULL;
    for (gsize i = 0; i < G_N_ELEMENTS(names); i++) {
        const cs_nic_type_t *nt = cs_nic_type_find(names[i]);
        if (nt == NULL || nt->kind != nic->nic_kind)
            continue;
        if (best == NULL || fabs(nt->bw - nic->nic_bw) < fabs(best->bw - nic->nic_bw))
            best = nt;
    }
    return best != NULL ? best->lat : 0.0;
}

static int fabric_end(cs_xml_ctx_t *c, cs_topo_t *t, GHashTable *names, xmlNodePtr el, const char *attr)
{
    g_autofree char *id = cs_xml_attr_req(c, el, attr, "a switch id or a NIC such as \"n0.nic0\"");
    if (id == NULL)
        return -1;
    gpointer v = g_hash_table_lookup(names, id);
    if (v == NULL) {
        cs_xml_fail(c, el, "unknown device '%s' in %s=; expected a <switch> id of this fabric or "
                    "a NIC, written n<k>.<id> (\"n0.nic0\") when there are several nodes", id, attr);
        return -1;
    }
    int d = GPOINTER_TO_INT(v) - 1;
    if (t->devs[d].kind != CS_DEV_NIC && t->devs[d].kind != CS_DEV_SWITCH) {
        cs_xml_fail(c, el, "%s '%s' in %s=; expected a NIC or a fabric switch at the ends of a net "
                    "link", cs_dev_kind_name(t->devs[d].kind), id, attr);
        return -1;
    }
    return d;
}

static gboolean build_explicit_fabric(cs_xml_ctx_t *c, cs_topo_t *t, GHashTable *names, const fabric_t *f)
{
    for (xmlNodePtr k = cs_xml_first_elem(f->el); k != NULL; k = cs_xml_next_elem(k)) {
        if (!cs_xml_is(k, "switch"))
            continue;
        if (!check_element(c, k, attrs_switch) || !check_empty(c, k))
            return FALSE;
        g_autofree char *id = get_id(c, k);
        if (id == NULL)
            return FALSE;
        gpointer prev = g_hash_table_lookup(names, id);
        if (prev != NULL)
            return cs_xml_fail(c, k, "duplicate id '%s' (first at line %d); expected unique switch ids",
                               id, t->devs[GPOINTER_TO_INT(prev) - 1].line);
        gint64 tier = 0;
        if (!cs_xml_attr_int(c, k, "tier", 0, 2, &tier))
            return FALSE;
        cs_device_t d = { .kind = CS_DEV_SWITCH, .name = id, .node = -1, .line = cs_xml_line(k),
                          .local = -1, .rank = -1, .socket = -1, .tier = (int)tier };
        int idx = cs_topo_add_device(t, &d);
        g_hash_table_insert(names, t->devs[idx].name, GINT_TO_POINTER(idx + 1));
    }
    /* (min, max) device pair -> line of its first link, to catch repeats. */
    g_autoptr(GHashTable) pairs = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    g_autofree int *cables = g_new0(int, MAX(1, t->ndevs));   /* NIC -> cables so far */
    g_autofree int *cable_line = g_new0(int, MAX(1, t->ndevs));
    double max_switch_lat = 0.0;
    for (xmlNodePtr k = cs_xml_first_elem(f->el); k != NULL; k = cs_xml_next_elem(k)) {
        if (!cs_xml_is(k, "link"))
            continue;
        if (!check_element(c, k, attrs_link) || !check_empty(c, k))
            return FALSE;
        cs_link_kind_t kind;
        if (!parse_link_type(c, k, TRUE, &kind))
            return FALSE;
        int a = fabric_end(c, t, names, k, "a"), b = a < 0 ? -1 : fabric_end(c, t, names, k, "b");
        if (a < 0 || b < 0)
            return FALSE;
        const cs_device_t *da = &t->devs[a], *db = &t->devs[b];
        if (a == b)
            return cs_xml_fail(c, k, "link from '%s' to itself; expected two different devices", da->name);
        gint64 key = (gint64)MIN(a, b) * MAX_DEVICES + MAX(a, b);
        gpointer first = g_hash_table_lookup(pairs, &key);
        if (first != NULL)
            return cs_xml_fail(c, k, "duplicate link between '%s' and '%s' (first at line %d); "
                               "expected one <link> per pair (use count= for parallel cables)",
                               da->name, db->name, GPOINTER_TO_INT(first));
        g_autofree char *gen_s = cs_xml_attr(k, "gen");
        g_autofree char *width_s = cs_xml_attr(k, "width");
        if (gen_s != NULL || width_s != NULL)
            return cs_xml_fail(c, k, "%s= on a net link; expected gen and width only on pcie links",
                               gen_s != NULL ? "gen" : "width");
        gint64 count = 1;
        if (!cs_xml_attr_int(c, k, "count", 1, 1024, &count))
            return FALSE;
        double bw = 0;
        g_autofree char *bw_s = cs_xml_attr(k, "bw");
        if (bw_s != NULL) {
            if (!cs_xml_attr_bw(c, k, "bw", &bw))
                return FALSE;
        } else if (da->kind == CS_DEV_NIC || db->kind == CS_DEV_NIC) {
            double pa = da->kind == CS_DEV_NIC ? da->nic_bw : INFINITY;
            double pb = db->kind == CS_DEV_NIC ? db->nic_bw : INFINITY;
            bw = count * MIN(pa, pb);
        } else {
            return cs_xml_fail(c, k, "switch-to-switch link '%s' - '%s' has no bandwidth; expected "
                               "bw= such as bw=\"400Gbps\"", da->name, db->name);
        }
        double lat = cs_topo_xml_default_lat(CS_LINK_NET);
        if (!cs_xml_attr_time(c, k, "lat", &lat))
            return FALSE;
        /* a NIC takes a cable a port: one more is a typo (nic0 written
         * for nic1) that would join one card to two switches */
        for (int e = 0; e < 2; e++) {
            int dv = e ? b : a;
            const cs_device_t *d = &t->devs[dv];
            if (d->kind != CS_DEV_NIC)
                continue;
            int ports = MAX(1, d->nic_ports);
            if (cables[dv] + count > ports)
                return cs_xml_fail(c, k, "NIC '%s' (line %d) has %d port%s and this link gives it cable %d "
                                   "(the first at line %d); expected one cable a port (ports=\"N\" on the "
                                   "<nic>, or another NIC named here)", d->name, d->line, ports,
                                   ports == 1 ? "" : "s", cables[dv] + (int)count,
                                   cables[dv] > 0 ? cable_line[dv] : cs_xml_line(k));
            if (cables[dv] == 0)
                cable_line[dv] = cs_xml_line(k);
            cables[dv] += (int)count;
        }
        int l = cs_topo_add_link(t, a, b, CS_LINK_NET, bw, lat, cs_xml_line(k));
        t->links[l].count = t->links[l + 1].count = (int)count;
        g_hash_table_insert(pairs, g_memdup2(&key, sizeof key), GINT_TO_POINTER(cs_xml_line(k)));
        for (int e = 0; e < 2; e++) {
            const cs_device_t *d = e ? db : da;
            if (d->kind == CS_DEV_NIC)
                max_switch_lat = MAX(max_switch_lat, nic_switch_lat(d));
        }
    }
    /* Every NIC of a fabric is cabled: an unwired one has no route to
     * the other nodes, which the engines that route would find only in
     * the middle of a run (and the analytic engine not at all). */
    for (int d = 0; d < t->ndevs; d++) {
        if (t->devs[d].kind != CS_DEV_NIC)
            continue;
        gboolean wired = FALSE;
        for (int l = 0; l < t->nlinks && !wired; l++)
            wired = t->links[l].kind == CS_LINK_NET && (t->links[l].src == d || t->links[l].dst == d);
        if (!wired)
            return cs_xml_fail(c, f->el, "NIC '%s' (line %d) has no link in <fabric>; expected a <link a=\"%s\" "
                               "b=\"SWITCH\"/> for every NIC of a node (or the NIC removed from its <node>)",
                               t->devs[d].name, t->devs[d].line, t->devs[d].name);
    }
    t->fabric.kind = f->kind;
    t->fabric.oversubscription = f->oversub;
    t->fabric.nodes_per_leaf = f->has_nodes_per_leaf ? f->nodes_per_leaf : 1;
    t->fabric.switch_lat = f->has_switch_lat ? f->switch_lat : max_switch_lat;
    return TRUE;
}

/* ---- the document ------------------------------------------------------ */

static void tnode_list_free(gpointer p)
{
    tnode_free(p);
}

/* Builds the cluster of an implicit rail or fat-tree fabric with the
 * preset builders' cluster code, from the one node type. */
static cs_topo_t *build_implicit(cs_xml_ctx_t *c, const tnode_t *n, const fabric_t *f)
{
    if (f->has_nodes_per_leaf || f->has_switch_lat) {
        cs_xml_fail(c, f->el, "%s= on a fabric without <switch> elements; expected it only with "
                    "explicit switches and links (the %s builder picks its own)",
                    f->has_nodes_per_leaf ? "nodes-per-leaf" : "switch-lat", f->kind_name);
        return NULL;
    }
    g_autoptr(cs_topo_t) one = cs_topo_new(c->file);
    stamp_node(one, n, 0, FALSE, NULL);
    g_autofree char *id = cs_xml_attr(n->el, "id");
    one->description = id != NULL ? g_strdup(id) : g_path_get_basename(c->file);
    g_autoptr(GError) e = NULL;
    if (!cs_topo_finish(one, &e)) {
        cs_set_error_at(c->err, NULL, 0, "%s", e->message);
        return NULL;
    }
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    o.nodes = n->count;
    o.fabric = f->kind_name;
    o.oversubscription = f->oversub;
    g_autoptr(cs_topo_t) t = cs_cluster_build(one, &o, &e);
    if (t == NULL) {
        cs_xml_fail(c, f->el, "cannot build the %s fabric (%s); expected a node the cluster "
                    "builder accepts", f->kind_name, e->message);
        return NULL;
    }
    /* as --oversubscription: a ratio with no uplink to apply it to is
     * refused, not dropped (the file would say 2:1 of a non-blocking
     * fabric) */
    gboolean uplinks = FALSE;
    for (int d = 0; d < t->ndevs && !uplinks; d++)
        uplinks = t->devs[d].kind == CS_DEV_SWITCH && t->devs[d].tier >= 1;
    if (f->oversub > 1 && !uplinks) {
        cs_xml_fail(c, f->el, "oversubscription=\"%g\" does not apply: the %s fabric of %d nodes is %s, with no "
                    "spine; expected it from %d nodes up, or oversubscription=\"1\"", f->oversub, f->kind_name,
                    n->count, f->kind == CS_FABRIC_RAIL ? "one leaf per rail" : "one leaf switch",
                    t->fabric.nodes_per_leaf + 1);
        return NULL;
    }
    return g_steal_pointer(&t);
}

/* Reads a <collsim-topology> document into a finished topology. */
cs_topo_t *cs_topo_xml_load_ours(cs_xml_ctx_t *c, xmlDocPtr doc)
{
    xmlNodePtr root = xmlDocGetRootElement(doc);
    if (!check_element(c, root, attrs_root))
        return NULL;
    g_autofree char *version = cs_xml_attr_req(c, root, "version", "version=\"1\"");
    if (version == NULL)
        return NULL;
    if (strcmp(g_strstrip(version), "1") != 0)
        return cs_xml_fail(c, root, "unsupported version=\"%s\"; expected version=\"1\"", version), NULL;

    g_autoptr(GPtrArray) nodes = g_ptr_array_new_with_free_func(tnode_list_free);
    xmlNodePtr fabric_el = NULL;
    gint64 total_nodes = 0, total_devs = 0;
    for (xmlNodePtr k = cs_xml_first_elem(root); k != NULL; k = cs_xml_next_elem(k)) {
        if (cs_xml_is(k, "node")) {
            if (fabric_el != NULL)
                return cs_xml_fail(c, k, "<node> after <fabric>; expected every <node> before the "
                                   "<fabric>"), NULL;
            tnode_t *n = parse_node(c, k);
            if (n == NULL)
                return NULL;
            g_ptr_array_add(nodes, n);
            total_nodes += n->count;
            total_devs += (gint64)n->count * n->devs->len;
            if (total_nodes > MAX_NODES || total_devs > MAX_DEVICES)
                return cs_xml_fail(c, k, "too large: %" G_GINT64_FORMAT " nodes and %" G_GINT64_FORMAT
                                   " devices so far; expected at most %d nodes and %d devices",
                                   total_nodes, total_devs, MAX_NODES, MAX_DEVICES), NULL;
        } else if (cs_xml_is(k, "fabric")) {
            if (fabric_el != NULL)
                return cs_xml_fail(c, k, "second <fabric> (first at line %d); expected at most one",
                                   cs_xml_line(fabric_el)), NULL;
            fabric_el = k;
        } else {
            return cs_xml_fail(c, k, "unknown element <%s> inside <collsim-topology>; expected "
                               "<node> or <fabric>", (const char *)k->name), NULL;
        }
    }
    if (nodes->len == 0)
        return cs_xml_fail(c, root, "no <node>; expected at least one <node> element"), NULL;
    fabric_t f;
    if (fabric_el != NULL && !parse_fabric_head(c, fabric_el, &f))
        return NULL;
    if (fabric_el == NULL && total_nodes > 1)
        return cs_xml_fail(c, root, "%" G_GINT64_FORMAT " nodes but no <fabric>; expected a "
                           "<fabric> element joining them", total_nodes), NULL;
    if (fabric_el != NULL && !f.explicit_ && nodes->len > 1)
        return cs_xml_fail(c, fabric_el, "a %s fabric without <switch> elements needs one node "
                           "type, found %u <node> elements; expected one <node count=\"N\"> or "
                           "explicit switches and links", f.kind_name, nodes->len), NULL;

    g_autoptr(cs_topo_t) t = NULL;
    if (fabric_el != NULL && !f.explicit_) {
        t = build_implicit(c, g_ptr_array_index(nodes, 0), &f);
        if (t == NULL)
            return NULL;
        g_free(t->source);
        t->source = g_strdup(c->file);
    } else {
        t = cs_topo_new(c->file);
        g_autoptr(GHashTable) names = g_hash_table_new(g_str_hash, g_str_equal);
        int node = 0;
        /* As the cluster builder names them: "n<k>.<id>" with several
         * nodes, the bare ids in a one-node topology. */
        for (guint i = 0; i < nodes->len; i++) {
            const tnode_t *n = g_ptr_array_index(nodes, i);
            for (int k = 0; k < n->count; k++)
                stamp_node(t, n, node++, total_nodes > 1, names);
        }
        if (fabric_el != NULL && !build_explicit_fabric(c, t, names, &f))
            return NULL;
    }
    if (!cs_topo_xml_validate_schema(c, doc))
        return NULL;

    g_autofree char *desc = cs_xml_attr(root, "description");
    if (!cs_text_one_line(desc)) {
        /* printed as the output's "# Topology:" line, one line */
        cs_set_error_at(c->err, c->file, MAX(1, (int)xmlGetLineNo(root)),
                        "description holds a control character (a line break or tab); expected a one-line "
                        "description");
        return NULL;
    }
    if (desc != NULL || t->description == NULL) {
        g_free(t->description);
        t->description = desc != NULL ? g_strdup(g_strstrip(desc)) : g_path_get_basename(c->file);
    }
    if (!t->finished && !cs_topo_finish(t, c->err))
        return NULL;
    return g_steal_pointer(&t);
}
