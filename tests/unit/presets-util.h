/* Helpers shared by the preset tests (test-presets.c,
 * test-presets-planner.c): build a preset or expect its one-line error,
 * count devices and links, find a device and the link between two. */
#ifndef PRESETS_UTIL_H
#define PRESETS_UTIL_H

#include <string.h>

#include "models/cs_presets.h"

G_GNUC_UNUSED static cs_topo_t *build(const char *name, const cs_build_opts_t *o)
{
    GError *err = NULL;
    cs_topo_t *t = cs_preset_build(name, o, &err);
    g_assert_no_error(err);
    g_assert_nonnull(t);
    g_assert_true(t->finished);
    return t;
}

G_GNUC_UNUSED static void expect_error(const char *name, const cs_build_opts_t *o, const char *part1, const char *part2)
{
    GError *err = NULL;
    cs_topo_t *t = cs_preset_build(name, o, &err);
    g_assert_null(t);
    g_assert_nonnull(err);
    if (g_test_verbose())
        g_printerr("%s\n", err->message);
    g_assert_nonnull(strstr(err->message, part1));
    if (part2 != NULL)
        g_assert_nonnull(strstr(err->message, part2));
    g_assert_null(strchr(err->message, '\n'));
    g_error_free(err);
}

G_GNUC_UNUSED static int count_devs(const cs_topo_t *t, cs_dev_kind_t kind)
{
    int n = 0;
    for (int i = 0; i < t->ndevs; i++)
        n += t->devs[i].kind == kind;
    return n;
}

/* bidirectional links of a kind */
G_GNUC_UNUSED static int count_links(const cs_topo_t *t, cs_link_kind_t kind)
{
    int n = 0;
    for (int i = 0; i < t->nlinks; i++)
        n += t->links[i].kind == kind;
    return n / 2;
}

G_GNUC_UNUSED static int dev(const cs_topo_t *t, const char *name)
{
    int d = cs_topo_find(t, name);
    if (d < 0)
        g_error("no device %s", name);
    return d;
}

/* the link a->b, or NULL */
G_GNUC_UNUSED static const cs_link_t *link_between(const cs_topo_t *t, int a, int b)
{
    for (int i = t->adj_off[a]; i < t->adj_off[a + 1]; i++)
        if (t->links[t->adj[i]].dst == b)
            return &t->links[t->adj[i]];
    return NULL;
}

#endif
