/* Cast and CastLike to and from TGC_STRING on the cpu, and the deep copy
 * every data-moving kernel uses for string tensors. Private to the cpu
 * device (kernels_elementwise.c calls them for Cast, CastLike, Identity).
 *
 * Example usage:
 *     if (x->dtype == TGC_STRING || to == TGC_STRING) return tgc_cpu_cast_strings(c, to);
 */
#ifndef TGC_DEVICES_CPU_STRING_CAST_H
#define TGC_DEVICES_CPU_STRING_CAST_H

#include "devices/kernel.h"

#include <stddef.h>

/* Output 0 = input 0 converted to dtype `to`, one of the two (or both)
 * TGC_STRING, shapes already checked equal by the caller. ONNX Cast-13
 * semantics as its reference (numpy's astype) gives them:
 *   number -> string   floats as numpy's str() of a scalar of that dtype:
 *                      the shortest digits that read back to the same value,
 *                      positional ("0.5", "1.0", "123456790.0") when
 *                      1e-4 <= |x| < 1e16 or x is 0, else scientific with a
 *                      two-digit-minimum exponent ("1e-05", "3e+38");
 *                      "nan", "inf", "-inf"; integers in decimal; bool
 *                      "True" / "False".
 *   string -> float    the whole string (surrounding blanks allowed) as a
 *                      decimal or "nan" / "inf" / "infinity" with an
 *                      optional sign, any case (strtod; hex is refused),
 *                      rounded once to the dtype;
 *   string -> integer  a decimal integer (strtoll / strtoull), modulo
 *                      2^bits for the narrower types as numeric Cast;
 *   string -> bool     "true"/"false" (any case), else a number != 0;
 *   string -> string   a copy of each string.
 * A string that does not parse fails the kernel, naming the element and
 * its text (ONNX leaves it undefined; numpy raises). TGC_ERR_NOMEM when a
 * string cannot be allocated. */
tgc_status tgc_cpu_cast_strings(tgc_kernel_ctx *c, tgc_dtype to);

/* Copies n string slots from src into dst (a string buffer's slots, which
 * own their strings), duplicating every string; nothing when dst == src
 * (a forwarded buffer). TGC_ERR_NOMEM through tgc_kernel_fail. */
tgc_status tgc_cpu_copy_strings(tgc_kernel_ctx *c, char **dst, const char *const *src, size_t n);

#endif
