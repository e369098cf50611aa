/* Topology files: collsim's own XML (docs/collsim-topology.5, RelaxNG schema
 * topologies/collsim-topology.rng) and NCCL's NCCL_TOPO_DUMP_FILE format,
 * told apart by the root element (<collsim-topology> vs <system>). */
#ifndef CS_TOPO_XML_H
#define CS_TOPO_XML_H

#include "models/cs_topo.h"

/* Reads a file of either format; returns a finished topology. Errors are
 * "FILE:LINE: what is wrong; what was expected". */
cs_topo_t *cs_topo_xml_load(const char *path, GError **err);
/* Same, from memory (fuzz targets, tests); 'name' is used in messages. */
cs_topo_t *cs_topo_xml_load_mem(const char *buf, size_t len, const char *name, GError **err);
/* Writes a topology as collsim XML (round trip: load(write(t)) == t);
 * cs_topo_xml_write.c. */
char *cs_topo_xml_write(const cs_topo_t *t);
/* The length in bytes of what cs_topo_xml_write would return, counted
 * without keeping the text. */
gsize cs_topo_xml_length(const cs_topo_t *t);

#endif
