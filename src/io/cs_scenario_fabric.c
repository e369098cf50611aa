/* The [fabric] section's keys and their values (collsim-scenario(5)):
 * what --model packet's network is, each key also a flag (collsim run
 * --help-fabric). Parsed into cs_fabric_cfg_t (models/cs_fabric_cfg.h);
 * errors are "what; expected" without a prefix, as cs_scenario_set's. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "io/cs_scenario-int.h"
#include "util/cs_error.h"
#include "util/cs_units.h"

/* In the order of cs_fabric_key_t. The flag is the key. */
const cs_scenario_key_t cs_fabric_keys[] = {
    { "fabric", "mtu", 0, "mtu", NULL, "BYTES", "RoCE path MTU: 256, 512, 1024, 2048 or 4096 (default: 4096)" },
    { "fabric", "pfc", 0, "pfc", NULL, "PRIOS", "Lossless priorities with PFC, e.g. 3 or 3,4, or none (default: 3)" },
    { "fabric", "trust", 0, "trust", NULL, "dscp|pcp", "What switches classify by: the DSCP (NCCL_IB_TC) or the VLAN priority (NCCL_IB_SL) (default: dscp)" },
    { "fabric", "dscp-map", 0, "dscp-map", NULL, "D:P,...", "DSCP-to-priority entries over the default DSCP / 8, e.g. 26:3,48:6" },
    { "fabric", "roce-tos", 0, "roce-tos", NULL, "TOS", "ToS byte the NIC sends when NCCL_IB_TC is unset (default: 106, DSCP 26)" },
    { "fabric", "cnp-dscp", 0, "cnp-dscp", NULL, "DSCP", "DSCP of the CNPs (default: 48, priority 6)" },
    { "fabric", "ecn", 0, "ecn", NULL, "on|off", "Switches mark ECN (RED at egress) (default: on)" },
    { "fabric", "ecn-kmin", 0, "ecn-kmin", NULL, "SIZE", "Queue below which nothing is marked (default: by link rate)" },
    { "fabric", "ecn-kmax", 0, "ecn-kmax", NULL, "SIZE", "Queue at which marking reaches ecn-pmax (default: by link rate)" },
    { "fabric", "ecn-pmax", 0, "ecn-pmax", NULL, "P", "Marking probability at ecn-kmax, above 0 to 1 (default: by link rate)" },
    { "fabric", "dcqcn", 0, "dcqcn", NULL, "off|connectx|paper", "DCQCN on the QPs: ConnectX's defaults or the DCQCN paper's (default: off)" },
    { "fabric", "dcqcn-ai", 0, "dcqcn-ai", NULL, "RATE", "DCQCN additive increase step, e.g. 5Mb/s" },
    { "fabric", "dcqcn-hai", 0, "dcqcn-hai", NULL, "RATE", "DCQCN hyper increase step" },
    { "fabric", "dcqcn-min-rate", 0, "dcqcn-min-rate", NULL, "RATE", "DCQCN's lowest rate" },
    { "fabric", "dcqcn-g", 0, "dcqcn-g", NULL, "G", "DCQCN alpha gain, above 0 to 1 (e.g. 1/256 as 0.00390625)" },
    { "fabric", "dcqcn-timer", 0, "dcqcn-timer", NULL, "TIME", "DCQCN rate increase timer, e.g. 300us" },
    { "fabric", "dcqcn-byte-counter", 0, "dcqcn-byte-counter", NULL, "SIZE", "DCQCN rate increase byte counter (0: none)" },
    { "fabric", "dcqcn-f", 0, "dcqcn-f", NULL, "N", "DCQCN fast recovery stages" },
    { "fabric", "dcqcn-cnp-gap", 0, "dcqcn-cnp-gap", NULL, "TIME", "Least time between two CNPs of a QP" },
    { "fabric", "dcqcn-rate-reduce-period", 0, "dcqcn-rate-reduce-period", NULL, "TIME", "Least time between two rate cuts" },
    { "fabric", "dcqcn-alpha-period", 0, "dcqcn-alpha-period", NULL, "TIME", "DCQCN alpha update period" },
    { "fabric", "dcqcn-min-dec", 0, "dcqcn-min-dec", NULL, "F", "A cut leaves at least this fraction of the rate, 0 to below 1" },
    { "fabric", "switch", 0, "switch", NULL, "PART", "Switch ASIC whose shared buffer the switches have, e.g. spectrum-4, tomahawk-5" },
    { "fabric", "switch-buffer", 0, "switch-buffer", NULL, "SIZE", "Shared buffer of each switch (over --switch; default: 16 MB per 50 Gb/s of its fastest port)" },
    { "fabric", "pfc-alpha", 0, "pfc-alpha", NULL, "A", "Dynamic threshold factor of the shared buffer (default: 1/8 as 0.125)" },
    { "fabric", "pfc-headroom", 0, "pfc-headroom", NULL, "auto|SIZE", "Headroom per lossless priority of each port (default: auto, the formula)" },
    { "fabric", "cable-length", 0, "cable-length", NULL, "METRES", "Cable length for the headroom formula (default: from each link's latency)" },
    { "fabric", "pfc-watchdog", 0, "pfc-watchdog", NULL, "off|TIME", "PFC watchdog: a queue paused this long ignores pauses and drops (default: off)" },
    { "fabric", "pfc-watchdog-restore", 0, "pfc-watchdog-restore", NULL, "TIME", "A stormed queue recovers when no pause came for this long (default: 200ms)" },
    { "fabric", "nic-rx-rate", 0, "nic-rx-rate", NULL, "auto|off|RATE", "Rate at which a NIC drains into its host: auto (its PCIe link), off (at once) or a rate (default: auto)" },
    { "fabric", "nic-rx-buffer", 0, "nic-rx-buffer", NULL, "SIZE", "NIC receive buffer (default: 156096 B)" },
    { "fabric", "stall-nic", 0, "stall-nic", NULL, "NIC", "A NIC whose receive path stops draining (a PFC storm), e.g. n1.nic0" },
    { "fabric", "stall-at", 0, "stall-at", NULL, "TIME", "When stall-nic stops draining (default: 0)" },
    { "fabric", "stall-for", 0, "stall-for", NULL, "TIME", "How long it stays stopped (default: for ever)" },
    { "fabric", "recovery", 0, "recovery", NULL, "go-back-n|selective-repeat", "Loss recovery of the QPs (default: go-back-n)" },
    { "fabric", "ack-every", 0, "ack-every", NULL, "N", "The receiver ACKs every N packets and each message's last (default: 1)" },
    { "fabric", "ibcc", 0, "ibcc", NULL, "on|off", "InfiniBand congestion control (IBA annex A10: FECN, BECN, CCTI) (default: off, as OpenSM)" },
    { "fabric", "ibcc-threshold", 0, "ibcc-threshold", NULL, "0-15", "IB CC: switch ports mark FECN above (16 - T)/16 of a VL's input buffer; 0 never (default: 15)" },
    { "fabric", "ibcc-marking-rate", 0, "ibcc-marking-rate", NULL, "N", "IB CC: eligible packets left unmarked between two FECN marks (default: 0, every one)" },
    { "fabric", "ibcc-packet-size", 0, "ibcc-packet-size", NULL, "CREDITS", "IB CC: packets smaller than this many 64-B credits are never marked (default: 0)" },
    { "fabric", "ibcc-victim-mask", 0, "ibcc-victim-mask", NULL, "on|off", "IB CC: ports congested for lack of credits (victims) mark too (default: off)" },
    { "fabric", "ibcc-ccti-increase", 0, "ibcc-ccti-increase", NULL, "N", "IB CC: CCTI added per BECN (default: 1)" },
    { "fabric", "ibcc-ccti-timer", 0, "ibcc-ccti-timer", NULL, "N|TIME", "IB CC: CCTI drops by 1 every N x 1.024 us, or every TIME (default: 10, 10.24 us)" },
    { "fabric", "ibcc-ccti-limit", 0, "ibcc-ccti-limit", NULL, "N", "IB CC: the highest CCTI, below the table's entries (default: the table's last)" },
    { "fabric", "ibcc-ccti-min", 0, "ibcc-ccti-min", NULL, "N", "IB CC: the lowest CCTI (default: 0)" },
    { "fabric", "ibcc-cct", 0, "ibcc-cct", NULL, "ofa|S:M,...", "IB CC: congestion control table, OpenSM's shift:multiplier list, or ofa, the published 128-entry table (default: ofa)" },
    { "fabric", "vlarb-high", 0, "vlarb-high", NULL, "VL:W,...", "InfiniBand VL arbitration: the high-priority table, OpenSM's qos_vlarb_high, weights in 64-B units (default: 0:4, OpenSM's)" },
    { "fabric", "vlarb-low", 0, "vlarb-low", NULL, "VL:W,...", "InfiniBand VL arbitration: the low-priority table, OpenSM's qos_vlarb_low (default: 0:0,1:4,...,14:4, OpenSM's)" },
    { "fabric", "vlarb-high-limit", 0, "vlarb-high-limit", NULL, "0-255", "InfiniBand VL arbitration: 4 KB units of high-priority packets before a low-priority one may go; 0 one packet, 255 no limit (default: 0, OpenSM's)" },
    { NULL, NULL, 0, NULL, NULL, NULL, NULL }
};

G_STATIC_ASSERT(G_N_ELEMENTS(cs_fabric_keys) == CS_FK_COUNT + 1);

static int key_index(const char *key)
{
    for (int k = 0; k < CS_FK_COUNT; k++)
        if (strcmp(cs_fabric_keys[k].key, key) == 0)
            return k;
    return -1;
}

static gboolean bad(GError **err, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static gboolean bad(GError **err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *m = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error_literal(err, CS_ERROR, CS_ERROR_INPUT, m);
    return FALSE;
}

/* "3", "3,4", "none" -> bit mask */
static gboolean parse_prios(const char *v, guint8 *mask_p)
{
    if (g_ascii_strcasecmp(v, "none") == 0) {
        *mask_p = 0;
        return TRUE;
    }
    g_auto(GStrv) parts = g_strsplit(v, ",", -1);
    guint8 m = 0;
    for (int i = 0; parts[i] != NULL; i++) {
        gint64 p;
        if (!cs_parse_int(g_strstrip(parts[i]), 0, 7, &p) || (m & (1u << p)) != 0)   /* "3,3": a typo */
            return FALSE;
        m |= (guint8)(1u << p);
    }
    if (m == 0)
        return FALSE;
    *mask_p = m;
    return TRUE;
}

/* "26:3,48:6" over the default map DSCP / 8 (not over an earlier value:
 * the last value given is the map, as --dump writes it back) */
static gboolean parse_dscp_map(const char *v, guint8 map[64], GError **err)
{
    g_auto(GStrv) parts = g_strsplit(v, ",", -1);
    guint8 m[64];
    for (int d = 0; d < 64; d++)
        m[d] = (guint8)(d >> 3);
    int n = 0;
    guint64 given = 0;
    for (int i = 0; parts[i] != NULL; i++) {
        char *e = g_strstrip(parts[i]);
        char *colon = strchr(e, ':');
        gint64 d, p;
        if (colon == NULL)
            return bad(err, "'%s' is not a DSCP:PRIORITY entry; expected entries such as 26:3,48:6", e);
        *colon = '\0';
        if (!cs_parse_int(g_strstrip(e), 0, 63, &d) || !cs_parse_int(g_strstrip(colon + 1), 0, 7, &p))
            return bad(err, "'%s:%s' is not a DSCP:PRIORITY entry; expected a DSCP 0 to 63, a priority 0 to 7",
                       e, colon + 1);
        if (given & (G_GUINT64_CONSTANT(1) << d))
            return bad(err, "DSCP %d is mapped twice; expected each DSCP once", (int)d);
        given |= G_GUINT64_CONSTANT(1) << d;
        m[d] = (guint8)p;
        n++;
    }
    if (n == 0)
        return bad(err, "the map is empty; expected entries such as 26:3,48:6");
    memcpy(map, m, sizeof m);
    return TRUE;
}

static gboolean parse_rate_bps(const char *v, double *bps_p)
{
    double bytes_per_s;
    if (!cs_parse_bandwidth(v, &bytes_per_s) || !isfinite(bytes_per_s) || bytes_per_s * 8 < 1e3 ||
        bytes_per_s * 8 > 1e13)
        return FALSE;
    *bps_p = bytes_per_s * 8;
    return TRUE;
}

/* A time with its unit: a bare number other than 0 is refused, as it
 * would be seconds (--stall-at 20 stalled a NIC 20 s into a run of 500
 * us, silently). */
static gboolean parse_seconds(const char *v, double max, double *s_p)
{
    double s, bare;
    if (!cs_parse_time(v, &s) || !isfinite(s) || s > max || (s != 0 && cs_parse_double(v, &bare)))
        return FALSE;
    *s_p = s;
    return TRUE;
}

static gboolean parse_fraction(const char *v, gboolean zero_ok, gboolean one_ok, double *f_p)
{
    double f;
    if (!cs_parse_double(v, &f) || !isfinite(f) || f < 0 || (f == 0 && !zero_ok) || f > 1 || (f == 1 && !one_ok))
        return FALSE;
    *f_p = f;
    return TRUE;
}

/* "ofa" (the published table: ncct 0) or OpenSM's cc_cct format,
 * shift:multiplier entries separated by commas, at most 128; shift 0-3,
 * multiplier 0-16383 (the CCT entry's 2 and 14 bits, ib_types.h). */
static gboolean parse_cct(const char *v, cs_fabric_cfg_t *c, GError **err)
{
    if (g_ascii_strcasecmp(v, "ofa") == 0) {
        c->ibcc_ncct = 0;
        return TRUE;
    }
    if (*v == '\0')
        return bad(err, "an empty table; expected ofa or entries such as 0:0,0:1,0:2");
    g_auto(GStrv) parts = g_strsplit(v, ",", -1);
    guint16 t[128];
    guint32 n = 0;
    for (int i = 0; parts[i] != NULL; i++) {
        char *e = g_strstrip(parts[i]);
        char *colon = strchr(e, ':');
        gint64 sh, mu;
        if (n == 128)
            return bad(err, "the table has more than 128 entries; expected at most 128 (OpenSM's)");
        if (colon == NULL)
            return bad(err, "'%s' is not a SHIFT:MULTIPLIER entry; expected ofa or entries such as 0:0,0:1,0:2", e);
        *colon = '\0';
        if (!cs_parse_int_base(g_strstrip(e), 0, 0, 3, &sh) || !cs_parse_int_base(g_strstrip(colon + 1), 0, 0, 16383, &mu))
            return bad(err, "'%s:%s' is not a SHIFT:MULTIPLIER entry; expected a shift 0 to 3 and a multiplier 0 "
                       "to 16383", e, colon + 1);
        t[n++] = (guint16)(sh << 14 | mu);
    }
    memcpy(c->ibcc_cct, t, sizeof t[0] * n);
    c->ibcc_ncct = n;
    return TRUE;
}

/* OpenSM's qos_vlarb_high/low format (osm_subnet.c subn_verify_vlarb):
 * VL:weight entries separated by commas, VL 0-14, weight 0-255, at most
 * 64 (a port's table; OpenSM drops the excess, here refused). */
static gboolean parse_vlarb(const char *v, guint8 t[64][2], int *n_p, GError **err)
{
    if (*v == '\0')
        return bad(err, "an empty table; expected entries VL:WEIGHT such as 0:4,1:4");
    g_auto(GStrv) parts = g_strsplit(v, ",", -1);
    guint8 e[64][2];
    int n = 0;
    for (int i = 0; parts[i] != NULL; i++) {
        char *x = g_strstrip(parts[i]);
        char *colon = strchr(x, ':');
        gint64 vl, w;
        if (n == 64)
            return bad(err, "the table has more than 64 entries; expected at most 64 (a port's table)");
        if (colon == NULL)
            return bad(err, "'%s' is not a VL:WEIGHT entry; expected entries such as 0:4,1:4", x);
        *colon = '\0';
        if (!cs_parse_int_base(g_strstrip(x), 0, 0, 14, &vl) || !cs_parse_int_base(g_strstrip(colon + 1), 0, 0, 255, &w))
            return bad(err, "'%s:%s' is not a VL:WEIGHT entry; expected a data VL 0 to 14 and a weight 0 to 255",
                       x, colon + 1);
        e[n][0] = (guint8)vl;
        e[n][1] = (guint8)w;
        n++;
    }
    memcpy(t, e, sizeof e[0] * n);
    *n_p = n;
    return TRUE;
}

#define MAX_TIME_S 3600.0           /* a simulated hour: beyond any run */
#define MAX_BUFFER ((guint64)1 << 40)

static gboolean set_value(cs_fabric_cfg_t *c, int k, const char *v, GError **err)
{
    gint64 n;
    guint64 sz;
    double x;
    gboolean on;
    switch ((cs_fabric_key_t)k) {
    case CS_FK_MTU:
        if (!cs_parse_int(v, 256, 4096, &n) || (n & (n - 1)) != 0)
            return bad(err, "'%s' is not an RDMA path MTU (RoCE or InfiniBand); expected 256, 512, 1024, 2048 or 4096", v);
        c->mtu = (guint32)n;
        return TRUE;
    case CS_FK_PFC:
        if (!parse_prios(v, &c->pfc))
            return bad(err, "'%s' is not a list of priorities; expected distinct priorities 0 to 7 such as 3 or 3,4, or none", v);
        return TRUE;
    case CS_FK_TRUST:
        if (g_ascii_strcasecmp(v, "dscp") == 0)
            c->trust = CS_FABRIC_TRUST_DSCP;
        else if (g_ascii_strcasecmp(v, "pcp") == 0)
            c->trust = CS_FABRIC_TRUST_PCP;
        else
            return bad(err, "'%s' is not a trust mode; expected dscp or pcp", v);
        return TRUE;
    case CS_FK_DSCP_MAP:
        return parse_dscp_map(v, c->dscp_prio, err);
    case CS_FK_ROCE_TOS:
        if (!cs_parse_int_base(v, 0, 0, 255, &n))
            return bad(err, "'%s' is not a ToS byte; expected 0 to 255 (DSCP x 4 + ECN, e.g. 106)", v);
        c->roce_tos = (int)n;
        return TRUE;
    case CS_FK_CNP_DSCP:
        if (!cs_parse_int(v, 0, 63, &n))
            return bad(err, "'%s' is not a DSCP; expected 0 to 63", v);
        c->cnp_dscp = (int)n;
        return TRUE;
    case CS_FK_ECN:
        if (!cs_scenario_parse_bool(v, &c->ecn))
            return bad(err, "'%s' is not on or off; expected on or off (true, false, yes, no, 1, 0)", v);
        return TRUE;
    case CS_FK_ECN_KMIN:
    case CS_FK_ECN_KMAX:
        if (!cs_parse_size(v, &sz) || sz == 0 || sz > MAX_BUFFER)
            return bad(err, "'%s' is not a queue size; expected a size from 1 byte to 1T, such as 150K", v);
        *(k == CS_FK_ECN_KMIN ? &c->ecn_kmin : &c->ecn_kmax) = sz;
        return TRUE;
    case CS_FK_ECN_PMAX:
        if (!parse_fraction(v, FALSE, TRUE, &c->ecn_pmax))
            return bad(err, "'%s' is not a probability; expected a number above 0 and at most 1", v);
        return TRUE;
    case CS_FK_DCQCN:
        if (g_ascii_strcasecmp(v, "connectx") == 0)
            c->dcqcn = CS_FABRIC_DCQCN_CONNECTX;
        else if (g_ascii_strcasecmp(v, "paper") == 0)
            c->dcqcn = CS_FABRIC_DCQCN_PAPER;
        else if (cs_scenario_parse_bool(v, &on) && !on)
            c->dcqcn = CS_FABRIC_DCQCN_OFF;
        else
            return bad(err, "'%s' is not a DCQCN setting; expected off, connectx or paper", v);
        return TRUE;
    case CS_FK_DCQCN_AI:
    case CS_FK_DCQCN_HAI:
    case CS_FK_DCQCN_MIN_RATE:
        if (!parse_rate_bps(v, &x))
            return bad(err, "'%s' is not a rate; expected a rate from 1Kb/s to 10Tb/s such as 5Mb/s", v);
        *(k == CS_FK_DCQCN_AI ? &c->dcqcn_ai_bps : k == CS_FK_DCQCN_HAI ? &c->dcqcn_hai_bps : &c->dcqcn_min_rate_bps) = x;
        return TRUE;
    case CS_FK_DCQCN_G:
        if (!parse_fraction(v, FALSE, TRUE, &c->dcqcn_g))
            return bad(err, "'%s' is not a gain; expected a number above 0 and at most 1, such as 0.00390625", v);
        return TRUE;
    case CS_FK_DCQCN_MIN_DEC:
        if (!parse_fraction(v, TRUE, FALSE, &c->dcqcn_min_dec))
            return bad(err, "'%s' is not a fraction; expected a number from 0 to below 1, such as 0.5", v);
        return TRUE;
    case CS_FK_DCQCN_TIMER:
    case CS_FK_DCQCN_ALPHA_PERIOD:
        if (!parse_seconds(v, 10, &x) || x < 1e-9)
            return bad(err, "'%s' is not a period; expected a time with its unit from 1ns to 10s, such as 55us", v);
        *(k == CS_FK_DCQCN_TIMER ? &c->dcqcn_timer_s : &c->dcqcn_alpha_period_s) = x;
        return TRUE;
    case CS_FK_DCQCN_CNP_GAP:
    case CS_FK_DCQCN_RATE_REDUCE:
        if (!parse_seconds(v, 10, &x))
            return bad(err, "'%s' is not a time; expected a time with its unit from 0 to 10s, such as 4us", v);
        *(k == CS_FK_DCQCN_CNP_GAP ? &c->dcqcn_cnp_gap_s : &c->dcqcn_rate_reduce_s) = x;
        return TRUE;
    case CS_FK_DCQCN_BYTE_COUNTER:
        if (!cs_parse_size(v, &sz) || sz > MAX_BUFFER)
            return bad(err, "'%s' is not a byte count; expected a size from 0 to 1T, such as 10M", v);
        c->dcqcn_byte_counter = (gint64)sz;
        return TRUE;
    case CS_FK_DCQCN_F:
        if (!cs_parse_int(v, 0, 1000, &n))
            return bad(err, "'%s' is not a stage count; expected a whole number from 0 to 1000", v);
        c->dcqcn_f = (int)n;
        return TRUE;
    case CS_FK_SWITCH: {
        int i = cs_fabric_switch_find(v);
        if (i < 0) {
            g_autoptr(GString) names = g_string_new(NULL);
            for (const cs_fabric_switch_t *w = cs_fabric_switches(); w->part != NULL; w++)
                g_string_append_printf(names, "%s%s", names->len ? ", " : "", w->part);
            return bad(err, "unknown switch part '%s'; expected one of %s", v, names->str);
        }
        c->switch_part = i;
        return TRUE;
    }
    case CS_FK_SWITCH_BUFFER:
        if (!cs_parse_size(v, &sz) || sz < 65536 || sz > MAX_BUFFER)
            return bad(err, "'%s' is not a switch buffer; expected a size from 64K to 1T, such as 64M", v);
        c->switch_buffer = sz;
        return TRUE;
    case CS_FK_PFC_ALPHA:
        if (!cs_parse_double(v, &x) || !isfinite(x) || x < 1.0 / 1024 || x > 1024)
            return bad(err, "'%s' is not a dynamic threshold factor; expected a number from 1/1024 to 1024, such as 0.125", v);
        c->pfc_alpha = x;
        return TRUE;
    case CS_FK_PFC_HEADROOM:
        if (g_ascii_strcasecmp(v, "auto") == 0) {
            c->pfc_headroom = -1;
        } else {
            if (!cs_parse_size(v, &sz) || sz > MAX_BUFFER)
                return bad(err, "'%s' is not a headroom; expected auto or a size from 0 to 1T, such as 64K", v);
            c->pfc_headroom = (gint64)sz;
        }
        return TRUE;
    case CS_FK_CABLE:
        if (!cs_parse_double(v, &x) || !isfinite(x) || x < 0 || x > 100000)
            return bad(err, "'%s' is not a cable length; expected metres from 0 to 100000, such as 30", v);
        c->cable_m = x;
        return TRUE;
    case CS_FK_WATCHDOG:
        if (cs_scenario_parse_bool(v, &on) && !on) {
            c->watchdog_s = 0;
            return TRUE;
        }
        if (!parse_seconds(v, MAX_TIME_S, &x) || x < 1e-9)
            return bad(err, "'%s' is not a watchdog time; expected off or a time with its unit from 1ns to 3600s, such as 100ms", v);
        c->watchdog_s = x;
        return TRUE;
    case CS_FK_WATCHDOG_RESTORE:
        if (!parse_seconds(v, MAX_TIME_S, &x))
            return bad(err, "'%s' is not a time; expected a time with its unit from 0 to 3600s, such as 200ms", v);
        c->watchdog_restore_s = x;
        return TRUE;
    case CS_FK_NIC_RX_RATE:
        if (g_ascii_strcasecmp(v, "auto") == 0)
            c->nic_rx = CS_FABRIC_RX_AUTO;
        else if (g_ascii_strcasecmp(v, "off") == 0)
            c->nic_rx = CS_FABRIC_RX_OFF;
        else if (parse_rate_bps(v, &c->nic_rx_bps))
            c->nic_rx = CS_FABRIC_RX_RATE;
        else
            return bad(err, "'%s' is not a receive rate; expected auto, off or a rate such as 200Gb/s", v);
        return TRUE;
    case CS_FK_NIC_RX_BUFFER:
        if (!cs_parse_size(v, &sz) || sz < 4096 || sz > MAX_BUFFER)
            return bad(err, "'%s' is not a NIC buffer; expected a size from 4K to 1T, such as 256K", v);
        c->nic_rx_buffer = sz;
        return TRUE;
    case CS_FK_STALL_NIC:
        if (*v == '\0' || !g_utf8_validate(v, -1, NULL) || strpbrk(v, " \t\r\n") != NULL)
            return bad(err, "'%s' is not a device name; expected a NIC of the topology such as n1.nic0", v);
        g_free(c->stall_nic);
        c->stall_nic = g_strdup(v);
        return TRUE;
    case CS_FK_STALL_AT:
    case CS_FK_STALL_FOR:
        if (!parse_seconds(v, MAX_TIME_S, &x))
            return bad(err, "'%s' is not a time; expected a time with its unit from 0 to 3600s, such as 20us", v);
        /* a stall of no length is none: the engine's clock counts
         * picoseconds, so a stall shorter than one is refused */
        if (k == CS_FK_STALL_FOR && x < 1e-12)
            return bad(err, "'%s' stops the NIC for no time; expected a time above 0 (at least 1ps) up to 3600s, "
                       "such as 500us, or no stall-for (for ever)", v);
        *(k == CS_FK_STALL_AT ? &c->stall_at_s : &c->stall_for_s) = x;
        return TRUE;
    case CS_FK_RECOVERY:
        if (g_ascii_strcasecmp(v, "go-back-n") == 0)
            c->recovery = CS_FABRIC_GO_BACK_N;
        else if (g_ascii_strcasecmp(v, "selective-repeat") == 0)
            c->recovery = CS_FABRIC_SELECTIVE_REPEAT;
        else
            return bad(err, "'%s' is not a recovery; expected go-back-n or selective-repeat", v);
        return TRUE;
    case CS_FK_ACK_EVERY:
        if (!cs_parse_int(v, 1, 65536, &n))
            return bad(err, "'%s' is not a packet count; expected a whole number from 1 to 65536", v);
        c->ack_every = (guint32)n;
        return TRUE;
    case CS_FK_IBCC:
        if (!cs_scenario_parse_bool(v, &c->ibcc))
            return bad(err, "'%s' is not on or off; expected on or off (true, false, yes, no, 1, 0)", v);
        return TRUE;
    case CS_FK_IBCC_THRESHOLD:
        if (!cs_parse_int_base(v, 0, 0, 15, &n))
            return bad(err, "'%s' is not a congestion threshold; expected 0 to 15 (0x0 to 0xf)", v);
        c->ibcc_threshold = (int)n;
        return TRUE;
    case CS_FK_IBCC_VICTIM:
        if (!cs_scenario_parse_bool(v, &on))
            return bad(err, "'%s' is not on or off; expected on or off (true, false, yes, no, 1, 0)", v);
        c->ibcc_victim = on;
        return TRUE;
    case CS_FK_IBCC_MARKING_RATE:
    case CS_FK_IBCC_PACKET_SIZE:
    case CS_FK_IBCC_CCTI_INCREASE:
    case CS_FK_IBCC_CCTI_LIMIT:
    case CS_FK_IBCC_CCTI_MIN: {
        /* the fields' widths in the MADs (ib_types.h): Marking_Rate 16
         * bits, Packet_Size 8, CCTI_Increase 8, CCTI_Limit and CCTI_Min
         * up to OpenSM's 128-entry table */
        gint64 max = k == CS_FK_IBCC_MARKING_RATE ? 65535 : k == CS_FK_IBCC_PACKET_SIZE || k == CS_FK_IBCC_CCTI_INCREASE
                   ? 255 : 127;
        if (!cs_parse_int_base(v, 0, 0, max, &n))
            return bad(err, "'%s' is not a count; expected a whole number from 0 to %" G_GINT64_FORMAT, v, max);
        *(k == CS_FK_IBCC_MARKING_RATE ? &c->ibcc_marking_rate : k == CS_FK_IBCC_PACKET_SIZE ? &c->ibcc_packet_size
          : k == CS_FK_IBCC_CCTI_INCREASE ? &c->ibcc_ccti_increase : k == CS_FK_IBCC_CCTI_LIMIT ? &c->ibcc_ccti_limit
          : &c->ibcc_ccti_min) = n;
        return TRUE;
    }
    case CS_FK_IBCC_CCTI_TIMER:
        /* a bare number counts OpenSM's units of 1.024 us (16 bits) */
        if (cs_parse_int(v, 1, 65535, &n))
            c->ibcc_ccti_timer_s = (double)n * 1.024e-6;
        else if (!parse_seconds(v, 10, &x) || x < 1e-9)
            return bad(err, "'%s' is not a CCTI timer; expected a count of 1.024 us from 1 to 65535, or a time "
                       "such as 10us", v);
        else
            c->ibcc_ccti_timer_s = x;
        return TRUE;
    case CS_FK_IBCC_CCT:
        return parse_cct(v, c, err);
    case CS_FK_VLARB_HIGH:
        return parse_vlarb(v, c->vlarb_high, &c->vlarb_nhigh, err);
    case CS_FK_VLARB_LOW:
        return parse_vlarb(v, c->vlarb_low, &c->vlarb_nlow, err);
    case CS_FK_VLARB_HIGH_LIMIT:
        if (!cs_parse_int_base(v, 0, 0, 255, &n))
            return bad(err, "'%s' is not a Limit of High-Priority; expected 0 to 255 (4 KB units; 0 one packet, "
                       "255 no limit)", v);
        c->vlarb_high_limit = (int)n;
        return TRUE;
    case CS_FK_COUNT:
        break;
    }
    g_assert_not_reached();
}

gboolean cs_scenario_fabric_set(cs_fabric_cfg_t *cfg, const char *key, const char *value, const char *origin,
                                GError **err)
{
    int k = key_index(key);
    g_assert(k >= 0);
    if (!set_value(cfg, k, value, err))
        return FALSE;
    cfg->set |= (guint64)1 << k;
    g_free(cfg->text[k]);
    cfg->text[k] = g_strdup(value);
    g_free(cfg->origin[k]);
    cfg->origin[k] = g_strdup(origin != NULL ? origin : cs_fabric_keys[k].key);
    return TRUE;
}

gboolean cs_scenario_fabric_check(const cs_fabric_cfg_t *cfg, GError **err)
{
    if (cfg->ecn_kmin > 0 && cfg->ecn_kmax > 0 && cfg->ecn_kmax < cfg->ecn_kmin) {
        int k = cfg->origin[CS_FK_ECN_KMAX] != NULL ? CS_FK_ECN_KMAX : CS_FK_ECN_KMIN;
        return bad(err, "%s: ecn-kmax %s is below ecn-kmin %s; expected ecn-kmax at least ecn-kmin",
                   cfg->origin[k], cfg->text[CS_FK_ECN_KMAX], cfg->text[CS_FK_ECN_KMIN]);
    }
    if ((cfg->ecn_kmin > 0) != (cfg->ecn_kmax > 0)) {
        int k = cfg->ecn_kmin > 0 ? CS_FK_ECN_KMIN : CS_FK_ECN_KMAX;
        return bad(err, "%s: ecn-kmin and ecn-kmax go together; expected both (or neither: by link rate)",
                   cfg->origin[k]);
    }
    static const int stall_keys[] = { CS_FK_STALL_AT, CS_FK_STALL_FOR };
    for (guint i = 0; i < G_N_ELEMENTS(stall_keys); i++)
        if (cfg->stall_nic == NULL && (cfg->set >> stall_keys[i] & 1))
            return bad(err, "%s: there is no stall-nic; expected stall-nic = NIC with it", cfg->origin[stall_keys[i]]);
    /* a parameter of something that is off would be silently ignored */
    for (int k = CS_FK_DCQCN_AI; k <= CS_FK_DCQCN_MIN_DEC; k++)
        if ((cfg->set >> k & 1) && cfg->dcqcn == CS_FABRIC_DCQCN_OFF)
            return bad(err, "%s: DCQCN is off; expected dcqcn = connectx or paper with it", cfg->origin[k]);
    for (int k = CS_FK_ECN_KMIN; k <= CS_FK_ECN_PMAX; k++)
        if ((cfg->set >> k & 1) && !cfg->ecn)
            return bad(err, "%s: ECN is off; expected ecn = on with it", cfg->origin[k]);
    if ((cfg->set >> CS_FK_NIC_RX_BUFFER & 1) && cfg->nic_rx == CS_FABRIC_RX_OFF && cfg->stall_nic == NULL)
        return bad(err, "%s: NICs drain at once (nic-rx-rate off); expected nic-rx-rate = auto or a rate with it",
                   cfg->origin[CS_FK_NIC_RX_BUFFER]);
    if (cfg->trust == CS_FABRIC_TRUST_PCP) {
        static const int dscp_keys[] = { CS_FK_DSCP_MAP, CS_FK_ROCE_TOS, CS_FK_CNP_DSCP };
        for (guint i = 0; i < G_N_ELEMENTS(dscp_keys); i++)
            if (cfg->set >> dscp_keys[i] & 1)
                return bad(err, "%s: switches trust the VLAN priority (trust = pcp), not the DSCP; expected "
                           "trust = dscp with it", cfg->origin[dscp_keys[i]]);
    }
    for (int k = CS_FK_IBCC_THRESHOLD; k <= CS_FK_IBCC_CCT; k++)
        if ((cfg->set >> k & 1) && !cfg->ibcc)
            return bad(err, "%s: InfiniBand congestion control is off; expected ibcc = on with it", cfg->origin[k]);
    guint32 entries = cfg->ibcc_ncct > 0 ? cfg->ibcc_ncct : 128;
    if (cfg->ibcc_ccti_limit >= (gint64)entries)
        return bad(err, "%s: ibcc-ccti-limit %s is past the table's last entry %u; expected at most %u",
                   cfg->origin[CS_FK_IBCC_CCTI_LIMIT], cfg->text[CS_FK_IBCC_CCTI_LIMIT], entries - 1, entries - 1);
    gint64 limit = cfg->ibcc_ccti_limit >= 0 ? cfg->ibcc_ccti_limit : (gint64)entries - 1;
    if (cfg->ibcc_ccti_min > limit)
        return bad(err, "%s: ibcc-ccti-min %s is above the highest CCTI %" G_GINT64_FORMAT "; expected at most that",
                   cfg->origin[CS_FK_IBCC_CCTI_MIN], cfg->text[CS_FK_IBCC_CCTI_MIN], limit);
    /* DCQCN cuts a QP's rate on the CNPs its ECN marks bring back: with
     * ECN turned off it never acts */
    if ((cfg->set >> CS_FK_ECN & 1) && !cfg->ecn && cfg->dcqcn != CS_FABRIC_DCQCN_OFF)
        return bad(err, "%s: DCQCN (dcqcn = %s) reacts to ECN marks, and ECN is off; expected ecn = on with it, "
                   "or dcqcn = off", cfg->origin[CS_FK_ECN], cfg->text[CS_FK_DCQCN] != NULL ? cfg->text[CS_FK_DCQCN]
                                                                                         : "on");
    /* PFC's settings with no priority paused are ignored */
    static const int pfc_keys[] = { CS_FK_PFC_ALPHA, CS_FK_PFC_HEADROOM, CS_FK_WATCHDOG };
    for (guint i = 0; i < G_N_ELEMENTS(pfc_keys); i++)
        if ((cfg->set >> pfc_keys[i] & 1) && (cfg->set >> CS_FK_PFC & 1) && cfg->pfc == 0)
            return bad(err, "%s: PFC is on no priority (pfc = none); expected pfc = PRIORITIES with it",
                       cfg->origin[pfc_keys[i]]);
    if ((cfg->set >> CS_FK_WATCHDOG_RESTORE & 1) && cfg->watchdog_s <= 0)
        return bad(err, "%s: the PFC watchdog is off; expected pfc-watchdog = TIME with it",
                   cfg->origin[CS_FK_WATCHDOG_RESTORE]);
    return TRUE;
}

void cs_scenario_fabric_to_kf(const cs_fabric_cfg_t *cfg, GKeyFile *kf)
{
    for (int k = 0; k < CS_FK_COUNT; k++)
        if (cfg->set >> k & 1)
            g_key_file_set_string(kf, "fabric", cs_fabric_keys[k].key, cfg->text[k]);
}
