#include "config.h"
#include "models/cs_result.h"

cs_result_t *cs_result_new(const char *producer, const char *source, cs_coll_t coll, int nranks, int nnodes)
{
    cs_result_t *r = g_new0(cs_result_t, 1);
    r->producer = g_strdup(producer);
    r->source = g_strdup(source);
    r->coll = coll;
    r->nranks = nranks;
    r->nnodes = nnodes;
    r->rows = g_array_new(FALSE, TRUE, sizeof(cs_result_row_t));
    r->notes = g_ptr_array_new_with_free_func(g_free);
    return r;
}

void cs_net_counters_free(cs_net_counters_t *c)
{
    if (c == NULL)
        return;
    for (int i = 0; i < c->nports; i++)
        g_free(c->ports[i].link);
    g_free(c->ports);
    for (int i = 0; i < c->nbuffers; i++)
        g_free(c->buffers[i].name);
    g_free(c->buffers);
    for (int i = 0; i < c->nsharp; i++)
        g_free(c->sharp_switches[i].name);
    g_free(c->sharp_switches);
    g_free(c);
}

cs_net_counters_t *cs_net_counters_copy(const cs_net_counters_t *c)
{
    cs_net_counters_t *d = g_memdup2(c, sizeof *c);
    d->ports = g_memdup2(c->ports, sizeof *c->ports * (gsize)c->nports);
    for (int i = 0; i < c->nports; i++)
        d->ports[i].link = g_strdup(c->ports[i].link);
    d->buffers = g_memdup2(c->buffers, sizeof *c->buffers * (gsize)c->nbuffers);
    for (int i = 0; i < c->nbuffers; i++)
        d->buffers[i].name = g_strdup(c->buffers[i].name);
    d->sharp_switches = g_memdup2(c->sharp_switches, sizeof *c->sharp_switches * (gsize)c->nsharp);
    for (int i = 0; i < c->nsharp; i++)
        d->sharp_switches[i].name = g_strdup(c->sharp_switches[i].name);
    return d;
}

void cs_result_free(cs_result_t *r)
{
    if (r == NULL)
        return;
    g_free(r->producer);
    g_free(r->source);
    g_array_unref(r->rows);
    g_ptr_array_unref(r->notes);
    if (r->net != NULL)
        g_ptr_array_unref(r->net);
    g_free(r);
}

void cs_result_add_note(cs_result_t *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_ptr_array_add(r->notes, g_strdup_vprintf(fmt, ap));
    va_end(ap);
}

/* nccl-tests <Coll>GetBw: algbw = S / t / 1e9 with S from the count, busbw =
 * algbw * factor. Times are in microseconds. */
void cs_result_row_fill_bw(const cs_result_t *r, cs_result_row_t *row)
{
    double bytes = cs_coll_algbw_bytes(r->coll, row->count, row->dtype, r->nranks);
    double factor = cs_busbw_factor(r->coll, r->nranks);
    for (int p = 0; p < 2; p++) {
        if (row->time_us[p] > 0) {
            row->algbw[p] = bytes / 1e9 / (row->time_us[p] * 1e-6);
            row->busbw[p] = row->algbw[p] * factor;
        } else {
            row->algbw[p] = row->busbw[p] = -1;
        }
    }
}

/* nccl-tests sums busbw over every timed run, out-of-place and in-place, and
 * divides by their number (src/common.cu BenchTime: bw[0] += busBw,
 * bw_count[0]++; then bw[0] /= bw_count[0]). Missing values are skipped. */
void cs_result_finish(cs_result_t *r)
{
    double sum = 0;
    int n = 0;
    for (guint i = 0; i < r->rows->len; i++) {
        const cs_result_row_t *row = &g_array_index(r->rows, cs_result_row_t, i);
        for (int p = 0; p < 2; p++) {
            if (row->busbw[p] >= 0) {
                sum += row->busbw[p];
                n++;
            }
        }
    }
    r->avg_busbw = n > 0 ? sum / n : 0;
}
