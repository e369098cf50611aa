#include "config.h"
#include "models/cs_coll.h"

#include <string.h>

static const struct {
    const char *name, *test, *nccl;
} coll_names[CS_OP_COUNT] = {
    [CS_COLL_BROADCAST] = { "broadcast", "broadcast_perf", "Broadcast" },
    [CS_COLL_REDUCE] = { "reduce", "reduce_perf", "Reduce" },
    [CS_COLL_ALLGATHER] = { "allgather", "all_gather_perf", "AllGather" },
    [CS_COLL_REDUCESCATTER] = { "reducescatter", "reduce_scatter_perf", "ReduceScatter" },
    [CS_COLL_ALLREDUCE] = { "allreduce", "all_reduce_perf", "AllReduce" },
    [CS_COLL_SENDRECV] = { "sendrecv", "sendrecv_perf", "SendRecv" },
    [CS_COLL_ALLTOALL] = { "alltoall", "alltoall_perf", "AlltoAll" },
};

/* NCCL's ncclAlgoStr / ncclProtoStr (src/enqueue.cc, v2.28.9). */
static const char *algo_names[CS_ALGO_COUNT] = {
    "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"
};
static const char *proto_names[CS_PROTO_COUNT] = { "LL", "LL128", "Simple" };

/* nccl-tests's type names (src/common.cu test_typenames) and sizes. */
static const struct {
    const char *name;
    size_t size;
    const char *aliases[4];
} dtypes[CS_DTYPE_COUNT] = {
    [CS_DTYPE_INT8] = { "int8", 1, { "char", "ncclInt8", NULL } },
    [CS_DTYPE_UINT8] = { "uint8", 1, { "ncclUint8", NULL } },
    [CS_DTYPE_INT32] = { "int32", 4, { "int", "ncclInt32", "ncclInt" } },
    [CS_DTYPE_UINT32] = { "uint32", 4, { "ncclUint32", NULL } },
    [CS_DTYPE_INT64] = { "int64", 8, { "ncclInt64", NULL } },
    [CS_DTYPE_UINT64] = { "uint64", 8, { "ncclUint64", NULL } },
    [CS_DTYPE_HALF] = { "half", 2, { "float16", "fp16", "ncclHalf" } },
    [CS_DTYPE_FLOAT] = { "float", 4, { "float32", "fp32", "ncclFloat" } },
    [CS_DTYPE_DOUBLE] = { "double", 8, { "float64", "fp64", "ncclDouble" } },
    [CS_DTYPE_BFLOAT16] = { "bfloat16", 2, { "bf16", "ncclBfloat16", NULL } },
    [CS_DTYPE_FP8E4M3] = { "f8e4m3", 1, { "fp8e4m3", "e4m3", NULL } },
    [CS_DTYPE_FP8E5M2] = { "f8e5m2", 1, { "fp8e5m2", "e5m2", NULL } },
};

static const char *redop_names[CS_REDOP_COUNT] = { "sum", "prod", "min", "max", "avg" };

gboolean cs_name_loose_equal(const char *a, const char *b)
{
    for (;;) {
        while (*a == '_' || *a == '-')
            a++;
        while (*b == '_' || *b == '-')
            b++;
        if (*a == '\0' || *b == '\0')
            return *a == *b;
        if (g_ascii_tolower(*a) != g_ascii_tolower(*b))
            return FALSE;
        a++;
        b++;
    }
}

const char *cs_coll_name(cs_coll_t c)
{
    g_return_val_if_fail(c < CS_OP_COUNT, "?");
    return coll_names[c].name;
}

const char *cs_coll_test_name(cs_coll_t c)
{
    g_return_val_if_fail(c < CS_OP_COUNT, "?");
    return coll_names[c].test;
}

gboolean cs_coll_parse(const char *s, cs_coll_t *c_p)
{
    if (s == NULL)
        return FALSE;
    for (int i = 0; i < CS_OP_COUNT; i++) {
        if (cs_name_loose_equal(s, coll_names[i].name) || cs_name_loose_equal(s, coll_names[i].test) ||
            cs_name_loose_equal(s, coll_names[i].nccl)) {
            *c_p = (cs_coll_t)i;
            return TRUE;
        }
        /* "all_reduce" without "_perf" */
        size_t n = strlen(coll_names[i].test) - strlen("_perf");
        if (strlen(s) == n && g_ascii_strncasecmp(s, coll_names[i].test, n) == 0) {
            *c_p = (cs_coll_t)i;
            return TRUE;
        }
    }
    return FALSE;
}

const char *cs_algo_name(cs_algo_t a)
{
    if (a == CS_ALGO_P2P)
        return "P2P";
    g_return_val_if_fail(a < CS_ALGO_COUNT, "?");
    return algo_names[a];
}

gboolean cs_algo_parse(const char *s, cs_algo_t *a_p)
{
    if (s == NULL)
        return FALSE;
    for (int i = 0; i < CS_ALGO_COUNT; i++) {
        if (cs_name_loose_equal(s, algo_names[i])) {
            *a_p = (cs_algo_t)i;
            return TRUE;
        }
    }
    return FALSE;
}

const char *cs_proto_name(cs_proto_t p)
{
    g_return_val_if_fail(p < CS_PROTO_COUNT, "?");
    return proto_names[p];
}

gboolean cs_proto_parse(const char *s, cs_proto_t *p_p)
{
    if (s == NULL)
        return FALSE;
    for (int i = 0; i < CS_PROTO_COUNT; i++) {
        if (g_ascii_strcasecmp(s, proto_names[i]) == 0) {
            *p_p = (cs_proto_t)i;
            return TRUE;
        }
    }
    return FALSE;
}

const char *cs_dtype_name(cs_dtype_t t)
{
    g_return_val_if_fail(t < CS_DTYPE_COUNT, "?");
    return dtypes[t].name;
}

gboolean cs_dtype_parse(const char *s, cs_dtype_t *t_p)
{
    if (s == NULL)
        return FALSE;
    for (int i = 0; i < CS_DTYPE_COUNT; i++) {
        if (g_ascii_strcasecmp(s, dtypes[i].name) == 0) {
            *t_p = (cs_dtype_t)i;
            return TRUE;
        }
        for (int j = 0; j < 4 && dtypes[i].aliases[j] != NULL; j++) {
            if (g_ascii_strcasecmp(s, dtypes[i].aliases[j]) == 0) {
                *t_p = (cs_dtype_t)i;
                return TRUE;
            }
        }
    }
    return FALSE;
}

size_t cs_dtype_size(cs_dtype_t t)
{
    g_return_val_if_fail(t < CS_DTYPE_COUNT, 1);
    return dtypes[t].size;
}

const char *cs_redop_name(cs_redop_t r)
{
    g_return_val_if_fail(r < CS_REDOP_COUNT, "?");
    return redop_names[r];
}

gboolean cs_redop_parse(const char *s, cs_redop_t *r_p)
{
    if (s == NULL)
        return FALSE;
    for (int i = 0; i < CS_REDOP_COUNT; i++) {
        if (g_ascii_strcasecmp(s, redop_names[i]) == 0) {
            *r_p = (cs_redop_t)i;
            return TRUE;
        }
    }
    return FALSE;
}

/* nccl-tests prints the redop only for reducing collectives and the root
 * only for rooted ones (src/<coll>.cu: "none" / -1 otherwise). SendRecv
 * reduces nothing but loops over -o like the reducing tests and prints the
 * op's name (src/sendrecv.cu SendRecvRunTest); AlltoAll prints "none"
 * (src/alltoall.cu). */
gboolean cs_coll_has_redop(cs_coll_t c)
{
    return c == CS_COLL_REDUCE || c == CS_COLL_REDUCESCATTER || c == CS_COLL_ALLREDUCE || c == CS_COLL_SENDRECV;
}

gboolean cs_coll_has_root(cs_coll_t c)
{
    return c == CS_COLL_BROADCAST || c == CS_COLL_REDUCE;
}

gboolean cs_coll_is_p2p(cs_coll_t c)
{
    return c == CS_COLL_SENDRECV || c == CS_COLL_ALLTOALL;
}

/* nccl-tests doc/PERFORMANCE.md and src/<coll>.cu GetBw: AllReduce
 * 2(n-1)/n, AllGather, ReduceScatter and AlltoAll (n-1)/n, Broadcast,
 * Reduce and SendRecv 1. */
double cs_busbw_factor(cs_coll_t c, int nranks)
{
    double n = nranks;
    switch (c) {
    case CS_COLL_ALLREDUCE: return 2.0 * (n - 1) / n;
    case CS_COLL_ALLGATHER:
    case CS_COLL_REDUCESCATTER:
    case CS_COLL_ALLTOALL: return (n - 1) / n;
    default: return 1.0;
    }
}

static gboolean per_rank_split(cs_coll_t c)
{
    return c == CS_COLL_ALLGATHER || c == CS_COLL_REDUCESCATTER || c == CS_COLL_ALLTOALL;
}

/* nccl-tests setupArgs + <Coll>GetCollByteCount (src/common.cu,
 * src/all_gather.cu, src/reduce_scatter.cu, src/alltoall.cu): count =
 * size/eltSize; for AllGather, ReduceScatter and AlltoAll the per-rank
 * (AlltoAll: per-peer) count is (count/n) rounded down to a multiple of
 * 16/eltSize elements, and the bytes counted are n times that. */
guint64 cs_coll_count(cs_coll_t c, guint64 size_bytes, cs_dtype_t t, int nranks)
{
    guint64 elt = cs_dtype_size(t);
    guint64 count = size_bytes / elt;
    if (per_rank_split(c)) {
        guint64 align = 16 / elt;
        count = (count / (guint64)nranks) & ~(align - 1);
    }
    return count;
}

guint64 cs_coll_nccl_bytes(cs_coll_t c, guint64 count, cs_dtype_t t, int nranks)
{
    guint64 b = count * cs_dtype_size(t);
    return per_rank_split(c) ? b * (guint64)nranks : b;
}

double cs_coll_algbw_bytes(cs_coll_t c, guint64 count, cs_dtype_t t, int nranks)
{
    return (double)cs_coll_nccl_bytes(c, count, t, nranks);
}

guint64 cs_coll_print_size(cs_coll_t c, guint64 count, cs_dtype_t t, int nranks)
{
    return cs_coll_nccl_bytes(c, count, t, nranks);
}
