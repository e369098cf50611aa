/* VL arbitration tables from the [fabric] section (cs_pkt_vlarb.h). */
#include "config.h"

#include <string.h>

#include "sim/cs_pkt_vlarb.h"
#include "util/cs_error.h"

/* OpenSM's QoS defaults (linux-rdma/opensm include/opensm/osm_base.h:
 * OSM_DEFAULT_QOS_HIGH_LIMIT 0, OSM_DEFAULT_QOS_VLARB_HIGH
 * "0:4,1:0,...,14:0", OSM_DEFAULT_QOS_VLARB_LOW "0:0,1:4,...,14:4"): VL 0
 * high priority, VLs 1-14 low with equal weights, one high packet before
 * a low one may go. OpenSM programs them with qos TRUE; with QoS off it
 * leaves the ports' tables to their firmware, which the engine does not
 * know (the note says so). Entries for VLs 8-14 are left out: the
 * engine's data VLs are 0-7 (SL i on VL i mod 8), so nothing is on them. */
#define OSM_HIGH_LIMIT 0
#define OSM_WEIGHT 4

void cs_pkt_vlarb_from_cfg(const cs_fabric_cfg_t *c, cs_pkt_arb_t *a)
{
    memset(a, 0, sizeof *a);
    a->high_limit = c->vlarb_high_limit >= 0 ? (guint8)c->vlarb_high_limit : OSM_HIGH_LIMIT;
    if (c->vlarb_nhigh >= 0) {
        for (int i = 0; i < c->vlarb_nhigh; i++)
            if (c->vlarb_high[i][0] < CS_PKT_PRIOS)
                a->high[a->nhigh++] = (cs_pkt_arb_entry_t){ c->vlarb_high[i][0], c->vlarb_high[i][1] };
    } else {
        for (int vl = 0; vl < CS_PKT_PRIOS; vl++)
            a->high[a->nhigh++] = (cs_pkt_arb_entry_t){ (guint8)vl, vl == 0 ? OSM_WEIGHT : 0 };
    }
    if (c->vlarb_nlow >= 0) {
        for (int i = 0; i < c->vlarb_nlow; i++)
            if (c->vlarb_low[i][0] < CS_PKT_PRIOS)
                a->low[a->nlow++] = (cs_pkt_arb_entry_t){ c->vlarb_low[i][0], c->vlarb_low[i][1] };
    } else {
        for (int vl = 0; vl < CS_PKT_PRIOS; vl++)
            a->low[a->nlow++] = (cs_pkt_arb_entry_t){ (guint8)vl, vl == 0 ? 0 : OSM_WEIGHT };
    }
    g_assert(cs_pkt_arb_valid(a));   /* the section's parser bounds entries and VLs */
}

/* A VL no table serves would keep its packets for ever: refused. */
gboolean cs_pkt_vlarb_check(const cs_fabric_cfg_t *c, const cs_pkt_arb_t *arb, int vl, const char *why,
                            GError **err)
{
    if (cs_pkt_arb_serves(arb, vl))
        return TRUE;
    const char *at = c->origin[CS_FK_VLARB_LOW] != NULL ? c->origin[CS_FK_VLARB_LOW]
                   : c->origin[CS_FK_VLARB_HIGH] != NULL ? c->origin[CS_FK_VLARB_HIGH] : "[fabric]";
    g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: VL %d (%s) has no entry of nonzero weight in vlarb-high or "
                "vlarb-low, so its packets would never leave a port; expected an entry %d:W with W from 1 to 255",
                at, vl, why, vl);
    return FALSE;
}

/* A table as OpenSM writes it ("0:4,1:0"). */
static void table_text(GString *g, const cs_pkt_arb_entry_t *e, int n)
{
    for (int i = 0; i < n; i++)
        g_string_append_printf(g, "%s%u:%u", i > 0 ? "," : "", e[i].vl, e[i].weight);
    if (n == 0)
        g_string_append(g, "empty");
}

/* " (s.ini:12: vlarb-high)", " (--vlarb-high)" or OpenSM's default. */
static void origin(GString *g, const cs_fabric_cfg_t *c, int k, gboolean set)
{
    const char *w = set ? cs_fabric_cfg_where(c, k) : NULL;
    g_string_append_printf(g, " (%s)", w != NULL ? w : set ? "given" : "OpenSM's default");
}

char *cs_pkt_vlarb_note(const cs_fabric_cfg_t *c, const cs_pkt_arb_t *a)
{
    GString *g = g_string_new("packet engine: VL arbitration at every port (IBA 7.6.9; docs/model-packet.md): high ");
    table_text(g, a->high, a->nhigh);
    origin(g, c, CS_FK_VLARB_HIGH, c->vlarb_nhigh >= 0);
    g_string_append(g, ", low ");
    table_text(g, a->low, a->nlow);
    origin(g, c, CS_FK_VLARB_LOW, c->vlarb_nlow >= 0);
    if (a->high_limit == CS_PKT_ARB_UNLIMITED)
        g_string_append(g, ", Limit of High-Priority 255: no limit");
    else if (a->high_limit == 0)
        g_string_append(g, ", Limit of High-Priority 0: one high packet, then a low one may go");
    else
        g_string_append_printf(g, ", Limit of High-Priority %u: %u KB of high packets, then a low one may go",
                               a->high_limit, a->high_limit * 4u);
    origin(g, c, CS_FK_VLARB_HIGH_LIMIT, c->vlarb_high_limit >= 0);
    g_string_append(g, "; weights in 64-B units, a started packet may overdraw its entry's weight");
    gboolean dropped = FALSE;   /* the section's entries for VLs past the engine's 8 */
    for (int i = 0; i < c->vlarb_nhigh; i++)
        dropped |= c->vlarb_high[i][0] >= CS_PKT_PRIOS;
    for (int i = 0; i < c->vlarb_nlow; i++)
        dropped |= c->vlarb_low[i][0] >= CS_PKT_PRIOS;
    if (c->vlarb_nhigh < 0 || c->vlarb_nlow < 0 || c->vlarb_high_limit < 0)
        g_string_append(g, "; OpenSM programs its defaults with qos TRUE only (with QoS off the ports keep their "
                           "firmware's tables, not modelled)");
    if (dropped || c->vlarb_nhigh < 0 || c->vlarb_nlow < 0)
        g_string_append(g, "; entries for VLs 8-14 left out (the engine's data VLs are 0-7)");
    return g_string_free(g, FALSE);
}
