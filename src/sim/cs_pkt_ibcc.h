/* InfiniBand congestion control (IBA volume 1, annex A10; issue #14 item
 * 3): the packet engine's congestion control on IB fabrics, as DCQCN
 * (cs_pkt_dcqcn.h) is RoCE's. Facts and their sources:
 * fabric-models.md sections 4 and 9 ([IBCC]); OpenSM's option table and
 * its opensm.conf comments (linux-rdma/opensm, opensm/osm_subnet.c,
 * include/iba/ib_types.h A10.4.3.x); the Mellanox OMNeT++ IB model
 * ([IBM] hcyang99/ib_model gen.cc, vlarb.cc, examples/evaluation_fattree128/ibcc.ini).
 *
 * Switch (SwitchCongestionSetting / SwitchPortCongestionSetting): a port
 * whose queue on a VL is above its threshold marks FECN (the BTH bit; the
 * packet's CS_PKT_F_CE here) on data packets leaving it:
 * - Threshold, 4 bits: 0 marks nothing, 1 "loose" ... 15 "aggressive"
 *   (OpenSM's comment). The spec leaves its mapping to a queue depth to
 *   the switch. ASSUMPTION: a port is congested on a VL when its queue
 *   there (wire bytes, the packet included, read as it leaves: the ECN
 *   marking's dequeue convention, cs_pkt_ecn.h) exceeds (16 - T) / 16 of
 *   one input buffer of that VL at the link's far end (the credits the
 *   link's receiver has, cs_pkt_credit.h): T = 15 marks above 1/16 of a
 *   buffer, T = 1 above 15/16.
 * - Packet_Size: packets smaller than this many credits (64 B) are never
 *   marked (OpenSM: "units are in credits"). ACKs, CNPs and flow-control
 *   packets are never marked here.
 * - Marking_Rate: "the mean number of packets between marking eligible
 *   packets with FECN" (ib_types.h). Here exactly that many eligible
 *   packets go unmarked between two marks of a (port, VL), counted per
 *   port and VL; 0 marks every eligible packet. (The OMNeT++ model marks
 *   one in markrate packets, vlarb.cc.)
 * - Victim_Mask: a port congested only because it lacks credits (a
 *   victim of congestion further on) marks only if its bit is set; a root
 *   (its queue grows while it has credits) always marks (ib_types.h
 *   victim_mask, A10.2.1.1.1; the OMNeT++ model marks only with full
 *   credits). Here a port is a victim for a packet when that packet's VL
 *   waited for credits since the VL's previous packet left.
 *
 * Destination HCA: a data packet arriving with FECN makes the receiver
 * return a BECN: in the ACK it sends for that packet (RC), else in a
 * congestion notification packet (CNP: IB framing, no payload, on the
 * data's VL; an assumption on its size) at once.
 *
 * Source HCA (CACongestionSetting, per QP: OpenSM's port_control bit 0 =
 * 0, "QP based congestion control", its default): CCTI, the index into
 * the congestion control table, starts at CCTI_Min; each BECN adds
 * CCTI_Increase up to CCTI_Limit; every CCTI_Timer the index drops by 1
 * down to CCTI_Min ("when the timer expires it will be reset to its
 * specified value, and 1 will be decremented from the CCTI"). The timer
 * runs freely from time 0 (computed when read: no event). CCTI_Timer is
 * counted in 1.024 us, the unit of the annex's TimeStamp (ib_types.h
 * A10.4.3.10); ASSUMPTION: the spec's text for the timer's unit was not
 * read here.
 *
 * The table (CongestionControlTable, A10.4.3.9): each entry has
 * CCT_Shift (2 bits) and CCT_Multiplier (14 bits), "used when calculating
 * the injection rate delay" (ib_types.h). ASSUMPTION on the unit: the
 * delay inserted after a packet is CCT_Multiplier x (that packet's time on
 * the sender's link) / 2^CCT_Shift, so a QP at index i sends at
 * line / (1 + multiplier / 2^shift). This is IB's static rate control's
 * inter-packet delay convention (an IPD of n packet times: line / (n +
 * 1)), and the Linux hfi1 driver's reading of the same table (its IPG is
 * (max packet time >> shift) x multiplier; recalled, not re-read in this
 * session). The OMNeT++ model instead computes its delay in ns from a
 * quadratic of CCTI (gen.cc), with no table. */
#ifndef CS_PKT_IBCC_H
#define CS_PKT_IBCC_H

#include <glib.h>

#include "sim/cs_evq.h"

/* OpenSM's CCT holds at most 128 entries (osm_subnet.h OSM_CCT_ENTRY_MAX). */
#define CS_PKT_IBCC_CCT_MAX 128
/* The unit of CCTI_Timer: 1.024 us (see above). */
#define CS_PKT_IBCC_TIMER_UNIT_PS ((cs_time_t)1024000)

typedef struct {
    guint8 shift;                     /* CCT_Shift, 0-3 */
    guint16 mult;                     /* CCT_Multiplier, 0-16383 */
} cs_pkt_ibcc_cct_entry_t;

typedef struct {
    /* switches */
    int threshold;                    /* 0-15; 0: no marking */
    guint32 marking_rate;             /* eligible packets left unmarked between two marks */
    guint32 packet_size;              /* credits (64 B): smaller packets are never marked */
    gboolean victim_mask;             /* victim ports mark too */
    /* HCAs, per QP */
    cs_time_t ccti_timer;             /* ps per decrement (CCTI_Timer x 1.024 us), > 0 */
    guint32 ccti_increase;            /* per BECN */
    guint32 ccti_min;
    guint32 ccti_limit;               /* the highest index, < the table's entries */
    /* the congestion control table */
    guint32 ncct;                     /* entries */
    cs_pkt_ibcc_cct_entry_t cct[CS_PKT_IBCC_CCT_MAX];
} cs_pkt_ibcc_cfg_t;

/* The table published with a sweep of IB CC settings on the OpenFabrics
 * list ([IBCC], fabric-models.md section 9): 128 entries, shift 0,
 * multiplier(i) = floor(7 i^2 / 95^2 / 0.218). Sets cfg->cct, ncct and
 * ccti_limit (127). */
void cs_pkt_ibcc_cct_ofa(cs_pkt_ibcc_cfg_t *cfg);
/* The values the engine uses when IB CC is on (each value's source in
 * cs_pkt_ibcc.c), with the table above. */
void cs_pkt_ibcc_cfg_default(cs_pkt_ibcc_cfg_t *cfg);
gboolean cs_pkt_ibcc_cfg_valid(const cs_pkt_ibcc_cfg_t *cfg);

/* The queue (wire bytes) above which a port with 'buffer' bytes of input
 * buffer per VL at its far end is congested; G_MAXUINT64 for threshold 0. */
guint64 cs_pkt_ibcc_threshold_bytes(int threshold, guint64 buffer);

/* A switch port's marker on one VL. */
typedef struct {
    guint32 skip;                     /* eligible packets since the last mark */
    guint64 marks;
} cs_pkt_ibcc_mark_t;

/* A data packet of 'wire' bytes leaves the port with 'queue' bytes on its
 * VL (the packet included); 'victim': its VL waited for credits. Returns
 * whether it is marked FECN (counted in m->marks). */
gboolean cs_pkt_ibcc_mark(const cs_pkt_ibcc_cfg_t *cfg, cs_pkt_ibcc_mark_t *m, guint64 queue, guint64 threshold,
                          guint32 wire, gboolean victim);

/* A source HCA's state for one QP. */
typedef struct {
    guint32 ccti;
    guint32 ccti_max;                 /* the highest it reached */
    cs_time_t t;                      /* applied up to here */
    cs_time_t t0;                     /* the QP's creation */
    double area;                      /* integral of CCTI over [t0, t], index x ps */
    guint64 becns;
} cs_pkt_ibcc_ca_t;

void cs_pkt_ibcc_ca_init(cs_pkt_ibcc_ca_t *ca, const cs_pkt_ibcc_cfg_t *cfg, cs_time_t now);
/* Applies the timer's decrements up to 'now' (>= the last call's). */
void cs_pkt_ibcc_ca_advance(cs_pkt_ibcc_ca_t *ca, const cs_pkt_ibcc_cfg_t *cfg, cs_time_t now);
/* A BECN arrived. */
void cs_pkt_ibcc_ca_becn(cs_pkt_ibcc_ca_t *ca, const cs_pkt_ibcc_cfg_t *cfg, cs_time_t now);
/* The delay after a packet that took 'pkt_ps' on the sender's link, at
 * the index of 'now': CCT[CCTI].mult x pkt_ps / 2^CCT[CCTI].shift. */
cs_time_t cs_pkt_ibcc_ca_delay(cs_pkt_ibcc_ca_t *ca, const cs_pkt_ibcc_cfg_t *cfg, cs_time_t pkt_ps, cs_time_t now);
/* CCTI averaged over [the QP's creation, now] (after advancing to now). */
double cs_pkt_ibcc_ca_avg(cs_pkt_ibcc_ca_t *ca, const cs_pkt_ibcc_cfg_t *cfg, cs_time_t now);

#endif
