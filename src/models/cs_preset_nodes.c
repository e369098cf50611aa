/* The node presets: DGX-1 (V100), DGX A100, DGX H100 / H800, HGX H200,
 * DGX B200 and a generic PCIe server. Part figures (GPU, NIC, PCIe) come
 * from the catalogue in cs_hw.c; the wiring of each chassis from the vendor
 * documents cited at each builder. Nothing here is a measured collective
 * result. */
#include "config.h"

#include <string.h>

#include "models/cs_presets-int.h"
#include "util/cs_error.h"

static const cs_cpu_part_t *cpu_part(const char *key)
{
    const cs_cpu_part_t *c = cs_cpu_part_find(key);
    g_assert(c != NULL);
    return c;
}

/* ---- device and link helpers ---------------------------------------------- */

static void dev_init(cs_device_t *d, cs_dev_kind_t kind, const char *name)
{
    memset(d, 0, sizeof *d);
    d->kind = kind;
    d->name = (char *)name;   /* cs_topo_add_device duplicates it */
    d->node = 0;
    d->local = -1;
    d->rank = -1;
    d->socket = -1;
}

int cs_pb_gpu(cs_topo_t *t, const cs_gpu_model_t *m, int local, int p2p_force)
{
    char name[32];
    cs_device_t d;
    g_snprintf(name, sizeof name, "gpu%d", local);
    dev_init(&d, CS_DEV_GPU, name);
    d.gpu = m;
    d.local = local;
    d.gdr = m->gdr;
    d.p2p_force = p2p_force;
    return cs_topo_add_device(t, &d);
}

int cs_pb_plain(cs_topo_t *t, cs_dev_kind_t kind, const char *name)
{
    cs_device_t d;
    dev_init(&d, kind, name);
    return cs_topo_add_device(t, &d);
}

int cs_pb_cpu(cs_topo_t *t, const cs_cpu_part_t *cpu, int socket)
{
    char name[32];
    cs_device_t d;
    g_snprintf(name, sizeof name, "cpu%d", socket);
    dev_init(&d, CS_DEV_CPU, name);
    d.vendor = cpu->vendor;
    d.socket = socket;
    d.familyid = cpu->familyid;
    d.modelid = cpu->modelid;
    return cs_topo_add_device(t, &d);
}

void cs_pb_nic_fill(cs_device_t *d, const cs_nic_type_t *nt, int local)
{
    d->local = local;
    d->gdr = nt->rdma;           /* GPUDirect RDMA needs an RDMA NIC */
    d->nic_kind = nt->kind;
    d->nic_bw = nt->bw;
    d->nic_ports = 1;
}

int cs_pb_nic(cs_topo_t *t, const cs_nic_type_t *nt, int local)
{
    char name[32], ifname[32];
    cs_device_t d;
    g_snprintf(name, sizeof name, "nic%d", local);
    g_snprintf(ifname, sizeof ifname, nt->rdma ? "mlx5_%d" : "eth%d", local);
    dev_init(&d, CS_DEV_NIC, name);
    cs_pb_nic_fill(&d, nt, local);
    d.ifname = ifname;
    return cs_topo_add_device(t, &d);
}

int cs_pb_pci(cs_topo_t *t, int a, int b, int gen, int width)
{
    int l = cs_topo_add_link(t, a, b, CS_LINK_PCI, cs_pcie_bw(gen, width), CS_PB_LAT_PCIE, 0);
    int r = t->links[l].reverse;
    t->links[l].pcie_gen = t->links[r].pcie_gen = gen;
    t->links[l].pcie_width = t->links[r].pcie_width = width;
    return l;
}

int cs_pb_nvl(cs_topo_t *t, int a, int b, int count, double per_link_bw)
{
    int l = cs_topo_add_link(t, a, b, CS_LINK_NVL, count * per_link_bw, CS_PB_LAT_NVLINK, 0);
    t->links[l].count = t->links[t->links[l].reverse].count = count;
    return l;
}

int cs_pb_sys(cs_topo_t *t, int a, int b, const cs_cpu_part_t *cpu)
{
    return cs_topo_add_link(t, a, b, CS_LINK_SYS, cpu->sys_bw, CS_PB_LAT_SYS, 0);
}

static char *gpu_label(const cs_gpu_model_t *m)
{
    return g_ascii_strup(m->name, -1);
}

static const cs_gpu_model_t *need_gpu(const char *name)
{
    const cs_gpu_model_t *m = cs_gpu_model_find(name);
    g_assert(m != NULL);   /* the catalogue ships these parts */
    return m;
}

static const cs_nic_type_t *need_nic(const char *name)
{
    const cs_nic_type_t *n = cs_nic_type_find(name);
    g_assert(n != NULL);
    return n;
}

static int p2p_force_of(const cs_build_opts_t *o)
{
    return o->p2p < 0 ? 0 : o->p2p > 0 ? 1 : -1;
}

/* ---- DGX-1 with Tesla V100 -------------------------------------------------
 * NVIDIA DGX-1 With Tesla V100 System Architecture (WP-08437-002, 2017),
 * figures 4-5: hybrid cube-mesh of six NVLink2 links per GPU; two quads
 * (GPUs 0-3 and 4-7), 4 PCIe Gen3 switches each with 2 GPUs and one
 * ConnectX-4 EDR 100G NIC, 2 switches per Broadwell socket, sockets joined
 * by QPI. Link multiplicities are those `nvidia-smi topo -m` prints on a
 * DGX-1V (NV1 / NV2); every row sums to 6 links, 24 links in all:
 *   quad 0-3: 0-1 1, 0-2 1, 0-3 2, 1-2 2, 1-3 1, 2-3 2   (9)
 *   quad 4-7: 4-5 1, 4-6 1, 4-7 2, 5-6 2, 5-7 1, 6-7 2   (9)
 *   cross:    0-4 2, 1-5 2, 2-6 1, 3-7 1                 (6) */
static const int dgx1_nvl[8][8] = {
    /*        0  1  2  3  4  5  6  7 */
    /* 0 */ { 0, 1, 1, 2, 2, 0, 0, 0 },
    /* 1 */ { 1, 0, 2, 1, 0, 2, 0, 0 },
    /* 2 */ { 1, 2, 0, 2, 0, 0, 1, 0 },
    /* 3 */ { 2, 1, 2, 0, 0, 0, 0, 1 },
    /* 4 */ { 2, 0, 0, 0, 0, 1, 1, 2 },
    /* 5 */ { 0, 2, 0, 0, 1, 0, 2, 1 },
    /* 6 */ { 0, 0, 1, 0, 1, 2, 0, 2 },
    /* 7 */ { 0, 0, 0, 1, 2, 1, 2, 0 },
};

static cs_topo_t *build_dgx1_v100(const cs_build_opts_t *o, GError **err)
{
    const cs_gpu_model_t *m = need_gpu("v100-sxm");
    const cs_nic_type_t *nt = need_nic("ib-edr");
    cs_topo_t *t = cs_topo_new(NULL);
    int gpu[8], cpu[2];
    for (int s = 0; s < 2; s++)
        cpu[s] = cs_pb_cpu(t, cpu_part("bdw"), s);
    cs_pb_sys(t, cpu[0], cpu[1], cpu_part("bdw"));
    for (int i = 0; i < 8; i++)
        gpu[i] = cs_pb_gpu(t, m, i, p2p_force_of(o));
    for (int sw = 0; sw < 4; sw++) {
        char name[32];
        g_snprintf(name, sizeof name, "pcisw%d", sw);
        int p = cs_pb_plain(t, CS_DEV_PCISW, name);
        cs_pb_pci(t, cpu[sw / 2], p, 3, 16);
        cs_pb_pci(t, p, gpu[2 * sw], m->pcie_gen, m->pcie_width);
        cs_pb_pci(t, p, gpu[2 * sw + 1], m->pcie_gen, m->pcie_width);
        cs_pb_pci(t, p, cs_pb_nic(t, nt, sw), nt->pcie_gen, nt->pcie_width);
    }
    for (int a = 0; a < 8; a++)
        for (int b = a + 1; b < 8; b++)
            if (dgx1_nvl[a][b] > 0)
                cs_pb_nvl(t, gpu[a], gpu[b], dgx1_nvl[a][b], m->nvlink_bw);
    g_autofree char *g = gpu_label(m);
    t->description = g_strdup_printf("DGX-1 (8x %s, NVLink2 hybrid cube-mesh)", g);
    return t;
}

/* NVSWITCH_PLANE: the NVSwitch chips of a baseboard are one device whose
 * link to each GPU bundles all of the GPU's NVLinks (count = links, bw =
 * count x per-link). Every GPU reaches every chip, so the chips act as one
 * non-blocking crossbar; NCCL merges them into a single NVS node too
 * (topo.cc, ncclTopoAddNvLinks: every NVSwitch target goes to the one
 * NVS node), and so does our NCCL-dump reader (cs_topo_xml_nccl.c), so a
 * preset and a dump of the same machine give the same graph. Modelling the
 * chips separately would make each GPU-GPU path cross one chip and see
 * only that chip's share of the links. */

/* ---- DGX A100 ----------------------------------------------------------------
 * NVIDIA DGX A100 System Architecture (WP-10083-001, 2020) and DGX A100 user
 * guide: 8 A100 SXM4, each with 12 NVLink3 links, 2 to each of 6 NVSwitches;
 * 2 AMD EPYC 7742; 4 PCIe Gen4 switch complexes, each with 2 GPUs and 2
 * ConnectX-6 HDR 200G compute NICs, 2 complexes per socket. Each complex
 * is a Broadcom PEX88096 (Gen4) that presents itself as a host-side switch
 * above baseboard switches; `nvidia-smi topo -m` therefore shows PXB for
 * GPU0-mlx5_0. It is one chip, though, and NCCL fuses such sub-switches into
 * their parent (ncclTopoFlattenBcmSwitches, graph/topo.cc:204), so NCCL and
 * the hardware both see one switch holding 2 GPUs and 2 NICs: PIX, with no
 * x16 bottleneck between them. The storage NICs (mlx5_4, mlx5_5) are not
 * modelled; the compute NICs are numbered mlx5_0..7 here. */
static cs_topo_t *build_dgx_a100(const cs_build_opts_t *o, GError **err)
{
    const cs_gpu_model_t *m = need_gpu("a100-sxm");
    const cs_nic_type_t *nt = need_nic("ib-hdr");
    cs_topo_t *t = cs_topo_new(NULL);
    int gpu[8], cpu[2];
    for (int s = 0; s < 2; s++)
        cpu[s] = cs_pb_cpu(t, cpu_part("rome"), s);
    cs_pb_sys(t, cpu[0], cpu[1], cpu_part("rome"));
    for (int i = 0; i < 8; i++)
        gpu[i] = cs_pb_gpu(t, m, i, p2p_force_of(o));
    for (int c = 0; c < 4; c++) {
        char name[32];
        g_snprintf(name, sizeof name, "pcisw%d", c);
        int sw = cs_pb_plain(t, CS_DEV_PCISW, name);
        cs_pb_pci(t, cpu[c / 2], sw, 4, 16);
        cs_pb_pci(t, sw, gpu[2 * c], m->pcie_gen, m->pcie_width);
        cs_pb_pci(t, sw, gpu[2 * c + 1], m->pcie_gen, m->pcie_width);
        cs_pb_pci(t, sw, cs_pb_nic(t, nt, 2 * c), nt->pcie_gen, nt->pcie_width);
        cs_pb_pci(t, sw, cs_pb_nic(t, nt, 2 * c + 1), nt->pcie_gen, nt->pcie_width);
    }
    /* the 6 NVSwitch chips, 2 links from every GPU to each, as one device
     * (see NVSWITCH_PLANE below) */
    int nvs = cs_pb_plain(t, CS_DEV_NVSWITCH, "nvs0");
    for (int i = 0; i < 8; i++)
        cs_pb_nvl(t, gpu[i], nvs, 6 * 2, m->nvlink_bw);
    g_autofree char *g = gpu_label(m);
    t->description = g_strdup_printf("DGX A100 (8x %s, NVLink3 via 6 NVSwitches)", g);
    return t;
}

/* ---- Hopper / Blackwell DGX and HGX ------------------------------------------
 * One layout serves DGX H100, DGX H800, HGX H200 and DGX B200: 8 GPUs on the
 * NVSwitch baseboard; 8 PCIe Gen5 switches, each with one GPU and one
 * ConnectX-7 400G NIC (the GPU reaches its NIC through one switch: PIX, as
 * in the DGX H100 NCCL topology dump, nccl-model.md section 3); switches
 * 0-3 under socket 0, 4-7 under socket 1. */
typedef struct {
    const char *label;       /* "DGX H100" */
    const char *gpu, *nic;
    int nvswitches;
    int links[4];            /* NVLinks from each GPU to NVSwitch chip s
                              * (documentation and a check; the chips are
                              * one device, see NVSWITCH_PLANE) */
    const char *fabric;      /* "NVLink4 via NVSwitch" */
    const char *cpu;         /* CPU part key in the catalogue (cs_cpu_part_find) */
} hgx_layout_t;

static cs_topo_t *build_hgx(const hgx_layout_t *h, const cs_build_opts_t *o)
{
    const cs_gpu_model_t *m = need_gpu(h->gpu);
    const cs_nic_type_t *nt = need_nic(h->nic);
    cs_topo_t *t = cs_topo_new(NULL);
    int gpu[8], cpu[2];
    int total = 0;
    for (int s = 0; s < h->nvswitches; s++)
        total += h->links[s];
    g_assert(total == m->nvlinks);   /* the layout uses every NVLink of the GPU */
    for (int s = 0; s < 2; s++)
        cpu[s] = cs_pb_cpu(t, cpu_part(h->cpu), s);
    cs_pb_sys(t, cpu[0], cpu[1], cpu_part(h->cpu));
    for (int i = 0; i < 8; i++)
        gpu[i] = cs_pb_gpu(t, m, i, p2p_force_of(o));
    for (int i = 0; i < 8; i++) {
        char name[32];
        g_snprintf(name, sizeof name, "pcisw%d", i);
        int p = cs_pb_plain(t, CS_DEV_PCISW, name);
        cs_pb_pci(t, cpu[i / 4], p, 5, 16);
        cs_pb_pci(t, p, gpu[i], MIN(m->pcie_gen, 5), m->pcie_width);
        cs_pb_pci(t, p, cs_pb_nic(t, nt, i), MIN(nt->pcie_gen, 5), nt->pcie_width);
    }
    int nvs = cs_pb_plain(t, CS_DEV_NVSWITCH, "nvs0");
    for (int i = 0; i < 8; i++)
        cs_pb_nvl(t, gpu[i], nvs, total, m->nvlink_bw);
    g_autofree char *g = gpu_label(m);
    t->description = g_strdup_printf("%s (8x %s, %s)", h->label, g, h->fabric);
    return t;
}

/* NVIDIA DGX H100 System Architecture whitepaper / DGX H100 user guide:
 * 18 NVLink4 links per GPU to 4 NVSwitch chips, 5+4+4+5; 2 Xeon Platinum
 * 8480C; 8 ConnectX-7 400G (NDR) compute ports. */
static cs_topo_t *build_dgx_h100(const cs_build_opts_t *o, GError **err)
{
    static const hgx_layout_t h = { "DGX H100", "h100-sxm", "ib-ndr", 4, { 5, 4, 4, 5 },
                                    "NVLink4 via NVSwitch", "spr" };
    return build_hgx(&h, o);
}

/* DGX H800: the DGX H100 chassis with H800 GPUs, whose 8 NVLinks (400 GB/s
 * bidirectional, H800 product brief) reach the same 4 NVSwitch chips.
 * Which NVLink ports stay enabled is not published; we spread them 2+2+2+2. */
static cs_topo_t *build_dgx_h800(const cs_build_opts_t *o, GError **err)
{
    static const hgx_layout_t h = { "DGX H800", "h800-sxm", "ib-ndr", 4, { 2, 2, 2, 2 },
                                    "8 NVLink4 via NVSwitch", "spr" };
    return build_hgx(&h, o);
}

/* HGX H200 (NVIDIA H200 datasheet: HGX H200 8-GPU, NVLink 900 GB/s per GPU
 * through NVSwitch): modelled on the DGX H100 chassis, 8x 400G NDR. */
static cs_topo_t *build_hgx_h200(const cs_build_opts_t *o, GError **err)
{
    static const hgx_layout_t h = { "HGX H200", "h200-sxm", "ib-ndr", 4, { 5, 4, 4, 5 },
                                    "NVLink4 via NVSwitch", "spr" };
    return build_hgx(&h, o);
}

/* NVIDIA DGX B200 user guide / datasheet: 8 B200 with 18 NVLink5 links each
 * to the 2 NVSwitch chips of the HGX B200 baseboard (9+9); 8 ConnectX-7
 * 400G (single-port OSFP) compute NICs; 2 Xeon Platinum 8570. */
static cs_topo_t *build_dgx_b200(const cs_build_opts_t *o, GError **err)
{
    static const hgx_layout_t h = { "DGX B200", "b200", "ib-ndr", 2, { 9, 9 },
                                    "NVLink5 via NVSwitch", "emr" };
    return build_hgx(&h, o);
}

/* ---- generic PCIe server ---------------------------------------------------
 * A common 4U 8-GPU server: GPUs spread evenly over the sockets, two GPUs
 * per PCIe switch under each root port, one NIC per switch when a NIC type
 * is asked. The switches run at the GPU's PCIe generation. The CPU is the
 * Intel generation that introduced that PCIe generation (Skylake-SP Gen3,
 * Ice Lake-SP Gen4, Sapphire Rapids Gen5): an assumption, stated in the
 * description. Cards sold with an NVLink bridge get one between GPUs 0-1,
 * 2-3, ... carrying all of the card's bridge links. */
static const char *const module_gpus[] = { "b200", "gb200", "gb10" };

static gboolean is_module(const cs_gpu_model_t *m)
{
    if (strstr(m->name, "sxm") != NULL)
        return TRUE;
    for (gsize i = 0; i < G_N_ELEMENTS(module_gpus); i++)
        if (strcmp(m->name, module_gpus[i]) == 0)
            return TRUE;
    return FALSE;
}

static cs_topo_t *build_pcie(const cs_build_opts_t *o, GError **err)
{
    if (o->gpu == NULL) {
        cs_set_flag_error(err, "--gpu", "the pcie preset needs a GPU model; expected one of %s",
                          cs_gpu_model_names());
        return NULL;
    }
    const cs_gpu_model_t *m = cs_gpu_model_find(o->gpu);
    if (m == NULL) {
        cs_set_flag_error(err, "--gpu", "unknown GPU model '%s'; expected one of %s",
                          o->gpu, cs_gpu_model_names());
        return NULL;
    }
    if (is_module(m)) {
        cs_set_flag_error(err, "--gpu", "%s is an SXM/superchip module, not a PCIe card; "
                          "use a dgx-* or hgx-* preset for it", m->name);
        return NULL;
    }
    int n = o->gpus > 0 ? o->gpus : 8;
    if (n > 64) {
        cs_set_flag_error(err, "--gpus", "%d GPUs in one PCIe server; expected 1..64", n);
        return NULL;
    }
    int sockets = o->sockets > 0 ? o->sockets : (n > 4 ? 2 : 1);
    if (sockets > 2 || sockets > n) {
        cs_set_flag_error(err, "--sockets", "%d sockets for %d GPUs; expected 1 or 2, "
                          "and no more than the GPUs", sockets, n);
        return NULL;
    }
    const cs_nic_type_t *nt = NULL;
    if (o->nic != NULL && (nt = cs_nic_type_find(o->nic)) == NULL) {
        cs_set_flag_error(err, "--nic", "unknown NIC type '%s'; expected one of %s",
                          o->nic, cs_nic_type_names());
        return NULL;
    }
    const cs_cpu_part_t *cp = m->pcie_gen <= 3 ? cpu_part("skl") : m->pcie_gen == 4 ? cpu_part("icx") : cpu_part("spr");
    int gen = m->pcie_gen;

    cs_topo_t *t = cs_topo_new(NULL);
    g_autofree int *gpu = g_new(int, n);
    int cpu[2];
    for (int s = 0; s < sockets; s++)
        cpu[s] = cs_pb_cpu(t, cp, s);
    if (sockets == 2)
        cs_pb_sys(t, cpu[0], cpu[1], cp);
    for (int i = 0; i < n; i++)
        gpu[i] = cs_pb_gpu(t, m, i, p2p_force_of(o));
    /* socket s holds GPUs [first_s, first_{s+1}); the first socket takes the
     * odd one out */
    int nsw = 0, nnic = 0;
    for (int s = 0; s < sockets; s++) {
        int first = s == 0 ? 0 : (n + 1) / 2, last = sockets == 1 || s == 1 ? n : (n + 1) / 2;
        for (int i = first; i < last; i += 2) {
            char name[32];
            g_snprintf(name, sizeof name, "pcisw%d", nsw++);
            int p = cs_pb_plain(t, CS_DEV_PCISW, name);
            cs_pb_pci(t, cpu[s], p, gen, 16);
            cs_pb_pci(t, p, gpu[i], gen, m->pcie_width);
            if (i + 1 < last)
                cs_pb_pci(t, p, gpu[i + 1], gen, m->pcie_width);
            if (nt != NULL)
                cs_pb_pci(t, p, cs_pb_nic(t, nt, nnic++), MIN(nt->pcie_gen, gen), nt->pcie_width);
        }
    }
    gboolean bridged = m->nvlinks > 0;
    if (bridged)
        for (int i = 0; i + 1 < n; i += 2)
            cs_pb_nvl(t, gpu[i], gpu[i + 1], m->nvlinks, m->nvlink_bw);
    g_autofree char *g = gpu_label(m);
    t->description = g_strdup_printf("PCIe server (%dx %s, %s, Gen%d switches, %d x %s)", n, g,
                                     bridged ? "NVLink bridges on GPU pairs" : "no NVLink",
                                     gen, sockets, cp->name);
    return t;
}

/* ---- the table ------------------------------------------------------------ */

static const cs_node_preset_t node_presets[] = {
    { "dgx1-v100", "NVIDIA DGX-1: 8x V100 SXM2, NVLink2 hybrid cube-mesh, 2x Broadwell, "
      "4 PCIe Gen3 switches, 4x IB EDR", "ib-edr", build_dgx1_v100 },
    { "dgx-a100", "NVIDIA DGX A100: 8x A100 SXM4, 12 NVLink3 each to 6 NVSwitches, "
      "2x EPYC Rome, 4 PCIe Gen4 complexes, 8x IB HDR 200G", "ib-hdr", build_dgx_a100 },
    { "dgx-h100", "NVIDIA DGX H100: 8x H100 SXM5, 18 NVLink4 each to 4 NVSwitches, "
      "2x Sapphire Rapids, GPU+NIC per PCIe Gen5 switch, 8x IB NDR 400G", "ib-ndr", build_dgx_h100 },
    { "dgx-h800", "NVIDIA DGX H800: the DGX H100 with H800 GPUs (8 NVLink4 each), "
      "8x IB NDR 400G", "ib-ndr", build_dgx_h800 },
    { "hgx-h200", "NVIDIA HGX H200 8-GPU in a DGX H100-style host: 18 NVLink4 per GPU, "
      "8x IB NDR 400G", "ib-ndr", build_hgx_h200 },
    { "dgx-b200", "NVIDIA DGX B200: 8x B200, 18 NVLink5 each to 2 NVSwitches, "
      "2x Emerald Rapids, 8x ConnectX-7 400G", "ib-ndr", build_dgx_b200 },
    { "pcie", "Generic PCIe server: --gpu MODEL (required), --gpus N (8), --sockets 1|2, "
      "--p2p on|off, 2 GPUs per PCIe switch, a NIC per switch with --nic", NULL, build_pcie },
};

const cs_node_preset_t *cs_node_preset_find(const char *name)
{
    if (name == NULL)
        return NULL;
    for (gsize i = 0; i < G_N_ELEMENTS(node_presets); i++)
        if (g_ascii_strcasecmp(name, node_presets[i].name) == 0)
            return &node_presets[i];
    return NULL;
}

const cs_node_preset_t *cs_node_preset_at(int i)
{
    return i >= 0 && i < (int)G_N_ELEMENTS(node_presets) ? &node_presets[i] : NULL;
}
