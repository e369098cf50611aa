/* Error reporting for input problems: one line, "FILE:LINE: what is wrong;
 * what was expected", carried in a GError and printed by the CLI with exit
 * status 2. Programmer errors use g_assert instead. */
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
    CS_ERROR_STOPPED      /* a real rank stopped because another one failed */
} cs_error_code_t;

/* Sets *err to "FILE:LINE: message" (or "FILE: message" when line <= 0, or
 * just the message when file is NULL). */
void cs_set_error_at(GError **err, const char *file, int line,
                     const char *fmt, ...) G_GNUC_PRINTF(4, 5);

/* Sets *err to "collsim: FLAG: message" for command-line problems. */
void cs_set_flag_error(GError **err, const char *flag, const char *fmt, ...)
    G_GNUC_PRINTF(3, 4);

#endif
