/* cpu kernels of BitwiseAnd, BitwiseOr, BitwiseXor and BitwiseNot (ONNX
 * opset 18) for every integer dtype. The bits do not depend on the
 * signedness, so one row function per element size serves both (two's
 * complement, as ONNX's reference computes with numpy's bitwise ops).
 * The binary ops broadcast numpy-style through devices/cpu/broadcast.h;
 * a row reads a[i * step] before writing y[i], so an output forwarded
 * over an input is safe. */
#include "devices/cpu/broadcast.h"
#include "devices/kernel.h"
#include "devices/kernel_checks.h"
#include "support/dtype_elem.h"

#include <stdint.h>

typedef void (*bits2_fn)(int64_t n, const void *a, int64_t sa, const void *b, int64_t sb, void *y);

#define DEF_BITS2(name, T, OP)                                                                   \
    static void name(int64_t n, const void *pa, int64_t sa, const void *pb, int64_t sb, void *py) { \
        const T *a = pa, *b = pb;                                                                \
        T *y = py;                                                                               \
        for (int64_t i = 0; i < n; i++)                                                          \
            y[i] = (T)(a[i * sa] OP b[i * sb]);                                                  \
    }
#define DEF_BITS2_SIZES(op, OP)                                                                  \
    DEF_BITS2(op##8, uint8_t, OP)                                                                \
    DEF_BITS2(op##16, uint16_t, OP)                                                              \
    DEF_BITS2(op##32, uint32_t, OP)                                                              \
    DEF_BITS2(op##64, uint64_t, OP)
DEF_BITS2_SIZES(and, &)
DEF_BITS2_SIZES(or, |)
DEF_BITS2_SIZES(xor, ^)

static bool is_integer(tgc_dtype t) { return tgc_dtype_is_signed_int(t) || tgc_dtype_is_unsigned(t); }

/* fns: the op's row functions for 1-, 2-, 4- and 8-byte elements. */
static tgc_status k_bits2(tgc_kernel_ctx *c, const bits2_fn fns[4]) {
    tgc_status st = tgc_kernel_check_host(c, 2, 1);
    if (st != TGC_OK) return st;
    const tgc_value *a = &c->inputs[0], *b = &c->inputs[1], *y = &c->outputs[0];
    if (!is_integer(a->dtype) || b->dtype != a->dtype || y->dtype != a->dtype)
        return tgc_kernel_fail(c, "%s: dtypes %s, %s -> %s; expected one integer dtype", tgc_kernel_op_name(c),
                               tgc_dtype_name(a->dtype), tgc_dtype_name(b->dtype), tgc_dtype_name(y->dtype));
    if (tgc_value_numel(y) == 0) return TGC_OK;
    tgc_cpu_bcast it;
    const tgc_value *ops[2] = {a, b};
    if ((st = tgc_cpu_bcast_values(c, &it, y, 2, ops)) != TGC_OK) return st;
    size_t e = tgc_dtype_size(y->dtype);
    bits2_fn fn = fns[e == 1 ? 0 : e == 2 ? 1 : e == 4 ? 2 : 3];
    const char *pa = tgc_buffer_host_ptr(a->buf), *pb = tgc_buffer_host_ptr(b->buf);
    char *py = tgc_buffer_host_ptr(y->buf);
    for (int64_t r = 0; r < it.rows; r++, tgc_cpu_bcast_next(&it))
        fn(it.inner, pa + (size_t)it.off[0] * e, it.step[0], pb + (size_t)it.off[1] * e, it.step[1],
           py + (size_t)(r * it.inner) * e);
    return TGC_OK;
}

static tgc_status k_bitwise_and(tgc_kernel_ctx *c) {
    static const bits2_fn fns[4] = {and8, and16, and32, and64};
    return k_bits2(c, fns);
}

static tgc_status k_bitwise_or(tgc_kernel_ctx *c) {
    static const bits2_fn fns[4] = {or8, or16, or32, or64};
    return k_bits2(c, fns);
}

static tgc_status k_bitwise_xor(tgc_kernel_ctx *c) {
    static const bits2_fn fns[4] = {xor8, xor16, xor32, xor64};
    return k_bits2(c, fns);
}

#define NOT_LOOP(T)                                                                              \
    do {                                                                                         \
        const T *x = px;                                                                         \
        T *y = py;                                                                               \
        for (int64_t i = 0; i < n; i++)                                                          \
            y[i] = (T)~x[i];                                                                     \
    } while (0)

static tgc_status k_bitwise_not(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 1, 1);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    if (!is_integer(x->dtype) || y->dtype != x->dtype || tgc_value_numel(y) != tgc_value_numel(x))
        return tgc_kernel_fail(c, "BitwiseNot: %s -> %s; expected one integer dtype and shape",
                               tgc_dtype_name(x->dtype), tgc_dtype_name(y->dtype));
    int64_t n = tgc_value_numel(x);
    const void *px = tgc_buffer_host_ptr(x->buf);
    void *py = tgc_buffer_host_ptr(y->buf);
    switch (tgc_dtype_size(x->dtype)) {
    case 1: NOT_LOOP(uint8_t); break;
    case 2: NOT_LOOP(uint16_t); break;
    case 4: NOT_LOOP(uint32_t); break;
    default: NOT_LOOP(uint64_t); break;
    }
    return TGC_OK;
}

#define DT_INTEGERS                                                                              \
    {TGC_INT8, TGC_INT16, TGC_INT32, TGC_INT64, TGC_UINT8, TGC_UINT16, TGC_UINT32, TGC_UINT64, TGC_DTYPE_INVALID}
#define BITWISE(name, f) {.op = name, .fn = f, .forward_input = 0, .dtypes = DT_INTEGERS}

const tgc_kernel_def tgc_cpu_kernels_bitwise[] = {
    BITWISE("BitwiseAnd", k_bitwise_and), BITWISE("BitwiseOr", k_bitwise_or),
    BITWISE("BitwiseXor", k_bitwise_xor), BITWISE("BitwiseNot", k_bitwise_not),
    {.op = NULL},
};
