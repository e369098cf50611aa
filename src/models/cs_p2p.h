/* Point-to-point operations as NCCL runs them: nccl-tests' sendrecv_perf
 * (one send to rank+1, one receive from rank-1) and alltoall_perf (a send
 * and a receive per peer, self included: enqueue.cc taskAppend for
 * ncclAlltoAll, src/alltoall.cu before NCCL 2.28). Facts from NCCL
 * v2.30.7: enqueue.cc addP2pToPlan and scheduleP2pTasksToPlan (channels
 * per send, LL below NCCL_P2P_LL_THRESHOLD, chunk sizes), init.cc
 * ncclP2pSchedule (the peer of each round), include/channel.h and
 * device.h (the channels a round's parts use). Pure functions of the
 * communicator's p2p setup (cs_comm_info_t p2p_* fields). */
#ifndef CS_P2P_H
#define CS_P2P_H

#include "models/cs_decide.h"

#define CS_P2P_PER_BATCH 8   /* device.h NCCL_MAX_DEV_WORK_P2P_PER_BATCH */

/* Copies one side of a work makes of its part, 'send' or receive, with a
 * peer on the rank's node ('local') or not: one, the send into the
 * connection's buffer or the receive out of it; with direct pointers
 * (cs_comm_p2p_direct) only the side that moves the bytes between the
 * two user buffers, the sender (DirectWrite) or, in P2P read mode, the
 * receiver (DirectRead), while the other side's warps only wait
 * (device/sendrecv.h v2.22.3: directSend and directRecv). */
static inline int cs_p2p_side_copies(const cs_comm_info_t *ci, gboolean local, gboolean send)
{
    if (!local || !cs_comm_p2p_direct(ci))
        return 1;
    return ci->intra.p2p_read ? !send : send;
}

/* Copies a channel's CTA makes of one part of a work (device/sendrecv.h):
 * a work's warps copy its send into the peer's buffer and its receive out
 * of its own, two passes over the part's bytes (send_copies and
 * recv_copies, cs_p2p_side_copies, for the sides the work has); a send to
 * the rank itself is one reduceCopy from the send to the receive buffer
 * (isCopy). A SendRecv round may hold only the send or only the
 * receive. */
static inline int cs_p2p_work_passes(gboolean self, gboolean send, gboolean recv, int send_copies,
                                     int recv_copies)
{
    return self ? 1 : (send ? send_copies : 0) + (recv ? recv_copies : 0);
}

/* One send (or receive) of 'bytes' as addP2pToPlan plans it. */
typedef struct {
    int nch;                 /* channels it is split over (its parts) */
    cs_proto_t proto;        /* LL or Simple */
    guint64 chunk;           /* data bytes per step */
} cs_p2p_op_t;

/* 'net': the peer is on another node (network chunk tuning). */
void cs_p2p_op(const cs_comm_info_t *info, gint64 bytes, gboolean net, cs_p2p_op_t *op_p);

/* The peer 'rank' sends to (send) or receives from in schedule round
 * 'round' (0 .. nranks-1; round 0 is the rank itself). Ranks are taken as
 * node-major blocks of info->ppn (the layout collsim builds). */
int cs_p2p_peer(const cs_comm_info_t *info, int rank, int round, gboolean send);

/* Every round's peers of 'rank' at once (nranks entries each): what
 * cs_p2p_peer gives round by round. */
void cs_p2p_schedule(const cs_comm_info_t *info, int rank, int *send, int *recv);

/* The channel of part 'part' of the sends and receives of 'round'. */
int cs_p2p_channel(const cs_comm_info_t *info, int round, int part);

/* What every rank of an operation does (SendRecv or AlltoAll of 'bytes'
 * per peer): its peers (send_to[k], recv_from[k] for the k-th op of a
 * rank, in round order), and per channel how many parts every rank puts
 * on it and in how many batches it runs them (a channel's CTA runs up to
 * CS_P2P_PER_BATCH sends/receives at once, a batch after the other). */
typedef struct {
    cs_coll_t coll;
    int nranks;
    int nops;                /* ops per rank: 1 (SendRecv) or nranks (AlltoAll) */
    int *rounds;             /* nops: the schedule round of each op */
    cs_p2p_op_t op;          /* every op's plan (local peers) */
    cs_p2p_op_t op_net;      /* ... for peers on another node */
    int *ch_parts;           /* p2p_nch: parts a rank puts on each channel */
    int *ch_batches;         /* p2p_nch: batches each channel runs */
    int *ch_passes;          /* p2p_nch: copies of a part its CTA makes:
                              * a peer's part twice (sent and received),
                              * a self part once (one copy) */
    int *ch_recvs;           /* p2p_nch: parts each channel receives from
                              * another rank (not the self copy) */
    int max_parts, max_batches, max_passes, max_recvs;
} cs_p2p_plan_t;

cs_p2p_plan_t *cs_p2p_plan_new(const cs_comm_info_t *info, cs_coll_t coll, guint64 bytes_per_peer);
void cs_p2p_plan_free(cs_p2p_plan_t *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(cs_p2p_plan_t, cs_p2p_plan_free)

/* Bytes one rank sends to each peer for NCCL's nBytes of the call (the
 * whole send buffer for AlltoAll, as cs_coll_nccl_bytes counts it). */
guint64 cs_p2p_bytes_per_peer(cs_coll_t coll, guint64 nbytes, int nranks);

#endif
