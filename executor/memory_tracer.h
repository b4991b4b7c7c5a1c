/* Memory traces over blocks (tgc.h, tgc_memory_tracer_*): private hook for
 * whoever resets a device's peak. */
#ifndef TGC_EXECUTOR_MEMORY_TRACER_H
#define TGC_EXECUTOR_MEMORY_TRACER_H

#include "devices/device.h"

/* Resets d's peak_bytes_in_use to its bytes in use now, first folding the
 * peak so far into every running trace, so that each keeps its own. */
void tgc_memory_tracers_reset_peak(tgc_device *d);

#endif
