/* Scenarios: INI keys and their flags, nccl-tests's size sweep, FILE:LINE
 * messages for every kind of bad line, round trip, and the topology spec
 * (option group, merge, build). Expected values are written out by hand. */
#include "config.h"
#include "io/cs_scenario-int.h"
#include "models/cs_presets.h"
#include "util/cs_error.h"

#include <glib/gstdio.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------- */

static gboolean load_text(cs_scenario_t *s, const char *text, GError **err)
{
    return cs_scenario_load_mem(s, text, strlen(text), "s.ini", err);
}

/* Loads 'text' and expects exactly 'message'. */
static void expect_error(const char *text, const char *message)
{
    cs_scenario_t s;
    cs_scenario_init(&s);
    g_autoptr(GError) err = NULL;
    gboolean ok = load_text(&s, text, &err);
    if (ok || err == NULL || strcmp(err->message, message) != 0)
        g_printerr("input:\n%s\nexpected: %s\ngot:      %s\n", text, message, err ? err->message : "(success)");
    g_assert_false(ok);
    g_assert_cmpstr(err->message, ==, message);
    cs_scenario_clear(&s);
}

/* The same when the message ends in a list that grows (presets, keys). */
static void expect_error_start(const char *text, const char *start)
{
    cs_scenario_t s;
    cs_scenario_init(&s);
    g_autoptr(GError) err = NULL;
    g_assert_false(load_text(&s, text, &err));
    if (!g_str_has_prefix(err->message, start))
        g_printerr("expected: %s...\ngot:      %s\n", start, err->message);
    g_assert_true(g_str_has_prefix(err->message, start));
    cs_scenario_clear(&s);
}

static void expect_invalid(const char *text, const char *message)
{
    cs_scenario_t s;
    cs_scenario_init(&s);
    g_autoptr(GError) err = NULL;
    g_assert_true(load_text(&s, text, &err));
    g_assert_no_error(err);
    gboolean ok = cs_scenario_validate(&s, &err);
    if (ok || strcmp(err->message, message) != 0)
        g_printerr("input:\n%s\nexpected: %s\ngot:      %s\n", text, message, err ? err->message : "(valid)");
    g_assert_false(ok);
    g_assert_cmpstr(err->message, ==, message);
    cs_scenario_clear(&s);
}

/* ---- tests --------------------------------------------------------------- */

/* nccl-tests's defaults (src/common.cu): -b 32M -e 32M -i 1M -f 1 -n 20 -w 1
 * -c 1 -m 1, float, sum, root 0; collsim adds allreduce, analytic, seed 1. */
static void test_defaults(void)
{
    cs_scenario_t s;
    cs_scenario_init(&s);
    g_assert_cmpint(s.coll, ==, CS_COLL_ALLREDUCE);
    g_assert_cmpint(s.dtype, ==, CS_DTYPE_FLOAT);
    g_assert_cmpint(s.redop, ==, CS_REDOP_SUM);
    g_assert_cmpint(s.root, ==, 0);
    g_assert_cmpuint(s.minbytes, ==, 33554432);
    g_assert_cmpuint(s.maxbytes, ==, 33554432);
    g_assert_cmpuint(s.stepbytes, ==, 1048576);
    g_assert_cmpfloat(s.stepfactor, ==, 1);
    g_assert_cmpint(s.iters, ==, 20);
    g_assert_cmpint(s.warmup, ==, 1);
    g_assert_cmpint(s.check, ==, 1);
    g_assert_cmpint(s.agg_iters, ==, 1);
    g_assert_cmpstr(s.model, ==, "analytic");
    g_assert_cmpuint(s.seed, ==, 1);
    g_assert_true(s.extra_columns);
    g_assert_cmpint(s.topo.p2p, ==, -1);
    g_assert_null(s.topo.file);
    g_assert_null(s.topo.preset);
    cs_scenario_clear(&s);
}

static const char full_ini[] =
    "# every key\n"
    "[scenario]\n"
    "name = lab 3\n"
    "model = analytic\n"
    "seed = 42\n"
    "\n"
    "[topology]\n"
    "preset = pcie\n"
    "gpu = rtx4090\n"
    "gpus = 2\n"
    "sockets = 2\n"
    "cpu = Genoa\n"
    "p2p = off\n"
    "nodes = 4\n"
    "nic = eth-1g\n"
    "nics-per-node = 1\n"
    "fabric = fat-tree\n"
    "oversubscription = 3:2\n"
    "nvlink-bridge = none\n"
    "\n"
    "[collective]\n"
    "op = broadcast\n"
    "datatype = bf16\n"
    "redop = max\n"
    "root = 3\n"
    "minbytes = 1K\n"
    "maxbytes = 1G\n"
    "stepbytes = 4096\n"
    "stepfactor = 4\n"
    "iters = 50\n"
    "warmup = 5\n"
    "check = 0\n"
    "agg-iters = 2\n"
    "\n"
    "[nccl]\n"
    "NCCL_IB_DISABLE = 1\n"
    "NCCL_ALGO=^Tree\n"
    "\n"
    "[output]\n"
    "json = out.json\n"
    "csv = out.csv\n"
    "extra-columns = false\n";

static void check_full(const cs_scenario_t *s)
{
    g_assert_cmpstr(s->name, ==, "lab 3");
    g_assert_cmpstr(s->model, ==, "analytic");
    g_assert_cmpuint(s->seed, ==, 42);
    g_assert_cmpstr(s->topo.preset, ==, "pcie");
    g_assert_null(s->topo.file);
    g_assert_cmpstr(s->topo.gpu, ==, "rtx4090");
    g_assert_cmpint(s->topo.gpus, ==, 2);
    g_assert_cmpint(s->topo.sockets, ==, 2);
    g_assert_cmpstr(s->topo.cpu, ==, "genoa");   /* the catalogue's key, whatever the case */
    g_assert_cmpint(s->topo.p2p, ==, 0);
    g_assert_cmpint(s->topo.nodes, ==, 4);
    g_assert_cmpstr(s->topo.nic, ==, "eth-1g");
    g_assert_cmpint(s->topo.nics_per_node, ==, 1);
    g_assert_cmpstr(s->topo.fabric, ==, "fat-tree");
    g_assert_cmpfloat_with_epsilon(s->topo.oversubscription, 1.5, 1e-12);
    g_assert_cmpint(s->topo.nvlink_bridge, ==, CS_BRIDGE_NONE);
    g_assert_cmpint(s->coll, ==, CS_COLL_BROADCAST);
    g_assert_cmpint(s->dtype, ==, CS_DTYPE_BFLOAT16);
    g_assert_cmpint(s->redop, ==, CS_REDOP_MAX);
    g_assert_cmpint(s->root, ==, 3);
    g_assert_cmpuint(s->minbytes, ==, 1024);
    g_assert_cmpuint(s->maxbytes, ==, 1073741824);
    g_assert_cmpuint(s->stepbytes, ==, 4096);
    g_assert_cmpfloat(s->stepfactor, ==, 4);
    g_assert_cmpint(s->iters, ==, 50);
    g_assert_cmpint(s->warmup, ==, 5);
    g_assert_cmpint(s->check, ==, 0);
    g_assert_cmpint(s->agg_iters, ==, 2);
    g_assert_cmpstr(cs_nccl_env_get(s->env, "NCCL_IB_DISABLE"), ==, "1");
    g_assert_cmpstr(cs_nccl_env_get(s->env, "NCCL_ALGO"), ==, "^Tree");
    g_assert_cmpstr(s->json_out, ==, "out.json");
    g_assert_cmpstr(s->csv_out, ==, "out.csv");
    g_assert_false(s->extra_columns);
}

static void test_every_key(void)
{
    cs_scenario_t s;
    cs_scenario_init(&s);
    g_autoptr(GError) err = NULL;
    g_assert_true(load_text(&s, full_ini, &err));
    g_assert_no_error(err);
    check_full(&s);
    /* [nccl] values keep where they came from, for NCCL-side messages */
    g_assert_cmpstr(cs_nccl_env_origin(s.env, "NCCL_IB_DISABLE"), ==, "s.ini:36");
    g_assert_cmpstr(cs_nccl_env_origin(s.env, "NCCL_ALGO"), ==, "s.ini:37");
    g_assert_cmpstr(g_hash_table_lookup(s.origins, "collective.root"), ==, "s.ini:25: root");
    g_assert_cmpstr(s.topo.origin, ==, "s.ini:8: preset");
    g_assert_true(cs_scenario_validate(&s, &err));
    cs_scenario_clear(&s);
}

/* What cs_scenario_to_ini writes reads back to the same scenario. */
static void test_round_trip(void)
{
    cs_scenario_t s, t;
    cs_scenario_init(&s);
    cs_scenario_init(&t);
    g_autoptr(GError) err = NULL;
    g_assert_true(load_text(&s, full_ini, &err));
    g_autofree char *ini = cs_scenario_to_ini(&s);
    g_assert_true(cs_scenario_load_mem(&t, ini, strlen(ini), "back.ini", &err));
    g_assert_no_error(err);
    check_full(&t);
    g_autofree char *again = cs_scenario_to_ini(&t);
    g_assert_cmpstr(ini, ==, again);
    /* sizes are written as nccl-tests flags would */
    g_assert_nonnull(strstr(ini, "minbytes=1K\n"));
    g_assert_nonnull(strstr(ini, "maxbytes=1G\n"));
    g_assert_nonnull(strstr(ini, "stepbytes=4K\n"));
    cs_scenario_clear(&s);
    cs_scenario_clear(&t);
}

/* [workload]: values checked as read, resolved with the preset in any key
 * order, errors naming the key and its line, written back as read. */
static void test_workload(void)
{
    cs_scenario_t s;
    cs_scenario_init(&s);
    g_autoptr(GError) err = NULL;
    /* the shape key before the preset: it still wins */
    g_assert_true(load_text(&s, "[workload]\nlayers = 4\narch = llama3-8b\ntp = 2\ndata-parallel = fsdp\n"
                                "precision = fp16\ntarget-allreduce = 0.5ms\n", &err));
    g_assert_no_error(err);
    cs_wl_spec_t spec;
    g_assert_true(cs_scenario_workload_spec(&s, &spec, &err));
    g_assert_cmpint(spec.model.layers, ==, 4);
    g_assert_cmpint(spec.model.hidden, ==, 4096);      /* Llama 3 8B's */
    g_assert_cmpfloat(spec.model.params, ==, 0);        /* reshaped: computed, not the published 8B */
    g_assert_cmpint(spec.tp, ==, 2);
    g_assert_cmpint(spec.shard, ==, CS_WL_SHARD_FULL);
    g_assert_cmpint(spec.dtype, ==, CS_DTYPE_HALF);
    g_assert_cmpfloat_with_epsilon(spec.target_allreduce_s, 0.5e-3, 1e-12);
    g_assert_cmpstr(cs_scenario_workload_origin(&s, "tp"), ==, "s.ini:4: tp");
    g_autofree char *ini = cs_scenario_to_ini(&s);
    g_assert_nonnull(strstr(ini, "[workload]\narch=llama3-8b\nlayers=4\nprecision=fp16\ntp=2\n"));
    cs_scenario_clear(&s);

    expect_error_start("[workload]\narch = llama5\n", "s.ini:2: arch: unknown model 'llama5'; expected custom or one of ");
    expect_error("[workload]\ntp = 0\n", "s.ini:2: tp: 0 is out of range; expected a group size of at least 1");
    expect_error("[workload]\nmode = serve\n", "s.ini:2: mode: 'serve' is not a mode value; expected train or infer");
    expect_error("[workload]\nparams = lots\n", "s.ini:2: params: 'lots' is not a parameter count; expected 1e3 to "
                 "1e15, such as 1.3e9 or 1.3B");
    expect_error("[workload]\nefficiency = 1.5\n", "s.ini:2: efficiency: '1.5' is not a fraction; expected above 0 "
                 "to 1, such as 0.4");
    expect_error("[workload]\ntarget-token = -1ms\n", "s.ini:2: target-token: '-1ms' is not a latency target; "
                 "expected a positive time such as 0.5ms");
    expect_error_start("[workload]\nbatchsize = 4\n", "s.ini:2: unknown key 'batchsize' in [workload]; expected one of "
                 "mode, arch, params, layers, ");

    /* cross-key checks come with the key's line */
    cs_scenario_init(&s);
    g_assert_true(load_text(&s, "[workload]\nlayers = 2\nhidden = 100\nheads = 3\n", &err));
    g_assert_false(cs_scenario_workload_spec(&s, &spec, &err));
    g_assert_cmpstr(err->message, ==, "s.ini:3: hidden: hidden = 100 is not a multiple of heads = 3; expected "
                    "hidden = heads x head size");
    g_clear_error(&err);
    cs_scenario_clear(&s);
    cs_scenario_init(&s);
    g_assert_true(load_text(&s, "[workload]\nlayers = 2\n", &err));
    g_assert_false(cs_scenario_workload_spec(&s, &spec, &err));
    g_assert_cmpstr(err->message, ==, "s.ini:2: layers: a custom model needs its size; expected hidden (with heads) "
                    "or params");
    g_clear_error(&err);
    cs_scenario_clear(&s);
    /* arch = custom alone: its own line */
    cs_scenario_init(&s);
    g_assert_true(load_text(&s, "[workload]\narch = custom\n", &err));
    g_assert_false(cs_scenario_workload_spec(&s, &spec, &err));
    g_assert_true(g_str_has_prefix(err->message, "s.ini:2: arch: a custom model needs layers; expected "));
    g_clear_error(&err);
    cs_scenario_clear(&s);
}

static guint64 *sweep_of(const char *collective_keys, int *n_p)
{
    cs_scenario_t s;
    cs_scenario_init(&s);
    g_autofree char *text = g_strdup_printf("[collective]\n%s", collective_keys);
    g_autoptr(GError) err = NULL;
    g_assert_true(load_text(&s, text, &err));
    guint64 *sizes = cs_scenario_sizes(&s, n_p);
    cs_scenario_clear(&s);
    return sizes;
}

/* nccl-tests TimeTest: for (size = -b; size <= -e; size = f > 1 ? size*f :
 * size + i). */
static void test_sizes(void)
{
    int n;
    g_autofree guint64 *a = sweep_of("minbytes = 8\nmaxbytes = 128M\nstepfactor = 2\n", &n);
    g_assert_cmpint(n, ==, 25);            /* 2^3 .. 2^27 */
    g_assert_cmpuint(a[0], ==, 8);
    g_assert_cmpuint(a[1], ==, 16);
    g_assert_cmpuint(a[24], ==, 134217728);

    g_autofree guint64 *b = sweep_of("minbytes = 1M\nmaxbytes = 4M\n", &n);   /* -i 1M default */
    g_assert_cmpint(n, ==, 4);
    g_assert_cmpuint(b[3], ==, 4194304);

    g_autofree guint64 *c = sweep_of("minbytes = 3\nmaxbytes = 50\nstepbytes = 10\n", &n);
    g_assert_cmpint(n, ==, 5);             /* 3 13 23 33 43 */
    g_assert_cmpuint(c[4], ==, 43);

    g_autofree guint64 *d = sweep_of("minbytes = 3\nmaxbytes = 48\nstepfactor = 2\n", &n);
    g_assert_cmpint(n, ==, 5);             /* inclusive of -e: 3 6 12 24 48 */
    g_assert_cmpuint(d[4], ==, 48);

    g_autofree guint64 *e = sweep_of("minbytes = 1000\nmaxbytes = 1000\n", &n);
    g_assert_cmpint(n, ==, 1);
    g_assert_cmpuint(e[0], ==, 1000);

    /* no overflow past 2^64 */
    g_autofree guint64 *f = sweep_of("minbytes = 8G\nmaxbytes = 16000000000G\nstepfactor = 1024\n", &n);
    g_assert_cmpint(n, ==, 4);             /* 8G 8T 8P 8E; 8Z would overflow */
    g_assert_cmpuint(f[3], ==, (guint64)1 << 63);
}

static void test_line_errors(void)
{
    expect_error("[collective]\nminbytes = abc\n",
                 "s.ini:2: minbytes: 'abc' is not a size; expected a number with optional K, M or G");
    expect_error("[collective]\n\n# c\nminbytes = 0\n", "s.ini:4: minbytes: size must be at least 1 byte; got '0'");
    expect_error("[collective]\nstepbytes = 0\n", "s.ini:2: stepbytes: step must be at least 1 byte; got '0'");
    expect_error("[collective]\nstepfactor = 1.5\n",
                 "s.ini:2: stepfactor: '1.5' is not a whole number; expected a whole step factor of at least 1");
    expect_error("[collective]\nstepfactor = 0\n",
                 "s.ini:2: stepfactor: 0 is out of range; expected a whole step factor of at least 1");
    expect_error("[collective]\niters = 0\n",
                 "s.ini:2: iters: 0 is out of range; expected a number of iterations of at least 1");
    expect_error("[collective]\ncheck = 2\n", "s.ini:2: check: 2 is out of range; expected 0 or 1");
    expect_error("[collective]\nop = alltoallv\n",
                 "s.ini:2: op: unknown collective 'alltoallv'; expected one of broadcast, reduce, allgather, "
                 "reducescatter, allreduce, sendrecv, alltoall");
    expect_error("[collective]\nop = sum\n",
                 "s.ini:2: op: unknown collective 'sum'; expected one of broadcast, reduce, allgather, "
                 "reducescatter, allreduce, sendrecv, alltoall (the reduction is -o/--redop)");
    expect_error("[collective]\nredop = mulsum\n",
                 "s.ini:2: redop: unknown reduction 'mulsum'; expected one of sum, prod, min, max, avg");
    expect_error("[scenario]\nseed = -1\n", "s.ini:2: seed: '-1' is not a seed; expected a whole number of at least 0");
    expect_error("[scenario]\nname =\n", "s.ini:2: name: empty value; expected a name");
    expect_error("[output]\nextra-columns = maybe\n",
                 "s.ini:2: extra-columns: 'maybe' is not a truth value; expected true or false");
    expect_error("[scenario]\nexact = 2\n", "s.ini:2: exact: '2' is not a truth value; expected true or false");

    /* structure */
    expect_error("[colective]\nop = allreduce\n",
                 "s.ini:1: unknown group [colective]; expected [scenario], [topology], [collective], [nccl], "
                 "[fabric], [output], [workload] or [job NAME]");
    expect_error("[collective]\nmax-bytes = 1M\n",
                 "s.ini:2: unknown key 'max-bytes' in [collective]; expected one of op, datatype, redop, root, "
                 "minbytes, maxbytes, stepbytes, stepfactor, iters, warmup, check, agg-iters, procs-per-node, "
                 "nthreads");
    expect_error("op = allreduce\n", "s.ini:1: key 'op' comes before any group; expected a [group] line first");
    expect_error("[collective]\niters = 5\niters = 6\n",
                 "s.ini:3: key 'iters' in [collective] was already set on line 2; expected each key once");
    /* a group given twice, even with other keys (GKeyFile would merge them) */
    expect_error("[collective]\niters = 5\n[scenario]\nseed = 2\n[collective]\nwarmup = 6\n",
                 "s.ini:5: [collective] already appeared on line 1; expected each group once");
    expect_error("[collective]\njust words\n",
                 "s.ini:2: 'just words' is not a key = value line; expected key = value, [group] or a # comment");
    expect_error("[collective]\n; old comment\n",
                 "s.ini:2: '; old comment' is not a key = value line (comments start with #); expected key = "
                 "value, [group] or a # comment");
    expect_error("[collective] # c\n",
                 "s.ini:1: '[collective] # c' is not a group line; expected [group] alone on the line");
    expect_error("[collective\n", "s.ini:1: '[collective' is not a group line; expected [group] alone on the line");
    expect_error("[collective]\n = 5\n", "s.ini:2: empty key name; expected key = value");
    expect_error("[nccl]\nALGO = Ring\n",
                 "s.ini:2: 'ALGO' is not an NCCL_* variable; expected NCCL_NAME = value in [nccl]");
    expect_error("[collective]\r\nop = allreduce\r\nroot = x\r\n",
                 "s.ini:3: root: 'x' is not a whole number; expected a rank number from 0");
    g_autofree char *preset_msg =
        g_strdup_printf("s.ini:2: preset: unknown preset 'dgx-h1000'; expected one of %s", cs_preset_names());
    expect_error("[topology]\npreset = dgx-h1000\n", preset_msg);
    expect_error("[topology]\nfabric = torus\n", "s.ini:2: fabric: unknown fabric 'torus'; expected rail or fat-tree");
    expect_error("[topology]\noversubscription = 1:2\n",
                 "s.ini:2: oversubscription: oversubscription 1:2 is out of range; expected from 1 (non-blocking) "
                 "to 1000");
    expect_error("[topology]\np2p = maybe\n", "s.ini:2: p2p: 'maybe' is not on or off; expected on or off");
    expect_error("[topology]\nnvlink-bridge = twice\n",
                 "s.ini:2: nvlink-bridge: unknown NVLink bridge layout 'twice'; expected none or pairs");
    /* GKeyFile's own value escapes: mapped to the key's line */
    expect_error("[scenario]\nname = a\\qb\n",
                 "s.ini:2: name: the value has a bad escape; expected \\ only before s, n, t, r or \\");
    expect_error("[scenario]\nname = ab\\\n",
                 "s.ini:2: name: the value has a bad escape; expected \\ only before s, n, t, r or \\");

    /* bytes no text file has */
    static const char nul[] = "[collective]\niters = 1\0\n";
    cs_scenario_t s;
    cs_scenario_init(&s);
    g_autoptr(GError) err = NULL;
    g_assert_false(cs_scenario_load_mem(&s, nul, sizeof nul - 1, "s.ini", &err));
    g_assert_cmpstr(err->message, ==, "s.ini:2: NUL byte in the line; expected a text file");
    g_clear_error(&err);
    g_assert_false(cs_scenario_load_mem(&s, "[scenario]\nname = \xff\n", 19, "s.ini", &err));
    g_assert_cmpstr(err->message, ==, "s.ini:2: the line is not valid UTF-8; expected UTF-8 text");
    cs_scenario_clear(&s);
}

static void test_validate(void)
{
    expect_invalid("[topology]\npreset = dgx-h100\n[collective]\nminbytes = 1M\nmaxbytes = 1K\n",
                   "s.ini:5: maxbytes: maximum size 1024 is below the minimum size 1048576; expected at least "
                   "the minimum");
    expect_invalid("[topology]\npreset = dgx-h100\n[collective]\nminbytes = 64M\n",
                   "s.ini:4: minbytes: minimum size 67108864 is above the maximum size 33554432 (default 32M); "
                   "expected at most the maximum (set -e too)");
    expect_invalid("[topology]\npreset = dgx-h100\n[collective]\nminbytes = 1\nmaxbytes = 1G\nstepbytes = 1\n",
                   "s.ini:6: stepbytes: the sweep from 1 to 1073741824 bytes has more than 10000 sizes; expected "
                   "a larger step (or -f 2)");
    expect_invalid("[collective]\nop = allreduce\n",
                   "collsim: no topology given; expected --topo PRESET|FILE or [topology] preset or file");
    expect_invalid("[topology]\nfile = a.xml\npreset = dgx-h100\n",
                   "s.ini:3: preset: both a preset (dgx-h100) and a file (a.xml) are given; expected one of them");
    expect_invalid("[topology]\nfile = a.xml\ngpu = h100\n",
                   "s.ini:3: gpu: applies to presets; expected no gpu with the topology file a.xml");
    expect_invalid("[topology]\nfile = a.xml\nnic = ib-ndr\n",
                   "s.ini:3: nic: a topology file is used as it is; expected --nodes N > 1 to build a cluster of it");
    /* a fixed machine takes no node option (issue #9: --gpu with a DGX
     * preset was silently ignored) */
    expect_invalid("[topology]\npreset = dgx-h100\ngpu = l40s\n",
                   "s.ini:3: gpu: applies to the pcie preset only (dgx-h100 is a fixed machine: its GPUs, sockets "
                   "and GPU links are the vendor's); expected no gpu with dgx-h100");
    expect_invalid("[topology]\npreset = dgx-a100\ncpu = rome\n",
                   "s.ini:3: cpu: applies to the pcie preset only (dgx-a100 is a fixed machine: its GPUs, "
                   "sockets and GPU links are the vendor's); expected no cpu with dgx-a100");
    expect_invalid("[topology]\npreset = dgx-a100\nsockets = 1\n",
                   "s.ini:3: sockets: applies to the pcie preset only (dgx-a100 is a fixed machine: its GPUs, "
                   "sockets and GPU links are the vendor's); expected no sockets with dgx-a100");
    expect_invalid("[topology]\npreset = dgx1-v100\np2p = off\n",
                   "s.ini:3: p2p: applies to the pcie preset only (dgx1-v100 is a fixed machine: its GPUs, "
                   "sockets and GPU links are the vendor's); expected no p2p with dgx1-v100");
    /* nvlink-bridge is a node key like the others: refused, at its line,
     * by a fixed machine or a topology file */
    expect_invalid("[topology]\npreset = dgx-h100\nnvlink-bridge = none\n",
                   "s.ini:3: nvlink-bridge: applies to the pcie preset only (dgx-h100 is a fixed machine: its GPUs, "
                   "sockets and GPU links are the vendor's); expected no nvlink-bridge with dgx-h100");
    expect_invalid("[topology]\nfile = a.xml\nnvlink-bridge = pairs\n",
                   "s.ini:3: nvlink-bridge: applies to presets; expected no nvlink-bridge with the topology file a.xml");
    cs_scenario_t s;
    cs_scenario_init(&s);
    g_autoptr(GError) err = NULL;
    g_assert_true(load_text(&s, "[topology]\npreset = pcie\ngpu = l40s\nsockets = 1\np2p = off\n", &err));
    g_assert_true(cs_scenario_validate(&s, &err));
    g_assert_no_error(err);
    cs_scenario_clear(&s);
}

static int nvlinks_of(const char *bridge)
{
    cs_scenario_t s;
    cs_scenario_init(&s);
    g_autoptr(GError) err = NULL;
    g_autofree char *text = g_strdup_printf("[topology]\npreset = pcie\ngpu = rtx3090\ngpus = 2\n%s", bridge);
    g_assert_true(load_text(&s, text, &err));
    g_assert_true(cs_scenario_validate(&s, &err));
    g_autoptr(cs_topo_t) t = cs_topo_spec_build(&s.topo, &err);
    g_assert_no_error(err);
    g_assert_nonnull(t);
    int n = 0;
    for (int l = 0; l < t->nlinks; l++)
        n += t->links[l].kind == CS_LINK_NVL;
    cs_scenario_clear(&s);
    return n;
}

/* [topology] nvlink-bridge reaches the pcie builder: pairs joins the two
 * cards, none (the default) leaves them on PCIe alone. */
static void test_nvlink_bridge(void)
{
    g_assert_cmpint(nvlinks_of(""), ==, 0);
    g_assert_cmpint(nvlinks_of("nvlink-bridge = none\n"), ==, 0);
    g_assert_cmpint(nvlinks_of("nvlink-bridge = pairs\n"), >, 0);
}

/* Every key has a flag and the flags find their keys. */
static void test_keys_and_flags(void)
{
    const cs_scenario_key_t *tables[] = { cs_scenario_keys, cs_topo_spec_keys, cs_fabric_keys };
    int n = 0;
    for (int t = 0; t < 3; t++) {
        for (const cs_scenario_key_t *k = tables[t]; k->key != NULL; k++, n++) {
            g_assert_nonnull(k->long_flag);
            g_autofree char *lf = g_strdup_printf("--%s", k->long_flag);
            const cs_scenario_key_t *back = cs_scenario_key_by_flag(lf);
            g_assert_nonnull(back);
            g_assert_cmpstr(back->long_flag, ==, k->long_flag);
            g_assert_true(cs_scenario_key_find(k->group, k->key) == k);
        }
    }
    g_assert_cmpint(n, ==, 40 + CS_FK_COUNT);   /* + [topology] nvlink-bridge, visible-gpus, cpu, [collective] procs-per-node, nthreads, [output] alternatives */
    /* nccl-tests's letters */
    static const struct { const char *flag, *key; } letters[] = {
        { "-b", "minbytes" }, { "-e", "maxbytes" }, { "-i", "stepbytes" }, { "-f", "stepfactor" },
        { "-n", "iters" }, { "-w", "warmup" }, { "-c", "check" }, { "-m", "agg-iters" }, { "-d", "datatype" },
        { "-o", "redop" }, { "-r", "root" }, { "-g", "gpus" }, { "-t", "nthreads" },
        { "--warmup_iters", "warmup" }, { "--agg_iters", "agg-iters" }, { "--ngpus", "gpus" },
    };
    for (guint i = 0; i < G_N_ELEMENTS(letters); i++) {
        const cs_scenario_key_t *k = cs_scenario_key_by_flag(letters[i].flag);
        g_assert_nonnull(k);
        g_assert_cmpstr(k->key, ==, letters[i].key);
    }
    g_assert_null(cs_scenario_key_by_flag("-x"));
    g_assert_null(cs_scenario_key_by_flag("-J"));   /* nccl-tests's JSON is another format */
    g_assert_null(cs_scenario_key_by_flag("--bogus"));
}

static gboolean parse_topo_flags(cs_topo_spec_t *spec, const char *const *args, GError **err)
{
    g_autoptr(GOptionContext) ctx = g_option_context_new(NULL);
    g_option_context_add_group(ctx, cs_topo_spec_option_group(spec));
    g_autoptr(GPtrArray) owned = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(owned, g_strdup("test"));
    for (int i = 0; args[i] != NULL; i++)
        g_ptr_array_add(owned, g_strdup(args[i]));
    /* GOption reorders and shortens the vector it is given: hand it a copy */
    int argc = (int)owned->len;
    g_autofree char **argv = g_new0(char *, argc + 1);
    memcpy(argv, owned->pdata, sizeof(char *) * argc);
    char **av = argv;
    return g_option_context_parse(ctx, &argc, &av, err);
}

static void test_topo_flags(void)
{
    cs_topo_spec_t spec;
    cs_topo_spec_init(&spec);
    g_autoptr(GError) err = NULL;
    const char *const ok[] = { "--topo", "pcie", "--gpu", "rtx4090", "-g", "2", "--sockets", "1", "--p2p", "on",
                               "--nodes", "3", "--nic", "roce-100g", "--nics-per-node", "2", "--fabric", "rail",
                               "--oversubscription", "2:1", NULL };
    g_assert_true(parse_topo_flags(&spec, ok, &err));
    g_assert_no_error(err);
    g_assert_cmpstr(spec.preset, ==, "pcie");
    g_assert_cmpstr(spec.gpu, ==, "rtx4090");
    g_assert_cmpint(spec.gpus, ==, 2);
    g_assert_cmpint(spec.sockets, ==, 1);
    g_assert_cmpint(spec.p2p, ==, 1);
    g_assert_cmpint(spec.nodes, ==, 3);
    g_assert_cmpstr(spec.nic, ==, "roce-100g");
    g_assert_cmpint(spec.nics_per_node, ==, 2);
    g_assert_cmpstr(spec.fabric, ==, "rail");
    g_assert_cmpfloat(spec.oversubscription, ==, 2);

    /* a later --topo with a path replaces the preset */
    const char *const file[] = { "--topo", "topologies/x.xml", NULL };
    g_assert_true(parse_topo_flags(&spec, file, &err));
    g_assert_cmpstr(spec.file, ==, "topologies/x.xml");
    g_assert_null(spec.preset);
    cs_topo_spec_clear(&spec);

    static const struct { const char *args[3]; const char *msg; } bad[] = {
        { { "--gpus", "0", NULL }, "collsim: --gpus: 0 is out of range; expected a number of GPUs per node of at least 1" },
        { { "-g", "two", NULL }, "collsim: -g: 'two' is not a whole number; expected a number of GPUs per node of at least 1" },
        { { "--sockets", "3", NULL }, "collsim: --sockets: 3 is out of range; expected 1 or 2" },
        { { "--nodes", "0", NULL }, "collsim: --nodes: 0 is out of range; expected a number of nodes from 1 to 65536" },
        { { "--nodes", "65537", NULL }, "collsim: --nodes: 65537 is out of range; expected a number of nodes from 1 to 65536" },
        { { "--nics-per-node", "145", NULL }, "collsim: --nics-per-node: 145 is out of range; expected a number of NICs per node from 1 to 144" },
        { { "--topo", "dgxh100", NULL }, NULL },
        { { "--oversubscription", "x", NULL }, "collsim: --oversubscription: 'x' is not a ratio; expected a number such as 2 or 2:1" },
    };
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        cs_topo_spec_init(&spec);
        g_clear_error(&err);
        g_assert_false(parse_topo_flags(&spec, bad[i].args, &err));
        g_assert_error(err, CS_ERROR, CS_ERROR_INPUT);
        if (bad[i].msg != NULL) {
            g_assert_cmpstr(err->message, ==, bad[i].msg);
        } else {
            g_autofree char *m = g_strdup_printf("collsim: --topo: unknown preset 'dgxh100' and no such file; "
                                                 "expected one of %s, or a topology file", cs_preset_names());
            g_assert_cmpstr(err->message, ==, m);
        }
        cs_topo_spec_clear(&spec);
    }
}

static void test_merge(void)
{
    cs_scenario_t s;
    cs_scenario_init(&s);
    g_autoptr(GError) err = NULL;
    g_assert_true(load_text(&s, "[topology]\npreset = dgx-h100\nnodes = 2\nnic = ib-ndr\np2p = on\n", &err));
    cs_topo_spec_t f;
    cs_topo_spec_init(&f);
    f.nodes = 8;
    f.fabric = g_strdup("fat-tree");
    cs_topo_spec_merge(&s.topo, &f);
    g_assert_cmpstr(s.topo.preset, ==, "dgx-h100");   /* kept */
    g_assert_cmpstr(s.topo.nic, ==, "ib-ndr");        /* kept */
    g_assert_cmpint(s.topo.p2p, ==, 1);               /* kept: flags' p2p is unset (-1) */
    g_assert_cmpint(s.topo.nodes, ==, 8);             /* flag wins */
    g_assert_cmpstr(s.topo.fabric, ==, "fat-tree");
    g_assert_cmpstr(s.topo.origin, ==, "s.ini:2: preset");
    cs_topo_spec_clear(&f);

    /* --topo replaces both file and preset, and the origin */
    cs_topo_spec_init(&f);
    f.file = g_strdup("my.xml");
    cs_topo_spec_merge(&s.topo, &f);
    g_assert_cmpstr(s.topo.file, ==, "my.xml");
    g_assert_null(s.topo.preset);
    g_assert_null(s.topo.origin);
    cs_topo_spec_clear(&f);
    cs_scenario_clear(&s);
}

static void test_build(void)
{
    g_autoptr(GError) err = NULL;
    cs_topo_spec_t spec;
    cs_topo_spec_init(&spec);
    spec.preset = g_strdup("dgx-h100");
    spec.gpus = 4;
    g_autoptr(cs_topo_t) t = cs_topo_spec_build(&spec, &err);
    g_assert_no_error(err);
    g_assert_cmpint(t->ngpus, ==, 4);
    g_assert_cmpint(t->nnodes, ==, 1);

    spec.gpus = 0;
    spec.nodes = 2;
    g_autoptr(cs_topo_t) c = cs_topo_spec_build(&spec, &err);
    g_assert_no_error(err);
    g_assert_cmpint(c->ngpus, ==, 16);
    g_assert_cmpint(c->nnodes, ==, 2);

    spec.nodes = 0;
    spec.gpus = 9;
    g_autoptr(cs_topo_t) none = cs_topo_spec_build(&spec, &err);
    g_assert_null(none);
    g_assert_error(err, CS_ERROR, CS_ERROR_INPUT);
    g_assert_true(g_str_has_prefix(err->message, "collsim: --gpus: "));
    g_clear_error(&err);
    cs_topo_spec_clear(&spec);

    g_autoptr(cs_topo_t) nothing = cs_topo_spec_build(&spec, &err);
    g_assert_null(nothing);
    g_assert_cmpstr(err->message, ==,
                    "collsim: no topology given; expected --topo PRESET|FILE or [topology] preset or file");
    g_clear_error(&err);

    /* oversubscription needs uplinks to narrow: none on one node, a
     * fat-tree of one leaf (4 x 8 NDR NICs fill the 32 down ports of one
     * Quantum-2 leaf) or rails of one leaf each; 5 nodes need 2 leaves */
    static const struct { int nodes; const char *fabric; const char *msg; } over[] = {
        { 1, NULL, "collsim: --oversubscription: 2 does not apply: 1 node(s) without a network fabric; expected it "
                   "with --nodes above 1 and a fabric with a spine, or none" },
        { 4, "fat-tree", "collsim: --oversubscription: 2 does not apply: the fat-tree of 4 nodes is one leaf switch, "
                         "with no uplinks; expected it from 5 nodes up, or none" },
        { 4, "rail", "collsim: --oversubscription: 2 does not apply: the rail fabric of 4 nodes is one leaf per rail, "
                     "with no spine (traffic between rails stays inside the nodes); expected it from 33 nodes up, "
                     "or --fabric fat-tree, or none" },
        { 5, "fat-tree", NULL },
        { 33, "rail", NULL },
    };
    for (guint i = 0; i < G_N_ELEMENTS(over); i++) {
        cs_topo_spec_init(&spec);
        spec.preset = g_strdup("dgx-h100");
        spec.nodes = over[i].nodes;
        spec.fabric = g_strdup(over[i].fabric);
        spec.oversubscription = 2;
        g_autoptr(cs_topo_t) o = cs_topo_spec_build(&spec, &err);
        if (over[i].msg == NULL) {
            g_assert_no_error(err);
            g_assert_cmpfloat(o->fabric.oversubscription, ==, 2);
        } else {
            g_assert_null(o);
            g_assert_cmpstr(err->message, ==, over[i].msg);
            g_clear_error(&err);
        }
        spec.oversubscription = 1;   /* true of any fabric: accepted */
        g_autoptr(cs_topo_t) one = cs_topo_spec_build(&spec, &err);
        g_assert_no_error(err);
        g_assert_nonnull(one);
        cs_topo_spec_clear(&spec);
    }
}

/* A scenario file names its topology relative to itself. */
static void test_load_file(void)
{
    g_autoptr(GError) err = NULL;
    g_autofree char *dir = g_dir_make_tmp("cs-scen-XXXXXX", &err);
    g_autofree char *path = g_build_filename(dir, "a.ini", NULL);
    g_assert_true(g_file_set_contents(path, "[topology]\nfile = topo.xml\n[scenario]\ncalibration = /abs/p.ini\n",
                                      -1, NULL));
    cs_scenario_t s;
    cs_scenario_init(&s);
    g_assert_true(cs_scenario_load(&s, path, &err));
    g_assert_no_error(err);
    g_autofree char *want = g_build_filename(dir, "topo.xml", NULL);
    g_assert_cmpstr(s.topo.file, ==, want);
    g_assert_cmpstr(s.calibration, ==, "/abs/p.ini");
    g_assert_cmpstr(s.path, ==, path);
    cs_scenario_clear(&s);
    g_unlink(path);
    g_rmdir(dir);

    cs_scenario_init(&s);
    g_assert_false(cs_scenario_load(&s, path, &err));
    g_autofree char *msg = g_strdup_printf("%s: cannot read the scenario (No such file or directory); expected a "
                                           "readable INI file", path);
    g_assert_cmpstr(err->message, ==, msg);
    cs_scenario_clear(&s);
}

/* The example scenarios shipped in scenarios/ all load and validate. */
static void test_examples(void)
{
    g_autofree char *dir = g_build_filename(CS_SRCDIR, "scenarios", NULL);
    GDir *d = g_dir_open(dir, 0, NULL);
    if (d == NULL) {
        g_test_skip("no scenarios/ directory");
        return;
    }
    int n = 0;
    const char *name;
    while ((name = g_dir_read_name(d)) != NULL) {
        if (!g_str_has_suffix(name, ".ini"))
            continue;
        g_autofree char *path = g_build_filename(dir, name, NULL);
        cs_scenario_t s;
        cs_scenario_init(&s);
        g_autoptr(GError) err = NULL;
        if (!cs_scenario_load(&s, path, &err) || !cs_scenario_validate(&s, &err))
            g_printerr("%s\n", err->message);
        g_assert_no_error(err);
        g_assert_nonnull(s.name);
        /* and the presets' builders take their options */
        g_autoptr(cs_topo_t) t = cs_topo_spec_build(&s.topo, &err);
        if (t == NULL)
            g_printerr("%s: %s\n", name, err->message);
        g_assert_no_error(err);
        /* (a file without --nodes has its own node count) */
        if (s.topo.file == NULL || s.topo.nodes > 1)
            g_assert_cmpint(t->nnodes, ==, s.topo.nodes > 0 ? s.topo.nodes : 1);
        cs_scenario_clear(&s);
        n++;
    }
    g_dir_close(d);
    g_assert_cmpint(n, >=, 10);
}

/* [job NAME] groups: fields, defaults, origins, and the round trip. */
static void test_jobs(void)
{
    static const char text[] =
        "[collective]\nop = allgather\n"
        "[job train-a]\nnodes = 0-3, 8\ngpus = 4-7\nsize = 1G\nstart = 250us\niters = 3\n"
        "[job b]\nop = broadcast\nroot = 2\ndatatype = half\nsize = 64M\n";
    cs_scenario_t s;
    cs_scenario_init(&s);
    GError *err = NULL;
    g_assert_true(load_text(&s, text, &err));
    g_assert_no_error(err);
    g_assert_cmpuint(s.jobs->len, ==, 2);
    const cs_scenario_job_t *a = g_ptr_array_index(s.jobs, 0), *b = g_ptr_array_index(s.jobs, 1);
    g_assert_cmpstr(a->name, ==, "train-a");
    g_assert_cmpstr(a->nodes, ==, "0-3, 8");
    g_assert_cmpstr(a->gpus, ==, "4-7");
    g_assert_cmpint(a->coll, ==, -1);            /* from [collective] when run */
    g_assert_cmpuint(a->size, ==, G_GUINT64_CONSTANT(1) << 30);
    g_assert_cmpfloat_with_epsilon(a->start_s, 250e-6, 1e-15);
    g_assert_cmpint(a->iters, ==, 3);
    g_assert_cmpstr(a->origin, ==, "s.ini:3");
    g_assert_cmpint(b->coll, ==, CS_COLL_BROADCAST);
    g_assert_cmpint(b->root, ==, 2);
    g_assert_cmpint(b->dtype, ==, CS_DTYPE_HALF);
    g_assert_cmpint(b->iters, ==, 1);
    g_assert_null(b->nodes);
    /* back to INI and in again: the same jobs */
    g_autofree char *ini = cs_scenario_to_ini(&s);
    cs_scenario_t t;
    cs_scenario_init(&t);
    g_assert_true(cs_scenario_load_mem(&t, ini, strlen(ini), "back.ini", &err));
    g_assert_no_error(err);
    g_assert_cmpuint(t.jobs->len, ==, 2);
    const cs_scenario_job_t *a2 = g_ptr_array_index(t.jobs, 0), *b2 = g_ptr_array_index(t.jobs, 1);
    g_assert_cmpstr(a2->name, ==, "train-a");
    g_assert_cmpstr(a2->nodes, ==, a->nodes);
    g_assert_cmpfloat(a2->start_s, ==, a->start_s);
    g_assert_cmpuint(a2->size, ==, a->size);
    g_assert_cmpint(a2->coll, ==, -1);
    g_assert_cmpint(b2->root, ==, 2);
    g_assert_cmpint(b2->dtype, ==, CS_DTYPE_HALF);
    cs_scenario_clear(&t);
    cs_scenario_clear(&s);

    /* index lists */
    gboolean m[10];
    g_assert_true(cs_scenario_index_list("0-2, 7,9", 10, "node", m, &err));
    const gboolean want[10] = { 1, 1, 1, 0, 0, 0, 0, 1, 0, 1 };
    for (int i = 0; i < 10; i++)
        g_assert_cmpint(m[i], ==, want[i]);
    g_assert_true(cs_scenario_index_list("all", 10, "node", m, &err));
    g_assert_true(m[0] && m[9]);
    g_assert_false(cs_scenario_index_list("3-1", 10, "node", m, &err));
    g_assert_cmpstr(err->message, ==, "'3-1' is not an index list; expected node indices such as 0-3,8");
    g_clear_error(&err);
    g_assert_false(cs_scenario_index_list("10", 10, "GPU", m, &err));
    g_assert_cmpstr(err->message, ==, "GPU 10 does not exist; expected 0 to 9");
    g_clear_error(&err);
    expect_error("[job x]\nsize = 0\n", "s.ini:2: size: '0' is not a size; expected a size of at least 1 byte such as 1G");
    expect_error("[job x]\niters = 0\n", "s.ini:2: iters: 0 is out of range; expected a number of calls from 1 to 100000");
    expect_error("[job ]\n", "s.ini:1: '' is not a job name; expected letters, digits, '-', '_' or '.' (up to 64)");
}

/* [fabric]: every key parses into its field, the data's priority follows
 * NCCL_IB_TC through the DSCP map (or NCCL_IB_SL with trust pcp), and the
 * keys that contradict each other are refused naming the line. */
static void test_fabric(void)
{
    static const char ini[] =
        "[fabric]\n"
        "mtu = 1024\n"
        "pfc = 0,3\n"
        "dscp-map = 34:4, 10:0\n"
        "roce-tos = 0x88\n"
        "dcqcn = paper\n"
        "dcqcn-ai = 40Mb/s\n"
        "dcqcn-timer = 55us\n"
        "switch = tomahawk-4\n"
        "pfc-headroom = 64K\n"
        "cable-length = 100\n";
    cs_scenario_t s;
    cs_scenario_init(&s);
    g_autoptr(GError) err = NULL;
    g_assert_true(load_text(&s, ini, &err));
    g_assert_no_error(err);
    const cs_fabric_cfg_t *f = &s.fabric;
    g_assert_cmpuint(f->mtu, ==, 1024);
    g_assert_cmpuint(f->pfc, ==, 0x09);
    g_assert_cmpint(f->dscp_prio[34], ==, 4);
    g_assert_cmpint(f->dscp_prio[26], ==, 3);       /* untouched: DSCP / 8 */
    g_assert_cmpint(f->roce_tos, ==, 136);
    g_assert_cmpint(f->dcqcn, ==, CS_FABRIC_DCQCN_PAPER);
    g_assert_cmpfloat(f->dcqcn_ai_bps, ==, 40e6);
    g_assert_cmpfloat_with_epsilon(f->dcqcn_timer_s, 55e-6, 1e-15);
    g_assert_cmpint(f->pfc_headroom, ==, 65536);
    g_assert_cmpfloat(f->cable_m, ==, 100);
    g_assert_cmpstr(f->origin[CS_FK_SWITCH], ==, "s.ini:9: switch");
    const char *why;
    g_assert_cmpuint(cs_fabric_switch_buffer(f, 400000000000ull, &why), ==, 113000000);
    g_assert_cmpstr(why, ==, "Broadcom Tomahawk 4 (BCM56990)");
    g_assert_true(cs_scenario_fabric_check(&s.fabric, &err));

    /* the priority: the NIC's ToS 136 (DSCP 34 -> 4) unset NCCL_IB_TC;
     * NCCL_IB_TC 106 (DSCP 26 -> 3); trust pcp: NCCL_IB_SL */
    cs_nccl_settings_t ns;
    memset(&ns, 0, sizeof ns);
    ns.ib_tc = ns.ib_sl = -1;
    g_autofree char *why1 = NULL, *why2 = NULL, *why3 = NULL;
    g_assert_cmpint(cs_fabric_data_prio(f, &ns, &why1), ==, 4);
    g_assert_cmpstr(why1, ==, "NCCL_IB_TC unset: the NIC's ToS 136 (roce-tos), DSCP 34, priority 4 by the DSCP map");
    ns.ib_tc = 106;
    g_assert_cmpint(cs_fabric_data_prio(f, &ns, &why2), ==, 3);
    s.fabric.trust = CS_FABRIC_TRUST_PCP;
    ns.ib_sl = 5;
    g_assert_cmpint(cs_fabric_data_prio(f, &ns, &why3), ==, 5);
    g_assert_cmpstr(why3, ==, "NCCL_IB_SL 5: VLAN priority 5 (trust pcp)");
    g_assert_cmpint(cs_fabric_cnp_prio(f), ==, 6);
    cs_scenario_clear(&s);

    /* refused: a bad value (its line), a parameter of something off */
    cs_scenario_init(&s);
    g_assert_false(load_text(&s, "[fabric]\nmtu = 4096\npfc = 8\n", &err));
    g_assert_cmpstr(err->message, ==, "s.ini:3: pfc: '8' is not a list of priorities; expected distinct priorities 0 to 7 "
                    "such as 3 or 3,4, or none");
    g_clear_error(&err);
    cs_scenario_clear(&s);
    cs_scenario_init(&s);
    g_assert_true(load_text(&s, "[fabric]\necn = off\necn-pmax = 0.5\n", &err));
    g_assert_false(cs_scenario_fabric_check(&s.fabric, &err));
    g_assert_cmpstr(err->message, ==, "s.ini:3: ecn-pmax: ECN is off; expected ecn = on with it");
    cs_scenario_clear(&s);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/scenario/defaults", test_defaults);
    g_test_add_func("/scenario/every-key", test_every_key);
    g_test_add_func("/scenario/round-trip", test_round_trip);
    g_test_add_func("/scenario/workload", test_workload);
    g_test_add_func("/scenario/sizes", test_sizes);
    g_test_add_func("/scenario/line-errors", test_line_errors);
    g_test_add_func("/scenario/validate", test_validate);
    g_test_add_func("/scenario/nvlink-bridge", test_nvlink_bridge);
    g_test_add_func("/scenario/keys-and-flags", test_keys_and_flags);
    g_test_add_func("/scenario/topo-flags", test_topo_flags);
    g_test_add_func("/scenario/merge", test_merge);
    g_test_add_func("/scenario/build", test_build);
    g_test_add_func("/scenario/load-file", test_load_file);
    g_test_add_func("/scenario/examples", test_examples);
    g_test_add_func("/scenario/jobs", test_jobs);
    g_test_add_func("/scenario/fabric", test_fabric);
    return g_test_run();
}
