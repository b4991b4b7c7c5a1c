/* The cpu elementwise kernels (devices/cpu/kernels_elementwise.c) against
 * NumPy's answers (tests/data/kernels/make_elementwise_refs.py): every op
 * and dtype the kernels list, numpy broadcasting (odd sizes, [3,1,5] with
 * [4,5], scalars on either side, empty tensors), integer wrap-around and
 * truncating division, every Cast pair, in-place runs over a forwarded
 * buffer, and the failures a kernel reports instead of crashing. */
#include "tests/devices/kernel_fixture_ew.h"
#include "graph/elementwise.h"

#include <stdlib.h>

extern const tgc_kernel_def tgc_cpu_kernels_elementwise[];

static const tgc_attr no_attrs[1];

static void binary_case(const char *op, const char *name) { ew_case(EW_DIR, op, name, 2, no_attrs, 0, EW_TOL); }
static void unary_case(const char *op, const char *name) { ew_case(EW_DIR, op, name, 1, no_attrs, 0, EW_TOL); }

/* Makes output 0 share input i's buffer, as the executor does when it
 * forwards (one more reference, released by ew_end). */
static void ew_out_forward(ew_fx *f, int i, tgc_dtype dtype) {
    tgc_value v = f->in[i];
    v.dtype = dtype;
    v.buf = tgc_buffer_retain(f->in[i].buf);
    f->out[f->n_out++] = v;
}

/* ---- Arithmetic ------------------------------------------------------------ */

static void test_arith_f32(void) {
    binary_case("Add", "add_f32_same");
    binary_case("Sub", "sub_f32_same");
    binary_case("Mul", "mul_f32_same");
    binary_case("Div", "div_f32_same");
    binary_case("Add", "add_f32_bcast");
    binary_case("Sub", "sub_f32_bcast");
    binary_case("Mul", "mul_f32_bcast");
    binary_case("Div", "div_f32_bcast");
    binary_case("Add", "add_f32_scalar");
    binary_case("Sub", "sub_f32_scalar_left");
    binary_case("Div", "div_f32_scalar");
    binary_case("Mul", "mul_f32_inner");
    binary_case("Add", "add_f32_one");
    binary_case("Add", "add_f32_vec_matrix");
}

static void test_arith_empty(void) { binary_case("Add", "add_f32_empty"); }

/* Integers wrap around; Div truncates toward zero (ONNX Div: -7 / 2 == -3)
 * and INT64_MIN / -1 wraps to INT64_MIN. */
static void test_arith_int(void) {
    binary_case("Add", "add_i32_wrap");
    binary_case("Mul", "mul_i32_wrap");
    binary_case("Div", "div_i32");
    binary_case("Sub", "sub_i64_bcast");
    binary_case("Div", "div_i64_bcast");
    binary_case("Div", "div_i64_edge");
    binary_case("Add", "add_u8_wrap");
    binary_case("Sub", "sub_u8_wrap");
    binary_case("Div", "div_u8");
}

/* Integer division by zero is a kernel error with a reason, never a crash;
 * float division by zero is IEEE's infinity. */
static void test_div_by_zero(void) {
    ew_fx f;
    ew_begin(&f, "Div", EW_DIR);
    ew_in(&f, TGC_INT32, 1, (int64_t[]){3}, (int32_t[]){1, 2, 3});
    ew_in(&f, TGC_INT32, 1, (int64_t[]){3}, (int32_t[]){1, 0, 3});
    ew_out(&f, TGC_INT32, 1, (int64_t[]){3});
    CU_ASSERT_EQUAL(ew_run(&f), TGC_ERR_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(f.err, "division by zero"));
    ew_end(&f);

    ew_begin(&f, "Div", EW_DIR);
    ew_in(&f, TGC_UINT8, 1, (int64_t[]){2}, (uint8_t[]){9, 8});
    ew_in(&f, TGC_UINT8, 0, NULL, (uint8_t[]){0});
    ew_out(&f, TGC_UINT8, 1, (int64_t[]){2});
    CU_ASSERT_EQUAL(ew_run(&f), TGC_ERR_RUNTIME);
    ew_end(&f);

    ew_begin(&f, "Div", EW_DIR);
    ew_in(&f, TGC_FLOAT32, 1, (int64_t[]){2}, (float[]){1, -1});
    ew_in(&f, TGC_FLOAT32, 0, NULL, (float[]){0});
    ew_out(&f, TGC_FLOAT32, 1, (int64_t[]){2});
    ew_run_ok(&f);
    const float *y = tgc_buffer_host_ptr(f.out[0].buf);
    CU_ASSERT(isinf(y[0]) && y[0] > 0);
    CU_ASSERT(isinf(y[1]) && y[1] < 0);
    ew_end(&f);
}

static void test_pow(void) {
    binary_case("Pow", "pow_f32");
    binary_case("Pow", "pow_f32_i64exp");
    binary_case("Pow", "pow_i64");
    binary_case("Pow", "pow_i32_wrap");

    /* A negative integer exponent of an integer base is refused, as
     * numpy.power (ONNX's reference) refuses it. */
    ew_fx f;
    ew_begin(&f, "Pow", EW_DIR);
    ew_in(&f, TGC_INT64, 1, (int64_t[]){2}, (int64_t[]){2, 3});
    ew_in(&f, TGC_INT64, 1, (int64_t[]){2}, (int64_t[]){1, -1});
    ew_out(&f, TGC_INT64, 1, (int64_t[]){2});
    CU_ASSERT_EQUAL(ew_run(&f), TGC_ERR_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(f.err, "negative exponent"));
    ew_end(&f);

    /* An integer base with a float exponent: pow in double, truncated. */
    ew_begin(&f, "Pow", EW_DIR);
    ew_in(&f, TGC_INT32, 1, (int64_t[]){3}, (int32_t[]){9, 2, -8});
    ew_in(&f, TGC_FLOAT32, 1, (int64_t[]){3}, (float[]){0.5f, -1.0f, 2.0f});
    ew_out(&f, TGC_INT32, 1, (int64_t[]){3});
    ew_run_ok(&f);
    const int32_t *y = tgc_buffer_host_ptr(f.out[0].buf);
    CU_ASSERT_EQUAL(y[0], 3);
    CU_ASSERT_EQUAL(y[1], 0);
    CU_ASSERT_EQUAL(y[2], 64);
    ew_end(&f);
}

/* Pow(x, 2) is x * x, the correctly rounded square (numpy.power's short
 * cut), bit for bit: negative, huge (to inf), tiny, -0, inf and NaN bases;
 * in float16 too (2.0 is 0x4000); an exponent of [1, 1] makes the output
 * rank 2, so the general loop answers, still within its 1 ulp. */
static void test_pow_square(void) {
    static const float x[8] = {-3.5f, 1e20f, 1.5e-23f, -0.0f, INFINITY, -INFINITY, NAN, 0.1f};
    ew_fx f;
    ew_begin(&f, "Pow", EW_DIR);
    ew_in(&f, TGC_FLOAT32, 1, (int64_t[]){8}, x);
    ew_in(&f, TGC_FLOAT32, 0, NULL, (float[]){2.0f});
    ew_out(&f, TGC_FLOAT32, 1, (int64_t[]){8});
    ew_run_ok(&f);
    const float *y = tgc_buffer_host_ptr(f.out[0].buf);
    for (int i = 0; i < 8; i++) {
        volatile float sq = x[i] * x[i]; /* rounded once, to float */
        CU_ASSERT(memcmp(&y[i], (const void *)&sq, sizeof sq) == 0 || (isnan(y[i]) && isnan(x[i])));
    }
    ew_end(&f);

    ew_begin(&f, "Pow", EW_DIR);
    ew_in(&f, TGC_FLOAT16, 1, (int64_t[]){3}, (uint16_t[]){0x3e00, 0xc500, 0x5bff}); /* 1.5, -5, 255.875 */
    ew_in(&f, TGC_FLOAT16, 1, (int64_t[]){1}, (uint16_t[]){0x4000});
    ew_out(&f, TGC_FLOAT16, 1, (int64_t[]){3});
    ew_run_ok(&f);
    const uint16_t *h = tgc_buffer_host_ptr(f.out[0].buf);
    CU_ASSERT_EQUAL(h[0], 0x4080); /* 2.25 */
    CU_ASSERT_EQUAL(h[1], 0x4e40); /* 25 */
    CU_ASSERT_EQUAL(h[2], 0x7bfe); /* 65472.015625 rounds to 65472 (float16 steps 32 there) */
    ew_end(&f);

    ew_begin(&f, "Pow", EW_DIR);
    ew_in(&f, TGC_FLOAT32, 1, (int64_t[]){2}, (float[]){3.0f, -0.5f});
    ew_in(&f, TGC_FLOAT32, 2, (int64_t[]){1, 1}, (float[]){2.0f});
    ew_out(&f, TGC_FLOAT32, 2, (int64_t[]){1, 2});
    ew_run_ok(&f);
    y = tgc_buffer_host_ptr(f.out[0].buf);
    CU_ASSERT(fabsf(y[0] - 9.0f) <= 9.0f * 1.2e-7f);
    CU_ASSERT(fabsf(y[1] - 0.25f) <= 0.25f * 1.2e-7f);
    ew_end(&f);
}

/* ---- Unary ----------------------------------------------------------------- */

static void test_unary_f32(void) {
    unary_case("Neg", "neg_f32");
    unary_case("Abs", "abs_f32");
    unary_case("Relu", "relu_f32");
    unary_case("LeakyRelu", "leakyrelu_f32_default");
    unary_case("Tanh", "tanh_f32");
    unary_case("Exp", "exp_f32");
    unary_case("Erf", "erf_f32");
    unary_case("Sigmoid", "sigmoid_f32");
    unary_case("Log", "log_f32");
    unary_case("Sqrt", "sqrt_f32");
    unary_case("Exp", "exp_f32_empty");
    const tgc_attr alpha[] = {EW_FLOAT("alpha", 0.2)};
    ew_case(EW_DIR, "LeakyRelu", "leakyrelu_f32_alpha", 1, alpha, 1, EW_TOL);
}

static void test_unary_int(void) {
    unary_case("Neg", "neg_i32");
    unary_case("Relu", "relu_i32");
    unary_case("Abs", "abs_i64");
}

/* Sigmoid never overflows: exp is only taken of non-positive numbers. */
static void test_sigmoid_extremes(void) {
    ew_fx f;
    ew_begin(&f, "Sigmoid", EW_DIR);
    ew_in(&f, TGC_FLOAT32, 1, (int64_t[]){4}, (float[]){-1e30f, -INFINITY, INFINITY, 1e30f});
    ew_out(&f, TGC_FLOAT32, 1, (int64_t[]){4});
    ew_run_ok(&f);
    const float *y = tgc_buffer_host_ptr(f.out[0].buf);
    CU_ASSERT(y[0] == 0.0f && y[1] == 0.0f && y[2] == 1.0f && y[3] == 1.0f);
    ew_end(&f);
}

/* ---- Min, Max, Clip ---------------------------------------------------------- */

static void test_min_max(void) {
    ew_case(EW_DIR, "Max", "max_f32_3", 3, no_attrs, 0, EW_TOL);
    ew_case(EW_DIR, "Min", "min_f32_3", 3, no_attrs, 0, EW_TOL);
    unary_case("Max", "max_f32_1");
    binary_case("Min", "min_i64_2");
    binary_case("Max", "max_u8_2");
}

/* NaN wins in Min and Max, as numpy.minimum/maximum. */
static void test_min_max_nan(void) {
    ew_fx f;
    ew_begin(&f, "Max", EW_DIR);
    ew_in(&f, TGC_FLOAT32, 1, (int64_t[]){3}, (float[]){NAN, 1, 2});
    ew_in(&f, TGC_FLOAT32, 1, (int64_t[]){3}, (float[]){0, NAN, 3});
    ew_out(&f, TGC_FLOAT32, 1, (int64_t[]){3});
    ew_run_ok(&f);
    const float *y = tgc_buffer_host_ptr(f.out[0].buf);
    CU_ASSERT(isnan(y[0]) && isnan(y[1]) && y[2] == 3);
    ew_end(&f);
}

/* float16 Min and Max (binary16 bits by hand): three inputs broadcast, the
 * first extreme's bits returned unchanged, NaN wins. 0x3C00 = 1, 0xC000 =
 * -2, 0x4200 = 3, 0x3800 = 0.5, 0x7E00 = NaN, 0x8000 = -0. */
static void test_min_max_f16(void) {
    static const char *const ops[2] = {"Max", "Min"};
    static const uint16_t want[2][3] = {{0x4200, 0x7E00, 0x4200}, {0xC000, 0x7E00, 0x8000}};
    for (int k = 0; k < 2; k++) {
        ew_fx f;
        ew_begin(&f, ops[k], EW_DIR);
        ew_in(&f, TGC_FLOAT16, 1, (int64_t[]){3}, (uint16_t[]){0x3C00, 0x7E00, 0x8000});
        ew_in(&f, TGC_FLOAT16, 1, (int64_t[]){3}, (uint16_t[]){0xC000, 0x3800, 0x3C00});
        ew_in(&f, TGC_FLOAT16, 1, (int64_t[]){1}, (uint16_t[]){0x4200});
        ew_out(&f, TGC_FLOAT16, 1, (int64_t[]){3});
        ew_run_ok(&f);
        const uint16_t *y = tgc_buffer_host_ptr(f.out[0].buf);
        for (int i = 0; i < 3; i++) CU_ASSERT_EQUAL(y[i], want[k][i]);
        ew_end(&f);
    }
}

static void test_clip(void) {
    ew_case(EW_DIR, "Clip", "clip_f32", 3, no_attrs, 0, EW_TOL);
    ew_case(EW_DIR, "Clip", "clip_f32_min", 2, no_attrs, 0, EW_TOL);
    ew_case(EW_DIR, "Clip", "clip_f32_none", 1, no_attrs, 0, EW_TOL);
    ew_case(EW_DIR, "Clip", "clip_f32_crossed", 3, no_attrs, 0, EW_TOL);
    ew_case(EW_DIR, "Clip", "clip_i32", 3, no_attrs, 0, EW_TOL);

    /* min omitted (""), max given. */
    ew_fx f;
    ew_begin(&f, "Clip", EW_DIR);
    ew_in_npy(&f, "clip_f32_max_in0");
    ew_in_omit(&f);
    ew_in_npy(&f, "clip_f32_max_in1");
    ew_out_npy(&f, "clip_f32_max_out");
    ew_run_ok(&f);
    ew_check(&f, EW_TOL);
    ew_end(&f);

    /* A bound of more than one element is an error. */
    ew_begin(&f, "Clip", EW_DIR);
    ew_in(&f, TGC_FLOAT32, 1, (int64_t[]){2}, (float[]){1, 2});
    ew_in(&f, TGC_FLOAT32, 1, (int64_t[]){2}, (float[]){0, 0});
    ew_out(&f, TGC_FLOAT32, 1, (int64_t[]){2});
    CU_ASSERT_EQUAL(ew_run(&f), TGC_ERR_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(f.err, "min"));
    ew_end(&f);
}

/* ---- Comparisons, Where -------------------------------------------------------- */

static void test_compare(void) {
    binary_case("Equal", "equal_f32");
    binary_case("Less", "less_f32");
    binary_case("Greater", "greater_f32");
    binary_case("Equal", "equal_i64_bcast");
    binary_case("Greater", "greater_i64_bcast");
    binary_case("Less", "less_i32_scalar");
    binary_case("Equal", "equal_bool");
    binary_case("Less", "less_u8");
}

static void test_where(void) {
    ew_case(EW_DIR, "Where", "where_f32", 3, no_attrs, 0, EW_TOL);
    ew_case(EW_DIR, "Where", "where_i64", 3, no_attrs, 0, EW_TOL);
    ew_case(EW_DIR, "Where", "where_f16", 3, no_attrs, 0, 0);
    ew_case(EW_DIR, "Where", "where_u8_same", 3, no_attrs, 0, EW_TOL);
}

/* ---- Cast, Identity ------------------------------------------------------------ */

/* Every pair among float32 float16 int32 int64 uint8 bool, bit for bit. */
static void test_cast_all_pairs(void) {
    static const char *names[] = {"f32", "f16", "i32", "i64", "u8", "b8"};
    static const int64_t onnx[] = {1, 10, 6, 7, 2, 9}; /* TensorProto codes, tgc_dtype order */
    for (int s = 0; s < 6; s++)
        for (int d = 0; d < 6; d++) {
            char name[64];
            snprintf(name, sizeof name, "cast_%s_%s", names[s], names[d]);
            const tgc_attr to[] = {EW_INT("to", onnx[d])};
            ew_case(EW_DIR, "Cast", name, 1, to, 1, 0);
        }
}

/* Out of range and NaN saturate (undefined in C, unspecified in ONNX). */
static void test_cast_saturates(void) {
    const tgc_attr to[] = {EW_INT("to", 6)};
    ew_case(EW_DIR, "Cast", "cast_f32_i32_sat", 1, to, 1, 0);

    /* float -> uint8 truncates to an integer, then wraps modulo 256. */
    ew_fx f;
    ew_begin(&f, "Cast", EW_DIR);
    ew_attr(&f, EW_INT("to", 2));
    ew_in(&f, TGC_FLOAT32, 1, (int64_t[]){4}, (float[]){-1.5f, 256.7f, -300.0f, NAN});
    ew_out(&f, TGC_UINT8, 1, (int64_t[]){4});
    ew_run_ok(&f);
    const uint8_t *u = tgc_buffer_host_ptr(f.out[0].buf);
    CU_ASSERT(u[0] == 255 && u[1] == 0 && u[2] == 212 && u[3] == 0);
    ew_end(&f);

    /* NaN is not zero: true. */
    ew_begin(&f, "Cast", EW_DIR);
    ew_attr(&f, EW_INT("to", 9));
    ew_in(&f, TGC_FLOAT16, 1, (int64_t[]){3}, (uint16_t[]){0x7E00, 0x8000, 0x0001});
    ew_out(&f, TGC_BOOL, 1, (int64_t[]){3});
    ew_run_ok(&f);
    const uint8_t *b = tgc_buffer_host_ptr(f.out[0].buf);
    CU_ASSERT(b[0] == 1 && b[1] == 0 && b[2] == 1);
    ew_end(&f);
}

static void test_cast_errors(void) {
    ew_fx f;
    ew_begin(&f, "Cast", EW_DIR);
    ew_attr(&f, EW_INT("to", 14)); /* complex64: not a tgc dtype */
    ew_in(&f, TGC_FLOAT32, 1, (int64_t[]){1}, (float[]){1});
    ew_out(&f, TGC_INT32, 1, (int64_t[]){1});
    CU_ASSERT_EQUAL(ew_run(&f), TGC_ERR_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(f.err, "'to'"));
    ew_end(&f);

    ew_begin(&f, "Cast", EW_DIR);
    ew_attr(&f, EW_INT("to", 7)); /* int64, but the output is int32 */
    ew_in(&f, TGC_FLOAT32, 1, (int64_t[]){1}, (float[]){1});
    ew_out(&f, TGC_INT32, 1, (int64_t[]){1});
    CU_ASSERT_EQUAL(ew_run(&f), TGC_ERR_RUNTIME);
    ew_end(&f);
}

static void test_identity(void) {
    unary_case("Identity", "identity_f16");
    unary_case("Identity", "identity_i64");

    /* Forwarded: the output is the input's buffer; nothing changes. */
    ew_fx f;
    ew_begin(&f, "Identity", EW_DIR);
    ew_in(&f, TGC_BOOL, 1, (int64_t[]){3}, (uint8_t[]){1, 0, 1});
    ew_out_forward(&f, 0, TGC_BOOL);
    ew_run_ok(&f);
    const uint8_t *y = tgc_buffer_host_ptr(f.out[0].buf);
    CU_ASSERT(y[0] == 1 && y[1] == 0 && y[2] == 1);
    ew_end(&f);
}

/* ---- In place (buffer forwarding) ------------------------------------------------ */

/* Runs CASE with output 0 in input 0's buffer and checks the reference. */
static void forwarded_case(const char *op, const char *name, int n_in, const tgc_attr *attrs, int n_attrs) {
    ew_fx f;
    char file[128];
    ew_begin(&f, op, EW_DIR);
    for (int i = 0; i < n_attrs; i++) ew_attr(&f, attrs[i]);
    for (int i = 0; i < n_in; i++) {
        snprintf(file, sizeof file, "%s_in%d", name, i);
        ew_in_npy(&f, file);
    }
    snprintf(file, sizeof file, "%s_out", name);
    f.ref = ew_read(&f, file);
    f.has_ref = true;
    ew_out_forward(&f, 0, f.ref.dtype);
    ew_run_ok(&f);
    ew_check(&f, EW_TOL);
    ew_end(&f);
}

static void test_in_place_unary(void) {
    forwarded_case("Relu", "relu_f32", 1, NULL, 0);
    forwarded_case("Sigmoid", "sigmoid_f32", 1, NULL, 0);
    forwarded_case("Neg", "neg_i32", 1, NULL, 0);
    forwarded_case("Clip", "clip_f32", 3, NULL, 0);
}

static void test_in_place_binary(void) {
    forwarded_case("Add", "add_f32_same", 2, NULL, 0);
    forwarded_case("Add", "add_f32_scalar", 2, NULL, 0);
    forwarded_case("Div", "div_i32", 2, NULL, 0); /* [2,4] / [4] */
    forwarded_case("Equal", "equal_bool", 2, NULL, 0);
    forwarded_case("Where", "where_u8_same", 3, NULL, 0); /* bool condition -> uint8 output */
    forwarded_case("Max", "max_u8_2", 2, NULL, 0);

    /* x * x with x forwarded: both inputs are the output's buffer. */
    ew_fx f;
    ew_begin(&f, "Mul", EW_DIR);
    ew_in(&f, TGC_FLOAT32, 1, (int64_t[]){5}, (float[]){1, -2, 3, -4, 0.5f});
    f.in[1] = f.in[0];
    f.in[1].buf = tgc_buffer_retain(f.in[0].buf);
    f.n_in = 2;
    ew_out_forward(&f, 0, TGC_FLOAT32);
    ew_run_ok(&f);
    const float *y = tgc_buffer_host_ptr(f.out[0].buf);
    CU_ASSERT(y[0] == 1 && y[1] == 4 && y[2] == 9 && y[3] == 16 && y[4] == 0.25f);
    ew_end(&f);

    /* Max(x, b, x) with x forwarded: idempotence keeps it right. */
    ew_begin(&f, "Max", EW_DIR);
    ew_in(&f, TGC_INT64, 1, (int64_t[]){4}, (int64_t[]){1, 5, -3, 7});
    ew_in(&f, TGC_INT64, 0, NULL, (int64_t[]){2});
    f.in[2] = f.in[0];
    f.in[2].buf = tgc_buffer_retain(f.in[0].buf);
    f.n_in = 3;
    ew_out_forward(&f, 0, TGC_INT64);
    ew_run_ok(&f);
    const int64_t *m = tgc_buffer_host_ptr(f.out[0].buf);
    CU_ASSERT(m[0] == 2 && m[1] == 5 && m[2] == 2 && m[3] == 7);
    ew_end(&f);
}

/* Cast over a forwarded buffer: same width, narrower (forwards), and wider
 * (an output bigger than its input: the loop runs backwards). */
static void test_in_place_cast(void) {
    forwarded_case("Cast", "cast_f32_i32", 1, (tgc_attr[]){EW_INT("to", 6)}, 1);
    forwarded_case("Cast", "cast_i64_u8", 1, (tgc_attr[]){EW_INT("to", 2)}, 1);

    ew_fx f;
    ew_begin(&f, "Cast", EW_DIR);
    ew_attr(&f, EW_INT("to", 6));
    tgc_value out = ew_value(&f, TGC_INT32, 1, (int64_t[]){6}, NULL);
    uint8_t *p = tgc_buffer_host_ptr(out.buf);
    const uint8_t src[6] = {0, 1, 127, 128, 200, 255};
    memcpy(p, src, sizeof src);
    f.in[0] = (tgc_value){.dtype = TGC_UINT8, .rank = 1, .dims = {6}, .buf = tgc_buffer_retain(out.buf)};
    f.n_in = 1;
    f.out[0] = out;
    f.n_out = 1;
    ew_run_ok(&f);
    const int32_t *y = tgc_buffer_host_ptr(out.buf);
    for (int i = 0; i < 6; i++) CU_ASSERT_EQUAL(y[i], src[i]);
    ew_end(&f);
}

/* ---- Broadcasting against a direct index computation ----------------------------- */

/* Offset in a right-aligned broadcast operand of `rank` dims for the output
 * index idx[0..out_rank). */
static int64_t bcast_offset(int out_rank, const int64_t *idx, int rank, const int64_t *dims) {
    int64_t off = 0;
    for (int d = 0; d < rank; d++) {
        int64_t i = dims[d] == 1 ? 0 : idx[out_rank - rank + d];
        off = off * dims[d] + i;
    }
    return off;
}

/* Random shapes of rank up to 5 with dims 1..3 (and their broadcasts): Sub
 * on two operands and Where on three, element by element against the
 * definition. */
static void test_broadcast_random(void) {
    srand(7);
    for (int trial = 0; trial < 200; trial++) {
        int out_rank = rand() % 6;
        int64_t out[TGC_MAX_RANK], dims[3][TGC_MAX_RANK];
        int ranks[3];
        for (int d = 0; d < out_rank; d++) out[d] = 1 + rand() % 3;
        for (int k = 0; k < 3; k++) {
            ranks[k] = out_rank ? rand() % (out_rank + 1) : 0;
            for (int d = 0; d < ranks[k]; d++)
                dims[k][d] = rand() % 3 == 0 ? 1 : out[out_rank - ranks[k] + d];
        }
        /* The output must be the broadcast of the operands: widen to it. */
        int64_t bo[TGC_MAX_RANK];
        for (int d = 0; d < out_rank; d++) {
            bo[d] = 1;
            for (int k = 0; k < 3; k++) {
                int di = d - (out_rank - ranks[k]);
                if (di >= 0 && dims[k][di] > bo[d]) bo[d] = dims[k][di];
            }
        }
        ew_fx f;
        ew_begin(&f, trial % 2 ? "Where" : "Sub", EW_DIR);
        int n_ops = trial % 2 ? 3 : 2;
        for (int k = 0; k < n_ops; k++) {
            int64_t n = 1;
            for (int d = 0; d < ranks[k]; d++) n *= dims[k][d];
            int32_t vals[256];
            bool cond = k == 0 && n_ops == 3;
            for (int64_t i = 0; i < n; i++) vals[i] = (int32_t)(cond ? rand() % 2 : rand() % 1000);
            if (cond) {
                uint8_t c8[256];
                for (int64_t i = 0; i < n; i++) c8[i] = (uint8_t)vals[i];
                ew_in(&f, TGC_BOOL, ranks[k], dims[k], c8);
            } else {
                ew_in(&f, TGC_INT32, ranks[k], dims[k], vals);
            }
        }
        ew_out(&f, TGC_INT32, out_rank, bo);
        ew_run_ok(&f);
        int64_t n = tgc_value_numel(&f.out[0]), bad = 0;
        const int32_t *y = tgc_buffer_host_ptr(f.out[0].buf);
        for (int64_t i = 0; i < n; i++) {
            int64_t idx[TGC_MAX_RANK], rem = i;
            for (int d = out_rank - 1; d >= 0; d--) {
                idx[d] = rem % bo[d];
                rem /= bo[d];
            }
            int32_t want;
            if (n_ops == 2) {
                const int32_t *a = tgc_buffer_host_ptr(f.in[0].buf), *b = tgc_buffer_host_ptr(f.in[1].buf);
                want = a[bcast_offset(out_rank, idx, ranks[0], dims[0])] -
                       b[bcast_offset(out_rank, idx, ranks[1], dims[1])];
            } else {
                const uint8_t *c = tgc_buffer_host_ptr(f.in[0].buf);
                const int32_t *x = tgc_buffer_host_ptr(f.in[1].buf), *z = tgc_buffer_host_ptr(f.in[2].buf);
                want = c[bcast_offset(out_rank, idx, ranks[0], dims[0])]
                           ? x[bcast_offset(out_rank, idx, ranks[1], dims[1])]
                           : z[bcast_offset(out_rank, idx, ranks[2], dims[2])];
            }
            if (y[i] != want) bad++;
        }
        CU_ASSERT_EQUAL(bad, 0);
        ew_end(&f);
    }
}

/* ---- What the executor relies on ------------------------------------------------- */

/* An output shape the inputs do not broadcast to is a message, not a crash. */
static void test_shape_mismatch(void) {
    ew_fx f;
    ew_begin(&f, "Add", EW_DIR);
    ew_in(&f, TGC_FLOAT32, 2, (int64_t[]){2, 3}, (float[]){1, 2, 3, 4, 5, 6});
    ew_in(&f, TGC_FLOAT32, 1, (int64_t[]){3}, (float[]){1, 2, 3});
    ew_out(&f, TGC_FLOAT32, 2, (int64_t[]){2, 4});
    CU_ASSERT_EQUAL(ew_run(&f), TGC_ERR_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(f.err, "does not broadcast"));
    ew_end(&f);

    ew_begin(&f, "Relu", EW_DIR);
    ew_in(&f, TGC_FLOAT32, 1, (int64_t[]){3}, (float[]){1, 2, 3});
    ew_out(&f, TGC_FLOAT32, 1, (int64_t[]){4});
    CU_ASSERT_EQUAL(ew_run(&f), TGC_ERR_RUNTIME);
    ew_end(&f);

    ew_begin(&f, "Add", EW_DIR);
    ew_in(&f, TGC_FLOAT32, 1, (int64_t[]){3}, (float[]){1, 2, 3});
    ew_in(&f, TGC_INT32, 1, (int64_t[]){3}, (int32_t[]){1, 2, 3});
    ew_out(&f, TGC_FLOAT32, 1, (int64_t[]){3});
    CU_ASSERT_EQUAL(ew_run(&f), TGC_ERR_RUNTIME);
    ew_end(&f);
}

static void test_registry(void) {
    const tgc_kernel_def *k;
    CU_ASSERT_PTR_NOT_NULL(tgc_kernel_find("Add", TGC_DEVICE_CPU, TGC_INT64));
    CU_ASSERT_PTR_NULL(tgc_kernel_find("Add", TGC_DEVICE_CPU, TGC_BOOL));
    CU_ASSERT_PTR_NULL(tgc_kernel_find("Sigmoid", TGC_DEVICE_CPU, TGC_INT32));
    CU_ASSERT_PTR_NULL(tgc_kernel_find("Where", TGC_DEVICE_CPU, TGC_FLOAT32));
    CU_ASSERT_PTR_NOT_NULL(tgc_kernel_find("Where", TGC_DEVICE_CPU, TGC_BOOL));
    CU_ASSERT_PTR_NOT_NULL(tgc_kernel_find("Cast", TGC_DEVICE_CPU, TGC_FLOAT16));
    CU_ASSERT_PTR_NOT_NULL(tgc_kernel_find("Identity", TGC_DEVICE_CPU, TGC_FLOAT16));
    CU_ASSERT_PTR_NOT_NULL(tgc_kernel_find("Equal", TGC_DEVICE_CPU, TGC_BOOL));
    CU_ASSERT_PTR_NULL(tgc_kernel_find("Less", TGC_DEVICE_CPU, TGC_BOOL));
    k = tgc_kernel_find("Clip", TGC_DEVICE_CPU, TGC_FLOAT32);
    CU_ASSERT_FATAL(k != NULL);
    CU_ASSERT_EQUAL(k->host_inputs, (1u << 1) | (1u << 2));
    /* Every row of graph/elementwise.def has a kernel, then Pow's integer
     * bases, Where, Cast, Identity and CastLike; each but Mean may run in place over input 0,
     * each list ended. */
    static const char *extra[] = {"Pow", "Where", "Cast", "Identity", "CastLike"};
    size_t n = 0, n_extra = sizeof extra / sizeof extra[0];
    for (k = tgc_cpu_kernels_elementwise; k->op != NULL; k++, n++) {
        const char *want = n < TGC_EW_COUNT ? tgc_ew_rows[n].op : n - TGC_EW_COUNT < n_extra ? extra[n - TGC_EW_COUNT] : "";
        CU_ASSERT_STRING_EQUAL(k->op, want);
        CU_ASSERT_EQUAL(k->forward_input, strcmp(k->op, "Mean") == 0 ? -1 : 0); /* Mean: never in place */
        bool ended = false;
        for (int i = 0; i < TGC_KERNEL_MAX_DTYPES; i++) ended = ended || k->dtypes[i] == TGC_DTYPE_INVALID;
        CU_ASSERT(ended);
    }
    CU_ASSERT_EQUAL(n, TGC_EW_COUNT + n_extra);
}

TGC_TEST_MAIN("cpu_elementwise", {"pow square", test_pow_square},
              {"arith_f32", test_arith_f32},
              {"arith_empty", test_arith_empty},
              {"arith_int", test_arith_int},
              {"div_by_zero", test_div_by_zero},
              {"pow", test_pow},
              {"unary_f32", test_unary_f32},
              {"unary_int", test_unary_int},
              {"sigmoid_extremes", test_sigmoid_extremes},
              {"min_max", test_min_max},
              {"min_max_nan", test_min_max_nan},
              {"min_max_f16", test_min_max_f16},
              {"clip", test_clip},
              {"compare", test_compare},
              {"where", test_where},
              {"cast_all_pairs", test_cast_all_pairs},
              {"cast_saturates", test_cast_saturates},
              {"cast_errors", test_cast_errors},
              {"identity", test_identity},
              {"in_place_unary", test_in_place_unary},
              {"in_place_binary", test_in_place_binary},
              {"in_place_cast", test_in_place_cast},
              {"broadcast_random", test_broadcast_random},
              {"shape_mismatch", test_shape_mismatch},
              {"registry", test_registry})
