/* Catalogue of GPU models and NIC kinds. Pure data: every figure carries
 * the document it comes from. "GB/s" below is 1e9 bytes/s; NVLink figures
 * are per link and per direction (datasheets quote the bidirectional sum
 * over all links, which we divide by 2 * links). */
#include "config.h"

#include <string.h>

#include "models/cs_hw.h"

#define GBPS 1e9   /* 1 GB/s in bytes/s */
#define TBPS 1e12
/* A datasheet's GB of GPU memory is binary: nvidia-smi reports 81559 MiB
 * (85.5e9 bytes) usable on an H100 80GB, 143771 MiB on an H200 141GB,
 * 24564 MiB on an RTX 4090 24GB; the catalogue keeps the datasheet's number
 * in GiB, a little above what a run can allocate. */
#define GIB CS_GIB

typedef struct {
    const char *alias;
    const char *name;
} hw_alias_t;

static const cs_gpu_model_t gpu_models[] = {
    /* NVIDIA Tesla V100 datasheet (2020): NVLink 300 GB/s bidirectional over
     * 6 NVLink2 links = 25 GB/s/dir/link; HBM2 900 GB/s; PCIe Gen3 x16. */
    { "v100-sxm", "NVIDIA Tesla V100 SXM2", 70, 2, 6, 25 * GBPS, TRUE, TRUE,
      900 * GBPS, 3, 16, FALSE, 32 * GIB /* 32 GB HBM2, the larger of the datasheet's 16/32 GB */ },
    /* NVIDIA A100 datasheet (2021), 80GB SXM: NVLink3 600 GB/s bidirectional,
     * 12 links; HBM2e 2,039 GB/s; PCIe Gen4 x16. */
    { "a100-sxm", "NVIDIA A100-SXM4-80GB", 80, 3, 12, 25 * GBPS, TRUE, TRUE,
      2039 * GBPS, 4, 16, FALSE, 80 * GIB /* 80 GB */ },
    /* Same datasheet, 80GB PCIe: "NVLink Bridge for 2 GPUs: 600 GB/s" (three
     * bridges, 12 links); HBM2e 1,935 GB/s. */
    { "a100-pcie", "NVIDIA A100 80GB PCIe", 80, 3, 12, 25 * GBPS, TRUE, TRUE,
      1935 * GBPS, 4, 16, FALSE, 80 * GIB /* 80 GB */ },
    /* NVIDIA H100 datasheet (2023), SXM5: NVLink4 900 GB/s over 18 links;
     * HBM3 3.35 TB/s; PCIe Gen5 x16. */
    { "h100-sxm", "NVIDIA H100 80GB HBM3", 90, 4, 18, 25 * GBPS, TRUE, TRUE,
      3.35 * TBPS, 5, 16, FALSE, 80 * GIB /* 80 GB */ },
    /* H800 SXM5 (China export variant): NVLink 400 GB/s = 8 links (NVIDIA
     * H800 product brief); memory as H100 SXM. */
    { "h800-sxm", "NVIDIA H800 80GB HBM3", 90, 4, 8, 25 * GBPS, TRUE, TRUE,
      3.35 * TBPS, 5, 16, FALSE, 80 * GIB /* 80 GB */ },
    /* H100 datasheet, PCIe card: "NVLink bridge 600 GB/s" = 12 links; HBM2e
     * 2.0 TB/s. */
    { "h100-pcie", "NVIDIA H100 PCIe", 90, 4, 12, 25 * GBPS, TRUE, TRUE,
      2.0 * TBPS, 5, 16, FALSE, 80 * GIB /* 80 GB */ },
    /* NVIDIA H200 datasheet (2024), SXM: NVLink 900 GB/s (18 links); HBM3e
     * 4.8 TB/s. */
    { "h200-sxm", "NVIDIA H200 141GB HBM3e", 90, 4, 18, 25 * GBPS, TRUE, TRUE,
      4.8 * TBPS, 5, 16, FALSE, 141 * GIB /* 141 GB */ },
    /* NVIDIA DGX B200 / HGX B200 datasheets: NVLink5 1.8 TB/s per GPU over 18
     * links = 50 GB/s/dir/link; HBM3e 8 TB/s. The GPU's PCIe is Gen6 capable
     * but the hosts shipped with it (Emerald Rapids, ConnectX-7) run Gen5. */
    { "b200", "NVIDIA B200", 100, 5, 18, 50 * GBPS, TRUE, TRUE,
      8 * TBPS, 5, 16, FALSE, 180 * GIB /* DGX B200 datasheet: 1,440 GB for 8 GPUs */ },
    /* GB200 NVL72 datasheet: 1.8 TB/s NVLink per GPU, 8 TB/s HBM3e; host
     * attach is NVLink-C2C to Grace (900 GB/s), NICs on PCIe Gen5. */
    { "gb200", "NVIDIA GB200 (Blackwell GPU)", 100, 5, 18, 50 * GBPS, TRUE, TRUE,
      8 * TBPS, 5, 16, FALSE, 186 * GIB /* GB200 NVL72 datasheet: up to 13.4 TB HBM3e for 72 GPUs */ },
    /* NVIDIA GB300 NVL72 product page and Blackwell Ultra (B300) datasheet:
     * NVLink5 1.8 TB/s per GPU over 18 links = 50 GB/s/dir/link, HBM3e
     * 8 TB/s (288 GB). Compute capability 10.3, which collsim treats as
     * 100 (NCCL's tables switch at 100 and 120). Host interface PCIe Gen6
     * x16 (Blackwell Ultra datasheet), to the ConnectX-8 SuperNIC's
     * built-in PCIe switch in the GB300 compute tray. */
    { "gb300", "NVIDIA GB300 (Blackwell Ultra GPU)", 100, 5, 18, 50 * GBPS, TRUE, TRUE,
      8 * TBPS, 6, 16, FALSE, 288 * GIB /* 288 GB */ },
    /* NVIDIA A40 datasheet (2021): "NVLink 112.5 GB/s (bidirectional)" over
     * a 2-way bridge; the GA102 bridge carries 4 NVLink3 links (nvidia-smi
     * topo -m shows NV4 for a bridged pair) = 14.0625 GB/s/dir/link; GDDR6
     * 696 GB/s; PCIe Gen4 x16. Data-centre part: P2P and GPUDirect RDMA. */
    { "a40", "NVIDIA A40", 86, 3, 4, 14.0625 * GBPS, TRUE, TRUE,
      696 * GBPS, 4, 16, FALSE, 48 * GIB /* 48 GB GDDR6 */ },
    /* NVIDIA RTX A6000 datasheet (2021): NVLink 112.5 GB/s bidirectional
     * over a 2-way low-profile bridge (4 GA102 links, as the A40); GDDR6
     * 768 GB/s; PCIe Gen4 x16. Professional part: P2P and GPUDirect RDMA
     * supported (NVIDIA GPUDirect RDMA documentation lists RTX/Quadro). */
    { "rtx-a6000", "NVIDIA RTX A6000", 86, 3, 4, 14.0625 * GBPS, TRUE, TRUE,
      768 * GBPS, 4, 16, FALSE, 48 * GIB /* 48 GB GDDR6 */ },
    /* GeForce RTX 2080 Ti (Turing whitepaper): NVLink bridge 100 GB/s total
     * over 2 NVLink2 links = 25 GB/s/dir/link; GDDR6 616 GB/s. GeForce:
     * no GPUDirect RDMA; PCIe P2P is not enabled on GeForce by current
     * drivers (cudaDeviceCanAccessPeer returns 0 without NVLink). */
    { "rtx2080ti", "NVIDIA GeForce RTX 2080 Ti", 75, 2, 2, 25 * GBPS, FALSE, FALSE,
      616 * GBPS, 3, 16, TRUE, 11 * GIB /* 11 GB GDDR6 */ },
    /* NVIDIA T4 datasheet (2019): Turing TU104, 16 GB GDDR6 at 320 GB/s,
     * PCIe Gen3 x16, no NVLink, 70 W; a data-centre (Tesla) part, so P2P
     * and GPUDirect RDMA are supported. The GPU of AWS g4dn and GCP
     * n1 + T4 instances, one to eight a host. */
    { "t4", "NVIDIA T4", 75, 0, 0, 0, TRUE, TRUE,
      320 * GBPS, 3, 16, FALSE, 16 * GIB /* 16 GB */ },
    /* GeForce RTX 3090 (Ampere GA102 whitepaper): NVLink bridge 112.5 GB/s
     * total over 4 links = 14.0625 GB/s/dir/link; GDDR6X 936 GB/s. */
    { "rtx3090", "NVIDIA GeForce RTX 3090", 86, 3, 4, 14.0625 * GBPS, FALSE, FALSE,
      936 * GBPS, 4, 16, TRUE, 24 * GIB /* 24 GB GDDR6X */ },
    /* GeForce RTX 4090 (Ada whitepaper): no NVLink; GDDR6X 1,008 GB/s; PCIe
     * Gen4 x16; driver disables PCIe P2P on GeForce. */
    { "rtx4090", "NVIDIA GeForce RTX 4090", 89, 0, 0, 0, FALSE, FALSE,
      1008 * GBPS, 4, 16, TRUE, 24 * GIB /* 24 GB GDDR6X */ },
    /* GeForce RTX 5090 (Blackwell GeForce spec page): no NVLink; GDDR7
     * 1,792 GB/s; PCIe Gen5 x16. */
    { "rtx5090", "NVIDIA GeForce RTX 5090", 120, 0, 0, 0, FALSE, FALSE,
      1792 * GBPS, 5, 16, TRUE, 32 * GIB /* 32 GB GDDR7 */ },
    /* NVIDIA L40S datasheet: no NVLink, GDDR6 864 GB/s, PCIe Gen4 x16;
     * data-centre part, so P2P and GPUDirect RDMA are supported. */
    { "l40s", "NVIDIA L40S", 89, 0, 0, 0, TRUE, TRUE,
      864 * GBPS, 4, 16, FALSE, 48 * GIB /* 48 GB GDDR6 */ },
    /* RTX 6000 Ada Generation datasheet: no NVLink, GDDR6 960 GB/s, Gen4. */
    { "rtx6000-ada", "NVIDIA RTX 6000 Ada Generation", 89, 0, 0, 0, TRUE, TRUE,
      960 * GBPS, 4, 16, FALSE, 48 * GIB /* 48 GB GDDR6 */ },
    /* RTX PRO 6000 Blackwell (workstation/server editions) datasheet: no
     * NVLink, GDDR7 1,792 GB/s, PCIe Gen5 x16, GPUDirect RDMA. */
    { "rtx-pro-6000", "NVIDIA RTX PRO 6000 Blackwell", 120, 0, 0, 0, TRUE, TRUE,
      1792 * GBPS, 5, 16, FALSE, 96 * GIB /* 96 GB GDDR7 */ },
    /* DGX Spark (GB10) spec sheet: compute capability 12.1, which collsim
     * treats as 120 (NCCL's tables switch at 100 and 120); 273 GB/s LPDDR5x
     * unified memory shared with the Grace CPU over NVLink-C2C. One GPU per
     * box: no NVLink, no peer. The GPU is integrated with the CPU and has no
     * PCIe host link of its own; Gen5 x16 is only a stand-in for topologies
     * that omit the link. gdr FALSE is an assumption for this
     * unified-memory part, not verified on hardware. */
    { "gb10", "NVIDIA GB10 (DGX Spark)", 120, 0, 0, 0, FALSE, FALSE,
      273 * GBPS, 5, 16, FALSE, 128 * GIB /* 128 GB unified, shared with the CPU */ },
};

static const hw_alias_t gpu_aliases[] = {
    { "v100", "v100-sxm" }, { "a100", "a100-sxm" }, { "h100", "h100-sxm" },
    { "h800", "h800-sxm" }, { "h200", "h200-sxm" }, { "b200-sxm", "b200" },
    { "rtx6000ada", "rtx6000-ada" }, { "rtxpro6000", "rtx-pro-6000" },
    { "a6000", "rtx-a6000" }, { "rtxa6000", "rtx-a6000" }, { "b300", "gb300" },
    { "tesla-t4", "t4" },
};

/* PCI device ids: Debian's pci.ids 2023.04.10 for parts up to H100/RTX
 * 4090; H200, B200, L40S and RTX 5090 (newer than that file) from the
 * NVIDIA Linux driver README's supported-products appendix (570 series). */
typedef struct {
    unsigned device;
    const char *name;
} hw_pci_t;

static const hw_pci_t gpu_pci_ids[] = {
    { 0x1db1, "v100-sxm" },      /* Tesla V100 SXM2 16GB */
    { 0x1db5, "v100-sxm" },      /* Tesla V100 SXM2 32GB */
    { 0x1df5, "v100-sxm" },      /* Tesla V100 SXM2 16GB */
    { 0x1db8, "v100-sxm" },      /* Tesla V100 SXM3 32GB (DGX-2) */
    { 0x20b0, "a100-sxm" },      /* A100 SXM4 40GB */
    { 0x20b2, "a100-sxm" },      /* A100 SXM4 80GB */
    { 0x20b1, "a100-pcie" },     /* A100 PCIe 40GB */
    { 0x20f1, "a100-pcie" },     /* A100 PCIe 40GB */
    { 0x20b5, "a100-pcie" },     /* A100 PCIe 80GB */
    { 0x2330, "h100-sxm" },      /* H100 SXM5 80GB */
    { 0x2324, "h800-sxm" },      /* H800 */
    { 0x2331, "h100-pcie" },     /* H100 PCIe */
    { 0x2335, "h200-sxm" },      /* H200 */
    { 0x2901, "b200" },          /* B200 */
    { 0x1e04, "rtx2080ti" },     /* GeForce RTX 2080 Ti */
    { 0x1e07, "rtx2080ti" },     /* GeForce RTX 2080 Ti Rev. A */
    { 0x1eb8, "t4" },            /* TU104GL [Tesla T4] */
    { 0x2204, "rtx3090" },       /* GeForce RTX 3090 */
    { 0x2230, "rtx-a6000" },     /* GA102GL [RTX A6000] */
    { 0x2235, "a40" },           /* GA102GL [A40] */
    { 0x2684, "rtx4090" },       /* GeForce RTX 4090 */
    { 0x2b85, "rtx5090" },       /* GeForce RTX 5090 */
    { 0x26b9, "l40s" },          /* L40S */
    { 0x26b1, "rtx6000-ada" },   /* RTX 6000 Ada Generation */
};

/* Representative model per compute capability, for NCCL dumps that carry
 * only sm="..." (the common data-centre part of each generation). */
static const struct { int sm; const char *name; } gpu_by_sm[] = {
    { 70, "v100-sxm" }, { 75, "rtx2080ti" }, { 80, "a100-sxm" },
    { 86, "rtx3090" }, { 89, "l40s" }, { 90, "h100-sxm" },
    { 100, "b200" }, { 120, "rtx-pro-6000" }, { 121, "gb10" },
};

const char *cs_gpu_family(const char *name)
{
    /* the most specific first: "GB200" before "B200", "PRO 6000" before "6000" */
    static const struct {
        const char *word, *family;
    } words[] = {
        { "GB300", "gb300" }, { "B300", "b300" }, { "GB200", "gb200" }, { "B200", "b200" }, { "GB10", "gb10" },
        { "H200", "h200" }, { "H800", "h800" }, { "H100", "h100" }, { "A100", "a100" }, { "V100", "v100" },
        { "PRO 6000", "rtx-pro-6000" }, { "6000 Ada", "rtx6000-ada" }, { "A6000", "rtx-a6000" },
        { "L40S", "l40s" }, { "A40", "a40" }, { "5090", "rtx5090" }, { "4090", "rtx4090" }, { "3090", "rtx3090" },
        { "2080 Ti", "rtx2080ti" }, { "T4", "t4" },
    };
    if (name == NULL)
        return NULL;
    for (gsize i = 0; i < G_N_ELEMENTS(words); i++) {
        size_t n = strlen(words[i].word);
        for (const char *p = strstr(name, words[i].word); p != NULL; p = strstr(p + 1, words[i].word)) {
            /* a word of its own: not "A40" inside "A400", nor "T4" inside "RTX4090" */
            gboolean before = p == name || !g_ascii_isalnum(p[-1]);
            gboolean after = !g_ascii_isalnum(p[n]) || (g_ascii_isdigit(words[i].word[n - 1]) &&
                                                        !g_ascii_isdigit(p[n]));
            if (before && after)
                return words[i].family;
        }
    }
    return NULL;
}

const cs_gpu_model_t *cs_gpu_model_find(const char *name)
{
    if (name == NULL)
        return NULL;
    for (gsize i = 0; i < G_N_ELEMENTS(gpu_aliases); i++)
        if (g_ascii_strcasecmp(name, gpu_aliases[i].alias) == 0) {
            name = gpu_aliases[i].name;
            break;
        }
    for (gsize i = 0; i < G_N_ELEMENTS(gpu_models); i++)
        if (g_ascii_strcasecmp(name, gpu_models[i].name) == 0)
            return &gpu_models[i];
    return NULL;
}

const cs_gpu_model_t *cs_gpu_model_by_pci(unsigned vendor, unsigned device)
{
    if (vendor != 0x10de)   /* NVIDIA's PCI vendor id */
        return NULL;
    for (gsize i = 0; i < G_N_ELEMENTS(gpu_pci_ids); i++)
        if (gpu_pci_ids[i].device == device)
            return cs_gpu_model_find(gpu_pci_ids[i].name);
    return NULL;
}

const cs_gpu_model_t *cs_gpu_model_by_sm(int sm)
{
    for (gsize i = 0; i < G_N_ELEMENTS(gpu_by_sm); i++)
        if (gpu_by_sm[i].sm == sm)
            return cs_gpu_model_find(gpu_by_sm[i].name);
    return NULL;
}

const char *cs_gpu_model_names(void)
{
    static gsize once = 0;
    static char *names;
    if (g_once_init_enter(&once)) {
        GString *s = g_string_new(NULL);
        for (gsize i = 0; i < G_N_ELEMENTS(gpu_models); i++)
            g_string_append_printf(s, "%s%s", i ? ", " : "", gpu_models[i].name);
        names = g_string_free(s, FALSE);
        g_once_init_leave(&once, 1);
    }
    return names;
}

/* NIC kinds. bw is the data rate after line coding and FEC, before
 * transport headers: IB EDR/HDR/NDR/XDR 4x ports carry 100/200/400/800
 * Gb/s (InfiniBand Trade Association roadmap; ConnectX-5/6/7/8 product
 * briefs), Ethernet NN G carries NN Gb/s (IEEE 802.3). Host interface: the
 * ConnectX generation that introduced the speed (ConnectX-5 EDR/100GbE
 * Gen3 x16, ConnectX-6 HDR Gen4 x16, ConnectX-7 NDR Gen5 x16, ConnectX-8
 * XDR / 800GbE Gen6 x16 (ConnectX-8 SuperNIC product brief), ConnectX-4 Lx 25GbE and 50GbE Gen3 x8
 * (ConnectX-4 Lx product brief), Intel I210 1GbE Gen2 x1,
 * Intel X520 10GbE Gen2 x8).
 *
 * lat is one switch's port-to-port latency: Switch-IB 2 (EDR) datasheet
 * 90 ns; Quantum QM8700 (HDR) datasheet 130 ns; Quantum-2 (NDR) and
 * Quantum-X800 (XDR) publish no figure, we keep 130 ns. Ethernet: Spectrum
 * datasheets give ~300 ns cut-through, Tomahawk-class switches 500-800 ns;
 * we use a typical 600 ns for 25-400 GbE data-centre switches, 1 us for
 * 10 GbE and 3 us for store-and-forward 1 GbE access switches (a 1500 B
 * frame alone takes 12 us to serialise at 1 Gb/s; the figure is for small
 * frames). These are typical values, not measurements. */
#define NS 1e-9
static const cs_nic_type_t nic_types[] = {
    { "ib-edr",    CS_NIC_IB,   100e9 / 8,  90 * NS,   3, 16, TRUE },
    { "ib-hdr",    CS_NIC_IB,   200e9 / 8,  130 * NS,  4, 16, TRUE },
    { "ib-ndr",    CS_NIC_IB,   400e9 / 8,  130 * NS,  5, 16, TRUE },
    { "ib-xdr",    CS_NIC_IB,   800e9 / 8,  130 * NS,  6, 16, TRUE },
    { "roce-25g",  CS_NIC_ROCE, 25e9 / 8,   600 * NS,  3, 8,  TRUE },
    { "roce-100g", CS_NIC_ROCE, 100e9 / 8,  600 * NS,  3, 16, TRUE },
    { "roce-200g", CS_NIC_ROCE, 200e9 / 8,  600 * NS,  4, 16, TRUE },
    { "roce-400g", CS_NIC_ROCE, 400e9 / 8,  600 * NS,  5, 16, TRUE },
    { "roce-800g", CS_NIC_ROCE, 800e9 / 8,  600 * NS,  6, 16, TRUE },
    { "eth-1g",    CS_NIC_ETH,  1e9 / 8,    3000 * NS, 2, 1,  FALSE },
    { "eth-10g",   CS_NIC_ETH,  10e9 / 8,   1000 * NS, 2, 8,  FALSE },
    { "eth-25g",   CS_NIC_ETH,  25e9 / 8,   600 * NS,  3, 8,  FALSE },
    { "eth-50g",   CS_NIC_ETH,  50e9 / 8,   600 * NS,  3, 8,  FALSE },
    { "eth-100g",  CS_NIC_ETH,  100e9 / 8,  600 * NS,  3, 16, FALSE },
};

const cs_nic_type_t *cs_nic_type_find(const char *name)
{
    if (name == NULL)
        return NULL;
    for (gsize i = 0; i < G_N_ELEMENTS(nic_types); i++)
        if (g_ascii_strcasecmp(name, nic_types[i].name) == 0)
            return &nic_types[i];
    return NULL;
}

const char *cs_nic_type_names(void)
{
    static gsize once = 0;
    static char *names;
    if (g_once_init_enter(&once)) {
        GString *s = g_string_new(NULL);
        for (gsize i = 0; i < G_N_ELEMENTS(nic_types); i++)
            g_string_append_printf(s, "%s%s", i ? ", " : "", nic_types[i].name);
        names = g_string_free(s, FALSE);
        g_once_init_leave(&once, 1);
    }
    return names;
}

const char *cs_nic_kind_name(cs_nic_kind_t k)
{
    switch (k) {
    case CS_NIC_IB:   return "ib";
    case CS_NIC_ROCE: return "roce";
    case CS_NIC_ETH:  return "ethernet";
    }
    return "?";
}

gboolean cs_nic_kind_parse(const char *s, cs_nic_kind_t *k_p)
{
    static const struct { const char *name; cs_nic_kind_t kind; } names[] = {
        { "ib", CS_NIC_IB }, { "infiniband", CS_NIC_IB },
        { "roce", CS_NIC_ROCE }, { "rocev2", CS_NIC_ROCE },
        { "ethernet", CS_NIC_ETH }, { "eth", CS_NIC_ETH },
    };
    if (s == NULL)
        return FALSE;
    for (gsize i = 0; i < G_N_ELEMENTS(names); i++)
        if (g_ascii_strcasecmp(s, names[i].name) == 0) {
            *k_p = names[i].kind;
            return TRUE;
        }
    return FALSE;
}

/* PCI Express Base Specification: Gen1 2.5 GT/s and Gen2 5 GT/s use 8b/10b
 * (250 and 500 MB/s per lane); Gen3 8 GT/s, Gen4 16, Gen5 32 use 128b/130b
 * (984.6, 1969.2, 3938.5 MB/s per lane). Gen6 64 GT/s PAM4 uses 256-byte
 * FLITs (242 of 256 bytes carry TLP/DLLP payload after FEC and CRC, PCIe
 * 6.0 spec 4.2.3); we keep the 128b/130b-equivalent 7876.9 MB/s per lane,
 * which is within 2% of the FLIT figure and keeps Gen6 = 2 x Gen5. */
double cs_pcie_bw(int gen, int width)
{
    static const double gt_s[] = { 0, 2.5e9, 5e9, 8e9, 16e9, 32e9, 64e9 };
    if (gen < 1 || gen > 6 || width < 1 || width > 32)
        return 0.0;
    double coding = gen <= 2 ? 8.0 / 10.0 : 128.0 / 130.0;
    return gt_s[gen] * coding / 8.0 * width;
}

/* ---- CPU parts -----------------------------------------------------------
 * Inter-socket bandwidth per direction = links x transfer rate x 2 bytes per
 * transfer (QPI and UPI move 16 data bits per transfer per direction; Intel
 * QPI/UPI link descriptions in the Xeon datasheets). Link counts and rates
 * from Intel ARK; family/model ids are CPUID values (Intel SDM vol. 4,
 * table 2-1), which NCCL maps to BDW/SKL/SRP/ERP (topo.cc, ncclTopoAddCpu). */
static const cs_cpu_part_t cpu_parts[] = {
    /* ARK E5-2698 v4: 2 QPI links at 9.6 GT/s (DGX-1 user guide: 2x E5-2698 v4). */
    { "bdw", "Intel Xeon E5-2698 v4 (Broadwell)", CS_CPU_INTEL, 6, 0x4F, 2 * 9.6e9 * 2,
      /* ARK: 4 channels DDR4-2400, 76.8 GB/s */ 76.8e9 },
    /* ARK Xeon Gold 6148: 3 UPI links at 10.4 GT/s. */
    { "skl", "Intel Xeon Scalable (Skylake-SP)", CS_CPU_INTEL, 6, 0x55, 3 * 10.4e9 * 2,
      /* ARK Gold 6148: 6 channels DDR4-2666 x 8 bytes */ 6 * 2666e6 * 8 },
    /* ARK Xeon Platinum 8380: 3 UPI links at 11.2 GT/s. */
    { "icx", "Intel Xeon Scalable (Ice Lake-SP)", CS_CPU_INTEL, 6, 0x6A, 3 * 11.2e9 * 2,
      /* ARK 8380: 8 channels DDR4-3200 x 8 bytes */ 8 * 3200e6 * 8 },
    /* ARK Xeon Platinum 8480+ (8480C is its DGX variant): 4 UPI at 16 GT/s. */
    { "spr", "Intel Xeon Platinum 8480C (Sapphire Rapids)", CS_CPU_INTEL, 6, 0x8F, 4 * 16e9 * 2,
      /* ARK 8480+: 8 channels DDR5-4800 x 8 bytes */ 8 * 4800e6 * 8 },
    /* ARK Xeon Platinum 8570: 4 UPI at 20 GT/s (DGX B200 user guide). */
    { "emr", "Intel Xeon Platinum 8570 (Emerald Rapids)", CS_CPU_INTEL, 6, 0xCF, 4 * 20e9 * 2,
      /* ARK 8570: 8 channels DDR5-5600 x 8 bytes */ 8 * 5600e6 * 8 },
    /* AMD EPYC 7002 (Rome) architecture brief: up to 4 x16 xGMI links
     * between sockets at up to 18 GT/s; we take 16 GT/s x 16 lanes / 8 =
     * 32 GB/s per link per direction (DGX A100 user guide: 2x EPYC 7742). */
    { "rome", "AMD EPYC 7742 (Rome)", CS_CPU_AMD, 23, 0x31, 4 * 16e9 * 16 / 8,
      /* AMD EPYC 7742 product page: 8 channels DDR4-3200, 204.8 GB/s */ 204.8e9 },
    /* AMD EPYC 9004 (Genoa, Zen 4: CPUID family 0x19, models 0x10-0x1F;
     * 0x11 the 96-core parts) and 9005 (Turin, Zen 5: family 0x1A, the
     * Zen 5 core parts models 0x00-0x0F, 0x02 for the 9575F): AMD's EPYC
     * 9004/9005 architecture overviews give up to 4 x16 xGMI3 links between
     * the sockets at up to 32 Gbps, 4 x 32 GT/s x 16 lanes / 8 = 256 GB/s
     * per direction (a platform that routes one link to PCIe has 3), and
     * 12 DDR5 channels a socket: DDR5-4800 on Genoa (460.8 GB/s, the
     * product pages' per-socket figure), DDR5-6000 on Turin (576 GB/s). */
    { "genoa", "AMD EPYC 9004 (Genoa)", CS_CPU_AMD, 0x19, 0x11, 4 * 32e9 * 16 / 8,
      12 * 4800e6 * 8 },
    { "turin", "AMD EPYC 9005 (Turin)", CS_CPU_AMD, 0x1A, 0x02, 4 * 32e9 * 16 / 8,
      12 * 6000e6 * 8 },
    /* NVIDIA Grace (Arm Neoverse V2). NCCL gives Arm CPUs no CPUID
     * family/model (topo.cc: arch ARM). Grace CPU Superchip datasheet: two
     * Grace dies joined by NVLink-C2C at 900 GB/s bidirectional = 450 GB/s
     * per direction; used for the two Graces of a GB200/GB300 compute tray,
     * which one OS sees as NUMA nodes 0 and 1 (the OCI GB300 guide lists
     * its NICs on both). */
    { "grace", "NVIDIA Grace (Neoverse V2)", CS_CPU_ARM, 0, 0, 450e9,
      /* Grace CPU datasheet: LPDDR5X up to 500 GB/s per Grace */ 500e9 },
    /* NVIDIA GB10 (DGX Spark): 20 Arm cores (10 Cortex-X925 + 10
     * Cortex-A725) on one die with the GPU; one socket, so no inter-socket
     * figure applies (sys_bw is never used). */
    { "gb10-cpu", "NVIDIA GB10 Arm CPU (Cortex-X925/A725)", CS_CPU_ARM, 0, 0, 0,
      /* DGX Spark specifications: 273 GB/s LPDDR5x, shared with the GPU */ 273e9 },
};

const cs_cpu_part_t *cs_cpu_part_find(const char *key)
{
    for (gsize i = 0; key != NULL && i < G_N_ELEMENTS(cpu_parts); i++)
        if (g_ascii_strcasecmp(key, cpu_parts[i].key) == 0)
            return &cpu_parts[i];
    return NULL;
}

/* NCCL's own thresholds (graph/topo.cc:748-751) for Intel family 6, plus
 * Ice Lake-SP (model 0x6A) for the link figures; AMD family 23 = Zen 2,
 * family 25 from model 0x10 = Zen 4 (family 25 below it is Zen 3, Milan,
 * which the catalogue does not have), family 26 = Zen 5. NCCL itself gives
 * every AMD CPU one SYS figure (AMD_BW); these set the physical link. */
const cs_cpu_part_t *cs_cpu_part_by_cpuid(cs_cpu_vendor_t vendor, int family, int model)
{
    if (vendor == CS_CPU_INTEL && family == 6 && model > 0) {
        const char *key = model >= 0xCF ? "emr" : model >= 0x8F ? "spr" : model >= 0x6A ? "icx"
                        : model >= 0x55 ? "skl" : "bdw";
        return cs_cpu_part_find(key);
    }
    if (vendor == CS_CPU_AMD && family == 23)
        return cs_cpu_part_find("rome");
    if (vendor == CS_CPU_AMD && family == 0x19 && model >= 0x10 && model <= 0x1F)
        return cs_cpu_part_find("genoa");
    if (vendor == CS_CPU_AMD && family == 0x1A)
        return cs_cpu_part_find("turin");
    return NULL;
}

static gboolean is_x86(const cs_cpu_part_t *c)
{
    return c->vendor == CS_CPU_INTEL || c->vendor == CS_CPU_AMD;
}

const cs_cpu_part_t *cs_cpu_part_find_x86(const char *key)
{
    const cs_cpu_part_t *c = cs_cpu_part_find(key);
    return c != NULL && is_x86(c) ? c : NULL;
}

const char *cs_cpu_part_x86_names(void)
{
    static gsize once = 0;
    static char *names;
    if (g_once_init_enter(&once)) {
        GString *s = g_string_new(NULL);
        for (gsize i = 0; i < G_N_ELEMENTS(cpu_parts); i++)
            if (is_x86(&cpu_parts[i]))
                g_string_append_printf(s, "%s%s", s->len ? ", " : "", cpu_parts[i].key);
        names = g_string_free(s, FALSE);
        g_once_init_leave(&once, 1);
    }
    return names;
}
