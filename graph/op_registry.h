/* The op registry: one tgc_op_def per op, in plain C tables.
 *
 * An op def gives the op's input and output counts, its attribute schema and
 * its inference function (types and shapes together, and the compile-time
 * value of small integer outputs where it can). Ops follow ONNX opset 17;
 * tgc's own ops start with '_'.
 *
 * Example usage (defining an op, in graph/ops_*.c):
 *     static const tgc_attr_def relu_attrs[] = {{NULL}};
 *     static tgc_status infer_relu(tgc_infer_ctx *c) {
 *         const tgc_tensor_info *x = tgc_infer_input(c, 0);
 *         if (!tgc_infer_require_float(c, 0)) return TGC_ERR_INVALID;
 *         return tgc_infer_set_output(c, 0, x->dtype, &x->shape);
 *     }
 *     const tgc_op_def tgc_op_Relu = {"Relu", 1, 1, 1, 1, relu_attrs, infer_relu};
 * and listing &tgc_op_Relu in op_registry.c.
 */
#ifndef TGC_GRAPH_OP_REGISTRY_H
#define TGC_GRAPH_OP_REGISTRY_H

#include "graph/graph.h"

typedef struct tgc_infer_ctx tgc_infer_ctx;

typedef struct tgc_attr_def {
    const char *name; /* NULL ends a table */
    tgc_attr_type type;
    bool required;
} tgc_attr_def;

typedef struct tgc_op_def {
    const char *name;
    int min_inputs, max_inputs;   /* max_inputs -1: variadic */
    int min_outputs, max_outputs; /* max_outputs -1: variadic */
    const tgc_attr_def *attrs;    /* ends with {NULL} */
    /* Fills every output's dtype and shape (and value where known) from the
     * inputs and attributes, or reports why it cannot through
     * tgc_infer_fail and returns TGC_ERR_INVALID. */
    tgc_status (*infer)(tgc_infer_ctx *c);
} tgc_op_def;

/* Returns the op named `name` (exact, case-sensitive; tgc's own '_' ops
 * too), or NULL. A hash lookup. Thread safe. */
const tgc_op_def *tgc_op_find(const char *name);

/* The number of ops, tgc's own included: op ids are 0..tgc_op_count()-1. */
int tgc_op_count(void);

/* The id of op `op` (a def of this registry): dense, stable within a
 * process, for tables indexed by op (devices/kernel_index.c); -1 for NULL
 * or a def the registry does not hold. A hash lookup. Thread safe. */
int tgc_op_id(const tgc_op_def *op);

/* Returns the schema entry of attribute `name` of `op`, or NULL. */
const tgc_attr_def *tgc_op_attr_def(const tgc_op_def *op, const char *name);

/* All registered ops, for listings and tests: *count is set. */
const tgc_op_def *const *tgc_op_all(size_t *count);

/* Returns the graph-format spelling of an attribute type ("int", "ints"...). */
const char *tgc_attr_type_name(tgc_attr_type t);

#endif
