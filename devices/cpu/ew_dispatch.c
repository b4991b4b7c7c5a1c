/* The choice of the elementwise loops' ISA (devices/cpu/ew.h): once, at the
 * first call, the widest the running cpu and OS support, capped by
 * TGC_CPU_ISA. */
#include "devices/cpu/ew.h"

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
 * CMakeLists.txt), as __builtin_cpu_supports tells it; it checks that the
 * OS saves the vector registers too. */
static bool cpu_has(int isa) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    switch (isa) {
    case 0: return true;
    case 1: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
    default:
        return cpu_has(1) && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
    }
#else
    return isa == 0;
#endif
}

static void choose(void) {
    supported = 1;
    while (supported < N_ISAS && cpu_has(supported)) supported++;
    int pick = supported - 1;
    const char *cap = getenv("TGC_CPU_ISA");
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
