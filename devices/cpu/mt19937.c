/* See mt19937.h; the constants are the paper's (MT19937: n 624, m 397,
 * the matrix 0x9908b0df, the tempering masks 0x9d2c5680 and 0xefc60000)
 * and init_genrand's multiplier 1812433253. */
#include "devices/cpu/mt19937.h"

#include <math.h>
#include <stdatomic.h>
#include <time.h>

#define MT_M 397
#define MATRIX_A 0x9908b0dfu
#define UPPER 0x80000000u
#define LOWER 0x7fffffffu

void tgc_mt19937_seed(tgc_mt19937 *g, uint32_t seed) {
    g->mt[0] = seed;
    for (int i = 1; i < TGC_MT19937_N; i++)
        g->mt[i] = 1812433253u * (g->mt[i - 1] ^ (g->mt[i - 1] >> 30)) + (uint32_t)i;
    g->pos = TGC_MT19937_N;
    g->has_gauss = false;
    g->gauss = 0;
}

uint32_t tgc_mt19937_entropy_seed(void) {
    static atomic_uint calls;
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    uint64_t x = (uint64_t)ts.tv_sec * 1000000007u ^ (uint64_t)ts.tv_nsec ^
                 ((uint64_t)atomic_fetch_add(&calls, 1u) << 32);
    x ^= x >> 33; /* a splitmix-style finaliser spreads the bits */
    x *= 0xff51afd7ed558ccdu;
    x ^= x >> 33;
    return (uint32_t)x;
}

/* Refills the state: the twist of all 624 words. */
static void generate(tgc_mt19937 *g) {
    uint32_t *mt = g->mt;
    for (int i = 0; i < TGC_MT19937_N; i++) {
        uint32_t y = (mt[i] & UPPER) | (mt[(i + 1) % TGC_MT19937_N] & LOWER);
        mt[i] = mt[(i + MT_M) % TGC_MT19937_N] ^ (y >> 1) ^ ((y & 1u) ? MATRIX_A : 0u);
    }
    g->pos = 0;
}

uint32_t tgc_mt19937_next32(tgc_mt19937 *g) {
    if (g->pos >= TGC_MT19937_N) generate(g);
    uint32_t y = g->mt[g->pos++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

double tgc_mt19937_double(tgc_mt19937 *g) {
    uint32_t a = tgc_mt19937_next32(g) >> 5, b = tgc_mt19937_next32(g) >> 6;
    return ((double)a * 67108864.0 + (double)b) / 9007199254740992.0;
}

double tgc_mt19937_gauss(tgc_mt19937 *g) {
    if (g->has_gauss) {
        g->has_gauss = false;
        return g->gauss;
    }
    double x1, x2, r2;
    do {
        x1 = 2.0 * tgc_mt19937_double(g) - 1.0;
        x2 = 2.0 * tgc_mt19937_double(g) - 1.0;
        r2 = x1 * x1 + x2 * x2;
    } while (r2 >= 1.0 || r2 == 0.0);
    double f = sqrt(-2.0 * log(r2) / r2);
    g->gauss = f * x1;
    g->has_gauss = true;
    return f * x2;
}
