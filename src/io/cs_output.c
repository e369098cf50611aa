/* Output files that never clobber what they should not (cs_output.h). */
#include "config.h"
#include "io/cs_output.h"
#include "util/cs_error.h"
#include "util/cs_read_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_OUTPUTS 16       /* one command writes at most a handful */
#define MAX_LINKS 40         /* as the kernel's ELOOP limit */

typedef enum {
    OUT_NEW,       /* not there yet: temporary file + rename */
    OUT_REGULAR,   /* a regular file: temporary file + rename, mode kept */
    OUT_INPLACE,   /* a device, a FIFO: opened and written */
    OUT_FD         /* /dev/stdout and the like: that descriptor */
} out_kind_t;

typedef struct {
    out_kind_t kind;
    char *target;       /* the path written (symlinks followed); NULL for OUT_FD */
    int fd;             /* OUT_FD: the descriptor */
    struct stat st;     /* OUT_REGULAR, OUT_INPLACE, OUT_FD: the file */
    char *same;         /* OUT_NEW: the canonical path, to compare */
} out_target_t;

static void target_clear(out_target_t *t)
{
    g_free(t->target);
    g_free(t->same);
    memset(t, 0, sizeof *t);
}

static void set_write_error(GError **err, int code, const char *path, int errnum)
{
    g_set_error(err, CS_ERROR, code, "%s: cannot write the file (%s); expected a writable path", path,
                g_strerror(errnum));
}

/* ---- the temporary files a signal must remove -------------------------------- */

/* Fixed storage: the handler may only read it and call unlink. */
static char live_path[MAX_OUTPUTS][PATH_MAX];
static volatile sig_atomic_t live[MAX_OUTPUTS];
static volatile sig_atomic_t committing, pending_signal;

static const int caught_signals[] = { SIGINT, SIGTERM, SIGHUP };
static struct sigaction saved_action[G_N_ELEMENTS(caught_signals)];
static gboolean installed[G_N_ELEMENTS(caught_signals)];

static void remove_live(void)
{
    for (int i = 0; i < MAX_OUTPUTS; i++)
        if (live[i]) {
            unlink(live_path[i]);
            live[i] = 0;
        }
}

static void on_signal(int sig)
{
    if (committing) {
        /* the renames take microseconds: finish them, then die */
        pending_signal = sig;
        return;
    }
    int saved = errno;
    remove_live();
    signal(sig, SIG_DFL);
    raise(sig);
    errno = saved;
}

/* Only where the signal would end the process: a handler already there
 * (the progress thread's Ctrl-C flag) or an ignored signal stays. */
static void catch_signals(void)
{
    committing = 0;
    pending_signal = 0;
    for (gsize i = 0; i < G_N_ELEMENTS(caught_signals); i++) {
        struct sigaction old;
        installed[i] = FALSE;
        if (sigaction(caught_signals[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL ||
            (old.sa_flags & SA_SIGINFO))
            continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        for (gsize k = 0; k < G_N_ELEMENTS(caught_signals); k++)
            sigaddset(&sa.sa_mask, caught_signals[k]);
        sa.sa_flags = SA_RESTART;
        if (sigaction(caught_signals[i], &sa, &saved_action[i]) == 0)
            installed[i] = TRUE;
    }
}

/* After the last temporary file is gone or renamed. */
static void release_signals(void)
{
    for (gsize i = 0; i < G_N_ELEMENTS(caught_signals); i++)
        if (installed[i]) {
            sigaction(caught_signals[i], &saved_action[i], NULL);
            installed[i] = FALSE;
        }
    int sig = pending_signal;
    pending_signal = 0;
    if (sig != 0)
        raise(sig);   /* the default action now: the process ends */
}

/* Creates TARGET.XXXXXX (random) in slot 'slot', registered before it
 * exists so that a signal cannot leave it behind. */
static int create_temp(int slot, const char *target, mode_t mode)
{
    static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    gsize tl = strlen(target);
    if (tl + 8 > PATH_MAX) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (int attempt = 0; attempt < 100; attempt++) {
        live[slot] = 0;
        memcpy(live_path[slot], target, tl);
        live_path[slot][tl] = '.';
        for (int k = 0; k < 6; k++)
            live_path[slot][tl + 1 + k] = chars[g_random_int_range(0, sizeof chars - 1)];
        live_path[slot][tl + 7] = '\0';
        live[slot] = 1;
        int fd = open(live_path[slot], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
        if (fd >= 0)
            return fd;
        live[slot] = 0;   /* not ours (EEXIST) or not created */
        if (errno != EEXIST)
            return -1;
    }
    errno = EEXIST;
    return -1;
}

/* ---- what a path names ----------------------------------------------------- */

/* /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N: the descriptor
 * (written in place, as a shell's redirection would), or -1. */
static int fd_name(const char *path)
{
    if (strcmp(path, "/dev/stdout") == 0)
        return STDOUT_FILENO;
    if (strcmp(path, "/dev/stderr") == 0)
        return STDERR_FILENO;
    const char *num = NULL;
    if (g_str_has_prefix(path, "/dev/fd/"))
        num = path + strlen("/dev/fd/");
    else if (g_str_has_prefix(path, "/proc/self/fd/"))
        num = path + strlen("/proc/self/fd/");
    if (num == NULL || !g_ascii_isdigit(num[0]))
        return -1;
    char *end;
    long v = strtol(num, &end, 10);
    return *end == '\0' && v >= 0 && v <= INT_MAX ? (int)v : -1;
}

/* Follows symlinks from 'path' to what will be written. *errnum_p on
 * failure. */
static gboolean resolve(const char *path, out_target_t *t, int *errnum_p)
{
    memset(t, 0, sizeof *t);
    int fd = fd_name(path);
    if (fd >= 0) {
        if (fstat(fd, &t->st) != 0) {
            *errnum_p = errno;
            return FALSE;
        }
        t->kind = OUT_FD;
        t->fd = fd;
        return TRUE;
    }
    if (path[0] == '\0') {
        *errnum_p = ENOENT;
        return FALSE;
    }
    char *cur = g_strdup(path);
    for (int hops = 0;; hops++) {
        struct stat st;
        if (lstat(cur, &st) != 0) {
            if (errno != ENOENT) {
                *errnum_p = errno;
                g_free(cur);
                return FALSE;
            }
            /* a new file: its directory must exist */
            g_autofree char *dir = g_path_get_dirname(cur);
            g_autofree char *base = g_path_get_basename(cur);
            char real[PATH_MAX];
            if (realpath(dir, real) == NULL) {
                *errnum_p = errno;
                g_free(cur);
                return FALSE;
            }
            t->kind = OUT_NEW;
            t->same = g_build_filename(real, base, NULL);
            t->target = cur;
            return TRUE;
        }
        if (S_ISLNK(st.st_mode)) {
            if (hops >= MAX_LINKS) {
                *errnum_p = ELOOP;
                g_free(cur);
                return FALSE;
            }
            char to[PATH_MAX];
            ssize_t tl = readlink(cur, to, sizeof to - 1);
            if (tl < 0) {
                *errnum_p = errno;
                g_free(cur);
                return FALSE;
            }
            to[tl] = '\0';
            char *next;
            if (g_path_is_absolute(to)) {
                next = g_strdup(to);
            } else {
                g_autofree char *dir = g_path_get_dirname(cur);
                next = g_build_filename(dir, to, NULL);
            }
            g_free(cur);
            cur = next;
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            *errnum_p = EISDIR;
            g_free(cur);
            return FALSE;
        }
        t->kind = S_ISREG(st.st_mode) ? OUT_REGULAR : OUT_INPLACE;
        t->st = st;
        t->target = cur;
        return TRUE;
    }
}

static gboolean same_file(const out_target_t *a, const out_target_t *b)
{
    if ((a->kind == OUT_NEW) != (b->kind == OUT_NEW))
        return FALSE;
    if (a->kind == OUT_NEW)
        return strcmp(a->same, b->same) == 0;
    return a->st.st_dev == b->st.st_dev && a->st.st_ino == b->st.st_ino;
}

/* Resolves every path and refuses a file named twice (CS_ERROR_IO, exit
 * 2: a usage error). code: the error code for a path that cannot be
 * resolved. */
static gboolean resolve_all(int n, const char *const *paths, const char *const *names, out_target_t *t,
                            int code, GError **err)
{
    for (int i = 0; i < n; i++) {
        int errnum = 0;
        if (!resolve(paths[i], &t[i], &errnum)) {
            set_write_error(err, code, paths[i], errnum);
            return FALSE;
        }
        /* an existing file this command read as input: replacing it would
         * lose the input (run s.ini --json s.ini) */
        const char *in = t[i].kind == OUT_REGULAR ? cs_read_file_input(t[i].st.st_dev, t[i].st.st_ino) : NULL;
        if (in != NULL) {
            if (names != NULL && names[i] != NULL)
                g_set_error(err, CS_ERROR, CS_ERROR_IO, "%s: %s is the input file %s; expected another file to write",
                            names[i], paths[i], in);
            else
                g_set_error(err, CS_ERROR, CS_ERROR_IO, "%s: an output named as the input file %s; expected "
                            "another file to write", paths[i], in);
            return FALSE;
        }
        for (int j = 0; j < i; j++)
            if (same_file(&t[j], &t[i])) {
                if (names != NULL && names[i] != NULL && names[j] != NULL) {
                    const char *other = names[j];
                    if (g_str_has_prefix(other, "collsim: "))
                        other += strlen("collsim: ");
                    g_set_error(err, CS_ERROR, CS_ERROR_IO,
                                "%s: %s is the same file as %s's; expected a different file for each output",
                                names[i], paths[i], other);
                }
                else
                    g_set_error(err, CS_ERROR, CS_ERROR_IO,
                                "%s: named for two outputs (also as %s); expected a different file for each output",
                                paths[i], paths[j]);
                return FALSE;
            }
    }
    return TRUE;
}

static void clear_all(int n, out_target_t *t)
{
    for (int i = 0; i < n; i++)
        target_clear(&t[i]);
}

gboolean cs_output_check(int n, const char *const *paths, const char *const *names, GError **err)
{
    if (n > MAX_OUTPUTS) {
        g_set_error(err, CS_ERROR, CS_ERROR_IO, "collsim: %d output files; expected at most %d", n, MAX_OUTPUTS);
        return FALSE;
    }
    for (int i = 0; i < n; i++)
        if (paths[i][0] == '\0') {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "%s: an empty file name; expected a path to write",
                        names != NULL && names[i] != NULL ? names[i] : "collsim: output");
            return FALSE;
        }
    out_target_t t[MAX_OUTPUTS];
    memset(t, 0, sizeof t);
    gboolean ok = resolve_all(n, paths, names, t, CS_ERROR_IO, err);
    for (int i = 0; i < n && ok; i++) {
        if (t[i].kind != OUT_NEW && t[i].kind != OUT_REGULAR)
            continue;
        /* the temporary file must be possible where it will be made */
        catch_signals();
        int fd = create_temp(0, t[i].target, 0600);
        int errnum = errno;
        if (fd >= 0) {
            close(fd);
            unlink(live_path[0]);
        }
        live[0] = 0;
        release_signals();
        if (fd < 0) {
            set_write_error(err, CS_ERROR_IO, paths[i], errnum);
            ok = FALSE;
        }
    }
    clear_all(n, t);
    return ok;
}

static int write_all(int fd, const char *data, gsize len)
{
    gsize off = 0;
    while (off < len) {
        gssize w = write(fd, data + off, MIN(len - off, (gsize)1 << 30));
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (w == 0)
            return EIO;
        off += (gsize)w;
    }
    return 0;
}

/* The temporary file of an output replaced by rename: mode and owner of
 * the file it replaces, data, fsync. Returns 0 or an errno. */
static int write_temp(int slot, const out_target_t *t, const char *data, gsize len)
{
    /* a new file: 0666 less the umask, as open(2) gives; an existing one
     * is made 0600 first so its data is never readable by more than it
     * will be */
    int fd = create_temp(slot, t->target, t->kind == OUT_NEW ? 0666 : 0600);
    if (fd < 0)
        return errno;
    int errnum = 0;
    if (t->kind == OUT_REGULAR) {
        if (getuid() == 0 || geteuid() == 0)
            (void)fchown(fd, t->st.st_uid, t->st.st_gid);   /* before chmod: chown clears set-id bits */
        if (fchmod(fd, t->st.st_mode & 07777) != 0)
            errnum = errno;
    }
    if (errnum == 0)
        errnum = write_all(fd, data, len);
    if (errnum == 0 && fsync(fd) != 0)
        errnum = errno;
    if (close(fd) != 0 && errnum == 0)
        errnum = errno;
    return errnum;
}

static int write_in_place(const out_target_t *t, const char *data, gsize len)
{
    if (t->kind == OUT_FD)
        return write_all(t->fd, data, len);
    int fd = open(t->target, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    int errnum = write_all(fd, data, len);
    if (close(fd) != 0 && errnum == 0)
        errnum = errno;
    return errnum;
}

gboolean cs_output_write(int n, const char *const *paths, const char *const *data, const gsize *lens,
                         GError **err)
{
    if (n > MAX_OUTPUTS) {
        g_set_error(err, CS_ERROR, CS_ERROR_IO, "collsim: %d output files; expected at most %d", n, MAX_OUTPUTS);
        return FALSE;
    }
    out_target_t t[MAX_OUTPUTS];
    memset(t, 0, sizeof t);
    if (!resolve_all(n, paths, NULL, t, CS_ERROR_IO, err)) {
        clear_all(n, t);
        return FALSE;
    }
    catch_signals();
    gboolean ok = TRUE;
    /* temporary files first: a failure there leaves every output as it was */
    for (int i = 0; i < n && ok; i++) {
        if (t[i].kind != OUT_NEW && t[i].kind != OUT_REGULAR)
            continue;
        gsize len = lens != NULL ? lens[i] : strlen(data[i]);
        int errnum = write_temp(i, &t[i], data[i], len);
        if (errnum != 0) {
            set_write_error(err, CS_ERROR_RESOURCE, paths[i], errnum);
            ok = FALSE;
        }
    }
    for (int i = 0; i < n && ok; i++) {
        if (t[i].kind == OUT_NEW || t[i].kind == OUT_REGULAR)
            continue;
        gsize len = lens != NULL ? lens[i] : strlen(data[i]);
        int errnum = write_in_place(&t[i], data[i], len);
        if (errnum != 0) {
            set_write_error(err, CS_ERROR_RESOURCE, paths[i], errnum);
            ok = FALSE;
        }
    }
    committing = 1;
    for (int i = 0; i < n && ok; i++) {
        if (!live[i])
            continue;
        if (rename(live_path[i], t[i].target) != 0) {
            set_write_error(err, CS_ERROR_RESOURCE, paths[i], errno);
            ok = FALSE;
            break;
        }
        live[i] = 0;
    }
    remove_live();   /* on failure: the temporary files not renamed */
    committing = 0;
    release_signals();
    clear_all(n, t);
    return ok;
}

gboolean cs_output_write_one(const char *path, const char *data, gssize len, GError **err)
{
    gsize l = len < 0 ? strlen(data) : (gsize)len;
    return cs_output_write(1, &path, &data, &l, err);
}

/* ---- standard output ------------------------------------------------------- */

static int stdout_errno;   /* the first failed write's reason */

static gboolean stdout_failed(int errnum, GError **err)
{
    if (stdout_errno == 0)
        stdout_errno = errnum != 0 ? errnum : EIO;
    g_set_error(err, CS_ERROR, CS_ERROR_RESOURCE, "collsim: standard output: %s", g_strerror(stdout_errno));
    return FALSE;
}

gboolean cs_output_stdout(const char *data, gsize len, GError **err)
{
    errno = 0;
    if (len > 0 && fwrite(data, 1, len, stdout) != len)
        return stdout_failed(errno, err);
    return cs_output_stdout_flush(err);
}

gboolean cs_output_stdout_flush(GError **err)
{
    errno = 0;
    if (fflush(stdout) != 0)
        return stdout_failed(errno, err);
    if (ferror(stdout))
        return stdout_failed(0, err);
    return TRUE;
}
