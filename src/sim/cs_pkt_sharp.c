/* SHARP in-switch aggregation on the packet network (cs_pkt_sharp.h). */
#include "config.h"

#include "sim/cs_pkt_sharp.h"

/* An aggregation node: a group's reduction in one switch. */
typedef struct {
    int group, node, slot;       /* slot: its switch's counters in 'sw' */
    int parent;                  /* its edge up, -1 at the root */
    GArray *children;            /* int: edges from its children */
    guint64 emitted;             /* packets reduced from every child's and sent on */
} an_t;

/* A tree edge: its child (a NIC or an AN) and its parent AN. */
typedef struct {
    int group, child_node, parent_an, child_an;   /* child_an -1: a NIC, 'member' its member */
    int member;
    int up_qp, down_qp;
    guint64 arrived;             /* packets of the child accepted at the parent, in order */
} edge_t;

typedef struct {
    int group, edge;             /* its NIC's edge */
    int up_lane, down_lane;      /* -1 until registered */
    guint64 up_posted;
    guint64 down_posted, down_pkts, down_msgs, down_delivered;
} member_t;

typedef struct {
    int root;                    /* its root AN, -1 until a member came */
    GArray *bound;               /* guint64: packets up to the end of each up message */
    guint64 root_pkts;           /* packets reduced at the root */
    guint64 up_done;             /* up messages reduced at the root */
    GArray *members;             /* int */
} group_t;

typedef struct {
    int node;
    guint64 held, reduced, replicated, held_max;
} sw_t;

struct cs_pkt_sharp {
    cs_pkt_net_t *net;
    cs_pkt_qp_cfg_t qc;
    cs_pkt_sharp_hooks_t hooks;
    void *ctx;
    GArray *groups, *ans, *edges, *members, *sws;
    GHashTable *group_of;        /* owner's group id + 1 -> index + 1 */
    GHashTable *an_of;           /* (group, node) -> index + 1 */
    GHashTable *edge_of;         /* (group, child node) -> index + 1 */
    GHashTable *member_of;       /* (group, NIC node) -> index + 1 */
    GHashTable *sw_of;           /* node + 1 -> index + 1 */
    GArray *qp_role;             /* int per net QP id: edge x 2 + (down), -1 */
    GArray *lane_role;           /* int per owner lane: member x 2 + (down), -1 */
};

#define GROUP(s, i) (&g_array_index((s)->groups, group_t, (i)))
#define AN(s, i) (&g_array_index((s)->ans, an_t, (i)))
#define EDGE(s, i) (&g_array_index((s)->edges, edge_t, (i)))
#define MEMBER(s, i) (&g_array_index((s)->members, member_t, (i)))
#define SW(s, i) (&g_array_index((s)->sws, sw_t, (i)))

static gpointer key2(int a, int b)
{
    /* both below 2^31; a pointer-sized key (64-bit hosts, as the build) */
    return GSIZE_TO_POINTER(((gsize)(guint32)a << 32 | (guint32)b) + 1);
}

/* g_direct_hash keeps only a key's low 32 bits, so every group at one
 * node would share a hash (a chain as long as the groups, quadratic
 * setup): mix both halves (splitmix64's finalizer). */
static guint key2_hash(gconstpointer k)
{
    guint64 x = GPOINTER_TO_SIZE(k);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return (guint)(x ^ (x >> 31));
}

cs_pkt_sharp_t *cs_pkt_sharp_new(cs_pkt_net_t *net, const cs_pkt_qp_cfg_t *qc, const cs_pkt_sharp_hooks_t *hooks,
                                 void *ctx)
{
    G_STATIC_ASSERT(sizeof(gsize) >= 8);
    cs_pkt_sharp_t *s = g_new0(cs_pkt_sharp_t, 1);
    s->net = net;
    s->qc = *qc;
    s->qc.reorder = FALSE;       /* one route per edge */
    s->hooks = *hooks;
    s->ctx = ctx;
    s->groups = g_array_new(FALSE, TRUE, sizeof(group_t));
    s->ans = g_array_new(FALSE, TRUE, sizeof(an_t));
    s->edges = g_array_new(FALSE, TRUE, sizeof(edge_t));
    s->members = g_array_new(FALSE, TRUE, sizeof(member_t));
    s->sws = g_array_new(FALSE, TRUE, sizeof(sw_t));
    s->group_of = g_hash_table_new(g_direct_hash, g_direct_equal);
    s->an_of = g_hash_table_new(key2_hash, g_direct_equal);
    s->edge_of = g_hash_table_new(key2_hash, g_direct_equal);
    s->member_of = g_hash_table_new(key2_hash, g_direct_equal);
    s->sw_of = g_hash_table_new(g_direct_hash, g_direct_equal);
    s->qp_role = g_array_new(FALSE, FALSE, sizeof(int));
    s->lane_role = g_array_new(FALSE, FALSE, sizeof(int));
    return s;
}

void cs_pkt_sharp_free(cs_pkt_sharp_t *s)
{
    if (s == NULL)
        return;
    for (guint i = 0; i < s->groups->len; i++) {
        g_array_free(GROUP(s, i)->bound, TRUE);
        g_array_free(GROUP(s, i)->members, TRUE);
    }
    for (guint i = 0; i < s->ans->len; i++)
        g_array_free(AN(s, i)->children, TRUE);
    g_array_free(s->groups, TRUE);
    g_array_free(s->ans, TRUE);
    g_array_free(s->edges, TRUE);
    g_array_free(s->members, TRUE);
    g_array_free(s->sws, TRUE);
    g_hash_table_destroy(s->group_of);
    g_hash_table_destroy(s->an_of);
    g_hash_table_destroy(s->edge_of);
    g_hash_table_destroy(s->member_of);
    g_hash_table_destroy(s->sw_of);
    g_array_free(s->qp_role, TRUE);
    g_array_free(s->lane_role, TRUE);
    g_free(s);
}

static void set_role(GArray *a, int i, int role)
{
    int none = -1;
    while ((int)a->len <= i)
        g_array_append_val(a, none);
    g_array_index(a, int, i) = role;
}

static int role_of(const GArray *a, int i)
{
    return i >= 0 && (guint)i < a->len ? g_array_index(a, int, i) : -1;
}

static int group_index(cs_pkt_sharp_t *s, int id)
{
    gpointer v = g_hash_table_lookup(s->group_of, GINT_TO_POINTER(id + 1));
    if (v != NULL)
        return GPOINTER_TO_INT(v) - 1;
    group_t g = { .root = -1 };
    g.bound = g_array_new(FALSE, FALSE, sizeof(guint64));
    g.members = g_array_new(FALSE, FALSE, sizeof(int));
    g_array_append_val(s->groups, g);
    g_hash_table_insert(s->group_of, GINT_TO_POINTER(id + 1), GINT_TO_POINTER((int)s->groups->len));
    return (int)s->groups->len - 1;
}

static int an_index(cs_pkt_sharp_t *s, int g, int node)
{
    gpointer v = g_hash_table_lookup(s->an_of, key2(g, node));
    if (v != NULL)
        return GPOINTER_TO_INT(v) - 1;
    gpointer w = g_hash_table_lookup(s->sw_of, GINT_TO_POINTER(node + 1));
    if (w == NULL) {
        sw_t sw = { .node = node };
        g_array_append_val(s->sws, sw);
        w = GINT_TO_POINTER((int)s->sws->len);
        g_hash_table_insert(s->sw_of, GINT_TO_POINTER(node + 1), w);
        cs_pkt_net_set_endpoint(s->net, node);
    }
    an_t a = { .group = g, .node = node, .slot = GPOINTER_TO_INT(w) - 1, .parent = -1 };
    a.children = g_array_new(FALSE, FALSE, sizeof(int));
    g_array_append_val(s->ans, a);
    g_hash_table_insert(s->an_of, key2(g, node), GINT_TO_POINTER((int)s->ans->len));
    return (int)s->ans->len - 1;
}

static int member_index(cs_pkt_sharp_t *s, int g, int nic)
{
    gpointer v = g_hash_table_lookup(s->member_of, key2(g, nic));
    if (v != NULL)
        return GPOINTER_TO_INT(v) - 1;
    member_t m = { .group = g, .edge = -1, .up_lane = -1, .down_lane = -1 };
    g_array_append_val(s->members, m);
    int mi = (int)s->members->len - 1;
    g_array_append_val(GROUP(s, g)->members, mi);
    g_hash_table_insert(s->member_of, key2(g, nic), GINT_TO_POINTER(mi + 1));
    return mi;
}

gboolean cs_pkt_sharp_member(cs_pkt_sharp_t *s, int group, int lane, gboolean up, int prio,
                             const cs_pkt_sharp_hop_t *hops, int nhops, void (*new_qp)(void *ctx, int qp, int lane), void *qctx, const char **why)
{
    if (nhops < 1) {
        *why = "no switch between the NIC and the root";
        return FALSE;
    }
    cs_pkt_qp_cfg_t qc = s->qc;
    qc.prio = prio;
    int g = group_index(s, group);
    int mi = member_index(s, g, hops[0].child);
    int prev_an = -1;
    for (int i = 0; i < nhops; i++) {
        int pa = an_index(s, g, hops[i].parent);
        gpointer v = g_hash_table_lookup(s->edge_of, key2(g, hops[i].child));
        int ei;
        if (v != NULL) {
            ei = GPOINTER_TO_INT(v) - 1;
            if (EDGE(s, ei)->parent_an != pa) {
                *why = "its routes to the root do not form a tree (a node with two parents)";
                return FALSE;
            }
        } else {
            int up_port = hops[i].up, down_port = hops[i].down;
            int uq = cs_pkt_net_add_qp(s->net, &up_port, 1, &qc);
            int dq = uq < 0 ? -1 : cs_pkt_net_add_qp(s->net, &down_port, 1, &qc);
            if (uq < 0 || dq < 0) {
                *why = "a tree edge cannot carry a reliable connection (no link back)";
                return FALSE;
            }
            edge_t e = { .group = g, .child_node = hops[i].child, .parent_an = pa, .child_an = prev_an,
                         .member = i == 0 ? mi : -1, .up_qp = uq, .down_qp = dq };
            g_array_append_val(s->edges, e);
            ei = (int)s->edges->len - 1;
            g_hash_table_insert(s->edge_of, key2(g, hops[i].child), GINT_TO_POINTER(ei + 1));
            g_array_append_val(AN(s, pa)->children, ei);
            if (prev_an >= 0)
                AN(s, prev_an)->parent = ei;
            set_role(s->qp_role, uq, ei * 2);
            set_role(s->qp_role, dq, ei * 2 + 1);
            new_qp(qctx, uq, lane);
            new_qp(qctx, dq, lane);
        }
        if (i == 0)
            MEMBER(s, mi)->edge = ei;
        prev_an = pa;
    }
    group_t *G = GROUP(s, g);
    if (G->root < 0)
        G->root = prev_an;
    if (G->root != prev_an || AN(s, prev_an)->parent >= 0) {
        *why = "its routes end at different switches (two roots)";
        return FALSE;
    }
    member_t *m = MEMBER(s, mi);
    if (up)
        m->up_lane = lane;
    else
        m->down_lane = lane;
    set_role(s->lane_role, lane, mi * 2 + (up ? 0 : 1));
    return TRUE;
}

gboolean cs_pkt_sharp_lane(const cs_pkt_sharp_t *s, int lane)
{
    return s != NULL && role_of(s->lane_role, lane) >= 0;
}

gboolean cs_pkt_sharp_qp(const cs_pkt_sharp_t *s, int qp)
{
    return s != NULL && role_of(s->qp_role, qp) >= 0;
}

/* A member's down messages whose result arrived and which it posted. */
static void down_deliver(cs_pkt_sharp_t *s, int mi, cs_time_t now)
{
    member_t *m = MEMBER(s, mi);
    while (m->down_delivered < MIN(m->down_posted, m->down_msgs)) {
        m->down_delivered++;
        s->hooks.delivered(s->ctx, m->down_lane, now);
        m = MEMBER(s, mi);
    }
}

void cs_pkt_sharp_send(cs_pkt_sharp_t *s, int lane, guint64 bytes, cs_time_t now)
{
    int role = role_of(s->lane_role, lane);
    g_return_if_fail(role >= 0);
    int mi = role / 2;
    member_t *m = MEMBER(s, mi);
    group_t *G = GROUP(s, m->group);
    if (role % 2 == 0) {
        /* the first member to post message k sets its packets (every
         * member posts the same slice sizes: an all-reduce) */
        if (m->up_posted == G->bound->len) {
            guint64 end = (G->bound->len > 0 ? g_array_index(G->bound, guint64, G->bound->len - 1) : 0) +
                          cs_pkt_frame_npkts(bytes, s->qc.mtu);
            g_array_append_val(G->bound, end);
        }
        m->up_posted++;
        cs_pkt_net_qp_post(s->net, EDGE(s, m->edge)->up_qp, bytes, now);
        return;
    }
    /* the result comes down from the root; the NIC sends nothing */
    m->down_posted++;
    s->hooks.sent(s->ctx, lane, now);
    down_deliver(s, mi, now);
}

void cs_pkt_sharp_rate(cs_pkt_sharp_t *s, int lane, double bps, cs_time_t now)
{
    int role = role_of(s->lane_role, lane);
    if (role >= 0 && role % 2 == 0)
        cs_pkt_net_qp_set_rate(s->net, EDGE(s, MEMBER(s, role / 2)->edge)->up_qp, bps, now);
}

void cs_pkt_sharp_qp_sent(cs_pkt_sharp_t *s, int qp, cs_time_t now)
{
    int role = role_of(s->qp_role, qp);
    if (role < 0 || role % 2 != 0)
        return;
    const edge_t *e = EDGE(s, role / 2);
    if (e->member >= 0 && e->child_an < 0)
        s->hooks.sent(s->ctx, MEMBER(s, e->member)->up_lane, now);
}

/* An AN sends a copy of a result packet to each child. */
static void replicate(cs_pkt_sharp_t *s, int ai, guint32 payload, cs_time_t now)
{
    const an_t *a = AN(s, ai);
    for (guint i = 0; i < a->children->len; i++)
        cs_pkt_net_qp_post(s->net, EDGE(s, g_array_index(a->children, int, i))->down_qp, payload, now);
    SW(s, a->slot)->replicated += a->children->len;
}

/* A child's packet reached AN 'ai': when it was the last of its sequence
 * number, the reduced packet goes up, or (the root) down as the result. */
static void reduce(cs_pkt_sharp_t *s, int ai, guint32 payload, cs_time_t now)
{
    an_t *a = AN(s, ai);
    sw_t *sw = SW(s, a->slot);
    sw->held++;
    guint64 low = G_MAXUINT64;
    for (guint i = 0; i < a->children->len; i++)
        low = MIN(low, EDGE(s, g_array_index(a->children, int, i))->arrived);
    if (low <= a->emitted) {
        sw->held_max = MAX(sw->held_max, sw->held);
        return;
    }
    a->emitted++;                     /* one child's packet, so by one */
    sw->held -= a->children->len;
    sw->reduced++;
    if (a->parent >= 0) {
        cs_pkt_net_qp_post(s->net, EDGE(s, a->parent)->up_qp, payload, now);
        return;
    }
    group_t *G = GROUP(s, a->group);
    replicate(s, ai, payload, now);
    G->root_pkts++;
    while (G->up_done < G->bound->len && g_array_index(G->bound, guint64, G->up_done) <= G->root_pkts) {
        G->up_done++;
        for (guint i = 0; i < G->members->len; i++) {
            int lane = MEMBER(s, g_array_index(G->members, int, i))->up_lane;
            if (lane >= 0)
                s->hooks.delivered(s->ctx, lane, now);
        }
        G = GROUP(s, AN(s, ai)->group);
    }
}

void cs_pkt_sharp_observe(cs_pkt_sharp_t *s, const cs_pkt_t *pkt, cs_time_t now)
{
    int role = role_of(s->qp_role, (int)pkt->flow);
    if (role < 0)
        return;
    edge_t *e = EDGE(s, role / 2);
    if (role % 2 == 0) {
        e->arrived++;
        reduce(s, e->parent_an, pkt->payload, now);
        return;
    }
    if (e->child_an >= 0) {
        replicate(s, e->child_an, pkt->payload, now);
        return;
    }
    int mi = e->member;
    member_t *m = MEMBER(s, mi);
    const group_t *G = GROUP(s, m->group);
    m->down_pkts++;
    while (m->down_msgs < G->bound->len && g_array_index(G->bound, guint64, m->down_msgs) <= m->down_pkts)
        m->down_msgs++;
    down_deliver(s, mi, now);
}

gboolean cs_pkt_sharp_switch_stats(const cs_pkt_sharp_t *s, int node, cs_pkt_sharp_stats_t *out)
{
    gpointer w = g_hash_table_lookup(s->sw_of, GINT_TO_POINTER(node + 1));
    if (w == NULL)
        return FALSE;
    const sw_t *sw = SW(s, GPOINTER_TO_INT(w) - 1);
    *out = (cs_pkt_sharp_stats_t){ sw->reduced, sw->replicated, sw->held_max };
    return TRUE;
}

int cs_pkt_sharp_ngroups(const cs_pkt_sharp_t *s)
{
    return s != NULL ? (int)s->groups->len : 0;
}
