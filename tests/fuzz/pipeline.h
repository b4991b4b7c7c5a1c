/* The stages after loading, for the libFuzzer targets that carry a model
 * through the whole pipeline (fuzz_yaml.c, fuzz_onnx.c): placement on cpu
 * and on cpu,gpu0, partitioning, the memory plan, and a run on small
 * generated feeds under a memory limit. Every stage must end in TGC_OK or
 * a clean error; the caller checks that no host block is left.
 *
 * Feeds: each graph input gets its declared dtype and shape with every
 * symbol bound to 2 (feeds past FUZZ_MAX_FEED_BYTES are not made and the
 * run is skipped), filled with small values that are valid indices and
 * shape arguments more often than not (0, 1, 2, ...). */
#ifndef TGC_TESTS_FUZZ_PIPELINE_H
#define TGC_TESTS_FUZZ_PIPELINE_H

#include "graph/graph.h"
#include "support/alloc.h"
#include "tgc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_MAX_FEED_BYTES (1 << 20)
#define FUZZ_MAX_FEEDS 64

/* Places, partitions and plans g on `devices`; errors are expected and
 * fine. */
static void fuzz_compile(const tgc_graph *g, const char *devices, tgc_diags *d) {
    tgc_place_options po = {.soft_placement = 1};
    tgc_placed *placed = NULL;
    if (tgc_graph_place(g, devices, &po, d, &placed) == TGC_OK) {
        tgc_partitions *parts = NULL;
        if (tgc_graph_partition(g, placed, d, &parts) == TGC_OK) tgc_partitions_validate(parts, d);
        tgc_partitions_free(parts);
    }
    tgc_placed_free(placed);
    tgc_memory_plan_options mo = {.soft_placement = 1};
    tgc_memory_plan *mp = NULL;
    if (tgc_graph_memory_plan(g, devices, &mo, d, &mp) == TGC_OK) {
        FILE *sink = fopen("/dev/null", "w");
        if (sink != NULL) {
            tgc_memory_plan_write(mp, sink, 0, d);
            fclose(sink);
        }
    }
    tgc_memory_plan_free(mp);
}

/* Runs g once on cpu under a 64 MiB limit (and 1000 iterations a loop) with generated feeds. */
static void fuzz_run(const tgc_graph *g, tgc_diags *d) {
    int n = g->n_inputs_nodes < FUZZ_MAX_FEEDS ? g->n_inputs_nodes : FUZZ_MAX_FEEDS;
    if (n < g->n_inputs_nodes) return;
    const char *names[FUZZ_MAX_FEEDS];
    tgc_tensor *feeds[FUZZ_MAX_FEEDS] = {0};
    bool ok = true;
    for (int i = 0; i < n && ok; i++) {
        const tgc_node *in = &g->nodes[i];
        const tgc_tensor_info *info = &in->outputs[0];
        names[i] = in->name;
        int64_t dims[TGC_MAX_RANK], count = 1;
        int rank = info->shape.rank;
        ok = rank >= 0 && rank <= TGC_MAX_RANK && info->dtype >= 0 && info->dtype < TGC_DTYPE_COUNT;
        for (int k = 0; ok && k < rank; k++) {
            dims[k] = tgc_dim_known(info->shape.dims[k]) ? info->shape.dims[k].v : 2;
            ok = dims[k] >= 0 && dims[k] <= FUZZ_MAX_FEED_BYTES && !__builtin_mul_overflow(count, dims[k], &count);
        }
        size_t es = ok ? tgc_dtype_size(info->dtype) : 0;
        ok = ok && es > 0 && count <= FUZZ_MAX_FEED_BYTES / (int64_t)es;
        if (!ok) break;
        unsigned char *data = calloc((size_t)count + 1, es);
        if (data == NULL) {
            ok = false;
            break;
        }
        for (int64_t e = 0; e < count; e++) { /* 0, 1, 2, 0, 1, 2, ... in the dtype */
            unsigned char *p = data + (size_t)e * es;
            int v = (int)(e % 3);
            switch (info->dtype) {
            case TGC_FLOAT32: { float f = (float)v; memcpy(p, &f, 4); break; }
            case TGC_FLOAT16: { uint16_t h = v == 0 ? 0 : v == 1 ? 0x3C00 : 0x4000; memcpy(p, &h, 2); break; }
            case TGC_INT32: { int32_t x = v; memcpy(p, &x, 4); break; }
            case TGC_INT64: { int64_t x = v; memcpy(p, &x, 8); break; }
            case TGC_STRING: { static const char *const text[] = {"0", "1", "2"}; memcpy(p, &text[v], sizeof(char *)); break; }
            default: *p = (unsigned char)(v & 1); break;
            }
        }
        ok = tgc_tensor_create(info->dtype, rank, dims, data, &feeds[i]) == TGC_OK;
        free(data);
    }
    if (ok) {
        /* A loop of an untrusted model may not end: at most 1000 iterations. */
        tgc_session_options so = {.soft_placement = 1, .memory_limits = "cpu=64MiB", .threads = "cpu0=1",
                                  .max_iterations = 1000};
        tgc_session *s = NULL;
        if (tgc_session_create(g, "cpu", &so, d, &s) == TGC_OK) {
            int n_out = tgc_session_output_count(s);
            tgc_tensor **outs = calloc((size_t)(n_out > 0 ? n_out : 1), sizeof *outs);
            if (outs != NULL && tgc_session_run(s, n, names, feeds, outs, d) == TGC_OK)
                for (int i = 0; i < n_out; i++) tgc_tensor_release(outs[i]);
            free(outs);
        }
        tgc_session_free(s);
    }
    for (int i = 0; i < n; i++) tgc_tensor_release(feeds[i]);
}

/* Everything after loading. */
static void fuzz_pipeline(const tgc_graph *g, tgc_diags *d) {
    fuzz_compile(g, "cpu", d);
    fuzz_compile(g, "cpu,gpu0", d);
    fuzz_run(g, d);
}

#endif
