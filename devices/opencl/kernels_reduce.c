/* The OpenCL (gpu) reduction kernels, ONNX opset 17 semantics as the cpu
 * kernels have them (devices/cpu/kernels_reduce.c), every ReduceX with its
 * axes as the attribute (opset 13) or input 1 (host memory; opset 18),
 * keepdims, noop_with_empty_axes:
 *     ReduceSum        float32 int32 int64
 *     ReduceMax, ReduceMin   float32 int32 int64 uint8
 *     ReduceMean, ReduceProd, ReduceL1, ReduceL2, ReduceLogSum,
 *     ReduceLogSumExp, ReduceSumSquare   float32
 *     ArgMax-13, ArgMin-13   axis, keepdims, select_last_point_index; int64 output
 *     Softmax-13, LogSoftmax-13   along `axis` (default -1); float32
 *     Hardmax-13, LpNormalization-1   along `axis` (default -1); float32
 *     MeanVarianceNormalization-13   over `axes` (default [0, 2, 3]); float32
 * and tgc_gpu_kernels_reduce[]. Device code: kernels/reduce.cl, one
 * work-item per output element.
 *
 * For the ReduceX ops the host splits the input's axes into kept and
 * reduced ones, each list collapsed (axes of 1 dropped, neighbours that are
 * contiguous in the input merged) to at most 8 dims with the input's
 * strides. Each kernel recomputes the output shape from its input and
 * attributes and fails, never writes, when the executor's differs. */
#include "devices/opencl/cl_kernel_util.h"
#include "devices/reduce_axes.h"

#include <stdio.h>
#include <string.h>


static tgc_status no_kernel(tgc_kernel_ctx *c, tgc_dtype dtype) {
    return tgc_kernel_fail(c, "%s: the gpu has no kernel for %s", tgc_kernel_op_name(c), tgc_dtype_name(dtype));
}

/* Normalises axis `a` of a rank-`rank` tensor into [0, rank). */
static tgc_status norm_axis(tgc_kernel_ctx *c, int64_t a, int rank, int *out) {
    return tgc_reduce_norm_axis(c, tgc_kernel_op_name(c), "axis", a, rank, out);
}

static const char *dtype_suffix(tgc_dtype t) {
    switch (t) {
    case TGC_FLOAT32: return "f32";
    case TGC_INT32: return "i32";
    case TGC_INT64: return "i64";
    case TGC_UINT8: return "u8";
    default: return NULL;
    }
}

/* ==== ReduceSum, ReduceMean, ReduceMax ====================================== */

/* REDUCE_PROD .. REDUCE_SUM_SQUARE are red_more_f32's kinds 1 .. 6. */
typedef enum reduce_kind {
    REDUCE_SUM,
    REDUCE_MEAN,
    REDUCE_MAX,
    REDUCE_MIN,
    REDUCE_PROD,
    REDUCE_L1,
    REDUCE_L2,
    REDUCE_LOG_SUM,
    REDUCE_LOG_SUM_EXP,
    REDUCE_SUM_SQUARE,
} reduce_kind;

/* A list of axes as (dim, input stride) pairs, collapsed. */
typedef struct axes_list {
    int n;
    cl_long8 dims, strides;
} axes_list;

/* Appends axis (dim, stride), merging it into the last one when the two
 * are contiguous (last stride = stride * dim); axes of 1 are dropped. */
static void axes_push(axes_list *l, int64_t dim, int64_t stride) {
    if (dim == 1) return;
    if (l->n > 0 && l->strides.s[l->n - 1] == stride * dim) {
        l->dims.s[l->n - 1] *= dim;
        l->strides.s[l->n - 1] = stride;
        return;
    }
    l->dims.s[l->n] = dim;
    l->strides.s[l->n] = stride;
    l->n++;
}

/* Reduces input 0 over `axes` (n_axes of them; none: every axis, or none at
 * all when `noop`, which copies). */
static tgc_status reduce(tgc_kernel_ctx *c, reduce_kind kind, const int64_t *axes, int n_axes, bool noop) {
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    if (y->dtype != x->dtype)
        return tgc_kernel_fail(c, "%s: output is %s, the input %s", tgc_kernel_op_name(c), tgc_dtype_name(y->dtype),
                               tgc_dtype_name(x->dtype));
    bool ok = kind == REDUCE_MAX || kind == REDUCE_MIN ? dtype_suffix(x->dtype) != NULL
            : kind == REDUCE_SUM ? x->dtype == TGC_FLOAT32 || x->dtype == TGC_INT32 || x->dtype == TGC_INT64
                                 : x->dtype == TGC_FLOAT32;
    if (!ok) return no_kernel(c, x->dtype);
    int rank = x->rank;
    if (n_axes == 0 && noop) {
        tgc_status st = tgc_kernel_expect_dims(c, 0, rank, x->dims);
        if (st != TGC_OK) return st;
        return tgc_cl_copy(c, y->buf->mem, 0, x->buf->mem, 0, tgc_value_nbytes(x));
    }
    bool reduced[TGC_MAX_RANK];
    int64_t out[TGC_MAX_RANK], stride[TGC_MAX_RANK], s = 1;
    int out_rank;
    tgc_status st = tgc_reduce_axes_read(c, tgc_kernel_op_name(c), axes, (size_t)n_axes, rank, x->dims, reduced, out,
                                         &out_rank);
    if (st != TGC_OK) return st;
    for (int d = rank - 1; d >= 0; d--) {
        stride[d] = s;
        s *= x->dims[d];
    }
    axes_list kept = {0}, red = {0};
    for (int d = 0; d < rank; d++) axes_push(reduced[d] ? &red : &kept, x->dims[d], stride[d]);
    st = tgc_kernel_expect_dims(c, 0, out_rank, out);
    if (st != TGC_OK) return st;
    int64_t ny = tgc_value_numel(y), nr = 1;
    for (int d = 0; d < rank; d++)
        if (reduced[d]) nr *= x->dims[d];
    for (int i = kept.n; i < 8; i++) kept.dims.s[i] = 1; /* unused dims: 1, stride 0 (zeroed) */
    for (int i = red.n; i < 8; i++) red.dims.s[i] = 1;
    char name[32];
    const char *fold = kind == REDUCE_MAX ? "max" : kind == REDUCE_MIN ? "min" : kind >= REDUCE_PROD ? "more" : "sum";
    snprintf(name, sizeof name, "red_%s_%s", fold, dtype_suffix(x->dtype));
    tgc_cl_arg args[] = {TGC_CL_BUF(x->buf),
                         TGC_CL_BUF(y->buf),
                         TGC_CL_LONG(ny),
                         TGC_CL_LONG(nr),
                         TGC_CL_INT(kept.n),
                         TGC_CL_BYTES(&kept.dims, sizeof kept.dims),
                         TGC_CL_BYTES(&kept.strides, sizeof kept.strides),
                         TGC_CL_INT(red.n),
                         TGC_CL_BYTES(&red.dims, sizeof red.dims),
                         TGC_CL_BYTES(&red.strides, sizeof red.strides),
                         TGC_CL_INT(kind >= REDUCE_PROD ? (int)(kind - REDUCE_PROD + 1) : kind == REDUCE_MEAN)};
    /* Only red_sum_f32 (the mean flag) and red_more_f32 (the kind) take an 11th. */
    int n_args = strcmp(name, "red_sum_f32") == 0 || strcmp(name, "red_more_f32") == 0 ? 11 : 10;
    return tgc_cl_run1d(c, name, ny, n_args, args);
}

/* Every ReduceX: `axes` is the attribute (opset 13 form) or input 1 (host
 * memory; opset 18 form, ReduceSum since 13), never both; absent or empty
 * reduces every axis, unless noop_with_empty_axes makes it the identity. */
static tgc_status reduce_kernel(tgc_kernel_ctx *c, reduce_kind kind) {
    tgc_status st = tgc_cl_check(c, 1, 1, 1u << 1);
    if (st != TGC_OK) return st;
    size_t n_attr;
    const int64_t *attr = tgc_kernel_attr_ints(c, "axes", &n_attr);
    int64_t axes[TGC_MAX_RANK];
    int n = 0;
    if (tgc_kernel_has_input(c, 1)) {
        if (n_attr > 0)
            return tgc_kernel_fail(c, "%s: axes are given twice, as the attribute and as input 1",
                                   tgc_kernel_op_name(c));
        if ((st = tgc_kernel_read_ints(c, 1, "axes", axes, TGC_MAX_RANK, &n)) != TGC_OK) return st;
    } else {
        if (n_attr > TGC_MAX_RANK)
            return tgc_kernel_fail(c, "%s: %zu axes for a rank of at most %d", tgc_kernel_op_name(c), n_attr,
                                   TGC_MAX_RANK);
        for (size_t i = 0; i < n_attr; i++) axes[i] = attr[i];
        n = (int)n_attr;
    }
    return reduce(c, kind, axes, n, tgc_kernel_attr_int(c, "noop_with_empty_axes", 0) != 0);
}

static tgc_status k_reduce_sum(tgc_kernel_ctx *c) { return reduce_kernel(c, REDUCE_SUM); }
static tgc_status k_reduce_mean(tgc_kernel_ctx *c) { return reduce_kernel(c, REDUCE_MEAN); }
static tgc_status k_reduce_max(tgc_kernel_ctx *c) { return reduce_kernel(c, REDUCE_MAX); }
static tgc_status k_reduce_min(tgc_kernel_ctx *c) { return reduce_kernel(c, REDUCE_MIN); }
static tgc_status k_reduce_prod(tgc_kernel_ctx *c) { return reduce_kernel(c, REDUCE_PROD); }
static tgc_status k_reduce_l1(tgc_kernel_ctx *c) { return reduce_kernel(c, REDUCE_L1); }
static tgc_status k_reduce_l2(tgc_kernel_ctx *c) { return reduce_kernel(c, REDUCE_L2); }
static tgc_status k_reduce_log_sum(tgc_kernel_ctx *c) { return reduce_kernel(c, REDUCE_LOG_SUM); }
static tgc_status k_reduce_log_sum_exp(tgc_kernel_ctx *c) { return reduce_kernel(c, REDUCE_LOG_SUM_EXP); }
static tgc_status k_reduce_sum_square(tgc_kernel_ctx *c) { return reduce_kernel(c, REDUCE_SUM_SQUARE); }

/* ==== ArgMax, ArgMin ========================================================= */

static tgc_status arg_extreme(tgc_kernel_ctx *c, bool is_min) {
    tgc_status st = tgc_cl_check(c, 1, 1, 0);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    if (dtype_suffix(x->dtype) == NULL) return no_kernel(c, x->dtype);
    int axis;
    int64_t outer, n, inner;
    bool last;
    st = tgc_reduce_argmax_read(c, tgc_kernel_op_name(c), x->rank, x->dims, &axis, &outer, &n, &inner, &last);
    if (st != TGC_OK) return st;
    if (outer * inner == 0) return TGC_OK;
    char name[32];
    snprintf(name, sizeof name, "red_arg%s_%s", is_min ? "min" : "max", dtype_suffix(x->dtype));
    tgc_cl_arg args[] = {TGC_CL_BUF(x->buf),   TGC_CL_BUF(y->buf), TGC_CL_LONG(outer * inner),
                         TGC_CL_LONG(n),       TGC_CL_LONG(inner), TGC_CL_INT(last)};
    return tgc_cl_run1d(c, name, outer * inner, 6, args);
}

static tgc_status k_argmax(tgc_kernel_ctx *c) { return arg_extreme(c, false); }
static tgc_status k_argmin(tgc_kernel_ctx *c) { return arg_extreme(c, true); }

/* ==== Hardmax, LpNormalization, MeanVarianceNormalization =================== */

/* One work-item per (outer, inner) position of a float32 tensor, running
 * `kernel` down `axis` (attribute, default -1) with the int argument `arg`:
 * Hardmax and LpNormalization (red_along_axis_f32, arg p), Softmax and
 * LogSoftmax (red_softmax_f32, arg log). */
static tgc_status run_along_axis(tgc_kernel_ctx *c, const char *kernel, int arg) {
    tgc_status st = tgc_cl_check(c, 1, 1, 0);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    if (x->dtype != TGC_FLOAT32) return no_kernel(c, x->dtype);
    if (y->dtype != TGC_FLOAT32)
        return tgc_kernel_fail(c, "%s: output is %s, expected float32", tgc_kernel_op_name(c), tgc_dtype_name(y->dtype));
    if ((st = tgc_kernel_expect_dims(c, 0, x->rank, x->dims)) != TGC_OK) return st;
    int axis;
    if ((st = norm_axis(c, tgc_kernel_attr_int(c, "axis", -1), x->rank, &axis)) != TGC_OK) return st;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < x->rank; d++) {
        if (d < axis) outer *= x->dims[d];
        if (d > axis) inner *= x->dims[d];
    }
    if (tgc_value_numel(x) == 0) return TGC_OK;
    tgc_cl_arg args[] = {TGC_CL_BUF(x->buf),         TGC_CL_BUF(y->buf), TGC_CL_LONG(outer * inner),
                         TGC_CL_LONG(x->dims[axis]), TGC_CL_LONG(inner), TGC_CL_INT(arg)};
    return tgc_cl_run1d(c, kernel, outer * inner, 6, args);
}

/* Hardmax-13 (p 0) and LpNormalization-1 (p 1, 2) along `axis`. */
static tgc_status along_axis(tgc_kernel_ctx *c, int p) { return run_along_axis(c, "red_along_axis_f32", p); }

static tgc_status k_hardmax(tgc_kernel_ctx *c) { return along_axis(c, 0); }

static tgc_status k_lp_normalization(tgc_kernel_ctx *c) {
    int64_t p = tgc_kernel_attr_int(c, "p", 2);
    if (p != 1 && p != 2)
        return tgc_kernel_fail(c, "%s: p is %lld; it must be 1 or 2", tgc_kernel_op_name(c), (long long)p);
    return along_axis(c, (int)p);
}

/* MeanVarianceNormalization-13 over `axes` (default [0, 2, 3]; an empty
 * list reduces nothing: y = 0), one work-item per group. */
static tgc_status k_mvn(tgc_kernel_ctx *c) {
    tgc_status st = tgc_cl_check(c, 1, 1, 0);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    if (x->dtype != TGC_FLOAT32) return no_kernel(c, x->dtype);
    if (y->dtype != TGC_FLOAT32)
        return tgc_kernel_fail(c, "%s: output is %s, expected float32", tgc_kernel_op_name(c), tgc_dtype_name(y->dtype));
    if ((st = tgc_kernel_expect_dims(c, 0, x->rank, x->dims)) != TGC_OK) return st;
    static const int64_t dflt[] = {0, 2, 3};
    size_t n_axes;
    const int64_t *axes = tgc_kernel_attr_ints(c, "axes", &n_axes);
    if (tgc_node_attr(c->node, "axes") == NULL) {
        axes = dflt;
        n_axes = 3;
    }
    bool reduced[TGC_MAX_RANK] = {false};
    int64_t out[TGC_MAX_RANK], stride[TGC_MAX_RANK], s = 1;
    int out_rank;
    if (n_axes > 0 && (st = tgc_reduce_axes_read(c, tgc_kernel_op_name(c), axes, n_axes, x->rank, x->dims, reduced,
                                                 out, &out_rank)) != TGC_OK)
        return st;
    for (int d = x->rank - 1; d >= 0; d--) {
        stride[d] = s;
        s *= x->dims[d];
    }
    axes_list kept = {0}, red = {0};
    int64_t groups = 1, nr = 1;
    for (int d = 0; d < x->rank; d++) {
        axes_push(reduced[d] ? &red : &kept, x->dims[d], stride[d]);
        if (reduced[d]) nr *= x->dims[d];
        else groups *= x->dims[d];
    }
    if (tgc_value_numel(x) == 0) return TGC_OK;
    for (int i = kept.n; i < 8; i++) kept.dims.s[i] = 1;
    for (int i = red.n; i < 8; i++) red.dims.s[i] = 1;
    tgc_cl_arg args[] = {TGC_CL_BUF(x->buf),
                         TGC_CL_BUF(y->buf),
                         TGC_CL_LONG(groups),
                         TGC_CL_LONG(nr),
                         TGC_CL_INT(kept.n),
                         TGC_CL_BYTES(&kept.dims, sizeof kept.dims),
                         TGC_CL_BYTES(&kept.strides, sizeof kept.strides),
                         TGC_CL_INT(red.n),
                         TGC_CL_BYTES(&red.dims, sizeof red.dims),
                         TGC_CL_BYTES(&red.strides, sizeof red.strides)};
    return tgc_cl_run1d(c, "red_mvn_f32", groups, 10, args);
}

/* ==== Softmax, LogSoftmax =================================================== */

static tgc_status softmax(tgc_kernel_ctx *c, bool log_out) {
    return run_along_axis(c, "red_softmax_f32", log_out);
}

static tgc_status k_softmax(tgc_kernel_ctx *c) { return softmax(c, false); }
static tgc_status k_log_softmax(tgc_kernel_ctx *c) { return softmax(c, true); }

/* ==== The list ============================================================== */

#define DTYPES(...) {__VA_ARGS__, TGC_DTYPE_INVALID}
#define RED(name, f, host, fwd, ...) \
    {.op = name, .fn = f, .host_inputs = host, .forward_input = fwd, .dtypes = __VA_ARGS__}

const tgc_kernel_def tgc_gpu_kernels_reduce[] = {
    RED("ReduceSum", k_reduce_sum, 1u << 1, -1, DTYPES(TGC_FLOAT32, TGC_INT32, TGC_INT64)),
    RED("ReduceMean", k_reduce_mean, 1u << 1, -1, DTYPES(TGC_FLOAT32)),
    RED("ReduceMax", k_reduce_max, 1u << 1, -1, DTYPES(TGC_FLOAT32, TGC_INT32, TGC_INT64, TGC_UINT8)),
    RED("ReduceMin", k_reduce_min, 1u << 1, -1, DTYPES(TGC_FLOAT32, TGC_INT32, TGC_INT64, TGC_UINT8)),
    RED("ReduceProd", k_reduce_prod, 1u << 1, -1, DTYPES(TGC_FLOAT32)),
    RED("ReduceL1", k_reduce_l1, 1u << 1, -1, DTYPES(TGC_FLOAT32)),
    RED("ReduceL2", k_reduce_l2, 1u << 1, -1, DTYPES(TGC_FLOAT32)),
    RED("ReduceLogSum", k_reduce_log_sum, 1u << 1, -1, DTYPES(TGC_FLOAT32)),
    RED("ReduceLogSumExp", k_reduce_log_sum_exp, 1u << 1, -1, DTYPES(TGC_FLOAT32)),
    RED("ReduceSumSquare", k_reduce_sum_square, 1u << 1, -1, DTYPES(TGC_FLOAT32)),
    RED("ArgMax", k_argmax, 0, -1, DTYPES(TGC_FLOAT32, TGC_INT32, TGC_INT64, TGC_UINT8)),
    RED("ArgMin", k_argmin, 0, -1, DTYPES(TGC_FLOAT32, TGC_INT32, TGC_INT64, TGC_UINT8)),
    RED("Hardmax", k_hardmax, 0, -1, DTYPES(TGC_FLOAT32)),
    RED("LpNormalization", k_lp_normalization, 0, -1, DTYPES(TGC_FLOAT32)),
    RED("MeanVarianceNormalization", k_mvn, 0, -1, DTYPES(TGC_FLOAT32)),
    RED("Softmax", k_softmax, 0, 0, DTYPES(TGC_FLOAT32)),
    RED("LogSoftmax", k_log_softmax, 0, 0, DTYPES(TGC_FLOAT32)),
    {.op = NULL},
};
