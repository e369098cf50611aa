/* A host mock of the CUDA runtime and NCCL calls nccl_runner.c makes, for
 * tests without a GPU: one "GPU" in host memory where every collective
 * copies its input to its output (exact for one rank), time advances 0.5 ms
 * per collective call, and the environment steers failures:
 * MOCK_CORRUPT=K damages output element K, MOCK_HANG=1 never completes a
 * stream, MOCK_INIT_HANG=1 blocks in ncclCommInitRank. Included by test-real-runner.c, and built as a shared library that
 * tests/cli/real-mock.sh preloads into collsim. */
#include <glib.h>
#include <cuda_runtime.h>
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nccl.h>
#pragma GCC diagnostic pop
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
const char *ncclGetErrorString(ncclResult_t r) { (void)r; return "mock NCCL error"; }
const char *ncclGetLastError(ncclComm_t c) { (void)c; return "mock last error"; }
ncclResult_t ncclCommInitRank(ncclComm_t *c, int n, ncclUniqueId id, int r)
{
    (void)id;
    (void)n;
    (void)r;
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
ncclResult_t ncclGroupStart(void) { return ncclSuccess; }
ncclResult_t ncclGroupEnd(void) { return ncclSuccess; }

static size_t tsize(ncclDataType_t t)
{
    switch (t) {
    case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    default: return 8;
    }
}

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
