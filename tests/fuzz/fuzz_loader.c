/* libFuzzer target: the whole loader (YAML parsing, validation, inference)
 * on arbitrary bytes. Any crash, hang, sanitizer report or leaked host block
 * is a bug. Relative .npy paths resolve under tests/data so seeds may name
 * real files. */
#include "support/alloc.h"
#include "tgc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    tgc_host_alloc_stats before = tgc_host_alloc_stats_get();
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    if (tgc_graph_load_string((const char *)data, size, "fuzz.yaml", TGC_FUZZ_DATA_DIR, d, &g) == TGC_OK) {
        FILE *sink = fopen("/dev/null", "w");
        if (sink != NULL) {
            tgc_graph_dump_yaml(g, sink, NULL, d);
            fclose(sink);
        }
    }
    tgc_graph_free(g);
    tgc_diags_free(d);
    tgc_host_alloc_stats after = tgc_host_alloc_stats_get();
    if (after.live_blocks != before.live_blocks) abort(); /* a leak through tgc_malloc */
    return 0;
}
