/* The dtypes beyond tgc's first six (float64, int8, int16, uint16, uint32,
 * uint64, bfloat16): names and sizes, bfloat16 rounding, inline YAML values
 * (range checks, the dumper's round trip), and a few ops run end to end.
 * Reference values are written by hand (bit patterns) or come from numpy,
 * as each comment says. */
#include "graph/graph.h"
#include "support/half.h"
#include "tests/harness.h"
#include "tgc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_names_and_sizes(void) {
    static const struct {
        const char *name;
        tgc_dtype t;
        size_t size;
        int onnx;
    } want[] = {{"float64", TGC_FLOAT64, 8, 11}, {"int8", TGC_INT8, 1, 3},     {"int16", TGC_INT16, 2, 5},
                {"uint16", TGC_UINT16, 2, 4},    {"uint32", TGC_UINT32, 4, 12}, {"uint64", TGC_UINT64, 8, 13},
                {"bfloat16", TGC_BFLOAT16, 2, 16}, {"string", TGC_STRING, sizeof(char *), 8}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        CU_ASSERT_EQUAL(tgc_dtype_from_name(want[i].name), want[i].t);
        CU_ASSERT_STRING_EQUAL(tgc_dtype_name(want[i].t), want[i].name);
        CU_ASSERT_EQUAL(tgc_dtype_size(want[i].t), want[i].size);
        CU_ASSERT_EQUAL(tgc_dtype_from_onnx(want[i].onnx), want[i].t);
    }
    CU_ASSERT_EQUAL(tgc_dtype_from_onnx(14), TGC_DTYPE_INVALID); /* COMPLEX64 */
    CU_ASSERT_EQUAL(tgc_dtype_from_name("complex64"), TGC_DTYPE_INVALID);
    /* the first six keep their values */
    CU_ASSERT(TGC_FLOAT32 == 0 && TGC_FLOAT16 == 1 && TGC_INT32 == 2 && TGC_INT64 == 3 && TGC_UINT8 == 4 &&
              TGC_BOOL == 5);
}

static float bits_to_float(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* float32 -> bfloat16 rounds to nearest even; the cases by hand from the
 * bits: the 16 dropped bits below, at and above half, with an even and
 * an odd kept part. */
static void test_bfloat16_rounding(void) {
    static const struct {
        uint32_t f;
        uint16_t bf;
    } cases[] = {
        {0x3F800000, 0x3F80}, /* 1.0 exactly */
        {0x3F807FFF, 0x3F80}, /* below half: down */
        {0x3F808000, 0x3F80}, /* half, even kept part: stays */
        {0x3F818000, 0x3F82}, /* half, odd kept part: up to even */
        {0x3F808001, 0x3F81}, /* above half: up */
        {0xBF808001, 0xBF81}, /* the same, negative */
        {0x3EF5EEB0, 0x3EF6}, /* ONNX's test_cast_FLOAT_to_BFLOAT16 input 1 (its data truncates to 0x3EF5) */
        {0x7F7FFFFF, 0x7F80}, /* FLT_MAX rounds up to infinity */
        {0x7F800000, 0x7F80}, /* infinity */
        {0xFF800000, 0xFF80}, /* -infinity */
        {0x00000001, 0x0000}, /* the smallest subnormal: to zero */
        {0x80000000, 0x8000}, /* -0 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint16_t got = tgc_float_to_bf16(bits_to_float(cases[i].f));
        CU_ASSERT_EQUAL(got, cases[i].bf);
        if (got != cases[i].bf) fprintf(stderr, "\n  0x%08x -> 0x%04x, want 0x%04x", cases[i].f, got, cases[i].bf);
    }
    /* NaN stays NaN (quiet), whatever its payload; a signalling NaN whose
     * payload sits in the dropped bits does not become infinity. */
    uint16_t n = tgc_float_to_bf16(bits_to_float(0x7F800001));
    CU_ASSERT((n & 0x7F80) == 0x7F80 && (n & 0x7F) != 0);
    CU_ASSERT_EQUAL(tgc_bf16_to_float(0x3FC0), 1.5f);
    CU_ASSERT_EQUAL(tgc_bf16_to_float(0xC2F7), -123.5f);
}

/* ---- YAML values ---------------------------------------------------------------------- */

static const char graph_text[] =
    "format: tgc/1\n"
    "inputs:\n"
    "  - {name: x, dtype: float32, shape: [1]}\n"
    "outputs: [y]\n"
    "initializers:\n"
    "  - {name: d, dtype: float64, shape: [3], values: [0.1, -1e300, .nan]}\n"
    "  - {name: i8, dtype: int8, shape: [3], values: [-128, 0, 127]}\n"
    "  - {name: i16, dtype: int16, shape: [2], values: [-32768, 32767]}\n"
    "  - {name: u16, dtype: uint16, shape: [2], values: [0, 65535]}\n"
    "  - {name: u32, dtype: uint32, shape: [2], values: [4294967295, 1]}\n"
    "  - {name: u64, dtype: uint64, shape: [2], values: [18446744073709551615, 9223372036854775808]}\n"
    "  - {name: bf, dtype: bfloat16, shape: [3], values: [1.5, -0.1, .inf]}\n"
    "nodes:\n"
    "  - {name: y, op: Relu, inputs: [x]}\n";

static const tgc_const *const_of(const tgc_graph *g, const char *name) {
    int32_t id = tgc_graph_find(g, name);
    CU_ASSERT_FATAL(id >= 0);
    return g->nodes[id].data;
}

static void check_values(const tgc_graph *g) {
    const double *d = const_of(g, "d")->data;
    CU_ASSERT(d[0] == 0.1 && d[1] == -1e300 && isnan(d[2]));
    const int8_t *i8 = const_of(g, "i8")->data;
    CU_ASSERT(i8[0] == -128 && i8[1] == 0 && i8[2] == 127);
    const int16_t *i16 = const_of(g, "i16")->data;
    CU_ASSERT(i16[0] == -32768 && i16[1] == 32767);
    const uint16_t *u16 = const_of(g, "u16")->data;
    CU_ASSERT(u16[0] == 0 && u16[1] == 65535);
    const uint32_t *u32 = const_of(g, "u32")->data;
    CU_ASSERT(u32[0] == 4294967295u && u32[1] == 1);
    const uint64_t *u64 = const_of(g, "u64")->data;
    CU_ASSERT(u64[0] == UINT64_MAX && u64[1] == 9223372036854775808ull);
    const uint16_t *bf = const_of(g, "bf")->data;
    /* 1.5 is 0x3FC0; -0.1 (float 0xBDCCCCCD) rounds to 0xBDCD; inf 0x7F80 */
    CU_ASSERT(bf[0] == 0x3FC0 && bf[1] == 0xBDCD && bf[2] == 0x7F80);
}

static void test_yaml_values_and_round_trip(void) {
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_load_string(graph_text, strlen(graph_text), "t.yaml", NULL, d, &g), TGC_OK);
    check_values(g);
    /* dumped and loaded again: the same elements */
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    CU_ASSERT_FATAL(f != NULL);
    CU_ASSERT_EQUAL(tgc_graph_dump_yaml(g, f, NULL, d), TGC_OK);
    fclose(f);
    tgc_graph *g2 = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_load_string(text, size, "dump.yaml", NULL, d, &g2), TGC_OK);
    check_values(g2);
    free(text);
    tgc_graph_free(g2);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

/* A value outside its dtype is an error naming the dtype. */
static void test_yaml_range_errors(void) {
    static const char *const bad[] = {"int8, shape: [1], values: [128]", "int16, shape: [1], values: [-32769]",
                                      "uint16, shape: [1], values: [65536]", "uint32, shape: [1], values: [-1]",
                                      "uint64, shape: [1], values: [18446744073709551616]",
                                      "uint64, shape: [1], values: [-1]"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[512];
        snprintf(text, sizeof text,
                 "format: tgc/1\ninputs:\n  - {name: x, dtype: float32, shape: [1]}\noutputs: [y]\n"
                 "initializers:\n  - {name: c, dtype: %s}\nnodes:\n  - {name: y, op: Relu, inputs: [x]}\n",
                 bad[i]);
        tgc_diags *d = tgc_diags_create();
        tgc_graph *g = NULL;
        CU_ASSERT_NOT_EQUAL(tgc_graph_load_string(text, strlen(text), "t.yaml", NULL, d, &g), TGC_OK);
        CU_ASSERT_PTR_NULL(g);
        bool found = false;
        for (size_t k = 0; k < tgc_diags_count(d); k++)
            found = found || strcmp(tgc_diag_rule(d, k), "value-out-of-range") == 0;
        CU_ASSERT(found);
        if (!found) tgc_diags_print(d, stderr);
        tgc_diags_free(d);
    }
}

/* ---- End to end ----------------------------------------------------------------------- */

/* Runs graph text on the cpu with one input; returns output 0 (caller releases). */
static tgc_tensor *run1(const char *text, tgc_tensor *x) {
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    tgc_session *s = NULL;
    tgc_tensor *out[2] = {NULL, NULL};
    if (tgc_graph_load_string(text, strlen(text), "t.yaml", NULL, d, &g) == TGC_OK &&
        tgc_session_create(g, "cpu", NULL, d, &s) == TGC_OK) {
        const char *names[] = {"x"};
        tgc_session_run(s, 1, names, &x, out, d);
    }
    if (out[0] == NULL) tgc_diags_print(d, stderr);
    tgc_session_free(s);
    tgc_graph_free(g);
    tgc_diags_free(d);
    return out[0];
}

/* Max of int8 and of uint64 (unsigned order), Div of uint32 (unsigned),
 * Cast float64 -> bfloat16 and -> int8 (truncated, then modulo 2^8 as
 * numpy: np.array([300.7]).astype(np.int64).astype(np.int8) == 44). */
static void test_ops_end_to_end(void) {
    tgc_tensor *x, *y;
    int8_t a8[3] = {-128, 5, 127};
    tgc_tensor_create(TGC_INT8, 1, (int64_t[]){3}, a8, &x);
    y = run1("format: tgc/1\ninputs:\n  - {name: x, dtype: int8, shape: [3]}\noutputs: [y]\n"
             "initializers:\n  - {name: c, dtype: int8, shape: [1], values: [-3]}\n"
             "nodes:\n  - {name: y, op: Max, inputs: [x, c]}\n",
             x);
    CU_ASSERT_FATAL(y != NULL && tgc_tensor_dtype(y) == TGC_INT8);
    const int8_t *m8 = tgc_tensor_data(y);
    CU_ASSERT(m8[0] == -3 && m8[1] == 5 && m8[2] == 127);
    tgc_tensor_release(y);
    tgc_tensor_release(x);

    uint64_t a64[2] = {UINT64_MAX, 1};
    tgc_tensor_create(TGC_UINT64, 1, (int64_t[]){2}, a64, &x);
    y = run1("format: tgc/1\ninputs:\n  - {name: x, dtype: uint64, shape: [2]}\noutputs: [y]\n"
             "initializers:\n  - {name: c, dtype: uint64, shape: [1], values: [2]}\n"
             "nodes:\n  - {name: y, op: Max, inputs: [x, c]}\n",
             x);
    CU_ASSERT_FATAL(y != NULL && tgc_tensor_dtype(y) == TGC_UINT64);
    const uint64_t *m64 = tgc_tensor_data(y);
    CU_ASSERT(m64[0] == UINT64_MAX && m64[1] == 2);
    tgc_tensor_release(y);
    tgc_tensor_release(x);

    uint32_t a32[2] = {4000000000u, 7};
    tgc_tensor_create(TGC_UINT32, 1, (int64_t[]){2}, a32, &x);
    y = run1("format: tgc/1\ninputs:\n  - {name: x, dtype: uint32, shape: [2]}\noutputs: [y]\n"
             "initializers:\n  - {name: c, dtype: uint32, shape: [1], values: [3]}\n"
             "nodes:\n  - {name: y, op: Div, inputs: [x, c]}\n",
             x);
    CU_ASSERT_FATAL(y != NULL && tgc_tensor_dtype(y) == TGC_UINT32);
    const uint32_t *q = tgc_tensor_data(y);
    CU_ASSERT(q[0] == 1333333333u && q[1] == 2);
    tgc_tensor_release(y);
    tgc_tensor_release(x);

    /* 1 + 2^-8 + 2^-30: just above the bfloat16 halfway point between 1 and
     * 1 + 2^-7, so 0x3F81; a float64 -> float32 -> bfloat16 path rounds
     * twice (to exactly 1 + 2^-8, a tie, then to even 0x3F80). */
    double ad[3] = {1.0 + 0x1p-8 + 0x1p-30, -2.5, 300.7};
    tgc_tensor_create(TGC_FLOAT64, 1, (int64_t[]){3}, ad, &x);
    y = run1("format: tgc/1\ninputs:\n  - {name: x, dtype: float64, shape: [3]}\noutputs: [y]\n"
             "nodes:\n  - {name: y, op: Cast, inputs: [x], attrs: {to: 16}}\n",
             x);
    CU_ASSERT_FATAL(y != NULL && tgc_tensor_dtype(y) == TGC_BFLOAT16);
    const uint16_t *b = tgc_tensor_data(y);
    CU_ASSERT(b[0] == 0x3F81 && b[1] == 0xC020 && b[2] == 0x4396); /* 300.7 -> 300 (0x4396) */
    tgc_tensor_release(y);
    y = run1("format: tgc/1\ninputs:\n  - {name: x, dtype: float64, shape: [3]}\noutputs: [y]\n"
             "nodes:\n  - {name: y, op: Cast, inputs: [x], attrs: {to: 3}}\n",
             x);
    CU_ASSERT_FATAL(y != NULL && tgc_tensor_dtype(y) == TGC_INT8);
    const int8_t *c8 = tgc_tensor_data(y);
    CU_ASSERT(c8[0] == 1 && c8[1] == -2 && c8[2] == 44);
    tgc_tensor_release(y);
    tgc_tensor_release(x);
}

/* float64 reductions in double: numpy.sum([0.1, 0.2, 0.3]) ==
 * 0.6000000000000001 and numpy.mean([1., 2., 4.]) == 7 / 3 (to an ulp
 * or two: the summation order may differ), numpy.max and argmax. */
static void test_float64_reductions(void) {
    double v[3] = {0.1, 0.2, 0.3};
    tgc_tensor *x, *y;
    tgc_tensor_create(TGC_FLOAT64, 1, (int64_t[]){3}, v, &x);
    y = run1("format: tgc/1\ninputs:\n  - {name: x, dtype: float64, shape: [3]}\noutputs: [y]\n"
             "nodes:\n  - {name: y, op: ReduceSum, inputs: [x]}\n",
             x);
    CU_ASSERT_FATAL(y != NULL && tgc_tensor_dtype(y) == TGC_FLOAT64);
    CU_ASSERT_DOUBLE_EQUAL(*(const double *)tgc_tensor_data(y), 0.6000000000000001, 2e-16);
    tgc_tensor_release(y);
    y = run1("format: tgc/1\ninputs:\n  - {name: x, dtype: float64, shape: [3]}\noutputs: [y]\n"
             "nodes:\n  - {name: y, op: ArgMax, inputs: [x]}\n",
             x);
    CU_ASSERT_FATAL(y != NULL && tgc_tensor_dtype(y) == TGC_INT64);
    CU_ASSERT_EQUAL(*(const int64_t *)tgc_tensor_data(y), 2);
    tgc_tensor_release(y);
    tgc_tensor_release(x);
    double w[3] = {1, 2, 4};
    tgc_tensor_create(TGC_FLOAT64, 1, (int64_t[]){3}, w, &x);
    y = run1("format: tgc/1\ninputs:\n  - {name: x, dtype: float64, shape: [3]}\noutputs: [y]\n"
             "nodes:\n  - {name: y, op: ReduceMean, inputs: [x]}\n",
             x);
    CU_ASSERT_FATAL(y != NULL && tgc_tensor_dtype(y) == TGC_FLOAT64);
    CU_ASSERT_DOUBLE_EQUAL(*(const double *)tgc_tensor_data(y), 7.0 / 3.0, 1e-15);
    tgc_tensor_release(y);
    y = run1("format: tgc/1\ninputs:\n  - {name: x, dtype: float64, shape: [3]}\noutputs: [y]\n"
             "nodes:\n  - {name: y, op: ReduceMax, inputs: [x]}\n",
             x);
    CU_ASSERT_FATAL(y != NULL && tgc_tensor_dtype(y) == TGC_FLOAT64);
    CU_ASSERT_EQUAL(*(const double *)tgc_tensor_data(y), 4.0);
    tgc_tensor_release(y);
    tgc_tensor_release(x);
}

TGC_TEST_MAIN("dtypes", {"names and sizes", test_names_and_sizes}, {"bfloat16 rounding", test_bfloat16_rounding},
              {"YAML values and round trip", test_yaml_values_and_round_trip},
              {"YAML range errors", test_yaml_range_errors}, {"ops end to end", test_ops_end_to_end},
              {"float64 reductions", test_float64_reductions})
