/* DCQCN (Zhu et al., SIGCOMM'15): the notification point's CNP rule and
 * the reaction point's rate limiter, per flow (issue #11, part 1).
 * Values and their sources: fabric-models.md section 1.
 *
 * Notification point (the receiver): a CE-marked packet of a flow that
 * got no CNP in the last cnp_gap makes a CNP now, a control packet with
 * a 64-B payload on priority cnp_prio back to the sender.
 *
 * Reaction point (the sender's rate limiter; the host paces the flow at
 * RC: the next packet may leave wire bytes x 8 / RC after the last):
 * - on a CNP: alpha learns of it (below); at most once per
 *   rate_reduce_period (CNPs within the period after a cut cut nothing),
 *   RT <- RC (with clamp_tgt; without it only if the timer raised the
 *   rate since the last cut: ConnectX CLAMP_TGT_RATE 0 with
 *   CLAMP_TGT_RATE_AFTER_TIME_INC 1, as the HPCC ns-3 fork does it), RC <-
 *   max(min_rate, RC x max(1 - alpha/2, min_dec)), and both increase
 *   counters restart. Without the clamp, cuts in a row keep the target
 *   of before the congestion, so fast recovery goes back towards it.
 * - alpha: every alpha_period from the first CNP, alpha <- (1-g) alpha
 *   + g if a CNP came in that period, else (1-g) alpha (ConnectX
 *   DCE_TCP_RTT semantics). Computed lazily when a CNP arrives: the
 *   periods without a CNP since the last are (1-g)^k at once, so no event
 *   runs every alpha period.
 * - increase: a timer (every 'timer' while limited) and a byte counter
 *   (every 'byte_reset' bytes sent) each count stages. At each expiry,
 *   with both stages counted before it: both below F: fast recovery,
 *   RC <- (RT + RC)/2; one at F or more: additive, RT += ai; both: hyper,
 *   RT += hai x (min stage - F + 1) (Zhu's ns-3); then RC <- (RT + RC)/2.
 *   RT stays at most the line rate; when RT is the line rate and RC is
 *   within one ai of it, the flow is unlimited again (RC = line) and its
 *   timer stops.
 * The timer is one event per flow, rescheduling itself only while the
 * flow is rate limited (docs/model-packet.md). */
#ifndef CS_PKT_DCQCN_H
#define CS_PKT_DCQCN_H

#include <glib.h>

#include "sim/cs_evq.h"

typedef struct {
    cs_time_t cnp_gap;                /* NP: least time between CNPs of a flow */
    int cnp_prio;                     /* CNPs' priority */
    cs_time_t rate_reduce_period;     /* RP: least time between cuts (0: every CNP) */
    cs_time_t alpha_period;
    double g;                         /* alpha's gain */
    double alpha0;                    /* alpha at the first CNP */
    double min_dec;                   /* a cut leaves at least min_dec x RC */
    guint64 min_rate_bps;
    guint64 ai_bps, hai_bps;          /* additive and hyper increase steps */
    cs_time_t timer;                  /* increase timer */
    guint64 byte_reset;               /* increase byte counter (bytes; 0: none) */
    int f;                            /* fast recovery stages */
    gboolean clamp_tgt;               /* RT <- RC at every cut (see above) */
} cs_pkt_dcqcn_cfg_t;

/* ConnectX firmware defaults (CX-5 FW 16.35, mlxconfig; the default). */
void cs_pkt_dcqcn_cfg_connectx(cs_pkt_dcqcn_cfg_t *cfg);
/* The DCQCN paper's values (Zhu'15 at 40G). */
void cs_pkt_dcqcn_cfg_paper(cs_pkt_dcqcn_cfg_t *cfg);
gboolean cs_pkt_dcqcn_cfg_valid(const cs_pkt_dcqcn_cfg_t *cfg);

/* One flow's reaction point. */
typedef struct {
    const cs_pkt_dcqcn_cfg_t *cfg;
    double line, rc, rt;              /* bits per second */
    double alpha;
    gboolean limited;                 /* RC below the line rate: paced, timer running */
    gboolean cnp_in_period;           /* a CNP came in the current alpha period */
    cs_time_t alpha_next;             /* end of the current alpha period */
    cs_time_t last_cut;               /* -1: never */
    int t_stage, b_stage;
    guint64 bytes;                    /* sent since the byte counter last expired */
    guint64 cnps, cuts;
} cs_pkt_dcqcn_rp_t;

void cs_pkt_dcqcn_rp_init(cs_pkt_dcqcn_rp_t *rp, const cs_pkt_dcqcn_cfg_t *cfg, guint64 line_bps);
/* A CNP arrived. Returns TRUE when it cut the rate: the increase timer
 * restarts (its owner (re)schedules it at now + cfg->timer). */
gboolean cs_pkt_dcqcn_rp_cnp(cs_pkt_dcqcn_rp_t *rp, cs_time_t now);
/* The flow sent 'bytes' (wire). */
void cs_pkt_dcqcn_rp_sent(cs_pkt_dcqcn_rp_t *rp, guint64 bytes);
/* The increase timer expired. Returns TRUE while the flow stays limited
 * (its owner reschedules the timer at now + cfg->timer). */
gboolean cs_pkt_dcqcn_rp_timer(cs_pkt_dcqcn_rp_t *rp);
/* 'k' expiries of the timer at once (at most until the flow is
 * unlimited): for an owner that stops the timer while its flow has
 * nothing to send, so that the idle time raises the rate as the NIC's
 * free-running timer does. Returns whether the flow is still limited. */
gboolean cs_pkt_dcqcn_rp_timers(cs_pkt_dcqcn_rp_t *rp, guint64 k);
/* Time one packet of 'wire' bytes takes at RC, in ps (0 when unlimited). */
cs_time_t cs_pkt_dcqcn_rp_gap(const cs_pkt_dcqcn_rp_t *rp, guint32 wire);

#endif
