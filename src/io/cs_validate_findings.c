/* What NCCL said it did (its INFO lines in the log, cs_nccl_info.h) set
 * beside what the model decided for the same machine and settings: every
 * connection line NCCL printed is held against the transport collsim
 * gives that pair of ranks (cs_comm_pair; a [receive] line against the
 * receiving rank's side), rank 0's rings against collsim's, the channel
 * count against collsim's; each kind of disagreement is one finding, with
 * NCCL's reasons for it as its source has them (transport/net.cc, net_ib.cc,
 * p2p.cc, shm.cc, graph/paths.cc) and, where one flag expresses it, the
 * flag that predicts the run as it ran. Named causes, not guesses from the
 * numbers: the numbers are validate's business. */
#include "config.h"
#include "io/cs_validate.h"
#include "models/cs_graph_log.h"
#include "models/cs_topo.h"

#include <string.h>

/* The kind of line NCCL prints for a transport collsim chose. */
static cs_seen_xport_t expected_kind(const cs_link_choice_t *ch)
{
    switch (ch->transport) {
    case CS_XPORT_P2P_NVL:
    case CS_XPORT_P2P_PCI:
        return CS_SEEN_P2P;
    case CS_XPORT_SHM:
        return CS_SEEN_SHM;
    case CS_XPORT_NET_IB:
        return ch->gdr ? CS_SEEN_NET_GDR : CS_SEEN_NET_HOST;
    case CS_XPORT_NET_SOCKET:
        return CS_SEEN_NET_SOCKET;
    default:
        return CS_SEEN_XPORT_COUNT;
    }
}

static gboolean kind_is_net(cs_seen_xport_t k)
{
    return k == CS_SEEN_NET_GDR || k == CS_SEEN_NET_HOST || k == CS_SEEN_NET_SOCKET || k == CS_SEEN_NET_OTHER;
}

static const char *model_name(cs_seen_xport_t k)
{
    static const char *const names[] = { "P2P", "SHM (through host memory)", "NET/IB with GPUDirect RDMA",
                                         "NET/IB through host memory (no GPUDirect RDMA)", "NET/Socket", "" };
    return names[k];
}

/* Why NCCL takes 'seen' where collsim takes 'model', and what to do. */
static const char *reason(cs_seen_xport_t seen, cs_seen_xport_t model)
{
    if (seen == CS_SEEN_NET_SOCKET && (model == CS_SEEN_NET_GDR || model == CS_SEEN_NET_HOST))
        return "NCCL takes TCP sockets when its IB transport finds no device it accepts (net_ib.cc: no port "
               "active, a link layer it does not know, NCCL_IB_HCA matching none; collsim doctor on the machine "
               "checks these) or when told to (NCCL_IB_DISABLE=1, NCCL_NET=Socket); to predict the run as it "
               "ran: --env NCCL_IB_DISABLE=1";
    if ((seen == CS_SEEN_NET_GDR || seen == CS_SEEN_NET_HOST) && model == CS_SEEN_NET_SOCKET)
        return "the topology's NICs are not RDMA NICs (--nic: an IB or RoCE part), or the model's environment "
               "turns RDMA off (NCCL_IB_DISABLE, NCCL_NET) where the run's did not";
    if (seen == CS_SEEN_NET_HOST && model == CS_SEEN_NET_GDR)
        return "the NIC moves the data through host memory and the GPU copies it there; NCCL does so when the "
               "GPU-NIC path is farther than NCCL_NET_GDR_LEVEL allows (default PXB: PCIe switches between "
               "them, no CPU; graph/paths.cc ncclTopoCheckGdr), on sends from a GPU older than Ampere without "
               "NVLink (NCCL_NET_GDR_READ's default, the same function), or without the GPU's peer-memory "
               "support (nvidia-peermem or dma-buf); --env NCCL_NET_GDR_LEVEL=LOC prices every network "
               "transfer through host memory";
    if (seen == CS_SEEN_NET_GDR && model == CS_SEEN_NET_HOST)
        return "the topology places the NIC farther from the GPU than the machine has it (collsim topo show "
               "prints the GPU-NIC paths), or the model's NCCL_NET_GDR_LEVEL / NCCL_NET_GDR_READ is not the "
               "run's";
    if (seen == CS_SEEN_SHM && model == CS_SEEN_P2P)
        return "peer-to-peer was off in the run (NCCL_P2P_DISABLE=1, or NCCL_P2P_LEVEL below the GPUs' path) "
               "or not possible on that machine (a GPU or driver without P2P, PCIe ACS redirecting peer "
               "traffic, a container without the GPUs' IPC); to predict the run as it ran: --env "
               "NCCL_P2P_DISABLE=1 (with NCCL_NET_DISABLE_INTRA=1 where the model then sends GPU pairs "
               "through a NIC)";
    if (seen == CS_SEEN_P2P && model == CS_SEEN_SHM)
        return "the run allowed P2P farther than the model does (its NCCL_P2P_LEVEL: --env), or its GPUs are "
               "closer than the topology has them (a shared PCIe switch, an NVLink bridge: collsim topo show "
               "against nvidia-smi topo -m)";
    if (kind_is_net(seen) && !kind_is_net(model))
        return "P2P and SHM were off in the run (NCCL_P2P_DISABLE=1 with NCCL_SHM_DISABLE=1) or not usable "
               "between these GPUs; to predict the run as it ran: --env NCCL_P2P_DISABLE=1 --env "
               "NCCL_SHM_DISABLE=1";
    if (!kind_is_net(seen) && kind_is_net(model))
        return "collsim sends the pair through a NIC by NCCL's rule for GPUs that both reach a NIC (at PXB or "
               "closer) faster than they reach each other (graph/paths.cc ncclTopoCheckNet), and the run's "
               "NCCL did not: its NCCL_NET_DISABLE_INTRA=1, or NICs unlike the topology's (collsim topo show); "
               "to predict the run as it ran: --env NCCL_NET_DISABLE_INTRA=1";
    return "the run's NCCL settings or machine differ from the model's (--env, the topology)";
}

typedef struct {
    int count;
    const cs_seen_conn_t *first;
} mismatch_t;

/* "0 2 4 3 1 5 6 7", the first 16 ranks and "..." after them */
static void append_order(GString *g, const int *order, int n)
{
    for (int i = 0; i < n && i < 16; i++)
        g_string_append_printf(g, "%s%d", i > 0 ? " " : "", order[i]);
    if (n > 16)
        g_string_append(g, " ...");
}

/* Whether the log's ranks sit on its hosts as the model places them, each
 * host's ranks in one block (rank r on the host whose block holds it:
 * nccl-tests under mpirun --map-by slot or srun's block distribution; a
 * host is a node, or a tray of an NVLink-domain node, cs_topo_rank_hosts):
 * FALSE, with the first rank out of place and the rank it should share a
 * host with (-1: it should not share the previous block's), where the
 * "# Rank" lines say otherwise; TRUE where they are silent. */
static gboolean placed_as_model(const cs_nccl_info_t *s, const cs_topo_t *t, int *rank_p, int *with_p)
{
    const GArray *h = s->rank_host;
    if (t == NULL || (int)h->len < t->ngpus)
        return TRUE;
    for (int r = 0; r < t->ngpus; r++)
        if (g_array_index(h, int, r) < 0)
            return TRUE;   /* a rank not listed: the placement is not known */
    g_autofree int *host = g_new(int, MAX(1, t->ngpus));
    if (cs_topo_rank_hosts(t, host) < 2)
        return TRUE;
    for (int r = 1, start = 0; r < t->ngpus; r++) {
        gboolean same_model = host[r] == host[r - 1];
        gboolean same_log = g_array_index(h, int, r) == g_array_index(h, int, r - 1);
        if (!same_model)
            start = r;
        if (same_model != same_log) {
            *rank_p = r;
            *with_p = same_model ? start : -1;
            return FALSE;
        }
    }
    return TRUE;
}

/* The topology node rank r runs on, -1 if none. */
static int node_of(const cs_topo_t *t, int r)
{
    for (int v = 0; t != NULL && v < t->nnodes; v++)
        if (r >= t->node_first_rank[v] && r < t->node_first_rank[v + 1])
            return v;
    return -1;
}

/* The rings rank 0 listed, channel by channel, against collsim's
 * (cs_graph_log_rings): a ring that visits the ranks in another order
 * crosses other links. Rings of another length are another communicator's,
 * or cut by NCCL (it prints at most about 20 ranks up to 2.19, a line of
 * 128 characters in 2.28): not compared. */
static void rings(const cs_nccl_info_t *s, const cs_comm_t *comm, const char *log, GPtrArray *out)
{
    const cs_comm_info_t *ci = cs_comm_info(comm);
    int n = ci->nranks, differ = 0, compared = 0;
    const cs_seen_ring_t *first = NULL;
    if (s->rings->len == 0)
        return;
    int nch = 0;
    g_autofree int *rings_next = cs_graph_log_rings(comm, &nch);
    g_autofree int *ours = g_new(int, MAX(1, n));
    g_autofree int *first_ours = g_new(int, MAX(1, n));
    for (guint i = 0; i < s->rings->len; i++) {
        const cs_seen_ring_t *r = g_ptr_array_index(s->rings, i);
        if ((int)r->order->len != n || r->channel >= nch)
            continue;
        const int *next = &rings_next[(gsize)r->channel * n];
        const int *o = (const int *)(void *)r->order->data;
        gboolean valid = TRUE;
        for (int k = 0; k < n && valid; k++)
            valid = o[k] >= 0 && o[k] < n;
        if (!valid)
            continue;
        compared++;
        /* collsim's ring from the log's first rank */
        ours[0] = o[0];
        for (int k = 1; k < n; k++)
            ours[k] = next[ours[k - 1]];
        if (memcmp(ours, o, sizeof *o * (size_t)n) != 0 && differ++ == 0) {
            first = r;
            memcpy(first_ours, ours, sizeof *ours * (size_t)n);
        }
    }
    if (differ == 0)
        return;
    GString *g = g_string_new(NULL);
    g_string_append_printf(g, "%s:%d: NCCL's ring on channel %d runs ", log, first->line, first->channel);
    append_order(g, (const int *)(void *)first->order->data, n);
    g_string_append(g, ", collsim's ");
    append_order(g, first_ours, n);
    if (compared > 1)
        g_string_append_printf(g, " (%d of the %d channels the log lists differ%s)", differ, compared,
                               differ == 1 ? "s" : "");
    g_string_append(g, ": the predicted ring's hops are not the run's and may cross other links (collsim topo "
                       "graph prints collsim's rings for a diff with the log's); NCCL's search found another "
                       "order on the machine, as a different NCCL version, NCCL_GRAPH_FILE, or a topology "
                       "unlike the machine's, gives");
    g_ptr_array_add(out, g_string_free(g, FALSE));
}

/* NCCL's reason against GPUDirect RDMA for 'rank' (one naming it, or one
 * naming no GPU), as " (NCCL's reason, line N: ...)"; "" if none. paths.cc
 * names the rank from NCCL 2.24 and the GPU's PCI bus id before (hex, "GPU
 * 1b000"): a bus id is not a rank, and such a reason is not quoted for one
 * (the version unknown, a number with hex letters is taken for a bus id). */
static char *gdr_reason(const cs_nccl_info_t *s, const cs_comm_info_t *ci, int rank)
{
    gboolean rank_form = ci->nccl_version == 0 || ci->nccl_version >= 22400;
    const cs_seen_reason_t *any = NULL;
    for (guint i = 0; i < s->gdr_reasons->len; i++) {
        const cs_seen_reason_t *r = &g_array_index(s->gdr_reasons, cs_seen_reason_t, i);
        if (r->gpu == NULL) {
            if (any == NULL)
                any = r;
            continue;
        }
        if (!rank_form || r->gpu[strspn(r->gpu, "0123456789")] != '\0')
            continue;
        char *e = NULL;
        long v = strtol(r->gpu, &e, 10);
        if (*e == '\0' && v == rank)
            return g_strdup_printf(" (NCCL's reason, line %d: %s)", r->line, r->text);
    }
    return any != NULL ? g_strdup_printf(" (NCCL's reason, line %d: %s)", any->line, any->text) : g_strdup("");
}

/* Whether the log's run is one communicator of the model's size: nccl-tests
 * with NCCL_TESTS_SPLIT_MASK runs several ('# Rank ... Group G'), each its
 * ranks 0..n-1 (init.cc's "comm ... nRanks N" says its size). */
static gboolean one_communicator(const cs_nccl_info_t *s, const cs_comm_info_t *ci, const char *log, GPtrArray *out)
{
    if (s->max_group == 0 && (s->comm_nranks.count == 0 ||
                              (s->comm_nranks_min == ci->nranks && s->comm_nranks_max == ci->nranks)))
        return TRUE;
    if (s->comm_nranks.count > 0 && s->comm_nranks_min != ci->nranks)
        g_ptr_array_add(out, g_strdup_printf(
            "%s:%d: NCCL's communicators here have %d rank%s (init.cc's 'comm ... nRanks' line), the model's %d: "
            "the run split its ranks (nccl-tests' NCCL_TESTS_SPLIT_MASK%s), so the connections, rings and "
            "channels NCCL printed were not compared", log, s->comm_nranks.line, s->comm_nranks_min,
            s->comm_nranks_min == 1 ? "" : "s", ci->nranks, s->max_group > 0 ? ", the '# Rank' lines' groups" : ""));
    else
        g_ptr_array_add(out, g_strdup_printf(
            "%s: the '# Rank' lines put the ranks in %d groups (nccl-tests' NCCL_TESTS_SPLIT_MASK: a communicator "
            "each), where the model has one of %d ranks: the connections, rings and channels NCCL printed were "
            "not compared", log, s->max_group + 1, ci->nranks));
    return FALSE;
}

/* " (NCCL's line N: TEXT)" for a fact NCCL printed, "" if it did not. */
static char *line_note(const cs_seen_fact_t *f)
{
    return f->count > 0 ? g_strdup_printf(" (NCCL's line %d: %s)", f->line, f->text) : g_strdup("");
}

/* Every connection line held against the model's choice for its pair:
 * one finding per kind of disagreement, and one for a network plugin. */
static void pairs(const cs_nccl_info_t *s, const cs_comm_t *comm, const char *log, GPtrArray *out)
{
    const cs_comm_info_t *ci = cs_comm_info(comm);
    const cs_topo_t *t = cs_comm_topo(comm);
    mismatch_t mis[CS_SEEN_XPORT_COUNT][CS_SEEN_XPORT_COUNT] = { { { 0, NULL } } };
    int plugin = 0;
    const cs_seen_conn_t *plugin_first = NULL;
    gboolean model_rdma = FALSE;
    for (guint i = 0; i < s->conns->len; i++) {
        const cs_seen_conn_t *c = &g_array_index(s->conns, cs_seen_conn_t, i);
        if (c->from < 0 || c->to < 0 || c->from >= ci->nranks || c->to >= ci->nranks || c->from == c->to)
            continue;   /* not a pair of this communicator */
        cs_link_choice_t ch;
        /* a [receive] line is the receiver's setup: its own NIC and GPUDirect RDMA */
        cs_comm_pair(comm, c->receive ? c->to : c->from, c->receive ? c->from : c->to, &ch);
        cs_seen_xport_t want = expected_kind(&ch);
        if (want == CS_SEEN_XPORT_COUNT)
            continue;
        model_rdma |= ch.transport == CS_XPORT_NET_IB;
        if (c->kind == CS_SEEN_NET_OTHER && kind_is_net(want)) {
            if (plugin++ == 0)
                plugin_first = c;
            continue;
        }
        /* inside a node the model's NET pairs carry no GPUDirect RDMA
         * choice of their own: their GDR is not judged */
        gboolean same = c->kind == want ||
                        (ch.transport == CS_XPORT_NET_IB && node_of(t, c->from) == node_of(t, c->to) &&
                         (c->kind == CS_SEEN_NET_GDR || c->kind == CS_SEEN_NET_HOST));
        if (!same && mis[c->kind][want].count++ == 0)
            mis[c->kind][want].first = c;
    }
    for (int k = 0; k < CS_SEEN_XPORT_COUNT; k++)
        for (int w = 0; w < CS_SEEN_XPORT_COUNT; w++) {
            const mismatch_t *m = &mis[k][w];
            if (m->count == 0)
                continue;
            char more[64] = "";
            if (m->count > 1)
                g_snprintf(more, sizeof more, " (and %d more such line%s)", m->count - 1, m->count > 2 ? "s" : "");
            const cs_seen_conn_t *c = m->first;
            g_autofree char *why = k == CS_SEEN_NET_HOST ? gdr_reason(s, ci, c->receive ? c->to : c->from)
                                 : k == CS_SEEN_NET_SOCKET ? line_note(&s->no_ib_device) : g_strdup("");
            g_ptr_array_add(out, g_strdup_printf(
                "%s:%d: NCCL connected rank %d to rank %d%s via %s%s, where the model has %s: %s%s", log,
                c->line, c->from, c->to, c->receive ? " (the receiver's line)" : "",
                (const char *)g_ptr_array_index(s->texts, c->text), more,
                model_name(w), reason(k, w), why));
        }
    if (plugin > 0)
        g_ptr_array_add(out, g_strdup_printf(
            "%s:%d: NCCL's network was a plugin (via %s), which collsim does not model (it models NCCL's "
            "own IB verbs and TCP sockets transports): the prediction prices the network as %s on the "
            "topology's NICs", log, plugin_first->line,
            (const char *)g_ptr_array_index(s->texts, plugin_first->text),
            model_rdma ? "NET/IB" : "NET/Socket"));
}

void cs_validate_findings(const cs_nccl_info_t *s, const cs_comm_t *comm, const char *log, GPtrArray *out)
{
    if (s == NULL || comm == NULL || !cs_nccl_info_any(s))
        return;
    const cs_comm_info_t *ci = cs_comm_info(comm);
    const cs_topo_t *t = cs_comm_topo(comm);
    int stray = -1, with = -1;
    if (!one_communicator(s, ci, log, out))
        return;
    if (!placed_as_model(s, t, &stray, &with)) {
        /* the pairs and rings would be judged against the wrong GPUs */
        char where[96];
        if (with >= 0)
            g_snprintf(where, sizeof where, "rank %d is not on the host of rank %d", stray, with);
        else
            g_snprintf(where, sizeof where, "rank %d is on the host of rank %d", stray, stray - 1);
        g_ptr_array_add(out, g_strdup_printf(
            "%s: the log's '# Rank' lines place the ranks on the hosts otherwise than the model, which puts "
            "each node's ranks in one block as mpirun --map-by slot and srun's block distribution do (%s): "
            "the connections and rings NCCL printed were not compared, and the prediction is for the model's "
            "placement", log, where));
    } else {
        pairs(s, comm, log, out);
        rings(s, comm, log, out);
    }

    /* Without connection lines (NCCL_DEBUG_SUBSYS without INIT, a log cut
     * down): what NCCL loaded and its rings' GPUDirect RDMA */
    int net_lines = 0;
    for (int k = CS_SEEN_NET_GDR; k <= CS_SEEN_NET_OTHER; k++)
        net_lines += s->xport[k].count;
    gboolean has_net = ci->nnodes > 1 || ci->intra_transport == CS_XPORT_NET_IB ||
                       ci->intra_transport == CS_XPORT_NET_SOCKET;
    cs_transport_t net = ci->nnodes > 1 ? ci->inter_transport : ci->intra_transport;
    if (net_lines == 0 && s->network.count > 0 && has_net) {
        cs_seen_xport_t loaded = cs_nccl_info_net_kind(s->network.text);
        g_autofree char *dev = line_note(&s->no_ib_device);
        if (loaded == CS_SEEN_NET_OTHER)
            g_ptr_array_add(out, g_strdup_printf(
                "%s:%d: NCCL's network was '%s', a plugin collsim does not model (it models NCCL's own IB "
                "verbs and TCP sockets transports): the prediction prices the network as %s on the "
                "topology's NICs", log, s->network.line, s->network.text, cs_transport_name(net)));
        else if (loaded == CS_SEEN_NET_SOCKET && net == CS_XPORT_NET_IB)
            g_ptr_array_add(out, g_strdup_printf("%s:%d: NCCL's network was TCP sockets (Using network %s), "
                                                 "where the model has %s: %s%s", log, s->network.line,
                                                 s->network.text, cs_transport_name(net),
                                                 reason(CS_SEEN_NET_SOCKET, CS_SEEN_NET_GDR), dev));
        else if (loaded != CS_SEEN_NET_SOCKET && net == CS_XPORT_NET_SOCKET)
            g_ptr_array_add(out, g_strdup_printf("%s:%d: NCCL's network was RDMA (Using network %s), where "
                                                 "the model has TCP sockets: %s", log, s->network.line,
                                                 s->network.text, reason(CS_SEEN_NET_GDR, CS_SEEN_NET_SOCKET)));
    }
    gboolean model_net_gdr = ci->nnodes > 1 ? ci->inter_transport == CS_XPORT_NET_IB && ci->gdr : FALSE;
    if (s->no_gdr.count > 0 && net_lines == 0 && model_net_gdr) {
        g_autofree char *why = gdr_reason(s, ci, -1);
        g_ptr_array_add(out, g_strdup_printf("%s:%d: a ring connection of NCCL's (a rank's send or receive) went "
                                             "without GPUDirect RDMA (%s), where the model has it on every "
                                             "network transfer: %s%s", log, s->no_gdr.line, s->no_gdr.text,
                                             reason(CS_SEEN_NET_HOST, CS_SEEN_NET_GDR), why));
    }

    /* the RDMA devices NCCL's IB transport opened (net_ib.cc "NET/IB :
     * Using [0]mlx5_0:1/IB [1]..."), fewer than the NICs the model's
     * rings use: the run's network had that many ports */
    if (s->net_devices.count > 0 && ci->nnodes > 1 && net == CS_XPORT_NET_IB &&
        g_str_has_prefix(s->net_devices.text, "NET/IB : Using")) {
        int ndev = s->net_devices_n;
        const char *hcas = s->net_devices_names;
        if (ndev > 0 && ndev < ci->nics_used)
            g_ptr_array_add(out, g_strdup_printf(
                "%s:%d: NCCL's IB transport opened %d RDMA device%s (%s), where the model's rings use %d NICs a "
                "node: an NCCL_IB_HCA that names fewer, or ports that were down or not ACTIVE; --env "
                "NCCL_IB_HCA==%s (the leading '=' matches the names exactly, not as prefixes) predicts the run "
                "as it ran", log, s->net_devices.line, ndev, ndev == 1 ? "" : "s",
                hcas, ci->nics_used, hcas));
    }

    /* the CPUs a process's threads may run on (topo.cc
     * ncclTopoGetCpuAffinity), no more than the threads its GPUs' network
     * proxies and its caller need: a launcher's binding. The network is
     * the log's where its connection lines say (SHM and P2P only: none),
     * else the model's. */
    cs_seen_cpu_bind_t cb;
    gboolean seen_net = net_lines > 0 || (s->xport[CS_SEEN_P2P].count == 0 && s->xport[CS_SEEN_SHM].count == 0
                                          ? has_net : FALSE);
    if (cs_nccl_info_cpu_bind(s, &cb) && seen_net && cb.gpus > cb.cpus) {
        g_autofree char *outside = cb.outside > 0
            ? g_strdup_printf(", and %d of its GPUs have no near CPU in it (NCCL: 'empty, ignoring')", cb.outside)
            : g_strdup("");
        g_autofree char *what = cb.kept
            ? g_strdup_printf("NCCL kept %d CPU%s near its GPUs for their threads (the first: %s)", cb.cpus,
                              cb.cpus == 1 ? "" : "s", cb.set)
            : g_strdup_printf("may run only on %d logical CPU%s (CPU affinity = %s)", cb.cpus,
                              cb.cpus == 1 ? "" : "s", cb.set);
        g_ptr_array_add(out, g_strdup_printf(
            "%s:%d: a process of %d GPUs %s%s: each GPU's network proxy thread, which posts and polls every "
            "network transfer, and the caller's thread share them; a launcher's binding does this (Open MPI's "
            "mpirun binds each process to one core when it starts two or fewer; srun --cpu-bind; taskset). "
            "collsim does not price the proxies' CPU time: where several are busy (rings, trees, all-to-all "
            "across nodes) the run is slower than predicted, most at mid sizes; mpirun --bind-to none or a "
            "binding to each GPU's NUMA node frees them, as NCCL_IGNORE_CPU_AFFINITY=1 does for an affinity "
            "binding (not a cgroup's cpuset), and from NCCL 2.28.3 NCCL_PROXY_CPUSET moves the proxy threads",
            log, cb.line, cb.gpus, what, outside));
    }

    /* the channel count NCCL settled on (init.cc: comm->nChannels) */
    if (s->coll_channels.count > 0 && ci->comm_nch > 0 && s->coll_channels_value != ci->comm_nch)
        g_ptr_array_add(out, g_strdup_printf(
            "%s:%d: NCCL ran %d coll channels, collsim's reproduction of its search gives %d: the predicted rings and "
            "channels are not the run's (collsim topo graph prints collsim's for a diff with the log's "
            "'Channel' and 'Trees' lines); a different NCCL version, NCCL_MIN_NCHANNELS, NCCL_MAX_NCHANNELS "
            "or NCCL_MIN_CTAS in the run, or a topology unlike the machine, does this",
            log, s->coll_channels.line, s->coll_channels_value, ci->comm_nch));
}
