/* What NCCL said it did (its INFO lines in the log, cs_nccl_info.h) set
 * beside what the model decided for the same machine and settings: every
 * connection line NCCL printed is held against the transport collsim
 * gives that pair of ranks (cs_comm_pair), and each kind of disagreement
 * is one finding, with NCCL's usual reasons for it (transport/net.cc,
 * p2p.cc, shm.cc, graph/paths.cc) and, where one flag expresses it, the
 * flag that predicts the run as it ran. Named causes, not guesses from the
 * numbers: the numbers are validate's business. */
#include "config.h"
#include "io/cs_validate.h"
#include "models/cs_graph_log.h"

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
        return "NCCL falls back to TCP sockets when it finds no usable RDMA device (collsim doctor on the "
               "machine says why: no RDMA port up, no usable GID, RoCE v1 only) or when told to "
               "(NCCL_IB_DISABLE=1, NCCL_NET=Socket); to predict the run as it ran: --env NCCL_IB_DISABLE=1";
    if ((seen == CS_SEEN_NET_GDR || seen == CS_SEEN_NET_HOST) && model == CS_SEEN_NET_SOCKET)
        return "the topology's NICs are not RDMA NICs (--nic: an IB or RoCE part), or the model's environment "
               "turns RDMA off (NCCL_IB_DISABLE, NCCL_NET) where the run's did not";
    if (seen == CS_SEEN_NET_HOST && model == CS_SEEN_NET_GDR)
        return "the NIC reads and writes host memory and the GPU copies through it; NCCL does so when the GPU-NIC "
               "path is farther than NCCL_NET_GDR_LEVEL allows (default PXB: PCIe switches between them, no "
               "CPU; graph/paths.cc ncclTopoCheckGdr), or without the GPU's peer-memory support (nvidia-peermem or dma-buf); to "
               "predict the run as it ran: --env NCCL_NET_GDR_LEVEL=LOC";
    if (seen == CS_SEEN_NET_GDR && model == CS_SEEN_NET_HOST)
        return "the topology places the NIC farther from the GPU than the machine has it (collsim topo show "
               "prints the GPU-NIC paths), or the model's NCCL_NET_GDR_LEVEL is not the run's";
    if (seen == CS_SEEN_SHM && model == CS_SEEN_P2P)
        return "peer-to-peer was off in the run (NCCL_P2P_DISABLE=1, or NCCL_P2P_LEVEL below the GPUs' path) "
               "or not possible on that machine (a GPU or driver without P2P, PCIe ACS redirecting peer "
               "traffic, a container without the GPUs' IPC); to predict the run as it ran: "
               "--env NCCL_P2P_DISABLE=1";
    if (seen == CS_SEEN_P2P && model == CS_SEEN_SHM)
        return "the run allowed P2P farther than the model does (its NCCL_P2P_LEVEL: --env), or its GPUs are "
               "closer than the topology has them (a shared PCIe switch, an NVLink bridge: collsim topo show "
               "against nvidia-smi topo -m)";
    if (kind_is_net(seen) && !kind_is_net(model))
        return "P2P and SHM were off in the run (NCCL_P2P_DISABLE=1 with NCCL_SHM_DISABLE=1) or not usable "
               "between these GPUs; to predict the run as it ran: --env NCCL_P2P_DISABLE=1 --env "
               "NCCL_SHM_DISABLE=1";
    if (!kind_is_net(seen) && kind_is_net(model))
        return "collsim sends the pair through a NIC as NCCL's rule does for GPUs that share a PCIe switch "
               "with a GPUDirect RDMA NIC (graph/paths.cc ncclTopoCheckNet), and the run's NCCL did not: "
               "check the topology's NICs and their GPUDirect RDMA against the machine's (collsim topo show)";
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

/* The rings rank 0 listed, channel by channel, against collsim's
 * (cs_graph_log_ring): a ring that visits the ranks in another order
 * crosses other links. Rings of another length are another communicator's. */
static void rings(const cs_nccl_info_t *s, const cs_comm_t *comm, const char *log, GPtrArray *out)
{
    const cs_comm_info_t *ci = cs_comm_info(comm);
    int n = ci->nranks, differ = 0, compared = 0;
    const cs_seen_ring_t *first = NULL;
    g_autofree int *next = g_new(int, MAX(1, n));
    g_autofree int *ours = g_new(int, MAX(1, n));
    g_autofree int *first_ours = g_new(int, MAX(1, n));
    for (guint i = 0; i < s->rings->len; i++) {
        const cs_seen_ring_t *r = g_ptr_array_index(s->rings, i);
        if ((int)r->order->len != n || !cs_graph_log_ring(comm, r->channel, next))
            continue;
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
                       "order on the machine, as a different NCCL version, NCCL_RINGS or NCCL_GRAPH_FILE, or "
                       "a topology unlike the machine's, gives");
    g_ptr_array_add(out, g_string_free(g, FALSE));
}

void cs_validate_findings(const cs_nccl_info_t *s, const cs_comm_t *comm, const char *log, GPtrArray *out)
{
    if (s == NULL || comm == NULL || !cs_nccl_info_any(s))
        return;
    const cs_comm_info_t *ci = cs_comm_info(comm);
    /* every connection line against the model's choice for its pair */
    mismatch_t mis[CS_SEEN_XPORT_COUNT][CS_SEEN_XPORT_COUNT] = { { { 0, NULL } } };
    int plugin = 0, checked = 0;
    const cs_seen_conn_t *plugin_first = NULL;
    gboolean model_rdma = FALSE;
    for (guint i = 0; i < s->conns->len; i++) {
        const cs_seen_conn_t *c = &g_array_index(s->conns, cs_seen_conn_t, i);
        if (c->from < 0 || c->to < 0 || c->from >= ci->nranks || c->to >= ci->nranks || c->from == c->to)
            continue;   /* not a pair of this communicator */
        cs_link_choice_t ch;
        cs_comm_pair(comm, c->from, c->to, &ch);
        cs_seen_xport_t want = expected_kind(&ch);
        if (want == CS_SEEN_XPORT_COUNT)
            continue;
        checked++;
        model_rdma |= ch.transport == CS_XPORT_NET_IB;
        if (c->kind == CS_SEEN_NET_OTHER && kind_is_net(want)) {
            if (plugin++ == 0)
                plugin_first = c;
            continue;
        }
        if (c->kind != want && mis[c->kind][want].count++ == 0)
            mis[c->kind][want].first = c;
    }
    /* NCCL's own reason for host-staged network sends, where it printed one */
    g_autofree char *gdr_why = s->gdr_disabled.count > 0
                                   ? g_strdup_printf(" (NCCL's reason, line %d: %s)", s->gdr_disabled.line,
                                                     s->gdr_disabled.text)
                                   : g_strdup("");
    for (int k = 0; k < CS_SEEN_XPORT_COUNT; k++)
        for (int w = 0; w < CS_SEEN_XPORT_COUNT; w++) {
            const mismatch_t *m = &mis[k][w];
            if (m->count == 0)
                continue;
            const cs_seen_fact_t *f = &s->xport[k];
            char more[64] = "";
            if (m->count > 1)
                g_snprintf(more, sizeof more, " (and %d more such line%s)", m->count - 1, m->count > 2 ? "s" : "");
            g_ptr_array_add(out, g_strdup_printf(
                "%s:%d: NCCL connected rank %d to rank %d via %s%s, where the model has %s: %s%s", log,
                m->first->line, m->first->from, m->first->to, f->text, more, model_name(w), reason(k, w),
                k == CS_SEEN_NET_HOST ? gdr_why : ""));
        }
    if (plugin > 0)
        g_ptr_array_add(out, g_strdup_printf(
            "%s:%d: NCCL's network was a plugin (via %s), which collsim does not model (it models NCCL's own "
            "IB verbs and TCP sockets transports): the prediction prices the network as %s on the topology's "
            "NICs", log, plugin_first->line, s->xport[CS_SEEN_NET_OTHER].text,
            model_rdma ? "NET/IB" : "NET/Socket"));

    /* Without connection lines (NCCL_DEBUG_SUBSYS=INIT only, or a log cut
     * down): what NCCL loaded and its rings' GPUDirect RDMA */
    if (checked == 0 && s->network.count > 0 && (ci->nnodes > 1 || ci->intra_transport == CS_XPORT_NET_IB ||
                                                  ci->intra_transport == CS_XPORT_NET_SOCKET)) {
        cs_transport_t net = ci->nnodes > 1 ? ci->inter_transport : ci->intra_transport;
        cs_seen_xport_t loaded = cs_nccl_info_net_kind(s->network.text);
        if (loaded == CS_SEEN_NET_OTHER)
            g_ptr_array_add(out, g_strdup_printf(
                "%s:%d: NCCL's network was '%s', a plugin collsim does not model (it models NCCL's own IB "
                "verbs and TCP sockets transports): the prediction prices the network as %s on the "
                "topology's NICs", log, s->network.line, s->network.text, cs_transport_name(net)));
        else if (loaded == CS_SEEN_NET_SOCKET && net == CS_XPORT_NET_IB)
            g_ptr_array_add(out, g_strdup_printf("%s:%d: NCCL's network was TCP sockets (Using network %s), "
                                                 "where the model has %s: %s", log, s->network.line,
                                                 s->network.text, cs_transport_name(net),
                                                 reason(CS_SEEN_NET_SOCKET, CS_SEEN_NET_GDR)));
        else if (loaded != CS_SEEN_NET_SOCKET && net == CS_XPORT_NET_SOCKET)
            g_ptr_array_add(out, g_strdup_printf("%s:%d: NCCL's network was RDMA (Using network %s), where "
                                                 "the model has TCP sockets: %s", log, s->network.line,
                                                 s->network.text, reason(CS_SEEN_NET_GDR, CS_SEEN_NET_SOCKET)));
    }
    int net_lines = 0;
    for (int k = CS_SEEN_NET_GDR; k <= CS_SEEN_NET_OTHER; k++)
        net_lines += s->xport[k].count;
    gboolean model_net_gdr = ci->nnodes > 1 ? ci->inter_transport == CS_XPORT_NET_IB && ci->gdr
                                            : ci->intra_transport == CS_XPORT_NET_IB && ci->intra.gdr;
    if (s->no_gdr.count > 0 && net_lines == 0 && model_net_gdr)
        g_ptr_array_add(out, g_strdup_printf("%s:%d: NCCL's rings sent over the network without GPUDirect RDMA "
                                             "(%s), where the model has it: %s%s", log, s->no_gdr.line,
                                             s->no_gdr.text, reason(CS_SEEN_NET_HOST, CS_SEEN_NET_GDR),
                                             gdr_why));

    rings(s, comm, log, out);

    /* the channel count NCCL settled on (init.cc: comm->nChannels) */
    if (s->coll_channels.count > 0 && ci->comm_nch > 0 && s->coll_channels_value != ci->comm_nch)
        g_ptr_array_add(out, g_strdup_printf(
            "%s:%d: NCCL ran %d coll channels, collsim's reproduction of its search %d: the predicted rings and "
            "channels are not the run's (collsim topo graph prints collsim's for a diff with the log's "
            "'Channel' and 'Trees' lines); a different NCCL version, NCCL_MIN_NCHANNELS, NCCL_MAX_NCHANNELS "
            "or NCCL_MIN_CTAS in the run, or a topology unlike the machine, does this",
            log, s->coll_channels.line, s->coll_channels_value, ci->comm_nch));
}
