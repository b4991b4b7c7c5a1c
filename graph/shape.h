/* Dimensions, shapes and compile-time shape values.
 *
 * A dimension is either a concrete integer or a symbol: a name such as `N`
 * that is bound to one value when the graph runs. Symbols are indices into
 * the graph's symbol table (graph.h). Where inference cannot tell a
 * dimension, it makes a fresh symbol (`unk__0`, `unk__1`, ... as in ONNX
 * shape inference), so every dimension has a name and equal names mean equal
 * values.
 *
 * The same tgc_dim also holds an element of a compile-time known integer
 * tensor (a "shape value": the output of Shape, Gather over it, a constant
 * initializer...). There `v` may be any int64 (-1 in a Reshape target,
 * negative Slice starts), and a symbolic element means "the value of N".
 *
 * Example usage:
 *     tgc_shape out;
 *     if (!tgc_shape_broadcast(&a, &b, &out, &bad_axis)) error...
 */
#ifndef TGC_GRAPH_SHAPE_H
#define TGC_GRAPH_SHAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TGC_MAX_RANK 8
#define TGC_RANK_UNKNOWN (-1)
#define TGC_SYM_NONE (-1)

typedef struct tgc_dim {
    int64_t v;   /* the value when sym == TGC_SYM_NONE */
    int32_t sym; /* symbol index, or TGC_SYM_NONE for a concrete value */
} tgc_dim;

typedef struct tgc_shape {
    int rank; /* 0..TGC_MAX_RANK, or TGC_RANK_UNKNOWN */
    tgc_dim dims[TGC_MAX_RANK];
} tgc_shape;

static inline tgc_dim tgc_dim_of(int64_t v) { return (tgc_dim){.v = v, .sym = TGC_SYM_NONE}; }
static inline tgc_dim tgc_dim_sym(int32_t sym) { return (tgc_dim){.v = 0, .sym = sym}; }
static inline bool tgc_dim_known(tgc_dim d) { return d.sym == TGC_SYM_NONE; }
static inline bool tgc_dim_is(tgc_dim d, int64_t v) { return d.sym == TGC_SYM_NONE && d.v == v; }
static inline bool tgc_dim_eq(tgc_dim a, tgc_dim b) {
    return a.sym == b.sym && (a.sym != TGC_SYM_NONE || a.v == b.v);
}

/* A shape of `rank` concrete dims from `dims` (rank <= TGC_MAX_RANK). */
tgc_shape tgc_shape_of(int rank, const int64_t *dims);

/* True when every dim is concrete (and the rank is known). */
bool tgc_shape_known(const tgc_shape *s);

/* Number of elements when all dims are concrete and the count fits
 * (tgc_checked_numel, support/checked.h); -1 otherwise. */
int64_t tgc_shape_numel(const tgc_shape *s);

/* An estimate of the element count for planning (the placer's costs and
 * traffic): each symbolic dim counted as 1, as a double so that no product
 * overflows; 0 for an unknown rank. Never for allocation: that takes
 * tgc_shape_numel or the checked sizes of the bound dims. */
double tgc_shape_numel_estimate(const tgc_shape *s);

/* False when the concrete dims alone (each symbol counted as 1) already
 * give an element count or a byte size (elem_size bytes an element) that
 * does not fit (support/checked.h), or a concrete dim is negative: no
 * binding of the symbols could make such a tensor. True for an unknown
 * rank. Inference refuses such outputs ("size-overflow"). */
bool tgc_shape_size_fits(const tgc_shape *s, size_t elem_size);

/* True when the shapes are the same rank and dims (symbols compare by
 * index). Two unknown-rank shapes are equal. */
bool tgc_shape_eq(const tgc_shape *a, const tgc_shape *b);

/* Numpy broadcasting of a and b into *out (ONNX "multidirectional
 * broadcasting"). Per aligned axis: equal dims stay; a concrete 1 yields
 * the other; a concrete d > 1 against a symbol yields d (the symbol must
 * then be 1 or d at run time); two different symbols yield `fresh`, which
 * the caller makes with tgc_infer_fresh_dim (may be NULL: then returns
 * false for that case). Returns false, with the output-axis index in
 * *bad_axis, when two concrete dims differ and neither is 1. An unknown
 * rank on either side gives an unknown-rank result. */
bool tgc_shape_broadcast(const tgc_shape *a, const tgc_shape *b, tgc_shape *out, int *bad_axis,
                         tgc_dim (*fresh)(void *ctx), void *fresh_ctx);

/* Normalises an ONNX axis in [-rank, rank) to [0, rank); returns false if out of range. */
bool tgc_axis_normalize(int64_t axis, int rank, int *out);

#endif
