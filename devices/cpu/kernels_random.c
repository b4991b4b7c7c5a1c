/* Random kernels on the cpu (ONNX opset 17): RandomUniform, RandomNormal,
 * RandomUniformLike, RandomNormalLike, Bernoulli, Multinomial and Dropout.
 *
 * Each run draws from a fresh MT19937 (devices/cpu/mt19937.h) seeded with
 * the node's `seed` attribute (int(seed) mod 2^32: numpy's RandomState),
 * or from the clock when it has none. The draws follow ONNX's reference
 * implementation (onnx/reference/ops/op_random_*.py, op_bernoulli.py,
 * op_dropout.py), one after another in element order:
 *
 *   RandomUniform*   rand() as the output type, times (high - low), plus low
 *   RandomNormal*    randn() as the output type, times scale, plus mean
 *   Bernoulli        binomial(1, p): numpy's legacy inversion algorithm, one
 *                    draw per element (for p > 0.5, 1 - binomial(1, 1 - p))
 *   Dropout          training with ratio > 0: mask = uniform >= ratio,
 *                    y = mask * x * (1 / (1 - ratio)); otherwise y = x and
 *                    the mask all true
 *   Multinomial      (no reference): per row, softmax of the logits in
 *                    double, each sample the first class whose cumulative
 *                    probability exceeds a uniform draw
 *
 * so a seeded node reproduces the reference's values on every run. */
#include "devices/cpu/mt19937.h"
#include "devices/kernel.h"
#include "devices/kernel_checks.h"

#include "support/alloc.h"
#include "support/half.h"

#include <math.h>
#include <string.h>

/* X(tgc dtype, C type) for the output types stored by plain conversion
 * (float16, bfloat16 and bool aside). */
#define PLAIN_TYPES(X)                                                                                                 \
    X(TGC_FLOAT32, float) X(TGC_FLOAT64, double) X(TGC_INT8, int8_t) X(TGC_INT16, int16_t) X(TGC_INT32, int32_t)       \
    X(TGC_INT64, int64_t) X(TGC_UINT8, uint8_t) X(TGC_UINT16, uint16_t) X(TGC_UINT32, uint32_t)                        \
    X(TGC_UINT64, uint64_t)

static void store(tgc_dtype t, void *p, int64_t i, double v) {
    if (t == TGC_FLOAT16) ((uint16_t *)p)[i] = tgc_float_to_half((float)v);
    else if (t == TGC_BFLOAT16) ((uint16_t *)p)[i] = tgc_float_to_bf16((float)v);
    else if (t == TGC_BOOL) ((uint8_t *)p)[i] = v != 0;
#define STORE(dt, ct) else if (t == dt) ((ct *)p)[i] = (ct)v;
    PLAIN_TYPES(STORE)
#undef STORE
}

static double load_float(tgc_dtype t, const void *p, int64_t i) {
    if (t == TGC_FLOAT64) return ((const double *)p)[i];
    return t == TGC_FLOAT16 ? tgc_half_to_float(((const uint16_t *)p)[i]) : ((const float *)p)[i];
}

/* Rounds v to output type t's precision (float32, float16 or float64).
 * Callers compute in double and round after each operation: for float32
 * and float16 that equals the operation done in that type (a product of
 * two floats is exact in double; a sum's double rounding is innocuous). */
static double as_type(tgc_dtype t, double v) {
    if (t == TGC_FLOAT64) return v;
    return t == TGC_FLOAT16 ? tgc_half_to_float(tgc_float_to_half((float)v)) : (float)v;
}

/* Seeds g from the node's `seed` (float or int attribute), or the clock. */
static void seed_generator(const tgc_kernel_ctx *c, tgc_mt19937 *g) {
    const tgc_attr *a = tgc_node_attr(c->node, "seed");
    uint32_t s;
    if (a == NULL) s = tgc_mt19937_entropy_seed();
    else if (a->type == TGC_ATTR_INT) s = (uint32_t)(uint64_t)a->i;
    else if (a->f > -9.2e18 && a->f < 9.2e18) s = (uint32_t)(uint64_t)(int64_t)a->f; /* int(seed): toward 0 */
    else s = 0; /* NaN or huge: numpy would refuse it */
    tgc_mt19937_seed(g, s);
}

static bool float_type(tgc_dtype t) { return t == TGC_FLOAT32 || t == TGC_FLOAT16 || t == TGC_FLOAT64; }

/* ---- RandomUniform, RandomNormal and their *Like forms --------------------------------- */

static tgc_status fill_random(tgc_kernel_ctx *c, bool normal) {
    if (c->n_outputs < 1) return tgc_kernel_fail(c, "a random op has one output");
    const tgc_value *y = &c->outputs[0];
    tgc_status st = tgc_kernel_check_tensor(c, "output", 0, y, true); /* the *Like input: dims only */
    if (st != TGC_OK) return st;
    if (!float_type(y->dtype))
        return tgc_kernel_fail(c, "output is %s; it must be a float type", tgc_dtype_name(y->dtype));
    double a = normal ? tgc_kernel_attr_float(c, "scale", 1.0) : tgc_kernel_attr_float(c, "high", 1.0) -
                                                                  tgc_kernel_attr_float(c, "low", 0.0);
    double b = normal ? tgc_kernel_attr_float(c, "mean", 0.0) : tgc_kernel_attr_float(c, "low", 0.0);
    double fa = as_type(y->dtype, a), fb = as_type(y->dtype, b);
    tgc_mt19937 g;
    seed_generator(c, &g);
    void *py = tgc_kernel_out_ptr(c, 0);
    for (int64_t i = 0, n = tgc_value_numel(y); i < n; i++) {
        double r = as_type(y->dtype, normal ? tgc_mt19937_gauss(&g) : tgc_mt19937_double(&g));
        r = as_type(y->dtype, r * fa);
        store(y->dtype, py, i, as_type(y->dtype, r + fb));
    }
    return TGC_OK;
}

static tgc_status random_uniform(tgc_kernel_ctx *c) { return fill_random(c, false); }
static tgc_status random_normal(tgc_kernel_ctx *c) { return fill_random(c, true); }

/* ---- Bernoulli ---------------------------------------------------------------------------- */

/* numpy's random_binomial_inversion for n = 1 and p <= 0.5. */
static int binomial1_inversion(tgc_mt19937 *g, double p) {
    double q = 1.0 - p, qn = exp(log(q)), np1 = p, px = qn;
    int64_t bound = (int64_t)fmin(1.0, np1 + 10.0 * sqrt(np1 * q + 1)), x = 0;
    double u = tgc_mt19937_double(g);
    while (u > px) {
        x++;
        if (x > bound) {
            x = 0;
            px = qn;
            u = tgc_mt19937_double(g);
        } else {
            u -= px;
            px = ((double)(1 - x + 1) * p * px) / ((double)x * q);
        }
    }
    return (int)x;
}

static tgc_status bernoulli(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 1, 1);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    if (!float_type(x->dtype)) return tgc_kernel_fail(c, "input is %s; it must be float", tgc_dtype_name(x->dtype));
    const void *px = tgc_kernel_in_ptr(c, 0);
    int64_t n = tgc_value_numel(x);
    for (int64_t i = 0; i < n; i++) {
        double p = load_float(x->dtype, px, i);
        if (!(p >= 0 && p <= 1))
            return tgc_kernel_fail(c, "probability %g at element %lld is outside [0, 1]", p, (long long)i);
    }
    tgc_mt19937 g;
    seed_generator(c, &g);
    void *py = tgc_kernel_out_ptr(c, 0);
    for (int64_t i = 0; i < n; i++) {
        double p = load_float(x->dtype, px, i);
        int v = p <= 0.5 ? binomial1_inversion(&g, p) : 1 - binomial1_inversion(&g, 1.0 - p);
        store(y->dtype, py, i, v);
    }
    return TGC_OK;
}

/* ---- Multinomial ------------------------------------------------------------------------- */

static tgc_status multinomial(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 1, 1);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    if (!float_type(x->dtype) || x->rank != 2 || (y->dtype != TGC_INT32 && y->dtype != TGC_INT64))
        return tgc_kernel_fail(c, "Multinomial takes float [batch, class_size] to int32 or int64 samples");
    int64_t batch = x->dims[0], classes = x->dims[1], samples = tgc_kernel_attr_int(c, "sample_size", 1);
    int64_t want[2] = {batch, samples};
    if ((st = tgc_kernel_expect_dims(c, 0, 2, want)) != TGC_OK) return st;
    if (batch == 0 || samples == 0) return TGC_OK;
    if (classes == 0) return tgc_kernel_fail(c, "class_size is 0: there is nothing to sample");
    double *cdf = tgc_malloc((size_t)classes * sizeof(double));
    if (cdf == NULL) return tgc_kernel_fail(c, "out of host memory for %lld classes", (long long)classes);
    tgc_mt19937 g;
    seed_generator(c, &g);
    const void *px = tgc_kernel_in_ptr(c, 0);
    void *py = tgc_kernel_out_ptr(c, 0);
    for (int64_t b = 0; b < batch; b++) {
        double hi = -INFINITY, sum = 0;
        for (int64_t k = 0; k < classes; k++) hi = fmax(hi, load_float(x->dtype, px, b * classes + k));
        for (int64_t k = 0; k < classes; k++) {
            sum += isinf(hi) && hi < 0 ? 1.0 : exp(load_float(x->dtype, px, b * classes + k) - hi);
            cdf[k] = sum;
        }
        for (int64_t s = 0; s < samples; s++) {
            double u = tgc_mt19937_double(&g) * sum;
            int64_t k = 0;
            while (k < classes - 1 && !(u < cdf[k])) k++;
            store(y->dtype, py, b * samples + s, (double)k);
        }
    }
    tgc_free(cdf);
    return TGC_OK;
}

/* ---- Dropout ------------------------------------------------------------------------------- */

static tgc_status dropout(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 1, 1);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    if (!float_type(x->dtype) || y->dtype != x->dtype || tgc_value_numel(y) != tgc_value_numel(x))
        return tgc_kernel_fail(c, "Dropout takes a float tensor to one of its dtype and size");
    double ratio = 0.5;
    bool training = false;
    if (tgc_kernel_has_input(c, 1)) {
        if (!float_type(c->inputs[1].dtype) || tgc_value_numel(&c->inputs[1]) != 1)
            return tgc_kernel_fail(c, "input 1 (ratio) must be a float scalar");
        ratio = load_float(c->inputs[1].dtype, tgc_kernel_in_ptr(c, 1), 0);
    }
    if (tgc_kernel_has_input(c, 2)) {
        if (c->inputs[2].dtype != TGC_BOOL || tgc_value_numel(&c->inputs[2]) != 1)
            return tgc_kernel_fail(c, "input 2 (training_mode) must be a bool scalar");
        training = *(const uint8_t *)tgc_kernel_in_ptr(c, 2) != 0;
    }
    bool has_mask = tgc_kernel_has_output(c, 1);
    if (has_mask && (c->outputs[1].dtype != TGC_BOOL || tgc_value_numel(&c->outputs[1]) != tgc_value_numel(x)))
        return tgc_kernel_fail(c, "output 1 (mask) must be bool of the input's size");
    int64_t n = tgc_value_numel(x);
    const void *px = tgc_kernel_in_ptr(c, 0);
    void *py = tgc_kernel_out_ptr(c, 0);
    uint8_t *mask = has_mask ? tgc_kernel_out_ptr(c, 1) : NULL;
    if (!training || ratio == 0) {
        if (n > 0 && px != py) memcpy(py, px, tgc_value_nbytes(x));
        if (mask != NULL && n > 0) memset(mask, 1, (size_t)n);
        return TGC_OK;
    }
    if (!(ratio >= 0 && ratio < 1)) return tgc_kernel_fail(c, "ratio is %g; training needs it in [0, 1)", ratio);
    double scale = x->dtype == TGC_FLOAT64 ? 1.0 / (1.0 - ratio) : as_type(x->dtype, 1.0f / (1.0f - (float)ratio));
    tgc_mt19937 g;
    seed_generator(c, &g);
    for (int64_t i = 0; i < n; i++) {
        bool keep = tgc_mt19937_double(&g) >= ratio;
        double v = keep ? as_type(x->dtype, load_float(x->dtype, px, i)) : 0.0 * load_float(x->dtype, px, i);
        store(x->dtype, py, i, as_type(x->dtype, v * scale));
        if (mask != NULL) mask[i] = keep;
    }
    return TGC_OK;
}

/* ---- The family ----------------------------------------------------------------------------- */

#define FLOATS {TGC_FLOAT32, TGC_FLOAT16, TGC_FLOAT64, TGC_DTYPE_INVALID}
#define HOST(i) (1u << (i))

const tgc_kernel_def tgc_cpu_kernels_random[] = {
    /* The *Like forms read only their input's dims; it may be of any dtype. */
    {.op = "RandomUniform", .fn = random_uniform, .forward_input = -1,
     .dtypes = {TGC_DTYPE_INVALID}},
    {.op = "RandomNormal", .fn = random_normal, .forward_input = -1,
     .dtypes = {TGC_DTYPE_INVALID}},
    {.op = "RandomUniformLike", .fn = random_uniform, .forward_input = -1,
     .metadata_inputs = HOST(0), .dtypes = {TGC_DTYPE_INVALID}},
    {.op = "RandomNormalLike", .fn = random_normal, .forward_input = -1,
     .metadata_inputs = HOST(0), .dtypes = {TGC_DTYPE_INVALID}},
    {.op = "Bernoulli", .fn = bernoulli, .forward_input = -1, .dtypes = FLOATS},
    {.op = "Multinomial", .fn = multinomial, .forward_input = -1, .dtypes = FLOATS},
    {.op = "Dropout", .fn = dropout, .forward_input = 0, .host_inputs = HOST(1) | HOST(2),
     .dtypes = FLOATS},
    {.op = NULL},
};
