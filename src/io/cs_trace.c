/* The --trace writer: collects the engine's timeline as small records
 * (32 bytes a span, not 200 bytes of JSON) and formats them at the end,
 * when the tracks can be numbered in sorted order. Chrome Trace Event
 * Format (the JSON object form): "X" complete events, "C" counters, "M"
 * metadata naming and ordering processes and threads; ts/dur in
 * microseconds. Output order depends only on the callback sequence: the
 * hash tables serve look-ups, never iteration. */
#include "config.h"
#include "io/cs_trace.h"
#include "io/cs_writers-int.h"
#include "io/cs_link_stats_text.h"
#include "io/cs_writers.h"
#include "io/cs_output.h"
#include "util/cs_error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int job, rank, ch, peer;
} track_key_t;

typedef struct {
    double ts, dur, bytes;   /* seconds on the trace's axis */
    int track;               /* index in tracks */
} span_rec_t;

typedef struct {
    double ts, util;
    int name;                /* index in names */
} counter_rec_t;

typedef struct {
    double ts, dur;
    int job, iter, run;
} call_rec_t;

typedef struct {
    double ts, value;
    int name, unit;          /* indices in names */
} gauge_rec_t;

typedef struct {
    char *label;
    double offset;           /* start on the trace's axis, seconds */
    double length;           /* the end callback's time, or the last event's */
} run_t;

struct cs_trace {
    cs_sim_sink_t sink;      /* first: the callbacks cast back */
    GArray *runs;            /* run_t */
    gboolean open;           /* the last run still receives events */
    GArray *tracks;          /* track_key_t, in order of first appearance */
    GHashTable *track_index; /* track_key_t * -> index + 1 */
    GPtrArray *names;        /* counter names, in order of first appearance */
    GHashTable *name_index;  /* name -> index + 1 */
    GPtrArray *job_names;    /* by job; NULL: the default */
    int max_job;             /* highest job seen or named; -1: none */
    GArray *spans, *counters, *calls, *gauges;
    char *producer;
};

/* ---- collecting ------------------------------------------------------------ */

static guint track_hash(gconstpointer p)
{
    const track_key_t *k = p;
    guint h = (guint)k->job;
    h = h * 31u + (guint)k->rank;
    h = h * 31u + (guint)k->ch;
    return h * 31u + (guint)k->peer;
}

static gboolean track_equal(gconstpointer a, gconstpointer b)
{
    return memcmp(a, b, sizeof(track_key_t)) == 0;
}

static void start_run(cs_trace_t *t, const char *label)
{
    run_t r = { 0 };
    if (t->runs->len > 0) {
        const run_t *prev = &g_array_index(t->runs, run_t, t->runs->len - 1);
        /* a visible gap, so that two runs never touch */
        r.offset = prev->offset + prev->length + MAX(1e-6, 0.01 * prev->length);
    }
    r.label = label != NULL ? g_strdup(label) : g_strdup_printf("run %u", t->runs->len + 1);
    g_array_append_val(t->runs, r);
    t->open = TRUE;
}

/* The run receiving events, started if the last one has ended. */
static run_t *cur_run(cs_trace_t *t)
{
    if (!t->open)
        start_run(t, NULL);
    return &g_array_index(t->runs, run_t, t->runs->len - 1);
}

static void see_time(run_t *r, double time_s)
{
    if (time_s > r->length)
        r->length = time_s;
}

static void see_job(cs_trace_t *t, int job)
{
    if (job > t->max_job)
        t->max_job = job;
}

static int track_of(cs_trace_t *t, int job, int rank, int ch, int peer)
{
    track_key_t k = { job, rank, ch, peer };
    gpointer v = g_hash_table_lookup(t->track_index, &k);
    if (v != NULL)
        return GPOINTER_TO_INT(v) - 1;
    g_array_append_val(t->tracks, k);
    g_hash_table_insert(t->track_index, g_memdup2(&k, sizeof k), GINT_TO_POINTER((int)t->tracks->len));
    return (int)t->tracks->len - 1;
}

static int name_of(cs_trace_t *t, const char *name)
{
    gpointer v = g_hash_table_lookup(t->name_index, name);
    if (v != NULL)
        return GPOINTER_TO_INT(v) - 1;
    char *copy = g_strdup(name);
    g_ptr_array_add(t->names, copy);
    g_hash_table_insert(t->name_index, copy, GINT_TO_POINTER((int)t->names->len));
    return (int)t->names->len - 1;
}

static void on_span(cs_sim_sink_t *s, int job, int rank, int ch, int peer, double t0, double t1, double bytes)
{
    cs_trace_t *t = (cs_trace_t *)s;
    g_return_if_fail(job >= 0);
    run_t *r = cur_run(t);
    see_time(r, t1);
    see_job(t, job);
    span_rec_t sp = { r->offset + t0, t1 - t0, bytes, track_of(t, job, rank, ch, peer) };
    g_array_append_val(t->spans, sp);
}

static void on_counter(cs_sim_sink_t *s, int res, const char *name, double time_s, double util)
{
    cs_trace_t *t = (cs_trace_t *)s;
    run_t *r = cur_run(t);
    see_time(r, time_s);
    char fallback[32];
    if (name == NULL) {
        snprintf(fallback, sizeof fallback, "resource %d", res);
        name = fallback;
    }
    counter_rec_t c = { r->offset + time_s, util, name_of(t, name) };
    g_array_append_val(t->counters, c);
}

static void on_call(cs_sim_sink_t *s, int job, int iter, double t0, double t1)
{
    cs_trace_t *t = (cs_trace_t *)s;
    g_return_if_fail(job >= 0);
    run_t *r = cur_run(t);
    see_time(r, t1);
    see_job(t, job);
    call_rec_t c = { r->offset + t0, t1 - t0, job, iter, (int)t->runs->len - 1 };
    g_array_append_val(t->calls, c);
}

static void on_end(cs_sim_sink_t *s, double time_s)
{
    cs_trace_t *t = (cs_trace_t *)s;
    see_time(cur_run(t), time_s);
    t->open = FALSE;
}

static void on_gauge(cs_sim_sink_t *s, const char *track, const char *unit, double time_s, double value)
{
    cs_trace_t *t = (cs_trace_t *)s;
    run_t *r = cur_run(t);
    see_time(r, time_s);
    gauge_rec_t g = { r->offset + time_s, value, name_of(t, track), name_of(t, unit) };
    g_array_append_val(t->gauges, g);
}

void cs_trace_set_producer(cs_trace_t *t, const char *producer)
{
    g_free(t->producer);
    t->producer = g_strdup(producer);
}

/* The engine's sweep names each call's run ("allreduce 1 GiB"). */
static void on_begin(cs_sim_sink_t *s, const char *label)
{
    cs_trace_begin_run((cs_trace_t *)s, label);
}

cs_trace_t *cs_trace_new(void)
{
    cs_trace_t *t = g_new0(cs_trace_t, 1);
    t->sink.span = on_span;
    t->sink.counter = on_counter;
    t->sink.call = on_call;
    t->sink.end = on_end;
    t->sink.begin = on_begin;
    t->sink.gauge = on_gauge;
    t->gauges = g_array_new(FALSE, FALSE, sizeof(gauge_rec_t));

    t->runs = g_array_new(FALSE, FALSE, sizeof(run_t));
    t->tracks = g_array_new(FALSE, FALSE, sizeof(track_key_t));
    t->track_index = g_hash_table_new_full(track_hash, track_equal, g_free, NULL);
    t->names = g_ptr_array_new_with_free_func(g_free);
    t->name_index = g_hash_table_new(g_str_hash, g_str_equal);
    t->job_names = g_ptr_array_new_with_free_func(g_free);
    t->max_job = -1;
    t->spans = g_array_new(FALSE, FALSE, sizeof(span_rec_t));
    t->counters = g_array_new(FALSE, FALSE, sizeof(counter_rec_t));
    t->calls = g_array_new(FALSE, FALSE, sizeof(call_rec_t));
    return t;
}

void cs_trace_free(cs_trace_t *t)
{
    if (t == NULL)
        return;
    for (guint i = 0; i < t->runs->len; i++)
        g_free(g_array_index(t->runs, run_t, i).label);
    g_array_free(t->runs, TRUE);
    g_array_free(t->tracks, TRUE);
    g_hash_table_destroy(t->track_index);
    g_hash_table_destroy(t->name_index);
    g_ptr_array_free(t->names, TRUE);
    g_ptr_array_free(t->job_names, TRUE);
    g_array_free(t->spans, TRUE);
    g_array_free(t->counters, TRUE);
    g_array_free(t->calls, TRUE);
    g_array_free(t->gauges, TRUE);
    g_free(t->producer);
    g_free(t);
}

cs_sim_sink_t *cs_trace_sink(cs_trace_t *t)
{
    return &t->sink;
}

void cs_trace_begin_run(cs_trace_t *t, const char *label)
{
    start_run(t, label);
}

void cs_trace_set_job_name(cs_trace_t *t, int job, const char *name)
{
    g_return_if_fail(job >= 0);
    if ((guint)job >= t->job_names->len)
        g_ptr_array_set_size(t->job_names, job + 1);
    g_free(g_ptr_array_index(t->job_names, job));
    g_ptr_array_index(t->job_names, job) = g_strdup(name);
    see_job(t, job);
}

/* ---- formatting ------------------------------------------------------------ */

static void put_str(GString *g, const char *s)
{
    g_autofree char *valid = g_utf8_validate(s, -1, NULL) ? NULL : g_utf8_make_valid(s, -1);
    cs_write_append_json_string(g, valid != NULL ? valid : s);
}

/* A JSON number in the C locale; JSON has no NaN/Inf (0 instead) and "-0"
 * would differ from "0" for no reason. */
static void put_num(GString *g, const char *fmt, double v)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    if (!isfinite(v))
        v = 0;
    g_ascii_formatd(buf, sizeof buf, fmt, v);
    const char *out = buf;
    if (buf[0] == '-' && buf[1 + strspn(buf + 1, "0.")] == '\0')
        out = buf + 1;
    g_string_append(g, out);
}

static void put_us(GString *g, const char *key, double seconds)
{
    g_string_append_printf(g, ",\"%s\":", key);
    put_num(g, "%.6f", seconds * 1e6);
}

/* A counter event ("ph":"C"): one value 'key' of track 'name' at ts. */
static void put_counter(GString *g, const char *name, const char *cat, double ts, int pid, int tid, const char *key,
                        const char *fmt, double value)
{
    g_string_append(g, "{\"name\":");
    put_str(g, name);
    g_string_append_printf(g, ",\"cat\":\"%s\",\"ph\":\"C\"", cat);
    put_us(g, "ts", ts);
    g_string_append_printf(g, ",\"pid\":%d,\"tid\":%d,\"args\":{", pid, tid);
    put_str(g, key);
    g_string_append_c(g, ':');
    put_num(g, fmt, value);
    g_string_append(g, "}},\n");
}

static void put_meta(GString *g, const char *what, int pid, int tid, const char *name, int sort_index)
{
    g_string_append_printf(g, "{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{", what, pid, tid);
    if (name != NULL) {
        g_string_append(g, "\"name\":");
        put_str(g, name);
    } else {
        g_string_append_printf(g, "\"sort_index\":%d", sort_index);
    }
    g_string_append(g, "}},\n");
}

/* A named, ordered process or thread: its name and its sort index. */
static void put_process(GString *g, int pid, const char *name, int sort_index)
{
    put_meta(g, "process_name", pid, 0, name, 0);
    put_meta(g, "process_sort_index", pid, 0, NULL, sort_index);
}

static void put_thread(GString *g, int pid, int tid, const char *name, int sort_index)
{
    put_meta(g, "thread_name", pid, tid, name, 0);
    put_meta(g, "thread_sort_index", pid, tid, NULL, sort_index);
}

static void put_complete(GString *g, const char *name, const char *cat, int pid, int tid, double ts, double dur)
{
    g_string_append(g, "{\"name\":");
    put_str(g, name);
    g_string_append_printf(g, ",\"cat\":\"%s\",\"ph\":\"X\"", cat);
    put_us(g, "ts", ts);
    put_us(g, "dur", dur);
    g_string_append_printf(g, ",\"pid\":%d,\"tid\":%d,\"args\":{", pid, tid);
}

typedef struct {
    track_key_t key;
    int index;               /* in tracks */
} track_ref_t;

static int track_cmp(const void *a, const void *b)
{
    const track_key_t *x = &((const track_ref_t *)a)->key, *y = &((const track_ref_t *)b)->key;
    if (x->job != y->job)
        return x->job < y->job ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    if (x->ch != y->ch)
        return x->ch < y->ch ? -1 : 1;
    return x->peer < y->peer ? -1 : x->peer > y->peer;
}

char *cs_trace_to_json(cs_trace_t *t, gsize *len_p)
{
    int njobs = t->max_job + 1;
    int ntracks = (int)t->tracks->len;
    /* pids: runs 1, job j 2 + j, links after the jobs; thread ids above
     * every pid, unique in the file, numbered in display order */
    const int pid_runs = 1, pid_links = 2 + njobs;
    int next_tid = pid_links + 1;
    const int tid_runs = next_tid++;

    g_autofree track_ref_t *order = g_new(track_ref_t, MAX(1, ntracks));
    for (int i = 0; i < ntracks; i++)
        order[i] = (track_ref_t){ g_array_index(t->tracks, track_key_t, i), i };
    qsort(order, (size_t)ntracks, sizeof *order, track_cmp);
    g_autofree int *tid_of = g_new(int, MAX(1, ntracks));
    g_autofree int *tid_calls = g_new0(int, MAX(1, njobs));
    for (guint i = 0; i < t->calls->len; i++)
        tid_calls[g_array_index(t->calls, call_rec_t, i).job] = 1;

    GString *g = g_string_sized_new(4096 + 170 * ((gsize)t->spans->len + t->counters->len + t->calls->len));
    g_string_append(g, "{\"traceEvents\":[\n");

    if (t->runs->len > 0) {
        put_process(g, pid_runs, "runs", 0);
        put_thread(g, pid_runs, tid_runs, "runs", 0);
    }
    int k = 0;   /* walks the sorted tracks, job by job */
    for (int j = 0; j < njobs; j++) {
        const char *jn = (guint)j < t->job_names->len ? g_ptr_array_index(t->job_names, j) : NULL;
        g_autofree char *deflt = njobs == 1 ? g_strdup("ranks") : g_strdup_printf("job %d", j);
        put_process(g, 2 + j, jn != NULL ? jn : deflt, 1 + j);
        if (tid_calls[j]) {
            tid_calls[j] = next_tid++;
            put_thread(g, 2 + j, tid_calls[j], "calls", 0);
        }
        for (int sort = 1; k < ntracks && order[k].key.job == j; k++, sort++) {
            const track_key_t *tk = &order[k].key;
            char name[96];
            if (tk->peer < 0)
                snprintf(name, sizeof name, "rank %d ch %d NVLS", tk->rank, tk->ch);
            else
                snprintf(name, sizeof name, "rank %d ch %d -> %d", tk->rank, tk->ch, tk->peer);
            tid_of[order[k].index] = next_tid++;
            put_thread(g, 2 + j, tid_of[order[k].index], name, sort);
        }
    }
    const int tid_links = next_tid++;
    if (t->counters->len > 0) {
        put_process(g, pid_links, "links", 1 + njobs);
        put_thread(g, pid_links, tid_links, "utilization", 0);
    }
    const int pid_fabric = next_tid++, tid_fabric = next_tid++;
    if (t->gauges->len > 0) {
        put_process(g, pid_fabric, "fabric", 2 + njobs);
        put_thread(g, pid_fabric, tid_fabric, "packets", 0);
    }

    for (guint i = 0; i < t->runs->len; i++) {
        const run_t *r = &g_array_index(t->runs, run_t, i);
        put_complete(g, r->label, "run", pid_runs, tid_runs, r->offset, r->length);
        g_string_append_printf(g, "\"run\":%u}},\n", i + 1);
    }
    for (guint i = 0; i < t->calls->len; i++) {
        const call_rec_t *c = &g_array_index(t->calls, call_rec_t, i);
        g_autofree char *name = g_strdup_printf("%s #%d", g_array_index(t->runs, run_t, c->run).label, c->iter);
        put_complete(g, name, "call", 2 + c->job, tid_calls[c->job], c->ts, c->dur);
        g_string_append_printf(g, "\"job\":%d,\"iter\":%d}},\n", c->job, c->iter);
    }
    for (guint i = 0; i < t->spans->len; i++) {
        const span_rec_t *s = &g_array_index(t->spans, span_rec_t, i);
        const track_key_t *tk = &g_array_index(t->tracks, track_key_t, s->track);
        char size[32], name[48];
        snprintf(name, sizeof name, "send %s", cs_format_bytes_human(s->bytes, size, sizeof size));
        put_complete(g, name, "transfer", 2 + tk->job, tid_of[s->track], s->ts, s->dur);
        g_string_append(g, "\"bytes\":");
        put_num(g, "%.15g", s->bytes);
        g_string_append_printf(g, ",\"rank\":%d,\"peer\":%d,\"channel\":%d}},\n", tk->rank, tk->peer, tk->ch);
    }
    for (guint i = 0; i < t->counters->len; i++) {
        const counter_rec_t *c = &g_array_index(t->counters, counter_rec_t, i);
        put_counter(g, g_ptr_array_index(t->names, c->name), "link", c->ts, pid_links, tid_links, "util_percent",
                    "%.3f", c->util * 100);
    }
    for (guint i = 0; i < t->gauges->len; i++) {
        const gauge_rec_t *c = &g_array_index(t->gauges, gauge_rec_t, i);
        put_counter(g, g_ptr_array_index(t->names, c->name), "fabric", c->ts, pid_fabric, tid_fabric,
                    g_ptr_array_index(t->names, c->unit), "%.6g", c->value);
    }
    /* no comma after the last event */
    if (g->str[g->len - 2] == ',')
        g_string_erase(g, g->len - 2, 1);
    g_string_append_printf(g, "],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"producer\":\"collsim %s\","
                              "\"version\":\"%s\",\"note\":\"simulated times (a model), not a measurement\","
                              "\"runs\":%u}}\n", t->producer != NULL ? t->producer : "model:flow", PACKAGE_VERSION,
                           t->runs->len);
    if (len_p != NULL)
        *len_p = g->len;
    return g_string_free(g, FALSE);
}

gboolean cs_trace_write(cs_trace_t *t, const char *path, GError **err)
{
    gsize len;
    g_autofree char *json = cs_trace_to_json(t, &len);
    g_autoptr(GError) werr = NULL;
    if (cs_output_write_one(path, json, (gssize)len, &werr))
        return TRUE;
    /* cs_output_write_one says "PATH: cannot write the file (REASON);
     * expected ...": keep the reason (the whole message if worded else) */
    g_autofree char *lead = g_strdup_printf("%s: cannot write the file (", path);
    const char *reason = werr->message;
    g_autofree char *inner = NULL;
    if (g_str_has_prefix(reason, lead)) {
        const char *start = reason + strlen(lead);
        const char *close = g_strrstr(start, ")");
        if (close != NULL)
            inner = g_strndup(start, (gsize)(close - start));
    }
    g_set_error(err, CS_ERROR, werr->code, "%s: cannot write the trace: %s", path, inner != NULL ? inner : reason);
    return FALSE;
}
