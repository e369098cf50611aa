/* cs_read_file: only regular files, and never more than the limit. */
#include "config.h"
#include "util/cs_read_file.h"
#include "util/cs_error.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *tmpdir;

static char *tmp_path(const char *name)
{
    return g_build_filename(tmpdir, name, NULL);
}

static void test_regular(void)
{
    g_autofree char *p = tmp_path("ok.txt");
    g_assert_true(g_file_set_contents(p, "abc\0def", 7, NULL));
    char *buf = NULL;
    gsize len = 0;
    g_autoptr(GError) e = NULL;
    g_assert_true(cs_read_file(p, "file", "test file", 7, &buf, &len, &e));
    g_assert_no_error(e);
    g_assert_cmpuint(len, ==, 7);
    g_assert_cmpint(memcmp(buf, "abc\0def", 7), ==, 0);
    g_assert_cmpint(buf[7], ==, '\0');
    g_free(buf);

    /* one byte over */
    buf = NULL;
    g_assert_false(cs_read_file(p, "file", "test file", 6, &buf, &len, &e));
    g_assert_error(e, CS_ERROR, CS_ERROR_INPUT);
    g_assert_nonnull(strstr(e->message, "larger than 6 B; expected a test file of at most 6 B"));
    g_assert_null(buf);
    g_assert_null(strchr(e->message, '\n'));
}

static void test_empty_and_missing(void)
{
    g_autofree char *p = tmp_path("empty");
    g_assert_true(g_file_set_contents(p, "", 0, NULL));
    char *buf = NULL;
    gsize len = 1;
    g_assert_true(cs_read_file(p, "file", "x", 10, &buf, &len, NULL));
    g_assert_cmpuint(len, ==, 0);
    g_assert_cmpstr(buf, ==, "");
    g_free(buf);

    g_autofree char *q = tmp_path("missing");
    g_autoptr(GError) e = NULL;
    g_assert_false(cs_read_file(q, "file", "topology file", 10, &buf, &len, &e));
    g_assert_error(e, CS_ERROR, CS_ERROR_IO);
    g_autofree char *want = g_strdup_printf("%s: cannot read the file (%s); expected a readable topology file", q, g_strerror(ENOENT));
    g_assert_cmpstr(e->message, ==, want);
}

/* A sparse file is refused by its size, without reading it. */
static void test_sparse(void)
{
    g_autofree char *p = tmp_path("sparse");
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    g_assert_cmpint(fd, >=, 0);
    g_assert_cmpint(ftruncate(fd, (off_t)5 << 30), ==, 0);
    close(fd);
    char *buf = NULL;
    gsize len = 0;
    g_autoptr(GError) e = NULL;
    g_assert_false(cs_read_file(p, "file", "topology file", CS_READ_LIMIT_TOPOLOGY, &buf, &len, &e));
    g_autofree char *want = g_strdup_printf("%s: larger than 64 MiB; expected a topology file of at most "
                                            "64 MiB", p);
    g_assert_cmpstr(e->message, ==, want);
    g_unlink(p);
}

/* procfs files say size 0: the bound holds on what is read, not on the
 * size fstat gave. */
static void test_size_lies(void)
{
    char *buf = NULL;
    gsize len = 0;
    g_autoptr(GError) e = NULL;
    g_assert_false(cs_read_file("/proc/self/maps", "file", "map", 64, &buf, &len, &e));
    g_assert_error(e, CS_ERROR, CS_ERROR_INPUT);
    g_assert_nonnull(strstr(e->message, "larger than 64 B"));
    g_clear_error(&e);
    g_assert_true(cs_read_file("/proc/self/maps", "file", "map", 1 << 24, &buf, &len, &e));
    g_assert_cmpuint(len, >, 64);
    g_assert_cmpuint(strlen(buf), ==, len);
    g_free(buf);
}

static void refused(const char *p)
{
    char *buf = NULL;
    gsize len = 0;
    g_autoptr(GError) e = NULL;
    g_assert_false(cs_read_file(p, "file", "INI file", 1 << 20, &buf, &len, &e));
    g_assert_error(e, CS_ERROR, CS_ERROR_INPUT);
    g_autofree char *want = g_strdup_printf("%s: not a regular file; expected an INI file", p);
    g_assert_cmpstr(e->message, ==, want);
    g_assert_null(buf);
}

/* Refused at once: a FIFO with no writer (open would block), a device
 * that never ends, a directory. */
static void test_not_regular(void)
{
    g_autofree char *fifo = tmp_path("fifo");
    g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);
    refused(fifo);
    g_unlink(fifo);
    refused("/dev/zero");
    refused("/dev/null");
    refused(tmpdir);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    tmpdir = g_dir_make_tmp("test-read-file-XXXXXX", NULL);
    g_assert_nonnull(tmpdir);
    g_test_add_func("/read-file/regular", test_regular);
    g_test_add_func("/read-file/empty-missing", test_empty_and_missing);
    g_test_add_func("/read-file/sparse", test_sparse);
    g_test_add_func("/read-file/size-lies", test_size_lies);
    g_test_add_func("/read-file/not-regular", test_not_regular);
    int rc = g_test_run();
    g_autofree char *ok = tmp_path("ok.txt");
    g_autofree char *empty = tmp_path("empty");
    g_unlink(ok);
    g_unlink(empty);
    g_rmdir(tmpdir);
    g_free(tmpdir);
    return rc;
}
