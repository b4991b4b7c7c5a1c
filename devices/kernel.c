/* The helpers kernels use. Kernel defs live in devices/<kind>/kernels_*.c
 * as {.op = NULL}-terminated arrays, one per family, listed by their
 * backend's table (devices/<kind>/<kind>_backend.c); the index over them
 * is kernel_index.c. */
#include "devices/kernel.h"

#include "support/checked.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int64_t tgc_value_numel(const tgc_value *v) {
    int64_t n;
    return tgc_checked_numel(v->rank, v->dims, &n) ? n : -1;
}

size_t tgc_value_nbytes(const tgc_value *v) {
    if (v->buf != NULL && v->buf->list) return v->buf->nbytes; /* a sequence's or an optional's slots */
    size_t n;
    return tgc_checked_dims_nbytes(v->rank, v->dims, tgc_dtype_size(v->dtype), &n) ? n : SIZE_MAX;
}

const void *tgc_kernel_in_ptr(const tgc_kernel_ctx *c, int i) {
    return i < c->n_inputs ? tgc_buffer_host_ptr(c->inputs[i].buf) : NULL;
}

void *tgc_kernel_out_ptr(const tgc_kernel_ctx *c, int i) { return tgc_buffer_host_ptr(c->outputs[i].buf); }

int64_t tgc_kernel_attr_int(const tgc_kernel_ctx *c, const char *name, int64_t dflt) {
    const tgc_attr *a = tgc_node_attr(c->node, name);
    return a != NULL && a->type == TGC_ATTR_INT ? a->i : dflt;
}

double tgc_kernel_attr_float(const tgc_kernel_ctx *c, const char *name, double dflt) {
    const tgc_attr *a = tgc_node_attr(c->node, name);
    return a != NULL && a->type == TGC_ATTR_FLOAT ? a->f : dflt;
}

const char *tgc_kernel_attr_string(const tgc_kernel_ctx *c, const char *name, const char *dflt) {
    const tgc_attr *a = tgc_node_attr(c->node, name);
    return a != NULL && a->type == TGC_ATTR_STRING ? a->s : dflt;
}

const int64_t *tgc_kernel_attr_ints(const tgc_kernel_ctx *c, const char *name, size_t *n) {
    const tgc_attr *a = tgc_node_attr(c->node, name);
    *n = a != NULL && a->type == TGC_ATTR_INTS ? a->n : 0;
    return *n ? a->ints : NULL;
}

tgc_status tgc_kernel_alloc_output(tgc_kernel_ctx *c, int i, int rank, const int64_t *dims) {
    if (i < 0 || i >= c->n_outputs || rank < 0 || rank > TGC_MAX_RANK || c->outputs[i].buf != NULL) {
        tgc_kernel_fail(c, "output %d cannot be allocated (rank %d%s)", i, rank,
                        i >= 0 && i < c->n_outputs && c->outputs[i].buf != NULL ? ", already allocated" : "");
        return TGC_ERR_INVALID;
    }
    tgc_value *v = &c->outputs[i];
    v->rank = rank;
    for (int d = 0; d < rank; d++) {
        if (dims[d] < 0) {
            tgc_kernel_fail(c, "output %d: dim %d is negative (%lld)", i, d, (long long)dims[d]);
            return TGC_ERR_INVALID;
        }
        v->dims[d] = dims[d];
    }
    size_t nbytes = tgc_value_nbytes(v);
    tgc_device *at = tgc_kernel_host_output(c->def, i) ? tgc_host_device() : c->device;
    if (tgc_buffer_alloc_typed(at, v->dtype, nbytes, &v->buf) != TGC_OK) {
        v->buf = NULL;
        if (nbytes == SIZE_MAX) tgc_kernel_fail(c, "output %d is too large", i);
        else tgc_kernel_fail(c, "out of memory on %s allocating %zu bytes for output %d", at->name, nbytes, i);
        return TGC_ERR_NOMEM;
    }
    return TGC_OK;
}

tgc_status tgc_kernel_set_output(tgc_kernel_ctx *c, int i, const tgc_value *v) {
    if (i < 0 || i >= c->n_outputs || c->outputs[i].buf != NULL || v->buf == NULL) {
        tgc_kernel_fail(c, "output %d cannot be set", i);
        return TGC_ERR_INVALID;
    }
    c->outputs[i] = *v;
    tgc_buffer_retain(v->buf);
    return TGC_OK;
}

tgc_value *tgc_kernel_alloc_list(tgc_kernel_ctx *c, int i, uint8_t kind, size_t n, tgc_dtype elem) {
    if (i < 0 || i >= c->n_outputs || c->outputs[i].buf != NULL) {
        tgc_kernel_fail(c, "output %d cannot be allocated", i);
        return NULL;
    }
    tgc_value *v = &c->outputs[i];
    *v = (tgc_value){.dtype = elem};
    if (tgc_buffer_alloc_list(tgc_host_device(), n, kind, &v->buf) != TGC_OK) {
        v->buf = NULL;
        tgc_kernel_fail(c, "out of memory allocating a %s of %zu values", kind == TGC_KIND_SEQUENCE ? "sequence"
                                                                          : "optional", n);
        return NULL;
    }
    tgc_value *slots = tgc_buffer_list_slots(v->buf);
    return slots != NULL ? slots : (tgc_value *)(void *)v; /* n == 0: no slots, but not NULL */
}

/* Writes the reason into c->error; returns `status`. */
static tgc_status fail_with(tgc_kernel_ctx *c, tgc_status status, const char *fmt, va_list ap) {
    if (c->error != NULL && c->error_size > 0) vsnprintf(c->error, c->error_size, fmt, ap);
    return status;
}

tgc_status tgc_kernel_fail(tgc_kernel_ctx *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    tgc_status s = fail_with(c, TGC_ERR_RUNTIME, fmt, ap);
    va_end(ap);
    return s;
}

tgc_status tgc_kernel_fail_nomem(tgc_kernel_ctx *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    tgc_status s = fail_with(c, TGC_ERR_NOMEM, fmt, ap);
    va_end(ap);
    return s;
}
