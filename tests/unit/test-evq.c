/* The event queue: order by time, ties by scheduling order, cancel and
 * reschedule, and a million random events against a sorted reference. */
#include "config.h"

#include <stdlib.h>

#include "sim/cs_evq.h"

static void test_order(void)
{
    g_autoptr(cs_evq_t) q = cs_evq_new();
    static const cs_time_t times[] = { 50, 10, 40, 30, 20, 60, 0 };
    for (gsize i = 0; i < G_N_ELEMENTS(times); i++) {
        cs_event_t *ev = cs_evq_alloc(q);
        ev->a = (int)i;
        cs_evq_push(q, ev, times[i]);
    }
    g_assert_cmpuint(cs_evq_len(q), ==, 7);
    cs_time_t last = -1;
    static const int want[] = { 6, 1, 4, 3, 2, 0, 5 };
    for (int k = 0; k < 7; k++) {
        cs_event_t *ev = cs_evq_pop(q);
        g_assert_nonnull(ev);
        g_assert_cmpint(ev->time, >=, last);
        g_assert_cmpint(ev->a, ==, want[k]);
        g_assert_false(cs_evq_scheduled(ev));
        last = ev->time;
        cs_evq_release(q, ev);
    }
    g_assert_null(cs_evq_pop(q));
    g_assert_cmpuint(cs_evq_popped(q), ==, 7);
}

/* Equal times come out in insertion order, however many there are and
 * whatever is interleaved with them. */
static void test_ties(void)
{
    g_autoptr(cs_evq_t) q = cs_evq_new();
    for (int i = 0; i < 1000; i++) {
        cs_event_t *ev = cs_evq_alloc(q);
        ev->a = i;
        cs_evq_push(q, ev, (i % 3) * 100);   /* three groups, interleaved */
    }
    int next[3] = { 0, 1, 2 };
    for (int k = 0; k < 1000; k++) {
        cs_event_t *ev = cs_evq_pop(q);
        int g = (int)(ev->time / 100);
        g_assert_cmpint(ev->a, ==, next[g]);
        next[g] += 3;
        if (k > 0)
            g_assert_cmpint(g, >=, 0);
        cs_evq_release(q, ev);
    }
    /* groups drained in time order: all of group 0 first */
    g_assert_cmpint(next[0], ==, 1002);
}

static void test_reschedule_cancel(void)
{
    g_autoptr(cs_evq_t) q = cs_evq_new();
    cs_event_t *e[5];
    for (int i = 0; i < 5; i++) {
        e[i] = cs_evq_alloc(q);
        e[i]->a = i;
        cs_evq_push(q, e[i], 10 * (i + 1));   /* 10 20 30 40 50 */
    }
    cs_evq_reschedule(q, e[4], 5);     /* 50 -> 5: now first */
    cs_evq_reschedule(q, e[0], 30);    /* 10 -> 30: after e[2] (same time, later seq) */
    cs_evq_cancel(q, e[3]);            /* 40 gone */
    g_assert_false(cs_evq_scheduled(e[3]));
    cs_evq_cancel(q, e[3]);            /* twice: no-op */
    static const int want[] = { 4, 1, 2, 0 };
    for (int k = 0; k < 4; k++) {
        cs_event_t *ev = cs_evq_pop(q);
        g_assert_cmpint(ev->a, ==, want[k]);
    }
    g_assert_null(cs_evq_peek(q));
    for (int i = 0; i < 5; i++)
        cs_evq_release(q, e[i]);
    /* the pool hands released events back out */
    cs_event_t *r = cs_evq_alloc(q);
    gboolean reused = FALSE;
    for (int i = 0; i < 5; i++)
        reused |= r == e[i];
    g_assert_true(reused);
    g_assert_cmpint(r->a, ==, 0);
    cs_evq_release(q, r);
}

typedef struct {
    cs_time_t time;
    int id;
} ref_t;

static int cmp_ref(const void *x, const void *y)
{
    const ref_t *a = x, *b = y;
    if (a->time != b->time)
        return a->time < b->time ? -1 : 1;
    return a->id - b->id;   /* ids are insertion order */
}

/* 1e6 random events (many ties), a tenth cancelled and a tenth moved, in
 * the queue and in a sorted array: the same sequence must come out. */
static void test_random(void)
{
    const int n = 1000000;
    g_autoptr(cs_evq_t) q = cs_evq_new();
    g_autoptr(GRand) rng = g_rand_new_with_seed(42);
    cs_event_t **evs = g_new(cs_event_t *, n);
    ref_t *ref = g_new(ref_t, n);
    int *rank = g_new(int, n);   /* id -> insertion rank after moves */
    int nref = 0;
    for (int i = 0; i < n; i++) {
        evs[i] = cs_evq_alloc(q);
        evs[i]->a = i;
        cs_evq_push(q, evs[i], g_rand_int_range(rng, 0, 100000));
    }
    /* Moves take a fresh sequence number: they sort after everything
     * pushed before them, in the order they were moved. */
    int next_seq = n;
    for (int i = 0; i < n; i++)
        rank[i] = i;
    for (int i = 0; i < n; i += 10)
        cs_evq_cancel(q, evs[i]);
    for (int i = 5; i < n; i += 10) {
        cs_evq_reschedule(q, evs[i], g_rand_int_range(rng, 0, 100000));
        rank[i] = next_seq++;
    }
    for (int i = 0; i < n; i++)
        if (i % 10 != 0)
            ref[nref++] = (ref_t){ evs[i]->time, rank[i] };
    qsort(ref, nref, sizeof *ref, cmp_ref);
    g_assert_cmpuint(cs_evq_len(q), ==, (gsize)nref);
    for (int k = 0; k < nref; k++) {
        cs_event_t *ev = cs_evq_pop(q);
        g_assert_nonnull(ev);
        if (ev->time != ref[k].time || rank[ev->a] != ref[k].id)
            g_error("event %d: got (%" G_GINT64_FORMAT ", %d), want (%" G_GINT64_FORMAT ", %d)", k,
                    ev->time, rank[ev->a], ref[k].time, ref[k].id);
    }
    g_assert_null(cs_evq_pop(q));
    for (int i = 0; i < n; i++)
        cs_evq_release(q, evs[i]);
    g_free(evs);
    g_free(ref);
    g_free(rank);
}

/* Streams beside the heap, as a simulation uses them: at each step time
 * moves to the next event, which pushes a few events, each either to the
 * heap (any later time) or to the stream of its delay (now + delay). The
 * pops must come out in (time, push order), as a heap alone would give. */
static void test_streams(void)
{
    g_autoptr(cs_evq_t) q = cs_evq_new();
    g_autoptr(GRand) rng = g_rand_new_with_seed(7);
    static const cs_time_t delays[3] = { 100, 250, 1000 };
    g_autoptr(GArray) popped = g_array_new(FALSE, FALSE, sizeof(ref_t));
    int next_id = 0;
    cs_event_t *seed = cs_evq_alloc(q);
    seed->a = next_id++;
    cs_evq_push(q, seed, 0);
    int streamed = 0;
    cs_time_t now = 0;
    for (int step = 0; cs_evq_len(q) > 0; step++) {
        cs_event_t *ev = cs_evq_pop(q);
        g_assert_cmpint(ev->time, >=, now);
        now = ev->time;
        ref_t r = { ev->time, ev->a };
        g_array_append_val(popped, r);
        cs_evq_release(q, ev);
        int k = step < 150000 ? g_rand_int_range(rng, 1, 3) : 0;   /* then drain */
        for (int i = 0; i < k; i++) {
            cs_event_t *e = cs_evq_alloc(q);
            e->a = next_id++;
            int s = g_rand_int_range(rng, -1, 3);
            if (s < 0) {
                cs_evq_push(q, e, now + g_rand_int_range(rng, 0, 2000));
            } else {
                cs_evq_push_stream(q, e, now + delays[s], s);
                streamed++;
            }
        }
    }
    g_assert_cmpuint(cs_evq_len(q), ==, 0);
    g_assert_cmpint(streamed, >, 10000);
    /* within equal times, ids (push order) rise: with ids allocated in push
     * order, (time, id) must be sorted */
    for (guint k = 1; k < popped->len; k++) {
        const ref_t *a = &g_array_index(popped, ref_t, k - 1), *b = &g_array_index(popped, ref_t, k);
        g_assert_true(a->time < b->time || (a->time == b->time && a->id < b->id));
    }
}

/* Cancelling stream events, as the packet network's retransmission
 * timers do (armed at now + a timeout on a stream, cancelled when their
 * QP has nothing out, armed again later): two queues take the same
 * operations, one with streams, one with the heap alone, and must pop
 * the same events in the same order. Cancels hit streams' heads and
 * slots behind them; cancelled events are pushed again, to their stream
 * or the heap, or released and their memory reused. The rings must not
 * grow with the cancels: a few hundred events live, a million steps, and
 * a few events never cancelled (QPs that stay busy), so that the slots
 * behind them can only go by compaction. */
static void test_stream_cancel(void)
{
    enum { LIVE = 300, BUSY = 10, STEPS = 1000000 };
    /* timeouts far beyond the clock's advance while the test runs (it
     * pops heap events, less than HEAP_SPAN apart, and no stream event), so
     * that dead slots reach their stream's head only at the end, as with
     * NCCL's 4.3-s timer: the rings must compact */
    enum { HEAP_SPAN = 30000 };
    static const cs_time_t delays[2] = { 1000000000000000, 2000000000000000 };
    g_autoptr(cs_evq_t) qs = cs_evq_new();      /* streams */
    g_autoptr(cs_evq_t) qh = cs_evq_new();      /* heap only */
    g_autoptr(GRand) rng = g_rand_new_with_seed(11);
    cs_event_t *es[LIVE] = { NULL }, *eh[LIVE] = { NULL };
    cs_time_t now = 0;
    guint64 pops = 0, cancels = 0, head_cancels = 0;
    for (int step = 0; step < STEPS; step++) {
        int i = g_rand_int_range(rng, 0, LIVE);
        int op = g_rand_int_range(rng, 0, 4);   /* cancel, push, pop, cancel */
        if (op == 3)
            op = 0;
        if (es[i] == NULL) {
            es[i] = cs_evq_alloc(qs);
            eh[i] = cs_evq_alloc(qh);
            es[i]->a = eh[i]->a = i;
        }
        if (op == 0 && !cs_evq_scheduled(es[i]))
            op = 1;                      /* idle: armed again */
        else if (op == 1 && cs_evq_scheduled(es[i]))
            op = 0;                      /* armed: progress cancels it */
        if (op == 0 && i < BUSY)
            continue;                    /* always busy: armed once, never cancelled */
        if (op == 0) {
            g_assert_true(cs_evq_scheduled(eh[i]));
            head_cancels += cs_evq_peek(qs) == es[i];
            cs_evq_cancel(qs, es[i]);
            cs_evq_cancel(qh, eh[i]);
            cancels++;
            if (g_rand_boolean(rng)) {     /* its memory goes back to the pool */
                cs_evq_release(qs, es[i]);
                cs_evq_release(qh, eh[i]);
                es[i] = eh[i] = NULL;
            }
        } else if (op == 1) {
            int s = g_rand_int_range(rng, -1, 2);   /* -1: the heap */
            cs_time_t t = now + (s < 0 ? g_rand_int_range(rng, 0, HEAP_SPAN) : delays[s]);
            if (s < 0)
                cs_evq_push(qs, es[i], t);
            else
                cs_evq_push_stream(qs, es[i], t, s);
            cs_evq_push(qh, eh[i], t);
        } else if (op == 2 && cs_evq_len(qs) > 0 && cs_evq_peek(qs)->time < now + HEAP_SPAN) {
            g_assert_cmpuint(cs_evq_len(qs), ==, cs_evq_len(qh));
            cs_event_t *a = cs_evq_pop(qs), *b = cs_evq_pop(qh);
            if (a->a != b->a || a->time != b->time)
                g_error("pop %" G_GUINT64_FORMAT ": streams gave (%" G_GINT64_FORMAT ", %d), the heap (%"
                        G_GINT64_FORMAT ", %d)", pops, a->time, a->a, b->time, b->a);
            g_assert_cmpint(a->time, >=, now);
            now = a->time;
            pops++;
        }
    }
    while (cs_evq_len(qh) > 0) {
        cs_event_t *a = cs_evq_pop(qs), *b = cs_evq_pop(qh);
        g_assert_nonnull(a);
        g_assert_cmpint(a->a, ==, b->a);
        g_assert_cmpint(a->time, ==, b->time);
    }
    g_assert_null(cs_evq_pop(qs));
    g_assert_cmpuint(cs_evq_len(qs), ==, 0);
    g_test_message("%" G_GUINT64_FORMAT " pops, %" G_GUINT64_FORMAT " cancels (%" G_GUINT64_FORMAT
                   " at the head), ring slots %" G_GSIZE_FORMAT, pops, cancels, head_cancels,
                   cs_evq_stream_capacity(qs));
    g_assert_cmpuint(head_cancels, >, 1000);
    g_assert_cmpuint(cancels, >, 100000);
    /* each stream's ring: at most twice the LIVE events it can hold (the
     * smallest power of 2 above 2 x 300 is 1024), two streams */
    g_assert_cmpuint(cs_evq_stream_capacity(qs), <=, 2 * 1024);
    for (int i = 0; i < LIVE; i++) {
        if (es[i] != NULL) {
            cs_evq_release(qs, es[i]);
            cs_evq_release(qh, eh[i]);
        }
    }
}

/* The calendar (cs_evq_set_calendar) against a heap-only queue taking the
 * same operations: pushes within its window (many in one bucket, ties
 * included), beyond it (the heap), before the last pop's bucket (the
 * heap), on a stream; cancels, reschedules both ways, peeks between, and
 * the clock jumping past the window when little is left. Every pop must
 * give the same event at the same time. */
static void test_calendar(void)
{
    enum { LIVE = 2000, STEPS = 2000000, SHIFT = 6, NB = 256 };   /* 64-ps buckets, 16384 ps ahead */
    g_autoptr(cs_evq_t) qc = cs_evq_new();
    g_autoptr(cs_evq_t) qh = cs_evq_new();
    cs_evq_set_calendar(qc, SHIFT, NB);
    g_autoptr(GRand) rng = g_rand_new_with_seed(5);
    cs_event_t **ec = g_new0(cs_event_t *, LIVE), **eh = g_new0(cs_event_t *, LIVE);
    for (int i = 0; i < LIVE; i++) {
        ec[i] = cs_evq_alloc(qc);
        eh[i] = cs_evq_alloc(qh);
        ec[i]->a = eh[i]->a = i;
    }
    cs_time_t now = 0, stream_last = 0;
    guint64 pops = 0, far = 0, past = 0;
    for (int step = 0; step < STEPS; step++) {
        int i = g_rand_int_range(rng, 0, LIVE);
        int op = g_rand_int_range(rng, 0, 8);
        if (op < 3 && !cs_evq_scheduled(ec[i])) {
            cs_time_t t;
            int kind = g_rand_int_range(rng, 0, 10);
            if (kind < 6)
                t = now + g_rand_int_range(rng, 0, 8000);          /* the window, several a bucket */
            else if (kind < 8)
                t = now + 64 * g_rand_int_range(rng, 0, 4);        /* ties on bucket edges */
            else if (kind == 8 && step % 16 == 0)
                t = MAX(0, now - g_rand_int_range(rng, 1, 1000));  /* before the last pop */
            else
                t = now + g_rand_int_range(rng, 16000, 200000);    /* beyond it, or nearly */
            far += t - now >= (NB << SHIFT) - 64;
            past += t < now;
            if (kind == 9 && t >= stream_last) {
                cs_evq_push_stream(qc, ec[i], t, 0);
                stream_last = t;
            } else {
                cs_evq_push(qc, ec[i], t);
            }
            cs_evq_push(qh, eh[i], t);
        } else if (op == 3 && cs_evq_scheduled(ec[i])) {
            cs_evq_cancel(qc, ec[i]);
            cs_evq_cancel(qh, eh[i]);
        } else if (op == 4 && cs_evq_scheduled(ec[i]) && ec[i]->heap_idx != CS_EVQ_IN_STREAM) {
            cs_time_t t = now + (g_rand_boolean(rng) ? g_rand_int_range(rng, 0, 4000) : g_rand_int_range(rng, 0, 100000));
            cs_evq_reschedule(qc, ec[i], t);
            cs_evq_reschedule(qh, eh[i], t);
        } else if (op == 5 && cs_evq_len(qh) > 0) {
            /* a peek alone: the queue remembers its first event while
             * pushes and cancels go on */
            g_assert_cmpint(cs_evq_peek(qc)->a, ==, cs_evq_peek(qh)->a);
        } else if (op >= 6 && cs_evq_len(qh) > 0) {
            g_assert_cmpuint(cs_evq_len(qc), ==, cs_evq_len(qh));
            cs_event_t *pc = cs_evq_peek(qc), *ph = cs_evq_peek(qh);
            g_assert_cmpint(pc->a, ==, ph->a);
            cs_event_t *a = cs_evq_pop(qc), *b = cs_evq_pop(qh);
            g_assert_true(a == pc && b == ph);
            if (a->a != b->a || a->time != b->time)
                g_error("pop %" G_GUINT64_FORMAT ": calendar gave (%" G_GINT64_FORMAT ", %d), the heap (%"
                        G_GINT64_FORMAT ", %d)", pops, a->time, a->a, b->time, b->a);
            now = a->time;
            pops++;
        }
    }
    while (cs_evq_len(qh) > 0) {
        cs_event_t *a = cs_evq_pop(qc), *b = cs_evq_pop(qh);
        g_assert_cmpint(a->a, ==, b->a);
        g_assert_cmpint(a->time, ==, b->time);
    }
    g_assert_null(cs_evq_pop(qc));
    g_test_message("%" G_GUINT64_FORMAT " pops, %" G_GUINT64_FORMAT " pushes past the window, %" G_GUINT64_FORMAT
                   " before the last pop", pops, far, past);
    g_assert_cmpuint(pops, >, 500000);
    g_assert_cmpuint(far, >, 10000);
    g_assert_cmpuint(past, >, 1000);
    for (int i = 0; i < LIVE; i++) {
        cs_evq_release(qc, ec[i]);
        cs_evq_release(qh, eh[i]);
    }
    g_free(ec);
    g_free(eh);
}

/* Rescheduling an event that is not scheduled pushes it (the documented
 * "as if cancelled and pushed again"); one that is, moves in place, up or
 * down, and still sorts after the events already at its new time. */
static void test_reschedule_in_place(void)
{
    g_autoptr(cs_evq_t) q = cs_evq_new();
    cs_event_t *e[20];
    for (int i = 0; i < 20; i++) {
        e[i] = cs_evq_alloc(q);
        e[i]->a = i;
        cs_evq_push(q, e[i], 10 * i);          /* 0 10 .. 190 */
    }
    cs_event_t *x = cs_evq_alloc(q);
    x->a = 20;
    cs_evq_reschedule(q, x, 55);               /* not scheduled: pushed */
    g_assert_true(cs_evq_scheduled(x));
    cs_evq_reschedule(q, e[19], 20);           /* up: after e[2] (time 20) */
    cs_evq_reschedule(q, e[0], 100);           /* down: after e[10] */
    cs_evq_reschedule(q, e[5], 55);            /* down a little: after x */
    g_assert_cmpuint(cs_evq_len(q), ==, 21);
    static const int want[] = { 1, 2, 19, 3, 4, 20, 5, 6, 7, 8, 9, 10, 0, 11, 12, 13, 14, 15, 16, 17, 18 };
    for (gsize k = 0; k < G_N_ELEMENTS(want); k++) {
        cs_event_t *ev = cs_evq_pop(q);
        g_assert_nonnull(ev);
        g_assert_cmpint(ev->a, ==, want[k]);
        cs_evq_release(q, ev);
    }
    g_assert_null(cs_evq_pop(q));
}

/* An event pushed to a stream earlier than the stream's last goes to the
 * heap and still comes out in (time, sequence) order: stream 0 gets 30,
 * 10 (behind 30: the heap), 30 (not behind: the stream) and 5 (the heap,
 * then cancelled); the heap also has 20. Pops: 10, 20, then the 30s in
 * push order. */
static void test_stream_out_of_order(void)
{
    g_autoptr(cs_evq_t) q = cs_evq_new();
    static const cs_time_t times[] = { 30, 10, 30, 20, 5 };
    static const int stream[] = { 0, 0, 0, -1, 0 };
    cs_event_t *ev[5];
    for (int i = 0; i < 5; i++) {
        ev[i] = cs_evq_alloc(q);
        ev[i]->a = i;
        if (stream[i] >= 0)
            cs_evq_push_stream(q, ev[i], times[i], stream[i]);
        else
            cs_evq_push(q, ev[i], times[i]);
    }
    g_assert_cmpint(ev[1]->heap_idx, !=, CS_EVQ_IN_STREAM);
    g_assert_cmpint(ev[2]->heap_idx, ==, CS_EVQ_IN_STREAM);
    cs_evq_cancel(q, ev[4]);   /* 5, out of order too: in the heap, cancelled there */
    g_assert_false(cs_evq_scheduled(ev[4]));
    g_assert_cmpuint(cs_evq_len(q), ==, 4);
    static const int want[] = { 1, 3, 0, 2 };
    for (int k = 0; k < 4; k++) {
        cs_event_t *e = cs_evq_pop(q);
        g_assert_nonnull(e);
        g_assert_cmpint(e->a, ==, want[k]);
    }
    g_assert_null(cs_evq_pop(q));
    for (int i = 0; i < 5; i++)
        cs_evq_release(q, ev[i]);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/evq/order", test_order);
    g_test_add_func("/evq/ties", test_ties);
    g_test_add_func("/evq/reschedule-cancel", test_reschedule_cancel);
    g_test_add_func("/evq/reschedule-in-place", test_reschedule_in_place);
    g_test_add_func("/evq/random-1e6", test_random);
    g_test_add_func("/evq/streams", test_streams);
    g_test_add_func("/evq/stream-cancel", test_stream_cancel);
    g_test_add_func("/evq/stream-out-of-order", test_stream_out_of_order);
    g_test_add_func("/evq/calendar", test_calendar);
    return g_test_run();
}
