/* The host CPU device: 64-byte aligned host memory. cpu0, cpu1, ... are
 * separate virtual devices over the same memory, so multi-device placement
 * can be tested bit for bit on one machine. Each cpuN has an arena
 * (bfc_allocator.c) over large regions of tgc_malloc'd memory; the host
 * device, and every device when TGC_ARENA=0, allocates each buffer on its
 * own. Under AddressSanitizer the arena's free memory is poisoned, so a
 * use after free or a read past a buffer's end is still reported. */
#include "devices/device.h"

#include "support/alloc.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#define TGC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TGC_ASAN 1
#endif
#endif
#ifdef TGC_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define CPU_ALIGNMENT 64
#define CPU_INITIAL_REGION ((size_t)1 << 20)
#define CPU_MAX_REGION ((size_t)256 << 20)

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

/* Arena regions: aligned blocks of the host allocator, poisoned whole
 * until the arena hands a piece of them out. */
static void *cpu_region_alloc(tgc_device *d, size_t nbytes) {
    void *mem = NULL;
    if (cpu_alloc(d, nbytes, &mem) != TGC_OK) return NULL;
    POISON(mem, nbytes);
    return mem;
}

static void cpu_region_free(tgc_device *d, void *region, size_t nbytes) {
    UNPOISON(region, nbytes);
    cpu_free(d, region);
}

static tgc_status cpu_view_create(tgc_device *d, void *region, size_t offset, size_t nbytes, void **mem) {
    (void)d;
    char *p = (char *)region + offset;
    UNPOISON(p, nbytes);
    *mem = p;
    return TGC_OK;
}

/* Poisons whole 8-byte granules: the chunk is a multiple of 64 bytes, so
 * rounding up stays inside it. */
static void cpu_view_release(tgc_device *d, void *mem, size_t nbytes) {
    (void)d;
    POISON(mem, (nbytes + 7) & ~(size_t)7);
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

static const tgc_arena_ops cpu_arena_ops = {
    .region_alloc = cpu_region_alloc,
    .region_free = cpu_region_free,
    .view_create = cpu_view_create,
    .view_release = cpu_view_release,
};

tgc_device *tgc_cpu_device_create(int index) {
    tgc_device *d = tgc_malloc(sizeof *d);
    if (d == NULL) return NULL;
    tgc_device_init(d, &cpu_ops, TGC_DEVICE_CPU, index);
    tgc_arena_config arena = {&cpu_arena_ops, CPU_ALIGNMENT, CPU_INITIAL_REGION, CPU_MAX_REGION};
    if (tgc_device_arena_init(d, &arena) != TGC_OK) {
        tgc_device_destroy(d);
        return NULL;
    }
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
