/* A 4-ary min-heap of (time, seq, event) slots, each event knowing its
 * slot so that cancel and reschedule are O(log n). Four children per node
 * halve the levels a pop walks (about 6 instead of 12 for the packet
 * engine's few thousand events), and a node's four children sit in two
 * aligned cache lines. The order is the total order on (time, seq), so any
 * heap shape pops the same sequence.
 *
 * The pool hands out events from blocks that are never moved, so pointers
 * stay valid; blocks, the heap array and the stream rings grow by
 * doubling, which happens only while a run reaches its high-water mark.
 *
 * Beside the heap: streams (FIFOs of events in time order) and, where a
 * queue asks for it, a calendar of the near future (cs_evq_set_calendar;
 * the libuv timer wheel's and htsim's idea: buckets of a fixed span, each
 * a short sorted list). A pop takes the least (time, seq) of the heap's
 * top, the streams' heads and the calendar's first event. */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "sim/cs_evq.h"
#include "util/cs_block_pool.h"

#define BLOCK_MIN 256
#define ARITY 4

/* A heap key: time (its sign bit flipped, so that unsigned order is
 * signed order) above the sequence number. One 128-bit comparison orders
 * two slots without a branch, which matters: which of four children is the
 * smallest is a coin toss that a branch predictor loses. Keys and event
 * pointers are kept in two arrays, so that a node's four children's keys
 * fill exactly one 64-byte cache line (see grow_heap). */
typedef unsigned __int128 hkey_t;

static inline hkey_t mkkey(cs_time_t time, guint64 seq)
{
    return ((hkey_t)((guint64)time ^ G_GUINT64_CONSTANT(0x8000000000000000)) << 64) | seq;
}

/* A heap slot: 32 bytes, so four siblings fill two cache lines. */
typedef struct {
    hkey_t key;
    cs_event_t *ev;
} hslot_t;

/* A stream slot: the key kept with its event. */
typedef struct {
    cs_time_t time;
    guint64 seq;
    cs_event_t *ev;
} slot_t;

/* A stream: a FIFO ring of slots in time order. A slot whose event was
 * cancelled (or scheduled again since) is dead: its event's sequence or
 * place no longer match it. A stream's head is always live. */
typedef struct {
    slot_t *ring;
    gsize head, len, cap;         /* cap: a power of 2 */
} stream_t;

/* The calendar: bucket b (absolute: time >> shift) is cal[b % nb], a
 * circular list through cal_next/cal_prev in (time, seq) order, its head
 * the first. Only buckets cur .. cur + nb - 1 are used, so a bucket holds
 * one span of time and the buckets from cur's onwards, wrapping, are in
 * time order. cur is the bucket of the last event popped, and every
 * event left is at or after it. */
typedef struct {
    cs_event_t **head;            /* nb lists */
    guint64 *bits;                /* buckets in use, nb / 64 words */
    guint64 summary;              /* words of bits in use */
    gsize nb, len;                /* nb 0: no calendar */
    int shift;
    guint64 cur;
    cs_event_t *first;            /* its first event; NULL: not known (or empty) */
} calendar_t;

/* Where an event is: its stream's index, or one of these. */
#define FROM_NONE (-3)
#define FROM_CAL (-2)
#define FROM_HEAP (-1)

#define CAL_NB_MIN 64
#define CAL_NB_MAX 4096           /* 64 words of bits: one summary word */

struct cs_evq {
    calendar_t cal;
    stream_t streams[CS_EVQ_STREAMS];
    int nstreams;                 /* streams used so far: 0 .. nstreams - 1 scanned */
    gsize stream_len;             /* live events in all streams */
    gsize stream_dead;            /* dead slots in all streams */
    hslot_t *heap;
    void *heap_mem;               /* heap's allocation (heap is offset in it) */
    gsize len, cap;
    guint64 next_seq;
    guint64 popped;
    /* the first event (NULL: none) and where it is, while next_known: a
     * pop after a peek finds it at once; a push earlier than it replaces
     * it, removing it or rescheduling forgets it */
    gboolean next_known;
    cs_event_t *next;
    int next_from;
    cs_block_pool_t pool;         /* the events (util/cs_block_pool.h) */
};

/* ev (time and seq set) was just scheduled 'from': its seq is the
 * largest, so it comes first only if its time is earlier. */
static inline void note_push(cs_evq_t *q, cs_event_t *ev, int from)
{
    if (q->next_known && (q->next == NULL || ev->time < q->next->time)) {
        q->next = ev;
        q->next_from = from;
    }
}

cs_evq_t *cs_evq_new(void)
{
    cs_evq_t *q = g_new0(cs_evq_t, 1);
    cs_block_pool_init(&q->pool, sizeof(cs_event_t), offsetof(cs_event_t, next_free), BLOCK_MIN);
    return q;
}

void cs_evq_free(cs_evq_t *q)
{
    if (q == NULL)
        return;
    cs_block_pool_clear(&q->pool);
    for (int i = 0; i < CS_EVQ_STREAMS; i++)
        g_free(q->streams[i].ring);
    g_free(q->cal.head);
    g_free(q->cal.bits);
    g_free(q->heap_mem);
    g_free(q);
}

cs_event_t *cs_evq_alloc(cs_evq_t *q)
{
    cs_event_t *ev = cs_block_pool_take(&q->pool);
    memset(ev, 0, sizeof *ev);
    ev->heap_idx = -1;
    return ev;
}

void cs_evq_release(cs_evq_t *q, cs_event_t *ev)
{
    g_return_if_fail(ev->heap_idx < 0);
    cs_block_pool_put(&q->pool, ev);
}

static inline void put(cs_evq_t *q, gsize i, hkey_t k, cs_event_t *ev)
{
    q->heap[i] = (hslot_t){ k, ev };
    ev->heap_idx = (int)i;
}

static inline void move(cs_evq_t *q, gsize to, gsize from)
{
    q->heap[to] = q->heap[from];
    q->heap[to].ev->heap_idx = (int)to;
}

/* Doubles the heap's arrays. Node i's children are 4i+1 .. 4i+4: with key
 * placed 3 slots past a 64-byte boundary, every group of four siblings
 * starts on a boundary. */
static void grow_heap(cs_evq_t *q)
{
    gsize cap = q->cap ? q->cap * 2 : BLOCK_MIN;
    char *mem = g_malloc((cap + 3) * sizeof(hslot_t) + 63);
    hslot_t *heap = (hslot_t *)(((guintptr)mem + 63) & ~(guintptr)63) + 3;
    if (q->len > 0)
        memcpy(heap, q->heap, q->len * sizeof *heap);
    g_free(q->heap_mem);
    q->heap_mem = mem;
    q->heap = heap;
    q->cap = cap;
}

/* Moves the slot (k, ev) up from the hole at i. */
static inline void sift_up(cs_evq_t *q, gsize i, hkey_t k, cs_event_t *ev)
{
    while (i > 0) {
        gsize parent = (i - 1) / ARITY;
        if (k >= q->heap[parent].key)
            break;
        move(q, i, parent);
        i = parent;
    }
    put(q, i, k, ev);
}

/* The smallest of the children c .. c + 3, without a branch. */
static inline gsize min4(const hslot_t *h, gsize c)
{
    gsize a = c + (h[c + 1].key < h[c].key);
    gsize b = c + 2 + (h[c + 3].key < h[c + 2].key);
    return h[b].key < h[a].key ? b : a;
}

/* The smallest child of i among the first n slots, or 0 if i has none. */
static inline gsize min_child(const hslot_t *h, gsize n, gsize i)
{
    gsize c = ARITY * i + 1;
    if (c + ARITY <= n)
        return min4(h, c);
    if (c >= n)
        return 0;
    gsize best = c;
    for (gsize j = c + 1; j < n; j++)
        if (h[j].key < h[best].key)
            best = j;
    return best;
}

/* Moves the slot (k, ev) down from the hole at i. */
static void sift_down(cs_evq_t *q, gsize i, hkey_t k, cs_event_t *ev)
{
    for (gsize c; (c = min_child(q->heap, q->len, i)) != 0 && q->heap[c].key < k;) {
        move(q, i, c);
        i = c;
    }
    put(q, i, k, ev);
}

/* Fills the hole at i with (k, ev), up or down. */
static void fill(cs_evq_t *q, gsize i, hkey_t k, cs_event_t *ev)
{
    if (i > 0 && k < q->heap[(i - 1) / ARITY].key)
        sift_up(q, i, k, ev);
    else
        sift_down(q, i, k, ev);
}

/* Removes the top slot: the hole at the root goes down along the smallest
 * children to a leaf, and the last slot moves up from there (it came from
 * the bottom, so it rarely climbs far: one comparison a level instead of
 * two on the way down). */
static void drop_top(cs_evq_t *q)
{
    gsize n = --q->len;
    if (n == 0)
        return;
    hkey_t k = q->heap[n].key;
    cs_event_t *ev = q->heap[n].ev;
    gsize i = 0;
    for (gsize c; (c = min_child(q->heap, n, i)) != 0;) {
        move(q, i, c);
        i = c;
    }
    sift_up(q, i, k, ev);
}

/* Removes slot i, filling the hole with the last slot. */
static void remove_at(cs_evq_t *q, gsize i)
{
    gsize n = --q->len;
    if (i == n)
        return;
    fill(q, i, q->heap[n].key, q->heap[n].ev);
}

/* ---- calendar ------------------------------------------------------- */

void cs_evq_set_calendar(cs_evq_t *q, int shift, gsize nbuckets)
{
    g_return_if_fail(cs_evq_len(q) == 0 && q->cal.nb == 0);
    g_return_if_fail(shift >= 0 && shift <= 40 && nbuckets >= CAL_NB_MIN && nbuckets <= CAL_NB_MAX &&
                     (nbuckets & (nbuckets - 1)) == 0);
    calendar_t *c = &q->cal;
    c->head = g_new0(cs_event_t *, nbuckets);
    c->bits = g_new0(guint64, nbuckets / 64);
    c->nb = nbuckets;
    c->shift = shift;
}

/* Whether an event at 'time' goes to the calendar, and its bucket. */
static inline gboolean cal_fits(const calendar_t *c, cs_time_t time, guint64 *b)
{
    if (c->nb == 0 || time < 0)
        return FALSE;
    *b = (guint64)time >> c->shift;
    return *b - c->cur < c->nb;       /* cur <= b < cur + nb */
}

/* Puts ev (time and seq set) in bucket b. Its seq is the largest there
 * is, so it goes after every event at its time or before: walking back
 * from the tail, a step per event due later in the same bucket. */
static inline void cal_insert(calendar_t *c, cs_event_t *ev, guint64 b)
{
    gsize i = b & (c->nb - 1);
    cs_event_t *h = c->head[i];
    ev->heap_idx = CS_EVQ_IN_CALENDAR;
    if (c->len++ == 0)
        c->first = ev;
    else if (c->first != NULL && ev->time < c->first->time)
        c->first = ev;
    if (h == NULL) {
        ev->cal_next = ev->cal_prev = ev;
        c->head[i] = ev;
        c->bits[i >> 6] |= G_GUINT64_CONSTANT(1) << (i & 63);
        c->summary |= G_GUINT64_CONSTANT(1) << (i >> 6);
        return;
    }
    cs_event_t *p = h->cal_prev;
    while (p->time > ev->time && p != h)
        p = p->cal_prev;
    gboolean new_head = p->time > ev->time;   /* p == h: before it, after the tail */
    if (new_head)
        p = h->cal_prev;
    ev->cal_prev = p;
    ev->cal_next = p->cal_next;
    p->cal_next->cal_prev = ev;
    p->cal_next = ev;
    if (new_head)
        c->head[i] = ev;
}

static inline void cal_unlink(calendar_t *c, cs_event_t *ev)
{
    gsize i = ((guint64)ev->time >> c->shift) & (c->nb - 1);
    if (ev->cal_next == ev) {
        c->head[i] = NULL;
        c->bits[i >> 6] &= ~(G_GUINT64_CONSTANT(1) << (i & 63));
        if (c->bits[i >> 6] == 0)
            c->summary &= ~(G_GUINT64_CONSTANT(1) << (i >> 6));
    } else {
        ev->cal_prev->cal_next = ev->cal_next;
        ev->cal_next->cal_prev = ev->cal_prev;
        if (c->head[i] == ev)
            c->head[i] = ev->cal_next;
    }
    ev->heap_idx = -1;                /* cal_next/cal_prev are stale: set again on insert */
    if (c->first == ev)
        c->first = NULL;
    c->len--;
}

/* The calendar's first event (NULL: empty): the head of the first bucket
 * in use from cur's onwards, wrapping. */
static inline cs_event_t *cal_first(calendar_t *c)
{
    if (c->first != NULL || c->len == 0)
        return c->first;
    gsize i0 = c->cur & (c->nb - 1), w0 = i0 >> 6;
    guint64 w = c->bits[w0] & (~G_GUINT64_CONSTANT(0) << (i0 & 63));
    gsize i;
    if (w != 0) {
        i = (w0 << 6) | (gsize)__builtin_ctzll(w);
    } else {
        guint64 later = w0 + 1 < 64 ? c->summary & (~G_GUINT64_CONSTANT(0) << (w0 + 1)) : 0;
        /* none after w0: the first word in use from 0 (w0's bits below
         * i0 included, the last to come) */
        gsize wi = (gsize)__builtin_ctzll(later != 0 ? later : c->summary);
        i = (wi << 6) | (gsize)__builtin_ctzll(c->bits[wi]);
    }
    c->first = c->head[i];
    return c->first;
}

/* ---- push ------------------------------------------------------------ */

void cs_evq_push(cs_evq_t *q, cs_event_t *ev, cs_time_t time)
{
    g_return_if_fail(ev->heap_idx < 0);
    ev->time = time;
    ev->seq = q->next_seq++;
    guint64 b;
    if (cal_fits(&q->cal, time, &b)) {
        cal_insert(&q->cal, ev, b);
        note_push(q, ev, FROM_CAL);
        return;
    }
    if (G_UNLIKELY(q->len == q->cap))
        grow_heap(q);
    sift_up(q, q->len++, mkkey(time, ev->seq), ev);
    note_push(q, ev, FROM_HEAP);
}

static inline gboolean slot_live(const slot_t *s)
{
    return s->ev->heap_idx == CS_EVQ_IN_STREAM && s->ev->seq == s->seq;
}

/* Drops the dead slots at the stream's head (there are only dead slots
 * where something was cancelled). */
static inline void purge_head(cs_evq_t *q, stream_t *st)
{
    while (G_UNLIKELY(q->stream_dead > 0) && st->len > 0 && !slot_live(&st->ring[st->head])) {
        st->head = (st->head + 1) & (st->cap - 1);
        st->len--;
        q->stream_dead--;
    }
}

/* A full ring: its dead slots go first; it doubles only if live slots
 * still fill more than half of it, so compacting costs O(1) a push and
 * the ring stays within twice the most events it held alive. */
static void stream_make_room(cs_evq_t *q, stream_t *st)
{
    gsize n = 0;
    if (q->stream_dead > 0 && st->cap > 0) {
        for (gsize i = 0; i < st->len; i++) {
            slot_t s = st->ring[(st->head + i) & (st->cap - 1)];
            if (slot_live(&s))
                st->ring[(st->head + n++) & (st->cap - 1)] = s;
        }
        q->stream_dead -= st->len - n;
        st->len = n;
        if (n <= st->cap / 2)
            return;
    }
    gsize cap = st->cap ? st->cap * 2 : BLOCK_MIN;
    slot_t *r = g_new(slot_t, cap);
    for (gsize i = 0; i < st->len; i++)
        r[i] = st->ring[(st->head + i) & (st->cap - 1)];
    g_free(st->ring);
    st->ring = r;
    st->head = 0;
    st->cap = cap;
}

void cs_evq_push_stream(cs_evq_t *q, cs_event_t *ev, cs_time_t time, int stream)
{
    g_return_if_fail(ev->heap_idx < 0 && stream >= 0 && stream < CS_EVQ_STREAMS);
    stream_t *st = &q->streams[stream];
    if (G_UNLIKELY(st->len > 0 && st->ring[(st->head + st->len - 1) & (st->cap - 1)].time > time)) {
        cs_evq_push(q, ev, time);   /* out of the stream's order: the heap keeps it in (time, seq) order */
        return;
    }
    if (G_UNLIKELY(st->len == st->cap))
        stream_make_room(q, st);
    ev->time = time;
    ev->seq = q->next_seq++;
    ev->heap_idx = CS_EVQ_IN_STREAM;
    st->ring[(st->head + st->len++) & (st->cap - 1)] = (slot_t){ time, ev->seq, ev };
    q->stream_len++;
    if (stream >= q->nstreams)
        q->nstreams = stream + 1;
    note_push(q, ev, stream);
}

/* The first event of all, NULL when none, and where it is: FROM_HEAP,
 * FROM_CAL or its stream. */
static inline cs_event_t *first(cs_evq_t *q, int *from)
{
    if (q->next_known) {
        *from = q->next_from;
        return q->next;
    }
    cs_event_t *best = NULL;
    int where = FROM_NONE;
    hkey_t b = ~(hkey_t)0;
    if (q->len > 0) {
        b = q->heap[0].key;
        best = q->heap[0].ev;
        where = FROM_HEAP;
    }
    if (q->cal.len > 0) {
        cs_event_t *c = cal_first(&q->cal);
        hkey_t k = mkkey(c->time, c->seq);
        if (k < b) {
            b = k;
            best = c;
            where = FROM_CAL;
        }
    }
    if (q->stream_len > 0) {
        for (int i = 0; i < q->nstreams; i++) {
            const stream_t *st = &q->streams[i];
            if (st->len == 0)
                continue;
            const slot_t *h = &st->ring[st->head];
            hkey_t k = mkkey(h->time, h->seq);
            if (k < b) {
                b = k;
                best = h->ev;
                where = i;
            }
        }
    }
    *from = where;
    q->next_known = TRUE;
    q->next = best;
    q->next_from = where;
    return best;
}

/* A stream event's slot dies where it is; at its stream's head it goes
 * at once, with the dead slots behind it, so heads stay live. */
static void cancel_stream(cs_evq_t *q, cs_event_t *ev)
{
    q->stream_len--;
    q->stream_dead++;
    for (int i = 0; i < q->nstreams; i++) {
        stream_t *st = &q->streams[i];
        if (st->len > 0 && st->ring[st->head].ev == ev && st->ring[st->head].seq == ev->seq) {
            ev->heap_idx = -1;
            purge_head(q, st);
            return;
        }
    }
    ev->heap_idx = -1;
}

void cs_evq_cancel(cs_evq_t *q, cs_event_t *ev)
{
    if (ev->heap_idx >= 0 && q->next == ev)
        q->next_known = FALSE;
    if (ev->heap_idx == CS_EVQ_IN_STREAM) {
        cancel_stream(q, ev);
        return;
    }
    if (ev->heap_idx == CS_EVQ_IN_CALENDAR) {
        cal_unlink(&q->cal, ev);
        return;
    }
    if (ev->heap_idx < 0)
        return;
    gsize i = (gsize)ev->heap_idx;
    ev->heap_idx = -1;
    remove_at(q, i);
}

/* In the heap, in place: the slot takes its new key and moves up or down
 * from where it is (one sift instead of a removal and a push). */
void cs_evq_reschedule(cs_evq_t *q, cs_event_t *ev, cs_time_t time)
{
    g_return_if_fail(ev->heap_idx != CS_EVQ_IN_STREAM);
    q->next_known = FALSE;
    if (ev->heap_idx == CS_EVQ_IN_CALENDAR)
        cal_unlink(&q->cal, ev);
    if (ev->heap_idx < 0) {
        cs_evq_push(q, ev, time);
        return;
    }
    ev->time = time;
    ev->seq = q->next_seq++;
    fill(q, (gsize)ev->heap_idx, mkkey(time, ev->seq), ev);
}

cs_event_t *cs_evq_peek(const cs_evq_t *q)
{
    int from;
    /* the calendar remembers its first event: q is never a const object
     * (cs_evq_new) */
    return first((cs_evq_t *)q, &from);
}

cs_event_t *cs_evq_pop(cs_evq_t *q)
{
    int from;
    cs_event_t *ev = first(q, &from);
    q->next_known = FALSE;
    if (from >= 0) {
        stream_t *st = &q->streams[from];
        st->head = (st->head + 1) & (st->cap - 1);
        st->len--;
        q->stream_len--;
        ev->heap_idx = -1;
        purge_head(q, st);
    } else if (from == FROM_CAL) {
        cal_unlink(&q->cal, ev);
    } else if (from == FROM_HEAP) {
        ev->heap_idx = -1;
        drop_top(q);
    } else {
        return NULL;
    }
    /* everything left is at or after ev: the calendar's window moves on */
    if (q->cal.nb > 0 && ev->time >= 0 && ((guint64)ev->time >> q->cal.shift) > q->cal.cur)
        q->cal.cur = (guint64)ev->time >> q->cal.shift;
    q->popped++;
    return ev;
}

gsize cs_evq_len(const cs_evq_t *q)
{
    return q->len + q->stream_len + q->cal.len;
}

guint64 cs_evq_popped(const cs_evq_t *q)
{
    return q->popped;
}

gsize cs_evq_stream_capacity(const cs_evq_t *q)
{
    gsize n = 0;
    for (int i = 0; i < CS_EVQ_STREAMS; i++)
        n += q->streams[i].cap;
    return n;
}
