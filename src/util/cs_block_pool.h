/* Fixed-size records from blocks that never move (pointers to records stay
 * valid while the pool lives), threaded on one free list through a pointer
 * field of the record at 'link_off'. Each new block is twice the last, so a
 * run that reaches n records alive grows O(log n) times and then only
 * recycles: the hot path allocates nothing. The packet pool (cs_pkt.c) and
 * the event queue's events (cs_evq.c) are both one. */
#ifndef CS_BLOCK_POOL_H
#define CS_BLOCK_POOL_H

#include <glib.h>
#include <string.h>

typedef struct {
    void *free_list;
    GPtrArray *blocks;
    gsize elem, link_off;            /* record size; offset of its link (a pointer) */
    gsize next_block;                /* records in the next block */
    gsize capacity, in_use;
} cs_block_pool_t;

void cs_block_pool_init(cs_block_pool_t *p, gsize elem, gsize link_off, gsize first_block);
void cs_block_pool_clear(cs_block_pool_t *p);
/* Adds a block (zeroed) to the free list. */
void cs_block_pool_grow(cs_block_pool_t *p);

/* A record (its old contents, link included: the caller sets it up). */
static inline void *cs_block_pool_take(cs_block_pool_t *p)
{
    if (G_UNLIKELY(p->free_list == NULL))
        cs_block_pool_grow(p);
    void *r = p->free_list;
    memcpy(&p->free_list, (char *)r + p->link_off, sizeof(void *));
    p->in_use++;
    return r;
}

static inline void cs_block_pool_put(cs_block_pool_t *p, void *r)
{
    memcpy((char *)r + p->link_off, &p->free_list, sizeof(void *));
    p->free_list = r;
    p->in_use--;
}

#endif
