/* collsim doctor: the machine from its sysfs and procfs, live or captured
 * under a root directory (files read through doctor_fs.c). Every file may
 * be missing or hold garbage; each value then stays "unknown" and nothing
 * here fails. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "real/doctor_int.h"
#include "util/cs_error.h"

#define DR_MAX_GIDS 4096          /* mlx5 tables hold 256; cap garbage trees */

/* ---- scan helpers ---------------------------------------------------------- */

static long read_long(const dr_fs_t *fs, const char *dir, const char *file, long dflt)
{
    g_autofree char *p = g_strconcat(dir, "/", file, NULL);
    g_autofree char *s = dr_read(fs, p);
    long v;
    return dr_parse_long(s, &v) ? v : dflt;
}

static char *read_str(const dr_fs_t *fs, const char *dir, const char *file)
{
    g_autofree char *p = g_strconcat(dir, "/", file, NULL);
    char *s = dr_read_value(fs, p);
    if (s != NULL && s[0] == '\0') {
        g_free(s);
        return NULL;
    }
    return s;
}

/* "16.0 GT/s PCIe", "8 GT/s", "Unknown" */
static double read_gts(const dr_fs_t *fs, const char *dir, const char *file)
{
    g_autofree char *s = read_str(fs, dir, file);
    if (s == NULL)
        return 0;
    char *end;
    double v = g_ascii_strtod(s, &end);
    if (end == s || !(v > 0 && v < 1000) || strstr(end, "GT/s") == NULL)
        return 0;
    return v;
}

static char *basename_bdf(const char *path)
{
    if (path == NULL)
        return NULL;
    /* The last BDF component: a virtio netdev's device link ends in
     * "0000:00:03.0/virtio0". */
    g_auto(GStrv) parts = g_strsplit(path, "/", -1);
    char *bdf = NULL;
    for (int i = 0; parts[i] != NULL; i++)
        if (dr_is_bdf(parts[i])) {
            g_free(bdf);
            bdf = g_strdup(parts[i]);
        }
    return bdf;
}

/* ---- PCI -------------------------------------------------------------------- */

static void pci_free(gpointer p)
{
    dr_pci_t *d = p;
    g_free(d->bdf);
    g_free(d->path);
    if (d->chain)
        g_ptr_array_unref(d->chain);
    g_free(d);
}

dr_pci_t *dr_machine_pci(const dr_machine_t *m, const char *bdf)
{
    if (bdf == NULL)
        return NULL;
    for (guint i = 0; i < m->pcis->len; i++) {
        dr_pci_t *p = m->pcis->pdata[i];
        if (g_ascii_strcasecmp(p->bdf, bdf) == 0)
            return p;
    }
    return NULL;
}

/* The PCI function directly above a device in its sysfs path, if any. */
static dr_pci_t *pci_parent(const dr_machine_t *m, const dr_pci_t *d)
{
    if (d->path == NULL)
        return NULL;
    g_autofree char *dir = g_path_get_dirname(d->path);
    g_autofree char *base = g_path_get_basename(dir);
    return dr_is_bdf(base) ? dr_machine_pci(m, base) : NULL;
}

static gint cmp_pci(gconstpointer pa, gconstpointer pb)
{
    const dr_pci_t *a = *(dr_pci_t *const *)pa, *b = *(dr_pci_t *const *)pb;
    return strcmp(a->bdf, b->bdf);
}

static void scan_pci(dr_machine_t *m)
{
    g_autoptr(GPtrArray) names = dr_list(&m->fs, "/sys/bus/pci/devices");
    for (guint i = 0; i < names->len; i++) {
        const char *bdf = names->pdata[i];
        if (!dr_is_bdf(bdf))
            continue;
        g_autofree char *dir = g_strconcat("/sys/bus/pci/devices/", bdf, NULL);
        dr_pci_t *d = g_new0(dr_pci_t, 1);
        d->bdf = g_ascii_strdown(bdf, -1);
        d->path = dr_resolve(&m->fs, dir);
        long v = read_long(&m->fs, dir, "class", -1);
        d->has_class = v >= 0;
        d->cls = v >= 0 ? (unsigned)v : 0;
        d->vendor = (unsigned)read_long(&m->fs, dir, "vendor", 0);
        d->device = (unsigned)read_long(&m->fs, dir, "device", 0);
        d->subvendor = (unsigned)read_long(&m->fs, dir, "subsystem_vendor", 0);
        d->subdevice = (unsigned)read_long(&m->fs, dir, "subsystem_device", 0);
        d->numa = (int)read_long(&m->fs, dir, "numa_node", -1);
        if (d->numa < -1 || d->numa > 4095)
            d->numa = -1;
        d->cur_gts = read_gts(&m->fs, dir, "current_link_speed");
        d->max_gts = read_gts(&m->fs, dir, "max_link_speed");
        long w = read_long(&m->fs, dir, "current_link_width", 0);
        d->cur_width = w > 0 && w <= 32 ? (int)w : 0;
        w = read_long(&m->fs, dir, "max_link_width", 0);
        d->max_width = w > 0 && w <= 32 ? (int)w : 0;
        g_ptr_array_add(m->pcis, d);
    }
    /* BDFs are fixed-width hex: byte order is bus order (natural order is not). */
    g_ptr_array_sort(m->pcis, cmp_pci);
    for (guint i = 0; i < m->pcis->len; i++) {
        dr_pci_t *d = m->pcis->pdata[i];
        /* NCCL takes the lower of the device's and its upstream port's
         * maximum (xml.cc: max_link_speed and ../max_link_speed). */
        dr_pci_t *up = pci_parent(m, d);
        d->link_gts = d->max_gts;
        d->link_width = d->max_width;
        if (up != NULL && up->max_gts > 0 && (d->link_gts == 0 || up->max_gts < d->link_gts))
            d->link_gts = up->max_gts;
        if (up != NULL && up->max_width > 0 && (d->link_width == 0 || up->max_width < d->link_width))
            d->link_width = up->max_width;
        d->chain = dr_nccl_pci_chain(m, d->path);
        /* NCCL names the CPU after the numa_node of the topmost PCI node it
         * walked through (xml.cc keeps the last numa_node read). */
        d->cpu = d->numa;
        if (d->chain->len > 0) {
            dr_pci_t *top = dr_machine_pci(m, d->chain->pdata[0]);
            if (top != NULL)
                d->cpu = top->numa;
        }
    }
}

/* ---- GPUs --------------------------------------------------------------------- */

static void scan_gpus(dr_machine_t *m)
{
    for (guint i = 0; i < m->pcis->len; i++) {
        dr_pci_t *p = m->pcis->pdata[i];
        if (p->vendor != 0x10de || !p->has_class)   /* NVIDIA's PCI vendor id */
            continue;
        unsigned sub = p->cls >> 8;
        if (sub == 0x0302 || sub == 0x0300) {      /* 3D controller, VGA */
            dr_gpu_t *g = g_new0(dr_gpu_t, 1);
            g->pci = p;
            g->model = cs_gpu_model_by_pci(p->vendor, p->device);
            g_ptr_array_add(m->gpus, g);
        } else if (sub == 0x0680) {                /* NCCL's NVSwitch class 0x068000 */
            g_ptr_array_add(m->nvswitches, p);
        }
    }
}

/* ---- RDMA ----------------------------------------------------------------------- */

static void port_clear(dr_port_t *p)
{
    g_free(p->dir);
    g_free(p->state_str);
    g_free(p->phys_state_str);
    g_free(p->link_layer_str);
    g_free(p->rate_str);
    g_free(p->speed_name);
    for (int i = 0; i < p->ngids; i++) {
        g_free(p->gids[i].text);
        g_free(p->gids[i].type);
        g_free(p->gids[i].ndev);
    }
    g_free(p->gids);
    g_free(p->netdev);
}

static void rdma_free(gpointer ptr)
{
    dr_rdma_t *r = ptr;
    for (int i = 0; i < r->nports; i++)
        port_clear(&r->ports[i]);
    g_free(r->ports);
    g_free(r->name);
    g_free(r->bdf);
    g_free(r->hca_type);
    g_free(r->fw_ver);
    g_free(r->board_id);
    g_free(r);
}

static void scan_gids(dr_machine_t *m, dr_port_t *p)
{
    g_autofree char *gdir = g_strconcat(p->dir, "/gids", NULL);
    g_autoptr(GPtrArray) names = dr_list(&m->fs, gdir);
    long max = -1;
    for (guint i = 0; i < names->len; i++) {
        long v;
        const char *n = names->pdata[i];
        if (g_ascii_isdigit(n[0]) && dr_parse_long(n, &v) && strchr(n, ':') == NULL &&
            v >= 0 && v < DR_MAX_GIDS && v > max)
            max = v;
    }
    p->ngids = (int)(max + 1);
    p->gids = g_new0(dr_gid_t, p->ngids > 0 ? p->ngids : 1);
    for (int i = 0; i < p->ngids; i++) {
        dr_gid_t *g = &p->gids[i];
        g->index = i;
        g->version = -1;
        char idx[16];
        g_snprintf(idx, sizeof idx, "%d", i);
        g_autofree char *gp = g_strconcat(p->dir, "/gids/", idx, NULL);
        g_autofree char *gs = dr_read(&m->fs, gp);
        if (gs != NULL && dr_gid_parse(gs, g->raw)) {
            char buf[INET6_ADDRSTRLEN];
            g->present = TRUE;
            g->text = g_strdup(inet_ntop(AF_INET6, g->raw, buf, sizeof buf));
        }
        g_autofree char *tp = g_strconcat(p->dir, "/gid_attrs/types/", idx, NULL);
        g->type = dr_read_value(&m->fs, tp);
        if (g->type != NULL && g->type[0] == '\0') {
            g_free(g->type);
            g->type = NULL;
        }
        /* ncclIbRoceGetVersionNum: prefix "IB/RoCE v1" or "RoCE v1" -> 1,
         * "RoCE v2" -> 2 (net_ib/connect.cc) */
        if (g->type != NULL) {
            if (g_str_has_prefix(g->type, "IB/RoCE v1") || g_str_has_prefix(g->type, "RoCE v1"))
                g->version = 1;
            else if (g_str_has_prefix(g->type, "RoCE v2"))
                g->version = 2;
        }
        g_autofree char *np = g_strconcat(p->dir, "/gid_attrs/ndevs/", idx, NULL);
        g->ndev = dr_read_value(&m->fs, np);
        if (g->ndev != NULL && g->ndev[0] == '\0') {
            g_free(g->ndev);
            g->ndev = NULL;
        }
    }
}

static void scan_rdma(dr_machine_t *m)
{
    g_autoptr(GPtrArray) names = dr_list(&m->fs, "/sys/class/infiniband");
    for (guint i = 0; i < names->len; i++) {
        const char *name = names->pdata[i];
        g_autofree char *dir = g_strconcat("/sys/class/infiniband/", name, NULL);
        if (!dr_is_dir(&m->fs, dir))
            continue;
        dr_rdma_t *r = g_new0(dr_rdma_t, 1);
        r->name = g_strdup(name);
        g_autofree char *devlink = g_strconcat(dir, "/device", NULL);
        g_autofree char *devpath = dr_resolve(&m->fs, devlink);
        r->bdf = basename_bdf(devpath);
        if (r->bdf != NULL) {
            char *low = g_ascii_strdown(r->bdf, -1);
            g_free(r->bdf);
            r->bdf = low;
        }
        r->hca_type = read_str(&m->fs, dir, "hca_type");
        r->fw_ver = read_str(&m->fs, dir, "fw_ver");
        r->board_id = read_str(&m->fs, dir, "board_id");
        g_autofree char *pdir = g_strconcat(dir, "/ports", NULL);
        g_autoptr(GPtrArray) ports = dr_list(&m->fs, pdir);
        r->ports = g_new0(dr_port_t, ports->len > 0 ? ports->len : 1);
        for (guint k = 0; k < ports->len; k++) {
            long num;
            const char *pn = ports->pdata[k];
            if (!dr_parse_long(pn, &num) || strchr(pn, ':') != NULL || num < 1 || num > 255)
                continue;
            dr_port_t *p = &r->ports[r->nports++];
            p->num = (int)num;
            p->dir = g_strconcat(pdir, "/", pn, NULL);
            p->state_str = read_str(&m->fs, p->dir, "state");
            if (!dr_parse_long(p->state_str, &p->state))
                p->state = -1;
            p->phys_state_str = read_str(&m->fs, p->dir, "phys_state");
            p->link_layer_str = read_str(&m->fs, p->dir, "link_layer");
            p->ll = DR_LL_OTHER;
            if (p->link_layer_str != NULL && strcmp(p->link_layer_str, "InfiniBand") == 0)
                p->ll = DR_LL_IB;
            else if (p->link_layer_str != NULL && strcmp(p->link_layer_str, "Ethernet") == 0)
                p->ll = DR_LL_ETH;
            p->rate_str = read_str(&m->fs, p->dir, "rate");
            p->speed_mbps = -1;
            if (dr_parse_rate(p->rate_str, &p->rate_gbps, &p->width, &p->speed_name)) {
                p->speed_mbps = dr_ib_speed_mbps(p->width, p->speed_name);
                if (p->speed_mbps < 0 && p->rate_gbps > 0)
                    p->speed_mbps = (int)(p->rate_gbps * 1000 + 0.5);
            }
            scan_gids(m, p);
            for (int g = 0; g < p->ngids && p->netdev == NULL; g++)
                if (p->gids[g].ndev != NULL)
                    p->netdev = g_strdup(p->gids[g].ndev);
        }
        g_ptr_array_add(m->rdma, r);
    }
}

/* ---- network interfaces ---------------------------------------------------------- */

static void if_free(gpointer ptr)
{
    dr_if_t *f = ptr;
    g_free(f->name);
    g_free(f->dir);
    g_free(f->speed_str);
    g_free(f->operstate);
    g_free(f->bdf);
    g_ptr_array_unref(f->ipv4);
    g_ptr_array_unref(f->ipv6);
    g_free(f->nets4);
    g_free(f);
}

static dr_if_t *find_if(const dr_machine_t *m, const char *name)
{
    for (guint i = 0; name != NULL && i < m->ifs->len; i++) {
        dr_if_t *f = m->ifs->pdata[i];
        if (strcmp(f->name, name) == 0)
            return f;
    }
    return NULL;
}

static void add_addr(GPtrArray *list, const char *a)
{
    for (guint i = 0; i < list->len; i++)
        if (strcmp(list->pdata[i], a) == 0)
            return;
    g_ptr_array_add(list, g_strdup(a));
}

static void scan_ifs(dr_machine_t *m)
{
    g_autoptr(GPtrArray) names = dr_list(&m->fs, "/sys/class/net");
    for (guint i = 0; i < names->len; i++) {
        const char *name = names->pdata[i];
        g_autofree char *dir = g_strconcat("/sys/class/net/", name, NULL);
        if (!dr_is_dir(&m->fs, dir))   /* bonding_masters is a plain file */
            continue;
        dr_if_t *f = g_new0(dr_if_t, 1);
        f->name = g_strdup(name);
        f->dir = g_strdup(dir);
        f->ifindex = read_long(&m->fs, dir, "ifindex", 0);
        f->type = read_long(&m->fs, dir, "type", -1);
        f->mtu = read_long(&m->fs, dir, "mtu", -1);
        f->speed_str = read_str(&m->fs, dir, "speed");
        long sp;
        f->speed = dr_parse_long(f->speed_str, &sp) && sp > 0 ? sp : -1;
        f->operstate = read_str(&m->fs, dir, "operstate");
        f->flags = read_long(&m->fs, dir, "flags", -1);
        /* IFF_RUNNING as the kernel reports it (dev_get_flags): up and
         * operationally up or unknown (lo and many virtual devices). */
        gboolean oper = f->operstate != NULL &&
                        (strcmp(f->operstate, "up") == 0 || strcmp(f->operstate, "unknown") == 0);
        f->running = oper && (f->flags < 0 ? strcmp(f->operstate, "up") == 0 : (f->flags & 0x1) != 0);
        g_autofree char *devlink = g_strconcat(dir, "/device", NULL);
        g_autofree char *devpath = dr_resolve(&m->fs, devlink);
        f->bdf = basename_bdf(devpath);
        if (f->bdf != NULL) {
            char *low = g_ascii_strdown(f->bdf, -1);
            g_free(f->bdf);
            f->bdf = low;
        }
        f->ipv4 = g_ptr_array_new_with_free_func(g_free);
        f->ipv6 = g_ptr_array_new_with_free_func(g_free);
        g_ptr_array_add(m->ifs, f);
    }
}

static guint32 route_word(const char *hex, gboolean *ok)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(hex, &end, 16);
    if (errno != 0 || *end != '\0' || v > 0xffffffffUL) {
        *ok = FALSE;
        return 0;
    }
    /* /proc/net/route prints the network-order word as a host integer; the
     * hosts we read are little-endian (x86-64, arm64). */
    return GUINT32_SWAP_LE_BE((guint32)v);
}

/* IPv4: /proc/net/route gives each interface's on-link networks;
 * /proc/net/fib_trie the local addresses, which we attach to the interface
 * whose network holds them (longest prefix); 127/8 goes to lo. */
static void scan_ipv4(dr_machine_t *m)
{
    g_autofree char *route = dr_read(&m->fs, "/proc/net/route");
    if (route != NULL) {
        m->addr_known = TRUE;
        g_auto(GStrv) lines = g_strsplit(route, "\n", -1);
        for (int i = 1; lines[0] != NULL && lines[i] != NULL; i++) {
            g_auto(GStrv) f = g_strsplit_set(lines[i], " \t", -1);
            const char *col[11];
            int n = 0;
            for (int k = 0; f[k] != NULL && n < 11; k++)
                if (f[k][0] != '\0')
                    col[n++] = f[k];
            if (n < 8)
                continue;
            gboolean ok = TRUE;
            guint32 dst = route_word(col[1], &ok), gw = route_word(col[2], &ok),
                    mask = route_word(col[7], &ok);
            dr_if_t *itf = find_if(m, col[0]);
            if (!ok || itf == NULL || gw != 0)
                continue;
            itf->nets4 = g_renew(guint32, itf->nets4, 2 * (itf->nnets4 + 1));
            itf->nets4[2 * itf->nnets4] = dst & mask;
            itf->nets4[2 * itf->nnets4 + 1] = mask;
            itf->nnets4++;
        }
    }
    g_autofree char *trie = dr_read(&m->fs, "/proc/net/fib_trie");
    if (trie == NULL)
        return;
    g_auto(GStrv) lines = g_strsplit(trie, "\n", -1);
    char last[INET_ADDRSTRLEN] = "";
    for (int i = 0; lines[i] != NULL; i++) {
        const char *l = lines[i];
        const char *leaf = strstr(l, "|-- ");
        if (leaf != NULL) {
            g_strlcpy(last, leaf + 4, sizeof last);
            g_strstrip(last);
            continue;
        }
        if (strstr(l, "/32 host LOCAL") == NULL || last[0] == '\0')
            continue;
        struct in_addr a;
        if (inet_pton(AF_INET, last, &a) != 1)
            continue;
        guint32 ip = g_ntohl(a.s_addr);
        dr_if_t *best = NULL;
        guint32 best_mask = 0;
        if ((ip >> 24) == 127) {
            best = find_if(m, "lo");
        } else {
            for (guint k = 0; k < m->ifs->len; k++) {
                dr_if_t *f = m->ifs->pdata[k];
                for (int n = 0; n < f->nnets4; n++) {
                    guint32 net = f->nets4[2 * n], mask = f->nets4[2 * n + 1];
                    if ((ip & mask) == net && (best == NULL || mask > best_mask)) {
                        best = f;
                        best_mask = mask;
                    }
                }
            }
        }
        if (best != NULL)
            add_addr(best->ipv4, last);
    }
}

/* /proc/net/if_inet6: "fe80000000000000021e67fffe5a1b2c 02 40 20 80 eth0" */
static void scan_ipv6(dr_machine_t *m)
{
    g_autofree char *s = dr_read(&m->fs, "/proc/net/if_inet6");
    if (s == NULL)
        return;
    m->addr_known = TRUE;
    g_auto(GStrv) lines = g_strsplit(s, "\n", -1);
    for (int i = 0; lines[i] != NULL; i++) {
        g_auto(GStrv) f = g_strsplit_set(lines[i], " \t", -1);
        const char *col[6];
        int n = 0;
        for (int k = 0; f[k] != NULL && n < 6; k++)
            if (f[k][0] != '\0')
                col[n++] = f[k];
        if (n < 6 || strlen(col[0]) != 32)
            continue;
        guint8 raw[16];
        gboolean ok = TRUE;
        for (int b = 0; b < 16 && ok; b++) {
            int hi = g_ascii_xdigit_value(col[0][2 * b]), lo = g_ascii_xdigit_value(col[0][2 * b + 1]);
            ok = hi >= 0 && lo >= 0;
            raw[b] = (guint8)(hi * 16 + lo);
        }
        static const guint8 loopback[16] = { [15] = 1 };
        if (!ok || memcmp(raw, loopback, 16) == 0)   /* NCCL skips ::1 */
            continue;
        dr_if_t *itf = find_if(m, col[5]);
        char buf[INET6_ADDRSTRLEN];
        if (itf != NULL && inet_ntop(AF_INET6, raw, buf, sizeof buf) != NULL)
            add_addr(itf->ipv6, buf);
    }
}

/* A RoCE GID ::ffff:a.b.c.d on netdev X proves X holds a.b.c.d. */
static void addrs_from_gids(dr_machine_t *m)
{
    for (guint i = 0; i < m->rdma->len; i++) {
        dr_rdma_t *r = m->rdma->pdata[i];
        for (int p = 0; p < r->nports; p++)
            for (int g = 0; g < r->ports[p].ngids; g++) {
                dr_gid_t *gid = &r->ports[p].gids[g];
                dr_if_t *itf = find_if(m, gid->ndev);
                char buf[INET_ADDRSTRLEN];
                if (gid->present && itf != NULL && dr_gid_is_ipv4(gid->raw) &&
                    inet_ntop(AF_INET, gid->raw + 12, buf, sizeof buf) != NULL)
                    add_addr(itf->ipv4, buf);
            }
    }
}

/* ---- kernel, driver, CPU -------------------------------------------------------- */

static void scan_modules(dr_machine_t *m)
{
    /* The files NCCL tests for a peer-memory module (net_ib/gdr.cc
     * ibGdrSupportInitOnce). */
    static const char *const peermem[] = {
        "/sys/kernel/mm/memory_peers/nv_mem/version",
        "/sys/kernel/mm/memory_peers/nv_mem_nc/version",
        "/sys/module/nvidia_peermem/version",
    };
    for (gsize i = 0; i < G_N_ELEMENTS(peermem) && m->peermem_path == NULL; i++)
        if (dr_exists(&m->fs, peermem[i]))
            m->peermem_path = g_strdup(peermem[i]);
    g_autofree char *mods = dr_read(&m->fs, "/proc/modules");
    if (mods != NULL) {
        g_auto(GStrv) lines = g_strsplit(mods, "\n", -1);
        for (int i = 0; lines[i] != NULL; i++)
            if (g_str_has_prefix(lines[i], "nvidia_peermem ") || g_str_has_prefix(lines[i], "nv_peer_mem "))
                m->peermem_in_proc = TRUE;
    }
    m->nvidia_version = dr_read_value(&m->fs, "/sys/module/nvidia/version");
    g_autofree char *pv = dr_read(&m->fs, "/proc/driver/nvidia/version");
    if (pv != NULL) {
        char *nl = strchr(pv, '\n');
        if (nl != NULL)
            *nl = '\0';
        m->nvidia_proc_version = dr_one_line(g_strdup(pv));
        m->nvidia_open = strstr(pv, "Open Kernel Module") != NULL;
    }
    m->kernel = dr_read_value(&m->fs, "/proc/sys/kernel/osrelease");
    m->kernel_major = m->kernel_minor = -1;
    if (m->kernel != NULL) {
        int a, b;
        if (sscanf(m->kernel, "%d.%d", &a, &b) == 2 && a >= 0 && b >= 0) {
            m->kernel_major = a;
            m->kernel_minor = b;
        }
    }
}

static void scan_cpu(dr_machine_t *m)
{
    g_autofree char *s = dr_read(&m->fs, "/proc/cpuinfo");
    m->cpu_family = m->cpu_model = -1;
    if (s == NULL)
        return;
    g_auto(GStrv) lines = g_strsplit(s, "\n", -1);
    for (int i = 0; lines[i] != NULL; i++) {
        if (lines[i][0] == '\0' && m->cpu_vendor != NULL)
            break;   /* the first processor is enough */
        char *colon = strchr(lines[i], ':');
        if (colon == NULL)
            continue;
        g_autofree char *key = g_strstrip(g_strndup(lines[i], colon - lines[i]));
        const char *val = colon + 1;
        while (*val == ' ' || *val == '\t')
            val++;
        long v;
        if (*val == '\0')
            continue;
        if (strcmp(key, "vendor_id") == 0 && m->cpu_vendor == NULL)
            m->cpu_vendor = dr_one_line(g_strdup(val));
        else if (strcmp(key, "CPU implementer") == 0 && m->cpu_vendor == NULL)
            m->cpu_vendor = g_strdup("ARM");
        else if (strcmp(key, "cpu family") == 0 && dr_parse_long(val, &v))
            m->cpu_family = (int)v;
        else if (strcmp(key, "model") == 0 && dr_parse_long(val, &v))
            m->cpu_model = (int)v;
        else if (strcmp(key, "model name") == 0 && m->cpu_name == NULL)
            m->cpu_name = dr_one_line(g_strdup(val));
    }
}

/* ---- the machine ----------------------------------------------------------------- */

static void gpu_free(gpointer p)
{
    g_free(p);
}

void dr_machine_init(dr_machine_t *m, const char *root)
{
    memset(m, 0, sizeof *m);
    if (root == NULL || strcmp(root, "/") == 0) {
        m->fs.root = g_strdup("");
    } else {
        m->fs.root = g_strdup(root);
        gsize n = strlen(m->fs.root);
        while (n > 1 && m->fs.root[n - 1] == '/')
            m->fs.root[--n] = '\0';
    }
    m->pcis = g_ptr_array_new_with_free_func(pci_free);
    m->gpus = g_ptr_array_new_with_free_func(gpu_free);
    m->nvswitches = g_ptr_array_new();
    m->rdma = g_ptr_array_new_with_free_func(rdma_free);
    m->ifs = g_ptr_array_new_with_free_func(if_free);
    m->cpu_family = m->cpu_model = -1;
    m->kernel_major = m->kernel_minor = -1;
}

void dr_machine_clear(dr_machine_t *m)
{
    g_ptr_array_unref(m->gpus);
    g_ptr_array_unref(m->nvswitches);
    g_ptr_array_unref(m->pcis);
    g_ptr_array_unref(m->rdma);
    g_ptr_array_unref(m->ifs);
    g_free(m->fs.root);
    g_free(m->peermem_path);
    g_free(m->nvidia_version);
    g_free(m->nvidia_proc_version);
    g_free(m->kernel);
    g_free(m->cpu_vendor);
    g_free(m->cpu_name);
    memset(m, 0, sizeof *m);
}

gboolean dr_machine_scan(dr_machine_t *m, GError **err)
{
    if (!dr_is_dir(&m->fs, "/sys")) {
        cs_set_error_at(err, NULL, 0, "collsim: --root: %s has no sys/ directory; expected the "
                        "root of a machine or of a captured sysfs/procfs tree",
                        m->fs.root[0] ? m->fs.root : "/");
        return FALSE;
    }
    scan_pci(m);
    scan_gpus(m);
    scan_rdma(m);
    scan_ifs(m);
    scan_ipv4(m);
    scan_ipv6(m);
    addrs_from_gids(m);
    scan_modules(m);
    scan_cpu(m);
    /* An IB port's netdev (IPoIB) shares its PCI function. */
    for (guint i = 0; i < m->rdma->len; i++) {
        dr_rdma_t *r = m->rdma->pdata[i];
        for (int p = 0; p < r->nports; p++) {
            if (r->ports[p].netdev != NULL || r->bdf == NULL)
                continue;
            for (guint k = 0; k < m->ifs->len; k++) {
                dr_if_t *f = m->ifs->pdata[k];
                if (f->bdf != NULL && strcmp(f->bdf, r->bdf) == 0) {
                    r->ports[p].netdev = g_strdup(f->name);
                    break;
                }
            }
        }
    }
    return TRUE;
}
