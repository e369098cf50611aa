/* A workload's tasks run together (cs_engine_run_graph): compute tasks,
 * calls that wait for other tasks' calls or for a ready time, tasks that
 * share GPUs, cycles and bad dependencies, on the flow and packet
 * engines. Expected times are derived from the same call run alone (its
 * span), not from earlier runs: a call that waits for something starts
 * when that ends and then takes what it takes alone. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "sim/cs_engine_flow-int.h"
#include "models/cs_presets.h"
#include "util/cs_error.h"
#include "engine-fixture.h"

#define MS 1e-3
/* Times are integer picoseconds inside the engines: a shifted run's times
 * differ from the alone run's by the shift, to a picosecond of rounding. */
#define PS 1e-12

/* The shared-uplink machine (engine-fixture.h): 2 nodes x 2 GPUs, one
 * communicator over the four, Ring/Simple so that every run makes the
 * same decision. */
static void fix_small(job_fix_t *j)
{
    fix_init(j, fix_shared_uplink(), "Ring", "Simple");
}

/* A communication task: an all-reduce of 'size' bytes on comm. */
static cs_engine_task_t comm_task(const cs_topo_t *topo, const cs_comm_t *comm, const cs_params_t *par, guint64 size,
                                  int iters, double *span)
{
    cs_engine_task_t t = { 0 };
    t.job = (cs_engine_job_t){ .topo = topo, .comm = comm, .params = par, .coll = CS_COLL_ALLREDUCE,
                               .dtype = CS_DTYPE_FLOAT, .redop = CS_REDOP_SUM, .root = -1, .seed = 1 };
    t.call.size = size;
    t.iters = iters;
    t.span_s = span;
    return t;
}

/* A compute task: no communicator, call k busy busy[k]. */
static cs_engine_task_t compute_task(const cs_topo_t *topo, const cs_params_t *par, const double *busy, int iters,
                                     double *span)
{
    cs_engine_task_t t = { 0 };
    t.job = (cs_engine_job_t){ .topo = topo, .params = par, .root = -1, .seed = 1 };
    t.busy_s = busy;
    t.iters = iters;
    t.span_s = span;
    return t;
}

static gboolean run(const char *engine, const cs_topo_t *topo, const cs_params_t *par, cs_sim_sink_t *sink,
                    cs_engine_task_t *t, int n, GError **err)
{
    g_autofree cs_decision_t *dec = g_new0(cs_decision_t, n);
    cs_engine_multi_t m = { .topo = topo, .params = par, .sink = sink, .ntasks = n, .tasks = t };
    return cs_engine_run_graph(cs_engine_find(engine), &m, dec, err);
}

/* Task t's one call alone on the machine: its span's length. */
static double alone(const char *engine, const cs_topo_t *topo, const cs_params_t *par, cs_engine_task_t t)
{
    double span[2] = { -1, -1 };
    t.span_s = span;
    t.ndeps = 0;
    t.deps = NULL;
    t.ready_s = NULL;
    t.iters = 1;
    GError *err = NULL;
    g_assert_true(run(engine, topo, par, NULL, &t, 1, &err));
    g_assert_no_error(err);
    g_assert_cmpfloat(span[0], ==, 0);
    g_assert_cmpfloat(span[1], >, 0);
    return span[1] - span[0];
}

/* A sink that keeps the calls reported. */
typedef struct {
    cs_sim_sink_t base;
    int n;
    int job[16], iter[16];
    double t0[16], t1[16];
} call_sink_t;

static void sink_call(cs_sim_sink_t *s, int job, int iter, double t0, double t1)
{
    call_sink_t *c = (call_sink_t *)s;
    g_assert_cmpint(c->n, <, 16);
    c->job[c->n] = job;
    c->iter[c->n] = iter;
    c->t0[c->n] = t0;
    c->t1[c->n] = t1;
    c->n++;
}

/* Compute (1 ms) then an all-reduce whose call waits for it: the
 * all-reduce's span starts at 1 ms (launchable: its launch gap is inside
 * its span, as it is inside its time alone) and ends its alone time
 * later. The compute call spans [0, 1 ms] and the sink hears both. */
static void check_compute_then_comm(const char *engine, guint64 size)
{
    job_fix_t j;
    fix_small(&j);
    double busy = 1 * MS, sc[2] = { -1, -1 }, sm[2] = { -1, -1 };
    cs_engine_dep_t dep = { .iter = 0, .task = 0, .task_iter = 0 };
    cs_engine_task_t t[2] = { compute_task(j.topo, &j.params, &busy, 1, sc),
                              comm_task(j.topo, j.comm, &j.params, size, 1, sm) };
    t[1].ndeps = 1;
    t[1].deps = &dep;
    double a = alone(engine, j.topo, &j.params, t[1]);
    call_sink_t sink = { .base.call = sink_call };
    GError *err = NULL;
    g_assert_true(run(engine, j.topo, &j.params, &sink.base, t, 2, &err));
    g_assert_no_error(err);
    g_test_message("%s: alone %.3f us; after compute %.6f .. %.6f ms", engine, a * 1e6, sm[0] / MS, sm[1] / MS);
    g_assert_cmpfloat(sc[0], ==, 0);
    g_assert_cmpfloat(fabs(sc[1] - 1 * MS), <=, PS);
    g_assert_cmpfloat(fabs(sm[0] - 1 * MS), <=, PS);
    g_assert_cmpfloat(fabs(sm[1] - (1 * MS + a)), <=, 2 * PS);
    /* the compute call first, then the all-reduce's */
    g_assert_cmpint(sink.n, ==, 2);
    g_assert_cmpint(sink.job[0], ==, 0);
    g_assert_cmpint(sink.iter[0], ==, 0);
    g_assert_cmpfloat(sink.t0[0], ==, sc[0]);
    g_assert_cmpfloat(sink.t1[0], ==, sc[1]);
    g_assert_cmpint(sink.job[1], ==, 1);
    g_assert_cmpfloat(sink.t0[1], ==, sm[0]);
    g_assert_cmpfloat(sink.t1[1], ==, sm[1]);
    fix_clear(&j);
}

static void test_compute_then_comm(void)
{
    check_compute_then_comm("flow", 64 << 20);
}

/* The packet engine runs the flow engine with its transport: the same
 * dependency, the compute task (first in the list) never reaching the
 * network. 4 MiB keeps the packet run short. */
static void test_packet_chain(void)
{
    check_compute_then_comm("packet", 4 << 20);
}

/* A ready time holds a call back: call 0 not before 0.5 ms, call 1 not
 * before a time well after call 0 ends; each then takes its time alone
 * (nothing else runs). Call 1's span starts at its ready time, not at
 * call 0's end. */
static void test_ready(void)
{
    job_fix_t j;
    fix_small(&j);
    double span[4];
    cs_engine_task_t t = comm_task(j.topo, j.comm, &j.params, 16 << 20, 2, span);
    double a = alone("flow", j.topo, &j.params, t);
    double ready[2] = { 0.5 * MS, 0.5 * MS + 3 * a };
    t.ready_s = ready;
    GError *err = NULL;
    g_assert_true(run("flow", j.topo, &j.params, NULL, &t, 1, &err));
    g_assert_no_error(err);
    g_assert_cmpfloat(fabs(span[0] - ready[0]), <=, PS);
    g_assert_cmpfloat(fabs(span[1] - (ready[0] + a)), <=, 2 * PS);
    g_assert_cmpfloat(fabs(span[2] - ready[1]), <=, PS);
    g_assert_cmpfloat(fabs(span[3] - (ready[1] + a)), <=, 2 * PS);
    /* a ready time already past changes nothing: call 1 follows call 0 */
    ready[1] = 0;
    g_assert_true(run("flow", j.topo, &j.params, NULL, &t, 1, &err));
    g_assert_no_error(err);
    g_assert_cmpfloat(span[2], ==, span[1]);
    fix_clear(&j);
}

/* A chain across three tasks: compute A (1 ms), then all-reduce B after
 * A, then compute C (2 ms) after B. B starts where A ends, C where B
 * ends; each call as long as alone. */
static void test_chain(void)
{
    job_fix_t j;
    fix_small(&j);
    double ba = 1 * MS, bc = 2 * MS, sa[2], sb[2], sc[2];
    cs_engine_dep_t on_a = { 0, 0, 0 }, on_b = { 0, 1, 0 };
    cs_engine_task_t t[3] = { compute_task(j.topo, &j.params, &ba, 1, sa),
                              comm_task(j.topo, j.comm, &j.params, 32 << 20, 1, sb),
                              compute_task(j.topo, &j.params, &bc, 1, sc) };
    t[1].ndeps = 1;
    t[1].deps = &on_a;
    t[2].ndeps = 1;
    t[2].deps = &on_b;
    double a = alone("flow", j.topo, &j.params, t[1]);
    GError *err = NULL;
    g_assert_true(run("flow", j.topo, &j.params, NULL, t, 3, &err));
    g_assert_no_error(err);
    g_assert_cmpfloat(fabs(sb[0] - sa[1]), <=, PS);
    g_assert_cmpfloat(fabs(sb[1] - (sa[1] + a)), <=, 2 * PS);
    g_assert_cmpfloat(sc[0], ==, sb[1]);
    g_assert_cmpfloat(fabs(sc[1] - (sb[1] + bc)), <=, PS);
    fix_clear(&j);
}

/* Two all-reduces on the same four GPUs, launched together: they share
 * every link, NVLink-less PCIe path and GPU memory their rings cross, as
 * any flows do. Identical rings on identical resources get equal max-min
 * shares, so each runs at about half its rate alone: each takes longer
 * than alone, at most twice (the latencies do not double). */
static void test_shared_gpus(void)
{
    job_fix_t j;
    fix_small(&j);
    double s[2][2];
    cs_engine_task_t t[2] = { comm_task(j.topo, j.comm, &j.params, 64 << 20, 1, s[0]),
                              comm_task(j.topo, j.comm, &j.params, 64 << 20, 1, s[1]) };
    double a = alone("flow", j.topo, &j.params, t[0]);
    GError *err = NULL;
    g_assert_true(run("flow", j.topo, &j.params, NULL, t, 2, &err));
    g_assert_no_error(err);
    for (int k = 0; k < 2; k++) {
        g_test_message("task %d: %.3f us, alone %.3f us (x%.3f)", k, s[k][1] * 1e6, a * 1e6, s[k][1] / a);
        g_assert_cmpfloat(s[k][0], ==, 0);   /* concurrent: neither waited */
        g_assert_cmpfloat(s[k][1] / a, >, 1.8);
        g_assert_cmpfloat(s[k][1] / a, <=, 2.0);
    }
    fix_clear(&j);
}

/* A tensor-parallel group (the 8 GPUs of node 0) and a data-parallel
 * group (all 16 GPUs of two DGX H100), each its own communicator, run at
 * once on the same GPUs: the engine shares node 0's NVLink ports and GPU
 * memory between their rings as between any flows. At 1 GiB both rings
 * are bandwidth-bound on NVLink alone (about 5.3 ms each), so while both
 * run each gets a share of node 0's ports: each ends later than alone
 * (a smaller TP call slows the DP one less: 256 MiB x1.25, 16 MiB x1.01,
 * shown by hand, not asserted). */
static void test_tp_dp(void)
{
    GError *err = NULL;
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    o.nodes = 2;
    g_autoptr(cs_topo_t) m = cs_preset_build("dgx-h100", &o, &err);
    g_assert_no_error(err);
    cs_params_t par;
    cs_params_init_defaults(&par);
    g_autofree gboolean *keep = g_new0(gboolean, m->ngpus);
    for (int g = 0; g < 8; g++)
        keep[g] = TRUE;
    int *rmap = NULL, *lmap = NULL;
    g_autoptr(cs_topo_t) tp = cs_topo_select(m, keep, &rmap, &lmap, &err);
    g_assert_no_error(err);
    g_autoptr(cs_nccl_env_t) env = cs_nccl_env_new();
    cs_nccl_env_set(env, "NCCL_ALGO", "Ring", "test");
    g_autoptr(cs_comm_t) ctp = cs_comm_new(tp, env, &err);
    g_autoptr(cs_comm_t) cdp = cs_comm_new(m, env, &err);
    g_assert_no_error(err);
    double s[2][2];
    cs_engine_task_t t[2] = { comm_task(tp, ctp, &par, G_GUINT64_CONSTANT(1) << 30, 1, s[0]),
                              comm_task(m, cdp, &par, G_GUINT64_CONSTANT(1) << 30, 1, s[1]) };
    t[0].rank_map = rmap;
    t[0].link_map = lmap;
    double a[2] = { alone("flow", m, &par, t[0]), alone("flow", m, &par, t[1]) };
    g_assert_true(run("flow", m, &par, NULL, t, 2, &err));
    g_assert_no_error(err);
    for (int k = 0; k < 2; k++) {
        g_test_message("%s: %.1f us, alone %.1f us (x%.3f)", k == 0 ? "TP" : "DP", s[k][1] * 1e6, a[k] * 1e6,
                       s[k][1] / a[k]);
        g_assert_cmpfloat(s[k][0], ==, 0);
        g_assert_cmpfloat(s[k][1] / a[k], >, 1.2);
    }
    g_free(rmap);
    g_free(lmap);
    cs_params_clear(&par);
}

/* Tasks that wait for each other: an error naming the cycle, not a hang
 * or a silent success. Across tasks (compute A's call 0 waits for
 * all-reduce B's call 0, which waits for A's), and within one task (its
 * call 0 waits for its own call 1). */
static void test_cycle(void)
{
    job_fix_t j;
    fix_small(&j);
    double busy = 1 * MS, sa[2], sb[2];
    cs_engine_dep_t on_b = { 0, 1, 0 }, on_a = { 0, 0, 0 };
    cs_engine_task_t t[2] = { compute_task(j.topo, &j.params, &busy, 1, sa),
                              comm_task(j.topo, j.comm, &j.params, 1 << 20, 1, sb) };
    t[0].ndeps = 1;
    t[0].deps = &on_b;
    t[1].ndeps = 1;
    t[1].deps = &on_a;
    sa[0] = sa[1] = -7;
    GError *err = NULL;
    g_assert_false(run("flow", j.topo, &j.params, NULL, t, 2, &err));
    g_assert_error(err, CS_ERROR, CS_ERROR_INPUT);
    g_test_message("%s", err->message);
    g_assert_nonnull(strstr(err->message, "cycle (task 0 call 0 waits for task 1 call 0, "
                                          "task 1 call 0 waits for task 0 call 0)"));
    g_assert_cmpfloat(sa[0], ==, -7);   /* nothing written */
    g_clear_error(&err);
    double busy2[2] = { 1 * MS, 1 * MS }, s2[4];
    cs_engine_dep_t self = { 0, 0, 1 };
    cs_engine_task_t c = compute_task(j.topo, &j.params, busy2, 2, s2);
    c.ndeps = 1;
    c.deps = &self;
    g_assert_false(run("flow", j.topo, &j.params, NULL, &c, 1, &err));
    g_assert_error(err, CS_ERROR, CS_ERROR_INPUT);
    g_assert_nonnull(strstr(err->message, "cycle (task 0 call 0 waits for task 0 call 1)"));
    g_clear_error(&err);
    fix_clear(&j);
}

/* Dependencies that name no call, and tasks that are neither compute nor
 * communication, are refused before anything runs (CS_ERROR_INPUT), by
 * every engine that runs tasks; an engine that cannot run tasks together
 * says so (CS_ERROR_UNSUPPORTED). */
static void test_bad_dep(void)
{
    job_fix_t j;
    fix_small(&j);
    double busy[2] = { 1 * MS, 1 * MS }, s0[4], s1[2];
    const cs_engine_dep_t bad[] = {
        { 0, 2, 0 },     /* no task 2 */
        { 0, -1, 0 },
        { 0, 0, 2 },     /* task 0 has calls 0 and 1 */
        { 1, 0, 0 },     /* task 1 has one call */
        { -1, 0, 0 },
    };
    const char *engines[] = { "flow", "packet" };
    for (guint e = 0; e < G_N_ELEMENTS(engines); e++)
        for (guint k = 0; k < G_N_ELEMENTS(bad); k++) {
            cs_engine_task_t t[2] = { compute_task(j.topo, &j.params, busy, 2, s0),
                                      comm_task(j.topo, j.comm, &j.params, 1 << 20, 1, s1) };
            t[1].ndeps = 1;
            t[1].deps = &bad[k];
            GError *err = NULL;
            g_assert_false(run(engines[e], j.topo, &j.params, NULL, t, 2, &err));
            g_assert_error(err, CS_ERROR, CS_ERROR_INPUT);
            g_assert_nonnull(strstr(err->message, "does not exist"));
            g_clear_error(&err);
        }
    /* busy times and a communicator; neither; a busy time that is NaN; a
     * ready time below 0 */
    cs_engine_task_t both = comm_task(j.topo, j.comm, &j.params, 1 << 20, 1, s1);
    both.busy_s = busy;
    cs_engine_task_t neither = compute_task(j.topo, &j.params, NULL, 1, s1);
    double nan_busy = NAN, early = -1;
    cs_engine_task_t nan = compute_task(j.topo, &j.params, &nan_busy, 1, s1);
    cs_engine_task_t before0 = comm_task(j.topo, j.comm, &j.params, 1 << 20, 1, s1);
    before0.ready_s = &early;
    cs_engine_task_t *odd[] = { &both, &neither, &nan, &before0 };
    const char *said[] = { "task 0 has both;", "task 0 has neither;", "task 0 call 0: its busy time is nan s;",
                           "task 0 call 0: its ready time is -1 s;" };
    for (guint k = 0; k < G_N_ELEMENTS(odd); k++) {
        GError *err = NULL;
        g_assert_false(run("flow", j.topo, &j.params, NULL, odd[k], 1, &err));
        g_assert_error(err, CS_ERROR, CS_ERROR_INPUT);
        g_assert_nonnull(strstr(err->message, said[k]));
        g_clear_error(&err);
    }
    cs_engine_task_t ok = comm_task(j.topo, j.comm, &j.params, 1 << 20, 1, s1);
    GError *err = NULL;
    g_assert_false(run("analytic", j.topo, &j.params, NULL, &ok, 1, &err));
    g_assert_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED);
    g_assert_nonnull(strstr(err->message, "the analytic model cannot run a workload's tasks together"));
    g_clear_error(&err);
    fix_clear(&j);
}

/* The same inputs twice give the same spans, to the bit: a graph with
 * shared GPUs, a compute task and dependencies, on both engines. */
static void test_repeat(void)
{
    job_fix_t j;
    fix_small(&j);
    const char *engines[] = { "flow", "packet" };
    for (guint e = 0; e < G_N_ELEMENTS(engines); e++) {
        double s[2][3][4];
        for (int r = 0; r < 2; r++) {
            double busy[2] = { 0.1 * MS, 0.2 * MS };
            cs_engine_dep_t d1[] = { { 0, 0, 0 }, { 1, 0, 1 } }, d2 = { 1, 1, 0 };
            cs_engine_task_t t[3] = { compute_task(j.topo, &j.params, busy, 2, s[r][0]),
                                      comm_task(j.topo, j.comm, &j.params, 2 << 20, 2, s[r][1]),
                                      comm_task(j.topo, j.comm, &j.params, 3 << 20, 2, s[r][2]) };
            t[1].ndeps = 2;
            t[1].deps = d1;
            t[2].ndeps = 1;
            t[2].deps = &d2;
            GError *err = NULL;
            g_assert_true(run(engines[e], j.topo, &j.params, NULL, t, 3, &err));
            g_assert_no_error(err);
        }
        g_assert_cmpmem(s[0], sizeof s[0], s[1], sizeof s[1]);
        /* and the dependencies held: task 1's call 1 after task 0's call 1 */
        g_assert_cmpfloat(s[0][1][2], >=, s[0][0][3]);
        g_assert_cmpfloat(s[0][2][2], >=, s[0][1][1]);
    }
    fix_clear(&j);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/graph/compute-then-comm", test_compute_then_comm);
    g_test_add_func("/graph/ready", test_ready);
    g_test_add_func("/graph/chain", test_chain);
    g_test_add_func("/graph/shared-gpus", test_shared_gpus);
    g_test_add_func("/graph/tp-dp", test_tp_dp);
    g_test_add_func("/graph/cycle", test_cycle);
    g_test_add_func("/graph/bad-dep", test_bad_dep);
    g_test_add_func("/graph/packet-chain", test_packet_chain);
    g_test_add_func("/graph/repeat", test_repeat);
    return g_test_run();
}
