/* The fabric's configuration as --model packet runs it: the [fabric]
 * scenario section (collsim-scenario(5)) after parsing, and what follows
 * from it with the NCCL settings (the data's priority from NCCL_IB_TC
 * through the DSCP map). Pure: no I/O; the key table and the parsing of
 * values are in src/io/cs_scenario_fabric.c. Every field has a default
 * (cs_fabric_cfg_init), documented in collsim-scenario(5). */
#ifndef CS_FABRIC_CFG_H
#define CS_FABRIC_CFG_H

#include <glib.h>

#include "models/cs_nccl_env.h"

typedef enum {
    CS_FABRIC_TRUST_DSCP,        /* switches classify by the IP header's DSCP */
    CS_FABRIC_TRUST_PCP,         /* ... by the VLAN tag's priority (NCCL_IB_SL) */
} cs_fabric_trust_t;

typedef enum {
    CS_FABRIC_DCQCN_OFF,
    CS_FABRIC_DCQCN_CONNECTX,    /* ConnectX firmware defaults */
    CS_FABRIC_DCQCN_PAPER,       /* the DCQCN paper's (Zhu'15 at 40G) */
} cs_fabric_dcqcn_t;

typedef enum {
    CS_FABRIC_GO_BACK_N,
    CS_FABRIC_SELECTIVE_REPEAT,
} cs_fabric_recovery_t;

typedef enum {
    CS_FABRIC_RX_AUTO,           /* the NIC's path into its GPU (topology) */
    CS_FABRIC_RX_OFF,            /* packets enter the host as they arrive */
    CS_FABRIC_RX_RATE,           /* nic_rx_bps */
} cs_fabric_rx_t;

/* A switch ASIC's shared packet buffer, from its vendor's public product
 * brief (cs_fabric_cfg.c cites each). */
typedef struct {
    const char *part;            /* "spectrum-4" */
    const char *name;            /* "NVIDIA Spectrum-4 (SN5600)" */
    guint64 buffer;              /* bytes */
} cs_fabric_switch_t;

/* The [fabric] keys, in the order of the key table (for 'set' and 'origin'). */
typedef enum {
    CS_FK_MTU, CS_FK_PFC, CS_FK_TRUST, CS_FK_DSCP_MAP, CS_FK_ROCE_TOS, CS_FK_CNP_DSCP,
    CS_FK_ECN, CS_FK_ECN_KMIN, CS_FK_ECN_KMAX, CS_FK_ECN_PMAX,
    CS_FK_DCQCN, CS_FK_DCQCN_AI, CS_FK_DCQCN_HAI, CS_FK_DCQCN_MIN_RATE, CS_FK_DCQCN_G,
    CS_FK_DCQCN_TIMER, CS_FK_DCQCN_BYTE_COUNTER, CS_FK_DCQCN_F, CS_FK_DCQCN_CNP_GAP,
    CS_FK_DCQCN_RATE_REDUCE, CS_FK_DCQCN_ALPHA_PERIOD, CS_FK_DCQCN_MIN_DEC,
    CS_FK_SWITCH, CS_FK_SWITCH_BUFFER, CS_FK_PFC_ALPHA, CS_FK_PFC_HEADROOM, CS_FK_CABLE,
    CS_FK_WATCHDOG, CS_FK_WATCHDOG_RESTORE,
    CS_FK_NIC_RX_RATE, CS_FK_NIC_RX_BUFFER, CS_FK_STALL_NIC, CS_FK_STALL_AT, CS_FK_STALL_FOR,
    CS_FK_RECOVERY, CS_FK_ACK_EVERY,
    CS_FK_IBCC, CS_FK_IBCC_THRESHOLD, CS_FK_IBCC_MARKING_RATE, CS_FK_IBCC_PACKET_SIZE, CS_FK_IBCC_VICTIM,
    CS_FK_IBCC_CCTI_INCREASE, CS_FK_IBCC_CCTI_TIMER, CS_FK_IBCC_CCTI_LIMIT, CS_FK_IBCC_CCTI_MIN, CS_FK_IBCC_CCT,
    CS_FK_VLARB_HIGH, CS_FK_VLARB_LOW, CS_FK_VLARB_HIGH_LIMIT,
    CS_FK_COUNT
} cs_fabric_key_t;

typedef struct {
    guint32 mtu;                 /* RoCE path MTU: 256 to 4096, a power of 2 */
    guint8 pfc;                  /* lossless priorities (PFC on), bit p */
    cs_fabric_trust_t trust;
    guint8 dscp_prio[64];        /* DSCP -> priority (trust dscp) */
    int roce_tos;                /* the ToS the NIC sends when NCCL_IB_TC is unset */
    int cnp_dscp;                /* CNPs' DSCP (ConnectX CNP_DSCP) */
    gboolean ecn;
    guint64 ecn_kmin, ecn_kmax;  /* bytes; 0: by link rate */
    double ecn_pmax;             /* < 0: by link rate */
    cs_fabric_dcqcn_t dcqcn;
    /* DCQCN parameters over the preset's; < 0: the preset's */
    double dcqcn_ai_bps, dcqcn_hai_bps, dcqcn_min_rate_bps, dcqcn_g, dcqcn_min_dec;
    double dcqcn_timer_s, dcqcn_cnp_gap_s, dcqcn_rate_reduce_s, dcqcn_alpha_period_s;
    gint64 dcqcn_byte_counter;   /* bytes; -1: the preset's; 0: none */
    int dcqcn_f;                 /* -1: the preset's */
    int switch_part;             /* index in cs_fabric_switches(); -1: the buffer rule */
    guint64 switch_buffer;       /* bytes; 0: the part's, else the rule */
    double pfc_alpha;            /* dynamic threshold; <= 0: the MMU's default */
    gint64 pfc_headroom;         /* bytes per lossless PG; -1: the formula */
    double cable_m;              /* < 0: from each link's propagation delay */
    double watchdog_s;           /* 0: no PFC watchdog */
    double watchdog_restore_s;
    cs_fabric_rx_t nic_rx;
    double nic_rx_bps;           /* bits/s, with CS_FABRIC_RX_RATE */
    guint64 nic_rx_buffer;       /* bytes */
    char *stall_nic;             /* NULL: none */
    double stall_at_s, stall_for_s;   /* stall_for < 0: for ever */
    cs_fabric_recovery_t recovery;
    guint32 ack_every;           /* an ACK every n packets (and each message's last) */
    /* InfiniBand congestion control (IBA annex A10, sim/cs_pkt_ibcc.h);
     * off by default as in OpenSM. Each value < 0: the engine's default */
    gboolean ibcc;
    int ibcc_threshold;          /* 0-15 */
    gint64 ibcc_marking_rate, ibcc_packet_size;
    int ibcc_victim;             /* 0/1 */
    gint64 ibcc_ccti_increase, ibcc_ccti_limit, ibcc_ccti_min;
    double ibcc_ccti_timer_s;
    guint32 ibcc_ncct;           /* entries of ibcc_cct; 0: the published table (ofa) */
    guint16 ibcc_cct[128];       /* CCT_Shift << 14 | CCT_Multiplier, OpenSM's shift:multiplier */
    /* VL arbitration of InfiniBand ports (IBA 7.6.9, sim/cs_pkt_port.h):
     * OpenSM's qos_vlarb_high/low entries VL:weight (VL 0-14, weight
     * 0-255 in 64-B units, at most 64) and qos_high_limit (0-255, 4 KB
     * units); each < 0: OpenSM's default (the engine's) */
    int vlarb_nhigh, vlarb_nlow;
    guint8 vlarb_high[64][2], vlarb_low[64][2];   /* {VL, weight} */
    int vlarb_high_limit;
    guint64 set;                 /* bit k: key k was given */
    char *origin[CS_FK_COUNT];   /* where each given key came from ("s.ini:12: pfc") */
    char *text[CS_FK_COUNT];     /* each given key's value as written (to write it back) */
} cs_fabric_cfg_t;

void cs_fabric_cfg_init(cs_fabric_cfg_t *cfg);
void cs_fabric_cfg_clear(cs_fabric_cfg_t *cfg);
void cs_fabric_cfg_copy(cs_fabric_cfg_t *dst, const cs_fabric_cfg_t *src);
/* Where key k came from, for a note in parentheses: "s.ini:12: pfc", or
 * "--pfc" for a flag (its origin "collsim: --pfc" is an error's prefix);
 * NULL when the key was not given. */
const char *cs_fabric_cfg_where(const cs_fabric_cfg_t *cfg, int k);

/* The switch parts known, NULL-terminated (name NULL), and one by part. */
const cs_fabric_switch_t *cs_fabric_switches(void);
int cs_fabric_switch_find(const char *part);

/* The priority the data travels on, with what decided it as a phrase
 * ("NCCL_IB_TC 106: DSCP 26, priority 3 by the DSCP map"). */
int cs_fabric_data_prio(const cs_fabric_cfg_t *cfg, const cs_nccl_settings_t *s, char **why_p);
/* The CNPs' priority. */
int cs_fabric_cnp_prio(const cs_fabric_cfg_t *cfg);
/* Bytes of shared buffer of a switch whose fastest port runs at max_bps,
 * with what decided it ("NVIDIA Spectrum-4 (SN5600)"). */
guint64 cs_fabric_switch_buffer(const cs_fabric_cfg_t *cfg, guint64 max_bps, const char **why_p);
/* Whether any key was given (for engines that ignore the section). */
gboolean cs_fabric_cfg_any(const cs_fabric_cfg_t *cfg);

#endif
