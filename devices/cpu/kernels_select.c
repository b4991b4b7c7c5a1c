/* CPU kernels that select elements (ONNX opset 17): TopK (sizes from its
 * host-memory k), NonZero and Compress (sizes from the values: they call
 * tgc_kernel_alloc_output, tgc_kernel_def.sizes_outputs). */
#include "devices/cpu/elem_types.h"
#include "devices/cpu/index_sort.h"
#include "devices/cpu/kernels_indexing.h"
#include "devices/cpu/kernels_shape.h"

#include "support/alloc.h"
#include "support/checked.h"
#include "support/parallel_for.h"

#include <string.h>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

/* ---- TopK --------------------------------------------------------------------- */

/* One lane of TopK: elements base + i * stride (i < n) of data. */
typedef struct lane {
    tgc_cpu_elem_cmp_fn cmp;
    const void *data;
    int64_t base, stride;
    bool largest;
    bool f32; /* data is float32: lane_top_k scans it against the kept worst inline */
} lane;

/* Orders lane positions: larger first when `largest` (NaN counts as the
 * largest, numpy's order); equal elements keep their order (the merge
 * sort is stable), so the lower index comes first. */
static int lane_cmp(const void *ctx, int64_t a, int64_t b) {
    const lane *l = ctx;
    int r = l->cmp(l->data, l->base + a * l->stride, l->base + b * l->stride);
    return l->largest ? -r : r;
}

/* Positions a and b of the lane in TopK's output order: lane_cmp, then the
 * lower position first (a total order). */
static int lane_order(const lane *l, int64_t a, int64_t b) {
    int r = lane_cmp(l, a, b);
    return r != 0 ? r : a < b ? -1 : a > b;
}

/* heap[0..n) with heap[i] moved down to where neither child is later in
 * lane_order (the root is the latest: the worst kept). */
static void sift_down(const lane *l, int64_t *heap, int64_t n, int64_t i) {
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= n) return;
        if (c + 1 < n && lane_order(l, heap[c + 1], heap[c]) > 0) c++;
        if (lane_order(l, heap[c], heap[i]) <= 0) return;
        int64_t t = heap[c];
        heap[c] = heap[i];
        heap[i] = t;
        i = c;
    }
}

/* Whether float32 element v surely comes after the kept worst w in the
 * lane's order (no NaN on either side: NaN's place is lane_cmp's to say;
 * equal values: v's position is the higher, so it comes after). */
static bool f32_after(const lane *l, float v, float w) {
    if (v != v || w != w) return false;
    return l->largest ? v <= w : v >= w;
}

/* Float32 elements the scan tests at once. */
#define SCAN_BLOCK 16

/* Where TopK's scan of a contiguous float32 lane stops next: the start of
 * the first block of SCAN_BLOCK elements at or after x[0] holding one that
 * does not surely come after the kept worst w (f32_after; a NaN does not),
 * or the last whole block's end. With SSE, each block is four compares and
 * their sign masks. */
static int64_t skip_after(const float *x, int64_t n, float w, bool largest) {
    int64_t j = 0;
#if defined(__SSE2__)
    __m128 wv = _mm_set1_ps(w);
    for (; j + SCAN_BLOCK <= n; j += SCAN_BLOCK) {
        __m128 a = _mm_loadu_ps(x + j), b = _mm_loadu_ps(x + j + 4), c = _mm_loadu_ps(x + j + 8),
               d = _mm_loadu_ps(x + j + 12);
        __m128 after = largest ? _mm_and_ps(_mm_and_ps(_mm_cmple_ps(a, wv), _mm_cmple_ps(b, wv)),
                                            _mm_and_ps(_mm_cmple_ps(c, wv), _mm_cmple_ps(d, wv)))
                               : _mm_and_ps(_mm_and_ps(_mm_cmpge_ps(a, wv), _mm_cmpge_ps(b, wv)),
                                            _mm_and_ps(_mm_cmpge_ps(c, wv), _mm_cmpge_ps(d, wv)));
        if (_mm_movemask_ps(after) != 0xF) break; /* false where NaN: the block has a candidate */
    }
#else
    for (; j + SCAN_BLOCK <= n; j += SCAN_BLOCK) {
        bool before = false;
        for (int t = 0; t < SCAN_BLOCK; t++) before |= largest ? !(x[j + t] <= w) : !(x[j + t] >= w);
        if (before) break;
    }
#endif
    return j;
}

/* The k best positions (0 < k <= n) of the lane's n, in lane_order, into
 * best[0..k): a binary heap of the best k so far with the worst at its
 * root, each later position compared with the root and put in its place
 * only when it comes before it (Williams' heap, CACM 7(6), 1964), then the
 * heap sorted in place. At most n log2 k comparisons, about n when the
 * values come in no particular order (a full sort of a 32000-word
 * vocabulary took n log2 n through a function pointer each). Float32
 * lanes compare with the root inline first. */
static void lane_top_k(const lane *l, int64_t n, int64_t k, int64_t *best) {
    const bool f32 = l->f32;
    const float *x = f32 ? (const float *)l->data + l->base : NULL;
    const int64_t st = l->stride;
    for (int64_t j = 0; j < k; j++) best[j] = j;
    for (int64_t j = k / 2 - 1; j >= 0; j--) sift_down(l, best, k, j);
    float worst = f32 ? x[best[0] * st] : 0.0f;
    for (int64_t j = k; j < n; j++) {
        if (f32 && st == 1 && (j += skip_after(x + j, n - j, worst, l->largest)) == n) break;
        if (f32 && f32_after(l, x[j * st], worst)) continue;
        if (lane_order(l, j, best[0]) >= 0) continue;
        best[0] = j;
        sift_down(l, best, k, 0);
        if (f32) worst = x[best[0] * st];
    }
    for (int64_t end = k - 1; end > 0; end--) { /* the worst to the back, one at a time */
        int64_t t = best[0];
        best[0] = best[end];
        best[end] = t;
        sift_down(l, best, end, 0);
    }
}

/* Below this share of its axis, TopK selects through a heap (lane_top_k)
 * instead of sorting the whole lane. */
#define TOP_K_HEAP_SHARE 4

/* Elements a piece of TopK's lanes holds at least (lanes are whole). */
#define TOP_K_PIECE_ELEMS ((int64_t)1 << 16)

/* A TopK's lanes, cut into pieces of per_piece lanes. */
typedef struct top_k_job {
    lane l; /* base set per lane */
    int64_t n, k, inner, lanes, per_piece;
    size_t es;
    char *vals;
    int64_t *idx, *pos; /* pos: 2n positions a slot */
} top_k_job;

/* Piece p: lanes [p * per_piece, ...) each into its k outputs. */
static void top_k_piece(void *arg, int64_t p, int slot) {
    const top_k_job *j = arg;
    lane l = j->l;
    int64_t n = j->n, k = j->k, inner = j->inner, *pos = j->pos + (size_t)slot * 2 * (size_t)n;
    int64_t end = (p + 1) * j->per_piece < j->lanes ? (p + 1) * j->per_piece : j->lanes;
    for (int64_t q = p * j->per_piece; q < end; q++) {
        int64_t o = q / inner, i = q % inner;
        l.base = o * n * inner + i;
        if (k <= n / TOP_K_HEAP_SHARE) {
            lane_top_k(&l, n, k, pos);
        } else {
            for (int64_t t = 0; t < n; t++) pos[t] = t;
            tgc_cpu_sort_positions(pos, pos + n, n, lane_cmp, &l);
        }
        for (int64_t t = 0; t < k; t++) {
            int64_t at = (o * k + t) * inner + i;
            j->idx[at] = pos[t];
            const char *from = (const char *)l.data + (size_t)(l.base + pos[t] * inner) * j->es;
            tgc_cpu_copy_elem(j->vals + (size_t)at * j->es, from, j->es);
        }
    }
}

/* TopK-11: along `axis` (default -1) of X, the k (input 1, host int64,
 * 0 <= k <= the axis size) largest (largest 1, default) or smallest
 * elements: Values (X's dtype) and Indices (int64, positions along the
 * axis), each with the axis of size k, in order (sorted or not, tgc always
 * sorts); ties: the lower index first. A k of at most a quarter of the
 * axis is selected through a heap, a larger one by sorting the lane. */
tgc_status tgc_cpu_top_k(tgc_kernel_ctx *c) {
    tgc_status st = tgc_cpu_shape_check_moves(c, 2);
    int64_t kv[1];
    int nk = 0;
    if (st == TGC_OK) st = tgc_kernel_check_host(c, 2, 2);
    if (st == TGC_OK) st = tgc_kernel_read_ints(c, 1, "K", kv, 1, &nk);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0];
    int axis = 0;
    if (nk != 1) return tgc_kernel_fail(c, "TopK: input 1 (K) must hold one value");
    if (x->rank < 1) return tgc_kernel_fail(c, "TopK: input 0 is a scalar; it needs rank >= 1");
    if ((st = tgc_kernel_axis_attr(c, -1, x->rank, &axis)) != TGC_OK) return st;
    int64_t k = kv[0], n = x->dims[axis];
    if (k < 0 || k > n)
        return tgc_kernel_fail(c, "TopK: K is %lld; axis %d has %lld elements", (long long)k, axis, (long long)n);
    int64_t dims[TGC_MAX_RANK];
    memcpy(dims, x->dims, sizeof dims);
    dims[axis] = k;
    if ((st = tgc_kernel_expect_dims(c, 0, x->rank, dims)) == TGC_OK) st = tgc_kernel_expect_dims(c, 1, x->rank, dims);
    if (st != TGC_OK) return st;
    if (c->outputs[1].dtype != TGC_INT64) return tgc_kernel_fail(c, "TopK: output 1 (Indices) must be int64");
    lane l = {.cmp = tgc_cpu_elem_cmp(x->dtype), .data = tgc_kernel_in_ptr(c, 0),
              .largest = tgc_kernel_attr_int(c, "largest", 1) != 0, .f32 = x->dtype == TGC_FLOAT32};
    if (l.cmp == NULL) return tgc_kernel_fail(c, "TopK: input 0 is %s; no order for it", tgc_dtype_name(x->dtype));
    int64_t outer = tgc_cpu_dims_product(x->dims, axis);
    int64_t inner = tgc_cpu_dims_product(x->dims + axis + 1, x->rank - axis - 1);
    if (k == 0 || outer == 0 || inner == 0) return TGC_OK;
    int width = tgc_parallel_width(c->pool);
    size_t bytes; /* 2n positions a participant */
    if (!tgc_checked_mul_size((size_t)n, 2 * (size_t)width, &bytes) ||
        !tgc_checked_mul_size(bytes, sizeof(int64_t), &bytes))
        return tgc_kernel_fail(c, "TopK: %lld elements an axis is too many to sort", (long long)n);
    int64_t *pos = tgc_malloc(bytes);
    if (pos == NULL) return tgc_kernel_fail(c, "TopK: no host memory to sort %lld elements", (long long)n);
    l.stride = inner;
    top_k_job job = {.l = l, .n = n, .k = k, .inner = inner, .es = tgc_dtype_size(x->dtype),
                     .vals = tgc_kernel_out_ptr(c, 0), .idx = tgc_kernel_out_ptr(c, 1), .pos = pos,
                     .lanes = outer * inner};
    job.per_piece = n >= TOP_K_PIECE_ELEMS ? 1 : TOP_K_PIECE_ELEMS / n;
    tgc_parallel_for(c->pool, (job.lanes + job.per_piece - 1) / job.per_piece, top_k_piece, &job);
    tgc_free(pos);
    return TGC_OK;
}

/* ---- NonZero ---------------------------------------------------------------- */

/* NonZero-13: the coordinates of the non-zero elements of X (any dtype;
 * -0.0 is zero, NaN is not) in row-major order: int64 [max(r, 1), n],
 * row d holding the coordinates on axis d (a scalar reads as [1]). */
tgc_status tgc_cpu_nonzero(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 1, 0);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0];
    if (!tgc_cpu_dtype_listed(x->dtype))
        return tgc_kernel_fail(c, "NonZero: input 0 is %s; no zero test for it", tgc_dtype_name(x->dtype));
    int64_t total = tgc_value_numel(x), count = 0;
    const void *p = tgc_kernel_in_ptr(c, 0);
    for (int64_t i = 0; i < total; i++) count += tgc_cpu_elem_nonzero(x->dtype, p, i);
    int r = x->rank > 0 ? x->rank : 1;
    int64_t dims[2] = {r, count};
    if ((st = tgc_kernel_alloc_output(c, 0, 2, dims)) != TGC_OK) return st;
    int64_t *out = tgc_kernel_out_ptr(c, 0), idx[TGC_MAX_RANK] = {0}, j = 0;
    for (int64_t i = 0; i < total && j < count; i++) {
        if (tgc_cpu_elem_nonzero(x->dtype, p, i)) {
            for (int d = 0; d < r; d++) out[d * count + j] = idx[d];
            j++;
        }
        for (int d = x->rank - 1; d >= 0; d--) { /* the next coordinates, row-major */
            if (++idx[d] < x->dims[d]) break;
            idx[d] = 0;
        }
    }
    return TGC_OK;
}

/* ---- Compress ----------------------------------------------------------------- */

/* Compress-11: keeps the slices along `axis` (or, without it, the
 * elements of the flattened input) whose bool condition (input 1, 1-D) is
 * true; a condition shorter than the axis drops the rest, a longer one is
 * an error. */
tgc_status tgc_cpu_compress(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 2, 0);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *cond = &c->inputs[1];
    if (cond->dtype != TGC_BOOL || cond->rank != 1)
        return tgc_kernel_fail(c, "Compress: input 1 (condition) must be a 1-D bool tensor");
    if (c->outputs[0].dtype != x->dtype) return tgc_kernel_fail(c, "Compress: output 0 must have input 0's dtype");
    bool has_axis = tgc_node_attr(c->node, "axis") != NULL;
    int axis = 0;
    int64_t outer = 1, size = tgc_value_numel(x), inner = 1;
    if (has_axis) {
        if (x->rank < 1) return tgc_kernel_fail(c, "Compress: input 0 is a scalar; an axis needs rank >= 1");
        if ((st = tgc_kernel_axis_attr(c, 0, x->rank, &axis)) != TGC_OK) return st;
        outer = tgc_cpu_dims_product(x->dims, axis);
        size = x->dims[axis];
        inner = tgc_cpu_dims_product(x->dims + axis + 1, x->rank - axis - 1);
    }
    int64_t len = cond->dims[0], kept = 0;
    if (len > size)
        return tgc_kernel_fail(c, "Compress: the condition has %lld elements but the %s has %lld", (long long)len,
                               has_axis ? "axis" : "input", (long long)size);
    const uint8_t *keep = tgc_kernel_in_ptr(c, 1);
    for (int64_t i = 0; i < len; i++) kept += keep[i] != 0;
    int64_t dims[TGC_MAX_RANK] = {kept};
    int rank = 1;
    if (has_axis) {
        memcpy(dims, x->dims, sizeof dims);
        dims[axis] = kept;
        rank = x->rank;
    }
    if ((st = tgc_kernel_alloc_output(c, 0, rank, dims)) != TGC_OK) return st;
    size_t run = (size_t)inner * tgc_dtype_size(x->dtype);
    const char *src = tgc_kernel_in_ptr(c, 0);
    char *dst = tgc_kernel_out_ptr(c, 0);
    if (run == 0 || kept == 0) return TGC_OK;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < len; i++)
            if (keep[i]) {
                memcpy(dst, src + (size_t)(o * size + i) * run, run);
                dst += run;
            }
    return TGC_OK;
}
