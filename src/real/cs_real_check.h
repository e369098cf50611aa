/* Checked data for `collsim real`: what each rank puts in its send buffer
 * and what every output element must then hold, per collective, reduction
 * and type, computed on the host with no CUDA (so it is tested anywhere).
 *
 * Values are small integers (exactly representable even in fp8), and for
 * reductions each element has one "owner" rank (element j: rank j % n)
 * holding a value while the others hold the operation's neutral element
 * (0 for sum/max, 1 for prod, a larger value for min): the exact result
 * is the owner's value, so a missing, doubled or misplaced contribution
 * is a wrong element whatever the rank count. Point-to-point operations
 * move values unchanged: alltoall's receive block q is rank q's send block
 * for this rank, sendrecv's receive buffer is rank-1's send buffer (the
 * -o op is printed, nothing is reduced). avg is exact for integer
 * types (NCCL divides the sum) and within a rounding step for floats
 * (NCCL multiplies by 1/n first). */
#ifndef CS_REAL_CHECK_H
#define CS_REAL_CHECK_H

#include <glib.h>
#include "models/cs_coll.h"

typedef struct {
    cs_coll_t coll;
    cs_dtype_t dtype;
    cs_redop_t redop;
    int nranks;
    int root;          /* broadcast, reduce */
    guint64 count;     /* elements per rank, as nccl-tests's count column */
} cs_check_spec_t;

/* Elements of each rank's send and receive buffers (reduce-scatter sends
 * count*n, all-gather receives count*n, alltoall sends and receives count*n,
 * count per peer). */
guint64 cs_check_send_count(const cs_check_spec_t *s);
guint64 cs_check_recv_count(const cs_check_spec_t *s);
/* Whether the in-place result is checked (not for alltoall and sendrecv,
 * as nccl-tests: #wrong N/A). */
gboolean cs_check_in_place_checked(cs_coll_t c);
/* Whether rank's receive buffer has a defined result (reduce: root only). */
gboolean cs_check_rank_has_result(const cs_check_spec_t *s, int rank);

/* Fills 'buf' (cs_check_send_count elements of s->dtype) with rank's input. */
void cs_check_fill_send(const cs_check_spec_t *s, int rank, void *buf);

/* Which receive elements are checked: indices k*stride for k < n, at most
 * 'max' of them (all when the buffer has no more than 'max'). */
void cs_check_sample(guint64 recv_count, guint64 max, guint64 *stride_p, guint64 *n_p);
/* Counts the wrong elements among 'n' received ones, where got[k] is
 * element k*stride of rank's receive buffer. */
long cs_check_count_wrong(const cs_check_spec_t *s, int rank, const void *got, guint64 stride, guint64 n);
/* The expected receive element 'idx' of rank, as a double (exact for
 * every result but float avg). Exposed for the tests. */
double cs_check_expected(const cs_check_spec_t *s, int rank, guint64 idx);

/* Element encoding of the types CUDA holds as bits (half, bfloat16, fp8):
 * exact for the values this module uses. */
void cs_check_encode(cs_dtype_t t, double v, void *elem);
double cs_check_decode(cs_dtype_t t, const void *elem);

#endif
