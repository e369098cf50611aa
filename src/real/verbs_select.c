/* collsim real --verbs: which RDMA port and GID to use. The test should run
 * over the port and GID NCCL would use, so it reuses collsim doctor's
 * re-implementation of NCCL's rules (doctor_nccl.c: NCCL_IB_HCA matching,
 * ncclIbGetGidIndex) over the same sysfs reading (doctor_sysfs.c). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "real/doctor_int.h"
#include "real/verbs_int.h"
#include "util/cs_error.h"

int vb_env_int(const cs_nccl_env_t *env, const char *name, int given, int dflt)
{
    if (given >= 0)
        return given;
    const char *v = env != NULL ? cs_nccl_env_get(env, name) : NULL;
    if (v == NULL || *v == '\0')
        return dflt;
    /* ncclLoadParam: strtoll(value, NULL, 0); NCCL_IB_TC/SL -1 mean 0
     * (net_ib.cc ncclParamIbTc/IbSl, reference nccl-model.md §4). */
    long long x = strtoll(v, NULL, 0);
    return x < 0 || x > 255 ? dflt : (int)x;
}

cs_nccl_env_t *vb_env_with(const cs_nccl_env_t *env, const char *name, const char *value)
{
    cs_nccl_env_t *e = cs_nccl_env_new();
    g_autoptr(GPtrArray) names = cs_nccl_env_names(env);
    for (guint i = 0; i < names->len; i++) {
        const char *n = g_ptr_array_index(names, i);
        cs_nccl_env_set(e, n, cs_nccl_env_get(env, n), cs_nccl_env_origin(env, n));
    }
    cs_nccl_env_set(e, name, value, "collsim real --verbs (replay)");
    return e;
}

typedef struct {
    const dr_rdma_t *r;
    const dr_port_t *p;
} cand_t;

/* NCCL's device order (net_ib/init.cc, NCCL_IB_DEVICE_PCI_ORDER=1): by PCI
 * address, devices without one last, then by name and port; the same order
 * collsim doctor prints. */
static gint cmp_cand(gconstpointer pa, gconstpointer pb)
{
    const cand_t *a = pa, *b = pb;
    if ((a->r->bdf == NULL) != (b->r->bdf == NULL))
        return a->r->bdf == NULL ? 1 : -1;
    int x = a->r->bdf != NULL ? strcmp(a->r->bdf, b->r->bdf) : 0;
    if (x == 0)
        x = dr_natural_cmp(a->r->name, b->r->name);
    return x != 0 ? x : a->p->num - b->p->num;
}

static gboolean split_dev(const char *ib_dev, char **name_p, int *port_p, GError **err)
{
    const char *colon = strchr(ib_dev, ':');
    int port = 0;
    if (colon != NULL) {
        char *end = NULL;
        long v = strtol(colon + 1, &end, 10);
        if (end == colon + 1 || *end != '\0' || v < 1 || v > 255) {
            cs_set_flag_error(err, "--ib-dev", "'%s' has no valid port after ':'; expected DEVICE or DEVICE:PORT "
                              "(e.g. mlx5_0:1)", ib_dev);
            return FALSE;
        }
        port = (int)v;
    }
    *name_p = colon != NULL ? g_strndup(ib_dev, (gsize)(colon - ib_dev)) : g_strdup(ib_dev);
    *port_p = port;
    return TRUE;
}

static const char *env_or_null(const cs_nccl_env_t *env, const char *name)
{
    return env != NULL ? cs_nccl_env_get(env, name) : NULL;
}

gboolean vb_select_port(const char *root, const cs_nccl_env_t *env, const char *ib_dev, int gid_index,
                        vb_port_sel_t *sel_p, GError **err)
{
    g_autofree char *want = NULL;
    int want_port = 0;
    if (ib_dev != NULL && !split_dev(ib_dev, &want, &want_port, err))
        return FALSE;
    dr_machine_t m;
    dr_machine_init(&m, root);
    gboolean ok = FALSE;
    GArray *cands = g_array_new(FALSE, FALSE, sizeof(cand_t));
    if (!dr_machine_scan(&m, err))
        goto out_machine;
    const char *hca = env_or_null(env, "NCCL_IB_HCA");
    int nactive = 0;
    for (guint i = 0; i < m.rdma->len; i++) {
        const dr_rdma_t *r = m.rdma->pdata[i];
        for (int p = 0; p < r->nports; p++) {
            const dr_port_t *port = &r->ports[p];
            /* net_ib/init.cc: ACTIVE ports with an IB or Ethernet link layer */
            if (port->state != 4 || port->ll == DR_LL_OTHER)
                continue;
            nactive++;
            if (want != NULL ? strcmp(r->name, want) != 0 || (want_port > 0 && port->num != want_port)
                             : !dr_nccl_list_selects(hca, r->name, port->num))
                continue;
            cand_t c = { r, port };
            g_array_append_val(cands, c);
        }
    }
    if (cands->len == 0) {
        if (want != NULL)
            cs_set_flag_error(err, "--ib-dev", "'%s' is not an ACTIVE InfiniBand or RoCE port of this machine "
                              "(%d active port(s)); expected a name from 'ibv_devices' or /sys/class/infiniband",
                              ib_dev, nactive);
        else if (hca != NULL)
            g_set_error(err, CS_ERROR, CS_ERROR_RUNTIME, "collsim: real --verbs: NCCL_IB_HCA=%s selects no ACTIVE "
                        "port of this machine (%d active port(s)); expected a list as NCCL reads it "
                        "(\"mlx5_0:1,mlx5_1\", \"^mlx5_2\", \"=mlx5_0\")", hca, nactive);
        else
            g_set_error(err, CS_ERROR, CS_ERROR_RUNTIME, "collsim: real --verbs: no ACTIVE InfiniBand or RoCE port "
                        "in /sys/class/infiniband; check the cable, the subnet manager (IB) or the link (RoCE)");
        goto out_machine;
    }
    g_array_sort(cands, cmp_cand);
    const cand_t *c = &g_array_index(cands, cand_t, 0);
    vb_port_sel_t s;
    memset(&s, 0, sizeof s);
    g_strlcpy(s.name, c->r->name, sizeof s.name);
    s.port = c->p->num;
    s.roce = c->p->ll == DR_LL_ETH;
    s.speed_mbps = c->p->speed_mbps;
    const char *env_gid = env_or_null(env, "NCCL_IB_GID_INDEX");
    long user = env_gid != NULL && *env_gid != '\0' ? strtol(env_gid, NULL, 0) : -1;
    if (gid_index >= 0) {
        s.gid_index = gid_index;
        g_strlcpy(s.gid_how, "--gid-index", sizeof s.gid_how);
    } else if (!s.roce) {
        s.gid_index = dr_gid_ib_pick(c->p->gids, c->p->ngids);
        g_strlcpy(s.gid_how, "NCCL's choice for InfiniBand", sizeof s.gid_how);
    } else if (user >= 0) {
        s.gid_index = (int)user;
        g_snprintf(s.gid_how, sizeof s.gid_how, "NCCL_IB_GID_INDEX=%s", env_gid);
    } else {
        /* connect.cc ncclIbGetGidIndex, with its three steering variables */
        const char *fam = env_or_null(env, "NCCL_IB_ADDR_FAMILY");
        int af = fam != NULL && strcmp(fam, "AF_INET6") == 0 ? 6 : 4;
        const char *rv_s = env_or_null(env, "NCCL_IB_ROCE_VERSION_NUM");
        int rv = rv_s != NULL && *rv_s != '\0' ? (int)strtol(rv_s, NULL, 0) : 2;
        guint8 prefix[16];
        int plen = 0;
        gboolean range = dr_parse_addr_range(env_or_null(env, "NCCL_IB_ADDR_RANGE"), af, prefix, &plen);
        s.gid_index = dr_gid_autopick(c->p->gids, c->p->ngids, af, range ? prefix : NULL, plen, rv);
        g_strlcpy(s.gid_how, "NCCL's auto-pick", sizeof s.gid_how);
    }
    if (s.roce && (s.gid_index >= c->p->ngids || !c->p->gids[s.gid_index].present ||
                   dr_gid_zero(c->p->gids[s.gid_index].raw))) {
        g_set_error(err, CS_ERROR, CS_ERROR_RUNTIME, "collsim: real --verbs: GID %d (%s) of %s:%d is empty or "
                    "absent (%d entries); expected a populated RoCE GID: see 'collsim doctor'", s.gid_index,
                    s.gid_how, s.name, s.port, c->p->ngids);
        goto out_machine;
    }
    *sel_p = s;
    ok = TRUE;
out_machine:
    g_array_free(cands, TRUE);
    dr_machine_clear(&m);
    return ok;
}
