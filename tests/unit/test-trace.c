/* --trace and --link-stats. The trace is fed a hand-made callback sequence
 * (two jobs, two runs), written, and parsed back with a small strict JSON
 * parser below (json-glib is not a dependency); events are counted and
 * their times compared with values worked out by hand. The link-stats
 * numbers are checked against hand-computed utilizations and rates. */
#include "config.h"
#include "io/cs_link_stats_text.h"
#include "io/cs_trace.h"
#include "util/cs_error.h"
#include "engine-fixture.h"

#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

/* ---- a small strict JSON parser (enough for the trace) --------------------- */

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } jtype_t;

typedef struct jnode jnode_t;
struct jnode {
    jtype_t type;
    double num;
    char *str;
    GPtrArray *items;   /* J_ARR: values; J_OBJ: values, keys alongside */
    GPtrArray *keys;
};

static void jfree(jnode_t *n)
{
    if (n == NULL)
        return;
    g_free(n->str);
    if (n->items != NULL)
        g_ptr_array_free(n->items, TRUE);
    if (n->keys != NULL)
        g_ptr_array_free(n->keys, TRUE);
    g_free(n);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC(jnode_t, jfree)

static void skip_ws(const char **p)
{
    while (**p == ' ' || **p == '\n' || **p == '\r' || **p == '\t')
        (*p)++;
}

static jnode_t *jparse_value(const char **p);

static char *jparse_string(const char **p)
{
    if (**p != '"')
        return NULL;
    (*p)++;
    GString *s = g_string_new(NULL);
    for (;;) {
        unsigned char c = (unsigned char)**p;
        if (c == '\0' || c < 0x20)
            goto fail;   /* unterminated, or a raw control character */
        (*p)++;
        if (c == '"')
            break;
        if (c != '\\') {
            g_string_append_c(s, (char)c);
            continue;
        }
        char e = *(*p)++;
        switch (e) {
        case '"': g_string_append_c(s, '"'); break;
        case '\\': g_string_append_c(s, '\\'); break;
        case '/': g_string_append_c(s, '/'); break;
        case 'b': g_string_append_c(s, '\b'); break;
        case 'f': g_string_append_c(s, '\f'); break;
        case 'n': g_string_append_c(s, '\n'); break;
        case 'r': g_string_append_c(s, '\r'); break;
        case 't': g_string_append_c(s, '\t'); break;
        case 'u': {
            unsigned v = 0;
            for (int i = 0; i < 4; i++) {
                char h = *(*p)++;
                if (!g_ascii_isxdigit(h))
                    goto fail;
                v = v * 16 + (unsigned)g_ascii_xdigit_value(h);
            }
            g_string_append_unichar(s, v);
            break;
        }
        default:
            goto fail;
        }
    }
    return g_string_free(s, FALSE);
fail:
    g_string_free(s, TRUE);
    return NULL;
}

static jnode_t *jparse_value(const char **p)
{
    skip_ws(p);
    jnode_t *n = g_new0(jnode_t, 1);
    if (**p == '{' || **p == '[') {
        gboolean obj = **p == '{';
        n->type = obj ? J_OBJ : J_ARR;
        n->items = g_ptr_array_new_with_free_func((GDestroyNotify)jfree);
        if (obj)
            n->keys = g_ptr_array_new_with_free_func(g_free);
        (*p)++;
        skip_ws(p);
        if (**p == (obj ? '}' : ']')) {
            (*p)++;
            return n;
        }
        for (;;) {
            skip_ws(p);
            if (obj) {
                char *k = jparse_string(p);
                if (k == NULL)
                    goto fail;
                g_ptr_array_add(n->keys, k);
                skip_ws(p);
                if (*(*p)++ != ':')
                    goto fail;
            }
            jnode_t *v = jparse_value(p);
            if (v == NULL)
                goto fail;
            g_ptr_array_add(n->items, v);
            skip_ws(p);
            char c = *(*p)++;
            if (c == (obj ? '}' : ']'))
                return n;
            if (c != ',')
                goto fail;
        }
    }
    if (**p == '"') {
        n->type = J_STR;
        if ((n->str = jparse_string(p)) == NULL)
            goto fail;
        return n;
    }
    if (g_str_has_prefix(*p, "true") || g_str_has_prefix(*p, "false") || g_str_has_prefix(*p, "null")) {
        n->type = **p == 'n' ? J_NULL : J_BOOL;
        n->num = **p == 't';
        *p += **p == 'f' ? 5 : 4;
        return n;
    }
    /* JSON numbers: -?(0|[1-9]digits)(.digits)?([eE][+-]?digits)? */
    const char *s = *p;
    if (*s == '-')
        s++;
    if (!g_ascii_isdigit(*s) || (s[0] == '0' && g_ascii_isdigit(s[1])))
        goto fail;
    char *end;
    n->type = J_NUM;
    n->num = g_ascii_strtod(*p, &end);
    if (end == *p)
        goto fail;
    *p = end;
    return n;
fail:
    jfree(n);
    return NULL;
}

static jnode_t *jparse(const char *text)
{
    const char *p = text;
    jnode_t *n = jparse_value(&p);
    skip_ws(&p);
    if (n != NULL && *p != '\0') {
        jfree(n);
        return NULL;
    }
    return n;
}

static jnode_t *jget(const jnode_t *o, const char *key)
{
    if (o == NULL || o->type != J_OBJ)
        return NULL;
    for (guint i = 0; i < o->keys->len; i++)
        if (strcmp(g_ptr_array_index(o->keys, i), key) == 0)
            return g_ptr_array_index(o->items, i);
    return NULL;
}

static const char *jstr(const jnode_t *o, const char *key)
{
    const jnode_t *v = jget(o, key);
    return v != NULL && v->type == J_STR ? v->str : NULL;
}

static double jnum(const jnode_t *o, const char *key)
{
    const jnode_t *v = jget(o, key);
    g_assert_nonnull(v);
    g_assert_cmpint(v->type, ==, J_NUM);
    return v->num;
}

/* The events of phase ph (NULL: all) named name (NULL: any). */
static GPtrArray *events(const jnode_t *root, const char *ph, const char *name)
{
    const jnode_t *ev = jget(root, "traceEvents");
    g_assert_nonnull(ev);
    g_assert_cmpint(ev->type, ==, J_ARR);
    GPtrArray *out = g_ptr_array_new();
    for (guint i = 0; i < ev->items->len; i++) {
        const jnode_t *e = g_ptr_array_index(ev->items, i);
        g_assert_cmpint(e->type, ==, J_OBJ);
        if ((ph == NULL || g_strcmp0(jstr(e, "ph"), ph) == 0) && (name == NULL || g_strcmp0(jstr(e, "name"), name) == 0))
            g_ptr_array_add(out, (gpointer)e);
    }
    return out;
}

/* The one event of phase ph named name. */
static const jnode_t *event1(const jnode_t *root, const char *ph, const char *name)
{
    g_autoptr(GPtrArray) a = events(root, ph, name);
    if (a->len != 1)
        g_error("%u events ph=%s name=%s, expected 1", a->len, ph, name);
    return g_ptr_array_index(a, 0);
}

/* The M event 'what' (thread_name...) whose args.name is name. */
static const jnode_t *meta_named(const jnode_t *root, const char *what, const char *name)
{
    g_autoptr(GPtrArray) a = events(root, "M", what);
    for (guint i = 0; i < a->len; i++)
        if (g_strcmp0(jstr(jget(g_ptr_array_index(a, i), "args"), "name"), name) == 0)
            return g_ptr_array_index(a, i);
    g_error("no %s event named %s", what, name);
    return NULL;
}

/* The sort_index of thread (pid, tid). */
static int thread_sort(const jnode_t *root, int pid, int tid)
{
    g_autoptr(GPtrArray) a = events(root, "M", "thread_sort_index");
    for (guint i = 0; i < a->len; i++) {
        const jnode_t *e = g_ptr_array_index(a, i);
        if (jnum(e, "pid") == pid && jnum(e, "tid") == tid)
            return (int)jnum(jget(e, "args"), "sort_index");
    }
    g_error("no thread_sort_index for %d/%d", pid, tid);
    return -1;
}

static void test_parser_rejects(void)
{
    /* the checks below are only as good as the parser's strictness */
    const char *bad[] = { "{\"a\":1,}", "[1 2]", "{\"a\":\"x\ny\"}", "{\"a\":\"\\q\"}", "[01]", "[1]x", "{a:1}", "[\"x]",
                          "[nan]" };
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autoptr(jnode_t) n = jparse(bad[i]);
        if (n != NULL)
            g_error("parser accepted %s", bad[i]);
    }
    g_autoptr(jnode_t) ok = jparse("{\"a\":[1.5e-3,-2,\"q\\\"\\u0001\"],\"b\":{}}");
    g_assert_nonnull(ok);
    g_assert_cmpstr(((jnode_t *)g_ptr_array_index(jget(ok, "a")->items, 2))->str, ==, "q\"\x01");
}

/* ---- the trace ------------------------------------------------------------- */

#define US 1e-6
#define JOB0_NAME "job 'train-a' \"q\" back\\slash\ttab\x01"

/* Two runs. Run 1 (20 us): job 0 (ranks 0 and 1, channel 0, a ring of
 * two) and job 1 (NVLS on channel 1); run 2 (4 us): job 0 alone. */
static void feed(cs_trace_t *t)
{
    cs_sim_sink_t *s = cs_trace_sink(t);
    cs_trace_set_job_name(t, 0, JOB0_NAME);
    cs_trace_begin_run(t, "allreduce 1 GiB");
    s->counter(s, 3, "n0.gpu0 -> n0.nvs (nvlink)", 0, 0.5);
    /* rank 1's track first: tracks must sort by rank, not by appearance */
    s->span(s, 0, 1, 0, 0, 0, 10 * US, 65536);
    s->span(s, 0, 0, 0, 1, 0, 10 * US, 65536);
    s->span(s, 1, 0, 1, -1, 5 * US, 15 * US, 1.5 * 1024 * 1024);
    s->span(s, 0, 0, 0, 1, 10 * US, 20 * US, 65536);
    s->call(s, 1, 0, 5 * US, 15 * US);
    s->counter(s, 3, "n0.gpu0 -> n0.nvs (nvlink)", 20 * US, 0);
    s->call(s, 0, 0, 0, 20 * US);
    s->end(s, 20 * US);
    cs_trace_begin_run(t, "second");
    s->span(s, 0, 0, 0, 1, 0, 4 * US, 1000);
    s->counter(s, 7, "n0.gpu1 memory", 1 * US, 0.25);
    s->call(s, 0, 0, 0, 4 * US);
    s->end(s, 4 * US);
}

static char *trace_json(void (*fill)(cs_trace_t *))
{
    g_autoptr(cs_trace_t) t = cs_trace_new();
    fill(t);
    return cs_trace_to_json(t, NULL);
}

static void test_trace_layout(void)
{
    g_autoptr(GError) err = NULL;
    g_autofree char *dir = g_dir_make_tmp("cs-trace-XXXXXX", &err);
    g_assert_no_error(err);
    g_autofree char *path = g_build_filename(dir, "t.json", NULL);
    g_autoptr(cs_trace_t) t = cs_trace_new();
    feed(t);
    g_assert_true(cs_trace_write(t, path, &err));
    g_assert_no_error(err);
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    g_autoptr(jnode_t) root = jparse(text);
    if (root == NULL)
        g_error("not valid JSON:\n%s", text);

    g_assert_cmpstr(jstr(root, "displayTimeUnit"), ==, "ns");
    g_assert_cmpstr(jstr(jget(root, "otherData"), "producer"), ==, "collsim model:flow");

    /* X: 2 runs + 3 calls + 5 spans; C: 3; M: runs 4, job 0 2+2+2*2,
     * job 1 2+2+2, links 4 */
    g_autoptr(GPtrArray) x = events(root, "X", NULL);
    g_autoptr(GPtrArray) c = events(root, "C", NULL);
    g_autoptr(GPtrArray) m = events(root, "M", NULL);
    g_autoptr(GPtrArray) all = events(root, NULL, NULL);
    g_assert_cmpuint(x->len, ==, 10);
    g_assert_cmpuint(c->len, ==, 3);
    g_assert_cmpuint(m->len, ==, 22);
    g_assert_cmpuint(all->len, ==, 35);

    /* processes: the job name round-trips through the escaping */
    const jnode_t *p0 = meta_named(root, "process_name", JOB0_NAME);
    const jnode_t *p1 = meta_named(root, "process_name", "job 1");
    const jnode_t *pl = meta_named(root, "process_name", "links");
    meta_named(root, "process_name", "runs");
    int pid0 = (int)jnum(p0, "pid"), pid1 = (int)jnum(p1, "pid"), pidl = (int)jnum(pl, "pid");
    g_assert_cmpint(pid0, !=, pid1);
    g_assert_cmpint(pidl, !=, pid0);
    g_assert_cmpint(pidl, !=, pid1);
    g_assert_nonnull(strstr(text, "\"job 'train-a' \\\"q\\\" back\\\\slash\\ttab\\u0001\""));

    /* tracks: named per (rank, channel, peer), sorted by rank */
    const jnode_t *r0 = meta_named(root, "thread_name", "rank 0 ch 0 -> 1");
    const jnode_t *r1 = meta_named(root, "thread_name", "rank 1 ch 0 -> 0");
    const jnode_t *nv = meta_named(root, "thread_name", "rank 0 ch 1 NVLS");
    g_assert_cmpint((int)jnum(r0, "pid"), ==, pid0);
    g_assert_cmpint((int)jnum(r1, "pid"), ==, pid0);
    g_assert_cmpint((int)jnum(nv, "pid"), ==, pid1);
    int tid0 = (int)jnum(r0, "tid"), tid1 = (int)jnum(r1, "tid"), tidnv = (int)jnum(nv, "tid");
    g_assert_cmpint(thread_sort(root, pid0, tid0), <, thread_sort(root, pid0, tid1));
    g_assert_cmpint(tid0, !=, tid1);

    /* spans: job 0 rank 0 has three (two in run 1, one in run 2 at 21 us:
     * run 1 is 20 us, plus the gap of max(1 us, 1% of 20 us)) */
    g_autoptr(GPtrArray) sends = events(root, "X", "send 64 KiB");
    g_assert_cmpuint(sends->len, ==, 3);
    double ts_r0[2];
    int n_r0 = 0;
    for (guint i = 0; i < sends->len; i++) {
        const jnode_t *e = g_ptr_array_index(sends, i);
        const jnode_t *a = jget(e, "args");
        g_assert_cmpfloat(jnum(a, "bytes"), ==, 65536);
        g_assert_cmpfloat_with_epsilon(jnum(e, "dur"), 10.0, 1e-9);
        g_assert_cmpint((int)jnum(e, "pid"), ==, pid0);
        if (jnum(a, "rank") == 0) {
            g_assert_cmpint((int)jnum(e, "tid"), ==, tid0);
            g_assert_cmpfloat(jnum(a, "peer"), ==, 1);
            g_assert_cmpfloat(jnum(a, "channel"), ==, 0);
            ts_r0[n_r0++] = jnum(e, "ts");
        } else {
            g_assert_cmpint((int)jnum(e, "tid"), ==, tid1);
        }
    }
    g_assert_cmpint(n_r0, ==, 2);
    g_assert_cmpfloat_with_epsilon(ts_r0[0], 0.0, 1e-9);
    g_assert_cmpfloat_with_epsilon(ts_r0[1], 10.0, 1e-9);
    const jnode_t *late = event1(root, "X", "send 1000 B");
    g_assert_cmpfloat_with_epsilon(jnum(late, "ts"), 21.0, 1e-9);
    g_assert_cmpfloat_with_epsilon(jnum(late, "dur"), 4.0, 1e-9);
    g_assert_cmpint((int)jnum(late, "tid"), ==, tid0);
    const jnode_t *nvls = event1(root, "X", "send 1.50 MiB");
    g_assert_cmpint((int)jnum(nvls, "tid"), ==, tidnv);
    g_assert_cmpfloat(jnum(jget(nvls, "args"), "peer"), ==, -1);
    g_assert_cmpfloat_with_epsilon(jnum(nvls, "ts"), 5.0, 1e-9);

    /* calls, named after their run, on each job's "calls" track */
    g_autoptr(GPtrArray) c1 = events(root, "X", "allreduce 1 GiB #0");
    g_assert_cmpuint(c1->len, ==, 2);
    for (guint i = 0; i < c1->len; i++) {
        const jnode_t *e = g_ptr_array_index(c1, i);
        gboolean job0 = jnum(jget(e, "args"), "job") == 0;
        g_assert_cmpint((int)jnum(e, "pid"), ==, job0 ? pid0 : pid1);
        g_assert_cmpfloat_with_epsilon(jnum(e, "ts"), job0 ? 0.0 : 5.0, 1e-9);
        g_assert_cmpfloat_with_epsilon(jnum(e, "dur"), job0 ? 20.0 : 10.0, 1e-9);
        g_assert_cmpint(thread_sort(root, (int)jnum(e, "pid"), (int)jnum(e, "tid")), ==, 0);
    }
    const jnode_t *second = event1(root, "X", "second #0");
    g_assert_cmpfloat_with_epsilon(jnum(second, "ts"), 21.0, 1e-9);
    g_assert_cmpfloat_with_epsilon(jnum(second, "dur"), 4.0, 1e-9);
    g_assert_cmpint((int)jnum(second, "pid"), ==, pid0);

    /* the runs track: run 1 [0, 20 us], run 2 [21, 25 us] */
    const jnode_t *run1 = event1(root, "X", "allreduce 1 GiB");
    const jnode_t *run2 = event1(root, "X", "second");
    g_assert_cmpfloat_with_epsilon(jnum(run1, "ts"), 0.0, 1e-9);
    g_assert_cmpfloat_with_epsilon(jnum(run1, "dur"), 20.0, 1e-9);
    g_assert_cmpfloat_with_epsilon(jnum(run2, "ts"), 21.0, 1e-9);
    g_assert_cmpfloat_with_epsilon(jnum(run2, "dur"), 4.0, 1e-9);
    g_assert_cmpfloat(jnum(run2, "ts"), >=, jnum(run1, "ts") + jnum(run1, "dur"));

    /* counters: one track per resource name in the links process */
    g_autoptr(GPtrArray) nvl = events(root, "C", "n0.gpu0 -> n0.nvs (nvlink)");
    g_assert_cmpuint(nvl->len, ==, 2);
    const jnode_t *k0 = g_ptr_array_index(nvl, 0), *k1 = g_ptr_array_index(nvl, 1);
    g_assert_cmpint((int)jnum(k0, "pid"), ==, pidl);
    g_assert_cmpfloat_with_epsilon(jnum(jget(k0, "args"), "util_percent"), 50.0, 1e-9);
    g_assert_cmpfloat_with_epsilon(jnum(k1, "ts"), 20.0, 1e-9);
    g_assert_cmpfloat(jnum(jget(k1, "args"), "util_percent"), ==, 0);
    const jnode_t *mem = event1(root, "C", "n0.gpu1 memory");
    g_assert_cmpfloat_with_epsilon(jnum(mem, "ts"), 22.0, 1e-9);
    g_assert_cmpfloat_with_epsilon(jnum(jget(mem, "args"), "util_percent"), 25.0, 1e-9);

    g_assert_cmpint(g_remove(path), ==, 0);
    g_assert_cmpint(g_rmdir(dir), ==, 0);
}

static void feed_other(cs_trace_t *t)
{
    feed(t);
    cs_sim_sink_t *s = cs_trace_sink(t);
    s->span(s, 0, 0, 0, 1, 5 * US, 6 * US, 8);
}

static void test_trace_deterministic(void)
{
    g_autofree char *a = trace_json(feed);
    g_autofree char *b = trace_json(feed);
    g_autofree char *c = trace_json(feed_other);
    g_assert_cmpstr(a, ==, b);
    g_assert_cmpstr(a, !=, c);

    /* and the files written from two identical sequences */
    g_autoptr(GError) err = NULL;
    g_autofree char *dir = g_dir_make_tmp("cs-trace-XXXXXX", &err);
    g_assert_no_error(err);
    g_autofree char *p1 = g_build_filename(dir, "1.json", NULL);
    g_autofree char *p2 = g_build_filename(dir, "2.json", NULL);
    g_autoptr(cs_trace_t) t1 = cs_trace_new();
    g_autoptr(cs_trace_t) t2 = cs_trace_new();
    feed(t1);
    feed(t2);
    g_assert_true(cs_trace_write(t1, p1, &err));
    g_assert_true(cs_trace_write(t2, p2, &err));
    g_autofree char *f1 = NULL, *f2 = NULL;
    gsize n1, n2;
    g_assert_true(g_file_get_contents(p1, &f1, &n1, NULL));
    g_assert_true(g_file_get_contents(p2, &f2, &n2, NULL));
    g_assert_cmpmem(f1, n1, f2, n2);
    g_assert_cmpmem(f1, n1, a, strlen(a));
    g_remove(p1);
    g_remove(p2);
    g_rmdir(dir);
}

/* Without begin_run, each engine run becomes "run N"; one job: "ranks". */
static void feed_implicit(cs_trace_t *t)
{
    cs_sim_sink_t *s = cs_trace_sink(t);
    s->span(s, 0, 2, 3, 5, 0, 300 * US, 4096);
    s->end(s, 300 * US);
    s->span(s, 0, 2, 3, 5, 1 * US, 2 * US, 4096);
    s->end(s, 2 * US);
}

static void test_trace_implicit_runs(void)
{
    g_autofree char *text = trace_json(feed_implicit);
    g_autoptr(jnode_t) root = jparse(text);
    g_assert_nonnull(root);
    const jnode_t *r1 = event1(root, "X", "run 1");
    const jnode_t *r2 = event1(root, "X", "run 2");
    g_assert_cmpfloat_with_epsilon(jnum(r1, "dur"), 300.0, 1e-9);
    /* gap: 1% of 300 us = 3 us */
    g_assert_cmpfloat_with_epsilon(jnum(r2, "ts"), 303.0, 1e-9);
    g_autoptr(GPtrArray) s = events(root, "X", "send 4 KiB");
    g_assert_cmpuint(s->len, ==, 2);
    g_assert_cmpfloat_with_epsilon(jnum(g_ptr_array_index(s, 1), "ts"), 304.0, 1e-9);
    meta_named(root, "process_name", "ranks");
    meta_named(root, "thread_name", "rank 2 ch 3 -> 5");
    /* no calls, no counters: no calls track, no links process */
    g_autoptr(GPtrArray) m = events(root, "M", NULL);
    g_assert_cmpuint(m->len, ==, 4 + 2 + 2);
}

static void nothing(cs_trace_t *t)
{
    (void)t;
}

static void test_trace_nothing(void)
{
    g_autofree char *text = trace_json(nothing);
    g_autoptr(jnode_t) root = jparse(text);
    g_assert_nonnull(root);
    g_autoptr(GPtrArray) all = events(root, NULL, NULL);
    g_assert_cmpuint(all->len, ==, 0);
}

static void assert_dir_entries(const char *dir, guint n)
{
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    g_assert_nonnull(d);
    guint k = 0;
    const char *e;
    while ((e = g_dir_read_name(d)) != NULL) {
        if (g_test_verbose())
            g_printerr("entry: %s\n", e);
        k++;
    }
    g_assert_cmpuint(k, ==, n);
}

static void test_trace_write_fails(void)
{
    g_autoptr(GError) err = NULL;
    g_autofree char *dir = g_dir_make_tmp("cs-trace-XXXXXX", &err);
    g_assert_no_error(err);
    g_autoptr(cs_trace_t) t = cs_trace_new();
    feed(t);

    /* a directory that does not exist */
    g_autofree char *missing = g_build_filename(dir, "no-such-dir", "t.json", NULL);
    g_assert_false(cs_trace_write(t, missing, &err));
    g_assert_error(err, CS_ERROR, CS_ERROR_IO);
    g_autofree char *lead = g_strdup_printf("%s: cannot write the trace: ", missing);
    g_assert_true(g_str_has_prefix(err->message, lead));
    g_assert_cmpuint(strlen(err->message), >, strlen(lead));
    g_assert_null(strchr(err->message, '\n'));
    g_clear_error(&err);
    assert_dir_entries(dir, 0);

    /* a target that cannot be replaced (a non-empty directory): the
     * temporary file must not stay behind */
    g_autofree char *target = g_build_filename(dir, "t.json", NULL);
    g_autofree char *inner = g_build_filename(target, "x", NULL);
    g_assert_cmpint(g_mkdir(target, 0755), ==, 0);
    g_assert_true(g_file_set_contents(inner, "x", 1, NULL));
    g_assert_false(cs_trace_write(t, target, &err));
    g_assert_error(err, CS_ERROR, CS_ERROR_IO);
    g_clear_error(&err);
    assert_dir_entries(dir, 1);
    assert_dir_entries(target, 1);
    g_remove(inner);
    g_rmdir(target);
    g_rmdir(dir);
}

/* ---- the flow engine through the trace ------------------------------------ */

typedef struct {
    double ts, end;
} iv_t;

static int iv_cmp(const void *a, const void *b)
{
    double x = ((const iv_t *)a)->ts, y = ((const iv_t *)b)->ts;
    return x < y ? -1 : x > y;
}

/* A real sweep of two sizes: valid JSON, one run per size named by the
 * sweep ("allreduce 1 MiB", "allreduce 4 MiB"), run 2 after run 1, and spans on one track never
 * overlap (one transfer at a time per rank, channel and peer). */
static void test_trace_flow_engine(void)
{
    const cs_engine_ops_t *ops = cs_engine_find("flow");
    if (ops == NULL) {
        g_test_skip("no flow engine");
        return;
    }
    job_fix_t j;
    fix_init(&j, fix_shared_uplink(), "Ring", "Simple");
    g_autoptr(cs_trace_t) t = cs_trace_new();
    g_autoptr(GPtrArray) stats = g_ptr_array_new_with_free_func((GDestroyNotify)cs_link_stats_free);
    cs_engine_job_t job = { .topo = j.topo, .comm = j.comm, .params = &j.params, .coll = CS_COLL_ALLREDUCE,
                            .dtype = CS_DTYPE_FLOAT, .sink = cs_trace_sink(t), .link_stats = stats };
    const guint64 sizes[] = { 1 << 20, 4 << 20 };
    g_autoptr(GError) err = NULL;
    g_autoptr(cs_result_t) r = cs_engine_run_sweep(ops, &job, sizes, 2, &err);
    g_assert_no_error(err);
    g_assert_nonnull(r);
    g_assert_cmpuint(stats->len, ==, 2);
    g_autofree char *text = cs_trace_to_json(t, NULL);
    g_autoptr(jnode_t) root = jparse(text);
    g_assert_nonnull(root);

    const jnode_t *r1 = event1(root, "X", "allreduce 1 MiB");
    const jnode_t *r2 = event1(root, "X", "allreduce 4 MiB");
    const cs_link_stats_t *s1 = g_ptr_array_index(stats, 0), *s2 = g_ptr_array_index(stats, 1);
    g_assert_cmpfloat_with_epsilon(jnum(r1, "dur"), s1->time_s * 1e6, 1e-5);
    g_assert_cmpfloat_with_epsilon(jnum(r2, "dur"), s2->time_s * 1e6, 1e-5);
    g_assert_cmpfloat(jnum(r2, "ts"), >, jnum(r1, "ts") + jnum(r1, "dur"));
    g_assert_cmpfloat(s2->time_s, >, s1->time_s);

    /* group the transfers by (pid, tid); check each track */
    g_autoptr(GPtrArray) x = events(root, "X", NULL);
    g_autoptr(GHashTable) by_track = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_array_unref);
    g_autoptr(GPtrArray) keys = g_ptr_array_new();   /* in order of appearance */
    guint nspans = 0;
    for (guint i = 0; i < x->len; i++) {
        const jnode_t *e = g_ptr_array_index(x, i);
        if (g_strcmp0(jstr(e, "cat"), "transfer") != 0)
            continue;
        nspans++;
        char *k = g_strdup_printf("%d/%d", (int)jnum(e, "pid"), (int)jnum(e, "tid"));
        GArray *a = g_hash_table_lookup(by_track, k);
        if (a == NULL) {
            a = g_array_new(FALSE, FALSE, sizeof(iv_t));
            g_hash_table_insert(by_track, k, a);
            g_ptr_array_add(keys, k);
        } else {
            g_free(k);
        }
        g_assert_cmpfloat(jnum(e, "dur"), >=, 0);
        iv_t iv = { jnum(e, "ts"), jnum(e, "ts") + jnum(e, "dur") };
        g_array_append_val(a, iv);
        /* inside its run */
        g_assert_true(iv.end <= jnum(r1, "dur") + 1e-5 || iv.ts >= jnum(r2, "ts") - 1e-5);
    }
    g_assert_cmpuint(nspans, >, 0);
    /* ring of 4 ranks: each rank sends to one peer per channel */
    g_assert_cmpuint(keys->len, >=, 4);
    for (guint i = 0; i < keys->len; i++) {
        GArray *a = g_hash_table_lookup(by_track, g_ptr_array_index(keys, i));
        qsort(a->data, a->len, sizeof(iv_t), iv_cmp);
        for (guint k = 1; k < a->len; k++)
            g_assert_cmpfloat(g_array_index(a, iv_t, k).ts, >=, g_array_index(a, iv_t, k - 1).end - 1e-6);
    }
    g_autoptr(GPtrArray) c = events(root, "C", NULL);
    g_assert_cmpuint(c->len, >, 0);

    /* the link statistics of the same run print */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cs_write_link_stats(f, s1, "allreduce 1 MiB", 3);
    fclose(f);
    g_autofree char *stext = buf;
    g_assert_true(g_str_has_prefix(stext, "# Link statistics (model:flow, allreduce 1 MiB, "));
    g_assert_nonnull(strstr(stext, s1->links[0].name));
    fix_clear(&j);
}

/* ---- link statistics ------------------------------------------------------ */

static char *capture(void (*fn)(FILE *, const cs_link_stats_t *, const void *), const cs_link_stats_t *s,
                     const void *arg)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    g_assert_nonnull(f);
    fn(f, s, arg);
    fclose(f);
    return buf;
}

static int max_arg;
static void write_stats(FILE *f, const cs_link_stats_t *s, const void *what)
{
    cs_write_link_stats(f, s, what, max_arg);
}

static void write_bneck(FILE *f, const cs_link_stats_t *s, const void *prefix)
{
    cs_write_bottleneck_line(f, s, prefix);
}

/* 100 us; A: 2.5 MB over 50 GB/s = 50% busy, 25 GB/s; B: 1 MB over
 * 25 GB/s = 40%, 10 GB/s; C: 1 MiB over 100 GB/s = 10.49%, 10.49 GB/s. */
static cs_link_stat_t three[] = {
    { "n0.gpu0 -> n0.nvs (nvlink)", 50e9, 2.5e6 },
    { "n0.nic0 -> leaf0 (ib)", 25e9, 1e6 },
    { "n0.gpu1 memory", 100e9, 1048576 },
};

static void assert_row(const char *line, double util, double gbs, double cap, const char *carried, const char *name)
{
    double u, g, c;
    int off = 0;
    g_assert_cmpint(sscanf(line, "# %lf %lf %lf %n", &u, &g, &c, &off), ==, 3);
    g_assert_cmpfloat_with_epsilon(u, util, 0.051);
    g_assert_cmpfloat_with_epsilon(g, gbs, 0.0051);
    g_assert_cmpfloat_with_epsilon(c, cap, 0.0051);
    g_autofree char *rest = g_strdup_printf("%s  %s", carried, name);
    g_assert_cmpstr(line + off, ==, rest);
}

static void test_link_stats_text(void)
{
    cs_link_stats_t s = { 100e-6, 3, three };
    max_arg = 2;
    g_autofree char *text = capture(write_stats, &s, "allreduce 1 MiB");
    g_auto(GStrv) l = g_strsplit(text, "\n", -1);
    g_assert_cmpuint(g_strv_length(l), ==, 7);   /* 6 lines and the empty tail */
    g_assert_cmpstr(l[0], ==, "# Link statistics (model:flow, allreduce 1 MiB, 100.0 us):");
    g_assert_true(g_str_has_prefix(l[1], "# ") && strstr(l[1], "util%") != NULL);
    assert_row(l[2], 50.0, 25.0, 50.0, "2.38 MiB", "n0.gpu0 -> n0.nvs (nvlink)");
    assert_row(l[3], 40.0, 10.0, 25.0, "976.56 KiB", "n0.nic0 -> leaf0 (ib)");
    g_assert_cmpstr(l[4], ==, "# ... 1 more links carried traffic");
    g_assert_cmpstr(l[5], ==, "# bottleneck: n0.gpu0 -> n0.nvs (nvlink) (50.0% busy on average)");
    g_assert_cmpstr(l[6], ==, "");

    /* all of them: no cut line */
    max_arg = -1;
    g_autofree char *all = capture(write_stats, &s, NULL);
    g_auto(GStrv) a = g_strsplit(all, "\n", -1);
    g_assert_cmpuint(g_strv_length(a), ==, 7);
    g_assert_cmpstr(a[0], ==, "# Link statistics (model:flow, 100.0 us):");
    assert_row(a[4], 100.0 * 1048576 / (100e9 * 100e-6), 1048576 / 100e-6 / 1e9, 100.0, "1 MiB", "n0.gpu1 memory");
    g_assert_true(g_str_has_prefix(a[5], "# bottleneck: "));
    for (int i = 0; a[i + 1] != NULL; i++)
        g_assert_true(g_str_has_prefix(a[i], "# "));

    g_autofree char *b = capture(write_bneck, &s, "1 MiB: ");
    g_assert_cmpstr(b, ==, "# 1 MiB: bottleneck: n0.gpu0 -> n0.nvs (nvlink) (50.0% busy)\n");
    g_autofree char *b2 = capture(write_bneck, &s, NULL);
    g_assert_cmpstr(b2, ==, "# bottleneck: n0.gpu0 -> n0.nvs (nvlink) (50.0% busy)\n");
}

static void test_link_stats_empty(void)
{
    cs_link_stats_t s = { 5e-6, 0, NULL };
    max_arg = 8;
    g_autofree char *text = capture(write_stats, &s, "x");
    g_assert_cmpstr(text, ==, "# Link statistics (model:flow, x, 5.0 us):\n# bottleneck: none (no link carried data)\n");
    g_autofree char *b = capture(write_bneck, &s, NULL);
    g_assert_cmpstr(b, ==, "# bottleneck: none (no link carried data)\n");
    g_autofree char *bn = capture(write_bneck, NULL, "p ");
    g_assert_cmpstr(bn, ==, "# p bottleneck: none (no link carried data)\n");
}

static void test_format_bytes(void)
{
    char buf[32];
    g_assert_cmpstr(cs_format_bytes_human(0, buf, sizeof buf), ==, "0 B");
    g_assert_cmpstr(cs_format_bytes_human(1023, buf, sizeof buf), ==, "1023 B");
    g_assert_cmpstr(cs_format_bytes_human(65536, buf, sizeof buf), ==, "64 KiB");
    g_assert_cmpstr(cs_format_bytes_human(1.5 * 1073741824.0, buf, sizeof buf), ==, "1.50 GiB");
    g_assert_cmpstr(cs_format_bytes_human(2.5e6, buf, sizeof buf), ==, "2.38 MiB");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/trace/parser-rejects", test_parser_rejects);
    g_test_add_func("/trace/layout", test_trace_layout);
    g_test_add_func("/trace/deterministic", test_trace_deterministic);
    g_test_add_func("/trace/implicit-runs", test_trace_implicit_runs);
    g_test_add_func("/trace/nothing", test_trace_nothing);
    g_test_add_func("/trace/write-fails", test_trace_write_fails);
    g_test_add_func("/trace/flow-engine", test_trace_flow_engine);
    g_test_add_func("/link-stats/text", test_link_stats_text);
    g_test_add_func("/link-stats/empty", test_link_stats_empty);
    g_test_add_func("/link-stats/format-bytes", test_format_bytes);
    return g_test_run();
}
