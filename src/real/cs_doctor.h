/* `collsim doctor`: inspects a machine (its sysfs and procfs, live or a tree
 * captured from another host) and the NCCL_* settings, and says what NCCL
 * will do there: which transport, over which device, at what speed, and
 * which settings or machine states will hurt. Read-only: nothing here
 * touches devices beyond reading files. */
#ifndef CS_DOCTOR_H
#define CS_DOCTOR_H

#include <glib.h>
#include "models/cs_nccl_env.h"
#include "models/cs_topo.h"

typedef enum {
    CS_DOCTOR_INFO = 0,
    CS_DOCTOR_WARNING,
    CS_DOCTOR_ERROR
} cs_doctor_severity_t;

/* One finding. 'evidence' names the file (as a path on the inspected
 * machine, "/sys/...") and the value read, or the variable and its origin. */
typedef struct {
    cs_doctor_severity_t severity;
    char *code;        /* stable short id: "gid-index-roce-v1", ... */
    char *what;
    char *evidence;
    char *impact;
    char *fix;         /* NULL when there is nothing to do */
} cs_doctor_finding_t;

/* What NCCL would use for inter-node traffic. */
typedef enum {
    CS_DOCTOR_NET_NONE = 0,   /* NCCL would fail to initialize its network */
    CS_DOCTOR_NET_IB,         /* NET/IB: InfiniBand or RoCE verbs */
    CS_DOCTOR_NET_SOCKET,     /* NET/Socket: TCP */
    CS_DOCTOR_NET_PLUGIN      /* an external plugin named by NCCL_NET */
} cs_doctor_net_t;

typedef struct cs_doctor cs_doctor_t;

/* 'root' is "/" for the live machine, or a directory holding sys/ and
 * proc/ captured from one (see tests/data/sysfs/README). */
cs_doctor_t *cs_doctor_new(const char *root);
void cs_doctor_free(cs_doctor_t *d);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(cs_doctor_t, cs_doctor_free)

/* Reads the machine. Fails only when the root itself is unusable (no sys/
 * directory); every odd or missing file below it becomes "unknown". */
gboolean cs_doctor_scan(cs_doctor_t *d, GError **err);

/* Evaluates NCCL's choices and the rules against 'env' (may be NULL = no
 * NCCL_* variables). Call once, after cs_doctor_scan. 'gpu_model' names the
 * catalogue model to assume for GPUs whose PCI id is not in the catalogue
 * (NULL = report them as unknown). */
void cs_doctor_check(cs_doctor_t *d, const cs_nccl_env_t *env, const char *gpu_model);

/* Findings, errors first, then warnings, then notes; within a severity in
 * the order found (deterministic). */
int cs_doctor_n_findings(const cs_doctor_t *d);
const cs_doctor_finding_t *cs_doctor_finding(const cs_doctor_t *d, int i);
int cs_doctor_count(const cs_doctor_t *d, cs_doctor_severity_t s);
/* The first finding with this code, or NULL. */
const cs_doctor_finding_t *cs_doctor_find(const cs_doctor_t *d, const char *code);

/* NCCL's network choice: kind, the devices ("mlx5_0:1" or "eth0", in
 * NCCL's order) and the speed NCCL reports for each, in Mb/s. */
cs_doctor_net_t cs_doctor_net(const cs_doctor_t *d);
int cs_doctor_net_ndevs(const cs_doctor_t *d);
const char *cs_doctor_net_dev(const cs_doctor_t *d, int i);
int cs_doctor_net_speed_mbps(const cs_doctor_t *d, int i);
/* For NET/IB over RoCE: the GID index NCCL uses on device i; -1 otherwise. */
int cs_doctor_net_gid_index(const cs_doctor_t *d, int i);

/* Reports: the machine inventory, the transport and the findings, as plain
 * text or as a Markdown section. */
char *cs_doctor_report_text(const cs_doctor_t *d);
char *cs_doctor_report_markdown(const cs_doctor_t *d);

/* The machine as a finished one-node collsim topology (GPUs, NVSwitches when
 * their PCI functions are visible, PCIe switches as NCCL sees them, CPUs per
 * NUMA node, NICs). Fails when there is no GPU or a GPU model is unknown. */
cs_topo_t *cs_doctor_topology(const cs_doctor_t *d, GError **err);

const char *cs_doctor_severity_name(cs_doctor_severity_t s);  /* "error", ... */
const char *cs_doctor_net_name(cs_doctor_net_t n);            /* "NET/IB", ... */

#endif
