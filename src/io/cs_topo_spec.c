/* How a command obtains its topology: --topo PRESET|FILE and the builder
 * options, from a scenario's [topology] group or from flags (one option
 * group shared by run, topo and validate), and the build itself. */
#include "config.h"
#include "io/cs_scenario-int.h"
#include "io/cs_topo_xml.h"
#include "models/cs_hw.h"
#include "models/cs_presets.h"
#include "util/cs_error.h"
#include "util/cs_units.h"

#include <string.h>

const cs_scenario_key_t cs_topo_spec_keys[] = {
    { "topology", "file", 0, "topo", NULL, "PRESET|FILE", "Topology file (collsim XML or an NCCL_TOPO_DUMP_FILE)" },
    { "topology", "preset", 0, "topo", NULL, "PRESET|FILE", "Built-in system (collsim topo list)" },
    { "topology", "gpu", 0, "gpu", NULL, "MODEL", "GPU model of the pcie preset" },
    { "topology", "gpus", 'g', "gpus", "ngpus", "N", "Use the first N GPUs of each node (as nccl-tests -g)" },
    { "topology", "sockets", 0, "sockets", NULL, "1|2", "CPU sockets of the pcie preset" },
    { "topology", "cpu", 0, "cpu", NULL, "PART", "CPU of the pcie preset's sockets: bdw, skl, icx, spr, emr (Intel), rome, genoa, turin (AMD) (default: an Intel part of the GPU's PCIe generation)" },
    { "topology", "p2p", 0, "p2p", NULL, "on|off", "PCIe peer-to-peer between GPUs of the pcie preset" },
    { "topology", "nodes", 0, "nodes", NULL, "N", "Number of nodes, 1 to " G_STRINGIFY(CS_MAX_NODES) " (a preset's node, or the file's, replicated)" },
    { "topology", "nic", 0, "nic", NULL, "KIND", "NIC type of every node (e.g. ib-ndr, roce-400g, eth-1g)" },
    { "topology", "nics-per-node", 0, "nics-per-node", NULL, "N", "NICs per node, 1 to " G_STRINGIFY(CS_MAX_NICS_PER_NODE) " (default: the node's own)" },
    { "topology", "fabric", 0, "fabric", NULL, "rail|fat-tree", "How nodes' NICs are switched" },
    { "topology", "oversubscription", 0, "oversubscription", NULL, "RATIO", "Leaf down/up bandwidth ratio, e.g. 2 or 2:1 (default: 1); above 1 needs a fabric with a spine" },
    { "topology", "nvlink-bridge", 0, "nvlink-bridge", NULL, "none|pairs", "NVLink bridges of the pcie presets' cards: none (pcie's default) or pairs (GPUs 0-1, 2-3, ...)" },
    { "topology", "visible-gpus", 0, "visible-gpus", NULL, "LIST", "GPUs of each node the run sees, by index, as CUDA_VISIBLE_DEVICES: 0,6 or 0-1,6-7 (numbered from 0 again; --gpus N then takes the first N of them)" },
    { NULL, NULL, 0, NULL, NULL, NULL, NULL }
};

G_STATIC_ASSERT(G_N_ELEMENTS(cs_topo_spec_keys) == CS_TOPO_SPEC_NKEYS + 1);

#define MAX_GPUS_PER_NODE 1024

static int key_index(const char *key)
{
    for (int i = 0; i < CS_TOPO_SPEC_NKEYS; i++)
        if (strcmp(cs_topo_spec_keys[i].key, key) == 0)
            return i;
    g_assert_not_reached();
}

void cs_topo_spec_set_origin(cs_topo_spec_t *spec, const char *key, const char *origin)
{
    int i = key_index(key);
    g_free(spec->key_origins[i]);
    spec->key_origins[i] = g_strdup(origin);
}

/* Where the value of 'key' came from when a scenario (or a design) gave
 * it, NULL when a flag did or it is unset. */
static const char *file_origin(const cs_topo_spec_t *spec, const char *key)
{
    const char *o = spec->key_origins[key_index(key)];
    return o != NULL && !g_str_has_prefix(o, "collsim: ") ? o : NULL;
}

/* An error about the value of 'key': "FILE:LINE: key: ..." when it came
 * from a scenario, "collsim: --key: ..." when from a flag. */
static void set_key_error(GError **err, const cs_topo_spec_t *spec, const char *key, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);
static void set_key_error(GError **err, const cs_topo_spec_t *spec, const char *key, const char *fmt, ...)
{
    g_autofree char *flag = g_strdup_printf("--%s", key);
    va_list ap;
    va_start(ap, fmt);
    cs_set_value_error_v(err, file_origin(spec, key), flag, fmt, ap);
    va_end(ap);
}

/* Whether the spec holds a value for 'key' (from a scenario or a flag). */
static gboolean key_is_set(const cs_topo_spec_t *spec, const char *key)
{
    if (strcmp(key, "file") == 0) return spec->file != NULL;
    if (strcmp(key, "preset") == 0) return spec->preset != NULL;
    if (strcmp(key, "gpu") == 0) return spec->gpu != NULL;
    if (strcmp(key, "gpus") == 0) return spec->gpus > 0;
    if (strcmp(key, "sockets") == 0) return spec->sockets > 0;
    if (strcmp(key, "cpu") == 0) return spec->cpu != NULL;
    if (strcmp(key, "p2p") == 0) return spec->p2p != -1;
    if (strcmp(key, "nodes") == 0) return spec->nodes > 0;
    if (strcmp(key, "nic") == 0) return spec->nic != NULL;
    if (strcmp(key, "nics-per-node") == 0) return spec->nics_per_node > 0;
    if (strcmp(key, "fabric") == 0) return spec->fabric != NULL;
    if (strcmp(key, "oversubscription") == 0) return spec->oversubscription > 0;
    if (strcmp(key, "nvlink-bridge") == 0) return spec->nvlink_bridge != CS_BRIDGE_UNSET;
    if (strcmp(key, "visible-gpus") == 0) return spec->visible_gpus != NULL;
    g_assert_not_reached();
}

/* The builders (presets, cluster) know flags only: "collsim: --gpus: 9
 * GPUs per node, but dgx-h100 has 8". When that value came from a
 * scenario, the message names its FILE:LINE instead; when the flag named
 * was not given at all (the pcie preset needs --gpu), the line of the
 * scenario's preset or file. */
static void relocate_error(const cs_topo_spec_t *spec, GError *err)
{
    if (err == NULL || !g_str_has_prefix(err->message, "collsim: --"))
        return;
    const char *flag = err->message + strlen("collsim: --");
    const char *end = strstr(flag, ": ");
    if (end == NULL)
        return;
    g_autofree char *name = g_strndup(flag, end - flag);
    const char *o = NULL;
    gboolean known = FALSE;
    for (int i = 0; i < CS_TOPO_SPEC_NKEYS && !known; i++) {
        const cs_scenario_key_t *k = &cs_topo_spec_keys[i];
        if (strcmp(k->long_flag, name) != 0 && (k->alias == NULL || strcmp(k->alias, name) != 0))
            continue;
        known = TRUE;
        if (strcmp(name, "topo") == 0 || !key_is_set(spec, k->key))
            o = spec->origin; /* unset or --topo: the topology source, if a scenario gave it */
        else
            o = spec->key_origins[i]; /* NULL when a flag gave it */
    }
    if (!known || o == NULL || g_str_has_prefix(o, "collsim: "))
        return;
    g_autofree char *msg = g_strdup_printf("%s: %s", o, end + 2);
    g_free(err->message);
    err->message = g_steal_pointer(&msg);
}

static void set_input_error(GError **err, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void set_input_error(GError **err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error_literal(err, CS_ERROR, CS_ERROR_INPUT, msg);
}

void cs_topo_spec_init(cs_topo_spec_t *spec)
{
    memset(spec, 0, sizeof *spec);
    spec->p2p = -1;
}

void cs_topo_spec_clear(cs_topo_spec_t *spec)
{
    g_free(spec->file);
    g_free(spec->preset);
    g_free(spec->gpu);
    g_free(spec->cpu);
    g_free(spec->visible_gpus);
    g_free(spec->nic);
    g_free(spec->fabric);
    g_free(spec->origin);
    for (int i = 0; i < CS_TOPO_SPEC_NKEYS; i++)
        g_free(spec->key_origins[i]);
    g_clear_error(&spec->flag_error);
    cs_topo_spec_init(spec);
}

/* "2", "2.5" or "2:1" (the ratio as network vendors write it). */
static gboolean parse_ratio(const char *v, double *out_p, GError **err)
{
    double r;
    const char *colon = strchr(v, ':');
    gboolean ok;
    if (colon != NULL) {
        g_autofree char *a = g_strndup(v, colon - v);
        double num, den;
        ok = cs_parse_double(a, &num) && cs_parse_double(colon + 1, &den) && den > 0;
        r = ok ? num / den : 0;
    } else {
        ok = cs_parse_double(v, &r);
    }
    if (!ok) {
        set_input_error(err, "'%s' is not a ratio; expected a number such as 2 or 2:1", v);
        return FALSE;
    }
    if (!(r >= 1) || r > 1000) {
        set_input_error(err, "oversubscription %s is out of range; expected from 1 (non-blocking) to 1000", v);
        return FALSE;
    }
    *out_p = r;
    return TRUE;
}

static void replace_str(char **dst, char *v)
{
    g_free(*dst);
    *dst = v;
}

static char *resolve_path(const char *v, const char *base_dir)
{
    if (base_dir == NULL || g_path_is_absolute(v) || strcmp(base_dir, ".") == 0)
        return g_strdup(v);
    return g_build_filename(base_dir, v, NULL);
}

gboolean cs_topo_spec_set(cs_topo_spec_t *spec, const char *key, const char *v, const char *base_dir, GError **err)
{
    if (strcmp(key, "file") == 0) {
        if (*v == '\0') {
            set_input_error(err, "empty value; expected a topology file");
            return FALSE;
        }
        replace_str(&spec->file, resolve_path(v, base_dir));
    } else if (strcmp(key, "preset") == 0) {
        if (!cs_preset_exists(v)) {
            set_input_error(err, "unknown preset '%s'; expected one of %s", v, cs_preset_names());
            return FALSE;
        }
        replace_str(&spec->preset, g_strdup(v));
    } else if (strcmp(key, "gpu") == 0) {
        if (cs_gpu_model_find(v) == NULL) {
            set_input_error(err, "unknown GPU model '%s'; expected one of %s", v, cs_gpu_model_names());
            return FALSE;
        }
        replace_str(&spec->gpu, g_strdup(v));
    } else if (strcmp(key, "gpus") == 0) {
        return cs_scenario_parse_count(v, 1, MAX_GPUS_PER_NODE, "a number of GPUs per node of at least 1", &spec->gpus, err);
    } else if (strcmp(key, "sockets") == 0) {
        return cs_scenario_parse_count(v, 1, 2, "1 or 2", &spec->sockets, err);
    } else if (strcmp(key, "cpu") == 0) {
        const cs_cpu_part_t *c = cs_cpu_part_find_x86(v);
        if (c == NULL) {
            set_input_error(err, "unknown CPU part '%s'; expected one of %s", v, cs_cpu_part_x86_names());
            return FALSE;
        }
        replace_str(&spec->cpu, g_strdup(c->key));
    } else if (strcmp(key, "p2p") == 0) {
        if (g_ascii_strcasecmp(v, "on") == 0 || g_ascii_strcasecmp(v, "yes") == 0 ||
            g_ascii_strcasecmp(v, "true") == 0 || strcmp(v, "1") == 0)
            spec->p2p = 1;
        else if (g_ascii_strcasecmp(v, "off") == 0 || g_ascii_strcasecmp(v, "no") == 0 ||
                 g_ascii_strcasecmp(v, "false") == 0 || strcmp(v, "0") == 0)
            spec->p2p = 0;
        else {
            set_input_error(err, "'%s' is not on or off; expected on or off", v);
            return FALSE;
        }
    } else if (strcmp(key, "nodes") == 0) {
        return cs_scenario_parse_count(v, 1, CS_MAX_NODES, CS_NODES_EXPECTED, &spec->nodes, err);
    } else if (strcmp(key, "nic") == 0) {
        if (cs_nic_type_find(v) == NULL) {
            set_input_error(err, "unknown NIC type '%s'; expected one of %s", v, cs_nic_type_names());
            return FALSE;
        }
        replace_str(&spec->nic, g_strdup(v));
    } else if (strcmp(key, "nics-per-node") == 0) {
        return cs_scenario_parse_count(v, 1, CS_MAX_NICS_PER_NODE, CS_NICS_EXPECTED, &spec->nics_per_node, err);
    } else if (strcmp(key, "fabric") == 0) {
        if (g_ascii_strcasecmp(v, "rail") == 0)
            replace_str(&spec->fabric, g_strdup("rail"));
        else if (g_ascii_strcasecmp(v, "fat-tree") == 0 || g_ascii_strcasecmp(v, "fattree") == 0)
            replace_str(&spec->fabric, g_strdup("fat-tree"));
        else {
            set_input_error(err, "unknown fabric '%s'; expected rail or fat-tree", v);
            return FALSE;
        }
    } else if (strcmp(key, "oversubscription") == 0) {
        return parse_ratio(v, &spec->oversubscription, err);
    } else if (strcmp(key, "nvlink-bridge") == 0) {
        if (g_ascii_strcasecmp(v, "none") == 0)
            spec->nvlink_bridge = CS_BRIDGE_NONE;
        else if (g_ascii_strcasecmp(v, "pairs") == 0)
            spec->nvlink_bridge = CS_BRIDGE_PAIRS;
        else {
            set_input_error(err, "unknown NVLink bridge layout '%s'; expected none or pairs", v);
            return FALSE;
        }
    } else if (strcmp(key, "visible-gpus") == 0) {
        if (!cs_scenario_index_list(v, G_MAXINT, "GPU", NULL, err))
            return FALSE;
        /* each GPU once, as a node's GPUs are numbered from 0 again */
        if (g_ascii_strcasecmp(v, "all") != 0) {
            g_autoptr(GHashTable) seen = g_hash_table_new(g_direct_hash, g_direct_equal);
            g_auto(GStrv) parts = g_strsplit(v, ",", -1);
            for (int i = 0; parts[i] != NULL; i++) {
                gint64 lo = g_ascii_strtoll(parts[i], NULL, 10), hi = lo;
                const char *dash = strchr(parts[i], '-');
                if (dash != NULL)
                    hi = g_ascii_strtoll(dash + 1, NULL, 10);
                for (gint64 k = lo; k <= hi && k - lo < 65536; k++) {
                    if (g_hash_table_contains(seen, GINT_TO_POINTER((int)k + 1))) {
                        set_input_error(err, "GPU %" G_GINT64_FORMAT " is listed twice in '%s'; expected each GPU "
                                        "once", k, v);
                        return FALSE;
                    }
                    g_hash_table_add(seen, GINT_TO_POINTER((int)k + 1));
                }
            }
        }
        replace_str(&spec->visible_gpus, g_strdup(v));
    } else {
        g_assert_not_reached();
    }
    return TRUE;
}

gboolean cs_topo_spec_set_topo(cs_topo_spec_t *spec, const char *v, GError **err)
{
    if (v == NULL || *v == '\0') {
        set_input_error(err, "empty value; expected a preset name or a topology file");
        return FALSE;
    }
    /* A preset name wins over a file of the same name in the working
     * directory; "./dgx-h100" names the file. */
    if (cs_preset_exists(v)) {
        replace_str(&spec->preset, g_strdup(v));
        g_clear_pointer(&spec->file, g_free);
    } else if (g_file_test(v, G_FILE_TEST_EXISTS) || strchr(v, '/') != NULL || strchr(v, '.') != NULL) {
        replace_str(&spec->file, g_strdup(v));
        g_clear_pointer(&spec->preset, g_free);
    } else {
        set_input_error(err, "unknown preset '%s' and no such file; expected one of %s, or a topology file",
                        v, cs_preset_names());
        return FALSE;
    }
    g_clear_pointer(&spec->origin, g_free);
    g_clear_pointer(&spec->key_origins[key_index("file")], g_free);
    g_clear_pointer(&spec->key_origins[key_index("preset")], g_free);
    return TRUE;
}

/* ---- command-line group -------------------------------------------------- */

static gboolean on_topo_flag(const char *option_name, const char *value, gpointer data, GError **err)
{
    cs_topo_spec_t *spec = data;
    const cs_scenario_key_t *k = cs_scenario_key_by_flag(option_name);
    g_autoptr(GError) e = NULL;
    gboolean ok;
    if (k == NULL || strcmp(k->group, "topology") != 0)
        g_assert_not_reached();
    if (strcmp(k->long_flag, "topo") == 0)
        ok = cs_topo_spec_set_topo(spec, value, &e);
    else
        ok = cs_topo_spec_set(spec, k->key, value, NULL, &e);
    /* kept until every flag is parsed (on_topo_parsed): the other groups'
     * flags, --model first, are checked as they come */
    if (!ok && spec->flag_error == NULL) {
        g_set_error(&spec->flag_error, CS_ERROR, CS_ERROR_INPUT, "collsim: %s: %s", option_name, e->message);
        cs_scenario_error_one_line(spec->flag_error);
    }
    return TRUE;
}

static gboolean on_topo_parsed(GOptionContext *ctx, GOptionGroup *group, gpointer data, GError **err)
{
    cs_topo_spec_t *spec = data;
    if (spec->flag_error != NULL) {
        g_propagate_error(err, g_steal_pointer(&spec->flag_error));
        return FALSE;
    }
    return TRUE;
}

GOptionGroup *cs_topo_spec_option_group(cs_topo_spec_t *spec)
{
    GOptionGroup *g = g_option_group_new("topology", "Topology options (also [topology] in a scenario):",
                                         "Show the topology options", spec, NULL);
    g_option_group_set_parse_hooks(g, NULL, on_topo_parsed);
    GArray *entries = g_array_new(TRUE, TRUE, sizeof(GOptionEntry));
    for (const cs_scenario_key_t *k = cs_topo_spec_keys; k->key != NULL; k++) {
        if (strcmp(k->key, "preset") == 0)
            continue;     /* shares --topo with "file" */
        GOptionEntry e = { k->long_flag, k->short_flag, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_topo_flag,
                           k->doc, k->arg };
        g_array_append_val(entries, e);
        if (k->alias != NULL) {
            GOptionEntry a = { k->alias, 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_CALLBACK, (gpointer)on_topo_flag,
                               k->doc, k->arg };
            g_array_append_val(entries, a);
        }
    }
    /* GLib copies the entries (their strings are static). */
    g_option_group_add_entries(g, (const GOptionEntry *)(void *)entries->data);
    g_array_free(entries, TRUE);
    return g;
}

/* A value 'flags' overrides takes its origin along (NULL for a flag). */
static void merge_origin(cs_topo_spec_t *spec, const cs_topo_spec_t *flags, const char *key)
{
    int i = key_index(key);
    replace_str(&spec->key_origins[i], g_strdup(flags->key_origins[i]));
}

void cs_topo_spec_merge(cs_topo_spec_t *spec, const cs_topo_spec_t *flags)
{
    if (flags->file != NULL || flags->preset != NULL) {
        replace_str(&spec->file, g_strdup(flags->file));
        replace_str(&spec->preset, g_strdup(flags->preset));
        replace_str(&spec->origin, g_strdup(flags->origin));
        merge_origin(spec, flags, "file");
        merge_origin(spec, flags, "preset");
    }
    if (flags->gpu != NULL) {
        replace_str(&spec->gpu, g_strdup(flags->gpu));
        merge_origin(spec, flags, "gpu");
    }
    if (flags->gpus > 0) {
        spec->gpus = flags->gpus;
        merge_origin(spec, flags, "gpus");
    }
    if (flags->sockets > 0) {
        spec->sockets = flags->sockets;
        merge_origin(spec, flags, "sockets");
    }
    if (flags->cpu != NULL) {
        replace_str(&spec->cpu, g_strdup(flags->cpu));
        merge_origin(spec, flags, "cpu");
    }
    if (flags->p2p != -1) {
        spec->p2p = flags->p2p;
        merge_origin(spec, flags, "p2p");
    }
    if (flags->nodes > 0) {
        spec->nodes = flags->nodes;
        merge_origin(spec, flags, "nodes");
    }
    if (flags->nic != NULL) {
        replace_str(&spec->nic, g_strdup(flags->nic));
        merge_origin(spec, flags, "nic");
    }
    if (flags->nics_per_node > 0) {
        spec->nics_per_node = flags->nics_per_node;
        merge_origin(spec, flags, "nics-per-node");
    }
    if (flags->fabric != NULL) {
        replace_str(&spec->fabric, g_strdup(flags->fabric));
        merge_origin(spec, flags, "fabric");
    }
    if (flags->oversubscription > 0) {
        spec->oversubscription = flags->oversubscription;
        merge_origin(spec, flags, "oversubscription");
    }
    if (flags->nvlink_bridge != CS_BRIDGE_UNSET) {
        spec->nvlink_bridge = flags->nvlink_bridge;
        merge_origin(spec, flags, "nvlink-bridge");
    }
    if (flags->visible_gpus != NULL) {
        replace_str(&spec->visible_gpus, g_strdup(flags->visible_gpus));
        merge_origin(spec, flags, "visible-gpus");
    }
}

/* ---- build ----------------------------------------------------------------- */

/* An oversubscription above 1 means the leaves' uplinks are narrower than
 * their downlinks; a fabric with no switch above its leaves (one node, one
 * leaf, or rails of one leaf each, whose traffic between rails stays in the
 * nodes) has no uplink to narrow, so the setting would change nothing. */
static gboolean check_oversubscription(const cs_topo_spec_t *spec, const cs_topo_t *t, GError **err)
{
    if (!(spec->oversubscription > 1))
        return TRUE;
    gboolean any_switch = FALSE;
    for (int d = 0; d < t->ndevs; d++)
        if (t->devs[d].kind == CS_DEV_SWITCH) {
            any_switch = TRUE;
            if (t->devs[d].tier >= 1)
                return TRUE;
        }
    int from = t->fabric.nodes_per_leaf + 1;
    /* "s.ini:5: oversubscription: 2 does not apply" from a scenario,
     * "collsim: --oversubscription: 2 does not apply" from the flag */
    const char *o = file_origin(spec, "oversubscription");
    g_autofree char *head = o != NULL ? g_strdup_printf("%s: %g", o, spec->oversubscription)
                                      : g_strdup_printf("collsim: --oversubscription: %g", spec->oversubscription);
    if (!any_switch)
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                    "%s does not apply: %d node(s) without a network fabric; "
                    "expected it with --nodes above 1 and a fabric with a spine, or none", head, t->nnodes);
    else if (t->fabric.kind == CS_FABRIC_RAIL)
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                    "%s does not apply: the rail fabric of %d nodes is one leaf per rail, "
                    "with no spine (traffic between rails stays inside the nodes); expected it from %d nodes up, "
                    "or --fabric fat-tree, or none", head, t->nnodes, from);
    else
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                    "%s does not apply: the fat-tree of %d nodes is one leaf switch, "
                    "with no uplinks; expected it from %d nodes up, or none", head, t->nnodes, from);
    return FALSE;
}

/* Whether --gpus is a builder's parameter (the pcie presets: the number
 * of GPUs in the server) rather than nccl-tests' -g over a fixed machine. */
static gboolean builder_gpus(const cs_topo_spec_t *spec)
{
    return spec->preset != NULL && cs_preset_takes_node_options(spec->preset);
}

/* The GPUs a process sees with CUDA_VISIBLE_DEVICES=LIST on every node:
 * the others are left out with their links, the rest keep the node's
 * order and are numbered from 0 again (cs_topo_select), and the switches,
 * CPUs and NICs stay, so the kept GPUs' paths are the machine's. */
static cs_topo_t *select_visible(const cs_topo_spec_t *spec, const cs_topo_t *t, GError **err)
{
    int fewest = G_MAXINT;
    for (int n = 0; n < t->nnodes; n++)
        fewest = MIN(fewest, cs_topo_node_gpus(t, n));
    g_autofree gboolean *mask = g_new0(gboolean, MAX(1, fewest));
    GError *e = NULL;
    /* a fixed machine's --gpus N takes the first N GPUs of the list, in
     * its order, as a process with CUDA_VISIBLE_DEVICES=LIST running
     * nccl-tests -g N does (a builder's --gpus made the machine instead) */
    int first = spec->gpus > 0 && !builder_gpus(spec) ? spec->gpus : 0;
    if (!cs_scenario_index_list_first(spec->visible_gpus, fewest, "GPU", first, mask, &e)) {
        set_key_error(err, spec, "visible-gpus", "%s (the GPUs of each node of %s)", e->message,
                      spec->preset != NULL ? spec->preset : spec->file);
        g_error_free(e);
        return NULL;
    }
    /* the mask covers the smallest node's GPUs; a larger node's GPUs
     * beyond them are never named */
    g_autofree gboolean *keep = g_new0(gboolean, MAX(1, t->ngpus));
    for (int r = 0; r < t->ngpus; r++) {
        int local = cs_topo_rank_dev(t, r)->local;
        keep[r] = local < fewest && mask[local];
    }
    int *rank_map = NULL, *link_map = NULL;
    cs_topo_t *v = cs_topo_select(t, keep, &rank_map, &link_map, err);
    g_free(rank_map);
    g_free(link_map);
    if (v == NULL)
        return NULL;
    g_autofree char *desc = g_strdup_printf("%s, GPUs %s of each node (visible-gpus)", t->description,
                                            spec->visible_gpus);
    g_free(v->description);
    v->description = g_steal_pointer(&desc);
    return v;
}

static void spec_to_opts(const cs_topo_spec_t *spec, cs_build_opts_t *o)
{
    cs_build_opts_init(o);
    if (spec->gpu != NULL)
        o->gpu = spec->gpu;
    /* a builder's --gpus (pcie) makes the machine the visible GPUs are
     * picked from; a fixed machine's --gpus counts among the visible ones,
     * so it is applied after them (build) */
    if (spec->gpus > 0 && (spec->visible_gpus == NULL || builder_gpus(spec)))
        o->gpus = spec->gpus;
    if (spec->sockets > 0)
        o->sockets = spec->sockets;
    if (spec->cpu != NULL)
        o->cpu = spec->cpu;
    if (spec->p2p != -1)
        o->p2p = spec->p2p;
    if (spec->nodes > 0)
        o->nodes = spec->nodes;
    if (spec->nic != NULL)
        o->nic = spec->nic;
    if (spec->nics_per_node > 0)
        o->nics_per_node = spec->nics_per_node;
    if (spec->fabric != NULL)
        o->fabric = spec->fabric;
    if (spec->oversubscription > 0)
        o->oversubscription = spec->oversubscription;
    o->nvlink_bridge = spec->nvlink_bridge;
}

static cs_topo_t *build(const cs_topo_spec_t *spec, GError **err)
{
    if (spec->file == NULL && spec->preset == NULL) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                    "collsim: no topology given; expected --topo PRESET|FILE or [topology] preset or file");
        return NULL;
    }
    cs_build_opts_t o;
    spec_to_opts(spec, &o);
    g_autoptr(cs_topo_t) t = NULL;
    if (spec->preset != NULL) {
        t = cs_preset_build(spec->preset, &o, err);
        if (t == NULL)
            return NULL;
    } else {
        if (spec->nvlink_bridge != CS_BRIDGE_UNSET) {
            /* a file names its own links: the setting would be ignored */
            set_key_error(err, spec, "nvlink-bridge", "applies to the pcie presets; expected no nvlink-bridge "
                          "with the topology file %s (its <link> elements give the bridges)", spec->file);
            return NULL;
        }
        t = cs_topo_xml_load(spec->file, err);
        if (t == NULL)
            return NULL;
        /* A file of several nodes is the cluster: --nodes may only
         * repeat its count (1 included, which would not shrink it) */
        if (spec->nodes > 0 && t->nnodes > 1 && spec->nodes != t->nnodes) {
            set_key_error(err, spec, "nodes", "%d, but %s describes %d nodes; expected nodes unset or %d "
                          "(only a one-node file is replicated)", spec->nodes, spec->file, t->nnodes, t->nnodes);
            return NULL;
        }
        if (spec->nodes > 1 && t->nnodes == 1) {
            cs_topo_t *c = cs_cluster_build(t, &o, err);
            if (c == NULL)
                return NULL;
            cs_topo_free(t);
            t = c;
        }
    }
    if (spec->visible_gpus != NULL) {
        cs_topo_t *v = select_visible(spec, t, err);
        if (v == NULL)
            return NULL;
        cs_topo_free(t);
        t = v;
    }
    if (spec->gpus > 0 && !(spec->visible_gpus != NULL && builder_gpus(spec))) {
        int fewest = G_MAXINT, most = 0;
        for (int n = 0; n < t->nnodes; n++) {
            int g = cs_topo_node_gpus(t, n);
            fewest = MIN(fewest, g);
            most = MAX(most, g);
        }
        if (spec->gpus > fewest) {
            set_key_error(err, spec, "gpus", "%d GPUs per node requested; expected at most %d, the GPUs of each node of %s%s",
                          spec->gpus, fewest, spec->preset != NULL ? spec->preset : spec->file,
                          spec->visible_gpus != NULL ? " that visible-gpus keeps" : "");
            return NULL;
        }
        if (most > spec->gpus) {
            cs_topo_t *r = cs_topo_restrict_gpus(t, spec->gpus, err);
            if (r == NULL)
                return NULL;
            cs_topo_free(t);
            t = r;
        }
    }
    if (!check_oversubscription(spec, t, err))
        return NULL;
    return g_steal_pointer(&t);
}

cs_topo_t *cs_topo_spec_build(const cs_topo_spec_t *spec, GError **err)
{
    GError *e = NULL;
    cs_topo_t *t = build(spec, &e);
    if (t == NULL) {
        relocate_error(spec, e);
        g_propagate_error(err, e);
    }
    return t;
}
