/* Packet pool: blocks that never move (packets are referenced by pointer
 * from queues and wires) threaded onto one free list; each new block is
 * twice the last, so a run reaching n packets in flight grows O(log n)
 * times and then never again. */
#include "config.h"

#include <string.h>

#include "sim/cs_pkt.h"

#define BLOCK_MIN 256

struct cs_pkt_pool {
    cs_pkt_t *free_list;
    GPtrArray *blocks;
    gsize next_block;
    gsize capacity, in_use;
};

cs_pkt_route_t *cs_pkt_route_new(const int *ports, int n)
{
    g_return_val_if_fail(n >= 0 && (n == 0 || ports != NULL), NULL);
    cs_pkt_route_t *r = g_malloc(sizeof *r + (gsize)n * sizeof r->port[0]);
    r->n = n;
    if (n > 0)
        memcpy(r->port, ports, (gsize)n * sizeof r->port[0]);
    return r;
}

void cs_pkt_route_free(cs_pkt_route_t *r)
{
    g_free(r);
}

cs_pkt_pool_t *cs_pkt_pool_new(void)
{
    cs_pkt_pool_t *pool = g_new0(cs_pkt_pool_t, 1);
    pool->blocks = g_ptr_array_new_with_free_func(g_free);
    pool->next_block = BLOCK_MIN;
    return pool;
}

void cs_pkt_pool_free(cs_pkt_pool_t *pool)
{
    if (pool == NULL)
        return;
    g_ptr_array_free(pool->blocks, TRUE);
    g_free(pool);
}

static void grow(cs_pkt_pool_t *pool)
{
    gsize n = pool->next_block;
    cs_pkt_t *b = g_new(cs_pkt_t, n);
    g_ptr_array_add(pool->blocks, b);
    for (gsize i = n; i-- > 0;) {
        b[i].next = pool->free_list;
        pool->free_list = &b[i];
    }
    pool->capacity += n;
    pool->next_block = n * 2;
}

cs_pkt_t *cs_pkt_alloc(cs_pkt_pool_t *pool)
{
    if (G_UNLIKELY(pool->free_list == NULL))
        grow(pool);
    cs_pkt_t *p = pool->free_list;
    pool->free_list = p->next;
    memset(p, 0, sizeof *p);
    pool->in_use++;
    return p;
}

void cs_pkt_release(cs_pkt_pool_t *pool, cs_pkt_t *p)
{
    g_return_if_fail(pool->in_use > 0);
    p->next = pool->free_list;
    pool->free_list = p;
    pool->in_use--;
}

guint64 cs_pkt_pool_grows(const cs_pkt_pool_t *pool)
{
    return pool->blocks->len;
}

gsize cs_pkt_pool_capacity(const cs_pkt_pool_t *pool)
{
    return pool->capacity;
}

gsize cs_pkt_pool_in_use(const cs_pkt_pool_t *pool)
{
    return pool->in_use;
}
