/* The elementwise ops' rows (graph/elementwise.def) as data, for the code
 * that needs them at run time: the devices' kernels read an op's attribute
 * names and defaults here, and list the dtypes its row covers.
 *
 * Example usage:
 *     const tgc_ew_row *r = tgc_ew_find("LeakyRelu");
 *     float alpha = r->attr_defaults[0];            // 0.01f
 */
#ifndef TGC_GRAPH_ELEMENTWISE_H
#define TGC_GRAPH_ELEMENTWISE_H

#include "graph/graph.h"
#include "tgc.h"

#include <stdbool.h>

/* One id per row, in table order: TGC_EW_Relu, TGC_EW_Add, ... */
typedef enum tgc_ew_op {
#define EW_UNARY(op, cls, attrs, infer, fexpr, iexpr) TGC_EW_##op,
#define EW_PREDICATE(op, cls, attrs, infer, fexpr, iexpr) TGC_EW_##op,
#define EW_BINARY(op, cls, out, infer, fexpr, iexpr) TGC_EW_##op,
#define EW_BINARY_ATTRS(op, cls, out, attrs, infer, fexpr, iexpr) TGC_EW_##op,
#include "graph/elementwise.def"
#undef EW_UNARY
#undef EW_PREDICATE
#undef EW_BINARY
#undef EW_BINARY_ATTRS
    TGC_EW_COUNT
} tgc_ew_op;

/* Most attributes a row has (P0, P1, P2). */
#define TGC_EW_MAX_PARAMS 3

/* The most steps and inputs of a _FusedElementwise node (graph/ops_fused.c):
 * inference refuses more, the fusion pass makes no larger group, and the
 * cpu kernel's tables are this size. */
#define TGC_FUSED_MAX_STEPS 64
#define TGC_FUSED_MAX_INPUTS 32

/* What an attribute of a row is (graph/elementwise.def's ATTRS forms). */
typedef enum tgc_ew_attr_kind {
    TGC_EW_ATTR_FLOAT, /* EW_ATTRS1, EW_ATTRS2 */
    TGC_EW_ATTR_INT,   /* EW_INT_ATTRS1, EW_INT_ATTRS2 */
    TGC_EW_ATTR_WORD,  /* EW_WORD_ATTR: P0 is the index of the word in attr_words */
} tgc_ew_attr_kind;

typedef struct tgc_ew_row {
    const char *op;      /* the ONNX name */
    int arity;           /* 1 (EW_UNARY) or 2 (EW_BINARY) */
    bool bool_out;       /* a comparison or a predicate: the output is bool */
    unsigned dtypes;     /* bit (1u << dtype) for each dtype of the row's class */
    int n_attrs;         /* float attributes, read as P0.. */
    const char *attr_names[TGC_EW_MAX_PARAMS];
    float attr_defaults[TGC_EW_MAX_PARAMS];
    tgc_ew_attr_kind attr_kinds[TGC_EW_MAX_PARAMS];
    const char *attr_words[2]; /* TGC_EW_ATTR_WORD: the two words (absent: the first) */
} tgc_ew_row;

/* The rows, indexed by tgc_ew_op. */
extern const tgc_ew_row tgc_ew_rows[TGC_EW_COUNT];

/* P0..P2 of row r for node n of graph g as its kernels read them
 * (devices/ew_args.c): float attributes (an int taken as a float, rounded
 * to float32), integer ones, a word's index, defaults for what is absent;
 * Clip's bounds from its inputs 1 and 2 when those are float32 one-element
 * initializers (absent: -inf, +inf). False when a Clip bound is anything
 * else (known only at run time). g is read for Clip only (may be NULL for
 * other rows). */
bool tgc_ew_node_params(const tgc_graph *g, const tgc_node *n, const tgc_ew_row *r, double p[TGC_EW_MAX_PARAMS]);

/* The row of ONNX op `op`, or NULL when it has none. */
const tgc_ew_row *tgc_ew_find(const char *op);

/* The row's id (its index in tgc_ew_rows). */
static inline tgc_ew_op tgc_ew_id(const tgc_ew_row *r) { return (tgc_ew_op)(r - tgc_ew_rows); }

#endif
