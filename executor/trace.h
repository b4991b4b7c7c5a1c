/* Tracing runs in the Chrome trace event format (JSON; opens in Perfetto
 * or chrome://tracing): a track per device thread, an event per node with
 * its name, op and shapes, flow arrows from each _Send to its _Recv, and a
 * counter track of bytes in use per device. Private to executor/.
 *
 * Example usage:
 *     tgc_trace *t;
 *     tgc_trace_create(&t);
 *     ... tgc_trace_node(t, plan, id, t0, t1) from any thread ...
 *     tgc_trace_write(t, "run.json");
 *     tgc_trace_free(t);
 */
#ifndef TGC_EXECUTOR_TRACE_H
#define TGC_EXECUTOR_TRACE_H

#include "graph/graph.h"
#include "tgc.h"

#include "support/parallel_for.h"

#include <stdint.h>

struct tgc_plan;
typedef struct tgc_trace tgc_trace;

tgc_status tgc_trace_create(tgc_trace **out);
void tgc_trace_free(tgc_trace *t);

/* Microseconds on a monotonic clock. */
uint64_t tgc_trace_now_us(void);

/* Records node `id` of `plan` running from start to end (microseconds) on
 * the calling thread in step `step` (its args show the step id, and where
 * its kernel split its work, `splits` tgc_parallel_for calls over `pieces`
 * pieces in all: support/parallel_for.h); a _Send
 * also starts its flow arrow, named by `key`, its rendezvous key as it ran
 * (the step id and frame in front, so that the arrows of concurrent steps
 * and of loop iterations never join; NULL for other nodes); the device's
 * bytes in use become a counter sample. Thread safe. */
void tgc_trace_node(tgc_trace *t, const struct tgc_plan *plan, int32_t id, int64_t step, const char *key,
                    uint64_t start, uint64_t end, tgc_parallel_tally split);

/* Records a kernel that node n launched on `device`, as the device's own
 * clock timed it (converted to the trace's microseconds), on the track
 * "DEVICE (device)", one per device: the device-side time beside the
 * host's (devices/device_events.h). `kernel` names the kernel. */
void tgc_trace_device(tgc_trace *t, const char *device, const tgc_node *n, const char *kernel, int64_t step,
                      uint64_t start, uint64_t end);

/* Records a _Recv's completion at `at` (the end of the flow arrow of the
 * run-time `key`) in step `step`. */
void tgc_trace_recv(tgc_trace *t, const struct tgc_plan *plan, int32_t id, int64_t step, const char *key,
                    uint64_t at);

/* Writes every event recorded so far as one JSON document, atomically
 * (temporary file, then rename). TGC_ERR_IO with a message in diags. */
tgc_status tgc_trace_write(tgc_trace *t, const char *path, tgc_diags *diags);

#endif
