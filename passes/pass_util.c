/* Helpers the optimization passes share. */
#include "passes/pass.h"

#include "devices/kernel.h"

#include "support/alloc.h"
#include "support/checked.h"

#include <math.h>
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

bool tgc_pass_same_device(const tgc_node *a, const tgc_node *b) {
    if (a->device == NULL || b->device == NULL) return a->device == b->device;
    return strcmp(a->device, b->device) == 0;
}

int32_t tgc_pass_only_reader(const tgc_rewrite *rw, tgc_ref r) {
    if (tgc_rewrite_uses(rw, r) != 1 || tgc_rewrite_is_output(rw, r)) return -1;
    int32_t reader;
    return tgc_rewrite_readers(rw, r, &reader, 1) == 1 ? reader : -1;
}

bool tgc_pass_is_op(const tgc_rewrite *rw, int32_t id, const char *op) {
    if (id < 0 || rw->removed[id]) return false;
    const tgc_node *n = &rw->g->nodes[id];
    return n->kind == TGC_NODE_OP && n->n_controls == 0 && strcmp(n->op_name, op) == 0;
}

tgc_status tgc_pass_each_op(tgc_rewrite *rw, const char *op, tgc_status (*rewrite)(tgc_rewrite *rw, int32_t id)) {
    int32_t nn = rw->g->n_nodes;
    tgc_status s = TGC_OK;
    for (int32_t i = 0; s == TGC_OK && i < nn; i++)
        if (tgc_pass_is_op(rw, rw->g->topo[i], op)) s = rewrite(rw, rw->g->topo[i]);
    return s;
}

bool tgc_pass_is_scalar(const tgc_rewrite *rw, tgc_ref r, double want) {
    const tgc_const *c = tgc_pass_const_of(rw, r);
    if (c == NULL || c->dtype != TGC_FLOAT32 || tgc_shape_numel(&c->shape) != 1) return false;
    double v = *(const float *)c->data;
    return want == 0 ? v == 0 : fabs(v - want) <= 1e-4 * fabs(want);
}

int tgc_pass_match_either(const tgc_rewrite *rw, int32_t id, bool (*pred)(const tgc_rewrite *, tgc_ref, void *),
                          void *ctx, tgc_ref *other) {
    const tgc_node *n = &rw->g->nodes[id];
    if (n->n_inputs != 2) return -1;
    for (int k = 0; k < 2; k++)
        if (pred(rw, n->inputs[k], ctx)) {
            *other = n->inputs[1 - k];
            return k;
        }
    return -1;
}

uint32_t tgc_pass_device_kinds(const char *devices) {
    if (devices == NULL || devices[0] == '\0') return 0;
    uint32_t kinds = 0;
    for (const char *p = devices;;) {
        size_t len = strcspn(p, ",");
        tgc_device_id d;
        if (!tgc_device_id_parse(p, len, &d, NULL)) return 0;
        kinds |= 1u << d.kind;
        if (p[len] == '\0') return kinds;
        p += len + 1;
    }
}

bool *tgc_pass_colocation_targets(const tgc_graph *g) {
    bool *named = tgc_calloc((size_t)g->n_nodes + 1, sizeof *named);
    for (int32_t id = 0; named != NULL && id < g->n_nodes; id++)
        for (int k = 0; k < g->nodes[id].n_colocate; k++)
            if (g->nodes[id].colocate[k].node >= 0) named[g->nodes[id].colocate[k].node] = true;
    return named;
}

tgc_status tgc_pass_cut_copy(const tgc_graph *g, tgc_pass_cut_fn cut, void *arg, tgc_diags *diags, tgc_graph **out,
                             int32_t *n_cut) {
    *out = NULL;
    *n_cut = 0;
    tgc_graph *copy = tgc_graph_copy(g);
    bool *named = copy != NULL ? tgc_pass_colocation_targets(copy) : NULL;
    if (named == NULL) {
        tgc_graph_free(copy);
        return TGC_ERR_NOMEM;
    }
    tgc_rewrite rw;
    tgc_status s = tgc_rewrite_begin(&rw, copy);
    int32_t nn = s == TGC_OK ? rw.g->n_nodes : 0;
    for (int32_t i = 0; s == TGC_OK && i < nn; i++) {
        int32_t id = rw.g->topo[i];
        bool done = false;
        if (!rw.removed[id]) s = cut(&rw, id, named, arg, &done);
        *n_cut += done;
    }
    tgc_free(named);
    if (s != TGC_OK) {
        tgc_rewrite_abandon(&rw);
        return s;
    }
    s = tgc_rewrite_finish(&rw, diags, out);
    if (s == TGC_OK) s = tgc_pass_name_made_weights(*out);
    if (s != TGC_OK) {
        tgc_graph_free(*out);
        *out = NULL;
    }
    return s;
}

int64_t tgc_pass_attr_int(const tgc_node *n, const char *name, int64_t dflt) {
    const tgc_attr *a = tgc_node_attr(n, name);
    return a != NULL && a->type == TGC_ATTR_INT ? a->i : dflt;
}

double tgc_pass_attr_float(const tgc_node *n, const char *name, double dflt) {
    const tgc_attr *a = tgc_node_attr(n, name);
    return a != NULL && a->type == TGC_ATTR_FLOAT ? a->f : dflt;
}

bool tgc_pass_kernel_everywhere_at(uint32_t kinds, const char *op, tgc_dtype t) {
    for (int k = 0; k < tgc_backend_count(); k++)
        if ((kinds == 0 || (kinds & (1u << k))) && tgc_kernel_find(op, k, t) == NULL) return false;
    return true;
}

bool tgc_pass_kernel_everywhere(uint32_t kinds, const char *op) {
    return tgc_pass_kernel_everywhere_at(kinds, op, TGC_FLOAT32);
}

bool tgc_pass_fusion_devices(const char *devices, tgc_dtype t) {
    uint32_t kinds = tgc_pass_device_kinds(devices);
    return kinds != 0 && tgc_pass_kernel_everywhere_at(kinds, "_FusedElementwise", t);
}
