/* Private to the cpu elementwise and reduction kernels (kernels_elementwise.c,
 * kernels_reduce.c): the numpy broadcasting iterator they share, and the
 * checks each of them makes before touching memory.
 *
 * Broadcasting is numpy's (ONNX "multidirectional broadcasting", see
 * onnx/docs/Broadcasting.md): shapes are aligned on the right, and each
 * operand's dim is either the output's or 1. The iterator gives every
 * operand element strides over the output's index space, 0 on the axes it
 * is broadcast along, and collapses adjacent axes where every operand is
 * contiguous (or broadcast) across both, so equal shapes become one row of
 * numel elements and a scalar operand one row with step 0. What is left is
 * walked a row (the innermost collapsed axis) at a time; within a row each
 * operand moves by step 0 or 1.
 *
 * Example usage (y = a + b, float32):
 *     tgc_cpu_bcast it;
 *     const tgc_value *ops[2] = {a, b};
 *     if (tgc_cpu_bcast_values(c, &it, y, 2, ops) != TGC_OK) return TGC_ERR_RUNTIME;
 *     for (int64_t r = 0; r < it.rows; r++, tgc_cpu_bcast_next(&it)) {
 *         const float *ra = pa + it.off[0], *rb = pb + it.off[1];
 *         float *ry = py + r * it.inner;
 *         for (int64_t i = 0; i < it.inner; i++) ry[i] = ra[i * it.step[0]] + rb[i * it.step[1]];
 *     }
 */
#ifndef TGC_DEVICES_CPU_BROADCAST_H
#define TGC_DEVICES_CPU_BROADCAST_H

#include "devices/kernel.h"
#include "devices/kernel_checks.h"

#include <stdbool.h>
#include <stdint.h>

/* The most operands one iterator walks (Where has three). */
#define TGC_CPU_BCAST_MAX 3

typedef struct tgc_cpu_bcast {
    int n;                                           /* operands */
    int rank;                                        /* collapsed rank, >= 1 */
    int64_t dims[TGC_MAX_RANK];                      /* collapsed output dims */
    int64_t strides[TGC_CPU_BCAST_MAX][TGC_MAX_RANK]; /* in elements; 0 where broadcast */
    int64_t inner;                                   /* dims[rank - 1]: a row's length */
    int64_t step[TGC_CPU_BCAST_MAX];                 /* strides[k][rank - 1]: 0 or 1 */
    int64_t rows;                                    /* product of dims[0 .. rank - 1) */
    /* The walk: the current row's index and each operand's element offset. */
    int64_t idx[TGC_MAX_RANK];
    int64_t off[TGC_CPU_BCAST_MAX];
} tgc_cpu_bcast;

/* Sets up a walk over the output shape out_dims[0..out_rank) for `n`
 * (1..TGC_CPU_BCAST_MAX) contiguous operands of shapes dims[k][0..ranks[k]),
 * positioned at row 0. Returns the index of the first operand that does not
 * broadcast to the output (rank above the output's, or a dim neither the
 * output's nor 1), or -1 when all do. An output of numel 0 gives rows == 0
 * or inner == 0: callers return before walking. */
int tgc_cpu_bcast_init(tgc_cpu_bcast *it, int out_rank, const int64_t *out_dims, int n, const int *ranks,
                       const int64_t *const *dims);

/* As tgc_cpu_bcast_init over tensor values: out and ops[0..n). Fails through
 * tgc_kernel_fail naming the operand and both shapes. */
tgc_status tgc_cpu_bcast_values(tgc_kernel_ctx *c, tgc_cpu_bcast *it, const tgc_value *out, int n,
                                const tgc_value *const *ops);

/* Moves to the next row: advances idx and every operand's off. */
static inline void tgc_cpu_bcast_next(tgc_cpu_bcast *it) {
    for (int d = it->rank - 2; d >= 0; d--) {
        if (++it->idx[d] < it->dims[d]) {
            for (int k = 0; k < it->n; k++) it->off[k] += it->strides[k][d];
            return;
        }
        it->idx[d] = 0;
        for (int k = 0; k < it->n; k++) it->off[k] -= it->strides[k][d] * (it->dims[d] - 1);
    }
}

/* Moves to row `row` (0 <= row < rows) from anywhere: sets idx and every
 * operand's off as `row` calls of tgc_cpu_bcast_next from row 0 would. For
 * a walk started part-way (one piece of a split loop). */
void tgc_cpu_bcast_seek(tgc_cpu_bcast *it, int64_t row);

/* True when the byte ranges of two tensors' data overlap (a forwarded
 * buffer: output 0 written over input 0). */
bool tgc_cpu_ew_overlap(const tgc_value *a, const tgc_value *b);

#endif
