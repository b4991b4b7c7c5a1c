/* The gpu nn kernel family (float32 and float16): the registry's list
 * (tgc_gpu_kernels_nn); the host sides of MaxPool-12 (with its optional
 * int64 Indices), AveragePool-11, GlobalAveragePool-1,
 * BatchNormalization-15 (inference; training mode on the host) and
 * LayerNormalization-17 (with its optional Mean and InvStdDev); and the
 * helpers the family shares. MatMul, Gemm and Conv are in
 * kernels_gemm_cl.c; the OpenCL C of all of them is
 * kernels/nn.cl.
 *
 * Each checks its inputs and attributes as the cpu kernel does (the window
 * geometry, auto_pad and ceil_mode included, is the one the cpu
 * reads too: devices/window.h's tgc_window_read), then enqueues one or two kernels without waiting.
 * The pooling kernels give one work-item per output; the normalisations
 * and GlobalAveragePool one work-group (NN_GROUP items) per row reduced. */
#include "devices/opencl/kernels_nn.h"
#include "devices/norm_geometry.h"
#include "support/checked.h"

#include <limits.h>
#include <math.h>
#include <string.h>

#define NN_GROUP 64 /* nn.cl's work-group size for the reducing kernels */
#define F32_F16 {TGC_FLOAT32, TGC_FLOAT16, TGC_DTYPE_INVALID}

/* ---- Helpers ------------------------------------------------------------------------- */

tgc_status tgc_cl_nn_window(tgc_kernel_ctx *c, const tgc_window *w, tgc_cl_window *out) {
    memset(out, 0, sizeof *out);
    if (w->n > TGC_CL_NN_MAX_AXES) return tgc_kernel_fail(c, "%d spatial axes; the gpu kernels take at most %d", w->n,
                                                          TGC_CL_NN_MAX_AXES);
    out->n = w->n;
    for (int a = 0; a < w->n; a++) {
        const int64_t v[] = {w->in[a], w->out[a], w->kernel[a], w->strides[a], w->dilations[a], w->pads[a],
                             w->pads[w->n + a]};
        for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
            if (v[i] > INT_MAX / 2) /* o * s + t * d stays in range */
                return tgc_kernel_fail(c, "window sizes on spatial axis %d pass the gpu kernels' int range", a);
        out->in[a] = (cl_int)w->in[a];
        out->out[a] = (cl_int)w->out[a];
        out->k[a] = (cl_int)w->kernel[a];
        out->s[a] = (cl_int)w->strides[a];
        out->d[a] = (cl_int)w->dilations[a];
        out->pb[a] = (cl_int)w->pads[a];
        out->pe[a] = (cl_int)w->pads[w->n + a];
    }
    /* A plane's positions and a window's taps are ints in nn.cl. */
    int64_t in_size = 1, out_size = 1, taps = 1;
    for (int a = 0; a < w->n; a++) {
        in_size *= w->in[a];
        out_size *= w->out[a];
        taps *= w->kernel[a];
        if (in_size > INT_MAX || out_size > INT_MAX || taps > INT_MAX)
            return tgc_kernel_fail(c, "a spatial plane or window passes the gpu kernels' int range");
    }
    return TGC_OK;
}

/* The name and defines of nn.cl's kernel `base` for dtype t into name[]
 * and *defines (half_defines[] when it needs NN_HALF); false for a dtype
 * nn.cl does not build. */
static bool nn_variant(tgc_dtype t, const char *defines, const char *base, char name[64], char half_defines[160],
                       const char **out_defines) {
    if (t != TGC_FLOAT32 && t != TGC_FLOAT16) return false;
    snprintf(name, 64, "%s_%s", base, t == TGC_FLOAT16 ? "f16" : "f32");
    *out_defines = defines;
    if (t == TGC_FLOAT16) {
        snprintf(half_defines, 160, "#define NN_HALF 1\n%s", defines != NULL ? defines : "");
        *out_defines = half_defines;
    }
    return true;
}

tgc_status tgc_cl_nn_enqueue(tgc_kernel_ctx *c, tgc_dtype t, const char *defines, const char *base, cl_uint work_dim,
                             const size_t *global, const size_t *local, int n_args, const tgc_cl_arg *args) {
    char name[64], half[160];
    if (!nn_variant(t, defines, base, name, half, &defines))
        return tgc_kernel_fail(c, "%s: no gpu kernel for %s", base, tgc_dtype_name(t));
    return tgc_cl_enqueue_act(c, "nn.cl", defines, name, work_dim, global, local, n_args, args);
}

tgc_status tgc_cl_nn_time(tgc_kernel_ctx *c, tgc_dtype t, const char *defines, const char *base, cl_uint work_dim,
                          const size_t *global, const size_t *local, int n_args, const tgc_cl_arg *args,
                          uint64_t *ns) {
    char name[64], half[160];
    if (!nn_variant(t, defines, base, name, half, &defines))
        return tgc_kernel_fail(c, "%s: no gpu kernel for %s", base, tgc_dtype_name(t));
    return tgc_cl_time_act(c, "nn.cl", defines, name, work_dim, global, local, n_args, args, ns);
}

tgc_status tgc_cl_nn_enqueue_unfused(tgc_kernel_ctx *c, tgc_dtype t, const char *base, cl_uint work_dim,
                                     const size_t *global, int n_args, const tgc_cl_arg *args) {
    const tgc_fused_act *act = c->fused_act;
    c->fused_act = NULL;
    tgc_status st = tgc_cl_nn_enqueue(c, t, NULL, base, work_dim, global, NULL, n_args, args);
    c->fused_act = act;
    return st;
}

tgc_status tgc_cl_nn_fill(tgc_kernel_ctx *c, cl_mem y, tgc_dtype t, float v, int64_t n) {
    if (n == 0) return TGC_OK;
    size_t global = (size_t)n;
    tgc_cl_arg args[] = {TGC_CL_MEM(y), TGC_CL_FLOAT(v), TGC_CL_LONG(n)};
    return tgc_cl_nn_enqueue_unfused(c, t, "nn_fill", 1, &global, 3, args); /* callers apply an activation after */
}

/* ---- MaxPool, AveragePool ---------------------------------------------------------------- */

/* Checks X and Y and reads the window of MaxPool or AveragePool
 * (tgc_window_read_pool, as the cpu does) as OpenCL ints; *planes is N * C,
 * *in_size and *out_size the spatial element counts, *kk_count the taps in
 * a window. */
static tgc_status pool_setup(tgc_kernel_ctx *c, tgc_cl_window *cw, int64_t *planes, int64_t *in_size,
                             int64_t *out_size, int64_t *kk_count) {
    tgc_window w;
    tgc_status st = tgc_window_read_pool(c, &w, planes, in_size, out_size, kk_count);
    if (st == TGC_OK) st = tgc_cl_nn_window(c, &w, cw);
    return st;
}

static tgc_status max_pool_gpu(tgc_kernel_ctx *c) {
    tgc_cl_window cw;
    int64_t planes, in_size, out_size, kk_count;
    tgc_status st = pool_setup(c, &cw, &planes, &in_size, &out_size, &kk_count);
    if (st != TGC_OK) return st;
    int64_t storage_order = tgc_kernel_attr_int(c, "storage_order", 0);
    if (storage_order != 0 && storage_order != 1)
        return tgc_kernel_fail(c, "attribute 'storage_order' is %lld; it must be 0 or 1", (long long)storage_order);
    bool want_indices = tgc_kernel_has_output(c, 1);
    if (want_indices) {
        const tgc_value *iv = &c->outputs[1];
        if (iv->dtype != TGC_INT64 || tgc_value_numel(iv) != planes * out_size)
            return tgc_kernel_fail(c, "output Indices must be int64 with Y's shape");
    }
    int64_t total = planes * out_size;
    if (total == 0) return TGC_OK;
    cl_mem xm = c->inputs[0].buf->mem, ym = c->outputs[0].buf->mem;
    cl_mem im = want_indices ? c->outputs[1].buf->mem : ym; /* ym: a placeholder the kernel does not write */
    size_t global = (size_t)total;
    tgc_cl_arg args[] = {TGC_CL_MEM(xm), TGC_CL_MEM(ym), TGC_CL_MEM(im), TGC_CL_INT(want_indices),
                         TGC_CL_INT((cl_int)storage_order), TGC_CL_BYTES(&cw, sizeof cw),
                         TGC_CL_INT((cl_int)in_size), TGC_CL_INT((cl_int)out_size), TGC_CL_INT((cl_int)kk_count),
                         TGC_CL_LONG(total)};
    return tgc_cl_nn_enqueue(c, c->inputs[0].dtype, NULL, "nn_max_pool", 1, &global, NULL, 10, args);
}

static tgc_status average_pool_gpu(tgc_kernel_ctx *c) {
    tgc_cl_window cw;
    int64_t planes, in_size, out_size, kk_count;
    tgc_status st = pool_setup(c, &cw, &planes, &in_size, &out_size, &kk_count);
    if (st != TGC_OK) return st;
    int64_t include_pad = tgc_kernel_attr_int(c, "count_include_pad", 0);
    if (include_pad != 0 && include_pad != 1)
        return tgc_kernel_fail(c, "attribute 'count_include_pad' is %lld; it must be 0 or 1", (long long)include_pad);
    int64_t total = planes * out_size;
    if (total == 0) return TGC_OK;
    size_t global = (size_t)total;
    tgc_cl_arg args[] = {TGC_CL_BUF(c->inputs[0].buf), TGC_CL_BUF(c->outputs[0].buf), TGC_CL_INT((cl_int)include_pad),
                         TGC_CL_BYTES(&cw, sizeof cw), TGC_CL_INT((cl_int)in_size), TGC_CL_INT((cl_int)out_size),
                         TGC_CL_INT((cl_int)kk_count), TGC_CL_LONG(total)};
    return tgc_cl_nn_enqueue(c, c->inputs[0].dtype, NULL, "nn_average_pool", 1, &global, NULL, 8, args);
}

/* ---- GlobalAveragePool -------------------------------------------------------------------- */

/* [N, C, D1..Dn] -> [N, C, 1..1]: each plane's mean; NaN for empty planes. */
static tgc_status global_average_pool_gpu(tgc_kernel_ctx *c) {
    int64_t planes, size;
    tgc_status st = tgc_window_read_global_pool(c, &planes, &size);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    if (planes == 0) return TGC_OK;
    if (size == 0) return tgc_cl_nn_fill(c, y->buf->mem, y->dtype, NAN, planes);
    size_t global = (size_t)planes * NN_GROUP, local = NN_GROUP;
    tgc_cl_arg args[] = {TGC_CL_BUF(x->buf), TGC_CL_BUF(y->buf), TGC_CL_LONG(size)};
    return tgc_cl_nn_enqueue(c, x->dtype, NULL, "nn_global_average_pool", 1, &global, &local, 3, args);
}

/* ---- BatchNormalization --------------------------------------------------------------------- */

/* training_mode = 1 (not found in inference models) runs the cpu kernel
 * (devices/cpu/kernels_batch_norm_train.c) on host copies of the inputs and
 * copies its outputs back: correct, not fast. */
static tgc_status batch_norm_train_on_host(tgc_kernel_ctx *c) {
    enum { IN = 5, OUT = 3 };
    if (c->n_inputs < IN || c->n_outputs < 1 || c->n_outputs > OUT)
        return tgc_kernel_fail(c, "BatchNormalization takes 5 inputs and 1 to 3 outputs");
    const tgc_kernel_def *cpu = tgc_kernel_find("BatchNormalization", TGC_DEVICE_CPU, TGC_FLOAT32);
    tgc_value in[IN], out[OUT];
    memset(in, 0, sizeof in);
    memset(out, 0, sizeof out);
    tgc_status st = cpu != NULL ? TGC_OK : tgc_kernel_fail(c, "no cpu BatchNormalization kernel");
    for (int i = 0; st == TGC_OK && i < IN; i++) {
        in[i] = c->inputs[i];
        in[i].buf = NULL;
        size_t nbytes = tgc_value_nbytes(&c->inputs[i]);
        if (nbytes > 0 && tgc_buffer_copy(c->inputs[i].buf, nbytes, tgc_host_device(), &in[i].buf) != TGC_OK)
            st = tgc_kernel_fail(c, "cannot copy input %d to the host", i);
    }
    for (int o = 0; st == TGC_OK && o < c->n_outputs; o++) {
        out[o] = c->outputs[o];
        out[o].buf = NULL;
        size_t nbytes = tgc_value_nbytes(&c->outputs[o]);
        if (c->outputs[o].buf != NULL && nbytes > 0 &&
            tgc_buffer_alloc(tgc_host_device(), nbytes, &out[o].buf) != TGC_OK)
            st = tgc_kernel_fail(c, "out of host memory for output %d", o);
    }
    if (st == TGC_OK) {
        tgc_kernel_ctx host = *c;
        host.device = tgc_host_device();
        host.inputs = in;
        host.outputs = out;
        host.pool = NULL;
        host.cache = NULL;
        host.def = cpu;
        st = cpu->fn(&host);
    }
    for (int o = 0; st == TGC_OK && o < c->n_outputs; o++)
        if (out[o].buf != NULL &&
            c->device->ops->copy_from_host(c->device, c->outputs[o].buf->mem, 0, tgc_buffer_host_ptr(out[o].buf),
                                           tgc_value_nbytes(&c->outputs[o])) != TGC_OK)
            st = tgc_kernel_fail(c, "cannot copy output %d back to %s", o, c->device->name);
    for (int i = 0; i < IN; i++) tgc_buffer_release(in[i].buf);
    for (int o = 0; o < OUT; o++) tgc_buffer_release(out[o].buf);
    return st;
}

static tgc_status batch_norm_gpu(tgc_kernel_ctx *c) {
    if (tgc_kernel_attr_int(c, "training_mode", 0) != 0) return batch_norm_train_on_host(c);
    int64_t planes, channels, size;
    tgc_status st = tgc_batch_norm_geometry_read(c, &planes, &channels, &size);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    float eps = (float)tgc_kernel_attr_float(c, "epsilon", 1e-5);
    int64_t total = planes * size;
    if (total == 0) return TGC_OK;
    size_t global = (size_t)total;
    tgc_cl_arg args[] = {TGC_CL_BUF(x->buf), TGC_CL_BUF(y->buf), TGC_CL_BUF(c->inputs[1].buf),
                         TGC_CL_BUF(c->inputs[2].buf), TGC_CL_BUF(c->inputs[3].buf), TGC_CL_BUF(c->inputs[4].buf),
                         TGC_CL_FLOAT(eps), TGC_CL_LONG(channels), TGC_CL_LONG(size), TGC_CL_LONG(total)};
    return tgc_cl_nn_enqueue(c, x->dtype, NULL, "nn_batch_norm", 1, &global, NULL, 10, args);
}

/* ---- LayerNormalization --------------------------------------------------------------------- */

/* nn.cl's nn_expand_geom. */
typedef struct cl_expand_geom {
    cl_long dims[TGC_CL_NN_MAX_AXES];
    cl_long strides[TGC_CL_NN_MAX_AXES];
    cl_long n;
} cl_expand_geom;

/* Checks that p (Scale or B) broadcasts to dims[0..n) (the cpu's
 * expand_param rule) and fills its strides over them; *same when it is
 * already laid out as dims (then it needs no expanding). */
static bool expand_geom(const tgc_value *p, const int64_t *dims, int n, cl_expand_geom *g, bool *same) {
    if (p->rank > n || n > TGC_CL_NN_MAX_AXES) return false;
    memset(g, 0, sizeof *g);
    g->n = n;
    int64_t acc = 1;
    *same = true;
    for (int i = n - 1; i >= 0; i--) {
        int pi = i - (n - p->rank);
        int64_t d = pi >= 0 ? p->dims[pi] : 1;
        if (d != 1 && d != dims[i]) return false;
        g->dims[i] = dims[i];
        g->strides[i] = d == 1 ? 0 : acc;
        *same = *same && (d == dims[i]);
        acc *= d;
    }
    return true;
}

/* Expands p into a new scratch buffer *out of count values of p's dtype (geometry g). */
static tgc_status expand_param(tgc_kernel_ctx *c, const tgc_value *p, const cl_expand_geom *g, int64_t count,
                               tgc_buffer **out) {
    size_t nbytes;
    *out = tgc_checked_nbytes(count, tgc_dtype_size(p->dtype), &nbytes) ? tgc_cl_scratch(c->device, nbytes) : NULL;
    if (*out == NULL) return tgc_kernel_fail_nomem(c, "out of device memory for LayerNormalization's parameters");
    size_t global = (size_t)count;
    tgc_cl_arg args[] = {TGC_CL_BUF(p->buf), TGC_CL_MEM((*out)->mem), TGC_CL_BYTES(g, sizeof *g),
                         TGC_CL_LONG(count)};
    return tgc_cl_nn_enqueue(c, p->dtype, NULL, "nn_expand", 1, &global, NULL, 4, args);
}

static tgc_status layer_norm_gpu(tgc_kernel_ctx *c) {
    tgc_layer_norm_geometry g;
    tgc_status st = tgc_layer_norm_geometry_read(c, &g);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *sv = &c->inputs[1], *y = &c->outputs[0];
    int ax = g.ax;
    int64_t rows = g.rows, size = g.size;
    bool has_b = g.has_b, want_mean = g.want_mean, want_inv = g.want_inv;
    cl_expand_geom gs, gb;
    bool same_s = true, same_b = true;
    if (!expand_geom(sv, x->dims + ax, x->rank - ax, &gs, &same_s) ||
        (has_b && !expand_geom(&c->inputs[2], x->dims + ax, x->rank - ax, &gb, &same_b)))
        return tgc_kernel_fail(c, "Scale and B must broadcast to X.shape[%d:]", ax);
    if (rows == 0) return TGC_OK;
    cl_mem mean_m = want_mean ? c->outputs[1].buf->mem : NULL, inv_m = want_inv ? c->outputs[2].buf->mem : NULL;
    if (size == 0) { /* statistics of empty rows; nothing to normalise */
        if (want_mean) st = tgc_cl_nn_fill(c, mean_m, TGC_FLOAT32, NAN, rows);
        if (st == TGC_OK && want_inv) st = tgc_cl_nn_fill(c, inv_m, TGC_FLOAT32, NAN, rows);
        return st;
    }

    /* Scale and B as one value per position in a row: as given, or expanded into scratch. */
    cl_mem scale = sv->buf->mem, bias = has_b ? c->inputs[2].buf->mem : scale;
    tgc_buffer *scale_tmp = NULL, *bias_tmp = NULL;
    if (!same_s) {
        st = expand_param(c, sv, &gs, size, &scale_tmp);
        if (scale_tmp != NULL) scale = scale_tmp->mem;
    }
    if (st == TGC_OK && has_b && !same_b) {
        st = expand_param(c, &c->inputs[2], &gb, size, &bias_tmp);
        if (bias_tmp != NULL) bias = bias_tmp->mem;
    }
    if (st == TGC_OK) {
        cl_mem ym = y->buf->mem;
        if (mean_m == NULL) mean_m = ym; /* placeholders the kernel does not write */
        if (inv_m == NULL) inv_m = ym;
        float eps = (float)tgc_kernel_attr_float(c, "epsilon", 1e-5);
        size_t global = (size_t)rows * NN_GROUP, local = NN_GROUP;
        tgc_cl_arg args[] = {TGC_CL_BUF(x->buf), TGC_CL_MEM(ym), TGC_CL_MEM(scale), TGC_CL_MEM(bias),
                             TGC_CL_INT(has_b), TGC_CL_MEM(mean_m), TGC_CL_INT(want_mean), TGC_CL_MEM(inv_m),
                             TGC_CL_INT(want_inv), TGC_CL_FLOAT(eps), TGC_CL_LONG(size)};
        st = tgc_cl_nn_enqueue(c, x->dtype, NULL, "nn_layer_norm", 1, &global, &local, 11, args);
    }
    tgc_cl_scratch_release(scale_tmp); /* later users of the memory come after the kernels on the queue */
    tgc_cl_scratch_release(bias_tmp);
    return st;
}

/* ---- The family ------------------------------------------------------------------------------- */

/* Only BatchNormalization, elementwise once its per-channel factors are
 * known, may overwrite its input (each work-item reads x[i] then writes
 * y[i]). */
const tgc_kernel_def tgc_gpu_kernels_nn[] = {
    {.op = "MatMul", .fn = tgc_gpu_matmul, .forward_input = -1, .dtypes = F32_F16, .fuses_activation = true,
     .fuses_activation_half = true,
     .footprint = tgc_gpu_matmul_footprint},
    {.op = "Gemm", .fn = tgc_gpu_gemm, .forward_input = -1, .dtypes = F32_F16, .fuses_activation = true,
     .fuses_activation_half = true},
    {.op = "Conv", .fn = tgc_gpu_conv, .forward_input = -1, .dtypes = F32_F16, .fuses_activation = true,
     .fuses_activation_half = true},
    {.op = "MaxPool", .fn = max_pool_gpu, .forward_input = -1, .dtypes = F32_F16},
    {.op = "AveragePool", .fn = average_pool_gpu, .forward_input = -1, .dtypes = F32_F16},
    {.op = "GlobalAveragePool", .fn = global_average_pool_gpu, .forward_input = -1,
     .dtypes = F32_F16},
    {.op = "BatchNormalization", .fn = batch_norm_gpu, .forward_input = 0,
     .dtypes = F32_F16},
    {.op = "LayerNormalization", .fn = layer_norm_gpu, .forward_input = -1,
     .dtypes = F32_F16},
    {.op = NULL},
};
