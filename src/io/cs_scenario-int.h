/* Scenario internals shared by cs_scenario.c, cs_topo_spec.c, cmd_run.c and
 * the fuzz target. One table lists every scenario key with its flag, so the
 * INI reader and the command line cannot drift apart. */
#ifndef CS_SCENARIO_INT_H
#define CS_SCENARIO_INT_H

#include "io/cs_scenario.h"

typedef struct {
    const char *group;      /* "collective" */
    const char *key;        /* "minbytes" */
    char short_flag;        /* 'b', or 0 */
    const char *long_flag;  /* "minbytes" (flag --minbytes) */
    const char *alias;      /* nccl-tests's long name when it differs ("warmup_iters"), or NULL */
    const char *arg;        /* "SIZE"; NULL for flags without a value */
    const char *doc;
} cs_scenario_key_t;

/* Keys of [scenario], [collective] and [output] (the [topology] keys are the
 * option group's; [nccl] takes any NCCL_* name). NULL-terminated. */
extern const cs_scenario_key_t cs_scenario_keys[];
/* Keys of [topology], NULL-terminated; "file" and "preset" share --topo. */
extern const cs_scenario_key_t cs_topo_spec_keys[];

/* The value of an "op", "datatype" or "redop" key as its enum; errors
 * "unknown collective 'X'; expected one of ..." (no prefix). */
gboolean cs_scenario_parse_enum(const char *key, const char *v, int *out_p, GError **err);

/* A truth value: true/yes/on/1 or false/no/off/0 (any case). */
gboolean cs_scenario_parse_bool(const char *v, gboolean *out_p);

/* Keys of [fabric] (cs_scenario_fabric.c), in the order of
 * cs_fabric_key_t, NULL-terminated; each is also a flag (--help-fabric). */
extern const cs_scenario_key_t cs_fabric_keys[];
/* Parses one [fabric] value into cfg and remembers its text and origin
 * (errors "what; expected", no prefix). */
gboolean cs_scenario_fabric_set(cs_fabric_cfg_t *cfg, const char *key, const char *value, const char *origin,
                                GError **err);
/* Checks the keys against each other; errors start with the origin of the
 * key at fault. */
gboolean cs_scenario_fabric_check(const cs_fabric_cfg_t *cfg, GError **err);
/* Writes the given keys back as [fabric]. */
void cs_scenario_fabric_to_kf(const cs_fabric_cfg_t *cfg, GKeyFile *kf);

/* Keys of [workload] (cs_scenario_workload.c), NULL-terminated; each is
 * also a flag of collsim step. */
extern const cs_scenario_key_t cs_workload_keys[];
/* Parses one [workload] value (creating s->workload; errors "what;
 * expected", no prefix) and remembers its text and origin. */
gboolean cs_scenario_workload_set(cs_scenario_t *s, const char *key, const char *value, const char *origin,
                                  GError **err);
void cs_scenario_workload_to_kf(const cs_scenario_t *s, GKeyFile *kf);
cs_scenario_workload_t *cs_scenario_workload_new(void);
void cs_scenario_workload_free(cs_scenario_workload_t *w);

/* Keys of a [job NAME] group (no flags), NULL-terminated. */
extern const cs_scenario_key_t cs_scenario_job_keys[];

/* The key in 'group' ("job NAME" groups: the job keys), or NULL. */
const cs_scenario_key_t *cs_scenario_key_find(const char *group, const char *key);
/* "job NAME" -> NAME, or NULL when the group is not a job's. */
const char *cs_scenario_job_group_name(const char *group);
/* Whether NAME is a valid job name (letters, digits, '-', '_', '.'). */
gboolean cs_scenario_job_name_ok(const char *name);
/* The job named NAME, created (at the end, with 'origin') if absent. */
cs_scenario_job_t *cs_scenario_job_get(cs_scenario_t *s, const char *name, const char *origin);
void cs_scenario_job_free(gpointer j);
/* Parses one job key (errors "what; expected", no prefix); an NCCL_* key
 * is the job's own variable, 'origin' ("FILE:LINE") its place. */
gboolean cs_scenario_job_set(cs_scenario_job_t *j, const char *key, const char *value, const char *origin,
                             GError **err);
/* Writes the jobs back as [job NAME] groups. */
void cs_scenario_jobs_to_kf(const cs_scenario_t *s, GKeyFile *kf);
/* The process layout's [collective] keys (cs_scenario_job.c):
 * procs-per-node and nthreads. Parses one (errors "what; expected", no
 * prefix); writes the set ones back. */
gboolean cs_scenario_layout_set(cs_scenario_t *s, const char *key, const char *value, GError **err);
void cs_scenario_layout_to_kf(const cs_scenario_t *s, GKeyFile *kf);
/* By what the user typed: "-b", "--minbytes" or "--warmup_iters". */
const cs_scenario_key_t *cs_scenario_key_by_flag(const char *option_name);

/* Parses and stores one value. Errors carry only "what; expected" (no
 * prefix): the caller prefixes "FILE:LINE: key: " or "collsim: -b: ".
 * 'origin' (the same prefix without the trailing ": ") is remembered for
 * later cross-field messages. 'base_dir' resolves relative input paths
 * (the scenario file's directory), NULL for the command line. */
gboolean cs_scenario_set(cs_scenario_t *s, const char *group, const char *key, const char *value,
                         const char *origin, const char *base_dir, GError **err);
gboolean cs_topo_spec_set(cs_topo_spec_t *spec, const char *key, const char *value,
                          const char *base_dir, GError **err);
/* Remembers where the value of topology key 'key' came from ("FILE:LINE:
 * key"), for the errors of cs_topo_spec_build. */
void cs_topo_spec_set_origin(cs_topo_spec_t *spec, const char *key, const char *origin);
/* "--topo X": a preset name if one exists, otherwise a file. */
gboolean cs_topo_spec_set_topo(cs_topo_spec_t *spec, const char *value, GError **err);

/* cs_scenario_load from memory; 'name' is used in messages and to resolve
 * relative paths. */
gboolean cs_scenario_load_mem(cs_scenario_t *s, const char *buf, gsize len, const char *name,
                              GError **err);

/* Messages quote user text, which may hold escaped newlines or other
 * control characters: rewrites them as \n, \t, \xHH so a message stays
 * one line. */
void cs_scenario_error_one_line(GError *err);

/* Checks one --env argument: "NCCL_NAME=VALUE" with a name of letters,
 * digits and '_'. Otherwise sets "collsim: FLAG: 'S' is not an NCCL
 * variable setting; expected NCCL_NAME=VALUE" (one line) and fails. Shared
 * by every command that takes --env. */
gboolean cs_scenario_check_env_flag(const char *flag, const char *setting, GError **err);

/* A whole number in [min, max]; errors "'V' is not a whole number;
 * expected WHAT" or "V is out of range; expected WHAT" (no location: the
 * caller prefixes it). */
gboolean cs_scenario_parse_count(const char *v, gint64 min, gint64 max, const char *what, int *out_p,
                                 GError **err);

/* A size as nccl-tests flags write it: "32M" when exact, else bytes. */
char *cs_scenario_size_str(guint64 bytes);

/* Most sizes one sweep may have (nccl-tests has no limit; a typo like -i 1
 * with -e 1G would otherwise ask for a billion calls). */
#define CS_SCENARIO_MAX_SIZES 10000

#endif
