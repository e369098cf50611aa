/* A switch's shared-buffer MMU for the packet engine (issue #11): ingress
 * accounting per (ingress port, priority group), a dynamic threshold, a
 * reserve and a headroom, deciding admission (or drop) and XOFF/XON.
 *
 * Model (fabric-models.md section 3; [H] = the HPCC ns-3 fork,
 * switch-mmu.cc, whose MMU SimAI also uses):
 * - Each (port, priority) group (PG) may hold 'reserve' bytes of its own
 *   (the per-PG minimum), then bytes of the shared pool, then, on a
 *   lossless priority only, up to its port's headroom: the bytes that keep
 *   arriving after the switch decides to pause (the pause frame's trip,
 *   the sender's reaction, the cable both ways).
 * - The shared pool is what the buffer leaves after every reserve and
 *   every lossless PG's headroom: free = buffer - sum(reserve) -
 *   sum(headroom) - shared bytes in use. A PG may use up to
 *   threshold = alpha x free of it (the dynamic threshold of Choudhury
 *   and Hahne; alpha 1/8 as [H]'s shift 3).
 * - XOFF when the PG's headroom holds bytes or its shared use >=
 *   threshold; XON when its headroom is empty and its shared use is 0 or
 *   at least 'resume_offset' below the threshold ([H]; the DCQCN paper
 *   resumes 2 MTU below the pause threshold).
 * - A lossless PG drops only when its headroom is full (and nothing fits
 *   in its reserve or the shared pool); a lossy one drops what the reserve
 *   and its share do not take, and never pauses.
 * Packets are accounted whole in one bucket; a departure gives back
 * headroom first, then shared, then reserve bytes (as [H]), so every
 * bucket stays >= 0 and the PG's total is exact. */
#ifndef CS_PKT_MMU_H
#define CS_PKT_MMU_H

#include <glib.h>

#include "sim/cs_pkt.h"

/* The lossless priorities by default: RoCE on priority 3, NVIDIA's
 * default ([CUM] fabric-models.md section 2). */
#define CS_PKT_MMU_LOSSLESS_DEFAULT (1u << 3)

/* [H] switch-mmu.cc: reserve = 4 * 1024, resume_offset = 3 * 1024. */
#define CS_PKT_MMU_RESERVE_DEFAULT (4 * 1024)
#define CS_PKT_MMU_RESUME_DEFAULT (3 * 1024)
/* [H] pfc_a_shift 3: threshold = free >> 3. */
#define CS_PKT_MMU_ALPHA_DEFAULT 0.125

typedef struct {
    guint64 buffer;                   /* shared buffer, bytes */
    guint32 reserve;                  /* per PG minimum, bytes */
    double alpha;                     /* dynamic threshold factor, > 0 */
    guint32 resume_offset;            /* XON this far below the threshold, bytes */
    guint8 lossless;                  /* bit p: priority p is lossless (PFC) */
} cs_pkt_mmu_cfg_t;

/* buffer bytes; reserve, alpha, resume offset as [H]; lossless {3}. */
void cs_pkt_mmu_cfg_init(cs_pkt_mmu_cfg_t *cfg, guint64 buffer);

/* PFC headroom of one port per fabric-models.md section 3 ([PFCHR]), in
 * bytes: what a link of 'rate_bps' and 'cable_m' metres can still deliver
 * after the switch decides to pause, for frames of at most 'mtu' bytes
 * (Ethernet frame, preamble and gap excluded). */
guint64 cs_pkt_headroom_bytes(guint32 mtu, guint64 rate_bps, double cable_m);

typedef struct cs_pkt_mmu cs_pkt_mmu_t;

/* NULL for an invalid configuration (alpha <= 0 or not finite). */
cs_pkt_mmu_t *cs_pkt_mmu_new(const cs_pkt_mmu_cfg_t *cfg);
void cs_pkt_mmu_free(cs_pkt_mmu_t *mmu);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(cs_pkt_mmu_t, cs_pkt_mmu_free)

/* An ingress port with the headroom of each of its lossless PGs; returns
 * its index (0, 1, ...). */
int cs_pkt_mmu_add_port(cs_pkt_mmu_t *mmu, guint64 headroom);
int cs_pkt_mmu_nports(const cs_pkt_mmu_t *mmu);
const cs_pkt_mmu_cfg_t *cs_pkt_mmu_cfg(const cs_pkt_mmu_t *mmu);
gboolean cs_pkt_mmu_lossless(const cs_pkt_mmu_t *mmu, int prio);

/* A packet of 'bytes' arrives on (port, prio): TRUE when it is admitted
 * (and accounted), FALSE when it must be dropped (counted). */
gboolean cs_pkt_mmu_admit(cs_pkt_mmu_t *mmu, int port, int prio, guint32 bytes);
/* An admitted packet left the switch. */
void cs_pkt_mmu_release(cs_pkt_mmu_t *mmu, int port, int prio, guint32 bytes);

/* The current dynamic threshold, bytes. */
guint64 cs_pkt_mmu_threshold(const cs_pkt_mmu_t *mmu);
/* Should the PG be paused now (XOFF)? May it resume (XON)? Only lossless
 * PGs ever want a pause. */
gboolean cs_pkt_mmu_want_xoff(const cs_pkt_mmu_t *mmu, int port, int prio);
gboolean cs_pkt_mmu_may_xon(const cs_pkt_mmu_t *mmu, int port, int prio);

guint64 cs_pkt_mmu_used(const cs_pkt_mmu_t *mmu);                       /* all bytes held */
guint64 cs_pkt_mmu_used_max(const cs_pkt_mmu_t *mmu);                   /* high-water */
guint64 cs_pkt_mmu_pg_bytes(const cs_pkt_mmu_t *mmu, int port, int prio);
guint64 cs_pkt_mmu_pg_headroom_max(const cs_pkt_mmu_t *mmu, int port, int prio);
guint64 cs_pkt_mmu_drops(const cs_pkt_mmu_t *mmu, int port, int prio); /* packets */

#endif
