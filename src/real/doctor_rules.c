/* collsim doctor: what NCCL will choose on the inspected machine (GPU
 * models, bootstrap interface, NET/IB devices and GID indexes, NET/Socket
 * interfaces) and the findings about the NCCL_* settings that steer those
 * choices. NCCL v2.28.9 sources are cited at each rule. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "real/doctor_int.h"
#include "io/cs_nccl_info.h"

/* ---- helpers ----------------------------------------------------------------- */

void dr_agg_init(dr_agg_t *a)
{
    a->n = 0;
    a->items = g_string_new(NULL);
    a->evidence = g_string_new(NULL);
}

void dr_agg_item(dr_agg_t *a, const char *item)
{
    if (a->n++ > 0)
        g_string_append(a->items, ", ");
    g_string_append(a->items, item);
}

void dr_agg_evidence(dr_agg_t *a, const char *fmt, ...)
{
    va_list ap;
    if (a->evidence->len > 0)
        g_string_append(a->evidence, "; ");
    va_start(ap, fmt);
    g_string_append_vprintf(a->evidence, fmt, ap);
    va_end(ap);
}

void dr_agg_clear(dr_agg_t *a)
{
    g_string_free(a->items, TRUE);
    g_string_free(a->evidence, TRUE);
}

const char *dr_env(const dr_ctx_t *c, const char *name)
{
    return c->env != NULL ? cs_nccl_env_get(c->env, name) : NULL;
}

char *dr_env_evidence(const dr_ctx_t *c, const char *name)
{
    const char *v = dr_env(c, name);
    if (v == NULL)
        return g_strdup_printf("%s unset", name);
    const char *o = cs_nccl_env_origin(c->env, name);
    return g_strdup_printf("%s=%s (%s)", name, v, o != NULL ? o : "set");
}

long dr_env_long(const dr_ctx_t *c, const char *name, long dflt)
{
    const char *s = dr_env(c, name);
    if (s == NULL || s[0] == '\0')
        return dflt;
    errno = 0;
    long long v = strtoll(s, NULL, 0);   /* param.cc ncclLoadParam */
    if (errno != 0)
        return dflt;
    return (long)v;
}

static const char *port_ll_name(const dr_port_t *p)
{
    return p->ll == DR_LL_IB ? "InfiniBand" : p->ll == DR_LL_ETH ? "RoCE" : "unknown link layer";
}

/* ---- GPUs ---------------------------------------------------------------------- */

static void rule_gpus(dr_ctx_t *c, const char *gpu_model)
{
    dr_machine_t *m = &c->d->m;
    const cs_gpu_model_t *assume = gpu_model != NULL ? cs_gpu_model_find(gpu_model) : NULL;
    dr_agg_t unknown;
    dr_agg_init(&unknown);
    for (guint i = 0; i < m->gpus->len; i++) {
        dr_gpu_t *g = m->gpus->pdata[i];
        if (g->model != NULL)
            continue;
        g_autofree char *item = g_strdup_printf("%s (10de:%04x)", g->pci->bdf, g->pci->device);
        dr_agg_item(&unknown, item);
        dr_agg_evidence(&unknown, "/sys/bus/pci/devices/%s/device = 0x%04x", g->pci->bdf, g->pci->device);
        if (assume != NULL) {
            g->model = assume;
            g->model_assumed = TRUE;
        }
    }
    if (unknown.n > 0 && assume != NULL) {
        dr_add(c->d, CS_DOCTOR_INFO, "gpu-model-assumed", unknown.evidence->str,
               "collsim's figures for these GPUs (NVLink, PCIe, memory bandwidth) are those of the "
               "assumed model", NULL,
               "%d GPU(s) with PCI ids not in collsim's catalogue are taken as %s (--gpu-model): %s",
               unknown.n, assume->name, unknown.items->str);
    } else if (unknown.n > 0) {
        g_autofree char *fix = g_strdup_printf("pass --gpu-model NAME with the closest catalogue model "
                                               "(one of %s)", cs_gpu_model_names());
        dr_add(c->d, CS_DOCTOR_WARNING, "gpu-unknown-model", unknown.evidence->str,
               "collsim cannot export or predict for this machine without a GPU model", fix,
               "%d GPU(s) have PCI ids that are not in collsim's catalogue: %s",
               unknown.n, unknown.items->str);
    }
    if (gpu_model != NULL && assume == NULL) {
        g_autofree char *fix = g_strdup_printf("use one of %s", cs_gpu_model_names());
        dr_add(c->d, CS_DOCTOR_WARNING, "gpu-model-flag-unknown", "--gpu-model", "the flag is ignored", fix,
               "--gpu-model %s is not a catalogue model", gpu_model);
    }
    dr_agg_clear(&unknown);
}

/* ---- names and values -------------------------------------------------------- */

/* A known name one edit away (deletion, transposition, substitution,
 * insertion of [A-Z0-9_]), the smallest in byte order; NULL if none. */
static char *nearest_known(const char *name)
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";
    gsize n = strlen(name);
    char *best = NULL;
    char buf[256];
    if (n + 2 > sizeof buf)
        return NULL;
#define TRY()                                                            \
    do {                                                                 \
        if (cs_nccl_env_is_known(buf) && (best == NULL || strcmp(buf, best) < 0)) { \
            g_free(best);                                                \
            best = g_strdup(buf);                                        \
        }                                                                \
    } while (0)
    for (gsize i = 0; i < n; i++) {          /* deletion */
        memcpy(buf, name, i);
        memcpy(buf + i, name + i + 1, n - i);
        TRY();
    }
    for (gsize i = 0; i + 1 < n; i++) {      /* transposition */
        memcpy(buf, name, n + 1);
        char t = buf[i];
        buf[i] = buf[i + 1];
        buf[i + 1] = t;
        TRY();
    }
    for (gsize i = 0; i < n; i++)            /* substitution */
        for (const char *a = alphabet; *a; a++) {
            memcpy(buf, name, n + 1);
            buf[i] = *a;
            TRY();
        }
    for (gsize i = 0; i <= n; i++)           /* insertion */
        for (const char *a = alphabet; *a; a++) {
            memcpy(buf, name, i);
            buf[i] = *a;
            memcpy(buf + i + 1, name + i, n - i + 1);
            TRY();
        }
#undef TRY
    return best;
}

static void rule_names(dr_ctx_t *c)
{
    if (c->env == NULL)
        return;
    g_autoptr(GPtrArray) names = cs_nccl_env_names(c->env);
    for (guint i = 0; i < names->len; i++) {
        const char *name = names->pdata[i];
        g_autofree char *ev = dr_env_evidence(c, name);
        if (!cs_nccl_env_is_known(name)) {
            const char *hint = cs_nccl_env_hint(name);
            g_autofree char *near = hint == NULL ? nearest_known(name) : NULL;
            g_autofree char *fix = near != NULL ? g_strdup_printf("did you mean %s?", near)
                                                : g_strdup(hint != NULL ? hint
                                                           : "check the spelling against NCCL's "
                                                             "environment documentation");
            dr_add(c->d, CS_DOCTOR_WARNING, "unknown-variable", ev,
                   "the setting has no effect; whatever it was meant to change stays at NCCL's default",
                   fix, "%s is not a variable NCCL %s reads", name, "v2.28.9");
        }
    }
    /* Integer parameters the doctor relies on: NCCL reads them with
     * strtoll(s, NULL, 0), so "yes" is 0 and "1x" is 1 (param.cc). */
    static const char *const ints[] = {
        "NCCL_IB_DISABLE", "NCCL_IB_GID_INDEX", "NCCL_IB_ROCE_VERSION_NUM", "NCCL_NET_GDR_READ",
        "NCCL_IB_TC", "NCCL_IB_SL", "NCCL_IB_TIMEOUT", "NCCL_IB_RETRY_CNT",
    };
    g_autoptr(GHashTable) said = g_hash_table_new(g_str_hash, g_str_equal);   /* names given a finding */
    for (gsize i = 0; i < G_N_ELEMENTS(ints); i++) {
        const char *s = dr_env(c, ints[i]);
        if (s == NULL || s[0] == '\0')
            continue;
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 0);
        if (errno == 0 && end != s && *end == '\0')
            continue;
        g_autofree char *ev = dr_env_evidence(c, ints[i]);
        g_autofree char *impact = errno != 0
            ? g_strdup_printf("NCCL ignores the value and keeps the default")
            : g_strdup_printf("NCCL reads it as %lld", v);
        dr_add(c->d, CS_DOCTOR_WARNING, "value-not-a-number", ev, impact,
               "give a plain integer", "%s=%s is not an integer", ints[i], s);
        g_hash_table_add(said, (gpointer)ints[i]);
    }
    /* Any value collsim run refuses (an unknown algorithm, protocol or
     * path level, a number out of range: cs_nccl_env_settings, the parser
     * every engine reads): NCCL fails at init or warns and keeps its
     * default, so the setting does not do what it says. Each variable is
     * checked alone (the parser stops at its first error); one of the
     * integers above that is not a number is already said. */
    for (guint i = 0; i < names->len; i++) {
        const char *name = names->pdata[i];
        const char *v = dr_env(c, name);
        if (v == NULL || g_hash_table_contains(said, name) || !cs_nccl_env_is_known(name))
            continue;
        g_autoptr(cs_nccl_env_t) one = cs_nccl_env_new();
        cs_nccl_env_set(one, name, v, cs_nccl_env_origin(c->env, name));
        cs_nccl_settings_t st;
        g_autoptr(GError) verr = NULL;
        if (cs_nccl_env_settings(one, &st, &verr)) {
            cs_nccl_settings_clear(&st);
            continue;
        }
        g_autofree char *ev = dr_env_evidence(c, name);
        dr_add(c->d, CS_DOCTOR_WARNING, "value-refused", ev,
               "NCCL refuses the value at init or warns and keeps its default, so the setting does not do what it "
               "says (collsim run refuses it the same way)",
               "give one of the values the message expects", "%s", verr->message);
    }
}

/* ---- interfaces (bootstrap and NET/Socket) -------------------------------------- */

static int socket_family(const dr_ctx_t *c)
{
    /* socket.cc ncclEnvSocketFamily */
    const char *f = dr_env(c, "NCCL_SOCKET_FAMILY");
    if (f != NULL && strcmp(f, "AF_INET") == 0)
        return 4;
    if (f != NULL && strcmp(f, "AF_INET6") == 0)
        return 6;
    return 0;
}

/* os/linux.cc ncclFindInterfaceMatchSubnet for an IPv4 NCCL_COMM_ID. */
static GArray *match_comm_id(const dr_machine_t *m, const char *comm_id)
{
    GArray *out = g_array_new(FALSE, FALSE, sizeof(int));
    char buf[64];
    g_strlcpy(buf, comm_id, sizeof buf);
    char *colon = strrchr(buf, ':');
    if (colon != NULL)
        *colon = '\0';
    struct in_addr a;
    if (inet_pton(AF_INET, buf, &a) != 1)
        return out;
    guint32 ip = g_ntohl(a.s_addr);
    for (guint i = 0; i < m->ifs->len && out->len == 0; i++) {
        const dr_if_t *f = m->ifs->pdata[i];
        for (int n = 0; n < f->nnets4; n++)
            if ((ip & f->nets4[2 * n + 1]) == f->nets4[2 * n]) {
                int idx = (int)i;
                g_array_append_val(out, idx);
                break;
            }
    }
    return out;
}

/* socket.cc ncclFindInterfaces: NCCL_SOCKET_IFNAME when longer than one
 * character, else ib*, the NCCL_COMM_ID subnet, anything but docker/lo/virbr,
 * then docker, lo, virbr. */
static GArray *find_ifs(dr_ctx_t *c, int max, char **how_p)
{
    const dr_machine_t *m = &c->d->m;
    const char *env = dr_env(c, "NCCL_SOCKET_IFNAME");
    int fam = socket_family(c);
    if (env != NULL && strlen(env) > 1) {
        *how_p = g_strdup_printf("NCCL_SOCKET_IFNAME=%s", env);
        return dr_find_interfaces(m, env, fam, max);
    }
    static const struct { const char *list; const char *how; } steps[] = {
        { "ib", "auto: interfaces named ib*" },
        { NULL, "auto: the interface in NCCL_COMM_ID's subnet" },
        { "^docker,lo,virbr", "auto: interfaces not named docker*, lo*, virbr*" },
        { "docker", "auto: no other interface, so docker*" },
        { "lo", "auto: no other interface, so lo*" },
        { "virbr", "auto: no other interface, so virbr*" },
    };
    GArray *r = NULL;
    for (gsize s = 0; s < G_N_ELEMENTS(steps); s++) {
        if (steps[s].list == NULL) {
            const char *id = dr_env(c, "NCCL_COMM_ID");
            if (id == NULL || strlen(id) <= 1)
                continue;
            r = match_comm_id(m, id);
        } else {
            r = dr_find_interfaces(m, steps[s].list, fam, max);
        }
        if (r->len > 0) {
            *how_p = g_strdup(steps[s].how);
            return r;
        }
        g_array_free(r, TRUE);
    }
    *how_p = g_strdup("auto: no usable interface");
    return g_array_new(FALSE, FALSE, sizeof(int));
}

static void if_state_evidence(GString *ev, const dr_if_t *f)
{
    if (ev->len > 0)
        g_string_append(ev, "; ");
    g_string_append_printf(ev, "%s/operstate = %s, ipv4 = %s", f->dir,
                           f->operstate != NULL ? f->operstate : "(unreadable)",
                           f->ipv4->len > 0 ? (const char *)f->ipv4->pdata[0] : "none");
}

static gboolean is_virtual_bridge(const char *name)
{
    return g_str_has_prefix(name, "docker") || g_str_has_prefix(name, "virbr") ||
           g_str_has_prefix(name, "br-") || g_str_has_prefix(name, "veth") ||
           g_str_has_prefix(name, "cni") || g_str_has_prefix(name, "flannel");
}

static void rule_socket_ifname(dr_ctx_t *c, GArray *boot)
{
    dr_machine_t *m = &c->d->m;
    const char *env = dr_env(c, "NCCL_SOCKET_IFNAME");
    g_autofree char *ev = dr_env_evidence(c, "NCCL_SOCKET_IFNAME");
    if (env != NULL && strlen(env) <= 1) {
        dr_add(c->d, CS_DOCTOR_WARNING, "socket-ifname-ignored", ev,
               "NCCL picks the interface itself (ib*, then anything but docker/lo/virbr)",
               "give the full interface name or prefix, e.g. NCCL_SOCKET_IFNAME=eth0",
               "NCCL ignores NCCL_SOCKET_IFNAME values of one character or less (socket.cc)");
        return;
    }
    if (env == NULL)
        return;
    if (boot->len > 0) {
        /* The bootstrap's interface is the address every rank publishes
         * (bootstrap.cc bootstrapNetInit, ncclGetUniqueId): loopback's
         * 127.0.0.1 reaches this host only. */
        const dr_if_t *f = m->ifs->pdata[g_array_index(boot, int, 0)];
        if (f->type == 772 || strcmp(f->name, "lo") == 0) {   /* ARPHRD_LOOPBACK */
            g_autoptr(GString) evs = g_string_new(ev);
            g_string_append_printf(evs, "; %s/type = %ld", f->dir, f->type);
            GString *names = g_string_new(NULL);
            for (guint i = 0; i < m->ifs->len; i++) {
                const dr_if_t *o = m->ifs->pdata[i];
                if (o->type != 772 && strcmp(o->name, "lo") != 0)
                    g_string_append_printf(names, "%s%s", names->len ? ", " : "", o->name);
            }
            g_autofree char *fix = names->len ? g_strdup_printf("set NCCL_SOCKET_IFNAME to the interface the "
                                                                "hosts share (this machine has: %s), or leave "
                                                                "it unset", names->str)
                                              : g_strdup("leave NCCL_SOCKET_IFNAME unset");
            dr_add(c->d, CS_DOCTOR_WARNING, "bootstrap-loopback", evs->str,
                   "every rank publishes a loopback address (127.0.0.1), which only this host reaches: a job "
                   "across hosts cannot initialise (ncclCommInitRank waits for ranks that cannot connect, until "
                   "the bootstrap times out); a one-host job is unaffected",
                   fix, "NCCL_SOCKET_IFNAME=%s puts NCCL's bootstrap on the loopback interface %s", env, f->name);
            g_string_free(names, TRUE);
        }
        return;
    }
    /* Nothing selected: say which names matched but were unusable. */
    g_autoptr(GString) evs = g_string_new(ev);
    GString *matched = g_string_new(NULL);
    for (guint i = 0; i < m->ifs->len; i++) {
        const dr_if_t *f = m->ifs->pdata[i];
        if (!dr_nccl_list_selects(env, f->name, -1))
            continue;
        g_string_append_printf(matched, "%s%s", matched->len ? ", " : "", f->name);
        if_state_evidence(evs, f);
    }
    GString *names = g_string_new(NULL);
    for (guint i = 0; i < m->ifs->len; i++)
        g_string_append_printf(names, "%s%s", i ? ", " : "", ((dr_if_t *)m->ifs->pdata[i])->name);
    g_autofree char *fix = g_strdup_printf("set NCCL_SOCKET_IFNAME to an interface that is up and has an "
                                           "address (this machine has: %s); a leading '=' matches a "
                                           "name exactly, '^' excludes",
                                           names->len ? names->str : "none");
    if (matched->len > 0)
        dr_add(c->d, CS_DOCTOR_ERROR, "socket-ifname-unusable", evs->str,
               "NCCL finds no socket interface: ncclCommInitRank fails in bootstrap "
               "(\"Bootstrap : no socket interface found\")", fix,
               "NCCL_SOCKET_IFNAME=%s matches only interfaces that are down or have no IP address: %s",
               env, matched->str);
    else
        dr_add(c->d, CS_DOCTOR_ERROR, "socket-ifname-missing", evs->str,
               "NCCL finds no socket interface: ncclCommInitRank fails in bootstrap "
               "(\"Bootstrap : no socket interface found\")", fix,
               "NCCL_SOCKET_IFNAME=%s matches no interface of this machine", env);
    g_string_free(matched, TRUE);
    g_string_free(names, TRUE);
}

/* ---- NET/IB devices ------------------------------------------------------------- */

static gint cmp_ibdev(gconstpointer pa, gconstpointer pb, gpointer user)
{
    const dr_machine_t *m = user;
    const dr_ibdev_t *a = pa, *b = pb;
    const dr_rdma_t *ra = m->rdma->pdata[a->rdma], *rb = m->rdma->pdata[b->rdma];
    /* net_ib/init.cc sorts by PCI path (NCCL_IB_DEVICE_PCI_ORDER=1);
     * devices without one go last. */
    if ((ra->bdf == NULL) != (rb->bdf == NULL))
        return ra->bdf == NULL ? 1 : -1;
    int x = ra->bdf != NULL ? strcmp(ra->bdf, rb->bdf) : 0;
    if (x == 0)
        x = dr_natural_cmp(ra->name, rb->name);
    if (x == 0)
        x = a->port - b->port;
    return x;
}

/* net_ib/init.cc ncclIbInitDevices: ACTIVE ports with an InfiniBand or
 * Ethernet link layer that NCCL_IB_HCA selects. */
static void find_ibdevs(dr_ctx_t *c)
{
    dr_machine_t *m = &c->d->m;
    const char *hca = dr_env(c, "NCCL_IB_HCA");
    for (guint i = 0; i < m->rdma->len; i++) {
        dr_rdma_t *r = m->rdma->pdata[i];
        for (int p = 0; p < r->nports; p++) {
            dr_port_t *port = &r->ports[p];
            if (port->state != 4 || port->ll == DR_LL_OTHER)
                continue;
            if (!dr_nccl_list_selects(hca, r->name, port->num))
                continue;
            dr_ibdev_t dev = { (int)i, p, -1, port->speed_mbps, "" };
            g_snprintf(dev.label, sizeof dev.label, "%s:%d", r->name, port->num);
            g_array_append_val(c->d->ibdevs, dev);
        }
    }
    g_array_sort_with_data(c->d->ibdevs, cmp_ibdev, m);
}

static int n_active_ports(const dr_machine_t *m, GString *ev)
{
    int n = 0;
    for (guint i = 0; i < m->rdma->len; i++) {
        dr_rdma_t *r = m->rdma->pdata[i];
        for (int p = 0; p < r->nports; p++)
            if (r->ports[p].state == 4 && r->ports[p].ll != DR_LL_OTHER) {
                if (n++ == 0 && ev != NULL)
                    g_string_append_printf(ev, "%s/state = %s", r->ports[p].dir, r->ports[p].state_str);
            }
    }
    return n;
}

/* An NCCL_IB_HCA that selects some devices but names others this machine
 * lacks (a list written for another host): NCCL uses what matches and
 * says nothing, so the other NICs stay unused. */
static void rule_ib_hca_partial(dr_ctx_t *c, const char *hca)
{
    dr_machine_t *m = &c->d->m;
    if (hca[0] == '^')
        return;
    gboolean exact = hca[0] == '=';
    g_auto(GStrv) items = g_strsplit(exact ? hca + 1 : hca, ",", -1);
    g_autoptr(GString) none = g_string_new(NULL);
    int nnone = 0;
    for (int k = 0; items[k] != NULL; k++) {
        if (items[k][0] == '\0' || items[k][0] == ':')
            continue;
        g_autofree char *one = g_strconcat(exact ? "=" : "", items[k], NULL);
        gboolean hit = FALSE;
        for (guint i = 0; i < m->rdma->len && !hit; i++) {
            dr_rdma_t *r = m->rdma->pdata[i];
            for (int p = 0; p < r->nports && !hit; p++)
                hit = dr_nccl_list_selects(one, r->name, r->ports[p].num);
        }
        if (!hit) {
            g_autofree char *shown = dr_one_line(g_strdup(items[k]));
            g_string_append_printf(none, "%s%s", nnone > 0 ? ", " : "", shown);
            nnone++;
        }
    }
    /* a list naming more than the host has (a cluster-wide superset)
     * loses nothing: said only where ACTIVE ports stay unused */
    guint active = 0;
    for (guint i = 0; i < m->rdma->len; i++) {
        dr_rdma_t *r = m->rdma->pdata[i];
        for (int p = 0; p < r->nports; p++)
            active += r->ports[p].state == 4 && (r->ports[p].ll == DR_LL_IB || r->ports[p].ll == DR_LL_ETH);
    }
    if (nnone == 0 || c->d->ibdevs->len >= active)
        return;
    g_autoptr(GString) used = g_string_new(NULL);
    for (guint i = 0; i < c->d->ibdevs->len; i++)
        g_string_append_printf(used, "%s%s", i > 0 ? ", " : "",
                               g_array_index(c->d->ibdevs, dr_ibdev_t, i).label);
    g_autofree char *ev = dr_env_evidence(c, "NCCL_IB_HCA");
    g_autofree char *impact = g_strdup_printf("NCCL uses only the %u port(s) the list matches (%s); the "
                                              "machine's other RDMA ports stay unused", c->d->ibdevs->len,
                                              used->str);
    dr_add(c->d, CS_DOCTOR_WARNING, "ib-hca-partial", ev, impact,
           "name this machine's own devices (the RDMA ports listed above), or unset NCCL_IB_HCA",
           "NCCL_IB_HCA=%s names %s, which match%s no RDMA device of this machine", hca, none->str,
           nnone == 1 ? "es" : "");
}

static void rule_ib_hca(dr_ctx_t *c)
{
    dr_machine_t *m = &c->d->m;
    const char *hca = dr_env(c, "NCCL_IB_HCA");
    if (hca != NULL && c->d->ibdevs->len > 0)
        rule_ib_hca_partial(c, hca);
    if (hca == NULL || c->d->ibdevs->len > 0)
        return;
    g_autofree char *ev0 = dr_env_evidence(c, "NCCL_IB_HCA");
    g_autoptr(GString) ev = g_string_new(ev0);
    GString *all = g_string_new(NULL);
    int named = 0;
    for (guint i = 0; i < m->rdma->len; i++) {
        dr_rdma_t *r = m->rdma->pdata[i];
        for (int p = 0; p < r->nports; p++) {
            dr_port_t *port = &r->ports[p];
            g_string_append_printf(all, "%s%s:%d", all->len ? ", " : "", r->name, port->num);
            if (dr_nccl_list_selects(hca, r->name, port->num)) {
                named++;
                g_string_append_printf(ev, "; %s/state = %s, link_layer = %s", port->dir,
                                       port->state_str ? port->state_str : "(unreadable)",
                                       port->link_layer_str ? port->link_layer_str : "(unreadable)");
            }
        }
    }
    if (m->rdma->len == 0)
        g_string_append(ev, "; /sys/class/infiniband is empty or absent");
    g_autofree char *fix = g_strdup_printf("name existing HCAs, e.g. NCCL_IB_HCA=%s (ports here: %s); "
                                           "prefix match unless the list starts with '=', '^' excludes, "
                                           "':N' picks a port",
                                           m->rdma->len > 0 ? ((dr_rdma_t *)m->rdma->pdata[0])->name : "mlx5_0",
                                           all->len ? all->str : "none");
    const char *impact = "NET/IB finds no device, so NCCL falls back to NET/Socket over TCP "
                         "(typically 10-100x slower), or fails if NCCL_NET=IB";
    if (m->rdma->len == 0)
        dr_add(c->d, CS_DOCTOR_WARNING, "ib-hca-no-rdma", ev->str,
               "NCCL uses NET/Socket over TCP here; the setting only matters on hosts with RDMA devices",
               "unset NCCL_IB_HCA on this host, or check that the RDMA driver (mlx5_core/mlx5_ib) is loaded",
               "NCCL_IB_HCA=%s is set, but this machine has no RDMA device", hca);
    else if (named > 0)
        dr_add(c->d, CS_DOCTOR_ERROR, "ib-hca-inactive", ev->str, impact, fix,
               "NCCL_IB_HCA=%s matches %d port(s), but none is ACTIVE with an InfiniBand or Ethernet "
               "link layer", hca, named);
    else
        dr_add(c->d, CS_DOCTOR_ERROR, "ib-hca-no-match", ev->str, impact, fix,
               "NCCL_IB_HCA=%s matches no RDMA device of this machine", hca);
    g_string_free(all, TRUE);
}

/* ---- the network choice --------------------------------------------------------- */

static void rule_net(dr_ctx_t *c, GArray *boot, const char *boot_how)
{
    cs_doctor_t *d = c->d;
    dr_machine_t *m = &d->m;
    const char *net = dr_env(c, "NCCL_NET");
    gboolean ib_disable = dr_env_long(c, "NCCL_IB_DISABLE", 0) != 0;
    g_autoptr(GString) active_ev = g_string_new(NULL);
    int active = n_active_ports(m, active_ev);

    /* net_ib/init.cc: IB needs NCCL_IB_DISABLE=0, one IP interface (found
     * like the bootstrap one) and at least one selected port. */
    gboolean ib_ok = !ib_disable && boot->len > 0 && d->ibdevs->len > 0;
    char *how = NULL;
    GArray *sock = find_ifs(c, 16 /* MAX_IFS, socket.h */, &how);
    g_free(how);
    gboolean want_ib = net == NULL || g_ascii_strcasecmp(net, "IB") == 0;
    gboolean want_sock = net == NULL || g_ascii_strcasecmp(net, "Socket") == 0;

    if (boot->len == 0) {
        d->net = CS_DOCTOR_NET_NONE;
        if (dr_env(c, "NCCL_SOCKET_IFNAME") == NULL || strlen(dr_env(c, "NCCL_SOCKET_IFNAME")) <= 1) {
            g_autoptr(GString) ev = g_string_new(NULL);
            for (guint i = 0; i < m->ifs->len; i++)
                if_state_evidence(ev, m->ifs->pdata[i]);
            if (ev->len == 0)
                g_string_append(ev, "/sys/class/net is empty or absent");
            dr_add(d, CS_DOCTOR_ERROR, "no-socket-interface", ev->str,
                   "NCCL cannot bootstrap (\"Bootstrap : no socket interface found\"): every "
                   "communicator creation fails",
                   "bring up an interface with an IP address",
                   "no interface is up with an IP address, so NCCL finds no socket interface (%s)", boot_how);
        }
    } else if (!want_ib && !want_sock) {
        d->net = CS_DOCTOR_NET_PLUGIN;
        d->plugin = g_strdup(net);
        g_autofree char *ev = dr_env_evidence(c, "NCCL_NET");
        dr_add(d, CS_DOCTOR_INFO, "net-plugin", ev,
               "NCCL uses the external network plugin of that name, or fails to initialize if no loaded "
               "plugin has it; the doctor cannot inspect plugins",
               NULL, "NCCL_NET=%s names neither of NCCL's internal transports (IB, Socket)", net);
    } else if (want_ib && ib_ok) {
        d->net = CS_DOCTOR_NET_IB;
    } else if (want_sock && sock->len > 0) {
        d->net = CS_DOCTOR_NET_SOCKET;
    } else {
        d->net = CS_DOCTOR_NET_NONE;
    }
    g_array_free(d->sockifs, TRUE);
    d->sockifs = sock;

    if (ib_disable && active > 0) {
        g_autofree char *ev = dr_env_evidence(c, "NCCL_IB_DISABLE");
        g_autofree char *evs = g_strdup_printf("%s; %s", ev, active_ev->str);
        dr_add(d, CS_DOCTOR_WARNING, "ib-disabled-with-rdma", evs,
               "inter-node traffic goes over TCP sockets instead of RDMA: far lower bandwidth, higher "
               "latency and CPU load, no GPUDirect RDMA",
               "unset NCCL_IB_DISABLE (or set 0) unless RDMA is known to be broken here",
               "NCCL_IB_DISABLE disables NET/IB although %d RDMA port(s) are ACTIVE", active);
    }
    if (net != NULL && g_ascii_strcasecmp(net, "Socket") == 0 && active > 0 && !ib_disable) {
        g_autofree char *ev = dr_env_evidence(c, "NCCL_NET");
        g_autofree char *evs = g_strdup_printf("%s; %s", ev, active_ev->str);
        dr_add(d, CS_DOCTOR_WARNING, "net-socket-with-rdma", evs,
               "inter-node traffic goes over TCP sockets instead of RDMA",
               "unset NCCL_NET", "NCCL_NET=Socket forces TCP although %d RDMA port(s) are ACTIVE", active);
    }
    if (d->net == CS_DOCTOR_NET_NONE && boot->len > 0) {
        g_autofree char *ev = dr_env_evidence(c, "NCCL_NET");
        const char *why = want_ib && !want_sock
            ? (ib_disable ? "NCCL_NET=IB but NCCL_IB_DISABLE is set"
                          : "NCCL_NET=IB but NET/IB finds no ACTIVE port")
            : "NET/Socket finds no interface";
        dr_add(d, CS_DOCTOR_ERROR, "net-unavailable", ev,
               "NCCL fails to initialize any network (\"Failed to initialize any NET plugin\"); "
               "multi-node communicators fail",
               want_ib && !want_sock ? "unset NCCL_NET, or fix the RDMA ports" : "bring up an interface",
               "no NCCL network transport is usable: %s", why);
    }
}

static void rule_summary(dr_ctx_t *c, GArray *boot)
{
    cs_doctor_t *d = c->d;
    dr_machine_t *m = &d->m;
    g_autoptr(GString) what = g_string_new(NULL);
    double total = 0;
    if (d->net == CS_DOCTOR_NET_IB) {
        /* One line: "over 8 InfiniBand port(s) at 400 Gb/s each: ..." when
         * the ports agree, each port's own kind and speed otherwise. */
        gboolean same = TRUE;
        const dr_ibdev_t *d0 = &g_array_index(d->ibdevs, dr_ibdev_t, 0);
        const dr_port_t *p0 = &((dr_rdma_t *)m->rdma->pdata[d0->rdma])->ports[d0->port];
        for (guint i = 1; i < d->ibdevs->len; i++) {
            const dr_ibdev_t *x = &g_array_index(d->ibdevs, dr_ibdev_t, i);
            const dr_port_t *p = &((dr_rdma_t *)m->rdma->pdata[x->rdma])->ports[x->port];
            same &= p->ll == p0->ll && x->speed_mbps == d0->speed_mbps;
        }
        g_autofree char *speed0 = d0->speed_mbps > 0 ? g_strdup_printf("%g Gb/s", d0->speed_mbps / 1000.0)
                                                     : g_strdup("unknown speed");
        if (same)
            g_string_printf(what, "NCCL will use NET/IB over %u %s port(s) at %s each:", d->ibdevs->len,
                            port_ll_name(p0), speed0);
        else
            g_string_printf(what, "NCCL will use NET/IB over %u port(s):", d->ibdevs->len);
        for (guint i = 0; i < d->ibdevs->len; i++) {
            dr_ibdev_t *dev = &g_array_index(d->ibdevs, dr_ibdev_t, i);
            dr_rdma_t *r = m->rdma->pdata[dev->rdma];
            dr_port_t *p = &r->ports[dev->port];
            GString *attrs = g_string_new(NULL);
            if (!same) {
                g_string_append_printf(attrs, "%s, ", port_ll_name(p));
                if (dev->speed_mbps > 0)
                    g_string_append_printf(attrs, "%g Gb/s", dev->speed_mbps / 1000.0);
                else
                    g_string_append(attrs, "unknown speed");
            }
            if (p->ll == DR_LL_ETH && dev->gid_index >= 0) {
                const dr_gid_t *g = dev->gid_index < p->ngids ? &p->gids[dev->gid_index] : NULL;
                g_string_append_printf(attrs, "%sGID %d %s%s", attrs->len ? ", " : "", dev->gid_index,
                                       g && g->present ? g->text : "?",
                                       g && g->version > 0 ? (g->version == 2 ? " RoCE v2" : " RoCE v1") : "");
            }
            g_string_append_printf(what, "%s %s", i ? "," : "", dev->label);
            if (attrs->len > 0)
                g_string_append_printf(what, " (%s)", attrs->str);
            g_string_free(attrs, TRUE);
            total += dev->speed_mbps > 0 ? dev->speed_mbps : 0;
        }
        g_autofree char *impact = g_strdup_printf(
            "NCCL's topology gives each NIC speed/8000 = %.1f GB/s (topo.cc); %.0f Gb/s in all",
            d->ibdevs->len > 0 ? g_array_index(d->ibdevs, dr_ibdev_t, 0).speed_mbps / 8000.0 : 0,
            total / 1000.0);
        d->net_line = g_strdup(what->str);
        d->net_note = g_steal_pointer(&impact);
    } else if (d->net == CS_DOCTOR_NET_SOCKET) {
        g_string_printf(what, "NCCL will use NET/Socket (TCP) over %u interface(s):", d->sockifs->len);
        for (guint i = 0; i < d->sockifs->len; i++) {
            const dr_if_t *f = m->ifs->pdata[g_array_index(d->sockifs, int, i)];
            /* net_socket.cc ncclNetSocketGetSpeed: /sys/class/net/IF/speed,
             * 10000 Mb/s when unreadable or <= 0 */
            long sp = f->speed > 0 ? f->speed : 10000;
            g_string_append_printf(what, "%s %s (%g Gb/s%s)", i ? "," : "", f->name, sp / 1000.0,
                                   f->speed > 0 ? "" : ", assumed by NCCL");
        }
        d->net_line = g_strdup(what->str);
        d->net_note = g_strdup("TCP moves data through host memory with CPU copies; NCCL's topology "
                               "gives each interface speed/8000 GB/s");
    } else if (d->net == CS_DOCTOR_NET_PLUGIN) {
        d->net_line = g_strdup_printf("NCCL will use the external network plugin \"%s\" if one is loaded",
                                      d->plugin);
    } else {
        d->net_line = g_strdup("NCCL has no usable network transport");
    }
    d->boot_if = boot->len > 0 ? g_array_index(boot, int, 0) : -1;
}

/* What the chosen NET/Socket interfaces mean for bandwidth and reach. */
static void rule_socket_quality(dr_ctx_t *c)
{
    cs_doctor_t *d = c->d;
    if (d->net != CS_DOCTOR_NET_SOCKET)
        return;
    dr_agg_t slow, unknown, loop, virt;
    dr_agg_init(&slow);
    dr_agg_init(&unknown);
    dr_agg_init(&loop);
    dr_agg_init(&virt);
    for (guint i = 0; i < d->sockifs->len; i++) {
        const dr_if_t *f = d->m.ifs->pdata[g_array_index(d->sockifs, int, i)];
        if (f->type == 772 || strcmp(f->name, "lo") == 0) {   /* ARPHRD_LOOPBACK */
            dr_agg_item(&loop, f->name);
            dr_agg_evidence(&loop, "%s/type = %ld", f->dir, f->type);
        } else if (f->bdf == NULL && is_virtual_bridge(f->name)) {
            dr_agg_item(&virt, f->name);
            dr_agg_evidence(&virt, "%s/device absent (virtual interface)", f->dir);
        }
        if (f->speed > 0 && f->speed < 10000) {
            g_autofree char *item = g_strdup_printf("%s (%g Gb/s)", f->name, f->speed / 1000.0);
            dr_agg_item(&slow, item);
            dr_agg_evidence(&slow, "%s/speed = %s", f->dir, f->speed_str);
        } else if (f->speed <= 0 && f->type != 772) {
            dr_agg_item(&unknown, f->name);
            dr_agg_evidence(&unknown, "%s/speed = %s", f->dir, f->speed_str ? f->speed_str : "(unreadable)");
        }
    }
    g_autofree char *ifev = dr_env_evidence(c, "NCCL_SOCKET_IFNAME");
    if (slow.n > 0) {
        g_autofree char *ev = g_strdup_printf("%s; %s", ifev, slow.evidence->str);
        dr_add(d, CS_DOCTOR_WARNING, "socket-slow", ev,
               "inter-node collectives are capped at the link rate (1 Gb/s = 0.125 GB/s), orders of "
               "magnitude below GPU and NVLink bandwidth",
               "use a faster interface (NCCL_SOCKET_IFNAME=<25/100G interface>) or an RDMA NIC",
               "NCCL's data path is a slow interface: %s", slow.items->str);
    }
    if (loop.n > 0)
        dr_add(d, CS_DOCTOR_WARNING, "socket-loopback", loop.evidence->str,
               "loopback only reaches this host: ranks on other hosts cannot connect",
               "pick a real interface with NCCL_SOCKET_IFNAME",
               "NCCL's data path is the loopback interface: %s", loop.items->str);
    if (virt.n > 0)
        dr_add(d, CS_DOCTOR_WARNING, "socket-virtual-bridge", virt.evidence->str,
               "a container or VM bridge is private to this host: other hosts cannot reach its addresses",
               "set NCCL_SOCKET_IFNAME to the host's physical interface (or '^docker,lo,virbr')",
               "NCCL's data path is a virtual bridge: %s", virt.items->str);
    if (unknown.n > 0)
        dr_add(d, CS_DOCTOR_INFO, "socket-speed-unknown", unknown.evidence->str,
               "NCCL assumes 10 Gb/s for these interfaces (net_socket.cc), which may be wrong either way",
               NULL, "the speed of %s is not known", unknown.items->str);
    dr_agg_clear(&slow);
    dr_agg_clear(&unknown);
    dr_agg_clear(&loop);
    dr_agg_clear(&virt);
}

/* Settings that take NCCL off the GPUs' own paths, or past what it
 * does safely by default. */
static void rule_intra(dr_ctx_t *c)
{
    const dr_machine_t *m = &c->d->m;
    /* paths.cc ncclGetLevel: NCCL_P2P_DISABLE=1 is P2P level LOC */
    if (m->gpus->len >= 2 && dr_env_long(c, "NCCL_P2P_DISABLE", 0) == 1) {
        g_autofree char *ev = dr_env_evidence(c, "NCCL_P2P_DISABLE");
        dr_add(c->d, CS_DOCTOR_WARNING, "p2p-disabled", ev,
               "the GPUs exchange data through host memory (SHM) or the network instead of NVLink or PCIe "
               "peer-to-peer: intra-node bandwidth drops several times (collsim run --env NCCL_P2P_DISABLE=1 "
               "prices it)",
               "unset it; where peer-to-peer fails (hangs, wrong results), fix the cause (IOMMU, PCIe ACS "
               "sending P2P through the root complex) rather than turning it off",
               "NCCL_P2P_DISABLE=1 turns off peer-to-peer between this machine's %u GPUs", m->gpus->len);
    }
    /* tuning.cc: LL128 is on by default only where NCCL deems it safe
     * (NVLink-class paths); forcing it elsewhere can corrupt data (NCCL's
     * documentation of NCCL_PROTO) */
    /* NVLink is not seen in sysfs: only GPUs whose model has none (PCIe
     * cards without a bridge: L40S, RTX 4090, ...) are known to be joined
     * by PCIe alone; an NVLink mesh (DGX-1) or bridge may run LL128 */
    gboolean no_nvlink = m->gpus->len >= 2 && m->nvswitches->len == 0;
    for (guint i = 0; i < m->gpus->len && no_nvlink; i++) {
        const dr_gpu_t *g = m->gpus->pdata[i];
        no_nvlink = g->model != NULL && g->model->nvlinks == 0;
    }
    cs_nccl_settings_t s;
    if (c->env != NULL && no_nvlink && cs_nccl_env_settings(c->env, &s, NULL)) {
        gboolean forced = FALSE;
        for (int k = 0; k < CS_COLL_COUNT; k++)
            forced |= s.proto_enabled[k][CS_PROTO_LL128] == 1;
        cs_nccl_settings_clear(&s);
        if (forced) {
            g_autofree char *ev = dr_env_evidence(c, "NCCL_PROTO");
            dr_add(c->d, CS_DOCTOR_WARNING, "ll128-forced", ev,
                   "NCCL leaves LL128 off by default where its GPUs are not all joined by NVLink, because it "
                   "is not safe there: forced on such a machine it can corrupt data (NCCL's documentation of "
                   "NCCL_PROTO)",
                   "unset NCCL_PROTO: a list that names LL128, or one that excludes another protocol "
                   "('^LL'), turns LL128 on where NCCL's default leaves it off",
                   "NCCL_PROTO forces LL128 on GPUs joined by PCIe only (%s, no NVLink)",
                   ((const dr_gpu_t *)m->gpus->pdata[0])->model->name);
        }
    }
}

/* RoCE: the ToS NCCL sets from NCCL_IB_TC picks the packets' priority
 * through the switch's DSCP-to-priority map; the usual map (priority =
 * DSCP / 8) and the usual lossless class (priority 3, DSCP 26: ToS 106)
 * say where a value lands. A note: the switch's own map decides. */
static void rule_roce_tc(dr_ctx_t *c)
{
    const char *v = dr_env(c, "NCCL_IB_TC");
    if (v == NULL || c->d->net != CS_DOCTOR_NET_IB)
        return;
    gboolean roce = FALSE;
    for (guint i = 0; i < c->d->ibdevs->len && !roce; i++) {
        const dr_ibdev_t *dev = &g_array_index(c->d->ibdevs, dr_ibdev_t, i);
        const dr_rdma_t *r = c->d->m.rdma->pdata[dev->rdma];
        roce = r->ports[dev->port].ll == DR_LL_ETH;
    }
    long tc = dr_env_long(c, "NCCL_IB_TC", 0);
    if (!roce || tc < 0 || tc > 255)
        return;
    int dscp = (int)(tc >> 2), prio = dscp >> 3;
    if (prio == 3)
        return;
    g_autofree char *ev = dr_env_evidence(c, "NCCL_IB_TC");
    dr_add(c->d, CS_DOCTOR_INFO, "roce-tc-priority", ev,
           "RoCE fabrics usually run PFC on priority 3 only: on another priority a congested switch drops "
           "RDMA packets, and go-back-N retransmissions or timeouts follow (docs/labs/lab6-lossy-tc.md)",
           "check the switch's DSCP-to-priority map and PFC classes; the usual lossless class is "
           "NCCL_IB_TC=106 (DSCP 26, priority 3)",
           "NCCL_IB_TC=%s puts RoCE data on DSCP %d, priority %d under the usual map (DSCP / 8)", v, dscp, prio);
}

/* ---- the CPUs this process may run on ---------------------------------------- */

/* A launcher's binding, as the kernel gives it for this process
 * (/proc/self/status Cpus_allowed_list; a captured tree's own copy):
 * NCCL keeps each GPU's threads, its network proxy among them, on that
 * set's CPUs near the GPU, or on the whole set where none is near
 * (topo.cc ncclTopoGetCpuAffinity). Run under the job's launcher
 * (mpirun -np 2 collsim doctor) it is the ranks' own binding. */
static void rule_cpu_binding(dr_ctx_t *c)
{
    dr_machine_t *m = &c->d->m;
    g_autofree char *st = dr_read(&m->fs, "/proc/self/status");
    g_autofree char *online = dr_read(&m->fs, "/sys/devices/system/cpu/online");
    const char *l = st != NULL ? strstr(st, "Cpus_allowed_list:") : NULL;
    if (l == NULL || online == NULL)
        return;
    l += strlen("Cpus_allowed_list:");
    l += strspn(l, " \t");
    const char *end = NULL;
    int allowed = cs_cpu_list_count(l, &end);
    int all = cs_cpu_list_count(online, NULL);
    if (allowed <= 0 || all <= 0 || allowed >= all)
        return;
    g_autofree char *set = dr_one_line(g_strndup(l, MIN((size_t)(end - l), (size_t)DR_MAX_VALUE)));
    g_autofree char *on = dr_one_line(g_strndup(online, DR_MAX_VALUE));
    /* the GPUs this process's ranks would drive: CUDA_VISIBLE_DEVICES's,
     * where the launcher set it for the live process, else the machine's */
    int ngpu = (int)m->gpus->len;
    const char *visible = m->fs.root[0] == '\0' ? g_getenv("CUDA_VISIBLE_DEVICES") : NULL;
    g_autofree char *gpus_how = NULL;
    if (visible != NULL) {
        g_auto(GStrv) ids = g_strsplit(visible, ",", -1);
        int n = 0;
        for (int i = 0; ids[i] != NULL; i++)
            n += ids[i][0] != '\0';
        ngpu = MIN(ngpu, n);
        gpus_how = g_strdup_printf("the %d GPU%s CUDA_VISIBLE_DEVICES leaves it", ngpu, ngpu == 1 ? "" : "s");
    } else {
        gpus_how = g_strdup_printf("the %d GPU%s here", ngpu, ngpu == 1 ? "" : "s");
    }
    g_autofree char *ev = g_strdup_printf("/proc/self/status Cpus_allowed_list = %s; "
                                          "/sys/devices/system/cpu/online = %s%s%s", set, on,
                                          visible != NULL ? "; CUDA_VISIBLE_DEVICES = " : "",
                                          visible != NULL ? visible : "");
    if (dr_env_long(c, "NCCL_IGNORE_CPU_AFFINITY", 0) != 0) {
        g_autofree char *how = dr_env_evidence(c, "NCCL_IGNORE_CPU_AFFINITY");
        dr_add(c->d, CS_DOCTOR_INFO, "cpu-binding-ignored", ev,
               "NCCL binds each GPU's threads to the GPU's near CPUs instead (topo.cc ncclTopoGetCpuAffinity), "
               "where a cgroup's cpuset allows them", NULL,
               "this process may run on %d of the %d online CPUs (%s), which %s makes NCCL ignore", allowed,
               all, set, how);
        return;
    }
    /* more GPUs than CPUs: their proxy threads and the caller's queue for
     * them; a machine without RDMA devices has no network proxy work */
    if (ngpu > allowed && m->rdma->len > 0) {
        g_autofree char *impact = g_strdup_printf(
            "ranks started the same way put the network proxy thread of each of their GPUs (it posts and polls "
            "every network transfer) and the caller's thread on %d CPU%s: collectives across nodes slow down, "
            "most at mid sizes and where one process drives several GPUs, beyond collsim's prediction (which "
            "does not price CPU time)", allowed, allowed == 1 ? "" : "s");
        dr_add(c->d, CS_DOCTOR_WARNING, "cpu-binding", ev, impact,
               "start the ranks with mpirun --bind-to none, --map-by ppr:N:node:pe=M (M cores a rank) or srun "
               "--cpus-per-task; Open MPI's mpirun binds each process to one core when it starts two or fewer "
               "(mpirun(1)); for an affinity binding (not a cgroup's cpuset) NCCL_IGNORE_CPU_AFFINITY=1 makes "
               "NCCL bind each GPU's threads to its near CPUs, and from NCCL 2.28.3 NCCL_PROXY_CPUSET moves "
               "the proxy threads",
               "this process may run on %d of the %d online CPUs (%s), fewer than %s", allowed, all, set,
               gpus_how);
        return;
    }
    dr_add(c->d, CS_DOCTOR_INFO, "cpu-binding-note", ev,
           "NCCL keeps each GPU's threads on this set's CPUs near the GPU (topo.cc ncclTopoGetCpuAffinity)", NULL,
           "this process may run on %d of the %d online CPUs (%s): a launcher's or cgroup's binding", allowed, all,
           set);
}

void dr_rules_nccl(dr_ctx_t *c, const char *gpu_model)
{
    rule_gpus(c, gpu_model);
    rule_names(c);
    char *how = NULL;
    GArray *boot = find_ifs(c, 1, &how);
    c->d->boot_how = how;
    rule_socket_ifname(c, boot);
    find_ibdevs(c);
    gboolean ib_wanted = dr_env_long(c, "NCCL_IB_DISABLE", 0) == 0 &&
                         (dr_env(c, "NCCL_NET") == NULL || g_ascii_strcasecmp(dr_env(c, "NCCL_NET"), "IB") == 0);
    if (ib_wanted)
        rule_ib_hca(c);
    rule_net(c, boot, how);
    if (c->d->net == CS_DOCTOR_NET_IB)
        dr_rule_gid(c);
    rule_socket_quality(c);
    rule_intra(c);
    rule_roce_tc(c);
    rule_cpu_binding(c);
    rule_summary(c, boot);
    g_array_free(boot, TRUE);
}
