#include "config.h"
#include "util/cs_read_file.h"
#include "util/cs_error.h"
#include "util/cs_units.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void set_io_error(GError **err, const char *path, const char *noun, const char *expected, int e)
{
    g_set_error(err, CS_ERROR, CS_ERROR_IO, "%s: cannot read the %s (%s); expected a readable %s", path, noun,
                g_strerror(e), expected);
}

/* "an INI file", "a topology file" */
static const char *article(const char *noun)
{
    return strchr("aeiouAEIOU", noun[0]) != NULL ? "an" : "a";
}

static void set_too_large(GError **err, const char *path, const char *expected, gsize limit)
{
    g_autofree char *lim = cs_format_size(limit);
    cs_set_error_at(err, path, 0, "larger than %s; expected %s %s of at most %s", lim, article(expected), expected,
                    lim);
}

/* The regular files read so far (a command reads a handful: its scenario,
 * topology, calibration, logs), for cs_read_file_input: an output must not
 * replace one. Not thread-safe; collsim reads its inputs on one thread.
 * Kept until the process ends (a few paths). */
typedef struct {
    dev_t dev;
    ino_t ino;
    char *path;
} input_t;
static input_t *inputs;
static int ninputs, ninputs_max;

/* index of the input (dev, ino), or -1 */
static int find_input(dev_t dev, ino_t ino)
{
    for (int i = 0; i < ninputs; i++)
        if (inputs[i].dev == dev && inputs[i].ino == ino)
            return i;
    return -1;
}

static void note_input(const char *path, const struct stat *st)
{
    if (find_input(st->st_dev, st->st_ino) >= 0)
        return;
    if (ninputs == ninputs_max) {
        ninputs_max = ninputs_max > 0 ? 2 * ninputs_max : 16;
        inputs = g_renew(input_t, inputs, ninputs_max);
    }
    inputs[ninputs].dev = st->st_dev;
    inputs[ninputs].ino = st->st_ino;
    inputs[ninputs].path = g_strdup(path);
    ninputs++;
}

void cs_read_file_note_input(const char *path)
{
    struct stat st;
    if (path != NULL && stat(path, &st) == 0 && S_ISREG(st.st_mode))
        note_input(path, &st);
}

void cs_read_file_forget_input(const char *path)
{
    struct stat st;
    int i = path != NULL && stat(path, &st) == 0 ? find_input(st.st_dev, st.st_ino) : -1;
    if (i < 0)
        return;
    g_free(inputs[i].path);
    inputs[i] = inputs[--ninputs];
}

const char *cs_read_file_input(dev_t dev, ino_t ino)
{
    int i = find_input(dev, ino);
    return i >= 0 ? inputs[i].path : NULL;
}

gboolean cs_read_file(const char *path, const char *noun, const char *expected, gsize limit, char **buf_p,
                      gsize *len_p, GError **err)
{
    g_return_val_if_fail(path != NULL && noun != NULL && expected != NULL && *expected != '\0' && limit > 0 && limit < G_MAXSIZE - 1, FALSE);
    /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
     * writer; fstat then refuses it. (No effect on regular files.) */
    int fd;
    do
        fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        set_io_error(err, path, noun, expected, errno);
        return FALSE;
    }
    gboolean ok = FALSE;
    char *buf = NULL;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        set_io_error(err, path, noun, expected, errno);
        goto close_fd;
    }
    if (!S_ISREG(st.st_mode)) {
        cs_set_error_at(err, path, 0, "not a regular file; expected %s %s", article(expected), expected);
        goto close_fd;
    }
    if (st.st_size < 0 || (guint64)st.st_size > limit) {
        set_too_large(err, path, expected, limit);
        goto close_fd;
    }
    /* The size may change while we read (a log still being written, a
     * procfs file that says 0): read until the end, but never more than
     * limit + 1 bytes, enough to tell that the file is over the limit. */
    gsize cap = (gsize)st.st_size + 1, len = 0;
    if (cap < 4096)
        cap = 4096;
    if (cap > limit + 1)
        cap = limit + 1;
    buf = g_malloc(cap + 1);
    for (;;) {
        if (len == cap) {
            if (cap == limit + 1)
                break;
            cap = cap > (limit + 1) / 2 ? limit + 1 : cap * 2;
            buf = g_realloc(buf, cap + 1);
        }
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            set_io_error(err, path, noun, expected, errno);
            goto free_buf;
        }
        if (n == 0)
            break;
        len += (gsize)n;
    }
    if (len > limit) {
        set_too_large(err, path, expected, limit);
        goto free_buf;
    }
    buf[len] = '\0';
    note_input(path, &st);
    *buf_p = g_steal_pointer(&buf);
    *len_p = len;
    ok = TRUE;
free_buf:
    g_free(buf);
close_fd:
    close(fd);
    return ok;
}
