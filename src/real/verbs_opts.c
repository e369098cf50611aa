/* collsim real --verbs: options. The scenario flags are `collsim run`'s
 * (one key table, io/cs_scenario-int.h), so a replay reads a scenario
 * exactly as a prediction does. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "io/cs_scenario-int.h"
#include "real/verbs_int.h"
#include "util/cs_error.h"
#include "util/cs_units.h"

typedef struct {
    const cs_scenario_key_t *key;
    char *value;
    char *option;
} vb_flag_t;

static void flag_free(gpointer p)
{
    vb_flag_t *f = p;
    g_free(f->value);
    g_free(f->option);
    g_free(f);
}

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
    cs_scenario_init(&o->scratch);
    o->flags = g_ptr_array_new_with_free_func(flag_free);
    o->envs = g_ptr_array_new_with_free_func(g_free);
    cs_topo_spec_init(&o->topo);
}

void vb_opts_clear(vb_opts_t *o)
{
    g_free(o->client);
    g_free(o->ib_dev);
    g_free(o->scenario);
    cs_scenario_clear(&o->scratch);
    if (o->flags != NULL)
        g_ptr_array_unref(o->flags);
    if (o->envs != NULL)
        g_ptr_array_unref(o->envs);
    cs_topo_spec_clear(&o->topo);
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

static gboolean on_key_flag(const char *option_name, const char *value, gpointer data, GError **err)
{
    vb_opts_t *o = data;
    const cs_scenario_key_t *k = cs_scenario_key_by_flag(option_name);
    g_assert_nonnull(k);
    const char *v = value != NULL ? value : "false";
    g_autoptr(GError) e = NULL;
    if (!cs_scenario_set(&o->scratch, k->group, k->key, v, NULL, NULL, &e)) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: %s: %s", option_name, e->message);
        cs_scenario_error_one_line(*err);
        return FALSE;
    }
    vb_flag_t *f = g_new0(vb_flag_t, 1);
    f->key = k;
    f->value = g_strdup(v);
    f->option = g_strdup(option_name);
    g_ptr_array_add(o->flags, f);
    return TRUE;
}

static gboolean on_env(const char *option_name, const char *value, gpointer data, GError **err)
{
    vb_opts_t *o = data;
    if (!cs_scenario_check_env_flag(option_name, value, err))
        return FALSE;
    g_ptr_array_add(o->envs, g_strdup(value));
    return TRUE;
}

static GOptionGroup *main_group(vb_opts_t *o, gboolean *verbs_p)
{
    GOptionGroup *g = g_option_group_new("verbs", "collsim real --verbs options", "Show the verbs options", o, NULL);
    GArray *entries = g_array_new(TRUE, TRUE, sizeof(GOptionEntry));
    GOptionEntry fixed[] = {
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
        { "scenario", 's', 0, G_OPTION_ARG_FILENAME, &o->scenario, "Replay this scenario's inter-node traffic (needs nodes >= 2)", "FILE" },
        { "env", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_env, "Set an NCCL variable (repeatable)", "NCCL_X=VALUE" },
    };
    for (guint i = 0; i < G_N_ELEMENTS(fixed); i++)
        g_array_append_val(entries, fixed[i]);
    for (const cs_scenario_key_t *k = cs_scenario_keys; k->key != NULL; k++) {
        GOptionEntry e = { k->long_flag, k->short_flag, k->arg == NULL ? G_OPTION_FLAG_NO_ARG : 0,
                           G_OPTION_ARG_CALLBACK, (gpointer)on_key_flag, k->doc, k->arg };
        g_array_append_val(entries, e);
        if (k->alias != NULL) {
            GOptionEntry al = { k->alias, 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_CALLBACK, (gpointer)on_key_flag,
                                k->doc, k->arg };
            g_array_append_val(entries, al);
        }
    }
    g_option_group_add_entries(g, (const GOptionEntry *)(void *)entries->data);
    g_array_free(entries, TRUE);
    return g;
}

static gboolean topo_flags_given(const cs_topo_spec_t *t)
{
    return t->file != NULL || t->preset != NULL || t->gpu != NULL || t->gpus > 0 || t->sockets > 0 ||
           t->p2p != -1 || t->nodes > 0 || t->nic != NULL || t->nics_per_node > 0 || t->fabric != NULL ||
           t->oversubscription > 0;
}

gboolean vb_opts_parse(vb_opts_t *o, int argc, char **argv, GError **err)
{
    gboolean verbs = FALSE;
    g_autoptr(GOptionContext) ctx = g_option_context_new("--verbs --server | --client HOST - RDMA write tests");
    g_option_context_set_main_group(ctx, main_group(o, &verbs));
    g_option_context_add_group(ctx, cs_topo_spec_option_group(&o->topo));
    g_option_context_set_summary(ctx,
        "Measures RDMA write bandwidth and latency between two hosts over RC queue pairs, as\n"
        "perftest's ib_write_bw and ib_write_lat do, on the port and GID NCCL would use; with a\n"
        "scenario of 2 or more nodes, replays the ring's inter-node traffic instead.");
    g_option_context_set_description(ctx,
        "Examples:\n"
        "  hostA$ collsim real --verbs --server\n"
        "  hostB$ collsim real --verbs --client hostA --all --report-gbits\n"
        "  hostB$ collsim real --verbs --client hostA --topo dgx-h100 --nodes 2 -b 1M -e 1G -f 2\n"
        "\nSee docs/collsim-verbs.md.");
    /* GOption wants a writable copy it may permute */
    g_autofree char **av = g_new0(char *, argc + 1);
    memcpy(av, argv, sizeof(char *) * (size_t)argc);
    int ac = argc;
    char **avp = av;
    g_autoptr(GError) e = NULL;
    if (!g_option_context_parse(ctx, &ac, &avp, &e)) {
        if (e->domain == CS_ERROR)
            g_propagate_error(err, g_steal_pointer(&e));
        else {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: real --verbs: %s; expected the options of "
                        "'collsim real --verbs --help'", e->message);
            cs_scenario_error_one_line(*err);
        }
        return FALSE;
    }
    for (int i = 1; i < ac; i++)
        if (strcmp(avp[i], "--") != 0) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: real --verbs: unexpected argument '%s'; expected "
                        "options only (the scenario goes after --scenario)", avp[i]);
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
    o->replay = o->scenario != NULL || topo_flags_given(&o->topo);
    if (o->server && (o->replay || o->all || o->flags->len > 0)) {
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
    if (o->scenario != NULL && !cs_scenario_load(s, o->scenario, err))
        return FALSE;
    for (guint i = 0; i < o->flags->len; i++) {
        const vb_flag_t *f = g_ptr_array_index(o->flags, i);
        g_autofree char *origin = g_strdup_printf("collsim: %s", f->option);
        if (!cs_scenario_set(s, f->key->group, f->key->key, f->value, origin, NULL, err)) {
            g_prefix_error(err, "%s: ", origin);
            return FALSE;
        }
    }
    cs_nccl_env_import_environ(s->env);
    for (guint i = 0; i < o->envs->len; i++) {
        const char *kv = g_ptr_array_index(o->envs, i);
        const char *eq = strchr(kv, '=');
        g_autofree char *name = g_strndup(kv, (gsize)(eq - kv));
        cs_nccl_env_set(s->env, name, eq + 1, "--env");
    }
    cs_topo_spec_merge(&s->topo, &o->topo);
    return cs_scenario_validate(s, err);
}
