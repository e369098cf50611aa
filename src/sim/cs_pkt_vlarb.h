/* The VL arbitration tables of an InfiniBand fabric (issue #14 item 2),
 * from its [fabric] section: OpenSM's QoS defaults or the section's
 * vlarb-high, vlarb-low and vlarb-high-limit, the check that a VL some
 * job is on is served at all, and the header's line. The ports run them
 * (cs_pkt_port.h, cfg.arb). Model: docs/model-packet.md, "VL arbitration". */
#ifndef CS_PKT_VLARB_H
#define CS_PKT_VLARB_H

#include <glib.h>

#include "models/cs_fabric_cfg.h"
#include "sim/cs_pkt_port.h"

/* The tables the section gives, OpenSM's defaults for those it does not. */
void cs_pkt_vlarb_from_cfg(const cs_fabric_cfg_t *cfg, cs_pkt_arb_t *out);
/* Whether VL 'vl' (chosen by 'why', for the message) has an entry of
 * nonzero weight; errors name the key where the tables came from. */
gboolean cs_pkt_vlarb_check(const cs_fabric_cfg_t *cfg, const cs_pkt_arb_t *arb, int vl, const char *why,
                            GError **err);
/* The header's note: the tables and where they came from (g_free). */
char *cs_pkt_vlarb_note(const cs_fabric_cfg_t *cfg, const cs_pkt_arb_t *arb);

#endif
