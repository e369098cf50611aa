/* Results: the same structure from every engine and from real runs, so that
 * writers, validate and calibrate never care where numbers came from.
 * 'producer' always says which model or measurement made them. */
#ifndef CS_RESULT_H
#define CS_RESULT_H

#include <glib.h>
#include "models/cs_coll.h"

#define CS_OOP 0   /* out-of-place */
#define CS_INP 1   /* in-place */

typedef struct {
    guint64 size;          /* bytes, nccl-tests's "size" column */
    guint64 count;         /* elements, nccl-tests's "count" column */
    cs_dtype_t dtype;
    cs_redop_t redop;
    int root;              /* -1 when the collective has none */
    double time_us[2];     /* out-of-place, in-place; < 0 = missing */
    double algbw[2];       /* GB/s */
    double busbw[2];       /* GB/s */
    long wrong[2];         /* -1 = not checked ("N/A") */
    /* what NCCL chose (model: predicted; real: as reported or unknown) */
    char algo[16];         /* "" when unknown */
    char proto[16];
    int nchannels;         /* 0 when unknown */
    char transport[64];
    double nccl_est_us;    /* NCCL's own cost-model estimate, < 0 when none */
} cs_result_row_t;

/* What a packet-level engine counted on one network link at one priority
 * in one call (--json "network", --link-stats). */
typedef struct {
    char *link;            /* "leaf0 -> n1.nic0" */
    int prio;
    guint64 tx_pkts;       /* packets sent (data, ACKs, CNPs) */
    guint64 pause_sent;    /* PFC XOFF frames its receiver sent back on it */
    guint64 pause_received;/* ... that its sender received (each pause and refresh) */
    double paused_us;      /* time its sender was paused */
    guint64 ecn_marks;     /* packets marked CE as they left */
    guint64 drops;         /* packets dropped entering the switch it reaches */
    double queue_max_bytes, queue_avg_bytes;   /* its egress queue (wire bytes) */
    /* InfiniBand (credits; the pause and ECN fields stay 0) */
    guint64 fc_sent;       /* flow-control packets its receiver sent back for this VL */
    double starved_us;     /* time its sender held a packet its credits did not cover */
    /* InfiniBand congestion control (its FECN marks are ecn_marks); on a
     * NIC's link, its QPs on this VL: BECNs they received, their CCTI's
     * highest and time-average over the call (the mean of the QPs') */
    guint64 becns;
    guint32 ccti_max;
    double ccti_avg;
} cs_net_port_counters_t;

typedef struct {
    char *name;            /* a switch (shared buffer) or a NIC (receive buffer) */
    double buffer_max_bytes, buffer_avg_bytes;
} cs_net_buffer_counters_t;

/* SHARP in-switch aggregation at one switch in one call (the packet
 * engine's CollNet): packets it reduced from all its children and sent on,
 * result copies it sent down to its children, and the most child packets
 * it held at once waiting for the others. */
typedef struct {
    char *name;
    guint64 reduced, copies_down, held_max;
} cs_net_sharp_counters_t;

typedef struct {
    gboolean credit;       /* InfiniBand: credits per VL (prio is the VL), not PFC and ECN */
    guint64 packet_events, drops, retransmitted, naks, timeouts, pause_frames, ecn_marks, cnps;
    double paused_us;      /* summed over links and priorities */
    guint64 fc_packets;    /* InfiniBand: flow-control packets, all links */
    guint64 ar_moves;      /* InfiniBand: data packets adaptive routing sent another way at a switch */
    double starved_us;     /* ... credit-starved time, summed over links and VLs */
    gboolean ibcc;         /* InfiniBand congestion control ran: ecn_marks are FECN marks */
    guint64 becns;         /* ... BECNs the senders received */
    guint32 ccti_max;      /* ... the highest CCTI of any QP */
    int nports;
    cs_net_port_counters_t *ports;   /* the (link, priority) pairs that carried packets, by link then priority */
    int nbuffers;
    cs_net_buffer_counters_t *buffers;   /* the buffers that held anything */
    gboolean sharp;        /* SHARP trees ran (CollNet): the fields below are meaningful */
    guint64 sharp_reduced, sharp_copies_down, sharp_held_max;   /* summed over switches; the most held */
    int nsharp;
    cs_net_sharp_counters_t *sharp_switches;   /* the switches with an aggregation node, in topology order */
} cs_net_counters_t;

void cs_net_counters_free(cs_net_counters_t *c);
cs_net_counters_t *cs_net_counters_copy(const cs_net_counters_t *c);

typedef struct {
    char *producer;        /* "model:analytic", "model:flow", "measured:nccl-tests", "measured:collsim-real" */
    char *source;          /* scenario/topology description or log file name */
    cs_coll_t coll;
    int nranks, nnodes;
    int proc_threads, proc_gpus;   /* a measured run's nccl-tests "nThread T nGpus G" (threads per
                                    * process, GPUs per thread); 0: unknown */
    int proc_from_line;    /* > 0: they come from the log's command line at that line (-t, -g), the log
                            * having no "nThread" line */
    double avg_busbw;      /* nccl-tests's "# Avg bus bandwidth" (over out-of-place and in-place rows) */
    GArray *rows;          /* cs_result_row_t */
    GPtrArray *notes;      /* lines printed as "# ..." in the header (warnings, assumptions) */
    GPtrArray *net;        /* cs_net_counters_t per row (NULL entries) from a packet engine; NULL: none */
} cs_result_t;

cs_result_t *cs_result_new(const char *producer, const char *source, cs_coll_t coll, int nranks, int nnodes);
void cs_result_free(cs_result_t *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(cs_result_t, cs_result_free)
void cs_result_add_note(cs_result_t *r, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* Fills algbw/busbw of a row from its time with nccl-tests's formulas. */
void cs_result_row_fill_bw(const cs_result_t *r, cs_result_row_t *row);
/* Recomputes avg_busbw as nccl-tests does: mean busbw over all rows and
 * both placements present. */
void cs_result_finish(cs_result_t *r);

#endif
