/* Fuzz target for the command line as a whole: flags and scenario together,
 * as `collsim run` reads them, or `collsim step` when the first line starts
 * with the word "step" ([workload] keys as flags too; then the workload's
 * spec, its plan and the analytic engine's step for plans of at most
 * MAX_OPS ops). The input's first line is split on blanks
 * into flags (at most 24; help options, which print and exit, are left
 * out); the rest is the scenario file, given as the last argument. Then the
 * run path: the parser (cs_run_args_parse), the effective scenario
 * (cs_run_args_build: file < flags < environment < --env), the model and
 * the topology (cs_design_model, cs_design_build), NCCL's decision for
 * each size and the analytic engine's price (closed form, cheap) for up
 * to 8 sizes on at most 16 nodes, so that no input simulates a large run.
 * Any input either gets through or fails with one non-empty line; never a
 * crash, a leak or a GLib critical (glib-fatal.h). */
#include "config.h"
#include "glib-fatal.h"
#include "cli/cs_predict.h"
#include "io/cs_run_args.h"
#include "models/cs_workload.h"
#include "sim/cs_step.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_FLAGS 24
#define MAX_NODES 16
#define MAX_SIZES 8
#define MAX_OPS 4000

static void check_message(const GError *err)
{
    if (err == NULL || err->message[0] == '\0' || strchr(err->message, '\n') != NULL)
        g_error("a failure without one line of message: '%s'", err != NULL ? err->message : "(none)");
}

/* Help options print and exit(0): a fuzzer would stop there. */
static gboolean is_help(const char *t)
{
    if (g_str_has_prefix(t, "--help"))
        return TRUE;
    if (t[0] == '-' && t[1] != '-')   /* short options, possibly clustered: -h, -?, -vh */
        return strpbrk(t + 1, "h?") != NULL;
    return FALSE;
}

/* The scenario file, one per process, rewritten for each input and
 * removed at exit. */
static char *scenario_file;

static void remove_scenario(void)
{
    unlink(scenario_file);
}

static const char *scenario_path(void)
{
    if (scenario_file == NULL) {
        int fd = g_file_open_tmp("fuzz-cmdline-XXXXXX.ini", &scenario_file, NULL);
        if (fd < 0)
            g_error("cannot make a temporary file");
        close(fd);
        atexit(remove_scenario);
    }
    return scenario_file;
}

/* The model, the topology, NCCL's decisions and the analytic price. */
static void price(const cs_scenario_t *s)
{
    g_autoptr(GError) err = NULL;
    g_auto(cs_design_t) d;
    cs_design_init(&d);
    if (!cs_design_model(&d, s, &err) || !cs_design_build(&d, s, &err)) {
        check_message(err);
        return;
    }
    if (d.comm == NULL || d.topo->nnodes > MAX_NODES)
        return;   /* [job NAME] groups: several jobs, simulated */
    int n = 0;
    g_autofree guint64 *sizes = cs_scenario_sizes(s, &n);
    n = MIN(n, MAX_SIZES);
    cs_engine_job_t job = cs_design_job(&d, s);
    cs_result_t *r = cs_engine_run_sweep(cs_engine_find("analytic"), &job, sizes, n, &err);
    if (r == NULL)
        check_message(err);
    else if ((int)r->rows->len != n)
        g_error("%u rows for %d sizes", r->rows->len, n);
    cs_result_free(r);
}

/* collsim step's path: the workload's spec and plan on the machine, and
 * the analytic engine's step for a small plan. */
static void step(const cs_scenario_t *s)
{
    g_autoptr(GError) err = NULL;
    g_auto(cs_design_t) d;
    cs_design_init(&d);
    cs_wl_spec_t spec;
    if (!cs_design_model(&d, s, &err) || !cs_scenario_workload_spec(s, &spec, &err) ||
        !cs_design_build(&d, s, &err)) {
        check_message(err);
        return;
    }
    if (d.topo->nnodes > MAX_NODES)
        return;
    const cs_device_t *dev = cs_topo_rank_dev(d.topo, 0);
    double flops = spec.tflops > 0 ? spec.tflops * 1e12 : 400e12;
    double mem = dev != NULL && dev->gpu != NULL ? dev->gpu->mem_bw : 1e12;
    g_autoptr(cs_wl_plan_t) plan = cs_wl_plan_new(&spec, d.topo->ngpus, flops, mem, &err);
    if (plan == NULL) {
        check_message(err);
        return;
    }
    if (plan->nops > MAX_OPS)
        return;
    cs_step_in_t in = { .plan = plan, .topo = d.topo, .env = s->env, .params = &d.params, .fabric = &s->fabric,
                        .seed = s->seed };
    g_autoptr(cs_step_result_t) r = cs_step_run(cs_engine_find("analytic"), &in, &err);
    if (r == NULL)
        check_message(err);
    else if (!(r->step_s >= r->compute_s - 1e-12 && r->exposed_s >= 0))
        g_error("a step of %g s shorter than its compute %g s", r->step_s, r->compute_s);
}

static void run_path(const cs_run_args_t *a, gboolean is_step)
{
    g_autoptr(GError) err = NULL;
    cs_scenario_t s;
    cs_scenario_init(&s);
    if (!cs_run_args_build(a, &s, &err))
        check_message(err);
    else if (!a->dump && s.topo.nodes <= MAX_NODES && is_step)
        step(&s);
    else if (!a->dump && s.topo.nodes <= MAX_NODES)
        price(&s);
    cs_scenario_clear(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    const char *nl = memchr(text, '\n', size);
    gsize flen = nl != NULL ? (gsize)(nl - text) : size;
    g_autofree char *line = g_strndup(text, flen);   /* (stops at a NUL byte, as argv would) */
    const char *path = scenario_path();
    gsize rest = nl != NULL ? size - flen - 1 : 0;
    if (!g_file_set_contents(path, nl != NULL ? nl + 1 : "", (gssize)rest, NULL))
        g_error("cannot write %s", path);

    g_auto(GStrv) tokens = g_strsplit_set(line, " \t\r", -1);
    gboolean is_step = tokens[0] != NULL && strcmp(tokens[0], "step") == 0;
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer)(is_step ? "step" : "run"));
    for (int i = is_step ? 1 : 0; tokens[i] != NULL && argv->len <= MAX_FLAGS; i++)
        if (tokens[i][0] != '\0' && !is_help(tokens[i]))
            g_ptr_array_add(argv, tokens[i]);
    g_ptr_array_add(argv, (gpointer)path);
    int argc = (int)argv->len;
    g_ptr_array_add(argv, NULL);
    /* g_option_context_parse rearranges argv: a copy of the pointers */
    g_autofree char **av = g_memdup2(argv->pdata, sizeof(char *) * argv->len);
    g_ptr_array_free(argv, TRUE);

    cs_engine_set_max_memory(0);   /* --max-memory sets it for the process */
    cs_run_args_t a;
    cs_run_args_init(&a);
    const cs_run_args_cmd_t cmd = { .command = is_step ? "step" : "run", .parameter = "[SCENARIO]",
                                    .workload = is_step };
    g_autoptr(GError) err = NULL;
    if (cs_run_args_parse(&a, &cmd, argc, av, &err))
        run_path(&a, is_step);
    else
        check_message(err);
    cs_run_args_clear(&a);
    return 0;
}
