#include "config.h"
#include "util/cs_error.h"

G_DEFINE_QUARK(cs-error-quark, cs_error)

int cs_error_exit_status(const GError *err)
{
    if (err != NULL && err->domain == CS_ERROR && err->code == CS_ERROR_RESOURCE)
        return CS_EXIT_RESOURCE;
    if (err != NULL && err->domain == CS_ERROR && err->code == CS_ERROR_SIM_FAILED)
        return CS_EXIT_FINDINGS;
    return CS_EXIT_INPUT;
}

void cs_set_error_at(GError **err, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    if (file != NULL && line > 0)
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s:%d: %s", file, line, msg);
    else if (file != NULL)
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: %s", file, msg);
    else
        g_set_error_literal(err, CS_ERROR, CS_ERROR_INPUT, msg);
}

void cs_set_value_error_v(GError **err, const char *origin, const char *flag, const char *fmt, va_list ap)
{
    g_autofree char *msg = g_strdup_vprintf(fmt, ap);
    if (origin != NULL)
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: %s", origin, msg);
    else
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: %s: %s", flag, msg);
}

void cs_set_flag_error(GError **err, const char *flag, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: %s: %s", flag, msg);
}
