/* Sessions and tensor handles: private layout (the public API is tgc.h). */
#ifndef TGC_EXECUTOR_SESSION_H
#define TGC_EXECUTOR_SESSION_H

#include "tgc.h"

#include "devices/kernel.h"
#include "graph/graph.h"

#include <stdatomic.h>

#define TGC_MAX_DEVICES 16

/* A public tensor handle: a reference-counted wrapper of one value whose
 * buffer lives on the process's host device (tgc_host_device). */
struct tgc_tensor {
    atomic_int refs;
    tgc_value v;
};

/* Wraps `v` (taking over its buffer reference) in a new handle, refs 1. */
tgc_status tgc_tensor_wrap(const tgc_value *v, tgc_tensor **out);

struct tgc_session {
    const tgc_graph *g;
    tgc_device *devices[TGC_MAX_DEVICES];
    int n_devices;
    int32_t *device_of;               /* node id -> index into devices; -1: host memory */
    const tgc_kernel_def **kernels;   /* node id -> kernel (NULL for inputs, consts) */
    int32_t *value_base;              /* node id -> first slot of its outputs */
    int32_t n_values;                 /* total output slots */
    int32_t *use_count;               /* slot -> consumers (input slots + graph outputs) */
    tgc_value *weights;               /* slot -> an initializer's value on its device */
    char **output_names;              /* graph output i as written: "node" or "node:k" */
};

/* The device node `id` runs on (or whose memory holds it): devices[i], or
 * the host device for -1. */
tgc_device *tgc_session_device_of(const tgc_session *s, int32_t id);

/* The device list "cpu", "cpu0,cpu1": creates the devices into s. Problems
 * (unknown or repeated names) go to diags. */
tgc_status tgc_session_open_devices(tgc_session *s, const char *devices, tgc_diags *diags);

#endif
