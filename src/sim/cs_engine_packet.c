/* The packet engine (issue #11): the flow engine's execution of the rank
 * programs, with every byte from the NIC outward carried as RoCEv2
 * packets by the packet network (cs_pkt_net.h) through the flow engine's
 * transport seam (cs_flow_xport_t, cs_engine_flow-int.h). Inside a node
 * (GPU memory, NVLink, PCIe, a channel's ceiling) the flow engine's fair
 * sharing sets each connection's rate, which paces its QPs; from the NIC
 * on, ports, queues, switch buffers, PFC, ECN and DCQCN decide when each
 * packet arrives. Model and checks: docs/model-packet.md.
 *
 * One packet network per call: NICs are its hosts, fabric switches its
 * switches, every NET link of the topology a link (its rate, its latency
 * plus the switch's hop latency as propagation). Every network connection
 * of a channel (a ring or tree edge) has NCCL_IB_QPS_PER_CONNECTION QPs;
 * each message goes on one of them in turn, or is split over all of them
 * with NCCL_IB_SPLIT_DATA_ON_QPS=1 (net_ib/common.h
 * ncclIbCommBaseGetQpForRequest; parts rounded up to 128 B, p2p.cc
 * IB_WRITE_CHUNK_ALIGNMENT). Each QP's route through the fabric is the
 * ECMP choice of its RoCEv2 UDP source port (a hash of the run's seed,
 * its NICs, channel and QP index), so more QPs spread a connection over
 * more paths, as on real fabrics. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "sim/cs_engine_packet-int.h"
#include "sim/cs_engine_flow-int.h"
#include "sim/cs_fabric_load.h"
#include "sim/cs_pkt_net.h"
#include "sim/cs_pkt_sharp.h"
#include "sim/cs_pkt_vlarb.h"
#include "models/cs_paths.h"
#include "util/cs_error.h"

/* The fabric as the engine runs it: the [fabric] section (or its
 * defaults) with the NCCL settings that bear on it. */
typedef struct {
    cs_fabric_cfg_t cfg;         /* a copy of the section */
    gboolean ib;                 /* InfiniBand NICs: credits per VL, IB framing (issue #14) */
    guint32 mtu;                 /* path MTU */
    int prio;                    /* the data's priority (InfiniBand: its VL) */
    char *prio_why;              /* what decided it */
    int cnp_prio;
    gboolean dcqcn;
    cs_pkt_dcqcn_cfg_t dc;
    int qps;                     /* NCCL_IB_QPS_PER_CONNECTION */
    gboolean split;              /* NCCL_IB_SPLIT_DATA_ON_QPS */
    int timeout_exp, retry_cnt;  /* NCCL_IB_TIMEOUT, NCCL_IB_RETRY_CNT */
    gboolean ar;                 /* InfiniBand adaptive routing (NCCL_IB_ADAPTIVE_ROUTING, on by default) */
    long ar_threshold;           /* NCCL_IB_AR_THRESHOLD: with AR, a larger message's data goes apart (x_send) */
    gboolean ibcc;               /* InfiniBand congestion control (ibcc = on) */
    cs_pkt_ibcc_cfg_t ic;
    cs_pkt_arb_t arb;            /* InfiniBand ports' VL arbitration (every port the same) */
    guint32 ack_interval;
    double wire_ratio;           /* wire bytes per payload byte of full packets */
} pk_fabric_t;

/* A network connection of the run (a lane of the flow engine). */
#define PK_WINDOW 64             /* messages a lane may have undelivered (NCCL: at most 8 slots) */

typedef struct {
    int qp0, nqp;                /* its QPs */
    int job, ch;
    int src_nic, dst_nic;        /* topology devices */
    guint64 posted;              /* messages posted */
    guint64 delivered;           /* messages delivered, in order */
    guint8 left[PK_WINDOW];      /* parts of message k not yet delivered, at k % PK_WINDOW */
    int sent_left;               /* parts of the message in progress not yet sent */
    int prio;                    /* its job's priority (InfiniBand: VL) */
    long ar_threshold;           /* its job's NCCL_IB_AR_THRESHOLD (a sender's setting) */
} pk_lane_t;

typedef struct {
    int lane, index;             /* its lane and its index among the lane's QPs */
    guint64 nposted, nsent, ndeliv;
} pk_qp_t;

typedef struct {
    cs_flow_t *flow;
    const cs_topo_t *topo;
    guint64 seed;
    pk_fabric_t fab;
    /* per call */
    cs_pkt_net_t *net;
    int *node_of_dev;            /* topology device -> network node, -1 */
    int *port_of_link;           /* topology link -> network port, -1 */
    GArray *lanes;               /* pk_lane_t, indexed by the flow engine's lane */
    GArray *qps;                 /* pk_qp_t */
    int *job_prio;               /* njob_prio tasks' priorities (InfiniBand: VLs), -1 none; NULL: fab.prio */
    long *job_ar_threshold;      /* njob_prio tasks' NCCL_IB_AR_THRESHOLD; NULL: fab.ar_threshold */
    int njob_prio;
    gboolean notes_per_job;      /* pk_notes: each job's VL and threshold follow (pk_notes_jobs) */
    gboolean failed;
    int failed_qp;
    cs_time_t failed_at;
    /* the last call, for -v and --link-stats */
    guint64 events;
    guint64 pkt_events;
    double cpu;
    cs_net_counters_t *net_counters;
    /* --trace: the fabric's gauges, sampled every SAMPLE_PS while packets move */
    cs_sim_sink_t *sink;
    int nsampled;                /* network ports and priorities sampled (port_of_link order, then priority) */
    int *sample_port;            /* their port ids */
    int *sample_prio;            /* and priorities (InfiniBand: VLs) */
    char **queue_name, **pause_name, **rate_name;
    double *last_queue, *last_pause, *last_rate;
    cs_link_stats_t *stats;
    cs_fabric_load_t *load;      /* estimates: the calls' network edges and hops; NULL until asked */
    double est_bytes;            /* the last estimate's bytes but the wires' packets (pk_estimate) */
    double pool_cap;             /* packets the pool may hold (the memory left); 0: no limit */
    const char *pool_why;        /* what sets it */
    /* CollNet on InfiniBand: SHARP's aggregation trees (cs_pkt_sharp.h),
     * per call; the last call's counters for -v */
    cs_pkt_sharp_t *sharp;
    gboolean collnet;            /* the job may run CollNet (the header's note) */
    char *sharp_text;
} pk_t;

/* What the packet network allocates, measured with glibc's mallinfo2 (in-use
 * bytes, x86-64) by `bench-packet memory` ("per item", 1024 hosts): a NET
 * link (its port, PFC state, MMU entry, receive path) 3.0 KB; a QP (route,
 * message ring, DCQCN state, events) 1.0-1.1 KB when added, 1.1-1.6 KB once
 * it has run, packets in flight included; a packet record 48 B in pool
 * blocks. Rounded up. */
#define PK_BYTES_PER_PORT 3200.0
#define PK_BYTES_PER_QP 1600.0
#define PK_BYTES_PER_PKT 64.0
/* Packet events per data packet hop (a packet leaving a port: its start and
 * its arrival, its ACK's hops back, pacing), and the rate they run at:
 * measured by `collsim run --model packet -v` against this estimate's hops
 * (docs/model-packet.md, "Cost"); the rate is the engine's on the 2-core
 * machine of docs/benchmarks.md, so the time is a rough guide. */
#define PK_EVENTS_PER_HOP 5.0
#define PK_EVENTS_PER_S 10e6   /* bench-packet engine: 14.8-28 M/s, rounded down for other machines */

/* ---- the fabric --------------------------------------------------------- */

/* The framing of the fabric's packets: IB's, or RoCEv2's with a VLAN tag
 * when switches trust PCP (the priority rides in the tag). */
static cs_pkt_frame_t pk_frame(const pk_fabric_t *fab)
{
    cs_pkt_frame_t fr = { .ib = fab->ib, .vlan = !fab->ib && fab->cfg.trust == CS_FABRIC_TRUST_PCP };
    return fr;
}

/* DCQCN: the preset, then the parameters the section sets. */
static void fabric_dcqcn(pk_fabric_t *fab)
{
    const cs_fabric_cfg_t *c = &fab->cfg;
    if (c->dcqcn == CS_FABRIC_DCQCN_PAPER)
        cs_pkt_dcqcn_cfg_paper(&fab->dc);
    else
        cs_pkt_dcqcn_cfg_connectx(&fab->dc);
    cs_pkt_dcqcn_cfg_t *d = &fab->dc;
    if (c->dcqcn_ai_bps >= 0)
        d->ai_bps = (guint64)llround(c->dcqcn_ai_bps);
    if (c->dcqcn_hai_bps >= 0)
        d->hai_bps = (guint64)llround(c->dcqcn_hai_bps);
    if (c->dcqcn_min_rate_bps >= 0)
        d->min_rate_bps = (guint64)llround(c->dcqcn_min_rate_bps);
    if (c->dcqcn_g >= 0)
        d->g = c->dcqcn_g;
    if (c->dcqcn_min_dec >= 0)
        d->min_dec = c->dcqcn_min_dec;
    if (c->dcqcn_timer_s >= 0)
        d->timer = (cs_time_t)llround(c->dcqcn_timer_s * CS_PS_PER_S);
    if (c->dcqcn_cnp_gap_s >= 0)
        d->cnp_gap = (cs_time_t)llround(c->dcqcn_cnp_gap_s * CS_PS_PER_S);
    if (c->dcqcn_rate_reduce_s >= 0)
        d->rate_reduce_period = (cs_time_t)llround(c->dcqcn_rate_reduce_s * CS_PS_PER_S);
    if (c->dcqcn_alpha_period_s >= 0)
        d->alpha_period = (cs_time_t)llround(c->dcqcn_alpha_period_s * CS_PS_PER_S);
    if (c->dcqcn_byte_counter >= 0)
        d->byte_reset = (guint64)c->dcqcn_byte_counter;
    if (c->dcqcn_f >= 0)
        d->f = c->dcqcn_f;
    d->cnp_prio = fab->cnp_prio;
}

/* [fabric] keys that configure Ethernet's PFC, ECN, DCQCN or switch
 * buffers: an InfiniBand fabric has none of them (credits per VL). */
static const int roce_only_keys[] = {
    CS_FK_PFC, CS_FK_TRUST, CS_FK_DSCP_MAP, CS_FK_ROCE_TOS, CS_FK_CNP_DSCP, CS_FK_ECN, CS_FK_ECN_KMIN,
    CS_FK_ECN_KMAX, CS_FK_ECN_PMAX, CS_FK_DCQCN, CS_FK_DCQCN_AI, CS_FK_DCQCN_HAI, CS_FK_DCQCN_MIN_RATE,
    CS_FK_DCQCN_G, CS_FK_DCQCN_TIMER, CS_FK_DCQCN_BYTE_COUNTER, CS_FK_DCQCN_F, CS_FK_DCQCN_CNP_GAP,
    CS_FK_DCQCN_RATE_REDUCE, CS_FK_DCQCN_ALPHA_PERIOD, CS_FK_DCQCN_MIN_DEC, CS_FK_SWITCH, CS_FK_SWITCH_BUFFER,
    CS_FK_PFC_ALPHA, CS_FK_PFC_HEADROOM, CS_FK_WATCHDOG, CS_FK_WATCHDOG_RESTORE,
    CS_FK_NIC_RX_BUFFER,        /* on IB a NIC's receive buffer is its credits */
};

/* InfiniBand CC: the engine's defaults (cs_pkt_ibcc_cfg_default, the
 * published table), then what the section sets. */
static void fabric_ibcc(pk_fabric_t *fab)
{
    const cs_fabric_cfg_t *c = &fab->cfg;
    cs_pkt_ibcc_cfg_t *ic = &fab->ic;
    cs_pkt_ibcc_cfg_default(ic);
    if (c->ibcc_ncct > 0) {
        ic->ncct = c->ibcc_ncct;
        for (guint32 i = 0; i < c->ibcc_ncct; i++)
            ic->cct[i] = (cs_pkt_ibcc_cct_entry_t){ .shift = (guint8)(c->ibcc_cct[i] >> 14),
                                                    .mult = (guint16)(c->ibcc_cct[i] & 0x3fff) };
        ic->ccti_limit = c->ibcc_ncct - 1;
    }
    if (c->ibcc_threshold >= 0)
        ic->threshold = c->ibcc_threshold;
    if (c->ibcc_marking_rate >= 0)
        ic->marking_rate = (guint32)c->ibcc_marking_rate;
    if (c->ibcc_packet_size >= 0)
        ic->packet_size = (guint32)c->ibcc_packet_size;
    if (c->ibcc_victim >= 0)
        ic->victim_mask = c->ibcc_victim;
    if (c->ibcc_ccti_increase >= 0)
        ic->ccti_increase = (guint32)c->ibcc_ccti_increase;
    if (c->ibcc_ccti_limit >= 0)
        ic->ccti_limit = (guint32)c->ibcc_ccti_limit;
    if (c->ibcc_ccti_min >= 0)
        ic->ccti_min = (guint32)c->ibcc_ccti_min;
    if (c->ibcc_ccti_timer_s > 0)
        ic->ccti_timer = MAX(1, (cs_time_t)llround(c->ibcc_ccti_timer_s * CS_PS_PER_S));
}

/* [fabric] keys of InfiniBand's congestion control: a RoCE fabric has
 * none of it (DCQCN is its congestion control). */
static const int ib_only_keys[] = {
    CS_FK_IBCC, CS_FK_IBCC_THRESHOLD, CS_FK_IBCC_MARKING_RATE, CS_FK_IBCC_PACKET_SIZE, CS_FK_IBCC_VICTIM,
    CS_FK_IBCC_CCTI_INCREASE, CS_FK_IBCC_CCTI_TIMER, CS_FK_IBCC_CCTI_LIMIT, CS_FK_IBCC_CCTI_MIN, CS_FK_IBCC_CCT,
};

/* [fabric] keys of InfiniBand's VL arbitration: a RoCE port shares its
 * priorities by DRR, CNPs strict. */
static const int vlarb_keys[] = { CS_FK_VLARB_HIGH, CS_FK_VLARB_LOW, CS_FK_VLARB_HIGH_LIMIT };

/* The first of 'keys' the section sets, -1 if none: a key another fabric
 * does not read. */
static int first_set_key(const cs_fabric_cfg_t *c, const int *keys, gsize n)
{
    for (gsize i = 0; i < n; i++)
        if (c->set >> keys[i] & 1)
            return keys[i];
    return -1;
}

static gboolean fabric_setup(pk_fabric_t *fab, const cs_fabric_cfg_t *cfg, const cs_nccl_settings_t *s,
                             gboolean ib, GError **err)
{
    memset(fab, 0, sizeof *fab);
    if (cfg != NULL)
        cs_fabric_cfg_copy(&fab->cfg, cfg);
    else
        cs_fabric_cfg_init(&fab->cfg);
    const cs_fabric_cfg_t *c = &fab->cfg;
    fab->ib = ib;
    fab->mtu = c->mtu;
    if (ib) {
        int k = first_set_key(c, roce_only_keys, G_N_ELEMENTS(roce_only_keys));
        if (k >= 0) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: the fabric is InfiniBand (credits per virtual "
                        "lane): it has no PFC, ECN, DCQCN, Ethernet switch buffer or NIC receive buffer apart "
                        "from its credits; expected only mtu, cable-length, nic-rx-rate, stall-*, recovery, "
                        "ack-every, ibcc-* and vlarb-* on InfiniBand",
                        c->origin[k]);
            return FALSE;
        }
        /* NCCL_IB_SL (default 0) through OpenSM's default SL-to-VL table
         * with 8 data VLs, SL i on VL i mod 8 */
        int sl = s->ib_sl >= 0 ? s->ib_sl : 0;
        fab->prio = sl % CS_PKT_PRIOS;
        fab->prio_why = g_strdup_printf("%s %d: VL %d by the default SL-to-VL map", s->ib_sl >= 0 ? "NCCL_IB_SL"
                                        : "NCCL_IB_SL unset: SL", sl, fab->prio);
        fab->cnp_prio = -1;
        fab->ar = s->ib_adaptive_routing != 0;   /* -2 (unset): on, NCCL's default on IB */
        fab->ar_threshold = s->ib_ar_threshold;
        fab->ibcc = c->ibcc;
        fabric_ibcc(fab);
        g_assert(cs_pkt_ibcc_cfg_valid(&fab->ic));   /* the section's check bounds every value */
        cs_pkt_vlarb_from_cfg(c, &fab->arb);
        if (!cs_pkt_vlarb_check(c, &fab->arb, fab->prio, fab->prio_why, err))
            return FALSE;
    } else {
        int k = first_set_key(c, vlarb_keys, G_N_ELEMENTS(vlarb_keys));
        if (k >= 0) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: the fabric is RoCE: VL arbitration is InfiniBand's "
                        "(a RoCE port shares its priorities by deficit round robin, CNPs strict); expected no "
                        "vlarb-* keys on RoCE", c->origin[k]);
            return FALSE;
        }
        k = first_set_key(c, ib_only_keys, G_N_ELEMENTS(ib_only_keys));
        if (k >= 0) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: the fabric is RoCE: InfiniBand congestion control "
                        "(FECN/BECN) does not run on it; expected dcqcn = connectx or paper for RoCE's "
                        "congestion control", c->origin[k]);
            return FALSE;
        }
        fab->prio = cs_fabric_data_prio(c, s, &fab->prio_why);
        fab->cnp_prio = cs_fabric_cnp_prio(c);
        if (fab->cnp_prio == fab->prio && c->trust == CS_FABRIC_TRUST_PCP) {
            /* under trust pcp the CNPs' priority is the NIC's, not a
             * key's: the data's service level is what can move */
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: CNPs and data would share priority %d (%s; ConnectX "
                        "sends CNPs on VLAN priority 6 under trust pcp); expected the data on another priority "
                        "(an NCCL_IB_SL whose low three bits are not 6), or trust = dscp with cnp-dscp",
                        c->origin[CS_FK_TRUST] != NULL ? c->origin[CS_FK_TRUST] : "[fabric]", fab->prio,
                        fab->prio_why);
            return FALSE;
        }
        if (fab->cnp_prio == fab->prio) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: CNPs and data would share priority %d (%s); expected "
                        "CNPs on a priority of their own (cnp-dscp, dscp-map)",
                        c->origin[CS_FK_CNP_DSCP] != NULL ? c->origin[CS_FK_CNP_DSCP]
                        : c->origin[CS_FK_DSCP_MAP] != NULL ? c->origin[CS_FK_DSCP_MAP] : "[fabric]",
                        fab->prio, fab->prio_why);
            return FALSE;
        }
        fab->dcqcn = c->dcqcn != CS_FABRIC_DCQCN_OFF;
        fabric_dcqcn(fab);
    }
    fab->qps = MAX(1, s->ib_qps_per_conn);
    fab->split = s->ib_split_data_on_qps != 0;
    fab->timeout_exp = s->ib_timeout;
    fab->retry_cnt = s->ib_retry_cnt;
    fab->ack_interval = c->ack_every;
    cs_pkt_frame_t fr = pk_frame(fab);
    fab->wire_ratio = (double)(fab->mtu + cs_pkt_frame_overhead(&fr, CS_PKT_HDR_MIDDLE)) / fab->mtu;
    return TRUE;
}

static void fabric_clear(pk_fabric_t *fab)
{
    cs_fabric_cfg_clear(&fab->cfg);
    g_clear_pointer(&fab->prio_why, g_free);
}

/* The rate a NIC drains into its host: its PCIe link's (the slowest of
 * its links that are not network cables), bits/s of payload. */
static double nic_rx_auto(const cs_topo_t *t, int nic)
{
    double bw = 0;
    for (int l = 0; l < t->nlinks; l++) {
        const cs_link_t *k = &t->links[l];
        if (k->kind == CS_LINK_NET || (k->src != nic && k->dst != nic))
            continue;
        bw = bw > 0 ? MIN(bw, k->bw) : k->bw;
    }
    return bw * 8;
}

/* The link a NIC's receive path drains over: its slowest link into its
 * host (-1: none). */
static int nic_rx_link(const cs_topo_t *t, int nic)
{
    int best = -1;
    for (int l = 0; l < t->nlinks; l++) {
        const cs_link_t *k = &t->links[l];
        if (k->kind != CS_LINK_NET && k->src == nic && (best < 0 || k->bw < t->links[best].bw))
            best = l;
    }
    return best;
}

static int find_nic(const cs_topo_t *t, const char *name)
{
    for (int d = 0; d < t->ndevs; d++)
        if (t->devs[d].kind == CS_DEV_NIC && strcmp(t->devs[d].name, name) == 0)
            return d;
    return -1;
}

/* stall-nic names a NIC with a network link. */
static gboolean check_stall_nic(const cs_topo_t *t, const cs_fabric_cfg_t *c, GError **err)
{
    if (c->stall_nic == NULL)
        return TRUE;
    int nic = find_nic(t, c->stall_nic);
    const char *example = NULL;
    for (int l = 0; l < t->nlinks; l++) {
        if (t->links[l].kind != CS_LINK_NET)
            continue;
        if (t->links[l].src == nic || t->links[l].dst == nic)
            return TRUE;
        if (example == NULL && t->devs[t->links[l].src].kind == CS_DEV_NIC)
            example = t->devs[t->links[l].src].name;
    }
    g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: '%s' is not a network NIC of the topology; expected a NIC "
                "such as %s", c->origin[CS_FK_STALL_NIC], c->stall_nic, example != NULL ? example : "n0.nic0");
    return FALSE;
}

/* NICs' receive paths (nic-rx-rate, nic-rx-buffer) and the stalled one. */
/* InfiniBand input buffers (switch ports and NICs), credits per VL: each
 * link's receiving end holds the same buffering time at the link's rate
 * as the only public figure, InfiniScale IV's 1000 credits (64 KB) per
 * input port at QDR's 40 Gb/s ([IBM] modules.ini, fabric-models.md
 * section 4): 13.1 us, and never less than the link's credit loop at line
 * rate and two frames (cs_pkt_credit_cfg_t.buffer_s). An assumption (no
 * public per-port figure for Quantum switches); test-pkt-credit checks
 * smaller buffers against the bandwidth-delay formula. */
#define IB_IS4_CREDITS 1000.0
#define IB_IS4_BPS 40e9
#define IB_BUFFER_S (IB_IS4_CREDITS * CS_PKT_CREDIT_BLOCK * 8 / IB_IS4_BPS)

static gboolean build_hosts(pk_t *pk, GError **err)
{
    const cs_topo_t *t = pk->topo;
    const cs_fabric_cfg_t *c = &pk->fab.cfg;
    int stalled = c->stall_nic != NULL ? find_nic(t, c->stall_nic) : -1;   /* checked by pk_open */
    for (int d = 0; d < t->ndevs; d++) {
        if (t->devs[d].kind != CS_DEV_NIC || pk->node_of_dev[d] < 0)
            continue;
        if (c->nic_rx == CS_FABRIC_RX_OFF && d != stalled)
            continue;
        double bps = c->nic_rx == CS_FABRIC_RX_RATE ? c->nic_rx_bps : nic_rx_auto(t, d);
        if (bps <= 0) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: %s has no link into its host to drain into; expected "
                        "nic-rx-rate = RATE", c->origin[CS_FK_NIC_RX_RATE] != NULL ? c->origin[CS_FK_NIC_RX_RATE]
                        : c->origin[CS_FK_STALL_NIC], t->devs[d].name);
            return FALSE;
        }
        if (cs_pkt_net_set_host_rx(pk->net, pk->node_of_dev[d], bps, c->nic_rx_buffer) != 0) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: %s: a receive buffer of %" G_GUINT64_FORMAT " B cannot "
                        "hold its link's PFC headroom and a frame; expected a larger nic-rx-buffer",
                        c->origin[CS_FK_NIC_RX_BUFFER] != NULL ? c->origin[CS_FK_NIC_RX_BUFFER] : "[fabric]",
                        t->devs[d].name, c->nic_rx_buffer);
            return FALSE;
        }
    }
    if (stalled >= 0) {
        cs_time_t from = (cs_time_t)llround(c->stall_at_s * CS_PS_PER_S);
        cs_time_t until = c->stall_for_s < 0 ? CS_TIME_NEVER
                                             : from + (cs_time_t)llround(c->stall_for_s * CS_PS_PER_S);
        /* stall-for is above 0 (cs_scenario_fabric.c), so until > from */
        int rc = cs_pkt_net_host_stall(pk->net, pk->node_of_dev[stalled], from, until);
        g_assert(rc == 0);
    }
    return TRUE;
}

static char *prios_text(guint8 mask);

static gboolean build_net(pk_t *pk, GError **err)
{
    const cs_topo_t *t = pk->topo;
    pk->net = cs_pkt_net_new();
    cs_pkt_net_set_seed(pk->net, pk->seed);
    if (pk->fab.ib) {
        /* the largest frame: an MTU of payload with a RETH */
        cs_pkt_credit_cfg_t cc = { .refresh_ps = 0, .buffer_s = IB_BUFFER_S,
                                   .frame = pk->fab.mtu + CS_PKT_IB_OVERHEAD + CS_PKT_RETH };
        g_assert(cs_pkt_net_set_credit(pk->net, &cc) == 0);
        if (pk->fab.ibcc)
            g_assert(cs_pkt_net_set_ibcc(pk->net, &pk->fab.ic) == 0);
    }
    pk->node_of_dev = g_new(int, MAX(1, t->ndevs));
    pk->port_of_link = g_new(int, MAX(1, t->nlinks));
    for (int d = 0; d < t->ndevs; d++)
        pk->node_of_dev[d] = -1;
    g_autofree guint64 *max_bps = g_new0(guint64, MAX(1, t->ndevs));
    for (int l = 0; l < t->nlinks; l++) {
        pk->port_of_link[l] = -1;
        const cs_link_t *k = &t->links[l];
        if (k->kind != CS_LINK_NET)
            continue;
        for (int e = 0; e < 2; e++) {
            int d = e == 0 ? k->src : k->dst;
            if (pk->node_of_dev[d] >= 0)
                continue;
            cs_dev_kind_t kind = t->devs[d].kind;
            if (kind != CS_DEV_NIC && kind != CS_DEV_SWITCH) {
                g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED,
                            "packet engine: network link %s -> %s ends at a device that is neither a NIC nor a switch",
                            t->devs[k->src].name, t->devs[k->dst].name);
                return FALSE;
            }
            pk->node_of_dev[d] = kind == CS_DEV_NIC ? cs_pkt_net_add_host(pk->net) : cs_pkt_net_add_switch(pk->net);
        }
        guint64 bps = (guint64)llround(k->bw * 8.0);
        max_bps[k->src] = MAX(max_bps[k->src], bps);
        double prop = k->lat + (t->devs[k->dst].kind == CS_DEV_SWITCH ? t->fabric.switch_lat : 0);
        cs_pkt_port_cfg_t pc;
        cs_pkt_port_cfg_init(&pc, bps, (cs_time_t)llround(prop * CS_PS_PER_S));
        if (pk->fab.cnp_prio >= 0)
            pc.strict = (guint8)(1u << pk->fab.cnp_prio);   /* CNPs strict (Spectrum's default, fabric-models.md section 2) */
        if (pk->fab.ib)
            pc.arb = &pk->fab.arb;   /* pk outlives its net */
        pk->port_of_link[l] = cs_pkt_net_add_link(pk->net, pk->node_of_dev[k->src], pk->node_of_dev[k->dst], &pc);
        if (pk->port_of_link[l] < 0) {
            g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED, "packet engine: link %s -> %s: %.3g b/s is not a rate "
                        "a port can run", t->devs[k->src].name, t->devs[k->dst].name, k->bw * 8);
            return FALSE;
        }
    }
    const cs_fabric_cfg_t *c = &pk->fab.cfg;
    for (int d = 0; d < t->ndevs && !pk->fab.ib; d++) {   /* InfiniBand: input buffers are the credits */
        if (pk->node_of_dev[d] < 0 || t->devs[d].kind != CS_DEV_SWITCH)
            continue;
        const char *why;
        cs_pkt_mmu_cfg_t mc;
        cs_pkt_mmu_cfg_init(&mc, cs_fabric_switch_buffer(c, max_bps[d], &why));
        mc.lossless = c->pfc;
        if (c->pfc_alpha > 0)
            mc.alpha = c->pfc_alpha;
        /* headroom: forced, or the formula with the cable given (at the
         * switch's fastest port: the most any of its ports needs), or the
         * formula with each link's cable from its latency (-1) */
        gint64 headroom = c->pfc_headroom >= 0 ? c->pfc_headroom
                        : c->cable_m >= 0 ? (gint64)cs_pkt_headroom_bytes(pk->fab.mtu, max_bps[d], c->cable_m) : -1;
        cs_pkt_ecn_cfg_t ec;
        const cs_pkt_ecn_cfg_t *ecp = NULL;
        if (c->ecn_kmin > 0 || c->ecn_pmax > 0) {
            /* thresholds given, or only Pmax over its fastest port's defaults */
            cs_pkt_ecn_cfg_for_rate(&ec, max_bps[d]);
            if (c->ecn_kmin > 0) {
                ec.kmin = c->ecn_kmin;
                ec.kmax = c->ecn_kmax;
            }
            if (c->ecn_pmax > 0)
                ec.pmax = c->ecn_pmax;
            ecp = &ec;
        }
        /* a buffer that its reserves and headroom fill leaves no shared
         * part: every port would pause at once (threshold 0) */
        if (cs_pkt_net_set_buffer(pk->net, pk->node_of_dev[d], &mc, headroom) != 0 ||
            cs_pkt_mmu_threshold(cs_pkt_net_mmu(pk->net, pk->node_of_dev[d])) == 0 ||
            (c->ecn && cs_pkt_net_set_ecn(pk->net, pk->node_of_dev[d], ecp) != 0)) {
            /* the key that made it so, where it came from: a flag of
             * this run before a file's key (a flag changed what the file
             * had working) */
            static const int keys[] = { CS_FK_SWITCH_BUFFER, CS_FK_PFC_HEADROOM, CS_FK_SWITCH, CS_FK_PFC,
                                        CS_FK_CABLE, CS_FK_MTU };
            const char *origin = NULL;
            for (int pass = 0; pass < 2 && origin == NULL; pass++)
                for (guint i = 0; i < G_N_ELEMENTS(keys) && origin == NULL; i++)
                    if (c->origin[keys[i]] != NULL && (pass == 1 || g_str_has_prefix(c->origin[keys[i]], "collsim: ")))
                        origin = c->origin[keys[i]];
            g_autofree char *prios = prios_text(c->pfc);
            int np = __builtin_popcount(c->pfc);
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: switch %s: its buffer (%.3g MB, %s) cannot hold its "
                        "ports' headroom and reserves (PFC on priorit%s %s, headroom for each); expected a larger "
                        "switch-buffer, a smaller pfc-headroom or fewer lossless priorities",
                        origin != NULL ? origin : "packet engine", t->devs[d].name, (double)mc.buffer / 1e6, why,
                        np == 1 ? "y" : "ies", prios);
            return FALSE;
        }
    }
    cs_pkt_pfc_cfg_t pfc;
    cs_pkt_pfc_cfg_init(&pfc);
    if (c->watchdog_s > 0) {
        pfc.watchdog_ps = (cs_time_t)llround(c->watchdog_s * CS_PS_PER_S);
        pfc.watchdog_restore_ps = (cs_time_t)llround(c->watchdog_restore_s * CS_PS_PER_S);
    }
    cs_pkt_net_set_pfc(pk->net, &pfc);
    return build_hosts(pk, err);
}

/* ---- the transport ------------------------------------------------------ */

static void qp_sent(void *ctx, int qp, cs_time_t now);
static void qp_delivered(void *ctx, int qp, cs_time_t now);
static void qp_failed(void *ctx, int qp, cs_time_t now);
static const cs_pkt_qp_hooks_t qp_hooks = { qp_sent, qp_delivered, qp_failed };

/* Job 'job''s priority (InfiniBand: VL): its own, else the fabric's. */
static int job_prio(const pk_t *pk, int job)
{
    return pk->job_prio != NULL && job < pk->njob_prio && pk->job_prio[job] >= 0 ? pk->job_prio[job] : pk->fab.prio;
}

/* Adaptive routing: every shortest route between the two NICs (the first
 * AR_ROUTES in the search's order, the QP's own always among them) is an
 * alternative for the QP's packets at each switch. */
#define AR_ROUTES 64

static gboolean set_ar_routes(pk_t *pk, int qp, int src_nic, int dst_nic, const cs_path_t *own)
{
    g_autofree cs_path_t *paths = g_new(cs_path_t, AR_ROUTES);
    int n = cs_path_net_all(pk->topo, src_nic, dst_nic, paths, AR_ROUTES);
    if (n <= 1)
        return TRUE;                  /* one route: nothing to choose */
    /* the QP's own route is one of them (the first AR_ROUTES may leave it out) */
    gboolean has = FALSE;
    for (int i = 0; i < n && !has; i++)
        has = paths[i].nhops == own->nhops && memcmp(paths[i].links, own->links, sizeof(int) * own->nhops) == 0;
    if (!has)
        paths[n - 1] = *own;
    g_autofree int *ports = g_new(int, (gsize)n * CS_PATH_MAX_HOPS), *off = g_new(int, n + 1);
    off[0] = 0;
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < paths[i].nhops; k++)
            ports[off[i] + k] = pk->port_of_link[paths[i].links[k]];
        off[i + 1] = off[i] + paths[i].nhops;
    }
    return cs_pkt_net_set_qp_routes(pk->net, qp, ports, off, n) == 0;
}

static gboolean x_lane(void *ctx, int lane, int job, int ch, int src_nic, int dst_nic, GError **err)
{
    pk_t *pk = ctx;
    const cs_topo_t *t = pk->topo;
    if ((guint)lane >= pk->lanes->len)
        g_array_set_size(pk->lanes, lane + 1);
    pk_lane_t *L = &g_array_index(pk->lanes, pk_lane_t, lane);
    L->job = job;
    L->ch = ch;
    L->src_nic = src_nic;
    L->dst_nic = dst_nic;
    L->qp0 = (int)pk->qps->len;
    L->nqp = pk->fab.qps;
    L->prio = job_prio(pk, job);
    L->ar_threshold = pk->job_ar_threshold != NULL && job < pk->njob_prio ? pk->job_ar_threshold[job]
                                                                          : pk->fab.ar_threshold;
    const pk_fabric_t *fab = &pk->fab;
    cs_pkt_qp_cfg_t qc = {
        .mtu = fab->mtu,
        .prio = L->prio,
        .frame = pk_frame(fab),
        .ack_interval = fab->ack_interval,
        .timeout = CS_PKT_QP_TIMEOUT_PS(fab->timeout_exp),
        .retry_cnt = fab->retry_cnt,
        .selective = fab->cfg.recovery == CS_FABRIC_SELECTIVE_REPEAT,
        .reorder = fab->ar,
    };
    for (int i = 0; i < L->nqp; i++) {
        /* the QP's UDP source port (ConnectX picks it per QP in
         * 0xC000-0xFFFF), and the switches' hash of it */
        guint64 h = cs_pkt_mix64(pk->seed ^ cs_pkt_mix64(((guint64)src_nic << 40) ^ ((guint64)dst_nic << 20) ^
                                           ((guint64)ch << 8) ^ (guint64)i ^ ((guint64)job << 56)));
        guint32 sport = 0xC000 | (guint32)(h & 0x3fff);
        cs_path_t p;
        if (!cs_path_net(t, src_nic, dst_nic, (guint32)cs_pkt_mix64(sport ^ pk->seed), &p) || p.nhops < 1) {
            g_set_error(err, CS_ERROR, CS_ERROR_TOPOLOGY, "packet engine: %s -> %s: no network route",
                        t->devs[src_nic].name, t->devs[dst_nic].name);
            return FALSE;
        }
        int route[CS_PATH_MAX_HOPS];
        for (int k = 0; k < p.nhops; k++)
            route[k] = pk->port_of_link[p.links[k]];
        int id = cs_pkt_net_add_qp(pk->net, route, p.nhops, &qc);
        const char *why = id < 0 ? "the route has no way back for ACKs"
                        : fab->ar && !set_ar_routes(pk, id, src_nic, dst_nic, &p) ? "its adaptive routes are not routes"
                        : fab->dcqcn && cs_pkt_net_set_dcqcn(pk->net, id, &fab->dc) != 0
                            ? "DCQCN cannot be set up on it (no way back for CNPs, or invalid parameters)"
                            : NULL;
        if (why != NULL) {
            g_set_error(err, CS_ERROR, CS_ERROR_TOPOLOGY, "packet engine: %s -> %s: %s", t->devs[src_nic].name,
                        t->devs[dst_nic].name, why);
            return FALSE;
        }
        g_assert(id == (int)pk->qps->len);
        pk_qp_t q = { .lane = lane, .index = i };
        g_array_append_val(pk->qps, q);
    }
    return TRUE;
}

static pk_qp_t *qp_of(pk_t *pk, int qp)
{
    return &g_array_index(pk->qps, pk_qp_t, qp);
}

/* Posts a QP's part of a message: with adaptive routing as NCCL does
 * (ncclIbMultiSend, net_ib/p2p.cc): a message of more than the sending
 * job's NCCL_IB_AR_THRESHOLD bytes (the whole message's size, reqs[0]->send.size,
 * even when split over QPs) goes on every QP as an RDMA WRITE of its part,
 * which the switches may route adaptively, and a WRITE with immediate of
 * no payload carrying the completion; a smaller one as one WRITE with
 * immediate, which keeps the QP's route (cs_pkt_net_qp_post_ar). Without
 * AR, one WRITE with immediate. */
static void post_part(pk_t *pk, int qp, guint64 part, guint64 msg, cs_time_t now)
{
    pk_qp_t *q = qp_of(pk, qp);
    q->nposted++;
    if (pk->fab.ar) {
        long thr = g_array_index(pk->lanes, pk_lane_t, q->lane).ar_threshold;
        cs_pkt_net_qp_post_ar(pk->net, qp, part, msg > (guint64)thr, now);
    } else {
        cs_pkt_net_qp_post(pk->net, qp, part, now);
    }
}

static void x_send(void *ctx, int lane, double bytes, cs_time_t now)
{
    pk_t *pk = ctx;
    if (cs_pkt_sharp_lane(pk->sharp, lane)) {
        cs_pkt_sharp_send(pk->sharp, lane, (guint64)ceil(bytes), now);
        return;
    }
    pk_lane_t *L = &g_array_index(pk->lanes, pk_lane_t, lane);
    guint64 b = (guint64)ceil(bytes);
    guint64 k = L->posted++;
    g_assert(k - L->delivered < PK_WINDOW);
    if (pk->fab.split && L->nqp > 1) {
        /* every QP a part: DIVUP(DIVUP(size, nqps), 128) x 128 (p2p.cc) */
        guint64 part = (b + L->nqp - 1) / L->nqp;
        part = (part + 127) / 128 * 128;
        L->sent_left = L->nqp;
        L->left[k % PK_WINDOW] = (guint8)L->nqp;
        guint64 off = 0;
        for (int i = 0; i < L->nqp; i++) {
            guint64 n = off < b ? MIN(part, b - off) : 0;
            off += n;
            post_part(pk, L->qp0 + i, n, b, now);
        }
        return;
    }
    /* one QP per message, in turn (request id modulo the QPs) */
    L->sent_left = 1;
    L->left[k % PK_WINDOW] = 1;
    post_part(pk, L->qp0 + (int)(k % (guint64)L->nqp), b, b, now);
}

static void x_rate(void *ctx, int lane, double bytes_per_s, cs_time_t now)
{
    pk_t *pk = ctx;
    const pk_lane_t *L = &g_array_index(pk->lanes, pk_lane_t, lane);
    /* bytes/s of messages to bits/s of wire: the framing of full packets */
    double wire = pk->fab.wire_ratio;
    if (cs_pkt_sharp_lane(pk->sharp, lane)) {
        cs_pkt_sharp_rate(pk->sharp, lane, bytes_per_s * 8.0 * wire, now);
        return;
    }
    double per_qp = pk->fab.split ? bytes_per_s / L->nqp : bytes_per_s;
    for (int i = 0; i < L->nqp; i++)
        cs_pkt_net_qp_set_rate(pk->net, L->qp0 + i, per_qp * 8.0 * wire, now);
}

/* The lane message a QP's n-th message is part of. */
static guint64 lane_msg(const pk_t *pk, const pk_qp_t *q, guint64 n)
{
    return pk->fab.split ? n : n * (guint64)g_array_index(pk->lanes, pk_lane_t, q->lane).nqp + (guint64)q->index;
}

static void qp_sent(void *ctx, int qp, cs_time_t now)
{
    pk_t *pk = ctx;
    pk_qp_t *q = qp_of(pk, qp);
    q->nsent++;
    if (cs_pkt_sharp_qp(pk->sharp, qp)) {
        cs_pkt_sharp_qp_sent(pk->sharp, qp, now);
        return;
    }
    pk_lane_t *L = &g_array_index(pk->lanes, pk_lane_t, q->lane);
    if (--L->sent_left == 0)
        cs_flow_xport_sent(pk->flow, q->lane);
}

static void qp_delivered(void *ctx, int qp, cs_time_t now)
{
    (void)now;
    pk_t *pk = ctx;
    if (cs_pkt_sharp_qp(pk->sharp, qp))
        return;                       /* the tree's packets are seen one by one (sharp_observe) */
    pk_qp_t *q = qp_of(pk, qp);
    guint64 k = lane_msg(pk, q, q->ndeliv++);
    pk_lane_t *L = &g_array_index(pk->lanes, pk_lane_t, q->lane);
    L->left[k % PK_WINDOW]--;
    /* NCCL's receiver completes its requests in order */
    while (L->delivered < L->posted && L->left[L->delivered % PK_WINDOW] == 0) {
        L->delivered++;
        cs_flow_xport_delivered(pk->flow, q->lane);
    }
}

static void qp_failed(void *ctx, int qp, cs_time_t now)
{
    pk_t *pk = ctx;
    if (pk->failed)
        return;
    pk->failed = TRUE;
    pk->failed_qp = qp;
    pk->failed_at = now;
}

/* ---- the timeline's gauges (--trace) ----------------------------------- */

#define SAMPLE_PS ((cs_time_t)1000000)   /* 1 us: a 400G port moves 12 4-KiB packets in it */

static void sample_fn(void *ctx, cs_time_t now);

/* The priorities (InfiniBand: VLs) the jobs' data is on, bit p. */
static guint8 data_prios(const pk_t *pk)
{
    guint8 m = (guint8)(1u << pk->fab.prio);
    if (pk->job_prio != NULL) {
        m = 0;
        for (int j = 0; j < pk->njob_prio; j++)
            if (pk->job_prio[j] >= 0)
                m |= (guint8)(1u << pk->job_prio[j]);
    }
    return m;
}

/* Gauge names, and the net's sampler (every SAMPLE_PS while a packet is
 * queued or in flight; never an event of its own): every network port on
 * each priority some job's data is on. */
static void sample_setup(pk_t *pk)
{
    const cs_topo_t *t = pk->topo;
    guint8 prios = data_prios(pk);
    int n = MAX(1, t->nlinks * __builtin_popcount(prios));
    pk->sample_port = g_new(int, n);
    pk->sample_prio = g_new(int, n);
    pk->queue_name = g_new0(char *, n);
    pk->pause_name = g_new0(char *, n);
    pk->nsampled = 0;
    for (int l = 0; l < t->nlinks; l++) {
        if (pk->port_of_link[l] < 0)
            continue;
        for (int p = 0; p < CS_PKT_PRIOS; p++) {
            if (!(prios >> p & 1))
                continue;
            int i = pk->nsampled++;
            const char *a = t->devs[t->links[l].src].name, *b = t->devs[t->links[l].dst].name;
            pk->sample_port[i] = pk->port_of_link[l];
            pk->sample_prio[i] = p;
            /* InfiniBand: VLs, and a sender waits for credits instead of a pause */
            const char *lane = pk->fab.ib ? "VL" : "prio";
            pk->queue_name[i] = g_strdup_printf("queue %s -> %s %s %d", a, b, lane, p);
            pk->pause_name[i] = g_strdup_printf("%s %s -> %s %s %d", pk->fab.ib ? "credit-starved" : "paused", a, b,
                                                lane, p);
        }
    }
    pk->last_queue = g_new0(double, MAX(1, pk->nsampled));
    pk->last_pause = g_new0(double, MAX(1, pk->nsampled));
    cs_pkt_net_set_sampler(pk->net, SAMPLE_PS, sample_fn, pk);
}

static void sample_clear(pk_t *pk)
{
    for (int i = 0; i < pk->nsampled; i++) {
        g_free(pk->queue_name[i]);
        g_free(pk->pause_name[i]);
    }
    for (guint q = 0; pk->rate_name != NULL && q < pk->qps->len; q++)
        g_free(pk->rate_name[q]);
    g_clear_pointer(&pk->sample_port, g_free);
    g_clear_pointer(&pk->sample_prio, g_free);
    g_clear_pointer(&pk->queue_name, g_free);
    g_clear_pointer(&pk->pause_name, g_free);
    g_clear_pointer(&pk->rate_name, g_free);
    g_clear_pointer(&pk->last_queue, g_free);
    g_clear_pointer(&pk->last_pause, g_free);
    g_clear_pointer(&pk->last_rate, g_free);
    pk->nsampled = 0;
}

/* Each gauge goes out when it changes by a packet (queues), at all
 * (pause states) or by 1% (QP rates under DCQCN): the file grows with
 * what happens, not with time. */
static void sample(pk_t *pk, cs_time_t now)
{
    double ts = (double)now / CS_PS_PER_S;
    cs_sim_sink_t *s = pk->sink;
    double mtu = pk->fab.mtu;
    for (int i = 0; i < pk->nsampled; i++) {
        int port = pk->sample_port[i], prio = pk->sample_prio[i];
        double q = (double)cs_pkt_port_queue_bytes(cs_pkt_net_port(pk->net, port), prio);
        if (fabs(q - pk->last_queue[i]) >= mtu || ((q == 0) != (pk->last_queue[i] == 0))) {
            s->gauge(s, pk->queue_name[i], "bytes", ts, q);
            pk->last_queue[i] = q;
        }
        double p = (pk->fab.ib ? cs_pkt_net_credit_starving(pk->net, port, prio)
                               : cs_pkt_pfc_paused(cs_pkt_net_pfc(pk->net, port), prio, now)) ? 1 : 0;
        if (p != pk->last_pause[i]) {
            s->gauge(s, pk->pause_name[i], pk->fab.ib ? "starved" : "paused", ts, p);
            pk->last_pause[i] = p;
        }
    }
    if (!pk->fab.dcqcn && !pk->fab.ibcc)
        return;
    if (pk->rate_name == NULL) {   /* the QPs exist once the flow engine made its lanes */
        const cs_topo_t *t = pk->topo;
        pk->rate_name = g_new0(char *, MAX(1u, pk->qps->len));
        pk->last_rate = g_new0(double, MAX(1u, pk->qps->len));
        for (guint q = 0; q < pk->qps->len; q++) {
            const pk_qp_t *qp = qp_of(pk, (int)q);
            const pk_lane_t *L = &g_array_index(pk->lanes, pk_lane_t, qp->lane);
            pk->rate_name[q] = g_strdup_printf("%s %s -> %s ch %d QP %d", pk->fab.ibcc ? "CCTI" : "DCQCN rate",
                                               t->devs[L->src_nic].name, t->devs[L->dst_nic].name, L->ch, qp->index);
            pk->last_rate[q] = -1;
        }
    }
    for (guint q = 0; pk->fab.ibcc && q < pk->qps->len; q++) {
        cs_pkt_qp_ibcc_t qi;          /* IB CC: each QP's index, when it moves */
        cs_pkt_net_qp_ibcc(pk->net, (int)q, &qi);
        if ((double)qi.ccti != pk->last_rate[q]) {
            s->gauge(s, pk->rate_name[q], "index", ts, qi.ccti);
            pk->last_rate[q] = qi.ccti;
        }
    }
    for (guint q = 0; pk->fab.dcqcn && q < pk->qps->len; q++) {
        const cs_pkt_dcqcn_rp_t *rp = cs_pkt_net_flow_rp(pk->net, (int)q);
        if (rp == NULL)
            continue;
        double r = rp->rc / 1e9;
        if (fabs(r - pk->last_rate[q]) >= 0.01 * MAX(r, pk->last_rate[q])) {
            s->gauge(s, pk->rate_name[q], "Gb/s", ts, r);
            pk->last_rate[q] = r;
        }
    }
}

/* A topology link's name from a network link id. */
static const char *net_link_name(const pk_t *pk, int port, char *buf, gsize n)
{
    const cs_topo_t *t = pk->topo;
    for (int l = 0; l < t->nlinks; l++)
        if (pk->port_of_link[l] == port) {
            g_snprintf(buf, n, "%s -> %s", t->devs[t->links[l].src].name, t->devs[t->links[l].dst].name);
            return buf;
        }
    g_snprintf(buf, n, "link %d", port);
    return buf;
}

/* The net stopped (a pause cycle) or went quiet for good (a receive path
 * stalled for ever): the collective never completes, and NCCL would hang
 * until its own timeout. */
/* The QP a stopped net times out first, and when (CS_TIME_NEVER: none
 * has packets out, so no timer runs). */
static cs_time_t first_fail(const pk_t *pk, int *qp_p)
{
    cs_time_t when = CS_TIME_NEVER;
    for (guint q = 0; q < pk->qps->len; q++) {
        cs_time_t t = cs_pkt_net_qp_fail_at(pk->net, (int)q);
        if (t < when) {
            when = t;
            *qp_p = (int)q;
        }
    }
    return when;
}

/* NCCL's error when a QP runs out of retries (net_ib/p2p.cc
 * ncclIbLogCompletionWithError, status IBV_WC_RETRY_EXC_ERR = 12). */
static void nccl_retry_error(const pk_t *pk, int qp, cs_time_t when, const char *before, GError **err)
{
    const pk_qp_t *q = qp_of((pk_t *)pk, qp);
    const pk_lane_t *L = &g_array_index(pk->lanes, pk_lane_t, q->lane);
    const cs_topo_t *tp = pk->topo;
    g_set_error(err, CS_ERROR, CS_ERROR_SIM_FAILED,
                "packet engine: %sat %.6f s the run fails as NCCL does: %s -> %s (channel %d, QP %d): "
                "\"NET/IB: Got completion from peer with status=transport retry counter exceeded(12)\" after "
                "%d retries of 4.096 us x 2^%d (NCCL_IB_RETRY_CNT, NCCL_IB_TIMEOUT)", before,
                (double)when / CS_PS_PER_S, tp->devs[L->src_nic].name, tp->devs[L->dst_nic].name, L->ch,
                q->index, pk->fab.retry_cnt, pk->fab.timeout_exp);
}

/* A deadlock or a stall for good stops the net: nothing arrives again, so
 * the QPs with packets out time out one retry after another (the
 * transport timer runs whatever the link does) and NCCL reports the first
 * that runs out, as a run that continued would show. */
static gboolean stuck_error(pk_t *pk, GError **err)
{
    const cs_pkt_deadlock_t *dl = cs_pkt_net_deadlock(pk->net);
    if (dl == NULL)
        return FALSE;
    GString *path = g_string_new(NULL);
    char buf[160];
    for (int i = 0; i < dl->nlinks; i++)
        g_string_append_printf(path, "%s%s", i ? ", " : "", net_link_name(pk, dl->links[i], buf, sizeof buf));
    const char *host = NULL;
    for (int d = 0; d < pk->topo->ndevs && dl->kind == CS_PKT_STUCK_STALL; d++)
        if (pk->node_of_dev[d] == dl->host)
            host = pk->topo->devs[d].name;
    g_autofree char *what = dl->kind == CS_PKT_STUCK_CYCLE
        ? g_strdup_printf("at %.6f s a PFC deadlock: a cycle of links paused on priority %d, each holding packets "
                          "for the next (%s); nothing moves on it again", (double)dl->detected / CS_PS_PER_S,
                          dl->prio, path->str)
        : g_strdup_printf("at %.6f s every packet left waits on %s, whose receive path is stalled for good "
                          "(stall-nic); pauses hold %s on priority %d", (double)dl->detected / CS_PS_PER_S,
                          host != NULL ? host : "a NIC",
                          dl->nlinks > 0 ? path->str : "no link (the watchdog drops instead)", dl->prio);
    g_string_free(path, TRUE);
    int qp = -1;
    cs_time_t when = first_fail(pk, &qp);
    if (when != CS_TIME_NEVER) {
        g_autofree char *before = g_strconcat(what, "; ", NULL);
        nccl_retry_error(pk, qp, when, before, err);
    } else {
        g_set_error(err, CS_ERROR, CS_ERROR_SIM_FAILED, "packet engine: %s, and no QP has packets out for its timer "
                    "to expire: the collective never completes (NCCL hangs)", what);
    }
    return TRUE;
}

/* A failed simulation's error: a net that went quiet for good leaves the
 * flow engine waiting, and its "deadlocked" is the network's stall. */
static void run_error(pk_t *pk, GError **e, GError **err)
{
    GError *why = NULL;
    if (!g_error_matches(*e, CS_ERROR, CS_ERROR_SIM_FAILED) && !g_error_matches(*e, CS_ERROR, CS_ERROR_RUNTIME) &&
        stuck_error(pk, &why)) {
        g_clear_error(e);
        *e = why;
    }
    g_propagate_error(err, g_steal_pointer(e));
}

static void sample_fn(void *ctx, cs_time_t now)
{
    sample(ctx, now);
}

static cs_time_t x_next(void *ctx)
{
    pk_t *pk = ctx;
    return cs_pkt_net_next(pk->net);
}

/* Packets queued in buffers are not in the estimate (pk_estimate): a
 * fabric whose queues grow past the memory left stops here, between two
 * steps of the flow engine, instead of exhausting the machine. */
static void pool_guard_set(pk_t *pk)
{
    guint64 limit = cs_engine_memory_limit(&pk->pool_why);
    pk->pool_cap = limit == G_MAXUINT64 ? 0 : MAX(1.0, (double)limit - pk->est_bytes) / PK_BYTES_PER_PKT;
}

/* After build_net. */
static void pool_guard_arm(pk_t *pk)
{
    /* at least one packet: 0 would mean no limit */
    cs_pkt_net_set_pool_limit(pk->net, pk->pool_cap <= 0 ? 0 : pk->pool_cap >= (double)G_MAXSIZE ? G_MAXSIZE
                                                            : (gsize)MAX(1.0, pk->pool_cap));
}

static gboolean pool_guard(pk_t *pk, GError **err)
{
    gsize cap = cs_pkt_pool_capacity(cs_pkt_net_pool(pk->net));
    if (!cs_pkt_net_overflowed(pk->net))
        return TRUE;
    g_set_error(err, CS_ERROR, CS_ERROR_RESOURCE,
                "packet engine: at %.6f s the fabric holds %" G_GSIZE_FORMAT " packets (%.3g MiB), more than %s "
                "leaves (%.3g MiB): its queues keep growing; try %s", (double)cs_pkt_net_now(pk->net) / CS_PS_PER_S,
                cap, cap * PK_BYTES_PER_PKT / 1048576.0, pk->pool_why != NULL ? pk->pool_why : "the memory",
                pk->pool_cap * PK_BYTES_PER_PKT / 1048576.0,
                pk->fab.ib ? "fewer nodes or --model flow"
                           : "DCQCN (dcqcn = connectx), a smaller switch-buffer, fewer nodes, or --model flow");
    return FALSE;
}

static gboolean x_run(void *ctx, cs_time_t t, GError **err)
{
    pk_t *pk = ctx;
    pk->pkt_events += cs_pkt_net_run(pk->net, t);
    if (stuck_error(pk, err) || !pool_guard(pk, err))
        return FALSE;
    if (!pk->failed)
        return TRUE;
    nccl_retry_error(pk, pk->failed_qp, pk->failed_at, "", err);
    return FALSE;
}

/* ---- CollNet: SHARP's aggregation trees (cs_pkt_sharp.h) ---------------- */

static void sharp_sent(void *ctx, int lane, cs_time_t now)
{
    (void)now;
    cs_flow_xport_sent(((pk_t *)ctx)->flow, lane);
}

static void sharp_delivered(void *ctx, int lane, cs_time_t now)
{
    (void)now;
    cs_flow_xport_delivered(((pk_t *)ctx)->flow, lane);
}

static const cs_pkt_sharp_hooks_t sharp_hooks = { sharp_sent, sharp_delivered };

static void sharp_observe(void *ctx, const cs_pkt_t *pkt, cs_time_t now)
{
    cs_pkt_sharp_observe(((pk_t *)ctx)->sharp, pkt, now);
}

/* A tree QP of the lane's member: the engine's QP table stays indexed by
 * the net's QP ids. */
static void sharp_new_qp(void *ctx, int qp, int lane)
{
    pk_t *pk = ctx;
    g_assert(qp == (int)pk->qps->len);
    pk_qp_t q = { .lane = lane, .index = 0 };
    g_array_append_val(pk->qps, q);
}

/* A CollNet lane: its node's slice up the rail's SHARP tree, or the
 * result down it. The trees (one per CollNet channel and head) are built
 * as their members come. */
static gboolean x_coll_lane(void *ctx, int lane, int job, int ch, int group, gboolean up, int nic, const int *links,
                            int nlinks, GError **err)
{
    pk_t *pk = ctx;
    const cs_topo_t *t = pk->topo;
    if (!pk->fab.ib) {
        g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED, "packet engine: CollNet (SHARP in-network reduction) needs "
                    "InfiniBand switches with SHARP; this fabric is RoCE; use NCCL_COLLNET_ENABLE=0");
        return FALSE;
    }
    if (pk->sharp == NULL) {
        const pk_fabric_t *fab = &pk->fab;
        cs_pkt_qp_cfg_t qc = {
            .mtu = fab->mtu,
            .prio = fab->prio,           /* each member's job's VL replaces it (cs_pkt_sharp_member) */
            .frame = pk_frame(fab),
            .ack_interval = fab->ack_interval,
            .timeout = CS_PKT_QP_TIMEOUT_PS(fab->timeout_exp),
            .retry_cnt = fab->retry_cnt,
            .selective = fab->cfg.recovery == CS_FABRIC_SELECTIVE_REPEAT,
        };
        pk->sharp = cs_pkt_sharp_new(pk->net, &qc, &sharp_hooks, pk);
        cs_pkt_net_set_observer(pk->net, sharp_observe, pk);
    }
    cs_pkt_sharp_hop_t hops[CS_FLOW_HMAX];
    for (int i = 0; i < nlinks; i++) {
        const cs_link_t *l = &t->links[links[i]];
        hops[i] = (cs_pkt_sharp_hop_t){ pk->port_of_link[links[i]],
                                        l->reverse >= 0 ? pk->port_of_link[l->reverse] : -1,
                                        pk->node_of_dev[l->src], pk->node_of_dev[l->dst] };
        if (t->devs[l->dst].kind != CS_DEV_SWITCH || hops[i].down < 0) {
            g_set_error(err, CS_ERROR, CS_ERROR_TOPOLOGY, "packet engine: CollNet: %s -> %s on %s's SHARP tree is "
                        "not a link into a switch with a way back; SHARP reduces in InfiniBand switches",
                        t->devs[l->src].name, t->devs[l->dst].name, t->devs[nic].name);
            return FALSE;
        }
    }
    if ((guint)lane >= pk->lanes->len)
        g_array_set_size(pk->lanes, lane + 1);
    pk_lane_t *L = &g_array_index(pk->lanes, pk_lane_t, lane);
    L->job = job;
    L->ch = ch;
    L->src_nic = up ? nic : t->links[links[nlinks - 1]].dst;   /* names: NIC to root switch, or back */
    L->dst_nic = up ? t->links[links[nlinks - 1]].dst : nic;
    L->qp0 = (int)pk->qps->len;
    L->nqp = 1;
    /* its job's VL: a group is one job's, so the tree's QPs (made by the
     * group's members, filed under their lanes) send on their lane's VL,
     * where the IB CC counters (count_events) look for them */
    L->prio = job_prio(pk, job);
    const char *why = NULL;
    if (!cs_pkt_sharp_member(pk->sharp, group, lane, up, L->prio, hops, nlinks, sharp_new_qp, pk, &why)) {
        g_set_error(err, CS_ERROR, CS_ERROR_TOPOLOGY, "packet engine: CollNet: %s's SHARP tree: %s",
                    t->devs[nic].name, why);
        return FALSE;
    }
    return TRUE;
}

/* The last call's aggregation counters, per switch (-v). */
static char *sharp_text(const pk_t *pk)
{
    if (pk->sharp == NULL)
        return NULL;
    const cs_topo_t *t = pk->topo;
    GString *g = g_string_new(NULL);
    guint64 red = 0, rep = 0, held = 0;
    int nsw = 0;
    GString *per = g_string_new(NULL);
    for (int d = 0; d < t->ndevs; d++) {
        cs_pkt_sharp_stats_t st;
        if (pk->node_of_dev[d] < 0 || !cs_pkt_sharp_switch_stats(pk->sharp, pk->node_of_dev[d], &st))
            continue;
        red += st.reduced;
        rep += st.replicated;
        held = MAX(held, st.held_max);
        nsw++;
        g_string_append_printf(per, "%s%s %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT,
                               per->len ? ", " : "", t->devs[d].name, st.reduced, st.replicated, st.held_max);
    }
    g_string_append_printf(g, "SHARP aggregation: %d tree%s over %d switch%s, packets reduced %" G_GUINT64_FORMAT
                           ", copies sent down %" G_GUINT64_FORMAT ", most held at once by a switch %" G_GUINT64_FORMAT
                           " (per switch reduced/down/held: %s)", cs_pkt_sharp_ngroups(pk->sharp),
                           cs_pkt_sharp_ngroups(pk->sharp) == 1 ? "" : "s", nsw, nsw == 1 ? "" : "es", red, rep, held,
                           per->str);
    g_string_free(per, TRUE);
    return g_string_free(g, FALSE);
}

/* With the NICs' receive paths on (nic-rx-rate auto or a rate) they
 * model the receivers' side; with them off the flow engine's shares keep
 * the receivers' links. */
static const cs_flow_xport_t pk_xport_rx = { x_lane, x_send, x_rate, x_next, x_run, TRUE, x_coll_lane };
static const cs_flow_xport_t pk_xport_norx = { x_lane, x_send, x_rate, x_next, x_run, FALSE, x_coll_lane };

/* ---- engine ops ---------------------------------------------------------- */

static void call_clear(pk_t *pk)
{
    sample_clear(pk);
    g_clear_pointer(&pk->sharp, cs_pkt_sharp_free);
    g_clear_pointer(&pk->net, cs_pkt_net_free);
    g_clear_pointer(&pk->node_of_dev, g_free);
    g_clear_pointer(&pk->port_of_link, g_free);
    if (pk->lanes != NULL)
        g_array_set_size(pk->lanes, 0);
    if (pk->qps != NULL)
        g_array_set_size(pk->qps, 0);
    pk->failed = FALSE;
}

static void pk_close(void *state)
{
    pk_t *pk = state;
    if (pk == NULL)
        return;
    call_clear(pk);
    if (pk->lanes != NULL)
        g_array_free(pk->lanes, TRUE);
    if (pk->qps != NULL)
        g_array_free(pk->qps, TRUE);
    cs_link_stats_free(pk->stats);
    cs_net_counters_free(pk->net_counters);
    g_free(pk->sharp_text);
    cs_fabric_load_free(pk->load);
    cs_flow_free(pk->flow);
    fabric_clear(&pk->fab);
    g_free(pk->job_prio);
    g_free(pk->job_ar_threshold);
    g_free(pk);
}

/* The engine's state over a flow engine 'f' (taken) of topology t. */
static pk_t *pk_new(const cs_topo_t *t, cs_flow_t *f, guint64 seed, pk_fabric_t *fab, cs_sim_sink_t *sink)
{
    pk_t *pk = g_new0(pk_t, 1);
    pk->fab = *fab;
    pk->sink = sink;
    cs_flow_set_sink(f, sink);
    pk->flow = f;
    pk->topo = t;
    pk->seed = seed;
    pk->lanes = g_array_new(FALSE, TRUE, sizeof(pk_lane_t));
    pk->qps = g_array_new(FALSE, TRUE, sizeof(pk_qp_t));
    cs_flow_set_xport(f, fab->cfg.nic_rx != CS_FABRIC_RX_OFF ? &pk_xport_rx : &pk_xport_norx, pk);
    return pk;
}

/* What the engine refuses in a topology, and its fabric's settings. */
static gboolean pk_check(const cs_topo_t *t, const cs_engine_job_t *job, pk_fabric_t *fab, GError **err)
{
    int ib = -1;                 /* the fabric's kind, from its NICs: -1 none seen */
    for (int l = 0; l < t->nlinks; l++) {
        int d = t->links[l].src;
        if (t->links[l].kind != CS_LINK_NET || t->devs[d].kind != CS_DEV_NIC)
            continue;
        int this_ib = t->devs[d].nic_kind == CS_NIC_IB;
        if (ib >= 0 && this_ib != ib) {
            g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED, "packet engine: %s is %s but other NICs are %s; "
                        "expected one fabric, all InfiniBand or all RoCE", t->devs[d].name,
                        this_ib ? "InfiniBand" : "RoCE", this_ib ? "RoCE" : "InfiniBand");
            return FALSE;
        }
        ib = this_ib;
    }
    /* NCCL's socket transport is TCP through the kernel, not the RDMA
     * this engine runs on its NICs: refused rather than simulated as
     * lossless RoCE */
    const cs_comm_info_t *in = cs_comm_info(job->comm);
    if (in->nnodes > 1 && in->inter_transport == CS_XPORT_NET_SOCKET) {
        g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED, "packet engine: NCCL runs NET/Socket (TCP) between the "
                    "nodes here, and the packet engine models RDMA (RoCEv2 and InfiniBand) only; expected "
                    "--model analytic or flow for sockets, or an RDMA transport (NCCL_IB_DISABLE unset, an RDMA NIC)");
        return FALSE;
    }
    if (!fabric_setup(fab, job->fabric, cs_comm_settings(job->comm), ib == 1, err) ||
        !check_stall_nic(t, &fab->cfg, err)) {
        fabric_clear(fab);
        return FALSE;
    }
    return TRUE;
}

static gboolean pk_open(const cs_engine_job_t *job, void **state_p, GError **err)
{
    const cs_topo_t *t = job->topo != NULL ? job->topo : cs_comm_topo(job->comm);
    pk_fabric_t fab;
    if (!pk_check(t, job, &fab, err))
        return FALSE;
    cs_flow_t *f = cs_flow_new(job, err);
    if (f == NULL) {
        fabric_clear(&fab);
        return FALSE;
    }
    pk_t *pk = pk_new(t, f, job->seed, &fab, job->sink);
    pk->collnet = job->comm != NULL && cs_comm_info(job->comm)->collnet_supported;
    /* the fabric is checked against the topology once, here, so that a
     * buffer too small for its headroom is reported before any size */
    gboolean ok = build_net(pk, err);
    call_clear(pk);
    if (!ok) {
        pk_close(pk);
        return FALSE;
    }
    *state_p = pk;
    return TRUE;
}

/* Link statistics: the node-side links as the flow engine shared them,
 * the network links as the packets crossed them (wire bytes: framing,
 * ACKs, CNPs and pause frames included). */
static cs_link_stats_t *make_stats(pk_t *pk, double time_s)
{
    cs_link_stats_t *st = cs_flow_link_stats(pk->flow);
    const cs_topo_t *t = pk->topo;
    GArray *links = g_array_new(FALSE, FALSE, sizeof(cs_link_stat_t));
    for (int i = 0; i < st->n; i++)
        g_array_append_val(links, st->links[i]);
    g_free(st->links);
    for (int l = 0; l < t->nlinks; l++) {
        int port = pk->port_of_link[l];
        if (port < 0)
            continue;
        const cs_pkt_port_t *pp = cs_pkt_net_port(pk->net, port);
        double bytes = 0;
        for (int p = 0; p < CS_PKT_PRIOS; p++)
            bytes += (double)cs_pkt_port_tx_bytes(pp, p);
        bytes += (double)cs_pkt_port_ctrl_pkts(pp) * (pk->fab.ib ? CS_PKT_CREDIT_FC_WIRE : CS_PKT_PFC_WIRE);
        if (bytes <= 0)
            continue;
        cs_link_stat_t ls = {
            g_strdup_printf("%s -> %s (net)", t->devs[t->links[l].src].name, t->devs[t->links[l].dst].name),
            t->links[l].bw, bytes,
        };
        g_array_append_val(links, ls);
    }
    /* the receive paths' bytes on the links they drain over (the flow
     * engine's shares leave those links to them, pk_xport_rx) */
    for (int d = 0; d < t->ndevs && pk->fab.cfg.nic_rx != CS_FABRIC_RX_OFF; d++) {
        int node = pk->node_of_dev[d], l = t->devs[d].kind == CS_DEV_NIC && node >= 0 ? nic_rx_link(t, d) : -1;
        double bytes = l >= 0 ? (double)cs_pkt_net_host_delivered(pk->net, node) : 0;
        if (bytes <= 0)
            continue;
        g_autofree char *name = cs_flow_res_name(t, l);
        guint i = 0;
        while (i < links->len && strcmp(g_array_index(links, cs_link_stat_t, i).name, name) != 0)
            i++;
        if (i < links->len) {
            g_array_index(links, cs_link_stat_t, i).bytes += bytes;
        } else {
            cs_link_stat_t ls = { g_steal_pointer(&name), t->links[l].bw, bytes };
            g_array_append_val(links, ls);
        }
    }
    st->n = (int)links->len;
    st->links = (cs_link_stat_t *)g_array_free(links, FALSE);
    st->time_s = time_s;
    st->source = "model:packet (network links: packets on the wire; node links: the flow engine's sharing)";
    cs_link_stats_sort(st);
    return st;
}

/* What the network did in the last call: totals for -v, per link and
 * priority and per buffer for --json and --link-stats (cs_net_counters_t;
 * time-averages from 0 to the network's last event, its last ACK). */
static cs_net_counters_t *count_events(pk_t *pk)
{
    cs_net_counters_t *c = g_new0(cs_net_counters_t, 1);
    const cs_topo_t *t = pk->topo;
    c->credit = pk->fab.ib;
    c->ibcc = pk->fab.ibcc;
    c->packet_events = pk->pkt_events;
    /* IB CC: each QP's BECNs and CCTI on its NIC's link and its job's VL
     * (index port x CS_PKT_PRIOS + VL) */
    guint nlinks = 0;
    for (int l = 0; l < t->nlinks; l++)
        nlinks = MAX(nlinks, (guint)(pk->port_of_link[l] + 1));
    nlinks *= CS_PKT_PRIOS;
    g_autofree guint64 *becns = g_new0(guint64, MAX(1u, nlinks));
    g_autofree guint32 *cmax = g_new0(guint32, MAX(1u, nlinks)), *nqp = g_new0(guint32, MAX(1u, nlinks));
    g_autofree double *csum = g_new0(double, MAX(1u, nlinks));
    for (guint q = 0; c->ibcc && q < pk->qps->len; q++) {
        cs_pkt_qp_ibcc_t qi;
        cs_pkt_net_qp_ibcc(pk->net, (int)q, &qi);
        int port = cs_pkt_net_qp_port(pk->net, (int)q) * CS_PKT_PRIOS +
                   g_array_index(pk->lanes, pk_lane_t, qp_of(pk, (int)q)->lane).prio;
        becns[port] += qi.becns_received;
        cmax[port] = MAX(cmax[port], qi.ccti_max);
        csum[port] += qi.ccti_avg;
        nqp[port]++;
        c->becns += qi.becns_received;
        c->ccti_max = MAX(c->ccti_max, qi.ccti_max);
    }
    for (guint q = 0; q < pk->qps->len; q++) {
        c->drops += cs_pkt_net_flow_dropped(pk->net, (int)q);
        c->retransmitted += cs_pkt_net_qp_retransmitted(pk->net, (int)q);
        c->naks += cs_pkt_net_qp_naks(pk->net, (int)q);
        c->timeouts += cs_pkt_net_qp_timeouts(pk->net, (int)q);
        c->cnps += cs_pkt_net_flow_cnps_sent(pk->net, (int)q);
        c->ar_moves += cs_pkt_net_qp_ar_moves(pk->net, (int)q);
    }
    GArray *ports = g_array_new(FALSE, TRUE, sizeof(cs_net_port_counters_t));
    for (int l = 0; l < t->nlinks; l++) {
        int port = pk->port_of_link[l];
        if (port < 0)
            continue;
        for (int p = 0; p < CS_PKT_PRIOS; p++) {
            cs_pkt_link_stats_t ls;
            cs_pkt_net_link_stats(pk->net, port, p, &ls);
            cs_net_port_counters_t pc = {
                .prio = p,
                .tx_pkts = ls.tx_pkts,
                .pause_sent = ls.xoff_sent,
                .pause_received = ls.pause_received,
                .paused_us = (double)ls.paused_ps / 1e6,
                .ecn_marks = ls.ecn_marks,
                .drops = ls.drops_buffer + ls.drops_watchdog,
                .queue_max_bytes = (double)ls.queue_max,
                .queue_avg_bytes = ls.queue_avg,
                .fc_sent = cs_pkt_net_credit_fc_sent(pk->net, port, p),
                .starved_us = (double)cs_pkt_net_credit_starved_ps(pk->net, port, p) / 1e6,
            };
            int pp = port * CS_PKT_PRIOS + p;
            if (nqp[pp] > 0) {   /* the QPs send on their jobs' VLs */
                pc.becns = becns[pp];
                pc.ccti_max = cmax[pp];
                pc.ccti_avg = csum[pp] / nqp[pp];
            }
            c->pause_frames += pc.pause_sent;
            c->paused_us += pc.paused_us;
            c->ecn_marks += pc.ecn_marks;
            c->fc_packets += pc.fc_sent;
            c->starved_us += pc.starved_us;
            if (pc.tx_pkts == 0 && pc.pause_sent == 0 && pc.drops == 0 && pc.fc_sent == 0)
                continue;
            pc.link = g_strdup_printf("%s -> %s", t->devs[t->links[l].src].name, t->devs[t->links[l].dst].name);
            g_array_append_val(ports, pc);
        }
    }
    c->nports = (int)ports->len;
    c->ports = (cs_net_port_counters_t *)g_array_free(ports, FALSE);
    /* buffers: switches' shared buffers and NICs' receive buffers */
    GArray *sws = g_array_new(FALSE, TRUE, sizeof(cs_net_buffer_counters_t));
    for (int d = 0; d < t->ndevs; d++) {
        int node = pk->node_of_dev[d];
        if (node < 0)
            continue;
        guint64 max;
        double avg;
        if (t->devs[d].kind == CS_DEV_SWITCH) {
            cs_pkt_net_switch_buffer(pk->net, node, &max, &avg);
        } else {
            max = cs_pkt_net_host_rx_max(pk->net, node);
            avg = cs_pkt_net_host_rx_avg(pk->net, node);
        }
        if (max == 0)
            continue;
        cs_net_buffer_counters_t w = { g_strdup(t->devs[d].name), (double)max, avg };
        g_array_append_val(sws, w);
    }
    c->nbuffers = (int)sws->len;
    c->buffers = (cs_net_buffer_counters_t *)g_array_free(sws, FALSE);
    /* SHARP: each switch's aggregation counters (as -v's line) */
    if (pk->sharp != NULL) {
        GArray *agg = g_array_new(FALSE, TRUE, sizeof(cs_net_sharp_counters_t));
        for (int d = 0; d < t->ndevs; d++) {
            cs_pkt_sharp_stats_t st;
            if (pk->node_of_dev[d] < 0 || !cs_pkt_sharp_switch_stats(pk->sharp, pk->node_of_dev[d], &st))
                continue;
            cs_net_sharp_counters_t a = { g_strdup(t->devs[d].name), st.reduced, st.replicated, st.held_max };
            g_array_append_val(agg, a);
            c->sharp_reduced += st.reduced;
            c->sharp_copies_down += st.replicated;
            c->sharp_held_max = MAX(c->sharp_held_max, st.held_max);
        }
        c->sharp = TRUE;
        c->nsharp = (int)agg->len;
        c->sharp_switches = (cs_net_sharp_counters_t *)g_array_free(agg, FALSE);
    }
    return c;
}

/* CollNet: SHARP reduces in InfiniBand switches (cs_pkt_sharp.h); NCCL
 * runs CollNet over IB SHARP only, so a RoCE fabric's switches reduce
 * nothing. */
static gboolean pk_refuse_collnet(const pk_t *pk, const cs_engine_call_t *call, GError **err)
{
    cs_algo_t a = call->decision != NULL ? call->decision->algo : CS_ALGO_RING;
    if ((a != CS_ALGO_COLLNET_DIRECT && a != CS_ALGO_COLLNET_CHAIN) || pk->fab.ib)
        return TRUE;
    g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED,
                "packet engine: %s (SHARP in-network reduction) needs InfiniBand switches with SHARP; this fabric "
                "is RoCE; use NCCL_COLLNET_ENABLE=0", cs_algo_name(a));
    return FALSE;
}

static gboolean pk_predict(void *state, const cs_engine_job_t *job, const cs_engine_call_t *call, double time_s[2],
                           GError **err)
{
    pk_t *pk = state;
    if (!pk_refuse_collnet(pk, call, err))
        return FALSE;
    double t0 = cs_engine_cpu_seconds();
    call_clear(pk);
    pk->pkt_events = 0;
    pool_guard_set(pk);
    if (!build_net(pk, err))
        return FALSE;
    pool_guard_arm(pk);
    cs_pkt_net_set_qp_hooks(pk->net, &qp_hooks, pk);
    if (pk->sink != NULL && pk->sink->gauge != NULL)
        sample_setup(pk);
    cs_flow_stats_t st;
    g_autoptr(GError) e = NULL;
    gboolean ok = cs_flow_simulate(pk->flow, call, CS_FLOW_FOLD_NONE, &st, &e);
    if (!ok)
        run_error(pk, &e, err);
    if (ok) {
        /* the host's floor and the all-gather's own-part copy, as the
         * flow engine (cs_flow_call_times); several jobs get the floor
         * from cs_flow_run's launches */
        cs_flow_call_times(pk->flow, call, st.time_s, time_s);
        pk->events = st.events;
        pk->cpu = cs_engine_cpu_seconds() - t0;
        cs_link_stats_free(pk->stats);
        pk->stats = job->link_stats != NULL ? make_stats(pk, st.time_s) : NULL;
        cs_net_counters_free(pk->net_counters);
        pk->net_counters = count_events(pk);
        g_free(pk->sharp_text);
        pk->sharp_text = sharp_text(pk);
    }
    call_clear(pk);
    return ok;
}

static cs_link_stats_t *pk_link_stats(void *state)
{
    pk_t *pk = state;
    cs_link_stats_t *st = pk->stats;
    pk->stats = NULL;
    return st;
}

/* --json: a copy for each row */
static cs_net_counters_t *pk_net_counters(void *state)
{
    const pk_t *pk = state;
    return pk->net_counters != NULL ? cs_net_counters_copy(pk->net_counters) : NULL;
}

static char *pk_counters(void *state)
{
    const pk_t *pk = state;
    const cs_net_counters_t *c = pk->net_counters;
    if (c == NULL)
        return NULL;
    double ev = (double)(pk->events + pk->pkt_events);
    if (c->credit) {
        g_autofree char *sh = pk->sharp_text != NULL ? g_strdup_printf("; %s", pk->sharp_text) : g_strdup("");
        g_autofree char *cc = c->ibcc ? g_strdup_printf(", FECN marks %" G_GUINT64_FORMAT ", BECNs %" G_GUINT64_FORMAT
                                                        ", highest CCTI %u", c->ecn_marks, c->becns, c->ccti_max)
                                      : g_strdup("");
        return g_strdup_printf("packet events %" G_GUINT64_FORMAT ", flow events %" G_GUINT64_FORMAT
                               ", %.3g events/s, CPU %.3f s; drops %" G_GUINT64_FORMAT ", retransmitted %"
                               G_GUINT64_FORMAT ", timeouts %" G_GUINT64_FORMAT ", flow-control packets %"
                               G_GUINT64_FORMAT " (senders credit-starved %.1f us in all), packets sent another way "
                               "by adaptive routing %" G_GUINT64_FORMAT "%s%s",
                               pk->pkt_events, pk->events, ev / MAX(pk->cpu, 1e-9), pk->cpu, c->drops,
                               c->retransmitted, c->timeouts, c->fc_packets, c->starved_us, c->ar_moves, cc, sh);
    }
    return g_strdup_printf("packet events %" G_GUINT64_FORMAT ", flow events %" G_GUINT64_FORMAT
                           ", %.3g events/s, CPU %.3f s; drops %" G_GUINT64_FORMAT ", retransmitted %"
                           G_GUINT64_FORMAT ", NAKs %" G_GUINT64_FORMAT ", timeouts %" G_GUINT64_FORMAT
                           ", PFC XOFFs %" G_GUINT64_FORMAT " (links paused %.1f us in all), ECN marks %"
                           G_GUINT64_FORMAT ", CNPs %" G_GUINT64_FORMAT,
                           pk->pkt_events, pk->events, ev / MAX(pk->cpu, 1e-9), pk->cpu, c->drops, c->retransmitted,
                           c->naks, c->timeouts, c->pause_frames, c->paused_us, c->ecn_marks, c->cnps);
}

static gboolean dcqcn_params_set(const cs_fabric_cfg_t *c)
{
    for (int k = CS_FK_DCQCN_AI; k <= CS_FK_DCQCN_MIN_DEC; k++)
        if (c->set >> k & 1)
            return TRUE;
    return FALSE;
}

static char *dcqcn_text(const pk_fabric_t *f)
{
    if (!f->dcqcn)
        return g_strdup("no congestion control (DCQCN off; dcqcn = connectx or paper turns it on)");
    const cs_pkt_dcqcn_cfg_t *d = &f->dc;
    return g_strdup_printf("DCQCN with %s values%s (AI %.3g Mb/s, HAI %.3g Mb/s, timer %.3g us, byte counter %"
                           G_GUINT64_FORMAT " B, F %d, g %.4g, min rate %.3g Mb/s)",
                           f->cfg.dcqcn == CS_FABRIC_DCQCN_PAPER ? "the DCQCN paper's" : "ConnectX's",
                           dcqcn_params_set(&f->cfg) ? " and the section's" : "",
                           (double)d->ai_bps / 1e6, (double)d->hai_bps / 1e6, (double)d->timer / 1e6, d->byte_reset,
                           d->f, d->g, (double)d->min_rate_bps / 1e6);
}

static char *prios_text(guint8 mask)
{
    if (mask == 0)
        return g_strdup("none");
    GString *g = g_string_new(NULL);
    for (int p = 0; p < 8; p++)
        if (mask >> p & 1)
            g_string_append_printf(g, "%s%d", g->len ? "," : "", p);
    return g_string_free(g, FALSE);
}

static double net_ports(const cs_topo_t *t)
{
    double n = 0;
    for (int l = 0; l < t->nlinks; l++)
        n += t->links[l].kind == CS_LINK_NET;
    return n;
}

/* The notes of an InfiniBand fabric: what the engine runs and what it
 * does not model yet (issue #14: congestion control, adaptive routing,
 * SHARP). */
static char **ib_notes(const pk_t *pk)
{
    const pk_fabric_t *f = &pk->fab;
    const cs_fabric_cfg_t *c = &f->cfg;
    GPtrArray *n = g_ptr_array_new();
    g_ptr_array_add(n, g_strdup_printf(
        "packet engine: InfiniBand, MTU %u, data on VL %d (%s); credit flow control: per VL at every switch input "
        "port and NIC, %.3g us of the link's rate in 64-B credits (InfiniScale IV's buffering time, "
        "docs/model-packet.md; %.4g KB at 400 Gb/s), flow-control packets on change and every %.4g us; lossless, "
        "no pause; %d QP%s per connection%s, an ACK every %u packet%s, %s, retransmission timeout 4.096 us x 2^%d, "
        "%d retries",
        f->mtu, f->prio, f->prio_why, IB_BUFFER_S * 1e6, 400e9 / 8 * IB_BUFFER_S / 1e3,
        CS_PKT_CREDIT_REFRESH_DEFAULT / 1e6, f->qps,
        f->qps > 1 ? "s" : "", f->qps > 1 ? (f->split ? ", each message split over them" : ", messages in turn") : "",
        f->ack_interval, f->ack_interval > 1 ? "s" : "",
        c->recovery == CS_FABRIC_SELECTIVE_REPEAT ? "selective repeat" : "go-back-N", f->timeout_exp, f->retry_cnt));
    g_autofree char *thr = pk->notes_per_job ? g_strdup("its job's NCCL_IB_AR_THRESHOLD (each job's below)")
                                             : g_strdup_printf("NCCL_IB_AR_THRESHOLD (%ld B)", f->ar_threshold);
    g_ptr_array_add(n, f->ar ? g_strdup_printf(
                                   "packet engine: adaptive routing (NCCL_IB_ADAPTIVE_ROUTING, on by default on "
                                   "InfiniBand): a message above %s goes as an RDMA WRITE "
                                   "whose packets leave each switch by the equal-cost port whose queue holds the "
                                   "fewest bytes, then a WRITE with immediate of no payload on the QP's route; one "
                                   "at or below it as one WRITE with immediate on the QP's route (net_ib/p2p.cc); "
                                   "the receiver keeps packets past a gap without NAKing it", thr)
                             : g_strdup("packet engine: adaptive routing off (NCCL_IB_ADAPTIVE_ROUTING=0): each QP "
                                        "keeps its ECMP route"));
    if (f->ibcc) {
        const cs_pkt_ibcc_cfg_t *ic = &f->ic;
        const cs_pkt_ibcc_cct_entry_t *top = &ic->cct[ic->ccti_limit];
        g_autofree char *mark_rate = ic->marking_rate == 0 ? g_strdup("every data packet marked")
            : g_strdup_printf("%u packet%s left unmarked between marks", ic->marking_rate,
                              ic->marking_rate == 1 ? "" : "s");
        g_autofree char *where = ic->threshold == 0
            ? g_strdup("mark nothing (threshold 0)")
            : g_strdup_printf("mark FECN on a VL whose queue passes %d/16 of its input buffer (threshold %d), %s, %s",
                              16 - ic->threshold, ic->threshold, mark_rate,
                              ic->victim_mask ? "victim ports too" : "roots only (no victim mask)");
        g_ptr_array_add(n, g_strdup_printf(
            "packet engine: InfiniBand congestion control (IBA annex A10; docs/model-packet.md): switch ports "
            "%s; receivers return BECN on the ACK or a CNP; each QP's CCTI +%u per BECN up to %u, "
            "-1 every %.4g us down to %u; after each packet a delay of CCT[CCTI] (%s table, %u entries; at the "
            "limit %u/2^%u packet times: %.3g%% of the line) - the table's unit and the threshold's depth are "
            "assumptions",
            where, ic->ccti_increase, ic->ccti_limit,
            (double)ic->ccti_timer / 1e6, ic->ccti_min, c->ibcc_ncct > 0 ? "the section's" : "the published OFA",
            ic->ncct, top->mult, top->shift, 100.0 / (1.0 + (double)top->mult / (1u << top->shift))));
    } else {
        g_ptr_array_add(n, g_strdup("packet engine: no congestion control (InfiniBand CC off, as OpenSM ships it; "
                                    "ibcc = on turns it on)"));
    }
    g_ptr_array_add(n, cs_pkt_vlarb_note(c, &f->arb));
    /* a stalled NIC changes every number below: say so, as RoCE does */
    if (c->stall_nic != NULL)
        g_ptr_array_add(n, c->stall_for_s < 0
                               ? g_strdup_printf("packet engine: %s stops draining at %.4g us for good (it returns "
                                                 "no credits: its senders back up)", c->stall_nic, c->stall_at_s * 1e6)
                               : g_strdup_printf("packet engine: %s stops draining at %.4g us for %.4g us (it returns "
                                                 "no credits meanwhile: its senders back up)", c->stall_nic,
                                                 c->stall_at_s * 1e6, c->stall_for_s * 1e6));
    if (pk->collnet)
        g_ptr_array_add(n, g_strdup("packet engine: CollNet on SHARP (docs/model-packet.md): an aggregation node in "
                                    "every switch of each rail's tree, reliable connections on its edges; a switch "
                                    "reduces the k-th packets of all its children as the last arrives and sends the "
                                    "result up, the root's result goes down copied to every child (streaming "
                                    "aggregation); reduction at line rate and no aggregation buffer limit beyond "
                                    "NCCL's steps in flight are assumptions"));
    g_ptr_array_add(n, g_strdup("packet engine: not modelled on InfiniBand yet (issue #14): "
                                "SL-to-VL tables other than the default, a credit buffer of another size; "
                                "inside a node the flow engine's fair sharing"));
    g_ptr_array_add(n, NULL);
    return (char **)g_ptr_array_free(n, FALSE);
}

static char **pk_notes(void *state)
{
    const pk_t *pk = state;
    const pk_fabric_t *f = &pk->fab;
    if (pk->topo != NULL && net_ports(pk->topo) == 0) {
        /* nothing crosses a network: no fabric's parameters to state */
        GPtrArray *n = g_ptr_array_new();
        g_ptr_array_add(n, g_strdup("packet engine: no network link in this topology (one node): no packet runs; "
                                    "inside the node the flow engine's fair sharing prices the call"));
        g_ptr_array_add(n, NULL);
        return (char **)g_ptr_array_free(n, FALSE);
    }
    if (f->ib)
        return ib_notes(pk);
    const cs_fabric_cfg_t *c = &f->cfg;
    GPtrArray *n = g_ptr_array_new();
    g_autofree char *dc = dcqcn_text(f);
    g_autofree char *pfc = prios_text(c->pfc);
    const char *buf_why;
    guint64 buf = cs_fabric_switch_buffer(c, 0, &buf_why);
    g_autofree char *buffer = c->switch_buffer > 0 || c->switch_part >= 0
        ? g_strdup_printf("%.4g MB (%s)", (double)buf / 1e6, buf_why) : g_strdup(buf_why);
    g_autofree char *headroom = c->pfc_headroom >= 0 ? g_strdup_printf("%" G_GINT64_FORMAT " B", c->pfc_headroom)
                              : c->cable_m >= 0 ? g_strdup_printf("by the formula for %.4g m of cable", c->cable_m)
                              : g_strdup("by the formula, cable from each link's latency");
    g_autofree char *ecn = !c->ecn ? g_strdup("off")
                         : c->ecn_kmin > 0 && c->ecn_pmax > 0
                             ? g_strdup_printf("Kmin %" G_GUINT64_FORMAT " B, Kmax %" G_GUINT64_FORMAT " B, Pmax %.3g",
                                               c->ecn_kmin, c->ecn_kmax, c->ecn_pmax)
                         : c->ecn_kmin > 0 ? g_strdup_printf("Kmin %" G_GUINT64_FORMAT " B, Kmax %" G_GUINT64_FORMAT
                                                            " B, Pmax by each switch's fastest port",
                                                            c->ecn_kmin, c->ecn_kmax)
                         : c->ecn_pmax > 0 ? g_strdup_printf("thresholds by link rate, Pmax %.3g", c->ecn_pmax)
                         : g_strdup("RED by link rate");
    g_ptr_array_add(n, g_strdup_printf(
        "packet engine: RoCEv2, MTU %u%s, data on priority %d (%s%s), CNPs on %d; %s; switches: shared buffer %s, "
        "PFC on priorit%s %s (alpha %.4g, headroom %s), ECN %s; %d QP%s per connection%s, an ACK every %u "
        "packet%s, %s, retransmission timeout 4.096 us x 2^%d, %d retries (docs/model-packet.md)",
        f->mtu, c->trust == CS_FABRIC_TRUST_PCP ? ", VLAN-tagged" : "", f->prio, f->prio_why,
        (c->pfc >> f->prio) & 1 ? ", lossless" : ", lossy: no PFC, drops and recovery", f->cnp_prio, dc, buffer,
        __builtin_popcount(c->pfc) == 1 ? "y" : "ies", pfc, c->pfc_alpha > 0 ? c->pfc_alpha : CS_PKT_MMU_ALPHA_DEFAULT, headroom, ecn,
        f->qps, f->qps > 1 ? "s" : "", f->qps > 1 ? (f->split ? ", each message split over them" : ", messages in turn")
                                            : "", f->ack_interval, f->ack_interval > 1 ? "s" : "",
        c->recovery == CS_FABRIC_SELECTIVE_REPEAT ? "selective repeat" : "go-back-N", f->timeout_exp, f->retry_cnt));
    g_autofree char *rx = c->nic_rx == CS_FABRIC_RX_OFF
                              ? g_strdup(c->stall_nic != NULL ? "NICs drain into their hosts at once (the stalled one at "
                                                                "its PCIe link's rate)"
                                                              : "NICs drain into their hosts at once")
                        : c->nic_rx == CS_FABRIC_RX_AUTO ? g_strdup("NICs drain into their hosts at their PCIe link's rate")
                        : g_strdup_printf("NICs drain into their hosts at %.4g Gb/s", c->nic_rx_bps / 1e9);
    g_autofree char *wd = c->watchdog_s > 0 ? g_strdup_printf("PFC watchdog %.4g us (restore %.4g ms)",
                                                              c->watchdog_s * 1e6, c->watchdog_restore_s * 1e3)
                                            : g_strdup("no PFC watchdog");
    g_autofree char *stall = c->stall_nic == NULL ? g_strdup("")
                           : c->stall_for_s < 0 ? g_strdup_printf("; %s stops draining at %.4g us for good",
                                                                  c->stall_nic, c->stall_at_s * 1e6)
                           : g_strdup_printf("; %s stops draining at %.4g us for %.4g us", c->stall_nic,
                                             c->stall_at_s * 1e6, c->stall_for_s * 1e6);
    g_ptr_array_add(n, g_strdup_printf("packet engine: %s, %s%s; inside a node the flow engine's fair sharing",
                                       rx, wd, stall));
    g_ptr_array_add(n, NULL);
    return (char **)g_ptr_array_free(n, FALSE);
}

/* ---- cost estimates -------------------------------------------------------- */


/* The packets on the wires when every network link is busy (its rate x
 * propagation, in full-size frames). Packets queued in switch and NIC
 * buffers are not foreseen: a congested fabric could hold every buffer
 * full, far more than runs need; the pool is watched instead while the
 * run goes (x_run: pool_guard). */
static double wire_packets(const pk_t *pk, const cs_topo_t *t)
{
    double bytes = 0;
    for (int l = 0; l < t->nlinks; l++) {
        const cs_link_t *k = &t->links[l];
        if (k->kind == CS_LINK_NET)
            bytes += k->bw * (k->lat + (t->devs[k->dst].kind == CS_DEV_SWITCH ? t->fabric.switch_lat : 0));
    }
    return bytes / MAX(pk->fab.mtu * pk->fab.wire_ratio, 64.0);
}

/* The network part of one call's cost: its QPs and packet hops. */
static gboolean call_net_cost(const pk_t *pk, cs_fabric_load_t *fl, const cs_engine_call_t *call, double *bytes_p,
                              double *events_p)
{
    cs_fabric_bound_t b;
    cs_fabric_load_bound(fl, call->decision, &b);
    if (b.skipped != NULL)
        return FALSE;
    double frame = pk->fab.mtu * pk->fab.wire_ratio;
    *bytes_p = PK_BYTES_PER_QP * b.net_edges * pk->fab.qps;
    *events_p = PK_EVENTS_PER_HOP * b.net_wire * (double)call->nccl_bytes / MAX(frame, 64.0);
    return TRUE;
}

static gboolean pk_estimate(void *state, const cs_engine_job_t *job, const cs_engine_call_t *call,
                            cs_engine_cost_t *cost_p, GError **err)
{
    pk_t *pk = state;
    if (!pk_refuse_collnet(pk, call, err))
        return FALSE;
    cs_engine_cost_t c;
    if (!cs_engine_flow.estimate(pk->flow, job, call, &c, err)) {
        g_prefix_error(err, "packet engine: ");
        return FALSE;
    }
    if (pk->load == NULL && (pk->load = cs_fabric_load_new(job, err)) == NULL)
        return FALSE;
    double qps = 0, events = 0, wires = PK_BYTES_PER_PKT * wire_packets(pk, pk->topo);
    c.bytes += PK_BYTES_PER_PORT * net_ports(pk->topo);
    c.seconds = -1;
    if (call_net_cost(pk, pk->load, call, &qps, &events)) {
        c.bytes += qps;
        c.seconds = events / PK_EVENTS_PER_S;
    }
    pk->est_bytes = MAX(pk->est_bytes, c.bytes);   /* all but the wires' packets: the pool guard's share */
    c.bytes += wires;
    *cost_p = c;
    return TRUE;
}

/* The first task that communicates (a workload's compute tasks have no
 * communicator, so no NCCL settings): its [fabric] and NCCL settings are
 * the network's, as every job's are in a scenario; -1: none does. */
static int first_comm_task(const cs_engine_multi_t *m)
{
    for (int j = 0; j < m->ntasks; j++)
        if (m->tasks[j].job.comm != NULL)
            return j;
    return -1;
}

/* A task's name for messages: "[job NAME]" for a scenario's job, with
 * where: "file:line: [job NAME]" (its section's line); "task N (in
 * order)" for a workload's. */
static char *task_label(const cs_engine_task_t *t, int j, gboolean where)
{
    if (t->name == NULL)
        return g_strdup_printf("task %d (in order)", j + 1);
    return where && t->origin != NULL ? g_strdup_printf("%s: [job %s]", t->origin, t->name)
                                      : g_strdup_printf("[job %s]", t->name);
}

/* Jobs with their own NCCL variables ([job] NCCL_IB_SL = 1, ...) may ask
 * for another lane or routing than the first job's. On InfiniBand each
 * job's QPs run on its own VL (its NCCL_IB_SL through the SL-to-VL map),
 * each VL with its own credits at every input port and the ports' VL
 * arbitration between them, and each job sends by its own
 * NCCL_IB_AR_THRESHOLD (a sender's choice per message); adaptive routing
 * is one setting of the switches here, so jobs that differ in it are
 * refused. On RoCE every QP runs on the first job's priority (the
 * network's PFC, ECN and CNP priorities are set for it), so a job asking
 * for another is refused rather than run on the wrong one. prio_p (may
 * be NULL): each task's priority, -1 for compute tasks; why_p (may be
 * NULL): each task's reason, NULL for compute tasks (g_free each, then
 * the array); thr_p (may be NULL): each task's NCCL_IB_AR_THRESHOLD. */
static gboolean job_lanes(const cs_engine_multi_t *m, int j0, const pk_fabric_t *fab, int **prio_p, char ***why_p,
                          long **thr_p, GError **err)
{
    g_autofree int *prio = g_new(int, MAX(1, m->ntasks));
    g_autofree long *thr = g_new(long, MAX(1, m->ntasks));
    char **why = g_new0(char *, MAX(1, m->ntasks));
    gboolean ok = TRUE;
    for (int j = 0; j < m->ntasks; j++) {
        prio[j] = -1;
        thr[j] = fab->ar_threshold;
        const cs_engine_job_t *job = &m->tasks[j].job;
        if (job->comm == NULL)
            continue;
        if (j <= j0) {
            prio[j] = fab->prio;
            why[j] = g_strdup(fab->prio_why);
            continue;
        }
        pk_fabric_t other;
        ok = fabric_setup(&other, job->fabric, cs_comm_settings(job->comm), fab->ib, err);
        /* the queue pairs' settings are the run's, set once from the
         * first job's (pk_fabric_t): another job's own are refused */
        gboolean same_qp = other.timeout_exp == fab->timeout_exp && other.retry_cnt == fab->retry_cnt &&
                           other.qps == fab->qps && other.split == fab->split;
        gboolean same = ok && (fab->ib || other.prio == fab->prio) && other.ar == fab->ar && same_qp;
        if (ok && !same) {
            g_autofree char *first = task_label(&m->tasks[j0], j0, FALSE);
            g_autofree char *this = task_label(&m->tasks[j], j, TRUE);
            if (!same_qp)
                g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED, "%s: packet engine: queue pairs with "
                            "NCCL_IB_TIMEOUT %d, NCCL_IB_RETRY_CNT %d, NCCL_IB_QPS_PER_CONNECTION %d, "
                            "NCCL_IB_SPLIT_DATA_ON_QPS %d where %s has %d, %d, %d, %d: the engine sets them once "
                            "for the run; expected the same four in every [job] (set them in [nccl] or --env)",
                            this, other.timeout_exp, other.retry_cnt, other.qps, other.split, first,
                            fab->timeout_exp, fab->retry_cnt, fab->qps, fab->split);
            else if (fab->ib)
                g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED, "%s: packet engine: adaptive routing %s "
                            "(NCCL_IB_ADAPTIVE_ROUTING) where %s has it %s: it is the switches' setting, one for "
                            "the whole network here; expected the same NCCL_IB_ADAPTIVE_ROUTING in every [job] "
                            "(each job may have its own NCCL_IB_SL and NCCL_IB_AR_THRESHOLD)", this,
                            other.ar ? "on" : "off", first, fab->ar ? "on" : "off");
            else
                g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED, "%s: packet engine: priority %d (%s) where %s "
                            "has %d (%s): on RoCE the network's PFC, ECN and CNP priorities are set for one; "
                            "expected the same NCCL_IB_SL and NCCL_IB_TC in every [job]", this, other.prio,
                            other.prio_why, first, fab->prio, fab->prio_why);
        }
        if (ok && same) {
            prio[j] = other.prio;
            thr[j] = other.ar_threshold;
            why[j] = g_steal_pointer(&other.prio_why);
        }
        fabric_clear(&other);
        ok = ok && same;
        if (!ok)
            break;
    }
    if (ok && prio_p != NULL)
        *prio_p = g_steal_pointer(&prio);
    if (ok && thr_p != NULL)
        *thr_p = g_steal_pointer(&thr);
    if (ok && why_p != NULL) {
        *why_p = why;
    } else {
        for (int j = 0; j < m->ntasks; j++)
            g_free(why[j]);
        g_free(why);
    }
    return ok;
}

/* Several jobs on one network: the flow engine's part, the network once,
 * each job's QPs and hops (compute tasks have none). */
static gboolean pk_estimate_jobs(const cs_engine_multi_t *m, cs_engine_cost_t *cost_p, GError **err)
{
    int j0 = first_comm_task(m);
    if (j0 < 0)
        return cs_engine_flow.estimate_jobs(m, cost_p, err);   /* no network run */
    pk_fabric_t fab;
    if (!pk_check(m->topo, &m->tasks[j0].job, &fab, err))
        return FALSE;
    if (!job_lanes(m, j0, &fab, NULL, NULL, NULL, err)) {
        fabric_clear(&fab);
        return FALSE;
    }
    pk_t probe = { .topo = m->topo, .fab = fab };
    cs_engine_cost_t c;
    gboolean ok = cs_engine_flow.estimate_jobs(m, &c, err);
    double secs = 0;
    gboolean timed = TRUE;
    if (ok)
        c.bytes += PK_BYTES_PER_PORT * net_ports(m->topo) + PK_BYTES_PER_PKT * wire_packets(&probe, m->topo);
    for (int j = 0; ok && j < m->ntasks; j++) {
        const cs_engine_task_t *tk = &m->tasks[j];
        if (tk->job.comm == NULL)
            continue;
        g_autoptr(cs_fabric_load_t) fl = cs_fabric_load_new(&tk->job, err);
        double qps = 0, events = 0;
        if (fl == NULL)
            ok = FALSE;
        else if (call_net_cost(&probe, fl, &tk->call, &qps, &events)) {
            c.bytes += qps;
            secs += events * MAX(1, tk->iters) / PK_EVENTS_PER_S;
        } else {
            timed = FALSE;
        }
    }
    fabric_clear(&fab);
    if (!ok)
        return FALSE;
    c.seconds = timed ? secs : -1;
    *cost_p = c;
    return TRUE;
}

/* Several jobs on one machine: one packet network for all of them (the
 * [fabric] and NCCL settings of the first job that communicates: a
 * scenario's jobs share them), each job's connections its own QPs. A
 * workload's compute tasks have no lanes: the flow engine times them and
 * they never reach the network; with nothing but them, no network is
 * built. */
static gboolean pk_run_jobs(const cs_engine_multi_t *m, double *end_s, cs_link_stats_t **stats_p, GError **err)
{
    g_return_val_if_fail(m->ntasks > 0, FALSE);
    int j0 = first_comm_task(m);
    if (j0 < 0)
        return cs_engine_flow.run_jobs(m, end_s, stats_p, err);
    pk_fabric_t fab;
    if (!pk_check(m->topo, &m->tasks[j0].job, &fab, err))
        return FALSE;
    int *prio;
    long *thr;
    if (!job_lanes(m, j0, &fab, &prio, NULL, &thr, err)) {
        fabric_clear(&fab);
        return FALSE;
    }
    pk_t *pk = pk_new(m->topo, cs_flow_new_shared(m->topo, m->params), m->tasks[j0].job.seed, &fab, m->sink);
    pk->job_prio = prio;
    pk->job_ar_threshold = thr;
    pk->njob_prio = m->ntasks;
    pool_guard_set(pk);
    gboolean ok = build_net(pk, err);
    if (ok) {
        pool_guard_arm(pk);
        cs_pkt_net_set_qp_hooks(pk->net, &qp_hooks, pk);
        if (pk->sink != NULL && pk->sink->gauge != NULL)
            sample_setup(pk);
        g_autoptr(GError) e = NULL;
        cs_flow_stats_t st;
        ok = cs_flow_run(pk->flow, m->tasks, m->ntasks, end_s, &st, &e);
        if (!ok)
            run_error(pk, &e, err);
        else if (stats_p != NULL) {
            double end = 0;          /* the run's length: the last job's end */
            for (int j = 0; j < m->ntasks; j++)
                end = MAX(end, end_s[j]);
            *stats_p = make_stats(pk, end);
            (*stats_p)->net = count_events(pk);
        }
    }
    pk_close(pk);
    return ok;
}

/* The header's notes for a run of several jobs: the fabric as it will
 * run (the first communicating job's [fabric] and NCCL settings, as
 * pk_run_jobs); none without one (no network runs). On InfiniBand with
 * several jobs, a line per job: its VL and NCCL_IB_AR_THRESHOLD. */
static char **pk_notes_jobs(const cs_engine_multi_t *m)
{
    pk_fabric_t fab;
    int j0 = first_comm_task(m);
    if (j0 < 0 || !pk_check(m->topo, &m->tasks[j0].job, &fab, NULL))
        return NULL;
    pk_t probe = { .topo = m->topo, .fab = fab };
    int ncomm = 0;
    for (int j = 0; j < m->ntasks; j++) {
        ncomm += m->tasks[j].job.comm != NULL;
        probe.collnet |= m->tasks[j].job.comm != NULL && cs_comm_info(m->tasks[j].job.comm)->collnet_supported;
    }
    int *prio = NULL;
    char **why = NULL;
    long *thr = NULL;
    gboolean per_job = fab.ib && ncomm > 1 && job_lanes(m, j0, &fab, &prio, &why, &thr, NULL);
    g_autofree char *first = per_job ? task_label(&m->tasks[j0], j0, FALSE) : NULL;
    g_autofree char *run_why = per_job ? g_strdup_printf("%s, %s's; each job's VL below", fab.prio_why, first) : NULL;
    if (run_why != NULL)
        probe.fab.prio_why = run_why;
    probe.notes_per_job = per_job;
    char **notes = pk_notes(&probe);
    if (per_job) {
        GPtrArray *n = g_ptr_array_new();
        for (int i = 0; notes != NULL && notes[i] != NULL; i++)
            g_ptr_array_add(n, notes[i]);
        for (int j = 0; j < m->ntasks; j++) {
            if (prio[j] < 0)
                continue;
            int shared = 0;
            for (int k = 0; k < m->ntasks; k++)
                shared += k != j && prio[k] == prio[j];
            g_autofree char *who = task_label(&m->tasks[j], j, FALSE);
            g_autofree char *ar = fab.ar ? g_strdup_printf("; NCCL_IB_AR_THRESHOLD %ld B", thr[j]) : g_strdup("");
            g_ptr_array_add(n, g_strdup_printf("packet engine: %s: data on VL %d (%s), %s%s", who, prio[j], why[j],
                                               shared > 0 ? "sharing the VL's credits with the other jobs on it"
                                                          : "the VL's credits at every input port its own",
                                               ar));
        }
        g_ptr_array_add(n, NULL);
        g_free(notes);
        notes = (char **)g_ptr_array_free(n, FALSE);
        for (int j = 0; j < m->ntasks; j++)
            g_free(why[j]);
        g_free(why);
        g_free(prio);
        g_free(thr);
    }
    fabric_clear(&fab);
    return notes;
}

const cs_engine_ops_t cs_engine_packet = {
    .name = "packet",
    .description = "packets from the NIC outward: RoCEv2 framing, switch buffers, PFC, ECN, DCQCN, "
                   "go-back-N (docs/model-packet.md)",
    .open = pk_open,
    .predict = pk_predict,
    .close = pk_close,
    .estimate = pk_estimate,
    .estimate_jobs = pk_estimate_jobs,
    .counters = pk_counters,
    .notes = pk_notes,
    .link_stats = pk_link_stats,
    .net_counters = pk_net_counters,
    .fabric = TRUE,
    .timeline = TRUE,
    .run_jobs = pk_run_jobs,
    .notes_jobs = pk_notes_jobs,
};
