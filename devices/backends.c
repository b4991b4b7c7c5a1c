/* The one list of backends (backend.h): the kinds built in, in kind
 * order, then the kinds registered at run time. Adding a kind to the
 * library is one line here (under its build option, as OpenCL's). */
#include "devices/backend.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

extern const tgc_backend tgc_cpu_backend;
#ifdef TGC_HAVE_OPENCL
extern const tgc_backend tgc_opencl_backend;
#endif

static const tgc_backend *backends[TGC_MAX_BACKENDS] = {
    &tgc_cpu_backend, /* TGC_DEVICE_CPU: kind 0, the host */
#ifdef TGC_HAVE_OPENCL
    &tgc_opencl_backend, /* TGC_DEVICE_GPU */
#endif
};
#ifdef TGC_HAVE_OPENCL
static atomic_int n_backends = 2;
#else
static atomic_int n_backends = 1;
#endif
static pthread_mutex_t register_lock = PTHREAD_MUTEX_INITIALIZER;

int tgc_backend_count(void) { return atomic_load_explicit(&n_backends, memory_order_acquire); }

const tgc_backend *tgc_backend_get(tgc_device_kind kind) {
    return kind >= 0 && kind < tgc_backend_count() ? backends[kind] : NULL;
}

bool tgc_kind_host_memory(tgc_device_kind kind) {
    const tgc_backend *b = tgc_backend_get(kind);
    return b != NULL && b->host_memory;
}

bool tgc_kind_is_host(tgc_device_kind kind) {
    const tgc_backend *b = tgc_backend_get(kind);
    return b != NULL && b->host;
}

struct tgc_device *tgc_backend_open_host(int index) {
    struct tgc_device *d = NULL;
    return backends[tgc_backend_host_kind()]->open(index, NULL, &d) == TGC_OK ? d : NULL;
}

tgc_device_kind tgc_backend_by_prefix(const char *s, size_t len) {
    for (int k = 0, n = tgc_backend_count(); k < n; k++)
        if (strlen(backends[k]->prefix) == len && strncmp(backends[k]->prefix, s, len) == 0) return k;
    return -1;
}

static bool valid_prefix(const char *p) {
    size_t n = strlen(p);
    if (n < 1 || n > 8) return false;
    for (size_t i = 0; i < n; i++)
        if (p[i] < 'a' || p[i] > 'z') return false;
    return true;
}

tgc_status tgc_backend_register(const tgc_backend *b, tgc_device_kind *kind) {
    *kind = -1;
    if (b == NULL || b->name == NULL || b->prefix == NULL || b->list == NULL || b->open == NULL ||
        b->default_threads == NULL || b->families == NULL || !valid_prefix(b->prefix))
        return TGC_ERR_INVALID;
    pthread_mutex_lock(&register_lock);
    int n = atomic_load(&n_backends);
    tgc_status s = TGC_OK;
    for (int k = 0; k < n && *kind < 0 && s == TGC_OK; k++) {
        if (backends[k] == b) *kind = k;
        else if (strcmp(backends[k]->prefix, b->prefix) == 0) s = TGC_ERR_INVALID;
    }
    if (s == TGC_OK && *kind < 0) {
        if (n == TGC_MAX_BACKENDS) {
            s = TGC_ERR_INVALID;
        } else {
            backends[n] = b;
            *kind = n;
            atomic_store_explicit(&n_backends, n + 1, memory_order_release); /* the slot before the count */
        }
    }
    pthread_mutex_unlock(&register_lock);
    return s;
}
