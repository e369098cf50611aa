/* collsim doctor: the machine's health given NCCL's choices: RDMA port
 * states, RoCE MTU, PCIe links trained below their capability, the NVIDIA
 * driver, GPUDirect RDMA and the PCIe distance from each GPU to its NIC. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "real/doctor_int.h"

static int gen_of(double gts)
{
    /* PCIe per-lane rates 2.5/5/8/16/32/64 GT/s are generations 1-6. */
    static const double r[] = { 2.5, 5, 8, 16, 32, 64 };
    for (int i = 0; i < 6; i++)
        if (gts > 0 && gts <= r[i] * 1.01)
            return i + 1;
    return 0;
}

static gboolean is_selected(const cs_doctor_t *d, int rdma, int port)
{
    for (guint i = 0; i < d->ibdevs->len; i++) {
        const dr_ibdev_t *x = &g_array_index(d->ibdevs, dr_ibdev_t, i);
        if (x->rdma == rdma && x->port == port)
            return TRUE;
    }
    return FALSE;
}

static const dr_if_t *find_if(const dr_machine_t *m, const char *name)
{
    for (guint i = 0; name != NULL && i < m->ifs->len; i++)
        if (strcmp(((dr_if_t *)m->ifs->pdata[i])->name, name) == 0)
            return m->ifs->pdata[i];
    return NULL;
}

/* ---- inventory-level notes ------------------------------------------------------- */

static void rule_inventory(dr_ctx_t *c)
{
    dr_machine_t *m = &c->d->m;
    if (m->gpus->len == 0)
        dr_add(c->d, CS_DOCTOR_INFO, "no-gpus", "/sys/bus/pci/devices: no function with vendor 0x10de "
               "and class 0x0302xx or 0x0300xx",
               "NCCL needs NVIDIA GPUs; only the network part of this report applies", NULL,
               "no NVIDIA GPU is visible on this machine");
    else if (m->nvidia_version == NULL && m->nvidia_proc_version == NULL)
        dr_add(c->d, CS_DOCTOR_WARNING, "nvidia-driver-missing",
               "/sys/module/nvidia/version absent; /proc/driver/nvidia/version absent",
               "CUDA and NCCL cannot use the GPUs", "install or load the NVIDIA driver (modprobe nvidia)",
               "%u NVIDIA GPU(s) but the nvidia kernel module is not loaded", m->gpus->len);
    if (!m->addr_known && m->ifs->len > 0)
        dr_add(c->d, CS_DOCTOR_INFO, "addresses-unknown",
               "/proc/net/route, /proc/net/fib_trie and /proc/net/if_inet6 absent",
               "interface selection assumes every running interface has an IPv4 address", NULL,
               "the interfaces' IP addresses are not known");
}

/* ---- RDMA ports ------------------------------------------------------------------ */

static void rule_ports(dr_ctx_t *c)
{
    cs_doctor_t *d = c->d;
    dr_machine_t *m = &d->m;
    dr_agg_t down, init, other;
    dr_agg_init(&down);
    dr_agg_init(&init);
    dr_agg_init(&other);
    for (guint i = 0; i < m->rdma->len; i++) {
        dr_rdma_t *r = m->rdma->pdata[i];
        for (int p = 0; p < r->nports; p++) {
            dr_port_t *port = &r->ports[p];
            g_autofree char *label = g_strdup_printf("%s:%d", r->name, port->num);
            if (port->state == 4 && port->ll == DR_LL_OTHER) {
                dr_agg_item(&other, label);
                dr_agg_evidence(&other, "%s/link_layer = %s", port->dir,
                                port->link_layer_str ? port->link_layer_str : "(unreadable)");
                continue;
            }
            if (port->state == 4)
                continue;
            /* IB port states (ibv_port_state): 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE */
            dr_agg_t *a = port->state == 2 || port->state == 3 ? &init : &down;
            dr_agg_item(a, label);
            dr_agg_evidence(a, "%s/state = %s, phys_state = %s", port->dir,
                            port->state_str ? port->state_str : "(unreadable)",
                            port->phys_state_str ? port->phys_state_str : "(unreadable)");
        }
    }
    if (init.n > 0)
        dr_add(d, CS_DOCTOR_WARNING, "rdma-port-not-active", init.evidence->str,
               "NCCL uses only ACTIVE ports; on InfiniBand INIT/ARMED means the link is up but no "
               "subnet manager has configured it",
               "start a subnet manager (opensm, UFM, or the switch's SM) for the fabric",
               "%d RDMA port(s) have link but are not ACTIVE: %s", init.n, init.items->str);
    if (down.n > 0)
        dr_add(d, CS_DOCTOR_INFO, "rdma-port-down", down.evidence->str,
               "NCCL skips these ports (not cabled, disabled, or no link)", NULL,
               "%d RDMA port(s) are down: %s", down.n, down.items->str);
    if (other.n > 0)
        dr_add(d, CS_DOCTOR_INFO, "rdma-link-layer-unknown", other.evidence->str,
               "NCCL uses only InfiniBand and Ethernet (RoCE) ports", NULL,
               "RDMA port(s) with another link layer: %s", other.items->str);
    dr_agg_clear(&down);
    dr_agg_clear(&init);
    dr_agg_clear(&other);
}

/* Linux include/rdma/ib_addr.h iboe_get_mtu: the RoCE path MTU is the
 * largest IB MTU that fits the netdev MTU less 96 bytes of headers (GRH 40,
 * UDP 8, BTH 12, XRC 4, AtomicETH 28, ICRC 4). */
static int roce_mtu(long netdev_mtu)
{
    long m = netdev_mtu - 96;
    static const int ib[] = { 4096, 2048, 1024, 512, 256 };
    for (gsize i = 0; i < G_N_ELEMENTS(ib); i++)
        if (m >= ib[i])
            return ib[i];
    return 0;
}

/* RoCEv2 goodput per MTU (reference fabric-models.md §4, derived from the
 * header sizes): 1024 92.59%, 2048 96.15%, 4096 98.04%. */
static double roce_goodput(int mtu)
{
    return mtu >= 4096 ? 0.9804 : mtu >= 2048 ? 0.9615 : mtu >= 1024 ? 0.9259 : 0;
}

static void rule_roce_mtu(dr_ctx_t *c)
{
    cs_doctor_t *d = c->d;
    dr_machine_t *m = &d->m;
    dr_agg_t used, unused;
    dr_agg_init(&used);
    dr_agg_init(&unused);
    int worst = 4096;
    for (guint i = 0; i < m->rdma->len; i++) {
        dr_rdma_t *r = m->rdma->pdata[i];
        for (int p = 0; p < r->nports; p++) {
            dr_port_t *port = &r->ports[p];
            const dr_if_t *f = find_if(m, port->netdev);
            if (port->state != 4 || port->ll != DR_LL_ETH || f == NULL || f->mtu <= 0)
                continue;
            int rm = roce_mtu(f->mtu);
            if (rm >= 4096)
                continue;
            gboolean sel = d->net == CS_DOCTOR_NET_IB && is_selected(d, (int)i, p);
            dr_agg_t *a = sel ? &used : &unused;
            g_autofree char *item = g_strdup_printf("%s:%d via %s (MTU %ld -> RoCE MTU %d)", r->name,
                                                    port->num, f->name, f->mtu, rm);
            dr_agg_item(a, item);
            dr_agg_evidence(a, "%s/mtu = %ld", f->dir, f->mtu);
            if (sel && rm < worst)
                worst = rm;
        }
    }
    const char *fix = "set the netdev MTU to 4200 or more (commonly 9000) here and on every switch "
                      "port on the path";
    if (used.n > 0) {
        g_autofree char *impact = g_strdup_printf(
            "RoCE packets carry at most %d B: goodput %.2f%% of line rate instead of %.2f%% at 4096 B, "
            "and more packets per message for the NIC to process",
            worst, 100 * roce_goodput(worst), 100 * roce_goodput(4096));
        dr_add(d, CS_DOCTOR_WARNING, "roce-mtu-small", used.evidence->str, impact, fix,
               "RoCE ports NCCL uses run below the 4096-byte RoCE MTU: %s", used.items->str);
    }
    if (unused.n > 0)
        dr_add(d, CS_DOCTOR_INFO, "roce-mtu-small", unused.evidence->str,
               "NCCL does not use these ports with the current settings", fix,
               "RoCE ports run below the 4096-byte RoCE MTU: %s", unused.items->str);
    dr_agg_clear(&used);
    dr_agg_clear(&unused);
}

/* ---- PCIe links ------------------------------------------------------------------- */

static void check_pcie(dr_agg_t *a, const dr_pci_t *p, const char *what, gboolean width_only)
{
    if (p == NULL)
        return;
    gboolean slow_width = p->cur_width > 0 && p->max_width > 0 && p->cur_width < p->max_width;
    gboolean slow_speed = !width_only && p->cur_gts > 0 && p->max_gts > 0 && p->cur_gts < p->max_gts * 0.99;
    if (!slow_width && !slow_speed)
        return;
    int cg = gen_of(p->cur_gts), mg = gen_of(p->max_gts);
    double cur = cg > 0 ? cs_pcie_bw(cg, p->cur_width) : 0, max = mg > 0 ? cs_pcie_bw(mg, p->max_width) : 0;
    g_autofree char *item = cur > 0 && max > 0
        ? g_strdup_printf("%s %s (x%d %g GT/s = %.1f GB/s, capable of x%d %g GT/s = %.1f GB/s)", what, p->bdf,
                          p->cur_width, p->cur_gts, cur / 1e9, p->max_width, p->max_gts, max / 1e9)
        : g_strdup_printf("%s %s (x%d, capable of x%d)", what, p->bdf, p->cur_width, p->max_width);
    dr_agg_item(a, item);
    dr_agg_evidence(a, "/sys/bus/pci/devices/%s/current_link_width = %d, max_link_width = %d, "
                    "current_link_speed = %g GT/s, max_link_speed = %g GT/s",
                    p->bdf, p->cur_width, p->max_width, p->cur_gts, p->max_gts);
}

static void rule_pcie(dr_ctx_t *c)
{
    cs_doctor_t *d = c->d;
    dr_machine_t *m = &d->m;
    dr_agg_t a;
    dr_agg_init(&a);
    GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; i < m->rdma->len; i++) {
        dr_rdma_t *r = m->rdma->pdata[i];
        if (r->bdf == NULL || g_hash_table_contains(seen, r->bdf))
            continue;
        g_hash_table_add(seen, r->bdf);
        check_pcie(&a, dr_machine_pci(m, r->bdf), r->name, FALSE);
    }
    for (guint i = 0; d->net == CS_DOCTOR_NET_SOCKET && i < d->sockifs->len; i++) {
        const dr_if_t *f = m->ifs->pdata[g_array_index(d->sockifs, int, i)];
        if (f->bdf == NULL || g_hash_table_contains(seen, f->bdf))
            continue;
        g_hash_table_add(seen, f->bdf);
        check_pcie(&a, dr_machine_pci(m, f->bdf), f->name, FALSE);
    }
    /* GPUs lower their link speed when idle to save power, so only a
     * narrower link is a fault. */
    for (guint i = 0; i < m->gpus->len; i++) {
        dr_gpu_t *g = m->gpus->pdata[i];
        g_autofree char *what = g_strdup_printf("gpu%u", i);
        check_pcie(&a, g->pci, what, TRUE);
    }
    if (a.n > 0)
        dr_add(d, CS_DOCTOR_WARNING, "pcie-link-degraded", a.evidence->str,
               "the device's PCIe link carries less than the device can: NIC and GPU-NIC transfers are "
               "capped at the lower rate",
               "reseat the card or move it to a full-width slot; check BIOS link settings and risers",
               "PCIe links trained below their capability: %s", a.items->str);
    g_hash_table_destroy(seen);
    dr_agg_clear(&a);
}

/* ---- GPUDirect RDMA and GPU-NIC distance ------------------------------------------ */

/* paths.cc ncclGetLevel: a path name (topoPathTypeStr, LOC..SYS), or an
 * old-style integer 0-5 = LOC, PIX, PXB, PHB, SYS, SYS; default PXB. */
static cs_path_type_t gdr_level(const dr_ctx_t *c)
{
    const char *s = dr_env(c, "NCCL_NET_GDR_LEVEL");
    if (s == NULL)
        return CS_PATH_PXB;
    for (int i = 0; i <= CS_PATH_SYS; i++)
        if (strcmp(s, dr_path_name(i)) == 0)
            return i;
    if (s[0] >= '0' && s[0] <= '9') {
        static const cs_path_type_t old[] = { CS_PATH_LOC, CS_PATH_PIX, CS_PATH_PXB, CS_PATH_PHB,
                                              CS_PATH_SYS, CS_PATH_SYS };
        long v = strtol(s, NULL, 0);
        return old[v < 0 ? 0 : v > 5 ? 5 : v];
    }
    return CS_PATH_PXB;
}

static gboolean dmabuf_likely(const dr_machine_t *m)
{
    /* DMA-BUF GPU memory registration needs Linux >= 5.12
     * (ibv_reg_dmabuf_mr) and NVIDIA's open kernel modules from r515
     * (NVIDIA GPUDirect RDMA documentation, "Using DMA-BUF"). */
    int major = 0;
    if (m->nvidia_version != NULL)
        sscanf(m->nvidia_version, "%d", &major);
    gboolean kernel = m->kernel_major > 5 || (m->kernel_major == 5 && m->kernel_minor >= 12);
    return kernel && m->nvidia_open && major >= 515;
}

static void rule_gdr(dr_ctx_t *c)
{
    cs_doctor_t *d = c->d;
    dr_machine_t *m = &d->m;
    if (m->peermem_path != NULL)
        d->gdr_how = g_strdup_printf("peer memory module (%s present)", m->peermem_path);
    else if (dmabuf_likely(m))
        d->gdr_how = g_strdup("DMA-BUF (likely: open NVIDIA kernel module and Linux >= 5.12; NCCL "
                              "confirms it at run time)");
    if (d->net != CS_DOCTOR_NET_IB || m->gpus->len == 0)
        return;
    if (d->gdr_how == NULL) {
        g_autofree char *ev = g_strdup_printf(
            "/sys/module/nvidia_peermem/version absent; /sys/kernel/mm/memory_peers/nv_mem/version absent; "
            "/proc/sys/kernel/osrelease = %s; /proc/driver/nvidia/version = %s",
            m->kernel ? m->kernel : "(unreadable)", m->nvidia_proc_version ? m->nvidia_proc_version : "(absent)");
        dr_add(d, CS_DOCTOR_WARNING, "gdr-unavailable", ev,
               "without GPUDirect RDMA NCCL stages every network transfer through host memory: lower "
               "inter-node bandwidth, extra PCIe traffic and CPU work",
               "load the peer memory module (modprobe nvidia_peermem), or use NVIDIA's open kernel "
               "modules (r515+) on Linux >= 5.12 for DMA-BUF",
               "GPUDirect RDMA is not available: no peer memory module is loaded%s",
               m->peermem_in_proc ? " (listed in /proc/modules, but its sysfs entry is missing)" : "");
        return;
    }
    if (m->peermem_path == NULL) {
        g_autofree char *ev = g_strdup_printf("/proc/sys/kernel/osrelease = %s; /proc/driver/nvidia/version = %s",
                                              m->kernel, m->nvidia_proc_version);
        dr_add(d, CS_DOCTOR_INFO, "gdr-dmabuf", ev,
               "NCCL registers GPU memory with ibv_reg_dmabuf_mr; if the NIC driver lacks DMA-BUF it "
               "falls back to host staging", "load nvidia_peermem to be independent of DMA-BUF support",
               "no peer memory module; GPUDirect RDMA relies on DMA-BUF");
    }
}

static void rule_gpu_nic(dr_ctx_t *c)
{
    cs_doctor_t *d = c->d;
    dr_machine_t *m = &d->m;
    cs_path_type_t level = gdr_level(c);
    dr_agg_t far, nogdr;
    dr_agg_init(&far);
    dr_agg_init(&nogdr);
    for (guint g = 0; g < m->gpus->len; g++) {
        dr_gpu_t *gpu = m->gpus->pdata[g];
        const char *best_name = NULL;
        cs_path_type_t best = CS_PATH_DIS;
        char label[64];
        if (d->net == CS_DOCTOR_NET_IB) {
            for (guint i = 0; i < d->ibdevs->len; i++) {
                const dr_ibdev_t *x = &g_array_index(d->ibdevs, dr_ibdev_t, i);
                const dr_rdma_t *r = m->rdma->pdata[x->rdma];
                const dr_pci_t *np = dr_machine_pci(m, r->bdf);
                cs_path_type_t t = np != NULL ? dr_pci_path_type(gpu->pci, np) : CS_PATH_SYS;
                if (t < best) {
                    best = t;
                    g_snprintf(label, sizeof label, "%s:%d", r->name, r->ports[x->port].num);
                    best_name = label;
                }
            }
        } else if (d->net == CS_DOCTOR_NET_SOCKET) {
            for (guint i = 0; i < d->sockifs->len; i++) {
                const dr_if_t *f = m->ifs->pdata[g_array_index(d->sockifs, int, i)];
                const dr_pci_t *np = dr_machine_pci(m, f->bdf);
                cs_path_type_t t = np != NULL ? dr_pci_path_type(gpu->pci, np) : CS_PATH_PHB;
                if (t < best) {
                    best = t;
                    g_strlcpy(label, f->name, sizeof label);
                    best_name = label;
                }
            }
        }
        g_ptr_array_add(d->gpu_nic, best_name != NULL
                            ? g_strdup_printf("gpu%u %s -> %s (%s)", g, gpu->pci->bdf, best_name, dr_path_name(best))
                            : g_strdup_printf("gpu%u %s -> no NIC", g, gpu->pci->bdf));
        if (d->net != CS_DOCTOR_NET_IB || best_name == NULL)
            continue;
        g_autofree char *item = g_strdup_printf("gpu%u -> %s (%s)", g, best_name, dr_path_name(best));
        if (gpu->model != NULL && !gpu->model->gdr) {
            dr_agg_item(&nogdr, item);
            dr_agg_evidence(&nogdr, "/sys/bus/pci/devices/%s/device = 0x%04x (%s)", gpu->pci->bdf,
                            gpu->pci->device, gpu->model->name);
        } else if (best > level && d->gdr_how != NULL) {
            dr_agg_item(&far, item);
            dr_agg_evidence(&far, "GPU %s at %s, NIC %s", gpu->pci->bdf,
                            gpu->pci->path ? gpu->pci->path : "(path unknown)", best_name);
        }
    }
    if (far.n > 0) {
        g_autofree char *ev0 = dr_env_evidence(c, "NCCL_NET_GDR_LEVEL");
        g_autofree char *ev = g_strdup_printf("%s; %s", ev0, far.evidence->str);
        g_autofree char *impact = g_strdup_printf(
            "NCCL uses GPUDirect RDMA only up to %s (NCCL_NET_GDR_LEVEL, paths.cc): these GPUs' network "
            "traffic is staged in host memory unless NCCL can route it through a peer GPU over NVLink (PXN)",
            dr_path_name(level));
        dr_add(d, CS_DOCTOR_WARNING, "gdr-distance", ev, impact,
               "put each GPU and its NIC under one PCIe switch, or raise NCCL_NET_GDR_LEVEL (e.g. PHB) "
               "where the CPU's root complex forwards peer traffic well",
               "GPUs are too far from their nearest NIC for GPUDirect RDMA: %s", far.items->str);
    }
    if (nogdr.n > 0)
        dr_add(d, CS_DOCTOR_INFO, "gdr-gpu-unsupported", nogdr.evidence->str,
               "network traffic of these GPUs is staged in host memory", NULL,
               "these GPUs do not support GPUDirect RDMA: %s", nogdr.items->str);
    dr_agg_clear(&far);
    dr_agg_clear(&nogdr);
}

void dr_rules_health(dr_ctx_t *c)
{
    rule_inventory(c);
    rule_ports(c);
    rule_roce_mtu(c);
    rule_pcie(c);
    rule_gdr(c);
    rule_gpu_nic(c);
}
