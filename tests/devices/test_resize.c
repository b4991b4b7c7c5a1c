/* The Resize kernels (devices/cpu/kernels_resize.c, devices/opencl/
 * kernels_resize.c) beyond ONNX's backend data: the opset 18-19 forms
 * (antialias, axes, keep_aspect_ratio_policy, half_pixel_symmetric) and
 * integer rounding against ONNX's reference implementation (the values
 * below are printed by tests/data/kernels/make_resize_refs.py, which runs
 * onnx/reference/ops/op_resize.py); the errors; and the gpu kernel against
 * the cpu kernel on every mode and coordinate transformation (gpu0; PoCL
 * where there is no GPU; nothing is checked without OpenCL). */
#include "devices/kernel.h"
#include "devices/opencl/opencl.h"
#include "support/alloc.h"
#include "support/thread_pool.h"
#include "tests/harness.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

extern const tgc_kernel_def tgc_cpu_kernels_resize[];
extern const tgc_kernel_def tgc_gpu_kernels_resize[];

/* ---- A node, run on one device ----------------------------------------------------- */

#define RZ_MAX_ATTRS 8

typedef struct rz_case {
    tgc_attr attrs[RZ_MAX_ATTRS];
    int n_attrs;
    tgc_value in[4]; /* X, roi, scales, sizes; buf NULL: omitted */
    int n_in;
    tgc_value out;
    char err[256];
    tgc_thread_pool *pool; /* NULL: the kernel runs on the calling thread */
} rz_case;

static tgc_attr rz_str(const char *name, const char *v) {
    return (tgc_attr){.name = (char *)name, .type = TGC_ATTR_STRING, .s = (char *)v};
}
static tgc_attr rz_int(const char *name, int64_t v) {
    return (tgc_attr){.name = (char *)name, .type = TGC_ATTR_INT, .i = v};
}
static tgc_attr rz_float(const char *name, double v) {
    return (tgc_attr){.name = (char *)name, .type = TGC_ATTR_FLOAT, .f = v};
}
static tgc_attr rz_ints(const char *name, const int64_t *v, size_t n) {
    return (tgc_attr){.name = (char *)name, .type = TGC_ATTR_INTS, .ints = (int64_t *)v, .n = n};
}

/* A host tensor on `dev` holding a copy of data. */
static tgc_value rz_host(tgc_device *dev, tgc_dtype dt, int rank, const int64_t *dims, const void *data) {
    tgc_value v = {.dtype = dt, .rank = rank};
    memcpy(v.dims, dims, (size_t)rank * sizeof *dims);
    size_t nbytes = tgc_value_nbytes(&v);
    CU_ASSERT_EQUAL_FATAL(tgc_buffer_alloc(dev, nbytes, &v.buf), TGC_OK);
    if (nbytes) memcpy(tgc_buffer_host_ptr(v.buf), data, nbytes);
    return v;
}

/* Input slot i (0 X, 1 roi, 2 scales, 3 sizes). */
static void rz_in(rz_case *k, tgc_device *dev, int i, tgc_dtype dt, int rank, const int64_t *dims, const void *data) {
    k->in[i] = rz_host(dev, dt, rank, dims, data);
    if (i + 1 > k->n_in) k->n_in = i + 1;
}

/* Runs kernel def on dev; the output is allocated by the kernel. */
static tgc_status rz_call(rz_case *k, const tgc_kernel_def *def, tgc_device *dev, const tgc_value *in) {
    tgc_node node = {.name = (char *)"rz", .kind = TGC_NODE_OP, .op_name = (char *)"Resize", .attrs = k->attrs,
                     .n_attrs = k->n_attrs, .n_inputs = k->n_in, .n_outputs = 1};
    k->out = (tgc_value){.dtype = in[0].dtype};
    k->err[0] = '\0';
    tgc_value given[4]; /* an omitted input: no buffer, no dtype */
    for (int i = 0; i < 4; i++) {
        given[i] = in[i];
        if (in[i].buf == NULL) given[i].dtype = TGC_DTYPE_INVALID;
    }
    tgc_kernel_ctx c = {.node = &node, .device = dev, .inputs = given, .n_inputs = k->n_in, .outputs = &k->out,
                        .n_outputs = 1, .error = k->err, .error_size = sizeof k->err, .def = def, .pool = k->pool};
    return def->fn(&c);
}

static void rz_release(rz_case *k) {
    for (int i = 0; i < 4; i++) tgc_buffer_release(k->in[i].buf);
    tgc_buffer_release(k->out.buf);
    memset(k, 0, sizeof *k);
}

/* Runs on the cpu and checks Y's dims and float32 values (|d| <= 1e-5 * max(1, |want|)). */
static void rz_check_f32(rz_case *k, tgc_device *cpu, int rank, const int64_t *dims, const float *want) {
    tgc_status st = rz_call(k, &tgc_cpu_kernels_resize[0], cpu, k->in);
    if (st != TGC_OK) fprintf(stderr, "\n  Resize failed: %s\n", k->err);
    CU_ASSERT_EQUAL_FATAL(st, TGC_OK);
    CU_ASSERT_EQUAL_FATAL(k->out.rank, rank);
    int64_t n = 1;
    for (int d = 0; d < rank; d++) {
        CU_ASSERT_EQUAL(k->out.dims[d], dims[d]);
        n *= dims[d];
    }
    CU_ASSERT_EQUAL_FATAL(tgc_value_numel(&k->out), n);
    const float *y = tgc_buffer_host_ptr(k->out.buf);
    int bad = 0;
    for (int64_t i = 0; i < n; i++)
        if (!(fabs(y[i] - want[i]) <= 1e-5 * fmax(1.0, fabs(want[i]))) && bad++ < 4)
            fprintf(stderr, "\n  element %lld: got %.9g, want %.9g", (long long)i, y[i], want[i]);
    CU_ASSERT_EQUAL(bad, 0);
}

/* x44 = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4) ** 1.5 */
static const float X44[16] = {0.0f, 1.0f, 2.8284270763397217f, 5.196152210235596f, 8.0f, 11.180339813232422f,
                              14.696938514709473f, 18.520259857177734f, 22.627416610717773f, 27.0f,
                              31.62277603149414f, 36.482872009277344f, 41.569217681884766f, 46.87216567993164f,
                              52.383201599121094f, 58.094749450683594f};

static tgc_device *cpu_open(void) {
    tgc_device *d = tgc_cpu_device_create(0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    return d;
}

/* ---- Against ONNX's reference --------------------------------------------------------- */

static void test_antialias_linear(void) { /* scales [1, 1, 0.6, 0.6], linear, antialias 1 */
    tgc_device *cpu = cpu_open();
    rz_case k = {.n_attrs = 2, .attrs = {rz_str("mode", "linear"), rz_int("antialias", 1)}};
    static const float scales[] = {1, 1, 0.6f, 0.6f};
    rz_in(&k, cpu, 0, TGC_FLOAT32, 4, (int64_t[]){1, 1, 4, 4}, X44);
    rz_in(&k, cpu, 2, TGC_FLOAT32, 1, (int64_t[]){4}, scales);
    static const float want[] = {3.681610107421875f, 7.379581451416016f, 25.204063415527344f, 32.52925109863281f};
    rz_check_f32(&k, cpu, 4, (int64_t[]){1, 1, 2, 2}, want);
    rz_release(&k);
    tgc_device_destroy(cpu);
}

static void test_antialias_cubic(void) { /* sizes [1, 1, 3, 2], cubic, antialias 1 */
    tgc_device *cpu = cpu_open();
    rz_case k = {.n_attrs = 2, .attrs = {rz_str("mode", "cubic"), rz_int("antialias", 1)}};
    static const int64_t sizes[] = {1, 1, 3, 2};
    rz_in(&k, cpu, 0, TGC_FLOAT32, 4, (int64_t[]){1, 1, 4, 4}, X44);
    rz_in(&k, cpu, 3, TGC_INT64, 1, (int64_t[]){4}, sizes);
    static const float want[] = {1.347991943359375f,  5.5353899002075195f, 16.509483337402344f,
                                 24.82442855834961f,  40.800697326660156f, 51.684383392333984f};
    rz_check_f32(&k, cpu, 4, (int64_t[]){1, 1, 3, 2}, want);
    rz_release(&k);
    tgc_device_destroy(cpu);
}

static void test_not_larger_nearest(void) { /* X [1,1,2,4], sizes [7, 8] on axes [2, 3]: scale min(3.5, 2) */
    tgc_device *cpu = cpu_open();
    static const int64_t axes[] = {2, 3}, sizes[] = {7, 8};
    rz_case k = {.n_attrs = 2, .attrs = {rz_ints("axes", axes, 2), rz_str("keep_aspect_ratio_policy", "not_larger")}};
    rz_in(&k, cpu, 0, TGC_FLOAT32, 4, (int64_t[]){1, 1, 2, 4}, X44);
    rz_in(&k, cpu, 3, TGC_INT64, 1, (int64_t[]){2}, sizes);
    float want[32];
    for (int i = 0; i < 4; i++) /* rows 0,0,1,1; columns 0,0,1,1,2,2,3,3 */
        for (int j = 0; j < 8; j++) want[i * 8 + j] = X44[(i / 2) * 4 + j / 2];
    rz_check_f32(&k, cpu, 4, (int64_t[]){1, 1, 4, 8}, want);
    rz_release(&k);
    tgc_device_destroy(cpu);
}

static void test_not_smaller_linear(void) { /* sizes [3, 3] on axes [-2, -1]: scale max(1.5, 0.75) */
    tgc_device *cpu = cpu_open();
    static const int64_t axes[] = {-2, -1}, sizes[] = {3, 3};
    rz_case k = {.n_attrs = 3,
                 .attrs = {rz_ints("axes", axes, 2), rz_str("mode", "linear"),
                           rz_str("keep_aspect_ratio_policy", "not_smaller")}};
    rz_in(&k, cpu, 0, TGC_FLOAT32, 4, (int64_t[]){1, 1, 2, 4}, X44);
    rz_in(&k, cpu, 3, TGC_INT64, 1, (int64_t[]){2}, sizes);
    static const float want[] = {0.0f, 0.5f, 1.3047378063201904f, 2.5236892700195312f, 4.012289524078369f,
                                 5.196152210235596f, 4.0f, 5.0450849533081055f, 6.53558874130249f, 8.31726360321045f,
                                 10.310444831848145f, 11.858205795288086f, 8.0f, 9.590169906616211f,
                                 11.766439437866211f, 14.110838890075684f, 16.608598709106445f, 18.520259857177734f};
    rz_check_f32(&k, cpu, 4, (int64_t[]){1, 1, 3, 6}, want);
    rz_release(&k);
    tgc_device_destroy(cpu);
}

static void test_half_pixel_symmetric(void) { /* X [4, 4], scales [1.7, 0.7], linear */
    tgc_device *cpu = cpu_open();
    rz_case k = {.n_attrs = 2,
                 .attrs = {rz_str("mode", "linear"), rz_str("coordinate_transformation_mode", "half_pixel_symmetric")}};
    static const float scales[] = {1.7f, 0.7f};
    rz_in(&k, cpu, 0, TGC_FLOAT32, 2, (int64_t[]){4, 4}, X44);
    rz_in(&k, cpu, 2, TGC_FLOAT32, 1, (int64_t[]){2}, scales);
    static const float want[] = {1.0713948011398315f, 3.694045066833496f, 6.78499698638916f,  10.859001159667969f,
                                 13.703227996826172f, 19.046693801879883f, 22.858627319335938f, 29.133752822875977f,
                                 33.5849723815918f,   40.67179489135742f,  45.15720748901367f,  52.99113845825195f};
    rz_check_f32(&k, cpu, 2, (int64_t[]){6, 2}, want);
    rz_release(&k);
    tgc_device_destroy(cpu);
}

static void test_crop_axes_extrapolation(void) { /* X [1,4,4], axes [2], roi [0.1, 1.2], sizes [5] */
    tgc_device *cpu = cpu_open();
    static const int64_t axes[] = {2}, sizes[] = {5};
    static const float roi[] = {0.1f, 1.2f};
    rz_case k = {.n_attrs = 4,
                 .attrs = {rz_ints("axes", axes, 1), rz_str("mode", "linear"),
                           rz_str("coordinate_transformation_mode", "tf_crop_and_resize"),
                           rz_float("extrapolation_value", -7.0)}};
    rz_in(&k, cpu, 0, TGC_FLOAT32, 3, (int64_t[]){1, 4, 4}, X44);
    rz_in(&k, cpu, 1, TGC_FLOAT32, 1, (int64_t[]){2}, roi);
    rz_in(&k, cpu, 3, TGC_INT64, 1, (int64_t[]){1}, sizes);
    static const float want[] = {0.30000001192092896f, 1.2285534143447876f, 2.7370057106018066f, 4.663414001464844f,
                                 -7.0f, 8.9541015625f, 11.619915008544922f, 14.521108627319336f, 17.66001319885254f,
                                 -7.0f, 23.939191818237305f, 27.57784652709961f, 31.391637802124023f,
                                 35.38935089111328f, -7.0f, 43.16010284423828f, 47.5610466003418f,
                                 52.10765075683594f, 56.80965042114258f, -7.0f};
    rz_check_f32(&k, cpu, 3, (int64_t[]){1, 4, 5}, want);
    rz_release(&k);
    tgc_device_destroy(cpu);
}

static void test_cubic_exclude_outside(void) { /* X [4,1,4], scales [1.5, 0.75] on axes [0, 2], A -0.5 */
    tgc_device *cpu = cpu_open();
    static const int64_t axes[] = {0, 2};
    static const float scales[] = {1.5f, 0.75f};
    rz_case k = {.n_attrs = 4,
                 .attrs = {rz_ints("axes", axes, 2), rz_str("mode", "cubic"), rz_float("cubic_coeff_a", -0.5),
                           rz_int("exclude_outside", 1)}};
    rz_in(&k, cpu, 0, TGC_FLOAT32, 3, (int64_t[]){4, 1, 4}, X44);
    rz_in(&k, cpu, 2, TGC_FLOAT32, 1, (int64_t[]){2}, scales);
    static const float want[] = {-0.4476415514945984f, 1.1004595756530762f, 4.07983922958374f,  3.098839282989502f,
                                 6.074337482452393f,   10.09726619720459f,  10.354887008666992f, 15.275825500488281f,
                                 20.786544799804688f,  20.292312622070312f, 26.261079788208008f, 32.737884521484375f,
                                 34.020992279052734f,  41.002891540527344f, 48.426273345947266f, 43.36481857299805f,
                                 50.93906784057617f,   58.9212532043457f};
    rz_check_f32(&k, cpu, 3, (int64_t[]){6, 1, 3}, want);
    rz_release(&k);
    tgc_device_destroy(cpu);
}

static void test_nearest_ceil_pytorch(void) { /* X [1, 4], sizes [1, 7], ceil, pytorch_half_pixel */
    tgc_device *cpu = cpu_open();
    static const int64_t sizes[] = {1, 7};
    rz_case k = {.n_attrs = 2,
                 .attrs = {rz_str("nearest_mode", "ceil"),
                           rz_str("coordinate_transformation_mode", "pytorch_half_pixel")}};
    rz_in(&k, cpu, 0, TGC_FLOAT32, 2, (int64_t[]){1, 4}, X44);
    rz_in(&k, cpu, 3, TGC_INT64, 1, (int64_t[]){2}, sizes);
    const float want[] = {X44[0], X44[1], X44[1], X44[2], X44[3], X44[3], X44[3]};
    rz_check_f32(&k, cpu, 2, (int64_t[]){1, 7}, want);
    rz_release(&k);
    tgc_device_destroy(cpu);
}

/* ---- float32 images against the double path ------------------------------------------ */

/* float32 X resized on its last two axes takes the float32 image path;
 * the same values as float64 take the double path that the cases above
 * check against ONNX's reference. Both must agree within float32
 * rounding (|d| <= 1e-5 * max(1, |want|)), alone and over 2 threads. */
static void image_case(tgc_device *cpu, tgc_thread_pool *pool, const char *mode, const char *coord, int antialias,
                       const int64_t *sizes) {
    int64_t xd[4] = {2, 3, 11, 9}, n = 2 * 3 * 11 * 9;
    float xf[2 * 3 * 11 * 9];
    double xdbl[2 * 3 * 11 * 9];
    uint32_t r = 7;
    for (int64_t i = 0; i < n; i++) {
        r = r * 1664525u + 1013904223u;
        xf[i] = (float)(r >> 8) / (float)(1u << 20) - 8.0f;
        xdbl[i] = xf[i];
    }
    rz_case kf = {0}, kd = {0};
    rz_case *ks[2] = {&kf, &kd};
    for (int v = 0; v < 2; v++) {
        rz_case *k = ks[v];
        k->attrs[k->n_attrs++] = rz_str("mode", mode);
        k->attrs[k->n_attrs++] = rz_str("coordinate_transformation_mode", coord);
        k->attrs[k->n_attrs++] = rz_int("antialias", antialias);
        k->pool = pool;
        rz_in(k, cpu, 0, v == 0 ? TGC_FLOAT32 : TGC_FLOAT64, 4, xd, v == 0 ? (const void *)xf : (const void *)xdbl);
        rz_in(k, cpu, 3, TGC_INT64, 1, (int64_t[]){4}, sizes);
        tgc_status st = rz_call(k, &tgc_cpu_kernels_resize[0], cpu, k->in);
        if (st != TGC_OK) fprintf(stderr, "\n  Resize failed: %s\n", k->err);
        CU_ASSERT_EQUAL_FATAL(st, TGC_OK);
    }
    int64_t m = tgc_value_numel(&kf.out);
    CU_ASSERT_EQUAL_FATAL(m, tgc_value_numel(&kd.out));
    const float *got = tgc_buffer_host_ptr(kf.out.buf);
    const double *want = tgc_buffer_host_ptr(kd.out.buf);
    int bad = 0;
    for (int64_t i = 0; i < m; i++)
        if (!(fabs(got[i] - want[i]) <= 1e-5 * fmax(1.0, fabs(want[i]))) && bad++ < 4)
            fprintf(stderr, "\n  %s %s: element %lld: got %.9g, want %.9g", mode, coord, (long long)i, got[i], want[i]);
    CU_ASSERT_EQUAL(bad, 0);
    rz_release(&kf);
    rz_release(&kd);
}

static void test_image_path_matches_double(void) {
    tgc_device *cpu = cpu_open();
    tgc_thread_pool *pool = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_thread_pool_create(2, &pool), TGC_OK);
    for (int t = 0; t < 2; t++) {
        tgc_thread_pool *p = t == 0 ? NULL : pool;
        image_case(cpu, p, "linear", "half_pixel", 0, (int64_t[]){2, 3, 40, 31});  /* DeepLab's upsampling */
        image_case(cpu, p, "cubic", "align_corners", 0, (int64_t[]){2, 3, 23, 17});
        image_case(cpu, p, "nearest", "asymmetric", 0, (int64_t[]){2, 3, 22, 27});
        image_case(cpu, p, "linear", "pytorch_half_pixel", 1, (int64_t[]){2, 3, 5, 4}); /* antialiased down */
        image_case(cpu, p, "linear", "half_pixel", 0, (int64_t[]){2, 3, 30, 9});  /* height only */
        image_case(cpu, p, "cubic", "half_pixel", 0, (int64_t[]){2, 3, 11, 4});   /* width only */
    }
    tgc_thread_pool_free(pool);
    tgc_device_destroy(cpu);
}

static void test_uint8_rounding(void) { /* X uint8 [2, 3], scales [1.5, 1.7], linear: rounded half to even */
    tgc_device *cpu = cpu_open();
    static const uint8_t x[] = {0, 255, 100, 3, 77, 250};
    static const float scales[] = {1.5f, 1.7f};
    rz_case k = {.n_attrs = 1, .attrs = {rz_str("mode", "linear")}};
    rz_in(&k, cpu, 0, TGC_UINT8, 2, (int64_t[]){2, 3}, x);
    rz_in(&k, cpu, 2, TGC_FLOAT32, 1, (int64_t[]){2}, scales);
    CU_ASSERT_EQUAL_FATAL(rz_call(&k, &tgc_cpu_kernels_resize[0], cpu, k.in), TGC_OK);
    CU_ASSERT_EQUAL(k.out.dims[0], 3);
    CU_ASSERT_EQUAL(k.out.dims[1], 5);
    static const uint8_t want[] = {0, 97, 247, 168, 100, 2, 64, 161, 171, 175, 3, 31, 75, 174, 250};
    CU_ASSERT_EQUAL(memcmp(tgc_buffer_host_ptr(k.out.buf), want, sizeof want), 0);
    rz_release(&k);
    tgc_device_destroy(cpu);
}

/* ---- Errors --------------------------------------------------------------------------- */

/* Runs a [1, 2] float32 X through the cpu kernel with the given inputs;
 * expects a failure whose message contains `words`. */
static void expect_error(rz_case *k, tgc_device *cpu, const char *words) {
    static const float x[] = {1, 2};
    rz_in(k, cpu, 0, TGC_FLOAT32, 2, (int64_t[]){1, 2}, x);
    tgc_status st = rz_call(k, &tgc_cpu_kernels_resize[0], cpu, k->in);
    CU_ASSERT_NOT_EQUAL(st, TGC_OK);
    CU_ASSERT_PTR_NULL(k->out.buf);
    if (strstr(k->err, words) == NULL) fprintf(stderr, "\n  message '%s' lacks '%s'\n", k->err, words);
    CU_ASSERT_PTR_NOT_NULL(strstr(k->err, words));
    rz_release(k);
}

static void test_errors(void) {
    tgc_device *cpu = cpu_open();
    static const float scales2[] = {1, 2}, bad_scale[] = {1, -2}, scales3[] = {1, 2, 3};
    static const int64_t sizes2[] = {1, 4}, neg_size[] = {1, -4};
    rz_case k = {0};
    rz_in(&k, cpu, 2, TGC_FLOAT32, 1, (int64_t[]){2}, scales2);
    rz_in(&k, cpu, 3, TGC_INT64, 1, (int64_t[]){2}, sizes2);
    expect_error(&k, cpu, "not both");
    k = (rz_case){.n_in = 4};
    expect_error(&k, cpu, "not neither");
    rz_in(&k, cpu, 2, TGC_FLOAT32, 1, (int64_t[]){3}, scales3);
    expect_error(&k, cpu, "has 3 values; 2 axes");
    rz_in(&k, cpu, 2, TGC_FLOAT32, 1, (int64_t[]){2}, bad_scale);
    expect_error(&k, cpu, "not a finite number > 0");
    rz_in(&k, cpu, 3, TGC_INT64, 1, (int64_t[]){2}, neg_size);
    expect_error(&k, cpu, "is negative");
    k = (rz_case){.n_attrs = 1, .attrs = {rz_str("mode", "bilinear")}};
    rz_in(&k, cpu, 2, TGC_FLOAT32, 1, (int64_t[]){2}, scales2);
    expect_error(&k, cpu, "'mode' is 'bilinear'");
    k = (rz_case){.n_attrs = 1, .attrs = {rz_str("coordinate_transformation_mode", "tf_crop_and_resize")}};
    rz_in(&k, cpu, 2, TGC_FLOAT32, 1, (int64_t[]){2}, scales2);
    expect_error(&k, cpu, "needs roi");
    static const int64_t axes_rep[] = {1, -1};
    k = (rz_case){.n_attrs = 1, .attrs = {rz_ints("axes", axes_rep, 2)}};
    rz_in(&k, cpu, 2, TGC_FLOAT32, 1, (int64_t[]){2}, scales2);
    expect_error(&k, cpu, "out of range or repeated");
    tgc_device_destroy(cpu);
}

/* ---- gpu against cpu ------------------------------------------------------------------ */

typedef struct gpu_config {
    const char *mode, *coord, *nearest;
    int antialias, exclude_outside;
    float scales[4]; /* all zero: sizes */
    int64_t sizes[4];
} gpu_config;

static void test_gpu_matches_cpu(void) {
    tgc_diags *diags = tgc_diags_create();
    tgc_device *gpu = NULL;
    if (tgc_cl_device_create(0, diags, &gpu) != TGC_OK) {
        CU_ASSERT_FALSE(tgc_test_has_opencl_device()); /* a gpu0 that will not open fails */
        fprintf(stderr, "\n  notice: no OpenCL device; the gpu Resize is not checked here\n");
        tgc_diags_free(diags);
        return;
    }
    tgc_diags_free(diags);
    tgc_device *cpu = cpu_open();
    static const gpu_config configs[] = {
        {"nearest", "half_pixel", "round_prefer_floor", 0, 0, {1, 1, 2, 2}, {0}},
        {"nearest", "asymmetric", "floor", 0, 0, {1, 1, 0.5f, 1.5f}, {0}},
        {"nearest", "align_corners", "round_prefer_ceil", 0, 0, {0}, {1, 3, 7, 4}},
        {"nearest", "tf_half_pixel_for_nn", "ceil", 0, 0, {1, 1, 1.7f, 0.6f}, {0}},
        {"linear", "half_pixel", "", 0, 0, {1, 1, 2, 2}, {0}},
        {"linear", "pytorch_half_pixel", "", 0, 0, {0}, {2, 3, 1, 9}},
        {"linear", "align_corners", "", 0, 0, {1.5f, 1, 0.5f, 3}, {0}},
        {"linear", "half_pixel_symmetric", "", 0, 0, {1, 1, 1.3f, 0.7f}, {0}},
        {"linear", "half_pixel", "", 1, 0, {1, 1, 0.4f, 0.3f}, {0}},
        {"linear", "tf_crop_and_resize", "", 0, 0, {0}, {2, 3, 6, 5}},
        {"cubic", "half_pixel", "", 0, 1, {1, 1, 1.6f, 2.2f}, {0}},
        {"cubic", "asymmetric", "", 1, 0, {1, 1, 0.5f, 0.45f}, {0}},
    };
    static const float roi[] = {0, 0, -0.2f, 0.1f, 1, 1, 0.9f, 1.3f};
    enum { N = 2 * 3 * 11 * 9 };
    float x[N];
    for (int i = 0; i < N; i++) x[i] = (float)sin(i * 0.37) * 3 + (float)(i % 7);
    const int64_t xdims[] = {2, 3, 11, 9};
    for (size_t ci = 0; ci < sizeof configs / sizeof configs[0]; ci++) {
        const gpu_config *g = &configs[ci];
        rz_case k = {.n_attrs = 5,
                     .attrs = {rz_str("mode", g->mode), rz_str("coordinate_transformation_mode", g->coord),
                               rz_int("antialias", g->antialias), rz_int("exclude_outside", g->exclude_outside),
                               rz_float("extrapolation_value", 0.25)}};
        if (g->nearest[0]) k.attrs[k.n_attrs++] = rz_str("nearest_mode", g->nearest);
        rz_in(&k, cpu, 0, TGC_FLOAT32, 4, xdims, x);
        rz_in(&k, cpu, 1, TGC_FLOAT32, 1, (int64_t[]){8}, roi);
        if (g->scales[0] != 0) rz_in(&k, cpu, 2, TGC_FLOAT32, 1, (int64_t[]){4}, g->scales);
        else rz_in(&k, cpu, 3, TGC_INT64, 1, (int64_t[]){4}, g->sizes);
        CU_ASSERT_EQUAL_FATAL(rz_call(&k, &tgc_cpu_kernels_resize[0], cpu, k.in), TGC_OK);
        tgc_value want = k.out;
        /* The gpu: X on the device, roi/scales/sizes in host memory as the executor keeps them. */
        tgc_value gin[4];
        memcpy(gin, k.in, sizeof gin);
        CU_ASSERT_EQUAL_FATAL(tgc_buffer_alloc(gpu, sizeof x, &gin[0].buf), TGC_OK);
        CU_ASSERT_EQUAL_FATAL(gpu->ops->copy_from_host(gpu, gin[0].buf->mem, 0, x, sizeof x), TGC_OK);
        tgc_status st = rz_call(&k, &tgc_gpu_kernels_resize[0], gpu, gin);
        if (st != TGC_OK) fprintf(stderr, "\n  gpu Resize failed: %s\n", k.err);
        CU_ASSERT_EQUAL_FATAL(st, TGC_OK);
        CU_ASSERT_EQUAL_FATAL(k.out.rank, want.rank);
        CU_ASSERT_EQUAL(memcmp(k.out.dims, want.dims, sizeof want.dims), 0);
        int64_t n = tgc_value_numel(&want);
        float *got = tgc_malloc((size_t)n * sizeof *got + 1);
        CU_ASSERT_PTR_NOT_NULL_FATAL(got);
        if (n > 0) CU_ASSERT_EQUAL(gpu->ops->copy_to_host(gpu, got, k.out.buf->mem, 0, (size_t)n * 4), TGC_OK);
        const float *w = tgc_buffer_host_ptr(want.buf);
        int bad = 0;
        for (int64_t i = 0; i < n; i++)
            if (!(fabs(got[i] - w[i]) <= 1e-5 * fmax(1.0, fabs(w[i]))) && bad++ < 3)
                fprintf(stderr, "\n  config %zu element %lld: gpu %.9g, cpu %.9g", ci, (long long)i, got[i], w[i]);
        CU_ASSERT_EQUAL(bad, 0);
        tgc_free(got);
        tgc_buffer_release(gin[0].buf);
        tgc_buffer_release(want.buf);
        rz_release(&k);
    }
    CU_ASSERT_EQUAL(gpu->ops->synchronize(gpu), TGC_OK);
    CU_ASSERT_EQUAL(tgc_cl_device_counters(gpu).mems, 0);
    tgc_device_destroy(gpu);
    tgc_device_destroy(cpu);
}

TGC_TEST_MAIN("resize", {"antialias linear", test_antialias_linear}, {"antialias cubic", test_antialias_cubic},
              {"not_larger nearest", test_not_larger_nearest}, {"not_smaller linear", test_not_smaller_linear},
              {"half_pixel_symmetric", test_half_pixel_symmetric},
              {"tf_crop_and_resize on one axis", test_crop_axes_extrapolation},
              {"cubic exclude_outside", test_cubic_exclude_outside},
              {"nearest ceil pytorch_half_pixel", test_nearest_ceil_pytorch}, {"uint8 rounding", test_uint8_rounding},
              {"errors", test_errors}, {"gpu matches cpu", test_gpu_matches_cpu},
              {"float32 image path matches the double path", test_image_path_matches_double})
