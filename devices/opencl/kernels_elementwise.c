/* The OpenCL (gpu) elementwise kernels, ONNX opset 17 semantics as the cpu
 * kernels have them (devices/cpu/kernels_elementwise.c):
 *     every row of graph/elementwise.def, for the dtypes of its class except
 *                  uint8 (uint8 tensors stay on the cpu); Min and Max
 *                  variadic, Clip's bounds from host-memory inputs, integer
 *                  Div's divisor checked for zeros on the host
 *     Pow          also a float32 or float16 base with an int32 or int64
 *                  exponent
 *     Where        any dtype, moved by element size
 *     Cast         all pairs of float32 float16 int32 int64 uint8 bool
 *     Identity     any dtype
 * and tgc_gpu_kernels_elementwise[]. Device code: kernels/elementwise.cl,
 * which pastes in the rows.
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
 * before writing it). */
#include "devices/cpu/ew.h"
#include "devices/opencl/cl_kernel_util.h"
#include "devices/opencl/kernels_nn.h"
#include "devices/ew_args.h"
#include "graph/elementwise.h"
#include "support/alloc.h"
#include "support/half.h"

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

/* A row parameter in the kernel's computing type: float for float32 and
 * float16, the integer type otherwise. */
typedef union row_param {
    cl_float f;
    cl_int i;
    cl_long l;
    cl_uchar u;
} row_param;

/* The parameters P0..P2 of a row's kernel, appended to its arguments. */
typedef struct row_params {
    row_param p[TGC_EW_MAX_PARAMS];
    size_t size; /* of each, in the kernel's signature */
} row_params;

/* The three parameter arguments of ps (unused when ps is NULL). */
#define PARAM_ARG(ps, k) TGC_CL_BYTES((ps) ? (const void *)&(ps)->p[k] : NULL, (ps) ? (ps)->size : 0)
#define PARAM_ARGS(ps) PARAM_ARG(ps, 0), PARAM_ARG(ps, 1), PARAM_ARG(ps, 2)

/* y = kernel ew_<base>_{c,s,b}(a, b[, P0, P1, P2]) over the broadcast
 * output y; params NULL: a kernel without parameters. */
static tgc_status run_binary(tgc_kernel_ctx *c, const char *base, const tgc_value *a, const tgc_value *b,
                             const tgc_value *y, const row_params *params) {
    int64_t n = tgc_value_numel(y);
    if (n == 0) return TGC_OK;
    bcast bc;
    const tgc_value *ops[2] = {a, b};
    tgc_status st = bcast_init(c, &bc, y, 2, ops);
    if (st != TGC_OK) return st;
    char name[48];
    if (bc.rank == 1 && bc.strides[0][0] == 1 && bc.strides[1][0] == 1) {
        snprintf(name, sizeof name, "ew_%s_c", base);
        tgc_cl_arg args[] = {TGC_CL_BUF(a->buf), TGC_CL_BUF(b->buf), TGC_CL_BUF(y->buf), TGC_CL_LONG(n),
                             PARAM_ARGS(params)};
        return tgc_cl_run1d(c, name, n, params ? 7 : 4, args);
    }
    if (bc.rank == 1) {
        snprintf(name, sizeof name, "ew_%s_s", base);
        tgc_cl_arg args[] = {TGC_CL_BUF(a->buf), TGC_CL_LONG(bc.strides[0][0]), TGC_CL_BUF(b->buf),
                             TGC_CL_LONG(bc.strides[1][0]), TGC_CL_BUF(y->buf), TGC_CL_LONG(n), PARAM_ARGS(params)};
        return tgc_cl_run1d(c, name, n, params ? 9 : 6, args);
    }
    snprintf(name, sizeof name, "ew_%s_b", base);
    cl_long8 dims = long8_of(bc.dims, bc.rank, 1), sa = long8_of(bc.strides[0], bc.rank, 0),
             sb = long8_of(bc.strides[1], bc.rank, 0);
    tgc_cl_arg args[] = {TGC_CL_BUF(a->buf), TGC_CL_BUF(b->buf), TGC_CL_BUF(y->buf), TGC_CL_LONG(n),
                         TGC_CL_INT(bc.rank), TGC_CL_BYTES(&dims, sizeof dims), TGC_CL_BYTES(&sa, sizeof sa),
                         TGC_CL_BYTES(&sb, sizeof sb), PARAM_ARGS(params)};
    return tgc_cl_run1d(c, name, n, params ? 11 : 8, args);
}

/* ==== The rows of graph/elementwise.def ========================================== */

/* The dtypes the gpu runs a row in: its class, among float32, float16,
 * int32, int64 and bool (kernels/elementwise.cl is built for those; the
 * others fall back to the cpu by kernel availability). */
static bool gpu_has(const tgc_ew_row *r, tgc_dtype t) {
    bool built = t == TGC_FLOAT32 || t == TGC_FLOAT16 || t == TGC_INT32 || t == TGC_INT64 || t == TGC_BOOL;
    return built && (r->dtypes & (1u << t));
}

/* Integer Div refuses a zero divisor, as the cpu does: the divisor is read
 * back to the host (integer division is rare on a gpu: shape arithmetic
 * runs on the host). */
static tgc_status check_int_divisor(tgc_kernel_ctx *c, const tgc_value *b) {
    if (b->dtype != TGC_INT32 && b->dtype != TGC_INT64) return TGC_OK;
    size_t nbytes = tgc_value_nbytes(b);
    if (nbytes == 0) return TGC_OK;
    void *host = tgc_malloc(nbytes);
    if (host == NULL) return tgc_kernel_fail(c, "Div: out of host memory for a %zu-byte divisor check", nbytes);
    cl_int err = clEnqueueReadBuffer(tgc_cl_queue(c->device), b->buf->mem, CL_TRUE, 0, nbytes, host, 0, NULL, NULL);
    tgc_cl_count_wait(c->device);
    bool zero = false;
    for (int64_t i = 0, n = tgc_value_numel(b); err == CL_SUCCESS && i < n && !zero; i++)
        zero = b->dtype == TGC_INT32 ? ((const int32_t *)host)[i] == 0 : ((const int64_t *)host)[i] == 0;
    tgc_free(host);
    if (err != CL_SUCCESS) return tgc_kernel_fail(c, "Div: reading the divisor failed: %s", tgc_cl_error_name(err));
    return zero ? tgc_kernel_fail(c, "division by zero in Div (%s)", tgc_dtype_name(b->dtype)) : TGC_OK;
}

static tgc_status k_pow_int_exponent(tgc_kernel_ctx *c);

static row_param param_of(tgc_dtype t, float f, int64_t i);
static size_t param_size(tgc_dtype t);

/* A binary row: two inputs of one dtype, or Min/Max/Mean's one or more
 * (folded pairwise, y = op(x0, x1) then y = op(y, xk), each launch after
 * the last on the in-order queue; Min and Max are idempotent, so this
 * holds even when y is input 0's buffer; Mean is never given it, and its
 * last pass divides). The row's parameters P0..P2 go to every kernel. */
static tgc_status run_binary_row(tgc_kernel_ctx *c, const tgc_ew_row *r) {
    tgc_ew_op id = tgc_ew_id(r);
    bool variadic = id == TGC_EW_Min || id == TGC_EW_Max || id == TGC_EW_Mean;
    if (id == TGC_EW_Pow && c->n_inputs == 2 && c->inputs[1].dtype != c->inputs[0].dtype)
        return k_pow_int_exponent(c);
    tgc_status st = tgc_cl_check(c, variadic && c->n_inputs >= 1 ? c->n_inputs : 2, 1, 0);
    if (st != TGC_OK) return st;
    const tgc_value *a = &c->inputs[0], *y = &c->outputs[0];
    if ((st = tgc_ew_check_binary_dtypes(c, r)) != TGC_OK) return st;
    if (!gpu_has(r, a->dtype)) return no_kernel(c, a->dtype);
    if (c->n_inputs == 1) { /* Min, Max or Mean of one input */
        if ((st = tgc_kernel_need_like(c, y->dtype)) != TGC_OK) return st;
        return tgc_cl_copy(c, y->buf->mem, 0, a->buf->mem, 0, tgc_value_nbytes(y));
    }
    if (id == TGC_EW_Div && (st = check_int_divisor(c, &c->inputs[1])) != TGC_OK) return st;
    tgc_ew_params params;
    if ((st = tgc_ew_read_params(c, r, &params)) != TGC_OK) return st;
    row_params ps = {.size = param_size(a->dtype)};
    char base[48];
    snprintf(base, sizeof base, "%s_%s", r->op, dtype_suffix(a->dtype));
    for (int k = 1; k < c->n_inputs && st == TGC_OK; k++) {
        if (id == TGC_EW_Mean && k == c->n_inputs - 1) params.f[0] = (float)c->n_inputs;
        for (int j = 0; j < TGC_EW_MAX_PARAMS; j++) ps.p[j] = param_of(a->dtype, params.f[j], params.i[j]);
        st = run_binary(c, base, k == 1 ? a : y, &c->inputs[k], y, &ps);
    }
    return st;
}

/* A float32 base with an exponent of a dtype the gpu's pow kernels lack
 * (int8, int16, uint8..uint64, float16, bfloat16, float64): the exponent
 * converted on the host (Cast's rules) to int64 for an integer, float32 for
 * a float (float64 exponents round: float32's pow computes in float32
 * anyway), uploaded to a temporary buffer, then the int64 or float32 kernel. */
static tgc_status pow_exponent_through_host(tgc_kernel_ctx *c, const tgc_value *a, const tgc_value *b,
                                            const tgc_value *y) {
    bool is_float = b->dtype == TGC_FLOAT16 || b->dtype == TGC_BFLOAT16 || b->dtype == TGC_FLOAT64;
    tgc_dtype to = is_float ? TGC_FLOAT32 : TGC_INT64;
    int64_t n = tgc_value_numel(b);
    if (n <= 0 || tgc_value_numel(y) == 0) return TGC_OK;
    size_t nb = tgc_value_nbytes(b), nt = (size_t)n * tgc_dtype_size(to);
    void *hb = tgc_malloc(nb), *ht = tgc_malloc(nt);
    tgc_buffer *tb = NULL;
    tgc_status st = TGC_OK;
    if (hb == NULL || ht == NULL || tgc_buffer_alloc(c->device, nt, &tb) != TGC_OK) {
        st = tgc_kernel_fail(c, "Pow: out of memory converting a %s exponent", tgc_dtype_name(b->dtype));
    } else {
        cl_command_queue q = tgc_cl_queue(c->device);
        cl_int err = clEnqueueReadBuffer(q, b->buf->mem, CL_TRUE, 0, nb, hb, 0, NULL, NULL);
        tgc_cl_count_wait(c->device);
        if (err == CL_SUCCESS && tgc_cpu_cast_elements(b->dtype, hb, to, ht, n)) {
            st = tgc_cl_upload_owned(c, tb->mem, ht, nt); /* ht given up: no wait within a step */
            ht = NULL;
        }
        if (err != CL_SUCCESS) {
            st = tgc_kernel_fail(c, "Pow: converting the exponent failed: %s", tgc_cl_error_name(err));
        } else if (st == TGC_OK) {
            tgc_value bt = *b;
            bt.dtype = to;
            bt.buf = tb;
            st = is_float ? run_binary(c, "Pow_f32", a, &bt, y, NULL) : run_binary(c, "pow_f32_i64", a, &bt, y, NULL);
        }
    }
    tgc_buffer_release(tb);
    tgc_free(hb);
    tgc_free(ht);
    return st;
}

/* Pow-15: a float32 or float16 base with an int32 or int64 exponent (a
 * float32 base with any other exponent: pow_exponent_through_host). */
static tgc_status k_pow_int_exponent(tgc_kernel_ctx *c) {
    tgc_status st = tgc_cl_check(c, 2, 1, 0);
    if (st != TGC_OK) return st;
    const tgc_value *a = &c->inputs[0], *b = &c->inputs[1], *y = &c->outputs[0];
    if (y->dtype != a->dtype)
        return tgc_kernel_fail(c, "Pow: output is %s, expected the base's %s", tgc_dtype_name(y->dtype),
                               tgc_dtype_name(a->dtype));
    if (a->dtype == TGC_FLOAT32 && b->dtype != TGC_INT32 && b->dtype != TGC_INT64 && b->dtype != TGC_BOOL &&
        b->dtype >= 0 && b->dtype < TGC_DTYPE_COUNT)
        return pow_exponent_through_host(c, a, b, y);
    if ((a->dtype != TGC_FLOAT32 && a->dtype != TGC_FLOAT16) || !(b->dtype == TGC_INT32 || b->dtype == TGC_INT64))
        return tgc_kernel_fail(c, "Pow: the gpu has no kernel for a %s base with a %s exponent",
                               tgc_dtype_name(a->dtype), tgc_dtype_name(b->dtype));
    char base[32];
    snprintf(base, sizeof base, "pow_%s_%s", dtype_suffix(a->dtype), dtype_suffix(b->dtype));
    return run_binary(c, base, a, b, y, NULL);
}

static row_param param_of(tgc_dtype t, float f, int64_t i) {
    row_param p;
    memset(&p, 0, sizeof p);
    switch (t) {
    case TGC_FLOAT32:
    case TGC_FLOAT16: p.f = f; break;
    case TGC_INT32: p.i = (cl_int)i; break;
    case TGC_INT64: p.l = i; break;
    default: p.u = (cl_uchar)i; break;
    }
    return p;
}

/* Size of a parameter of dtype t in the kernel's signature. */
static size_t param_size(tgc_dtype t) { return t == TGC_FLOAT16 ? sizeof(cl_float) : tgc_dtype_size(t); }

/* y = ew_<Op>_<dtype>(x, P0, P1, P2): the row's float attributes from the
 * node (an integer attribute taken as a float too), or Clip's bounds. */
static tgc_status run_unary_row(tgc_kernel_ctx *c, const tgc_ew_row *r) {
    bool clip = tgc_ew_id(r) == TGC_EW_Clip;
    tgc_status st = tgc_cl_check(c, 1, 1, clip ? (1u << 1) | (1u << 2) : 0);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    if ((st = tgc_kernel_need_like(c, r->bool_out ? TGC_BOOL : x->dtype)) != TGC_OK) return st;
    if (!gpu_has(r, x->dtype)) return no_kernel(c, x->dtype);
    tgc_ew_params params;
    if ((st = tgc_ew_read_params(c, r, &params)) != TGC_OK) return st;
    row_param p[TGC_EW_MAX_PARAMS];
    for (int k = 0; k < TGC_EW_MAX_PARAMS; k++) p[k] = param_of(x->dtype, params.f[k], params.i[k]);
    char name[48];
    snprintf(name, sizeof name, "ew_%s_%s", r->op, dtype_suffix(x->dtype));
    size_t ps = param_size(x->dtype);
    tgc_cl_arg args[] = {TGC_CL_BUF(x->buf), TGC_CL_BUF(y->buf), TGC_CL_LONG(tgc_value_numel(y)),
                         TGC_CL_BYTES(&p[0], ps), TGC_CL_BYTES(&p[1], ps), TGC_CL_BYTES(&p[2], ps)};
    return tgc_cl_run1d(c, name, tgc_value_numel(y), 6, args);
}

tgc_status tgc_cl_ew_unary(tgc_kernel_ctx *c, const tgc_ew_row *r, const float params[TGC_EW_MAX_PARAMS], tgc_dtype t,
                           const tgc_buffer *x, const tgc_buffer *y, int64_t numel) {
    if (r->arity != 1 || r->bool_out || (t != TGC_FLOAT32 && t != TGC_FLOAT16) || !gpu_has(r, t))
        return no_kernel(c, t);
    row_param p[TGC_EW_MAX_PARAMS];
    for (int k = 0; k < TGC_EW_MAX_PARAMS; k++) p[k] = param_of(t, params[k], tgc_ew_param_int(params[k]));
    char name[48];
    snprintf(name, sizeof name, "ew_%s_%s", r->op, dtype_suffix(t));
    size_t ps = param_size(t);
    tgc_cl_arg args[] = {TGC_CL_BUF(x), TGC_CL_BUF(y), TGC_CL_LONG(numel),
                         TGC_CL_BYTES(&p[0], ps), TGC_CL_BYTES(&p[1], ps), TGC_CL_BYTES(&p[2], ps)};
    return tgc_cl_run1d(c, name, numel, 6, args);
}

/* Whether the gpu runs any dtype of a row class (EW_KEEP) or none
 * (EW_DROP: the row has no gpu kernel). */
#define GPU_ROWS_F EW_KEEP
#define GPU_ROWS_FS EW_KEEP
#define GPU_ROWS_FN EW_KEEP
#define GPU_ROWS_FNB EW_KEEP
#define GPU_ROWS_FW EW_KEEP
#define GPU_ROWS_B EW_KEEP
#define GPU_ROWS_U EW_DROP /* uint8 alone */

/* A kernel per row: k_ew_<Op>. */
#define EW_UNARY(op, cls, attrs, infer, fexpr, iexpr)                                            \
    static tgc_status k_ew_##op(tgc_kernel_ctx *c) { return run_unary_row(c, &tgc_ew_rows[TGC_EW_##op]); }
#define EW_BINARY(op, cls, out, infer, fexpr, iexpr)                                             \
    static tgc_status k_ew_##op(tgc_kernel_ctx *c) { return run_binary_row(c, &tgc_ew_rows[TGC_EW_##op]); }
#define EW_PREDICATE(op, cls, attrs, infer, fexpr, iexpr) EW_UNARY(op, cls, attrs, infer, fexpr, iexpr)
#define EW_BINARY_ATTRS(op, cls, out, attrs, infer, fexpr, iexpr)                                \
    GPU_ROWS_##cls(EW_BINARY(op, cls, out, infer, fexpr, iexpr))
#include "graph/elementwise.def"
#undef EW_UNARY
#undef EW_BINARY
#undef EW_PREDICATE
#undef EW_BINARY_ATTRS

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

/* ==== Cast and Identity ===================================================== */

/* Cast from or to a dtype kernels/elementwise.cl is not built for (float64,
 * bfloat16, int8, int16, uint16, uint32, uint64): x read back to the host,
 * converted by the cpu's rules (devices/cpu/ew.h), y written back. Rare
 * (model inputs and outputs), so a round trip is acceptable; it keeps Cast
 * placeable on the gpu whatever its `to`. */
static tgc_status cast_through_host(tgc_kernel_ctx *c, tgc_dtype dt) {
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    size_t nx = tgc_value_nbytes(x), ny = tgc_value_nbytes(y);
    int64_t n = tgc_value_numel(y);
    if (n <= 0) return TGC_OK;
    void *hx = tgc_malloc(nx), *hy = tgc_malloc(ny);
    if (hx == NULL || hy == NULL) {
        tgc_free(hx);
        tgc_free(hy);
        return tgc_kernel_fail(c, "Cast: out of host memory for a %zu-byte round trip", nx + ny);
    }
    cl_command_queue q = tgc_cl_queue(c->device);
    cl_int err = clEnqueueReadBuffer(q, x->buf->mem, CL_TRUE, 0, nx, hx, 0, NULL, NULL);
    tgc_cl_count_wait(c->device);
    bool ok = err == CL_SUCCESS && tgc_cpu_cast_elements(x->dtype, hx, dt, hy, n);
    tgc_free(hx);
    if (ok) return tgc_cl_upload_owned(c, y->buf->mem, hy, ny); /* hy given up: no wait within a step */
    tgc_free(hy);
    if (err != CL_SUCCESS) return tgc_kernel_fail(c, "Cast: host round trip failed: %s", tgc_cl_error_name(err));
    return no_kernel(c, x->dtype);
}

/* Cast-13 between tgc's dtypes (the rules in kernels/elementwise.cl; other
 * dtypes through the host). A cast to the same dtype is a copy. */
static tgc_status k_cast(tgc_kernel_ctx *c) {
    tgc_status st = tgc_cl_check(c, 1, 1, 0);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    int64_t to = tgc_kernel_attr_int(c, "to", -1);
    tgc_dtype dt = tgc_dtype_from_onnx(to);
    if (dt == TGC_DTYPE_INVALID) return tgc_kernel_fail(c, "Cast: 'to' is %lld, not a supported type", (long long)to);
    if ((st = tgc_kernel_need_like(c, dt)) != TGC_OK) return st;
    int64_t n = tgc_value_numel(y);
    if (dtype_suffix(x->dtype) == NULL || dtype_suffix(dt) == NULL) return cast_through_host(c, dt);
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
/* A row's class less uint8 (see gpu_has). */
#define GPU_CLASS_F DTYPES(TGC_FLOAT32, TGC_FLOAT16)
#define GPU_CLASS_FS DTYPES(TGC_FLOAT32, TGC_FLOAT16, TGC_INT32, TGC_INT64)
#define GPU_CLASS_FN GPU_CLASS_FS
#define GPU_CLASS_FNB DTYPES(TGC_FLOAT32, TGC_FLOAT16, TGC_INT32, TGC_INT64, TGC_BOOL)
#define GPU_CLASS_B DTYPES(TGC_BOOL)
#define GPU_CLASS_U {TGC_DTYPE_INVALID} /* uint8 alone: not on the gpu (unused, GPU_ROWS_U) */
#define GPU_CLASS_FW GPU_CLASS_FS
#define EW_ROW_KERNEL(name, cls)                                                                 \
    {.op = #name, .fn = k_ew_##name, .forward_input = 0,                 \
     .dtypes = GPU_CLASS_##cls,                                                                  \
     .host_inputs = TGC_EW_##name == TGC_EW_Clip ? (1u << 1) | (1u << 2) : 0},
#define EW(name, f, ...) {.op = name, .fn = f, .forward_input = 0, .dtypes = __VA_ARGS__}

const tgc_kernel_def tgc_gpu_kernels_elementwise[] = {
#define EW_UNARY(name, cls, attrs, infer, fexpr, iexpr) EW_ROW_KERNEL(name, cls)
#define EW_BINARY(name, cls, out, infer, fexpr, iexpr) EW_ROW_KERNEL(name, cls)
/* The rows whose class the gpu has no dtype of (GPU_ROWS_<class>) are
 * left out: an empty dtype list would claim every dtype. Mean is never
 * forwarded input 0's buffer (its later passes may read that tensor). */
#define EW_PREDICATE(name, cls, attrs, infer, fexpr, iexpr) GPU_ROWS_##cls(EW_ROW_KERNEL(name, cls))
#define EW_ATTRS_ROW_KERNEL(name, cls)                                                           \
    {.op = #name, .fn = k_ew_##name, .dtypes = GPU_CLASS_##cls,           \
     .forward_input = TGC_EW_##name == TGC_EW_Mean ? -1 : 0},
#define EW_BINARY_ATTRS(name, cls, out, attrs, infer, fexpr, iexpr) GPU_ROWS_##cls(EW_ATTRS_ROW_KERNEL(name, cls))
#include "graph/elementwise.def"
#undef EW_UNARY
#undef EW_BINARY
#undef EW_PREDICATE
#undef EW_BINARY_ATTRS
    EW("Where", k_where, DTYPES(TGC_BOOL)),
    EW("Cast", k_cast, DTYPES(TGC_DTYPE_INVALID)), /* any: the gpu's own dtypes, the rest through the host */
    EW("Identity", k_identity, {TGC_DTYPE_INVALID}),
    {.op = NULL},
};
