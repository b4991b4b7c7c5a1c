/* Normalisation on the cpu (float32): BatchNormalization-15 in inference
 * mode and LayerNormalization-17.
 *
 * BatchNormalization: Y = (X - mean) / sqrt(var + epsilon) * scale + B per
 * channel (axis 1), computed as Y = X * a + b with a = scale / sqrt(var +
 * epsilon) and b = B - mean * a per channel (in double); each element is
 * read once before it is written, so Y may be X's buffer (forwarding).
 * Planes are split over the device's pool; a fused activation (a Relu
 * after a pre-activation BatchNormalization, executor/fuse.c) runs over
 * each plane as it is written.
 *
 * LayerNormalization follows its ONNX function body with stash_type 1
 * (statistics in float32 or wider): over each row of the normalised axes
 * [axis, r), Mean = mean(X), InvStdDev = 1 / sqrt(mean((X - Mean)^2) +
 * epsilon), Y = (X - Mean) * InvStdDev * Scale + B, with Scale and B
 * broadcast unidirectionally to X.shape[axis:]. Sums are in double (eight
 * partial sums a row, so the loops vectorize), the variance in two passes.
 * An empty row gives NaN statistics (numpy's mean of nothing). Rows are
 * split over the device's pool in pieces chosen from the sizes alone. */
#include "devices/cpu/kernels_nn.h"
#include "devices/cpu/row_sum.h"
#include "devices/cpu/target_clones.h"
#include "devices/norm_geometry.h"

#include "support/alloc.h"

#include <math.h>
#include <string.h>

/* ---- BatchNormalization ------------------------------------------------------ */

/* Planes a BatchNormalization piece takes: about 2^16 elements. */
#define BN_PIECE_ELEMENTS ((int64_t)1 << 16)

typedef struct batch_norm_job {
    const float *x, *scale, *bias, *mean, *var;
    float *y;
    double eps;
    int64_t planes, channels, size, per_piece;
    const tgc_fused_act *act;
} batch_norm_job;

/* y[i] = x[i] * a + b in float32, a and b the channel's scale and shift
 * worked out in double and rounded once (ONNX Runtime's arithmetic: a
 * product and a sum, each rounded; within a few float32 roundings of
 * |x a| + |b| of the double result): the same bits at every vector width (no FMA is contracted in ISO C); y
 * is x or apart from it. In double, a plane's vectors held half as many
 * lanes: DenseNet-121's 62 pre-activation BatchNormalizations took 1.82
 * ms a run against 1.31 in float32 (ORT: 1.25). */
TGC_CPU_CLONES static void scale_shift(float *restrict y, const float *restrict x, float a, float b, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = x[i] * a + b;
}

TGC_CPU_CLONES static void scale_shift_in_place(float *y, float a, float b, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = y[i] * a + b;
}

static void batch_norm_piece(void *arg, int64_t piece, int slot) {
    (void)slot;
    const batch_norm_job *j = arg;
    int64_t p1 = (piece + 1) * j->per_piece < j->planes ? (piece + 1) * j->per_piece : j->planes;
    for (int64_t p = piece * j->per_piece; p < p1; p++) {
        int64_t ch = p % j->channels;
        double a = j->scale[ch] / sqrt((double)j->var[ch] + j->eps);
        float af = (float)a, bf = (float)(j->bias[ch] - j->mean[ch] * a);
        if (j->y == j->x) scale_shift_in_place(j->y + p * j->size, af, bf, j->size);
        else scale_shift(j->y + p * j->size, j->x + p * j->size, af, bf, j->size);
        tgc_cpu_act_block(j->act, j->y + p * j->size, j->size, 0, 1, 0, j->size);
    }
}

tgc_status tgc_cpu_batch_norm_f32(tgc_kernel_ctx *c) {
    if (tgc_kernel_attr_int(c, "training_mode", 0) != 0) {
        tgc_status st = tgc_cpu_batch_norm_train_f32(c);
        if (st == TGC_OK && c->fused_act != NULL) { /* the absorbed activation over Y */
            int64_t n = tgc_value_numel(&c->outputs[0]);
            tgc_cpu_act_block(c->fused_act, tgc_kernel_out_ptr(c, 0), n, 0, n > 0, 0, n);
        }
        return st;
    }
    int64_t planes, channels, size;
    tgc_status st = tgc_batch_norm_geometry_read(c, &planes, &channels, &size);
    if (st != TGC_OK) return st;
    if (planes * size == 0) return TGC_OK;
    batch_norm_job j = {.x = tgc_kernel_in_ptr(c, 0), .scale = tgc_kernel_in_ptr(c, 1), .bias = tgc_kernel_in_ptr(c, 2),
                        .mean = tgc_kernel_in_ptr(c, 3), .var = tgc_kernel_in_ptr(c, 4), .y = tgc_kernel_out_ptr(c, 0),
                        .eps = (float)tgc_kernel_attr_float(c, "epsilon", 1e-5), /* a float attribute in ONNX */
                        .planes = planes, .channels = channels, .size = size, .act = c->fused_act};
    j.per_piece = BN_PIECE_ELEMENTS / size > 1 ? BN_PIECE_ELEMENTS / size : 1;
    tgc_parallel_for(c->pool, (planes + j.per_piece - 1) / j.per_piece, batch_norm_piece, &j);
    return TGC_OK;
}

/* ---- LayerNormalization ------------------------------------------------------ */

/* Checks that p (Scale or B) broadcasts to dims[0..n) and, with out not
 * NULL, writes it there expanded into out[0..prod(dims)). */
static bool expand_param(const tgc_value *p, const float *src, const int64_t *dims, int n, float *out) {
    if (p->rank > n) return false;
    int64_t stride[TGC_MAX_RANK], acc = 1, count = 1;
    for (int i = n - 1; i >= 0; i--) {
        int pi = i - (n - p->rank);
        int64_t d = pi >= 0 ? p->dims[pi] : 1;
        if (d != 1 && d != dims[i]) return false;
        stride[i] = d == 1 ? 0 : acc;
        acc *= d;
        count *= dims[i];
    }
    for (int64_t j = 0; out != NULL && j < count; j++) {
        int64_t rest = j, off = 0;
        for (int i = n - 1; i >= 0; i--) {
            off += rest % dims[i] * stride[i];
            rest /= dims[i];
        }
        out[j] = src[off];
    }
    return true;
}

/* Rows of one LayerNormalization, split over the pool in pieces of
 * per_piece rows. */
typedef struct layer_norm_job {
    const float *x, *scale, *bias;
    float *y, *mean_out, *inv_out;
    int64_t rows, size, per_piece;
    double eps;
} layer_norm_job;

/* Rows [piece * per_piece, ...) of the job; a row's result does not depend
 * on the piece it falls in. */
static void layer_norm_rows(void *arg, int64_t piece, int slot) {
    (void)slot;
    const layer_norm_job *j = arg;
    int64_t size = j->size, lo = piece * j->per_piece;
    int64_t hi = lo + j->per_piece < j->rows ? lo + j->per_piece : j->rows;
    for (int64_t r = lo; r < hi; r++) {
        const float *xr = j->x + r * size;
        float *yr = j->y + r * size;
        double mean = tgc_cpu_row_sum(xr, size) / (double)size;
        double sq = tgc_cpu_row_sq_dev(xr, size, mean);
        float inv = (float)(1.0 / sqrt(sq / (double)size + j->eps));
        float mf = (float)mean;
        for (int64_t i = 0; i < size; i++) yr[i] = (xr[i] - mf) * inv * j->scale[i] + j->bias[i];
        if (j->mean_out != NULL) j->mean_out[r] = mf;
        if (j->inv_out != NULL) j->inv_out[r] = inv;
    }
}

/* The least work worth a piece of its own, in elements: ~10 us (two
 * pieces for the transformer layer's [128, 256] took its two
 * LayerNormalizations from 19 to ~12 us each on two cores). */
#define LAYER_NORM_PIECE_ELEMS 16384

tgc_status tgc_cpu_layer_norm_f32(tgc_kernel_ctx *c) {
    tgc_layer_norm_geometry g;
    tgc_status st = tgc_layer_norm_geometry_read(c, &g);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *sv = &c->inputs[1];
    int ax = g.ax;
    int64_t rows = g.rows, size = g.size;
    bool has_b = g.has_b, want_mean = g.want_mean, want_inv = g.want_inv;
    if (tgc_value_numel(sv) > size || (has_b && tgc_value_numel(&c->inputs[2]) > size))
        return tgc_kernel_fail(c, "Scale and B must broadcast to X.shape[%d:]", ax);
    if (rows == 0) return TGC_OK;
    float *mean_out = want_mean ? tgc_kernel_out_ptr(c, 1) : NULL,
          *inv_out = want_inv ? tgc_kernel_out_ptr(c, 2) : NULL;
    if (size == 0) { /* statistics of empty rows; nothing to normalise */
        for (int64_t r = 0; r < rows; r++) {
            if (mean_out != NULL) mean_out[r] = NAN;
            if (inv_out != NULL) inv_out[r] = NAN;
        }
        return TGC_OK;
    }

    /* Scale and B as one value per position in a row: themselves when they
     * hold that many (broadcasting then leaves their layout as it is),
     * else expanded into scratch; either way checked. */
    const tgc_value *bv = has_b ? &c->inputs[2] : NULL;
    bool own_scale = tgc_value_numel(sv) != size, own_bias = bv == NULL || tgc_value_numel(bv) != size;
    float *params = NULL;
    if (own_scale || own_bias) {
        params = tgc_malloc(2 * (size_t)size * sizeof(float));
        if (params == NULL) return tgc_kernel_fail(c, "out of host memory for LayerNormalization's parameters");
    }
    const float *scale = own_scale ? params : tgc_kernel_in_ptr(c, 1);
    const float *bias = own_bias ? params + size : tgc_kernel_in_ptr(c, 2);
    const int64_t *ndims = x->dims + ax;
    int nn = x->rank - ax;
    bool ok = expand_param(sv, tgc_kernel_in_ptr(c, 1), ndims, nn, own_scale ? params : NULL);
    if (ok && bv != NULL)
        ok = expand_param(bv, tgc_kernel_in_ptr(c, 2), ndims, nn, own_bias ? params + size : NULL);
    else if (ok)
        memset(params + size, 0, (size_t)size * sizeof(float));
    if (!ok) {
        tgc_free(params);
        return tgc_kernel_fail(c, "Scale and B must broadcast to X.shape[%d:]", ax);
    }

    layer_norm_job j = {.x = tgc_kernel_in_ptr(c, 0), .scale = scale, .bias = bias, .y = tgc_kernel_out_ptr(c, 0),
                        .mean_out = mean_out, .inv_out = inv_out, .rows = rows, .size = size,
                        .eps = (float)tgc_kernel_attr_float(c, "epsilon", 1e-5)}; /* a float attribute in ONNX */
    j.per_piece = (LAYER_NORM_PIECE_ELEMS + size - 1) / size;
    tgc_parallel_for(c->pool, (rows + j.per_piece - 1) / j.per_piece, layer_norm_rows, &j);
    tgc_free(params);
    return TGC_OK;
}
