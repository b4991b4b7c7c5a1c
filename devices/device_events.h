/* Device-side times of a step's kernels, for the trace: a kernel launched
 * while its context carries a list (tgc_kernel_ctx.events: the executor
 * sets it when tracing) leaves its launch's handle there (an OpenCL
 * event); once the step's devices have synchronized, the executor asks
 * each device when the launch queued, started and ended on the device's
 * clock (tgc_device_ops.event_times) and draws it on the device's own
 * track beside the host's. Thread safe. */
#ifndef TGC_DEVICES_DEVICE_EVENTS_H
#define TGC_DEVICES_DEVICE_EVENTS_H

#include "graph/graph.h"

#include <pthread.h>
#include <stdint.h>

struct tgc_device;

typedef struct tgc_device_event {
    void *handle;              /* the device's (retained; released through event_release) */
    struct tgc_device *device;
    const tgc_node *node;      /* the node that launched it (the session's graph owns it) */
    char kernel[48];           /* the launched kernel's name */
    int64_t host_enqueue_ns;   /* tgc_now_ns() right after the launch was enqueued */
} tgc_device_event;

typedef struct tgc_device_events {
    pthread_mutex_t lock;
    tgc_device_event *items;
    size_t count, cap;
} tgc_device_events;

void tgc_device_events_init(tgc_device_events *e);

/* Adds a launch; false when out of memory (the caller then releases the
 * handle: a trace never fails a run). */
bool tgc_device_events_add(tgc_device_events *e, void *handle, struct tgc_device *device, const tgc_node *node,
                           const char *kernel);

/* Releases every handle (through its device's event_release) and the
 * list. */
void tgc_device_events_release(tgc_device_events *e);

#endif
