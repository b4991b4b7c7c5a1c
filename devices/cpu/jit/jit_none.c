/* The JIT in a build without LLVM (CMake's TGC_JIT off, or no llvm-14-dev):
 * never on, so every fused group runs through the interpreter. */
#include "devices/cpu/jit/jit.h"

#include <string.h>

bool tgc_jit_enabled(void) { return false; }

tgc_jit_fused_fn tgc_jit_fused_kernel(const tgc_jit_program *p, int lanes, char *err, size_t err_size) {
    (void)p, (void)lanes;
    if (err != NULL && err_size > 0) err[0] = '\0';
    return NULL;
}

tgc_jit_stats tgc_jit_get_stats(void) {
    tgc_jit_stats s;
    memset(&s, 0, sizeof s);
    return s;
}
