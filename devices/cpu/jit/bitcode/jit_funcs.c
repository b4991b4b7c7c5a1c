/* The expression language's float32 functions for the JIT, compiled by
 * clang to LLVM bitcode once per vector ISA at build time (CMakeLists.txt,
 * the flags of devices/cpu/ew_isa_<isa>.c) and embedded in the library
 * (scripts/embed_bitcode.cmake). The JIT parses the bitcode of its lanes
 * into each kernel's module and calls these by name, so the optimizer
 * inlines them into the loop: vmath.h's polynomials in registers, the
 * same code (and bits) as the row loops. Not part of the library's own
 * sources (the glob does not reach this folder). */
#include "devices/cpu/ew.h"
#include "devices/cpu/simd.h"
#include "devices/cpu/vmath.h"

#include "devices/cpu/ew_funcs_f32.h"

#include <string.h>

#define JIT_FN(name) EW_VEC_FN_DEFINE(, tgc_jit_fn_##name, name)
TGC_EW_FUNCS(JIT_FN)
