/* Output writers. They format; they never compute a model quantity. */
#ifndef CS_WRITERS_H
#define CS_WRITERS_H

#include <stdio.h>
#include "models/cs_result.h"
#include "models/cs_topo.h"

typedef struct {
    const char *command;     /* the nccl-tests-like command line shown in the header */
    const char *topo_desc;
    int nthreads, ngpus, iters, warmup, agg_iters, check;
    guint64 minbytes, maxbytes, stepbytes;
    double stepfactor;
    gboolean extra_columns;  /* algorithm, protocol, channels, transport after #wrong */
    const cs_topo_t *topo;   /* optional: "# Using devices" lines, one per rank */
} cs_table_opts_t;

/* nccl-tests's table (util.cu writeResultHeader/…): header lines, columns
 * size count type redop root | time algbw busbw #wrong (out-of-place,
 * in-place), "# Avg bus bandwidth", with '#wrong' as N/A when unchecked. */
void cs_write_table(FILE *f, const cs_result_t *r, const cs_table_opts_t *o);
/* The same table in parts, for a sweep printed as it is priced: the header
 * (with r's notes so far), row i, and the footer, which starts with r's
 * notes from 'first_note' on (those added after the header was written,
 * e.g. what only the end of a sweep knows) and goes on with "Out of bounds
 * values" and "Avg bus bandwidth". cs_write_table is header, every row,
 * footer with every note already in the header. */
void cs_write_table_header(FILE *f, const cs_result_t *r, const cs_table_opts_t *o);
void cs_write_table_row(FILE *f, const cs_result_t *r, guint i, const cs_table_opts_t *o);
void cs_write_table_footer(FILE *f, const cs_result_t *r, guint first_note);
/* JSON and CSV with every field of every row. Written to a temporary file
 * and renamed, so a failure leaves nothing half-written. */
gboolean cs_write_json_file(const char *path, const cs_result_t *r, GError **err);
gboolean cs_write_csv_file(const char *path, const cs_result_t *r, GError **err);
char *cs_write_json(const cs_result_t *r);
char *cs_write_csv(const cs_result_t *r);
/* Appends one CSV field (RFC 4180: quoted only when it holds a comma, a quote
 * or a line break); nothing for NULL. */
void cs_write_csv_field(GString *g, const char *s);
/* Several jobs on one machine (collsim run with [job NAME] groups): one
 * row per job, its time shared and alone, from model 'producer'. */
typedef struct {
    const char *name;
    int nranks, nnodes;
    cs_coll_t coll;
    cs_dtype_t dtype;
    guint64 size, count;     /* the size column as nccl-tests prints it; elements per rank */
    double start_s;
    int iters;
    const char *algo, *proto;
    int nchannels;
    double time_s;           /* first launch to the end of the last call, sharing */
    double alone_s;          /* the same with the machine to itself */
} cs_job_row_t;

typedef struct {
    const char *producer;    /* "model:flow" */
    const char *title;       /* scenario name or topology description */
    const char *topo_desc;
    int nrows;
    const cs_job_row_t *rows;
    const char *const *notes;        /* the engine's assumptions (NULL-terminated), or NULL */
    const cs_net_counters_t *net;    /* a packet-level engine's counters of the run, or NULL */
} cs_jobs_report_t;

void cs_write_jobs_table(FILE *f, const cs_jobs_report_t *r);
char *cs_write_jobs_json(const cs_jobs_report_t *r);
char *cs_write_jobs_csv(const cs_jobs_report_t *r);

/* Atomic write of a buffer (temp + rename). */
gboolean cs_write_file_atomic(const char *path, const char *data, gssize len, GError **err);

#endif
