/* The discrete Fourier transform of one complex sequence, in double, for
 * the signal kernels (kernels_signal.c: DFT, STFT).
 *
 * Lengths that are powers of two take the iterative radix-2 Cooley-Tukey
 * FFT (Cooley and Tukey, "An algorithm for the machine calculation of
 * complex Fourier series", Math. Comp. 19, 1965); other lengths up to
 * TGC_FFT_DIRECT_MAX the direct O(n^2) sum; longer ones Bluestein's
 * chirp-z algorithm (Bluestein, "A linear filtering approach to the
 * computation of the discrete Fourier transform", 1970), which writes the
 * transform as a convolution done with radix-2 FFTs of a power of two
 * >= 2n - 1: O(n log n) for every length. Twiddles and chirps are computed
 * from exact integer phases (j * k mod n, k^2 mod 2n), so large lengths
 * lose no accuracy to accumulated angles.
 *
 * Example usage:
 *     tgc_fft *p = tgc_fft_create(n);            // NULL: out of memory
 *     tgc_fft_run(p, data, false);               // data: n (re, im) pairs
 *     tgc_fft_release(p);
 */
#ifndef TGC_DEVICES_CPU_FFT_H
#define TGC_DEVICES_CPU_FFT_H

#include <stdbool.h>
#include <stdint.h>

/* Non-powers of two at most this long use the direct sum. Measured once on
 * the 2-core dev machine (one complex transform, double): n 37: Bluestein
 * 19 us, direct sum 17 us; n 100: 34 vs 125 us; n 1009: 0.56 vs 14 ms;
 * n 4001: 15 vs 217 ms. The two cross near 32-40. */
#define TGC_FFT_DIRECT_MAX 32

typedef struct tgc_fft tgc_fft;

/* A plan for length n >= 1 (its tables and scratch), or NULL when out of
 * memory or n is too large for the tables' sizes. Release with
 * tgc_fft_release. A plan is used by one thread at a time. */
tgc_fft *tgc_fft_create(int64_t n);

void tgc_fft_release(tgc_fft *p);

/* Transforms data (n complex values as interleaved re, im) in place:
 * X[k] = sum_j x[j] exp(-2 pi i j k / n), or with +2 pi i when inverse
 * (not divided by n). */
void tgc_fft_run(tgc_fft *p, double *data, bool inverse);

#endif
