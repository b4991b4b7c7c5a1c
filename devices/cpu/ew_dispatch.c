/* The choice of the elementwise loops' ISA (devices/cpu/ew.h): once, at the
 * first call, the widest the running cpu and OS support, capped by
 * TGC_CPU_ISA. */
#include "devices/cpu/ew.h"

#include "support/settings.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Narrowest first. */
static const tgc_ew_loops *const all_isas[] = {&tgc_ew_loops_sse2, &tgc_ew_loops_avx2, &tgc_ew_loops_avx512};
enum { N_ISAS = sizeof all_isas / sizeof all_isas[0] };

static int supported;                /* all_isas[0 .. supported) run here */
static const tgc_ew_loops *chosen;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* What the loops of each ISA were compiled to use (the flags in
 * CMakeLists.txt), from cpuid (Intel SDM vol. 2A, CPUID: leaf 1 ECX FMA
 * bit 12, OSXSAVE 27, F16C 29; leaf 7 EBX AVX2 bit 5, AVX512F 16, DQ 17,
 * BW 30, VL 31), and whether the OS saves those registers (XGETBV's XCR0:
 * SSE and AVX state 0x6, AVX-512's opmask and upper registers 0xE0). */
static bool cpu_has(int isa) {
#if defined(__x86_64__) || defined(__i386__)
    if (isa == 0) return true;
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
    bool fma = c >> 12 & 1, osxsave = c >> 27 & 1, f16c = c >> 29 & 1;
    if (!osxsave || !__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    bool avx_state = (lo & 0x6) == 0x6, avx512_state = (lo & 0xE6) == 0xE6;
    bool avx2 = avx_state && fma && f16c && (b >> 5 & 1);
    if (isa == 1) return avx2;
    return avx2 && avx512_state && (b >> 16 & 1) && (b >> 17 & 1) && (b >> 30 & 1) && (b >> 31 & 1);
#else
    return isa == 0;
#endif
}

static void choose(void) {
    supported = 1;
    while (supported < N_ISAS && cpu_has(supported)) supported++;
    int pick = supported - 1;
    const char *cap = tgc_settings_current()->cpu_isa;
    for (int i = 0; cap != NULL && i < pick; i++)
        if (strcmp(cap, all_isas[i]->isa) == 0) pick = i;
    chosen = all_isas[pick];
}

const tgc_ew_loops *tgc_cpu_ew_loops(void) {
    pthread_once(&once, choose);
    return chosen;
}

const tgc_ew_loops *const *tgc_cpu_ew_all_loops(int *count) {
    pthread_once(&once, choose);
    *count = supported;
    return all_isas;
}
