/* The parameter table: names, defaults, units and docs expanded from
 * CS_PARAM_LIST (cs_params_list.h, where each default's source is cited),
 * and the loader of calibration files ("[params] name = value"). */
#include "config.h"

#include <math.h>
#include <string.h>

#include "models/cs_params.h"
#include "util/cs_error.h"
#include "util/cs_units.h"
#include "util/cs_read_file.h"

typedef struct {
    const char *name;
    double def;
    const char *unit;
    const char *doc;
} param_info_t;

static const param_info_t param_info[CS_P_COUNT] = {
#define CS_PARAM(id, name, def, unit, doc) [CS_P_##id] = { name, def, unit, doc },
    CS_PARAM_LIST
#undef CS_PARAM
};

void cs_params_init_defaults(cs_params_t *p)
{
    memset(p, 0, sizeof *p);
    for (int i = 0; i < CS_P_COUNT; i++)
        p->v[i] = param_info[i].def;
}

void cs_params_clear(cs_params_t *p)
{
    g_clear_pointer(&p->calibration_source, g_free);
}

const char *cs_param_name(cs_param_id_t id)
{
    g_return_val_if_fail(id >= 0 && id < CS_P_COUNT, NULL);
    return param_info[id].name;
}

const char *cs_param_unit(cs_param_id_t id)
{
    g_return_val_if_fail(id >= 0 && id < CS_P_COUNT, NULL);
    return param_info[id].unit;
}

const char *cs_param_doc(cs_param_id_t id)
{
    g_return_val_if_fail(id >= 0 && id < CS_P_COUNT, NULL);
    return param_info[id].doc;
}

double cs_param_default(cs_param_id_t id)
{
    g_return_val_if_fail(id >= 0 && id < CS_P_COUNT, 0.0);
    return param_info[id].def;
}

gboolean cs_param_lookup(const char *name, cs_param_id_t *id_p)
{
    if (name == NULL)
        return FALSE;
    for (int i = 0; i < CS_P_COUNT; i++)
        if (strcmp(param_info[i].name, name) == 0) {
            *id_p = (cs_param_id_t)i;
            return TRUE;
        }
    return FALSE;
}

/* What values a unit admits, as a phrase for error messages; NULL when v
 * is acceptable. */
static const char *unit_violation(const char *unit, double v)
{
    if (!isfinite(v))
        return "a finite number";
    /* the bounds are far beyond any machine, but keep the engines' integer
     * picoseconds and their printed times in range */
    if (strcmp(unit, "fraction") == 0)
        return (v >= 1e-6 && v <= 1) ? NULL : "a fraction from 0.000001 to 1";
    if (strcmp(unit, "GB/s") == 0)
        return (v >= 1e-6 && v <= 1e6) ? NULL : "a bandwidth from 0.000001 to 1000000 GB/s";
    if (strcmp(unit, "us") == 0)
        return (v >= 0 && v <= 1e6) ? NULL : "a time from 0 to 1000000 us";
    return v >= 0 && v <= 1e12 ? NULL : "a number from 0 to 1e12";
}

/* The file's shape (after its BOM), which GKeyFile would take more
 * loosely: every line blank, a comment, "[params]" once, or a "name =
 * value" line in it, each name once. One line, FILE:LINE, on the first
 * that is not. */
static gboolean check_shape(const char *text, const char *path, GError **err)
{
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    int params_line = 0;
    for (int i = 0; lines[i] != NULL; i++) {
        g_autofree char *s = g_strstrip(g_strdup(lines[i]));
        if (s[0] == '#' || s[0] == ';' || s[0] == '\0')
            continue;
        if (s[0] == '[') {
            if (strcmp(s, "[params]") != 0) {
                cs_set_error_at(err, path, i + 1, "group %s; expected only [params] in a calibration file", s);
                return FALSE;
            }
            if (params_line > 0) {
                cs_set_error_at(err, path, i + 1, "[params] again (first at line %d); expected one [params] group",
                                params_line);
                return FALSE;
            }
            params_line = i + 1;
            continue;
        }
        char *eq = strchr(s, '=');
        if (eq == NULL || params_line == 0) {
            cs_set_error_at(err, path, i + 1, "%s; expected name = value lines under [params]",
                            eq == NULL ? "not a name = value line" : "a value before [params]");
            return FALSE;
        }
        *eq = '\0';
        char *name = g_strstrip(s);
        gpointer first = g_hash_table_lookup(seen, name);
        if (first != NULL) {
            cs_set_error_at(err, path, i + 1, "%s is set twice (first at line %d); expected each parameter once", name,
                            GPOINTER_TO_INT(first));
            return FALSE;
        }
        g_hash_table_insert(seen, g_strdup(name), GINT_TO_POINTER(i + 1));
    }
    return TRUE;
}

/* Line (1-based) of key 'key' inside group 'group' of an INI text, found by
 * scanning the text itself since GKeyFile keeps no line numbers; 0 if not
 * found. */
static int ini_key_line(const char *text, const char *group, const char *key)
{
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    gboolean in_group = FALSE;
    for (int i = 0; lines[i] != NULL; i++) {
        g_autofree char *s = g_strstrip(g_strdup(lines[i]));
        if (s[0] == '#' || s[0] == ';' || s[0] == '\0')
            continue;
        if (s[0] == '[') {
            char *end = strchr(s, ']');
            in_group = end != NULL && (size_t)(end - s - 1) == strlen(group) &&
                       strncmp(s + 1, group, strlen(group)) == 0;
            continue;
        }
        if (!in_group)
            continue;
        char *eq = strchr(s, '=');
        if (eq == NULL)
            continue;
        *eq = '\0';
        if (strcmp(g_strstrip(s), key) == 0)
            return i + 1;
    }
    return 0;
}

/* Line of the first line that starts group 'group', 0 if none. */
static int ini_group_line(const char *text, const char *group)
{
    g_autofree char *hdr = g_strdup_printf("[%s]", group);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (int i = 0; lines[i] != NULL; i++) {
        g_autofree char *s = g_strstrip(g_strdup(lines[i]));
        if (strcmp(s, hdr) == 0)
            return i + 1;
    }
    return 0;
}

gboolean cs_params_load(cs_params_t *p, const char *path, GError **err)
{
    g_autofree char *text = NULL;
    gsize len = 0;
    g_autoptr(GError) local = NULL;

    if (!cs_read_file(path, "calibration file", "INI file", CS_READ_LIMIT_INI, &text, &len, err))
        return FALSE;
    const char *body = g_str_has_prefix(text, "\xEF\xBB\xBF") ? text + 3 : text;   /* a UTF-8 BOM, skipped */
    if (!check_shape(body, path, err))
        return FALSE;
    g_autoptr(GKeyFile) kf = g_key_file_new();
    if (!g_key_file_load_from_data(kf, body, len - (gsize)(body - text), G_KEY_FILE_NONE, &local)) {
        /* GKeyFile's own messages carry the line ("...on line 3"). */
        cs_set_error_at(err, path, 0, "%s; expected an INI file with a [params] group of name = value lines",
                        local->message);
        return FALSE;
    }
    if (!g_key_file_has_group(kf, "params")) {
        cs_set_error_at(err, path, 0, "no [params] group; expected [params] followed by name = value lines");
        return FALSE;
    }

    /* Apply to a copy, so that a bad line leaves *p as it was. */
    cs_params_t next = *p;
    gsize nkeys = 0;
    g_auto(GStrv) keys = g_key_file_get_keys(kf, "params", &nkeys, NULL);
    for (gsize k = 0; k < nkeys; k++) {
        int line = ini_key_line(body, "params", keys[k]);
        if (line == 0)
            line = ini_group_line(body, "params");
        cs_param_id_t id;
        if (strcmp(keys[k], "lat.launch.per_gpu") == 0) {
            /* collsim 0.1's additive launch cost per GPU of a process,
             * replaced by the host's issue rate (issue 12 item 2) */
            cs_set_error_at(err, path, line, "lat.launch.per_gpu is no longer a parameter (a thread driving G GPUs "
                            "now issues a call every G x %s); expected %s, or refit with collsim calibrate",
                            cs_param_name(CS_P_LAT_LAUNCH_CPU), cs_param_name(CS_P_LAT_LAUNCH_CPU));
            return FALSE;
        }
        if (!cs_param_lookup(keys[k], &id)) {
            cs_set_error_at(err, path, line, "unknown parameter '%s'; expected a name from docs/model-analytic.md "
                            "(e.g. %s, %s)", keys[k], cs_param_name(CS_P_LAT_LAUNCH), cs_param_name(CS_P_EFF_NVLINK));
            return FALSE;
        }
        g_autofree char *raw = g_key_file_get_value(kf, "params", keys[k], NULL);
        g_autofree char *val = g_strstrip(g_strdup(raw != NULL ? raw : ""));
        double v;
        /* decimal only: strtod would take hexadecimal too */
        if (strspn(val, "0123456789+-.eE") != strlen(val) || !cs_parse_double(val, &v)) {
            cs_set_error_at(err, path, line, "%s = '%s' is not a number; expected %s in %s",
                            keys[k], val, "a plain decimal number", cs_param_unit(id));
            return FALSE;
        }
        const char *why = unit_violation(cs_param_unit(id), v);
        if (why != NULL) {
            cs_set_error_at(err, path, line, "%s = %s is out of range; expected %s (%s)",
                            keys[k], val, why, cs_param_unit(id));
            return FALSE;
        }
        next.v[id] = v;
        next.calibrated[id] = TRUE;
    }
    next.calibration_source = g_strdup(path);
    g_free(p->calibration_source);
    *p = next;
    return TRUE;
}

double cs_params_nvlink_eff(const cs_params_t *p, int sm)
{
    if (sm >= 70 && sm < 80)
        return cs_params_get(p, CS_P_EFF_NVLINK_SM70);
    if (sm >= 90 && sm < 100)
        return cs_params_get(p, CS_P_EFF_NVLINK_SM90);
    return cs_params_get(p, CS_P_EFF_NVLINK);
}
