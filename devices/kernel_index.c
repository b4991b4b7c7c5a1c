/* The kernel index (kernel.h): every backend's kernels by (op id, kind),
 * built once per kind on first use from the backend's families, and the
 * one rule that says which kernel runs a node. */
#include "devices/kernel.h"

#include "graph/op_registry.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One kind's kernels: those of op id i are defs[first[i] .. first[i + 1]),
 * in family order. */
typedef struct kind_index {
    int32_t *first;
    const tgc_kernel_def **defs;
    int unresolved; /* defs naming an op the registry does not hold */
} kind_index;

static kind_index indexes[TGC_MAX_BACKENDS];
static atomic_bool built[TGC_MAX_BACKENDS];
static pthread_mutex_t build_lock = PTHREAD_MUTEX_INITIALIZER;

/* Counts, then places, each def of the backend's families by op id. On out
 * of memory the kind has no kernels (every lookup NULL). The tables live to
 * the end of the process, as the registries they index: from malloc, not
 * tgc's counting allocator, whose live blocks are the tests' leaks. */
static void build(kind_index *ix, const tgc_backend *b) {
    int n_ops = tgc_op_count();
    int32_t *first = calloc((size_t)n_ops + 2, sizeof *first);
    size_t total = 0;
    for (const tgc_kernel_def *const *f = b->families; *f != NULL; f++)
        for (const tgc_kernel_def *k = *f; k->op != NULL; k++) {
            int id = tgc_op_id(tgc_op_find(k->op));
            if (id < 0) {
                ix->unresolved++;
                continue;
            }
            if (first != NULL) first[id + 2]++;
            total++;
        }
    const tgc_kernel_def **defs = calloc(total + 1, sizeof *defs);
    if (first == NULL || defs == NULL) {
        free(first);
        free(defs);
        return;
    }
    for (int i = 0; i < n_ops; i++) first[i + 2] += first[i + 1]; /* first[id + 1]: where id's defs start */
    for (const tgc_kernel_def *const *f = b->families; *f != NULL; f++)
        for (const tgc_kernel_def *k = *f; k->op != NULL; k++) {
            int id = tgc_op_id(tgc_op_find(k->op));
            if (id >= 0) defs[first[id + 1]++] = k;
        }
    ix->first = first; /* now first[id] .. first[id + 1] */
    ix->defs = defs;
}

static const kind_index *index_of(tgc_device_kind kind) {
    const tgc_backend *b = tgc_backend_get(kind);
    if (b == NULL) return NULL;
    if (!atomic_load_explicit(&built[kind], memory_order_acquire)) {
        pthread_mutex_lock(&build_lock);
        if (!atomic_load_explicit(&built[kind], memory_order_relaxed)) {
            build(&indexes[kind], b);
            atomic_store_explicit(&built[kind], true, memory_order_release);
        }
        pthread_mutex_unlock(&build_lock);
    }
    return &indexes[kind];
}

static bool handles(const tgc_kernel_def *k, tgc_dtype dtype) {
    if (dtype == TGC_DTYPE_INVALID || k->dtypes[0] == TGC_DTYPE_INVALID) return true;
    for (int i = 0; i < TGC_KERNEL_MAX_DTYPES && k->dtypes[i] != TGC_DTYPE_INVALID; i++)
        if (k->dtypes[i] == dtype) return true;
    return false;
}

const tgc_kernel_def *tgc_kernel_lookup(const tgc_op_def *op, tgc_device_kind kind, tgc_dtype dtype) {
    const kind_index *ix = index_of(kind);
    int id = tgc_op_id(op);
    if (ix == NULL || ix->first == NULL || id < 0) return NULL;
    for (int32_t i = ix->first[id]; i < ix->first[id + 1]; i++)
        if (handles(ix->defs[i], dtype)) return ix->defs[i];
    return NULL;
}

const tgc_kernel_def *tgc_kernel_find(const char *op, tgc_device_kind kind, tgc_dtype dtype) {
    return tgc_kernel_lookup(tgc_op_find(op), kind, dtype);
}

int tgc_kernel_index_unresolved(tgc_device_kind kind) {
    const kind_index *ix = index_of(kind);
    return ix != NULL ? ix->unresolved : 0;
}

const tgc_kernel_def *tgc_kernel_select(const tgc_node *n, tgc_device_kind kind, tgc_dtype in0, tgc_dtype out0,
                                        bool host_values) {
    if (n->op == NULL || (host_values && !tgc_kind_host_memory(kind))) return NULL;
    const tgc_kernel_def *k = tgc_kernel_lookup(n->op, kind, in0 != TGC_DTYPE_INVALID ? in0 : out0);
    const tgc_backend *b = tgc_backend_get(kind);
    return k != NULL && (b->supports == NULL || b->supports(k, n)) ? k : NULL;
}

/* A string tensor, a sequence or an optional: host memory only. */
static bool host_only(const tgc_tensor_info *info) {
    return info->dtype == TGC_STRING || info->kind != TGC_KIND_TENSOR;
}

tgc_dtype tgc_kernel_node_dtype(const tgc_graph *g, const tgc_node *n) {
    if (n->n_inputs > 0 && n->inputs[0].node >= 0) return tgc_graph_ref_info(g, n->inputs[0])->dtype;
    return n->n_outputs > 0 ? n->outputs[0].dtype : TGC_DTYPE_INVALID;
}

const tgc_kernel_def *tgc_kernel_for_node(const tgc_graph *g, const tgc_node *n, tgc_device_kind kind) {
    if (n->kind != TGC_NODE_OP) return NULL;
    bool host_values = false;
    for (int i = 0; i < n->n_inputs; i++)
        if (n->inputs[i].node >= 0) host_values |= host_only(tgc_graph_ref_info(g, n->inputs[i]));
    for (int i = 0; i < n->n_outputs; i++) host_values |= host_only(&n->outputs[i]);
    return tgc_kernel_select(n, kind, tgc_kernel_node_dtype(g, n), TGC_DTYPE_INVALID, host_values);
}
