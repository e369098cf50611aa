/* collsim doctor: the GID index NCCL uses on each RoCE port (connect.cc
 * ncclIbGetGidIndex, re-implemented in doctor_nccl.c) and the findings about
 * NCCL_IB_GID_INDEX and the variables that steer the automatic choice. */
#include "config.h"

#include <string.h>

#include "real/doctor_int.h"

/* ---- GID index ------------------------------------------------------------------ */

enum { G_OUT_OF_RANGE, G_EMPTY, G_V1, G_LINK_LOCAL, G_IPV6, G_SAME_AS_AUTO, G_AUTO_BAD, G_ON_IB, G_NCODES };

static void gid_text(GString *ev, const dr_port_t *p, int idx)
{
    const dr_gid_t *g = idx >= 0 && idx < p->ngids ? &p->gids[idx] : NULL;
    g_string_append_printf(ev, "%s/gids/%d = %s, gid_attrs/types/%d = %s", p->dir, idx,
                           g != NULL && g->present ? g->text : "(absent)", idx,
                           g != NULL && g->type != NULL ? g->type : "(unreadable)");
}

void dr_rule_gid(dr_ctx_t *c)
{
    dr_machine_t *m = &c->d->m;
    const char *set = dr_env(c, "NCCL_IB_GID_INDEX");
    long user = dr_env_long(c, "NCCL_IB_GID_INDEX", -1);
    const char *fam_s = dr_env(c, "NCCL_IB_ADDR_FAMILY");
    int af = fam_s != NULL && strcmp(fam_s, "AF_INET6") == 0 ? 6 : 4;   /* connect.cc envIbAddrFamily */
    int rv = (int)dr_env_long(c, "NCCL_IB_ROCE_VERSION_NUM", 2);
    guint8 prefix[16];
    int plen = 0;
    gboolean has_range = dr_parse_addr_range(dr_env(c, "NCCL_IB_ADDR_RANGE"), af, prefix, &plen);
    dr_agg_t agg[G_NCODES];
    for (int k = 0; k < G_NCODES; k++)
        dr_agg_init(&agg[k]);
    g_autofree char *ev0 = dr_env_evidence(c, "NCCL_IB_GID_INDEX");
    int auto_first = -1;

    for (guint i = 0; i < c->d->ibdevs->len; i++) {
        dr_ibdev_t *dev = &g_array_index(c->d->ibdevs, dr_ibdev_t, i);
        dr_rdma_t *r = m->rdma->pdata[dev->rdma];
        dr_port_t *p = &r->ports[dev->port];
        g_autofree char *label = g_strdup_printf("%s:%d", r->name, p->num);
        if (p->ll == DR_LL_IB) {
            dev->gid_index = dr_gid_ib_pick(p->gids, p->ngids);
            if (set != NULL) {
                dr_agg_item(&agg[G_ON_IB], label);
            }
            continue;
        }
        int autoi = dr_gid_autopick(p->gids, p->ngids, af, has_range ? prefix : NULL, plen, rv);
        int used = user >= 0 ? (int)user : autoi;
        dev->gid_index = used;
        const dr_gid_t *g = used < p->ngids ? &p->gids[used] : NULL;
        int code = -1;
        if (g == NULL)
            code = G_OUT_OF_RANGE;
        else if (!g->present || dr_gid_zero(g->raw))
            code = G_EMPTY;
        else if (g->version == 1)
            code = G_V1;
        else if (dr_gid_link_local(g->raw))
            code = G_LINK_LOCAL;
        else if (!dr_gid_is_ipv4(g->raw) && af == 4)
            code = G_IPV6;
        if (user < 0 && code >= 0)
            code = G_AUTO_BAD;
        else if (user >= 0 && code < 0 && used == autoi)
            code = G_SAME_AS_AUTO;
        if (code < 0)
            continue;
        g_autofree char *item = user >= 0 && code != G_AUTO_BAD && autoi != used
            ? g_strdup_printf("%s (auto-pick would use %d: %s)", label, autoi,
                              autoi < p->ngids && p->gids[autoi].present ? p->gids[autoi].text : "?")
            : g_strdup(label);
        if (code == G_V1) {
            /* the entry the fix can name: the same address as RoCE v2;
             * and a v1 entry that is link-local has both faults */
            int v2 = -1;
            for (int k = 0; k < p->ngids && v2 < 0; k++)
                if (p->gids[k].present && p->gids[k].version == 2 && memcmp(p->gids[k].raw, g->raw, 16) == 0)
                    v2 = k;
            gboolean ll = dr_gid_link_local(g->raw);
            GString *x = g_string_new(item);
            if (ll)
                g_string_append(x, "; link-local (fe80::) as well: not routed either");
            if (v2 >= 0)
                g_string_append_printf(x, "; its address as RoCE v2 is index %d%s", v2, ll ? ", link-local too" : "");
            g_free(item);
            item = g_string_free(x, FALSE);
        }
        dr_agg_item(&agg[code], item);
        GString *e = agg[code].evidence;
        if (e->len > 0)
            g_string_append(e, "; ");
        if (code == G_OUT_OF_RANGE)
            g_string_append_printf(e, "%s/gids holds %d entries", p->dir, p->ngids);
        else
            gid_text(e, p, used);
        if (code == G_AUTO_BAD && auto_first < 0)
            auto_first = (int)i;
    }

    static const struct {
        cs_doctor_severity_t sev;
        const char *code, *what, *impact, *fix;
    } t[G_NCODES] = {
        [G_OUT_OF_RANGE] = { CS_DOCTOR_ERROR, "gid-index-out-of-range",
            "is beyond the GID table of",
            "ibv_query_gid fails and NCCL cannot connect over these ports",
            "unset NCCL_IB_GID_INDEX and let NCCL pick the RoCE v2 IPv4 GID" },
        [G_EMPTY] = { CS_DOCTOR_ERROR, "gid-index-empty",
            "points at an unpopulated (all-zero) GID on",
            "the QPs get a zero source GID: connections time out (\"NET/IB : ... error 12\", retry exceeded)",
            "unset NCCL_IB_GID_INDEX; GID indexes shift when addresses, VLANs or containers change" },
        [G_V1] = { CS_DOCTOR_ERROR, "gid-index-roce-v1",
            "selects a RoCE v1 GID on",
            "RoCE v1 is raw Ethernet (EtherType 0x8915): it is not routed across IP subnets and carries "
            "no DSCP, so PFC/ECN classes keyed on DSCP do not apply; peers on RoCE v2 cannot connect",
            "unset NCCL_IB_GID_INDEX (NCCL picks the RoCE v2 IPv4 GID: the auto-pick above)" },
        [G_LINK_LOCAL] = { CS_DOCTOR_ERROR, "gid-index-link-local",
            "selects a link-local (fe80::) GID on",
            "link-local addresses are not routed: connections to hosts in other subnets (every "
            "routed leaf-spine fabric) time out",
            "unset NCCL_IB_GID_INDEX (NCCL picks the RoCE v2 IPv4 GID)" },
        [G_IPV6] = { CS_DOCTOR_INFO, "gid-index-ipv6",
            "selects a RoCE v2 IPv6 GID on",
            "works only if the fabric routes IPv6 and every peer uses IPv6 GIDs too",
            "unset NCCL_IB_GID_INDEX unless the fabric is IPv6-only" },
        [G_SAME_AS_AUTO] = { CS_DOCTOR_INFO, "gid-index-redundant",
            "is the GID NCCL would pick by itself on",
            "none here; but the index of the RoCE v2 IPv4 GID differs between hosts and containers "
            "(extra addresses, VLANs, pods), where a fixed index can point at a v1 or empty entry",
            "consider leaving NCCL_IB_GID_INDEX unset" },
        [G_AUTO_BAD] = { CS_DOCTOR_ERROR, "gid-auto-unroutable",
            "NCCL's automatic GID choice gives an unroutable GID (link-local, RoCE v1 or empty) on",
            "cross-subnet connections over these ports time out; RoCE v1 also loses DSCP-based PFC/ECN",
            "give the RoCE netdev an IPv4 address (the kernel then adds RoCE v1 and v2 GIDs for it)" },
        [G_ON_IB] = { CS_DOCTOR_INFO, "gid-index-ignored-on-ib",
            "is ignored on InfiniBand ports:",
            "NCCL uses GID 0 (or 1 when it carries a routable FLID) on InfiniBand (connect.cc "
            "ncclIbGetGidIndex)",
            "unset it unless RoCE ports are also used" },
    };
    for (int k = 0; k < G_NCODES; k++) {
        if (agg[k].n > 0) {
            g_autofree char *what = k == G_AUTO_BAD ? g_strdup(t[k].what)
                                    : g_strdup_printf("NCCL_IB_GID_INDEX=%s %s", set != NULL ? set : "", t[k].what);
            g_autofree char *ev = k == G_AUTO_BAD ? g_strdup(agg[k].evidence->str)
                                : k == G_ON_IB    ? g_strdup(ev0)
                                                  : g_strdup_printf("%s; %s", ev0, agg[k].evidence->str);
            const char *fix = t[k].fix;
            g_autofree char *steer_fix = NULL;
            if (k == G_AUTO_BAD) {
                /* The choice may be the doing of the variables that steer it. */
                static const char *const steer[] = { "NCCL_IB_ADDR_FAMILY", "NCCL_IB_ROCE_VERSION_NUM",
                                                     "NCCL_IB_ADDR_RANGE" };
                GString *set_ev = g_string_new(NULL);
                for (gsize v = 0; v < G_N_ELEMENTS(steer); v++)
                    if (dr_env(c, steer[v]) != NULL) {
                        g_autofree char *e = dr_env_evidence(c, steer[v]);
                        g_string_append_printf(set_ev, "%s%s", set_ev->len ? ", " : "", e);
                    }
                if (set_ev->len > 0) {
                    g_autofree char *old_ev = g_steal_pointer(&ev);
                    ev = g_strdup_printf("%s; %s", set_ev->str, old_ev);
                    steer_fix = g_strdup_printf("the choice follows %s: correct or unset them "
                                                "(NCCL's defaults pick the RoCE v2 IPv4 GID)", set_ev->str);
                    fix = steer_fix;
                }
                g_string_free(set_ev, TRUE);
            }
            dr_add(c->d, t[k].sev, t[k].code, ev, t[k].impact, fix, "%s %s", what, agg[k].items->str);
        }
        dr_agg_clear(&agg[k]);
    }
}
