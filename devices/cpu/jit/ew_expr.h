/* The float expressions of graph/elementwise.def's rows as trees, for the
 * code generators that compile a fused group (devices/cpu/jit/): each row's
 * FLOAT_EXPR is kept as text (stringified from the table itself, with the
 * table's own helper macros expanded), and parsed here into a small tree.
 * So the arithmetic stays written once, in the row.
 *
 * The language is the one elementwise.def documents, with C's precedence:
 *     | (lowest), &, == !=, < <= > >=, + -, * /, unary -, then primaries:
 *     a float literal (1.0f, 0.5f, 2, INFINITY), x a b (the operands),
 *     P0 P1 P2 (the row's parameters), ( e ), SEL(m, t, f), ISNAN(v),
 *     ABS(v) and the functions of devices/cpu/ew.h's TGC_EW_FUNCS.
 * Comparisons, ISNAN, | and & give masks; SEL takes one. Binary operators
 * are left-associative, as in C, so the trees evaluate in the loops' order.
 *
 * Example usage:
 *     tgc_ew_tree t;
 *     char err[128];
 *     if (!tgc_ew_tree_parse(tgc_ew_float_expr(TGC_EW_Gelu), &t, err, sizeof err)) ...;
 *     // t.nodes[t.root] is the value; children are indices into t.nodes
 */
#ifndef TGC_DEVICES_CPU_JIT_EW_EXPR_H
#define TGC_DEVICES_CPU_JIT_EW_EXPR_H

#include "devices/cpu/ew.h"
#include "graph/elementwise.h"

#include <stdbool.h>
#include <stddef.h>

typedef enum tgc_ew_node_kind {
    TGC_EWX_CONST, /* value */
    TGC_EWX_X,     /* the unary operand */
    TGC_EWX_A,     /* the binary operands */
    TGC_EWX_B,
    TGC_EWX_PARAM, /* P<index> */
    TGC_EWX_NEG,   /* -kid[0] */
    TGC_EWX_ADD,   /* kid[0] op kid[1] */
    TGC_EWX_SUB,
    TGC_EWX_MUL,
    TGC_EWX_DIV,
    TGC_EWX_LT, /* masks */
    TGC_EWX_LE,
    TGC_EWX_GT,
    TGC_EWX_GE,
    TGC_EWX_EQ,
    TGC_EWX_NE,    /* true for NaN, as C's != */
    TGC_EWX_OR,    /* masks */
    TGC_EWX_AND,
    TGC_EWX_SEL,   /* kid[0] (a mask) ? kid[1] : kid[2], lane by lane */
    TGC_EWX_ISNAN, /* a mask */
    TGC_EWX_ABS,   /* the sign bit cleared */
    TGC_EWX_CALL,  /* fn(kid[0] [, kid[1]]) */
} tgc_ew_node_kind;

typedef struct tgc_ew_node {
    tgc_ew_node_kind kind;
    float value;  /* TGC_EWX_CONST */
    int index;    /* TGC_EWX_PARAM: 0..2; TGC_EWX_CALL: a tgc_ew_fn */
    int kid[3];   /* indices into the tree's nodes; -1 where unused */
} tgc_ew_node;

#define TGC_EW_TREE_MAX 96

typedef struct tgc_ew_tree {
    tgc_ew_node nodes[TGC_EW_TREE_MAX];
    int n, root;
} tgc_ew_tree;

/* The FLOAT_EXPR text of row `op` (a static string), e.g.
 * "SEL(x < 0.0f, P0 * x, x)" for LeakyRelu. */
const char *tgc_ew_float_expr(tgc_ew_op op);

/* Parses `text` into *t. False, with the reason in err (at most err_size
 * bytes, NUL-terminated), on a syntax error, an unknown name, a function
 * with the wrong number of arguments, or more than TGC_EW_TREE_MAX nodes. */
bool tgc_ew_tree_parse(const char *text, tgc_ew_tree *t, char *err, size_t err_size);

/* True when node i of t is a mask (a comparison, ISNAN, | or &). */
bool tgc_ew_tree_is_mask(const tgc_ew_tree *t, int i);

/* The number of arguments of function fn (1, or 2 for POW and FMOD). */
int tgc_ew_fn_arity(tgc_ew_fn fn);

#endif
