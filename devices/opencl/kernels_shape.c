/* The OpenCL (gpu) kernels of the shape and data-movement ops, ONNX opset
 * 17, with the helpers every OpenCL kernel family of this folder shares:
 *     views        Reshape Flatten Squeeze Unsqueeze: a buffer copy, or none
 *                  when the executor forwards input 0's buffer
 *     strided      Transpose Slice Expand: one strided-copy kernel
 *     blocks       Concat Split: rectangular buffer copies, no kernel
 *     index        Gather (int32/int64 indices in device memory)
 *     makers       ConstantOfShape, Range (float32), Constant
 * and tgc_gpu_kernels_shape[]. Device code: kernels/layout.cl.
 *
 * Every shape argument (Reshape's shape, Slice's starts..steps, ...) is
 * declared host memory, so the host reads it without waiting for the
 * device. The kernels move bytes without reading them, so each serves every
 * dtype by its element size. Where a kernel computes the output shape from
 * its arguments it checks the executor's against it and fails, never
 * writes, when they differ. */
#include "devices/opencl/cl_kernel_util.h"
#include "devices/strided_view.h"

#include "support/alloc.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ==== Helpers shared by kernels_*.c of this folder ========================== */

/* Checks the tensors a kernel was handed: at least `min_inputs` inputs (the
 * rest optional) and `n_outputs` outputs; inputs whose bit is set in
 * host_inputs in host memory, every other tensor in this device's memory.
 * TGC_OK, or TGC_ERR_RUNTIME with the reason in c->error. */
tgc_status tgc_cl_check(tgc_kernel_ctx *c, int min_inputs, int n_outputs, uint32_t host_inputs) {
    return tgc_kernel_check_tensors(c, min_inputs, n_outputs, host_inputs, false);
}

/* Work-items per group the rounding aims at; kernels guard i < n. */
#define GROUP 64

/* Enqueues the one-dimensional kernel `name` over n work-items (global size
 * rounded up to a multiple of GROUP; nothing for n == 0). */
tgc_status tgc_cl_run1d(tgc_kernel_ctx *c, const char *name, int64_t n, int n_args, const tgc_cl_arg *args) {
    if (n <= 0) return TGC_OK;
    size_t global = ((size_t)n + GROUP - 1) / GROUP * GROUP;
    return tgc_cl_enqueue(c, name, 1, &global, NULL, n_args, args);
}

tgc_status tgc_cl_run1d_checked(tgc_kernel_ctx *c, const char *name, int64_t n, int n_args, const tgc_cl_arg *args,
                                const char *reason) {
    if (n <= 0) return TGC_OK;
    if (n_args >= TGC_CL_MAX_ARGS) return tgc_kernel_fail(c, "%s: %d arguments and a flag", name, n_args);
    tgc_buffer *flag = tgc_cl_scratch(c->device, sizeof(cl_int));
    if (flag == NULL) return tgc_kernel_fail_nomem(c, "%s: out of device memory for a 4-byte flag", tgc_kernel_op_name(c));
    const cl_int zero = 0;
    cl_int err = clEnqueueFillBuffer(tgc_cl_queue(c->device), flag->mem, &zero, sizeof zero, 0, sizeof zero, 0, NULL,
                                     NULL);
    tgc_status st = TGC_OK;
    if (err == CL_SUCCESS) {
        tgc_cl_count_command(c->device);
        tgc_cl_arg all[TGC_CL_MAX_ARGS];
        memcpy(all, args, (size_t)n_args * sizeof *args);
        all[n_args] = TGC_CL_BUF(flag);
        st = tgc_cl_run1d(c, name, n, n_args + 1, all);
        if (st == TGC_OK) st = tgc_cl_check_flag(c, flag->mem, reason);
    } else {
        st = tgc_kernel_fail(c, "%s: clEnqueueFillBuffer failed: %s", tgc_kernel_op_name(c), tgc_cl_error_name(err));
    }
    tgc_cl_scratch_release(flag);
    return st;
}

/* Copies nbytes from src at src_off to dst at dst_off on c->device's queue
 * (not waiting); nothing when nbytes is 0 or the two ranges are the same
 * memory (a forwarded buffer). */
tgc_status tgc_cl_copy(tgc_kernel_ctx *c, cl_mem dst, size_t dst_off, cl_mem src, size_t src_off, size_t nbytes) {
    if (nbytes == 0 || (dst == src && dst_off == src_off)) return TGC_OK;
    cl_int err = clEnqueueCopyBuffer(tgc_cl_queue(c->device), src, dst, src_off, dst_off, nbytes, 0, NULL, NULL);
    if (err == CL_SUCCESS) tgc_cl_count_command(c->device);
    if (err != CL_SUCCESS)
        return tgc_kernel_fail(c, "%s: clEnqueueCopyBuffer of %zu bytes failed: %s", tgc_kernel_op_name(c), nbytes,
                               tgc_cl_error_name(err));
    return TGC_OK;
}

/* ==== Family helpers ======================================================== */

static tgc_status no_size(tgc_kernel_ctx *c, tgc_dtype t) {
    return tgc_kernel_fail(c, "%s: no gpu kernel for elements of %s", tgc_kernel_op_name(c), tgc_dtype_name(t));
}

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

/* As tgc_cl_check, and output 0 has input 0's dtype. */
static tgc_status check_moves(tgc_kernel_ctx *c, int min_inputs, uint32_t host_inputs) {
    tgc_status st = tgc_cl_check(c, min_inputs, 1, host_inputs);
    if (st != TGC_OK) return st;
    if (c->outputs[0].dtype != c->inputs[0].dtype)
        return tgc_kernel_fail(c, "%s: output 0 is %s but input 0 is %s; they must agree", tgc_kernel_op_name(c),
                               tgc_dtype_name(c->outputs[0].dtype), tgc_dtype_name(c->inputs[0].dtype));
    return TGC_OK;
}

static int64_t product(const int64_t *dims, int n) {
    int64_t p = 1;
    for (int i = 0; i < n; i++) p *= dims[i];
    return p;
}

/* ==== The strided copy ======================================================= */

/* Fills y (contiguous, `rank` dims `dims`) from x's elements at offset +
 * sum(i_k * strides[k]). Axes of 1 are dropped and axes contiguous in the
 * source merged first, so a plain copy (a slice of whole rows, a transpose
 * that moves only axes of 1) becomes one buffer copy. */
static tgc_status strided_copy(tgc_kernel_ctx *c, const tgc_value *x, tgc_value *y, int rank, const int64_t *dims,
                               const int64_t *strides, int64_t offset) {
    int64_t d[TGC_MAX_RANK], s[TGC_MAX_RANK];
    int n = 0;
    for (int i = 0; i < rank; i++) {
        if (dims[i] == 0) return TGC_OK;
        if (dims[i] == 1) continue;
        if (n > 0 && s[n - 1] == strides[i] * dims[i]) {
            d[n - 1] *= dims[i];
            s[n - 1] = strides[i];
        } else {
            d[n] = dims[i];
            s[n] = strides[i];
            n++;
        }
    }
    size_t esize = tgc_dtype_size(x->dtype);
    if (n == 0 || (n == 1 && s[0] == 1))
        return tgc_cl_copy(c, y->buf->mem, 0, x->buf->mem, (size_t)offset * esize, (size_t)(n ? d[0] : 1) * esize);
    const char *suffix = size_suffix(esize);
    if (suffix == NULL) return no_size(c, x->dtype);
    cl_long8 dv, sv;
    for (int k = 0; k < 8; k++) {
        dv.s[k] = k < n ? d[k] : 1;
        sv.s[k] = k < n ? s[k] : 0;
    }
    char name[32];
    snprintf(name, sizeof name, "lay_strided_%s", suffix);
    int64_t numel = tgc_value_numel(y);
    tgc_cl_arg args[] = {TGC_CL_BUF(x->buf), TGC_CL_BUF(y->buf), TGC_CL_LONG(numel),        TGC_CL_INT(n),
                         TGC_CL_BYTES(&dv, sizeof dv), TGC_CL_BYTES(&sv, sizeof sv), TGC_CL_LONG(offset)};
    return tgc_cl_run1d(c, name, numel, 7, args);
}

/* ==== Reshape, Flatten, Squeeze, Unsqueeze =================================== */

/* The views: output 0 holds input 0's bytes under the shape the executor
 * computed (by the op's shape function from the same arguments); a
 * forwarded buffer needs nothing. Shape arguments are host memory the
 * kernel does not need to read. */
static tgc_status view(tgc_kernel_ctx *c, int min_inputs, uint32_t host_inputs) {
    tgc_status st = check_moves(c, min_inputs, host_inputs);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0];
    tgc_value *y = &c->outputs[0];
    if (tgc_value_numel(x) != tgc_value_numel(y)) {
        char a[TGC_KERNEL_DIMS_BUF], b[TGC_KERNEL_DIMS_BUF];
        return tgc_kernel_fail(c, "%s: output shape %s does not hold the %lld elements of the input %s",
                               tgc_kernel_op_name(c), tgc_kernel_dims_str(y->rank, y->dims, a),
                               (long long)tgc_value_numel(x), tgc_kernel_dims_str(x->rank, x->dims, b));
    }
    return tgc_cl_copy(c, y->buf->mem, 0, x->buf->mem, 0, tgc_value_nbytes(x));
}

static tgc_status k_reshape(tgc_kernel_ctx *c) { return view(c, 2, 1u << 1); }
static tgc_status k_flatten(tgc_kernel_ctx *c) { return view(c, 1, 0); }
static tgc_status k_squeeze(tgc_kernel_ctx *c) { return view(c, 1, 1u << 1); }
static tgc_status k_unsqueeze(tgc_kernel_ctx *c) { return view(c, 2, 1u << 1); }

/* ==== Transpose, Slice, Expand ============================================== */

/* Transpose-13: out.dims[i] = in.dims[perm[i]]; perm defaults to the axes
 * reversed. */
static tgc_status k_transpose(tgc_kernel_ctx *c) {
    tgc_status st = check_moves(c, 1, 0);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0];
    int r = x->rank;
    int64_t dims[TGC_MAX_RANK], strides[TGC_MAX_RANK];
    if ((st = tgc_view_transpose(c, x, dims, strides)) != TGC_OK) return st;
    if ((st = tgc_kernel_expect_dims(c, 0, r, dims)) != TGC_OK) return st;
    return strided_copy(c, x, &c->outputs[0], r, dims, strides, 0);
}

/* Slice-13: inputs 1..4 (host memory) are starts, ends, and the optional
 * axes and steps; axes not listed are taken whole. */
static tgc_status k_slice(tgc_kernel_ctx *c) {
    tgc_status st = check_moves(c, 3, 0x1Eu);
    if (st != TGC_OK) return st;
    static const char *const names[] = {"data", "starts", "ends", "axes", "steps"};
    int64_t args[5][TGC_MAX_RANK];
    int counts[5] = {0};
    for (int i = 1; i < 5; i++) {
        if (!tgc_kernel_has_input(c, i)) continue;
        if ((st = tgc_kernel_read_ints(c, i, names[i], args[i], TGC_MAX_RANK, &counts[i])) != TGC_OK) return st;
        if (i > 1 && counts[i] != counts[1])
            return tgc_kernel_fail(c, "Slice: input %d (%s) has %d elements but starts has %d; they must agree", i,
                                   names[i], counts[i], counts[1]);
    }
    const tgc_value *x = &c->inputs[0];
    int r = x->rank;
    int64_t dims[TGC_MAX_RANK], strides[TGC_MAX_RANK], offset;
    st = tgc_view_slice(c, x, counts[1], args[1], args[2], tgc_kernel_has_input(c, 3) ? args[3] : NULL,
                        tgc_kernel_has_input(c, 4) ? args[4] : NULL, dims, strides, &offset);
    if (st != TGC_OK) return st;
    if ((st = tgc_kernel_expect_dims(c, 0, r, dims)) != TGC_OK) return st;
    return strided_copy(c, x, &c->outputs[0], r, dims, strides, offset);
}

/* Expand-13: the numpy broadcast of the input's shape and input 1 (host
 * memory); stride 0 along the axes the input repeats. */
static tgc_status k_expand(tgc_kernel_ctx *c) {
    tgc_status st = check_moves(c, 2, 1u << 1);
    int64_t target[TGC_MAX_RANK];
    int n;
    if (st == TGC_OK) st = tgc_kernel_read_ints(c, 1, "shape", target, TGC_MAX_RANK, &n);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0];
    int ro;
    int64_t dims[TGC_MAX_RANK], strides[TGC_MAX_RANK];
    if ((st = tgc_view_expand(c, x, target, n, &ro, dims, strides)) != TGC_OK) return st;
    if ((st = tgc_kernel_expect_dims(c, 0, ro, dims)) != TGC_OK) return st;
    return strided_copy(c, x, &c->outputs[0], ro, dims, strides, 0);
}

/* ==== Concat, Split ========================================================= */

/* Copies `outer` rows of `chunk` bytes: row o from src at src_off + o *
 * src_pitch to dst at dst_off + o * dst_pitch, as one rectangular copy. */
static tgc_status copy_rows(tgc_kernel_ctx *c, cl_mem dst, size_t dst_off, size_t dst_pitch, cl_mem src,
                            size_t src_off, size_t src_pitch, size_t chunk, int64_t outer) {
    if (chunk == 0 || outer == 0) return TGC_OK;
    if (outer == 1 || (chunk == dst_pitch && chunk == src_pitch))
        return tgc_cl_copy(c, dst, dst_off, src, src_off, chunk * (size_t)outer);
    tgc_cl_arg args[] = {{sizeof(cl_mem), &src},       TGC_CL_LONG((cl_long)src_off), TGC_CL_LONG((cl_long)src_pitch),
                         {sizeof(cl_mem), &dst},       TGC_CL_LONG((cl_long)dst_off), TGC_CL_LONG((cl_long)dst_pitch),
                         TGC_CL_LONG((cl_long)chunk)};
    size_t global[2] = {chunk, (size_t)outer};
    return tgc_cl_enqueue(c, "lay_copy_rows", 2, global, NULL, 7, args);
}

/* Concat-13: inputs of one dtype and rank whose dims agree except on
 * `axis`, where they add up. Each input is one block copy into its columns
 * of the output seen as [outer, row bytes]. */
static tgc_status k_concat(tgc_kernel_ctx *c) {
    tgc_status st = tgc_cl_check(c, c->n_inputs > 0 ? c->n_inputs : 1, 1, 0);
    if (st != TGC_OK) return st;
    const tgc_value *first = &c->inputs[0];
    int r = first->rank, axis = 0;
    int64_t dims[TGC_MAX_RANK];
    if ((st = tgc_kernel_concat_shape(c, &axis, dims)) != TGC_OK) return st;
    size_t inner = (size_t)product(dims + axis + 1, r - axis - 1) * tgc_dtype_size(first->dtype);
    size_t row = (size_t)dims[axis] * inner, at = 0;
    int64_t outer = product(dims, axis);
    for (int i = 0; i < c->n_inputs && st == TGC_OK; i++) {
        size_t chunk = (size_t)c->inputs[i].dims[axis] * inner;
        st = copy_rows(c, c->outputs[0].buf->mem, at, row, c->inputs[i].buf->mem, 0, chunk, chunk, outer);
        at += chunk;
    }
    return st;
}

/* Split-13: input 0 splits along `axis` into the node's outputs, by input 1
 * (host memory; one size per output) or into equal parts. */
static tgc_status k_split(tgc_kernel_ctx *c) {
    int n = c->n_outputs;
    tgc_status st = tgc_cl_check(c, 1, n, 1u << 1);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0];
    int r = x->rank, axis = 0;
    if (r == 0) return tgc_kernel_fail(c, "Split: input 0 is a scalar; it must have rank >= 1");
    if (n < 1 || n > 64) return tgc_kernel_fail(c, "Split: %d outputs; tgc's gpu kernel takes 1 to 64", n);
    if ((st = tgc_kernel_axis_attr(c, 0, r, &axis)) != TGC_OK) return st;
    int64_t size = x->dims[axis], sizes[64];
    if (tgc_kernel_has_input(c, 1)) {
        int k;
        if ((st = tgc_kernel_read_ints(c, 1, "split", sizes, 64, &k)) != TGC_OK) return st;
        int64_t sum = 0;
        for (int j = 0; j < k; j++) {
            if (sizes[j] < 0 || sizes[j] > size - sum) {
                sum = -1;
                break;
            }
            sum += sizes[j];
        }
        if (k != n || sum != size)
            return tgc_kernel_fail(c, "Split: input 1 must hold %d sizes >= 0, one per output, adding up to %lld, "
                                   "the size of axis %d", n, (long long)size, axis);
    } else {
        if (size % n != 0)
            return tgc_kernel_fail(c, "Split: axis %d has size %lld, which does not split evenly into %d outputs",
                                   axis, (long long)size, n);
        for (int j = 0; j < n; j++) sizes[j] = size / n;
    }
    int64_t dims[TGC_MAX_RANK];
    memcpy(dims, x->dims, sizeof dims);
    for (int j = 0; j < n; j++) {
        dims[axis] = sizes[j];
        if (c->outputs[j].dtype != x->dtype)
            return tgc_kernel_fail(c, "Split: output %d is %s but input 0 is %s", j,
                                   tgc_dtype_name(c->outputs[j].dtype), tgc_dtype_name(x->dtype));
        if ((st = tgc_kernel_expect_dims(c, j, r, dims)) != TGC_OK) return st;
    }
    size_t inner = (size_t)product(x->dims + axis + 1, r - axis - 1) * tgc_dtype_size(x->dtype);
    size_t row = (size_t)size * inner, at = 0;
    int64_t outer = product(x->dims, axis);
    for (int j = 0; j < n && st == TGC_OK; j++) {
        size_t chunk = (size_t)sizes[j] * inner;
        st = copy_rows(c, c->outputs[j].buf->mem, 0, chunk, x->buf->mem, at, row, chunk, outer);
        at += chunk;
    }
    return st;
}

/* ==== Gather ================================================================ */

/* Gather-13: data of rank r >= 1, int32/int64 indices (device memory) of
 * rank q, axis in [-r, r). The kernel checks each index as it uses it and
 * sets a flag the host reads (tgc_cl_run1d_checked: at the step's end, or
 * at once outside a step), so an index out of range is a clean error
 * naming the node, as on the cpu, and never an out-of-bounds read. */
static tgc_status k_gather(tgc_kernel_ctx *c) {
    tgc_status st = check_moves(c, 2, 0);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *ind = &c->inputs[1];
    int r = x->rank, axis = 0;
    if ((st = tgc_kernel_gather_shape(c, &axis)) != TGC_OK) return st;
    int64_t numel = tgc_value_numel(&c->outputs[0]);
    if (numel == 0) return TGC_OK;
    const char *suffix = size_suffix(tgc_dtype_size(x->dtype));
    if (suffix == NULL) return no_size(c, x->dtype);
    char name[32], sx[TGC_KERNEL_DIMS_BUF], reason[200];
    snprintf(name, sizeof name, "lay_gather_%s_%s", suffix, ind->dtype == TGC_INT32 ? "i32" : "i64");
    int64_t count = tgc_value_numel(ind), size = x->dims[axis], inner = product(x->dims + axis + 1, r - axis - 1);
    snprintf(reason, sizeof reason, "Gather: an index is out of range [%lld, %lld) for axis %d of data %s",
             (long long)-size, (long long)size, axis, tgc_kernel_dims_str(r, x->dims, sx));
    tgc_cl_arg args[] = {TGC_CL_BUF(x->buf),  TGC_CL_BUF(ind->buf), TGC_CL_BUF(c->outputs[0].buf),
                         TGC_CL_LONG(numel),  TGC_CL_LONG(count),   TGC_CL_LONG(size),
                         TGC_CL_LONG(inner)};
    return tgc_cl_run1d_checked(c, name, numel, 7, args, reason);
}

/* ==== ConstantOfShape, Range, Constant ======================================= */

/* ConstantOfShape-9: input 0 (host memory) is the output's shape; the
 * one-element tensor attribute `value` is the fill and the dtype (default
 * float32 0). */
static tgc_status k_constant_of_shape(tgc_kernel_ctx *c) {
    tgc_status st = tgc_cl_check(c, 1, 1, 1u << 0);
    int64_t dims[TGC_MAX_RANK];
    int n;
    if (st == TGC_OK) st = tgc_kernel_read_ints(c, 0, "shape", dims, TGC_MAX_RANK, &n);
    if (st != TGC_OK) return st;
    const void *elem;
    tgc_dtype t;
    if ((st = tgc_kernel_fill_value(c, &elem, &t)) != TGC_OK) return st;
    if ((st = tgc_kernel_expect_dims(c, 0, n, dims)) != TGC_OK) return st;
    size_t esize = tgc_dtype_size(t);
    const char *suffix = size_suffix(esize);
    if (suffix == NULL) return no_size(c, t);
    char name[32];
    snprintf(name, sizeof name, "lay_fill_%s", suffix);
    int64_t numel = tgc_value_numel(&c->outputs[0]);
    tgc_cl_arg args[] = {TGC_CL_BUF(c->outputs[0].buf), TGC_CL_LONG(numel), TGC_CL_BYTES(elem, esize)};
    return tgc_cl_run1d(c, name, numel, 3, args);
}

/* Range-11 over float32: start, limit, delta are host-memory scalars;
 * out[i] = start + i * delta. The length is ceil((limit - start) / delta)
 * taken in double, or in float32 as onnxruntime takes it: the cpu kernel
 * accepts either, and so does this one. */
static tgc_status k_range(tgc_kernel_ctx *c) {
    tgc_status st = tgc_cl_check(c, 3, 1, 0x7u);
    if (st != TGC_OK) return st;
    float v[3];
    for (int i = 0; i < 3; i++) {
        const tgc_value *in = &c->inputs[i];
        if (in->dtype != TGC_FLOAT32 || tgc_value_numel(in) != 1 || in->rank > 1)
            return tgc_kernel_fail(c, "Range: input %d must be one float32 element; it is %s with %lld", i,
                                   tgc_dtype_name(in->dtype), (long long)tgc_value_numel(in));
        memcpy(&v[i], tgc_kernel_in_ptr(c, i), sizeof v[i]);
    }
    if (c->outputs[0].dtype != TGC_FLOAT32)
        return tgc_kernel_fail(c, "Range: output 0 is %s; it must be float32", tgc_dtype_name(c->outputs[0].dtype));
    if (!isfinite(v[0]) || !isfinite(v[1]) || !isfinite(v[2]))
        return tgc_kernel_fail(c, "Range: start, limit and delta must be finite");
    if (v[2] == 0) return tgc_kernel_fail(c, "Range: delta is 0");
    double q = ((double)v[1] - (double)v[0]) / (double)v[2], q_f = (double)(v[1] - v[0]) / (double)v[2];
    double len = ceil(q) > 0 ? ceil(q) : 0, len_f = ceil(q_f) > 0 ? ceil(q_f) : 0;
    if (len > 9.0e18) return tgc_kernel_fail(c, "Range: the result has too many elements");
    int64_t n = (int64_t)len;
    const tgc_value *o = &c->outputs[0];
    if (o->rank == 1 && (double)o->dims[0] == len_f) n = o->dims[0];
    if ((st = tgc_kernel_expect_dims(c, 0, 1, &n)) != TGC_OK) return st;
    tgc_cl_arg args[] = {TGC_CL_BUF(o->buf), TGC_CL_LONG(n), TGC_CL_FLOAT(v[0]), TGC_CL_FLOAT(v[2])};
    return tgc_cl_run1d(c, "lay_range_f32", n, 4, args);
}

/* Writes nbytes of host data into output 0 from a copy of them handed to
 * the step (tgc_cl_upload_owned: within a step, without waiting; the data
 * may be the caller's temporary). */
static tgc_status write_output(tgc_kernel_ctx *c, const void *data, size_t nbytes) {
    if (nbytes == 0) return TGC_OK;
    void *copy = tgc_malloc(nbytes);
    if (copy == NULL) return tgc_kernel_fail_nomem(c, "Constant: out of host memory for a %zu-byte copy", nbytes);
    memcpy(copy, data, nbytes);
    return tgc_cl_upload_owned(c, c->outputs[0].buf->mem, copy, nbytes);
}

/* Constant-13: exactly one of value (a tensor, any dtype), value_float,
 * value_floats (float32), value_int, value_ints (int64) is written into
 * output 0; tgc has no string tensors. */
static tgc_status k_constant(tgc_kernel_ctx *c) {
    tgc_status st = tgc_cl_check(c, 0, 1, 0);
    if (st != TGC_OK) return st;
    const tgc_attr *a;
    int which;
    if ((st = tgc_kernel_constant_attr(c, &a, &which)) != TGC_OK) return st;
    static const tgc_attr_type types[] = {TGC_ATTR_TENSOR, TGC_ATTR_FLOAT, TGC_ATTR_FLOATS, TGC_ATTR_INT,
                                          TGC_ATTR_INTS};
    if (which >= 5) return tgc_kernel_fail(c, "Constant: attribute '%s': tgc has no string tensors", a->name);
    if (a->type != types[which] || (which == 0 && a->tensor == NULL))
        return tgc_kernel_fail(c, "Constant: attribute '%s' has the wrong type", a->name);
    const tgc_const *k = which == 0 ? a->tensor : NULL;
    tgc_dtype t = k != NULL ? k->dtype : which <= 2 ? TGC_FLOAT32 : TGC_INT64;
    int rank = k != NULL ? k->shape.rank : (which == 1 || which == 3) ? 0 : 1;
    int64_t dims[TGC_MAX_RANK] = {(which == 1 || which == 3) ? 1 : (int64_t)a->n};
    if (rank < 0 || rank > TGC_MAX_RANK) return tgc_kernel_fail(c, "Constant: attribute 'value' has no shape");
    for (int i = 0; k != NULL && i < rank; i++) dims[i] = k->shape.dims[i].v;
    if (c->outputs[0].dtype != t)
        return tgc_kernel_fail(c, "Constant: output 0 is %s but attribute '%s' makes %s",
                               tgc_dtype_name(c->outputs[0].dtype), a->name, tgc_dtype_name(t));
    if ((st = tgc_kernel_expect_dims(c, 0, rank, dims)) != TGC_OK) return st;
    size_t nbytes = tgc_value_nbytes(&c->outputs[0]);
    switch (which) {
    case 0:
        if (k->nbytes != nbytes || (nbytes > 0 && k->data == NULL))
            return tgc_kernel_fail(c, "Constant: attribute 'value' holds %zu bytes, not the %zu of its shape",
                                   k->nbytes, nbytes);
        return write_output(c, k->data, nbytes);
    case 1: {
        float f = (float)a->f;
        return write_output(c, &f, sizeof f);
    }
    case 2: {
        float *f = tgc_malloc(a->n * sizeof *f + 1);
        if (f == NULL) return tgc_kernel_fail(c, "Constant: out of host memory");
        for (size_t i = 0; i < a->n; i++) f[i] = (float)a->floats[i];
        st = write_output(c, f, nbytes);
        tgc_free(f);
        return st;
    }
    case 3: return write_output(c, &a->i, sizeof a->i);
    default: return write_output(c, a->ints, nbytes);
    }
}

/* ==== The table ============================================================== */

/* Moving bytes serves any dtype: an explicit TGC_DTYPE_INVALID first entry
 * (an all-zero array would mean float32 only). */
#define ANY_DTYPE {TGC_DTYPE_INVALID}
#define BIT(i) (1u << (i))
#define GPU(name, f, host, fwd, ...) \
    {.op = name, .fn = f, .host_inputs = host, .forward_input = fwd, .dtypes = __VA_ARGS__}

const tgc_kernel_def tgc_gpu_kernels_shape[] = {
    GPU("Reshape", k_reshape, BIT(1), 0, ANY_DTYPE),
    GPU("Flatten", k_flatten, 0, 0, ANY_DTYPE),
    GPU("Squeeze", k_squeeze, BIT(1), 0, ANY_DTYPE),
    GPU("Unsqueeze", k_unsqueeze, BIT(1), 0, ANY_DTYPE),
    GPU("Transpose", k_transpose, 0, -1, ANY_DTYPE),
    GPU("Concat", k_concat, 0, -1, ANY_DTYPE),
    GPU("Split", k_split, BIT(1), -1, ANY_DTYPE),
    GPU("Slice", k_slice, BIT(1) | BIT(2) | BIT(3) | BIT(4), -1, ANY_DTYPE),
    GPU("Expand", k_expand, BIT(1), -1, ANY_DTYPE),
    GPU("Gather", k_gather, 0, -1, ANY_DTYPE),
    GPU("ConstantOfShape", k_constant_of_shape, BIT(0), -1, {TGC_INT64, TGC_DTYPE_INVALID}),
    GPU("Range", k_range, BIT(0) | BIT(1) | BIT(2), -1, {TGC_FLOAT32, TGC_DTYPE_INVALID}),
    GPU("Constant", k_constant, 0, -1, ANY_DTYPE),
    {.op = NULL},
};
