/* The NCCL_* variables a run sees: from the scenario's [nccl] section, then
 * the calling environment (as real NCCL would read it), then --env (wins).
 * Parsed into typed settings with NCCL's defaults (v2.28.9, reference §4). */
#ifndef CS_NCCL_ENV_H
#define CS_NCCL_ENV_H

#include <glib.h>
#include "models/cs_coll.h"

typedef struct cs_nccl_env cs_nccl_env_t;

cs_nccl_env_t *cs_nccl_env_new(void);
void cs_nccl_env_free(cs_nccl_env_t *e);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(cs_nccl_env_t, cs_nccl_env_free)

/* Sets NAME=VALUE; 'origin' is "file:line", "environment" or "--env" and is
 * used in messages. Later calls override earlier ones. */
void cs_nccl_env_set(cs_nccl_env_t *e, const char *name, const char *value, const char *origin);
/* Adds every NCCL_* variable of the process environment. */
void cs_nccl_env_import_environ(cs_nccl_env_t *e);
/* Raw access; NULL when unset. */
const char *cs_nccl_env_get(const cs_nccl_env_t *e, const char *name);
const char *cs_nccl_env_origin(const cs_nccl_env_t *e, const char *name);
/* Names in the order first set. */
GPtrArray *cs_nccl_env_names(const cs_nccl_env_t *e);

/* Warnings for names NCCL does not read: returns one line per problem
 * ("NCCL_TIMEOUT (environment): NCCL does not read this variable; the
 * timeout is PyTorch's init_process_group(timeout=...)"). Never fails. */
GPtrArray *cs_nccl_env_warnings(const cs_nccl_env_t *e);
/* As cs_nccl_env_warnings, judged for a run of NCCL VERSION ("2.4.7"; NULL
 * = unknown, judged as the modelled v2.28.9): a variable that version still
 * read is no warning but a line added to *notes_p (when not NULL) saying
 * that collsim, which models v2.28.9, does not honour it. */
/* NCCL version text "MAJOR.MINOR[.PATCH]" (each part below 100, major
 * from 1) as major x 10000 + minor x 100 + patch; 0 when it is not one.
 * Reading stops after the version (a log's "2.19.3+cuda12.2"); *end_p,
 * when not NULL, is set to where it stopped. */
int cs_nccl_version_code(const char *v, const char **end_p);
/* TRUE when 'v' is a version and nothing more (a flag's or a manifest's
 * value: "2.19.3junk" or "2.19.3.4" is not read as 2.19.3). */
gboolean cs_nccl_version_whole(const char *v);
GPtrArray *cs_nccl_env_warnings_for(const cs_nccl_env_t *e, const char *version, GPtrArray **notes_p);
/* NCCL's fallbacks that these settings caused on a topology (an
 * NCCL_IB_HCA that matches no HCA, a GID index no table has, ...), each
 * logged once by the communicators built over this environment
 * (cs_comm_new) and returned after the variable warnings by
 * cs_nccl_env_warnings. The log is not part of the settings' value: a
 * const environment takes entries (under a lock, for parallel sweeps). */
void cs_nccl_env_log(const cs_nccl_env_t *e, const char *line);
gboolean cs_nccl_env_is_known(const char *name);
/* A hint for names that guides cite but NCCL does not read; NULL if none. */
const char *cs_nccl_env_hint(const char *name);

/* Typed view with NCCL's defaults. Values that do not parse are an error
 * "ORIGIN: NCCL_X=VALUE: what is wrong; expected ...". */
typedef struct {
    /* enables per collective: algo_enabled[coll][algo], proto_enabled[coll][proto]
     * from NCCL_ALGO / NCCL_PROTO (parseList syntax: "^LL128",
     * "allreduce:tree,ring;broadcast:ring"). proto_enabled[][LL128] is 2
     * when NCCL's default rule decides (tuning.cc: on only for NVLink-class
     * paths); 1 means forced on, as "^LL" or "LL128" force it in NCCL. */
    gboolean algo_set, proto_set;
    gboolean algo_enabled[CS_COLL_COUNT][CS_ALGO_COUNT];
    gboolean proto_enabled[CS_COLL_COUNT][CS_PROTO_COUNT];
    int min_nchannels, max_nchannels;   /* 0 / 64 by default; -1 = unset */
    long buffsize, ll_buffsize, ll128_buffsize; /* -1 = default */
    int nthreads, ll128_nthreads;       /* -1 = default */
    int nvls_enable;                    /* 2 = auto */
    int nvls_nchannels;                 /* -1 = auto */
    int collnet_enable;                 /* 0 */
    int collnet_node_threshold;         /* NCCL_COLLNET_NODE_THRESHOLD: 2 (init.cc) */
    int pat_enable;                     /* 2 */
    int ll128_c2c;                      /* 1 */
    double net_overhead_us;             /* -1 = auto */
    int p2p_level;                      /* cs_path_type_t, -1 = auto */
    gboolean p2p_disable;
    int shm_disable, nvb_disable, pxn_disable;
    int net_gdr_level;                  /* cs_path_type_t, -1 = auto (PXB) */
    int net_gdr_read;                   /* -2 auto */
    int net_gdr_c2c;                    /* NCCL_NET_GDR_C2C: 1 (paths.cc: GPUDirect over C2C counts as C2C) */
    int ib_disable;
    char *net;                          /* NCCL_NET: "IB", "Socket" or NULL */
    char *ib_hca;                       /* NCCL_IB_HCA raw */
    char *socket_ifname;                /* NCCL_SOCKET_IFNAME raw */
    int socket_nthreads, nsocks_perthread; /* -2 auto */
    int ib_gid_index;                   /* -1 auto */
    int ib_tc, ib_sl;
    /* RC QP settings (net_ib/connect.cc, common.cc): QPs per connection 1,
     * split each message over them 0 (else round robin per message),
     * local ACK timeout exponent 20 (4.096 us x 2^20), retries 7 */
    int ib_qps_per_conn, ib_split_data_on_qps, ib_timeout, ib_retry_cnt;
    /* adaptive routing (net_ib/init.cc: on by default on an InfiniBand
     * link layer, off on RoCE; -2 = that default) and the message size
     * above which NCCL posts for it (net_ib/p2p.cc ncclIbArThreshold 8192) */
    int ib_adaptive_routing;
    long ib_ar_threshold;
    int cross_nic;                      /* 2 */
    int algo_pat_unused;
    /* Added by the decide area (additive): */
    int min_ctas, max_ctas;             /* NCCL_MIN_CTAS / NCCL_MAX_CTAS: 1 / 64 */
    long nvls_chunksize;                /* NCCL_NVLS_CHUNKSIZE: 131072 */
    int net_disable_intra;              /* NCCL_NET_DISABLE_INTRA: 0 */
    long thread_thresholds[2][CS_PROTO_COUNT]; /* NCCL_THREAD_THRESHOLDS for Tree, Ring; -2 = default */
    /* Added by the SHM model (cs_shm.h): transport/shm.cc NCCL_SHM_USE_CUDA_MEMCPY
     * 0, NCCL_SHM_MEMCPY_MODE 1 (1 sender side, 2 receiver side, 3 both),
     * NCCL_SHM_LOCALITY 2 (1 buffer at the sender, 2 at the receiver) */
    int shm_use_cuda_memcpy, shm_memcpy_mode, shm_locality;
} cs_nccl_settings_t;

gboolean cs_nccl_env_settings(const cs_nccl_env_t *e, cs_nccl_settings_t *s_p, GError **err);
void cs_nccl_settings_clear(cs_nccl_settings_t *s);

#endif
