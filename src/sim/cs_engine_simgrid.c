/* The SimGrid engine: executes the same rank programs as the flow engine
 * (cs_program.h) as SimGrid actors, one per (channel, position), on a
 * platform generated from the topology, so that SimGrid's own max-min
 * solver (network model CM02, factors 1) cross-checks the flow engine's
 * bandwidth sharing. Resources, coefficients, ceilings and per-step costs
 * are the flow engine's (cs_engine_flow.c, docs/model-flow.md); the mapping
 * onto SimGrid is in docs/model-simgrid.md.
 *
 * SimGrid 3.32 keeps one global engine per process and cannot be
 * initialised twice (simgrid_init), so every call runs in a forked child
 * that builds the platform, runs the actors and writes its time back over
 * a pipe. This engine is a cross-check, not a fast path: it simulates
 * every lane (no node folding) and SimGrid allocates as it pleases. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/semaphore.h>

#include "sim/cs_engine_simgrid-int.h"
#include "sim/cs_engine_flow-int.h"
#include "models/cs_program.h"
#include "models/cs_paths.h"
#include "util/cs_error.h"

#define US 1e-6
#define GBPS 1e9
#define MPASS_MAX 3                       /* cs_prog_op_t.mem_passes: 2 copy, 3 reduce */
#define QMAX 32                           /* largest multiplicity denominator */

/* The network (resources, edges, per-channel ceilings, launch cost) is the
 * flow engine's own (cs_flow_net.c), so the two engines differ only in the
 * engine. */
typedef cs_flow_net_t ctx_t;

static ctx_t *ctx_new(const cs_engine_job_t *job, GError **err)
{
    ctx_t *c = g_new0(ctx_t, 1);
    if (!cs_flow_net_init(c, job, err)) {
        g_free(c);
        return NULL;
    }
    return c;
}

static void ctx_free(ctx_t *c)
{
    if (c == NULL)
        return;
    cs_flow_net_clear(c);
    g_free(c);
}

/* ---- the platform ------------------------------------------------------ */

/* Notices (a unit's first or last bytes) on their way to the next
 * position: each is due the edge's latency after it was posted, so they
 * are due in the order posted. */
typedef struct {
    sg_sem_t posted;                 /* notices posted, not yet delivered */
    double *due;                     /* ring of len delivery times */
    int len, head, tail;
} notice_q_t;

/* One lane = one (channel, position) pair; it sends its units over its
 * edge and consumes the previous position's. */
typedef struct {
    int ch, pos, next, prev, rank;
    gboolean sends;
    gint64 nops, nsends;
    unsigned mclasses;               /* bit m: some send has mem_passes m */
    int mult[MPASS_MAX + 1][CS_FLOW_HMAX + 1];  /* link multiplicity of each hop per class */
    sg_host_t src[MPASS_MAX + 1];    /* the class's source host */
    sg_sem_t credit;                 /* sends it may still start (receiver's free slots) */
    sg_sem_t arrived;                /* units of the previous position delivered, unconsumed */
    sg_sem_t headed;                 /* ... whose first bytes were delivered (cut-through) */
    notice_q_t q[2];                 /* 0: last bytes sent, 1: first bytes sent */
    gint64 done_ops;
} lane_t;

typedef struct {
    const ctx_t *ctx;
    const cs_program_t *prog;
    int nlanes;
    lane_t *lanes;
    cs_flow_edge_t *edges;                   /* per lane; mem excluded */
    double *res_bw;                  /* SimGrid link bandwidth per resource, 0 = unused */
    double cta;                      /* per-transfer ceiling, bytes/s */
    gboolean cut;                    /* LL/LL128 chains: forward on first bytes */
    sg_host_t sink;
    double quant_err;
    int nlinks;
} sim_t;

/* The child's simulation; SimGrid's actors reach it through here. */
static sim_t *sim_g;

static void resource_name(const ctx_t *c, int r, char *buf, gsize len)
{
    const cs_topo_t *t = c->topo;
    if (r < t->nlinks) {
        const cs_link_t *l = &t->links[r];
        g_snprintf(buf, len, "%s--%s#%d", t->devs[l->src].name, t->devs[l->dst].name, r);
        return;
    }
    int k = r - t->nlinks;
    static const char *const what[3] = { "nvlink-out", "nvlink-in", "mem" };
    g_snprintf(buf, len, "%s.%s", cs_topo_rank_dev(t, k / 3)->name, what[k % 3]);
}

typedef struct {
    int res;
    double coeff;
} use_t;

static int use_cmp(gconstpointer a, gconstpointer b)
{
    const use_t *x = a, *y = b;
    if (x->res != y->res)
        return x->res < y->res ? -1 : 1;
    return x->coeff < y->coeff ? -1 : x->coeff > y->coeff;
}

/* SimGrid gives every flow the same weight on every link it crosses; the
 * flow engine's coefficients (bytes on the resource per payload byte) are
 * reproduced by scaling each link's bandwidth by 1/coefficient when every
 * flow crossing it has the same one, and otherwise by listing the link
 * k times in a flow's route (SimGrid adds the weights of repeated links)
 * with k = coeff * q / cmin, q the smallest denominator <= QMAX that makes
 * every k an integer (else the one with the smallest rounding error). */
static void choose_multiplicities(sim_t *s, double *base_p, int *q_p)
{
    const ctx_t *c = s->ctx;
    GArray *uses = g_array_new(FALSE, FALSE, sizeof(use_t));
    for (int li = 0; li < s->nlanes; li++) {
        const lane_t *L = &s->lanes[li];
        const cs_flow_edge_t *e = &s->edges[li];
        for (int m = 1; m <= MPASS_MAX; m++) {
            if (!(L->mclasses & (1u << m)))
                continue;
            for (int h = 0; h < e->n; h++)
                g_array_append_val(uses, ((use_t){ e->h[h].res, e->h[h].coeff }));
            g_array_append_val(uses, ((use_t){ cs_flow_res_mem(c, L->rank), (double)m }));
        }
    }
    g_array_sort(uses, use_cmp);
    for (guint i = 0; i < uses->len;) {
        const use_t *u = &g_array_index(uses, use_t, i);
        guint j = i;
        double cmin = u->coeff, cmax = u->coeff;
        while (j < uses->len && g_array_index(uses, use_t, j).res == u->res) {
            cmax = MAX(cmax, g_array_index(uses, use_t, j).coeff);
            j++;
        }
        int best_q = 1;
        double best_err = INFINITY;
        if (cmax <= cmin * (1 + 1e-12)) {
            best_err = 0;
        } else {
            for (int q = 1; q <= QMAX && best_err > 1e-9; q++) {
                double worst = 0;
                for (guint k = i; k < j; k++) {
                    double x = g_array_index(uses, use_t, k).coeff * q / cmin;
                    worst = MAX(worst, fabs(round(x) / x - 1));
                }
                if (worst < best_err - 1e-12) {
                    best_err = worst;
                    best_q = q;
                }
            }
        }
        base_p[u->res] = cmin;
        q_p[u->res] = best_q;
        s->res_bw[u->res] = c->res_cap[u->res] * best_q / cmin;
        s->quant_err = MAX(s->quant_err, best_err);
        i = j;
    }
    g_array_free(uses, TRUE);
}

static int multiplicity(double coeff, double base, int q)
{
    return MAX(1, (int)lround(coeff * q / base));
}

/* Writes the platform: one host per (lane, memory-pass class) as the
 * source, one sink host, a link per used resource (and per lane for the
 * one-CTA ceiling), one route per class. Latencies are 0: steps pay their
 * latency after the data is sent (see the delivery actor). */
static char *platform_xml(sim_t *s)
{
    const ctx_t *c = s->ctx;
    g_autofree double *base = g_new0(double, c->nres);
    g_autofree int *q = g_new0(int, c->nres);
    choose_multiplicities(s, base, q);
    GString *x = g_string_new("<?xml version='1.0'?>\n"
                              "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                              "<platform version=\"4.1\">\n<zone id=\"collsim\" routing=\"Full\">\n"
                              "  <host id=\"sink\" speed=\"1f\"/>\n");
    char name[256];
    for (int li = 0; li < s->nlanes; li++)
        for (int m = 1; m <= MPASS_MAX; m++)
            if (s->lanes[li].mclasses & (1u << m))
                g_string_append_printf(x, "  <host id=\"c%d.m%d\" speed=\"1f\"/>\n", li, m);
    for (int r = 0; r < c->nres; r++) {
        if (s->res_bw[r] <= 0)
            continue;
        resource_name(c, r, name, sizeof name);
        g_autofree char *esc = g_markup_escape_text(name, -1);
        g_string_append_printf(x, "  <link id=\"r%d\" bandwidth=\"%.17gBps\" latency=\"0s\"/><!-- %s -->\n", r,
                               s->res_bw[r], esc);
        s->nlinks++;
    }
    gboolean cta = isfinite(s->cta) && s->cta > 0;
    for (int li = 0; li < s->nlanes && cta; li++)
        if (s->lanes[li].mclasses != 0) {
            g_string_append_printf(x, "  <link id=\"cta%d\" bandwidth=\"%.17gBps\" latency=\"0s\"/>\n", li, s->cta);
            s->nlinks++;
        }
    for (int li = 0; li < s->nlanes; li++) {
        lane_t *L = &s->lanes[li];
        const cs_flow_edge_t *e = &s->edges[li];
        for (int m = 1; m <= MPASS_MAX; m++) {
            if (!(L->mclasses & (1u << m)))
                continue;
            g_string_append_printf(x, "  <route src=\"c%d.m%d\" dst=\"sink\" symmetrical=\"NO\">", li, m);
            if (cta)
                g_string_append_printf(x, "<link_ctn id=\"cta%d\"/>", li);
            for (int h = 0; h <= e->n; h++) {
                int r = h < e->n ? e->h[h].res : cs_flow_res_mem(c, L->rank);
                double coeff = h < e->n ? e->h[h].coeff : m;
                int k = multiplicity(coeff, base[r], q[r]);
                L->mult[m][h] = k;
                for (int i = 0; i < k; i++)
                    g_string_append_printf(x, "<link_ctn id=\"r%d\"/>", r);
            }
            g_string_append(x, "</route>\n");
        }
    }
    g_string_append(x, "</zone>\n</platform>\n");
    return g_string_free(x, FALSE);
}

/* ---- actors --------------------------------------------------------- */

static sg_sem_t notice_target(const sim_t *s, const lane_t *L, int which)
{
    const lane_t *N = &s->lanes[L->next];
    return which == 0 ? N->arrived : N->headed;
}

/* Posts a notice to the next position, due 'lat' from now. */
static void notify(sim_t *s, lane_t *L, int which, double lat)
{
    if (lat <= 0) {
        sg_sem_release(notice_target(s, L, which));
        return;
    }
    notice_q_t *q = &L->q[which];
    q->due[q->tail] = simgrid_get_clock() + lat;
    q->tail = (q->tail + 1) % q->len;
    sg_sem_release(q->posted);
}

/* A lane walks its program, as the flow engine's lanes do: a consume
 * waits for the previous position's unit to be delivered (with
 * cut-through, only for its first bytes, and for the rest once its own
 * bytes are sent), a send waits for a free slot at the receiver (credit),
 * then moves the unit's bytes through SimGrid's network; the unit is
 * delivered the edge's latency after its last byte left. A consumed unit
 * frees the sender's slot. */
static void lane_actor(int argc, char **argv)
{
    g_assert(argc == 2);
    sim_t *s = sim_g;
    int li = atoi(argv[1]);
    lane_t *L = &s->lanes[li];
    double lat = s->edges[li].lat;
    for (gint64 i = 0; i < L->nops; i++) {
        cs_prog_op_t op;
        cs_program_op(s->prog, L->ch, L->pos, i, &op);
        gboolean cut = s->cut && op.send;
        if (op.consume >= 0)
            sg_sem_acquire(cut ? L->headed : L->arrived);
        if (op.send) {
            sg_sem_acquire(L->credit);
            if (s->cut)
                notify(s, L, 1, lat);
            sg_host_sendto(L->src[op.mem_passes], s->sink, op.bytes);
            if (cut && op.consume >= 0)
                sg_sem_acquire(L->arrived);   /* cannot forward what has not come */
            notify(s, L, 0, lat);
        }
        if (op.consume >= 0)
            sg_sem_release(s->lanes[L->prev].credit);
        L->done_ops++;
    }
}

/* Delivers one kind of a lane's notices to the next position when due. */
static void delivery_actor(int argc, char **argv)
{
    g_assert(argc == 3);
    sim_t *s = sim_g;
    lane_t *L = &s->lanes[atoi(argv[1])];
    int which = atoi(argv[2]);
    notice_q_t *q = &L->q[which];
    for (gint64 k = 0; k < L->nsends; k++) {
        sg_sem_acquire(q->posted);
        double t = q->due[q->head];
        q->head = (q->head + 1) % q->len;
        if (t > simgrid_get_clock())
            sg_actor_sleep_until(t);
        sg_sem_release(notice_target(s, L, which));
    }
}

/* ---- the child ---------------------------------------------------------- */

typedef struct {
    int ok;
    double time_s;
    int lanes, links;
    double quant_err;
    char msg[512];
} reply_t;

static gboolean setup_lanes(sim_t *s, GError **err)
{
    const ctx_t *c = s->ctx;
    const cs_program_t *p = s->prog;
    int n = p->nranks;
    s->nlanes = p->nch * n;
    s->lanes = g_new0(lane_t, s->nlanes);
    s->edges = g_new0(cs_flow_edge_t, s->nlanes);
    s->res_bw = g_new0(double, c->nres);
    for (int ch = 0; ch < p->nch; ch++)
        for (int pos = 0; pos < n; pos++) {
            int li = ch * n + pos;
            lane_t *L = &s->lanes[li];
            L->ch = ch;
            L->pos = pos;
            L->next = ch * n + (pos + 1) % n;
            L->prev = ch * n + (pos + n - 1) % n;
            L->rank = cs_program_rank(p, ch, pos);
            L->sends = cs_program_sends(p, pos);
            L->nops = cs_program_nops(p, ch, pos);
            if (L->sends) {
                int b = cs_program_rank(p, ch, (pos + 1) % n);
                if (!cs_flow_build_edge(c, ch, L->rank, b, p->proto, &s->edges[li], err))
                    return FALSE;
            }
            gint64 expect = 0;
            for (gint64 i = 0; i < L->nops; i++) {
                cs_prog_op_t op;
                cs_program_op(p, ch, pos, i, &op);
                if (op.send) {
                    if (op.mem_passes < 1 || op.mem_passes > MPASS_MAX) {
                        g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED,
                                    "simgrid engine: %d memory passes per unit not supported", op.mem_passes);
                        return FALSE;
                    }
                    L->mclasses |= 1u << op.mem_passes;
                    L->nsends++;
                }
                if (op.consume >= 0 && op.consume != expect++) {
                    g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED,
                                "simgrid engine: channel %d position %d consumes out of order", ch, pos);
                    return FALSE;
                }
            }
            for (int w = 0; w < 2; w++) {
                L->q[w].len = p->credit + 2;
                L->q[w].due = g_new0(double, L->q[w].len);
            }
        }
    return TRUE;
}

/* Extra SimGrid options from COLLSIM_SIMGRID_CFG (whitespace-separated,
 * e.g. "--cfg=network/bandwidth-factor:0.92"); they come after ours, so
 * they win. */
static char **simgrid_argv(int *argc_p)
{
    GPtrArray *a = g_ptr_array_new();
    static const char *const defaults[] = {
        "collsim-simgrid",
        "--cfg=network/model:CM02",
        "--cfg=network/latency-factor:1",
        "--cfg=network/bandwidth-factor:1",
        "--cfg=network/weight-S:0",
        "--cfg=network/crosstraffic:0",
        "--cfg=network/TCP-gamma:1e30",
        "--cfg=contexts/stack-size:512",
        "--log=root.thres:critical",
    };
    for (gsize i = 0; i < G_N_ELEMENTS(defaults); i++)
        g_ptr_array_add(a, g_strdup(defaults[i]));
    const char *extra = g_getenv("COLLSIM_SIMGRID_CFG");
    if (extra != NULL) {
        g_auto(GStrv) v = g_strsplit_set(extra, " \t\n", -1);
        for (int i = 0; v[i] != NULL; i++)
            if (v[i][0] != '\0')
                g_ptr_array_add(a, g_strdup(v[i]));
    }
    *argc_p = (int)a->len;
    g_ptr_array_add(a, NULL);
    return (char **)g_ptr_array_free(a, FALSE);
}

static gboolean child_run(const ctx_t *c, const cs_engine_call_t *call, const char *platform_path, reply_t *rep,
                          GError **err)
{
    const cs_decision_t *d = call->decision;
    /* The rank programs' shapes (cs_program_new refuses the others with
     * the flow engine's name in its message). */
    if (!(d->algo == CS_ALGO_RING || (d->algo == CS_ALGO_TREE && c->coll != CS_COLL_ALLREDUCE))) {
        g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED,
                    "%s %s is not modelled by the simgrid engine (rings and chains only); "
                    "use --model analytic or restrict NCCL_ALGO to Ring",
                    cs_algo_name(d->algo), cs_coll_name(c->coll));
        return FALSE;
    }
    int nics = MAX(1, c->info->nics_used);
    g_autofree int *exit_local = g_new(int, MAX(1, d->nchannels));
    for (int ch = 0; ch < d->nchannels; ch++)
        exit_local[ch] = c->info->nnodes > 1 ? cs_flow_exit_gpu(c, ch % nics) : -1;
    cs_program_t *prog = cs_program_new(c->info, c->coll, d, call->nccl_bytes, c->root, exit_local, err);
    if (prog == NULL)
        return FALSE;
    sim_t *s = g_new0(sim_t, 1);
    s->ctx = c;
    s->prog = prog;
    s->cta = cs_flow_channel_bw(c, prog->proto);
    /* As the flow engine: LL and LL128 chains forward each line as soon
     * as its flag is seen. */
    s->cut = prog->chain && prog->proto != CS_PROTO_SIMPLE;
    if (!setup_lanes(s, err))
        return FALSE;   /* the child exits: nothing to free */
    g_autofree char *xml = platform_xml(s);
    g_autofree char *path = NULL;
    if (platform_path != NULL) {
        path = g_strdup(platform_path);
    } else {
        int fd = g_file_open_tmp("collsim-simgrid-XXXXXX.xml", &path, err);
        if (fd < 0)
            return FALSE;
        close(fd);
    }
    if (!g_file_set_contents(path, xml, -1, err))
        return FALSE;

    int argc;
    char **argv = simgrid_argv(&argc);
    simgrid_init(&argc, argv);
    simgrid_load_platform(path);
    if (platform_path == NULL)
        unlink(path);
    s->sink = sg_host_by_name("sink");
    sim_g = s;
    for (int li = 0; li < s->nlanes; li++) {
        lane_t *L = &s->lanes[li];
        char host[64], arg[32];
        for (int m = 1; m <= MPASS_MAX; m++)
            if (L->mclasses & (1u << m)) {
                g_snprintf(host, sizeof host, "c%d.m%d", li, m);
                L->src[m] = sg_host_by_name(host);
            }
        L->credit = sg_sem_init(prog->credit);
        L->arrived = sg_sem_init(0);
        L->headed = sg_sem_init(0);
        L->q[0].posted = sg_sem_init(0);
        L->q[1].posted = sg_sem_init(0);
        g_snprintf(arg, sizeof arg, "%d", li);
        g_snprintf(host, sizeof host, "lane%d", li);
        const char *av[] = { "lane", arg, NULL };
        sg_actor_create(host, s->sink, lane_actor, 2, (char *const *)av);
        for (int w = 0; w < (s->cut ? 2 : 1) && L->nsends > 0 && s->edges[li].lat > 0; w++) {
            const char *dv[] = { "deliver", arg, w == 0 ? "0" : "1", NULL };
            g_snprintf(host, sizeof host, "deliver%d.%d", li, w);
            sg_actor_create(host, s->sink, delivery_actor, 3, (char *const *)dv);
        }
    }
    simgrid_run();
    for (int li = 0; li < s->nlanes; li++)
        if (s->lanes[li].done_ops != s->lanes[li].nops) {
            g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED,
                        "simgrid engine: the program deadlocked (channel %d position %d)", s->lanes[li].ch,
                        s->lanes[li].pos);
            return FALSE;
        }
    rep->time_s = cs_flow_launch(c) + simgrid_get_clock();
    rep->lanes = s->nlanes;
    rep->links = s->nlinks;
    rep->quant_err = s->quant_err;
    return TRUE;
}

static gboolean write_all(int fd, const void *buf, gsize len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return FALSE;
        p += w;
        len -= (gsize)w;
    }
    return TRUE;
}

static gboolean simulate_ctx(const ctx_t *c, const cs_engine_call_t *call, const char *platform_path,
                             cs_simgrid_stats_t *stats_p, GError **err)
{
    cs_simgrid_stats_t st = { 0 };
    if (c->info->nranks <= 1) {
        /* As the flow engine: one rank copies the buffer, no network. */
        st.time_s = cs_flow_launch(c) + 2.0 * (double)call->nccl_bytes / c->res_cap[cs_flow_res_mem(c, 0)];
        *stats_p = st;
        return TRUE;
    }
    int fds[2];
    if (pipe(fds) != 0) {
        g_set_error(err, CS_ERROR, CS_ERROR_IO, "simgrid engine: pipe: %s", g_strerror(errno));
        return FALSE;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        g_set_error(err, CS_ERROR, CS_ERROR_IO, "simgrid engine: fork: %s", g_strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return FALSE;
    }
    if (pid == 0) {
        close(fds[0]);
        reply_t rep;
        memset(&rep, 0, sizeof rep);
        GError *e = NULL;
        rep.ok = child_run(c, call, platform_path, &rep, &e);
        if (!rep.ok)
            g_strlcpy(rep.msg, e != NULL ? e->message : "simgrid engine: failed", sizeof rep.msg);
        /* _exit: no atexit handlers of the parent's (or SimGrid's) run
         * twice, and nothing buffered is flushed twice. */
        _exit(write_all(fds[1], &rep, sizeof rep) ? 0 : 3);
    }
    close(fds[1]);
    reply_t rep;
    gsize got = 0;
    while (got < sizeof rep) {
        ssize_t r = read(fds[0], (char *)&rep + got, sizeof rep - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (gsize)r;
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (got != sizeof rep) {
        if (WIFSIGNALED(status))
            g_set_error(err, CS_ERROR, CS_ERROR_RUNTIME,
                        "simgrid engine: the simulation process died (signal %d); SimGrid's messages are above",
                        WTERMSIG(status));
        else
            g_set_error(err, CS_ERROR, CS_ERROR_RUNTIME,
                        "simgrid engine: the simulation process exited with status %d without an answer",
                        WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        return FALSE;
    }
    if (!rep.ok) {
        g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED, "%s", rep.msg);
        return FALSE;
    }
    st.time_s = rep.time_s;
    st.lanes = rep.lanes;
    st.links = rep.links;
    st.quant_err = rep.quant_err;
    *stats_p = st;
    return TRUE;
}

gboolean cs_simgrid_simulate(const cs_engine_job_t *job, const cs_engine_call_t *call,
                             const char *platform_path, cs_simgrid_stats_t *stats_p, GError **err)
{
    ctx_t *c = ctx_new(job, err);
    if (c == NULL)
        return FALSE;
    gboolean ok = simulate_ctx(c, call, platform_path, stats_p, err);
    ctx_free(c);
    return ok;
}

/* ---- engine ops --------------------------------------------------------- */

static gboolean engine_open(const cs_engine_job_t *job, void **state_p, GError **err)
{
    ctx_t *c = ctx_new(job, err);
    if (c == NULL)
        return FALSE;
    *state_p = c;
    return TRUE;
}

static gboolean engine_predict(void *state, const cs_engine_job_t *job, const cs_engine_call_t *call,
                           double time_s[2], GError **err)
{
    (void)job;
    cs_simgrid_stats_t st;
    if (!simulate_ctx(state, call, NULL, &st, err))
        return FALSE;
    time_s[CS_OOP] = st.time_s;
    time_s[CS_INP] = st.time_s;
    return TRUE;
}

static void engine_close(void *state)
{
    ctx_free(state);
}

const cs_engine_ops_t cs_engine_simgrid = {
    .name = "simgrid",
    .description = "rank programs executed as SimGrid actors (CM02 max-min sharing) on a platform "
                   "generated from the topology; a cross-check of the flow engine",
    .open = engine_open,
    .predict = engine_predict,
    .close = engine_close,
};
