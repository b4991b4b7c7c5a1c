/* The cpu's elementwise loops, generated from graph/elementwise.def once
 * per vector ISA, and the choice among them. Private to the cpu device:
 * kernels_elementwise.c walks the tensors and calls these row by row.
 *
 * A loop computes one row's expression over n elements:
 *     unary   y[i] = EXPR(x[i])
 *     binary  y[i] = EXPR(a[i * sa], b[i * sb]), sa and sb 0 or 1 (a row of
 *             the broadcasting iterator, devices/cpu/broadcast.h)
 * x, a, b and y are arrays of the dtype (float16 as its bits; a BOOL row's
 * y is bytes of 0 or 1). y may be exactly x (or a) for an in-place op: a
 * loop reads each vector before it writes it; other overlaps are not
 * allowed. Every element is computed by the same lane arithmetic wherever
 * it falls in a vector, so the bits never depend on how the caller cuts
 * the work. p gives the row's parameters (P0..P2); NULL means all zero
 * (rows without parameters).
 *
 * The ISA is chosen once, at the first call: the widest of avx512
 * (AVX-512 F/BW/VL/DQ with FMA and F16C), avx2 (with FMA and F16C) and
 * sse2 (the x86-64 baseline) that the running cpu and OS support
 * (cpuid and XGETBV). TGC_CPU_ISA=sse2|avx2|avx512 in the
 * environment caps it (a wider name than the cpu has is ignored), so the
 * suite can run the baseline loops on any machine.
 *
 * Example usage:
 *     const tgc_ew_loops *l = tgc_cpu_ew_loops();
 *     tgc_ew_unary_fn f = l->unary[TGC_EW_Tanh][TGC_FLOAT32];
 *     if (f != NULL) f(n, x, y, &(tgc_ew_params){0});
 */
#ifndef TGC_DEVICES_CPU_EW_H
#define TGC_DEVICES_CPU_EW_H

#include "devices/ew_args.h"
#include "graph/elementwise.h"

#include <stdbool.h>
#include <stdint.h>

typedef void (*tgc_ew_unary_fn)(int64_t n, const void *x, void *y, const tgc_ew_params *p);
typedef void (*tgc_ew_binary_fn)(int64_t n, const void *a, int64_t sa, const void *b, int64_t sb, void *y,
                                 const tgc_ew_params *p);

/* The functions of the expression language (graph/elementwise.def) over
 * float32, by name: the JIT (devices/cpu/jit/) parses them in the rows'
 * expressions and calls the same code for each (devices/cpu/ew_funcs_f32.h,
 * compiled to bitcode), so that it computes what the row loops compute. */
#define TGC_EW_FUNCS(X)                                                                                      \
    X(EXP) X(EXPM1) X(LOG) X(LOG1P) X(TANH) X(SIGMOID) X(ERF) X(SOFTPLUS) X(SIN) X(COS) X(TAN) X(ASIN) X(ACOS) \
    X(ATAN) X(SINH) X(COSH) X(ASINH) X(ACOSH) X(ATANH) X(SQRT) X(FLOOR) X(CEIL) X(ROUND) X(POW) X(FMOD)

typedef enum tgc_ew_fn {
#define TGC_EW_FN_ENUM(name) TGC_EW_FN_##name,
    TGC_EW_FUNCS(TGC_EW_FN_ENUM)
#undef TGC_EW_FN_ENUM
    TGC_EW_FN_COUNT
} tgc_ew_fn;

/* Rows the matrix-vector dot forms (devices/cpu/gemv.c, and the float16
 * and bfloat16 ones here) read in one pass, for rows of row_bytes: short
 * rows (under 16 KiB) one at a time, so that the matrix is one stream
 * through memory, where four rows at once are four short streams that the
 * hardware prefetchers learn again at every row; long rows four at a time,
 * sharing x's loads. Each row's sums are the same either way. Zen 4, 1
 * thread, float32 matrices read from memory: [1024, 576] 10 -> 24-27
 * GB/s, [1000, 1280] 13-14 -> 23-25, [1024, 1024] 15-18 -> 24-27; rows of
 * 24 KiB and more ran faster four at once (36 KiB: 22-24 GB/s against
 * 14-17), 16 KiB level. From the L2 and L3 one row at a time gave up
 * 10-15% (78-81 GB/s against 87-92), but a classifier's weights come from
 * memory in a model's run: MobileNetV3-Small's [1024, 1000] took 274 us in
 * the model, 56 alone. */
#define TGC_GEMV_ROWS_A_PASS(row_bytes) ((row_bytes) < ((int64_t)16 << 10) ? 1 : 4)

/* One ISA's loops: NULL where the row's class lacks the dtype (and in the
 * other table: unary rows have no binary loop and the reverse). */
typedef struct tgc_ew_loops {
    const char *isa; /* "sse2", "avx2", "avx512" */
    int lanes;       /* float32 lanes of a vector */
    tgc_ew_unary_fn unary[TGC_EW_COUNT][TGC_DTYPE_COUNT];
    tgc_ew_binary_fn binary[TGC_EW_COUNT][TGC_DTYPE_COUNT];
    /* Cast's float16 <-> float32 conversions of n elements (F16C where the
     * ISA has it; rounding to nearest even); x and y must not overlap. */
    void (*half_to_float)(int64_t n, const uint16_t *x, float *y);
    void (*float_to_half)(int64_t n, const float *x, uint16_t *y);
    /* y[j] = sum over kk < k of x[kk] * B[kk, j] for j < n, B float16
     * (gemv_half) or bfloat16 (gemv_bf16) with rows ld apart, widened
     * exactly: the bits of devices/cpu/gemv.c's update form over the
     * widened B (one running sum a column, over kk in order). */
    void (*gemv_half)(int64_t n, int64_t k, const uint16_t *mat, int64_t ld, const float *x, float *y);
    void (*gemv_bf16)(int64_t n, int64_t k, const uint16_t *mat, int64_t ld, const float *x, float *y);
    /* The dot form: y[j] = B[j, :] . x (+ beta y[j]) for rows j < n of a
     * float16 or bfloat16 B [n, k] with rows ld apart: the bits of
     * tgc_cpu_gemv_dot with alpha 1 over the widened B, its rows read as
     * TGC_GEMV_ROWS_A_PASS says. */
    void (*gemv_dot_half)(int64_t n, int64_t k, const uint16_t *mat, int64_t ld, const float *x, float beta,
                          float *y);
    void (*gemv_dot_bf16)(int64_t n, int64_t k, const uint16_t *mat, int64_t ld, const float *x, float beta,
                          float *y);
    /* y[2 i] = a[i] and y[2 i + 1] = b[i] for i < n: two rows interleaved,
     * a transpose of [2, n] into [n, 2] (a channel shuffle of two groups
     * channels last); moves bits, any 4-byte type. y overlaps neither. */
    void (*interleave2)(int64_t n, const float *a, const float *b, float *y);
} tgc_ew_loops;

/* The loops of the chosen ISA (see above). Thread-safe; never NULL. */
const tgc_ew_loops *tgc_cpu_ew_loops(void);

/* Every ISA's loops this build has, for tests: sets *count. The ones the
 * running cpu lacks are not listed. */
const tgc_ew_loops *const *tgc_cpu_ew_all_loops(int *count);

/* Cast-13's conversion of n elements of dtype `from` at x into dtype `to`
 * at y (devices/cpu/kernels_elementwise.c has the rules), for callers with
 * host copies (the gpu's Cast to a dtype it has no kernel for). x and y
 * must not overlap. False for an invalid dtype or a negative n. */
bool tgc_cpu_cast_elements(tgc_dtype from, const void *x, tgc_dtype to, void *y, int64_t n);

/* n elements of dtype `from` at x widened into a new block of n floats
 * (Cast's rules; the caller frees it with tgc_free), or NULL when the
 * bytes do not fit or memory runs out. */
float *tgc_cpu_widened_copy(tgc_dtype from, const void *x, int64_t n);

/* Built once per ISA by devices/cpu/ew_isa_*.c. */
extern const tgc_ew_loops tgc_ew_loops_sse2, tgc_ew_loops_avx2, tgc_ew_loops_avx512;

#endif
