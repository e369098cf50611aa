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
/* JSON and CSV with every field of every row. Written to a temporary file
 * and renamed, so a failure leaves nothing half-written. */
gboolean cs_write_json_file(const char *path, const cs_result_t *r, GError **err);
gboolean cs_write_csv_file(const char *path, const cs_result_t *r, GError **err);
char *cs_write_json(const cs_result_t *r);
char *cs_write_csv(const cs_result_t *r);
/* Atomic write of a buffer (temp + rename). */
gboolean cs_write_file_atomic(const char *path, const char *data, gssize len, GError **err);

#endif
