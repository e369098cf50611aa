/* Paths: NCCL's intra-node path search and classification
 * (ncclTopoSetPaths, paths.cc v2.28.9), network routes through the fabric
 * with deterministic ECMP, and a per-node cache of the paths collectives
 * use. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "models/cs_paths.h"
#include "models/cs_topo-int.h"

/* topo.h LOC_BW, GB/s: NCCL's bandwidth of a path to oneself. */
#define NCCL_LOC_BW 5000.0

static const char *const path_names[] = {
    "LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS", "NET", "DIS"
};

const char *cs_path_type_name(cs_path_type_t p)
{
    return (unsigned)p < G_N_ELEMENTS(path_names) ? path_names[p] : "?";
}

/* Names as topo.cc's topoPathTypeStr (any case), or the pre-2.8 integers
 * 0-5 that paths.cc maps through levelsOldToNew (LOC, PIX, PXB, PHB, SYS,
 * SYS). Callers that accept only LOC..SYS (NCCL_P2P_LEVEL) range-check. */
gboolean cs_path_type_parse(const char *s, cs_path_type_t *p_p)
{
    static const cs_path_type_t old_levels[] = {
        CS_PATH_LOC, CS_PATH_PIX, CS_PATH_PXB, CS_PATH_PHB, CS_PATH_SYS, CS_PATH_SYS
    };
    if (s == NULL)
        return FALSE;
    for (gsize i = 0; i < G_N_ELEMENTS(path_names); i++)
        if (g_ascii_strcasecmp(s, path_names[i]) == 0) {
            *p_p = (cs_path_type_t)i;
            return TRUE;
        }
    if (s[0] >= '0' && s[0] <= '5' && s[1] == '\0') {
        *p_p = old_levels[s[0] - '0'];
        return TRUE;
    }
    return FALSE;
}

/* ---- intra-node search --------------------------------------------- */

/* Search state of one device of the node: its best path to the base so
 * far, as NCCL keeps it (type, NCCL bandwidth, link list). */
typedef struct {
    int type;
    int count;
    double bw;
    int links[CS_PATH_MAX_HOPS];
} ipath_t;

typedef struct {
    int ndev;            /* devices of the node */
    ipath_t *st;         /* per position */
    int *list, *next;    /* BFS frontier, positions */
    guint *stamp;        /* per position: frontier generation it was added in */
    guint gen;
} iscratch_t;

static void iscratch_init(iscratch_t *s, int ndev)
{
    s->ndev = ndev;
    s->st = g_new(ipath_t, MAX(ndev, 1));
    s->list = g_new(int, MAX(ndev, 1));
    s->next = g_new(int, MAX(ndev, 1));
    s->stamp = g_new0(guint, MAX(ndev, 1));
    s->gen = 0;
}

static void iscratch_clear(iscratch_t *s)
{
    g_free(s->st);
    g_free(s->list);
    g_free(s->next);
    g_free(s->stamp);
}

/* ncclTopoSetPaths: a breadth-first relaxation from the base outwards;
 * a device's path is replaced by a better type, or the same type with more
 * bandwidth, or the same type and bandwidth with fewer hops. GPUs relay
 * only NVLink-to-NVLink and only one hop from the base (NVB); NICs never
 * relay; NET links and devices of other nodes (fabric switches included)
 * are not part of intra-node paths. Afterwards s->st[pos(x)] is the path
 * from x to base. */
static void intra_search(const cs_topo_t *t, int base, gboolean nvb_disable, iscratch_t *s)
{
    cs_topo_priv_t *p = cs_topo_priv(t);
    int node = t->devs[base].node;
    const int *devs = p->node_devs + p->node_dev_off[node];
    for (int i = 0; i < s->ndev; i++) {
        s->st[i].type = CS_PATH_DIS;
        s->st[i].count = 0;
        s->st[i].bw = 0;
    }
    int bpos = p->dev_pos[base];
    s->st[bpos].type = CS_PATH_LOC;
    s->st[bpos].bw = NCCL_LOC_BW;
    int nlist = 1;
    s->list[0] = bpos;
    while (nlist > 0) {
        int nnext = 0;
        s->gen++;
        for (int n = 0; n < nlist; n++) {
            int npos = s->list[n], nd = devs[npos];
            const cs_device_t *node_dev = &t->devs[nd];
            if (nd != base && node_dev->kind == CS_DEV_NIC)
                continue;
            for (int k = t->adj_off[nd]; k < t->adj_off[nd + 1]; k++) {
                const cs_link_t *l = &t->links[t->adj[k]];
                const cs_device_t *rem = &t->devs[l->dst];
                if (l->kind == CS_LINK_NET || rem->node != node)
                    continue;
                const ipath_t *path = &s->st[npos];
                if (nd != base && node_dev->kind == CS_DEV_GPU &&
                    (nvb_disable || l->kind != CS_LINK_NVL || rem->kind != CS_DEV_GPU || path->count > 1))
                    continue;
                if (path->count + 1 > CS_PATH_MAX_HOPS)
                    continue;
                double bw = MIN(path->bw, l->nccl_bw);
                int type = (int)l->kind;
                if (node_dev->kind == CS_DEV_PCISW && rem->kind == CS_DEV_PCISW)
                    type = CS_PATH_PXB;
                if (l->kind == CS_LINK_PCI && (node_dev->kind == CS_DEV_CPU || rem->kind == CS_DEV_CPU))
                    type = CS_PATH_PHB;
                if (nd != base && node_dev->kind == CS_DEV_GPU && path->type == CS_PATH_NVL &&
                    type == CS_PATH_NVL && path->count == 1)
                    type = CS_PATH_NVB;
                type = MAX(path->type, type);

                int rpos = p->dev_pos[l->dst];
                ipath_t *rp = &s->st[rpos];
                if (type < rp->type || (type == rp->type && rp->bw < bw) ||
                    (type == rp->type && rp->bw == bw && rp->count > path->count + 1)) {
                    rp->links[0] = l->reverse;
                    memcpy(rp->links + 1, path->links, sizeof(int) * path->count);
                    rp->count = path->count + 1;
                    rp->bw = bw;
                    rp->type = type;
                    if (s->stamp[rpos] != s->gen) {
                        s->stamp[rpos] = s->gen;
                        s->next[nnext++] = rpos;
                    }
                }
            }
        }
        int *tmp = s->list;
        s->list = s->next;
        s->next = tmp;
        nlist = nnext;
    }
}

/* Fills *p_p from a search result: physical bottleneck and latency come
 * from the links NCCL's choice runs over. */
static void path_from_state(const cs_topo_t *t, const ipath_t *st, cs_path_t *p_p)
{
    p_p->type = (cs_path_type_t)st->type;
    p_p->nhops = st->count;
    p_p->nccl_bw = st->count ? st->bw : NCCL_LOC_BW;
    p_p->bw = st->count ? INFINITY : NCCL_LOC_BW * 1e9;
    p_p->lat = 0;
    for (int i = 0; i < st->count; i++) {
        const cs_link_t *l = &t->links[st->links[i]];
        p_p->links[i] = st->links[i];
        p_p->bw = MIN(p_p->bw, l->bw);
        p_p->lat += l->lat;
    }
    if (st->type == CS_PATH_DIS) {
        p_p->bw = 0;
        p_p->nccl_bw = 0;
    }
}

gboolean cs_path_gpu_c2c(const cs_topo_t *t, int gpu)
{
    for (int k = t->adj_off[gpu]; k < t->adj_off[gpu + 1]; k++)
        if (t->links[t->adj[k]].kind == CS_LINK_C2C)
            return TRUE;
    return FALSE;
}

/* The GPU and NIC of a path P2C may apply to (a GPU on C2C and a NIC, in
 * either order, not already P2C or better); FALSE otherwise. */
static gboolean p2c_candidate(const cs_topo_t *t, int src, int dst, const cs_path_t *p, int *gpu_p, int *nic_p)
{
    int gpu = -1, nic = -1;
    if (t->devs[src].kind == CS_DEV_GPU && t->devs[dst].kind == CS_DEV_NIC) {
        gpu = src;
        nic = dst;
    } else if (t->devs[src].kind == CS_DEV_NIC && t->devs[dst].kind == CS_DEV_GPU) {
        gpu = dst;
        nic = src;
    }
    if (gpu < 0 || !cs_path_gpu_c2c(t, gpu) || p->type <= CS_PATH_P2C)
        return FALSE;
    *gpu_p = gpu;
    *nic_p = nic;
    return TRUE;
}

/* The paths from each CPU of one node to its devices (type and hops, by
 * position), searched on first use and once per node: the P2C rule for
 * every GPU x NIC pair would otherwise search from every CPU per pair (on
 * an NVL72 rack, 72 GPUs x 72 NICs x 36 Grace CPUs searches per node,
 * most of a run's time). */
typedef struct {
    int node;            /* -1: not searched yet */
    int ncpu, ndev;
    int *type, *count;   /* [cpu * ndev + pos] */
} cpu_paths_t;

static void cpu_paths_init(const cs_topo_t *t, int node, iscratch_t *s, cpu_paths_t *cp)
{
    cs_topo_priv_t *p = cs_topo_priv(t);
    int off = p->node_dev_off[node], ndev = p->node_dev_off[node + 1] - off, ncpu = 0;
    for (int i = 0; i < ndev; i++)
        ncpu += t->devs[p->node_devs[off + i]].kind == CS_DEV_CPU;
    cp->node = node;
    cp->ncpu = ncpu;
    cp->ndev = ndev;
    cp->type = g_new(int, MAX(ncpu * ndev, 1));
    cp->count = g_new(int, MAX(ncpu * ndev, 1));
    for (int i = 0, c = 0; i < ndev; i++) {
        if (t->devs[p->node_devs[off + i]].kind != CS_DEV_CPU)
            continue;
        intra_search(t, p->node_devs[off + i], FALSE, s);
        for (int d = 0; d < ndev; d++) {
            cp->type[c * ndev + d] = s->st[d].type;
            cp->count[c * ndev + d] = s->st[d].count;
        }
        c++;
    }
}

static void cpu_paths_clear(cpu_paths_t *cp)
{
    g_free(cp->type);
    g_free(cp->count);
    cp->type = cp->count = NULL;
    cp->node = -1;
}

/* ncclTopoComputePaths' P2C rule: a GPU whose local CPU is reached over
 * C2C, and a NIC behind that CPU's host bridge (PHB), are P2C apart. The
 * local CPU is ncclGetLocalCpu's: best path type, then fewest hops. 'cp'
 * holds the node's CPU paths, searched here (with the scratch 's') the
 * first time a pair needs them. */
static void apply_p2c(const cs_topo_t *t, cpu_paths_t *cp, iscratch_t *s, int src, int dst, cs_path_t *p_p)
{
    cs_topo_priv_t *p = cs_topo_priv(t);
    int gpu, nic;
    if (!p2c_candidate(t, src, dst, p_p, &gpu, &nic))
        return;
    if (cp->node != t->devs[gpu].node) {
        cpu_paths_clear(cp);
        cpu_paths_init(t, t->devs[gpu].node, s, cp);
    }
    int gpos = p->dev_pos[gpu], npos = p->dev_pos[nic];
    int found = 0, best_type = CS_PATH_DIS, best_count = 0, nic_type = CS_PATH_DIS;
    for (int c = 0; c < cp->ncpu; c++) {
        int gt = cp->type[c * cp->ndev + gpos], gc = cp->count[c * cp->ndev + gpos];
        if (gt < best_type || (gt == best_type && gc < best_count)) {
            found = 1;
            best_type = gt;
            best_count = gc;
            nic_type = cp->type[c * cp->ndev + npos];
        }
    }
    if (!found)
        return;
    int lo = MIN(best_type, nic_type), hi = MAX(best_type, nic_type);
    if (lo == CS_PATH_C2C && hi == CS_PATH_PHB)
        p_p->type = CS_PATH_P2C;
}

static void path_dis(cs_path_t *p_p)
{
    memset(p_p, 0, sizeof(*p_p));
    p_p->type = CS_PATH_DIS;
}

static void path_loc(cs_path_t *p_p)
{
    memset(p_p, 0, sizeof(*p_p));
    p_p->type = CS_PATH_LOC;
    p_p->nccl_bw = NCCL_LOC_BW;
    p_p->bw = NCCL_LOC_BW * 1e9;
}

/* The searches cs_path_intra made, kept with the topology: the decisions
 * ask for a node's paths pair by pair, from several places (transports,
 * NCCL's system, P2P checks), so one search per pair repeated each
 * base's search about as many times as the node has devices (an NVL72
 * rack: ~15,000 searches of ~250 devices, and the P2C rule's 36 CPU
 * searches per GPU-NIC pair, most of a run's time). A search from a base
 * gives every device's path to it; the slots are direct-mapped by base
 * (a collision searches again, nothing else changes), each holding the
 * base node's device states. */
#define INTRA_MEMO_SLOTS 512

typedef struct {
    int key[INTRA_MEMO_SLOTS];       /* 2 x base + nvb_disable, + 1; 0: empty */
    ipath_t *st[INTRA_MEMO_SLOTS];   /* the base node's device states, by position */
    int cap[INTRA_MEMO_SLOTS];       /* entries st holds */
    iscratch_t s, s2;                /* search scratch, sized for the largest node */
    cpu_paths_t cp;                  /* CPU paths of the last node the P2C rule needed */
} intra_memo_t;

static void intra_memo_free(gpointer data)
{
    intra_memo_t *m = data;
    for (int i = 0; i < INTRA_MEMO_SLOTS; i++)
        g_free(m->st[i]);
    iscratch_clear(&m->s);
    iscratch_clear(&m->s2);
    cpu_paths_clear(&m->cp);
    g_free(m);
}

/* Under p->intra_lock. */
static intra_memo_t *intra_memo(const cs_topo_t *t)
{
    cs_topo_priv_t *p = cs_topo_priv(t);
    if (p->intra != NULL)
        return p->intra;
    int maxdev = 1;
    for (int n = 0; n < t->nnodes; n++)
        maxdev = MAX(maxdev, p->node_dev_off[n + 1] - p->node_dev_off[n]);
    intra_memo_t *m = g_new0(intra_memo_t, 1);
    iscratch_init(&m->s, maxdev);
    iscratch_init(&m->s2, maxdev);
    m->cp.node = -1;
    p->intra = m;
    p->intra_free = intra_memo_free;
    return m;
}

/* The states of every device of dst's node towards dst (under the lock). */
static const ipath_t *intra_memo_search(const cs_topo_t *t, intra_memo_t *m, int dst, gboolean nvb_disable)
{
    cs_topo_priv_t *p = cs_topo_priv(t);
    int node = t->devs[dst].node;
    int ndev = p->node_dev_off[node + 1] - p->node_dev_off[node];
    int key = 2 * dst + (nvb_disable ? 1 : 0) + 1;
    int slot = (key - 1) % INTRA_MEMO_SLOTS;
    if (m->key[slot] == key)
        return m->st[slot];
    m->s.ndev = ndev;
    intra_search(t, dst, nvb_disable, &m->s);
    if (m->cap[slot] < ndev) {
        g_free(m->st[slot]);
        m->st[slot] = g_new(ipath_t, ndev);
        m->cap[slot] = ndev;
    }
    memcpy(m->st[slot], m->s.st, sizeof(ipath_t) * ndev);
    m->key[slot] = key;
    return m->st[slot];
}

gboolean cs_path_intra(const cs_topo_t *t, int src, int dst, gboolean nvb_disable, cs_path_t *p_p)
{
    g_return_val_if_fail(t != NULL && t->finished && p_p != NULL, FALSE);
    if (src < 0 || src >= t->ndevs || dst < 0 || dst >= t->ndevs ||
        t->devs[src].node < 0 || t->devs[src].node != t->devs[dst].node) {
        path_dis(p_p);
        return FALSE;
    }
    if (src == dst) {
        path_loc(p_p);
        return TRUE;
    }
    cs_topo_priv_t *p = cs_topo_priv(t);
    cs_path_t r;
    g_mutex_lock(&p->intra_lock);
    intra_memo_t *m = intra_memo(t);
    const ipath_t *st = intra_memo_search(t, m, dst, nvb_disable);
    path_from_state(t, &st[p->dev_pos[src]], &r);
    if (r.type != CS_PATH_DIS) {
        int node = t->devs[dst].node;
        m->s2.ndev = p->node_dev_off[node + 1] - p->node_dev_off[node];
        apply_p2c(t, &m->cp, &m->s2, src, dst, &r);
    }
    g_mutex_unlock(&p->intra_lock);
    *p_p = r;
    return r.type != CS_PATH_DIS;
}

/* ---- fabric routes --------------------------------------------------- */

/* Hop distances between fabric switches, one row per destination switch,
 * computed on first use. */
#define ROUTE_INF G_MAXUINT16

typedef struct {
    int nsw;
    int *sw_of;          /* device -> switch index, -1 */
    int *sw_dev;         /* switch index -> device */
    guint16 **rows;      /* rows[s][x] = hops from switch x to switch s */
    int *home;           /* device -> the one switch (index) its NET links reach, -1: none or several */
    int *nbr_off;        /* switch index -> its first entry in nbr and nbr_sw */
    int *nbr;            /* per switch, its NET links to switches as positions in t->adj, sorted by
                          * the far switch, then by position (adjacency order) */
    int *nbr_sw;         /* the far switch of each: what the searches read, without the links */
} route_t;

static void route_free(gpointer data)
{
    route_t *r = data;
    for (int i = 0; i < r->nsw; i++)
        g_free(r->rows[i]);
    g_free(r->rows);
    g_free(r->sw_of);
    g_free(r->sw_dev);
    g_free(r->home);
    g_free(r->nbr_off);
    g_free(r->nbr);
    g_free(r->nbr_sw);
    g_free(r);
}

static void route_index(const cs_topo_t *t, route_t *r);

static route_t *route_get(const cs_topo_t *t)
{
    cs_topo_priv_t *p = cs_topo_priv(t);
    if (p->route != NULL)
        return p->route;
    route_t *r = g_new0(route_t, 1);
    r->sw_of = g_new(int, MAX(t->ndevs, 1));
    for (int i = 0; i < t->ndevs; i++)
        r->sw_of[i] = t->devs[i].kind == CS_DEV_SWITCH ? r->nsw++ : -1;
    r->sw_dev = g_new(int, MAX(r->nsw, 1));
    for (int i = 0; i < t->ndevs; i++)
        if (r->sw_of[i] >= 0)
            r->sw_dev[r->sw_of[i]] = i;
    r->rows = g_new0(guint16 *, MAX(r->nsw, 1));
    route_index(t, r);
    p->route = r;
    p->route_free = route_free;
    return r;
}

static const guint16 *route_row(const cs_topo_t *t, route_t *r, int sw)
{
    if (r->rows[sw] != NULL)
        return r->rows[sw];
    guint16 *row = g_new(guint16, MAX(r->nsw, 1));
    for (int i = 0; i < r->nsw; i++)
        row[i] = ROUTE_INF;
    g_autofree int *queue = g_new(int, MAX(r->nsw, 1));
    int head = 0, tail = 0;
    row[sw] = 0;
    queue[tail++] = sw;
    while (head < tail) {
        int x = queue[head++];
        for (int i = r->nbr_off[x]; i < r->nbr_off[x + 1]; i++) {
            int y = r->nbr_sw[i];
            if (row[y] != ROUTE_INF)
                continue;
            row[y] = MIN(row[x] + 1, ROUTE_INF - 1);
            queue[tail++] = y;
        }
    }
    r->rows[sw] = row;
    return row;
}

/* Hops from switch x to device b: through one of b's switches. */
static guint dist_to(const cs_topo_t *t, route_t *r, int x, int b)
{
    guint best = ROUTE_INF;
    for (int k = t->adj_off[b]; k < t->adj_off[b + 1]; k++) {
        const cs_link_t *l = &t->links[t->adj[k]];
        int s = r->sw_of[l->dst];
        if (l->kind != CS_LINK_NET || s < 0)
            continue;
        guint16 d = route_row(t, r, s)[x];
        if (d != ROUTE_INF)
            best = MIN(best, (guint)d + 1);
    }
    return best;
}

/* murmur3's 32-bit finaliser: spreads the flow hash differently per hop,
 * so consecutive ECMP stages are not correlated. */
static guint32 hop_hash(guint32 h, int hop)
{
    h ^= (guint32)(hop + 1) * 0x9e3779b9u;
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

/* The links from 'cur' on a shortest route to b (parallel cables
 * included, in adjacency order), at most 'max'; *best_p their hops to b.
 * 0 when none. */
static int hop_candidates_scan(const cs_topo_t *t, route_t *r, int cur, int b, int *cand, int max, guint *best_p)
{
    int ncand = 0;
    /* a link to b is 1 hop, any other at least 2: those are the candidates
     * (and b's switch's row, a search of the whole fabric, is not needed) */
    for (int k = t->adj_off[cur]; k < t->adj_off[cur + 1]; k++) {
        const cs_link_t *l = &t->links[t->adj[k]];
        if (l->kind == CS_LINK_NET && l->dst == b && ncand < max)
            cand[ncand++] = t->adj[k];
    }
    if (ncand > 0) {
        *best_p = 1;
        return ncand;
    }
    guint best = ROUTE_INF;
    for (int k = t->adj_off[cur]; k < t->adj_off[cur + 1]; k++) {
        const cs_link_t *l = &t->links[t->adj[k]];
        if (l->kind != CS_LINK_NET)
            continue;
        guint d;   /* hops from cur to b through this link */
        if (l->dst == b)
            d = 1;
        else if (r->sw_of[l->dst] >= 0)
            d = dist_to(t, r, r->sw_of[l->dst], b);
        else
            continue;   /* NICs and GPUs do not relay */
        if (d == ROUTE_INF)
            continue;
        if (l->dst != b)
            d += 1;
        if (d < best) {
            best = d;
            ncand = 0;
        }
        if (d == best && ncand < max)
            cand[ncand++] = t->adj[k];
    }
    *best_p = best;
    return ncand;
}

/* A switch's link to another: the far switch, then its place in t->adj. */
typedef struct {
    int sw, k;
} nbr_key_t;

static int nbr_cmp(const void *x, const void *y)
{
    const nbr_key_t *a = x, *b = y;
    if (a->sw != b->sw)
        return a->sw < b->sw ? -1 : 1;
    return a->k < b->k ? -1 : a->k > b->k;
}

/* r->home, r->nbr_off, r->nbr and r->nbr_sw (route_t). */
static void route_index(const cs_topo_t *t, route_t *r)
{
    r->home = g_new(int, MAX(t->ndevs, 1));
    r->nbr_off = g_new(int, r->nsw + 1);
    int total = 0;
    for (int d = 0; d < t->ndevs; d++) {
        int h = -1;
        for (int k = t->adj_off[d]; k < t->adj_off[d + 1]; k++) {
            const cs_link_t *l = &t->links[t->adj[k]];
            int s = r->sw_of[l->dst];
            if (l->kind != CS_LINK_NET || s < 0)
                continue;
            if (r->sw_of[d] >= 0)
                total++;
            if (s != h)
                h = h == -1 ? s : -2;
        }
        r->home[d] = h >= 0 ? h : -1;
    }
    g_autofree nbr_key_t *keys = g_new(nbr_key_t, MAX(total, 1));
    int n = 0;
    for (int x = 0; x < r->nsw; x++) {
        int d = r->sw_dev[x];
        r->nbr_off[x] = n;
        for (int k = t->adj_off[d]; k < t->adj_off[d + 1]; k++) {
            const cs_link_t *l = &t->links[t->adj[k]];
            if (l->kind == CS_LINK_NET && r->sw_of[l->dst] >= 0)
                keys[n++] = (nbr_key_t){ .sw = r->sw_of[l->dst], .k = k };
        }
        qsort(keys + r->nbr_off[x], (size_t)(n - r->nbr_off[x]), sizeof *keys, nbr_cmp);
    }
    r->nbr_off[r->nsw] = n;
    r->nbr = g_new(int, MAX(n, 1));
    r->nbr_sw = g_new(int, MAX(n, 1));
    for (int i = 0; i < n; i++) {
        r->nbr[i] = keys[i].k;
        r->nbr_sw[i] = keys[i].sw;
    }
}

/* hop_candidates_scan, without the scan where cur is a switch one hop
 * from the one switch b hangs from (a spine towards a leaf's NIC): the
 * links are then cur's to that switch, 2 hops from b, every other
 * neighbour being at least 3 (links come in pairs, so cur has none to b
 * itself). A planner's cluster of 8192 nodes has spines of thousands of
 * links, which the scan read for every route across them. */
static int hop_candidates(const cs_topo_t *t, route_t *r, int cur, int b, int *cand, int max, guint *best_p)
{
    int x = r->sw_of[cur];
    if (x < 0)
        return hop_candidates_scan(t, r, cur, b, cand, max, best_p);
    int home = r->home[b];
    if (home < 0 || home == x)
        return hop_candidates_scan(t, r, cur, b, cand, max, best_p);
    /* the first of cur's links to 'home', if any */
    int lo = r->nbr_off[x], hi = r->nbr_off[x + 1];
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (r->nbr_sw[mid] < home)
            lo = mid + 1;
        else
            hi = mid;
    }
    int n = 0;
    for (int i = lo; i < r->nbr_off[x + 1] && n < max && r->nbr_sw[i] == home; i++)
        cand[n++] = t->adj[r->nbr[i]];
    if (n == 0)
        return hop_candidates_scan(t, r, cur, b, cand, max, best_p);
    *best_p = 2;
    return n;
}

/* Bandwidth, latency and type of a path whose links are set. */
static void path_finish(const cs_topo_t *t, cs_path_t *p_p)
{
    p_p->type = CS_PATH_NET;
    p_p->bw = INFINITY;
    p_p->nccl_bw = INFINITY;
    p_p->lat = 0;
    for (int i = 0; i < p_p->nhops; i++) {
        const cs_link_t *l = &t->links[p_p->links[i]];
        p_p->bw = MIN(p_p->bw, l->bw);
        p_p->nccl_bw = MIN(p_p->nccl_bw, l->nccl_bw);
        p_p->lat += l->lat;
    }
}

/* Shortest routes a -> b over NET links, relayed by fabric switches only;
 * at each hop the candidates are all links (parallel cables included) on
 * a shortest route, in adjacency order, and hash picks one. */
static gboolean net_route(const cs_topo_t *t, route_t *r, int a, int b, guint32 hash, cs_path_t *p_p)
{
    int cand[256];
    int cur = a, nhops = 0;
    guint remaining = ROUTE_INF;
    for (int hop = 0;; hop++) {
        guint best;
        int ncand = hop_candidates(t, r, cur, b, cand, (int)G_N_ELEMENTS(cand), &best);
        if (ncand == 0 || (hop > 0 && best >= remaining) || nhops >= CS_PATH_MAX_HOPS)
            return FALSE;
        remaining = best;
        int li = cand[hop_hash(hash, hop) % (guint32)ncand];
        p_p->links[nhops++] = li;
        cur = t->links[li].dst;
        if (cur == b)
            break;
    }
    p_p->nhops = nhops;
    path_finish(t, p_p);
    return TRUE;
}

/* Every shortest route from 'cur' (the partial path in *p) to b, depth
 * first in candidate order, into out[*n..max). */
static void net_routes_from(const cs_topo_t *t, route_t *r, int cur, int b, guint remaining, cs_path_t *p,
                            cs_path_t *out, int *n, int max)
{
    int cand[256];
    guint best;
    int ncand = hop_candidates(t, r, cur, b, cand, (int)G_N_ELEMENTS(cand), &best);
    if (ncand == 0 || (p->nhops > 0 && best >= remaining) || p->nhops >= CS_PATH_MAX_HOPS)
        return;
    for (int i = 0; i < ncand && *n < max; i++) {
        p->links[p->nhops++] = cand[i];
        int next = t->links[cand[i]].dst;
        if (next == b) {
            out[*n] = *p;
            path_finish(t, &out[*n]);
            (*n)++;
        } else {
            net_routes_from(t, r, next, b, best, p, out, n, max);
        }
        p->nhops--;
    }
}

int cs_path_net_all(const cs_topo_t *t, int nic_a, int nic_b, cs_path_t *out, int max)
{
    g_return_val_if_fail(t != NULL && t->finished && out != NULL && max > 0, 0);
    if (nic_a < 0 || nic_a >= t->ndevs || nic_b < 0 || nic_b >= t->ndevs || nic_a == nic_b)
        return 0;
    cs_topo_priv_t *p = cs_topo_priv(t);
    cs_path_t cur;
    memset(&cur, 0, sizeof cur);
    int n = 0;
    g_mutex_lock(&p->route_lock);
    net_routes_from(t, route_get(t), nic_a, nic_b, ROUTE_INF, &cur, out, &n, max);
    g_mutex_unlock(&p->route_lock);
    return n;
}

gboolean cs_path_net(const cs_topo_t *t, int nic_a, int nic_b, guint32 hash, cs_path_t *p_p)
{
    g_return_val_if_fail(t != NULL && t->finished && p_p != NULL, FALSE);
    if (nic_a < 0 || nic_a >= t->ndevs || nic_b < 0 || nic_b >= t->ndevs) {
        path_dis(p_p);
        return FALSE;
    }
    if (nic_a == nic_b) {
        path_loc(p_p);
        return TRUE;
    }
    cs_topo_priv_t *p = cs_topo_priv(t);
    cs_path_t r;
    memset(&r, 0, sizeof(r));
    g_mutex_lock(&p->route_lock);
    gboolean ok = net_route(t, route_get(t), nic_a, nic_b, hash, &r);
    g_mutex_unlock(&p->route_lock);
    if (!ok) {
        path_dis(p_p);
        return FALSE;
    }
    *p_p = r;
    return TRUE;
}

/* ---- per-node cache -------------------------------------------------- */

struct cs_path_cache {
    const cs_topo_t *t;
    int *gpu_off;        /* node -> first entry of its GPU x GPU block */
    int *nic_off;        /* node -> first entry of its GPU x NIC block */
    cs_path_t *gpu;
    cs_path_t *nic;
};

cs_path_cache_t *cs_path_cache_new(const cs_topo_t *t, gboolean nvb_disable)
{
    g_return_val_if_fail(t != NULL && t->finished, NULL);
    cs_topo_priv_t *p = cs_topo_priv(t);
    cs_path_cache_t *c = g_new0(cs_path_cache_t, 1);
    c->t = t;
    c->gpu_off = g_new0(int, t->nnodes + 1);
    c->nic_off = g_new0(int, t->nnodes + 1);
    int maxdev = 0;
    for (int n = 0; n < t->nnodes; n++) {
        int g = cs_topo_node_gpus(t, n);
        int k = p->node_nic_off[n + 1] - p->node_nic_off[n];
        c->gpu_off[n + 1] = c->gpu_off[n] + g * g;
        c->nic_off[n + 1] = c->nic_off[n] + g * k;
        maxdev = MAX(maxdev, p->node_dev_off[n + 1] - p->node_dev_off[n]);
    }
    c->gpu = g_new(cs_path_t, MAX(c->gpu_off[t->nnodes], 1));
    c->nic = g_new(cs_path_t, MAX(c->nic_off[t->nnodes], 1));

    iscratch_t s, s2;
    iscratch_init(&s, maxdev);
    iscratch_init(&s2, maxdev);
    for (int n = 0; n < t->nnodes; n++) {
        int first = t->node_first_rank[n], ng = cs_topo_node_gpus(t, n);
        const int *nics = p->node_nics + p->node_nic_off[n];
        int nn = p->node_nic_off[n + 1] - p->node_nic_off[n];
        s.ndev = s2.ndev = p->node_dev_off[n + 1] - p->node_dev_off[n];
        cpu_paths_t cp = { .node = -1 };
        /* Paths to GPU b: one search from b serves every source a. */
        for (int b = 0; b < ng; b++) {
            int db = t->rank_dev[first + b];
            intra_search(t, db, nvb_disable, &s);
            for (int a = 0; a < ng; a++) {
                cs_path_t *e = &c->gpu[c->gpu_off[n] + a * ng + b];
                if (a == b)
                    path_loc(e);
                else
                    path_from_state(t, &s.st[p->dev_pos[t->rank_dev[first + a]]], e);
            }
        }
        for (int k = 0; k < nn; k++) {
            intra_search(t, nics[k], nvb_disable, &s);
            for (int a = 0; a < ng; a++) {
                int da = t->rank_dev[first + a];
                cs_path_t *e = &c->nic[c->nic_off[n] + a * nn + k];
                path_from_state(t, &s.st[p->dev_pos[da]], e);
                if (e->type != CS_PATH_DIS)
                    apply_p2c(t, &cp, &s2, da, nics[k], e);
            }
        }
        cpu_paths_clear(&cp);
    }
    iscratch_clear(&s);
    iscratch_clear(&s2);
    return c;
}

void cs_path_cache_free(cs_path_cache_t *c)
{
    if (c == NULL)
        return;
    g_free(c->gpu_off);
    g_free(c->nic_off);
    g_free(c->gpu);
    g_free(c->nic);
    g_free(c);
}

/* NULL when the ranks are on different nodes or out of range. */
const cs_path_t *cs_path_cache_gpu(const cs_path_cache_t *c, int rank_a, int rank_b)
{
    const cs_topo_t *t = c->t;
    if (rank_a < 0 || rank_a >= t->ngpus || rank_b < 0 || rank_b >= t->ngpus)
        return NULL;
    int n = cs_topo_rank_dev(t, rank_a)->node;
    if (cs_topo_rank_dev(t, rank_b)->node != n)
        return NULL;
    int first = t->node_first_rank[n], ng = t->node_first_rank[n + 1] - first;
    return &c->gpu[c->gpu_off[n] + (rank_a - first) * ng + (rank_b - first)];
}

/* nic_local is the position in cs_topo_node_nics() order; NULL if out of
 * range. */
const cs_path_t *cs_path_cache_nic(const cs_path_cache_t *c, int rank, int nic_local)
{
    const cs_topo_t *t = c->t;
    if (rank < 0 || rank >= t->ngpus)
        return NULL;
    int n = cs_topo_rank_dev(t, rank)->node;
    int first = t->node_first_rank[n];
    int ng = t->node_first_rank[n + 1] - first;
    int nn = ng ? (c->nic_off[n + 1] - c->nic_off[n]) / ng : 0;
    if (nic_local < 0 || nic_local >= nn)
        return NULL;
    return &c->nic[c->nic_off[n] + (rank - first) * nn + nic_local];
}
