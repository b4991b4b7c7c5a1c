/* Loss ops on the cpu: NegativeLogLikelihoodLoss-13 and
 * SoftmaxCrossEntropyLoss-13 (shapes and attributes: graph/ops_loss.c).
 *
 * Both read X [N, C, d1, ..., dk] as [N, C, D] (D = d1 * ... * dk, 1 for a
 * 2-D X) and the target as [N, D]; item (n, d) has class t = target[n, d]
 * at stride D in X. Following ONNX's reference implementations
 * (onnx/reference/ops/op_negative_log_likelihood_loss.py and
 * op_softmax_cross_entropy_loss.py):
 *     lp[n, k, d] = X[n, k, d] (NLL), or SoftmaxCrossEntropyLoss's
 *                   log_softmax over k: X - max_k X - log(sum_k exp(X - max_k X))
 *     w(n, d)     = 0 when t == ignore_index, else weight[t] (1 without a weight)
 *     loss[n, d]  = -lp[n, t, d] * w(n, d)
 *     "none": loss; "sum": sum(loss); "mean": sum(loss) / sum(w)
 * The mean's denominator is the item count without weights and
 * ignore_index, the non-ignored count with ignore_index only (so no items,
 * or all ignored, gives 0 / 0 = NaN, as the reference's numpy does). A
 * target outside [0, C) that is not ignore_index (a negative one included)
 * fails the kernel, naming the item. Sums, the softmax and the loss are in
 * double; each element type only converts to and from double.
 *
 * Element types: LOSS_ELEMENT_TYPES below lists them; float64 is one line
 * there once tgc has TGC_FLOAT64 (the dtypes list, the dispatch and the
 * accessors all come from that list). */
#include "devices/kernel.h"
#include "devices/kernel_checks.h"

#include "support/checked.h"
#include "support/half.h"

#include <math.h>
#include <string.h>

/* X(dtype, suffix, C element type, to double, from double): every element
 * type the loss kernels handle. Float64, when TGC_FLOAT64 exists:
 *     X(TGC_FLOAT64, f64, double, (double), (double))                      */
#define LOSS_ELEMENT_TYPES(X)                                                                                \
    X(TGC_FLOAT32, f32, float, (double), (float))                                                            \
    X(TGC_FLOAT16, f16, uint16_t, (double)tgc_half_to_float, half_of_double)

static uint16_t half_of_double(double v) { return tgc_float_to_half((float)v); }

/* What a loss node asks for, read and checked from its kernel context. */
typedef struct loss_geometry {
    int64_t n, classes, d; /* X as [n, classes, d] */
    bool softmax;          /* SoftmaxCrossEntropyLoss: log_softmax over the classes first */
    bool has_weight, want_log_prob, has_ignore;
    int64_t ignore_index;
    enum { REDUCE_NONE, REDUCE_SUM, REDUCE_MEAN } reduction;
} loss_geometry;

/* Checks the tensors against each other (inference made them agree; the
 * kernel does not rely on it) and reads the attributes into *g. */
static tgc_status loss_geometry_read(tgc_kernel_ctx *c, bool softmax, loss_geometry *g) {
    const char *op = tgc_kernel_op_name(c);
    tgc_status st = tgc_kernel_check_host(c, 2, 1);
    if (st != TGC_OK) return st;
    memset(g, 0, sizeof *g);
    g->softmax = softmax;
    g->has_weight = tgc_kernel_has_input(c, 2);
    g->want_log_prob = softmax && tgc_kernel_has_output(c, 1);
    if (g->want_log_prob && (st = tgc_kernel_check_tensor(c, "output", 1, &c->outputs[1], true)) != TGC_OK)
        return st;
    const tgc_value *x = &c->inputs[0], *t = &c->inputs[1], *y = &c->outputs[0];
    char sx[TGC_KERNEL_DIMS_BUF], st_[TGC_KERNEL_DIMS_BUF];
    if (x->rank < 2)
        return tgc_kernel_fail(c, "%s: input 0 has shape %s; it must be [N, C, d1, ..., dk]", op,
                               tgc_kernel_dims_str(x->rank, x->dims, sx));
    if (t->dtype != TGC_INT32 && t->dtype != TGC_INT64)
        return tgc_kernel_fail(c, "%s: input 1 (target) is %s; it must be int32 or int64", op,
                               tgc_dtype_name(t->dtype));
    g->n = x->dims[0];
    g->classes = x->dims[1];
    g->d = 1;
    bool same = t->rank == x->rank - 1 && t->dims[0] == g->n;
    for (int i = 2; i < x->rank; i++) {
        same = same && t->dims[i - 1] == x->dims[i];
        if (!tgc_checked_mul_i64(g->d, x->dims[i], &g->d))
            return tgc_kernel_fail(c, "%s: input 0's size does not fit", op);
    }
    if (!same)
        return tgc_kernel_fail(c, "%s: input 1 (target) has shape %s; for input 0 %s it must be [N, d1, ..., dk]",
                               op, tgc_kernel_dims_str(t->rank, t->dims, st_), tgc_kernel_dims_str(x->rank, x->dims, sx));
    const tgc_value *w = &c->inputs[2];
    if (g->has_weight && (w->dtype != x->dtype || w->rank != 1 || w->dims[0] != g->classes))
        return tgc_kernel_fail(c, "%s: input 2 (weight) is %s %s; it must be %s [%lld]", op, tgc_dtype_name(w->dtype),
                               tgc_kernel_dims_str(w->rank, w->dims, st_), tgc_dtype_name(x->dtype),
                               (long long)g->classes);

    const char *reduction = tgc_kernel_attr_string(c, "reduction", "mean");
    if (strcmp(reduction, "none") == 0) g->reduction = REDUCE_NONE;
    else if (strcmp(reduction, "sum") == 0) g->reduction = REDUCE_SUM;
    else if (strcmp(reduction, "mean") == 0) g->reduction = REDUCE_MEAN;
    else return tgc_kernel_fail(c, "%s: attribute 'reduction' is '%s'; it must be 'none', 'sum' or 'mean'", op, reduction);
    g->has_ignore = tgc_node_attr(c->node, "ignore_index") != NULL;
    g->ignore_index = tgc_kernel_attr_int(c, "ignore_index", 0);

    int64_t items = tgc_value_numel(t), want = g->reduction == REDUCE_NONE ? items : 1;
    if (y->dtype != x->dtype || tgc_value_numel(y) != want)
        return tgc_kernel_fail(c, "%s: output 0 is %s %s; it must be %s with %lld elements", op,
                               tgc_dtype_name(y->dtype), tgc_kernel_dims_str(y->rank, y->dims, sx),
                               tgc_dtype_name(x->dtype), (long long)want);
    const tgc_value *lp = &c->outputs[1];
    if (g->want_log_prob && (lp->dtype != x->dtype || tgc_value_numel(lp) != tgc_value_numel(x)))
        return tgc_kernel_fail(c, "%s: output 1 (log_prob) is %s %s; it must be input 0's dtype and shape", op,
                               tgc_dtype_name(lp->dtype), tgc_kernel_dims_str(lp->rank, lp->dims, sx));
    return TGC_OK;
}

/* Target i of an int32 or int64 target tensor. */
static int64_t target_at(tgc_dtype dtype, const void *t, int64_t i) {
    return dtype == TGC_INT32 ? ((const int32_t *)t)[i] : ((const int64_t *)t)[i];
}

typedef double (*loss_load_fn)(const void *p, int64_t i);
typedef void (*loss_store_fn)(void *p, int64_t i, double v);

/* The loss of the file comment over element accessors load/store (constant
 * at every call site below, so each element type gets its own copy of this
 * loop when it is inlined). */
static inline tgc_status loss_run(tgc_kernel_ctx *c, const loss_geometry *g, loss_load_fn load, loss_store_fn store) {
    const void *x = tgc_kernel_in_ptr(c, 0), *target = tgc_kernel_in_ptr(c, 1);
    const void *weight = g->has_weight ? tgc_kernel_in_ptr(c, 2) : NULL;
    void *out = tgc_kernel_out_ptr(c, 0), *log_prob = g->want_log_prob ? tgc_kernel_out_ptr(c, 1) : NULL;
    tgc_dtype tdt = c->inputs[1].dtype;
    int64_t classes = g->classes, d_count = g->d;
    double sum = 0.0, weight_sum = 0.0;
    for (int64_t n = 0; n < g->n; n++) {
        for (int64_t d = 0; d < d_count; d++) {
            int64_t item = n * d_count + d, base = n * classes * d_count + d; /* X[n, 0, d] */
            double shift = 0.0; /* log_prob = X - shift */
            if (g->softmax) {
                double m = -INFINITY, s = 0.0;
                for (int64_t k = 0; k < classes; k++) {
                    double v = load(x, base + k * d_count);
                    if (v > m || isnan(v)) m = v;
                }
                for (int64_t k = 0; k < classes; k++) s += exp(load(x, base + k * d_count) - m);
                shift = m + log(s);
                for (int64_t k = 0; log_prob != NULL && k < classes; k++)
                    store(log_prob, base + k * d_count, load(x, base + k * d_count) - shift);
            }
            int64_t t = target_at(tdt, target, item);
            double loss = 0.0, w = 0.0;
            if (!(g->has_ignore && t == g->ignore_index)) {
                if (t < 0 || t >= classes)
                    return tgc_kernel_fail(c, "%s: target %lld at item %lld of input 1 is out of range [0, %lld)%s",
                                           tgc_kernel_op_name(c), (long long)t, (long long)item, (long long)classes,
                                           g->has_ignore ? " and not ignore_index" : "");
                w = weight != NULL ? load(weight, t) : 1.0;
                loss = -(load(x, base + t * d_count) - shift) * w;
            }
            if (g->reduction == REDUCE_NONE) {
                store(out, item, loss);
            } else {
                sum += loss;
                weight_sum += w;
            }
        }
    }
    if (g->reduction == REDUCE_SUM) store(out, 0, sum);
    if (g->reduction == REDUCE_MEAN) store(out, 0, sum / weight_sum);
    return TGC_OK;
}

/* Per element type: its accessors and its copy of loss_run. */
#define LOSS_DEFINE(DT, SFX, T, TO_DOUBLE, FROM_DOUBLE)                                                      \
    static double load_##SFX(const void *p, int64_t i) { return TO_DOUBLE(((const T *)p)[i]); }             \
    static void store_##SFX(void *p, int64_t i, double v) { ((T *)p)[i] = FROM_DOUBLE(v); }                  \
    static tgc_status loss_##SFX(tgc_kernel_ctx *c, const loss_geometry *g) {                                \
        return loss_run(c, g, load_##SFX, store_##SFX);                                                      \
    }
LOSS_ELEMENT_TYPES(LOSS_DEFINE)
#undef LOSS_DEFINE

/* Checks, then runs the copy of loss_run for X's dtype. */
static tgc_status loss_kernel(tgc_kernel_ctx *c, bool softmax) {
    loss_geometry g;
    tgc_status st = loss_geometry_read(c, softmax, &g);
    if (st != TGC_OK) return st;
    switch (c->inputs[0].dtype) {
#define LOSS_CASE(DT, SFX, T, TO_DOUBLE, FROM_DOUBLE)                                                        \
    case DT: return loss_##SFX(c, &g);
        LOSS_ELEMENT_TYPES(LOSS_CASE)
#undef LOSS_CASE
    default: break;
    }
    return tgc_kernel_fail(c, "%s: input 0 is %s; the cpu kernel takes float32 or float16", tgc_kernel_op_name(c),
                           tgc_dtype_name(c->inputs[0].dtype));
}

/* NegativeLogLikelihoodLoss-13: X holds log-probabilities. */
static tgc_status nll_loss(tgc_kernel_ctx *c) { return loss_kernel(c, false); }

/* SoftmaxCrossEntropyLoss-13: X holds scores; log_softmax over axis 1 first. */
static tgc_status softmax_cross_entropy_loss(tgc_kernel_ctx *c) { return loss_kernel(c, true); }

#define LOSS_DTYPE(DT, SFX, T, TO_DOUBLE, FROM_DOUBLE) DT,

const tgc_kernel_def tgc_cpu_kernels_loss[] = {
    {.op = "NegativeLogLikelihoodLoss", .kind = TGC_DEVICE_CPU, .fn = nll_loss, .forward_input = -1,
     .dtypes = {LOSS_ELEMENT_TYPES(LOSS_DTYPE) TGC_DTYPE_INVALID}},
    {.op = "SoftmaxCrossEntropyLoss", .kind = TGC_DEVICE_CPU, .fn = softmax_cross_entropy_loss, .forward_input = -1,
     .dtypes = {LOSS_ELEMENT_TYPES(LOSS_DTYPE) TGC_DTYPE_INVALID}},
    {.op = NULL},
};
