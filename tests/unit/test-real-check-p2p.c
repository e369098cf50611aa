/* The data check of `collsim real` for the point-to-point operations
 * (nccl_check.c): alltoall and sendrecv as nccl-tests runs them
 * (src/alltoall.cu, src/sendrecv.cu, v2.19.6), against values derived by
 * hand, against a host exchange over every type, op and rank count, and
 * catching the routing mistakes an implementation could make. */
#include "config.h"
#include "real/cs_real_check.h"

#include <string.h>

/* Values are 1 + (7r + 13j) mod vmax (vmax 100000 for int32, float). */
static void test_by_hand(void)
{
    /* alltoall, 3 ranks, 2 per peer: rank 1's element 4 is block 2, k 0:
     * rank 2's send element 1*2 + 0 = 2 -> 1 + 14 + 26 */
    cs_check_spec_t a = { CS_COLL_ALLTOALL, CS_DTYPE_INT32, CS_REDOP_SUM, 3, 0, 2 };
    g_assert_cmpuint(cs_check_send_count(&a), ==, 6);
    g_assert_cmpuint(cs_check_recv_count(&a), ==, 6);
    g_assert_true(cs_check_rank_has_result(&a, 0));
    g_assert_cmpfloat(cs_check_expected(&a, 1, 4), ==, 41);
    /* rank 0's element 3 is block 1, k 1: rank 1's element 1 -> 1 + 7 + 13 */
    g_assert_cmpfloat(cs_check_expected(&a, 0, 3), ==, 21);
    /* the send buffer holds the plain values, nothing owned or neutral */
    gint32 buf[6];
    cs_check_fill_send(&a, 2, buf);
    g_assert_cmpint(buf[2], ==, 41);
    g_assert_cmpint(buf[5], ==, 1 + 14 + 65);
    /* sendrecv, 3 ranks, count 8: rank 0 receives rank 2's element 5 ->
     * 1 + 14 + 65; the op (here max) changes nothing */
    cs_check_spec_t s = { CS_COLL_SENDRECV, CS_DTYPE_INT32, CS_REDOP_MAX, 3, 0, 8 };
    g_assert_cmpuint(cs_check_send_count(&s), ==, 8);
    g_assert_cmpuint(cs_check_recv_count(&s), ==, 8);
    g_assert_cmpfloat(cs_check_expected(&s, 0, 5), ==, 80);
    g_assert_cmpfloat(cs_check_expected(&s, 1, 5), ==, 66);   /* from rank 0: 1 + 65 */
    s.redop = CS_REDOP_AVG;
    g_assert_cmpfloat(cs_check_expected(&s, 1, 5), ==, 66);   /* not divided: nothing is reduced */
    /* in-place results are not checked for them, as nccl-tests */
    g_assert_false(cs_check_in_place_checked(CS_COLL_ALLTOALL));
    g_assert_false(cs_check_in_place_checked(CS_COLL_SENDRECV));
    g_assert_true(cs_check_in_place_checked(CS_COLL_ALLREDUCE));
    g_assert_true(cs_check_in_place_checked(CS_COLL_ALLGATHER));
}

/* How a host exchange may go wrong (what the check must see). */
typedef enum {
    ROUTE_RIGHT,
    ROUTE_SR_FROM_NEXT,       /* sendrecv: data from rank+1, not rank-1 */
    ROUTE_A2A_ROTATED,        /* alltoall: block from q lands in slot q+1 */
    ROUTE_A2A_OWN_BLOCK,      /* alltoall: q sends its block q, not block r */
} route_t;

/* out[r]: rank r's receive buffer after the exchange of in[]. */
static void host_p2p(const cs_check_spec_t *s, route_t how, char **in, char **out)
{
    int n = s->nranks;
    size_t esz = cs_dtype_size(s->dtype), blk = s->count * esz;
    for (int r = 0; r < n; r++) {
        if (s->coll == CS_COLL_SENDRECV) {
            int from = how == ROUTE_SR_FROM_NEXT ? (r + 1) % n : (r - 1 + n) % n;
            memcpy(out[r], in[from], blk);
            continue;
        }
        for (int q = 0; q < n; q++) {
            int slot = how == ROUTE_A2A_ROTATED ? (q + 1) % n : q;
            int which = how == ROUTE_A2A_OWN_BLOCK ? q : r;
            memcpy(out[r] + (size_t)slot * blk, in[q] + (size_t)which * blk, blk);
        }
    }
}

/* Wrong elements over all ranks for one exchange. */
static long run(cs_coll_t c, cs_dtype_t t, cs_redop_t op, int n, guint64 count, route_t how)
{
    cs_check_spec_t s = { c, t, op, n, 0, count };
    size_t esz = cs_dtype_size(t);
    char **in = g_new0(char *, n), **out = g_new0(char *, n);
    for (int r = 0; r < n; r++) {
        in[r] = g_malloc0(cs_check_send_count(&s) * esz + 1);
        out[r] = g_malloc0(cs_check_recv_count(&s) * esz + 1);
        cs_check_fill_send(&s, r, in[r]);
    }
    host_p2p(&s, how, in, out);
    long wrong = 0;
    for (int r = 0; r < n; r++) {
        wrong += cs_check_count_wrong(&s, r, out[r], 1, cs_check_recv_count(&s));
        g_free(in[r]);
        g_free(out[r]);
    }
    g_free(in);
    g_free(out);
    return wrong;
}

static void test_every_type(void)
{
    int ranks[] = { 1, 2, 3, 8, 17 };
    cs_coll_t colls[] = { CS_COLL_ALLTOALL, CS_COLL_SENDRECV };
    for (guint c = 0; c < G_N_ELEMENTS(colls); c++)
        for (int t = 0; t < CS_DTYPE_COUNT; t++)
            for (int o = 0; o < CS_REDOP_COUNT; o++)
                for (guint i = 0; i < G_N_ELEMENTS(ranks); i++) {
                    long w = run(colls[c], (cs_dtype_t)t, (cs_redop_t)o, ranks[i], 37, ROUTE_RIGHT);
                    if (w != 0)
                        g_test_message("%s %s %s n=%d: %ld wrong", cs_coll_name(colls[c]),
                                       cs_dtype_name((cs_dtype_t)t), cs_redop_name((cs_redop_t)o), ranks[i], w);
                    g_assert_cmpint(w, ==, 0);
                }
}

/* Misrouted data is wrong element by element. int32 (vmax 100000): values
 * of ranks r and r' at one index differ by 7(r - r'), and of one rank at
 * indices j and j' by 13(j - j'), never 0 mod vmax here. */
static void test_misrouted(void)
{
    /* sendrecv from rank+1 instead of rank-1: all 3 x 10 elements (with 2
     * ranks rank+1 is rank-1: right by luck, as on a GPU) */
    g_assert_cmpint(run(CS_COLL_SENDRECV, CS_DTYPE_INT32, CS_REDOP_SUM, 3, 10, ROUTE_SR_FROM_NEXT), ==, 30);
    g_assert_cmpint(run(CS_COLL_SENDRECV, CS_DTYPE_INT32, CS_REDOP_SUM, 2, 10, ROUTE_SR_FROM_NEXT), ==, 0);
    /* alltoall blocks in the wrong slots: every element of 4 ranks x 4 x 5 */
    g_assert_cmpint(run(CS_COLL_ALLTOALL, CS_DTYPE_INT32, CS_REDOP_SUM, 4, 5, ROUTE_A2A_ROTATED), ==, 80);
    /* every sender's own block: right only where q == r, 4 x 3 x 5 wrong */
    g_assert_cmpint(run(CS_COLL_ALLTOALL, CS_DTYPE_FLOAT, CS_REDOP_SUM, 4, 5, ROUTE_A2A_OWN_BLOCK), ==, 60);
    /* bfloat16 (vmax 100): 7 x 2 and 13 x 5 x (q - r) are not multiples of 100 */
    g_assert_cmpint(run(CS_COLL_SENDRECV, CS_DTYPE_BFLOAT16, CS_REDOP_SUM, 3, 10, ROUTE_SR_FROM_NEXT), ==, 30);
    g_assert_cmpint(run(CS_COLL_ALLTOALL, CS_DTYPE_BFLOAT16, CS_REDOP_SUM, 4, 5, ROUTE_A2A_OWN_BLOCK), ==, 60);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/real-check-p2p/by-hand", test_by_hand);
    g_test_add_func("/real-check-p2p/every-type-op-ranks", test_every_type);
    g_test_add_func("/real-check-p2p/misrouted", test_misrouted);
    return g_test_run();
}
