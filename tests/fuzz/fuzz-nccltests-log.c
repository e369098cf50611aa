/* Fuzz target for the nccl-tests log reader (text and -J JSON): any input
 * either reads or fails with one line naming the input, never crashes or
 * leaks. Built with libFuzzer (--enable-fuzzing) or, for `make check`, with
 * the standalone driver tests/fuzz/fuzz-main.c over the seed files. */
#include "config.h"
#include "glib-fatal.h"
#include "io/cs_nccltests_log.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const cs_nccltests_log_t *l, const GError *err)
{
    if ((l == NULL) == (err == NULL))
        g_error("reader returned %s with %s", l ? "a log" : "nothing", err ? "an error" : "no error");
    if (err != NULL && (!g_str_has_prefix(err->message, "fuzz") || strchr(err->message, '\n') != NULL))
        g_error("bad message: %s", err->message);
    if (l == NULL)
        return;
    if (l->results->len != l->table_numbers->len || l->results->len != l->table_lines->len ||
        (int)l->results->len > l->ntables)
        g_error("inconsistent table bookkeeping");
    for (guint i = 0; i < l->results->len; i++) {
        const cs_result_t *r = g_ptr_array_index(l->results, i);
        if (r->rows->len == 0 || r->coll < 0 || r->coll >= CS_OP_COUNT || r->nranks < 0)
            g_error("bad result %u", i);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    GError *err = NULL;
    cs_nccltests_log_t *l = cs_nccltests_log_parse((const char *)data, size, "fuzz", &err);
    check(l, err);
    cs_nccltests_log_free(l);
    g_clear_error(&err);

    /* the same with a caller's collective and rank count */
    cs_nccltests_hint_t hint = { .has_coll = TRUE, .coll = CS_COLL_ALLGATHER, .nranks = 8 };
    l = cs_nccltests_log_parse_hint((const char *)data, size, "fuzz", &hint, &err);
    check(l, err);
    cs_nccltests_log_free(l);
    g_clear_error(&err);
    return 0;
}
