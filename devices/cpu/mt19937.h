/* The random-number generator of the random kernels (kernels_random.c):
 * the Mersenne Twister MT19937 (Matsumoto and Nishimura, "Mersenne
 * Twister: a 623-dimensionally equidistributed uniform pseudo-random number
 * generator", ACM TOMACS 8(1), 1998), used exactly as numpy's legacy
 * numpy.random.RandomState uses it, which is what ONNX's reference
 * implementation of the random ops calls (RandomState(int(seed))):
 *
 *   seeding   init_genrand(seed mod 2^32)
 *   doubles   (a >> 5) * 2^26 + (b >> 6), divided by 2^53, from two
 *             consecutive 32-bit outputs a, b: uniform in [0, 1)
 *   normals   the polar Box-Muller method of numpy's legacy_gauss, which
 *             makes two normals from one accepted pair and keeps the second
 *
 * so a seeded node gives the values ONNX's reference gives, the same on
 * every run. Not for cryptography.
 *
 * Example usage:
 *     tgc_mt19937 g;
 *     tgc_mt19937_seed(&g, 0);
 *     double u = tgc_mt19937_double(&g);   // 0.5488135039273248, as RandomState(0).rand()
 */
#ifndef TGC_DEVICES_CPU_MT19937_H
#define TGC_DEVICES_CPU_MT19937_H

#include <stdbool.h>
#include <stdint.h>

#define TGC_MT19937_N 624

typedef struct tgc_mt19937 {
    uint32_t mt[TGC_MT19937_N];
    int pos;
    bool has_gauss; /* the second normal of the last pair, kept */
    double gauss;
} tgc_mt19937;

/* Seeds g as numpy's RandomState(seed) for 0 <= seed < 2^32. */
void tgc_mt19937_seed(tgc_mt19937 *g, uint32_t seed);

/* A seed that differs from call to call and from run to run (the clock
 * and a process-wide counter), for nodes without a seed attribute. */
uint32_t tgc_mt19937_entropy_seed(void);

/* The next 32-bit output. */
uint32_t tgc_mt19937_next32(tgc_mt19937 *g);

/* A double uniform in [0, 1) with 53 random bits (RandomState.rand). */
double tgc_mt19937_double(tgc_mt19937 *g);

/* A standard normal (RandomState.randn). */
double tgc_mt19937_gauss(tgc_mt19937 *g);

#endif
