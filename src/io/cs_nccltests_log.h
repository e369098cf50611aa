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
    /* Where no version is named: the newest NCCL that prints an INFO line
     * the log shows (a version code, major x 10000 + minor x 100 + patch;
     * 0 = none), the line's number and what it is. */
    /* The nccl-tests build, from its "# nccl-tests version 2.18.3
     * nccl-headers=22903" line: its version and the NCCL headers it was
     * built with, as version codes (0 = not said). */
    int nccltests_version, nccltests_headers;
    int nccl_version_max;
    int nccl_version_max_line;
    const char *nccl_version_max_why;
    char *command;
    GPtrArray *commands;     /* per result: the command line above its table (char*, NULL: none) */
    GPtrArray *env;          /* the run's NCCL_* variables as its log records them ("NAME=VALUE"; -J's "env") */
    GArray *env_lines;       /* int: the line of each */
    gboolean json;           /* read from nccl-tests -J JSON */
    /* Per result: the number of its table in the file (1-based, counting
     * tables that were skipped), and its first row's line. */
    GArray *table_numbers;   /* int */
    GArray *table_lines;     /* int */
    int ntables;             /* tables found, skipped ones included */
    GPtrArray *notes;        /* file-level remarks: skipped tables and why */
    /* Lines inside a table that look like rows but could not be read (a
     * negative, overflowing or fractional size, a row cut off): "NAME:LINE:
     * row not read: why", in file order, and the number of the table of
     * each. Never dropped silently: validate reports them and fails. */
    GPtrArray *unread;       /* char* */
    GArray *unread_tables;   /* int */
    /* Per result: what the NCCL INFO lines of its run said NCCL did
     * (cs_nccl_info_t*, those since the previous table, else, for a later
     * table of the same run, the run's first table's, shared by
     * reference: cs_nccl_info_ref; NULL: none). */
    GPtrArray *nccl_info;
} cs_nccltests_log_t;

/* What the caller knows when the file does not say it. A caller 'coll'
 * overrides what the file suggests, but must agree with the rows. */
typedef struct {
    gboolean has_coll;
    cs_coll_t coll;
    int nranks;              /* 0 = unknown; used only when the file does not say */
} cs_nccltests_hint_t;

/* The launchers a command line may start nccl-tests with (mpirun, srun,
 * ...; NULL-terminated), and the first one a command line names (its
 * entry of that list), or NULL. */
extern const char *const cs_nccltests_launchers[];
const char *cs_nccltests_launcher(const char *command);

cs_nccltests_log_t *cs_nccltests_log_load(const char *path, GError **err);
cs_nccltests_log_t *cs_nccltests_log_parse(const char *buf, size_t len, const char *name, GError **err);
/* The same with a hint (NULL = none). */
cs_nccltests_log_t *cs_nccltests_log_load_hint(const char *path, const cs_nccltests_hint_t *hint,
                                               GError **err);
cs_nccltests_log_t *cs_nccltests_log_parse_hint(const char *buf, size_t len, const char *name,
                                                const cs_nccltests_hint_t *hint, GError **err);
void cs_nccltests_log_free(cs_nccltests_log_t *l);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(cs_nccltests_log_t, cs_nccltests_log_free)

#endif
