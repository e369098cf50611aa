/* Comparing a prediction with a measurement: two results joined by size,
 * per-size errors and their summary. Errors are (predicted - measured) /
 * measured. Bus bandwidth is judged where it is the figure of merit (large
 * messages), time where latency is (small messages). */
#ifndef CS_VALIDATE_H
#define CS_VALIDATE_H

#include "io/cs_nccl_info.h"
#include "models/cs_decide.h"
#include "models/cs_result.h"

#define CS_VALIDATE_LARGE_MIN ((guint64)1 << 20)   /* busbw judged at sizes >= 1 MiB */
#define CS_VALIDATE_SMALL_MAX ((guint64)64 << 10)  /* time judged at sizes <= 64 KiB */
#define CS_VALIDATE_BUSBW_TARGET 0.10              /* median |busbw error| to pass */
#define CS_VALIDATE_TIME_TARGET 0.25               /* median |time error| to pass */

typedef struct {
    guint64 size;
    double meas_us, pred_us, time_err;        /* err is NAN when not computable */
    double meas_busbw, pred_busbw;            /* GB/s as the results print them */
    double meas_busbw_t;                      /* the measured busbw unrounded: nccl-tests's formula
                                               * (size, count, ranks) on the measured time; -1 when
                                               * there is none (for plots: the printed column is
                                               * rounded to 0.01 GB/s) */
    double busbw_err;                         /* t_meas / t_pred - 1 when both times exist
                                               * (the same as from busbw, unrounded), else
                                               * from the busbw columns */
    /* what the model says NCCL chose (from the predicted row) */
    char algo[16], proto[16];
    int nchannels;
    char transport[64];
} cs_validate_row_t;

typedef struct {
    int n;                 /* sizes counted */
    double median;         /* median |error| */
    double worst;          /* the error (signed) with the largest |error| */
    guint64 worst_size;
} cs_validate_stat_t;

typedef struct {
    int placement;         /* CS_OOP or CS_INP */
    GArray *rows;          /* cs_validate_row_t, in the measured order */
    int unmatched;         /* measured sizes the prediction lacks */
    int resized;           /* measured rows paired with the prediction for the
                            * size nccl-tests runs for theirs (see
                            * cs_validate_compare) */
    cs_validate_stat_t busbw_large;  /* sizes >= CS_VALIDATE_LARGE_MIN */
    cs_validate_stat_t time_small;   /* sizes <= CS_VALIDATE_SMALL_MAX */
} cs_validation_t;

/* Joins measured and predicted rows of the same size (the k-th measured
 * row of a size with the k-th predicted one) and summarises the errors of
 * one placement. Fails when the two results are of different collectives
 * or rank counts, or share no size. */
cs_validation_t *cs_validate_compare(const cs_result_t *measured, const cs_result_t *predicted,
                                     int placement, GError **err);
void cs_validation_free(cs_validation_t *v);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(cs_validation_t, cs_validation_free)

/* Whether the median is within the target; FALSE when nothing was counted. */
gboolean cs_validate_stat_pass(const cs_validate_stat_t *s, double target);

/* Median of |values| (NAN skipped); NAN when there are none. Sorts a copy. */
double cs_validate_median_abs(const double *v, int n);
/* The same of the signed values (which side a run errs on). */
double cs_validate_median(const double *v, int n);

/* ---- NCCL's own words against the model (cs_validate_findings.c) -------- */

/* Where the log's NCCL INFO lines (what NCCL says it did for the table's
 * run) contradict the model's decisions for the same machine: NCCL over
 * TCP sockets where the model has RDMA, without GPUDirect RDMA, through
 * host memory where the model has P2P, a network plugin collsim does not
 * model, another channel count. One line each, "LOG:LINE: what NCCL did,
 * what the model assumed, why that happens; to predict the run as it ran:
 * --env ...", appended to 'out' (char*); none when they agree or the log
 * says nothing. */
void cs_validate_findings(const cs_nccl_info_t *seen, const cs_comm_t *comm, const char *log, GPtrArray *out);

/* ---- the plot (cs_validate_svg.c) ---------------------------------------- */

/* One compared table. */
typedef struct {
    int number;                      /* the log's table number */
    const cs_result_t *measured;     /* for its collective, type and ranks */
    const cs_validation_t *v;
} cs_validate_plot_table_t;

typedef struct {
    const char *log;                 /* the log as the plot names it (collsim validate: its base name) */
    const char *model;               /* the prediction's producer, "model:analytic" */
    const char *params;              /* "built-in parameters", "calibrated parameters from FILE" */
    const char *topology;            /* the modelled topology's description */
} cs_validate_plot_t;

/* The SVG (g_free it): per table, the measured bus bandwidth and time over
 * size (solid) and the predicted (dashed, in the same colour), with the
 * targets' band around the measurement where they are judged (busbw
 * +/-CS_VALIDATE_BUSBW_TARGET at sizes >= 1 MiB, time
 * +/-CS_VALIDATE_TIME_TARGET at sizes <= 64 KiB): a predicted point inside
 * it is within target at that size. The caption says which numbers are
 * measured and which are the model's. */
char *cs_validate_svg(const cs_validate_plot_t *p, const cs_validate_plot_table_t *t, int n);

#endif
