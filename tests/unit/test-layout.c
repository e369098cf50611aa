/* The process layout (issue 12 item 2): how nccl-tests launches the ranks
 * (cs_comm_set_layout, the scenario's procs-per-node and nthreads) and what
 * the engines charge for it: a host thread that drives G GPUs issues a call
 * every G x (lat.launch.cpu (+ .net) (+ rounds x .p2p)) at most, and calls
 * timed back to back take the longer of that and their GPU time. */
#include "config.h"

#include <glib.h>
#include <math.h>
#include <string.h>

#include "io/cs_run_args.h"
#include "io/cs_scenario-int.h"
#include "models/cs_decide.h"
#include "models/cs_params.h"
#include "models/cs_presets.h"
#include "sim/cs_engine.h"
#include "util/cs_error.h"

static cs_topo_t *dgx_h100(int nodes)
{
    GError *err = NULL;
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    o.nodes = nodes;
    cs_topo_t *t = cs_preset_build("dgx-h100", &o, &err);
    g_assert_no_error(err);
    return t;
}

static cs_comm_t *comm_of(const cs_topo_t *t)
{
    GError *err = NULL;
    cs_comm_t *c = cs_comm_new(t, NULL, &err);
    g_assert_no_error(err);
    return c;
}

static double par_us(cs_param_id_t id)
{
    return cs_param_default(id) * 1e-6;
}

/* One size priced by 'engine' (out-of-place time, seconds). */
static double time_of(const char *engine, const cs_topo_t *t, const cs_comm_t *c, cs_coll_t coll, guint64 size)
{
    cs_params_t p;
    cs_params_init_defaults(&p);
    cs_engine_job_t job = { .topo = t, .comm = c, .params = &p, .coll = coll, .dtype = CS_DTYPE_FLOAT,
                            .redop = CS_REDOP_SUM, .root = -1, .seed = 1 };
    GError *err = NULL;
    cs_result_t *r = cs_engine_run_sweep(cs_engine_find(engine), &job, &size, 1, &err);
    g_assert_no_error(err);
    double s = g_array_index(r->rows, cs_result_row_t, 0).time_us[CS_OOP] * 1e-6;
    cs_result_free(r);
    cs_params_clear(&p);
    return s;
}

static void assert_rel(double got, double want)
{
    if (!(fabs(got - want) <= 1e-9 + 1e-6 * fabs(want)))
        g_error("got %.9g, expected %.9g", got, want);
}

/* The default is one process per GPU; a layout splits a node's GPUs over
 * processes and threads evenly or is refused. */
static void test_comm(void)
{
    g_autoptr(cs_topo_t) t = dgx_h100(2);
    g_autoptr(cs_comm_t) c = comm_of(t);
    const cs_comm_info_t *in = cs_comm_info(c);
    g_assert_cmpint(in->procs_per_node, ==, 8);
    g_assert_cmpint(in->threads_per_proc, ==, 1);
    g_assert_cmpint(in->gpus_per_thread, ==, 1);

    GError *err = NULL;
    g_assert_true(cs_comm_set_layout(c, 1, 1, &err));
    g_assert_cmpint(in->procs_per_node, ==, 1);
    g_assert_cmpint(in->gpus_per_thread, ==, 8);
    g_assert_true(cs_comm_set_layout(c, 2, 2, &err));
    g_assert_cmpint(in->gpus_per_thread, ==, 2);
    g_assert_cmpint(in->threads_per_proc, ==, 2);
    g_assert_no_error(err);

    g_assert_false(cs_comm_set_layout(c, 3, 1, &err));
    g_assert_error(err, CS_ERROR, CS_ERROR_INPUT);
    g_assert_nonnull(strstr(err->message, "3 process(es) do not share node 0's 8 GPUs evenly"));
    g_clear_error(&err);
    g_assert_false(cs_comm_set_layout(c, 1, 3, &err));
    g_assert_nonnull(strstr(err->message, "of 3 threads"));
    g_clear_error(&err);
    /* a refused layout leaves the last one */
    g_assert_cmpint(in->gpus_per_thread, ==, 2);
}

/* One DGX H100, all-reduce: at 8 B one process driving the 8 GPUs (-g 8)
 * takes 8 x lat.launch.cpu (35.2 us, above the GPUs' ~20 us), one process
 * per GPU its GPU time; at 1 GiB both take the GPU time. Both engines. */
static void test_engines_one_node(void)
{
    static const char *const engines[] = { "analytic", "flow" };
    for (gsize e = 0; e < G_N_ELEMENTS(engines); e++) {
        g_autoptr(cs_topo_t) t = dgx_h100(1);
        g_autoptr(cs_comm_t) c = comm_of(t);
        double small = time_of(engines[e], t, c, CS_COLL_ALLREDUCE, 8);
        double big = time_of(engines[e], t, c, CS_COLL_ALLREDUCE, G_GUINT64_CONSTANT(1) << 30);
        g_assert_cmpfloat(small, <, 8 * par_us(CS_P_LAT_LAUNCH_CPU));
        g_assert_cmpfloat(small, >, par_us(CS_P_LAT_LAUNCH));

        g_assert_true(cs_comm_set_layout(c, 1, 1, NULL));
        assert_rel(time_of(engines[e], t, c, CS_COLL_ALLREDUCE, 8), 8 * par_us(CS_P_LAT_LAUNCH_CPU));
        assert_rel(time_of(engines[e], t, c, CS_COLL_ALLREDUCE, G_GUINT64_CONSTANT(1) << 30), big);
        /* two threads of 4 GPUs each issue in parallel: half the floor,
         * below the GPU time again */
        g_assert_true(cs_comm_set_layout(c, 1, 2, NULL));
        assert_rel(time_of(engines[e], t, c, CS_COLL_ALLREDUCE, 8), MAX(small, 4 * par_us(CS_P_LAT_LAUNCH_CPU)));
    }
}

/* Two DGX H100 with -g 8 per node: each GPU's part also posts its proxy
 * operations (lat.launch.cpu.net); AlltoAll on one node plans a round per
 * peer (8), with every layout (one process per GPU: 1 x, -g 8: 8 x). */
static void test_net_and_p2p(void)
{
    double per_net = par_us(CS_P_LAT_LAUNCH_CPU) + par_us(CS_P_LAT_LAUNCH_CPU_NET);
    {
        g_autoptr(cs_topo_t) t = dgx_h100(2);
        g_autoptr(cs_comm_t) c = comm_of(t);
        g_assert_true(cs_comm_set_layout(c, 1, 1, NULL));
        assert_rel(time_of("analytic", t, c, CS_COLL_ALLREDUCE, 8), 8 * per_net);
        assert_rel(time_of("flow", t, c, CS_COLL_ALLREDUCE, 8), 8 * per_net);
    }
    g_autoptr(cs_topo_t) t = dgx_h100(1);
    g_autoptr(cs_comm_t) c = comm_of(t);
    /* nccl-tests' build not known: ncclSend and ncclRecv per peer, 15
     * calls beyond the first */
    double per_a2a = par_us(CS_P_LAT_LAUNCH_CPU) + 8 * par_us(CS_P_LAT_LAUNCH_CPU_P2P) +
                     15 * par_us(CS_P_LAT_LAUNCH_CPU_API);
    g_assert_cmpfloat(time_of("analytic", t, c, CS_COLL_ALLTOALL, 1024), >=, per_a2a * (1 - 1e-9));
    g_assert_true(cs_comm_set_layout(c, 1, 1, NULL));
    assert_rel(time_of("analytic", t, c, CS_COLL_ALLTOALL, 1024), 8 * per_a2a);
    /* SendRecv: one round, ncclSend and ncclRecv */
    double per_sr = par_us(CS_P_LAT_LAUNCH_CPU) + par_us(CS_P_LAT_LAUNCH_CPU_P2P) + par_us(CS_P_LAT_LAUNCH_CPU_API);
    assert_rel(time_of("analytic", t, c, CS_COLL_SENDRECV, 8), 8 * per_sr);
}

/* nccl-tests' build decides what AlltoAll costs the host: from 2.17.0,
 * built on and running NCCL >= 2.28, one ncclAlltoAll per GPU (the rounds
 * are still planned); before, or on an older NCCL, ncclSend and ncclRecv
 * per peer. SendRecv is the same pair with every build. Both engines,
 * one DGX H100 at -g 8, 1 KiB (host-bound). */
static void test_nccltests_build(void)
{
    static const char *const engines[] = { "analytic", "flow" };
    double lc = par_us(CS_P_LAT_LAUNCH_CPU), lp = par_us(CS_P_LAT_LAUNCH_CPU_P2P), la = par_us(CS_P_LAT_LAUNCH_CPU_API);
    g_assert_cmpfloat(la, >, 0);
    for (gsize e = 0; e < G_N_ELEMENTS(engines); e++) {
        g_autoptr(cs_topo_t) t = dgx_h100(1);
        g_autoptr(cs_comm_t) c = comm_of(t);
        g_assert_true(cs_comm_set_layout(c, 1, 1, NULL));
        double pairs = 8 * (lc + 8 * lp + 15 * la), one = 8 * (lc + 8 * lp);
        assert_rel(time_of(engines[e], t, c, CS_COLL_ALLTOALL, 1024), pairs);
        cs_comm_set_nccltests_build(c, 21803, 22903);
        assert_rel(time_of(engines[e], t, c, CS_COLL_ALLTOALL, 1024), one);
        assert_rel(time_of(engines[e], t, c, CS_COLL_SENDRECV, 8), 8 * (lc + lp + la));
        /* built on 2.27 headers, or running 2.27: the pairs */
        cs_comm_set_nccltests_build(c, 21803, 22703);
        assert_rel(time_of(engines[e], t, c, CS_COLL_ALLTOALL, 1024), pairs);
        cs_comm_set_nccltests_build(c, 21803, 22903);
        g_assert_cmpint(cs_comm_set_nccl_version(c, "2.27.3"), ==, 22703);
        assert_rel(time_of(engines[e], t, c, CS_COLL_ALLTOALL, 1024), pairs);
        g_assert_cmpint(cs_comm_set_nccl_version(c, "2.29.3"), ==, 22903);
        assert_rel(time_of(engines[e], t, c, CS_COLL_ALLTOALL, 1024), one);
        /* nccl-tests 2.16 always sends pairs */
        cs_comm_set_nccltests_build(c, 21609, 22903);
        assert_rel(time_of(engines[e], t, c, CS_COLL_ALLTOALL, 1024), pairs);
    }
}

/* One size priced by 'engine': out-of-place time (seconds) and channels. */
static double time_nch_of(const char *engine, const cs_topo_t *t, const cs_comm_t *c, guint64 size, int *nch_p)
{
    cs_params_t p;
    cs_params_init_defaults(&p);
    cs_engine_job_t job = { .topo = t, .comm = c, .params = &p, .coll = CS_COLL_ALLREDUCE, .dtype = CS_DTYPE_FLOAT,
                            .redop = CS_REDOP_SUM, .root = -1, .seed = 1 };
    GError *err = NULL;
    cs_result_t *r = cs_engine_run_sweep(cs_engine_find(engine), &job, &size, 1, &err);
    g_assert_no_error(err);
    const cs_result_row_t *row = &g_array_index(r->rows, cs_result_row_t, 0);
    double s = row->time_us[CS_OOP] * 1e-6;
    *nch_p = row->nchannels;
    cs_result_free(r);
    cs_params_clear(&p);
    return s;
}

/* The measured run's NCCL version: up to 2.21 the host builds a call's
 * work channel by channel, so with -g 8 a call on n channels costs the
 * thread 8 x (lat.launch.cpu + (n - 1) lat.launch.cpu.chan); from 2.22
 * (and for the modelled 2.28.9) the channel count costs it nothing. One
 * DGX H100, all-reduce at 256 KiB (LL on several channels, GPUs faster
 * than the host): both engines. */
static void test_nccl_version(void)
{
    static const char *const engines[] = { "analytic", "flow" };
    for (gsize e = 0; e < G_N_ELEMENTS(engines); e++) {
        g_autoptr(cs_topo_t) t = dgx_h100(1);
        g_autoptr(cs_comm_t) c = comm_of(t);
        g_assert_cmpint(cs_comm_info(c)->nccl_version, ==, 0);
        g_assert_true(cs_comm_set_layout(c, 1, 1, NULL));
        int nch = 0;
        double modelled = time_nch_of(engines[e], t, c, 256 << 10, &nch);
        g_assert_cmpint(nch, >, 1);
        assert_rel(modelled, 8 * par_us(CS_P_LAT_LAUNCH_CPU));

        g_assert_cmpint(cs_comm_set_nccl_version(c, "2.22.3"), ==, 22203);
        assert_rel(time_nch_of(engines[e], t, c, 256 << 10, &nch), modelled);
        g_assert_cmpint(cs_comm_set_nccl_version(c, "2.19.3"), ==, 21903);
        double old = time_nch_of(engines[e], t, c, 256 << 10, &nch);
        assert_rel(old, 8 * (par_us(CS_P_LAT_LAUNCH_CPU) + (nch - 1) * par_us(CS_P_LAT_LAUNCH_CPU_CHAN)));
        /* one channel: the same as the modelled version */
        assert_rel(time_nch_of(engines[e], t, c, 8, &nch), 8 * par_us(CS_P_LAT_LAUNCH_CPU));
        g_assert_cmpint(nch, ==, 1);
        /* not a version: back to the modelled one */
        g_assert_cmpint(cs_comm_set_nccl_version(c, "two"), ==, 0);
        assert_rel(time_nch_of(engines[e], t, c, 256 << 10, &nch), modelled);
        /* no version, but a bound from a log line older NCCLs print (<= 2.12):
         * below 2.22 as well, so per channel; a known version wins over it */
        cs_comm_set_nccl_version_max(c, 21212);
        g_assert_cmpint(cs_comm_nccl_version_at_most(cs_comm_info(c)), ==, 21212);
        assert_rel(time_nch_of(engines[e], t, c, 256 << 10, &nch), old);
        g_assert_cmpint(cs_comm_set_nccl_version(c, "2.22.3"), ==, 22203);
        assert_rel(time_nch_of(engines[e], t, c, 256 << 10, &nch), modelled);
        g_assert_cmpint(cs_comm_set_nccl_version(c, NULL), ==, 0);
        cs_comm_set_nccl_version_max(c, 0);
        assert_rel(time_nch_of(engines[e], t, c, 256 << 10, &nch), modelled);
    }
}

/* NCCL 2.4's tree all-reduce (the rtx2080ti-16nodes1gpu-* runs): 16 nodes
 * of one RTX 2080 Ti and one 100G NIC. 2.4 builds one ring per NIC
 * (misc/rings.cc v2.4.7), so one channel, whose tree is the first binary
 * tree alone, and reduces the whole buffer up before it broadcasts down
 * (device/all_reduce.h v2.4.7): an inner node receives 2 S, then sends
 * 2 S, twice the network time of the modelled v2.28.9's two trees on two
 * channels run at once. 2.8 (threads split between the phases) keeps
 * v2.28.9's channels and phases: both engines. */
static void test_nccl_24_tree(void)
{
    static const char *const engines[] = { "analytic", "flow" };
    GError *err = NULL;
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    o.gpu = "rtx2080ti";
    o.gpus = 1;
    o.nodes = 16;
    o.nic = "ib-edr";
    o.nics_per_node = 1;
    g_autoptr(cs_topo_t) t = cs_preset_build("pcie", &o, &err);
    g_assert_no_error(err);
    g_autoptr(cs_nccl_env_t) env = cs_nccl_env_new();
    cs_nccl_env_set(env, "NCCL_ALGO", "Tree", "test");
    g_autoptr(cs_comm_t) c = cs_comm_new(t, env, &err);
    g_assert_no_error(err);
    guint64 size = G_GUINT64_CONSTANT(512) << 20;
    for (gsize e = 0; e < G_N_ELEMENTS(engines); e++) {
        int nch = 0;
        g_assert_cmpint(cs_comm_set_nccl_version(c, NULL), ==, 0);
        g_assert_cmpint(cs_comm_info(c)->nccl_nch, ==, 0);
        double modelled = time_nch_of(engines[e], t, c, size, &nch);
        g_assert_cmpint(nch, ==, 2);
        g_assert_cmpint(cs_comm_set_nccl_version(c, "2.8.3"), ==, 20803);
        g_assert_cmpint(cs_comm_info(c)->nccl_nch, ==, 0);
        double v28 = time_nch_of(engines[e], t, c, size, &nch);
        g_assert_cmpint(nch, ==, 2);
        g_assert_cmpfloat(fabs(v28 / modelled - 1), <, 0.01);
        g_assert_cmpint(cs_comm_set_nccl_version(c, "2.4.7"), ==, 20407);
        g_assert_cmpint(cs_comm_info(c)->nccl_nch, ==, 1);
        double v24 = time_nch_of(engines[e], t, c, size, &nch);
        g_assert_cmpint(nch, ==, 1);
        if (v24 / modelled < 1.9 || v24 / modelled > 2.1)
            g_error("%s: NCCL 2.4.7's tree takes %.3g s, v2.28.9's %.3g: expected twice", engines[e], v24,
                    modelled);
    }
}

/* Calls back to back in the flow engine's jobs (collsim run [job] iters):
 * with -g 8 the host issues call k at k x 8 lat.launch.cpu, and the GPUs,
 * faster at 8 B, wait for it: 4 calls end 3 host periods after the
 * first call's start plus one call's GPU time; one process per GPU runs
 * them back to back (4 GPU times). */
static void test_jobs_iters(void)
{
    g_autoptr(cs_topo_t) t = dgx_h100(1);
    g_autoptr(cs_comm_t) c = comm_of(t);
    cs_params_t p;
    cs_params_init_defaults(&p);
    cs_engine_task_t task = { 0 };
    task.job = (cs_engine_job_t){ .topo = t, .comm = c, .params = &p, .coll = CS_COLL_ALLREDUCE,
                                  .dtype = CS_DTYPE_FLOAT, .redop = CS_REDOP_SUM, .root = -1 };
    task.call.size = 8;
    cs_engine_multi_t m = { .topo = t, .params = &p, .ntasks = 1, .tasks = &task };
    const cs_engine_ops_t *ops = cs_engine_find("flow");
    GError *err = NULL;
    cs_engine_outcome_t one, four;
    task.iters = 1;
    g_assert_true(cs_engine_run_jobs(ops, &m, &one, NULL, &err));
    g_assert_no_error(err);
    task.iters = 4;
    g_assert_true(cs_engine_run_jobs(ops, &m, &four, NULL, &err));
    assert_rel(four.end_s, 4 * one.end_s);

    g_assert_true(cs_comm_set_layout(c, 1, 1, NULL));
    task.iters = 1;
    g_assert_true(cs_engine_run_jobs(ops, &m, &one, NULL, &err));
    task.iters = 4;
    g_assert_true(cs_engine_run_jobs(ops, &m, &four, NULL, &err));
    g_assert_no_error(err);
    double host = 8 * par_us(CS_P_LAT_LAUNCH_CPU);
    g_assert_cmpfloat(one.end_s, <, host);
    g_assert_cmpfloat(fabs(four.end_s - (3 * host + one.end_s)), <, 1e-11);
    cs_params_clear(&p);
}

static char *command_of(const char *ini, int nnodes, int ppn)
{
    cs_scenario_t s;
    cs_scenario_init(&s);
    GError *err = NULL;
    g_assert_true(cs_scenario_load_mem(&s, ini, strlen(ini), "s.ini", &err));
    g_assert_no_error(err);
    char *cmd = cs_run_args_nccl_tests_command(&s, nnodes, nnodes * ppn, ppn);
    cs_scenario_clear(&s);
    return cmd;
}

/* The header's nccl-tests command says which layout was assumed. */
static void test_command(void)
{
    static const struct {
        const char *ini;
        int nnodes;
        const char *want;
    } cases[] = {
        { "", 1, "mpirun -np 8 -N 8 all_reduce_perf -b 32M -e 32M -i 1M -g 1" },
        { "[collective]\nprocs-per-node = 1\n", 1, "all_reduce_perf -b 32M -e 32M -i 1M -g 8" },
        { "[collective]\nnthreads = 2\n", 1, "all_reduce_perf -b 32M -e 32M -i 1M -g 4 -t 2" },
        { "[collective]\nprocs-per-node = 2\n", 2, "mpirun -np 4 -N 2 all_reduce_perf -b 32M -e 32M -i 1M -g 4" },
        { "", 2, "mpirun -np 16 -N 8 all_reduce_perf -b 32M -e 32M -i 1M -g 1" },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *cmd = command_of(cases[i].ini, cases[i].nnodes, 8);
        g_assert_cmpstr(cmd, ==, cases[i].want);
    }
}

/* The scenario's layout reaches the communicator; a bad one is refused at
 * the key that set it. Bad values are refused when read. */
static void test_scenario(void)
{
    g_autoptr(cs_topo_t) t = dgx_h100(1);
    g_autoptr(cs_comm_t) c = comm_of(t);
    cs_scenario_t s;
    cs_scenario_init(&s);
    GError *err = NULL;
    static const char ok[] = "[collective]\nprocs-per-node = 2\nnthreads = 2\n";
    g_assert_true(cs_scenario_load_mem(&s, ok, strlen(ok), "s.ini", &err));
    g_assert_true(cs_run_args_apply_layout(&s, c, &err));
    g_assert_no_error(err);
    g_assert_cmpint(cs_comm_info(c)->gpus_per_thread, ==, 2);
    /* written back as read */
    g_autofree char *ini = cs_scenario_to_ini(&s);
    g_assert_nonnull(strstr(ini, "procs-per-node=2\n"));
    g_assert_nonnull(strstr(ini, "nthreads=2\n"));
    cs_scenario_clear(&s);

    cs_scenario_init(&s);
    static const char bad[] = "[collective]\n\nprocs-per-node = 3\n";
    g_assert_true(cs_scenario_load_mem(&s, bad, strlen(bad), "s.ini", &err));
    g_assert_false(cs_run_args_apply_layout(&s, c, &err));
    g_assert_error(err, CS_ERROR, CS_ERROR_INPUT);
    g_assert_true(g_str_has_prefix(err->message, "s.ini:3"));
    g_assert_nonnull(strstr(err->message, "do not share node 0's 8 GPUs evenly"));
    g_clear_error(&err);
    cs_scenario_clear(&s);

    static const char *const values[] = { "0", "-1", "x", "1025" };
    for (gsize i = 0; i < G_N_ELEMENTS(values); i++) {
        cs_scenario_init(&s);
        g_autofree char *text = g_strdup_printf("[collective]\nprocs-per-node = %s\n", values[i]);
        g_assert_false(cs_scenario_load_mem(&s, text, strlen(text), "s.ini", &err));
        g_assert_nonnull(strstr(err->message, "is not a process count"));
        g_clear_error(&err);
        cs_scenario_clear(&s);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/layout/comm", test_comm);
    g_test_add_func("/layout/engines-one-node", test_engines_one_node);
    g_test_add_func("/layout/net-and-p2p", test_net_and_p2p);
    g_test_add_func("/layout/nccltests-build", test_nccltests_build);
    g_test_add_func("/layout/jobs-iters", test_jobs_iters);
    g_test_add_func("/layout/nccl-version", test_nccl_version);
    g_test_add_func("/layout/nccl-24-tree", test_nccl_24_tree);
    g_test_add_func("/layout/command", test_command);
    g_test_add_func("/layout/scenario", test_scenario);
    return g_test_run();
}
