/* CPU kernels for the shape ops (ONNX opset 17): the views Reshape,
 * Flatten, Squeeze and Unsqueeze (a byte copy, or none when the executor
 * forwards input 0's buffer), Shape and Size (int64 results in host
 * memory), the makers Range, ConstantOfShape and Constant, the checks every
 * kernel of the family makes, and tgc_cpu_kernels_shape[], the family's one
 * table. Transpose, Slice and Expand are in kernels_layout.c; Gather,
 * Concat and Split in kernels_index.c. */
#include "devices/cpu/kernels_shape.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- Checks and helpers ------------------------------------------------------ */

tgc_status tgc_cpu_shape_check_moves(tgc_kernel_ctx *c, int min_inputs) {
    tgc_status st = tgc_kernel_check_host(c, min_inputs < 1 ? 1 : min_inputs, 1);
    if (st != TGC_OK) return st;
    if (c->outputs[0].dtype != c->inputs[0].dtype)
        return tgc_kernel_fail(c, "output 0 is %s but input 0 is %s; they must agree",
                               tgc_dtype_name(c->outputs[0].dtype), tgc_dtype_name(c->inputs[0].dtype));
    return TGC_OK;
}

int64_t tgc_cpu_shape_int_at(tgc_dtype dtype, const void *p, int64_t i) {
    if (dtype == TGC_INT32) {
        int32_t v;
        memcpy(&v, (const char *)p + i * 4, 4);
        return v;
    }
    int64_t v;
    memcpy(&v, (const char *)p + i * 8, 8);
    return v;
}

int64_t tgc_cpu_dims_product(const int64_t *dims, int n) {
    int64_t p = 1;
    for (int i = 0; i < n; i++) p *= dims[i];
    return p;
}

void tgc_cpu_copy_bytes(void *dst, const void *src, size_t nbytes) {
    if (nbytes > 0 && dst != src) memcpy(dst, src, nbytes);
}

/* Fills `count` elements of `esize` bytes at dst with the element at elem:
 * one copy, then doubling copies of what is already written. */
static void fill_elements(void *dst, const void *elem, size_t esize, int64_t count) {
    size_t total = (size_t)count * esize, done = esize;
    if (total == 0) return;
    memcpy(dst, elem, esize);
    while (done < total) {
        size_t n = done < total - done ? done : total - done;
        memcpy((char *)dst + done, dst, n);
        done += n;
    }
}

/* ---- Reshape, Flatten, Squeeze, Unsqueeze ------------------------------------ */

/* The views: output 0 holds input 0's bytes under the shape `dims`, which
 * the kernel has computed; a forwarded buffer needs no copy. */
static tgc_status view_copy(tgc_kernel_ctx *c, int rank, const int64_t *dims) {
    tgc_status st = tgc_kernel_expect_dims(c, 0, rank, dims);
    if (st != TGC_OK) return st;
    tgc_cpu_copy_bytes(tgc_kernel_out_ptr(c, 0), tgc_kernel_in_ptr(c, 0), tgc_value_nbytes(&c->inputs[0]));
    return TGC_OK;
}

/* Reshape-14: each target element is a dim, except that 0 copies the input
 * dim at that index (unless allowzero = 1: a literal 0) and one -1 takes
 * what makes the element counts agree. allowzero with both 0 and -1 in the
 * target is invalid, as is a -1 beside dims whose product is 0 (no count
 * is implied). */
static tgc_status reshape(tgc_kernel_ctx *c) {
    tgc_status st = tgc_cpu_shape_check_moves(c, 2);
    int64_t target[TGC_MAX_RANK], dims[TGC_MAX_RANK];
    int n;
    if (st == TGC_OK) st = tgc_kernel_read_ints(c, 1, "shape", target, TGC_MAX_RANK, &n);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0];
    bool allowzero = tgc_kernel_attr_int(c, "allowzero", 0) != 0, has_zero = false;
    int infer_at = -1;
    int64_t product = 1;
    char sx[TGC_KERNEL_DIMS_BUF], sd[TGC_KERNEL_DIMS_BUF];
    for (int i = 0; i < n; i++) {
        int64_t v = target[i];
        if (v == -1) {
            if (infer_at >= 0)
                return tgc_kernel_fail(c, "Reshape: the target shape %s has more than one -1",
                                       tgc_kernel_dims_str(n, target, sd));
            infer_at = i;
            dims[i] = 1;
            continue;
        }
        if (v < -1)
            return tgc_kernel_fail(c, "Reshape: the target shape %s has %lld at index %d; dims must be >= -1",
                                   tgc_kernel_dims_str(n, target, sd), (long long)v, i);
        if (v == 0) {
            has_zero = true;
            if (!allowzero) {
                if (i >= x->rank)
                    return tgc_kernel_fail(c, "Reshape: the target shape %s has 0 at index %d but the input "
                                           "%s has no dim there to copy", tgc_kernel_dims_str(n, target, sd), i,
                                           tgc_kernel_dims_str(x->rank, x->dims, sx));
                v = x->dims[i];
            }
        }
        dims[i] = v;
        if (v != 0 && product > INT64_MAX / v)
            return tgc_kernel_fail(c, "Reshape: the target shape %s has too many elements",
                                   tgc_kernel_dims_str(n, target, sd));
        product *= v;
    }
    int64_t numel = tgc_value_numel(x);
    if (infer_at >= 0) {
        if (allowzero && has_zero)
            return tgc_kernel_fail(c, "Reshape: with allowzero = 1 the target shape %s cannot hold both 0 "
                                   "and -1", tgc_kernel_dims_str(n, target, sd));
        if (product == 0 || numel % product != 0)
            return tgc_kernel_fail(c, "Reshape: cannot reshape %s (%lld elements) to %s",
                                   tgc_kernel_dims_str(x->rank, x->dims, sx), (long long)numel,
                                   tgc_kernel_dims_str(n, target, sd));
        dims[infer_at] = numel / product;
    } else if (product != numel) {
        return tgc_kernel_fail(c, "Reshape: cannot reshape %s (%lld elements) to %s (%lld elements)",
                               tgc_kernel_dims_str(x->rank, x->dims, sx), (long long)numel,
                               tgc_kernel_dims_str(n, dims, sd), (long long)product);
    }
    return view_copy(c, n, dims);
}

/* Flatten-13: axis in [-r, r] (default 1) gives the 2-D
 * [prod(dims[:axis]), prod(dims[axis:])]. */
static tgc_status flatten(tgc_kernel_ctx *c) {
    tgc_status st = tgc_cpu_shape_check_moves(c, 1);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0];
    int64_t axis = tgc_kernel_attr_int(c, "axis", 1);
    if (axis < -x->rank || axis > x->rank)
        return tgc_kernel_fail(c, "Flatten: axis %lld is out of range [%d, %d] for rank %d", (long long)axis,
                               -x->rank, x->rank, x->rank);
    if (axis < 0) axis += x->rank;
    int64_t dims[2] = {tgc_cpu_dims_product(x->dims, (int)axis),
                       tgc_cpu_dims_product(x->dims + axis, x->rank - (int)axis)};
    return view_copy(c, 2, dims);
}

/* Normalises k axes in [-rank, rank) into marks[0..rank); fails on one out
 * of range or repeated (ONNX leaves repeats undefined; tgc refuses them). */
static tgc_status mark_axes(tgc_kernel_ctx *c, const char *op, const int64_t *axes, int k, int rank,
                            bool *marks) {
    for (int i = 0; i < rank; i++) marks[i] = false;
    for (int i = 0; i < k; i++) {
        int64_t a = axes[i];
        if (a < -rank || a >= rank)
            return tgc_kernel_fail(c, "%s: axis %lld is out of range [%d, %d)", op, (long long)a, -rank, rank);
        if (a < 0) a += rank;
        if (marks[a]) return tgc_kernel_fail(c, "%s: axis %lld is listed twice", op, (long long)axes[i]);
        marks[a] = true;
    }
    return TGC_OK;
}

/* Squeeze-13: removes the axes in the optional input 1, each of which must
 * be 1; without it, every axis of size 1. */
static tgc_status squeeze(tgc_kernel_ctx *c) {
    tgc_status st = tgc_cpu_shape_check_moves(c, 1);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0];
    bool drop[TGC_MAX_RANK];
    int64_t dims[TGC_MAX_RANK];
    if (tgc_kernel_has_input(c, 1)) {
        int64_t axes[TGC_MAX_RANK];
        int k;
        st = tgc_kernel_read_ints(c, 1, "axes", axes, TGC_MAX_RANK, &k);
        if (st == TGC_OK) st = mark_axes(c, "Squeeze", axes, k, x->rank, drop);
        if (st != TGC_OK) return st;
        for (int i = 0; i < x->rank; i++)
            if (drop[i] && x->dims[i] != 1) {
                char sx[TGC_KERNEL_DIMS_BUF];
                return tgc_kernel_fail(c, "Squeeze: cannot squeeze axis %d of %s: its size is %lld, not 1", i,
                                       tgc_kernel_dims_str(x->rank, x->dims, sx), (long long)x->dims[i]);
            }
    } else {
        for (int i = 0; i < x->rank; i++) drop[i] = x->dims[i] == 1;
    }
    int n = 0;
    for (int i = 0; i < x->rank; i++)
        if (!drop[i]) dims[n++] = x->dims[i];
    return view_copy(c, n, dims);
}

/* Unsqueeze-13: input 1 lists k axes of the output (rank r + k, so in
 * [-(r+k), r+k)); each gets a new dim of 1, the input's dims fill the rest
 * in order. */
static tgc_status unsqueeze(tgc_kernel_ctx *c) {
    tgc_status st = tgc_cpu_shape_check_moves(c, 2);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0];
    int64_t axes[TGC_MAX_RANK], dims[TGC_MAX_RANK];
    int k;
    bool ones[TGC_MAX_RANK];
    st = tgc_kernel_read_ints(c, 1, "axes", axes, TGC_MAX_RANK - x->rank, &k);
    if (st == TGC_OK) st = mark_axes(c, "Unsqueeze", axes, k, x->rank + k, ones);
    if (st != TGC_OK) return st;
    for (int i = 0, j = 0; i < x->rank + k; i++) dims[i] = ones[i] ? 1 : x->dims[j++];
    return view_copy(c, x->rank + k, dims);
}

/* ---- Shape, Size --------------------------------------------------------------- */

/* Shape and Size read only input 0's dims, never its data, so the input may
 * live on any device (a gpu's host-memory Shape kernel runs this code). */
static tgc_status metadata_check(tgc_kernel_ctx *c) {
    if (c->n_inputs < 1 || c->inputs[0].dtype == TGC_DTYPE_INVALID)
        return tgc_kernel_fail(c, "the kernel needs input 0");
    if (c->n_outputs < 1) return tgc_kernel_fail(c, "the kernel needs 1 output but was given %d", c->n_outputs);
    return tgc_kernel_check_tensor(c, "output", 0, &c->outputs[0], true);
}

/* Shape-15: int64 dims[start:end]; negative start/end count from the back,
 * then both clamp to [0, r] (an empty result when end <= start). */
static tgc_status shape(tgc_kernel_ctx *c) {
    tgc_status st = metadata_check(c);
    if (st != TGC_OK) return st;
    if (c->outputs[0].dtype != TGC_INT64) return tgc_kernel_fail(c, "Shape: output 0 must be int64");
    const tgc_value *x = &c->inputs[0];
    int64_t r = x->rank;
    int64_t start = tgc_kernel_attr_int(c, "start", 0), end = tgc_kernel_attr_int(c, "end", r);
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = start < 0 ? 0 : start > r ? r : start;
    end = end < 0 ? 0 : end > r ? r : end;
    int64_t len = end > start ? end - start : 0;
    st = tgc_kernel_expect_dims(c, 0, 1, &len);
    if (st == TGC_OK) tgc_cpu_copy_bytes(tgc_kernel_out_ptr(c, 0), x->dims + start, (size_t)len * sizeof(int64_t));
    return st;
}

/* Size-13: the element count, an int64 scalar. */
static tgc_status size(tgc_kernel_ctx *c) {
    tgc_status st = metadata_check(c);
    if (st != TGC_OK) return st;
    if (c->outputs[0].dtype != TGC_INT64) return tgc_kernel_fail(c, "Size: output 0 must be int64");
    st = tgc_kernel_expect_dims(c, 0, 0, NULL);
    if (st != TGC_OK) return st;
    int64_t n = tgc_value_numel(&c->inputs[0]);
    memcpy(tgc_kernel_out_ptr(c, 0), &n, sizeof n);
    return TGC_OK;
}

/* ---- Range ------------------------------------------------------------------- */

/* Range-11 over integers: n = max(ceil((limit - start) / delta), 0) and
 * out[i] = start + i * delta, all in wrap-free unsigned arithmetic (every
 * out[i] lies between start and limit). */
static tgc_status range_int(tgc_kernel_ctx *c, tgc_dtype t, int64_t start, int64_t limit, int64_t delta) {
    uint64_t n = 0;
    if (delta > 0 && limit > start)
        n = ((uint64_t)limit - (uint64_t)start - 1) / (uint64_t)delta + 1;
    else if (delta < 0 && limit < start)
        n = ((uint64_t)start - (uint64_t)limit - 1) / (0 - (uint64_t)delta) + 1;
    if (n > (uint64_t)INT64_MAX) return tgc_kernel_fail(c, "Range: the result has too many elements");
    int64_t len = (int64_t)n;
    tgc_status st = tgc_kernel_expect_dims(c, 0, 1, &len);
    if (st != TGC_OK) return st;
    void *out = tgc_kernel_out_ptr(c, 0);
    for (int64_t i = 0; i < len; i++) {
        int64_t v = (int64_t)((uint64_t)start + (uint64_t)i * (uint64_t)delta);
        if (t == TGC_INT32) ((int32_t *)out)[i] = (int32_t)v;
        else ((int64_t *)out)[i] = v;
    }
    return TGC_OK;
}

/* Range-11 over float32: out[i] = start + i * delta in float32, as the
 * spec's loop writes it; the count is ceil((limit - start) / delta) taken
 * in double. Runtimes differ in where they round that quotient (onnxruntime
 * subtracts in float32 first), so an output of either length is accepted. */
static tgc_status range_f32(tgc_kernel_ctx *c, float start, float limit, float delta) {
    if (!isfinite(start) || !isfinite(limit) || !isfinite(delta))
        return tgc_kernel_fail(c, "Range: start, limit and delta must be finite");
    double q = ((double)limit - (double)start) / (double)delta;
    double q_f = (double)(limit - start) / (double)delta;
    double n = ceil(q) > 0 ? ceil(q) : 0, n_f = ceil(q_f) > 0 ? ceil(q_f) : 0;
    if (n > 9.0e18) return tgc_kernel_fail(c, "Range: the result has too many elements");
    int64_t len = (int64_t)n;
    const tgc_value *o = &c->outputs[0];
    if (o->rank == 1 && (double)o->dims[0] == n_f) len = o->dims[0];
    tgc_status st = tgc_kernel_expect_dims(c, 0, 1, &len);
    if (st != TGC_OK) return st;
    float *out = tgc_kernel_out_ptr(c, 0);
    for (int64_t i = 0; i < len; i++) out[i] = start + (float)i * delta;
    return TGC_OK;
}

/* Range-11: scalar start, limit and delta (host memory) of one type. */
static tgc_status range(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 3, 1);
    if (st != TGC_OK) return st;
    tgc_dtype t = c->inputs[0].dtype;
    static const char *const names[] = {"start", "limit", "delta"};
    for (int i = 0; i < 3; i++) {
        if (c->inputs[i].dtype != t)
            return tgc_kernel_fail(c, "Range: input %d (%s) is %s but start is %s; they must agree", i,
                                   names[i], tgc_dtype_name(c->inputs[i].dtype), tgc_dtype_name(t));
        if (tgc_value_numel(&c->inputs[i]) != 1 || c->inputs[i].rank > 1)
            return tgc_kernel_fail(c, "Range: input %d (%s) must hold exactly one element", i, names[i]);
    }
    if (t != TGC_FLOAT32 && t != TGC_INT32 && t != TGC_INT64)
        return tgc_kernel_fail(c, "Range: %s is not supported; float32, int32 and int64 are", tgc_dtype_name(t));
    if (c->outputs[0].dtype != t)
        return tgc_kernel_fail(c, "Range: output 0 is %s but the inputs are %s",
                               tgc_dtype_name(c->outputs[0].dtype), tgc_dtype_name(t));
    if (t == TGC_FLOAT32) {
        float v[3];
        for (int i = 0; i < 3; i++) memcpy(&v[i], tgc_kernel_in_ptr(c, i), sizeof v[i]);
        if (v[2] == 0) return tgc_kernel_fail(c, "Range: delta is 0");
        return range_f32(c, v[0], v[1], v[2]);
    }
    int64_t v[3];
    for (int i = 0; i < 3; i++) v[i] = tgc_cpu_shape_int_at(t, tgc_kernel_in_ptr(c, i), 0);
    if (v[2] == 0) return tgc_kernel_fail(c, "Range: delta is 0");
    return range_int(c, t, v[0], v[1], v[2]);
}

/* ---- ConstantOfShape, Constant -------------------------------------------------- */

/* ConstantOfShape-9: input 0 (int64, host memory) is the output's shape
 * (empty: a scalar); attribute `value`, a one-element tensor, is the fill
 * and the dtype (default float32 0). */
static tgc_status constant_of_shape(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 1, 1);
    int64_t dims[TGC_MAX_RANK];
    int n;
    if (st == TGC_OK) st = tgc_kernel_read_ints(c, 0, "shape", dims, TGC_MAX_RANK, &n);
    if (st != TGC_OK) return st;
    for (int i = 0; i < n; i++)
        if (dims[i] < 0) {
            char sd[TGC_KERNEL_DIMS_BUF];
            return tgc_kernel_fail(c, "ConstantOfShape: the shape %s has a negative dim",
                                   tgc_kernel_dims_str(n, dims, sd));
        }
    const void *elem;
    tgc_dtype t;
    if ((st = tgc_kernel_fill_value(c, &elem, &t)) != TGC_OK) return st;
    st = tgc_kernel_expect_dims(c, 0, n, dims);
    if (st == TGC_OK)
        fill_elements(tgc_kernel_out_ptr(c, 0), elem, tgc_dtype_size(t), tgc_value_numel(&c->outputs[0]));
    return st;
}

/* Constant-13: exactly one of value (a tensor), value_float (a float32
 * scalar), value_floats (float32 1-D), value_int (an int64 scalar),
 * value_ints (int64 1-D) is copied into output 0. tgc has no string
 * tensors, so value_string(s) fail. */
static tgc_status constant(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 0, 1);
    if (st != TGC_OK) return st;
    const tgc_attr *a;
    int which;
    if ((st = tgc_kernel_constant_attr(c, &a, &which)) != TGC_OK) return st;
    tgc_value *o = &c->outputs[0];
    int64_t dims[TGC_MAX_RANK];
    int rank = 0;
    tgc_dtype t;
    switch (which) {
    case 0: {
        const tgc_const *k = a->type == TGC_ATTR_TENSOR ? a->tensor : NULL;
        if (k == NULL || k->shape.rank < 0 || k->shape.rank > TGC_MAX_RANK)
            return tgc_kernel_fail(c, "Constant: attribute 'value' holds no tensor");
        rank = k->shape.rank;
        for (int i = 0; i < rank; i++) dims[i] = k->shape.dims[i].v;
        t = k->dtype;
        if (o->dtype != t || (st = tgc_kernel_expect_dims(c, 0, rank, dims)) != TGC_OK) break;
        if (k->nbytes != tgc_value_nbytes(o) || (k->nbytes > 0 && k->data == NULL))
            return tgc_kernel_fail(c, "Constant: attribute 'value' holds %zu bytes, not the %zu of its shape",
                                   k->nbytes, tgc_value_nbytes(o));
        tgc_cpu_copy_bytes(tgc_kernel_out_ptr(c, 0), k->data, k->nbytes);
        return TGC_OK;
    }
    case 1:
    case 2: {
        bool one = which == 1;
        if (a->type != (one ? TGC_ATTR_FLOAT : TGC_ATTR_FLOATS))
            return tgc_kernel_fail(c, "Constant: attribute '%s' has the wrong type", a->name);
        rank = one ? 0 : 1;
        dims[0] = one ? 1 : (int64_t)a->n;
        t = TGC_FLOAT32;
        if (o->dtype != t || (st = tgc_kernel_expect_dims(c, 0, rank, dims)) != TGC_OK) break;
        float *out = tgc_kernel_out_ptr(c, 0);
        for (int64_t i = 0; i < dims[0]; i++) out[i] = (float)(one ? a->f : a->floats[i]);
        return TGC_OK;
    }
    case 3:
    case 4: {
        bool one = which == 3;
        if (a->type != (one ? TGC_ATTR_INT : TGC_ATTR_INTS))
            return tgc_kernel_fail(c, "Constant: attribute '%s' has the wrong type", a->name);
        rank = one ? 0 : 1;
        dims[0] = one ? 1 : (int64_t)a->n;
        t = TGC_INT64;
        if (o->dtype != t || (st = tgc_kernel_expect_dims(c, 0, rank, dims)) != TGC_OK) break;
        tgc_cpu_copy_bytes(tgc_kernel_out_ptr(c, 0), one ? &a->i : a->ints, (size_t)dims[0] * sizeof(int64_t));
        return TGC_OK;
    }
    default:
        return tgc_kernel_fail(c, "Constant: attribute '%s': tgc has no string tensors", a->name);
    }
    if (st != TGC_OK) return st;
    return tgc_kernel_fail(c, "Constant: output 0 is %s but attribute '%s' makes %s", tgc_dtype_name(o->dtype),
                           a->name, tgc_dtype_name(t));
}

/* ---- The table ---------------------------------------------------------------- */

/* Every op here moves bytes, so any dtype: an explicit TGC_DTYPE_INVALID
 * first entry (an all-zero array would mean float32 only). forward_input is
 * 0 only for the views; every other kernel states -1. */
#define ANY_DTYPE {TGC_DTYPE_INVALID}
#define BIT(i) (1u << (i))

const tgc_kernel_def tgc_cpu_kernels_shape[] = {
    {.op = "Reshape", .fn = reshape, .host_inputs = BIT(1), .forward_input = 0,
     .dtypes = ANY_DTYPE},
    {.op = "Flatten", .fn = flatten, .forward_input = 0, .dtypes = ANY_DTYPE},
    {.op = "Squeeze", .fn = squeeze, .host_inputs = BIT(1), .forward_input = 0,
     .dtypes = ANY_DTYPE},
    {.op = "Unsqueeze", .fn = unsqueeze, .host_inputs = BIT(1), .forward_input = 0,
     .dtypes = ANY_DTYPE},
    {.op = "Transpose", .fn = tgc_cpu_transpose, .forward_input = -1,
     .dtypes = ANY_DTYPE},
    {.op = "Concat", .fn = tgc_cpu_concat, .forward_input = -1, .dtypes = ANY_DTYPE},
    {.op = "Split", .fn = tgc_cpu_split, .host_inputs = BIT(1), .forward_input = -1,
     .dtypes = ANY_DTYPE},
    {.op = "Shape", .fn = shape, .host_outputs = BIT(0), .metadata_inputs = BIT(0), .forward_input = -1,
     .dtypes = ANY_DTYPE},
    {.op = "Size", .fn = size, .host_outputs = BIT(0), .metadata_inputs = BIT(0), .forward_input = -1,
     .dtypes = ANY_DTYPE},
    {.op = "Gather", .fn = tgc_cpu_gather, .forward_input = -1, .dtypes = ANY_DTYPE},
    {.op = "Slice", .fn = tgc_cpu_slice, .host_inputs = BIT(1) | BIT(2) | BIT(3) | BIT(4),
     .forward_input = -1, .dtypes = ANY_DTYPE},
    {.op = "Expand", .fn = tgc_cpu_expand, .host_inputs = BIT(1), .forward_input = -1,
     .dtypes = ANY_DTYPE},
    {.op = "Range", .fn = range, .host_inputs = BIT(0) | BIT(1) | BIT(2),
     .forward_input = -1, .dtypes = {TGC_FLOAT32, TGC_INT32, TGC_INT64, TGC_DTYPE_INVALID}},
    {.op = "ConstantOfShape", .fn = constant_of_shape, .host_inputs = BIT(0),
     .forward_input = -1, .dtypes = {TGC_INT64, TGC_DTYPE_INVALID}},
    {.op = "Constant", .fn = constant, .forward_input = -1, .dtypes = ANY_DTYPE},
    {.op = NULL},
};
