/* Private to the topology file readers (cs_topo_xml*.c): the parsed
 * document, attribute helpers that report "FILE:LINE: ...; expected ...",
 * and the two format back ends. */
#ifndef CS_TOPO_XML_INT_H
#define CS_TOPO_XML_INT_H

#include <libxml/tree.h>
#include "models/cs_topo.h"

/* Reading context: the file name used in messages and the error slot. */
typedef struct {
    const char *file;
    GError **err;
} cs_xml_ctx_t;

/* Line of an element for messages (>= 1). */
int cs_xml_line(xmlNodePtr n);

/* Sets the context's error: "FILE:LINE(of n): fmt". Returns FALSE so that
 * callers can write 'return cs_xml_fail(...)'. */
gboolean cs_xml_fail(cs_xml_ctx_t *c, xmlNodePtr n, const char *fmt, ...) G_GNUC_PRINTF(3, 4);

/* Element children only (comments, text and PIs skipped). */
xmlNodePtr cs_xml_first_elem(xmlNodePtr parent);
xmlNodePtr cs_xml_next_elem(xmlNodePtr n);
gboolean cs_xml_is(xmlNodePtr n, const char *name);

/* Attribute value, newly allocated (g_free), or NULL if absent. */
char *cs_xml_attr(xmlNodePtr n, const char *name);
/* Required attribute: NULL and an error "missing attribute 'x' on <e>;
 * expected <what>" when absent or empty. */
char *cs_xml_attr_req(cs_xml_ctx_t *c, xmlNodePtr n, const char *name, const char *what);
/* Optional typed attributes: leave *v_p unchanged when absent; an error
 * naming the attribute and the expected form when malformed. */
gboolean cs_xml_attr_int(cs_xml_ctx_t *c, xmlNodePtr n, const char *name,
                         gint64 min, gint64 max, gint64 *v_p);
gboolean cs_xml_attr_bool(cs_xml_ctx_t *c, xmlNodePtr n, const char *name, gboolean *v_p);
gboolean cs_xml_attr_bw(cs_xml_ctx_t *c, xmlNodePtr n, const char *name, double *v_p);
gboolean cs_xml_attr_time(cs_xml_ctx_t *c, xmlNodePtr n, const char *name, double *v_p);
gboolean cs_xml_attr_double(cs_xml_ctx_t *c, xmlNodePtr n, const char *name,
                            double min, double max, double *v_p);

/* Back ends. Both return an unfinished-or-finished topology as documented
 * at their definition; on error NULL with the context's error set. */
cs_topo_t *cs_topo_xml_load_ours(cs_xml_ctx_t *c, xmlDocPtr doc);
cs_topo_t *cs_topo_xml_load_nccl(cs_xml_ctx_t *c, xmlDocPtr doc);

/* Validates a collsim document against topologies/collsim-topology.rng
 * (parsed once and cached). TRUE when valid or when the schema cannot be
 * found (the C checks are complete on their own; the schema is the
 * documented contract and a cross-check). */
gboolean cs_topo_xml_validate_schema(cs_xml_ctx_t *c, xmlDocPtr doc);

/* Default per-direction latencies of links whose file gives none, seconds;
 * shared by the two readers (values and sources in cs_topo_xml_ours.c). */
double cs_topo_xml_default_lat(cs_link_kind_t kind);
/* Inter-socket bandwidth by CPU vendor and x86 CPUID family/model (0 =
 * unknown), bytes/s (sources in cs_topo_xml_ours.c). */
double cs_topo_xml_sys_bw(cs_cpu_vendor_t v, int familyid, int modelid);

#endif
