/* Fuzz target for the doctor's sysfs/procfs reader (cs_doctor_scan over a
 * --root tree, then the checks, the report and the topology it infers).
 * The input is a tree as text:
 *
 *   =/sys/class/infiniband/mlx5_0/ports/1/state     a file; the lines up to
 *   4: ACTIVE                                        the next '=' or '@' line
 *   @/sys/class/net/eth0/device -> ../../x           a symbolic link
 *
 * written under a fresh temporary directory (paths are kept below it: no
 * "." or ".." components, at most 16 of them; link targets are left as
 * given, hostile ones included). Any tree either scans or fails with one
 * line; the report holds no control byte but newlines (values from sysfs
 * are printed sanitized); never a crash, a leak or a GLib critical
 * (glib-fatal.h). Seeds: tests/data/sysfs as text (tests/fuzz/corpus/
 * doctor-sysfs). */
#include "config.h"
#include "glib-fatal.h"
#include "real/cs_doctor.h"
#include "models/cs_nccl_env.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_DEPTH 16
#define MAX_ENTRIES 4096

/* The path below root, or NULL when it would leave it or is malformed. */
static char *safe_path(const char *root, const char *p)
{
    g_auto(GStrv) parts = g_strsplit(p, "/", -1);
    int n = 0;
    for (int i = 0; parts[i] != NULL; i++) {
        const char *c = parts[i];
        if (c[0] == '\0')
            continue;
        if (strcmp(c, ".") == 0 || strcmp(c, "..") == 0 || ++n > MAX_DEPTH || strlen(c) > 200)
            return NULL;
    }
    if (n == 0)
        return NULL;
    return g_build_filename(root, p, NULL);
}

static void make_parent(const char *path)
{
    g_autofree char *dir = g_path_get_dirname(path);
    g_mkdir_with_parents(dir, 0700);   /* fails where a file is in the way: then so does the entry */
}

static void add_file(const char *root, const char *name, const char *body, gsize len)
{
    g_autofree char *path = safe_path(root, name);
    if (path == NULL)
        return;
    make_parent(path);
    g_file_set_contents(path, body, (gssize)len, NULL);
}

static void add_link(const char *root, const char *spec)
{
    const char *arrow = strstr(spec, " -> ");
    if (arrow == NULL)
        return;
    g_autofree char *name = g_strndup(spec, arrow - spec);
    g_autofree char *path = safe_path(root, name);
    if (path == NULL)
        return;
    make_parent(path);
    if (symlink(arrow + 4, path) != 0 && errno != EEXIST)
        return;
}

/* Writes the tree of the input under root. */
static void build_tree(const char *root, const char *text, gsize size)
{
    const char *end = text + size, *p = text;
    int entries = 0;
    while (p < end && entries < MAX_ENTRIES) {
        const char *nl = memchr(p, '\n', end - p);
        const char *eol = nl != NULL ? nl : end;
        g_autofree char *head = g_strndup(p, eol - p);   /* (stops at a NUL byte) */
        p = nl != NULL ? nl + 1 : end;
        if (head[0] == '@') {
            add_link(root, head + 1);
            entries++;
            continue;
        }
        if (head[0] != '=')
            continue;   /* a body with no file: ignored */
        const char *b = p;
        while (p < end && *p != '=' && *p != '@') {
            const char *n2 = memchr(p, '\n', end - p);
            p = n2 != NULL ? n2 + 1 : end;
        }
        add_file(root, head + 1, b, (gsize)(p - b));
        entries++;
    }
}

static int remove_entry(const char *path)
{
    if (g_file_test(path, G_FILE_TEST_IS_DIR) && !g_file_test(path, G_FILE_TEST_IS_SYMLINK)) {
        GDir *d = g_dir_open(path, 0, NULL);
        if (d != NULL) {
            const char *n;
            while ((n = g_dir_read_name(d)) != NULL) {
                g_autofree char *c = g_build_filename(path, n, NULL);
                remove_entry(c);
            }
            g_dir_close(d);
        }
        return g_rmdir(path);
    }
    return g_unlink(path);
}

static void check_text(const char *what, const char *s)
{
    for (const char *p = s; p != NULL && *p; p++)
        if (((unsigned char)*p < 0x20 && *p != '\n') || *p == 0x7f)
            g_error("%s holds control byte 0x%02x", what, (unsigned char)*p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    g_autofree char *root = g_dir_make_tmp("fuzz-doctor-XXXXXX", NULL);
    if (root == NULL)
        g_error("cannot make a temporary directory");
    build_tree(root, (const char *)data, size);

    cs_doctor_t *d = cs_doctor_new(root);
    g_autoptr(GError) err = NULL;
    if (!cs_doctor_scan(d, &err)) {
        if (err == NULL || err->message[0] == '\0' || strchr(err->message, '\n') != NULL)
            g_error("scan failed without one line: '%s'", err != NULL ? err->message : "(none)");
    } else {
        g_autoptr(cs_nccl_env_t) env = cs_nccl_env_new();
        cs_doctor_check(d, env, NULL);
        g_autofree char *text = cs_doctor_report_text(d);
        g_autofree char *md = cs_doctor_report_markdown(d);
        check_text("the report", text);
        check_text("the markdown report", md);
        cs_topo_t *t = cs_doctor_topology(d, &err);
        if (t == NULL && (err == NULL || strchr(err->message, '\n') != NULL))
            g_error("topology failed without one line");
        cs_topo_free(t);
    }
    cs_doctor_free(d);
    if (remove_entry(root) != 0)
        g_error("cannot remove %s: %s", root, g_strerror(errno));
    return 0;
}
