/* The cpu signal kernels (devices/cpu/kernels_signal.c, fft.c) called
 * directly. The transforms are checked against the DFT's definition summed
 * directly in long double here (lengths that take each path: radix-2,
 * the direct sum, Bluestein) and against numpy.fft for irfft and a padded
 * onesided transform (the numpy expressions beside the constants); the
 * windows against their formulas at chosen points. */
#include "devices/cpu/fft.h"
#include "tests/devices/kernel_fixture_shape.h"

#include <math.h>
#include <stdint.h>

/* Output i's float32 elements against want[0..n), |d| <= atol + rtol |want|. */
static void expect_close(shape_fx *f, int i, const float *want, int64_t n, double rtol, double atol) {
    const float *got = tgc_buffer_host_ptr(f->out[i].buf);
    int bad = 0;
    for (int64_t k = 0; k < n; k++)
        if (!(fabs((double)got[k] - want[k]) <= atol + rtol * fabs((double)want[k]))) {
            if (bad++ < 3) fprintf(stderr, "\n  %s: element %lld is %.9g, want %.9g\n", f->op, (long long)k, got[k], want[k]);
        }
    CU_ASSERT_EQUAL(bad, 0);
}

/* tgc_fft_run against sum_j x[j] exp(-+2 pi i j k / n) for lengths of every path. */
static void test_fft_matches_the_definition(void) {
    static const int64_t lengths[] = {1, 2, 8, 64, 3, 12, 31, 33, 37, 100, 257};
    for (size_t t = 0; t < sizeof lengths / sizeof lengths[0]; t++)
        for (int inverse = 0; inverse < 2; inverse++) {
            int64_t n = lengths[t];
            double *x = tgc_malloc((size_t)n * 2 * sizeof(double)), *y = tgc_malloc((size_t)n * 2 * sizeof(double));
            CU_ASSERT_PTR_NOT_NULL_FATAL(x);
            CU_ASSERT_PTR_NOT_NULL_FATAL(y);
            for (int64_t j = 0; j < n; j++) {
                x[2 * j] = sin(0.37 * (double)j + 0.1) + 0.01 * (double)(j % 7);
                x[2 * j + 1] = cos(1.3 * (double)j) - 0.5;
            }
            memcpy(y, x, (size_t)n * 2 * sizeof(double));
            tgc_fft *p = tgc_fft_create(n);
            CU_ASSERT_PTR_NOT_NULL_FATAL(p);
            tgc_fft_run(p, y, inverse != 0);
            tgc_fft_release(p);
            double worst = 0;
            for (int64_t k = 0; k < n; k++) {
                long double sr = 0, si = 0, sign = inverse ? 1 : -1;
                for (int64_t j = 0; j < n; j++) {
                    long double a = sign * 2.0L * 3.141592653589793238462643383279502884L * (long double)(j * k % n) / n;
                    sr += x[2 * j] * cosl(a) - x[2 * j + 1] * sinl(a);
                    si += x[2 * j] * sinl(a) + x[2 * j + 1] * cosl(a);
                }
                worst = fmax(worst, fabs((double)sr - y[2 * k]) + fabs((double)si - y[2 * k + 1]));
            }
            if (worst > 1e-9 * (double)n) fprintf(stderr, "\n  n %lld inverse %d: error %g\n", (long long)n, inverse, worst);
            CU_ASSERT(worst <= 1e-9 * (double)n);
            tgc_free(x);
            tgc_free(y);
        }
}

/* DFT inverse + onesided is numpy.fft.irfft: bins [1, 5, 2] from
 * numpy.random.RandomState(1) draws (pasted), n = 8 (the default 2 * (5 - 1)):
 * np.fft.irfft(b[..., 0] + 1j * b[..., 1], n=8, axis=1)[..., None]. */
static void test_dft_irfft(void) {
    static const float want[8] = {0.2651912271976471f,  -0.15106025338172913f, -0.08971402049064636f,
                                  0.016476895660161972f, 0.16447067260742188f, -0.06582195311784744f,
                                  -0.29157572984695435f, 0.8110829591751099f};
    shape_fx f;
    fx_begin(&f, "DFT");
    fx_in(&f, TGC_FLOAT32, 3, (int64_t[]){1, 5, 2},
          (float[]){0.6590498089790344f, -1.6274383068084717f, 0.6023193001747131f, 0.4202822148799896f,
                    0.8109516501426697f, 1.044442057609558f, -0.4008781909942627f, 0.8240056037902832f,
                    -0.5623054504394531f, 1.9548780918121338f});
    fx_attr_int(&f, "inverse", 1);
    fx_attr_int(&f, "onesided", 1);
    fx_out(&f, TGC_FLOAT32, 3, (int64_t[]){1, 8, 1});
    fx_run_ok(&f);
    expect_close(&f, 0, want, 8, 1e-5, 1e-6);
    fx_end(&f);
}

/* A real signal of 9 zero-padded to dft_length 12, onesided (7 bins):
 * np.fft.fft(x[..., 0], n=12, axis=1)[:, :7] as (re, im). */
static void test_dft_padded_onesided(void) {
    static const float want[14] = {-5.35174560546875f,  0.0f,    -3.884470224380493f, 3.4853553771972656f,
                                   -0.513811469078064f, 3.876906633377075f, 0.6405367851257324f,
                                   -2.428621768951416f, -1.147637128829956f, 4.886306285858154f,
                                   0.2275770604610443f, -3.2423102855682373f, -1.2760637998580933f, 0.0f};
    shape_fx f;
    fx_begin(&f, "DFT");
    fx_in(&f, TGC_FLOAT32, 3, (int64_t[]){1, 9, 1},
          (float[]){-1.33195161819458f, -1.7606885433197021f, -1.6507213115692139f, -0.8905555605888367f,
                    -1.1191153526306152f, 1.9560788869857788f, -0.32649949193000793f, -1.342675805091858f,
                    1.1143829822540283f});
    fx_in(&f, TGC_INT64, 0, NULL, (int64_t[]){12});
    fx_attr_int(&f, "onesided", 1);
    fx_out(&f, TGC_FLOAT32, 3, (int64_t[]){1, 7, 2});
    fx_run_ok(&f);
    expect_close(&f, 0, want, 14, 1e-5, 1e-5);
    fx_end(&f);
}

/* An output whose transformed axis disagrees with dft_length is refused. */
static void test_dft_wrong_output_fails(void) {
    shape_fx f;
    fx_begin(&f, "DFT");
    fx_in(&f, TGC_FLOAT32, 3, (int64_t[]){1, 4, 1}, (float[]){1, 2, 3, 4});
    fx_out(&f, TGC_FLOAT32, 3, (int64_t[]){1, 5, 2});
    fx_run_fails(&f, "dim 1 should be 4");
    fx_end(&f);
}

/* Windows at size 5: periodic N = 5, symmetric N = 4 (the formulas of
 * kernels_signal.c, e.g. Hann symmetric = sin^2(pi n / 4) = [0, .5, 1, .5, 0]). */
static void test_windows(void) {
    static const struct {
        const char *op;
        int64_t periodic;
        float want[5];
    } cases[] = {
        {"HannWindow", 0, {0.0f, 0.5f, 1.0f, 0.5f, 0.0f}},
        /* 25/46 - 21/46 cos(pi n / 2) */
        {"HammingWindow", 0, {0.08695652f, 0.54347826f, 1.0f, 0.54347826f, 0.08695652f}},
        /* 0.42 - 0.5 cos(2 pi n / 5) + 0.08 cos(4 pi n / 5) */
        {"BlackmanWindow", 1, {0.0f, 0.20077014f, 0.84922986f, 0.84922986f, 0.20077014f}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        shape_fx f;
        fx_begin(&f, cases[i].op);
        fx_in(&f, TGC_INT32, 0, NULL, (int32_t[]){5});
        fx_attr_int(&f, "periodic", cases[i].periodic);
        fx_out(&f, TGC_FLOAT32, 1, (int64_t[]){5});
        fx_run_ok(&f);
        expect_close(&f, 0, cases[i].want, 5, 1e-6, 1e-7);
        fx_end(&f);
    }
}

/* STFT of a constant 1 signal, frame 4, step 2, no window: every frame's
 * DFT is [4, 0, 0] (onesided, 3 bins); 1 + (10 - 4) / 2 = 4 frames. */
static void test_stft_constant_signal(void) {
    float ones[10], want[4 * 3 * 2] = {0};
    for (int i = 0; i < 10; i++) ones[i] = 1;
    for (int fr = 0; fr < 4; fr++) want[fr * 6] = 4;
    shape_fx f;
    fx_begin(&f, "STFT");
    fx_in(&f, TGC_FLOAT32, 3, (int64_t[]){1, 10, 1}, ones);
    fx_in(&f, TGC_INT64, 0, NULL, (int64_t[]){2});
    fx_in_omit(&f);
    fx_in(&f, TGC_INT64, 0, NULL, (int64_t[]){4});
    fx_out(&f, TGC_FLOAT32, 4, (int64_t[]){1, 4, 3, 2});
    fx_run_ok(&f);
    expect_close(&f, 0, want, 24, 0, 1e-6);
    fx_end(&f);
}

TGC_TEST_MAIN("devices/cpu_signal", {"FFT matches the definition", test_fft_matches_the_definition},
              {"DFT irfft", test_dft_irfft}, {"DFT padded onesided", test_dft_padded_onesided},
              {"DFT wrong output", test_dft_wrong_output_fails}, {"windows", test_windows},
              {"STFT constant signal", test_stft_constant_signal})
