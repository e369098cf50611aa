/* collsim real --verbs: the out-of-band exchange over TCP. As perftest, the
 * two sides swap what the other needs to address its queue pairs and its
 * buffer (LID, QP numbers, PSN, rkey, address, GID) as one text line; the
 * client then sends the plan (which test, which sizes) so the server needs
 * no options beyond its own device. */
#include "config.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include "real/verbs_int.h"
#include "util/cs_error.h"

#define CONN_MAGIC "CSVERBS1"
#define MAX_LINE 65536

char *vb_conn_encode(const vb_conn_msg_t *m)
{
    GString *g = g_string_new(NULL);
    g_string_append_printf(g, CONN_MAGIC " %u %d ", m->lid, m->nqp);
    for (int i = 0; i < m->nqp; i++)
        g_string_append_printf(g, "%s%u", i ? "," : "", m->qpn[i]);
    g_string_append_printf(g, " %u %u %" G_GINT64_MODIFIER "x %" G_GUINT64_FORMAT " %d ", m->psn, m->rkey,
                           m->addr, m->len, m->mtu);
    for (int i = 0; i < 16; i++)
        g_string_append_printf(g, "%02x", m->gid[i]);
    return g_string_free(g, FALSE);
}

static gboolean parse_u64(const char *s, int base, guint64 max, guint64 *v_p)
{
    if (s == NULL || *s == '\0' || *s == '-' || *s == '+' || g_ascii_isspace(*s))
        return FALSE;
    char *end = NULL;
    errno = 0;
    guint64 v = g_ascii_strtoull(s, &end, base);
    if (errno != 0 || *end != '\0' || v > max)
        return FALSE;
    *v_p = v;
    return TRUE;
}

static gboolean bad(GError **err, const char *what)
{
    g_set_error(err, CS_ERROR, CS_ERROR_RUNTIME,
                "collsim: real --verbs: the peer sent a malformed connection message (%s); "
                "expected the same collsim version on both hosts", what);
    return FALSE;
}

gboolean vb_conn_decode(const char *line, vb_conn_msg_t *m_p, GError **err)
{
    g_auto(GStrv) f = g_strsplit(line, " ", -1);
    if (g_strv_length(f) != 10 || strcmp(f[0], CONN_MAGIC) != 0)
        return bad(err, "not 10 fields starting with " CONN_MAGIC);
    vb_conn_msg_t m;
    memset(&m, 0, sizeof m);
    guint64 v;
    if (!parse_u64(f[1], 10, 0xffff, &v))
        return bad(err, "LID");
    m.lid = (guint32)v;
    if (!parse_u64(f[2], 10, VB_MAX_QPS, &v) || v < 1)
        return bad(err, "QP count");
    m.nqp = (int)v;
    g_auto(GStrv) q = g_strsplit(f[3], ",", -1);
    if ((int)g_strv_length(q) != m.nqp)
        return bad(err, "QP numbers");
    for (int i = 0; i < m.nqp; i++) {
        if (!parse_u64(q[i], 10, 0xffffff, &v))
            return bad(err, "QP number");
        m.qpn[i] = (guint32)v;
    }
    if (!parse_u64(f[4], 10, 0xffffff, &v))
        return bad(err, "PSN");
    m.psn = (guint32)v;
    if (!parse_u64(f[5], 10, G_MAXUINT32, &v))
        return bad(err, "rkey");
    m.rkey = (guint32)v;
    if (!parse_u64(f[6], 16, G_MAXUINT64, &m.addr))
        return bad(err, "address");
    if (!parse_u64(f[7], 10, G_MAXUINT64, &m.len) || m.len == 0)
        return bad(err, "buffer length");
    if (!parse_u64(f[8], 10, 5, &v) || v < 1)
        return bad(err, "MTU");
    m.mtu = (int)v;
    if (strlen(f[9]) != 32)
        return bad(err, "GID");
    for (int i = 0; i < 16; i++) {
        int hi = g_ascii_xdigit_value(f[9][2 * i]), lo = g_ascii_xdigit_value(f[9][2 * i + 1]);
        if (hi < 0 || lo < 0)
            return bad(err, "GID");
        m.gid[i] = (guint8)(hi << 4 | lo);
    }
    *m_p = m;
    return TRUE;
}

void vb_replay_clear(vb_replay_t *r)
{
    g_free(r->msg);
    g_free(r->count_of);
    memset(r, 0, sizeof *r);
}

char *vb_replay_encode(const vb_replay_t *r)
{
    GString *g = g_string_new(NULL);
    g_string_append_printf(g, "REPLAY %" G_GUINT64_FORMAT " %d %d", r->size, r->nqp, r->nruns);
    for (int i = 0; i < r->nruns; i++)
        g_string_append_printf(g, " %" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT, r->msg[i], r->count_of[i]);
    return g_string_free(g, FALSE);
}

gboolean vb_replay_decode(const char *line, vb_replay_t *r_p, GError **err)
{
    g_auto(GStrv) f = g_strsplit(line, " ", -1);
    guint nf = g_strv_length(f);
    guint64 size, nqp, nruns;
    if (nf < 4 || strcmp(f[0], "REPLAY") != 0 || !parse_u64(f[1], 10, G_MAXUINT64, &size) ||
        !parse_u64(f[2], 10, VB_MAX_QPS, &nqp) || nqp < 1 || !parse_u64(f[3], 10, 1 << 20, &nruns) ||
        nf != 4 + nruns)
        return bad(err, "replay header");
    vb_replay_t r;
    memset(&r, 0, sizeof r);
    r.size = size;
    r.nqp = (int)nqp;
    r.nruns = (int)nruns;
    r.msg = g_new0(guint64, nruns + 1);
    r.count_of = g_new0(guint64, nruns + 1);
    for (guint i = 0; i < nruns; i++) {
        g_auto(GStrv) mc = g_strsplit(f[4 + i], ":", -1);
        if (g_strv_length(mc) != 2 || !parse_u64(mc[0], 10, G_MAXUINT32, &r.msg[i]) || r.msg[i] == 0 ||
            !parse_u64(mc[1], 10, G_MAXUINT32, &r.count_of[i]) || r.count_of[i] == 0) {
            vb_replay_clear(&r);
            return bad(err, "replay message run");
        }
        r.wire_bytes += r.msg[i] * r.count_of[i];
        r.nmsgs += r.count_of[i];
    }
    *r_p = r;
    return TRUE;
}

/* ---- TCP ----------------------------------------------------------------- */

static int sys_fail(GError **err, const char *what, const char *host, int port)
{
    g_set_error(err, CS_ERROR, CS_ERROR_RUNTIME, "collsim: real --verbs: %s %s%sport %d: %s", what,
                host != NULL ? host : "", host != NULL ? " " : "", port, g_strerror(errno));
    return -1;
}

int vb_tcp_listen(int port, GError **err)
{
    int fd = socket(AF_INET6, SOCK_STREAM, 0);
    gboolean v6 = fd >= 0;
    if (fd < 0)
        fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return sys_fail(err, "cannot create a socket for", NULL, port);
    int one = 1, zero = 0;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    int rc;
    if (v6) {
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
        struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port), .sin6_addr = in6addr_any };
        rc = bind(fd, (struct sockaddr *)&a, sizeof a);
    } else {
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_ANY) };
        rc = bind(fd, (struct sockaddr *)&a, sizeof a);
    }
    if (rc != 0 || listen(fd, 1) != 0) {
        sys_fail(err, "cannot listen on TCP", NULL, port);
        close(fd);
        return -1;
    }
    return fd;
}

int vb_tcp_accept(int lfd, GError **err)
{
    int fd = accept(lfd, NULL, NULL);
    if (fd < 0)
        return sys_fail(err, "accept failed on the TCP", NULL, 0);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* A host name as RFC 1123 writes it: dot-separated labels of letters, digits
 * and inner '-' (and '_', which some sites use), 1 to 63 characters each, 253
 * in all, optionally ending in a dot. */
static gboolean host_name_ok(const char *h)
{
    size_t len = strlen(h), label = 0;
    if (len == 0 || len > 253)
        return FALSE;
    for (const char *c = h; *c != '\0'; c++) {
        if (*c == '.') {
            if (label == 0 || c[-1] == '-')
                return FALSE;
            label = 0;
        } else if (g_ascii_isalnum(*c) || *c == '_' || (*c == '-' && label > 0)) {
            if (++label > 63)
                return FALSE;
        } else {
            return FALSE;
        }
    }
    return h[len - 1] != '-';
}

/* A numeric address (192.0.2.7, ::1) is used as it is, with no lookup, so the
 * loopback works on a machine whose /etc/hosts lacks "localhost"; a name goes
 * through the resolver; anything else is refused before any lookup. */
int vb_tcp_connect(const char *host, int port, GError **err)
{
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST };
    struct addrinfo *res = NULL;
    char ps[16];
    g_snprintf(ps, sizeof ps, "%d", port);
    int rc = getaddrinfo(host, ps, &hints, &res);
    if (rc != 0 && !host_name_ok(host)) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: --client: '%s' is not a host name or address; expected "
                    "a name like node2 or an address like 192.0.2.7", host);
        return -1;
    }
    if (rc != 0) {
        hints.ai_flags = 0;
        rc = getaddrinfo(host, ps, &hints, &res);
    }
    if (rc != 0) {
        g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: --client: cannot resolve '%s': %s; expected a host name "
                    "or address", host, gai_strerror(rc));
        return -1;
    }
    int fd = -1;
    for (struct addrinfo *a = res; a != NULL && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
            int e = errno;
            close(fd);
            fd = -1;
            errno = e;
        }
    }
    freeaddrinfo(res);
    if (fd < 0)
        return sys_fail(err, "cannot connect to", host, port);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

gboolean vb_send_line(int fd, const char *line, GError **err)
{
    g_autofree char *buf = g_strconcat(line, "\n", NULL);
    size_t len = strlen(buf), off = 0;
    while (off < len) {
        ssize_t n = send(fd, buf + off, len - off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            sys_fail(err, "sending to the peer failed:", NULL, 0);
            return FALSE;
        }
        off += (size_t)n;
    }
    return TRUE;
}

char *vb_recv_line(int fd, GError **err)
{
    GString *g = g_string_new(NULL);
    for (;;) {
        char c;
        ssize_t n = recv(fd, &c, 1, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            g_set_error(err, CS_ERROR, CS_ERROR_RUNTIME, "collsim: real --verbs: the peer closed the connection%s%s",
                        n < 0 ? ": " : "", n < 0 ? g_strerror(errno) : "");
            g_string_free(g, TRUE);
            return NULL;
        }
        if (c == '\n')
            return g_string_free(g, FALSE);
        if (g->len >= MAX_LINE) {
            g_string_free(g, TRUE);
            bad(err, "line too long");
            return NULL;
        }
        g_string_append_c(g, c);
    }
}
