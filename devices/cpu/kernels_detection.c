/* The cpu sampling and detection kernels (ONNX opset 16): GridSample,
 * RoiAlign and NonMaxSuppression, and the registry's list of the family,
 * tgc_cpu_kernels_detection. Each follows ONNX's reference implementation
 * (onnx/reference/ops/op_grid_sample.py, op_roi_align.py,
 * op_non_max_suppression.py; the latter two restate onnxruntime's kernels).
 * GridSample and RoiAlign compute in double (sample_types.h);
 * NonMaxSuppression in float, as the reference's float32 scalars do, so
 * that a box on the threshold goes the same way. */
#include "devices/cpu/sample_types.h"
#include "devices/kernel.h"
#include "devices/kernel_checks.h"

#include "support/alloc.h"
#include "support/checked.h"
#include "support/parallel_for.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A double buffer of n elements holding input i's values (float or the
 * sample types), or NULL after failing. */
static double *load_input(tgc_kernel_ctx *c, int i, const char *what) {
    const tgc_value *v = &c->inputs[i];
    int64_t n = tgc_value_numel(v);
    size_t nbytes;
    double *d = tgc_checked_nbytes(n, sizeof(double), &nbytes) ? tgc_malloc(nbytes ? nbytes : 1) : NULL;
    if (d == NULL) {
        tgc_kernel_fail(c, "%s: no host memory for %s", tgc_kernel_op_name(c), what);
        return NULL;
    }
    if (!tgc_sample_load(v->dtype, tgc_kernel_in_ptr(c, i), n, d)) {
        tgc_free(d);
        tgc_kernel_fail(c, "%s: %s of dtype %s is not supported", tgc_kernel_op_name(c), what,
                        tgc_dtype_name(v->dtype));
        return NULL;
    }
    return d;
}

/* ---- GridSample ---------------------------------------------------------------------- */

enum { GS_NEAREST, GS_LINEAR, GS_CUBIC };
enum { GS_ZEROS, GS_BORDER, GS_REFLECTION };

/* Reflects x by the borders lo and hi until it lies within them
 * (_gs_reflect). */
static double gs_reflect(double x, double lo, double hi) {
    double range = hi - lo;
    if (!(range > 0)) return lo;
    if (x < lo) {
        double dx = lo - x, n = floor(dx / range), r = dx - n * range;
        return fmod(n, 2) == 0 ? lo + r : hi - r;
    }
    if (x > hi) {
        double dx = x - hi, n = floor(dx / range), r = dx - n * range;
        return fmod(n, 2) == 0 ? hi - r : lo + r;
    }
    return x;
}

/* A double made safe to convert to int64: NaN and huge values go far
 * outside any axis. */
static int64_t gs_int(double v) { return v == v && fabs(v) < 1e15 ? (int64_t)v : (int64_t)-1e15; }

/* The sampling of one spatial axis of size d at coordinate x: up to four
 * input positions and weights; a position outside with zeros padding is
 * dropped (it reads 0). */
typedef struct gs_taps {
    int n;
    int64_t idx[4];
    double w[4];
} gs_taps;

static void gs_add(gs_taps *t, int64_t i, double w, int64_t d, int pad, double lo, double hi) {
    if (pad == GS_ZEROS && (i < 0 || i >= d)) return;
    if (pad == GS_BORDER) i = i < 0 ? 0 : i >= d ? d - 1 : i;
    if (pad == GS_REFLECTION) i = gs_int(gs_reflect((double)i, lo, hi));
    if (i < 0 || i >= d) return; /* reflection of a non-finite coordinate */
    t->idx[t->n] = i;
    t->w[t->n] = w;
    t->n++;
}

/* Keys' cubic coefficients with A = -0.75 for fraction t (_gs_get_cubic_coeffs). */
static void gs_cubic(double t, double *w) {
    const double A = -0.75;
    double x = t + 1;
    w[0] = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
    w[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
    x = 1 - t;
    w[2] = ((A + 2) * x - (A + 3)) * x * x + 1;
    x = 2 - t;
    w[3] = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
}

static void gs_axis(double g, int64_t d, int mode, int pad, bool align, gs_taps *t) {
    double x = align ? (g + 1) / 2.0 * (double)(d - 1) : ((g + 1) * (double)d - 1) / 2.0;
    double lo = align ? 0.0 : -0.5, hi = align ? (double)d - 1 : (double)d - 0.5;
    if (mode == GS_NEAREST) x = nearbyint(x); /* half to even, as PyTorch */
    if (x < lo || x > hi) {
        if (pad == GS_BORDER) x = x < 0 ? 0 : x > (double)d - 1 ? (double)d - 1 : x;
        else if (pad == GS_REFLECTION) x = gs_reflect(x, lo, hi);
    }
    t->n = 0;
    if (mode == GS_NEAREST) {
        gs_add(t, gs_int(x), 1.0, d, pad, lo, hi);
        return;
    }
    double x0 = floor(x), f = x - x0;
    int64_t i0 = gs_int(x0);
    if (mode == GS_LINEAR) {
        gs_add(t, i0, 1 - f, d, pad, lo, hi);
        gs_add(t, i0 + 1, f, d, pad, lo, hi);
        return;
    }
    double w[4];
    gs_cubic(f, w);
    for (int k = 0; k < 4; k++) gs_add(t, i0 - 1 + k, w[k], d, pad, lo, hi);
}

/* Samples (positions x channels) a piece of GridSample's output holds. */
#define GS_PIECE_SAMPLES ((int64_t)1 << 15)

/* One GridSample's inputs and output in double, and its geometry. */
typedef struct gs_job {
    const double *xs, *gs;
    double *ys;
    int k, mode, pad;
    bool align;
    int64_t channels, in_size, out_size, positions, per_piece; /* positions: N x out_size */
    int64_t dims[TGC_MAX_RANK], stride[TGC_MAX_RANK];
    int64_t max_taps;        /* (taps an axis takes at most)^k: 1, 2 or 4 to the k */
    int64_t *taps_scratch;   /* max_taps offsets a slot */
    double *weights_scratch; /* max_taps weights a slot */
} gs_job;

/* Output positions [p * per_piece, ...) of every channel (position q of
 * all batches' out_size). Each position's taps on every axis are worked
 * out once; their products and offsets are flattened into the slot's
 * scratch in the odometer's order (axis 0 fastest, each weight the product
 * over the axes in order from 1), and every channel sums them in that
 * order: the arithmetic of the odometer it replaces, which ran per channel
 * (2-D bilinear on [1, 32, 128, 128] had taken 2.4-3.6x ONNX Runtime's
 * time). */
static void gs_piece(void *arg, int64_t p, int slot) {
    const gs_job *j = arg;
    int k = j->k;
    int64_t end = (p + 1) * j->per_piece < j->positions ? (p + 1) * j->per_piece : j->positions;
    for (int64_t q = p * j->per_piece; q < end; q++) {
        int64_t n = q / j->out_size, pos = q % j->out_size;
        const double *g = j->gs + q * k;
        gs_taps t[TGC_MAX_RANK];
        int64_t taps = 1;
        for (int d = 0; d < k; d++) {
            gs_axis(g[k - 1 - d], j->dims[d], j->mode, j->pad, j->align, &t[d]);
            taps *= t[d].n;
        }
        double *y = j->ys + n * j->channels * j->out_size + pos;
        const double *planes = j->xs + n * j->channels * j->in_size;
        /* flattened: the odometer's order, each weight multiplied as it does */
        int64_t *off = j->taps_scratch + (size_t)slot * (size_t)j->max_taps;
        double *w = j->weights_scratch + (size_t)slot * (size_t)j->max_taps;
        int at[TGC_MAX_RANK] = {0};
        for (int64_t e = 0; e < taps; e++) {
            double we = 1;
            int64_t oe = 0;
            for (int d = 0; d < k; d++) {
                we *= t[d].w[at[d]];
                oe += t[d].idx[at[d]] * j->stride[d];
            }
            w[e] = we, off[e] = oe;
            for (int d = 0; d < k && ++at[d] == t[d].n; d++) at[d] = 0;
        }
        for (int64_t ch = 0; ch < j->channels; ch++) {
            const double *plane = planes + ch * j->in_size;
            double acc = 0;
            for (int64_t e = 0; e < taps; e++) acc += w[e] * plane[off[e]];
            y[ch * j->out_size] = acc;
        }
    }
}

/* GridSample-16/-20: X [N, C, D1..Dk] (the sample types), grid [N, O1..Ok,
 * k] (float32 or float16; grid[..., 0] is the last axis's coordinate, in
 * [-1, 1] across the input) -> Y [N, C, O1..Ok]. */
static tgc_status grid_sample(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 2, 1);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *grid = &c->inputs[1];
    int r = x->rank, k = r - 2;
    if (r < 3 || grid->rank != r || grid->dims[0] != x->dims[0] || grid->dims[r - 1] != k)
        return tgc_kernel_fail(c, "GridSample: X [N, C, D1..Dk] needs grid [N, O1..Ok, k] of the same rank");
    if (grid->dtype != TGC_FLOAT32 && grid->dtype != TGC_FLOAT16)
        return tgc_kernel_fail(c, "GridSample: grid must be float32 or float16");
    const char *ms = tgc_kernel_attr_string(c, "mode", "bilinear"), *ps = tgc_kernel_attr_string(c, "padding_mode", "zeros");
    int mode = strcmp(ms, "nearest") == 0                                   ? GS_NEAREST
               : strcmp(ms, "bilinear") == 0 || strcmp(ms, "linear") == 0 ? GS_LINEAR
               : strcmp(ms, "bicubic") == 0 || strcmp(ms, "cubic") == 0   ? GS_CUBIC
                                                                            : -1;
    int pad = strcmp(ps, "zeros") == 0 ? GS_ZEROS : strcmp(ps, "border") == 0 ? GS_BORDER
              : strcmp(ps, "reflection") == 0 ? GS_REFLECTION : -1;
    if (mode < 0 || pad < 0) return tgc_kernel_fail(c, "GridSample: unknown mode '%s' or padding_mode '%s'", ms, ps);
    bool align = tgc_kernel_attr_int(c, "align_corners", 0) != 0;
    int64_t dims[TGC_MAX_RANK];
    dims[0] = x->dims[0];
    dims[1] = x->dims[1];
    for (int d = 0; d < k; d++) dims[2 + d] = grid->dims[1 + d];
    if ((st = tgc_kernel_expect_dims(c, 0, r, dims)) != TGC_OK) return st;
    if (c->outputs[0].dtype != x->dtype) return tgc_kernel_fail(c, "GridSample: Y must have X's dtype");
    int64_t batches = x->dims[0], channels = x->dims[1], in_size = 1, out_size = 1;
    for (int d = 0; d < k; d++) {
        in_size *= x->dims[2 + d];
        out_size *= grid->dims[1 + d];
    }
    int64_t total = tgc_value_numel(&c->outputs[0]);
    if (total == 0) return TGC_OK;
    for (int d = 0; d < k; d++)
        if (x->dims[2 + d] == 0 && pad != GS_ZEROS)
            return tgc_kernel_fail(c, "GridSample: spatial axis %d of X is empty", d);
    double *xs = load_input(c, 0, "X"), *gs = xs ? load_input(c, 1, "grid") : NULL, *ys = NULL;
    size_t nbytes;
    if (gs != NULL)
        ys = tgc_checked_nbytes(total, sizeof(double), &nbytes) ? tgc_malloc(nbytes) : NULL;
    if (ys == NULL) {
        tgc_free(xs);
        tgc_free(gs);
        return xs == NULL || gs == NULL ? TGC_ERR_RUNTIME
                                        : (tgc_kernel_fail(c, "GridSample: no host memory for Y"), TGC_ERR_NOMEM);
    }
    gs_job job = {.xs = xs, .gs = gs, .ys = ys, .k = k, .mode = mode, .pad = pad, .align = align,
                  .channels = channels, .in_size = in_size, .out_size = out_size};
    for (int d = 0; d < k; d++) job.dims[d] = x->dims[2 + d];
    for (int64_t d = k - 1, s = 1; d >= 0; d--) {
        job.stride[d] = s;
        s *= x->dims[2 + d];
    }
    job.max_taps = 1;
    for (int d = 0; d < k; d++) job.max_taps *= mode == GS_NEAREST ? 1 : mode == GS_LINEAR ? 2 : 4; /* <= 4^6 */
    size_t slots = (size_t)tgc_parallel_width(c->pool) * (size_t)job.max_taps;
    job.taps_scratch = tgc_malloc(slots * sizeof *job.taps_scratch);
    job.weights_scratch = tgc_malloc(slots * sizeof *job.weights_scratch);
    if (job.taps_scratch == NULL || job.weights_scratch == NULL) {
        tgc_free(job.taps_scratch), tgc_free(job.weights_scratch), tgc_free(xs), tgc_free(gs), tgc_free(ys);
        tgc_kernel_fail(c, "GridSample: no host memory for the taps");
        return TGC_ERR_NOMEM;
    }
    job.positions = batches * out_size;
    job.per_piece = GS_PIECE_SAMPLES / (channels > 0 ? channels : 1) + 1;
    tgc_parallel_for(c->pool, (job.positions + job.per_piece - 1) / job.per_piece, gs_piece, &job);
    tgc_sample_store(x->dtype, ys, total, tgc_kernel_out_ptr(c, 0));
    tgc_free(job.taps_scratch);
    tgc_free(job.weights_scratch);
    tgc_free(xs);
    tgc_free(gs);
    tgc_free(ys);
    return TGC_OK;
}

/* ---- RoiAlign ------------------------------------------------------------------------ */

/* One bilinear sample of a roi bin: four positions of an H x W plane and
 * their weights (all zero for a sample past the plane). */
typedef struct roi_sample {
    int64_t pos[4];
    double w[4];
} roi_sample;

static roi_sample roi_sample_at(double y, double x, int64_t height, int64_t width) {
    roi_sample s = {{0, 0, 0, 0}, {0, 0, 0, 0}};
    if (y < -1.0 || y > (double)height || x < -1.0 || x > (double)width) return s;
    y = y > 0 ? y : 0;
    x = x > 0 ? x : 0;
    int64_t y_low = (int64_t)y, x_low = (int64_t)x, y_high, x_high;
    if (y_low >= height - 1) {
        y_high = y_low = height - 1;
        y = (double)y_low;
    } else {
        y_high = y_low + 1;
    }
    if (x_low >= width - 1) {
        x_high = x_low = width - 1;
        x = (double)x_low;
    } else {
        x_high = x_low + 1;
    }
    double ly = y - (double)y_low, lx = x - (double)x_low, hy = 1 - ly, hx = 1 - lx;
    s.pos[0] = y_low * width + x_low;
    s.pos[1] = y_low * width + x_high;
    s.pos[2] = y_high * width + x_low;
    s.pos[3] = y_high * width + x_high;
    s.w[0] = hy * hx;
    s.w[1] = hy * lx;
    s.w[2] = ly * hx;
    s.w[3] = ly * lx;
    return s;
}

/* The most samples one roi may take (bins x grid points): a bound on the
 * work a malformed roi can ask for. */
#define ROI_MAX_SAMPLES ((int64_t)1 << 26)

/* RoiAlign-16: X [N, C, H, W] and rois [R, 4] (x1, y1, x2, y2) of one
 * float dtype, batch_indices [R] int64 in [0, N) -> Y [R, C, output_height,
 * output_width]: each bin the average (mode avg) or the largest weighted
 * corner (mode max, onnxruntime's definition) of sampling_ratio^2 bilinear
 * samples (adaptive, ceil(roi size / bins), when 0). */
static tgc_status roi_align(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 3, 1);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *rois = &c->inputs[1], *bi = &c->inputs[2];
    if (x->rank != 4 || rois->rank != 2 || rois->dims[1] != 4 || bi->rank != 1 || bi->dims[0] != rois->dims[0] ||
        bi->dtype != TGC_INT64 || rois->dtype != x->dtype)
        return tgc_kernel_fail(c, "RoiAlign: needs X [N, C, H, W], rois [R, 4] of X's dtype and batch_indices [R] "
                               "int64");
    const char *ms = tgc_kernel_attr_string(c, "mode", "avg");
    const char *cs = tgc_kernel_attr_string(c, "coordinate_transformation_mode", "half_pixel");
    bool is_max = strcmp(ms, "max") == 0, half_pixel = strcmp(cs, "half_pixel") == 0;
    if ((!is_max && strcmp(ms, "avg") != 0) || (!half_pixel && strcmp(cs, "output_half_pixel") != 0))
        return tgc_kernel_fail(c, "RoiAlign: unknown mode '%s' or coordinate_transformation_mode '%s'", ms, cs);
    int64_t ph = tgc_kernel_attr_int(c, "output_height", 1), pw = tgc_kernel_attr_int(c, "output_width", 1);
    int64_t ratio = tgc_kernel_attr_int(c, "sampling_ratio", 0);
    double scale = tgc_kernel_attr_float(c, "spatial_scale", 1.0);
    int64_t n_rois = rois->dims[0], channels = x->dims[1], height = x->dims[2], width = x->dims[3];
    if (ph < 1 || pw < 1 || ratio < 0)
        return tgc_kernel_fail(c, "RoiAlign: output_height and output_width must be >= 1, sampling_ratio >= 0");
    if ((st = tgc_kernel_expect_dims(c, 0, 4, (int64_t[]){n_rois, channels, ph, pw})) != TGC_OK) return st;
    if (c->outputs[0].dtype != x->dtype) return tgc_kernel_fail(c, "RoiAlign: Y must have X's dtype");
    int64_t total = tgc_value_numel(&c->outputs[0]);
    if (total == 0) return TGC_OK;
    const int64_t *batch = tgc_kernel_in_ptr(c, 2);
    for (int64_t r = 0; r < n_rois; r++)
        if (batch[r] < 0 || batch[r] >= x->dims[0])
            return tgc_kernel_fail(c, "RoiAlign: batch_indices[%lld] is %lld, out of range [0, %lld)", (long long)r,
                                   (long long)batch[r], (long long)x->dims[0]);
    if (height == 0 || width == 0) return tgc_kernel_fail(c, "RoiAlign: X has an empty plane");
    double *xs = load_input(c, 0, "X"), *rs = xs ? load_input(c, 1, "rois") : NULL, *ys = NULL;
    roi_sample *samples = NULL;
    size_t nbytes;
    if (rs != NULL) ys = tgc_checked_nbytes(total, sizeof(double), &nbytes) ? tgc_malloc(nbytes) : NULL;
    if (rs != NULL && ys == NULL) st = (tgc_kernel_fail(c, "RoiAlign: no host memory for Y"), TGC_ERR_NOMEM);
    else if (rs == NULL) st = TGC_ERR_RUNTIME;
    double offset = half_pixel ? 0.5 : 0.0;
    for (int64_t r = 0; st == TGC_OK && r < n_rois; r++) {
        const double *roi = rs + r * 4;
        double start_w = roi[0] * scale - offset, start_h = roi[1] * scale - offset;
        double roi_w = roi[2] * scale - offset - start_w, roi_h = roi[3] * scale - offset - start_h;
        if (!half_pixel) { /* malformed rois become 1 x 1 */
            roi_w = fmax(roi_w, 1.0);
            roi_h = fmax(roi_h, 1.0);
        }
        double bin_h = roi_h / (double)ph, bin_w = roi_w / (double)pw;
        double gh = ratio > 0 ? (double)ratio : ceil(roi_h / (double)ph);
        double gw = ratio > 0 ? (double)ratio : ceil(roi_w / (double)pw);
        gh = gh > 0 ? gh : 0; /* a roi of negative size samples nothing */
        gw = gw > 0 ? gw : 0;
        if (!(gh * gw * (double)(ph * pw) <= (double)ROI_MAX_SAMPLES)) {
            st = tgc_kernel_fail(c, "RoiAlign: roi %lld asks for more than %lld samples", (long long)r,
                                 (long long)ROI_MAX_SAMPLES);
            break;
        }
        int64_t grid_h = (int64_t)gh, grid_w = (int64_t)gw, count = grid_h * grid_w > 1 ? grid_h * grid_w : 1;
        int64_t n_samples = ph * pw * grid_h * grid_w;
        tgc_free(samples);
        samples = tgc_malloc((size_t)(n_samples ? n_samples : 1) * sizeof *samples);
        if (samples == NULL) {
            st = (tgc_kernel_fail(c, "RoiAlign: no host memory for %lld samples", (long long)n_samples), TGC_ERR_NOMEM);
            break;
        }
        roi_sample *sp = samples;
        for (int64_t i = 0; i < ph; i++)
            for (int64_t j = 0; j < pw; j++)
                for (int64_t iy = 0; iy < grid_h; iy++) {
                    double yy = start_h + (double)i * bin_h + ((double)iy + 0.5) * bin_h / (double)grid_h;
                    for (int64_t ix = 0; ix < grid_w; ix++) {
                        double xx = start_w + (double)j * bin_w + ((double)ix + 0.5) * bin_w / (double)grid_w;
                        *sp++ = roi_sample_at(yy, xx, height, width);
                    }
                }
        for (int64_t ch = 0; ch < channels; ch++) {
            const double *plane = xs + (batch[r] * channels + ch) * height * width;
            double *out = ys + (r * channels + ch) * ph * pw;
            sp = samples;
            for (int64_t b = 0; b < ph * pw; b++) {
                double v = 0;
                for (int64_t q = 0; q < grid_h * grid_w; q++, sp++) {
                    if (!is_max) {
                        v += sp->w[0] * plane[sp->pos[0]] + sp->w[1] * plane[sp->pos[1]] +
                             sp->w[2] * plane[sp->pos[2]] + sp->w[3] * plane[sp->pos[3]];
                        continue;
                    }
                    double m = sp->w[0] * plane[sp->pos[0]];
                    for (int e = 1; e < 4; e++) m = fmax(m, sp->w[e] * plane[sp->pos[e]]);
                    v = q == 0 ? m : fmax(v, m);
                }
                out[b] = is_max ? v : v / (double)count;
            }
        }
    }
    if (st == TGC_OK) tgc_sample_store(x->dtype, ys, total, tgc_kernel_out_ptr(c, 0));
    tgc_free(samples);
    tgc_free(xs);
    tgc_free(rs);
    tgc_free(ys);
    return st;
}

/* ---- NonMaxSuppression --------------------------------------------------------------- */

typedef struct nms_box {
    float score;
    int64_t index;
} nms_box;

/* Highest score first; equal scores by index (the reference's BoxInfo order). */
static int nms_order(const void *pa, const void *pb) {
    const nms_box *a = pa, *b = pb;
    if (a->score != b->score) return a->score > b->score ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* Corners of box b as [y_min, x_min, y_max, x_max] (center_point_box 0:
 * either corner order; 1: [x_center, y_center, width, height]). */
static void nms_corners(const float *b, bool center, float *out) {
    if (center) {
        float hw = b[2] / 2, hh = b[3] / 2;
        out[0] = b[1] - hh;
        out[1] = b[0] - hw;
        out[2] = b[1] + hh;
        out[3] = b[0] + hw;
        return;
    }
    out[0] = fminf(b[0], b[2]);
    out[1] = fminf(b[1], b[3]);
    out[2] = fmaxf(b[0], b[2]);
    out[3] = fmaxf(b[1], b[3]);
}

/* True when boxes a and b (corners) overlap by IoU > threshold (suppress_by_iou). */
static bool nms_suppress(const float *a, const float *b, float threshold) {
    float ix0 = fmaxf(a[1], b[1]), ix1 = fminf(a[3], b[3]);
    if (ix1 <= ix0) return false;
    float iy0 = fmaxf(a[0], b[0]), iy1 = fminf(a[2], b[2]);
    if (iy1 <= iy0) return false;
    float inter = (ix1 - ix0) * (iy1 - iy0);
    if (inter <= 0) return false;
    float area_a = (a[3] - a[1]) * (a[2] - a[0]), area_b = (b[3] - b[1]) * (b[2] - b[0]);
    float uni = area_a + area_b - inter;
    if (area_a <= 0 || area_b <= 0 || uni <= 0) return false;
    return inter / uni > threshold;
}

/* The one value of optional input i (int64 or float32), or false when
 * omitted or empty. */
static bool nms_scalar(tgc_kernel_ctx *c, int i, double *v) {
    if (!tgc_kernel_has_input(c, i) || tgc_value_numel(&c->inputs[i]) < 1) return false;
    const void *p = tgc_kernel_in_ptr(c, i);
    *v = c->inputs[i].dtype == TGC_INT64 ? (double)*(const int64_t *)p : (double)*(const float *)p;
    return true;
}

/* NonMaxSuppression-11: per batch and class, the boxes by falling score
 * (those above score_threshold when given), each kept unless its IoU with
 * a kept box passes iou_threshold, at most max_output_boxes_per_class
 * (default 0: none) -> selected_indices [num_selected, 3] int64 (batch,
 * class, box), in that order. Sizes its own output. */
static tgc_status non_max_suppression(tgc_kernel_ctx *c) {
    tgc_status st = c->n_inputs >= 2 ? TGC_OK : tgc_kernel_fail(c, "NonMaxSuppression: needs boxes and scores");
    for (int i = 0; st == TGC_OK && i < c->n_inputs; i++)
        if (tgc_kernel_has_input(c, i)) st = tgc_kernel_check_tensor(c, "input", i, &c->inputs[i], true);
    if (st != TGC_OK) return st;
    const tgc_value *boxes = &c->inputs[0], *scores = &c->inputs[1];
    if (boxes->rank != 3 || scores->rank != 3 || boxes->dims[2] != 4 || boxes->dims[0] != scores->dims[0] ||
        boxes->dims[1] != scores->dims[2] || boxes->dtype != TGC_FLOAT32 || scores->dtype != TGC_FLOAT32)
        return tgc_kernel_fail(c, "NonMaxSuppression: needs boxes [B, S, 4] and scores [B, C, S], float32");
    for (int i = 2; i < c->n_inputs && i <= 4; i++)
        if (tgc_kernel_has_input(c, i) && (c->inputs[i].dtype != (i == 2 ? TGC_INT64 : TGC_FLOAT32) ||
                                           c->inputs[i].rank > 1 || tgc_value_numel(&c->inputs[i]) > 1))
            return tgc_kernel_fail(c, "NonMaxSuppression: input %d must be one %s value", i,
                                   i == 2 ? "int64" : "float32");
    bool center = tgc_kernel_attr_int(c, "center_point_box", 0) == 1;
    double max_out = 0, iou = 0, score_min = 0;
    nms_scalar(c, 2, &max_out);
    nms_scalar(c, 3, &iou);
    bool thresholded = nms_scalar(c, 4, &score_min);
    int64_t nb = boxes->dims[0], ns = boxes->dims[1], nc = scores->dims[1];
    int64_t keep_max = max_out > 0 ? (max_out < (double)ns ? (int64_t)max_out : ns) : 0, cap;
    if (!tgc_checked_mul_i64(nb, nc, &cap) || !tgc_checked_mul_i64(cap, keep_max, &cap) ||
        !tgc_checked_mul_i64(cap, 3, &cap))
        return tgc_kernel_fail(c, "NonMaxSuppression: the selection does not fit");
    int64_t *sel = tgc_malloc((size_t)(cap ? cap : 1) * sizeof *sel);
    nms_box *cand = tgc_malloc((size_t)(ns ? ns : 1) * sizeof *cand);
    int64_t *kept = tgc_malloc((size_t)(keep_max ? keep_max : 1) * sizeof *kept);
    if (sel == NULL || cand == NULL || kept == NULL) {
        tgc_free(sel);
        tgc_free(cand);
        tgc_free(kept);
        tgc_kernel_fail(c, "NonMaxSuppression: no host memory for the selection");
        return TGC_ERR_NOMEM;
    }
    const float *bp = tgc_kernel_in_ptr(c, 0), *sp = tgc_kernel_in_ptr(c, 1);
    float iou_f = (float)iou, score_f = (float)score_min;
    int64_t n_sel = 0;
    for (int64_t b = 0; keep_max > 0 && b < nb; b++)
        for (int64_t k = 0; k < nc; k++) {
            const float *cls = sp + (b * nc + k) * ns;
            int64_t n_cand = 0;
            for (int64_t i = 0; i < ns; i++)
                if (!thresholded || cls[i] > score_f) cand[n_cand++] = (nms_box){cls[i], i};
            qsort(cand, (size_t)n_cand, sizeof *cand, nms_order);
            int64_t n_kept = 0;
            for (int64_t i = 0; i < n_cand && n_kept < keep_max; i++) {
                float a[4], o[4];
                nms_corners(bp + (b * ns + cand[i].index) * 4, center, a);
                bool keep = true;
                for (int64_t j = 0; keep && j < n_kept; j++) {
                    nms_corners(bp + (b * ns + kept[j]) * 4, center, o);
                    keep = !nms_suppress(a, o, iou_f);
                }
                if (!keep) continue;
                kept[n_kept++] = cand[i].index;
                sel[n_sel * 3] = b;
                sel[n_sel * 3 + 1] = k;
                sel[n_sel * 3 + 2] = cand[i].index;
                n_sel++;
            }
        }
    tgc_free(cand);
    tgc_free(kept);
    st = tgc_kernel_alloc_output(c, 0, 2, (int64_t[]){n_sel, 3});
    if (st == TGC_OK && n_sel > 0) memcpy(tgc_kernel_out_ptr(c, 0), sel, (size_t)n_sel * 3 * sizeof *sel);
    tgc_free(sel);
    return st;
}

const tgc_kernel_def tgc_cpu_kernels_detection[] = {
    {.op = "GridSample", .fn = grid_sample, .forward_input = -1,
     .dtypes = {SAMPLE_ELEMENT_TYPES(SAMPLE_DTYPE) TGC_DTYPE_INVALID}},
    {.op = "RoiAlign", .fn = roi_align, .forward_input = -1,
     .dtypes = {TGC_FLOAT32, TGC_FLOAT16, TGC_DTYPE_INVALID}},
    {.op = "NonMaxSuppression", .fn = non_max_suppression,
     .host_inputs = (1u << 2) | (1u << 3) | (1u << 4), .forward_input = -1, .sizes_outputs = true,
     .dtypes = {TGC_FLOAT32, TGC_DTYPE_INVALID}},
    {.op = NULL},
};
