/* The compile driver (compile.h): optimize -> place -> partition. */
#include "partition/compile.h"

#include "devices/backend.h"

#include <stdio.h>
#include <string.h>

/* The device list as tgc_graph_optimize reads it (which kinds run the
 * graph: fusion only where every kind has the fused kernels). */
static void list_string(const tgc_placer_device *devices, int n, char *buf, size_t size) {
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && used < size; i++) {
        char name[32];
        used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? "," : "",
                                 tgc_device_id_name(devices[i], name, sizeof name));
    }
}

tgc_status tgc_compile_on(const tgc_graph *g, const tgc_placer_device *devices, int n,
                          const tgc_compile_options *opts, tgc_diags *diags, tgc_compiled *out) {
    memset(out, 0, sizeof *out);
    out->g = g;
    if (n < 0 || n > TGC_PLACER_MAX_DEVICES) n = TGC_PLACER_MAX_DEVICES + 1; /* the placer says why */
    else memcpy(out->devices, devices, (size_t)n * sizeof *devices);
    out->n_devices = n;
    tgc_status s = TGC_OK;
    if (opts->optimize != TGC_OPTIMIZE_NONE && n <= TGC_PLACER_MAX_DEVICES) {
        char list[TGC_PLACER_MAX_DEVICES * 24];
        list_string(devices, n, list, sizeof list);
        s = tgc_graph_optimize(g, opts->optimize, list, NULL, diags, &out->optimized);
        if (s == TGC_OK) out->g = out->optimized;
    }
    if (s == TGC_OK) {
        tgc_placer_options po = {.soft_placement = opts->soft_placement, .small_host_bytes = opts->small_host_bytes};
        s = tgc_placer_run(out->g, out->devices, n, &po, diags, &out->placement);
    }
    if (s == TGC_OK && opts->partition) {
        s = tgc_partition_build(out->g, &out->placement, out->devices, out->n_devices, diags, &out->parts);
        out->partitioned = s == TGC_OK;
    }
    return s;
}

tgc_status tgc_compile(const tgc_graph *g, const char *devices, const tgc_compile_options *opts, tgc_diags *diags,
                       tgc_compiled *out) {
    tgc_placer_device list[TGC_PLACER_MAX_DEVICES];
    int n = 0;
    memset(out, 0, sizeof *out);
    out->g = g;
    tgc_status s = tgc_placer_parse_devices(devices != NULL ? devices : tgc_default_device_list(), list,
                                            TGC_PLACER_MAX_DEVICES, &n, diags);
    return s == TGC_OK ? tgc_compile_on(g, list, n, opts, diags, out) : s;
}

void tgc_compiled_release(tgc_compiled *c) {
    if (c == NULL) return;
    if (c->partitioned) tgc_partitioning_release(&c->parts);
    tgc_placement_release(&c->placement);
    tgc_graph_free(c->optimized);
    memset(c, 0, sizeof *c);
}
