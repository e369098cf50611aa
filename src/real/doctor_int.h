/* Private to collsim doctor (doctor*.c and its unit test): the machine as
 * read from sysfs/procfs, the re-implementations of NCCL's selection rules
 * (v2.28.9; sources cited in doctor_nccl.c), and the finding list. */
#ifndef CS_DOCTOR_INT_H
#define CS_DOCTOR_INT_H

#include "real/cs_doctor.h"
#include "models/cs_hw.h"
#include "models/cs_paths.h"

/* ---- file access under a root (doctor_fs.c) -------------------------------- */

typedef struct {
    char *root;   /* "" for the live machine, else the directory, no trailing '/' */
} dr_fs_t;

/* Reads a small regular file (never a FIFO or device; at most 1 MiB),
 * trailing whitespace removed; NULL when absent or unreadable. 'path' is
 * absolute on the inspected machine ("/sys/..."). */
char *dr_read(const dr_fs_t *fs, const char *path);
/* A value to print: dr_read's text as one line of at most DR_MAX_VALUE
 * characters, every control byte (newlines, tabs, escapes) and non-ASCII
 * byte made '?' (dr_one_line). */
#define DR_MAX_VALUE 128
char *dr_read_value(const dr_fs_t *fs, const char *path);
char *dr_one_line(char *s);
/* Sorted (natural order: mlx5_2 < mlx5_10) entry names, hidden ones and
 * ones holding control or non-ASCII bytes skipped; empty when the
 * directory is absent. */
GPtrArray *dr_list(const dr_fs_t *fs, const char *dir);
gboolean dr_exists(const dr_fs_t *fs, const char *path);
gboolean dr_is_dir(const dr_fs_t *fs, const char *path);
/* Resolves a sysfs link as a path on the inspected machine: a real
 * symlink is resolved with realpath (below the root); a captured tree
 * stands in for it with a plain file holding the target, or, for a linked
 * directory that is also read (/sys/bus/pci/devices/BDF), with a directory
 * holding a ".path" file. NULL when none of these is there. */
char *dr_resolve(const dr_fs_t *fs, const char *path);
/* Collapses "." and ".." components of an absolute path. */
char *dr_normalize(const char *path);
int dr_natural_cmp(const char *a, const char *b);

/* Strict-ish number parsing of sysfs values: decimal or 0x-hex integer,
 * optionally followed by a ':' and text ("4: ACTIVE"). */
gboolean dr_parse_long(const char *s, long *v_p);
gboolean dr_is_bdf(const char *s);

/* ---- the machine ----------------------------------------------------------- */

typedef struct {
    char *bdf;             /* "0000:18:00.0" */
    char *path;            /* resolved "/sys/devices/pci0000:15/.../0000:18:00.0", or NULL */
    gboolean has_class;
    unsigned cls, vendor, device, subvendor, subdevice;
    int numa;              /* -1 when unknown (as NCCL, which then uses CPU "-1") */
    double cur_gts, max_gts;   /* GT/s per lane, 0 unknown */
    int cur_width, max_width;  /* lanes, 0 unknown */
    /* NCCL's view: link speed and width = min of the device's and its
     * upstream port's max (xml.cc ncclTopoGetXmlFromSys). */
    double link_gts;
    int link_width;
    GPtrArray *chain;      /* NCCL's PCI switch nodes above the device, top-down (BDF strings) */
    int cpu;               /* NUMA id of the CPU node NCCL hangs the chain under */
} dr_pci_t;

typedef struct {
    int index;
    gboolean present;      /* file read and parsed */
    guint8 raw[16];
    char *text;            /* "fe80::1e34:daff:fe5a:1b2c", "::ffff:10.1.0.5" */
    char *type;            /* gid_attrs/types/N as read, or NULL */
    int version;           /* 1, 2, or -1 when the type is unknown */
    char *ndev;            /* gid_attrs/ndevs/N, or NULL */
} dr_gid_t;

enum { DR_LL_OTHER = 0, DR_LL_IB, DR_LL_ETH };

typedef struct {
    int num;
    char *dir;             /* "/sys/class/infiniband/mlx5_0/ports/1" */
    long state;            /* 4 = ACTIVE; -1 unknown */
    char *state_str;       /* raw "4: ACTIVE" */
    char *phys_state_str;
    char *link_layer_str;
    int ll;                /* DR_LL_* */
    char *rate_str;        /* raw "400 Gb/sec (4X NDR)" */
    double rate_gbps;      /* the number in rate_str, 0 unknown */
    int width;             /* lanes from "(4X NDR)", 0 unknown */
    char *speed_name;      /* "NDR", or NULL */
    int speed_mbps;        /* what NCCL reports for the port (see dr_ib_speed_mbps) */
    dr_gid_t *gids;
    int ngids;             /* the GID table length */
    char *netdev;          /* netdev of the port (GID ndevs or same PCI function), or NULL */
} dr_port_t;

typedef struct {
    char *name;            /* "mlx5_0" */
    char *bdf;             /* PCI function, or NULL */
    char *hca_type, *fw_ver, *board_id;
    dr_port_t *ports;
    int nports;
} dr_rdma_t;

typedef struct {
    char *name;
    char *dir;             /* "/sys/class/net/eth0" */
    long ifindex;          /* 0 unknown */
    long type;             /* ARPHRD: 1 ether, 32 infiniband, 772 loopback; -1 */
    long mtu;              /* -1 unknown */
    long speed;            /* Mb/s; -1 unknown or unreadable */
    char *speed_str;       /* raw, or NULL */
    char *operstate;       /* "up", "down", "unknown", ... or NULL */
    long flags;            /* IFF_* from sysfs, -1 unknown */
    gboolean running;      /* IFF_UP and operstate up/unknown: NCCL's IFF_RUNNING */
    char *bdf;             /* PCI function behind it, NULL for virtual devices */
    GPtrArray *ipv4;       /* address strings */
    GPtrArray *ipv6;       /* non-loopback address strings */
    guint32 *nets4;        /* IPv4 networks from /proc/net/route: pairs (net, mask), host order */
    int nnets4;
} dr_if_t;

typedef struct {
    dr_pci_t *pci;
    const cs_gpu_model_t *model;   /* NULL when unknown */
    gboolean model_assumed;        /* from --gpu-model */
} dr_gpu_t;

typedef struct {
    dr_fs_t fs;
    GPtrArray *pcis;       /* dr_pci_t*, every PCI function, by BDF */
    GPtrArray *gpus;       /* dr_gpu_t*, by BDF */
    GPtrArray *nvswitches; /* dr_pci_t* (borrowed) */
    GPtrArray *rdma;       /* dr_rdma_t*, by name */
    GPtrArray *ifs;        /* dr_if_t*, by name */
    gboolean addr_known;   /* /proc/net address files were readable */
    /* GPUDirect RDMA: paths NCCL checks (net_ib/gdr.cc), empty when absent */
    char *peermem_path;    /* the first present of NCCL's three module paths */
    gboolean peermem_in_proc;      /* "nvidia_peermem" or "nv_peer_mem" in /proc/modules */
    char *nvidia_version;  /* /sys/module/nvidia/version, or NULL */
    char *nvidia_proc_version; /* first line of /proc/driver/nvidia/version */
    gboolean nvidia_open;  /* the open kernel modules (needed for dma-buf) */
    char *kernel;          /* /proc/sys/kernel/osrelease */
    int kernel_major, kernel_minor;
    /* CPU (first processor of /proc/cpuinfo) */
    char *cpu_vendor;      /* vendor_id, or "ARM" for CPU implementer lines */
    int cpu_family, cpu_model;
    char *cpu_name;
} dr_machine_t;

void dr_machine_init(dr_machine_t *m, const char *root);
void dr_machine_clear(dr_machine_t *m);
gboolean dr_machine_scan(dr_machine_t *m, GError **err);
dr_pci_t *dr_machine_pci(const dr_machine_t *m, const char *bdf);

/* ---- NCCL's rules (doctor_nccl.c) ----------------------------------------- */

/* Port speed in Mb/s as NCCL computes it from the verbs speed and width
 * (net_ib/init.cc ibvSpeeds x ibvWidths); -1 for names it does not know. */
int dr_ib_speed_mbps(int width, const char *speed_name);
/* Parses a sysfs rate "400 Gb/sec (4X NDR)". */
gboolean dr_parse_rate(const char *s, double *gbps_p, int *width_p, char **name_p);

/* NCCL's NCCL_IB_HCA / NCCL_SOCKET_IFNAME matching (utils.cc
 * parseStringList + matchIfList, with the leading '^' and '=' of the
 * callers): does 'list' select device 'name' (port 'port', -1 for
 * interfaces)? An empty or NULL list selects everything. */
gboolean dr_nccl_list_selects(const char *list, const char *name, int port);

/* GID helpers (net_ib/connect.cc) */
gboolean dr_gid_parse(const char *s, guint8 raw_p[16]);
gboolean dr_gid_is_ipv4(const guint8 raw[16]);       /* IPv4-mapped (or its multicast) */
gboolean dr_gid_valid(const guint8 raw[16]);         /* configured and not link-local */
gboolean dr_gid_link_local(const guint8 raw[16]);
gboolean dr_gid_zero(const guint8 raw[16]);
/* NCCL_IB_ADDR_RANGE as NCCL parses it for family 'af' (AF_INET or
 * AF_INET6); FALSE (no filter) when unset or not understood. */
gboolean dr_parse_addr_range(const char *s, int af, guint8 prefix_p[16], int *len_p);
/* ncclIbGetGidIndex for a RoCE port with NCCL_IB_GID_INDEX unset. */
int dr_gid_autopick(const dr_gid_t *gids, int n, int af, const guint8 *prefix, int prefixlen,
                    int roce_version);
/* ncclIbGetGidIndex for an InfiniBand port: 1 if GID 1 carries a FLID. */
int dr_gid_ib_pick(const dr_gid_t *gids, int n);

/* NCCL's PCI tree: the switch nodes NCCL creates above a device whose
 * resolved sysfs path is 'path' (xml.cc ncclTopoGetXmlFromSys walks up two
 * levels at a time, stopping at the root complex), after merging the
 * second level of Broadcom PEX switches (topo.cc ncclTopoFlattenBcmSwitches). */
GPtrArray *dr_nccl_pci_chain(const dr_machine_t *m, const char *path);
/* NCCL's path type between two PCI devices: PIX, PXB, PHB or SYS. */
cs_path_type_t dr_pci_path_type(const dr_pci_t *a, const dr_pci_t *b);
const char *dr_path_name(cs_path_type_t p);

/* The interfaces NCCL's ncclFindInterfaces returns for prefix list 'list'
 * ("^docker,lo,virbr" syntax), family filter 'family' (0 any, 4, 6), at
 * most 'max': indices into m->ifs, in getifaddrs order (IPv4 addresses by
 * ifindex first, then IPv6). */
GArray *dr_find_interfaces(const dr_machine_t *m, const char *list, int family, int max);

/* ---- findings (doctor_rules.c) --------------------------------------------- */

typedef struct {
    int rdma, port;        /* indices into m->rdma / ports */
    int gid_index;         /* -1 for InfiniBand when not relevant */
    int speed_mbps;
    char label[80];        /* "mlx5_0:1" */
} dr_ibdev_t;

struct cs_doctor {
    dr_machine_t m;
    gboolean scanned, checked;
    GPtrArray *found[3];   /* cs_doctor_finding_t* per severity, in the order found */
    GPtrArray *findings;   /* errors, warnings, notes: built at the end of check */
    cs_doctor_net_t net;
    GArray *ibdevs;        /* dr_ibdev_t: NET/IB devices in NCCL's order */
    GArray *sockifs;       /* int: NET/Socket interfaces (indices into m.ifs) */
    int boot_if;           /* bootstrap interface, -1 when none */
    char *boot_how;        /* how NCCL chose it ("NCCL_SOCKET_IFNAME=eth0", "auto: ...") */
    char *plugin;          /* NCCL_NET naming an external plugin */
    char *net_line;        /* "NCCL will use NET/IB over ..." */
    char *net_note;        /* what that means for bandwidth, or NULL */
    char *gdr_how;         /* "nvidia_peermem", "dma-buf (likely)" or NULL */
    GPtrArray *gpu_nic;    /* per GPU: "mlx5_0 PIX" lines for the report */
};

void dr_add(cs_doctor_t *d, cs_doctor_severity_t sev, const char *code, const char *evidence,
            const char *impact, const char *fix, const char *fmt, ...) G_GNUC_PRINTF(7, 8);

/* Several devices with the same problem make one finding. */
typedef struct {
    int n;
    GString *items;        /* "mlx5_0:1, mlx5_1:1" */
    GString *evidence;     /* "PATH = VALUE; ..." */
} dr_agg_t;
void dr_agg_init(dr_agg_t *a);
void dr_agg_item(dr_agg_t *a, const char *item);
void dr_agg_evidence(dr_agg_t *a, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
void dr_agg_clear(dr_agg_t *a);

/* NCCL_* values as NCCL reads them. */
typedef struct {
    cs_doctor_t *d;
    const cs_nccl_env_t *env;
} dr_ctx_t;
const char *dr_env(const dr_ctx_t *c, const char *name);           /* NULL when unset */
char *dr_env_evidence(const dr_ctx_t *c, const char *name);        /* "NCCL_X=V (origin)" */
/* An integer parameter as ncclLoadParam reads it: strtoll(s, NULL, 0),
 * empty = unset = 'dflt'. */
long dr_env_long(const dr_ctx_t *c, const char *name, long dflt);

/* The rule sets: NCCL's choices and the settings (doctor_rules.c), then
 * the machine's health given those choices (doctor_health.c). */
void dr_rules_nccl(dr_ctx_t *c, const char *gpu_model);
void dr_rule_gid(dr_ctx_t *c);     /* doctor_gid.c, for NET/IB */
void dr_rules_health(dr_ctx_t *c);

#endif
