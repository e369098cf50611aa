/* Included once by every fuzz target: GLib's criticals, warnings and
 * errors (g_return_if_fail, g_warning, g_error, g_assert) abort(), so that
 * libFuzzer sees SIGABRT and saves a reproducer. Left to GLib, a critical
 * is only printed, and a fatal message may end in G_BREAKPOINT (SIGTRAP),
 * which libFuzzer does not catch: the process dies with no crash file.
 * libFuzzer calls LLVMFuzzerInitialize once; so does fuzz-main.c. */
#ifndef CS_GLIB_FATAL_H
#define CS_GLIB_FATAL_H

#include <glib.h>
#include <stdlib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);

static GLogWriterOutput cs_fuzz_log_writer(GLogLevelFlags level, const GLogField *fields, gsize n, gpointer data)
{
    if (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING | G_LOG_FLAG_FATAL)) {
        g_log_writer_standard_streams(level, fields, n, data);
        abort();
    }
    return G_LOG_WRITER_HANDLED;   /* messages and debug output: not wanted while fuzzing */
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    g_log_set_always_fatal(G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
    g_log_set_writer_func(cs_fuzz_log_writer, NULL, NULL);
    return 0;
}

#endif
