/* Host-side data fill and verification for `collsim real` (see
 * cs_real_check.h). No CUDA here: the runner copies buffers in and out. */
#include "config.h"
#include "real/cs_real_check.h"

#include <math.h>
#include <string.h>

/* Per type: values are 1..vmax, 'big' > vmax is min's neutral element; all
 * exactly representable: half holds integers to 2048, bfloat16 to 256,
 * fp8 e4m3 to 16 and e5m2 to 8 (their mantissa widths: 10, 7, 3, 2 bits). */
typedef struct { double vmax, big; int mant_bits; gboolean is_float; } type_range_t;

static type_range_t type_range(cs_dtype_t t)
{
    switch (t) {
    case CS_DTYPE_INT8:     return (type_range_t){ 60, 100, 0, FALSE };
    case CS_DTYPE_UINT8:    return (type_range_t){ 200, 250, 0, FALSE };
    case CS_DTYPE_HALF:     return (type_range_t){ 1000, 2000, 10, TRUE };
    case CS_DTYPE_BFLOAT16: return (type_range_t){ 100, 200, 7, TRUE };
    case CS_DTYPE_FP8E4M3:  return (type_range_t){ 12, 16, 3, TRUE };
    case CS_DTYPE_FP8E5M2:  return (type_range_t){ 7, 8, 2, TRUE };
    case CS_DTYPE_FLOAT:    return (type_range_t){ 100000, 1000000, 23, TRUE };
    case CS_DTYPE_DOUBLE:   return (type_range_t){ 100000, 1000000, 52, TRUE };
    default:                return (type_range_t){ 100000, 1000000, 0, FALSE };
    }
}

/* nccl-tests <Coll>GetCollByteCount (v2.19.6): reduce-scatter sends n x
 * count, all-gather receives n x count, alltoall (src/alltoall.cu) sends and
 * receives n x count (count per peer), sendrecv (src/sendrecv.cu) count. */
guint64 cs_check_send_count(const cs_check_spec_t *s)
{
    return s->coll == CS_COLL_REDUCESCATTER || s->coll == CS_COLL_ALLTOALL ? s->count * (guint64)s->nranks : s->count;
}

guint64 cs_check_recv_count(const cs_check_spec_t *s)
{
    return s->coll == CS_COLL_ALLGATHER || s->coll == CS_COLL_ALLTOALL ? s->count * (guint64)s->nranks : s->count;
}

/* nccl-tests sets reportErrors = in_place ? 0 : 1 for alltoall and sendrecv
 * ("We don't support in-place", src/alltoall.cu, src/sendrecv.cu InitData):
 * the in-place result is not checked and #wrong prints N/A. */
gboolean cs_check_in_place_checked(cs_coll_t c)
{
    return !cs_coll_is_p2p(c);
}

gboolean cs_check_rank_has_result(const cs_check_spec_t *s, int rank)
{
    return s->coll != CS_COLL_REDUCE || rank == s->root;
}

/* The value rank r holds at send element j when it is the one that counts. */
static double value(const type_range_t *tr, int r, guint64 j)
{
    return 1 + (double)(((guint64)r * 7 + j * 13) % (guint64)tr->vmax);
}

static gboolean is_reduction(cs_coll_t c)
{
    return c == CS_COLL_ALLREDUCE || c == CS_COLL_REDUCE || c == CS_COLL_REDUCESCATTER;
}

static double neutral(const type_range_t *tr, cs_redop_t op)
{
    switch (op) {
    case CS_REDOP_PROD: return 1;
    case CS_REDOP_MIN:  return tr->big;
    default:            return 0;   /* sum, max (values are >= 1), avg */
    }
}

static double input(const cs_check_spec_t *s, const type_range_t *tr, int r, guint64 j)
{
    if (!is_reduction(s->coll) || j % (guint64)s->nranks == (guint64)r)
        return value(tr, r, j);
    return neutral(tr, s->redop);
}

double cs_check_expected(const cs_check_spec_t *s, int rank, guint64 idx)
{
    type_range_t tr = type_range(s->dtype);
    guint64 n = (guint64)s->nranks;
    switch (s->coll) {
    case CS_COLL_BROADCAST:
        return value(&tr, s->root, idx);
    case CS_COLL_ALLGATHER:
        return value(&tr, (int)(idx / s->count), idx % s->count);
    case CS_COLL_ALLTOALL:
        /* block q of the receive buffer is what rank q sent to this rank:
         * its send block 'rank' (alltoall.cu: send sbuf + peer*count) */
        return value(&tr, (int)(idx / s->count), (guint64)rank * s->count + idx % s->count);
    case CS_COLL_SENDRECV:
        /* from rank-1 (sendrecv.cu: recvPeer = (rank-1+n)%n), as it was sent */
        return value(&tr, (int)(((guint64)rank + n - 1) % n), idx);
    default: {
        /* reductions: element j of the reduced vector is its owner's value */
        guint64 j = s->coll == CS_COLL_REDUCESCATTER ? (guint64)rank * s->count + idx : idx;
        double v = value(&tr, (int)(j % n), j);
        if (s->redop != CS_REDOP_AVG)
            return v;
        return tr.is_float ? v / (double)n : floor(v / (double)n);
    }
    }
}

/* ---- element encoding ------------------------------------------------------ */

/* A small float format (IEEE-like, 'eb' exponent bits, 'mb' mantissa bits)
 * from an exactly representable double. */
static guint32 minifloat_encode(double v, int eb, int mb)
{
    guint32 sign = v < 0 ? 1u : 0u;
    double a = fabs(v);
    if (a == 0)
        return sign << (eb + mb);
    int bias = (1 << (eb - 1)) - 1;
    int e;
    double f = frexp(a, &e);          /* a = f * 2^e, f in [0.5, 1) */
    int E = e - 1 + bias;
    guint32 mant;
    if (E <= 0) {                     /* subnormal */
        mant = (guint32)lround(ldexp(a, bias - 1 + mb));
        E = 0;
    } else {
        mant = (guint32)lround((f * 2 - 1) * (double)(1u << mb));
    }
    return (sign << (eb + mb)) | ((guint32)E << mb) | mant;
}

static double minifloat_decode(guint32 bits, int eb, int mb, gboolean ieee_inf)
{
    int bias = (1 << (eb - 1)) - 1;
    guint32 sign = (bits >> (eb + mb)) & 1u;
    guint32 E = (bits >> mb) & ((1u << eb) - 1);
    guint32 mant = bits & ((1u << mb) - 1);
    double v;
    if (E == 0)
        v = ldexp((double)mant, 1 - bias - mb);
    else if (ieee_inf && E == (1u << eb) - 1)
        v = mant == 0 ? INFINITY : NAN;
    else if (!ieee_inf && E == (1u << eb) - 1 && mant == (1u << mb) - 1)
        v = NAN;                      /* e4m3 (OCP "fn"): no infinities, one NaN */
    else
        v = ldexp((double)(mant | (1u << mb)), (int)E - bias - mb);
    return sign ? -v : v;
}

void cs_check_encode(cs_dtype_t t, double v, void *elem)
{
    switch (t) {
    case CS_DTYPE_INT8:   { gint8 x = (gint8)v; memcpy(elem, &x, 1); break; }
    case CS_DTYPE_UINT8:  { guint8 x = (guint8)v; memcpy(elem, &x, 1); break; }
    case CS_DTYPE_INT32:  { gint32 x = (gint32)v; memcpy(elem, &x, 4); break; }
    case CS_DTYPE_UINT32: { guint32 x = (guint32)v; memcpy(elem, &x, 4); break; }
    case CS_DTYPE_INT64:  { gint64 x = (gint64)v; memcpy(elem, &x, 8); break; }
    case CS_DTYPE_UINT64: { guint64 x = (guint64)v; memcpy(elem, &x, 8); break; }
    case CS_DTYPE_FLOAT:  { float x = (float)v; memcpy(elem, &x, 4); break; }
    case CS_DTYPE_DOUBLE: memcpy(elem, &v, 8); break;
    case CS_DTYPE_HALF:   { guint16 x = (guint16)minifloat_encode(v, 5, 10); memcpy(elem, &x, 2); break; }
    case CS_DTYPE_BFLOAT16: {
        float f = (float)v;          /* exact values: the top half of a float */
        guint32 b;
        memcpy(&b, &f, 4);
        guint16 x = (guint16)(b >> 16);
        memcpy(elem, &x, 2);
        break;
    }
    case CS_DTYPE_FP8E4M3: { guint8 x = (guint8)minifloat_encode(v, 4, 3); memcpy(elem, &x, 1); break; }
    case CS_DTYPE_FP8E5M2: { guint8 x = (guint8)minifloat_encode(v, 5, 2); memcpy(elem, &x, 1); break; }
    default: g_assert_not_reached();
    }
}

double cs_check_decode(cs_dtype_t t, const void *elem)
{
    switch (t) {
    case CS_DTYPE_INT8:   { gint8 x; memcpy(&x, elem, 1); return x; }
    case CS_DTYPE_UINT8:  { guint8 x; memcpy(&x, elem, 1); return x; }
    case CS_DTYPE_INT32:  { gint32 x; memcpy(&x, elem, 4); return x; }
    case CS_DTYPE_UINT32: { guint32 x; memcpy(&x, elem, 4); return x; }
    case CS_DTYPE_INT64:  { gint64 x; memcpy(&x, elem, 8); return (double)x; }
    case CS_DTYPE_UINT64: { guint64 x; memcpy(&x, elem, 8); return (double)x; }
    case CS_DTYPE_FLOAT:  { float x; memcpy(&x, elem, 4); return x; }
    case CS_DTYPE_DOUBLE: { double x; memcpy(&x, elem, 8); return x; }
    case CS_DTYPE_HALF:   { guint16 x; memcpy(&x, elem, 2); return minifloat_decode(x, 5, 10, TRUE); }
    case CS_DTYPE_BFLOAT16: {
        guint16 x;
        memcpy(&x, elem, 2);
        guint32 b = (guint32)x << 16;
        float f;
        memcpy(&f, &b, 4);
        return f;
    }
    case CS_DTYPE_FP8E4M3: { guint8 x; memcpy(&x, elem, 1); return minifloat_decode(x, 4, 3, FALSE); }
    case CS_DTYPE_FP8E5M2: { guint8 x; memcpy(&x, elem, 1); return minifloat_decode(x, 5, 2, TRUE); }
    default: g_assert_not_reached();
    }
}

/* ---- fill and check ------------------------------------------------------------ */

void cs_check_fill_send(const cs_check_spec_t *s, int rank, void *buf)
{
    type_range_t tr = type_range(s->dtype);
    size_t esz = cs_dtype_size(s->dtype);
    guint64 n = cs_check_send_count(s);
    for (guint64 j = 0; j < n; j++)
        cs_check_encode(s->dtype, input(s, &tr, rank, j), (char *)buf + j * esz);
}

void cs_check_sample(guint64 recv_count, guint64 max, guint64 *stride_p, guint64 *n_p)
{
    if (max == 0)
        max = 1;
    guint64 stride = recv_count <= max ? 1 : (recv_count + max - 1) / max;
    *stride_p = stride;
    *n_p = recv_count == 0 ? 0 : (recv_count + stride - 1) / stride;
}

long cs_check_count_wrong(const cs_check_spec_t *s, int rank, const void *got, guint64 stride, guint64 n)
{
    if (!cs_check_rank_has_result(s, rank))
        return 0;
    type_range_t tr = type_range(s->dtype);
    size_t esz = cs_dtype_size(s->dtype);
    /* float avg: NCCL scales each input by 1/n before summing, so allow
     * one rounding step of the type at the result (2^-mantissa bits). */
    gboolean approx = s->redop == CS_REDOP_AVG && tr.is_float && is_reduction(s->coll);
    double rel = approx ? ldexp(2.0, -tr.mant_bits) : 0;
    long wrong = 0;
    for (guint64 k = 0; k < n; k++) {
        double want = cs_check_expected(s, rank, k * stride);
        double v = cs_check_decode(s->dtype, (const char *)got + k * esz);
        if (!(fabs(v - want) <= rel * fabs(want)))   /* NaN counts as wrong */
            wrong++;
    }
    return wrong;
}
