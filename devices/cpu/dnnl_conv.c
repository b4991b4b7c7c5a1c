/* Convolutions through oneDNN on NHWC tensors, int8 and float32 (see
 * dnnl_conv.h): per piece of an image's output rows a primitive over the
 * rows of X it reads, the pieces' paddings where the image's edges fall in
 * them; the pieces that share a geometry share a primitive, and all share
 * the weights, reordered once. */
#include "devices/cpu/dnnl_conv.h"

#include "devices/cpu/dnnl_runtime.h"
#include "devices/cpu/gemm_packed.h"
#include "support/alloc.h"
#include "support/checked.h"

#include <stdio.h>
#include <string.h>

#ifdef TGC_HAVE_DNNL

/* Output rows of a piece make at least PIECE_MACS multiply-adds (a smaller
 * piece costs more to hand off than it saves) and, where that leaves more
 * than one row, at most PIECE_SUM_BYTES of int32 sums (they are finished
 * while still in the cache: the int32 sums of a whole wide layer went out
 * to memory and back, a third of MobileNetV2's time); at most MAX_PIECES
 * pieces, of at most MAX_GEOMETRIES shapes (the first, the middle ones,
 * the last two). */
#define PIECE_MACS (INT64_C(1) << 20)
#define PIECE_SUM_BYTES (INT64_C(1) << 18)
#define MAX_PIECES 64
#define MAX_GEOMETRIES 4

/* Float32 pieces (Y written in place, no sums to keep in the cache): none
 * below F32_SPLIT_MACS multiply-adds an image; else a power of two of them
 * (even over 2, 4, 8 or 16 threads), at least 2, more while each keeps
 * F32_PIECE_MACS, at most F32_MAX_PIECES; cut from the sizes alone, never
 * the thread count, so that the bits do not depend on it. Every piece is a
 * call into oneDNN that costs a few microseconds and reloads the weights:
 * MobileNetV2's 1x1 layers over 24 and 32 channels ran 1.5x slower in
 * pieces of 0.5M than whole. */
#define F32_SPLIT_MACS (INT64_C(1) << 20)
#define F32_PIECE_MACS (INT64_C(2) << 20)
#define F32_MAX_PIECES 16
/* The same for a depthwise layer (a group a channel, one output each),
 * whose multiply-adds cost several times a dense layer's (nothing of X is
 * reused across outputs: MobileNetV2's 14x14 and 7x7 depthwise layers ran
 * at 25-35 GMAC/s where its 1x1 layers ran past 200) and whose weights, a
 * few floats a channel, cost nothing to reload: those layers, 0.3M to
 * 1M multiply-adds and 14 to 30 us, ran whole at 2 threads. */
#define F32_DW_SPLIT_MACS (INT64_C(256) << 10)
#define F32_DW_PIECE_MACS (INT64_C(128) << 10)

typedef struct geometry {
    int64_t in_rows, out_rows, pad_top, pad_bottom;
    dnnl_primitive_t prim;
    dnnl_memory_desc_t src, dst;
    size_t scratch_bytes;
} geometry;

typedef struct piece {
    int64_t r0, r1; /* output rows */
    int64_t in0;    /* the first input row it reads */
    int geometry;
} piece;

struct tgc_dnnl_conv {
    tgc_conv_geometry g;
    tgc_dtype x_dtype;
    bool requantizes, bias, sum; /* sum: TGC_DNNL_CONV_SUM */
    dnnl_memory_desc_t bias_md;
    int n_pieces, n_geometries;
    piece *pieces;         /* [n_pieces], in the same block, after the struct */
    geometry *geometries;  /* [n_geometries], after the pieces */
    dnnl_memory_desc_t weights_md, zp_md;
    dnnl_memory_t weights;
    char impl[32]; /* oneDNN's name for the first geometry's implementation (for tests; past 31 chars cut) */
};

/* A convolution's block with room for `pieces` pieces and `shapes`
 * geometries after it (tgc_calloc'd, the arrays' pointers set); NULL
 * without memory. Planning takes room for every cut it may try, the
 * result only what its cut has: a small layer's block is a few KiB, not
 * the 10 KiB of MAX_PIECES pieces and MAX_GEOMETRIES shapes. */
static size_t conv_block_bytes(int pieces, int shapes) {
    return sizeof(tgc_dnnl_conv) + (size_t)pieces * sizeof(piece) + (size_t)shapes * sizeof(geometry);
}

static tgc_dnnl_conv *conv_block(int pieces, int shapes) {
    tgc_dnnl_conv *q = tgc_calloc(1, conv_block_bytes(pieces, shapes));
    if (q == NULL) return NULL;
    q->pieces = (piece *)(q + 1);
    q->geometries = (geometry *)(q->pieces + pieces);
    return q;
}

bool tgc_dnnl_conv_available(void) { return tgc_dnnl_engine() != NULL; }

bool tgc_dnnl_conv_possible(const tgc_conv_geometry *g, tgc_dtype x_dtype) {
    const tgc_window *w = &g->w;
    if (w->n != 2 || g->batch < 1 || g->m_count < 1 || g->cg < 1 || g->out_size < 1) return false;
    for (int a = 0; a < 2; a++)
        if (w->in[a] < 1 || w->in[a] > INT32_MAX || w->kernel[a] > INT32_MAX || w->strides[a] > INT32_MAX ||
            w->dilations[a] > INT32_MAX || w->pads[a] > INT32_MAX || w->pads[2 + a] > INT32_MAX)
            return false;
    if (x_dtype == TGC_FLOAT32)
        return g->channels <= INT32_MAX && g->m_count <= INT32_MAX && g->kk_count >= 1 && tgc_dnnl_engine() != NULL;
    if (x_dtype != TGC_UINT8 && x_dtype != TGC_INT8) return false;
    /* at most 2^16 taps an output: its int32 sum cannot overflow (as tgc_dnnl_igemm) */
    return g->channels <= INT32_MAX && g->m_count <= INT32_MAX && g->kk_count >= 1 &&
           g->kk_count <= TGC_DNNL_IGEMM_MAX_K && g->cg <= TGC_DNNL_IGEMM_MAX_K / g->kk_count &&
           tgc_dnnl_engine() != NULL && tgc_dnnl_exact_int8();
}

static int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

int64_t tgc_dnnl_conv_bound(const tgc_conv_geometry *g, tgc_dtype x_dtype) {
    if (!tgc_dnnl_conv_possible(g, x_dtype)) return 0;
    int64_t mg = g->m_count / g->group, bytes;
    bool depthwise = g->cg == 1 && mg == 1; /* only its layout blocks groups (Goihw16g) */
    /* int8 weights in blocks of 64 channels, float32 ones of 16 (OIhw16i16o) */
    int64_t block = x_dtype == TGC_FLOAT32 ? 16 : 64, elem = x_dtype == TGC_FLOAT32 ? 4 : 1;
    int64_t per_group = depthwise ? 1 : round_up(mg, block) * round_up(g->cg, block);
    if (!tgc_checked_mul_i64(depthwise ? round_up(g->group, 16) : g->group, per_group, &bytes) ||
        !tgc_checked_mul_i64(bytes, g->kk_count * elem, &bytes))
        return 0;
    return bytes + (int64_t)conv_block_bytes(MAX_PIECES, MAX_GEOMETRIES) + 4096;
}

static void free_geometry(geometry *ge) {
    if (ge->prim != NULL) dnnl_primitive_destroy(ge->prim);
    ge->prim = NULL;
}

void tgc_dnnl_conv_free(tgc_dnnl_conv *q) {
    if (q == NULL) return;
    for (int i = 0; i < q->n_geometries; i++) free_geometry(&q->geometries[i]);
    if (q->weights != NULL) dnnl_memory_destroy(q->weights);
    tgc_free(q);
}

/* Cuts an image's output rows into at most `cap` pieces (see dnnl_conv.h;
 * one piece when cap is 1) and works out the rows and paddings each reads.
 * False when there would be more shapes than MAX_GEOMETRIES. */
static bool cut_rows(tgc_dnnl_conv *q, int threads, int64_t cap) {
    q->n_pieces = q->n_geometries = 0;
    const tgc_window *w = &q->g.w;
    int64_t oh = w->out[0], row_macs = w->out[1] * q->g.m_count * q->g.cg * q->g.kk_count, rows;
    if (q->x_dtype == TGC_FLOAT32) {
        int64_t macs, pieces;
        if (!tgc_checked_mul_i64(row_macs, oh, &macs)) macs = INT64_MAX;
        bool depthwise = q->g.cg == 1 && q->g.m_count == q->g.group;
        int64_t split = depthwise ? F32_DW_SPLIT_MACS : F32_SPLIT_MACS;
        int64_t piece = depthwise ? F32_DW_PIECE_MACS : F32_PIECE_MACS;
        pieces = macs < split || cap < 2 ? 1 : 2;
        while (pieces < F32_MAX_PIECES && 2 * pieces <= cap && pieces < oh && macs / (2 * pieces) >= piece)
            pieces *= 2;
        rows = (oh + pieces - 1) / pieces;
    } else {
        rows = row_macs > 0 ? (PIECE_MACS + row_macs - 1) / row_macs : oh;
        int64_t most = threads < 1 ? 1 : threads > MAX_PIECES ? MAX_PIECES : threads;
        if (rows < (oh + most - 1) / most) rows = (oh + most - 1) / most;
        int64_t row_bytes = w->out[1] * q->g.m_count * (int64_t)sizeof(int32_t), cached = PIECE_SUM_BYTES / row_bytes;
        if (rows > cached) rows = cached;
    }
    if (cap > MAX_PIECES) cap = MAX_PIECES;
    if (rows < (oh + cap - 1) / cap) rows = (oh + cap - 1) / cap;
    if (rows < 1) rows = 1;
    int64_t n = (oh + rows - 1) / rows;
    rows = cap <= 1 ? oh : (oh + n - 1) / n; /* as even as rows allow: fewer shapes */
    int64_t sh = w->strides[0], pt = w->pads[0], extent = (w->kernel[0] - 1) * w->dilations[0] + 1;
    for (int64_t r0 = 0; r0 < oh; r0 += rows) {
        piece *p = &q->pieces[q->n_pieces++];
        p->r0 = r0;
        p->r1 = r0 + rows < oh ? r0 + rows : oh;
        int64_t first = r0 * sh - pt, end = (p->r1 - 1) * sh - pt + extent; /* input rows [first, end) */
        geometry want = {.out_rows = p->r1 - r0,
                         .pad_top = first < 0 ? -first : 0,
                         .pad_bottom = end > w->in[0] ? end - w->in[0] : 0};
        p->in0 = first < 0 ? 0 : first;
        want.in_rows = (end < w->in[0] ? end : w->in[0]) - p->in0;
        int k = 0;
        while (k < q->n_geometries &&
               !(q->geometries[k].in_rows == want.in_rows && q->geometries[k].out_rows == want.out_rows &&
                 q->geometries[k].pad_top == want.pad_top && q->geometries[k].pad_bottom == want.pad_bottom))
            k++;
        if (k == q->n_geometries) {
            if (k == MAX_GEOMETRIES) return false;
            q->geometries[q->n_geometries++] = want;
        }
        p->geometry = k;
    }
    return true;
}

/* The weights' dims as oneDNN takes them: [G, M / G, C / G, kh, kw], or
 * [M, C, kh, kw] for one group in float32 (its plain convolutions);
 * returns the rank. */
static int weights_dims(const tgc_dnnl_conv *q, dnnl_dims_t dims) {
    const tgc_conv_geometry *g = &q->g;
    if (q->x_dtype == TGC_FLOAT32 && g->group == 1) {
        dnnl_dims_t four = {g->m_count, g->cg, g->w.kernel[0], g->w.kernel[1]};
        memcpy(dims, four, sizeof four);
        return 4;
    }
    dnnl_dims_t five = {g->group, g->m_count / g->group, g->cg, g->w.kernel[0], g->w.kernel[1]};
    memcpy(dims, five, sizeof five);
    return 5;
}

/* oneDNN's implementation for a float32 depthwise convolution on NHWC, by
 * the start of its name: its direct kernel (jit_dw) before its BRGEMM one
 * (brdgmm_dw), which oneDNN 2.6 lists first on AVX-512. On a Zen 4 core,
 * MNASNet's 5x5 depthwise layers on 28x28 to 7x7 ran 0.72-0.92x the
 * time in jit_dw, and the models at 1 thread (ab.py, 6 alternating
 * rounds): MNASNet 0.970, MobileNetV3-Small 0.939, ShuffleNetV2 0.975,
 * EfficientNet-B1 0.988; level at 2 threads. */
#define F32_DW_IMPL "jit_dw"

/* Whether pd's implementation name starts with `prefix`. */
static bool impl_is(const_dnnl_primitive_desc_t pd, const char *prefix) {
    const char *impl = NULL;
    return dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success && impl != NULL &&
           strncmp(impl, prefix, strlen(prefix)) == 0;
}

/* The primitive description for desc: for a float32 depthwise layer the
 * first implementation named F32_DW_IMPL where oneDNN has one, else its
 * first. NULL when it has none. */
static dnnl_primitive_desc_t describe(const tgc_dnnl_conv *q, const dnnl_convolution_desc_t *desc,
                                      const_dnnl_primitive_attr_t attr) {
    bool depthwise = q->x_dtype == TGC_FLOAT32 && q->g.cg == 1 && q->g.m_count == q->g.group;
    dnnl_primitive_desc_iterator_t it = NULL;
    if (depthwise && dnnl_primitive_desc_iterator_create(&it, desc, attr, tgc_dnnl_engine(), NULL) == dnnl_success) {
        dnnl_primitive_desc_t found = NULL;
        do {
            dnnl_primitive_desc_t pd = dnnl_primitive_desc_iterator_fetch(it);
            if (pd != NULL && impl_is(pd, F32_DW_IMPL)) found = pd;
            else if (pd != NULL) dnnl_primitive_desc_destroy(pd);
        } while (found == NULL && dnnl_primitive_desc_iterator_next(it) == dnnl_success);
        dnnl_primitive_desc_iterator_destroy(it);
        if (found != NULL) return found;
    }
    dnnl_primitive_desc_t pd = NULL;
    return dnnl_primitive_desc_create(&pd, desc, attr, tgc_dnnl_engine(), NULL) == dnnl_success ? pd : NULL;
}

/* Geometry ge's primitive (weights "any": the layout it asks for must be
 * the first geometry's), or with `make` false only its description (the
 * weights' layout, the scratchpad). False when oneDNN declines or offers
 * only its reference loops. */
static bool make_geometry(tgc_dnnl_conv *q, geometry *ge, bool first, const tgc_dnnl_conv_requant *rq, bool make) {
    const tgc_conv_geometry *g = &q->g;
    const tgc_window *w = &g->w;
    bool f32 = q->x_dtype == TGC_FLOAT32;
    dnnl_data_type_t xt = f32 ? dnnl_f32 : q->x_dtype == TGC_UINT8 ? dnnl_u8 : dnnl_s8;
    dnnl_data_type_t yt = f32 ? dnnl_f32 : rq == NULL ? dnnl_s32 : rq->y_dtype == TGC_UINT8 ? dnnl_u8 : dnnl_s8;
    dnnl_dims_t src_dims = {1, g->channels, ge->in_rows, w->in[1]}, dst_dims = {1, g->m_count, ge->out_rows, w->out[1]};
    dnnl_dims_t w_dims;
    int w_rank = weights_dims(q, w_dims);
    dnnl_dims_t strides = {w->strides[0], w->strides[1]}, dilates = {w->dilations[0] - 1, w->dilations[1] - 1};
    dnnl_dims_t pad_l = {ge->pad_top, w->pads[1]}, pad_r = {ge->pad_bottom, w->pads[3]};
    dnnl_memory_desc_t any_w;
    dnnl_convolution_desc_t desc;
    dnnl_primitive_attr_t attr;
    int32_t runtime_zp = DNNL_RUNTIME_S32_VAL;
    if (dnnl_memory_desc_init_by_tag(&ge->src, 4, src_dims, xt, dnnl_nhwc) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&ge->dst, 4, dst_dims, yt, dnnl_nhwc) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&any_w, w_rank, w_dims, f32 ? dnnl_f32 : dnnl_s8, dnnl_format_tag_any) !=
            dnnl_success ||
        dnnl_dilated_convolution_forward_desc_init(&desc, dnnl_forward_inference, dnnl_convolution_direct, &ge->src,
                                                   &any_w, q->bias ? &q->bias_md : NULL, &ge->dst, strides, dilates,
                                                   pad_l, pad_r) !=
            dnnl_success ||
        dnnl_primitive_attr_create(&attr) != dnnl_success)
        return false;
    bool ok = dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user) == dnnl_success &&
              (f32 || dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_SRC, 1, 0, &runtime_zp) == dnnl_success);
    if (ok && rq != NULL) {
        /* rounded (half to even) before the zero point is added, as ONNX
         * and MLAS do: oneDNN adds it first and rounds once, which moves a
         * tie by one where the zero point is odd */
        dnnl_post_ops_t po = NULL;
        ok = dnnl_primitive_attr_set_output_scales(attr, g->m_count, 1 << 1, rq->scales) == dnnl_success &&
             dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_DST, 1, 0, &rq->y_zp) == dnnl_success &&
             dnnl_post_ops_create(&po) == dnnl_success &&
             dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_round, 0.0f, 0.0f) == dnnl_success &&
             dnnl_primitive_attr_set_post_ops(attr, po) == dnnl_success;
        if (po != NULL) dnnl_post_ops_destroy(po);
    }
    if (ok && q->sum) { /* Y += the result, after the bias */
        dnnl_post_ops_t po = NULL;
        ok = dnnl_post_ops_create(&po) == dnnl_success && dnnl_post_ops_append_sum(po, 1.0f) == dnnl_success &&
             dnnl_primitive_attr_set_post_ops(attr, po) == dnnl_success;
        if (po != NULL) dnnl_post_ops_destroy(po);
    }
    dnnl_primitive_desc_t pd = ok ? describe(q, &desc, attr) : NULL;
    dnnl_primitive_attr_destroy(attr);
    if (pd == NULL) return false;
    const char *impl = NULL;
    const dnnl_memory_desc_t *wmd = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    ok = dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success && impl != NULL &&
         strncmp(impl, "ref", 3) != 0 && wmd != NULL;
    if (ok && first) {
        q->weights_md = *wmd;
        snprintf(q->impl, sizeof q->impl, "%s", impl);
    }
    ok = ok && dnnl_memory_desc_equal(&q->weights_md, wmd) &&
         (!make || dnnl_primitive_create(&ge->prim, pd) == dnnl_success);
    ge->scratch_bytes = ok ? tgc_dnnl_scratch_size(pd) : 0;
    dnnl_primitive_desc_destroy(pd);
    return ok;
}

/* Reorders w ([G, M / G, C / G, kh, kw] as it lies) into q->weights. */
static bool reorder_weights(tgc_dnnl_conv *q, const void *w) {
    dnnl_dims_t w_dims;
    int w_rank = weights_dims(q, w_dims);
    bool f32 = q->x_dtype == TGC_FLOAT32;
    dnnl_memory_desc_t plain;
    dnnl_memory_t from = NULL;
    dnnl_primitive_desc_t rpd = NULL;
    dnnl_primitive_t reorder = NULL;
    dnnl_stream_t stream = tgc_dnnl_thread_stream();
    bool ok = stream != NULL &&
              dnnl_memory_desc_init_by_tag(&plain, w_rank, w_dims, f32 ? dnnl_f32 : dnnl_s8,
                                           w_rank == 4 ? dnnl_oihw : dnnl_goihw) == dnnl_success &&
              dnnl_memory_create(&q->weights, &q->weights_md, tgc_dnnl_engine(), DNNL_MEMORY_ALLOCATE) == dnnl_success;
    if (!ok) q->weights = NULL;
    ok = ok && dnnl_memory_create(&from, &plain, tgc_dnnl_engine(), (void *)w) == dnnl_success &&
         dnnl_reorder_primitive_desc_create(&rpd, &plain, tgc_dnnl_engine(), &q->weights_md, tgc_dnnl_engine(), NULL) ==
             dnnl_success &&
         dnnl_primitive_create(&reorder, rpd) == dnnl_success;
    if (ok) {
        dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, q->weights}};
        ok = dnnl_primitive_execute(reorder, stream, 2, args) == dnnl_success &&
             dnnl_stream_wait(stream) == dnnl_success;
    }
    if (reorder != NULL) dnnl_primitive_destroy(reorder);
    if (rpd != NULL) dnnl_primitive_desc_destroy(rpd);
    if (from != NULL) dnnl_memory_destroy(from);
    return ok;
}

/* The convolution create makes, up to its weights: the pieces and their
 * primitives (with `make` false only their descriptions, for the sizes).
 * NULL as create says. */
static tgc_dnnl_conv *plan(const tgc_conv_geometry *g, tgc_dtype x_dtype, int threads,
                           const tgc_dnnl_conv_requant *requant, unsigned f32_ops, bool make, bool *no_memory) {
    *no_memory = false;
    if (requant != NULL && (x_dtype == TGC_FLOAT32 || (requant->y_dtype != TGC_UINT8 && requant->y_dtype != TGC_INT8)))
        return NULL;
    if (!tgc_dnnl_conv_possible(g, x_dtype)) return NULL;
    /* planned for one thread (oneDNN sizes its work by OpenMP's count when a
     * primitive is made): tgc's pool runs the pieces */
    if (tgc_dnnl_thread_stream() == NULL) return NULL;
    tgc_dnnl_conv *q = conv_block(MAX_PIECES, MAX_GEOMETRIES);
    if (q == NULL) {
        *no_memory = true;
        return NULL;
    }
    q->g = *g;
    q->x_dtype = x_dtype;
    q->requantizes = requant != NULL;
    q->bias = x_dtype == TGC_FLOAT32 ? (f32_ops & TGC_DNNL_CONV_BIAS) != 0 : requant != NULL && requant->bias;
    q->sum = x_dtype == TGC_FLOAT32 && (f32_ops & TGC_DNNL_CONV_SUM) != 0;
    dnnl_dims_t one = {1}, m_dims = {g->m_count};
    bool ok = dnnl_memory_desc_init_by_tag(&q->zp_md, 1, one, dnnl_s32, dnnl_a) == dnnl_success &&
              dnnl_memory_desc_init_by_tag(&q->bias_md, 1, m_dims, x_dtype == TGC_FLOAT32 ? dnnl_f32 : dnnl_s32,
                                           dnnl_a) == dnnl_success;
    tgc_dnnl_make_lock();
    /* Pieces of more shapes than MAX_GEOMETRIES (a dilated window's
     * paddings differ from piece to piece), or of shapes oneDNN lays the
     * weights out for differently (its 1x1 kernels block by the output's
     * size; AlexNet's 5x5 on 27x27 cut in 2-row pieces left a last piece of
     * one row, for which no kernel took the first piece's layout): half as
     * many pieces, until they fit; one piece an image at the end. AlexNet's
     * layer went from one piece to 7 (6 of 4 rows, one of 3): 1.75 -> 1.09
     * ms at 2 threads, the model -8% (-2% at 1 thread, medians of 5). */
    for (int64_t cap = MAX_PIECES; ok;) {
        for (int k = 0; k < q->n_geometries; k++) free_geometry(&q->geometries[k]);
        q->n_geometries = 0;
        if (!cut_rows(q, threads, cap)) {
            ok = cap > 1;
            cap /= 2;
            continue;
        }
        bool made = true;
        for (int k = 0; made && k < q->n_geometries; k++)
            made = make_geometry(q, &q->geometries[k], k == 0, requant, make);
        if (made) break;
        ok = cap > 1;
        cap /= 2;
    }
    tgc_dnnl_make_unlock();
    tgc_dnnl_conv *fit = ok ? conv_block(q->n_pieces, q->n_geometries) : NULL;
    if (fit == NULL) {
        *no_memory = ok;
        tgc_dnnl_conv_free(q);
        return NULL;
    }
    piece *pieces = fit->pieces;
    geometry *geometries = fit->geometries;
    *fit = *q; /* the header; the primitives move to fit with the geometries */
    fit->pieces = pieces, fit->geometries = geometries;
    memcpy(pieces, q->pieces, (size_t)q->n_pieces * sizeof *pieces);
    memcpy(geometries, q->geometries, (size_t)q->n_geometries * sizeof *geometries);
    tgc_free(q);
    return fit;
}

tgc_dnnl_conv *tgc_dnnl_conv_create(const tgc_conv_geometry *g, tgc_dtype x_dtype, const void *w, int threads,
                                    const tgc_dnnl_conv_requant *requant, unsigned f32_ops, size_t *bytes,
                                    bool *no_memory) {
    *bytes = 0;
    tgc_dnnl_conv *q = plan(g, x_dtype, threads, requant, f32_ops, true, no_memory);
    if (q == NULL) return NULL;
    tgc_dnnl_make_lock();
    bool ok = reorder_weights(q, w);
    tgc_dnnl_make_unlock();
    if (!ok) {
        tgc_dnnl_conv_free(q);
        return NULL;
    }
    *bytes = conv_block_bytes(q->n_pieces, q->n_geometries) + dnnl_memory_desc_get_size(&q->weights_md);
    return q;
}

int64_t tgc_dnnl_conv_bytes(const tgc_conv_geometry *g, tgc_dtype x_dtype, int threads, unsigned f32_ops) {
    bool no_memory;
    tgc_dnnl_conv *q = plan(g, x_dtype, threads, NULL, f32_ops, false, &no_memory);
    if (q == NULL) return no_memory ? tgc_dnnl_conv_bound(g, x_dtype) : 0;
    int64_t bytes = (int64_t)(conv_block_bytes(q->n_pieces, q->n_geometries) +
                              dnnl_memory_desc_get_size(&q->weights_md));
    tgc_dnnl_conv_free(q);
    return bytes;
}

bool tgc_dnnl_conv_matches(const tgc_dnnl_conv *q, const tgc_conv_geometry *g, tgc_dtype x_dtype) {
    const tgc_conv_geometry *h = &q->g;
    bool same = x_dtype == q->x_dtype && g->w.n == 2 && g->channels == h->channels && g->m_count == h->m_count &&
                g->group == h->group;
    for (int a = 0; same && a < 2; a++)
        same = g->w.in[a] == h->w.in[a] && g->w.out[a] == h->w.out[a] && g->w.kernel[a] == h->w.kernel[a] &&
               g->w.strides[a] == h->w.strides[a] && g->w.dilations[a] == h->w.dilations[a] &&
               g->w.pads[a] == h->w.pads[a] && g->w.pads[2 + a] == h->w.pads[2 + a];
    return same;
}

int64_t tgc_dnnl_conv_pieces(const tgc_dnnl_conv *q) { return q->n_pieces; }

bool tgc_dnnl_conv_requantizes(const tgc_dnnl_conv *q) { return q->requantizes; }

int64_t tgc_dnnl_conv_piece_sums(const tgc_dnnl_conv *q) {
    int64_t most = 0;
    for (int i = 0; i < q->n_pieces; i++)
        if (q->pieces[i].r1 - q->pieces[i].r0 > most) most = q->pieces[i].r1 - q->pieces[i].r0;
    return most * q->g.w.out[1] * q->g.m_count;
}

const char *tgc_dnnl_conv_impl(const tgc_dnnl_conv *q) { return q->impl; }

void tgc_dnnl_conv_piece_rows(const tgc_dnnl_conv *q, int64_t i, int64_t *r0, int64_t *r1) {
    *r0 = q->pieces[i].r0;
    *r1 = q->pieces[i].r1;
}

bool tgc_dnnl_conv_run_piece(const tgc_dnnl_conv *q, int64_t i, const void *x_nhwc, int32_t x_zp, const void *bias,
                             void *y) {
    const piece *p = &q->pieces[i];
    const geometry *ge = &q->geometries[p->geometry];
    const tgc_conv_geometry *g = &q->g;
    if (q->bias && bias == NULL) return false;
    bool f32 = q->x_dtype == TGC_FLOAT32;
    size_t elem = f32 ? sizeof(float) : 1;
    const uint8_t *x = (const uint8_t *)x_nhwc + (size_t)(p->in0 * g->w.in[1] * g->channels) * elem;
    /* the thread's memory objects for these layouts, pointed at this call's data (x_zp: read during the run) */
    dnnl_memory_t src = tgc_dnnl_arg(TGC_DNNL_SRC, &ge->src, (void *)x), dst = tgc_dnnl_arg(TGC_DNNL_DST, &ge->dst, y);
    dnnl_memory_t zp = f32 ? NULL : tgc_dnnl_arg(TGC_DNNL_ZERO_POINT, &q->zp_md, &x_zp);
    dnnl_memory_t b = q->bias ? tgc_dnnl_arg(TGC_DNNL_BIAS, &q->bias_md, (void *)bias) : NULL;
    if (src == NULL || dst == NULL || (!f32 && zp == NULL) || (q->bias && b == NULL)) return false;
    /* one slot past the five for tgc_dnnl_run's scratchpad */
    dnnl_exec_arg_t args[6] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, q->weights}, {DNNL_ARG_DST, dst}};
    int n = 3;
    if (q->bias) args[n++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, b};
    if (!f32) args[n++] = (dnnl_exec_arg_t){DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zp};
    return tgc_dnnl_run(ge->prim, ge->scratch_bytes, n, args);
}

#else /* no oneDNN */

bool tgc_dnnl_conv_available(void) { return false; }

bool tgc_dnnl_conv_possible(const tgc_conv_geometry *g, tgc_dtype x_dtype) {
    (void)g, (void)x_dtype;
    return false;
}

int64_t tgc_dnnl_conv_bound(const tgc_conv_geometry *g, tgc_dtype x_dtype) {
    (void)g, (void)x_dtype;
    return 0;
}

tgc_dnnl_conv *tgc_dnnl_conv_create(const tgc_conv_geometry *g, tgc_dtype x_dtype, const void *w, int threads,
                                    const tgc_dnnl_conv_requant *requant, unsigned f32_ops, size_t *bytes,
                                    bool *no_memory) {
    (void)g, (void)x_dtype, (void)w, (void)threads, (void)requant, (void)f32_ops;
    *bytes = 0;
    *no_memory = false;
    return NULL;
}

int64_t tgc_dnnl_conv_bytes(const tgc_conv_geometry *g, tgc_dtype x_dtype, int threads, unsigned f32_ops) {
    (void)g, (void)x_dtype, (void)threads, (void)f32_ops;
    return 0;
}

bool tgc_dnnl_conv_matches(const tgc_dnnl_conv *q, const tgc_conv_geometry *g, tgc_dtype x_dtype) {
    (void)q, (void)g, (void)x_dtype;
    return false;
}

int64_t tgc_dnnl_conv_pieces(const tgc_dnnl_conv *q) {
    (void)q;
    return 0;
}

void tgc_dnnl_conv_piece_rows(const tgc_dnnl_conv *q, int64_t i, int64_t *r0, int64_t *r1) {
    (void)q, (void)i;
    *r0 = *r1 = 0;
}

int64_t tgc_dnnl_conv_piece_sums(const tgc_dnnl_conv *q) {
    (void)q;
    return 0;
}

bool tgc_dnnl_conv_requantizes(const tgc_dnnl_conv *q) {
    (void)q;
    return false;
}

const char *tgc_dnnl_conv_impl(const tgc_dnnl_conv *q) {
    (void)q;
    return "";
}

bool tgc_dnnl_conv_run_piece(const tgc_dnnl_conv *q, int64_t i, const void *x_nhwc, int32_t x_zp, const void *bias,
                             void *y) {
    (void)q, (void)i, (void)x_nhwc, (void)x_zp, (void)bias, (void)y;
    return false;
}

void tgc_dnnl_conv_free(tgc_dnnl_conv *q) { (void)q; }

#endif
