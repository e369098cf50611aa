/* collsim real --verbs: the runs over libibverbs. Two hosts, RC queue pairs,
 * RDMA writes: a bandwidth test (many writes outstanding, as ib_write_bw), a
 * latency test (ping-pong writes, each side polling the last byte of its
 * buffer, as ib_write_lat) and the replay of a collective's inter-node
 * messages. The client plans, the server follows: the out-of-band exchange
 * (verbs_oob.c) carries the plan. Everything here needs an RDMA device;
 * the logic around it is in the other verbs_*.c files and unit-tested. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#if defined(HAVE_CUDA) || defined(HAVE_REAL_NCCL)
#include <cuda.h>
#include <cuda_runtime.h>
#define VB_CUDA 1
#endif

#include "io/cs_scenario-int.h"
#include "io/cs_writers.h"
#include "models/cs_result.h"
#include "real/verbs_int.h"
#include "util/cs_error.h"

#define POLL_BATCH 16

typedef struct {
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    struct ibv_mr *mr;
    struct ibv_qp *qp[VB_MAX_QPS];
    int nqp;
    guint8 *buf;
    size_t len;
    gboolean cuda;
    const char *reg_how;      /* how GPU memory was registered, NULL for host memory */
    vb_port_sel_t sel;
    struct ibv_port_attr pattr;
    union ibv_gid gid;
    int tc, sl;
    guint32 max_inline;
    vb_conn_msg_t local, remote;
} vb_ctx_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static gboolean verbs_fail(GError **err, const char *what, int e)
{
    g_set_error(err, CS_ERROR, CS_ERROR_RUNTIME, "collsim: real --verbs: %s failed: %s", what,
                g_strerror(e != 0 ? e : EIO));
    return FALSE;
}

/* ---- resources ------------------------------------------------------------- */

static void ctx_clear(vb_ctx_t *c)
{
    for (int i = 0; i < c->nqp; i++)
        if (c->qp[i] != NULL)
            ibv_destroy_qp(c->qp[i]);
    if (c->mr != NULL)
        ibv_dereg_mr(c->mr);
    if (c->buf != NULL) {
#ifdef VB_CUDA
        if (c->cuda)
            cudaFree(c->buf);
        else
#endif
            free(c->buf);
    }
    if (c->cq != NULL)
        ibv_destroy_cq(c->cq);
    if (c->pd != NULL)
        ibv_dealloc_pd(c->pd);
    if (c->ctx != NULL)
        ibv_close_device(c->ctx);
    memset(c, 0, sizeof *c);
}

#ifdef VB_CUDA
typedef CUresult (*get_handle_fn)(void *, CUdeviceptr, size_t, CUmemRangeHandleType, unsigned long long);

/* dma-buf registration, as NCCL prefers it when the kernel (5.12+), the
 * open NVIDIA modules and rdma-core support it (net_ib/gdr.cc): the
 * driver API's cuMemGetHandleForAddressRange, reached through the runtime
 * so that collsim need not link libcuda. NULL when any step is missing. */
static struct ibv_mr *reg_dmabuf(struct ibv_pd *pd, void *p, size_t len, int access)
{
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult q;
#if CUDART_VERSION >= 12050
    cudaError_t ce = cudaGetDriverEntryPointByVersion("cuMemGetHandleForAddressRange", &fn, 12000, cudaEnableDefault, &q);
#else
    cudaError_t ce = cudaGetDriverEntryPoint("cuMemGetHandleForAddressRange", &fn, cudaEnableDefault, &q);
#endif
    if (ce != cudaSuccess || fn == NULL || q != cudaDriverEntryPointSuccess)
        return NULL;
    int fd = -1;
    if (((get_handle_fn)fn)(&fd, (CUdeviceptr)(uintptr_t)p, len, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0) != CUDA_SUCCESS ||
        fd < 0)
        return NULL;
    struct ibv_mr *mr = ibv_reg_dmabuf_mr(pd, 0, len, (guint64)(uintptr_t)p, fd, access);
    close(fd);   /* the registration holds its own reference */
    return mr;
}
#endif

static gboolean alloc_buffer(vb_ctx_t *c, gboolean cuda, GError **err)
{
    int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
#ifdef VB_CUDA
    if (cuda) {
        void *p = NULL;
        c->len = (c->len + (2u << 20) - 1) / (2u << 20) * (2u << 20);   /* dma-buf wants whole pages */
        cudaError_t ce = cudaMalloc(&p, c->len);
        if (ce != cudaSuccess) {
            g_set_error(err, CS_ERROR, CS_ERROR_RUNTIME, "collsim: real --verbs: --use-cuda: cudaMalloc of %zu "
                        "bytes failed: %s", c->len, cudaGetErrorString(ce));
            return FALSE;
        }
        c->buf = p;
        c->cuda = TRUE;
        c->mr = reg_dmabuf(c->pd, c->buf, c->len, access);
        c->reg_how = "dma-buf";
        if (c->mr == NULL) {
            /* GPUDirect RDMA through nvidia_peermem: the verbs driver pins
             * the GPU pages itself */
            c->mr = ibv_reg_mr(c->pd, c->buf, c->len, access);
            c->reg_how = "nvidia_peermem";
        }
        if (c->mr == NULL) {
            g_set_error(err, CS_ERROR, CS_ERROR_RUNTIME, "collsim: real --verbs: --use-cuda: neither dma-buf "
                        "registration nor ibv_reg_mr on GPU memory worked (%s); expected GPUDirect RDMA: the "
                        "nvidia_peermem module, or dma-buf (Linux 5.12+, open NVIDIA modules): see 'collsim doctor'",
                        g_strerror(errno));
            return FALSE;
        }
        return TRUE;
    }
#else
    (void)cuda;
#endif
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (posix_memalign((void **)&c->buf, page, c->len) != 0)
        return verbs_fail(err, "allocating the buffer", ENOMEM);
    memset(c->buf, 0, c->len);
    c->mr = ibv_reg_mr(c->pd, c->buf, c->len, access);
    if (c->mr == NULL)
        return verbs_fail(err, "ibv_reg_mr", errno);
    return TRUE;
}

static gboolean ctx_open(vb_ctx_t *c, const vb_port_sel_t *sel, size_t len, int nqp, int depth, gboolean cuda,
                         int tc, int sl, GError **err)
{
    memset(c, 0, sizeof *c);
    c->sel = *sel;
    c->tc = tc;
    c->sl = sl;
    c->len = len;
    int ndev = 0;
    struct ibv_device **list = ibv_get_device_list(&ndev);
    for (int i = 0; list != NULL && i < ndev && c->ctx == NULL; i++)
        if (strcmp(ibv_get_device_name(list[i]), sel->name) == 0)
            c->ctx = ibv_open_device(list[i]);
    if (list != NULL)
        ibv_free_device_list(list);
    if (c->ctx == NULL)
        return verbs_fail(err, "ibv_open_device", errno);
    if (ibv_query_port(c->ctx, (guint8)sel->port, &c->pattr) != 0)
        return verbs_fail(err, "ibv_query_port", errno);
    if (c->pattr.state != IBV_PORT_ACTIVE) {
        g_set_error(err, CS_ERROR, CS_ERROR_RUNTIME, "collsim: real --verbs: %s:%d is not ACTIVE", sel->name, sel->port);
        return FALSE;
    }
    if (sel->gid_index >= 0 && ibv_query_gid(c->ctx, (guint8)sel->port, sel->gid_index, &c->gid) != 0)
        return verbs_fail(err, "ibv_query_gid", errno);
    c->pd = ibv_alloc_pd(c->ctx);
    if (c->pd == NULL)
        return verbs_fail(err, "ibv_alloc_pd", errno);
    int cqe = MIN(nqp * (depth + 1) * 2, 65536);
    c->cq = ibv_create_cq(c->ctx, cqe, NULL, NULL, 0);
    if (c->cq == NULL)
        return verbs_fail(err, "ibv_create_cq", errno);
    if (!alloc_buffer(c, cuda, err))
        return FALSE;
    for (int i = 0; i < nqp; i++) {
        struct ibv_qp_init_attr ia = {
            .send_cq = c->cq, .recv_cq = c->cq, .qp_type = IBV_QPT_RC,
            .cap = { .max_send_wr = (guint32)depth, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1,
                     .max_inline_data = cuda ? 0 : 220 },
        };
        c->qp[i] = ibv_create_qp(c->pd, &ia);
        if (c->qp[i] == NULL && ia.cap.max_inline_data > 0) {
            ia.cap.max_inline_data = 0;    /* a device without inline data */
            c->qp[i] = ibv_create_qp(c->pd, &ia);
        }
        if (c->qp[i] == NULL)
            return verbs_fail(err, "ibv_create_qp", errno);
        c->nqp = i + 1;
        c->max_inline = ia.cap.max_inline_data;
        struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = (guint8)sel->port,
                                 .qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE };
        if (ibv_modify_qp(c->qp[i], &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0)
            return verbs_fail(err, "ibv_modify_qp to INIT", errno);
    }
    vb_conn_msg_t *m = &c->local;
    memset(m, 0, sizeof *m);
    m->lid = c->pattr.lid;
    m->nqp = nqp;
    for (int i = 0; i < nqp; i++)
        m->qpn[i] = c->qp[i]->qp_num;
    m->psn = (guint32)g_random_int() & 0xffffff;
    m->rkey = c->mr->rkey;
    m->addr = (guint64)(uintptr_t)c->buf;
    m->len = c->len;
    m->mtu = (int)c->pattr.active_mtu;    /* the port's active MTU, as NCCL (connect.cc) */
    if (sel->gid_index >= 0)
        memcpy(m->gid, c->gid.raw, 16);
    return TRUE;
}

/* RTR and RTS with the peer's numbers; traffic class and service level as
 * NCCL sets them (connect.cc ncclIbRtrQp: ah_attr.grh.traffic_class =
 * NCCL_IB_TC, ah_attr.sl = NCCL_IB_SL; timeout and retry counts as
 * NCCL_IB_TIMEOUT 20 and NCCL_IB_RETRY_CNT 7, reference nccl-model.md §4). */
static gboolean ctx_connect(vb_ctx_t *c, GError **err)
{
    const vb_conn_msg_t *r = &c->remote;
    if (r->nqp != c->nqp) {
        g_set_error(err, CS_ERROR, CS_ERROR_RUNTIME, "collsim: real --verbs: the peer made %d QP(s), this side %d",
                    r->nqp, c->nqp);
        return FALSE;
    }
    enum ibv_mtu mtu = (enum ibv_mtu)MIN(r->mtu, (int)c->pattr.active_mtu);
    for (int i = 0; i < c->nqp; i++) {
        struct ibv_qp_attr a;
        memset(&a, 0, sizeof a);
        a.qp_state = IBV_QPS_RTR;
        a.path_mtu = mtu;
        a.dest_qp_num = r->qpn[i];
        a.rq_psn = r->psn;
        a.max_dest_rd_atomic = 1;
        a.min_rnr_timer = 12;
        a.ah_attr.dlid = (guint16)r->lid;
        a.ah_attr.sl = (guint8)c->sl;
        a.ah_attr.port_num = (guint8)c->sel.port;
        if (c->sel.roce || c->sel.gid_index > 0) {
            a.ah_attr.is_global = 1;
            memcpy(a.ah_attr.grh.dgid.raw, r->gid, 16);
            a.ah_attr.grh.sgid_index = (guint8)c->sel.gid_index;
            a.ah_attr.grh.hop_limit = 255;
            a.ah_attr.grh.traffic_class = (guint8)c->tc;
        }
        if (ibv_modify_qp(c->qp[i], &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                          IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) != 0)
            return verbs_fail(err, "ibv_modify_qp to RTR", errno);
        memset(&a, 0, sizeof a);
        a.qp_state = IBV_QPS_RTS;
        a.timeout = 20;
        a.retry_cnt = 7;
        a.rnr_retry = 7;
        a.sq_psn = c->local.psn;
        a.max_rd_atomic = 1;
        if (ibv_modify_qp(c->qp[i], &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                          IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC) != 0)
            return verbs_fail(err, "ibv_modify_qp to RTS", errno);
    }
    return TRUE;
}

static int post_write(vb_ctx_t *c, int qi, guint64 loff, guint64 roff, guint64 len, guint64 id)
{
    struct ibv_sge sge = { .addr = (guint64)(uintptr_t)c->buf + loff, .length = (guint32)len, .lkey = c->mr->lkey };
    struct ibv_send_wr wr = {
        .wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
        .send_flags = IBV_SEND_SIGNALED | (len <= c->max_inline && !c->cuda ? IBV_SEND_INLINE : 0),
        .wr.rdma = { .remote_addr = c->remote.addr + roff, .rkey = c->remote.rkey },
    }, *bad = NULL;
    return ibv_post_send(c->qp[qi], &wr, &bad);
}

/* Polls up to POLL_BATCH completions; -1 with *err on a failed one. */
static int poll_some(vb_ctx_t *c, struct ibv_wc *wc, GError **err)
{
    int n = ibv_poll_cq(c->cq, POLL_BATCH, wc);
    if (n < 0) {
        verbs_fail(err, "ibv_poll_cq", errno);
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (wc[i].status != IBV_WC_SUCCESS) {
            g_set_error(err, CS_ERROR, CS_ERROR_RUNTIME, "collsim: real --verbs: a write completed with error %d "
                        "(%s)%s", wc[i].status, ibv_wc_status_str(wc[i].status),
                        wc[i].status == IBV_WC_RETRY_EXC_ERR ? "; the peer is unreachable over this GID/port "
                        "(check the GID index, the subnet and the VLAN)" : "");
            return -1;
        }
    return n;
}

/* ---- the tests ------------------------------------------------------------- */

static gboolean run_bw(vb_ctx_t *c, guint64 size, int iters, int depth, double *peak_p, double *avg_p, GError **err)
{
    g_autofree double *tp = g_new(double, iters);
    g_autofree double *td = g_new(double, iters);
    struct ibv_wc wc[POLL_BATCH];
    int posted = 0, done = 0;
    while (done < iters) {
        while (posted < iters && posted - done < depth) {
            tp[posted] = now_s();
            if (post_write(c, 0, 0, 0, size, (guint64)posted) != 0)
                return verbs_fail(err, "ibv_post_send", errno);
            posted++;
        }
        int n = poll_some(c, wc, err);
        if (n < 0)
            return FALSE;
        double t = now_s();
        for (int i = 0; i < n; i++)
            td[done++] = t;
    }
    vb_bw_stats(tp, td, iters, size, depth, peak_p, avg_p);
    return TRUE;
}

/* One side of the ping-pong: the client writes first and times; the server
 * answers. Each write carries an iteration mark in its last byte, which the
 * receiver polls (ib_write_lat's method). Samples are half round trips. */
static gboolean run_lat(vb_ctx_t *c, gboolean client, guint64 size, int iters, double *samples, GError **err)
{
    guint64 half = c->len / 2;
    volatile guint8 *in = c->buf + size - 1;
    guint8 *out = c->buf + half + size - 1;
    struct ibv_wc wc[POLL_BATCH];
    for (int i = 0; i < iters; i++) {
        guint8 mark = (guint8)(i % 250 + 1);   /* differs from the previous iteration's */
        double t0 = now_s();
        gboolean sent = FALSE, got = FALSE;
        int completions = 0;
        while (!got || !sent || completions < 1) {
            if (!got && *in == mark)
                got = TRUE;
            /* the client writes first; the server answers what it got */
            if (!sent && (client || got)) {
                *out = mark;
                if (post_write(c, 0, half, 0, size, (guint64)i) != 0)
                    return verbs_fail(err, "ibv_post_send", errno);
                sent = TRUE;
            }
            int n = poll_some(c, wc, err);
            if (n < 0)
                return FALSE;
            completions += n;
        }
        if (client)
            samples[i] = (now_s() - t0) / 2 * 1e6;
    }
    return TRUE;
}

/* Every connection sends the message list in order, at most NCCL_STEPS
 * outstanding (NCCL's 8-slot credit window per connection). */
static gboolean run_replay(vb_ctx_t *c, const vb_replay_t *r, double *secs_p, GError **err)
{
    guint64 maxmsg = 0;
    for (int i = 0; i < r->nruns; i++)
        maxmsg = MAX(maxmsg, r->msg[i]);
    int nqp = MIN(r->nqp, c->nqp);
    guint64 *sent = g_new0(guint64, nqp), *done = g_new0(guint64, nqp);
    int *run = g_new0(int, nqp);
    guint64 *in_run = g_new0(guint64, nqp);
    struct ibv_wc wc[POLL_BATCH];
    gboolean ok = TRUE;
    int finished = 0;
    double t0 = now_s();
    while (finished < nqp && ok) {
        for (int q = 0; q < nqp && ok; q++) {
            while (run[q] < r->nruns && sent[q] - done[q] < VB_NCCL_STEPS) {
                guint64 off = (sent[q] % VB_NCCL_STEPS) * maxmsg;
                if (post_write(c, q, off % c->len, off % c->remote.len, r->msg[run[q]], (guint64)q) != 0) {
                    ok = verbs_fail(err, "ibv_post_send", errno);
                    break;
                }
                sent[q]++;
                if (++in_run[q] == r->count_of[run[q]]) {
                    run[q]++;
                    in_run[q] = 0;
                }
            }
        }
        int n = ok ? poll_some(c, wc, err) : 0;
        if (n < 0)
            ok = FALSE;
        for (int i = 0; i < n; i++) {
            int q = (int)wc[i].wr_id;
            done[q]++;
            if (run[q] == r->nruns && done[q] == sent[q])
                finished++;
        }
    }
    *secs_p = now_s() - t0;
    g_free(sent);
    g_free(done);
    g_free(run);
    g_free(in_run);
    return ok;
}

/* ---- the two sides ----------------------------------------------------------- */

static gboolean expect(int fd, const char *prefix, char **line_p, GError **err)
{
    char *l = vb_recv_line(fd, err);
    if (l == NULL)
        return FALSE;
    if (!g_str_has_prefix(l, prefix)) {
        g_set_error(err, CS_ERROR, CS_ERROR_RUNTIME, "collsim: real --verbs: the peer sent '%.40s' where '%s' "
                    "was expected", l, prefix);
        g_free(l);
        return FALSE;
    }
    if (line_p != NULL)
        *line_p = l;
    else
        g_free(l);
    return TRUE;
}

static gboolean exchange(vb_ctx_t *c, int fd, gboolean client, GError **err)
{
    g_autofree char *mine = vb_conn_encode(&c->local);
    g_autofree char *theirs = NULL;
    if (client) {
        if (!vb_send_line(fd, mine, err) || (theirs = vb_recv_line(fd, err)) == NULL)
            return FALSE;
    } else {
        if ((theirs = vb_recv_line(fd, err)) == NULL || !vb_send_line(fd, mine, err))
            return FALSE;
    }
    return vb_conn_decode(theirs, &c->remote, err) && ctx_connect(c, err);
}

typedef struct {
    const vb_opts_t *o;
    cs_nccl_env_t *env;
    vb_port_sel_t sel;
    int tc, sl;
} vb_run_t;

static void print_banner(const vb_run_t *R, const vb_ctx_t *c, const char *test, int nqp, int depth)
{
    static const int mtu_bytes[] = { 0, 256, 512, 1024, 2048, 4096 };
    int mtu = MIN(c->remote.mtu, (int)c->pattr.active_mtu);
    printf("# collsim real --verbs: %s (measured)\n", test);
    printf("#  Device %s port %d, Link type %s, Number of qps %d, Connection type RC, TX depth %d\n",
           c->sel.name, c->sel.port, c->sel.roce ? "Ethernet" : "IB", nqp, depth);
    printf("#  Mtu %d[B] (active MTU of both ports), GID index %d (%s), traffic class %d, service level %d%s%s\n",
           mtu >= 1 && mtu <= 5 ? mtu_bytes[mtu] : 0, c->sel.gid_index, c->sel.gid_how, R->tc, R->sl,
           c->cuda ? ", GPU memory via " : "", c->cuda ? c->reg_how : "");
}

static int server_side(vb_run_t *R, GError **err)
{
    int lfd = vb_tcp_listen(R->o->port, err);
    if (lfd < 0)
        return 1;
    fprintf(stderr, "collsim: real --verbs: waiting for a client on TCP port %d (%s:%d, GID %d)\n", R->o->port,
            R->sel.name, R->sel.port, R->sel.gid_index);
    int fd = vb_tcp_accept(lfd, err);
    close(lfd);
    if (fd < 0)
        return 1;
    int status = 1;
    vb_ctx_t c;
    memset(&c, 0, sizeof c);
    g_autofree char *hello = NULL;
    guint64 len = 0, nqp = 0, depth = 0;
    if (!expect(fd, "HELLO ", &hello, err))
        goto out_fd;
    if (sscanf(hello, "HELLO %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT, &len, &nqp, &depth) != 3 ||
        len == 0 || len > (G_GUINT64_CONSTANT(1) << 34) || nqp < 1 || nqp > VB_MAX_QPS || depth < 1 || depth > 8192) {
        g_set_error(err, CS_ERROR, CS_ERROR_RUNTIME, "collsim: real --verbs: malformed plan from the client");
        goto out_fd;
    }
    if (!ctx_open(&c, &R->sel, len, (int)nqp, (int)depth, R->o->use_cuda, R->tc, R->sl, err) ||
        !exchange(&c, fd, FALSE, err))
        goto out_ctx;
    for (;;) {
        g_autofree char *cmd = vb_recv_line(fd, err);
        if (cmd == NULL)
            goto out_ctx;
        guint64 size;
        int iters;
        if (strcmp(cmd, "END") == 0) {
            break;
        } else if (g_str_has_prefix(cmd, "BW ")) {
            /* one-sided writes: nothing to do but to stay */
            if (!vb_send_line(fd, "OK", err))
                goto out_ctx;
        } else if (sscanf(cmd, "LAT %" G_GUINT64_FORMAT " %d", &size, &iters) == 2 && iters > 0 &&
                   size >= 1 && size <= len / 2) {
            if (c.cuda) {
                g_set_error(err, CS_ERROR, CS_ERROR_RUNTIME, "collsim: real --verbs: latency with GPU memory is "
                            "not supported (the CPU polls the buffer)");
                goto out_ctx;
            }
            memset(c.buf, 0, c.len);
            if (!vb_send_line(fd, "OK", err) || !run_lat(&c, FALSE, size, iters, NULL, err))
                goto out_ctx;
        } else if (g_str_has_prefix(cmd, "REPLAY ")) {
            vb_replay_t r;
            double secs = 0;
            if (!vb_replay_decode(cmd, &r, err))
                goto out_ctx;
            gboolean ok = vb_send_line(fd, "GO", err) && run_replay(&c, &r, &secs, err);
            vb_replay_clear(&r);
            g_autofree char *dn = g_strdup_printf("DONE %.9f", secs);
            if (!ok || !vb_send_line(fd, dn, err))
                goto out_ctx;
        } else {
            g_set_error(err, CS_ERROR, CS_ERROR_RUNTIME, "collsim: real --verbs: unknown command '%.40s' from the "
                        "client; expected the same collsim version on both hosts", cmd);
            goto out_ctx;
        }
    }
    status = 0;
out_ctx:
    ctx_clear(&c);
out_fd:
    close(fd);
    return status;
}

static int client_raw(vb_run_t *R, vb_ctx_t *c, int fd, GError **err)
{
    const vb_opts_t *o = R->o;
    int n = 0;
    g_autofree guint64 *sizes = vb_sweep_sizes(o, &n);
    g_autoptr(cs_result_t) res = cs_result_new("measured:verbs-write", "RDMA write between two hosts",
                                               CS_COLL_BROADCAST, 2, 2);
    if (o->tests & VB_TEST_BW) {
        print_banner(R, c, "RDMA_Write BW Test", 1, o->tx_depth);
        g_autofree char *h = vb_bw_header(o->gbits);
        printf("%s\n", h);
        for (int i = 0; i < n; i++) {
            double peak, avg;
            g_autofree char *cmd = g_strdup_printf("BW %" G_GUINT64_FORMAT " %d", sizes[i], o->bw_iters);
            if (!vb_send_line(fd, cmd, err) || !expect(fd, "OK", NULL, err) ||
                !run_bw(c, sizes[i], o->bw_iters, o->tx_depth, &peak, &avg, err))
                return 1;
            g_autofree char *l = vb_bw_line(sizes[i], o->bw_iters, peak, avg, o->gbits);
            printf("%s\n", l);
            fflush(stdout);
            cs_result_row_t row;
            memset(&row, 0, sizeof row);
            row.size = sizes[i];
            row.count = sizes[i];
            row.dtype = CS_DTYPE_UINT8;
            row.redop = CS_REDOP_SUM;
            row.root = 0;
            row.time_us[CS_OOP] = avg > 0 ? (double)sizes[i] / avg * 1e6 : -1;
            row.time_us[CS_INP] = -1;
            row.wrong[0] = row.wrong[1] = -1;
            row.nchannels = 1;
            g_snprintf(row.transport, sizeof row.transport, "RDMA write %s:%d", c->sel.name, c->sel.port);
            cs_result_row_fill_bw(res, &row);
            g_array_append_val(res->rows, row);
        }
        cs_result_add_note(res, "time = size / BW average of %d writes, %d outstanding (ib_write_bw's method)",
                           o->bw_iters, o->tx_depth);
    }
    if (o->tests & VB_TEST_LAT) {
        if (c->cuda) {
            g_set_error(err, CS_ERROR, CS_ERROR_INPUT, "collsim: --use-cuda: the latency test polls the buffer "
                        "from the CPU; expected --test bw with --use-cuda");
            return 2;
        }
        print_banner(R, c, "RDMA_Write Latency Test", 1, 1);
        g_autofree char *h = vb_lat_header();
        printf("%s\n", h);
        g_autofree double *samples = g_new(double, o->lat_iters);
        for (int i = 0; i < n; i++) {
            if (sizes[i] > c->len / 2)
                continue;
            memset(c->buf, 0, c->len);
            g_autofree char *cmd = g_strdup_printf("LAT %" G_GUINT64_FORMAT " %d", sizes[i], o->lat_iters);
            if (!vb_send_line(fd, cmd, err) || !expect(fd, "OK", NULL, err) ||
                !run_lat(c, TRUE, sizes[i], o->lat_iters, samples, err))
                return 1;
            vb_lat_stats_t st;
            vb_lat_stats(samples, o->lat_iters, &st);
            g_autofree char *l = vb_lat_line(sizes[i], o->lat_iters, &st);
            printf("%s\n", l);
            fflush(stdout);
        }
    }
    if (res->rows->len > 0) {
        cs_result_finish(res);
        if (o->args.scratch.json_out != NULL && !cs_write_json_file(o->args.scratch.json_out, res, err))
            return 2;
        if (o->args.scratch.csv_out != NULL && !cs_write_csv_file(o->args.scratch.csv_out, res, err))
            return 2;
        cs_table_opts_t t = { .command = "collsim real --verbs (RDMA write, 2 hosts)", .topo_desc = "2 hosts",
                              .nthreads = 1, .ngpus = 1, .iters = o->bw_iters, .warmup = 0, .agg_iters = 1,
                              .check = 0, .minbytes = sizes[0], .maxbytes = sizes[n - 1], .stepfactor = 2,
                              .extra_columns = TRUE };
        printf("#\n");
        cs_write_table(stdout, res, &t);
    }
    return 0;
}

static int client_replay(vb_run_t *R, vb_ctx_t *c, int fd, const cs_scenario_t *s, const cs_topo_t *topo,
                         const vb_replay_t *plans, int n, GError **err)
{
    g_autoptr(cs_result_t) res = cs_result_new("measured:verbs-replay", s->name != NULL ? s->name : topo->description,
                                               s->coll, topo->ngpus, topo->nnodes);
    print_banner(R, c, "replay of the ring's inter-node traffic", c->nqp, VB_NCCL_STEPS);
    GString *other = g_string_new(NULL);
    for (int i = 0; i < n; i++) {
        const vb_replay_t *p = &plans[i];
        g_autofree char *cmd = vb_replay_encode(p);
        double total = 0;
        for (int it = 0; it < s->warmup + s->iters; it++) {
            double mine = 0, theirs = 0;
            g_autofree char *done = NULL;
            if (!vb_send_line(fd, cmd, err) || !expect(fd, "GO", NULL, err) || !run_replay(c, p, &mine, err) ||
                !expect(fd, "DONE ", &done, err))
                return 1;
            theirs = g_ascii_strtod(done + 5, NULL);
            if (it >= s->warmup)
                total += MAX(mine, theirs);   /* both directions of the ring */
        }
        cs_result_row_t row;
        memset(&row, 0, sizeof row);
        row.size = p->size;
        row.count = p->count;
        row.dtype = s->dtype;
        row.redop = s->redop;
        row.root = cs_coll_has_root(s->coll) ? s->root : -1;
        row.time_us[CS_OOP] = total / MAX(s->iters, 1) * 1e6;
        row.time_us[CS_INP] = -1;
        row.wrong[0] = row.wrong[1] = -1;
        g_strlcpy(row.algo, cs_algo_name(CS_ALGO_RING), sizeof row.algo);
        g_strlcpy(row.proto, cs_proto_name(p->proto), sizeof row.proto);
        row.nchannels = p->nchannels;
        g_snprintf(row.transport, sizeof row.transport, "replay %s:%d %dQP", c->sel.name, c->sel.port, p->nqp);
        row.nccl_est_us = -1;
        cs_result_row_fill_bw(res, &row);
        g_array_append_val(res->rows, row);
        if (p->nccl_algo != CS_ALGO_RING)
            g_string_append_printf(other, "%s%" G_GUINT64_FORMAT " (%s)", other->len ? ", " : "", p->size,
                                   cs_algo_name(p->nccl_algo));
    }
    cs_result_add_note(res, "measured: the inter-node part only (RDMA writes of the ring's per-step messages "
                       "between two hosts over one NIC pair, %d outstanding per channel); no GPU, no "
                       "reduction, no intra-node hop", VB_NCCL_STEPS);
    if (other->len > 0)
        cs_result_add_note(res, "NCCL's model picks another algorithm at sizes %s: Ring's traffic was replayed",
                           other->str);
    g_string_free(other, TRUE);
    cs_result_finish(res);
    if (s->json_out != NULL && !cs_write_json_file(s->json_out, res, err))
        return 2;
    if (s->csv_out != NULL && !cs_write_csv_file(s->csv_out, res, err))
        return 2;
    cs_table_opts_t t = { .command = "collsim real --verbs (replay)", .topo_desc = topo->description,
                          .nthreads = 1, .ngpus = 1, .iters = s->iters, .warmup = s->warmup, .agg_iters = 1,
                          .check = 0, .minbytes = s->minbytes, .maxbytes = s->maxbytes, .stepbytes = s->stepbytes,
                          .stepfactor = s->stepfactor, .extra_columns = s->extra_columns };
    cs_write_table(stdout, res, &t);
    return 0;
}

/* What the client will run, worked out before any device or peer is
 * touched, so that bad input fails first (exit 2). */
typedef struct {
    cs_scenario_t s;
    cs_topo_t *topo;
    cs_comm_t *comm;          /* NCCL's communicator under the scenario's settings */
    cs_comm_t *ring;          /* the same with NCCL_ALGO=Ring: the traffic replayed */
    vb_replay_t *plans;
    int nplans;
    guint64 len;            /* buffer bytes on each side */
    int nqp;
} vb_plan_t;

static void plan_clear(vb_plan_t *p)
{
    for (int i = 0; p->plans != NULL && i < p->nplans; i++)
        vb_replay_clear(&p->plans[i]);
    g_free(p->plans);
    if (p->comm != NULL)
        cs_comm_free(p->comm);
    if (p->ring != NULL)
        cs_comm_free(p->ring);
    if (p->topo != NULL)
        cs_topo_free(p->topo);
    cs_scenario_clear(&p->s);
}

static gboolean plan_build(vb_opts_t *o, vb_plan_t *p, GError **err)
{
    memset(p, 0, sizeof *p);
    cs_scenario_init(&p->s);
    p->nqp = 1;
    if (o->replay) {
        if (!vb_opts_scenario(o, &p->s, err) || (p->topo = cs_topo_spec_build(&p->s.topo, err)) == NULL ||
            (p->comm = cs_comm_new(p->topo, p->s.env, err)) == NULL)
            return FALSE;
        g_autoptr(cs_nccl_env_t) ring_env = vb_env_with(p->s.env, "NCCL_ALGO", "Ring");
        if ((p->ring = cs_comm_new(p->topo, ring_env, err)) == NULL)
            return FALSE;
        g_autofree guint64 *sizes = cs_scenario_sizes(&p->s, &p->nplans);
        p->plans = g_new0(vb_replay_t, p->nplans);
        for (int i = 0; i < p->nplans; i++) {
            cs_decision_t d;
            if (!vb_replay_plan(p->ring, &p->s, sizes[i], &p->plans[i], err) ||
                !cs_comm_decide_op(p->comm, p->s.coll, p->s.dtype, p->s.redop, p->plans[i].nccl_bytes, &d, err))
                return FALSE;
            p->plans[i].nccl_algo = d.algo;   /* what NCCL would really run, for the note */
            p->nqp = MAX(p->nqp, p->plans[i].nqp);
            for (int k = 0; k < p->plans[i].nruns; k++)
                p->len = MAX(p->len, p->plans[i].msg[k] * VB_NCCL_STEPS);
        }
    } else {
        int n = 0;
        g_autofree guint64 *sizes = vb_sweep_sizes(o, &n);
        p->len = 2 * sizes[n - 1];   /* the latency test's two halves */
    }
    p->len = MAX(p->len, 4096);
    return TRUE;
}

static int client_side(vb_run_t *R, vb_plan_t *P, GError **err)
{
    const vb_opts_t *o = R->o;
    int status = 1, fd = -1;
    int depth = MAX(o->tx_depth, VB_NCCL_STEPS);
    g_autofree char *hello = NULL;
    vb_ctx_t c;
    memset(&c, 0, sizeof c);
    if ((fd = vb_tcp_connect(o->client, o->port, err)) < 0)
        goto out;
    hello = g_strdup_printf("HELLO %" G_GUINT64_FORMAT " %d %d", P->len, P->nqp, depth);
    if (!vb_send_line(fd, hello, err) || !ctx_open(&c, &R->sel, P->len, P->nqp, depth, o->use_cuda, R->tc, R->sl, err) ||
        !exchange(&c, fd, TRUE, err))
        goto out;
    status = o->replay ? client_replay(R, &c, fd, &P->s, P->topo, P->plans, P->nplans, err)
                       : client_raw(R, &c, fd, err);
    if (status == 0 && !vb_send_line(fd, "END", err))
        status = 1;
out:
    ctx_clear(&c);
    if (fd >= 0)
        close(fd);
    return status;
}

int vb_run(vb_opts_t *o)
{
    g_autoptr(GError) err = NULL;
    vb_plan_t P;
    if (!o->server && !plan_build(o, &P, &err)) {
        cs_scenario_error_one_line(err);
        fprintf(stderr, "%s\n", err->message);
        plan_clear(&P);
        return 2;
    }
    int ndev = 0;
    struct ibv_device **list = ibv_get_device_list(&ndev);
    if (list != NULL)
        ibv_free_device_list(list);
    if (list == NULL || ndev == 0) {
        fprintf(stderr, "collsim: real --verbs: no RDMA device found (ibv_get_device_list returned none); needs an "
                "InfiniBand or RoCE NIC\n");
        if (!o->server)
            plan_clear(&P);
        return 1;
    }
    vb_run_t R;
    memset(&R, 0, sizeof R);
    R.o = o;
    R.env = cs_nccl_env_new();
    cs_nccl_env_import_environ(R.env);
    for (guint i = 0; i < o->args.envs->len; i++) {
        const char *kv = g_ptr_array_index(o->args.envs, i);
        const char *eq = strchr(kv, '=');
        g_autofree char *name = g_strndup(kv, (gsize)(eq - kv));
        cs_nccl_env_set(R.env, name, eq + 1, "--env");
    }
    R.tc = vb_env_int(R.env, "NCCL_IB_TC", o->tc, 0);
    R.sl = vb_env_int(R.env, "NCCL_IB_SL", o->sl, 0);
    if (R.sl > 15)
        R.sl = 0;
    int status;
    if (!vb_select_port("/", R.env, o->ib_dev, o->gid_index, &R.sel, &err))
        status = err->code == CS_ERROR_INPUT ? 2 : 1;
    else
        status = o->server ? server_side(&R, &err) : client_side(&R, &P, &err);
    if (status != 0 && err != NULL) {
        cs_scenario_error_one_line(err);
        fprintf(stderr, "%s\n", err->message);
    }
    cs_nccl_env_free(R.env);
    if (!o->server)
        plan_clear(&P);
    return status;
}
