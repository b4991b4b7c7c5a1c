/* The OpenCL (gpu) kernels of the indexing ops that transformer graphs
 * use: GatherElements (int32/int64 indices in device memory), Tile and
 * Trilu (their repeats / k in host memory), and tgc_gpu_kernels_indexing[].
 * Device code: kernels/indexing.cl. They move bytes, so each serves every
 * dtype by its element size (1, 2, 4 or 8 bytes). The other indexing ops
 * run on the cpu (kernel availability places them there). Each checks its
 * arguments as the cpu kernel does (devices/cpu/kernels_gather.c,
 * kernels_arrange.c) and fails, never writes, when they are wrong. */
#include "devices/opencl/cl_kernel_util.h"
#include "support/checked.h"

#include <stdio.h>
#include <string.h>

/* The kernel-name suffix of an element size; NULL for another size. */
static const char *size_suffix(size_t esize) {
    switch (esize) {
    case 1: return "u8";
    case 2: return "u16";
    case 4: return "u32";
    case 8: return "u64";
    default: return NULL;
    }
}

/* tgc_cl_check, output 0 of input 0's dtype, an element size the kernels
 * have; the kernel-name suffix in *suffix. */
static tgc_status check_moves(tgc_kernel_ctx *c, int min_inputs, uint32_t host_inputs, const char **suffix) {
    tgc_status st = tgc_cl_check(c, min_inputs, 1, host_inputs);
    if (st != TGC_OK) return st;
    tgc_dtype t = c->inputs[0].dtype;
    if (c->outputs[0].dtype != t)
        return tgc_kernel_fail(c, "%s: output 0 is %s but input 0 is %s; they must agree", tgc_kernel_op_name(c),
                               tgc_dtype_name(c->outputs[0].dtype), tgc_dtype_name(t));
    if ((*suffix = size_suffix(tgc_dtype_size(t))) == NULL)
        return tgc_kernel_fail(c, "%s: no gpu kernel for elements of %s", tgc_kernel_op_name(c), tgc_dtype_name(t));
    return TGC_OK;
}

static cl_long8 long8_of(int n, const int64_t *v, int64_t pad) {
    cl_long8 out;
    for (int k = 0; k < 8; k++) out.s[k] = k < n ? v[k] : pad;
    return out;
}

/* ---- GatherElements --------------------------------------------------------------- */

/* GatherElements-13 (see tgc_cpu_gather_elements): the kernel checks each
 * index as it uses it and sets a flag the host reads (tgc_cl_run1d_checked:
 * at the step's end, or at once outside a step), so an index out of range
 * is a clean error naming the node, never an out-of-bounds read. */
static tgc_status k_gather_elements(tgc_kernel_ctx *c) {
    const char *suffix;
    tgc_status st = check_moves(c, 2, 0, &suffix);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *ind = &c->inputs[1];
    char sx[TGC_KERNEL_DIMS_BUF], si[TGC_KERNEL_DIMS_BUF];
    int axis = 0;
    if (ind->dtype != TGC_INT32 && ind->dtype != TGC_INT64)
        return tgc_kernel_fail(c, "GatherElements: input 1 (indices) is %s; it must be int32 or int64",
                               tgc_dtype_name(ind->dtype));
    if (x->rank < 1 || ind->rank != x->rank)
        return tgc_kernel_fail(c, "GatherElements: indices %s and data %s must have one rank >= 1",
                               tgc_kernel_dims_str(ind->rank, ind->dims, si),
                               tgc_kernel_dims_str(x->rank, x->dims, sx));
    if ((st = tgc_kernel_axis_attr(c, 0, x->rank, &axis)) != TGC_OK) return st;
    for (int d = 0; d < x->rank; d++)
        if (d != axis && ind->dims[d] > x->dims[d])
            return tgc_kernel_fail(c, "GatherElements: indices %s are larger than data %s on axis %d",
                                   tgc_kernel_dims_str(ind->rank, ind->dims, si),
                                   tgc_kernel_dims_str(x->rank, x->dims, sx), d);
    if ((st = tgc_kernel_expect_dims(c, 0, ind->rank, ind->dims)) != TGC_OK) return st;
    int64_t n = tgc_value_numel(ind), strides[TGC_MAX_RANK], s = 1;
    if (n == 0) return TGC_OK;
    for (int d = x->rank - 1; d >= 0; d--) {
        strides[d] = s;
        s *= x->dims[d];
    }
    char name[48], reason[200];
    snprintf(name, sizeof name, "idx_gather_elements_%s_%s", suffix, ind->dtype == TGC_INT32 ? "i32" : "i64");
    snprintf(reason, sizeof reason, "GatherElements: an index is out of range [%lld, %lld) for axis %d of data %s",
             (long long)-x->dims[axis], (long long)x->dims[axis], axis, tgc_kernel_dims_str(x->rank, x->dims, sx));
    cl_long8 dims = long8_of(ind->rank, ind->dims, 1), xs = long8_of(x->rank, strides, 0);
    tgc_cl_arg args[] = {TGC_CL_BUF(x->buf),          TGC_CL_BUF(ind->buf),         TGC_CL_BUF(c->outputs[0].buf),
                         TGC_CL_LONG(n),              TGC_CL_INT(x->rank),          TGC_CL_INT(axis),
                         TGC_CL_LONG(x->dims[axis]),  TGC_CL_BYTES(&dims, sizeof dims), TGC_CL_BYTES(&xs, sizeof xs)};
    return tgc_cl_run1d_checked(c, name, n, 9, args, reason);
}

/* ---- Tile, Trilu -------------------------------------------------------------------- */

/* Tile-13: repeats (host int64 [rank], each >= 0); out dim d = dim d *
 * repeats[d]; output element at coordinates o reads the input at o % dims. */
static tgc_status k_tile(tgc_kernel_ctx *c) {
    const char *suffix;
    int64_t rep[TGC_MAX_RANK], dims[TGC_MAX_RANK];
    int n = 0;
    tgc_status st = check_moves(c, 2, 1u << 1, &suffix);
    if (st == TGC_OK) st = tgc_kernel_read_ints(c, 1, "repeats", rep, TGC_MAX_RANK, &n);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0];
    if (n != x->rank)
        return tgc_kernel_fail(c, "Tile: input 1 (repeats) has %d values; input 0 has rank %d", n, x->rank);
    for (int d = 0; d < n; d++) {
        if (rep[d] < 0) return tgc_kernel_fail(c, "Tile: repeats[%d] is %lld; it must be >= 0", d, (long long)rep[d]);
        if (!tgc_checked_mul_i64(x->dims[d], rep[d], &dims[d]))
            return tgc_kernel_fail(c, "Tile: axis %d repeated %lld times is too large", d, (long long)rep[d]);
    }
    if ((st = tgc_kernel_expect_dims(c, 0, n, dims)) != TGC_OK) return st;
    int64_t numel = tgc_value_numel(&c->outputs[0]);
    if (numel == 0) return TGC_OK;
    char name[32];
    snprintf(name, sizeof name, "idx_tile_%s", suffix);
    cl_long8 od = long8_of(n, dims, 1), xd = long8_of(n, x->dims, 1);
    tgc_cl_arg args[] = {TGC_CL_BUF(x->buf), TGC_CL_BUF(c->outputs[0].buf), TGC_CL_LONG(numel),
                         TGC_CL_INT(n),      TGC_CL_BYTES(&od, sizeof od),  TGC_CL_BYTES(&xd, sizeof xd)};
    return tgc_cl_run1d(c, name, numel, 6, args);
}

/* Trilu-14: k (optional host int scalar, default 0), upper (default 1):
 * each trailing [rows, cols] matrix keeps col - row >= k (upper) or <= k,
 * zeros the rest. Safe in place (each work-item reads what it writes). */
static tgc_status k_trilu(tgc_kernel_ctx *c) {
    const char *suffix;
    tgc_status st = check_moves(c, 1, 1u << 1, &suffix);
    int64_t k = 0;
    int nk = 1;
    if (st == TGC_OK && tgc_kernel_has_input(c, 1)) {
        st = tgc_kernel_read_ints(c, 1, "k", &k, 1, &nk);
        if (st == TGC_OK && nk != 1) st = tgc_kernel_fail(c, "Trilu: input 1 (k) must hold one value");
    }
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0];
    if (x->rank < 2) return tgc_kernel_fail(c, "Trilu: input 0 has rank %d; it needs rank >= 2", x->rank);
    if ((st = tgc_kernel_expect_dims(c, 0, x->rank, x->dims)) != TGC_OK) return st;
    int64_t rows = x->dims[x->rank - 2], cols = x->dims[x->rank - 1], numel = tgc_value_numel(x);
    if (numel == 0) return TGC_OK;
    if (k > cols) k = cols + 1;
    if (k < -rows) k = -rows - 1;
    char name[32];
    snprintf(name, sizeof name, "idx_trilu_%s", suffix);
    tgc_cl_arg args[] = {TGC_CL_BUF(x->buf),
                         TGC_CL_BUF(c->outputs[0].buf),
                         TGC_CL_LONG(numel),
                         TGC_CL_LONG(rows),
                         TGC_CL_LONG(cols),
                         TGC_CL_LONG(k),
                         TGC_CL_INT(tgc_kernel_attr_int(c, "upper", 1) != 0)};
    return tgc_cl_run1d(c, name, numel, 7, args);
}

/* ---- The table ------------------------------------------------------------------------ */

#define ANY_DTYPE                                                                                                      \
    { TGC_DTYPE_INVALID }
#define GPU(name, f, host, fwd)                                                                                        \
    { .op = name, .fn = f, .host_inputs = host, .forward_input = fwd, .dtypes = ANY_DTYPE }

const tgc_kernel_def tgc_gpu_kernels_indexing[] = {
    GPU("GatherElements", k_gather_elements, 0, -1),
    GPU("Tile", k_tile, 1u << 1, -1),
    GPU("Trilu", k_trilu, 1u << 1, 0),
    {.op = NULL},
};
