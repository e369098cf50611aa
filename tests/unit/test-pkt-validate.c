/* Validation of the packet engine's network against measurements and
 * formulas (issue #11, item 8, in part):
 *
 * - /pktval/goodput-formula: one RC QP (ACKs on) streaming a long RDMA
 *   WRITE over one link, MTU 256 to 4096, at the link rate of each
 *   perftest run below: the payload rate equals the framing formula
 *   B / (B + ceil(B / MTU) x 82 + 16) to 0.1% (82 B of RoCEv2 framing per
 *   packet, a 16-B RETH on the first: fabric-models.md section 4, written
 *   out here rather than taken from cs_pkt_frame so that the check is
 *   independent of the code it checks); on InfiniBand the same with 26 B
 *   of framing and an 8-B flow-control packet per packet (IB_PER_PKT).
 * - /pktval/perftest: each published ib_write_bw run on RoCEv2 as the
 *   network sees it (its link rate, MTU, message size and QPs, messages
 *   back to back as perftest's deep send queue keeps them) against the
 *   bandwidth it measured, within 2%.
 * - /pktval/incast/...: N:1 incast on a lossless priority, N up to 64, at
 *   400G and 100G: no drop and every byte delivered when the switch's
 *   headroom follows the formula; drops when it is one frame.
 *
 * Where the measurements come from. Only what the file headers state goes
 * into the table below (link rate, MTU, QPs, message size, each with the
 * file and line that says it), as validation/manifest.ini does for the
 * nccl-tests runs; the measured bandwidth is read at run time from the
 * cited line of the file in ../shared/data/real, so no measured number is
 * copied (or can be mistyped, or tuned) here, and a line that does not
 * start with the stated message size fails the test instead of reading
 * something else. When the data set is not beside the repository the
 * comparison is skipped with a message, as tests/cli/validate.sh does; the
 * formula checks run everywhere.
 *
 * One rule picks the runs: every RDMA WRITE bandwidth run over RoCEv2
 * (Link type Ethernet) in ../shared/data/real whose file states the link
 * rate and the MTU and does not report the run below line rate; the
 * number compared is perftest's "BW average[Gb/sec]" column (runs with -D
 * report no peak: 0.00). That takes the two 100G runs of
 * perftest-roce100g-oci-dgxspark-bw-and-gb300-400g-writelat-inblock-crossblock.txt.
 * InfiniBand's run, perftest-ib-ndr400-cx7-b2b-dac-write-read-send-bw-lat.txt
 * (NDR back to back), is compared with IB framing and credits (issue #14
 * item 8). It leaves out:
 * perftest-roce-gpumem-ib_write_bw-bidir-sweep-rocm-docs.txt (link speed
 * not stated); perftest-roce400g-cx-ib_send_write_read_bw-moc.txt (its
 * header: "unidirectional ib_write_bw only ~210 Gbps on a 400G port",
 * below line rate with no diagnosis: something besides the wire limits
 * it, which the framing cannot predict); the GB300 part of the first file
 * (latency only). fabric-models.md section 8 item 1 adds the 25GbE runs
 * of [GIDS] (message sizes 1 KB to 1 MB; the note states no MTU and
 * derives 4096, so that row's MTU is the note's assumption). */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cs_pkt.h"
#include "sim/cs_pkt_frame.h"
#include "sim/cs_pkt_mmu.h"
#include "sim/cs_pkt_net.h"
#include "sim/cs_pkt_pfc.h"
#include "sim/cs_pkt_port.h"

#define GBPS 1000000000ull
#define NS ((cs_time_t)1000)           /* ps */
#define US ((cs_time_t)1000 * NS)
#define MIB (1024ull * 1024)

/* RoCEv2 per packet: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 +
 * FCS 4 + preamble/SFD 8 + inter-frame gap 12; RETH 16 on a WRITE's
 * first packet (fabric-models.md section 4, [PINGDO][CUM]). */
#define ROCE_PER_PKT (14 + 20 + 8 + 12 + 4 + 4 + 8 + 12)
#define RETH 16

/* InfiniBand per packet: LRH 8 + BTH 12 + ICRC 4 + VCRC 2; no preamble
 * or gap in the data rate (fabric-models.md section 4, [IBJP]); and on
 * the same link an 8-B flow-control packet per data packet, returning the
 * credits of the ACK that packet brings back the other way (the Mellanox
 * flit model's FC packet size, [IBM]; one ACK arrives per data packet's
 * time, so they do not coalesce). */
#define IB_PER_PKT (8 + 12 + 4 + 2 + 8)

/* Payload over wire bytes of one WRITE of 'bytes' at 'mtu'. */
static double write_goodput(guint64 bytes, guint32 mtu, gboolean ib)
{
    guint64 npkts = (bytes + mtu - 1) / mtu;
    return (double)bytes / (double)(bytes + npkts * (ib ? IB_PER_PKT : ROCE_PER_PKT) + RETH);
}

/* ---- one link, QPs with ACKs ------------------------------------------ */

typedef struct {
    cs_time_t last_deliv;
    guint64 ndeliv;
    guint64 nfailed;
} qp_seen_t;

static void seen_sent(void *ctx, int qp, cs_time_t now)
{
    (void)ctx, (void)qp, (void)now;
}

static void seen_delivered(void *ctx, int qp, cs_time_t now)
{
    qp_seen_t *s = ctx;
    (void)qp;
    s->last_deliv = now;
    s->ndeliv++;
}

static void seen_failed(void *ctx, int qp, cs_time_t now)
{
    qp_seen_t *s = ctx;
    (void)qp, (void)now;
    s->nfailed++;
}

static const cs_pkt_qp_hooks_t seen_hooks = { seen_sent, seen_delivered, seen_failed };

/* Host a -> host b over one link of 'rate' with 'prop' propagation, and
 * the link back for the ACKs; InfiniBand: credits (a buffer far above
 * the link's bandwidth-delay product: nothing waits for them). */
static cs_pkt_net_t *one_link(guint64 rate, cs_time_t prop, gboolean ib, int *fwd, int *rev)
{
    cs_pkt_net_t *net = cs_pkt_net_new();
    if (ib) {
        cs_pkt_credit_cfg_t cc = { .refresh_ps = 0 };
        for (int v = 0; v < CS_PKT_PRIOS; v++)
            cc.blocks[v] = 100000;
        g_assert_cmpint(cs_pkt_net_set_credit(net, &cc), ==, 0);
    }
    int a = cs_pkt_net_add_host(net), b = cs_pkt_net_add_host(net);
    cs_pkt_port_cfg_t pc;
    cs_pkt_port_cfg_init(&pc, rate, prop);
    *fwd = cs_pkt_net_add_link(net, a, b, &pc);
    *rev = cs_pkt_net_add_link(net, b, a, &pc);
    g_assert_cmpint(*fwd, >=, 0);
    g_assert_cmpint(*rev, >=, 0);
    return net;
}

/* An RC QP as NCCL opens it: an ACK per packet (the HPCC fork's
 * L2_ACK_INTERVAL 1), NCCL_IB_TIMEOUT 20 and NCCL_IB_RETRY_CNT 7 (never
 * reached here: nothing is lost). */
static cs_pkt_qp_cfg_t rc_qp(guint32 mtu, gboolean ib)
{
    return (cs_pkt_qp_cfg_t) { .mtu = mtu, .prio = 3, .ack_interval = 1, .frame = { .ib = ib },
                               .timeout = CS_PKT_QP_TIMEOUT_PS(20), .retry_cnt = 7 };
}

/* The rates of the runs compared in /pktval/perftest (the table below):
 * 25G ([GIDS]) and 100G (both runs of the OCI/DGX Spark file). */
static const guint64 perftest_rates[] = { 25 * GBPS, 100 * GBPS };

/* A long WRITE (8 MiB) at each MTU and rate: delivered payload over the
 * time from its first bit out to its last bit in, less the propagation
 * (the wire's busy time), against the formula. ACKs go the other way and
 * take nothing from the data's link. */
static void test_goodput_formula(void)
{
    static const guint32 mtus[] = { 256, 512, 1024, 2048, 4096 };
    const guint64 bytes = 8 * MIB;
    const cs_time_t prop = 500 * NS;
    for (int ib = 0; ib < 2; ib++)
    for (gsize r = 0; r < G_N_ELEMENTS(perftest_rates); r++)
        for (gsize m = 0; m < G_N_ELEMENTS(mtus); m++) {
            int fwd, rev;
            g_autoptr(cs_pkt_net_t) net = one_link(perftest_rates[r], prop, ib, &fwd, &rev);
            cs_pkt_qp_cfg_t qc = rc_qp(mtus[m], ib);
            int qp = cs_pkt_net_add_qp(net, &fwd, 1, &qc);
            g_assert_cmpint(qp, >=, 0);
            qp_seen_t seen = { 0 };
            cs_pkt_net_set_qp_hooks(net, &seen_hooks, &seen);
            cs_pkt_net_qp_post(net, qp, bytes, 0);
            cs_pkt_net_run(net, CS_TIME_NEVER);
            g_assert_cmpuint(seen.ndeliv, ==, 1);
            g_assert_cmpuint(cs_pkt_net_flow_delivered(net, qp), ==, bytes);
            g_assert_cmpuint(cs_pkt_net_qp_retransmitted(net, qp), ==, 0);
            /* every packet acknowledged on the link back */
            g_assert_cmpuint(cs_pkt_port_tx_pkts(cs_pkt_net_port(net, rev), 3), ==,
                             (bytes + mtus[m] - 1) / mtus[m]);
            double busy_s = (double)(seen.last_deliv - prop) / CS_PS_PER_S;
            double gbps = (double)bytes * 8 / busy_s / 1e9;
            double want = (double)perftest_rates[r] / 1e9 * write_goodput(bytes, mtus[m], ib);
            g_test_message("%s MTU %4u at %3.0fG: %.4f Gb/s, formula %.4f (%+.5f%%)", ib ? "IB" : "RoCEv2",
                           mtus[m], perftest_rates[r] / 1e9, gbps, want, (gbps / want - 1) * 100);
            g_assert_cmpfloat(fabs(gbps / want - 1), <, 0.001);
        }
}

/* ---- the perftest runs -------------------------------------------------- */

/* What a file's header says of a run, and where its measurement is. */
typedef struct {
    const char *file;                 /* under ../shared/data/real, or ../shared/reference */
    int line;                         /* data/real: the row's line (1-based); 0: see 'key' */
    const char *key;                  /* reference notes: the line starting so, "SIZE KB VALUE" pairs */
    guint64 rate_bps;                 /* link rate */
    guint32 mtu;
    int qps;
    guint64 msg;                      /* message size, bytes */
    const char *why;                  /* header lines that state rate, MTU, QPs, size */
    gboolean ib;                      /* InfiniBand (credits, IB framing), else RoCEv2 */
} perftest_run_t;

#define OCI_FILE "data/real/perftest-roce100g-oci-dgxspark-bw-and-gb300-400g-writelat-inblock-crossblock.txt"

static const perftest_run_t perftest_runs[] = {
    /* line 1: "(A) OCI cluster network 100 Gb/s RoCE NIC"; line 2: "Link
     * type Ethernet ... MTU 4096"; line 3: "-q 4", "default 64 KiB
     * messages"; line 12 the row */
    { OCI_FILE, 12, NULL, 100 * GBPS, 4096, 4, 65536, "A: 100G RoCE, MTU 4096, 4 QPs" },
    /* line 1: "(B) DGX Spark ConnectX-7 200GbE split into 2x ~100G RDMA
     * links"; line 5: "-s 1048576 -q 4 ... MTU 4096, RoCEv2"; lines 16 and
     * 17 one link each, run at the same time (two links, nothing shared) */
    { OCI_FILE, 16, NULL, 100 * GBPS, 4096, 4, 1048576, "B: ~100G RoCE link 1, MTU 4096, 4 QPs" },
    { OCI_FILE, 17, NULL, 100 * GBPS, 4096, 4, 1048576, "B: ~100G RoCE link 2, MTU 4096, 4 QPs" },
    /* fabric-models.md section 8 item 1 ([GIDS]): "ib_write_bw, 25GbE
     * RoCEv2: 1 KB 22.79, 4 KB 24.40, 64 KB 24.50, 1 MB 24.51 Gb/s";
     * MTU not stated (the note derives its figure at 4096), QPs not
     * stated (perftest's default, 1) */
    { "reference/fabric-models.md", 0, "1. ib_write_bw, 25GbE RoCEv2:", 25 * GBPS, 4096, 1, 0,
      "[GIDS] 25GbE RoCEv2, MTU 4096 assumed, 1 QP" },
    /* InfiniBand (issue #14 item 8). Line 4: "ConnectX-7 ... connected
     * back-to-back ... Speed IB-NDR, Width 4x" (400 Gb/s); line 8: "default
     * message size 65536 B, 1 QP"; line 29: "RDMA_Write BW Test, qps 1 ...
     * Mtu 4096[B], Link type IB"; line 31 the row */
    { "data/real/perftest-ib-ndr400-cx7-b2b-dac-write-read-send-bw-lat.txt", 31, NULL, 400 * GBPS, 4096, 1, 65536,
      "IB NDR back to back, MTU 4096, 1 QP", TRUE },
};

/* The shared data set beside the repository, as mk/validate.am finds it. */
static char *shared_path(const char *rel)
{
    const char *top = g_getenv("top_srcdir");
    return g_build_filename(top != NULL ? top : CS_SRCDIR, "..", "shared", rel, NULL);
}

/* Line 'n' (1-based) of 'text', or NULL. */
static char *nth_line(const char *text, int n)
{
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    return n >= 1 && (guint)n <= g_strv_length(lines) ? g_strdup(lines[n - 1]) : NULL;
}

/* perftest's row "#bytes #iterations BW-peak BW-average MsgRate": the
 * average, after checking the first field is the stated size. */
static gboolean row_average(const char *row, guint64 msg, double *gbps)
{
    g_autofree char *copy = g_strdup(row);
    g_auto(GStrv) f = g_strsplit_set(g_strstrip(copy), " \t", -1);
    double v[5];
    int n = 0;
    for (int i = 0; f[i] != NULL && n < 5; i++) {
        if (*f[i] == '\0')
            continue;
        char *end;
        v[n] = g_ascii_strtod(f[i], &end);
        if (*end != '\0')
            return FALSE;
        n++;
    }
    if (n != 5 || v[0] != (double)msg)
        return FALSE;
    *gbps = v[3];
    return TRUE;
}

/* The line starting with 'key' (after spaces): pairs "SIZE KB|MB VALUE". */
static int note_pairs(const char *text, const char *key, guint64 *sizes, double *gbps, int max)
{
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (int i = 0; lines[i] != NULL; i++) {
        const char *l = lines[i];
        while (*l == ' ')
            l++;
        if (!g_str_has_prefix(l, key))
            continue;
        const char *p = l + strlen(key);
        int n = 0;
        while (n < max) {
            char *end;
            double sz = g_ascii_strtod(p, &end);
            if (end == p)
                break;
            p = end;
            while (*p == ' ')
                p++;
            guint64 unit = g_str_has_prefix(p, "KB") ? 1024 : g_str_has_prefix(p, "MB") ? MIB : 0;
            if (unit == 0)
                break;
            p += 2;
            double v = g_ascii_strtod(p, &end);
            if (end == p)
                break;
            sizes[n] = (guint64)sz * unit;
            gbps[n++] = v;
            p = end;
            while (*p == ',' || *p == ' ')
                p++;
        }
        return n;
    }
    return 0;
}

/* Payload Gb/s of 'qps' QPs posting 'msg'-byte WRITEs back to back on one
 * link, in steady state: the payload delivered from 0.2 to 2.2 ms (every
 * QP still has messages queued then) over those 2 ms. */
static double perftest_model(const perftest_run_t *run, guint64 msg)
{
    const cs_time_t t1 = 200 * US, t2 = 2200 * US;
    int fwd, rev;
    g_autoptr(cs_pkt_net_t) net = one_link(run->rate_bps, 500 * NS, run->ib, &fwd, &rev);
    /* enough messages that every QP is still busy at t2: the link carries
     * at most rate x t2 of payload */
    guint64 per_qp = (guint64)((double)run->rate_bps * 1.1 * (double)t2 / CS_PS_PER_S / 8) / (guint64)run->qps
                     / msg + 2;
    qp_seen_t seen = { 0 };
    cs_pkt_net_set_qp_hooks(net, &seen_hooks, &seen);
    cs_pkt_qp_cfg_t qc = rc_qp(run->mtu, run->ib);
    for (int q = 0; q < run->qps; q++) {
        int qp = cs_pkt_net_add_qp(net, &fwd, 1, &qc);
        g_assert_cmpint(qp, ==, q);
        for (guint64 m = 0; m < per_qp; m++)
            cs_pkt_net_qp_post(net, qp, msg, 0);
    }
    cs_pkt_net_run(net, t1);
    guint64 b1 = cs_pkt_net_host_delivered(net, 1);
    cs_pkt_net_run(net, t2);
    guint64 b2 = cs_pkt_net_host_delivered(net, 1);
    g_assert_cmpuint(b2, <, per_qp * msg * (guint64)run->qps);   /* still backlogged */
    g_assert_cmpuint(seen.nfailed, ==, 0);
    return (double)(b2 - b1) * 8 / ((double)(t2 - t1) / CS_PS_PER_S) / 1e9;
}

/* One comparison: the model against the formula for whole messages (to
 * 0.1%: the window cuts at most a packet per QP) and against the measured
 * bandwidth (2%). */
static void perftest_check(const perftest_run_t *run, guint64 msg, double measured)
{
    double model = perftest_model(run, msg);
    double formula = (double)run->rate_bps / 1e9 * write_goodput(msg, run->mtu, run->ib);
    g_autofree char *where = run->line > 0 ? g_strdup_printf("%s:%d", run->file, run->line)
                                           : g_strdup_printf("%s, '%s'", run->file, run->key);
    g_test_message("%s, %" G_GUINT64_FORMAT " B messages (%s): measured %.2f Gb/s, model %.3f (%+.2f%%), "
                   "formula %.3f",
                   run->why, msg, where, measured, model, (model / measured - 1) * 100, formula);
    g_assert_cmpfloat(fabs(model / formula - 1), <, 0.001);
    g_assert_cmpfloat(fabs(model / measured - 1), <, 0.02);
}

static void test_perftest(void)
{
    int compared = 0;
    for (gsize r = 0; r < G_N_ELEMENTS(perftest_runs); r++) {
        const perftest_run_t *run = &perftest_runs[r];
        g_autofree char *path = shared_path(run->file);
        g_autofree char *text = NULL;
        if (!g_file_get_contents(path, &text, NULL, NULL)) {
            /* without the data set the comparison is skipped (below); with
             * it, a listed file that is gone is a failure, not a pass */
            g_autofree char *dir = shared_path("data/real");
            if (g_file_test(dir, G_FILE_TEST_IS_DIR)) {
                g_test_fail_printf("%s: listed here but not found in the shared data set", path);
                return;
            }
            g_test_message("%s: not found; run not compared", path);
            continue;
        }
        if (run->line > 0) {
            g_autofree char *row = nth_line(text, run->line);
            double gbps;
            if (row == NULL || !row_average(row, run->msg, &gbps))
            {
                g_test_fail_printf("%s:%d: expected a perftest row of %" G_GUINT64_FORMAT " B (bytes, iterations, "
                                   "peak, average, rate), found '%s'", path, run->line, run->msg,
                                   row != NULL ? row : "(no line)");
                return;
            }
            perftest_check(run, run->msg, gbps);
            compared++;
        } else {
            guint64 sizes[8];
            double gbps[8];
            int n = note_pairs(text, run->key, sizes, gbps, 8);
            if (n == 0) {
                g_test_fail_printf("%s: no line starting '%s' with 'SIZE KB VALUE' pairs", path, run->key);
                return;
            }
            for (int i = 0; i < n; i++)
                perftest_check(run, sizes[i], gbps[i]);
            compared += n;
        }
    }
    if (compared == 0)
        g_test_skip("no shared data set beside the repository (../shared): measurements not compared");
}

/* ---- N:1 incast on a lossless priority --------------------------------- */

/* N senders -> switch -> one receiver, every link 'rate' both ways (the
 * links back carry the pause frames), 100 m cables (500 ns: the cable the
 * headroom formula is given), priority 3 lossless, one flow of 'bytes'
 * per sender, all starting at 0.
 *
 * The buffer. Its size matters twice: the headrooms and reserves are
 * carved out of it (each ingress port: 8 PGs x 4 KB reserve and one
 * lossless PG's headroom; 400G, 100 m: (4178 B frame x 8 + 160) + 672 +
 * D-Intf 491520 + D-Resp 463360 + 2 x 100 m x 5 ns x 400G + 4178 x 8 bits
 * = 177820 B; 100G: 61536 B), and the shared pool left decides whether the
 * incast ever pauses: a PG pauses at alpha x free, so with N PGs filling
 * at once each stops at alpha F / (1 + alpha N) = F / (8 + N). With the
 * HPCC fork's 16 MB per 50 Gb/s (128 MB at 400G) a 64:1 incast of 32 MiB
 * would fit below every threshold (1.6 MB per PG, 0.5 MiB per sender) and
 * never pause: nothing would test the headroom. So the buffer here is the
 * reserves and headrooms plus a shared pool of 1 MB: every sender's PG
 * reaches its threshold (1 MB / 10 = 100 KB at N = 2, 14 KB at N = 64)
 * long before its flow ends, so each sender is paused, many times, and
 * what it still sends after each XOFF lands in its headroom. The test
 * asserts that it was (XOFF on every sender's link, headroom used). */
typedef struct {
    guint64 rate;
    int n;
    guint64 bytes;                    /* per sender */
    gint64 headroom;                  /* -1: the formula; else forced bytes */
} incast_cfg_t;

typedef struct {
    guint64 delivered, dropped;
    guint64 senders_paused;           /* senders that got at least one XOFF */
    guint64 xoff, hdrm_max, hdrm_formula;
    guint64 pool_max;                 /* packets in the pool at the end (its high-water) */
    cs_time_t end;
} incast_t;

#define POOL_SHARED 1000000ull

static void incast(const incast_cfg_t *ic, incast_t *r)
{
    g_autoptr(cs_pkt_net_t) net = cs_pkt_net_new();
    int *host = g_new(int, ic->n), *up = g_new(int, ic->n);
    for (int i = 0; i < ic->n; i++)
        host[i] = cs_pkt_net_add_host(net);
    int sw = cs_pkt_net_add_switch(net), dst = cs_pkt_net_add_host(net);
    cs_pkt_port_cfg_t pc;
    cs_pkt_port_cfg_init(&pc, ic->rate, 500 * NS);
    guint64 hdrm = ic->headroom >= 0 ? (guint64)ic->headroom
                                     : cs_pkt_headroom_bytes(CS_PKT_WIRE_MAX - CS_PKT_PREAMBLE_SFD - CS_PKT_IFG,
                                                             ic->rate, 100);
    cs_pkt_mmu_cfg_t mc;
    cs_pkt_mmu_cfg_init(&mc, 0);
    guint64 ports = (guint64)ic->n + 1;
    mc.buffer = ports * ((guint64)mc.reserve * CS_PKT_PRIOS + hdrm) + POOL_SHARED;
    g_assert_cmpint(cs_pkt_net_set_buffer(net, sw, &mc, ic->headroom), ==, 0);
    int down = -1;
    for (int i = 0; i < ic->n; i++) {
        up[i] = cs_pkt_net_add_link(net, host[i], sw, &pc);
        cs_pkt_net_add_link(net, sw, host[i], &pc);
    }
    down = cs_pkt_net_add_link(net, sw, dst, &pc);
    cs_pkt_net_add_link(net, dst, sw, &pc);
    cs_pkt_flow_cfg_t fc = { .bytes = ic->bytes, .mtu = 4096, .prio = 3, .write = TRUE };
    for (int i = 0; i < ic->n; i++) {
        int route[2] = { up[i], down };
        g_assert_cmpint(cs_pkt_net_add_flow(net, route, 2, &fc), ==, i);
    }
    cs_pkt_net_run(net, CS_TIME_NEVER);
    *r = (incast_t) { .end = cs_pkt_net_now(net), .hdrm_formula = hdrm };
    cs_pkt_mmu_t *mmu = cs_pkt_net_mmu(net, sw);
    for (int i = 0; i < ic->n; i++) {
        cs_pkt_pfc_t *pfc = cs_pkt_net_pfc(net, up[i]);
        r->delivered += cs_pkt_net_flow_delivered(net, i);
        r->dropped += cs_pkt_net_flow_dropped(net, i);
        r->xoff += cs_pkt_pfc_xoff_sent(pfc, 3);
        r->senders_paused += cs_pkt_pfc_received(pfc, 3) > 0;
        r->hdrm_max = MAX(r->hdrm_max, cs_pkt_mmu_pg_headroom_max(mmu, cs_pkt_net_mmu_port(net, up[i]), 3));
    }
    r->pool_max = cs_pkt_pool_capacity(cs_pkt_net_pool(net));
    g_assert_cmpuint(cs_pkt_mmu_used_max(mmu), <=, mc.buffer);
    g_test_message("%d:1 at %.0fG, headroom %" G_GUINT64_FORMAT " B (%s), buffer %" G_GUINT64_FORMAT
                   " B: delivered %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " B, drops %" G_GUINT64_FORMAT
                   ", XOFF %" G_GUINT64_FORMAT " (senders paused %" G_GUINT64_FORMAT "), headroom used max %"
                   G_GUINT64_FORMAT " B, end %.1f us",
                   ic->n, ic->rate / 1e9, hdrm, ic->headroom < 0 ? "formula" : "forced", mc.buffer,
                   r->delivered, ic->bytes * (guint64)ic->n, r->dropped, r->xoff, r->senders_paused, r->hdrm_max,
                   r->end / 1e6);
    g_free(host);
    g_free(up);
}

static const int incast_n[] = { 2, 8, 16, 64 };
/* 32 MiB into the receiver whatever N: 0.68 ms at 400G, 2.7 ms at 100G,
 * each sender's flow far longer than its PG's threshold (above). */
#define INCAST_TOTAL (32 * MIB)

static void incast_formula(guint64 rate)
{
    for (gsize k = 0; k < G_N_ELEMENTS(incast_n); k++) {
        incast_cfg_t ic = { .rate = rate, .n = incast_n[k], .bytes = INCAST_TOTAL / (guint64)incast_n[k],
                            .headroom = -1 };
        incast_t r;
        incast(&ic, &r);
        g_assert_cmpuint(r.dropped, ==, 0);
        g_assert_cmpuint(r.delivered, ==, ic.bytes * (guint64)ic.n);
        /* the test means something: every sender was paused and bytes
         * arriving after an XOFF were held in the headroom */
        g_assert_cmpuint(r.senders_paused, ==, (guint64)ic.n);
        g_assert_cmpuint(r.hdrm_max, >, 0);
        g_assert_cmpuint(r.hdrm_max, <=, r.hdrm_formula);
    }
}

/* Headroom of one frame (the largest RoCEv2 frame, 4198 B) against the
 * cable's worth in flight after an XOFF (2 x 500 ns at 400G is 50 KB, at
 * 100G 12.5 KB, before the sender's and the interfaces' delays): drops,
 * and bytes missing at the receiver, at every N. */
static void incast_small(guint64 rate)
{
    for (gsize k = 0; k < G_N_ELEMENTS(incast_n); k++) {
        incast_cfg_t ic = { .rate = rate, .n = incast_n[k], .bytes = INCAST_TOTAL / (guint64)incast_n[k],
                            .headroom = CS_PKT_WIRE_MAX };
        incast_t r;
        incast(&ic, &r);
        g_assert_cmpuint(r.xoff, >, 0);
        g_assert_cmpuint(r.dropped, >, 0);
        g_assert_cmpuint(r.delivered, <, ic.bytes * (guint64)ic.n);
    }
}

static void test_incast_400g(void)
{
    incast_formula(400 * GBPS);
}

static void test_incast_100g(void)
{
    incast_formula(100 * GBPS);
}

static void test_incast_small_400g(void)
{
    incast_small(400 * GBPS);
}

static void test_incast_small_100g(void)
{
    incast_small(100 * GBPS);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/pktval/goodput-formula", test_goodput_formula);
    g_test_add_func("/pktval/perftest", test_perftest);
    g_test_add_func("/pktval/incast/formula-400g", test_incast_400g);
    g_test_add_func("/pktval/incast/formula-100g", test_incast_100g);
    g_test_add_func("/pktval/incast/small-headroom-400g", test_incast_small_400g);
    g_test_add_func("/pktval/incast/small-headroom-100g", test_incast_small_100g);
    return g_test_run();
}
