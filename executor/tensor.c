/* Public tensor handles over host-device buffers, and .npy in and out. */
#include "executor/session.h"

#include "graph/npy.h"
#include "support/alloc.h"
#include "support/diag.h"

#include <string.h>

tgc_status tgc_tensor_wrap(const tgc_value *v, tgc_tensor **out) {
    tgc_tensor *t = tgc_malloc(sizeof *t);
    if (t == NULL) return TGC_ERR_NOMEM;
    atomic_init(&t->refs, 1);
    t->v = *v;
    *out = t;
    return TGC_OK;
}

tgc_status tgc_tensor_create(tgc_dtype dtype, int rank, const int64_t *dims, const void *data, tgc_tensor **out) {
    *out = NULL;
    if (tgc_dtype_size(dtype) == 0 || rank < 0 || rank > TGC_MAX_TENSOR_RANK) return TGC_ERR_INVALID;
    tgc_value v = {.dtype = dtype, .rank = rank};
    int64_t numel = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0 || (dims[i] > 0 && numel > INT64_MAX / 16 / dims[i])) return TGC_ERR_INVALID;
        v.dims[i] = dims[i];
        numel *= dims[i];
    }
    tgc_device *host = tgc_host_device();
    if (host == NULL) return TGC_ERR_NOMEM;
    size_t nbytes = tgc_value_nbytes(&v);
    if (tgc_buffer_alloc(host, nbytes, &v.buf) != TGC_OK) return TGC_ERR_NOMEM;
    void *p = tgc_buffer_host_ptr(v.buf);
    if (nbytes > 0) {
        if (data != NULL) memcpy(p, data, nbytes);
        else memset(p, 0, nbytes);
    }
    tgc_status s = tgc_tensor_wrap(&v, out);
    if (s != TGC_OK) tgc_buffer_release(v.buf);
    return s;
}

tgc_status tgc_tensor_load_npy(const char *path, tgc_diags *diags, tgc_tensor **out) {
    *out = NULL;
    tgc_npy a;
    char err[256];
    tgc_status s = tgc_npy_read_file(path, &a, err, sizeof err);
    if (s != TGC_OK) {
        tgc_diag_add(diags, TGC_SEV_ERROR, path, (tgc_srcpos){0, 0}, "bad-npy", "%s", err);
        return s;
    }
    s = tgc_tensor_create(a.dtype, a.rank, a.dims, a.data, out);
    tgc_npy_release(&a);
    return s;
}

tgc_status tgc_tensor_save_npy(const tgc_tensor *t, const char *path, tgc_diags *diags) {
    tgc_npy a = {.dtype = t->v.dtype, .rank = t->v.rank, .nbytes = tgc_value_nbytes(&t->v)};
    memcpy(a.dims, t->v.dims, sizeof a.dims);
    a.data = tgc_buffer_host_ptr(t->v.buf);
    char err[256];
    tgc_status s = tgc_npy_write_file(path, &a, err, sizeof err);
    if (s != TGC_OK) tgc_diag_add(diags, TGC_SEV_ERROR, path, (tgc_srcpos){0, 0}, "io", "%s", err);
    return s;
}

tgc_tensor *tgc_tensor_retain(tgc_tensor *t) {
    if (t != NULL) atomic_fetch_add(&t->refs, 1);
    return t;
}

void tgc_tensor_release(tgc_tensor *t) {
    if (t == NULL || atomic_fetch_sub(&t->refs, 1) != 1) return;
    tgc_buffer_release(t->v.buf);
    tgc_free(t);
}

tgc_dtype tgc_tensor_dtype(const tgc_tensor *t) { return t->v.dtype; }
int tgc_tensor_rank(const tgc_tensor *t) { return t->v.rank; }
const int64_t *tgc_tensor_dims(const tgc_tensor *t) { return t->v.dims; }
int64_t tgc_tensor_numel(const tgc_tensor *t) { return tgc_value_numel(&t->v); }
const void *tgc_tensor_data(const tgc_tensor *t) { return tgc_buffer_host_ptr(t->v.buf); }
