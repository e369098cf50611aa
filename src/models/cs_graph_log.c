/* NCCL's INFO lines about graphs and channels, and its graph dump, from
 * the communicator collsim built (cs_decide.c, cs_decide_graph.c). The
 * formats and the way channels are connected are NCCL v2.28.9's:
 *  - search.cc ncclTopoPrintGraph ("Pattern ..." and " 0 : GPU/.. " lines)
 *    and ncclTopoGetXmlFromGraphs (NCCL_GRAPH_DUMP_FILE);
 *  - connect.cc ncclTopoPreset (a ring channel's intra-node order; a tree
 *    channel's chain, treeIntra[0] at the top; the node's parent and
 *    child ranks), connectRings, connectTrees ("Tree" lines) and
 *    ncclTopoPostset (crossNic 2 swaps on odd nodes, duplication,
 *    copyChannels);
 *  - trees.cc ncclGetBtree / ncclGetDtree (the double binary tree over
 *    nodes); rings.cc ncclBuildRings / dumpLine ("Channel NN/MM :");
 *  - init.cc ("comm ... rank", "Ring NN :", "Trees [c] ...").
 * The code is ours. */
#include "config.h"

#include <string.h>

#include "models/cs_graph_log.h"
#include "models/cs_decide_int.h"

/* topo.cc topoPathTypeStr */
static const char *const path_names[] = { "LOC", "NVL", "NVB", "C2C", "PIX", "PXB",
                                          "P2C", "PXN", "PHB", "SYS", "NET", "DIS" };

static const char *path_name(int t)
{
    return t >= 0 && t < (int)G_N_ELEMENTS(path_names) ? path_names[t] : "?";
}

typedef struct {
    int up, down[3];
} tree_t;

/* Every channel of the communicator, connected as connect.cc does. */
typedef struct {
    const cs_comm_t *c;
    int nranks, nnodes;
    int nch;            /* channels searched and agreed (comm->nChannels before postset) */
    int n2;             /* after doubling (before CollNet's extra channels) */
    int m;              /* after doubling, CollNet and NCCL_MAX_NCHANNELS / MAX_CTAS */
    int final;          /* after NCCL_MIN_NCHANNELS / MIN_CTAS */
    int *prev, *next;   /* [gc * nranks + r], graph channel gc < nch */
    tree_t *tree;       /* [(which * nch + gc) * nranks + r], which = dtree 0 or 1 */
    int *ttp, *ttc0, *ttc1;   /* [gc * nnodes + n] */
} chans_t;

static const cs_shape_t *shape_of(const cs_comm_t *c, int n)
{
    return g_ptr_array_index(c->shapes, c->nodes[n].shape);
}

/* trees.cc ncclGetBtree: parent, children and whether we are the
 * parent's first (0) or second (1) child; the root has one child, d1. */
static void btree(int n, int r, int *u, int *d0, int *d1, int *type)
{
    int bit;
    for (bit = 1; bit < n; bit <<= 1)
        if (bit & r)
            break;
    if (r == 0) {
        *u = -1;
        *d0 = -1;
        *d1 = n > 1 ? bit >> 1 : -1;
        return;
    }
    int up = (r ^ bit) | (bit << 1);
    if (up >= n)
        up = r ^ bit;
    *type = r < up ? 0 : 1;
    *u = up;
    int low = bit >> 1;
    *d0 = low == 0 ? -1 : r - low;
    int down1 = low == 0 ? -1 : r + low;
    while (down1 >= n) {
        down1 = low == 0 ? -1 : r + low;
        low >>= 1;
    }
    *d1 = down1;
}

/* trees.cc ncclGetDtree: tree 1 mirrors tree 0 (even n) or shifts it by
 * one (odd n). */
static void dtree(int n, int r, int u[2], int d0[2], int d1[2], int type[2])
{
    type[0] = type[1] = 0;
    btree(n, r, &u[0], &d0[0], &d1[0], &type[0]);
    int a, b, e;
    if (n % 2 == 1) {
        btree(n, (r - 1 + n) % n, &a, &b, &e, &type[1]);
        u[1] = a == -1 ? -1 : (a + 1) % n;
        d0[1] = b == -1 ? -1 : (b + 1) % n;
        d1[1] = e == -1 ? -1 : (e + 1) % n;
    } else {
        btree(n, n - 1 - r, &a, &b, &e, &type[1]);
        u[1] = a == -1 ? -1 : n - 1 - a;
        d0[1] = b == -1 ? -1 : n - 1 - b;
        d1[1] = e == -1 ? -1 : n - 1 - e;
    }
}

/* connect.cc setTreeDown: the first free child slot. */
static void tree_add_down(tree_t *t, int rank)
{
    for (int x = 0; x < 3; x++)
        if (t->down[x] < 0) {
            t->down[x] = rank;
            return;
        }
    g_warn_if_reached();   /* NCCL: "tree already has 3 children" */
}

static void chans_build(const cs_comm_t *c, chans_t *k)
{
    memset(k, 0, sizeof *k);
    k->c = c;
    k->nranks = c->info.nranks;
    k->nnodes = c->nnodes;
    k->nch = MAX(c->nch, 1);
    /* connect.cc ncclTopoPostset: double, the sm90 multi-node doubling,
     * then NCCL_MAX_NCHANNELS / MAX_CTAS cut and MIN_NCHANNELS / MIN_CTAS
     * copies (copyChannels copies channel i - start). */
    k->n2 = MIN(CS_MAXCHANNELS, k->nch * 2);
    /* CollNet: copyChannels(n2, n2 + n2/2) copies channel i - n2 */
    int n1 = cs_collnet_postset(c, k->n2);
    if (c->info.cc >= 90 && c->nnodes > 1 && c->graph_bw_intra[CS_ALGO_RING] > 45.0 && n1 < 16)
        n1 *= 2;
    k->m = MAX(1, MIN(MIN(c->s.max_nchannels, n1), c->s.max_ctas));
    k->final = MAX(k->m, MAX(c->s.min_nchannels, c->s.min_ctas));
    int R = k->nranks, N = k->nnodes, C = k->nch;
    k->prev = g_new(int, (gsize)C * R);
    k->next = g_new(int, (gsize)C * R);
    k->tree = g_new(tree_t, (gsize)2 * C * R);
    k->ttp = g_new(int, (gsize)C * N);
    k->ttc0 = g_new(int, (gsize)C * N);
    k->ttc1 = g_new(int, (gsize)C * N);
    g_autofree int *order = g_new(int, MAX(R, 1));
    for (int gc = 0; gc < C; gc++) {
        /* rings: each node's intra order one after the other
         * (connectRings: a node's first rank receives from the previous
         * node's last); crossNic 2 nodes of odd index take channel gc^1 */
        int k2 = 0;
        for (int n = 0; n < N; n++) {
            const cs_shape_t *sh = shape_of(c, n);
            const cs_graph_t *g = &sh->ring;
            int G = sh->sys->ngpus, e = MIN(gc, g->nch - 1);
            if (g->cross_nic == 2 && C % 2 == 0 && n % 2 == 1 && (e ^ 1) < g->nch)
                e ^= 1;
            for (int i = 0; i < G; i++)
                order[k2++] = c->nodes[n].ranks[g->intra[e * G + i]];
        }
        for (int i = 0; i < R; i++) {
            k->next[gc * R + order[i]] = order[(i + 1) % R];
            k->prev[gc * R + order[(i + 1) % R]] = order[i];
        }
        /* trees: the intra-node chain (ncclTopoPreset), then the nodes'
         * double binary tree (connectTrees) */
        tree_t *t0 = k->tree + (gsize)gc * R, *t1 = k->tree + (gsize)(C + gc) * R;
        for (int n = 0; n < N; n++) {
            const cs_shape_t *sh = shape_of(c, n);
            const cs_graph_t *g = &sh->tree;
            int G = sh->sys->ngpus, e = MIN(gc, g->nch - 1);
            const int *intra = g->intra + e * G, *ranks = c->nodes[n].ranks;
            for (int i = 0; i < G; i++) {
                tree_t t = { i == 0 ? -1 : ranks[intra[i - 1]],
                             { i == G - 1 ? -1 : ranks[intra[i + 1]], -1, -1 } };
                t0[ranks[intra[i]]] = t1[ranks[intra[i]]] = t;
            }
            int c0 = g->pattern == CS_PATTERN_TREE ? 0 : 1;
            int c1 = g->pattern == CS_PATTERN_SPLIT_TREE ? 1 : 0;
            k->ttp[gc * N + n] = ranks[intra[0]];
            k->ttc0[gc * N + n] = ranks[intra[MIN(c0, G - 1)]];
            k->ttc1[gc * N + n] = ranks[intra[MIN(c1, G - 1)]];
        }
        const int *ttp = k->ttp + gc * N, *ttc0 = k->ttc0 + gc * N, *ttc1 = k->ttc1 + gc * N;
        for (int n = 0; n < N; n++) {
            int u[2], d0[2], d1[2], type[2];
            dtree(N, n, u, d0, d1, type);
            tree_t *ts[2] = { t0, t1 };
            for (int w = 0; w < 2; w++) {
                if (u[w] != -1)
                    ts[w][ttp[n]].up = (type[w] == 0 ? ttc0 : ttc1)[u[w]];
                if (d0[w] != -1)
                    tree_add_down(&ts[w][ttc0[n]], ttp[d0[w]]);
                if (d1[w] != -1)
                    tree_add_down(&ts[w][ttc1[n]], ttp[d1[w]]);
            }
        }
    }
}

static void chans_clear(chans_t *k)
{
    g_free(k->prev);
    g_free(k->next);
    g_free(k->tree);
    g_free(k->ttp);
    g_free(k->ttc0);
    g_free(k->ttc1);
}

/* Final channel ch: the graph channel it copies and which tree. */
static void chans_map(const chans_t *k, int ch, int *gc, int *which)
{
    int j = ch % k->m;
    if (j >= k->n2)
        j -= k->n2;
    *gc = j % k->nch;
    *which = (j % (2 * k->nch)) >= k->nch;
}

gboolean cs_graph_log_channel(const cs_comm_t *c, int rank, int ch, int *prev, int *next,
                              int *up, int down[3])
{
    g_return_val_if_fail(c != NULL, FALSE);
    if (rank < 0 || rank >= c->info.nranks || ch < 0)
        return FALSE;
    chans_t k;
    chans_build(c, &k);
    gboolean ok = ch < k.final;
    if (ok) {
        int gc, w;
        chans_map(&k, ch, &gc, &w);
        const tree_t *t = &k.tree[(gsize)(w * k.nch + gc) * k.nranks + rank];
        *prev = k.prev[gc * k.nranks + rank];
        *next = k.next[gc * k.nranks + rank];
        *up = t->up;
        memcpy(down, t->down, sizeof t->down);
    }
    chans_clear(&k);
    return ok;
}

int *cs_graph_log_rings(const cs_comm_t *c, int *nch_p)
{
    g_return_val_if_fail(c != NULL && nch_p != NULL, NULL);
    chans_t k;
    chans_build(c, &k);
    int *next = g_new(int, (gsize)MAX(1, k.final) * k.nranks);
    for (int ch = 0; ch < k.final; ch++) {
        int gc, w;
        chans_map(&k, ch, &gc, &w);
        memcpy(&next[(gsize)ch * k.nranks], &k.next[gc * k.nranks], sizeof *next * (size_t)k.nranks);
    }
    *nch_p = k.final;
    chans_clear(&k);
    return next;
}

/* ---- the lines ------------------------------------------------------------ */

/* float, as NCCL keeps graph bandwidths */
static double f32(double v)
{
    return (double)(float)v;
}

/* search.cc ncclTopoPrintGraph */
static void print_graph(GString *o, const char *pfx, const cs_comm_t *c, int n, const cs_graph_t *g)
{
    const cs_sys_t *sys = shape_of(c, n)->sys;
    g_string_append_printf(o, "%sPattern %d, crossNic %d, nChannels %d, bw %f/%f, type %s/%s, sameChannels %d\n",
                           pfx, g->pattern, g->cross_nic, g->nch, f32(g->bw_intra), f32(g->bw_inter),
                           path_name(g->type_intra), path_name(g->type_inter), g->same_channels);
    int G = sys->ngpus;
    for (int ch = 0; ch < g->nch; ch++) {
        g_string_append_printf(o, "%s%2d :", pfx, ch);
        if (sys->inter)
            g_string_append_printf(o, " NET/0-%x", (unsigned)MAX(g->inter[ch * 2], 0));
        for (int i = 0; i < G; i++) {
            /* NCCL's GPU id, its bus id, where the topology has it (this
             * node's own GPU, not the shape's first node's) */
            int l = g->intra[ch * G + i];
            const cs_device_t *d = &c->t->devs[c->t->rank_dev[c->nodes[n].ranks[l]]];
            if (d->pci_busid != 0)
                g_string_append_printf(o, " GPU/0-%" G_GINT64_MODIFIER "x", d->pci_busid);
            else
                g_string_append_printf(o, " GPU/0-%x", (unsigned)sys->gpu_local[l]);
            if (g->id == 3)
                break;   /* NVLS graphs only use the first GPU */
        }
        if (sys->inter)
            g_string_append_printf(o, " NET/0-%x", (unsigned)MAX(g->inter[ch * 2 + 1], 0));
        g_string_append_c(o, '\n');
    }
}

/* init.cc ncclNvlsInit as cs_decide.c: NVLS is searched on nodes with
 * NVSwitch, sm90 or newer, at least two GPUs, unless NCCL_NVLS_ENABLE=0. */
static gboolean nvls_searched(const cs_comm_t *c, const cs_sys_t *sys)
{
    return c->s.nvls_enable != 0 && sys->ngpus >= 2 && sys->nvs && sys->cc_min >= 90;
}

/* rings.cc dumpLine: " %*d" per rank (width of nranks - 1), in a 128-byte
 * line whose end becomes "..." when it overflows. */
static void dump_line(GString *o, const char *pfx, const char *prefix, const int *ring, int n)
{
    GString *l = g_string_new(prefix);
    char tmp[16];
    int width = g_snprintf(tmp, sizeof tmp, "%d", n - 1);
    for (int i = 0; i < n && l->len < 127; i++)
        g_string_append_printf(l, " %*d", width, ring[i]);
    if (l->len >= 128) {
        g_string_truncate(l, 124);
        g_string_append(l, "...");
    }
    g_string_append_printf(o, "%s%s\n", pfx, l->str);
    g_string_free(l, TRUE);
}

/* connect.cc connectCollNet ("CollNetDirect channel ..." per channel)
 * and coll_net.cc ncclCollNetChainBufferSetup ("Connected Collnet
 * Chains", at most 1023 characters), for a rank of a communicator with
 * CollNet on. */
static void print_collnet(GString *o, const char *pfx, const cs_comm_t *c, const chans_t *k, int r)
{
    int n = c->rank_node[r], R = k->nranks;
    const cs_shape_t *sh = shape_of(c, n);
    int G = sh->sys->ngpus;
    const int *ranks = c->nodes[n].ranks;
    int local_ranks = c->nodes[n].ngpus, me = c->rank_local[r];
    if (c->collnet_direct_heads > 0) {
        const cs_graph_t *g = &sh->cn_direct;
        int heads[CS_MAXCHANNELS], nh = 0, my = -1;
        for (int ch = 0; ch < g->nch; ch++) {
            int h = g->intra[ch * G], x;
            for (x = 0; x < nh && heads[x] != h; x++)
                ;
            if (x == nh)
                heads[nh++] = h;
        }
        for (int h = 0; h < nh; h++)
            if (heads[h] == me)
                my = h;
        for (int ch = 0; ch < k->final; ch++) {
            GString *l = g_string_new(NULL);
            g_string_append_printf(l, "CollNetDirect channel %d rank %d ", ch, r);
            int ndown = 0, nup = 0;
            if (my >= 0) {
                g_string_append(l, "down ");
                const int *intra = g->intra + my * G;
                for (int i = 0; i < local_ranks && i < G; i++) {
                    if (intra[i] == me)
                        continue;
                    g_string_append_printf(l, " %d ", ranks[intra[i]]);
                    ndown++;
                }
                g_string_append_printf(l, "nDown %d ", ndown);
            }
            g_string_append(l, "up ");
            for (int h = 0; h < nh; h++)
                if (heads[h] != me) {
                    g_string_append_printf(l, " %d ", ranks[heads[h]]);
                    nup++;
                }
            g_string_append(l, "heads ");
            for (int h1 = 0; h1 < nh; h1++)
                g_string_append_printf(l, " %d ", ranks[heads[((my < 0 ? 0 : my) + h1) % nh]]);
            g_string_append_printf(l, "nUp %d nHeads %d headRank %d out %d shift %d", nup, nh, my,
                                   my >= 0 ? R : -1, nh > 0 ? (r % local_ranks) % nh : 0);
            g_string_append_printf(o, "%s%s\n", pfx, l->str);
            g_string_free(l, TRUE);
        }
    }
    if (c->collnet_chain_support) {
        /* connect.cc ncclTopoPreset: up = intra[i-1] (the head's: nRanks),
         * down = intra[i+1] */
        const cs_graph_t *g = &sh->cn_chain;
        GString *line = g_string_new(NULL);
        for (int ch = 0; ch < k->final && g->nch > 0; ch++) {
            int gc, w;
            chans_map(k, ch, &gc, &w);
            const int *intra = g->intra + (gc % g->nch) * G;
            int i;
            for (i = 0; i < G && intra[i] != me; i++)
                ;
            int up = i == 0 ? R : ranks[intra[i - 1]], down = i == G - 1 ? -1 : ranks[intra[i + 1]];
            g_string_append_printf(line, " [%d] %d->%d->%d", ch, down, r, up);
        }
        if (line->len > 1023)
            g_string_truncate(line, 1023);
        g_string_append_printf(o, "%sConnected Collnet Chains %s\n", pfx, line->str);
        g_string_free(line, TRUE);
    }
}

static void print_rank(GString *o, const cs_comm_t *c, const chans_t *k, int r)
{
    const cs_topo_t *t = c->t;
    int n = c->rank_node[r], host = c->nodes[n].host;
    const cs_shape_t *sh = shape_of(c, n);
    int dev = t->devs[t->rank_dev[r]].local;
    g_autofree char *pfx = g_strdup_printf("node%d:rank%d [%d] NCCL INFO ", host, r, dev);

    print_graph(o, pfx, c, n, &sh->ring);
    print_graph(o, pfx, c, n, &sh->tree);
    /* init.cc: the CollNet chain, then direct graph, searched where the
     * plugin is loaded (cs_decide_collnet.c) */
    if (c->collnet_plugin && sh->sys->inter) {
        print_graph(o, pfx, c, n, &sh->cn_chain);
        print_graph(o, pfx, c, n, &sh->cn_direct);
    }
    if (nvls_searched(c, sh->sys))
        print_graph(o, pfx, c, n, &sh->nvls);

    /* comm->localRanks: the ranks of the host (not of the NCCL node) */
    int local_ranks = cs_topo_node_gpus(t, host), local_rank = r - t->node_first_rank[host];
    g_string_append_printf(o, "%scomm - rank %d nRanks %d nNodes %d localRanks %d localRank %d MNNVL 0\n",
                           pfx, r, k->nranks, k->nnodes, local_ranks, local_rank);

    /* connect.cc connectTrees: ranks that join their node to others */
    for (int gc = 0; gc < k->nch; gc++) {
        int N = k->nnodes;
        if (r != k->ttp[gc * N + n] && r != k->ttc0[gc * N + n] && r != k->ttc1[gc * N + n])
            continue;
        for (int w = 0; w < 2; w++) {
            const tree_t *tr = &k->tree[(gsize)(w * k->nch + gc) * k->nranks + r];
            g_string_append_printf(o, "%sTree %d : %d -> %d -> %d/%d/%d\n", pfx, gc + w * k->nch, tr->up, r,
                                   tr->down[0], tr->down[1], tr->down[2]);
        }
    }

    /* rings.cc ncclBuildRings: rank 0 prints every ring from itself */
    if (r == 0) {
        g_autofree int *ring = g_new(int, k->nranks);
        for (int ch = 0; ch < k->final; ch++) {
            int gc, w;
            chans_map(k, ch, &gc, &w);
            int cur = 0;
            for (int i = 0; i < k->nranks; i++) {
                ring[i] = cur;
                cur = k->next[gc * k->nranks + cur];
            }
            char prefix[40];
            g_snprintf(prefix, sizeof prefix, "Channel %02d/%02d :", ch, k->final);
            dump_line(o, pfx, prefix, ring, k->nranks);
        }
    }

    /* init.cc: a "Ring" line per channel, then one "Trees" line of at
     * most 1022 characters */
    GString *trees = g_string_new(NULL);
    for (int ch = 0; ch < k->final; ch++) {
        int gc, w;
        chans_map(k, ch, &gc, &w);
        const tree_t *tr = &k->tree[(gsize)(w * k->nch + gc) * k->nranks + r];
        g_string_append_printf(trees, " [%d] %d/%d/%d->%d->%d", ch, tr->down[0], tr->down[1], tr->down[2], r,
                               tr->up);
        g_string_append_printf(o, "%sRing %02d : %d -> %d -> %d\n", pfx, ch, k->prev[gc * k->nranks + r], r,
                               k->next[gc * k->nranks + r]);
    }
    if (trees->len > 1022)
        g_string_truncate(trees, 1022);
    g_string_append_printf(o, "%sTrees%s\n", pfx, trees->str);
    g_string_free(trees, TRUE);
    if (c->collnet)
        print_collnet(o, pfx, c, k, r);
}

char *cs_graph_log_info(const cs_comm_t *c, int rank)
{
    g_return_val_if_fail(c != NULL, NULL);
    if (rank < -1 || rank >= c->info.nranks)
        return NULL;
    chans_t k;
    chans_build(c, &k);
    GString *o = g_string_new(NULL);
    for (int r = rank < 0 ? 0 : rank; r < (rank < 0 ? k.nranks : rank + 1); r++)
        print_rank(o, c, &k, r);
    chans_clear(&k);
    return g_string_free(o, FALSE);
}

/* ---- NCCL_GRAPH_DUMP_FILE -------------------------------------------------- */

/* xml.h xmlSetAttrLong: "%#lx" */
static void attr_long(GString *o, const char *name, long v)
{
    g_string_append_printf(o, " %s=\"%#lx\"", name, (unsigned long)v);
}

/* search.cc ncclTopoGetXmlFromGraph; xml.cc ncclTopoDumpXmlRec. A graph
 * NCCL did not search is dumped as initialised (id and pattern only). */
static void dump_graph(GString *o, const cs_comm_t *c, int n, const cs_graph_t *g, int id, int pattern)
{
    const cs_sys_t *sys = shape_of(c, n)->sys;
    const int *ranks = c->nodes[n].ranks;
    int nch = g != NULL ? g->nch : 0;
    /* search.cc kvDictLinkType has no C2C, NET or DIS: NCCL fails to name
     * them; we write the name */
    g_string_append_printf(o, "  <graph id=\"%d\" pattern=\"%d\" crossnic=\"%d\" nchannels=\"%d\" "
                           "speedintra=\"%g\" speedinter=\"%g\" latencyinter=\"%g\" typeintra=\"%s\" "
                           "typeinter=\"%s\" samechannels=\"%d\"%s>\n",
                           id, pattern, g ? g->cross_nic : 0, nch, g ? f32(g->bw_intra) : 0.0,
                           g ? f32(g->bw_inter) : 0.0, g ? f32(g->lat_inter) : 0.0,
                           path_name(g ? g->type_intra : 0), path_name(g ? g->type_inter : 0),
                           g ? g->same_channels : 0, nch == 0 ? "/" : "");
    if (nch == 0) {
        /* "<graph .../>" was written with its '>' */
        return;
    }
    int G = sys->ngpus;
    for (int ch = 0; ch < nch; ch++) {
        g_string_append(o, "    <channel>\n");
        if (sys->inter) {
            g_string_append(o, "      <net");
            attr_long(o, "dev", MAX(g->inter[ch * 2], 0));
            g_string_append(o, "/>\n");
        }
        for (int i = 0; i < G; i++) {
            int l = g->intra[ch * G + i];
            g_string_append(o, "      <gpu");
            attr_long(o, "dev", sys->gpu_local[l]);
            g_string_append_printf(o, " rank=\"%d\"/>\n", ranks[l]);
            if (g->id == 3)
                break;
        }
        if (sys->inter) {
            g_string_append(o, "      <net");
            attr_long(o, "dev", MAX(g->inter[ch * 2 + 1], 0));
            g_string_append(o, "/>\n");
        }
        g_string_append(o, "    </channel>\n");
    }
    g_string_append(o, "  </graph>\n");
}

char *cs_graph_log_dump_xml(const cs_comm_t *c, int rank)
{
    g_return_val_if_fail(c != NULL, NULL);
    if (rank < 0 || rank >= c->info.nranks)
        return NULL;
    int n = c->rank_node[rank];
    const cs_shape_t *sh = shape_of(c, n);
    GString *o = g_string_new("<graphs version=\"1\">\n");
    /* init.cc: ring, tree, CollNet Direct (id 4, pattern 6), CollNet
     * Chain (id 2, pattern TREE), searched only where CollNet is on (the
     * plugin loaded: cs_decide_collnet.c); NVLS */
    gboolean cn = c->collnet_plugin && sh->sys->inter;
    dump_graph(o, c, n, &sh->ring, 0, sh->ring.pattern);
    dump_graph(o, c, n, &sh->tree, 1, sh->tree.pattern);
    dump_graph(o, c, n, cn ? &sh->cn_direct : NULL, 4, CS_PATTERN_COLLNET_DIRECT);
    dump_graph(o, c, n, cn ? &sh->cn_chain : NULL, 2, CS_PATTERN_TREE);
    dump_graph(o, c, n, nvls_searched(c, sh->sys) ? &sh->nvls : NULL, 3, CS_PATTERN_NVLS);
    g_string_append(o, "</graphs>\n");
    return g_string_free(o, FALSE);
}
