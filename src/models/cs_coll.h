/* Collectives, data types, reductions, NCCL algorithms and protocols, and the
 * nccl-tests conventions for bus bandwidth. Pure data, no I/O. */
#ifndef CS_COLL_H
#define CS_COLL_H

#include <glib.h>

/* Order follows NCCL's ncclFunc_t (src/include/nccl_common.h, v2.28.9):
 * Broadcast, Reduce, AllGather, ReduceScatter, AllReduce, then (past
 * NCCL_NUM_FUNCTIONS, as there) the operations NCCL runs as point-to-point
 * sends and receives: SendRecv (nccl-tests sendrecv_perf: each rank sends
 * to rank+1 and receives from rank-1) and AlltoAll (alltoall_perf; NCCL
 * 2.28's ncclAlltoAll and nccl-tests before it both queue one send and one
 * receive per peer, enqueue.cc taskAppend). CS_COLL_COUNT counts the
 * collectives NCCL's tuner prices (tables indexed by collective stop
 * there); CS_OP_COUNT counts every operation collsim models. */
typedef enum {
    CS_COLL_BROADCAST = 0,
    CS_COLL_REDUCE,
    CS_COLL_ALLGATHER,
    CS_COLL_REDUCESCATTER,
    CS_COLL_ALLREDUCE,
    CS_COLL_COUNT,
    CS_COLL_SENDRECV = CS_COLL_COUNT,
    CS_COLL_ALLTOALL,
    CS_OP_COUNT
} cs_coll_t;

/* NCCL algorithm indices (src/include/device.h, v2.28.9). */
typedef enum {
    CS_ALGO_TREE = 0,
    CS_ALGO_RING,
    CS_ALGO_COLLNET_DIRECT,
    CS_ALGO_COLLNET_CHAIN,
    CS_ALGO_NVLS,
    CS_ALGO_NVLS_TREE,
    CS_ALGO_PAT,
    CS_ALGO_COUNT,
    /* Not an NCCL algorithm: what point-to-point operations (SendRecv,
     * AlltoAll) run as, past the tuner's tables (cs_coll_is_p2p). */
    CS_ALGO_P2P = CS_ALGO_COUNT
} cs_algo_t;

typedef enum { CS_PROTO_LL = 0, CS_PROTO_LL128, CS_PROTO_SIMPLE, CS_PROTO_COUNT } cs_proto_t;

typedef enum {
    CS_DTYPE_INT8 = 0, CS_DTYPE_UINT8, CS_DTYPE_INT32, CS_DTYPE_UINT32,
    CS_DTYPE_INT64, CS_DTYPE_UINT64, CS_DTYPE_HALF, CS_DTYPE_FLOAT,
    CS_DTYPE_DOUBLE, CS_DTYPE_BFLOAT16, CS_DTYPE_FP8E4M3, CS_DTYPE_FP8E5M2,
    CS_DTYPE_COUNT
} cs_dtype_t;

typedef enum { CS_REDOP_SUM = 0, CS_REDOP_PROD, CS_REDOP_MIN, CS_REDOP_MAX, CS_REDOP_AVG, CS_REDOP_COUNT } cs_redop_t;

/* Compares names ignoring case, '_' and '-' ("all_reduce" == "AllReduce"). */
gboolean cs_name_loose_equal(const char *a, const char *b);

/* Names. Parsers accept NCCL's and nccl-tests's spellings case-insensitively
 * ("allreduce", "all_reduce", "AllReduce"; "float", "float32"; "bf16"). */
const char *cs_coll_name(cs_coll_t c);           /* "allreduce"; any c < CS_OP_COUNT */
const char *cs_coll_test_name(cs_coll_t c);      /* "all_reduce_perf" */
gboolean cs_coll_parse(const char *s, cs_coll_t *c_p);
const char *cs_algo_name(cs_algo_t a);           /* NCCL's: "Tree", "Ring", "CollNetDirect", "NVLS", "NVLSTree", "PAT"; "P2P" */
gboolean cs_algo_parse(const char *s, cs_algo_t *a_p);
const char *cs_proto_name(cs_proto_t p);         /* "LL", "LL128", "Simple" */
gboolean cs_proto_parse(const char *s, cs_proto_t *p_p);
const char *cs_dtype_name(cs_dtype_t t);         /* nccl-tests: "float", "half", "bfloat16", "int32"... */
gboolean cs_dtype_parse(const char *s, cs_dtype_t *t_p);
size_t cs_dtype_size(cs_dtype_t t);
const char *cs_redop_name(cs_redop_t r);         /* "sum", "prod", "min", "max", "avg" */
gboolean cs_redop_parse(const char *s, cs_redop_t *r_p);
gboolean cs_coll_has_redop(cs_coll_t c);         /* nccl-tests prints "none" otherwise */
gboolean cs_coll_has_root(cs_coll_t c);          /* nccl-tests prints -1 otherwise */
/* SendRecv and AlltoAll: sends and receives between peers, no NCCL
 * algorithm (decisions say CS_ALGO_P2P). */
gboolean cs_coll_is_p2p(cs_coll_t c);

/* nccl-tests conventions (src/<coll>.cu, doc/PERFORMANCE.md):
 * size printed = max(send, recv) bytes; count = elements per rank buffer
 * (AlltoAll: per peer); algbw = S/t with S = count*typesize (AR, Bcast,
 * Reduce, SendRecv) or count*typesize*n (AG, RS, AlltoAll); busbw = algbw
 * * factor. */
double cs_busbw_factor(cs_coll_t c, int nranks);
/* From a swept size (nccl-tests -b/-e value, bytes) to the element count per
 * rank and to NCCL's nBytes (the total message NCCL's tuner sees). */
guint64 cs_coll_count(cs_coll_t c, guint64 size_bytes, cs_dtype_t t, int nranks);
guint64 cs_coll_nccl_bytes(cs_coll_t c, guint64 count, cs_dtype_t t, int nranks);
double cs_coll_algbw_bytes(cs_coll_t c, guint64 count, cs_dtype_t t, int nranks);
/* The "size" nccl-tests prints for a count: max(send, recv) bytes. */
guint64 cs_coll_print_size(cs_coll_t c, guint64 count, cs_dtype_t t, int nranks);

#endif
