/* RED/ECN marking at a switch's egress (issue #11, part 1).
 *
 * Where and on what: as a packet leaves its egress queue for the wire
 * (the port's 'dequeued' hook), on the bytes queued at that (port,
 * priority) counting the packet itself, as the HPCC ns-3 fork does
 * (SwitchNotifyDequeue; fabric-models.md section 2). Marking at dequeue
 * rather than on arrival (the DCQCN paper) tells the sender about the
 * queue as it is now, not as it was a queueing delay ago, so the control
 * loop is shorter; it is also the simulator the DCQCN numbers we compare
 * with come from. Only ECN-capable (ECT) packets are marked (CE); link
 * control frames never reach the hook, and CNPs are not ECT.
 *
 * Probability (RED, linear; fluid model eq. 5): 0 at or below Kmin,
 * Pmax x (q - Kmin) / (Kmax - Kmin) up to Kmax, 1 above Kmax.
 *
 * Draws come from a small xorshift64* generator per port, seeded from the
 * run's seed and the port id: the same inputs and seed give the same
 * marks, whatever else runs. */
#ifndef CS_PKT_ECN_H
#define CS_PKT_ECN_H

#include <glib.h>

#include "sim/cs_pkt.h"

typedef struct {
    guint64 kmin, kmax;               /* queue bytes */
    double pmax;                      /* probability at Kmax */
} cs_pkt_ecn_cfg_t;

/* Defaults by link rate, HPCC ns-3 fork's mix/config (fabric-models.md
 * section 2, [H]; KB = 1000 B): 25G 100/400 KB, 50G 200/800, 100G
 * 400/1600, 200G 300/1200 with Pmax 0.8 (SimAI), 400G 800/3200, all
 * others Pmax 0.2. A rate between rows takes the next row up; above
 * 400G, 400G's. */
void cs_pkt_ecn_cfg_for_rate(cs_pkt_ecn_cfg_t *cfg, guint64 rate_bps);
gboolean cs_pkt_ecn_cfg_valid(const cs_pkt_ecn_cfg_t *cfg);

/* Marking probability for 'qbytes' queued. */
double cs_pkt_ecn_prob(const cs_pkt_ecn_cfg_t *cfg, guint64 qbytes);

/* xorshift64* (Vigna 2016): 64-bit state, never 0. */
typedef struct {
    guint64 s;
} cs_pkt_rng_t;

/* splitmix64's finalizer: a 64-bit mix for seeds and hashes. */
guint64 cs_pkt_mix64(guint64 z);
/* Seeds from the run's seed and a stream number (the port id), mixed by
 * splitmix64 so neighbouring streams are unrelated. */
void cs_pkt_rng_seed(cs_pkt_rng_t *rng, guint64 seed, guint64 stream);
/* Uniform in [0, 1), 53 bits. */
double cs_pkt_rng_uniform(cs_pkt_rng_t *rng);

/* Decides for one ECT packet leaving with 'qbytes' queued and sets
 * CS_PKT_F_CE when marked; returns whether it marked. A packet that is
 * not ECT is left alone and draws nothing. */
gboolean cs_pkt_ecn_mark(const cs_pkt_ecn_cfg_t *cfg, cs_pkt_rng_t *rng, cs_pkt_t *pkt,
                         guint64 qbytes);

#endif
