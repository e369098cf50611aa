/* Several jobs on one machine: each job's time with the others and alone,
 * the slowdown, and its bus bandwidth per call both ways, as a table, JSON
 * and CSV. Formats only; every number comes from the engine's run. */
#include "config.h"

#include <math.h>

#include "io/cs_writers.h"
#include "io/cs_writers-int.h"
#include "util/cs_units.h"

/* Bus bandwidth of one call (GB/s) when 'time_s' covers 'iters' calls. */
static double busbw(const cs_job_row_t *j, double time_s)
{
    double per_call = time_s / MAX(1, j->iters);
    if (per_call <= 0)
        return 0;
    double bytes = cs_coll_algbw_bytes(j->coll, j->count, j->dtype, j->nranks);
    return bytes / 1e9 / per_call * cs_busbw_factor(j->coll, j->nranks);
}

static double slowdown(const cs_job_row_t *j)
{
    return j->alone_s > 0 ? j->time_s / j->alone_s : 0;
}

void cs_write_jobs_table(FILE *f, const cs_jobs_report_t *r)
{
    fprintf(f, "# collsim run: %d jobs sharing one machine (%s)\n", r->nrows, r->producer);
    if (r->title != NULL)
        fprintf(f, "# %s\n", r->title);
    if (r->topo_desc != NULL)
        fprintf(f, "# topology: %s\n", r->topo_desc);
    for (int i = 0; r->notes != NULL && r->notes[i] != NULL; i++)
        fprintf(f, "# %s\n", r->notes[i]);
    fprintf(f, "#\n");
    fprintf(f, "# %-12s %6s %5s %14s %10s %10s %5s %8s %6s %3s %12s %12s %8s %9s %9s\n", "job", "ranks", "nodes",
            "collective", "size", "start(us)", "calls", "algo", "proto", "nch", "time(us)", "alone(us)", "slowdown",
            "busbw", "alone");
    fprintf(f, "# %-12s %6s %5s %14s %10s %10s %5s %8s %6s %3s %12s %12s %8s %9s %9s\n", "", "", "", "", "(B)", "",
            "", "", "", "", "", "", "", "(GB/s)", "(GB/s)");
    for (int i = 0; i < r->nrows; i++) {
        const cs_job_row_t *j = &r->rows[i];
        fprintf(f, "  %-12s %6d %5d %14s %10" G_GUINT64_FORMAT " %10.2f %5d %8s %6s %3d %12.2f %12.2f %8.3f %9.2f %9.2f\n",
                j->name, j->nranks, j->nnodes, cs_coll_name(j->coll), j->size, j->start_s * 1e6, j->iters, j->algo,
                j->proto, j->nchannels, j->time_s * 1e6, j->alone_s * 1e6, slowdown(j), busbw(j, j->time_s),
                busbw(j, j->alone_s));
    }
    fprintf(f, "#\n# time: from the job's first launch to the end of its last call, sharing the machine;\n"
               "# alone: the same job with the machine to itself; slowdown = time / alone;\n"
               "# busbw: per call, nccl-tests's definition. All numbers: %s.\n", r->producer);
}

char *cs_write_jobs_json(const cs_jobs_report_t *r)
{
    GString *g = g_string_new("{\n  \"producer\": ");
    cs_write_append_json_string(g, r->producer);
    g_string_append(g, ",\n  \"title\": ");
    cs_write_append_json_string(g, r->title);
    g_string_append(g, ",\n  \"topology\": ");
    cs_write_append_json_string(g, r->topo_desc);
    if (r->notes != NULL) {
        g_string_append(g, ",\n  \"notes\": [");
        for (int i = 0; r->notes[i] != NULL; i++) {
            g_string_append(g, i ? ", " : "");
            cs_write_append_json_string(g, r->notes[i]);
        }
        g_string_append_c(g, ']');
    }
    g_string_append(g, ",\n  \"jobs\": [");
    for (int i = 0; i < r->nrows; i++) {
        const cs_job_row_t *j = &r->rows[i];
        g_string_append(g, i ? ",\n    {" : "\n    {");
        g_string_append(g, "\"name\": ");
        cs_write_append_json_string(g, j->name);
        g_string_append_printf(g, ", \"ranks\": %d, \"nodes\": %d, \"collective\": ", j->nranks, j->nnodes);
        cs_write_append_json_string(g, cs_coll_name(j->coll));
        g_string_append(g, ", \"datatype\": ");
        cs_write_append_json_string(g, cs_dtype_name(j->dtype));
        g_string_append_printf(g, ", \"size\": %" G_GUINT64_FORMAT ", \"count\": %" G_GUINT64_FORMAT ", \"start_us\": ",
                               j->size, j->count);
        cs_write_append_number(g, j->start_s * 1e6);
        g_string_append_printf(g, ", \"calls\": %d, \"algo\": ", j->iters);
        cs_write_append_json_string(g, j->algo);
        g_string_append(g, ", \"proto\": ");
        cs_write_append_json_string(g, j->proto);
        g_string_append_printf(g, ", \"nchannels\": %d, \"time_us\": ", j->nchannels);
        cs_write_append_number(g, j->time_s * 1e6);
        g_string_append(g, ", \"alone_us\": ");
        cs_write_append_number(g, j->alone_s * 1e6);
        g_string_append(g, ", \"slowdown\": ");
        cs_write_append_number(g, slowdown(j));
        g_string_append(g, ", \"busbw_gbps\": ");
        cs_write_append_number(g, busbw(j, j->time_s));
        g_string_append(g, ", \"alone_busbw_gbps\": ");
        cs_write_append_number(g, busbw(j, j->alone_s));
        g_string_append(g, "}");
    }
    g_string_append(g, "\n  ]");
    if (r->net != NULL) {
        g_string_append(g, ",\n  \"all_jobs\": {\"source\": \"model\"");
        cs_write_json_network(g, r->net);
        g_string_append_c(g, '}');
    }
    g_string_append(g, "\n}\n");
    return g_string_free(g, FALSE);
}

char *cs_write_jobs_csv(const cs_jobs_report_t *r)
{
    GString *g = g_string_new("producer,job,ranks,nodes,collective,datatype,size,count,start_us,calls,algo,proto,"
                              "nchannels,time_us,alone_us,slowdown,busbw_gbps,alone_busbw_gbps\n");
    for (int i = 0; i < r->nrows; i++) {
        const cs_job_row_t *j = &r->rows[i];
        /* job names are [A-Za-z0-9._-]: no quoting needed */
        g_string_append_printf(g, "%s,%s,%d,%d,%s,%s,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",", r->producer,
                               j->name, j->nranks, j->nnodes, cs_coll_name(j->coll), cs_dtype_name(j->dtype), j->size,
                               j->count);
        cs_write_append_number(g, j->start_s * 1e6);
        g_string_append_printf(g, ",%d,%s,%s,%d,", j->iters, j->algo, j->proto, j->nchannels);
        const double v[5] = { j->time_s * 1e6, j->alone_s * 1e6, slowdown(j), busbw(j, j->time_s), busbw(j, j->alone_s) };
        for (int k = 0; k < 5; k++) {
            if (k)
                g_string_append_c(g, ',');
            cs_write_append_number(g, v[k]);
        }
        g_string_append_c(g, '\n');
    }
    return g_string_free(g, FALSE);
}
