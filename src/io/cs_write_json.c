/* Results as JSON: every field of every row, keys in a fixed order, numbers
 * in the shortest form that reads back to the same double, and null for
 * what is missing (a placement not run, an unchecked #wrong, an unknown
 * algorithm). Also the file writes the writers share (cs_output.c). */
#include "config.h"
#include "io/cs_writers.h"
#include "io/cs_writers-int.h"
#include "io/cs_output.h"
#include "util/cs_error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void cs_write_append_json_string(GString *g, const char *s)
{
    if (s == NULL) {
        g_string_append(g, "null");
        return;
    }
    g_string_append_c(g, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': g_string_append(g, "\\\""); break;
        case '\\': g_string_append(g, "\\\\"); break;
        case '\n': g_string_append(g, "\\n"); break;
        case '\r': g_string_append(g, "\\r"); break;
        case '\t': g_string_append(g, "\\t"); break;
        default:
            if (*p < 0x20)
                g_string_append_printf(g, "\\u%04x", *p);
            else
                g_string_append_c(g, (char)*p);
        }
    }
    g_string_append_c(g, '"');
}

static void json_str(GString *g, const char *s)
{
    cs_write_append_json_string(g, s);
}

void cs_write_append_number(GString *g, double v)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    for (int prec = 1; prec <= 17; prec++) {
        char fmt[8];
        snprintf(fmt, sizeof fmt, "%%.%dg", prec);
        g_ascii_formatd(buf, sizeof buf, fmt, v);
        if (g_ascii_strtod(buf, NULL) == v)
            break;
    }
    g_string_append(g, buf);
}

static void json_num(GString *g, double v)
{
    if (isfinite(v))
        cs_write_append_number(g, v);
    else
        g_string_append(g, "null");
}

/* A value < 0 means "none" in result rows. */
static void json_num_or_null(GString *g, double v)
{
    if (v < 0)
        g_string_append(g, "null");
    else
        json_num(g, v);
}

static void json_placement(GString *g, const cs_result_row_t *row, int p)
{
    if (row->time_us[p] < 0) {
        g_string_append(g, "null");
        return;
    }
    g_string_append(g, "{\"time_us\": ");
    json_num(g, row->time_us[p]);
    g_string_append(g, ", \"algbw\": ");
    json_num_or_null(g, row->algbw[p]);
    g_string_append(g, ", \"busbw\": ");
    json_num_or_null(g, row->busbw[p]);
    g_string_append(g, ", \"wrong\": ");
    if (row->wrong[p] >= 0)
        g_string_append_printf(g, "%ld", row->wrong[p]);
    else
        g_string_append(g, "null");
    g_string_append_c(g, '}');
}

static void json_u64(GString *g, const char *key, guint64 v)
{
    g_string_append_printf(g, "\"%s\": %" G_GUINT64_FORMAT, key, v);
}

/* A packet engine's counters of one call (cs_net_counters_t). */
void cs_write_json_network(GString *g, const cs_net_counters_t *c)
{
    g_string_append(g, ", \"network\": {");
    g_string_append_printf(g, "\"fabric\": \"%s\", ", c->credit ? "infiniband" : "roce");
    json_u64(g, "packet_events", c->packet_events);
    g_string_append(g, ", ");
    json_u64(g, "drops", c->drops);
    g_string_append(g, ", ");
    json_u64(g, "retransmitted", c->retransmitted);
    g_string_append(g, ", ");
    json_u64(g, "naks", c->naks);
    g_string_append(g, ", ");
    json_u64(g, "timeouts", c->timeouts);
    g_string_append(g, ", ");
    json_u64(g, "pause_frames", c->pause_frames);
    g_string_append(g, ", ");
    cs_write_append_json_num(g, "paused_us", c->paused_us);
    g_string_append(g, ", ");
    json_u64(g, "ecn_marks", c->ecn_marks);
    g_string_append(g, ", ");
    json_u64(g, "cnps", c->cnps);
    g_string_append(g, ", ");
    json_u64(g, "fc_packets", c->fc_packets);
    g_string_append(g, ", ");
    cs_write_append_json_num(g, "credit_starved_us", c->starved_us);
    g_string_append(g, ", ");
    json_u64(g, "ar_moves", c->ar_moves);
    if (c->ibcc) {                    /* InfiniBand congestion control: ecn_marks are its FECN marks */
        g_string_append(g, ", ");
        json_u64(g, "fecn_marks", c->ecn_marks);
        g_string_append(g, ", ");
        json_u64(g, "becns", c->becns);
        g_string_append(g, ", ");
        json_u64(g, "ccti_max", c->ccti_max);
    }
    if (c->sharp) {                   /* SHARP aggregation ran (CollNet) */
        g_string_append(g, ", ");
        json_u64(g, "sharp_reduced", c->sharp_reduced);
        g_string_append(g, ", ");
        json_u64(g, "sharp_copies_down", c->sharp_copies_down);
        g_string_append(g, ", ");
        json_u64(g, "sharp_held_max", c->sharp_held_max);
        g_string_append(g, ", \"sharp_switches\": [");
        for (int i = 0; i < c->nsharp; i++) {
            const cs_net_sharp_counters_t *a = &c->sharp_switches[i];
            g_string_append(g, i ? ",\n      {\"name\": " : "\n      {\"name\": ");
            json_str(g, a->name);
            g_string_append(g, ", ");
            json_u64(g, "reduced", a->reduced);
            g_string_append(g, ", ");
            json_u64(g, "copies_down", a->copies_down);
            g_string_append(g, ", ");
            json_u64(g, "held_max", a->held_max);
            g_string_append_c(g, '}');
        }
        g_string_append_c(g, ']');
    }
    g_string_append(g, ", \"ports\": [");
    for (int i = 0; i < c->nports; i++) {
        const cs_net_port_counters_t *p = &c->ports[i];
        g_string_append(g, i ? ",\n      {\"link\": " : "\n      {\"link\": ");
        json_str(g, p->link);
        g_string_append_printf(g, ", \"prio\": %d, ", p->prio);
        json_u64(g, "tx_pkts", p->tx_pkts);
        g_string_append(g, ", ");
        json_u64(g, "pause_sent", p->pause_sent);
        g_string_append(g, ", ");
        json_u64(g, "pause_received", p->pause_received);
        g_string_append(g, ", ");
        cs_write_append_json_num(g, "paused_us", p->paused_us);
        g_string_append(g, ", ");
        json_u64(g, "ecn_marks", p->ecn_marks);
        g_string_append(g, ", ");
        json_u64(g, "drops", p->drops);
        g_string_append(g, ", ");
        cs_write_append_json_num(g, "queue_max_bytes", p->queue_max_bytes);
        g_string_append(g, ", ");
        cs_write_append_json_num(g, "queue_avg_bytes", p->queue_avg_bytes);
        g_string_append(g, ", ");
        json_u64(g, "fc_sent", p->fc_sent);
        g_string_append(g, ", ");
        cs_write_append_json_num(g, "credit_starved_us", p->starved_us);
        if (c->ibcc) {
            g_string_append(g, ", ");
            json_u64(g, "fecn_marks", p->ecn_marks);
            g_string_append(g, ", ");
            json_u64(g, "becns", p->becns);
            g_string_append(g, ", ");
            json_u64(g, "ccti_max", p->ccti_max);
            g_string_append(g, ", ");
            cs_write_append_json_num(g, "ccti_avg", p->ccti_avg);
        }
        g_string_append_c(g, '}');
    }
    g_string_append(g, "], \"buffers\": [");
    for (int i = 0; i < c->nbuffers; i++) {
        const cs_net_buffer_counters_t *w = &c->buffers[i];
        g_string_append(g, i ? ",\n      {\"name\": " : "\n      {\"name\": ");
        json_str(g, w->name);
        g_string_append(g, ", ");
        cs_write_append_json_num(g, "buffer_max_bytes", w->buffer_max_bytes);
        g_string_append(g, ", ");
        cs_write_append_json_num(g, "buffer_avg_bytes", w->buffer_avg_bytes);
        g_string_append_c(g, '}');
    }
    g_string_append(g, "]}");
}

char *cs_write_json(const cs_result_t *r)
{
    GString *g = g_string_new("{\n");
    g_string_append(g, "  \"producer\": ");
    json_str(g, r->producer);
    g_string_append(g, ",\n  \"source\": ");
    json_str(g, r->source);
    g_string_append(g, ",\n  \"collective\": ");
    json_str(g, cs_coll_name(r->coll));
    g_string_append(g, ",\n  \"test\": ");
    json_str(g, cs_coll_test_name(r->coll));
    g_string_append_printf(g, ",\n  \"nranks\": %d,\n  \"nnodes\": %d,\n  \"avg_busbw\": ", r->nranks, r->nnodes);
    json_num(g, r->avg_busbw);
    g_string_append(g, ",\n  \"notes\": [");
    for (guint i = 0; i < r->notes->len; i++) {
        g_string_append(g, i ? ", " : "");
        json_str(g, g_ptr_array_index(r->notes, i));
    }
    g_string_append(g, "],\n  \"rows\": [");
    for (guint i = 0; i < r->rows->len; i++) {
        const cs_result_row_t *row = &g_array_index(r->rows, cs_result_row_t, i);
        g_string_append(g, i ? ",\n    " : "\n    ");
        g_string_append_printf(g, "{\"size\": %" G_GUINT64_FORMAT ", \"count\": %" G_GUINT64_FORMAT ", \"type\": ",
                               row->size, row->count);
        json_str(g, cs_dtype_name(row->dtype));
        g_string_append(g, ", \"redop\": ");
        json_str(g, cs_coll_has_redop(r->coll) ? cs_redop_name(row->redop) : "none");
        g_string_append_printf(g, ", \"root\": %d, \"out_of_place\": ", row->root);
        json_placement(g, row, CS_OOP);
        g_string_append(g, ", \"in_place\": ");
        json_placement(g, row, CS_INP);
        g_string_append(g, ", \"algo\": ");
        json_str(g, row->algo[0] ? row->algo : NULL);
        g_string_append(g, ", \"proto\": ");
        json_str(g, row->proto[0] ? row->proto : NULL);
        g_string_append(g, ", \"nchannels\": ");
        if (row->nchannels > 0)
            g_string_append_printf(g, "%d", row->nchannels);
        else
            g_string_append(g, "null");
        g_string_append(g, ", \"transport\": ");
        json_str(g, row->transport[0] ? row->transport : NULL);
        g_string_append(g, ", \"nccl_est_us\": ");
        json_num_or_null(g, row->nccl_est_us);
        if (r->net != NULL && i < r->net->len && g_ptr_array_index(r->net, i) != NULL)
            cs_write_json_network(g, g_ptr_array_index(r->net, i));
        g_string_append_c(g, '}');
    }
    g_string_append(g, r->rows->len ? "\n  ]\n}\n" : "]\n}\n");
    return g_string_free(g, FALSE);
}

/* The atomic write is cs_output.c's: a regular file through a temporary
 * file renamed when written, devices and FIFOs in place, symlinks
 * followed, modes kept (several files at once: cs_output_write). */
gboolean cs_write_file_atomic(const char *path, const char *data, gssize len, GError **err)
{
    return cs_output_write_one(path, data, len, err);
}

gboolean cs_write_json_file(const char *path, const cs_result_t *r, GError **err)
{
    g_autofree char *data = cs_write_json(r);
    return cs_write_file_atomic(path, data, -1, err);
}
