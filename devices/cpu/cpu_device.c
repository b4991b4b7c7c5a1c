/* The host CPU device: 64-byte aligned host memory. cpu0, cpu1, ... are
 * separate virtual devices over the same memory, so multi-device placement
 * can be tested bit for bit on one machine. */
#include "devices/device.h"

#include "support/alloc.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#define CPU_ALIGNMENT 64

/* Over-allocate through tgc_malloc and keep the original block just before
 * the aligned address, so all host memory stays counted in one place. */
static tgc_status cpu_alloc(tgc_device *d, size_t nbytes, void **mem) {
    (void)d;
    if (nbytes > SIZE_MAX - CPU_ALIGNMENT - sizeof(void *)) return TGC_ERR_NOMEM;
    char *raw = tgc_malloc(nbytes + CPU_ALIGNMENT + sizeof(void *));
    if (raw == NULL) return TGC_ERR_NOMEM;
    uintptr_t p = ((uintptr_t)(raw + sizeof(void *)) + CPU_ALIGNMENT - 1) & ~(uintptr_t)(CPU_ALIGNMENT - 1);
    memcpy((char *)p - sizeof(void *), &raw, sizeof raw);
    *mem = (void *)p;
    return TGC_OK;
}

static void cpu_free(tgc_device *d, void *mem) {
    (void)d;
    void *raw;
    memcpy(&raw, (char *)mem - sizeof(void *), sizeof raw);
    tgc_free(raw);
}

static void *cpu_host_ptr(tgc_device *d, void *mem) {
    (void)d;
    return mem;
}

static tgc_status cpu_copy_from_host(tgc_device *d, void *dst, size_t offset, const void *src, size_t nbytes) {
    (void)d;
    if (nbytes) memcpy((char *)dst + offset, src, nbytes);
    return TGC_OK;
}

static tgc_status cpu_copy_to_host(tgc_device *d, void *dst, void *src, size_t offset, size_t nbytes) {
    (void)d;
    if (nbytes) memcpy(dst, (char *)src + offset, nbytes);
    return TGC_OK;
}

static tgc_status cpu_synchronize(tgc_device *d) {
    (void)d;
    return TGC_OK;
}

static void cpu_destroy(tgc_device *d) { tgc_free(d); }

static const tgc_device_ops cpu_ops = {
    .alloc = cpu_alloc,
    .free = cpu_free,
    .host_ptr = cpu_host_ptr,
    .copy_from_host = cpu_copy_from_host,
    .copy_to_host = cpu_copy_to_host,
    .synchronize = cpu_synchronize,
    .destroy = cpu_destroy,
};

tgc_device *tgc_cpu_device_create(int index) {
    tgc_device *d = tgc_malloc(sizeof *d);
    if (d == NULL) return NULL;
    tgc_device_init(d, &cpu_ops, TGC_DEVICE_CPU, index);
    return d;
}

static tgc_device host_device;
static pthread_once_t host_once = PTHREAD_ONCE_INIT;

static void host_device_init(void) {
    tgc_device_init(&host_device, &cpu_ops, TGC_DEVICE_CPU, 0);
    strcpy(host_device.name, "host");
}

tgc_device *tgc_host_device(void) {
    pthread_once(&host_once, host_device_init);
    return &host_device;
}
