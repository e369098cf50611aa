/* Reading back collsim's own result JSON (cs_write_json: `collsim run
 * --json`, `collsim real --json`, producer "model:X" or
 * "measured:collsim-real"). */
#ifndef CS_RESULT_JSON_H
#define CS_RESULT_JSON_H

#include "models/cs_result.h"

/* Whether a text looks like collsim's JSON (an object with "producer"). */
gboolean cs_result_json_sniff(const char *buf, size_t len);
/* Parses it; errors are "NAME:LINE: ...". */
cs_result_t *cs_result_json_parse(const char *buf, size_t len, const char *name, GError **err);

#endif
