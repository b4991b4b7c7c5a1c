/* The shared devices of eager contexts (device_registry.h): a slot per
 * (kind, index) under one mutex. A device leaves its slot on its last
 * release; a lookup that finds a device whose count already reached zero
 * (being closed by another thread) treats the slot as empty, so a count
 * never climbs back from zero. */
#include "devices/device_registry.h"

#include "support/diag.h"

#include <pthread.h>

#define SLOTS_PER_KIND 16

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static tgc_device *slots[TGC_MAX_BACKENDS][SLOTS_PER_KIND];

/* Adds a reference unless the count is already zero (the device is closing). */
static bool retain_live(tgc_device *d) {
    int n = atomic_load(&d->refs);
    while (n > 0)
        if (atomic_compare_exchange_weak(&d->refs, &n, n + 1)) return true;
    return false;
}

static void close_shared(tgc_device *d) {
    pthread_mutex_lock(&registry_lock);
    if (d->index >= 0 && d->index < SLOTS_PER_KIND && slots[d->kind][d->index] == d) slots[d->kind][d->index] = NULL;
    pthread_mutex_unlock(&registry_lock);
    tgc_device_destroy(d);
}

tgc_status tgc_device_registry_open(tgc_device_kind kind, int index, tgc_diags *diags, tgc_device **out) {
    *out = NULL;
    const tgc_backend *b = tgc_backend_get(kind);
    char name[32];
    if (b == NULL || index < 0 || index >= SLOTS_PER_KIND)
        return tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "bad-device-list", "%s: tgc shares devices 0 to %d",
                              tgc_device_id_name((tgc_device_id){kind, index, 0}, name, sizeof name),
                              SLOTS_PER_KIND - 1);
    pthread_mutex_lock(&registry_lock);
    tgc_device *d = slots[kind][index];
    tgc_status s = TGC_OK;
    if (d == NULL || !retain_live(d)) {
        /* Opened under the lock: two contexts asking at once share one device. */
        s = b->open(index, diags, &d);
        if (s == TGC_OK) {
            d->on_last_release = close_shared;
            slots[kind][index] = d;
        }
    }
    pthread_mutex_unlock(&registry_lock);
    if (s == TGC_OK) *out = d;
    return s;
}

int tgc_device_registry_list(tgc_device **out, int max) {
    int n = 0;
    pthread_mutex_lock(&registry_lock);
    for (int k = 0; k < tgc_backend_count(); k++)
        for (int i = 0; i < SLOTS_PER_KIND && n < max; i++)
            if (slots[k][i] != NULL && retain_live(slots[k][i])) out[n++] = slots[k][i];
    pthread_mutex_unlock(&registry_lock);
    return n;
}
