/* TGC_CPU_CLONES: a function compiled for AVX-512, AVX2 and the x86-64
 * baseline (GCC's target_clones; the dynamic loader picks one by cpuid
 * when the library loads), for simple loops the compiler vectorizes:
 * additions, comparisons, copies, a multiply-add in one precision. Only
 * for loops whose results do not depend on the vector width (no
 * reassociated sums; no a * b + c contracted into an FMA, which GCC does
 * not do in the ISO C11 mode the project builds in). Elsewhere (clang,
 * other architectures) nothing, and nothing under ThreadSanitizer: the
 * clones' resolvers (ifuncs) run while the loader relocates the library,
 * before TSan's runtime is up, and every program crashed at startup. Private
 * to the cpu kernels. */
#ifndef TGC_DEVICES_CPU_TARGET_CLONES_H
#define TGC_DEVICES_CPU_TARGET_CLONES_H

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define TGC_CPU_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define TGC_CPU_CLONES
#endif

#endif
