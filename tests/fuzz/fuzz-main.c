/* Standalone driver for the libFuzzer targets in tests/fuzz, so that builds
 * without libFuzzer (gcc, `make check`) replay a corpus through the same
 * LLVMFuzzerTestOneInput:
 *
 *   fuzz-X FILE...     runs each file
 *   fuzz-X             runs every file of $FUZZ_CORPUS, or of
 *                      $G_TEST_SRCDIR/fuzz/corpus/X (X = the program name
 *                      without "fuzz-"), in name order
 *
 * It prints TAP (one "ok" per input) for the test harness. A target that
 * finds a bug aborts (g_error, a GLib critical or warning: glib-fatal.h; a
 * sanitizer), which fails the test. */
#include "config.h"

#include <glib.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);   /* glib-fatal.h */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Files of a corpus directory, sorted so that runs are reproducible. */
static GPtrArray *corpus_files(const char *dir)
{
    GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GError) err = NULL;
    g_autoptr(GDir) d = g_dir_open(dir, 0, &err);
    if (d == NULL) {
        fprintf(stderr, "fuzz-main: %s\n", err->message);
        return files;
    }
    const char *name;
    while ((name = g_dir_read_name(d)) != NULL) {
        char *p = g_build_filename(dir, name, NULL);
        if (g_file_test(p, G_FILE_TEST_IS_REGULAR))
            g_ptr_array_add(files, p);
        else
            g_free(p);
    }
    qsort(files->pdata, files->len, sizeof(char *), cmp_str);
    return files;
}

static char *default_corpus(const char *argv0)
{
    const char *env = g_getenv("FUZZ_CORPUS");
    if (env != NULL && *env != '\0')
        return g_strdup(env);
    g_autofree char *base = g_path_get_basename(argv0);
    const char *target = g_str_has_prefix(base, "fuzz-") ? base + 5 : base;
    const char *srcdir = g_getenv("G_TEST_SRCDIR");
    return g_build_filename(srcdir != NULL ? srcdir : "tests", "fuzz", "corpus", target, NULL);
}

int main(int argc, char **argv)
{
    LLVMFuzzerInitialize(&argc, &argv);
    g_autoptr(GPtrArray) files = NULL;
    if (argc > 1) {
        files = g_ptr_array_new_with_free_func(g_free);
        for (int i = 1; i < argc; i++)
            g_ptr_array_add(files, g_strdup(argv[i]));
    } else {
        g_autofree char *dir = default_corpus(argv[0]);
        files = corpus_files(dir);
        if (files->len == 0) {
            printf("1..0 # SKIP no corpus in %s\n", dir);
            return 0;
        }
    }
    printf("1..%u\n", files->len);
    fflush(stdout);
    int failed = 0;
    for (guint i = 0; i < files->len; i++) {
        const char *path = g_ptr_array_index(files, i);
        g_autofree char *buf = NULL;
        gsize len = 0;
        g_autoptr(GError) err = NULL;
        if (!g_file_get_contents(path, &buf, &len, &err)) {
            printf("not ok %u - %s: %s\n", i + 1, path, err->message);
            failed = 1;
            continue;
        }
        /* An exact-size copy, so that ASan sees reads past the end. */
        uint8_t *data = g_memdup2(buf, len ? len : 1);
        LLVMFuzzerTestOneInput(data, len);
        g_free(data);
        printf("ok %u - %s\n", i + 1, path);
        fflush(stdout);
    }
    return failed;
}
