/* The [workload] section (collsim step, docs/collsim-scenario.5): one step
 * of a parallel training job or one token of inference. Each key is also a
 * flag of collsim step. Values are checked as they are read; the preset
 * and the shape keys are resolved together at the end
 * (cs_scenario_workload_spec), so that key order does not matter. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "io/cs_scenario-int.h"
#include "util/cs_error.h"
#include "util/cs_units.h"

const cs_scenario_key_t cs_workload_keys[] = {
    { "workload", "mode", 0, "mode", NULL, "train|infer", "A training step or one generated token (default: train)" },
    { "workload", "arch", 0, "arch", NULL, "NAME", "Model preset (llama3-70b, gpt3-175b, mixtral-8x7b, ...) or custom (give the shape keys)" },
    { "workload", "params", 0, "params", NULL, "N", "Parameters of a model known only by size (DDP), e.g. 1.3e9 or 1.3B" },
    { "workload", "layers", 0, "layers", NULL, "N", "Transformer layers (over the preset's)" },
    { "workload", "layer-params", 0, "layer-params", NULL, "N,N,...", "Parameters of each layer in forward order, for a model known by its layers (DDP), e.g. 1.7K,37K,2.4M" },
    { "workload", "hidden", 0, "hidden", NULL, "N", "Hidden size d_model (over the preset's)" },
    { "workload", "ffn", 0, "ffn", NULL, "N", "MLP inner size (default: 4 x hidden)" },
    { "workload", "heads", 0, "heads", NULL, "N", "Attention heads" },
    { "workload", "kv-heads", 0, "kv-heads", NULL, "N", "Key/value heads (grouped-query attention; default: heads)" },
    { "workload", "vocab", 0, "vocab", NULL, "N", "Vocabulary size" },
    { "workload", "experts", 0, "experts", NULL, "N", "Experts per MoE layer (0: dense)" },
    { "workload", "top-k", 0, "top-k", NULL, "N", "Experts per token" },
    { "workload", "gated-mlp", 0, "gated-mlp", NULL, "on|off", "SwiGLU MLP with three matrices (default: off for custom)" },
    { "workload", "precision", 0, "precision", NULL, "bf16|fp16|fp32", "Parameters, gradients and activations (default: bf16)" },
    { "workload", "tp", 0, "tp", NULL, "N", "Tensor-parallel group size, within a node (default: 1)" },
    { "workload", "pp", 0, "pp", NULL, "N", "Pipeline stages (default: 1)" },
    { "workload", "dp", 0, "dp", NULL, "N", "Data-parallel group size (default: the GPUs left, GPUs / (tp x pp))" },
    { "workload", "ep", 0, "ep", NULL, "N", "Expert-parallel group size, within the DP group (default: 1)" },
    { "workload", "data-parallel", 0, "data-parallel", NULL, "ddp|fsdp", "How DP ranks share the model: DDP replicas or FSDP/ZeRO-3 shards (default: ddp)" },
    { "workload", "sequence-parallel", 0, "sequence-parallel", NULL, "on|off", "Megatron sequence parallelism: TP all-reduces become reduce-scatter + all-gather (default: off)" },
    { "workload", "bucket-cap-mb", 0, "bucket-cap-mb", NULL, "MB", "DDP gradient bucket cap in MiB (default: 25, PyTorch's)" },
    { "workload", "fsdp-units", 0, "fsdp-units", NULL, "N", "FSDP wrapped units (default: one per layer)" },
    { "workload", "prefetch", 0, "prefetch", NULL, "on|off", "FSDP issues the next unit's all-gather early (default: on)" },
    { "workload", "micro-batch", 0, "micro-batch", NULL, "N", "Sequences per micro-batch per DP rank (default: 1)" },
    { "workload", "seq-len", 0, "seq-len", NULL, "N", "Tokens per sequence (default: 2048)" },
    { "workload", "micro-batches", 0, "micro-batches", NULL, "N", "Micro-batches per step: gradient accumulation, pipeline (default: 1)" },
    { "workload", "pp-schedule", 0, "pp-schedule", NULL, "1f1b|gpipe", "Pipeline schedule (default: 1f1b)" },
    { "workload", "tflops", 0, "tflops", NULL, "T", "Sustained dense TFLOP/s per GPU (default: the GPU's peak x efficiency)" },
    { "workload", "efficiency", 0, "efficiency", NULL, "F", "Fraction of the GPU's peak sustained, above 0 to 1 (default: 0.5)" },
    { "workload", "layer-time", 0, "layer-time", NULL, "TIME", "Forward compute per layer per micro-batch, measured (over the FLOP count)" },
    { "workload", "batch", 0, "batch", NULL, "N", "Inference: sequences decoded together (default: 1)" },
    { "workload", "context", 0, "context", NULL, "N", "Inference: tokens in the KV cache (default: seq-len)" },
    { "workload", "target-allreduce", 0, "target-allreduce", NULL, "TIME", "Latency target per TP all-reduce, e.g. 0.5ms" },
    { "workload", "target-token", 0, "target-token", NULL, "TIME", "Latency target per token, e.g. 20ms" },
    { NULL, NULL, 0, NULL, NULL, NULL, NULL }
};

cs_scenario_workload_t *cs_scenario_workload_new(void)
{
    cs_scenario_workload_t *w = g_new0(cs_scenario_workload_t, 1);
    cs_wl_spec_init(&w->spec);
    w->text = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    w->origins = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    w->gated = -1;
    return w;
}

void cs_scenario_workload_free(cs_scenario_workload_t *w)
{
    if (w == NULL)
        return;
    g_free((gpointer)w->shape.layer_params);   /* owned here (set_value); the spec borrows it */
    g_free(w->arch);
    g_hash_table_unref(w->text);
    g_hash_table_unref(w->origins);
    g_free(w);
}

/* "1.3e9", "1.3B", "175B", "7M", "350000000": a count of parameters from
 * min to 1e15. */
static gboolean parse_count_suffix(const char *v, double min, double *out_p)
{
    g_autofree char *s = g_strstrip(g_strdup(v));
    size_t n = strlen(s);
    double mult = 1;
    if (n > 0 && strchr("kKmMbBtT", s[n - 1]) != NULL) {
        char c = g_ascii_toupper(s[n - 1]);
        mult = c == 'K' ? 1e3 : c == 'M' ? 1e6 : c == 'B' ? 1e9 : 1e12;
        s[n - 1] = '\0';
    }
    double x;
    if (!cs_parse_double(s, &x) || !isfinite(x) || x * mult < min || x * mult > 1e15)
        return FALSE;
    *out_p = x * mult;
    return TRUE;
}

static gboolean parse_params(const char *v, double *out_p)
{
    return parse_count_suffix(v, 1e3, out_p);
}

#define MAX_LAYERS 10000   /* as the layers key */

/* "1.7K, 0, 37K,2.4M": parameters per layer in forward order (a layer
 * without parameters, a pooling say, counts 0); at least one above 0. */
static gboolean parse_layer_params(const char *v, double **out_p, int *n_p, GError **err)
{
    g_auto(GStrv) parts = g_strsplit(v, ",", -1);
    int n = (int)g_strv_length(parts);
    g_autofree double *x = g_new(double, MAX(n, 1));
    const char *why = NULL;
    g_autofree char *at = NULL;
    double sum = 0;
    if (n > MAX_LAYERS)
        why = at = g_strdup_printf("%d layers, over %d", n, MAX_LAYERS);
    for (int i = 0; i < n && why == NULL; i++) {
        if (!parse_count_suffix(parts[i], 0, &x[i]))
            why = at = g_strdup_printf("layer %d is '%s'", i, g_strstrip(parts[i]));
        else
            sum += x[i];
    }
    if (why == NULL && !(sum >= 1))
        why = "no layer has parameters";
    if (why != NULL) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "'%s' is not a list of parameter counts (%s); expected one count "
                    "per layer in forward order, 0 to 1e15 each, comma-separated, such as 1.7K,0,37K,2.4M", v, why);
        return FALSE;
    }
    *out_p = g_steal_pointer(&x);
    *n_p = n;
    return TRUE;
}

static gboolean count(const char *v, gint64 min, gint64 max, const char *what, int *out_p, GError **err)
{
    return cs_scenario_parse_count(v, min, max, what, out_p, err);
}

static gboolean onoff(const char *v, gboolean *out_p, GError **err)
{
    if (cs_scenario_parse_bool(v, out_p))
        return TRUE;
    g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "'%s' is not a truth value; expected on or off", v);
    return FALSE;
}

static gboolean time_key(const char *v, double max, const char *what, double *out_p, GError **err)
{
    double t, bare;
    if (cs_parse_double(v, &bare) && bare != 0) {
        /* a bare number would be seconds: 0.5 read as 500 ms "met" */
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "'%s' has no unit; expected %s with its unit, such as %sms", v,
                    what, v);
        return FALSE;
    }
    if (!cs_parse_time(v, &t) || t <= 0 || t > max) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "'%s' is not %s; expected a positive time such as 0.5ms", v, what);
        return FALSE;
    }
    *out_p = t;
    return TRUE;
}

static gboolean set_value(cs_scenario_workload_t *w, const char *key, const char *v, GError **err)
{
    cs_wl_spec_t *s = &w->spec;
    cs_wl_model_t *m = &w->shape;
    if (strcmp(key, "mode") == 0) {
        if (g_ascii_strcasecmp(v, "train") == 0)
            s->mode = CS_WL_TRAIN;
        else if (g_ascii_strcasecmp(v, "infer") == 0 || g_ascii_strcasecmp(v, "inference") == 0)
            s->mode = CS_WL_INFER;
        else
            goto bad_choice;
    } else if (strcmp(key, "arch") == 0) {
        if (g_ascii_strcasecmp(v, "custom") != 0 && cs_wl_model_find(v) == NULL) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "unknown model '%s'; expected custom or one of %s", v,
                        cs_wl_model_names());
            return FALSE;
        }
        g_free(w->arch);
        w->arch = g_ascii_strcasecmp(v, "custom") == 0 ? NULL : g_ascii_strdown(v, -1);
    } else if (strcmp(key, "params") == 0) {
        if (!parse_params(v, &m->params)) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "'%s' is not a parameter count; expected 1e3 to 1e15, "
                        "such as 1.3e9 or 1.3B", v);
            return FALSE;
        }
    } else if (strcmp(key, "layers") == 0) {
        return count(v, 1, MAX_LAYERS, "a number of layers from 1 to 10000", &m->layers, err);
    } else if (strcmp(key, "layer-params") == 0) {
        double *lp;
        int n;
        if (!parse_layer_params(v, &lp, &n, err))
            return FALSE;
        g_free((gpointer)m->layer_params);
        m->layer_params = lp;
        m->nlayer_params = n;
    } else if (strcmp(key, "hidden") == 0) {
        return count(v, 1, 1 << 20, "a hidden size from 1 to 1048576", &m->hidden, err);
    } else if (strcmp(key, "ffn") == 0) {
        return count(v, 1, 1 << 22, "an MLP size from 1 to 4194304", &m->ffn, err);
    } else if (strcmp(key, "heads") == 0) {
        return count(v, 1, 65536, "a number of heads from 1 to 65536", &m->heads, err);
    } else if (strcmp(key, "kv-heads") == 0) {
        return count(v, 1, 65536, "a number of heads from 1 to 65536", &m->kv_heads, err);
    } else if (strcmp(key, "vocab") == 0) {
        return count(v, 1, 1 << 24, "a vocabulary size from 1 to 16777216", &m->vocab, err);
    } else if (strcmp(key, "experts") == 0) {
        return count(v, 0, 65536, "a number of experts from 0 to 65536", &m->experts, err);
    } else if (strcmp(key, "top-k") == 0) {
        return count(v, 1, 65536, "a number of experts per token from 1", &m->top_k, err);
    } else if (strcmp(key, "gated-mlp") == 0) {
        gboolean b;
        if (!onoff(v, &b, err))
            return FALSE;
        w->gated = b;
    } else if (strcmp(key, "precision") == 0) {
        if (g_ascii_strcasecmp(v, "bf16") == 0 || g_ascii_strcasecmp(v, "bfloat16") == 0)
            s->dtype = CS_DTYPE_BFLOAT16;
        else if (g_ascii_strcasecmp(v, "fp16") == 0 || g_ascii_strcasecmp(v, "half") == 0)
            s->dtype = CS_DTYPE_HALF;
        else if (g_ascii_strcasecmp(v, "fp32") == 0 || g_ascii_strcasecmp(v, "float") == 0)
            s->dtype = CS_DTYPE_FLOAT;
        else
            goto bad_choice;
    } else if (strcmp(key, "tp") == 0) {
        return count(v, 1, 1 << 20, "a group size of at least 1", &s->tp, err);
    } else if (strcmp(key, "pp") == 0) {
        return count(v, 1, 1 << 20, "a number of stages of at least 1", &s->pp, err);
    } else if (strcmp(key, "dp") == 0) {
        return count(v, 1, 1 << 24, "a group size of at least 1", &s->dp, err);
    } else if (strcmp(key, "ep") == 0) {
        return count(v, 1, 1 << 20, "a group size of at least 1", &s->ep, err);
    } else if (strcmp(key, "data-parallel") == 0) {
        if (g_ascii_strcasecmp(v, "ddp") == 0)
            s->shard = CS_WL_SHARD_NONE;
        else if (g_ascii_strcasecmp(v, "fsdp") == 0 || g_ascii_strcasecmp(v, "zero3") == 0)
            s->shard = CS_WL_SHARD_FULL;
        else
            goto bad_choice;
    } else if (strcmp(key, "sequence-parallel") == 0) {
        return onoff(v, &s->sequence_parallel, err);
    } else if (strcmp(key, "bucket-cap-mb") == 0) {
        double x;
        if (!cs_parse_double(v, &x) || !(x > 0) || x > 1e6) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "'%s' is not a bucket size; expected MiB above 0, such as 25", v);
            return FALSE;
        }
        s->bucket_cap_mb = x;
    } else if (strcmp(key, "fsdp-units") == 0) {
        return count(v, 1, 100000, "a number of units from 1", &s->fsdp_units, err);
    } else if (strcmp(key, "prefetch") == 0) {
        return onoff(v, &s->prefetch, err);
    } else if (strcmp(key, "micro-batch") == 0) {
        return count(v, 1, 1 << 20, "a number of sequences from 1", &s->micro_batch, err);
    } else if (strcmp(key, "seq-len") == 0) {
        return count(v, 1, 1 << 24, "a number of tokens from 1", &s->seq_len, err);
    } else if (strcmp(key, "micro-batches") == 0) {
        return count(v, 1, 100000, "a number of micro-batches from 1 to 100000", &s->micro_batches, err);
    } else if (strcmp(key, "pp-schedule") == 0) {
        if (g_ascii_strcasecmp(v, "1f1b") == 0)
            s->pp_sched = CS_WL_PP_1F1B;
        else if (g_ascii_strcasecmp(v, "gpipe") == 0)
            s->pp_sched = CS_WL_PP_GPIPE;
        else
            goto bad_choice;
    } else if (strcmp(key, "tflops") == 0) {
        double x;
        if (!cs_parse_double(v, &x) || !(x > 0) || x > 1e6) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "'%s' is not a throughput; expected TFLOP/s above 0, such as 400", v);
            return FALSE;
        }
        s->tflops = x;
    } else if (strcmp(key, "efficiency") == 0) {
        double x;
        if (!cs_parse_double(v, &x) || !(x > 0) || x > 1) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "'%s' is not a fraction; expected above 0 to 1, such as 0.4", v);
            return FALSE;
        }
        s->efficiency = x;
    } else if (strcmp(key, "layer-time") == 0) {
        return time_key(v, 3600, "a compute time", &s->layer_fwd_s, err);
    } else if (strcmp(key, "batch") == 0) {
        return count(v, 1, 1 << 20, "a number of sequences from 1", &s->batch, err);
    } else if (strcmp(key, "context") == 0) {
        return count(v, 1, 1 << 24, "a number of tokens from 1", &s->context, err);
    } else if (strcmp(key, "target-allreduce") == 0) {
        return time_key(v, 3600, "a latency target", &s->target_allreduce_s, err);
    } else if (strcmp(key, "target-token") == 0) {
        return time_key(v, 3600, "a latency target", &s->target_token_s, err);
    } else {
        g_assert_not_reached();
    }
    return TRUE;
bad_choice:
    for (const cs_scenario_key_t *k = cs_workload_keys; k->key != NULL; k++)
        if (strcmp(k->key, key) == 0) {
            g_auto(GStrv) parts = g_strsplit(k->arg, "|", -1);
            g_autofree char *list = g_strjoinv(" or ", parts);
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "'%s' is not a %s value; expected %s", v, key, list);
            return FALSE;
        }
    g_assert_not_reached();
}

gboolean cs_scenario_workload_set(cs_scenario_t *s, const char *key, const char *value, const char *origin,
                                  GError **err)
{
    if (s->workload == NULL)
        s->workload = cs_scenario_workload_new();
    if (!set_value(s->workload, key, value, err))
        return FALSE;
    g_hash_table_replace(s->workload->text, g_strdup(key), g_strdup(value));
    g_hash_table_replace(s->workload->origins, g_strdup(key),
                         g_strdup(origin != NULL ? origin : key));
    return TRUE;
}

void cs_scenario_workload_to_kf(const cs_scenario_t *s, GKeyFile *kf)
{
    if (s->workload == NULL)
        return;
    for (const cs_scenario_key_t *k = cs_workload_keys; k->key != NULL; k++) {
        const char *v = g_hash_table_lookup(s->workload->text, k->key);
        if (v != NULL)
            g_key_file_set_string(kf, "workload", k->key, v);
    }
}

/* Where a [workload] key came from, for messages ("s.ini:4: tp"). */
const char *cs_scenario_workload_origin(const cs_scenario_t *s, const char *key)
{
    const char *o = s->workload != NULL ? g_hash_table_lookup(s->workload->origins, key) : NULL;
    return o != NULL ? o : key;
}

/* Where the first of two keys that were set came from: a check between
 * two shapes, one of which may be the preset's, names the one the user
 * gave. */
static const char *either_origin(const cs_scenario_t *s, const char *k1, const char *k2)
{
    return g_hash_table_contains(s->workload->origins, k1) || !g_hash_table_contains(s->workload->origins, k2)
               ? cs_scenario_workload_origin(s, k1)
               : cs_scenario_workload_origin(s, k2);
}

/* A key set that nothing would read (the plan ignores it for this mode,
 * model or data parallelism): refused with its origin and why. */
static gboolean unused_key(const cs_scenario_t *s, const char *key, const char *why, GError **err)
{
    if (!g_hash_table_contains(s->workload->text, key))
        return TRUE;
    g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: %s; expected it unset", cs_scenario_workload_origin(s, key), why);
    return FALSE;
}

static gboolean check_unused(const cs_scenario_t *s, const cs_wl_spec_t *spec, const cs_wl_model_t *m, GError **err)
{
    static const char *const train_only[] = { "micro-batch", "micro-batches", "data-parallel", "bucket-cap-mb",
                                              "fsdp-units", "prefetch", "pp-schedule", NULL };
    static const char *const infer_only[] = { "batch", "context", "target-token", NULL };
    gboolean infer = spec->mode == CS_WL_INFER;
    for (int i = 0; infer && train_only[i] != NULL; i++)
        if (!unused_key(s, train_only[i], "a training key, and mode = infer decodes one token", err))
            return FALSE;
    for (int i = 0; !infer && infer_only[i] != NULL; i++)
        if (!unused_key(s, infer_only[i], "an inference key, and mode = train runs a training step", err))
            return FALSE;
    if (m->hidden > 0 && m->layer_params == NULL &&
        !unused_key(s, "params", "the model's shapes give its parameters (params is for a model known only by "
                    "its size: layers without hidden)", err))
        return FALSE;
    if (m->experts == 0 && !unused_key(s, "top-k", "a dense model (experts = 0) routes no token", err))
        return FALSE;
    if (spec->tflops > 0 && !unused_key(s, "efficiency", "tflops gives the sustained rate already", err))
        return FALSE;
    if (spec->tp <= 1 && !unused_key(s, "target-allreduce", "tp = 1 makes no tensor-parallel all-reduce to hold to "
                                     "the target (set tp above 1)", err))
        return FALSE;
    /* Megatron-LM's sequence parallelism splits a training sequence's
     * activations over the tensor-parallel group */
    if (spec->sequence_parallel && (spec->tp <= 1 || infer)) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: sequence-parallel = on %s; expected sequence-parallel = off%s",
                    cs_scenario_workload_origin(s, "sequence-parallel"),
                    infer ? "splits a training sequence's activations over the tensor-parallel group, and a decode "
                            "step has one new token a sequence"
                          : "splits the activations over the tensor-parallel group, and tp = 1 has none",
                    infer ? "" : " (or tp above 1)");
        return FALSE;
    }
    if (spec->shard == CS_WL_SHARD_NONE &&
        (!unused_key(s, "fsdp-units", "DDP has no FSDP units (data-parallel = fsdp does)", err) ||
         !unused_key(s, "prefetch", "DDP prefetches nothing (data-parallel = fsdp does)", err)))
        return FALSE;
    if (spec->shard == CS_WL_SHARD_FULL &&
        !unused_key(s, "bucket-cap-mb", "FSDP reduce-scatters per unit, in no DDP bucket", err))
        return FALSE;
    return spec->pp > 1 || unused_key(s, "pp-schedule", "one pipeline stage (pp = 1) has no schedule", err);
}

gboolean cs_scenario_workload_spec(const cs_scenario_t *s, cs_wl_spec_t *spec_p, GError **err)
{
    const cs_scenario_workload_t *w = s->workload;
    if (w == NULL) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: no [workload]; expected a [workload] section or "
                    "--arch (e.g. --arch llama3-8b)", s->path != NULL ? s->path : "collsim: step");
        return FALSE;
    }
    cs_wl_spec_t spec = w->spec;
    const cs_wl_model_t *preset = w->arch != NULL ? cs_wl_model_find(w->arch) : NULL;
    cs_wl_model_t m = preset != NULL ? *preset : (cs_wl_model_t){ .name = "custom", .source = "the scenario's keys" };
    const cs_wl_model_t *o = &w->shape;
#define OVER(f) do { if (o->f > 0) m.f = o->f; } while (0)
    OVER(layers);
    OVER(hidden);
    OVER(ffn);
    OVER(heads);
    OVER(kv_heads);
    OVER(vocab);
    OVER(top_k);
    OVER(params);
#undef OVER
    if (g_hash_table_contains(w->text, "experts"))
        m.experts = o->experts;
    if (w->gated >= 0)
        m.gated_mlp = w->gated;
    /* a preset's published total no longer holds once a shape changes */
    gboolean reshaped = preset != NULL && (o->layers > 0 || o->hidden > 0 || o->ffn > 0 || o->heads > 0 ||
                                           o->kv_heads > 0 || o->vocab > 0 || g_hash_table_contains(w->text, "experts") ||
                                           w->gated >= 0);
    if (reshaped && o->params <= 0)
        m.params = 0;
    if (o->layer_params != NULL) {
        /* a model known by its layers: the list gives layers and params */
        const char *at = cs_scenario_workload_origin(s, "layer-params");
        int n = o->nlayer_params;
        double sum = 0;
        for (int l = 0; l < n; l++)
            sum += o->layer_params[l];
        if (preset != NULL || o->hidden > 0) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: a layer list has no transformer shapes; expected "
                        "layer-params without %s", at, preset != NULL ? "arch (or arch = custom)" : "hidden");
            return FALSE;
        }
        if (o->layers > 0 && o->layers != n) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: layers = %d but layer-params lists %d layers; expected "
                        "layers = %d (or no layers key)", cs_scenario_workload_origin(s, "layers"), o->layers, n, n);
            return FALSE;
        }
        if (o->params > 0 && fabs(o->params - sum) > 0.5) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: params = %.0f but layer-params sum to %.0f; expected "
                        "no params key (or their sum)", cs_scenario_workload_origin(s, "params"), o->params, sum);
            return FALSE;
        }
        m.layers = n;
        m.params = sum;
        m.layer_params = o->layer_params;
        m.nlayer_params = n;
    }
    if (preset == NULL && m.layers <= 0) {
        /* named after what was given: the arch, else the size keys */
        const char *given = w->arch != NULL || g_hash_table_contains(w->origins, "arch") ? "arch"
                          : g_hash_table_contains(w->origins, "params") ? "params"
                          : g_hash_table_contains(w->origins, "hidden") ? "hidden" : "layers";
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: a custom model needs layers; expected arch (--arch) set to a "
                    "preset (%s), or layers (--layers) with hidden or params", cs_scenario_workload_origin(s, given),
                    cs_wl_model_names());
        return FALSE;
    }
    if (preset == NULL && m.hidden <= 0 && m.params <= 0) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: a custom model needs its size; expected hidden (with heads) "
                    "or params", cs_scenario_workload_origin(s, "layers"));
        return FALSE;
    }
    if (m.experts > 0 && m.top_k <= 0) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: experts = %d needs top-k; expected top-k = 1 to %d",
                    cs_scenario_workload_origin(s, "experts"), m.experts, m.experts);
        return FALSE;
    }
    if (m.top_k > 0 && m.experts > 0 && m.top_k > m.experts) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: top-k = %d is more than the %d experts; expected 1 to %d",
                    either_origin(s, "top-k", "experts"), m.top_k, m.experts, m.experts);
        return FALSE;
    }
    if (m.hidden > 0 && m.heads > 0 && m.hidden % m.heads != 0) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: hidden = %d is not a multiple of heads = %d; expected "
                    "hidden = heads x head size", either_origin(s, "hidden", "heads"), m.hidden, m.heads);
        return FALSE;
    }
    if (m.kv_heads > 0 && m.heads > 0 && m.heads % m.kv_heads != 0) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: heads = %d is not a multiple of kv-heads = %d; expected a "
                    "divisor of heads", either_origin(s, "kv-heads", "heads"), m.heads, m.kv_heads);
        return FALSE;
    }
    if (!check_unused(s, &spec, &m, err))
        return FALSE;
    spec.model = m;
    *spec_p = spec;
    return TRUE;
}
