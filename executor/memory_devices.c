/* Memory per device, as tf.memory() and fastai's gpu_mem_get_all give it,
 * and traces over blocks of code, as fastai's GPUMemTrace: the host device
 * and every device eager contexts hold open.
 *
 * A device has one high-water mark; traces that nest or overlap each want
 * their own. So a trace that starts resets the marks, after folding each
 * mark into the running traces' own peaks (under one lock): a trace's
 * peak is the largest of what it folded and the mark now. */
#include "executor/memory_tracer.h"

#include "devices/device_registry.h"
#include "support/alloc.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define MAX_TRACKED 33 /* the host device and the registry's 2 x 16 */

/* The host device and the open shared devices, each retained. */
static int devices_now(tgc_device **out) {
    out[0] = tgc_device_retain(tgc_host_device());
    return 1 + tgc_device_registry_list(out + 1, MAX_TRACKED - 1);
}

void tgc_live_handles(int64_t *count, int64_t *bytes) {
    tgc_device *devs[MAX_TRACKED];
    int n = devices_now(devs);
    *count = *bytes = 0;
    for (int i = 0; i < n; i++) {
        *count += atomic_load(&devs[i]->live_handles);
        *bytes += atomic_load(&devs[i]->live_handle_bytes);
        tgc_device_release(devs[i]);
    }
}

int tgc_memory_devices(tgc_memory_device *out, int max) {
    tgc_device *devs[MAX_TRACKED];
    int n = devices_now(devs);
    for (int i = 0; i < n; i++) {
        if (i < max) {
            tgc_allocator_stats st = tgc_device_stats(devs[i]);
            tgc_memory_device *m = &out[i];
            memset(m, 0, sizeof *m);
            snprintf(m->device, sizeof m->device, "%.15s", devs[i]->name);
            m->live_tensors = atomic_load(&devs[i]->live_handles);
            m->live_tensor_bytes = atomic_load(&devs[i]->live_handle_bytes);
            m->bytes_in_use = st.bytes_in_use;
            m->peak_bytes_in_use = st.peak_bytes_in_use;
            m->bytes_limit = st.bytes_limit;
            m->num_allocs = st.num_allocs;
        }
        tgc_device_release(devs[i]);
    }
    return n;
}

/* ---- traces ------------------------------------------------------------------------ */

typedef struct trace_row {
    const tgc_device *device; /* identity only: not retained */
    int64_t used_start, tensors_start, peak;
} trace_row;

struct tgc_memory_tracer {
    struct tgc_memory_tracer *next; /* the running traces */
    int n_rows;
    trace_row rows[MAX_TRACKED];
};

static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static tgc_memory_tracer *running;

static trace_row *row_of(tgc_memory_tracer *t, const tgc_device *d) {
    for (int i = 0; i < t->n_rows; i++)
        if (t->rows[i].device == d) return &t->rows[i];
    return NULL;
}

/* Under trace_lock: d's mark into every running trace. A device a trace
 * has no row for opened after it started: a row from zero. */
static void fold(tgc_device *d) {
    int64_t peak = tgc_device_stats(d).peak_bytes_in_use;
    for (tgc_memory_tracer *t = running; t != NULL; t = t->next) {
        trace_row *r = row_of(t, d);
        if (r == NULL && t->n_rows < MAX_TRACKED) {
            r = &t->rows[t->n_rows++];
            *r = (trace_row){.device = d};
        }
        if (r != NULL && peak > r->peak) r->peak = peak;
    }
}

void tgc_memory_tracers_reset_peak(tgc_device *d) {
    pthread_mutex_lock(&trace_lock);
    fold(d);
    tgc_device_reset_peak(d);
    pthread_mutex_unlock(&trace_lock);
}

tgc_status tgc_memory_tracer_start(tgc_memory_tracer **out) {
    tgc_memory_tracer *t = tgc_calloc(1, sizeof *t);
    *out = t;
    if (t == NULL) return TGC_ERR_NOMEM;
    tgc_device *devs[MAX_TRACKED];
    int n = devices_now(devs);
    pthread_mutex_lock(&trace_lock);
    for (int i = 0; i < n; i++) {
        fold(devs[i]);
        tgc_device_reset_peak(devs[i]);
        tgc_allocator_stats st = tgc_device_stats(devs[i]);
        t->rows[t->n_rows++] = (trace_row){devs[i], st.bytes_in_use, atomic_load(&devs[i]->live_handles),
                                           st.bytes_in_use};
    }
    t->next = running;
    running = t;
    pthread_mutex_unlock(&trace_lock);
    for (int i = 0; i < n; i++) tgc_device_release(devs[i]);
    return TGC_OK;
}

int tgc_memory_tracer_report(const tgc_memory_tracer *t, tgc_memory_delta *out, int max) {
    tgc_device *devs[MAX_TRACKED];
    int n = devices_now(devs);
    pthread_mutex_lock(&trace_lock);
    for (int i = 0; i < n && i < max; i++) {
        tgc_allocator_stats st = tgc_device_stats(devs[i]);
        const trace_row *r = t != NULL ? row_of((tgc_memory_tracer *)t, devs[i]) : NULL;
        trace_row zero = {0};
        if (r == NULL) r = &zero;
        tgc_memory_delta *m = &out[i];
        memset(m, 0, sizeof *m);
        snprintf(m->device, sizeof m->device, "%.15s", devs[i]->name);
        m->used_start = r->used_start;
        m->used_now = st.bytes_in_use;
        m->used_delta = m->used_now - m->used_start;
        m->peak = st.peak_bytes_in_use > r->peak ? st.peak_bytes_in_use : r->peak;
        m->peak_delta = m->peak - m->used_start;
        m->tensors_delta = atomic_load(&devs[i]->live_handles) - r->tensors_start;
    }
    pthread_mutex_unlock(&trace_lock);
    for (int i = 0; i < n; i++) tgc_device_release(devs[i]);
    return n;
}

void tgc_memory_tracer_free(tgc_memory_tracer *t) {
    if (t == NULL) return;
    pthread_mutex_lock(&trace_lock);
    for (tgc_memory_tracer **p = &running; *p != NULL; p = &(*p)->next)
        if (*p == t) {
            *p = t->next;
            break;
        }
    pthread_mutex_unlock(&trace_lock);
    tgc_free(t);
}
