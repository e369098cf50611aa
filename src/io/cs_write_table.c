/* nccl-tests's text table, so that a prediction and a real run diff line by
 * line. The layout facts are those of nccl-tests v2.19.x src/util.cu
 * (writeDeviceReport, writeResultHeader, writeBenchmarkLinePreamble,
 * writeBenchmarkLineBody, getFloatStr, writeResultFooter, finalizeFooter);
 * the first line says which model or measurement made the numbers. */
#include "config.h"
#include "io/cs_writers.h"

#include <string.h>

/* nccl-tests's getFloatStr: the value in 'width' columns with two decimals,
 * else one, else none, else in exponent form. */
static void float_str(double v, int width, char *buf)
{
    if (snprintf(buf, width + 1, "%*.2f", width, v) <= width)
        return;
    if (snprintf(buf, width + 1, "%*.1f", width, v) <= width)
        return;
    if (snprintf(buf, width + 1, "%*.0f", width, v) <= width)
        return;
    if (width >= 7)
        snprintf(buf, width + 1, "%*.1e", width, v);
    else
        snprintf(buf, width + 1, "%*.0e", width, v);
}

static void write_first_line(FILE *f, const cs_result_t *r)
{
    const char *p = r->producer != NULL ? r->producer : "";
    if (g_str_has_prefix(p, "model:"))
        fprintf(f, "# collsim %s prediction (model: %s) \xe2\x80\x94 not a measurement\n", PACKAGE_VERSION,
                p + strlen("model:"));
    else if (g_str_has_prefix(p, "measured:"))
        fprintf(f, "# collsim %s measurement (%s)\n", PACKAGE_VERSION, p + strlen("measured:"));
    else
        fprintf(f, "# collsim %s results (%s)\n", PACKAGE_VERSION, p);
}

/* "#  Rank  0 Group  0 Pid 584419 on        dkh device  0 [0000:14:00] NAME":
 * the same columns (nccl-tests 2.18 common.cu: the bus id as domain, bus
 * and device, "[%04x:%02x:%02x]"); what only a real run knows is a
 * placeholder: the pid, and the bus id where the topology does not give
 * it (presets). Large jobs show the first ranks only. */
#define ALL_RANKS_UP_TO 64
#define RANKS_SHOWN 8

static void write_devices(FILE *f, const cs_topo_t *t)
{
    fprintf(f, "# Using devices\n");
    int shown = t->ngpus <= ALL_RANKS_UP_TO ? t->ngpus : RANKS_SHOWN;
    for (int rank = 0; rank < shown; rank++) {
        const cs_device_t *d = cs_topo_rank_dev(t, rank);
        char host[32];
        snprintf(host, sizeof host, "node%d", d->node);
        char bus[24] = "----:--:--";
        if (d->pci_busid != 0) {
            cs_topo_busid_format(d->pci_busid, bus);
            *strrchr(bus, '.') = '\0';   /* nccl-tests leaves the function out */
        }
        fprintf(f, "#  Rank %2d Group %2d Pid %6s on %10s device %2d [%s] %s\n", rank, 0, "-", host, d->local, bus,
                d->gpu != NULL ? d->gpu->marketing : "unknown GPU");
    }
    if (shown < t->ngpus)
        fprintf(f, "# ... %d more ranks\n", t->ngpus - shown);
}

void cs_write_table_header(FILE *f, const cs_result_t *r, const cs_table_opts_t *o)
{
    write_first_line(f, r);
    fprintf(f, "# Collective test starting: %s\n", cs_coll_test_name(r->coll));
    char step[64];
    if (o->stepfactor > 1)
        snprintf(step, sizeof step, "%.0f(factor)", o->stepfactor);
    else
        snprintf(step, sizeof step, "%" G_GUINT64_FORMAT "(bytes)", o->stepbytes);
    fprintf(f, "# nThread %d nGpus %d minBytes %" G_GUINT64_FORMAT " maxBytes %" G_GUINT64_FORMAT
            " step: %s warmup iters: %d iters: %d agg iters: %d validation: %d graph: %d unalign: %d\n",
            o->nthreads, o->ngpus, o->minbytes, o->maxbytes, step, o->warmup, o->iters, o->agg_iters, o->check, 0, 0);
    fprintf(f, "#\n");
    if (r->source != NULL && g_strcmp0(r->source, o->topo_desc) != 0)
        fprintf(f, "# Source: %s\n", r->source);
    if (o->topo_desc != NULL)
        fprintf(f, "# Topology: %s\n", o->topo_desc);
    if (o->command != NULL)
        fprintf(f, "# nccl-tests command: %s\n", o->command);
    for (guint i = 0; i < r->notes->len; i++)
        fprintf(f, "# %s\n", (const char *)g_ptr_array_index(r->notes, i));
    if (o->topo != NULL)
        write_devices(f, o->topo);

    /* writeResultHeader, without per-iteration timing or timestamps (whose
     * label is an empty "%*s" of width 0: hence the trailing space). */
    fprintf(f, "#\n");
    fprintf(f, "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n",
            "", "", "", "", "");
    fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s", "size", "count", "type",
            "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
    if (o->extra_columns)
        fprintf(f, "  %13s  %6s  %4s  %s\n", "algo", "proto", "nch", "transport");   /* CollNetDirect */
    else
        fprintf(f, " \n");
    fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s \n", "(B)", "(elements)", "", "",
            "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
}

void cs_write_table_row(FILE *f, const cs_result_t *r, guint i, const cs_table_opts_t *o)
{
    const cs_result_row_t *row = &g_array_index(r->rows, cs_result_row_t, i);
    const char *redop = cs_coll_has_redop(r->coll) ? cs_redop_name(row->redop) : "none";
    fprintf(f, "%12" G_GUINT64_FORMAT "  %12" G_GUINT64_FORMAT "  %8s  %6s  %6d", row->size, row->count,
            cs_dtype_name(row->dtype), redop, row->root);
    for (int p = CS_OOP; p <= CS_INP; p++) {
        if (row->time_us[p] < 0) {
            /* writeBenchMarkLineNullBody: the placement was not run */
            fprintf(f, "%32s", "");
            continue;
        }
        char t[8], a[7], b[7];
        float_str(row->time_us[p], 7, t);
        float_str(row->algbw[p], 6, a);
        float_str(row->busbw[p], 6, b);
        if (row->wrong[p] >= 0)
            fprintf(f, "  %7s  %6s  %6s  %6g", t, a, b, (double)row->wrong[p]);
        else
            fprintf(f, "  %7s  %6s  %6s    N/A", t, a, b);
    }
    if (o->extra_columns) {
        char nch[16];
        if (row->nchannels > 0)
            snprintf(nch, sizeof nch, "%d", row->nchannels);
        else
            strcpy(nch, "-");
        fprintf(f, "  %13s  %6s  %4s  %s", row->algo[0] ? row->algo : "-", row->proto[0] ? row->proto : "-", nch,
                row->transport[0] ? row->transport : "-");
    }
    fputc('\n', f);
}

void cs_write_table_footer(FILE *f, const cs_result_t *r, guint first_note)
{
    /* what was noted after the header went out, under the rows */
    for (guint i = first_note; i < r->notes->len; i++)
        fprintf(f, "# %s\n", (const char *)g_ptr_array_index(r->notes, i));
    long wrong = 0;
    gboolean checked = FALSE;
    for (guint i = 0; i < r->rows->len; i++) {
        const cs_result_row_t *row = &g_array_index(r->rows, cs_result_row_t, i);
        for (int p = 0; p < 2; p++) {
            if (row->wrong[p] >= 0) {
                checked = TRUE;
                /* nccl-tests counts the timed runs with wrong elements, not
                 * the elements (common.cu CheckData: errors[0]++). */
                wrong += row->wrong[p] > 0;
            }
        }
    }
    if (checked)
        fprintf(f, "# %-20s : %ld %s\n", "Out of bounds values", wrong, wrong ? "FAILED" : "OK");
    else
        fprintf(f, "# %-20s : %s\n", "Out of bounds values", "N/A");
    /* nccl-tests leaves the verdict empty unless NCCL_TESTS_MIN_BW is set,
     * hence the trailing space. */
    fprintf(f, "# %-20s : %g %s\n", "Avg bus bandwidth", r->avg_busbw, "");
    fprintf(f, "#\n");
    fprintf(f, "# Collective test concluded: %s\n", cs_coll_test_name(r->coll));
    fprintf(f, "#\n");
}

void cs_write_table(FILE *f, const cs_result_t *r, const cs_table_opts_t *o)
{
    cs_write_table_header(f, r, o);
    for (guint i = 0; i < r->rows->len; i++)
        cs_write_table_row(f, r, i, o);
    cs_write_table_footer(f, r, r->notes->len);
}
