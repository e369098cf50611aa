/* Fuzz target for the topology reader (collsim XML and NCCL dumps): any
 * input either loads or fails with one line naming the input, never
 * crashes or leaks; whatever loads must survive a write/read round trip
 * unchanged. Built with libFuzzer (--enable-fuzzing) or, for `make check`,
 * with the standalone driver tests/fuzz/fuzz-main.c over
 * tests/fuzz/corpus/topo-xml. */
#include "config.h"
#include "glib-fatal.h"
#include "io/cs_topo_xml.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same_topology(const cs_topo_t *a, const cs_topo_t *b)
{
    if (a->ndevs != b->ndevs || a->nlinks != b->nlinks || a->ngpus != b->ngpus || a->nnodes != b->nnodes)
        g_error("round trip changed the counts: %d/%d devices, %d/%d links", a->ndevs, b->ndevs,
                a->nlinks, b->nlinks);
    for (int i = 0; i < a->ndevs; i++) {
        const cs_device_t *x = &a->devs[i], *y = &b->devs[i];
        if (strcmp(x->name, y->name) != 0 || x->kind != y->kind || x->node != y->node ||
            x->rank != y->rank || x->gpu != y->gpu || x->nic_bw != y->nic_bw)
            g_error("round trip changed device %d (%s / %s)", i, x->name, y->name);
    }
    for (int i = 0; i < a->nlinks; i++) {
        const cs_link_t *x = &a->links[i], *y = &b->links[i];
        if (x->src != y->src || x->dst != y->dst || x->kind != y->kind || x->bw != y->bw ||
            x->lat != y->lat || x->count != y->count)
            g_error("round trip changed link %d", i);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    GError *err = NULL;
    cs_topo_t *t = cs_topo_xml_load_mem((const char *)data, size, "fuzz.xml", &err);
    if ((t == NULL) == (err == NULL))
        g_error("reader returned %s with %s", t ? "a topology" : "nothing", err ? "an error" : "no error");
    if (err != NULL) {
        if (!g_str_has_prefix(err->message, "fuzz.xml") || strchr(err->message, '\n') != NULL ||
            strstr(err->message, "; expected") == NULL)
            g_error("bad message: %s", err->message);
        g_error_free(err);
        return 0;
    }
    if (!t->finished || t->ngpus < 1)
        g_error("unfinished topology");
    char *xml = cs_topo_xml_write(t);
    cs_topo_t *u = cs_topo_xml_load_mem(xml, strlen(xml), "fuzz.xml", &err);
    if (u == NULL)
        g_error("written topology does not load: %s\n%s", err->message, xml);
    same_topology(t, u);
    cs_topo_free(u);
    g_free(xml);
    cs_topo_free(t);
    return 0;
}
