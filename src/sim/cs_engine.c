/* The engine registry and the sweep driver shared by every engine: for each
 * size, NCCL's decision (cs_comm_decide), the engine's price for it, and a
 * result row in nccl-tests's terms. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "sim/cs_engine.h"
#include "models/cs_shm.h"
#include "sim/cs_engine_analytic-int.h"
#include "sim/cs_engine_flow-int.h"
#include "sim/cs_engine_packet-int.h"
#include "util/cs_error.h"
#include "util/cs_units.h"
/* The SimGrid engine exists where configure found SimGrid. */
#ifdef HAVE_SIMGRID
#include "sim/cs_engine_simgrid-int.h"
#endif

/* One line per engine built in; the first is the default. */
static const cs_engine_ops_t *const engines[] = {
    &cs_engine_analytic,
    &cs_engine_flow,
    &cs_engine_packet,
#ifdef HAVE_SIMGRID
    &cs_engine_simgrid,
#endif
};

const cs_engine_ops_t *cs_engine_find(const char *name)
{
    if (name == NULL)
        return NULL;
    for (gsize i = 0; i < G_N_ELEMENTS(engines); i++)
        if (g_ascii_strcasecmp(engines[i]->name, name) == 0)
            return engines[i];
    return NULL;
}

const char *cs_engine_names(void)
{
    static char names[256];
    if (names[0] == '\0') {
        for (gsize i = 0; i < G_N_ELEMENTS(engines); i++) {
            if (i > 0)
                g_strlcat(names, ", ", sizeof names);
            g_strlcat(names, engines[i]->name, sizeof names);
        }
    }
    return names;
}

static char *fabric_warning(const cs_engine_ops_t *ops, const cs_fabric_cfg_t *cfg)
{
    if (ops->fabric || cfg == NULL || !cs_fabric_cfg_any(cfg))
        return NULL;
    const char *first = NULL;
    for (int k = 0; k < CS_FK_COUNT && first == NULL; k++)
        first = cs_fabric_cfg_where(cfg, k);
    /* the PFC classes are still read for the header's lossy-priority
     * check (lossy_note below), which every engine prints */
    return g_strdup_printf("the fabric settings (%s%s) describe the packets of --model packet; --model %s does not "
                           "simulate them (it reads only the PFC classes, to say where RoCE data lands on a lossy "
                           "priority)", first != NULL ? first : "[fabric]",
                           __builtin_popcountll(cfg->set) > 1 ? " and others" : "", ops->name);
}

static char *env_warning(const cs_engine_ops_t *ops, const cs_nccl_env_t *env)
{
    /* read by the packet engine's queue pairs, routing and retransmission
     * (cs_pkt_qp.c, cs_pkt_net.c); the others move data in flows */
    static const char *const packet_only[] = {
        "NCCL_IB_QPS_PER_CONNECTION", "NCCL_IB_SPLIT_DATA_ON_QPS", "NCCL_IB_ADAPTIVE_ROUTING",
        "NCCL_IB_AR_THRESHOLD", "NCCL_IB_TIMEOUT", "NCCL_IB_RETRY_CNT",
    };   /* not NCCL_IB_SL: every engine reads it for the lossy-priority check under trust = pcp */
    if (ops->fabric || env == NULL)
        return NULL;
    const char *first = NULL;
    int n = 0;
    for (gsize i = 0; i < G_N_ELEMENTS(packet_only); i++)
        if (cs_nccl_env_get(env, packet_only[i]) != NULL) {
            if (first == NULL)
                first = packet_only[i];
            n++;
        }
    if (first == NULL)
        return NULL;
    return g_strdup_printf("%s=%s%s shape%s queue pairs, adaptive routing or retransmissions, which only --model "
                           "packet simulates; --model %s prices the run as if %s unset", first,
                           cs_nccl_env_get(env, first), n > 1 ? " and others" : "", n > 1 ? "" : "s", ops->name,
                           n > 1 ? "they were" : "it were");
}

void cs_engine_ignored_settings(const cs_engine_ops_t *ops, const cs_fabric_cfg_t *cfg, const cs_nccl_env_t *env,
                                GPtrArray *out)
{
    char *w[2] = { fabric_warning(ops, cfg), env_warning(ops, env) };
    for (int k = 0; k < 2; k++)
        if (w[k] != NULL)
            g_ptr_array_add(out, w[k]);
}

void cs_engine_ignored_exact(const cs_engine_ops_t *ops, gboolean exact, GPtrArray *out)
{
    if (exact && !ops->exact_option)
        g_ptr_array_add(out, g_strdup_printf("--exact (exact = true) changes nothing for the %s model: it makes no "
                                             "approximation only to save time (--model flow's fold of a long ring "
                                             "is the one it turns off)", ops->name));
}

/* Copies at most the buffer's size minus one, always terminated. */
static void set_str(char *dst, size_t len, const char *src)
{
    g_strlcpy(dst, src != NULL ? src : "", len);
}

/* The transport a call's data crosses, as nccl-tests logs would name it:
 * the network transport when the ranks span nodes, else the intra one. */
static const char *call_transport(const cs_comm_info_t *info, char *buf, size_t len)
{
    if (info->nranks <= 1)
        return "";
    if (info->nnodes > 1 && (info->inter_transport == CS_XPORT_NET_IB ||
                             info->inter_transport == CS_XPORT_NET_SOCKET)) {
        const char *gdr = info->inter_transport == CS_XPORT_NET_IB ? (info->gdr ? "/GDRDMA" : "") : "";
        if (info->ppn > 1)
            g_snprintf(buf, len, "%s+%s%s", cs_transport_name(info->intra_transport),
                       cs_transport_name(info->inter_transport), gdr);
        else
            g_snprintf(buf, len, "%s%s", cs_transport_name(info->inter_transport), gdr);
        return buf;
    }
    return cs_transport_name(info->intra_transport);
}

/* RoCE data on a priority without PFC (NCCL_IB_TC through the fabric's
 * DSCP map, or NCCL_IB_SL with trust pcp): under congestion the switches
 * drop it and the NICs go back N, which only an engine that reads the
 * fabric (the packet engine) models; the others price a lossless fabric
 * and say so. NULL when the data is lossless, stays in a node or is not
 * on RoCE. */
static char *lossy_note(const cs_engine_ops_t *ops, const cs_engine_job_t *job, const cs_comm_info_t *info,
                        const cs_topo_t *topo)
{
    if (ops->fabric || info->nnodes < 2 || info->inter_transport != CS_XPORT_NET_IB)
        return NULL;
    gboolean roce = FALSE;
    for (int d = 0; d < topo->ndevs && !roce; d++)
        roce = topo->devs[d].kind == CS_DEV_NIC && topo->devs[d].nic_kind == CS_NIC_ROCE;
    if (!roce)
        return NULL;
    cs_fabric_cfg_t defaults;
    cs_fabric_cfg_init(&defaults);
    const cs_fabric_cfg_t *cfg = job->fabric != NULL ? job->fabric : &defaults;
    g_autofree char *why = NULL;
    int prio = cs_fabric_data_prio(cfg, cs_comm_settings(job->comm), &why);
    gboolean lossless = (cfg->pfc >> prio & 1) != 0;
    cs_fabric_cfg_clear(&defaults);
    if (lossless)
        return NULL;
    return g_strdup_printf("RoCE on a lossy priority (%s; PFC is not on it): under congestion the switches drop "
                           "and the NICs go back N; --model %s prices a lossless fabric, --model packet the drops",
                           why, ops->name);
}

static void add_param_note(cs_result_t *r, const cs_params_t *params)
{
    int n = 0;
    for (int i = 0; i < CS_P_COUNT; i++)
        n += params->calibrated[i] ? 1 : 0;
    if (params->calibration_source != NULL)
        cs_result_add_note(r, "parameters: built-in defaults with %d overridden by %s", n,
                           params->calibration_source);
    else
        cs_result_add_note(r, "parameters: built-in defaults (docs/model-analytic.md)");
}

/* One note per run of consecutive sizes with the same text 'what' from
 * the engine: "<head> for 1 GiB to 4 GiB: <what>" (approximations,
 * bottlenecks). */
static void note_runs(cs_result_t *r, GPtrArray *per_size, const char *head)
{
    guint n = MIN(per_size->len, r->rows->len);
    for (guint i = 0; i < n;) {
        const char *what = g_ptr_array_index(per_size, i);
        guint j = i + 1;
        while (j < n && what != NULL && g_strcmp0(g_ptr_array_index(per_size, j), what) == 0)
            j++;
        if (what != NULL) {
            g_autofree char *a = cs_format_size(g_array_index(r->rows, cs_result_row_t, i).size);
            g_autofree char *b = cs_format_size(g_array_index(r->rows, cs_result_row_t, j - 1).size);
            if (j - i == 1)
                cs_result_add_note(r, "%s for %s: %s", head, a, what);
            else
                cs_result_add_note(r, "%s for %s to %s: %s", head, a, b, what);
        }
        i = j;
    }
}

/* The algorithm NCCL's tuner passed over that the engine prices lowest,
 * where it takes much less time than NCCL's pick (alt -1: none). */
typedef struct {
    int pick, pick_p, alt, alt_p;   /* cs_algo_t, cs_proto_t */
    double less;                    /* 1 - t_alt / t_pick */
    gboolean by_algo, by_proto;     /* the variables that make NCCL run alt/alt_p: NCCL_ALGO, NCCL_PROTO */
} faster_t;

/* Less than this share of NCCL's pick's time is worth a note: the engines'
 * own errors against real runs are about a tenth (docs/validation.md). */
#define FASTER_NOTE 0.2


struct cs_engine_sweep {
    const cs_engine_ops_t *ops;
    const cs_engine_job_t *job;
    void *state;
    gboolean opened;
    cs_result_t *r;
    const guint64 *sizes;
    int nsizes, next;
    cs_decision_t *decisions;   /* per size; unset where NCCL launches nothing */
    char xport[64];
    const char *xname;
    GPtrArray *approx;          /* per size priced, NULL: exact */
    GPtrArray *bottleneck;      /* per size priced, NULL: nothing to note */
    faster_t *faster;           /* per size (job->alternatives) */
    cs_engine_step_t step;
    char *counters;             /* step.counters' storage */
};

static volatile sig_atomic_t interrupted;   /* the signal, 0: none */

void cs_engine_interrupt(int sig)
{
    if (interrupted == 0)
        interrupted = sig > 0 ? sig : SIGINT;
    cs_engine_kill_children();
}

int cs_engine_interrupt_signal(void)
{
    return interrupted;
}

/* ---- child processes ------------------------------------------------------ */

/* A fixed table, so that a signal handler can walk it: a slot holds a pid
 * or 0. Few children run at once (one SimGrid call, the ranks of a real
 * run on one node). */
#define CHILDREN_MAX 256
static volatile sig_atomic_t children[CHILDREN_MAX];

void cs_engine_child_add(pid_t pid)
{
    for (int i = 0; i < CHILDREN_MAX; i++)
        if (children[i] == 0) {
            children[i] = (sig_atomic_t)pid;
            return;
        }
    /* full: the child still dies with the process (cs_engine_child_bind) */
}

void cs_engine_child_remove(pid_t pid)
{
    for (int i = 0; i < CHILDREN_MAX; i++)
        if (children[i] == (sig_atomic_t)pid)
            children[i] = 0;
}

void cs_engine_kill_children(void)
{
    for (int i = 0; i < CHILDREN_MAX; i++) {
        pid_t pid = (pid_t)children[i];
        if (pid > 0)
            kill(pid, SIGKILL);   /* reaped by the waitpid of whoever started it */
    }
}

gboolean cs_engine_child_bind(pid_t parent)
{
#ifdef __linux__
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
        return TRUE;   /* (cannot fail for SIGKILL) */
#endif
    /* the parent may have died between fork and prctl: then we were
     * reparented already and no signal will come */
    return getppid() == parent;
}

/* ---- memory limits ---------------------------------------------------------- */

static guint64 max_memory;   /* --max-memory; 0: none */

void cs_engine_set_max_memory(guint64 bytes)
{
    max_memory = bytes;
}

/* The value of 'key' in /proc/meminfo, bytes; 0 when unknown. */
static guint64 meminfo(const char *key)
{
    g_autofree char *text = NULL;
    if (!g_file_get_contents("/proc/meminfo", &text, NULL, NULL))
        return 0;
    gsize klen = strlen(key);
    for (char *line = text; line != NULL && *line != '\0';) {
        char *nl = strchr(line, '\n');
        if (strncmp(line, key, klen) == 0 && line[klen] == ':')
            return g_ascii_strtoull(line + klen + 1, NULL, 10) * 1024;   /* "kB" */
        line = nl != NULL ? nl + 1 : NULL;
    }
    return 0;
}

/* A cgroup v2 file of this process's cgroup holding one number; 0 when
 * absent or "max". */
static guint64 cgroup_value(const char *file)
{
    g_autofree char *self = NULL;
    if (!g_file_get_contents("/proc/self/cgroup", &self, NULL, NULL))
        return 0;
    /* cgroup v2: the line "0::/path" */
    char *p = strstr(self, "0::");
    if (p == NULL)
        return 0;
    p += 3;
    char *nl = strchr(p, '\n');
    if (nl != NULL)
        *nl = '\0';
    g_autofree char *path = g_build_filename("/sys/fs/cgroup", p, file, NULL);
    g_autofree char *v = NULL;
    if (!g_file_get_contents(path, &v, NULL, NULL) || !g_ascii_isdigit(v[0]))
        return 0;
    return g_ascii_strtoull(v, NULL, 10);
}

guint64 cs_engine_memory_limit(const char **what_p)
{
    guint64 limit = G_MAXUINT64;
    const char *what = NULL;
    guint64 avail = meminfo("MemAvailable");
    if (avail > 0) {
        limit = avail;
        what = "the memory available";
    }
    guint64 cg_max = cgroup_value("memory.max");
    if (cg_max > 0) {
        guint64 cur = cgroup_value("memory.current");
        guint64 left = cg_max > cur ? cg_max - cur : 0;
        if (left < limit) {
            limit = left;
            what = "the cgroup's memory.max";
        }
    }
    if (max_memory > 0 && max_memory <= limit) {
        limit = max_memory;
        what = "--max-memory";
    }
    if (what_p != NULL)
        *what_p = what;
    return limit;
}

/* "9.1 GiB", "512.0 MiB" (g_format_size_full puts a no-break space
 * between number and unit: this message stays ASCII) */
static char *format_bytes(double b)
{
    static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
    int u = 0;
    while (b >= 1024 && u < (int)G_N_ELEMENTS(unit) - 1) {
        b /= 1024;
        u++;
    }
    return u == 0 ? g_strdup_printf("%.0f B", b) : g_strdup_printf("%.1f %s", b, unit[u]);
}

gboolean cs_engine_check_cost(const cs_engine_ops_t *ops, int nnodes, gboolean jobs, const cs_engine_cost_t *cost,
                              GError **err)
{
    const char *what = NULL;
    guint64 limit = cs_engine_memory_limit(&what);
    if (limit == G_MAXUINT64 || cost->bytes <= (double)limit)
        return TRUE;
    g_autofree char *need = format_bytes(cost->bytes);
    g_autofree char *have = format_bytes((double)limit);
    g_autofree char *time = cost->seconds >= 60 ? g_strdup_printf(" and %.0f minute%s", cost->seconds / 60,
                                                                  cost->seconds < 90 ? "" : "s") : NULL;
    /* what to try instead: a cheaper engine, NCCL's ring (the flow engine
     * folds rings; the SimGrid engine runs fewer actors for them), fewer
     * nodes; the analytic engine's memory follows the nodes alone */
    gboolean few = nnodes <= 2;   /* fewer nodes than 2 is no cluster left to price */
    const char *instead = strcmp(ops->name, "analytic") == 0 ? (few ? NULL : "fewer nodes")
                        : strcmp(ops->name, "flow") != 0 ? (few ? "--model flow or NCCL_ALGO=Ring"
                                                                : "--model flow, NCCL_ALGO=Ring, or fewer nodes")
                        : jobs ? (few ? "NCCL_ALGO=Ring or --model analytic (each job or call priced alone)"
                                      : "NCCL_ALGO=Ring, fewer nodes, or --model analytic (each job or call priced alone)")
                               : (few ? "--model analytic or NCCL_ALGO=Ring"
                                      : "--model analytic, NCCL_ALGO=Ring, or fewer nodes");
    g_set_error(err, CS_ERROR, CS_ERROR_RESOURCE, "collsim: --model %s on %d node%s needs about %s%s (limit %s, %s); "
                "expected a larger limit%s%s", ops->name, nnodes, nnodes == 1 ? "" : "s", need,
                time != NULL ? time : "", have, what, instead != NULL ? ", or " : "", instead != NULL ? instead : "");
    return FALSE;
}

/* The largest estimate over a sweep's decisions (engines' costs depend on
 * the program's shape: one estimate per algorithm, protocol and channel
 * count). */
static gboolean check_sweep_cost(const cs_engine_ops_t *ops, const cs_engine_job_t *job, void *state,
                                 const guint64 *sizes, const cs_decision_t *decisions, int nsizes, GError **err)
{
    if (ops->estimate == NULL)
        return TRUE;
    const cs_comm_info_t *info = cs_comm_info(job->comm);
    cs_engine_cost_t worst = { 0, -1 };
    for (int i = 0; i < nsizes; i++) {
        const cs_decision_t *d = &decisions[i];
        guint64 count = cs_coll_count(job->coll, sizes[i], job->dtype, info->nranks);
        guint64 nb = cs_coll_nccl_bytes(job->coll, count, job->dtype, info->nranks);
        if (nb == 0)
            continue;
        /* the memory follows the program's shape, not its size: one
         * estimate per shape (the time adds up over every size) */
        gboolean seen = FALSE;
        for (int k = 0; k < i && !seen; k++)
            seen = decisions[k].algo == d->algo && decisions[k].proto == d->proto &&
                   decisions[k].nchannels == d->nchannels;
        if (seen && worst.seconds < 0)
            continue;
        cs_engine_call_t call = { .size = sizes[i], .count = count, .nccl_bytes = nb, .decision = d };
        cs_engine_cost_t c = { 0, -1 };
        if (!ops->estimate(state, job, &call, &c, err))
            return FALSE;
        worst.bytes = MAX(worst.bytes, c.bytes);
        if (c.seconds >= 0)
            worst.seconds = MAX(worst.seconds, 0) + c.seconds;
    }
    return cs_engine_check_cost(ops, info->nnodes, FALSE, &worst, err);
}

gboolean cs_engine_interrupted(void)
{
    return interrupted != 0;
}

double cs_engine_cpu_seconds(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    /* and the children waited for: the SimGrid engine prices each call
     * in a forked child (cs_engine_simgrid.c), whose CPU this thread's
     * clock does not see */
    struct rusage ch;
    double kids = getrusage(RUSAGE_CHILDREN, &ch) == 0
                      ? (double)ch.ru_utime.tv_sec + ch.ru_utime.tv_usec * 1e-6 + (double)ch.ru_stime.tv_sec +
                            ch.ru_stime.tv_usec * 1e-6
                      : 0;
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9 + kids;
}

static void set_interrupted(GError **err)
{
    g_clear_error(err);
    g_set_error(err, CS_ERROR, CS_ERROR_RUNTIME, "interrupted");
}

void cs_engine_sweep_free(cs_engine_sweep_t *sw)
{
    if (sw == NULL)
        return;
    if (sw->opened && sw->ops->close != NULL)
        sw->ops->close(sw->state);
    cs_result_free(sw->r);
    g_free(sw->decisions);
    g_free(sw->faster);
    g_ptr_array_unref(sw->approx);
    g_ptr_array_unref(sw->bottleneck);
    g_free(sw->counters);
    g_free(sw);
}

cs_engine_sweep_t *cs_engine_sweep_new(const cs_engine_ops_t *ops, const cs_engine_job_t *job,
                                       const guint64 *sizes, int nsizes, GError **err)
{
    g_return_val_if_fail(ops != NULL && job != NULL && job->comm != NULL, NULL);
    const cs_comm_info_t *info = cs_comm_info(job->comm);
    const cs_topo_t *topo = job->topo != NULL ? job->topo : cs_comm_topo(job->comm);

    g_autoptr(cs_engine_sweep_t) sw = g_new0(cs_engine_sweep_t, 1);
    sw->ops = ops;
    sw->job = job;
    sw->sizes = sizes;
    sw->nsizes = MAX(0, nsizes);
    sw->approx = g_ptr_array_new_with_free_func(g_free);
    sw->bottleneck = g_ptr_array_new_with_free_func(g_free);
    sw->decisions = g_new0(cs_decision_t, MAX(1, sw->nsizes));
    sw->faster = g_new(faster_t, MAX(1, sw->nsizes));
    for (int i = 0; i < MAX(1, sw->nsizes); i++)
        sw->faster[i] = (faster_t){ -1, -1, -1, -1, 0, FALSE, FALSE };
    g_autofree char *producer = g_strconcat("model:", ops->name, NULL);
    sw->r = cs_result_new(producer, topo->description != NULL ? topo->description : topo->source, job->coll,
                          info->nranks, info->nnodes);
    g_autofree char *xsum = cs_comm_transport_summary(job->comm);
    if (xsum != NULL)
        cs_result_add_note(sw->r, "transports: %s", xsum);
    g_autofree char *shm = cs_shm_note(job->comm);
    if (shm != NULL)
        cs_result_add_note(sw->r, "%s", shm);
    add_param_note(sw->r, job->params);
    g_autofree char *lossy = lossy_note(ops, job, info, topo);
    if (lossy != NULL)
        cs_result_add_note(sw->r, "%s", lossy);
    if (cs_comm_collnet_note(job->comm) != NULL)
        cs_result_add_note(sw->r, "collnet: %s", cs_comm_collnet_note(job->comm));
    sw->xname = call_transport(info, sw->xport, sizeof sw->xport);

    for (int i = 0; i < sw->nsizes; i++) {
        guint64 count = cs_coll_count(job->coll, sizes[i], job->dtype, info->nranks);
        guint64 nb = cs_coll_nccl_bytes(job->coll, count, job->dtype, info->nranks);
        if (nb > 0 && !cs_comm_decide_op(job->comm, job->coll, job->dtype, job->redop, nb, &sw->decisions[i], err))
            return NULL;
    }
    if (ops->open != NULL && !ops->open(job, &sw->state, err))
        return NULL;
    sw->opened = TRUE;
    if (ops->notes != NULL) {
        g_auto(GStrv) notes = ops->notes(sw->state);
        for (int k = 0; notes != NULL && notes[k] != NULL; k++)
            cs_result_add_note(sw->r, "%s", notes[k]);
    }
    if (!check_sweep_cost(ops, job, sw->state, sizes, sw->decisions, sw->nsizes, err))
        return NULL;
    return g_steal_pointer(&sw);
}

cs_result_t *cs_engine_sweep_result(cs_engine_sweep_t *sw)
{
    return sw->r;
}

/* Each algorithm and protocol NCCL allows for size i and its tuner passed
 * over, as NCCL_ALGO and NCCL_PROTO naming them would have NCCL run it
 * (cs_comm_decide_forced), priced by the same engine (after everything the
 * sweep keeps of the size's own call: the state's last call is then an
 * alternative's). */
static void price_alternatives(cs_engine_sweep_t *sw, int i, const cs_engine_call_t *call, double t_pick)
{
    const cs_engine_job_t *job = sw->job;
    const cs_decision_t *d = &sw->decisions[i];
    if (cs_coll_is_p2p(job->coll) || !(t_pick > 0))
        return;
    double best = t_pick;
    for (int a = 0; a < CS_ALGO_COUNT; a++)
        for (int p = 0; p < CS_PROTO_COUNT; p++) {
            cs_decision_t da;
            if ((a == (int)d->algo && p == (int)d->proto) || d->table_us[a][p] < 0 ||
                !cs_comm_decide_forced(job->comm, job->coll, job->dtype, job->redop, call->nccl_bytes, a, p, &da,
                                       NULL))
                continue;
            cs_engine_call_t c = *call;
            c.decision = &da;
            double t[2];
            if (sw->ops->predict(sw->state, job, &c, t, NULL) && t[CS_OOP] > 0 && t[CS_OOP] < best) {
                best = t[CS_OOP];
                if (1 - best / t_pick >= FASTER_NOTE)
                    sw->faster[i] = (faster_t){ (int)d->algo, (int)d->proto, a, p, 1 - best / t_pick,
                                                FALSE, FALSE };
            }
        }
    /* the variables that run it: one where NCCL's tuner, left the other
     * half, picks the same pair; else both */
    faster_t *f = &sw->faster[i];
    if (f->alt < 0)
        return;
    cs_decision_t dv;
    if (f->alt_p == f->pick_p &&
        cs_comm_decide_forced(job->comm, job->coll, job->dtype, job->redop, call->nccl_bytes, f->alt, -1, &dv, NULL) &&
        (int)dv.algo == f->alt && (int)dv.proto == f->alt_p)
        f->by_algo = TRUE;
    else if (f->alt == f->pick &&
             cs_comm_decide_forced(job->comm, job->coll, job->dtype, job->redop, call->nccl_bytes, -1, f->alt_p, &dv,
                                   NULL) &&
             (int)dv.algo == f->alt && (int)dv.proto == f->alt_p)
        f->by_proto = TRUE;
    else
        f->by_algo = f->by_proto = TRUE;
}

int cs_engine_sweep_next(cs_engine_sweep_t *sw, const cs_engine_step_t **step_p, GError **err)
{
    if (sw->next >= sw->nsizes)
        return 0;
    if (cs_engine_interrupted()) {
        set_interrupted(err);
        return -1;
    }
    const cs_engine_job_t *job = sw->job;
    const cs_engine_ops_t *ops = sw->ops;
    const cs_comm_info_t *info = cs_comm_info(job->comm);
    int i = sw->next;
    gboolean timed = job->time_steps;
    double cpu0 = timed ? cs_engine_cpu_seconds() : 0;
    gint64 wall0 = timed ? g_get_monotonic_time() : 0;

    cs_result_row_t row;
    memset(&row, 0, sizeof row);
    guint64 count = cs_coll_count(job->coll, sw->sizes[i], job->dtype, info->nranks);
    cs_engine_call_t call = {
        .size = sw->sizes[i],
        .count = count,
        .nccl_bytes = cs_coll_nccl_bytes(job->coll, count, job->dtype, info->nranks),
    };
    row.size = cs_coll_print_size(job->coll, count, job->dtype, info->nranks);
    row.count = count;
    row.dtype = job->dtype;
    row.redop = job->redop;
    row.root = cs_coll_has_root(job->coll) ? job->root : -1;
    row.wrong[CS_OOP] = row.wrong[CS_INP] = -1;
    row.nccl_est_us = -1;
    g_clear_pointer(&sw->counters, g_free);
    if (call.nccl_bytes == 0) {
        /* NCCL returns before launching anything for an empty call:
         * no time on the GPU, and nccl-tests prints 0 bandwidth. */
        set_str(row.algo, sizeof row.algo, "none");
        g_ptr_array_add(sw->approx, NULL);
        g_ptr_array_add(sw->bottleneck, NULL);
    } else {
        const cs_decision_t *d = &sw->decisions[i];
        double t[2];
        call.decision = d;
        if (job->sink != NULL && job->sink->begin != NULL) {
            g_autofree char *sz = cs_format_size(row.size);
            g_autofree char *label = g_strdup_printf("%s %s", cs_coll_name(job->coll), sz);
            job->sink->begin(job->sink, label);
        }
        if (!ops->predict(sw->state, job, &call, t, err)) {
            if (cs_engine_interrupted())
                set_interrupted(err);
            else
                g_prefix_error(err, "size %" G_GUINT64_FORMAT ": ", sw->sizes[i]);
            return -1;
        }
        if (job->link_stats != NULL && ops->link_stats != NULL)
            g_ptr_array_add(job->link_stats, ops->link_stats(sw->state));
        g_ptr_array_add(sw->approx, ops->approximation != NULL ? ops->approximation(sw->state) : NULL);
        g_ptr_array_add(sw->bottleneck, ops->bottleneck != NULL ? ops->bottleneck(sw->state) : NULL);
        if (ops->counters != NULL)
            sw->counters = ops->counters(sw->state);
        cs_net_counters_t *net = ops->net_counters != NULL ? ops->net_counters(sw->state) : NULL;
        if (net != NULL) {
            if (sw->r->net == NULL)
                sw->r->net = g_ptr_array_new_with_free_func((GDestroyNotify)cs_net_counters_free);
            while (sw->r->net->len < sw->r->rows->len)
                g_ptr_array_add(sw->r->net, NULL);
            g_ptr_array_add(sw->r->net, net);
        }
        if (job->alternatives && ops->closed_form) {
            /* last: the state's last call is then an alternative's; and
             * outside the size's own CPU and wall time (-v) */
            double cpu1 = timed ? cs_engine_cpu_seconds() : 0;
            gint64 wall1 = timed ? g_get_monotonic_time() : 0;
            price_alternatives(sw, i, &call, t[CS_OOP]);
            if (timed) {
                cpu0 += cs_engine_cpu_seconds() - cpu1;
                wall0 += g_get_monotonic_time() - wall1;
            }
        }
        row.time_us[CS_OOP] = t[CS_OOP] * 1e6;
        row.time_us[CS_INP] = t[CS_INP] * 1e6;
        cs_result_row_fill_bw(sw->r, &row);
        set_str(row.algo, sizeof row.algo, cs_algo_name(d->algo));
        set_str(row.proto, sizeof row.proto, cs_proto_name(d->proto));
        row.nchannels = d->nchannels;
        set_str(row.transport, sizeof row.transport, sw->xname);
        row.nccl_est_us = d->nccl_time_us;
    }
    g_array_append_val(sw->r->rows, row);
    sw->next++;
    sw->step = (cs_engine_step_t){
        .index = sw->r->rows->len - 1,
        .cpu_s = timed ? cs_engine_cpu_seconds() - cpu0 : 0,
        .wall_s = timed ? (g_get_monotonic_time() - wall0) * 1e-6 : 0,
        .counters = sw->counters,
    };
    if (step_p != NULL)
        *step_p = &sw->step;
    return 1;
}

/* "algorithm for 8 MiB to 32 MiB: ..." for each run of sizes where the
 * same algorithm is much faster than the same pick. */
static void note_faster(cs_engine_sweep_t *sw, cs_result_t *r)
{
    guint n = MIN((guint)sw->nsizes, r->rows->len);
    for (guint i = 0; i < n;) {
        const faster_t *f = &sw->faster[i];
        guint j = i + 1;
        double lo = f->less, hi = f->less;
        while (j < n && f->alt >= 0 && sw->faster[j].alt == f->alt && sw->faster[j].alt_p == f->alt_p &&
               sw->faster[j].pick == f->pick && sw->faster[j].pick_p == f->pick_p &&
               sw->faster[j].by_algo == f->by_algo && sw->faster[j].by_proto == f->by_proto) {
            lo = MIN(lo, sw->faster[j].less);
            hi = MAX(hi, sw->faster[j].less);
            j++;
        }
        if (f->alt >= 0) {
            g_autofree char *a = cs_format_size(g_array_index(r->rows, cs_result_row_t, i).size);
            g_autofree char *b = cs_format_size(g_array_index(r->rows, cs_result_row_t, j - 1).size);
            g_autofree char *range = j - i == 1 ? g_strdup_printf("%s", a) : g_strdup_printf("%s to %s", a, b);
            g_autofree char *pct = llround(100 * lo) == llround(100 * hi)
                ? g_strdup_printf("%.0f%%", 100 * lo) : g_strdup_printf("%.0f-%.0f%%", 100 * lo, 100 * hi);
            /* the variables that run it (price_alternatives) */
            g_autofree char *how = f->by_algo && f->by_proto
                ? g_strdup_printf("NCCL_ALGO=%s NCCL_PROTO=%s", cs_algo_name((cs_algo_t)f->alt),
                                  cs_proto_name((cs_proto_t)f->alt_p))
                : f->by_algo ? g_strdup_printf("NCCL_ALGO=%s", cs_algo_name((cs_algo_t)f->alt))
                             : g_strdup_printf("NCCL_PROTO=%s", cs_proto_name((cs_proto_t)f->alt_p));
            cs_result_add_note(r, "algorithm for %s: NCCL's tuner picks %s %s by its own cost model, and %s %s, "
                               "priced by this model, takes %s less time (%s runs it); the rows price NCCL's pick",
                               range, cs_algo_name((cs_algo_t)f->pick), cs_proto_name((cs_proto_t)f->pick_p),
                               cs_algo_name((cs_algo_t)f->alt), cs_proto_name((cs_proto_t)f->alt_p), pct, how);
        }
        i = j;
    }
}

cs_result_t *cs_engine_sweep_finish(cs_engine_sweep_t *sw)
{
    if (sw->opened && sw->ops->close != NULL)
        sw->ops->close(sw->state);
    sw->opened = FALSE;
    cs_result_t *r = g_steal_pointer(&sw->r);
    note_runs(r, sw->bottleneck, "bottleneck");
    note_runs(r, sw->approx, "approximate");
    note_faster(sw, r);
    cs_result_finish(r);
    cs_engine_sweep_free(sw);
    return r;
}

cs_result_t *cs_engine_run_sweep(const cs_engine_ops_t *ops, const cs_engine_job_t *job,
                                 const guint64 *sizes, int nsizes, GError **err)
{
    g_autoptr(cs_engine_sweep_t) sw = cs_engine_sweep_new(ops, job, sizes, nsizes, err);
    if (sw == NULL)
        return NULL;
    int more;
    while ((more = cs_engine_sweep_next(sw, NULL, err)) > 0)
        ;
    if (more < 0)
        return NULL;
    return cs_engine_sweep_finish(g_steal_pointer(&sw));
}

static int stat_cmp(gconstpointer a, gconstpointer b)
{
    const cs_link_stat_t *x = a, *y = b;
    gint64 ux = llround(x->bytes / x->cap * 1e9), uy = llround(y->bytes / y->cap * 1e9);
    if (ux != uy)
        return ux > uy ? -1 : 1;
    return strcmp(x->name, y->name);
}

void cs_link_stats_sort(cs_link_stats_t *s)
{
    if (s->n > 1)
        qsort(s->links, (size_t)s->n, sizeof *s->links, stat_cmp);
}

void cs_link_stats_free(cs_link_stats_t *s)
{
    if (s == NULL)
        return;
    for (int i = 0; i < s->n; i++)
        g_free(s->links[i].name);
    g_free(s->links);
    cs_net_counters_free(s->net);
    g_free(s->limit);
    g_free(s->unrouted);
    g_free(s);
}

/* A communication task's call: its count and NCCL's bytes for the size,
 * and NCCL's decision for them (into *d, which the call then points to).
 * 'what' names the task in errors ("job", "task"). */
static gboolean decide_task(cs_engine_task_t *t, int i, const char *what, cs_decision_t *d, GError **err)
{
    const cs_comm_info_t *info = cs_comm_info(t->job.comm);
    t->call.count = cs_coll_count(t->job.coll, t->call.size, t->job.dtype, info->nranks);
    t->call.nccl_bytes = cs_coll_nccl_bytes(t->job.coll, t->call.count, t->job.dtype, info->nranks);
    if (t->call.nccl_bytes == 0) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s %d: the size is 0 bytes; expected a positive size", what, i);
        return FALSE;
    }
    if (!cs_comm_decide_op(t->job.comm, t->job.coll, t->job.dtype, t->job.redop, t->call.nccl_bytes, d, err))
        return FALSE;
    t->call.decision = d;
    return TRUE;
}

/* What cs_engine_run_jobs and cs_engine_run_graph share: the tasks
 * copied into 'tasks' (ntasks entries), each communication task's call
 * decided into decisions[i] (compute tasks' left alone), the memory the
 * run would take refused past the limit, and the tasks run together.
 * 'what' names a task in errors. */
static gboolean run_decided(const cs_engine_ops_t *ops, const cs_engine_multi_t *m, const char *what,
                            cs_engine_task_t *tasks, cs_decision_t *decisions, double *end_s,
                            cs_link_stats_t **stats_p, GError **err)
{
    for (int i = 0; i < m->ntasks; i++) {
        tasks[i] = m->tasks[i];
        if (tasks[i].busy_s == NULL && !decide_task(&tasks[i], i, what, &decisions[i], err))
            return FALSE;
    }
    cs_engine_multi_t all = *m;
    all.tasks = tasks;
    if (ops->estimate_jobs != NULL) {
        cs_engine_cost_t cost = { 0, -1 };
        if (!ops->estimate_jobs(&all, &cost, err) || !cs_engine_check_cost(ops, m->topo->nnodes, TRUE, &cost, err))
            return FALSE;
    }
    return ops->run_jobs(&all, end_s, stats_p, err);
}

gboolean cs_engine_run_jobs(const cs_engine_ops_t *ops, cs_engine_multi_t *m, cs_engine_outcome_t *outcomes,
                            cs_link_stats_t **stats_p, GError **err)
{
    g_return_val_if_fail(ops != NULL && m != NULL && outcomes != NULL, FALSE);
    if (ops->run_jobs == NULL) {
        g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED, "the %s model cannot run several jobs at once; expected --model flow or packet",
                    ops->name);
        return FALSE;
    }
    g_autofree cs_engine_task_t *tasks = g_new(cs_engine_task_t, MAX(1, m->ntasks));
    g_autofree cs_decision_t *dec = g_new0(cs_decision_t, MAX(1, m->ntasks));
    g_autofree double *end = g_new0(double, MAX(1, m->ntasks));
    if (!run_decided(ops, m, "job", tasks, dec, end, stats_p, err))
        return FALSE;
    for (int i = 0; i < m->ntasks; i++) {
        outcomes[i].decision = dec[i];
        outcomes[i].end_s = end[i];
    }
    /* each alone, from time 0, without the sink */
    for (int i = 0; i < m->ntasks; i++) {
        cs_engine_multi_t one = *m;
        cs_engine_task_t t = tasks[i];
        t.start_s = 0;
        one.sink = NULL;
        one.ntasks = 1;
        one.tasks = &t;
        double e1;
        if (!ops->run_jobs(&one, &e1, NULL, err))
            return FALSE;
        outcomes[i].alone_s = e1;
    }
    return TRUE;
}

/* The tasks are checked first (cs_flow_check_tasks: the rules are the
 * engine-neutral ones of cs_engine_task_t), so that a bad dependency is
 * reported as such by every engine, before NCCL decides anything. */
gboolean cs_engine_run_graph(const cs_engine_ops_t *ops, const cs_engine_multi_t *m, cs_decision_t *decisions,
                             GError **err)
{
    g_return_val_if_fail(ops != NULL && m != NULL && decisions != NULL, FALSE);
    if (ops->run_jobs == NULL) {
        g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED, "the %s model cannot run a workload's tasks together "
                    "(their overlap and shared links); expected --model flow or packet", ops->name);
        return FALSE;
    }
    if (m->ntasks == 0)
        return TRUE;   /* nothing to run */
    if (!cs_flow_check_tasks(m->tasks, m->ntasks, err))
        return FALSE;
    g_autofree cs_engine_task_t *tasks = g_new(cs_engine_task_t, m->ntasks);
    g_autofree cs_decision_t *dec = g_new0(cs_decision_t, m->ntasks);
    g_autofree double *end = g_new0(double, m->ntasks);
    if (!run_decided(ops, m, "task", tasks, dec, end, NULL, err))
        return FALSE;
    memcpy(decisions, dec, sizeof(cs_decision_t) * m->ntasks);
    return TRUE;
}
