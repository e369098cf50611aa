/* Private to the nccl-tests log reader: the pieces the text and the JSON
 * readers share (collective kinds, rows as read, table finishing). */
#ifndef CS_NCCLTESTS_LOG_INT_H
#define CS_NCCLTESTS_LOG_INT_H

#include "io/cs_nccltests_log.h"

/* What an nccl-tests binary measures: the operations collsim models (same
 * values as cs_coll_t, below CS_OP_COUNT) and the others nccl-tests has. */
typedef enum {
    CS_NT_UNKNOWN = -1,
    CS_NT_BROADCAST = CS_COLL_BROADCAST,
    CS_NT_REDUCE = CS_COLL_REDUCE,
    CS_NT_ALLGATHER = CS_COLL_ALLGATHER,
    CS_NT_REDUCESCATTER = CS_COLL_REDUCESCATTER,
    CS_NT_ALLREDUCE = CS_COLL_ALLREDUCE,
    CS_NT_SENDRECV = CS_COLL_SENDRECV,
    CS_NT_ALLTOALL = CS_COLL_ALLTOALL,
    CS_NT_ALLTOALLV = CS_OP_COUNT,   /* from here on: not modelled */
    CS_NT_GATHER,
    CS_NT_SCATTER,
    CS_NT_HYPERCUBE,
    CS_NT_KIND_END
} cs_nt_kind_t;

/* "all_reduce_perf", "./build/all_reduce_perf_mpi", "alltoall", "AllGather". */
cs_nt_kind_t cs_nt_kind_from_name(const char *s);
const char *cs_nt_kind_test_name(cs_nt_kind_t k);    /* "alltoall_perf" */

/* One row as read, with what the columns said beyond cs_result_row_t. */
/* Beyond any run, in either reader: a day per call (us), a petabyte per
 * second (GB/s). */
#define CS_NT_TIME_MAX_US 86400e6
#define CS_NT_BW_MAX 1e6

typedef struct {
    cs_result_row_t r;
    int line;
    gboolean redop_none;     /* printed "none" */
    gboolean redop_missing;  /* the column is absent */
    gboolean root_missing;   /* old format without a root column */
} cs_nt_row_t;

#define CS_NT_MAX_ROW_NOTES 5

/* A table being read; finished into a cs_result_t (or skipped). */
typedef struct {
    GArray *rows;            /* cs_nt_row_t */
    int line;                /* line of the first row (JSON: of "results") */
    cs_nt_kind_t kind;       /* what the file says it is, CS_NT_UNKNOWN if silent */
    char *kind_from;         /* "'all_reduce_perf' at line 12" */
    int nranks;              /* 0 = unknown */
    char *nranks_from;
    int nnodes;              /* 0 = unknown */
    int threads, gpus;       /* the header's "nThread T nGpus G" (per process); 0 = unknown */
    int threads_from_line;   /* > 0: threads and gpus are the command line's at that line (-t, -g) */
    double avg_busbw;
    gboolean has_avg;
    char *title;             /* nearest prose line above, for notes */
    char *command;           /* the last command line above it (an nccl-tests binary), or NULL */
    char *producer;          /* NULL: "measured:nccl-tests"; collsim's own tables say "model:X" */
    GPtrArray *notes;
    int row_notes;           /* row remarks so far (the first CS_NT_MAX_ROW_NOTES are kept) */
} cs_nt_table_t;

cs_nt_table_t *cs_nt_table_new(int line);
void cs_nt_table_free(cs_nt_table_t *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(cs_nt_table_t, cs_nt_table_free)

cs_nccltests_log_t *cs_nt_log_new(void);

/* Decides the collective and rank count of a finished table and appends
 * its result to log (or a note saying why it was skipped). Fails only on a
 * contradiction with the caller's hint. */
gboolean cs_nt_table_finish(cs_nccltests_log_t *log, cs_nt_table_t *t, const char *name,
                            const cs_nccltests_hint_t *hint, GError **err);

/* The -J JSON reader (cs_nccltests_json.c). */
gboolean cs_nt_parse_json(cs_nccltests_log_t *log, const char *buf, size_t len, const char *name,
                          const cs_nccltests_hint_t *hint, GError **err);

#endif
