/* A workload's step as a table, JSON and an SVG timeline (cs_write_step.h). */
#include "config.h"

#include <math.h>
#include <string.h>

#include "io/cs_svg.h"
#include "io/cs_write_step.h"
#include "io/cs_writers-int.h"
#include "util/cs_units.h"

static const char *mode_name(const cs_wl_plan_t *p)
{
    return p->mode == CS_WL_INFER ? "inference, one token" : "training, one step";
}

static const char *dp_name(const cs_wl_spec_t *s)
{
    return s->shard == CS_WL_SHARD_FULL ? "FSDP (full shard)" : "DDP";
}

static char *algo_text(const cs_decision_t *d)
{
    if (d->nchannels <= 0)
        return g_strdup("-");
    return g_strdup_printf("%s/%s/%d", cs_algo_name(d->algo), cs_proto_name(d->proto), d->nchannels);
}

/* Shortest TP all-reduce-like call of the step: what an inference
 * latency target is about. */
static const cs_step_call_t *tp_call(const cs_step_result_t *r)
{
    const cs_step_call_t *best = NULL;
    for (int i = 0; i < r->ncalls; i++)
        if (r->calls[i].group == CS_WL_GROUP_TP && (best == NULL || r->calls[i].calls > best->calls))
            best = &r->calls[i];
    return best;
}

static const char *verdict(double t, double target)
{
    return t <= target ? "met" : "missed";
}

gboolean cs_write_step_targets_met(const cs_step_report_t *rep)
{
    const cs_wl_spec_t *s = rep->spec;
    const cs_step_call_t *tp = tp_call(rep->r);
    if (s->target_allreduce_s > 0 && tp != NULL && tp->mean_s > s->target_allreduce_s)
        return FALSE;
    return !(s->target_token_s > 0 && rep->r->step_s > s->target_token_s);
}

void cs_write_step_table(FILE *f, const cs_step_report_t *rep, gboolean ops)
{
    const cs_wl_spec_t *s = rep->spec;
    const cs_wl_plan_t *p = rep->plan;
    const cs_step_result_t *r = rep->r;
    const cs_wl_model_t *m = &s->model;
    fprintf(f, "# collsim step: %s, %s (%s)\n", m->name, mode_name(p), rep->producer);
    if (rep->title != NULL)
        fprintf(f, "# %s\n", rep->title);
    if (rep->topo_desc != NULL)
        fprintf(f, "# topology: %s\n", rep->topo_desc);
    fprintf(f, "# model: %s, %.4g parameters", m->name, cs_wl_model_params(m));
    if (m->hidden > 0)
        fprintf(f, ", %d layers, hidden %d", m->layers, m->hidden);
    if (m->experts > 0)
        fprintf(f, ", %d experts (top-%d)", m->experts, m->top_k);
    fprintf(f, " (%s); %s\n", m->source != NULL ? m->source : "given", cs_dtype_name(p->dtype));
    fprintf(f, "# parallelism: %d GPUs = tp %d x pp %d x dp %d", p->world, p->tp, p->pp, p->dp);
    if (p->ep > 1)
        fprintf(f, " (ep %d within dp)", p->ep);
    if (p->mode == CS_WL_TRAIN) {
        fprintf(f, "; %s", dp_name(s));
        if (s->shard == CS_WL_SHARD_NONE && p->dp > 1)
            fprintf(f, ", buckets of %g MiB (the first 1 MiB)", s->bucket_cap_mb);
        fprintf(f, "\n# batch: %d micro-batch%s of %d x %d tokens per DP rank", s->micro_batches,
                s->micro_batches == 1 ? "" : "es", s->micro_batch, s->seq_len);
        if (p->pp > 1)
            fprintf(f, ", %s schedule", s->pp_sched == CS_WL_PP_GPIPE ? "GPipe" : "1F1B");
        fprintf(f, "\n");
    } else {
        fprintf(f, "\n# batch: %d sequence%s, %d tokens of context\n", s->batch, s->batch == 1 ? "" : "s",
                s->context > 0 ? s->context : s->seq_len);
    }
    if (rep->gpu_flops > 0 && s->layer_fwd_s <= 0)
        fprintf(f, "# compute: %.1f TFLOP/s per GPU (%s); %.4g TFLOP per GPU per %s\n", rep->gpu_flops / 1e12,
                rep->compute_src, p->flops_per_gpu / 1e12, p->mode == CS_WL_INFER ? "token" : "step");
    else if (s->layer_fwd_s > 0 && rep->gpu_flops > 0)
        fprintf(f, "# compute: forward %.4g ms per layer per micro-batch as given, backward twice that; the rest at "
                   "%.1f TFLOP/s per GPU (%s)\n", s->layer_fwd_s * 1e3, rep->gpu_flops / 1e12, rep->compute_src);
    else
        fprintf(f, "# compute: %s\n", rep->compute_src);
    for (int g = 0; g < CS_WL_NGROUPS; g++)
        if (r->transport[g] != NULL)
            fprintf(f, "# transports, %s: %s\n", cs_wl_group_name((cs_wl_group_t)g), r->transport[g]);
    for (int i = 0; rep->warnings != NULL && rep->warnings[i] != NULL; i++)
        fprintf(f, "# warning: %s\n", rep->warnings[i]);
    for (int i = 0; r->notes != NULL && r->notes[i] != NULL; i++)
        fprintf(f, "# note: %s\n", r->notes[i]);
    fprintf(f, "#\n");
    fprintf(f, "# %-5s %-14s %10s %6s %6s %12s %12s %10s %8s  %s\n", "group", "collective", "size", "ranks", "calls",
            "time/call", "alone", "total", "busbw", "algo/proto/nch");
    fprintf(f, "# %-5s %-14s %10s %6s %6s %12s %12s %10s %8s\n", "", "", "(B)", "", "", "(us)", "(us)", "(ms)",
            "(GB/s)");
    for (int i = 0; i < r->ncalls; i++) {
        const cs_step_call_t *c = &r->calls[i];
        g_autofree char *algo = algo_text(&c->decision);
        /* calls of one kind on communicators of two shapes are two rows:
         * say which is which */
        gboolean shapes = FALSE;
        for (int k = 0; k < r->ncalls && !shapes; k++)
            shapes = k != i && r->calls[k].group == c->group && r->calls[k].coll == c->coll &&
                     r->calls[k].size == c->size && r->calls[k].group_nodes != c->group_nodes;
        g_autofree char *where = !shapes ? g_strdup("")
                                 : c->group_nodes <= 1 ? g_strdup("  (communicators inside a node)")
                                 : g_strdup_printf("  (communicators across %d nodes)", c->group_nodes);
        fprintf(f, "  %-5s %-14s %10" G_GUINT64_FORMAT " %6d %6d %12.2f %12.2f %10.3f %8.2f  %s%s\n",
                cs_wl_group_name(c->group), cs_coll_name(c->coll), c->size, c->group_size, c->calls, c->mean_s * 1e6,
                c->alone_s * 1e6, c->total_s * 1e3, c->busbw, algo, where);
    }
    if (r->ncalls == 0)
        fprintf(f, "  (no communication: every group has one GPU)\n");
    fprintf(f, "#\n");
    const char *what = p->mode == CS_WL_INFER ? "token latency" : "step time";
    fprintf(f, "# %-24s %12.3f ms\n", what, r->step_s * 1e3);
    fprintf(f, "#   %-22s %12.3f ms  (", "compute", r->compute_s * 1e3);
    gboolean first = TRUE;
    for (int ph = 0; ph < CS_WL_NPHASES; ph++) {
        if (r->phase_s[ph] <= 0)
            continue;
        fprintf(f, "%s%s %.3f", first ? "" : ", ", cs_wl_phase_name((cs_wl_phase_t)ph), r->phase_s[ph] * 1e3);
        first = FALSE;
    }
    fprintf(f, "%s)\n", first ? "none" : "");
    double comm = 0;
    for (int g = 0; g < CS_WL_NGROUPS; g++)
        comm += r->comm_s[g];
    fprintf(f, "#   %-22s %12.3f ms  (", "communication", comm * 1e3);
    first = TRUE;
    for (int g = 0; g < CS_WL_NGROUPS; g++) {
        if (r->comm_s[g] <= 0)
            continue;
        fprintf(f, "%s%s %.3f", first ? "" : ", ", cs_wl_group_name((cs_wl_group_t)g), r->comm_s[g] * 1e3);
        first = FALSE;
    }
    fprintf(f, "%s; each group's busiest communicator)\n", first ? "none" : "");
    /* The communication line counts one rank's communicators; a pipeline's
     * critical path runs through every stage, so what it exposes can be
     * more than any one rank's calls take: say so rather than leave the
     * two lines contradicting each other. */
    gboolean across = p->pp > 1 && r->exposed_s > comm * (1 + 1e-9);
    fprintf(f, "#   %-22s %12.3f ms  (%.1f%% of the %s: the %s less the same plan with free communication%s)\n",
            "exposed communication", r->exposed_s * 1e3, r->step_s > 0 ? 100 * r->exposed_s / r->step_s : 0.0,
            p->mode == CS_WL_INFER ? "token" : "step", p->mode == CS_WL_INFER ? "token" : "step",
            across ? "; more than the communication line, which counts one communicator of each group: the "
                     "critical path crosses the calls of several pipeline stages" : "");
    if (p->pp > 1)
        fprintf(f, "#   %-22s %12.3f ms  (idle with free communication)\n", "pipeline bubble", r->bubble_s * 1e3);
    if (r->step_s > 0) {
        if (p->mode == CS_WL_INFER)
            fprintf(f, "# %-24s %12.1f tokens/s (%g sequence%s / token latency)\n", "throughput",
                    p->tokens / r->step_s, p->tokens, p->tokens == 1 ? "" : "s");
        else if (s->model.hidden <= 0)   /* a model by its size or layers: no tokens, samples */
            fprintf(f, "# %-24s %12.0f samples/s (%g samples per step: micro-batch x micro-batches x dp)\n",
                    "throughput", p->tokens / s->seq_len / r->step_s, p->tokens / s->seq_len);
        else if (s->layer_fwd_s > 0 || p->flops_per_gpu <= 0)
            fprintf(f, "# %-24s %12.0f tokens/s (%g tokens per step)\n", "throughput", p->tokens / r->step_s,
                    p->tokens);
        else
            fprintf(f, "# %-24s %12.0f tokens/s (%g tokens per step); %.1f TFLOP/s per GPU achieved\n", "throughput",
                    p->tokens / r->step_s, p->tokens, p->flops_per_gpu / r->step_s / 1e12);
    }
    const cs_step_call_t *tp = tp_call(r);
    if (s->target_allreduce_s > 0 && tp != NULL) {
        g_autofree char *sz = cs_format_size(tp->size);
        fprintf(f, "# %-24s %12.3f ms  per TP %s of %s: target %.3f ms %s\n", "target per all-reduce",
                tp->mean_s * 1e3, cs_coll_name(tp->coll), sz, s->target_allreduce_s * 1e3,
                verdict(tp->mean_s, s->target_allreduce_s));
    }
    if (s->target_token_s > 0)
        fprintf(f, "# %-24s %12.3f ms  %s: target %.3f ms %s\n", "target per token", r->step_s * 1e3, what,
                s->target_token_s * 1e3, verdict(r->step_s, s->target_token_s));
    if (ops) {
        fprintf(f, "#\n# %5s %5s %-9s %-28s %12s %12s %12s %5s\n", "op", "stage", "phase", "what", "start(us)",
                "end(us)", "length(us)", "inst");
        for (int i = 0; i < p->nops; i++) {
            const cs_wl_op_t *op = &p->ops[i];
            const cs_step_op_t *o = &r->ops[i];
            fprintf(f, "  %5d %5d %-9s %-28s %12.2f %12.2f %12.2f %5d\n", i, op->stage,
                    cs_wl_phase_name(op->phase), op->label != NULL ? op->label : "", o->start_s * 1e6,
                    o->end_s * 1e6, o->mean_s * 1e6, o->instances);
        }
    }
    fprintf(f, "# All times: %s%s.\n", rep->producer,
            r->together ? ", every call run together with the others" : ", each call priced alone");
}

/* ---- JSON ---------------------------------------------------------------------- */

static void json_str(GString *g, const char *key, const char *v)
{
    g_string_append_printf(g, "\"%s\": ", key);
    cs_write_append_json_string(g, v);
}

char *cs_write_step_json(const cs_step_report_t *rep)
{
    const cs_wl_spec_t *s = rep->spec;
    const cs_wl_plan_t *p = rep->plan;
    const cs_step_result_t *r = rep->r;
    GString *g = g_string_new("{\n  ");
    json_str(g, "producer", rep->producer);
    g_string_append(g, ",\n  ");
    json_str(g, "title", rep->title);
    g_string_append(g, ",\n  ");
    json_str(g, "topology", rep->topo_desc);
    g_string_append(g, ",\n  \"workload\": {");
    json_str(g, "mode", p->mode == CS_WL_INFER ? "infer" : "train");
    g_string_append(g, ", ");
    json_str(g, "model", s->model.name);
    g_string_append(g, ", ");
    json_str(g, "source", s->model.source);
    g_string_append(g, ", ");
    cs_write_append_json_num(g, "params", cs_wl_model_params(&s->model));
    g_string_append(g, ", ");
    json_str(g, "precision", cs_dtype_name(p->dtype));
    g_string_append_printf(g, ", \"world\": %d, \"tp\": %d, \"pp\": %d, \"dp\": %d, \"ep\": %d, ", p->world, p->tp,
                           p->pp, p->dp, p->ep);
    json_str(g, "data_parallel", s->shard == CS_WL_SHARD_FULL ? "fsdp" : "ddp");
    g_string_append(g, ", ");
    cs_write_append_json_num(g, "gpu_flops", rep->gpu_flops);
    g_string_append(g, ", ");
    json_str(g, "compute_source", rep->compute_src);
    g_string_append(g, ", ");
    cs_write_append_json_num(g, "flops_per_gpu", p->flops_per_gpu);
    g_string_append(g, ", ");
    cs_write_append_json_num(g, "tokens", p->tokens);
    g_string_append(g, ", ");
    cs_write_append_json_num(g, "memory_per_gpu_bytes", p->mem_bytes);
    g_string_append(g, "},\n  \"summary\": {");
    cs_write_append_json_num(g, "step_s", r->step_s);
    g_string_append(g, ", ");
    cs_write_append_json_num(g, "compute_s", r->compute_s);
    g_string_append(g, ", ");
    cs_write_append_json_num(g, "free_s", r->free_s);
    g_string_append(g, ", ");
    cs_write_append_json_num(g, "exposed_s", r->exposed_s);
    g_string_append(g, ", ");
    cs_write_append_json_num(g, "bubble_s", r->bubble_s);
    for (int ph = 0; ph < CS_WL_NPHASES; ph++) {
        g_autofree char *k = g_strdup_printf("compute_%s_s", cs_wl_phase_name((cs_wl_phase_t)ph));
        g_string_append(g, ", ");
        cs_write_append_json_num(g, k, r->phase_s[ph]);
    }
    for (int gi = 0; gi < CS_WL_NGROUPS; gi++) {
        g_autofree char *k = g_ascii_strdown(cs_wl_group_name((cs_wl_group_t)gi), -1);
        g_autofree char *kk = g_strdup_printf("comm_%s_s", k);
        g_string_append(g, ", ");
        cs_write_append_json_num(g, kk, r->comm_s[gi]);
    }
    g_string_append_printf(g, ", \"together\": %s", r->together ? "true" : "false");
    if (s->target_allreduce_s > 0) {
        g_string_append(g, ", ");
        cs_write_append_json_num(g, "target_allreduce_s", s->target_allreduce_s);
    }
    if (s->target_token_s > 0) {
        g_string_append(g, ", ");
        cs_write_append_json_num(g, "target_token_s", s->target_token_s);
    }
    for (int gi = 0; gi < CS_WL_NGROUPS; gi++) {
        if (r->transport[gi] == NULL)
            continue;
        g_autofree char *k = g_ascii_strdown(cs_wl_group_name((cs_wl_group_t)gi), -1);
        g_autofree char *kk = g_strdup_printf("transport_%s", k);
        g_string_append(g, ", ");
        json_str(g, kk, r->transport[gi]);
    }
    g_string_append(g, "},\n  \"calls\": [");
    for (int i = 0; i < r->ncalls; i++) {
        const cs_step_call_t *c = &r->calls[i];
        g_string_append(g, i > 0 ? ",\n    {" : "\n    {");
        json_str(g, "group", cs_wl_group_name(c->group));
        g_string_append(g, ", ");
        json_str(g, "collective", cs_coll_name(c->coll));
        g_string_append_printf(g, ", \"size\": %" G_GUINT64_FORMAT ", \"ranks\": %d, \"nodes\": %d, \"calls\": %d, ",
                               c->size, c->group_size, MAX(1, c->group_nodes), c->calls);
        cs_write_append_json_num(g, "time_s", c->mean_s);
        g_string_append(g, ", ");
        cs_write_append_json_num(g, "alone_s", c->alone_s);
        g_string_append(g, ", ");
        cs_write_append_json_num(g, "total_s", c->total_s);
        g_string_append(g, ", ");
        cs_write_append_json_num(g, "busbw_gbps", c->busbw);
        if (c->decision.nchannels > 0) {
            g_string_append(g, ", ");
            json_str(g, "algo", cs_algo_name(c->decision.algo));
            g_string_append(g, ", ");
            json_str(g, "proto", cs_proto_name(c->decision.proto));
            g_string_append_printf(g, ", \"nchannels\": %d", c->decision.nchannels);
        }
        g_string_append(g, "}");
    }
    g_string_append(g, r->ncalls > 0 ? "\n  ],\n  \"ops\": [" : "],\n  \"ops\": [");
    for (int i = 0; i < p->nops; i++) {
        const cs_wl_op_t *op = &p->ops[i];
        const cs_step_op_t *o = &r->ops[i];
        g_string_append(g, i > 0 ? ",\n    {" : "\n    {");
        json_str(g, "label", op->label);
        g_string_append(g, ", ");
        json_str(g, "kind", op->kind == CS_WL_COMPUTE ? "compute" : "comm");
        g_string_append(g, ", ");
        json_str(g, "phase", cs_wl_phase_name(op->phase));
        g_string_append_printf(g, ", \"stage\": %d, \"micro\": %d", op->stage, op->micro);
        if (op->kind == CS_WL_COMM) {
            g_string_append(g, ", ");
            json_str(g, "group", cs_wl_group_name(op->group));
            g_string_append(g, ", ");
            json_str(g, "collective", cs_coll_name(op->coll));
            g_string_append_printf(g, ", \"size\": %" G_GUINT64_FORMAT, op->size);
        }
        g_string_append(g, ", ");
        cs_write_append_json_num(g, "start_s", o->start_s);
        g_string_append(g, ", ");
        cs_write_append_json_num(g, "end_s", o->end_s);
        g_string_append(g, ", ");
        cs_write_append_json_num(g, "length_s", o->mean_s);
        g_string_append_printf(g, ", \"instances\": %d}", o->instances);
    }
    g_string_append(g, p->nops > 0 ? "\n  ],\n  \"notes\": [" : "],\n  \"notes\": [");
    for (int i = 0; r->notes != NULL && r->notes[i] != NULL; i++) {
        g_string_append(g, i > 0 ? ",\n    " : "\n    ");
        cs_write_append_json_string(g, r->notes[i]);
    }
    g_string_append(g, r->notes != NULL && r->notes[0] != NULL ? "\n  ],\n  \"warnings\": [" : "],\n  \"warnings\": [");
    /* what the header's "# warning:" lines say (a plan that does not fit,
     * a TP group across nodes, NCCL variables): a reader of the JSON is
     * told as much as one of the text */
    for (int i = 0; rep->warnings != NULL && rep->warnings[i] != NULL; i++) {
        g_string_append(g, i > 0 ? ",\n    " : "\n    ");
        cs_write_append_json_string(g, rep->warnings[i]);
    }
    g_string_append(g, rep->warnings != NULL && rep->warnings[0] != NULL ? "\n  ]\n}\n" : "]\n}\n");
    return g_string_free(g, FALSE);
}

/* ---- SVG timeline -------------------------------------------------------------- */

#define SVG_W 1000.0
#define SVG_LEFT 170.0
#define SVG_RIGHT 20.0
#define SVG_ROW 22.0
#define SVG_TOP 60.0

/* A row per stage and stream: compute, then each group kind. */
static int op_row(const cs_wl_op_t *op)
{
    int k = op->kind == CS_WL_COMPUTE ? 0 : 1 + (int)op->group;
    return op->stage * (1 + CS_WL_NGROUPS) + k;
}

static const char *phase_colour(cs_wl_phase_t ph)
{
    static const char *const c[CS_WL_NPHASES] = { "#4e79a7", "#59a14f", "#e15759", "#b07aa1", "#4e79a7" };
    return c[ph];
}

static const char *group_colour(cs_wl_group_t g)
{
    static const char *const c[CS_WL_NGROUPS] = { "#f28e2b", "#76b7b2", "#e15759", "#edc948", "#ff9da7" };
    return c[g];
}

static void svg_text(GString *g, double x, double y, const char *anchor, const char *size, const char *text)
{
    g_autofree char *e = cs_svg_escape(text);
    g_string_append_printf(g, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%s\">%s</text>\n", x, y,
                           anchor, size, e);
}

char *cs_write_step_svg(const cs_step_report_t *rep)
{
    const cs_wl_plan_t *p = rep->plan;
    const cs_step_result_t *r = rep->r;
    int nrows_all = p->pp * (1 + CS_WL_NGROUPS);
    g_autofree int *used = g_new0(int, nrows_all);
    for (int i = 0; i < p->nops; i++)
        used[op_row(&p->ops[i])] = 1;
    g_autofree int *pos = g_new0(int, nrows_all);
    int nrows = 0;
    for (int i = 0; i < nrows_all; i++)
        pos[i] = used[i] ? nrows++ : -1;
    double h = SVG_TOP + MAX(1, nrows) * SVG_ROW + 70;
    double span = r->step_s > 0 ? r->step_s : 1;
    double plot_w = SVG_W - SVG_LEFT - SVG_RIGHT;
    GString *g = g_string_new(NULL);
    g_string_append_printf(g, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                              "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\">\n", SVG_W, h, SVG_W, h);
    g_string_append_printf(g, "<rect width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", SVG_W, h);
    g_autofree char *title = g_strdup_printf("%s: %s, %.3f ms (%s)", rep->spec->model.name, mode_name(p),
                                             r->step_s * 1e3, rep->producer);
    svg_text(g, SVG_W / 2, 22, "middle", "15", title);
    g_autofree char *sub = g_strdup_printf("%d GPUs = tp %d x pp %d x dp %d; compute %.3f ms, exposed communication "
                                           "%.3f ms", p->world, p->tp, p->pp, p->dp, r->compute_s * 1e3,
                                           r->exposed_s * 1e3);
    svg_text(g, SVG_W / 2, 40, "middle", "11", sub);
    for (int row = 0; row < nrows_all; row++) {
        if (pos[row] < 0)
            continue;
        int stage = row / (1 + CS_WL_NGROUPS), k = row % (1 + CS_WL_NGROUPS);
        g_autofree char *label = k == 0 ? g_strdup("compute") : g_strdup_printf("%s comm", cs_wl_group_name(k - 1));
        g_autofree char *full = p->pp > 1 ? g_strdup_printf("stage %d %s", stage, label) : g_strdup(label);
        double y = SVG_TOP + pos[row] * SVG_ROW;
        svg_text(g, SVG_LEFT - 6, y + SVG_ROW * 0.65, "end", "11", full);
        g_string_append_printf(g, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", SVG_LEFT,
                               y + SVG_ROW, SVG_W - SVG_RIGHT, y + SVG_ROW);
    }
    for (int i = 0; i < p->nops; i++) {
        const cs_wl_op_t *op = &p->ops[i];
        const cs_step_op_t *o = &r->ops[i];
        if (o->end_s <= o->start_s)
            continue;
        double x0 = SVG_LEFT + plot_w * o->start_s / span, x1 = SVG_LEFT + plot_w * o->end_s / span;
        double y = SVG_TOP + pos[op_row(op)] * SVG_ROW + 3;
        const char *fill = op->kind == CS_WL_COMPUTE ? phase_colour(op->phase) : group_colour(op->group);
        g_autofree char *tip = cs_svg_escape(op->label);
        g_string_append_printf(g, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\" "
                                  "fill-opacity=\"0.8\" stroke=\"white\" stroke-width=\"0.3\"><title>%s: %.2f to %.2f us"
                                  "</title></rect>\n", x0, y, MAX(0.3, x1 - x0), SVG_ROW - 6, fill, tip,
                               o->start_s * 1e6, o->end_s * 1e6);
    }
    /* time axis: five ticks */
    double ya = SVG_TOP + nrows * SVG_ROW + 6;
    g_string_append_printf(g, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", SVG_LEFT, ya,
                           SVG_W - SVG_RIGHT, ya);
    for (int t = 0; t <= 4; t++) {
        double x = SVG_LEFT + plot_w * t / 4;
        g_autofree char *lab = g_strdup_printf("%.3f ms", span * t / 4 * 1e3);
        g_string_append_printf(g, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", x, ya, x,
                               ya + 4);
        svg_text(g, x, ya + 16, "middle", "10", lab);
    }
    g_autofree char *cap = g_strdup_printf("%s; %s. Bars: an op from its first instance's start to its last one's end.",
                                           rep->producer,
                                           r->together ? "every call run together" : "each call priced alone");
    svg_text(g, SVG_W / 2, h - 12, "middle", "10", cap);
    g_string_append(g, "</svg>\n");
    return g_string_free(g, FALSE);
}
