/* libFuzzer target: a tgc/1 YAML model, untrusted, through the whole
 * pipeline: load (parse, validate, infer), placement on cpu and cpu,gpu0,
 * partitioning, the memory plan and a run on generated feeds under a
 * memory limit (pipeline.h). Any crash, hang, sanitizer report or leaked
 * host block is a bug. `file:` weights resolve beneath tests/data, so seeds
 * may name real .npy files. */
#include "tests/fuzz/pipeline.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    tgc_host_alloc_stats before = tgc_host_alloc_stats_get();
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    if (tgc_graph_load_string((const char *)data, size, "fuzz.yaml", TGC_FUZZ_DATA_DIR, d, &g) == TGC_OK)
        fuzz_pipeline(g, d);
    tgc_graph_free(g);
    tgc_diags_free(d);
    tgc_host_alloc_stats after = tgc_host_alloc_stats_get();
    if (after.live_blocks != before.live_blocks) abort(); /* a leak through tgc_malloc */
    return 0;
}
