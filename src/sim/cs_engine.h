/* An engine prices NCCL's decisions against the hardware and fills result
 * rows. Each engine is one const ops table (cs_engine_ops_t) registered in
 * cs_engine.c; the core never knows which one runs. Adding an engine
 * touches its own file and one registration line. */
#ifndef CS_ENGINE_H
#define CS_ENGINE_H

#include "models/cs_topo.h"
#include "models/cs_decide.h"
#include "models/cs_params.h"
#include "models/cs_result.h"

typedef struct {
    const cs_topo_t *topo;
    const cs_comm_t *comm;
    const cs_params_t *params;
    cs_coll_t coll;
    cs_dtype_t dtype;
    cs_redop_t redop;
    int root;
    guint64 seed;
} cs_engine_job_t;

/* One call of the collective: inputs and the decision already taken. */
typedef struct {
    guint64 size;          /* swept size, bytes (nccl-tests column) */
    guint64 count;         /* elements per rank */
    guint64 nccl_bytes;    /* NCCL's nBytes */
    const cs_decision_t *decision;
} cs_engine_call_t;

typedef struct cs_engine_ops {
    const char *name;          /* "analytic", "flow", "packet", "simgrid" */
    const char *description;
    /* Optional per-job state (e.g. an expanded network). */
    gboolean (*open)(const cs_engine_job_t *job, void **state_p, GError **err);
    /* Time of one call in seconds, in-place and out-of-place (they may
     * differ: in-place saves a copy for some algorithms). */
    gboolean (*predict)(void *state, const cs_engine_job_t *job, const cs_engine_call_t *call,
                        double time_s[2], GError **err);
    void (*close)(void *state);
} cs_engine_ops_t;

const cs_engine_ops_t *cs_engine_find(const char *name);
/* Comma-separated names of the engines built in. */
const char *cs_engine_names(void);

/* Runs a whole sweep: decides each size, prices it with the engine, fills a
 * result whose producer is "model:<engine>". sizes has nsizes entries. */
cs_result_t *cs_engine_run_sweep(const cs_engine_ops_t *ops, const cs_engine_job_t *job,
                                 const guint64 *sizes, int nsizes, GError **err);

#endif
