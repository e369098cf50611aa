/* Topology files: parsing with libxml2, error capture, dispatch between our
 * format and NCCL's dump, the RelaxNG schema cache and the attribute
 * helpers shared by both readers. */
#include "config.h"
#include "io/cs_topo_xml.h"
#include "io/cs_topo_xml_int.h"
#include "util/cs_error.h"
#include "util/cs_units.h"
#include "util/cs_read_file.h"

#include <limits.h>
#include <string.h>
#include <libxml/parser.h>
#include <libxml/relaxng.h>
#include <libxml/xmlerror.h>

/* libxml2 made the structured error argument const in 2.12. */
#if LIBXML_VERSION >= 21200
typedef const xmlError *cs_xml_error_arg_t;
#else
typedef xmlErrorPtr cs_xml_error_arg_t;
#endif

/* ---- error capture ------------------------------------------------------ */

/* The first error libxml2 reports, kept instead of printed. */
typedef struct {
    int line;
    char *msg;
} capture_t;

static void capture_structured(void *ud, cs_xml_error_arg_t e)
{
    capture_t *cap = ud;
    if (cap == NULL || e == NULL || cap->msg != NULL)
        return;
    if (e->level < XML_ERR_ERROR)
        return;   /* warnings are not failures */
    cap->line = e->line;
    cap->msg = g_strstrip(g_strdup(e->message ? e->message : "malformed XML"));
    /* libxml2 messages may contain newlines (context lines): keep the first. */
    char *nl = strchr(cap->msg, '\n');
    if (nl != NULL)
        *nl = '\0';
}

static void silent_generic(void *ud, const char *fmt, ...)
{
    (void)ud;
    (void)fmt;
}

/* Installs 'cap' as the receiver of libxml2's errors (nothing reaches
 * stderr) and restores the previous handlers afterwards. */
typedef struct {
    xmlStructuredErrorFunc serr;
    void *sctx;
    xmlGenericErrorFunc gerr;
    void *gctx;
} handlers_t;

static void handlers_push(handlers_t *h, capture_t *cap)
{
    h->serr = xmlStructuredError;
    h->sctx = xmlStructuredErrorContext;
    h->gerr = xmlGenericError;
    h->gctx = xmlGenericErrorContext;
    xmlSetGenericErrorFunc(NULL, silent_generic);
    xmlSetStructuredErrorFunc(cap, capture_structured);
}

static void handlers_pop(const handlers_t *h)
{
    xmlSetStructuredErrorFunc(h->sctx, h->serr);
    xmlSetGenericErrorFunc(h->gctx, h->gerr);
}

/* ---- shared helpers ---------------------------------------------------- */

int cs_xml_line(xmlNodePtr n)
{
    long l = n != NULL ? xmlGetLineNo(n) : 0;
    return l > 0 && l < INT_MAX ? (int)l : 1;
}

gboolean cs_xml_fail(cs_xml_ctx_t *c, xmlNodePtr n, const char *fmt, ...)
{
    if (c->err == NULL || *c->err != NULL)
        return FALSE;
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    cs_set_error_at(c->err, c->file, cs_xml_line(n), "%s", msg);
    return FALSE;
}

gboolean cs_xml_is(xmlNodePtr n, const char *name)
{
    return n != NULL && n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

xmlNodePtr cs_xml_next_elem(xmlNodePtr n)
{
    for (n = n != NULL ? n->next : NULL; n != NULL; n = n->next)
        if (n->type == XML_ELEMENT_NODE)
            return n;
    return NULL;
}

xmlNodePtr cs_xml_first_elem(xmlNodePtr parent)
{
    for (xmlNodePtr n = parent != NULL ? parent->children : NULL; n != NULL; n = n->next)
        if (n->type == XML_ELEMENT_NODE)
            return n;
    return NULL;
}

char *cs_xml_attr(xmlNodePtr n, const char *name)
{
    xmlChar *v = xmlGetNoNsProp(n, (const xmlChar *)name);
    if (v == NULL)
        return NULL;
    char *s = g_strdup((const char *)v);
    xmlFree(v);
    return s;
}

char *cs_xml_attr_req(cs_xml_ctx_t *c, xmlNodePtr n, const char *name, const char *what)
{
    char *v = cs_xml_attr(n, name);
    if (v == NULL || *g_strstrip(v) == '\0') {
        g_free(v);
        cs_xml_fail(c, n, "missing attribute '%s' on <%s>; expected %s", name,
                    (const char *)n->name, what);
        return NULL;
    }
    return v;
}

gboolean cs_xml_attr_int(cs_xml_ctx_t *c, xmlNodePtr n, const char *name,
                         gint64 min, gint64 max, gint64 *v_p)
{
    g_autofree char *s = cs_xml_attr(n, name);
    if (s == NULL)
        return TRUE;
    gint64 v;
    if (!cs_parse_int(s, min, max, &v))
        return cs_xml_fail(c, n, "bad %s=\"%s\" on <%s>; expected an integer from %" G_GINT64_FORMAT
                           " to %" G_GINT64_FORMAT, name, s, (const char *)n->name, min, max);
    *v_p = v;
    return TRUE;
}

gboolean cs_xml_attr_double(cs_xml_ctx_t *c, xmlNodePtr n, const char *name,
                            double min, double max, double *v_p)
{
    g_autofree char *s = cs_xml_attr(n, name);
    if (s == NULL)
        return TRUE;
    double v;
    if (!cs_parse_double(s, &v) || v < min || v > max)
        return cs_xml_fail(c, n, "bad %s=\"%s\" on <%s>; expected a number from %g to %g",
                           name, s, (const char *)n->name, min, max);
    *v_p = v;
    return TRUE;
}

gboolean cs_xml_attr_bool(cs_xml_ctx_t *c, xmlNodePtr n, const char *name, gboolean *v_p)
{
    g_autofree char *s = cs_xml_attr(n, name);
    if (s == NULL)
        return TRUE;
    g_strstrip(s);
    if (strcmp(s, "yes") == 0 || strcmp(s, "true") == 0 || strcmp(s, "1") == 0)
        *v_p = TRUE;
    else if (strcmp(s, "no") == 0 || strcmp(s, "false") == 0 || strcmp(s, "0") == 0)
        *v_p = FALSE;
    else
        return cs_xml_fail(c, n, "bad %s=\"%s\" on <%s>; expected yes or no",
                           name, s, (const char *)n->name);
    return TRUE;
}

gboolean cs_xml_attr_bw(cs_xml_ctx_t *c, xmlNodePtr n, const char *name, double *v_p)
{
    g_autofree char *s = cs_xml_attr(n, name);
    if (s == NULL)
        return TRUE;
    double v;
    /* from 1 Mb/s: the engines count time in integer picoseconds, and a
     * GiB over a slower link would pass their range (and no GPU link or
     * NIC is that slow) */
    if (!cs_parse_bandwidth(s, &v) || v < 125e3)
        return cs_xml_fail(c, n, "bad %s=\"%s\" on <%s>; expected a bandwidth of at least 1Mbps such as "
                           "\"400Gbps\", \"50GB/s\" or \"5e10\" (bytes/s)", name, s,
                           (const char *)n->name);
    *v_p = v;
    return TRUE;
}

gboolean cs_xml_attr_time(cs_xml_ctx_t *c, xmlNodePtr n, const char *name, double *v_p)
{
    g_autofree char *s = cs_xml_attr(n, name);
    if (s == NULL)
        return TRUE;
    double v;
    /* at most a second: a link's or switch's latency is ns to us, and the
     * engines' integer picoseconds must hold many hops of it */
    if (!cs_parse_time(s, &v) || v > 1.0)
        return cs_xml_fail(c, n, "bad %s=\"%s\" on <%s>; expected a time from 0 to 1s such as "
                           "\"500ns\", \"1.5us\" or \"2e-6\" (seconds)", name, s,
                           (const char *)n->name);
    *v_p = v;
    return TRUE;
}

/* ---- RelaxNG schema ---------------------------------------------------- */

#define CS_TOPO_RNG "collsim-topology.rng"

/* Data directories in order of preference: $COLLSIM_DATADIR, the installed
 * $(pkgdatadir), then the source tree (running from a build directory). */
static char *find_schema(void)
{
    const char *dirs[3] = { g_getenv("COLLSIM_DATADIR"), NULL, NULL };
#ifdef CS_PKGDATADIR
    dirs[1] = CS_PKGDATADIR;
#endif
#ifdef CS_SRCDIR
    dirs[2] = CS_SRCDIR;
#endif
    for (size_t i = 0; i < G_N_ELEMENTS(dirs); i++) {
        if (dirs[i] == NULL || *dirs[i] == '\0')
            continue;
        char *p = g_build_filename(dirs[i], "topologies", CS_TOPO_RNG, NULL);
        if (g_file_test(p, G_FILE_TEST_IS_REGULAR))
            return p;
        g_free(p);
    }
    return NULL;
}

static xmlRelaxNGPtr schema_get(void)
{
    static gsize once = 0;
    static xmlRelaxNGPtr schema = NULL;
    if (g_once_init_enter(&once)) {
        g_autofree char *path = find_schema();
        if (path != NULL) {
            capture_t cap = { 0, NULL };
            handlers_t h;
            handlers_push(&h, &cap);
            xmlRelaxNGParserCtxtPtr pc = xmlRelaxNGNewParserCtxt(path);
            if (pc != NULL) {
                schema = xmlRelaxNGParse(pc);
                xmlRelaxNGFreeParserCtxt(pc);
            }
            handlers_pop(&h);
            if (schema == NULL)
                g_warning("%s: %s", path, cap.msg ? cap.msg : "cannot parse the schema");
            g_free(cap.msg);
        }
        g_once_init_leave(&once, 1);
    }
    return schema;
}

gboolean cs_topo_xml_validate_schema(cs_xml_ctx_t *c, xmlDocPtr doc)
{
    xmlRelaxNGPtr schema = schema_get();
    if (schema == NULL)
        return TRUE;
    capture_t cap = { 0, NULL };
    handlers_t h;
    handlers_push(&h, &cap);
    xmlRelaxNGValidCtxtPtr vc = xmlRelaxNGNewValidCtxt(schema);
    int rc = -1;
    if (vc != NULL) {
        xmlRelaxNGSetValidStructuredErrors(vc, capture_structured, &cap);
        rc = xmlRelaxNGValidateDoc(vc, doc);
        xmlRelaxNGFreeValidCtxt(vc);
    }
    handlers_pop(&h);
    if (rc != 0) {
        cs_set_error_at(c->err, c->file, cap.line > 0 ? cap.line : 1,
                        "%s; expected a document valid against %s",
                        cap.msg ? cap.msg : "schema validation failed", CS_TOPO_RNG);
        g_free(cap.msg);
        return FALSE;
    }
    g_free(cap.msg);
    return TRUE;
}

/* ---- entry points ------------------------------------------------------ */

cs_topo_t *cs_topo_xml_load_mem(const char *buf, size_t len, const char *name, GError **err)
{
    g_return_val_if_fail(buf != NULL || len == 0, NULL);
    if (name == NULL)
        name = "<memory>";
    cs_xml_ctx_t c = { name, err };

    if (len == 0 || buf == NULL) {
        cs_set_error_at(err, name, 1, "empty file; expected a <collsim-topology> or NCCL <system> document");
        return NULL;
    }
    if (len > INT_MAX) {
        cs_set_error_at(err, name, 0, "file too large (%zu bytes); expected at most %d bytes", len, INT_MAX);
        return NULL;
    }

    LIBXML_TEST_VERSION
    capture_t cap = { 0, NULL };
    handlers_t h;
    handlers_push(&h, &cap);
    /* NONET: never fetch anything; no NOENT/DTDLOAD: entities are not
     * substituted or loaded. BIG_LINES: line numbers past 65535. */
    xmlDocPtr doc = xmlReadMemory(buf, (int)len, name, NULL,
                                  XML_PARSE_NONET | XML_PARSE_BIG_LINES | XML_PARSE_NOWARNING);
    handlers_pop(&h);
    if (doc == NULL || cap.msg != NULL) {
        cs_set_error_at(err, name, cap.line > 0 ? cap.line : 1, "%s; expected well-formed XML",
                        cap.msg ? cap.msg : "cannot parse");
        g_free(cap.msg);
        if (doc != NULL)
            xmlFreeDoc(doc);
        return NULL;
    }

    cs_topo_t *t = NULL;
    xmlNodePtr root = xmlDocGetRootElement(doc);
    if (doc->intSubset != NULL || doc->extSubset != NULL) {
        /* A DOCTYPE can declare entities; neither format uses one, so refuse
         * it rather than expand anything. */
        /* libxml2 keeps no line for the DTD: the line of its text */
        const char *at = g_strstr_len(buf, (gssize)len, "<!DOCTYPE");
        int line = 1;
        for (const char *q = buf; at != NULL && q < at; q++)
            line += *q == '\n';
        cs_set_error_at(err, name, line, "a <!DOCTYPE> is not allowed; expected a plain XML document without DTD");
    } else if (root == NULL) {
        cs_set_error_at(err, name, 1, "no root element; expected <collsim-topology> or <system>");
    } else if (cs_xml_is(root, "collsim-topology")) {
        t = cs_topo_xml_load_ours(&c, doc);
    } else if (cs_xml_is(root, "system")) {
        t = cs_topo_xml_load_nccl(&c, doc);
    } else {
        cs_xml_fail(&c, root, "unknown root element <%s>; expected <collsim-topology> "
                    "(collsim-topology(5)) or <system> (an NCCL_TOPO_DUMP_FILE dump)",
                    (const char *)root->name);
    }
    xmlFreeDoc(doc);
    g_assert_true(t != NULL || err == NULL || *err != NULL);
    return t;
}

cs_topo_t *cs_topo_xml_load(const char *path, GError **err)
{
    g_return_val_if_fail(path != NULL, NULL);
    g_autofree char *buf = NULL;
    gsize len = 0;
    if (!cs_read_file(path, "file", "topology file", CS_READ_LIMIT_TOPOLOGY, &buf, &len, err))
        return NULL;
    return cs_topo_xml_load_mem(buf, len, path, err);
}
