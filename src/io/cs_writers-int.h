/* Writer internals shared by the JSON and CSV writers. */
#ifndef CS_WRITERS_INT_H
#define CS_WRITERS_INT_H

#include <glib.h>

#include "models/cs_result.h"

/* Appends v in the shortest %g form that reads back to the same double
 * (locale independent), so files are exact and stable. v must be finite. */
void cs_write_append_number(GString *g, double v);
/* Appends s as a JSON string (null for NULL), escaped. */
void cs_write_append_json_string(GString *g, const char *s);
/* Appends "key": v, or "key": null when v is negative or not finite (a
 * size that did not run). */
void cs_write_append_json_num(GString *g, const char *key, double v);
/* Appends v for a CSV cell, nothing when it is negative or not finite. */
void cs_write_append_csv_num(GString *g, double v);
/* Appends ', "network": {...}': a packet-level engine's counters. */
void cs_write_json_network(GString *g, const cs_net_counters_t *c);

#endif
