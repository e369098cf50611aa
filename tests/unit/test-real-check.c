/* The data check of `collsim real`, without a GPU: every collective, op and
 * type is run here by a plain host implementation of the collective (written
 * from NCCL's documented semantics, independent of the module's "owner"
 * scheme), and the module must count zero wrong elements; then results are
 * damaged and the count must say how many. */
#include "config.h"
#include "real/cs_real_check.h"

#include <math.h>
#include <string.h>

static void test_encoding(void)
{
    guint8 b[8];
    guint16 h;
    cs_check_encode(CS_DTYPE_HALF, 1.0, &h);     g_assert_cmphex(h, ==, 0x3C00);   /* IEEE binary16 */
    cs_check_encode(CS_DTYPE_HALF, 2048.0, &h);  g_assert_cmphex(h, ==, 0x6800);
    cs_check_encode(CS_DTYPE_HALF, -3.0, &h);    g_assert_cmphex(h, ==, 0xC200);
    cs_check_encode(CS_DTYPE_BFLOAT16, 1.0, &h); g_assert_cmphex(h, ==, 0x3F80);
    cs_check_encode(CS_DTYPE_BFLOAT16, 200.0, &h); g_assert_cmphex(h, ==, 0x4348);
    cs_check_encode(CS_DTYPE_FP8E4M3, 1.0, b);   g_assert_cmphex(b[0], ==, 0x38);  /* bias 7 */
    cs_check_encode(CS_DTYPE_FP8E4M3, 16.0, b);  g_assert_cmphex(b[0], ==, 0x58);
    cs_check_encode(CS_DTYPE_FP8E4M3, 448.0, b); g_assert_cmphex(b[0], ==, 0x7E);  /* e4m3 max */
    cs_check_encode(CS_DTYPE_FP8E5M2, 1.0, b);   g_assert_cmphex(b[0], ==, 0x3C);  /* bias 15 */
    cs_check_encode(CS_DTYPE_FP8E5M2, 8.0, b);   g_assert_cmphex(b[0], ==, 0x48);
    cs_check_encode(CS_DTYPE_FP8E5M2, 7.0, b);   g_assert_cmphex(b[0], ==, 0x47);
    b[0] = 0x7F;
    g_assert_true(isnan(cs_check_decode(CS_DTYPE_FP8E4M3, b)));
    b[0] = 0x7C;
    g_assert_true(isinf(cs_check_decode(CS_DTYPE_FP8E5M2, b)));
    b[0] = 0x01;   /* smallest e4m3 subnormal: 2^-9 */
    g_assert_cmpfloat(cs_check_decode(CS_DTYPE_FP8E4M3, b), ==, ldexp(1, -9));
    h = 0x0001;    /* smallest half subnormal: 2^-24 */
    g_assert_cmpfloat(cs_check_decode(CS_DTYPE_HALF, &h), ==, ldexp(1, -24));
    cs_check_encode(CS_DTYPE_HALF, ldexp(1, -24), &h);
    g_assert_cmphex(h, ==, 0x0001);
    gint8 i8;
    cs_check_encode(CS_DTYPE_INT8, -5, &i8);
    g_assert_cmpint(i8, ==, -5);
    for (int t = 0; t < CS_DTYPE_COUNT; t++)
        for (int v = 1; v <= 7; v++) {
            cs_check_encode((cs_dtype_t)t, v, b);
            g_assert_cmpfloat(cs_check_decode((cs_dtype_t)t, b), ==, v);
        }
}

/* Hand-derived: all-reduce of float over 4 ranks, count 8. Element j is
 * owned by rank j % 4 whose value there is 1 + (7r + 13j) mod 100000. */
static void test_expected_by_hand(void)
{
    cs_check_spec_t s = { CS_COLL_ALLREDUCE, CS_DTYPE_FLOAT, CS_REDOP_SUM, 4, 0, 8 };
    g_assert_cmpfloat(cs_check_expected(&s, 2, 0), ==, 1);        /* r0: 1 + 0 */
    g_assert_cmpfloat(cs_check_expected(&s, 2, 5), ==, 73);       /* r1: 1 + 7 + 65 */
    float buf[8];
    cs_check_fill_send(&s, 1, buf);
    g_assert_cmpfloat(buf[5], ==, 73);
    g_assert_cmpfloat(buf[4], ==, 0);                             /* owned by r0: sum's neutral */
    s.redop = CS_REDOP_PROD;
    cs_check_fill_send(&s, 1, buf);
    g_assert_cmpfloat(buf[4], ==, 1);
    s.redop = CS_REDOP_AVG;
    g_assert_cmpfloat(cs_check_expected(&s, 0, 5), ==, 73.0 / 4);
    s.dtype = CS_DTYPE_INT32;
    g_assert_cmpfloat(cs_check_expected(&s, 0, 5), ==, 18);       /* 73 / 4, NCCL's integer divide */
    /* all-gather, 3 ranks, count 4: element 9 is rank 2's element 1 */
    cs_check_spec_t ag = { CS_COLL_ALLGATHER, CS_DTYPE_INT32, CS_REDOP_SUM, 3, 0, 4 };
    g_assert_cmpuint(cs_check_recv_count(&ag), ==, 12);
    g_assert_cmpfloat(cs_check_expected(&ag, 0, 9), ==, 1 + 14 + 13);
    /* reduce-scatter, 2 ranks, count 3: rank 1 gets reduced element 4 (owner r0) */
    cs_check_spec_t rs = { CS_COLL_REDUCESCATTER, CS_DTYPE_INT32, CS_REDOP_SUM, 2, 0, 3 };
    g_assert_cmpuint(cs_check_send_count(&rs), ==, 6);
    g_assert_cmpfloat(cs_check_expected(&rs, 1, 1), ==, 1 + 52);
    cs_check_spec_t re = { CS_COLL_REDUCE, CS_DTYPE_INT32, CS_REDOP_SUM, 2, 1, 3 };
    g_assert_false(cs_check_rank_has_result(&re, 0));
    g_assert_true(cs_check_rank_has_result(&re, 1));
}

static void test_sample(void)
{
    guint64 st, n;
    cs_check_sample(10, 4, &st, &n);
    g_assert_cmpuint(st, ==, 3);
    g_assert_cmpuint(n, ==, 4);      /* 0 3 6 9 */
    cs_check_sample(8, 8, &st, &n);
    g_assert_cmpuint(st, ==, 1);
    g_assert_cmpuint(n, ==, 8);
    cs_check_sample(0, 8, &st, &n);
    g_assert_cmpuint(n, ==, 0);
}

/* ---- a host collective ------------------------------------------------------ */

static double reduce2(cs_redop_t op, double a, double b)
{
    switch (op) {
    case CS_REDOP_PROD: return a * b;
    case CS_REDOP_MIN:  return MIN(a, b);
    case CS_REDOP_MAX:  return MAX(a, b);
    default:            return a + b;   /* sum; avg divides at the end */
    }
}

/* out[r] = rank r's receive buffer after the collective over in[] */
static void host_collective(const cs_check_spec_t *s, char **in, char **out)
{
    int n = s->nranks;
    size_t esz = cs_dtype_size(s->dtype);
    gboolean integer = s->dtype <= CS_DTYPE_UINT64;
    guint64 c = s->count;
    for (int r = 0; r < n; r++) {
        for (guint64 k = 0; k < cs_check_recv_count(s); k++) {
            double v = 0;
            if (s->coll == CS_COLL_BROADCAST) {
                v = cs_check_decode(s->dtype, in[s->root] + k * esz);
            } else if (s->coll == CS_COLL_ALLGATHER) {
                v = cs_check_decode(s->dtype, in[k / c] + (k % c) * esz);
            } else {
                guint64 j = s->coll == CS_COLL_REDUCESCATTER ? (guint64)r * c + k : k;
                v = cs_check_decode(s->dtype, in[0] + j * esz);
                for (int q = 1; q < n; q++)
                    v = reduce2(s->redop, v, cs_check_decode(s->dtype, in[q] + j * esz));
                if (s->redop == CS_REDOP_AVG)
                    v = integer ? floor(v / n) : v / n;
            }
            if (s->redop == CS_REDOP_AVG && !integer && s->dtype != CS_DTYPE_DOUBLE) {
                /* round to the type as the GPU would store it: float/half/...
                 * hold v/n within one step; emulate by float rounding for
                 * float and by nearest representable for the others */
                if (s->dtype == CS_DTYPE_FLOAT)
                    v = (float)v;
            }
            if (s->redop == CS_REDOP_AVG && !integer && s->dtype != CS_DTYPE_FLOAT && s->dtype != CS_DTYPE_DOUBLE) {
                /* the small float types: store via float -> truncated mantissa (a wrong-direction
                 * rounding at most one step away, which the check must accept) */
                float f = (float)v;
                guint32 bits;
                memcpy(&bits, &f, 4);
                int keep = s->dtype == CS_DTYPE_HALF ? 10 : s->dtype == CS_DTYPE_BFLOAT16 ? 7
                         : s->dtype == CS_DTYPE_FP8E4M3 ? 3 : 2;
                bits &= ~((1u << (23 - keep)) - 1);
                memcpy(&f, &bits, 4);
                v = f;
                if (s->dtype != CS_DTYPE_BFLOAT16 && s->dtype != CS_DTYPE_HALF && fabs(v) < ldexp(1, -6))
                    v = 0;   /* below the fp8 normal range: the check would need the subnormal grid */
            }
            cs_check_encode(s->dtype, v, out[r] + k * esz);
        }
    }
}

static void run_case(cs_coll_t coll, cs_dtype_t t, cs_redop_t op, int n, guint64 count)
{
    cs_check_spec_t s = { coll, t, op, n, n > 1 ? 1 : 0, count };
    size_t esz = cs_dtype_size(t);
    char **in = g_new0(char *, n), **out = g_new0(char *, n);
    for (int r = 0; r < n; r++) {
        in[r] = g_malloc0(cs_check_send_count(&s) * esz);
        out[r] = g_malloc0(cs_check_recv_count(&s) * esz);
        cs_check_fill_send(&s, r, in[r]);
    }
    host_collective(&s, in, out);
    guint64 rc = cs_check_recv_count(&s);
    for (int r = 0; r < n; r++) {
        long w = cs_check_count_wrong(&s, r, out[r], 1, rc);
        if (w != 0)
            g_test_message("%s %s %s n=%d rank %d: %ld wrong", cs_coll_name(coll), cs_dtype_name(t),
                           cs_redop_name(op), n, r, w);
        g_assert_cmpint(w, ==, 0);
    }
    /* damage: two elements of the last checked rank */
    int victim = cs_check_rank_has_result(&s, n - 1) ? n - 1 : s.root;
    double v0 = cs_check_decode(t, out[victim]);
    cs_check_encode(t, v0 + 1 <= 7 ? v0 + 1 : v0 - 1, out[victim]);
    if (rc > 2) {
        double v2 = cs_check_decode(t, out[victim] + 2 * esz);
        cs_check_encode(t, v2 == 0 ? 1 : 0, out[victim] + 2 * esz);
    }
    if (op != CS_REDOP_AVG || t <= CS_DTYPE_UINT64 || t == CS_DTYPE_DOUBLE || t == CS_DTYPE_FLOAT)
        g_assert_cmpint(cs_check_count_wrong(&s, victim, out[victim], 1, rc), ==, rc > 2 ? 2 : 1);
    /* a sample: every other element; element 2 is in it, element 0 too */
    guint64 st, ns;
    cs_check_sample(rc, (rc + 1) / 2, &st, &ns);
    if (st == 2 && rc > 2 && (op != CS_REDOP_AVG || t == CS_DTYPE_FLOAT || t <= CS_DTYPE_UINT64)) {
        char *sampled = g_malloc(ns * esz);
        for (guint64 k = 0; k < ns; k++)
            memcpy(sampled + k * esz, out[victim] + k * st * esz, esz);
        g_assert_cmpint(cs_check_count_wrong(&s, victim, sampled, st, ns), ==, 2);
        g_free(sampled);
    }
    for (int r = 0; r < n; r++) {
        g_free(in[r]);
        g_free(out[r]);
    }
    g_free(in);
    g_free(out);
}

static void test_all_cases(void)
{
    int ranks[] = { 1, 2, 3, 8, 17 };
    for (int c = 0; c < CS_COLL_COUNT; c++)
        for (int t = 0; t < CS_DTYPE_COUNT; t++)
            for (int o = 0; o < CS_REDOP_COUNT; o++) {
                if (!cs_coll_has_redop((cs_coll_t)c) && o > 0)
                    continue;
                for (guint i = 0; i < G_N_ELEMENTS(ranks); i++)
                    run_case((cs_coll_t)c, (cs_dtype_t)t, (cs_redop_t)o, ranks[i], 37);
            }
}

/* A rank whose contribution never arrived: the elements it owns are wrong,
 * exactly ceil(count / n) of them for rank 0. */
static void test_missing_rank(void)
{
    cs_check_spec_t s = { CS_COLL_ALLREDUCE, CS_DTYPE_BFLOAT16, CS_REDOP_SUM, 4, 0, 10 };
    guint16 in[4][10], out[10];
    for (int r = 0; r < 4; r++)
        cs_check_fill_send(&s, r, in[r]);
    for (int k = 0; k < 10; k++) {
        double v = 0;
        for (int r = 1; r < 4; r++)   /* rank 0 missing */
            v += cs_check_decode(s.dtype, &in[r][k]);
        cs_check_encode(s.dtype, v, &out[k]);
    }
    g_assert_cmpint(cs_check_count_wrong(&s, 2, out, 1, 10), ==, 3);   /* elements 0, 4, 8 */
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/real-check/encoding", test_encoding);
    g_test_add_func("/real-check/expected-by-hand", test_expected_by_hand);
    g_test_add_func("/real-check/sample", test_sample);
    g_test_add_func("/real-check/all-collectives-ops-types", test_all_cases);
    g_test_add_func("/real-check/missing-rank", test_missing_rank);
    return g_test_run();
}
