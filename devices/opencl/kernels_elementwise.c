/* The OpenCL (gpu) elementwise kernels, ONNX opset 17 semantics as the cpu
 * kernels have them (devices/cpu/kernels_elementwise.c):
 *     arithmetic   Add Sub Mul (float32 int32 int64), Div (float32),
 *                  Pow (float32 base; float32, int32 or int64 exponent)
 *     unary        Neg Abs Relu (float32 int32 int64), LeakyRelu Sigmoid
 *                  Tanh Exp Log Sqrt Erf (float32)
 *     selection    Min Max (variadic), Clip (float32 int32 int64), Where
 *                  (any dtype)
 *     comparison   Equal (float32 int32 int64 bool), Less Greater (float32
 *                  int32 int64): bool output
 *     conversion   Cast (all pairs of float32 float16 int32 int64 uint8
 *                  bool), Identity (any dtype)
 * and tgc_gpu_kernels_elementwise[]. Device code: kernels/elementwise.cl.
 *
 * Broadcasting is numpy's: the host collapses the output's axes as the cpu
 * iterator does (axes of 1 dropped, adjacent axes merged where every
 * operand is contiguous or broadcast across both), then picks a kernel:
 * equal shapes become one contiguous row (_c), a scalar operand one row
 * with step 0 (_s), anything else the general kernel with per-operand
 * strides over at most 8 collapsed dims (_b).
 *
 * Every kernel here declares forward_input = 0: output 0 may be input 0's
 * buffer, which the device code allows (each work-item reads element i
 * before writing it). Clip's bounds are host-memory scalars read here and
 * passed by value. Integer Div (it needs a division-by-zero check) and
 * uint8 arithmetic stay on the cpu. */
#include "devices/opencl/cl_kernel_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Kernel-name suffix of a dtype ("f32"); NULL for none. */
static const char *dtype_suffix(tgc_dtype t) {
    switch (t) {
    case TGC_FLOAT32: return "f32";
    case TGC_FLOAT16: return "f16";
    case TGC_INT32: return "i32";
    case TGC_INT64: return "i64";
    case TGC_UINT8: return "u8";
    case TGC_BOOL: return "b8";
    default: return NULL;
    }
}

static tgc_status no_kernel(tgc_kernel_ctx *c, tgc_dtype t) {
    return tgc_kernel_fail(c, "%s: the gpu has no kernel for %s", tgc_kernel_op_name(c), tgc_dtype_name(t));
}

/* ==== Broadcasting ========================================================== */

#define MAX_OPERANDS 3

/* The output's collapsed dims and each operand's strides over them (in
 * elements, 0 where broadcast). */
typedef struct bcast {
    int rank; /* >= 1 */
    int64_t dims[TGC_MAX_RANK];
    int64_t strides[MAX_OPERANDS][TGC_MAX_RANK];
} bcast;

/* Collapses y's shape for operands ops[0..n), as the cpu iterator does.
 * Fails through tgc_kernel_fail when an operand does not broadcast. */
static tgc_status bcast_init(tgc_kernel_ctx *c, bcast *b, const tgc_value *y, int n, const tgc_value *const *ops) {
    memset(b, 0, sizeof *b);
    int64_t st[MAX_OPERANDS][TGC_MAX_RANK];
    for (int k = 0; k < n; k++) {
        const tgc_value *v = ops[k];
        bool fits = v->rank <= y->rank;
        int64_t s = 1;
        for (int d = y->rank - 1; fits && d >= 0; d--) {
            int di = d - (y->rank - v->rank);
            int64_t in = di >= 0 ? v->dims[di] : 1;
            fits = in == y->dims[d] || in == 1;
            st[k][d] = in == 1 ? 0 : s;
            s *= in;
        }
        if (!fits) {
            char a[TGC_KERNEL_DIMS_BUF], o[TGC_KERNEL_DIMS_BUF];
            return tgc_kernel_fail(c, "%s: operand %d of shape %s does not broadcast to the output shape %s",
                                   tgc_kernel_op_name(c), k, tgc_kernel_dims_str(v->rank, v->dims, a),
                                   tgc_kernel_dims_str(y->rank, y->dims, o));
        }
    }
    int r = 0;
    for (int d = 0; d < y->rank; d++) {
        if (y->dims[d] == 1) continue;
        bool merge = r > 0;
        for (int k = 0; merge && k < n; k++) {
            int64_t g = b->strides[k][r - 1];
            merge = (g == 0 && st[k][d] == 0) || (g != 0 && st[k][d] != 0 && g == st[k][d] * y->dims[d]);
        }
        if (merge) {
            b->dims[r - 1] *= y->dims[d];
            for (int k = 0; k < n; k++) b->strides[k][r - 1] = st[k][d];
        } else {
            b->dims[r] = y->dims[d];
            for (int k = 0; k < n; k++) b->strides[k][r] = st[k][d];
            r++;
        }
    }
    if (r == 0) b->dims[r++] = 1; /* a scalar, or every dim 1 */
    b->rank = r;
    return TGC_OK;
}

/* dims or strides[k] as a long8 kernel argument (dims padded with 1). */
static cl_long8 long8_of(const int64_t *v, int rank, int64_t pad) {
    cl_long8 l;
    for (int i = 0; i < 8; i++) l.s[i] = i < rank ? v[i] : pad;
    return l;
}

/* y = kernel ew_<base>_{c,s,b}(a, b) over the broadcast output y. */
static tgc_status run_binary(tgc_kernel_ctx *c, const char *base, const tgc_value *a, const tgc_value *b,
                             const tgc_value *y) {
    int64_t n = tgc_value_numel(y);
    if (n == 0) return TGC_OK;
    bcast bc;
    const tgc_value *ops[2] = {a, b};
    tgc_status st = bcast_init(c, &bc, y, 2, ops);
    if (st != TGC_OK) return st;
    char name[48];
    if (bc.rank == 1 && bc.strides[0][0] == 1 && bc.strides[1][0] == 1) {
        snprintf(name, sizeof name, "ew_%s_c", base);
        tgc_cl_arg args[] = {TGC_CL_BUF(a->buf), TGC_CL_BUF(b->buf), TGC_CL_BUF(y->buf), TGC_CL_LONG(n)};
        return tgc_cl_run1d(c, name, n, 4, args);
    }
    if (bc.rank == 1) {
        snprintf(name, sizeof name, "ew_%s_s", base);
        tgc_cl_arg args[] = {TGC_CL_BUF(a->buf), TGC_CL_LONG(bc.strides[0][0]), TGC_CL_BUF(b->buf),
                             TGC_CL_LONG(bc.strides[1][0]), TGC_CL_BUF(y->buf), TGC_CL_LONG(n)};
        return tgc_cl_run1d(c, name, n, 6, args);
    }
    snprintf(name, sizeof name, "ew_%s_b", base);
    cl_long8 dims = long8_of(bc.dims, bc.rank, 1), sa = long8_of(bc.strides[0], bc.rank, 0),
             sb = long8_of(bc.strides[1], bc.rank, 0);
    tgc_cl_arg args[] = {TGC_CL_BUF(a->buf), TGC_CL_BUF(b->buf), TGC_CL_BUF(y->buf), TGC_CL_LONG(n),
                         TGC_CL_INT(bc.rank), TGC_CL_BYTES(&dims, sizeof dims), TGC_CL_BYTES(&sa, sizeof sa),
                         TGC_CL_BYTES(&sb, sizeof sb)};
    return tgc_cl_run1d(c, name, n, 8, args);
}

/* ==== Binary ops ============================================================ */

/* Bit i set: dtype i has a kernel. */
#define DT(t) (1u << (t))
#define DT_ARITH (DT(TGC_FLOAT32) | DT(TGC_INT32) | DT(TGC_INT64))

/* A two-input op over one dtype in `dtypes`; the output has `out_dtype`
 * (TGC_DTYPE_INVALID: the inputs'). */
static tgc_status binary(tgc_kernel_ctx *c, const char *op, uint32_t dtypes, tgc_dtype out_dtype) {
    tgc_status st = tgc_cl_check(c, 2, 1, 0);
    if (st != TGC_OK) return st;
    const tgc_value *a = &c->inputs[0], *b = &c->inputs[1], *y = &c->outputs[0];
    tgc_dtype want = out_dtype == TGC_DTYPE_INVALID ? a->dtype : out_dtype;
    if (b->dtype != a->dtype || y->dtype != want)
        return tgc_kernel_fail(c, "%s: dtypes %s, %s -> %s; expected two %s inputs and a %s output", tgc_kernel_op_name(c),
                               tgc_dtype_name(a->dtype), tgc_dtype_name(b->dtype), tgc_dtype_name(y->dtype),
                               tgc_dtype_name(a->dtype), tgc_dtype_name(want));
    if (a->dtype < 0 || a->dtype >= TGC_DTYPE_COUNT || !(dtypes & DT(a->dtype))) return no_kernel(c, a->dtype);
    char base[32];
    snprintf(base, sizeof base, "%s_%s", op, dtype_suffix(a->dtype));
    return run_binary(c, base, a, b, y);
}

static tgc_status k_add(tgc_kernel_ctx *c) { return binary(c, "add", DT_ARITH, TGC_DTYPE_INVALID); }
static tgc_status k_sub(tgc_kernel_ctx *c) { return binary(c, "sub", DT_ARITH, TGC_DTYPE_INVALID); }
static tgc_status k_mul(tgc_kernel_ctx *c) { return binary(c, "mul", DT_ARITH, TGC_DTYPE_INVALID); }
static tgc_status k_div(tgc_kernel_ctx *c) { return binary(c, "div", DT(TGC_FLOAT32), TGC_DTYPE_INVALID); }
static tgc_status k_equal(tgc_kernel_ctx *c) { return binary(c, "eq", DT_ARITH | DT(TGC_BOOL), TGC_BOOL); }
static tgc_status k_less(tgc_kernel_ctx *c) { return binary(c, "lt", DT_ARITH, TGC_BOOL); }
static tgc_status k_greater(tgc_kernel_ctx *c) { return binary(c, "gt", DT_ARITH, TGC_BOOL); }

/* Pow-15: a float32 base; the exponent float32, int32 or int64. */
static tgc_status k_pow(tgc_kernel_ctx *c) {
    tgc_status st = tgc_cl_check(c, 2, 1, 0);
    if (st != TGC_OK) return st;
    const tgc_value *a = &c->inputs[0], *b = &c->inputs[1], *y = &c->outputs[0];
    if (y->dtype != a->dtype)
        return tgc_kernel_fail(c, "Pow: output is %s, expected the base's %s", tgc_dtype_name(y->dtype),
                               tgc_dtype_name(a->dtype));
    if (a->dtype != TGC_FLOAT32 || !(b->dtype == TGC_FLOAT32 || b->dtype == TGC_INT32 || b->dtype == TGC_INT64))
        return tgc_kernel_fail(c, "Pow: the gpu has no kernel for a %s base with a %s exponent",
                               tgc_dtype_name(a->dtype), tgc_dtype_name(b->dtype));
    char base[32];
    snprintf(base, sizeof base, "pow_f32_%s", dtype_suffix(b->dtype));
    return run_binary(c, base, a, b, y);
}

/* Min-13, Max-13: any number of inputs of one dtype: y = op(x0, x1), then
 * y = op(y, xk), each launch after the last on the in-order queue. Min and
 * Max are idempotent, so this holds even when y is input 0's buffer. */
static tgc_status variadic(tgc_kernel_ctx *c, const char *op) {
    tgc_status st = tgc_cl_check(c, c->n_inputs > 1 ? c->n_inputs : 1, 1, 0);
    if (st != TGC_OK) return st;
    tgc_value *y = &c->outputs[0];
    for (int k = 0; k < c->n_inputs; k++)
        if (c->inputs[k].dtype != y->dtype)
            return tgc_kernel_fail(c, "%s: input %d is %s, the output %s", tgc_kernel_op_name(c), k,
                                   tgc_dtype_name(c->inputs[k].dtype), tgc_dtype_name(y->dtype));
    if (y->dtype < 0 || y->dtype >= TGC_DTYPE_COUNT || !(DT_ARITH & DT(y->dtype))) return no_kernel(c, y->dtype);
    if (c->n_inputs == 1) {
        if ((st = tgc_kernel_need_like(c, y->dtype)) != TGC_OK) return st;
        return tgc_cl_copy(c, y->buf->mem, 0, c->inputs[0].buf->mem, 0, tgc_value_nbytes(y));
    }
    char base[32];
    snprintf(base, sizeof base, "%s_%s", op, dtype_suffix(y->dtype));
    st = run_binary(c, base, &c->inputs[0], &c->inputs[1], y);
    for (int k = 2; k < c->n_inputs && st == TGC_OK; k++) st = run_binary(c, base, y, &c->inputs[k], y);
    return st;
}

static tgc_status k_min(tgc_kernel_ctx *c) { return variadic(c, "min"); }
static tgc_status k_max(tgc_kernel_ctx *c) { return variadic(c, "max"); }

/* ==== Where ================================================================= */

/* Where-16: bool condition, X and Y of one (any) dtype, all three broadcast;
 * elements move by size. */
static tgc_status k_where(tgc_kernel_ctx *c) {
    tgc_status st = tgc_cl_check(c, 3, 1, 0);
    if (st != TGC_OK) return st;
    const tgc_value *cv = &c->inputs[0], *x = &c->inputs[1], *z = &c->inputs[2], *y = &c->outputs[0];
    if (cv->dtype != TGC_BOOL || x->dtype != z->dtype || y->dtype != x->dtype)
        return tgc_kernel_fail(c, "Where: dtypes %s, %s, %s -> %s; expected bool, T, T -> T", tgc_dtype_name(cv->dtype),
                               tgc_dtype_name(x->dtype), tgc_dtype_name(z->dtype), tgc_dtype_name(y->dtype));
    int64_t n = tgc_value_numel(y);
    if (n == 0) return TGC_OK;
    bcast bc;
    const tgc_value *ops[3] = {cv, x, z};
    if ((st = bcast_init(c, &bc, y, 3, ops)) != TGC_OK) return st;
    static const char *const sizes[9] = {NULL, "u8", "u16", NULL, "u32", NULL, NULL, NULL, "u64"};
    size_t esize = tgc_dtype_size(y->dtype);
    if (esize > 8 || sizes[esize] == NULL) return no_kernel(c, y->dtype);
    char name[32];
    bool flat = bc.rank == 1 && bc.strides[0][0] == 1 && bc.strides[1][0] == 1 && bc.strides[2][0] == 1;
    snprintf(name, sizeof name, "ew_where_%s_%s", sizes[esize], flat ? "c" : "b");
    if (flat) {
        tgc_cl_arg args[] = {TGC_CL_BUF(cv->buf), TGC_CL_BUF(x->buf), TGC_CL_BUF(z->buf), TGC_CL_BUF(y->buf),
                             TGC_CL_LONG(n)};
        return tgc_cl_run1d(c, name, n, 5, args);
    }
    cl_long8 dims = long8_of(bc.dims, bc.rank, 1), sc = long8_of(bc.strides[0], bc.rank, 0),
             sx = long8_of(bc.strides[1], bc.rank, 0), sz = long8_of(bc.strides[2], bc.rank, 0);
    tgc_cl_arg args[] = {TGC_CL_BUF(cv->buf),         TGC_CL_BUF(x->buf),           TGC_CL_BUF(z->buf),
                         TGC_CL_BUF(y->buf),          TGC_CL_LONG(n),               TGC_CL_INT(bc.rank),
                         TGC_CL_BYTES(&dims, sizeof dims), TGC_CL_BYTES(&sc, sizeof sc), TGC_CL_BYTES(&sx, sizeof sx),
                         TGC_CL_BYTES(&sz, sizeof sz)};
    return tgc_cl_run1d(c, name, n, 10, args);
}

/* ==== Unary ops ============================================================= */

/* y = ew_<op>_<dtype>(x, p) for a dtype in `dtypes` (p: LeakyRelu's alpha). */
static tgc_status unary(tgc_kernel_ctx *c, const char *op, uint32_t dtypes, float p) {
    tgc_status st = tgc_cl_check(c, 1, 1, 0);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    if ((st = tgc_kernel_need_like(c, x->dtype)) != TGC_OK) return st;
    if (x->dtype < 0 || x->dtype >= TGC_DTYPE_COUNT || !(dtypes & DT(x->dtype))) return no_kernel(c, x->dtype);
    char name[32];
    snprintf(name, sizeof name, "ew_%s_%s", op, dtype_suffix(x->dtype));
    int64_t n = tgc_value_numel(y);
    tgc_cl_arg args[] = {TGC_CL_BUF(x->buf), TGC_CL_BUF(y->buf), TGC_CL_LONG(n), TGC_CL_FLOAT(p)};
    return tgc_cl_run1d(c, name, n, 4, args);
}

/* A float attribute, also accepted when written as an integer. */
static float attr_float(const tgc_kernel_ctx *c, const char *name, float dflt) {
    const tgc_attr *a = tgc_node_attr(c->node, name);
    if (a != NULL && a->type == TGC_ATTR_INT) return (float)a->i;
    return (float)tgc_kernel_attr_float(c, name, dflt);
}

#define F32 DT(TGC_FLOAT32)
static tgc_status k_neg(tgc_kernel_ctx *c) { return unary(c, "neg", DT_ARITH, 0); }
static tgc_status k_abs(tgc_kernel_ctx *c) { return unary(c, "abs", DT_ARITH, 0); }
static tgc_status k_relu(tgc_kernel_ctx *c) { return unary(c, "relu", DT_ARITH, 0); }
static tgc_status k_leaky_relu(tgc_kernel_ctx *c) { return unary(c, "leakyrelu", F32, attr_float(c, "alpha", 0.01f)); }
static tgc_status k_sigmoid(tgc_kernel_ctx *c) { return unary(c, "sigmoid", F32, 0); }
static tgc_status k_tanh(tgc_kernel_ctx *c) { return unary(c, "tanh", F32, 0); }
static tgc_status k_exp(tgc_kernel_ctx *c) { return unary(c, "exp", F32, 0); }
static tgc_status k_log(tgc_kernel_ctx *c) { return unary(c, "log", F32, 0); }
static tgc_status k_sqrt(tgc_kernel_ctx *c) { return unary(c, "sqrt", F32, 0); }
static tgc_status k_erf(tgc_kernel_ctx *c) { return unary(c, "erf", F32, 0); }

/* ==== Clip ================================================================== */

/* Clip-13: y = min(max(x, lo), hi); lo and hi are optional one-element
 * host-memory inputs (default: the type's lowest and highest). */
static tgc_status k_clip(tgc_kernel_ctx *c) {
    tgc_status st = tgc_cl_check(c, 1, 1, (1u << 1) | (1u << 2));
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    if ((st = tgc_kernel_need_like(c, x->dtype)) != TGC_OK) return st;
    if (x->dtype < 0 || x->dtype >= TGC_DTYPE_COUNT || !(DT_ARITH & DT(x->dtype))) return no_kernel(c, x->dtype);
    const void *bound[2] = {NULL, NULL};
    for (int i = 1; i <= 2; i++) {
        if (!tgc_kernel_has_input(c, i)) continue;
        const tgc_value *b = &c->inputs[i];
        if (b->dtype != x->dtype || tgc_value_numel(b) != 1)
            return tgc_kernel_fail(c, "Clip: input %d ('%s') must be one %s element; it is %s with %lld", i,
                                   i == 1 ? "min" : "max", tgc_dtype_name(x->dtype), tgc_dtype_name(b->dtype),
                                   (long long)tgc_value_numel(b));
        bound[i - 1] = tgc_kernel_in_ptr(c, i);
    }
    int64_t n = tgc_value_numel(y);
    char name[32];
    snprintf(name, sizeof name, "ew_clip_%s", dtype_suffix(x->dtype));
    /* The bounds as the kernel's T, in their own storage for the args. */
    union {
        cl_float f;
        cl_int i;
        cl_long l;
    } lo, hi;
    size_t esize = tgc_dtype_size(x->dtype);
    switch (x->dtype) {
    case TGC_FLOAT32:
        lo.f = -INFINITY;
        hi.f = INFINITY;
        break;
    case TGC_INT32:
        lo.i = INT32_MIN;
        hi.i = INT32_MAX;
        break;
    default:
        lo.l = INT64_MIN;
        hi.l = INT64_MAX;
        break;
    }
    if (bound[0] != NULL) memcpy(&lo, bound[0], esize);
    if (bound[1] != NULL) memcpy(&hi, bound[1], esize);
    tgc_cl_arg args[] = {TGC_CL_BUF(x->buf), TGC_CL_BUF(y->buf), TGC_CL_LONG(n), TGC_CL_BYTES(&lo, esize),
                         TGC_CL_BYTES(&hi, esize)};
    return tgc_cl_run1d(c, name, n, 5, args);
}

/* ==== Cast and Identity ===================================================== */

/* Cast-13 between tgc's dtypes (the rules in kernels/elementwise.cl). A
 * cast to the same dtype is a copy. */
static tgc_status k_cast(tgc_kernel_ctx *c) {
    tgc_status st = tgc_cl_check(c, 1, 1, 0);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    int64_t to = tgc_kernel_attr_int(c, "to", -1);
    tgc_dtype dt = tgc_dtype_from_onnx(to);
    if (dt == TGC_DTYPE_INVALID) return tgc_kernel_fail(c, "Cast: 'to' is %lld, not a supported type", (long long)to);
    if ((st = tgc_kernel_need_like(c, dt)) != TGC_OK) return st;
    if (dtype_suffix(x->dtype) == NULL) return no_kernel(c, x->dtype);
    int64_t n = tgc_value_numel(y);
    if (x->dtype == dt) return tgc_cl_copy(c, y->buf->mem, 0, x->buf->mem, 0, tgc_value_nbytes(y));
    char name[32];
    snprintf(name, sizeof name, "ew_cast_%s_%s", dtype_suffix(x->dtype), dtype_suffix(dt));
    tgc_cl_arg args[] = {TGC_CL_BUF(x->buf), TGC_CL_BUF(y->buf), TGC_CL_LONG(n)};
    return tgc_cl_run1d(c, name, n, 3, args);
}

/* Identity-16: any dtype; nothing to do when the buffer was forwarded. */
static tgc_status k_identity(tgc_kernel_ctx *c) {
    tgc_status st = tgc_cl_check(c, 1, 1, 0);
    if (st != TGC_OK) return st;
    if ((st = tgc_kernel_need_like(c, c->inputs[0].dtype)) != TGC_OK) return st;
    return tgc_cl_copy(c, c->outputs[0].buf->mem, 0, c->inputs[0].buf->mem, 0, tgc_value_nbytes(&c->inputs[0]));
}

/* ==== The list ============================================================== */

#define DTYPES(...) {__VA_ARGS__, TGC_DTYPE_INVALID}
#define DTS_ARITH DTYPES(TGC_FLOAT32, TGC_INT32, TGC_INT64)
#define DTS_F32 DTYPES(TGC_FLOAT32)
#define EW(name, f, ...) {.op = name, .kind = TGC_DEVICE_GPU, .fn = f, .forward_input = 0, .dtypes = __VA_ARGS__}

const tgc_kernel_def tgc_gpu_kernels_elementwise[] = {
    EW("Add", k_add, DTS_ARITH),
    EW("Sub", k_sub, DTS_ARITH),
    EW("Mul", k_mul, DTS_ARITH),
    EW("Div", k_div, DTS_F32),
    EW("Pow", k_pow, DTS_F32),
    EW("Neg", k_neg, DTS_ARITH),
    EW("Abs", k_abs, DTS_ARITH),
    EW("Relu", k_relu, DTS_ARITH),
    EW("LeakyRelu", k_leaky_relu, DTS_F32),
    EW("Sigmoid", k_sigmoid, DTS_F32),
    EW("Tanh", k_tanh, DTS_F32),
    EW("Exp", k_exp, DTS_F32),
    EW("Log", k_log, DTS_F32),
    EW("Sqrt", k_sqrt, DTS_F32),
    EW("Erf", k_erf, DTS_F32),
    EW("Min", k_min, DTS_ARITH),
    EW("Max", k_max, DTS_ARITH),
    {.op = "Clip", .kind = TGC_DEVICE_GPU, .fn = k_clip, .host_inputs = (1u << 1) | (1u << 2), .forward_input = 0,
     .dtypes = DTS_ARITH},
    EW("Where", k_where, DTYPES(TGC_BOOL)),
    EW("Equal", k_equal, DTYPES(TGC_FLOAT32, TGC_INT32, TGC_INT64, TGC_BOOL)),
    EW("Less", k_less, DTS_ARITH),
    EW("Greater", k_greater, DTS_ARITH),
    EW("Cast", k_cast, DTYPES(TGC_FLOAT32, TGC_FLOAT16, TGC_INT32, TGC_INT64, TGC_UINT8, TGC_BOOL)),
    EW("Identity", k_identity, {TGC_DTYPE_INVALID}),
    {.op = NULL},
};
