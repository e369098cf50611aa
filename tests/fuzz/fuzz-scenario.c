/* Fuzz target: scenario INI text. Any input must either load, or fail with
 * one non-empty line; a loaded scenario must validate or fail the same way,
 * and what it writes back must load again to the same text (round trip). */
#include "config.h"
#include "glib-fatal.h"
#include "io/cs_scenario-int.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_message(const GError *err)
{
    if (err == NULL || err->message[0] == '\0' || strchr(err->message, '\n') != NULL)
        g_error("a failure without one line of message: '%s'", err != NULL ? err->message : "(none)");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cs_scenario_t s;
    cs_scenario_init(&s);
    g_autoptr(GError) err = NULL;
    if (!cs_scenario_load_mem(&s, (const char *)data, size, "fuzz.ini", &err)) {
        check_message(err);
        cs_scenario_clear(&s);
        return 0;
    }
    if (cs_scenario_validate(&s, &err)) {
        int n = 0;
        g_autofree guint64 *sizes = cs_scenario_sizes(&s, &n);
        if (n < 1 || n > CS_SCENARIO_MAX_SIZES || sizes[0] != s.minbytes || sizes[n - 1] > s.maxbytes)
            g_error("sweep of %d sizes from %" G_GUINT64_FORMAT, n, s.minbytes);
    } else {
        check_message(err);
        g_clear_error(&err);
    }
    g_autofree char *ini = cs_scenario_to_ini(&s);
    cs_scenario_t t;
    cs_scenario_init(&t);
    if (!cs_scenario_load_mem(&t, ini, strlen(ini), "fuzz.ini", &err))
        g_error("written scenario does not load back: %s\n%s", err->message, ini);
    g_autofree char *again = cs_scenario_to_ini(&t);
    if (strcmp(ini, again) != 0)
        g_error("round trip changed the scenario:\n%s\n---\n%s", ini, again);
    cs_scenario_clear(&t);
    cs_scenario_clear(&s);
    return 0;
}
