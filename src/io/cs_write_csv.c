/* Results as CSV (RFC 4180): a header line, then one line per size with the
 * result's identity repeated, so that files from several runs concatenate
 * into one table. Missing values are empty fields. */
#include "config.h"
#include "io/cs_writers.h"
#include "io/cs_writers-int.h"

#include <math.h>
#include <string.h>

void cs_write_csv_field(GString *g, const char *s)
{
    if (s == NULL)
        return;
    if (strpbrk(s, ",\"\r\n") == NULL) {
        g_string_append(g, s);
        return;
    }
    g_string_append_c(g, '"');
    for (const char *p = s; *p; p++) {
        if (*p == '"')
            g_string_append_c(g, '"');
        g_string_append_c(g, *p);
    }
    g_string_append_c(g, '"');
}

/* Empty when missing (< 0) or not finite. */
void cs_write_append_csv_num(GString *g, double v)
{
    if (isfinite(v) && v >= 0)
        cs_write_append_number(g, v);
}

void cs_write_append_json_num(GString *g, const char *key, double v)
{
    g_string_append_printf(g, "\"%s\": ", key);
    if (isfinite(v) && v >= 0)
        cs_write_append_number(g, v);
    else
        g_string_append(g, "null");
}

static const char header[] =
    "producer,collective,nranks,nnodes,size,count,type,redop,root,"
    "oop_time_us,oop_algbw,oop_busbw,oop_wrong,ip_time_us,ip_algbw,ip_busbw,ip_wrong,"
    "algo,proto,nchannels,transport,nccl_est_us\n";

char *cs_write_csv(const cs_result_t *r)
{
    GString *g = g_string_new(header);
    for (guint i = 0; i < r->rows->len; i++) {
        const cs_result_row_t *row = &g_array_index(r->rows, cs_result_row_t, i);
        cs_write_csv_field(g, r->producer);
        g_string_append_printf(g, ",%s,%d,%d,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%s,%s,%d",
                               cs_coll_name(r->coll), r->nranks, r->nnodes, row->size, row->count,
                               cs_dtype_name(row->dtype),
                               cs_coll_has_redop(r->coll) ? cs_redop_name(row->redop) : "none", row->root);
        for (int p = CS_OOP; p <= CS_INP; p++) {
            gboolean run = row->time_us[p] >= 0;
            g_string_append_c(g, ',');
            if (run)
                cs_write_append_csv_num(g, row->time_us[p]);
            g_string_append_c(g, ',');
            if (run)
                cs_write_append_csv_num(g, row->algbw[p]);
            g_string_append_c(g, ',');
            if (run)
                cs_write_append_csv_num(g, row->busbw[p]);
            g_string_append_c(g, ',');
            if (run && row->wrong[p] >= 0)
                g_string_append_printf(g, "%ld", row->wrong[p]);
        }
        g_string_append_c(g, ',');
        cs_write_csv_field(g, row->algo);
        g_string_append_c(g, ',');
        cs_write_csv_field(g, row->proto);
        g_string_append_c(g, ',');
        if (row->nchannels > 0)
            g_string_append_printf(g, "%d", row->nchannels);
        g_string_append_c(g, ',');
        cs_write_csv_field(g, row->transport);
        g_string_append_c(g, ',');
        cs_write_append_csv_num(g, row->nccl_est_us);
        g_string_append_c(g, '\n');
    }
    return g_string_free(g, FALSE);
}

gboolean cs_write_csv_file(const char *path, const cs_result_t *r, GError **err)
{
    g_autofree char *data = cs_write_csv(r);
    return cs_write_file_atomic(path, data, -1, err);
}
