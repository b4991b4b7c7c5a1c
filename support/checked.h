/* Overflow-checked size arithmetic: the one way tgc computes element
 * counts, byte sizes, strides, offsets and sums of sizes.
 *
 * A model file is untrusted input: a dim of 2^62, a Reshape target whose
 * product passes 2^63, a --bind N=2^40 that multiplies into a planner's
 * figures. Signed overflow is undefined behaviour in C, and an unsigned
 * product that wraps allocates a small buffer for a kernel that writes a
 * huge one. So every such product or sum goes through these helpers, which
 * report overflow instead of computing it (the compiler's
 * __builtin_*_overflow family where it has one).
 *
 * Every helper returns true and stores the exact result in *out when it
 * fits, and returns false (leaving *out unspecified) when it does not; the
 * caller turns false into its own error (at inference: the rule
 * "size-overflow", docs/graph-format.md).
 *
 * Units: element counts and dims are int64 elements; byte sizes are bytes,
 * at most TGC_MAX_BYTES, so that a byte size fits in int64_t, size_t and
 * ptrdiff_t alike (the last so that pointer arithmetic over a buffer is
 * defined).
 *
 * Example usage:
 *     int64_t numel;
 *     size_t nbytes;
 *     if (!tgc_checked_numel(rank, dims, &numel) ||
 *         !tgc_checked_nbytes(numel, tgc_dtype_size(dtype), &nbytes))
 *         return fail("the tensor's size does not fit");
 *     int64_t end;
 *     if (!tgc_checked_add_i64(offset, (int64_t)nbytes, &end)) ...
 */
#ifndef TGC_SUPPORT_CHECKED_H
#define TGC_SUPPORT_CHECKED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest byte size tgc computes with: PTRDIFF_MAX, which is at most
 * INT64_MAX and SIZE_MAX on every platform tgc builds for (2^63 - 1 on
 * 64-bit hosts). */
#define TGC_MAX_BYTES ((int64_t)PTRDIFF_MAX)
_Static_assert((uint64_t)PTRDIFF_MAX <= (uint64_t)INT64_MAX && (uint64_t)PTRDIFF_MAX <= (uint64_t)SIZE_MAX,
               "TGC_MAX_BYTES must fit int64_t and size_t");

#if defined(__GNUC__) || defined(__clang__)
#define TGC_CHECKED_BUILTINS 1
#endif

/* a + b, a - b, a * b over int64. False on overflow. */
static inline bool tgc_checked_add_i64(int64_t a, int64_t b, int64_t *out) {
#ifdef TGC_CHECKED_BUILTINS
    return !__builtin_add_overflow(a, b, out);
#else
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) return false;
    *out = a + b;
    return true;
#endif
}

static inline bool tgc_checked_sub_i64(int64_t a, int64_t b, int64_t *out) {
#ifdef TGC_CHECKED_BUILTINS
    return !__builtin_sub_overflow(a, b, out);
#else
    if ((b < 0 && a > INT64_MAX + b) || (b > 0 && a < INT64_MIN + b)) return false;
    *out = a - b;
    return true;
#endif
}

static inline bool tgc_checked_mul_i64(int64_t a, int64_t b, int64_t *out) {
#ifdef TGC_CHECKED_BUILTINS
    return !__builtin_mul_overflow(a, b, out);
#else
    if (a == 0 || b == 0) {
        *out = 0;
        return true;
    }
    if ((a == -1 && b == INT64_MIN) || (b == -1 && a == INT64_MIN)) return false;
    if (a > 0 ? (b > 0 ? a > INT64_MAX / b : b < INT64_MIN / a)
              : (b > 0 ? a < INT64_MIN / b : a < INT64_MAX / b))
        return false;
    *out = a * b;
    return true;
#endif
}

/* a + b and a * b over size_t. False when the result passes SIZE_MAX. */
static inline bool tgc_checked_add_size(size_t a, size_t b, size_t *out) {
#ifdef TGC_CHECKED_BUILTINS
    return !__builtin_add_overflow(a, b, out);
#else
    if (a > SIZE_MAX - b) return false;
    *out = a + b;
    return true;
#endif
}

static inline bool tgc_checked_mul_size(size_t a, size_t b, size_t *out) {
#ifdef TGC_CHECKED_BUILTINS
    return !__builtin_mul_overflow(a, b, out);
#else
    if (b != 0 && a > SIZE_MAX / b) return false;
    *out = a * b;
    return true;
#endif
}

/* The element count of a tensor of `rank` dims (rank 0: a scalar, 1
 * element). False when rank < 0, a dim is negative, or the product of the
 * non-zero dims does not fit in int64: an empty tensor such as
 * [0, 2^62, 2^62] is refused too, so that every stride of a tensor that
 * passes (the product of any subset of its dims) fits as well, whatever the
 * order its dims are multiplied in. dims may be NULL when rank is 0. */
static inline bool tgc_checked_numel(int rank, const int64_t *dims, int64_t *out) {
    if (rank < 0) return false;
    int64_t nonzero = 1;
    bool empty = false;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0) return false;
        if (dims[i] == 0) empty = true;
        else if (!tgc_checked_mul_i64(nonzero, dims[i], &nonzero)) return false;
    }
    *out = empty ? 0 : nonzero;
    return true;
}

/* The byte size of numel elements of elem_size bytes each. False when
 * numel < 0 or the size passes TGC_MAX_BYTES. */
static inline bool tgc_checked_nbytes(int64_t numel, size_t elem_size, size_t *out) {
    if (numel < 0 || elem_size > (size_t)TGC_MAX_BYTES) return false;
    int64_t bytes;
    if (!tgc_checked_mul_i64(numel, (int64_t)elem_size, &bytes)) return false;
    *out = (size_t)bytes;
    return true;
}

/* The bytes of a tensor of `rank` dims and elem_size-byte elements. False
 * when tgc_checked_numel fails or the non-zero dims' product times
 * elem_size passes TGC_MAX_BYTES: as in NumPy, a zero dim does not excuse
 * an overflowing product of the others, so every byte stride of a tensor
 * that passes fits too. 0 for an empty tensor. */
static inline bool tgc_checked_dims_nbytes(int rank, const int64_t *dims, size_t elem_size, size_t *out) {
    if (rank < 0) return false;
    int64_t nonzero = 1;
    bool empty = false;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0) return false;
        if (dims[i] == 0) empty = true;
        else if (!tgc_checked_mul_i64(nonzero, dims[i], &nonzero)) return false;
    }
    if (!tgc_checked_nbytes(nonzero, elem_size, out)) return false;
    if (empty) *out = 0;
    return true;
}

/* v rounded up to a multiple of `alignment` (a power of two > 0), for
 * v >= 0. False when v < 0, the alignment is not a power of two, or the
 * result passes INT64_MAX. */
static inline bool tgc_checked_align_i64(int64_t v, int64_t alignment, int64_t *out) {
    if (v < 0 || alignment <= 0 || (alignment & (alignment - 1)) != 0) return false;
    int64_t up;
    if (!tgc_checked_add_i64(v, alignment - 1, &up)) return false;
    *out = up & ~(alignment - 1);
    return true;
}

/* A non-negative int64 as a size_t byte count: false when v < 0 or
 * v > TGC_MAX_BYTES. */
static inline bool tgc_checked_size_of_i64(int64_t v, size_t *out) {
    if (v < 0 || v > TGC_MAX_BYTES) return false;
    *out = (size_t)v;
    return true;
}

#endif
