/* Workload data: transformer presets from their published shapes, their
 * parameter count, and the GPUs' datasheet 16-bit tensor throughput. Pure
 * data; every number carries its source. */
#include "config.h"

#include <string.h>

#include "models/cs_hw.h"
#include "models/cs_workload.h"

#define GPT3_SRC "Brown et al. 2020, Language Models are Few-Shot Learners, Table 2.1 (vocab 50257, ffn 4h, tied embeddings, 2048 learned positions)"
#define LLAMA2_SRC "Touvron et al. 2023, Llama 2: Open Foundation and Fine-Tuned Chat Models, Table 1, and the Hugging Face config.json (SwiGLU, vocab 32000, RMSNorm, untied head)"
#define LLAMA3_SRC "Dubey et al. 2024, The Llama 3 Herd of Models, Table 3 (SwiGLU, 8 KV heads, vocab 128256, untied head)"
#define MIXTRAL_SRC "Jiang et al. 2024, Mixtral of Experts, Table 1 (8 experts, top-2, SwiGLU experts, vocab 32000)"

/* GPT-3 (Brown et al. 2020, Table 2.1): n_layers, d_model, n_heads (d_head
 * = d_model / n_heads); d_ff = 4 d_model; context 2048. Dense (the paper's
 * alternating sparse attention does not change parameters or the matmul
 * FLOPs). GPT-3 13B: the table prints d_model 5140, but n_heads x d_head =
 * 40 x 128 = 5120, which is used (5140 is not divisible by 40 heads). */
#define GPT3(n, l, h, a) { .name = n, .layers = l, .hidden = h, .ffn = 4 * (h), .heads = a, .kv_heads = a, \
                           .vocab = 50257, .source = GPT3_SRC, .tied_embeddings = TRUE, .positions = 2048, \
                           .biases = TRUE }

static const cs_wl_model_t presets[] = {
    GPT3("gpt3-125m", 12, 768, 12),
    GPT3("gpt3-350m", 24, 1024, 16),
    GPT3("gpt3-760m", 24, 1536, 16),
    GPT3("gpt3-1.3b", 24, 2048, 16),   /* Table 2.1: 24 heads of 128 = 3072 != 2048; heads of 128: 16 */
    GPT3("gpt3-2.7b", 32, 2560, 32),
    GPT3("gpt3-6.7b", 32, 4096, 32),
    GPT3("gpt3-13b", 40, 5120, 40),
    GPT3("gpt3-175b", 96, 12288, 96),
    /* Llama 2 (Touvron et al. 2023; HF meta-llama/Llama-2-*-hf config.json:
     * num_hidden_layers, hidden_size, intermediate_size, num_attention_heads,
     * num_key_value_heads). Only 70B uses grouped-query attention (8 KV heads). */
    { .name = "llama2-7b", .layers = 32, .hidden = 4096, .ffn = 11008, .heads = 32, .kv_heads = 32,
      .vocab = 32000, .gated_mlp = TRUE, .source = LLAMA2_SRC },
    { .name = "llama2-13b", .layers = 40, .hidden = 5120, .ffn = 13824, .heads = 40, .kv_heads = 40,
      .vocab = 32000, .gated_mlp = TRUE, .source = LLAMA2_SRC },
    { .name = "llama2-70b", .layers = 80, .hidden = 8192, .ffn = 28672, .heads = 64, .kv_heads = 8,
      .vocab = 32000, .gated_mlp = TRUE, .source = LLAMA2_SRC },
    /* Llama 3 / 3.1 (Dubey et al. 2024, Table 3: layers, model dimension,
     * FFN dimension, attention heads, key/value heads 8, vocabulary 128,000
     * rounded; the tokenizer has 128,256 entries, HF config vocab_size). */
    { .name = "llama3-8b", .layers = 32, .hidden = 4096, .ffn = 14336, .heads = 32, .kv_heads = 8,
      .vocab = 128256, .gated_mlp = TRUE, .source = LLAMA3_SRC },
    { .name = "llama3-70b", .layers = 80, .hidden = 8192, .ffn = 28672, .heads = 64, .kv_heads = 8,
      .vocab = 128256, .gated_mlp = TRUE, .source = LLAMA3_SRC },
    { .name = "llama3-405b", .layers = 126, .hidden = 16384, .ffn = 53248, .heads = 128, .kv_heads = 8,
      .vocab = 128256, .gated_mlp = TRUE, .source = LLAMA3_SRC },
    /* Mixtral 8x7B (Jiang et al. 2024, Table 1: dim 4096, n_layers 32,
     * head_dim 128, hidden_dim 14336, n_heads 32, n_kv_heads 8, vocab 32000,
     * num_experts 8, top_k_experts 2); every layer is a mixture of experts. */
    { .name = "mixtral-8x7b", .layers = 32, .hidden = 4096, .ffn = 14336, .heads = 32, .kv_heads = 8,
      .vocab = 32000, .gated_mlp = TRUE, .experts = 8, .top_k = 2, .source = MIXTRAL_SRC },
};

/* Aliases users write (case and '-'/'_' ignored by cs_name_loose_equal). */
static const struct {
    const char *alias, *name;
} preset_aliases[] = {
    { "gpt3", "gpt3-175b" }, { "gpt3-xl", "gpt3-1.3b" }, { "llama-2-7b", "llama2-7b" },
    { "llama-2-13b", "llama2-13b" }, { "llama-2-70b", "llama2-70b" }, { "llama-3-8b", "llama3-8b" },
    { "llama-3-70b", "llama3-70b" }, { "llama-3-405b", "llama3-405b" }, { "llama3.1-8b", "llama3-8b" },
    { "llama3.1-70b", "llama3-70b" }, { "llama3.1-405b", "llama3-405b" }, { "mixtral", "mixtral-8x7b" },
};

const cs_wl_model_t *cs_wl_model_find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < G_N_ELEMENTS(preset_aliases); i++)
        if (cs_name_loose_equal(name, preset_aliases[i].alias)) {
            name = preset_aliases[i].name;
            break;
        }
    for (size_t i = 0; i < G_N_ELEMENTS(presets); i++)
        if (cs_name_loose_equal(name, presets[i].name))
            return &presets[i];
    return NULL;
}

const char *cs_wl_model_names(void)
{
    static char *names;   /* built once, like cs_gpu_model_names */
    if (!names) {
        GString *s = g_string_new(NULL);
        for (size_t i = 0; i < G_N_ELEMENTS(presets); i++)
            g_string_append_printf(s, "%s%s", i ? ", " : "", presets[i].name);
        names = g_string_free(s, FALSE);
    }
    return names;
}

double cs_wl_model_params(const cs_wl_model_t *m)
{
    if (m->hidden <= 0 || m->layers <= 0 || m->heads <= 0)
        return m->params;
    double h = m->hidden, ffn = m->ffn > 0 ? m->ffn : 4.0 * h;
    int kv = m->kv_heads > 0 ? m->kv_heads : m->heads;
    double kvd = (double)kv * (h / m->heads);
    double b = m->biases ? 1 : 0;
    /* attention: q and o h x h, k and v h x kvd (+ biases) */
    double attn = 2 * h * h + 2 * h * kvd + b * (2 * h + 2 * kvd);
    /* MLP: up and down (+ gate for SwiGLU), biases on each output */
    double mlp = (m->gated_mlp ? 3 : 2) * h * ffn + b * ((m->gated_mlp ? 2 : 1) * ffn + h);
    if (m->experts > 0)
        mlp = m->experts * mlp + h * m->experts;   /* + the router */
    double norms = (m->biases ? 2 : 1) * 2 * h;    /* two per layer: LayerNorm w+b or RMSNorm w */
    double total = m->layers * (attn + mlp + norms);
    total += (m->biases ? 2 : 1) * h;              /* final norm */
    total += (double)m->vocab * h * (m->tied_embeddings ? 1 : 2) + (double)m->positions * h;
    return total;
}

/* Dense (no structured sparsity) 16-bit tensor-core peak per GPU, FLOP/s.
 * BF16 with FP32 accumulation, what mixed-precision training runs; parts
 * without BF16 (V100, Turing) use FP16 with FP32 accumulation. GeForce
 * parts run FP32 accumulation at half the FP16-accumulate rate; the
 * half rate is the one used. */
static const struct {
    const char *gpu;
    double flops;
    const char *source;
} gpu_peaks[] = {
    { "v100-sxm", 125e12, "NVIDIA Tesla V100 datasheet: Tensor Performance 125 TFLOPS (FP16 mixed precision)" },
    { "a100-sxm", 312e12, "NVIDIA A100 datasheet: BF16 Tensor Core 312 TFLOPS (624 with sparsity)" },
    { "a100-pcie", 312e12, "NVIDIA A100 datasheet: BF16 Tensor Core 312 TFLOPS (624 with sparsity)" },
    { "h100-sxm", 989e12, "NVIDIA H100 datasheet, SXM: BF16 Tensor Core 1,979 TFLOPS with sparsity, 989 dense" },
    { "h800-sxm", 989e12, "NVIDIA H800 product brief, SXM: BF16 Tensor Core 1,979 TFLOPS with sparsity, 989 dense" },
    { "h100-pcie", 756e12, "NVIDIA H100 datasheet, PCIe: BF16 Tensor Core 1,513 TFLOPS with sparsity, 756 dense" },
    { "h200-sxm", 989e12, "NVIDIA H200 datasheet, SXM: BF16 Tensor Core 1,979 TFLOPS with sparsity, 989 dense" },
    { "b200", 2.25e15, "NVIDIA HGX B200 datasheet: FP16/BF16 Tensor Core 36 PFLOPS with sparsity for 8 GPUs = 2.25 PFLOPS dense per GPU" },
    { "gb200", 2.5e15, "NVIDIA GB200 NVL72 datasheet: FP16/BF16 Tensor Core 360 PFLOPS with sparsity for 72 GPUs = 2.5 PFLOPS dense per GPU" },
    { "gb300", 2.5e15, "NVIDIA GB300 NVL72 product page: FP16/BF16 Tensor Core 360 PFLOPS with sparsity for 72 GPUs = 2.5 PFLOPS dense per GPU" },
    { "a40", 149.7e12, "NVIDIA A40 datasheet: BF16 Tensor Core 149.7 TFLOPS (299.4 with sparsity)" },
    { "rtx-a6000", 154.8e12, "NVIDIA Ampere GA102 whitepaper, RTX A6000: FP16/BF16 Tensor with FP32 accumulate 154.8 TFLOPS dense" },
    { "rtx2080ti", 53.8e12, "NVIDIA Turing whitepaper, RTX 2080 Ti: FP16 Tensor with FP32 accumulate 53.8 TFLOPS (107.6 with FP16 accumulate); no BF16" },
    { "rtx3090", 71e12, "NVIDIA Ampere GA102 whitepaper, RTX 3090: BF16 Tensor with FP32 accumulate 71 TFLOPS dense (FP16 accumulate 142)" },
    { "rtx4090", 165.2e12, "NVIDIA Ada Lovelace whitepaper, RTX 4090: BF16 Tensor with FP32 accumulate 165.2 TFLOPS dense (FP16 accumulate 330.3)" },
    { "rtx5090", 209.5e12, "NVIDIA RTX Blackwell whitepaper, RTX 5090: FP16/BF16 Tensor with FP32 accumulate 209.5 TFLOPS dense (FP16 accumulate 419)" },
    { "l40s", 362.05e12, "NVIDIA L40S datasheet: BF16 Tensor Core 362.05 TFLOPS (733 with sparsity)" },
    { "rtx6000-ada", 364.2e12, "NVIDIA Ada Lovelace whitepaper, RTX 6000 Ada: BF16 Tensor with FP32 accumulate 364.2 TFLOPS dense" },
    /* rtx-pro-6000, gb10: the datasheets give only FP4 "AI TOPS" with
     * sparsity; no 16-bit figure is published: unknown (0). */
};

double cs_wl_gpu_peak_flops(const char *gpu_model, const char **source_p)
{
    const cs_gpu_model_t *g = gpu_model ? cs_gpu_model_find(gpu_model) : NULL;
    const char *name = g ? g->name : gpu_model;
    if (name)
        for (size_t i = 0; i < G_N_ELEMENTS(gpu_peaks); i++)
            if (g_ascii_strcasecmp(name, gpu_peaks[i].gpu) == 0) {
                if (source_p)
                    *source_p = gpu_peaks[i].source;
                return gpu_peaks[i].flops;
            }
    if (source_p)
        *source_p = "no published dense 16-bit tensor figure in collsim's catalogue";
    return 0;
}
