/* Winograd F(2x2, 3x3) tile transforms (conv_winograd.h), with the
 * matrices of Lavin and Gray:
 *   B^T = [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]]
 *   G   = [[1, 0, 0], [1/2, 1/2, 1/2], [1/2, -1/2, 1/2], [0, 0, 1]]
 *   A^T = [[1, 1, 1, 0], [0, 1, -1, -1]]
 * Every term is added or subtracted (halves for G), so rounding stays that
 * of a few additions. The row loops live in small out-of-line functions:
 * gcc vectorizes them alone but not inside the tile loops. */
#include "devices/cpu/conv_winograd.h"
#include "devices/cpu/ew.h"

static void filter(const float *f, float *u, int64_t stride) {
    float t[4][3]; /* G g */
    for (int j = 0; j < 3; j++) {
        t[0][j] = f[j];
        t[1][j] = 0.5f * (f[j] + f[3 + j] + f[6 + j]);
        t[2][j] = 0.5f * (f[j] - f[3 + j] + f[6 + j]);
        t[3][j] = f[6 + j];
    }
    for (int i = 0; i < 4; i++) { /* (G g) G^T */
        u[(i * 4 + 0) * stride] = t[i][0];
        u[(i * 4 + 1) * stride] = 0.5f * (t[i][0] + t[i][1] + t[i][2]);
        u[(i * 4 + 2) * stride] = 0.5f * (t[i][0] - t[i][1] + t[i][2]);
        u[(i * 4 + 3) * stride] = t[i][2];
    }
}

/* One row of B^T d split into its even and odd columns:
 * e[k] = a[2k] - b[2k], o[k] = a[2k+1] - b[2k+1] (sub_split), or + (add_split). */
__attribute__((noinline)) static void sub_split(const float *restrict a, const float *restrict b, float *restrict e,
                                                float *restrict o, int64_t half) {
    for (int64_t k = 0; k < half; k++) {
        e[k] = a[2 * k] - b[2 * k];
        o[k] = a[2 * k + 1] - b[2 * k + 1];
    }
}

__attribute__((noinline)) static void add_split(const float *restrict a, const float *restrict b, float *restrict e,
                                                float *restrict o, int64_t half) {
    for (int64_t k = 0; k < half; k++) {
        e[k] = a[2 * k] + b[2 * k];
        o[k] = a[2 * k + 1] + b[2 * k + 1];
    }
}

/* (B^T d) B of one combined row: tile tx reads columns 2 tx .. 2 tx + 3 =
 * even tx, odd tx, even tx + 1, odd tx + 1. */
__attribute__((noinline)) static void tiles_b(const float *restrict ev, const float *restrict od, float *restrict v0,
                                              float *restrict v1, float *restrict v2, float *restrict v3,
                                              int64_t tiles) {
    for (int64_t tx = 0; tx < tiles; tx++) {
        v0[tx] = ev[tx] - ev[tx + 1];
        v1[tx] = od[tx] + ev[tx + 1];
        v2[tx] = ev[tx + 1] - od[tx];
        v3[tx] = od[tx] - od[tx + 1];
    }
}

static void input_row(const float *const *d, int64_t tiles, float *scratch, float *v, int64_t stride) {
    int64_t half = tiles + 1; /* (2 tiles + 2) / 2 column pairs */
    float *even[4], *odd[4];
    for (int i = 0; i < 4; i++) {
        even[i] = scratch + 2 * i * half;
        odd[i] = even[i] + half;
    }
    sub_split(d[0], d[2], even[0], odd[0], half);
    add_split(d[1], d[2], even[1], odd[1], half);
    sub_split(d[2], d[1], even[2], odd[2], half);
    sub_split(d[1], d[3], even[3], odd[3], half);
    for (int i = 0; i < 4; i++) {
        float *v0 = v + i * 4 * stride;
        tiles_b(even[i], odd[i], v0, v0 + stride, v0 + 2 * stride, v0 + 3 * stride, tiles);
    }
}

/* A^T P A for a row of tiles: rows 0 and 1, even and odd columns. */
__attribute__((noinline)) static void tiles_at(const float *p, int64_t ps, float *restrict r0e, float *restrict r0o,
                                               float *restrict r1e, float *restrict r1o, int64_t tiles) {
    const float *restrict p0 = p, *restrict p1 = p + ps, *restrict p2 = p + 2 * ps, *restrict p3 = p + 3 * ps;
    const float *restrict p4 = p + 4 * ps, *restrict p5 = p + 5 * ps, *restrict p6 = p + 6 * ps;
    const float *restrict p7 = p + 7 * ps, *restrict p8 = p + 8 * ps, *restrict p9 = p + 9 * ps;
    const float *restrict p10 = p + 10 * ps, *restrict p11 = p + 11 * ps, *restrict p12 = p + 12 * ps;
    const float *restrict p13 = p + 13 * ps, *restrict p14 = p + 14 * ps, *restrict p15 = p + 15 * ps;
    for (int64_t tx = 0; tx < tiles; tx++) {
        /* A^T P: row 0 = P rows 0 + 1 + 2, row 1 = P rows 1 - 2 - 3 (P row i is xi 4i .. 4i+3) */
        float a0 = p0[tx] + p4[tx] + p8[tx], a1 = p1[tx] + p5[tx] + p9[tx];
        float a2 = p2[tx] + p6[tx] + p10[tx], a3 = p3[tx] + p7[tx] + p11[tx];
        float b0 = p4[tx] - p8[tx] - p12[tx], b1 = p5[tx] - p9[tx] - p13[tx];
        float b2 = p6[tx] - p10[tx] - p14[tx], b3 = p7[tx] - p11[tx] - p15[tx];
        r0e[tx] = a0 + a1 + a2; /* (A^T P) A */
        r0o[tx] = a1 - a2 - a3;
        r1e[tx] = b0 + b1 + b2;
        r1o[tx] = b1 - b2 - b3;
    }
}

static void output_row(const float *p, int64_t stride, int64_t tiles, float *scratch, float *const *out) {
    float *r0e = scratch, *r0o = r0e + tiles, *r1e = r0o + tiles, *r1o = r1e + tiles;
    tiles_at(p, stride, r0e, r0o, r1e, r1o, tiles);
    const tgc_ew_loops *loops = tgc_cpu_ew_loops(); /* out[2k] = e[k], out[2k + 1] = o[k] */
    loops->interleave2(tiles, r0e, r0o, out[0]);
    loops->interleave2(tiles, r1e, r1o, out[1]);
}

const tgc_winograd_variant tgc_winograd_f23 = {
    .m = 2, .alpha = 4, .filter = filter, .input_row = input_row, .output_row = output_row};
