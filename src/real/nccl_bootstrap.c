/* Rank discovery, NCCL id exchange, result gathering and failure
 * propagation for `collsim real` (see cs_real_boot.h). Plain POSIX sockets
 * and fork/exec; no MPI, no CUDA. */
#include "config.h"
#include "real/cs_real_boot.h"
#include "sim/cs_engine.h"
#include "util/cs_error.h"
#include "util/cs_units.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- the job from the environment ---------------------------------------- */

const char *cs_boot_kind_name(cs_boot_kind_t k)
{
    switch (k) {
    case CS_BOOT_LAUNCHER: return "collsim's launcher";
    case CS_BOOT_TORCHRUN: return "torchrun-style variables";
    case CS_BOOT_OMPI:     return "Open MPI's mpirun";
    case CS_BOOT_PMI:      return "a PMI launcher (MPICH/Intel MPI/Slurm)";
    default:               return "none";
    }
}

static gboolean env_int(gchar **envp, const char *name, gint64 min, gint64 max, const char *what, int *v_p,
                        GError **err)
{
    const char *v = g_environ_getenv(envp, name);
    gint64 n;
    if (v == NULL) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: real: %s is not set; expected %s", name, what);
        return FALSE;
    }
    if (!cs_parse_int(v, min, max, &n)) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: real: %s=%s: not %s; expected a whole number from %"
                    G_GINT64_FORMAT " to %" G_GINT64_FORMAT, name, v, what, min, max);
        return FALSE;
    }
    *v_p = (int)n;
    return TRUE;
}

/* "HOST:PORT" ("[v6]:PORT" too). */
static gboolean parse_hostport(const char *s, const char *what, char **host_p, int *port_p, GError **err)
{
    const char *colon = strrchr(s, ':');
    gint64 port;
    if (colon == NULL || colon == s || !cs_parse_int(colon + 1, 1, 65535, &port)) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: real: %s '%s' is not an address; expected HOST:PORT "
                    "with a port from 1 to 65535", what, s);
        return FALSE;
    }
    const char *h = s, *e = colon;
    if (*h == '[' && e[-1] == ']') {
        h++;
        e--;
    }
    *host_p = g_strndup(h, e - h);
    *port_p = (int)port;
    return TRUE;
}

gboolean cs_boot_job_from_env(gchar **envp, const char *bootstrap, cs_boot_job_t *job_p, GError **err)
{
    cs_boot_job_t j = { .kind = CS_BOOT_NONE, .rank = 0, .nranks = 1, .local_rank = 0, .listen_fd = -1 };
    const char *rank_v, *size_v, *local_v;
    if (g_environ_getenv(envp, CS_BOOT_ENV_WORKER) != NULL) {
        j.kind = CS_BOOT_LAUNCHER;
        rank_v = "RANK", size_v = "WORLD_SIZE", local_v = "LOCAL_RANK";
    } else if (g_environ_getenv(envp, "OMPI_COMM_WORLD_RANK") != NULL) {
        j.kind = CS_BOOT_OMPI;
        rank_v = "OMPI_COMM_WORLD_RANK", size_v = "OMPI_COMM_WORLD_SIZE", local_v = "OMPI_COMM_WORLD_LOCAL_RANK";
    } else if (g_environ_getenv(envp, "PMI_RANK") != NULL) {
        j.kind = CS_BOOT_PMI;
        rank_v = "PMI_RANK", size_v = "PMI_SIZE";
        local_v = g_environ_getenv(envp, "MPI_LOCALRANKID") != NULL ? "MPI_LOCALRANKID" : "PMI_LOCAL_RANK";
    } else if (g_environ_getenv(envp, "RANK") != NULL || g_environ_getenv(envp, "WORLD_SIZE") != NULL) {
        j.kind = CS_BOOT_TORCHRUN;
        rank_v = "RANK", size_v = "WORLD_SIZE", local_v = "LOCAL_RANK";
    } else {
        if (bootstrap != NULL) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: --bootstrap: given, but no rank variables are set; "
                        "expected the ranks to be started by mpirun (OMPI_COMM_WORLD_RANK, PMI_RANK) or with "
                        "RANK, WORLD_SIZE and LOCAL_RANK set");
            return FALSE;
        }
        *job_p = j;
        return TRUE;
    }
    if (!env_int(envp, size_v, 1, 1 << 20, "a rank count", &j.nranks, err)
        || !env_int(envp, rank_v, 0, j.nranks - 1, "a rank of the job", &j.rank, err)
        || !env_int(envp, local_v, 0, 1 << 16, "a rank on this node", &j.local_rank, err))
        return FALSE;
    if (j.nranks > 1) {
        if (bootstrap != NULL) {
            if (!parse_hostport(bootstrap, "--bootstrap", &j.host, &j.port, err))
                return FALSE;
        } else {
            const char *addr = g_environ_getenv(envp, "MASTER_ADDR");
            if (addr == NULL || *addr == '\0') {
                g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: real: started by %s with %s set, but rank "
                            "0's address is unknown; expected --bootstrap HOST:PORT or MASTER_ADDR and MASTER_PORT "
                            "(e.g. mpirun -x MASTER_ADDR=node0 -x MASTER_PORT=29500)",
                            cs_boot_kind_name(j.kind), rank_v);
                return FALSE;
            }
            if (!env_int(envp, "MASTER_PORT", 1, 65535, "a TCP port", &j.port, err))
                return FALSE;
            j.host = g_strdup(addr);
        }
    }
    if (j.kind == CS_BOOT_LAUNCHER && j.rank == 0 && j.nranks > 1
        && !env_int(envp, CS_BOOT_ENV_LISTEN_FD, 0, 65535, "a file descriptor", &j.listen_fd, err)) {
        g_free(j.host);
        return FALSE;
    }
    *job_p = j;
    return TRUE;
}

void cs_boot_job_clear(cs_boot_job_t *job)
{
    g_clear_pointer(&job->host, g_free);
}

/* ---- sockets ---------------------------------------------------------------- */

int cs_boot_listen(const char *host, int port, int *port_p, GError **err)
{
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE };
    struct addrinfo *res = NULL;
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    int rc = getaddrinfo(host, ps, &hints, &res);
    if (rc != 0) {
        g_set_error(err, CS_ERROR, CS_ERROR_RUNTIME, "collsim: real: cannot listen on %s:%d: %s",
                    host != NULL ? host : "*", port, gai_strerror(rc));
        return -1;
    }
    int fd = -1, saved = 0;
    for (struct addrinfo *ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
        if (fd < 0)
            continue;
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 1024) != 0) {
            saved = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0) {
        g_set_error(err, CS_ERROR, CS_ERROR_RUNTIME, "collsim: real: cannot listen on %s:%d: %s",
                    host != NULL ? host : "*", port, g_strerror(saved));
        return -1;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    *port_p = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                       : ntohs(((struct sockaddr_in *)&ss)->sin_port);
    return fd;
}

/* Messages on a control connection: a 4-byte type, a 4-byte length, then
 * the payload (host byte order: all ranks run collsim on one architecture). */
enum { MSG_HELLO = 1, MSG_ID, MSG_DATA, MSG_DONE, MSG_ABORT };

typedef struct { guint32 type, len; } msg_hdr_t;

struct cs_boot {
    int rank, nranks;
    int *fds;             /* rank 0: fds[q] for rank q (fds[0] = -1); others: fds[0] to rank 0 */
    int nfds;
    /* rank 0: results a rank sent while rank 0 was still measuring (seen
     * by cs_boot_peer_failed), kept for cs_boot_gather */
    guint8 **pending;
    guint32 *pending_len;
    gboolean aborted;     /* an ABORT was sent: linger on close (see cs_boot_free) */
};

static gint64 now_us(void)
{
    return g_get_monotonic_time();
}

/* Waits until fd is readable or 'deadline' passes; FALSE on timeout. */
static gboolean wait_readable(int fd, gint64 deadline)
{
    for (;;) {
        gint64 left = deadline - now_us();
        if (left <= 0)
            return FALSE;
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int n = poll(&p, 1, (int)MIN(left / 1000 + 1, 1000));
        if (n > 0)
            return TRUE;
        if (n < 0 && errno != EINTR)
            return TRUE;   /* let read report it */
    }
}

static gboolean read_full(int fd, void *buf, size_t len, gint64 deadline)
{
    size_t got = 0;
    while (got < len) {
        if (!wait_readable(fd, deadline))
            return FALSE;
        ssize_t n = read(fd, (char *)buf + got, len - got);
        if (n == 0)
            return FALSE;
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            return FALSE;
        }
        got += (size_t)n;
    }
    return TRUE;
}

static gboolean write_full(int fd, const void *buf, size_t len)
{
    size_t put = 0;
    while (put < len) {
        ssize_t n = send(fd, (const char *)buf + put, len - put, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return FALSE;
        }
        put += (size_t)n;
    }
    return TRUE;
}

static gboolean send_msg(int fd, guint32 type, const void *data, size_t len)
{
    msg_hdr_t h = { type, (guint32)len };
    return write_full(fd, &h, sizeof h) && (len == 0 || write_full(fd, data, len));
}

/* Reads one message; *data_p (g_free) holds its payload. The biggest
 * message is a gathered result row set; 1 GiB guards against garbage. */
static gboolean recv_msg(int fd, guint32 *type_p, guint8 **data_p, guint32 *len_p, gint64 deadline)
{
    msg_hdr_t h;
    if (!read_full(fd, &h, sizeof h, deadline) || h.len > (1u << 30))
        return FALSE;
    guint8 *d = g_malloc(h.len + 1);
    if (!read_full(fd, d, h.len, deadline)) {
        g_free(d);
        return FALSE;
    }
    d[h.len] = 0;
    *type_p = h.type;
    *data_p = d;
    *len_p = h.len;
    return TRUE;
}

static int connect_once(const char *host, int port)
{
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
    struct addrinfo *res = NULL;
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    if (getaddrinfo(host, ps, &hints, &res) != 0)
        return -1;
    int fd = -1;
    for (struct addrinfo *ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd >= 0) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return fd;
}

/* Closing a socket with unread data makes TCP send a reset, which can
 * destroy the ABORT just sent before the peer reads it: so after an abort,
 * half-close and read until each peer closes too (at most a second). */
static void linger_drain(cs_boot_t *b)
{
    gint64 deadline = now_us() + G_USEC_PER_SEC;
    for (int i = 0; i < b->nfds; i++)
        if (b->fds[i] >= 0)
            shutdown(b->fds[i], SHUT_WR);
    for (int i = 0; i < b->nfds; i++) {
        char buf[4096];
        while (b->fds[i] >= 0 && wait_readable(b->fds[i], deadline)) {
            ssize_t n = read(b->fds[i], buf, sizeof buf);
            if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
                break;
        }
    }
}

void cs_boot_free(cs_boot_t *b)
{
    if (b == NULL)
        return;
    if (b->aborted)
        linger_drain(b);
    for (int i = 0; i < b->nfds; i++)
        if (b->fds[i] >= 0)
            close(b->fds[i]);
    for (int i = 0; b->pending != NULL && i < b->nfds; i++)
        g_free(b->pending[i]);
    g_free(b->pending);
    g_free(b->pending_len);
    g_free(b->fds);
    g_free(b);
}

static cs_boot_t *connect_root(const cs_boot_job_t *job, const void *id, size_t idlen, gint64 deadline,
                               GError **err)
{
    cs_boot_t *b = g_new0(cs_boot_t, 1);
    b->rank = 0;
    b->nranks = job->nranks;
    b->nfds = job->nranks;
    b->fds = g_new(int, b->nfds);
    for (int i = 0; i < b->nfds; i++)
        b->fds[i] = -1;
    b->pending = g_new0(guint8 *, b->nfds);
    b->pending_len = g_new0(guint32, b->nfds);
    if (job->nranks == 1)
        return b;
    int lfd = job->listen_fd;
    if (lfd < 0) {
        int port;
        /* listen on every address: MASTER_ADDR names this host as others see it */
        lfd = cs_boot_listen(NULL, job->port, &port, err);
        if (lfd < 0) {
            cs_boot_free(b);
            return NULL;
        }
    }
    int joined = 0;
    while (joined < job->nranks - 1) {
        if (!wait_readable(lfd, deadline)) {
            GString *missing = g_string_new(NULL);
            for (int q = 1; q < job->nranks && missing->len < 200; q++)
                if (b->fds[q] < 0)
                    g_string_append_printf(missing, "%s%d", missing->len ? ", " : "", q);
            g_set_error(err, CS_ERROR, CS_ERROR_RUNTIME, "collsim: real: rank 0: %d of %d ranks did not connect "
                        "to port %d in time (missing: %s); expected every rank to start with the same "
                        "rendezvous address", job->nranks - 1 - joined, job->nranks - 1, job->port, missing->str);
            g_string_free(missing, TRUE);
            goto fail;
        }
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0)
            continue;
        fcntl(fd, F_SETFD, FD_CLOEXEC);
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        guint32 type, len;
        guint8 *d = NULL;
        gint32 hello[2] = { -1, -1 };
        if (recv_msg(fd, &type, &d, &len, deadline) && type == MSG_HELLO && len == sizeof hello)
            memcpy(hello, d, sizeof hello);
        g_free(d);
        if (hello[1] != job->nranks || hello[0] < 1 || hello[0] >= job->nranks || b->fds[hello[0]] >= 0) {
            /* a stray connection or a rank of another job: refuse it, and
             * say why when it is one of ours with a different count */
            if (hello[1] > 0 && hello[1] != job->nranks)
                fprintf(stderr, "collsim: real: rank 0: rank %d says the job has %d ranks, not %d; ignored\n",
                        hello[0], hello[1], job->nranks);
            close(fd);
            continue;
        }
        b->fds[hello[0]] = fd;
        joined++;
    }
    for (int q = 1; q < job->nranks; q++)
        if (!send_msg(b->fds[q], MSG_ID, id, idlen)) {
            g_set_error(err, CS_ERROR, CS_ERROR_RUNTIME, "collsim: real: rank 0: rank %d went away before it got "
                        "NCCL's id", q);
            goto fail;
        }
    if (job->listen_fd < 0)
        close(lfd);
    return b;
fail:
    if (job->listen_fd < 0)
        close(lfd);
    cs_boot_free(b);
    return NULL;
}

static cs_boot_t *connect_peer(const cs_boot_job_t *job, void *id, size_t idlen, gint64 deadline, GError **err)
{
    int fd = -1;
    /* rank 0 may not be listening yet: retry until the deadline */
    while ((fd = connect_once(job->host, job->port)) < 0 && now_us() < deadline)
        g_usleep(50000);
    if (fd < 0) {
        g_set_error(err, CS_ERROR, CS_ERROR_RUNTIME, "collsim: real: rank %d: cannot reach rank 0 at %s:%d; "
                    "expected rank 0 to be listening there (check MASTER_ADDR/MASTER_PORT or --bootstrap)",
                    job->rank, job->host, job->port);
        return NULL;
    }
    gint32 hello[2] = { job->rank, job->nranks };
    guint32 type = 0, len = 0;
    guint8 *d = NULL;
    if (!send_msg(fd, MSG_HELLO, hello, sizeof hello) || !recv_msg(fd, &type, &d, &len, deadline)
        || type != MSG_ID || len != idlen) {
        if (type == MSG_ABORT && d != NULL)
            g_set_error(err, CS_ERROR, CS_ERROR_RUNTIME, "collsim: real: rank %d: stopped: %s", job->rank, d);
        else
            g_set_error(err, CS_ERROR, CS_ERROR_RUNTIME, "collsim: real: rank %d: rank 0 at %s:%d did not send "
                        "NCCL's id; expected every rank of one job to use the same rendezvous address",
                        job->rank, job->host, job->port);
        g_free(d);
        close(fd);
        return NULL;
    }
    memcpy(id, d, idlen);
    g_free(d);
    cs_boot_t *b = g_new0(cs_boot_t, 1);
    b->rank = job->rank;
    b->nranks = job->nranks;
    b->nfds = 1;
    b->fds = g_new(int, 1);
    b->fds[0] = fd;
    return b;
}

cs_boot_t *cs_boot_connect(const cs_boot_job_t *job, void *id, size_t idlen, double timeout_s, GError **err)
{
    gint64 deadline = now_us() + (gint64)(timeout_s * 1e6);
    return job->rank == 0 ? connect_root(job, id, idlen, deadline, err)
                          : connect_peer(job, id, idlen, deadline, err);
}

void cs_boot_abort(cs_boot_t *b, const char *why)
{
    b->aborted = TRUE;
    for (int i = 0; i < b->nfds; i++)
        if (b->fds[i] >= 0)
            send_msg(b->fds[i], MSG_ABORT, why, strlen(why));
}

/* What a message or a closed connection from rank q means. */
static char *failure_text(cs_boot_t *b, int q, gboolean got, guint32 type, const guint8 *d)
{
    if (got && type == MSG_ABORT)
        return g_strdup((const char *)d);
    if (b->rank == 0)
        return g_strdup_printf("rank %d closed its control connection (it failed or was killed)", q);
    return g_strdup("rank 0 closed its control connection (it failed or was killed)");
}

gboolean cs_boot_peer_failed(cs_boot_t *b, char **why_p)
{
    for (int i = 0; i < b->nfds; i++) {
        if (b->fds[i] < 0 || (b->pending != NULL && b->pending[i] != NULL))
            continue;
        struct pollfd p = { .fd = b->fds[i], .events = POLLIN };
        if (poll(&p, 1, 0) <= 0)
            continue;
        guint32 type = 0, len;
        guint8 *d = NULL;
        gboolean got = recv_msg(b->fds[i], &type, &d, &len, now_us() + 1000000);
        if (got && type == MSG_DATA && b->rank == 0) {   /* a rank that finished first */
            b->pending[i] = d;
            b->pending_len[i] = len;
            continue;
        }
        if (got && type != MSG_ABORT) {
            g_free(d);
            continue;
        }
        char *why = failure_text(b, i, got, type, d);
        g_free(d);
        close(b->fds[i]);
        b->fds[i] = -1;
        if (b->rank == 0)
            cs_boot_abort(b, why);
        *why_p = why;
        return TRUE;
    }
    return FALSE;
}

gboolean cs_boot_gather(cs_boot_t *b, const void *mine, size_t len, guint8 **all_p, double timeout_s, GError **err)
{
    gint64 deadline = now_us() + (gint64)(timeout_s * 1e6);
    if (b->rank != 0) {
        guint32 type = 0, n;
        guint8 *d = NULL;
        if (!send_msg(b->fds[0], MSG_DATA, mine, len) || !recv_msg(b->fds[0], &type, &d, &n, deadline)
            || type != MSG_DONE) {
            g_autofree char *why = type == MSG_ABORT ? g_strdup((const char *)d)
                                 : g_strdup("rank 0 closed its control connection (it failed or was killed)");
            g_set_error(err, CS_ERROR, CS_ERROR_RUNTIME, "collsim: real: rank %d: stopped: %s", b->rank, why);
            g_free(d);
            return FALSE;
        }
        g_free(d);
        return TRUE;
    }
    guint8 *all = g_malloc0(len * (size_t)b->nranks);
    memcpy(all, mine, len);
    for (int q = 1; q < b->nranks; q++) {
        guint32 type = MSG_DATA, n = 0;
        guint8 *d = NULL;
        gboolean got;
        if (b->pending[q] != NULL) {
            d = g_steal_pointer(&b->pending[q]);
            n = b->pending_len[q];
            got = TRUE;
        } else {
            got = b->fds[q] >= 0 && recv_msg(b->fds[q], &type, &d, &n, deadline);
        }
        if (!got || type != MSG_DATA || n != len) {
            g_autofree char *why = got && type == MSG_DATA
                ? g_strdup_printf("rank %d sent %u bytes of results, not %zu", q, n, len)
                : failure_text(b, q, got, type, d);
            if (!got && now_us() >= deadline)
                why = (g_free(why), g_strdup_printf("rank %d sent no results in time", q));
            g_free(d);
            cs_boot_abort(b, why);
            g_set_error(err, CS_ERROR, CS_ERROR_RUNTIME, "collsim: real: rank 0: %s", why);
            g_free(all);
            return FALSE;
        }
        memcpy(all + len * (size_t)q, d, len);
        g_free(d);
    }
    for (int q = 1; q < b->nranks; q++)
        send_msg(b->fds[q], MSG_DONE, NULL, 0);
    *all_p = all;
    return TRUE;
}

/* ---- the launcher ------------------------------------------------------------ */

static char *status_text(int st)
{
    if (WIFSIGNALED(st))
        return g_strdup_printf("was killed by signal %d (%s)", WTERMSIG(st), g_strsignal(WTERMSIG(st)));
    return g_strdup_printf("exited with status %d", WEXITSTATUS(st));
}

int cs_boot_launch(char **argv, int nranks, double grace_s, GError **err)
{
    int port;
    int lfd = cs_boot_listen("127.0.0.1", 0, &port, err);
    if (lfd < 0)
        return 1;
    pid_t *pids = g_new0(pid_t, nranks);
    g_auto(GStrv) base = g_get_environ();
    int status = 0;
    /* -1 means "this process did not exit yet" */
    int running = 0;
    for (int r = 0; r < nranks; r++) {
        gchar **env = g_strdupv(base);
        g_autofree char *rs = g_strdup_printf("%d", r), *ns = g_strdup_printf("%d", nranks);
        g_autofree char *ps = g_strdup_printf("%d", port), *fs = g_strdup_printf("%d", lfd);
        env = g_environ_setenv(env, CS_BOOT_ENV_WORKER, "1", TRUE);
        env = g_environ_setenv(env, "RANK", rs, TRUE);
        env = g_environ_setenv(env, "LOCAL_RANK", rs, TRUE);
        env = g_environ_setenv(env, "WORLD_SIZE", ns, TRUE);
        env = g_environ_setenv(env, "MASTER_ADDR", "127.0.0.1", TRUE);
        env = g_environ_setenv(env, "MASTER_PORT", ps, TRUE);
        if (r == 0)
            env = g_environ_setenv(env, CS_BOOT_ENV_LISTEN_FD, fs, TRUE);
        else
            env = g_environ_unsetenv(env, CS_BOOT_ENV_LISTEN_FD);
        fflush(NULL);
        pid_t parent = getpid();
        pid_t pid = fork();
        if (pid == 0) {
            /* dies with us, whatever kills us (the setting survives execve) */
            if (!cs_engine_child_bind(parent))
                _exit(127);
            if (r != 0)
                close(lfd);
            execve(argv[0], argv, env);
            fprintf(stderr, "collsim: real: cannot start rank %d (%s): %s\n", r, argv[0], g_strerror(errno));
            _exit(127);
        }
        g_strfreev(env);
        if (pid < 0) {
            g_set_error(err, CS_ERROR, CS_ERROR_RUNTIME, "collsim: real: cannot start rank %d: %s", r,
                        g_strerror(errno));
            status = 1;
            break;
        }
        pids[r] = pid;
        cs_engine_child_add(pid);   /* killed by our SIGINT handler (cs_engine_interrupt) */
        running++;
    }
    close(lfd);
    gboolean stopping = err != NULL && *err != NULL;
    int sibling_rank = -1, sibling_st = 0;   /* the first rank that stopped for another's failure */
    gint64 sibling_at = 0;                   /* ... and when to report it if no culprit exits */
    int nsiblings = 0;                       /* ranks that stopped so, already reaped */
    gint64 kill_at = stopping ? now_us() + (gint64)(grace_s * 1e6) : G_MAXINT64;
    if (stopping)
        for (int q = 0; q < nranks; q++)
            if (pids[q] > 0)
                kill(pids[q], SIGTERM);
    while (running > 0) {
        int st;
        gboolean pending = !stopping && sibling_rank >= 0;
        pid_t pid = waitpid(-1, &st, stopping || pending ? WNOHANG : 0);
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid < 0)
            break;
        if (pid == 0 && pending) {
            /* the failed rank has not exited within the grace time: the
             * stopped one is all there is to report */
            if (now_us() >= sibling_at) {
                g_autofree char *what = status_text(sibling_st);
                fprintf(stderr, "collsim: real: rank %d %s; stopping the other %d rank(s)\n", sibling_rank, what,
                        running);
                status = 1;
                stopping = TRUE;
                kill_at = now_us() + (gint64)(grace_s * 1e6);
                for (int q = 0; q < nranks; q++)
                    if (pids[q] > 0)
                        kill(pids[q], SIGTERM);
            }
            g_usleep(20000);
            continue;
        }
        if (pid == 0) {   /* stopping: wait for the others, then force them */
            if (now_us() >= kill_at) {
                for (int q = 0; q < nranks; q++)
                    if (pids[q] > 0)
                        kill(pids[q], SIGKILL);
                kill_at = G_MAXINT64;
            }
            g_usleep(20000);
            continue;
        }
        int r = 0;
        while (r < nranks && pids[r] != pid)
            r++;
        if (r == nranks)
            continue;
        pids[r] = -1;
        cs_engine_child_remove(pid);
        running--;
        gboolean failed = !WIFEXITED(st) || WEXITSTATUS(st) != 0;
        /* a rank that stopped because another failed: blame that one when
         * it is reaped (it may exit later, e.g. slower to tear down) */
        if (failed && !stopping && WIFEXITED(st) && WEXITSTATUS(st) == CS_BOOT_EXIT_SIBLING && running > 0) {
            nsiblings++;
            if (sibling_rank < 0) {
                sibling_rank = r;
                sibling_st = st;
                sibling_at = now_us() + (gint64)(grace_s * 1e6);
            }
            continue;
        }
        if (failed && !stopping) {
            g_autofree char *what = status_text(st);
            /* the others: still running, or already stopped because of it */
            fprintf(stderr, "collsim: real: rank %d %s; stopping the other %d rank(s)\n", r, what,
                    running + nsiblings);
            status = WIFEXITED(st) && WEXITSTATUS(st) == 2 ? 2 : 1;
            stopping = TRUE;
            /* give the ranks a moment to abort NCCL themselves (they see the
             * closed control connection), then make sure */
            kill_at = now_us() + (gint64)(grace_s * 1e6);
            for (int q = 0; q < nranks; q++)
                if (pids[q] > 0)
                    kill(pids[q], SIGTERM);
        }
    }
    if (!stopping && sibling_rank >= 0) {
        /* every other rank ended well: the stopped one is the failure */
        g_autofree char *what = status_text(sibling_st);
        fprintf(stderr, "collsim: real: rank %d %s\n", sibling_rank, what);
        status = 1;
    }
    g_free(pids);
    return status;
}
