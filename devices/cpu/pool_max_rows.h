/* 2-D MaxPool as a maximum over rows, then over columns: the separable
 * form of a window's maximum (max over the window = max over its columns
 * of the max over its rows), so a 3x3 window costs 2 + 2 comparisons an
 * output rather than 8, and every loop is contiguous. Private to the cpu
 * kernels (kernels_pool.c).
 *
 * For each output row, the kh input rows its windows read (those inside
 * the input) are reduced into one row buffer with -inf in the padding
 * around it; with a stride s > 1 the buffer is split into its s column
 * phases (column c to phase c % s at c / s), so each of the kw column taps
 * is one contiguous loop over the output row. Loops run over whole
 * 64-byte vectors into scratch (no scalar remainders on short rows: 13,
 * 27 and 55 columns), and the OW outputs are copied out. At column
 * stride 2 over 2 or 3 columns (the pools after CNN stems and between
 * stages) a row's blocks of 4, 8 or 16 outputs stay in registers instead
 * (pool_pairs.h, per vector ISA): their input columns reduced over the
 * rows, split into even and odd columns by shuffles, pads as -inf lanes.
 * At stride 1 with OW == W a whole plane goes at once: each tap one loop
 * over a run of rows or the whole plane, then the edge columns again; or,
 * where a padded row fits 4 vectors (28x28, 14x14 and 7x7 maps), row by
 * row in registers (pool_narrow.h). The register kernels take each maximum with
 * one MAXPS, which ignores a NaN in its new operand; a row or plane that
 * read a NaN is computed again by the rule, so the maxima are the same,
 * in the same order.
 *
 * The maximum is exact, so the result is the general path's (kernels_pool.c)
 * for every float but the sign of a zero maximum (a window holding both
 * +0 and -0 may give either) and a NaN's payload (a window holding a NaN
 * gives a NaN). No Indices: MaxPool with Indices takes the general path.
 *
 * Example usage (in a pooling kernel):
 *     tgc_status st = TGC_OK;
 *     if (tgc_cpu_max_pool_rows(c, &w, planes, x, y, &st)) return st;
 *     // else: not this path's geometry; another path runs
 */
#ifndef TGC_DEVICES_CPU_POOL_MAX_ROWS_H
#define TGC_DEVICES_CPU_POOL_MAX_ROWS_H

#include "devices/kernel.h"
#include "devices/window.h"

#include <stdbool.h>
#include <stdint.h>

/* MaxPool of x [planes, H, W] into y [planes, OH, OW] (float32, window w:
 * 2-D, dilation 1, strides up to 8, every window reading some input: the
 * caller checks), the planes split over c->pool in pieces sized by their
 * work. Returns false, having done nothing, when the geometry is not this
 * path's (rows past 2^20 floats); true when it ran, with *st TGC_OK or an
 * out-of-memory failure (through tgc_kernel_fail). */
bool tgc_cpu_max_pool_rows(tgc_kernel_ctx *c, const tgc_window *w, int64_t planes, const float *x, float *y,
                           tgc_status *st);

#endif
