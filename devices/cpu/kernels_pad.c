/* Element moves of any dtype on the cpu (ONNX opset 17, Pad in its
 * opset-18 form): Pad (devices/pad_geometry.h maps each output index to an
 * input index or the constant), DepthToSpace (DCR, CRD) and SpaceToDepth.
 * Elements are moved by their size (tgc_dtype_size), so every dtype, and
 * any added later, takes the same path. */
#include "devices/cpu/kernels_convt.h"

#include "devices/pad_geometry.h"
#include "support/alloc.h"

#include <string.h>

/* Copies one element of esize bytes; a constant esize inlines to one move. */
static inline void move_elem(char *dst, const char *src, size_t esize) { memcpy(dst, src, esize); }

/* ---- Pad ------------------------------------------------------------------------------ */

tgc_status tgc_cpu_pad(tgc_kernel_ctx *c) {
    tgc_pad_geometry p;
    tgc_status st = tgc_pad_read(c, &p);
    if (st != TGC_OK) return st;
    int64_t total = tgc_value_numel(&c->outputs[0]);
    if (total == 0) return TGC_OK;
    const char *x = tgc_kernel_in_ptr(c, 0);
    char *y = tgc_kernel_out_ptr(c, 0);
    size_t es = p.esize;
    if (p.rank == 0) {
        move_elem(y, x, es);
        return TGC_OK;
    }
    /* The last axis's map, once: its input index or -1 per output index. */
    int last = p.rank - 1;
    int64_t width = p.out[last], *row_map = tgc_malloc((size_t)width * sizeof *row_map);
    if (row_map == NULL) return tgc_kernel_fail(c, "out of host memory for Pad's row map");
    for (int64_t o = 0; o < width; o++) row_map[o] = tgc_pad_source(&p, last, o);
    int64_t o_idx[TGC_MAX_RANK] = {0};
    for (int64_t r = 0; r < total / width; r++) {
        /* The input row this output row reads, or none (the constant). */
        int64_t src = 0;
        bool constant_row = false;
        for (int a = 0; a < last; a++) {
            int64_t i = tgc_pad_source(&p, a, o_idx[a]);
            if (i < 0) constant_row = true;
            src = src * p.in[a] + (i < 0 ? 0 : i);
        }
        char *dst = y + (size_t)(r * width) * es;
        const char *row = x + (size_t)(src * p.in[last]) * es;
        /* The kept run [begin, begin + kept) is one contiguous copy; the
         * pads around it (and a constant row) go element by element. */
        int64_t run0 = constant_row ? width : p.begin[last], run1 = constant_row ? width : run0 + p.kept[last];
        if (run1 > run0) memcpy(dst + (size_t)run0 * es, row + (size_t)p.lo[last] * es, (size_t)(run1 - run0) * es);
        for (int64_t o = 0; o < width; o++) {
            if (o == run0) o = run1;
            if (o >= width) break;
            int64_t i = constant_row ? -1 : row_map[o];
            move_elem(dst + (size_t)o * es, i < 0 ? (const char *)p.constant : row + (size_t)i * es, es);
        }
        for (int a = last - 1; a >= 0; a--) {
            if (++o_idx[a] < p.out[a]) break;
            o_idx[a] = 0;
        }
    }
    tgc_free(row_map);
    return TGC_OK;
}

/* ---- DepthToSpace, SpaceToDepth -------------------------------------------------------- */

/* Reads blocksize (>= 1) and checks [N, C, H, W] in and out of one dtype. */
static tgc_status read_block(tgc_kernel_ctx *c, int64_t *b) {
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    *b = tgc_kernel_attr_int(c, "blocksize", 0);
    if (*b < 1 || *b > INT32_MAX) return tgc_kernel_fail(c, "attribute 'blocksize' is %lld; it must be >= 1", (long long)*b);
    if (x->rank != 4 || y->rank != 4 || x->dtype != y->dtype)
        return tgc_kernel_fail(c, "input and output must be [N, C, H, W] of one dtype");
    return TGC_OK;
}

/* dst[i * step] = src[i] for i < n, elements of es bytes (typed loops for
 * the common sizes: an element at a time through memcpy with an index
 * divided per element cost DepthToSpace 1.7x ONNX Runtime's time). */
static void spread_row(char *dst, const char *src, int64_t n, int64_t step, size_t es) {
    switch (es) {
#define SPREAD(T)                                                                                                      \
    for (int64_t i = 0; i < n; i++) {                                                                                  \
        T v;                                                                                                           \
        memcpy(&v, src + (size_t)i * sizeof v, sizeof v);                                                              \
        memcpy(dst + (size_t)(i * step) * sizeof v, &v, sizeof v);                                                     \
    }                                                                                                                  \
    return;
    case 1: SPREAD(uint8_t)
    case 2: SPREAD(uint16_t)
    case 4: SPREAD(uint32_t)
    case 8: SPREAD(uint64_t)
#undef SPREAD
    default:
        for (int64_t i = 0; i < n; i++) move_elem(dst + (size_t)(i * step) * es, src + (size_t)i * es, es);
    }
}

tgc_status tgc_cpu_depth_to_space(tgc_kernel_ctx *c) {
    int64_t b;
    tgc_status st = read_block(c, &b);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    const char *mode = tgc_kernel_attr_string(c, "mode", "DCR");
    bool crd = strcmp(mode, "CRD") == 0;
    if (!crd && strcmp(mode, "DCR") != 0) return tgc_kernel_fail(c, "attribute 'mode' is '%s'; it must be DCR or CRD", mode);
    int64_t n_count = x->dims[0], ci = x->dims[1], h = x->dims[2], w = x->dims[3], co = ci / (b * b);
    if (ci % (b * b) != 0 || y->dims[0] != n_count || y->dims[1] != co || y->dims[2] != h * b || y->dims[3] != w * b)
        return tgc_kernel_fail(c, "output must be [N, C / %lld, H * %lld, W * %lld] for the input", (long long)(b * b),
                               (long long)b, (long long)b);
    size_t es = tgc_dtype_size(x->dtype);
    const char *px = tgc_kernel_in_ptr(c, 0);
    char *py = tgc_kernel_out_ptr(c, 0);
    int64_t oh_count = h * b, ow_count = w * b;
    for (int64_t n = 0; n < n_count; n++)
        for (int64_t oc = 0; oc < co; oc++)
            for (int64_t oh = 0; oh < oh_count; oh++) {
                char *dst = py + (size_t)(((n * co + oc) * oh_count + oh) * ow_count) * es;
                int64_t bh = oh % b, ih = oh / b;
                for (int64_t bw = 0; bw < b; bw++) { /* one input row into every b-th output, from bw */
                    int64_t ic = crd ? (oc * b + bh) * b + bw : (bh * b + bw) * co + oc;
                    spread_row(dst + (size_t)bw * es, px + (size_t)(((n * ci + ic) * h + ih) * w) * es, w, b, es);
                }
            }
    return TGC_OK;
}

tgc_status tgc_cpu_space_to_depth(tgc_kernel_ctx *c) {
    int64_t b;
    tgc_status st = read_block(c, &b);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    int64_t n_count = x->dims[0], ci = x->dims[1], h = x->dims[2], w = x->dims[3];
    if (h % b != 0 || w % b != 0 || y->dims[0] != n_count || y->dims[1] != ci * b * b || y->dims[2] != h / b ||
        y->dims[3] != w / b)
        return tgc_kernel_fail(c, "output must be [N, C * %lld, H / %lld, W / %lld] for the input", (long long)(b * b),
                               (long long)b, (long long)b);
    size_t es = tgc_dtype_size(x->dtype);
    const char *px = tgc_kernel_in_ptr(c, 0);
    char *py = tgc_kernel_out_ptr(c, 0);
    int64_t co = ci * b * b, oh_count = h / b, ow_count = w / b;
    /* y[n, (bh * b + bw) * C + c, oh, ow] = x[n, c, oh * b + bh, ow * b + bw] */
    for (int64_t n = 0; n < n_count; n++)
        for (int64_t oc = 0; oc < co; oc++) {
            int64_t blk = oc / ci, ic = oc % ci, bh = blk / b, bw = blk % b;
            for (int64_t oh = 0; oh < oh_count; oh++) {
                char *dst = py + (size_t)(((n * co + oc) * oh_count + oh) * ow_count) * es;
                const char *src = px + (size_t)(((n * ci + ic) * h + oh * b + bh) * w + bw) * es;
                for (int64_t ow = 0; ow < ow_count; ow++) move_elem(dst + (size_t)ow * es, src + (size_t)(ow * b) * es, es);
            }
        }
    return TGC_OK;
}
