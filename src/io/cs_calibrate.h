/* Calibration: fitting the time models' parameters (cs_params) to measured
 * results. A set holds measured results, each with the topology and NCCL
 * communicator it was measured on; the fit finds which parameters these
 * results constrain and moves them to minimise a robust sum of squared log
 * errors (docs/calibration.md). No command line here (cmd_calibrate.c). */
#ifndef CS_CALIBRATE_H
#define CS_CALIBRATE_H

#include "models/cs_decide.h"
#include "models/cs_params.h"
#include "models/cs_result.h"
#include "models/cs_topo.h"
#include "sim/cs_engine.h"

/* The two size ranges (as cs_validate.h judges them). */
typedef enum {
    CS_CALIB_NONE = 0,
    CS_CALIB_SMALL,     /* sizes <= 64 KiB: time error; latency terms */
    CS_CALIB_LARGE      /* sizes >= 1 MiB: bus bandwidth error; bandwidth terms */
} cs_calib_range_t;

typedef struct cs_calib_set cs_calib_set_t;

cs_calib_set_t *cs_calib_set_new(const cs_engine_ops_t *ops);
void cs_calib_set_free(cs_calib_set_t *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(cs_calib_set_t, cs_calib_set_free)

/* Adds one measured result (out-of-place times) measured on 'topo' with
 * the NCCL settings of 'comm'; takes ownership of all three. 'label' names
 * it in messages and in the output's header ("FILE table 2"). Fails when
 * the result does not fit the topology (ranks, roots) or has no usable
 * size. */
gboolean cs_calib_set_add(cs_calib_set_t *s, const char *label, cs_result_t *measured, cs_topo_t *topo,
                          cs_comm_t *comm, GError **err);
int cs_calib_set_count(const cs_calib_set_t *s);

typedef struct {
    double threshold;    /* |change of log time| for a 10 % change of the parameter
                          * above which a size counts as constraining it (default 0.005) */
    int min_sizes;       /* sizes needed to fit a parameter (default 2) */
    int sweeps;          /* coordinate-descent sweeps at most (default 40) */
    double scale;        /* scale of the robust (Cauchy) loss of the log error (default 0.1) */
    double min_move;     /* relative move below which a parameter is kept (default 0.005) */
    /* Optional: told as each step of the fit starts (a parameter's
     * sensitivity, a sweep), for a long fit's progress line; NULL: none. */
    void (*step)(void *data, const char *label);
    void *step_data;
} cs_calib_opts_t;

void cs_calib_opts_init(cs_calib_opts_t *o);

typedef struct {
    cs_calib_range_t range[CS_P_COUNT];  /* where the parameter was fitted; NONE = not constrained */
    int twin[CS_P_COUNT];                /* not fitted: moves the predictions as this one does; -1 */
    gboolean moved[CS_P_COUNT];          /* fitted and moved: written to the file */
    int nsizes[CS_P_COUNT], nresults[CS_P_COUNT];   /* constraining sizes and results */
    double before[CS_P_COUNT], after[CS_P_COUNT];
    double med_before[CS_P_COUNT], med_after[CS_P_COUNT];   /* median |error| on its sizes */
    /* all sizes of each range (index CS_CALIB_SMALL, CS_CALIB_LARGE) */
    int n_range[3];
    double med_range_before[3], med_range_after[3];
    int sweeps_done;
} cs_calib_fit_t;

/* Fits from 'start' (defaults or a previous calibration). On success
 * *params_p is 'start' with the moved parameters changed (rounded to 4
 * significant digits, as written) and *fit_p says what was done. */
gboolean cs_calibrate_fit(cs_calib_set_t *s, const cs_params_t *start, const cs_calib_opts_t *opts,
                          cs_params_t *params_p, cs_calib_fit_t *fit_p, GError **err);

/* The calibration file: 'header' (lines, without '#') then [params] with
 * the moved parameters, each after a comment with its before/after. */
char *cs_calibrate_ini(const cs_calib_set_t *s, const cs_params_t *start, const cs_params_t *fitted,
                       const cs_calib_fit_t *fit, const char *header);

/* The physical range of a fitted value: where a parameter can lie on
 * healthy hardware, with the source of its bounds. A value outside it says
 * that the measured system is losing time the model's parts do not explain
 * (a misconfiguration, a degraded link), not a property of the hardware.
 * Every parameter has one: measured bounds where a source gives them
 * (eff.net: perftest and packet headers), else the built-in value's own
 * bracket, half to twice the value fitted on healthy systems (each
 * default's source is in cs_params_list.h). Returns the text of the
 * range ("0.8 to 0.99 (...)"), and *inside_p. */
char *cs_calib_physical_range(cs_param_id_t id, double v, gboolean *inside_p);
/* The range's bounds, and what a value outside it means, as one phrase:
 * past the costly side (a latency above, a rate below) the measured
 * system loses what healthy parts do not; past the other the fit takes up
 * another error. NULL inside the range. */
void cs_calib_physical_bounds(cs_param_id_t id, double *lo_p, double *hi_p);
const char *cs_calib_outside_reading(cs_param_id_t id, double v);

/* The remark every calibration carries: its errors after the fit are
 * in-sample (measured on the sizes it was fitted to), so they are no
 * validation. One line, without '#'. */
const char *cs_calib_in_sample_note(void);

/* Whether a parameter is ever fitted: the protocols' payload fractions
 * are NCCL's wire formats (device.h), not properties of hardware. */
gboolean cs_calib_param_fittable(cs_param_id_t id);

#endif
