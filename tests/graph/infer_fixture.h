/* Building single op nodes in C (no YAML) and checking what their inference
 * functions give. Shapes, values and integer lists are written as text:
 * "N, 3, 5" (a symbol is any identifier), "" a scalar, "?" unknown rank.
 *
 * Example usage:
 *     fx f = fx_begin();
 *     fx_input(&f, "a", TGC_FLOAT32, "N, 1, 5");
 *     fx_input(&f, "b", TGC_FLOAT32, "3, 1");
 *     int32_t add = fx_op(&f, "add", "Add", "a, b", 1);
 *     CU_ASSERT_EQUAL(fx_infer(&f, add), TGC_OK);
 *     FX_OUT(&f, add, 0, TGC_FLOAT32, "[N, 3, 5]");
 *     fx_end(&f);
 *
 * Every node sits on line (id + 1) of "model.yaml", column 3; its input i
 * is referenced at column 20 + i, so tests can check where errors point. */
#ifndef TGC_TESTS_GRAPH_INFER_FIXTURE_H
#define TGC_TESTS_GRAPH_INFER_FIXTURE_H

#include "graph/infer.h"
#include "support/alloc.h"
#include "tests/harness.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fx {
    tgc_graph *g;
    tgc_diags *d;
} fx;

static inline fx fx_begin(void) {
    fx f = {tgc_graph_create("model.yaml", "."), tgc_diags_create()};
    CU_ASSERT_PTR_NOT_NULL_FATAL(f.g);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f.d);
    return f;
}

static inline void fx_end(fx *f) {
    tgc_graph_free(f->g);
    tgc_diags_free(f->d);
}

/* Splits "a, b, c" into trimmed items; returns the count (0 for ""). */
static inline int fx_split(const char *text, char items[][64], int max) {
    int n = 0;
    const char *p = text;
    while (*p == ' ') p++;
    if (*p == '\0') return 0;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        while (len > 0 && p[len - 1] == ' ') len--;
        CU_ASSERT_FATAL(n < max && len < 64);
        memcpy(items[n], p, len);
        items[n][len] = '\0';
        n++;
        if (end == NULL) break;
        p = end + 1;
        while (*p == ' ') p++;
    }
    return n;
}

/* One dim or value element: an integer, or a symbol interned in the graph. */
static inline tgc_dim fx_dim(fx *f, const char *text) {
    if (isdigit((unsigned char)text[0]) || text[0] == '-') return tgc_dim_of(strtoll(text, NULL, 10));
    int32_t sym = tgc_graph_symbol(f->g, text, false);
    CU_ASSERT_FATAL(sym >= 0);
    return tgc_dim_sym(sym);
}

static inline tgc_shape fx_shape(fx *f, const char *spec) {
    tgc_shape s = {.rank = TGC_RANK_UNKNOWN};
    if (strcmp(spec, "?") == 0) return s;
    char items[TGC_MAX_RANK][64];
    s.rank = fx_split(spec, items, TGC_MAX_RANK);
    for (int i = 0; i < s.rank; i++) s.dims[i] = fx_dim(f, items[i]);
    return s;
}

static inline tgc_node *fx_node(fx *f, int32_t id) { return &f->g->nodes[id]; }

/* A graph input `name` of dtype and shape; with `value` (not NULL) its
 * compile-time value, as a constant initializer would have. */
static inline int32_t fx_value(fx *f, const char *name, tgc_dtype dt, const char *shape, const char *value) {
    int32_t id;
    CU_ASSERT_FATAL(tgc_graph_add_node(f->g, name, value ? TGC_NODE_CONST : TGC_NODE_INPUT, &id) == TGC_OK);
    tgc_node *n = fx_node(f, id);
    n->pos = (tgc_srcpos){id + 1, 3};
    n->n_outputs = 1;
    n->outputs = tgc_calloc(1, sizeof *n->outputs);
    CU_ASSERT_PTR_NOT_NULL_FATAL(n->outputs);
    n->outputs[0].dtype = dt;
    n->outputs[0].shape = fx_shape(f, shape);
    n->outputs[0].value_len = -1;
    if (value != NULL) {
        char items[TGC_MAX_VALUE_LEN][64];
        tgc_dim v[TGC_MAX_VALUE_LEN];
        int k = fx_split(value, items, TGC_MAX_VALUE_LEN);
        for (int i = 0; i < k; i++) v[i] = fx_dim(f, items[i]);
        CU_ASSERT_FATAL(tgc_info_set_value(&fx_node(f, id)->outputs[0], k, v) == TGC_OK);
    }
    return id;
}

static inline int32_t fx_input(fx *f, const char *name, tgc_dtype dt, const char *shape) {
    return fx_value(f, name, dt, shape, NULL);
}

static inline int32_t fx_find(fx *f, const char *name) {
    for (int32_t i = 0; i < f->g->n_nodes; i++)
        if (strcmp(f->g->nodes[i].name, name) == 0) return i;
    CU_FAIL_FATAL("fx_find: no such node");
    return -1;
}

/* An op node; `inputs` lists node names ("x" is port 0, "x:1" port 1, an
 * empty item an omitted input). Its n_outputs outputs start uninferred. */
static inline int32_t fx_op(fx *f, const char *name, const char *op, const char *inputs, int n_outputs) {
    char items[16][64];
    int k = fx_split(inputs, items, 16);
    tgc_ref refs[16];
    for (int i = 0; i < k; i++) {
        refs[i] = (tgc_ref){-1, 0, {f->g->n_nodes + 1, 20 + i}};
        if (items[i][0] == '\0') continue;
        char *colon = strchr(items[i], ':');
        if (colon != NULL) {
            refs[i].port = atoi(colon + 1);
            *colon = '\0';
        }
        refs[i].node = fx_find(f, items[i]);
    }
    int32_t id;
    CU_ASSERT_FATAL(tgc_graph_add_node(f->g, name, TGC_NODE_OP, &id) == TGC_OK);
    tgc_node *n = fx_node(f, id);
    n->pos = (tgc_srcpos){id + 1, 3};
    n->op = tgc_op_find(op);
    CU_ASSERT_PTR_NOT_NULL_FATAL(n->op);
    n->op_name = tgc_strdup(op);
    n->n_inputs = k;
    n->inputs = tgc_calloc((size_t)k + 1, sizeof *n->inputs);
    CU_ASSERT_FATAL(n->op_name != NULL && n->inputs != NULL);
    if (k > 0) memcpy(n->inputs, refs, (size_t)k * sizeof *refs);
    n->n_outputs = n_outputs;
    n->outputs = tgc_calloc((size_t)n_outputs, sizeof *n->outputs);
    CU_ASSERT_PTR_NOT_NULL_FATAL(n->outputs);
    for (int i = 0; i < n_outputs; i++) {
        n->outputs[i].dtype = TGC_DTYPE_INVALID;
        n->outputs[i].value_len = -1;
    }
    return id;
}

/* Appends a zeroed attribute `name` of `type` to node id and returns it. */
static inline tgc_attr *fx_attr(fx *f, int32_t id, const char *name, tgc_attr_type type) {
    tgc_node *n = fx_node(f, id);
    tgc_attr *attrs = tgc_realloc(n->attrs, ((size_t)n->n_attrs + 1) * sizeof *attrs);
    CU_ASSERT_PTR_NOT_NULL_FATAL(attrs);
    n->attrs = attrs;
    tgc_attr *a = &attrs[n->n_attrs++];
    memset(a, 0, sizeof *a);
    a->name = tgc_strdup(name);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a->name);
    a->type = type;
    return a;
}

static inline void fx_attr_int(fx *f, int32_t id, const char *name, int64_t v) {
    fx_attr(f, id, name, TGC_ATTR_INT)->i = v;
}

static inline void fx_attr_float(fx *f, int32_t id, const char *name, double v) {
    fx_attr(f, id, name, TGC_ATTR_FLOAT)->f = v;
}

static inline void fx_attr_string(fx *f, int32_t id, const char *name, const char *s) {
    tgc_attr *a = fx_attr(f, id, name, TGC_ATTR_STRING);
    a->s = tgc_strdup(s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a->s);
}

/* An INTS attribute from "1, -1, 2" (or FLOATS with `floats`). */
static inline void fx_attr_list(fx *f, int32_t id, const char *name, const char *list, bool floats) {
    char items[TGC_MAX_VALUE_LEN][64];
    int k = fx_split(list, items, TGC_MAX_VALUE_LEN);
    tgc_attr *a = fx_attr(f, id, name, floats ? TGC_ATTR_FLOATS : TGC_ATTR_INTS);
    a->n = (size_t)k;
    if (floats) {
        a->floats = tgc_calloc((size_t)k + 1, sizeof *a->floats);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a->floats);
        for (int i = 0; i < k; i++) a->floats[i] = strtod(items[i], NULL);
    } else {
        a->ints = tgc_calloc((size_t)k + 1, sizeof *a->ints);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a->ints);
        for (int i = 0; i < k; i++) a->ints[i] = strtoll(items[i], NULL, 10);
    }
}

static inline void fx_attr_ints(fx *f, int32_t id, const char *name, const char *list) {
    fx_attr_list(f, id, name, list, false);
}

/* A TENSOR attribute of dtype and concrete shape with `values` (int32,
 * int64 or float32 elements). */
static inline void fx_attr_tensor(fx *f, int32_t id, const char *name, tgc_dtype dt, const char *shape,
                           const char *values) {
    tgc_attr *a = fx_attr(f, id, name, TGC_ATTR_TENSOR);
    tgc_const *k = tgc_calloc(1, sizeof *k);
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    a->tensor = k;
    k->dtype = dt;
    k->shape = fx_shape(f, shape);
    char items[TGC_MAX_VALUE_LEN][64];
    int n = fx_split(values, items, TGC_MAX_VALUE_LEN);
    CU_ASSERT_FATAL(tgc_shape_numel(&k->shape) == n);
    k->nbytes = (size_t)n * tgc_dtype_size(dt);
    k->data = n > 0 ? tgc_calloc((size_t)n, tgc_dtype_size(dt)) : NULL;
    for (int i = 0; i < n; i++) {
        if (dt == TGC_INT64) ((int64_t *)k->data)[i] = strtoll(items[i], NULL, 10);
        else if (dt == TGC_INT32) ((int32_t *)k->data)[i] = (int32_t)strtol(items[i], NULL, 10);
        else if (dt == TGC_FLOAT32) ((float *)k->data)[i] = strtof(items[i], NULL);
        else CU_FAIL_FATAL("fx_attr_tensor: unsupported dtype");
    }
}

static inline tgc_status fx_infer(fx *f, int32_t id) {
    tgc_infer_ctx c = {.graph = f->g, .node = fx_node(f, id), .diags = f->d};
    return c.node->op->infer(&c);
}

/* Writes dims (or value elements) as "[N, 3]". */
static inline const char *fx_dims_str(fx *f, const tgc_dim *d, int n, char *buf, size_t size) {
    size_t used = (size_t)snprintf(buf, size, "[");
    for (int i = 0; i < n && used < size; i++) {
        if (tgc_dim_known(d[i]))
            used += (size_t)snprintf(buf + used, size - used, "%s%lld", i ? ", " : "", (long long)d[i].v);
        else
            used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "", f->g->symbols[d[i].sym]);
    }
    if (used < size) snprintf(buf + used, size - used, "]");
    return buf;
}

/* Checks output `port` of node id: dtype and shape ("[N, 3]", "?" for an
 * unknown rank). */
static inline void fx_check_out(fx *f, int32_t id, int port, tgc_dtype dt, const char *shape, const char *file,
                         unsigned line) {
    const tgc_tensor_info *o = &fx_node(f, id)->outputs[port];
    char got[256];
    if (o->shape.rank < 0) snprintf(got, sizeof got, "?");
    else fx_dims_str(f, o->shape.dims, o->shape.rank, got, sizeof got);
    bool ok = o->dtype == dt && strcmp(got, shape) == 0;
    if (!ok)
        fprintf(stderr, "\n%s:%u: %s:%d is %s %s, expected %s %s\n", file, line, fx_node(f, id)->name, port,
                tgc_dtype_name(o->dtype), got, tgc_dtype_name(dt), shape);
    CU_assertImplementation(ok, line, "output dtype and shape", file, "", CU_FALSE);
}

/* Checks output `port`'s compile-time value ("[N, 3]", or "none"). */
static inline void fx_check_value(fx *f, int32_t id, int port, const char *value, const char *file, unsigned line) {
    const tgc_tensor_info *o = &fx_node(f, id)->outputs[port];
    char got[512];
    if (o->value_len < 0) snprintf(got, sizeof got, "none");
    else fx_dims_str(f, o->value, o->value_len, got, sizeof got);
    bool ok = strcmp(got, value) == 0;
    if (!ok)
        fprintf(stderr, "\n%s:%u: %s:%d has value %s, expected %s\n", file, line, fx_node(f, id)->name, port,
                got, value);
    CU_assertImplementation(ok, line, "output value", file, "", CU_FALSE);
}

/* Checks that inference failed with `rule`, with a message in
 * "node 'NAME' (OP): ..." form that contains `fragment`, placed in
 * model.yaml at the node (at == -1) or at its input `at`. */
static inline void fx_check_error(fx *f, tgc_status st, int32_t id, int at, const char *rule, const char *fragment,
                           const char *file, unsigned line) {
    const tgc_node *n = fx_node(f, id);
    size_t count = tgc_diags_count(f->d);
    bool ok = st == TGC_ERR_INVALID && count > 0;
    char prefix[160];
    snprintf(prefix, sizeof prefix, "node '%s' (%s): ", n->name, n->op->name);
    if (ok) {
        size_t i = count - 1;
        const char *msg = tgc_diag_message(f->d, i);
        int want_line = at < 0 ? n->pos.line : n->inputs[at].pos.line;
        int want_col = at < 0 ? n->pos.col : n->inputs[at].pos.col;
        ok = strcmp(tgc_diag_rule(f->d, i), rule) == 0 && strncmp(msg, prefix, strlen(prefix)) == 0 &&
             strstr(msg, fragment) != NULL && strcmp(tgc_diag_file(f->d, i), "model.yaml") == 0 &&
             tgc_diag_line(f->d, i) == want_line && tgc_diag_column(f->d, i) == want_col &&
             tgc_diag_severity(f->d, i) == TGC_SEV_ERROR;
        if (!ok)
            fprintf(stderr, "\n%s:%u: got [%s] at %d:%d \"%s\"; expected [%s] at %d:%d containing \"%s\"\n",
                    file, line, tgc_diag_rule(f->d, i), tgc_diag_line(f->d, i), tgc_diag_column(f->d, i), msg,
                    rule, want_line, want_col, fragment);
    } else {
        fprintf(stderr, "\n%s:%u: %s: expected an error [%s], got status %d with %zu messages\n", file, line,
                n->name, rule, (int)st, count);
    }
    CU_assertImplementation(ok, line, "inference error", file, "", CU_FALSE);
}

#define FX_OUT(f, id, port, dt, shape) fx_check_out((f), (id), (port), (dt), (shape), __FILE__, __LINE__)
#define FX_VALUE(f, id, port, value) fx_check_value((f), (id), (port), (value), __FILE__, __LINE__)
/* Runs inference on node id and checks that it succeeds. */
#define FX_OK(f, id) CU_ASSERT_EQUAL(fx_infer((f), (id)), TGC_OK)
/* Runs inference on node id and checks the error it reports. */
#define FX_FAILS(f, id, at, rule, fragment) \
    fx_check_error((f), fx_infer((f), (id)), (id), (at), (rule), (fragment), __FILE__, __LINE__)

#endif
