/* InfiniBand congestion control (design and sources in cs_pkt_ibcc.h). */
#include "config.h"

#include <math.h>
#include <string.h>

#include "sim/cs_pkt_ibcc.h"

void cs_pkt_ibcc_cct_ofa(cs_pkt_ibcc_cfg_t *cfg)
{
    /* [IBCC] (fabric-models.md section 9): multiplier(i) =
     * floor(7 i^2 / 95^2 / 0.218), i = 0..127, shift 0; the integer form
     * 7 i^2 x 1000 / (9025 x 218) floors the same value without rounding
     * error in the double */
    for (guint32 i = 0; i < CS_PKT_IBCC_CCT_MAX; i++) {
        guint64 num = 7000ull * i * i, den = 9025ull * 218;
        cfg->cct[i] = (cs_pkt_ibcc_cct_entry_t){ .shift = 0, .mult = (guint16)(num / den) };
    }
    cfg->ncct = CS_PKT_IBCC_CCT_MAX;
    cfg->ccti_limit = CS_PKT_IBCC_CCT_MAX - 1;
}

void cs_pkt_ibcc_cfg_default(cs_pkt_ibcc_cfg_t *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    /* OpenSM ships every value 0 (congestion control off); these are
     * from the published sweep [IBCC] (fabric-models.md section 9:
     * threshold {0,1,5,9,0xc,0xf}, marking rate 0-0x50, CCTI_Timer
     * 2-8192, CCTI_Increase 1) and the Mellanox OMNeT++ model's ibcc
     * example ([IBM] examples/evaluation_fattree128/fat-tree-ibcc.ini:
     * CCT_Timer 10us, markrate 3 = one mark in 3 packets, CCT_Limit 127
     * in gen.cc) */
    cfg->threshold = 15;        /* the sweep's most aggressive: above 1/16 of a buffer */
    /* every eligible packet: the sweep's lowest rate. One in three (the
     * OMNeT++ example's) gives each of 8 QPs behind an EDR root at MTU
     * 4096 (3 packets/us) 0.125 BECN/us against the timer's 0.098
     * decrements/us: CCTI barely climbs, and lab 13's congestion tree is
     * the same as without CC (docs/labs/lab13-ib-congestion-tree.md) */
    cfg->marking_rate = 0;
    cfg->packet_size = 0;       /* every data packet is eligible (ACKs and CNPs never are) */
    cfg->victim_mask = FALSE;   /* OpenSM's default mask: no port marks as a victim */
    cfg->ccti_timer = 10 * CS_PKT_IBCC_TIMER_UNIT_PS;   /* OMNeT++ example's 10 us, in 1.024-us units */
    cfg->ccti_increase = 1;     /* the sweep's */
    cfg->ccti_min = 0;
    cs_pkt_ibcc_cct_ofa(cfg);
}

gboolean cs_pkt_ibcc_cfg_valid(const cs_pkt_ibcc_cfg_t *cfg)
{
    if (cfg->threshold < 0 || cfg->threshold > 15 || cfg->ccti_timer <= 0)
        return FALSE;
    if (cfg->ncct < 1 || cfg->ncct > CS_PKT_IBCC_CCT_MAX || cfg->ccti_limit >= cfg->ncct ||
        cfg->ccti_min > cfg->ccti_limit)
        return FALSE;
    for (guint32 i = 0; i < cfg->ncct; i++)
        if (cfg->cct[i].shift > 3 || cfg->cct[i].mult > 16383)
            return FALSE;
    return TRUE;
}

guint64 cs_pkt_ibcc_threshold_bytes(int threshold, guint64 buffer)
{
    if (threshold <= 0)
        return G_MAXUINT64;
    return buffer * (guint64)(16 - threshold) / 16;
}

gboolean cs_pkt_ibcc_mark(const cs_pkt_ibcc_cfg_t *cfg, cs_pkt_ibcc_mark_t *m, guint64 queue, guint64 threshold,
                          guint32 wire, gboolean victim)
{
    if (queue <= threshold || (victim && !cfg->victim_mask) || wire < cfg->packet_size * 64u)
        return FALSE;
    if (m->skip < cfg->marking_rate) {
        m->skip++;
        return FALSE;
    }
    m->skip = 0;
    m->marks++;
    return TRUE;
}

void cs_pkt_ibcc_ca_init(cs_pkt_ibcc_ca_t *ca, const cs_pkt_ibcc_cfg_t *cfg, cs_time_t now)
{
    memset(ca, 0, sizeof *ca);
    ca->ccti = ca->ccti_max = cfg->ccti_min;
    ca->t = ca->t0 = now;
}

/* The timer expires at every multiple of ccti_timer (free-running from
 * 0): each expiry in (t, now] takes 1 off the index, down to its minimum;
 * the area integrates the steps. In one step, as DCQCN's timers are
 * resumed: d decrements at the ticks (t/T + i) T, i = 1..d, take
 * sum (now - tick_i) off the area the index would have kept. */
void cs_pkt_ibcc_ca_advance(cs_pkt_ibcc_ca_t *ca, const cs_pkt_ibcc_cfg_t *cfg, cs_time_t now)
{
    if (now <= ca->t)
        return;
    cs_time_t T = cfg->ccti_timer;
    cs_time_t t = ca->t;
    gint64 k = T > 0 ? now / T - t / T : 0;            /* expiries in (t, now] */
    gint64 d = MIN(k, (gint64)(ca->ccti - cfg->ccti_min));
    double area = (double)ca->ccti * (double)(now - t);
    if (d > 0)
        area -= (double)d * (double)now - (double)T * ((double)d * (double)(t / T) + (double)d * (double)(d + 1) / 2);
    ca->area += area;
    ca->ccti -= (guint32)d;
    ca->t = now;
}

void cs_pkt_ibcc_ca_becn(cs_pkt_ibcc_ca_t *ca, const cs_pkt_ibcc_cfg_t *cfg, cs_time_t now)
{
    cs_pkt_ibcc_ca_advance(ca, cfg, now);
    ca->becns++;
    ca->ccti = MIN(ca->ccti + cfg->ccti_increase, cfg->ccti_limit);
    ca->ccti_max = MAX(ca->ccti_max, ca->ccti);
}

cs_time_t cs_pkt_ibcc_ca_delay(cs_pkt_ibcc_ca_t *ca, const cs_pkt_ibcc_cfg_t *cfg, cs_time_t pkt_ps, cs_time_t now)
{
    cs_pkt_ibcc_ca_advance(ca, cfg, now);
    const cs_pkt_ibcc_cct_entry_t *e = &cfg->cct[ca->ccti];
    return (pkt_ps * (cs_time_t)e->mult) >> e->shift;
}

double cs_pkt_ibcc_ca_avg(cs_pkt_ibcc_ca_t *ca, const cs_pkt_ibcc_cfg_t *cfg, cs_time_t now)
{
    cs_pkt_ibcc_ca_advance(ca, cfg, now);
    return ca->t > ca->t0 ? ca->area / (double)(ca->t - ca->t0) : ca->ccti;
}
