/* Several jobs on one machine: cs_topo_select (a job's view of the
 * machine) and the flow engine running jobs together and alone
 * (cs_engine_run_jobs). Expectations are derived by hand from the
 * topology, not from earlier runs. */
#include "config.h"

#include <math.h>

#include "sim/cs_engine_flow-int.h"
#include "models/cs_presets.h"
#include "engine-fixture.h"

static cs_topo_t *cluster(const char *name, int nodes, const char *fabric, double over)
{
    GError *err = NULL;
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    o.nodes = nodes;
    o.fabric = fabric;
    o.oversubscription = over;
    cs_topo_t *t = cs_preset_build(name, &o, &err);
    g_assert_no_error(err);
    return t;
}

/* A job: the machine's ranks of 'nodes' (first GPU 'g0', 'ng' of them). */
typedef struct {
    cs_topo_t *topo;
    int *rank_map, *link_map;
    cs_comm_t *comm;
} view_t;

static void view_init(view_t *v, const cs_topo_t *m, const int *nodes, int nn, int g0, int ng, const char *algo)
{
    GError *err = NULL;
    g_autofree gboolean *keep = g_new0(gboolean, m->ngpus);
    for (int i = 0; i < nn; i++)
        for (int g = g0; g < g0 + ng; g++)
            keep[m->node_first_rank[nodes[i]] + g] = TRUE;
    v->topo = cs_topo_select(m, keep, &v->rank_map, &v->link_map, &err);
    g_assert_no_error(err);
    g_autoptr(cs_nccl_env_t) env = cs_nccl_env_new();
    if (algo != NULL)
        cs_nccl_env_set(env, "NCCL_ALGO", algo, "test");
    v->comm = cs_comm_new(v->topo, env, &err);
    g_assert_no_error(err);
}

static void view_clear(view_t *v)
{
    cs_comm_free(v->comm);
    cs_topo_free(v->topo);
    g_free(v->rank_map);
    g_free(v->link_map);
}

static cs_engine_task_t task(const view_t *v, const cs_params_t *par, guint64 size, double start, int iters)
{
    cs_engine_task_t t = { 0 };
    t.job = (cs_engine_job_t){ .topo = v->topo, .comm = v->comm, .params = par, .coll = CS_COLL_ALLREDUCE,
                               .dtype = CS_DTYPE_FLOAT, .redop = CS_REDOP_SUM, .root = -1 };
    t.rank_map = v->rank_map;
    t.link_map = v->link_map;
    t.call.size = size;
    t.start_s = start;
    t.iters = iters;
    return t;
}

/* The selection keeps the chosen GPUs and their nodes, renumbers them,
 * and maps every kept link onto the same link of the machine. Eight DGX
 * H100 on a 2:1 fat-tree are two leaves of four nodes (an oversubscription
 * needs uplinks: one leaf has none); nodes 1 and 5 sit on different
 * leaves, so the view keeps the narrowed leaf-spine links. */
static void test_select(void)
{
    g_autoptr(cs_topo_t) m = cluster("dgx-h100", 8, "fat-tree", 2);
    g_assert_cmpint(m->fabric.nodes_per_leaf, ==, 4);
    view_t v;
    const int nodes[] = { 1, 5 };
    view_init(&v, m, nodes, 2, 4, 4, NULL);
    g_assert_cmpint(v.topo->nnodes, ==, 2);
    g_assert_cmpint(v.topo->ngpus, ==, 8);
    for (int r = 0; r < v.topo->ngpus; r++) {
        const cs_device_t *d = cs_topo_rank_dev(v.topo, r), *md = cs_topo_rank_dev(m, v.rank_map[r]);
        g_assert_cmpstr(d->name, ==, md->name);
        g_assert_cmpint(d->local, ==, r % 4);          /* numbered from 0 again */
        g_assert_cmpint(md->local, ==, 4 + r % 4);
        g_assert_cmpint(md->node, ==, nodes[r / 4]);
    }
    for (int l = 0; l < v.topo->nlinks; l++) {
        const cs_link_t *a = &v.topo->links[l], *b = &m->links[v.link_map[l]];
        g_assert_cmpstr(v.topo->devs[a->src].name, ==, m->devs[b->src].name);
        g_assert_cmpstr(v.topo->devs[a->dst].name, ==, m->devs[b->dst].name);
        g_assert_cmpfloat(a->bw, ==, b->bw);
    }
    /* a leaf's uplink: its 4 nodes x 8 NICs x 50 GB/s (400 Gb/s NDR) down,
     * halved at 2:1; a NIC's link to its leaf stays 50 GB/s */
    int up = 0, down = 0;
    for (int l = 0; l < v.topo->nlinks; l++) {
        const cs_link_t *a = &v.topo->links[l];
        const char *src = v.topo->devs[a->src].name, *dst = v.topo->devs[a->dst].name;
        if (strstr(src, "spine") != NULL || strstr(dst, "spine") != NULL) {
            g_assert_cmpfloat(fabs(a->bw - 4 * 8 * 50e9 / 2), <, 1);
            up++;
        } else if (strstr(src, "leaf") != NULL || strstr(dst, "leaf") != NULL) {
            g_assert_cmpfloat(fabs(a->bw - 50e9), <, 1);
            down++;
        }
    }
    g_assert_cmpint(up, >, 0);
    g_assert_cmpint(down, >, 0);
    view_clear(&v);
}

/* One job through cs_flow_run is cs_flow_simulate: the same time. */
static void test_one_job_same(void)
{
    g_autoptr(cs_topo_t) m = cluster("dgx-h100", 2, NULL, 0);
    cs_params_t par;
    cs_params_init_defaults(&par);
    view_t v;
    const int nodes[] = { 0, 1 };
    view_init(&v, m, nodes, 2, 0, 8, "Ring");
    cs_engine_task_t t = task(&v, &par, 256 << 20, 0, 1);
    cs_engine_outcome_t out;
    cs_engine_multi_t mm = { .topo = m, .params = &par, .ntasks = 1, .tasks = &t };
    GError *err = NULL;
    g_assert_true(cs_engine_run_jobs(cs_engine_find("flow"), &mm, &out, NULL, &err));
    g_assert_no_error(err);
    /* the same job on the machine itself */
    g_autoptr(cs_nccl_env_t) env = cs_nccl_env_new();
    cs_nccl_env_set(env, "NCCL_ALGO", "Ring", "test");
    g_autoptr(cs_comm_t) comm = cs_comm_new(m, env, &err);
    cs_engine_job_t job = { .topo = m, .comm = comm, .params = &par, .coll = CS_COLL_ALLREDUCE, .dtype = CS_DTYPE_FLOAT };
    cs_engine_call_t call = { .size = 256 << 20, .count = 64 << 20, .nccl_bytes = 256 << 20, .decision = &out.decision };
    g_autoptr(cs_flow_t) f = cs_flow_new(&job, &err);
    cs_flow_stats_t st;
    g_assert_true(cs_flow_simulate(f, &call, CS_FLOW_FOLD_NONE, &st, &err));
    g_test_message("run_jobs %.3f us, simulate %.3f us", out.end_s * 1e6, st.time_s * 1e6);
    g_assert_cmpfloat(fabs(out.end_s - st.time_s), <, 1e-11);
    g_assert_cmpfloat(fabs(out.alone_s - st.time_s), <, 1e-11);
    view_clear(&v);
    cs_params_clear(&par);
}

/* Eight DGX H100 on a 2:1 fat-tree: two leaves of four nodes, each leaf
 * with 32 x 50 GB/s down and 800 GB/s up. A two-node job with a node on
 * each leaf crosses the spine with 8 NICs x 50 GB/s = 400 GB/s per way.
 * Two such jobs fill the uplinks exactly (no slowdown); four ask 1600 GB/s
 * of 800: their network transfers run at half speed, and a 1 GiB ring
 * all-reduce on two nodes is network-bound (50 GB/s per GPU against 450
 * GB/s of NVLink), so each slows by nearly 2 (not above: the NVLink part
 * does not slow). */
static void test_spine(void)
{
    g_autoptr(cs_topo_t) m = cluster("dgx-h100", 8, "fat-tree", 2);
    g_assert_cmpint(m->fabric.nodes_per_leaf, ==, 4);
    cs_params_t par;
    cs_params_init_defaults(&par);
    view_t v[4];
    cs_engine_task_t t[4];
    for (int j = 0; j < 4; j++) {
        const int nodes[] = { j, j + 4 };
        view_init(&v[j], m, nodes, 2, 0, 8, "Ring");
        t[j] = task(&v[j], &par, G_GUINT64_CONSTANT(1) << 30, 0, 1);
    }
    const cs_engine_ops_t *ops = cs_engine_find("flow");
    GError *err = NULL;
    for (int njobs = 2; njobs <= 4; njobs += 2) {
        cs_engine_outcome_t out[4];
        cs_engine_multi_t mm = { .topo = m, .params = &par, .ntasks = njobs, .tasks = t };
        g_autoptr(cs_link_stats_t) stats = NULL;
        g_assert_true(cs_engine_run_jobs(ops, &mm, out, &stats, &err));
        g_assert_no_error(err);
        for (int j = 0; j < njobs; j++) {
            double sd = out[j].end_s / out[j].alone_s;
            g_test_message("%d jobs: job %d %.1f us alone %.1f us slowdown %.3f", njobs, j, out[j].end_s * 1e6,
                           out[j].alone_s * 1e6, sd);
            if (njobs == 2)
                g_assert_cmpfloat(fabs(sd - 1), <, 0.01);
            else {
                g_assert_cmpfloat(sd, >, 1.6);
                g_assert_cmpfloat(sd, <, 2.0);
            }
        }
        /* the bottleneck is a leaf-spine link when four jobs share them */
        g_assert_nonnull(stats);
        g_assert_cmpint(stats->n, >, 0);
        g_test_message("%d jobs: bottleneck %s %.1f%%", njobs, stats->links[0].name,
                       100 * stats->links[0].bytes / (stats->links[0].cap * stats->time_s));
        if (njobs == 4)
            g_assert_true(strstr(stats->links[0].name, "spine") != NULL);
    }
    for (int j = 0; j < 4; j++)
        view_clear(&v[j]);
    cs_params_clear(&par);
}

/* Start times and back-to-back calls: a job launched after the other has
 * ended runs as alone; three calls take three times one call. */
static void test_start_iters(void)
{
    g_autoptr(cs_topo_t) m = cluster("dgx-h100", 8, "fat-tree", 2);
    cs_params_t par;
    cs_params_init_defaults(&par);
    view_t v[2];
    for (int j = 0; j < 2; j++) {
        const int nodes[] = { j, j + 4 };
        view_init(&v[j], m, nodes, 2, 0, 8, "Ring");
    }
    const cs_engine_ops_t *ops = cs_engine_find("flow");
    GError *err = NULL;
    cs_engine_task_t one = task(&v[0], &par, 64 << 20, 0, 1);
    cs_engine_outcome_t o1;
    cs_engine_multi_t m1 = { .topo = m, .params = &par, .ntasks = 1, .tasks = &one };
    g_assert_true(cs_engine_run_jobs(ops, &m1, &o1, NULL, &err));
    cs_engine_task_t t[2] = { task(&v[0], &par, 64 << 20, 0, 3), task(&v[1], &par, 64 << 20, 0, 1) };
    t[1].start_s = 3 * o1.alone_s + 1e-6;
    cs_engine_outcome_t o[2];
    cs_engine_multi_t m2 = { .topo = m, .params = &par, .ntasks = 2, .tasks = t };
    g_assert_true(cs_engine_run_jobs(ops, &m2, o, NULL, &err));
    g_assert_no_error(err);
    g_assert_cmpfloat(fabs(o[0].alone_s / (3 * o1.alone_s) - 1), <, 1e-9);
    g_assert_cmpfloat(fabs(o[0].end_s / o[0].alone_s - 1), <, 1e-9);
    g_assert_cmpfloat(fabs((o[1].end_s - t[1].start_s) / o[1].alone_s - 1), <, 1e-9);
    for (int j = 0; j < 2; j++)
        view_clear(&v[j]);
    cs_params_clear(&par);
}

/* Two jobs on one DGX H100, GPUs 0-3 and 4-7: they share no NVLink port
 * (each GPU has its own) and each GPU's memory is its own, so a 4-GPU job
 * is not slowed by the other. */
static void test_one_node_halves(void)
{
    g_autoptr(cs_topo_t) m = cluster("dgx-h100", 1, NULL, 0);
    cs_params_t par;
    cs_params_init_defaults(&par);
    view_t v[2];
    cs_engine_task_t t[2];
    const int node0[] = { 0 };
    for (int j = 0; j < 2; j++) {
        view_init(&v[j], m, node0, 1, 4 * j, 4, NULL);
        g_assert_cmpint(v[j].topo->ngpus, ==, 4);
        t[j] = task(&v[j], &par, 256 << 20, 0, 1);
    }
    cs_engine_outcome_t o[2];
    cs_engine_multi_t mm = { .topo = m, .params = &par, .ntasks = 2, .tasks = t };
    GError *err = NULL;
    g_assert_true(cs_engine_run_jobs(cs_engine_find("flow"), &mm, o, NULL, &err));
    g_assert_no_error(err);
    for (int j = 0; j < 2; j++)
        g_assert_cmpfloat(fabs(o[j].end_s / o[j].alone_s - 1), <, 1e-9);
    for (int j = 0; j < 2; j++)
        view_clear(&v[j]);
    cs_params_clear(&par);
}

/* The analytic engine refuses several jobs with a message naming flow. */
static void test_analytic_refuses(void)
{
    g_autoptr(cs_topo_t) m = cluster("dgx-h100", 1, NULL, 0);
    cs_params_t par;
    cs_params_init_defaults(&par);
    view_t v;
    const int node0[] = { 0 };
    view_init(&v, m, node0, 1, 0, 8, NULL);
    cs_engine_task_t t = task(&v, &par, 1 << 20, 0, 1);
    cs_engine_outcome_t o;
    cs_engine_multi_t mm = { .topo = m, .params = &par, .ntasks = 1, .tasks = &t };
    GError *err = NULL;
    g_assert_false(cs_engine_run_jobs(cs_engine_find("analytic"), &mm, &o, NULL, &err));
    g_assert_nonnull(err);
    g_assert_true(strstr(err->message, "--model flow") != NULL);
    g_error_free(err);
    view_clear(&v);
    cs_params_clear(&par);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/jobs/select", test_select);
    g_test_add_func("/jobs/one-job-same", test_one_job_same);
    g_test_add_func("/jobs/spine", test_spine);
    g_test_add_func("/jobs/start-iters", test_start_iters);
    g_test_add_func("/jobs/one-node-halves", test_one_node_halves);
    g_test_add_func("/jobs/analytic-refuses", test_analytic_refuses);
    return g_test_run();
}
