/* Preset entry points: builds a node preset, restricts it to the first
 * --gpus GPUs as nccl-tests -g does, and hands it to the cluster builder
 * when more nodes, NICs or a fabric are asked for. */
#include "config.h"

#include <string.h>

#include "models/cs_presets-int.h"
#include "util/cs_error.h"

void cs_build_opts_init(cs_build_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->p2p = -1;
    o->nodes = 1;
    o->oversubscription = 1.0;
}

gboolean cs_preset_exists(const char *name)
{
    return cs_node_preset_find(name) != NULL;
}

const char *cs_preset_names(void)
{
    static gsize once = 0;
    static char *names;
    if (g_once_init_enter(&once)) {
        GString *s = g_string_new(NULL);
        const cs_node_preset_t *p;
        for (int i = 0; (p = cs_node_preset_at(i)) != NULL; i++)
            g_string_append_printf(s, "%s%s", i ? ", " : "", p->name);
        names = g_string_free(s, FALSE);
        g_once_init_leave(&once, 1);
    }
    return names;
}

const char *cs_preset_doc(const char *name)
{
    const cs_node_preset_t *p = cs_node_preset_find(name);
    return p != NULL ? p->doc : NULL;
}

gboolean cs_preset_takes_node_options(const char *name)
{
    const cs_node_preset_t *p = cs_node_preset_find(name);
    return p != NULL && p->node_options;
}

char *cs_preset_node_option_refusal(const char *name, const char *option)
{
    const cs_node_preset_t *p = cs_node_preset_find(name);
    if (p == NULL || cs_preset_takes_node_options(name))
        return NULL;
    /* the first PCIe preset names the family (pcie-nvlink-pair is the
     * pcie preset's two-card shape) */
    GString *takers = g_string_new(NULL);
    const cs_node_preset_t *q;
    for (int i = 0; (q = cs_node_preset_at(i)) != NULL && takers->len == 0; i++)
        if (q->node_options)
            g_string_append(takers, q->name);
    char *msg = g_strdup_printf("applies to the %s preset only (%s is a fixed machine: its GPUs, sockets and "
                                "GPU links are the vendor's); expected no %s with %s",
                                takers->str, p->name, option, p->name);
    g_string_free(takers, TRUE);
    return msg;
}

static void set_source(cs_topo_t *t, const cs_node_preset_t *p, const cs_build_opts_t *o,
                       int restricted, gboolean clustered)
{
    GString *s = g_string_new("preset:");
    g_string_append(s, p->name);
    if (p->node_options) {   /* the pcie presets: their shape flags */
        int sockets = 0, bridges = 0;
        for (int d = 0; d < t->ndevs; d++)
            sockets += t->devs[d].kind == CS_DEV_CPU;
        for (int l = 0; l < t->nlinks; l++)
            bridges += t->links[l].kind == CS_LINK_NVL;
        const cs_gpu_model_t *m = cs_topo_rank_dev(t, 0)->gpu;
        g_string_append_printf(s, " --gpu %s --gpus %d --sockets %d", m->name, t->ngpus, sockets);
        if (o->cpu != NULL)
            g_string_append_printf(s, " --cpu %s", o->cpu);
        if (m->nvlinks > 0)
            g_string_append_printf(s, " --nvlink-bridge %s", bridges > 0 ? "pairs" : "none");
        if (o->nic != NULL && !clustered)
            g_string_append_printf(s, " --nic %s --nics-per-node 1", o->nic);
    } else if (restricted > 0) {
        g_string_append_printf(s, " --gpus %d", restricted);
    }
    if (o->p2p >= 0)
        g_string_append_printf(s, " --p2p %s", o->p2p ? "on" : "off");
    g_free(t->source);
    t->source = g_string_free(s, FALSE);
}

cs_topo_t *cs_preset_build(const char *name, const cs_build_opts_t *opts, GError **err)
{
    cs_build_opts_t dflt;
    const cs_build_opts_t *o = opts;
    if (o == NULL) {
        cs_build_opts_init(&dflt);
        o = &dflt;
    }
    const cs_node_preset_t *p = cs_node_preset_find(name);
    if (p == NULL) {
        cs_set_flag_error(err, "--topo", "unknown preset '%s'; expected one of %s",
                          name != NULL ? name : "", cs_preset_names());
        return NULL;
    }
    if (!cs_build_opts_check(o, err))
        return NULL;
    /* a fixed machine takes no node option: one set would be ignored */
    const char *given = o->gpu != NULL ? "--gpu" : o->sockets > 0 ? "--sockets" : o->cpu != NULL ? "--cpu"
                      : o->p2p != -1 ? "--p2p" : o->nvlink_bridge != CS_BRIDGE_UNSET ? "--nvlink-bridge" : NULL;
    g_autofree char *refusal = given != NULL ? cs_preset_node_option_refusal(p->name, given) : NULL;
    if (refusal != NULL) {
        cs_set_flag_error(err, given, "%s", refusal);
        return NULL;
    }

    g_autoptr(cs_topo_t) node = p->build(o, err);
    if (node == NULL || !cs_topo_finish(node, err))
        return NULL;
    int restricted = 0;
    if (!p->node_options && o->gpus > 0) {
        if (o->gpus > node->ngpus) {
            cs_set_flag_error(err, "--gpus", "%d GPUs per node, but %s has %d; expected 1..%d",
                              o->gpus, p->name, node->ngpus, node->ngpus);
            return NULL;
        }
        if (o->gpus < node->ngpus) {
            g_autofree char *desc = g_strdup_printf("%s, first %d of %d GPUs", node->description,
                                                    o->gpus, node->ngpus);
            cs_topo_t *r = cs_topo_restrict_gpus(node, o->gpus, err);
            if (r == NULL)
                return NULL;
            cs_topo_free(node);
            node = r;
            g_free(node->description);
            node->description = g_steal_pointer(&desc);
            restricted = o->gpus;
        }
    }
    /* one node as built needs no cluster pass (the pcie presets already
     * put the asked NICs in) */
    gboolean clustered = !(o->nodes == 1 && o->nics_per_node == 0 && o->fabric == NULL &&
                           (o->nic == NULL || p->node_options));
    set_source(node, p, o, restricted, clustered);
    cs_topo_t *t = clustered ? cs_cluster_build(node, o, err) : g_steal_pointer(&node);
    if (t != NULL && p->node_options && o->nic != NULL && o->nics_per_node == 0) {
        /* the NIC count the user did not choose, said where the hardware is */
        char *d = g_strdup_printf("%s; 1x %s NIC per node (the pcie default; --nics-per-node N for more)",
                                  t->description, o->nic);
        g_free(t->description);
        t->description = d;
    }
    return t;
}
