/* Writer internals shared by the JSON and CSV writers. */
#ifndef CS_WRITERS_INT_H
#define CS_WRITERS_INT_H

#include <glib.h>

/* Appends v in the shortest %g form that reads back to the same double
 * (locale independent), so files are exact and stable. v must be finite. */
void cs_write_append_number(GString *g, double v);
/* Appends s as a JSON string (null for NULL), escaped. */
void cs_write_append_json_string(GString *g, const char *s);

#endif
