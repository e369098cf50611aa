/* collsim doctor: reading files below a root (the live / or a captured
 * tree): small regular files only, sorted directory listings, links
 * resolved whether they are real symlinks or captured as files. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "real/doctor_int.h"

#define DR_MAX_FILE (1 << 20)     /* no sysfs/procfs file we read is larger */

/* ---- files ------------------------------------------------------------------ */

static char *full_path(const dr_fs_t *fs, const char *path)
{
    return g_strconcat(fs->root, path, NULL);
}

char *dr_read(const dr_fs_t *fs, const char *path)
{
    g_autofree char *full = full_path(fs, path);
    /* O_NONBLOCK: a FIFO in an odd tree must not hang us (and is refused
     * below anyway). */
    int fd = open(full, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return NULL;
    }
    GString *s = g_string_new(NULL);
    char buf[4096];
    gboolean failed = FALSE;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            failed = TRUE;   /* e.g. EINVAL from an unset gid_attrs/types entry */
            break;
        }
        if (n == 0)
            break;
        g_string_append_len(s, buf, n);
        if (s->len > DR_MAX_FILE)
            break;
    }
    close(fd);
    if (failed) {
        g_string_free(s, TRUE);
        return NULL;
    }
    /* Keep reports printable: control bytes and non-ASCII become '?'. */
    for (gsize i = 0; i < s->len; i++) {
        unsigned char c = (unsigned char)s->str[i];
        if ((c < 0x20 && c != '\n' && c != '\t') || c >= 0x7f)
            s->str[i] = '?';
    }
    while (s->len > 0 && g_ascii_isspace(s->str[s->len - 1]))
        g_string_truncate(s, s->len - 1);
    return g_string_free(s, FALSE);
}

/* One printable line: what dr_read left of newlines and tabs becomes '?'
 * too (a value spread over lines could pass for lines of the report), and
 * a value longer than DR_MAX_VALUE is cut, ending in "...". In place. */
char *dr_one_line(char *s)
{
    if (s == NULL)
        return NULL;
    for (char *p = s; *p; p++)
        if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
            *p = '?';
    if (strlen(s) > DR_MAX_VALUE)
        memcpy(s + DR_MAX_VALUE - 3, "...", 4);
    return s;
}

char *dr_read_value(const dr_fs_t *fs, const char *path)
{
    return dr_one_line(dr_read(fs, path));
}

gboolean dr_exists(const dr_fs_t *fs, const char *path)
{
    g_autofree char *full = full_path(fs, path);
    return access(full, F_OK) == 0;
}

gboolean dr_is_dir(const dr_fs_t *fs, const char *path)
{
    g_autofree char *full = full_path(fs, path);
    return g_file_test(full, G_FILE_TEST_IS_DIR);
}

int dr_natural_cmp(const char *a, const char *b)
{
    while (*a && *b) {
        if (g_ascii_isdigit(*a) && g_ascii_isdigit(*b)) {
            const char *ea = a, *eb = b;
            while (*a == '0' && g_ascii_isdigit(a[1]))
                a++;
            while (*b == '0' && g_ascii_isdigit(b[1]))
                b++;
            ea = a;
            eb = b;
            while (g_ascii_isdigit(*ea))
                ea++;
            while (g_ascii_isdigit(*eb))
                eb++;
            if (ea - a != eb - b)
                return (ea - a) < (eb - b) ? -1 : 1;
            int c = strncmp(a, b, ea - a);
            if (c != 0)
                return c;
            a = ea;
            b = eb;
            continue;
        }
        if (*a != *b)
            return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
        a++;
        b++;
    }
    if (*a || *b)
        return *a ? 1 : -1;
    return 0;
}

static gint cmp_names(gconstpointer pa, gconstpointer pb)
{
    const char *a = *(const char *const *)pa, *b = *(const char *const *)pb;
    int c = dr_natural_cmp(a, b);
    return c != 0 ? c : strcmp(a, b);
}

/* No kernel names a device, port or interface with control bytes or
 * non-ASCII: such an entry is a hostile tree's, and is not read (its name
 * would reach the report). */
static gboolean printable_name(const char *n)
{
    for (const unsigned char *p = (const unsigned char *)n; *p; p++)
        if (*p < 0x20 || *p >= 0x7f)
            return FALSE;
    return TRUE;
}

GPtrArray *dr_list(const dr_fs_t *fs, const char *dir)
{
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    g_autofree char *full = full_path(fs, dir);
    GDir *d = g_dir_open(full, 0, NULL);
    if (d == NULL)
        return names;
    const char *n;
    while ((n = g_dir_read_name(d)) != NULL) {
        if (n[0] == '.' || !printable_name(n))
            continue;
        g_ptr_array_add(names, g_strdup(n));
    }
    g_dir_close(d);
    g_ptr_array_sort(names, cmp_names);
    return names;
}

char *dr_normalize(const char *path)
{
    g_auto(GStrv) parts = g_strsplit(path, "/", -1);
    GPtrArray *out = g_ptr_array_new();
    for (int i = 0; parts[i] != NULL; i++) {
        const char *p = parts[i];
        if (p[0] == '\0' || strcmp(p, ".") == 0)
            continue;
        if (strcmp(p, "..") == 0) {
            if (out->len > 0)
                g_ptr_array_remove_index(out, out->len - 1);
            continue;
        }
        g_ptr_array_add(out, (gpointer)p);
    }
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < out->len; i++)
        g_string_append_printf(s, "/%s", (const char *)out->pdata[i]);
    if (s->len == 0)
        g_string_append_c(s, '/');
    g_ptr_array_free(out, TRUE);
    return g_string_free(s, FALSE);
}

/* A link target read from a file (captured tree) or readlink: relative
 * targets are taken from the link's directory, as the kernel does. */
static char *resolve_target(const char *link_path, const char *target)
{
    if (target == NULL || target[0] == '\0')
        return NULL;
    if (target[0] == '/')
        return dr_normalize(target);
    g_autofree char *dir = g_path_get_dirname(link_path);
    g_autofree char *joined = g_strconcat(dir, "/", target, NULL);
    return dr_normalize(joined);
}

char *dr_resolve(const dr_fs_t *fs, const char *path)
{
    g_autofree char *full = full_path(fs, path);
    struct stat st;
    if (lstat(full, &st) != 0)
        return NULL;
    if (S_ISLNK(st.st_mode)) {
        char real[PATH_MAX], rroot[PATH_MAX];
        const char *root = fs->root[0] ? fs->root : "/";
        if (realpath(full, real) != NULL && realpath(root, rroot) != NULL) {
            size_t n = strlen(rroot);
            if (strcmp(rroot, "/") == 0)
                return g_strdup(real);
            if (strncmp(real, rroot, n) == 0 && (real[n] == '/' || real[n] == '\0'))
                return g_strdup(real[n] ? real + n : "/");
        }
        /* Dangling or outside the root (a copied tree): use the text. */
        g_autofree char *target = g_file_read_link(full, NULL);
        return resolve_target(path, target);
    }
    if (S_ISREG(st.st_mode)) {
        g_autofree char *target = dr_read_value(fs, path);
        return resolve_target(path, target);
    }
    if (S_ISDIR(st.st_mode)) {
        g_autofree char *dotpath = g_strconcat(path, "/.path", NULL);
        g_autofree char *target = dr_read_value(fs, dotpath);
        return resolve_target(path, target);
    }
    return NULL;
}

gboolean dr_parse_long(const char *s, long *v_p)
{
    if (s == NULL)
        return FALSE;
    while (g_ascii_isspace(*s))
        s++;
    const char *p = s;
    gboolean neg = FALSE;
    if (*p == '-' || *p == '+') {
        neg = *p == '-';
        p++;
    }
    int base = 10;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        base = 16;
        p += 2;
    }
    if (!g_ascii_isxdigit(*p) || (base == 10 && !g_ascii_isdigit(*p)))
        return FALSE;
    errno = 0;
    char *end;
    unsigned long long u = strtoull(p, &end, base);
    if (errno != 0 || u > (unsigned long long)LONG_MAX)
        return FALSE;
    if (*end != '\0' && *end != ':' && !g_ascii_isspace(*end))
        return FALSE;
    *v_p = neg ? -(long)u : (long)u;
    return TRUE;
}

gboolean dr_is_bdf(const char *s)
{
    /* DDDD:BB:DD.F, hex digits (NCCL's checkBDFFormat) */
    static const char pat[] = "xxxx:xx:xx.x";
    if (s == NULL || strlen(s) != sizeof pat - 1)
        return FALSE;
    for (size_t i = 0; i < sizeof pat - 1; i++) {
        if (pat[i] == 'x' ? !g_ascii_isxdigit(s[i]) : s[i] != pat[i])
            return FALSE;
    }
    return TRUE;
}
