/* Copies of the IR's parts, for the stages that build a graph from another
 * (the partitioner, the optimization passes). */
#include "graph/graph.h"

#include "graph/subgraph.h"
#include "support/alloc.h"

#include <stdio.h>
#include <string.h>

tgc_status tgc_info_copy(tgc_tensor_info *dst, const tgc_tensor_info *src, bool with_value) {
    dst->dtype = src->dtype;
    dst->shape = src->shape;
    dst->kind = src->kind;
    dst->has_real = src->has_real;
    dst->real = src->real;
    dst->value_len = -1;
    dst->value = NULL;
    if (with_value && src->value_len >= 0) return tgc_info_set_value(dst, src->value_len, src->value);
    return TGC_OK;
}

tgc_const *tgc_const_borrow(const tgc_const *c) {
    tgc_const *k = tgc_calloc(1, sizeof *k);
    if (k == NULL) return NULL;
    *k = *c;
    k->borrowed = true;
    k->file = NULL;
    if (c->file != NULL && (k->file = tgc_strdup(c->file)) == NULL) {
        tgc_const_free(k);
        return NULL;
    }
    return k;
}

tgc_status tgc_attr_copy(tgc_attr *dst, const tgc_attr *src) {
    memset(dst, 0, sizeof *dst);
    dst->type = src->type;
    dst->pos = src->pos;
    dst->i = src->i;
    dst->f = src->f;
    dst->n = src->n;
    if ((dst->name = tgc_strdup(src->name)) == NULL) return TGC_ERR_NOMEM;
    if (src->s != NULL && (dst->s = tgc_strdup(src->s)) == NULL) return TGC_ERR_NOMEM;
    if (src->ints != NULL) {
        if ((dst->ints = tgc_malloc(src->n * sizeof *dst->ints + 1)) == NULL) return TGC_ERR_NOMEM;
        if (src->n > 0) memcpy(dst->ints, src->ints, src->n * sizeof *dst->ints);
    }
    if (src->floats != NULL) {
        if ((dst->floats = tgc_malloc(src->n * sizeof *dst->floats + 1)) == NULL) return TGC_ERR_NOMEM;
        if (src->n > 0) memcpy(dst->floats, src->floats, src->n * sizeof *dst->floats);
    }
    if (src->strings != NULL) {
        if ((dst->strings = tgc_calloc(src->n ? src->n : 1, sizeof *dst->strings)) == NULL) return TGC_ERR_NOMEM;
        for (size_t i = 0; i < src->n; i++)
            if ((dst->strings[i] = tgc_strdup(src->strings[i])) == NULL) return TGC_ERR_NOMEM;
    }
    if (src->tensor != NULL && (dst->tensor = tgc_const_borrow(src->tensor)) == NULL) return TGC_ERR_NOMEM;
    if (src->graph != NULL && (dst->graph = tgc_subgraph_clone(src->graph)) == NULL) return TGC_ERR_NOMEM;
    return TGC_OK;
}

tgc_status tgc_node_set_outputs(tgc_node *n, const tgc_tensor_info *src, int count) {
    if (count == 0) return TGC_OK;
    n->outputs = tgc_calloc((size_t)count, sizeof *n->outputs);
    if (n->outputs == NULL) return TGC_ERR_NOMEM;
    n->n_outputs = count;
    for (int k = 0; k < count; k++) n->outputs[k].value_len = -1;
    for (int k = 0; k < count; k++)
        if (tgc_info_copy(&n->outputs[k], &src[k], true) != TGC_OK) return TGC_ERR_NOMEM;
    return TGC_OK;
}

tgc_status tgc_node_copy_body(tgc_node *dst, const tgc_node *src) {
    dst->op = src->op;
    dst->pos = src->pos;
    dst->op_pos = src->op_pos;
    dst->device_pos = src->device_pos;
    dst->declared_pos = src->declared_pos;
    dst->n_implicit = src->n_implicit;
    if (src->op_name != NULL && (dst->op_name = tgc_strdup(src->op_name)) == NULL) return TGC_ERR_NOMEM;
    if (src->source_name != NULL && (dst->source_name = tgc_strdup(src->source_name)) == NULL) return TGC_ERR_NOMEM;
    if (src->device != NULL && (dst->device = tgc_strdup(src->device)) == NULL) return TGC_ERR_NOMEM;
    if (src->n_attrs > 0) {
        if ((dst->attrs = tgc_calloc((size_t)src->n_attrs, sizeof *dst->attrs)) == NULL) return TGC_ERR_NOMEM;
        for (int i = 0; i < src->n_attrs; i++) {
            dst->n_attrs = i + 1;
            if (tgc_attr_copy(&dst->attrs[i], &src->attrs[i]) != TGC_OK) return TGC_ERR_NOMEM;
        }
    }
    if (tgc_node_set_outputs(dst, src->outputs, src->n_outputs) != TGC_OK) return TGC_ERR_NOMEM;
    if (src->n_declared > 0) {
        dst->declared = tgc_calloc((size_t)src->n_declared, sizeof *dst->declared);
        dst->declared_has_shape = tgc_calloc((size_t)src->n_declared, sizeof *dst->declared_has_shape);
        if (dst->declared == NULL || dst->declared_has_shape == NULL) return TGC_ERR_NOMEM;
        dst->n_declared = src->n_declared;
        for (int k = 0; k < src->n_declared; k++) {
            tgc_info_copy(&dst->declared[k], &src->declared[k], false);
            dst->declared_has_shape[k] = src->declared_has_shape[k];
        }
    }
    if (src->data != NULL && (dst->data = tgc_const_borrow(src->data)) == NULL) return TGC_ERR_NOMEM;
    return TGC_OK;
}

const char *tgc_node_label(const tgc_node *n) { return n->source_name != NULL ? n->source_name : n->name; }

tgc_status tgc_graph_copy_output_sources(tgc_graph *dst, const tgc_graph *src) {
    if (src->output_sources == NULL) return TGC_OK;
    dst->output_sources = tgc_calloc((size_t)src->n_outputs + 1, sizeof *dst->output_sources);
    if (dst->output_sources == NULL) return TGC_ERR_NOMEM;
    for (int i = 0; i < src->n_outputs; i++)
        if (src->output_sources[i] != NULL && (dst->output_sources[i] = tgc_strdup(src->output_sources[i])) == NULL)
            return TGC_ERR_NOMEM;
    return TGC_OK;
}

const char *tgc_graph_output_name(const tgc_graph *g, int i, char *buf, size_t size) {
    if (g->output_sources != NULL && g->output_sources[i] != NULL) return g->output_sources[i];
    tgc_ref r = g->outputs[i];
    const char *node = r.node >= 0 ? g->nodes[r.node].name : "?";
    if (r.port == 0) snprintf(buf, size, "%s", node);
    else snprintf(buf, size, "%s:%d", node, (int)r.port);
    return buf;
}
