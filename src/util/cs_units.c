#include "config.h"
#include "util/cs_units.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

gboolean cs_text_one_line(const char *s)
{
    for (const char *c = s; c != NULL && *c != '\0'; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            return FALSE;
    return TRUE;
}

gboolean cs_parse_double(const char *s, double *v_p)
{
    if (s == NULL)
        return FALSE;
    while (g_ascii_isspace(*s))
        s++;
    if (*s == '\0')
        return FALSE;
    char *end = NULL;
    errno = 0;
    double v = g_ascii_strtod(s, &end);
    if (errno != 0 || end == s || !isfinite(v))
        return FALSE;
    while (g_ascii_isspace(*end))
        end++;
    if (*end != '\0')
        return FALSE;
    *v_p = v;
    return TRUE;
}

gboolean cs_parse_int(const char *s, gint64 min, gint64 max, gint64 *v_p)
{
    return cs_parse_int_base(s, 10, min, max, v_p);
}

gboolean cs_parse_int_base(const char *s, int base, gint64 min, gint64 max, gint64 *v_p)
{
    if (s == NULL)
        return FALSE;
    while (g_ascii_isspace(*s))
        s++;
    if (*s == '\0')
        return FALSE;
    char *end = NULL;
    errno = 0;
    gint64 v = g_ascii_strtoll(s, &end, base);
    if (errno != 0 || end == s)
        return FALSE;
    while (g_ascii_isspace(*end))
        end++;
    if (*end != '\0' || v < min || v > max)
        return FALSE;
    *v_p = v;
    return TRUE;
}

/* Splits "12.5GB/s" into the number and the unit that follows it. */
static gboolean split_number(const char *s, double *num_p, const char **unit_p)
{
    if (s == NULL)
        return FALSE;
    while (g_ascii_isspace(*s))
        s++;
    if (*s == '\0' || *s == '-' || *s == '+')
        return FALSE;
    char *end = NULL;
    errno = 0;
    double v = g_ascii_strtod(s, &end);
    if (errno != 0 || end == s || !isfinite(v) || v < 0)
        return FALSE;
    while (g_ascii_isspace(*end))
        end++;
    *num_p = v;
    *unit_p = end;
    return TRUE;
}

gboolean cs_parse_size(const char *s, guint64 *bytes_p)
{
    double num;
    const char *unit;
    if (!split_number(s, &num, &unit))
        return FALSE;
    double mult = 1;
    /* nccl-tests's parsesize: K, M, G (either case) are powers of 1024. */
    switch (g_ascii_toupper(*unit)) {
    case '\0': break;
    case 'B': if (unit[1] != '\0') return FALSE; break;
    case 'K': mult = 1024.0; unit++; break;
    case 'M': mult = 1024.0 * 1024; unit++; break;
    case 'G': mult = 1024.0 * 1024 * 1024; unit++; break;
    case 'T': mult = 1024.0 * 1024 * 1024 * 1024; unit++; break;
    default: return FALSE;
    }
    if (mult > 1) {
        if (g_ascii_strcasecmp(unit, "") != 0 && g_ascii_strcasecmp(unit, "B") != 0 &&
            g_ascii_strcasecmp(unit, "iB") != 0)
            return FALSE;
    }
    double bytes = num * mult;
    if (bytes >= 18446744073709551615.0 || bytes != floor(bytes))
        return FALSE;
    *bytes_p = (guint64)bytes;
    return TRUE;
}

gboolean cs_parse_bandwidth(const char *s, double *bytes_per_s_p)
{
    double num;
    const char *unit;
    if (!split_number(s, &num, &unit))
        return FALSE;
    double mult = 1;
    const char *u = unit;
    switch (*u) {
    case 'k': case 'K': mult = 1e3; u++; break;
    case 'M': mult = 1e6; u++; break;
    case 'G': mult = 1e9; u++; break;
    case 'T': mult = 1e12; u++; break;
    default: break;
    }
    double per_unit;
    if (*unit == '\0')
        per_unit = 1;                          /* plain number: bytes/s */
    else if (strcmp(u, "bps") == 0 || strcmp(u, "b/s") == 0 || strcmp(u, "bit/s") == 0)
        per_unit = 1.0 / 8;
    else if (strcmp(u, "Bps") == 0 || strcmp(u, "B/s") == 0)
        per_unit = 1;
    else
        return FALSE;
    double v = num * mult * per_unit;
    if (!(v > 0) || !isfinite(v))
        return FALSE;
    *bytes_per_s_p = v;
    return TRUE;
}

gboolean cs_parse_time(const char *s, double *seconds_p)
{
    double num;
    const char *unit;
    if (!split_number(s, &num, &unit))
        return FALSE;
    double mult;
    if (*unit == '\0' || strcmp(unit, "s") == 0)
        mult = 1;
    else if (strcmp(unit, "ms") == 0)
        mult = 1e-3;
    else if (strcmp(unit, "us") == 0)
        mult = 1e-6;
    else if (strcmp(unit, "ns") == 0)
        mult = 1e-9;
    else if (strcmp(unit, "ps") == 0)
        mult = 1e-12;
    else
        return FALSE;
    *seconds_p = num * mult;
    return TRUE;
}

char *cs_format_bandwidth(double bps)
{
    double bits = bps * 8;
    if (bits >= 1e9)
        return g_strdup_printf("%.4g Gb/s", bits / 1e9);
    if (bits >= 1e6)
        return g_strdup_printf("%.4g Mb/s", bits / 1e6);
    return g_strdup_printf("%.4g b/s", bits);
}

char *cs_format_time(double s)
{
    if (s >= 1)
        return g_strdup_printf("%.3g s", s);
    if (s >= 1e-3)
        return g_strdup_printf("%.3g ms", s * 1e3);
    if (s >= 1e-6)
        return g_strdup_printf("%.3g us", s * 1e6);
    return g_strdup_printf("%.3g ns", s * 1e9);
}

char *cs_format_size(guint64 b)
{
    static const char *units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    int u = 0;
    guint64 v = b;
    while (u < 4 && v >= 1024 && v % 1024 == 0) {
        v /= 1024;
        u++;
    }
    return g_strdup_printf("%" G_GUINT64_FORMAT " %s", v, units[u]);
}
