/* The registry: every op def, found by name. Op defs live in graph/ops_*.c,
 * one file per family; adding an op means defining it there and listing it
 * here. */
#include "graph/op_registry.h"

#include <string.h>

/* Each family file exports its defs; see ops_*.c. */
static const tgc_op_def *const all_ops[] = {
    NULL, /* placeholder so the table is never empty; skipped below */
};

const tgc_op_def *const *tgc_op_all(size_t *count) {
    *count = sizeof all_ops / sizeof all_ops[0] - 1;
    return all_ops + 1;
}

const tgc_op_def *tgc_op_find(const char *name) {
    size_t n;
    const tgc_op_def *const *ops = tgc_op_all(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(ops[i]->name, name) == 0) return ops[i];
    return NULL;
}

const tgc_attr_def *tgc_op_attr_def(const tgc_op_def *op, const char *name) {
    for (const tgc_attr_def *a = op->attrs; a != NULL && a->name != NULL; a++)
        if (strcmp(a->name, name) == 0) return a;
    return NULL;
}

const char *tgc_attr_type_name(tgc_attr_type t) {
    switch (t) {
    case TGC_ATTR_INT: return "int";
    case TGC_ATTR_FLOAT: return "float";
    case TGC_ATTR_STRING: return "string";
    case TGC_ATTR_INTS: return "ints";
    case TGC_ATTR_FLOATS: return "floats";
    case TGC_ATTR_STRINGS: return "strings";
    case TGC_ATTR_TENSOR: return "tensor";
    }
    return "unknown";
}
