/* The NCCL_* variables of a run: ordered storage with origins, the table of
 * names NCCL v2.28.9 reads, hints for names it does not read, and the typed
 * settings with NCCL's defaults and parsing rules (reference nccl-model.md
 * §4; NCCL sources cited at each rule). */
#include "config.h"
#include "models/cs_nccl_env.h"
#include "util/cs_units.h"
#include "models/cs_paths.h"
#include "util/cs_error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *name;
    char *value;
    char *origin;
} env_entry_t;

struct cs_nccl_env {
    GPtrArray *entries;     /* env_entry_t, in the order first set */
    GHashTable *index;      /* name -> env_entry_t (borrowed) */
    GPtrArray *log;         /* cs_nccl_env_log lines, each once */
};

static GMutex log_lock;

/* Every NCCL_* name NCCL v2.28.9 reads: the NCCL_PARAM() declarations and
 * the ncclGetEnv()/getenv() calls of src/ at tag v2.28.9-1, plus the names
 * passed by variable (NCCL_P2P_DISABLE/NCCL_P2P_LEVEL/NCCL_NET_GDR_LEVEL,
 * graph/paths.cc ncclGetLevel; NCCL_DEBUG*, debug.cc). Sorted for bsearch
 * (byte order). */
static const char *const known_names[] = {
    "NCCL_ALGO",
    "NCCL_ALLOC_P2P_NET_LL_BUFFERS",
    "NCCL_BUFFSIZE",
    "NCCL_CGA_CLUSTER_SIZE",
    "NCCL_CHECK_POINTERS",
    "NCCL_CHUNK_SIZE",
    "NCCL_COLLNET_ENABLE",
    "NCCL_COLLNET_NODE_THRESHOLD",
    "NCCL_COMM_BLOCKING",
    "NCCL_COMM_ID",
    "NCCL_COMM_SHRINK_SHARE_RESOURCES",
    "NCCL_COMM_SPLIT_SHARE_RESOURCES",
    "NCCL_CONF_FILE",
    "NCCL_CONNECT_ROUND_MAX_PEERS",
    "NCCL_CREATE_THREAD_CONTEXT",
    "NCCL_CROSS_NIC",
    "NCCL_CTA_POLICY",
    "NCCL_CUMEM_ENABLE",
    "NCCL_CUMEM_HOST_ENABLE",
    "NCCL_DEBUG",
    "NCCL_DEBUG_FILE",
    "NCCL_DEBUG_SUBSYS",
    "NCCL_DEBUG_TIMESTAMP_FORMAT",
    "NCCL_DEBUG_TIMESTAMP_LEVELS",
    "NCCL_DMABUF_ENABLE",
    "NCCL_ENV_PLUGIN",
    "NCCL_GDRCOPY_ENABLE",
    "NCCL_GDRCOPY_FIFO_ENABLE",
    "NCCL_GDRCOPY_FLUSH_ENABLE",
    "NCCL_GDRCOPY_SYNC_ENABLE",
    "NCCL_GDR_FLUSH_DISABLE",
    "NCCL_GIN_COUNTER_POOL_SIZE",
    "NCCL_GIN_ENABLE",
    "NCCL_GIN_ERROR_QUERY_SEC",
    "NCCL_GIN_GDAKI_NIC_HANDLER",
    "NCCL_GIN_GDAKI_QP_DEPTH",
    "NCCL_GIN_NCONTEXTS",
    "NCCL_GIN_PROXY_QUEUE_SIZE",
    "NCCL_GIN_SIGNAL_POOL_SIZE",
    "NCCL_GIN_TYPE",
    "NCCL_GRAPH_DUMP_FILE",
    "NCCL_GRAPH_DUMP_FILE_RANK",
    "NCCL_GRAPH_FILE",
    "NCCL_GRAPH_HELPER_DISABLE",
    "NCCL_GRAPH_MIXING_SUPPORT",
    "NCCL_GRAPH_REGISTER",
    "NCCL_GROUP_CUDA_STREAM",
    "NCCL_HOSTID",
    "NCCL_IB_ADAPTIVE_ROUTING",
    "NCCL_IB_ADDR_FAMILY",
    "NCCL_IB_ADDR_RANGE",
    "NCCL_IB_AR_THRESHOLD",
    "NCCL_IB_DATA_DIRECT",
    "NCCL_IB_DISABLE",
    "NCCL_IB_ECE_ENABLE",
    "NCCL_IB_FIFO_TC",
    "NCCL_IB_GID_INDEX",
    "NCCL_IB_HCA",
    "NCCL_IB_MERGE_NICS",
    "NCCL_IB_MERGE_VFS",
    "NCCL_IB_MQP_RETRY_ALL",
    "NCCL_IB_MQP_RETRY_CNT",
    "NCCL_IB_MQP_RETRY_SLEEP_MSEC",
    "NCCL_IB_PCI_RELAXED_ORDERING",
    "NCCL_IB_PKEY",
    "NCCL_IB_QPS_PER_CONNECTION",
    "NCCL_IB_RETRY_CNT",
    "NCCL_IB_RETURN_ASYNC_EVENTS",
    "NCCL_IB_ROCE_VERSION_NUM",
    "NCCL_IB_ROUTABLE_FLID_GID_INDEX",
    "NCCL_IB_SL",
    "NCCL_IB_SPLIT_DATA_ON_QPS",
    "NCCL_IB_TC",
    "NCCL_IB_TIMEOUT",
    "NCCL_IB_USE_INLINE",
    "NCCL_IB_WARN_RAIL_LOCAL",
    "NCCL_IGNORE_CPU_AFFINITY",
    "NCCL_IGNORE_DISABLED_P2P",
    "NCCL_L1_SHARED_MEMORY_CARVEOUT",
    "NCCL_LAUNCH_MODE",
    "NCCL_LAUNCH_ORDER_IMPLICIT",
    "NCCL_LAUNCH_RACE_FATAL",
    "NCCL_LEGACY_CUDA_REGISTER",
    "NCCL_LL128_BUFFSIZE",
    "NCCL_LL128_C2C",
    "NCCL_LL128_NTHREADS",
    "NCCL_LL_BUFFSIZE",
    "NCCL_LOCAL_REGISTER",
    "NCCL_MAX_CTAS",
    "NCCL_MAX_NCHANNELS",
    "NCCL_MAX_NRINGS",
    "NCCL_MAX_P2P_NCHANNELS",
    "NCCL_MEM_SYNC_DOMAIN",
    "NCCL_MIN_CTAS",
    "NCCL_MIN_NCHANNELS",
    "NCCL_MIN_NRINGS",
    "NCCL_MIN_P2P_NCHANNELS",
    "NCCL_MNNVL_CLIQUE_ID",
    "NCCL_MNNVL_ENABLE",
    "NCCL_MNNVL_RAIL_PER_HOST",
    "NCCL_MNNVL_SCATTER_NETS_ENABLE",
    "NCCL_MNNVL_UUID",
    "NCCL_NCHANNELS_PER_NET_PEER",
    "NCCL_NET",
    "NCCL_NETDEVS_POLICY",
    "NCCL_NET_DISABLE_INTRA",
    "NCCL_NET_FORCE_FLUSH",
    "NCCL_NET_FORCE_MERGE",
    "NCCL_NET_GDR_C2C",
    "NCCL_NET_GDR_LEVEL",
    "NCCL_NET_GDR_READ",
    "NCCL_NET_MERGE_LEVEL",
    "NCCL_NET_OPTIONAL_RECV_COMPLETION",
    "NCCL_NET_OVERHEAD",
    "NCCL_NET_PLUGIN",
    "NCCL_NET_PLUGIN_REF_COUNT",
    "NCCL_NET_SHARED_BUFFERS",
    "NCCL_NET_SHARED_COMMS",
    "NCCL_NSOCKS_PERTHREAD",
    "NCCL_NTHREADS",
    "NCCL_NVB_DISABLE",
    "NCCL_NVB_PRECONNECT",
    "NCCL_NVLINK_UTIL_CENTRIC_SCHED_ENABLE",
    "NCCL_NVLSTREE_MAX_CHUNKSIZE",
    "NCCL_NVLS_CHUNKSIZE",
    "NCCL_NVLS_ENABLE",
    "NCCL_NVLS_NCHANNELS",
    "NCCL_NVTX_DISABLE",
    "NCCL_OOB_NET_ENABLE",
    "NCCL_OOB_NET_IFNAME",
    "NCCL_P2P_DIRECT_DISABLE",
    "NCCL_P2P_DISABLE",
    "NCCL_P2P_LEVEL",
    "NCCL_P2P_LL_THRESHOLD",
    "NCCL_P2P_NET_CHUNKSIZE",
    "NCCL_P2P_NVL_CHUNKSIZE",
    "NCCL_P2P_PCI_CHUNKSIZE",
    "NCCL_P2P_PER_CHANNEL_NET_BW",
    "NCCL_P2P_PXN_LEVEL",
    "NCCL_P2P_READ_ENABLE",
    "NCCL_P2P_SCHEDULE_GROUP_SIZE",
    "NCCL_P2P_USE_CUDA_MEMCPY",
    "NCCL_PAT_ENABLE",
    "NCCL_PROFILER_PLUGIN",
    "NCCL_PROGRESS_APPENDOP_FREQ",
    "NCCL_PROTO",
    "NCCL_PROXY_APPEND_BATCH_SIZE",
    "NCCL_PROXY_CPUSET",
    "NCCL_PROXY_DUMP_SIGNAL",
    "NCCL_PXN_C2C",
    "NCCL_PXN_DISABLE",
    "NCCL_RAS_ADDR",
    "NCCL_RAS_ENABLE",
    "NCCL_RAS_TIMEOUT_FACTOR",
    "NCCL_REPORT_CONNECT_PROGRESS",
    "NCCL_RUNTIME_CONNECT",
    "NCCL_SET_CPU_STACK_SIZE",
    "NCCL_SET_STACK_SIZE",
    "NCCL_SET_THREAD_NAME",
    "NCCL_SHM_DISABLE",
    "NCCL_SHM_LOCALITY",
    "NCCL_SHM_MEMCPY_MODE",
    "NCCL_SHM_USE_CUDA_MEMCPY",
    "NCCL_SINGLE_PROC_MEM_REG_ENABLE",
    "NCCL_SOCKET_FAMILY",
    "NCCL_SOCKET_IFNAME",
    "NCCL_SOCKET_INLINE",
    "NCCL_SOCKET_MIN_TASKSIZE",
    "NCCL_SOCKET_NTHREADS",
    "NCCL_SOCKET_RCVBUF",
    "NCCL_SOCKET_RETRY_CNT",
    "NCCL_SOCKET_RETRY_SLEEP_MSEC",
    "NCCL_SOCKET_SNDBUF",
    "NCCL_SYM_CTAS",
    "NCCL_SYM_KERNEL",
    "NCCL_THREAD_THRESHOLDS",
    "NCCL_TOPO_DUMP_FILE",
    "NCCL_TOPO_DUMP_FILE_RANK",
    "NCCL_TOPO_FILE",
    "NCCL_TUNER_PLUGIN",
    "NCCL_UID_STAGGER_RATE",
    "NCCL_UID_STAGGER_THRESHOLD",
    "NCCL_UNPACK_DOUBLE_NCHANNELS",
    "NCCL_WARN_ENABLE_DEBUG_INFO",
    "NCCL_WIN_ENABLE",
    "NCCL_WIN_STRIDE",
    "NCCL_WORK_ARGS_BYTES",
    "NCCL_WORK_FIFO_BYTES",
};

static int cmp_name(const void *key, const void *elem)
{
    return strcmp((const char *)key, *(const char *const *)elem);
}

gboolean cs_nccl_env_is_known(const char *name)
{
    if (name == NULL)
        return FALSE;
    return bsearch(name, known_names, G_N_ELEMENTS(known_names), sizeof known_names[0],
                   cmp_name) != NULL;
}

/* Names that guides and old scripts cite but NCCL v2.28.9 does not read
 * (reference §4 "Absent from v2.28.9 source"), with what to use instead. */
static const struct {
    const char *name;
    const char *hint;
} hints[] = {
    { "NCCL_ASYNC_ERROR_HANDLING",
      "it was a PyTorch variable, now TORCH_NCCL_ASYNC_ERROR_HANDLING" },
    { "NCCL_BLOCKING_WAIT", "it was a PyTorch variable, now TORCH_NCCL_BLOCKING_WAIT" },
    { "NCCL_CHECKS_DISABLE",
      "argument checks are no longer optional; NCCL_CHECK_POINTERS=1 adds pointer checks" },
    { "NCCL_DEBUG_LOG_DIR", "use NCCL_DEBUG_FILE (e.g. /tmp/nccl.%h.%p.log)" },
    { "NCCL_IB_CUDA_SUPPORT",
      "GPUDirect RDMA is chosen by distance: use NCCL_NET_GDR_LEVEL (and NCCL_NET_GDR_READ)" },
    { "NCCL_IB_ENABLE", "IB is on by default; use NCCL_IB_DISABLE=1 to turn it off or NCCL_NET=IB to require it" },
    { "NCCL_IB_GDR_LEVEL", "it was renamed NCCL_NET_GDR_LEVEL" },
    { "NCCL_LL_THRESHOLD",
      "the protocol comes from NCCL's cost model; use NCCL_PROTO to restrict it" },
    { "NCCL_NVLINK_DISABLE",
      "to keep traffic off NVLink use NCCL_P2P_DISABLE=1 (or NCCL_P2P_LEVEL) and NCCL_NVLS_ENABLE=0" },
    { "NCCL_RINGS", "rings come from the topology search; impose them with NCCL_GRAPH_FILE" },
    { "NCCL_SINGLE_RING_THRESHOLD",
      "the channel count comes from NCCL's cost model; use NCCL_MIN_NCHANNELS/NCCL_MAX_NCHANNELS" },
    { "NCCL_TIMEOUT", "the timeout is PyTorch's init_process_group(timeout=...)" },
    { "NCCL_TREE_THRESHOLD",
      "the algorithm comes from NCCL's cost model; use NCCL_ALGO to restrict it" },
};

/* The NCCL release that stopped reading a variable of the hints table, as
 * 10000 * major + 100 * minor; 0 when unknown. NCCL 2.5 replaced the
 * size thresholds of 2.4 (NCCL_TREE_THRESHOLD, NCCL_LL_THRESHOLD, read in
 * 2.4's init.cc) with the cost model of tuning.cc and the NCCL_ALGO /
 * NCCL_PROTO variables (NCCL 2.5.6 release notes; the environment variable
 * page of NCCL's documentation lists NCCL_ALGO and NCCL_PROTO "since
 * 2.5"). */
static int removed_in(const char *name)
{
    if (strcmp(name, "NCCL_TREE_THRESHOLD") == 0 || strcmp(name, "NCCL_LL_THRESHOLD") == 0)
        return 20500;
    return 0;
}

const char *cs_nccl_env_hint(const char *name)
{
    if (name == NULL)
        return NULL;
    for (guint i = 0; i < G_N_ELEMENTS(hints); i++)
        if (strcmp(hints[i].name, name) == 0)
            return hints[i].hint;
    return NULL;
}

/* ---- storage ------------------------------------------------------------ */

static void entry_free(gpointer p)
{
    env_entry_t *e = p;
    g_free(e->name);
    g_free(e->value);
    g_free(e->origin);
    g_free(e);
}

cs_nccl_env_t *cs_nccl_env_new(void)
{
    cs_nccl_env_t *e = g_new0(cs_nccl_env_t, 1);
    e->entries = g_ptr_array_new_with_free_func(entry_free);
    e->index = g_hash_table_new(g_str_hash, g_str_equal);
    e->log = g_ptr_array_new_with_free_func(g_free);
    return e;
}

void cs_nccl_env_free(cs_nccl_env_t *e)
{
    if (e == NULL)
        return;
    g_hash_table_destroy(e->index);
    g_ptr_array_free(e->entries, TRUE);
    g_ptr_array_free(e->log, TRUE);
    g_free(e);
}

void cs_nccl_env_set(cs_nccl_env_t *e, const char *name, const char *value, const char *origin)
{
    g_return_if_fail(e != NULL && name != NULL && value != NULL);
    env_entry_t *ent = g_hash_table_lookup(e->index, name);
    if (ent == NULL) {
        ent = g_new0(env_entry_t, 1);
        ent->name = g_strdup(name);
        g_ptr_array_add(e->entries, ent);
        g_hash_table_insert(e->index, ent->name, ent);
    }
    g_free(ent->value);
    g_free(ent->origin);
    ent->value = g_strdup(value);
    ent->origin = g_strdup(origin != NULL ? origin : "environment");
}

/* g_ptr_array_sort passes pointers to the elements. */
static gint cmp_str_ptr(gconstpointer a, gconstpointer b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void cs_nccl_env_import_environ(cs_nccl_env_t *e)
{
    g_auto(GStrv) envp = g_get_environ();
    /* Sorted so that the order of names (and so of warnings) does not depend
     * on how the shell built the environment. */
    guint n = envp != NULL ? g_strv_length(envp) : 0;
    g_autoptr(GPtrArray) names = g_ptr_array_new();
    for (guint i = 0; i < n; i++)
        if (g_str_has_prefix(envp[i], "NCCL_") && strchr(envp[i], '=') != NULL)
            g_ptr_array_add(names, envp[i]);
    g_ptr_array_sort(names, cmp_str_ptr);
    for (guint i = 0; i < names->len; i++) {
        const char *kv = g_ptr_array_index(names, i);
        const char *eq = strchr(kv, '=');
        g_autofree char *name = g_strndup(kv, (gsize)(eq - kv));
        cs_nccl_env_set(e, name, eq + 1, "environment");
    }
}

const char *cs_nccl_env_get(const cs_nccl_env_t *e, const char *name)
{
    const env_entry_t *ent = e != NULL ? g_hash_table_lookup(e->index, name) : NULL;
    return ent != NULL ? ent->value : NULL;
}

const char *cs_nccl_env_origin(const cs_nccl_env_t *e, const char *name)
{
    const env_entry_t *ent = e != NULL ? g_hash_table_lookup(e->index, name) : NULL;
    return ent != NULL ? ent->origin : NULL;
}

GPtrArray *cs_nccl_env_names(const cs_nccl_env_t *e)
{
    GPtrArray *a = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; e != NULL && i < e->entries->len; i++) {
        const env_entry_t *ent = g_ptr_array_index(e->entries, i);
        g_ptr_array_add(a, g_strdup(ent->name));
    }
    return a;
}

/* ---- warnings ----------------------------------------------------------- */

/* Optimal string alignment distance (Levenshtein plus adjacent swaps),
 * giving up early once every cell of a row exceeds 'limit'. */
static int edit_distance(const char *a, const char *b, int limit)
{
    int la = (int)strlen(a), lb = (int)strlen(b);
    if (ABS(la - lb) > limit)
        return limit + 1;
    g_autofree int *prev2 = g_new0(int, lb + 1);
    g_autofree int *prev = g_new0(int, lb + 1);
    g_autofree int *cur = g_new0(int, lb + 1);
    for (int j = 0; j <= lb; j++)
        prev[j] = j;
    for (int i = 1; i <= la; i++) {
        cur[0] = i;
        int row_min = cur[0];
        for (int j = 1; j <= lb; j++) {
            int cost = a[i - 1] == b[j - 1] ? 0 : 1;
            int v = MIN(MIN(prev[j] + 1, cur[j - 1] + 1), prev[j - 1] + cost);
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                v = MIN(v, prev2[j - 2] + 1);
            cur[j] = v;
            row_min = MIN(row_min, v);
        }
        if (row_min > limit)
            return limit + 1;
        int *t = prev2;
        prev2 = prev;
        prev = cur;
        cur = t;
    }
    return prev[lb];
}

/* The closest known name within distance 2, first in table order on ties. */
static const char *closest_known(const char *name)
{
    const char *best = NULL;
    int best_d = 3;
    for (guint i = 0; i < G_N_ELEMENTS(known_names); i++) {
        int d = edit_distance(name, known_names[i], 2);
        if (d < best_d) {
            best_d = d;
            best = known_names[i];
        }
    }
    return best;
}

/* "2.4.7+cuda10.1" -> 20407; 0 when it does not parse. */
/* One part of a version: 1 to 2 digits (a longer run is no version). */
static const char *version_part(const char *v, int *part_p)
{
    int n = 0, x = 0;
    while (g_ascii_isdigit(v[n]) && n < 3)
        x = x * 10 + (v[n++] - '0');
    if (n == 0 || n > 2)
        return NULL;
    *part_p = x;
    return v + n;
}

int cs_nccl_version_code(const char *v, const char **end_p)
{
    int major = 0, minor = 0, patch = 0;
    const char *q = v != NULL ? version_part(v, &major) : NULL;
    if (q != NULL && *q == '.')
        q = version_part(q + 1, &minor);
    else
        q = NULL;
    if (q != NULL && *q == '.' && g_ascii_isdigit(q[1]))
        q = version_part(q + 1, &patch);
    if (q == NULL || major < 1)
        return 0;
    if (end_p != NULL)
        *end_p = q;
    return major * 10000 + minor * 100 + patch;
}

gboolean cs_nccl_version_whole(const char *v)
{
    const char *end = NULL;
    return v != NULL && cs_nccl_version_code(v, &end) != 0 && *end == '\0';
}

void cs_nccl_env_log(const cs_nccl_env_t *e, const char *line)
{
    g_return_if_fail(e != NULL && line != NULL);
    g_mutex_lock(&log_lock);
    gboolean seen = FALSE;
    for (guint i = 0; i < e->log->len && !seen; i++)
        seen = strcmp(g_ptr_array_index(e->log, i), line) == 0;
    if (!seen)
        g_ptr_array_add(e->log, g_strdup(line));
    g_mutex_unlock(&log_lock);
}

/* Variables NCCL v2.28.9 reads that can change how fast a collective
 * runs, and that no part of collsim models: a setting is said to be
 * priced as unset (an engine that ignores a setting says so). Sorted.
 * Variables that change nothing a collective's time depends on (debug
 * output, dump files, retry counts, thread names, profiler hooks) are
 * not here. */
static const char *const unmodelled[] = {
    "NCCL_ALLOC_P2P_NET_LL_BUFFERS",
    "NCCL_CGA_CLUSTER_SIZE",
    "NCCL_CREATE_THREAD_CONTEXT",
    "NCCL_CTA_POLICY",
    "NCCL_GDRCOPY_ENABLE",
    "NCCL_GDRCOPY_FIFO_ENABLE",
    "NCCL_GDRCOPY_FLUSH_ENABLE",
    "NCCL_GDRCOPY_SYNC_ENABLE",
    "NCCL_GDR_FLUSH_DISABLE",
    "NCCL_GIN_ENABLE",
    "NCCL_GIN_TYPE",
    "NCCL_GRAPH_FILE",
    "NCCL_GRAPH_HELPER_DISABLE",
    "NCCL_GRAPH_MIXING_SUPPORT",
    "NCCL_GRAPH_REGISTER",
    "NCCL_IB_DATA_DIRECT",
    "NCCL_IB_FIFO_TC",
    "NCCL_IB_MERGE_NICS",
    "NCCL_IB_MERGE_VFS",
    "NCCL_IB_PCI_RELAXED_ORDERING",
    "NCCL_IB_USE_INLINE",
    "NCCL_L1_SHARED_MEMORY_CARVEOUT",
    "NCCL_LAUNCH_MODE",
    "NCCL_LAUNCH_ORDER_IMPLICIT",
    "NCCL_LEGACY_CUDA_REGISTER",
    "NCCL_LOCAL_REGISTER",
    "NCCL_MEM_SYNC_DOMAIN",
    "NCCL_MNNVL_SCATTER_NETS_ENABLE",
    "NCCL_NETDEVS_POLICY",
    "NCCL_NET_FORCE_FLUSH",
    "NCCL_NET_FORCE_MERGE",
    "NCCL_NET_MERGE_LEVEL",
    "NCCL_NET_OPTIONAL_RECV_COMPLETION",
    "NCCL_NET_PLUGIN",
    "NCCL_NET_SHARED_BUFFERS",
    "NCCL_NET_SHARED_COMMS",
    "NCCL_NSOCKS_PERTHREAD",
    "NCCL_NVLINK_UTIL_CENTRIC_SCHED_ENABLE",
    "NCCL_NVLSTREE_MAX_CHUNKSIZE",
    "NCCL_P2P_PXN_LEVEL",
    "NCCL_P2P_READ_ENABLE",
    "NCCL_P2P_USE_CUDA_MEMCPY",
    "NCCL_PROGRESS_APPENDOP_FREQ",
    "NCCL_PROXY_APPEND_BATCH_SIZE",
    "NCCL_PXN_C2C",
    "NCCL_SINGLE_PROC_MEM_REG_ENABLE",
    "NCCL_SOCKET_INLINE",
    "NCCL_SOCKET_MIN_TASKSIZE",
    "NCCL_SOCKET_NTHREADS",
    "NCCL_SOCKET_RCVBUF",
    "NCCL_SOCKET_SNDBUF",
    "NCCL_SYM_CTAS",
    "NCCL_SYM_KERNEL",
    "NCCL_TOPO_FILE",
    "NCCL_TUNER_PLUGIN",
    "NCCL_UNPACK_DOUBLE_NCHANNELS",
    "NCCL_WIN_ENABLE",
    "NCCL_WIN_STRIDE",
    "NCCL_WORK_ARGS_BYTES",
};

static gboolean is_unmodelled(const char *name, const char *value)
{
    /* NCCL_MNNVL_ENABLE: on (1) or auto (2) is what the NVLink-domain
     * presets build; off (0) would make each tray a node over its NICs */
    if (strcmp(name, "NCCL_MNNVL_ENABLE") == 0)
        return value != NULL && g_ascii_strtoll(value, NULL, 0) == 0 && value[0] != '\0';
    /* NCCL_CUMEM_ENABLE: on is NCCL's default (2.19+) and what collsim
     * prices; off changes its buffers' registration, not modelled */
    if (strcmp(name, "NCCL_CUMEM_ENABLE") == 0)
        return value != NULL && g_ascii_strtoll(value, NULL, 0) == 0 && value[0] != '\0';
    /* NCCL_NET_GDR_READ: the NIC reading a sender's GPU memory is what a
     * GPUDirect RDMA send is priced as (NCCL's default from sm80, net.cc);
     * off stages sends through host memory, not modelled */
    if (strcmp(name, "NCCL_NET_GDR_READ") == 0)
        return value != NULL && g_ascii_strtoll(value, NULL, 0) == 0 && value[0] != '\0';
    return bsearch(name, unmodelled, G_N_ELEMENTS(unmodelled), sizeof unmodelled[0], cmp_name) != NULL;
}

GPtrArray *cs_nccl_env_warnings(const cs_nccl_env_t *e)
{
    return cs_nccl_env_warnings_for(e, NULL, NULL);
}

GPtrArray *cs_nccl_env_warnings_for(const cs_nccl_env_t *e, const char *version, GPtrArray **notes_p)
{
    GPtrArray *w = g_ptr_array_new_with_free_func(g_free);
    int code = cs_nccl_version_code(version, NULL);
    for (guint i = 0; e != NULL && i < e->entries->len; i++) {
        const env_entry_t *ent = g_ptr_array_index(e->entries, i);
        const char *hint = cs_nccl_env_hint(ent->name);
        int removed = removed_in(ent->name);
        if (hint != NULL && code > 0 && removed > 0 && code < removed) {
            /* the log's NCCL still read it: not the user's mistake, but
             * the model (v2.28.9's choices) does not honour it */
            if (notes_p != NULL) {
                if (*notes_p == NULL)
                    *notes_p = g_ptr_array_new_with_free_func(g_free);
                g_ptr_array_add(*notes_p, g_strdup_printf("%s (%s): NCCL %s read it (it is gone from NCCL %d.%d "
                                                          "on), but collsim models NCCL v2.28.9's choices, which "
                                                          "do not: it changes nothing here; %s",
                                                          ent->name, ent->origin, version, removed / 10000,
                                                          removed / 100 % 100, hint));
            }
            continue;
        }
        if (hint != NULL) {
            g_ptr_array_add(w, g_strdup_printf("%s (%s): NCCL does not read this variable; %s",
                                               ent->name, ent->origin, hint));
            continue;
        }
        if (cs_nccl_env_is_known(ent->name)) {
            if (is_unmodelled(ent->name, ent->value))
                g_ptr_array_add(w, g_strdup_printf("%s=%s (%s): NCCL reads it and it can change how NCCL runs; "
                                                   "collsim does not model it: priced as if it were unset",
                                                   ent->name, ent->value, ent->origin));
            continue;
        }
        if (!g_str_has_prefix(ent->name, "NCCL_")) {
            g_ptr_array_add(w, g_strdup_printf("%s (%s): not an NCCL variable; NCCL reads only "
                                               "names starting with NCCL_", ent->name, ent->origin));
            continue;
        }
        const char *near = closest_known(ent->name);
        if (near != NULL)
            g_ptr_array_add(w, g_strdup_printf("%s (%s): NCCL v2.28.9 does not read this "
                                               "variable; did you mean %s?",
                                               ent->name, ent->origin, near));
        else
            g_ptr_array_add(w, g_strdup_printf("%s (%s): NCCL v2.28.9 does not read this "
                                               "variable; it has no effect",
                                               ent->name, ent->origin));
    }
    if (e != NULL) {
        g_mutex_lock(&log_lock);
        for (guint i = 0; i < e->log->len; i++)
            g_ptr_array_add(w, g_strdup(g_ptr_array_index(e->log, i)));
        g_mutex_unlock(&log_lock);
    }
    return w;
}

/* ---- typed settings ----------------------------------------------------- */

/* NCCL's names for parseList (init.cc:49-51). */
static const char *const nccl_func_str[CS_COLL_COUNT] = {
    "Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"
};
static const char *const nccl_algo_str[CS_ALGO_COUNT] = {
    "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"
};
static const char *const nccl_proto_str[CS_PROTO_COUNT] = { "LL", "LL128", "Simple" };

/* "ORIGIN: NCCL_X=VALUE: what; expected ..." */
static void value_error(GError **err, const cs_nccl_env_t *e, const char *name,
                        const char *fmt, ...) G_GNUC_PRINTF(4, 5);
static void value_error(GError **err, const cs_nccl_env_t *e, const char *name,
                        const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    cs_set_error_at(err, cs_nccl_env_origin(e, name), 0, "%s=%s: %s", name,
                    cs_nccl_env_get(e, name), msg);
}

/* Set and non-empty (NCCL treats an empty value as unset: param.cc
 * ncclLoadParam checks strlen > 0). */
static const char *value_of(const cs_nccl_env_t *e, const char *name)
{
    const char *v = cs_nccl_env_get(e, name);
    return v != NULL && *v != '\0' ? v : NULL;
}

/* Integers as NCCL's strtoll(str, NULL, 0) reads them (decimal, 0x hex),
 * but the whole value must be a number: NCCL would silently read "4M" as 4. */
static gboolean parse_int_value(const char *s, gint64 *v_p)
{
    return cs_parse_int_base(s, 0, G_MININT64, G_MAXINT64, v_p);
}

/* An integer too large for 64 bits ("99999999999999999999"): out of
 * range, not "not an integer". */
static gboolean int_overflows(const char *s)
{
    char *end = NULL;
    errno = 0;
    (void)g_ascii_strtoll(s, &end, 0);
    if (errno != ERANGE || end == s)
        return FALSE;
    while (g_ascii_isspace(*end))
        end++;
    return *end == '\0';
}

static gboolean get_int(const cs_nccl_env_t *e, const char *name, gint64 min, gint64 max,
                        gint64 def, gint64 *v_p, GError **err)
{
    const char *s = value_of(e, name);
    gint64 v = def;
    if (s != NULL) {
        if (!parse_int_value(s, &v) && !int_overflows(s)) {
            value_error(err, e, name, "not an integer; expected an integer from %" G_GINT64_FORMAT
                        " to %" G_GINT64_FORMAT, min, max);
            return FALSE;
        }
        if (!parse_int_value(s, &v) || v < min || v > max) {
            value_error(err, e, name, "out of range; expected an integer from %" G_GINT64_FORMAT
                        " to %" G_GINT64_FORMAT, min, max);
            return FALSE;
        }
    }
    *v_p = v;
    return TRUE;
}

#define GET_INT(name, min, max, def, field)                                   \
    do {                                                                      \
        gint64 v_;                                                            \
        if (!get_int(e, name, min, max, def, &v_, err))                       \
            goto fail;                                                        \
        field = v_;                                                           \
    } while (0)

static char *join_names(const char *const *names, int n)
{
    GString *s = g_string_new(NULL);
    for (int i = 0; i < n; i++)
        g_string_append_printf(s, "%s%s", i ? ", " : "", names[i]);
    return g_string_free(s, FALSE);
}

/* NCCL's parseList (tuning.cc): "elems;prefix:elems;...", elems is a comma
 * list optionally starting with '^' (everything but), names compared
 * case-insensitively; an entry with a prefix resets that collective's row,
 * one without applies to every collective and is only allowed first. Empty
 * tokens are skipped (strtok). 'list' is CS_COLL_COUNT rows of 'nelems'. */
static gboolean parse_list(const cs_nccl_env_t *e, const char *name, const char *const *elems,
                           int nelems, const char *what, int *list, GError **err)
{
    const char *str = cs_nccl_env_get(e, name);
    g_auto(GStrv) entries = g_strsplit(str, ";", -1);
    gboolean first = TRUE;
    for (int i = 0; entries[i] != NULL; i++) {
        if (entries[i][0] == '\0')
            continue;
        g_auto(GStrv) parts = g_strsplit(entries[i], ":", -1);
        /* strtok semantics: empty fields between ':' vanish. */
        const char *fields[2] = { NULL, NULL };
        int nf = 0;
        for (int k = 0; parts[k] != NULL && nf < 2; k++)
            if (parts[k][0] != '\0')
                fields[nf++] = parts[k];
        if (nf == 0)
            continue;
        const char *prefix = nf == 2 ? fields[0] : NULL;
        const char *elem_list = nf == 2 ? fields[1] : fields[0];
        if (prefix == NULL && !first) {
            value_error(err, e, name, "'%s' has no collective prefix; expected every entry but "
                        "the first to name a collective, e.g. \"allreduce:%s\"",
                        entries[i], elem_list);
            return FALSE;
        }
        first = FALSE;
        int set = 1, unset = 0;
        if (elem_list[0] == '^') {
            set = 0;
            unset = 1;
            elem_list++;
        }
        int coll = -1;
        if (prefix != NULL) {
            for (int c = 0; c < CS_COLL_COUNT; c++)
                if (g_ascii_strcasecmp(prefix, nccl_func_str[c]) == 0)
                    coll = c;
            if (coll < 0) {
                g_autofree char *names = join_names(nccl_func_str, CS_COLL_COUNT);
                value_error(err, e, name, "unknown collective '%s'; expected one of %s",
                            prefix, names);
                return FALSE;
            }
        }
        for (int c = 0; c < CS_COLL_COUNT; c++) {
            if (coll >= 0 && c != coll)
                continue;
            for (int k = 0; k < nelems; k++)
                list[c * nelems + k] = unset;
            g_auto(GStrv) toks = g_strsplit(elem_list, ",", -1);
            for (int k = 0; toks[k] != NULL; k++) {
                if (toks[k][0] == '\0')
                    continue;
                int found = -1;
                for (int x = 0; x < nelems; x++)
                    if (g_ascii_strcasecmp(toks[k], elems[x]) == 0)
                        found = x;
                if (found < 0) {
                    g_autofree char *names = join_names(elems, nelems);
                    gboolean spaced = strchr(toks[k], ' ') != NULL;
                    value_error(err, e, name, "unknown %s '%s'%s; expected one of %s (case does "
                                "not matter)", what, toks[k],
                                spaced ? " (NCCL does not strip spaces)" : "", names);
                    return FALSE;
                }
                list[c * nelems + found] = set;
            }
        }
    }
    return TRUE;
}

static const char *const level_names[] = {
    "LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS"
};

/* NCCL_P2P_LEVEL / NCCL_NET_GDR_LEVEL (paths.cc ncclGetLevel): a path type
 * name, compared case-sensitively, or an old-style integer 0-5 meaning LOC,
 * PIX, PXB, PHB, SYS, SYS (larger values count as 5). */
static gboolean parse_level(const cs_nccl_env_t *e, const char *name, int *level_p, GError **err)
{
    static const int old_to_new[] = { CS_PATH_LOC, CS_PATH_PIX, CS_PATH_PXB, CS_PATH_PHB,
                                      CS_PATH_SYS, CS_PATH_SYS };
    const char *s = value_of(e, name);
    if (s == NULL) {
        *level_p = -1;
        return TRUE;
    }
    for (int i = 0; i < (int)G_N_ELEMENTS(level_names); i++) {
        if (strcmp(s, level_names[i]) == 0) {
            *level_p = i;
            return TRUE;
        }
    }
    gint64 v;
    if (g_ascii_isdigit(s[0]) && parse_int_value(s, &v)) {
        *level_p = old_to_new[MIN(v, (gint64)5)];
        return TRUE;
    }
    g_autofree char *names = join_names(level_names, G_N_ELEMENTS(level_names));
    for (int i = 0; i < (int)G_N_ELEMENTS(level_names); i++) {
        if (g_ascii_strcasecmp(s, level_names[i]) == 0) {
            value_error(err, e, name, "NCCL compares level names case-sensitively and would "
                        "ignore '%s'; expected one of %s, or 0-5", s, names);
            return FALSE;
        }
    }
    value_error(err, e, name, "unknown path level; expected one of %s, or an old-style "
                "level 0-5", names);
    return FALSE;
}

void cs_nccl_settings_clear(cs_nccl_settings_t *s)
{
    if (s == NULL)
        return;
    g_clear_pointer(&s->net, g_free);
    g_clear_pointer(&s->ib_hca, g_free);
    g_clear_pointer(&s->socket_ifname, g_free);
}

gboolean cs_nccl_env_settings(const cs_nccl_env_t *e, cs_nccl_settings_t *s_p, GError **err)
{
    cs_nccl_settings_t s;
    memset(&s, 0, sizeof s);
    const char *v;

    /* NCCL_ALGO / NCCL_PROTO: everything on, LL128 left to NCCL's default
     * rule (tuning.cc ncclTopoTuneModel: protoEnable 2 for LL128). */
    int algo[CS_COLL_COUNT * CS_ALGO_COUNT], proto[CS_COLL_COUNT * CS_PROTO_COUNT];
    for (int c = 0; c < CS_COLL_COUNT; c++) {
        for (int a = 0; a < CS_ALGO_COUNT; a++)
            algo[c * CS_ALGO_COUNT + a] = 1;
        for (int p = 0; p < CS_PROTO_COUNT; p++)
            proto[c * CS_PROTO_COUNT + p] = p == CS_PROTO_LL128 ? 2 : 1;
    }
    if (cs_nccl_env_get(e, "NCCL_PROTO") != NULL) {
        s.proto_set = TRUE;
        if (!parse_list(e, "NCCL_PROTO", nccl_proto_str, CS_PROTO_COUNT, "protocol", proto, err))
            goto fail;
    }
    if (cs_nccl_env_get(e, "NCCL_ALGO") != NULL) {
        s.algo_set = TRUE;
        if (!parse_list(e, "NCCL_ALGO", nccl_algo_str, CS_ALGO_COUNT, "algorithm", algo, err))
            goto fail;
    }
    for (int c = 0; c < CS_COLL_COUNT; c++) {
        for (int a = 0; a < CS_ALGO_COUNT; a++)
            s.algo_enabled[c][a] = algo[c * CS_ALGO_COUNT + a];
        for (int p = 0; p < CS_PROTO_COUNT; p++)
            s.proto_enabled[c][p] = proto[c * CS_PROTO_COUNT + p];
    }

    /* Channels (connect.cc ncclMinNchannels/ncclMaxNchannels): the legacy
     * NRINGS names are read first, NCHANNELS wins; min is capped at 64,
     * max is clamped to 1..64. */
    gint64 mn = -2, mx = -2, t;
    GET_INT("NCCL_MIN_NRINGS", 0, G_MAXINT, -2, mn);
    GET_INT("NCCL_MIN_NCHANNELS", 0, G_MAXINT, mn, mn);
    GET_INT("NCCL_MAX_NRINGS", 0, G_MAXINT, -2, mx);
    GET_INT("NCCL_MAX_NCHANNELS", 0, G_MAXINT, mx, mx);
    s.min_nchannels = mn == -2 ? 0 : (int)MIN(mn, 64);
    s.max_nchannels = mx == -2 ? 64 : (int)CLAMP(mx, 1, 64);
    /* NCCL_MIN_CTAS / NCCL_MAX_CTAS (init.cc: values <= 0 are ignored,
     * larger than MAXCHANNELS capped). */
    GET_INT("NCCL_MIN_CTAS", 1, G_MAXINT, 1, t);
    s.min_ctas = (int)MIN(t, 64);
    GET_INT("NCCL_MAX_CTAS", 1, G_MAXINT, 64, t);
    s.max_ctas = (int)MIN(t, 64);

    GET_INT("NCCL_BUFFSIZE", 1, G_MAXINT, -1, s.buffsize);
    GET_INT("NCCL_LL_BUFFSIZE", 1, G_MAXINT, -1, s.ll_buffsize);
    GET_INT("NCCL_LL128_BUFFSIZE", 1, G_MAXINT, -1, s.ll128_buffsize);

    /* NCCL_NTHREADS / NCCL_LL128_NTHREADS (tuning.cc getNthreads): NCCL
     * falls back to its maximum on a bad value; collsim says so instead. */
    GET_INT("NCCL_NTHREADS", 64, 512, -1, s.nthreads);
    if (s.nthreads > 0 && s.nthreads % 32 != 0) {
        value_error(err, e, "NCCL_NTHREADS", "not a multiple of 32; expected a multiple of "
                    "32 from 64 to 512");
        goto fail;
    }
    GET_INT("NCCL_LL128_NTHREADS", 160, 640, -1, s.ll128_nthreads);
    if (s.ll128_nthreads > 0 && s.ll128_nthreads % 32 != 0) {
        value_error(err, e, "NCCL_LL128_NTHREADS", "not a multiple of 32; expected a "
                    "multiple of 32 from 160 to 640");
        goto fail;
    }

    GET_INT("NCCL_NVLS_ENABLE", 0, 2, 2, s.nvls_enable);
    GET_INT("NCCL_NVLS_NCHANNELS", 1, 64, -1, s.nvls_nchannels);
    GET_INT("NCCL_NVLS_CHUNKSIZE", 1, G_MAXINT, 131072, s.nvls_chunksize);
    GET_INT("NCCL_COLLNET_ENABLE", 0, 1, 0, s.collnet_enable);
    GET_INT("NCCL_COLLNET_NODE_THRESHOLD", 0, G_MAXINT, 2, s.collnet_node_threshold);
    GET_INT("NCCL_PAT_ENABLE", 0, 2, 2, s.pat_enable);
    GET_INT("NCCL_LL128_C2C", 0, 1, 1, s.ll128_c2c);
    GET_INT("NCCL_NET_OVERHEAD", 0, 1000000000, -1, t);
    s.net_overhead_us = t < 0 ? -1.0 : t * 0.001;   /* ns (tuning.cc getNetOverhead) */

    /* NCCL_P2P_DISABLE=1 means level LOC and wins over NCCL_P2P_LEVEL;
     * other values leave the level to NCCL_P2P_LEVEL (paths.cc ncclGetLevel). */
    GET_INT("NCCL_P2P_DISABLE", 0, 1, 0, t);
    s.p2p_disable = t == 1;
    if (!parse_level(e, "NCCL_P2P_LEVEL", &s.p2p_level, err))
        goto fail;
    if (s.p2p_disable)
        s.p2p_level = CS_PATH_LOC;
    GET_INT("NCCL_SHM_DISABLE", 0, 1, 0, s.shm_disable);
    GET_INT("NCCL_SHM_USE_CUDA_MEMCPY", 0, 1, 0, s.shm_use_cuda_memcpy);
    GET_INT("NCCL_SHM_MEMCPY_MODE", 1, 3, 1, s.shm_memcpy_mode);
    GET_INT("NCCL_SHM_LOCALITY", 1, 2, 2, s.shm_locality);
    GET_INT("NCCL_NVB_DISABLE", 0, 1, 0, s.nvb_disable);
    GET_INT("NCCL_PXN_DISABLE", 0, 1, 0, s.pxn_disable);
    GET_INT("NCCL_NET_DISABLE_INTRA", 0, 1, 0, s.net_disable_intra);
    if (!parse_level(e, "NCCL_NET_GDR_LEVEL", &s.net_gdr_level, err))
        goto fail;
    GET_INT("NCCL_NET_GDR_READ", 0, 1, -2, s.net_gdr_read);
    GET_INT("NCCL_NET_GDR_C2C", 0, 1, 1, s.net_gdr_c2c);

    GET_INT("NCCL_IB_DISABLE", 0, 1, 0, s.ib_disable);
    if ((v = value_of(e, "NCCL_NET")) != NULL) {
        /* Matched case-insensitively against the plugins' names
         * (plugin/net.cc ncclNetInit); collsim has the two built-in ones. */
        if (g_ascii_strcasecmp(v, "IB") == 0)
            s.net = g_strdup("IB");
        else if (g_ascii_strcasecmp(v, "Socket") == 0)
            s.net = g_strdup("Socket");
        else {
            value_error(err, e, "NCCL_NET", "collsim models only NCCL's built-in networks; "
                        "expected IB or Socket");
            goto fail;
        }
    }
    if ((v = value_of(e, "NCCL_IB_HCA")) != NULL)
        s.ib_hca = g_strdup(v);
    if ((v = value_of(e, "NCCL_SOCKET_IFNAME")) != NULL)
        s.socket_ifname = g_strdup(v);
    GET_INT("NCCL_SOCKET_NTHREADS", 1, 16, -2, s.socket_nthreads);
    GET_INT("NCCL_NSOCKS_PERTHREAD", 1, 64, -2, s.nsocks_perthread);
    GET_INT("NCCL_IB_GID_INDEX", -1, 255, -1, s.ib_gid_index);
    GET_INT("NCCL_IB_TC", -1, 255, -1, s.ib_tc);
    GET_INT("NCCL_IB_SL", -1, 15, -1, s.ib_sl);
    GET_INT("NCCL_IB_QPS_PER_CONNECTION", 1, 128, 1, s.ib_qps_per_conn);
    GET_INT("NCCL_IB_SPLIT_DATA_ON_QPS", 0, 1, 0, s.ib_split_data_on_qps);
    GET_INT("NCCL_IB_TIMEOUT", 1, 31, 20, s.ib_timeout);      /* the QP attribute's 5 bits */
    GET_INT("NCCL_IB_RETRY_CNT", 0, 7, 7, s.ib_retry_cnt);     /* 3 bits */
    GET_INT("NCCL_IB_ADAPTIVE_ROUTING", 0, 1, -2, s.ib_adaptive_routing);
    GET_INT("NCCL_IB_AR_THRESHOLD", 0, G_MAXINT, 8192, s.ib_ar_threshold);
    GET_INT("NCCL_CROSS_NIC", 0, 2, 2, s.cross_nic);

    /* NCCL_THREAD_THRESHOLDS (tuning.cc): up to six numbers, Tree LL LL128
     * Simple then Ring LL LL128 Simple; negative keeps the default. */
    for (int a = 0; a < 2; a++)
        for (int p = 0; p < CS_PROTO_COUNT; p++)
            s.thread_thresholds[a][p] = -2;
    if ((v = value_of(e, "NCCL_THREAD_THRESHOLDS")) != NULL) {
        g_auto(GStrv) toks = g_strsplit_set(v, " \t", -1);
        int k = 0;
        for (int i = 0; toks[i] != NULL; i++) {
            gint64 x;
            if (toks[i][0] == '\0')
                continue;
            if (k >= 6 || !parse_int_value(toks[i], &x)) {
                value_error(err, e, "NCCL_THREAD_THRESHOLDS", "expected up to six integers "
                            "separated by spaces (Tree LL LL128 Simple, Ring LL LL128 Simple)");
                goto fail;
            }
            s.thread_thresholds[k / 3][k % 3] = x < 0 ? -2 : x;
            k++;
        }
    }

    *s_p = s;
    return TRUE;

fail:
    cs_nccl_settings_clear(&s);
    return FALSE;
}
