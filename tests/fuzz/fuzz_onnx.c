/* libFuzzer target: ONNX bytes, untrusted, read straight into memory
 * (protobuf-c, conversion, the graph built, validated and inferred) and
 * through the rest of the pipeline (pipeline.h); a model that loads is
 * also imported as `tgc import` does (the tgc/1 file and its .npy weights
 * written to a scratch folder) and that file loaded. Any crash, hang,
 * sanitizer report or leaked host block is a bug. */
#include "tests/fuzz/pipeline.h"
#include "tools/remove_tree.h"

#include <stdint.h>
#include <unistd.h>

static char scratch[64];

/* A private folder per fuzzing process, made once. */
static const char *scratch_dir(void) {
    if (scratch[0] == '\0') {
        snprintf(scratch, sizeof scratch, "/tmp/tgc-fuzz-onnx-XXXXXX");
        if (mkdtemp(scratch) == NULL) abort();
    }
    return scratch;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    tgc_host_alloc_stats before = tgc_host_alloc_stats_get();
    char model[128], yaml[128], weights[128];
    snprintf(model, sizeof model, "%s/m.onnx", scratch_dir());
    snprintf(yaml, sizeof yaml, "%s/m.yaml", scratch_dir());
    snprintf(weights, sizeof weights, "%s/m_weights", scratch_dir());
    FILE *f = fopen(model, "wb");
    if (f == NULL) abort();
    if (size > 0 && fwrite(data, 1, size, f) != size) abort();
    fclose(f);
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL, *written = NULL;
    if (tgc_graph_load(model, d, &g) == TGC_OK) {
        fuzz_pipeline(g, d);
        if (tgc_onnx_import(model, yaml, d) == TGC_OK && tgc_graph_load(yaml, d, &written) != TGC_OK)
            abort(); /* the file of a model that loads must load */
    }
    tgc_graph_free(g);
    tgc_graph_free(written);
    tgc_diags_free(d);
    unlink(yaml);
    tgc_tool_remove_tree(weights);
    tgc_host_alloc_stats after = tgc_host_alloc_stats_get();
    if (after.live_blocks != before.live_blocks) abort(); /* a leak through tgc_malloc */
    return 0;
}
