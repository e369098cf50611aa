/* collsim doctor: NCCL's device-selection rules, re-implemented from the
 * NCCL v2.28.9 sources (read for facts; cited at each rule) so that the
 * doctor predicts what NCCL will pick on the inspected machine. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <arpa/inet.h>

#include "real/doctor_int.h"

/* ---- port speed ---------------------------------------------------------------- */

/* net_ib/init.cc ibvSpeeds[] (Mb/s per lane, indexed by the verbs
 * active_speed bit: SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR, XDR) and
 * ibvWidths[] {1, 4, 8, 12, 2}; speed = ncclIbSpeed(speed) x ncclIbWidth(width).
 * The kernel prints the same names in ports/N/rate. */
static const struct { const char *name; int mbps; } ib_speeds[] = {
    { "SDR", 2500 }, { "DDR", 5000 }, { "QDR", 10000 }, { "FDR10", 10000 },
    { "FDR", 14000 }, { "EDR", 25000 }, { "HDR", 50000 }, { "NDR", 100000 },
    { "XDR", 200000 },
};

int dr_ib_speed_mbps(int width, const char *speed_name)
{
    if (speed_name == NULL)
        return -1;
    if (width != 1 && width != 2 && width != 4 && width != 8 && width != 12)
        return -1;
    for (gsize i = 0; i < G_N_ELEMENTS(ib_speeds); i++)
        if (strcmp(ib_speeds[i].name, speed_name) == 0)
            return ib_speeds[i].mbps * width;
    return -1;
}

/* "400 Gb/sec (4X NDR)", "25 Gb/sec (1X EDR)", "2.5 Gb/sec (1X SDR)",
 * "100 Gb/sec (2X HDR)"; the parenthesised part may be absent. */
gboolean dr_parse_rate(const char *s, double *gbps_p, int *width_p, char **name_p)
{
    if (s == NULL)
        return FALSE;
    char *end;
    double g = g_ascii_strtod(s, &end);
    if (end == s || !(g > 0 && g < 1e6))
        return FALSE;
    int width = 0;
    char *name = NULL;
    const char *paren = strchr(end, '(');
    if (paren != NULL) {
        const char *p = paren + 1;
        long w = 0;
        while (g_ascii_isdigit(*p) && w < 1000)
            w = w * 10 + (*p++ - '0');
        if (*p == 'X' && w > 0) {
            p++;
            while (*p == ' ')
                p++;
            const char *q = p;
            while (g_ascii_isalnum(*q))
                q++;
            if (q > p && *q == ')') {
                width = (int)w;
                name = g_strndup(p, q - p);
            }
        }
    }
    *gbps_p = g;
    *width_p = width;
    *name_p = name;
    return TRUE;
}

/* ---- interface and HCA lists ----------------------------------------------------- */

typedef struct {
    char prefix[64];
    int port;
} dr_netif_t;

/* utils.cc parseStringList: comma-separated "prefix[:port[:rail[:plane]]]",
 * empty prefixes skipped, prefixes cut at 63 bytes (netIf.prefix[64]). */
static int parse_list(const char *s, dr_netif_t *out, int max)
{
    if (s == NULL)
        return 0;
    int n = 0;
    g_auto(GStrv) entries = g_strsplit(s, ",", -1);
    for (int i = 0; entries[i] != NULL && n < max; i++) {
        if (entries[i][0] == '\0')
            continue;   /* strtok_r skips empty entries */
        g_auto(GStrv) tok = g_strsplit(entries[i], ":", 4);
        if (tok[0] == NULL || tok[0][0] == '\0')
            continue;
        g_strlcpy(out[n].prefix, tok[0], sizeof out[n].prefix);
        /* atoi, as NCCL */
        out[n].port = (tok[1] != NULL && tok[1][0] != '\0') ? atoi(tok[1]) : -1;
        n++;
    }
    return n;
}

/* utils.cc matchIf / matchPort / matchIfList */
static gboolean match_list(const char *name, int port, const dr_netif_t *l, int n, gboolean exact)
{
    if (n == 0)
        return TRUE;
    for (int i = 0; i < n; i++) {
        gboolean name_ok = exact ? strcmp(name, l[i].prefix) == 0
                                 : strncmp(name, l[i].prefix, strlen(l[i].prefix)) == 0;
        gboolean port_ok = port == -1 || l[i].port == -1 || port == l[i].port;
        if (name_ok && port_ok)
            return TRUE;
    }
    return FALSE;
}

#define DR_MAX_LIST 64   /* MAX_IB_DEVS / MAX_IFS are 32 / 16; enough either way */

gboolean dr_nccl_list_selects(const char *list, const char *name, int port)
{
    if (list == NULL)
        return TRUE;
    gboolean not = list[0] == '^';
    if (not)
        list++;
    gboolean exact = list[0] == '=';
    if (exact)
        list++;
    dr_netif_t l[DR_MAX_LIST];
    int n = parse_list(list, l, DR_MAX_LIST);
    return match_list(name, port, l, n, exact) != not;
}

/* ---- GIDs ---------------------------------------------------------------------- */

gboolean dr_gid_parse(const char *s, guint8 raw_p[16])
{
    /* sysfs prints eight 4-digit groups, which inet_pton reads as IPv6. */
    if (s == NULL || strlen(s) > INET6_ADDRSTRLEN)
        return FALSE;
    guint8 raw[16];
    if (inet_pton(AF_INET6, s, raw) != 1)
        return FALSE;
    memcpy(raw_p, raw, 16);
    return TRUE;
}

static guint32 word(const guint8 raw[16], int i)
{
    return ((guint32)raw[4 * i] << 24) | ((guint32)raw[4 * i + 1] << 16) |
           ((guint32)raw[4 * i + 2] << 8) | raw[4 * i + 3];
}

/* connect.cc getGidAddrFamily: IPv4-mapped ::ffff:a.b.c.d or its
 * multicast form ff0e::ffff:a.b.c.d count as AF_INET. */
gboolean dr_gid_is_ipv4(const guint8 raw[16])
{
    gboolean mapped = (word(raw, 0) | word(raw, 1) | (word(raw, 2) ^ 0x0000ffffu)) == 0;
    gboolean mcast = word(raw, 0) == 0xff0e0000u && (word(raw, 1) | (word(raw, 2) ^ 0x0000ffffu)) == 0;
    return mapped || mcast;
}

gboolean dr_gid_zero(const guint8 raw[16])
{
    return (word(raw, 0) | word(raw, 1) | word(raw, 2) | word(raw, 3)) == 0;
}

gboolean dr_gid_link_local(const guint8 raw[16])
{
    return word(raw, 0) == 0xfe800000u && word(raw, 1) == 0;
}

/* connect.cc validGid = configuredGid && !linkLocalGid */
gboolean dr_gid_valid(const guint8 raw[16])
{
    guint32 trailer = word(raw, 1) | word(raw, 2) | word(raw, 3);
    gboolean configured = !((word(raw, 0) | trailer) == 0 || (word(raw, 0) == 0xfe800000u && trailer == 0));
    return configured && !dr_gid_link_local(raw);
}

/* connect.cc envIbAddrRange: "ADDR/LEN"; no '/', a bad address or a too
 * long mask means no filter. */
gboolean dr_parse_addr_range(const char *s, int af, guint8 prefix_p[16], int *len_p)
{
    if (s == NULL || s[0] == '\0')
        return FALSE;
    char buf[128];
    g_strlcpy(buf, s, sizeof buf);
    char *slash = strchr(buf, '/');
    if (slash == NULL)
        return FALSE;
    *slash = '\0';
    guint8 a[16] = { 0 };
    if (inet_pton(af == 6 ? AF_INET6 : AF_INET, buf, a) != 1)
        return FALSE;
    long len = strtol(slash + 1, NULL, 10);
    if ((af == 4 && len > 32) || (af == 6 && len > 128))
        return FALSE;
    memcpy(prefix_p, a, 16);
    *len_p = len < 0 ? 0 : (int)len;
    return TRUE;
}

/* connect.cc matchGidAddrPrefix. For AF_INET the prefix's first word is
 * compared with the GID's last word (where an IPv4-mapped address sits). */
static gboolean match_prefix(int af, const guint8 *prefix, int len, const guint8 gid[16])
{
    if (prefix == NULL || len <= 0)
        return TRUE;
    if (af == 4) {
        guint32 mask = len >= 32 ? 0xffffffffu : ~(0xffffffffu >> len);
        guint32 base = word(prefix, 0);
        return (base & mask) == (word(gid, 3) & mask);
    }
    for (int i = 0; i < 4 && len > 0; i++) {
        if (len >= 32) {
            if (word(prefix, i) != word(gid, i))
                return FALSE;
            len -= 32;
        } else {
            guint32 mask = ~(0xffffffffu >> len);
            return (word(prefix, i) & mask) == (word(gid, i) & mask);
        }
    }
    return len == 0;
}

static int gid_family(const dr_gid_t *g)
{
    return dr_gid_is_ipv4(g->raw) ? 4 : 6;
}

/* connect.cc ncclUpdateGidIndex: should 'cand' replace 'cur'? A GID that
 * could not be read (absent file) reads as all zeros, as an unpopulated
 * table entry does; an unreadable type counts as version -1. */
static gboolean update_gid(const dr_gid_t *cur, const dr_gid_t *cand, int af, const guint8 *prefix,
                           int prefixlen, int roce_version)
{
    int cur_fam = gid_family(cur), cand_fam = gid_family(cand);
    gboolean subnet = match_prefix(af, prefix, prefixlen, cand->raw);
    if (cand_fam != cur_fam && cand_fam == af && subnet)
        return TRUE;
    if (cand_fam != af || !dr_gid_valid(cand->raw) || !subnet)
        return FALSE;
    return (cur->version != cand->version || !dr_gid_valid(cur->raw)) && cand->version == roce_version;
}

int dr_gid_autopick(const dr_gid_t *gids, int n, int af, const guint8 *prefix, int prefixlen,
                    int roce_version)
{
    int idx = 0;
    if (n <= 0)
        return 0;
    for (int c = 1; c < n; c++)
        if (update_gid(&gids[idx], &gids[c], af, prefix, prefixlen, roce_version))
            idx = c;
    return idx;
}

/* connect.cc ncclIbGetGidIndex, InfiniBand branch: the GID at
 * NCCL_IB_ROUTABLE_FLID_GID_INDEX (1) if its FLID (bytes 4-5) is non-zero. */
int dr_gid_ib_pick(const dr_gid_t *gids, int n)
{
    if (n > 1 && (gids[1].raw[4] != 0 || gids[1].raw[5] != 0))
        return 1;
    return 0;
}

/* ---- PCI tree ------------------------------------------------------------------- */

/* topo.cc getBcmGen: Broadcom PEX Gen4 (1000:c010, subsystem 1000:axxx) and
 * Gen5 (1000:c030, subsystem 1000:0xxx at the first level, 1000:1xxx below)
 * present one switch as two levels; NCCL folds the second into the first. */
static int bcm_gen(const dr_pci_t *p, int level)
{
    if (p == NULL)
        return 0;
    guint64 id = ((guint64)p->vendor << 48) | ((guint64)p->device << 32) |
                 ((guint64)p->subvendor << 16) | p->subdevice;
    if ((id & 0xfffffffffffff000ULL) == 0x1000c0101000a000ULL)
        return 4;
    if ((id & 0xfffffffffffff000ULL) == (0x1000c03010000000ULL | (guint64)level * 0x1000))
        return 5;
    return 0;
}

GPtrArray *dr_nccl_pci_chain(const dr_machine_t *m, const char *path)
{
    GPtrArray *chain = g_ptr_array_new_with_free_func(g_free);
    if (path == NULL)
        return chain;
    g_auto(GStrv) comps = g_strsplit(path, "/", -1);
    int n = (int)g_strv_length(comps);
    /* xml.cc ncclTopoGetXmlFromSys: from a PCI device, step up one
     * component; a non-BDF name there is the root complex (a CPU). Otherwise
     * step up once more: a BDF there is the parent switch node, else the
     * CPU. So the switch's downstream port is skipped and its upstream port
     * stands for the switch. */
    int i = n - 1;
    while (i >= 2 && dr_is_bdf(comps[i - 1]) && dr_is_bdf(comps[i - 2])) {
        i -= 2;
        g_ptr_array_insert(chain, 0, g_ascii_strdown(comps[i], -1));
    }
    for (guint k = 0; k + 1 < chain->len; k++) {
        const dr_pci_t *parent = dr_machine_pci(m, chain->pdata[k]);
        const dr_pci_t *child = dr_machine_pci(m, chain->pdata[k + 1]);
        int gen = bcm_gen(parent, 0);
        if (gen != 0 && bcm_gen(child, 1) == gen)
            g_ptr_array_remove_index(chain, k + 1);
    }
    return chain;
}

/* paths.cc ncclTopoSetPaths: PCI-to-PCI hops make PXB, a hop through the
 * CPU makes PHB, another CPU (NUMA node) makes SYS; a single shared switch
 * is PIX. */
cs_path_type_t dr_pci_path_type(const dr_pci_t *a, const dr_pci_t *b)
{
    if (a->cpu != b->cpu)
        return CS_PATH_SYS;
    guint k = 0;
    while (k < a->chain->len && k < b->chain->len &&
           strcmp(a->chain->pdata[k], b->chain->pdata[k]) == 0)
        k++;
    if (k == 0)
        return CS_PATH_PHB;
    return (a->chain->len - k) + (b->chain->len - k) == 0 ? CS_PATH_PIX : CS_PATH_PXB;
}

const char *dr_path_name(cs_path_type_t p)
{
    static const char *const names[] = { "LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C",
                                         "PXN", "PHB", "SYS", "NET", "DIS" };
    return p >= 0 && p < (int)G_N_ELEMENTS(names) ? names[p] : "?";
}

/* ---- interface discovery --------------------------------------------------------- */

typedef struct {
    int idx;
    long ifindex;
    const char *name;
} if_order_t;

static gint cmp_ifindex(gconstpointer pa, gconstpointer pb)
{
    const if_order_t *a = pa, *b = pb;
    /* unknown ifindex (0) last */
    long ia = a->ifindex > 0 ? a->ifindex : G_MAXLONG, ib = b->ifindex > 0 ? b->ifindex : G_MAXLONG;
    if (ia != ib)
        return ia < ib ? -1 : 1;
    return dr_natural_cmp(a->name, b->name);
}

/* os/linux.cc ncclOsFindInterfaces walks getifaddrs(): only IPv4/IPv6
 * addresses of IFF_RUNNING interfaces, IPv6 loopback skipped, optional
 * family filter, then the prefix list; first address of each interface
 * wins. The kernel lists IPv4 addresses before IPv6 ones, each by ifindex. */
GArray *dr_find_interfaces(const dr_machine_t *m, const char *list, int family, int max)
{
    GArray *out = g_array_new(FALSE, FALSE, sizeof(int));
    GArray *order = g_array_new(FALSE, FALSE, sizeof(if_order_t));
    for (guint i = 0; i < m->ifs->len; i++) {
        const dr_if_t *f = m->ifs->pdata[i];
        if_order_t o = { (int)i, f->ifindex, f->name };
        g_array_append_val(order, o);
    }
    g_array_sort(order, cmp_ifindex);
    for (int fam = 4; fam <= 6; fam += 2) {
        if (family != 0 && family != fam)
            continue;
        for (guint k = 0; k < order->len && (int)out->len < max; k++) {
            int i = g_array_index(order, if_order_t, k).idx;
            const dr_if_t *f = m->ifs->pdata[i];
            if (!f->running)
                continue;
            /* Without address files, assume every running interface has an
             * IPv4 address (and say so in the report). */
            gboolean has = !m->addr_known ? fam == 4 : (fam == 4 ? f->ipv4->len > 0 : f->ipv6->len > 0);
            if (!has || !dr_nccl_list_selects(list, f->name, -1))
                continue;
            gboolean dup = FALSE;
            for (guint j = 0; j < out->len; j++)
                dup |= g_array_index(out, int, j) == i;
            if (!dup)
                g_array_append_val(out, i);
        }
    }
    g_array_free(order, TRUE);
    return out;
}
