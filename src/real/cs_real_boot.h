/* How the ranks of `collsim real` find each other, with no MPI linked:
 *  - who started us: our own launcher (one process per GPU on this node),
 *    mpirun (OMPI_COMM_WORLD_* or PMI_*), or torchrun-style variables
 *    (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT);
 *  - a TCP control connection from every rank to rank 0, over which rank 0
 *    sends NCCL's unique id (an opaque blob here), gathers the results, and
 *    over which a failure anywhere reaches everyone (an ABORT message or a
 *    closed connection), so that no rank is left waiting for one that died.
 * No CUDA here, so all of it is tested without a GPU. */
#ifndef CS_REAL_BOOT_H
#define CS_REAL_BOOT_H

#include <glib.h>

typedef enum {
    CS_BOOT_NONE = 0,     /* started by hand: we launch the ranks */
    CS_BOOT_LAUNCHER,     /* a rank started by our own launcher */
    CS_BOOT_TORCHRUN,     /* RANK / WORLD_SIZE / LOCAL_RANK */
    CS_BOOT_OMPI,         /* OMPI_COMM_WORLD_RANK / _SIZE / _LOCAL_RANK */
    CS_BOOT_PMI           /* PMI_RANK / PMI_SIZE / MPI_LOCALRANKID (MPICH, Intel MPI) */
} cs_boot_kind_t;

typedef struct {
    cs_boot_kind_t kind;
    int rank, nranks, local_rank;
    char *host;           /* rank 0's address (NULL when nranks == 1 or kind NONE) */
    int port;
    int listen_fd;        /* rank 0: a listening socket inherited from the launcher, or -1 */
} cs_boot_job_t;

/* The environment variables our launcher sets for its ranks. */
#define CS_BOOT_ENV_WORKER "COLLSIM_REAL_WORKER"
/* Exit status of a rank started by our launcher that stopped because
 * another rank failed: the launcher blames the rank that failed first,
 * whichever of them exits first. */
#define CS_BOOT_EXIT_SIBLING 4
#define CS_BOOT_ENV_LISTEN_FD "COLLSIM_REAL_LISTEN_FD"

/* Reads the job from an environment (g_get_environ() form) and the
 * --bootstrap HOST:PORT flag (NULL when not given; it wins over
 * MASTER_ADDR/MASTER_PORT). Errors are one line naming the variable:
 * "collsim: real: RANK=x: ...; expected ...". */
gboolean cs_boot_job_from_env(gchar **envp, const char *bootstrap, cs_boot_job_t *job_p, GError **err);
void cs_boot_job_clear(cs_boot_job_t *job);
const char *cs_boot_kind_name(cs_boot_kind_t k);

/* A listening TCP socket on host:port (port 0: any free one); its port in
 * *port_p. Returns the fd (not close-on-exec, so a launched rank inherits
 * it), or -1 with *err set. */
int cs_boot_listen(const char *host, int port, int *port_p, GError **err);

typedef struct cs_boot cs_boot_t;

/* Connects the ranks: rank 0 accepts the nranks-1 others and sends each
 * 'id' (idlen bytes); the others connect (retrying until 'timeout_s') and
 * receive it into 'id'. */
cs_boot_t *cs_boot_connect(const cs_boot_job_t *job, void *id, size_t idlen, double timeout_s, GError **err);
/* Every rank sends 'len' bytes; rank 0 receives them all, in rank order,
 * into *all_p (nranks * len bytes, g_free) and then releases the others,
 * which return only then (so no rank tears NCCL down early). Fails naming
 * the rank that went away or aborted. */
gboolean cs_boot_gather(cs_boot_t *b, const void *mine, size_t len, guint8 **all_p, double timeout_s, GError **err);
/* Non-blocking: TRUE when another rank failed (an ABORT arrived, or a
 * control connection closed), with the reason in *why_p (g_free). Rank 0
 * passes a failure it sees on to all the other ranks. */
gboolean cs_boot_peer_failed(cs_boot_t *b, char **why_p);
/* Tells the others that this rank fails, with a one-line reason. */
void cs_boot_abort(cs_boot_t *b, const char *why);
void cs_boot_free(cs_boot_t *b);

/* The launcher: starts 'nranks' copies of 'argv' (argv[0] the program)
 * with CS_BOOT_ENV_WORKER, RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
 * MASTER_PORT set and a listening socket for rank 0, and waits. When a rank
 * exits with a non-zero status or a signal, it says which on stderr and
 * stops the others (SIGTERM, then SIGKILL after 'grace_s'). Returns the exit
 * status for the command: 0 when all ranks succeed, 2 when a rank's status
 * was 2 (bad input), else 1. */
int cs_boot_launch(char **argv, int nranks, double grace_s, GError **err);

#endif
