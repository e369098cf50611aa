/* Catalogue of hardware parts: GPU models and NIC kinds, with the vendor
 * figures (source cited at each table entry in cs_hw.c). Pure data. */
#ifndef CS_HW_H
#define CS_HW_H

#include <glib.h>

/* Bytes in a GiB: GPU memory is counted in them (cs_gpu_model_t.mem_bytes). */
#define CS_GIB 1073741824.0

typedef struct {
    const char *name;        /* catalogue key: "h100-sxm", "rtx4090", ... */
    const char *marketing;   /* "NVIDIA H100 80GB HBM3" */
    int sm;                  /* compute capability * 10: 70, 80, 86, 89, 90, 100, 120 */
    int nvlink_gen;          /* 0 = none, 2 = V100, 3 = A100, 4 = H100, 5 = B200 */
    int nvlinks;             /* links per GPU (SXM) or on the bridge (PCIe cards) */
    double nvlink_bw;        /* physical bytes/s per link per direction */
    gboolean gdr;            /* GPUDirect RDMA supported */
    gboolean p2p;            /* PCIe peer-to-peer supported by the driver (consumer cards: no) */
    double mem_bw;           /* HBM/GDDR bandwidth, bytes/s */
    int pcie_gen;            /* host interface */
    int pcie_width;
    gboolean consumer;       /* GeForce class */
    double mem_bytes;        /* memory capacity, bytes (the datasheet's GB, which is GiB; 0 unknown) */
} cs_gpu_model_t;

const cs_gpu_model_t *cs_gpu_model_find(const char *name); /* case-insensitive; NULL if unknown */
const cs_gpu_model_t *cs_gpu_model_by_pci(unsigned vendor, unsigned device); /* NCCL dumps; NULL if unknown */
const cs_gpu_model_t *cs_gpu_model_by_sm(int sm);           /* a representative model */
/* Comma-separated list of known names, for error messages. */
const char *cs_gpu_model_names(void);
/* The product family a GPU's name says ("b200" for "NVIDIA B200" and the
 * catalogue's b200; "a100" for "A100-SXM4-40GB" and "NVIDIA A100 80GB
 * PCIe"): the words CUDA prints (cudaGetDeviceProperties, nccl-tests'
 * "# Rank" lines) or a catalogue model's marketing name. NULL where none
 * is known: two names of one family are the same chip in other memory or
 * form factors. */
const char *cs_gpu_family(const char *name);

typedef enum { CS_CPU_INTEL = 0, CS_CPU_AMD, CS_CPU_ARM, CS_CPU_POWER, CS_CPU_OTHER } cs_cpu_vendor_t;

/* A CPU socket part: what describes the inter-socket link and lets NCCL's
 * SYS bandwidth rule pick the right generation. */
typedef struct {
    const char *key;         /* "spr", "rome", ... */
    const char *name;        /* "Intel Xeon Platinum 8480C (Sapphire Rapids)" */
    cs_cpu_vendor_t vendor;
    int familyid, modelid;   /* x86 CPUID family/model, as NCCL's XML carries */
    double sys_bw;           /* socket-to-socket bytes/s per direction */
    double mem_bw;           /* DRAM peak of one socket, bytes/s (SHM buffers: cs_shm.h) */
} cs_cpu_part_t;

/* By key ("bdw", "skl", "icx", "spr", "emr", "rome", "genoa", "turin",
 * "grace", "gb10-cpu"); NULL if unknown. */
const cs_cpu_part_t *cs_cpu_part_find(const char *key);
/* The x86 parts only (Intel and AMD: what a PCIe server's sockets hold,
 * the pcie preset's --cpu), and their keys comma-separated for messages. */
const cs_cpu_part_t *cs_cpu_part_find_x86(const char *key);
const char *cs_cpu_part_x86_names(void);
/* The catalogue part of the same generation as a CPUID (Intel family 6 by
 * model thresholds, AMD family 23 = Zen 2, 25 from model 0x10 = Zen 4,
 * 26 = Zen 5), or NULL when nothing fits. */
const cs_cpu_part_t *cs_cpu_part_by_cpuid(cs_cpu_vendor_t vendor, int family, int model);

typedef enum { CS_NIC_IB = 0, CS_NIC_ROCE, CS_NIC_ETH } cs_nic_kind_t;

typedef struct {
    const char *name;        /* "ib-ndr", "roce-400g", "eth-1g", ... */
    cs_nic_kind_t kind;
    double bw;               /* bytes/s per port per direction (data rate after line coding) */
    double lat;              /* one-way port-to-port latency through one switch, seconds */
    int pcie_gen, pcie_width;/* typical host interface of such a NIC */
    gboolean rdma;           /* IB or RoCE */
} cs_nic_type_t;

const cs_nic_type_t *cs_nic_type_find(const char *name);
const char *cs_nic_type_names(void);
const char *cs_nic_kind_name(cs_nic_kind_t k);   /* "ib", "roce", "ethernet" */
gboolean cs_nic_kind_parse(const char *s, cs_nic_kind_t *k_p);

/* Physical PCIe bandwidth per direction (bytes/s) after 8b/10b or 128b/130b
 * coding: gen 1..6, width 1..32. */
double cs_pcie_bw(int gen, int width);

#endif
