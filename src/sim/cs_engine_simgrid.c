/* The SimGrid engine: executes the same rank programs as the flow engine
 * (cs_program.h) as SimGrid actors, one per (channel, position) of a ring
 * or chain and one per flow of a dataflow program (Tree, NVLS, NVLSTree
 * all-reduce), on a platform generated from the topology, so that
 * SimGrid's own max-min solver (network model CM02, factors 1)
 * cross-checks the flow engine's bandwidth sharing. Resources, coefficients, ceilings and per-step costs
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

/* Notices (a unit's first or last bytes) on their way to the receiver:
 * each is due the edge's latency after it was posted, so they are due in
 * the order posted. */
typedef struct {
    sg_sem_t posted;                 /* notices posted, not yet delivered */
    double *due;                     /* ring of len delivery times */
    int len, head, tail, n;
} notice_q_t;

enum { NOTICE_LAST = 0, NOTICE_FIRST = 1, NOTICE_FLOW = 2, NOTICE_FLOW_FIRST = 3 };

/* A route: one source host whose route to the sink carries one owner's
 * transfers (a ring lane's with one memory-pass count, or a dataflow
 * flow's): the owner's ceiling link, its edge's links, the sender's
 * memory. */
typedef struct {
    int owner;                       /* lane or flow: its edge and ceiling */
    int mem_res;                     /* the sender's memory */
    int mem_passes;                  /* coefficient there; 0: not crossed (NVLS) */
    sg_host_t host;
} route_t;

/* One lane = one (channel, position) pair of a ring or chain; it sends
 * its units over its edge and consumes the previous position's. */
typedef struct {
    int ch, pos, next, prev, rank;
    gboolean sends;
    gint64 nops, nsends;
    unsigned mclasses;               /* bit m: some send has mem_passes m */
    int route[MPASS_MAX + 1];        /* the class's route */
    sg_sem_t credit;                 /* sends it may still start (receiver's free slots) */
    sg_sem_t arrived;                /* units of the previous position delivered, unconsumed */
    sg_sem_t headed;                 /* ... whose first bytes were delivered (cut-through) */
    notice_q_t q[2];                 /* NOTICE_LAST: last bytes sent, NOTICE_FIRST: first bytes sent */
    gint64 done_ops;
} lane_t;

/* One flow of a dataflow program (cs_prog_flow_t). */
typedef struct {
    int ch;
    gint64 nunits, sent;
    int route;
    sg_sem_t self_slot;              /* nothing consumes its units: slots freed on arrival */
    notice_q_t q;                    /* NOTICE_FLOW: units sent, not yet arrived */
    notice_q_t qh;                   /* NOTICE_FLOW_FIRST: units started, first bytes not yet arrived */
    double drain;                    /* p2p Simple: its last unit's receive after it arrives (s) */
} dflow_t;

typedef struct {
    const ctx_t *ctx;
    const cs_program_t *prog;
    int nowners;                     /* lanes (rings, chains) or flows (dataflow) */
    cs_flow_edge_t *edges;           /* per owner; memory excluded */
    double *cap;                     /* per owner: payload ceiling of one transfer (one CTA), bytes/s */
    GArray *routes;                  /* route_t, grouped by owner */
    /* rings and chains */
    lane_t *lanes;
    gboolean cut;                    /* LL/LL128 chains and trees: forward on first bytes */
    double once;                     /* a one-node ring's hop latency, once per call (s) */
    /* dataflow programs: per dependency k (prog->deps[k]) of flow i on
     * flow d, 'arr[k]' counts d's arrived units not yet taken by i, and
     * for lag 0, 'slot[k]' the units d may still send before i has sent
     * its own (initially credit); with cut-through, 'head[k]' (lag 0)
     * counts d's units whose first bytes arrived, not yet taken by i.
     * 'wake' lists per flow the dependencies naming it, 'cons' those with
     * lag 0 (its consumers' slots). */
    dflow_t *flows;
    sg_sem_t *arr, *slot, *head;
    int *wake_off, *wake, *cons_off, *cons;
    double *res_bw;                  /* SimGrid link bandwidth per resource, 0 = unused */
    sg_host_t sink;
    double quant_err;
    int nlinks;
} sim_t;

/* The child's simulation; SimGrid's actors reach it through here. */
static sim_t *sim_g;

static int add_route(sim_t *s, int owner, int mem_res, int mem_passes)
{
    route_t r = { owner, mem_res, mem_passes, NULL };
    g_array_append_val(s->routes, r);
    return (int)s->routes->len - 1;
}

/* Hop h of a route: the edge's hops, then the sender's memory (when
 * crossed). Returns FALSE past the last. */
static gboolean route_hop(const sim_t *s, const route_t *rt, int h, int *res_p, double *coeff_p)
{
    const cs_flow_edge_t *e = &s->edges[rt->owner];
    if (h < e->n) {
        *res_p = e->h[h].res;
        *coeff_p = e->h[h].coeff;
        return TRUE;
    }
    if (h == e->n && rt->mem_passes > 0) {
        *res_p = rt->mem_res;
        *coeff_p = rt->mem_passes;
        return TRUE;
    }
    return FALSE;
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
    for (guint i = 0; i < s->routes->len; i++) {
        const route_t *rt = &g_array_index(s->routes, route_t, i);
        use_t u;
        for (int h = 0; route_hop(s, rt, h, &u.res, &u.coeff); h++)
            g_array_append_val(uses, u);
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

/* Writes the platform: one source host per route, one sink host, a link
 * per used resource and per owner (its one-CTA ceiling), the routes.
 * Latencies are 0: transfers pay their latency after the data is sent
 * (see the delivery actor). */
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
    const route_t *routes = (const route_t *)s->routes->data;
    int nroutes = (int)s->routes->len;
    for (int i = 0; i < nroutes; i++)
        g_string_append_printf(x, "  <host id=\"h%d\" speed=\"1f\"/>\n", i);
    for (int r = 0; r < c->nres; r++) {
        if (s->res_bw[r] <= 0)
            continue;
        g_autofree char *rname = cs_flow_res_name(c->topo, r);
        g_autofree char *esc = g_markup_escape_text(rname, -1);
        g_string_append_printf(x, "  <link id=\"r%d\" bandwidth=\"%.17gBps\" latency=\"0s\"/><!-- %s -->\n", r,
                               s->res_bw[r], esc);
        s->nlinks++;
    }
    for (int i = 0; i < nroutes; i++) {
        int o = routes[i].owner;
        if ((i == 0 || routes[i - 1].owner != o) && isfinite(s->cap[o]) && s->cap[o] > 0) {
            g_string_append_printf(x, "  <link id=\"cta%d\" bandwidth=\"%.17gBps\" latency=\"0s\"/>\n", o,
                                   s->cap[o]);
            s->nlinks++;
        }
    }
    for (int i = 0; i < nroutes; i++) {
        const route_t *rt = &routes[i];
        g_string_append_printf(x, "  <route src=\"h%d\" dst=\"sink\" symmetrical=\"NO\">", i);
        if (isfinite(s->cap[rt->owner]) && s->cap[rt->owner] > 0)
            g_string_append_printf(x, "<link_ctn id=\"cta%d\"/>", rt->owner);
        int r;
        double coeff;
        for (int h = 0; route_hop(s, rt, h, &r, &coeff); h++) {
            int k = multiplicity(coeff, base[r], q[r]);
            for (int j = 0; j < k; j++)
                g_string_append_printf(x, "<link_ctn id=\"r%d\"/>", r);
        }
        g_string_append(x, "</route>\n");
    }
    g_string_append(x, "</zone>\n</platform>\n");
    return g_string_free(x, FALSE);
}

/* ---- actors --------------------------------------------------------- */

static notice_q_t *notice_queue(sim_t *s, int owner, int which)
{
    if (which == NOTICE_FLOW || which == NOTICE_FLOW_FIRST)
        return which == NOTICE_FLOW ? &s->flows[owner].q : &s->flows[owner].qh;
    return &s->lanes[owner].q[which];
}

/* A notice is due: a ring lane's unit (or its first bytes) reached the
 * next position; a flow's unit reached its receiver, which wakes the
 * flows depending on it and, when nothing consumes it, frees its slot. */
static void deliver(sim_t *s, int owner, int which)
{
    if (which == NOTICE_FLOW_FIRST) {
        for (int k = s->wake_off[owner]; k < s->wake_off[owner + 1]; k++)
            if (s->prog->deps[s->wake[k]].lag == 0)
                sg_sem_release(s->head[s->wake[k]]);
        return;
    }
    if (which != NOTICE_FLOW) {
        const lane_t *N = &s->lanes[s->lanes[owner].next];
        sg_sem_release(which == NOTICE_LAST ? N->arrived : N->headed);
        return;
    }
    for (int k = s->wake_off[owner]; k < s->wake_off[owner + 1]; k++)
        sg_sem_release(s->arr[s->wake[k]]);
    if (s->flows[owner].self_slot != NULL)
        sg_sem_release(s->flows[owner].self_slot);
}

/* Posts a notice, due 'lat' from now. */
static void notify(sim_t *s, int owner, int which, double lat)
{
    if (lat <= 0) {
        deliver(s, owner, which);
        return;
    }
    notice_q_t *q = notice_queue(s, owner, which);
    g_assert(q->n < q->len);   /* at most 'credit' units are in flight */
    q->due[q->tail] = simgrid_get_clock() + lat;
    q->tail = (q->tail + 1) % q->len;
    q->n++;
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
                notify(s, li, NOTICE_FIRST, lat);
            sg_host_sendto(g_array_index(s->routes, route_t, L->route[op.mem_passes]).host, s->sink, op.bytes);
            if (cut && op.consume >= 0)
                sg_sem_acquire(L->arrived);   /* cannot forward what has not come */
            notify(s, li, NOTICE_LAST, lat);
        }
        if (op.consume >= 0)
            sg_sem_release(s->lanes[L->prev].credit);
        L->done_ops++;
    }
}

/* A flow of a dataflow program sends its units in order (cs_program.h):
 * unit u waits for unit u - lag of each dependency to have arrived (a
 * CS_PROG_LAG_END dependency: all of it, before unit 0) and for its
 * receiver to have consumed unit u - credit (a slot from every flow
 * consuming its units, or from its own arrivals when none does), then
 * moves its bytes (cs_program_flow_bytes) through SimGrid's network; it
 * arrives the edge's latency after its last byte left. Once sent, the units it read
 * with lag 0 are consumed by it: their senders get a slot back. */
static void flow_actor(int argc, char **argv)
{
    g_assert(argc == 2);
    sim_t *s = sim_g;
    const cs_program_t *p = s->prog;
    int fi = atoi(argv[1]);
    dflow_t *F = &s->flows[fi];
    sg_host_t host = g_array_index(s->routes, route_t, F->route).host;
    double lat = s->edges[fi].lat;
    int d0 = p->dep_off[fi], d1 = p->dep_off[fi + 1];
    for (gint64 u = 0; u < F->nunits; u++) {
        for (int k = d0; k < d1; k++) {
            if (p->deps[k].lag == CS_PROG_LAG_END) {
                /* the whole dependency: every one of its units, before the first */
                for (gint64 x = 0; u == 0 && x < s->flows[p->deps[k].flow].nunits; x++)
                    sg_sem_acquire(s->arr[k]);
                continue;
            }
            if (u >= p->deps[k].lag)
                sg_sem_acquire(s->cut && p->deps[k].lag == 0 ? s->head[k] : s->arr[k]);
        }
        if (F->self_slot != NULL)
            sg_sem_acquire(F->self_slot);
        for (int k = s->cons_off[fi]; k < s->cons_off[fi + 1]; k++)
            sg_sem_acquire(s->slot[s->cons[k]]);
        if (s->cut)
            notify(s, fi, NOTICE_FLOW_FIRST, lat);
        sg_host_sendto(host, s->sink, cs_program_flow_bytes(p, F->ch, fi, u));
        if (s->cut)
            for (int k = d0; k < d1; k++)
                if (p->deps[k].lag == 0)
                    sg_sem_acquire(s->arr[k]);   /* cannot forward what has not come */
        /* the last step is received once wholly sent: as the flow engine */
        notify(s, fi, NOTICE_FLOW, lat + (u == F->nunits - 1 ? F->drain : 0));
        for (int k = d0; k < d1; k++)
            if (p->deps[k].lag == 0)
                sg_sem_release(s->slot[k]);
        F->sent++;
    }
}

/* Delivers one kind of an owner's notices when due. */
static void delivery_actor(int argc, char **argv)
{
    g_assert(argc == 3);
    sim_t *s = sim_g;
    int owner = atoi(argv[1]), which = atoi(argv[2]);
    notice_q_t *q = notice_queue(s, owner, which);
    gint64 count = which >= NOTICE_FLOW ? s->flows[owner].nunits : s->lanes[owner].nsends;
    for (gint64 k = 0; k < count; k++) {
        sg_sem_acquire(q->posted);
        double t = q->due[q->head];
        q->head = (q->head + 1) % q->len;
        q->n--;
        if (t > simgrid_get_clock())
            sg_actor_sleep_until(t);
        deliver(s, owner, which);
    }
}

/* ---- the child ---------------------------------------------------------- */

typedef struct {
    int ok;
    double time_s, gpu_s;
    int lanes, links;
    double quant_err;
    char msg[512];
} reply_t;

static void notice_q_init(notice_q_t *q, int len)
{
    q->len = len;
    q->due = g_new0(double, len);
}

static gboolean setup_lanes(sim_t *s, GError **err)
{
    const ctx_t *c = s->ctx;
    const cs_program_t *p = s->prog;
    int n = p->nranks;
    double cap = cs_flow_channel_bw(c, p->proto, p->nthreads);
    s->nowners = p->nch * n;
    s->lanes = g_new0(lane_t, s->nowners);
    s->edges = g_new0(cs_flow_edge_t, s->nowners);
    s->cap = g_new(double, s->nowners);
    /* As the flow engine: LL and LL128 chains forward each line as soon
     * as its flag is seen; one-node chains are timed streamed behind the
     * previous call (cs_program_t.streamed): no per-call fill. */
    s->cut = p->chain && (p->proto != CS_PROTO_SIMPLE || p->streamed);
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
            s->cap[li] = cap;
            if (L->sends) {
                int b = cs_program_rank(p, ch, (pos + 1) % n);
                if (!cs_flow_build_edge(c, ch, L->rank, b, p->proto, &s->edges[li], err))
                    return FALSE;
                /* the edge's own ceiling (SHM: cs_shm_chan_bw), as the flow engine */
                if (s->edges[li].cap > 0)
                    s->cap[li] = MIN(cap, s->edges[li].cap);
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
            for (int m = 1; m <= MPASS_MAX; m++)
                L->route[m] = L->mclasses & (1u << m) ? add_route(s, li, cs_flow_res_mem(c, L->rank), m) : -1;
            for (int w = 0; w < 2; w++)
                notice_q_init(&L->q[w], p->credit + 2);
        }
    if (p->latency_once) {
        /* one node: the hops' latency once per call, the units without it
         * (cs_program_t.latency_once), as the flow engine */
        g_autofree double *lat = g_new(double, s->nowners);
        for (int i = 0; i < s->nowners; i++) {
            lat[i] = s->edges[i].lat;
            s->edges[i].lat = 0;
        }
        s->once = cs_program_latency_once(p, lat);
    }
    return TRUE;
}

/* Counting sort of the dependencies by the flow they name: per flow, the
 * dependencies on it (all, or with lag 0 only). */
static void deps_by_target(const cs_program_t *p, gboolean lag0, int **off_p, int **list_p)
{
    int nf = p->nflows, nd = p->dep_off[nf];
    int *off = g_new0(int, nf + 1);
    for (int k = 0; k < nd; k++)
        if (!lag0 || p->deps[k].lag == 0)
            off[p->deps[k].flow + 1]++;
    for (int i = 0; i < nf; i++)
        off[i + 1] += off[i];
    int *list = g_new(int, MAX(1, off[nf]));
    g_autofree int *fill = g_memdup2(off, sizeof(int) * (nf + 1));
    for (int k = 0; k < nd; k++)
        if (!lag0 || p->deps[k].lag == 0)
            list[fill[p->deps[k].flow]++] = k;
    *off_p = off;
    *list_p = list;
}

/* A dataflow program (Tree, NVLS, NVLSTree all-reduce, SendRecv,
 * AlltoAll): one owner per flow, its edge and ceiling as the flow engine
 * builds them. */
static gboolean setup_flows(sim_t *s, GError **err)
{
    const ctx_t *c = s->ctx;
    const cs_program_t *p = s->prog;
    double cap = cs_flow_channel_bw(c, p->proto, p->nthreads);
    s->nowners = p->nflows;
    /* As the flow engine: LL and LL128 trees forward on first bytes
     * (point-to-point flows forward nothing). */
    s->cut = p->proto != CS_PROTO_SIMPLE && !p->p2p;
    s->flows = g_new0(dflow_t, s->nowners);
    s->edges = g_new0(cs_flow_edge_t, s->nowners);
    s->cap = g_new(double, s->nowners);
    for (int ch = 0; ch < p->nch; ch++)
        for (int fi = p->flow_off[ch]; fi < p->flow_off[ch + 1]; fi++) {
            const cs_prog_flow_t *fl = &p->flows[fi];
            dflow_t *F = &s->flows[fi];
            if (fl->mem_passes < 0 || fl->mem_passes > MPASS_MAX) {
                g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED,
                            "simgrid engine: %d memory passes per unit not supported", fl->mem_passes);
                return FALSE;
            }
            if (!cs_flow_build_flow_edge(c, fl, ch, p->proto, &s->edges[fi], err))
                return FALSE;
            s->cap[fi] = cs_flow_shm_cap(p->p2p, fl, &s->edges[fi], cs_flow_flow_cap(c, p, ch, fi, &s->edges[fi], cap));
            F->ch = ch;
            F->nunits = cs_program_flow_units(p, ch, fi);
            F->drain = cs_flow_p2p_drain(p->p2p, p->proto, fl, cap);
            F->route = add_route(s, fi, cs_flow_res_mem(c, fl->src), fl->mem_passes);
            notice_q_init(&F->q, p->credit + 2);
            notice_q_init(&F->qh, p->credit + 2);
        }
    deps_by_target(p, FALSE, &s->wake_off, &s->wake);
    deps_by_target(p, TRUE, &s->cons_off, &s->cons);
    return TRUE;
}

/* The SimGrid objects of a dataflow program and its actors. */
static void start_flows(sim_t *s)
{
    const cs_program_t *p = s->prog;
    int nd = p->dep_off[p->nflows];
    s->arr = g_new0(sg_sem_t, MAX(1, nd));
    s->slot = g_new0(sg_sem_t, MAX(1, nd));
    s->head = g_new0(sg_sem_t, MAX(1, nd));
    for (int k = 0; k < nd; k++) {
        s->arr[k] = sg_sem_init(0);
        if (p->deps[k].lag == 0) {
            s->slot[k] = sg_sem_init(p->credit);
            s->head[k] = sg_sem_init(0);
        }
    }
    char name[64], arg[32], which[8], which_first[8];
    g_snprintf(which, sizeof which, "%d", NOTICE_FLOW);
    g_snprintf(which_first, sizeof which_first, "%d", NOTICE_FLOW_FIRST);
    for (int fi = 0; fi < p->nflows; fi++) {
        dflow_t *F = &s->flows[fi];
        if (s->cons_off[fi] == s->cons_off[fi + 1])
            F->self_slot = sg_sem_init(p->credit);
        F->q.posted = sg_sem_init(0);
        F->qh.posted = sg_sem_init(0);
        g_snprintf(arg, sizeof arg, "%d", fi);
        g_snprintf(name, sizeof name, "flow%d", fi);
        const char *av[] = { "flow", arg, NULL };
        sg_actor_create(name, s->sink, flow_actor, 2, (char *const *)av);
        if (F->nunits > 0 && (s->edges[fi].lat > 0 || F->drain > 0)) {
            const char *dv[] = { "deliver", arg, which, NULL };
            g_snprintf(name, sizeof name, "deliver-flow%d", fi);
            sg_actor_create(name, s->sink, delivery_actor, 3, (char *const *)dv);
            if (s->cut) {
                const char *hv[] = { "deliver", arg, which_first, NULL };
                g_snprintf(name, sizeof name, "deliver-head%d", fi);
                sg_actor_create(name, s->sink, delivery_actor, 3, (char *const *)hv);
            }
        }
    }
}

/* The SimGrid objects of a ring or chain program and its actors. */
static void start_lanes(sim_t *s)
{
    char name[64], arg[32];
    for (int li = 0; li < s->nowners; li++) {
        lane_t *L = &s->lanes[li];
        L->credit = sg_sem_init(s->prog->credit);
        L->arrived = sg_sem_init(0);
        L->headed = sg_sem_init(0);
        L->q[0].posted = sg_sem_init(0);
        L->q[1].posted = sg_sem_init(0);
        g_snprintf(arg, sizeof arg, "%d", li);
        g_snprintf(name, sizeof name, "lane%d", li);
        const char *av[] = { "lane", arg, NULL };
        sg_actor_create(name, s->sink, lane_actor, 2, (char *const *)av);
        for (int w = 0; w < (s->cut ? 2 : 1) && L->nsends > 0 && s->edges[li].lat > 0; w++) {
            const char *dv[] = { "deliver", arg, w == 0 ? "0" : "1", NULL };
            g_snprintf(name, sizeof name, "deliver%d.%d", li, w);
            sg_actor_create(name, s->sink, delivery_actor, 3, (char *const *)dv);
        }
    }
}

/* Whether every owner ran its whole program. */
static gboolean check_done(const sim_t *s, GError **err)
{
    for (int i = 0; i < s->nowners; i++) {
        gboolean done = s->flows != NULL ? s->flows[i].sent == s->flows[i].nunits
                                         : s->lanes[i].done_ops == s->lanes[i].nops;
        if (done)
            continue;
        if (s->flows != NULL)
            g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED,
                        "simgrid engine: the program deadlocked (channel %d flow %d)", s->flows[i].ch, i);
        else
            g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED,
                        "simgrid engine: the program deadlocked (channel %d position %d)", s->lanes[i].ch,
                        s->lanes[i].pos);
        return FALSE;
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
        /* no guard page per actor stack: each costs a memory mapping, and
         * 1024 GPUs' 16384+ actors pass Linux's vm.max_map_count (65530) */
        "--cfg=contexts/guard-size:0",
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

static void notice_q_clear(notice_q_t *q)
{
    g_free(q->due);
}

/* Frees what sim_build allocated (the parent's estimates; the child exits
 * instead). */
static void sim_free(sim_t *s)
{
    if (s == NULL)
        return;
    for (int i = 0; s->lanes != NULL && i < s->nowners; i++)
        for (int w = 0; w < 2; w++)
            notice_q_clear(&s->lanes[i].q[w]);
    for (int i = 0; s->flows != NULL && i < s->nowners; i++) {
        notice_q_clear(&s->flows[i].q);
        notice_q_clear(&s->flows[i].qh);
    }
    g_free(s->lanes);
    g_free(s->flows);
    g_free(s->edges);
    g_free(s->cap);
    g_array_unref(s->routes);
    g_free(s->res_bw);
    g_free(s->wake_off);
    g_free(s->wake);
    g_free(s->cons_off);
    g_free(s->cons);
    cs_program_free((cs_program_t *)s->prog);
    g_free(s);
}

/* The simulation of one call, SimGrid aside: program, owners, routes. */
static sim_t *sim_build(const ctx_t *c, const cs_engine_call_t *call, GError **err)
{
    const cs_decision_t *d = call->decision;
    if (d->algo == CS_ALGO_COLLNET_DIRECT || d->algo == CS_ALGO_COLLNET_CHAIN) {
        /* SimGrid has no switch that reduces: no in-network reduction */
        g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED,
                    "simgrid engine: %s (SHARP in-network reduction) is not modelled by the simgrid engine; "
                    "expected --model flow or analytic, or NCCL_COLLNET_ENABLE=0", cs_algo_name(d->algo));
        return NULL;
    }
    g_autofree int *orders = cs_flow_prog_orders(c, d);
    cs_program_t *prog = cs_program_new(c->info, c->coll, d, call->nccl_bytes, c->root, orders, err);
    if (prog == NULL) {
        g_prefix_error(err, "simgrid engine: ");
        return NULL;
    }
    sim_t *s = g_new0(sim_t, 1);
    s->ctx = c;
    s->prog = prog;
    s->routes = g_array_new(FALSE, FALSE, sizeof(route_t));
    s->res_bw = g_new0(double, c->nres);
    if (!(prog->nflows > 0 ? setup_flows(s, err) : setup_lanes(s, err))) {
        sim_free(s);
        return NULL;
    }
    return s;
}

/* What a call's simulation holds in SimGrid. */
typedef struct {
    gint64 actors;           /* lanes or flows, and their delivery actors */
    gint64 hosts;            /* one per route, and the sink */
    gint64 units;            /* transfers simulated (sg_host_sendto) */
} sg_shape_t;

/* As platform_xml and start_lanes / start_flows count them. */
static void sim_shape(const sim_t *s, sg_shape_t *sh)
{
    memset(sh, 0, sizeof *sh);
    sh->hosts = (gint64)s->routes->len + 1;
    for (int i = 0; i < s->nowners; i++) {
        gboolean delivers = s->edges[i].lat > 0;
        if (s->flows != NULL) {
            delivers = delivers && s->flows[i].nunits > 0;
            sh->units += s->flows[i].nunits;
        } else {
            delivers = delivers && s->lanes[i].nsends > 0;
            sh->units += s->lanes[i].nsends;
        }
        sh->actors += 1 + (delivers ? (s->cut ? 2 : 1) : 0);
    }
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

/* In the child: builds the platform file 'platform_path' and runs.
 * own_fd >= 0: the file is the parent's temporary one, open as own_fd,
 * written through it (g_file_set_contents would make a second temporary
 * file beside it, which a kill in the middle would leave behind). */
static gboolean child_run(const ctx_t *c, const cs_engine_call_t *call, const char *platform_path, int own_fd,
                          reply_t *rep, GError **err)
{
    /* The child exits when done: nothing below is freed. */
    sim_t *s = sim_build(c, call, err);
    if (s == NULL)
        return FALSE;
    const cs_program_t *prog = s->prog;
    g_autofree char *xml = platform_xml(s);
    if (own_fd >= 0) {
        /* (the parent made the file, and removes it whatever becomes of us) */
        if (!write_all(own_fd, xml, strlen(xml)) || close(own_fd) != 0) {
            g_set_error(err, CS_ERROR, CS_ERROR_IO, "simgrid engine: %s: cannot write the platform (%s)",
                        platform_path, g_strerror(errno));
            return FALSE;
        }
    } else if (!g_file_set_contents(platform_path, xml, -1, err))
        return FALSE;

    int argc;
    char **argv = simgrid_argv(&argc);
    simgrid_init(&argc, argv);
    simgrid_load_platform(platform_path);
    if (own_fd >= 0)
        unlink(platform_path);   /* loaded: no longer needed, should we be killed */
    s->sink = sg_host_by_name("sink");
    sim_g = s;
    char host[32];
    for (guint i = 0; i < s->routes->len; i++) {
        g_snprintf(host, sizeof host, "h%u", i);
        g_array_index(s->routes, route_t, i).host = sg_host_by_name(host);
    }
    if (prog->nflows > 0)
        start_flows(s);
    else
        start_lanes(s);
    simgrid_run();
    if (!check_done(s, err))
        return FALSE;
    rep->time_s = cs_flow_launch(c) + simgrid_get_clock() + s->once;
    if (prog->nvls)
        rep->time_s += cs_flow_nvls_lat(c);   /* once per call, as the flow engine */
    /* the host's floor of the process layout (a thread issuing its GPUs'
     * kernels one after the other): the GPUs wait for it, as the flow engine */
    rep->gpu_s = rep->time_s;
    rep->time_s = MAX(rep->time_s, cs_flow_launch_host(c, call->decision != NULL ? call->decision->nchannels : 1));
    rep->lanes = s->nowners;
    rep->links = s->nlinks;
    rep->quant_err = s->quant_err;
    return TRUE;
}

/* What the child left on its stderr (SimGrid's messages, a C++
 * exception's "terminate called after throwing ...", a backtrace), as one
 * short phrase for the parent's one line; NULL when nothing telling. */
static char *child_said(int fd, gboolean *oom_p)
{
    *oom_p = FALSE;
    char buf[4096];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return NULL;
    buf[n] = '\0';
    /* std::bad_alloc, xbt's "Memory (c)allocation of N bytes failed", errno ENOMEM */
    if (strstr(buf, "bad_alloc") != NULL || strstr(buf, "allocation of") != NULL ||
        strstr(buf, "Cannot allocate memory") != NULL || strstr(buf, "out of memory") != NULL) {
        *oom_p = TRUE;
        return g_strdup("it ran out of memory (the estimate was too low, or memory ran short since; try --model flow)");
    }
    /* the first non-empty line, printable and cut short */
    char *line = buf;
    while (*line == '\n' || *line == '\r' || *line == ' ')
        line++;
    line[strcspn(line, "\r\n")] = '\0';
    if (*line == '\0')
        return NULL;
    for (char *p = line; *p; p++)
        if (!g_ascii_isprint(*p))
            *p = '?';
    if (strlen(line) > 160)
        strcpy(line + 157, "...");
    return g_strdup_printf("SimGrid said: %s", line);
}

/* Runs one call in a child process (see the top of the file). The child
 * dies with us (cs_engine_child_bind) and is killed by our interrupt
 * handler (cs_engine_interrupt); its stdout and stderr go to a file that
 * no one sees, and whatever befalls it is reported as one line. */
static gboolean simulate_ctx(const ctx_t *c, const cs_engine_call_t *call, const char *platform_path,
                             cs_simgrid_stats_t *stats_p, GError **err)
{
    cs_simgrid_stats_t st = { 0 };
    if (c->info->nranks <= 1) {
        /* As the flow engine: one rank copies the buffer, no network. */
        st.gpu_s = cs_flow_launch(c) + 2.0 * (double)call->nccl_bytes / c->res_cap[cs_flow_res_mem(c, 0)];
        st.time_s = MAX(st.gpu_s, cs_flow_launch_host(c, call->decision != NULL ? call->decision->nchannels : 1));
        *stats_p = st;
        return TRUE;
    }
    gboolean ok = FALSE;
    int fds[2] = { -1, -1 }, log_fd = -1, plat_fd = -1;
    g_autofree char *tmp_platform = NULL, *log_path = NULL;
    if (platform_path == NULL) {
        plat_fd = g_file_open_tmp("collsim-simgrid-XXXXXX.xml", &tmp_platform, err);
        if (plat_fd < 0)
            goto out;
        platform_path = tmp_platform;
    }
    log_fd = g_file_open_tmp("collsim-simgrid-XXXXXX.log", &log_path, err);
    if (log_fd < 0)
        goto out;
    unlink(log_path);   /* read through log_fd only; gone with it */
    if (pipe(fds) != 0) {
        g_set_error(err, CS_ERROR, CS_ERROR_IO, "simgrid engine: pipe: %s", g_strerror(errno));
        goto out;
    }
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        g_set_error(err, CS_ERROR, CS_ERROR_IO, "simgrid engine: fork: %s", g_strerror(errno));
        goto out;
    }
    if (pid == 0) {
        if (!cs_engine_child_bind(parent))
            _exit(4);
        close(fds[0]);
        dup2(log_fd, STDOUT_FILENO);
        dup2(log_fd, STDERR_FILENO);
        reply_t rep;
        memset(&rep, 0, sizeof rep);
        GError *e = NULL;
        rep.ok = child_run(c, call, platform_path, tmp_platform != NULL ? plat_fd : -1, &rep, &e);
        if (!rep.ok)
            g_strlcpy(rep.msg, e != NULL ? e->message : "simgrid engine: failed", sizeof rep.msg);
        /* _exit: no atexit handlers of the parent's (or SimGrid's) run
         * twice, and nothing buffered is flushed twice. */
        _exit(write_all(fds[1], &rep, sizeof rep) ? 0 : 3);
    }
    cs_engine_child_add(pid);
    close(fds[1]);
    fds[1] = -1;
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
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    cs_engine_child_remove(pid);
    if (got != sizeof rep) {
        gboolean oom;
        g_autofree char *said = child_said(log_fd, &oom);
        if (WIFSIGNALED(status))
            g_set_error(err, CS_ERROR, oom ? CS_ERROR_RESOURCE : CS_ERROR_RUNTIME, "simgrid engine: the simulation process died (signal %d, %s)%s%s",
                        WTERMSIG(status), g_strsignal(WTERMSIG(status)), said != NULL ? ": " : "",
                        said != NULL ? said : "");
        else
            g_set_error(err, CS_ERROR, oom ? CS_ERROR_RESOURCE : CS_ERROR_RUNTIME,
                        "simgrid engine: the simulation process exited with status %d without an answer%s%s",
                        WIFEXITED(status) ? WEXITSTATUS(status) : -1, said != NULL ? ": " : "",
                        said != NULL ? said : "");
        goto out;
    }
    if (!rep.ok) {
        rep.msg[sizeof rep.msg - 1] = '\0';
        g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED, "%s", rep.msg);
        goto out;
    }
    st.time_s = rep.time_s;
    st.gpu_s = rep.gpu_s;
    st.lanes = rep.lanes;
    st.links = rep.links;
    st.quant_err = rep.quant_err;
    *stats_p = st;
    ok = TRUE;
out:
    for (int i = 0; i < 2; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    if (log_fd >= 0)
        close(log_fd);
    if (plat_fd >= 0) {
        close(plat_fd);
        unlink(tmp_platform);   /* (the child removed it once loaded, unless it died first) */
    }
    return ok;
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
    ctx_t *c = state;
    if (!simulate_ctx(c, call, NULL, &st, err))
        return FALSE;
    /* a ring's passes over the rank's own part (reduce-scatter's last
     * step, all-gather's copy out of place), as the analytic and flow
     * engines add them (cs_engine_ring_pass_s, not simulated) */
    double pass[2];
    cs_engine_ring_pass_s(c->coll, call->decision, c->info->nranks, cs_engine_ring_net(c->info),
                          cs_engine_ring_recv_copies(c->info), (double)call->nccl_bytes,
                          cs_flow_channel_bw(c, CS_PROTO_SIMPLE, 0), pass);
    /* the passes hold the GPUs, not the host: on the GPUs' time, under
     * the host's floor as the flow engine adds them */
    time_s[CS_OOP] = MAX(st.gpu_s + pass[CS_OOP], st.time_s);
    time_s[CS_INP] = MAX(st.gpu_s + pass[CS_INP], st.time_s);
    return TRUE;
}

/* What a call costs, from its shape (sim_shape). Measured with
 * /usr/bin/time -v (maximum resident size, less the 40 MB of the same run
 * with --model analytic; wall time) on dgx-h100 at 64 MiB, 2 to 16 nodes,
 * NCCL_ALGO NVLSTree, Ring and Tree (SimGrid 3.3x, 512 KiB actor stacks):
 * each actor takes about 140 KiB (its stack's touched pages and context:
 * Tree and Ring at 16 nodes, 4065 and 4097 hosts, differ by 8096 actors
 * and 1138 MB), and the platform about 8 bytes per pair of hosts (the Full
 * routing zone's table: 115 MB at 4097 hosts, 521 MB at 7937). The twelve
 * points fit within 10%; 16 nodes of NVLSTree: 15872 actors, 7937 hosts,
 * 2.74 GB. Wall time grows with the transfers times the actors that share
 * the network, 3e-9 to 6.3e-9 s each on this machine (6.2 s for Ring, 16
 * nodes: 520192 transfers, 4096 actors); the larger is used. */
#define SG_BYTES_PER_ACTOR (140.0 * 1024)
#define SG_BYTES_PER_HOST_PAIR 8.0
#define SG_SECONDS_PER_UNIT_ACTOR 6.3e-9

static gboolean engine_estimate(void *state, const cs_engine_job_t *job, const cs_engine_call_t *call,
                                cs_engine_cost_t *cost_p, GError **err)
{
    (void)job;
    const ctx_t *c = state;
    cs_engine_cost_t cost = { 0, 0 };
    if (c->info->nranks > 1) {
        sim_t *s = sim_build(c, call, err);
        if (s == NULL)
            return FALSE;
        sg_shape_t sh;
        sim_shape(s, &sh);
        sim_free(s);
        cost.bytes = SG_BYTES_PER_ACTOR * (double)sh.actors + SG_BYTES_PER_HOST_PAIR * (double)sh.hosts * sh.hosts;
        cost.seconds = SG_SECONDS_PER_UNIT_ACTOR * (double)sh.units * (double)sh.actors;
    }
    *cost_p = cost;
    return TRUE;
}

static void engine_close(void *state)
{
    ctx_free(state);
}

/* Loaded by cs_engine_simgrid_load.c (the module collsim-simgrid.so), or
 * linked in by the tests and benchmarks; the name and description are the
 * registry's (cs_engine_simgrid). */
const cs_engine_ops_t cs_engine_simgrid_impl = {
    .name = "simgrid",
    .open = engine_open,
    .estimate = engine_estimate,
    .predict = engine_predict,
    .close = engine_close,
};
