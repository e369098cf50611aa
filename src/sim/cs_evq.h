/* The discrete-event core shared by the simulating engines: time is a
 * 64-bit count of picoseconds (architecture.md "Units and determinism");
 * events live in an array-backed 4-ary min-heap ordered by (time,
 * sequence), so events at the same time come out in the order they were
 * scheduled, whatever the heap's shape (libuv's heap-inl.h rule).
 *
 * Events come from the queue's own pool: after warm-up, allocating,
 * scheduling, cancelling and releasing an event touch no allocator. An
 * event carries a small payload (kind and three integers) that the engine
 * interprets; the queue never looks at it. */
#ifndef CS_EVQ_H
#define CS_EVQ_H

#include <glib.h>

typedef gint64 cs_time_t;             /* picoseconds */
#define CS_TIME_NEVER G_MAXINT64
#define CS_PS_PER_S 1000000000000.0

typedef struct cs_event {
    cs_time_t time;
    guint64 seq;                      /* scheduling order, breaks ties */
    int heap_idx;                     /* position in the heap; CS_EVQ_IN_STREAM, CS_EVQ_IN_CALENDAR; -1 = not scheduled */
    int kind;                         /* payload, for the engine */
    int a, b;
    gint64 c;
    union {
        struct cs_event *next_free;   /* free-list link (pool) */
        struct cs_event *cal_next;    /* its calendar bucket's list, while there */
    };
    struct cs_event *cal_prev;
} cs_event_t;

#define CS_EVQ_IN_STREAM G_MAXINT
#define CS_EVQ_IN_CALENDAR (G_MAXINT - 1)

typedef struct cs_evq cs_evq_t;

cs_evq_t *cs_evq_new(void);
void cs_evq_free(cs_evq_t *q);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(cs_evq_t, cs_evq_free)

/* Takes an unscheduled event from the pool (payload zeroed). */
cs_event_t *cs_evq_alloc(cs_evq_t *q);
/* Returns an event to the pool; it must not be scheduled. */
void cs_evq_release(cs_evq_t *q, cs_event_t *ev);

/* Schedules an unscheduled event at 'time'. */
void cs_evq_push(cs_evq_t *q, cs_event_t *ev, cs_time_t time);
/* Streams: events pushed to one stream come with nondecreasing times (for
 * instance "now + a fixed delay": an arrival over a link of a given
 * latency, a timer armed for a fixed timeout). They skip the heap (a FIFO
 * each) and come out in the same (time, sequence) order as heap events;
 * one earlier than its stream's last goes to the heap instead (callers
 * need not track the stream's last time).
 * A stream event can be cancelled (cs_evq_cancel, O(1) but for a search of
 * the streams' heads): its slot stays behind, dead, until it reaches its
 * stream's head or the ring compacts when full, so a stream's memory
 * follows its live events, not the cancels. Only the heap's events can be
 * rescheduled. Streams 0 to CS_EVQ_STREAMS - 1. */
#define CS_EVQ_STREAMS 16
void cs_evq_push_stream(cs_evq_t *q, cs_event_t *ev, cs_time_t time, int stream);

/* Calendar (a queue's option, set while it is empty): events due within
 * nbuckets x 2^shift ps of the last event popped go to a calendar queue
 * (buckets of 2^shift ps, each a list in (time, sequence) order, and a
 * bitmap of the buckets in use) instead of the heap: pushing, cancelling
 * and popping them cost O(1) while buckets hold a few events, which suits
 * a packet network's near future (serializations, arrivals, pacing).
 * Later events go to the heap. The order of pops is unchanged: (time,
 * sequence) across heap, streams and calendar. nbuckets: a power of 2
 * from 64 to 65536. */
void cs_evq_set_calendar(cs_evq_t *q, int shift, gsize nbuckets);

/* Moves a scheduled event to a new time. It takes a fresh sequence number:
 * among events at its new time it comes after those already there, as if
 * cancelled and pushed again. */
void cs_evq_reschedule(cs_evq_t *q, cs_event_t *ev, cs_time_t time);
/* Unschedules an event (it stays allocated). No-op if not scheduled. */
void cs_evq_cancel(cs_evq_t *q, cs_event_t *ev);
static inline gboolean cs_evq_scheduled(const cs_event_t *ev) { return ev->heap_idx >= 0; }

/* The earliest event, or NULL when empty; pop unschedules it (the caller
 * then releases it or pushes it again). */
cs_event_t *cs_evq_peek(const cs_evq_t *q);
cs_event_t *cs_evq_pop(cs_evq_t *q);
gsize cs_evq_len(const cs_evq_t *q);
/* Events ever popped (for events/s figures). */
guint64 cs_evq_popped(const cs_evq_t *q);
/* Slots the streams' rings hold (live and dead): their memory. */
gsize cs_evq_stream_capacity(const cs_evq_t *q);

#endif
