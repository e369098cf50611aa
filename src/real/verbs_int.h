/* Private to `collsim real --verbs` (verbs_*.c and tests/unit/test-verbs.c):
 * options, the size sweep, statistics, the out-of-band messages, the
 * choice of RDMA port and GID, and the replay schedule. Everything here but
 * verbs_ib.c needs no RDMA device, so it is unit-tested. */
#ifndef CS_VERBS_INT_H
#define CS_VERBS_INT_H

#include "io/cs_run_args.h"
#include <glib.h>
#include "io/cs_scenario.h"
#include "models/cs_decide.h"

#define VB_DEFAULT_PORT 18515      /* perftest's default TCP port (perftest_parameters.h DEF_PORT) */
#define VB_DEFAULT_SIZE 65536      /* perftest's default message size (DEF_SIZE_BW) */
#define VB_DEFAULT_BW_ITERS 5000   /* perftest DEF_ITERS */
#define VB_DEFAULT_LAT_ITERS 1000  /* perftest DEF_ITERS for latency tests */
#define VB_DEFAULT_TX_DEPTH 128    /* perftest DEF_TX_BW */
#define VB_MAX_SIZE_LOG2 23        /* perftest -a sweeps 2 B .. 8 MiB (MAX_SIZE 8388608) */
#define VB_MAX_QPS 64              /* channels per NIC in a replay (NCCL MAXCHANNELS) */
#define VB_NCCL_STEPS 8            /* NCCL_STEPS slots per connection (device.h:24): the replay's window */

enum { VB_TEST_BW = 1, VB_TEST_LAT = 2 };

/* ---- options (verbs_opts.c) ---------------------------------------------- */

typedef struct {
    gboolean server;
    char *client;             /* peer host for the client, NULL for the server */
    int port;                 /* TCP port of the out-of-band exchange */
    char *ib_dev;             /* "mlx5_0" or "mlx5_0:1"; NULL = NCCL's first device */
    int ib_port;              /* from ib_dev, 0 = NCCL's choice */
    int gid_index;            /* -1 = NCCL's choice */
    int tc, sl;               /* -1 = NCCL_IB_TC / NCCL_IB_SL, or 0 */
    guint64 size;             /* one message size (0 with --all) */
    gboolean all;             /* the perftest -a sweep */
    int bw_iters, lat_iters, tx_depth;
    int tests;                /* VB_TEST_* mask */
    gboolean tests_given;     /* --test was given */
    gboolean gbits;           /* --report-gbits */
    gboolean use_cuda;
    /* replay: the scenario, its flags, --env and the topology flags, as
     * `collsim run` reads them */
    cs_run_args_t args;
    gboolean replay;          /* a scenario file or topology flags were given */
} vb_opts_t;

void vb_opts_init(vb_opts_t *o);
void vb_opts_clear(vb_opts_t *o);
/* Parses argv (argv[0] = command name). Errors are one line "collsim:
 * FLAG: what; expected". */
gboolean vb_opts_parse(vb_opts_t *o, int argc, char **argv, GError **err);
/* The scenario of a replay: file, then flags, then the environment and
 * --env, as `collsim run` builds it. */
gboolean vb_opts_scenario(vb_opts_t *o, cs_scenario_t *s, GError **err);

/* ---- sizes and statistics (verbs_stats.c) --------------------------------- */

/* The message sizes of the raw sweep: 2, 4, ..., 2^23 with --all (perftest
 * -a), else the one size. */
guint64 *vb_sweep_sizes(const vb_opts_t *o, int *n_p);

typedef struct {
    double min, max, median, avg, stdev, p99, p999;
} vb_lat_stats_t;

/* Statistics of n > 0 samples (sorted in place). Percentiles are
 * nearest-rank: the sample at 1-based rank ceil(p*n); the median
 * ("t_typical") is sorted[n/2], as perftest takes it (the upper middle one
 * for an even count); stdev is the population one. */
void vb_lat_stats(double *samples, int n, vb_lat_stats_t *st_p);

/* Bandwidth of 'iters' messages of 'size' bytes posted at t_post[i] and
 * completed at t_done[i] (seconds, non-decreasing): average = bytes / (last
 * completion - first post); peak = the best rate over any window of
 * 'window' consecutive completions. Bytes/s. */
void vb_bw_stats(const double *t_post, const double *t_done, int iters, guint64 size, int window,
                 double *peak_p, double *avg_p);

/* perftest's table lines. */
char *vb_bw_header(gboolean gbits);
char *vb_bw_line(guint64 size, int iters, double peak, double avg, gboolean gbits);
char *vb_lat_header(void);
char *vb_lat_line(guint64 size, int iters, const vb_lat_stats_t *st);

/* ---- out-of-band messages (verbs_oob.c) ---------------------------------- */

typedef struct {
    guint32 lid;
    int nqp;
    guint32 qpn[VB_MAX_QPS];
    guint32 psn;
    guint32 rkey;
    guint64 addr, len;
    int mtu;                  /* IBV_MTU_* enum value, 1..5 */
    guint8 gid[16];
} vb_conn_msg_t;

/* One text line, as perftest's "LID QPN PSN RKEY VADDR GID" exchange:
 * "CSVERBS1 lid nqp qpn,qpn,... psn rkey addr len mtu gid32hex\n". */
char *vb_conn_encode(const vb_conn_msg_t *m);
gboolean vb_conn_decode(const char *line, vb_conn_msg_t *m_p, GError **err);

/* A replay of one collective: 'nqp' connections (one per channel on the
 * NIC), each sending the same list of messages in order, at most
 * VB_NCCL_STEPS outstanding. Runs of equal sizes: msg[i] bytes, count[i]
 * times. */
typedef struct {
    guint64 size;             /* the swept size (nccl-tests "size") */
    guint64 count;            /* elements */
    guint64 nccl_bytes;       /* NCCL's nBytes */
    cs_algo_t nccl_algo;      /* what NCCL's model chose (the replay is Ring's traffic) */
    cs_proto_t proto;
    int nchannels;            /* channels of the call */
    int nqp;                  /* of them on one NIC */
    guint64 chunk;            /* chunk bytes */
    int nruns;
    guint64 *msg;             /* wire bytes of one message */
    guint64 *count_of;
    guint64 wire_bytes;       /* per connection, in total */
    guint64 nmsgs;            /* per connection */
} vb_replay_t;

void vb_replay_clear(vb_replay_t *r);
/* "REPLAY size nqp nruns msg:count ...\n" and back. */
char *vb_replay_encode(const vb_replay_t *r);
gboolean vb_replay_decode(const char *line, vb_replay_t *r_p, GError **err);

/* Blocking line I/O over a TCP socket (the exchange is small). */
int vb_tcp_listen(int port, GError **err);
int vb_tcp_accept(int lfd, GError **err);
int vb_tcp_connect(const char *host, int port, GError **err);
gboolean vb_send_line(int fd, const char *line, GError **err);
char *vb_recv_line(int fd, GError **err);   /* without the '\n'; NULL on error or EOF */

/* ---- port and GID choice (verbs_select.c) ---------------------------------- */

typedef struct {
    char name[64];            /* "mlx5_0" */
    int port;
    gboolean roce;            /* Ethernet link layer */
    int gid_index;            /* -1 when the port is InfiniBand and GID 0 is not needed */
    char gid_how[96];         /* "NCCL auto-pick", "--gid-index", "NCCL_IB_GID_INDEX" */
    int speed_mbps;
} vb_port_sel_t;

/* Picks the port and GID as NCCL does on the machine under 'root' ("/" or a
 * captured tree): the ACTIVE ports NCCL_IB_HCA selects, in NCCL's PCI
 * order; 'ib_dev' ("mlx5_1" or "mlx5_1:2") narrows to one; the GID is
 * 'gid_index' when >= 0, else NCCL_IB_GID_INDEX, else NCCL's auto-pick
 * under NCCL_IB_ADDR_FAMILY / _ROCE_VERSION_NUM / _ADDR_RANGE from 'env'. */
gboolean vb_select_port(const char *root, const cs_nccl_env_t *env, const char *ib_dev, int gid_index,
                        vb_port_sel_t *sel_p, GError **err);

/* A copy of 'env' with NAME=VALUE set over it. */
cs_nccl_env_t *vb_env_with(const cs_nccl_env_t *env, const char *name, const char *value);

/* NCCL_IB_TC / NCCL_IB_SL unless given: the value, 0 when unset. */
int vb_env_int(const cs_nccl_env_t *env, const char *name, int given, int dflt);

/* ---- replay schedule (verbs_replay.c) ------------------------------------ */

/* The traffic one NIC carries for one call of s->coll at 'size' as Ring
 * runs it (proxy.cc / enqueue.cc: nstepsPerLoop x ceil(nBytes / (nCh x
 * nchunksPerLoop x chunk)) steps per channel, one message per slice).
 * Pass a communicator made with NCCL_ALGO=Ring (vb_env_with); if its
 * decision is another algorithm anyway, Ring's chunk rule is used with
 * that decision's channels and protocol. */
gboolean vb_replay_plan(const cs_comm_t *comm, const cs_scenario_t *s, guint64 size, vb_replay_t *r_p,
                        GError **err);

/* ---- the runs (verbs_ib.c) ----------------------------------------------- */

int vb_run(vb_opts_t *o);

#endif
