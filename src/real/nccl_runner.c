/* One rank of `collsim real` on its GPU: NCCL's communicator, then for each
 * size nccl-tests's procedure (src/common.cu BenchTime, v2.19.x): a
 * synchronising call, 'iters' timed iterations of 'agg_iters' calls each
 * (grouped when > 1), out-of-place then in-place, warm-up first for every
 * power-of-two size; and a separate checked call whose output is compared
 * with the host's expectation (nccl_check.c). Time is CUDA-event time on the
 * rank's stream. Every wait polls: the stream, NCCL's asynchronous error,
 * the control connection (another rank failed) and a deadline; on any of
 * them the communicator is aborted (ncclCommAbort) and the others told.
 * AlltoAll and SendRecv are groups of ncclSend/ncclRecv as nccl-tests posts
 * them (launch_p2p); their in-place result is not checked, as there. */
#include "config.h"
#include "real/real_int.h"
#include "real/cs_real_check.h"
#include "util/cs_error.h"
#include "util/cs_read_file.h"

#include <cuda_runtime.h>
/* nccl.h (2.28.9) declares some functions with "()" */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nccl.h>
#pragma GCC diagnostic pop
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    const cs_real_rank_t *r;
    cs_boot_t *b;
    int rank, nranks;
    ncclComm_t comm;
    cudaStream_t stream;
    cudaEvent_t ev[2];
    char *sendbuf, *recvbuf;          /* device */
    void *host;                       /* host staging for fills and samples */
    size_t host_cap;
    ncclDataType_t type;
    ncclRedOp_t op;
    size_t esz;
} runner_t;

static const ncclDataType_t nccl_types[CS_DTYPE_COUNT] = {
    [CS_DTYPE_INT8] = ncclInt8, [CS_DTYPE_UINT8] = ncclUint8, [CS_DTYPE_INT32] = ncclInt32,
    [CS_DTYPE_UINT32] = ncclUint32, [CS_DTYPE_INT64] = ncclInt64, [CS_DTYPE_UINT64] = ncclUint64,
    [CS_DTYPE_HALF] = ncclFloat16, [CS_DTYPE_FLOAT] = ncclFloat32, [CS_DTYPE_DOUBLE] = ncclFloat64,
    [CS_DTYPE_BFLOAT16] = ncclBfloat16, [CS_DTYPE_FP8E4M3] = ncclFloat8e4m3, [CS_DTYPE_FP8E5M2] = ncclFloat8e5m2,
};

static const ncclRedOp_t nccl_ops[CS_REDOP_COUNT] = {
    [CS_REDOP_SUM] = ncclSum, [CS_REDOP_PROD] = ncclProd, [CS_REDOP_MIN] = ncclMin,
    [CS_REDOP_MAX] = ncclMax, [CS_REDOP_AVG] = ncclAvg,
};

int cs_real_nccl_device_count(GError **err)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n <= 0) {
        g_set_error(err, CS_ERROR, CS_ERROR_RUNTIME, "collsim: real: no CUDA GPU is usable here (cudaGetDeviceCount: "
                    "%s); expected a machine with an NVIDIA GPU and its driver",
                    e != cudaSuccess ? cudaGetErrorString(e) : "no devices");
        return -1;
    }
    return n;
}

gboolean cs_real_nccl_unique_id(void *id, size_t len, GError **err)
{
    ncclUniqueId u;
    ncclResult_t r = ncclGetUniqueId(&u);
    if (r != ncclSuccess) {
        g_set_error(err, CS_ERROR, CS_ERROR_RUNTIME, "collsim: real: rank 0: ncclGetUniqueId: %s (%s)",
                    ncclGetErrorString(r), ncclGetLastError(NULL));
        return FALSE;
    }
    g_assert(len == sizeof u);
    memcpy(id, &u, sizeof u);
    return TRUE;
}

/* ---- failures ---------------------------------------------------------------- */

/* Says why on err, tells the other ranks, aborts the communicator. */
static gboolean fail(runner_t *x, GError **err, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static gboolean fail(runner_t *x, GError **err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *why = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_autofree char *msg = g_strdup_printf("rank %d: %s", x->rank, why);
    if (x->b != NULL)
        cs_boot_abort(x->b, msg);
    if (x->comm != NULL) {
        ncclCommAbort(x->comm);
        x->comm = NULL;
    }
    g_set_error(err, CS_ERROR, CS_ERROR_RUNTIME, "collsim: real: %s", msg);
    return FALSE;
}

#define CUDA_TRY(x, err, call)                                                                     \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess)                                                                     \
            return fail((x), (err), "%.*s: %s", (int)strcspn(#call, "("), #call,                  \
                        cudaGetErrorString(e_));                                                   \
    } while (0)

static gboolean nccl_ok(runner_t *x, ncclResult_t r, const char *what, GError **err)
{
    if (r == ncclSuccess || r == ncclInProgress)
        return TRUE;
    return fail(x, err, "%s: %s (%s)", what, ncclGetErrorString(r), ncclGetLastError(x->comm));
}

/* ---- the watchdog ---------------------------------------------------------------
 * NCCL calls on a blocking communicator (ncclCommInitRank, and a collective
 * call that sets up connections or waits for room in NCCL's queue) can
 * block for ever when a peer is gone; the polling in wait_done cannot run
 * then. A thread watches a deadline set around those calls: past it, the
 * rank says which call hung, tells the others, and exits (aborting a
 * communicator from another thread in the middle of a call is not safe). */

static struct {
    GMutex lock;
    GThread *thread;
    gboolean stop;
    gint64 deadline;          /* 0: disarmed */
    double limit_s;
    char what[160];
    int rank;
    cs_boot_t *b;
} wd;

static gpointer watchdog_main(gpointer data)
{
    (void)data;
    for (;;) {
        g_usleep(100000);
        g_mutex_lock(&wd.lock);
        if (wd.stop) {
            g_mutex_unlock(&wd.lock);
            return NULL;
        }
        if (wd.deadline > 0 && g_get_monotonic_time() > wd.deadline) {
            g_autofree char *msg = g_strdup_printf("rank %d: %s did not return in %.0f s; exiting (a hang, or a "
                                                   "rank that stopped; see --timeout)", wd.rank, wd.what, wd.limit_s);
            fprintf(stderr, "collsim: real: %s\n", msg);
            if (wd.b != NULL)
                cs_boot_abort(wd.b, msg);
            fflush(NULL);
            _exit(1);
        }
        g_mutex_unlock(&wd.lock);
    }
}

static void wd_arm(const char *what, double limit_s)
{
    g_mutex_lock(&wd.lock);
    g_strlcpy(wd.what, what, sizeof wd.what);
    wd.limit_s = limit_s;
    wd.deadline = g_get_monotonic_time() + (gint64)(limit_s * G_USEC_PER_SEC);
    g_mutex_unlock(&wd.lock);
}

static void wd_disarm(void)
{
    g_mutex_lock(&wd.lock);
    wd.deadline = 0;
    g_mutex_unlock(&wd.lock);
}

static void wd_start(runner_t *x)
{
    wd.rank = x->rank;
    wd.b = x->b;
    wd.stop = FALSE;
    wd.deadline = 0;
    wd.thread = g_thread_new("collsim-watchdog", watchdog_main, NULL);
}

static void wd_stop(void)
{
    g_mutex_lock(&wd.lock);
    wd.stop = TRUE;
    g_mutex_unlock(&wd.lock);
    g_thread_join(wd.thread);
    wd.thread = NULL;
}

/* ---- buffers ------------------------------------------------------------------ */

static cs_check_spec_t spec_of(const runner_t *x, guint64 count)
{
    const cs_scenario_t *s = x->r->s;
    cs_check_spec_t c = { s->coll, s->dtype, s->redop, x->nranks, s->root, count };
    return c;
}

/* Where this rank's input and result live (in-place: inside one buffer,
 * at the rank's slot for all-gather and reduce-scatter, as nccl-tests;
 * alltoall and sendrecv in-place send from the receive buffer's start). */
static char *input_ptr(const runner_t *x, guint64 count, int in_place)
{
    cs_coll_t c = x->r->s->coll;
    if (!in_place || c == CS_COLL_REDUCESCATTER)
        return x->sendbuf;
    if (c == CS_COLL_ALLGATHER)
        return x->recvbuf + (size_t)x->rank * count * x->esz;
    return x->recvbuf;
}

static char *result_ptr(const runner_t *x, guint64 count, int in_place)
{
    if (in_place && x->r->s->coll == CS_COLL_REDUCESCATTER)
        return x->sendbuf + (size_t)x->rank * count * x->esz;
    return x->recvbuf;
}

static gboolean nccl_going(ncclResult_t r)
{
    return r == ncclSuccess || r == ncclInProgress;
}

/* nccl-tests's point-to-point tests (v2.19.6), one group each:
 * alltoall.cu: for every peer q (itself included) a send of the count
 * elements at in + q*count and a receive of count elements into out +
 * q*count; sendrecv.cu: a send of count to rank+1 and a receive of count
 * from rank-1. (alltoall.cu calls ncclAlltoAll instead on NCCL >= 2.28, which
 * queues the same sends and receives: NCCL 2.28 enqueue.cc taskAppend.)
 * The group is closed even after a failed call, so that NCCL drops it. */
static ncclResult_t launch_p2p(runner_t *x, const char *in, char *out, guint64 count)
{
    size_t block = (size_t)count * x->esz;
    ncclResult_t r = ncclGroupStart();
    if (!nccl_going(r))
        return r;
    if (x->r->s->coll == CS_COLL_ALLTOALL) {
        for (int q = 0; q < x->nranks && nccl_going(r); q++) {
            r = ncclSend(in + (size_t)q * block, count, x->type, q, x->comm, x->stream);
            if (nccl_going(r))
                r = ncclRecv(out + (size_t)q * block, count, x->type, q, x->comm, x->stream);
        }
    } else {
        r = ncclSend(in, count, x->type, (x->rank + 1) % x->nranks, x->comm, x->stream);
        if (nccl_going(r))
            r = ncclRecv(out, count, x->type, (x->rank - 1 + x->nranks) % x->nranks, x->comm, x->stream);
    }
    ncclResult_t end = ncclGroupEnd();
    return nccl_going(r) ? end : r;
}

static ncclResult_t launch(runner_t *x, guint64 count, int in_place)
{
    const cs_scenario_t *s = x->r->s;
    char *in = input_ptr(x, count, in_place), *out = result_ptr(x, count, in_place);
    switch (s->coll) {
    case CS_COLL_ALLTOALL:
    case CS_COLL_SENDRECV:      return launch_p2p(x, in, out, count);
    case CS_COLL_ALLREDUCE:     return ncclAllReduce(in, out, count, x->type, x->op, x->comm, x->stream);
    case CS_COLL_BROADCAST:     return ncclBroadcast(in, out, count, x->type, s->root, x->comm, x->stream);
    case CS_COLL_REDUCE:        return ncclReduce(in, out, count, x->type, x->op, s->root, x->comm, x->stream);
    case CS_COLL_ALLGATHER:     return ncclAllGather(in, out, count, x->type, x->comm, x->stream);
    case CS_COLL_REDUCESCATTER: return ncclReduceScatter(in, out, count, x->type, x->op, x->comm, x->stream);
    default:                    return ncclInvalidArgument;
    }
}

static gboolean host_reserve(runner_t *x, size_t bytes)
{
    if (bytes <= x->host_cap)
        return TRUE;
    g_free(x->host);
    x->host = g_try_malloc(bytes);
    x->host_cap = x->host != NULL ? bytes : 0;
    return x->host != NULL;
}

static gboolean fill_input(runner_t *x, guint64 count, int in_place, GError **err)
{
    cs_check_spec_t c = spec_of(x, count);
    size_t bytes = cs_check_send_count(&c) * x->esz;
    if (bytes == 0)
        return TRUE;
    if (!host_reserve(x, bytes))
        return fail(x, err, "cannot allocate %zu bytes of host memory for the input", bytes);
    cs_check_fill_send(&c, x->rank, x->host);
    CUDA_TRY(x, err, cudaMemcpy(input_ptr(x, count, in_place), x->host, bytes, cudaMemcpyHostToDevice));
    return TRUE;
}

/* ---- waiting ------------------------------------------------------------------- */

static const char *placement(int in_place)
{
    return in_place ? "in-place" : "out-of-place";
}

static gboolean wait_done(runner_t *x, guint64 size, int in_place, double limit_s, GError **err)
{
    gint64 deadline = g_get_monotonic_time() + (gint64)(limit_s * G_USEC_PER_SEC);
    for (;;) {
        cudaError_t ce = cudaStreamQuery(x->stream);
        if (ce == cudaSuccess)
            return TRUE;
        if (ce != cudaErrorNotReady)
            return fail(x, err, "%s of %" G_GUINT64_FORMAT " bytes (%s): CUDA error: %s",
                        cs_coll_name(x->r->s->coll), size, placement(in_place), cudaGetErrorString(ce));
        ncclResult_t ae = ncclSuccess;
        ncclCommGetAsyncError(x->comm, &ae);
        if (ae != ncclSuccess && ae != ncclInProgress)
            return fail(x, err, "%s of %" G_GUINT64_FORMAT " bytes (%s): NCCL error: %s (%s)",
                        cs_coll_name(x->r->s->coll), size, placement(in_place), ncclGetErrorString(ae),
                        ncclGetLastError(x->comm));
        char *why = NULL;
        if (cs_boot_peer_failed(x->b, &why)) {
            /* no abort message back: the others know already */
            cs_boot_t *b = x->b;
            x->b = NULL;
            gboolean r = fail(x, err, "stopping %s of %" G_GUINT64_FORMAT " bytes (%s): %s",
                              cs_coll_name(x->r->s->coll), size, placement(in_place), why);
            if (err != NULL && *err != NULL)
                (*err)->code = CS_ERROR_STOPPED;
            x->b = b;
            g_free(why);
            return r;
        }
        if (g_get_monotonic_time() > deadline)
            return fail(x, err, "%s of %" G_GUINT64_FORMAT " bytes (%s) did not finish in %.0f s; aborting NCCL "
                        "(a hang, or a rank that stopped; see --timeout)", cs_coll_name(x->r->s->coll), size,
                        placement(in_place), limit_s);
        g_usleep(50);
    }
}

/* --timeout, plus time for the bytes themselves at a pessimistic 1 GB/s. */
static double limit_for(const runner_t *x, guint64 size, int calls)
{
    return x->r->timeout_s + (double)calls * (double)size / 1e9;
}

/* ---- one size ---------------------------------------------------------------- */

static gboolean bench(runner_t *x, guint64 size, int in_place, cs_real_cell_t *cell, GError **err)
{
    const cs_scenario_t *s = x->r->s;
    guint64 count = cs_coll_count(s->coll, size, s->dtype, x->nranks);
    int calls = s->iters * s->agg_iters;
    if (!fill_input(x, count, in_place, err))
        return FALSE;
    g_autofree char *what = g_strdup_printf("the %s call of %" G_GUINT64_FORMAT " bytes (%s)",
                                            cs_coll_name(s->coll), size, placement(in_place));
    /* synchronising call, as nccl-tests */
    wd_arm(what, limit_for(x, size, 1));
    ncclResult_t sync_r = launch(x, count, in_place);
    wd_disarm();
    if (!nccl_ok(x, sync_r, what, err))
        return FALSE;
    if (!wait_done(x, size, in_place, limit_for(x, size, 1), err))
        return FALSE;
    CUDA_TRY(x, err, cudaEventRecord(x->ev[0], x->stream));
    /* (the queue may fill: enqueueing can take as long as the calls) */
    wd_arm(what, limit_for(x, size, calls));
    ncclResult_t nr = ncclSuccess;
    for (int it = 0; it < s->iters && (nr == ncclSuccess || nr == ncclInProgress); it++) {
        if (s->agg_iters > 1)
            nr = ncclGroupStart();
        for (int a = 0; a < s->agg_iters && (nr == ncclSuccess || nr == ncclInProgress); a++)
            nr = launch(x, count, in_place);
        if (s->agg_iters > 1 && (nr == ncclSuccess || nr == ncclInProgress))
            nr = ncclGroupEnd();
    }
    wd_disarm();
    if (!nccl_ok(x, nr, what, err))
        return FALSE;
    CUDA_TRY(x, err, cudaEventRecord(x->ev[1], x->stream));
    if (!wait_done(x, size, in_place, limit_for(x, size, calls), err))
        return FALSE;
    float ms = 0;
    CUDA_TRY(x, err, cudaEventElapsedTime(&ms, x->ev[0], x->ev[1]));
    cell->time_us[in_place] = calls > 0 ? (double)ms * 1000.0 / calls : -1;

    cell->wrong[in_place] = -1;
    if (!s->check || (in_place && !cs_check_in_place_checked(s->coll)))
        return TRUE;
    /* the check: fresh input, one call, then the output against the host */
    if (!fill_input(x, count, in_place, err))
        return FALSE;
    wd_arm(what, limit_for(x, size, 1));
    ncclResult_t check_r = launch(x, count, in_place);
    wd_disarm();
    if (!nccl_ok(x, check_r, what, err))
        return FALSE;
    if (!wait_done(x, size, in_place, limit_for(x, size, 1), err))
        return FALSE;
    cs_check_spec_t c = spec_of(x, count);
    guint64 stride, n;
    guint64 rc = cs_check_recv_count(&c);
    cs_check_sample(rc, x->r->check_max > 0 ? x->r->check_max : rc, &stride, &n);
    cell->wrong[in_place] = 0;
    if (n == 0 || !cs_check_rank_has_result(&c, x->rank))
        return TRUE;
    if (!host_reserve(x, n * x->esz))
        return fail(x, err, "cannot allocate %" G_GUINT64_FORMAT " bytes of host memory for the check", n * x->esz);
    /* a strided copy brings only the checked elements over */
    CUDA_TRY(x, err, cudaMemcpy2D(x->host, x->esz, result_ptr(x, count, in_place), stride * x->esz, x->esz, n,
                                  cudaMemcpyDeviceToHost));
    cell->wrong[in_place] = cs_check_count_wrong(&c, x->rank, x->host, stride, n);
    return TRUE;
}

/* NCCL's choice for this size, from rank 0's log (line buffered by NCCL,
 * debug.cc, so complete once the calls returned). */
static void read_tuning(runner_t *x, guint64 size, cs_real_cell_t *cell)
{
    const cs_scenario_t *s = x->r->s;
    g_autofree char *log = NULL;
    gsize len = 0;
    if (x->r->tuning_log == NULL ||
        !cs_read_file(x->r->tuning_log, "file", "NCCL debug log", CS_READ_LIMIT_LOG, &log, &len, NULL))
        return;
    guint64 count = cs_coll_count(s->coll, size, s->dtype, x->nranks);
    cs_tuning_line_t t;
    if (cs_tuning_find(log, s->coll, count * x->esz, &t)) {
        g_strlcpy(cell->algo, t.algo, sizeof cell->algo);
        g_strlcpy(cell->proto, t.proto, sizeof cell->proto);
        cell->nchannels = t.nchannels;
    }
}

/* ---- the sweep ---------------------------------------------------------------- */

static gboolean setup(runner_t *x, const void *id, cs_real_dev_t *dev, GError **err)
{
    const cs_real_rank_t *r = x->r;
    int ndev = 0;
    CUDA_TRY(x, err, cudaGetDeviceCount(&ndev));
    if (ndev <= 0)
        return fail(x, err, "no CUDA GPU is visible (CUDA_VISIBLE_DEVICES?)");
    dev->dev = r->job->local_rank % ndev;
    CUDA_TRY(x, err, cudaSetDevice(dev->dev));
    struct cudaDeviceProp prop;
    CUDA_TRY(x, err, cudaGetDeviceProperties(&prop, dev->dev));
    g_strlcpy(dev->name, prop.name, sizeof dev->name);
    CUDA_TRY(x, err, cudaDeviceGetPCIBusId(dev->busid, sizeof dev->busid, dev->dev));
    int v = 0;
    ncclGetVersion(&v);
    dev->nccl_version = v;
    cudaRuntimeGetVersion(&v);
    dev->cuda_runtime = v;
    cudaDriverGetVersion(&v);
    dev->cuda_driver = v;
    CUDA_TRY(x, err, cudaStreamCreateWithFlags(&x->stream, cudaStreamNonBlocking));
    CUDA_TRY(x, err, cudaEventCreate(&x->ev[0]));
    CUDA_TRY(x, err, cudaEventCreate(&x->ev[1]));

    /* buffers for the largest size */
    size_t send_max = 0, recv_max = 0;
    for (int i = 0; i < r->nsizes; i++) {
        cs_check_spec_t c = spec_of(x, cs_coll_count(r->s->coll, r->sizes[i], r->s->dtype, x->nranks));
        send_max = MAX(send_max, cs_check_send_count(&c) * x->esz);
        recv_max = MAX(recv_max, cs_check_recv_count(&c) * x->esz);
    }
    CUDA_TRY(x, err, cudaMalloc((void **)&x->sendbuf, MAX(send_max, 16)));
    CUDA_TRY(x, err, cudaMalloc((void **)&x->recvbuf, MAX(recv_max, 16)));

    ncclUniqueId uid;
    memcpy(&uid, id, sizeof uid);
    g_autofree char *what = g_strdup_printf("ncclCommInitRank (%d ranks)", x->nranks);
    wd_arm(what, r->timeout_s);
    ncclResult_t nr = ncclCommInitRank(&x->comm, x->nranks, uid, x->rank);
    wd_disarm();
    if (nr != ncclSuccess) {
        x->comm = NULL;
        return fail(x, err, "ncclCommInitRank (%d ranks): %s (%s)", x->nranks, ncclGetErrorString(nr),
                    ncclGetLastError(NULL));
    }
    return TRUE;
}

gboolean cs_real_nccl_measure(const cs_real_rank_t *r, cs_boot_t *b, const void *id, cs_real_dev_t *dev,
                              cs_real_cell_t *cells, GError **err)
{
    runner_t x;
    memset(&x, 0, sizeof x);
    x.r = r;
    x.b = b;
    x.rank = r->job->rank;
    x.nranks = r->job->nranks;
    x.type = nccl_types[r->s->dtype];
    x.op = nccl_ops[r->s->redop];
    x.esz = cs_dtype_size(r->s->dtype);
    wd_start(&x);
    gboolean ok = setup(&x, id, dev, err);

    /* warm-up, as nccl-tests: every power-of-two size from -b to -e */
    for (guint64 size = r->s->minbytes; ok && size <= r->s->maxbytes; size = size > 0 ? size * 2 : 1) {
        guint64 count = cs_coll_count(r->s->coll, size, r->s->dtype, x.nranks);
        for (int i = 0; ok && i < r->s->warmup; i++) {
            wd_arm("a warm-up call", limit_for(&x, size, r->s->warmup));
            ncclResult_t nr = launch(&x, count, 0);
            wd_disarm();
            if (nr != ncclSuccess && nr != ncclInProgress)
                ok = fail(&x, err, "warm-up %s of %" G_GUINT64_FORMAT " bytes: %s (%s)", cs_coll_name(r->s->coll),
                          size, ncclGetErrorString(nr), ncclGetLastError(x.comm));
        }
        ok = ok && wait_done(&x, size, 0, limit_for(&x, size, r->s->warmup), err);
    }
    for (int i = 0; ok && i < r->nsizes; i++) {
        cells[i].time_us[0] = cells[i].time_us[1] = -1;
        ok = bench(&x, r->sizes[i], 0, &cells[i], err) && bench(&x, r->sizes[i], 1, &cells[i], err);
        if (ok)
            read_tuning(&x, r->sizes[i], &cells[i]);
    }
    wd_stop();
    if (x.comm != NULL)
        ncclCommDestroy(x.comm);   /* (failures aborted it already) */
    if (x.sendbuf != NULL)
        cudaFree(x.sendbuf);
    if (x.recvbuf != NULL)
        cudaFree(x.recvbuf);
    if (x.ev[0] != NULL)
        cudaEventDestroy(x.ev[0]);
    if (x.ev[1] != NULL)
        cudaEventDestroy(x.ev[1]);
    if (x.stream != NULL)
        cudaStreamDestroy(x.stream);
    g_free(x.host);
    return ok;
}
