/* Internals of `collsim real` shared by the orchestration (real_main.c, no
 * CUDA), NCCL's log reader (nccl_tuning.c) and the CUDA/NCCL rank
 * (nccl_runner.c). */
#ifndef CS_REAL_INT_H
#define CS_REAL_INT_H

#include <glib.h>
#include "io/cs_scenario.h"
#include "real/cs_real_boot.h"
#include "models/cs_result.h"

/* One rank's measurement of one size; sent to rank 0 as bytes. */
typedef struct {
    double time_us[2];        /* per iteration, CUDA-event time; < 0 when not run */
    gint64 wrong[2];          /* wrong elements among those checked, -1 unchecked */
    char algo[16], proto[16]; /* NCCL's choice (rank 0 reads it from NCCL's log), "" unknown */
    gint32 nchannels, pad;
} cs_real_cell_t;

/* What a rank ran on, for the header. */
typedef struct {
    char host[64];
    char busid[32];
    char name[96];
    gint32 pid, dev;
    gint32 nccl_version, cuda_runtime, cuda_driver, pad;
} cs_real_dev_t;

typedef struct {
    const cs_scenario_t *s;
    const cs_boot_job_t *job;
    const guint64 *sizes;     /* swept sizes (bytes, nccl-tests's -b/-e values) */
    int nsizes;
    double timeout_s;
    guint64 check_max;
    const char *tuning_log;   /* rank 0: NCCL's debug file we asked for, or NULL */
} cs_real_rank_t;

/* ---- NCCL's INFO TUNING lines (enqueue.cc, v2.28.9, printed by rank 0):
 * "<host>:<pid>:<tid> [<dev>] NCCL INFO AllReduce: 1048576 Bytes -> Algo RING
 * proto SIMPLE channel{Lo..Hi}={0..31}" ------------------------------------- */
typedef struct {
    char func[24];            /* NCCL's ncclFuncToString: "AllReduce" */
    guint64 bytes;            /* count * type size (per-rank count) */
    char algo[16], proto[16]; /* as collsim names them: "Ring", "Simple" */
    int nchannels;
} cs_tuning_line_t;

gboolean cs_tuning_parse_line(const char *line, cs_tuning_line_t *out_p);
/* The last line in 'log' for collective c with 'bytes'. */
gboolean cs_tuning_find(const char *log, cs_coll_t c, guint64 bytes, cs_tuning_line_t *out_p);
const char *cs_tuning_func_name(cs_coll_t c);

/* Rank 0: the result from every rank's bytes (rank q's at all + q *
 * per_rank: a cs_real_dev_t, then nsizes cs_real_cell_t). Times are the
 * mean over ranks (nccl-tests -a 1), #wrong the sum; algo/proto/nch are
 * rank 0's. *nnodes_p: distinct host names; *ppn_p: ranks on rank 0's. */
cs_result_t *cs_real_build_result(const cs_scenario_t *s, int nranks, int nsizes, const guint64 *sizes,
                                  const guint8 *all, size_t per_rank, int *nnodes_p, int *ppn_p);

#ifdef HAVE_REAL_NCCL
/* The CUDA/NCCL side (nccl_runner.c). */
int cs_real_nccl_device_count(GError **err);
gboolean cs_real_nccl_unique_id(void *id, size_t len, GError **err);
/* Runs the sweep on this rank. cells: nsizes entries. On failure the
 * others have been told (cs_boot_abort) and the communicator aborted. */
gboolean cs_real_nccl_measure(const cs_real_rank_t *r, cs_boot_t *b, const void *id, cs_real_dev_t *dev,
                              cs_real_cell_t *cells, GError **err);
#endif

#endif
