/* What a log's NCCL INFO lines (NCCL_DEBUG=INFO) say NCCL did: the
 * transport of every connection it printed, the network it loaded and its
 * devices, GPUDirect RDMA and NCCL's reasons against it, its channel count,
 * rank 0's rings, and where each rank ran. These are NCCL's own words for
 * the run the table measured, so `collsim validate` can set them beside
 * the model's decisions (cs_validate_findings). Pure text: one line in,
 * facts out; text kept from the log is printable ASCII only. The lines, as
 * NCCL prints them (v2.4 to v2.29):
 *   transport/p2p.cc   "Channel 00/0 : 0[0] -> 1[1] via P2P/IPC" (also
 *                      P2P/direct pointer, P2P/CUMEM, P2P/indirect/2[2]);
 *                      2.4 "Ring 00 : 0[0] -> 1[1] via P2P/IPC"
 *   transport/shm.cc   "Channel 00 : 0[0] -> 1[1] via SHM/direct/direct";
 *                      up to 2.12 "... via direct shared memory"
 *   transport/net.cc   "Channel 00/0 : 0[0] -> 8[0] [send] via
 *                      NET/IB/0/GDRDMA" (NET/<the network's name>/<device>,
 *                      /GDRDMA when the NIC reads or writes GPU memory); a
 *                      [receive] line is the receiving rank's own setup
 *   net_ib.cc, net_socket.cc "NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE
 *                      [RO]; OOB eth0:10.0.0.1<0>", "NET/Socket : Using
 *                      [0]eno1:...", "NET/IB : No device found."
 *   init.cc            "Using network IB" (Socket, IBext_v8, AWS Libfabric,
 *                      ...) and "24 coll channels, 24 collnet channels, 0
 *                      nvls channels, 32 p2p channels, 32 p2p channels per
 *                      peer"
 *   graph/paths.cc     "GPU Direct RDMA Disabled for GPU 0 / HCA 1 (distance
 *                      8 > 5)" (GPU: the rank), and net_ib.cc / 2.4 net.cc
 *                      "NET/IB : GPU Direct RDMA Disabled for ..." (no
 *                      module, distance): why network sends go through host
 *                      memory
 *   graph/rings.cc, 2.4 init.cc "Channel 00/24 :    0   1   2   3" (rank 0:
 *                      each channel's ring; NCCL cuts long lists)
 *   transport/generic.cc "Connected all rings, use ring PXN 0 GDR 0": GDR 0
 *                      once any rank's ring connection went without
 *                      GPUDirect RDMA (net.cc: comm->useGdr = 0, gathered)
 *   init.cc            "comm 0x5555 rank 0 nRanks 16 nNodes 2 localRanks 8 ...":
 *                      the communicator's size
 *   graph/topo.cc      "ncclTopoGetCpuAffinity: Affinity for GPU 3 is 0,112.
 *                      (GPU affinity = 0-55,112-167 ; CPU affinity = 0,112)."
 *                      (from 2.28.3; "is empty, ignoring" where the GPU's
 *                      near CPUs are outside the process's set), up to 2.27
 *                      "Setting affinity for GPU 3 to 01,00000001" (the set
 *                      NCCL keeps, the process's and the GPU's near CPUs in
 *                      common, printed when not empty: a hex mask up to
 *                      2.26, a cpulist in 2.27): the CPUs a process's
 *                      threads, its GPUs' proxy threads among them, may run
 *                      on; the line's "host:pid" says which process
 *   nccl-tests         "#  Rank  3 Group  0 Pid 1234 on hostB device  3 ...":
 *                      the host and group of each rank (cs_nccl_info_rank_host). */
#ifndef CS_NCCL_INFO_H
#define CS_NCCL_INFO_H

#include <glib.h>

typedef enum {
    CS_SEEN_P2P,           /* via P2P/... */
    CS_SEEN_SHM,           /* via SHM/..., via direct shared memory */
    CS_SEEN_NET_GDR,       /* via NET/<IB verbs>/N/GDRDMA */
    CS_SEEN_NET_HOST,      /* via NET/<IB verbs>/N without GDRDMA: through host memory */
    CS_SEEN_NET_SOCKET,    /* via NET/Socket/N */
    CS_SEEN_NET_OTHER,     /* via NET/<another network plugin> (AWS Libfabric, ...) */
    CS_SEEN_XPORT_COUNT
} cs_seen_xport_t;

/* One kind of fact: how many lines said it, the first one's number (0:
 * none) and what it said ("P2P/IPC", "Socket", "GDR 0", "24"). */
typedef struct {
    int count;
    int line;
    char *text;
} cs_seen_fact_t;

/* One connection line: the ranks it joins (sender -> receiver, as NCCL
 * prints them; -1 where the line does not name them), whether it is the
 * receiver's own line ([receive]), its kind and its "via" text. */
typedef struct {
    int from, to;
    gboolean receive;
    cs_seen_xport_t kind;
    int line;
    int text;                      /* its "via" text: index into cs_nccl_info_t.texts */
} cs_seen_conn_t;

/* A ring as rank 0 lists it: the channel and its ranks. */
typedef struct {
    int channel;
    int line;
    GArray *order;                 /* int */
} cs_seen_ring_t;

/* A reason NCCL gave against GPUDirect RDMA: the GPU it names as printed
 * ("3", a rank from NCCL 2.24; "1b000", a PCI bus id up to 2.23; NULL:
 * none, as net_ib.cc's and 2.4's forms). */
typedef struct {
    char *gpu;
    int line;
    char *text;
} cs_seen_reason_t;

typedef struct {
    cs_seen_fact_t xport[CS_SEEN_XPORT_COUNT];
    GArray *conns;                 /* cs_seen_conn_t, in the log's order (at most CS_SEEN_CONNS_MAX) */
    int conns_dropped;             /* connection lines beyond those, counted in xport only */
    GPtrArray *texts;              /* the distinct "via" texts of conns */
    GHashTable *text_ids;          /* text -> its index + 1 (private to the reader) */
    GPtrArray *rings;              /* cs_seen_ring_t*, each channel's first line */
    GArray *gdr_reasons;           /* cs_seen_reason_t, in the log's order */
    cs_seen_fact_t network;        /* "Using network X": X */
    cs_seen_fact_t net_devices;    /* "NET/IB : Using [0]mlx5_0:1/RoCE ...": up to the OOB */
    int net_devices_n;             /* the devices that line lists ("[N]name"), read from the whole line */
    char *net_devices_names;       /* their names, "mlx5_0,mlx5_1" (NULL: none) */
    cs_seen_fact_t no_ib_device;   /* "NET/IB : No device found." */
    cs_seen_fact_t no_gdr;         /* "Connected all rings ... GDR 0" */
    cs_seen_fact_t coll_channels;  /* "N coll channels, ...": N */
    int coll_channels_value;
    GArray *rank_host;             /* int per rank: its host's number (hosts in order of appearance), -1 unknown */
    int max_group;                 /* the largest "# Rank ... Group G" (> 0: the ranks form several communicators) */
    cs_seen_fact_t comm_nranks;    /* init.cc "comm 0x... rank R nRanks N ...": a communicator's size */
    int comm_nranks_min, comm_nranks_max;
    cs_seen_fact_t rank_gpu;       /* the first "# Rank" line's GPU name ("NVIDIA B200") */
    int cpu_lines;                 /* topo.cc's affinity lines, of either form */
    GHashTable *cpu_procs;         /* "host:pid" -> its affinity lines' counts (private to the reader) */
    GHashTable *rank_procs;        /* "host:pid" -> its ranks of the '# Rank' lines (private) */
} cs_nccl_info_t;

#define CS_SEEN_CONNS_MAX (1 << 23)   /* connection lines kept one by one */

cs_nccl_info_t *cs_nccl_info_new(void);
/* Another holder of the same lines (every table of a run that prints
 * several, nccl-tests -d all; a GRcBox); cs_nccl_info_free drops one. */
cs_nccl_info_t *cs_nccl_info_ref(cs_nccl_info_t *s);
void cs_nccl_info_free(cs_nccl_info_t *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(cs_nccl_info_t, cs_nccl_info_free)

/* Takes what one line of a log says, if it is one of NCCL's lines above
 * ("host:pid:tid [dev] NCCL INFO ..." or the words alone at the start of
 * the line); others are ignored. */
void cs_nccl_info_line(cs_nccl_info_t *s, const char *line, int lineno);

/* Records that nccl-tests put rank 'rank' on host number 'host' (its
 * "# Rank" lines, read by the log's reader). */
void cs_nccl_info_rank_host(cs_nccl_info_t *s, int rank, int host, int group);
/* Records that a "# Rank" line put a rank in process 'pid' on host 'name'
 * (the affinity lines' "host:pid" names that process). */
void cs_nccl_info_rank_proc(cs_nccl_info_t *s, const char *name, long pid);
/* Records the GPU name a "# Rank" line prints after its device's bus id
 * (n bytes at 'name', at line 'lineno'); the first one is kept. */
void cs_nccl_info_rank_gpu(cs_nccl_info_t *s, const char *name, size_t n, int lineno);

/* The process whose affinity lines (topo.cc ncclTopoGetCpuAffinity) give it
 * the most GPUs for each CPU it may run on: its first such line, the CPU
 * set printed there, the set's CPUs, its GPUs (those that printed a line,
 * or its ranks of the '# Rank' lines, the more), how many printed "empty,
 * ignoring" (no near CPU in the set), and whether the set is the one NCCL
 * kept (up to 2.27's "Setting affinity") rather than the process's own. */
typedef struct {
    int line;
    const char *set;               /* owned by the cs_nccl_info_t */
    int cpus, gpus, outside;
    gboolean kept;
} cs_seen_cpu_bind_t;
/* FALSE (out untouched) where no affinity line said. */
gboolean cs_nccl_info_cpu_bind(const cs_nccl_info_t *s, cs_seen_cpu_bind_t *out);

/* Whether any line said anything of NCCL's (the rank placement alone does
 * not count). */
gboolean cs_nccl_info_any(const cs_nccl_info_t *s);

/* A network's name as NCCL prints it ("IB", "IBext_v11", "Socket", "AWS
 * Libfabric") as the kind of transport it is: CS_SEEN_NET_GDR for IB verbs
 * (NCCL's own IB, the nccl-rdma-sharp plugin's IBext, Google's gIB: RDMA
 * over IB or RoCE), CS_SEEN_NET_SOCKET, or CS_SEEN_NET_OTHER. */
cs_seen_xport_t cs_nccl_info_net_kind(const char *name);

/* The CPUs of a list in the kernel's cpulist form, which NCCL's
 * ncclCpusetToRangeStr prints too ("0-55,112-167", "0,112"), read up to
 * the first byte not of it (*end_p, if not NULL); -1 if it is not one. */
int cs_cpu_list_count(const char *s, const char **end_p);

/* One line for the report: "connections via P2P/IPC (16 lines, the first
 * at line 40), ...; network IB (line 12); ...; 24 coll channels (line
 * 60)". NULL when nothing was said. */
char *cs_nccl_info_summary(const cs_nccl_info_t *s);

#endif
