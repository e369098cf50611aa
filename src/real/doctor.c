/* collsim doctor: the public API and the text and Markdown reports. The
 * reading is in doctor_sysfs.c, NCCL's rules in doctor_nccl.c, the findings
 * in doctor_rules.c and doctor_health.c, the topology export in
 * doctor_topo.c. */
#include "config.h"

#include <string.h>

#include "real/doctor_int.h"

static void finding_free(gpointer p)
{
    cs_doctor_finding_t *f = p;
    g_free(f->code);
    g_free(f->what);
    g_free(f->evidence);
    g_free(f->impact);
    g_free(f->fix);
    g_free(f);
}

cs_doctor_t *cs_doctor_new(const char *root)
{
    cs_doctor_t *d = g_new0(cs_doctor_t, 1);
    dr_machine_init(&d->m, root);
    for (int s = 0; s < 3; s++)
        d->found[s] = g_ptr_array_new();
    d->findings = g_ptr_array_new_with_free_func(finding_free);
    d->ibdevs = g_array_new(FALSE, FALSE, sizeof(dr_ibdev_t));
    d->sockifs = g_array_new(FALSE, FALSE, sizeof(int));
    d->gpu_nic = g_ptr_array_new_with_free_func(g_free);
    d->boot_if = -1;
    return d;
}

void cs_doctor_free(cs_doctor_t *d)
{
    if (d == NULL)
        return;
    /* Findings not yet moved to d->findings are owned by found[]. */
    for (int s = 0; s < 3; s++) {
        if (!d->checked)
            g_ptr_array_set_free_func(d->found[s], finding_free);
        g_ptr_array_unref(d->found[s]);
    }
    g_ptr_array_unref(d->findings);
    g_array_free(d->ibdevs, TRUE);
    g_array_free(d->sockifs, TRUE);
    g_ptr_array_unref(d->gpu_nic);
    g_free(d->boot_how);
    g_free(d->plugin);
    g_free(d->net_line);
    g_free(d->net_note);
    g_free(d->gdr_how);
    dr_machine_clear(&d->m);
    g_free(d);
}

gboolean cs_doctor_scan(cs_doctor_t *d, GError **err)
{
    g_return_val_if_fail(!d->scanned, FALSE);
    if (!dr_machine_scan(&d->m, err))
        return FALSE;
    d->scanned = TRUE;
    return TRUE;
}

/* Findings quote values from files and variables: keep each on one
 * printable line whatever they hold. */
static char *one_line(char *s)
{
    for (char *p = s; p != NULL && *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    return s;
}

void dr_add(cs_doctor_t *d, cs_doctor_severity_t sev, const char *code, const char *evidence,
            const char *impact, const char *fix, const char *fmt, ...)
{
    va_list ap;
    cs_doctor_finding_t *f = g_new0(cs_doctor_finding_t, 1);
    f->severity = sev;
    f->code = g_strdup(code);
    va_start(ap, fmt);
    f->what = one_line(g_strdup_vprintf(fmt, ap));
    va_end(ap);
    f->evidence = one_line(g_strdup(evidence != NULL ? evidence : ""));
    f->impact = one_line(g_strdup(impact != NULL ? impact : ""));
    f->fix = one_line(g_strdup(fix));
    g_ptr_array_add(d->found[sev], f);
}

void cs_doctor_check(cs_doctor_t *d, const cs_nccl_env_t *env, const char *gpu_model)
{
    g_return_if_fail(d->scanned && !d->checked);
    dr_ctx_t c = { d, env };
    dr_rules_nccl(&c, gpu_model);
    dr_rules_health(&c);
    for (int s = CS_DOCTOR_ERROR; s >= CS_DOCTOR_INFO; s--)
        for (guint i = 0; i < d->found[s]->len; i++)
            g_ptr_array_add(d->findings, d->found[s]->pdata[i]);
    d->checked = TRUE;
}

int cs_doctor_n_findings(const cs_doctor_t *d)
{
    return (int)d->findings->len;
}

const cs_doctor_finding_t *cs_doctor_finding(const cs_doctor_t *d, int i)
{
    g_return_val_if_fail(i >= 0 && i < (int)d->findings->len, NULL);
    return d->findings->pdata[i];
}

int cs_doctor_count(const cs_doctor_t *d, cs_doctor_severity_t s)
{
    int n = 0;
    for (guint i = 0; i < d->findings->len; i++)
        n += ((const cs_doctor_finding_t *)d->findings->pdata[i])->severity == s;
    return n;
}

const cs_doctor_finding_t *cs_doctor_find(const cs_doctor_t *d, const char *code)
{
    for (guint i = 0; i < d->findings->len; i++) {
        const cs_doctor_finding_t *f = d->findings->pdata[i];
        if (strcmp(f->code, code) == 0)
            return f;
    }
    return NULL;
}

cs_doctor_net_t cs_doctor_net(const cs_doctor_t *d)
{
    return d->net;
}

int cs_doctor_net_ndevs(const cs_doctor_t *d)
{
    if (d->net == CS_DOCTOR_NET_IB)
        return (int)d->ibdevs->len;
    if (d->net == CS_DOCTOR_NET_SOCKET)
        return (int)d->sockifs->len;
    return 0;
}

static const dr_ibdev_t *ibdev_at(const cs_doctor_t *d, int i)
{
    if (d->net != CS_DOCTOR_NET_IB || i < 0 || i >= (int)d->ibdevs->len)
        return NULL;
    return &g_array_index(d->ibdevs, dr_ibdev_t, i);
}

static const dr_if_t *sockif_at(const cs_doctor_t *d, int i)
{
    if (d->net != CS_DOCTOR_NET_SOCKET || i < 0 || i >= (int)d->sockifs->len)
        return NULL;
    return d->m.ifs->pdata[g_array_index(d->sockifs, int, i)];
}

const char *cs_doctor_net_dev(const cs_doctor_t *d, int i)
{
    const dr_ibdev_t *x = ibdev_at(d, i);
    if (x != NULL)
        return x->label;
    const dr_if_t *f = sockif_at(d, i);
    return f != NULL ? f->name : NULL;
}

int cs_doctor_net_speed_mbps(const cs_doctor_t *d, int i)
{
    const dr_ibdev_t *x = ibdev_at(d, i);
    if (x != NULL)
        return x->speed_mbps;
    const dr_if_t *f = sockif_at(d, i);
    if (f != NULL)
        return f->speed > 0 ? (int)f->speed : 10000;   /* net_socket.cc default */
    return -1;
}

int cs_doctor_net_gid_index(const cs_doctor_t *d, int i)
{
    const dr_ibdev_t *x = ibdev_at(d, i);
    if (x == NULL)
        return -1;
    const dr_rdma_t *r = d->m.rdma->pdata[x->rdma];
    return r->ports[x->port].ll == DR_LL_ETH ? x->gid_index : -1;
}

const char *cs_doctor_severity_name(cs_doctor_severity_t s)
{
    return s == CS_DOCTOR_ERROR ? "error" : s == CS_DOCTOR_WARNING ? "warning" : "note";
}

const char *cs_doctor_net_name(cs_doctor_net_t n)
{
    static const char *const names[] = { "none", "NET/IB", "NET/Socket", "NET/plugin" };
    return n >= 0 && n < (cs_doctor_net_t)G_N_ELEMENTS(names) ? names[n] : "?";
}

/* ---- reports -------------------------------------------------------------------- */

static const char *or_unknown(const char *s)
{
    return s != NULL ? s : "?";
}

static void machine_lines(const cs_doctor_t *d, GString *o, const char *ind)
{
    const dr_machine_t *m = &d->m;
    g_string_append_printf(o, "%skernel %s; NVIDIA driver %s%s; CPU %s\n", ind, or_unknown(m->kernel),
                           m->nvidia_version != NULL ? m->nvidia_version : "not loaded",
                           m->nvidia_open ? " (open kernel modules)" : "",
                           m->cpu_name != NULL ? m->cpu_name : or_unknown(m->cpu_vendor));
}

static char *pci_link(const dr_pci_t *p)
{
    if (p == NULL)
        return g_strdup("");
    if (p->cur_width > 0 && p->cur_gts > 0)
        return g_strdup_printf(" PCIe x%d %g GT/s", p->cur_width, p->cur_gts);
    return g_strdup("");
}

static void gpus_text(const cs_doctor_t *d, GString *o)
{
    const dr_machine_t *m = &d->m;
    g_string_append_printf(o, "GPUs (%u)\n", m->gpus->len);
    for (guint i = 0; i < m->gpus->len; i++) {
        const dr_gpu_t *g = m->gpus->pdata[i];
        g_autofree char *link = pci_link(g->pci);
        g_string_append_printf(o, "  gpu%-3u %s  %s%s (10de:%04x)  NUMA %d%s\n", i, g->pci->bdf,
                               g->model != NULL ? g->model->name : "unknown",
                               g->model_assumed ? " assumed" : "", g->pci->device, g->pci->numa, link);
    }
    if (m->nvswitches->len > 0) {
        g_string_append_printf(o, "NVSwitches (%u):", m->nvswitches->len);
        for (guint i = 0; i < m->nvswitches->len; i++)
            g_string_append_printf(o, " %s", ((const dr_pci_t *)m->nvswitches->pdata[i])->bdf);
        g_string_append_c(o, '\n');
    }
}

static void gids_text(const dr_port_t *p, GString *o)
{
    int shown = 0;
    for (int g = 0; g < p->ngids; g++) {
        const dr_gid_t *gid = &p->gids[g];
        if (!gid->present || dr_gid_zero(gid->raw))
            continue;
        if (shown++ >= 16) {
            g_string_append(o, "      ...\n");
            break;
        }
        g_string_append_printf(o, "      GID[%d] %s  %s%s%s\n", g, gid->text, or_unknown(gid->type),
                               gid->ndev ? "  " : "", gid->ndev ? gid->ndev : "");
    }
}

static void rdma_text(const cs_doctor_t *d, GString *o)
{
    const dr_machine_t *m = &d->m;
    int n = 0;
    for (guint i = 0; i < m->rdma->len; i++)
        n += ((const dr_rdma_t *)m->rdma->pdata[i])->nports;
    g_string_append_printf(o, "RDMA ports (%d)\n", n);
    for (guint i = 0; i < m->rdma->len; i++) {
        const dr_rdma_t *r = m->rdma->pdata[i];
        const dr_pci_t *pci = dr_machine_pci(m, r->bdf);
        for (int p = 0; p < r->nports; p++) {
            const dr_port_t *port = &r->ports[p];
            g_string_append_printf(o, "  %s:%d  %s  %s  %s  pci %s NUMA %d  netdev %s\n", r->name, port->num,
                                   or_unknown(port->state_str), or_unknown(port->link_layer_str),
                                   or_unknown(port->rate_str), or_unknown(r->bdf), pci ? pci->numa : -1,
                                   or_unknown(port->netdev));
            if (port->ll == DR_LL_ETH)
                gids_text(port, o);
        }
    }
}

static void ifs_text(const cs_doctor_t *d, GString *o)
{
    const dr_machine_t *m = &d->m;
    g_string_append_printf(o, "Interfaces (%u)\n", m->ifs->len);
    for (guint i = 0; i < m->ifs->len; i++) {
        const dr_if_t *f = m->ifs->pdata[i];
        const char *type = f->type == 1 ? "ether" : f->type == 32 ? "infiniband" : f->type == 772 ? "loopback" : "other";
        g_autofree char *speed = f->speed > 0 ? g_strdup_printf("%g Gb/s", f->speed / 1000.0) : g_strdup("speed ?");
        g_string_append_printf(o, "  %-12s %-8s %-10s %-10s MTU %ld  %s", f->name, or_unknown(f->operstate), type,
                               speed, f->mtu, f->bdf != NULL ? f->bdf : "virtual");
        for (guint k = 0; k < f->ipv4->len; k++)
            g_string_append_printf(o, " %s", (const char *)f->ipv4->pdata[k]);
        for (guint k = 0; k < f->ipv6->len; k++)
            g_string_append_printf(o, " %s", (const char *)f->ipv6->pdata[k]);
        g_string_append_c(o, '\n');
    }
}

/* Ends the line begun at 'start' without trailing blanks. */
static void trim_line(GString *o, gsize start)
{
    while (o->len > start && o->str[o->len - 1] == ' ')
        g_string_truncate(o, o->len - 1);
    g_string_append_c(o, '\n');
}

/* NCCL's path type from every GPU to every network device, as
 * `nvidia-smi topo -m` shows GPU/NIC affinity. */
static void path_matrix(const cs_doctor_t *d, GString *o)
{
    const dr_machine_t *m = &d->m;
    int n = cs_doctor_net_ndevs(d);
    if (m->gpus->len == 0 || n == 0 || n > 16)
        return;
    const dr_pci_t *nic[16];
    gsize line = o->len;
    g_string_append(o, "  path types  ");
    for (int k = 0; k < n; k++) {
        const char *bdf;
        const char *label = cs_doctor_net_dev(d, k);
        if (d->net == CS_DOCTOR_NET_IB) {
            const dr_rdma_t *r = m->rdma->pdata[g_array_index(d->ibdevs, dr_ibdev_t, k).rdma];
            bdf = r->bdf;
        } else {
            bdf = ((const dr_if_t *)m->ifs->pdata[g_array_index(d->sockifs, int, k)])->bdf;
        }
        nic[k] = dr_machine_pci(m, bdf);
        g_string_append_printf(o, " %-10s", label);
    }
    trim_line(o, line);
    for (guint g = 0; g < m->gpus->len; g++) {
        const dr_gpu_t *gpu = m->gpus->pdata[g];
        line = o->len;
        g_string_append_printf(o, "  gpu%-9u", g);
        for (int k = 0; k < n; k++)
            g_string_append_printf(o, " %-10s", nic[k] != NULL ? dr_path_name(dr_pci_path_type(gpu->pci, nic[k])) : "-");
        trim_line(o, line);
    }
}

static void nccl_text(const cs_doctor_t *d, GString *o)
{
    const dr_machine_t *m = &d->m;
    g_string_append(o, "NCCL (rules of v2.28.9)\n");
    if (d->boot_if >= 0)
        g_string_append_printf(o, "  bootstrap: %s (%s)\n", ((const dr_if_t *)m->ifs->pdata[d->boot_if])->name,
                               d->boot_how);
    else
        g_string_append_printf(o, "  bootstrap: none (%s)\n", or_unknown(d->boot_how));
    g_string_append_printf(o, "  network:   %s\n", or_unknown(d->net_line));
    if (d->net_note != NULL)
        g_string_append_printf(o, "             %s\n", d->net_note);
    g_string_append_printf(o, "  GPUDirect RDMA: %s\n",
                           d->gdr_how != NULL ? d->gdr_how : "not available (no peer memory module, no DMA-BUF)");
    for (guint i = 0; i < d->gpu_nic->len; i++)
        g_string_append_printf(o, "  %s\n", (const char *)d->gpu_nic->pdata[i]);
    path_matrix(d, o);
}

static void counts(const cs_doctor_t *d, GString *o)
{
    int e = cs_doctor_count(d, CS_DOCTOR_ERROR), w = cs_doctor_count(d, CS_DOCTOR_WARNING),
        n = cs_doctor_count(d, CS_DOCTOR_INFO);
    g_string_append_printf(o, "%d error%s, %d warning%s, %d note%s", e, e == 1 ? "" : "s", w, w == 1 ? "" : "s",
                           n, n == 1 ? "" : "s");
}

char *cs_doctor_report_text(const cs_doctor_t *d)
{
    GString *o = g_string_new(NULL);
    g_string_append_printf(o, "collsim doctor: %s\n", d->m.fs.root[0] ? d->m.fs.root : "/");
    machine_lines(d, o, "  ");
    gpus_text(d, o);
    rdma_text(d, o);
    ifs_text(d, o);
    nccl_text(d, o);
    g_string_append(o, "Findings: ");
    counts(d, o);
    g_string_append_c(o, '\n');
    for (guint i = 0; i < d->findings->len; i++) {
        const cs_doctor_finding_t *f = d->findings->pdata[i];
        g_string_append_printf(o, "  [%s] %s: %s\n", cs_doctor_severity_name(f->severity), f->code, f->what);
        if (f->evidence[0])
            g_string_append_printf(o, "      evidence: %s\n", f->evidence);
        if (f->impact[0])
            g_string_append_printf(o, "      impact:   %s\n", f->impact);
        if (f->fix != NULL)
            g_string_append_printf(o, "      fix:      %s\n", f->fix);
    }
    return g_string_free(o, FALSE);
}

/* Markdown: table cells must not hold '|' or newlines; code spans no '`'. */
static char *md_cell(const char *s)
{
    GString *o = g_string_new(NULL);
    for (; s != NULL && *s; s++) {
        if (*s == '|')
            g_string_append(o, "\\|");
        else if (*s == '\n')
            g_string_append_c(o, ' ');
        else
            g_string_append_c(o, *s);
    }
    return g_string_free(o, FALSE);
}

static char *md_code(const char *s)
{
    char *t = g_strdup(s != NULL ? s : "");
    for (char *p = t; *p; p++)
        if (*p == '`')
            *p = '\'';
    return t;
}

char *cs_doctor_report_markdown(const cs_doctor_t *d)
{
    const dr_machine_t *m = &d->m;
    GString *o = g_string_new("## Machine check (collsim doctor)\n\n");
    g_autofree char *net = md_cell(d->net_line);
    g_string_append_printf(o, "- **Network:** %s", net);
    if (d->net_note != NULL)
        g_string_append_printf(o, " (%s)", d->net_note);
    g_string_append(o, "\n");
    if (d->boot_if >= 0)
        g_string_append_printf(o, "- **Bootstrap interface:** `%s` (%s)\n",
                               ((const dr_if_t *)m->ifs->pdata[d->boot_if])->name, d->boot_how);
    g_string_append_printf(o, "- **GPUDirect RDMA:** %s\n",
                           d->gdr_how != NULL ? d->gdr_how : "not available");
    g_string_append_printf(o, "- **Kernel / driver:** %s / %s\n\n", or_unknown(m->kernel),
                           m->nvidia_version != NULL ? m->nvidia_version : "not loaded");
    if (m->gpus->len > 0) {
        g_string_append(o, "| GPU | PCI | Model | NUMA | Nearest NIC |\n|---|---|---|---|---|\n");
        for (guint i = 0; i < m->gpus->len; i++) {
            const dr_gpu_t *g = m->gpus->pdata[i];
            const char *near = i < d->gpu_nic->len ? strstr(d->gpu_nic->pdata[i], "-> ") : NULL;
            g_string_append_printf(o, "| gpu%u | %s | %s | %d | %s |\n", i, g->pci->bdf,
                                   g->model != NULL ? g->model->name : "unknown", g->pci->numa,
                                   near != NULL ? near + 3 : "");
        }
        g_string_append_c(o, '\n');
    }
    if (m->rdma->len > 0) {
        g_string_append(o, "| RDMA port | State | Link layer | Rate | Netdev |\n|---|---|---|---|---|\n");
        for (guint i = 0; i < m->rdma->len; i++) {
            const dr_rdma_t *r = m->rdma->pdata[i];
            for (int p = 0; p < r->nports; p++) {
                const dr_port_t *port = &r->ports[p];
                g_autofree char *st = md_cell(or_unknown(port->state_str));
                g_autofree char *ll = md_cell(or_unknown(port->link_layer_str));
                g_autofree char *rate = md_cell(or_unknown(port->rate_str));
                g_autofree char *nd = md_cell(or_unknown(port->netdev));
                g_string_append_printf(o, "| %s:%d | %s | %s | %s | %s |\n", r->name, port->num, st, ll, rate, nd);
            }
        }
        g_string_append_c(o, '\n');
    }
    g_string_append(o, "### Findings (");
    counts(d, o);
    g_string_append(o, ")\n\n");
    if (d->findings->len == 0)
        g_string_append(o, "No findings.\n");
    for (guint i = 0; i < d->findings->len; i++) {
        const cs_doctor_finding_t *f = d->findings->pdata[i];
        g_autofree char *ev = md_code(f->evidence);
        g_string_append_printf(o, "%u. **%s** `%s`: %s\n", i + 1, cs_doctor_severity_name(f->severity),
                               f->code, f->what);
        if (f->evidence[0])
            g_string_append_printf(o, "   - *Evidence:* `%s`\n", ev);
        if (f->impact[0])
            g_string_append_printf(o, "   - *Impact:* %s\n", f->impact);
        if (f->fix != NULL)
            g_string_append_printf(o, "   - *Fix:* %s\n", f->fix);
    }
    return g_string_free(o, FALSE);
}
