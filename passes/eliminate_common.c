/* Common subexpression elimination, in one topological sweep: each node's
 * inputs are already rewritten to their first equal, so equal subtrees
 * meet bottom-up. A hash of (op, inputs, attributes) finds candidates; a
 * full comparison decides. Small initializers are compared by bytes, so
 * an exporter's repeated constants (shape vectors, scalars) merge too. */
#include "passes/pass.h"

#include "graph/subgraph.h"

#include "support/alloc.h"

#include <string.h>

#define MAX_CONST_BYTES ((size_t)1 << 20)

static uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001b3ULL; }

/* Eight bytes a step (a weight of 1 MiB hashed a byte at a time took 1 ms
 * of a transformer's start-up); the tail a byte at a time. */
static uint64_t hash_bytes(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, sizeof w);
        h = mix(h, w);
    }
    for (; i < n; i++) h = mix(h, b[i]);
    return h;
}

static uint64_t hash_str(uint64_t h, const char *s) { return s != NULL ? hash_bytes(h, s, strlen(s)) : mix(h, 0); }

static uint64_t hash_node(const tgc_node *n) {
    uint64_t h = 0xcbf29ce484222325ULL;
    if (n->kind == TGC_NODE_CONST) {
        const tgc_const *c = n->data;
        h = mix(mix(h, (uint64_t)c->dtype), (uint64_t)c->shape.rank);
        for (int d = 0; d < c->shape.rank; d++) h = mix(h, (uint64_t)c->shape.dims[d].v);
        return hash_bytes(h, c->data, c->nbytes);
    }
    h = hash_str(h, n->op_name);
    h = hash_str(h, n->device);
    for (int k = 0; k < n->n_inputs; k++) h = mix(mix(h, (uint64_t)n->inputs[k].node), (uint64_t)n->inputs[k].port);
    for (int a = 0; a < n->n_attrs; a++) h += hash_str(0, n->attrs[a].name); /* order-free */
    return mix(h, (uint64_t)n->n_outputs);
}

static bool same_str(const char *a, const char *b) {
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static bool same_const(const tgc_const *a, const tgc_const *b) {
    return a->dtype == b->dtype && tgc_shape_eq(&a->shape, &b->shape) && a->nbytes == b->nbytes &&
           (a->nbytes == 0 || memcmp(a->data, b->data, a->nbytes) == 0);
}

static bool same_attr(const tgc_attr *a, const tgc_attr *b) {
    if (a->type != b->type || a->n != b->n || a->i != b->i || !same_str(a->s, b->s)) return false;
    if (a->type == TGC_ATTR_FLOAT && memcmp(&a->f, &b->f, sizeof a->f) != 0) return false;
    if (a->ints != NULL && memcmp(a->ints, b->ints, a->n * sizeof *a->ints) != 0) return false;
    if (a->floats != NULL && memcmp(a->floats, b->floats, a->n * sizeof *a->floats) != 0) return false;
    for (size_t i = 0; a->strings != NULL && i < a->n; i++)
        if (!same_str(a->strings[i], b->strings[i])) return false;
    if ((a->tensor == NULL) != (b->tensor == NULL)) return false;
    return a->tensor == NULL || same_const(a->tensor, b->tensor);
}

static bool same_node(const tgc_node *a, const tgc_node *b) {
    if (a->kind != b->kind) return false;
    if (a->kind == TGC_NODE_CONST) return same_const(a->data, b->data);
    if (strcmp(a->op_name, b->op_name) != 0 || !same_str(a->device, b->device) || a->n_inputs != b->n_inputs ||
        a->n_outputs != b->n_outputs || a->n_attrs != b->n_attrs)
        return false;
    for (int k = 0; k < a->n_inputs; k++)
        if (a->inputs[k].node != b->inputs[k].node || a->inputs[k].port != b->inputs[k].port) return false;
    for (int i = 0; i < a->n_attrs; i++) {
        const tgc_attr *other = tgc_node_attr(b, a->attrs[i].name);
        if (other == NULL || !same_attr(&a->attrs[i], other)) return false;
    }
    return true;
}

static bool mergeable(const tgc_node *n) {
    if (n->kind == TGC_NODE_CONST) /* strings: slots are pointers, compared by value they would never merge */
        return n->data != NULL && n->data->dtype != TGC_STRING && n->data->nbytes <= MAX_CONST_BYTES;
    /* A node with subgraphs is never merged: two bodies are not compared. */
    return n->kind == TGC_NODE_OP && n->n_controls == 0 && !tgc_pass_op_is_stateful(n->op_name) &&
           !tgc_node_has_subgraphs(n);
}

tgc_status tgc_pass_eliminate_common(tgc_rewrite *rw) {
    tgc_graph *g = rw->g;
    int32_t nn = g->n_nodes;
    size_t cap = 16;
    while (cap < (size_t)nn * 2) cap *= 2;
    int32_t *table = tgc_malloc(cap * sizeof *table);
    uint64_t *hashes = tgc_malloc(((size_t)nn + 1) * sizeof *hashes);
    if (table == NULL || hashes == NULL) {
        tgc_free(table);
        tgc_free(hashes);
        return TGC_ERR_NOMEM;
    }
    for (size_t i = 0; i < cap; i++) table[i] = -1;
    for (int32_t i = 0; i < nn; i++) {
        int32_t id = g->topo[i];
        const tgc_node *n = &g->nodes[id];
        if (!mergeable(n)) continue;
        hashes[id] = hash_node(n);
        size_t slot = (size_t)hashes[id] & (cap - 1);
        int32_t twin = -1;
        for (; table[slot] >= 0; slot = (slot + 1) & (cap - 1))
            if (hashes[table[slot]] == hashes[id] && same_node(&g->nodes[table[slot]], n)) {
                twin = table[slot];
                break;
            }
        if (twin < 0) {
            table[slot] = id;
            continue;
        }
        bool output = false; /* a graph output keeps its producer, and so its name */
        for (int k = 0; k < n->n_outputs; k++) output |= tgc_rewrite_is_output(rw, (tgc_ref){id, k, {0, 0}});
        if (output) continue;
        for (int k = 0; k < n->n_outputs; k++)
            tgc_rewrite_replace_uses(rw, (tgc_ref){id, k, {0, 0}}, (tgc_ref){twin, k, {0, 0}});
        tgc_rewrite_remove(rw, id);
        rw->edits++;
    }
    tgc_free(table);
    tgc_free(hashes);
    return TGC_OK;
}
