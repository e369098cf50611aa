/* The flow engine's incremental max-min shares against the full recompute
 * over whole components (docs/model-flow.md, "Sharing"): on random small
 * networks, transfers starting and ending in random order, every share
 * agrees within 1e-8 relative (the fill freezes lanes within 1e-9 of a
 * saturation, so the two may differ by a few such steps); and whole
 * simulations (Tree, NVLSTree, rings, several jobs) give the same times
 * within 1e-9. */
#include "config.h"

#include <math.h>

#include "sim/cs_engine_flow-int.h"
#include "models/cs_presets.h"
#include "engine-fixture.h"

typedef struct {
    int nres, nlanes;
    double *caps, *lane_cap, *mult, *coeff;
    int *hop_off, *hop_res;
    GArray *seq;
} net_t;

static void net_clear(net_t *n)
{
    g_free(n->caps);
    g_free(n->lane_cap);
    g_free(n->mult);
    g_free(n->coeff);
    g_free(n->hop_off);
    g_free(n->hop_res);
    g_array_free(n->seq, TRUE);
}

/* A random network: capacities and coefficients from small sets half the
 * time (ties, lanes saturating several resources at once), continuous
 * otherwise; ceilings that bind now and then. */
static void net_random(GRand *rnd, net_t *n)
{
    static const double cap_set[] = { 10, 20, 25, 40 }, coeff_set[] = { 1, 1, 2, 1.25 };
    gboolean ties = g_rand_boolean(rnd);
    n->nres = g_rand_int_range(rnd, 1, 13);
    n->nlanes = g_rand_int_range(rnd, 1, 40);
    n->caps = g_new(double, n->nres);
    for (int r = 0; r < n->nres; r++)
        n->caps[r] = ties ? cap_set[g_rand_int_range(rnd, 0, 4)] : g_rand_double_range(rnd, 1, 50);
    n->lane_cap = g_new(double, n->nlanes);
    n->mult = g_new(double, n->nlanes);
    n->hop_off = g_new0(int, n->nlanes + 1);
    GArray *res = g_array_new(FALSE, FALSE, sizeof(int)), *co = g_array_new(FALSE, FALSE, sizeof(double));
    for (int i = 0; i < n->nlanes; i++) {
        n->lane_cap[i] = g_rand_int_range(rnd, 0, 4) == 0 ? g_rand_double_range(rnd, 0.5, 15) : 1e6;
        n->mult[i] = g_rand_int_range(rnd, 0, 3) == 0 ? g_rand_int_range(rnd, 2, 5) : 1;
        int nh = g_rand_int_range(rnd, 0, MIN(4, n->nres) + 1);
        for (int h = 0; h < nh; h++) {
            int r = g_rand_int_range(rnd, 0, n->nres);
            gboolean dup = FALSE;
            for (int k = n->hop_off[i]; k < (int)res->len; k++)
                dup |= g_array_index(res, int, k) == r;
            if (dup)
                continue;
            double c = ties ? coeff_set[g_rand_int_range(rnd, 0, 4)] : g_rand_double_range(rnd, 0.5, 3);
            g_array_append_val(res, r);
            g_array_append_val(co, c);
        }
        n->hop_off[i + 1] = (int)res->len;
    }
    n->hop_res = (int *)g_array_free(res, FALSE);
    n->coeff = (double *)g_array_free(co, FALSE);
    /* toggles, one to four per instant, then shares */
    n->seq = g_array_new(FALSE, FALSE, sizeof(int));
    int steps = g_rand_int_range(rnd, 20, 120), ask = -1;
    for (int s = 0; s < steps; s++) {
        int k = g_rand_int_range(rnd, 1, 5);
        for (int t = 0; t < k; t++) {
            int li = g_rand_int_range(rnd, 0, n->nlanes);
            g_array_append_val(n->seq, li);
        }
        g_array_append_val(n->seq, ask);
    }
}

static int net_rows(const net_t *n)
{
    int rows = 0;
    for (guint k = 0; k < n->seq->len; k++)
        rows += g_array_index(n->seq, int, k) < 0;
    return rows;
}

static void test_random(void)
{
    GRand *rnd = g_rand_new_with_seed(20261122);
    double worst = 0;
    guint64 touched_inc = 0, touched_full = 0;
    for (int trial = 0; trial < 3000; trial++) {
        net_t n;
        net_random(rnd, &n);
        int rows = net_rows(&n);
        g_autofree double *inc = g_new(double, (gsize)rows * n.nlanes);
        g_autofree double *full = g_new(double, (gsize)rows * n.nlanes);
        guint64 ti, tf;
        g_assert_true(cs_flow_maxmin_replay(n.nres, n.caps, n.nlanes, n.lane_cap, n.mult, n.hop_off, n.hop_res,
                                            n.coeff, (int)n.seq->len, (const int *)n.seq->data, FALSE, inc, &ti));
        g_assert_true(cs_flow_maxmin_replay(n.nres, n.caps, n.nlanes, n.lane_cap, n.mult, n.hop_off, n.hop_res,
                                            n.coeff, (int)n.seq->len, (const int *)n.seq->data, TRUE, full, &tf));
        touched_inc += ti;
        touched_full += tf;
        for (int k = 0; k < rows * n.nlanes; k++) {
            double d = fabs(inc[k] - full[k]) / MAX(1e-300, MAX(fabs(inc[k]), fabs(full[k])));
            if (inc[k] == full[k])
                d = 0;
            if (d > 1e-8)
                g_test_message("trial %d row %d lane %d: incremental %.17g, full %.17g", trial, k / n.nlanes,
                               k % n.nlanes, inc[k], full[k]);
            g_assert_cmpfloat(d, <=, 1e-8);
            worst = MAX(worst, d);
        }
        net_clear(&n);
    }
    g_test_message("3000 random networks: largest relative difference %.3g; lanes filled %" G_GUINT64_FORMAT
                   " incremental, %" G_GUINT64_FORMAT " full", worst, touched_inc, touched_full);
    g_assert_cmpuint(touched_inc, <, touched_full);
    g_rand_free(rnd);
}

/* A hand-made case the incremental fill must propagate through: a chain of
 * resources where ending one transfer lets each next one speed up. */
static void test_chain(void)
{
    /* lanes: 0 on r0; i (1..4) on r(i-1), r(i); capacities 10 each */
    double caps[5] = { 10, 10, 10, 10, 10 }, lane_cap[5], mult[5], coeff[9];
    int hop_off[6] = { 0, 1, 3, 5, 7, 9 }, hop_res[9] = { 0, 0, 1, 1, 2, 2, 3, 3, 4 };
    for (int i = 0; i < 5; i++)
        lane_cap[i] = 1e6, mult[i] = 1;
    for (int h = 0; h < 9; h++)
        coeff[h] = 1;
    int seq[] = { 0, 1, 2, 3, 4, -1, 0, -1 };
    double inc[10], full[10];
    g_assert_true(cs_flow_maxmin_replay(5, caps, 5, lane_cap, mult, hop_off, hop_res, coeff, G_N_ELEMENTS(seq), seq,
                                        FALSE, inc, NULL));
    g_assert_true(cs_flow_maxmin_replay(5, caps, 5, lane_cap, mult, hop_off, hop_res, coeff, G_N_ELEMENTS(seq), seq,
                                        TRUE, full, NULL));
    /* all on: 5, 5, 5, 5, 5 (r0..r3 shared by two, r4's lane runs at 5 too
     * since r3 binds it); lane 0 off: lane 1 takes 10 - ... = r0 free, r1
     * shared with lane 2: 5 each; the same further on */
    for (int k = 0; k < 10; k++)
        g_assert_cmpfloat(fabs(inc[k] - full[k]), <=, 1e-12 * full[k] + 1e-300);
    g_assert_cmpfloat(inc[0], ==, 5);
    g_assert_cmpfloat(inc[5], ==, 0);
    g_assert_cmpfloat(inc[6], ==, 5);
}

static cs_topo_t *preset(const char *name, int nodes)
{
    GError *err = NULL;
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    o.nodes = nodes;
    cs_topo_t *t = cs_preset_build(name, &o, &err);
    g_assert_no_error(err);
    return t;
}

/* Whole simulations both ways: the call's time within 1e-9, and the
 * incremental one fills fewer lanes. */
static void test_simulations(void)
{
    static const struct { const char *algo, *proto; int nodes; guint64 bytes; cs_flow_fold_t fold; } cases[] = {
        { "Tree", NULL, 8, G_GUINT64_CONSTANT(64) << 20, CS_FLOW_FOLD_NONE },
        { "Tree", "LL128", 8, G_GUINT64_CONSTANT(4) << 20, CS_FLOW_FOLD_NONE },
        { "Tree", NULL, 32, G_GUINT64_CONSTANT(256) << 20, CS_FLOW_FOLD_AUTO },
        { NULL, NULL, 8, G_GUINT64_CONSTANT(256) << 20, CS_FLOW_FOLD_NONE },   /* NVLSTree */
        { "Ring", NULL, 4, G_GUINT64_CONSTANT(64) << 20, CS_FLOW_FOLD_NONE },
        { "Ring", "LL", 4, G_GUINT64_CONSTANT(1) << 20, CS_FLOW_FOLD_NONE },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        job_fix_t j;
        fix_init(&j, preset("dgx-h100", cases[i].nodes), cases[i].algo, cases[i].proto);
        GError *err = NULL;
        cs_decision_t d;
        g_assert_true(cs_comm_decide(j.comm, CS_COLL_ALLREDUCE, CS_DTYPE_FLOAT, cases[i].bytes, &d, &err));
        cs_engine_job_t job = { .topo = j.topo, .comm = j.comm, .params = &j.params, .coll = CS_COLL_ALLREDUCE,
                                .dtype = CS_DTYPE_FLOAT };
        cs_engine_call_t call = { .size = cases[i].bytes, .count = cases[i].bytes / 4,
                                  .nccl_bytes = cases[i].bytes, .decision = &d };
        cs_flow_stats_t inc, full;
        g_autoptr(cs_flow_t) f = cs_flow_new(&job, &err);
        g_assert_no_error(err);
        g_assert_true(cs_flow_simulate(f, &call, cases[i].fold, &inc, &err));
        cs_flow_set_full_maxmin(f, TRUE);
        g_assert_true(cs_flow_simulate(f, &call, cases[i].fold, &full, &err));
        g_assert_no_error(err);
        g_test_message("%s %s %d nodes: incremental %.6f us (%.1f lanes per recompute), full %.6f us (%.1f), %+.2e",
                       cs_algo_name(d.algo), cs_proto_name(d.proto), cases[i].nodes, inc.time_s * 1e6,
                       (double)inc.touched / MAX(1, inc.recomputes), full.time_s * 1e6,
                       (double)full.touched / MAX(1, full.recomputes), inc.time_s / full.time_s - 1);
        g_assert_cmpfloat(fabs(inc.time_s / full.time_s - 1), <, 1e-9);
        g_assert_cmpuint(inc.touched, <=, full.touched);
        fix_clear(&j);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/maxmin/random", test_random);
    g_test_add_func("/maxmin/chain", test_chain);
    g_test_add_func("/maxmin/simulations", test_simulations);
    return g_test_run();
}
