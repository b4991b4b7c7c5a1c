/* The cpu's backend table (devices/backend.h): cpu0, cpu1, ... are
 * virtual host devices over the host's memory, each with a pool of its
 * own; kind 0, the host. */
#include "devices/backend.h"

#include "devices/cpu/dnnl_conv.h"
#include "devices/cpu/ew.h"
#include "devices/device.h"
#include "devices/kernel.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

extern const tgc_kernel_def tgc_cpu_kernels_elementwise[], tgc_cpu_kernels_nn[], tgc_cpu_kernels_shape[],
    tgc_cpu_kernels_reduce[], tgc_cpu_kernels_loss[], tgc_cpu_kernels_rnn[], tgc_cpu_kernels_tfidf[],
    tgc_cpu_kernels_string[], tgc_cpu_kernels_convt[], tgc_cpu_kernels_resize[], tgc_cpu_kernels_detection[],
    tgc_cpu_kernels_quant[], tgc_cpu_kernels_quant_conv[], tgc_cpu_kernels_conv_nhwc[], tgc_cpu_kernels_pool_nhwc[],
    tgc_cpu_kernels_signal[], tgc_cpu_kernels_random[], tgc_cpu_kernels_normalize[],
    tgc_cpu_kernels_linalg[], tgc_cpu_kernels_indexing[], tgc_cpu_kernels_fused[],
    tgc_cpu_kernels_attention[], tgc_cpu_kernels_sequence[], tgc_cpu_kernels_bitwise[];

static const tgc_kernel_def *const families[] = {
    tgc_cpu_kernels_string, /* first: its string-only movers stand before the any-dtype ones */
    tgc_cpu_kernels_elementwise,
    tgc_cpu_kernels_nn,
    tgc_cpu_kernels_shape,
    tgc_cpu_kernels_reduce,
    tgc_cpu_kernels_loss,
    tgc_cpu_kernels_rnn,
    tgc_cpu_kernels_tfidf,
    tgc_cpu_kernels_convt,
    tgc_cpu_kernels_resize,
    tgc_cpu_kernels_detection,
    tgc_cpu_kernels_quant,
    tgc_cpu_kernels_quant_conv,
    tgc_cpu_kernels_conv_nhwc,
    tgc_cpu_kernels_pool_nhwc,
    tgc_cpu_kernels_signal,
    tgc_cpu_kernels_random,
    tgc_cpu_kernels_normalize,
    tgc_cpu_kernels_linalg,
    tgc_cpu_kernels_indexing,
    tgc_cpu_kernels_fused,
    tgc_cpu_kernels_attention,
    tgc_cpu_kernels_sequence,
    tgc_cpu_kernels_bitwise,
    NULL,
};

/* "model name : ..." from /proc/cpuinfo, or "host CPU". */
static void cpu_model(char *out, size_t size) {
    snprintf(out, size, "host CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL) return;
    char line[512];
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "model name", 10) != 0) continue;
        const char *colon = strchr(line, ':');
        if (colon == NULL) break;
        colon++;
        while (*colon == ' ') colon++;
        snprintf(out, size, "%s", colon);
        out[strcspn(out, "\n")] = '\0';
        break;
    }
    fclose(f);
}

/* MemAvailable from /proc/meminfo in bytes, or -1. */
static int64_t available_memory(void) {
    FILE *f = fopen("/proc/meminfo", "r");
    if (f == NULL) return -1;
    char line[256];
    long long kib = -1;
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "MemAvailable: %lld kB", &kib) == 1) break;
    fclose(f);
    return kib < 0 ? -1 : (int64_t)kib * 1024;
}

/* One entry, "cpu": the host's memory, shared by cpu0, cpu1, ... */
static int cpu_list(tgc_device_info *out, int max) {
    if (max < 1) return 1;
    tgc_device_info *d = out;
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "cpu");
    cpu_model(d->description, sizeof d->description);
    snprintf(d->platform, sizeof d->platform, "host");
    snprintf(d->type, sizeof d->type, "cpu");
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    d->compute_units = cores > 0 ? (unsigned)cores : 1;
    snprintf(d->isa, sizeof d->isa, "%s", tgc_cpu_ew_loops()->isa);
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    d->total_memory = pages > 0 && page > 0 ? (int64_t)pages * page : -1;
    d->used_memory = tgc_device_stats(tgc_host_device()).bytes_in_use;
    d->free_memory = available_memory();
    return 1;
}

static tgc_status cpu_open(int index, tgc_diags *diags, tgc_device **out) {
    (void)diags;
    *out = tgc_cpu_device_create(index);
    return *out != NULL ? TGC_OK : TGC_ERR_NOMEM;
}

/* One thread a core. */
static int cpu_default_threads(void) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores > 0 ? (int)cores : 1;
}

/* _ConvNHWC only where oneDNN makes it (its fallback, NCHW copies, is for
 * shapes the session did not plan, not a kernel to choose): without it the
 * nhwc-conv pass leaves float convolutions as they are. */
static bool cpu_supports(const tgc_kernel_def *k, const tgc_node *n) {
    (void)n;
    return strcmp(k->op, "_ConvNHWC") != 0 || tgc_dnnl_conv_available();
}

const tgc_backend tgc_cpu_backend = {
    .name = "cpu",
    .prefix = "cpu",
    .priority = 10,
    .host_memory = true,
    .host = true,
    .alignment = 64,
    .default_threads = cpu_default_threads,
    .list = cpu_list,
    .open = cpu_open,
    .families = families,
    .supports = cpu_supports,
};
