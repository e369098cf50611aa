/* collsim sweep: a grid over scenario keys, every point priced by its model,
 * into one CSV or JSON with a column per key.
 *
 * The base scenario is built as collsim run builds it (file < flags <
 * environment < --env); each point then sets its grid values on top
 * through the scenario parser (cs_predict_set), so every key works and a
 * bad value gets the parser's message. Points are numbered in grid order
 * (the last --grid varies fastest) and spread over the ranks of mpirun
 * when started under it (built with MPI), over local processes otherwise:
 * each point's outcome is serialized exactly (%.17g) by whoever priced it
 * and formatted by one process, so the files are byte-identical whichever
 * way and however many workers ran them. Processes, not threads: the
 * SimGrid engine keeps one global simulation. */
#include "config.h"
#include "cli/cs_commands.h"
#include "cli/cs_predict.h"
#include "io/cs_run_args.h"
#include "io/cs_scenario-int.h"
#include "io/cs_svg.h"
#include "io/cs_writers.h"
#include "io/cs_output.h"
#include "io/cs_writers-int.h"
#include "sim/cs_engine.h"
#include "util/cs_error.h"
#include "util/cs_read_file.h"
#include "util/cs_units.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef HAVE_MPI
#include <mpi.h>
#endif

/* A typo such as 1-1000 written out would ask for a huge grid. */
#define MAX_POINTS 100000

typedef struct {
    char *column;                /* "topology.nodes" */
    char *group, *key;
    char **values;
    int n;
} axis_t;

typedef struct {
    GPtrArray *grid;             /* --grid as given */
    char *output, *format;
    int jobs;
    gboolean quiet;              /* an MPI rank other than 0: the root says it */
} sweep_opts_t;

typedef struct {
    guint64 size;                /* requested */
    guint64 printed, count;      /* nccl-tests's size and count columns */
    double time_us, algbw, busbw;
    int nchannels;
    char *algo, *proto, *transport;
} prow_t;

typedef struct {
    char *error;                 /* one line, or NULL */
    gboolean resource;           /* the error was a resource failure (exit 3), not bad input */
    char *producer, *topo;
    int coll, nranks, nnodes;
    GPtrArray *notes;
    GArray *rows;                /* prow_t */
    gboolean done;
} point_t;

typedef struct {
    cs_run_args_t *a;
    GArray *axes;                /* axis_t, --grid order */
    guint npoints;
} grid_t;

static void axis_clear(axis_t *x)
{
    g_free(x->column);
    g_free(x->group);
    g_free(x->key);
    g_strfreev(x->values);
}

static void prow_clear(prow_t *r)
{
    g_free(r->algo);
    g_free(r->proto);
    g_free(r->transport);
}

static void point_clear(point_t *p)
{
    g_free(p->error);
    g_free(p->producer);
    g_free(p->topo);
    if (p->notes != NULL)
        g_ptr_array_unref(p->notes);
    if (p->rows != NULL)
        g_array_unref(p->rows);
}

/* The value index of axis k at point i: the last axis varies fastest. */
static int value_at(const grid_t *g, guint i, guint k)
{
    guint stride = 1;
    for (guint j = g->axes->len; j-- > k + 1;)
        stride *= (guint)g_array_index(g->axes, axis_t, j).n;
    return (int)((i / stride) % (guint)g_array_index(g->axes, axis_t, k).n);
}

/* ---- the grid ----------------------------------------------------------------- */

static gboolean on_grid(const char *option_name, const char *value, gpointer data, GError **err)
{
    sweep_opts_t *o = data;
    g_ptr_array_add(o->grid, g_strdup(value));
    return TRUE;
}

static gboolean parse_axis(const char *arg, axis_t *x, GError **err)
{
    const char *eq = strchr(arg, '=');
    if (eq == NULL || eq == arg) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                    "collsim: --grid: '%s' is not a grid axis; expected KEY=VALUE[,VALUE...] (e.g. topology.nodes=1,2,4)",
                    arg);
        return FALSE;
    }
    g_autofree char *name = g_strndup(arg, eq - arg);
    g_autoptr(GError) e = NULL;
    if (!cs_predict_key_resolve(name, &x->group, &x->key, &e)) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: --grid %s: %s", name, e->message);
        return FALSE;
    }
    x->column = g_strdup_printf("%s.%s", x->group, x->key);
    x->values = cs_predict_split_list(eq + 1);
    x->n = (int)g_strv_length(x->values);
    /* each value must parse now, not at point 37 */
    for (int i = 0; i < x->n; i++) {
        g_strstrip(x->values[i]);
        for (int j = 0; j < i; j++)
            if (strcmp(x->values[i], x->values[j]) == 0) {
                g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: --grid %s: '%s' is listed twice; expected each value once",
                            x->column, x->values[i]);
                return FALSE;
            }
        cs_scenario_t t;
        cs_scenario_init(&t);
        gboolean ok = cs_predict_set(&t, x->group, x->key, x->values[i], NULL, &e);
        cs_scenario_clear(&t);
        if (!ok) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: --grid %s: %s", x->column, e->message);
            return FALSE;
        }
    }
    return TRUE;
}

/* topology.topo, .preset and .file all choose the machine: two of them
 * on the grid would have the last one win, whatever the first's column
 * says */
static gboolean machine_key(const char *column)
{
    return strcmp(column, "topology.topo") == 0 || strcmp(column, "topology.preset") == 0 ||
           strcmp(column, "topology.file") == 0;
}

static gboolean parse_grid(const sweep_opts_t *o, grid_t *g, GError **err)
{
    g->npoints = 1;
    for (guint i = 0; i < o->grid->len; i++) {
        axis_t x = { 0 };
        gboolean ok = parse_axis(g_ptr_array_index(o->grid, i), &x, err);
        g_array_append_val(g->axes, x);
        if (!ok)
            return FALSE;
        for (guint j = 0; j < i; j++) {
            const char *prev = g_array_index(g->axes, axis_t, j).column;
            if (strcmp(prev, x.column) == 0) {
                g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: --grid %s: the key is given twice; expected each key once",
                            x.column);
                return FALSE;
            }
            if (machine_key(prev) && machine_key(x.column)) {
                g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: --grid %s: %s chooses the machine too; expected "
                            "one of topo, preset and file on the grid", x.column, prev);
                return FALSE;
            }
        }
        if ((guint64)g->npoints * (guint64)x.n > MAX_POINTS) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: --grid: more than %d points; expected a smaller grid",
                        MAX_POINTS);
            return FALSE;
        }
        g->npoints *= (guint)x.n;
    }
    return TRUE;
}

/* ---- one point -------------------------------------------------------------- */

/* Tabs and newlines would break the record's fields. */
static void field(GString *g, const char *s)
{
    g_string_append_c(g, '\t');
    for (const char *p = s != NULL ? s : ""; *p; p++)
        g_string_append_c(g, *p == '\t' || *p == '\n' || *p == '\r' ? ' ' : *p);
}

static void number(GString *g, double v)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_string_append_c(g, '\t');
    g_string_append(g, g_ascii_formatd(buf, sizeof buf, "%.17g", v));
}

/* The scenario of point i: the base, then the point's grid values. */
static gboolean point_scenario(const grid_t *g, guint i, cs_scenario_t *s, GError **err)
{
    gboolean ok = cs_run_args_build(g->a, s, err);
    for (guint k = 0; ok && k < g->axes->len; k++) {
        const axis_t *x = &g_array_index(g->axes, axis_t, k);
        const char *v = x->values[value_at(g, i, k)];
        g_autofree char *origin = g_strdup_printf("collsim: --grid %s=%s", x->column, v);
        g_autoptr(GError) e = NULL;
        if (!cs_predict_set(s, x->group, x->key, v, origin, &e)) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: %s", origin, e->message);
            ok = FALSE;
        }
    }
    return ok;
}

/* Prices point i into its record:
 *   P <i>            then either
 *   E <I|R> <message> or (I: bad input, R: a resource failure, exit 3)
 *   M <coll> <nranks> <nnodes> <producer> <topology>
 *   N <note>         per note
 *   R <size> <printed> <count> <time_us> <algbw> <busbw> <nch> <algo> <proto> <transport>   per size
 *   .                                                                                          */
static void price_point(const grid_t *g, guint i, GString *out)
{
    g_string_append_printf(out, "P\t%u\n", i);
    cs_scenario_t s;
    cs_scenario_init(&s);
    g_autoptr(GError) err = NULL;
    g_autoptr(cs_prediction_t) p = NULL;
    if (point_scenario(g, i, &s, &err))
        p = cs_predict_scenario(&s, "sweep", FALSE, &err);
    cs_scenario_clear(&s);
    if (p == NULL) {
        /* E, the kind (I: bad input, R: a resource failure), the message */
        g_string_append(out, err != NULL && cs_error_exit_status(err) == CS_EXIT_RESOURCE ? "E\tR" : "E\tI");
        field(out, err != NULL ? err->message : "failed (no reason given)");
        g_string_append(out, "\n.\n");
        return;
    }
    const cs_result_t *r = p->result;
    g_string_append_printf(out, "M\t%d\t%d\t%d", (int)r->coll, r->nranks, r->nnodes);
    field(out, r->producer);
    field(out, p->topo_desc);
    g_string_append_c(out, '\n');
    for (guint k = 0; k < r->notes->len; k++) {
        g_string_append(out, "N");
        field(out, g_ptr_array_index(r->notes, k));
        g_string_append_c(out, '\n');
    }
    for (guint k = 0; k < r->rows->len; k++) {
        const cs_result_row_t *row = &g_array_index(r->rows, cs_result_row_t, k);
        gboolean ran = row->time_us[CS_OOP] > 0;
        g_string_append_printf(out, "R\t%" G_GUINT64_FORMAT "\t%" G_GUINT64_FORMAT "\t%" G_GUINT64_FORMAT,
                               p->sizes[k], row->size, row->count);
        number(out, ran ? row->time_us[CS_OOP] : -1);
        number(out, ran ? row->algbw[CS_OOP] : -1);
        number(out, ran ? row->busbw[CS_OOP] : -1);
        g_string_append_printf(out, "\t%d", row->nchannels);
        field(out, row->algo);
        field(out, ran ? row->proto : "");
        field(out, ran ? row->transport : "");
        g_string_append_c(out, '\n');
    }
    g_string_append(out, ".\n");
}

static gboolean parse_u64(const char *s, guint64 *v)
{
    char *end;
    errno = 0;
    *v = g_ascii_strtoull(s, &end, 10);
    return errno == 0 && end != s && *end == '\0';
}

/* Reads records back into points[]; FALSE on a malformed one (a worker
 * that died half-way). */
static gboolean parse_records(const char *buf, point_t *points, guint n)
{
    g_auto(GStrv) lines = g_strsplit(buf, "\n", -1);
    point_t *p = NULL;
    for (int l = 0; lines[l] != NULL; l++) {
        const char *line = lines[l];
        if (*line == '\0')
            continue;
        g_auto(GStrv) f = g_strsplit(line, "\t", -1);
        guint nf = g_strv_length(f);
        guint64 u;
        if (strcmp(f[0], "P") == 0 && nf == 2 && parse_u64(f[1], &u) && u < n && !points[u].done && p == NULL) {
            p = &points[u];
            p->notes = g_ptr_array_new_with_free_func(g_free);
            p->rows = g_array_new(FALSE, TRUE, sizeof(prow_t));
            g_array_set_clear_func(p->rows, (GDestroyNotify)prow_clear);
        } else if (p != NULL && strcmp(f[0], "E") == 0 && nf == 3 && (strcmp(f[1], "I") == 0 || strcmp(f[1], "R") == 0)) {
            p->resource = f[1][0] == 'R';
            p->error = g_strdup(f[2]);
        } else if (p != NULL && strcmp(f[0], "M") == 0 && nf == 6) {
            p->coll = atoi(f[1]);
            p->nranks = atoi(f[2]);
            p->nnodes = atoi(f[3]);
            p->producer = g_strdup(f[4]);
            p->topo = g_strdup(f[5]);
        } else if (p != NULL && strcmp(f[0], "N") == 0 && nf == 2) {
            g_ptr_array_add(p->notes, g_strdup(f[1]));
        } else if (p != NULL && strcmp(f[0], "R") == 0 && nf == 11) {
            prow_t r = { 0 };
            if (!parse_u64(f[1], &r.size) || !parse_u64(f[2], &r.printed) || !parse_u64(f[3], &r.count))
                return FALSE;
            r.time_us = g_ascii_strtod(f[4], NULL);
            r.algbw = g_ascii_strtod(f[5], NULL);
            r.busbw = g_ascii_strtod(f[6], NULL);
            r.nchannels = atoi(f[7]);
            r.algo = g_strdup(f[8]);
            r.proto = g_strdup(f[9]);
            r.transport = g_strdup(f[10]);
            g_array_append_val(p->rows, r);
        } else if (p != NULL && strcmp(f[0], ".") == 0 && nf == 1) {
            p->done = TRUE;
            p = NULL;
        } else {
            return FALSE;
        }
    }
    return p == NULL;
}

/* ---- spreading the points ------------------------------------------------------- */

static gboolean write_all(int fd, const char *buf, gsize len)
{
    while (len > 0) {
        ssize_t w = write(fd, buf, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return FALSE;
        buf += w;
        len -= (gsize)w;
    }
    return TRUE;
}

/* Worker w of k prices points w, w + k, ... */
static void price_share(const grid_t *g, guint w, guint k, GString *out)
{
    for (guint i = w; i < g->npoints; i += k)
        price_point(g, i, out);
}

/* k local processes, each writing its records to a pipe that the parent
 * drains as they come (a full pipe would stall a worker). */
static gboolean run_local(const grid_t *g, guint k, GString *all, GError **err)
{
    if (k <= 1) {
        price_share(g, 0, 1, all);
        return TRUE;
    }
    g_autofree int *fds = g_new(int, k);
    g_autofree pid_t *pids = g_new(pid_t, k);
    GString **bufs = g_new0(GString *, k);
    guint started = 0;
    gboolean ok = TRUE;
    fflush(NULL);   /* nothing buffered may be written twice */
    pid_t parent = getpid();
    for (; started < k; started++) {
        int pfd[2];
        if (pipe(pfd) != 0) {
            g_set_error(err, CS_ERROR, CS_ERROR_RESOURCE, "collsim: sweep: cannot create a pipe (%s)", g_strerror(errno));
            ok = FALSE;
            break;
        }
        pid_t pid = fork();
        if (pid < 0) {
            g_set_error(err, CS_ERROR, CS_ERROR_RESOURCE, "collsim: sweep: cannot start a worker (%s)", g_strerror(errno));
            close(pfd[0]);
            close(pfd[1]);
            ok = FALSE;
            break;
        }
        if (pid == 0) {
            /* a worker dies with its parent, whatever kills the parent */
            if (!cs_engine_child_bind(parent))
                _exit(1);
            close(pfd[0]);
            for (guint j = 0; j < started; j++)
                close(fds[j]);
            GString *out = g_string_new(NULL);
            price_share(g, started, k, out);
            _exit(write_all(pfd[1], out->str, out->len) ? 0 : 3);
        }
        cs_engine_child_add(pid);   /* killed on the interrupt path */
        close(pfd[1]);
        fds[started] = pfd[0];
        pids[started] = pid;
        bufs[started] = g_string_new(NULL);
    }
    /* drain every started worker, then reap it */
    g_autofree struct pollfd *pf = g_new0(struct pollfd, MAX(1, started));
    guint open = started;
    for (guint j = 0; j < started; j++)
        pf[j] = (struct pollfd){ .fd = fds[j], .events = POLLIN };
    while (open > 0) {
        if (poll(pf, started, -1) < 0) {
            if (errno == EINTR)
                continue;
            /* stop reading: close every pipe so no worker blocks on a
             * full one while it is reaped below */
            if (ok)
                g_set_error(err, CS_ERROR, CS_ERROR_RESOURCE, "collsim: sweep: cannot wait for the workers (%s)",
                            g_strerror(errno));
            ok = FALSE;
            for (guint j = 0; j < started; j++)
                if (pf[j].fd >= 0) {
                    close(pf[j].fd);
                    pf[j].fd = -1;
                }
            break;
        }
        for (guint j = 0; j < started; j++) {
            if (pf[j].fd < 0 || pf[j].revents == 0)
                continue;
            char chunk[65536];
            ssize_t r = read(pf[j].fd, chunk, sizeof chunk);
            if (r > 0) {
                g_string_append_len(bufs[j], chunk, r);
            } else if (r == 0 || errno != EINTR) {
                close(pf[j].fd);
                pf[j].fd = -1;
                open--;
            }
        }
    }
    for (guint j = 0; j < started; j++) {
        int st = 0;
        while (waitpid(pids[j], &st, 0) < 0 && errno == EINTR)
            ;
        cs_engine_child_remove(pids[j]);
        if (ok && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
            g_set_error(err, CS_ERROR, CS_ERROR_RESOURCE, "collsim: sweep: worker %u %s %d before it finished its points",
                        j, WIFSIGNALED(st) ? "was killed by signal" : "exited with status",
                        WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
            ok = FALSE;
        }
        g_string_append_len(all, bufs[j]->str, bufs[j]->len);
        g_string_free(bufs[j], TRUE);
    }
    g_free(bufs);
    return ok;
}

/* The rank and size mpirun gave this process (Open MPI, PMIx, PMI), or
 * FALSE when it was not started by one. */
static gboolean launched_by_mpi(int *rank_p, int *size_p)
{
    static const char *const names[][2] = { { "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE" },
                                            { "PMIX_RANK", "PMIX_SIZE" },
                                            { "PMI_RANK", "PMI_SIZE" } };
    for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
        const char *r = g_getenv(names[i][0]), *s = g_getenv(names[i][1]);
        gint64 rv, sv;
        if (r != NULL && s != NULL && cs_parse_int(r, 0, G_MAXINT, &rv) && cs_parse_int(s, 1, G_MAXINT, &sv)) {
            *rank_p = (int)rv;
            *size_p = (int)sv;
            return TRUE;
        }
    }
    return FALSE;
}

#ifdef HAVE_MPI
/* Every rank prices its share; rank 0 gathers the records in rank order.
 * Returns TRUE on rank 0 with 'all' filled; other ranks return FALSE with
 * no error (they have nothing more to do). */
static gboolean run_mpi(const grid_t *g, GString *all, GError **err)
{
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    GString *mine = g_string_new(NULL);
    price_share(g, (guint)rank, (guint)size, mine);
    if (rank != 0) {
        unsigned long long len = mine->len;
        MPI_Send(&len, 1, MPI_UNSIGNED_LONG_LONG, 0, 1, MPI_COMM_WORLD);
        for (gsize off = 0; off < mine->len; off += 1 << 30) {
            int n = (int)MIN(mine->len - off, (gsize)1 << 30);
            MPI_Send(mine->str + off, n, MPI_CHAR, 0, 2, MPI_COMM_WORLD);
        }
        g_string_free(mine, TRUE);
        return FALSE;
    }
    g_string_append_len(all, mine->str, mine->len);
    g_string_free(mine, TRUE);
    for (int r = 1; r < size; r++) {
        unsigned long long len = 0;
        MPI_Recv(&len, 1, MPI_UNSIGNED_LONG_LONG, r, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        gsize at = all->len;
        g_string_set_size(all, at + len);
        for (gsize off = 0; off < len; off += 1 << 30) {
            int n = (int)MIN(len - off, (gsize)1 << 30);
            MPI_Recv(all->str + at + off, n, MPI_CHAR, r, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    (void)err;
    return TRUE;
}
#endif

/* ---- outputs ------------------------------------------------------------------ */

static const char *model_of(const point_t *p)
{
    return g_str_has_prefix(p->producer, "model:") ? p->producer + 6 : p->producer;
}

static char *write_csv(const grid_t *g, const point_t *points)
{
    GString *s = g_string_new("point");
    for (guint k = 0; k < g->axes->len; k++) {
        g_string_append_c(s, ',');
        cs_write_csv_field(s, g_array_index(g->axes, axis_t, k).column);
    }
    g_string_append(s, ",model,collective,nranks,nnodes,size,printed_size,count,time_us,algbw,busbw,"
                       "algo,proto,nchannels,transport\n");
    for (guint i = 0; i < g->npoints; i++) {
        const point_t *p = &points[i];
        for (guint r = 0; r < p->rows->len; r++) {
            const prow_t *row = &g_array_index(p->rows, prow_t, r);
            g_string_append_printf(s, "%u", i);
            for (guint k = 0; k < g->axes->len; k++) {
                const axis_t *x = &g_array_index(g->axes, axis_t, k);
                g_string_append_c(s, ',');
                cs_write_csv_field(s, x->values[value_at(g, i, k)]);
            }
            g_string_append_c(s, ',');
            cs_write_csv_field(s, model_of(p));
            g_string_append_printf(s, ",%s,%d,%d,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT,
                                   cs_coll_name((cs_coll_t)p->coll), p->nranks, p->nnodes, row->size, row->printed,
                                   row->count);
            cs_predict_csv_num(s, row->time_us);
            cs_predict_csv_num(s, row->algbw);
            cs_predict_csv_num(s, row->busbw);
            g_string_append_c(s, ',');
            cs_write_csv_field(s, row->algo);
            g_string_append_c(s, ',');
            cs_write_csv_field(s, row->proto);
            g_string_append_c(s, ',');
            if (row->nchannels > 0)
                g_string_append_printf(s, "%d", row->nchannels);
            g_string_append_c(s, ',');
            cs_write_csv_field(s, row->transport);
            g_string_append_c(s, '\n');
        }
    }
    return g_string_free(s, FALSE);
}

static char *write_json(const grid_t *g, const point_t *points, const char *base)
{
    GString *s = g_string_new("{\n  \"producer\": \"collsim sweep\",\n  \"version\": \"" PACKAGE_VERSION "\",\n");
    g_string_append(s, "  \"prediction\": true,\n  \"base\": ");
    cs_write_append_json_string(s, base);
    g_string_append(s, ",\n  \"keys\": [");
    for (guint k = 0; k < g->axes->len; k++) {
        if (k)
            g_string_append(s, ", ");
        cs_write_append_json_string(s, g_array_index(g->axes, axis_t, k).column);
    }
    g_string_append(s, "],\n  \"points\": [");
    for (guint i = 0; i < g->npoints; i++) {
        const point_t *p = &points[i];
        g_string_append_printf(s, "%s\n    {\"point\": %u, \"settings\": {", i ? "," : "", i);
        for (guint k = 0; k < g->axes->len; k++) {
            const axis_t *x = &g_array_index(g->axes, axis_t, k);
            if (k)
                g_string_append(s, ", ");
            cs_write_append_json_string(s, x->column);
            g_string_append(s, ": ");
            cs_write_append_json_string(s, x->values[value_at(g, i, k)]);
        }
        g_string_append(s, "}, \"producer\": ");
        cs_write_append_json_string(s, p->producer);
        g_string_append(s, ", \"collective\": ");
        cs_write_append_json_string(s, cs_coll_name((cs_coll_t)p->coll));
        g_string_append_printf(s, ", \"nranks\": %d, \"nnodes\": %d, \"topology\": ", p->nranks, p->nnodes);
        cs_write_append_json_string(s, p->topo);
        g_string_append(s, ",\n     \"notes\": [");
        for (guint k = 0; k < p->notes->len; k++) {
            if (k)
                g_string_append(s, ", ");
            cs_write_append_json_string(s, g_ptr_array_index(p->notes, k));
        }
        g_string_append(s, "],\n     \"rows\": [");
        for (guint r = 0; r < p->rows->len; r++) {
            const prow_t *row = &g_array_index(p->rows, prow_t, r);
            g_string_append_printf(s, "%s\n       {\"size\": %" G_GUINT64_FORMAT ", \"printed_size\": %" G_GUINT64_FORMAT
                                   ", \"count\": %" G_GUINT64_FORMAT ", ",
                                   r ? "," : "", row->size, row->printed, row->count);
            cs_write_append_json_num(s, "time_us", row->time_us);
            g_string_append(s, ", ");
            cs_write_append_json_num(s, "algbw", row->algbw);
            g_string_append(s, ", ");
            cs_write_append_json_num(s, "busbw", row->busbw);
            g_string_append(s, ", \"algo\": ");
            cs_write_append_json_string(s, row->algo);
            g_string_append(s, ", \"proto\": ");
            cs_write_append_json_string(s, *row->proto ? row->proto : NULL);
            g_string_append_printf(s, ", \"nchannels\": %d, \"transport\": ", row->nchannels);
            cs_write_append_json_string(s, *row->transport ? row->transport : NULL);
            g_string_append_c(s, '}');
        }
        g_string_append(s, "]}");
    }
    g_string_append(s, "\n  ]\n}\n");
    return g_string_free(s, FALSE);
}

static char *point_label(const grid_t *g, guint i)
{
    GString *s = g_string_new(NULL);
    for (guint k = 0; k < g->axes->len; k++) {
        const axis_t *x = &g_array_index(g->axes, axis_t, k);
        g_string_append_printf(s, "%s%s=%s", k ? " " : "", x->column, x->values[value_at(g, i, k)]);
    }
    if (s->len == 0)
        g_string_append(s, "base scenario");
    return g_string_free(s, FALSE);
}

/* "analytic" or "analytic, flow", first-use order */
static char *models_of(const grid_t *g, const point_t *points)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < g->npoints; i++) {
        gboolean seen = FALSE;
        for (guint j = 0; j < i && !seen; j++)
            seen = strcmp(points[j].producer, points[i].producer) == 0;
        if (!seen)
            g_string_append_printf(s, "%s%s", s->len ? ", " : "", model_of(&points[i]));
    }
    return g_string_free(s, FALSE);
}

static char *write_svg(const grid_t *g, const point_t *points)
{
    g_autofree cs_svg_series_t *series = g_new0(cs_svg_series_t, MAX(1, g->npoints));
    g_autoptr(GPtrArray) keep = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < g->npoints; i++) {
        const point_t *p = &points[i];
        guint m = p->rows->len;
        double *size = g_new0(double, MAX(1, m)), *bw = g_new0(double, MAX(1, m)), *t = g_new0(double, MAX(1, m));
        char **algo = g_new0(char *, m + 1);
        for (guint k = 0; k < m; k++) {
            const prow_t *r = &g_array_index(p->rows, prow_t, k);
            size[k] = (double)r->size;
            bw[k] = r->busbw;
            t[k] = r->time_us;
            if (*r->proto) {
                algo[k] = g_strdup_printf("%s/%s", r->algo, r->proto);
                g_ptr_array_add(keep, algo[k]);
            }
        }
        char *label = point_label(g, i);
        g_ptr_array_add(keep, label);
        g_ptr_array_add(keep, size);
        g_ptr_array_add(keep, bw);
        g_ptr_array_add(keep, t);
        g_ptr_array_add(keep, algo);
        series[i] = (cs_svg_series_t){ .label = label, .n = (int)m, .size = size, .busbw = bw, .time_us = t,
                                       .algo = (const char *const *)algo };
    }
    g_autofree char *models = models_of(g, points);
    GString *title = g_string_new(cs_coll_name((cs_coll_t)points[0].coll));
    g_string_append(title, " sweep");
    for (guint k = 0; k < g->axes->len; k++)
        g_string_append_printf(title, "%s%s", k ? " x " : " over ", g_array_index(g->axes, axis_t, k).column);
    g_autofree char *caption = cs_predict_svg_caption(models, "sweep");
    cs_svg_opts_t o = { .title = title->str, .caption = caption, .time_panel = TRUE };
    char *svg = cs_svg_plot(series, (int)g->npoints, &o);
    g_string_free(title, TRUE);
    return svg;
}

/* --output's format: --format, else the extension. */
static gboolean output_format(const sweep_opts_t *o, gboolean *json_p, GError **err)
{
    const char *f = o->format;
    if (f == NULL && o->output != NULL)
        f = g_str_has_suffix(o->output, ".json") ? "json" : g_str_has_suffix(o->output, ".csv") ? "csv" : NULL;
    if (f == NULL && o->output != NULL) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                    "collsim: --output: cannot tell the format of '%s'; expected a .csv or .json name, or --format",
                    o->output);
        return FALSE;
    }
    if (f != NULL && strcmp(f, "csv") != 0 && strcmp(f, "json") != 0) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: --format: '%s' is not a format; expected csv or json", f);
        return FALSE;
    }
    /* a name that says the other format would mislead whoever opens it */
    if (o->format != NULL && o->output != NULL) {
        const char *named = g_str_has_suffix(o->output, ".json") ? "json" : g_str_has_suffix(o->output, ".csv") ? "csv"
                                                                                                                : NULL;
        if (named != NULL && strcmp(named, f) != 0) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: --format: %s into '%s', a .%s name; expected "
                        "--format %s, or a name ending in .%s", f, o->output, named, named, f);
            return FALSE;
        }
    }
    *json_p = f != NULL && strcmp(f, "json") == 0;
    return TRUE;
}

/* The summary on standard output when the rows went to files: one line per
 * point with its settings and its largest size's bus bandwidth. */
static void write_summary(FILE *f, const grid_t *g, const point_t *points, const char *const *paths, int npaths)
{
    g_autofree char *models = models_of(g, points);
    fprintf(f, "# collsim %s sweep (model%s: %s) — every number is a model prediction, not a measurement\n",
            PACKAGE_VERSION, strchr(models, ',') != NULL ? "s" : "", models);
    fprintf(f, "# %u point%s of %s", g->npoints, g->npoints == 1 ? "" : "s", cs_coll_name((cs_coll_t)points[0].coll));
    for (guint k = 0; k < g->axes->len; k++)
        fprintf(f, "%s%s (%d)", k ? " x " : " over ", g_array_index(g->axes, axis_t, k).column,
                g_array_index(g->axes, axis_t, k).n);
    fputc('\n', f);
    for (int i = 0; i < npaths; i++)
        fprintf(f, "# wrote %s\n", paths[i]);
    fprintf(f, "#\n# %5s", "point");
    g_autofree int *w = g_new0(int, MAX(1, g->axes->len));
    for (guint k = 0; k < g->axes->len; k++) {
        const axis_t *x = &g_array_index(g->axes, axis_t, k);
        w[k] = (int)strlen(x->column);
        for (int v = 0; v < x->n; v++)
            w[k] = MAX(w[k], (int)strlen(x->values[v]));
        fprintf(f, "  %-*s", w[k], x->column);
    }
    fprintf(f, "  %-8s %6s %12s %9s  %s\n", "model", "ranks", "largest size", "busbw", "algo/proto/nch");
    for (guint i = 0; i < g->npoints; i++) {
        const point_t *p = &points[i];
        fprintf(f, "  %5u", i);
        for (guint k = 0; k < g->axes->len; k++)
            fprintf(f, "  %-*s", w[k], g_array_index(g->axes, axis_t, k).values[value_at(g, i, k)]);
        const prow_t *last = p->rows->len > 0 ? &g_array_index(p->rows, prow_t, p->rows->len - 1) : NULL;
        if (last == NULL || last->busbw < 0) {
            fprintf(f, "  %-8s %6d %12s %9s  %s\n", model_of(p), p->nranks, "-", "-", "-");
            continue;
        }
        fprintf(f, "  %-8s %6d %12" G_GUINT64_FORMAT " %9.2f  %s/%s/%d\n", model_of(p), p->nranks, last->size,
                last->busbw, last->algo, last->proto, last->nchannels);
    }
    fprintf(f, "#\n");
}

/* Writes the files (all or none), then standard output. */
static int emit(const grid_t *g, const point_t *points, const sweep_opts_t *o, const cs_scenario_t *flags,
                const char *base, GError **err)
{
    gboolean out_json;
    if (!output_format(o, &out_json, err))
        return 2;
    const char *paths[4], *data[4];
    int n = 0;
    g_autofree char *json = NULL, *csv = NULL, *svg = NULL;
    gboolean want_json = flags->json_out != NULL || (o->output != NULL && out_json);
    gboolean want_csv = flags->csv_out != NULL || (o->output != NULL && !out_json);
    if (want_json || (o->output == NULL && flags->json_out == NULL && flags->csv_out == NULL && out_json))
        json = write_json(g, points, base);
    if (want_csv || (o->output == NULL && flags->json_out == NULL && flags->csv_out == NULL && !out_json))
        csv = write_csv(g, points);
    if (o->output != NULL)
        paths[n] = o->output, data[n++] = out_json ? json : csv;
    if (flags->json_out != NULL)
        paths[n] = flags->json_out, data[n++] = json;
    if (flags->csv_out != NULL)
        paths[n] = flags->csv_out, data[n++] = csv;
    if (flags->svg_out != NULL) {
        svg = write_svg(g, points);
        paths[n] = flags->svg_out, data[n++] = svg;
    }
    if (!cs_output_write(n, paths, data, NULL, err))
        return cs_error_exit_status(*err);
    if (o->output == NULL && flags->json_out == NULL && flags->csv_out == NULL)
        fputs(out_json ? json : csv, stdout);
    else
        write_summary(stdout, g, points, paths, n);
    return cs_output_stdout_flush(err) ? 0 : cs_error_exit_status(*err);
}

/* ---- the command ---------------------------------------------------------------- */

/* The base scenario alone, built once in the parent, and the files: their
 * errors come before any worker starts. */
static gboolean check_base(cs_run_args_t *a, const sweep_opts_t *o, const grid_t *g, GError **err)
{
    if (a->scratch.trace_out != NULL) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                    "collsim: --trace: sweep prices many points; expected collsim run --trace for one");
        return FALSE;
    }
    const char *paths[4], *names[4];
    int n = 0;
    if (o->output != NULL)
        names[n] = "collsim: --output", paths[n++] = o->output;
    if (a->scratch.json_out != NULL)
        names[n] = "collsim: --json", paths[n++] = a->scratch.json_out;
    if (a->scratch.csv_out != NULL)
        names[n] = "collsim: --csv", paths[n++] = a->scratch.csv_out;
    if (a->scratch.svg_out != NULL)
        names[n] = "collsim: --svg", paths[n++] = a->scratch.svg_out;
    /* the files a grid's values name are read by the workers, in other
     * processes: counted as inputs here, so that no output replaces one */
    for (guint k = 0; k < g->axes->len; k++) {
        const axis_t *x = &g_array_index(g->axes, axis_t, k);
        if (strcmp(x->column, "scenario.calibration") == 0 || strcmp(x->column, "topology.file") == 0)
            for (int v = 0; v < x->n; v++)
                cs_read_file_note_input(x->values[v]);
    }
    if (!cs_output_check(n, paths, names, err))
        return FALSE;
    cs_scenario_t s;
    cs_scenario_init(&s);
    gboolean ok = cs_run_args_build(a, &s, err);
    /* and the base scenario's own files, read just now */
    if (ok && !cs_output_check(n, paths, names, err))
        ok = FALSE;
    if (ok && s.jobs->len > 0) {
        const cs_scenario_job_t *j = g_ptr_array_index(s.jobs, 0);
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                    "%s: [job %s]: collsim sweep prices one collective over a sweep of sizes; "
                    "expected a scenario without [job NAME] groups", j->origin, j->name);
        ok = FALSE;
    }
    /* what run would warn of for the base scenario, once (a grid value's
     * own warnings go with its point's notes in the JSON), and the
     * settings a grid of rows has no place for */
    if (ok && !o->quiet) {
        g_autoptr(GPtrArray) w = cs_nccl_env_warnings(s.env);
        /* the engines the points run: the base's, and a scenario.model
         * axis's values; each says what it leaves out, once */
        g_autoptr(GPtrArray) models = g_ptr_array_new();
        g_ptr_array_add(models, s.model != NULL ? s.model : "analytic");
        for (guint i = 0; i < g->axes->len; i++) {
            const axis_t *x = &g_array_index(g->axes, axis_t, i);
            if (strcmp(x->column, "scenario.model") == 0) {
                g_ptr_array_set_size(models, 0);
                for (int v = 0; v < x->n; v++)
                    g_ptr_array_add(models, x->values[v]);
            }
        }
        for (guint i = 0; i < models->len; i++) {
            const cs_engine_ops_t *ops = cs_engine_find(models->pdata[i]);
            if (ops != NULL)
                cs_engine_ignored_settings(ops, &s.fabric, s.env, w);
            /* an axis over [fabric] keys that such an engine does not
             * simulate gives it the same rows at every value */
            for (guint k = 0; ops != NULL && !ops->fabric && k < g->axes->len; k++) {
                const axis_t *x = &g_array_index(g->axes, axis_t, k);
                if (g_str_has_prefix(x->column, "fabric."))
                    g_ptr_array_add(w, g_strdup_printf("--grid %s: the fabric settings describe the packets of "
                                                       "--model packet; --model %s does not simulate them, so its "
                                                       "points differ in the settings only, not in their times",
                                                       x->column, ops->name));
            }
        }
        cs_predict_sweep_warnings(&s, NULL, NULL, 0, w);
        /* an axis over an NCCL variable NCCL does not read (a typo, most
         * often): every point the same, which the CSV rows cannot say */
        for (guint k = 0; k < g->axes->len; k++) {
            const axis_t *x = &g_array_index(g->axes, axis_t, k);
            const char *name = g_str_has_prefix(x->column, "nccl.") ? x->column + strlen("nccl.") : NULL;
            if (name != NULL && !cs_nccl_env_is_known(name)) {
                const char *hint = cs_nccl_env_hint(name);
                g_ptr_array_add(w, g_strdup_printf("--grid %s: NCCL does not read %s, so every point prices "
                                                   "the same%s%s", x->column, name, hint != NULL ? "; " : "",
                                                   hint != NULL ? hint : ""));
            }
        }
        /* a CSV row has no notes: where its numbers' parameters came from
         * is said here (each JSON point's notes say it too) */
        if (s.calibration != NULL) {
            const char *where = cs_run_args_origin(&s, "scenario.calibration", "--calibration");
            if (g_str_has_prefix(where, "collsim: "))
                where += strlen("collsim: ");
            g_ptr_array_add(w, g_strdup_printf("%s: every point is priced with %s's parameters, which CSV rows do "
                                               "not record (--format json keeps them in each point's notes)",
                                               where, s.calibration));
        }
        /* the scenario file's own output files: sweep writes its own */
        static const char *const files[] = { "output.json", "output.csv", "output.svg", "output.trace" };
        for (guint k = 0; k < G_N_ELEMENTS(files); k++) {
            const char *at = g_hash_table_lookup(s.origins, files[k]);
            if (at != NULL && !g_str_has_prefix(at, "collsim:"))
                g_ptr_array_add(w, g_strdup_printf("%s: not written: sweep writes only its own files (--output, "
                                                   "--json, --csv, --svg)", at));
        }
        if (s.link_stats)
            g_ptr_array_add(w, g_strdup("link-stats: sweep writes one row per point and size, no link table; "
                                        "collsim run --link-stats prints one"));
        if (s.alternatives)
            g_ptr_array_add(w, g_strdup("alternatives: sweep prices NCCL's picks only; collsim run --alternatives "
                                        "notes what it passed over"));
        if (!s.extra_columns)
            g_ptr_array_add(w, g_strdup("extra-columns off: sweep's rows always carry the algorithm, protocol, "
                                        "channels and transport"));
        for (guint i = 0; i < w->len; i++)
            fprintf(stderr, "collsim: warning: %s\n", (const char *)g_ptr_array_index(w, i));
    }
    cs_scenario_clear(&s);
    return ok;
}

static int sweep(cs_run_args_t *a, const sweep_opts_t *o, GError **err)
{
    grid_t g = { .a = a, .axes = g_array_new(FALSE, TRUE, sizeof(axis_t)) };
    g_array_set_clear_func(g.axes, (GDestroyNotify)axis_clear);
    point_t *points = NULL;
    GString *all = g_string_new(NULL);   /* every point's record */
    int status = 2;
    gboolean out_json;
    if (!parse_grid(o, &g, err) || !output_format(o, &out_json, err) || !check_base(a, o, &g, err))
        goto out_grid;
    int rank = 0, size = 1;
    gboolean mpi = launched_by_mpi(&rank, &size);
#ifdef HAVE_MPI
    if (mpi) {
        MPI_Init(NULL, NULL);
        gboolean root = run_mpi(&g, all, err);
        MPI_Finalize();
        if (!root) {
            status = 0;
            goto out_grid;
        }
    }
#else
    if (mpi && size > 1) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT,
                    "collsim: sweep: started by mpirun with %d ranks, but this collsim was built without MPI; "
                    "expected configure to find Open MPI (libopenmpi-dev), or a run without mpirun (local processes)",
                    size);
        goto out_grid;
    }
    mpi = FALSE;
#endif
    if (!mpi) {
        guint k = o->jobs > 0 ? (guint)o->jobs : (guint)g_get_num_processors();
        if (!run_local(&g, MIN(k, g.npoints), all, err))
            goto out_grid;
    }
    points = g_new0(point_t, g.npoints);
    if (!parse_records(all->str, points, g.npoints)) {
        g_set_error(err, CS_ERROR, CS_ERROR_RESOURCE, "collsim: sweep: a worker's results were cut short");
        goto out_points;
    }
    for (guint i = 0; i < g.npoints; i++) {
        if (!points[i].done) {
            g_set_error(err, CS_ERROR, CS_ERROR_RESOURCE, "collsim: sweep: point %u has no result", i);
            goto out_points;
        }
        if (points[i].error != NULL) {
            /* the first failing point in grid order, whoever priced it */
            g_autofree char *label = point_label(&g, i);
            g_set_error(err, CS_ERROR, points[i].resource ? CS_ERROR_RESOURCE : CS_ERROR_INPUT, "%s (point %u: %s)",
                        points[i].error, i, label);
            goto out_points;
        }
    }
    status = emit(&g, points, o, &a->scratch, a->scenario != NULL ? a->scenario : "flags", err);
out_points:
    for (guint i = 0; i < g.npoints; i++)
        point_clear(&points[i]);
    g_free(points);
out_grid:
    if (status == CS_EXIT_INPUT)
        status = cs_error_exit_status(*err);   /* 3: a worker could not start, a file not be written */
    g_string_free(all, TRUE);
    g_array_unref(g.axes);
    return status;
}

static gboolean on_jobs(const char *option_name, const char *value, gpointer data, GError **err)
{
    sweep_opts_t *o = data;
    gint64 n;
    if (!cs_parse_int(value, 1, 1024, &n)) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: %s: '%s' is not a number of processes; expected 1 to 1024",
                    option_name, value);
        cs_scenario_error_one_line(*err);
        return FALSE;
    }
    o->jobs = (int)n;
    return TRUE;
}

static const cs_run_args_cmd_t sweep_cmd = {
    .command = "sweep",
    .parameter = "[SCENARIO] --grid KEY=V1,V2... - price a grid of designs into one CSV or JSON",
    .summary =
        "Prices every point of a grid over scenario keys (the last --grid varies fastest) and\n"
        "writes one row per point and size, with a column per grid key. KEY is GROUP.KEY\n"
        "(topology.nodes, topology.fabric, nccl.NCCL_ALGO, scenario.model, collective.op), an\n"
        "NCCL_* name or a flag's long name. Under mpirun the points are spread over the ranks\n"
        "(when built with MPI), otherwise over local processes; the files are the same.",
    .description =
        "Examples:\n"
        "  collsim sweep scenarios/default.ini -b 1M -e 1G -f 4 --grid nccl.NCCL_ALGO=Ring,Tree --output s.csv\n"
        "  collsim sweep --topo dgx-h100 --nic ib-ndr --grid topology.nodes=2,4,8 \\\n"
        "      --grid topology.fabric=rail,fat-tree --grid scenario.model=analytic,flow --output s.json\n"
        "  mpirun -np 4 collsim sweep base.ini --grid topology.nodes=1,2,4,8 --output s.csv\n"
        "\nSee collsim-sweep(1).",
    .extra_main = TRUE,
};

int cs_cmd_sweep(int argc, char **argv)
{
    cs_run_args_t a;
    cs_run_args_init(&a);
    g_set_prgname("collsim sweep");
    sweep_opts_t o = { .grid = g_ptr_array_new_with_free_func(g_free) };
    GOptionEntry extra[] = {
        { "grid", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_grid,
          "A grid axis: the key and its values (repeatable; \\, is a comma in a value)", "KEY=V1,V2..." },
        { "output", 0, 0, G_OPTION_ARG_FILENAME, &o.output, "Write the rows to FILE (format from .csv/.json or --format)",
          "FILE" },
        { "format", 0, 0, G_OPTION_ARG_STRING, &o.format, "Format of --output or of standard output: csv (default) or json",
          "csv|json" },
        { "jobs", 'j', 0, G_OPTION_ARG_CALLBACK, (gpointer)on_jobs,
          "Local processes pricing points (default: the processors; ignored under mpirun)", "N" },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    cs_run_args_cmd_t cmd = sweep_cmd;
    cmd.extra = extra;
    cmd.extra_data = &o;

    /* under mpirun every rank parses the same arguments: one says what is wrong */
    int rank = 0, size = 1;
    gboolean quiet = launched_by_mpi(&rank, &size) && rank != 0;
    o.quiet = quiet;
    g_autoptr(GError) err = NULL;
    int status;
    if (!cs_run_args_parse(&a, &cmd, argc, argv, &err))
        status = quiet ? 2 : cs_cli_fail(err);
    else if (a.dump) {
        g_set_error(&err, CS_ERROR, CS_ERROR_INPUT,
                    "collsim: --dump: sweep has no single scenario; expected collsim run --dump");
        status = quiet ? 2 : cs_cli_fail(err);
    } else if (((status = sweep(&a, &o, &err)) == CS_EXIT_INPUT || status == CS_EXIT_RESOURCE) && !quiet)
        cs_cli_fail(err);
    g_free(o.output);
    g_free(o.format);
    g_ptr_array_unref(o.grid);
    cs_run_args_clear(&a);
    return status;
}
