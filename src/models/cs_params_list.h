/* The parameters of the hardware time models, one CS_PARAM line each:
 * CS_PARAM(id, "name", default, "unit", "what it is"). Included by
 * cs_params.h, which expands the list into the parameter enum; cs_params.c
 * expands it into the tables of names, defaults, units and docs.
 *
 * Units are the ones a calibration file uses: "us" (microseconds), "GB/s"
 * (1e9 bytes per second), "fraction" (0 < v <= 1), "stages" (>= 0).
 * Every default carries its source in the comment above it: a vendor
 * document, the NCCL source (v2.28.9), or "fitted to ../shared/data/real
 * FILES" (file names abbreviated with *; the method is in
 * docs/model-analytic.md section 4). Fitted values serve every file and
 * every machine alike; nothing in the models branches on a file or machine
 * name. The formulas that use them are in docs/model-analytic.md.
 *
 * Architecture groups (suffixes): sm70 = Volta/Turing (sm < 80), sm80 =
 * Ampere/Ada (80..89), sm90 = Hopper, sm100 = Blackwell (>= 100), as
 * NCCL's tuning tables group them (tuning.cc: cc >= 100 -> 3, >= 90 -> 2,
 * >= 80 -> 1, else 0). */
#ifndef CS_PARAMS_LIST_H
#define CS_PARAMS_LIST_H

#define CS_PARAM_LIST                                                         \
    /* ---- latency ------------------------------------------------------ */ \
    /* Fitted to h100x8-2nodes-ib-8xndr400-allreduce-nvlstree-*,              \
     * h100x8-4nodes-ib-8xndr400-* and pciegpu5kpro-x8-2nodes-* (times <=     \
     * 64 KiB, one process per GPU): least-squares-like joint fit of the      \
     * median errors over the healthy files (docs/model-analytic.md section   \
     * 4). */                                                                 \
    CS_PARAM(LAT_LAUNCH, "lat.launch", 6.0, "us",                             \
             "kernel launch plus completion of one collective call, one process per GPU") \
    /* The host side of a call, per communicator a thread drives: nccl-tests  \
     * startColl calls the collective for each of its -g GPUs inside one      \
     * ncclGroupStart/End, and NCCL's group launch (group.cc doLaunches)      \
     * runs each communicator's ncclLaunchPrepare, cuLaunchKernelEx and       \
     * ncclLaunchFinish (enqueue.cc: stream waits and event records) one      \
     * after the other on that thread. nccl-tests' timed loop issues every    \
     * iteration before it waits (common.cu BenchTime), so a thread that      \
     * drives G GPUs starts a call at most every G x this: the call takes the \
     * longer of that and its GPU time. Fitted to the flat small-size times   \
     * of the single-process -g 8 files a100x8-nvswitch-allreduce-1node-*     \
     * (34-36 us, 8 B-64 KiB), a100sxm4-40gb-x8-nvswitch-1node-azure-* and    \
     * h100x8-nvswitch-1node-k8s-g8-* (~35 us to 256 KiB): 35 / 8; the -g 12  \
     * DGX-2 file (v100sxm3x12-*, 58-61 us) gives 4.9. */                     \
    CS_PARAM(LAT_LAUNCH_CPU, "lat.launch.cpu", 4.4, "us",                      \
             "host time one thread spends issuing one GPU's part of a call (nccl-tests -g G: G of them per call, serially)") \
    /* A call with network proxy operations also posts them from the          \
     * launching thread (enqueue.cc hostStreamPlanTask: uploadProxyOps,       \
     * ncclProxyStart), per communicator. The 2-node -g 4 and -g 8 tables of  \
     * two clusters differ: h100x8-2nodes-lambda1cc-* 32-33 and 60-62 us      \
     * (8.1 and 7.6 us per GPU of the thread), h100x8-2nodes-mghpcc-* 22-25   \
     * and 39-40 us (5.9 and 4.9; its small sizes are healthy, its mid sizes  \
     * labelled PATHOLOGICAL); set to their geometric middle, 6.1 us per GPU, \
     * 1.7 above lat.launch.cpu (each within 25%). */                        \
    /* NCCL up to 2.21 builds and uploads a call's work channel by channel \
     * (enqueue.cc v2.19.3 addCollToPlan: appendWorkElemColl per channel;    \
     * uploadWork: a 512-byte struct ncclWork per channel copied into the    \
     * work FIFO); 2.22 on write one ncclDevWorkColl for the call's channel  \
     * range (enqueue.cc v2.22.3 channelLo/channelHi). The -g 8 NCCL 2.19.3  \
     * file a100x8-nvswitch-allreduce-1node-* steps with the channel count   \
     * NCCL gives LL at 64 KiB-1 MiB: 37.5, 40.3, 46.4, 56.3, 67.3 us at 2,  \
     * 4, 8, 16 and 24 channels, from 35-37 at one (so do the unversioned    \
     * ndv4 -g 8 tables: 36.5, 40.5, 46.5, 58.5, 72-76): 1.4-1.6 us per      \
     * channel at -g 8, 0.2 per GPU. The 2.29.3 B200 -g 8 file runs 32       \
     * channels at 1 MiB in 34 us, 4.2 per GPU: no such step. */             \
    CS_PARAM(LAT_LAUNCH_CPU_CHAN, "lat.launch.cpu.chan", 0.2, "us",            \
             "extra host time per GPU of a thread for each channel beyond the first, NCCL <= 2.21 (work built and uploaded per channel)") \
    CS_PARAM(LAT_LAUNCH_CPU_NET, "lat.launch.cpu.net", 1.7, "us",              \
             "extra host time per GPU of a thread when the call crosses the network (posting its proxy operations)") \
    /* Point-to-point calls are planned peer by peer on the launching thread \
     * (enqueue.cc scheduleP2pTasksToPlan: addP2pToPlan once per round of    \
     * comm->p2pSchedule with a send or a receive; p2pTaskAppend per send    \
     * and receive; AlltoAll has every rank, itself included, SendRecv one), \
     * and every NCCL API call nccl-tests makes beyond a collective's one     \
     * costs the thread another ncclEnqueueCheck (argument and comm checks,  \
     * group nesting): SendRecv calls ncclSend and ncclRecv (1 more);        \
     * AlltoAll ncclSend and ncclRecv for every peer (2n - 1 more), except   \
     * where nccl-tests >= 2.17.0 is built on NCCL >= 2.28, which calls      \
     * ncclAlltoAll once (nccl-tests v2.17.0..v2.18.3 src/alltoall.cu        \
     * AlltoAllRunColl; NCCL v2.29.3 enqueue.cc taskAppend appends the same  \
     * per-peer tasks). The two are fitted together: the -g 8 alltoall_perf  \
     * table of a100sxm4-40gb-x8-nvswitch-1node-azure-* (NCCL <= 2.12: 2n    \
     * calls; 86-89 us flat to 128 KiB, 86.4 / 8 - 4.4 = 6.4 us = 8 rounds + \
     * 15 calls) and, in b200x8-nvswitch-1node-g2-g4-g8-sweep-* (nccl-tests  \
     * 2.18.3, NCCL 2.29.3: one call), alltoall over sendrecv at -g 8, 1 MiB \
     * (42.73 - 30.27) / 8 = 1.56 us = 7 rounds - 1 call: 0.26 and 0.29. */  \
    CS_PARAM(LAT_LAUNCH_CPU_P2P, "lat.launch.cpu.p2p", 0.26, "us",             \
             "extra host time per GPU of a thread for each peer round of a point-to-point call (AlltoAll: every rank)") \
    CS_PARAM(LAT_LAUNCH_CPU_API, "lat.launch.cpu.api", 0.29, "us",             \
             "extra host time per GPU of a thread for each NCCL call nccl-tests makes beyond one (SendRecv: 1; AlltoAll: 2n - 1, or 0 with ncclAlltoAll)") \
    /* Fitted to a100x8-nvswitch-allreduce-1node-* and                        \
     * h100x8-2nodes-ib-8xndr400-allreduce-nvlstree-* (LL times); NCCL's      \
     * own estimate of the same step is hwLat[NVLINK][Ring][LL] = 0.6 us      \
     * (tuning.cc). */                                                        \
    CS_PARAM(LAT_HOP_NVLINK, "lat.hop.nvlink", 1.0, "us",                     \
             "fixed cost of one step between two GPUs over NVLink (store, flag, poll), beyond the topology's link latency") \
    /* p2pBandwidthLatencyTest in the header of rtx5090x8-pcie5-2socket-*     \
     * measures a P2P write latency of 0.35-0.45 us; fitted to that file's    \
     * LL times: 0.35. */                                                     \
    CS_PARAM(LAT_HOP_PCIE, "lat.hop.pcie", 0.35, "us",                        \
             "fixed cost of one step between two GPUs by PCIe peer-to-peer")  \
    /* Fitted to rtx2080tix2-pcie-noP2P-shm-* (times <= 64 KiB of             \
     * all-reduce, all-gather, broadcast, reduce). */                         \
    CS_PARAM(LAT_HOP_SHM, "lat.hop.shm", 1.9, "us",                           \
             "fixed cost of one step through host shared memory (write to host, poll, read back)") \
    /* The proxy thread sees the GPU's flag, posts the RDMA write; the        \
     * peer's proxy sees the completion and raises the receiver's flag.       \
     * Fitted to h100x8-2nodes-ib-8xndr400-allreduce-nvlstree-*,              \
     * h100x8-4nodes-ib-8xndr400-* and pciegpu5kpro-x8-2nodes-* (times <=     \
     * 64 KiB); NCCL's own estimate is hwLat[NET][Tree][LL] = 5 us            \
     * (tuning.cc). */                                                        \
    CS_PARAM(LAT_HOP_NET, "lat.hop.net", 6.3, "us",                           \
             "fixed cost of one step over the network with RDMA (proxy progress, post, completion), beyond the fabric's wire and switch latency") \
    /* One small TCP message through the kernel stacks of both hosts:         \
     * typical 10-25 us half round trip on 10-100 GbE. Not fitted: no         \
     * small-size socket data in ../shared/data/real. */                      \
    CS_PARAM(LAT_HOP_SOCKET, "lat.hop.socket", 20.0, "us",                    \
             "fixed cost of one step over NET/Socket (TCP stack on both hosts)") \
    /* LL carries its flag inside every 16-byte line (device.h                \
     * ncclLLFifoLine: data1, flag1, data2, flag2): no separate               \
     * synchronisation. */                                                    \
    CS_PARAM(LAT_SYNC_LL, "lat.sync.ll", 0.0, "us",                           \
             "extra per-step synchronisation cost of the LL protocol")        \
    /* A flag word per 128-byte line, written with warp-level ordering.       \
     * Fitted to a100x8-nvswitch-allreduce-1node-*,                           \
     * h100x8-2nodes-ib-8xndr400-allreduce-nvlstree-* and                     \
     * h100x8-4nodes-ib-8xndr400-* (LL128 sizes); NCCL's estimate             \
     * hwLat[NVLINK][Ring] LL128 - LL is 1.3 us. */                           \
    CS_PARAM(LAT_SYNC_LL128, "lat.sync.ll128", 2.3, "us",                     \
             "extra per-step synchronisation cost of the LL128 protocol")     \
    /* Data stores, a memory fence, then a flag store the peer polls.         \
     * Fitted to rtx5090x8-pcie5-2socket-*, rtx2080tix2-pcie-noP2P-shm-*      \
     * and h100x8-4nodes-ib-8xndr400-* (Simple sizes 1-64 MiB). A point-to-   \
     * point part pays it on every step too, its warps waiting it out         \
     * (cs_engine_p2p_step_sync_s): 2 x RTX PRO 6000 over PCIe, 128 KiB       \
     * steps, measure 18.2 GB/s a channel each way against 22 for the CTA's   \
     * copies alone, 1.2 us a step (rtxpro6000bw-x2-*, sendrecv). */          \
    CS_PARAM(LAT_SYNC_SIMPLE, "lat.sync.simple", 1.1, "us",                   \
             "extra per-step synchronisation cost of the Simple protocol")    \
    /* The system-scope fence before a step's flag waits for every store      \
     * still in flight through the NVSwitch fabric (and with P2P read,        \
     * sm80, the receiver's reads add a round trip). Fitted to                \
     * a100x8-nvswitch-allreduce-1node-* and b200x8-1node-vs-4nodes32gpu-*    \
     * (table 1, 1 node) (Simple ring times 16-256 MiB) against               \
     * rtx5090x8-pcie5-2socket-* (PCIe). */                                   \
    CS_PARAM(LAT_SYNC_SIMPLE_NVLINK, "lat.sync.simple.nvlink", 4.0, "us",     \
             "extra per-step cost of the Simple protocol between GPUs over NVLink") \
    /* Simple hands a whole slice to the proxy before it is posted, and       \
     * with GPUDirect the receiver flushes (a 1-byte RDMA read) before        \
     * using the data (NCCL adds its latencyInter again for Simple,           \
     * tuning.cc). Fitted to h100x8-4nodes-ib-8xndr400-* and                  \
     * h100x8-8nodes-ib-ndr400-* (table 2) (1-64 MiB times). */               \
    CS_PARAM(LAT_NET_SIMPLE, "lat.net.simple", 8.0, "us",                     \
             "extra per network step for the Simple protocol (slice handoff, GDR flush)") \
    /* Fitted to h200x8-nvswitch-nvls-forced-* (1 KiB - 64 KiB, NVLS          \
     * forced) and h100x8-2nodes-ib-8xndr400-allreduce-nvlstree-*. */         \
    CS_PARAM(LAT_NVLS, "lat.nvls", 2.2, "us",                                 \
             "one NVLS reduce-and-multicast round through the NVSwitch")      \
    /* NCCL's own latency of the network round of a CollNet call (proxy,     \
     * SHARP plugin, the switches' aggregation): tuning.cc                    \
     * ncclTunerConstantsDefaults hwLatencies[NET][CollNetDirect/Chain]       \
     * [Simple] = 31 / 30 us. The wire and switch hops of the SHARP tree     \
     * come on top from the topology (docs/model-analytic.md). */             \
    CS_PARAM(LAT_COLLNET_DIRECT, "lat.collnet.direct", 31.0, "us",            \
             "one CollNetDirect network round through the SHARP plugin and switches, beyond the wires") \
    CS_PARAM(LAT_COLLNET_CHAIN, "lat.collnet.chain", 30.0, "us",              \
             "one CollNetChain network round through the SHARP plugin and switches, beyond the wires") \
    /* ---- link and transport efficiencies ------------------------------ */ \
    /* Large-message single-node rings: a100x8-2nodes-roce-16x100g-oci-*      \
     * (RUN 3) 232 GB/s over 12 x 25 GB/s NVLink3 (0.77);                     \
     * b200x8-1node-vs-4nodes32gpu-* (table 1, 1 node) 740 GB/s over 18 x     \
     * 50 GB/s (0.82); the header of                                          \
     * h100x8-2nodes-ib-8xndr400-allreduce-nvlstree-* 368.76 GB/s with NVLS   \
     * off over 18 x 25 GB/s (0.82). 0.78 is the joint fit with the           \
     * mid-size files. */                                                     \
    CS_PARAM(EFF_NVLINK, "eff.nvlink", 0.78, "fraction",                      \
             "payload fraction of NVLink bandwidth a ring of channels achieves (NVLink3 and NVLink5: A100, B200, GB200/GB300, and any GPU without its own figure)") \
    /* NVLink2 (V100, RTX 2080 Ti): the DGX-1 pairs over one and two     \
     * direct links (v100sxm2-32gb-dgx1-*, all-reduce at 32 MiB) 0.87 and    \
     * 0.85 of the datasheet's 25 GB/s a link, the DGX-2's NVSwitch ring     \
     * 0.82 (123 GB/s on 6 x 25, not in the manifest), an RTX 2080 Ti        \
     * NVLink-bridge pair 0.79-0.86 at 8-128 MiB: 0.85. The generations      \
     * differ by more than the spread within one: NVLink3 rings 0.77-0.78    \
     * (A100: OCI's 232 GB/s, Azure's 231-235), NVLink4 0.815. */            \
    CS_PARAM(EFF_NVLINK_SM70, "eff.nvlink.sm70", 0.85, "fraction",            \
             "as eff.nvlink for NVLink2 (sm70, sm75)")                       \
    /* NVLink4 (H100, H200, H800): large-message busbw over 18 x 25 GB/s     \
     * of three machines: H100 sendrecv 367.3 (h100x8-nvswitch-1node-srun-*, \
     * 16 GiB), H200 sendrecv, reduce, broadcast 366.6, 367.3, 365.2         \
     * (h200x8-nvswitch-1node-g8-*, 16 GiB), the NVLS-off ring of            \
     * h100x8-2nodes-ib-8xndr400-allreduce-nvlstree-* 368.8: 0.815-0.82. */  \
    CS_PARAM(EFF_NVLINK_SM90, "eff.nvlink.sm90", 0.815, "fraction",           \
             "as eff.nvlink for NVLink4 (sm90)")                             \
    /* All-to-all through NVSwitch against one peer per GPU at the largest  \
     * size, the same machine and run: Azure ND A100 v4 alltoall 224.3 vs   \
     * all-reduce 235.3 GB/s busbw at 8 GiB (0.953), H100 (srun, 2.29.2)    \
     * 348.0 vs sendrecv 367.3 at 16 GiB (0.948), H200 348.0 vs 366.6       \
     * (0.949); B200 647.7 vs 695.0 (0.93), where the model's B200 all-to-all \
     * is bound by its CTAs' copies first. No vendor figure found; the likely \
     * cause is the switch's output arbitration when every port receives    \
     * from several inputs at once. */                                       \
    CS_PARAM(EFF_NVSWITCH_FANOUT, "eff.nvswitch.fanout", 0.95, "fraction",    \
             "share of its NVLink rate a GPU keeps when its traffic through NVSwitch goes to several peers at once (all-to-all) instead of one") \
    /* One GPU's peer-to-peer stream over PCIe Gen5 x16 (63 GB/s after      \
     * 128b/130b coding): the 2-GPU broadcast and reduce of                   \
     * rtxpro6000bw-x2-* (one-way, no reduction in the way: 44.2-44.6 GB/s,   \
     * 0.70-0.71); rtx5090x8-pcie5-2socket-* rings then come out 2-4% fast    \
     * (45.7 GB/s measured, where 0.745 was fitted on them alone). */         \
    CS_PARAM(EFF_PCIE, "eff.pcie", 0.71, "fraction",                          \
             "payload fraction of PCIe bandwidth achieved by GPU peer-to-peer stores") \
    /* 256-byte TLP payloads with about 24 bytes of header, sequence number   \
     * and CRC each (PCIe base specification framing): 256/280 = 0.91.        \
     * GPUDirect ib_write_bw reaches line rate on Gen5 x16 (perftest table    \
     * in h100x8-2nodes-roce-8x400g-cx7-*), consistent. */                    \
    CS_PARAM(EFF_PCIE_DMA, "eff.pcie.dma", 0.91, "fraction",                  \
             "payload fraction of PCIe bandwidth a NIC's DMA achieves (GPU-NIC and host-NIC paths)") \
    /* Inter-socket links also carry coherence traffic; assumption in line    \
     * with NCCL's INTEL_P2P_OVERHEAD (topo.h: bw x 5/6) plus protocol        \
     * overhead. No file isolates it. */                                      \
    CS_PARAM(EFF_SYS, "eff.sys", 0.6, "fraction",                             \
             "payload fraction of an inter-socket link (UPI, xGMI)")          \
    /* Same NVLink signalling as eff.nvlink (assumption; no file isolates     \
     * it). */                                                                \
    CS_PARAM(EFF_C2C, "eff.c2c", 0.8, "fraction",                             \
             "payload fraction of an NVLink-C2C link")                        \
    /* ib_write_bw reaches 391-392 Gb/s of 400 (perftest tables in            \
     * h100x8-2nodes-roce-8x400g-cx7-* and perftest-ib-ndr400-*: 0.98);       \
     * NCCL rings reach 391 GB/s busbw on 8 x 400G in                         \
     * h100x8-8nodes-ib-ndr400-* (table 2); fitted with                       \
     * h100x8-4nodes-ib-8xndr400-* (365). */                                  \
    CS_PARAM(EFF_NET, "eff.net", 0.97, "fraction",                            \
             "payload fraction of a NIC port's data rate with RDMA (IB, RoCE)") \
    /* Fitted to rtx2080ti-16nodes1gpu-10gbe-socket-* (ring) (1.1 GB/s        \
     * busbw on 10 GbE = 1.25 GB/s: 0.88). */                                 \
    CS_PARAM(EFF_SOCKET, "eff.socket", 0.88, "fraction",                      \
             "payload fraction of the interface speed NET/Socket achieves")   \
    /* Assumption, not fitted (no socket data above 10 GbE in                 \
     * ../shared/data/real): NCCL's socket transport moves every byte through \
     * the GPU's proxy thread and the kernel TCP stack, one socket per        \
     * connection by default (net_socket.cc: NCCL_SOCKET_NTHREADS and         \
     * NCCL_NSOCKS_PERTHREAD auto = 1 outside AWS/GCP); a single TCP stream   \
     * copied by one core is commonly measured at 20-30 Gb/s (iperf3 single   \
     * stream on 100 GbE hosts). So fast interfaces (IPoIB, 100-400 GbE) do   \
     * not reach their line rate over sockets. */                             \
    CS_PARAM(BW_SOCKET_PROXY, "bw.socket.proxy", 3.0, "GB/s",                 \
             "NET/Socket throughput one GPU's proxy reaches, per direction")  \
    /* Fitted to rtx2080tix2-pcie-noP2P-shm-* (all-reduce 4.0 GB/s busbw,     \
     * all-gather 3.2-3.8, through one Gen3 x16 switch uplink that carries    \
     * both ring edges), relative to eff.pcie (0.65 when it was 0.745). */    \
    CS_PARAM(EFF_SHM, "eff.shm", 0.68, "fraction",                            \
             "relative efficiency of staging through host memory (SHM) against P2P over the same links, GPUs sending and receiving at once") \
    /* Fitted to rtx2080tix2-pcie-noP2P-shm-* (broadcast and reduce of 2      \
     * ranks: 11.1 GB/s over the same uplink: the sender only writes host     \
     * memory, the receiver only reads it): a one-way SHM stream runs at      \
     * eff.pcie, as a peer-to-peer one. */                                    \
    CS_PARAM(EFF_SHM_ONEWAY, "eff.shm.oneway", 0.99, "fraction",              \
             "as eff.shm when the sending GPU receives nothing and the receiving GPU sends nothing") \
    /* With NCCL_SHM_USE_CUDA_MEMCPY=1 the proxy's cudaMemcpyAsync (a copy    \
     * engine) does a side of the SHM step (transport/shm.cc). bandwidthTest  \
     * in the header of rtx2080tix2-pcie-noP2P-shm-* gives a copy engine      \
     * 12.2 (H2D) and 13.2 GB/s (D2H) of Gen3 x16's 15.75: 0.77-0.84, above   \
     * eff.pcie (0.71), and the engines of the two directions are separate,   \
     * so no two-way penalty: 1.0 x eff.pcie (a fraction parameter is at     \
     * most 1, cs_params.c; the copy may be up to 18% faster). No run in the  \
     * data uses the copy. */                                                 \
    CS_PARAM(EFF_SHM_CE, "eff.shm.ce", 1.0, "fraction",                       \
             "as eff.shm for a side of an SHM step the proxy copies with cudaMemcpy (NCCL_SHM_USE_CUDA_MEMCPY=1)") \
    /* STREAM (McCalpin) on server CPUs commonly reaches 70-80% of the DRAM   \
     * channels' peak; not fitted. */                                         \
    CS_PARAM(EFF_HOST_MEM, "eff.host.mem", 0.75, "fraction",                  \
             "fraction of a CPU socket's DRAM peak that SHM buffers (written by one GPU, read by another) can use") \
    /* The proxy polls the step's flag, then submits cudaMemcpyAsync (CUDA's  \
     * own launch overhead is a few us). Estimate, not fitted: no run in the  \
     * data uses NCCL_SHM_USE_CUDA_MEMCPY. */                                 \
    CS_PARAM(LAT_SHM_CE, "lat.shm.ce", 4.0, "us",                             \
             "extra cost of one SHM step for each side the proxy copies with cudaMemcpy") \
    /* Without GPUDirect the GPU's SMs store into and load from pinned host   \
     * memory over PCIe (loads are latency-bound). Fitted to                  \
     * rtx2080ti-16nodes1gpu-ib100g-* (no GDR on GeForce, EDR 100G, a Gen3    \
     * x16 GPU): 5.1 GB/s each way, the ring's median busbw (5.08, a noisy   \
     * run) and 4 x the forced tree's algbw (1.3 GB/s: NCCL 2.4.7's one       \
     * binary tree moves 4S per NIC direction, docs/model-analytic.md "NCCL   \
     * versions"): 0.42 x 12.1 GB/s (EDR 12.5 x eff.net 0.97) = 5.1. */     \
    CS_PARAM(EFF_HOST_STAGED, "eff.net.host_staged", 0.42, "fraction",        \
             "relative efficiency of the host-memory bounce used without GPUDirect RDMA") \
    /* Fitted to h100x8-nvswitch-nvls-allreduce-1node-*,                      \
     * h200x8-nvswitch-nvls-forced-* and                                      \
     * h100x8-2nodes-ib-8xndr400-allreduce-nvlstree-* (474-480 GB/s busbw;    \
     * NVLS moves S(1+1/n) over each GPU's 450 GB/s of NVLink). */            \
    CS_PARAM(EFF_NVLS_SM90, "eff.nvls.sm90", 0.67, "fraction",                \
             "fraction of a Hopper GPU's NVLink bandwidth NVLS (NVSwitch multicast/reduction) achieves") \
    /* Set from b200x8-1node-vs-4nodes32gpu-* table 1 (839-846 GB/s busbw  \
     * at 8-16 GiB, torch.distributed) when the NVLS time had other terms;   \
     * it prices 793 on 8 B200 at 16 GiB now. The 8-GPU Blackwell NVLS runs  \
     * of the data set disagree, by their times: the B200 -g 8 sweep         \
     * 829-840, OCI GB300 2 hosts 838-842, OCI GB200 2 hosts 761-793 (its    \
     * busbw column is for 64 ranks), the unversioned                        \
     * b200x8-nvswitch-1node-g8-* 787-797: left as it was. */                \
    CS_PARAM(EFF_NVLS_SM100, "eff.nvls.sm100", 0.58, "fraction",              \
             "fraction of a Blackwell GPU's NVLink bandwidth NVLS achieves")  \
    /* STREAM-like kernels reach 80-90% of HBM peak on data-centre GPUs       \
     * (vendor tuning guides); assumption. It binds only on slow memory. */   \
    CS_PARAM(EFF_MEM, "eff.mem", 0.8, "fraction",                             \
             "fraction of GPU memory bandwidth a reduction or copy achieves") \
    /* ---- protocols ---------------------------------------------------- */ \
    /* device.h: an LL line is 16 bytes, 8 of data and 8 of flags. */         \
    CS_PARAM(PROTO_EFF_LL, "proto.eff.ll", 0.5, "fraction",                   \
             "payload fraction of the LL protocol on the wire")               \
    /* device.h: NCCL_LL128_LINESIZE 128 bytes, NCCL_LL128_DATAELEMS 15 of    \
     * NCCL_LL128_LINEELEMS 16 eight-byte elements carry data. */             \
    CS_PARAM(PROTO_EFF_LL128, "proto.eff.ll128", 0.9375, "fraction",          \
             "payload fraction of the LL128 protocol on the wire")            \
    /* Simple sends raw data; its flags travel separately. */                 \
    CS_PARAM(PROTO_EFF_SIMPLE, "proto.eff.simple", 1.0, "fraction",           \
             "payload fraction of the Simple protocol on the wire")           \
    /* ---- per-channel ceilings (one channel = one CTA on one SM) ------- */ \
    /* One CTA's LL throughput is bound by its flag-polling loads. Fitted:    \
     * sm80 to a100x8-nvswitch-allreduce-1node-*, sm90 to                     \
     * h100x8-2nodes-ib-8xndr400-allreduce-nvlstree-* and                     \
     * h100x8-4nodes-ib-8xndr400-*, sm100 to b200x8-1node-vs-4nodes32gpu-*    \
     * (table 1, 1 node) (LL sizes); sm70 assumed a little below sm80. That    \
     * torch.distributed table is no longer validated (not nccl-tests); on    \
     * the counted B200 -g tables 3.4 still fits best: 6.0 brings two rows'   \
     * medians down (-g 4 all-gather 16.4 -> 14.4 %, all-reduce 7.4 -> 4.6)   \
     * and four up (-g 2 reduce-scatter 42.7 -> 53.8, -g 8 all-reduce 6.0     \
     * -> 8.3, the unversioned -g 8 all-reduce 26.2 -> 29.1 and all-gather    \
     * 9.6 -> 10.6, a miss). Consumer Blackwell (sm120: RTX 5090, RTX PRO)    \
     * takes it too; rtx5090x8-pcie5-* reads faster LL at 256-512 KiB (not    \
     * a judged size range). */                                               \
    CS_PARAM(CH_LL_SM70, "chan.ll.sm70", 2.5, "GB/s",                         \
             "payload one channel moves with LL, Volta/Turing")               \
    CS_PARAM(CH_LL_SM80, "chan.ll.sm80", 2.9, "GB/s",                         \
             "payload one channel moves with LL, Ampere/Ada")                 \
    CS_PARAM(CH_LL_SM90, "chan.ll.sm90", 8.0, "GB/s",                         \
             "payload one channel moves with LL, Hopper")                     \
    CS_PARAM(CH_LL_SM100, "chan.ll.sm100", 3.4, "GB/s",                       \
             "payload one channel moves with LL, Blackwell")                  \
    /* sm80 fitted to a100x8-nvswitch-allreduce-1node-* (4-16 MiB: 133 GB/s   \
     * busbw over 24 channels); sm70 taken equal to sm80 as NCCL's table      \
     * does; sm90 and sm100 are NCCL's perChMaxRingLL128Bws for one node      \
     * (tuning.cc: 36.7, 73.4), consistent with                               \
     * h100x8-2nodes-ib-8xndr400-allreduce-nvlstree-* and                     \
     * b200x8-1node-vs-4nodes32gpu-* (table 1, 1 node). */                    \
    CS_PARAM(CH_LL128_SM70, "chan.ll128.sm70", 6.4, "GB/s",                   \
             "payload one channel moves with LL128, Volta/Turing")            \
    CS_PARAM(CH_LL128_SM80, "chan.ll128.sm80", 6.4, "GB/s",                   \
             "payload one channel moves with LL128, Ampere/Ada")              \
    CS_PARAM(CH_LL128_SM90, "chan.ll128.sm90", 36.7, "GB/s",                  \
             "payload one channel moves with LL128, Hopper")                  \
    CS_PARAM(CH_LL128_SM100, "chan.ll128.sm100", 73.4, "GB/s",                \
             "payload one channel moves with LL128, Blackwell")               \
    /* NCCL's perChMaxTreeBws for one node (tuning.cc: 26.5, 24, 38.7, 70)    \
     * as one CTA's copy throughput, except sm100: a CTA's copy is bound by   \
     * the bytes its threads keep in flight over the memory latency, and     \
     * Blackwell keeps Hopper's (NCCL_MAX_NTHREADS 640, SIMPLE 512, and       \
     * ncclCollUnroll 8 x 16 B per thread on sm80-sm100, device.h), not       \
     * NCCL's 70 (which predicted the B200 sendrecv runs 30-45% fast). sm100  \
     * was sm90's 38.7 until the p2p pipeline fill was priced apart (issue   \
     * 12, docs/model-analytic.md "SendRecv and AlltoAll"); the Blackwell    \
     * p2p tables where the CTA binds then read, per CTA: 43.6 (B200         \
     * sendrecv -g 8, 4 channels, 16-64 MiB slope, one work per channel),    \
     * 40.5 and 45.3 (B200 alltoall -g 2 and -g 4 at 16 GiB, 2 and 4 works   \
     * per batch), 44.9 (GB200 alltoall, 4 GPUs, 8 GiB, OCI) and 45.8 (GB300, \
     * same): their mean, 44. The spread follows the works per batch         \
     * (sendrecv.h splits the warps among them), which one number does not   \
     * model. No collective configuration is bound by it. Pricing each      \
     * Simple step's synchronisation apart (lat.sync.simple) raises those    \
     * reads by 2-5%, but 44 still fits the manifest best (45 and 46 move    \
     * the B200 all-to-all and RTX PRO send/receive tables off). */          \
    CS_PARAM(CH_SIMPLE_SM70, "chan.simple.sm70", 26.5, "GB/s",                \
             "payload one channel moves with Simple, Volta/Turing")           \
    CS_PARAM(CH_SIMPLE_SM80, "chan.simple.sm80", 24.0, "GB/s",                \
             "payload one channel moves with Simple, Ampere/Ada")             \
    CS_PARAM(CH_SIMPLE_SM90, "chan.simple.sm90", 38.7, "GB/s",                \
             "payload one channel moves with Simple, Hopper")                 \
    CS_PARAM(CH_SIMPLE_SM100, "chan.simple.sm100", 44.0, "GB/s",              \
             "payload one channel moves with Simple, Blackwell")              \
    /* A GPU that both writes and reads SHM buffers (every rank of an SHM  \
     * ring) issues its loads of host memory behind its own posted writes  \
     * on the same PCIe port, and PCIe lets no read request pass a posted   \
     * write (PCIe base spec, transaction ordering): each CTA's loads wait  \
     * out the write queue, so a channel's receive is bound by the bytes    \
     * its threads keep in flight over that latency, whatever the link's   \
     * rate. The SHM runs of the validation set agree per channel across    \
     * PCIe generations: sm70 from v100sxm2-32gb-dgx1-* (5.5-5.7 GB/s on    \
     * 2 channels, Gen3), sm80 from a100-h100-dgx-4gpu-* table 2 (5.2 on 2, \
     * Gen4; the A40 pair of a40x8-pcie-* gets 3.9 on 2), sm90 from its     \
     * table 4 (24 on 4, Gen5); sm100 takes sm90's (no run; the same        \
     * threads and unroll, device.h). Not applied to a side the proxy's     \
     * cudaMemcpy copies, nor to a GPU that only receives (eff.shm.oneway). */ \
    CS_PARAM(CH_SHM_SM70, "chan.shm.sm70", 2.8, "GB/s",                       \
             "payload one channel receives over SHM while its GPU also sends over SHM, Volta/Turing") \
    CS_PARAM(CH_SHM_SM80, "chan.shm.sm80", 2.6, "GB/s",                       \
             "payload one channel receives over SHM while its GPU also sends over SHM, Ampere/Ada") \
    CS_PARAM(CH_SHM_SM90, "chan.shm.sm90", 6.0, "GB/s",                       \
             "payload one channel receives over SHM while its GPU also sends over SHM, Hopper") \
    CS_PARAM(CH_SHM_SM100, "chan.shm.sm100", 6.0, "GB/s",                     \
             "payload one channel receives over SHM while its GPU also sends over SHM, Blackwell") \
    /* ---- pipelines ---------------------------------------------------- */ \
    /* Copy-in, multimem.ld_reduce + multimem.st, copy-out warps (NCCL        \
     * device/all_reduce.h, NVLS roles). Fitted to                            \
     * h100x8-nvswitch-nvls-allreduce-1node-*,                                \
     * h200x8-nvswitch-nvls-forced-* and                                      \
     * h100x8-2nodes-ib-8xndr400-allreduce-nvlstree-* (1 MiB - 1 GiB          \
     * times). */                                                             \
    CS_PARAM(PIPE_NVLS_STAGES, "pipe.nvls.stages", 3.4, "stages",             \
             "pipeline stages a step of chunks crosses inside one NVLS round") \
    /* NVLS all-reduce's copy warps (NCCL 2.29 device/all_reduce.h, NVLS    \
     * roles): the scatter warps copy a step's chunk for each head in turn  \
     * and the gather warps each head's result (prims_simple.h              \
     * ScatterGatherOp: one reduceCopy a peer), a copy handing each warp    \
     * 4 KiB at a time (common_kernel.h: Unroll 8 x 32 lanes x 16 B,        \
     * device.h ncclCollUnroll): a step of m heads takes                    \
     * m x ceil(chunk / (workers x 4 KiB)) rounds of a load and a store,    \
     * one after the other; a partial step only its parts' (cs_engine.h     \
     * cs_engine_nvls_step_floor). What one round                           \
     * takes is fitted: b200x8-nvswitch-1node-g8-* and                      \
     * b200x8-nvswitch-1node-g2-g4-g8-sweep-* (-g 8 all-reduce, two sites,  \
     * 4 MiB - 1 GiB: steps of 16-64 KiB chunks at 20.5-30.5 us a channel,  \
     * 1.28-1.33 us a round on one site, 1.2 between the two). */           \
    CS_PARAM(LAT_NVLS_ROUND_SM100, "lat.nvls.round.sm100", 1.2, "us",         \
             "one load-and-store round of an NVLS all-reduce copy warp (4 KiB), Blackwell") \
    /* Hopper: not binding on the data; at most 1.0 by the 32 MiB row of    \
     * h100x8-nvswitch-1node-srun-* (32 KiB chunks: 17.6 us a step of 16    \
     * rounds) and the 8-32 MiB rows of h200x8-nvswitch-nvls-forced-* (not  \
     * counted). */                                                         \
    CS_PARAM(LAT_NVLS_ROUND_SM90, "lat.nvls.round.sm90", 1.0, "us",           \
             "one load-and-store round of an NVLS all-reduce copy warp (4 KiB), Hopper") \

#endif
