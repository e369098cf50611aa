/* --trace FILE: an engine's timeline (cs_sim_sink_t) as Chrome Trace Event
 * JSON, which Perfetto (ui.perfetto.dev) and chrome://tracing open.
 * Layout: a "runs" process (one span per engine run), one process per job
 * with a "calls" track and one track per (rank, channel, peer), and a
 * "links" process with one utilization counter per resource, and a
 * "fabric" process with the gauges of a packet-level engine (queue depths,
 * pause states, QP rates). Several runs
 * are laid one after the other on the time axis. Identical callback
 * sequences give byte-identical files. */
#ifndef CS_TRACE_H
#define CS_TRACE_H

#include <glib.h>
#include "sim/cs_engine.h"

typedef struct cs_trace cs_trace_t;

cs_trace_t *cs_trace_new(void);
void cs_trace_free(cs_trace_t *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(cs_trace_t, cs_trace_free)

/* The sink to hand to the engine (job->sink, multi->sink); owned by t. */
cs_sim_sink_t *cs_trace_sink(cs_trace_t *t);

/* Names the next engine run ("allreduce 1 GiB", a scenario's name). Each
 * run is placed after the previous one (the sink's times restart at 0),
 * with a gap of 1% of the previous run (at least 1 us). Events that arrive
 * after a run's end without a new cs_trace_begin_run start a run named
 * "run N". */
void cs_trace_begin_run(cs_trace_t *t, const char *label);

/* Names job j's process ("job 'train-a' (16 ranks)"); by default "job N",
 * or "ranks" when job 0 is the only one. */
void cs_trace_set_job_name(cs_trace_t *t, int job, const char *name);

/* What produced the timeline, for the file's otherData ("model:flow", the
 * default). */
void cs_trace_set_producer(cs_trace_t *t, const char *producer);

/* Writes the JSON to path atomically (temporary file + rename). Error
 * (CS_ERROR_IO): "PATH: cannot write the trace: REASON"; nothing written. */
gboolean cs_trace_write(cs_trace_t *t, const char *path, GError **err);

/* The JSON text (newly allocated); what cs_trace_write writes. */
char *cs_trace_to_json(cs_trace_t *t, gsize *len_p);

#endif
