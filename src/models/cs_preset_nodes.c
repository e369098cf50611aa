/* The node presets: DGX-1 (V100), DGX A100, DGX H100 / H800, HGX H200,
 * DGX B200, GB200/GB300 NVL72 racks, DGX Spark, a generic PCIe server and
 * a two-card NVLink-bridged workstation. Part figures (GPU, NIC, PCIe) come
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
 * per PCIe switch under each root port. The switches run at the GPU's PCIe
 * generation. The CPU is the Intel generation that introduced that PCIe
 * generation (Skylake-SP Gen3, Ice Lake-SP Gen4, Sapphire Rapids Gen5): an
 * assumption, stated in the description.
 *
 * NVLink bridges are an accessory bought with the cards (NVIDIA sells the
 * 2-way bridges separately for the A100/H100 PCIe, A40, RTX A6000 and
 * GeForce cards), so the pcie preset has none unless --nvlink-bridge pairs
 * asks for one between GPUs 0-1, 2-3, ..., carrying all of the card's
 * bridge links. With --nic the server has one NIC (on the first switch)
 * unless --nics-per-node asks for more, which go one per switch in turn:
 * a server's NIC count is a purchase choice, and one is the common case. */
static const char *const module_gpus[] = { "b200", "gb200", "gb300", "gb10" };

static gboolean is_module(const cs_gpu_model_t *m)
{
    if (strstr(m->name, "sxm") != NULL)
        return TRUE;
    for (gsize i = 0; i < G_N_ELEMENTS(module_gpus); i++)
        if (strcmp(m->name, module_gpus[i]) == 0)
            return TRUE;
    return FALSE;
}

/* The pcie presets' shape when the options leave it open. */
typedef struct {
    const char *gpu;              /* NULL: --gpu is required */
    int gpus;
    int sockets;                  /* 0: 1 up to 4 GPUs, else 2 */
    cs_nvlink_bridge_t bridge;
    const char *label;            /* "PCIe server" */
} pcie_shape_t;

static cs_topo_t *build_pcie_shape(const cs_build_opts_t *o, const pcie_shape_t *sh, GError **err)
{
    const char *gpu = o->gpu != NULL ? o->gpu : sh->gpu;
    if (gpu == NULL) {
        cs_set_flag_error(err, "--gpu", "the pcie preset needs a GPU model; expected one of %s",
                          cs_gpu_model_names());
        return NULL;
    }
    const cs_gpu_model_t *m = cs_gpu_model_find(gpu);
    if (m == NULL) {
        cs_set_flag_error(err, "--gpu", "unknown GPU model '%s'; expected one of %s",
                          gpu, cs_gpu_model_names());
        return NULL;
    }
    if (is_module(m)) {
        const char *use = strcmp(m->name, "gb10") == 0 ? "the dgx-spark preset"
                        : strcmp(m->name, "gb200") == 0 ? "the gb200-nvl72 preset"
                        : strcmp(m->name, "gb300") == 0 ? "the gb300-nvl72 preset" : "a dgx-* or hgx-* preset";
        cs_set_flag_error(err, "--gpu", "%s is an SXM/superchip module, not a PCIe card; expected a PCIe card, or %s for it",
                          m->name, use);
        return NULL;
    }
    int n = o->gpus > 0 ? o->gpus : sh->gpus;
    if (n > 64) {
        cs_set_flag_error(err, "--gpus", "%d GPUs in one PCIe server; expected 1..64", n);
        return NULL;
    }
    int sockets = o->sockets > 0 ? o->sockets : sh->sockets > 0 ? MIN(sh->sockets, n) : (n > 4 ? 2 : 1);
    if (sockets > 2 || sockets > n) {
        cs_set_flag_error(err, "--sockets", "%d sockets for %d GPUs; expected 1 or 2, "
                          "and no more than the GPUs", sockets, n);
        return NULL;
    }
    cs_nvlink_bridge_t bridge = o->nvlink_bridge != CS_BRIDGE_UNSET ? o->nvlink_bridge : sh->bridge;
    if (bridge == CS_BRIDGE_PAIRS && m->nvlinks == 0) {
        cs_set_flag_error(err, "--nvlink-bridge", "%s has no NVLink bridge connector; expected none, "
                          "or a card with one (a100-pcie, h100-pcie, a40, rtx-a6000, rtx3090, rtx2080ti)",
                          m->name);
        return NULL;
    }
    if (bridge == CS_BRIDGE_PAIRS && n < 2) {
        cs_set_flag_error(err, "--nvlink-bridge", "pairs needs at least 2 GPUs, but there is %d; "
                          "expected none or --gpus 2 or more", n);
        return NULL;
    }
    const cs_nic_type_t *nt = NULL;
    if (o->nic != NULL && (nt = cs_nic_type_find(o->nic)) == NULL) {
        cs_set_flag_error(err, "--nic", "unknown NIC type '%s'; expected one of %s",
                          o->nic, cs_nic_type_names());
        return NULL;
    }
    int nics = nt == NULL ? 0 : o->nics_per_node > 0 ? o->nics_per_node : 1;
    /* the sockets' part: the one asked (--cpu), else an Intel server of
     * the GPU's PCIe generation */
    const cs_cpu_part_t *cp = o->cpu != NULL ? cs_cpu_part_find_x86(o->cpu)
                            : m->pcie_gen <= 3 ? cpu_part("skl") : m->pcie_gen == 4 ? cpu_part("icx") : cpu_part("spr");
    if (cp == NULL) {
        cs_set_flag_error(err, "--cpu", "unknown CPU part '%s'; expected one of %s", o->cpu,
                          cs_cpu_part_x86_names());
        return NULL;
    }
    int gen = m->pcie_gen;

    cs_topo_t *t = cs_topo_new(NULL);
    g_autofree int *gpu_dev = g_new(int, n);
    g_autofree int *sw = g_new(int, (n + 1) / 2 + 1);
    int cpu[2];
    for (int s = 0; s < sockets; s++)
        cpu[s] = cs_pb_cpu(t, cp, s);
    if (sockets == 2)
        cs_pb_sys(t, cpu[0], cpu[1], cp);
    for (int i = 0; i < n; i++)
        gpu_dev[i] = cs_pb_gpu(t, m, i, p2p_force_of(o));
    /* socket s holds GPUs [first_s, first_{s+1}); the first socket takes the
     * odd one out */
    int nsw = 0;
    for (int s = 0; s < sockets; s++) {
        int first = s == 0 ? 0 : (n + 1) / 2, last = sockets == 1 || s == 1 ? n : (n + 1) / 2;
        for (int i = first; i < last; i += 2) {
            char name[32];
            g_snprintf(name, sizeof name, "pcisw%d", nsw);
            int p = cs_pb_plain(t, CS_DEV_PCISW, name);
            sw[nsw++] = p;
            cs_pb_pci(t, cpu[s], p, gen, 16);
            cs_pb_pci(t, p, gpu_dev[i], gen, m->pcie_width);
            if (i + 1 < last)
                cs_pb_pci(t, p, gpu_dev[i + 1], gen, m->pcie_width);
        }
    }
    for (int k = 0; k < nics; k++)
        cs_pb_pci(t, sw[k % nsw], cs_pb_nic(t, nt, k), MIN(nt->pcie_gen, gen), nt->pcie_width);
    if (bridge == CS_BRIDGE_PAIRS)
        for (int i = 0; i + 1 < n; i += 2)
            cs_pb_nvl(t, gpu_dev[i], gpu_dev[i + 1], m->nvlinks, m->nvlink_bw);
    g_autofree char *g = gpu_label(m);
    g_autofree char *links = bridge == CS_BRIDGE_PAIRS
        ? g_strdup_printf("NVLink bridges on GPU pairs (%d links each)", m->nvlinks)
        : m->nvlinks > 0 ? g_strdup("no NVLink bridge (--nvlink-bridge pairs adds them)")
                         : g_strdup("no NVLink");
    t->description = g_strdup_printf("%s (%dx %s, %s, Gen%d switches, %d x %s)", sh->label, n, g, links,
                                     gen, sockets, cp->name);
    return t;
}

static cs_topo_t *build_pcie(const cs_build_opts_t *o, GError **err)
{
    static const pcie_shape_t sh = { NULL, 8, 0, CS_BRIDGE_NONE, "PCIe server" };
    return build_pcie_shape(o, &sh, err);
}

/* Two PCIe cards joined by a 2-way NVLink bridge in a one-socket
 * workstation: the common deep-learning desktop (2x RTX A6000 / RTX 3090).
 * The NVIDIA RTX A6000 datasheet sells the bridge for exactly this pair. */
static cs_topo_t *build_pcie_nvlink_pair(const cs_build_opts_t *o, GError **err)
{
    static const pcie_shape_t sh = { "rtx-a6000", 2, 1, CS_BRIDGE_PAIRS, "Workstation" };
    return build_pcie_shape(o, &sh, err);
}

/* ---- NVL72 racks: one NVLink domain of 18 compute trays ----------------------
 * NVIDIA GB200 NVL72 and GB300 NVL72 product pages / datasheets: 72 GPUs and
 * 36 Grace CPUs in one rack, 18 compute trays of 2 superchips (1 Grace + 2
 * GPUs each), 9 NVLink switch trays of 2 NVSwitch chips; every GPU has 18
 * NVLink5 links, one to each of the 18 chips (1.8 TB/s per GPU, 130 TB/s
 * for the domain). The chips are one device (NVSWITCH_PLANE above).
 *
 * The rack is ONE collsim node, because that is what NCCL builds: with
 * multi-node NVLink (comm->MNNVL, NCCL_MNNVL_ENABLE, on when the fabric
 * reports a cluster UUID and clique id) ncclTopoGetSystem fuses the XML
 * topologies of every rank of the clique into one system (graph/topo.cc,
 * "MNNVL clique support": localRanks = the clique), and init.cc counts
 * nNodes by the ring graph's first rank, so each rack is one NCCL node of
 * up to 72 local ranks. The ring, tree and NVLS searches then run over
 * all 72 GPUs, and only traffic between racks uses the NICs. A rack node
 * is several hosts, though: no SYS link joins the Graces of different
 * trays (their ranks reach each other only over NVLink).
 *
 * --gpus N keeps the first ceil(N/4) trays (a job on N GPUs of one rack:
 * the hosts that run no rank are not part of the clique), then the first
 * N GPUs. --nodes R makes R racks joined by their NICs. */
typedef struct {
    const char *label;        /* "GB200 NVL72" */
    const char *gpu, *nic;
    gboolean nic_switch;      /* the GPU and its NIC share the NIC's PCIe
                               * switch (ConnectX-8); else the NIC hangs
                               * under the Grace CPU */
    const char *nic_label;    /* "ConnectX-7 400G" */
} nvl72_layout_t;

#define NVL72_TRAYS 18
#define NVL72_GPUS_PER_TRAY 4

/* GB200 superchip datasheet: Grace reaches its two GPUs over NVLink-C2C at
 * 900 GB/s bidirectional. That is Grace's one C2C port, shared by the two
 * GPUs: 225 GB/s per direction each (an assumption: NVIDIA gives only the
 * superchip's total). */
#define NVL72_C2C_BW (900e9 / 2 / 2)

int cs_pb_c2c(cs_topo_t *t, int gpu, int cpu, double bw)
{
    return cs_topo_add_link(t, gpu, cpu, CS_LINK_C2C, bw, CS_PB_LAT_PCIE, 0);
}

static cs_topo_t *build_nvl72(const nvl72_layout_t *L, const cs_build_opts_t *o)
{
    const cs_gpu_model_t *m = need_gpu(L->gpu);
    const cs_nic_type_t *nt = need_nic(L->nic);
    const cs_cpu_part_t *grace = cpu_part("grace");
    int trays = o->gpus > 0 && o->gpus <= NVL72_TRAYS * NVL72_GPUS_PER_TRAY
        ? (o->gpus + NVL72_GPUS_PER_TRAY - 1) / NVL72_GPUS_PER_TRAY : NVL72_TRAYS;
    cs_topo_t *t = cs_topo_new(NULL);
    int nvs = cs_pb_plain(t, CS_DEV_NVSWITCH, "nvs0");
    for (int tray = 0; tray < trays; tray++) {
        int cpu[2];
        for (int s = 0; s < 2; s++)
            cpu[s] = cs_pb_cpu(t, grace, 2 * tray + s);
        cs_pb_sys(t, cpu[0], cpu[1], grace);
        for (int j = 0; j < NVL72_GPUS_PER_TRAY; j++) {
            int local = tray * NVL72_GPUS_PER_TRAY + j;
            int g = cs_pb_gpu(t, m, local, 0);
            int c = cpu[j / 2];
            cs_pb_c2c(t, g, c, NVL72_C2C_BW);
            cs_pb_nvl(t, g, nvs, m->nvlinks, m->nvlink_bw);
            int nic = cs_pb_nic(t, nt, local);
            if (L->nic_switch) {
                char name[32];
                g_snprintf(name, sizeof name, "pcisw%d", local);
                int p = cs_pb_plain(t, CS_DEV_PCISW, name);
                cs_pb_pci(t, c, p, 5, 16);   /* Grace: PCIe Gen5 (Grace datasheet) */
                cs_pb_pci(t, p, g, m->pcie_gen, m->pcie_width);
                cs_pb_pci(t, p, nic, nt->pcie_gen, nt->pcie_width);
            } else {
                cs_pb_pci(t, c, nic, MIN(nt->pcie_gen, 5), nt->pcie_width);
            }
        }
    }
    g_autofree char *g = gpu_label(m);
    if (trays == NVL72_TRAYS)
        t->description = g_strdup_printf("%s rack (72x %s in one NVLink domain: 18 compute trays of 4 GPUs "
                                         "and 2 Grace, NVLink5 via 18 NVSwitch chips, 1 %s per GPU)",
                                         L->label, g, L->nic_label);
    else
        t->description = g_strdup_printf("%s rack, %d of 18 compute trays (%dx %s in one NVLink domain, "
                                         "NVLink5 via 18 NVSwitch chips, 1 %s per GPU)",
                                         L->label, trays, trays * NVL72_GPUS_PER_TRAY, g, L->nic_label);
    return t;
}

/* GB200 NVL72: 4 ConnectX-7 400G per compute tray, one per GPU (GB200
 * NVL72 datasheet; the OCI BM.GPU.GB200.4 shape: 4 x 400 Gb/s per host),
 * on the Grace's PCIe Gen5: the GPU reaches it over C2C and the CPU (NCCL's
 * P2C path, used for GPUDirect with NCCL_NET_GDR_C2C). IB NDR by default;
 * --nic roce-400g for RoCE. */
static cs_topo_t *build_gb200_nvl72(const cs_build_opts_t *o, GError **err)
{
    static const nvl72_layout_t L = { "GB200 NVL72", "gb200", "ib-ndr", FALSE, "ConnectX-7 400G" };
    return build_nvl72(&L, o);
}

/* GB300 NVL72: a ConnectX-8 SuperNIC (800 Gb/s) per GPU (GB300 NVL72
 * product page); the ConnectX-8 carries a PCIe Gen6 switch (ConnectX-8
 * SuperNIC product brief) through which its GPU reaches it directly and
 * which goes up to the Grace. IB XDR 800G by default; OCI's
 * BM.GPU.GB300.4 runs each as 2 x 400G RoCE (--nic roce-800g gives the
 * same bandwidth per GPU). */
static cs_topo_t *build_gb300_nvl72(const cs_build_opts_t *o, GError **err)
{
    static const nvl72_layout_t L = { "GB300 NVL72", "gb300", "ib-xdr", TRUE, "ConnectX-8 800G" };
    return build_nvl72(&L, o);
}

/* ---- DGX Spark (GB10) -------------------------------------------------------
 * NVIDIA DGX Spark datasheet / user guide: one GB10 superchip (a Blackwell
 * GPU and a 20-core Arm CPU joined by NVLink-C2C, 128 GB unified LPDDR5x at
 * 273 GB/s) and a ConnectX-7 Smart NIC with 200 GbE (QSFP) for joining two
 * Sparks, usually back to back. NVIDIA's GB10 announcement gives the C2C
 * link "5x the bandwidth of PCIe Gen5": 5 x Gen5 x16 per direction. The
 * 200 GbE port reaches the OS as two RDMA devices in two PCI domains
 * (rocep1s0f1 and roceP2p1s0f1 in the NCCL_IB_HCA of DGX Spark NCCL runs),
 * each behind its own PCIe Gen5 x4 link; each carries half of the port,
 * 100 Gb/s, and NCCL needs NCCL_IB_MERGE_NICS to use both as one. */
static cs_topo_t *build_dgx_spark(const cs_build_opts_t *o, GError **err)
{
    const cs_gpu_model_t *m = need_gpu("gb10");
    const cs_nic_type_t *nt = need_nic("roce-100g");
    cs_topo_t *t = cs_topo_new(NULL);
    int cpu = cs_pb_cpu(t, cpu_part("gb10-cpu"), 0);
    int g = cs_pb_gpu(t, m, 0, 0);
    cs_pb_c2c(t, g, cpu, 5 * cs_pcie_bw(5, 16));
    /* NCCL finds every GPU as a PCI device (its XML nests <gpu> in <pci>),
     * so the GPU also has a PCI link to its CPU; NCCL's search sizes its
     * first try by that link or the NVLinks (search.cc getTotalBw), never
     * by C2C. The integrated GPU's link figures are not published: the
     * catalogue's Gen5 x16 stand-in. Paths still prefer C2C (NCCL's
     * better type). */
    cs_pb_pci(t, cpu, g, m->pcie_gen, m->pcie_width);
    for (int k = 0; k < 2; k++)
        cs_pb_pci(t, cpu, cs_pb_nic(t, nt, k), 5, 4);
    t->description = g_strdup("DGX Spark (1x GB10, unified memory, NVLink-C2C to the Arm CPU; ConnectX-7 "
                              "200 GbE seen as 2 RDMA devices of 100 Gb/s)");
    return t;
}

/* ---- the table ------------------------------------------------------------ */

static const cs_node_preset_t node_presets[] = {
    { "dgx1-v100", "NVIDIA DGX-1: 8x V100 SXM2, NVLink2 hybrid cube-mesh, 2x Broadwell, "
      "4 PCIe Gen3 switches, 4x IB EDR", "ib-edr", build_dgx1_v100, FALSE },
    { "dgx-a100", "NVIDIA DGX A100: 8x A100 SXM4, 12 NVLink3 each to 6 NVSwitches, "
      "2x EPYC Rome, 4 PCIe Gen4 complexes, 8x IB HDR 200G", "ib-hdr", build_dgx_a100, FALSE },
    { "dgx-h100", "NVIDIA DGX H100: 8x H100 SXM5, 18 NVLink4 each to 4 NVSwitches, "
      "2x Sapphire Rapids, GPU+NIC per PCIe Gen5 switch, 8x IB NDR 400G", "ib-ndr", build_dgx_h100, FALSE },
    { "dgx-h800", "NVIDIA DGX H800: the DGX H100 with H800 GPUs (8 NVLink4 each), "
      "8x IB NDR 400G", "ib-ndr", build_dgx_h800, FALSE },
    { "hgx-h200", "NVIDIA HGX H200 8-GPU in a DGX H100-style host: 18 NVLink4 per GPU, "
      "8x IB NDR 400G", "ib-ndr", build_hgx_h200, FALSE },
    { "dgx-b200", "NVIDIA DGX B200: 8x B200, 18 NVLink5 each to 2 NVSwitches, "
      "2x Emerald Rapids, 8x ConnectX-7 400G", "ib-ndr", build_dgx_b200, FALSE },
    { "gb200-nvl72", "NVIDIA GB200 NVL72 rack as one node (one NVLink domain, as NCCL's MNNVL sees it): "
      "72 GB200 in 18 trays of 4, NVLink5 1.8 TB/s each, 36 Grace, 72x ConnectX-7 400G; "
      "--gpus N takes the first trays, --nodes R racks", "ib-ndr", build_gb200_nvl72, FALSE },
    { "gb300-nvl72", "NVIDIA GB300 NVL72 rack as one node (one NVLink domain): 72 GB300 in 18 trays of 4, "
      "NVLink5 1.8 TB/s each, 36 Grace, 72x ConnectX-8 800G; --gpus N, --nodes R racks",
      "ib-xdr", build_gb300_nvl72, FALSE },
    { "dgx-spark", "NVIDIA DGX Spark: 1x GB10 (unified memory), ConnectX-7 200 GbE as 2 RDMA devices "
      "of 100G; --nodes 2 for the usual pair of boxes", "roce-100g", build_dgx_spark, FALSE },
    { "pcie", "Generic PCIe server: --gpu MODEL (required), --gpus N (8), --sockets 1|2, "
      "--cpu PART (an Intel Xeon of the GPU's PCIe generation), --p2p on|off, --nvlink-bridge none|pairs (none), 2 GPUs per PCIe switch, "
      "with --nic one NIC unless --nics-per-node", NULL, build_pcie, TRUE },
    { "pcie-nvlink-pair", "Workstation with two PCIe cards joined by an NVLink bridge: --gpu MODEL "
      "(rtx-a6000; also a40, rtx3090, a100-pcie, h100-pcie, rtx2080ti), 1 socket; takes the pcie "
      "options", NULL, build_pcie_nvlink_pair, TRUE },
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
