/* Sequences and optionals as public handles (tgc.h): a handle whose value
 * is a list buffer (devices/device.h) of its elements' values. */
#include "executor/session.h"

#include "support/alloc.h"

tgc_tensor_kind tgc_tensor_kind_of(const tgc_tensor *t) {
    if (!tgc_value_is_list(&t->v)) return TGC_TENSOR_PLAIN;
    return t->v.buf->list == TGC_KIND_SEQUENCE ? TGC_TENSOR_SEQUENCE : TGC_TENSOR_OPTIONAL;
}

/* A new handle of a list of kind `kind` holding n values (each retained). */
static tgc_status wrap_list(uint8_t kind, tgc_dtype dtype, int n, const tgc_value *const *vals, tgc_tensor **out) {
    *out = NULL;
    tgc_value v = {.dtype = dtype};
    if (tgc_buffer_alloc_list(tgc_host_device(), (size_t)n, kind, &v.buf) != TGC_OK) return TGC_ERR_NOMEM;
    tgc_value *slots = tgc_buffer_list_slots(v.buf);
    for (int i = 0; i < n; i++) {
        slots[i] = *vals[i];
        tgc_buffer_retain(slots[i].buf);
    }
    tgc_status s = tgc_tensor_wrap(&v, out);
    if (s != TGC_OK) tgc_buffer_release(v.buf);
    return s;
}

tgc_status tgc_sequence_create(tgc_dtype dtype, int n, tgc_tensor *const *elems, tgc_tensor **out) {
    *out = NULL;
    if (n < 0 || tgc_dtype_size(dtype) == 0) return TGC_ERR_INVALID;
    const tgc_value *small[16];
    const tgc_value **vals = n <= 16 ? small : tgc_malloc((size_t)n * sizeof *vals);
    if (vals == NULL) return TGC_ERR_NOMEM;
    tgc_status s = TGC_OK;
    for (int i = 0; i < n && s == TGC_OK; i++) {
        const tgc_value *v = &elems[i]->v;
        if (v->dtype != dtype || tgc_value_is_list(v) || v->buf == NULL || !tgc_device_host_memory(v->buf->device))
            s = TGC_ERR_INVALID;
        vals[i] = v;
    }
    if (s == TGC_OK) s = wrap_list(TGC_KIND_SEQUENCE, dtype, n, vals, out);
    if (vals != small) tgc_free(vals);
    return s;
}

tgc_status tgc_optional_create(tgc_dtype dtype, tgc_tensor *elem, tgc_tensor **out) {
    *out = NULL;
    if (tgc_dtype_size(dtype) == 0) return TGC_ERR_INVALID;
    if (elem != NULL && (elem->v.dtype != dtype || tgc_tensor_kind_of(elem) == TGC_TENSOR_OPTIONAL))
        return TGC_ERR_INVALID;
    const tgc_value *v = elem != NULL ? &elem->v : NULL;
    return wrap_list(TGC_KIND_OPTIONAL, dtype, elem != NULL ? 1 : 0, &v, out);
}

int64_t tgc_tensor_list_length(const tgc_tensor *t) {
    return tgc_value_is_list(&t->v) ? (int64_t)t->v.buf->n_values : -1;
}

tgc_tensor *tgc_tensor_list_at(const tgc_tensor *t, int64_t i) {
    if (i < 0 || i >= tgc_tensor_list_length(t)) return NULL;
    tgc_value v = ((const tgc_value *)tgc_buffer_list_slots(t->v.buf))[i];
    tgc_buffer_retain(v.buf);
    tgc_tensor *out = NULL;
    if (tgc_tensor_wrap(&v, &out) != TGC_OK) tgc_buffer_release(v.buf);
    return out;
}

/* Value v with its data in host memory (nested lists too) into *out: v's
 * own buffer retained when it is there, else a copy. Depth-bounded: lists
 * nest at most two deep (an optional of a sequence). */
static tgc_status to_host(const tgc_value *v, tgc_value *out, int depth) {
    *out = *v;
    out->buf = NULL;
    if (v->buf == NULL) return TGC_OK;
    if (!tgc_value_is_list(v)) {
        if (tgc_device_host_memory(v->buf->device)) {
            out->buf = tgc_buffer_retain(v->buf);
            return TGC_OK;
        }
        return tgc_buffer_copy(v->buf, tgc_value_nbytes(v), tgc_host_device(), &out->buf);
    }
    if (depth > 2) return TGC_ERR_RUNTIME;
    const tgc_value *from = tgc_buffer_list_slots(v->buf);
    tgc_status s = tgc_buffer_alloc_list(tgc_host_device(), v->buf->n_values, v->buf->list, &out->buf);
    tgc_value *slots = s == TGC_OK ? tgc_buffer_list_slots(out->buf) : NULL;
    for (size_t i = 0; s == TGC_OK && i < v->buf->n_values; i++) s = to_host(&from[i], &slots[i], depth + 1);
    if (s != TGC_OK) {
        tgc_buffer_release(out->buf);
        out->buf = NULL;
    }
    return s;
}

tgc_status tgc_tensor_of_list(const tgc_value *v, tgc_tensor **out) {
    *out = NULL;
    tgc_value host;
    tgc_status s = to_host(v, &host, 0);
    if (s != TGC_OK) return s;
    s = tgc_tensor_wrap(&host, out);
    if (s != TGC_OK) tgc_buffer_release(host.buf);
    return s;
}
