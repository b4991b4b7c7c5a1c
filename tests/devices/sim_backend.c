/* The sim backend (sim_backend.h): its device (plain host memory through
 * tgc's allocator, no arena, the declared capacity as its limit) and its
 * kernels, each a copy of a cpu kernel's definition whose function finds
 * its cpu twin and runs it. */
#include "tests/devices/sim_backend.h"

#include "devices/device.h"
#include "devices/kernel.h"
#include "support/alloc.h"
#include "support/diag.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static atomic_long kernel_calls;

long tgc_sim_kernel_calls(void) { return atomic_load(&kernel_calls); }

/* ---- the device ------------------------------------------------------------------ */

static tgc_status sim_alloc(tgc_device *d, size_t nbytes, void **mem) {
    (void)d;
    size_t rounded = (nbytes + TGC_SIM_ALIGNMENT - 1) / TGC_SIM_ALIGNMENT * TGC_SIM_ALIGNMENT;
    *mem = rounded >= nbytes ? aligned_alloc(TGC_SIM_ALIGNMENT, rounded) : NULL;
    return *mem != NULL ? TGC_OK : TGC_ERR_NOMEM;
}

static void sim_free(tgc_device *d, void *mem) {
    (void)d;
    free(mem);
}

static void *sim_host_ptr(tgc_device *d, void *mem) {
    (void)d;
    return mem;
}

static tgc_status sim_copy_from_host(tgc_device *d, void *dst_mem, size_t offset, const void *src, size_t nbytes) {
    (void)d;
    memcpy((char *)dst_mem + offset, src, nbytes);
    return TGC_OK;
}

static tgc_status sim_copy_to_host(tgc_device *d, void *dst, void *src_mem, size_t offset, size_t nbytes) {
    (void)d;
    memcpy(dst, (const char *)src_mem + offset, nbytes);
    return TGC_OK;
}

static tgc_status sim_synchronize(tgc_device *d) {
    (void)d;
    return TGC_OK;
}

static void sim_destroy(tgc_device *d) { tgc_free(d); }

static const tgc_device_ops sim_ops = {
    .alloc = sim_alloc,
    .free = sim_free,
    .host_ptr = sim_host_ptr,
    .copy_from_host = sim_copy_from_host,
    .copy_to_host = sim_copy_to_host,
    .synchronize = sim_synchronize,
    .destroy = sim_destroy,
};

static tgc_device_kind sim_kind = -1;

static tgc_status sim_open(int index, tgc_diags *diags, tgc_device **out) {
    *out = NULL;
    if (index < 0 || index >= TGC_SIM_DEVICES) {
        tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "unknown-device",
                       "device 'sim%d' is not available (devices: sim0, sim1)", index);
        return TGC_ERR_INVALID;
    }
    tgc_device *d = tgc_malloc(sizeof *d);
    if (d == NULL) return TGC_ERR_NOMEM;
    tgc_device_init(d, &sim_ops, sim_kind, index);
    tgc_device_set_limit(d, TGC_SIM_CAPACITY);
    *out = d;
    return TGC_OK;
}

static atomic_int delay_us; /* tgc_sim_set_delay_us */

static int sim_list(tgc_device_info *out, int max) {
    for (int i = 0; i < TGC_SIM_DEVICES && i < max; i++) {
        memset(&out[i], 0, sizeof out[i]);
        snprintf(out[i].name, sizeof out[i].name, "sim%d", i);
        /* the delay in the description: figures measured at one delay are not another's (placer/cost.h) */
        snprintf(out[i].description, sizeof out[i].description, "simulated device (tests only; %d us a kernel)",
                 atomic_load(&delay_us));
        snprintf(out[i].platform, sizeof out[i].platform, "tgc tests");
        snprintf(out[i].type, sizeof out[i].type, "accelerator");
        snprintf(out[i].isa, sizeof out[i].isa, "cpu kernels");
        out[i].compute_units = 1;
        out[i].total_memory = TGC_SIM_CAPACITY;
        out[i].used_memory = 0;
        out[i].free_memory = TGC_SIM_CAPACITY;
    }
    return TGC_SIM_DEVICES;
}

static int sim_default_threads(void) { return 1; }

/* ---- the kernels ----------------------------------------------------------------- */

static tgc_kernel_def *sim_defs;            /* the cpu's, with fn = forward; {.op = NULL} last */
static const tgc_kernel_def **cpu_twin;     /* sim_defs[i]'s cpu kernel */
static const tgc_kernel_def *families[2];

/* Waits `us` microseconds, busy (a slow device computing). */
static void spin(int us) {
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 < us);
}

static tgc_status forward(tgc_kernel_ctx *c) {
    atomic_fetch_add(&kernel_calls, 1);
    int us = atomic_load(&delay_us);
    if (us > 0) spin(us);
    const tgc_kernel_def *cpu = cpu_twin[c->def - sim_defs];
    const tgc_kernel_def *self = c->def;
    c->def = cpu; /* the twin's own masks are the same; its choosers and helpers see a cpu kernel */
    tgc_status s = cpu->fn(c);
    c->def = self;
    return s;
}

static tgc_backend sim_backend = {
    .name = "sim",
    .prefix = "sim",
    .priority = 30,
    .host_memory = true,
    .host = false,
    .alignment = TGC_SIM_ALIGNMENT,
    .default_threads = sim_default_threads,
    .list = sim_list,
    .open = sim_open,
    .families = families,
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static tgc_status once_status = TGC_OK;

static void build_and_register(void) {
    const tgc_backend *cpu = tgc_backend_get(TGC_DEVICE_CPU);
    size_t n = 0;
    for (const tgc_kernel_def *const *f = cpu->families; *f != NULL; f++)
        for (const tgc_kernel_def *k = *f; k->op != NULL; k++) n++;
    sim_defs = calloc(n + 1, sizeof *sim_defs);
    cpu_twin = calloc(n + 1, sizeof *cpu_twin);
    if (sim_defs == NULL || cpu_twin == NULL) {
        once_status = TGC_ERR_NOMEM;
        return;
    }
    size_t i = 0;
    for (const tgc_kernel_def *const *f = cpu->families; *f != NULL; f++)
        for (const tgc_kernel_def *k = *f; k->op != NULL; k++) {
            if (strcmp(k->op, TGC_SIM_MISSING_OP) == 0) continue;
            sim_defs[i] = *k;
            sim_defs[i].fn = forward;
            cpu_twin[i++] = k;
        }
    families[0] = sim_defs;
    once_status = tgc_backend_register(&sim_backend, &sim_kind);
}

tgc_status tgc_sim_backend_register(tgc_device_kind *kind) {
    pthread_once(&once, build_and_register);
    *kind = sim_kind;
    return once_status;
}

void tgc_sim_set_delay_us(int us) { atomic_store(&delay_us, us > 0 ? us : 0); }
