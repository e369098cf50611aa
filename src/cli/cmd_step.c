/* collsim step: one step of a parallel training job (or one token of
 * tensor-parallel inference) on a machine: its collectives, their overlap
 * with compute, the exposed communication and the step time.
 *
 * scenario file < flags ([workload] keys as flags, the topology flags,
 * --env) -> model and topology (cs_design_t, as collsim run) -> the
 * workload's plan (models/cs_workload.h) -> the executor (sim/cs_step.h)
 * -> JSON/SVG/trace (atomic, all or none) -> the table. Every input problem
 * ends here as one line on stderr and exit 2, before any file is written. */
#include "config.h"
#include "cli/cs_commands.h"
#include "cli/cs_predict.h"
#include "cli/cs_progress.h"
#include "io/cs_run_args.h"
#include "io/cs_scenario-int.h"
#include "io/cs_output.h"
#include "io/cs_trace.h"
#include "io/cs_write_step.h"
#include "models/cs_hw.h"
#include "sim/cs_step.h"
#include "util/cs_error.h"
#include "util/cs_units.h"

#include <stdio.h>
#include <string.h>

/* What a sweep has and a step does not: refused with where it was set. */
static gboolean check_keys(const cs_scenario_t *s, const cs_engine_ops_t *ops, GError **err)
{
    static const char *const refused[] = {
        "collective.op", "collective.datatype", "collective.redop", "collective.root", "collective.minbytes",
        "collective.maxbytes", "collective.stepbytes", "collective.stepfactor", "collective.iters",
        "collective.warmup", "collective.check", "collective.agg-iters", "collective.procs-per-node",
        "collective.nthreads", "output.csv", "output.extra-columns", "output.link-stats", "output.alternatives",
        NULL
    };
    for (int i = 0; refused[i] != NULL; i++) {
        const char *o = g_hash_table_lookup(s->origins, refused[i]);
        if (o == NULL)
            continue;
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                    "%s: does not apply to collsim step (a step's calls come from [workload], one process per GPU); "
                    "expected [workload] keys, --json, --svg or --trace", o);
        return FALSE;
    }
    if (s->jobs->len > 0) {
        const cs_scenario_job_t *j = g_ptr_array_index(s->jobs, 0);
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: [job %s] does not apply to collsim step; expected one "
                    "[workload] (collsim run runs [job NAME] groups)", j->origin, j->name);
        return FALSE;
    }
    if (s->trace_out != NULL && !ops->timeline) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: the %s model has no timeline for a trace; expected --model "
                    "flow or packet", cs_run_args_origin(s, "output.trace", "collsim: --trace"), ops->name);
        return FALSE;
    }
    return cs_run_args_check_outputs(s, err);
}

/* Where a [workload] key came from without the "collsim: " of a flag's
 * origin: "--tflops" or "s.ini:4: tflops". */
static const char *where(const cs_scenario_t *s, const char *key)
{
    const char *o = cs_scenario_workload_origin(s, key);
    return g_str_has_prefix(o, "collsim: ") ? o + strlen("collsim: ") : o;
}

/* "given by --tflops" or "given at s.ini:4: tflops". */
static char *given(const cs_scenario_t *s, const char *key)
{
    const char *o = cs_scenario_workload_origin(s, key);
    return g_strdup_printf("given %s %s", g_str_has_prefix(o, "collsim: ") ? "by" : "at", where(s, key));
}

/* The GPU's sustained FLOP/s: [workload] tflops, or its datasheet peak x
 * efficiency; *src_p says which (g_free it). 0 with no error: the plan
 * uses layer-time. */
static gboolean gpu_rate(const cs_scenario_t *s, const cs_wl_spec_t *spec, const cs_topo_t *topo, double *flops_p,
                         char **src_p, GError **err)
{
    const cs_device_t *d = cs_topo_rank_dev(topo, 0);
    const cs_gpu_model_t *gm = d != NULL ? d->gpu : NULL;
    if (spec->tflops > 0) {
        *flops_p = spec->tflops * 1e12;
        *src_p = given(s, "tflops");
        return TRUE;
    }
    const char *dsrc = NULL;
    double peak = gm != NULL ? cs_wl_gpu_peak_flops(gm->name, &dsrc) : 0;
    if (peak <= 0) {
        if (spec->layer_fwd_s > 0) {
            *flops_p = 0;
            g_autofree char *g = given(s, "layer-time");
            *src_p = g_strdup_printf("forward time per layer %s", g);
            return TRUE;
        }
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: the GPU %s has no known peak FLOP/s; expected [workload] "
                    "tflops (sustained TFLOP/s per GPU) or layer-time", s->path != NULL ? s->path : "collsim: step",
                    gm != NULL ? gm->name : "of this topology");
        return FALSE;
    }
    *flops_p = peak * spec->efficiency;
    *src_p = g_strdup_printf("%s dense 16-bit peak %.0f TFLOP/s (%s) x efficiency %.2f (%s)", gm->marketing,
                             peak / 1e12, dsrc, spec->efficiency,
                             g_hash_table_contains(s->workload->text, "efficiency")
                                 ? cs_scenario_workload_origin(s, "efficiency")
                                 : "assumed; [workload] efficiency or tflops sets it");
    if (spec->dtype == CS_DTYPE_FLOAT) {
        /* precision sets the bytes each call moves; the rate stays this one */
        char *more = g_strconcat(*src_p, "; precision fp32 sets the bytes moved, compute stays at this 16-bit rate "
                                 "(FP32/TF32 rates not modelled)", NULL);
        g_free(*src_p);
        *src_p = more;
    }
    return TRUE;
}

/* The plan's errors name a key first ("tp = 3 ..."): prefixed with where
 * that key was set, else with the scenario. */
static void prefix_plan_error(const cs_scenario_t *s, GError *e)
{
    g_autofree char *key = g_strndup(e->message, strcspn(e->message, " =:"));
    const char *o = s->workload != NULL ? g_hash_table_lookup(s->workload->origins, key) : NULL;
    g_autofree char *msg = g_strdup_printf("%s: %s", o != NULL ? o : s->path != NULL ? s->path : "collsim: step",
                                           e->message);
    g_free(e->message);
    e->message = g_steal_pointer(&msg);
}

static void name_task(void *data, int task, const char *name)
{
    cs_trace_set_job_name(data, task, name);
}

/* --dump: the scenario as collsim step reads it back, without the sweep's
 * keys that collsim run writes and step refuses. */
static char *dump_ini(const cs_scenario_t *s)
{
    g_autofree char *ini = cs_scenario_to_ini(s);
    g_autoptr(GKeyFile) kf = g_key_file_new();
    if (!g_key_file_load_from_data(kf, ini, strlen(ini), G_KEY_FILE_NONE, NULL))
        return g_steal_pointer(&ini);
    g_key_file_remove_group(kf, "collective", NULL);
    g_key_file_remove_key(kf, "output", "extra-columns", NULL);
    g_key_file_remove_key(kf, "output", "link-stats", NULL);
    g_key_file_remove_key(kf, "output", "alternatives", NULL);
    g_auto(GStrv) left = g_key_file_get_keys(kf, "output", NULL, NULL);
    if (left != NULL && left[0] == NULL)
        g_key_file_remove_group(kf, "output", NULL);
    return g_key_file_to_data(kf, NULL, NULL);
}

static int step(const cs_run_args_t *a, gboolean ops_table, cs_scenario_t *s, GError **err)
{
    if (!cs_run_args_build(a, s, err))
        return 2;
    if (a->dump) {
        g_autofree char *ini = dump_ini(s);
        return cs_output_stdout(ini, strlen(ini), err) ? 0 : cs_error_exit_status(*err);
    }
    cs_wl_spec_t spec;
    g_auto(cs_design_t) d;
    cs_design_init(&d);
    if (!cs_design_model(&d, s, err) || !check_keys(s, d.ops, err) || !cs_scenario_workload_spec(s, &spec, err) ||
        !cs_design_build(&d, s, err))
        return 2;
    const cs_topo_t *topo = d.topo;
    double flops = 0;
    g_autofree char *src = NULL;
    if (!gpu_rate(s, &spec, topo, &flops, &src, err))
        return 2;
    const cs_device_t *dev = cs_topo_rank_dev(topo, 0);
    double mem_bw = dev != NULL && dev->gpu != NULL ? dev->gpu->mem_bw : 0;
    g_autoptr(cs_wl_plan_t) plan = cs_wl_plan_new(&spec, topo->ngpus, flops, mem_bw, err);
    if (plan == NULL) {
        prefix_plan_error(s, *err);
        return 2;
    }
    g_autoptr(GPtrArray) warnings = cs_nccl_env_warnings(s->env);
    cs_engine_ignored_settings(d.ops, &s->fabric, s->env, warnings);
    cs_engine_ignored_exact(d.ops, s->exact, warnings);
    /* what a GPU holds against what it has: a plan that cannot fit is
     * priced still (its communication is what it is), and said */
    double cap = dev != NULL && dev->gpu != NULL ? dev->gpu->mem_bytes : 0;
    if (plan->mem_bytes > 0 && cap > 0 && plan->mem_bytes > cap)
        g_ptr_array_add(warnings, g_strdup_printf("memory: one GPU holds about %.1f GiB (%s), more than the %s's "
                                                  "%.0f GiB: the plan does not fit as set (activations and NCCL's "
                                                  "and the framework's buffers come on top); expected more tensor "
                                                  "or pipeline parallelism%s%s",
                                                  plan->mem_bytes / CS_GIB, plan->mem_what, dev->gpu->marketing,
                                                  cap / CS_GIB, spec.model.experts > 1 ? ", more expert parallelism" : "",
                                                  spec.mode == CS_WL_INFER ? ", or a smaller batch or context"
                                                  : spec.shard == CS_WL_SHARD_FULL ? ", more GPUs, or a smaller model"
                                                  : ", data-parallel = fsdp, or a smaller model"));
    else if (plan->mem_bytes > 0 && cap > 0)
        cs_wl_plan_add_note(plan, g_strdup_printf("Memory: one GPU holds about %.1f GiB (%s) of the %s's %.0f GiB; "
                                                  "activations and NCCL's and the framework's buffers are not "
                                                  "counted.", plan->mem_bytes / CS_GIB, plan->mem_what,
                                                  dev->gpu->marketing, cap / CS_GIB));
    int gpn = cs_topo_node_gpus(topo, 0);
    if (plan->tp > gpn)
        g_ptr_array_add(warnings, g_strdup_printf("%s: tp = %d is more than a node's %d GPUs: each TP group spans "
                                                  "%d nodes and its all-reduces cross the network",
                                                  where(s, "tp"), plan->tp, gpn, (plan->tp + gpn - 1) / gpn));
    for (guint i = 0; i < warnings->len; i++)
        fprintf(stderr, "collsim: warning: %s\n", (const char *)g_ptr_array_index(warnings, i));
    g_ptr_array_add(warnings, NULL);

    g_autofree char *producer = g_strconcat("model:", d.ops->name, NULL);
    g_autoptr(cs_trace_t) trace = s->trace_out != NULL ? cs_trace_new() : NULL;
    if (trace != NULL) {
        cs_trace_set_producer(trace, producer);
        cs_trace_begin_run(trace, s->name != NULL ? s->name : spec.model.name);
    }
    cs_step_in_t in = { .plan = plan, .topo = topo, .env = s->env, .params = &d.params, .fabric = &s->fabric,
                        .seed = s->seed, .exact = s->exact, .sink = trace != NULL ? cs_trace_sink(trace) : NULL,
                        .name_task = trace != NULL ? name_task : NULL, .name_data = trace };
    g_autoptr(cs_step_result_t) r = NULL;
    {
        guint64 one = 1;
        g_autoptr(cs_progress_t) progress = cs_progress_new(stderr, 1, &one);
        g_autofree char *label = g_strdup_printf("%s: %d ops on %d GPUs", spec.model.name, plan->nops, plan->world);
        cs_progress_begin(progress, 0, label);
        r = cs_step_run(d.ops, &in, err);
        cs_progress_end(progress);
    }
    if (cs_engine_interrupted())
        return cs_progress_exit_status();
    if (r == NULL)
        return cs_error_exit_status(*err);

    cs_step_report_t rep = { .spec = &spec, .plan = plan, .r = r, .title = s->name, .topo_desc = topo->description,
                             .producer = producer, .gpu_flops = flops, .compute_src = src,
                             .warnings = (const char *const *)warnings->pdata };
    const char *paths[3], *data[3];
    int n = 0;
    g_autofree char *json = s->json_out != NULL ? cs_write_step_json(&rep) : NULL;
    g_autofree char *svg = s->svg_out != NULL ? cs_write_step_svg(&rep) : NULL;
    g_autofree char *tr = trace != NULL ? cs_trace_to_json(trace, NULL) : NULL;
    if (json != NULL)
        paths[n] = s->json_out, data[n++] = json;
    if (svg != NULL)
        paths[n] = s->svg_out, data[n++] = svg;
    if (tr != NULL)
        paths[n] = s->trace_out, data[n++] = tr;
    if (!cs_output_write(n, paths, data, NULL, err))
        return cs_error_exit_status(*err);
    cs_write_step_table(stdout, &rep, ops_table);
    if (!cs_output_stdout_flush(err))
        return cs_error_exit_status(*err);
    /* a missed latency target is a failed check (collsim(1) EXIT STATUS) */
    return cs_write_step_targets_met(&rep) ? 0 : 1;
}

static const cs_run_args_cmd_t step_cmd = {
    .command = "step",
    .parameter = "[SCENARIO] - one step of a parallel job: its collectives, overlap and step time",
    .summary =
        "Prices one training step (DDP, FSDP, tensor, pipeline and expert parallelism) or one\n"
        "token of tensor-parallel inference on a machine: every collective NCCL runs, as NCCL\n"
        "would decide it, overlapped with compute as PyTorch and Megatron-LM issue them.\n"
        "The [workload] keys are flags too (--help-workload).",
    .description =
        "Examples:\n"
        "  collsim step --topo dgx-h100 --nodes 8 --arch llama3-8b\n"
        "  collsim step --topo dgx-h100 --nodes 16 --arch llama3-70b --tp 8 --pp 4 --micro-batches 8 --model flow\n"
        "  collsim step --topo dgx-h100 --arch llama2-70b --mode infer --tp 8 --batch 8 --target-allreduce 0.5ms\n"
        "  collsim step scenarios/ddp-llama3-8b.ini --svg step.svg\n"
        "\nSee collsim(1), collsim-scenario(5) and docs/workloads.md.",
    .workload = TRUE,
};

int cs_cmd_step(int argc, char **argv)
{
    g_set_prgname("collsim step");
    return cs_cli_scenario_command(&step_cmd, "Also list every op of the plan with its start and end", step, argc, argv);
}
