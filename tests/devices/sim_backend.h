/* "sim": a kind of device that lives only in the tests, registered at run
 * time (devices/backend.h's tgc_backend_register), to show and to test
 * what a new kind takes: sim0 and sim1 are devices over host memory with a
 * declared capacity, the highest placement priority, and kernels that
 * forward to the cpu's, except for the ops a test leaves out. Nothing
 * outside tests/devices/sim_backend.{h,c} knows of it.
 *
 * Example usage (in a test):
 *     tgc_device_kind sim;
 *     tgc_sim_backend_register(&sim);         // once per process; again: the same kind
 *     tgc_session_create(g, "cpu,sim0", NULL, diags, &s);   // Softmax stays on cpu0
 */
#ifndef TGC_TESTS_SIM_BACKEND_H
#define TGC_TESTS_SIM_BACKEND_H

#include "devices/backend.h"

/* What every sim device declares it has: 64 MiB. */
#define TGC_SIM_CAPACITY ((int64_t)64 << 20)

/* How many sim devices the machine has: sim0 and sim1. */
#define TGC_SIM_DEVICES 2

/* The ops sim has no kernel for (the rest forward to the cpu's kernels),
 * so placement on cpu,sim0 must split a graph that uses one. */
#define TGC_SIM_MISSING_OP "Softmax"

/* The buffer alignment sim declares (the static plan's offsets follow it). */
#define TGC_SIM_ALIGNMENT 128

/* Registers the sim backend (its kernel table built from the cpu's on the
 * first call) and gives its kind. TGC_OK, or the error of
 * tgc_backend_register, or TGC_ERR_NOMEM. Thread safe. */
tgc_status tgc_sim_backend_register(tgc_device_kind *kind);

/* Calls of sim's forwarding kernels so far (all sim devices). */
long tgc_sim_kernel_calls(void);

/* Makes every sim kernel wait `us` microseconds (busy) before it runs:
 * a slow device, for tests of placement by cost; 0: none (the default).
 * The devices' listed description says the delay, so measured costs of
 * one delay are cached apart from another's. */
void tgc_sim_set_delay_us(int us);

#endif
