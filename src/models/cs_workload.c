/* Workload plans (cs_workload.h): one training step or one decoded token
 * as the compute and the collectives every GPU runs, in one list that is a
 * valid execution order and keeps each stream's issue order.
 *
 * Sources of the rules:
 *  - FLOPs of a transformer layer: Narayanan et al. 2021, "Efficient
 *    Large-Scale Language Model Training on GPU Clusters Using
 *    Megatron-LM" (SC'21), section 5.1: 2 x tokens x matmul parameters, plus
 *    4 b s^2 h for the attention scores and their product with V (the
 *    24 b s h^2 + 4 b s^2 h per layer of their equation); backward = 2 x
 *    forward.
 *  - Tensor parallelism: Shoeybi et al. 2019 (Megatron-LM), section 3: the
 *    f (identity forward, all-reduce backward) and g (all-reduce forward,
 *    identity backward) operators around attention and MLP; sequence
 *    parallelism (Korthikanti et al. 2022, "Reducing Activation
 *    Recomputation in Large Transformer Models", section 4.2.2) turns each
 *    all-reduce into a reduce-scatter + all-gather pair.
 *  - Pipeline: 1F1B (PipeDream-Flush; Narayanan et al. 2021, section 2.2)
 *    or GPipe (Huang et al. 2019).
 *  - DDP buckets: PyTorch torch/nn/parallel/distributed.py and
 *    torch/csrc/distributed/c10d/reducer.cpp (compute_bucket_assignment_by_size:
 *    tensors in gradient-ready order are appended to the open bucket until
 *    its size reaches the limit, the first limit being
 *    dist._DEFAULT_FIRST_BUCKET_BYTES = 1 MiB, the others bucket_cap_mb).
 *  - FSDP: Zhao et al. 2023, "PyTorch FSDP: Experiences on Scaling Fully
 *    Sharded Data Parallel" (VLDB), section 3: all-gather before a unit's
 *    forward and backward, reduce-scatter after its backward, backward and
 *    forward prefetch with at most two units' parameters in flight. */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <string.h>

#include "models/cs_hw.h"
#include "models/cs_workload.h"
#include "util/cs_error.h"

#define MIB (1024.0 * 1024.0)
#define FIRST_BUCKET_BYTES (1024 * 1024)   /* dist._DEFAULT_FIRST_BUCKET_BYTES */
#define MAX_OPS 4000000                    /* a plan beyond this is a mistake, not a step */
#define MAX_SIZE 4.0e18                    /* below 2^62: guint64 arithmetic downstream stays exact */

void cs_wl_spec_init(cs_wl_spec_t *s)
{
    memset(s, 0, sizeof *s);
    s->mode = CS_WL_TRAIN;
    s->model.name = "custom";
    s->dtype = CS_DTYPE_BFLOAT16;
    s->tp = s->pp = s->ep = 1;
    s->shard = CS_WL_SHARD_NONE;
    s->bucket_cap_mb = 25;          /* torch DistributedDataParallel(bucket_cap_mb=25) */
    s->prefetch = TRUE;
    s->micro_batch = 1;
    s->seq_len = 2048;
    s->micro_batches = 1;
    s->pp_sched = CS_WL_PP_1F1B;
    s->efficiency = 0.5;
    s->batch = 1;
}

const char *cs_wl_group_name(cs_wl_group_t g)
{
    static const char *names[CS_WL_NGROUPS] = { "TP", "PP", "DP", "EP", "EDP" };
    return (unsigned)g < CS_WL_NGROUPS ? names[g] : "?";
}

const char *cs_wl_phase_name(cs_wl_phase_t p)
{
    static const char *names[CS_WL_NPHASES] = { "forward", "backward", "sync", "optimizer", "decode" };
    return (unsigned)p < CS_WL_NPHASES ? names[p] : "?";
}

/* ---- groups ------------------------------------------------------------------ */

static int wl_rank(const cs_wl_plan_t *p, int t, int d, int s)
{
    return t + p->tp * (d + p->dp * s);
}

int cs_wl_group_count(const cs_wl_plan_t *p, cs_wl_group_t g)
{
    switch (g) {
    case CS_WL_GROUP_TP: return p->dp;
    case CS_WL_GROUP_DP: return p->tp;
    case CS_WL_GROUP_EP: return p->tp * p->dp / p->ep;
    case CS_WL_GROUP_EDP: return p->tp * p->ep;
    case CS_WL_GROUP_PP: return p->tp * p->dp;
    default: return 0;
    }
}

int cs_wl_group_size(const cs_wl_plan_t *p, cs_wl_group_t g)
{
    switch (g) {
    case CS_WL_GROUP_TP: return p->tp;
    case CS_WL_GROUP_DP: return p->dp;
    case CS_WL_GROUP_EP: return p->ep;
    case CS_WL_GROUP_EDP: return p->dp / p->ep;
    case CS_WL_GROUP_PP: return 2;
    default: return 0;
    }
}

void cs_wl_group_ranks(const cs_wl_plan_t *p, cs_wl_group_t g, int stage, int peer, int i, int *ranks)
{
    g_assert(i >= 0 && i < cs_wl_group_count(p, g) && stage >= 0 && stage < p->pp);
    switch (g) {
    case CS_WL_GROUP_TP:       /* instance i = DP index d */
        for (int t = 0; t < p->tp; t++)
            ranks[t] = wl_rank(p, t, i, stage);
        break;
    case CS_WL_GROUP_DP:       /* instance i = TP index t */
        for (int d = 0; d < p->dp; d++)
            ranks[d] = wl_rank(p, i, d, stage);
        break;
    case CS_WL_GROUP_EP: {     /* instance i = t + tp * e: DP indices e*ep .. (e+1)*ep - 1 */
        int t = i % p->tp, e = i / p->tp;
        for (int k = 0; k < p->ep; k++)
            ranks[k] = wl_rank(p, t, e * p->ep + k, stage);
        break;
    }
    case CS_WL_GROUP_EDP: {    /* instance i = t + tp * j: DP indices j, j + ep, ... (place j in each EP group) */
        int t = i % p->tp, j = i / p->tp;
        for (int k = 0; k < p->dp / p->ep; k++)
            ranks[k] = wl_rank(p, t, j + k * p->ep, stage);
        break;
    }
    case CS_WL_GROUP_PP: {     /* instance i = t + tp * d */
        g_assert(peer >= 0 && peer < p->pp);
        int t = i % p->tp, d = i / p->tp;
        ranks[0] = wl_rank(p, t, d, stage);
        ranks[1] = wl_rank(p, t, d, peer);
        break;
    }
    default:
        g_assert_not_reached();
    }
}

/* ---- the builder --------------------------------------------------------------- */

/* A gradient tensor of one GPU's shard, and when it is ready in backward:
 * key 2l + 1 after layer l's MLP (or experts), 2l after its attention,
 * 2L after the LM head, -1 at the end of the stage's backward. */
typedef struct {
    guint64 elems;
    int key;
    gboolean expert;
} wl_tensor_t;

typedef struct {
    guint64 bytes;
    int key;             /* ready when backward reaches this key */
    int ntensors;
} wl_bucket_t;

typedef struct {
    const cs_wl_spec_t *spec;
    cs_wl_model_t m;
    gboolean shapes;         /* hidden known */
    int world, tp, pp, dp, ep, L, Ls, M;
    int mb, seq, ctx;        /* micro_batch, seq_len, context (defaults applied) */
    int units;               /* FSDP units per stage */
    double T;                /* tokens per micro-batch per DP rank (train) or sequences (infer) */
    double gpu_flops, mem_bw;
    size_t dsz;
    gboolean split;          /* a layer runs as attention and MLP ops (TP or EP collectives between) */
    gboolean moe_ep;         /* EP all-to-alls around the experts */
    /* per layer, one GPU, elements */
    double attn_mm, mlp_mm;  /* matmul parameters: attention; MLP of one expert (or the MLP) */
    double kvd_local;        /* K (or V) width on one GPU */
    /* per layer forward per micro-batch, one GPU */
    double f_attn, f_mlp, f_head;
    guint64 act_bytes;       /* T x hidden x dtype: TP and PP messages */
    guint64 a2a_bytes;
    GArray **tensors;        /* per stage, wl_tensor_t in forward order */
    GArray **buckets;        /* per stage, wl_bucket_t in ready order (with EP: the dense tensors only) */
    GArray **ebuckets;       /* per stage, the expert tensors' buckets (EP with dp > ep), else empty */
    guint64 **unit_bytes;    /* FSDP: per stage, per unit */
    double *stage_params;    /* elements on one GPU of the stage */
    double *stage_flops;
    GArray *ops;
    GPtrArray *notes;
    int *send_fwd, *send_bwd, *fwd_end;   /* [s * M + m] */
    int *last_sync;          /* per stage: its last gradient collective of the step */
    int *last_esync;         /* per stage: its last expert-gradient all-reduce (EDP) */
} wl_t;

/* One pass (forward or backward of a micro-batch on a stage): its ops form
 * a chain of data dependencies. */
typedef struct {
    int stage, micro;
    cs_wl_phase_t phase;
    int chain;               /* the last op of the chain (-1: none) */
    int pending;             /* an extra dependency of the chain's next op (FSDP all-gather) */
    int last_compute;
    double seconds;          /* compute time of the pass (pipeline slots) */
    gboolean ddp;            /* the DDP buckets are reduced in this pass */
    int bucket_next, ebucket_next;
    int unit;                /* FSDP unit being run (-1: none) */
    int *ag, *unit_compute;  /* FSDP: per unit, all-gather and last compute op of this pass */
} wl_pass_t;

static int op_push(wl_t *w, cs_wl_op_t *op, const int *deps, int ndeps, char *label)
{
    int n = (int)w->ops->len;
    op->label = label;
    op->deps = g_new(int, MAX(ndeps, 1));
    op->ndeps = 0;
    for (int i = 0; i < ndeps; i++) {
        int d = deps[i];
        if (d < 0)
            continue;
        g_assert(d < n);
        gboolean dup = FALSE;
        for (int j = 0; j < op->ndeps; j++)
            dup |= op->deps[j] == d;
        if (!dup)
            op->deps[op->ndeps++] = d;
    }
    g_array_append_val(w->ops, *op);
    return n;
}

static double compute_seconds(const wl_t *w, double flops, double layer_share, double bytes)
{
    if (w->spec->layer_fwd_s > 0)
        return w->spec->layer_fwd_s * layer_share;
    double s = flops / w->gpu_flops;
    if (bytes > 0 && w->mem_bw > 0)
        s = MAX(s, bytes / w->mem_bw);
    return s;
}

/* A compute op in the pass's chain. flops: this GPU's; mult: 1 forward, 2
 * backward (of forward FLOPs 'flops'); bytes: memory read (decode). */
static int pass_compute(wl_t *w, wl_pass_t *ps, char *label, double flops, double mult, double bytes)
{
    /* layer-time covers a whole layer: a transformer's splits it by FLOPs,
     * each layer of a list takes all of it */
    double layer = w->f_attn + w->f_mlp;
    double share = w->m.layer_params != NULL ? 1 : layer > 0 ? flops / layer : 1;
    double sec = compute_seconds(w, flops, share, bytes) * mult;
    cs_wl_op_t op = {
        .kind = CS_WL_COMPUTE, .phase = ps->phase, .stage = ps->stage, .micro = ps->micro,
        .seconds = sec, .flops = w->spec->layer_fwd_s > 0 ? 0 : flops * mult, .peer_stage = -1,
    };
    w->stage_flops[ps->stage] += flops * mult;
    int deps[2] = { ps->chain, ps->pending };
    ps->chain = ps->last_compute = op_push(w, &op, deps, 2, label);
    ps->pending = -1;
    ps->seconds += sec;
    return ps->chain;
}

static int comm_op(wl_t *w, cs_wl_phase_t phase, int stage, int micro, cs_wl_group_t g, cs_coll_t c,
                   guint64 size, int peer, const int *deps, int ndeps, char *label)
{
    cs_wl_op_t op = {
        .kind = CS_WL_COMM, .phase = phase, .stage = stage, .micro = micro, .group = g, .coll = c,
        .size = size, .peer_stage = peer,
    };
    return op_push(w, &op, deps, ndeps, label);
}

/* A collective in the pass's chain (peer: the PP stage exchanged with, else -1). */
static int pass_comm_peer(wl_t *w, wl_pass_t *ps, cs_wl_group_t g, cs_coll_t c, guint64 size, int peer, char *label)
{
    int deps[2] = { ps->chain, ps->pending };
    ps->chain = comm_op(w, ps->phase, ps->stage, ps->micro, g, c, size, peer, deps, 2, label);
    ps->pending = -1;
    return ps->chain;
}

static int pass_comm(wl_t *w, wl_pass_t *ps, cs_wl_group_t g, cs_coll_t c, guint64 size, char *label)
{
    return pass_comm_peer(w, ps, g, c, size, -1, label);
}

/* TP collective of a pass: all-reduce, or with sequence parallelism the
 * reduce-scatter ('rs') or all-gather half of the pair. */
static void tp_comm(wl_t *w, wl_pass_t *ps, gboolean rs, const char *what)
{
    if (w->tp <= 1)
        return;
    cs_coll_t c = !w->spec->sequence_parallel ? CS_COLL_ALLREDUCE : rs ? CS_COLL_REDUCESCATTER : CS_COLL_ALLGATHER;
    const char *tag = c == CS_COLL_ALLREDUCE ? "AR" : c == CS_COLL_REDUCESCATTER ? "RS" : "AG";
    pass_comm(w, ps, CS_WL_GROUP_TP, c, w->act_bytes, g_strdup_printf("%s %s", what, tag));
}

/* All-reduces on group g of the buckets b[*next ..] whose last gradient
 * is ready once backward has reached key 'kmin'. */
static void flush_buckets(wl_t *w, wl_pass_t *ps, int kmin, GArray *b, int *next, cs_wl_group_t g,
                          const char *what, int *last)
{
    for (; *next < (int)b->len; (*next)++) {
        const wl_bucket_t *k = &g_array_index(b, wl_bucket_t, *next);
        if (k->key < kmin)
            break;
        int dep = ps->chain;
        *last = comm_op(w, CS_WL_PHASE_SYNC, ps->stage, ps->micro, g, CS_COLL_ALLREDUCE, k->bytes, -1, &dep, 1,
                        g_strdup_printf("%s %d (%.3g MiB)", what, *next, k->bytes / MIB));
    }
}

/* DDP: the buckets ready once backward has reached key 'kmin': the dense
 * ones on DP, the experts' (their own buffer, as Megatron-LM's DDP keeps
 * expert_parallel_buffers apart) on the expert-data-parallel group. */
static void ddp_flush(wl_t *w, wl_pass_t *ps, int kmin)
{
    if (!ps->ddp)
        return;
    int s = ps->stage;
    flush_buckets(w, ps, kmin, w->buckets[s], &ps->bucket_next, CS_WL_GROUP_DP, "bucket", &w->last_sync[s]);
    flush_buckets(w, ps, kmin, w->ebuckets[s], &ps->ebucket_next, CS_WL_GROUP_EDP, "expert bucket",
                  &w->last_esync[s]);
}

/* ---- FSDP --------------------------------------------------------------------- */

static gboolean fsdp_on(const wl_t *w)
{
    return w->spec->shard == CS_WL_SHARD_FULL && w->dp > 1;
}

static int fsdp_ag(wl_t *w, wl_pass_t *ps, int u, int dep)
{
    return comm_op(w, ps->phase, ps->stage, ps->micro, CS_WL_GROUP_DP, CS_COLL_ALLGATHER,
                   w->unit_bytes[ps->stage][u], -1, &dep, 1, g_strdup_printf("AG unit %d", u));
}

static int unit_compute(const wl_pass_t *ps, int u, int units)
{
    return u >= 0 && u < units ? ps->unit_compute[u] : -1;
}

/* Unit u's parameters are needed next: its all-gather (and with prefetch
 * the next unit's), issued as PyTorch FSDP issues them; dir = +1 forward,
 * -1 backward (units in reverse). At most two units in flight: the
 * all-gather of u + 2 dir waits for u's compute. */
static void fsdp_enter(wl_t *w, wl_pass_t *ps, int u)
{
    if (!fsdp_on(w) || ps->unit == u)
        return;
    int dir = ps->phase == CS_WL_PHASE_FORWARD ? 1 : -1, U = w->units;
    if (ps->unit >= 0)
        ps->unit_compute[ps->unit] = ps->last_compute;
    ps->unit = u;
    gboolean pre = w->spec->prefetch;
    if (ps->ag[u] < 0)
        ps->ag[u] = fsdp_ag(w, ps, u, unit_compute(ps, u - (pre ? 2 : 1) * dir, U));
    int next = u + dir;
    if (pre && next >= 0 && next < U && ps->ag[next] < 0)
        ps->ag[next] = fsdp_ag(w, ps, next, unit_compute(ps, u - dir, U));
    ps->pending = ps->ag[u];
}

/* Backward leaves unit u: reduce-scatter its gradients. */
static void fsdp_leave(wl_t *w, wl_pass_t *ps)
{
    if (!fsdp_on(w) || ps->unit < 0)
        return;
    int u = ps->unit;
    ps->unit_compute[u] = ps->last_compute;
    if (ps->phase == CS_WL_PHASE_BACKWARD) {
        int dep = ps->chain;
        w->last_sync[ps->stage] =
            comm_op(w, CS_WL_PHASE_SYNC, ps->stage, ps->micro, CS_WL_GROUP_DP, CS_COLL_REDUCESCATTER,
                    w->unit_bytes[ps->stage][u], -1, &dep, 1, g_strdup_printf("RS unit %d", u));
    }
}

static int unit_of_layer(const wl_t *w, int s, int l)
{
    return (l - s * w->Ls) / (w->Ls / w->units);
}

static void fsdp_layer(wl_t *w, wl_pass_t *ps, int u)
{
    if (!fsdp_on(w))
        return;
    if (ps->unit != u && ps->unit >= 0 && ps->phase == CS_WL_PHASE_BACKWARD)
        fsdp_leave(w, ps);
    fsdp_enter(w, ps, u);
}

/* ---- passes ------------------------------------------------------------------- */

static void pass_init(wl_t *w, wl_pass_t *ps, int s, int m, cs_wl_phase_t ph, int chain)
{
    memset(ps, 0, sizeof *ps);
    ps->stage = s;
    ps->micro = m;
    ps->phase = ph;
    ps->chain = chain;
    ps->pending = ps->last_compute = -1;
    ps->unit = -1;
    ps->ag = g_new(int, w->units);
    ps->unit_compute = g_new(int, w->units);
    for (int u = 0; u < w->units; u++)
        ps->ag[u] = ps->unit_compute[u] = -1;
}

static void pass_clear(wl_pass_t *ps)
{
    g_free(ps->ag);
    g_free(ps->unit_compute);
}

/* Forward FLOPs of layer l on one GPU when it runs as one op: a layer of
 * a list, 2 x tokens x its parameters; else the mean layer's. */
static double layer_flops(const wl_t *w, int l)
{
    if (w->m.layer_params != NULL)
        return 2 * w->T * w->m.layer_params[l];
    return w->f_attn + w->f_mlp;
}

static void forward_layer(wl_t *w, wl_pass_t *ps, int l)
{
    if (!w->split) {
        pass_compute(w, ps, g_strdup_printf("fwd L%d", l), layer_flops(w, l), 1, 0);
        return;
    }
    char *what = g_strdup_printf("fwd L%d attn", l);
    if (w->spec->sequence_parallel)
        tp_comm(w, ps, FALSE, what);
    pass_compute(w, ps, g_strdup(what), w->f_attn, 1, 0);
    tp_comm(w, ps, TRUE, what);
    g_free(what);
    what = g_strdup_printf("fwd L%d mlp", l);
    if (w->spec->sequence_parallel)
        tp_comm(w, ps, FALSE, what);
    if (w->moe_ep) {
        pass_comm(w, ps, CS_WL_GROUP_EP, CS_COLL_ALLTOALL, w->a2a_bytes, g_strdup_printf("fwd L%d dispatch", l));
        pass_compute(w, ps, g_strdup_printf("fwd L%d experts", l), w->f_mlp, 1, 0);
        pass_comm(w, ps, CS_WL_GROUP_EP, CS_COLL_ALLTOALL, w->a2a_bytes, g_strdup_printf("fwd L%d combine", l));
    } else {
        pass_compute(w, ps, g_strdup(what), w->f_mlp, 1, 0);
    }
    tp_comm(w, ps, TRUE, what);
    g_free(what);
}

/* Backward of layer l: the conjugates of forward's collectives in reverse
 * (Megatron's f and g), the compute at twice the forward FLOPs. */
static void backward_layer(wl_t *w, wl_pass_t *ps, int l)
{
    if (!w->split) {
        pass_compute(w, ps, g_strdup_printf("bwd L%d", l), layer_flops(w, l), 2, 0);
        ddp_flush(w, ps, 2 * l);
        return;
    }
    char *what = g_strdup_printf("bwd L%d mlp", l);
    if (w->spec->sequence_parallel)
        tp_comm(w, ps, FALSE, what);
    if (w->moe_ep) {
        pass_comm(w, ps, CS_WL_GROUP_EP, CS_COLL_ALLTOALL, w->a2a_bytes, g_strdup_printf("bwd L%d combine", l));
        pass_compute(w, ps, g_strdup_printf("bwd L%d experts", l), w->f_mlp, 2, 0);
        ddp_flush(w, ps, 2 * l + 1);
        pass_comm(w, ps, CS_WL_GROUP_EP, CS_COLL_ALLTOALL, w->a2a_bytes, g_strdup_printf("bwd L%d dispatch", l));
    } else {
        pass_compute(w, ps, g_strdup(what), w->f_mlp, 2, 0);
        ddp_flush(w, ps, 2 * l + 1);
    }
    tp_comm(w, ps, TRUE, what);
    g_free(what);
    what = g_strdup_printf("bwd L%d attn", l);
    if (w->spec->sequence_parallel)
        tp_comm(w, ps, FALSE, what);
    pass_compute(w, ps, g_strdup(what), w->f_attn, 2, 0);
    ddp_flush(w, ps, 2 * l);
    tp_comm(w, ps, TRUE, what);
    g_free(what);
}

static gboolean has_embed(const wl_t *w, int s)
{
    return s == 0 && w->shapes && w->m.vocab > 0;
}

static gboolean has_head(const wl_t *w, int s)
{
    return s == w->pp - 1 && w->shapes && w->m.vocab > 0;
}

static double emit_forward(wl_t *w, int s, int m)
{
    wl_pass_t ps;
    pass_init(w, &ps, s, m, CS_WL_PHASE_FORWARD, s > 0 ? w->send_fwd[(s - 1) * w->M + m] : -1);
    if (has_embed(w, s)) {
        fsdp_enter(w, &ps, 0);
        /* vocabulary-parallel embedding: partial sums reduced over TP (with
         * sequence parallelism, reduce-scattered into sequence shards) */
        tp_comm(w, &ps, TRUE, "fwd embed");
    }
    for (int l = s * w->Ls; l < (s + 1) * w->Ls; l++) {
        fsdp_layer(w, &ps, unit_of_layer(w, s, l));
        forward_layer(w, &ps, l);
    }
    if (has_head(w, s)) {
        if (w->spec->sequence_parallel)
            tp_comm(w, &ps, FALSE, "fwd head");
        pass_compute(w, &ps, g_strdup("fwd head"), w->f_head, 1, 0);
    }
    fsdp_leave(w, &ps);
    if (s < w->pp - 1)
        w->send_fwd[s * w->M + m] =
            pass_comm_peer(w, &ps, CS_WL_GROUP_PP, CS_COLL_SENDRECV, w->act_bytes, s + 1,
                           g_strdup_printf("send fwd mb%d s%d->s%d", m, s, s + 1));
    w->fwd_end[s * w->M + m] = ps.chain;
    double sec = ps.seconds;
    pass_clear(&ps);
    return sec;
}

static double emit_backward(wl_t *w, int s, int m)
{
    wl_pass_t ps;
    int start = s == w->pp - 1 ? w->fwd_end[s * w->M + m] : w->send_bwd[(s + 1) * w->M + m];
    pass_init(w, &ps, s, m, CS_WL_PHASE_BACKWARD, start);
    ps.ddp = w->spec->shard == CS_WL_SHARD_NONE && w->dp > 1 && m == w->M - 1;
    if (has_head(w, s)) {
        fsdp_enter(w, &ps, w->units - 1);
        pass_compute(w, &ps, g_strdup("bwd head"), w->f_head, 2, 0);
        ddp_flush(w, &ps, 2 * w->L);
        /* the head's input gradient: f's all-reduce (SP: the reduce-scatter
         * conjugate of the forward all-gather) */
        tp_comm(w, &ps, TRUE, "bwd head");
    }
    for (int l = (s + 1) * w->Ls - 1; l >= s * w->Ls; l--) {
        fsdp_layer(w, &ps, unit_of_layer(w, s, l));
        backward_layer(w, &ps, l);
    }
    if (has_embed(w, s) && w->spec->sequence_parallel)
        tp_comm(w, &ps, FALSE, "bwd embed");
    ddp_flush(w, &ps, INT_MIN);
    fsdp_leave(w, &ps);
    if (s > 0)
        w->send_bwd[s * w->M + m] =
            pass_comm_peer(w, &ps, CS_WL_GROUP_PP, CS_COLL_SENDRECV, w->act_bytes, s - 1,
                           g_strdup_printf("send bwd mb%d s%d->s%d", m, s, s - 1));
    if (m == w->M - 1) {
        /* optimizer: Adam with mixed precision streams 28 bytes per local
         * parameter (see the note) at the memory bandwidth */
        double params = w->stage_params[s] / (w->spec->shard == CS_WL_SHARD_FULL ? w->dp : 1);
        double sec = w->mem_bw > 0 ? 28.0 * params / w->mem_bw : 0;
        cs_wl_op_t op = { .kind = CS_WL_COMPUTE, .phase = CS_WL_PHASE_OPTIMIZER, .stage = s, .seconds = sec,
                          .peer_stage = -1 };
        int deps[3] = { ps.last_compute, w->last_sync[s], w->last_esync[s] };
        op_push(w, &op, deps, 3, g_strdup("optimizer"));
    }
    double sec = ps.seconds;
    pass_clear(&ps);
    return sec;
}

/* The pipeline schedule: each stage's sequence of forward (+) and backward
 * (-) passes, then all of them emitted in time order (compute only, the
 * collectives taken as free) so that the list is an execution order. */
static void emit_training(wl_t *w)
{
    int pp = w->pp, M = w->M;
    int **seq = g_new(int *, pp), *len = g_new0(int, pp), *next = g_new0(int, pp);
    double *free_at = g_new0(double, pp), *fend = g_new0(double, pp * M), *bend = g_new0(double, pp * M);
    gboolean *fdone = g_new0(gboolean, pp * M), *bdone = g_new0(gboolean, pp * M);
    for (int s = 0; s < pp; s++) {
        seq[s] = g_new(int, 2 * M);
        if (w->spec->pp_sched == CS_WL_PP_GPIPE) {
            for (int m = 0; m < M; m++)
                seq[s][len[s]++] = m + 1;
            for (int m = 0; m < M; m++)
                seq[s][len[s]++] = -(m + 1);
        } else {
            int warm = MIN(pp - s - 1, M), f = 0, b = 0;
            for (; f < warm; f++)
                seq[s][len[s]++] = f + 1;
            for (; f < M; f++, b++) {
                seq[s][len[s]++] = f + 1;
                seq[s][len[s]++] = -(b + 1);
            }
            for (; b < M; b++)
                seq[s][len[s]++] = -(b + 1);
        }
    }
    for (;;) {
        int best = -1;
        double best_t = 0;
        for (int s = 0; s < pp; s++) {
            if (next[s] == len[s])
                continue;
            int a = seq[s][next[s]], m = abs(a) - 1;
            double ready;
            if (a > 0) {
                if (s > 0 && !fdone[(s - 1) * M + m])
                    continue;
                ready = s > 0 ? fend[(s - 1) * M + m] : 0;
            } else {
                if (s < pp - 1 && !bdone[(s + 1) * M + m])
                    continue;
                ready = s < pp - 1 ? bend[(s + 1) * M + m] : fend[s * M + m];
            }
            double t = MAX(ready, free_at[s]);
            if (best < 0 || t < best_t)
                best = s, best_t = t;
        }
        if (best < 0)
            break;
        int s = best, a = seq[s][next[s]++], m = abs(a) - 1;
        if (a > 0) {
            fend[s * M + m] = free_at[s] = best_t + emit_forward(w, s, m);
            fdone[s * M + m] = TRUE;
        } else {
            bend[s * M + m] = free_at[s] = best_t + emit_backward(w, s, m);
            bdone[s * M + m] = TRUE;
        }
    }
    for (int s = 0; s < pp; s++) {
        g_assert(next[s] == len[s]);
        g_free(seq[s]);
    }
    g_free(seq);
    g_free(len);
    g_free(next);
    g_free(free_at);
    g_free(fend);
    g_free(bend);
    g_free(fdone);
    g_free(bdone);
}

/* ---- inference ------------------------------------------------------------------ */

/* One decode step: every stage in turn (one token crosses the pipeline
 * once). A decode op's time is the larger of its FLOPs at the sustained
 * rate and its memory reads (weights, KV cache) at the memory bandwidth. */
static void emit_decode(wl_t *w)
{
    double b = w->T, dsz = (double)w->dsz, h = w->m.hidden, tp = w->tp;
    double ctx = w->ctx;
    double kv_bytes = b * ctx * 2 * w->kvd_local * dsz;
    double fa = 2 * b * w->attn_mm + 4 * b * ctx * h / tp, ba = w->attn_mm * dsz + kv_bytes;
    double experts_read = 1, fm = 2 * b * w->mlp_mm;
    if (w->m.experts > 0) {
        /* tokens routed uniformly: E (1 - (1 - k/E)^b) distinct experts read */
        double E = w->m.experts, k = w->m.top_k;
        experts_read = E * (1 - pow(1 - k / E, b));
        fm = fm * k + 2 * b * h * E;
    }
    double bm = w->mlp_mm * experts_read * dsz;
    double fh = 2 * b * h * w->m.vocab / tp, bh = h * w->m.vocab / tp * dsz;
    w->f_attn = fa;        /* layer_fwd_s splits by these */
    w->f_mlp = fm;
    int chain = -1;
    for (int s = 0; s < w->pp; s++) {
        wl_pass_t ps;
        pass_init(w, &ps, s, 0, CS_WL_PHASE_DECODE, chain);
        if (has_embed(w, s))
            tp_comm(w, &ps, TRUE, "dec embed");
        for (int l = s * w->Ls; l < (s + 1) * w->Ls; l++) {
            if (!w->split) {
                pass_compute(w, &ps, g_strdup_printf("dec L%d", l), fa + fm, 1, ba + bm);
                continue;
            }
            char *what = g_strdup_printf("dec L%d attn", l);
            pass_compute(w, &ps, g_strdup(what), fa, 1, ba);
            tp_comm(w, &ps, TRUE, what);
            g_free(what);
            what = g_strdup_printf("dec L%d mlp", l);
            pass_compute(w, &ps, g_strdup(what), fm, 1, bm);
            tp_comm(w, &ps, TRUE, what);
            g_free(what);
        }
        if (has_head(w, s))
            pass_compute(w, &ps, g_strdup("dec head"), fh, 1, bh);
        if (s < w->pp - 1)
            pass_comm_peer(w, &ps, CS_WL_GROUP_PP, CS_COLL_SENDRECV, w->act_bytes, s + 1,
                           g_strdup_printf("send dec s%d->s%d", s, s + 1));
        chain = ps.chain;
        pass_clear(&ps);
    }
}

/* ---- shapes: tensors, buckets, units ------------------------------------------- */

static void tensor_add(GArray *a, double elems, int key, gboolean expert)
{
    if (elems <= 0)
        return;
    wl_tensor_t t = { .elems = (guint64)llround(elems), .key = key, .expert = expert };
    g_array_append_val(a, t);
}

/* Linear layer: weight then bias (PyTorch registers them in that order). */
static void linear_add(const wl_t *w, GArray *a, double in, double out, double bias, int key, gboolean expert)
{
    tensor_add(a, in * out, key, expert);
    if (w->m.biases)
        tensor_add(a, bias, key, expert);
}

static void norm_add(const wl_t *w, GArray *a, int key)
{
    tensor_add(a, w->m.hidden, key, FALSE);
    if (w->m.biases)
        tensor_add(a, w->m.hidden, key, FALSE);
}

/* One GPU's tensors of stage s in model.parameters() order. A layer list:
 * one tensor per layer. A transformer: Megatron's
 * shards (column-parallel q, k, v, MLP up/gate with their biases split,
 * row-parallel o and down with whole biases, vocabulary-parallel embedding
 * and head; norms and the router replicated; K/V heads replicated when
 * tp > kv_heads). A model known by its size: each layer's parameters as a
 * GPT block's (four attention matrices of 1/12, two MLP matrices of 4/12). */
static GArray *stage_tensors(const wl_t *w, int s)
{
    GArray *a = g_array_new(FALSE, FALSE, sizeof(wl_tensor_t));
    double tp = w->tp;
    if (w->m.layer_params != NULL) {
        /* a layer of a list: one tensor (weight and bias together), ready
         * when its backward ends */
        for (int l = s * w->Ls; l < (s + 1) * w->Ls; l++)
            tensor_add(a, w->m.layer_params[l], 2 * l, FALSE);
        return a;
    }
    if (!w->shapes) {
        double per = w->m.params / w->L;
        for (int l = s * w->Ls; l < (s + 1) * w->Ls; l++) {
            for (int i = 0; i < 4; i++)
                tensor_add(a, per / 12, 2 * l, FALSE);
            for (int i = 0; i < 2; i++)
                tensor_add(a, per * 4 / 12, 2 * l + 1, FALSE);
        }
        return a;
    }
    double h = w->m.hidden, ffn = w->m.ffn, kvd = w->kvd_local;
    if (has_embed(w, s)) {
        tensor_add(a, w->m.vocab / tp * h, -1, FALSE);
        tensor_add(a, (double)w->m.positions * h, -1, FALSE);
    }
    int nexp = w->m.experts > 0 ? w->m.experts / w->ep : 1;
    for (int l = s * w->Ls; l < (s + 1) * w->Ls; l++) {
        int ka = 2 * l, km = 2 * l + 1;
        norm_add(w, a, ka);
        linear_add(w, a, h, h / tp, h / tp, ka, FALSE);       /* q */
        linear_add(w, a, h, kvd, kvd, ka, FALSE);             /* k */
        linear_add(w, a, h, kvd, kvd, ka, FALSE);             /* v */
        linear_add(w, a, h / tp, h, h, ka, FALSE);            /* o */
        norm_add(w, a, km);
        if (w->m.experts > 0)
            tensor_add(a, h * w->m.experts, km, FALSE);       /* router */
        for (int e = 0; e < nexp; e++) {
            gboolean ex = w->m.experts > 0;
            if (w->m.gated_mlp)
                linear_add(w, a, h, ffn / tp, ffn / tp, km, ex);   /* gate */
            linear_add(w, a, h, ffn / tp, ffn / tp, km, ex);       /* up */
            linear_add(w, a, ffn / tp, h, h, km, ex);              /* down */
        }
    }
    if (has_head(w, s)) {
        norm_add(w, a, 2 * w->L);
        /* tied: the head is the embedding; with pp > 1 the last stage holds a copy (Megatron) */
        if (!w->m.tied_embeddings || w->pp > 1)
            tensor_add(a, w->m.vocab / tp * h, 2 * w->L, FALSE);
    }
    return a;
}

/* Which tensors a list of buckets holds. */
typedef enum { WL_PICK_ALL = 0, WL_PICK_DENSE, WL_PICK_EXPERT, WL_PICK_NONE } wl_pick_t;

/* PyTorch's reducer (reducer.cpp compute_bucket_assignment_by_size, run
 * again by rebuild_buckets on the gradient-ready order after the first
 * iteration): each tensor joins the open bucket; a bucket closes once it
 * holds at least the current limit, the first limit 1 MiB, then the cap.
 * A tensor larger than the cap closes the bucket it joins. */
static GArray *stage_buckets(const wl_t *w, GArray *tensors, wl_pick_t pick)
{
    GArray *b = g_array_new(FALSE, FALSE, sizeof(wl_bucket_t));
    double cap = w->spec->bucket_cap_mb * MIB, limit = FIRST_BUCKET_BYTES;
    wl_bucket_t open = { 0 };
    for (int i = pick == WL_PICK_NONE ? -1 : (int)tensors->len - 1; i >= 0; i--) {
        const wl_tensor_t *t = &g_array_index(tensors, wl_tensor_t, i);
        if ((pick == WL_PICK_DENSE && t->expert) || (pick == WL_PICK_EXPERT && !t->expert))
            continue;
        open.bytes += t->elems * w->dsz;
        open.key = t->key;
        open.ntensors++;
        if ((double)open.bytes >= limit) {
            g_array_append_val(b, open);
            memset(&open, 0, sizeof open);
            limit = cap;
        }
    }
    if (open.ntensors > 0)
        g_array_append_val(b, open);
    return b;
}

/* FSDP units of stage s: Ls / units consecutive layers each; the
 * embedding joins the first unit, the final norm and the head the last. */
static guint64 *stage_units(const wl_t *w, int s, GArray *tensors)
{
    guint64 *u = g_new0(guint64, w->units);
    for (guint i = 0; i < tensors->len; i++) {
        const wl_tensor_t *t = &g_array_index(tensors, wl_tensor_t, i);
        int k;
        if (t->key < 0)
            k = 0;
        else if (t->key >= 2 * w->L)
            k = w->units - 1;
        else
            k = unit_of_layer(w, s, t->key / 2);
        u[k] += t->elems * w->dsz;
    }
    return u;
}

/* ---- checks ------------------------------------------------------------------------ */

#define INPUT_ERROR(...) (g_set_error(err, CS_ERROR, CS_ERROR_INPUT, __VA_ARGS__), FALSE)

/* A count: negative is an error, zero takes the default. */
static gboolean count_arg(int v, int dflt, const char *key, int *out, GError **err)
{
    if (v < 0)
        return INPUT_ERROR("%s = %d; expected a positive integer (or 0 for the default, %d)", key, v, dflt);
    *out = v > 0 ? v : dflt;
    return TRUE;
}

static gboolean size_arg(double v, const char *what, guint64 *out, GError **err)
{
    if (!(v >= 1) || v > MAX_SIZE)
        return INPUT_ERROR("%s = %.6g bytes; expected 1 byte to %.0e bytes", what, v, MAX_SIZE);
    *out = (guint64)llround(v);
    return TRUE;
}

/* The parallel layout: world = tp x dp x pp, ep within dp. */
static gboolean check_layout(wl_t *w, const cs_wl_spec_t *sp, int world, GError **err)
{
    if (world < 1)
        return INPUT_ERROR("world = %d GPUs; expected at least 1", world);
    int dp0 = sp->dp;
    if (!count_arg(sp->tp, 1, "tp", &w->tp, err) || !count_arg(sp->pp, 1, "pp", &w->pp, err) ||
        !count_arg(sp->ep, 1, "ep", &w->ep, err))
        return FALSE;
    if (dp0 < 0)
        return INPUT_ERROR("dp = %d; expected a positive integer (or 0: the GPUs left, world / (tp x pp))", dp0);
    if (world % w->tp != 0)
        return INPUT_ERROR("tp = %d does not divide %d GPUs; expected a divisor of %d", w->tp, world, world);
    if ((world / w->tp) % w->pp != 0)
        return INPUT_ERROR("pp = %d does not divide %d GPUs / tp %d = %d; expected a divisor of %d", w->pp, world,
                           w->tp, world / w->tp, world / w->tp);
    int left = world / (w->tp * w->pp);
    if (dp0 > 0 && dp0 != left)
        return INPUT_ERROR("dp = %d: tp %d x dp %d x pp %d = %lld, not the %d GPUs; expected dp = %d (or 0)", dp0,
                           w->tp, dp0, w->pp, (long long)w->tp * dp0 * w->pp, world, left);
    w->dp = left;
    if (sp->mode == CS_WL_INFER && w->dp != 1)
        return INPUT_ERROR("mode = infer decodes on one model replica: tp %d x pp %d = %d, not the %d GPUs; "
                           "expected tp x pp = %d", w->tp, w->pp, w->tp * w->pp, world, world);
    if (w->dp % w->ep != 0)
        return INPUT_ERROR("ep = %d does not divide dp = %d; expected a divisor of %d", w->ep, w->dp, w->dp);
    w->world = world;
    return TRUE;
}

/* The model's shapes against the layout. */
static gboolean check_model(wl_t *w, const cs_wl_spec_t *sp, GError **err)
{
    cs_wl_model_t *m = &w->m;
    *m = sp->model;
    if (m->layers <= 0)
        return INPUT_ERROR("layers = %d; expected the number of transformer layers (> 0)", m->layers);
    if (m->hidden < 0 || m->ffn < 0 || m->heads < 0 || m->kv_heads < 0 || m->vocab < 0 || m->positions < 0 ||
        m->experts < 0 || m->top_k < 0) {
        const char *k = m->hidden < 0 ? "hidden" : m->ffn < 0 ? "ffn" : m->heads < 0 ? "heads"
                      : m->kv_heads < 0 ? "kv-heads" : m->vocab < 0 ? "vocab" : m->positions < 0 ? "positions"
                      : m->experts < 0 ? "experts" : "top-k";
        return INPUT_ERROR("%s is negative; expected 0 or more", k);
    }
    if (!(m->params >= 0) || !isfinite(m->params))
        return INPUT_ERROR("params = %g; expected a parameter count (>= 0)", m->params);
    if (m->layer_params != NULL || m->nlayer_params != 0) {
        if (m->layer_params == NULL || m->nlayer_params != m->layers)
            return INPUT_ERROR("layer-params lists %d layers but layers = %d; expected one count per layer",
                               m->layer_params != NULL ? m->nlayer_params : 0, m->layers);
        if (m->hidden > 0)
            return INPUT_ERROR("layer-params with hidden = %d; expected a layer list or a transformer's shapes, "
                               "not both", m->hidden);
        double sum = 0;
        for (int l = 0; l < m->nlayer_params; l++) {
            double x = m->layer_params[l];
            if (!(x >= 0) || !isfinite(x))
                return INPUT_ERROR("layer-params: layer %d has %g parameters; expected 0 or more", l, x);
            sum += x;
        }
        if (!(sum >= 1))
            return INPUT_ERROR("layer-params sum to %g parameters; expected a layer with parameters", sum);
        if (m->params > 0 && fabs(m->params - sum) > 0.5)
            return INPUT_ERROR("params = %.0f but layer-params sum to %.0f; expected their sum (or params unset)",
                               m->params, sum);
        m->params = sum;
    }
    w->shapes = m->hidden > 0;
    if (!w->shapes) {
        if (m->params <= 0)
            return INPUT_ERROR("hidden = 0 and params = 0; expected the model's shapes (hidden, heads, ...) "
                               "or its parameter count (params)");
        const char *need = sp->mode == CS_WL_INFER ? "mode = infer" : w->tp > 1 ? "tp > 1"
                         : w->pp > 1 ? "pp > 1" : w->ep > 1 || m->experts > 0 ? "experts" : NULL;
        if (need)
            return INPUT_ERROR("hidden = 0 (a model known by params only), but %s needs the model's shapes; "
                               "expected hidden, heads, ffn, vocab", need);
    } else {
        if (m->heads == 0)
            return INPUT_ERROR("heads = 0 with hidden = %d; expected the number of attention heads", m->hidden);
        if (m->hidden % m->heads != 0)
            return INPUT_ERROR("heads = %d does not divide hidden = %d; expected a divisor of %d", m->heads,
                               m->hidden, m->hidden);
        if (m->kv_heads == 0)
            m->kv_heads = m->heads;
        if (m->kv_heads > m->heads || m->heads % m->kv_heads != 0)
            return INPUT_ERROR("kv-heads = %d does not divide heads = %d; expected a divisor of %d", m->kv_heads,
                               m->heads, m->heads);
        if (m->ffn == 0)
            m->ffn = 4 * m->hidden;
        if (m->heads % w->tp != 0)
            return INPUT_ERROR("tp = %d does not divide heads = %d; expected a divisor of %d", w->tp, m->heads,
                               m->heads);
        if (m->kv_heads % w->tp != 0 && w->tp % m->kv_heads != 0)
            return INPUT_ERROR("tp = %d and kv-heads = %d: neither divides the other; expected tp dividing %d or "
                               "a multiple of it", w->tp, m->kv_heads, m->kv_heads);
        if (m->ffn % w->tp != 0)
            return INPUT_ERROR("tp = %d does not divide ffn = %d; expected a divisor of %d", w->tp, m->ffn, m->ffn);
    }
    if (m->layers % w->pp != 0)
        return INPUT_ERROR("pp = %d does not divide layers = %d; expected a divisor of %d", w->pp, m->layers,
                           m->layers);
    if (m->experts > 0 && (m->top_k < 1 || m->top_k > m->experts))
        return INPUT_ERROR("top-k = %d with experts = %d; expected 1 to %d experts per token", m->top_k, m->experts,
                           m->experts);
    if (w->ep > 1 && m->experts == 0)
        return INPUT_ERROR("ep = %d needs a mixture-of-experts model (experts = 0); expected ep = 1 or experts", w->ep);
    if (m->experts > 0 && m->experts % w->ep != 0)
        return INPUT_ERROR("ep = %d does not divide experts = %d; expected a divisor of %d", w->ep, m->experts,
                           m->experts);
    w->L = m->layers;
    w->Ls = m->layers / w->pp;
    return TRUE;
}

static gboolean check_run(wl_t *w, const cs_wl_spec_t *sp, double gpu_flops, double mem_bw, GError **err)
{
    if ((unsigned)sp->dtype >= CS_DTYPE_COUNT)
        return INPUT_ERROR("dtype = %d; expected a data type (bf16, fp16, float, ...)", (int)sp->dtype);
    w->dsz = cs_dtype_size(sp->dtype);
    int batch;
    if (!count_arg(sp->micro_batch, 1, "micro-batch", &w->mb, err) ||
        !count_arg(sp->seq_len, 2048, "seq-len", &w->seq, err) ||
        !count_arg(sp->micro_batches, 1, "micro-batches", &w->M, err) ||
        !count_arg(sp->batch, 1, "batch", &batch, err) || !count_arg(sp->context, w->seq, "context", &w->ctx, err))
        return FALSE;
    if (sp->shard == CS_WL_SHARD_FULL && sp->mode == CS_WL_INFER)
        return INPUT_ERROR("data-parallel = fsdp shards training state; expected data-parallel = ddp with mode = infer");
    if (sp->shard == CS_WL_SHARD_FULL && w->ep > 1)
        return INPUT_ERROR("data-parallel = fsdp with ep = %d is not modelled; expected ep = 1 (or data-parallel = ddp)", w->ep);
    int fu;
    if (!count_arg(sp->fsdp_units, w->L, "fsdp-units", &fu, err))
        return FALSE;
    if (fu % w->pp != 0 || w->L % fu != 0)
        return INPUT_ERROR("fsdp-units = %d: %s; expected a divisor of layers = %d that pp = %d divides", fu,
                           w->L % fu != 0 ? "does not divide the layers" : "not a multiple of pp", w->L, w->pp);
    w->units = fu / w->pp;
    if (!(sp->bucket_cap_mb >= 0) || !isfinite(sp->bucket_cap_mb))
        return INPUT_ERROR("bucket-cap-mb = %g; expected a bucket size in MiB (> 0)", sp->bucket_cap_mb);
    if (!(sp->layer_fwd_s >= 0) || !isfinite(sp->layer_fwd_s))
        return INPUT_ERROR("layer-time = %g; expected seconds (>= 0)", sp->layer_fwd_s);
    if (sp->layer_fwd_s == 0 && !(gpu_flops > 0 && isfinite(gpu_flops)))
        return INPUT_ERROR("tflops: the GPU's sustained FLOP/s is unknown (%g); expected tflops > 0 or layer-time",
                           gpu_flops);
    w->gpu_flops = gpu_flops;
    w->mem_bw = mem_bw > 0 && isfinite(mem_bw) ? mem_bw : 0;
    double dsz = (double)w->dsz, h = w->m.hidden, tp = w->tp;
    w->T = sp->mode == CS_WL_INFER ? batch : (double)w->mb * w->seq;
    if (w->shapes) {
        if (!size_arg(w->T * h * dsz, sp->mode == CS_WL_INFER ? "batch x hidden x dtype" :
                      "micro-batch x seq-len x hidden x dtype", &w->act_bytes, err))
            return FALSE;
        if (w->m.experts > 0 &&
            !size_arg(w->T * w->m.top_k * (h / tp) * dsz, "the all-to-all size (tokens x top-k x hidden / tp x dtype)",
                      &w->a2a_bytes, err))
            return FALSE;
    }
    double est = (double)w->M * w->L * 24 + (double)w->M * w->pp * 8 + (double)w->L * 40;
    if (sp->mode == CS_WL_TRAIN && est > MAX_OPS)
        return INPUT_ERROR("micro-batches = %d x layers = %d makes a plan of about %.0f ops; expected under %d "
                           "(fewer micro-batches)", w->M, w->L, est, MAX_OPS);
    return TRUE;
}

/* Per-layer shapes and FLOPs of one GPU. */
static void derive(wl_t *w)
{
    const cs_wl_model_t *m = &w->m;
    double tp = w->tp, T = w->T;
    w->moe_ep = m->experts > 0 && w->ep > 1;
    w->split = w->tp > 1 || w->moe_ep;
    if (!w->shapes) {
        double per = m->params / w->L;
        w->f_attn = 2 * T * per / 3;
        w->f_mlp = 2 * T * per * 2 / 3;
        return;
    }
    double h = m->hidden, hd = h / m->heads;
    int kvl = m->kv_heads >= w->tp ? m->kv_heads / w->tp : 1;
    w->kvd_local = kvl * hd;
    w->attn_mm = 2 * h * h / tp + 2 * h * w->kvd_local;
    w->mlp_mm = (m->gated_mlp ? 3 : 2) * h * m->ffn / tp;
    double s = w->seq, b = w->mb;
    w->f_attn = 2 * T * w->attn_mm + 4 * b * s * s * h / tp;
    w->f_mlp = 2 * T * w->mlp_mm;
    if (m->experts > 0)
        w->f_mlp = w->f_mlp * m->top_k + 2 * T * h * m->experts;
    w->f_head = 2 * T * h * m->vocab / tp;
}

static gboolean build_shapes(wl_t *w, GError **err)
{
    /* With EP, expert gradients are reduced apart, over the dp / ep ranks
     * holding the same experts (EDP), and not at all when dp = ep. */
    wl_pick_t dense = w->moe_ep ? WL_PICK_DENSE : WL_PICK_ALL;
    wl_pick_t expert = w->moe_ep && w->dp > w->ep ? WL_PICK_EXPERT : WL_PICK_NONE;
    w->tensors = g_new0(GArray *, w->pp);
    w->buckets = g_new0(GArray *, w->pp);
    w->ebuckets = g_new0(GArray *, w->pp);
    w->unit_bytes = g_new0(guint64 *, w->pp);
    w->stage_params = g_new0(double, w->pp);
    for (int s = 0; s < w->pp; s++) {
        w->tensors[s] = stage_tensors(w, s);
        for (guint i = 0; i < w->tensors[s]->len; i++)
            w->stage_params[s] += (double)g_array_index(w->tensors[s], wl_tensor_t, i).elems;
        guint64 dummy;
        if (!size_arg(w->stage_params[s] * w->dsz, "a stage's parameters x dtype", &dummy, err))
            return FALSE;
        w->buckets[s] = stage_buckets(w, w->tensors[s], dense);
        w->ebuckets[s] = stage_buckets(w, w->tensors[s], expert);
        w->unit_bytes[s] = stage_units(w, s, w->tensors[s]);
    }
    return TRUE;
}

static void note(wl_t *w, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void note(wl_t *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_ptr_array_add(w->notes, g_strdup_vprintf(fmt, ap));
    va_end(ap);
}

static void write_notes(wl_t *w, const cs_wl_spec_t *sp)
{
    note(w, "Ranks are laid out as Megatron-LM lays them out: rank = t + tp x (d + dp x s), TP fastest, "
            "then DP, then the pipeline stage.");
    if (sp->layer_fwd_s > 0 && w->m.layer_params != NULL)
        note(w, "Compute time is the given %g s per layer forward per micro-batch, backward twice that, the same "
                "for every layer of the list.", sp->layer_fwd_s);
    else if (sp->layer_fwd_s > 0)
        note(w, "Compute time is the given %g s per layer forward per micro-batch, backward twice that, split "
                "between attention, MLP and head by their FLOPs.", sp->layer_fwd_s);
    else
        note(w, "Compute time is FLOPs / %.4g TFLOP/s sustained per GPU; norms, activations, softmax and "
                "the embedding lookup are not counted.", w->gpu_flops / 1e12);
    if (w->m.layer_params != NULL) {
        note(w, "The model is a list of %d layers (layer-params): each layer's parameters are one gradient tensor "
                "(weight and bias together), ready when its backward ends.", w->L);
        if (sp->layer_fwd_s <= 0)
            note(w, "FLOPs of a listed layer are 2 x tokens (micro-batch x seq-len) x its parameters forward: right "
                    "for a fully connected layer; a convolution reuses its weights at every output position and "
                    "costs more (give layer-time, or count output positions in seq-len).");
    } else if (!w->shapes)
        note(w, "The model is known by its size only: FLOPs are 2 x tokens x parameters forward (no attention "
                "term), and each layer's parameters are split as a GPT block's (four matrices of 1/12, two of 4/12).");
    else if (sp->mode == CS_WL_INFER)
        note(w, "FLOPs per layer and token: 2 x matmul parameters + 4 x context x h for attention over the KV cache.");
    else
        note(w, "FLOPs per layer: 2 x tokens x matmul parameters + 4 x b x s^2 x h for attention (Narayanan et "
                "al., SC'21); causal masking saves nothing.");
    note(w, "Compute and NCCL kernels overlap without slowing each other (no SM or memory-bandwidth contention).");
    if (sp->mode == CS_WL_INFER) {
        note(w, "A decode step reads its layer's weights and the KV cache once: time = max(FLOPs / FLOP/s, bytes "
                "/ memory bandwidth).");
        if (w->mem_bw <= 0 && sp->layer_fwd_s <= 0)
            note(w, "The GPU's memory bandwidth is unknown: decode time counts FLOPs only, which underestimates it.");
        if (w->m.experts > 0)
            note(w, "Decode routes tokens uniformly: a batch of b reads E x (1 - (1 - k/E)^b) experts per layer.");
        note(w, "The logits are not gathered across TP ranks (sampling is not modelled).");
    } else {
        note(w, "Backward costs twice the forward FLOPs; activations are not recomputed (no checkpointing).");
        if (w->M > 1 || w->pp > 1)
            note(w, "The pipeline runs %s with %d micro-batches.", sp->pp_sched == CS_WL_PP_GPIPE ?
                 "GPipe (all forwards, then all backwards)" : "1F1B (PipeDream-Flush, Narayanan et al. 2021)", w->M);
        note(w, "The optimizer is Adam in mixed precision, memory-bound: 28 bytes per local parameter (reads of the "
                "fp32 master weight, both moments and the 16-bit gradient, writes of the first three and the 16-bit "
                "weight; the 16 bytes of state per parameter of Rajbhandari et al. 2020, ZeRO) at the memory "
                "bandwidth.");
        if (w->mem_bw <= 0)
            note(w, "The GPU's memory bandwidth is unknown: the optimizer step takes no time.");
        if (sp->shard == CS_WL_SHARD_NONE && w->dp > 1)
            note(w, "DDP buckets follow PyTorch's reducer: gradients in reverse parameter order, the first bucket "
                    "1 MiB, the others %g MiB, all-reduced on one stream in the last micro-batch only (no_sync "
                    "before).", sp->bucket_cap_mb > 0 ? sp->bucket_cap_mb : 25);
        if (sp->shard == CS_WL_SHARD_FULL && w->dp > 1)
            note(w, "FSDP (Zhao et al., VLDB 2023) all-gathers each unit before its forward and its backward and "
                    "reduce-scatters its gradients every micro-batch; the embedding joins the first unit, the head "
                    "the last; %s.", sp->prefetch ? "prefetch keeps at most two units' all-gathers in flight"
                                                  : "no prefetch: each all-gather waits for the unit before");
        if (sp->shard == CS_WL_SHARD_FULL && w->dp == 1)
            note(w, "FSDP over one DP rank moves nothing: no all-gathers or reduce-scatters.");
        if (w->moe_ep && w->dp > w->ep && sp->shard == CS_WL_SHARD_NONE)
            note(w, "Expert gradients have their own buckets (Megatron-LM's DDP keeps expert parameters in a separate "
                    "grad buffer), all-reduced on the expert-data-parallel group (EDP: the %d DP ranks holding the "
                    "same experts, DP indices j, j + ep, ...) on its own NCCL stream; the other buckets on DP.",
                 w->dp / w->ep);
        if (w->moe_ep && w->dp == w->ep)
            note(w, "Expert gradients are not reduced: with ep = dp each expert's parameters live on one DP rank "
                    "(Megatron-LM's expert-data-parallel group has one rank).");
        if (w->moe_ep)
            note(w, "Tokens are routed evenly over the experts (no load imbalance, no dropped tokens).");
        if (w->pp > 1 && w->m.tied_embeddings && w->m.vocab > 0)
            note(w, "The last stage holds a copy of the tied embedding; the embedding-gradient all-reduce between "
                    "the first and last stages is not modelled.");
    }
    if (w->tp > 1 && w->m.vocab > 0 && sp->mode == CS_WL_INFER)
        note(w, "TP includes the vocabulary-parallel embedding's all-reduce.");
    if (w->tp > 1 && w->m.vocab > 0 && sp->mode == CS_WL_TRAIN)
        note(w, "TP includes the vocabulary-parallel embedding's %s and the LM head's input-gradient %s; the "
                "cross-entropy's small all-reduces are not modelled.",
             sp->sequence_parallel ? "reduce-scatter" : "all-reduce", sp->sequence_parallel ? "reduce-scatter" : "all-reduce");
    if (w->tp > 1 && sp->sequence_parallel && sp->mode == CS_WL_TRAIN)
        note(w, "Sequence parallelism replaces each TP all-reduce by a reduce-scatter and an all-gather of the same "
                "size (Korthikanti et al. 2022).");
    if (w->pp > 1)
        note(w, "Pipeline stages send whole activations (no scatter-gather across TP ranks).");
}

/* ---- the plan ------------------------------------------------------------------------ */

static void ops_free(cs_wl_op_t *ops, int n)
{
    for (int i = 0; i < n; i++) {
        g_free(ops[i].label);
        g_free(ops[i].deps);
    }
    g_free(ops);
}

static void wl_clear(wl_t *w)
{
    for (int s = 0; s < w->pp; s++) {
        if (w->tensors && w->tensors[s])
            g_array_free(w->tensors[s], TRUE);
        if (w->buckets && w->buckets[s])
            g_array_free(w->buckets[s], TRUE);
        if (w->ebuckets && w->ebuckets[s])
            g_array_free(w->ebuckets[s], TRUE);
        if (w->unit_bytes)
            g_free(w->unit_bytes[s]);
    }
    g_free(w->tensors);
    g_free(w->buckets);
    g_free(w->ebuckets);
    g_free(w->unit_bytes);
    g_free(w->stage_params);
    g_free(w->stage_flops);
    g_free(w->send_fwd);
    g_free(w->send_bwd);
    g_free(w->fwd_end);
    g_free(w->last_sync);
    g_free(w->last_esync);
    if (w->ops) {
        guint n = w->ops->len;
        ops_free((cs_wl_op_t *)(void *)g_array_free(w->ops, FALSE), (int)n);
    }
    if (w->notes)
        g_ptr_array_free(w->notes, TRUE);
}

/* What one GPU of the busiest stage holds (cs_wl_plan_t.mem_bytes). */
static void plan_memory(const wl_t *w, const cs_wl_spec_t *sp, cs_wl_plan_t *p)
{
    double dsz = (double)w->dsz, best = 0, params = 0, kv = 0;
    /* training: 16-bit weights and gradients, fp32 master (none when the
     * weights are fp32) and two fp32 moments, a local parameter */
    double per = 2 * dsz + (dsz < 4 ? 4 : 0) + 8;
    for (int s = 0; s < w->pp; s++) {
        double local = w->stage_params[s], b, k = 0;
        if (sp->mode == CS_WL_INFER) {
            /* the weights, and K and V of every token of context of each
             * sequence in each of the stage's layers */
            k = w->m.hidden > 0 ? w->T * w->ctx * 2 * w->kvd_local * dsz * w->Ls : 0;
            b = local * dsz + k;
        } else {
            b = local * per / (sp->shard == CS_WL_SHARD_FULL ? w->dp : 1);
        }
        if (b > best) {
            best = b;
            params = local;
            kv = k;
        }
    }
    p->mem_bytes = best;
    if (sp->mode == CS_WL_INFER)
        p->mem_what = kv > 0 ? g_strdup_printf("%.1f GiB of weights (%.4g parameters x %g B) and %.1f GiB of KV "
                                               "cache (%g sequence%s x %d tokens of context)", params * dsz / CS_GIB,
                                               params, dsz, kv / CS_GIB, w->T, w->T == 1 ? "" : "s", w->ctx)
                             : g_strdup_printf("%.1f GiB of weights (%.4g parameters x %g B)", params * dsz / CS_GIB,
                                               params, dsz);
    else {
        g_autofree char *shard = sp->shard == CS_WL_SHARD_FULL && w->dp > 1
            ? g_strdup_printf(", sharded over the %d DP ranks", w->dp) : g_strdup("");
        p->mem_what = g_strdup_printf("%.4g local parameters x %g B: weights and gradients in %s, Adam's fp32 %s"
                                      "moments%s", params, per, cs_dtype_name(sp->dtype),
                                      dsz < 4 ? "master copy and " : "", shard);
    }
}

cs_wl_plan_t *cs_wl_plan_new(const cs_wl_spec_t *spec, int world, double gpu_flops, double gpu_mem_bw,
                             GError **err)
{
    g_return_val_if_fail(spec != NULL, NULL);
    wl_t w = { .spec = spec };
    if (spec->mode != CS_WL_TRAIN && spec->mode != CS_WL_INFER) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "mode = %d; expected train or infer", (int)spec->mode);
        return NULL;
    }
    cs_wl_spec_t sp = *spec;
    if (sp.bucket_cap_mb == 0)
        sp.bucket_cap_mb = 25;
    w.spec = &sp;
    if (!check_layout(&w, &sp, world, err) || !check_model(&w, &sp, err) ||
        !check_run(&w, &sp, gpu_flops, gpu_mem_bw, err))
        goto fail_clear;
    derive(&w);
    if (!build_shapes(&w, err))
        goto fail_clear;
    w.ops = g_array_new(FALSE, FALSE, sizeof(cs_wl_op_t));
    w.notes = g_ptr_array_new_with_free_func(g_free);
    w.stage_flops = g_new0(double, w.pp);
    w.send_fwd = g_new(int, w.pp * w.M);
    w.send_bwd = g_new(int, w.pp * w.M);
    w.fwd_end = g_new(int, w.pp * w.M);
    w.last_sync = g_new(int, w.pp);
    w.last_esync = g_new(int, w.pp);
    for (int i = 0; i < w.pp * w.M; i++)
        w.send_fwd[i] = w.send_bwd[i] = w.fwd_end[i] = -1;
    for (int s = 0; s < w.pp; s++)
        w.last_sync[s] = w.last_esync[s] = -1;
    if (sp.mode == CS_WL_INFER)
        emit_decode(&w);
    else
        emit_training(&w);
    write_notes(&w, &sp);

    cs_wl_plan_t *p = g_new0(cs_wl_plan_t, 1);
    p->mode = sp.mode;
    p->world = w.world;
    p->tp = w.tp;
    p->pp = w.pp;
    p->dp = w.dp;
    p->ep = w.ep;
    p->dtype = sp.dtype;
    p->nops = (int)w.ops->len;
    p->ops = (cs_wl_op_t *)(void *)g_array_free(w.ops, FALSE);
    w.ops = NULL;
    for (int s = 0; s < w.pp; s++)
        p->flops_per_gpu = MAX(p->flops_per_gpu, w.stage_flops[s]);
    p->tokens = sp.mode == CS_WL_INFER ? w.T : w.T * w.M * w.dp;
    plan_memory(&w, &sp, p);
    g_ptr_array_add(w.notes, NULL);
    p->notes = (char **)g_ptr_array_free(w.notes, FALSE);
    w.notes = NULL;
    wl_clear(&w);
    return p;

fail_clear:
    wl_clear(&w);
    return NULL;
}

void cs_wl_plan_add_note(cs_wl_plan_t *p, char *note_owned)
{
    int n = 0;
    while (p->notes != NULL && p->notes[n] != NULL)
        n++;
    p->notes = g_renew(char *, p->notes, n + 2);
    p->notes[n] = note_owned;
    p->notes[n + 1] = NULL;
}

void cs_wl_plan_free(cs_wl_plan_t *p)
{
    if (!p)
        return;
    g_free(p->mem_what);
    ops_free(p->ops, p->nops);
    g_strfreev(p->notes);
    g_free(p);
}
