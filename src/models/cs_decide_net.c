/* Which network NCCL uses on a host and its devices (NCCL v2.28.9):
 * plugin/net.cc tries the IB transport first, then Socket; net_ib.cc keeps
 * the active ports of RDMA NICs that NCCL_IB_HCA selects; misc/socket.cc
 * picks IP interfaces from NCCL_SOCKET_IFNAME or its automatic order. */
#include "config.h"

#include <string.h>

#include "models/cs_decide_int.h"
#include "util/cs_error.h"

#define MAX_IFS 16          /* net_socket.cc MAX_IFS */

/* Socket speed when /sys/class/net/IF/speed cannot be read, as for "lo"
 * (net_socket.cc ncclNetSocketGetSpeed: 10000 Mb/s). */
#define SOCKET_DEFAULT_MBPS 10000.0

typedef struct {
    char prefix[64];
    int port;               /* -1 = any */
} if_pattern_t;

/* misc/utils.cc parseStringList: "a,b:1,c" -> prefixes with optional
 * ":port". Returns the number of patterns. */
static int parse_if_list(const char *str, if_pattern_t *list, int max)
{
    int n = 0;
    g_auto(GStrv) items = g_strsplit(str, ",", -1);
    for (int i = 0; items[i] != NULL && n < max; i++) {
        const char *it = items[i];
        const char *colon = strchr(it, ':');
        gsize len = colon != NULL ? (gsize)(colon - it) : strlen(it);
        if (len == 0)
            continue;
        g_strlcpy(list[n].prefix, it, MIN(len + 1, sizeof list[n].prefix));
        list[n].port = colon != NULL ? atoi(colon + 1) : -1;
        n++;
    }
    return n;
}

/* misc/utils.cc matchIfList: prefix match (exact with '='), ports match
 * when either side is -1; an empty list matches everything. */
static gboolean match_if_list(const char *name, int port, const if_pattern_t *list, int n,
                              gboolean exact)
{
    if (n == 0)
        return TRUE;
    for (int i = 0; i < n; i++) {
        gboolean name_ok = exact ? strcmp(name, list[i].prefix) == 0
                                 : strncmp(name, list[i].prefix, strlen(list[i].prefix)) == 0;
        gboolean port_ok = port == -1 || list[i].port == -1 || port == list[i].port;
        if (name_ok && port_ok)
            return TRUE;
    }
    return FALSE;
}

/* A user list as NCCL_IB_HCA and NCCL_SOCKET_IFNAME take it: '^' excludes,
 * '=' asks for exact names. */
typedef struct {
    gboolean not, exact;
    int n;
    if_pattern_t pat[32];
} if_filter_t;

static void if_filter_parse(const char *str, if_filter_t *f)
{
    memset(f, 0, sizeof *f);
    if (str == NULL)
        return;
    if (str[0] == '^') {
        f->not = TRUE;
        str++;
    }
    if (str[0] == '=') {
        f->exact = TRUE;
        str++;
    }
    f->n = parse_if_list(str, f->pat, G_N_ELEMENTS(f->pat));
}

static gboolean if_filter_match(const if_filter_t *f, const char *name, int port)
{
    return match_if_list(name, port, f->pat, f->n, f->exact) != f->not;
}

static gboolean nic_is_rdma(const cs_device_t *d)
{
    return d->nic_kind == CS_NIC_IB || d->nic_kind == CS_NIC_ROCE;
}

/* An RDMA NIC's device name as NCCL_IB_HCA matches it: the topology's
 * ifname, else "mlx5_<local index>" (docs/model-decisions.md). g_free it. */
static char *rdma_name(const cs_device_t *d)
{
    return d->ifname != NULL ? g_strdup(d->ifname) : g_strdup_printf("mlx5_%d", d->local);
}

void cs_netsel_clear(cs_netsel_t *sel)
{
    for (int i = 0; i < sel->n; i++)
        g_free(sel->devs[i].name);
    g_clear_pointer(&sel->devs, g_free);
    sel->n = 0;
    sel->kind = CS_NET_NONE;
}

static void add_dev(GArray *a, int dev, const char *name, double bytes_per_s, gboolean gdr)
{
    cs_netdev_t d = { dev, g_strdup(name), bytes_per_s / 1e9, bytes_per_s, gdr };
    g_array_append_val(a, d);
}

/* The IB transport's devices: active ports of IB and RoCE NICs that
 * NCCL_IB_HCA keeps (net_ib.cc ncclIbInitDevices). Ports of one NIC are
 * merged into one device with the summed speed (NCCL_IB_MERGE_NICS=1). */
static void ib_devices(const cs_topo_t *t, const int *nics, int nnics, const cs_nccl_settings_t *s,
                       GArray *out)
{
    if_filter_t f;
    if_filter_parse(s->ib_hca, &f);
    for (int i = 0; i < nnics; i++) {
        const cs_device_t *d = &t->devs[nics[i]];
        if (!nic_is_rdma(d))
            continue;
        g_autofree char *name = rdma_name(d);
        int ports = MAX(d->nic_ports, 1), kept = 0;
        for (int p = 1; p <= ports; p++)
            if (if_filter_match(&f, name, p))
                kept++;
        if (kept > 0)
            add_dev(out, nics[i], name, d->nic_bw * kept, d->gdr);
    }
}

/* The IP interface of a NIC: an Ethernet NIC's own name; IB NICs carry
 * IPoIB interfaces "ib<k>"; a RoCE NIC named like its RDMA device gets
 * "eth<local index>". Real names vary; these are the modelling choice
 * documented in docs/model-decisions.md. */
static char *netdev_name(const cs_device_t *d, int ib_index)
{
    if (d->nic_kind == CS_NIC_IB)
        return g_strdup_printf("ib%d", ib_index);
    if (d->ifname != NULL && !(d->nic_kind == CS_NIC_ROCE && g_str_has_prefix(d->ifname, "mlx")))
        return g_strdup(d->ifname);
    return g_strdup_printf("eth%d", d->local);
}

/* misc/socket.cc ncclFindInterfaces: NCCL_SOCKET_IFNAME if longer than one
 * character, else "ib" interfaces, else anything but docker/lo/virbr, else
 * docker, else lo. At most MAX_IFS. */
static void socket_devices(const cs_topo_t *t, const int *nics, int nnics,
                           const cs_nccl_settings_t *s, GArray *out)
{
    int n = nnics + 1, nib = 0;
    g_autofree char **names = g_new0(char *, n);
    g_autofree double *speed = g_new0(double, n);
    g_autofree int *devs = g_new0(int, n);
    for (int i = 0; i < nnics; i++) {
        const cs_device_t *d = &t->devs[nics[i]];
        names[i] = netdev_name(d, d->nic_kind == CS_NIC_IB ? nib++ : -1);
        speed[i] = d->nic_bw;
        devs[i] = nics[i];
    }
    names[nnics] = g_strdup("lo");
    speed[nnics] = SOCKET_DEFAULT_MBPS * 1e6 / 8;
    devs[nnics] = -1;

    static const char *const automatic[] = { "ib", "^docker,lo,virbr", "docker", "lo", "virbr" };
    gboolean user = s->socket_ifname != NULL && strlen(s->socket_ifname) > 1;
    for (gsize k = 0; k < (user ? 1 : G_N_ELEMENTS(automatic)) && out->len == 0; k++) {
        if_filter_t f;
        if_filter_parse(user ? s->socket_ifname : automatic[k], &f);
        for (int i = 0; i < n && out->len < MAX_IFS; i++)
            if (if_filter_match(&f, names[i], -1))
                add_dev(out, devs[i], names[i], speed[i], FALSE);
    }
    for (int i = 0; i < n; i++)
        g_free(names[i]);
}

/* "mlx5_0, mlx5_1" (RDMA devices) or "eno1, eth0, lo" (IP interfaces, as
 * socket_devices names them) of a host's NICs, for messages. */
static char *host_names(const cs_topo_t *t, const int *nics, int nnics, gboolean rdma)
{
    GString *s = g_string_new(NULL);
    int nib = 0;
    for (int i = 0; i < nnics; i++) {
        const cs_device_t *d = &t->devs[nics[i]];
        if (rdma && !nic_is_rdma(d))
            continue;
        g_autofree char *name = NULL;
        if (rdma)
            name = rdma_name(d);
        else
            name = netdev_name(d, d->nic_kind == CS_NIC_IB ? nib++ : -1);
        g_string_append_printf(s, "%s%s", s->len ? ", " : "", name);
    }
    if (!rdma)
        g_string_append_printf(s, "%slo", s->len ? ", " : "");
    return g_string_free(s, FALSE);
}

/* "(--env)" / "(s.ini:12)": where a variable was set, for messages */
static const char *origin_of(const cs_nccl_env_t *env, const char *name)
{
    const char *o = env != NULL ? cs_nccl_env_origin(env, name) : NULL;
    return o != NULL ? o : "settings";
}

void cs_netsel_warnings(const cs_topo_t *t, int host, const cs_nccl_settings_t *s, const cs_netsel_t *sel,
                        const cs_nccl_env_t *env, GPtrArray *out)
{
    int nnics = cs_topo_node_nics(t, host, NULL, 0);
    g_autofree int *nics = g_new0(int, MAX(nnics, 1));
    cs_topo_node_nics(t, host, nics, nnics);
    int nrdma = 0, nroce = 0;
    for (int i = 0; i < nnics; i++) {
        nrdma += nic_is_rdma(&t->devs[nics[i]]);
        nroce += t->devs[nics[i]].nic_kind == CS_NIC_ROCE;
    }
    g_autofree char *hcas = host_names(t, nics, nnics, TRUE);
    g_autofree char *ifs = host_names(t, nics, nnics, FALSE);
    const char *via = sel->kind == CS_NET_SOCKET && sel->n > 0 ? sel->devs[0].name : "?";

    if (sel->kind == CS_NET_SOCKET && nrdma > 0 && s->ib_hca != NULL && !s->ib_disable) {
        /* net_ib.cc ncclIbInitDevices keeps no device; plugin/net.cc then
         * initialises the next transport, Socket */
        g_ptr_array_add(out, g_strdup_printf(
            "NCCL_IB_HCA=%s (%s) matches none of node %d's RDMA devices (%s): NCCL logs \"NET/IB : No device "
            "found.\" (net_ib.cc) and falls back to TCP sockets (NET/Socket over %s), far slower; its IP "
            "interfaces are %s; expected [nccl] NCCL_IB_HCA (or --env) naming one of its RDMA devices, or unset",
            s->ib_hca, origin_of(env, "NCCL_IB_HCA"), host, hcas, via, ifs));
    } else if (sel->kind == CS_NET_SOCKET && nrdma > 0 && s->ib_disable) {
        g_ptr_array_add(out, g_strdup_printf(
            "NCCL_IB_DISABLE=1 (%s): node %d's RDMA devices (%s) stay unused and NCCL moves inter-node data "
            "over TCP sockets (NET/Socket over %s; IP interfaces: %s); expected [nccl] NCCL_IB_DISABLE = 0 "
            "(or unset) to use them", origin_of(env, "NCCL_IB_DISABLE"), host, hcas, via, ifs));
    }
    if (sel->kind == CS_NET_IB && s->ib_hca != NULL && !s->ib_disable) {
        /* entries of a list that keeps some devices but names others that
         * are not here: NCCL uses what matches and says nothing, so a
         * list written for another host (its mlx5_4, mlx5_7, ...) quietly
         * leaves this host's NICs unused */
        if_filter_t f;
        if_filter_parse(s->ib_hca, &f);
        const char *list = s->ib_hca + (s->ib_hca[0] == '^') + (s->ib_hca[(s->ib_hca[0] == '^')] == '=');
        g_auto(GStrv) items = g_strsplit(list, ",", -1);
        g_autoptr(GString) none = g_string_new(NULL);
        int nnone = 0;
        for (int k = 0; items[k] != NULL && !f.not; k++) {
            if_pattern_t one;
            if (parse_if_list(items[k], &one, 1) != 1)
                continue;
            gboolean hit = FALSE;
            for (int i = 0; i < nnics && !hit; i++) {
                const cs_device_t *d = &t->devs[nics[i]];
                if (!nic_is_rdma(d))
                    continue;
                g_autofree char *name = rdma_name(d);
                for (int p = 1; p <= MAX(d->nic_ports, 1) && !hit; p++)
                    hit = match_if_list(name, p, &one, 1, f.exact);
            }
            if (!hit) {
                g_string_append_printf(none, "%s%s", nnone > 0 ? "," : "", items[k]);
                nnone++;
            }
        }
        g_autoptr(GString) kept = g_string_new(NULL);
        for (int i = 0; i < sel->n; i++)
            g_string_append_printf(kept, "%s%s", i > 0 ? ", " : "", sel->devs[i].name);
        /* a list naming more than the host has (a cluster-wide superset)
         * loses nothing: said only where NICs stay unused */
        if (nnone > 0 && sel->n < nrdma)
            g_ptr_array_add(out, g_strdup_printf(
                "NCCL_IB_HCA=%s (%s): %s match%s none of node %d's RDMA devices (%s): NCCL keeps the %d that the "
                "list matches (%s) and the model does too, so the rest of the node's NICs stay unused; expected "
                "the node's own device names (collsim topo show lists them), or NCCL_IB_HCA unset",
                s->ib_hca, origin_of(env, "NCCL_IB_HCA"), none->str, nnone == 1 ? "es" : "", host, hcas, sel->n,
                kept->str));
    }
    if (s->ib_gid_index >= 0 && sel->kind == CS_NET_IB) {
        if (nroce == 0) {
            /* net_ib.cc ncclIbGetGidIndex: an InfiniBand port uses GID 0
             * (or NCCL_IB_ROUTABLE_FLID_GID_INDEX), never NCCL_IB_GID_INDEX */
            g_ptr_array_add(out, g_strdup_printf(
                "NCCL_IB_GID_INDEX=%d (%s): node %d's RDMA devices (%s) are InfiniBand, where NCCL ignores it "
                "(net_ib.cc ncclIbGetGidIndex takes GID 0, or NCCL_IB_ROUTABLE_FLID_GID_INDEX); it changes "
                "nothing", s->ib_gid_index, origin_of(env, "NCCL_IB_GID_INDEX"), host, hcas));
        } else if (s->ib_gid_index > 3) {
            /* A ConnectX RoCE port with one IPv4 address holds GIDs 0-3:
             * link-local and IPv4-mapped, each as RoCE v1 and v2 (what
             * show_gids lists); NCCL uses a set index as given
             * (ncclIbGetGidIndex), so one past the table fails its GID
             * query and no connection forms. */
            g_ptr_array_add(out, g_strdup_printf(
                "NCCL_IB_GID_INDEX=%d (%s) is beyond the GIDs of a RoCE port with one IPv4 address (0 to 3: "
                "link-local and IPv4, RoCE v1 and v2) on node %d (%s): NCCL uses the index as given "
                "(net_ib.cc ncclIbGetGidIndex), and where the port's table "
                "(/sys/class/infiniband/DEV/ports/1/gids) has no such entry its GID query fails and NCCL cannot "
                "connect; collsim's topology holds no GID table, so these times assume the connection works "
                "(collsim doctor reads the table); expected [nccl] NCCL_IB_GID_INDEX unset (NCCL picks the "
                "RoCE v2 IPv4 GID) or an index the table has",
                s->ib_gid_index, origin_of(env, "NCCL_IB_GID_INDEX"), host, hcas));
        }
    }
}

gboolean cs_netsel_host(const cs_topo_t *t, int host, const cs_nccl_settings_t *s,
                        gboolean need_net, cs_netsel_t *sel_p, GError **err)
{
    int nnics = cs_topo_node_nics(t, host, NULL, 0);
    g_autofree int *nics = g_new0(int, MAX(nnics, 1));
    cs_topo_node_nics(t, host, nics, nnics);
    GArray *devs = g_array_new(FALSE, TRUE, sizeof(cs_netdev_t));
    cs_netsel_t sel = { CS_NET_NONE, 0, NULL };

    gboolean want_ib = s->net == NULL || strcmp(s->net, "IB") == 0;
    gboolean want_socket = s->net == NULL || strcmp(s->net, "Socket") == 0;
    if (want_ib && !s->ib_disable)
        ib_devices(t, nics, nnics, s, devs);
    if (devs->len > 0) {
        sel.kind = CS_NET_IB;
    } else if (want_ib && !want_socket) {
        g_array_free(devs, TRUE);
        if (s->ib_disable)
            cs_set_error_at(err, NULL, 0, "NCCL_NET=IB with NCCL_IB_DISABLE=1: NCCL finds no "
                            "network and fails to initialise; expected NCCL_NET unset or Socket");
        else
            cs_set_error_at(err, NULL, 0, "NCCL_NET=IB: node %d has no RDMA NIC%s%s%s; NCCL "
                            "fails to initialise; expected an IB or RoCE NIC, or NCCL_NET=Socket",
                            host, s->ib_hca ? " that NCCL_IB_HCA=" : "",
                            s->ib_hca ? s->ib_hca : "", s->ib_hca ? " selects" : "");
        return FALSE;
    } else {
        socket_devices(t, nics, nnics, s, devs);
        sel.kind = devs->len > 0 ? CS_NET_SOCKET : CS_NET_NONE;
    }
    /* The bootstrap reads NCCL_SOCKET_IFNAME too (bootstrap.cc): a list that
     * matches nothing stops NCCL whatever the data transport is. */
    if (s->socket_ifname != NULL && strlen(s->socket_ifname) > 1) {
        GArray *probe = devs;
        if (sel.kind != CS_NET_SOCKET) {
            probe = g_array_new(FALSE, TRUE, sizeof(cs_netdev_t));
            socket_devices(t, nics, nnics, s, probe);
        }
        gboolean none = probe->len == 0;
        /* the bootstrap takes the first interface the list selects in
         * the kernel's order (bootstrap.cc bootstrapNetInit, socket.cc
         * findInterfaces over getifaddrs), where lo comes first (ifindex
         * 1): a list that selects lo at all ("^docker", "ib,lo") puts the
         * bootstrap there, and every rank publishes 127.0.0.1, which no
         * other host reaches */
        gboolean lo = FALSE;
        for (guint i = 0; i < probe->len && !lo; i++)
            lo = g_array_index(probe, cs_netdev_t, i).dev < 0;
        if (probe != devs) {
            for (guint i = 0; i < probe->len; i++)
                g_free(g_array_index(probe, cs_netdev_t, i).name);
            g_array_free(probe, TRUE);
        }
        if (none) {
            for (guint i = 0; i < devs->len; i++)
                g_free(g_array_index(devs, cs_netdev_t, i).name);
            g_array_free(devs, TRUE);
            /* bootstrap.cc bootstrapNetInit logs "Bootstrap : no socket
             * interface found" and returns an error */
            g_autofree char *ifs = host_names(t, nics, nnics, FALSE);
            cs_set_error_at(err, NULL, 0, "NCCL_SOCKET_IFNAME=%s matches no interface of node "
                            "%d (%s); NCCL logs \"Bootstrap : no socket interface found\" (bootstrap.cc) and "
                            "fails; expected [nccl] NCCL_SOCKET_IFNAME (or --env) naming a prefix of one of them",
                            s->socket_ifname, host, ifs);
            return FALSE;
        }
        if (lo && need_net) {
            for (guint i = 0; i < devs->len; i++)
                g_free(g_array_index(devs, cs_netdev_t, i).name);
            g_array_free(devs, TRUE);
            g_autofree char *ifs = host_names(t, nics, nnics, FALSE);
            if (g_str_has_suffix(ifs, ", lo"))
                ifs[strlen(ifs) - 4] = '\0';   /* the interfaces other than loopback */
            else if (strcmp(ifs, "lo") == 0) {
                g_free(ifs);
                ifs = g_strdup("none besides lo");
            }
            cs_set_error_at(err, NULL, 0, "NCCL_SOCKET_IFNAME=%s puts NCCL's bootstrap on node %d's loopback "
                            "interface: every rank publishes 127.0.0.1 (bootstrap.cc), which the other nodes "
                            "cannot reach, so the job never initialises (ncclCommInitRank waits until the "
                            "bootstrap times out); expected [nccl] NCCL_SOCKET_IFNAME (or --env) naming an "
                            "interface the nodes share (%s), or unset",
                            s->socket_ifname, host, ifs);
            return FALSE;
        }
    }
    if (need_net && sel.kind == CS_NET_NONE) {
        g_array_free(devs, TRUE);
        cs_set_error_at(err, NULL, 0, "node %d has no usable network device; NCCL cannot reach "
                        "its other nodes; expected a NIC (or NCCL_NET/NCCL_IB_HCA that keep one)",
                        host);
        return FALSE;
    }
    sel.n = (int)devs->len;
    sel.devs = (cs_netdev_t *)(void *)g_array_free(devs, sel.n == 0);
    *sel_p = sel;
    return TRUE;
}
