/* The gpu Resize kernel (float32, every mode of the cpu kernel) and the
 * registry's list of the family, tgc_gpu_kernels_resize. Device code:
 * kernels/resize.cl.
 *
 * The host reads the node as the cpu does (devices/resize_geometry.c),
 * sizes and allocates Y (the kernel sizes its output: scales are float
 * values inference cannot track), builds each resized axis's sampling
 * table, uploads the tables to one scratch pair (indices and flags as ints,
 * weights as floats) and enqueues resize_f32 over Y's elements. Weights
 * and sums are float here, double on the cpu: results agree to float
 * rounding. Bilinear resizes of the last two axes that ONNX Runtime's
 * arithmetic serves take resize_bilinear_f32 instead, bit for bit the cpu
 * kernel's (devices/resize_geometry.h). */
#include "devices/kernel_checks.h"
#include "devices/opencl/opencl.h"
#include "devices/resize_geometry.h"

#include "support/alloc.h"
#include "support/checked.h"

#include <limits.h>
#include <string.h>

/* resize.cl's resize_geom, field for field. */
typedef struct tgc_cl_resize_geom {
    cl_long rank;
    cl_long out[8], in_stride[8], taps[8], off[8], flag_off[8];
} tgc_cl_resize_geom;

_Static_assert(TGC_MAX_RANK <= 8, "resize.cl handles up to 8 axes");

/* Builds every resized axis's table into the host arrays *ti (indices, then
 * flags) and *tw (weights), filling cg's taps and offsets. */
static tgc_status build_tables(tgc_kernel_ctx *c, const tgc_resize_geometry *g, tgc_cl_resize_geom *cg, cl_int **ti,
                               cl_float **tw, size_t *n_ti, size_t *n_tw) {
    tgc_resize_taps t[TGC_MAX_RANK];
    memset(t, 0, sizeof t);
    size_t entries = 0, flags = 0;
    tgc_status st = TGC_OK;
    for (int a = 0; a < g->rank && st == TGC_OK; a++) {
        if (tgc_resize_axis_identity(g, a)) continue;
        st = tgc_resize_taps_make(c, g, a, &t[a]);
        if (st != TGC_OK) break;
        cg->taps[a] = t[a].n;
        cg->off[a] = (cl_long)entries;
        entries += (size_t)t[a].n_out * (size_t)t[a].n; /* each table fitted in host memory */
        flags += (size_t)t[a].n_out;
    }
    *n_ti = entries + flags;
    *n_tw = entries;
    *ti = st == TGC_OK ? tgc_calloc(*n_ti ? *n_ti : 1, sizeof **ti) : NULL;
    *tw = st == TGC_OK ? tgc_calloc(*n_tw ? *n_tw : 1, sizeof **tw) : NULL;
    if (st == TGC_OK && (*ti == NULL || *tw == NULL)) {
        st = TGC_ERR_NOMEM;
        tgc_kernel_fail(c, "Resize: no host memory for the sampling tables");
    }
    size_t at_flag = entries;
    for (int a = 0; a < g->rank && st == TGC_OK; a++) {
        if (cg->taps[a] == 0) continue;
        size_t e = (size_t)cg->off[a], n = (size_t)t[a].n_out * (size_t)t[a].n;
        for (size_t i = 0; i < n; i++) {
            (*ti)[e + i] = (cl_int)t[a].index[i];
            (*tw)[e + i] = (cl_float)t[a].weight[i];
        }
        cg->flag_off[a] = (cl_long)at_flag;
        for (int64_t j = 0; j < t[a].n_out; j++) (*ti)[at_flag++] = t[a].outside[j];
    }
    for (int a = 0; a < g->rank; a++) tgc_resize_taps_free(&t[a]);
    return st;
}

/* Copies n bytes of the host block *p into m and gives the block up
 * (tgc_cl_upload_owned: within a step, without waiting); *p becomes NULL. */
static tgc_status upload(tgc_kernel_ctx *c, cl_mem m, void *p, size_t n) {
    void **block = p;
    tgc_status st = tgc_cl_upload_owned(c, m, *block, n);
    *block = NULL;
    return st;
}

/* The bilinear path (tgc_resize_bilinear_applies): ORT's tables, made on
 * the host and uploaded, then resize_bilinear_f32 over Y's elements. */
static tgc_status resize_bilinear_gpu(tgc_kernel_ctx *c, const tgc_resize_geometry *g, int64_t total) {
    int ah = g->rank - 2, aw = g->rank - 1;
    int64_t n = 0;
    bool fits = tgc_resize_bilinear_len(g, &n); /* then n int64s, ints and floats fit */
    size_t ibytes = (size_t)n * sizeof(cl_int), wbytes = (size_t)n * sizeof(cl_float);
    int64_t *i64 = fits ? tgc_malloc((size_t)n * sizeof *i64 + 1) : NULL;
    cl_int *ti = i64 != NULL ? tgc_malloc(ibytes + 1) : NULL;
    cl_float *tw = ti != NULL ? tgc_malloc(wbytes + 1) : NULL;
    tgc_status st = tw != NULL ? TGC_OK : tgc_kernel_fail(c, "Resize: no host memory for the bilinear tables");
    cl_mem mi = NULL, mw = NULL;
    tgc_buffer *bi = NULL, *bw = NULL;
    if (st == TGC_OK) {
        tgc_resize_bilinear h, w;
        tgc_resize_bilinear_tables(g, i64, tw, &h, &w);
        for (int64_t i = 0; i < n; i++) ti[i] = (cl_int)i64[i]; /* < in, which fits an int (checked) */
        bi = tgc_cl_scratch(c->device, ibytes);
        bw = tgc_cl_scratch(c->device, wbytes);
        if (bi == NULL || bw == NULL)
            st = tgc_kernel_fail_nomem(c, "Resize: out of device memory for the bilinear tables");
        else mi = bi->mem, mw = bw->mem;
    }
    if (st == TGC_OK) st = upload(c, mi, &ti, ibytes);
    if (st == TGC_OK) st = upload(c, mw, &tw, wbytes);
    if (st == TGC_OK) {
        size_t global = (size_t)total;
        tgc_cl_arg args[] = {TGC_CL_BUF(c->inputs[0].buf), TGC_CL_BUF(c->outputs[0].buf), {sizeof(cl_mem), &mi},
                             {sizeof(cl_mem), &mw},         TGC_CL_LONG(g->in[ah]),         TGC_CL_LONG(g->in[aw]),
                             TGC_CL_LONG(g->out[ah]),       TGC_CL_LONG(g->out[aw]),        TGC_CL_LONG(total)};
        st = tgc_cl_enqueue(c, "resize_bilinear_f32", 1, &global, NULL, 9, args);
    }
    tgc_cl_scratch_release(bi);
    tgc_cl_scratch_release(bw);
    tgc_free(i64);
    tgc_free(ti);
    tgc_free(tw);
    return st;
}

static tgc_status resize_gpu(tgc_kernel_ctx *c) {
    const tgc_value *x = &c->inputs[0];
    tgc_status st = c->n_inputs >= 1 ? tgc_kernel_check_tensor(c, "input", 0, x, false)
                                     : tgc_kernel_fail(c, "Resize: needs input X");
    if (st == TGC_OK) st = tgc_kernel_need_f32(c, x, "input X");
    tgc_resize_geometry g;
    if (st == TGC_OK) st = tgc_resize_geometry_read(c, &g);
    if (st != TGC_OK) return st;
    for (int d = 0; d < g.rank; d++)
        if (g.in[d] > INT_MAX) return tgc_kernel_fail(c, "Resize: axis %d passes the gpu kernel's int range", d);
    if ((st = tgc_kernel_alloc_output(c, 0, g.rank, g.out)) != TGC_OK) return st;
    if ((st = tgc_kernel_need_f32(c, &c->outputs[0], "output Y")) != TGC_OK) return st;
    int64_t total = tgc_value_numel(&c->outputs[0]);
    if (total == 0) return TGC_OK;
    if (tgc_resize_bilinear_applies(&g)) return resize_bilinear_gpu(c, &g, total);
    tgc_cl_resize_geom cg;
    memset(&cg, 0, sizeof cg);
    cg.rank = g.rank;
    int64_t stride = 1;
    for (int d = g.rank - 1; d >= 0; d--) {
        cg.out[d] = g.out[d];
        cg.in_stride[d] = stride;
        stride *= g.in[d];
    }
    cl_int *ti = NULL;
    cl_float *tw = NULL;
    size_t n_ti = 0, n_tw = 0;
    st = build_tables(c, &g, &cg, &ti, &tw, &n_ti, &n_tw);
    cl_mem mi = NULL, mw = NULL;
    tgc_buffer *bi = NULL, *bw = NULL;
    if (st == TGC_OK) {
        bi = tgc_cl_scratch(c->device, n_ti * sizeof *ti);
        bw = tgc_cl_scratch(c->device, n_tw * sizeof *tw);
        if (bi == NULL || bw == NULL)
            st = tgc_kernel_fail_nomem(c, "Resize: out of device memory for the sampling tables");
        else mi = bi->mem, mw = bw->mem;
    }
    if (st == TGC_OK && n_ti > 0) st = upload(c, mi, &ti, n_ti * sizeof *ti);
    if (st == TGC_OK && n_tw > 0) st = upload(c, mw, &tw, n_tw * sizeof *tw);
    if (st == TGC_OK) {
        size_t global = (size_t)total;
        tgc_cl_arg args[] = {TGC_CL_BUF(x->buf),         TGC_CL_BUF(c->outputs[0].buf),
                             {sizeof(cl_mem), &mi},      {sizeof(cl_mem), &mw},
                             TGC_CL_BYTES(&cg, sizeof cg), TGC_CL_FLOAT((float)g.extrapolation),
                             TGC_CL_LONG(total)};
        st = tgc_cl_enqueue(c, "resize_f32", 1, &global, NULL, 7, args);
    }
    /* Released after the enqueue: later users of the memory come after the kernel on the queue. */
    tgc_cl_scratch_release(bi);
    tgc_cl_scratch_release(bw);
    tgc_free(ti);
    tgc_free(tw);
    return st;
}

const tgc_kernel_def tgc_gpu_kernels_resize[] = {
    {.op = "Resize", .fn = resize_gpu, .host_inputs = (1u << 1) | (1u << 2) | (1u << 3),
     .forward_input = -1, .sizes_outputs = true, .dtypes = {TGC_FLOAT32, TGC_DTYPE_INVALID}},
    {.op = NULL},
};
