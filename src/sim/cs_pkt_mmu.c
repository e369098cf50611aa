/* Shared-buffer switch MMU (design in cs_pkt_mmu.h). */
#include "config.h"

#include <math.h>

#include "sim/cs_pkt_mmu.h"

typedef struct {
    guint64 rsv, shared, hdrm;        /* bytes in each bucket */
    guint64 hdrm_max;
    guint64 drops;
} pg_t;

typedef struct {
    guint64 headroom;                 /* per lossless PG */
    pg_t pg[CS_PKT_PRIOS];
} port_t;

struct cs_pkt_mmu {
    cs_pkt_mmu_cfg_t cfg;
    GArray *ports;                    /* port_t */
    int nlossless;
    guint64 rsv_total, hdrm_total;    /* configured: sum(reserve), sum(headroom) */
    guint64 shared;                   /* shared bytes in use, all PGs */
    guint64 used, used_max;
};

void cs_pkt_mmu_cfg_init(cs_pkt_mmu_cfg_t *cfg, guint64 buffer)
{
    *cfg = (cs_pkt_mmu_cfg_t) {
        .buffer = buffer,
        .reserve = CS_PKT_MMU_RESERVE_DEFAULT,
        .alpha = CS_PKT_MMU_ALPHA_DEFAULT,
        .resume_offset = CS_PKT_MMU_RESUME_DEFAULT,
        .lossless = CS_PKT_MMU_LOSSLESS_DEFAULT,
    };
}

/* Headroom terms in bit-times, fabric-models.md section 3 from [PFCHR]
 * ("How to Compute Headroom for Lossless Ethernet Links", part 2, after
 * IEEE 802.1Qbb annex N): D-Intf, the PHY/MAC delays of both interfaces,
 * and D-Resp, the time the sender takes to act on a pause frame. The
 * source lists D-Intf for 10/25/40/100G and D-Resp for 10/25/40/100/400G.
 * Assumption (no source): at 400G D-Intf takes the time it takes at 100G
 * (1228.8 ns, so 4 x the bits). A rate between rows uses the next row up
 * (more bit-times: more headroom, the safe side); above 400G the 400G
 * row's times scale with the rate. */
static const struct { guint64 gbps, intf, resp; } hr_table[] = {
    { 10, 8192, 30720 },
    { 25, 6144, 40960 },
    { 40, 24576, 60416 },
    { 100, 122880, 201728 },
    { 400, 491520, 463360 },
};

#define HR_MAXFRAME_EXTRA 160         /* D-MaxFrame = MTU x 8 + 160 (preamble, SFD, gap) */
#define HR_PAUSE 672                  /* D-Pause: a 64-B pause frame with preamble and gap */
#define HR_CABLE_NS_PER_M 5.0         /* ~5 ns/m (fabric-models.md section 3, [PFCHR]/[CISCO]: 476 ns/100 m twinax, 513 SMF) */

guint64 cs_pkt_headroom_bytes(guint32 mtu, guint64 rate_bps, double cable_m)
{
    g_return_val_if_fail(rate_bps > 0 && cable_m >= 0, 0);
    gsize last = G_N_ELEMENTS(hr_table) - 1, i = 0;
    while (i < last && hr_table[i].gbps * 1000000000ull < rate_bps)
        i++;
    double scale = 1;
    if (rate_bps > hr_table[last].gbps * 1000000000ull)
        scale = (double)rate_bps / (double)(hr_table[last].gbps * 1000000000ull);
    double bits = (double)mtu * 8 + HR_MAXFRAME_EXTRA          /* D-MaxFrame: frame being sent */
                  + HR_PAUSE                                    /* D-Pause */
                  + scale * (double)(hr_table[i].intf + hr_table[i].resp)
                  + 2 * cable_m * HR_CABLE_NS_PER_M * 1e-9 * (double)rate_bps  /* pause out, data back */
                  + (double)mtu * 8;                            /* one max no-drop frame */
    return (guint64)ceil(bits / 8);
}

cs_pkt_mmu_t *cs_pkt_mmu_new(const cs_pkt_mmu_cfg_t *cfg)
{
    g_return_val_if_fail(cfg->alpha > 0 && isfinite(cfg->alpha), NULL);
    cs_pkt_mmu_t *mmu = g_new0(cs_pkt_mmu_t, 1);
    mmu->cfg = *cfg;
    mmu->ports = g_array_new(FALSE, TRUE, sizeof(port_t));
    for (int p = 0; p < CS_PKT_PRIOS; p++)
        mmu->nlossless += cfg->lossless >> p & 1;
    return mmu;
}

void cs_pkt_mmu_free(cs_pkt_mmu_t *mmu)
{
    if (mmu == NULL)
        return;
    g_array_free(mmu->ports, TRUE);
    g_free(mmu);
}

int cs_pkt_mmu_add_port(cs_pkt_mmu_t *mmu, guint64 headroom)
{
    port_t pt = { .headroom = headroom };
    g_array_append_val(mmu->ports, pt);
    mmu->rsv_total += (guint64)mmu->cfg.reserve * CS_PKT_PRIOS;
    mmu->hdrm_total += headroom * (guint64)mmu->nlossless;
    return (int)mmu->ports->len - 1;
}

int cs_pkt_mmu_nports(const cs_pkt_mmu_t *mmu) { return (int)mmu->ports->len; }
const cs_pkt_mmu_cfg_t *cs_pkt_mmu_cfg(const cs_pkt_mmu_t *mmu) { return &mmu->cfg; }

gboolean cs_pkt_mmu_lossless(const cs_pkt_mmu_t *mmu, int prio)
{
    return mmu->cfg.lossless >> prio & 1;
}

static port_t *port_of(const cs_pkt_mmu_t *mmu, int port)
{
    return &g_array_index(mmu->ports, port_t, port);
}

guint64 cs_pkt_mmu_threshold(const cs_pkt_mmu_t *mmu)
{
    guint64 taken = mmu->rsv_total + mmu->hdrm_total + mmu->shared;
    if (taken >= mmu->cfg.buffer)
        return 0;
    return (guint64)(mmu->cfg.alpha * (double)(mmu->cfg.buffer - taken));
}

gboolean cs_pkt_mmu_admit(cs_pkt_mmu_t *mmu, int port, int prio, guint32 bytes)
{
    g_return_val_if_fail(port >= 0 && port < cs_pkt_mmu_nports(mmu), FALSE);
    g_return_val_if_fail(prio >= 0 && prio < CS_PKT_PRIOS, FALSE);
    port_t *pt = port_of(mmu, port);
    pg_t *g = &pt->pg[prio];
    if (mmu->used + bytes > mmu->cfg.buffer) {
        g->drops++;                   /* the memory itself is full */
        return FALSE;
    }
    if (g->rsv + bytes <= mmu->cfg.reserve) {
        g->rsv += bytes;
    } else if (g->hdrm == 0 && g->shared + bytes <= cs_pkt_mmu_threshold(mmu)) {
        g->shared += bytes;
        mmu->shared += bytes;
    } else if (cs_pkt_mmu_lossless(mmu, prio) && g->hdrm + bytes <= pt->headroom) {
        g->hdrm += bytes;
        if (g->hdrm > g->hdrm_max)
            g->hdrm_max = g->hdrm;
    } else {
        g->drops++;
        return FALSE;
    }
    mmu->used += bytes;
    if (mmu->used > mmu->used_max)
        mmu->used_max = mmu->used;
    return TRUE;
}

void cs_pkt_mmu_release(cs_pkt_mmu_t *mmu, int port, int prio, guint32 bytes)
{
    g_return_if_fail(port >= 0 && port < cs_pkt_mmu_nports(mmu));
    pg_t *g = &port_of(mmu, port)->pg[prio];
    g_return_if_fail(g->rsv + g->shared + g->hdrm >= bytes);
    guint64 left = bytes, take = MIN(g->hdrm, left);
    g->hdrm -= take;
    left -= take;
    take = MIN(g->shared, left);
    g->shared -= take;
    mmu->shared -= take;
    left -= take;
    g->rsv -= left;
    mmu->used -= bytes;
}

gboolean cs_pkt_mmu_want_xoff(const cs_pkt_mmu_t *mmu, int port, int prio)
{
    if (!cs_pkt_mmu_lossless(mmu, prio))
        return FALSE;
    const pg_t *g = &port_of(mmu, port)->pg[prio];
    return g->hdrm > 0 || g->shared >= cs_pkt_mmu_threshold(mmu);
}

gboolean cs_pkt_mmu_may_xon(const cs_pkt_mmu_t *mmu, int port, int prio)
{
    const pg_t *g = &port_of(mmu, port)->pg[prio];
    if (g->hdrm > 0)
        return FALSE;
    return g->shared == 0 || g->shared + mmu->cfg.resume_offset <= cs_pkt_mmu_threshold(mmu);
}

guint64 cs_pkt_mmu_used(const cs_pkt_mmu_t *mmu) { return mmu->used; }
guint64 cs_pkt_mmu_used_max(const cs_pkt_mmu_t *mmu) { return mmu->used_max; }

guint64 cs_pkt_mmu_pg_bytes(const cs_pkt_mmu_t *mmu, int port, int prio)
{
    const pg_t *g = &port_of(mmu, port)->pg[prio];
    return g->rsv + g->shared + g->hdrm;
}

guint64 cs_pkt_mmu_pg_headroom_max(const cs_pkt_mmu_t *mmu, int port, int prio)
{
    return port_of(mmu, port)->pg[prio].hdrm_max;
}

guint64 cs_pkt_mmu_drops(const cs_pkt_mmu_t *mmu, int port, int prio)
{
    return port_of(mmu, port)->pg[prio].drops;
}
