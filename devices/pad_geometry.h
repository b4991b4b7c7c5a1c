/* Pad-18's arguments (Pad-11/13 are the same without axes), shared by the
 * cpu and gpu kernels: data (input 0, any dtype), pads (host int64, begins
 * then ends, one pair per padded axis), constant_value (host, data's dtype,
 * one element; absent or empty: zero) and axes (host int32/int64; absent:
 * every axis, in order), mode constant, reflect or edge.
 *
 * A negative pad crops: axis a first keeps input indices [lo, lo + m),
 * lo = max(0, -begin), m = D - max(0, -begin) - max(0, -end), as
 * onnxruntime does; then max(0, begin) and max(0, end) elements are added
 * around that kept range: the constant, the nearest kept element (edge), or
 * the kept range mirrored without repeating its border (reflect, numpy's
 * np.pad mode 'reflect', periodic with period 2 * (m - 1) when the pad
 * passes m - 1). Output index o of axis a reads kept index
 * o - max(0, begin), mapped by the mode when outside [0, m).
 *
 * Example usage (inside a kernel):
 *     tgc_pad_geometry p;
 *     tgc_status st = tgc_pad_read(c, &p);
 *     if (st != TGC_OK) return st;   // c->error already says why
 *     int64_t i = tgc_pad_source(&p, a, o);   // input index, or -1: the constant
 */
#ifndef TGC_DEVICES_PAD_GEOMETRY_H
#define TGC_DEVICES_PAD_GEOMETRY_H

#include "devices/kernel.h"
#include "devices/kernel_checks.h"

#include <stdint.h>

typedef enum tgc_pad_mode { TGC_PAD_CONSTANT, TGC_PAD_REFLECT, TGC_PAD_EDGE } tgc_pad_mode;

typedef struct tgc_pad_geometry {
    int rank;
    tgc_pad_mode mode;
    size_t esize;                      /* bytes of an element */
    unsigned char constant[16];        /* the constant's bytes (esize of them) */
    int64_t in[TGC_MAX_RANK], out[TGC_MAX_RANK];
    int64_t lo[TGC_MAX_RANK];          /* first kept input index */
    int64_t kept[TGC_MAX_RANK];        /* m, the kept input indices */
    int64_t begin[TGC_MAX_RANK];       /* max(0, pad begin) */
} tgc_pad_geometry;

/* Reads and checks a Pad node's inputs and attributes against output 0 (its
 * dtype and dims); edge and reflect need a kept range of at least one
 * element where an axis is padded. Returns TGC_OK, or fails through
 * tgc_kernel_fail. */
tgc_status tgc_pad_read(tgc_kernel_ctx *c, tgc_pad_geometry *p);

/* The input index output index o of axis a reads, or -1 for the constant. */
int64_t tgc_pad_source(const tgc_pad_geometry *p, int a, int64_t o);

#endif
