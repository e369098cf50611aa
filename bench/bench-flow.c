/* Benchmark: the flow engine on DGX H100 clusters (ib-ndr x8 rails).
 *
 * Usage: bench-flow [ring|default] [max_nodes [min_nodes [auto|approx|exact|none [full]]]]
 * ('full': max-min shares recomputed over whole components, not incrementally)
 *
 * ring (the default): ring all-reduce (NCCL_ALGO=Ring) of 1 GiB and 4 GiB
 * at 1, 16, 128, 512, 2048 nodes (default 512 1 auto, as --model flow: a
 * few minutes; the ring target is "bench-flow 2048 2048").
 *
 * default: NCCL's own choice for a 1 GiB all-reduce, with NVLS (NVLSTree)
 * and with NCCL_NVLS_ENABLE=0 (Tree from 64 nodes), at 8 to 2048 nodes
 * (default 2048 8 auto; the target: 16384 GPUs under a minute).
 * Up to 256 nodes each call also runs unfolded (none) and the difference
 * of the two simulated times is printed (target: within 1%).
 *
 * Prints per call the simulated time, the CPU time of the simulation
 * (cs_flow_new + cs_flow_simulate; the machine is shared, so CPU rather
 * than wall time), events per CPU second, recomputes, lanes touched per
 * recompute, lanes simulated, how the program was folded and the peak RSS.
 * Folded: "exact/P" or "approx/P" (P ring positions, or lane classes of a
 * dataflow program, simulated; cs_flow_fold_t), or "no". Nothing is
 * asserted. */
#include "config.h"

#include "bench-util.h"

#include <stdio.h>
#include <stdlib.h>

#include "models/cs_presets.h"
#include "models/cs_decide.h"
#include "models/cs_params.h"
#include "sim/cs_engine_flow-int.h"

static gboolean full_maxmin;

typedef struct {
    cs_flow_stats_t st;
    cs_decision_t d;
    double cpu;
} run_t;

/* One call on 'nodes' DGX H100 nodes with the NCCL variable (if any). */
static gboolean run_one(const cs_params_t *params, int nodes, const char *var, const char *val, guint64 size,
                        cs_flow_fold_t fold, run_t *out)
{
    GError *err = NULL;
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    o.nodes = nodes;
    g_autoptr(cs_topo_t) topo = cs_preset_build("dgx-h100", &o, &err);
    g_autoptr(cs_nccl_env_t) env = cs_nccl_env_new();
    if (var != NULL)
        cs_nccl_env_set(env, var, val, "bench");
    g_autoptr(cs_comm_t) comm = topo != NULL ? cs_comm_new(topo, env, &err) : NULL;
    if (comm == NULL || !cs_comm_decide(comm, CS_COLL_ALLREDUCE, CS_DTYPE_FLOAT, size, &out->d, &err)) {
        fprintf(stderr, "%s\n", err->message);
        g_error_free(err);
        return FALSE;
    }
    cs_engine_job_t job = { .topo = topo, .comm = comm, .params = params, .coll = CS_COLL_ALLREDUCE,
                            .dtype = CS_DTYPE_FLOAT };
    cs_engine_call_t call = { .size = size, .count = size / 4, .nccl_bytes = size, .decision = &out->d };
    double t0 = bench_cpu_now();
    g_autoptr(cs_flow_t) f = cs_flow_new(&job, &err);
    if (f != NULL)
        cs_flow_set_full_maxmin(f, full_maxmin);
    if (f == NULL || !cs_flow_simulate(f, &call, fold, &out->st, &err)) {
        fprintf(stderr, "%s\n", err->message);
        g_error_free(err);
        return FALSE;
    }
    out->cpu = bench_cpu_now() - t0;
    return TRUE;
}

static void print_row(int nodes, guint64 size, const run_t *r, const char *extra)
{
    char how[32];
    if (!r->st.folded)
        g_strlcpy(how, "no", sizeof how);
    else
        g_snprintf(how, sizeof how, "%s/%d", r->st.approx ? "approx" : "exact", r->st.period);
    printf("  %6d %6d %6.0fM %8s %6s %4d %10.1f %8.3f %10.3g %10.3g %8.1f %7d %11s %8.1f %s\n", nodes, nodes * 8,
           size / 1048576.0, cs_algo_name(r->d.algo), cs_proto_name(r->d.proto), r->d.nchannels, r->st.time_s * 1e6,
           r->cpu, r->st.events / MAX(r->cpu, 1e-9), (double)r->st.recomputes,
           r->st.recomputes > 0 ? (double)r->st.touched / (double)r->st.recomputes : 0.0, r->st.lanes, how,
           bench_peak_rss_kib(FALSE) / 1024.0, extra);
    fflush(stdout);
}

static void header(const char *what)
{
    printf("# bench-flow: DGX H100 x8, ib-ndr x8 rails, %s (target: 16384 GPUs < 60 s)\n", what);
    printf("# %6s %6s %7s %8s %6s %4s %10s %8s %10s %10s %8s %7s %11s %8s %s\n", "nodes", "ranks", "size", "algo",
           "proto", "nch", "sim_us", "cpu_s", "events/s", "recomputes", "touched", "lanes", "folded", "rss_MiB",
           "vs_unfolded");
}

int main(int argc, char **argv)
{
    int a = 1;
    const char *kind = "ring";
    if (argc > 1 && (g_str_equal(argv[1], "ring") || g_str_equal(argv[1], "default")))
        kind = argv[a++];
    gboolean dflt = g_str_equal(kind, "default");
    int max_nodes = argc > a ? atoi(argv[a]) : dflt ? 2048 : 512;
    int min_nodes = argc > a + 1 ? atoi(argv[a + 1]) : dflt ? 8 : 1;
    const char *mode = argc > a + 2 ? argv[a + 2] : "auto";
    full_maxmin = argc > a + 3 && g_str_equal(argv[a + 3], "full");
    cs_flow_fold_t fold = g_str_equal(mode, "exact")    ? CS_FLOW_FOLD_EXACT
                          : g_str_equal(mode, "none")   ? CS_FLOW_FOLD_NONE
                          : g_str_equal(mode, "approx") ? CS_FLOW_FOLD_APPROX
                                                        : CS_FLOW_FOLD_AUTO;
    cs_params_t params;
    cs_params_init_defaults(&params);
    if (!dflt) {
        static const int nodes_list[] = { 1, 16, 128, 512, 2048 };
        static const guint64 sizes[] = { G_GUINT64_CONSTANT(1) << 30, G_GUINT64_CONSTANT(4) << 30 };
        header("ring all-reduce (NCCL_ALGO=Ring)");
        for (size_t k = 0; k < G_N_ELEMENTS(nodes_list) && nodes_list[k] <= max_nodes; k++)
            for (size_t s = 0; s < G_N_ELEMENTS(sizes) && nodes_list[k] >= min_nodes; s++) {
                run_t r;
                if (!run_one(&params, nodes_list[k], "NCCL_ALGO", "Ring", sizes[s], fold, &r))
                    return 1;
                print_row(nodes_list[k], sizes[s], &r, "");
            }
    } else {
        static const int nodes_list[] = { 8, 64, 128, 256, 512, 1024, 2048 };
        const guint64 size = G_GUINT64_CONSTANT(1) << 30;
        header("NCCL's default choice, 1 GiB all-reduce, with NVLS and NCCL_NVLS_ENABLE=0");
        for (size_t k = 0; k < G_N_ELEMENTS(nodes_list) && nodes_list[k] <= max_nodes; k++)
            for (int nv = 1; nv >= 0 && nodes_list[k] >= min_nodes; nv--) {
                run_t r, u;
                if (!run_one(&params, nodes_list[k], nv ? NULL : "NCCL_NVLS_ENABLE", "0", size, fold, &r))
                    return 1;
                char extra[64] = "";
                if (nodes_list[k] <= 256 && fold != CS_FLOW_FOLD_NONE && r.st.folded) {
                    if (!run_one(&params, nodes_list[k], nv ? NULL : "NCCL_NVLS_ENABLE", "0", size,
                                 CS_FLOW_FOLD_NONE, &u))
                        return 1;
                    g_snprintf(extra, sizeof extra, "%+.4f%% (unfolded %.1f us, %.3f s)",
                               (r.st.time_s / u.st.time_s - 1) * 100, u.st.time_s * 1e6, u.cpu);
                }
                print_row(nodes_list[k], size, &r, extra);
            }
    }
    cs_params_clear(&params);
    return 0;
}
