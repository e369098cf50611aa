/* One design priced: a scenario (already built from its file, the flags and
 * the environment, as collsim run builds it) -> its model, topology and
 * communicator (cs_design_t, the steps collsim run, compare and sweep share)
 * -> its model's sweep of sizes, with the link statistics the engine
 * reports (cs_predict_scenario: compare and sweep; run streams its rows from
 * the same cs_design_t). Also the "KEY=VALUE" setter compare and sweep use
 * to vary a scenario, on the scenario parser itself, so that every key works
 * and a bad one gets its messages, and the plot's curve of a result. */
#ifndef CS_PREDICT_H
#define CS_PREDICT_H

#include <glib.h>
#include "io/cs_scenario.h"
#include "io/cs_svg.h"
#include "models/cs_params.h"
#include "models/cs_result.h"
#include "sim/cs_engine.h"
#include "io/cs_nccltests_log.h"

/* ---- a design made ready to price -------------------------------------------- */

typedef struct {
    const cs_engine_ops_t *ops;   /* the scenario's model */
    cs_params_t params;           /* built in, or the scenario's calibration */
    cs_topo_t *topo;
    cs_comm_t *comm;              /* NCCL's communicator; NULL for [job NAME] groups (one per job) */
} cs_design_t;

void cs_design_init(cs_design_t *d);
void cs_design_clear(cs_design_t *d);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(cs_design_t, cs_design_clear)

/* The model first (a bad --model is named before a bad topology): validates
 * s, finds its model, loads its calibration. Errors: one line, prefixed. */
gboolean cs_design_model(cs_design_t *d, const cs_scenario_t *s, GError **err);
/* Commands that price collectives (run, compare, sweep) refuse a
 * [workload], which only collsim step reads, with where it was set. */
gboolean cs_design_no_workload(const cs_scenario_t *s, const char *command, GError **err);
/* Then the topology and, for one collective (no [job NAME] groups), the
 * root's rank and NCCL's communicator. */
gboolean cs_design_build(cs_design_t *d, const cs_scenario_t *s, GError **err);
/* s's collective on d as an engine job; no trace sink, no link statistics. */
cs_engine_job_t cs_design_job(const cs_design_t *d, const cs_scenario_t *s);
/* What a result's header says beyond the engine's notes: the scenario's
 * name as the source, then the -g restriction and NCCL's warnings
 * (cs_nccl_env_warnings of s) before the engine's own notes. */
void cs_predict_header_notes(cs_result_t *r, const cs_scenario_t *s, const GPtrArray *warnings);
/* What nccl-tests would do with s's sweep that the prediction does not
 * see, appended to 'warnings': buffers of the largest of 'sizes' that do
 * not fit t's smallest GPU (t NULL: not checked, before a topology is
 * built), calls grouped by -m. run prints them, compare and sweep keep
 * them in each result's notes. */
void cs_predict_sweep_warnings(const cs_scenario_t *s, const cs_topo_t *t, const guint64 *sizes, int nsizes,
                               GPtrArray *warnings);

/* ---- a sweep priced at once -------------------------------------------------- */

typedef struct {
    cs_result_t *result;          /* producer "model:<engine>", rows in the sweep's order */
    const cs_engine_ops_t *ops;   /* the model that priced it */
    GPtrArray *link_stats;        /* per row: cs_link_stats_t, or NULL for a row that moved no
                                   * data; the array itself NULL when the model reports none */
    char *topo_desc;              /* the topology's description */
    guint64 *sizes;               /* the swept sizes (requested, as -b/-e/-f make them), per row */
    int nsizes;
} cs_prediction_t;

void cs_prediction_free(cs_prediction_t *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(cs_prediction_t, cs_prediction_free)

/* Validates s and prices its sweep with its model. Refuses what a single
 * sweep cannot be ([job NAME] groups: collsim run prices those) with one
 * line naming where it was set. 'command' ("compare") is used in messages.
 * The result's notes hold the warnings collsim run prints in its header.
 * want_stats: keep the link statistics the model reports (memory and time
 * for --model flow). */
cs_prediction_t *cs_predict_scenario(const cs_scenario_t *s, const char *command, gboolean want_stats,
                                     GError **err);

/* A result as a plot's curve: bus bandwidth and time per swept size
 * (sizes[k] for row k, as requested), the algorithm/protocol where a row
 * ran; an empty call is no point. The arrays made go to 'keep' (g_free). */
cs_svg_series_t cs_predict_svg_series(const cs_result_t *r, const guint64 *sizes, const char *label,
                                      GPtrArray *keep);
/* The plot's caption: "model(s): MODELS prediction, not a measurement
 * (collsim VERSION COMMAND)"; models: "analytic" or "analytic, flow". */
char *cs_predict_svg_caption(const char *models, const char *command);

/* A CSV number as compare and sweep write it: after a comma, empty when
 * negative (missing) or not finite. Fields: cs_write_csv_field. */
void cs_predict_csv_num(GString *g, double v);

/* ---- varying a scenario ------------------------------------------------------ */

/* A scenario key as the user names it: "group.key" (topology.nodes,
 * nccl.NCCL_ALGO, scenario.model, collective.op), a bare NCCL_* name, or a
 * flag's long name (nodes, fabric, model, topo). Sets *group_p and *key_p
 * to the canonical "group" and "key" ("topo" stays "topology" "topo": a
 * preset or a file, as --topo). Errors (no prefix): unknown group or key,
 * the keys the command sets itself ([output]) and [job NAME] keys. */
gboolean cs_predict_key_resolve(const char *name, char **group_p, char **key_p, GError **err);

/* Sets one resolved key in s through the scenario parser (values checked
 * as in a scenario file; relative paths from the working directory);
 * origin ("collsim: --grid topology.nodes") is what later messages name.
 * Setting a preset drops a file and the reverse. Errors carry no prefix. */
gboolean cs_predict_set(cs_scenario_t *s, const char *group, const char *key, const char *value, const char *origin,
                        GError **err);

/* Splits "a,b\,c" at unescaped commas ("\," is a comma in a value). */
char **cs_predict_split_list(const char *list);

/* A design variant's "K=V,K=V" list: as cs_predict_split_list, and a piece
 * that does not start with "NAME=" continues the previous value, so that
 * NCCL_IB_HCA=mlx5_0,mlx5_1 is one setting. Returns NULL-terminated pairs
 * (name, value, name, value, ...) or NULL with err set (no prefix). */
char **cs_predict_split_settings(const char *list, GError **err);

/* The measured run's NCCL on 'comm', as validate and calibrate price a
 * log: 'version' (a flag's or a manifest's, checked whole) over the log's
 * line; without either, the bound a line only older NCCLs print sets what
 * changed above it (cs_comm_nccl_version_at_most); and the nccl-tests build
 * that says which NCCL calls the benchmark makes (cs_comm_p2p_extra_calls).
 * 'log' may be NULL (a collsim JSON result). */
void cs_predict_measured_nccl(cs_comm_t *comm, const char *version, const cs_nccltests_log_t *log);
/* Then a bound from outside the log ('version_max', checked whole; NULL
 * none): where no version is known it bounds what changed above it, unless
 * the log's own bound is tighter. Returns TRUE when it is the bound used. */
gboolean cs_predict_measured_nccl_max(cs_comm_t *comm, const char *version_max);

#endif
