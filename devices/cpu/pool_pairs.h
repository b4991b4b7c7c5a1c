/* tgc_pool_isa.pairs_rows (pool_isa.h) at the vector width of the ISA the
 * including file is compiled for (devices/cpu/simd.h); included once per
 * ISA by devices/cpu/pool_isa_*.c.
 *
 * A block of L outputs reads 3 vectors of L input columns (the first is
 * the previous block's third) and reduces each over the window's rows,
 * splits the first two into even and odd columns by shuffles, and takes
 * the taps' maximum. Every maximum is one MAXPS (tgc_vmax_keep), which is
 * MaxPool's rule except where its first operand, the new value, is a NaN
 * (a NaN already in the running maximum carries on, as the rule has it).
 * Those operands are tested on the way, so a row that read a NaN is
 * reported and computed again by the rule. Pads and columns past the row
 * are -inf lanes. The rule written lane by lane takes four instructions
 * a maximum (a NaN test, a comparison, an or and a select): SqueezeNet
 * 1.1's first pool, [1, 64, 111, 111] with a 3x3 window at stride 2, took
 * 150-162 us that way and takes 102-104 this way, in the model at 1
 * thread (docs/cpu-speed.md). */
#include "devices/cpu/pool_isa.h"
#include "devices/cpu/simd.h"

#include <math.h>
#include <string.h>

#if TGC_VLANES == 16
#define PP_IOTA 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
#define PP_EVEN 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30
#define PP_ODD 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31
#define PP_NEXT 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16
#define PP_NEXT2 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17
#elif TGC_VLANES == 8
#define PP_IOTA 0, 1, 2, 3, 4, 5, 6, 7
#define PP_EVEN 0, 2, 4, 6, 8, 10, 12, 14
#define PP_ODD 1, 3, 5, 7, 9, 11, 13, 15
#define PP_NEXT 1, 2, 3, 4, 5, 6, 7, 8
#define PP_NEXT2 2, 3, 4, 5, 6, 7, 8, 9
#else
#define PP_IOTA 0, 1, 2, 3
#define PP_EVEN 0, 2, 4, 6
#define PP_ODD 1, 3, 5, 7
#define PP_NEXT 1, 2, 3, 4
#define PP_NEXT2 2, 3, 4, 5
#endif

#define PP_INLINE static inline __attribute__((always_inline))

/* v with -inf in the lanes whose column c0 + lane is outside [0, wd)
 * (|c0| and wd below 2^22: pool_max_rows.c's limits). */
PP_INLINE tgc_vf pp_inside(tgc_vf v, int64_t c0, int64_t wd) {
    tgc_vi col = (tgc_vi){PP_IOTA} + (int32_t)c0;
    return tgc_vsel((col >= 0) & (col < (int32_t)wd), v, tgc_vf_splat(-INFINITY));
}

/* NaN marks: lanes where a vector read holds a NaN (AVX-512: a mask
 * register; elsewhere a vector of -1 or 0 lanes). */
#if TGC_VBYTES == 64
typedef __mmask16 pp_nan;
#define PP_NAN_NONE 0
#define PP_NAN_OF(a, b) _mm512_cmp_ps_mask((__m512)(a), (__m512)(b), _CMP_UNORD_Q)
#define PP_NAN_ANY(m) ((m) != 0)
#elif TGC_VBYTES == 32
typedef tgc_vi pp_nan;
#define PP_NAN_NONE ((tgc_vi){0})
#define PP_NAN_OF(a, b) ((tgc_vi)_mm256_cmp_ps((__m256)(a), (__m256)(b), _CMP_UNORD_Q))
#define PP_NAN_ANY(m) tgc_vi_any(m)
#else
typedef tgc_vi pp_nan;
#define PP_NAN_NONE ((tgc_vi){0})
#define PP_NAN_OF(a, b) (((a) != (a)) | ((b) != (b)))
#define PP_NAN_ANY(m) tgc_vi_any(m)
#endif

/* The maximum over k rows (ld apart) of the lanes at p, the first row
 * first; the lanes where a later row holds a NaN are marked in *nan. */
PP_INLINE tgc_vf pp_rows(const float *p, int64_t ld, int64_t k, pp_nan *nan) {
    tgc_vf m = tgc_vf_load(p);
    int64_t r = 1;
    for (; r + 1 < k; r += 2) {
        tgc_vf u = tgc_vf_load(p + r * ld), v = tgc_vf_load(p + (r + 1) * ld);
        *nan |= PP_NAN_OF(u, v);
        m = tgc_vmax_keep(v, tgc_vmax_keep(u, m));
    }
    if (r < k) {
        tgc_vf v = tgc_vf_load(p + r * ld);
        *nan |= PP_NAN_OF(v, v);
        m = tgc_vmax_keep(v, m);
    }
    return m;
}

/* One output row's blocks into dst (pairs_rows' row, its window's first
 * input row at first): false when a NaN was read where it could decide an
 * output. */
PP_INLINE bool pp_blocks(const float *first, float *dst, int64_t wd, int64_t pl, int64_t kw, int64_t blocks,
                         int64_t k) {
    pp_nan nan = PP_NAN_NONE;
    tgc_vf a = pp_rows(first - pl, wd, k, &nan); /* a block's first vector: the last block's third */
    if (pl > 0 || TGC_VLANES > wd) a = pp_inside(a, -pl, wd);
    for (int64_t b = 0; b < blocks; b++) {
        int64_t c0 = 2 * TGC_VLANES * b - pl;
        const float *p = first + c0;
        tgc_vf bv = pp_rows(p + TGC_VLANES, wd, k, &nan), cv = pp_rows(p + 2 * TGC_VLANES, wd, k, &nan);
        if (c0 + TGC_VLANES < 0 || c0 + 3 * TGC_VLANES > wd) {
            bv = pp_inside(bv, c0 + TGC_VLANES, wd);
            cv = pp_inside(cv, c0 + 2 * TGC_VLANES, wd);
        }
        tgc_vf even = __builtin_shufflevector(a, bv, PP_EVEN), odd = __builtin_shufflevector(a, bv, PP_ODD);
        tgc_vf m = tgc_vmax_keep(odd, even);
        if (kw == 3) {
            tgc_vf next = __builtin_shufflevector(even, cv, PP_NEXT);
            nan |= PP_NAN_OF(odd, next);
            m = tgc_vmax_keep(next, m);
        } else {
            nan |= PP_NAN_OF(odd, odd);
        }
        tgc_vf_store(dst + TGC_VLANES * b, m);
        a = cv;
    }
    return !PP_NAN_ANY(nan);
}

/* pairs_rows' rows one after another, up to the first that read a NaN. */
PP_INLINE int64_t pp_run(const float *first, int64_t step, float *dst, int64_t dst_step, int64_t rows, int64_t wd,
                         int64_t pl, int64_t kw, int64_t blocks, int64_t k) {
    for (int64_t i = 0; i < rows; i++)
        if (!pp_blocks(first + i * step, dst + i * dst_step, wd, pl, kw, blocks, k)) return i;
    return rows;
}

/* tgc_pool_isa.pairs_rows, with the window a constant in the common cases
 * (the row loop unrolled, its maxima kept in registers). */
static int64_t pp_rows_run(const float *first, int64_t step, float *dst, int64_t dst_step, int64_t rows, int64_t wd,
                           int64_t pl, int64_t kw, int64_t blocks, int64_t k) {
    if (k == 3 && kw == 3) return pp_run(first, step, dst, dst_step, rows, wd, pl, 3, blocks, 3);
    if (k == 2 && kw == 2) return pp_run(first, step, dst, dst_step, rows, wd, pl, 2, blocks, 2);
    return pp_run(first, step, dst, dst_step, rows, wd, pl, kw, blocks, k);
}
