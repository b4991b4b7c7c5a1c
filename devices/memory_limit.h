/* Memory limits as users write them ("gpu0=64MiB,cpu=1GiB": --memory-limit,
 * tgc_session_options.memory_limits) and the margin a plan leaves on every
 * device. Shared by automatic placement (placer/auto.c, through the
 * compile driver) and the memory check (executor/memory_plan_check.c), so
 * both read the same figure. Private to the library. */
#ifndef TGC_DEVICES_MEMORY_LIMIT_H
#define TGC_DEVICES_MEMORY_LIMIT_H

#include "support/diag.h"

#include <stdint.h>

/* The share of a device's memory (or its --memory-limit) a plan may not
 * use, in percent: what the static plan does not see. The run's
 * best-fit arena fragments a little where the plan packs offsets
 * exactly; allocations are rounded to the arena's alignment; libraries
 * keep buffers of their own (OpenBLAS's, oneDNN's scratchpads). 5% covers
 * what the tests measured (docs/memory.md) without refusing plans that
 * fit. */
#define TGC_MEMORY_MARGIN_PERCENT 5

/* What a plan may use of `bytes` (> 0): bytes less the margin. */
static inline int64_t tgc_memory_usable(int64_t bytes) { return bytes - bytes / 100 * TGC_MEMORY_MARGIN_PERCENT; }

/* The limit `spec` ("DEV=SIZE[,DEV=SIZE...]", SIZE as tgc_parse_size reads
 * it: 64MiB, 2GB; NULL: none) gives the device named `name` in its
 * canonical form ("cpu0", "gpu0": "cpu" in the spec is cpu0), in bytes; 0
 * when it gives none; -1, with an error (rule "bad-memory-limit") in diags
 * when diags is not NULL, when the spec is malformed or a size is below
 * one byte. */
int64_t tgc_memory_limit_of(const char *spec, const char *name, tgc_diags *diags);

/* The share of a device's --memory-limit one kernel run may take as
 * workspace (all of its pool's threads together): 1 / TGC_WORKSPACE_SHARE.
 * A limit says memory is short there; a kernel with a choice (Winograd's
 * transformed tiles in bands) then takes the way that fits, as cuDNN's
 * algorithm search takes a workspace limit (TensorFlow's
 * TF_CUDNN_WORKSPACE_LIMIT_IN_MB). A sixteenth let SqueezeNet 1.1's
 * 4 MB of Winograd tiles go in bands on devices of 4-5 MiB, where the
 * whole image's tiles alone held most of the device. */
#define TGC_WORKSPACE_SHARE 16

/* The workspace limit of a device whose memory limit is `limit` bytes
 * (0: none): limit / TGC_WORKSPACE_SHARE, at least 1; 0 (no limit) for 0.
 * Without --memory-limit kernels size their workspaces for speed. */
static inline int64_t tgc_workspace_limit(int64_t limit) {
    return limit > 0 ? (limit / TGC_WORKSPACE_SHARE > 0 ? limit / TGC_WORKSPACE_SHARE : 1) : 0;
}

/* tgc_workspace_limit of device `name` (canonical) under `spec`; 0 when
 * spec gives it no limit or is malformed (the session reports that). */
static inline int64_t tgc_workspace_limit_of(const char *spec, const char *name) {
    int64_t limit = tgc_memory_limit_of(spec, name, NULL);
    return tgc_workspace_limit(limit > 0 ? limit : 0);
}

/* The bytes device `name` (canonical) of kind `kind` may hold: its limit
 * in `spec`, else the total memory its backend reports, less the margin;
 * 0 when neither says (a gpuN this machine lacks); -1 for a malformed spec
 * (the error in diags). */
int64_t tgc_memory_capacity(const char *spec, const char *name, int kind, tgc_diags *diags);

#endif
