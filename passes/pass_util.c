/* Helpers the optimization passes share. */
#include "passes/pass.h"

#include "support/alloc.h"
#include "support/checked.h"

#include <string.h>

const tgc_const *tgc_pass_const_of(const tgc_rewrite *rw, tgc_ref r) {
    if (r.node < 0 || r.port != 0) return NULL;
    const tgc_node *n = &rw->g->nodes[r.node];
    return n->kind == TGC_NODE_CONST ? n->data : NULL;
}

tgc_const *tgc_pass_new_const(tgc_dtype dtype, const tgc_shape *shape, tgc_srcpos pos) {
    int64_t numel = tgc_shape_numel(shape);
    size_t elem = tgc_dtype_size(dtype);
    size_t nbytes;
    if (numel < 0 || elem == 0 || !tgc_checked_mul_size((size_t)numel, elem, &nbytes)) return NULL;
    tgc_const *c = tgc_calloc(1, sizeof *c);
    if (c == NULL) return NULL;
    c->dtype = dtype;
    c->shape = *shape;
    c->pos = pos;
    c->nbytes = nbytes;
    if (nbytes > 0 && (c->data = tgc_calloc(1, nbytes)) == NULL) {
        tgc_free(c);
        return NULL;
    }
    return c;
}

bool tgc_pass_op_is_stateful(const char *op_name) {
    static const char *const stateful[] = {"RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike",
                                           "Bernoulli",     "Multinomial",  "Dropout",           "_Send",
                                           "_Recv"};
    for (size_t i = 0; i < sizeof stateful / sizeof *stateful; i++)
        if (strcmp(op_name, stateful[i]) == 0) return true;
    return false;
}
