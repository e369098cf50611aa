/* nccl-tests -J output (src/util.cu, JSON_FILE_VERSION 3): one object with
 * "args", "env", "nccl_version", "config" {nthreads, ngpus, devices [...]},
 * "results" [{size, count, type, redop, root, out_of_place {time|cpu_time,
 * alg_bw, bus_bw, nwrong}, in_place {...}}] and "average_bus_bandwidth"
 * {bandwidth}. A small strict JSON reader builds a tree (with line numbers
 * for messages); the tree is then mapped onto tables. */
#include "config.h"
#include "io/cs_nccltests_log-int.h"
#include "io/cs_nccl_info.h"
#include "util/cs_error.h"

#include <math.h>
#include <string.h>

#define EXPECTED_JSON "expected nccl-tests -J output"
#define MAX_DEPTH 64

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } jtype_t;

typedef struct jnode {
    jtype_t type;
    int line;
    double num;
    gboolean b;
    char *str;
    GPtrArray *items;   /* J_ARR, J_OBJ: jnode_t* */
    GPtrArray *keys;    /* J_OBJ: char*, parallel to items */
} jnode_t;

static void jnode_free(jnode_t *n)
{
    if (n == NULL)
        return;
    g_free(n->str);
    if (n->items)
        g_ptr_array_unref(n->items);
    if (n->keys)
        g_ptr_array_unref(n->keys);
    g_free(n);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC(jnode_t, jnode_free)

typedef struct {
    const char *s;
    size_t len, pos;
    int line;
    const char *name;
} jparser_t;

static jnode_t *jnode_new(jtype_t type, int line)
{
    jnode_t *n = g_new0(jnode_t, 1);
    n->type = type;
    n->line = line;
    if (type == J_ARR || type == J_OBJ)
        n->items = g_ptr_array_new_with_free_func((GDestroyNotify)jnode_free);
    if (type == J_OBJ)
        n->keys = g_ptr_array_new_with_free_func(g_free);
    return n;
}

static void skip_ws(jparser_t *p)
{
    while (p->pos < p->len) {
        char c = p->s[p->pos];
        if (c == '\n')
            p->line++;
        else if (c != ' ' && c != '\t' && c != '\r')
            break;
        p->pos++;
    }
}

static gboolean syntax(jparser_t *p, GError **err, const char *expected)
{
    if (p->pos >= p->len)
        cs_set_error_at(err, p->name, p->line, "JSON ends too early; expected %s", expected);
    else
        cs_set_error_at(err, p->name, p->line, "JSON syntax error at '%c'; expected %s",
                        g_ascii_isprint(p->s[p->pos]) ? p->s[p->pos] : '?', expected);
    return FALSE;
}

static int hexval(char c)
{
    return g_ascii_isxdigit(c) ? g_ascii_xdigit_value(c) : -1;
}

static gboolean read_hex4(jparser_t *p, gunichar *u_p)
{
    if (p->pos + 4 > p->len)
        return FALSE;
    gunichar u = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(p->s[p->pos + i]);
        if (h < 0)
            return FALSE;
        u = u * 16 + (gunichar)h;
    }
    p->pos += 4;
    *u_p = u;
    return TRUE;
}

static char *parse_string(jparser_t *p, GError **err)
{
    g_autoptr(GString) out = g_string_new(NULL);
    p->pos++; /* opening quote */
    while (p->pos < p->len) {
        unsigned char c = (unsigned char)p->s[p->pos++];
        if (c == '"')
            return g_string_free(g_steal_pointer(&out), FALSE);
        if (c < 0x20) {
            p->pos--;
            syntax(p, err, "a closing '\"' before the end of the line");
            return NULL;
        }
        if (c != '\\') {
            g_string_append_c(out, (char)c);
            continue;
        }
        if (p->pos >= p->len)
            break;
        char e = p->s[p->pos++];
        gunichar u;
        switch (e) {
        case '"': case '\\': case '/': g_string_append_c(out, e); break;
        case 'b': g_string_append_c(out, '\b'); break;
        case 'f': g_string_append_c(out, '\f'); break;
        case 'n': g_string_append_c(out, '\n'); break;
        case 'r': g_string_append_c(out, '\r'); break;
        case 't': g_string_append_c(out, '\t'); break;
        case 'u':
            if (!read_hex4(p, &u)) {
                syntax(p, err, "four hex digits after \\u");
                return NULL;
            }
            if (u >= 0xD800 && u < 0xDC00 && p->pos + 6 <= p->len && p->s[p->pos] == '\\' &&
                p->s[p->pos + 1] == 'u') {
                gunichar lo;
                p->pos += 2;
                if (read_hex4(p, &lo) && lo >= 0xDC00 && lo < 0xE000)
                    u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
                else
                    u = 0xFFFD;
            } else if (u >= 0xD800 && u < 0xE000) {
                u = 0xFFFD;
            }
            if (u == 0)
                u = 0xFFFD; /* keep strings NUL-free */
            g_string_append_unichar(out, u);
            break;
        default:
            p->pos--;
            syntax(p, err, "an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
            return NULL;
        }
    }
    syntax(p, err, "a closing '\"'");
    return NULL;
}

static jnode_t *parse_value(jparser_t *p, int depth, GError **err);

static jnode_t *parse_container(jparser_t *p, int depth, GError **err)
{
    gboolean obj = p->s[p->pos] == '{';
    char close = obj ? '}' : ']';
    g_autoptr(jnode_t) n = jnode_new(obj ? J_OBJ : J_ARR, p->line);
    p->pos++;
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == close) {
        p->pos++;
        return g_steal_pointer(&n);
    }
    for (;;) {
        skip_ws(p);
        if (obj) {
            if (p->pos >= p->len || p->s[p->pos] != '"') {
                syntax(p, err, "a key in double quotes");
                return NULL;
            }
            char *key = parse_string(p, err);
            if (key == NULL)
                return NULL;
            g_ptr_array_add(n->keys, key);
            skip_ws(p);
            if (p->pos >= p->len || p->s[p->pos] != ':') {
                syntax(p, err, "':' after the key");
                return NULL;
            }
            p->pos++;
        }
        jnode_t *v = parse_value(p, depth + 1, err);
        if (v == NULL) {
            if (obj)
                g_ptr_array_set_size(n->keys, n->keys->len - 1);
            return NULL;
        }
        g_ptr_array_add(n->items, v);
        skip_ws(p);
        if (p->pos < p->len && p->s[p->pos] == ',') {
            p->pos++;
            continue;
        }
        if (p->pos < p->len && p->s[p->pos] == close) {
            p->pos++;
            return g_steal_pointer(&n);
        }
        syntax(p, err, obj ? "',' or '}'" : "',' or ']'");
        return NULL;
    }
}

static jnode_t *parse_value(jparser_t *p, int depth, GError **err)
{
    skip_ws(p);
    if (depth > MAX_DEPTH) {
        cs_set_error_at(err, p->name, p->line, "JSON nested deeper than %d levels; " EXPECTED_JSON,
                        MAX_DEPTH);
        return NULL;
    }
    if (p->pos >= p->len) {
        syntax(p, err, "a value");
        return NULL;
    }
    char c = p->s[p->pos];
    if (c == '{' || c == '[')
        return parse_container(p, depth, err);
    if (c == '"') {
        int line = p->line;
        char *s = parse_string(p, err);
        if (s == NULL)
            return NULL;
        jnode_t *n = jnode_new(J_STR, line);
        n->str = s;
        return n;
    }
    static const struct { const char *word; jtype_t type; gboolean b; } lits[] = {
        { "true", J_BOOL, TRUE }, { "false", J_BOOL, FALSE }, { "null", J_NULL, FALSE },
    };
    for (guint i = 0; i < G_N_ELEMENTS(lits); i++) {
        size_t l = strlen(lits[i].word);
        if (p->len - p->pos >= l && memcmp(p->s + p->pos, lits[i].word, l) == 0) {
            p->pos += l;
            jnode_t *n = jnode_new(lits[i].type, p->line);
            n->b = lits[i].b;
            return n;
        }
    }
    size_t b = p->pos;
    while (p->pos < p->len && strchr("+-0123456789.eE", p->s[p->pos]) != NULL && p->s[p->pos] != '\0')
        p->pos++;
    if (p->pos == b || p->pos - b > 64) {
        p->pos = b;
        syntax(p, err, "a value");
        return NULL;
    }
    char num[72];
    memcpy(num, p->s + b, p->pos - b);
    num[p->pos - b] = '\0';
    char *end = NULL;
    double v = g_ascii_strtod(num, &end);
    if (end == num || *end != '\0' || !isfinite(v)) {
        p->pos = b;
        syntax(p, err, "a number");
        return NULL;
    }
    jnode_t *n = jnode_new(J_NUM, p->line);
    n->num = v;
    return n;
}

static const jnode_t *jget(const jnode_t *o, const char *key)
{
    if (o == NULL || o->type != J_OBJ)
        return NULL;
    for (guint i = 0; i < o->keys->len; i++)
        if (strcmp(g_ptr_array_index(o->keys, i), key) == 0)
            return g_ptr_array_index(o->items, i);
    return NULL;
}

static gboolean jnum(const jnode_t *n, double *v_p)
{
    if (n == NULL || n->type != J_NUM)
        return FALSE;
    *v_p = n->num;
    return TRUE;
}

/* a count, in [lo, hi] and whole */
static gboolean jcount(const jnode_t *n, double lo, double hi, guint64 *v_p)
{
    double v;
    if (!jnum(n, &v) || v < lo || v > hi || v != floor(v))
        return FALSE;
    *v_p = (guint64)v;
    return TRUE;
}

/* One placement: {time|cpu_time, alg_bw, bus_bw, nwrong}; null or "nan" = missing. */
static gboolean read_placement(const jnode_t *pl, const char *name, int idx, const char *which,
                               cs_result_row_t *r, int k, GError **err)
{
    if (pl == NULL || pl->type == J_NULL)
        return TRUE;
    if (pl->type != J_OBJ) {
        cs_set_error_at(err, name, pl->line, "result %d: '%s' is not an object; " EXPECTED_JSON, idx, which);
        return FALSE;
    }
    const jnode_t *t = jget(pl, "time");
    if (t == NULL)
        t = jget(pl, "cpu_time");
    const jnode_t *f[3] = { t, jget(pl, "alg_bw"), jget(pl, "bus_bw") };
    static const char *names[3] = { "time", "alg_bw", "bus_bw" };
    double v[3];
    for (int j = 0; j < 3; j++) {
        if (f[j] != NULL && f[j]->type == J_STR && g_ascii_strcasecmp(f[j]->str, "nan") == 0)
            return TRUE; /* jsonDouble writes NaN as "nan": nothing measured */
        if (!jnum(f[j], &v[j]) || v[j] < 0) {
            cs_set_error_at(err, name, f[j] ? f[j]->line : pl->line,
                            "result %d: %s '%s' missing or not a number >= 0; " EXPECTED_JSON, idx, which,
                            names[j]);
            return FALSE;
        }
        if (v[j] > (j == 0 ? CS_NT_TIME_MAX_US : CS_NT_BW_MAX)) {
            cs_set_error_at(err, name, f[j]->line, "result %d: %s '%s' %g is beyond any run; expected at most %s",
                            idx, which, names[j], v[j], j == 0 ? "86400000000 (a day, in us)" : "1000000 GB/s");
            return FALSE;
        }
    }
    r->time_us[k] = v[0];
    r->algbw[k] = v[1];
    r->busbw[k] = v[2];
    const jnode_t *w = jget(pl, "nwrong");
    double wv;
    r->wrong[k] = (jnum(w, &wv) && wv >= 0 && wv < (double)G_MAXLONG) ? (long)wv : -1;
    return TRUE;
}

static gboolean read_row(const jnode_t *o, const char *name, int idx, cs_nt_row_t *row_p, GError **err)
{
    cs_nt_row_t row = { .line = o->line };
    cs_result_row_t *r = &row.r;
    if (o->type != J_OBJ) {
        cs_set_error_at(err, name, o->line, "result %d is not an object; " EXPECTED_JSON, idx);
        return FALSE;
    }
    if (!jcount(jget(o, "size"), 0, 9.2e18, &r->size) || !jcount(jget(o, "count"), 0, 9.2e18, &r->count)) {
        cs_set_error_at(err, name, o->line, "result %d: 'size' or 'count' missing or not a whole number; "
                        EXPECTED_JSON, idx);
        return FALSE;
    }
    const jnode_t *ty = jget(o, "type"), *op = jget(o, "redop"), *root = jget(o, "root");
    if (ty == NULL || ty->type != J_STR || !cs_dtype_parse(ty->str, &r->dtype)) {
        cs_set_error_at(err, name, ty ? ty->line : o->line,
                        "result %d: 'type' missing or not a nccl-tests type; expected float, half, "
                        "bfloat16, double, int8, uint8, int32, uint32, int64, uint64, f8e4m3 or f8e5m2", idx);
        return FALSE;
    }
    if (op == NULL || op->type != J_STR) {
        row.redop_missing = TRUE;
    } else if (g_ascii_strcasecmp(op->str, "none") == 0) {
        row.redop_none = TRUE;
    } else if (g_ascii_strcasecmp(op->str, "mulsum") == 0) {
        r->redop = CS_REDOP_SUM;
    } else if (!cs_redop_parse(op->str, &r->redop)) {
        cs_set_error_at(err, name, op->line,
                        "result %d: unknown reduction '%s'; expected sum, prod, min, max, avg, mulsum or none",
                        idx, op->str);
        return FALSE;
    }
    /* writeBenchmarkLinePreamble writes the root as a padded string */
    r->root = -1;
    if (root == NULL) {
        row.root_missing = TRUE;
    } else {
        g_autofree char *s = root->type == J_STR ? g_strstrip(g_strdup(root->str))
                           : root->type == J_NUM ? g_strdup_printf("%.0f", root->num) : g_strdup("");
        gint64 v;
        if (!g_ascii_string_to_signed(s, 10, -1, G_MAXINT, &v, NULL)) {
            cs_set_error_at(err, name, root->line, "result %d: bad root; expected -1 or a rank", idx);
            return FALSE;
        }
        r->root = (int)v;
    }
    r->nccl_est_us = -1;
    for (int k = 0; k < 2; k++) {
        r->time_us[k] = r->algbw[k] = r->busbw[k] = -1;
        r->wrong[k] = -1;
    }
    if (!read_placement(jget(o, "out_of_place"), name, idx, "out_of_place", r, CS_OOP, err) ||
        !read_placement(jget(o, "in_place"), name, idx, "in_place", r, CS_INP, err))
        return FALSE;
    /* data moved in no time: nccl-tests prints at least a launch's */
    if (r->size > 0 && r->time_us[CS_OOP] == 0) {
        cs_set_error_at(err, name, o->line, "result %d: out_of_place time 0 us for %" G_GUINT64_FORMAT
                        " bytes; expected a time above 0", idx, (guint64)r->size);
        return FALSE;
    }
    *row_p = row;
    return TRUE;
}

/* args after the binary: -g / -t (the JSON is written by rank 0 and does
 * not carry the launcher's process count; "devices" does). */
static void args_info(const jnode_t *args, cs_nt_kind_t *kind_p, char **prog_p)
{
    if (args == NULL || args->type != J_ARR || args->items->len == 0)
        return;
    const jnode_t *a0 = g_ptr_array_index(args->items, 0);
    if (a0->type == J_STR) {
        *kind_p = cs_nt_kind_from_name(a0->str);
        *prog_p = g_strdup(a0->str);
    }
}

gboolean cs_nt_parse_json(cs_nccltests_log_t *log, const char *buf, size_t len, const char *name,
                          const cs_nccltests_hint_t *hint, GError **err)
{
    jparser_t p = { .s = buf, .len = len, .line = 1, .name = name };
    g_autoptr(jnode_t) root = parse_value(&p, 0, err);
    if (root == NULL)
        return FALSE;
    skip_ws(&p);
    if (p.pos < p.len) {
        syntax(&p, err, "the end of the JSON document");
        return FALSE;
    }
    if (root->type != J_OBJ) {
        cs_set_error_at(err, name, root->line, "JSON is not an object; " EXPECTED_JSON);
        return FALSE;
    }
    const jnode_t *results = jget(root, "results");
    if (results == NULL || results->type != J_ARR) {
        cs_set_error_at(err, name, root->line, "JSON has no 'results' list; " EXPECTED_JSON);
        return FALSE;
    }

    cs_nt_kind_t kind = CS_NT_UNKNOWN;
    g_autofree char *prog = NULL;
    args_info(jget(root, "args"), &kind, &prog);
    double v;
    if (jnum(jget(root, "nccl_version"), &v) && v > 0 && v < 1e6) {
        long code = (long)v;
        log->nccl_version = code >= 10000
            ? g_strdup_printf("%ld.%ld.%ld", code / 10000, (code % 10000) / 100, code % 100)
            : g_strdup_printf("%ld.%ld.%ld", code / 1000, (code % 1000) / 100, code % 100);
    }
    if (prog != NULL)
        log->command = g_strdup(prog);
    log->json = TRUE;

    /* ranks = processes (one "devices" entry each) x nthreads x ngpus */
    const jnode_t *config = jget(root, "config");
    const jnode_t *devices = jget(config, "devices");
    guint64 nthreads = 1, ngpus = 1;
    int nranks = 0, nnodes = 0;
    /* as a text log's "nThread T nGpus G" (up to 1024 each) */
    if (!jcount(jget(config, "nthreads"), 1, 1024, &nthreads))
        nthreads = 1;
    if (!jcount(jget(config, "ngpus"), 1, 1024, &ngpus))
        ngpus = 1;
    if (devices != NULL && devices->type == J_ARR && devices->items->len > 0) {
        guint64 n = (guint64)devices->items->len * nthreads * ngpus;
        nranks = n <= G_MAXINT ? (int)n : 0;
        g_autoptr(GPtrArray) hosts = g_ptr_array_new();
        for (guint i = 0; i < devices->items->len; i++) {
            const jnode_t *h = jget(g_ptr_array_index(devices->items, i), "hostname");
            if (h == NULL || h->type != J_STR) {
                g_ptr_array_set_size(hosts, 0);
                break;
            }
            guint j;
            for (j = 0; j < hosts->len && strcmp(g_ptr_array_index(hosts, j), h->str) != 0; j++)
                ;
            if (j == hosts->len)
                g_ptr_array_add(hosts, h->str);
        }
        nnodes = (int)hosts->len;
    }
    /* the run's NCCL_* environment, for the reader of the notes */
    g_autoptr(GString) envs = g_string_new(NULL);
    const jnode_t *env = jget(root, "env");
    if (env != NULL && env->type == J_ARR)
        for (guint i = 0; i < env->items->len; i++) {
            const jnode_t *e = g_ptr_array_index(env->items, i);
            if (e->type == J_STR && g_str_has_prefix(e->str, "NCCL_") && strchr(e->str, '=') != NULL) {
                g_string_append_printf(envs, "%s%s", envs->len ? " " : "", e->str);
                g_ptr_array_add(log->env, g_strdup(e->str));
                g_array_append_val(log->env_lines, e->line);
            }
        }
    double avg = 0;
    gboolean has_avg = jnum(jget(jget(root, "average_bus_bandwidth"), "bandwidth"), &avg);

    g_autoptr(cs_nt_table_t) t = NULL;
    guint64 last = 0;
    for (guint i = 0; i <= results->items->len; i++) {
        cs_nt_row_t row;
        if (i < results->items->len &&
            !read_row(g_ptr_array_index(results->items, i), name, (int)i + 1, &row, err))
            return FALSE;
        /* a new sweep (-d all, -o all) starts a new table */
        if (t != NULL && (i == results->items->len || row.r.size < last)) {
            if (i == results->items->len && has_avg) {
                t->avg_busbw = avg;
                t->has_avg = TRUE;
            }
            cs_nt_table_t *done = g_steal_pointer(&t);
            guint nresults = log->results->len;
            gboolean ok = cs_nt_table_finish(log, done, name, hint, err);
            cs_nt_table_free(done);
            if (!ok)
                return FALSE;
            /* the first device's name, as a text log's '# Rank' lines give it */
            const jnode_t *d0 = devices != NULL && devices->type == J_ARR && devices->items->len > 0
                                    ? jget(g_ptr_array_index(devices->items, 0), "device_info") : NULL;
            if (log->results->len > nresults && d0 != NULL && d0->type == J_STR && d0->str[0] != '\0') {
                cs_nccl_info_t *info = cs_nccl_info_new();
                cs_nccl_info_rank_gpu(info, d0->str, strlen(d0->str), d0->line);
                cs_nccl_info_t **slot = (cs_nccl_info_t **)&g_ptr_array_index(log->nccl_info, log->nccl_info->len - 1);
                cs_nccl_info_free(*slot);
                *slot = info;
            }
        }
        if (i == results->items->len)
            break;
        if (t == NULL) {
            t = cs_nt_table_new(row.line);
            t->kind = kind;
            if (kind != CS_NT_UNKNOWN)
                t->kind_from = g_strdup_printf("'%s' in \"args\"", prog);
            t->nranks = nranks;
            t->nranks_from = g_strdup("\"config\" (devices x nthreads x ngpus)");
            t->nnodes = nnodes;
            /* the process layout, as a text log's "nThread T nGpus G" */
            if (devices != NULL && devices->type == J_ARR && devices->items->len > 0) {
                t->threads = (int)nthreads;
                t->gpus = (int)ngpus;
            }
            if (envs->len > 0)
                g_ptr_array_add(t->notes, g_strdup_printf("the run's environment: %s", envs->str));
        }
        /* as a text log's #wrong columns (cs_nccltests_log.c) */
        if ((row.r.wrong[CS_OOP] > 0 || row.r.wrong[CS_INP] > 0) && t->row_notes++ < CS_NT_MAX_ROW_NOTES)
            g_ptr_array_add(t->notes, g_strdup_printf("line %d: nccl-tests reports wrong results (%ld out-of-place, "
                                                      "%ld in-place)", row.line, MAX(0, row.r.wrong[CS_OOP]),
                                                      MAX(0, row.r.wrong[CS_INP])));
        g_array_append_val(t->rows, row);
        last = row.r.size;
    }
    if (log->ntables == 0) {
        cs_set_error_at(err, name, results->line, "JSON 'results' is empty; " EXPECTED_JSON);
        return FALSE;
    }
    return TRUE;
}
