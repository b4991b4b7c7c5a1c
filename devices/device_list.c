/* The devices this machine offers, for `tgc devices`. */
#include "tgc.h"

#include "devices/cpu/ew.h"
#include "devices/device.h"
#include "devices/opencl/opencl.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

int tgc_devices_list(tgc_device_info *out, int max) {
    int n = 0;
    if (max > 0) {
        tgc_device_info *d = &out[n++];
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
    }
    tgc_cl_info infos[16];
    int count = 0;
    tgc_cl_list(infos, 16, &count);
    for (int i = 0; i < count && n < max; i++) {
        tgc_device_info *d = &out[n++];
        memset(d, 0, sizeof *d);
        snprintf(d->name, sizeof d->name, "gpu%d", i % 1000);
        snprintf(d->description, sizeof d->description, "%.255s", infos[i].name);
        snprintf(d->platform, sizeof d->platform, "%.127s", infos[i].platform);
        snprintf(d->type, sizeof d->type, "%.15s", infos[i].type);
        d->compute_units = infos[i].compute_units;
        snprintf(d->isa, sizeof d->isa, "opencl");
        d->total_memory = (int64_t)infos[i].global_mem_size;
        d->used_memory = 0; /* no session of this process holds the device */
        d->free_memory = infos[i].free_mem;
    }
    return n;
}
