/* Binary min-heap of event pointers keyed by (time, seq), each event
 * knowing its slot so that cancel and reschedule are O(log n). The pool
 * hands out events from blocks that are never moved, so pointers stay
 * valid; blocks and the heap array grow by doubling, which happens only
 * while a run reaches its high-water mark. */
#include "config.h"

#include <string.h>

#include "sim/cs_evq.h"

#define BLOCK_MIN 256

/* A heap slot carries its event's key, so that sifting compares without
 * touching the events (they are scattered over the pool). */
typedef struct {
    cs_time_t time;
    guint64 seq;
    cs_event_t *ev;
} slot_t;

/* A stream: a FIFO ring of slots in time order. */
typedef struct {
    slot_t *ring;
    gsize head, len, cap;         /* cap: a power of 2 */
} stream_t;

struct cs_evq {
    stream_t streams[CS_EVQ_STREAMS];
    int nstreams;                 /* streams used so far: 0 .. nstreams - 1 scanned */
    gsize stream_len;             /* events in all streams */
    slot_t *heap;
    gsize len, cap;
    guint64 next_seq;
    guint64 popped;
    cs_event_t *free_list;
    GPtrArray *blocks;            /* pool blocks, freed with the queue */
    gsize next_block;             /* size of the next block */
};

cs_evq_t *cs_evq_new(void)
{
    cs_evq_t *q = g_new0(cs_evq_t, 1);
    q->blocks = g_ptr_array_new_with_free_func(g_free);
    q->next_block = BLOCK_MIN;
    return q;
}

void cs_evq_free(cs_evq_t *q)
{
    if (q == NULL)
        return;
    g_ptr_array_free(q->blocks, TRUE);
    for (int i = 0; i < CS_EVQ_STREAMS; i++)
        g_free(q->streams[i].ring);
    g_free(q->heap);
    g_free(q);
}

static void grow_pool(cs_evq_t *q)
{
    gsize n = q->next_block;
    cs_event_t *b = g_new0(cs_event_t, n);
    g_ptr_array_add(q->blocks, b);
    for (gsize i = n; i-- > 0;) {
        b[i].heap_idx = -1;
        b[i].next_free = q->free_list;
        q->free_list = &b[i];
    }
    q->next_block = n * 2;
}

cs_event_t *cs_evq_alloc(cs_evq_t *q)
{
    if (G_UNLIKELY(q->free_list == NULL))
        grow_pool(q);
    cs_event_t *ev = q->free_list;
    q->free_list = ev->next_free;
    memset(ev, 0, sizeof *ev);
    ev->heap_idx = -1;
    return ev;
}

void cs_evq_release(cs_evq_t *q, cs_event_t *ev)
{
    g_return_if_fail(ev->heap_idx < 0);
    ev->next_free = q->free_list;
    q->free_list = ev;
}

static inline gboolean before(const slot_t *x, const slot_t *y)
{
    return x->time < y->time || (x->time == y->time && x->seq < y->seq);
}

static inline void put(cs_evq_t *q, gsize i, slot_t s)
{
    q->heap[i] = s;
    s.ev->heap_idx = (int)i;
}

static void sift_up(cs_evq_t *q, gsize i)
{
    slot_t s = q->heap[i];
    while (i > 0) {
        gsize parent = (i - 1) / 2;
        if (!before(&s, &q->heap[parent]))
            break;
        put(q, i, q->heap[parent]);
        i = parent;
    }
    put(q, i, s);
}

static void sift_down(cs_evq_t *q, gsize i)
{
    slot_t s = q->heap[i];
    for (;;) {
        gsize l = 2 * i + 1, best = i;
        const slot_t *b = &s;
        if (l < q->len && before(&q->heap[l], b)) {
            best = l;
            b = &q->heap[l];
        }
        if (l + 1 < q->len && before(&q->heap[l + 1], b)) {
            best = l + 1;
            b = &q->heap[l + 1];
        }
        if (best == i)
            break;
        put(q, i, *b);
        i = best;
    }
    put(q, i, s);
}

void cs_evq_push(cs_evq_t *q, cs_event_t *ev, cs_time_t time)
{
    g_return_if_fail(ev->heap_idx < 0);
    if (G_UNLIKELY(q->len == q->cap)) {
        q->cap = q->cap ? q->cap * 2 : BLOCK_MIN;
        q->heap = g_renew(slot_t, q->heap, q->cap);
    }
    ev->time = time;
    ev->seq = q->next_seq++;
    put(q, q->len++, (slot_t){ time, ev->seq, ev });
    sift_up(q, q->len - 1);
}

/* Removes the event at slot i, filling the hole with the last event. */
static void remove_at(cs_evq_t *q, gsize i)
{
    q->heap[i].ev->heap_idx = -1;
    q->len--;
    if (i == q->len)
        return;
    slot_t last = q->heap[q->len];
    put(q, i, last);
    if (i > 0 && before(&last, &q->heap[(i - 1) / 2]))
        sift_up(q, i);
    else
        sift_down(q, i);
}

void cs_evq_push_stream(cs_evq_t *q, cs_event_t *ev, cs_time_t time, int stream)
{
    g_return_if_fail(ev->heap_idx < 0 && stream >= 0 && stream < CS_EVQ_STREAMS);
    stream_t *st = &q->streams[stream];
    if (G_UNLIKELY(st->len == st->cap)) {
        gsize cap = st->cap ? st->cap * 2 : BLOCK_MIN;
        slot_t *r = g_new(slot_t, cap);
        for (gsize i = 0; i < st->len; i++)
            r[i] = st->ring[(st->head + i) & (st->cap - 1)];
        g_free(st->ring);
        st->ring = r;
        st->head = 0;
        st->cap = cap;
    }
    g_return_if_fail(st->len == 0 || st->ring[(st->head + st->len - 1) & (st->cap - 1)].time <= time);
    ev->time = time;
    ev->seq = q->next_seq++;
    ev->heap_idx = CS_EVQ_IN_STREAM;
    st->ring[(st->head + st->len++) & (st->cap - 1)] = (slot_t){ time, ev->seq, ev };
    q->stream_len++;
    if (stream >= q->nstreams)
        q->nstreams = stream + 1;
}

/* The stream whose head comes first, or -1 when the heap's top comes
 * before every stream's head (or all streams are empty). */
static int first_stream(const cs_evq_t *q)
{
    if (q->stream_len == 0)
        return -1;
    int best = -1;
    const slot_t *b = q->len > 0 ? &q->heap[0] : NULL;
    for (int i = 0; i < q->nstreams; i++) {
        const stream_t *st = &q->streams[i];
        if (st->len == 0)
            continue;
        const slot_t *h = &st->ring[st->head];
        if (b == NULL || before(h, b)) {
            b = h;
            best = i;
        }
    }
    return best;
}

void cs_evq_cancel(cs_evq_t *q, cs_event_t *ev)
{
    g_return_if_fail(ev->heap_idx != CS_EVQ_IN_STREAM);
    if (ev->heap_idx >= 0)
        remove_at(q, (gsize)ev->heap_idx);
}

void cs_evq_reschedule(cs_evq_t *q, cs_event_t *ev, cs_time_t time)
{
    cs_evq_cancel(q, ev);
    cs_evq_push(q, ev, time);
}

cs_event_t *cs_evq_peek(const cs_evq_t *q)
{
    int s = first_stream(q);
    if (s >= 0)
        return q->streams[s].ring[q->streams[s].head].ev;
    return q->len > 0 ? q->heap[0].ev : NULL;
}

cs_event_t *cs_evq_pop(cs_evq_t *q)
{
    int s = first_stream(q);
    if (s >= 0) {
        stream_t *st = &q->streams[s];
        cs_event_t *ev = st->ring[st->head].ev;
        st->head = (st->head + 1) & (st->cap - 1);
        st->len--;
        q->stream_len--;
        ev->heap_idx = -1;
        q->popped++;
        return ev;
    }
    if (q->len == 0)
        return NULL;
    cs_event_t *ev = q->heap[0].ev;
    remove_at(q, 0);
    q->popped++;
    return ev;
}

gsize cs_evq_len(const cs_evq_t *q)
{
    return q->len + q->stream_len;
}

guint64 cs_evq_popped(const cs_evq_t *q)
{
    return q->popped;
}
