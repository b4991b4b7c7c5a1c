/* CPU kernels that read input 0 through strides (ONNX opset 17):
 * Transpose (permuted strides), Slice (stepped strides from an offset) and
 * Expand (stride 0 on broadcast axes), all one strided copy, defined here
 * and split over the device's pool when large (a copy is the same bits
 * however it is cut). */
#include "devices/cpu/ew.h"
#include "devices/cpu/kernels_shape.h"
#include "devices/strided_view.h"

#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* ---- The strided copy ---------------------------------------------------------- */

/* Tile edge of the blocked 2-D transpose. 16 rows of a tile stay in L1
 * even when the source's row pitch is a power of two (4096 floats), where
 * larger tiles lose rows to cache-set conflicts; measured on 4096^2 and
 * 4000^2 float32, 2048^2 int64 and NCHW -> NHWC. */
#define TILE 16

/* One element of `esize` bytes; with a constant esize after inlining this
 * is a single load and store. */
static inline void copy_elem(char *dst, const char *src, size_t esize) { memcpy(dst, src, esize); }

/* A 4 x 4 block of 4-byte elements: to[r][c] = from[c][r] (rows of `to`
 * to_ld and of `from` from_ld elements apart), in SSE2 registers. */
#if defined(__SSE2__)
static inline void transpose_4x4(float *to, int64_t to_ld, const float *from, int64_t from_ld) {
    __m128 r0 = _mm_loadu_ps(from), r1 = _mm_loadu_ps(from + from_ld), r2 = _mm_loadu_ps(from + 2 * from_ld),
           r3 = _mm_loadu_ps(from + 3 * from_ld);
    _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
    _mm_storeu_ps(to, r0);
    _mm_storeu_ps(to + to_ld, r1);
    _mm_storeu_ps(to + 2 * to_ld, r2);
    _mm_storeu_ps(to + 3 * to_ld, r3);
}
#endif

/* Rows [i0, i1) of dst (a x b, contiguous) get the transpose of the b x a
 * matrix at src whose rows are `ld` elements apart: dst[i][j] = src[j * ld
 * + i]; in tiles, 4-byte elements 4 x 4 at a time where SSE2 is there, or
 * two rows of 4-byte elements interleaved (b == 2: a channel shuffle of two
 * groups channels last) by the elementwise loops' ISA (a move of bits:
 * the same result either way). */
static inline void transpose_rows(char *dst, const char *src, size_t esize, int64_t i0, int64_t i1, int64_t b,
                                  int64_t ld) {
    int64_t es = (int64_t)esize;
    if (esize == 4 && b == 2) { /* two rows interleaved, in the widest vectors here */
        tgc_cpu_ew_loops()->interleave2(i1 - i0, (const float *)src + i0, (const float *)src + ld + i0,
                                        (float *)dst + 2 * i0);
        return;
    }
    for (int64_t t0 = i0; t0 < i1; t0 += TILE)
        for (int64_t j0 = 0; j0 < b; j0 += TILE) {
            int64_t t1 = t0 + TILE < i1 ? t0 + TILE : i1, j1 = j0 + TILE < b ? j0 + TILE : b;
            int64_t i = t0;
#if defined(__SSE2__)
            if (esize == 4 && j1 - j0 >= 4)
                for (; i + 4 <= t1; i += 4) {
                    int64_t j = j0;
                    for (; j + 4 <= j1; j += 4)
                        transpose_4x4((float *)(dst + (i * b + j) * es), b, (const float *)(src + (j * ld + i) * es),
                                      ld);
                    for (; j < j1; j++)
                        for (int64_t k = i; k < i + 4; k++)
                            copy_elem(dst + (k * b + j) * es, src + (j * ld + k) * es, esize);
                }
#endif
            for (; i < t1; i++)
                for (int64_t j = j0; j < j1; j++) copy_elem(dst + (i * b + j) * es, src + (j * ld + i) * es, esize);
        }
}

/* n elements into contiguous dst from src elements `stride` apart, starting
 * at element `off`. */
static inline void copy_row(char *dst, const char *src, size_t esize, int64_t off, int64_t n, int64_t stride) {
    int64_t es = (int64_t)esize;
    if (stride == 1) {
        memcpy(dst, src + off * es, (size_t)n * esize);
        return;
    }
    for (int64_t j = 0; j < n; j++) copy_elem(dst + j * es, src + (off + j * stride) * es, esize);
}

/* The dispatchers give the inline bodies above a constant element size. */
static void transpose_rows_any(char *dst, const char *src, size_t esize, int64_t i0, int64_t i1, int64_t b,
                               int64_t ld) {
    switch (esize) {
    case 1: transpose_rows(dst, src, 1, i0, i1, b, ld); break;
    case 2: transpose_rows(dst, src, 2, i0, i1, b, ld); break;
    case 4: transpose_rows(dst, src, 4, i0, i1, b, ld); break;
    case 8: transpose_rows(dst, src, 8, i0, i1, b, ld); break;
    default: transpose_rows(dst, src, esize, i0, i1, b, ld); break;
    }
}

static void copy_row_any(char *dst, const char *src, size_t esize, int64_t off, int64_t n, int64_t stride) {
    switch (esize) {
    case 1: copy_row(dst, src, 1, off, n, stride); break;
    case 2: copy_row(dst, src, 2, off, n, stride); break;
    case 4: copy_row(dst, src, 4, off, n, stride); break;
    case 8: copy_row(dst, src, 8, off, n, stride); break;
    default: copy_row(dst, src, esize, off, n, stride); break;
    }
}

/* A strided copy with its axes merged (see tgc_cpu_strided_copy): n >= 1
 * axes d and source strides s; the innermost one (a row) or two (a 2-D
 * transpose, when blocked) form a block of `block` bytes, an odometer runs
 * over the `outer` axes before them. Split into pieces of per_piece units:
 * blocks, or a transpose's bands of TILE output rows (`bands` a block: an
 * NCHW image into NHWC is one block; 1 where a block is less than a piece),
 * or, with a single row (outer == 0 and not blocked), elements of it. */
typedef struct strided_job {
    char *dst;
    const char *src;
    size_t esize, block;
    int n, outer;
    bool blocked;
    int64_t d[TGC_MAX_RANK], s[TGC_MAX_RANK];
    int64_t offset, units, per_piece, bands;
} strided_job;

/* Transpose bands [u0, u1): band u is rows [u % bands * TILE, + TILE) of
 * block u / bands, or the whole block when it is one band. */
static void transpose_bands(const strided_job *j, int64_t u0, int64_t u1) {
    int64_t n = j->n;
    const int64_t *d = j->d, *s = j->s;
    for (int64_t u = u0; u < u1; u++) {
        int64_t rows = j->bands > 1 ? TILE : d[n - 2];
        int64_t blk = u / j->bands, i0 = u % j->bands * rows, i1 = i0 + rows < d[n - 2] ? i0 + rows : d[n - 2];
        int64_t off = j->offset, rest = blk;
        for (int k = j->outer - 1; k >= 0; k--) {
            off += rest % d[k] * s[k];
            rest /= d[k];
        }
        transpose_rows_any(j->dst + (size_t)blk * j->block, j->src + off * (int64_t)j->esize, j->esize, i0, i1,
                           d[n - 1], s[n - 1]);
    }
}

/* Units [b0, b1): rows, transpose bands, or elements of the single row. */
static void copy_units(const strided_job *j, int64_t b0, int64_t b1) {
    int64_t es = (int64_t)j->esize, n = j->n;
    const int64_t *d = j->d, *s = j->s;
    if (j->blocked) {
        transpose_bands(j, b0, b1);
        return;
    }
    if (j->outer == 0) {
        copy_row_any(j->dst + b0 * es, j->src, j->esize, j->offset + b0 * s[n - 1], b1 - b0, s[n - 1]);
        return;
    }
    int64_t idx[TGC_MAX_RANK] = {0}, off = j->offset, rest = b0;
    for (int k = j->outer - 1; k >= 0; k--) {
        idx[k] = rest % d[k];
        rest /= d[k];
        off += idx[k] * s[k];
    }
    char *to = j->dst + (size_t)b0 * j->block;
    for (int64_t b = b0; b < b1; b++) {
        copy_row_any(to, j->src, j->esize, off, d[n - 1], s[n - 1]);
        to += j->block;
        for (int k = j->outer - 1; k >= 0; k--) {
            off += s[k];
            if (++idx[k] < d[k]) break;
            off -= s[k] * d[k];
            idx[k] = 0;
        }
    }
}

static void copy_piece(void *arg, int64_t piece, int slot) {
    (void)slot;
    const strided_job *j = arg;
    int64_t b0 = piece * j->per_piece, b1 = b0 + j->per_piece < j->units ? b0 + j->per_piece : j->units;
    copy_units(j, b0, b1);
}

/* Pieces of about TGC_CPU_COPY_PIECE_BYTES (see kernels_shape.h). */
void tgc_cpu_strided_copy_on(tgc_thread_pool *pool, void *dst, const void *src, size_t esize, int rank,
                             const int64_t *dims, const int64_t *strides, int64_t offset) {
    /* Drop axes of size 1 and merge an axis into the one before it when
     * the two are contiguous in the source (outer stride = inner stride *
     * inner size); this also holds for stride 0 and for negative strides. */
    strided_job j = {.dst = dst, .src = src, .esize = esize, .offset = offset};
    int n = 0;
    for (int i = 0; i < rank; i++) {
        if (dims[i] == 0) return;
        if (dims[i] == 1) continue;
        if (n > 0 && j.s[n - 1] == strides[i] * dims[i]) {
            j.d[n - 1] *= dims[i];
            j.s[n - 1] = strides[i];
        } else {
            j.d[n] = dims[i];
            j.s[n] = strides[i];
            n++;
        }
    }
    if (n == 0) {
        memcpy(dst, (const char *)src + offset * (int64_t)esize, esize);
        return;
    }
    /* Blocks over the innermost one or two merged axes, an odometer over
     * the rest. When the output's second-to-last axis is the source's
     * contiguous one and the last is not, each block is a 2-D transpose
     * (batched over the outer axes); otherwise each is one row. */
    j.n = n;
    j.blocked = n >= 2 && j.s[n - 2] == 1 && j.s[n - 1] > 1;
    j.outer = j.blocked ? n - 2 : n - 1;
    j.block = (size_t)j.d[n - 1] * esize * (size_t)(j.blocked ? j.d[n - 2] : 1);
    int64_t unit_bytes = (int64_t)j.block;
    j.units = 1;
    for (int k = 0; k < j.outer; k++) j.units *= j.d[k];
    if (j.outer == 0 && !j.blocked) { /* one row: pieces of elements */
        j.units = j.d[0];
        unit_bytes = (int64_t)esize;
    }
    const int64_t piece_bytes = TGC_CPU_COPY_PIECE_BYTES;
    if (j.blocked) { /* bands of TILE output rows where a block is a piece or more */
        j.bands = (int64_t)j.block >= piece_bytes ? (j.d[n - 2] + TILE - 1) / TILE : 1;
        j.units *= j.bands;
        if (j.bands > 1) unit_bytes = TILE * j.d[n - 1] * (int64_t)esize;
    }
    j.per_piece = unit_bytes >= piece_bytes ? 1 : (piece_bytes + unit_bytes - 1) / unit_bytes;
    tgc_parallel_for(pool, (j.units + j.per_piece - 1) / j.per_piece, copy_piece, &j);
}

void tgc_cpu_strided_copy(void *dst, const void *src, size_t esize, int rank, const int64_t *dims,
                          const int64_t *strides, int64_t offset) {
    tgc_cpu_strided_copy_on(NULL, dst, src, esize, rank, dims, strides, offset);
}

/* ---- Transpose ----------------------------------------------------------------- */

/* Transpose-13: out.dims[i] = in.dims[perm[i]]; perm (default: the axes
 * reversed) must be a permutation of 0..r-1. */
tgc_status tgc_cpu_transpose(tgc_kernel_ctx *c) {
    tgc_status st = tgc_cpu_shape_check_moves(c, 1);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0];
    int r = x->rank;
    int64_t dims[TGC_MAX_RANK], strides[TGC_MAX_RANK];
    if ((st = tgc_view_transpose(c, x, dims, strides)) != TGC_OK) return st;
    st = tgc_kernel_expect_dims(c, 0, r, dims);
    if (st == TGC_OK)
        tgc_cpu_strided_copy_on(c->pool, tgc_kernel_out_ptr(c, 0), tgc_kernel_in_ptr(c, 0),
                                tgc_dtype_size(x->dtype), r, dims, strides, 0);
    return st;
}

/* ---- Slice --------------------------------------------------------------------- */

/* Slice-13: inputs 1..4 (host memory, int32 or int64, one length k) are
 * starts, ends, and the optional axes (default 0..k-1, negative counting
 * from the back, no repeats) and steps (default 1, never 0). Axes not
 * listed are taken whole. */
tgc_status tgc_cpu_slice(tgc_kernel_ctx *c) {
    tgc_status st = tgc_cpu_shape_check_moves(c, 3);
    if (st != TGC_OK) return st;
    static const char *const names[] = {"data", "starts", "ends", "axes", "steps"};
    int64_t args[5][TGC_MAX_RANK];
    int counts[5] = {0};
    for (int i = 1; i < 5 && st == TGC_OK; i++) {
        if (!tgc_kernel_has_input(c, i)) continue;
        st = tgc_kernel_read_ints(c, i, names[i], args[i], TGC_MAX_RANK, &counts[i]);
        if (st == TGC_OK && i > 1 && counts[i] != counts[1])
            return tgc_kernel_fail(c, "Slice: input %d (%s) has %d elements but starts has %d; they must agree",
                                   i, names[i], counts[i], counts[1]);
    }
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0];
    int r = x->rank;
    int64_t dims[TGC_MAX_RANK], strides[TGC_MAX_RANK], offset;
    st = tgc_view_slice(c, x, counts[1], args[1], args[2], tgc_kernel_has_input(c, 3) ? args[3] : NULL,
                        tgc_kernel_has_input(c, 4) ? args[4] : NULL, dims, strides, &offset);
    if (st != TGC_OK) return st;
    st = tgc_kernel_expect_dims(c, 0, r, dims);
    if (st == TGC_OK)
        tgc_cpu_strided_copy_on(c->pool, tgc_kernel_out_ptr(c, 0), tgc_kernel_in_ptr(c, 0),
                                tgc_dtype_size(x->dtype), r, dims, strides, offset);
    return st;
}

/* ---- Expand -------------------------------------------------------------------- */

/* Expand-13: the output shape is the numpy broadcast of the input's shape
 * and input 1 (int64, host memory; it may be shorter than the input's
 * rank, and a 1 there keeps the input's dim). */
tgc_status tgc_cpu_expand(tgc_kernel_ctx *c) {
    tgc_status st = tgc_cpu_shape_check_moves(c, 2);
    int64_t target[TGC_MAX_RANK];
    int n;
    if (st == TGC_OK) st = tgc_kernel_read_ints(c, 1, "shape", target, TGC_MAX_RANK, &n);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0];
    int ro;
    int64_t dims[TGC_MAX_RANK], strides[TGC_MAX_RANK];
    if ((st = tgc_view_expand(c, x, target, n, &ro, dims, strides)) != TGC_OK) return st;
    st = tgc_kernel_expect_dims(c, 0, ro, dims);
    if (st == TGC_OK)
        tgc_cpu_strided_copy_on(c->pool, tgc_kernel_out_ptr(c, 0), tgc_kernel_in_ptr(c, 0),
                                tgc_dtype_size(x->dtype), ro, dims, strides, 0);
    return st;
}
