/* What a node's measured time is keyed by (cost_impl.h): everything its
 * kernel's time can depend on and nothing else (not its name, not its
 * place in the graph), so a model's 60 convolutions of 20 kinds are
 * measured 20 times, and two models share figures.
 *
 *     Conv dilations=i1,1 group=i1 kernel_shape=i3,3 ...|float32[1,64,56,56]|float32[64,64,3,3]c|float32[64]c
 *
 * Attributes sorted by name, each with its type's letter; an input as
 * dtype and dims (symbolic dims as 1), "c" when it is an initializer (its
 * kernel may keep a layout of it across runs), and the values of integer
 * inputs the time may depend on (a Reshape's shape, Slice's starts,
 * Gather's indices: inline up to 16, else a hash). A tensor attribute is
 * its dtype, dims and a hash of its bytes. Bytes outside printable ASCII,
 * spaces, '%' and '|' are written %XX, so a key is one line. */
#include "placer/cost_impl.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct key_writer {
    char *buf;
    size_t size, len;
    bool ok;
} key_writer;

static void put(key_writer *w, const char *fmt, ...) TGC_PRINTF(2, 3);
static void put(key_writer *w, const char *fmt, ...) {
    if (!w->ok) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(w->buf + w->len, w->size - w->len, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= w->size - w->len) w->ok = false;
    else w->len += (size_t)k;
}

static void put_text(key_writer *w, const char *s) {
    for (const unsigned char *p = (const unsigned char *)(s != NULL ? s : ""); *p && w->ok; p++) {
        if (*p > ' ' && *p < 0x7f && *p != '%' && *p != '|') put(w, "%c", *p);
        else put(w, "%%%02X", *p);
    }
}

static uint64_t fnv(const void *data, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ ((const unsigned char *)data)[i]) * 1099511628211ull;
    return h;
}

static void put_attr(key_writer *w, const tgc_attr *a) {
    put(w, " ");
    put_text(w, a->name);
    switch (a->type) {
    case TGC_ATTR_INT: put(w, "=i%" PRId64, a->i); break;
    case TGC_ATTR_FLOAT: put(w, "=f%.9g", a->f); break;
    case TGC_ATTR_STRING: put(w, "=s"); put_text(w, a->s); break;
    case TGC_ATTR_INTS:
        put(w, "=I");
        for (size_t k = 0; k < a->n; k++) put(w, k ? ",%" PRId64 : "%" PRId64, a->ints[k]);
        break;
    case TGC_ATTR_FLOATS:
        put(w, "=F");
        for (size_t k = 0; k < a->n; k++) put(w, k ? ",%.9g" : "%.9g", a->floats[k]);
        break;
    case TGC_ATTR_STRINGS:
        put(w, "=S");
        for (size_t k = 0; k < a->n; k++) {
            if (k) put(w, ",");
            put_text(w, a->strings[k]);
        }
        break;
    case TGC_ATTR_TENSOR: {
        const tgc_const *c = a->tensor;
        put(w, "=T%s[", tgc_dtype_name(c->dtype));
        for (int r = 0; r < c->shape.rank; r++) put(w, r ? ",%" PRId64 : "%" PRId64, c->shape.dims[r].v);
        put(w, "]#%016" PRIx64, c->dtype == TGC_STRING || c->data == NULL ? 0 : fnv(c->data, c->nbytes));
        break;
    }
    case TGC_ATTR_GRAPH: w->ok = false; break; /* control flow: its time is its body's */
    }
}

static bool is_int(tgc_dtype t) { return t == TGC_INT64 || t == TGC_INT32; }

/* Input ref of n: dtype, dims, initializer mark, and integer values. */
static void put_input(key_writer *w, const tgc_graph *g, tgc_ref ref) {
    put(w, "|");
    if (ref.node < 0) return; /* omitted */
    const tgc_tensor_info *t = tgc_graph_ref_info(g, ref);
    if (t->kind != TGC_KIND_TENSOR || t->shape.rank == TGC_RANK_UNKNOWN || t->dtype == TGC_DTYPE_INVALID) {
        w->ok = false;
        return;
    }
    put(w, "%s[", tgc_dtype_name(t->dtype));
    for (int r = 0; r < t->shape.rank; r++)
        put(w, r ? ",%" PRId64 : "%" PRId64, tgc_dim_known(t->shape.dims[r]) ? t->shape.dims[r].v : 1);
    put(w, "]");
    const tgc_node *src = &g->nodes[ref.node];
    if (src->kind == TGC_NODE_CONST) {
        put(w, "c");
        const tgc_const *c = src->data;
        if (is_int(c->dtype) && c->data != NULL) {
            size_t count = c->nbytes / tgc_dtype_size(c->dtype);
            if (count > 16) {
                put(w, "#%016" PRIx64, fnv(c->data, c->nbytes));
            } else {
                put(w, "=");
                for (size_t k = 0; k < count; k++) {
                    int64_t v = c->dtype == TGC_INT64 ? ((const int64_t *)c->data)[k] : ((const int32_t *)c->data)[k];
                    put(w, k ? ",%" PRId64 : "%" PRId64, v);
                }
            }
        }
    } else if (is_int(t->dtype) && t->value_len >= 0) {
        put(w, "=");
        for (int k = 0; k < t->value_len; k++)
            put(w, k ? ",%" PRId64 : "%" PRId64, tgc_dim_known(t->value[k]) ? t->value[k].v : 1);
    }
}

bool tgc_cost_key(const tgc_graph *g, int32_t id, char *buf, size_t size) {
    const tgc_node *n = &g->nodes[id];
    key_writer w = {.buf = buf, .size = size, .ok = size > 0};
    if (size > 0) buf[0] = '\0';
    if (n->kind != TGC_NODE_OP) return false;
    put_text(&w, n->op_name);
    /* attributes in name order (a node has few: selection, each pass the next name up) */
    const char *last = NULL;
    for (int done = 0; done < n->n_attrs && w.ok; done++) {
        int best = -1;
        for (int i = 0; i < n->n_attrs; i++) {
            const char *s = n->attrs[i].name;
            if (last != NULL && strcmp(s, last) <= 0) continue;
            if (best < 0 || strcmp(s, n->attrs[best].name) < 0) best = i;
        }
        if (best < 0) break;
        put_attr(&w, &n->attrs[best]);
        last = n->attrs[best].name;
    }
    for (int i = 0; i < n->n_inputs && w.ok; i++) put_input(&w, g, n->inputs[i]);
    if (!w.ok && size > 0) buf[0] = '\0';
    return w.ok;
}
