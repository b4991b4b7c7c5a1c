/* Tensor handles beyond the host: where a handle's data lives, reading it
 * back from any device, and handles over memory the caller keeps (a NumPy
 * array's, read in place). */
#include "executor/session.h"

#include "support/alloc.h"

#include <string.h>

const char *tgc_tensor_device(const tgc_tensor *t) {
    return t != NULL && t->v.buf != NULL ? t->v.buf->device->name : "host";
}

tgc_status tgc_tensor_read(const tgc_tensor *t, void *dst, size_t nbytes) {
    if (t == NULL || t->v.dtype == TGC_STRING || nbytes != tgc_value_nbytes(&t->v) || (dst == NULL && nbytes > 0))
        return TGC_ERR_INVALID;
    if (nbytes == 0) return TGC_OK;
    tgc_buffer *b = t->v.buf;
    const void *host = tgc_buffer_host_ptr(b);
    if (host != NULL) {
        memcpy(dst, host, nbytes);
        return TGC_OK;
    }
    /* The device's queue is in order: the read waits for the kernels that wrote it. */
    return b->device->ops->copy_to_host(b->device, dst, b->mem, 0, nbytes) == TGC_OK ? TGC_OK : TGC_ERR_RUNTIME;
}

tgc_status tgc_tensor_create_borrowed(tgc_dtype dtype, int rank, const int64_t *dims, void *data,
                                      void (*release)(void *ctx), void *ctx, tgc_tensor **out) {
    *out = NULL;
    size_t esize = tgc_dtype_size(dtype);
    if (esize == 0 || dtype == TGC_STRING || rank < 0 || rank > TGC_MAX_TENSOR_RANK || (rank > 0 && dims == NULL))
        return TGC_ERR_INVALID;
    tgc_value v = {.dtype = dtype, .rank = rank};
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0) return TGC_ERR_INVALID;
        v.dims[i] = dims[i];
    }
    size_t nbytes = tgc_value_nbytes(&v);
    if (nbytes == SIZE_MAX || (nbytes > 0 && (data == NULL || (uintptr_t)data % esize != 0))) return TGC_ERR_INVALID;
    tgc_status s = tgc_buffer_wrap_host(tgc_host_device(), data, nbytes, release, ctx, &v.buf);
    if (s != TGC_OK) return s;
    s = tgc_tensor_wrap(&v, out);
    if (s != TGC_OK) { /* the caller keeps its memory: no release */
        v.buf->foreign_release = NULL;
        tgc_buffer_release(v.buf);
    }
    return s;
}
