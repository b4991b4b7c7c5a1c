/* Memory per device (executor/memory_devices.c): the process's live tensor
 * handles, and the hook for whoever resets a device's peak while memory
 * traces (tgc.h, tgc_memory_tracer_*) run. Private. */
#ifndef TGC_EXECUTOR_MEMORY_TRACER_H
#define TGC_EXECUTOR_MEMORY_TRACER_H

#include "devices/device.h"

/* Resets d's peak_bytes_in_use to its bytes in use now, first folding the
 * peak so far into every running trace, so that each keeps its own. */
void tgc_memory_tracers_reset_peak(tgc_device *d);

/* The tensor handles alive in the process and their bytes: the sums over
 * the host device and the open shared devices, where every handle's data
 * lives (a session's outputs are copied to the host; a device closes only
 * when no handle holds it). */
void tgc_live_handles(int64_t *count, int64_t *bytes);

#endif
