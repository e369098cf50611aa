/* Workload model (cs_workload.h): presets against their published
 * parameter counts, the plan's ops against hand counts (PyTorch's DDP
 * buckets, FSDP's all-gathers, Megatron's TP collectives, the 1F1B order,
 * a decode step's sizes and times), the group layout, and every input
 * error. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "io/cs_scenario-int.h"
#include "models/cs_workload.h"
#include "util/cs_error.h"

#define KIB 1024ULL
#define MIB_B (1024ULL * 1024ULL)

/* A dense GPT-style custom model without embeddings (vocab 0), so that
 * hand counts stay small: per layer q, k, v, o of h x h, up and down of
 * h x ffn, two RMSNorm weights of h. */
static void spec_custom(cs_wl_spec_t *s, int layers, int hidden, int heads, int ffn)
{
    cs_wl_spec_init(s);
    s->model.layers = layers;
    s->model.hidden = hidden;
    s->model.heads = heads;
    s->model.ffn = ffn;
    s->layer_fwd_s = 1.0;    /* times in units of a layer's forward */
}

static cs_wl_plan_t *plan_ok(const cs_wl_spec_t *s, int world)
{
    GError *err = NULL;
    cs_wl_plan_t *p = cs_wl_plan_new(s, world, 500e12, 3.35e12, &err);
    g_assert_no_error(err);
    g_assert_nonnull(p);
    return p;
}

/* Every op well formed, every dependency earlier in the list (the list is
 * then a topological order), PP ops between neighbouring stages. */
static void check_plan(const cs_wl_plan_t *p)
{
    g_assert_cmpint(p->nops, >, 0);
    for (int i = 0; i < p->nops; i++) {
        const cs_wl_op_t *o = &p->ops[i];
        g_assert_nonnull(o->label);
        g_assert_cmpint(o->stage, >=, 0);
        g_assert_cmpint(o->stage, <, p->pp);
        for (int k = 0; k < o->ndeps; k++) {
            g_assert_cmpint(o->deps[k], >=, 0);
            g_assert_cmpint(o->deps[k], <, i);
        }
        if (o->kind == CS_WL_COMPUTE) {
            g_assert_cmpfloat(o->seconds, >=, 0);
            continue;
        }
        g_assert_cmpuint(o->size, >, 0);
        g_assert_cmpint(cs_wl_group_size(p, o->group), >, 1);
        if (o->group == CS_WL_GROUP_PP) {
            g_assert_cmpint(o->coll, ==, CS_COLL_SENDRECV);
            g_assert_cmpint(abs(o->peer_stage - o->stage), ==, 1);
        }
    }
    g_assert_nonnull(p->notes);
    g_assert_nonnull(p->notes[0]);
}

static int count_comm(const cs_wl_plan_t *p, cs_wl_group_t g, cs_coll_t c)
{
    int n = 0;
    for (int i = 0; i < p->nops; i++)
        n += p->ops[i].kind == CS_WL_COMM && p->ops[i].group == g && p->ops[i].coll == c;
    return n;
}

static int find_op(const cs_wl_plan_t *p, const char *label, int stage, int micro, cs_wl_phase_t phase)
{
    for (int i = 0; i < p->nops; i++)
        if (strcmp(p->ops[i].label, label) == 0 && p->ops[i].stage == stage && p->ops[i].micro == micro &&
            p->ops[i].phase == phase)
            return i;
    return -1;
}

static gboolean has_dep(const cs_wl_op_t *o, int d)
{
    for (int k = 0; k < o->ndeps; k++)
        if (o->deps[k] == d)
            return TRUE;
    return FALSE;
}

/* ---- presets ---------------------------------------------------------------- */

/* Published totals: GPT-3's nominal sizes (Table 2.1; the shapes give
 * 125.2M .. 174.6B, within 2%); Llama and Mixtral's exact counts from their
 * Hugging Face checkpoints, which the shapes must give exactly (e.g.
 * Llama 2 7B: 32 x (4 x 4096^2 + 3 x 4096 x 11008 + 2 x 4096) + 4096 +
 * 2 x 32000 x 4096 = 6,738,415,616). */
static void test_presets(void)
{
    static const struct {
        const char *name;
        double params;
        gboolean exact;
    } cases[] = {
        { "gpt3-125m", 125e6, FALSE }, { "gpt3-350m", 350e6, FALSE }, { "gpt3-760m", 760e6, FALSE },
        { "gpt3-1.3b", 1.3e9, FALSE }, { "gpt3-2.7b", 2.7e9, FALSE }, { "gpt3-6.7b", 6.7e9, FALSE },
        { "gpt3-13b", 13e9, FALSE }, { "gpt3-175b", 175e9, FALSE },
        { "llama2-7b", 6738415616.0, TRUE }, { "llama2-13b", 13015864320.0, TRUE },
        { "llama2-70b", 68976648192.0, TRUE }, { "llama3-8b", 8030261248.0, TRUE },
        { "llama3-70b", 70553706496.0, TRUE }, { "llama3-405b", 405853388800.0, TRUE },
        { "mixtral-8x7b", 46702792704.0, TRUE },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        const cs_wl_model_t *m = cs_wl_model_find(cases[i].name);
        g_assert_nonnull(m);
        g_assert_nonnull(m->source);
        g_assert_nonnull(strstr(cs_wl_model_names(), m->name));
        double got = cs_wl_model_params(m);
        if (cases[i].exact)
            g_assert_cmpfloat(got, ==, cases[i].params);
        else
            g_assert_cmpfloat(fabs(got / cases[i].params - 1), <, 0.02);
    }
    g_assert_true(cs_wl_model_find("LLAMA3_405B") == cs_wl_model_find("llama3-405b"));
    g_assert_true(cs_wl_model_find("mixtral") == cs_wl_model_find("mixtral-8x7b"));
    g_assert_null(cs_wl_model_find("llama9-1t"));
    g_assert_null(cs_wl_model_find(NULL));
    cs_wl_model_t bysize = { .name = "custom", .layers = 10, .params = 1.5e9 };
    g_assert_cmpfloat(cs_wl_model_params(&bysize), ==, 1.5e9);
}

static void test_gpu_peaks(void)
{
    const char *src = NULL;
    g_assert_cmpfloat(cs_wl_gpu_peak_flops("h100-sxm", &src), ==, 989e12);
    g_assert_nonnull(strstr(src, "H100"));
    g_assert_cmpfloat(cs_wl_gpu_peak_flops("H100", NULL), ==, 989e12);     /* catalogue alias */
    g_assert_cmpfloat(cs_wl_gpu_peak_flops("h100-pcie", NULL), ==, 756e12);
    g_assert_cmpfloat(cs_wl_gpu_peak_flops("a100-pcie", NULL), ==, 312e12);
    g_assert_cmpfloat(cs_wl_gpu_peak_flops("b200", NULL), ==, 2.25e15);
    g_assert_cmpfloat(cs_wl_gpu_peak_flops("v100", NULL), ==, 125e12);
    g_assert_cmpfloat(cs_wl_gpu_peak_flops("rtx4090", NULL), ==, 165.2e12);
    src = NULL;
    g_assert_cmpfloat(cs_wl_gpu_peak_flops("gb10", &src), ==, 0);
    g_assert_nonnull(src);
    g_assert_cmpfloat(cs_wl_gpu_peak_flops("tpu-v5", NULL), ==, 0);
}

/* ---- groups ----------------------------------------------------------------- */

/* tp 2, dp 2, pp 2: rank = t + 2 (d + 2 s). */
static void test_groups(void)
{
    cs_wl_spec_t s;
    spec_custom(&s, 4, 256, 4, 1024);
    s.tp = 2;
    s.pp = 2;
    g_autoptr(cs_wl_plan_t) p = plan_ok(&s, 8);
    g_assert_cmpint(p->dp, ==, 2);
    int r[8];
    g_assert_cmpint(cs_wl_group_count(p, CS_WL_GROUP_TP), ==, 2);
    g_assert_cmpint(cs_wl_group_size(p, CS_WL_GROUP_TP), ==, 2);
    cs_wl_group_ranks(p, CS_WL_GROUP_TP, 1, 1, 1, r);         /* d 1, stage 1: 6, 7 */
    g_assert_cmpint(r[0], ==, 6);
    g_assert_cmpint(r[1], ==, 7);
    g_assert_cmpint(cs_wl_group_count(p, CS_WL_GROUP_DP), ==, 2);
    cs_wl_group_ranks(p, CS_WL_GROUP_DP, 0, 0, 1, r);         /* t 1, stage 0: 1, 3 */
    g_assert_cmpint(r[0], ==, 1);
    g_assert_cmpint(r[1], ==, 3);
    cs_wl_group_ranks(p, CS_WL_GROUP_DP, 1, 1, 0, r);         /* t 0, stage 1: 4, 6 */
    g_assert_cmpint(r[0], ==, 4);
    g_assert_cmpint(r[1], ==, 6);
    g_assert_cmpint(cs_wl_group_count(p, CS_WL_GROUP_PP), ==, 4);
    g_assert_cmpint(cs_wl_group_size(p, CS_WL_GROUP_PP), ==, 2);
    cs_wl_group_ranks(p, CS_WL_GROUP_PP, 0, 1, 3, r);         /* t 1, d 1: 3 -> 7 */
    g_assert_cmpint(r[0], ==, 3);
    g_assert_cmpint(r[1], ==, 7);
    cs_wl_group_ranks(p, CS_WL_GROUP_PP, 1, 0, 2, r);         /* t 0, d 1, from stage 1: 6, 2 */
    g_assert_cmpint(r[0], ==, 6);
    g_assert_cmpint(r[1], ==, 2);
    check_plan(p);
    g_assert_cmpstr(cs_wl_group_name(CS_WL_GROUP_EP), ==, "EP");
    g_assert_cmpstr(cs_wl_phase_name(CS_WL_PHASE_SYNC), ==, "sync");

    /* EP: tp 2, dp 4, ep 2: instance i = t + 2 e holds DP indices 2e, 2e + 1;
     * i 3 (t 1, e 1): ranks 1 + 2 x 2 = 5 and 1 + 2 x 3 = 7. */
    cs_wl_spec_t e;
    spec_custom(&e, 2, 256, 4, 1024);
    e.model.experts = 4;
    e.model.top_k = 2;
    e.tp = 2;
    e.ep = 2;
    g_autoptr(cs_wl_plan_t) q = plan_ok(&e, 8);
    g_assert_cmpint(cs_wl_group_count(q, CS_WL_GROUP_EP), ==, 4);
    cs_wl_group_ranks(q, CS_WL_GROUP_EP, 0, 0, 3, r);
    g_assert_cmpint(r[0], ==, 5);
    g_assert_cmpint(r[1], ==, 7);
    check_plan(q);

    /* EDP: the same place j in each EP group: tp 2 x ep 2 = 4 instances
     * i = t + 2 j of dp / ep = 2 ranks, DP indices j and j + 2; i 3 (t 1,
     * j 1): d 1, 3 = ranks 3, 7; i 2 (t 0, j 1): 2, 6; i 1 (t 1, j 0): 1, 5 */
    g_assert_cmpstr(cs_wl_group_name(CS_WL_GROUP_EDP), ==, "EDP");
    g_assert_cmpint(cs_wl_group_count(q, CS_WL_GROUP_EDP), ==, 4);
    g_assert_cmpint(cs_wl_group_size(q, CS_WL_GROUP_EDP), ==, 2);
    static const int want_edp[4][2] = { { 0, 4 }, { 1, 5 }, { 2, 6 }, { 3, 7 } };
    for (int i = 0; i < 4; i++) {
        cs_wl_group_ranks(q, CS_WL_GROUP_EDP, 0, 0, i, r);
        g_assert_cmpint(r[0], ==, want_edp[i][0]);
        g_assert_cmpint(r[1], ==, want_edp[i][1]);
    }
    /* tp 1, dp 8, ep 2, two stages (16 GPUs): 2 instances of 4 ranks;
     * i 1 on stage 1: d 1, 3, 5, 7 = ranks 8 + d */
    e.tp = 1;
    e.pp = 2;
    g_autoptr(cs_wl_plan_t) x = plan_ok(&e, 16);
    g_assert_cmpint(cs_wl_group_count(x, CS_WL_GROUP_EDP), ==, 2);
    g_assert_cmpint(cs_wl_group_size(x, CS_WL_GROUP_EDP), ==, 4);
    cs_wl_group_ranks(x, CS_WL_GROUP_EDP, 1, 1, 1, r);
    for (int k = 0; k < 4; k++)
        g_assert_cmpint(r[k], ==, 8 + 1 + 2 * k);
    check_plan(x);
}

/* ---- DDP buckets ------------------------------------------------------------ */

/* 2 layers, hidden 512, ffn 2048, bf16: per layer q, k, v, o of 512 KiB,
 * up and down of 2 MiB, two norms of 1 KiB. Gradient-ready order: L1 down,
 * up, norm2, o, v, k, q, norm1, then L0 likewise. First limit 1 MiB, then
 * bucket_cap_mb = 1.5 MiB; a bucket closes once it reaches its limit:
 *   0: L1 down                         2048 KiB  (>= 1 MiB)  after bwd L1
 *   1: L1 up                           2048 KiB               after bwd L1
 *   2: L1 norm2, o, v, k               1537 KiB  (>= 1536)    after bwd L1
 *   3: L1 q, norm1, L0 down            2561 KiB  (down joins the open bucket)
 *   4: L0 up                           2048 KiB
 *   5: L0 norm2, o, v, k               1537 KiB
 *   6: L0 q, norm1                      513 KiB  (the rest)    3-6 after bwd L0
 * total 12292 KiB = 2 x (4 x 512 + 2 x 2048 + 2) KiB. */
static void test_ddp_buckets(void)
{
    cs_wl_spec_t s;
    spec_custom(&s, 2, 512, 8, 2048);
    s.bucket_cap_mb = 1.5;
    s.micro_batches = 2;
    g_autoptr(cs_wl_plan_t) p = plan_ok(&s, 2);
    check_plan(p);
    static const guint64 want[] = { 2048 * KIB, 2048 * KIB, 1537 * KIB, 2561 * KIB, 2048 * KIB, 1537 * KIB, 513 * KIB };
    int bwd1 = find_op(p, "bwd L1", 0, 1, CS_WL_PHASE_BACKWARD), bwd0 = find_op(p, "bwd L0", 0, 1, CS_WL_PHASE_BACKWARD);
    g_assert_cmpint(bwd1, >=, 0);
    g_assert_cmpint(bwd0, >=, 0);
    int k = 0;
    for (int i = 0; i < p->nops; i++) {
        const cs_wl_op_t *o = &p->ops[i];
        if (o->kind != CS_WL_COMM)
            continue;
        g_assert_cmpint(o->group, ==, CS_WL_GROUP_DP);
        g_assert_cmpint(o->coll, ==, CS_COLL_ALLREDUCE);
        g_assert_cmpint(o->phase, ==, CS_WL_PHASE_SYNC);
        g_assert_cmpint(o->micro, ==, 1);          /* the last micro-batch only */
        g_assert_cmpint(k, <, (int)G_N_ELEMENTS(want));
        g_assert_cmpuint(o->size, ==, want[k]);
        g_assert_cmpint(o->ndeps, ==, 1);
        g_assert_cmpint(o->deps[0], ==, k < 3 ? bwd1 : bwd0);
        k++;
    }
    g_assert_cmpint(k, ==, 7);
    g_assert_cmpint(find_op(p, "bucket 2 (1.5 MiB)", 0, 1, CS_WL_PHASE_SYNC), >=, 0);
    /* the optimizer waits for the last bucket */
    const cs_wl_op_t *opt = &p->ops[p->nops - 1];
    g_assert_cmpint(opt->phase, ==, CS_WL_PHASE_OPTIMIZER);
    g_assert_true(has_dep(opt, p->nops - 2));
    /* 28 bytes per parameter: 2 x 3,146,752 parameters at 3.35 TB/s */
    g_assert_cmpfloat(fabs(opt->seconds - 28.0 * 6293504 / 3.35e12), <, 1e-15);

    /* default cap 25 MiB: L1 down alone (the 1 MiB first bucket), then the
     * other 10244 KiB in one bucket */
    s.bucket_cap_mb = 0;
    g_autoptr(cs_wl_plan_t) q = plan_ok(&s, 2);
    g_assert_cmpint(count_comm(q, CS_WL_GROUP_DP, CS_COLL_ALLREDUCE), ==, 2);
    g_assert_cmpint(find_op(q, "bucket 0 (2 MiB)", 0, 1, CS_WL_PHASE_SYNC), >=, 0);
    int last = find_op(q, "bucket 1 (10 MiB)", 0, 1, CS_WL_PHASE_SYNC);
    g_assert_cmpint(last, >=, 0);
    g_assert_cmpuint(q->ops[last].size, ==, 10244 * KIB);

    /* ffn 1024 (up and down 1 MiB), cap 2 MiB: limits reached exactly close
     * their bucket:
     *   0: L1 down                         1024 KiB  (= 1 MiB)    after bwd L1
     *   1: L1 up, norm2, o, v              2049 KiB  (>= 2048)    after bwd L1
     *   2: L1 k, q, norm1, L0 down         2049 KiB               after bwd L0
     *   3: L0 up, norm2, o, v              2049 KiB
     *   4: L0 k, q, norm1                  1025 KiB
     * total 8196 KiB = 2 x (4 x 512 + 2 x 1024 + 2) KiB. */
    cs_wl_spec_t e;
    spec_custom(&e, 2, 512, 8, 1024);
    e.bucket_cap_mb = 2;
    g_autoptr(cs_wl_plan_t) x = plan_ok(&e, 2);
    static const guint64 want_x[] = { 1024 * KIB, 2049 * KIB, 2049 * KIB, 2049 * KIB, 1025 * KIB };
    k = 0;
    for (int i = 0; i < x->nops; i++)
        if (x->ops[i].kind == CS_WL_COMM) {
            g_assert_cmpint(k, <, (int)G_N_ELEMENTS(want_x));
            g_assert_cmpuint(x->ops[i].size, ==, want_x[k]);
            g_assert_cmpstr(x->ops[x->ops[i].deps[0]].label, ==, k < 2 ? "bwd L1" : "bwd L0");
            k++;
        }
    g_assert_cmpint(k, ==, 5);

    /* one DP rank: nothing to reduce */
    g_autoptr(cs_wl_plan_t) r = plan_ok(&s, 1);
    g_assert_cmpint(count_comm(r, CS_WL_GROUP_DP, CS_COLL_ALLREDUCE), ==, 0);
}

/* ---- DDP by a layer list ---------------------------------------------------- */

/* Six layers of 1.5, 1, 0 (a pooling), 0.75, 0.5 and 3 MiB of bf16
 * parameters, one tensor each, bucket_cap_mb 2, 4 DP ranks. Ready order
 * L5 .. L0:
 *   0: L5                   3 MiB     (>= 1 MiB)   after bwd L5
 *   1: L4, L3, L1           2.25 MiB  (>= 2 MiB)   after bwd L1 (L2 has none)
 *   2: L0                   1.5 MiB   (the rest)   after bwd L0
 * 3,538,944 parameters in all. */
static const double list_params[] = { 786432, 524288, 0, 393216, 262144, 1572864 };

static void spec_list(cs_wl_spec_t *s)
{
    cs_wl_spec_init(s);
    s->model.layers = 6;
    s->model.layer_params = list_params;
    s->model.nlayer_params = 6;
    s->bucket_cap_mb = 2;
    s->micro_batch = 32;     /* 32 samples of one "token": 32 tokens per micro-batch */
    s->seq_len = 1;
}

static void test_layer_list(void)
{
    cs_wl_spec_t s;
    spec_list(&s);
    g_autoptr(cs_wl_plan_t) p = plan_ok(&s, 4);
    check_plan(p);
    static const guint64 want[] = { 3 * MIB_B, 2 * MIB_B + MIB_B / 4, MIB_B + MIB_B / 2 };
    static const char *const after[] = { "bwd L5", "bwd L1", "bwd L0" };
    int k = 0;
    for (int i = 0; i < p->nops; i++) {
        const cs_wl_op_t *o = &p->ops[i];
        if (o->kind == CS_WL_COMM) {
            g_assert_cmpint(o->group, ==, CS_WL_GROUP_DP);
            g_assert_cmpint(k, <, (int)G_N_ELEMENTS(want));
            g_assert_cmpuint(o->size, ==, want[k]);
            g_assert_cmpstr(p->ops[o->deps[0]].label, ==, after[k]);
            k++;
        }
    }
    g_assert_cmpint(k, ==, 3);
    /* FLOPs: 2 x 32 tokens x each layer's parameters forward, twice that
     * backward, at 500 TFLOP/s; the pooling layer costs nothing */
    int f5 = find_op(p, "fwd L5", 0, 0, CS_WL_PHASE_FORWARD), b5 = find_op(p, "bwd L5", 0, 0, CS_WL_PHASE_BACKWARD);
    int f2 = find_op(p, "fwd L2", 0, 0, CS_WL_PHASE_FORWARD);
    g_assert_cmpint(f5, >=, 0);
    g_assert_cmpint(b5, >=, 0);
    g_assert_cmpint(f2, >=, 0);
    g_assert_cmpfloat(p->ops[f5].flops, ==, 2.0 * 32 * 1572864);
    g_assert_cmpfloat(fabs(p->ops[f5].seconds - 2.0 * 32 * 1572864 / 500e12), <, 1e-18);
    g_assert_cmpfloat(p->ops[b5].flops, ==, 4.0 * 32 * 1572864);
    g_assert_cmpfloat(p->ops[f2].seconds, ==, 0);
    g_assert_cmpfloat(p->flops_per_gpu, ==, 6.0 * 32 * 3538944);
    /* the optimizer streams 28 bytes per parameter */
    const cs_wl_op_t *opt = &p->ops[p->nops - 1];
    g_assert_cmpint(opt->phase, ==, CS_WL_PHASE_OPTIMIZER);
    g_assert_cmpfloat(fabs(opt->seconds - 28.0 * 3538944 / 3.35e12), <, 1e-15);

    /* layer-time: every layer of the list the same, the pooling too */
    s.layer_fwd_s = 1e-3;
    g_autoptr(cs_wl_plan_t) q = plan_ok(&s, 4);
    g_assert_cmpfloat(q->ops[find_op(q, "fwd L5", 0, 0, CS_WL_PHASE_FORWARD)].seconds, ==, 1e-3);
    g_assert_cmpfloat(q->ops[find_op(q, "fwd L2", 0, 0, CS_WL_PHASE_FORWARD)].seconds, ==, 1e-3);
    g_assert_cmpfloat(q->ops[find_op(q, "bwd L0", 0, 0, CS_WL_PHASE_BACKWARD)].seconds, ==, 2e-3);

    /* the model refuses lists that do not fit */
    static const double zeros[] = { 0, 0 }, neg[] = { 5, -1 };
    static const struct {
        const double *lp;
        int n, layers, hidden;
        double params;
        const char *msg;
    } bad[] = {
        { list_params, 6, 5, 0, 0, "layer-params lists 6 layers but layers = 5" },
        { list_params, 6, 6, 512, 0, "layer-params with hidden = 512" },
        { zeros, 2, 2, 0, 0, "layer-params sum to 0 parameters" },
        { neg, 2, 2, 0, 0, "layer-params: layer 1 has -1 parameters" },
        { list_params, 6, 6, 0, 3e6, "params = 3000000 but layer-params sum to 3538944" },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        spec_list(&s);
        s.model.layer_params = bad[i].lp;
        s.model.nlayer_params = bad[i].n;
        s.model.layers = bad[i].layers;
        s.model.hidden = bad[i].hidden;
        s.model.heads = bad[i].hidden > 0 ? 8 : 0;
        s.model.params = bad[i].params;
        GError *err = NULL;
        g_assert_null(cs_wl_plan_new(&s, 4, 500e12, 3.35e12, &err));
        g_assert_error(err, CS_ERROR, CS_ERROR_INPUT);
        if (strstr(err->message, bad[i].msg) == NULL)
            g_error("case %zu: '%s' lacks '%s'", i, err->message, bad[i].msg);
        g_error_free(err);
    }
}

/* [workload] layer-params: read (suffixes, spaces, zeros), resolved into
 * layers and params, written back as read; errors name the key's line. */
static void scenario_error(const char *text, gboolean at_load, const char *message)
{
    cs_scenario_t s;
    cs_scenario_init(&s);
    GError *err = NULL;
    gboolean ok = cs_scenario_load_mem(&s, text, strlen(text), "s.ini", &err);
    if (!at_load) {
        g_assert_no_error(err);
        g_assert_true(ok);
        cs_wl_spec_t spec;
        ok = cs_scenario_workload_spec(&s, &spec, &err);
    }
    g_assert_false(ok);
    g_assert_error(err, CS_ERROR, CS_ERROR_INPUT);
    g_assert_cmpstr(err->message, ==, message);
    g_error_free(err);
    cs_scenario_clear(&s);
}

static void test_layer_list_scenario(void)
{
    static const char text[] = "[workload]\nlayer-params = 1.5K, 0,37K ,2.4M\nmicro-batch = 32\nseq-len = 1\n";
    cs_scenario_t s, t;
    cs_scenario_init(&s);
    cs_scenario_init(&t);
    g_autoptr(GError) err = NULL;
    g_assert_true(cs_scenario_load_mem(&s, text, strlen(text), "s.ini", &err));
    g_assert_no_error(err);
    /* a flag replaces the file's value (the old array freed: ASan checks) */
    g_assert_true(cs_scenario_workload_set(&s, "layer-params", "786432,524288,0,393216,262144,1572864",
                                           "collsim: --layer-params", &err));
    g_assert_no_error(err);
    g_assert_cmpstr(cs_scenario_workload_origin(&s, "layer-params"), ==, "collsim: --layer-params");
    cs_wl_spec_t spec;
    g_assert_true(cs_scenario_workload_spec(&s, &spec, &err));
    g_assert_cmpint(spec.model.layers, ==, 6);
    g_assert_cmpint(spec.model.nlayer_params, ==, 6);
    g_assert_cmpfloat(spec.model.params, ==, 3538944);
    g_assert_cmpfloat(cs_wl_model_params(&spec.model), ==, 3538944);
    g_assert_cmpint(spec.model.hidden, ==, 0);
    spec.bucket_cap_mb = 2;
    g_autoptr(cs_wl_plan_t) p = plan_ok(&spec, 4);
    g_assert_cmpint(count_comm(p, CS_WL_GROUP_DP, CS_COLL_ALLREDUCE), ==, 3);
    g_autofree char *ini = cs_scenario_to_ini(&s);
    g_assert_nonnull(strstr(ini, "\nlayer-params=786432,524288,0,393216,262144,1572864\n"));
    g_assert_true(cs_scenario_load_mem(&t, ini, strlen(ini), "back.ini", &err));
    g_assert_no_error(err);
    g_autofree char *again = cs_scenario_to_ini(&t);
    g_assert_cmpstr(ini, ==, again);
    cs_scenario_clear(&s);
    cs_scenario_clear(&t);

    /* suffixes, spaces around entries */
    cs_scenario_init(&s);
    static const char text2[] = "[workload]\nlayer-params = 1.5K, 0,37K ,2.4M\n";
    g_assert_true(cs_scenario_load_mem(&s, text2, strlen(text2), "s.ini", &err));
    g_assert_true(cs_scenario_workload_spec(&s, &spec, &err));
    g_assert_cmpint(spec.model.layers, ==, 4);
    g_assert_cmpfloat(spec.model.layer_params[0], ==, 1500);
    g_assert_cmpfloat(spec.model.layer_params[2], ==, 37000);
    g_assert_cmpfloat(spec.model.params, ==, 1500 + 37000 + 2.4e6);
    cs_scenario_clear(&s);

#define EXPECTED "expected one count per layer in forward order, 0 to 1e15 each, comma-separated, such as 1.7K,0,37K,2.4M"
    scenario_error("[workload]\nlayer-params = 1M,x\n", TRUE,
                   "s.ini:2: layer-params: '1M,x' is not a list of parameter counts (layer 1 is 'x'); " EXPECTED);
    scenario_error("[workload]\nlayer-params = 1K,,2K\n", TRUE,
                   "s.ini:2: layer-params: '1K,,2K' is not a list of parameter counts (layer 1 is ''); " EXPECTED);
    scenario_error("[workload]\nlayer-params = -5\n", TRUE,
                   "s.ini:2: layer-params: '-5' is not a list of parameter counts (layer 0 is '-5'); " EXPECTED);
    scenario_error("[workload]\nlayer-params = 0, 0\n", TRUE,
                   "s.ini:2: layer-params: '0, 0' is not a list of parameter counts (no layer has parameters); " EXPECTED);
#undef EXPECTED
    scenario_error("[workload]\nlayer-params = 1K,2K\nlayers = 3\n", FALSE,
                   "s.ini:3: layers: layers = 3 but layer-params lists 2 layers; expected layers = 2 (or no layers key)");
    scenario_error("[workload]\narch = llama3-8b\nlayer-params = 1K,2K\n", FALSE,
                   "s.ini:3: layer-params: a layer list has no transformer shapes; expected layer-params without arch "
                   "(or arch = custom)");
    scenario_error("[workload]\nlayer-params = 1K,2K\nhidden = 64\n", FALSE,
                   "s.ini:2: layer-params: a layer list has no transformer shapes; expected layer-params without hidden");
    scenario_error("[workload]\nparams = 5K\nlayer-params = 1K,2K\n", FALSE,
                   "s.ini:2: params: params = 5000 but layer-params sum to 3000; expected no params key (or their sum)");
}

/* ---- tensor parallelism ----------------------------------------------------- */

/* Llama 2 7B on tp 8, 2 micro-batches of 1 x 2048: per layer and
 * micro-batch 2 all-reduces forward (after attention, after MLP) and 2
 * backward, plus the embedding's forward and the head's backward one:
 * 2 x (4 x 32 + 2) = 260, each 1 x 2048 x 4096 x 2 bytes = 16 MiB. */
static void test_tp(void)
{
    cs_wl_spec_t s;
    cs_wl_spec_init(&s);
    s.model = *cs_wl_model_find("llama2-7b");
    s.tp = 8;
    s.micro_batches = 2;
    GError *err = NULL;
    g_autoptr(cs_wl_plan_t) p = cs_wl_plan_new(&s, 8, 400e12, 3e12, &err);
    g_assert_no_error(err);
    check_plan(p);
    g_assert_cmpint(p->dp, ==, 1);
    g_assert_cmpint(count_comm(p, CS_WL_GROUP_TP, CS_COLL_ALLREDUCE), ==, 260);
    for (int i = 0; i < p->nops; i++)
        if (p->ops[i].kind == CS_WL_COMM)
            g_assert_cmpuint(p->ops[i].size, ==, 16 * MIB_B);
    /* the chain: attention, its all-reduce, MLP (Megatron's g after each) */
    int a = find_op(p, "fwd L3 attn", 0, 1, CS_WL_PHASE_FORWARD);
    g_assert_cmpint(a, >=, 0);
    g_assert_cmpstr(p->ops[a + 1].label, ==, "fwd L3 attn AR");
    g_assert_true(has_dep(&p->ops[a + 1], a));
    g_assert_cmpstr(p->ops[a + 2].label, ==, "fwd L3 mlp");
    g_assert_true(has_dep(&p->ops[a + 2], a + 1));
    /* backward: MLP, f's all-reduce, attention */
    int b = find_op(p, "bwd L3 mlp", 0, 0, CS_WL_PHASE_BACKWARD);
    g_assert_cmpstr(p->ops[b + 1].label, ==, "bwd L3 mlp AR");
    g_assert_cmpstr(p->ops[b + 2].label, ==, "bwd L3 attn");
    /* FLOPs: attention of layer 3 on one GPU = 2 x 2048 x (4 x 4096^2 / 8)
     * + 4 x 2048^2 x 4096 / 8; backward twice */
    double fa = 2.0 * 2048 * (4.0 * 4096 * 4096 / 8) + 4.0 * 2048 * 2048 * 4096 / 8;
    g_assert_cmpfloat(p->ops[a].flops, ==, fa);
    g_assert_cmpfloat(p->ops[b + 2].flops, ==, 2 * fa);
    g_assert_cmpfloat(fabs(p->ops[a].seconds - fa / 400e12), <, 1e-18);
    g_assert_cmpfloat(p->tokens, ==, 2 * 2048);

    /* sequence parallelism: each all-reduce becomes a reduce-scatter and an
     * all-gather: 260 of each, no all-reduce */
    s.sequence_parallel = TRUE;
    g_autoptr(cs_wl_plan_t) q = cs_wl_plan_new(&s, 8, 400e12, 3e12, &err);
    g_assert_no_error(err);
    check_plan(q);
    g_assert_cmpint(count_comm(q, CS_WL_GROUP_TP, CS_COLL_ALLREDUCE), ==, 0);
    g_assert_cmpint(count_comm(q, CS_WL_GROUP_TP, CS_COLL_REDUCESCATTER), ==, 260);
    g_assert_cmpint(count_comm(q, CS_WL_GROUP_TP, CS_COLL_ALLGATHER), ==, 260);
}

/* FLOPs of a step, Narayanan et al. (SC'21) eq. 3 without recomputation:
 * 3 x (24 b s h^2 + 4 b s^2 h) per layer + 3 x 2 b s h V for the logits,
 * for a GPT layer with ffn 4h and separate K/V of h (12 h^2 matmuls). */
static void test_flops(void)
{
    cs_wl_spec_t s;
    spec_custom(&s, 4, 1024, 16, 4096);
    s.model.vocab = 1000;
    s.layer_fwd_s = 0;
    s.micro_batch = 2;
    s.seq_len = 512;
    s.micro_batches = 3;
    g_autoptr(cs_wl_plan_t) p = plan_ok(&s, 4);
    check_plan(p);
    double b = 2, sq = 512, h = 1024, V = 1000;
    double want = 3 * 3 * (4 * (24 * b * sq * h * h + 4 * b * sq * sq * h) + 2 * b * sq * h * V);
    g_assert_cmpfloat(fabs(p->flops_per_gpu / want - 1), <, 1e-12);
    g_assert_cmpfloat(p->tokens, ==, 2 * 512 * 3 * 4);
}

/* ---- FSDP ------------------------------------------------------------------- */

/* 4 layers, one unit each, dp 4, one micro-batch. Prefetch: AG(u + 1)
 * follows AG(u) on the stream, AG(u + 2) waits for u's compute; backward
 * mirrors it and reduce-scatters each unit after its compute. */
static void test_fsdp(void)
{
    cs_wl_spec_t s;
    spec_custom(&s, 4, 512, 8, 2048);
    s.shard = CS_WL_SHARD_FULL;
    g_autoptr(cs_wl_plan_t) p = plan_ok(&s, 4);
    check_plan(p);
    static const char *want[] = {
        "AG unit 0", "AG unit 1", "fwd L0", "AG unit 2", "fwd L1", "AG unit 3", "fwd L2", "fwd L3",
        "AG unit 3", "AG unit 2", "bwd L3", "RS unit 3", "AG unit 1", "bwd L2", "RS unit 2", "AG unit 0",
        "bwd L1", "RS unit 1", "bwd L0", "RS unit 0", "optimizer",
    };
    g_assert_cmpint(p->nops, ==, G_N_ELEMENTS(want));
    for (int i = 0; i < p->nops; i++)
        g_assert_cmpstr(p->ops[i].label, ==, want[i]);
    /* unit bytes: a layer's 3,146,752 parameters x 2 bytes */
    for (int i = 0; i < p->nops; i++)
        if (p->ops[i].kind == CS_WL_COMM)
            g_assert_cmpuint(p->ops[i].size, ==, 3146752 * 2);
    g_assert_true(has_dep(&p->ops[3], 2));     /* AG unit 2 waits for fwd L0 */
    g_assert_true(has_dep(&p->ops[2], 0));     /* fwd L0 waits for AG unit 0 */
    g_assert_true(has_dep(&p->ops[12], 10));   /* backward AG unit 1 waits for bwd L3 */
    g_assert_cmpint(count_comm(p, CS_WL_GROUP_DP, CS_COLL_ALLGATHER), ==, 8);
    g_assert_cmpint(count_comm(p, CS_WL_GROUP_DP, CS_COLL_REDUCESCATTER), ==, 4);
    /* the optimizer updates a quarter of the parameters */
    g_assert_cmpfloat(fabs(p->ops[p->nops - 1].seconds - 28.0 * 4 * 3146752 / 4 / 3.35e12), <, 1e-15);

    /* no prefetch: each all-gather waits for the unit before */
    s.prefetch = FALSE;
    g_autoptr(cs_wl_plan_t) q = plan_ok(&s, 4);
    static const char *want_np[] = {
        "AG unit 0", "fwd L0", "AG unit 1", "fwd L1", "AG unit 2", "fwd L2", "AG unit 3", "fwd L3",
        "AG unit 3", "bwd L3", "RS unit 3", "AG unit 2", "bwd L2", "RS unit 2", "AG unit 1", "bwd L1",
        "RS unit 1", "AG unit 0", "bwd L0", "RS unit 0", "optimizer",
    };
    g_assert_cmpint(q->nops, ==, G_N_ELEMENTS(want_np));
    for (int i = 0; i < q->nops; i++)
        g_assert_cmpstr(q->ops[i].label, ==, want_np[i]);
    g_assert_true(has_dep(&q->ops[2], 1));     /* AG unit 1 waits for fwd L0 */

    /* 2 units of 2 layers, 3 micro-batches: per micro-batch 2 + 2 gathers
     * and 2 reduce-scatters of twice the size */
    s.prefetch = TRUE;
    s.fsdp_units = 2;
    s.micro_batches = 3;
    g_autoptr(cs_wl_plan_t) r = plan_ok(&s, 4);
    check_plan(r);
    g_assert_cmpint(count_comm(r, CS_WL_GROUP_DP, CS_COLL_ALLGATHER), ==, 12);
    g_assert_cmpint(count_comm(r, CS_WL_GROUP_DP, CS_COLL_REDUCESCATTER), ==, 6);
    g_assert_cmpuint(r->ops[0].size, ==, 2 * 3146752 * 2);
}

/* ---- pipeline ----------------------------------------------------------------- */

/* pp 2, 2 micro-batches, one layer per stage, forward 1, backward 2 time
 * units. 1F1B: stage 0 runs F0 F1 B0 B1 (one warm-up forward), stage 1 F0
 * B0 F1 B1. Slots: s0 F0 [0,1]; s0 F1 [1,2] and s1 F0 [1,2] (stage 0
 * first on a tie); s1 B0 [2,4]; s0 B0 [4,6] and s1 F1 [4,5]; s1 B1 [5,7];
 * s0 B1 [7,9]. Each stage's optimizer follows its last backward. */
static void test_1f1b(void)
{
    cs_wl_spec_t s;
    spec_custom(&s, 2, 256, 4, 1024);
    s.pp = 2;
    s.micro_batches = 2;
    g_autoptr(cs_wl_plan_t) p = plan_ok(&s, 2);
    check_plan(p);
    static const struct {
        const char *label;
        int stage, micro;
    } want[] = {
        { "fwd L0", 0, 0 }, { "send fwd mb0 s0->s1", 0, 0 }, { "fwd L0", 0, 1 }, { "send fwd mb1 s0->s1", 0, 1 },
        { "fwd L1", 1, 0 }, { "bwd L1", 1, 0 }, { "send bwd mb0 s1->s0", 1, 0 }, { "bwd L0", 0, 0 },
        { "fwd L1", 1, 1 }, { "bwd L1", 1, 1 }, { "send bwd mb1 s1->s0", 1, 1 }, { "optimizer", 1, 0 },
        { "bwd L0", 0, 1 }, { "optimizer", 0, 0 },
    };
    g_assert_cmpint(p->nops, ==, G_N_ELEMENTS(want));
    for (int i = 0; i < p->nops; i++) {
        g_assert_cmpstr(p->ops[i].label, ==, want[i].label);
        g_assert_cmpint(p->ops[i].stage, ==, want[i].stage);
        g_assert_cmpint(p->ops[i].micro, ==, want[i].micro);
    }
    /* the receiving stage's compute waits for the send; sends carry
     * 1 x 2048 x 256 x 2 bytes */
    g_assert_true(has_dep(&p->ops[4], 1));
    g_assert_true(has_dep(&p->ops[7], 6));
    g_assert_true(has_dep(&p->ops[8], 3));
    g_assert_cmpuint(p->ops[1].size, ==, 2048 * 256 * 2);
    g_assert_cmpint(p->ops[1].peer_stage, ==, 1);
    g_assert_cmpint(p->ops[6].peer_stage, ==, 0);
    g_assert_cmpint(p->ops[6].phase, ==, CS_WL_PHASE_BACKWARD);

    /* GPipe: all forwards, then all backwards, on each stage */
    s.pp_sched = CS_WL_PP_GPIPE;
    g_autoptr(cs_wl_plan_t) q = plan_ok(&s, 2);
    check_plan(q);
    const char *s1[4];
    int n1 = 0;
    for (int i = 0; i < q->nops; i++)
        if (q->ops[i].stage == 1 && q->ops[i].kind == CS_WL_COMPUTE && q->ops[i].phase != CS_WL_PHASE_OPTIMIZER) {
            g_assert_cmpint(n1, <, 4);
            s1[n1++] = q->ops[i].phase == CS_WL_PHASE_FORWARD ? (q->ops[i].micro ? "F1" : "F0")
                                                              : (q->ops[i].micro ? "B1" : "B0");
        }
    g_assert_cmpint(n1, ==, 4);
    g_assert_cmpstr(s1[0], ==, "F0");
    g_assert_cmpstr(s1[1], ==, "F1");
    g_assert_cmpstr(s1[2], ==, "B0");
    g_assert_cmpstr(s1[3], ==, "B1");
}

/* Several layouts at once: every plan a valid order. */
static void test_orders(void)
{
    static const struct {
        int world, tp, pp, ep, M;
        gboolean sp, fsdp, gpipe, moe;
    } cases[] = {
        { 16, 2, 4, 1, 8, FALSE, FALSE, FALSE, FALSE }, { 16, 2, 4, 1, 3, TRUE, TRUE, FALSE, FALSE },
        { 8, 1, 4, 1, 2, FALSE, FALSE, TRUE, FALSE }, { 16, 2, 2, 2, 4, TRUE, FALSE, FALSE, TRUE },
        { 8, 1, 2, 4, 5, FALSE, FALSE, FALSE, TRUE }, { 4, 4, 1, 1, 1, FALSE, TRUE, FALSE, FALSE },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        cs_wl_spec_t s;
        spec_custom(&s, 8, 512, 8, 2048);
        s.model.vocab = 1024;
        s.model.kv_heads = 2;
        s.model.gated_mlp = TRUE;
        if (cases[i].moe) {
            s.model.experts = 4;
            s.model.top_k = 2;
        }
        s.tp = cases[i].tp;
        s.pp = cases[i].pp;
        s.ep = cases[i].ep;
        s.micro_batches = cases[i].M;
        s.sequence_parallel = cases[i].sp;
        s.shard = cases[i].fsdp ? CS_WL_SHARD_FULL : CS_WL_SHARD_NONE;
        s.pp_sched = cases[i].gpipe ? CS_WL_PP_GPIPE : CS_WL_PP_1F1B;
        g_autoptr(cs_wl_plan_t) p = plan_ok(&s, cases[i].world);
        check_plan(p);
        /* each stage: one optimizer, after all its other ops of the stage's compute */
        for (int st = 0; st < p->pp; st++) {
            int opt = -1, nopt = 0;
            for (int k = 0; k < p->nops; k++)
                if (p->ops[k].stage == st && p->ops[k].phase == CS_WL_PHASE_OPTIMIZER)
                    opt = k, nopt++;
            g_assert_cmpint(nopt, ==, 1);
            for (int k = opt + 1; k < p->nops; k++)
                g_assert_false(p->ops[k].stage == st && p->ops[k].kind == CS_WL_COMPUTE);
        }
    }
}

/* ---- mixture of experts --------------------------------------------------------- */

/* Mixtral 8x7B, ep 8 = dp 8: per layer and micro-batch a dispatch and a
 * combine forward and backward (4 x 32 = 128), each 2048 x top_k 2 x 4096
 * x 2 bytes = 32 MiB; expert gradients need no DP reduction (each EP
 * group is the DP group), so the buckets carry the 1,605,636,096
 * non-expert parameters (46,702,792,704 - 32 x 8 x 3 x 4096 x 14336). */
static void test_moe(void)
{
    cs_wl_spec_t s;
    cs_wl_spec_init(&s);
    s.model = *cs_wl_model_find("mixtral-8x7b");
    s.ep = 8;
    g_autoptr(cs_wl_plan_t) p = plan_ok(&s, 8);
    check_plan(p);
    g_assert_cmpint(count_comm(p, CS_WL_GROUP_EP, CS_COLL_ALLTOALL), ==, 128);
    guint64 bucket_bytes = 0;
    for (int i = 0; i < p->nops; i++) {
        if (p->ops[i].kind == CS_WL_COMM && p->ops[i].group == CS_WL_GROUP_EP)
            g_assert_cmpuint(p->ops[i].size, ==, 32 * MIB_B);
        if (p->ops[i].kind == CS_WL_COMM && p->ops[i].group == CS_WL_GROUP_DP)
            bucket_bytes += p->ops[i].size;
    }
    g_assert_cmpuint(bucket_bytes, ==, 2ULL * 1605636096ULL);
    g_assert_cmpint(count_comm(p, CS_WL_GROUP_EDP, CS_COLL_ALLREDUCE), ==, 0);
    int d = find_op(p, "fwd L5 dispatch", 0, 0, CS_WL_PHASE_FORWARD);
    g_assert_cmpint(d, >=, 0);
    g_assert_cmpstr(p->ops[d + 1].label, ==, "fwd L5 experts");
    g_assert_cmpstr(p->ops[d + 2].label, ==, "fwd L5 combine");
}

/* Expert gradients on the expert-data-parallel group: 2 layers, hidden
 * 512, 4 experts of up and down 512 x 1024 (1 MiB each in bf16), ep 2 on
 * dp 4: each GPU holds 2 experts per layer, reduced over the dp / ep = 2
 * ranks holding the same ones; the dense tensors on DP. bucket_cap_mb 2.
 * Dense gradient-ready order per layer: router (512 x 4: 4 KiB), norm2
 * (1), o, v, k, q (512 each), norm1 (1):
 *   0: L1 router, norm2, o, v          1029 KiB (>= 1 MiB)   after bwd L1 attn
 *   1: L1 k, q, norm1, L0 router, norm2, o, v  2054 KiB     after bwd L0 attn
 *   2: L0 k, q, norm1                  1025 KiB
 * Expert buffer (Megatron-LM keeps it apart), its own first bucket:
 *   0: L1 e1 down                      1 MiB                 after bwd L1 experts
 *   1: L1 e1 up, e0 down               2 MiB
 *   2: L1 e0 up, L0 e1 down            2 MiB                 after bwd L0 experts
 *   3: L0 e1 up, e0 down               2 MiB
 *   4: L0 e0 up                        1 MiB
 * 8 MiB = 2 layers x 2 experts x 2 MiB. */
static void test_moe_edp(void)
{
    cs_wl_spec_t s;
    spec_custom(&s, 2, 512, 8, 1024);
    s.model.experts = 4;
    s.model.top_k = 2;
    s.ep = 2;
    s.bucket_cap_mb = 2;
    g_autoptr(cs_wl_plan_t) p = plan_ok(&s, 4);
    check_plan(p);
    static const guint64 want_dp[] = { 1029 * KIB, 2054 * KIB, 1025 * KIB };
    static const char *const dep_dp[] = { "bwd L1 attn", "bwd L0 attn", "bwd L0 attn" };
    static const guint64 want_edp[] = { 1 * MIB_B, 2 * MIB_B, 2 * MIB_B, 2 * MIB_B, 1 * MIB_B };
    static const char *const dep_edp[] = { "bwd L1 experts", "bwd L1 experts", "bwd L0 experts", "bwd L0 experts",
                                           "bwd L0 experts" };
    int ndp = 0, nedp = 0, last_dp = -1, last_edp = -1;
    for (int i = 0; i < p->nops; i++) {
        const cs_wl_op_t *o = &p->ops[i];
        if (o->kind != CS_WL_COMM || o->phase != CS_WL_PHASE_SYNC)
            continue;
        g_assert_cmpint(o->coll, ==, CS_COLL_ALLREDUCE);
        g_assert_cmpint(o->ndeps, ==, 1);
        if (o->group == CS_WL_GROUP_DP) {
            g_assert_cmpint(ndp, <, (int)G_N_ELEMENTS(want_dp));
            g_assert_cmpuint(o->size, ==, want_dp[ndp]);
            g_assert_cmpstr(p->ops[o->deps[0]].label, ==, dep_dp[ndp]);
            ndp++;
            last_dp = i;
        } else {
            g_assert_cmpint(o->group, ==, CS_WL_GROUP_EDP);
            g_assert_cmpint(nedp, <, (int)G_N_ELEMENTS(want_edp));
            g_assert_cmpuint(o->size, ==, want_edp[nedp]);
            g_assert_cmpstr(p->ops[o->deps[0]].label, ==, dep_edp[nedp]);
            nedp++;
            last_edp = i;
        }
    }
    g_assert_cmpint(ndp, ==, 3);
    g_assert_cmpint(nedp, ==, 5);
    g_assert_cmpint(find_op(p, "expert bucket 1 (2 MiB)", 0, 0, CS_WL_PHASE_SYNC), >=, 0);
    /* the optimizer waits for both streams' last all-reduce */
    const cs_wl_op_t *opt = &p->ops[p->nops - 1];
    g_assert_cmpint(opt->phase, ==, CS_WL_PHASE_OPTIMIZER);
    g_assert_true(has_dep(opt, last_dp));
    g_assert_true(has_dep(opt, last_edp));
    gboolean noted = FALSE;
    for (char **n = p->notes; *n != NULL; n++)
        noted |= strstr(*n, "expert-data-parallel group (EDP: the 2 DP ranks") != NULL;
    g_assert_true(noted);

    /* ep = dp = 4: each expert on one DP rank, nothing to reduce on EDP;
     * ep 1: the experts are dense parameters, all on DP (4108 + 16384 KiB) */
    s.ep = 4;
    g_autoptr(cs_wl_plan_t) q = plan_ok(&s, 4);
    g_assert_cmpint(count_comm(q, CS_WL_GROUP_EDP, CS_COLL_ALLREDUCE), ==, 0);
    g_assert_cmpint(count_comm(q, CS_WL_GROUP_DP, CS_COLL_ALLREDUCE), ==, 3);
    s.ep = 1;
    g_autoptr(cs_wl_plan_t) r = plan_ok(&s, 4);
    g_assert_cmpint(count_comm(r, CS_WL_GROUP_EDP, CS_COLL_ALLREDUCE), ==, 0);
    guint64 dp_bytes = 0;
    for (int i = 0; i < r->nops; i++)
        if (r->ops[i].kind == CS_WL_COMM && r->ops[i].group == CS_WL_GROUP_DP)
            dp_bytes += r->ops[i].size;
    g_assert_cmpuint(dp_bytes, ==, (4108 + 16384) * KIB);
}

/* ---- inference ------------------------------------------------------------------ */

/* Llama 2 70B on tp 8, batch 4, 1024 tokens of context: per layer two
 * all-reduces of 4 x 8192 x 2 bytes, plus the embedding's: 161. Layer 0's
 * attention on one GPU: q and o 8192^2 / 8, K and V one KV head of 128
 * (8 KV heads over 8 GPUs): matmuls 2 x 8192^2/8 + 2 x 8192 x 128 =
 * 18,874,368 parameters (37,748,736 bytes) plus the KV
 * cache 4 x 1024 x 2 x 128 x 2 = 2,097,152 bytes, read at 3.35 TB/s; the
 * FLOPs (2 x 4 x 18,874,368 + 4 x 4 x 1024 x 8192 / 8) take far less. */
static void test_infer(void)
{
    cs_wl_spec_t s;
    cs_wl_spec_init(&s);
    s.mode = CS_WL_INFER;
    s.model = *cs_wl_model_find("llama2-70b");
    s.tp = 8;
    s.batch = 4;
    s.context = 1024;
    GError *err = NULL;
    g_autoptr(cs_wl_plan_t) p = cs_wl_plan_new(&s, 8, 494.5e12, 3.35e12, &err);
    g_assert_no_error(err);
    check_plan(p);
    g_assert_cmpfloat(p->tokens, ==, 4);
    g_assert_cmpint(count_comm(p, CS_WL_GROUP_TP, CS_COLL_ALLREDUCE), ==, 161);
    for (int i = 0; i < p->nops; i++) {
        g_assert_cmpint(p->ops[i].phase, ==, CS_WL_PHASE_DECODE);
        if (p->ops[i].kind == CS_WL_COMM)
            g_assert_cmpuint(p->ops[i].size, ==, 4 * 8192 * 2);
    }
    int a = find_op(p, "dec L0 attn", 0, 0, CS_WL_PHASE_DECODE);
    g_assert_cmpint(a, >=, 0);
    g_assert_cmpfloat(fabs(p->ops[a].seconds - (37748736.0 + 2097152.0) / 3.35e12), <, 1e-18);
    g_assert_cmpfloat(p->ops[a].flops, ==, 2.0 * 4 * 18874368 + 4.0 * 4 * 1024 * 8192 / 8);
    /* MLP: 3 x 8192 x 28672 / 8 = 88,080,384 parameters, 2 bytes each */
    g_assert_cmpfloat(fabs(p->ops[a + 2].seconds - 2 * 88080384.0 / 3.35e12), <, 1e-18);
    g_assert_cmpstr(p->ops[a + 2].label, ==, "dec L0 mlp");

    /* context 0: the KV cache holds seq_len tokens (512 here) */
    s.context = 0;
    s.seq_len = 512;
    g_autoptr(cs_wl_plan_t) c = cs_wl_plan_new(&s, 8, 494.5e12, 3.35e12, &err);
    g_assert_no_error(err);
    a = find_op(c, "dec L0 attn", 0, 0, CS_WL_PHASE_DECODE);
    g_assert_cmpfloat(fabs(c->ops[a].seconds - (37748736.0 + 4.0 * 512 * 2 * 128 * 2) / 3.35e12), <, 1e-18);
    s.context = 1024;

    /* two stages of tp 4: one send of 4 x 8192 x 2 bytes, after stage 0 */
    s.tp = 4;
    s.pp = 2;
    g_autoptr(cs_wl_plan_t) q = cs_wl_plan_new(&s, 8, 494.5e12, 3.35e12, &err);
    g_assert_no_error(err);
    check_plan(q);
    int snd = find_op(q, "send dec s0->s1", 0, 0, CS_WL_PHASE_DECODE);
    g_assert_cmpint(snd, >=, 0);
    g_assert_cmpuint(q->ops[snd].size, ==, 4 * 8192 * 2);
    g_assert_true(has_dep(&q->ops[snd + 1], snd));
    g_assert_cmpint(q->ops[snd + 1].stage, ==, 1);
}

/* ---- errors ------------------------------------------------------------------- */

typedef void (*spec_edit_t)(cs_wl_spec_t *s, int *world, double *flops);

static void e_world(cs_wl_spec_t *s, int *w, double *f) { (void)s; (void)f; *w = 0; }
static void e_tp(cs_wl_spec_t *s, int *w, double *f) { (void)f; s->tp = 3; *w = 16; }
static void e_tp_neg(cs_wl_spec_t *s, int *w, double *f) { (void)w; (void)f; s->tp = -2; }
static void e_pp(cs_wl_spec_t *s, int *w, double *f) { (void)f; s->pp = 3; *w = 4; }
static void e_dp(cs_wl_spec_t *s, int *w, double *f) { (void)f; s->dp = 3; *w = 4; }
static void e_dp_neg(cs_wl_spec_t *s, int *w, double *f) { (void)w; (void)f; s->dp = -1; }
static void e_infer_world(cs_wl_spec_t *s, int *w, double *f) { (void)f; s->mode = CS_WL_INFER; s->tp = 2; *w = 4; }
static void e_ep_dp(cs_wl_spec_t *s, int *w, double *f) { (void)f; s->model.experts = 4; s->model.top_k = 1; s->ep = 4; *w = 6; }
static void e_layers(cs_wl_spec_t *s, int *w, double *f) { (void)w; (void)f; s->model.layers = 0; }
static void e_noshape(cs_wl_spec_t *s, int *w, double *f) { (void)w; (void)f; s->model.hidden = 0; s->model.params = 0; }
static void e_noshape_tp(cs_wl_spec_t *s, int *w, double *f) { (void)f; s->model.hidden = 0; s->model.params = 1e9; s->tp = 2; *w = 2; }
static void e_noshape_infer(cs_wl_spec_t *s, int *w, double *f) { (void)w; (void)f; s->model.hidden = 0; s->model.params = 1e9; s->mode = CS_WL_INFER; }
static void e_heads0(cs_wl_spec_t *s, int *w, double *f) { (void)w; (void)f; s->model.heads = 0; }
static void e_hidden_heads(cs_wl_spec_t *s, int *w, double *f) { (void)w; (void)f; s->model.heads = 5; }
static void e_kv(cs_wl_spec_t *s, int *w, double *f) { (void)w; (void)f; s->model.kv_heads = 3; }
static void e_heads_tp(cs_wl_spec_t *s, int *w, double *f) { (void)f; s->model.heads = 2; s->tp = 4; *w = 4; }
static void e_kv_tp(cs_wl_spec_t *s, int *w, double *f) { (void)f; s->model.heads = 12; s->model.hidden = 768; s->model.kv_heads = 6; s->tp = 4; *w = 4; }
static void e_ffn_tp(cs_wl_spec_t *s, int *w, double *f) { (void)f; s->model.ffn = 1026; s->tp = 4; *w = 4; }
static void e_layers_pp(cs_wl_spec_t *s, int *w, double *f) { (void)f; s->model.layers = 3; s->pp = 2; *w = 2; }
static void e_topk(cs_wl_spec_t *s, int *w, double *f) { (void)w; (void)f; s->model.experts = 4; s->model.top_k = 5; }
static void e_ep_dense(cs_wl_spec_t *s, int *w, double *f) { (void)f; s->ep = 2; *w = 2; }
static void e_experts_ep(cs_wl_spec_t *s, int *w, double *f) { (void)f; s->model.experts = 6; s->model.top_k = 2; s->ep = 4; *w = 4; }
static void e_full_infer(cs_wl_spec_t *s, int *w, double *f) { (void)w; (void)f; s->mode = CS_WL_INFER; s->shard = CS_WL_SHARD_FULL; }
static void e_full_ep(cs_wl_spec_t *s, int *w, double *f) { (void)f; s->model.experts = 2; s->model.top_k = 1; s->ep = 2; s->shard = CS_WL_SHARD_FULL; *w = 2; }
static void e_units(cs_wl_spec_t *s, int *w, double *f) { (void)w; (void)f; s->shard = CS_WL_SHARD_FULL; s->fsdp_units = 3; }
static void e_cap(cs_wl_spec_t *s, int *w, double *f) { (void)w; (void)f; s->bucket_cap_mb = -1; }
static void e_layer_s(cs_wl_spec_t *s, int *w, double *f) { (void)w; (void)f; s->layer_fwd_s = -1; }
static void e_noflops(cs_wl_spec_t *s, int *w, double *f) { (void)w; s->layer_fwd_s = 0; *f = 0; }
static void e_dtype(cs_wl_spec_t *s, int *w, double *f) { (void)w; (void)f; s->dtype = CS_DTYPE_COUNT; }
static void e_mode(cs_wl_spec_t *s, int *w, double *f) { (void)w; (void)f; s->mode = (cs_wl_mode_t)7; }
static void e_mb(cs_wl_spec_t *s, int *w, double *f) { (void)w; (void)f; s->micro_batch = -1; }
static void e_huge(cs_wl_spec_t *s, int *w, double *f) { (void)w; (void)f; s->micro_batch = 1 << 30; s->seq_len = 1 << 30; }
static void e_ops(cs_wl_spec_t *s, int *w, double *f) { (void)w; (void)f; s->micro_batches = 1000000; }
static void e_params(cs_wl_spec_t *s, int *w, double *f) { (void)w; (void)f; s->model.params = -5; }

static void test_errors(void)
{
    static const struct {
        spec_edit_t edit;
        const char *key;
    } cases[] = {
        { e_world, "world = 0" }, { e_tp, "tp = 3 does not divide 16 GPUs; expected a divisor of 16" },
        { e_tp_neg, "tp = -2" }, { e_pp, "pp = 3" }, { e_dp, "dp = 3" }, { e_dp_neg, "dp = -1" },
        { e_infer_world, "mode = infer" }, { e_ep_dp, "ep = 4 does not divide dp = 6" }, { e_layers, "layers = 0" },
        { e_noshape, "hidden = 0 and params = 0" }, { e_noshape_tp, "tp > 1 needs the model's shapes" },
        { e_noshape_infer, "mode = infer needs" }, { e_heads0, "heads = 0" },
        { e_hidden_heads, "heads = 5 does not divide hidden = 512" }, { e_kv, "kv-heads = 3" },
        { e_heads_tp, "tp = 4 does not divide heads = 2" }, { e_kv_tp, "kv-heads = 6" },
        { e_ffn_tp, "ffn = 1026" }, { e_layers_pp, "pp = 2 does not divide layers = 3" },
        { e_topk, "top-k = 5" }, { e_ep_dense, "ep = 2 needs a mixture-of-experts" },
        { e_experts_ep, "ep = 4 does not divide experts = 6" }, { e_full_infer, "data-parallel = fsdp" },
        { e_full_ep, "data-parallel = fsdp with ep = 2" }, { e_units, "fsdp-units = 3" }, { e_cap, "bucket-cap-mb" },
        { e_layer_s, "layer-time" }, { e_noflops, "tflops" }, { e_dtype, "dtype" }, { e_mode, "mode = 7" },
        { e_mb, "micro-batch = -1" }, { e_huge, "micro-batch x seq-len x hidden x dtype" },
        { e_ops, "micro-batches = 1000000" }, { e_params, "params = -5" },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        cs_wl_spec_t s;
        spec_custom(&s, 4, 512, 8, 2048);
        int world = 1;
        double flops = 1e14;
        cases[i].edit(&s, &world, &flops);
        GError *err = NULL;
        cs_wl_plan_t *p = cs_wl_plan_new(&s, world, flops, 1e12, &err);
        if (p != NULL || err == NULL)
            g_error("case %zu (%s): no error", i, cases[i].key);
        g_assert_error(err, CS_ERROR, CS_ERROR_INPUT);
        if (strstr(err->message, cases[i].key) == NULL)
            g_error("case %zu: '%s' lacks '%s'", i, err->message, cases[i].key);
        g_assert_null(strchr(err->message, '\n'));
        g_error_free(err);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/workload/presets", test_presets);
    g_test_add_func("/workload/gpu-peaks", test_gpu_peaks);
    g_test_add_func("/workload/groups", test_groups);
    g_test_add_func("/workload/ddp-buckets", test_ddp_buckets);
    g_test_add_func("/workload/layer-list", test_layer_list);
    g_test_add_func("/workload/layer-list-scenario", test_layer_list_scenario);
    g_test_add_func("/workload/tp", test_tp);
    g_test_add_func("/workload/flops", test_flops);
    g_test_add_func("/workload/fsdp", test_fsdp);
    g_test_add_func("/workload/1f1b", test_1f1b);
    g_test_add_func("/workload/orders", test_orders);
    g_test_add_func("/workload/moe", test_moe);
    g_test_add_func("/workload/moe-edp", test_moe_edp);
    g_test_add_func("/workload/infer", test_infer);
    g_test_add_func("/workload/errors", test_errors);
    return g_test_run();
}
