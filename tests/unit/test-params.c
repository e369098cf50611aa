/* Parameter table: defaults, names, lookup, and calibration files with
 * FILE:LINE errors. */
#include "config.h"

#include <string.h>
#include <glib/gstdio.h>

#include "models/cs_params.h"
#include "util/cs_error.h"

static char *tmpdir;

static char *write_file(const char *name, const char *text)
{
    char *path = g_build_filename(tmpdir, name, NULL);
    g_assert_true(g_file_set_contents(path, text, -1, NULL));
    return path;
}

static void test_defaults(void)
{
    cs_params_t p;
    cs_params_init_defaults(&p);
    g_assert_null(p.calibration_source);
    for (int i = 0; i < CS_P_COUNT; i++) {
        g_assert_cmpfloat(p.v[i], ==, cs_param_default(i));
        g_assert_false(p.calibrated[i]);
    }
    /* Values fixed by NCCL's source (device.h line formats). */
    g_assert_cmpfloat(cs_params_get(&p, CS_P_PROTO_EFF_LL), ==, 0.5);
    g_assert_cmpfloat(cs_params_get(&p, CS_P_PROTO_EFF_LL128), ==, 120.0 / 128.0);
    g_assert_cmpfloat(cs_params_get(&p, CS_P_PROTO_EFF_SIMPLE), ==, 1.0);
    cs_params_clear(&p);
}

static void test_names(void)
{
    g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
    for (int i = 0; i < CS_P_COUNT; i++) {
        const char *name = cs_param_name(i);
        const char *unit = cs_param_unit(i);
        g_assert_nonnull(name);
        g_assert_nonnull(strchr(name, '.'));            /* dotted: area.quantity */
        g_assert_false(g_hash_table_contains(seen, name));
        g_hash_table_add(seen, (gpointer)name);
        g_assert_true(strcmp(unit, "us") == 0 || strcmp(unit, "GB/s") == 0 ||
                      strcmp(unit, "fraction") == 0 || strcmp(unit, "stages") == 0);
        g_assert_cmpuint(strlen(cs_param_doc(i)), >, 10);
        double d = cs_param_default(i);
        if (strcmp(unit, "fraction") == 0)
            g_assert_true(d > 0 && d <= 1);
        else if (strcmp(unit, "GB/s") == 0)
            g_assert_cmpfloat(d, >, 0);
        else
            g_assert_cmpfloat(d, >=, 0);

        cs_param_id_t id = CS_P_COUNT;
        g_assert_true(cs_param_lookup(name, &id));
        g_assert_cmpint(id, ==, i);
    }
    cs_param_id_t id = CS_P_COUNT;
    g_assert_false(cs_param_lookup("eff.nvlink.typo", &id));
    g_assert_false(cs_param_lookup("", &id));
    g_assert_false(cs_param_lookup(NULL, &id));
    g_assert_cmpint(id, ==, CS_P_COUNT);                 /* untouched on failure */
    g_assert_true(cs_param_lookup("lat.launch", &id));
    g_assert_cmpint(id, ==, CS_P_LAT_LAUNCH);
}

static void test_load(void)
{
    g_autofree char *path = write_file("ok.ini",
        "\xEF\xBB\xBF# written by collsim calibrate (a BOM before it, as some editors save)\n"
        "# inputs: a.txt\n"
        "\n"
        "[params]\n"
        "lat.launch = 7.25\n"
        "  eff.nvlink=0.5  \n");
    cs_params_t p;
    cs_params_init_defaults(&p);
    g_autoptr(GError) err = NULL;
    g_assert_true(cs_params_load(&p, path, &err));
    g_assert_no_error(err);
    g_assert_cmpfloat(cs_params_get(&p, CS_P_LAT_LAUNCH), ==, 7.25);
    g_assert_cmpfloat(cs_params_get(&p, CS_P_EFF_NVLINK), ==, 0.5);
    g_assert_true(p.calibrated[CS_P_LAT_LAUNCH]);
    g_assert_true(p.calibrated[CS_P_EFF_NVLINK]);
    g_assert_false(p.calibrated[CS_P_EFF_PCIE]);
    g_assert_cmpfloat(cs_params_get(&p, CS_P_EFF_PCIE), ==, cs_param_default(CS_P_EFF_PCIE));
    g_assert_cmpstr(p.calibration_source, ==, path);

    /* A second file adds to the first. */
    g_autofree char *path2 = write_file("ok2.ini", "[params]\neff.pcie = 0.5\n");
    g_assert_true(cs_params_load(&p, path2, &err));
    g_assert_cmpfloat(cs_params_get(&p, CS_P_LAT_LAUNCH), ==, 7.25);
    g_assert_cmpfloat(cs_params_get(&p, CS_P_EFF_PCIE), ==, 0.5);
    g_assert_cmpstr(p.calibration_source, ==, path2);
    cs_params_clear(&p);
    g_assert_null(p.calibration_source);
}

/* Loads 'text' and checks the error is "PATH:LINE: ..." containing 'what'
 * and that the parameters did not change. */
static void expect_error(const char *text, int line, const char *what)
{
    g_autofree char *path = write_file("bad.ini", text);
    cs_params_t p;
    cs_params_init_defaults(&p);
    g_autoptr(GError) err = NULL;
    g_assert_false(cs_params_load(&p, path, &err));
    g_assert_nonnull(err);
    g_autofree char *prefix = line > 0 ? g_strdup_printf("%s:%d: ", path, line) : g_strdup_printf("%s: ", path);
    if (!g_str_has_prefix(err->message, prefix) || strstr(err->message, what) == NULL)
        g_error("message '%s' lacks '%s' or '%s'", err->message, prefix, what);
    g_assert_null(strchr(err->message, '\n'));           /* one line */
    for (int i = 0; i < CS_P_COUNT; i++) {
        g_assert_cmpfloat(p.v[i], ==, cs_param_default(i));
        g_assert_false(p.calibrated[i]);
    }
    g_assert_null(p.calibration_source);
}

static void test_load_errors(void)
{
    expect_error("[params]\nlat.launch = 3\n# c\neff.nvlnk = 0.8\n", 4, "unknown parameter 'eff.nvlnk'");
    expect_error("[params]\n\neff.nvlink = fast\n", 3, "is not a number");
    expect_error("[other]\neff.nvlnk = 1\n\n[params]\n", 1, "group [other]; expected only [params]");
    expect_error("[params]\neff.nvlink = 1.5\n", 2, "out of range");
    expect_error("[params]\neff.nvlink = 0\n", 2, "a fraction from 0.000001 to 1");
    expect_error("[params]\neff.nvlink = 1e-300\n", 2, "a fraction from 0.000001 to 1");
    expect_error("[params]\nchan.ll.sm90 = -1\n", 2, "a bandwidth from 0.000001 to 1000000 GB/s");
    expect_error("[params]\nlat.launch = -2\n", 2, "a time from 0 to 1000000 us");
    expect_error("[params]\nlat.launch = 1e308\n", 2, "a time from 0 to 1000000 us");
    expect_error("[params]\nlat.launch = nan\n", 2, "lat.launch");
    expect_error("[params]\nlat.launch = 1e999\n", 2, "lat.launch");
    expect_error("[params]\nlat.launch = 0x1p-3\n", 2, "is not a number");
    expect_error("[params]\nlat.launch = \n", 2, "is not a number");
    expect_error("[params]\nlat.launch = 5\nlat.launch = 50\n", 3, "lat.launch is set twice (first at line 2)");
    expect_error("[params]\nlat.launch = 5\n[params]\n", 3, "[params] again (first at line 1)");
    expect_error("[params]\nlat.launch 5\n", 2, "not a name = value line");
    expect_error("[calibration]\nlat.launch = 1\n", 1, "group [calibration]; expected only [params]");
    expect_error("lat.launch = 1\n", 1, "a value before [params]");
    expect_error("# only a comment\n", 0, "no [params] group");

    cs_params_t p;
    cs_params_init_defaults(&p);
    g_autoptr(GError) err = NULL;
    g_autofree char *missing = g_build_filename(tmpdir, "missing.ini", NULL);
    g_assert_false(cs_params_load(&p, missing, &err));
    g_assert_error(err, CS_ERROR, CS_ERROR_IO);
    g_assert_true(g_str_has_prefix(err->message, missing));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    tmpdir = g_dir_make_tmp("collsim-params-XXXXXX", NULL);
    g_assert_nonnull(tmpdir);
    g_test_add_func("/params/defaults", test_defaults);
    g_test_add_func("/params/names", test_names);
    g_test_add_func("/params/load", test_load);
    g_test_add_func("/params/load-errors", test_load_errors);
    int rc = g_test_run();
    const char *names[] = { "ok.ini", "ok2.ini", "bad.ini" };
    for (gsize i = 0; i < G_N_ELEMENTS(names); i++) {
        g_autofree char *f = g_build_filename(tmpdir, names[i], NULL);
        g_remove(f);
    }
    g_rmdir(tmpdir);
    g_free(tmpdir);
    return rc;
}
