/* collsim doctor: NCCL's selection rules (checked against values derived by
 * hand from the NCCL v2.28.9 sources), the captured trees under
 * tests/data/sysfs, odd trees built on the fly, and the topology export. */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "io/cs_topo_xml.h"
#include "real/doctor_int.h"
#include "util/cs_error.h"

/* ---- helpers -------------------------------------------------------------------- */

static char *tree_path(const char *name)
{
    const char *src = g_getenv("G_TEST_SRCDIR");
    return src != NULL ? g_build_filename(src, "data", "sysfs", name, NULL)
                       : g_build_filename(CS_SRCDIR, "tests", "data", "sysfs", name, NULL);
}

/* Runs the doctor on a captured tree with "NAME=VALUE" settings. */
static cs_doctor_t *run_tree(const char *name, const char *const *envs, const char *gpu_model)
{
    g_autofree char *root = tree_path(name);
    cs_doctor_t *d = cs_doctor_new(root);
    g_autoptr(GError) err = NULL;
    g_assert_true(cs_doctor_scan(d, &err));
    g_assert_no_error(err);
    g_autoptr(cs_nccl_env_t) env = cs_nccl_env_new();
    for (int i = 0; envs != NULL && envs[i] != NULL; i++) {
        const char *eq = strchr(envs[i], '=');
        g_autofree char *n = g_strndup(envs[i], eq - envs[i]);
        cs_nccl_env_set(env, n, eq + 1, "test");
    }
    cs_doctor_check(d, env, gpu_model);
    return d;
}

static void assert_finding(const cs_doctor_t *d, const char *code, cs_doctor_severity_t sev)
{
    const cs_doctor_finding_t *f = cs_doctor_find(d, code);
    if (f == NULL)
        g_error("expected finding %s", code);
    g_assert_cmpint(f->severity, ==, sev);
    g_assert_true(f->what[0] != '\0');
    g_assert_true(f->impact[0] != '\0');
}

static void put(const char *root, const char *rel, const char *content)
{
    g_autofree char *full = g_build_filename(root, rel, NULL);
    g_autofree char *dir = g_path_get_dirname(full);
    g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
    g_assert_true(g_file_set_contents(full, content, -1, NULL));
}

static void rm_rf(const char *path)
{
    GDir *d = g_dir_open(path, 0, NULL);
    if (d != NULL) {
        const char *n;
        while ((n = g_dir_read_name(d)) != NULL) {
            g_autofree char *p = g_build_filename(path, n, NULL);
            if (g_file_test(p, G_FILE_TEST_IS_DIR) && !g_file_test(p, G_FILE_TEST_IS_SYMLINK))
                rm_rf(p);
            else
                g_unlink(p);
        }
        g_dir_close(d);
    }
    g_rmdir(path);
}

/* A PCI function in a synthetic tree. */
static void put_pci(const char *root, const char *path, const char *cls, const char *vendor,
                    const char *device, const char *numa)
{
    const char *bdf = strrchr(path, '/') + 1;
    g_autofree char *d = g_strconcat("sys/bus/pci/devices/", bdf, NULL);
    g_autofree char *p1 = g_strconcat(d, "/.path", NULL);
    g_autofree char *p2 = g_strconcat(d, "/class", NULL);
    g_autofree char *p3 = g_strconcat(d, "/vendor", NULL);
    g_autofree char *p4 = g_strconcat(d, "/device", NULL);
    g_autofree char *p5 = g_strconcat(d, "/numa_node", NULL);
    put(root, p1, path);
    put(root, p2, cls);
    put(root, p3, vendor);
    put(root, p4, device);
    put(root, p5, numa);
}

/* An ACTIVE 400G InfiniBand port, mlx5_0, on socket 0 (bus 01). */
static void put_ib_nic(const char *root)
{
    put_pci(root, "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0", "0x020700", "0x15b3", "0x1021", "0");
    put(root, "sys/class/infiniband/mlx5_0/device", "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0");
    put(root, "sys/class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE");
    put(root, "sys/class/infiniband/mlx5_0/ports/1/link_layer", "InfiniBand");
    put(root, "sys/class/infiniband/mlx5_0/ports/1/rate", "400 Gb/sec (4X NDR)");
    put(root, "sys/class/infiniband/mlx5_0/ports/1/gids/0", "fe80:0000:0000:0000:a088:c203:0012:3456");
}

/* ---- NCCL's rules ----------------------------------------------------------------- */

static void test_ib_speed(void)
{
    /* ibvSpeeds x ibvWidths (net_ib/init.cc) */
    g_assert_cmpint(dr_ib_speed_mbps(4, "NDR"), ==, 400000);
    g_assert_cmpint(dr_ib_speed_mbps(4, "HDR"), ==, 200000);
    g_assert_cmpint(dr_ib_speed_mbps(1, "EDR"), ==, 25000);
    g_assert_cmpint(dr_ib_speed_mbps(4, "FDR"), ==, 56000);
    g_assert_cmpint(dr_ib_speed_mbps(4, "FDR10"), ==, 40000);
    g_assert_cmpint(dr_ib_speed_mbps(2, "HDR"), ==, 100000);
    g_assert_cmpint(dr_ib_speed_mbps(12, "QDR"), ==, 120000);
    g_assert_cmpint(dr_ib_speed_mbps(4, "XDR"), ==, 800000);
    g_assert_cmpint(dr_ib_speed_mbps(3, "EDR"), ==, -1);
    g_assert_cmpint(dr_ib_speed_mbps(4, "QQQ"), ==, -1);
    g_assert_cmpint(dr_ib_speed_mbps(4, NULL), ==, -1);

    double g;
    int w;
    char *name;
    g_assert_true(dr_parse_rate("400 Gb/sec (4X NDR)", &g, &w, &name));
    g_assert_cmpfloat_with_epsilon(g, 400, 1e-9);
    g_assert_cmpint(w, ==, 4);
    g_assert_cmpstr(name, ==, "NDR");
    g_free(name);
    g_assert_true(dr_parse_rate("2.5 Gb/sec (1X SDR)", &g, &w, &name));
    g_assert_cmpfloat_with_epsilon(g, 2.5, 1e-9);
    g_assert_cmpstr(name, ==, "SDR");
    g_free(name);
    g_assert_true(dr_parse_rate("100 Gb/sec", &g, &w, &name));
    g_assert_cmpint(w, ==, 0);
    g_assert_null(name);
    g_assert_false(dr_parse_rate("fast", &g, &w, &name));
    g_assert_false(dr_parse_rate(NULL, &g, &w, &name));
}

static void test_list_match(void)
{
    /* utils.cc parseStringList/matchIfList with the callers' '^' and '=' */
    g_assert_true(dr_nccl_list_selects(NULL, "eth0", -1));
    g_assert_true(dr_nccl_list_selects("", "eth0", -1));
    g_assert_true(dr_nccl_list_selects("eth", "eth0", -1));
    g_assert_false(dr_nccl_list_selects("eth", "ens1f0", -1));
    g_assert_false(dr_nccl_list_selects("=eth", "eth0", -1));
    g_assert_true(dr_nccl_list_selects("=eth0", "eth0", -1));
    g_assert_false(dr_nccl_list_selects("=eth0", "eth01", -1));
    g_assert_false(dr_nccl_list_selects("^docker,lo,virbr", "docker0", -1));
    g_assert_false(dr_nccl_list_selects("^docker,lo,virbr", "lo", -1));
    g_assert_true(dr_nccl_list_selects("^docker,lo,virbr", "eth0", -1));
    g_assert_false(dr_nccl_list_selects("^=eth0", "eth0", -1));
    g_assert_true(dr_nccl_list_selects("^=eth0", "eth01", -1));
    g_assert_false(dr_nccl_list_selects("^", "eth0", -1));   /* an empty exclusion list excludes all */
    g_assert_true(dr_nccl_list_selects(",,eth,", "eth0", -1));
    g_assert_true(dr_nccl_list_selects("mlx5_0:1", "mlx5_0", 1));
    g_assert_false(dr_nccl_list_selects("mlx5_0:2", "mlx5_0", 1));
    g_assert_true(dr_nccl_list_selects("mlx5", "mlx5_10", 1));
    g_assert_true(dr_nccl_list_selects("mlx5_1", "mlx5_10", 1));   /* a prefix, as NCCL */
    g_assert_false(dr_nccl_list_selects("=mlx5_1", "mlx5_10", 1));
    g_assert_false(dr_nccl_list_selects("^mlx5_0", "mlx5_0", 1));
    g_assert_true(dr_nccl_list_selects("^mlx5_0", "mlx5_1", 1));
    g_assert_true(dr_nccl_list_selects("mlx5_0:1,mlx5_1:1", "mlx5_1", 1));
}

static void set_gid(dr_gid_t *g, int idx, const char *text, int version)
{
    memset(g, 0, sizeof *g);
    g->index = idx;
    g->version = version;
    g->present = dr_gid_parse(text, g->raw);
    g_assert_true(g->present);
}

static void test_gid_rules(void)
{
    guint8 raw[16];
    g_assert_true(dr_gid_parse("fe80:0000:0000:0000:ba3f:d2ff:fe12:3456", raw));
    g_assert_true(dr_gid_link_local(raw));
    g_assert_false(dr_gid_valid(raw));
    g_assert_false(dr_gid_is_ipv4(raw));
    g_assert_true(dr_gid_parse("0000:0000:0000:0000:0000:ffff:0a01:0005", raw));
    g_assert_true(dr_gid_is_ipv4(raw));
    g_assert_true(dr_gid_valid(raw));
    g_assert_true(dr_gid_parse("0000:0000:0000:0000:0000:0000:0000:0000", raw));
    g_assert_true(dr_gid_zero(raw));
    g_assert_false(dr_gid_valid(raw));
    g_assert_true(dr_gid_parse("2001:0db8:0000:0000:0000:0000:0000:0005", raw));
    g_assert_true(dr_gid_valid(raw));
    g_assert_false(dr_gid_is_ipv4(raw));
    g_assert_false(dr_gid_parse("zzzz::1", raw));
    g_assert_false(dr_gid_parse("", raw));

    /* The usual table: fe80 v1, fe80 v2, ::ffff:ip v1, ::ffff:ip v2 -> 3. */
    dr_gid_t t[8];
    set_gid(&t[0], 0, "fe80::ba3f:d2ff:fe12:3456", 1);
    set_gid(&t[1], 1, "fe80::ba3f:d2ff:fe12:3456", 2);
    set_gid(&t[2], 2, "::ffff:10.1.0.5", 1);
    set_gid(&t[3], 3, "::ffff:10.1.0.5", 2);
    g_assert_cmpint(dr_gid_autopick(t, 4, 4, NULL, 0, 2), ==, 3);
    /* v2 before v1 for the IPv4 address: the family switch takes 2, the v1
     * candidate then does not replace a valid v2. */
    set_gid(&t[2], 2, "::ffff:10.1.0.5", 2);
    set_gid(&t[3], 3, "::ffff:10.1.0.5", 1);
    g_assert_cmpint(dr_gid_autopick(t, 4, 4, NULL, 0, 2), ==, 2);
    /* A second IPv4 address: NCCL keeps the first v2 IPv4 GID (a candidate
     * of the same version does not replace a valid one). */
    set_gid(&t[2], 2, "::ffff:10.1.0.5", 1);
    set_gid(&t[3], 3, "::ffff:10.1.0.5", 2);
    set_gid(&t[4], 4, "::ffff:10.1.0.6", 1);
    set_gid(&t[5], 5, "::ffff:10.1.0.6", 2);
    g_assert_cmpint(dr_gid_autopick(t, 6, 4, NULL, 0, 2), ==, 3);
    /* NCCL_IB_ROCE_VERSION_NUM=1 on the usual table: 2 (v1 IPv4). */
    set_gid(&t[2], 2, "::ffff:10.1.0.5", 1);
    set_gid(&t[3], 3, "::ffff:10.1.0.5", 2);
    g_assert_cmpint(dr_gid_autopick(t, 4, 4, NULL, 0, 1), ==, 2);
    /* Only link-local entries: stays at 0. */
    g_assert_cmpint(dr_gid_autopick(t, 2, 4, NULL, 0, 2), ==, 0);
    /* IPv6 global and IPv4 addresses: AF_INET picks the IPv4 v2 (5),
     * AF_INET6 the IPv6 v2 (3). */
    set_gid(&t[2], 2, "2001:db8::5", 1);
    set_gid(&t[3], 3, "2001:db8::5", 2);
    set_gid(&t[4], 4, "::ffff:10.1.0.5", 1);
    set_gid(&t[5], 5, "::ffff:10.1.0.5", 2);
    g_assert_cmpint(dr_gid_autopick(t, 6, 4, NULL, 0, 2), ==, 5);
    g_assert_cmpint(dr_gid_autopick(t, 6, 6, NULL, 0, 2), ==, 3);
    /* NCCL_IB_ADDR_RANGE */
    guint8 prefix[16];
    int plen;
    g_assert_true(dr_parse_addr_range("10.1.0.0/16", 4, prefix, &plen));
    g_assert_cmpint(plen, ==, 16);
    g_assert_cmpint(dr_gid_autopick(t, 6, 4, prefix, plen, 2), ==, 5);
    g_assert_true(dr_parse_addr_range("10.2.0.0/16", 4, prefix, &plen));
    g_assert_cmpint(dr_gid_autopick(t, 6, 4, prefix, plen, 2), ==, 0);
    g_assert_false(dr_parse_addr_range("10.2.0.0", 4, prefix, &plen));     /* no mask: ignored */
    g_assert_false(dr_parse_addr_range("10.2.0.0/33", 4, prefix, &plen));  /* mask too long */
    g_assert_false(dr_parse_addr_range("nonsense/8", 4, prefix, &plen));
    /* InfiniBand: GID 1 only when it carries a FLID (bytes 4-5). */
    set_gid(&t[0], 0, "fe80::a088:c203:12:3456", 1);
    set_gid(&t[1], 1, "::", -1);
    g_assert_cmpint(dr_gid_ib_pick(t, 2), ==, 0);
    set_gid(&t[1], 1, "fe80:0:0012::a088:c203:12:3456", -1);
    g_assert_cmpint(dr_gid_ib_pick(t, 2), ==, 1);
    g_assert_cmpint(dr_gid_ib_pick(t, 1), ==, 0);
}

static dr_pci_t *fake_pci(dr_machine_t *m, const char *bdf, unsigned vendor, unsigned device,
                          unsigned subvendor, unsigned subdevice)
{
    dr_pci_t *p = g_new0(dr_pci_t, 1);
    p->bdf = g_strdup(bdf);
    p->vendor = vendor;
    p->device = device;
    p->subvendor = subvendor;
    p->subdevice = subdevice;
    p->numa = -1;
    g_ptr_array_add(m->pcis, p);
    return p;
}

static char *chain_str(GPtrArray *c)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < c->len; i++)
        g_string_append_printf(s, "%s%s", i ? " " : "", (const char *)c->pdata[i]);
    return g_string_free(s, FALSE);
}

static void test_pci_chain(void)
{
    dr_machine_t m;
    dr_machine_init(&m, "/nonexistent");
    /* DGX H100 dump shape (reference §3): the GPU hangs under 16:00.0, the
     * switch's upstream port; the root port 15:01.0 and the downstream port
     * 17:00.0 are skipped by the two-step walk. */
    GPtrArray *c = dr_nccl_pci_chain(&m, "/sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:00.0/0000:18:00.0");
    g_autofree char *s1 = chain_str(c);
    g_assert_cmpstr(s1, ==, "0000:16:00.0");
    g_ptr_array_unref(c);
    c = dr_nccl_pci_chain(&m, "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0");
    g_assert_cmpuint(c->len, ==, 0);
    g_ptr_array_unref(c);
    c = dr_nccl_pci_chain(&m, "/sys/devices/pci0000:00/0000:00:1f.6");
    g_assert_cmpuint(c->len, ==, 0);
    g_ptr_array_unref(c);
    const char *deep = "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0/"
                       "0000:04:00.0/0000:05:00.0";
    c = dr_nccl_pci_chain(&m, deep);
    g_autofree char *s2 = chain_str(c);
    g_assert_cmpstr(s2, ==, "0000:01:00.0 0000:03:00.0");
    g_ptr_array_unref(c);
    /* Broadcom PEX Gen5 (1000:c030): the second level (subsystem 1000:1xxx)
     * folds into the first (1000:0xxx); Gen4 (1000:c010, 1000:axxx) too. */
    fake_pci(&m, "0000:01:00.0", 0x1000, 0xc030, 0x1000, 0x000b);
    fake_pci(&m, "0000:03:00.0", 0x1000, 0xc030, 0x1000, 0x100b);
    c = dr_nccl_pci_chain(&m, deep);
    g_autofree char *s3 = chain_str(c);
    g_assert_cmpstr(s3, ==, "0000:01:00.0");
    g_ptr_array_unref(c);
    ((dr_pci_t *)m.pcis->pdata[1])->subdevice = 0x000b;   /* both first level: kept */
    c = dr_nccl_pci_chain(&m, deep);
    g_assert_cmpuint(c->len, ==, 2);
    g_ptr_array_unref(c);
    ((dr_pci_t *)m.pcis->pdata[0])->device = 0xc010;
    ((dr_pci_t *)m.pcis->pdata[0])->subdevice = 0xa064;
    ((dr_pci_t *)m.pcis->pdata[1])->device = 0xc010;
    ((dr_pci_t *)m.pcis->pdata[1])->subdevice = 0xa064;
    c = dr_nccl_pci_chain(&m, deep);
    g_assert_cmpuint(c->len, ==, 1);
    g_ptr_array_unref(c);
    c = dr_nccl_pci_chain(&m, NULL);
    g_assert_cmpuint(c->len, ==, 0);
    g_ptr_array_unref(c);
    dr_machine_clear(&m);
}

static void test_path_type(void)
{
    dr_machine_t m;
    dr_machine_init(&m, "/nonexistent");
    dr_pci_t a = { 0 }, b = { 0 };
    a.chain = g_ptr_array_new();
    b.chain = g_ptr_array_new();
    g_assert_cmpint(dr_pci_path_type(&a, &b), ==, CS_PATH_PHB);   /* both under the CPU */
    g_ptr_array_add(a.chain, "0000:16:00.0");
    g_ptr_array_add(b.chain, "0000:16:00.0");
    g_assert_cmpint(dr_pci_path_type(&a, &b), ==, CS_PATH_PIX);   /* one shared switch */
    g_ptr_array_add(a.chain, "0000:18:00.0");
    g_assert_cmpint(dr_pci_path_type(&a, &b), ==, CS_PATH_PXB);   /* two switches */
    g_ptr_array_add(b.chain, "0000:28:00.0");
    g_assert_cmpint(dr_pci_path_type(&a, &b), ==, CS_PATH_PXB);
    a.chain->pdata[0] = (gpointer) "0000:36:00.0";
    g_assert_cmpint(dr_pci_path_type(&a, &b), ==, CS_PATH_PHB);   /* no common switch */
    b.cpu = 1;
    g_assert_cmpint(dr_pci_path_type(&a, &b), ==, CS_PATH_SYS);   /* another CPU */
    g_assert_cmpstr(dr_path_name(CS_PATH_PXB), ==, "PXB");
    g_ptr_array_unref(a.chain);
    g_ptr_array_unref(b.chain);
    dr_machine_clear(&m);
}

static void test_natural_sort(void)
{
    g_assert_cmpint(dr_natural_cmp("mlx5_2", "mlx5_10"), <, 0);
    g_assert_cmpint(dr_natural_cmp("mlx5_10", "mlx5_2"), >, 0);
    g_assert_cmpint(dr_natural_cmp("eth0", "eth0"), ==, 0);
    g_assert_cmpint(dr_natural_cmp("ib", "ib0"), <, 0);
    g_autofree char *norm = dr_normalize("/sys/class/net/eth0/../../../devices/x/./y");
    g_assert_cmpstr(norm, ==, "/sys/devices/x/y");
    g_autofree char *top = dr_normalize("/../..");
    g_assert_cmpstr(top, ==, "/");
    long v;
    g_assert_true(dr_parse_long("4: ACTIVE", &v));
    g_assert_cmpint(v, ==, 4);
    g_assert_true(dr_parse_long("0x030200", &v));
    g_assert_cmpint(v, ==, 0x030200);
    g_assert_true(dr_parse_long("-1", &v));
    g_assert_cmpint(v, ==, -1);
    g_assert_false(dr_parse_long("banana", &v));
    g_assert_false(dr_parse_long("12ab", &v));
    g_assert_false(dr_parse_long("99999999999999999999", &v));
    g_assert_true(dr_is_bdf("0000:18:00.0"));
    g_assert_false(dr_is_bdf("pci0000:18"));
    g_assert_false(dr_is_bdf("0000:18:00.0x"));
}

/* ---- the captured trees ----------------------------------------------------------- */

static void test_tree_dgx(void)
{
    g_autoptr(cs_doctor_t) d = run_tree("dgx-h100", NULL, NULL);
    g_assert_cmpint(cs_doctor_net(d), ==, CS_DOCTOR_NET_IB);
    g_assert_cmpint(cs_doctor_net_ndevs(d), ==, 8);
    for (int i = 0; i < 8; i++) {
        g_autofree char *want = g_strdup_printf("mlx5_%d:1", i);
        g_assert_cmpstr(cs_doctor_net_dev(d, i), ==, want);
        g_assert_cmpint(cs_doctor_net_speed_mbps(d, i), ==, 400000);   /* 4X NDR */
        g_assert_cmpint(cs_doctor_net_gid_index(d, i), ==, -1);       /* InfiniBand */
    }
    g_assert_cmpint(cs_doctor_count(d, CS_DOCTOR_ERROR), ==, 0);
    g_assert_cmpint(cs_doctor_count(d, CS_DOCTOR_WARNING), ==, 0);
    g_autofree char *text = cs_doctor_report_text(d);
    g_assert_nonnull(strstr(text, "bootstrap: ib0 (auto: interfaces named ib*)"));
    g_assert_nonnull(strstr(text, "gpu0 0000:18:00.0 -> mlx5_0:1 (PIX)"));
    g_assert_nonnull(strstr(text, "peer memory module (/sys/module/nvidia_peermem/version present)"));

    /* NCCL_IB_GID_INDEX does not apply to InfiniBand */
    const char *const env[] = { "NCCL_IB_GID_INDEX=3", NULL };
    g_autoptr(cs_doctor_t) d2 = run_tree("dgx-h100", env, NULL);
    assert_finding(d2, "gid-index-ignored-on-ib", CS_DOCTOR_INFO);
    g_assert_cmpint(cs_doctor_count(d2, CS_DOCTOR_ERROR), ==, 0);

    /* NCCL_IB_HCA=mlx5_1 selects mlx5_1 and mlx5_10.. (prefix); here one port */
    const char *const env3[] = { "NCCL_IB_HCA=mlx5_1:1", NULL };
    g_autoptr(cs_doctor_t) d3 = run_tree("dgx-h100", env3, NULL);
    g_assert_cmpint(cs_doctor_net_ndevs(d3), ==, 1);
    g_assert_cmpstr(cs_doctor_net_dev(d3, 0), ==, "mlx5_1:1");
}

static void test_tree_roce_gid(void)
{
    g_autoptr(cs_doctor_t) d = run_tree("roce-gid", NULL, NULL);
    g_assert_cmpint(cs_doctor_net(d), ==, CS_DOCTOR_NET_IB);
    g_assert_cmpint(cs_doctor_net_ndevs(d), ==, 1);
    g_assert_cmpint(cs_doctor_net_speed_mbps(d, 0), ==, 100000);   /* 4X EDR */
    g_assert_cmpint(cs_doctor_net_gid_index(d, 0), ==, 3);         /* RoCE v2 IPv4 */
    g_assert_cmpint(cs_doctor_n_findings(d), ==, 0);
    /* getifaddrs order: by ifindex, so eno1 (2) before ens1f0np0 (4) */
    g_autofree char *text = cs_doctor_report_text(d);
    g_assert_nonnull(strstr(text, "bootstrap: eno1 (auto: interfaces not named docker*, lo*, virbr*)"));

    static const struct { const char *env; const char *code; cs_doctor_severity_t sev; int gid; } cases[] = {
        { "NCCL_IB_GID_INDEX=0", "gid-index-roce-v1", CS_DOCTOR_ERROR, 0 },
        { "NCCL_IB_GID_INDEX=1", "gid-index-link-local", CS_DOCTOR_ERROR, 1 },
        { "NCCL_IB_GID_INDEX=2", "gid-index-roce-v1", CS_DOCTOR_ERROR, 2 },
        { "NCCL_IB_GID_INDEX=3", "gid-index-redundant", CS_DOCTOR_INFO, 3 },
        { "NCCL_IB_GID_INDEX=5", "gid-index-empty", CS_DOCTOR_ERROR, 5 },
        { "NCCL_IB_GID_INDEX=8", "gid-index-out-of-range", CS_DOCTOR_ERROR, 8 },
        { "NCCL_IB_GID_INDEX=0x3", "gid-index-redundant", CS_DOCTOR_INFO, 3 },   /* strtoll base 0 */
        { "NCCL_IB_ADDR_RANGE=10.2.0.0/16", "gid-auto-unroutable", CS_DOCTOR_ERROR, 0 },
        { "NCCL_IB_ADDR_FAMILY=AF_INET6", "gid-auto-unroutable", CS_DOCTOR_ERROR, 0 },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        const char *const env[] = { cases[i].env, NULL };
        g_autoptr(cs_doctor_t) e = run_tree("roce-gid", env, NULL);
        assert_finding(e, cases[i].code, cases[i].sev);
        g_assert_cmpint(cs_doctor_net_gid_index(e, 0), ==, cases[i].gid);
    }
    const char *const ok[] = { "NCCL_IB_ADDR_RANGE=10.1.0.0/16", NULL };
    g_autoptr(cs_doctor_t) f = run_tree("roce-gid", ok, NULL);
    g_assert_cmpint(cs_doctor_net_gid_index(f, 0), ==, 3);
    g_assert_cmpint(cs_doctor_count(f, CS_DOCTOR_ERROR), ==, 0);
}

static void test_tree_lab(void)
{
    g_autoptr(cs_doctor_t) d = run_tree("lab-1gbe", NULL, NULL);
    g_assert_cmpint(cs_doctor_net(d), ==, CS_DOCTOR_NET_SOCKET);
    g_assert_cmpint(cs_doctor_net_ndevs(d), ==, 1);
    g_assert_cmpstr(cs_doctor_net_dev(d, 0), ==, "eth0");
    g_assert_cmpint(cs_doctor_net_speed_mbps(d, 0), ==, 1000);
    assert_finding(d, "socket-slow", CS_DOCTOR_WARNING);
    g_assert_cmpint(cs_doctor_count(d, CS_DOCTOR_ERROR), ==, 0);

    const char *const eth[] = { "NCCL_SOCKET_IFNAME=eth", NULL };
    g_autoptr(cs_doctor_t) d1 = run_tree("lab-1gbe", eth, NULL);
    g_assert_cmpstr(cs_doctor_net_dev(d1, 0), ==, "eth0");
    assert_finding(d1, "socket-slow", CS_DOCTOR_WARNING);

    const char *const missing[] = { "NCCL_SOCKET_IFNAME=eth1", NULL };
    g_autoptr(cs_doctor_t) d2 = run_tree("lab-1gbe", missing, NULL);
    assert_finding(d2, "socket-ifname-missing", CS_DOCTOR_ERROR);
    g_assert_cmpint(cs_doctor_net(d2), ==, CS_DOCTOR_NET_NONE);

    const char *const exact[] = { "NCCL_SOCKET_IFNAME==eth", NULL };
    g_autoptr(cs_doctor_t) d3 = run_tree("lab-1gbe", exact, NULL);
    assert_finding(d3, "socket-ifname-missing", CS_DOCTOR_ERROR);

    const char *const lo[] = { "NCCL_SOCKET_IFNAME=lo", NULL };
    g_autoptr(cs_doctor_t) d4 = run_tree("lab-1gbe", lo, NULL);
    assert_finding(d4, "socket-loopback", CS_DOCTOR_WARNING);
    g_assert_cmpint(cs_doctor_net_speed_mbps(d4, 0), ==, 10000);   /* unreadable speed -> NCCL's 10 Gb/s */

    const char *const excl[] = { "NCCL_SOCKET_IFNAME=^eth", NULL };
    g_autoptr(cs_doctor_t) d5 = run_tree("lab-1gbe", excl, NULL);
    g_assert_cmpstr(cs_doctor_net_dev(d5, 0), ==, "lo");

    const char *const one[] = { "NCCL_SOCKET_IFNAME=x", NULL };
    g_autoptr(cs_doctor_t) d6 = run_tree("lab-1gbe", one, NULL);
    assert_finding(d6, "socket-ifname-ignored", CS_DOCTOR_WARNING);
    g_assert_cmpstr(cs_doctor_net_dev(d6, 0), ==, "eth0");

    const char *const hca[] = { "NCCL_IB_HCA=mlx5_0", NULL };
    g_autoptr(cs_doctor_t) d9 = run_tree("lab-1gbe", hca, NULL);
    assert_finding(d9, "ib-hca-no-rdma", CS_DOCTOR_WARNING);
    g_assert_cmpint(cs_doctor_count(d9, CS_DOCTOR_ERROR), ==, 0);

    const char *const ib[] = { "NCCL_NET=IB", NULL };
    g_autoptr(cs_doctor_t) d7 = run_tree("lab-1gbe", ib, NULL);
    assert_finding(d7, "net-unavailable", CS_DOCTOR_ERROR);

    const char *const v6[] = { "NCCL_SOCKET_FAMILY=AF_INET6", NULL };
    g_autoptr(cs_doctor_t) d8 = run_tree("lab-1gbe", v6, NULL);
    g_assert_cmpstr(cs_doctor_net_dev(d8, 0), ==, "eth0");   /* eth0 has fe80::, lo's ::1 is skipped */
}

static void test_tree_docker(void)
{
    g_autoptr(cs_doctor_t) d = run_tree("docker-roce", NULL, NULL);
    g_assert_cmpint(cs_doctor_net(d), ==, CS_DOCTOR_NET_IB);
    g_assert_cmpint(cs_doctor_net_speed_mbps(d, 0), ==, 25000);   /* 1X EDR */
    assert_finding(d, "roce-mtu-small", CS_DOCTOR_WARNING);
    assert_finding(d, "gdr-unavailable", CS_DOCTOR_WARNING);
    assert_finding(d, "gpu-unknown-model", CS_DOCTOR_WARNING);

    const char *const off[] = { "NCCL_IB_DISABLE=1", NULL };
    g_autoptr(cs_doctor_t) d1 = run_tree("docker-roce", off, NULL);
    assert_finding(d1, "ib-disabled-with-rdma", CS_DOCTOR_WARNING);
    g_assert_cmpint(cs_doctor_net(d1), ==, CS_DOCTOR_NET_SOCKET);
    g_assert_cmpstr(cs_doctor_net_dev(d1, 0), ==, "enp94s0f0np0");   /* eno1 is down, docker0 excluded */
    assert_finding(d1, "roce-mtu-small", CS_DOCTOR_INFO);           /* no longer on the data path */

    const char *const dk[] = { "NCCL_IB_DISABLE=1", "NCCL_SOCKET_IFNAME=docker", "NCCL_IB_ENABLE=1", NULL };
    g_autoptr(cs_doctor_t) d2 = run_tree("docker-roce", dk, "l40s");
    assert_finding(d2, "socket-virtual-bridge", CS_DOCTOR_WARNING);
    assert_finding(d2, "unknown-variable", CS_DOCTOR_WARNING);
    assert_finding(d2, "gpu-model-assumed", CS_DOCTOR_INFO);
    g_assert_null(cs_doctor_find(d2, "gpu-unknown-model"));

    const char *const typo[] = { "NCCL_SOCKT_IFNAME=eth0", NULL };
    g_autoptr(cs_doctor_t) d4 = run_tree("docker-roce", typo, NULL);
    const cs_doctor_finding_t *f = cs_doctor_find(d4, "unknown-variable");
    g_assert_nonnull(f);
    g_assert_cmpstr(f->fix, ==, "did you mean NCCL_SOCKET_IFNAME?");

    const char *const yes[] = { "NCCL_IB_DISABLE=yes", NULL };   /* strtoll reads 0: IB stays on */
    g_autoptr(cs_doctor_t) d3 = run_tree("docker-roce", yes, NULL);
    assert_finding(d3, "value-not-a-number", CS_DOCTOR_WARNING);
    g_assert_null(cs_doctor_find(d3, "value-refused"));   /* said once, as NCCL reads it */
    g_assert_cmpint(cs_doctor_net(d3), ==, CS_DOCTOR_NET_IB);

    /* a value collsim run refuses (an algorithm or path level misspelt)
     * is said with run's message */
    const char *const algo[] = { "NCCL_ALGO=Rnig", NULL };
    g_autoptr(cs_doctor_t) d5 = run_tree("docker-roce", algo, NULL);
    const cs_doctor_finding_t *r = cs_doctor_find(d5, "value-refused");
    g_assert_nonnull(r);
    g_assert_cmpint(r->severity, ==, CS_DOCTOR_WARNING);
    g_assert_nonnull(strstr(r->what, "NCCL_ALGO=Rnig: unknown algorithm 'Rnig'"));
    const char *const lvl[] = { "NCCL_P2P_LEVEL=NVLINK", NULL };
    g_autoptr(cs_doctor_t) d6 = run_tree("docker-roce", lvl, NULL);
    g_assert_nonnull(cs_doctor_find(d6, "value-refused"));
    /* an integer out of range, and every refused variable, not the first */
    const char *const two[] = { "NCCL_IB_TIMEOUT=99", "NCCL_CROSS_NIC=7", NULL };
    g_autoptr(cs_doctor_t) d7 = run_tree("docker-roce", two, NULL);
    int refused = 0;
    for (int i = 0; i < cs_doctor_n_findings(d7); i++) {
        const cs_doctor_finding_t *x = cs_doctor_finding(d7, i);
        if (strcmp(x->code, "value-refused") == 0)
            refused++;
    }
    g_assert_cmpint(refused, ==, 2);
}

static void test_tree_no_peermem(void)
{
    g_autoptr(cs_doctor_t) d = run_tree("no-peermem", NULL, NULL);
    g_assert_cmpint(cs_doctor_net(d), ==, CS_DOCTOR_NET_IB);
    g_assert_cmpint(cs_doctor_net_ndevs(d), ==, 2);   /* mlx5_2 is INIT */
    g_assert_cmpint(cs_doctor_net_speed_mbps(d, 0), ==, 200000);
    assert_finding(d, "gdr-unavailable", CS_DOCTOR_WARNING);
    assert_finding(d, "rdma-port-not-active", CS_DOCTOR_WARNING);
    assert_finding(d, "pcie-link-degraded", CS_DOCTOR_WARNING);

    const char *const inactive[] = { "NCCL_IB_HCA=mlx5_2", NULL };
    g_autoptr(cs_doctor_t) d1 = run_tree("no-peermem", inactive, NULL);
    assert_finding(d1, "ib-hca-inactive", CS_DOCTOR_ERROR);
    g_assert_cmpint(cs_doctor_net(d1), ==, CS_DOCTOR_NET_SOCKET);   /* NCCL's fallback */

    const char *const typo[] = { "NCCL_IB_HCA=mlx4_0", NULL };
    g_autoptr(cs_doctor_t) d2 = run_tree("no-peermem", typo, NULL);
    assert_finding(d2, "ib-hca-no-match", CS_DOCTOR_ERROR);

    const char *const excl[] = { "NCCL_IB_HCA=^mlx5_0", NULL };
    g_autoptr(cs_doctor_t) d3 = run_tree("no-peermem", excl, NULL);
    g_assert_cmpint(cs_doctor_net_ndevs(d3), ==, 1);
    g_assert_cmpstr(cs_doctor_net_dev(d3, 0), ==, "mlx5_1:1");
    g_assert_cmpint(cs_doctor_count(d3, CS_DOCTOR_ERROR), ==, 0);
}

static void test_tree_garbage(void)
{
    /* Nothing in it parses; the doctor must still report, and the same way
     * every time. */
    g_autoptr(cs_doctor_t) d = run_tree("garbage", NULL, NULL);
    g_autoptr(cs_doctor_t) e = run_tree("garbage", NULL, NULL);
    g_autofree char *a = cs_doctor_report_text(d);
    g_autofree char *b = cs_doctor_report_text(e);
    g_assert_cmpstr(a, ==, b);
    g_autofree char *md = cs_doctor_report_markdown(d);
    g_assert_nonnull(strstr(md, "### Findings"));
    assert_finding(d, "no-socket-interface", CS_DOCTOR_ERROR);
    g_autoptr(GError) err = NULL;
    g_assert_null(cs_doctor_topology(d, &err));
    g_assert_error(err, CS_ERROR, CS_ERROR_TOPOLOGY);
}

/* ---- trees built here --------------------------------------------------------- */

static void test_odd_tree(void)
{
    g_autoptr(GError) err = NULL;
    g_autofree char *root = g_dir_make_tmp("doctor-XXXXXX", &err);
    g_assert_no_error(err);

    /* no sys/: the one input error */
    g_autoptr(cs_doctor_t) d0 = cs_doctor_new(root);
    g_assert_false(cs_doctor_scan(d0, &err));
    g_assert_nonnull(strstr(err->message, "no sys/ directory"));
    g_clear_error(&err);

    /* A FIFO where an attribute should be (must not hang), a symlink loop,
     * an unreadable directory entry, a huge GID index. */
    put(root, "sys/class/net/eth0/operstate", "up\n");
    put(root, "sys/class/net/eth0/flags", "0x1003\n");
    g_autofree char *fifo = g_build_filename(root, "sys/class/net/eth0/speed", NULL);
    g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);
    g_autofree char *loop = g_build_filename(root, "sys/class/net/eth0/device", NULL);
    g_assert_cmpint(symlink("device", loop), ==, 0);
    put(root, "sys/class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n");
    put(root, "sys/class/infiniband/mlx5_0/ports/1/link_layer", "Ethernet\n");
    put(root, "sys/class/infiniband/mlx5_0/ports/1/gids/4095", "0000:0000:0000:0000:0000:ffff:0a00:0001\n");
    put(root, "sys/class/infiniband/mlx5_0/ports/1/gid_attrs/types/4095", "RoCE v2\n");
    g_autofree char *dirgid = g_build_filename(root, "sys/class/infiniband/mlx5_0/ports/1/gids/7", NULL);
    g_assert_cmpint(g_mkdir_with_parents(dirgid, 0755), ==, 0);
    g_autoptr(cs_doctor_t) d = cs_doctor_new(root);
    g_assert_true(cs_doctor_scan(d, &err));
    cs_doctor_check(d, NULL, NULL);
    g_autofree char *text = cs_doctor_report_text(d);
    g_assert_nonnull(strstr(text, "eth0"));
    /* the GID table is 4096 long; auto-pick finds the v2 IPv4 entry at its end */
    g_assert_cmpint(cs_doctor_net(d), ==, CS_DOCTOR_NET_IB);
    g_assert_cmpint(cs_doctor_net_gid_index(d, 0), ==, 4095);
    assert_finding(d, "addresses-unknown", CS_DOCTOR_INFO);
    rm_rf(root);
}

/* GPU on socket 1, NIC on socket 0, peer memory loaded: GDR is off by
 * distance (SYS > PXB) unless NCCL_NET_GDR_LEVEL allows SYS. */
static void test_gdr_distance(void)
{
    g_autoptr(GError) err = NULL;
    g_autofree char *root = g_dir_make_tmp("doctor-XXXXXX", &err);
    g_assert_no_error(err);
    put_pci(root, "/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0", "0x030200", "0x10de", "0x2330", "1");
    put_ib_nic(root);
    put(root, "sys/class/net/ib0/operstate", "up");
    put(root, "sys/class/net/ib0/flags", "0x1003");
    put(root, "sys/class/net/ib0/ifindex", "3");
    put(root, "sys/class/net/ib0/device", "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0");
    put(root, "sys/module/nvidia_peermem/version", "535.129.03");
    put(root, "sys/module/nvidia/version", "535.129.03");

    g_autoptr(cs_doctor_t) d = cs_doctor_new(root);
    g_assert_true(cs_doctor_scan(d, &err));
    cs_doctor_check(d, NULL, NULL);
    assert_finding(d, "gdr-distance", CS_DOCTOR_WARNING);
    g_autofree char *text = cs_doctor_report_text(d);
    g_assert_nonnull(strstr(text, "gpu0 0000:81:00.0 -> mlx5_0:1 (SYS)"));

    g_autoptr(cs_nccl_env_t) env = cs_nccl_env_new();
    cs_nccl_env_set(env, "NCCL_NET_GDR_LEVEL", "SYS", "test");
    g_autoptr(cs_doctor_t) d1 = cs_doctor_new(root);
    g_assert_true(cs_doctor_scan(d1, &err));
    cs_doctor_check(d1, env, NULL);
    g_assert_null(cs_doctor_find(d1, "gdr-distance"));

    cs_nccl_env_set(env, "NCCL_NET_GDR_LEVEL", "3", "test");   /* old numbering: 3 = PHB */
    g_autoptr(cs_doctor_t) d2 = cs_doctor_new(root);
    g_assert_true(cs_doctor_scan(d2, &err));
    cs_doctor_check(d2, env, NULL);
    assert_finding(d2, "gdr-distance", CS_DOCTOR_WARNING);
    rm_rf(root);
}

/* An NCCL_IB_HCA written for another host: the entries this one lacks are
 * named where others match; a list that matches in full, or excludes, is
 * not a finding. */
static void test_ib_hca_partial(void)
{
    const char *part[] = { "NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_12", NULL };
    g_autoptr(cs_doctor_t) d = run_tree("dgx-h100", part, NULL);
    assert_finding(d, "ib-hca-partial", CS_DOCTOR_WARNING);
    g_assert_nonnull(strstr(cs_doctor_find(d, "ib-hca-partial")->what, "names mlx5_12, which matches no RDMA"));
    const char *full[] = { "NCCL_IB_HCA=mlx5_0,mlx5_1", NULL };
    g_autoptr(cs_doctor_t) d1 = run_tree("dgx-h100", full, NULL);
    g_assert_null(cs_doctor_find(d1, "ib-hca-partial"));
    const char *super[] = { "NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7,mlx5_12", NULL };
    g_autoptr(cs_doctor_t) d3 = run_tree("dgx-h100", super, NULL);   /* a superset loses no port */
    g_assert_null(cs_doctor_find(d3, "ib-hca-partial"));
    const char *excl[] = { "NCCL_IB_HCA=^mlx5_12", NULL };
    g_autoptr(cs_doctor_t) d2 = run_tree("dgx-h100", excl, NULL);
    g_assert_null(cs_doctor_find(d2, "ib-hca-partial"));
}

/* The process's CPU set (a launcher's binding): a warning where it has
 * fewer CPUs than the GPUs and the machine has RDMA ports, a note where it
 * has more (or no RDMA port: no network proxy work), nothing when it is
 * every online CPU, and a note where NCCL_IGNORE_CPU_AFFINITY=1. */
static void test_cpu_binding(void)
{
    g_autoptr(GError) err = NULL;
    g_autofree char *root = g_dir_make_tmp("doctor-XXXXXX", &err);
    g_assert_no_error(err);
    put_pci(root, "/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0", "0x030200", "0x10de", "0x2330", "1");
    put_pci(root, "/sys/devices/pci0000:80/0000:80:02.0/0000:82:00.0", "0x030200", "0x10de", "0x2330", "1");
    put(root, "sys/devices/system/cpu/online", "0-223\n");
    for (int rdma = 0; rdma < 2; rdma++) {
        if (rdma) {
            put_ib_nic(root);
        }
        const char *sets[] = { "0", "0,112", "0-55", "0-223" };
        for (int i = 0; i < 4; i++) {
            g_autofree char *st = g_strdup_printf("Name:\tcollsim\nCpus_allowed:\tff\nCpus_allowed_list:\t%s\n"
                                                  "Mems_allowed:\t3\n", sets[i]);
            put(root, "proc/self/status", st);
            g_autoptr(cs_doctor_t) d = cs_doctor_new(root);
            g_assert_true(cs_doctor_scan(d, &err));
            cs_doctor_check(d, NULL, NULL);
            gboolean warn = rdma && i == 0;   /* 1 CPU for 2 GPUs; 2 for 2 is enough */
            g_assert_true((cs_doctor_find(d, "cpu-binding") != NULL) == warn);
            g_assert_true((cs_doctor_find(d, "cpu-binding-note") != NULL) == (!warn && i < 3));
            if (warn) {
                assert_finding(d, "cpu-binding", CS_DOCTOR_WARNING);
                g_assert_nonnull(strstr(cs_doctor_find(d, "cpu-binding")->what,
                                        "may run on 1 of the 224 online CPUs (0), fewer than the 2 GPUs here"));
            }
        }
    }
    put(root, "proc/self/status", "Cpus_allowed_list:\t0\n");
    g_autoptr(cs_nccl_env_t) env = cs_nccl_env_new();
    cs_nccl_env_set(env, "NCCL_IGNORE_CPU_AFFINITY", "1", "test");
    g_autoptr(cs_doctor_t) d = cs_doctor_new(root);
    g_assert_true(cs_doctor_scan(d, &err));
    cs_doctor_check(d, env, NULL);
    assert_finding(d, "cpu-binding-ignored", CS_DOCTOR_INFO);
    g_assert_null(cs_doctor_find(d, "cpu-binding"));
    rm_rf(root);
}

/* getifaddrs lists IPv4 addresses before IPv6 ones: an interface with only
 * IPv6 loses to a later one with IPv4, and wins when the family is forced. */
static void test_if_order(void)
{
    g_autoptr(GError) err = NULL;
    g_autofree char *root = g_dir_make_tmp("doctor-XXXXXX", &err);
    g_assert_no_error(err);
    static const char *const names[] = { "eth0", "eth1" };
    for (int i = 0; i < 2; i++) {
        g_autofree char *d = g_strdup_printf("sys/class/net/%s", names[i]);
        g_autofree char *a = g_strconcat(d, "/operstate", NULL);
        g_autofree char *b = g_strconcat(d, "/flags", NULL);
        g_autofree char *c = g_strconcat(d, "/ifindex", NULL);
        g_autofree char *e = g_strdup_printf("%d", i + 2);
        put(root, a, "up");
        put(root, b, "0x1003");
        put(root, c, e);
    }
    put(root, "proc/net/if_inet6", "fe800000000000000a0027fffe8c7b2a 02 40 20 80     eth0\n");
    put(root, "proc/net/route", "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
                                "eth1\t0000A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n");
    put(root, "proc/net/fib_trie", "Local:\n  +-- 0.0.0.0/0 3 0 5\n     |-- 192.168.0.7\n        /32 host LOCAL\n");
    g_autoptr(cs_doctor_t) d = cs_doctor_new(root);
    g_assert_true(cs_doctor_scan(d, &err));
    cs_doctor_check(d, NULL, NULL);
    g_assert_cmpint(cs_doctor_net(d), ==, CS_DOCTOR_NET_SOCKET);
    g_assert_cmpint(cs_doctor_net_ndevs(d), ==, 2);
    g_assert_cmpstr(cs_doctor_net_dev(d, 0), ==, "eth1");   /* 192.168.0.7, from fib_trie + route */
    g_assert_cmpstr(cs_doctor_net_dev(d, 1), ==, "eth0");
    g_autofree char *text = cs_doctor_report_text(d);
    g_assert_nonnull(strstr(text, "bootstrap: eth1"));
    g_assert_nonnull(strstr(text, "192.168.0.7"));

    g_autoptr(cs_nccl_env_t) env = cs_nccl_env_new();
    cs_nccl_env_set(env, "NCCL_SOCKET_FAMILY", "AF_INET6", "test");
    g_autoptr(cs_doctor_t) d6 = cs_doctor_new(root);
    g_assert_true(cs_doctor_scan(d6, &err));
    cs_doctor_check(d6, env, NULL);
    g_assert_cmpint(cs_doctor_net_ndevs(d6), ==, 1);
    g_assert_cmpstr(cs_doctor_net_dev(d6, 0), ==, "eth0");
    rm_rf(root);
}

/* ---- topology export ------------------------------------------------------------- */

static int count_kind(const cs_topo_t *t, cs_dev_kind_t k)
{
    int n = 0;
    for (int i = 0; i < t->ndevs; i++)
        n += t->devs[i].kind == k;
    return n;
}

static void test_topology(void)
{
    g_autoptr(cs_doctor_t) d = run_tree("dgx-h100", NULL, NULL);
    g_autoptr(GError) err = NULL;
    g_autoptr(cs_topo_t) t = cs_doctor_topology(d, &err);
    g_assert_no_error(err);
    g_assert_nonnull(t);
    g_assert_cmpint(t->ngpus, ==, 8);
    g_assert_cmpint(count_kind(t, CS_DEV_NIC), ==, 8);
    g_assert_cmpint(count_kind(t, CS_DEV_NVSWITCH), ==, 4);
    g_assert_cmpint(count_kind(t, CS_DEV_PCISW), ==, 8);   /* one NCCL switch node per GPU+NIC pair */
    g_assert_cmpint(count_kind(t, CS_DEV_CPU), ==, 2);
    int nvl = 0;
    for (int l = 0; l < t->nlinks; l++) {
        const cs_link_t *k = &t->links[l];
        if (k->kind == CS_LINK_NVL && t->devs[k->src].kind == CS_DEV_GPU && k->src == t->rank_dev[0])
            nvl += k->count;
        if (t->devs[k->dst].kind == CS_DEV_NIC) {
            g_assert_cmpfloat_with_epsilon(t->devs[k->dst].nic_bw, 400e9 / 8, 1);   /* 400 Gb/s */
            g_assert_cmpint(t->devs[k->dst].nic_kind, ==, CS_NIC_IB);
        }
    }
    g_assert_cmpint(nvl, ==, 18);   /* all of the H100's NVLinks, 5+4+4+5 */

    /* round trip through the XML writer and reader */
    g_autofree char *xml = cs_topo_xml_write(t);
    g_autoptr(cs_topo_t) back = cs_topo_xml_load_mem(xml, strlen(xml), "doctor.xml", &err);
    g_assert_no_error(err);
    g_assert_cmpint(back->ndevs, ==, t->ndevs);
    g_assert_cmpint(back->nlinks, ==, t->nlinks);

    /* an unknown GPU model: an error without --gpu-model, a topology with it */
    g_autoptr(cs_doctor_t) u = run_tree("docker-roce", NULL, NULL);
    g_assert_null(cs_doctor_topology(u, &err));
    g_assert_nonnull(strstr(err->message, "--gpu-model"));
    g_clear_error(&err);
    g_autoptr(cs_doctor_t) v = run_tree("docker-roce", NULL, "l40s");
    g_autoptr(cs_topo_t) tv = cs_doctor_topology(v, &err);
    g_assert_no_error(err);
    g_assert_cmpint(tv->ngpus, ==, 1);
    g_assert_cmpint(count_kind(tv, CS_DEV_NIC), ==, 1);
    g_assert_false(tv->devs[cs_topo_find(tv, "nic0")].gdr);   /* no peer memory, no DMA-BUF */

    /* Socket-only host: the NIC is the interface NET/Socket uses */
    g_autoptr(cs_doctor_t) w = run_tree("lab-1gbe", NULL, NULL);
    g_autoptr(cs_topo_t) tw = cs_doctor_topology(w, &err);
    g_assert_no_error(err);
    int nic = cs_topo_find(tw, "nic0");
    g_assert_cmpint(nic, >=, 0);
    g_assert_cmpint(tw->devs[nic].nic_kind, ==, CS_NIC_ETH);
    g_assert_cmpfloat_with_epsilon(tw->devs[nic].nic_bw, 1e9 / 8, 1);
}

static void test_deterministic(void)
{
    static const char *const trees[] = { "dgx-h100", "roce-gid", "lab-1gbe", "docker-roce",
                                         "no-peermem", "garbage" };
    for (gsize i = 0; i < G_N_ELEMENTS(trees); i++) {
        g_autoptr(cs_doctor_t) a = run_tree(trees[i], NULL, NULL);
        g_autoptr(cs_doctor_t) b = run_tree(trees[i], NULL, NULL);
        g_autofree char *ta = cs_doctor_report_markdown(a);
        g_autofree char *tb = cs_doctor_report_markdown(b);
        g_assert_cmpstr(ta, ==, tb);
        /* errors first, then warnings, then notes */
        for (int k = 1; k < cs_doctor_n_findings(a); k++)
            g_assert_cmpint(cs_doctor_finding(a, k - 1)->severity, >=, cs_doctor_finding(a, k)->severity);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/doctor/ib-speed", test_ib_speed);
    g_test_add_func("/doctor/list-match", test_list_match);
    g_test_add_func("/doctor/gid-rules", test_gid_rules);
    g_test_add_func("/doctor/pci-chain", test_pci_chain);
    g_test_add_func("/doctor/path-type", test_path_type);
    g_test_add_func("/doctor/parsing", test_natural_sort);
    g_test_add_func("/doctor/tree/dgx-h100", test_tree_dgx);
    g_test_add_func("/doctor/tree/roce-gid", test_tree_roce_gid);
    g_test_add_func("/doctor/tree/lab-1gbe", test_tree_lab);
    g_test_add_func("/doctor/tree/docker-roce", test_tree_docker);
    g_test_add_func("/doctor/tree/no-peermem", test_tree_no_peermem);
    g_test_add_func("/doctor/tree/garbage", test_tree_garbage);
    g_test_add_func("/doctor/odd-tree", test_odd_tree);
    g_test_add_func("/doctor/gdr-distance", test_gdr_distance);
    g_test_add_func("/doctor/if-order", test_if_order);
    g_test_add_func("/doctor/cpu-binding", test_cpu_binding);
    g_test_add_func("/doctor/ib-hca-partial", test_ib_hca_partial);
    g_test_add_func("/doctor/topology", test_topology);
    g_test_add_func("/doctor/deterministic", test_deterministic);
    return g_test_run();
}
