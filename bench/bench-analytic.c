/* Benchmark: the analytic model at planner scale. Builds a cluster of
 * DGX H100 nodes, analyses the communicator and predicts a 31-size all-reduce
 * sweep (8 B .. 8 GiB, factor 2), for several cluster sizes, and prints the
 * wall time of each phase and its ratio to the target (issue: 1000 nodes x 8
 * GPUs, 31 sizes, under one second; the project's aim of 100k GPUs in a second:
 * the 12500-node row, not met yet); then the same sweep with link
 * statistics wanted (--link-stats: every priced link per size) and its
 * ratio to the sweep without, which must stay what the statistics cost
 * alone (the loads are built only when asked). Measured in this run;
 * nothing is asserted. */
#include "config.h"

#include "bench-util.h"

#include <stdio.h>

#include "models/cs_presets.h"
#include "models/cs_decide.h"
#include "models/cs_params.h"
#include "sim/cs_engine.h"

int main(int argc, char **argv)
{
    static const int nodes_list[] = { 1, 16, 128, 1000, 2048, 8192, 12500 };   /* 12500: 100k GPUs */
    const double target_s = 1.0;
    guint64 sizes[31];
    for (int i = 0; i < 31; i++)
        sizes[i] = G_GUINT64_CONSTANT(8) << i;   /* 8 B .. 8 GiB */

    cs_params_t params;
    cs_params_init_defaults(&params);
    printf("# bench-analytic: DGX H100 clusters, ib-ndr x8 rail fabric, all-reduce, 31 sizes\n");
    printf("# %6s %6s %10s %10s %10s %10s %12s %10s %10s %12s\n", "nodes", "ranks", "build_s", "comm_s",
           "sweep_s", "total_s", "total/target", "rss_MiB", "stats_s", "stats/sweep");
    for (size_t k = 0; k < G_N_ELEMENTS(nodes_list); k++) {
        GError *err = NULL;
        cs_build_opts_t o;
        cs_build_opts_init(&o);
        o.nodes = nodes_list[k];
        if (o.nodes > 1) {
            o.nic = "ib-ndr";
            o.nics_per_node = 8;
        }
        double t0 = bench_now();
        g_autoptr(cs_topo_t) topo = cs_preset_build("dgx-h100", &o, &err);
        if (topo == NULL) {
            fprintf(stderr, "%s\n", err->message);
            return 1;
        }
        double t1 = bench_now();
        g_autoptr(cs_nccl_env_t) env = cs_nccl_env_new();
        g_autoptr(cs_comm_t) comm = cs_comm_new(topo, env, &err);
        if (comm == NULL) {
            fprintf(stderr, "%s\n", err->message);
            return 1;
        }
        double t2 = bench_now();
        cs_engine_job_t job = {
            .topo = topo, .comm = comm, .params = &params, .coll = CS_COLL_ALLREDUCE,
            .dtype = CS_DTYPE_FLOAT, .redop = CS_REDOP_SUM, .root = 0, .seed = 1,
        };
        g_autoptr(cs_result_t) res = cs_engine_run_sweep(cs_engine_find("analytic"), &job, sizes, 31, &err);
        if (res == NULL) {
            fprintf(stderr, "%s\n", err->message);
            return 1;
        }
        double t3 = bench_now();
        double rss = bench_peak_rss_kib(FALSE) / 1024.0;
        g_autoptr(GPtrArray) stats = g_ptr_array_new_with_free_func((GDestroyNotify)cs_link_stats_free);
        job.link_stats = stats;
        g_autoptr(cs_result_t) res2 = cs_engine_run_sweep(cs_engine_find("analytic"), &job, sizes, 31, &err);
        if (res2 == NULL) {
            fprintf(stderr, "%s\n", err->message);
            return 1;
        }
        double t4 = bench_now();
        printf("  %6d %6d %10.4f %10.4f %10.4f %10.4f %12.3f %10.1f %10.4f %12.3f\n", o.nodes, topo->ngpus,
               t1 - t0, t2 - t1, t3 - t2, t3 - t0, (t3 - t0) / target_s, rss, t4 - t3, (t4 - t3) / (t3 - t2));
    }
    cs_params_clear(&params);
    return 0;
}
