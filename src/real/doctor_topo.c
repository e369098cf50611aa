/* collsim doctor --topology: the inspected machine as a one-node collsim
 * topology. PCIe switches are those NCCL would create (doctor_nccl.c), so
 * the simulator's path types match NCCL's on this machine. NVLink is not
 * visible in sysfs: it is inferred only from NVSwitch PCI functions, and the
 * description says so. */
#include "config.h"

#include <string.h>

#include "real/doctor_int.h"
#include "util/cs_error.h"

/* Inter-socket bandwidth per direction by CPU generation = links x rate x 2
 * bytes per transfer (the same parts and sources as the node presets in
 * cs_preset_nodes.c: Intel ARK link counts and rates, AMD EPYC 7002 brief). */
static cs_cpu_vendor_t cpu_vendor(const dr_machine_t *m);

/* The catalogue's part of the same generation (cs_cpu_part_by_cpuid);
 * unknown CPUs get the Skylake-SP figure, and the description says so. */
static double sys_bw(const dr_machine_t *m, gboolean *assumed_p)
{
    const cs_cpu_part_t *part = cs_cpu_part_by_cpuid(cpu_vendor(m), m->cpu_family, m->cpu_model);
    *assumed_p = part == NULL;
    if (part == NULL)
        part = cs_cpu_part_find("skl");
    return part->sys_bw;
}

static cs_cpu_vendor_t cpu_vendor(const dr_machine_t *m)
{
    if (m->cpu_vendor == NULL)
        return CS_CPU_OTHER;
    if (strcmp(m->cpu_vendor, "GenuineIntel") == 0)
        return CS_CPU_INTEL;
    if (strcmp(m->cpu_vendor, "AuthenticAMD") == 0)
        return CS_CPU_AMD;
    if (strcmp(m->cpu_vendor, "ARM") == 0)
        return CS_CPU_ARM;
    return CS_CPU_OTHER;
}

static int gen_of(double gts)
{
    static const double r[] = { 2.5, 5, 8, 16, 32, 64 };
    for (int i = 0; i < 6; i++)
        if (gts > 0 && gts <= r[i] * 1.01)
            return i + 1;
    return 0;
}

typedef struct {
    const cs_doctor_t *d;
    cs_topo_t *t;
    GArray *cpu_ids;        /* NUMA ids, sorted */
    GArray *cpu_devs;       /* device index per cpu_ids entry */
    GHashTable *sw;         /* switch BDF -> device index + 1 */
    int nsw;
} build_t;

static void dev_init(cs_device_t *x, cs_dev_kind_t kind, const char *name)
{
    memset(x, 0, sizeof *x);
    x->kind = kind;
    x->name = (char *)name;   /* cs_topo_add_device copies it */
    x->node = 0;
    x->local = -1;
    x->rank = -1;
    x->socket = -1;
}

static void add_cpu_id(GArray *ids, int id)
{
    for (guint i = 0; i < ids->len; i++)
        if (g_array_index(ids, int, i) == id)
            return;
    g_array_append_val(ids, id);
}

static gint cmp_int(gconstpointer a, gconstpointer b)
{
    return *(const int *)a - *(const int *)b;
}

static int cpu_dev(const build_t *b, int id)
{
    for (guint i = 0; i < b->cpu_ids->len; i++)
        if (g_array_index(b->cpu_ids, int, i) == id)
            return g_array_index(b->cpu_devs, int, i);
    return g_array_index(b->cpu_devs, int, 0);
}

/* A PCIe link for the device's upstream link as NCCL reads it; an unknown
 * speed or width is taken as the part's own interface (gen/width given). */
static void pci_link(cs_topo_t *t, int up, int down, const dr_pci_t *p, int dflt_gen, int dflt_width)
{
    int gen = p != NULL ? gen_of(p->link_gts) : 0;
    int width = p != NULL ? p->link_width : 0;
    if (gen == 0)
        gen = dflt_gen > 0 ? dflt_gen : 4;
    if (width == 0)
        width = dflt_width > 0 ? dflt_width : 16;
    int l = cs_topo_add_link(t, up, down, CS_LINK_PCI, cs_pcie_bw(gen, width), 0.0, 0);
    t->links[l].pcie_gen = gen;
    t->links[l].pcie_width = width;
}

/* Hangs a device under its NCCL switch chain (creating the switches), or
 * straight under its CPU. */
static void attach(build_t *b, int dev, const dr_pci_t *p, int gen, int width)
{
    const dr_machine_t *m = &b->d->m;
    int up = cpu_dev(b, p != NULL ? p->cpu : -1);
    for (guint k = 0; p != NULL && k < p->chain->len; k++) {
        const char *bdf = p->chain->pdata[k];
        int idx = GPOINTER_TO_INT(g_hash_table_lookup(b->sw, bdf)) - 1;
        if (idx < 0) {
            char name[32];
            g_snprintf(name, sizeof name, "pcisw%d", b->nsw++);
            cs_device_t x;
            dev_init(&x, CS_DEV_PCISW, name);
            idx = cs_topo_add_device(b->t, &x);
            g_hash_table_insert(b->sw, (gpointer)bdf, GINT_TO_POINTER(idx + 1));
            pci_link(b->t, up, idx, dr_machine_pci(m, bdf), gen, width);
        }
        up = idx;
    }
    pci_link(b->t, up, dev, p, gen, width);
}

/* NVLink through NVSwitch: each GPU's links spread over the visible
 * switches, the remainder going to the outer switches first (DGX H100:
 * 18 links over 4 switches = 5+4+4+5, as NVIDIA's DGX H100 architecture
 * document and NCCL topology dumps show). */
static int nvlinks_to(int links, int nsw, int s)
{
    int base = links / nsw, extra = links % nsw;
    /* the extra links go to switches 0, n-1, 1, n-2, ... in that order */
    int pos = s < (nsw + 1) / 2 ? 2 * s : 2 * (nsw - 1 - s) + 1;
    return base + (pos < extra ? 1 : 0);
}

cs_topo_t *cs_doctor_topology(const cs_doctor_t *d, GError **err)
{
    const dr_machine_t *m = &d->m;
    g_return_val_if_fail(d->checked, NULL);
    if (m->gpus->len == 0) {
        g_set_error(err, CS_ERROR, CS_ERROR_TOPOLOGY,
                    "collsim: --topology: no NVIDIA GPU is visible on this machine; nothing to export");
        return NULL;
    }
    for (guint i = 0; i < m->gpus->len; i++) {
        const dr_gpu_t *g = m->gpus->pdata[i];
        if (g->model == NULL) {
            g_set_error(err, CS_ERROR, CS_ERROR_TOPOLOGY,
                        "collsim: --topology: GPU %s (PCI id 10de:%04x) is not in collsim's catalogue; "
                        "expected --gpu-model NAME with one of %s", g->pci->bdf, g->pci->device,
                        cs_gpu_model_names());
            return NULL;
        }
    }

    build_t b = { d, cs_topo_new("collsim doctor"), g_array_new(FALSE, FALSE, sizeof(int)),
                  g_array_new(FALSE, FALSE, sizeof(int)), g_hash_table_new(g_str_hash, g_str_equal), 0 };
    GString *desc = g_string_new(NULL);

    /* The exported NICs: ACTIVE RDMA devices; without any, the interfaces
     * NET/Socket uses. */
    GPtrArray *rdma_nics = g_ptr_array_new();
    for (guint i = 0; i < m->rdma->len; i++) {
        dr_rdma_t *r = m->rdma->pdata[i];
        for (int p = 0; p < r->nports; p++)
            if (r->ports[p].state == 4 && r->ports[p].ll != DR_LL_OTHER) {
                g_ptr_array_add(rdma_nics, r);
                break;
            }
    }

    for (guint i = 0; i < m->gpus->len; i++)
        add_cpu_id(b.cpu_ids, ((dr_gpu_t *)m->gpus->pdata[i])->pci->cpu);
    for (guint i = 0; i < rdma_nics->len; i++) {
        const dr_pci_t *p = dr_machine_pci(m, ((dr_rdma_t *)rdma_nics->pdata[i])->bdf);
        add_cpu_id(b.cpu_ids, p != NULL ? p->cpu : -1);
    }
    for (guint i = 0; rdma_nics->len == 0 && i < d->sockifs->len; i++) {
        const dr_if_t *f = m->ifs->pdata[g_array_index(d->sockifs, int, i)];
        const dr_pci_t *p = dr_machine_pci(m, f->bdf);
        if (p != NULL)
            add_cpu_id(b.cpu_ids, p->cpu);
    }
    g_array_sort(b.cpu_ids, cmp_int);
    gboolean assumed = FALSE;
    double sbw = sys_bw(m, &assumed);
    for (guint i = 0; i < b.cpu_ids->len; i++) {
        char name[32];
        g_snprintf(name, sizeof name, "cpu%u", i);
        cs_device_t x;
        dev_init(&x, CS_DEV_CPU, name);
        x.vendor = cpu_vendor(m);
        int id = g_array_index(b.cpu_ids, int, i);
        x.socket = id >= 0 ? id : (int)i;
        x.familyid = m->cpu_family > 0 ? m->cpu_family : 0;
        x.modelid = m->cpu_model > 0 ? m->cpu_model : 0;
        int dev = cs_topo_add_device(b.t, &x);
        g_array_append_val(b.cpu_devs, dev);
        for (guint k = 0; k < i; k++)
            cs_topo_add_link(b.t, g_array_index(b.cpu_devs, int, k), dev, CS_LINK_SYS, sbw, 0.0, 0);
    }

    int gpu_dev[256];
    guint ngpu = MIN(m->gpus->len, G_N_ELEMENTS(gpu_dev));
    const cs_gpu_model_t *model0 = ((dr_gpu_t *)m->gpus->pdata[0])->model;
    gboolean same_model = TRUE;
    for (guint i = 0; i < ngpu; i++) {
        const dr_gpu_t *g = m->gpus->pdata[i];
        char name[32];
        g_snprintf(name, sizeof name, "gpu%u", i);
        cs_device_t x;
        dev_init(&x, CS_DEV_GPU, name);
        x.gpu = g->model;
        x.local = (int)i;
        x.gdr = g->model->gdr;
        gpu_dev[i] = cs_topo_add_device(b.t, &x);
        attach(&b, gpu_dev[i], g->pci, g->model->pcie_gen, g->model->pcie_width);
        same_model &= g->model == model0;
    }

    int nnic = 0;
    for (guint i = 0; i < rdma_nics->len; i++) {
        const dr_rdma_t *r = rdma_nics->pdata[i];
        const dr_port_t *first = NULL;
        int ports = 0;
        for (int p = 0; p < r->nports; p++)
            if (r->ports[p].state == 4 && r->ports[p].ll != DR_LL_OTHER) {
                if (first == NULL)
                    first = &r->ports[p];
                ports++;
            }
        char name[32];
        g_snprintf(name, sizeof name, "nic%d", nnic);
        cs_device_t x;
        dev_init(&x, CS_DEV_NIC, name);
        x.local = nnic++;
        x.nic_kind = first->ll == DR_LL_IB ? CS_NIC_IB : CS_NIC_ROCE;
        /* NCCL's port speed (Mb/s) is the data rate: bytes/s = Mb/s * 1e6 / 8 */
        x.nic_bw = (first->speed_mbps > 0 ? first->speed_mbps : 10000) * 1e6 / 8;
        x.nic_ports = ports;
        x.ifname = r->name;
        x.gdr = d->gdr_how != NULL;   /* NCCL's NIC gdr flag = peer memory or DMA-BUF */
        int dev = cs_topo_add_device(b.t, &x);
        attach(&b, dev, dr_machine_pci(m, r->bdf), 4, 16);
    }
    if (rdma_nics->len == 0) {
        for (guint i = 0; i < d->sockifs->len; i++) {
            const dr_if_t *f = m->ifs->pdata[g_array_index(d->sockifs, int, i)];
            const dr_pci_t *p = dr_machine_pci(m, f->bdf);
            if (p == NULL)
                continue;   /* virtual or loopback: no NIC to model */
            char name[32];
            g_snprintf(name, sizeof name, "nic%d", nnic);
            cs_device_t x;
            dev_init(&x, CS_DEV_NIC, name);
            x.local = nnic++;
            x.nic_kind = CS_NIC_ETH;
            /* net_socket.cc: 10000 Mb/s when the speed is unreadable */
            x.nic_bw = (f->speed > 0 ? f->speed : 10000) * 1e6 / 8;
            x.nic_ports = 1;
            x.ifname = f->name;
            int dev = cs_topo_add_device(b.t, &x);
            attach(&b, dev, p, 3, 4);
        }
    }

    /* NVLink */
    int nsw = (int)m->nvswitches->len;
    gboolean nvl = nsw > 0 && same_model && model0->nvlinks > 0;
    if (nvl) {
        int sw[64];
        nsw = MIN(nsw, (int)G_N_ELEMENTS(sw));
        for (int s = 0; s < nsw; s++) {
            char name[32];
            g_snprintf(name, sizeof name, "nvs%d", s);
            cs_device_t x;
            dev_init(&x, CS_DEV_NVSWITCH, name);
            sw[s] = cs_topo_add_device(b.t, &x);
        }
        for (guint i = 0; i < ngpu; i++)
            for (int s = 0; s < nsw; s++) {
                int n = nvlinks_to(model0->nvlinks, nsw, s);
                if (n <= 0)
                    continue;
                int l = cs_topo_add_link(b.t, gpu_dev[i], sw[s], CS_LINK_NVL, n * model0->nvlink_bw, 0.0, 0);
                b.t->links[l].count = n;
            }
    }

    g_string_printf(desc, "machine read by collsim doctor: %u GPU(s) (%s)", ngpu,
                    same_model ? model0->name : "mixed models");
    if (nnic > 0)
        g_string_append_printf(desc, ", %d NIC(s)", nnic);
    if (nvl)
        g_string_append_printf(desc, ", NVLink inferred from %d NVSwitch PCI functions", nsw);
    else if (model0->nvlinks > 0)
        g_string_append(desc, ", no NVLink modelled (not visible in sysfs)");
    if (b.cpu_ids->len > 1 && assumed)
        g_string_append(desc, ", inter-socket bandwidth assumed (unknown CPU)");
    b.t->description = g_string_free(desc, FALSE);

    g_ptr_array_free(rdma_nics, TRUE);
    g_array_free(b.cpu_ids, TRUE);
    g_array_free(b.cpu_devs, TRUE);
    g_hash_table_destroy(b.sw);
    if (!cs_topo_finish(b.t, err)) {
        cs_topo_free(b.t);
        return NULL;
    }
    return b.t;
}
