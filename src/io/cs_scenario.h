/* A scenario: everything one run needs, from an INI file (GKeyFile), from
 * command-line flags, or both (flags override the file). Documented in
 * docs/collsim-scenario.5; every flag has a key and the reverse. */
#ifndef CS_SCENARIO_H
#define CS_SCENARIO_H

#include <glib.h>
#include "models/cs_coll.h"
#include "models/cs_topo.h"
#include "models/cs_nccl_env.h"
#include "models/cs_fabric_cfg.h"
#include "models/cs_workload.h"

/* The [topology] keys (cs_topo_spec_keys): file, preset, gpu, gpus,
 * sockets, cpu, p2p, nodes, nic, nics-per-node, fabric, oversubscription,
 * nvlink-bridge, visible-gpus. */
#define CS_TOPO_SPEC_NKEYS 14

/* How to obtain the topology: a file (our XML or an NCCL dump) or a preset,
 * plus builder parameters. Unset fields are 0/NULL. */
typedef struct {
    char *file;            /* [topology] file */
    char *preset;          /* [topology] preset */
    char *gpu;             /* --gpu MODEL (pcie preset) */
    int gpus;              /* --gpus N: first N GPUs of each node (0 = all) */
    char *visible_gpus;    /* --visible-gpus LIST: the GPUs of each node a
                            * run sees, as CUDA_VISIBLE_DEVICES (NULL = all) */
    int sockets;           /* --sockets S (pcie preset) */
    char *cpu;             /* --cpu PART (pcie preset): a cs_cpu_part_find_x86 key */
    int p2p;               /* --p2p on|off: 1/0, -1 unset */
    int nvlink_bridge;     /* --nvlink-bridge: a cs_nvlink_bridge_t, 0 unset */
    int nodes;             /* --nodes N (0 = the preset's own, 1) */
    char *nic;             /* --nic KIND */
    int nics_per_node;     /* 0 = preset default */
    char *fabric;          /* rail | fat-tree */
    double oversubscription; /* 0 = 1 */
    char *origin;          /* "FILE:LINE" of the topology key, for messages */
    char *key_origins[CS_TOPO_SPEC_NKEYS]; /* per key of cs_topo_spec_keys:
                            * where its value came from ("s.ini:3: gpus",
                            * "collsim: --gpus"), NULL for a flag parsed into
                            * this spec or no value; errors about the value
                            * start with it */
    GError *flag_error;    /* the first bad topology flag, raised once every
                            * flag is parsed (cs_topo_spec_option_group), so
                            * that a bad --model is reported first */
} cs_topo_spec_t;

/* [job NAME]: one of several jobs sharing the machine
 * (docs/collsim-scenario.5). Unset: coll/dtype/redop/root < 0 (the
 * [collective] values), nodes/gpus NULL (all). */
typedef struct {
    char *name;
    char *nodes, *gpus;    /* index lists as written: "0-3,8" */
    int coll, dtype, redop, root;
    guint64 size;          /* 0 = unset (an error) */
    double start_s;
    int iters;             /* calls back to back (default 1) */
    cs_nccl_env_t *env;    /* the job's own NCCL_* keys (NULL: none); over the
                            * run's (cs_scenario_job_env) */
    char *origin;          /* "FILE:LINE" of the [job NAME] line */
} cs_scenario_job_t;


/* [workload] as read (collsim step): the keys given, resolved into a
 * cs_wl_spec_t by cs_scenario_workload_spec. */
typedef struct {
    char *arch;            /* a preset's name, NULL: custom */
    cs_wl_model_t shape;   /* shape keys given over the preset (0: unset) */
    int gated;             /* gated-mlp: -1 unset, else 0/1 */
    cs_wl_spec_t spec;     /* the other keys (defaults: cs_wl_spec_init) */
    GHashTable *text;      /* key -> value as written (round trip) */
    GHashTable *origins;   /* key -> "FILE:LINE: key" or "collsim: --key" */
} cs_scenario_workload_t;

typedef struct {
    char *path;            /* scenario file, NULL when from flags only */
    char *name;            /* [scenario] name */
    cs_topo_spec_t topo;
    cs_coll_t coll;
    cs_dtype_t dtype;
    cs_redop_t redop;
    int root;
    guint64 minbytes, maxbytes, stepbytes;
    double stepfactor;     /* 0 = use stepbytes */
    int iters, warmup, check, agg_iters;
    int procs_per_node;    /* [collective] procs-per-node (mpirun -N): 0 = one per GPU */
    int nthreads;          /* [collective] nthreads (nccl-tests -t): 0 = 1 */
    char *model;           /* "analytic" (default) */
    gboolean exact;        /* [scenario] exact: no approximation that saves time */
    char *calibration;     /* parameter file */
    guint64 seed;
    char *json_out, *csv_out;
    char *svg_out;         /* [output] svg: the sweep plotted (collsim run) */
    gboolean extra_columns; /* [output] extra-columns: algo, proto, nch, transport (default TRUE) */
    char *trace_out;       /* [output] trace: Chrome Trace Event JSON of the simulation */
    gboolean link_stats;   /* [output] link-stats: each link's utilization and the bottleneck */
    gboolean alternatives; /* [output] alternatives: price what NCCL's tuner passed over (closed-form engines) */
    GPtrArray *jobs;       /* cs_scenario_job_t, file order; empty: one job, the sweep */
    cs_nccl_env_t *env;    /* [nccl] section */
    cs_fabric_cfg_t fabric; /* [fabric] section (--model packet) */
    cs_scenario_workload_t *workload; /* [workload] (collsim step), NULL when absent */
    GHashTable *origins;   /* "group.key" -> where the value came from ("FILE:LINE: key"
                            * or "collsim: -b"), for messages */
} cs_scenario_t;

/* Defaults as nccl-tests: -b 32M -e 32M -i 1M -f 1 -n 20 -w 1 -c 1, float,
 * sum, root 0, allreduce, model analytic, seed 1. */
void cs_scenario_init(cs_scenario_t *s);
void cs_scenario_clear(cs_scenario_t *s);

/* Reads an INI scenario into s (over whatever s holds). Errors are
 * "FILE:LINE: what is wrong; what was expected". Unknown groups or keys are
 * errors too (a typo must not silently fall back to a default). */
gboolean cs_scenario_load(cs_scenario_t *s, const char *path, GError **err);
/* An NCCL variable's name as [nccl] takes it: NCCL_ then letters, digits, '_'. */
gboolean cs_scenario_is_nccl_name(const char *k);
/* The NCCL variables job 'j' runs with: the run's (scenario [nccl], the
 * environment, --env) with the job's own NCCL_* keys over them, as a job
 * launched with its own environment sees them. A new environment. */
cs_nccl_env_t *cs_scenario_job_env(const cs_scenario_t *s, const cs_scenario_job_t *j);
/* Checks the whole scenario for consistency (sizes, topology source). */
gboolean cs_scenario_validate(const cs_scenario_t *s, GError **err);
/* The list of sizes swept, as nccl-tests does it. */
guint64 *cs_scenario_sizes(const cs_scenario_t *s, int *n_p);
/* Marks the indices an index list names ("0-3,8,10-11"; "all") in mask
 * (n entries, zeroed first). Errors: syntax, an index >= n ("what" names
 * them: "node", "GPU"). No prefix: the caller adds where. */
gboolean cs_scenario_index_list(const char *v, int n, const char *what, gboolean *mask, GError **err);
/* As cs_scenario_index_list, marking only the first FIRST distinct indices
 * in the list's order (CUDA_VISIBLE_DEVICES with -g FIRST); FIRST <= 0: all. */
gboolean cs_scenario_index_list_first(const char *v, int n, const char *what, int first, gboolean *mask,
                                      GError **err);

/* The workload the [workload] keys describe: the preset with the shape
 * keys over it, checked against each other. Errors name the key ("s.ini:4:
 * top-k: ..."); no [workload]: an error saying what to give. */
gboolean cs_scenario_workload_spec(const cs_scenario_t *s, cs_wl_spec_t *spec_p, GError **err);
/* Where a [workload] key came from ("s.ini:4: tp", "collsim: --tp"), or the key. */
const char *cs_scenario_workload_origin(const cs_scenario_t *s, const char *key);

/* Builds the topology the spec describes (file or preset + builders,
 * then --gpus). */
cs_topo_t *cs_topo_spec_build(const cs_topo_spec_t *spec, GError **err);
/* Writes the scenario back as INI (round trip; used by tests and --dump). */
char *cs_scenario_to_ini(const cs_scenario_t *s);


/* Command-line side: the topology flags (--topo PRESET|FILE, --gpu, --gpus,
 * --sockets, --cpu, --p2p, --nodes, --nic, --nics-per-node, --fabric,
 * --oversubscription) as a GOptionGroup writing into 'spec', shared by
 * `collsim run`, `collsim topo` and `collsim validate`. Values are checked
 * when the group is parsed (errors "collsim: --flag: ..."). */
GOptionGroup *cs_topo_spec_option_group(cs_topo_spec_t *spec);
/* Overlays the flags given on the command line (non-zero fields of 'flags')
 * onto 'spec' (loaded from a scenario). */
void cs_topo_spec_merge(cs_topo_spec_t *spec, const cs_topo_spec_t *flags);
/* All fields unset (p2p = -1): use before handing a spec to the option
 * group; a zeroed spec would mean --p2p off. */
void cs_topo_spec_init(cs_topo_spec_t *spec);
void cs_topo_spec_clear(cs_topo_spec_t *spec);

#endif
