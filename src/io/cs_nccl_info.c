/* Reading what NCCL's INFO lines say it did (cs_nccl_info.h). */
#include "config.h"
#include "io/cs_nccl_info.h"

#include <stdlib.h>
#include <string.h>

#define TEXT_MAX 120       /* a fact's text is kept up to about this many bytes */

static void ring_free(gpointer p)
{
    cs_seen_ring_t *r = p;
    g_array_unref(r->order);
    g_free(r);
}

#define CPUS_MAX 4096         /* CPU numbers kept (cpu_set_t holds 1024) */
#define DEVS_MAX 1024         /* GPU numbers kept */

/* One process's affinity lines (cs_nccl_info_t.cpu_procs) */
typedef struct {
    guint64 cpus[CPUS_MAX / 64];   /* the process's set, or the union of the sets NCCL kept (up to 2.27) */
    guint64 devs[DEVS_MAX / 64];   /* the GPUs that printed a line */
    int gpus;              /* how many did */
    int outside;           /* of them, "empty, ignoring" */
    int line;              /* the first line */
    char *set;             /* the first line's set as printed */
    gboolean kept;         /* the sets are NCCL's kept ones (up to 2.27), not the process's */
} cpu_proc_t;

static void cpu_proc_free(gpointer p)
{
    cpu_proc_t *c = p;
    g_free(c->set);
    g_free(c);
}

static void reason_clear(gpointer p)
{
    cs_seen_reason_t *r = p;
    g_free(r->gpu);
    g_free(r->text);
}

cs_nccl_info_t *cs_nccl_info_new(void)
{
    cs_nccl_info_t *s = g_rc_box_new0(cs_nccl_info_t);
    s->conns = g_array_new(FALSE, TRUE, sizeof(cs_seen_conn_t));
    s->texts = g_ptr_array_new_with_free_func(g_free);
    s->text_ids = g_hash_table_new(g_str_hash, g_str_equal);   /* keys are texts' own strings */
    s->rings = g_ptr_array_new_with_free_func(ring_free);
    s->gdr_reasons = g_array_new(FALSE, TRUE, sizeof(cs_seen_reason_t));
    g_array_set_clear_func(s->gdr_reasons, reason_clear);
    s->rank_host = g_array_new(FALSE, FALSE, sizeof(int));
    s->cpu_procs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, cpu_proc_free);
    s->rank_procs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    return s;
}

cs_nccl_info_t *cs_nccl_info_ref(cs_nccl_info_t *s)
{
    return s != NULL ? g_rc_box_acquire(s) : NULL;
}

static void fact_clear(cs_seen_fact_t *f)
{
    g_clear_pointer(&f->text, g_free);
}

static void info_clear(gpointer p)
{
    cs_nccl_info_t *s = p;
    for (int k = 0; k < CS_SEEN_XPORT_COUNT; k++)
        fact_clear(&s->xport[k]);
    fact_clear(&s->network);
    fact_clear(&s->net_devices);
    g_free(s->net_devices_names);
    fact_clear(&s->no_ib_device);
    fact_clear(&s->no_gdr);
    fact_clear(&s->coll_channels);
    fact_clear(&s->comm_nranks);
    g_hash_table_unref(s->cpu_procs);
    g_hash_table_unref(s->rank_procs);
    fact_clear(&s->rank_gpu);
    g_array_unref(s->conns);
    g_hash_table_unref(s->text_ids);
    g_ptr_array_unref(s->texts);
    g_ptr_array_unref(s->rings);
    g_array_unref(s->gdr_reasons);
    g_array_unref(s->rank_host);
}

void cs_nccl_info_free(cs_nccl_info_t *s)
{
    if (s != NULL)
        g_rc_box_release_full(s, info_clear);
}

/* n bytes of a log line as the report may quote them: trailing space off,
 * every byte outside printable ASCII a '?' (the JSON stays valid, no UTF-8
 * sequence is cut), cut at a word after about TEXT_MAX bytes with " ...". */
static char *quote_text(const char *text, size_t n)
{
    while (n > 0 && g_ascii_isspace(text[n - 1]))
        n--;
    gboolean cut = n > TEXT_MAX;
    if (cut) {
        size_t c = TEXT_MAX;
        while (c > TEXT_MAX / 2 && text[c] != ' ')
            c--;
        n = c > TEXT_MAX / 2 ? c : TEXT_MAX;
    }
    char *q = g_strndup(text, n);
    for (char *c = q; *c; c++)
        if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e)
            *c = '?';
    if (!cut)
        return q;
    char *r = g_strconcat(q, " ...", NULL);
    g_free(q);
    return r;
}

/* Counts a line saying 'text' (n bytes of it); the first one is kept. */
static void fact_add(cs_seen_fact_t *f, const char *text, size_t n, int lineno)
{
    if (f->count++ == 0) {
        f->line = lineno;
        f->text = quote_text(text, n);
    }
}

cs_seen_xport_t cs_nccl_info_net_kind(const char *name)
{
    if (g_ascii_strncasecmp(name, "IB", 2) == 0 || g_ascii_strncasecmp(name, "gIB", 3) == 0)
        return CS_SEEN_NET_GDR;
    if (g_ascii_strncasecmp(name, "Socket", 6) == 0)
        return CS_SEEN_NET_SOCKET;
    return CS_SEEN_NET_OTHER;
}

/* "Channel 00/0 : 0[0] -> 1[1] ... via X" or "Ring 00 : 0 -> 1 via X": X,
 * else NULL. */
static const char *connection_via(const char *body)
{
    if (!g_str_has_prefix(body, "Channel ") && !g_str_has_prefix(body, "Ring "))
        return NULL;
    const char *arrow = strstr(body, " -> ");
    const char *via = strstr(body, " via ");
    if (arrow == NULL || via == NULL || via < arrow)
        return NULL;
    via += strlen(" via ");
    return *via != '\0' ? via : NULL;
}

/* The ranks of "Channel 00/0 : 3[3] -> 4[4] ..." or "Ring 00 : 3 -> 4":
 * the first number after " : " and the one after "->"; -1 each if not. */
static void connection_ranks(const char *body, int *from_p, int *to_p)
{
    *from_p = *to_p = -1;
    const char *c = strstr(body, " : ");
    const char *arrow = c != NULL ? strstr(c, "->") : NULL;
    if (c == NULL || arrow == NULL)
        return;
    char *end = NULL;
    long a = strtol(c + 3, &end, 10);
    if (end == c + 3 || a < 0 || a > G_MAXINT)
        return;
    long b = strtol(arrow + 2, &end, 10);
    if (end == arrow + 2 || b < 0 || b > G_MAXINT)
        return;
    *from_p = (int)a;
    *to_p = (int)b;
}

static void connection(cs_nccl_info_t *s, const char *body, const char *via, int lineno)
{
    size_t n = strcspn(via, "\r\n");
    cs_seen_xport_t k;
    if (g_str_has_prefix(via, "P2P/")) {
        k = CS_SEEN_P2P;
    } else if (g_str_has_prefix(via, "SHM/") || g_str_has_prefix(via, "direct shared memory")) {
        k = CS_SEEN_SHM;
    } else if (g_str_has_prefix(via, "NET/")) {
        /* NET/<name>/<device>...: the name may hold spaces (AWS Libfabric) */
        const char *name = via + strlen("NET/");
        size_t len = strcspn(name, "/\r\n");
        g_autofree char *nm = g_strndup(name, len);
        k = cs_nccl_info_net_kind(nm);
        if (k == CS_SEEN_NET_GDR && g_strstr_len(via, (gssize)n, "/GDRDMA") == NULL)
            k = CS_SEEN_NET_HOST;
    } else {
        return;   /* a transport this reader does not know: not counted */
    }
    fact_add(&s->xport[k], via, n, lineno);
    if (s->conns->len >= CS_SEEN_CONNS_MAX) {
        s->conns_dropped++;   /* counted above, not kept one by one */
        return;
    }
    /* a text once for all the lines that print it ("NET/IB/0/GDRDMA") */
    g_autofree char *text = quote_text(via, n);
    gpointer id = g_hash_table_lookup(s->text_ids, text);
    if (id == NULL) {
        char *kept = g_steal_pointer(&text);
        g_ptr_array_add(s->texts, kept);
        id = GINT_TO_POINTER((int)s->texts->len);
        g_hash_table_insert(s->text_ids, kept, id);
    }
    cs_seen_conn_t c = { .kind = k, .line = lineno, .text = GPOINTER_TO_INT(id) - 1 };
    connection_ranks(body, &c.from, &c.to);
    /* "... [receive] via NET/...": the receiving rank's own setup */
    const char *rcv = strstr(body, " [receive] ");
    c.receive = rcv != NULL && rcv < via;
    g_array_append_val(s->conns, c);
}

/* "Channel 00/24 :    0   1   2" or "Ring 00 :  0 1 2": a ring's ranks,
 * kept for the first line of each channel. Anything but whole numbers
 * after the colon ("Ring 00 : 5 -> 6 -> 7", a connection) is not one. */
static gboolean ring_line(cs_nccl_info_t *s, const char *body, int lineno)
{
    const char *p = g_str_has_prefix(body, "Channel ") ? body + strlen("Channel ")
                  : g_str_has_prefix(body, "Ring ") ? body + strlen("Ring ") : NULL;
    if (p == NULL)
        return FALSE;
    char *end = NULL;
    long ch = strtol(p, &end, 10);
    if (end == p || ch < 0 || ch >= 1024)
        return FALSE;
    p = end;
    if (*p == '/') {
        strtol(p + 1, &end, 10);
        if (end == p + 1)
            return FALSE;
        p = end;
    }
    while (*p == ' ')
        p++;
    if (*p != ':')
        return FALSE;
    p++;
    g_autoptr(GArray) order = g_array_new(FALSE, FALSE, sizeof(int));
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\0' || *p == '\r' || *p == '\n')
            break;
        long r = strtol(p, &end, 10);
        if (end == p || r < 0 || r > G_MAXINT || (*end != '\0' && !g_ascii_isspace(*end)) ||
            order->len >= (1u << 20))
            return FALSE;
        int v = (int)r;
        g_array_append_val(order, v);
        p = end;
    }
    if (order->len < 2)
        return FALSE;
    for (guint i = 0; i < s->rings->len; i++)
        if (((const cs_seen_ring_t *)g_ptr_array_index(s->rings, i))->channel == (int)ch)
            return TRUE;
    cs_seen_ring_t *r = g_new0(cs_seen_ring_t, 1);
    r->channel = (int)ch;
    r->line = lineno;
    r->order = g_steal_pointer(&order);
    g_ptr_array_add(s->rings, r);
    return TRUE;
}

/* Adds CPU c to 'set': 1 where it was not in it (CPUs beyond CPUS_MAX are
 * counted, not kept). */
static int set_add(guint64 *set, long c)
{
    if (c >= CPUS_MAX)
        return 1;
    int was = (int)((set[c / 64] >> (c % 64)) & 1);
    set[c / 64] |= G_GUINT64_CONSTANT(1) << (c % 64);
    return !was;
}

/* A cpulist ("0-55,112-167", "0,112") into 'set';
 * its CPUs counted once each; -1 if it is not one. Numbers start with a
 * digit (no sign, no space), ranges ascend, and stay below 2^20. */
static gint64 cpu_list_read(const char *p, const char **end_p, guint64 *set)
{
    gint64 n = 0;
    for (;;) {
        if (!g_ascii_isdigit(*p))
            return -1;
        char *e = NULL;
        long a = strtol(p, &e, 10);
        if (a < 0 || a >= (1 << 20))
            return -1;
        long b = a;
        if (*e == '-') {
            const char *q = e + 1;
            if (!g_ascii_isdigit(*q))
                return -1;
            b = strtol(q, &e, 10);
            if (b < a || b >= (1 << 20))
                return -1;
        }
        /* kept up to CPUS_MAX, the rest of a range counted at once */
        for (long c = a; c <= MIN(b, (long)CPUS_MAX - 1); c++)
            n += set_add(set, c);
        if (b >= CPUS_MAX)
            n += b - MAX(a, (long)CPUS_MAX) + 1;
        p = e;
        if (*p != ',' || !g_ascii_isdigit(p[1]))
            break;
        p++;
    }
    if (end_p != NULL)
        *end_p = p;
    return n;
}

int cs_cpu_list_count(const char *p, const char **end_p)
{
    g_autofree guint64 *set = g_new0(guint64, CPUS_MAX / 64);
    gint64 n = cpu_list_read(p, end_p, set);
    return n > G_MAXINT ? G_MAXINT : (int)n;
}

/* Whether a set is NCCL's hex mask (ncclCpusetToStr, up to 2.26: bytes as
 * two hex digits, high first, a comma each 4 bytes, "ff,ffffffff") and not
 * a cpulist (ncclCpusetToRangeStr, 2.27's "Setting affinity" line too):
 * hex letters, or the groups' shape (the first an even 2-8 digits, the
 * others 8). A lone group of 2-8 decimal digits reads either way; such a
 * mask ("11") is taken as one, as up to 2.26 prints. */
static gboolean cpu_set_is_mask(const char *p, size_t n)
{
    if (memchr(p, '-', n) != NULL)
        return FALSE;
    size_t i = 0, group = 0;
    for (int g = 0; i <= n; g++) {
        size_t len = 0;
        while (i + len < n && g_ascii_isxdigit(p[i + len]))
            len++;
        if (i + len < n && p[i + len] != ',')
            return FALSE;
        if (g == 0 ? (len == 0 || len > 8 || len % 2 != 0) : len != 8)
            return FALSE;
        group++;
        i += len + 1;
    }
    return group > 0;
}

/* A hex mask into 'set': its CPUs, counted once each; -1 if none. */
static gint64 cpu_mask_read(const char *p, size_t n, guint64 *set)
{
    gint64 bits = 0;
    long cpu = 0;
    for (size_t i = n; i-- > 0;) {   /* the lowest CPUs are the last digits */
        if (p[i] == ',')
            continue;
        int v = g_ascii_xdigit_value(p[i]);
        for (int b = 0; b < 4; b++, cpu++)
            if ((v >> b) & 1)
                bits += set_add(set, cpu);
    }
    return bits > 0 ? bits : -1;
}

static int set_count(const guint64 *set)
{
    int n = 0;
    for (int i = 0; i < CPUS_MAX / 64; i++)
        n += __builtin_popcountll(set[i]);
    return n;
}

/* An affinity line of process 'proc' for GPU 'dev': the set printed
 * (n bytes at 'set'), read as 'mask' or a cpulist, the process's own or
 * the one NCCL kept ('kept'), or none in common ('outside'). */
static void cpu_affinity(cs_nccl_info_t *s, const char *proc, long dev, const char *set, size_t n, gboolean mask,
                         gboolean outside, gboolean kept, int lineno)
{
    guint64 cpus[CPUS_MAX / 64] = { 0 };
    gint64 count;
    if (mask) {
        count = cpu_mask_read(set, n, cpus);
    } else {
        const char *end = NULL;
        count = cpu_list_read(set, &end, cpus);
        if (count > 0 && (size_t)(end - set) != n)
            count = -1;
    }
    if (count <= 0 || dev < 0 || dev >= DEVS_MAX)
        return;
    cpu_proc_t *c = g_hash_table_lookup(s->cpu_procs, proc);
    if (c == NULL) {
        if (g_hash_table_size(s->cpu_procs) >= (1u << 16))
            return;   /* a log of more processes than that: the first ones tell */
        c = g_new0(cpu_proc_t, 1);
        c->line = lineno;
        c->set = quote_text(set, n);
        c->kept = kept;
        g_hash_table_insert(s->cpu_procs, g_strdup(proc), c);
    } else if (!kept && c->kept) {
        /* the process's own set, where earlier lines gave kept ones */
        memset(c->cpus, 0, sizeof c->cpus);
        g_free(c->set);
        c->set = quote_text(set, n);
        c->kept = FALSE;
    }
    if (c->kept == kept)
        for (int i = 0; i < CPUS_MAX / 64; i++)
            c->cpus[i] |= cpus[i];
    if ((c->devs[dev / 64] >> (dev % 64)) & 1)
        return;   /* the same GPU again (another communicator of it) */
    c->devs[dev / 64] |= G_GUINT64_CONSTANT(1) << (dev % 64);
    c->gpus++;
    c->outside += outside;
}

void cs_nccl_info_rank_gpu(cs_nccl_info_t *s, const char *name, size_t n, int lineno)
{
    if (n > 0)
        fact_add(&s->rank_gpu, name, n, lineno);
}

void cs_nccl_info_rank_proc(cs_nccl_info_t *s, const char *name, long pid)
{
    if (g_hash_table_size(s->rank_procs) >= (1u << 16))
        return;
    char *key = g_strdup_printf("%s:%ld", name, pid);
    gpointer n = g_hash_table_lookup(s->rank_procs, key);
    g_hash_table_replace(s->rank_procs, key, GINT_TO_POINTER(GPOINTER_TO_INT(n) + 1));
}

gboolean cs_nccl_info_cpu_bind(const cs_nccl_info_t *s, cs_seen_cpu_bind_t *out)
{
    GHashTableIter it;
    gpointer k, v;
    const cpu_proc_t *best = NULL;
    int best_gpus = 0, best_cpus = 0;
    g_hash_table_iter_init(&it, s->cpu_procs);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        const cpu_proc_t *c = v;
        int gpus = MAX(c->gpus, GPOINTER_TO_INT(g_hash_table_lookup(s->rank_procs, k)));
        int cpus = set_count(c->cpus);
        /* the most GPUs a CPU (a/c > b/d: a d > b c), then the first line */
        gint64 lhs = (gint64)gpus * (best != NULL ? best_cpus : 1);
        gint64 rhs = (gint64)best_gpus * cpus;
        if (best == NULL || lhs > rhs || (lhs == rhs && c->line < best->line)) {
            best = c;
            best_gpus = gpus;
            best_cpus = cpus;
        }
    }
    if (best == NULL)
        return FALSE;
    *out = (cs_seen_cpu_bind_t){ .line = best->line, .set = best->set, .cpus = best_cpus, .gpus = best_gpus,
                                 .outside = best->outside, .kept = best->kept };
    return TRUE;
}

/* topo.cc's affinity lines (cs_nccl_info.h); TRUE if 'body' is one.
 * 'proc' is "host:pid", or "" where the line does not say (not kept). */
static gboolean affinity_line(cs_nccl_info_t *s, const char *proc, const char *body, int lineno)
{
    static const char now[] = "ncclTopoGetCpuAffinity: Affinity for GPU ";
    static const char old[] = "Setting affinity for GPU ";
    gboolean is_now = g_str_has_prefix(body, now);
    if (!is_now && !g_str_has_prefix(body, old))
        return FALSE;
    s->cpu_lines++;
    const char *p = body + (is_now ? strlen(now) : strlen(old));
    if (!g_ascii_isdigit(*p) || proc[0] == '\0')
        return TRUE;
    char *e = NULL;
    long dev = strtol(p, &e, 10);
    if (!is_now) {
        /* up to 2.27: the set NCCL kept for the GPU, printed only when not
         * empty: a hex mask up to 2.26, a cpulist in 2.27 */
        if (!g_str_has_prefix(e, " to "))
            return TRUE;
        const char *set = e + strlen(" to ");
        size_t n = strcspn(set, " \r\n");
        cpu_affinity(s, proc, dev, set, n, cpu_set_is_mask(set, n), FALSE, TRUE, lineno);
        return TRUE;
    }
    if (!g_str_has_prefix(e, " is "))
        return TRUE;
    gboolean outside = g_str_has_prefix(e + strlen(" is "), "empty");
    /* the process's own set; absent under NCCL_IGNORE_CPU_AFFINITY=1,
     * where NCCL binds each GPU's threads to its near CPUs whatever it is */
    const char *set = strstr(e, " ; CPU affinity = ");
    if (set == NULL)
        return TRUE;
    set += strlen(" ; CPU affinity = ");
    size_t n = strcspn(set, ")");
    cpu_affinity(s, proc, dev, set, n, FALSE, outside, FALSE, lineno);
    return TRUE;
}

void cs_nccl_info_line(cs_nccl_info_t *s, const char *line, int lineno)
{
    /* NCCL's own line: "host:pid:tid [dev] NCCL INFO ..." (debug.cc), or
     * the words alone at the start; not a quotation of them in prose
     * ("the log says (\"NCCL INFO Using network Socket\")") */
    const char *m = strstr(line, "NCCL INFO ");
    const char *start = line;
    while (*start == ' ' || *start == '\t')
        start++;
    if (m == NULL || (m != start && (m - line < 2 || m[-1] != ' ' || m[-2] != ']')))
        return;
    const char *body = m + strlen("NCCL INFO ");
    while (*body == ' ')
        body++;
    const char *via = connection_via(body);
    if (via != NULL) {
        connection(s, body, via, lineno);
        return;
    }
    if (ring_line(s, body, lineno))
        return;
    /* the process: "host:pid" of debug.cc's "host:pid:tid [dev] NCCL INFO",
     * the word before the "[dev]" (a timestamp may come first) */
    char proc[128] = "";
    if (m != start) {
        const char *br = m - 2;   /* the ']' */
        while (br > start && *br != '[')
            br--;
        const char *w1 = br;
        while (w1 > start && w1[-1] == ' ')
            w1--;
        const char *w0 = w1;
        while (w0 > start && w0[-1] != ' ')
            w0--;
        const char *tid = w1 > w0 ? g_strrstr_len(w0, w1 - w0, ":") : NULL;
        const char *pid = tid != NULL && tid > w0 ? g_strrstr_len(w0, tid - w0, ":") : NULL;
        if (pid != NULL && pid > w0 && (size_t)(tid - w0) < sizeof proc)
            memcpy(proc, w0, (size_t)(tid - w0));
    }
    if (affinity_line(s, proc, body, lineno))
        return;
    if (g_str_has_prefix(body, "Using network ")) {
        const char *name = body + strlen("Using network ");
        size_t n = strcspn(name, "\r\n");
        if (n > 0)
            fact_add(&s->network, name, n, lineno);
        return;
    }
    if ((g_str_has_prefix(body, "NET/IB : Using") || g_str_has_prefix(body, "NET/Socket : Using")) &&
        s->net_devices.count == 0) {
        size_t n = strcspn(body, ";\r\n");
        fact_add(&s->net_devices, body, n, lineno);
        /* every "[N]name" up to the OOB part, whatever the quoted text keeps */
        g_autoptr(GString) names = g_string_new(NULL);
        for (const char *q = memchr(body, '[', n); q != NULL && q < body + n;
             q = memchr(q + 1, '[', (size_t)(body + n - q - 1))) {
            const char *name = memchr(q, ']', (size_t)(body + n - q));
            if (name == NULL || !g_ascii_isdigit(q[1]))
                continue;
            name++;
            size_t len = strcspn(name, ":/ ;\r\n");
            if (len == 0 || name + len > body + n)
                continue;
            if (s->net_devices_n < 1024) {
                g_autofree char *nm = quote_text(name, MIN(len, (size_t)64));
                g_string_append_printf(names, "%s%s", s->net_devices_n > 0 ? "," : "", nm);
                s->net_devices_n++;
            }
        }
        g_free(s->net_devices_names);
        s->net_devices_names = s->net_devices_n > 0 ? g_string_free(g_steal_pointer(&names), FALSE) : NULL;
        return;
    }
    if (g_str_has_prefix(body, "NET/IB : No device found")) {
        fact_add(&s->no_ib_device, body, strcspn(body, "\r\n"), lineno);
        return;
    }
    if (strstr(body, "GPU Direct RDMA Disabled for ") != NULL) {
        /* paths.cc names the rank ("for GPU 3 / HCA ..."); 2.4's net.cc and
         * net_ib.cc a local device or none */
        cs_seen_reason_t r = { .line = lineno, .text = quote_text(body, strcspn(body, "\r\n")) };
        if (g_str_has_prefix(body, "GPU Direct RDMA Disabled for GPU ")) {
            const char *d = body + strlen("GPU Direct RDMA Disabled for GPU ");
            size_t len = strspn(d, "0123456789abcdefABCDEF");
            if (len > 0 && len < 20 && d[len] == ' ')
                r.gpu = g_strndup(d, len);
        }
        if (s->gdr_reasons->len < CS_SEEN_CONNS_MAX)
            g_array_append_val(s->gdr_reasons, r);
        else
            g_free(r.text);
        return;
    }
    if (g_str_has_prefix(body, "comm ") && strstr(body, " nRanks ") != NULL && strstr(body, " rank ") != NULL) {
        /* init.cc: "comm 0x55f0 rank 0 nRanks 16 nNodes 2 localRanks 8 ..." */
        const char *q = strstr(body, " nRanks ") + strlen(" nRanks ");
        char *e = NULL;
        long v = strtol(q, &e, 10);
        if (e != q && v > 0 && v <= G_MAXINT) {
            if (s->comm_nranks.count == 0 || v < s->comm_nranks_min)
                s->comm_nranks_min = (int)v;
            if (s->comm_nranks.count == 0 || v > s->comm_nranks_max)
                s->comm_nranks_max = (int)v;
            fact_add(&s->comm_nranks, q, (size_t)(e - q), lineno);
        }
        return;
    }
    if (g_str_has_prefix(body, "Connected all rings")) {
        const char *g = strstr(body, " GDR ");
        if (g != NULL && g[strlen(" GDR ")] == '0' && !g_ascii_isdigit(g[strlen(" GDR ") + 1]))
            fact_add(&s->no_gdr, g + 1, strlen("GDR 0"), lineno);
        return;
    }
    /* "24 coll channels, 24 collnet channels, ..." (init.cc) */
    char *end = NULL;
    long v = strtol(body, &end, 10);
    if (end != body && v > 0 && v <= 1024 && g_str_has_prefix(end, " coll channels")) {
        if (s->coll_channels.count == 0)
            s->coll_channels_value = (int)v;
        fact_add(&s->coll_channels, body, (size_t)(end - body), lineno);
    }
}

gboolean cs_nccl_info_any(const cs_nccl_info_t *s)
{
    for (int k = 0; k < CS_SEEN_XPORT_COUNT; k++)
        if (s->xport[k].count > 0)
            return TRUE;
    return s->network.count > 0 || s->net_devices.count > 0 || s->no_ib_device.count > 0 || s->no_gdr.count > 0 ||
           s->gdr_reasons->len > 0 || s->coll_channels.count > 0 || s->rings->len > 0 ||
           s->cpu_lines > 0;
}

void cs_nccl_info_rank_host(cs_nccl_info_t *s, int rank, int host, int group)
{
    if (rank < 0 || rank >= (1 << 24))
        return;
    s->max_group = MAX(s->max_group, group);
    int unknown = -1;
    while ((int)s->rank_host->len <= rank)
        g_array_append_val(s->rank_host, unknown);
    g_array_index(s->rank_host, int, rank) = host;
}

char *cs_nccl_info_summary(const cs_nccl_info_t *s)
{
    if (!cs_nccl_info_any(s))
        return NULL;
    GString *g = g_string_new(NULL);
    const char *sep = "connections ";
    for (int k = 0; k < CS_SEEN_XPORT_COUNT; k++) {
        const cs_seen_fact_t *f = &s->xport[k];
        if (f->count == 0)
            continue;
        g_string_append_printf(g, "%svia %s (%d line%s, the first at line %d)", sep, f->text, f->count,
                               f->count == 1 ? "" : "s", f->line);
        sep = ", ";
    }
    if (s->conns_dropped > 0)
        g_string_append_printf(g, " (the %d lines after the first %d not compared)", s->conns_dropped,
                               CS_SEEN_CONNS_MAX);
    sep = g->len > 0 ? "; " : "";
    if (s->network.count > 0) {
        g_string_append_printf(g, "%snetwork %s (line %d)", sep, s->network.text, s->network.line);
        sep = "; ";
    }
    if (s->net_devices.count > 0) {
        g_string_append_printf(g, "%s%s (line %d)", sep, s->net_devices.text, s->net_devices.line);
        sep = "; ";
    }
    if (s->no_ib_device.count > 0) {
        g_string_append_printf(g, "%s%s (line %d)", sep, s->no_ib_device.text, s->no_ib_device.line);
        sep = "; ";
    }
    if (s->no_gdr.count > 0) {
        g_string_append_printf(g, "%sa ring connection without GPUDirect RDMA (line %d: %s)", sep, s->no_gdr.line,
                               s->no_gdr.text);
        sep = "; ";
    }
    if (s->gdr_reasons->len > 0) {
        const cs_seen_reason_t *r = &g_array_index(s->gdr_reasons, cs_seen_reason_t, 0);
        g_string_append_printf(g, "%sGPU Direct RDMA disabled (%u line%s, the first at line %d)", sep,
                               s->gdr_reasons->len, s->gdr_reasons->len == 1 ? "" : "s", r->line);
        sep = "; ";
    }
    if (s->coll_channels.count > 0) {
        g_string_append_printf(g, "%s%d coll channels (line %d)", sep, s->coll_channels_value,
                               s->coll_channels.line);
        sep = "; ";
    }
    if (s->rings->len > 0) {
        const cs_seen_ring_t *r = g_ptr_array_index(s->rings, 0);
        g_string_append_printf(g, "%sthe rings of %u channel%s (from line %d)", sep, s->rings->len,
                               s->rings->len == 1 ? "" : "s", r->line);
        sep = "; ";
    }
    cs_seen_cpu_bind_t cb;
    if (cs_nccl_info_cpu_bind(s, &cb))
        g_string_append_printf(g, "%s%d GPU%s of a process on %d CPU%s (line %d: %s)", sep, cb.gpus,
                               cb.gpus == 1 ? "" : "s", cb.cpus, cb.cpus == 1 ? "" : "s", cb.line, cb.set);
    return g_string_free(g, FALSE);
}
