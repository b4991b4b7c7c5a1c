/* See fft.h. The inverse transform is the forward one between two complex
 * conjugations: conj(FFT(conj(x))). */
#include "devices/cpu/fft.h"

#include "support/alloc.h"

#include <math.h>
#include <string.h>

typedef enum fft_kind { RADIX2, DIRECT, BLUESTEIN } fft_kind;

struct tgc_fft {
    int64_t n;
    fft_kind kind;
    double *twiddle;  /* RADIX2: cos, sin of 2 pi k / n for k < n / 2; DIRECT: for k < n */
    int64_t m;        /* BLUESTEIN: the radix-2 length */
    tgc_fft *inner;   /* BLUESTEIN: the plan of length m */
    double *chirp;    /* BLUESTEIN: exp(-i pi k^2 / n), k < n */
    double *filter;   /* BLUESTEIN: the FFT of the conjugate chirp, wrapped, length m */
    double *work;     /* BLUESTEIN: length m; DIRECT: length n */
};

static bool is_pow2(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

/* exp(-2 pi i num / den) into (re, im), num reduced mod den by the caller. */
static void unit(int64_t num, int64_t den, double *re, double *im) {
    const double two_pi = 6.283185307179586476925286766559;
    double a = two_pi * (double)num / (double)den;
    *re = cos(a);
    *im = -sin(a);
}

static double *alloc_doubles(int64_t count) {
    return count > 0 && (uint64_t)count < SIZE_MAX / 16 ? tgc_malloc((size_t)count * sizeof(double)) : NULL;
}

tgc_fft *tgc_fft_create(int64_t n) {
    if (n < 1 || n > ((int64_t)1 << 40)) return NULL;
    tgc_fft *p = tgc_calloc(1, sizeof *p);
    if (p == NULL) return NULL;
    p->n = n;
    if (is_pow2(n)) {
        p->kind = RADIX2;
        p->twiddle = alloc_doubles(n > 1 ? n : 2);
        if (p->twiddle == NULL) goto fail;
        for (int64_t k = 0; k < n / 2; k++) unit(k, n, &p->twiddle[2 * k], &p->twiddle[2 * k + 1]);
    } else if (n <= TGC_FFT_DIRECT_MAX) {
        p->kind = DIRECT;
        p->twiddle = alloc_doubles(2 * n);
        p->work = alloc_doubles(2 * n);
        if (p->twiddle == NULL || p->work == NULL) goto fail;
        for (int64_t k = 0; k < n; k++) unit(k, n, &p->twiddle[2 * k], &p->twiddle[2 * k + 1]);
    } else {
        p->kind = BLUESTEIN;
        int64_t m = 1;
        while (m < 2 * n - 1) m *= 2;
        p->m = m;
        p->inner = tgc_fft_create(m);
        p->chirp = alloc_doubles(2 * n);
        p->filter = alloc_doubles(2 * m);
        p->work = alloc_doubles(2 * m);
        if (p->inner == NULL || p->chirp == NULL || p->filter == NULL || p->work == NULL) goto fail;
        /* exp(-i pi k^2 / n) = exp(-2 pi i (k^2 mod 2n) / 2n), k^2 mod 2n
         * carried along as (k + 1)^2 = k^2 + 2k + 1. */
        for (int64_t k = 0, k2 = 0; k < n; k2 = (k2 + 2 * k + 1) % (2 * n), k++)
            unit(k2, 2 * n, &p->chirp[2 * k], &p->chirp[2 * k + 1]);
        memset(p->filter, 0, (size_t)(2 * m) * sizeof(double));
        for (int64_t k = 0; k < n; k++) { /* conj(chirp) at k and -k (mod m) */
            p->filter[2 * k] = p->chirp[2 * k];
            p->filter[2 * k + 1] = -p->chirp[2 * k + 1];
            if (k > 0) {
                p->filter[2 * (m - k)] = p->chirp[2 * k];
                p->filter[2 * (m - k) + 1] = -p->chirp[2 * k + 1];
            }
        }
        tgc_fft_run(p->inner, p->filter, false);
    }
    return p;
fail:
    tgc_fft_release(p);
    return NULL;
}

void tgc_fft_release(tgc_fft *p) {
    if (p == NULL) return;
    tgc_fft_release(p->inner);
    tgc_free(p->twiddle);
    tgc_free(p->chirp);
    tgc_free(p->filter);
    tgc_free(p->work);
    tgc_free(p);
}

/* The forward radix-2 transform in place (n a power of two). */
static void radix2(const tgc_fft *p, double *x) {
    int64_t n = p->n;
    for (int64_t i = 1, j = 0; i < n; i++) { /* bit-reversal permutation */
        int64_t bit = n >> 1;
        for (; j & bit; bit >>= 1) j ^= bit;
        j ^= bit;
        if (i < j) {
            double tr = x[2 * i], ti = x[2 * i + 1];
            x[2 * i] = x[2 * j], x[2 * i + 1] = x[2 * j + 1];
            x[2 * j] = tr, x[2 * j + 1] = ti;
        }
    }
    for (int64_t len = 2; len <= n; len *= 2) {
        int64_t half = len / 2, step = n / len;
        for (int64_t s = 0; s < n; s += len)
            for (int64_t k = 0; k < half; k++) {
                double wr = p->twiddle[2 * k * step], wi = p->twiddle[2 * k * step + 1];
                double *a = x + 2 * (s + k), *b = x + 2 * (s + k + half);
                double br = b[0] * wr - b[1] * wi, bi = b[0] * wi + b[1] * wr;
                b[0] = a[0] - br, b[1] = a[1] - bi;
                a[0] += br, a[1] += bi;
            }
    }
}

static void direct(tgc_fft *p, double *x) {
    int64_t n = p->n;
    for (int64_t k = 0; k < n; k++) {
        double sr = 0, si = 0;
        for (int64_t j = 0; j < n; j++) {
            int64_t t = j * k % n;
            double wr = p->twiddle[2 * t], wi = p->twiddle[2 * t + 1];
            sr += x[2 * j] * wr - x[2 * j + 1] * wi;
            si += x[2 * j] * wi + x[2 * j + 1] * wr;
        }
        p->work[2 * k] = sr, p->work[2 * k + 1] = si;
    }
    memcpy(x, p->work, (size_t)(2 * n) * sizeof(double));
}

/* X[k] = chirp[k] * sum_j (x[j] chirp[j]) conj(chirp[k - j]): the
 * convolution by FFT of length m, its inverse through conjugation. */
static void bluestein(tgc_fft *p, double *x) {
    int64_t n = p->n, m = p->m;
    double *a = p->work;
    memset(a, 0, (size_t)(2 * m) * sizeof(double));
    for (int64_t k = 0; k < n; k++) {
        double cr = p->chirp[2 * k], ci = p->chirp[2 * k + 1];
        a[2 * k] = x[2 * k] * cr - x[2 * k + 1] * ci;
        a[2 * k + 1] = x[2 * k] * ci + x[2 * k + 1] * cr;
    }
    radix2(p->inner, a);
    for (int64_t k = 0; k < m; k++) { /* times the filter, conjugated for the inverse */
        double fr = p->filter[2 * k], fi = p->filter[2 * k + 1];
        double re = a[2 * k] * fr - a[2 * k + 1] * fi, im = a[2 * k] * fi + a[2 * k + 1] * fr;
        a[2 * k] = re, a[2 * k + 1] = -im;
    }
    radix2(p->inner, a);
    for (int64_t k = 0; k < n; k++) { /* conj again, / m, times the chirp */
        double re = a[2 * k] / (double)m, im = -a[2 * k + 1] / (double)m;
        double cr = p->chirp[2 * k], ci = p->chirp[2 * k + 1];
        x[2 * k] = re * cr - im * ci;
        x[2 * k + 1] = re * ci + im * cr;
    }
}

void tgc_fft_run(tgc_fft *p, double *data, bool inverse) {
    int64_t n = p->n;
    if (inverse)
        for (int64_t k = 0; k < n; k++) data[2 * k + 1] = -data[2 * k + 1];
    if (p->kind == RADIX2) radix2(p, data);
    else if (p->kind == DIRECT) direct(p, data);
    else bluestein(p, data);
    if (inverse)
        for (int64_t k = 0; k < n; k++) data[2 * k + 1] = -data[2 * k + 1];
}
