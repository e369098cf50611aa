/* RED/ECN marking (see cs_pkt_ecn.h). */
#include "config.h"

#include "sim/cs_pkt_ecn.h"

#define KB 1000ull                    /* the HPCC config's KB (x1000) */
#define GBPS 1000000000ull

void cs_pkt_ecn_cfg_for_rate(cs_pkt_ecn_cfg_t *cfg, guint64 rate_bps)
{
    /* fabric-models.md section 2: HPCC ns-3 mix/config.txt KMIN/KMAX/PMAX
     * maps [H]; 200G from SimAI.conf [SA] */
    static const struct { guint64 rate; guint64 kmin, kmax; double pmax; } row[] = {
        { 25 * GBPS, 100 * KB, 400 * KB, 0.2 },
        { 50 * GBPS, 200 * KB, 800 * KB, 0.2 },
        { 100 * GBPS, 400 * KB, 1600 * KB, 0.2 },
        { 200 * GBPS, 300 * KB, 1200 * KB, 0.8 },
        { 400 * GBPS, 800 * KB, 3200 * KB, 0.2 },
    };
    guint i = 0;
    while (i + 1 < G_N_ELEMENTS(row) && rate_bps > row[i].rate)
        i++;
    *cfg = (cs_pkt_ecn_cfg_t) { row[i].kmin, row[i].kmax, row[i].pmax };
}

gboolean cs_pkt_ecn_cfg_valid(const cs_pkt_ecn_cfg_t *cfg)
{
    return cfg->kmin <= cfg->kmax && cfg->pmax >= 0 && cfg->pmax <= 1;
}

double cs_pkt_ecn_prob(const cs_pkt_ecn_cfg_t *cfg, guint64 qbytes)
{
    if (qbytes <= cfg->kmin)
        return 0;
    if (qbytes > cfg->kmax)
        return 1;
    return cfg->pmax * (double)(qbytes - cfg->kmin) / (double)(cfg->kmax - cfg->kmin);
}

guint64 cs_pkt_mix64(guint64 z)
{
    /* splitmix64's finalizer (Steele, Lea, Flood 2014) */
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void cs_pkt_rng_seed(cs_pkt_rng_t *rng, guint64 seed, guint64 stream)
{
    guint64 z = cs_pkt_mix64(seed + 0x9e3779b97f4a7c15ull * (stream + 1));
    rng->s = z != 0 ? z : 0x9e3779b97f4a7c15ull;
}

double cs_pkt_rng_uniform(cs_pkt_rng_t *rng)
{
    guint64 x = rng->s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng->s = x;
    return (double)((x * 0x2545f4914f6cdd1dull) >> 11) / 9007199254740992.0;   /* 2^53 */
}

gboolean cs_pkt_ecn_mark(const cs_pkt_ecn_cfg_t *cfg, cs_pkt_rng_t *rng, cs_pkt_t *pkt,
                         guint64 qbytes)
{
    if (!(pkt->flags & CS_PKT_F_ECT))
        return FALSE;
    double p = cs_pkt_ecn_prob(cfg, qbytes);
    if (p <= 0)
        return FALSE;
    if (p < 1 && cs_pkt_rng_uniform(rng) >= p)
        return FALSE;
    pkt->flags |= CS_PKT_F_CE;
    return TRUE;
}
