/* A host mock of the CUDA runtime and NCCL calls nccl_runner.c makes, for
 * tests without a GPU: one "GPU" in host memory where every collective
 * copies its input to its output (exact for one rank), time advances 0.5 ms
 * per collective call or point-to-point group, and the environment steers
 * failures: MOCK_CORRUPT=K damages output element K, MOCK_HANG=1 never
 * completes a stream, MOCK_INIT_HANG=1 blocks in ncclCommInitRank.
 * ncclSend/ncclRecv really move data between the ranks (each its own
 * process): at the outermost ncclGroupEnd each send becomes a file in
 * MOCK_P2P_DIR that its receiver waits for, reads and removes (sends to
 * the rank itself stay in memory, so one rank needs no directory).
 * Included by test-real-runner.c, and built as a shared library that
 * tests/cli/real-mock.sh and real-p2p.sh preload into collsim. */
#include <glib.h>
#include <cuda_runtime.h>
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nccl.h>
#pragma GCC diagnostic pop
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* (definitions of library functions: their prototypes are the headers') */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"

static struct {
    long launches;            /* collective calls so far: the mock's clock */
    long event_at[8];
    int nevents;
    gboolean hang, async_error, aborted, destroyed;
    long corrupt_elem;        /* output element to damage, or -1 */
} m;

#define MOCK_MS_PER_CALL 0.5f

cudaError_t cudaGetDeviceCount(int *n) { *n = 1; return cudaSuccess; }
cudaError_t cudaSetDevice(int d) { (void)d; return cudaSuccess; }
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int d)
{
    (void)d;
    memset(p, 0, sizeof *p);
    g_strlcpy(p->name, "Mock GPU", sizeof p->name);
    return cudaSuccess;
}
cudaError_t cudaDeviceGetPCIBusId(char *id, int len, int d) { (void)d; g_strlcpy(id, "0000:01:00.0", len); return cudaSuccess; }
cudaError_t cudaRuntimeGetVersion(int *v) { *v = 13000; return cudaSuccess; }
cudaError_t cudaDriverGetVersion(int *v) { *v = 13000; return cudaSuccess; }
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int f) { (void)f; *s = (cudaStream_t)(void *)&m; return cudaSuccess; }
cudaError_t cudaStreamDestroy(cudaStream_t s) { (void)s; return cudaSuccess; }
cudaError_t cudaEventCreate(cudaEvent_t *e) { *e = (cudaEvent_t)(void *)&m.event_at[m.nevents++]; return cudaSuccess; }
cudaError_t cudaEventDestroy(cudaEvent_t e) { (void)e; return cudaSuccess; }
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) { (void)s; *(long *)(void *)e = m.launches; return cudaSuccess; }
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    *ms = (float)(*(long *)(void *)b - *(long *)(void *)a) * MOCK_MS_PER_CALL;
    return cudaSuccess;
}
cudaError_t cudaStreamQuery(cudaStream_t s) { (void)s; return m.hang ? cudaErrorNotReady : cudaSuccess; }
cudaError_t cudaMalloc(void **p, size_t n) { *p = g_malloc0(n); return cudaSuccess; }
cudaError_t cudaFree(void *p) { g_free(p); return cudaSuccess; }
cudaError_t cudaMemcpy(void *d, const void *s, size_t n, enum cudaMemcpyKind k) { (void)k; memmove(d, s, n); return cudaSuccess; }
cudaError_t cudaMemcpy2D(void *d, size_t dp, const void *s, size_t sp, size_t w, size_t h, enum cudaMemcpyKind k)
{
    (void)k;
    for (size_t i = 0; i < h; i++)
        memcpy((char *)d + i * dp, (const char *)s + i * sp, w);
    return cudaSuccess;
}
const char *cudaGetErrorString(cudaError_t e) { (void)e; return "mock CUDA error"; }

ncclResult_t ncclGetUniqueId(ncclUniqueId *id) { memset(id, 7, sizeof *id); return ncclSuccess; }
ncclResult_t ncclGetVersion(int *v) { *v = 22809; return ncclSuccess; }
/* Point-to-point state: not in 'm', which test-real-runner.c clears. */
typedef struct {
    gboolean send;
    char *buf;
    size_t bytes, esz;
    int peer;
} p2p_op_t;

static struct {
    int rank, nranks;
    int depth;                /* ncclGroupStart nesting */
    p2p_op_t *ops;
    size_t nops, cap;
    long seq;                 /* groups run so far: the same on every rank */
    char err[256];            /* ncclGetLastError, when the mock refused something */
} p2p = { 0, 1, 0, NULL, 0, 0, 0, "" };

const char *ncclGetErrorString(ncclResult_t r) { (void)r; return "mock NCCL error"; }
const char *ncclGetLastError(ncclComm_t c) { (void)c; return p2p.err[0] ? p2p.err : "mock last error"; }
ncclResult_t ncclCommInitRank(ncclComm_t *c, int n, ncclUniqueId id, int r)
{
    (void)id;
    p2p.rank = r;
    p2p.nranks = n;
    if (getenv("MOCK_INIT_HANG") != NULL)   /* as a peer that never joins */
        g_usleep((gulong)3600 * G_USEC_PER_SEC);
    *c = (ncclComm_t)(void *)&m;
    return ncclSuccess;
}
ncclResult_t ncclCommDestroy(ncclComm_t c) { (void)c; m.destroyed = TRUE; return ncclSuccess; }
ncclResult_t ncclCommAbort(ncclComm_t c) { (void)c; m.aborted = TRUE; return ncclSuccess; }
ncclResult_t ncclCommGetAsyncError(ncclComm_t c, ncclResult_t *e)
{
    (void)c;
    *e = m.async_error ? ncclSystemError : ncclSuccess;
    return ncclSuccess;
}
static size_t tsize(ncclDataType_t t)
{
    switch (t) {
    case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    default: return 8;
    }
}

/* ---- point-to-point ------------------------------------------------------------ */

static ncclResult_t p2p_refuse(ncclResult_t r, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static ncclResult_t p2p_refuse(ncclResult_t r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_vsnprintf(p2p.err, sizeof p2p.err, fmt, ap);
    va_end(ap);
    p2p.nops = 0;
    return r;
}

/* the file of the k-th send from 'from' to 'to' in group 'seq' */
static char *p2p_path(const char *dir, long seq, int from, int to, size_t k)
{
    return g_strdup_printf("%s/g%ld-from%d-to%d-%zu", dir, seq, from, to, k);
}

/* how many ops before ops[i] in this group go the same way with the same peer */
static size_t p2p_index(size_t i)
{
    size_t k = 0;
    for (size_t j = 0; j < i; j++)
        k += p2p.ops[j].send == p2p.ops[i].send && p2p.ops[j].peer == p2p.ops[i].peer;
    return k;
}

static ncclResult_t p2p_recv_file(const char *dir, const p2p_op_t *o, size_t k)
{
    g_autofree char *path = p2p_path(dir, p2p.seq, o->peer, p2p.rank, k);
    gint64 deadline = g_get_monotonic_time() + 120 * G_USEC_PER_SEC;
    g_autofree char *data = NULL;
    gsize len = 0;
    while (!g_file_get_contents(path, &data, &len, NULL)) {
        if (g_get_monotonic_time() > deadline)
            return p2p_refuse(ncclSystemError, "mock: rank %d: nothing from rank %d in 120 s (%s)", p2p.rank,
                              o->peer, path);
        g_usleep(200);
    }
    if (len != o->bytes)
        return p2p_refuse(ncclInvalidUsage, "mock: rank %d receives %zu bytes from rank %d, which sent %zu",
                          p2p.rank, o->bytes, o->peer, (size_t)len);
    memcpy(o->buf, data, len);
    g_unlink(path);
    return ncclSuccess;
}

/* Runs a group's sends and receives: every send's data is taken before any
 * receive writes (in-place alltoall sends and receives in one buffer). */
static ncclResult_t p2p_run(void)
{
    const char *dir = getenv("MOCK_P2P_DIR");
    g_autoptr(GPtrArray) self = g_ptr_array_new_with_free_func(g_free);   /* sends to itself, in order */
    for (size_t i = 0; i < p2p.nops; i++) {
        const p2p_op_t *o = &p2p.ops[i];
        if (!o->send)
            continue;
        if (o->peer == p2p.rank) {
            g_ptr_array_add(self, g_memdup2(o->buf, o->bytes));
            continue;
        }
        if (dir == NULL)
            return p2p_refuse(ncclInvalidUsage, "mock: MOCK_P2P_DIR is not set (sends between ranks go there)");
        g_autofree char *path = p2p_path(dir, p2p.seq, p2p.rank, o->peer, p2p_index(i));
        g_autofree char *tmp = g_strconcat(path, ".tmp", NULL);
        if (!g_file_set_contents(tmp, o->buf, (gssize)o->bytes, NULL) || g_rename(tmp, path) != 0)
            return p2p_refuse(ncclSystemError, "mock: cannot write %s", path);
    }
    char *low = NULL;
    size_t esz = 1;
    for (size_t i = 0; i < p2p.nops; i++) {
        const p2p_op_t *o = &p2p.ops[i];
        if (o->send)
            continue;
        if (low == NULL || o->buf < low) {
            low = o->buf;
            esz = o->esz;
        }
        size_t k = p2p_index(i);
        if (o->peer != p2p.rank) {
            ncclResult_t r = p2p_recv_file(dir, o, k);
            if (r != ncclSuccess)
                return r;
            continue;
        }
        if (k >= self->len)
            return p2p_refuse(ncclInvalidUsage, "mock: rank %d receives from itself with no send to match",
                              p2p.rank);
        const p2p_op_t *s = NULL;   /* the k-th send to itself: its size */
        for (size_t j = 0, n = 0; j < p2p.nops && s == NULL; j++)
            if (p2p.ops[j].send && p2p.ops[j].peer == p2p.rank && n++ == k)
                s = &p2p.ops[j];
        if (s->bytes != o->bytes)
            return p2p_refuse(ncclInvalidUsage, "mock: rank %d receives %zu bytes from itself, sent %zu", p2p.rank,
                              o->bytes, s->bytes);
        memcpy(o->buf, self->pdata[k], o->bytes);
    }
    /* MOCK_CORRUPT: element K counted from the lowest receive address */
    if (m.corrupt_elem >= 0 && low != NULL) {
        char *at = low + (size_t)m.corrupt_elem * esz;
        for (size_t i = 0; i < p2p.nops; i++)
            if (!p2p.ops[i].send && at >= p2p.ops[i].buf && at < p2p.ops[i].buf + p2p.ops[i].bytes) {
                memset(at, 0x55, esz);
                break;
            }
    }
    p2p.nops = 0;
    p2p.seq++;
    m.launches++;
    return ncclSuccess;
}

static ncclResult_t p2p_add(gboolean send, const void *buf, size_t count, ncclDataType_t t, int peer)
{
    if (peer < 0 || peer >= p2p.nranks)
        return p2p_refuse(ncclInvalidArgument, "mock: peer %d is not a rank of %d", peer, p2p.nranks);
    if (p2p.nops == p2p.cap) {
        p2p.cap = p2p.cap ? 2 * p2p.cap : 64;
        p2p.ops = g_renew(p2p_op_t, p2p.ops, p2p.cap);
    }
    p2p.ops[p2p.nops++] = (p2p_op_t){ send, (char *)(void *)(guintptr)buf, count * tsize(t), tsize(t), peer };
    return p2p.depth > 0 ? ncclSuccess : p2p_run();   /* outside a group: a group of its own */
}

ncclResult_t ncclGroupStart(void) { p2p.depth++; return ncclSuccess; }
ncclResult_t ncclGroupEnd(void)
{
    if (p2p.depth == 0)
        return p2p_refuse(ncclInvalidUsage, "mock: ncclGroupEnd without ncclGroupStart");
    if (--p2p.depth > 0 || p2p.nops == 0)
        return ncclSuccess;
    return p2p_run();
}
ncclResult_t ncclSend(const void *s, size_t c, ncclDataType_t t, int peer, ncclComm_t k, cudaStream_t st)
{ (void)k; (void)st; return p2p_add(TRUE, s, c, t, peer); }
ncclResult_t ncclRecv(void *r, size_t c, ncclDataType_t t, int peer, ncclComm_t k, cudaStream_t st)
{ (void)k; (void)st; return p2p_add(FALSE, r, c, t, peer); }

/* one rank: every collective copies its input */
/* NCCL prints, on rank 0 and with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING, one
 * line per collective (src/enqueue.cc:822, v2.28.9); the mock writes it to
 * NCCL_DEBUG_FILE with the algorithm NCCL_ALGO names (RING by default). */
static void tuning_line(const char *func, size_t bytes)
{
    const char *file = getenv("NCCL_DEBUG_FILE"), *dbg = getenv("NCCL_DEBUG");
    if (file == NULL || dbg == NULL || strcmp(dbg, "INFO") != 0)
        return;
    const char *algo = getenv("NCCL_ALGO");
    g_autofree char *up = g_ascii_strup(algo != NULL ? algo : "ring", -1);
    FILE *f = fopen(file, "a");
    if (f == NULL)
        return;
    fprintf(f, "mock:1:1 [0] NCCL INFO %s: %zu Bytes -> Algo %s proto LL channel{Lo..Hi}={0..1}\n", func, bytes, up);
    fclose(f);
}

static ncclResult_t one_rank(const void *in, void *out, size_t count, ncclDataType_t t, const char *func)
{
    tuning_line(func, count * tsize(t));
    memmove(out, in, count * tsize(t));
    if (m.corrupt_elem >= 0 && (size_t)m.corrupt_elem < count)
        memset((char *)out + m.corrupt_elem * tsize(t), 0x55, tsize(t));
    m.launches++;
    return ncclSuccess;
}
ncclResult_t ncclAllReduce(const void *s, void *r, size_t c, ncclDataType_t t, ncclRedOp_t o, ncclComm_t k, cudaStream_t st)
{ (void)o; (void)k; (void)st; return one_rank(s, r, c, t, "AllReduce"); }
ncclResult_t ncclBroadcast(const void *s, void *r, size_t c, ncclDataType_t t, int root, ncclComm_t k, cudaStream_t st)
{ (void)root; (void)k; (void)st; return one_rank(s, r, c, t, "Broadcast"); }
ncclResult_t ncclReduce(const void *s, void *r, size_t c, ncclDataType_t t, ncclRedOp_t o, int root, ncclComm_t k, cudaStream_t st)
{ (void)o; (void)root; (void)k; (void)st; return one_rank(s, r, c, t, "Reduce"); }
ncclResult_t ncclAllGather(const void *s, void *r, size_t c, ncclDataType_t t, ncclComm_t k, cudaStream_t st)
{ (void)k; (void)st; return one_rank(s, r, c, t, "AllGather"); }
ncclResult_t ncclReduceScatter(const void *s, void *r, size_t c, ncclDataType_t t, ncclRedOp_t o, ncclComm_t k, cudaStream_t st)
{ (void)o; (void)k; (void)st; return one_rank(s, r, c, t, "ReduceScatter"); }

__attribute__((constructor)) static void mock_init(void)
{
    const char *c = getenv("MOCK_CORRUPT");
    m.corrupt_elem = c != NULL ? atol(c) : -1;
    m.hang = getenv("MOCK_HANG") != NULL;
}
