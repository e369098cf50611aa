/* Error reporting for input problems: one line, "FILE:LINE: what is wrong;
 * what was expected", carried in a GError and printed by the CLI with exit
 * status 2 (3 for CS_ERROR_RESOURCE, 1 for CS_ERROR_SIM_FAILED:
 * cs_error_exit_status). Programmer
 * errors use g_assert instead. */
#ifndef CS_ERROR_H
#define CS_ERROR_H

#include <glib.h>

#define CS_ERROR (cs_error_quark())
GQuark cs_error_quark(void);

typedef enum {
    CS_ERROR_INPUT = 1,   /* malformed or out-of-range user input */
    CS_ERROR_TOPOLOGY,    /* a topology that NCCL could not use (no path...) */
    CS_ERROR_IO,          /* a file could not be read or written */
    CS_ERROR_UNSUPPORTED, /* valid, but not modelled / not built in */
    CS_ERROR_RUNTIME,     /* a real run failed (NCCL, CUDA, verbs) */
    CS_ERROR_STOPPED,     /* a real rank stopped because another one failed */
    CS_ERROR_RESOURCE,    /* an output could not be written, or the machine lacks
                           * what a run needs (memory): exit status 3 */
    CS_ERROR_SIM_FAILED   /* the simulated collective fails as NCCL would (a PFC
                           * deadlock, retries exhausted): a finding, exit status 1 */
} cs_error_code_t;

/* collsim's exit statuses (collsim(1), EXIT STATUS). */
#define CS_EXIT_OK 0
#define CS_EXIT_FINDINGS 1   /* findings or failed checks (validate, doctor) */
#define CS_EXIT_INPUT 2      /* bad input or usage */
#define CS_EXIT_RESOURCE 3   /* I/O or resource failure: a write failed, too little memory */

/* The exit status for a failure: CS_EXIT_RESOURCE for CS_ERROR_RESOURCE,
 * CS_EXIT_FINDINGS for CS_ERROR_SIM_FAILED, else CS_EXIT_INPUT. */
int cs_error_exit_status(const GError *err);

/* Sets *err to "FILE:LINE: message" (or "FILE: message" when line <= 0, or
 * just the message when file is NULL). */
void cs_set_error_at(GError **err, const char *file, int line,
                     const char *fmt, ...) G_GNUC_PRINTF(4, 5);

/* Sets *err to "collsim: FLAG: message" for command-line problems. */
void cs_set_flag_error(GError **err, const char *flag, const char *fmt, ...)
    G_GNUC_PRINTF(3, 4);

/* A value's error where it came from: "ORIGIN: message" when the value
 * came from a file (origin "FILE:LINE: key" or "FILE:LINE"), else
 * "collsim: FLAG: message" (CS_ERROR_INPUT either way); for the
 * variadic error helpers of the scenario and topology readers. */
void cs_set_value_error_v(GError **err, const char *origin, const char *flag, const char *fmt, va_list ap)
    G_GNUC_PRINTF(4, 0);

#endif
