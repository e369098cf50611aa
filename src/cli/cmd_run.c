/* collsim run: predict a collective sweep and print it as nccl-tests does.
 *
 * scenario file < flags (and [nccl] < environment < --env) -> topology ->
 * NCCL's communicator -> engine sweep -> JSON/CSV (atomic) -> table.
 * Every input problem ends here as one line on stderr and exit 2, before
 * anything is written. */
#include "config.h"
#include "cli/cs_commands.h"
#include "io/cs_run_args.h"
#include "io/cs_writers.h"
#include "models/cs_decide.h"
#include "models/cs_params.h"
#include "sim/cs_engine.h"
#include "util/cs_error.h"
#include "util/cs_units.h"

#include <stdio.h>
#include <string.h>

/* ---- the run ----------------------------------------------------------------- */

/* Puts our header notes before the engine's own (which name the
 * transports and the parameters). */
static void add_notes(cs_result_t *r, const cs_scenario_t *s, const GPtrArray *warnings)
{
    guint at = 0;
    /* (the pcie preset's gpus is its size, not a restriction) */
    if (s->topo.gpus > 0 && g_strcmp0(s->topo.preset, "pcie") != 0)
        g_ptr_array_insert(r->notes, at++,
                           g_strdup_printf("using the first %d GPU(s) of each node (-g/--gpus)", s->topo.gpus));
    for (guint i = 0; i < warnings->len; i++)
        g_ptr_array_insert(r->notes, at++, g_strdup_printf("warning: %s", (const char *)g_ptr_array_index(warnings, i)));
}

/* Returns the exit status; 2 with *err set for bad input. */
static int predict(cs_run_args_t *a, cs_scenario_t *s, cs_params_t *params, GError **err)
{
    if (!cs_run_args_build(a, s, err))
        return 2;
    if (a->dump) {
        g_autofree char *ini = cs_scenario_to_ini(s);
        fputs(ini, stdout);
        return 0;
    }
    if (!cs_scenario_validate(s, err))
        return 2;
    const cs_engine_ops_t *ops = cs_engine_find(s->model);
    if (ops == NULL) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: unknown model '%s'; expected one of %s",
                    cs_run_args_origin(s, "scenario.model", "collsim: --model"), s->model, cs_engine_names());
        return 2;
    }
    if (s->calibration != NULL && !cs_params_load(params, s->calibration, err))
        return 2;
    g_autoptr(cs_topo_t) topo = cs_topo_spec_build(&s->topo, err);
    if (topo == NULL)
        return 2;
    if (cs_coll_has_root(s->coll) && s->root >= topo->ngpus) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: root %d is not a rank; expected 0 to %d",
                    cs_run_args_origin(s, "collective.root", "collsim: -r"), s->root, topo->ngpus - 1);
        return 2;
    }
    g_autoptr(cs_comm_t) comm = cs_comm_new(topo, s->env, err);
    if (comm == NULL)
        return 2;

    int nsizes = 0;
    g_autofree guint64 *sizes = cs_scenario_sizes(s, &nsizes);
    cs_engine_job_t job = {
        .topo = topo, .comm = comm, .params = params, .coll = s->coll, .dtype = s->dtype,
        .redop = s->redop, .root = cs_coll_has_root(s->coll) ? s->root : -1, .seed = s->seed,
    };
    g_autoptr(cs_result_t) r = cs_engine_run_sweep(ops, &job, sizes, nsizes, err);
    if (r == NULL)
        return 2;
    if (s->name != NULL) {
        g_free(r->source);
        r->source = g_strdup(s->name);
    }
    g_autoptr(GPtrArray) warnings = cs_nccl_env_warnings(s->env);
    add_notes(r, s, warnings);

    /* Files first and atomically: on failure nothing is half-written and
     * no table is printed as if all went well. */
    if (s->json_out != NULL && !cs_write_json_file(s->json_out, r, err))
        return 2;
    if (s->csv_out != NULL && !cs_write_csv_file(s->csv_out, r, err))
        return 2;
    for (guint i = 0; i < warnings->len; i++)
        fprintf(stderr, "collsim: warning: %s\n", (const char *)g_ptr_array_index(warnings, i));

    g_autofree char *command = cs_run_args_nccl_tests_command(s, topo->nnodes, topo->ngpus, cs_topo_node_gpus(topo, 0));
    cs_table_opts_t o = {
        .command = command,
        .topo_desc = topo->description,
        .nthreads = 1,
        /* as the equivalent nccl-tests command's -g (one process per GPU
         * across nodes, one process per node otherwise) */
        .ngpus = topo->nnodes > 1 ? 1 : cs_topo_node_gpus(topo, 0),
        .iters = s->iters,
        .warmup = s->warmup,
        .agg_iters = s->agg_iters,
        .check = 0,               /* a prediction checks no data */
        .minbytes = s->minbytes,
        .maxbytes = s->maxbytes,
        .stepbytes = s->stepbytes,
        .stepfactor = s->stepfactor,
        .extra_columns = s->extra_columns,
        .topo = topo,
    };
    cs_write_table(stdout, r, &o);
    if (fflush(stdout) != 0) {
        fprintf(stderr, "collsim: cannot write the table to standard output\n");
        return 1;
    }
    return 0;
}

static const cs_run_args_cmd_t run_cmd = {
    .command = "run",
    .parameter = "[SCENARIO] - predict a collective as nccl-tests would report it",
    .summary =
        "Predicts the times NCCL would take for a sweep of sizes of one collective and prints\n"
        "them in nccl-tests's table, with NCCL's choice of algorithm, protocol, channels and\n"
        "transport. Flags are nccl-tests's where it has one (-b -e -f -i -n -w -c -m -d -o -r -g -t).",
    .description =
        "Examples:\n"
        "  collsim run --topo dgx-h100 -b 8 -e 8G -f 2\n"
        "  collsim run --topo dgx-h100 --nodes 4 --nic ib-ndr --op allgather -b 1M -e 1G -f 2\n"
        "  collsim run scenarios/default.ini --env NCCL_ALGO=Ring --json out.json\n"
        "\nSee collsim(1) and collsim-scenario(5).",
};

int cs_cmd_run(int argc, char **argv)
{
    cs_run_args_t a;
    cs_run_args_init(&a);
    g_set_prgname("collsim run");

    g_autoptr(GError) err = NULL;
    int status;
    if (!cs_run_args_parse(&a, &run_cmd, argc, argv, &err)) {
        status = cs_cli_fail(err);
    } else {
        cs_scenario_t s;
        cs_params_t params;
        cs_scenario_init(&s);
        cs_params_init_defaults(&params);
        status = predict(&a, &s, &params, &err);
        if (status == 2)
            cs_cli_fail(err);
        cs_params_clear(&params);
        cs_scenario_clear(&s);
    }
    cs_run_args_clear(&a);
    return status;
}
