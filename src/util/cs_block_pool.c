/* Block pool (see cs_block_pool.h). */
#include "config.h"

#include "util/cs_block_pool.h"

void cs_block_pool_init(cs_block_pool_t *p, gsize elem, gsize link_off, gsize first_block)
{
    g_return_if_fail(elem >= sizeof(void *) && link_off + sizeof(void *) <= elem && first_block > 0);
    memset(p, 0, sizeof *p);
    p->blocks = g_ptr_array_new_with_free_func(g_free);
    p->elem = elem;
    p->link_off = link_off;
    p->next_block = first_block;
}

void cs_block_pool_clear(cs_block_pool_t *p)
{
    if (p->blocks != NULL)
        g_ptr_array_free(p->blocks, TRUE);
    memset(p, 0, sizeof *p);
}

void cs_block_pool_grow(cs_block_pool_t *p)
{
    gsize n = p->next_block;
    char *b = g_malloc0_n(n, p->elem);
    g_ptr_array_add(p->blocks, b);
    for (gsize i = n; i-- > 0;) {
        char *r = b + i * p->elem;
        memcpy(r + p->link_off, &p->free_list, sizeof(void *));
        p->free_list = r;
    }
    p->capacity += n;
    p->next_block = n * 2;
}
