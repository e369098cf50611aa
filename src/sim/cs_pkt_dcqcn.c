/* DCQCN notification and reaction points (see cs_pkt_dcqcn.h). */
#include "config.h"

#include <math.h>

#include "sim/cs_pkt_dcqcn.h"

#define US 1000000                    /* ps */
#define MBPS 1000000ull

void cs_pkt_dcqcn_cfg_connectx(cs_pkt_dcqcn_cfg_t *cfg)
{
    /* fabric-models.md section 1, ConnectX-5 FW 16.35.4506 mlxconfig -q
     * [MLX1], semantics from [DOCA][MLXC] */
    *cfg = (cs_pkt_dcqcn_cfg_t) {
        .cnp_gap = 4 * US,                    /* MIN_TIME_BETWEEN_CNPS 4 us ([MLX2]: 2) */
        .cnp_prio = 6,                        /* CNP_802P_PRIO 6 */
        .rate_reduce_period = 4 * US,         /* RATE_REDUCE_MONITOR_PERIOD 4 us */
        .alpha_period = 1 * US,               /* DCE_TCP_RTT 1 us */
        .g = (1024.0 - 1019.0) / 1024.0,      /* DCE_TCP_G 1019, alpha in 1/1024 units */
        .alpha0 = 1023.0 / 1024.0,            /* INITIAL_ALPHA_VALUE 1023 */
        .min_dec = 0.5,                       /* RPG_MIN_DEC_FAC 50 % */
        .min_rate_bps = 1 * MBPS,             /* RPG_MIN_RATE 1 Mb/s */
        .ai_bps = 5 * MBPS,                   /* RPG_AI_RATE 5 Mb/s */
        .hai_bps = 50 * MBPS,                 /* RPG_HAI_RATE 50 Mb/s */
        .timer = 300 * US,                    /* RPG_TIME_RESET 300 us */
        /* RPG_BYTE_RESET 32767 is not modelled: no byte counter, as the
         * HPCC ns-3 fork's model of ConnectX's DCQCN has none ([H]
         * rdma-hw.cc, its run.py 'dcqcn' profile; fabric-models.md
         * sections 1 and 9). Read as bytes (the docs' "number of bytes")
         * it expires every 0.65 us at 400G, and with CLAMP_TGT_RATE 0
         * every expiry takes RC half way back to a target left at the
         * line rate: measured, a 2:1 incast at 400G is then held by PFC
         * alone (the queue at the pause threshold, 23.5 MB, 577 XOFF in
         * 2.2 ms: test-pkt-dcqcn), and read with the target clamped at every cut, the
         * increase grows with the rate, so the faster sender keeps more
         * (Jain 0.96, 47% of the line; /work/notes/doc-dcqcn.md). Real
         * ConnectX fabrics hold such an incast at the marking thresholds
         * with fair shares; the DCQCN paper ran B = 10 MB on ConnectX-3
         * Pro, and tuning guides move the timer, not this ([BARRE] Tab. 2:
         * rpg_time_reset 300 -> 20-100 us). Unverified on hardware. */
        .byte_reset = 0,
        .f = 1,                               /* RPG_THRESHOLD 1 */
        /* CLAMP_TGT_RATE 0, CLAMP_TGT_RATE_AFTER_TIME_INC 1: RT follows
         * RC at a cut only after a timer increase (HPCC rdma-hw.cc [H]) */
        .clamp_tgt = FALSE,
    };
}

void cs_pkt_dcqcn_cfg_paper(cs_pkt_dcqcn_cfg_t *cfg)
{
    /* Zhu et al. SIGCOMM'15 at 40G (fabric-models.md section 1, [CN],
     * [FLUID], [P2]) */
    *cfg = (cs_pkt_dcqcn_cfg_t) {
        .cnp_gap = 50 * US,                   /* N = 50 us */
        .cnp_prio = 6,                        /* "high priority"; ConnectX's 6 */
        .rate_reduce_period = 0,              /* the paper cuts on every CNP */
        .alpha_period = 55 * US,              /* K = 55 us */
        .g = 1.0 / 256,                       /* g = 1/256 */
        .alpha0 = 1.0,                        /* HPCC ns-3 sets alpha = 1 at the first CNP [H] */
        .min_dec = 0,                         /* no bound in the paper */
        .min_rate_bps = 100 * MBPS,           /* not in the paper: HPCC ns-3 MinRate [H] */
        .ai_bps = 40 * MBPS,                  /* R_AI 40 Mb/s */
        .hai_bps = 200 * MBPS,                /* not in the section: Zhu ns-3 sample config HAI [BZ] */
        .timer = 55 * US,                     /* T = 55 us */
        .byte_reset = 10000000,               /* B = 10 MB */
        .f = 5,                               /* F = 5 */
        .clamp_tgt = TRUE,                    /* the paper: RT <- RC at every cut */
    };
}

gboolean cs_pkt_dcqcn_cfg_valid(const cs_pkt_dcqcn_cfg_t *cfg)
{
    return cfg->cnp_gap >= 0 && cfg->cnp_prio >= 0 && cfg->cnp_prio < 8
           && cfg->rate_reduce_period >= 0 && cfg->alpha_period > 0 && cfg->g > 0 && cfg->g <= 1
           && cfg->alpha0 >= 0 && cfg->alpha0 <= 1 && cfg->min_dec >= 0 && cfg->min_dec < 1
           && cfg->min_rate_bps > 0 && cfg->timer > 0 && cfg->f >= 0;
}

void cs_pkt_dcqcn_rp_init(cs_pkt_dcqcn_rp_t *rp, const cs_pkt_dcqcn_cfg_t *cfg, guint64 line_bps)
{
    *rp = (cs_pkt_dcqcn_rp_t) {
        .cfg = cfg,
        .line = (double)line_bps,
        .rc = (double)line_bps,               /* no slow start: line rate first */
        .rt = (double)line_bps,
        .alpha = cfg->alpha0,
        .alpha_next = -1,
        .last_cut = -1,
    };
}

/* Brings alpha up to 'now': the period under way when the last CNP came
 * ends with its +g, later ones without a CNP decay. */
static void alpha_advance(cs_pkt_dcqcn_rp_t *rp, cs_time_t now)
{
    const cs_pkt_dcqcn_cfg_t *c = rp->cfg;
    if (rp->alpha_next < 0) {         /* the first CNP: periods start now */
        rp->alpha = c->alpha0;
        rp->alpha_next = now + c->alpha_period;
        return;
    }
    if (now < rp->alpha_next)
        return;
    gint64 k = (now - rp->alpha_next) / c->alpha_period + 1;   /* periods ended */
    rp->alpha = (1 - c->g) * rp->alpha + (rp->cnp_in_period ? c->g : 0);
    if (k > 1)
        rp->alpha *= pow(1 - c->g, (double)(k - 1));
    rp->cnp_in_period = FALSE;
    rp->alpha_next += k * c->alpha_period;
}

gboolean cs_pkt_dcqcn_rp_cnp(cs_pkt_dcqcn_rp_t *rp, cs_time_t now)
{
    const cs_pkt_dcqcn_cfg_t *c = rp->cfg;
    alpha_advance(rp, now);
    rp->cnp_in_period = TRUE;
    rp->cnps++;
    if (rp->last_cut >= 0 && now - rp->last_cut < c->rate_reduce_period)
        return FALSE;
    double factor = MAX(1 - rp->alpha / 2, c->min_dec);
    if (c->clamp_tgt || rp->t_stage > 0)
        rp->rt = rp->rc;
    rp->rc = MAX((double)c->min_rate_bps, rp->rc * factor);
    rp->t_stage = rp->b_stage = 0;
    rp->bytes = 0;
    rp->last_cut = now;
    rp->limited = TRUE;
    rp->cuts++;
    return TRUE;
}

/* One expiry of the timer or the byte counter, stages counted before it. */
static void increase(cs_pkt_dcqcn_rp_t *rp)
{
    const cs_pkt_dcqcn_cfg_t *c = rp->cfg;
    int hi = MAX(rp->t_stage, rp->b_stage), lo = MIN(rp->t_stage, rp->b_stage);
    if (lo >= c->f)
        rp->rt += (double)c->hai_bps * (lo - c->f + 1);          /* hyper */
    else if (hi >= c->f)
        rp->rt += (double)c->ai_bps;                             /* additive */
    rp->rt = MIN(rp->rt, rp->line);
    rp->rc = (rp->rt + rp->rc) / 2;                              /* and fast recovery */
    if (rp->rt >= rp->line && rp->line - rp->rc < (double)c->ai_bps) {
        rp->rc = rp->line;
        rp->limited = FALSE;
    }
}

void cs_pkt_dcqcn_rp_sent(cs_pkt_dcqcn_rp_t *rp, guint64 bytes)
{
    const cs_pkt_dcqcn_cfg_t *c = rp->cfg;
    if (!rp->limited || c->byte_reset == 0)
        return;
    rp->bytes += bytes;
    while (rp->limited && rp->bytes >= c->byte_reset) {
        rp->bytes -= c->byte_reset;
        increase(rp);
        rp->b_stage++;
    }
}

gboolean cs_pkt_dcqcn_rp_timer(cs_pkt_dcqcn_rp_t *rp)
{
    if (!rp->limited)
        return FALSE;
    increase(rp);
    rp->t_stage++;
    return rp->limited;
}

gboolean cs_pkt_dcqcn_rp_timers(cs_pkt_dcqcn_rp_t *rp, guint64 k)
{
    while (k-- > 0 && cs_pkt_dcqcn_rp_timer(rp))
        ;
    return rp->limited;
}

cs_time_t cs_pkt_dcqcn_rp_gap(const cs_pkt_dcqcn_rp_t *rp, guint32 wire)
{
    if (!rp->limited)
        return 0;
    return (cs_time_t)ceil((double)wire * 8 * CS_PS_PER_S / rp->rc);
}
