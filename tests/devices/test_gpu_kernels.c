/* The gpu (OpenCL) kernels of devices/opencl/kernels_{elementwise,reduce,
 * shape}.c against the cpu kernels of the same ops, on seeded random
 * inputs: odd sizes (7x13), numpy broadcasting ([3,1,5] with [4,5]),
 * scalars, empty tensors, negative axes, every dtype a kernel lists, and
 * output 0 written over input 0's buffer where the kernel allows it.
 * Floats must agree within 1e-5 relative, integers, bools and moved data
 * exactly. Each test ends with no buffer and no OpenCL memory or event
 * left. Without an OpenCL device every test passes after a notice. */
#include "tests/devices/gpu_fixture.h"

#define DIMS(...) ((const int64_t[]){__VA_ARGS__})
#define NDIMS(...) (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
/* rank and dims of a literal shape: SHAPE(7, 13) -> 2, {7, 13} */
#define SHAPE(...) NDIMS(__VA_ARGS__), DIMS(__VA_ARGS__)
#define SCALAR 0, NULL

/* A shape: rank and dims. */
typedef struct shp {
    int rank;
    int64_t dims[TGC_MAX_RANK];
} shp;

/* Numpy broadcast of a and b (the test only builds valid pairs). */
static shp broadcast(shp a, shp b) {
    shp o = {a.rank > b.rank ? a.rank : b.rank, {0}};
    for (int i = 0; i < o.rank; i++) {
        int ia = i - (o.rank - a.rank), ib = i - (o.rank - b.rank);
        int64_t da = ia >= 0 ? a.dims[ia] : 1, db = ib >= 0 ? b.dims[ib] : 1;
        o.dims[i] = da == 1 ? db : da;
    }
    return o;
}

/* The shape pairs every binary op is run over. */
static const shp pairs[][2] = {
    {{2, {7, 13}}, {2, {7, 13}}},       /* equal: the contiguous kernel */
    {{3, {3, 1, 5}}, {2, {4, 5}}},      /* both broadcast */
    {{0, {0}}, {2, {7, 13}}},           /* scalar first */
    {{2, {7, 13}}, {1, {1}}},           /* one element second */
    {{2, {7, 13}}, {1, {13}}},          /* a row */
    {{3, {2, 3, 4}}, {2, {3, 1}}},      /* a column */
    {{4, {2, 1, 3, 1}}, {4, {1, 4, 1, 5}}},
    {{0, {0}}, {0, {0}}},               /* scalars */
    {{2, {0, 3}}, {2, {1, 3}}},         /* empty */
    {{1, {1}}, {1, {1}}},
};
#define N_PAIRS (int)(sizeof pairs / sizeof pairs[0])

/* op(a, b) for random a, b of dtype over every shape pair; out_dtype of the
 * result (TGC_DTYPE_INVALID: dtype). lo, hi bound the random values. */
static void binary_all(gk_dev *d, const char *op, tgc_dtype dtype, tgc_dtype out_dtype, double lo, double hi) {
    for (int p = 0; p < N_PAIRS; p++) {
        gk_case k;
        gk_begin(&k, d, op);
        shp a = pairs[p][0], b = pairs[p][1], o = broadcast(a, b);
        gk_in_range(&k, dtype, a.rank, a.dims, lo, hi);
        gk_in_range(&k, dtype, b.rank, b.dims, lo, hi);
        gk_out(&k, out_dtype == TGC_DTYPE_INVALID ? dtype : out_dtype, o.rank, o.dims);
        gk_run(&k);
        gk_end(&k);
    }
}

/* ---- Binary arithmetic --------------------------------------------------------- */

static void test_arith_f32(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    static const char *const ops[] = {"Add", "Sub", "Mul", "Div"};
    for (int i = 0; i < 4; i++) binary_all(&d, ops[i], TGC_FLOAT32, TGC_DTYPE_INVALID, -3, 3);
    gk_close(&d);
}

/* Integer arithmetic wraps around, as the cpu's does. */
static void test_arith_int(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    static const char *const ops[] = {"Add", "Sub", "Mul"};
    for (int i = 0; i < 3; i++) {
        binary_all(&d, ops[i], TGC_INT32, TGC_DTYPE_INVALID, -1000, 1000);
        binary_all(&d, ops[i], TGC_INT64, TGC_DTYPE_INVALID, -1e12, 1e12);
        gk_case k;
        gk_begin(&k, &d, ops[i]);
        gk_in(&k, TGC_INT32, SHAPE(4), (int32_t[]){INT32_MAX, INT32_MIN, 65536, -1});
        gk_in(&k, TGC_INT32, SHAPE(4), (int32_t[]){1, 1, 65536, INT32_MIN});
        gk_out(&k, TGC_INT32, SHAPE(4));
        gk_run(&k);
        gk_end(&k);
        gk_begin(&k, &d, ops[i]);
        gk_in(&k, TGC_INT64, SHAPE(3), (int64_t[]){INT64_MAX, INT64_MIN, 1ll << 40});
        gk_in(&k, TGC_INT64, SHAPE(3), (int64_t[]){1, 1, 1ll << 40});
        gk_out(&k, TGC_INT64, SHAPE(3));
        gk_run(&k);
        gk_end(&k);
    }
    gk_close(&d);
}

/* Pow: a float32 base, the exponent float32 or an integer. */
static void test_pow(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    for (int p = 0; p < N_PAIRS; p++) {
        static const tgc_dtype exps[] = {TGC_FLOAT32, TGC_INT32, TGC_INT64};
        for (int e = 0; e < 3; e++) {
            gk_case k;
            gk_begin(&k, &d, "Pow");
            shp a = pairs[p][0], b = pairs[p][1], o = broadcast(a, b);
            gk_in_range(&k, TGC_FLOAT32, a.rank, a.dims, 0.1, 3);
            gk_in_range(&k, exps[e], b.rank, b.dims, -3, 3);
            gk_out(&k, TGC_FLOAT32, o.rank, o.dims);
            gk_run(&k);
            gk_end(&k);
        }
    }
    /* Negative bases: integral exponents give real results, others NaN. */
    gk_case k;
    gk_begin(&k, &d, "Pow");
    gk_in(&k, TGC_FLOAT32, SHAPE(5), (float[]){-2, -2, -0.5f, 0, -3});
    gk_in(&k, TGC_FLOAT32, SHAPE(5), (float[]){3, 0.5f, -2, 0, 2});
    gk_out(&k, TGC_FLOAT32, SHAPE(5));
    gk_run(&k);
    gk_end(&k);
    gk_close(&d);
}

/* ---- Min, Max ------------------------------------------------------------------ */

static void test_min_max(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    static const char *const ops[] = {"Min", "Max"};
    for (int i = 0; i < 2; i++) {
        binary_all(&d, ops[i], TGC_FLOAT32, TGC_DTYPE_INVALID, -2, 2);
        binary_all(&d, ops[i], TGC_INT32, TGC_DTYPE_INVALID, -50, 50);
        binary_all(&d, ops[i], TGC_INT64, TGC_DTYPE_INVALID, -50, 50);
        gk_case k;
        /* NaN propagates from either side. */
        gk_begin(&k, &d, ops[i]);
        gk_in(&k, TGC_FLOAT32, SHAPE(4), (float[]){NAN, 1, -INFINITY, 2});
        gk_in(&k, TGC_FLOAT32, SHAPE(4), (float[]){1, NAN, 3, INFINITY});
        gk_out(&k, TGC_FLOAT32, SHAPE(4));
        gk_run(&k);
        gk_end(&k);
        /* Variadic, broadcasting: three inputs. */
        gk_begin(&k, &d, ops[i]);
        gk_in_rand(&k, TGC_FLOAT32, SHAPE(3, 1, 5));
        gk_in_rand(&k, TGC_FLOAT32, SHAPE(4, 5));
        gk_in_rand(&k, TGC_FLOAT32, SHAPE(1, 4, 1));
        gk_out(&k, TGC_FLOAT32, SHAPE(3, 4, 5));
        gk_run(&k);
        gk_end(&k);
        /* One input: a copy. */
        gk_begin(&k, &d, ops[i]);
        gk_in_rand(&k, TGC_INT64, SHAPE(7, 13));
        gk_out(&k, TGC_INT64, SHAPE(7, 13));
        gk_run(&k);
        gk_end(&k);
    }
    gk_close(&d);
}

/* ---- Comparisons --------------------------------------------------------------- */

static void test_compare(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    static const char *const ops[] = {"Equal", "Less", "Greater"};
    static const tgc_dtype types[] = {TGC_FLOAT32, TGC_INT32, TGC_INT64};
    for (int i = 0; i < 3; i++)
        for (int t = 0; t < 3; t++) binary_all(&d, ops[i], types[t], TGC_BOOL, -3, 3); /* many ties */
    binary_all(&d, "Equal", TGC_BOOL, TGC_BOOL, 0, 1);
    gk_case k;
    gk_begin(&k, &d, "Less");
    gk_in(&k, TGC_FLOAT32, SHAPE(4), (float[]){NAN, 1, -INFINITY, 0.0f});
    gk_in(&k, TGC_FLOAT32, SHAPE(4), (float[]){1, NAN, 3, -0.0f});
    gk_out(&k, TGC_BOOL, SHAPE(4));
    gk_run(&k);
    gk_end(&k);
    gk_close(&d);
}

/* ---- Where --------------------------------------------------------------------- */

static void test_where(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    static const tgc_dtype types[] = {TGC_FLOAT32, TGC_FLOAT16, TGC_INT64, TGC_UINT8, TGC_BOOL};
    for (int t = 0; t < 5; t++) {
        gk_case k;
        gk_begin(&k, &d, "Where");
        gk_in_rand(&k, TGC_BOOL, SHAPE(3, 1, 5));
        gk_in_rand(&k, types[t], SHAPE(4, 5));
        gk_in_rand(&k, types[t], SCALAR);
        gk_out(&k, types[t], SHAPE(3, 4, 5));
        gk_run(&k);
        gk_end(&k);
        gk_begin(&k, &d, "Where");
        gk_in_rand(&k, TGC_BOOL, SHAPE(7, 13));
        gk_in_rand(&k, types[t], SHAPE(7, 13));
        gk_in_rand(&k, types[t], SHAPE(7, 13));
        gk_out(&k, types[t], SHAPE(7, 13));
        gk_run(&k);
        gk_end(&k);
        gk_begin(&k, &d, "Where");
        gk_in_rand(&k, TGC_BOOL, SHAPE(0, 4));
        gk_in_rand(&k, types[t], SHAPE(1, 4));
        gk_in_rand(&k, types[t], SHAPE(0, 1));
        gk_out(&k, types[t], SHAPE(0, 4));
        gk_run(&k);
        gk_end(&k);
    }
    gk_close(&d);
}

/* ---- Unary ops ----------------------------------------------------------------- */

/* op over [7, 13], a scalar and an empty tensor of random values in [lo, hi). */
static void unary_all(gk_dev *d, const char *op, tgc_dtype dtype, double lo, double hi, const tgc_attr *attr) {
    static const shp shapes[] = {{2, {7, 13}}, {0, {0}}, {3, {2, 0, 3}}, {1, {1000}}};
    for (int s = 0; s < 4; s++) {
        gk_case k;
        gk_begin(&k, d, op);
        if (attr != NULL) gk_attr(&k, *attr);
        gk_in_range(&k, dtype, shapes[s].rank, shapes[s].dims, lo, hi);
        gk_out(&k, dtype, shapes[s].rank, shapes[s].dims);
        gk_run(&k);
        gk_end(&k);
    }
}

static void test_unary_f32(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    static const char *const ops[] = {"Neg", "Abs", "Relu", "LeakyRelu", "Sigmoid", "Tanh", "Exp", "Erf"};
    for (int i = 0; i < 8; i++) unary_all(&d, ops[i], TGC_FLOAT32, -10, 10, NULL);
    unary_all(&d, "Log", TGC_FLOAT32, -0.5, 100, NULL); /* NaN below 0 */
    unary_all(&d, "Sqrt", TGC_FLOAT32, -0.5, 100, NULL);
    const tgc_attr alpha = GK_FLOAT("alpha", 0.2);
    unary_all(&d, "LeakyRelu", TGC_FLOAT32, -5, 5, &alpha);
    /* Edge values through every op. */
    static const char *const all[] = {"Neg", "Abs",  "Relu", "LeakyRelu", "Sigmoid",
                                      "Tanh", "Exp", "Log",  "Sqrt",      "Erf"};
    for (int i = 0; i < 10; i++) {
        gk_case k;
        gk_begin(&k, &d, all[i]);
        gk_in(&k, TGC_FLOAT32, SHAPE(9), (float[]){NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 88, -100, 1e-30f, 3});
        gk_out(&k, TGC_FLOAT32, SHAPE(9));
        gk_run(&k);
        gk_end(&k);
    }
    gk_close(&d);
}

static void test_unary_int(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    static const char *const ops[] = {"Neg", "Abs", "Relu"};
    for (int i = 0; i < 3; i++) {
        unary_all(&d, ops[i], TGC_INT32, -1000, 1000, NULL);
        unary_all(&d, ops[i], TGC_INT64, -1e15, 1e15, NULL);
        gk_case k;
        gk_begin(&k, &d, ops[i]);
        gk_in(&k, TGC_INT32, SHAPE(3), (int32_t[]){INT32_MIN, INT32_MAX, 0});
        gk_out(&k, TGC_INT32, SHAPE(3));
        gk_run(&k);
        gk_end(&k);
        gk_begin(&k, &d, ops[i]);
        gk_in(&k, TGC_INT64, SHAPE(3), (int64_t[]){INT64_MIN, INT64_MAX, -1});
        gk_out(&k, TGC_INT64, SHAPE(3));
        gk_run(&k);
        gk_end(&k);
    }
    gk_close(&d);
}

/* ---- Clip ---------------------------------------------------------------------- */

static void test_clip(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    for (int form = 0; form < 4; form++) { /* both bounds, min only, max only, none */
        gk_case k;
        gk_begin(&k, &d, "Clip");
        gk_in_rand(&k, TGC_FLOAT32, SHAPE(7, 13));
        if (form == 0 || form == 1) gk_in(&k, TGC_FLOAT32, SCALAR, (float[]){-0.5f});
        else gk_in_omit(&k);
        if (form == 0 || form == 2) gk_in(&k, TGC_FLOAT32, SCALAR, (float[]){0.75f});
        gk_out(&k, TGC_FLOAT32, SHAPE(7, 13));
        gk_run(&k);
        gk_end(&k);

        gk_begin(&k, &d, "Clip");
        gk_in_rand(&k, TGC_INT32, SHAPE(7, 13));
        if (form == 0 || form == 1) gk_in(&k, TGC_INT32, SCALAR, (int32_t[]){-20});
        else gk_in_omit(&k);
        if (form == 0 || form == 2) gk_in(&k, TGC_INT32, SCALAR, (int32_t[]){30});
        gk_out(&k, TGC_INT32, SHAPE(7, 13));
        gk_run(&k);
        gk_end(&k);

        gk_begin(&k, &d, "Clip");
        gk_in_range(&k, TGC_INT64, SHAPE(5, 3), -1e12, 1e12);
        if (form == 0 || form == 1) gk_in(&k, TGC_INT64, SHAPE(1), (int64_t[]){-1000000000000ll / 2});
        else gk_in_omit(&k);
        if (form == 0 || form == 2) gk_in(&k, TGC_INT64, SHAPE(1), (int64_t[]){1000});
        gk_out(&k, TGC_INT64, SHAPE(5, 3));
        gk_run(&k);
        gk_end(&k);
    }
    /* NaN passes; lo > hi gives hi. */
    gk_case k;
    gk_begin(&k, &d, "Clip");
    gk_in(&k, TGC_FLOAT32, SHAPE(4), (float[]){NAN, -5, 5, 0});
    gk_in(&k, TGC_FLOAT32, SCALAR, (float[]){1});
    gk_in(&k, TGC_FLOAT32, SCALAR, (float[]){-1});
    gk_out(&k, TGC_FLOAT32, SHAPE(4));
    gk_run(&k);
    gk_end(&k);
    gk_close(&d);
}

/* ---- Cast, Identity ------------------------------------------------------------ */

/* The ONNX code of each tgc dtype, in tgc_dtype order. */
static const int64_t onnx_code[TGC_DTYPE_COUNT] = {1, 10, 6, 7, 2, 9};

static void test_cast(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    /* Sources with values that matter to each conversion. */
    const float f[] = {0, -0.0f, 1.5f, -1.5f, 2.5f, -2.7f, 255.9f, 256, 300, -1, 65504, 65520, 1e-8f, 3e9f, -3e9f,
                       1e20f, -1e20f, NAN, INFINITY, -INFINITY, 0.1f, 123456.78f, -129, 127.5f};
    const int32_t i32[] = {0, 1, -1, 255, 256, -129, INT32_MAX, INT32_MIN, 16777217, 65519, 70000, 12345};
    const int64_t i64[] = {0, 1, -1, 255, 256, -129, INT64_MAX, INT64_MIN, 1ll << 40, (1ll << 53) + 1, -70000, 4};
    const uint8_t u8[] = {0, 1, 2, 127, 128, 200, 255, 7};
    const uint8_t b8[] = {0, 1, 0, 1, 1, 0, 0, 1};
    uint16_t f16[24];
    for (int i = 0; i < 24; i++) f16[i] = tgc_float_to_half(f[i]);
    const void *src[TGC_DTYPE_COUNT] = {f, f16, i32, i64, u8, b8};
    const int64_t count[TGC_DTYPE_COUNT] = {24, 24, 12, 12, 8, 8};
    /* the dtypes the gpu's .cl kernels are built for (the others go through
     * the host, devices/cpu/ew.h; ONNX's conformance data checks those) */
    const int n_native = TGC_BOOL + 1;
    for (int s = 0; s < n_native; s++)
        for (int t = 0; t < n_native; t++) {
            gk_case k;
            gk_begin(&k, &d, "Cast");
            k.tol = 0; /* conversions are exact: equal values, NaN for NaN */
            gk_attr(&k, GK_INT("to", onnx_code[t]));
            gk_in(&k, (tgc_dtype)s, 1, &count[s], src[s]);
            gk_out(&k, (tgc_dtype)t, 1, &count[s]);
            gk_run(&k);
            gk_end(&k);
            /* Random values, and an empty tensor. */
            gk_begin(&k, &d, "Cast");
            k.tol = 0;
            gk_attr(&k, GK_INT("to", onnx_code[t]));
            gk_in_range(&k, (tgc_dtype)s, SHAPE(7, 13), s == TGC_UINT8 ? 0 : -300, 300);
            gk_out(&k, (tgc_dtype)t, SHAPE(7, 13));
            gk_run(&k);
            gk_end(&k);
            gk_begin(&k, &d, "Cast");
            gk_attr(&k, GK_INT("to", onnx_code[t]));
            gk_in_rand(&k, (tgc_dtype)s, SHAPE(0, 5));
            gk_out(&k, (tgc_dtype)t, SHAPE(0, 5));
            gk_run(&k);
            gk_end(&k);
        }
    gk_close(&d);
}

static void test_identity(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    for (int t = 0; t < TGC_DTYPE_COUNT; t++) {
        if (t == TGC_STRING) continue; /* host memory only: the placer keeps string nodes on the cpu */
        gk_case k;
        gk_begin(&k, &d, "Identity");
        gk_in_rand(&k, (tgc_dtype)t, SHAPE(7, 13));
        gk_out(&k, (tgc_dtype)t, SHAPE(7, 13));
        gk_run(&k);
        gk_end(&k);
    }
    gk_close(&d);
}

/* ---- Output 0 over input 0's buffer -------------------------------------------- */

/* Every kernel that declares forward_input = 0 gives the same result when
 * the executor hands it input 0's buffer as output 0. */
static void test_forwarded(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    gk_case k;
    static const char *const unary[] = {"Neg", "Relu", "Sigmoid", "Exp", "Identity"};
    for (int i = 0; i < 5; i++) {
        gk_begin(&k, &d, unary[i]);
        k.forward = 1;
        gk_in_rand(&k, TGC_FLOAT32, SHAPE(7, 13));
        gk_out(&k, TGC_FLOAT32, SHAPE(7, 13));
        gk_run(&k);
        gk_end(&k);
    }
    static const char *const binary[] = {"Add", "Mul", "Max"};
    for (int i = 0; i < 3; i++) {
        for (int p = 0; p < 2; p++) { /* equal shapes; input 1 broadcast */
            gk_begin(&k, &d, binary[i]);
            k.forward = 1;
            gk_in_rand(&k, TGC_FLOAT32, SHAPE(3, 4, 5));
            if (p == 0) gk_in_rand(&k, TGC_FLOAT32, SHAPE(3, 4, 5));
            else gk_in_rand(&k, TGC_FLOAT32, SHAPE(4, 1));
            gk_out(&k, TGC_FLOAT32, SHAPE(3, 4, 5));
            gk_run(&k);
            gk_end(&k);
        }
    }
    gk_begin(&k, &d, "Clip");
    k.forward = 1;
    gk_in_rand(&k, TGC_FLOAT32, SHAPE(7, 13));
    gk_in(&k, TGC_FLOAT32, SCALAR, (float[]){-1});
    gk_in(&k, TGC_FLOAT32, SCALAR, (float[]){1});
    gk_out(&k, TGC_FLOAT32, SHAPE(7, 13));
    gk_run(&k);
    gk_end(&k);
    /* Casts between types of one size. */
    const tgc_dtype same_size[][2] = {{TGC_FLOAT32, TGC_INT32}, {TGC_INT32, TGC_FLOAT32}, {TGC_UINT8, TGC_BOOL}};
    for (int i = 0; i < 3; i++) {
        gk_begin(&k, &d, "Cast");
        k.forward = 1;
        gk_attr(&k, GK_INT("to", onnx_code[same_size[i][1]]));
        gk_in_range(&k, same_size[i][0], SHAPE(7, 13), 0, 200);
        gk_out(&k, same_size[i][1], SHAPE(7, 13));
        gk_run(&k);
        gk_end(&k);
    }
    gk_begin(&k, &d, "Where");
    k.forward = 1;
    gk_in_rand(&k, TGC_BOOL, SHAPE(7, 13));
    gk_in_rand(&k, TGC_BOOL, SHAPE(13));
    gk_in_rand(&k, TGC_BOOL, SCALAR);
    gk_out(&k, TGC_BOOL, SHAPE(7, 13));
    gk_run(&k);
    gk_end(&k);
    for (int log = 0; log < 2; log++)
        for (int axis = -1; axis <= 0; axis++) {
            gk_begin(&k, &d, log ? "LogSoftmax" : "Softmax");
            k.forward = 1;
            gk_attr(&k, GK_INT("axis", axis));
            gk_in_rand(&k, TGC_FLOAT32, SHAPE(7, 13));
            gk_out(&k, TGC_FLOAT32, SHAPE(7, 13));
            gk_run(&k);
            gk_end(&k);
        }
    gk_begin(&k, &d, "Reshape");
    k.forward = 1;
    gk_in_rand(&k, TGC_FLOAT32, SHAPE(7, 13));
    gk_in_i64(&k, 1, DIMS(-1));
    gk_out(&k, TGC_FLOAT32, SHAPE(91));
    gk_run(&k);
    gk_end(&k);
    gk_close(&d);
}

/* ---- Reductions ---------------------------------------------------------------- */

/* Output dims of reducing `in` over axes (none: all) with keepdims. */
static shp reduced_shape(shp in, const int64_t *axes, int n, bool keep) {
    bool red[TGC_MAX_RANK] = {false};
    for (int i = 0; i < n; i++) red[axes[i] < 0 ? axes[i] + in.rank : axes[i]] = true;
    shp o = {0, {0}};
    for (int i = 0; i < in.rank; i++) {
        if (n == 0) red[i] = true;
        if (!red[i]) o.dims[o.rank++] = in.dims[i];
        else if (keep) o.dims[o.rank++] = 1;
    }
    return o;
}

typedef struct red_case {
    shp in;
    int n_axes;
    int64_t axes[4];
} red_case;

static const red_case red_cases[] = {
    {{2, {7, 13}}, 1, {1}},         {{2, {7, 13}}, 1, {0}},          {{2, {7, 13}}, 2, {-1, 0}},
    {{3, {3, 4, 5}}, 2, {0, 2}},    {{3, {3, 4, 5}}, 1, {-2}},       {{3, {3, 4, 5}}, 0, {0}},
    {{4, {2, 3, 1, 5}}, 2, {1, 2}}, {{4, {2, 3, 4, 5}}, 2, {3, 1}},  {{2, {0, 3}}, 1, {0}},
    {{2, {0, 3}}, 1, {1}},          {{1, {1000}}, 1, {0}},           {{0, {0}}, 0, {0}},
    {{5, {2, 2, 3, 2, 3}}, 3, {0, 2, 4}},
};
#define N_RED (int)(sizeof red_cases / sizeof red_cases[0])

/* op with axes as input 1 (ReduceSum) or the attribute, keepdims 0 and 1. */
static void reduce_all(gk_dev *d, const char *op, tgc_dtype dtype, bool axes_input) {
    for (int r = 0; r < N_RED; r++)
        for (int keep = 0; keep < 2; keep++) {
            const red_case *rc = &red_cases[r];
            gk_case k;
            gk_begin(&k, d, op);
            gk_attr(&k, GK_INT("keepdims", keep));
            gk_in_rand(&k, dtype, rc->in.rank, rc->in.dims);
            if (axes_input && rc->n_axes > 0) gk_in_i64(&k, rc->n_axes, rc->axes);
            else if (rc->n_axes > 0) gk_attr(&k, GK_INTS("axes", rc->axes, (size_t)rc->n_axes));
            shp o = reduced_shape(rc->in, rc->axes, rc->n_axes, keep);
            gk_out(&k, dtype, o.rank, o.dims);
            gk_run(&k);
            gk_end(&k);
        }
}

static void test_reduce_sum(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    reduce_all(&d, "ReduceSum", TGC_FLOAT32, true);
    reduce_all(&d, "ReduceSum", TGC_INT32, true);
    reduce_all(&d, "ReduceSum", TGC_INT64, true);
    gk_case k;
    /* noop_with_empty_axes: empty axes copy; without it they reduce all. */
    gk_begin(&k, &d, "ReduceSum");
    gk_in_rand(&k, TGC_FLOAT32, SHAPE(3, 4, 5));
    gk_in(&k, TGC_INT64, SHAPE(0), NULL);
    gk_out(&k, TGC_FLOAT32, SHAPE(1, 1, 1));
    gk_run(&k);
    gk_end(&k);
    gk_begin(&k, &d, "ReduceSum");
    gk_attr(&k, GK_INT("noop_with_empty_axes", 1));
    gk_in_rand(&k, TGC_FLOAT32, SHAPE(7, 13));
    gk_in(&k, TGC_INT64, SHAPE(0), NULL);
    gk_out(&k, TGC_FLOAT32, SHAPE(7, 13));
    gk_run(&k);
    gk_end(&k);
    /* Long rows: the compensated sum stays within the tolerance. */
    gk_begin(&k, &d, "ReduceSum");
    gk_in_range(&k, TGC_FLOAT32, SHAPE(3, 100000), 0, 1);
    gk_in_i64(&k, 1, DIMS(1));
    gk_out(&k, TGC_FLOAT32, SHAPE(3, 1));
    gk_run(&k);
    gk_end(&k);
    /* Integer sums wrap. */
    gk_begin(&k, &d, "ReduceSum");
    gk_in(&k, TGC_INT32, SHAPE(3), (int32_t[]){INT32_MAX, 5, INT32_MAX});
    gk_out(&k, TGC_INT32, SHAPE(1));
    gk_run(&k);
    gk_end(&k);
    /* An axis twice fails on both. */
    gk_begin(&k, &d, "ReduceSum");
    gk_in_rand(&k, TGC_FLOAT32, SHAPE(2, 2));
    gk_in_i64(&k, 2, DIMS(1, -1));
    gk_out(&k, TGC_FLOAT32, SHAPE(2, 1));
    gk_run_fails(&k, "twice");
    gk_end(&k);
    gk_close(&d);
}

static void test_reduce_mean_max(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    reduce_all(&d, "ReduceMean", TGC_FLOAT32, false);
    static const tgc_dtype types[] = {TGC_FLOAT32, TGC_INT32, TGC_INT64, TGC_UINT8};
    for (int t = 0; t < 4; t++) reduce_all(&d, "ReduceMax", types[t], false);
    gk_case k;
    gk_begin(&k, &d, "ReduceMax");
    gk_attr(&k, GK_INTS("axes", DIMS(1), 1));
    gk_in(&k, TGC_FLOAT32, SHAPE(3, 3), (float[]){1, NAN, 2, -INFINITY, -INFINITY, -INFINITY, 3, 2, NAN});
    gk_out(&k, TGC_FLOAT32, SHAPE(3, 1));
    gk_run(&k);
    gk_end(&k);
    gk_close(&d);
}

static void test_argmax(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    static const tgc_dtype types[] = {TGC_FLOAT32, TGC_INT32, TGC_INT64, TGC_UINT8};
    static const shp shapes[] = {{2, {7, 13}}, {3, {3, 4, 5}}, {1, {17}}};
    for (int t = 0; t < 4; t++)
        for (int s = 0; s < 3; s++)
            for (int axis = -shapes[s].rank; axis < shapes[s].rank; axis++)
                for (int mode = 0; mode < 4; mode++) { /* keepdims x select_last_point_index */
                    int keep = mode & 1, last = mode >> 1;
                    gk_case k;
                    gk_begin(&k, &d, "ArgMax");
                    gk_attr(&k, GK_INT("axis", axis));
                    gk_attr(&k, GK_INT("keepdims", keep));
                    gk_attr(&k, GK_INT("select_last_point_index", last));
                    gk_in_range(&k, types[t], shapes[s].rank, shapes[s].dims, 0, 3); /* many ties */
                    int64_t ax = axis;
                    shp o = reduced_shape(shapes[s], &ax, 1, keep);
                    gk_out(&k, TGC_INT64, o.rank, o.dims);
                    gk_run(&k);
                    gk_end(&k);
                }
    for (int last = 0; last < 2; last++) {
        gk_case k;
        gk_begin(&k, &d, "ArgMax");
        gk_attr(&k, GK_INT("axis", 1));
        gk_attr(&k, GK_INT("select_last_point_index", last));
        gk_in(&k, TGC_FLOAT32, SHAPE(2, 4), (float[]){1, NAN, 3, NAN, 2, 2, -INFINITY, 2});
        gk_out(&k, TGC_INT64, SHAPE(2, 1));
        gk_run(&k);
        gk_end(&k);
    }
    gk_close(&d);
}

static void test_softmax(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    static const shp shapes[] = {{2, {7, 13}}, {3, {3, 4, 5}}, {1, {1000}}, {2, {0, 4}}};
    for (int log = 0; log < 2; log++)
        for (int s = 0; s < 4; s++)
            for (int axis = -shapes[s].rank; axis < shapes[s].rank; axis++) {
                gk_case k;
                gk_begin(&k, &d, log ? "LogSoftmax" : "Softmax");
                gk_attr(&k, GK_INT("axis", axis));
                gk_in_range(&k, TGC_FLOAT32, shapes[s].rank, shapes[s].dims, -20, 20);
                gk_out(&k, TGC_FLOAT32, shapes[s].rank, shapes[s].dims);
                gk_run(&k);
                gk_end(&k);
            }
    /* Values whose exp overflows without the maximum subtracted; a NaN row. */
    for (int log = 0; log < 2; log++) {
        gk_case k;
        gk_begin(&k, &d, log ? "LogSoftmax" : "Softmax");
        gk_in(&k, TGC_FLOAT32, SHAPE(2, 3), (float[]){1000, 999, -1000, 1, NAN, 2});
        gk_out(&k, TGC_FLOAT32, SHAPE(2, 3));
        gk_run(&k);
        gk_end(&k);
    }
    gk_close(&d);
}

/* ---- Views --------------------------------------------------------------------- */

static void test_views(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    static const tgc_dtype types[] = {TGC_FLOAT32, TGC_FLOAT16, TGC_INT64, TGC_BOOL};
    for (int t = 0; t < 4; t++)
        for (int fwd = 0; fwd < 2; fwd++) {
            gk_case k;
            gk_begin(&k, &d, "Reshape");
            k.forward = fwd;
            gk_in_rand(&k, types[t], SHAPE(7, 13));
            gk_in_i64(&k, 3, DIMS(13, 1, -1));
            gk_out(&k, types[t], SHAPE(13, 1, 7));
            gk_run(&k);
            gk_end(&k);

            gk_begin(&k, &d, "Flatten");
            k.forward = fwd;
            gk_attr(&k, GK_INT("axis", -1));
            gk_in_rand(&k, types[t], SHAPE(2, 3, 5));
            gk_out(&k, types[t], SHAPE(6, 5));
            gk_run(&k);
            gk_end(&k);

            gk_begin(&k, &d, "Squeeze");
            k.forward = fwd;
            gk_in_rand(&k, types[t], SHAPE(1, 7, 1, 13));
            gk_in_i64(&k, 2, DIMS(0, -2));
            gk_out(&k, types[t], SHAPE(7, 13));
            gk_run(&k);
            gk_end(&k);

            gk_begin(&k, &d, "Squeeze");
            k.forward = fwd;
            gk_in_rand(&k, types[t], SHAPE(1, 7, 1));
            gk_out(&k, types[t], SHAPE(7));
            gk_run(&k);
            gk_end(&k);

            gk_begin(&k, &d, "Unsqueeze");
            k.forward = fwd;
            gk_in_rand(&k, types[t], SHAPE(7, 13));
            gk_in_i64(&k, 2, DIMS(-1, 0));
            gk_out(&k, types[t], SHAPE(1, 7, 13, 1));
            gk_run(&k);
            gk_end(&k);
        }
    gk_case k;
    gk_begin(&k, &d, "Reshape");
    gk_attr(&k, GK_INT("allowzero", 1));
    gk_in_rand(&k, TGC_FLOAT32, SHAPE(0, 3));
    gk_in_i64(&k, 2, DIMS(3, 0));
    gk_out(&k, TGC_FLOAT32, SHAPE(3, 0));
    gk_run(&k);
    gk_end(&k);
    gk_close(&d);
}

/* ---- Transpose, Slice, Expand -------------------------------------------------- */

static const tgc_dtype move_types[] = {TGC_FLOAT32, TGC_FLOAT16, TGC_INT64, TGC_UINT8};
#define N_MOVE 4

static void test_transpose(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    for (int t = 0; t < N_MOVE; t++) {
        gk_case k;
        gk_begin(&k, &d, "Transpose");
        gk_in_rand(&k, move_types[t], SHAPE(7, 13));
        gk_out(&k, move_types[t], SHAPE(13, 7));
        gk_run(&k);
        gk_end(&k);

        gk_begin(&k, &d, "Transpose");
        gk_attr(&k, GK_INTS("perm", DIMS(0, 2, 3, 1), 4));
        gk_in_rand(&k, move_types[t], SHAPE(2, 3, 4, 5));
        gk_out(&k, move_types[t], SHAPE(2, 4, 5, 3));
        gk_run(&k);
        gk_end(&k);

        gk_begin(&k, &d, "Transpose"); /* moves only axes of 1: one copy */
        gk_attr(&k, GK_INTS("perm", DIMS(1, 0, 2), 3));
        gk_in_rand(&k, move_types[t], SHAPE(1, 7, 13));
        gk_out(&k, move_types[t], SHAPE(7, 1, 13));
        gk_run(&k);
        gk_end(&k);

        gk_begin(&k, &d, "Transpose");
        gk_in_rand(&k, move_types[t], SCALAR);
        gk_out(&k, move_types[t], SCALAR);
        gk_run(&k);
        gk_end(&k);

        gk_begin(&k, &d, "Transpose");
        gk_in_rand(&k, move_types[t], SHAPE(0, 3));
        gk_out(&k, move_types[t], SHAPE(3, 0));
        gk_run(&k);
        gk_end(&k);
    }
    gk_case k;
    gk_begin(&k, &d, "Transpose");
    gk_attr(&k, GK_INTS("perm", DIMS(7, 6, 5, 4, 3, 2, 1, 0), 8));
    gk_in_rand(&k, TGC_FLOAT32, SHAPE(2, 3, 2, 3, 2, 3, 2, 3));
    gk_out(&k, TGC_FLOAT32, SHAPE(3, 2, 3, 2, 3, 2, 3, 2));
    gk_run(&k);
    gk_end(&k);
    gk_close(&d);
}

/* Slice of x [7, 13, 5] by starts, ends, axes (n_axes = -1: omitted),
 * steps (omitted when NULL); out: the output's dims. */
static void slice_case(gk_dev *d, tgc_dtype t, int n, const int64_t *starts, const int64_t *ends, const int64_t *axes,
                       const int64_t *steps, const int64_t *out) {
    gk_case k;
    gk_begin(&k, d, "Slice");
    gk_in_rand(&k, t, SHAPE(7, 13, 5));
    gk_in_i64(&k, n, starts);
    gk_in_i64(&k, n, ends);
    if (axes != NULL) gk_in_i64(&k, n, axes);
    else if (steps != NULL) gk_in_omit(&k);
    if (steps != NULL) gk_in_i64(&k, n, steps);
    gk_out(&k, t, 3, out);
    gk_run(&k);
    gk_end(&k);
}

static void test_slice(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    for (int i = 0; i < N_MOVE; i++) {
        tgc_dtype t = move_types[i];
        slice_case(&d, t, 1, DIMS(2), DIMS(5), NULL, NULL, DIMS(3, 13, 5));
        slice_case(&d, t, 2, DIMS(-3, 1), DIMS(100, -1), DIMS(1, 2), NULL, DIMS(7, 3, 3));
        slice_case(&d, t, 1, DIMS(-1), DIMS(INT64_MIN), DIMS(0), DIMS(-1), DIMS(7, 13, 5));
        slice_case(&d, t, 2, DIMS(10, 0), DIMS(1, 100), DIMS(-2, 0), DIMS(-3, 2), DIMS(4, 3, 5));
        slice_case(&d, t, 1, DIMS(4), DIMS(4), DIMS(2), NULL, DIMS(7, 13, 0));
        slice_case(&d, t, 3, DIMS(1, 2, 3), DIMS(2, 3, 4), NULL, NULL, DIMS(1, 1, 1));
        slice_case(&d, t, 1, DIMS(0), DIMS(7), DIMS(0), DIMS(INT64_MAX), DIMS(1, 13, 5));
    }
    /* int32 arguments. */
    gk_case k;
    gk_begin(&k, &d, "Slice");
    gk_in_rand(&k, TGC_FLOAT32, SHAPE(7, 13));
    gk_in(&k, TGC_INT32, SHAPE(1), (int32_t[]){-2});
    gk_in(&k, TGC_INT32, SHAPE(1), (int32_t[]){-12});
    gk_in(&k, TGC_INT32, SHAPE(1), (int32_t[]){1});
    gk_in(&k, TGC_INT32, SHAPE(1), (int32_t[]){-2});
    gk_out(&k, TGC_FLOAT32, SHAPE(7, 5));
    gk_run(&k);
    gk_end(&k);
    gk_close(&d);
}

static void test_expand(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    for (int i = 0; i < N_MOVE; i++) {
        tgc_dtype t = move_types[i];
        gk_case k;
        gk_begin(&k, &d, "Expand");
        gk_in_rand(&k, t, SHAPE(3, 1));
        gk_in_i64(&k, 3, DIMS(2, 1, 4));
        gk_out(&k, t, SHAPE(2, 3, 4));
        gk_run(&k);
        gk_end(&k);

        gk_begin(&k, &d, "Expand");
        gk_in_rand(&k, t, SCALAR);
        gk_in_i64(&k, 2, DIMS(7, 13));
        gk_out(&k, t, SHAPE(7, 13));
        gk_run(&k);
        gk_end(&k);

        gk_begin(&k, &d, "Expand");
        gk_in_rand(&k, t, SHAPE(7, 1, 13));
        gk_in_i64(&k, 1, DIMS(1));
        gk_out(&k, t, SHAPE(7, 1, 13));
        gk_run(&k);
        gk_end(&k);

        gk_begin(&k, &d, "Expand");
        gk_in_rand(&k, t, SHAPE(1, 5));
        gk_in_i64(&k, 2, DIMS(0, 5));
        gk_out(&k, t, SHAPE(0, 5));
        gk_run(&k);
        gk_end(&k);
    }
    gk_close(&d);
}

/* ---- Concat, Split ------------------------------------------------------------- */

static void test_concat(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    for (int i = 0; i < N_MOVE; i++) {
        tgc_dtype t = move_types[i];
        for (int axis = -3; axis < 3; axis++) {
            int a = axis < 0 ? axis + 3 : axis;
            int64_t s0[3] = {3, 4, 5}, s1[3] = {3, 4, 5}, s2[3] = {3, 4, 5}, o[3] = {3, 4, 5};
            s0[a] = 2;
            s1[a] = 0; /* an empty input takes part like any other */
            s2[a] = 7;
            o[a] = 9;
            gk_case k;
            gk_begin(&k, &d, "Concat");
            gk_attr(&k, GK_INT("axis", axis));
            gk_in_rand(&k, t, 3, s0);
            gk_in_rand(&k, t, 3, s1);
            gk_in_rand(&k, t, 3, s2);
            gk_out(&k, t, 3, o);
            gk_run(&k);
            gk_end(&k);
        }
        gk_case k;
        gk_begin(&k, &d, "Concat");
        gk_attr(&k, GK_INT("axis", 0));
        gk_in_rand(&k, t, SHAPE(13));
        gk_out(&k, t, SHAPE(13));
        gk_run(&k);
        gk_end(&k);
    }
    gk_close(&d);
}

static void test_split(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    for (int i = 0; i < N_MOVE; i++) {
        tgc_dtype t = move_types[i];
        for (int axis = -3; axis < 3; axis++) {
            int a = axis < 0 ? axis + 3 : axis;
            for (int given = 0; given < 2; given++) {
                int64_t x[3] = {6, 9, 12}, o[3][3];
                int64_t sizes[3] = {x[a] / 3, 0, x[a] - x[a] / 3};
                gk_case k;
                gk_begin(&k, &d, "Split");
                gk_attr(&k, GK_INT("axis", axis));
                gk_in_rand(&k, t, 3, x);
                if (given) gk_in_i64(&k, 3, sizes);
                for (int j = 0; j < 3; j++) {
                    memcpy(o[j], x, sizeof x);
                    o[j][a] = given ? sizes[j] : x[a] / 3;
                    gk_out(&k, t, 3, o[j]);
                }
                gk_run(&k);
                gk_end(&k);
            }
        }
    }
    gk_close(&d);
}

/* ---- Gather -------------------------------------------------------------------- */

static void test_gather(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    for (int i = 0; i < N_MOVE; i++) {
        tgc_dtype t = move_types[i];
        for (int axis = -3; axis < 3; axis++) {
            int a = axis < 0 ? axis + 3 : axis;
            const int64_t x[3] = {7, 13, 5};
            for (int it = 0; it < 2; it++) {
                tgc_dtype idx = it ? TGC_INT32 : TGC_INT64;
                gk_case k;
                gk_begin(&k, &d, "Gather");
                gk_attr(&k, GK_INT("axis", axis));
                gk_in_rand(&k, t, 3, x);
                gk_in_range(&k, idx, SHAPE(2, 3), (double)-x[a], (double)(x[a] - 1)); /* negative ones too */
                int64_t o[4], n = 0;
                for (int j = 0; j < 3; j++) {
                    if (j == a) {
                        o[n++] = 2;
                        o[n++] = 3;
                    } else {
                        o[n++] = x[j];
                    }
                }
                gk_out(&k, t, (int)n, o);
                gk_run(&k);
                gk_end(&k);
            }
        }
        /* A scalar index drops the axis; no indices give an empty result. */
        gk_case k;
        gk_begin(&k, &d, "Gather");
        gk_attr(&k, GK_INT("axis", 1));
        gk_in_rand(&k, t, SHAPE(7, 13));
        gk_in(&k, TGC_INT64, SCALAR, (int64_t[]){-13});
        gk_out(&k, t, SHAPE(7));
        gk_run(&k);
        gk_end(&k);
        gk_begin(&k, &d, "Gather");
        gk_in_rand(&k, t, SHAPE(7, 13));
        gk_in(&k, TGC_INT64, SHAPE(0), NULL);
        gk_out(&k, t, SHAPE(0, 13));
        gk_run(&k);
        gk_end(&k);
    }
    /* An index out of range is an error on both devices. */
    gk_case k;
    gk_begin(&k, &d, "Gather");
    gk_in_rand(&k, TGC_FLOAT32, SHAPE(7, 13));
    gk_in(&k, TGC_INT64, SHAPE(3), (int64_t[]){0, 7, 1});
    gk_out(&k, TGC_FLOAT32, SHAPE(3, 13));
    gk_run_fails(&k, "out of range");
    gk_end(&k);
    gk_close(&d);
}

/* ---- ConstantOfShape, Range, Constant ------------------------------------------ */

/* A tensor attribute over `k`, which must outlive the run. */
static tgc_attr tensor_attr(const char *name, tgc_const *k, tgc_dtype t, int rank, const int64_t *dims, void *data,
                            size_t nbytes) {
    *k = (tgc_const){.dtype = t, .data = data, .nbytes = nbytes};
    k->shape.rank = rank;
    for (int i = 0; i < rank; i++) k->shape.dims[i] = tgc_dim_of(dims[i]);
    return (tgc_attr){.name = (char *)name, .type = TGC_ATTR_TENSOR, .tensor = k};
}

static void test_constant_of_shape(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    float f = 2.5f;
    int64_t i64 = -7;
    uint16_t h = tgc_float_to_half(-1.5f);
    uint8_t b = 1;
    struct {
        tgc_dtype t;
        void *v;
    } values[] = {{TGC_FLOAT32, &f}, {TGC_INT64, &i64}, {TGC_FLOAT16, &h}, {TGC_BOOL, &b}, {TGC_DTYPE_INVALID, NULL}};
    for (int v = 0; v < 5; v++)
        for (int s = 0; s < 3; s++) {
            static const shp shapes[] = {{2, {7, 13}}, {0, {0}}, {3, {2, 0, 3}}};
            tgc_const kc;
            gk_case k;
            gk_begin(&k, &d, "ConstantOfShape");
            gk_in_i64(&k, shapes[s].rank, shapes[s].dims);
            tgc_dtype t = values[v].t == TGC_DTYPE_INVALID ? TGC_FLOAT32 : values[v].t;
            if (values[v].v != NULL)
                gk_attr(&k, tensor_attr("value", &kc, t, 1, DIMS(1), values[v].v, tgc_dtype_size(t)));
            gk_out(&k, t, shapes[s].rank, shapes[s].dims);
            gk_run(&k);
            gk_end(&k);
        }
    gk_close(&d);
}

static void test_range(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    const float args[][3] = {{0, 10, 1}, {1.5f, -3, -0.25f}, {0.1f, 7.3f, 0.3f},
                             {5, 5, 1},  {5, 1, 1},          {-1e3f, 1e3f, 0.7f}};
    for (size_t i = 0; i < sizeof args / sizeof args[0]; i++) {
        gk_case k;
        gk_begin(&k, &d, "Range");
        for (int j = 0; j < 3; j++) gk_in(&k, TGC_FLOAT32, SCALAR, &args[i][j]);
        double n = ceil(((double)args[i][1] - args[i][0]) / args[i][2]);
        gk_out(&k, TGC_FLOAT32, 1, (int64_t[]){n > 0 ? (int64_t)n : 0});
        gk_run(&k);
        gk_end(&k);
    }
    gk_close(&d);
}

static void test_constant(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    float data[7 * 13];
    for (int i = 0; i < 7 * 13; i++) data[i] = (float)i * 0.5f - 3;
    tgc_const kc;
    gk_case k;
    gk_begin(&k, &d, "Constant");
    gk_attr(&k, tensor_attr("value", &kc, TGC_FLOAT32, 2, DIMS(7, 13), data, sizeof data));
    gk_out(&k, TGC_FLOAT32, SHAPE(7, 13));
    gk_run(&k);
    gk_end(&k);

    int64_t ints[3] = {4, -5, 6};
    gk_begin(&k, &d, "Constant");
    gk_attr(&k, tensor_attr("value", &kc, TGC_INT64, 1, DIMS(3), ints, sizeof ints));
    gk_out(&k, TGC_INT64, SHAPE(3));
    gk_run(&k);
    gk_end(&k);

    gk_begin(&k, &d, "Constant");
    gk_attr(&k, GK_FLOAT("value_float", 0.1));
    gk_out(&k, TGC_FLOAT32, SCALAR);
    gk_run(&k);
    gk_end(&k);

    double floats[4] = {0.1, -2, 3.25, 1e30};
    gk_begin(&k, &d, "Constant");
    gk_attr(&k, (tgc_attr){.name = (char *)"value_floats", .type = TGC_ATTR_FLOATS, .floats = floats, .n = 4});
    gk_out(&k, TGC_FLOAT32, SHAPE(4));
    gk_run(&k);
    gk_end(&k);

    gk_begin(&k, &d, "Constant");
    gk_attr(&k, GK_INTS("value_ints", ints, 3));
    gk_out(&k, TGC_INT64, SHAPE(3));
    gk_run(&k);
    gk_end(&k);

    gk_begin(&k, &d, "Constant");
    gk_attr(&k, tensor_attr("value", &kc, TGC_FLOAT32, 2, DIMS(0, 4), NULL, 0));
    gk_out(&k, TGC_FLOAT32, SHAPE(0, 4));
    gk_run(&k);
    gk_end(&k);
    gk_close(&d);
}

/* ---- The registry -------------------------------------------------------------- */

/* Every gpu kernel is declared for the gpu with the host-memory arguments
 * the executor must honour, and the registry finds the float32 ones. */
static void test_registry(void) {
    static const struct {
        const char *op;
        tgc_dtype dtype;
        uint32_t host_inputs;
        int forward;
    } want[] = {
        {"Add", TGC_INT64, 0, 0},           {"Div", TGC_FLOAT32, 0, 0},         {"Clip", TGC_FLOAT32, 0x6, 0},
        {"Where", TGC_BOOL, 0, 0},          {"Cast", TGC_FLOAT16, 0, 0},        {"Identity", TGC_UINT8, 0, 0},
        {"ReduceSum", TGC_FLOAT32, 0x2, -1}, {"Softmax", TGC_FLOAT32, 0, 0},    {"ArgMax", TGC_UINT8, 0, -1},
        {"Reshape", TGC_BOOL, 0x2, 0},      {"Squeeze", TGC_INT64, 0x2, 0},     {"Unsqueeze", TGC_FLOAT16, 0x2, 0},
        {"Flatten", TGC_FLOAT32, 0, 0},     {"Slice", TGC_FLOAT32, 0x1E, -1},   {"Expand", TGC_FLOAT32, 0x2, -1},
        {"Split", TGC_FLOAT32, 0x2, -1},    {"Range", TGC_FLOAT32, 0x7, -1},    {"ConstantOfShape", TGC_INT64, 0x1, -1},
        {"Gather", TGC_FLOAT32, 0, -1},     {"Concat", TGC_INT64, 0, -1},       {"Transpose", TGC_FLOAT16, 0, -1},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const tgc_kernel_def *k = gk_gpu_find(want[i].op, want[i].dtype);
        CU_ASSERT_PTR_NOT_NULL_FATAL(k);
        if (want[i].dtype == TGC_FLOAT32)
            CU_ASSERT_PTR_EQUAL(tgc_kernel_find(want[i].op, TGC_DEVICE_GPU, TGC_FLOAT32), k);
        CU_ASSERT_EQUAL(k->host_inputs, want[i].host_inputs);
        CU_ASSERT_EQUAL(k->forward_input, want[i].forward);
    }
    CU_ASSERT_PTR_NULL(gk_gpu_find("Add", TGC_UINT8)); /* uint8 stays on the cpu */
    CU_ASSERT_PTR_NULL(gk_gpu_find("Sigmoid", TGC_INT64));
    CU_ASSERT_PTR_NULL(gk_gpu_find("Shape", TGC_FLOAT32)); /* the lead's host-memory kernels */
}

TGC_TEST_MAIN("gpu_kernels",
              {"registry", test_registry},
              {"arith f32", test_arith_f32},
              {"arith int", test_arith_int},
              {"pow", test_pow},
              {"min max", test_min_max},
              {"compare", test_compare},
              {"where", test_where},
              {"unary f32", test_unary_f32},
              {"unary int", test_unary_int},
              {"clip", test_clip},
              {"cast", test_cast},
              {"identity", test_identity},
              {"forwarded", test_forwarded},
              {"reduce sum", test_reduce_sum},
              {"reduce mean max", test_reduce_mean_max},
              {"argmax", test_argmax},
              {"softmax", test_softmax},
              {"views", test_views},
              {"transpose", test_transpose},
              {"slice", test_slice},
              {"expand", test_expand},
              {"concat", test_concat},
              {"split", test_split},
              {"gather", test_gather},
              {"constant of shape", test_constant_of_shape},
              {"range", test_range},
              {"constant", test_constant})
