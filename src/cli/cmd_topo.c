/* collsim topo check|show|dot|xml|graph: validate a topology file, describe a
 * topology (devices, links, NCCL path types like `nvidia-smi topo -m`,
 * fabric), draw it with Graphviz, write it as collsim XML, or print the
 * rings and trees NCCL's graph search builds on it as NCCL logs them. Output is built in memory and written
 * at the end, so an error never leaves half a report behind. */
#include "config.h"
#include "cli/cs_commands.h"
#include "io/cs_scenario.h"
#include "io/cs_scenario-int.h"
#include "io/cs_topo_xml.h"
#include "io/cs_output.h"
#include "util/cs_read_file.h"
#include "models/cs_paths.h"
#include "models/cs_presets.h"
#include "models/cs_decide.h"
#include "models/cs_graph_log.h"
#include "util/cs_error.h"
#include "util/cs_units.h"

#include <stdio.h>
#include <string.h>

#define GBS(bytes_per_s) ((bytes_per_s) / 1e9)

static int usage_error(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    fprintf(stderr, "collsim: topo: %s\n", msg);
    return 2;
}

/* cs_cli_fail() prints but does not take the error. */
static int fail(GError *err)
{
    int rc = cs_cli_fail(err);
    g_clear_error(&err);
    return rc;
}

/* GLib's own option errors ("Unknown option --x") get our prefix; the
 * topology group's are already "collsim: --flag: ...". */
static int option_error(const char *sub, GError *err)
{
    if (err->domain == G_OPTION_ERROR) {
        fprintf(stderr, "collsim: topo %s: %s; expected the options of 'collsim topo %s --help'\n",
                sub, err->message, sub);
        g_error_free(err);
        return 2;
    }
    return fail(err);
}

/* Parses one subcommand's options; on success *rest_p holds the
 * positional arguments (NULL-terminated, argv[0] dropped). */
static gboolean parse_options(const char *sub, const char *summary, GOptionEntry *entries,
                              cs_topo_spec_t *spec, int argc, char **argv, char ***rest_p, int *rc_p)
{
    g_autofree char *param = g_strdup_printf("%s", spec != NULL ? "FILE|PRESET" : "FILE");
    g_autoptr(GOptionContext) ctx = g_option_context_new(param);
    g_autofree char *title = g_strdup_printf("collsim topo %s", sub);
    g_option_context_set_summary(ctx, summary);
    if (entries != NULL)
        g_option_context_add_main_entries(ctx, entries, NULL);
    if (spec != NULL)
        g_option_context_add_group(ctx, cs_topo_spec_option_group(spec));
    g_set_prgname(title);   /* "Usage: collsim topo show [OPTION...]" */
    g_auto(GStrv) args = g_new0(char *, argc + 2);
    args[0] = g_strdup(title);
    for (int i = 1; i < argc; i++)
        args[i] = g_strdup(argv[i]);
    GError *err = NULL;
    if (!g_option_context_parse_strv(ctx, &args, &err)) {
        *rc_p = option_error(sub, err);
        return FALSE;
    }
    int n = (int)g_strv_length(args);
    char **rest = g_new0(char *, MAX(n, 1));
    for (int i = 1; i < n; i++)
        rest[i - 1] = g_strdup(args[i]);
    *rest_p = rest;
    return TRUE;
}

/* The topology named by the one positional argument or by --topo. */
static cs_topo_t *obtain(const char *sub, cs_topo_spec_t *spec, char **rest, int *rc_p)
{
    if (rest[0] != NULL && rest[1] != NULL) {
        *rc_p = usage_error("%s: unexpected argument '%s'; expected one FILE or PRESET", sub, rest[1]);
        return NULL;
    }
    if (rest[0] != NULL) {
        g_autoptr(GError) e = NULL;
        if (!cs_topo_spec_set_topo(spec, rest[0], &e)) {
            *rc_p = usage_error("%s: %s", sub, e->message);
            return NULL;
        }
    }
    if (spec->file == NULL && spec->preset == NULL) {
        *rc_p = usage_error("%s: no topology given; expected a FILE or PRESET (%s)", sub, cs_preset_names());
        return NULL;
    }
    GError *err = NULL;
    cs_topo_t *t = cs_topo_spec_build(spec, &err);
    if (t == NULL)
        *rc_p = fail(err);
    return t;
}

/* Drops the blanks that padded columns leave at the ends of lines. */
static void trim_lines(GString *out)
{
    gsize w = 0;
    for (gsize r = 0; r < out->len; r++) {
        if (out->str[r] == '\n')
            while (w > 0 && out->str[w - 1] == ' ')
                w--;
        out->str[w++] = out->str[r];
    }
    g_string_truncate(out, w);
}

/* stdout, or -o FILE through cs_output (a regular file replaced
 * atomically with its mode kept, a device or FIFO written in place). A
 * path that cannot be an output is bad input (2), a failed write 3. */
static gboolean write_output(const char *path, GString *out, int *rc_p)
{
    trim_lines(out);
    GError *err = NULL;
    gboolean ok;
    if (path == NULL || strcmp(path, "-") == 0)
        ok = cs_output_stdout(out->str, out->len, &err);
    else
        ok = cs_output_check(1, &path, (const char *const[]){ "--output" }, &err) &&
             cs_output_write_one(path, out->str, (gssize)out->len, &err);
    if (!ok)
        *rc_p = fail(err);
    return ok;
}

/* ---- check ------------------------------------------------------------- */

static int topo_check(int argc, char **argv)
{
    int rc = 0;
    g_auto(GStrv) rest = NULL;
    if (!parse_options("check", "Reads a topology file (collsim XML or an NCCL topology dump),\n"
                       "validates it and prints a one-line summary.", NULL, NULL, argc, argv, &rest, &rc))
        return rc;
    if (rest[0] == NULL)
        return usage_error("check: no file given; expected 'collsim topo check FILE' (or a PRESET)");
    if (rest[1] != NULL)
        return usage_error("check: unexpected argument '%s'; expected one FILE", rest[1]);
    GError *err = NULL;
    g_autoptr(cs_topo_t) t = NULL;
    if (cs_preset_exists(rest[0])) {
        /* a name that is both a preset and a file means the preset, as
         * everywhere (collsim(1)); ./NAME for the file */
        cs_topo_spec_t spec;
        cs_topo_spec_init(&spec);
        t = obtain("check", &spec, rest, &rc);
        cs_topo_spec_clear(&spec);
        if (t == NULL)
            return rc;
    } else if ((t = cs_topo_xml_load(rest[0], &err)) == NULL) {
        return fail(err);
    }
    /* The summary: counts, each with its noun in the number it takes. */
    printf("%s%s: ok: %d node%s, %d GPU%s, %d link%s\n", cs_preset_exists(rest[0]) ? "preset:" : "", rest[0],
           t->nnodes, t->nnodes == 1 ? "" : "s", t->ngpus,
           t->ngpus == 1 ? "" : "s", t->nlinks / 2, t->nlinks / 2 == 1 ? "" : "s");
    return 0;
}

/* ---- show -------------------------------------------------------------- */

static void describe_device(GString *o, const cs_device_t *d)
{
    g_string_append_printf(o, "  %-16s %-8s", d->name, cs_dev_kind_name(d->kind));
    switch (d->kind) {
    case CS_DEV_GPU:
        g_string_append_printf(o, " %s (%s), sm %d, rank %d, GPUDirect RDMA %s, PCIe P2P %s",
                               d->gpu->name, d->gpu->marketing, d->gpu->sm, d->rank,
                               d->gdr ? "yes" : "no", cs_device_p2p(d) ? "yes" : "no");
        if (d->pci_busid != 0) {
            char bus[24];
            cs_topo_busid_format(d->pci_busid, bus);
            g_string_append_printf(o, ", bus %s", bus);
        }
        break;
    case CS_DEV_CPU:
        g_string_append_printf(o, " %s, socket %d", cs_cpu_vendor_name(d->vendor), d->socket);
        if (d->familyid > 0 || d->modelid > 0)
            g_string_append_printf(o, ", CPUID family %d model 0x%x", d->familyid, d->modelid);
        break;
    case CS_DEV_NIC: {
        g_autofree char *bw = cs_format_bandwidth(d->nic_bw);
        g_string_append_printf(o, " %s %s x%d port%s, GPUDirect RDMA %s%s%s", cs_nic_kind_name(d->nic_kind),
                               bw, MAX(d->nic_ports, 1), d->nic_ports > 1 ? "s" : "",
                               d->gdr ? "yes" : "no", d->ifname ? ", " : "", d->ifname ? d->ifname : "");
        break;
    }
    case CS_DEV_SWITCH:
        g_string_append_printf(o, " tier %d (%s)", d->tier, d->tier == 0 ? "leaf" : d->tier == 1 ? "spine" : "core");
        break;
    case CS_DEV_NVSWITCH:
    case CS_DEV_PCISW:
    case CS_DEV_KIND_COUNT:
        break;
    }
    g_string_append_c(o, '\n');
}

static void describe_link(GString *o, const cs_topo_t *t, const cs_link_t *l)
{
    g_autofree char *kind = l->kind == CS_LINK_NVL || l->kind == CS_LINK_C2C || l->count > 1
                            ? g_strdup_printf("%s x%d", cs_link_kind_name(l->kind), l->count)
                            : l->kind == CS_LINK_PCI && l->pcie_gen > 0
                            ? g_strdup_printf("pcie gen%d x%d", l->pcie_gen, l->pcie_width)
                            : g_strdup(cs_link_kind_name(l->kind));
    g_autofree char *lat = cs_format_time(l->lat);
    g_string_append_printf(o, "  %-16s %-16s %-15s %8.1f GB/s  (NCCL %7.1f)  lat %s\n",
                           t->devs[l->src].name, t->devs[l->dst].name, kind, GBS(l->bw), l->nccl_bw, lat);
}

static void show_matrix_gpu(GString *o, const cs_topo_t *t, int node)
{
    int first = t->node_first_rank[node], n = cs_topo_node_gpus(t, node);
    g_string_append_printf(o, "\nGPU to GPU, node %d: NCCL path type and bottleneck bandwidth per direction "
                           "(GB/s; physical / NCCL's link figures, paths.cc rules)\n%-8s", node, "");
    for (int j = 0; j < n; j++)
        g_string_append_printf(o, " %-16s", cs_topo_rank_dev(t, first + j)->name);
    g_string_append_c(o, '\n');
    for (int i = 0; i < n; i++) {
        g_string_append_printf(o, "%-8s", cs_topo_rank_dev(t, first + i)->name);
        for (int j = 0; j < n; j++) {
            cs_path_t p;
            char cell[64];
            if (i == j)
                g_snprintf(cell, sizeof cell, "X");
            else if (!cs_path_intra(t, t->rank_dev[first + i], t->rank_dev[first + j], FALSE, &p))
                g_snprintf(cell, sizeof cell, "DIS");
            else
                g_snprintf(cell, sizeof cell, "%s %.1f/%.1f", cs_path_type_name(p.type), GBS(p.bw), p.nccl_bw);
            g_string_append_printf(o, " %-16s", cell);
        }
        g_string_append_c(o, '\n');
    }
}

static void show_matrix_nic(GString *o, const cs_topo_t *t, int node)
{
    int nnic = cs_topo_node_nics(t, node, NULL, 0);
    if (nnic == 0) {
        g_string_append_printf(o, "\nGPU to NIC, node %d: no NICs\n", node);
        return;
    }
    g_autofree int *nics = g_new(int, nnic);
    nnic = cs_topo_node_nics(t, node, nics, nnic);
    int first = t->node_first_rank[node], n = cs_topo_node_gpus(t, node);
    g_string_append_printf(o, "\nGPU to NIC, node %d: NCCL path type and bottleneck bandwidth (GB/s, physical / NCCL)\n%-8s",
                           node, "");
    for (int j = 0; j < nnic; j++)
        g_string_append_printf(o, " %-16s", t->devs[nics[j]].name);
    g_string_append_c(o, '\n');
    for (int i = 0; i < n; i++) {
        g_string_append_printf(o, "%-8s", cs_topo_rank_dev(t, first + i)->name);
        for (int j = 0; j < nnic; j++) {
            cs_path_t p;
            char cell[64];
            if (!cs_path_intra(t, t->rank_dev[first + i], nics[j], FALSE, &p))
                g_snprintf(cell, sizeof cell, "DIS");
            else
                g_snprintf(cell, sizeof cell, "%s %.1f/%.1f", cs_path_type_name(p.type), GBS(p.bw), p.nccl_bw);
            g_string_append_printf(o, " %-16s", cell);
        }
        g_string_append_c(o, '\n');
    }
}

static const char *fabric_kind_str(cs_fabric_kind_t k)
{
    switch (k) {
    case CS_FABRIC_RAIL: return "rail";
    case CS_FABRIC_FAT_TREE: return "fat-tree";
    case CS_FABRIC_CUSTOM: return "custom";
    case CS_FABRIC_NONE: break;
    }
    return "none";
}

static char *bw_range(double lo, double hi)
{
    return lo == hi ? g_strdup_printf("%.1f", GBS(lo)) : g_strdup_printf("%.1f to %.1f", GBS(lo), GBS(hi));
}

static void show_fabric(GString *o, const cs_topo_t *t)
{
    int tiers[3] = { 0 }, nic_cables = 0, sw_cables = 0, other = 0;
    double nic_min = 0, nic_max = 0, sw_min = 0, sw_max = 0;
    for (int i = 0; i < t->ndevs; i++)
        if (t->devs[i].kind == CS_DEV_SWITCH)
            tiers[CLAMP(t->devs[i].tier, 0, 2)]++;
    for (int i = 0; i < t->nlinks; i++) {
        const cs_link_t *l = &t->links[i];
        if (l->reverse < i || l->kind != CS_LINK_NET)
            continue;
        gboolean sa = t->devs[l->src].kind == CS_DEV_SWITCH, sb = t->devs[l->dst].kind == CS_DEV_SWITCH;
        if (sa && sb) {
            sw_min = sw_cables++ ? MIN(sw_min, l->bw) : l->bw;
            sw_max = MAX(sw_max, l->bw);
        } else if (sa || sb) {
            nic_min = nic_cables++ ? MIN(nic_min, l->bw) : l->bw;
            nic_max = MAX(nic_max, l->bw);
        } else {
            other++;
        }
    }
    g_string_append_printf(o, "\nfabric: %s", fabric_kind_str(t->fabric.kind));
    if (tiers[0] + tiers[1] + tiers[2] + nic_cables + other == 0) {
        g_string_append_printf(o, " (%s)\n", t->nnodes > 1 ? "no switches or cables between the nodes"
                                          : "one node: no switches or cables between nodes");
        return;
    }
    g_autofree char *slat = cs_format_time(t->fabric.switch_lat);
    g_string_append_printf(o, ", %d leaf, %d spine, %d core switches; oversubscription %g:1; "
                           "%d node%s per leaf; switch latency %s\n", tiers[0], tiers[1], tiers[2],
                           t->fabric.oversubscription, t->fabric.nodes_per_leaf,
                           t->fabric.nodes_per_leaf == 1 ? "" : "s", slat);
    if (nic_cables > 0) {
        g_autofree char *r = bw_range(nic_min, nic_max);
        g_string_append_printf(o, "  NIC-switch cables: %d, %s GB/s each\n", nic_cables, r);
    }
    if (sw_cables > 0) {
        g_autofree char *r = bw_range(sw_min, sw_max);
        g_string_append_printf(o, "  switch-switch links: %d, %s GB/s each\n", sw_cables, r);
    }
    if (other > 0)
        g_string_append_printf(o, "  NIC-NIC cables: %d\n", other);
}

/* One route between the first NICs of nodes 0 and 1, as an example of
 * what crosses nodes (path type NET). */
static void show_across(GString *o, const cs_topo_t *t)
{
    if (t->nnodes < 2)
        return;
    int a = -1, b = -1;
    cs_topo_node_nics(t, 0, &a, 1);
    cs_topo_node_nics(t, 1, &b, 1);
    g_string_append(o, "\nGPU to GPU across nodes: NET (through a NIC of each node and the fabric)\n");
    cs_path_t p;
    if (a < 0 || b < 0 || !cs_path_net(t, a, b, 0, &p)) {
        g_string_append_printf(o, "  no route between %s and %s\n", a >= 0 ? t->devs[a].name : "node 0",
                               b >= 0 ? t->devs[b].name : "node 1");
        return;
    }
    int switches = 0;
    for (int h = 0; h + 1 < p.nhops; h++)
        switches += t->devs[t->links[p.links[h]].dst].kind == CS_DEV_SWITCH;
    g_autofree char *lat = cs_format_time(p.lat + switches * t->fabric.switch_lat);
    g_string_append_printf(o, "  %s -> %s: %d cable%s, %d switch%s, bottleneck %.1f GB/s (NCCL %.1f), "
                           "latency %s (cables and switches)\n", t->devs[a].name,
                           t->devs[b].name, p.nhops, p.nhops == 1 ? "" : "s", switches,
                           switches == 1 ? "" : "es", GBS(p.bw), p.nccl_bw, lat);
}

static int topo_show(int argc, char **argv)
{
    int rc = 0;
    gboolean all = FALSE;
    GOptionEntry entries[] = {
        { "all", 'a', 0, G_OPTION_ARG_NONE, &all, "List the devices and links of every node, not only node 0", NULL },
        { NULL, 0, 0, 0, NULL, NULL, NULL }
    };
    cs_topo_spec_t spec;
    cs_topo_spec_init(&spec);
    g_auto(GStrv) rest = NULL;
    if (!parse_options("show", "Describes a topology: its GPUs, links, the NCCL path type and\n"
                       "bottleneck between GPUs and from GPUs to NICs, and the fabric.",
                       entries, &spec, argc, argv, &rest, &rc)) {
        cs_topo_spec_clear(&spec);
        return rc;
    }
    g_autoptr(cs_topo_t) t = obtain("show", &spec, rest, &rc);
    cs_topo_spec_clear(&spec);
    if (t == NULL)
        return rc;

    g_autoptr(GString) o = g_string_new(NULL);
    int nnic = 0, nsw = 0;
    for (int i = 0; i < t->ndevs; i++) {
        nnic += t->devs[i].kind == CS_DEV_NIC;
        nsw += t->devs[i].kind == CS_DEV_SWITCH;
    }
    g_string_append_printf(o, "topology: %s\n", t->source ? t->source : "?");
    if (t->description != NULL)
        g_string_append_printf(o, "description: %s\n", t->description);
    g_string_append_printf(o, "%d node%s, %d GPUs, %d NICs, %d fabric switches, %d devices, %d links\n",
                           t->nnodes, t->nnodes == 1 ? "" : "s", t->ngpus, nnic, nsw, t->ndevs, t->nlinks / 2);
    g_string_append(o, "bandwidths are per direction: physical from the parts catalogue or the file, "
                    "and NCCL's figure for the same link (topo.cc rules)\n");
    g_string_append(o, "latencies are the wire/switch latency a file gives a link (presets: 0); the cost "
                    "of a protocol step over a link is a model parameter (lat.hop.*, docs/model-analytic.md)"
                    "\n");

    int last = all ? t->nnodes - 1 : 0;
    for (int n = 0; n <= last; n++) {
        g_string_append_printf(o, "\nnode %d devices:\n", n);
        for (int i = 0; i < t->ndevs; i++)
            if (t->devs[i].node == n)
                describe_device(o, &t->devs[i]);
        g_string_append_printf(o, "node %d links:\n", n);
        for (int i = 0; i < t->nlinks; i++) {
            const cs_link_t *l = &t->links[i];
            if (l->reverse > i && t->devs[l->src].node == n && t->devs[l->dst].node == n)
                describe_link(o, t, l);
        }
    }
    if (!all && t->nnodes > 1)
        g_string_append_printf(o, "(nodes 1 to %d: see --all)\n", t->nnodes - 1);
    if (all && nsw + nnic > 0) {
        g_string_append(o, "\nfabric devices and cables:\n");
        for (int i = 0; i < t->ndevs; i++)
            if (t->devs[i].node < 0)
                describe_device(o, &t->devs[i]);
        for (int i = 0; i < t->nlinks; i++) {
            const cs_link_t *l = &t->links[i];
            if (l->reverse > i && (t->devs[l->src].node < 0 || t->devs[l->dst].node < 0 ||
                                   t->devs[l->src].node != t->devs[l->dst].node))
                describe_link(o, t, l);
        }
    }
    show_matrix_gpu(o, t, 0);
    show_matrix_nic(o, t, 0);
    show_across(o, t);
    show_fabric(o, t);
    return write_output(NULL, o, &rc) ? 0 : (rc ? rc : 1);
}

/* ---- dot --------------------------------------------------------------- */

static char *dot_escape(const char *s)
{
    GString *o = g_string_new(NULL);
    for (; s != NULL && *s != '\0'; s++) {
        if (*s == '"' || *s == '\\')
            g_string_append_c(o, '\\');
        g_string_append_c(o, *s);
    }
    return g_string_free(o, FALSE);
}

static void dot_device(GString *o, const cs_device_t *d, const char *indent)
{
    static const char *const shape[] = { "box", "octagon", "diamond", "component", "cds", "hexagon" };
    static const char *const color[] = { "#b3de69", "#80b1d3", "#d9d9d9", "#fdb462", "#fb8072", "#bebada" };
    g_autofree char *name = dot_escape(d->name);
    g_autofree char *extra = d->kind == CS_DEV_GPU ? g_strdup_printf("\\n%s", d->gpu->name)
                             : d->kind == CS_DEV_NIC ? g_strdup_printf("\\n%s %.0fG", cs_nic_kind_name(d->nic_kind),
                                                                      d->nic_bw * 8 / 1e9)
                             : d->kind == CS_DEV_CPU ? g_strdup_printf("\\n%s", cs_cpu_vendor_name(d->vendor))
                             : g_strdup("");
    int k = CLAMP((int)d->kind, 0, 5);
    g_string_append_printf(o, "%s\"%s\" [label=\"%s%s\", shape=%s, style=filled, fillcolor=\"%s\"];\n",
                           indent, name, name, extra, shape[k], color[k]);
}

static void dot_link(GString *o, const cs_topo_t *t, const cs_link_t *l, const char *indent)
{
    const char *color = l->kind == CS_LINK_NVL ? "#4d9221" : l->kind == CS_LINK_PCI ? "#2166ac" :
                        l->kind == CS_LINK_SYS ? "#636363" : l->kind == CS_LINK_C2C ? "#762a83" : "#d95f02";
    g_autofree char *a = dot_escape(t->devs[l->src].name);
    g_autofree char *b = dot_escape(t->devs[l->dst].name);
    g_autofree char *count = l->count > 1 ? g_strdup_printf(" x%d", l->count) : g_strdup("");
    g_string_append_printf(o, "%s\"%s\" -- \"%s\" [label=\"%s%s %.1f GB/s\", color=\"%s\"];\n", indent, a, b,
                           cs_link_kind_name(l->kind), count, GBS(l->bw), color);
}

static int topo_dot(int argc, char **argv)
{
    int rc = 0;
    char *output = NULL;
    GOptionEntry entries[] = {
        { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "Write the graph to FILE (default: standard output)", "FILE" },
        { NULL, 0, 0, 0, NULL, NULL, NULL }
    };
    cs_topo_spec_t spec;
    cs_topo_spec_init(&spec);
    g_auto(GStrv) rest = NULL;
    if (!parse_options("dot", "Writes the topology as a Graphviz graph (one cluster per node,\n"
                       "edges labelled with their per-direction bandwidth), e.g.\n"
                       "  collsim topo dot dgx-h100 | dot -Tsvg > dgx-h100.svg",
                       entries, &spec, argc, argv, &rest, &rc)) {
        cs_topo_spec_clear(&spec);
        g_free(output);
        return rc;
    }
    g_autofree char *out_path = output;
    g_autoptr(cs_topo_t) t = obtain("dot", &spec, rest, &rc);
    cs_topo_spec_clear(&spec);
    if (t == NULL)
        return rc;

    g_autoptr(GString) o = g_string_new(NULL);
    g_autofree char *src = dot_escape(t->source ? t->source : "");
    g_autofree char *desc = dot_escape(t->description ? t->description : t->source ? t->source : "");
    g_string_append_printf(o, "// collsim topo dot: %s\n", src);
    g_string_append_printf(o, "graph \"collsim\" {\n  graph [label=\"%s\\n(bandwidth per direction, physical)\", "
                           "labelloc=t, fontname=\"Helvetica\", compound=true];\n"
                           "  node [fontname=\"Helvetica\", fontsize=10];\n"
                           "  edge [fontname=\"Helvetica\", fontsize=8];\n", desc);
    for (int n = 0; n < t->nnodes; n++) {
        g_string_append_printf(o, "  subgraph \"cluster_node%d\" {\n    label=\"node %d\";\n", n, n);
        for (int i = 0; i < t->ndevs; i++)
            if (t->devs[i].node == n)
                dot_device(o, &t->devs[i], "    ");
        for (int i = 0; i < t->nlinks; i++) {
            const cs_link_t *l = &t->links[i];
            if (l->reverse > i && t->devs[l->src].node == n && t->devs[l->dst].node == n)
                dot_link(o, t, l, "    ");
        }
        g_string_append(o, "  }\n");
    }
    for (int i = 0; i < t->ndevs; i++)
        if (t->devs[i].node < 0)
            dot_device(o, &t->devs[i], "  ");
    for (int i = 0; i < t->nlinks; i++) {
        const cs_link_t *l = &t->links[i];
        int na = t->devs[l->src].node, nb = t->devs[l->dst].node;
        if (l->reverse > i && (na < 0 || nb < 0 || na != nb))
            dot_link(o, t, l, "  ");
    }
    g_string_append(o, "}\n");
    return write_output(out_path, o, &rc) ? 0 : (rc ? rc : 1);
}

/* ---- xml --------------------------------------------------------------- */

static int topo_xml(int argc, char **argv)
{
    int rc = 0;
    char *output = NULL;
    GOptionEntry entries[] = {
        { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "Write to FILE (default: standard output)", "FILE" },
        { NULL, 0, 0, 0, NULL, NULL, NULL }
    };
    cs_topo_spec_t spec;
    cs_topo_spec_init(&spec);
    g_auto(GStrv) rest = NULL;
    if (!parse_options("xml", "Writes the topology (a preset, an NCCL topology dump, a file with\n"
                       "builder options) as a collsim-topology(5) file with every value explicit.",
                       entries, &spec, argc, argv, &rest, &rc)) {
        cs_topo_spec_clear(&spec);
        g_free(output);
        return rc;
    }
    g_autofree char *out_path = output;
    g_autoptr(cs_topo_t) t = obtain("xml", &spec, rest, &rc);
    cs_topo_spec_clear(&spec);
    if (t == NULL)
        return rc;
    /* what topo xml writes must load again: refuse a file past the
     * topology reading limit (cs_read_file.h) instead of writing one, and
     * find that out without holding the text (a cluster of the largest
     * size --nodes allows is GiBs of it) */
    gsize len = cs_topo_xml_length(t);
    if (len > CS_READ_LIMIT_TOPOLOGY) {
        GError *err = NULL;
        g_set_error(&err, CS_ERROR, CS_ERROR_INPUT,
                    "collsim: topo xml: this topology is %" G_GSIZE_FORMAT " MiB of XML, larger than the %"
                    G_GSIZE_FORMAT " MiB a topology file may have; expected fewer nodes (describe one node in a "
                    "file and give --nodes to run)", len >> 20, CS_READ_LIMIT_TOPOLOGY >> 20);
        return fail(err);
    }
    g_autofree char *xml = cs_topo_xml_write(t);
    g_autoptr(GString) o = g_string_new_len(xml, len);
    return write_output(out_path, o, &rc) ? 0 : (rc ? rc : 1);
}

/* ---- graph ------------------------------------------------------------- */

/* --env NCCL_X=VALUE, checked as collsim run checks it. */
static gboolean graph_env(char **envs, cs_nccl_env_t *env, int *rc_p)
{
    cs_nccl_env_import_environ(env);
    for (int i = 0; envs != NULL && envs[i] != NULL; i++) {
        const char *eq = strchr(envs[i], '=');
        if (eq == NULL || eq == envs[i] || strncmp(envs[i], "NCCL_", 5) != 0) {
            *rc_p = usage_error("graph: --env: '%s': expected NCCL_NAME=VALUE", envs[i]);
            return FALSE;
        }
        g_autofree char *name = g_strndup(envs[i], eq - envs[i]);
        cs_nccl_env_set(env, name, eq + 1, "--env");
    }
    return TRUE;
}

static int topo_graph(int argc, char **argv)
{
    int rc = 0, rank = G_MININT;   /* G_MININT: not given (every rank) */
    char *output = NULL, *dump = NULL;
    char **envs = NULL;
    GOptionEntry entries[] = {
        { "rank", 'r', 0, G_OPTION_ARG_INT, &rank, "Print only the lines rank R prints, and dump its node's graphs (default: every rank; the dump: rank 0)", "R" },
        { "env", 0, 0, G_OPTION_ARG_STRING_ARRAY, &envs, "Set an NCCL variable (repeatable; wins over the environment)", "NCCL_X=VALUE" },
        { "dump-xml", 0, 0, G_OPTION_ARG_FILENAME, &dump, "Also write the graphs as NCCL_GRAPH_DUMP_FILE does to FILE", "FILE" },
        { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "Write the lines to FILE (default: standard output)", "FILE" },
        { NULL, 0, 0, 0, NULL, NULL, NULL }
    };
    cs_topo_spec_t spec;
    cs_topo_spec_init(&spec);
    g_auto(GStrv) rest = NULL;
    gboolean parsed = parse_options("graph", "Prints the rings, trees and channel counts NCCL's graph search builds on the\n"
                                    "topology, in NCCL's own NCCL_DEBUG=INFO lines (the graphs as ncclTopoPrintGraph,\n"
                                    "the \"Channel NN/MM :\" rings, \"Tree\", \"Ring\" and \"Trees\" lines), so that they\n"
                                    "can be compared with a real log:\n"
                                    "  diff <(collsim topo graph dgx1-v100 | sed 's/.*NCCL INFO //') \\\n"
                                    "       <(sed -n 's/.*NCCL INFO //p' nccl.log)\n"
                                    "Made by collsim's reproduction of NCCL v2.28.9's search, not by NCCL. GPUs are\n"
                                    "named GPU/0-<CUDA device> where NCCL prints their PCI bus id.",
                                    entries, &spec, argc, argv, &rest, &rc);
    g_autofree char *out_path = output;
    g_autofree char *dump_path = dump;
    g_auto(GStrv) env_args = envs;
    if (!parsed) {
        cs_topo_spec_clear(&spec);
        return rc;
    }
    g_autoptr(cs_topo_t) t = obtain("graph", &spec, rest, &rc);
    cs_topo_spec_clear(&spec);
    if (t == NULL)
        return rc;
    gboolean all = rank == G_MININT;
    if (!all && (rank < 0 || rank >= t->ngpus))
        return usage_error("--rank: %d is not a rank of the topology; expected 0 to %d", rank, t->ngpus - 1);
    g_autoptr(cs_nccl_env_t) env = cs_nccl_env_new();
    if (!graph_env(env_args, env, &rc))
        return rc;
    const char *paths[2] = { out_path, dump_path };
    const char *names[2] = { "collsim: topo graph: --output", "collsim: topo graph: --dump-xml" };
    int first = out_path == NULL || strcmp(out_path, "-") == 0 ? 1 : 0;
    int nfiles = dump_path != NULL ? 2 : 1;
    GError *err = NULL;
    if (nfiles > first && !cs_output_check(nfiles - first, paths + first, names + first, &err))
        return fail(err);
    g_autoptr(cs_comm_t) comm = cs_comm_new(t, env, &err);
    if (comm == NULL)
        return fail(err);
    g_autoptr(GPtrArray) warnings = cs_nccl_env_warnings(env);
    for (guint i = 0; i < warnings->len; i++)
        fprintf(stderr, "collsim: warning: %s\n", (const char *)g_ptr_array_index(warnings, i));
    g_autoptr(GString) o = g_string_new(NULL);
    g_string_append_printf(o, "# collsim topo graph: %s: NCCL's graph search and channels as collsim reproduces "
                           "them (NCCL v2.28.9 rules), not a log from NCCL\n", t->source ? t->source : "?");
    g_autofree char *info = cs_graph_log_info(comm, all ? -1 : rank);
    g_string_append(o, info);
    trim_lines(o);
    g_autofree char *xml = dump_path != NULL ? cs_graph_log_dump_xml(comm, all ? 0 : rank) : NULL;
    /* the files all or none, then standard output */
    const char *data[2] = { o->str, xml };
    if (nfiles > first && !cs_output_write(nfiles - first, paths + first, data + first, NULL, &err))
        return fail(err);
    if (first == 1 && !cs_output_stdout(o->str, o->len, &err))
        return fail(err);
    return 0;
}

/* ---- dispatch ---------------------------------------------------------- */

static const char topo_usage[] =
    "Usage: collsim topo COMMAND [OPTIONS] FILE|PRESET\n"
    "\n"
    "Commands:\n"
    "  check FILE            validate a topology file (collsim XML or NCCL dump)\n"
    "  show FILE|PRESET      devices, links, NCCL path types, fabric\n"
    "  dot FILE|PRESET       Graphviz drawing (-o FILE)\n"
    "  xml FILE|PRESET       the same as a collsim-topology(5) file (-o FILE)\n"
    "  graph FILE|PRESET     NCCL's rings, trees and channels, as NCCL_DEBUG=INFO prints them\n"
    "\n"
    "'collsim topo COMMAND --help' lists each command's options; the file\n"
    "format is described in collsim-topology(5).\n";

int cs_cmd_topo(int argc, char **argv)
{
    if (argc < 2)
        return usage_error("missing command; expected check, show, dot, xml or graph");
    const char *sub = argv[1];
    if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0 || strcmp(sub, "help") == 0) {
        fputs(topo_usage, stdout);
        return 0;
    }
    if (strcmp(sub, "check") == 0)
        return topo_check(argc - 1, argv + 1);
    if (strcmp(sub, "show") == 0)
        return topo_show(argc - 1, argv + 1);
    if (strcmp(sub, "dot") == 0)
        return topo_dot(argc - 1, argv + 1);
    if (strcmp(sub, "xml") == 0)
        return topo_xml(argc - 1, argv + 1);
    if (strcmp(sub, "graph") == 0)
        return topo_graph(argc - 1, argv + 1);
    return usage_error("unknown command '%s'; expected check, show, dot, xml or graph", sub);
}
