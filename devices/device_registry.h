/* The process's shared devices: the cpuN and gpuN that eager contexts run
 * on, opened once and shared by every context that lists them, each kept
 * alive by reference counts (tgc_device.refs): one per context that
 * lists it, one per tensor handle whose data lives there. The last
 * release closes the device and takes it out of the registry; a later
 * context opens it afresh. Sessions open devices of their own and do not
 * use the registry. Private to the library.
 *
 * Why counts rather than a registry that keeps devices to the end of the
 * process: a closed context's gpu memory and OpenCL context go back as
 * soon as no tensor needs them, and the test suites' check that no host
 * block outlives them keeps working.
 *
 * Example usage:
 *     tgc_device *gpu = NULL;
 *     if (tgc_device_registry_open(TGC_DEVICE_GPU, 0, diags, &gpu) == TGC_OK) {  // gpu0
 *         ... buffers on gpu ...
 *         tgc_device_release(gpu);   // closed here when nothing else holds it
 *     }
 */
#ifndef TGC_DEVICES_DEVICE_REGISTRY_H
#define TGC_DEVICES_DEVICE_REGISTRY_H

#include "devices/device.h"

/* The shared device of `kind` and `index` (gpu1: TGC_DEVICE_GPU, 1) with a reference owned by the caller, opened
 * now if no one holds it. TGC_ERR_INVALID (no such gpu, in diags),
 * TGC_ERR_NOMEM, TGC_ERR_RUNTIME (OpenCL failed, in diags). */
tgc_status tgc_device_registry_open(tgc_device_kind kind, int index, tgc_diags *diags, tgc_device **out);

/* Stores up to `max` open shared devices, each retained (the caller
 * releases each), in out[], by kind, then index; returns how many. */
int tgc_device_registry_list(tgc_device **out, int max);

#endif
