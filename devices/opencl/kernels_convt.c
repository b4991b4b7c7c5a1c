/* The convolution-family and layout gpu kernels (OpenCL C in
 * kernels/convt.cl) and their table, tgc_gpu_kernels_convt:
 * ConvTranspose (float32, a direct gather: one work-item per output
 * element, no scratch), Pad, DepthToSpace and SpaceToDepth (any dtype of
 * 1, 2, 4 or 8 bytes, moved by element size), InstanceNormalization,
 * GlobalMaxPool and GlobalLpPool (a work-group per plane), LRN and LpPool
 * (one work-item per output; float32). Each checks
 * its arguments as the cpu kernel does, through the same readers
 * (devices/convt_geometry.h, devices/pad_geometry.h, devices/window.h), so
 * both devices accept the same nodes; then enqueues without waiting. */
#include "devices/convt_geometry.h"
#include "devices/opencl/cl_kernel_util.h"
#include "devices/opencl/kernels_nn.h"
#include "devices/pad_geometry.h"
#include "devices/window.h"
#include "support/checked.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#define CT_MAX_AXES 8
#define CT_GROUP 64 /* convt.cl's work-group size for the plane reductions */

/* A cl_mem as a kernel argument. */
#define CT_MEM(m) ((tgc_cl_arg){sizeof(cl_mem), &(m)})

/* ---- ConvTranspose ------------------------------------------------------------------------ */

/* convt.cl's ct_geom. */
typedef struct cl_ct_geom {
    cl_int n;
    cl_int in[CT_MAX_AXES], out[CT_MAX_AXES], k[CT_MAX_AXES], s[CT_MAX_AXES], d[CT_MAX_AXES], pb[CT_MAX_AXES];
} cl_ct_geom;

static tgc_status conv_transpose_gpu(tgc_kernel_ctx *c) {
    tgc_status st = tgc_cl_check(c, 2, 1, 0);
    tgc_convt_geometry g;
    if (st == TGC_OK) st = tgc_convt_read(c, &g);
    if (st != TGC_OK) return st;
    if (g.n > CT_MAX_AXES) return tgc_kernel_fail(c, "%d spatial axes; the gpu kernel takes at most %d", g.n, CT_MAX_AXES);
    cl_ct_geom cg;
    memset(&cg, 0, sizeof cg);
    cg.n = g.n;
    /* o + pb - t * d stays an int: every term below INT_MAX / 4 */
    for (int a = 0; a < g.n; a++) {
        int64_t v[] = {g.in[a], g.out[a], g.kernel[a], g.strides[a], g.dilations[a], g.pad_begin[a] < 0 ? -g.pad_begin[a] : g.pad_begin[a]};
        for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
            if (v[i] > INT_MAX / 4) return tgc_kernel_fail(c, "spatial axis %d's sizes pass the gpu kernel's int range", a);
        int64_t reach; /* the tap offset t * d */
        if (!tgc_checked_mul_i64(g.kernel[a] - 1, g.dilations[a], &reach) || reach > INT_MAX / 4)
            return tgc_kernel_fail(c, "spatial axis %d's kernel extent passes the gpu kernel's int range", a);
        cg.in[a] = (cl_int)g.in[a];
        cg.out[a] = (cl_int)g.out[a];
        cg.k[a] = (cl_int)g.kernel[a];
        cg.s[a] = (cl_int)g.strides[a];
        cg.d[a] = (cl_int)g.dilations[a];
        cg.pb[a] = (cl_int)g.pad_begin[a];
    }
    const int64_t ints[] = {g.channels, g.cg, g.mg, g.m_count, g.in_size, g.out_size, g.kk_count};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if (ints[i] > INT_MAX) return tgc_kernel_fail(c, "ConvTranspose's sizes pass the gpu kernel's int range");
    int64_t total = tgc_value_numel(&c->outputs[0]);
    if (total == 0) return TGC_OK;
    cl_mem bm = g.has_bias ? c->inputs[2].buf->mem : c->inputs[1].buf->mem; /* a placeholder without B */
    if (g.in_size == 0 || g.cg == 0) g.kk_count = 0; /* nothing to gather: Y is the bias */
    tgc_cl_arg args[] = {TGC_CL_BUF(c->inputs[0].buf), TGC_CL_BUF(c->inputs[1].buf), CT_MEM(bm),
                         TGC_CL_BUF(c->outputs[0].buf), TGC_CL_INT(g.has_bias), TGC_CL_BYTES(&cg, sizeof cg),
                         TGC_CL_INT((cl_int)g.channels), TGC_CL_INT((cl_int)g.cg), TGC_CL_INT((cl_int)g.mg),
                         TGC_CL_INT((cl_int)g.m_count), TGC_CL_INT((cl_int)g.in_size), TGC_CL_INT((cl_int)g.out_size),
                         TGC_CL_INT((cl_int)g.kk_count), TGC_CL_LONG(total)};
    return tgc_cl_run1d(c, "ct_conv_transpose_f32", total, 14, args);
}

/* ---- Pad, DepthToSpace, SpaceToDepth --------------------------------------------------------- */

/* The kernel `stem` for elements of esize bytes ("ct_pad_uint"), or NULL. */
static const char *by_size(const char *stem, size_t esize, char *buf, size_t size) {
    const char *t = esize == 1 ? "uchar" : esize == 2 ? "ushort" : esize == 4 ? "uint" : esize == 8 ? "ulong" : NULL;
    if (t == NULL) return NULL;
    snprintf(buf, size, "%s_%s", stem, t);
    return buf;
}

/* convt.cl's ct_pad. */
typedef struct cl_ct_pad {
    cl_long rank, mode;
    cl_long in[CT_MAX_AXES], out[CT_MAX_AXES], lo[CT_MAX_AXES], kept[CT_MAX_AXES], begin[CT_MAX_AXES];
} cl_ct_pad;

static tgc_status pad_gpu(tgc_kernel_ctx *c) {
    tgc_status st = tgc_cl_check(c, 2, 1, (1u << 1) | (1u << 2) | (1u << 3));
    tgc_pad_geometry p;
    if (st == TGC_OK) st = tgc_pad_read(c, &p);
    if (st != TGC_OK) return st;
    char name[48];
    if (by_size("ct_pad", p.esize, name, sizeof name) == NULL || p.rank > CT_MAX_AXES)
        return tgc_kernel_fail(c, "the gpu Pad moves elements of 1, 2, 4 or 8 bytes, rank <= %d", CT_MAX_AXES);
    int64_t total = tgc_value_numel(&c->outputs[0]);
    if (total == 0) return TGC_OK;
    cl_ct_pad g;
    memset(&g, 0, sizeof g);
    g.rank = p.rank;
    g.mode = p.mode == TGC_PAD_CONSTANT ? 0 : p.mode == TGC_PAD_REFLECT ? 1 : 2;
    for (int a = 0; a < p.rank; a++) {
        g.in[a] = p.in[a];
        g.out[a] = p.out[a];
        g.lo[a] = p.lo[a];
        g.kept[a] = p.kept[a];
        g.begin[a] = p.begin[a];
    }
    tgc_cl_arg args[] = {TGC_CL_BUF(c->inputs[0].buf), TGC_CL_BUF(c->outputs[0].buf),
                         TGC_CL_BYTES(p.constant, p.esize), TGC_CL_BYTES(&g, sizeof g), TGC_CL_LONG(total)};
    return tgc_cl_run1d(c, name, total, 5, args);
}

/* Checks [N, C, H, W] in and out of one dtype of 1, 2, 4 or 8 bytes;
 * the kernel's name for it in name. */
static tgc_status block_setup(tgc_kernel_ctx *c, const char *stem, int64_t *b, char *name, size_t size) {
    tgc_status st = tgc_cl_check(c, 1, 1, 0);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    *b = tgc_kernel_attr_int(c, "blocksize", 0);
    if (*b < 1 || *b > INT32_MAX) return tgc_kernel_fail(c, "attribute 'blocksize' is %lld; it must be >= 1", (long long)*b);
    if (x->rank != 4 || y->rank != 4 || x->dtype != y->dtype)
        return tgc_kernel_fail(c, "input and output must be [N, C, H, W] of one dtype");
    if (by_size(stem, tgc_dtype_size(x->dtype), name, size) == NULL)
        return tgc_kernel_fail(c, "the gpu kernel moves elements of 1, 2, 4 or 8 bytes");
    return TGC_OK;
}

static tgc_status depth_to_space_gpu(tgc_kernel_ctx *c) {
    int64_t b;
    char name[48];
    tgc_status st = block_setup(c, "ct_depth_to_space", &b, name, sizeof name);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    const char *mode = tgc_kernel_attr_string(c, "mode", "DCR");
    bool crd = strcmp(mode, "CRD") == 0;
    if (!crd && strcmp(mode, "DCR") != 0) return tgc_kernel_fail(c, "attribute 'mode' is '%s'; it must be DCR or CRD", mode);
    int64_t ci = x->dims[1], h = x->dims[2], w = x->dims[3], co = ci / (b * b);
    if (ci % (b * b) != 0 || y->dims[0] != x->dims[0] || y->dims[1] != co || y->dims[2] != h * b || y->dims[3] != w * b)
        return tgc_kernel_fail(c, "output must be [N, C / %lld, H * %lld, W * %lld] for the input", (long long)(b * b),
                               (long long)b, (long long)b);
    int64_t total = tgc_value_numel(y);
    tgc_cl_arg args[] = {TGC_CL_BUF(x->buf), TGC_CL_BUF(y->buf), TGC_CL_LONG(b), TGC_CL_INT(crd), TGC_CL_LONG(co),
                         TGC_CL_LONG(h), TGC_CL_LONG(w), TGC_CL_LONG(total)};
    return tgc_cl_run1d(c, name, total, 8, args);
}

static tgc_status space_to_depth_gpu(tgc_kernel_ctx *c) {
    int64_t b;
    char name[48];
    tgc_status st = block_setup(c, "ct_space_to_depth", &b, name, sizeof name);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    int64_t ci = x->dims[1], h = x->dims[2], w = x->dims[3];
    if (h % b != 0 || w % b != 0 || y->dims[0] != x->dims[0] || y->dims[1] != ci * b * b || y->dims[2] != h / b ||
        y->dims[3] != w / b)
        return tgc_kernel_fail(c, "output must be [N, C * %lld, H / %lld, W / %lld] for the input", (long long)(b * b),
                               (long long)b, (long long)b);
    int64_t total = tgc_value_numel(y);
    tgc_cl_arg args[] = {TGC_CL_BUF(x->buf), TGC_CL_BUF(y->buf), TGC_CL_LONG(b), TGC_CL_LONG(ci),
                         TGC_CL_LONG(h), TGC_CL_LONG(w), TGC_CL_LONG(total)};
    return tgc_cl_run1d(c, name, total, 7, args);
}

/* ---- InstanceNormalization, GlobalMaxPool, LRN ------------------------------------------------- */

/* Checks a float32 X [N, C, ...] and Y of its shape. */
static tgc_status like_input_f32(tgc_kernel_ctx *c, int min_inputs) {
    tgc_status st = tgc_cl_check(c, min_inputs, 1, 0);
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    if (st == TGC_OK) st = tgc_kernel_need_f32(c, x, "input X");
    if (st == TGC_OK) st = tgc_kernel_need_f32(c, y, "output Y");
    if (st != TGC_OK) return st;
    if (x->rank < 2 || y->rank != x->rank || memcmp(x->dims, y->dims, (size_t)x->rank * sizeof *x->dims) != 0)
        return tgc_kernel_fail(c, "input X must be [N, C, ...] and Y of its shape");
    return TGC_OK;
}

static tgc_status instance_norm_gpu(tgc_kernel_ctx *c) {
    tgc_status st = like_input_f32(c, 3);
    if (st == TGC_OK) st = tgc_kernel_need_f32(c, &c->inputs[1], "input scale");
    if (st == TGC_OK) st = tgc_kernel_need_f32(c, &c->inputs[2], "input B");
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0];
    for (int i = 1; i < 3; i++)
        if (c->inputs[i].rank != 1 || c->inputs[i].dims[0] != x->dims[1])
            return tgc_kernel_fail(c, "input %d must be [C = %lld]", i, (long long)x->dims[1]);
    int64_t total = tgc_value_numel(x), planes = x->dims[0] * x->dims[1];
    if (total == 0) return TGC_OK;
    float eps = (float)tgc_kernel_attr_float(c, "epsilon", 1e-5);
    size_t global = (size_t)planes * CT_GROUP, local = CT_GROUP;
    tgc_cl_arg args[] = {TGC_CL_BUF(x->buf), TGC_CL_BUF(c->outputs[0].buf), TGC_CL_BUF(c->inputs[1].buf),
                         TGC_CL_BUF(c->inputs[2].buf), TGC_CL_FLOAT(eps), TGC_CL_LONG(x->dims[1]),
                         TGC_CL_LONG(total / planes)};
    return tgc_cl_enqueue(c, "ct_instance_norm_f32", 1, &global, &local, 7, args);
}

static tgc_status global_max_pool_gpu(tgc_kernel_ctx *c) {
    tgc_status st = tgc_cl_check(c, 1, 1, 0);
    int64_t planes, size;
    if (st == TGC_OK) st = tgc_window_read_global_pool(c, &planes, &size);
    if (st != TGC_OK || planes == 0) return st;
    size_t global = (size_t)planes * CT_GROUP, local = CT_GROUP;
    tgc_cl_arg args[] = {TGC_CL_BUF(c->inputs[0].buf), TGC_CL_BUF(c->outputs[0].buf), TGC_CL_LONG(size)};
    return tgc_cl_enqueue(c, "ct_global_max_pool_f32", 1, &global, &local, 3, args);
}

static tgc_status lrn_gpu(tgc_kernel_ctx *c) {
    tgc_status st = like_input_f32(c, 1);
    if (st != TGC_OK) return st;
    int64_t size = tgc_kernel_attr_int(c, "size", 0);
    if (size < 1 || size > INT32_MAX) return tgc_kernel_fail(c, "attribute 'size' is %lld; it must be >= 1", (long long)size);
    const tgc_value *x = &c->inputs[0];
    int64_t total = tgc_value_numel(x);
    if (total == 0) return TGC_OK;
    int64_t before = (size - 1) / 2, after = size - 1 - before, spatial = total / (x->dims[0] * x->dims[1]);
    tgc_cl_arg args[] = {TGC_CL_BUF(x->buf), TGC_CL_BUF(c->outputs[0].buf),
                         TGC_CL_FLOAT((float)tgc_kernel_attr_float(c, "alpha", 1e-4)),
                         TGC_CL_FLOAT((float)tgc_kernel_attr_float(c, "beta", 0.75)),
                         TGC_CL_FLOAT((float)tgc_kernel_attr_float(c, "bias", 1.0)), TGC_CL_INT((cl_int)size),
                         TGC_CL_INT((cl_int)before), TGC_CL_INT((cl_int)after), TGC_CL_LONG(x->dims[1]),
                         TGC_CL_LONG(spatial), TGC_CL_LONG(total)};
    return tgc_cl_run1d(c, "ct_lrn_f32", total, 11, args);
}

static tgc_status read_p(tgc_kernel_ctx *c, int64_t *p) {
    *p = tgc_kernel_attr_int(c, "p", 2);
    if (*p < 1 || *p > INT32_MAX) return tgc_kernel_fail(c, "attribute 'p' is %lld; it must be >= 1", (long long)*p);
    return TGC_OK;
}

static tgc_status lp_pool_gpu(tgc_kernel_ctx *c) {
    tgc_status st = tgc_cl_check(c, 1, 1, 0);
    tgc_window w;
    tgc_cl_window cw;
    int64_t planes, in_size, out_size, kk, p;
    if (st == TGC_OK) st = tgc_window_read_pool(c, &w, &planes, &in_size, &out_size, &kk);
    if (st == TGC_OK) st = tgc_cl_nn_window(c, &w, &cw); /* int ranges checked there */
    if (st == TGC_OK) st = read_p(c, &p);
    if (st != TGC_OK) return st;
    int64_t total = planes * out_size;
    tgc_cl_arg args[] = {TGC_CL_BUF(c->inputs[0].buf), TGC_CL_BUF(c->outputs[0].buf), TGC_CL_INT((cl_int)p),
                         TGC_CL_BYTES(&cw, sizeof cw), TGC_CL_INT((cl_int)in_size), TGC_CL_INT((cl_int)out_size),
                         TGC_CL_INT((cl_int)kk), TGC_CL_LONG(total)};
    return tgc_cl_run1d(c, "ct_lp_pool_f32", total, 8, args);
}

static tgc_status global_lp_pool_gpu(tgc_kernel_ctx *c) {
    tgc_status st = tgc_cl_check(c, 1, 1, 0);
    int64_t planes, size, p;
    if (st == TGC_OK) st = tgc_window_read_global_pool(c, &planes, &size);
    if (st == TGC_OK) st = read_p(c, &p);
    if (st != TGC_OK || planes == 0) return st;
    size_t global = (size_t)planes * CT_GROUP, local = CT_GROUP;
    tgc_cl_arg args[] = {TGC_CL_BUF(c->inputs[0].buf), TGC_CL_BUF(c->outputs[0].buf), TGC_CL_INT((cl_int)p),
                         TGC_CL_LONG(size)};
    return tgc_cl_enqueue(c, "ct_global_lp_pool_f32", 1, &global, &local, 4, args);
}

/* ---- The family -------------------------------------------------------------------------------- */

#define F32_ONLY {TGC_FLOAT32, TGC_DTYPE_INVALID}
#define ANY_DTYPE {TGC_DTYPE_INVALID}

/* InstanceNormalization may overwrite its input (see convt.cl). */
const tgc_kernel_def tgc_gpu_kernels_convt[] = {
    {.op = "ConvTranspose", .fn = conv_transpose_gpu, .forward_input = -1, .dtypes = F32_ONLY},
    {.op = "Pad", .fn = pad_gpu, .host_inputs = (1u << 1) | (1u << 2) | (1u << 3),
     .forward_input = -1, .dtypes = ANY_DTYPE},
    {.op = "DepthToSpace", .fn = depth_to_space_gpu, .forward_input = -1, .dtypes = ANY_DTYPE},
    {.op = "SpaceToDepth", .fn = space_to_depth_gpu, .forward_input = -1, .dtypes = ANY_DTYPE},
    {.op = "InstanceNormalization", .fn = instance_norm_gpu, .forward_input = 0,
     .dtypes = F32_ONLY},
    {.op = "GlobalMaxPool", .fn = global_max_pool_gpu, .forward_input = -1, .dtypes = F32_ONLY},
    {.op = "LRN", .fn = lrn_gpu, .forward_input = -1, .dtypes = F32_ONLY},
    {.op = "LpPool", .fn = lp_pool_gpu, .forward_input = -1, .dtypes = F32_ONLY},
    {.op = "GlobalLpPool", .fn = global_lp_pool_gpu, .forward_input = -1, .dtypes = F32_ONLY},
    {.op = NULL},
};
