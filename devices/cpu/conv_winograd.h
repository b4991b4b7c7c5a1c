/* The tile transforms of Winograd's minimal filtering F(m x m, 3 x 3), one
 * variant per output tile size m (Lavin and Gray, "Fast Algorithms for
 * Convolutional Neural Networks", CVPR 2016): a filter g becomes
 * U = G g G^T, an input patch d of alpha x alpha (alpha = m + 2) becomes
 * V = B^T d B, and a product P = U .* V (summed over channels) becomes the
 * m x m outputs A^T P A. Element xi = alpha * row + column of a transformed
 * tile lives in its own matrix, xi * stride floats from the first. Private
 * to devices/cpu/ (conv_winograd.c drives them).
 *
 * The input and output transforms work on a whole row of tiles at once:
 * tile tx of a row reads input columns m tx .. m tx + alpha - 1 and writes
 * output columns m tx .. m tx + m - 1, so every loop runs along the row
 * and vectorizes. */
#ifndef TGC_DEVICES_CPU_CONV_WINOGRAD_H
#define TGC_DEVICES_CPU_CONV_WINOGRAD_H

#include <stdint.h>

#define TGC_WINOGRAD_MAX_ALPHA 4

typedef struct tgc_winograd_variant {
    int m;     /* outputs per tile side */
    int alpha; /* m + 2: input patch side; alpha * alpha GEMMs */
    /* U of one 3x3 filter f (row-major): u[xi * stride], xi < alpha^2. */
    void (*filter)(const float *f, float *u, int64_t stride);
    /* V of `tiles` tiles: rows[r] (r < alpha) are the input rows the tiles
     * read, m * tiles + 2 floats each (padding already as zeros); writes
     * v[xi * stride + tx]. scratch: 3 * alpha * (m * tiles + 2 + m) floats. */
    void (*input_row)(const float *const *rows, int64_t tiles, float *scratch, float *v, int64_t stride);
    /* Outputs of `tiles` tiles from p[xi * stride + tx]: out[i][m tx + j] for
     * output row i < m and column j < m (m * tiles floats per row).
     * scratch: (alpha + 1) * m * tiles floats. */
    void (*output_row)(const float *p, int64_t stride, int64_t tiles, float *scratch, float *const *out);
} tgc_winograd_variant;

extern const tgc_winograd_variant tgc_winograd_f23; /* F(2x2, 3x3): 16 GEMMs for 4 outputs */

#endif
