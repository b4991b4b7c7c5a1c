/* The op registry as the public API lists it (tgc.h, tgc_op_schema_*):
 * counts and attribute schemas, for bindings that offer every op. */
#include "graph/op_registry.h"

#include <string.h>

static tgc_op_attr_type public_type(tgc_attr_type t) {
    switch (t) {
    case TGC_ATTR_INT: return TGC_OP_ATTR_INT;
    case TGC_ATTR_FLOAT: return TGC_OP_ATTR_FLOAT;
    case TGC_ATTR_STRING: return TGC_OP_ATTR_STRING;
    case TGC_ATTR_INTS: return TGC_OP_ATTR_INTS;
    case TGC_ATTR_FLOATS: return TGC_OP_ATTR_FLOATS;
    case TGC_ATTR_STRINGS: return TGC_OP_ATTR_STRINGS;
    default: return TGC_OP_ATTR_TENSOR;
    }
}

/* The attribute defs of op: def i, or NULL. */
static const tgc_attr_def *attr_at(const tgc_op_def *op, int i) {
    for (const tgc_attr_def *a = op->attrs; a->name != NULL; a++)
        if (i-- == 0) return a;
    return NULL;
}

static void fill(const tgc_op_def *op, tgc_op_schema *out) {
    int n = 0;
    while (attr_at(op, n) != NULL) n++;
    *out = (tgc_op_schema){op->name, op->min_inputs, op->max_inputs, op->min_outputs, op->max_outputs, n};
}

int tgc_op_schema_count(void) {
    size_t n = 0;
    tgc_op_all(&n);
    return (int)n;
}

tgc_status tgc_op_schema_at(int i, tgc_op_schema *out) {
    size_t n = 0;
    const tgc_op_def *const *all = tgc_op_all(&n);
    memset(out, 0, sizeof *out);
    if (i < 0 || (size_t)i >= n) return TGC_ERR_INVALID;
    fill(all[i], out);
    return TGC_OK;
}

tgc_status tgc_op_schema_find(const char *name, tgc_op_schema *out) {
    const tgc_op_def *op = name != NULL ? tgc_op_find(name) : NULL;
    memset(out, 0, sizeof *out);
    if (op == NULL) return TGC_ERR_INVALID;
    fill(op, out);
    return TGC_OK;
}

tgc_status tgc_op_schema_attr(const char *name, int i, const char **attr_name, tgc_op_attr_type *type,
                              int *required) {
    const tgc_op_def *op = name != NULL ? tgc_op_find(name) : NULL;
    const tgc_attr_def *a = op != NULL && i >= 0 ? attr_at(op, i) : NULL;
    if (a == NULL) return TGC_ERR_INVALID;
    if (attr_name != NULL) *attr_name = a->name;
    if (type != NULL) *type = public_type(a->type);
    if (required != NULL) *required = a->required;
    return TGC_OK;
}
