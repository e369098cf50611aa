/* Benchmark: the native flow engine against the SimGrid engine on the same
 * scenario: ring all-reduce (NCCL_ALGO=Ring) of 1 GiB float on DGX H100
 * nodes (dgx-h100 preset: ib-ndr x8, rail fabric), 64 to 1024 GPUs; then
 * the flow engine alone up to 16384 GPUs.
 *
 * Every engine run is a child process (its own process group) with a wall
 * limit: the parent kills the group past it and prints "> N s". Printed per
 * run: simulated time, wall time of the engine (setup + simulation: flow's
 * cs_flow_new + cs_flow_simulate, SimGrid's cs_simgrid_simulate, which
 * generates the platform and runs SimGrid in a process of its own), events
 * per second (flow: events / simulation wall time), lanes, and the peak RSS
 * of the run (the child, or SimGrid's own process, whichever is larger).
 * The flow engine runs twice: "flow" as users get it (a ring folded to one
 * period where that is exact, or past CS_FLOW_EXACT_WORK transfers to a
 * short period with averaged latencies: docs/model-flow.md) and
 * "flow-full" (every lane, as SimGrid simulates). Issue targets: >= 20x
 * faster than SimGrid at 1024 GPUs; 16384 GPUs under a minute and 4 GiB.
 * Nothing is asserted.
 *
 * Usage: bench-engines [simgrid_limit_s [native_max_gpus [native_limit_s]]]
 * (defaults 120, 16384, 120). */
#include "config.h"

#include "bench-util.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "models/cs_presets.h"
#include "models/cs_decide.h"
#include "models/cs_params.h"
#include "sim/cs_engine_flow-int.h"
#ifdef HAVE_SIMGRID
#include "sim/cs_engine_simgrid-int.h"
#endif

#define SIZE_BYTES (G_GUINT64_CONSTANT(1) << 30)

typedef enum { ENG_FLOW, ENG_FLOW_FULL, ENG_SIMGRID } engine_t;

static const char *const engine_names[] = { "flow", "flow-full", "simgrid" };

/* What a child sends back: fixed size, one write (< PIPE_BUF). */
typedef struct {
    int ok;
    double sim_s;          /* simulated time of the call */
    double wall_s;         /* engine setup + simulation */
    double run_wall_s;     /* simulation only (flow) */
    guint64 events;
    int lanes;
    int folded;            /* 0 no, 1 exact, 2 approximate (averaged latencies) */
    long rss_kib;
    char msg[200];
} reply_t;

/* Runs one engine on the scenario in this (child) process. */
static void run_engine(engine_t eng, int gpus, reply_t *r)
{
    GError *err = NULL;
    cs_params_t params;
    cs_params_init_defaults(&params);
    cs_build_opts_t o;
    cs_build_opts_init(&o);
    o.nodes = gpus / 8;
    cs_topo_t *topo = cs_preset_build("dgx-h100", &o, &err);
    cs_nccl_env_t *env = cs_nccl_env_new();
    cs_nccl_env_set(env, "NCCL_ALGO", "Ring", "bench");
    cs_comm_t *comm = topo != NULL ? cs_comm_new(topo, env, &err) : NULL;
    cs_decision_t d;
    if (comm == NULL || !cs_comm_decide(comm, CS_COLL_ALLREDUCE, CS_DTYPE_FLOAT, SIZE_BYTES, &d, &err))
        goto out;
    cs_engine_job_t job = { .topo = topo, .comm = comm, .params = &params, .coll = CS_COLL_ALLREDUCE,
                            .dtype = CS_DTYPE_FLOAT, .redop = CS_REDOP_SUM, .root = -1 };
    cs_engine_call_t call = { .size = SIZE_BYTES, .count = SIZE_BYTES / 4, .nccl_bytes = SIZE_BYTES,
                              .decision = &d };
    double t0 = bench_now();
    if (eng == ENG_FLOW || eng == ENG_FLOW_FULL) {
        cs_flow_t *f = cs_flow_new(&job, &err);
        cs_flow_stats_t st;
        double t1 = bench_now();
        if (f != NULL && cs_flow_simulate(f, &call, eng == ENG_FLOW ? CS_FLOW_FOLD_AUTO : CS_FLOW_FOLD_NONE, &st, &err)) {
            double t2 = bench_now();
            r->ok = 1;
            r->sim_s = st.time_s;
            r->wall_s = t2 - t0;
            r->run_wall_s = t2 - t1;
            r->events = st.events;
            r->lanes = st.lanes;
            r->folded = st.folded ? (st.approx ? 2 : 1) : 0;
        }
        cs_flow_free(f);
    } else {
#ifdef HAVE_SIMGRID
        cs_simgrid_stats_t st;
        if (cs_simgrid_simulate(&job, &call, NULL, &st, &err)) {
            r->ok = 1;
            r->sim_s = st.time_s;
            r->wall_s = bench_now() - t0;
            r->lanes = st.lanes;
        }
#else
        g_set_error(&err, CS_ERROR, CS_ERROR_UNSUPPORTED, "SimGrid engine not built (configure found no SimGrid)");
#endif
    }
out:
    if (!r->ok && err != NULL)
        g_strlcpy(r->msg, err->message, sizeof r->msg);
    r->rss_kib = bench_peak_rss_kib(TRUE);
    g_clear_error(&err);
    cs_comm_free(comm);
    cs_nccl_env_free(env);
    cs_topo_free(topo);
    cs_params_clear(&params);
}

/* Runs one engine in a child process group with a wall limit. Returns 1
 * done (r filled), 0 over the limit, -1 the child failed. */
static int run_limited(engine_t eng, int gpus, double limit_s, reply_t *r)
{
    int fd[2];
    memset(r, 0, sizeof *r);
    if (pipe(fd) != 0)
        return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return -1;
    }
    if (pid == 0) {
        setpgid(0, 0);
        close(fd[0]);
        reply_t rep;
        memset(&rep, 0, sizeof rep);
        run_engine(eng, gpus, &rep);
        ssize_t w = write(fd[1], &rep, sizeof rep);
        _exit(w == (ssize_t)sizeof rep ? 0 : 1);
    }
    setpgid(pid, pid);   /* either side may win the race; both set the same */
    close(fd[1]);
    struct pollfd p = { .fd = fd[0], .events = POLLIN };
    double deadline = bench_now() + limit_s;
    int done = -1;
    for (;;) {
        double left = deadline - bench_now();
        if (left <= 0) {
            done = 0;
            break;
        }
        int n = poll(&p, 1, (int)(left * 1000) + 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n > 0) {
            done = read(fd[0], r, sizeof *r) == (ssize_t)sizeof *r ? 1 : -1;
            break;
        }
    }
    if (done != 1)
        kill(-pid, SIGKILL);   /* the child and SimGrid's process under it */
    close(fd[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return done;
}

static void print_run(int gpus, engine_t eng, int done, const reply_t *r, double limit_s)
{
    printf("  %6d  %-9s ", gpus, engine_names[eng]);
    if (done == 0) {
        printf(" %10s  > %.0f s (killed at the limit)\n", "-", limit_s);
    } else if (done < 0 || !r->ok) {
        printf(" %10s  failed: %s\n", "-", done < 0 ? "the child process died" : r->msg);
    } else {
        char evs[32] = "-";
        if (eng != ENG_SIMGRID)
            g_snprintf(evs, sizeof evs, "%.3g", r->events / MAX(r->run_wall_s, 1e-9));
        printf(" %10.1f  %9.3f  %10s  %7d  %6s  %8.1f\n", r->sim_s * 1e6, r->wall_s, evs, r->lanes,
               r->folded == 2 ? "approx" : r->folded ? "exact" : "no", r->rss_kib / 1024.0);
    }
    fflush(stdout);
}

static void print_header(void)
{
    printf("# %6s  %-9s  %10s  %9s  %10s  %7s  %6s  %8s\n", "gpus", "engine", "sim_us", "wall_s", "events/s",
           "lanes", "folded", "rss_MiB");
}

int main(int argc, char **argv)
{
    static const int cmp_gpus[] = { 64, 128, 256, 512, 1024 };
    static const int native_gpus[] = { 2048, 4096, 8192, 16384 };
    double sg_limit = argc > 1 ? atof(argv[1]) : 120;
    int native_max = argc > 2 ? atoi(argv[2]) : 16384;
    double native_limit = argc > 3 ? atof(argv[3]) : 120;
    if (sg_limit <= 0 || native_limit <= 0) {
        fprintf(stderr, "usage: bench-engines [simgrid_limit_s [native_max_gpus [native_limit_s]]]\n");
        return 2;
    }

    printf("# bench-engines: ring all-reduce (NCCL_ALGO=Ring), 1 GiB float, dgx-h100 (8 x H100, ib-ndr x8, "
           "rail fabric)\n");
    printf("# wall_s: engine setup + simulation, in a child process; limit %.0f s (SimGrid), %.0f s (flow)\n",
           sg_limit, native_limit);
    printf("# flow: as users get it (folded exactly, or approximately past 2^26 transfers); flow-full: every lane "
           "(as SimGrid)\n");
    printf("# targets: flow >= 20x faster than SimGrid at 1024 GPUs; 16384 GPUs < 60 s and < 4 GiB\n");
    print_header();
    gboolean sg_over = FALSE;   /* once SimGrid passes the limit, larger sizes would too; but
                                 * 1024 GPUs, the target's size, runs to give its lower bound */
    for (size_t k = 0; k < G_N_ELEMENTS(cmp_gpus); k++) {
        int g = cmp_gpus[k];
        reply_t rf, rff, rs;
        int df = run_limited(ENG_FLOW, g, native_limit, &rf);
        print_run(g, ENG_FLOW, df, &rf, native_limit);
        int dff = run_limited(ENG_FLOW_FULL, g, native_limit, &rff);
        print_run(g, ENG_FLOW_FULL, dff, &rff, native_limit);
#ifdef HAVE_SIMGRID
        int ds = -2;   /* not run */
        memset(&rs, 0, sizeof rs);
        if (!sg_over || g == 1024) {
            ds = run_limited(ENG_SIMGRID, g, sg_limit, &rs);
            print_run(g, ENG_SIMGRID, ds, &rs, sg_limit);
            sg_over |= ds == 0;
        } else {
            printf("  %6d  %-9s  %10s  > %.0f s (not run: a smaller size already passed the limit)\n", g,
                   "simgrid", "-", sg_limit);
        }
        if (ds == 1 && rs.ok) {
            if (df == 1 && rf.ok)
                printf("# %6d  SimGrid / flow = %.1fx", g, rs.wall_s / MAX(rf.wall_s, 1e-9));
            if (dff == 1 && rff.ok)
                printf("; SimGrid / flow-full = %.1fx", rs.wall_s / MAX(rff.wall_s, 1e-9));
            printf("\n");
        } else if (ds == 0) {
            if (df == 1 && rf.ok)
                printf("# %6d  SimGrid / flow > %.0fx", g, sg_limit / MAX(rf.wall_s, 1e-9));
            if (dff == 1 && rff.ok)
                printf("; SimGrid / flow-full > %.0fx", sg_limit / MAX(rff.wall_s, 1e-9));
            printf(" (SimGrid stopped at the limit)\n");
        }
#else
        (void)rs;
        printf("  %6d  %-9s  %10s  not built (configure found no SimGrid)\n", g, "simgrid", "-");
#endif
    }
    printf("# native flow engine alone\n");
    print_header();
    gboolean full_over = FALSE;
    for (size_t k = 0; k < G_N_ELEMENTS(native_gpus) && native_gpus[k] <= native_max; k++) {
        int g = native_gpus[k];
        reply_t rf, rff;
        int df = run_limited(ENG_FLOW, g, native_limit, &rf);
        print_run(g, ENG_FLOW, df, &rf, native_limit);
        if (!full_over) {
            int dff = run_limited(ENG_FLOW_FULL, g, native_limit, &rff);
            print_run(g, ENG_FLOW_FULL, dff, &rff, native_limit);
            full_over = dff == 0;
        } else {
            printf("  %6d  %-9s  %10s  > %.0f s (not run: a smaller size already passed the limit)\n", g,
                   "flow-full", "-", native_limit);
        }
    }
    return 0;
}
