/* NCCL environment: storage, known names, hints, typed settings. */
#include "config.h"
#include "models/cs_nccl_env.h"
#include "models/cs_paths.h"

#include <string.h>

static gboolean settings_of(const char *name, const char *value, cs_nccl_settings_t *s,
                            GError **err)
{
    g_autoptr(cs_nccl_env_t) e = cs_nccl_env_new();
    if (name != NULL)
        cs_nccl_env_set(e, name, value, "scen.ini:12");
    return cs_nccl_env_settings(e, s, err);
}

static void test_storage(void)
{
    g_autoptr(cs_nccl_env_t) e = cs_nccl_env_new();
    cs_nccl_env_set(e, "NCCL_PROTO", "Simple", "scen.ini:3");
    cs_nccl_env_set(e, "NCCL_ALGO", "Ring", "scen.ini:4");
    cs_nccl_env_set(e, "NCCL_PROTO", "LL", "--env");
    g_assert_cmpstr(cs_nccl_env_get(e, "NCCL_PROTO"), ==, "LL");
    g_assert_cmpstr(cs_nccl_env_origin(e, "NCCL_PROTO"), ==, "--env");
    g_assert_null(cs_nccl_env_get(e, "NCCL_DEBUG"));
    g_autoptr(GPtrArray) names = cs_nccl_env_names(e);
    g_assert_cmpuint(names->len, ==, 2);
    /* order first set, not order last set */
    g_assert_cmpstr(g_ptr_array_index(names, 0), ==, "NCCL_PROTO");
    g_assert_cmpstr(g_ptr_array_index(names, 1), ==, "NCCL_ALGO");
}

static void test_import(void)
{
    g_setenv("NCCL_ZZZ_TEST_B", "2", TRUE);
    g_setenv("NCCL_ZZZ_TEST_A", "1", TRUE);
    g_setenv("NOT_NCCL_VAR", "x", TRUE);
    g_autoptr(cs_nccl_env_t) e = cs_nccl_env_new();
    cs_nccl_env_import_environ(e);
    g_assert_cmpstr(cs_nccl_env_get(e, "NCCL_ZZZ_TEST_A"), ==, "1");
    g_assert_cmpstr(cs_nccl_env_origin(e, "NCCL_ZZZ_TEST_A"), ==, "environment");
    g_assert_null(cs_nccl_env_get(e, "NOT_NCCL_VAR"));
    g_autoptr(GPtrArray) names = cs_nccl_env_names(e);
    int ia = -1, ib = -1;
    for (guint i = 0; i < names->len; i++) {
        if (strcmp(g_ptr_array_index(names, i), "NCCL_ZZZ_TEST_A") == 0)
            ia = (int)i;
        if (strcmp(g_ptr_array_index(names, i), "NCCL_ZZZ_TEST_B") == 0)
            ib = (int)i;
    }
    g_assert_true(ia >= 0 && ib == ia + 1);   /* sorted import */
    g_unsetenv("NCCL_ZZZ_TEST_A");
    g_unsetenv("NCCL_ZZZ_TEST_B");
    g_unsetenv("NOT_NCCL_VAR");
}

static void test_known(void)
{
    g_assert_true(cs_nccl_env_is_known("NCCL_ALGO"));
    g_assert_true(cs_nccl_env_is_known("NCCL_IB_HCA"));
    g_assert_true(cs_nccl_env_is_known("NCCL_P2P_LEVEL"));
    g_assert_true(cs_nccl_env_is_known("NCCL_DEBUG"));
    g_assert_true(cs_nccl_env_is_known("NCCL_WORK_FIFO_BYTES"));   /* last of the table */
    g_assert_true(cs_nccl_env_is_known("NCCL_ALLOC_P2P_NET_LL_BUFFERS"));
    g_assert_false(cs_nccl_env_is_known("NCCL_TIMEOUT"));
    g_assert_false(cs_nccl_env_is_known("NCCL_IB_GDR_LEVEL"));
    g_assert_false(cs_nccl_env_is_known("NCCL_algo"));
    g_assert_false(cs_nccl_env_is_known(NULL));
    g_assert_nonnull(cs_nccl_env_hint("NCCL_TIMEOUT"));
    g_assert_true(strstr(cs_nccl_env_hint("NCCL_IB_GDR_LEVEL"), "NCCL_NET_GDR_LEVEL") != NULL);
    g_assert_null(cs_nccl_env_hint("NCCL_ALGO"));
}

static void test_warnings(void)
{
    g_autoptr(cs_nccl_env_t) e = cs_nccl_env_new();
    cs_nccl_env_set(e, "NCCL_ALGO", "Ring", "environment");
    cs_nccl_env_set(e, "NCCL_TIMEOUT", "1800", "environment");
    cs_nccl_env_set(e, "NCCL_IB_HAC", "mlx5", "--env");        /* swap: HCA */
    cs_nccl_env_set(e, "NCCL_SOCKET_IFNAM", "eth0", "a.ini:2"); /* deletion */
    cs_nccl_env_set(e, "NCCL_COMPLETELY_MADE_UP", "1", "a.ini:3");
    cs_nccl_env_set(e, "TORCH_NCCL_X", "1", "--env");
    g_autoptr(GPtrArray) w = cs_nccl_env_warnings(e);
    g_assert_cmpuint(w->len, ==, 5);
    g_assert_cmpstr(g_ptr_array_index(w, 0), ==,
                    "NCCL_TIMEOUT (environment): NCCL does not read this variable; the timeout "
                    "is PyTorch's init_process_group(timeout=...)");
    g_assert_true(strstr(g_ptr_array_index(w, 1), "did you mean NCCL_IB_HCA?") != NULL);
    g_assert_true(g_str_has_prefix(g_ptr_array_index(w, 1), "NCCL_IB_HAC (--env): "));
    g_assert_true(strstr(g_ptr_array_index(w, 2), "did you mean NCCL_SOCKET_IFNAME?") != NULL);
    g_assert_true(strstr(g_ptr_array_index(w, 3), "no effect") != NULL);
    g_assert_true(strstr(g_ptr_array_index(w, 4), "not an NCCL variable") != NULL);
}

/* A variable NCCL removed is a mistake only for the versions that no longer
 * read it (issue #9: the NCCL_TREE_THRESHOLD warning fired for NCCL 2.4.7
 * logs, which honour it). */
static void test_warnings_by_version(void)
{
    g_autoptr(cs_nccl_env_t) e = cs_nccl_env_new();
    cs_nccl_env_set(e, "NCCL_TREE_THRESHOLD", "600000000", "--env");
    g_autoptr(GPtrArray) notes = NULL;
    g_autoptr(GPtrArray) old = cs_nccl_env_warnings_for(e, "2.4.7+cuda10.1", &notes);
    g_assert_cmpuint(old->len, ==, 0);
    g_assert_nonnull(notes);
    g_assert_cmpuint(notes->len, ==, 1);
    g_assert_cmpstr(g_ptr_array_index(notes, 0), ==,
                    "NCCL_TREE_THRESHOLD (--env): NCCL 2.4.7+cuda10.1 read it (it is gone from NCCL 2.5 on), but "
                    "collsim models NCCL v2.28.9's choices, which do not: it changes nothing here; the algorithm "
                    "comes from NCCL's cost model; use NCCL_ALGO to restrict it");
    static const char *const later[] = { "2.5.6", "2.18.3", NULL, "unknown" };
    for (gsize i = 0; i < G_N_ELEMENTS(later); i++) {
        g_autoptr(GPtrArray) n = NULL;
        g_autoptr(GPtrArray) w = cs_nccl_env_warnings_for(e, later[i], &n);
        g_assert_cmpuint(w->len, ==, 1);
        g_assert_null(n);
        g_assert_true(g_str_has_prefix(g_ptr_array_index(w, 0),
                                       "NCCL_TREE_THRESHOLD (--env): NCCL does not read this variable"));
    }
    /* the log follows the variable warnings, each line once */
    cs_nccl_env_log(e, "fallback A");
    cs_nccl_env_log(e, "fallback A");
    g_autoptr(GPtrArray) w = cs_nccl_env_warnings(e);
    g_assert_cmpuint(w->len, ==, 2);
    g_assert_cmpstr(g_ptr_array_index(w, 1), ==, "fallback A");
}

static void test_defaults(void)
{
    cs_nccl_settings_t s;
    g_autoptr(GError) err = NULL;
    g_assert_true(settings_of(NULL, NULL, &s, &err));
    g_assert_false(s.algo_set);
    g_assert_false(s.proto_set);
    for (int c = 0; c < CS_COLL_COUNT; c++) {
        for (int a = 0; a < CS_ALGO_COUNT; a++)
            g_assert_cmpint(s.algo_enabled[c][a], ==, 1);
        g_assert_cmpint(s.proto_enabled[c][CS_PROTO_LL], ==, 1);
        g_assert_cmpint(s.proto_enabled[c][CS_PROTO_LL128], ==, 2);
        g_assert_cmpint(s.proto_enabled[c][CS_PROTO_SIMPLE], ==, 1);
    }
    g_assert_cmpint(s.min_nchannels, ==, 0);
    g_assert_cmpint(s.max_nchannels, ==, 64);
    g_assert_cmpint(s.buffsize, ==, -1);
    g_assert_cmpint(s.nvls_enable, ==, 2);
    g_assert_cmpint(s.pat_enable, ==, 2);
    g_assert_cmpint(s.cross_nic, ==, 2);
    g_assert_cmpint(s.p2p_level, ==, -1);
    g_assert_false(s.p2p_disable);
    g_assert_cmpint(s.net_gdr_level, ==, -1);
    g_assert_cmpint(s.net_gdr_read, ==, -2);
    g_assert_null(s.net);
    g_assert_cmpfloat(s.net_overhead_us, <, 0);
    g_assert_cmpint(s.thread_thresholds[1][CS_PROTO_SIMPLE], ==, -2);
    cs_nccl_settings_clear(&s);
}

static void test_parse_list(void)
{
    cs_nccl_settings_t s;
    g_autoptr(GError) err = NULL;

    g_assert_true(settings_of("NCCL_PROTO", "^LL128", &s, &err));
    g_assert_true(s.proto_set);
    g_assert_cmpint(s.proto_enabled[CS_COLL_ALLREDUCE][CS_PROTO_LL], ==, 1);
    g_assert_cmpint(s.proto_enabled[CS_COLL_ALLREDUCE][CS_PROTO_LL128], ==, 0);
    g_assert_cmpint(s.proto_enabled[CS_COLL_BROADCAST][CS_PROTO_SIMPLE], ==, 1);
    cs_nccl_settings_clear(&s);

    /* "^LL" forces LL128 on (1), bypassing the default rule as NCCL does. */
    g_assert_true(settings_of("NCCL_PROTO", "^ll", &s, &err));
    g_assert_cmpint(s.proto_enabled[CS_COLL_ALLREDUCE][CS_PROTO_LL], ==, 0);
    g_assert_cmpint(s.proto_enabled[CS_COLL_ALLREDUCE][CS_PROTO_LL128], ==, 1);
    cs_nccl_settings_clear(&s);

    g_assert_true(settings_of("NCCL_ALGO", "Ring,Tree", &s, &err));
    g_assert_true(s.algo_set);
    g_assert_true(s.algo_enabled[CS_COLL_ALLREDUCE][CS_ALGO_RING]);
    g_assert_true(s.algo_enabled[CS_COLL_ALLREDUCE][CS_ALGO_TREE]);
    g_assert_false(s.algo_enabled[CS_COLL_ALLREDUCE][CS_ALGO_NVLS]);
    g_assert_false(s.algo_enabled[CS_COLL_ALLGATHER][CS_ALGO_PAT]);
    cs_nccl_settings_clear(&s);

    g_assert_true(settings_of("NCCL_ALGO", "allreduce:nvlstree,CollNetDirect;broadcast:ring", &s,
                              &err));
    g_assert_true(s.algo_enabled[CS_COLL_ALLREDUCE][CS_ALGO_NVLS_TREE]);
    g_assert_true(s.algo_enabled[CS_COLL_ALLREDUCE][CS_ALGO_COLLNET_DIRECT]);
    g_assert_false(s.algo_enabled[CS_COLL_ALLREDUCE][CS_ALGO_RING]);
    g_assert_true(s.algo_enabled[CS_COLL_BROADCAST][CS_ALGO_RING]);
    g_assert_false(s.algo_enabled[CS_COLL_BROADCAST][CS_ALGO_TREE]);
    /* collectives not named keep everything */
    g_assert_true(s.algo_enabled[CS_COLL_ALLGATHER][CS_ALGO_PAT]);
    g_assert_true(s.algo_enabled[CS_COLL_ALLGATHER][CS_ALGO_RING]);
    cs_nccl_settings_clear(&s);

    g_assert_true(settings_of("NCCL_ALGO", "ring;allreduce:^ring", &s, &err));
    g_assert_true(s.algo_enabled[CS_COLL_ALLGATHER][CS_ALGO_RING]);
    g_assert_false(s.algo_enabled[CS_COLL_ALLGATHER][CS_ALGO_TREE]);
    g_assert_false(s.algo_enabled[CS_COLL_ALLREDUCE][CS_ALGO_RING]);
    g_assert_true(s.algo_enabled[CS_COLL_ALLREDUCE][CS_ALGO_TREE]);
    g_assert_true(s.algo_enabled[CS_COLL_ALLREDUCE][CS_ALGO_PAT]);
    cs_nccl_settings_clear(&s);

    g_assert_true(settings_of("NCCL_ALGO", "PAT", &s, &err));
    g_assert_true(s.algo_enabled[CS_COLL_REDUCESCATTER][CS_ALGO_PAT]);
    cs_nccl_settings_clear(&s);
}

static void expect_error(const char *name, const char *value, const char *expected)
{
    cs_nccl_settings_t s;
    g_autoptr(GError) err = NULL;
    g_assert_false(settings_of(name, value, &s, &err));
    g_assert_nonnull(err);
    if (strstr(err->message, expected) == NULL)
        g_error("message '%s' lacks '%s'", err->message, expected);
    g_assert_true(g_str_has_prefix(err->message, "scen.ini:12: "));
    g_assert_null(strchr(err->message, '\n'));
}

static void test_bad_values(void)
{
    expect_error("NCCL_ALGO", "Rign", "scen.ini:12: NCCL_ALGO=Rign: unknown algorithm 'Rign'; "
                 "expected one of Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT");
    expect_error("NCCL_ALGO", "Ring, Tree", "does not strip spaces");
    expect_error("NCCL_ALGO", "allreduce:ring;tree", "has no collective prefix");
    expect_error("NCCL_ALGO", "allreduse:ring", "unknown collective 'allreduse'");
    expect_error("NCCL_PROTO", "LL256", "unknown protocol 'LL256'; expected one of LL, LL128, Simple");
    expect_error("NCCL_MAX_NCHANNELS", "lots", "NCCL_MAX_NCHANNELS=lots: not an integer");
    expect_error("NCCL_MIN_NCHANNELS", "-4", "out of range");
    /* past 64 bits is out of range too, not "not an integer" */
    expect_error("NCCL_IB_AR_THRESHOLD", "99999999999999999999", "out of range; expected an integer from 0 to 2147483647");
    expect_error("NCCL_MIN_NCHANNELS", "-99999999999999999999", "out of range");
    expect_error("NCCL_NTHREADS", "100", "not a multiple of 32");
    expect_error("NCCL_NTHREADS", "1024", "out of range; expected an integer from 64 to 512");
    expect_error("NCCL_P2P_LEVEL", "sys", "case-sensitively");
    expect_error("NCCL_P2P_LEVEL", "NVLINK", "unknown path level");
    expect_error("NCCL_NET_GDR_LEVEL", "far", "unknown path level");
    expect_error("NCCL_NET", "ofi", "expected IB or Socket");
    expect_error("NCCL_IB_DISABLE", "yes", "not an integer");
    expect_error("NCCL_THREAD_THRESHOLDS", "1 2 x", "six integers");
    expect_error("NCCL_CROSS_NIC", "3", "out of range");
}

static void test_levels_and_ints(void)
{
    cs_nccl_settings_t s;
    g_autoptr(GError) err = NULL;
    g_assert_true(settings_of("NCCL_P2P_LEVEL", "NVL", &s, &err));
    g_assert_cmpint(s.p2p_level, ==, CS_PATH_NVL);
    cs_nccl_settings_clear(&s);
    /* old integers: 0 LOC 1 PIX 2 PXB 3 PHB 4 SYS 5+ SYS */
    g_assert_true(settings_of("NCCL_P2P_LEVEL", "3", &s, &err));
    g_assert_cmpint(s.p2p_level, ==, CS_PATH_PHB);
    cs_nccl_settings_clear(&s);
    g_assert_true(settings_of("NCCL_P2P_LEVEL", "9", &s, &err));
    g_assert_cmpint(s.p2p_level, ==, CS_PATH_SYS);
    cs_nccl_settings_clear(&s);
    g_assert_true(settings_of("NCCL_NET_GDR_LEVEL", "1", &s, &err));
    g_assert_cmpint(s.net_gdr_level, ==, CS_PATH_PIX);
    cs_nccl_settings_clear(&s);
    g_assert_true(settings_of("NCCL_P2P_DISABLE", "1", &s, &err));
    g_assert_true(s.p2p_disable);
    g_assert_cmpint(s.p2p_level, ==, CS_PATH_LOC);
    cs_nccl_settings_clear(&s);

    g_autoptr(cs_nccl_env_t) e = cs_nccl_env_new();
    cs_nccl_env_set(e, "NCCL_P2P_DISABLE", "1", "x");
    cs_nccl_env_set(e, "NCCL_P2P_LEVEL", "SYS", "x");  /* DISABLE wins */
    cs_nccl_env_set(e, "NCCL_MAX_NRINGS", "4", "x");
    cs_nccl_env_set(e, "NCCL_MIN_NRINGS", "2", "x");
    cs_nccl_env_set(e, "NCCL_MIN_NCHANNELS", "3", "x"); /* NCHANNELS wins over NRINGS */
    cs_nccl_env_set(e, "NCCL_BUFFSIZE", "0x800000", "x");
    cs_nccl_env_set(e, "NCCL_NET_OVERHEAD", "2500", "x");
    cs_nccl_env_set(e, "NCCL_NET", "socket", "x");
    cs_nccl_env_set(e, "NCCL_THREAD_THRESHOLDS", "1 2 3 4 5", "x");
    cs_nccl_env_set(e, "NCCL_PROTO", "", "x");           /* empty: unset */
    g_assert_true(cs_nccl_env_settings(e, &s, &err));
    g_assert_cmpint(s.p2p_level, ==, CS_PATH_LOC);
    g_assert_cmpint(s.max_nchannels, ==, 4);
    g_assert_cmpint(s.min_nchannels, ==, 3);
    g_assert_cmpint(s.buffsize, ==, 8 << 20);
    g_assert_cmpfloat_with_epsilon(s.net_overhead_us, 2.5, 1e-12);
    g_assert_cmpstr(s.net, ==, "Socket");
    g_assert_cmpint(s.thread_thresholds[0][CS_PROTO_LL], ==, 1);
    g_assert_cmpint(s.thread_thresholds[1][CS_PROTO_LL128], ==, 5);
    g_assert_cmpint(s.thread_thresholds[1][CS_PROTO_SIMPLE], ==, -2);
    /* NCCL_PROTO="" : parseList of an empty string leaves the defaults */
    g_assert_cmpint(s.proto_enabled[CS_COLL_ALLREDUCE][CS_PROTO_LL128], ==, 2);
    cs_nccl_settings_clear(&s);

    g_assert_true(settings_of("NCCL_MAX_NCHANNELS", "200", &s, &err));
    g_assert_cmpint(s.max_nchannels, ==, 64);   /* clamped as NCCL does */
    cs_nccl_settings_clear(&s);
}

/* NCCL version text: a log's line may go on after the version; parts of
 * more than two digits (an overflow of a %d scan once) are no version. */
static void test_version_code(void)
{
    const char *end = NULL;
    g_assert_cmpint(cs_nccl_version_code("2.19.3", &end), ==, 21903);
    g_assert_cmpint(*end, ==, '\0');
    g_assert_cmpint(cs_nccl_version_code("2.28.9+cuda12.8", &end), ==, 22809);
    g_assert_cmpstr(end, ==, "+cuda12.8");
    g_assert_cmpint(cs_nccl_version_code("2.19", NULL), ==, 21900);
    g_assert_cmpint(cs_nccl_version_code("2.19.3.4", &end), ==, 21903);
    g_assert_cmpstr(end, ==, ".4");
    g_assert_cmpint(cs_nccl_version_code("4294967298.19.3", NULL), ==, 0);
    g_assert_cmpint(cs_nccl_version_code("2.190.3", NULL), ==, 0);
    g_assert_cmpint(cs_nccl_version_code("0.19.3", NULL), ==, 0);
    g_assert_cmpint(cs_nccl_version_code("2", NULL), ==, 0);
    g_assert_cmpint(cs_nccl_version_code("x", NULL), ==, 0);
    g_assert_cmpint(cs_nccl_version_code(NULL, NULL), ==, 0);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/nccl-env/storage", test_storage);
    g_test_add_func("/nccl-env/import", test_import);
    g_test_add_func("/nccl-env/known", test_known);
    g_test_add_func("/nccl-env/warnings", test_warnings);
    g_test_add_func("/nccl-env/warnings-by-version", test_warnings_by_version);
    g_test_add_func("/nccl-env/defaults", test_defaults);
    g_test_add_func("/nccl-env/parse-list", test_parse_list);
    g_test_add_func("/nccl-env/bad-values", test_bad_values);
    g_test_add_func("/nccl-env/levels-ints", test_levels_and_ints);
    g_test_add_func("/nccl-env/version-code", test_version_code);
    return g_test_run();
}
