/* Public tensor handles over host-device buffers, .npy in and out, and the
 * memory figures of the public API: live handles and their bytes, device
 * memory, and the host device's trace (used and peak since a reset). */
#include "executor/session.h"

#include "executor/memory_tracer.h"
#include "executor/scope.h"
#include "graph/npy.h"
#include "support/alloc.h"
#include "support/diag.h"
#include "support/half.h"
#include "support/string_slots.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Every handle is born here: counted on its buffer's device (which it
 * holds open; the process's figures are the devices' sums,
 * tgc_live_handles), and linked into the calling thread's innermost scope
 * when one is open. */
tgc_status tgc_tensor_wrap(const tgc_value *v, tgc_tensor **out) {
    tgc_tensor *t = tgc_malloc(sizeof *t);
    if (t == NULL) return TGC_ERR_NOMEM;
    atomic_init(&t->refs, 1);
    t->v = *v;
    long long bytes = (long long)tgc_value_nbytes(&t->v);
    if (t->v.buf != NULL) { /* the device outlives the handles on it (devices/device_registry.h) */
        tgc_device *d = tgc_device_retain(t->v.buf->device);
        atomic_fetch_add_explicit(&d->live_handles, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&d->live_handle_bytes, bytes, memory_order_relaxed);
    }
    tgc_scope_adopt(t);
    *out = t;
    return TGC_OK;
}

tgc_status tgc_tensor_alloc(tgc_dtype dtype, int rank, const int64_t *dims, tgc_tensor **out) {
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
    if (tgc_buffer_alloc_typed(host, dtype, tgc_value_nbytes(&v), &v.buf) != TGC_OK) return TGC_ERR_NOMEM;
    tgc_status s = tgc_tensor_wrap(&v, out);
    if (s != TGC_OK) tgc_buffer_release(v.buf);
    return s;
}

tgc_status tgc_tensor_create(tgc_dtype dtype, int rank, const int64_t *dims, const void *data, tgc_tensor **out) {
    tgc_status s = tgc_tensor_alloc(dtype, rank, dims, out);
    if (s != TGC_OK) return s;
    void *p = tgc_buffer_host_ptr((*out)->v.buf);
    size_t nbytes = tgc_value_nbytes(&(*out)->v);
    if (nbytes > 0 && dtype == TGC_STRING) { /* slots start NULL (""); each string copied */
        if (data != NULL) s = tgc_string_slots_copy(p, data, nbytes / sizeof(char *));
    } else if (nbytes > 0) {
        if (data != NULL) memcpy(p, data, nbytes);
        else memset(p, 0, nbytes);
    }
    if (s != TGC_OK) {
        tgc_tensor_release(*out);
        *out = NULL;
    }
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
    if (tgc_value_is_list(&t->v)) {
        tgc_diag_error(diags, path, (tgc_srcpos){0, 0}, "bad-npy",
                       "a sequence or an optional is no array: save its elements one by one");
        return TGC_ERR_INVALID;
    }
    tgc_npy a = {.dtype = t->v.dtype, .rank = t->v.rank, .nbytes = tgc_value_nbytes(&t->v)};
    memcpy(a.dims, t->v.dims, sizeof a.dims);
    a.data = tgc_buffer_host_ptr(t->v.buf);
    float *wide = NULL;
    if (a.dtype == TGC_BFLOAT16) { /* no NumPy dtype: widened to float32, exactly */
        int64_t n = tgc_value_numel(&t->v);
        wide = tgc_malloc(n > 0 ? (size_t)n * sizeof *wide : 1);
        if (wide == NULL) return TGC_ERR_NOMEM;
        for (int64_t i = 0; i < n; i++) wide[i] = tgc_bf16_to_float(((const uint16_t *)a.data)[i]);
        a = (tgc_npy){.dtype = TGC_FLOAT32, .rank = a.rank, .nbytes = (size_t)n * sizeof *wide, .data = wide};
        memcpy(a.dims, t->v.dims, sizeof a.dims);
    }
    char err[256];
    tgc_status s = tgc_npy_write_file(path, &a, err, sizeof err);
    tgc_free(wide);
    if (s != TGC_OK) tgc_diag_add(diags, TGC_SEV_ERROR, path, (tgc_srcpos){0, 0}, "io", "%s", err);
    return s;
}

tgc_tensor *tgc_tensor_retain(tgc_tensor *t) {
    if (t != NULL) atomic_fetch_add(&t->refs, 1);
    return t;
}

/* A release of a handle that a scope holds gives up the scope's reference:
 * out of the scope first, so its end does not drop it again. */
void tgc_tensor_release(tgc_tensor *t) {
    if (t == NULL) return;
    tgc_scope_forget(t);
    if (atomic_fetch_sub(&t->refs, 1) != 1) return;
    long long bytes = (long long)tgc_value_nbytes(&t->v);
    tgc_device *d = t->v.buf != NULL ? t->v.buf->device : NULL;
    tgc_buffer_release(t->v.buf);
    if (d != NULL) {
        atomic_fetch_sub_explicit(&d->live_handles, 1, memory_order_relaxed);
        atomic_fetch_sub_explicit(&d->live_handle_bytes, bytes, memory_order_relaxed);
        tgc_device_release(d);
    }
    tgc_free(t);
}

tgc_dtype tgc_tensor_dtype(const tgc_tensor *t) { return t->v.dtype; }
int tgc_tensor_rank(const tgc_tensor *t) { return t->v.rank; }
const int64_t *tgc_tensor_dims(const tgc_tensor *t) { return t->v.dims; }
int64_t tgc_tensor_numel(const tgc_tensor *t) { return tgc_value_is_list(&t->v) ? 0 : tgc_value_numel(&t->v); }
const void *tgc_tensor_data(const tgc_tensor *t) {
    return tgc_value_is_list(&t->v) ? NULL : tgc_buffer_host_ptr(t->v.buf);
}

const char *tgc_tensor_string(const tgc_tensor *t, int64_t i) {
    if (t == NULL || t->v.dtype != TGC_STRING || tgc_value_is_list(&t->v) || i < 0 || i >= tgc_value_numel(&t->v))
        return NULL;
    return tgc_string_slot_get(tgc_buffer_host_ptr(t->v.buf), (size_t)i);
}

/* ---- Memory figures ---------------------------------------------------- */

static tgc_memory_figures figures_of(tgc_device *d) {
    tgc_allocator_stats st = tgc_device_stats(d);
    tgc_memory_figures f = {st.live_buffers, st.bytes_in_use, st.peak_bytes_in_use, st.num_allocs,
                            st.largest_alloc_size};
    return f;
}

tgc_memory_info tgc_memory(void) {
    tgc_memory_info m = {0};
    tgc_live_handles(&m.live_tensors, &m.live_tensor_bytes);
    tgc_device *host = tgc_host_device();
    if (host != NULL) m.host = figures_of(host);
    tgc_scope_figures(&m.scope_depth, &m.scoped_tensors);
    return m;
}

tgc_status tgc_device_memory(const char *device_name, tgc_device_memory_info *out) {
    out->total_bytes = out->used_bytes = out->free_bytes = -1;
    tgc_device_id id = {tgc_backend_host_kind(), 0, 0};
    if (device_name == NULL || (strcmp(device_name, "host") != 0 && !tgc_device_spec_valid(device_name)))
        return TGC_ERR_INVALID;
    if (strcmp(device_name, "host") != 0) tgc_device_id_parse(device_name, strlen(device_name), &id, NULL);
    if (id.task != 0) return TGC_ERR_INVALID; /* another process's */
    /* Its own entry ("gpu1"), else its kind's one entry for all its
     * devices ("cpu": cpu0, cpu1 and the host share the host's memory). */
    char want[32];
    tgc_device_id_name(id, want, sizeof want);
    const tgc_backend *backend = tgc_backend_get(id.kind);
    const char *prefix = backend->prefix;
    /* Its own kind's list only: a cpu's figures need no OpenCL platform
     * loaded (which takes a tenth of a second at start-up). */
    tgc_device_info info[TGC_MAX_DEVICES_LISTED + 1];
    int n = backend->list(info, TGC_MAX_DEVICES_LISTED + 1);
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n; i++) {
            if (strcmp(info[i].name, pass == 0 ? want : prefix) != 0) continue;
            out->total_bytes = info[i].total_memory;
            out->used_bytes = info[i].used_memory;
            out->free_bytes = info[i].free_memory;
            return TGC_OK;
        }
    return TGC_ERR_INVALID;
}

/* The trace: on, and the host device's num_allocs at the last reset. */
static atomic_bool trace_on;
static atomic_llong trace_allocs_mark;

void tgc_memory_trace_reset(void) {
    tgc_device *host = tgc_host_device();
    if (host == NULL) return;
    tgc_memory_tracers_reset_peak(host); /* the running tracers keep their peaks */
    atomic_store(&trace_allocs_mark, tgc_device_stats(host).num_allocs);
}

void tgc_memory_trace_start(void) {
    tgc_memory_trace_reset();
    atomic_store(&trace_on, true);
}

tgc_status tgc_memory_trace_report(tgc_memory_trace *out) {
    memset(out, 0, sizeof *out);
    tgc_device *host = tgc_host_device();
    if (!atomic_load(&trace_on) || host == NULL) return TGC_ERR_INVALID;
    tgc_allocator_stats st = tgc_device_stats(host);
    out->bytes_in_use = st.bytes_in_use;
    out->peak_bytes_in_use = st.peak_bytes_in_use;
    out->num_allocs = st.num_allocs - atomic_load(&trace_allocs_mark);
    out->live_buffers = st.live_buffers;
    int64_t bytes;
    tgc_live_handles(&out->live_tensors, &bytes);
    return TGC_OK;
}
