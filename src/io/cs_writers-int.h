/* Writer internals shared by the JSON and CSV writers. */
#ifndef CS_WRITERS_INT_H
#define CS_WRITERS_INT_H

#include <glib.h>

/* Appends v in the shortest %g form that reads back to the same double
 * (locale independent), so files are exact and stable. v must be finite. */
void cs_write_append_number(GString *g, double v);

#endif
