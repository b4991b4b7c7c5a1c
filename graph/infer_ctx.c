/* The inference context: what an op's infer function reads (inputs,
 * attributes) and writes (outputs, values, diagnostics). See infer.h. */
#include "graph/infer.h"

#include "support/alloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int tgc_infer_num_inputs(const tgc_infer_ctx *c) { return c->node->n_inputs - c->node->n_implicit; }

const tgc_tensor_info *tgc_infer_input(const tgc_infer_ctx *c, int i) {
    if (i < 0 || i >= c->node->n_inputs) return NULL;
    if (c->input_infos != NULL) return c->input_infos[i].dtype == TGC_DTYPE_INVALID ? NULL : &c->input_infos[i];
    tgc_ref ref = c->node->inputs[i];
    if (ref.node < 0) return NULL;
    return tgc_graph_ref_info(c->graph, ref);
}

int tgc_infer_num_outputs(const tgc_infer_ctx *c) { return c->node->n_outputs; }

const char *tgc_infer_input_shapes_str(const tgc_infer_ctx *c, char *buf, size_t size) {
    enum { SHOWN = 6 };
    int n = tgc_infer_num_inputs(c);
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && i < SHOWN && len < size; i++) {
        const tgc_tensor_info *in = tgc_infer_input(c, i);
        char s[256];
        const char *sep = i == 0 ? "" : i == n - 1 ? " and " : ", ";
        len += (size_t)snprintf(buf + len, size - len, "%s%s", sep,
                                in != NULL ? tgc_infer_shape_str(c, &in->shape, s, sizeof s) : "(omitted)");
    }
    if (n > SHOWN && len < size) snprintf(buf + len, size - len, ", ... (%d inputs)", n);
    if (n == 0) snprintf(buf, size, "none");
    return buf;
}

/* Refuses output i when its element count or bytes cannot fit
 * (support/checked.h), whatever its symbols are bound to. */
static tgc_status check_size(tgc_infer_ctx *c, int i, tgc_dtype dtype, const tgc_shape *shape) {
    size_t elem = tgc_dtype_size(dtype);
    char so[256], si[1024], why[160];
    if (tgc_shape_size_fits(shape, elem > 0 ? elem : 1)) {
        const char *over = tgc_load_limits_tensor(c->graph, shape, elem > 0 ? elem : 1, why, sizeof why);
        if (over == NULL) return TGC_OK;
        return tgc_infer_fail(c, -1, "over-limit", "output %d would have shape %s (%s): %s; the inputs have shapes %s",
                              i, tgc_infer_shape_str(c, shape, so, sizeof so), tgc_dtype_name(dtype), over,
                              tgc_infer_input_shapes_str(c, si, sizeof si));
    }
    return tgc_infer_fail(c, -1, "size-overflow",
                          "output %d would have shape %s (%s), whose element count or size in bytes does "
                          "not fit in 2^63 - 1; the inputs have shapes %s",
                          i, tgc_infer_shape_str(c, shape, so, sizeof so), tgc_dtype_name(dtype),
                          tgc_infer_input_shapes_str(c, si, sizeof si));
}

tgc_status tgc_infer_set_output(tgc_infer_ctx *c, int i, tgc_dtype dtype, const tgc_shape *shape) {
    if (c->nomem) return TGC_ERR_NOMEM;
    if (i < 0 || i >= c->node->n_outputs) return TGC_OK;
    tgc_status st = check_size(c, i, dtype, shape);
    if (st != TGC_OK) return st;
    tgc_tensor_info *o = c->output_infos != NULL ? &c->output_infos[i] : &c->node->outputs[i];
    tgc_info_clear_value(o);
    o->dtype = dtype;
    o->shape = *shape;
    o->kind = TGC_KIND_TENSOR;
    return TGC_OK;
}

tgc_status tgc_infer_set_output_kind(tgc_infer_ctx *c, int i, int kind, tgc_dtype dtype, const tgc_shape *shape) {
    tgc_status st = tgc_infer_set_output(c, i, dtype, shape);
    if (st == TGC_OK && i >= 0 && i < c->node->n_outputs)
        (c->output_infos != NULL ? &c->output_infos[i] : &c->node->outputs[i])->kind = (uint8_t)kind;
    return st;
}

tgc_status tgc_infer_set_value(tgc_infer_ctx *c, int i, int n, const tgc_dim *value) {
    if (i < 0 || i >= c->node->n_outputs) return TGC_OK;
    tgc_tensor_info *o = c->output_infos != NULL ? &c->output_infos[i] : &c->node->outputs[i];
    if (o->dtype != TGC_INT32 && o->dtype != TGC_INT64) return TGC_OK;
    if (n < 0 || n > TGC_MAX_VALUE_LEN) return TGC_OK;
    if (o->shape.rank == 0) {
        if (n != 1) return TGC_OK;
    } else if (o->shape.rank != 1 || !tgc_dim_is(o->shape.dims[0], n)) {
        return TGC_OK;
    }
    return tgc_info_set_value(o, n, value);
}

const tgc_attr *tgc_infer_attr(const tgc_infer_ctx *c, const char *name) {
    return tgc_node_attr(c->node, name);
}

int64_t tgc_infer_attr_int(const tgc_infer_ctx *c, const char *name, int64_t dflt) {
    const tgc_attr *a = tgc_infer_attr(c, name);
    return a != NULL && a->type == TGC_ATTR_INT ? a->i : dflt;
}

double tgc_infer_attr_float(const tgc_infer_ctx *c, const char *name, double dflt) {
    const tgc_attr *a = tgc_infer_attr(c, name);
    if (a == NULL) return dflt;
    if (a->type == TGC_ATTR_FLOAT) return a->f;
    if (a->type == TGC_ATTR_INT) return (double)a->i;
    return dflt;
}

const char *tgc_infer_attr_string(const tgc_infer_ctx *c, const char *name, const char *dflt) {
    const tgc_attr *a = tgc_infer_attr(c, name);
    return a != NULL && a->type == TGC_ATTR_STRING && a->s != NULL ? a->s : dflt;
}

bool tgc_infer_attr_ints(const tgc_infer_ctx *c, const char *name, const int64_t **out, size_t *n) {
    const tgc_attr *a = tgc_infer_attr(c, name);
    *out = NULL;
    *n = 0;
    if (a == NULL || a->type != TGC_ATTR_INTS) return false;
    *out = a->ints;
    *n = a->n;
    return true;
}

static const char *op_name(const tgc_node *n) {
    if (n->op != NULL) return n->op->name;
    return n->op_name != NULL ? n->op_name : "?";
}

/* Looks each owner up among its parent's nodes: messages are rare, graphs
 * nest at most 16 deep. */
const char *tgc_infer_where(const tgc_graph *g, char *buf, size_t size) {
    buf[0] = '\0';
    if (g->parent == NULL) return buf;
    tgc_infer_where(g->parent, buf, size);
    const tgc_graph *p = g->parent;
    for (int32_t i = 0; i < p->n_nodes; i++)
        for (int a = 0; a < p->nodes[i].n_attrs; a++)
            if (p->nodes[i].attrs[a].graph == g) {
                size_t len = strlen(buf);
                snprintf(buf + len, size - len, "%s'%s' %s", len ? ": " : " in ", tgc_node_label(&p->nodes[i]),
                         p->nodes[i].attrs[a].name);
                return buf;
            }
    return buf;
}

tgc_status tgc_infer_fail(tgc_infer_ctx *c, int input_index, const char *rule, const char *fmt, ...) {
    const tgc_node *n = c->node;
    tgc_srcpos pos = n->pos;
    if (input_index >= 0 && input_index < n->n_inputs && n->inputs[input_index].pos.line > 0)
        pos = n->inputs[input_index].pos;

    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *msg = tgc_malloc((size_t)(len > 0 ? len : 0) + 1);
    if (msg == NULL) return TGC_ERR_NOMEM;
    va_start(ap, fmt);
    vsnprintf(msg, (size_t)(len > 0 ? len : 0) + 1, fmt, ap);
    va_end(ap);

    char where[512];
    tgc_infer_where(c->graph, where, sizeof where);
    tgc_status s = tgc_diag_error(c->diags, c->graph->path, pos, rule, "node '%s' (%s)%s: %s", tgc_node_label(n),
                                  op_name(n), where, msg);
    tgc_free(msg);
    return s;
}

tgc_dim tgc_infer_fresh_dim(tgc_infer_ctx *c) {
    if (c->runtime) {
        c->unresolved = true;
        return tgc_dim_of(0);
    }
    if (c->probing) return tgc_dim_sym(c->probe_sym);
    int32_t sym = tgc_graph_fresh_symbol(c->graph);
    if (sym < 0) {
        c->nomem = true;
        return tgc_dim_of(0);
    }
    return tgc_dim_sym(sym);
}

tgc_dim tgc_infer_fresh_dim_cb(void *c) { return tgc_infer_fresh_dim(c); }

const char *tgc_infer_shape_str(const tgc_infer_ctx *c, const tgc_shape *s, char *buf, size_t size) {
    return tgc_shape_str(c->graph, s, buf, size);
}

/* Reports that input i's dtype is not among `expected` (a phrase). */
static bool dtype_fail(tgc_infer_ctx *c, int i, const tgc_tensor_info *in, const char *expected) {
    tgc_infer_fail(c, i, "dtype-mismatch", "input %d is %s; %s needs %s", i,
                   tgc_dtype_name(in->dtype), op_name(c->node), expected);
    return false;
}

bool tgc_infer_require_float(tgc_infer_ctx *c, int i) {
    const tgc_tensor_info *in = tgc_infer_input(c, i);
    if (in == NULL || in->dtype == TGC_FLOAT32 || in->dtype == TGC_FLOAT16 || in->dtype == TGC_BFLOAT16 ||
        in->dtype == TGC_FLOAT64)
        return true;
    return dtype_fail(c, i, in, "float32, float16, bfloat16 or float64");
}

bool tgc_infer_require_numeric(tgc_infer_ctx *c, int i) {
    const tgc_tensor_info *in = tgc_infer_input(c, i);
    if (in == NULL || (in->dtype != TGC_BOOL && in->dtype != TGC_DTYPE_INVALID)) return true;
    return dtype_fail(c, i, in, "a numeric type (a float or an integer)");
}

bool tgc_infer_require_int(tgc_infer_ctx *c, int i) {
    const tgc_tensor_info *in = tgc_infer_input(c, i);
    if (in == NULL || in->dtype == TGC_INT32 || in->dtype == TGC_INT64) return true;
    return dtype_fail(c, i, in, "int32 or int64");
}

bool tgc_infer_require_dtype(tgc_infer_ctx *c, int i, tgc_dtype t) {
    const tgc_tensor_info *in = tgc_infer_input(c, i);
    if (in == NULL || in->dtype == t) return true;
    return dtype_fail(c, i, in, tgc_dtype_name(t));
}

bool tgc_infer_require_same_dtype(tgc_infer_ctx *c, int i, int j) {
    const tgc_tensor_info *a = tgc_infer_input(c, i), *b = tgc_infer_input(c, j);
    if (a == NULL || b == NULL || a->dtype == b->dtype) return true;
    tgc_infer_fail(c, j, "dtype-mismatch", "input %d is %s but input %d is %s; %s needs both the same",
                   j, tgc_dtype_name(b->dtype), i, tgc_dtype_name(a->dtype), op_name(c->node));
    return false;
}

bool tgc_infer_input_concrete_value(const tgc_infer_ctx *c, int i, int64_t *out, int max, int *n) {
    const tgc_tensor_info *in = tgc_infer_input(c, i);
    if (in == NULL || in->value_len < 0 || in->value_len > max) return false;
    for (int k = 0; k < in->value_len; k++)
        if (!tgc_dim_known(in->value[k])) return false;
    for (int k = 0; k < in->value_len; k++) out[k] = in->value[k].v;
    *n = in->value_len;
    return true;
}
