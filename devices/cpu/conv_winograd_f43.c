/* Winograd F(4x4, 3x3) tile transforms (conv_winograd.h), with the
 * matrices of Lavin and Gray (interpolation points 0, 1, -1, 2, -2, inf):
 *   B^T = [[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0],
 *          [0, -2, -1, 2, 1, 0], [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]]
 *   G   = [[1/4, 0, 0], [-1/6, -1/6, -1/6], [-1/6, 1/6, -1/6],
 *          [1/24, 1/12, 1/6], [1/24, -1/12, 1/6], [0, 0, 1]]
 *   A^T = [[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0],
 *          [0, 1, -1, 8, -8, 1]]
 * 36 multiplies give 16 outputs (144 directly), at the price of larger
 * constants: rounding errors grow to about 1e-6 of the magnitude of the
 * products summed (measured in tests/devices/test_cpu_fast_paths.c).
 * Both passes of each transform apply the same 1-D combination (bt6, at6)
 * to six streams at once, which gcc vectorizes. */
#include "devices/cpu/conv_winograd.h"

/* G applied to one column (g0, g1, g2) of a filter. */
static void g3(float g0, float g1, float g2, float *t) {
    t[0] = 0.25f * g0;
    t[1] = -(g0 + g1 + g2) / 6.0f;
    t[2] = -(g0 - g1 + g2) / 6.0f;
    t[3] = g0 / 24.0f + g1 / 12.0f + g2 / 6.0f;
    t[4] = g0 / 24.0f - g1 / 12.0f + g2 / 6.0f;
    t[5] = g2;
}

static void filter(const float *f, float *u, int64_t stride) {
    float t[3][6]; /* column j of G g */
    for (int j = 0; j < 3; j++) g3(f[j], f[3 + j], f[6 + j], t[j]);
    for (int i = 0; i < 6; i++) { /* (G g) G^T, row i */
        float r[6];
        g3(t[0][i], t[1][i], t[2][i], r);
        for (int j = 0; j < 6; j++) u[(i * 6 + j) * stride] = r[j];
    }
}

/* r_i[k] = (B^T (d0..d5)[k])[i] for k < n: six streams in, six out.
 * Pointers come as parameters: gcc honours restrict only there, and
 * vectorizes these loops only with it. */
__attribute__((noinline)) static void bt6_streams(const float *restrict d0, const float *restrict d1,
                                                  const float *restrict d2, const float *restrict d3,
                                                  const float *restrict d4, const float *restrict d5,
                                                  float *restrict r0, float *restrict r1, float *restrict r2,
                                                  float *restrict r3, float *restrict r4, float *restrict r5,
                                                  int64_t n) {
    for (int64_t k = 0; k < n; k++) {
        float a = d4[k] - d2[k], b = d3[k] - d1[k];
        r0[k] = 4.0f * d0[k] - 5.0f * d2[k] + d4[k];
        r1[k] = (d4[k] + d3[k]) - 4.0f * (d1[k] + d2[k]);
        r2[k] = (d4[k] - d3[k]) + 4.0f * (d1[k] - d2[k]);
        r3[k] = a + 2.0f * b;
        r4[k] = a - 2.0f * b;
        r5[k] = 4.0f * d1[k] - 5.0f * d3[k] + d5[k];
    }
}

static void bt6(const float *const *in, float *const *out, int64_t n) {
    bt6_streams(in[0], in[1], in[2], in[3], in[4], in[5], out[0], out[1], out[2], out[3], out[4], out[5], n);
}

/* y_i[k] = (A^T (p0..p5)[k])[i] for k < n: six streams in, four out. */
__attribute__((noinline)) static void at6_streams(const float *restrict p0, const float *restrict p1,
                                                  const float *restrict p2, const float *restrict p3,
                                                  const float *restrict p4, const float *restrict p5,
                                                  float *restrict y0, float *restrict y1, float *restrict y2,
                                                  float *restrict y3, int64_t n) {
    for (int64_t k = 0; k < n; k++) {
        float s12 = p1[k] + p2[k], d12 = p1[k] - p2[k], s34 = p3[k] + p4[k], d34 = p3[k] - p4[k];
        y0[k] = p0[k] + s12 + s34;
        y1[k] = d12 + 2.0f * d34;
        y2[k] = s12 + 4.0f * s34;
        y3[k] = d12 + 8.0f * d34 + p5[k];
    }
}

static void at6(const float *const *in, float *const *out, int64_t n) {
    at6_streams(in[0], in[1], in[2], in[3], in[4], in[5], out[0], out[1], out[2], out[3], n);
}

/* ph[q][k] = a[4k + q] for k < quarter: a row's columns by residue mod 4. */
__attribute__((noinline)) static void split4(const float *restrict a, float *restrict p0, float *restrict p1,
                                             float *restrict p2, float *restrict p3, int64_t quarter) {
    for (int64_t k = 0; k < quarter; k++) {
        p0[k] = a[4 * k];
        p1[k] = a[4 * k + 1];
        p2[k] = a[4 * k + 2];
        p3[k] = a[4 * k + 3];
    }
}

/* out[4k + q] = ph[q][k]. */
__attribute__((noinline)) static void interleave4(const float *restrict p0, const float *restrict p1,
                                                  const float *restrict p2, const float *restrict p3,
                                                  float *restrict out, int64_t quarter) {
    for (int64_t k = 0; k < quarter; k++) {
        out[4 * k] = p0[k];
        out[4 * k + 1] = p1[k];
        out[4 * k + 2] = p2[k];
        out[4 * k + 3] = p3[k];
    }
}

static void input_row(const float *const *d, int64_t tiles, float *scratch, float *v, int64_t stride) {
    int64_t quarter = tiles + 1, len = 4 * quarter; /* rows hold 4 tiles + 2 columns; 2 more as zeros */
    float *rows[6], *ph[6][4];
    for (int r = 0; r < 6; r++) {
        rows[r] = scratch + r * len;
        for (int q = 0; q < 4; q++) ph[r][q] = scratch + 6 * len + (r * 4 + q) * quarter;
    }
    bt6(d, rows, len - 2); /* B^T d along the rows */
    for (int r = 0; r < 6; r++) {
        rows[r][len - 2] = rows[r][len - 1] = 0.0f;
        split4(rows[r], ph[r][0], ph[r][1], ph[r][2], ph[r][3], quarter);
        /* (B^T d) B: tile tx reads columns 4 tx .. 4 tx + 5 */
        const float *cols[6] = {ph[r][0], ph[r][1], ph[r][2], ph[r][3], ph[r][0] + 1, ph[r][1] + 1};
        float *vr[6];
        for (int j = 0; j < 6; j++) vr[j] = v + (r * 6 + j) * stride;
        bt6(cols, vr, tiles);
    }
}

static void output_row(const float *p, int64_t stride, int64_t tiles, float *scratch, float *const *out) {
    float *t[6][4]; /* t[j][i]: row i of A^T P, column j */
    for (int j = 0; j < 6; j++) {
        for (int i = 0; i < 4; i++) t[j][i] = scratch + (j * 4 + i) * tiles;
        const float *col[6];
        for (int i = 0; i < 6; i++) col[i] = p + (i * 6 + j) * stride;
        at6(col, t[j], tiles);
    }
    float *ph[4];
    for (int q = 0; q < 4; q++) ph[q] = scratch + (24 + q) * tiles;
    for (int i = 0; i < 4; i++) { /* (A^T P) A, output row i */
        const float *row[6] = {t[0][i], t[1][i], t[2][i], t[3][i], t[4][i], t[5][i]};
        at6(row, ph, tiles);
        interleave4(ph[0], ph[1], ph[2], ph[3], out[i], tiles);
    }
}

const tgc_winograd_variant tgc_winograd_f43 = {
    .m = 4, .alpha = 6, .filter = filter, .input_row = input_row, .output_row = output_row};
