/* The ONNX importer (tgc_onnx_import): round trips over models of ONNX's
 * own test data (import, load, dump, load the dump, dump again: the same
 * text), and models built here byte by byte with a small protobuf writer
 * for what the test data does not show: every unsupported op, attribute
 * and dtype reported at once; names that need cleaning and their clashes;
 * dim_params and unknown dims; opsets before 13 rewritten with the same
 * meaning (checked by running them); truncated and missing files; and the
 * importer under injected allocation failures. */
#include "tests/harness.h"
#include "tests/onnx/pb_writer.h"

#include "support/alloc.h"
#include "support/settings.h"
#include "tgc.h"
#include "tools/remove_tree.h"

#include <CUnit/CUnit.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef TGC_ONNX_TESTDATA
#define TGC_ONNX_TESTDATA "/usr/share/libonnx-testdata/data"
#endif

/* ---- A scratch directory per test ------------------------------------------ */

static char scratch[64];

static const char *scratch_dir(void) {
    if (scratch[0]) tgc_tool_remove_tree(scratch);
    snprintf(scratch, sizeof scratch, "/tmp/tgc-onnx-test-XXXXXX");
    if (mkdtemp(scratch) == NULL) scratch[0] = '\0';
    return scratch;
}

static const char *in_scratch(const char *name) {
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", scratch, name);
    return buf[k];
}

static bool exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

/* The bytes of the file at path (and a NUL after them), their count in
 * *size; NULL when unreadable. */
static char *read_bytes(const char *path, long *size) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    fseek(f, 0, SEEK_END);
    *size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = *size >= 0 ? malloc((size_t)*size + 1) : NULL;
    if (s != NULL && fread(s, 1, (size_t)*size, f) != (size_t)*size) {
        free(s);
        s = NULL;
    }
    if (s != NULL) s[*size] = '\0';
    fclose(f);
    return s;
}

static char *read_text(const char *path) {
    long size;
    return read_bytes(path, &size);
}

static bool has_testdata(void) {
    if (exists(TGC_ONNX_TESTDATA "/node")) return true;
    fprintf(stderr, "(libonnx-testdata not installed: skipped) ");
    return false;
}

/* True when some message of d has rule `rule` and contains every one of the
 * NULL-terminated `parts`. */
static bool has_diag(const tgc_diags *d, const char *rule, const char *const *parts) {
    for (size_t i = 0; i < tgc_diags_count(d); i++) {
        if (strcmp(tgc_diag_rule(d, i), rule) != 0) continue;
        bool all = true;
        for (const char *const *p = parts; *p && all; p++)
            all = strstr(tgc_diag_message(d, i), *p) != NULL;
        if (all) return true;
    }
    return false;
}

/* ---- Running a graph ---------------------------------------------------------------- */

/* Loads yaml, runs it on cpu with one float32 input, returns output 0 (caller releases). */
static tgc_tensor *run_one(const char *yaml, const char *input, int rank, const int64_t *dims, const float *x) {
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    tgc_session *s = NULL;
    tgc_tensor *in = NULL, *out[4] = {0};
    CU_ASSERT(tgc_graph_load(yaml, d, &g) == TGC_OK);
    if (g) CU_ASSERT(tgc_session_create(g, "cpu", NULL, d, &s) == TGC_OK);
    CU_ASSERT(tgc_tensor_create(TGC_FLOAT32, rank, dims, x, &in) == TGC_OK);
    if (s) CU_ASSERT(tgc_session_run(s, 1, &input, &in, out, d) == TGC_OK);
    tgc_diags_print(d, stderr);
    for (int i = 1; i < 4; i++)
        tgc_tensor_release(out[i]);
    tgc_tensor_release(in);
    tgc_session_free(s);
    tgc_graph_free(g);
    tgc_diags_free(d);
    return out[0];
}

/* ---- Round trips over ONNX's test data ------------------------------------------------- */

static char *dump_file(const tgc_graph *g, const char *path) {
    FILE *f = fopen(path, "w");
    if (f == NULL) return NULL;
    tgc_diags *d = tgc_diags_create();
    tgc_status st = tgc_graph_dump_yaml(g, f, scratch, d);
    tgc_diags_print(d, stderr);
    tgc_diags_free(d);
    fclose(f);
    return st == TGC_OK ? read_text(path) : NULL;
}

static void test_roundtrip_testdata(void) {
    if (!has_testdata()) return;
    static const char *const models[] = {
        "node/test_conv_with_strides_padding", /* Conv, two graph inputs */
        "node/test_unsqueeze_axis_0",          /* an int64 input */
        "node/test_constant",                  /* Constant -> initializer */
        "node/test_split_equal_parts_1d",      /* several outputs: y:1 */
        "node/test_gemm_all_attributes",       /* float attributes */
        "pytorch-converted/test_Conv2d",       /* opset 6, weights as .npy */
        "pytorch-converted/test_Softmax",      /* opset 6 Softmax: Flatten, Softmax, Reshape */
        "pytorch-operator/test_operator_mm",
        "simple/test_single_relu_model",
        "node/test_loop11",                    /* a Loop: its body reads outer values */
        "node/test_if_seq",                    /* If whose branches give sequences */
        "node/test_scan9_sum",                 /* Scan */
        "node/test_scan_sum",                  /* opset-8 Scan: a Scan per batch element */
        "node/test_loop16_seq_none",           /* an optional sequence carried, an If inside the body */
        "node/test_sequence_map_add_2_sequences", /* SequenceMap */
        "node/test_optional_get_element_sequence",
        "simple/test_sequence_model1",         /* sequence inputs, SequenceInsert, SequenceAt */
    };
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        scratch_dir();
        char onnx[512];
        snprintf(onnx, sizeof onnx, "%s/%s/model.onnx", TGC_ONNX_TESTDATA, models[i]);
        tgc_diags *d = tgc_diags_create();
        tgc_status st = tgc_onnx_import(onnx, in_scratch("m.yaml"), d);
        if (st != TGC_OK) {
            fprintf(stderr, "%s:\n", models[i]);
            tgc_diags_print(d, stderr);
        }
        CU_ASSERT(st == TGC_OK);
        tgc_graph *a = NULL, *b = NULL;
        CU_ASSERT(tgc_graph_load(in_scratch("m.yaml"), d, &a) == TGC_OK);
        char *first = a ? dump_file(a, in_scratch("dump1.yaml")) : NULL;
        CU_ASSERT(first != NULL);
        CU_ASSERT(first && tgc_graph_load(in_scratch("dump1.yaml"), d, &b) == TGC_OK);
        char *second = b ? dump_file(b, in_scratch("dump2.yaml")) : NULL;
        CU_ASSERT(first && second && strcmp(first, second) == 0);
        CU_ASSERT(a && b && tgc_graph_node_count(a) == tgc_graph_node_count(b));
        free(first);
        free(second);
        tgc_graph_free(a);
        tgc_graph_free(b);
        tgc_diags_free(d);
    }
    /* Weights go to STEM_weights/ beside the YAML. */
    scratch_dir();
    tgc_diags *d = tgc_diags_create();
    CU_ASSERT(tgc_onnx_import(TGC_ONNX_TESTDATA "/pytorch-converted/test_Conv2d/model.onnx", in_scratch("conv.yaml"),
                              d) == TGC_OK);
    char *text = read_text(in_scratch("conv.yaml"));
    CU_ASSERT(text && strstr(text, "file: conv_weights/") != NULL);
    CU_ASSERT(exists(in_scratch("conv_weights")));
    free(text);
    tgc_diags_free(d);
}

static void test_tensor_load(void) {
    if (!has_testdata()) return;
    tgc_diags *d = tgc_diags_create();
    tgc_tensor *t = NULL;
    CU_ASSERT_FATAL(tgc_onnx_tensor_load(TGC_ONNX_TESTDATA "/node/test_abs/test_data_set_0/input_0.pb", d, &t) ==
                    TGC_OK);
    CU_ASSERT(tgc_tensor_dtype(t) == TGC_FLOAT32);
    CU_ASSERT(tgc_tensor_rank(t) == 3 && tgc_tensor_dims(t)[0] == 3 && tgc_tensor_dims(t)[2] == 5);
    tgc_tensor_release(t);
    /* A model file is not a TensorProto of the right shape of data... */
    tgc_tensor *bad = NULL;
    CU_ASSERT(tgc_onnx_tensor_load("/nonexistent/x.pb", d, &bad) == TGC_ERR_IO && bad == NULL);
    tgc_diags_free(d);
}

/* ---- Models built here ---------------------------------------------------------------------- */

/* Two Bars, a Foo (ops no ONNX opset has), a Relu with an attribute it
 * lacks, a Cast to complex64: one import reports them all. */
static void test_unsupported_lists_all(void) {
    scratch_dir();
    pb g = {0};
    const char *d2[] = {"2", "3"};
    pb x = value_info("x", ONNX_FLOAT, 2, d2);
    pb_msg(&g, 11, &x);
    pb n1 = node("l1", "Bar", (const char *[]){"x", NULL}, (const char *[]){"a", NULL}, NULL, 0);
    pb n2 = node("l2", "Bar", (const char *[]){"a", NULL}, (const char *[]){"b", NULL}, NULL, 0);
    pb n3 = node("f1", "Foo", (const char *[]){"b", NULL}, (const char *[]){"c", NULL}, NULL, 0);
    pb bogus = attr_int("bogus", 1);
    pb n4 = node("r1", "Relu", (const char *[]){"c", NULL}, (const char *[]){"d", NULL}, &bogus, 1);
    pb to = attr_int("to", ONNX_COMPLEX64);
    pb n5 = node("c1", "Cast", (const char *[]){"d", NULL}, (const char *[]){"e", NULL}, &to, 1);
    pb_msg(&g, 1, &n1);
    pb_msg(&g, 1, &n2);
    pb_msg(&g, 1, &n3);
    pb_msg(&g, 1, &n4);
    pb_msg(&g, 1, &n5);
    pb y = value_info("e", ONNX_FLOAT, 2, d2);
    pb_msg(&g, 12, &y);
    write_model(in_scratch("bad.onnx"), 13, &g);

    tgc_diags *d = tgc_diags_create();
    CU_ASSERT(tgc_onnx_import(in_scratch("bad.onnx"), in_scratch("bad.yaml"), d) == TGC_ERR_UNSUPPORTED);
    CU_ASSERT(has_diag(d, "unsupported-op", (const char *[]){"'Bar'", "2 nodes", "'l1'", "'l2'", NULL}));
    CU_ASSERT(has_diag(d, "unsupported-op", (const char *[]){"'Foo'", "1 node", "'f1'", NULL}));
    CU_ASSERT(has_diag(d, "unsupported-attribute", (const char *[]){"'Relu'", "'bogus'", "'r1'", NULL}));
    CU_ASSERT(has_diag(d, "unsupported-dtype", (const char *[]){"COMPLEX64", "'c1'", NULL}));
    CU_ASSERT(tgc_diags_error_count(d) == 4);
    CU_ASSERT(!exists(in_scratch("bad.yaml")));
    tgc_diags_free(d);
}


/* Unsupported ops inside subgraphs are reported with the path of their
 * node: a Loop body holding a Foo and an If whose branch holds a Bar. */
static void test_unsupported_inside_subgraphs(void) {
    scratch_dir();
    const char *d1[] = {"1"};
    pb inner = {0}; /* then_branch: Bar(v) */
    pb bar = node("bar1", "Bar", (const char *[]){"v", NULL}, (const char *[]){"t", NULL}, NULL, 0);
    pb_msg(&inner, 1, &bar);
    pb_str(&inner, 2, "then");
    pb t_out = value_info("t", ONNX_FLOAT, 1, d1);
    pb_msg(&inner, 12, &t_out);
    pb other = {0}; /* else_branch: v itself */
    pb_str(&other, 2, "else");
    pb e_out = value_info("v", ONNX_FLOAT, 1, d1);
    pb_msg(&other, 12, &e_out);
    pb body = {0}; /* body(i, c, v): Foo(v), If(c) */
    pb i_in = value_info("i", ONNX_INT64, 0, NULL), c_in = value_info("c", 9, 0, NULL);
    pb v_in = value_info("v", ONNX_FLOAT, 1, d1);
    pb_msg(&body, 11, &i_in);
    pb_msg(&body, 11, &c_in);
    pb_msg(&body, 11, &v_in);
    pb foo = node("foo1", "Foo", (const char *[]){"v", NULL}, (const char *[]){"w", NULL}, NULL, 0);
    pb branches[2] = {attr_graph("then_branch", &inner), attr_graph("else_branch", &other)};
    pb pick = node("pick1", "If", (const char *[]){"c", NULL}, (const char *[]){"p", NULL}, branches, 2);
    pb_msg(&body, 1, &foo);
    pb_msg(&body, 1, &pick);
    pb_str(&body, 2, "body");
    pb c_out = value_info("c", 9, 0, NULL), w_out = value_info("p", ONNX_FLOAT, 1, d1);
    pb_msg(&body, 12, &c_out);
    pb_msg(&body, 12, &w_out);
    pb g = {0};
    pb m = value_info("m", ONNX_INT64, 0, NULL), x = value_info("x", ONNX_FLOAT, 1, d1);
    pb_msg(&g, 11, &m);
    pb_msg(&g, 11, &x);
    pb battr = attr_graph("body", &body);
    pb loop = node("loop1", "Loop", (const char *[]){"m", "", "x", NULL}, (const char *[]){"y", NULL}, &battr, 1);
    pb_msg(&g, 1, &loop);
    pb y = value_info("y", ONNX_FLOAT, 1, d1);
    pb_msg(&g, 12, &y);
    write_model(in_scratch("nested.onnx"), 13, &g);

    tgc_diags *d = tgc_diags_create();
    CU_ASSERT(tgc_onnx_import(in_scratch("nested.onnx"), in_scratch("nested.yaml"), d) == TGC_ERR_UNSUPPORTED);
    CU_ASSERT(has_diag(d, "unsupported-op", (const char *[]){"'Foo'", "(1 node: 'loop1' body: 'foo1')", NULL}));
    CU_ASSERT(has_diag(d, "unsupported-op",
                       (const char *[]){"'Bar'", "(1 node: 'loop1' body: 'pick1' then_branch: 'bar1')", NULL}));
    CU_ASSERT(tgc_diags_error_count(d) == 2);
    tgc_diags_free(d);
}

/* Every problem at once (tests/data/onnx_problems/every_problem.onnx, made
 * by make_models.py): ops tgc lacks at the top, in an If's branches and in
 * a custom op's body, a custom-domain op named Constant, an attribute, a
 * dtype, and the attribute values only
 * inference refuses (Pad's "wrap", a Resize coordinate mode), each once,
 * with its node's path; the Relu after the refused Pad is not blamed, and
 * nothing is left behind (no YAML, no probe folder). */
static void test_every_problem_at_once(void) {
    scratch_dir();
    char tmpdir[128];
    snprintf(tmpdir, sizeof tmpdir, "%s", in_scratch("tmp"));
    CU_ASSERT_FATAL(mkdir(tmpdir, 0700) == 0);
    const char *old = getenv("TMPDIR");
    char *saved = old != NULL ? strdup(old) : NULL;
    setenv("TMPDIR", tmpdir, 1);
    tgc_settings_read(); /* as a session would when made: an import makes none */
    tgc_diags *d = tgc_diags_create();
    CU_ASSERT(tgc_onnx_import(tgc_test_path("tests/data/onnx_problems/every_problem.onnx"), in_scratch("p.yaml"), d) ==
              TGC_ERR_UNSUPPORTED);
    if (saved != NULL) setenv("TMPDIR", saved, 1);
    else unsetenv("TMPDIR");
    tgc_settings_read();
    free(saved);
    CU_ASSERT(has_diag(d, "unsupported-op", (const char *[]){"'Bar'", "'top/bar'", NULL}));
    CU_ASSERT(has_diag(d, "unsupported-op", (const char *[]){"'FooOp'", "'top/if' then_branch: 'then/foo'", NULL}));
    CU_ASSERT(
        has_diag(d, "unsupported-op", (const char *[]){"'Custom' of domain 'com.example'", "'top/custom'", NULL}));
    CU_ASSERT(has_diag(d, "unsupported-op", (const char *[]){"'Baz'", "'top/custom' body: 'custom/baz'", NULL}));
    CU_ASSERT(has_diag(d, "unsupported-attribute", (const char *[]){"'LeakyRelu'", "'bogus'", "'top/leaky'", NULL}));
    CU_ASSERT(has_diag(d, "unsupported-dtype", (const char *[]){"COMPLEX64", "'top/if' else_branch: 'else/cast'", NULL}));
    CU_ASSERT(has_diag(d, "bad-attribute",
                       (const char *[]){"node 'else/resize' (Resize) in 'top/if' else_branch",
                                        "'coordinate_transformation_mode' is 'tf_crop_and_resize_bogus'", NULL}));
    CU_ASSERT(has_diag(d, "unsupported",
                       (const char *[]){"node 'then/pad_wrap' (Pad) in 'top/if' then_branch", "'wrap'", NULL}));
    CU_ASSERT(has_diag(d, "unsupported", (const char *[]){"node 'top/pad_wrap' (Pad):", "'wrap'", NULL}));
    CU_ASSERT(has_diag(d, "unsupported-op",
                       (const char *[]){"'Constant' of domain 'com.example'", "'top/not_onnx_constant'", NULL}));
    CU_ASSERT(tgc_diags_error_count(d) == 10);
    tgc_diags_print(d, stderr);
    CU_ASSERT(!exists(in_scratch("p.yaml")));
    CU_ASSERT(rmdir(tmpdir) == 0); /* the probe's folder went */
    tgc_diags_free(d);
}

/* A file of about 1.5 MB nesting 300,000 messages (graph, node, attribute,
 * graph, ...) is refused before protobuf-c, whose unpack recurses once a
 * level, reads it (it overflowed the stack); 20 nested If branches still
 * parse, and are refused as nesting subgraphs deeper than 16. */
static void test_nesting_bound(void) {
    scratch_dir();
    enum { LEVELS = 300000 };
    static const int field[3] = {1, 5, 6}; /* GraphProto.node, NodeProto.attribute, AttributeProto.g */
    size_t *len = malloc((LEVELS + 1) * sizeof *len);
    CU_ASSERT_FATAL(len != NULL);
    len[LEVELS] = 0; /* len[i]: the bytes inside the message at level i */
    for (int i = LEVELS - 1; i >= 0; i--) {
        size_t v = len[i + 1], bytes = 1;
        while (v >= 0x80) v >>= 7, bytes++;
        len[i] = 1 + bytes + len[i + 1];
    }
    pb g = {0};
    for (int i = 0; i < LEVELS; i++) {
        pb_varint(&g, (uint64_t)field[i % 3] << 3 | 2);
        pb_varint(&g, len[i + 1]);
    }
    CU_ASSERT(g.n == len[0]);
    free(len);
    write_model(in_scratch("deep.onnx"), 13, &g);
    tgc_diags *d = tgc_diags_create();
    CU_ASSERT(tgc_onnx_import(in_scratch("deep.onnx"), in_scratch("deep.yaml"), d) == TGC_ERR_INVALID);
    CU_ASSERT(has_diag(d, "over-limit", (const char *[]){"nest deeper than 100 levels", NULL}));
    CU_ASSERT(!exists(in_scratch("deep.yaml")));
    tgc_diags_free(d);

    pb branch = {0}; /* If(c) nested 20 deep in then_branch, each else_branch empty */
    for (int k = 0; k < 20; k++) {
        pb attrs[2] = {{0}, {0}}, empty = {0};
        pb_str(&attrs[0], 1, "then_branch");
        pb_int(&attrs[0], 20, 5);
        pb_msg(&attrs[0], 6, &branch);
        pb_str(&attrs[1], 1, "else_branch");
        pb_int(&attrs[1], 20, 5);
        pb_msg(&attrs[1], 6, &empty);
        pb n = node(NULL, "If", (const char *[]){"c", NULL}, (const char *[]){"y", NULL}, attrs, 2);
        pb_msg(&branch, 1, &n);
    }
    write_model(in_scratch("if20.onnx"), 13, &branch);
    d = tgc_diags_create();
    CU_ASSERT(tgc_onnx_import(in_scratch("if20.onnx"), in_scratch("if20.yaml"), d) != TGC_OK);
    CU_ASSERT(has_diag(d, "unsupported-attribute", (const char *[]){"subgraphs nest deeper than 16 levels", NULL}));
    CU_ASSERT(!has_diag(d, "over-limit", (const char *[]){NULL}));
    tgc_diags_free(d);
}

/* Names outside tgc's alphabet, their clashes, dim_params and unknown dims. */
static void test_names_and_symbols(void) {
    scratch_dir();
    pb g = {0};
    pb_str(&g, 2, "my graph");
    const char *dims[] = {"batch size", "", "3"};
    pb x = value_info("x:0", ONNX_FLOAT, 3, dims);
    pb x2 = value_info("x_0", ONNX_FLOAT, 3, dims);
    pb_msg(&g, 11, &x);
    pb_msg(&g, 11, &x2);
    pb n1 = node("add", "Add", (const char *[]){"x:0", "x_0", NULL}, (const char *[]){"sum out", NULL}, NULL, 0);
    pb n2 = node(NULL, "Relu", (const char *[]){"sum out", NULL}, (const char *[]){"y/0", NULL}, NULL, 0);
    pb_msg(&g, 1, &n1);
    pb_msg(&g, 1, &n2);
    pb y = value_info("y/0", ONNX_FLOAT, 3, dims);
    pb_msg(&g, 12, &y);
    write_model(in_scratch("names.onnx"), 17, &g);

    tgc_diags *d = tgc_diags_create();
    CU_ASSERT(tgc_onnx_import(in_scratch("names.onnx"), in_scratch("names.yaml"), d) == TGC_OK);
    tgc_diags_print(d, stderr);
    char *text = read_text(in_scratch("names.yaml"));
    CU_ASSERT_FATAL(text != NULL);
    CU_ASSERT(strstr(text, "name: my_graph") != NULL);
    /* "x:0" would read as output 0 of x: it becomes x_0, and keeps its name beside. */
    CU_ASSERT(strstr(text, "{name: x_0, source_name: 'x:0', dtype: float32, shape: [batch_size, x_0_dim1, 3]}") !=
              NULL);
    CU_ASSERT(strstr(text, "{name: x_0_1, source_name: x_0, dtype: float32, shape: [batch_size, x_0_1_dim1, 3]}") !=
              NULL);
    CU_ASSERT(strstr(text, "inputs: [x_0, x_0_1]") != NULL);
    CU_ASSERT(strstr(text, "outputs: [y/0]") != NULL);
    CU_ASSERT(strstr(text, "source_name: add") != NULL); /* the ONNX node's name, beside tgc's ("sum_out") */
    CU_ASSERT(strstr(text, "#   x:0 -> x_0\n") != NULL); /* the header keeps the map */
    free(text);

    /* A session takes the ONNX names first ("x:0" and "x_0", as written in
     * the model), then tgc's where a name is no input's ONNX name ("x_0_1").
     * A name that is neither lists the inputs. */
    tgc_graph *graph = NULL;
    tgc_session *s = NULL;
    CU_ASSERT_FATAL(tgc_graph_load(in_scratch("names.yaml"), d, &graph) == TGC_OK);
    CU_ASSERT_FATAL(tgc_session_create(graph, "cpu", NULL, d, &s) == TGC_OK);
    CU_ASSERT(tgc_session_input_count(s) == 2);
    CU_ASSERT(strcmp(tgc_session_input_name(s, 0), "x:0") == 0 && strcmp(tgc_session_input_name(s, 1), "x_0") == 0);
    CU_ASSERT(strcmp(tgc_session_output_name(s, 0), "y/0") == 0);
    float xa[6] = {1, -2, 3, -4, 5, -6}, xb[6] = {1, 1, 1, 1, 1, 1};
    tgc_tensor *ins[2] = {NULL, NULL}, *out = NULL;
    CU_ASSERT(tgc_tensor_create(TGC_FLOAT32, 3, (int64_t[]){1, 2, 3}, xa, &ins[0]) == TGC_OK);
    CU_ASSERT(tgc_tensor_create(TGC_FLOAT32, 3, (int64_t[]){1, 2, 3}, xb, &ins[1]) == TGC_OK);
    const char *by_onnx[] = {"x_0", "x:0"}, *by_tgc[] = {"x_0_1", "x:0"};
    for (int k = 0; k < 2; k++) {
        CU_ASSERT(tgc_session_run(s, 2, k == 0 ? by_onnx : by_tgc, (tgc_tensor *[]){ins[1], ins[0]}, &out,
                  d) == TGC_OK);
        if (out != NULL) { /* Relu(x:0 + x_0), by hand */
            const float *y = tgc_tensor_data(out);
            CU_ASSERT(y[0] == 2 && y[1] == 0 && y[2] == 4 && y[3] == 0 && y[4] == 6 && y[5] == 0);
        }
        tgc_tensor_release(out);
        out = NULL;
    }
    CU_ASSERT(tgc_session_run(s, 1, (const char *[]){"x"}, ins, &out, d) == TGC_ERR_INVALID);
    CU_ASSERT(has_diag(d, "bad-feed",
                       (const char *[]){"'x' is not a graph input; the inputs are 'x:0' (float32 [batch_size, "
                                        "x_0_dim1, 3]), 'x_0' (float32 [batch_size, x_0_1_dim1, 3])", NULL}));
    tgc_tensor_release(ins[0]);
    tgc_tensor_release(ins[1]);
    tgc_session_free(s);
    tgc_graph_free(graph);

    int n = 0;
    char **names = NULL;
    CU_ASSERT(tgc_onnx_list(in_scratch("names.onnx"), TGC_ONNX_INPUT_NAMES, d, &n, &names) == TGC_OK);
    CU_ASSERT(n == 2 && strcmp(names[0], "x_0") == 0 && strcmp(names[1], "x_0_1") == 0);
    tgc_onnx_names_free(names, n);
    CU_ASSERT(tgc_onnx_list(in_scratch("names.onnx"), TGC_ONNX_OP_TYPES, d, &n, &names) == TGC_OK);
    CU_ASSERT(n == 2 && strcmp(names[0], "Add") == 0 && strcmp(names[1], "Relu") == 0);
    tgc_onnx_names_free(names, n);
    tgc_diags_free(d);
}

/* Opset 11: Unsqueeze's axes and Softmax's 2-D coercion, checked by running. */
static void test_legacy_opset(void) {
    scratch_dir();
    pb g = {0};
    const char *dims[] = {"2", "3", "4"};
    pb x = value_info("x", ONNX_FLOAT, 3, dims);
    pb_msg(&g, 11, &x);
    pb axis = attr_int("axis", 1);
    pb sm = node("sm", "Softmax", (const char *[]){"x", NULL}, (const char *[]){"s", NULL}, &axis, 1);
    int64_t axes_v[] = {0};
    pb axes = attr_ints("axes", axes_v, 1);
    pb un = node("un", "Unsqueeze", (const char *[]){"s", NULL}, (const char *[]){"y", NULL}, &axes, 1);
    pb_msg(&g, 1, &sm);
    pb_msg(&g, 1, &un);
    const char *ydims[] = {"1", "2", "3", "4"};
    pb y = value_info("y", ONNX_FLOAT, 4, ydims);
    pb_msg(&g, 12, &y);
    write_model(in_scratch("legacy.onnx"), 11, &g);

    tgc_diags *d = tgc_diags_create();
    CU_ASSERT_FATAL(tgc_onnx_import(in_scratch("legacy.onnx"), in_scratch("legacy.yaml"), d) == TGC_OK);
    float xv[24];
    for (int i = 0; i < 24; i++)
        xv[i] = (float)(i % 7) * 0.5f - 1.0f;
    tgc_tensor *out = run_one(in_scratch("legacy.yaml"), "x", 3, (const int64_t[]){2, 3, 4}, xv);
    CU_ASSERT_FATAL(out != NULL);
    CU_ASSERT(tgc_tensor_rank(out) == 4 && tgc_tensor_dims(out)[0] == 1 && tgc_tensor_dims(out)[3] == 4);
    /* Softmax-11 with axis 1 normalises over the 12 values of each batch row. */
    const float *o = tgc_tensor_data(out);
    for (int b = 0; b < 2; b++) {
        double sum = 0;
        for (int i = 0; i < 12; i++)
            sum += exp(xv[b * 12 + i]);
        for (int i = 0; i < 12; i++)
            CU_ASSERT(fabs(o[b * 12 + i] - exp(xv[b * 12 + i]) / sum) < 1e-6);
    }
    tgc_tensor_release(out);
    tgc_diags_free(d);
}

/* Upsample-7 (scales attribute, linear) and Resize-10 (scales initializer,
 * nearest) become Resize with asymmetric coordinates and floor for
 * nearest: x = y / scale. Expected values by hand (ONNX's Upsample-7 linear
 * example; np.repeat for nearest). */
static void test_legacy_upsample_resize(void) {
    scratch_dir();
    pb g = {0};
    const char *dims[] = {"1", "1", "2", "2"};
    pb x = value_info("x", ONNX_FLOAT, 4, dims);
    pb_msg(&g, 11, &x);
    pb up_attrs[2] = {{0}, {0}};
    pb_str(&up_attrs[0], 1, "scales");
    pb_int(&up_attrs[0], 20, 6); /* FLOATS */
    const float up_scales[] = {1, 1, 2, 2};
    for (int i = 0; i < 4; i++) pb_float(&up_attrs[0], 7, up_scales[i]);
    pb_str(&up_attrs[1], 1, "mode");
    pb_int(&up_attrs[1], 20, ATTR_STRING);
    pb_str(&up_attrs[1], 4, "linear");
    pb up = node("up", "Upsample", (const char *[]){"x", NULL}, (const char *[]){"y", NULL}, up_attrs, 2);
    pb_msg(&g, 1, &up);
    const char *ydims[] = {"1", "1", "4", "4"};
    pb y = value_info("y", ONNX_FLOAT, 4, ydims);
    pb_msg(&g, 12, &y);
    write_model(in_scratch("upsample7.onnx"), 7, &g);
    tgc_diags *d = tgc_diags_create();
    CU_ASSERT_FATAL(tgc_onnx_import(in_scratch("upsample7.onnx"), in_scratch("upsample7.yaml"), d) == TGC_OK);
    const float xv[] = {1, 2, 3, 4};
    tgc_tensor *out = run_one(in_scratch("upsample7.yaml"), "x", 4, (const int64_t[]){1, 1, 2, 2}, xv);
    CU_ASSERT_FATAL(out != NULL);
    static const float want_linear[] = {1, 1.5f, 2, 2, 2, 2.5f, 3, 3, 3, 3.5f, 4, 4, 3, 3.5f, 4, 4};
    CU_ASSERT(tgc_tensor_rank(out) == 4 && tgc_tensor_dims(out)[2] == 4 && tgc_tensor_dims(out)[3] == 4);
    CU_ASSERT(memcmp(tgc_tensor_data(out), want_linear, sizeof want_linear) == 0);
    tgc_tensor_release(out);

    pb g10 = {0};
    pb x10 = value_info("x", ONNX_FLOAT, 4, dims);
    pb_msg(&g10, 11, &x10);
    const float scales10[] = {1, 1, 2, 3};
    pb sc = tensor_f32("scales", 1, (const int64_t[]){4}, scales10);
    pb_msg(&g10, 5, &sc);
    pb rs = node("rs", "Resize", (const char *[]){"x", "scales", NULL}, (const char *[]){"y", NULL}, NULL, 0);
    pb_msg(&g10, 1, &rs);
    const char *y10dims[] = {"1", "1", "4", "6"};
    pb y10 = value_info("y", ONNX_FLOAT, 4, y10dims);
    pb_msg(&g10, 12, &y10);
    write_model(in_scratch("resize10.onnx"), 10, &g10);
    CU_ASSERT_FATAL(tgc_onnx_import(in_scratch("resize10.onnx"), in_scratch("resize10.yaml"), d) == TGC_OK);
    out = run_one(in_scratch("resize10.yaml"), "x", 4, (const int64_t[]){1, 1, 2, 2}, xv);
    CU_ASSERT_FATAL(out != NULL);
    static const float want_nearest[] = {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4};
    CU_ASSERT(tgc_tensor_rank(out) == 4 && tgc_tensor_dims(out)[2] == 4 && tgc_tensor_dims(out)[3] == 6);
    CU_ASSERT(memcmp(tgc_tensor_data(out), want_nearest, sizeof want_nearest) == 0);
    tgc_tensor_release(out);
    tgc_diags_free(d);
}

/* Hardmax-11 coerces to 2-D at axis 1 as Softmax-11 does: one 1 per batch
 * row of 12 values (Hardmax-13 would put one per column of 3). */
static void test_legacy_hardmax(void) {
    scratch_dir();
    pb g = {0};
    const char *dims[] = {"2", "3", "4"};
    pb x = value_info("x", ONNX_FLOAT, 3, dims);
    pb_msg(&g, 11, &x);
    pb axis = attr_int("axis", 1);
    pb hm = node("hm", "Hardmax", (const char *[]){"x", NULL}, (const char *[]){"y", NULL}, &axis, 1);
    pb_msg(&g, 1, &hm);
    pb y = value_info("y", ONNX_FLOAT, 3, dims);
    pb_msg(&g, 12, &y);
    write_model(in_scratch("hardmax11.onnx"), 11, &g);
    tgc_diags *d = tgc_diags_create();
    CU_ASSERT_FATAL(tgc_onnx_import(in_scratch("hardmax11.onnx"), in_scratch("hardmax11.yaml"), d) == TGC_OK);
    float xv[24];
    for (int i = 0; i < 24; i++) xv[i] = (float)(i % 7) * 0.5f - 1.0f; /* largest (2.0) first at 6 and 13 */
    tgc_tensor *out = run_one(in_scratch("hardmax11.yaml"), "x", 3, (const int64_t[]){2, 3, 4}, xv);
    CU_ASSERT_FATAL(out != NULL);
    const float *o = tgc_tensor_data(out);
    for (int i = 0; i < 24; i++) CU_ASSERT_EQUAL(o[i], i == 6 || i == 13 ? 1.0f : 0.0f);
    tgc_tensor_release(out);
    tgc_diags_free(d);
}

/* Opset 9: TopK's attribute k becomes its input; the values are numpy's
 * -sort(-x, axis=1)[:, :2] for x = [[1, 4, 2, 8], [7, 3, 9, 5]]. */
static void test_legacy_top_k(void) {
    scratch_dir();
    pb g = {0};
    const char *dims[] = {"2", "4"}, *ydims[] = {"2", "2"};
    pb x = value_info("x", ONNX_FLOAT, 2, dims);
    pb_msg(&g, 11, &x);
    pb k = attr_int("k", 2);
    pb top = node("top", "TopK", (const char *[]){"x", NULL}, (const char *[]){"v", "i", NULL}, &k, 1);
    pb_msg(&g, 1, &top);
    pb v = value_info("v", ONNX_FLOAT, 2, ydims);
    pb_msg(&g, 12, &v);
    write_model(in_scratch("topk9.onnx"), 9, &g);
    tgc_diags *d = tgc_diags_create();
    CU_ASSERT_FATAL(tgc_onnx_import(in_scratch("topk9.onnx"), in_scratch("topk9.yaml"), d) == TGC_OK);
    const float xv[8] = {1, 4, 2, 8, 7, 3, 9, 5}, want[4] = {8, 4, 9, 7};
    tgc_tensor *out = run_one(in_scratch("topk9.yaml"), "x", 2, (const int64_t[]){2, 4}, xv);
    CU_ASSERT_FATAL(out != NULL);
    CU_ASSERT(tgc_tensor_rank(out) == 2 && tgc_tensor_dims(out)[1] == 2);
    CU_ASSERT(memcmp(tgc_tensor_data(out), want, sizeof want) == 0);
    tgc_tensor_release(out);
    tgc_diags_free(d);
}

/* A Constant, an inline int64 initializer, a float weight in a .npy file. */
static pb small_model_graph(void) {
    pb g = {0};
    const char *dims[] = {"N", "4"};
    pb x = value_info("x", ONNX_FLOAT, 2, dims);
    pb_msg(&g, 11, &x);
    float w[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    pb wt = tensor_f32("fc.weight", 2, (const int64_t[]){2, 4}, w);
    pb_msg(&g, 5, &wt);
    int64_t shape_v[] = {-1, 1, 2};
    pb shape = tensor_i64("new_shape", 1, (const int64_t[]){3}, shape_v);
    pb_msg(&g, 5, &shape);
    pb alpha = attr_float("alpha", 0.5f);
    pb trans = attr_int("transB", 1);
    pb attrs[] = {alpha, trans};
    pb gemm = node("fc", "Gemm", (const char *[]){"x", "fc.weight", NULL}, (const char *[]){"h", NULL}, attrs, 2);
    pb cval = attr_float("value_float", 3.0f);
    pb k = node("k", "Constant", NULL, (const char *[]){"three", NULL}, &cval, 1);
    pb add = node("add", "Add", (const char *[]){"h", "three", NULL}, (const char *[]){"h3", NULL}, NULL, 0);
    pb rs = node("rs", "Reshape", (const char *[]){"h3", "new_shape", NULL}, (const char *[]){"y", NULL}, NULL, 0);
    pb_msg(&g, 1, &gemm);
    pb_msg(&g, 1, &k);
    pb_msg(&g, 1, &add);
    pb_msg(&g, 1, &rs);
    const char *ydims[] = {"N", "1", "2"};
    pb y = value_info("y", ONNX_FLOAT, 3, ydims);
    pb_msg(&g, 12, &y);
    return g;
}

static void test_initializers_and_constants(void) {
    scratch_dir();
    pb g = small_model_graph();
    write_model(in_scratch("small.onnx"), 13, &g);
    tgc_diags *d = tgc_diags_create();
    CU_ASSERT_FATAL(tgc_onnx_import(in_scratch("small.onnx"), in_scratch("small.yaml"), d) == TGC_OK);
    char *text = read_text(in_scratch("small.yaml"));
    CU_ASSERT_FATAL(text != NULL);
    CU_ASSERT(strstr(text, "{name: fc.weight, dtype: float32, shape: [2, 4], file: small_weights/fc.weight.npy}") !=
              NULL);
    CU_ASSERT(strstr(text, "{name: new_shape, dtype: int64, shape: [3], values: [-1, 1, 2]}") != NULL);
    CU_ASSERT(strstr(text, "{name: three, dtype: float32, shape: [], values: [3]}") != NULL);
    CU_ASSERT(strstr(text, "attrs: {alpha: 0.5, transB: 1}") != NULL);
    CU_ASSERT(exists(in_scratch("small_weights/fc.weight.npy")));
    free(text);
    float x[4] = {1, 0, 0, 1};
    tgc_tensor *out = run_one(in_scratch("small.yaml"), "x", 2, (const int64_t[]){1, 4}, x);
    CU_ASSERT_FATAL(out != NULL);
    const float *o = tgc_tensor_data(out);
    CU_ASSERT(tgc_tensor_rank(out) == 3 && tgc_tensor_numel(out) == 2);
    CU_ASSERT(fabsf(o[0] - (0.5f * 5 + 3)) < 1e-6f && fabsf(o[1] - (0.5f * 13 + 3)) < 1e-6f);
    tgc_tensor_release(out);
    tgc_diags_free(d);
}

/* Weights in a file beside the model (TensorProto.data_location EXTERNAL). */
static void test_external_data(void) {
    scratch_dir();
    float w[6] = {1, -2, 3, -4, 5, -6};
    FILE *f = fopen(in_scratch("w.bin"), "wb");
    CU_ASSERT_FATAL(f != NULL);
    fwrite("pad!", 1, 4, f); /* the tensor starts at offset 4 */
    fwrite(w, sizeof w[0], 6, f);
    fclose(f);
    pb g = {0}, t = {0}, loc = {0}, off = {0};
    const char *dims[] = {"1", "6"};
    pb x = value_info("x", ONNX_FLOAT, 2, dims);
    pb_msg(&g, 11, &x);
    pb_int(&t, 1, 1);
    pb_int(&t, 1, 6);
    pb_int(&t, 2, ONNX_FLOAT);
    pb_str(&t, 8, "w");
    pb_str(&loc, 1, "location");
    pb_str(&loc, 2, "w.bin");
    pb_msg(&t, 13, &loc);
    pb_str(&off, 1, "offset");
    pb_str(&off, 2, "4");
    pb_msg(&t, 13, &off);
    pb_int(&t, 14, 1);
    pb_msg(&g, 5, &t);
    pb mul = node("m", "Mul", (const char *[]){"x", "w", NULL}, (const char *[]){"y", NULL}, NULL, 0);
    pb_msg(&g, 1, &mul);
    pb y = value_info("y", ONNX_FLOAT, 2, dims);
    pb_msg(&g, 12, &y);
    write_model(in_scratch("ext.onnx"), 13, &g);
    tgc_diags *d = tgc_diags_create();
    CU_ASSERT_FATAL(tgc_onnx_import(in_scratch("ext.onnx"), in_scratch("ext.yaml"), d) == TGC_OK);
    float ones[6] = {1, 1, 1, 1, 1, 1};
    tgc_tensor *out = run_one(in_scratch("ext.yaml"), "x", 2, (const int64_t[]){1, 6}, ones);
    CU_ASSERT_FATAL(out != NULL);
    CU_ASSERT(memcmp(tgc_tensor_data(out), w, sizeof w) == 0);
    tgc_tensor_release(out);
    remove(in_scratch("ext.yaml"));
    tgc_diags_free(d);
}

/* A model in the scratch folder whose initializer w (float32 [1, 6]) is
 * external data at `location`, offset 0. */
static void write_external_model(const char *name, const char *location) {
    pb g = {0}, t = {0}, loc = {0};
    const char *dims[] = {"1", "6"};
    pb x = value_info("x", ONNX_FLOAT, 2, dims);
    pb_msg(&g, 11, &x);
    pb_int(&t, 1, 1);
    pb_int(&t, 1, 6);
    pb_int(&t, 2, ONNX_FLOAT);
    pb_str(&t, 8, "w");
    pb_str(&loc, 1, "location");
    pb_str(&loc, 2, location);
    pb_msg(&t, 13, &loc);
    pb_int(&t, 14, 1);
    pb_msg(&g, 5, &t);
    pb mul = node("m", "Mul", (const char *[]){"x", "w", NULL}, (const char *[]){"y", NULL}, NULL, 0);
    pb_msg(&g, 1, &mul);
    pb y = value_info("y", ONNX_FLOAT, 2, dims);
    pb_msg(&g, 12, &y);
    write_model(in_scratch(name), 13, &g);
}

/* Imports `model` from the scratch folder (external data beneath
 * weights_dir when given); expects `want` and, when it fails, a "bad-model"
 * message holding `phrase`; and no YAML written on failure. */
static void expect_external(const char *model, const char *weights_dir, tgc_status want, const char *phrase) {
    char dir[512]; /* in_scratch's buffers are reused */
    snprintf(dir, sizeof dir, "%s", weights_dir ? weights_dir : "");
    tgc_diags *d = tgc_diags_create();
    tgc_graph_load_options o = {.weights_dir = weights_dir ? dir : NULL};
    remove(in_scratch("out.yaml"));
    tgc_status st = tgc_onnx_import_with(in_scratch(model), in_scratch("out.yaml"), &o, d);
    if (st != want) tgc_diags_print(d, stderr);
    CU_ASSERT_EQUAL(st, want);
    if (want != TGC_OK) {
        CU_ASSERT(has_diag(d, "bad-model", (const char *[]){"initializer 'w'", phrase, NULL}));
        if (!has_diag(d, "bad-model", (const char *[]){phrase, NULL})) tgc_diags_print(d, stderr);
        CU_ASSERT(!exists(in_scratch("out.yaml")));
    }
    tgc_diags_free(d);
    /* Read straight into memory, under the same rules. */
    d = tgc_diags_create();
    tgc_graph *g = NULL;
    CU_ASSERT_EQUAL(tgc_onnx_load_with(in_scratch(model), &o, d, &g), want);
    CU_ASSERT((g != NULL) == (want == TGC_OK));
    if (want != TGC_OK) CU_ASSERT(has_diag(d, "bad-model", (const char *[]){"initializer 'w'", phrase, NULL}));
    tgc_graph_free(g);
    tgc_diags_free(d);
}

/* External data stays beneath the model's folder (CVE-2022-25882): a symlink
 * in the folder pointing at /etc/passwd, or a symlinked folder leading out,
 * is refused before a byte is read, as are absolute paths, '..' out, files
 * that are not regular, and files too small for the tensor. A weights
 * folder named by the caller takes the model folder's place. */
static void test_external_data_stays_beneath(void) {
    scratch_dir();
    float w[6] = {1, -2, 3, -4, 5, -6};
    CU_ASSERT_EQUAL_FATAL(mkdir(in_scratch("m"), 0777), 0);
    CU_ASSERT_EQUAL_FATAL(mkdir(in_scratch("shared"), 0777), 0);
    FILE *f = fopen(in_scratch("shared/w.bin"), "wb");
    CU_ASSERT_FATAL(f != NULL);
    fwrite(w, sizeof w[0], 6, f);
    fclose(f);
    CU_ASSERT_EQUAL(symlink("/etc/passwd", in_scratch("m/passwd.bin")), 0);
    CU_ASSERT_EQUAL(symlink("..", in_scratch("m/up")), 0);
    CU_ASSERT_EQUAL(symlink("../shared/w.bin", in_scratch("m/rel.bin")), 0);
    CU_ASSERT_EQUAL(mkfifo(in_scratch("m/fifo.bin"), 0666), 0);
    f = fopen(in_scratch("m/short.bin"), "wb");
    CU_ASSERT_FATAL(f != NULL);
    fwrite(w, sizeof w[0], 5, f);
    fclose(f);

    write_external_model("m/passwd.onnx", "passwd.bin");
    expect_external("m/passwd.onnx", NULL, TGC_ERR_INVALID,
                    "'passwd.bin' is a symlink leaving the model's folder ('passwd.bin' -> '/etc/passwd')");
    write_external_model("m/rel.onnx", "rel.bin");
    expect_external("m/rel.onnx", NULL, TGC_ERR_INVALID, "is a symlink leaving the model's folder");
    write_external_model("m/updir.onnx", "up/shared/w.bin");
    expect_external("m/updir.onnx", NULL, TGC_ERR_INVALID, "passes through a symlink leaving the model's folder");
    write_external_model("m/abs.onnx", "/etc/passwd");
    expect_external("m/abs.onnx", NULL, TGC_ERR_INVALID, "is an absolute path");
    write_external_model("m/dots.onnx", "../shared/w.bin");
    expect_external("m/dots.onnx", NULL, TGC_ERR_INVALID, "leaves the model's folder through '..'");
    write_external_model("m/fifo.onnx", "fifo.bin");
    expect_external("m/fifo.onnx", NULL, TGC_ERR_INVALID, "is not a regular file (a FIFO)");
    write_external_model("m/short.onnx", "short.bin");
    expect_external("m/short.onnx", NULL, TGC_ERR_INVALID, "holds 20 bytes, fewer than the 24");
    write_external_model("m/missing.onnx", "missing.bin");
    expect_external("m/missing.onnx", NULL, TGC_ERR_INVALID, "No such file or directory");

    /* The same name, beneath a weights folder the caller names. */
    write_external_model("m/shared.onnx", "w.bin");
    expect_external("m/shared.onnx", NULL, TGC_ERR_INVALID, "No such file or directory");
    expect_external("m/shared.onnx", in_scratch("shared"), TGC_OK, NULL);
    float ones[6] = {1, 1, 1, 1, 1, 1};
    tgc_tensor *out = run_one(in_scratch("out.yaml"), "x", 2, (const int64_t[]){1, 6}, ones);
    CU_ASSERT_FATAL(out != NULL);
    CU_ASSERT(memcmp(tgc_tensor_data(out), w, sizeof w) == 0);
    tgc_tensor_release(out);
    tgc_diags *d = tgc_diags_create();
    tgc_graph_load_options o = {.weights_dir = in_scratch("nowhere")};
    CU_ASSERT_EQUAL(tgc_onnx_import_with(in_scratch("m/shared.onnx"), in_scratch("out2.yaml"), &o, d), TGC_ERR_IO);
    CU_ASSERT(has_diag(d, "io", (const char *[]){"the weights folder cannot be used", NULL}));
    tgc_diags_free(d);
}

/* An empty string attribute (auto_pad: "") has no bytes in the protobuf:
 * the importer copies it without handing memcpy a NULL pointer (UBSan
 * checks), and the result is a clean answer either way. */
static void test_empty_string_attribute(void) {
    scratch_dir();
    pb g = {0}, a = {0};
    const char *dims[] = {"1", "1", "4", "4"};
    pb x = value_info("x", ONNX_FLOAT, 4, dims);
    pb_msg(&g, 11, &x);
    float wv[9] = {0};
    pb w = tensor_f32("w", 4, (const int64_t[]){1, 1, 3, 3}, wv);
    pb_msg(&g, 5, &w);
    pb_str(&a, 1, "auto_pad");
    pb_int(&a, 20, ATTR_STRING);
    pb_len(&a, 4, "", 0);
    pb conv = node("c", "Conv", (const char *[]){"x", "w", NULL}, (const char *[]){"y", NULL}, &a, 1);
    pb_msg(&g, 1, &conv);
    pb y = value_info("y", ONNX_FLOAT, 0, NULL);
    pb_msg(&g, 12, &y);
    write_model(in_scratch("empty_attr.onnx"), 13, &g);
    tgc_diags *d = tgc_diags_create();
    tgc_status st = tgc_onnx_import(in_scratch("empty_attr.onnx"), in_scratch("empty_attr.yaml"), d);
    CU_ASSERT(st == TGC_OK || st == TGC_ERR_INVALID || st == TGC_ERR_UNSUPPORTED);
    if (st != TGC_OK) CU_ASSERT(tgc_diags_error_count(d) > 0);
    tgc_diags_free(d);
}

/* Truncated, empty and missing files are clean errors, and write nothing. */
static void test_bad_files(void) {
    scratch_dir();
    pb g = small_model_graph();
    write_model(in_scratch("whole.onnx"), 13, &g);
    char *whole = read_text(in_scratch("whole.onnx"));
    struct stat st;
    CU_ASSERT_FATAL(whole != NULL && stat(in_scratch("whole.onnx"), &st) == 0);
    int bad_rule = 0;
    for (long cut = 1; cut < (long)st.st_size; cut += 7) {
        FILE *f = fopen(in_scratch("cut.onnx"), "wb");
        CU_ASSERT_FATAL(f != NULL);
        fwrite(whole, 1, (size_t)cut, f);
        fclose(f);
        tgc_diags *d = tgc_diags_create();
        tgc_status s = tgc_onnx_import(in_scratch("cut.onnx"), in_scratch("cut.yaml"), d);
        /* A cut at a field boundary can leave a smaller valid model; most do not. */
        CU_ASSERT(s == TGC_ERR_INVALID || s == TGC_ERR_UNSUPPORTED || s == TGC_OK);
        if (s != TGC_OK) {
            CU_ASSERT(tgc_diags_error_count(d) > 0);
            CU_ASSERT(!exists(in_scratch("cut.yaml")));
            bad_rule += has_diag(d, "bad-model", (const char *[]){NULL});
        }
        remove(in_scratch("cut.yaml"));
        tgc_diags_free(d);
    }
    CU_ASSERT(bad_rule > 0);
    free(whole);

    tgc_diags *d = tgc_diags_create();
    FILE *f = fopen(in_scratch("empty.onnx"), "wb");
    fclose(f);
    CU_ASSERT(tgc_onnx_import(in_scratch("empty.onnx"), in_scratch("e.yaml"), d) == TGC_ERR_INVALID);
    CU_ASSERT(has_diag(d, "bad-model", (const char *[]){"no graph", NULL}));
    CU_ASSERT(tgc_onnx_import(in_scratch("missing.onnx"), in_scratch("m.yaml"), d) == TGC_ERR_IO);
    CU_ASSERT(!exists(in_scratch("e.yaml")) && !exists(in_scratch("m.yaml")));
    /* A newer opset is refused with the reason. */
    pb g2 = small_model_graph();
    write_model(in_scratch("new.onnx"), 19, &g2);
    CU_ASSERT(tgc_onnx_import(in_scratch("new.onnx"), in_scratch("n.yaml"), d) == TGC_ERR_UNSUPPORTED);
    CU_ASSERT(has_diag(d, "unsupported-opset", (const char *[]){"opset 19", NULL}));
    tgc_diags_free(d);
}

/* ---- Straight into memory (tgc_onnx_load_with) ------------------------------------------- */

/* True when every .npy the dump in folder a wrote is in folder b, byte for byte. */
static bool same_weights(const char *a, const char *b, const char *text) {
    bool same = true;
    for (const char *p = strstr(text, "file: "); p != NULL && same; p = strstr(p + 1, "file: ")) {
        char rel[256], pa[1024], pbuf[1024];
        if (sscanf(p, "file: %255[^,}\n]", rel) != 1) return false;
        snprintf(pa, sizeof pa, "%s/%s", a, rel);
        snprintf(pbuf, sizeof pbuf, "%s/%s", b, rel);
        long na = -1, nb = -2;
        char *ba = read_bytes(pa, &na), *bb = read_bytes(pbuf, &nb);
        same = ba != NULL && bb != NULL && na == nb && memcmp(ba, bb, (size_t)na) == 0;
        free(ba);
        free(bb);
    }
    return same;
}

/* The dump of the graph at `path` (loaded by tgc_graph_load_with: a .onnx
 * read straight into memory), its weights written beneath scratch/dest. */
static char *load_and_dump(const char *path, const char *dest) {
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    char *text = NULL;
    if (tgc_graph_load_with(path, NULL, d, &g) == TGC_OK && mkdir(in_scratch(dest), 0777) == 0) {
        char file[600];
        snprintf(file, sizeof file, "%s/dump.yaml", in_scratch(dest));
        FILE *f = fopen(file, "w");
        if (f != NULL && tgc_graph_dump_yaml(g, f, in_scratch(dest), d) == TGC_OK) {
            fclose(f);
            text = read_text(file);
        } else if (f != NULL) {
            fclose(f);
        }
    }
    if (text == NULL) tgc_diags_print(d, stderr);
    tgc_graph_free(g);
    tgc_diags_free(d);
    return text;
}

/* A model read straight into memory is the graph its imported file loads
 * as: the same dump, text and weights, subgraphs included. */
static void test_load_matches_import(void) {
    if (!has_testdata()) return;
    static const char *const models[] = {
        "node/test_conv_with_strides_padding", "node/test_constant",      "node/test_split_equal_parts_1d",
        "node/test_gemm_all_attributes",       "pytorch-converted/test_Conv2d", "pytorch-converted/test_Softmax",
        "node/test_loop11",                    "node/test_if_seq",        "node/test_scan9_sum",
        "node/test_loop16_seq_none",           "simple/test_sequence_model1", "node/test_cast_FLOAT_to_STRING",
    };
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        scratch_dir();
        char onnx[512];
        snprintf(onnx, sizeof onnx, "%s/%s/model.onnx", TGC_ONNX_TESTDATA, models[i]);
        tgc_diags *d = tgc_diags_create();
        CU_ASSERT_FATAL(tgc_onnx_import(onnx, in_scratch("model.yaml"), d) == TGC_OK);
        tgc_diags_free(d);
        char *imported = load_and_dump(in_scratch("model.yaml"), "a");
        char *direct = load_and_dump(onnx, "b");
        CU_ASSERT(imported != NULL && direct != NULL);
        bool same = imported && direct && strcmp(imported, direct) == 0;
        if (!same) fprintf(stderr, "%s: the dumps differ\n", models[i]);
        CU_ASSERT(same);
        CU_ASSERT(imported && same_weights(in_scratch("a"), in_scratch("b"), imported));
        free(imported);
        free(direct);
    }
}

/* The weights a model stores as raw_data move into the graph (no copy):
 * the values a run computes are still the model's (hand-computed). */
static void test_load_runs(void) {
    scratch_dir();
    pb g = small_model_graph();
    write_model(in_scratch("small.onnx"), 13, &g);
    float x[4] = {1, 0, 0, 1};
    tgc_tensor *out = run_one(in_scratch("small.onnx"), "x", 2, (const int64_t[]){1, 4}, x);
    CU_ASSERT_FATAL(out != NULL);
    const float *o = tgc_tensor_data(out);
    CU_ASSERT(fabsf(o[0] - (0.5f * 5 + 3)) < 1e-6f && fabsf(o[1] - (0.5f * 13 + 3)) < 1e-6f);
    tgc_tensor_release(out);
    CU_ASSERT(!exists(in_scratch("small_weights")) && !exists(in_scratch("small.yaml")));
}

/* A dump of a model read into memory, without a destination folder, names
 * its big weights by file (not millions of numbers) and says they were not
 * written; with one, it writes them there and the dump loads. */
static void test_load_dump_names_big_weights(void) {
    scratch_dir();
    pb g = {0};
    const char *dims[] = {"1", "5000"};
    pb x = value_info("x", ONNX_FLOAT, 2, dims);
    pb_msg(&g, 11, &x);
    static float w[5000];
    for (int i = 0; i < 5000; i++) w[i] = (float)i;
    pb wt = tensor_f32("w", 2, (const int64_t[]){1, 5000}, w);
    pb_msg(&g, 5, &wt);
    pb add = node("add", "Add", (const char *[]){"x", "w", NULL}, (const char *[]){"y", NULL}, NULL, 0);
    pb_msg(&g, 1, &add);
    pb y = value_info("y", ONNX_FLOAT, 2, dims);
    pb_msg(&g, 12, &y);
    write_model(in_scratch("big.onnx"), 13, &g);
    tgc_diags *d = tgc_diags_create();
    tgc_graph *out = NULL;
    CU_ASSERT_FATAL(tgc_graph_load(in_scratch("big.onnx"), d, &out) == TGC_OK);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CU_ASSERT(tgc_graph_dump_yaml(out, f, NULL, d) == TGC_OK);
    fclose(f);
    CU_ASSERT(text != NULL && strstr(text, "file: big_weights/w.npy") != NULL && len < 2000);
    CU_ASSERT(has_diag(d, "weights-not-written", (const char *[]){"1 weight held only in memory", NULL}));
    free(text);
    CU_ASSERT(mkdir(in_scratch("out"), 0777) == 0);
    f = fopen(in_scratch("out/big.yaml"), "w");
    CU_ASSERT(f != NULL && tgc_graph_dump_yaml(out, f, in_scratch("out"), d) == TGC_OK);
    if (f != NULL) fclose(f);
    tgc_graph_free(out);
    tgc_diags_free(d);
    float ones[5000];
    for (int i = 0; i < 5000; i++) ones[i] = 1;
    tgc_tensor *r = run_one(in_scratch("out/big.yaml"), "x", 2, (const int64_t[]){1, 5000}, ones);
    CU_ASSERT_FATAL(r != NULL);
    const float *o = tgc_tensor_data(r);
    CU_ASSERT(o[0] == 1.0f && o[4999] == 5000.0f);
    tgc_tensor_release(r);
}

/* What inference refuses names the .onnx file (no line: there is none)
 * and the node as the model names it; limits hold as for a YAML file. */
static void test_load_errors_name_the_model(void) {
    scratch_dir();
    pb g = {0};
    const char *dims[] = {"2", "3"};
    pb x = value_info("x", ONNX_FLOAT, 2, dims);
    pb_msg(&g, 11, &x);
    pb w = tensor_f32("w", 1, (const int64_t[]){4}, (const float[]){1, 2, 3, 4});
    pb_msg(&g, 5, &w);
    pb add = node("the sum #1", "Add", (const char *[]){"x", "w", NULL}, (const char *[]){"y", NULL}, NULL, 0);
    pb_msg(&g, 1, &add);
    pb y = value_info("y", ONNX_FLOAT, 2, dims);
    pb_msg(&g, 12, &y);
    write_model(in_scratch("bad.onnx"), 13, &g);
    tgc_diags *d = tgc_diags_create();
    tgc_graph *out = NULL;
    CU_ASSERT(tgc_graph_load_with(in_scratch("bad.onnx"), NULL, d, &out) == TGC_ERR_INVALID);
    CU_ASSERT(out == NULL);
    bool named = false;
    for (size_t i = 0; i < tgc_diags_count(d); i++)
        named |= strcmp(tgc_diag_file(d, i), in_scratch("bad.onnx")) == 0 && tgc_diag_line(d, i) == 0 &&
                 strstr(tgc_diag_message(d, i), "'the sum #1'") != NULL;
    if (!named) tgc_diags_print(d, stderr);
    CU_ASSERT(named);
    tgc_diags_free(d);

    pb g2 = small_model_graph();
    write_model(in_scratch("small.onnx"), 13, &g2);
    d = tgc_diags_create();
    tgc_graph_load_options few = {.max_nodes = 3};
    CU_ASSERT(tgc_onnx_load_with(in_scratch("small.onnx"), &few, d, &out) == TGC_ERR_INVALID);
    CU_ASSERT(has_diag(d, "over-limit", (const char *[]){"above the limit of 3", NULL}));
    tgc_diags_free(d);
}

/* Every allocation of a load into memory made to fail in turn: NOMEM,
 * never a crash, a leak or a weight freed twice. */
static void test_load_allocation_failures(void) {
    scratch_dir();
    pb g = small_model_graph();
    write_model(in_scratch("small.onnx"), 13, &g);
    tgc_host_alloc_stats before = tgc_host_alloc_stats_get();
    tgc_diags *d = tgc_diags_create();
    tgc_graph *out = NULL;
    CU_ASSERT_FATAL(tgc_onnx_load_with(in_scratch("small.onnx"), NULL, d, &out) == TGC_OK);
    tgc_graph_free(out);
    tgc_diags_free(d);
    int64_t allocs = tgc_host_alloc_stats_get().num_allocs - before.num_allocs;
    int nomem = 0;
    for (int64_t n = 1; n <= allocs; n++) {
        tgc_diags *dn = tgc_diags_create();
        tgc_host_alloc_fail_nth(n);
        tgc_status s = tgc_onnx_load_with(in_scratch("small.onnx"), NULL, dn, &out);
        tgc_host_alloc_fail_nth(0);
        CU_ASSERT(s == TGC_OK || s == TGC_ERR_NOMEM);
        CU_ASSERT((out != NULL) == (s == TGC_OK));
        nomem += s == TGC_ERR_NOMEM;
        tgc_graph_free(out);
        tgc_diags_free(dn);
    }
    CU_ASSERT(nomem > allocs / 2);
}

/* Every allocation of an import made to fail in turn: NOMEM, never a crash
 * or a leak (the harness counts blocks after the suite). */
static void test_allocation_failures(void) {
    scratch_dir();
    pb g = small_model_graph();
    write_model(in_scratch("small.onnx"), 13, &g);
    tgc_host_alloc_stats before = tgc_host_alloc_stats_get();
    tgc_diags *d = tgc_diags_create();
    CU_ASSERT_FATAL(tgc_onnx_import(in_scratch("small.onnx"), in_scratch("s.yaml"), d) == TGC_OK);
    tgc_diags_free(d);
    int64_t allocs = tgc_host_alloc_stats_get().num_allocs - before.num_allocs;
    int nomem = 0;
    for (int64_t n = 1; n <= allocs; n++) {
        tgc_diags *dn = tgc_diags_create();
        tgc_host_alloc_fail_nth(n);
        tgc_status s = tgc_onnx_import(in_scratch("small.onnx"), in_scratch("s.yaml"), dn);
        tgc_host_alloc_fail_nth(0);
        CU_ASSERT(s == TGC_OK || s == TGC_ERR_NOMEM);
        nomem += s == TGC_ERR_NOMEM;
        tgc_diags_free(dn);
    }
    CU_ASSERT(nomem > allocs / 2);
    tgc_tool_remove_tree(scratch);
    scratch[0] = '\0';
}

TGC_TEST_MAIN("onnx_import", {"roundtrip_testdata", test_roundtrip_testdata}, {"tensor_load", test_tensor_load},
              {"unsupported inside subgraphs", test_unsupported_inside_subgraphs},
              {"nesting bound", test_nesting_bound}, {"every problem at once", test_every_problem_at_once},
              {"unsupported_lists_all", test_unsupported_lists_all}, {"names_and_symbols", test_names_and_symbols},
              {"legacy_opset", test_legacy_opset},
              {"legacy_upsample_resize", test_legacy_upsample_resize}, {"legacy_hardmax", test_legacy_hardmax},
              {"legacy_top_k", test_legacy_top_k},
              {"initializers_and_constants", test_initializers_and_constants},
              {"external_data", test_external_data},
              {"external_data_stays_beneath", test_external_data_stays_beneath},
              {"empty_string_attribute", test_empty_string_attribute}, {"bad_files", test_bad_files},
              {"allocation_failures", test_allocation_failures}, {"load_matches_import", test_load_matches_import},
              {"load_runs", test_load_runs}, {"load_errors_name_the_model", test_load_errors_name_the_model},
              {"load_dump_names_big_weights", test_load_dump_names_big_weights},
              {"load_allocation_failures", test_load_allocation_failures})
