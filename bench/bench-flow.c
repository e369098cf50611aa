/* Benchmark: the flow engine on DGX H100 clusters (ib-ndr x8 rails), ring
 * all-reduce (NCCL_ALGO=Ring) of 1 GiB and 4 GiB. Prints per size the wall
 * time of the simulation, events per second, lanes simulated, whether the
 * ring was folded to one node period (exact symmetry, docs/model-flow.md)
 * and the peak RSS. Issue target: 16384 GPUs under a minute. Nothing is
 * asserted. Usage: bench-flow [max_nodes [min_nodes [auto|approx|exact|none]]]
 * (default 512 1 auto, as --model flow: a few minutes; the issue target is "bench-flow
 * 2048 2048"). The folded column: "exact/P" or "approx/P" (P positions
 * per channel simulated, cs_flow_fold_t), or "no". */
#include "config.h"

#include "bench-util.h"

#include <stdio.h>
#include <stdlib.h>

#include "models/cs_presets.h"
#include "models/cs_decide.h"
#include "models/cs_params.h"
#include "sim/cs_engine_flow-int.h"

int main(int argc, char **argv)
{
    static const int nodes_list[] = { 1, 16, 128, 512, 2048 };
    static const guint64 sizes[] = { G_GUINT64_CONSTANT(1) << 30, G_GUINT64_CONSTANT(4) << 30 };
    int max_nodes = argc > 1 ? atoi(argv[1]) : 512;
    int min_nodes = argc > 2 ? atoi(argv[2]) : 1;
    const char *mode = argc > 3 ? argv[3] : "auto";
    cs_flow_fold_t fold = g_str_equal(mode, "exact")    ? CS_FLOW_FOLD_EXACT
                          : g_str_equal(mode, "none")   ? CS_FLOW_FOLD_NONE
                          : g_str_equal(mode, "approx") ? CS_FLOW_FOLD_APPROX
                                                        : CS_FLOW_FOLD_AUTO;
    cs_params_t params;
    cs_params_init_defaults(&params);
    printf("# bench-flow: DGX H100 x8, ib-ndr x8 rails, ring all-reduce (target: 16384 GPUs < 60 s)\n");
    printf("# %6s %6s %8s %5s %4s %9s %10s %12s %11s %7s %10s %9s\n", "nodes", "ranks", "size", "proto", "nch",
           "sim_us", "wall_s", "events/s", "recomputes", "lanes", "folded", "rss_MiB");
    for (size_t k = 0; k < G_N_ELEMENTS(nodes_list) && nodes_list[k] <= max_nodes; k++) {
        if (nodes_list[k] < min_nodes)
            continue;
        GError *err = NULL;
        cs_build_opts_t o;
        cs_build_opts_init(&o);
        o.nodes = nodes_list[k];
        g_autoptr(cs_topo_t) topo = cs_preset_build("dgx-h100", &o, &err);
        g_autoptr(cs_nccl_env_t) env = cs_nccl_env_new();
        cs_nccl_env_set(env, "NCCL_ALGO", "Ring", "bench");
        g_autoptr(cs_comm_t) comm = topo != NULL ? cs_comm_new(topo, env, &err) : NULL;
        if (comm == NULL) {
            fprintf(stderr, "%s\n", err->message);
            return 1;
        }
        cs_engine_job_t job = { .topo = topo, .comm = comm, .params = &params, .coll = CS_COLL_ALLREDUCE,
                                .dtype = CS_DTYPE_FLOAT };
        g_autoptr(cs_flow_t) f = cs_flow_new(&job, &err);
        for (size_t s = 0; s < G_N_ELEMENTS(sizes); s++) {
            cs_decision_t d;
            if (!cs_comm_decide(comm, CS_COLL_ALLREDUCE, CS_DTYPE_FLOAT, sizes[s], &d, &err)) {
                fprintf(stderr, "%s\n", err->message);
                return 1;
            }
            cs_engine_call_t call = { .size = sizes[s], .count = sizes[s] / 4, .nccl_bytes = sizes[s], .decision = &d };
            cs_flow_stats_t st;
            double t0 = bench_now();
            if (!cs_flow_simulate(f, &call, fold, &st, &err)) {
                fprintf(stderr, "%s\n", err->message);
                return 1;
            }
            double wall = bench_now() - t0;
            char how[32];
            if (!st.folded)
                g_strlcpy(how, "no", sizeof how);
            else
                g_snprintf(how, sizeof how, "%s/%d", st.approx ? "approx" : "exact", st.period);
            printf("  %6d %6d %7.0fM %5s %4d %9.1f %10.3f %12.3g %11.3g %7d %10s %9.1f\n", o.nodes,
                   cs_comm_info(comm)->nranks, sizes[s] / 1048576.0, cs_proto_name(d.proto), d.nchannels,
                   st.time_s * 1e6, wall, st.events / MAX(wall, 1e-9), (double)st.recomputes, st.lanes, how, bench_peak_rss_kib(FALSE) / 1024.0);
            fflush(stdout);
        }
    }
    cs_params_clear(&params);
    return 0;
}
