/* collsim real --verbs: everything that needs no RDMA device: options and
 * their errors, the sweep sizes, the statistics, the out-of-band messages,
 * the replay schedule of a scenario, and the port/GID choice on the
 * captured sysfs trees of tests/data/sysfs. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "real/cs_verbs.h"
#include "real/verbs_int.h"
#include "util/cs_error.h"

/* ---- options ----------------------------------------------------------------- */

static gboolean parse(vb_opts_t *o, const char *args, GError **err)
{
    g_autofree char *line = g_strconcat("collsim-real ", args, NULL);
    g_auto(GStrv) av = g_strsplit(line, " ", -1);
    vb_opts_init(o);
    return vb_opts_parse(o, (int)g_strv_length(av), av, err);
}

static void test_opts_ok(void)
{
    vb_opts_t o;
    g_autoptr(GError) err = NULL;
    g_assert_true(parse(&o, "--verbs --server", &err));
    g_assert_true(o.server);
    g_assert_cmpint(o.port, ==, 18515);
    g_assert_cmpint(o.gid_index, ==, -1);
    g_assert_cmpint(o.tc, ==, -1);
    g_assert_cmpint(o.tests, ==, VB_TEST_BW | VB_TEST_LAT);
    g_assert_false(o.replay);
    vb_opts_clear(&o);

    g_assert_true(parse(&o, "--client hostA --port 7000 --ib-dev mlx5_1:2 --gid-index 3 --tc 106 --sl 3 "
                            "--size 1M --test lat --lat-iters 10 --report-gbits", &err));
    g_assert_no_error(err);
    g_assert_cmpstr(o.client, ==, "hostA");
    g_assert_cmpint(o.port, ==, 7000);
    g_assert_cmpstr(o.ib_dev, ==, "mlx5_1:2");
    g_assert_cmpint(o.ib_port, ==, 2);
    g_assert_cmpint(o.gid_index, ==, 3);
    g_assert_cmpint(o.tc, ==, 106);
    g_assert_cmpint(o.sl, ==, 3);
    g_assert_cmpuint(o.size, ==, 1048576);
    g_assert_cmpint(o.tests, ==, VB_TEST_LAT);
    g_assert_cmpint(o.lat_iters, ==, 10);
    g_assert_true(o.gbits);
    vb_opts_clear(&o);

    /* topology flags make it a replay; scenario keys go to the scratch */
    g_assert_true(parse(&o, "--client h --topo dgx-h100 --nodes 2 -b 1M -e 4M -f 2", &err));
    g_assert_no_error(err);
    g_assert_true(o.replay);
    g_assert_cmpuint(o.args.scratch.minbytes, ==, 1048576);
    vb_opts_clear(&o);

#if defined(HAVE_CUDA) || defined(HAVE_REAL_NCCL)
    /* GPU memory: bandwidth only unless the latency test is asked for */
    g_assert_true(parse(&o, "--client h --use-cuda", &err));
    g_assert_cmpint(o.tests, ==, VB_TEST_BW);
    vb_opts_clear(&o);
#endif
}

static void check_bad(const char *args, const char *needle)
{
    vb_opts_t o;
    g_autoptr(GError) err = NULL;
    g_assert_false(parse(&o, args, &err));
    g_assert_nonnull(err);
    g_assert_true(g_str_has_prefix(err->message, "collsim: "));
    g_assert_null(strchr(err->message, '\n'));
    if (strstr(err->message, needle) == NULL)
        g_error("'%s': message '%s' lacks '%s'", args, err->message, needle);
    vb_opts_clear(&o);
}

static void test_opts_bad(void)
{
    check_bad("--verbs", "expected --server");
    check_bad("--server --client h", "both given");
    check_bad("--client h --port 0", "--port: '0' is not a TCP port");
    check_bad("--client h --port 70000", "from 1 to 65535");
    check_bad("--client h --tc 256", "--tc: '256'");
    check_bad("--client h --sl 16", "--sl: '16'");
    check_bad("--client h --gid-index x", "--gid-index: 'x'");
    check_bad("--client h --ib-dev mlx5_0:x", "--ib-dev: 'mlx5_0:x' has no valid port");
    check_bad("--client h --ib-dev :1", "--ib-dev");
    check_bad("--client h --size 0", "--size: '0' is not a message size");
    check_bad("--client h --test foo", "expected bw, lat or both");
    check_bad("--client h --bogus", "expected the options of");
    check_bad("--client h a.ini stray", "unexpected argument 'stray'");
    check_bad("--server --all", "the server takes its plan from the client");
    check_bad("--client h --all --topo dgx-h100 --nodes 2", "expected one of them");
    check_bad("--client h -b banana", "-b");
#if defined(HAVE_CUDA) || defined(HAVE_REAL_NCCL)
    check_bad("--client h --use-cuda --test lat", "--use-cuda: the latency test polls the buffer from the CPU");
#else
    check_bad("--client h --use-cuda", "--use-cuda: this collsim was built without CUDA");
#endif
}

static void test_sweep_sizes(void)
{
    vb_opts_t o;
    g_autoptr(GError) err = NULL;
    g_assert_true(parse(&o, "--client h --all", &err));
    int n = 0;
    g_autofree guint64 *v = vb_sweep_sizes(&o, &n);
    /* perftest -a: 2 B to 8 MiB in powers of two: 23 sizes */
    g_assert_cmpint(n, ==, 23);
    g_assert_cmpuint(v[0], ==, 2);
    g_assert_cmpuint(v[9], ==, 1024);
    g_assert_cmpuint(v[22], ==, 8388608);
    vb_opts_clear(&o);
    g_assert_true(parse(&o, "--client h", &err));
    g_autofree guint64 *w = vb_sweep_sizes(&o, &n);
    g_assert_cmpint(n, ==, 1);
    g_assert_cmpuint(w[0], ==, 65536);
    vb_opts_clear(&o);
}

/* ---- statistics ------------------------------------------------------------------ */

static void test_lat_stats(void)
{
    double s[] = { 5, 1, 3, 2, 4 };
    vb_lat_stats_t st;
    vb_lat_stats(s, 5, &st);
    g_assert_cmpfloat(st.min, ==, 1);
    g_assert_cmpfloat(st.max, ==, 5);
    g_assert_cmpfloat(st.median, ==, 3);
    g_assert_cmpfloat_with_epsilon(st.avg, 3, 1e-12);
    g_assert_cmpfloat_with_epsilon(st.stdev, sqrt(2.0), 1e-12);   /* population: (4+1+0+1+4)/5 */
    g_assert_cmpfloat(st.p99, ==, 5);                             /* rank ceil(4.95) = 5 */
    g_assert_cmpfloat(st.p999, ==, 5);

    double h[100];
    for (int i = 0; i < 100; i++)
        h[i] = 100 - i;          /* 100 .. 1, unsorted */
    vb_lat_stats(h, 100, &st);
    g_assert_cmpfloat(st.min, ==, 1);
    g_assert_cmpfloat(st.max, ==, 100);
    g_assert_cmpfloat(st.median, ==, 51);   /* sorted[50], perftest's t_typical */
    g_assert_cmpfloat(st.p99, ==, 99);      /* rank 99 */
    g_assert_cmpfloat(st.p999, ==, 100);    /* rank ceil(99.9) = 100 */
    g_assert_cmpfloat_with_epsilon(st.avg, 50.5, 1e-12);

    double one[] = { 7.5 };
    vb_lat_stats(one, 1, &st);
    g_assert_cmpfloat(st.median, ==, 7.5);
    g_assert_cmpfloat(st.p99, ==, 7.5);
    g_assert_cmpfloat(st.stdev, ==, 0);
}

static void test_bw_stats(void)
{
    /* 4 messages of 1000 B posted at 0 and completed at 1, 2, 3, 5 s:
     * average 4000 B / 5 s = 800 B/s; window 2: the best two consecutive
     * completions are 1->3 (2 msgs / 2 s) or 0->2 from the first post
     * (2 msgs / 2 s) = 1000 B/s; the first completion alone from post 0:
     * 1 msg / 1 s = 1000 B/s. */
    double tp[] = { 0, 0, 0, 0 }, td[] = { 1, 2, 3, 5 };
    double peak, avg;
    vb_bw_stats(tp, td, 4, 1000, 2, &peak, &avg);
    g_assert_cmpfloat_with_epsilon(avg, 800, 1e-9);
    g_assert_cmpfloat_with_epsilon(peak, 1000, 1e-9);
    /* window 1: 2->3 is 1 msg in 1 s, 3->5 1 msg in 2 s: peak 1000 */
    double td2[] = { 4, 4.5, 5, 8 };
    vb_bw_stats(tp, td2, 4, 1000, 1, &peak, &avg);
    g_assert_cmpfloat_with_epsilon(avg, 500, 1e-9);
    g_assert_cmpfloat_with_epsilon(peak, 2000, 1e-9);   /* 4 -> 4.5 */
}

static void test_table_lines(void)
{
    g_autofree char *h = vb_bw_header(TRUE);
    g_assert_cmpstr(h, ==, " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]");
    g_autofree char *hm = vb_bw_header(FALSE);
    g_assert_nonnull(strstr(hm, "BW average[MiB/sec]"));
    /* 65536 B at 49,045,000,000 B/s: 392.36 Gb/s, 0.748367 Mpps */
    g_autofree char *l = vb_bw_line(65536, 5000, 49045000000.0, 49045000000.0, TRUE);
    g_auto(GStrv) f = g_strsplit_set(g_strstrip(l), " ", -1);
    GPtrArray *tok = g_ptr_array_new();
    for (int i = 0; f[i] != NULL; i++)
        if (*f[i])
            g_ptr_array_add(tok, f[i]);
    g_assert_cmpuint(tok->len, ==, 5);
    g_assert_cmpstr(tok->pdata[0], ==, "65536");
    g_assert_cmpstr(tok->pdata[1], ==, "5000");
    g_assert_cmpstr(tok->pdata[2], ==, "392.36");
    g_assert_cmpstr(tok->pdata[3], ==, "392.36");
    g_assert_cmpstr(tok->pdata[4], ==, "0.748367");
    g_ptr_array_free(tok, TRUE);
    /* MiB/s: 1048576 B/s = 1.00 */
    g_autofree char *lm = vb_bw_line(2, 10, 1048576, 1048576, FALSE);
    g_assert_nonnull(strstr(lm, "1.00"));
    vb_lat_stats_t st = { 1.24, 5.19, 1.27, 1.27, 0.0, 1.37, 5.19 };
    g_autofree char *ll = vb_lat_line(2, 1000, &st);
    g_auto(GStrv) g = g_strsplit_set(ll, " ", -1);
    GString *joined = g_string_new(NULL);
    for (int i = 0; g[i] != NULL; i++)
        if (*g[i])
            g_string_append_printf(joined, "%s%s", joined->len ? " " : "", g[i]);
    g_assert_cmpstr(joined->str, ==, "2 1000 1.24 5.19 1.27 1.27 0.00 1.37 5.19");
    g_string_free(joined, TRUE);
}

/* ---- out-of-band messages --------------------------------------------------------- */

static void test_conn_roundtrip(void)
{
    vb_conn_msg_t m = { .lid = 0x1a, .nqp = 3, .qpn = { 0x123, 0xffffff, 7 }, .psn = 0xabcdef, .rkey = 0xdeadbeef,
                        .addr = 0x7f0012345000ULL, .len = 16777216, .mtu = 5 };
    for (int i = 0; i < 16; i++)
        m.gid[i] = (guint8)(i * 17);
    g_autofree char *line = vb_conn_encode(&m);
    g_assert_cmpstr(line, ==, "CSVERBS1 26 3 291,16777215,7 11259375 3735928559 7f0012345000 16777216 5 "
                              "00112233445566778899aabbccddeeff");
    vb_conn_msg_t back;
    g_autoptr(GError) err = NULL;
    g_assert_true(vb_conn_decode(line, &back, &err));
    g_assert_no_error(err);
    g_assert_cmpint(memcmp(&m, &back, sizeof m), ==, 0);

    static const char *const bad[] = {
        "", "CSVERBS2 26 1 5 1 1 10 16 5 00112233445566778899aabbccddeeff",
        "CSVERBS1 26 2 5 1 1 10 16 5 00112233445566778899aabbccddeeff",          /* 2 QPs, 1 number */
        "CSVERBS1 26 1 16777216 1 1 10 16 5 00112233445566778899aabbccddeeff",   /* QPN > 24 bits */
        "CSVERBS1 26 1 5 1 1 10 16 6 00112233445566778899aabbccddeeff",          /* MTU enum 6 */
        "CSVERBS1 26 1 5 1 1 10 0 5 00112233445566778899aabbccddeeff",           /* empty buffer */
        "CSVERBS1 26 1 5 1 1 zz 16 5 00112233445566778899aabbccddeeff",          /* address */
        "CSVERBS1 26 1 5 1 1 10 16 5 0011223344556677889xaabbccddeeff",          /* GID */
        "CSVERBS1 26 1 5 1 1 10 16 5 00112233",
        "CSVERBS1 -1 1 5 1 1 10 16 5 00112233445566778899aabbccddeeff",
        "CSVERBS1 26 0  1 1 10 16 5 00112233445566778899aabbccddeeff",
        "CSVERBS1 26 1 5 1 1 10 16 5 00112233445566778899aabbccddeeff extra",
    };
    for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autoptr(GError) e = NULL;
        if (vb_conn_decode(bad[i], &back, &e))
            g_error("accepted '%s'", bad[i]);
        g_assert_error(e, CS_ERROR, CS_ERROR_RUNTIME);
    }
}

static void test_replay_roundtrip(void)
{
    guint64 msg[] = { 1048576, 524288 }, cnt[] = { 120, 30 };
    vb_replay_t r = { .size = 1073741824, .nqp = 2, .nruns = 2, .msg = msg, .count_of = cnt };
    g_autofree char *line = vb_replay_encode(&r);
    g_assert_cmpstr(line, ==, "REPLAY 1073741824 2 2 1048576:120 524288:30");
    vb_replay_t b;
    g_autoptr(GError) err = NULL;
    g_assert_true(vb_replay_decode(line, &b, &err));
    g_assert_cmpuint(b.size, ==, 1073741824);
    g_assert_cmpint(b.nqp, ==, 2);
    g_assert_cmpint(b.nruns, ==, 2);
    g_assert_cmpuint(b.msg[1], ==, 524288);
    g_assert_cmpuint(b.count_of[0], ==, 120);
    g_assert_cmpuint(b.wire_bytes, ==, 1048576ULL * 120 + 524288ULL * 30);
    g_assert_cmpuint(b.nmsgs, ==, 150);
    vb_replay_clear(&b);
    static const char *const bad[] = { "REPLAY 1 2 2 5:1", "REPLAY 1 0 1 5:1", "REPLAY 1 2 1 0:1", "REPLAY 1 2 1 5:0",
                                       "REPLAY 1 2 1 5", "REPLAY x 2 1 5:1", "REPLAI 1 2 1 5:1", "REPLAY 1 65 1 5:1" };
    for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autoptr(GError) e = NULL;
        if (vb_replay_decode(bad[i], &b, &e))
            g_error("accepted '%s'", bad[i]);
    }
}

/* ---- replay schedule ------------------------------------------------------------------ */

typedef struct {
    cs_scenario_t s;
    cs_topo_t *topo;
    cs_comm_t *comm;
} fixture_t;

static gboolean fixture(fixture_t *f, const char *args)
{
    vb_opts_t o;
    g_autoptr(GError) err = NULL;
    g_assert_true(parse(&o, args, &err));
    cs_scenario_init(&f->s);
    gboolean ok = vb_opts_scenario(&o, &f->s, &err);
    g_assert_no_error(err);
    f->topo = cs_topo_spec_build(&f->s.topo, &err);
    g_assert_no_error(err);
    f->comm = cs_comm_new(f->topo, f->s.env, &err);
    g_assert_no_error(err);
    vb_opts_clear(&o);
    return ok;
}

static void fixture_clear(fixture_t *f)
{
    cs_comm_free(f->comm);
    cs_topo_free(f->topo);
    cs_scenario_clear(&f->s);
}

static void test_replay_dgx_h100(void)
{
    fixture_t f;
    fixture(&f, "--client h --topo dgx-h100 --nodes 2 --env NCCL_ALGO=Ring --env NCCL_PROTO=Simple");
    const cs_comm_info_t *ci = cs_comm_info(f.comm);
    g_assert_cmpint(ci->nnodes, ==, 2);
    g_assert_cmpint(ci->nranks, ==, 16);
    /* 1 GiB float all-reduce, Ring/Simple forced: chunk = 4 MiB/8 x 4 =
     * 2 MiB (reference nccl-model.md §2), 2 slices of 1 MiB per step,
     * 2(n-1) = 30 steps per loop; loops = 1 GiB / (nCh x 16 x 2 MiB). */
    vb_replay_t r;
    g_autoptr(GError) err = NULL;
    g_assert_true(vb_replay_plan(f.comm, &f.s, 1073741824, &r, &err));
    g_assert_no_error(err);
    cs_decision_t d;
    g_assert_true(cs_comm_decide(f.comm, CS_COLL_ALLREDUCE, CS_DTYPE_FLOAT, 1073741824, &d, &err));
    g_assert_cmpint(d.algo, ==, CS_ALGO_RING);
    g_assert_cmpint(r.proto, ==, CS_PROTO_SIMPLE);
    g_assert_cmpuint(r.chunk, ==, 2097152);
    g_assert_cmpint(r.nchannels, ==, d.nchannels);
    int nch = d.nchannels;
    g_test_message("dgx-h100 x2: %d channels, %d NICs used", nch, ci->nics_used);
    g_assert_cmpint(r.nqp, ==, (nch + ci->nics_used - 1) / ci->nics_used);
    guint64 loop = (guint64)nch * 16 * 2097152;
    g_assert_cmpuint(1073741824 % loop, ==, 0);     /* (nCh a power of two here) */
    guint64 loops = 1073741824 / loop;
    g_assert_cmpint(r.nruns, ==, 1);
    g_assert_cmpuint(r.msg[0], ==, 1048576);
    g_assert_cmpuint(r.count_of[0], ==, loops * 30 * 2);
    /* every byte of the channel's share crosses the link 2(n-1)/n times */
    g_assert_cmpuint(r.wire_bytes, ==, 1073741824ULL / nch / 16 * 30);
    vb_replay_clear(&r);

    /* 48 MiB with 16 ranks, nCh channels: one short loop: chunk per step =
     * 48 MiB / (nCh x 16) rounded up to 16 B, as two slices */
    g_assert_cmpuint(48ULL << 20, <, loop);
    g_assert_true(vb_replay_plan(f.comm, &f.s, 48 << 20, &r, &err));
    guint64 real = ((48ULL << 20) / ((guint64)nch * 16) + 15) / 16 * 16;
    if (real > 2097152)
        real = 2097152;
    guint64 s0 = (real / 2 + 15) / 16 * 16;
    g_assert_cmpuint(r.msg[0], ==, s0);
    if (real - s0 == s0) {
        g_assert_cmpint(r.nruns, ==, 1);
        g_assert_cmpuint(r.count_of[0], ==, 60);   /* 30 steps x 2 slices */
    } else {
        g_assert_cmpint(r.nruns, ==, 2);
        g_assert_cmpuint(r.msg[1], ==, real - s0);
    }
    vb_replay_clear(&r);
    fixture_clear(&f);
}

/* Without NCCL_ALGO, NCCL's model picks NVLSTree for large all-reduces on
 * dgx-h100 x 2; the replay is of Ring under the same settings. */
static void test_replay_ring_env(void)
{
    fixture_t f;
    fixture(&f, "--client h --topo dgx-h100 --nodes 2 --env NCCL_PROTO=Simple");
    g_autoptr(cs_nccl_env_t) ring = vb_env_with(f.s.env, "NCCL_ALGO", "Ring");
    g_assert_cmpstr(cs_nccl_env_get(ring, "NCCL_ALGO"), ==, "Ring");
    g_assert_cmpstr(cs_nccl_env_get(ring, "NCCL_PROTO"), ==, "Simple");   /* the rest is kept */
    g_assert_cmpstr(cs_nccl_env_get(f.s.env, "NCCL_ALGO"), ==, NULL);     /* and the original untouched */
    g_autoptr(GError) err = NULL;
    g_autoptr(cs_comm_t) rc = cs_comm_new(f.topo, ring, &err);
    g_assert_no_error(err);
    vb_replay_t r;
    g_assert_true(vb_replay_plan(rc, &f.s, 1073741824, &r, &err));
    g_assert_cmpint(r.nccl_algo, ==, CS_ALGO_RING);
    g_assert_cmpuint(r.chunk, ==, 2097152);
    g_assert_cmpuint(r.msg[0], ==, 1048576);
    vb_replay_clear(&r);
    fixture_clear(&f);
}

static void test_replay_protocols(void)
{
    fixture_t f;
    /* LL: one message per step, twice the data on the wire. 2 nodes x 8
     * GPUs, 16 KiB all-reduce, 1 channel forced: chunk = 512 KiB/8/2 =
     * 32 KiB data; real chunk = 16384/(1 x 16) = 1024 B; 30 steps of 2048 B. */
    fixture(&f, "--client h --topo dgx-h100 --nodes 2 --env NCCL_ALGO=Ring --env NCCL_PROTO=LL "
                "--env NCCL_MIN_NCHANNELS=1 --env NCCL_MAX_NCHANNELS=1");
    vb_replay_t r;
    g_autoptr(GError) err = NULL;
    g_assert_true(vb_replay_plan(f.comm, &f.s, 16384, &r, &err));
    g_assert_no_error(err);
    g_assert_cmpint(r.proto, ==, CS_PROTO_LL);
    g_assert_cmpint(r.nchannels, ==, 1);
    g_assert_cmpint(r.nqp, ==, 1);
    g_assert_cmpuint(r.chunk, ==, 32768);
    g_assert_cmpint(r.nruns, ==, 1);
    g_assert_cmpuint(r.msg[0], ==, 2048);
    g_assert_cmpuint(r.count_of[0], ==, 30);
    vb_replay_clear(&r);
    fixture_clear(&f);

    /* AllGather Simple: n-1 steps per loop, 2 slices per chunk. The swept
     * size of an all-gather is the gathered buffer (nccl-tests), so NCCL's
     * nBytes = 512 MiB on 16 ranks; one channel: loops = 512 MiB /
     * (16 x 2 MiB) = 16; 15 steps x 2 slices x 16 loops = 480 messages. */
    fixture(&f, "--client h --topo dgx-h100 --nodes 2 --op allgather --env NCCL_ALGO=Ring --env NCCL_PROTO=Simple "
                "--env NCCL_MIN_NCHANNELS=1 --env NCCL_MAX_NCHANNELS=1");
    g_assert_true(vb_replay_plan(f.comm, &f.s, 512 << 20, &r, &err));
    g_assert_no_error(err);
    g_assert_cmpuint(r.nccl_bytes, ==, 512ULL << 20);
    g_assert_cmpint(r.nruns, ==, 1);
    g_assert_cmpuint(r.msg[0], ==, 1048576);
    g_assert_cmpuint(r.count_of[0], ==, 480);
    vb_replay_clear(&r);
    fixture_clear(&f);

    /* one node: nothing to replay */
    fixture(&f, "--client h --topo dgx-h100");
    g_assert_false(vb_replay_plan(f.comm, &f.s, 1 << 20, &r, &err));
    g_assert_error(err, CS_ERROR, CS_ERROR_INPUT);
    g_assert_nonnull(strstr(err->message, "--nodes 2 or more"));
    fixture_clear(&f);
}

/* ---- port and GID choice on captured trees ---------------------------------------------- */

static char *tree(const char *name)
{
    return g_test_build_filename(G_TEST_DIST, "data", "sysfs", name, NULL);
}

static void test_select(void)
{
    g_autofree char *roce = tree("roce-gid");
    g_autofree char *dgx = tree("dgx-h100");
    g_autofree char *np = tree("no-peermem");
    g_autofree char *lab = tree("lab-1gbe");
    vb_port_sel_t s;
    g_autoptr(GError) err = NULL;

    /* RoCE: NCCL's auto-pick takes the RoCE v2 IPv4 GID, index 3 */
    g_assert_true(vb_select_port(roce, NULL, NULL, -1, &s, &err));
    g_assert_no_error(err);
    g_assert_cmpstr(s.name, ==, "mlx5_0");
    g_assert_cmpint(s.port, ==, 1);
    g_assert_true(s.roce);
    g_assert_cmpint(s.gid_index, ==, 3);
    g_assert_cmpstr(s.gid_how, ==, "NCCL's auto-pick");

    /* NCCL_IB_ROCE_VERSION_NUM=1: the v1 IPv4 GID, index 2 */
    g_autoptr(cs_nccl_env_t) env = cs_nccl_env_new();
    cs_nccl_env_set(env, "NCCL_IB_ROCE_VERSION_NUM", "1", "test");
    g_assert_true(vb_select_port(roce, env, NULL, -1, &s, &err));
    g_assert_cmpint(s.gid_index, ==, 2);
    /* NCCL_IB_GID_INDEX wins over the auto-pick, --gid-index over both */
    cs_nccl_env_set(env, "NCCL_IB_GID_INDEX", "1", "test");
    g_assert_true(vb_select_port(roce, env, NULL, -1, &s, &err));
    g_assert_cmpint(s.gid_index, ==, 1);
    g_assert_cmpstr(s.gid_how, ==, "NCCL_IB_GID_INDEX=1");
    g_assert_true(vb_select_port(roce, env, "mlx5_0:1", 0, &s, &err));
    g_assert_cmpint(s.gid_index, ==, 0);
    g_assert_cmpstr(s.gid_how, ==, "--gid-index");
    /* an empty GID is refused */
    g_assert_false(vb_select_port(roce, NULL, NULL, 4, &s, &err));
    g_assert_error(err, CS_ERROR, CS_ERROR_RUNTIME);
    g_assert_nonnull(strstr(err->message, "GID 4"));
    g_clear_error(&err);

    /* InfiniBand: first port in PCI order, GID 0 (no FLID) */
    g_assert_true(vb_select_port(dgx, NULL, NULL, -1, &s, &err));
    g_assert_no_error(err);
    g_assert_cmpstr(s.name, ==, "mlx5_0");
    g_assert_false(s.roce);
    g_assert_cmpint(s.gid_index, ==, 0);
    g_assert_cmpint(s.speed_mbps, ==, 400000);
    /* NCCL_IB_HCA as NCCL reads it: "^mlx5_0" excludes, "=mlx5_3:1" exact */
    g_autoptr(cs_nccl_env_t) hca = cs_nccl_env_new();
    cs_nccl_env_set(hca, "NCCL_IB_HCA", "^mlx5_0", "test");
    g_assert_true(vb_select_port(dgx, hca, NULL, -1, &s, &err));
    g_assert_cmpstr(s.name, ==, "mlx5_1");
    cs_nccl_env_set(hca, "NCCL_IB_HCA", "=mlx5_3:1", "test");
    g_assert_true(vb_select_port(dgx, hca, NULL, -1, &s, &err));
    g_assert_cmpstr(s.name, ==, "mlx5_3");
    cs_nccl_env_set(hca, "NCCL_IB_HCA", "mlx5_9", "test");
    g_assert_false(vb_select_port(dgx, hca, NULL, -1, &s, &err));
    g_assert_nonnull(strstr(err->message, "NCCL_IB_HCA=mlx5_9 selects no ACTIVE port"));
    g_clear_error(&err);
    /* --ib-dev wins over NCCL_IB_HCA */
    g_assert_true(vb_select_port(dgx, hca, "mlx5_6", -1, &s, &err));
    g_assert_cmpstr(s.name, ==, "mlx5_6");

    /* a port that is not ACTIVE (INIT: no subnet manager) is not offered */
    g_assert_false(vb_select_port(np, NULL, "mlx5_2", -1, &s, &err));
    g_assert_error(err, CS_ERROR, CS_ERROR_INPUT);
    g_assert_nonnull(strstr(err->message, "--ib-dev: 'mlx5_2' is not an ACTIVE"));
    g_clear_error(&err);
    g_assert_true(vb_select_port(np, NULL, NULL, -1, &s, &err));
    g_assert_cmpstr(s.name, ==, "mlx5_0");
    g_assert_false(vb_select_port(np, NULL, "mlx5_0:2", -1, &s, &err));
    g_clear_error(&err);

    /* no RDMA at all */
    g_assert_false(vb_select_port(lab, NULL, NULL, -1, &s, &err));
    g_assert_error(err, CS_ERROR, CS_ERROR_RUNTIME);
    g_assert_nonnull(strstr(err->message, "no ACTIVE InfiniBand or RoCE port"));
    g_clear_error(&err);
}

static void test_env_int(void)
{
    g_autoptr(cs_nccl_env_t) env = cs_nccl_env_new();
    g_assert_cmpint(vb_env_int(env, "NCCL_IB_TC", -1, 0), ==, 0);
    cs_nccl_env_set(env, "NCCL_IB_TC", "0x6a", "test");      /* strtoll base 0, as ncclLoadParam */
    g_assert_cmpint(vb_env_int(env, "NCCL_IB_TC", -1, 0), ==, 106);
    g_assert_cmpint(vb_env_int(env, "NCCL_IB_TC", 96, 0), ==, 96);   /* --tc wins */
    cs_nccl_env_set(env, "NCCL_IB_SL", "-1", "test");        /* NCCL's default -1 means 0 */
    g_assert_cmpint(vb_env_int(env, "NCCL_IB_SL", -1, 0), ==, 0);
}

/* ---- the out-of-band exchange over loopback TCP ------------------------------------------- */

static gpointer tcp_peer(gpointer data)
{
    int lfd = GPOINTER_TO_INT(data);
    g_autoptr(GError) err = NULL;
    int fd = vb_tcp_accept(lfd, &err);
    g_assert_cmpint(fd, >=, 0);
    char *line = vb_recv_line(fd, &err);
    g_assert_nonnull(line);
    g_autofree char *reply = g_strdup_printf("echo %s", line);
    g_free(line);
    g_assert_true(vb_send_line(fd, reply, &err));
    close(fd);
    return NULL;
}

static void test_tcp(void)
{
    g_autoptr(GError) err = NULL;
    int lfd = -1, port = 0;
    for (int tries = 0; tries < 20 && lfd < 0; tries++) {
        port = g_random_int_range(30000, 60000);
        g_clear_error(&err);
        lfd = vb_tcp_listen(port, &err);
    }
    if (lfd < 0) {
        g_test_skip("no free TCP port on this machine");
        return;
    }
    GThread *t = g_thread_new("peer", tcp_peer, GINT_TO_POINTER(lfd));
    /* numeric, so no lookup: a minimal Debian's /etc/hosts may lack "localhost" */
    int fd = vb_tcp_connect("127.0.0.1", port, &err);
    g_assert_no_error(err);
    vb_conn_msg_t m = { .lid = 1, .nqp = 1, .qpn = { 77 }, .psn = 5, .rkey = 9, .addr = 0x1000, .len = 4096, .mtu = 3 };
    g_autofree char *line = vb_conn_encode(&m);
    g_assert_true(vb_send_line(fd, line, &err));
    g_autofree char *back = vb_recv_line(fd, &err);
    g_assert_nonnull(back);
    g_assert_true(g_str_has_prefix(back, "echo "));
    vb_conn_msg_t m2;
    g_assert_true(vb_conn_decode(back + 5, &m2, &err));
    g_assert_cmpuint(m2.qpn[0], ==, 77);
    g_thread_join(t);
    /* the peer is gone: a clear error, not a hang or a crash */
    char *none = vb_recv_line(fd, &err);
    g_assert_null(none);
    g_assert_error(err, CS_ERROR, CS_ERROR_RUNTIME);
    g_assert_nonnull(strstr(err->message, "the peer closed the connection"));
    close(fd);
    close(lfd);
    g_clear_error(&err);
    /* nobody listening; a string that is neither a name nor an address is
     * refused before any lookup (no test here asks a resolver anything) */
    g_assert_cmpint(vb_tcp_connect("127.0.0.1", port, &err), <, 0);
    g_assert_error(err, CS_ERROR, CS_ERROR_RUNTIME);
    g_clear_error(&err);
    const char *bad[] = { "no such host", "", "node..example", "-", "a/b", "192.0.2.7:80" };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_assert_cmpint(vb_tcp_connect(bad[i], port, &err), <, 0);
        g_assert_error(err, CS_ERROR, CS_ERROR_INPUT);
        g_assert_nonnull(strstr(err->message, "is not a host name or address"));
        g_clear_error(&err);
    }
}

/* ---- the entry point without a device ------------------------------------------------------ */

static void test_main_no_device(void)
{
    int n = 0;
    struct ibv_device **l = ibv_get_device_list(&n);
    if (l != NULL)
        ibv_free_device_list(l);
    if (n > 0) {
        g_test_skip("this machine has an RDMA device");
        return;
    }
    if (g_test_subprocess()) {
        char *av[] = { (char *)"collsim real", (char *)"--verbs", (char *)"--client", (char *)"127.0.0.1", NULL };
        exit(cs_verbs_main(4, av));
    }
    g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
    g_test_trap_assert_failed();
    g_test_trap_assert_stderr("collsim: real --verbs: no RDMA device found (ibv_get_device_list returned none); "
                              "needs an InfiniBand or RoCE NIC\n");
}

static void test_main_bad_flag(void)
{
    if (g_test_subprocess()) {
        char *av[] = { (char *)"collsim real", (char *)"--verbs", (char *)"--client", (char *)"h", (char *)"--sl",
                       (char *)"99", NULL };
        exit(cs_verbs_main(6, av) == 2 ? 0 : 1);
    }
    g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
    g_test_trap_assert_passed();
    g_test_trap_assert_stderr("collsim: --sl: '99' is not a service level; expected a whole number from 0 to 15\n");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/verbs/opts/ok", test_opts_ok);
    g_test_add_func("/verbs/opts/bad", test_opts_bad);
    g_test_add_func("/verbs/sweep-sizes", test_sweep_sizes);
    g_test_add_func("/verbs/stats/latency", test_lat_stats);
    g_test_add_func("/verbs/stats/bandwidth", test_bw_stats);
    g_test_add_func("/verbs/stats/table-lines", test_table_lines);
    g_test_add_func("/verbs/oob/conn", test_conn_roundtrip);
    g_test_add_func("/verbs/oob/replay", test_replay_roundtrip);
    g_test_add_func("/verbs/replay/dgx-h100", test_replay_dgx_h100);
    g_test_add_func("/verbs/replay/protocols", test_replay_protocols);
    g_test_add_func("/verbs/replay/ring-env", test_replay_ring_env);
    g_test_add_func("/verbs/select", test_select);
    g_test_add_func("/verbs/env-int", test_env_int);
    g_test_add_func("/verbs/oob/tcp", test_tcp);
    g_test_add_func("/verbs/main/no-device", test_main_no_device);
    g_test_add_func("/verbs/main/bad-flag", test_main_bad_flag);
    return g_test_run();
}
