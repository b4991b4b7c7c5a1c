/* A 1-D or 2-D Conv's geometry for the cpu kernel tests, and the direct
 * convolution in double they check a kernel's output against: the largest
 * error relative to the summed magnitudes of each output's terms (the
 * rounding of a float32 sum is relative to them). */
#ifndef TGC_TESTS_DEVICES_CONV_CASE_H
#define TGC_TESTS_DEVICES_CONV_CASE_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

/* A Conv: 2-D unless one_d; pads top, left, bottom, right (1-D: left,
 * right in [1], [3]); x [batch, c, h, w], W [m, c / group, kh, kw]. */
typedef struct conv_case {
    int64_t batch, c, m, h, w, kh, kw, sh, sw, dh, dw;
    int64_t pads[4];
    bool one_d, bias;
    int64_t group; /* 0: depthwise (C) */
} conv_case;

static inline int64_t conv_out_dim(int64_t in, int64_t k, int64_t s, int64_t d, int64_t p0, int64_t p1) {
    return (in + p0 + p1 - (k - 1) * d - 1) / s + 1;
}

static inline int64_t conv_oh(const conv_case *k) {
    return k->one_d ? 1 : conv_out_dim(k->h, k->kh, k->sh, k->dh, k->pads[0], k->pads[2]);
}
static inline int64_t conv_ow(const conv_case *k) {
    return conv_out_dim(k->w, k->kw, k->sw, k->dw, k->pads[1], k->pads[3]);
}
static inline int64_t conv_group(const conv_case *k) { return k->group > 0 ? k->group : k->c; }

/* The largest |y - direct| over the sum of |terms| at each output, the
 * direct convolution in double (taps in the padding skipped). */
static inline double conv_error(const conv_case *k, const float *x, const float *w, const float *b, const float *y) {
    int64_t oh = conv_oh(k), ow = conv_ow(k), h = k->one_d ? 1 : k->h, kh = k->one_d ? 1 : k->kh;
    int64_t groups = conv_group(k), cg = k->c / groups, mg = k->m / groups;
    double worst = 0.0;
    for (int64_t n = 0; n < k->batch; n++)
        for (int64_t m = 0; m < k->m; m++)
            for (int64_t i = 0; i < oh; i++)
                for (int64_t j = 0; j < ow; j++) {
                    double sum = k->bias ? b[m] : 0.0, mag = fabs(sum);
                    for (int64_t ci = 0; ci < cg; ci++) {
                        int64_t c = m / mg * cg + ci;
                        for (int64_t a = 0; a < kh; a++)
                            for (int64_t e = 0; e < k->kw; e++) {
                                int64_t r = k->one_d ? 0 : i * k->sh - k->pads[0] + a * k->dh;
                                int64_t q = j * k->sw - k->pads[1] + e * k->dw;
                                if (r < 0 || r >= h || q < 0 || q >= k->w) continue;
                                double p = (double)x[((n * k->c + c) * h + r) * k->w + q] *
                                           w[((m * cg + ci) * kh + a) * k->kw + e];
                                sum += p;
                                mag += fabs(p);
                            }
                    }
                    double got = y[((n * k->m + m) * oh + i) * ow + j];
                    double rel = fabs(got - sum) / (mag + 1e-30);
                    if (!(rel <= worst)) worst = rel; /* NaN shows as NaN */
                }
    return worst;
}

#endif
