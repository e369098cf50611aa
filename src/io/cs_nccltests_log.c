/* nccl-tests text output as published: tables found by their column header
 * line or by their rows alone (size count type redop [root] time algbw
 * busbw #wrong [time algbw busbw #wrong]); '#' comments, prose, command
 * lines and log noise around and between them. What the file says about
 * the run (collective, rank lines, command line) is collected as context
 * and given to the table that follows; cs_nt_table_finish() then decides
 * which collective the rows measure. The -J JSON form is in
 * cs_nccltests_json.c. Line formats: nccl-tests src/util.cu
 * (writeResultHeader, writeBenchmarkLine*, writeDeviceReport). */
#include "config.h"
#include "io/cs_nccltests_log-int.h"
#include "io/cs_nccl_info.h"
#include "models/cs_nccl_env.h"
#include "util/cs_error.h"
#include "util/cs_read_file.h"

#include <math.h>
#include <string.h>

#define EXPECTED_ROW "expected lines like '  1048576  262144  float  sum  -1  ...'"
#define EXPECTED_COLUMNS \
    "expected size count type redop root time algbw busbw #wrong [time algbw busbw #wrong]"
/* Row anomalies noted per table before summarising the rest. */

/* ------------------------------------------------------------------ */
/* Collective kinds                                                     */

static const struct {
    const char *key;   /* compared ignoring case, '_' and '-' */
    const char *test;  /* nccl-tests binary */
} kind_names[CS_NT_KIND_END] = {
    [CS_NT_BROADCAST] = { "broadcast", "broadcast_perf" },
    [CS_NT_REDUCE] = { "reduce", "reduce_perf" },
    [CS_NT_ALLGATHER] = { "allgather", "all_gather_perf" },
    [CS_NT_REDUCESCATTER] = { "reducescatter", "reduce_scatter_perf" },
    [CS_NT_ALLREDUCE] = { "allreduce", "all_reduce_perf" },
    [CS_NT_ALLTOALL] = { "alltoall", "alltoall_perf" },
    [CS_NT_ALLTOALLV] = { "alltoallv", "alltoallv_perf" },
    [CS_NT_SENDRECV] = { "sendrecv", "sendrecv_perf" },
    [CS_NT_GATHER] = { "gather", "gather_perf" },
    [CS_NT_SCATTER] = { "scatter", "scatter_perf" },
    [CS_NT_HYPERCUBE] = { "hypercube", "hypercube_perf" },
};


static gboolean has_suffix(const char *s, size_t len, const char *suffix)
{
    size_t n = strlen(suffix);
    return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

cs_nt_kind_t cs_nt_kind_from_name(const char *s)
{
    if (s == NULL)
        return CS_NT_UNKNOWN;
    const char *base = strrchr(s, '/');
    base = base ? base + 1 : s;
    g_autofree char *b = g_strdup(base);
    size_t len = strlen(b);
    if (has_suffix(b, len, "_mpi"))
        b[len -= 4] = '\0';
    if (has_suffix(b, len, "_perf"))
        b[len -= 5] = '\0';
    if (len == 0)
        return CS_NT_UNKNOWN;
    for (int k = 0; k < CS_NT_KIND_END; k++)
        if (cs_name_loose_equal(b, kind_names[k].key))
            return (cs_nt_kind_t)k;
    return CS_NT_UNKNOWN;
}

const char *cs_nt_kind_test_name(cs_nt_kind_t k)
{
    if (k < 0 || k >= CS_NT_KIND_END)
        return "an unknown test";
    return kind_names[k].test;
}

/* ------------------------------------------------------------------ */
/* Tables and the log                                                   */

cs_nt_table_t *cs_nt_table_new(int line)
{
    cs_nt_table_t *t = g_new0(cs_nt_table_t, 1);
    t->rows = g_array_new(FALSE, TRUE, sizeof(cs_nt_row_t));
    t->line = line;
    t->kind = CS_NT_UNKNOWN;
    t->notes = g_ptr_array_new_with_free_func(g_free);
    return t;
}

void cs_nt_table_free(cs_nt_table_t *t)
{
    if (t == NULL)
        return;
    g_array_unref(t->rows);
    g_free(t->kind_from);
    g_free(t->nranks_from);
    g_free(t->title);
    g_free(t->command);
    g_free(t->producer);
    g_ptr_array_unref(t->notes);
    g_free(t);
}

cs_nccltests_log_t *cs_nt_log_new(void)
{
    cs_nccltests_log_t *l = g_new0(cs_nccltests_log_t, 1);
    l->results = g_ptr_array_new_with_free_func((GDestroyNotify)cs_result_free);
    l->table_numbers = g_array_new(FALSE, TRUE, sizeof(int));
    l->table_lines = g_array_new(FALSE, TRUE, sizeof(int));
    l->notes = g_ptr_array_new_with_free_func(g_free);
    l->unread = g_ptr_array_new_with_free_func(g_free);
    l->unread_tables = g_array_new(FALSE, TRUE, sizeof(int));
    l->nccl_info = g_ptr_array_new_with_free_func((GDestroyNotify)cs_nccl_info_free);
    l->commands = g_ptr_array_new_with_free_func(g_free);
    l->env = g_ptr_array_new_with_free_func(g_free);
    l->env_lines = g_array_new(FALSE, TRUE, sizeof(int));
    return l;
}

void cs_nccltests_log_free(cs_nccltests_log_t *l)
{
    if (l == NULL)
        return;
    g_ptr_array_unref(l->results);
    g_array_unref(l->table_numbers);
    g_array_unref(l->table_lines);
    g_ptr_array_unref(l->notes);
    g_ptr_array_unref(l->unread);
    g_array_unref(l->unread_tables);
    g_ptr_array_unref(l->nccl_info);
    g_ptr_array_unref(l->commands);
    g_ptr_array_unref(l->env);
    g_array_unref(l->env_lines);
    g_free(l->nccl_version);
    g_free(l->command);
    g_free(l);
}

/* What the rows of a table say about the collective that produced them
 * (nccl-tests src/<coll>.cu): whether a reduction and a root are printed,
 * size/(count*typesize) (1 for AllReduce, Broadcast, Reduce and SendRecv;
 * the rank count for AllGather, ReduceScatter, AlltoAll, Gather, Scatter),
 * and whether only out-of-place results are checked (AlltoAll, AlltoAllv and
 * SendRecv set reportErrors = in_place ? 0 : 1, so in-place #wrong is N/A). */
typedef struct {
    int redop;          /* 1 printed, 0 "none", -1 unknown or mixed */
    int root;           /* 1 >= 0, 0 -1, -1 unknown or mixed */
    guint64 ratio;      /* most frequent size/(count*typesize); 0 unknown */
    gboolean oop_only_checked;
    gboolean checked;   /* some #wrong was reported (validation on) */
} signature_t;

static void table_signature(const cs_nt_table_t *t, signature_t *s)
{
    int n_op = 0, n_none = 0, n_root = 0, n_noroot = 0;
    int oop_checked = 0, ip_checked = 0, ip_na = 0;
    guint64 ratios[8];
    int ratio_n[8], nratios = 0;

    for (guint i = 0; i < t->rows->len; i++) {
        const cs_nt_row_t *row = &g_array_index(t->rows, cs_nt_row_t, i);
        if (!row->redop_missing)
            *(row->redop_none ? &n_none : &n_op) += 1;
        if (!row->root_missing)
            *(row->r.root >= 0 ? &n_root : &n_noroot) += 1;
        if (row->r.wrong[CS_OOP] >= 0)
            oop_checked++;
        if (row->r.time_us[CS_INP] >= 0)
            *(row->r.wrong[CS_INP] >= 0 ? &ip_checked : &ip_na) += 1;
        guint64 unit = row->r.count * cs_dtype_size(row->r.dtype);
        if (unit == 0 || row->r.size == 0 || row->r.size % unit != 0)
            continue;
        guint64 k = row->r.size / unit;
        int j;
        for (j = 0; j < nratios && ratios[j] != k; j++)
            ;
        if (j == nratios) {
            if (nratios == G_N_ELEMENTS(ratios))
                continue;
            ratios[nratios] = k;
            ratio_n[nratios++] = 0;
        }
        ratio_n[j]++;
    }
    s->redop = (n_op > 0 && n_none == 0) ? 1 : (n_none > 0 && n_op == 0) ? 0 : -1;
    s->root = (n_root > 0 && n_noroot == 0) ? 1 : (n_noroot > 0 && n_root == 0) ? 0 : -1;
    s->ratio = 0;
    int best = 0;
    for (int j = 0; j < nratios; j++)
        if (ratio_n[j] > best || (ratio_n[j] == best && ratios[j] < s->ratio)) {
            best = ratio_n[j];
            s->ratio = ratios[j];
        }
    s->oop_only_checked = oop_checked > 0 && ip_checked == 0 && ip_na > 0;
    s->checked = oop_checked > 0 || ip_checked > 0;
}

static gboolean kind_has_redop(cs_nt_kind_t k)
{
    return k == CS_NT_REDUCE || k == CS_NT_REDUCESCATTER || k == CS_NT_ALLREDUCE ||
           k == CS_NT_SENDRECV;
}

static gboolean kind_has_root(cs_nt_kind_t k)
{
    return k == CS_NT_BROADCAST || k == CS_NT_REDUCE || k == CS_NT_GATHER || k == CS_NT_SCATTER;
}

static gboolean kind_split(cs_nt_kind_t k)
{
    return k == CS_NT_ALLGATHER || k == CS_NT_REDUCESCATTER || k == CS_NT_ALLTOALL ||
           k == CS_NT_GATHER || k == CS_NT_SCATTER || k == CS_NT_HYPERCUBE;
}

static gboolean kind_oop_only(cs_nt_kind_t k)
{
    return k == CS_NT_ALLTOALL || k == CS_NT_ALLTOALLV || k == CS_NT_SENDRECV;
}

/* NULL when the printed columns (redop, root, which results are checked)
 * fit kind k, else why not. These are categorical: nccl-tests prints them
 * from the binary that ran. */
static const char *kind_mismatch(cs_nt_kind_t k, const signature_t *s)
{
    if (s->redop == 1 && !kind_has_redop(k))
        return "the rows print a reduction";
    if (s->redop == 0 && kind_has_redop(k))
        return "the rows print redop 'none'";
    if (s->root == 1 && !kind_has_root(k))
        return "the rows print a root";
    if (s->root == 0 && kind_has_root(k))
        return "the rows print root -1";
    if (s->oop_only_checked && !kind_oop_only(k))
        return "only out-of-place results are checked (in-place #wrong is N/A)";
    if (s->checked && !s->oop_only_checked && kind_oop_only(k))
        return "in-place results are checked too";
    return NULL;
}

/* The count column is weaker evidence (pastes garble it): a mismatch of
 * size/count with kind k is noted, not decisive. */
static const char *ratio_mismatch(cs_nt_kind_t k, const signature_t *s)
{
    if (s->ratio == 1 && kind_split(k))
        return "size equals count x type size";
    if (s->ratio > 1 && !kind_split(k) && k != CS_NT_ALLTOALLV)
        return "size is a multiple of count x type size";
    return NULL;
}

/* The collective the rows alone point to, or CS_NT_UNKNOWN. */
static cs_nt_kind_t kind_infer(const signature_t *s)
{
    if (s->redop == 1) {
        if (s->root == 1)
            return CS_NT_REDUCE;
        if (s->oop_only_checked)
            return CS_NT_SENDRECV;
        if (s->ratio > 1)
            return CS_NT_REDUCESCATTER;
        if (s->ratio == 1)
            return CS_NT_ALLREDUCE;
        return CS_NT_UNKNOWN;
    }
    if (s->redop == 0) {
        if (s->root == 1)
            return s->ratio == 1 ? CS_NT_BROADCAST : CS_NT_UNKNOWN; /* k > 1: gather or scatter */
        if (s->oop_only_checked)
            return CS_NT_ALLTOALL;
        if (s->root == 0 && s->ratio != 1)
            return CS_NT_ALLGATHER;
        if (s->root == -1 && s->ratio > 1)
            return CS_NT_ALLGATHER;
    }
    return CS_NT_UNKNOWN;
}

static void table_note(cs_nt_table_t *t, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void table_note(cs_nt_table_t *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_ptr_array_add(t->notes, g_strdup_vprintf(fmt, ap));
    va_end(ap);
}

/* A remark about one row: the first few are kept, the rest counted. */
static void row_note(cs_nt_table_t *t, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void row_note(cs_nt_table_t *t, const char *fmt, ...)
{
    if (t->row_notes++ >= CS_NT_MAX_ROW_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    g_ptr_array_add(t->notes, g_strdup_vprintf(fmt, ap));
    va_end(ap);
}

gboolean cs_nt_table_finish(cs_nccltests_log_t *log, cs_nt_table_t *t, const char *name,
                            const cs_nccltests_hint_t *hint, GError **err)
{
    int number = ++log->ntables;
    if (t->rows->len == 0) {
        g_ptr_array_add(log->notes, g_strdup_printf("%s:%d: table %d has no rows; skipped",
                                                    name, t->line, number));
        return TRUE;
    }
    signature_t sig;
    table_signature(t, &sig);

    cs_nt_kind_t kind;
    g_autofree char *kind_from = NULL;
    if (hint != NULL && hint->has_coll) {
        kind = (cs_nt_kind_t)hint->coll;
        const char *why = kind_mismatch(kind, &sig);
        if (why != NULL) {
            cs_set_error_at(err, name, t->line,
                            "table %d does not look like %s (%s); expected rows of %s", number,
                            cs_coll_name(hint->coll), why, cs_nt_kind_test_name(kind));
            return FALSE;
        }
        kind_from = g_strdup("the caller (--op)");
        if (ratio_mismatch(kind, &sig) != NULL)
            table_note(t, "as %s: %s", cs_coll_name(hint->coll), ratio_mismatch(kind, &sig));
    } else if (t->kind != CS_NT_UNKNOWN && kind_mismatch(t->kind, &sig) == NULL) {
        kind = t->kind;
        kind_from = g_strdup(t->kind_from);
        if (ratio_mismatch(kind, &sig) != NULL)
            table_note(t, "as %s: %s", cs_nt_kind_test_name(kind), ratio_mismatch(kind, &sig));
    } else {
        kind = kind_infer(&sig);
        kind_from = g_strdup("its rows (redop, root, size/count)");
        if (t->kind != CS_NT_UNKNOWN)
            table_note(t, "the file names %s (%s) but %s; read as %s",
                       cs_nt_kind_test_name(t->kind), t->kind_from, kind_mismatch(t->kind, &sig),
                       kind == CS_NT_UNKNOWN ? "unknown" : cs_nt_kind_test_name(kind));
    }
    if (kind == CS_NT_UNKNOWN) {
        g_ptr_array_add(log->notes,
                        g_strdup_printf("%s:%d: table %d skipped: cannot tell which collective its "
                                        "rows measure; give the collective (--op)",
                                        name, t->line, number));
        return TRUE;
    }
    if ((int)kind >= CS_OP_COUNT) {
        g_ptr_array_add(log->notes,
                        g_strdup_printf("%s:%d: table %d skipped: %s (from %s) is not an operation "
                                        "collsim models (broadcast, reduce, allgather, "
                                        "reducescatter, allreduce, sendrecv, alltoall)",
                                        name, t->line, number, cs_nt_kind_test_name(kind), kind_from));
        return TRUE;
    }
    cs_coll_t coll = (cs_coll_t)kind;

    int nranks = t->nranks;
    g_autofree char *nranks_from = g_strdup(t->nranks_from);
    if (kind_split(kind) && sig.ratio > 1) {
        if (nranks == 0) {
            nranks = (int)MIN(sig.ratio, (guint64)G_MAXINT);
            g_free(nranks_from);
            nranks_from = g_strdup("size/count of its rows");
        } else if ((guint64)nranks != sig.ratio) {
            table_note(t, "%d ranks (from %s) but size/count of the rows gives %" G_GUINT64_FORMAT,
                       nranks, nranks_from, sig.ratio);
        }
    }
    if (nranks == 0 && hint != NULL && hint->nranks > 0) {
        nranks = hint->nranks;
        g_free(nranks_from);
        nranks_from = g_strdup("the caller (topology)");
    }

    g_autoptr(cs_result_t) r = cs_result_new(t->producer ? t->producer : "measured:nccl-tests", name, coll,
                                             nranks, t->nnodes);
    if (t->producer != NULL)
        cs_result_add_note(r, "the log is collsim's own prediction (%s), not a measurement", t->producer);
    cs_result_add_note(r, "table %d of %s, first row at line %d", number, name, t->line);
    if (t->title != NULL)
        cs_result_add_note(r, "under: %s", t->title);
    cs_result_add_note(r, "collective %s from %s", cs_coll_name(coll), kind_from);
    if (nranks > 0)
        cs_result_add_note(r, "%d ranks from %s", nranks, nranks_from);
    else
        cs_result_add_note(r, "rank count not stated in the log");

    for (guint i = 0; i < t->rows->len; i++) {
        cs_nt_row_t *row = &g_array_index(t->rows, cs_nt_row_t, i);
        if (row->redop_none || row->redop_missing)
            row->r.redop = CS_REDOP_SUM;
        if (!cs_coll_has_root(coll))
            row->r.root = -1;
        if (nranks > 0) {
            guint64 want = cs_coll_count(coll, row->r.size, row->r.dtype, nranks);
            if (want != row->r.count)
                row_note(t, "line %d: count %" G_GUINT64_FORMAT " does not match size %"
                           G_GUINT64_FORMAT " (%s, %d ranks: %" G_GUINT64_FORMAT ")",
                           row->line, row->r.count, row->r.size, cs_coll_name(coll), nranks, want);
        }
        g_array_append_val(r->rows, row->r);
    }
    if (t->row_notes > CS_NT_MAX_ROW_NOTES)
        table_note(t, "%d more remarks about single rows", t->row_notes - CS_NT_MAX_ROW_NOTES);
    for (guint i = 0; i < t->notes->len; i++)
        cs_result_add_note(r, "%s", (const char *)g_ptr_array_index(t->notes, i));

    if (t->has_avg) {
        r->avg_busbw = t->avg_busbw;
    } else {
        cs_result_finish(r);
        cs_result_add_note(r, "average bus bandwidth computed from the rows (the log prints none)");
    }
    r->proc_threads = t->threads;
    r->proc_gpus = t->gpus;
    r->proc_from_line = t->threads_from_line;
    if (log->nranks == 0 && t->nranks > 0)
        log->nranks = t->nranks;
    g_array_append_val(log->table_numbers, number);
    g_array_append_val(log->table_lines, t->line);
    g_ptr_array_add(log->results, g_steal_pointer(&r));
    g_ptr_array_add(log->nccl_info, NULL);   /* the text reader fills it in (close_table) */
    g_ptr_array_add(log->commands, g_strdup(t->command));
    return TRUE;
}

/* ------------------------------------------------------------------ */
/* Tokens                                                               */

static gboolean parse_u64(const char *s, guint64 *v_p)
{
    guint64 v = 0;
    if (*s == '\0')
        return FALSE;
    for (; *s; s++) {
        if (!g_ascii_isdigit(*s) || v > (G_MAXUINT64 - 9) / 10)
            return FALSE;
        v = v * 10 + (guint64)(*s - '0');
    }
    *v_p = v;
    return TRUE;
}

static gboolean parse_long(const char *s, long lo, long hi, long *v_p)
{
    gboolean neg = *s == '-';
    guint64 u;
    if (!parse_u64(s + neg, &u) || u > (guint64)G_MAXLONG)
        return FALSE;
    long v = neg ? -(long)u : (long)u;
    if (v < lo || v > hi)
        return FALSE;
    *v_p = v;
    return TRUE;
}

static gboolean parse_num(const char *s, double *v_p)
{
    char *end = NULL;
    if (*s == '\0')
        return FALSE;
    double v = g_ascii_strtod(s, &end);
    if (end == s || *end != '\0' || !isfinite(v))
        return FALSE;
    *v_p = v;
    return TRUE;
}

static gboolean is_na(const char *s)
{
    return g_ascii_strcasecmp(s, "N/A") == 0 || g_ascii_strcasecmp(s, "NA") == 0;
}

static gboolean is_numeric(const char *s)
{
    double v;
    return is_na(s) || parse_num(s, &v);
}

/* Splits on blanks; the array owns the strings. */
static GPtrArray *tokenize(const char *s)
{
    GPtrArray *a = g_ptr_array_new_with_free_func(g_free);
    while (*s) {
        while (*s == ' ' || *s == '\t')
            s++;
        const char *b = s;
        while (*s && *s != ' ' && *s != '\t')
            s++;
        if (s > b)
            g_ptr_array_add(a, g_strndup(b, (gsize)(s - b)));
    }
    return a;
}

#define TOK(a, i) ((const char *)g_ptr_array_index((a), (i)))

/* ------------------------------------------------------------------ */
/* The text reader                                                      */

/* Column layout from a header line (writeResultHeader). */
typedef struct {
    gboolean known;
    gboolean has_root;
    int width;               /* columns per placement: 4, or 8 with per-iteration stats */
    int ngroups;             /* placements in the header: 1 or 2 */
    gboolean wrong_is_error; /* old format: "error" (max deviation), not "#wrong" */
    int algo_col, proto_col, nch_col, transport_col; /* among the extra columns, -1 absent */
} layout_t;

typedef struct {
    const char *name;
    const cs_nccltests_hint_t *hint;
    cs_nccltests_log_t *log;
    int line;

    /* what the file said about the run(s) since the last reset */
    int max_rank, rank_lines;
    GPtrArray *hosts;
    int cmd_nranks, cmd_line;
    int cmd_threads, cmd_gpus;   /* its -t and -g; 0: not read */
    char *cmd_text;          /* the last command line (an nccl-tests binary), NULL: none yet */
    int hdr_threads, hdr_gpus;   /* the last "# nThread T nGpus G" line; 0: none */
    long hdr_agg, hdr_graph;     /* its "agg iters: N" and "graph: N"; 0: not said */
    int hdr_line;
    cs_nt_kind_t kind;
    char *kind_from;
    char *title;
    char *producer;          /* "model:X" after collsim's own first line */

    layout_t layout;
    cs_nt_table_t *cur;
    guint64 last_size;
    GPtrArray *unread;       /* rows of 'cur' not read, until it closes */
    cs_nccl_info_t *info;    /* NCCL INFO lines since the last table closed */
    cs_nccl_info_t *run_info;/* the lines the run's first table took, for its later tables */
} parser_t;

static void reset_ranks(parser_t *p)
{
    p->max_rank = -1;
    p->rank_lines = 0;
    g_ptr_array_set_size(p->hosts, 0);
}

static void set_kind(parser_t *p, cs_nt_kind_t k, const char *what)
{
    p->kind = k;
    g_free(p->kind_from);
    p->kind_from = g_strdup_printf("'%s' at line %d", what, p->line);
}

/* The NCCL lines from here on are another table's. */
static void info_restart(parser_t *p)
{
    cs_nccl_info_free(p->info);
    p->info = cs_nccl_info_new();
}

/* ... and another run's: its tables share nothing with the last run's. */
static void run_restart(parser_t *p)
{
    info_restart(p);
    g_clear_pointer(&p->run_info, cs_nccl_info_free);
}

static gboolean close_table(parser_t *p, GError **err)
{
    if (p->cur == NULL)
        return TRUE;
    g_autoptr(cs_nt_table_t) t = g_steal_pointer(&p->cur);
    p->last_size = 0;
    if (t->rows->len == 0 && p->unread->len > 0) {
        /* not one row of the table read: the first reason is the error */
        g_set_error_literal(err, CS_ERROR, CS_ERROR_INPUT, g_ptr_array_index(p->unread, 0));
        return FALSE;
    }
    guint nresults = p->log->results->len;
    if (!cs_nt_table_finish(p->log, t, p->name, p->hint, err))
        return FALSE;
    /* the run's INFO lines go with its table (a skipped table's with it);
     * a later table of the run that printed none of its own (nccl-tests
     * -d all, -o all: one communicator, several tables) has the lines the
     * run printed first (its setup: transports, rings, '# Rank' hosts). A
     * later table that printed some has those alone; the run's first
     * lines stay the run's. A run is told from the next by its nccl-tests
     * header lines (run_restart); runs without them read as one. */
    /* (the '# Rank' lines' GPU name alone keeps them too: validate holds it
     * against the topology's) */
    gboolean any = cs_nccl_info_any(p->info) || p->info->rank_gpu.count > 0;
    if (any && p->run_info == NULL)
        p->run_info = cs_nccl_info_ref(p->info);
    if (p->log->results->len > nresults) {
        cs_nccl_info_t **slot = (cs_nccl_info_t **)&g_ptr_array_index(p->log->nccl_info, p->log->nccl_info->len - 1);
        if (any)
            *slot = g_steal_pointer(&p->info);
        else if (p->run_info != NULL)
            *slot = cs_nccl_info_ref(p->run_info);
    }
    info_restart(p);
    /* (finish numbered the table, skipped or not) */
    for (guint i = 0; i < p->unread->len; i++) {
        g_ptr_array_add(p->log->unread, g_strdup(g_ptr_array_index(p->unread, i)));
        g_array_append_val(p->log->unread_tables, p->log->ntables);
    }
    g_ptr_array_set_size(p->unread, 0);
    return TRUE;
}

static void open_table(parser_t *p, int line)
{
    cs_nt_table_t *t = cs_nt_table_new(line);
    t->kind = p->kind;
    t->kind_from = g_strdup(p->kind_from);
    if (p->rank_lines > 0) {
        t->nranks = p->max_rank + 1;
        t->nranks_from = g_strdup("the '# Rank' lines");
        /* hosts count nodes only when every rank line is there */
        if (p->rank_lines == p->max_rank + 1)
            t->nnodes = (int)p->hosts->len;
    } else if (p->cmd_nranks > 0) {
        t->nranks = p->cmd_nranks;
        t->nranks_from = g_strdup_printf("the command line at line %d", p->cmd_line);
    }
    t->title = g_strdup(p->title);
    t->command = g_strdup(p->cmd_text);
    t->producer = g_strdup(p->producer);
    t->threads = p->hdr_threads;
    t->gpus = p->hdr_gpus;
    /* no "nThread" line (a log pasted without its header): the command's
     * -t and -g say the same */
    if (t->threads == 0 && p->cmd_text != NULL && p->cmd_threads > 0 && p->cmd_gpus > 0) {
        t->threads = p->cmd_threads;
        t->gpus = p->cmd_gpus;
        t->threads_from_line = p->cmd_line;
    }
    /* what a call's host side is not, in such a run: collsim prices each
     * call launched on its own (lat.launch.cpu*, docs/model-analytic.md) */
    if (p->hdr_graph > 0)
        table_note(t, "line %d: the run launched its calls as CUDA graphs (graph: %ld, nccl-tests -G), "
                   "which replay the kernels without the host's per-call work collsim prices; not modelled: "
                   "predicted times where the host bounds a call (small sizes) are for calls launched one by one",
                   p->hdr_line, p->hdr_graph);
    if (p->hdr_agg > 1)
        table_note(t, "line %d: the run grouped %ld calls an iteration (agg iters: %ld, nccl-tests -m), which "
                   "NCCL launches together; not modelled: predicted times where the host bounds a call (small "
                   "sizes) are for calls launched one by one", p->hdr_line, p->hdr_agg, p->hdr_agg);
    p->cur = t;
}

/* "size count type [redop] [root] time algbw busbw #wrong ..." after '#'. */
static gboolean parse_header(GPtrArray *tok, layout_t *l_p)
{
    guint i = 0, n = tok->len;
    if (n < 3 || strcmp(TOK(tok, 0), "size") != 0 || strcmp(TOK(tok, 1), "count") != 0 ||
        strcmp(TOK(tok, 2), "type") != 0)
        return FALSE;
    layout_t l = { .known = TRUE, .width = 4, .algo_col = -1, .proto_col = -1, .nch_col = -1,
                   .transport_col = -1 };
    i = 3;
    if (i < n && strcmp(TOK(tok, i), "redop") == 0)
        i++;
    if (i < n && strcmp(TOK(tok, i), "root") == 0) {
        l.has_root = TRUE;
        i++;
    }
    while (i + 2 < n && (strcmp(TOK(tok, i), "time") == 0 || strcmp(TOK(tok, i), "cputime") == 0)) {
        if (strcmp(TOK(tok, i + 1), "algbw") != 0 || strcmp(TOK(tok, i + 2), "busbw") != 0)
            break;
        i += 3;
        if (i < n && (strcmp(TOK(tok, i), "#wrong") == 0 || strcmp(TOK(tok, i), "error") == 0)) {
            l.wrong_is_error = strcmp(TOK(tok, i), "error") == 0;
            i++;
        }
        int w = 4;
        while (i < n && g_str_has_prefix(TOK(tok, i), "i_")) {
            i++;
            w++;
        }
        l.width = w;
        l.ngroups++;
    }
    if (l.ngroups == 0)
        return FALSE;
    for (int x = 0; i < n; i++, x++) {
        const char *c = TOK(tok, i);
        if (g_ascii_strcasecmp(c, "algo") == 0 || g_ascii_strcasecmp(c, "algorithm") == 0)
            l.algo_col = x;
        else if (g_ascii_strcasecmp(c, "proto") == 0 || g_ascii_strcasecmp(c, "protocol") == 0)
            l.proto_col = x;
        else if (g_ascii_strcasecmp(c, "channels") == 0 || g_ascii_strcasecmp(c, "nch") == 0 ||
                 g_ascii_strcasecmp(c, "nchannels") == 0)
            l.nch_col = x;
        else if (g_ascii_strcasecmp(c, "transport") == 0)
            l.transport_col = x;
    }
    *l_p = l;
    return TRUE;
}

/* ROW_CUT: a row whose columns are good as far as they go, and stop
 * before its times (a log cut off mid-row): not read, as ROW_NOT's rows */
typedef enum { ROW_NOT, ROW_OK, ROW_ERR, ROW_CUT } row_status_t;

static gboolean read_wrong(const layout_t *l, const char *s, long *v_p)
{
    double v;
    if (is_na(s)) {
        *v_p = -1;
        return TRUE;
    }
    if (!parse_num(s, &v) || v < 0)
        return FALSE;
    /* old logs print the largest deviation ("5e-07"), not a count */
    if ((l->known && l->wrong_is_error) || v != floor(v) || v > (double)G_MAXLONG)
        *v_p = -1;
    else
        *v_p = (long)v;
    return TRUE;
}

/* time algbw busbw [#wrong] of one placement from tok[i..i+avail). */
static gboolean read_placement(parser_t *p, const layout_t *l, GPtrArray *tok, guint i, guint avail,
                               cs_result_row_t *r, int pl, GError **err)
{
    static const char *what[] = { "time", "algbw", "busbw" };
    /* beyond any run: a day per call (us), a petabyte per second (GB/s) */
    static const double most[] = { CS_NT_TIME_MAX_US, CS_NT_BW_MAX, CS_NT_BW_MAX };
    static const char *most_s[] = { "86400000000 (a day, in us)", "1000000 GB/s", "1000000 GB/s" };
    double v[3];
    for (int j = 0; j < 3; j++) {
        if (!parse_num(TOK(tok, i + j), &v[j]) || v[j] < 0) {
            cs_set_error_at(err, p->name, p->line,
                            "bad %s %s '%s'; expected a number >= 0", pl == CS_OOP ? "out-of-place" : "in-place",
                            what[j], TOK(tok, i + j));
            return FALSE;
        }
        if (v[j] > most[j]) {
            cs_set_error_at(err, p->name, p->line, "%s %s '%s' is beyond any run; expected at most %s",
                            pl == CS_OOP ? "out-of-place" : "in-place", what[j], TOK(tok, i + j), most_s[j]);
            return FALSE;
        }
    }
    r->time_us[pl] = v[0];
    r->algbw[pl] = v[1];
    r->busbw[pl] = v[2];
    r->wrong[pl] = -1;
    if (avail >= 4 && !read_wrong(l, TOK(tok, i + 3), &r->wrong[pl])) {
        cs_set_error_at(err, p->name, p->line, "bad %s #wrong '%s'; expected a count, N/A or an error value",
                        pl == CS_OOP ? "out-of-place" : "in-place", TOK(tok, i + 3));
        return FALSE;
    }
    return TRUE;
}

/* Columns of a whole row under layout l (a header's, else nccl-tests'
 * usual: a root and two placements of four). */
static guint full_row(const layout_t *l)
{
    if (!l->known)
        return 4 + 1 + 2 * 4;
    return 4 + (l->has_root ? 1 : 0) + (guint)(l->width * l->ngroups);
}

static row_status_t parse_row(parser_t *p, GPtrArray *tok, cs_nt_row_t *out, GError **err)
{
    guint n = tok->len;
    guint64 size, count;
    cs_dtype_t dt;
    if (n < 3 || !parse_u64(TOK(tok, 0), &size) || !parse_u64(TOK(tok, 1), &count))
        return ROW_NOT;
    if (!cs_dtype_parse(TOK(tok, 2), &dt)) {
        if (n >= 7 && g_ascii_isalpha(TOK(tok, 2)[0]) && is_numeric(TOK(tok, n - 1))) {
            cs_set_error_at(err, p->name, p->line,
                            "unknown data type '%s'; expected a nccl-tests type (float, half, "
                            "bfloat16, double, int8, uint8, int32, uint32, int64, uint64, f8e4m3, f8e5m2)",
                            TOK(tok, 2));
            return ROW_ERR;
        }
        return ROW_NOT;
    }
    const layout_t *l = &p->layout;
    cs_nt_row_t row = { .line = p->line };
    cs_result_row_t *r = &row.r;
    r->size = size;
    r->count = count;
    r->dtype = dt;
    r->root = -1;
    r->nccl_est_us = -1;
    for (int pl = 0; pl < 2; pl++) {
        r->time_us[pl] = r->algbw[pl] = r->busbw[pl] = -1;
        r->wrong[pl] = -1;
    }

    guint i = 3;
    if (i < n && !is_numeric(TOK(tok, i))) {
        const char *op = TOK(tok, i);
        if (g_ascii_strcasecmp(op, "none") == 0) {
            row.redop_none = TRUE;
        } else if (g_ascii_strcasecmp(op, "mulsum") == 0 || g_ascii_strcasecmp(op, "premulsum") == 0) {
            r->redop = CS_REDOP_SUM; /* ncclRedOpCreatePreMulSum: a sum after a scaling */
        } else if (!cs_redop_parse(op, &r->redop)) {
            cs_set_error_at(err, p->name, p->line,
                            "unknown reduction '%s'; expected sum, prod, min, max, avg, mulsum or none", op);
            return ROW_ERR;
        }
        i++;
    } else {
        row.redop_missing = TRUE;
    }

    /* the numeric columns that follow: by position under a header line,
     * else as many as there are (extra words after them are ignored) */
    guint nnum = 0;
    gboolean has_root;
    guint width = 4;
    if (l->known) {
        has_root = l->has_root;
        width = (guint)l->width;
        guint want = (has_root ? 1 : 0) + width * (guint)l->ngroups;
        nnum = MIN(n - i, want);
    } else {
        while (i + nnum < n && is_numeric(TOK(tok, i + nnum)))
            nnum++;
        for (guint j = i + nnum + 1; j < n; j++)
            if (is_numeric(TOK(tok, j))) {
                cs_set_error_at(err, p->name, p->line, "bad value '%s' in column %u; expected a number",
                                TOK(tok, i + nnum), i + nnum + 1);
                return ROW_ERR;
            }
        /* root + 2 x 4 or 1 x 4 columns: odd with a root, even without */
        has_root = nnum % 2 == 1;
    }
    row.root_missing = !has_root;
    if (has_root) {
        long root;
        if (nnum == 0 && i >= n)
            return ROW_CUT;
        if (nnum == 0 || !parse_long(TOK(tok, i), -1, G_MAXINT, &root)) {
            cs_set_error_at(err, p->name, p->line, "bad root '%s'; expected -1 or a rank",
                            nnum == 0 ? (i < n ? TOK(tok, i) : "") : TOK(tok, i));
            return ROW_ERR;
        }
        r->root = (int)root;
        i++;
        nnum--;
    }
    if (nnum < 3 && i + nnum >= n)
        return ROW_CUT;
    if (nnum < 3) {
        cs_set_error_at(err, p->name, p->line, "row has too few columns; " EXPECTED_COLUMNS);
        return ROW_ERR;
    }
    guint take = MIN(nnum, width);
    if (!read_placement(p, l, tok, i, take, r, CS_OOP, err))
        return ROW_ERR;
    i += take;
    nnum -= take;
    if (nnum >= 3) {
        take = MIN(nnum, width);
        if (!read_placement(p, l, tok, i, take, r, CS_INP, err))
            return ROW_ERR;
        i += take;
        nnum -= take;
    } else if (nnum > 0) {
        row.r.time_us[CS_INP] = -2; /* marker: in-place cut short, noted by the caller */
        i += nnum;
        nnum = 0;
    }
    /* data moved in no time: nccl-tests prints at least a launch's */
    if (r->size > 0 && r->time_us[CS_OOP] == 0) {
        cs_set_error_at(err, p->name, p->line, "out-of-place time 0 us for %" G_GUINT64_FORMAT " bytes; expected "
                        "a time above 0", (guint64)r->size);
        return ROW_ERR;
    }
    /* extra columns: collsim's own (algo, proto, channels, transport) when named */
    if (l->known) {
        for (guint x = 0; i + x < n; x++) {
            const char *c = TOK(tok, i + x);
            long v;
            if (strcmp(c, "-") == 0)
                continue; /* collsim writes "-" for unknown */
            if ((int)x == l->algo_col)
                g_strlcpy(r->algo, c, sizeof r->algo);
            else if ((int)x == l->proto_col)
                g_strlcpy(r->proto, c, sizeof r->proto);
            else if ((int)x == l->transport_col)
                g_strlcpy(r->transport, c, sizeof r->transport);
            else if ((int)x == l->nch_col && parse_long(c, 0, 4096, &v))
                r->nchannels = (int)v;
        }
    }
    *out = row;
    return ROW_OK;
}

/* nccl-tests's NCCL_VERSION_CODE: major*10000 + minor*100 + patch since
 * 2.9, major*1000 + minor*100 + patch before (nccl.h). */
static char *version_from_code(long code)
{
    if (code >= 10000)
        return g_strdup_printf("%ld.%ld.%ld", code / 10000, (code % 10000) / 100, code % 100);
    return g_strdup_printf("%ld.%ld.%ld", code / 1000, (code % 1000) / 100, code % 100);
}

static cs_nt_kind_t prose_kind(const char *s);

static void comment_line(parser_t *p, const char *body, GPtrArray *tok)
{
    long v;
    if (tok->len >= 2 && strcmp(TOK(tok, 0), "Rank") == 0 && parse_long(TOK(tok, 1), 0, G_MAXINT - 1, &v)) {
        p->max_rank = MAX(p->max_rank, (int)v);
        p->rank_lines++;
        for (guint i = 2; i + 1 < tok->len; i++) {
            if (strcmp(TOK(tok, i), "on") != 0)
                continue;
            const char *host = TOK(tok, i + 1);
            guint j;
            for (j = 0; j < p->hosts->len; j++)
                if (strcmp(g_ptr_array_index(p->hosts, j), host) == 0)
                    break;
            if (j == p->hosts->len)
                g_ptr_array_add(p->hosts, g_strdup(host));
            /* "Rank 3 Group 1 ...": NCCL_TESTS_SPLIT_MASK's communicators */
            long grp = 0;
            if (tok->len >= 4 && strcmp(TOK(tok, 2), "Group") == 0 && !parse_long(TOK(tok, 3), 0, G_MAXINT, &grp))
                grp = 0;
            cs_nccl_info_rank_host(p->info, (int)v, (int)j, (int)grp);
            /* "... Pid 1234 on hostB ...": the process, as NCCL's lines name it */
            long pid;
            if (i >= 2 && strcmp(TOK(tok, i - 2), "Pid") == 0 && parse_long(TOK(tok, i - 1), 0, G_MAXINT, &pid))
                cs_nccl_info_rank_proc(p->info, host, pid);
            /* "... device 3 [0x61] NVIDIA B200": the GPU's name, the rest
             * of the line after the bus id */
            const char *dv = strstr(body, " device ");
            if (dv != NULL) {
                const char *q = dv + strlen(" device ");
                while (*q == ' ')
                    q++;
                size_t nd = strspn(q, "0123456789");
                q += nd;
                while (*q == ' ')
                    q++;
                const char *close = *q == '[' ? strchr(q, ']') : NULL;
                if (nd > 0 && close != NULL) {
                    const char *gname = close + 1;
                    while (*gname == ' ')
                        gname++;
                    cs_nccl_info_rank_gpu(p->info, gname, strcspn(gname, "\r\n"), p->line);
                }
            }
            break;
        }
        return;
    }
    if (tok->len >= 1 && (strcmp(TOK(tok, 0), "nThread") == 0 || strcmp(TOK(tok, 0), "Using") == 0)) {
        if (strcmp(TOK(tok, 0), "nThread") == 0) {
            reset_ranks(p);
            /* "nThread 1 nGpus 8 minBytes ...": the run's process layout */
            long th, g;
            gboolean ok = tok->len >= 4 && strcmp(TOK(tok, 2), "nGpus") == 0 &&
                          parse_long(TOK(tok, 1), 1, 1024, &th) && parse_long(TOK(tok, 3), 1, 1024, &g);
            p->hdr_threads = ok ? (int)th : 0;
            p->hdr_gpus = ok ? (int)g : 0;
            /* "... agg iters: 1 validation: 1 graph: 0 unalign: 0" */
            p->hdr_agg = p->hdr_graph = 0;
            p->hdr_line = p->line;
            for (guint i = 0; i + 1 < tok->len; i++) {
                long num;
                if (strcmp(TOK(tok, i), "graph:") == 0 && parse_long(TOK(tok, i + 1), 0, 1 << 30, &num))
                    p->hdr_graph = num;
                else if (i + 2 < tok->len && strcmp(TOK(tok, i), "agg") == 0 && strcmp(TOK(tok, i + 1), "iters:") == 0 &&
                         parse_long(TOK(tok, i + 2), 0, 1 << 30, &num))
                    p->hdr_agg = num;
            }
        }
        return;
    }
    if (g_str_has_prefix(body, "nccl-tests version")) {
        reset_ranks(p);
        /* "nccl-tests version 2.18.3 nccl-headers=22903 nccl-library=22903":
         * the benchmark's build, the first such line of the log */
        const char *hdr = strstr(body, "nccl-headers=");
        if (p->log->nccltests_version == 0 && tok->len >= 3) {
            const char *end = NULL;
            int code = cs_nccl_version_code(TOK(tok, 2), &end);
            if (code > 0 && *end == '\0') {
                p->log->nccltests_version = code;
                if (hdr != NULL) {
                    g_autofree char *num = g_strndup(hdr + 13, strspn(hdr + 13, "0123456789"));
                    g_autofree char *ver = parse_long(num, 0, 1000000, &v) ? version_from_code(v) : NULL;
                    p->log->nccltests_headers = ver != NULL ? cs_nccl_version_code(ver, NULL) : 0;
                }
            }
        }
        const char *lib = strstr(body, "nccl-library=");
        if (lib != NULL && p->log->nccl_version == NULL) {
            g_autofree char *num = g_strndup(lib + 13, strspn(lib + 13, "0123456789"));
            if (parse_long(num, 0, 1000000, &v))
                p->log->nccl_version = version_from_code(v);
        }
        return;
    }
    /* collsim run's first line: "collsim 0.1.0 prediction (model: analytic) ..." */
    const char *m = strstr(body, " prediction (model: ");
    if (g_str_has_prefix(body, "collsim ") && m != NULL) {
        m += strlen(" prediction (model: ");
        size_t n = strcspn(m, ")");
        if (m[n] == ')' && n > 0 && n < 32) {
            g_free(p->producer);
            g_autofree char *model = g_strndup(m, n);
            p->producer = g_strdup_printf("model:%s", model);
        }
        return;
    }
    if (g_str_has_prefix(body, "Collective test starting:")) {
        g_autofree char *name = g_strstrip(g_strdup(body + strlen("Collective test starting:")));
        cs_nt_kind_t k = cs_nt_kind_from_name(name);
        if (k != CS_NT_UNKNOWN)
            set_kind(p, k, name);
        return;
    }
    /* a title written as a comment: "### broadcast_perf (root 0) ###" */
    cs_nt_kind_t k = prose_kind(body);
    if (k != CS_NT_UNKNOWN)
        set_kind(p, k, cs_nt_kind_test_name(k));
}

/* A prose line naming nccl-tests binaries or collectives: "all_reduce_perf",
 * ".../all_reduce_roce_1gpu.log", "### tests/data/nccl_allgather.log", "###
 * broadcast_perf ###". The short names (broadcast, reduce, gather,
 * scatter) count only as "<name>_perf" or "<name>.log". Returns
 * the kind when the line names exactly one. */
static cs_nt_kind_t prose_kind(const char *s)
{
    /* 'joined': the name also counts after an underscore ("nccl_allgather.log",
     * SuperBench's log names): none of them ends another name, unlike
     * "reduce_perf" in "all_reduce_perf" */
    static const struct { const char *text; cs_nt_kind_t kind; gboolean joined; } names[] = {
        { "all_reduce", CS_NT_ALLREDUCE, TRUE }, { "all_gather", CS_NT_ALLGATHER, TRUE },
        { "reduce_scatter", CS_NT_REDUCESCATTER, TRUE }, { "alltoallv", CS_NT_ALLTOALLV, TRUE },
        { "alltoall", CS_NT_ALLTOALL, TRUE }, { "all_to_all", CS_NT_ALLTOALL, TRUE },
        { "allreduce", CS_NT_ALLREDUCE, TRUE }, { "allgather", CS_NT_ALLGATHER, TRUE },
        { "reducescatter", CS_NT_REDUCESCATTER, TRUE },
        { "sendrecv", CS_NT_SENDRECV, TRUE }, { "hypercube", CS_NT_HYPERCUBE, TRUE },
        { "broadcast_perf", CS_NT_BROADCAST, FALSE }, { "reduce_perf", CS_NT_REDUCE, FALSE },
        { "gather_perf", CS_NT_GATHER, FALSE }, { "scatter_perf", CS_NT_SCATTER, FALSE },
        /* a log named for the short ones: "nccl_broadcast.log" */
        { "broadcast.log", CS_NT_BROADCAST, TRUE }, { "reduce.log", CS_NT_REDUCE, TRUE },
        { "gather.log", CS_NT_GATHER, TRUE }, { "scatter.log", CS_NT_SCATTER, TRUE },
    };
    cs_nt_kind_t found = CS_NT_UNKNOWN;
    for (const char *c = s; *c; c++) {
        if (c > s && g_ascii_isalnum(c[-1]))
            continue;
        for (guint j = 0; j < G_N_ELEMENTS(names); j++) {
            size_t len = strlen(names[j].text);
            if (strncmp(c, names[j].text, len) != 0 || (c > s && c[-1] == '_' && !names[j].joined))
                continue;
            if (found != CS_NT_UNKNOWN && found != names[j].kind)
                return CS_NT_UNKNOWN;
            found = names[j].kind;
            c += len - 1;
            break;
        }
    }
    return found;
}

static gboolean flag_value(GPtrArray *tok, guint *i_p, guint end, const char *const *flags, long *v_p,
                           gboolean *bad_p)
{
    const char *t = TOK(tok, *i_p);
    for (int f = 0; flags[f] != NULL; f++) {
        size_t len = strlen(flags[f]);
        const char *val = NULL;
        if (strcmp(t, flags[f]) == 0) {
            if (*i_p + 1 >= end)
                return FALSE;
            val = TOK(tok, ++*i_p);
        } else if (strncmp(t, flags[f], len) == 0 && (t[len] == '=' ||
                   (flags[f][1] != '-' && len == 2 && g_ascii_isdigit(t[len])))) {
            val = t + len + (t[len] == '=');  /* --np=16, -g8 */
        } else {
            continue;
        }
        if (!parse_long(val, 1, 1000000, v_p))
            *bad_p = TRUE;
        return TRUE;
    }
    return FALSE;
}

const char *const cs_nccltests_launchers[] = { "mpirun", "mpiexec", "mpiexec.hydra", "orterun", "srun",
                                                "prun", "jsrun", "aprun", NULL };

const char *cs_nccltests_launcher(const char *command)
{
    if (command == NULL)
        return NULL;
    g_auto(GStrv) words = g_strsplit_set(command, " \t", -1);
    for (int i = 0; words[i] != NULL; i++) {
        const char *base = strrchr(words[i], '/') != NULL ? strrchr(words[i], '/') + 1 : words[i];
        for (int j = 0; cs_nccltests_launchers[j] != NULL; j++)
            if (strcmp(base, cs_nccltests_launchers[j]) == 0)
                return cs_nccltests_launchers[j];
    }
    return NULL;
}

/* A command line running an nccl-tests binary: remembers its collective and
 * its rank count, processes (mpirun -np / srun -n; 1 without a launcher)
 * times -t threads times -g GPUs (nccl-tests common.cu). */
static gboolean command_line(parser_t *p, const char *line)
{
    static const char *const np_flags[] = { "-np", "--np", "-n", "--n", "--ntasks", NULL };
    static const char *const g_flags[] = { "-g", "--ngpus", NULL };
    static const char *const t_flags[] = { "-t", "--nthreads", NULL };
    g_autoptr(GPtrArray) tok = tokenize(line);
    /* quoted in markdown: `./build/all_reduce_perf -g 2` */
    for (guint i = 0; i < tok->len; i++) {
        char *t = g_ptr_array_index(tok, i);
        size_t n = strlen(t), b = strspn(t, "`'\"");
        while (n > b && strchr("`'\"", t[n - 1]) != NULL)
            n--;
        memmove(t, t + b, n - b);
        t[n - b] = '\0';
    }
    int bin = -1;
    cs_nt_kind_t kind = CS_NT_UNKNOWN;
    for (guint i = 0; i < tok->len; i++) {
        const char *t = TOK(tok, i);
        size_t len = strlen(t);
        if (!has_suffix(t, len, "_perf") && !has_suffix(t, len, "_perf_mpi"))
            continue;
        /* "a_perf/b_perf" lists several binaries, not a path */
        const char *slash = strrchr(t, '/');
        if (slash != NULL && g_strstr_len(t, slash - t, "_perf") != NULL)
            continue;
        cs_nt_kind_t k = cs_nt_kind_from_name(t);
        if (k == CS_NT_UNKNOWN)
            continue;
        if (bin >= 0 && k != kind)
            return FALSE; /* "all_reduce_perf / alltoall_perf": which one? */
        if (bin < 0) {
            bin = (int)i;
            kind = k;
        }
    }
    if (bin < 0)
        return FALSE;
    long procs = 1, g = 1, t = 1, v;
    gboolean bad = FALSE, launcher = FALSE;
    for (guint i = 0; i < (guint)bin; i++) {
        const char *base = strrchr(TOK(tok, i), '/');
        base = base ? base + 1 : TOK(tok, i);
        if (!launcher) {
            for (int j = 0; cs_nccltests_launchers[j] != NULL; j++)
                if (strcmp(base, cs_nccltests_launchers[j]) == 0) {
                    launcher = TRUE;
                    procs = 0;
                }
            continue;
        }
        if (flag_value(tok, &i, (guint)bin, np_flags, &v, &bad) && !bad)
            procs = v;
    }
    /* a title ("### all_reduce_perf ###") names a binary without running it:
     * a command has a launcher, a path or options */
    if (!launcher && strchr(TOK(tok, bin), '/') == NULL &&
        ((guint)bin + 1 >= tok->len || TOK(tok, bin + 1)[0] != '-'))
        return FALSE;
    for (guint i = (guint)bin + 1; i < tok->len; i++) {
        if (flag_value(tok, &i, tok->len, g_flags, &v, &bad) && !bad)
            g = v;
        else if (!bad && flag_value(tok, &i, tok->len, t_flags, &v, &bad) && !bad)
            t = v;
    }
    g_autofree char *name = g_strdup(TOK(tok, bin));
    set_kind(p, kind, name);
    reset_ranks(p);
    p->cmd_line = p->line;
    g_free(p->cmd_text);
    p->cmd_text = g_strndup(line, 4096);
    p->cmd_nranks = (!bad && procs > 0 && procs * g * t <= G_MAXINT) ? (int)(procs * g * t) : 0;
    p->cmd_threads = !bad && t <= 1024 ? (int)t : 0;
    p->cmd_gpus = !bad && g <= 1024 ? (int)g : 0;
    if (p->log->command == NULL)
        p->log->command = g_strdup(line);
    return TRUE;
}

/* An NCCL INFO line that only older NCCLs print bounds the run's version
 * (the first such line; a version line, when the log has one, wins in
 * validate). "Launch mode Parallel" (or "Group"): enqueue.cc
 * ncclBarrierEnqueueWait prints it once per process up to v2.12.12; v2.13.4
 * dropped the launch modes and the line with them. */
static void info_line(parser_t *p, const char *line)
{
    cs_nccl_info_line(p->info, line, p->line);
    if (p->log->nccl_version_max == 0 && strstr(line, "NCCL INFO Launch mode ") != NULL) {
        p->log->nccl_version_max = 21212;
        p->log->nccl_version_max_line = p->line;
        p->log->nccl_version_max_why = "'NCCL INFO Launch mode', which NCCL prints up to 2.12";
    }
}

static gboolean prose_line(parser_t *p, const char *line, GError **err)
{
    /* log noise and elision marks inside a table leave it open */
    if (strstr(line, "NCCL INFO") != NULL || strstr(line, "NCCL WARN") != NULL) {
        info_line(p, line);
        return TRUE;
    }
    if (g_str_has_prefix(line, "[...") || g_str_has_prefix(line, "...") ||
        g_str_has_prefix(line, "\xe2\x80\xa6"))
        return TRUE;
    if (g_str_has_prefix(line, "NCCL version ")) {
        if (p->log->nccl_version == NULL) {
            g_autoptr(GPtrArray) tok = tokenize(line + strlen("NCCL version "));
            if (tok->len > 0)
                p->log->nccl_version = g_strdup(TOK(tok, 0));
        }
        return TRUE;
    }
    if (!close_table(p, err))
        return FALSE;
    p->layout.known = FALSE;
    g_free(p->title);
    p->title = g_strndup(line, 120);
    if (!command_line(p, line)) {
        cs_nt_kind_t k = prose_kind(line);
        if (k != CS_NT_UNKNOWN)
            set_kind(p, k, cs_nt_kind_test_name(k));
    }
    return TRUE;
}

/* srun -l ("0: ") and mpirun --tag-output ("[1,0]<stdout>:") prefixes. */
static const char *strip_prefix(const char *s)
{
    const char *c = s;
    while (*c == ' ' || *c == '\t')
        c++;
    const char *d = c;
    while (g_ascii_isdigit(*d))
        d++;
    if (d > c && d[0] == ':' && (d[1] == ' ' || d[1] == '\t' || d[1] == '\0'))
        return d + 1;
    if (*c == '[') {
        const char *e = strchr(c, ']');
        if (e != NULL && (g_str_has_prefix(e, "]<stdout>:") || g_str_has_prefix(e, "]<stderr>:")))
            return e + strlen("]<stdout>:");
    }
    return s;
}

/* A whole number of bytes or elements as a row's first two columns hold. */
static char *bad_count_why(const char *what, const char *s)
{
    guint64 v;
    if (parse_u64(s, &v))
        return NULL;
    if (s[0] == '-')
        return g_strdup_printf("%s '%s' is negative; expected a whole number of at least 0", what, s);
    gboolean digits = TRUE;
    for (const char *c = s; *c && digits; c++)
        digits = g_ascii_isdigit(*c);
    if (digits)
        return g_strdup_printf("%s '%s' is too large; expected at most %" G_GUINT64_FORMAT, what, s, G_MAXUINT64);
    return g_strdup_printf("%s '%s' is not a whole number; expected a count such as 1048576", what, s);
}

/* Inside a table, a line that parse_row refused but that starts as a row
 * does (two numbers, or a lone number: a row cut off) is a row that could
 * not be read: why, or NULL for a line of prose ("8 GPUs found"). */
static char *unread_row_why(GPtrArray *tok)
{
    double v;
    if (tok->len == 0 || !parse_num(TOK(tok, 0), &v) || (tok->len > 1 && !parse_num(TOK(tok, 1), &v)))
        return NULL;
    char *why = bad_count_why("size", TOK(tok, 0));
    if (why == NULL && tok->len > 1)
        why = bad_count_why("count", TOK(tok, 1));
    if (why != NULL)
        return why;
    if (tok->len < 3)
        return g_strdup_printf("cut off after %u column%s; " EXPECTED_COLUMNS, tok->len, tok->len == 1 ? "" : "s");
    return g_strdup_printf("unknown data type '%s'; expected a nccl-tests type such as float", TOK(tok, 2));
}

static gboolean text_line(parser_t *p, const char *raw, GError **err)
{
    const char *s = strip_prefix(raw);
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s == '\0')
        return TRUE;
    if (*s == '#') {
        const char *body = s;
        while (*body == '#')
            body++;
        while (*body == ' ' || *body == '\t')
            body++;
        g_autoptr(GPtrArray) tok = tokenize(body);
        layout_t l;
        if (parse_header(tok, &l)) {
            if (!close_table(p, err))
                return FALSE;
            p->layout = l;
            return TRUE;
        }
        if (g_str_has_prefix(body, "nccl-tests version") || g_str_has_prefix(body, "Collective test starting") ||
            g_str_has_prefix(body, "nThread ")) {
            /* a run begins (nccl-tests >= 2.18.5 prints its version first,
             * >= 2.16.7 "Collective test starting", every one "nThread"):
             * a table still open is a run cut off, and the NCCL lines from
             * here on are the new run's */
            if (!close_table(p, err))
                return FALSE;
            run_restart(p);
        }
        if (g_str_has_prefix(body, "Avg bus bandwidth")) {
            const char *colon = strchr(body, ':');
            double v;
            g_autoptr(GPtrArray) vt = tokenize(colon ? colon + 1 : "");
            if (p->cur != NULL && vt->len > 0 && parse_num(TOK(vt, 0), &v)) {
                p->cur->avg_busbw = v;
                p->cur->has_avg = TRUE;
            }
            if (!close_table(p, err))
                return FALSE;
            p->layout.known = FALSE;
            return TRUE;
        }
        if (g_str_has_prefix(body, "Collective test concluded")) {
            if (!close_table(p, err))
                return FALSE;
            p->layout.known = FALSE;
            return TRUE;
        }
        comment_line(p, body, tok);
        return TRUE;
    }

    g_autoptr(GPtrArray) tok = tokenize(s);
    cs_nt_row_t row;
    row_status_t st = parse_row(p, tok, &row, err);
    g_autofree char *partial = NULL;
    if (st == ROW_ERR && (p->cur != NULL || p->layout.known) && tok->len > 3 && tok->len < full_row(&p->layout)) {
        /* a row shorter than a whole one whose columns are good but for
         * its last: cut off inside that column (a log truncated at a
         * byte: "su" for sum, "N" for N/A) */
        g_autoptr(GPtrArray) less = g_ptr_array_new();
        for (guint k = 0; k + 1 < tok->len; k++)
            g_ptr_array_add(less, g_ptr_array_index(tok, k));
        cs_nt_row_t r2;
        row_status_t st2 = parse_row(p, less, &r2, NULL);
        if (st2 == ROW_OK || st2 == ROW_CUT) {
            g_clear_error(err);
            partial = g_strdup_printf("cut off in column %u ('%s'); " EXPECTED_COLUMNS, tok->len,
                                      TOK(tok, tok->len - 1));
            st = ROW_CUT;
        }
    }
    switch (st) {
    case ROW_ERR:
        return FALSE;
    case ROW_CUT:
        if (p->cur == NULL && !p->layout.known) {
            /* no table yet to count it in: the row is the error */
            cs_set_error_at(err, p->name, p->line, "row has too few columns; " EXPECTED_COLUMNS);
            return FALSE;
        }
        /* fall through */
    case ROW_NOT: {
        g_autofree char *why = (p->cur == NULL && !p->layout.known) ? NULL
            : partial != NULL ? g_steal_pointer(&partial)
            : st == ROW_CUT ? g_strdup_printf("cut off after %u columns; " EXPECTED_COLUMNS, tok->len)
            : unread_row_why(tok);
        if (why == NULL)
            return prose_line(p, s, err);
        /* a row all the same: counted, and the table goes on */
        if (p->cur == NULL)
            open_table(p, p->line);
        g_ptr_array_add(p->unread, g_strdup_printf("%s:%d: row not read: %s", p->name, p->line, why));
        return TRUE;
    }
    case ROW_OK:
        break;
    }
    /* a sweep starts again: a new table (nccl-tests -d all / -o all, or
     * tables pasted one after the other) */
    if (p->cur != NULL && row.r.size < p->last_size && !close_table(p, err))
        return FALSE;
    if (p->cur == NULL)
        open_table(p, p->line);
    if (row.r.time_us[CS_INP] == -2) {
        row.r.time_us[CS_INP] = -1;
        row_note(p->cur, "line %d: in-place columns cut short; ignored", p->line);
    }
    if (row.redop_missing && p->cur->rows->len > 0) {
        const cs_nt_row_t *first = &g_array_index(p->cur->rows, cs_nt_row_t, 0);
        row.r.redop = first->r.redop;
        row.redop_none = first->redop_none;
        row.redop_missing = first->redop_missing;
        row_note(p->cur, "line %d: redop column missing; taken from the first row", p->line);
    }
    if (row.r.wrong[CS_OOP] > 0 || row.r.wrong[CS_INP] > 0)
        row_note(p->cur, "line %d: nccl-tests reports wrong results (%ld out-of-place, %ld in-place)",
                   p->line, row.r.wrong[CS_OOP], row.r.wrong[CS_INP]);
    g_array_append_val(p->cur->rows, row);
    p->last_size = row.r.size;
    return TRUE;
}

static gboolean parse_text(cs_nccltests_log_t *log, const char *buf, size_t len, const char *name,
                           const cs_nccltests_hint_t *hint, GError **err)
{
    parser_t p = { .name = name, .hint = hint, .log = log, .kind = CS_NT_UNKNOWN, .max_rank = -1 };
    p.hosts = g_ptr_array_new_with_free_func(g_free);
    p.unread = g_ptr_array_new_with_free_func(g_free);
    p.info = cs_nccl_info_new();
    gboolean ok = TRUE;
    size_t pos = 0;
    int next_line = 0;
    g_autoptr(GString) joined = g_string_new(NULL);
    while (ok && pos < len) {
        const char *b = buf + pos;
        const char *e = memchr(b, '\n', len - pos);
        size_t n = e ? (size_t)(e - b) : len - pos;
        pos += n + (e ? 1 : 0);
        if (joined->len == 0)
            p.line = next_line + 1;
        next_line++;
        if (n > 0 && b[n - 1] == '\r')
            n--;
        g_autofree char *line = g_strndup(b, n); /* stops at a NUL byte */
        /* shell continuation: "mpirun -np 128 ... \" + "  all_reduce_perf -g 1" */
        size_t l = strlen(line);
        if (l > 0 && line[l - 1] == '\\' && pos < len && line[0] != '#') {
            line[l - 1] = ' ';
            g_string_append(joined, line);
            continue;
        }
        if (joined->len > 0) {
            g_string_append(joined, line);
            g_free(line);
            line = g_string_free(g_steal_pointer(&joined), FALSE);
            joined = g_string_new(NULL);
        }
        ok = text_line(&p, line, err);
    }
    if (ok)
        ok = close_table(&p, err);
    cs_nt_table_free(p.cur);
    cs_nccl_info_free(p.info);
    cs_nccl_info_free(p.run_info);
    g_free(p.cmd_text);
    g_ptr_array_unref(p.hosts);
    g_ptr_array_unref(p.unread);
    g_free(p.kind_from);
    g_free(p.title);
    g_free(p.producer);
    return ok;
}

/* ------------------------------------------------------------------ */
/* Entry points                                                         */

cs_nccltests_log_t *cs_nccltests_log_parse_hint(const char *buf, size_t len, const char *name,
                                                const cs_nccltests_hint_t *hint, GError **err)
{
    g_return_val_if_fail(buf != NULL || len == 0, NULL);
    if (name == NULL)
        name = "<log>";
    g_autoptr(cs_nccltests_log_t) log = cs_nt_log_new();
    size_t i = 0;
    while (i < len && g_ascii_isspace(buf[i]))
        i++;
    gboolean ok = (i < len && buf[i] == '{') ? cs_nt_parse_json(log, buf, len, name, hint, err)
                                             : parse_text(log, buf, len, name, hint, err);
    if (!ok)
        return NULL;
    if (log->ntables == 0) {
        cs_set_error_at(err, name, 0, "no nccl-tests table found; " EXPECTED_ROW);
        return NULL;
    }
    return g_steal_pointer(&log);
}

cs_nccltests_log_t *cs_nccltests_log_parse(const char *buf, size_t len, const char *name, GError **err)
{
    return cs_nccltests_log_parse_hint(buf, len, name, NULL, err);
}

cs_nccltests_log_t *cs_nccltests_log_load_hint(const char *path, const cs_nccltests_hint_t *hint,
                                               GError **err)
{
    g_autofree char *buf = NULL;
    gsize len = 0;
    if (!cs_read_file(path, "file", "nccl-tests log", CS_READ_LIMIT_LOG, &buf, &len, err))
        return NULL;
    return cs_nccltests_log_parse_hint(buf, len, path, hint, err);
}

cs_nccltests_log_t *cs_nccltests_log_load(const char *path, GError **err)
{
    return cs_nccltests_log_load_hint(path, NULL, err);
}
