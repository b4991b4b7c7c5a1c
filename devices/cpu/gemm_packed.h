/* GEMMs on packed weights: C = alpha * A op(B) + beta * C for a B that
 * stays the same from run to run (a session's weight), packed once into
 * the layout oneDNN's matmul (Debian's libdnnl 2.6; brgemm kernels for the
 * running cpu's widest ISA) computes with, as ONNX Runtime prepacks its
 * MLAS weights. OpenBLAS packs B again on every call and, where
 * OPENBLAS_CORETYPE pins it to Haswell, runs 256-bit kernels on AVX-512
 * cpus; on this machine (AVX-512 with full-width FMA) oneDNN ran the
 * transformer's and ResNet's GEMMs 2.0-2.4x faster on one core
 * (docs/cpu-speed.md). Private to the cpu device.
 *
 * The columns of C are cut into pieces from the sizes alone, each with its
 * own block of B packed and its own primitives; where the columns are too
 * few for the work, each piece runs in blocks of rows (from the sizes
 * too), which share its packed block. The pieces' blocks of rows are
 * spread over the device's pool (tgc_parallel_for); a piece whose block of C is
 * not dense writes a dense block in its thread's scratch, then copied
 * (oneDNN 2.6's brgemm takes only dense operands); each piece runs on one thread
 * (oneDNN's OpenMP runtime told so per calling thread), so any thread
 * count gives the same bits. Without libdnnl at build time (-DTGC_DNNL=OFF)
 * create returns NULL and callers keep OpenBLAS.
 *
 * Example usage (B constant across runs, kept in the node's kernel cache):
 *     tgc_packed_gemm *g = tgc_packed_gemm_create(&shape, b, &bytes);
 *     if (g != NULL) tgc_packed_gemm_run(g, pool, a, c, act);   // C = A op(B)
 *     tgc_packed_gemm_free(g);
 */
#ifndef TGC_DEVICES_CPU_GEMM_PACKED_H
#define TGC_DEVICES_CPU_GEMM_PACKED_H

#include "devices/kernel.h"
#include "support/thread_pool.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A GEMM's geometry, row-major float32: A [m, k] (ta: A^T [k, m]) with
 * row stride lda, B [k, n] (tb: B^T [n, k]) with row stride ldb, C [m, n]
 * with row stride ldc; alpha scales the product, beta the C already there
 * (0: C is only written). */
typedef struct tgc_gemm_shape {
    bool ta, tb;
    int64_t m, n, k, lda, ldb, ldc;
    float alpha, beta;
} tgc_gemm_shape;

typedef struct tgc_packed_gemm tgc_packed_gemm;

/* True when tgc was built with oneDNN (TGC_DNNL) and the process's newest
 * settings (support/settings.h) do not say TGC_DNNL=0. */
bool tgc_packed_gemm_available(void);

/* Packs b for shape s (every size >= 1): the pieces' primitives and packed
 * blocks. Returns NULL without oneDNN, for sizes past oneDNN's int64 dims,
 * when oneDNN has no fast kernel for the shape (only its reference
 * implementation), or when memory runs out; *bytes then 0. The caller owns
 * the result (tgc_packed_gemm_free); b is read during the call only. */
tgc_packed_gemm *tgc_packed_gemm_create(const tgc_gemm_shape *s, const float *b, size_t *bytes);

/* The *bytes tgc_packed_gemm_create reports for shape s, from the sizes
 * alone (for the static memory plan): its handle and, per piece, the size
 * of the weights layout oneDNN's primitive descriptor chooses (asked
 * without packing, remembered for the process: the planners ask often);
 * where oneDNN declines a piece, a bound, K x its columns both padded to
 * 64 floats (its blocked weight formats use blocks of at most 64). 0
 * without oneDNN. Thread safe. */
int64_t tgc_packed_gemm_bound(const tgc_gemm_shape *s);

/* True when g was made for exactly shape s (a run with other sizes cannot
 * use it). */
bool tgc_packed_gemm_matches(const tgc_packed_gemm *g, const tgc_gemm_shape *s);

/* C = alpha * A op(B) + beta * C with the B g packed, a and c as its shape
 * says; then the activation act (NULL: none) over each piece of C as it is
 * written. Pieces over pool (NULL: the caller's thread). False when oneDNN
 * reports an error (C is then undefined). */
bool tgc_packed_gemm_run(const tgc_packed_gemm *g, tgc_thread_pool *pool, const float *a, float *c,
                         const tgc_fused_act *act);

/* What tgc_packed_gemm_run_blocks hands over: rows [r0, r1) and columns
 * [n0, n1) of C as a dense [r1 - r0, n1 - n0] block (row stride n1 - n0)
 * in the computing thread's scratch, valid during the call only. */
typedef void (*tgc_packed_gemm_block_fn)(void *arg, int64_t r0, int64_t r1, int64_t n0, int64_t n1,
                                         const float *block);

/* C = alpha * A op(B) with the B g packed, a block of C at a time
 * into fn (on the thread that computed it: a caller can transpose or
 * scatter a block while it is in cache) instead of into C, which is never
 * written. False, having run nothing, unless g's shape has beta 0, ldc ==
 * n and fits what a thread stages (tgc_packed_gemm_blocks_fit); false when
 * oneDNN reports an error. */
bool tgc_packed_gemm_run_blocks(const tgc_packed_gemm *g, tgc_thread_pool *pool, const float *a,
                                tgc_packed_gemm_block_fn fn, void *arg);

/* Whether every piece of shape s stays within what a thread stages, so
 * that tgc_packed_gemm_run_blocks can hand each over (m x n floats up to
 * 16 MiB covers any cut into pieces). */
bool tgc_packed_gemm_blocks_fit(const tgc_gemm_shape *s);

/* The work items a run of g hands to the pool: its pieces of columns
 * times the blocks of rows each runs in (1 to 16, from the sizes alone). */
int tgc_packed_gemm_work_items(const tgc_packed_gemm *g);

void tgc_packed_gemm_free(tgc_packed_gemm *g);

/* The packed B of a node's input 1 (b: its data, B as shape s says) from
 * the node's kernel cache, packed by tgc_packed_gemm_create on the first
 * run and freed with the cache; NULL when oneDNN declined (asked once a
 * session), when there is no cache (a kernel run alone, or input 1 not a
 * session constant), or when s is not the shape it was packed for (a
 * symbolic dim): the caller then multiplies some other way, reading b.
 * NULL with *no_memory set when host memory for the packing ran out: the
 * caller should fail (another way would give other bits than the runs
 * before); a later run tries again. Once one is returned, input 1 is read
 * from the cache only (tgc_kernel_cache_replaces). */
const tgc_packed_gemm *tgc_packed_gemm_cached(tgc_kernel_ctx *c, const tgc_gemm_shape *s, const float *b,
                                             bool *no_memory);

/* Writes a B that is laid out from a node's input 1 (all of it, as the
 * shape says: B^T [n, ldb] when tb, else B [k, ldb]) into b, from arg. */
typedef void (*tgc_packed_b_fn)(void *arg, float *b);

/* tgc_packed_gemm_cached for a B that is not input 1 as it lies but a
 * layout of it: fill(arg, copy) writes B into a copy (tgc_malloc, freed
 * once packed) on the run that packs it; later runs never call fill. NULL
 * and *no_memory as tgc_packed_gemm_cached's (the copy's memory too). */
const tgc_packed_gemm *tgc_packed_gemm_cached_filled(tgc_kernel_ctx *c, const tgc_gemm_shape *s, tgc_packed_b_fn fill,
                                                     void *arg, bool *no_memory);

/* What tgc_packed_gemm_cached may hold for shape s: the packing's bound
 * (tgc_packed_gemm_bound) and its block. */
int64_t tgc_packed_gemm_cached_bound(const tgc_gemm_shape *s);

/* One GEMM on operands as they lie (nothing packed ahead): C = alpha *
 * op(A) op(B) + beta * C, op(A) [m, k] (A stored [k, m] when ta), op(B)
 * [k, n] (B^T stored when tb), row strides lda, ldb, ldc, on the calling
 * thread, through a oneDNN matmul primitive made for the geometry once per
 * process and kept (whether oneDNN runs a product depends on its geometry:
 * those oneDNN has no brgemm kernel for are declined). A B whose rows lie
 * a multiple of 4 KiB apart (they alias in the cache) is first copied into
 * the thread's scratch, up to 16 MiB; past that, or when the memory cannot
 * be had, the product is declined. Returns 1 when done; 0 having touched
 * nothing when it declines or oneDNN is absent (the caller then uses
 * OpenBLAS); -1 when oneDNN failed while running (C undefined). Every size
 * >= 1. */
int tgc_dnnl_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
                   const float *b, int64_t ldb, float beta, float *c, int64_t ldc);

/* The most terms tgc_dnnl_igemm sums: each product of two int8s is at most
 * 2^14 in magnitude, so the int32 sum of K of them cannot overflow. */
#define TGC_DNNL_IGEMM_MAX_K (INT64_C(1) << 16)

/* C = A B exactly in int32: A [m, k] and B [k, n] int8, C [m, n] int32,
 * row-major with row strides lda, ldb, ldc, on the calling thread, through
 * a oneDNN s8s8s32 matmul made for the geometry once per process (as
 * tgc_dnnl_sgemm). Only where oneDNN's int8 products are exact (a cpu with
 * VNNI: AVX512-VNNI or AVX-VNNI) and k <= TGC_DNNL_IGEMM_MAX_K. Returns 1
 * when done; 0 having touched nothing when it declines (the caller then
 * sums some other way); -1 when oneDNN failed while running. */
int tgc_dnnl_igemm(int64_t m, int64_t n, int64_t k, const int8_t *a, int64_t lda, const int8_t *b, int64_t ldb,
                   int32_t *c, int64_t ldc);

#endif
