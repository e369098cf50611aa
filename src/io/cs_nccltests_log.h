/* Reader for nccl-tests output: the text table (with or without the
 * header comment lines, as published in logs and issues) and its -J JSON.
 * One file may hold several tables (e.g. default then NCCL_ALGO=Ring);
 * each becomes a result with producer "measured:nccl-tests". */
#ifndef CS_NCCLTESTS_LOG_H
#define CS_NCCLTESTS_LOG_H

#include "models/cs_result.h"

typedef struct {
    GPtrArray *results;      /* cs_result_t*, in file order */
    /* what the header says, when it says it (0/NULL otherwise) */
    int nranks;
    char *nccl_version;
    char *command;
} cs_nccltests_log_t;

cs_nccltests_log_t *cs_nccltests_log_load(const char *path, GError **err);
cs_nccltests_log_t *cs_nccltests_log_parse(const char *buf, size_t len, const char *name, GError **err);
void cs_nccltests_log_free(cs_nccltests_log_t *l);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(cs_nccltests_log_t, cs_nccltests_log_free)

#endif
