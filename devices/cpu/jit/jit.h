/* The cpu's JIT for fusion groups (the design's LLVM-C host JIT): a
 * _FusedElementwise program (graph/ops_fused.c) becomes one generated loop
 * over vectors of the elementwise ISA's lanes, every step's arithmetic in
 * registers, emitted from the row's own expression in graph/elementwise.def
 * (devices/cpu/jit/ew_expr.h) as XLA's elemental emitters do. Built with
 * LLVM 14's C API only (devices/cpu/jit/llvm_*.c): IR from the builders,
 * the new pass manager's "default<O3>" for the host CPU's name and
 * features, object code from the target machine, loaded by ORC's LLJIT.
 *
 * Results are those of the unfused row loops, bit for bit: the generated
 * code does the same IEEE operations in the same order (no contraction:
 * the loops are built without it too) and calls the same vector functions
 * for everything else (exp, tanh, erf, ...: devices/cpu/vmath.h compiled
 * by clang to bitcode per ISA at build time, devices/cpu/jit/bitcode/,
 * and inlined into the loop by the optimizer).
 *
 * Kernels are cached in memory by their key (the program, the rows'
 * expression text, the input kinds, the lanes, the LLVM version and the
 * CPU's name and features), and on disk as object files under
 * $XDG_CACHE_HOME/tgc/jit (else ~/.cache/tgc/jit), one file a key, so a
 * second process compiles nothing. A cache file that is short, corrupt,
 * or holds another key is rebuilt and replaced, never trusted.
 *
 * TGC_JIT=0 in the process's settings (support/settings.h), or a build
 * without LLVM (jit_none.c), turns it off: tgc_jit_fused_kernel returns
 * NULL and the caller runs its interpreter (the same results).
 *
 * Example usage (devices/cpu/kernels_fused.c):
 *     tgc_jit_fused_fn fn = tgc_jit_fused_kernel(&program, loops->lanes, err, sizeof err);
 *     if (fn != NULL) fn(nvec, inputs, y);
 */
#ifndef TGC_DEVICES_CPU_JIT_JIT_H
#define TGC_DEVICES_CPU_JIT_JIT_H

#include "devices/cpu/ew.h"
#include "graph/elementwise.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The widest vector a kernel is compiled for, in float lanes (AVX-512's);
 * callers size their padded tails by it. */
#define TGC_JIT_MAX_LANES 16

/* One step: row `row` (a tgc_ew_op) over operands a and b (an input index
 * 0..n_inputs-1, or n_inputs + k for step k's result; b -1 for a unary
 * row), parameters p (P0..P2). */
typedef struct tgc_jit_step {
    int row;
    int a, b;
    float p[TGC_EW_MAX_PARAMS];
} tgc_jit_step;

typedef struct tgc_jit_program {
    int n_steps, n_inputs;
    tgc_jit_step steps[TGC_FUSED_MAX_STEPS];
    bool scalar[TGC_FUSED_MAX_INPUTS]; /* input i is one element, the same in every lane */
} tgc_jit_program;

/* A compiled group: for v in [0, nvec), lanes y[v * L .. v * L + L) =
 * the program over in[i][v * L ..] (in[i][0] for a scalar input), where L
 * is the lanes it was compiled for. No alignment needed. */
typedef void (*tgc_jit_fused_fn)(int64_t nvec, const float *const *in, float *y);

/* The kernel for program p at `lanes` float lanes (4, 8 or 16 =
 * TGC_JIT_MAX_LANES), compiled
 * now or found in the caches; NULL when the JIT is off (err "") or could
 * not compile it (err says why; the caller falls back). Thread-safe (one
 * compile at a time); the kernel lives until the process ends. */
tgc_jit_fused_fn tgc_jit_fused_kernel(const tgc_jit_program *p, int lanes, char *err, size_t err_size);

/* True when this build has the JIT and the process's newest settings do
 * not say TGC_JIT=0. */
bool tgc_jit_enabled(void);

/* Counters since the process started (for tests and benchmarks). */
typedef struct tgc_jit_stats {
    int64_t compiled;      /* kernels compiled from IR */
    int64_t memory_hits;   /* found in the process's cache */
    int64_t disk_loads;    /* loaded from a cache file */
    int64_t disk_rejected; /* cache files found wrong and rebuilt */
    int64_t failures;      /* programs that could not be compiled */
    double compile_seconds; /* IR, optimization and code generation */
    double load_seconds;    /* cache files read and linked */
} tgc_jit_stats;

tgc_jit_stats tgc_jit_get_stats(void);

#endif
