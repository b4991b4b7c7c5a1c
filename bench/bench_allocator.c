/* Allocation speed: alloc/free pairs per second for the BFC arena
 * (devices/bfc_allocator.c) beside plain malloc, on one recorded trace of
 * tensor-like sizes (half tiny: scalars, shapes, biases; a third small
 * activations; some up to 1 MiB; a few up to 8 MiB) with a window of 64
 * live blocks, each pair freeing a random live block and allocating the
 * next size. Each allocation writes its first byte, as a kernel would.
 *
 * Four allocators: malloc/free; the arena alone (tgc_bfc_alloc over host
 * regions); a cpu device's tgc_buffer_alloc with its arena; and the same
 * with TGC_ARENA=0 (one tgc_malloc per buffer). Each figure is the median
 * of several runs of the whole trace, the allocators interleaved.
 *
 * Usage: bench_allocator [runs]   (default 7) */
#include "devices/bfc_allocator.h"
#include "devices/device.h"
#include "support/alloc.h"
#include "support/settings.h"

#include "bench_util.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAIRS 200000
#define WINDOW 64

static uint64_t rng = 0x243F6A8885A308D3ull;

static uint64_t next(void) {
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545F4914F6CDD1Dull;
}

/* Log-uniform in [lo, hi). */
static size_t between(size_t lo, size_t hi) {
    double u = (double)(next() >> 11) / 9007199254740992.0;
    double l = (double)lo, h = (double)hi;
    size_t v = (size_t)(l * exp(u * log(h / l)));
    return v < lo ? lo : v >= hi ? hi - 1 : v;
}

static size_t trace_size[PAIRS];
static int trace_slot[PAIRS];

static void make_trace(void) {
    for (int i = 0; i < PAIRS; i++) {
        uint64_t k = next() % 100;
        if (k < 50) trace_size[i] = between(4, 256);
        else if (k < 85) trace_size[i] = between(256, 64 << 10);
        else if (k < 98) trace_size[i] = between(64 << 10, 1 << 20);
        else trace_size[i] = between(1 << 20, 8 << 20);
        trace_slot[i] = (int)(next() % WINDOW);
    }
}

/* ---- the four allocators, one trace each ---- */

static double run_malloc(void) {
    void *live[WINDOW] = {0};
    double t0 = bench_now_s();
    for (int i = 0; i < PAIRS; i++) {
        int k = trace_slot[i];
        free(live[k]);
        live[k] = malloc(trace_size[i]);
        if (live[k] == NULL) exit(1);
        *(volatile char *)live[k] = 1;
    }
    double t = bench_now_s() - t0;
    for (int k = 0; k < WINDOW; k++) free(live[k]);
    return t;
}

static void *host_region(void *ctx, size_t nbytes) {
    (void)ctx;
    char *raw = tgc_malloc(nbytes + 256 + sizeof(void *));
    if (raw == NULL) return NULL;
    uintptr_t p = ((uintptr_t)(raw + sizeof(void *)) + 255) & ~(uintptr_t)255;
    memcpy((char *)p - sizeof(void *), &raw, sizeof raw);
    return (void *)p;
}

static void host_region_release(void *ctx, void *region, size_t nbytes) {
    (void)ctx;
    (void)nbytes;
    void *raw;
    memcpy(&raw, (char *)region - sizeof(void *), sizeof raw);
    tgc_free(raw);
}

static tgc_bfc *arena;

static double run_arena(void) {
    tgc_bfc_block live[WINDOW];
    int used[WINDOW] = {0};
    double t0 = bench_now_s();
    for (int i = 0; i < PAIRS; i++) {
        int k = trace_slot[i];
        if (used[k]) tgc_bfc_free(arena, live[k].chunk);
        if (tgc_bfc_alloc(arena, trace_size[i], &live[k]) != TGC_OK) exit(1);
        used[k] = 1;
        *(volatile char *)((char *)live[k].region + live[k].offset) = 1;
    }
    double t = bench_now_s() - t0;
    for (int k = 0; k < WINDOW; k++)
        if (used[k]) tgc_bfc_free(arena, live[k].chunk);
    return t;
}

static double run_device(tgc_device *d) {
    tgc_buffer *live[WINDOW] = {0};
    double t0 = bench_now_s();
    for (int i = 0; i < PAIRS; i++) {
        int k = trace_slot[i];
        tgc_buffer_release(live[k]);
        if (tgc_buffer_alloc(d, trace_size[i], &live[k]) != TGC_OK) exit(1);
        *(volatile char *)tgc_buffer_host_ptr(live[k]) = 1;
    }
    double t = bench_now_s() - t0;
    for (int k = 0; k < WINDOW; k++) tgc_buffer_release(live[k]);
    return t;
}

int main(int argc, char **argv) {
    int runs = argc > 1 ? atoi(argv[1]) : 7;
    if (runs < 1 || runs > 100) runs = 7;
    make_trace();
    tgc_bfc_config cfg = {.alignment = 256, .region_alloc = host_region, .region_release = host_region_release};
    arena = tgc_bfc_create(&cfg);
    tgc_device *with = tgc_cpu_device_create(0);
    setenv("TGC_ARENA", "0", 1);
    tgc_settings_read(); /* as a session would when made: the device is made directly */
    tgc_device *without = tgc_cpu_device_create(1);
    unsetenv("TGC_ARENA");
    tgc_settings_read();
    if (arena == NULL || with == NULL || without == NULL) return 1;

    enum { N = 4 };
    static const char *names[N] = {"malloc/free", "arena (tgc_bfc_alloc)", "cpu device, arena",
                                   "cpu device, TGC_ARENA=0"};
    double t[N][100];
    run_malloc(); /* warm-up: every allocator's memory mapped once */
    run_arena();
    run_device(with);
    run_device(without);
    for (int r = 0; r < runs; r++) {
        t[0][r] = run_malloc();
        t[1][r] = run_arena();
        t[2][r] = run_device(with);
        t[3][r] = run_device(without);
    }
    printf("alloc/free pairs of a tensor-like size mix, %d pairs, %d live, median of %d runs\n", PAIRS, WINDOW, runs);
    printf("%-26s %12s %14s\n", "allocator", "ns / pair", "pairs / s");
    double base = 0;
    for (int a = 0; a < N; a++) {
        double m = bench_median(t[a], runs);
        if (a == 0) base = m;
        printf("%-26s %12.1f %14.0f   (%.2fx malloc)\n", names[a], m / PAIRS * 1e9, PAIRS / m, base / m);
    }
    tgc_bfc_stats s = tgc_bfc_get_stats(arena);
    tgc_allocator_stats ds = tgc_device_stats(with);
    printf("arena: %lld regions, %.1f MiB reserved, peak %.1f MiB in use; cpu0: %lld regions, %.1f MiB reserved, "
           "peak %.1f MiB in use\n",
           (long long)s.num_regions, (double)s.bytes_reserved / 1048576, (double)s.peak_bytes_in_use / 1048576,
           (long long)ds.num_regions, (double)ds.bytes_reserved / 1048576, (double)ds.peak_bytes_in_use / 1048576);
    tgc_bfc_destroy(arena);
    tgc_device_destroy(with);
    tgc_device_destroy(without);
    return 0;
}
