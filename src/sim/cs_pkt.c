/* Packet pool: a block pool (util/cs_block_pool.h) of packets, which
 * queues and wires reference by pointer, linked through 'next'. */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "sim/cs_pkt.h"
#include "util/cs_block_pool.h"

#define BLOCK_MIN 256

struct cs_pkt_pool {
    cs_block_pool_t bp;
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
    cs_block_pool_init(&pool->bp, sizeof(cs_pkt_t), offsetof(cs_pkt_t, next), BLOCK_MIN);
    return pool;
}

void cs_pkt_pool_free(cs_pkt_pool_t *pool)
{
    if (pool == NULL)
        return;
    cs_block_pool_clear(&pool->bp);
    g_free(pool);
}

cs_pkt_t *cs_pkt_alloc(cs_pkt_pool_t *pool)
{
    cs_pkt_t *p = cs_block_pool_take(&pool->bp);
    memset(p, 0, sizeof *p);
    return p;
}

void cs_pkt_release(cs_pkt_pool_t *pool, cs_pkt_t *p)
{
    g_return_if_fail(pool->bp.in_use > 0);
    cs_block_pool_put(&pool->bp, p);
}

guint64 cs_pkt_pool_grows(const cs_pkt_pool_t *pool)
{
    return pool->bp.blocks->len;
}

gsize cs_pkt_pool_capacity(const cs_pkt_pool_t *pool)
{
    return pool->bp.capacity;
}

gsize cs_pkt_pool_in_use(const cs_pkt_pool_t *pool)
{
    return pool->bp.in_use;
}
