/* Workloads: one step of a parallel training job, or one generated token
 * of tensor-parallel inference, as the collectives and compute each GPU
 * runs (collsim step). Pure model: a spec in, a plan of ops out; no
 * topology, no engine, no I/O. The executor (sim/cs_step.h) places the
 * plan's groups on a machine and prices it with an engine.
 *
 * Ranks are laid out as Megatron-LM lays them out by default (order
 * tp-ep-dp-pp, TP fastest): rank = t + tp * (d + dp * s) for TP index t,
 * DP index d and pipeline stage s, so that a TP group sits within a node
 * and DP, PP and EP groups span nodes (cs_wl_group_ranks). */
#ifndef CS_WORKLOAD_H
#define CS_WORKLOAD_H

#include <glib.h>
#include "models/cs_coll.h"

/* A transformer's published shapes (cs_wl_model_find), or the user's. */
typedef struct {
    const char *name;        /* "llama2-7b", "gpt3-175b", ...; user's: "custom" */
    int layers;
    int hidden;              /* d_model; 0: the model is known only by 'params' (DDP by size) */
    int ffn;                 /* MLP inner size (0: 4 x hidden) */
    int heads, kv_heads;     /* attention heads; kv_heads < heads: grouped-query attention (0: heads) */
    int vocab;
    gboolean gated_mlp;      /* SwiGLU: three MLP matrices, else two */
    int experts, top_k;      /* mixture of experts: experts per MoE layer and experts per token (0: dense) */
    double params;           /* total parameters; 0: computed from the shapes (cs_wl_model_params) */
    const char *source;      /* the paper or model card the shapes come from */
    /* Added by the model helper (zero: the Llama convention). */
    gboolean tied_embeddings; /* the LM head reuses the input embedding (GPT-3) */
    int positions;           /* learned position embeddings (GPT-3: 2048); 0: rotary, none */
    gboolean biases;         /* linear biases and LayerNorm with a bias (GPT-3); else RMSNorm, no biases */
    /* Added for DDP by a layer list ([workload] layer-params): the
     * parameters of each layer in forward order, nlayer_params = layers
     * entries, a model without shapes (hidden 0); params is their sum.
     * Borrowed; NULL: none. */
    const double *layer_params;
    int nlayer_params;
} cs_wl_model_t;

/* Presets: GPT-3 sizes, Llama 2 7B/13B/70B, Llama 3 8B/70B/405B, Mixtral
 * 8x7B (case-insensitive; NULL if unknown). */
const cs_wl_model_t *cs_wl_model_find(const char *name);
/* Comma-separated preset names, for messages and --help. */
const char *cs_wl_model_names(void);
/* Parameters from the shapes (embeddings, attention, MLP or experts, norms),
 * or m->params when the shapes are not given. */
double cs_wl_model_params(const cs_wl_model_t *m);

/* A GPU's dense 16-bit tensor throughput (datasheet peak, no sparsity), by
 * the catalogue name of cs_hw.h ("h100-sxm"); 0 when unknown. *source_p:
 * the datasheet (static). */
double cs_wl_gpu_peak_flops(const char *gpu_model, const char **source_p);

typedef enum { CS_WL_TRAIN = 0, CS_WL_INFER } cs_wl_mode_t;
typedef enum {
    CS_WL_SHARD_NONE = 0,    /* DDP: every DP rank holds the whole (TP/PP shard of the) model */
    CS_WL_SHARD_FULL,        /* FSDP FULL_SHARD / ZeRO-3: parameters gathered per unit */
} cs_wl_shard_t;
typedef enum { CS_WL_PP_1F1B = 0, CS_WL_PP_GPIPE } cs_wl_pp_sched_t;

/* [workload] (docs/collsim-scenario.5). Zero fields take the defaults
 * cs_wl_spec_init sets. */
typedef struct {
    cs_wl_mode_t mode;
    cs_wl_model_t model;
    cs_dtype_t dtype;        /* parameters, gradients, activations (bf16) */
    int tp, pp, ep;          /* group sizes (1) */
    int dp;                  /* 0: the GPUs left, world / (tp * pp) */
    cs_wl_shard_t shard;
    double bucket_cap_mb;    /* DDP bucket_cap_mb (PyTorch default 25; the first bucket 1 MiB) */
    int fsdp_units;          /* FSDP: wrapped units (0: one per layer) */
    gboolean prefetch;       /* FSDP: the next unit's all-gather issued before this one's compute (TRUE) */
    int micro_batch;         /* sequences per micro-batch per DP rank (1) */
    int seq_len;             /* tokens per sequence (2048) */
    int micro_batches;       /* per step: gradient accumulation, pipeline micro-batches (1) */
    cs_wl_pp_sched_t pp_sched;
    gboolean sequence_parallel; /* Megatron SP: TP all-reduces become reduce-scatter + all-gather */
    double tflops;           /* sustained dense TFLOP/s per GPU; 0: peak x efficiency */
    double efficiency;       /* fraction of the peak sustained (0.5), when tflops is 0 */
    double layer_fwd_s;      /* given forward compute per layer per micro-batch (0: from FLOPs) */
    /* inference (mode CS_WL_INFER): one decode step per token */
    int batch;               /* sequences decoded together (1) */
    int context;             /* tokens in the KV cache (seq_len) */
    double target_allreduce_s; /* latency target per all-reduce (0: none) */
    double target_token_s;   /* latency target per token (0: none) */
} cs_wl_spec_t;

void cs_wl_spec_init(cs_wl_spec_t *s);

typedef enum { CS_WL_COMPUTE = 0, CS_WL_COMM } cs_wl_op_kind_t;
/* EDP: expert data parallel (Megatron-LM's expert_data_parallel_group),
 * the DP ranks holding the same experts, over which expert gradients are
 * reduced. */
typedef enum {
    CS_WL_GROUP_TP = 0, CS_WL_GROUP_PP, CS_WL_GROUP_DP, CS_WL_GROUP_EP, CS_WL_GROUP_EDP, CS_WL_NGROUPS
} cs_wl_group_t;
typedef enum {
    CS_WL_PHASE_FORWARD = 0, CS_WL_PHASE_BACKWARD, CS_WL_PHASE_SYNC, /* gradients after backward */
    CS_WL_PHASE_OPTIMIZER, CS_WL_PHASE_DECODE, CS_WL_NPHASES
} cs_wl_phase_t;

const char *cs_wl_group_name(cs_wl_group_t g);   /* "TP", "PP", "DP", "EP", "EDP" */
const char *cs_wl_phase_name(cs_wl_phase_t p);   /* "forward", ... */

/* One op of the plan, as every GPU of a stage runs it. Ops are listed in
 * the order each stream issues them: a stage's compute stream, and one
 * NCCL stream per communicator; every dependency names an earlier op. */
typedef struct {
    cs_wl_op_kind_t kind;
    cs_wl_phase_t phase;
    int stage;               /* pipeline stage whose GPUs run it (0 .. pp-1) */
    int micro;               /* micro-batch (0 when not per micro-batch) */
    double seconds;          /* compute: its length on one GPU */
    double flops;            /* compute: its FLOPs on one GPU (0: given as a time) */
    cs_wl_group_t group;     /* comm: on which communicator */
    cs_coll_t coll;          /* comm: CS_COLL_ALLREDUCE, ... CS_COLL_SENDRECV (PP), CS_COLL_ALLTOALL (EP) */
    guint64 size;            /* comm: the call's size as nccl-tests counts it (bytes; allgather: the whole output) */
    int peer_stage;          /* comm on PP: the stage exchanged with (stage +- 1) */
    char *label;             /* "fwd L3 attn", "bucket 5 (25 MiB)" */
    int ndeps;
    int *deps;               /* earlier ops that must end before it starts */
} cs_wl_op_t;

typedef struct {
    cs_wl_mode_t mode;
    int world, tp, pp, dp, ep;
    cs_dtype_t dtype;
    int nops;
    cs_wl_op_t *ops;
    double flops_per_gpu;    /* one step (token), one GPU of the busiest stage */
    double tokens;           /* per step: tokens trained (all DP ranks), or sequences decoded */
    /* What one GPU of the busiest stage holds, bytes: training, 16-bit
     * weights and gradients and mixed-precision Adam's fp32 master and
     * moments (16 bytes a local parameter, ZeRO's count; FSDP divides
     * them by dp); inference, the weights and the KV cache. Activations,
     * NCCL's and the framework's buffers are not counted. 'mem_what' says
     * what was counted. */
    double mem_bytes;
    char *mem_what;
    char **notes;            /* what the plan assumed, one sentence each (NULL-terminated) */
} cs_wl_plan_t;

/* Adds a note to the plan's (the caller's words, which know the GPU). */
void cs_wl_plan_add_note(cs_wl_plan_t *p, char *note_owned);

/* Builds the plan of one step for 'world' GPUs. gpu_flops: the sustained
 * FLOP/s of one GPU (spec->tflops, or the peak x efficiency the caller
 * found); gpu_mem_bw: bytes/s of its memory (inference decode reads the
 * weights: memory-bound). Errors (CS_ERROR_INPUT, message without a
 * prefix, naming the key): sizes that do not divide (world % (tp * pp),
 * layers % pp, heads % tp, dp % ep, experts % ep), a model without
 * shapes where the mode needs them. */
cs_wl_plan_t *cs_wl_plan_new(const cs_wl_spec_t *spec, int world, double gpu_flops, double gpu_mem_bw,
                             GError **err);
void cs_wl_plan_free(cs_wl_plan_t *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(cs_wl_plan_t, cs_wl_plan_free)

/* Groups. Instances of a group kind on one stage: TP: dp (one per DP index);
 * DP: tp; EP: tp * dp / ep (DP indices e*ep .. (e+1)*ep - 1); EDP: tp * ep
 * of dp / ep ranks (DP indices j, j + ep, j + 2 ep, ...: the same place j
 * in every EP group); PP (stage s with s + 1): tp * dp pairs. */
int cs_wl_group_count(const cs_wl_plan_t *p, cs_wl_group_t g);
/* The ranks of instance 'i' of group g on 'stage' (PP: the pair stage,
 * peer), in communicator order; 'ranks' holds cs_wl_group_size entries. */
int cs_wl_group_size(const cs_wl_plan_t *p, cs_wl_group_t g);
void cs_wl_group_ranks(const cs_wl_plan_t *p, cs_wl_group_t g, int stage, int peer, int i, int *ranks);

#endif
