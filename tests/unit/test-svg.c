/* The SVG plot writer: the document parses as XML (libxml2), has one curve
 * per design in each panel, places sizes and values on log scales (equal
 * ratios, equal distances), marks algorithm changes, escapes labels, and
 * gives the same bytes for the same input. */
#include "config.h"
#include "io/cs_svg.h"

#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>
#include <math.h>
#include <string.h>

static xmlDocPtr parse(const char *svg)
{
    xmlDocPtr doc = xmlReadMemory(svg, (int)strlen(svg), "plot.svg", NULL, XML_PARSE_NONET | XML_PARSE_NOERROR);
    g_assert_nonnull(doc);
    return doc;
}

static xmlXPathObjectPtr query(xmlDocPtr doc, const char *expr)
{
    xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
    xmlXPathRegisterNs(ctx, BAD_CAST "s", BAD_CAST "http://www.w3.org/2000/svg");
    xmlXPathObjectPtr o = xmlXPathEvalExpression(BAD_CAST expr, ctx);
    xmlXPathFreeContext(ctx);
    g_assert_nonnull(o);
    return o;
}

static int count(xmlDocPtr doc, const char *expr)
{
    xmlXPathObjectPtr o = query(doc, expr);
    int n = o->nodesetval != NULL ? o->nodesetval->nodeNr : 0;
    xmlXPathFreeObject(o);
    return n;
}

/* The attribute 'attr' of the first node 'expr' selects. */
static char *attr_of(xmlDocPtr doc, const char *expr, const char *attr)
{
    xmlXPathObjectPtr o = query(doc, expr);
    g_assert_true(o->nodesetval != NULL && o->nodesetval->nodeNr > 0);
    xmlChar *v = xmlGetProp(o->nodesetval->nodeTab[0], BAD_CAST attr);
    xmlXPathFreeObject(o);
    g_assert_nonnull(v);
    char *s = g_strdup((const char *)v);
    xmlFree(v);
    return s;
}

/* "M x y L x y ..." -> coordinates */
static GArray *path_points(const char *d)
{
    GArray *a = g_array_new(FALSE, FALSE, sizeof(double));
    g_auto(GStrv) tok = g_strsplit(d, " ", -1);
    for (int i = 0; tok[i] != NULL; i++) {
        const char *t = tok[i];
        if (t[0] == 'M' || t[0] == 'L')
            t++;
        double v = g_ascii_strtod(t, NULL);
        g_array_append_val(a, v);
    }
    return a;
}

static const double sizes[] = { 1024, 1048576, 1073741824 };
static const double bw_a[] = { 1, 10, 100 };
static const double bw_b[] = { 2, 20, 200 };
static const double t_a[] = { 10, 100, 1000 };
static const double t_b[] = { 5, 50, 500 };
static const char *const algo_a[] = { "Tree/LL", "Tree/LL", "Ring/Simple" };
static const char *const algo_b[] = { "Ring/LL", "Ring/LL", "Ring/LL" };

static char *two_designs(gboolean time_panel)
{
    cs_svg_series_t s[2] = {
        { .label = "tree <&> ring", .n = 3, .size = sizes, .busbw = bw_a, .time_us = t_a, .algo = algo_a },
        { .label = "b", .n = 3, .size = sizes, .busbw = bw_b, .time_us = t_b, .algo = algo_b },
    };
    cs_svg_opts_t o = { .title = "allreduce: a vs b", .caption = "model: analytic prediction", .time_panel = time_panel };
    return cs_svg_plot(s, 2, &o);
}

static void test_well_formed(void)
{
    g_autofree char *svg = two_designs(TRUE);
    xmlDocPtr doc = parse(svg);
    xmlNodePtr root = xmlDocGetRootElement(doc);
    g_assert_cmpstr((const char *)root->name, ==, "svg");
    /* no external reference: no href, no link, no script */
    g_assert_null(strstr(svg, "href"));
    g_assert_null(strstr(svg, "<script"));
    g_assert_cmpint(count(doc, "//s:g[@id='busbw']//s:path[@class='curve']"), ==, 2);
    g_assert_cmpint(count(doc, "//s:g[@id='time']//s:path[@class='curve']"), ==, 2);
    g_assert_cmpint(count(doc, "//s:g[@class='legend']/s:text"), ==, 2);
    /* the label is escaped and reads back */
    g_assert_cmpint(count(doc, "//s:g[@class='legend']/s:text[text()='tree <&> ring']"), ==, 1);
    g_assert_cmpint(count(doc, "//s:text[@class='caption'][text()='model: analytic prediction']"), ==, 1);
    g_assert_cmpint(count(doc, "//s:text[@class='title'][text()='allreduce: a vs b']"), ==, 1);
    /* human tick labels */
    g_assert_cmpint(count(doc, "//s:g[@id='busbw']//s:text[text()='1K']"), ==, 1);
    g_assert_cmpint(count(doc, "//s:g[@id='busbw']//s:text[text()='1M']"), ==, 1);
    g_assert_cmpint(count(doc, "//s:g[@id='busbw']//s:text[text()='1G']"), ==, 1);
    g_assert_cmpint(count(doc, "//s:g[@id='time']//s:text[text()='1 ms']"), ==, 1);
    xmlFreeDoc(doc);

    g_autofree char *one = two_designs(FALSE);
    doc = parse(one);
    g_assert_cmpint(count(doc, "//s:g[@id='time']"), ==, 0);
    g_assert_cmpint(count(doc, "//s:path[@class='curve']"), ==, 2);
    xmlFreeDoc(doc);
}

static void test_log_scale(void)
{
    g_autofree char *svg = two_designs(TRUE);
    xmlDocPtr doc = parse(svg);
    for (int panel = 0; panel < 2; panel++) {
        g_autofree char *expr = g_strdup_printf("//s:g[@id='%s']//s:g[@data-series='0']/s:path", panel ? "time" : "busbw");
        g_autofree char *d = attr_of(doc, expr, "d");
        g_assert_true(g_str_has_prefix(d, "M"));
        g_autoptr(GArray) p = path_points(d);
        g_assert_cmpuint(p->len, ==, 6);
        double *v = (double *)(void *)p->data;
        /* sizes x1024 apart, values x10 apart: equal steps on log axes */
        g_assert_cmpfloat(v[2] - v[0], >, 10);
        g_assert_cmpfloat(fabs((v[2] - v[0]) - (v[4] - v[2])), <=, 0.02);
        g_assert_cmpfloat(fabs((v[3] - v[1]) - (v[5] - v[3])), <=, 0.02);
        /* bandwidth grows upwards (smaller y), time too */
        g_assert_cmpfloat(v[5], <, v[1]);
    }
    /* design b is twice design a's bandwidth: the same vertical offset
     * (log10 2 of a decade) at every size */
    g_autofree char *da = attr_of(doc, "//s:g[@id='busbw']//s:g[@data-series='0']/s:path", "d");
    g_autofree char *db = attr_of(doc, "//s:g[@id='busbw']//s:g[@data-series='1']/s:path", "d");
    g_autoptr(GArray) pa = path_points(da);
    g_autoptr(GArray) pb = path_points(db);
    double off0 = g_array_index(pa, double, 1) - g_array_index(pb, double, 1);
    double off2 = g_array_index(pa, double, 5) - g_array_index(pb, double, 5);
    g_assert_cmpfloat(off0, >, 1);
    g_assert_cmpfloat(fabs(off0 - off2), <=, 0.02);
    xmlFreeDoc(doc);
}

static void test_algo_changes(void)
{
    g_autofree char *svg = two_designs(FALSE);
    xmlDocPtr doc = parse(svg);
    /* a: Tree/LL at the start, Ring/Simple where it changes; b: one label */
    g_assert_cmpint(count(doc, "//s:g[@data-series='0']/s:circle[@class='change']"), ==, 2);
    g_assert_cmpint(count(doc, "//s:g[@data-series='0']/s:text[@class='algo']"), ==, 2);
    g_assert_cmpint(count(doc, "//s:g[@data-series='0']/s:text[text()='Ring/Simple']"), ==, 1);
    g_assert_cmpint(count(doc, "//s:g[@data-series='1']/s:circle[@class='change']"), ==, 1);
    g_assert_cmpint(count(doc, "//s:g[@data-series='1']/s:circle[@class='pt']"), ==, 2);
    xmlFreeDoc(doc);
}

/* A missing point breaks the curve: a second "M". */
static void test_gap(void)
{
    const double bw[] = { 1, -1, 100 };
    cs_svg_series_t s = { .label = "gap", .n = 3, .size = sizes, .busbw = bw };
    cs_svg_opts_t o = { .title = "t", .caption = "c" };
    g_autofree char *svg = cs_svg_plot(&s, 1, &o);
    xmlDocPtr doc = parse(svg);
    g_autofree char *d = attr_of(doc, "//s:path[@class='curve']", "d");
    g_assert_null(strchr(d, 'L'));
    const char *second = strchr(d + 1, 'M');
    g_assert_nonnull(second);
    xmlFreeDoc(doc);
    /* no series at all: still a document with empty axes */
    g_autofree char *empty = cs_svg_plot(NULL, 0, &o);
    doc = parse(empty);
    g_assert_cmpint(count(doc, "//s:path"), ==, 0);
    xmlFreeDoc(doc);
}

static void test_deterministic(void)
{
    g_autofree char *a = two_designs(TRUE);
    g_autofree char *b = two_designs(TRUE);
    g_assert_cmpstr(a, ==, b);
}

static void test_size_label(void)
{
    char buf[16];
    g_assert_cmpstr(cs_svg_size_label(8, buf, sizeof buf), ==, "8");
    g_assert_cmpstr(cs_svg_size_label(512, buf, sizeof buf), ==, "512");
    g_assert_cmpstr(cs_svg_size_label(1024, buf, sizeof buf), ==, "1K");
    g_assert_cmpstr(cs_svg_size_label(65536, buf, sizeof buf), ==, "64K");
    g_assert_cmpstr(cs_svg_size_label(1 << 20, buf, sizeof buf), ==, "1M");
    g_assert_cmpstr(cs_svg_size_label(3.0 * (1 << 30), buf, sizeof buf), ==, "3G");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/svg/well-formed", test_well_formed);
    g_test_add_func("/svg/log-scale", test_log_scale);
    g_test_add_func("/svg/algo-changes", test_algo_changes);
    g_test_add_func("/svg/gap", test_gap);
    g_test_add_func("/svg/deterministic", test_deterministic);
    g_test_add_func("/svg/size-label", test_size_label);
    int rc = g_test_run();
    xmlCleanupParser();
    return rc;
}
