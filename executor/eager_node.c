/* The node an eager call describes: the op from the registry, the
 * caller's attributes checked against its schema as the graph loader
 * checks a file's (known names, types, required ones; a FLOAT attribute
 * takes an INT), and the key the kernel cache files the call under. */
#include "executor/eager.h"

#include "graph/op_registry.h"
#include "support/alloc.h"
#include "support/diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const tgc_attr_type attr_types[] = {TGC_ATTR_INT,  TGC_ATTR_FLOAT,   TGC_ATTR_STRING, TGC_ATTR_INTS,
                                           TGC_ATTR_FLOATS, TGC_ATTR_STRINGS, TGC_ATTR_TENSOR};

static tgc_status eager_error(tgc_diags *diags, const char *rule, const char *fmt, ...) TGC_PRINTF(3, 4);
static tgc_status eager_error(tgc_diags *diags, const char *rule, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, rule, "%s", msg);
}

/* "a, b, c" of op's attribute names into buf. */
static const char *attr_names(const tgc_op_def *op, char *buf, size_t size) {
    size_t len = 0;
    buf[0] = '\0';
    for (const tgc_attr_def *a = op->attrs; a->name != NULL && len < size; a++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ", " : "", a->name);
    return buf;
}

/* A tensor attribute: a copy of the host tensor t as a constant. */
static tgc_status const_of(const tgc_tensor *t, tgc_const **out) {
    if (t == NULL || tgc_tensor_data(t) == NULL || t->v.dtype == TGC_STRING) return TGC_ERR_INVALID;
    tgc_const *c = tgc_calloc(1, sizeof *c);
    if (c == NULL) return TGC_ERR_NOMEM;
    c->dtype = t->v.dtype;
    c->shape = tgc_shape_of(t->v.rank, t->v.dims);
    c->nbytes = tgc_value_nbytes(&t->v);
    if (c->nbytes > 0 && (c->data = tgc_malloc(c->nbytes)) == NULL) {
        tgc_free(c);
        return TGC_ERR_NOMEM;
    }
    if (c->nbytes > 0) memcpy(c->data, tgc_tensor_data(t), c->nbytes);
    *out = c;
    return TGC_OK;
}

/* dst = the caller's attribute src, of schema type `want`. */
static tgc_status attr_convert(tgc_attr *dst, const tgc_op_attr *src, tgc_attr_type want) {
    dst->type = want;
    switch (src->type) {
    case TGC_OP_ATTR_INT:
        if (want == TGC_ATTR_FLOAT) dst->f = (double)src->i;
        else dst->i = src->i;
        return TGC_OK;
    case TGC_OP_ATTR_FLOAT: dst->f = src->f; return TGC_OK;
    case TGC_OP_ATTR_STRING: return (dst->s = tgc_strdup(src->s != NULL ? src->s : "")) ? TGC_OK : TGC_ERR_NOMEM;
    case TGC_OP_ATTR_INTS:
        dst->n = src->n;
        if ((dst->ints = tgc_malloc(src->n * sizeof *dst->ints + 1)) == NULL) return TGC_ERR_NOMEM;
        if (src->n > 0) memcpy(dst->ints, src->ints, src->n * sizeof *dst->ints);
        return TGC_OK;
    case TGC_OP_ATTR_FLOATS:
        dst->n = src->n;
        if ((dst->floats = tgc_malloc(src->n * sizeof *dst->floats + 1)) == NULL) return TGC_ERR_NOMEM;
        if (src->n > 0) memcpy(dst->floats, src->floats, src->n * sizeof *dst->floats);
        return TGC_OK;
    case TGC_OP_ATTR_STRINGS:
        if ((dst->strings = tgc_calloc(src->n + 1, sizeof *dst->strings)) == NULL) return TGC_ERR_NOMEM;
        dst->n = src->n;
        for (size_t i = 0; i < src->n; i++)
            if ((dst->strings[i] = tgc_strdup(src->strings[i] != NULL ? src->strings[i] : "")) == NULL)
                return TGC_ERR_NOMEM;
        return TGC_OK;
    case TGC_OP_ATTR_TENSOR: return const_of(src->tensor, &dst->tensor);
    }
    return TGC_ERR_INVALID;
}

static bool type_fits(tgc_op_attr_type given, tgc_attr_type want) {
    if ((int)given < 0 || (size_t)given >= sizeof attr_types / sizeof attr_types[0]) return false;
    return attr_types[given] == want || (given == TGC_OP_ATTR_INT && want == TGC_ATTR_FLOAT);
}

static tgc_status check_attrs(const tgc_op_def *op, const tgc_op_attr *attrs, int n_attrs, tgc_diags *diags) {
    char names[512];
    for (int i = 0; i < n_attrs; i++) {
        const tgc_op_attr *a = &attrs[i];
        const tgc_attr_def *def = a->name != NULL ? tgc_op_attr_def(op, a->name) : NULL;
        if (def == NULL)
            return eager_error(diags, "unknown-attribute", "op %s: unknown attribute '%s' (%s takes: %s)", op->name,
                               a->name ? a->name : "(null)", op->name, attr_names(op, names, sizeof names));
        if (!type_fits(a->type, def->type))
            return eager_error(diags, "attribute-type", "op %s: attribute '%s' must be %s", op->name, a->name,
                               tgc_attr_type_name(def->type));
        if (a->type == TGC_OP_ATTR_TENSOR &&
            (a->tensor == NULL || tgc_tensor_data(a->tensor) == NULL || tgc_tensor_dtype(a->tensor) == TGC_STRING))
            return eager_error(diags, "attribute-type", "op %s: attribute '%s' needs a tensor in host memory, "
                               "not of strings", op->name, a->name);
        if ((a->type == TGC_OP_ATTR_INTS && a->ints == NULL && a->n > 0) ||
            (a->type == TGC_OP_ATTR_FLOATS && a->floats == NULL && a->n > 0) ||
            (a->type == TGC_OP_ATTR_STRINGS && a->strings == NULL && a->n > 0))
            return eager_error(diags, "attribute-type", "op %s: attribute '%s' has %zu elements at NULL", op->name,
                               a->name, a->n);
        for (int j = 0; j < i; j++)
            if (strcmp(attrs[j].name, a->name) == 0)
                return eager_error(diags, "duplicate-attribute", "op %s: attribute '%s' given twice", op->name,
                                   a->name);
    }
    for (const tgc_attr_def *d = op->attrs; d->name != NULL; d++) {
        bool given = false;
        for (int i = 0; i < n_attrs && !given; i++) given = strcmp(attrs[i].name, d->name) == 0;
        if (d->required && !given)
            return eager_error(diags, "missing-attribute", "op %s needs attribute '%s'", op->name, d->name);
    }
    return TGC_OK;
}

static tgc_status check_counts(const tgc_op_def *op, int n_inputs, int *n_outputs, tgc_diags *diags) {
    if (n_inputs < op->min_inputs || (op->max_inputs >= 0 && n_inputs > op->max_inputs))
        return eager_error(diags, "input-count", "op %s takes %d to %d inputs, got %d", op->name, op->min_inputs,
                           op->max_inputs, n_inputs);
    if (*n_outputs <= 0) *n_outputs = op->min_outputs > 0 ? op->min_outputs : 1;
    if (*n_outputs < op->min_outputs || (op->max_outputs >= 0 && *n_outputs > op->max_outputs))
        return eager_error(diags, "output-count", "op %s has %d to %d outputs, %d asked for", op->name,
                           op->min_outputs, op->max_outputs, *n_outputs);
    return TGC_OK;
}

tgc_status tgc_eager_node_build(tgc_node *n, const char *op_name, const tgc_op_attr *attrs, int n_attrs,
                                int n_inputs, int n_outputs, tgc_diags *diags) {
    memset(n, 0, sizeof *n);
    const tgc_op_def *op = op_name != NULL ? tgc_op_find(op_name) : NULL;
    if (op == NULL) return eager_error(diags, "unknown-op", "unknown op '%s'", op_name ? op_name : "(null)");
    if (n_attrs < 0 || (n_attrs > 0 && attrs == NULL) || n_inputs < 0)
        return eager_error(diags, "bad-call", "op %s: negative counts, or attributes at NULL", op->name);
    tgc_status s = check_counts(op, n_inputs, &n_outputs, diags);
    if (s == TGC_OK) s = check_attrs(op, attrs, n_attrs, diags);
    if (s != TGC_OK) return s;
    n->kind = TGC_NODE_OP;
    n->op = op;
    n->name = tgc_strdup(op->name);
    n->op_name = tgc_strdup(op->name);
    n->inputs = tgc_calloc((size_t)n_inputs + 1, sizeof *n->inputs);
    n->outputs = tgc_calloc((size_t)n_outputs, sizeof *n->outputs);
    n->attrs = tgc_calloc((size_t)n_attrs + 1, sizeof *n->attrs);
    if (!n->name || !n->op_name || !n->inputs || !n->outputs || !n->attrs) return TGC_ERR_NOMEM;
    n->n_inputs = n_inputs;
    n->n_outputs = n_outputs;
    for (int k = 0; k < n_outputs; k++) {
        n->outputs[k].dtype = TGC_DTYPE_INVALID;
        n->outputs[k].value_len = -1;
    }
    for (int i = 0; i < n_attrs; i++) {
        tgc_attr *a = &n->attrs[n->n_attrs++];
        if ((a->name = tgc_strdup(attrs[i].name)) == NULL) return TGC_ERR_NOMEM;
        s = attr_convert(a, &attrs[i], tgc_op_attr_def(op, attrs[i].name)->type);
        if (s != TGC_OK) return s;
    }
    return TGC_OK;
}

void tgc_eager_node_release(tgc_node *n) {
    tgc_free(n->name);
    tgc_free(n->op_name);
    tgc_free(n->inputs);
    for (int k = 0; n->outputs != NULL && k < n->n_outputs; k++) tgc_info_clear_value(&n->outputs[k]);
    tgc_free(n->outputs);
    for (int i = 0; i < n->n_attrs; i++) tgc_attr_release(&n->attrs[i]);
    tgc_free(n->attrs);
    memset(n, 0, sizeof *n);
}

/* ---- the key ---------------------------------------------------------------- */

static void put(tgc_eager_key *k, const void *p, size_t n) {
    if (k->nomem) return;
    if (k->len + n > k->cap) {
        size_t cap = (k->len + n) * 2;
        unsigned char *b = tgc_malloc(cap);
        if (b == NULL) {
            k->nomem = true;
            return;
        }
        memcpy(b, k->bytes, k->len);
        if (k->bytes != k->small) tgc_free(k->bytes);
        k->bytes = b;
        k->cap = cap;
    }
    if (n > 0) memcpy(k->bytes + k->len, p, n);
    k->len += n;
}

static void put_str(tgc_eager_key *k, const char *s) { put(k, s != NULL ? s : "", strlen(s != NULL ? s : "") + 1); }

static void put_i64(tgc_eager_key *k, int64_t v) { put(k, &v, sizeof v); }

static void put_attr(tgc_eager_key *k, const tgc_op_attr *a) {
    put_str(k, a->name);
    put_i64(k, a->type);
    switch (a->type) {
    case TGC_OP_ATTR_INT: put_i64(k, a->i); break;
    case TGC_OP_ATTR_FLOAT: put(k, &a->f, sizeof a->f); break;
    case TGC_OP_ATTR_STRING: put_str(k, a->s); break;
    case TGC_OP_ATTR_INTS: put_i64(k, (int64_t)a->n); put(k, a->ints, a->n * sizeof *a->ints); break;
    case TGC_OP_ATTR_FLOATS: put_i64(k, (int64_t)a->n); put(k, a->floats, a->n * sizeof *a->floats); break;
    case TGC_OP_ATTR_STRINGS:
        put_i64(k, (int64_t)a->n);
        for (size_t i = 0; i < a->n; i++) put_str(k, a->strings[i]);
        break;
    case TGC_OP_ATTR_TENSOR: {
        const tgc_tensor *t = a->tensor;
        if (t == NULL || tgc_tensor_data(t) == NULL) break; /* refused when the node is built */
        put_i64(k, t->v.dtype);
        put_i64(k, t->v.rank);
        put(k, t->v.dims, (size_t)t->v.rank * sizeof t->v.dims[0]);
        if (t->v.dtype != TGC_STRING) put(k, tgc_tensor_data(t), tgc_value_nbytes(&t->v));
        break;
    }
    }
}

tgc_status tgc_eager_key_make(tgc_eager_key *k, const char *op, const tgc_op_attr *attrs, int n_attrs,
                              tgc_tensor *const *inputs, int n_inputs, int device, int n_outputs) {
    k->bytes = k->small;
    k->len = 0;
    k->cap = sizeof k->small;
    k->nomem = false;
    put_str(k, op);
    int32_t head[4] = {n_inputs, n_outputs, device, n_attrs};
    put(k, head, sizeof head);
    for (int i = 0; i < n_attrs; i++) put_attr(k, &attrs[i]);
    for (int i = 0; i < n_inputs; i++) {
        const tgc_tensor *t = inputs[i];
        if (t == NULL) {
            put_i64(k, -1);
            continue;
        }
        /* dtype and rank in one word, then dims and the device */
        put_i64(k, (int64_t)t->v.dtype << 8 | t->v.rank);
        put(k, t->v.dims, (size_t)t->v.rank * sizeof t->v.dims[0]);
        const tgc_device *d = t->v.buf != NULL ? t->v.buf->device : NULL;
        put(k, &d, sizeof d);
    }
    return k->nomem ? TGC_ERR_NOMEM : TGC_OK;
}

void tgc_eager_key_free(tgc_eager_key *k) {
    if (k->bytes != k->small) tgc_free(k->bytes);
    k->bytes = NULL;
}

/* FNV-1a over the key, 8 bytes at a time where it can. */
uint64_t tgc_eager_key_hash(const tgc_eager_key *k) {
    uint64_t h = 1469598103934665603ull;
    size_t i = 0;
    for (; i + 8 <= k->len; i += 8) {
        uint64_t w;
        memcpy(&w, k->bytes + i, 8);
        h = (h ^ w) * 1099511628211ull;
        h ^= h >> 29;
    }
    for (; i < k->len; i++) h = (h ^ k->bytes[i]) * 1099511628211ull;
    return h;
}
