/* collsim's result JSON read back (the format cs_write_json.c writes):
 * a small strict JSON reader that builds a tree with line numbers, then
 * the fields collsim wrote are mapped onto a cs_result_t. Unknown keys are
 * ignored (newer writers may add some). */
#include "config.h"
#include "io/cs_result_json.h"
#include "util/cs_error.h"

#include <math.h>
#include <string.h>

#define EXPECTED "expected collsim's result JSON (collsim run/real --json)"
#define MAX_DEPTH 32

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } jtype_t;

typedef struct jv {
    jtype_t type;
    int line;
    double num;
    char *str;
    GPtrArray *items;   /* jv_t*; objects: key, value, key, value... as J_STR, value */
} jv_t;

static void jv_free(gpointer p)
{
    jv_t *v = p;
    if (v == NULL)
        return;
    g_free(v->str);
    if (v->items != NULL)
        g_ptr_array_unref(v->items);
    g_free(v);
}

typedef struct {
    const char *s;
    size_t len, pos;
    int line;
    const char *name;
} jp_t;

static void ws(jp_t *p)
{
    while (p->pos < p->len && strchr(" \t\r\n", p->s[p->pos]) != NULL && p->s[p->pos] != '\0') {
        if (p->s[p->pos] == '\n')
            p->line++;
        p->pos++;
    }
}

static gboolean bad(jp_t *p, GError **err, const char *what)
{
    cs_set_error_at(err, p->name, p->line, "%s; %s", what, EXPECTED);
    return FALSE;
}

static jv_t *jv_new(jtype_t t, int line)
{
    jv_t *v = g_new0(jv_t, 1);
    v->type = t;
    v->line = line;
    if (t == J_ARR || t == J_OBJ)
        v->items = g_ptr_array_new_with_free_func(jv_free);
    return v;
}

static char *parse_str(jp_t *p, GError **err)
{
    GString *g = g_string_new(NULL);
    p->pos++;   /* opening quote */
    while (p->pos < p->len && p->s[p->pos] != '"') {
        unsigned char c = (unsigned char)p->s[p->pos++];
        if (c < 0x20) {
            bad(p, err, "control character in a string");
            return g_string_free(g, TRUE), NULL;
        }
        if (c != '\\') {
            g_string_append_c(g, (char)c);
            continue;
        }
        if (p->pos >= p->len)
            break;
        char e = p->s[p->pos++];
        switch (e) {
        case '"': case '\\': case '/': g_string_append_c(g, e); break;
        case 'n': g_string_append_c(g, '\n'); break;
        case 't': g_string_append_c(g, '\t'); break;
        case 'r': g_string_append_c(g, '\r'); break;
        case 'b': g_string_append_c(g, '\b'); break;
        case 'f': g_string_append_c(g, '\f'); break;
        case 'u': {
            if (p->pos + 4 > p->len) {
                bad(p, err, "short \\u escape");
                return g_string_free(g, TRUE), NULL;
            }
            char hex[5] = { 0 };
            memcpy(hex, p->s + p->pos, 4);
            char *end;
            unsigned long u = strtoul(hex, &end, 16);
            if (*end != '\0') {
                bad(p, err, "bad \\u escape");
                return g_string_free(g, TRUE), NULL;
            }
            p->pos += 4;
            g_string_append_unichar(g, (gunichar)u);
            break;
        }
        default:
            bad(p, err, "bad escape in a string");
            return g_string_free(g, TRUE), NULL;
        }
    }
    if (p->pos >= p->len) {
        bad(p, err, "unterminated string");
        return g_string_free(g, TRUE), NULL;
    }
    p->pos++;
    return g_string_free(g, FALSE);
}

static jv_t *parse_value(jp_t *p, int depth, GError **err)
{
    ws(p);
    if (p->pos >= p->len) {
        bad(p, err, "unexpected end of file");
        return NULL;
    }
    if (depth > MAX_DEPTH) {
        bad(p, err, "nested too deeply");
        return NULL;
    }
    char c = p->s[p->pos];
    if (c == '"') {
        jv_t *v = jv_new(J_STR, p->line);
        v->str = parse_str(p, err);
        if (v->str == NULL) {
            jv_free(v);
            return NULL;
        }
        return v;
    }
    if (c == '{' || c == '[') {
        gboolean obj = c == '{';
        jv_t *v = jv_new(obj ? J_OBJ : J_ARR, p->line);
        p->pos++;
        ws(p);
        if (p->pos < p->len && p->s[p->pos] == (obj ? '}' : ']')) {
            p->pos++;
            return v;
        }
        for (;;) {
            ws(p);
            if (obj) {
                if (p->pos >= p->len || p->s[p->pos] != '"') {
                    bad(p, err, "expected a quoted key");
                    goto fail;
                }
                jv_t *k = parse_value(p, depth + 1, err);
                if (k == NULL)
                    goto fail;
                g_ptr_array_add(v->items, k);
                ws(p);
                if (p->pos >= p->len || p->s[p->pos] != ':') {
                    bad(p, err, "expected ':' after a key");
                    goto fail;
                }
                p->pos++;
            }
            jv_t *item = parse_value(p, depth + 1, err);
            if (item == NULL)
                goto fail;
            g_ptr_array_add(v->items, item);
            ws(p);
            if (p->pos < p->len && p->s[p->pos] == ',') {
                p->pos++;
                continue;
            }
            if (p->pos < p->len && p->s[p->pos] == (obj ? '}' : ']')) {
                p->pos++;
                return v;
            }
            bad(p, err, obj ? "expected ',' or '}'" : "expected ',' or ']'");
            goto fail;
        }
    fail:
        jv_free(v);
        return NULL;
    }
    static const struct { const char *lit; jtype_t t; double n; } lits[] = {
        { "null", J_NULL, 0 }, { "true", J_BOOL, 1 }, { "false", J_BOOL, 0 },
    };
    for (guint i = 0; i < G_N_ELEMENTS(lits); i++) {
        size_t n = strlen(lits[i].lit);
        if (p->len - p->pos >= n && strncmp(p->s + p->pos, lits[i].lit, n) == 0) {
            p->pos += n;
            jv_t *v = jv_new(lits[i].t, p->line);
            v->num = lits[i].n;
            return v;
        }
    }
    if (c == '-' || g_ascii_isdigit(c)) {
        size_t start = p->pos;
        while (p->pos < p->len && strchr("+-.eE0123456789", p->s[p->pos]) != NULL && p->s[p->pos] != '\0')
            p->pos++;
        g_autofree char *tok = g_strndup(p->s + start, p->pos - start);
        char *end;
        double d = g_ascii_strtod(tok, &end);
        if (*end != '\0' || !isfinite(d)) {
            bad(p, err, "malformed number");
            return NULL;
        }
        jv_t *v = jv_new(J_NUM, p->line);
        v->num = d;
        return v;
    }
    bad(p, err, "unexpected character");
    return NULL;
}

static const jv_t *get(const jv_t *o, const char *key)
{
    if (o == NULL || o->type != J_OBJ)
        return NULL;
    for (guint i = 0; i + 1 < o->items->len; i += 2) {
        const jv_t *k = g_ptr_array_index(o->items, i);
        if (strcmp(k->str, key) == 0)
            return g_ptr_array_index(o->items, i + 1);
    }
    return NULL;
}

gboolean cs_result_json_sniff(const char *buf, size_t len)
{
    size_t i = 0;
    while (i < len && g_ascii_isspace(buf[i]))
        i++;
    if (i >= len || buf[i] != '{')
        return FALSE;
    /* the writer puts "producer" first */
    i++;
    while (i < len && g_ascii_isspace(buf[i]))
        i++;
    return len - i >= 10 && strncmp(buf + i, "\"producer\"", 10) == 0;
}

static gboolean want(const jv_t *v, jtype_t t, const char *name, int line, const char *what, GError **err)
{
    if (v != NULL && v->type == t)
        return TRUE;
    cs_set_error_at(err, name, v != NULL ? v->line : line, "%s %s; " EXPECTED, what,
                    v == NULL ? "is missing" : "has the wrong type");
    return FALSE;
}

static gboolean read_placement(const jv_t *pl, cs_result_row_t *row, int idx, const char *name, GError **err)
{
    row->time_us[idx] = row->algbw[idx] = row->busbw[idx] = -1;
    row->wrong[idx] = -1;
    if (pl == NULL || pl->type == J_NULL)
        return TRUE;
    if (!want(pl, J_OBJ, name, 0, "a placement", err))
        return FALSE;
    const jv_t *t = get(pl, "time_us");
    if (!want(t, J_NUM, name, pl->line, "\"time_us\"", err))
        return FALSE;
    if (t->num < 0) {
        cs_set_error_at(err, name, t->line, "negative time; " EXPECTED);
        return FALSE;
    }
    row->time_us[idx] = t->num;
    const jv_t *a = get(pl, "algbw"), *b = get(pl, "busbw"), *w = get(pl, "wrong");
    if (a != NULL && a->type == J_NUM)
        row->algbw[idx] = a->num;
    if (b != NULL && b->type == J_NUM)
        row->busbw[idx] = b->num;
    if (w != NULL && w->type == J_NUM)
        row->wrong[idx] = (long)w->num;
    return TRUE;
}

static void copy_str(char *dst, size_t n, const jv_t *v)
{
    if (v != NULL && v->type == J_STR)
        g_strlcpy(dst, v->str, n);
    else
        dst[0] = '\0';
}

cs_result_t *cs_result_json_parse(const char *buf, size_t len, const char *name, GError **err)
{
    jp_t p = { .s = buf, .len = len, .line = 1, .name = name };
    jv_t *root = parse_value(&p, 0, err);
    if (root == NULL)
        return NULL;
    cs_result_t *r = NULL;
    ws(&p);
    if (p.pos < p.len) {
        bad(&p, err, "text after the JSON object");
        goto out;
    }
    if (!want(root, J_OBJ, name, 1, "the top level object", err))
        goto out;
    const jv_t *prod = get(root, "producer"), *src = get(root, "source"), *coll = get(root, "collective");
    const jv_t *nr = get(root, "nranks"), *nn = get(root, "nnodes"), *rows = get(root, "rows");
    if (!want(prod, J_STR, name, 1, "\"producer\"", err) || !want(coll, J_STR, name, 1, "\"collective\"", err) ||
        !want(nr, J_NUM, name, 1, "\"nranks\"", err) || !want(rows, J_ARR, name, 1, "\"rows\"", err))
        goto out;
    cs_coll_t c;
    if (!cs_coll_parse(coll->str, &c)) {
        cs_set_error_at(err, name, coll->line, "unknown collective '%s'; " EXPECTED, coll->str);
        goto out;
    }
    if (nr->num < 1 || nr->num > 1e7 || nr->num != floor(nr->num)) {
        cs_set_error_at(err, name, nr->line, "\"nranks\" is not a rank count; " EXPECTED);
        goto out;
    }
    int nnodes = nn != NULL && nn->type == J_NUM && nn->num >= 0 && nn->num <= 1e7 ? (int)nn->num : 0;
    r = cs_result_new(prod->str, src != NULL && src->type == J_STR ? src->str : name, c, (int)nr->num, nnodes);
    for (guint i = 0; i < rows->items->len; i++) {
        const jv_t *o = g_ptr_array_index(rows->items, i);
        if (!want(o, J_OBJ, name, rows->line, "a row", err))
            goto fail;
        cs_result_row_t row;
        memset(&row, 0, sizeof row);
        const jv_t *size = get(o, "size"), *count = get(o, "count"), *type = get(o, "type");
        const jv_t *redop = get(o, "redop"), *root_rank = get(o, "root");
        if (!want(size, J_NUM, name, o->line, "\"size\"", err) || !want(type, J_STR, name, o->line, "\"type\"", err))
            goto fail;
        if (size->num < 0 || size->num > 1e18 || size->num != floor(size->num)) {
            cs_set_error_at(err, name, size->line, "\"size\" is not a byte count; " EXPECTED);
            goto fail;
        }
        row.size = (guint64)size->num;
        row.count = count != NULL && count->type == J_NUM && count->num >= 0 ? (guint64)count->num : 0;
        if (!cs_dtype_parse(type->str, &row.dtype)) {
            cs_set_error_at(err, name, type->line, "unknown type '%s'; " EXPECTED, type->str);
            goto fail;
        }
        row.redop = CS_REDOP_SUM;
        if (cs_coll_has_redop(c) && redop != NULL && redop->type == J_STR && !cs_redop_parse(redop->str, &row.redop)) {
            cs_set_error_at(err, name, redop->line, "unknown reduction '%s'; " EXPECTED, redop->str);
            goto fail;
        }
        row.root = root_rank != NULL && root_rank->type == J_NUM ? (int)root_rank->num : -1;
        if (!read_placement(get(o, "out_of_place"), &row, CS_OOP, name, err) ||
            !read_placement(get(o, "in_place"), &row, CS_INP, name, err))
            goto fail;
        copy_str(row.algo, sizeof row.algo, get(o, "algo"));
        copy_str(row.proto, sizeof row.proto, get(o, "proto"));
        copy_str(row.transport, sizeof row.transport, get(o, "transport"));
        const jv_t *nch = get(o, "nchannels"), *est = get(o, "nccl_est_us");
        row.nchannels = nch != NULL && nch->type == J_NUM && nch->num > 0 && nch->num < 1e6 ? (int)nch->num : 0;
        row.nccl_est_us = est != NULL && est->type == J_NUM ? est->num : -1;
        g_array_append_val(r->rows, row);
    }
    cs_result_finish(r);
    goto out;
fail:
    cs_result_free(r);
    r = NULL;
out:
    jv_free(root);
    return r;
}
