/* Device-side times of a step's kernels (devices/device_events.h). */
#include "devices/device_events.h"

#include "devices/device.h"
#include "support/alloc.h"
#include "support/clock.h"

#include <stdio.h>

void tgc_device_events_init(tgc_device_events *e) {
    pthread_mutex_init(&e->lock, NULL);
    e->items = NULL;
    e->count = e->cap = 0;
}

bool tgc_device_events_add(tgc_device_events *e, void *handle, tgc_device *device, const tgc_node *node,
                           const char *kernel) {
    int64_t now = tgc_now_ns();
    bool ok = true;
    pthread_mutex_lock(&e->lock);
    if (e->count == e->cap) {
        size_t cap = e->cap ? 2 * e->cap : 64;
        tgc_device_event *items = tgc_realloc(e->items, cap * sizeof *items);
        if (items != NULL) e->items = items, e->cap = cap;
        ok = items != NULL;
    }
    if (ok) {
        tgc_device_event *ev = &e->items[e->count++];
        ev->handle = handle;
        ev->device = device;
        ev->node = node;
        snprintf(ev->kernel, sizeof ev->kernel, "%s", kernel);
        ev->host_enqueue_ns = now;
    }
    pthread_mutex_unlock(&e->lock);
    return ok;
}

void tgc_device_events_release(tgc_device_events *e) {
    for (size_t i = 0; i < e->count; i++)
        if (e->items[i].device->ops->event_release != NULL)
            e->items[i].device->ops->event_release(e->items[i].device, e->items[i].handle);
    tgc_free(e->items);
    e->items = NULL;
    e->count = e->cap = 0;
    pthread_mutex_destroy(&e->lock);
}
