/* The cpu Resize kernel (ONNX Resize-19, every mode; see
 * devices/resize_geometry.h) and the registry's list of the family,
 * tgc_cpu_kernels_resize.
 *
 * Resize is separable, so the kernel resizes one axis at a time, as ONNX's
 * reference does: X is widened to double, each resized axis in turn (the
 * shrinking ones first) maps [outer, in, inner] to [outer, out, inner] by
 * its sampling table, and the result is narrowed to X's dtype (integers
 * rounded half to even and saturated, as the reference's saturate_cast:
 * sample_types.h). float32 images (only the last two axes resized, nothing
 * outside the input) take a float32 path over output rows instead; linear
 * ones in the coordinate modes ONNX Runtime's UpsampleBilinear serves take
 * its arithmetic (upsample.h: float32 coordinates, four corner products
 * summed in its order), giving its values bit for bit, which dynamically
 * quantized models downstream need to round to the same integers. The
 * kernel sizes its own output: scales are float32 values inference cannot
 * track. */
#include "devices/kernel.h"
#include "devices/kernel_checks.h"
#include "devices/cpu/sample_types.h"
#include "devices/cpu/target_clones.h"
#include "devices/resize_geometry.h"

#include "support/alloc.h"
#include "support/checked.h"
#include "support/parallel_for.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* ---- One axis --------------------------------------------------------------------- */

/* One pass: src [outer, len, inner] -> dst [outer, t->n_out, inner]. Work
 * is split into blocks of output rows (o, j) sized from the shapes alone. */
typedef struct axis_pass {
    const double *src;
    double *dst;
    const tgc_resize_taps *t;
    int64_t len, inner, rows, rows_per_block;
    double extrapolation;
} axis_pass;

static void pass_block(void *arg, int64_t b, int slot) {
    (void)slot;
    const axis_pass *p = arg;
    const tgc_resize_taps *t = p->t;
    int64_t end = (b + 1) * p->rows_per_block < p->rows ? (b + 1) * p->rows_per_block : p->rows;
    for (int64_t row = b * p->rows_per_block; row < end; row++) {
        int64_t o = row / t->n_out, j = row % t->n_out;
        double *out = p->dst + row * p->inner;
        if (t->outside[j]) {
            for (int64_t i = 0; i < p->inner; i++) out[i] = p->extrapolation;
            continue;
        }
        const int64_t *idx = t->index + j * t->n;
        const double *w = t->weight + j * t->n;
        const double *base = p->src + o * p->len * p->inner;
        for (int64_t i = 0; i < p->inner; i++) out[i] = 0;
        for (int k = 0; k < t->n; k++) {
            if (w[k] == 0) continue;
            const double *in = base + idx[k] * p->inner;
            for (int64_t i = 0; i < p->inner; i++) out[i] += w[k] * in[i];
        }
    }
}

/* ---- float32 over the last two axes: images ---------------------------------------- */

/* The common case (an image's height and width, every other axis kept,
 * nothing outside the input) in float32, one output row at a time: the
 * height's taps blend whole input rows into one row (contiguous, it
 * vectorizes), then the width's taps sample that row. The weights are the
 * same tables' rounded to float32, so values differ from the double path
 * by float32 rounding only. */
typedef struct image_pass {
    const float *x;
    float *y;
    const tgc_resize_taps *th, *tw; /* NULL: the axis is kept */
    const float *wh, *ww;           /* their weights in float32 */
    int64_t in_h, in_w, out_h, out_w, rows, rows_per_block;
    float *blend;                   /* per pool slot: in_w floats for the blended row */
} image_pass;

static void image_block(void *arg, int64_t b, int slot) {
    const image_pass *p = arg;
    float *blend = p->blend != NULL ? p->blend + slot * p->in_w : NULL;
    int64_t end = (b + 1) * p->rows_per_block < p->rows ? (b + 1) * p->rows_per_block : p->rows;
    for (int64_t row = b * p->rows_per_block; row < end; row++) {
        int64_t o = row / p->out_h, j = row % p->out_h;
        const float *plane = p->x + o * p->in_h * p->in_w, *src = plane + j * p->in_w;
        if (p->th != NULL) {
            int n = p->th->n;
            for (int64_t i = 0; i < p->in_w; i++) blend[i] = 0.0f;
            for (int k = 0; k < n; k++) {
                float w = p->wh[j * n + k];
                if (w == 0.0f) continue;
                const float *restrict in = plane + p->th->index[j * n + k] * p->in_w;
                for (int64_t i = 0; i < p->in_w; i++) blend[i] += w * in[i];
            }
            src = blend;
        }
        float *restrict out = p->y + row * p->out_w;
        if (p->tw == NULL) {
            memcpy(out, src, (size_t)p->out_w * sizeof *out);
            continue;
        }
        int n = p->tw->n;
        const int64_t *idx = p->tw->index;
        for (int64_t q = 0; q < p->out_w; q++) {
            float acc = 0.0f;
            for (int k = 0; k < n; k++) acc += p->ww[q * n + k] * src[idx[q * n + k]];
            out[q] = acc;
        }
    }
}

/* An axis's table made and its weights rounded to float32 (*wf, owned by
 * the caller); false with *st set on failure, or when an output index
 * falls outside the input (tf_crop_and_resize: left to the double path). */
static bool image_axis(tgc_kernel_ctx *c, const tgc_resize_geometry *g, int a, tgc_resize_taps *t, float **wf,
                       tgc_status *st) {
    if ((*st = tgc_resize_taps_make(c, g, a, t)) != TGC_OK) return false;
    for (int64_t j = 0; j < t->n_out; j++)
        if (t->outside[j]) return false;
    size_t nbytes;
    *wf = tgc_checked_nbytes(t->n_out * t->n, sizeof **wf, &nbytes) ? tgc_malloc(nbytes ? nbytes : 1) : NULL;
    if (*wf == NULL) {
        *st = tgc_kernel_fail(c, "Resize: no host memory for a sampling table");
        return false;
    }
    for (int64_t i = 0; i < t->n_out * t->n; i++) (*wf)[i] = (float)t->weight[i];
    return true;
}

/* Runs the image path when it applies (float32, only the last two axes
 * resized); true when it ran or failed (*st says which). */
static bool resize_image_f32(tgc_kernel_ctx *c, const tgc_resize_geometry *g, tgc_status *st) {
    if (c->inputs[0].dtype != TGC_FLOAT32 || g->rank < 2) return false;
    for (int a = 0; a < g->rank - 2; a++)
        if (!tgc_resize_axis_identity(g, a)) return false;
    int ah = g->rank - 2, aw = g->rank - 1;
    bool keep_h = tgc_resize_axis_identity(g, ah), keep_w = tgc_resize_axis_identity(g, aw);
    if (keep_h && keep_w) return false;
    tgc_resize_taps th = {0}, tw = {0};
    float *wh = NULL, *ww = NULL;
    bool ok = (keep_h || image_axis(c, g, ah, &th, &wh, st)) && (keep_w || image_axis(c, g, aw, &tw, &ww, st));
    bool ran = ok || *st != TGC_OK;
    float *blend = NULL;
    if (ok && !keep_h) { /* one blended row per pool slot */
        size_t nbytes;
        int64_t floats;
        bool fits = tgc_checked_mul_i64(tgc_parallel_width(c->pool), g->in[aw], &floats) &&
                    tgc_checked_nbytes(floats, sizeof *blend, &nbytes);
        blend = fits ? tgc_malloc(nbytes ? nbytes : 1) : NULL;
        if (blend == NULL) {
            ok = false;
            *st = tgc_kernel_fail(c, "Resize: no host memory for the blended rows");
            ran = true;
        }
    }
    if (ok) {
        image_pass p = {.x = tgc_kernel_in_ptr(c, 0), .y = tgc_kernel_out_ptr(c, 0), .th = keep_h ? NULL : &th,
                        .tw = keep_w ? NULL : &tw, .wh = wh, .ww = ww, .in_h = g->in[ah], .in_w = g->in[aw],
                        .out_h = g->out[ah], .out_w = g->out[aw], .blend = blend};
        p.rows = tgc_value_numel(&c->outputs[0]) / p.out_w;
        int64_t row_work = p.out_w > p.in_w ? p.out_w : p.in_w;
        p.rows_per_block = row_work >= 16384 ? 1 : 16384 / (row_work > 0 ? row_work : 1);
        tgc_parallel_for(c->pool, (p.rows + p.rows_per_block - 1) / p.rows_per_block, image_block, &p);
    }
    tgc_free(blend);
    tgc_free(wh);
    tgc_free(ww);
    tgc_resize_taps_free(&th);
    tgc_resize_taps_free(&tw);
    return ran;
}

/* ---- Bilinear over the last two axes, as ONNX Runtime computes it ---------------------- */

typedef struct bilinear_pass {
    const float *x;
    float *y;
    tgc_resize_bilinear h, w;
    int64_t in_h, in_w, out_h, out_w, rows, rows_per_block;
    float *corners; /* per pool slot: 4 * out_w floats (gather_corners) */
} bilinear_pass;

/* The bilinear rows: each value the sum of the four corner products in
 * ONNX Runtime's order (UpsampleBilinear), each product and sum rounded on
 * its own (no fused multiply-add, as ORT's baseline x86-64 build, whatever
 * flags tgc is built with), so float32 rounds as there: the same bits,
 * which a dynamically quantized model downstream turns into the same
 * integers. NO_FP_CONTRACT keeps GCC from contracting them. */
#if defined(__GNUC__) && !defined(__clang__)
#define NO_FP_CONTRACT __attribute__((optimize("fp-contract=off")))
#else
#define NO_FP_CONTRACT
#endif

/* The four corners of every output column from input rows r1 and r2:
 * g[0 .. n) = r1[x1], then r1[x2], r2[x1], r2[x2] (n = out_w each). */
static void gather_corners(const float *r1, const float *r2, const tgc_resize_bilinear *w, int64_t out_w, float *g) {
    for (int64_t q = 0; q < out_w; q++) {
        int64_t x1 = w->i1[q], x2 = w->i2[q];
        g[q] = r1[x1];
        g[out_w + q] = r1[x2];
        g[2 * out_w + q] = r2[x1];
        g[3 * out_w + q] = r2[x2];
    }
}

/* One output row from its gathered corners g (weights dy2 and dy1 of its
 * rows): contiguous, it vectorizes, each lane's products and sums those of
 * the scalar formula. */
NO_FP_CONTRACT TGC_CPU_CLONES static void bilinear_row(const float *restrict g, float dy2, float dy1,
                                                       const float *restrict w1, const float *restrict w2,
                                                       int64_t out_w, float *restrict out) {
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif
    const float *restrict g11 = g, *restrict g12 = g + out_w, *restrict g21 = g + 2 * out_w,
                          *restrict g22 = g + 3 * out_w;
    for (int64_t q = 0; q < out_w; q++) {
        float dx2 = w1[q], dx1 = w2[q];
        out[q] = dx2 * dy2 * g11[q] + dx1 * dy2 * g12[q] + dx2 * dy1 * g21[q] + dx1 * dy1 * g22[q];
    }
}

/* Output rows [b * rows_per_block, ...); rows that read the same two
 * input rows (an upsampling's runs) gather their corners once. */
static void bilinear_block(void *arg, int64_t b, int slot) {
    const bilinear_pass *p = arg;
    float *g = p->corners + slot * 4 * p->out_w;
    const float *last1 = NULL, *last2 = NULL;
    int64_t end = (b + 1) * p->rows_per_block < p->rows ? (b + 1) * p->rows_per_block : p->rows;
    for (int64_t row = b * p->rows_per_block; row < end; row++) {
        int64_t o = row / p->out_h, j = row % p->out_h;
        const float *plane = p->x + o * p->in_h * p->in_w;
        const float *r1 = plane + p->h.i1[j] * p->in_w, *r2 = plane + p->h.i2[j] * p->in_w;
        if (r1 != last1 || r2 != last2) gather_corners(r1, r2, &p->w, p->out_w, g);
        last1 = r1, last2 = r2;
        bilinear_row(g, p->h.w1[j], p->h.w2[j], p->w.w1, p->w.w2, p->out_w, p->y + row * p->out_w);
    }
}

/* float32 bilinear over the last two axes where tgc_resize_bilinear_applies:
 * ONNX Runtime's arithmetic, value for value. true when it ran or failed
 * (*st says which). */
static bool resize_bilinear_f32(tgc_kernel_ctx *c, const tgc_resize_geometry *g, tgc_status *st) {
    if (c->inputs[0].dtype != TGC_FLOAT32 || !tgc_resize_bilinear_applies(g)) return false;
    int ah = g->rank - 2, aw = g->rank - 1;
    int64_t n = 0, corner_floats;
    bool fits = tgc_resize_bilinear_len(g, &n) && /* then n int64s and n floats fit */
                tgc_checked_mul_i64(4 * (int64_t)tgc_parallel_width(c->pool), g->out[aw], &corner_floats) &&
                corner_floats <= INT64_MAX / (int64_t)sizeof(float);
    int64_t *idx = fits ? tgc_malloc((size_t)n * sizeof *idx + 1) : NULL;
    float *wt = fits ? tgc_malloc((size_t)n * sizeof *wt + 1) : NULL;
    float *corners = fits ? tgc_malloc((size_t)corner_floats * sizeof *corners + 1) : NULL;
    if (idx == NULL || wt == NULL || corners == NULL) {
        tgc_free(idx);
        tgc_free(wt);
        tgc_free(corners);
        *st = tgc_kernel_fail(c, "Resize: no host memory for the bilinear tables");
        return true;
    }
    bilinear_pass p = {.x = tgc_kernel_in_ptr(c, 0), .y = tgc_kernel_out_ptr(c, 0), .in_h = g->in[ah],
                       .in_w = g->in[aw], .out_h = g->out[ah], .out_w = g->out[aw], .corners = corners};
    tgc_resize_bilinear_tables(g, idx, wt, &p.h, &p.w);
    p.rows = tgc_value_numel(&c->outputs[0]) / p.out_w;
    p.rows_per_block = p.out_w >= 4096 ? 1 : 4096 / p.out_w;
    tgc_parallel_for(c->pool, (p.rows + p.rows_per_block - 1) / p.rows_per_block, bilinear_block, &p);
    tgc_free(idx);
    tgc_free(wt);
    tgc_free(corners);
    *st = TGC_OK;
    return true;
}

/* ---- The kernel ------------------------------------------------------------------- */

/* Allocates a double buffer of n elements, or fails naming the need. */
static double *doubles(tgc_kernel_ctx *c, int64_t n) {
    size_t nbytes;
    double *p = tgc_checked_nbytes(n, sizeof(double), &nbytes) ? tgc_malloc(nbytes ? nbytes : 1) : NULL;
    if (p == NULL) tgc_kernel_fail(c, "Resize: no host memory for %lld intermediate values", (long long)n);
    return p;
}

static tgc_status resize_cpu(tgc_kernel_ctx *c) {
    const tgc_value *x = &c->inputs[0];
    tgc_status st = c->n_inputs >= 1 ? tgc_kernel_check_tensor(c, "input", 0, x, true)
                                     : tgc_kernel_fail(c, "Resize: needs input X");
    tgc_resize_geometry g;
    if (st == TGC_OK) st = tgc_resize_geometry_read(c, &g);
    if (st == TGC_OK) st = tgc_kernel_alloc_output(c, 0, g.rank, g.out);
    if (st != TGC_OK) return st;
    if (c->outputs[0].dtype != x->dtype)
        return tgc_kernel_fail(c, "Resize: output Y is %s but X is %s", tgc_dtype_name(c->outputs[0].dtype),
                               tgc_dtype_name(x->dtype));
    int64_t n_in = tgc_value_numel(x), n_out = tgc_value_numel(&c->outputs[0]);
    if (n_out == 0) return TGC_OK;
    if (resize_bilinear_f32(c, &g, &st) || resize_image_f32(c, &g, &st)) return st;
    double *cur = doubles(c, n_in);
    if (cur == NULL) return TGC_ERR_NOMEM;
    if (!tgc_sample_load(x->dtype, tgc_kernel_in_ptr(c, 0), n_in, cur)) {
        tgc_free(cur);
        return tgc_kernel_fail(c, "Resize: X of dtype %s is not supported", tgc_dtype_name(x->dtype));
    }
    int64_t dims[TGC_MAX_RANK];
    memcpy(dims, g.in, sizeof dims);
    /* Axes that shrink go first, so the values in between stay as few as
     * the shapes allow (the passes commute: each is linear along its own
     * axis). Stable: equal ratios keep axis order, as the reference. */
    int order[TGC_MAX_RANK], n_order = 0;
    for (int a = 0; a < g.rank; a++) {
        if (tgc_resize_axis_identity(&g, a)) continue;
        int at = n_order++;
        double ratio = (double)g.out[a] / (double)g.in[a];
        while (at > 0 && (double)g.out[order[at - 1]] / (double)g.in[order[at - 1]] > ratio) {
            order[at] = order[at - 1];
            at--;
        }
        order[at] = a;
    }
    for (int k = 0; k < n_order && st == TGC_OK; k++) {
        int a = order[k];
        tgc_resize_taps t;
        if ((st = tgc_resize_taps_make(c, &g, a, &t)) != TGC_OK) break;
        int64_t outer = 1, inner = 1, next_n;
        for (int d = 0; d < a; d++) outer *= dims[d];
        for (int d = a + 1; d < g.rank; d++) inner *= dims[d];
        /* dims mixes output and input dims, so the product of all of them
         * may pass what either holds. */
        if (!tgc_checked_mul_i64(outer, g.out[a], &next_n) || !tgc_checked_mul_i64(next_n, inner, &next_n)) {
            tgc_resize_taps_free(&t);
            st = tgc_kernel_fail(c, "Resize: the values between two axes' passes do not fit in int64");
            break;
        }
        double *next = doubles(c, next_n);
        if (next == NULL) {
            tgc_resize_taps_free(&t);
            st = TGC_ERR_NOMEM;
            break;
        }
        axis_pass p = {.src = cur, .dst = next, .t = &t, .len = dims[a], .inner = inner, .rows = outer * g.out[a],
                       .extrapolation = g.extrapolation};
        p.rows_per_block = inner >= 4096 ? 1 : 4096 / inner;
        tgc_parallel_for(c->pool, (p.rows + p.rows_per_block - 1) / p.rows_per_block, pass_block, &p);
        tgc_resize_taps_free(&t);
        tgc_free(cur);
        cur = next;
        dims[a] = g.out[a];
    }
    if (st == TGC_OK) tgc_sample_store(x->dtype, cur, n_out, tgc_kernel_out_ptr(c, 0));
    tgc_free(cur);
    return st;
}

const tgc_kernel_def tgc_cpu_kernels_resize[] = {
    {.op = "Resize", .fn = resize_cpu, .host_inputs = (1u << 1) | (1u << 2) | (1u << 3),
     .forward_input = -1, .sizes_outputs = true, .dtypes = {SAMPLE_ELEMENT_TYPES(SAMPLE_DTYPE) TGC_DTYPE_INVALID}},
    {.op = NULL},
};
