/* collsim real --verbs: options. The scenario, its key flags, --env and the
 * topology flags are parsed by `collsim run`'s own parser (io/cs_run_args),
 * so a replay reads a scenario exactly as a prediction does; the verbs
 * options are an extra group. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "io/cs_run_args.h"
#include "io/cs_scenario-int.h"
#include "models/cs_presets.h"
#include "real/verbs_int.h"
#include "util/cs_error.h"
#include "util/cs_units.h"

void vb_opts_init(vb_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->port = VB_DEFAULT_PORT;
    o->gid_index = -1;
    o->tc = -1;
    o->sl = -1;
    o->size = VB_DEFAULT_SIZE;
    o->bw_iters = VB_DEFAULT_BW_ITERS;
    o->lat_iters = VB_DEFAULT_LAT_ITERS;
    o->tx_depth = VB_DEFAULT_TX_DEPTH;
    o->tests = VB_TEST_BW | VB_TEST_LAT;
    cs_run_args_init(&o->args);
}

void vb_opts_clear(vb_opts_t *o)
{
    g_free(o->client);
    g_free(o->ib_dev);
    cs_run_args_clear(&o->args);
    memset(o, 0, sizeof *o);
}

static gboolean int_arg(const char *opt, const char *value, gint64 lo, gint64 hi, const char *what, int *v_p,
                        GError **err)
{
    gint64 v;
    if (!cs_parse_int(value, lo, hi, &v)) {
        cs_set_flag_error(err, opt, "'%s' is not %s; expected a whole number from %" G_GINT64_FORMAT " to %"
                          G_GINT64_FORMAT, value, what, lo, hi);
        cs_scenario_error_one_line(*err);
        return FALSE;
    }
    *v_p = (int)v;
    return TRUE;
}

static gboolean on_opt(const char *name, const char *value, gpointer data, GError **err)
{
    vb_opts_t *o = data;
    if (strcmp(name, "--port") == 0)
        return int_arg(name, value, 1, 65535, "a TCP port", &o->port, err);
    if (strcmp(name, "--gid-index") == 0)
        return int_arg(name, value, 0, 255, "a GID index", &o->gid_index, err);
    /* NCCL_IB_TC is the IP ToS / IB traffic class byte, NCCL_IB_SL the
     * InfiniBand service level (4 bits) (reference fabric-models.md §6). */
    if (strcmp(name, "--tc") == 0)
        return int_arg(name, value, 0, 255, "a traffic class (the whole ToS byte, DSCP<<2|ECN)", &o->tc, err);
    if (strcmp(name, "--sl") == 0)
        return int_arg(name, value, 0, 15, "a service level", &o->sl, err);
    if (strcmp(name, "--bw-iters") == 0)
        return int_arg(name, value, 1, 100000000, "an iteration count", &o->bw_iters, err);
    if (strcmp(name, "--lat-iters") == 0)
        return int_arg(name, value, 2, 100000000, "an iteration count", &o->lat_iters, err);
    if (strcmp(name, "--tx-depth") == 0)
        return int_arg(name, value, 1, 8192, "a send queue depth", &o->tx_depth, err);
    if (strcmp(name, "--size") == 0) {
        guint64 v;
        if (!cs_parse_size(value, &v) || v < 1 || v > (G_GUINT64_CONSTANT(1) << 30)) {
            cs_set_flag_error(err, name, "'%s' is not a message size; expected bytes from 1 to 1G "
                              "(K/M/G = 1024^n)", value);
            cs_scenario_error_one_line(*err);
            return FALSE;
        }
        o->size = v;
        return TRUE;
    }
    if (strcmp(name, "--test") == 0) {
        o->tests_given = TRUE;
        if (strcmp(value, "bw") == 0)
            o->tests = VB_TEST_BW;
        else if (strcmp(value, "lat") == 0)
            o->tests = VB_TEST_LAT;
        else if (strcmp(value, "both") == 0)
            o->tests = VB_TEST_BW | VB_TEST_LAT;
        else {
            cs_set_flag_error(err, name, "'%s' is not a test; expected bw, lat or both", value);
            cs_scenario_error_one_line(*err);
            return FALSE;
        }
        return TRUE;
    }
    g_assert_not_reached();
}

/* The verbs options, as the extra group of the shared parser (their
 * callbacks get 'o'). */
static GOptionEntry *verbs_entries(vb_opts_t *o, gboolean *verbs_p)
{
    const GOptionEntry fixed[] = {
        { "verbs", 0, 0, G_OPTION_ARG_NONE, verbs_p, "RDMA write tests over verbs (this command)", NULL },
        { "server", 0, 0, G_OPTION_ARG_NONE, &o->server, "Wait for a client (run this first, on the other host)", NULL },
        { "client", 0, 0, G_OPTION_ARG_STRING, &o->client, "Connect to the server on HOST and run the tests", "HOST" },
        { "port", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_opt, "TCP port of the out-of-band exchange (default: 18515)", "P" },
        { "ib-dev", 0, 0, G_OPTION_ARG_STRING, &o->ib_dev, "RDMA device[:port] (default: NCCL's first, after NCCL_IB_HCA)", "DEV[:PORT]" },
        { "gid-index", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_opt, "GID index (default: NCCL_IB_GID_INDEX, else NCCL's auto-pick)", "N" },
        { "tc", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_opt, "Traffic class byte (default: NCCL_IB_TC, else 0)", "N" },
        { "sl", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_opt, "Service level (default: NCCL_IB_SL, else 0)", "N" },
        { "size", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_opt, "Message size of the raw test (default: 65536)", "SIZE" },
        { "all", 0, 0, G_OPTION_ARG_NONE, &o->all, "Sweep sizes 2 B to 8 MiB, as perftest -a", NULL },
        { "test", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_opt, "bw, lat or both (default: both)", "WHICH" },
        { "bw-iters", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_opt, "Writes per size, bandwidth (default: 5000)", "N" },
        { "lat-iters", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_opt, "Round trips per size, latency (default: 1000)", "N" },
        { "tx-depth", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_opt, "Writes outstanding, bandwidth (default: 128)", "N" },
        { "report-gbits", 0, 0, G_OPTION_ARG_NONE, &o->gbits, "Bandwidth in Gb/s instead of MiB/s", NULL },
        { "use-cuda", 0, 0, G_OPTION_ARG_NONE, &o->use_cuda, "Buffers in GPU memory (GPUDirect RDMA)", NULL },
        { NULL },
    };
    return g_memdup2(fixed, sizeof fixed);
}

static gboolean topo_flags_given(const cs_topo_spec_t *t)
{
    return t->file != NULL || t->preset != NULL || t->gpu != NULL || t->gpus > 0 || t->sockets > 0 || t->cpu != NULL ||
           t->p2p != -1 || t->nodes > 0 || t->nic != NULL || t->nics_per_node > 0 || t->fabric != NULL ||
           t->oversubscription > 0 || t->nvlink_bridge != CS_BRIDGE_UNSET;
}

gboolean vb_opts_parse(vb_opts_t *o, int argc, char **argv, GError **err)
{
    gboolean verbs = FALSE;
    g_autofree GOptionEntry *entries = verbs_entries(o, &verbs);
    const cs_run_args_cmd_t cmd = {
        .command = "real --verbs",
        .parameter = "--verbs --server | --client HOST [SCENARIO] - RDMA write tests",
        .summary = "Measures RDMA write bandwidth and latency between two hosts over RC queue pairs, as\n"
                   "perftest's ib_write_bw and ib_write_lat do, on the port and GID NCCL would use; with a\n"
                   "scenario of 2 or more nodes, replays the ring's inter-node traffic instead.",
        .description = "Examples:\n"
                       "  hostA$ collsim real --verbs --server\n"
                       "  hostB$ collsim real --verbs --client hostA --all --report-gbits\n"
                       "  hostB$ collsim real --verbs --client hostA --topo dgx-h100 --nodes 2 -b 1M -e 1G -f 2\n"
                       "\n--help-scenario lists the scenario options of a replay; see docs/collsim-verbs.md.",
        .extra = entries,
        .extra_data = o,
        .extra_main = TRUE,
    };
    /* GOption wants a writable copy it may permute */
    g_autofree char **av = g_new0(char *, argc + 1);
    memcpy(av, argv, sizeof(char *) * (size_t)argc);
    if (!cs_run_args_parse(&o->args, &cmd, argc, av, err)) {
        cs_scenario_error_one_line(*err);
        return FALSE;
    }
    if (o->server == (o->client != NULL)) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, o->server
                    ? "collsim: real --verbs: --server and --client both given; expected one of them"
                    : "collsim: real --verbs: expected --server (on one host) or --client HOST (on the other)");
        return FALSE;
    }
    if (o->client != NULL && *o->client == '\0') {
        cs_set_flag_error(err, "--client", "empty host; expected the server's host name or address");
        return FALSE;
    }
    if (o->ib_dev != NULL && (*o->ib_dev == '\0' || *o->ib_dev == ':')) {
        cs_set_flag_error(err, "--ib-dev", "'%s' names no device; expected DEVICE or DEVICE:PORT (e.g. mlx5_0:1)",
                          o->ib_dev);
        return FALSE;
    }
    if (o->ib_dev != NULL && strchr(o->ib_dev, ':') != NULL) {
        const char *p = strchr(o->ib_dev, ':') + 1;
        char *end = NULL;
        long v = strtol(p, &end, 10);
        if (end == p || *end != '\0' || v < 1 || v > 255) {
            cs_set_flag_error(err, "--ib-dev", "'%s' has no valid port after ':'; expected DEVICE or DEVICE:PORT "
                              "(e.g. mlx5_0:1)", o->ib_dev);
            cs_scenario_error_one_line(*err);
            return FALSE;
        }
        o->ib_port = (int)v;
    }
    o->replay = o->args.scenario != NULL || topo_flags_given(&o->args.topo);
    if (o->server && (o->replay || o->all || o->args.flags->len > 0)) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: real --verbs: the server takes its plan from the "
                    "client; expected sweep and scenario options on the --client side only");
        return FALSE;
    }
    if (o->replay && o->all) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: real --verbs: --all sweeps raw writes, a scenario "
                    "replays a collective; expected one of them");
        return FALSE;
    }
    /* ib_write_lat polls the last byte from the CPU: not on GPU memory */
    if (o->use_cuda && !o->replay && (o->tests & VB_TEST_LAT)) {
        if (o->tests_given) {
            cs_set_flag_error(err, "--use-cuda", "the latency test polls the buffer from the CPU; expected "
                              "--test bw with --use-cuda");
            return FALSE;
        }
        o->tests = VB_TEST_BW;
    }
#if !defined(HAVE_CUDA) && !defined(HAVE_REAL_NCCL)
    if (o->use_cuda) {
        cs_set_flag_error(err, "--use-cuda", "this collsim was built without CUDA; expected a build configured "
                          "with CUDA found (see ./configure's summary)");
        return FALSE;
    }
#endif
    (void)verbs;
    return TRUE;
}

gboolean vb_opts_scenario(vb_opts_t *o, cs_scenario_t *s, GError **err)
{
    return cs_run_args_build(&o->args, s, err) && cs_run_args_check_measured(s, "real --verbs", err) &&
           cs_scenario_validate(s, err);
}
