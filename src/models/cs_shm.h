/* NCCL's SHM transport between two GPUs of one host, as the engines price
 * it (transport/shm.cc, v2.28.9; docs/model-analytic.md "SHM").
 *
 * A step a -> b goes through a buffer in pinned host memory: the sending
 * GPU's SMs store into it over PCIe (posted writes), the receiving GPU's
 * SMs load from it (non-posted reads), or, with
 * NCCL_SHM_USE_CUDA_MEMCPY=1, the proxy thread's cudaMemcpyAsync (a copy
 * engine) does the sender's side (NCCL_SHM_MEMCPY_MODE 1), the
 * receiver's (2) or both (3), for the Simple protocol only. The buffer
 * lives in the receiver's memory (NCCL_SHM_LOCALITY=2, the default) or
 * the sender's (1), so a pair on two sockets crosses the socket link
 * (UPI, xGMI) once, and the socket holding the buffer has every byte
 * written and read once by its memory, shared by every SHM edge whose
 * buffer it holds. Pure functions: no engine state. */
#ifndef CS_SHM_H
#define CS_SHM_H

#include "models/cs_topo.h"
#include "models/cs_paths.h"
#include "models/cs_params.h"
#include "models/cs_coll.h"
#include "models/cs_nccl_env.h"
#include "models/cs_decide.h"

/* How NCCL runs one SHM connection for one protocol. */
typedef struct {
    gboolean ce_send, ce_recv; /* the proxy's cudaMemcpy does that side */
    int locality;              /* 1: buffer in the sender's memory, 2: the receiver's */
} cs_shm_mode_t;

/* shm.cc initCeOperation: useMemcpySend = USE_CUDA_MEMCPY && (MODE & 1),
 * useMemcpyRecv = USE_CUDA_MEMCPY && (MODE & 2); only Simple uses the
 * copy ("Only Simple uses cudaMemcpy" in the proxy progress functions). */
void cs_shm_mode(const cs_nccl_settings_t *s, cs_proto_t proto, cs_shm_mode_t *out);

/* The links a step a -> b crosses: up from GPU a to the CPU socket
 * holding the buffer ('nup' links), then down from it to GPU b
 * ('ndown'), and that socket. */
typedef struct {
    int nup, ndown;
    int links[2 * CS_PATH_MAX_HOPS];
    int mem_cpu;               /* CPU device whose memory holds the buffer */
    double lat;                /* seconds: the links' latencies */
} cs_shm_route_t;

/* FALSE when a GPU hangs under no CPU or no path reaches the socket. */
gboolean cs_shm_route(const cs_topo_t *t, int dev_a, int dev_b, int locality, gboolean nvb_disable,
                      cs_shm_route_t *out);

/* Efficiency of one side of an SHM edge against the links' rate: the
 * copy engine's DMA (eff.shm.ce), or the GPU's SMs, at eff.shm when that
 * GPU also moves SHM data the other way at the same time (its loads of
 * host memory wait behind its own posted writes) and eff.shm.oneway when
 * it does not. */
double cs_shm_side_eff(const cs_params_t *p, gboolean ce, gboolean twoway);

/* Payload (bytes/s) one channel's CTA receives over SHM when its GPU
 * also sends SHM data and its SMs do the loads (chan.shm.smXX: its loads
 * of host memory wait behind its own posted writes); INFINITY when the
 * proxy's cudaMemcpy does the receiver's side ('ce_recv') or the GPU
 * sends nothing ('twoway' FALSE). arch: 0 sm70, 1 sm80, 2 sm90, 3 sm100. */
double cs_shm_chan_bw(const cs_params_t *p, int arch, gboolean ce_recv, gboolean twoway);
/* Host memory bytes per payload byte of an SHM edge at the buffer's
 * socket: written once by the sender, read once by the receiver. */
#define CS_SHM_MEM_TOUCHES 2.0

/* Memory bandwidth (bytes/s) a CPU socket gives device traffic: its
 * part's DRAM peak (cs_hw.c) x eff.host.mem; INFINITY when the CPU is not
 * a catalogue part (the limit is then not applied). */
double cs_shm_host_mem_bw(const cs_topo_t *t, int cpu_dev, const cs_params_t *p);

/* Fixed cost of one step (us): lat.hop.shm, plus lat.shm.ce for each
 * side the proxy copies (it polls the step's flag, then submits the
 * copy). */
double cs_shm_step_lat_us(const cs_params_t *p, const cs_shm_mode_t *m);

/* A run note on node 0's SHM pairs, or NULL when no pair uses SHM: how
 * many, how many cross a socket link, why NCCL chose SHM where the cause
 * is a rule of its own (AMD: no P2P across SYS beyond two GPUs), and,
 * when one process drives several GPUs, where its buffers go (its
 * threads' CPU affinity decides: a process bound to one core or NUMA node
 * puts them all there). g_free it. */
char *cs_shm_note(const cs_comm_t *comm);

#endif
