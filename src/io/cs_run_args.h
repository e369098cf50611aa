/* The command line shared by `collsim run` and `collsim real`: a scenario
 * file, its keys as flags (nccl-tests's -b -e -f ...), the topology flags,
 * --env and -t; then the effective scenario built from them (file < flags,
 * [nccl] < environment < --env). One parser, so both commands take the same
 * scenario and flags and cannot drift apart. */
#ifndef CS_RUN_ARGS_H
#define CS_RUN_ARGS_H

#include <glib.h>
#include "io/cs_scenario.h"
#include "models/cs_topo.h"
#include "models/cs_decide.h"

typedef struct {
    cs_scenario_t scratch;    /* flags are checked here as they are parsed */
    GPtrArray *flags;         /* internal: flag values, command-line order */
    GPtrArray *envs;          /* "NCCL_X=Y" from --env, in order */
    cs_topo_spec_t topo;      /* topology flags */
    char *scenario;
    gboolean dump;
} cs_run_args_t;

/* What differs between the commands that share the parser. */
typedef struct {
    const char *command;        /* "run": used in "collsim: run: ..." messages */
    const char *parameter;      /* g_option_context_new's text */
    const char *summary, *description;
    const GOptionEntry *extra;  /* more main-group options (NULL-terminated), or NULL */
    gpointer extra_data;        /* user_data of callbacks among 'extra' */
    gboolean extra_main;        /* 'extra' is the main group (--help); the scenario
                                 * options go to --help-scenario */
    gboolean workload;          /* the [workload] keys as flags, a group of their own, and none of
                                 * the sweep's ([collective] keys, csv, extra-columns, link-stats),
                                 * which a step does not read (collsim step) */
    gboolean measures;          /* collsim real: the flags only a prediction reads (cs_run_args_check_measured
                                 * refuses them) are left out of --help, still parsed to be refused */
    const GOptionEntry *main_extra; /* options added to the scenario options' group
                                 * (NULL-terminated, or NULL); no callbacks: that
                                 * group's user_data is the parser's */
} cs_run_args_cmd_t;

void cs_run_args_init(cs_run_args_t *a);
void cs_run_args_clear(cs_run_args_t *a);
/* Parses argv (modified as g_option_context_parse does). Errors are one
 * line ("collsim: -b: ..."), CS_ERROR_INPUT. */
gboolean cs_run_args_parse(cs_run_args_t *a, const cs_run_args_cmd_t *cmd, int argc, char **argv, GError **err);
/* Loads the scenario file, applies the flags, the process's NCCL_*
 * variables and --env, and merges the topology flags into s. 'a' is not
 * changed: building twice from it gives the same scenario. */
gboolean cs_run_args_build(const cs_run_args_t *a, cs_scenario_t *s, GError **err);
/* For commands that measure (real, real --verbs): refuses what only a
 * simulation has, --trace, --link-stats and [job NAME] groups, and --svg
 * (they draw no plot), with one line naming where it was set. */
gboolean cs_run_args_check_measured(const cs_scenario_t *s, const char *command, GError **err);
/* --json, --csv, --trace and --svg are written at the end of a run that
 * may take minutes: a path that cannot be written, or one file named for
 * two of them, fails now, before any output (cs_output_check), with where
 * the path was set. */
gboolean cs_run_args_check_outputs(const cs_scenario_t *s, GError **err);
/* Where a scenario value came from ("FILE:LINE: key", "collsim: -b"),
 * or 'fallback'. */
const char *cs_run_args_origin(const cs_scenario_t *s, const char *id, const char *fallback);
/* The nccl-tests command that measures the same thing, in the scenario's
 * process layout: "[mpirun -np N -N P -x NCCL_X=Y ...] all_reduce_perf -b
 * ... -g G [-t T]" (mpirun unless one process on one node). */
char *cs_run_args_nccl_tests_command(const cs_scenario_t *s, int nnodes, int ngpus, int ppn);
/* The scenario's process layout on a node of 'gpn' GPUs: processes
 * (procs-per-node; default one per GPU, or one with threads), threads per
 * process (-t) and GPUs per thread (nccl-tests -g), as the command above
 * and the "# nThread T nGpus G" line print them. */
void cs_run_args_layout(const cs_scenario_t *s, int gpn, int *procs_p, int *threads_p, int *gpus_p);
/* Gives 'comm' the scenario's layout (cs_comm_set_layout), which the
 * engines charge launches by; call after cs_comm_new. Errors start with
 * where the layout was set ("s.ini:4: procs-per-node: ..."). */
gboolean cs_run_args_apply_layout(const cs_scenario_t *s, cs_comm_t *comm, GError **err);

#endif
