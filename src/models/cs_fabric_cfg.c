/* The fabric's configuration (see cs_fabric_cfg.h). */
#include "config.h"

#include <string.h>

#include "models/cs_fabric_cfg.h"

/* Shared packet buffers from the vendors' public product briefs (MB read
 * as 10^6 B, as the HPCC buffer rule does; the briefs do not say, 2^20
 * would give 4.9% more). */
static const cs_fabric_switch_t switches[] = {
    { "trident-2", "Broadcom Trident II (BCM56850)", 12000000 },      /* DCQCN paper, SIGCOMM'15 section 2 */
    { "trident-3", "Broadcom Trident 3 (BCM56870)", 32000000 },       /* Broadcom BCM56870 brief */
    { "trident-4", "Broadcom Trident 4 (BCM56880)", 132000000 },      /* Broadcom BCM56880 brief */
    { "tomahawk", "Broadcom Tomahawk (BCM56960)", 16000000 },         /* Broadcom BCM56960 brief */
    { "tomahawk-2", "Broadcom Tomahawk 2 (BCM56970)", 22000000 },     /* Broadcom BCM56970 brief */
    { "tomahawk-3", "Broadcom Tomahawk 3 (BCM56980)", 64000000 },     /* Broadcom BCM56980 brief */
    { "tomahawk-4", "Broadcom Tomahawk 4 (BCM56990)", 113000000 },    /* Broadcom BCM56990 brief */
    { "tomahawk-5", "Broadcom Tomahawk 5 (BCM78900)", 165200000 },    /* Broadcom BCM78900 brief */
    { "spectrum", "NVIDIA Spectrum (SN2700)", 16000000 },             /* Mellanox SN2700 brief */
    { "spectrum-2", "NVIDIA Spectrum-2 (SN3700)", 42000000 },         /* Mellanox SN3000 series brief */
    { "spectrum-3", "NVIDIA Spectrum-3 (SN4700)", 64000000 },         /* NVIDIA SN4000 series brief */
    { "spectrum-4", "NVIDIA Spectrum-4 (SN5600)", 160000000 },        /* NVIDIA SN5000 series brief */
    { NULL, NULL, 0 },
};

const cs_fabric_switch_t *cs_fabric_switches(void)
{
    return switches;
}

int cs_fabric_switch_find(const char *part)
{
    for (int i = 0; switches[i].part != NULL; i++)
        if (g_ascii_strcasecmp(switches[i].part, part) == 0)
            return i;
    return -1;
}

void cs_fabric_cfg_init(cs_fabric_cfg_t *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->mtu = 4096;
    /* RoCE on priority 3, CNPs on 6: NVIDIA's lossless RoCE default
     * (fabric-models.md sections 2 and 6, [CUM]) */
    cfg->pfc = 1u << 3;
    cfg->trust = CS_FABRIC_TRUST_DSCP;
    /* trust dscp's default map: the class selector, DSCP / 8 (Spectrum's
     * and most switches'; DSCP 26 -> 3, 48 -> 6) */
    for (int d = 0; d < 64; d++)
        cfg->dscp_prio[d] = (guint8)(d >> 3);
    /* ToS 106 = DSCP 26 with ECT(0): the RoCE class NVIDIA's RoCE
     * configuration gives the NIC (fabric-models.md section 6) */
    cfg->roce_tos = 106;
    cfg->cnp_dscp = 48;         /* ConnectX CNP_DSCP (fabric-models.md section 1) */
    cfg->ecn = TRUE;
    cfg->ecn_pmax = -1;
    /* DCQCN's ConnectX preset under-used a 2:1 incast when the engine
     * came (docs/model-packet.md): off unless asked for */
    cfg->dcqcn = CS_FABRIC_DCQCN_OFF;
    cfg->dcqcn_ai_bps = cfg->dcqcn_hai_bps = cfg->dcqcn_min_rate_bps = cfg->dcqcn_g = cfg->dcqcn_min_dec = -1;
    cfg->dcqcn_timer_s = cfg->dcqcn_cnp_gap_s = cfg->dcqcn_rate_reduce_s = cfg->dcqcn_alpha_period_s = -1;
    cfg->dcqcn_byte_counter = -1;
    cfg->dcqcn_f = -1;
    cfg->switch_part = -1;
    cfg->pfc_headroom = -1;
    cfg->cable_m = -1;
    cfg->watchdog_restore_s = 0.2;  /* a stormed queue recovers 200 ms after the last pause (see collsim-scenario(5)) */
    /* the rule: a NIC delivers into its host at its PCIe path's
     * rate, so a slow receive path backs up into the NIC's buffer */
    cfg->nic_rx = CS_FABRIC_RX_AUTO;
    /* ConnectX's receive buffer per port as mlnx_qos reports it
     * (fabric-models.md section 3) */
    cfg->nic_rx_buffer = 156096;
    cfg->stall_for_s = -1;
    cfg->recovery = CS_FABRIC_GO_BACK_N;
    cfg->ack_every = 1;
    /* IB CC off, as OpenSM ships it (congestion_control FALSE, every
     * value 0: linux-rdma/opensm osm_subnet.c) */
    cfg->ibcc = FALSE;
    cfg->ibcc_threshold = cfg->ibcc_victim = -1;
    cfg->ibcc_marking_rate = cfg->ibcc_packet_size = -1;
    cfg->ibcc_ccti_increase = cfg->ibcc_ccti_limit = cfg->ibcc_ccti_min = -1;
    cfg->ibcc_ccti_timer_s = -1;
    cfg->vlarb_nhigh = cfg->vlarb_nlow = cfg->vlarb_high_limit = -1;
}

void cs_fabric_cfg_clear(cs_fabric_cfg_t *cfg)
{
    g_free(cfg->stall_nic);
    for (int k = 0; k < CS_FK_COUNT; k++) {
        g_free(cfg->origin[k]);
        g_free(cfg->text[k]);
    }
    memset(cfg, 0, sizeof *cfg);
}

void cs_fabric_cfg_copy(cs_fabric_cfg_t *dst, const cs_fabric_cfg_t *src)
{
    *dst = *src;
    dst->stall_nic = g_strdup(src->stall_nic);
    for (int k = 0; k < CS_FK_COUNT; k++) {
        dst->origin[k] = g_strdup(src->origin[k]);
        dst->text[k] = g_strdup(src->text[k]);
    }
}

const char *cs_fabric_cfg_where(const cs_fabric_cfg_t *cfg, int k)
{
    const char *o = cfg->origin[k];
    return o != NULL && g_str_has_prefix(o, "collsim: ") ? o + strlen("collsim: ") : o;
}

gboolean cs_fabric_cfg_any(const cs_fabric_cfg_t *cfg)
{
    return cfg->set != 0;
}

int cs_fabric_data_prio(const cs_fabric_cfg_t *cfg, const cs_nccl_settings_t *s, char **why_p)
{
    int prio;
    char *why;
    if (cfg->trust == CS_FABRIC_TRUST_PCP) {
        /* the VLAN priority is the QP's service level (NCCL_IB_SL, 0 by
         * default, net_ib/common.cc) */
        int sl = s->ib_sl >= 0 ? s->ib_sl : 0;
        prio = sl & 7;
        why = g_strdup_printf("NCCL_IB_SL %d%s: VLAN priority %d (trust pcp)", sl, s->ib_sl >= 0 ? "" : " (unset)",
                              prio);
    } else {
        /* NCCL_IB_TC is the whole ToS byte: DSCP = ToS >> 2 */
        int tos = s->ib_tc >= 0 ? s->ib_tc : cfg->roce_tos;
        prio = cfg->dscp_prio[tos >> 2];
        why = s->ib_tc >= 0
            ? g_strdup_printf("NCCL_IB_TC %d: DSCP %d, priority %d by the DSCP map", tos, tos >> 2, prio)
            : g_strdup_printf("NCCL_IB_TC unset: the NIC's ToS %d (roce-tos), DSCP %d, priority %d by the DSCP map",
                              tos, tos >> 2, prio);
    }
    if (why_p != NULL)
        *why_p = why;
    else
        g_free(why);
    return prio;
}

int cs_fabric_cnp_prio(const cs_fabric_cfg_t *cfg)
{
    /* trust pcp: ConnectX CNP_802P_PRIO 6 (fabric-models.md section 1) */
    return cfg->trust == CS_FABRIC_TRUST_PCP ? 6 : cfg->dscp_prio[cfg->cnp_dscp];
}

guint64 cs_fabric_switch_buffer(const cs_fabric_cfg_t *cfg, guint64 max_bps, const char **why_p)
{
    if (cfg->switch_buffer > 0) {
        *why_p = "switch-buffer";
        return cfg->switch_buffer;
    }
    if (cfg->switch_part >= 0) {
        *why_p = switches[cfg->switch_part].name;
        return switches[cfg->switch_part].buffer;
    }
    /* 16 MB per 50 Gb/s of its fastest port (the HPCC ns-3 fork's run.py
     * rule, fabric-models.md section 9) */
    *why_p = "16 MB per 50 Gb/s of its fastest port";
    return (guint64)(16e6 * ((double)max_bps / 50e9));
}
