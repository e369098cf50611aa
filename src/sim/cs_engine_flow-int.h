/* Private to the flow engine and its tests and benchmark. Model:
 * docs/model-flow.md. */
#ifndef CS_ENGINE_FLOW_INT_H
#define CS_ENGINE_FLOW_INT_H

#include "sim/cs_engine.h"
#include "sim/cs_evq.h"

/* The engine's ops table, registered in cs_engine.c. */
extern const cs_engine_ops_t cs_engine_flow;

typedef struct {
    double time_s;           /* the call's time, launch included */
    guint64 events;          /* events processed */
    guint64 recomputes;      /* max-min fair share computations */
    int lanes;               /* (channel, position) pairs simulated */
    gboolean folded;         /* simulated one node of each ring (exact symmetry) */
} cs_flow_stats_t;

typedef struct cs_flow cs_flow_t;

cs_flow_t *cs_flow_new(const cs_engine_job_t *job, GError **err);
void cs_flow_free(cs_flow_t *f);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(cs_flow_t, cs_flow_free)
/* Simulates one call. 'allow_fold' FALSE forces the whole ring even where
 * node symmetry would make one node exact (tests compare both). */
gboolean cs_flow_simulate(cs_flow_t *f, const cs_engine_call_t *call, gboolean allow_fold,
                          cs_flow_stats_t *stats_p, GError **err);
/* Payload-weighted wire bytes each resource carried in the last call
 * (topology links first, then per GPU: NVLink out port, in port, memory);
 * the seam for link statistics. */
const double *cs_flow_link_bytes(const cs_flow_t *f, int *n_p);

#endif
