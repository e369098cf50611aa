/* Every tunable number of the hardware time models, in one table with
 * built-in defaults (each with its source in cs_params.c) that a calibration
 * file can override by name. Engines read values through cs_params_get();
 * they hold no magic numbers of their own. */
#ifndef CS_PARAMS_H
#define CS_PARAMS_H

#include <glib.h>

/* X-macro: CS_PARAM(id, "name", default, "unit", "what it is")
 * Names are dotted: <area>.<quantity>[.<qualifier>]. Sources of the default
 * values are comments at the definitions in cs_params.c. */
#include "models/cs_params_list.h"

typedef enum {
#define CS_PARAM(id, name, def, unit, doc) CS_P_##id,
    CS_PARAM_LIST
#undef CS_PARAM
    CS_P_COUNT
} cs_param_id_t;

typedef struct {
    double v[CS_P_COUNT];
    gboolean calibrated[CS_P_COUNT];   /* overridden by a calibration file */
    char *calibration_source;          /* file name, or NULL for built-in */
} cs_params_t;

void cs_params_init_defaults(cs_params_t *p);
void cs_params_clear(cs_params_t *p);
static inline double cs_params_get(const cs_params_t *p, cs_param_id_t id) { return p->v[id]; }
/* The host side of one call (seconds): a thread that drives
 * 'gpus_per_thread' GPUs (nccl-tests -g) issues their parts one after the
 * other, lat.launch.cpu each, + lat.launch.cpu.chan per channel beyond the
 * first whose work the host builds one by one ('work_channels': the call's
 * channels for NCCL <= 2.21, 1 after; cs_comm_host_work_channels),
 * + lat.launch.cpu.net when the call crosses the network,
 * + lat.launch.cpu.p2p per round of point-to-point peers (AlltoAll: every
 * rank; SendRecv: one), + lat.launch.cpu.api per NCCL call of the
 * benchmark's beyond the first ('extra_calls', cs_comm_p2p_extra_calls).
 * nccl-tests times calls issued back to back, so a call takes at least
 * this (cs_params_list.h). */
static inline double cs_params_launch_host_s(const cs_params_t *p, int gpus_per_thread, int work_channels,
                                             gboolean net, int p2p_rounds, int extra_calls)
{
    double per = cs_params_get(p, CS_P_LAT_LAUNCH_CPU) +
                 (MAX(1, work_channels) - 1) * cs_params_get(p, CS_P_LAT_LAUNCH_CPU_CHAN) +
                 (net ? cs_params_get(p, CS_P_LAT_LAUNCH_CPU_NET) : 0) +
                 MAX(0, p2p_rounds) * cs_params_get(p, CS_P_LAT_LAUNCH_CPU_P2P) +
                 MAX(0, extra_calls) * cs_params_get(p, CS_P_LAT_LAUNCH_CPU_API);
    return MAX(1, gpus_per_thread) * per * 1e-6;
}
const char *cs_param_name(cs_param_id_t id);
const char *cs_param_unit(cs_param_id_t id);
const char *cs_param_doc(cs_param_id_t id);
gboolean cs_param_lookup(const char *name, cs_param_id_t *id_p);
double cs_param_default(cs_param_id_t id);
/* The NVLink efficiency of a GPU's generation by its compute capability
 * (sm 70-79: eff.nvlink.sm70, 90-99: eff.nvlink.sm90, else eff.nvlink). */
double cs_params_nvlink_eff(const cs_params_t *p, int sm);

/* Loads "name = value" overrides from an INI file's [params] group
 * (the format collsim calibrate writes). Errors: FILE:LINE. */
gboolean cs_params_load(cs_params_t *p, const char *path, GError **err);

#endif
