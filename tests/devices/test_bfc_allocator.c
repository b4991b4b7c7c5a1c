/* The BFC arena (devices/bfc_allocator.c) and the device memory built on
 * it: best fit, splitting and coalescing, regions that grow and shrink, the
 * limit, the fragmentation figure, alignment, a randomized run against a
 * simple model, threads, the cpu and gpu devices' arenas through
 * tgc_buffer_alloc, fault injection, and the host allocator's guard-byte
 * mode (in a child process that must abort).
 *
 * The child processes re-run this executable with TGC_BFC_CHILD set; the
 * first case then does the child's part and exits, so it must stay first. */
#include "tests/harness.h"

#include "devices/bfc_allocator.h"
#include "devices/device.h"
#include "devices/opencl/opencl.h"
#include "support/alloc.h"
#include "support/settings.h"

#include <CUnit/CUnit.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif

/* ---- host regions for an arena under test ---------------------------------- */

/* Regions from tgc_malloc, aligned to `align`, counted. */
typedef struct regions {
    size_t align;
    int live, made;
    int64_t bytes;
    int fail; /* refuse every region while set */
    size_t last_size;
} regions;

static void *region_alloc(void *ctx, size_t nbytes) {
    regions *r = ctx;
    if (r->fail) return NULL;
    char *raw = tgc_malloc(nbytes + r->align + sizeof(void *));
    if (raw == NULL) return NULL;
    uintptr_t p = ((uintptr_t)(raw + sizeof(void *)) + r->align - 1) & ~(uintptr_t)(r->align - 1);
    memcpy((char *)p - sizeof(void *), &raw, sizeof raw);
    r->live++;
    r->made++;
    r->bytes += (int64_t)nbytes;
    r->last_size = nbytes;
    return (void *)p;
}

static void region_release(void *ctx, void *region, size_t nbytes) {
    regions *r = ctx;
    void *raw;
    memcpy(&raw, (char *)region - sizeof(void *), sizeof raw);
    tgc_free(raw);
    r->live--;
    r->bytes -= (int64_t)nbytes;
}

static tgc_bfc *make_arena(regions *r, size_t align, size_t initial, size_t min_split, int64_t limit) {
    memset(r, 0, sizeof *r);
    r->align = align;
    tgc_bfc_config cfg = {
        .alignment = align,
        .initial_region_bytes = initial,
        .min_split_bytes = min_split,
        .bytes_limit = limit,
        .region_alloc = region_alloc,
        .region_release = region_release,
        .ctx = r,
    };
    tgc_bfc *a = tgc_bfc_create(&cfg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    return a;
}

static tgc_bfc_block must_alloc(tgc_bfc *a, size_t n) {
    tgc_bfc_block b;
    CU_ASSERT_EQUAL_FATAL(tgc_bfc_alloc(a, n, &b), TGC_OK);
    return b;
}

static char *ptr_of(tgc_bfc_block b) { return (char *)b.region + b.offset; }

/* ---- child processes --------------------------------------------------------- */

/* The child's part, when this process is one (see the top). */
static void child_part(const char *what) {
    if (strcmp(what, "guard") == 0) {
        /* Writes one byte past a 40-byte block: the free must abort. */
        char *p = tgc_malloc(40);
        if (p == NULL) _exit(3);
        memset(p, 1, 41);
        tgc_free(p);
        _exit(0); /* not reached when the guard works */
    }
    if (strcmp(what, "clean") == 0) {
        /* Guard mode keeps the counters exact and leaves good blocks alone. */
        tgc_host_alloc_stats s0 = tgc_host_alloc_stats_get();
        char *p = tgc_malloc(100);
        memset(p, 7, 100);
        tgc_host_alloc_stats s1 = tgc_host_alloc_stats_get();
        p = tgc_realloc(p, 1000);
        memset(p + 100, 8, 900);
        tgc_host_alloc_stats s2 = tgc_host_alloc_stats_get();
        int ok = s1.live_bytes - s0.live_bytes == 100 && s2.live_bytes - s0.live_bytes == 1000 &&
                 s2.live_blocks - s0.live_blocks == 1 && p[99] == 7 && p[100] == 8;
        tgc_free(p);
        ok = ok && tgc_host_alloc_stats_get().live_bytes == s0.live_bytes;
        _exit(ok ? 0 : 4);
    }
    if (strcmp(what, "uaf") == 0) {
        /* Reads a released cpu buffer: AddressSanitizer must report it although
         * the memory is still the arena's. */
        tgc_device *d = tgc_cpu_device_create(0);
        tgc_buffer *b;
        if (d == NULL || tgc_buffer_alloc(d, 256, &b) != TGC_OK) _exit(3);
        volatile char *p = tgc_buffer_host_ptr(b);
        p[0] = 1;
        tgc_buffer_release(b);
        char c = p[0];
        _exit(c == 99 ? 5 : 0); /* not reached under AddressSanitizer */
    }
    _exit(2);
}

/* Runs this executable as child `what` with `env` (NAME=VALUE or NULL);
 * returns its wait status and its stderr in err. */
static int run_child(const char *what, const char *env, char *err, size_t err_size) {
    int fds[2];
    CU_ASSERT_FATAL(pipe(fds) == 0);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        if (freopen("/dev/null", "w", stdout) == NULL) _exit(2);
        setenv("TGC_BFC_CHILD", what, 1);
        if (env != NULL) putenv((char *)env);
        execl("/proc/self/exe", "test_bfc_allocator", (char *)NULL);
        _exit(2);
    }
    close(fds[1]);
    size_t n = 0;
    ssize_t got;
    while ((got = read(fds[0], err + n, err_size - 1 - n)) > 0) n += (size_t)got;
    err[n] = '\0';
    close(fds[0]);
    int status = 0;
    CU_ASSERT(waitpid(pid, &status, 0) == pid);
    return status;
}

static void test_guard_bytes(void) {
    const char *child = getenv("TGC_BFC_CHILD");
    if (child != NULL) child_part(child);
    static char err[16384];
    int status = run_child("guard", "TGC_DEBUG_ALLOC=1", err, sizeof err);
    CU_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "block of 40 bytes"));
    status = run_child("clean", "TGC_DEBUG_ALLOC=1", err, sizeof err);
    CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* Without the mode the same overrun goes unseen: the mode is what checks. */
    status = run_child("guard", "TGC_DEBUG_ALLOC=0", err, sizeof err);
#ifndef TEST_ASAN
    CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
#endif
}

static void test_asan_sees_arena_use_after_free(void) {
#ifdef TEST_ASAN
    const char *arena = getenv("TGC_ARENA");
    if (arena != NULL && strcmp(arena, "0") == 0) return;
    static char err[65536];
    int status = run_child("uaf", "ASAN_OPTIONS=detect_leaks=0", err, sizeof err);
    CU_ASSERT(!(WIFEXITED(status) && WEXITSTATUS(status) == 0));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "use-after-poison"));
#endif
}

/* ---- the arena on its own ------------------------------------------------------ */

static void test_rounding_and_alignment(void) {
    static const size_t aligns[] = {64, 256, 4096};
    for (int k = 0; k < 3; k++) {
        size_t al = aligns[k];
        regions r;
        tgc_bfc *a = make_arena(&r, al, 1 << 16, 0, 0);
        static const size_t sizes[] = {1, 63, 64, 65, 255, 256, 257, 1000, 4095, 4096, 4097};
        tgc_bfc_block b[11];
        int64_t sum = 0;
        for (int i = 0; i < 11; i++) {
            b[i] = must_alloc(a, sizes[i]);
            size_t want = (sizes[i] + al - 1) / al * al;
            CU_ASSERT_EQUAL(b[i].size, want);
            CU_ASSERT_EQUAL(b[i].offset % al, 0);
            CU_ASSERT_EQUAL((uintptr_t)ptr_of(b[i]) % al, 0);
            sum += (int64_t)want;
        }
        tgc_bfc_stats s = tgc_bfc_get_stats(a);
        CU_ASSERT_EQUAL(s.bytes_in_use, sum); /* rounded bytes, as handed out */
        CU_ASSERT_EQUAL(s.largest_alloc_size, (int64_t)((4097 + al - 1) / al * al));
        CU_ASSERT_EQUAL(s.live_allocs, 11);
        CU_ASSERT(tgc_bfc_check(a));
        for (int i = 0; i < 11; i++) tgc_bfc_free(a, b[i].chunk);
        CU_ASSERT(tgc_bfc_check(a));
        tgc_bfc_destroy(a);
        CU_ASSERT_EQUAL(r.live, 0);
    }
}

/* Free chunks of 4096, 1024, 2048 and 1536 bytes kept apart by chunks in
 * use: each request takes the smallest that fits. */
static void test_best_fit(void) {
    regions r;
    tgc_bfc *a = make_arena(&r, 256, 1 << 16, 0, 0);
    static const size_t sizes[] = {4096, 1024, 2048, 1536};
    tgc_bfc_block hole[4], spacer[4];
    for (int i = 0; i < 4; i++) {
        hole[i] = must_alloc(a, sizes[i]);
        spacer[i] = must_alloc(a, 256);
    }
    for (int i = 0; i < 4; i++) tgc_bfc_free(a, hole[i].chunk);
    CU_ASSERT(tgc_bfc_check(a));
    /* 1000 -> 1024: the 1024 hole exactly. */
    tgc_bfc_block b = must_alloc(a, 1000);
    CU_ASSERT_EQUAL(b.offset, hole[1].offset);
    /* 1100 -> 1280: the 1536 hole, split (256 left behind it). */
    tgc_bfc_block c = must_alloc(a, 1100);
    CU_ASSERT_EQUAL(c.offset, hole[3].offset);
    CU_ASSERT_EQUAL(c.size, 1280);
    /* 256: the 256 left of the 1536 hole, not the big tail. */
    tgc_bfc_block d = must_alloc(a, 200);
    CU_ASSERT_EQUAL(d.offset, hole[3].offset + 1280);
    /* 1800 -> 2048 and 3000 -> 3072. */
    tgc_bfc_block e = must_alloc(a, 1800);
    CU_ASSERT_EQUAL(e.offset, hole[2].offset);
    tgc_bfc_block f = must_alloc(a, 3000);
    CU_ASSERT_EQUAL(f.offset, hole[0].offset);
    /* Nothing of 1024 is free now but the 1024 left of the 4096 hole. */
    tgc_bfc_block g = must_alloc(a, 1024);
    CU_ASSERT_EQUAL(g.offset, hole[0].offset + 3072);
    /* Two free chunks of 1024 (at 4352, then at 3072): the lowest address wins. */
    tgc_bfc_free(a, b.chunk);
    tgc_bfc_free(a, g.chunk);
    tgc_bfc_block h = must_alloc(a, 1024);
    CU_ASSERT_EQUAL(h.offset, hole[0].offset + 3072);
    /* 512: its bin is empty, so the smallest chunk of the next non-empty bin. */
    tgc_bfc_block i = must_alloc(a, 512);
    CU_ASSERT_EQUAL(i.offset, hole[1].offset);
    CU_ASSERT_EQUAL(tgc_bfc_get_stats(a).num_regions, 1);
    CU_ASSERT(tgc_bfc_check(a));
    tgc_bfc_block all[] = {c, d, e, f, h, i, spacer[0], spacer[1], spacer[2], spacer[3]};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tgc_bfc_free(a, all[i].chunk);
    tgc_bfc_stats s = tgc_bfc_get_stats(a);
    CU_ASSERT_EQUAL(s.bytes_in_use, 0);
    CU_ASSERT_EQUAL(s.largest_free_chunk, 1 << 16); /* one chunk again */
    CU_ASSERT(tgc_bfc_check(a));
    tgc_bfc_destroy(a);
}

/* Three neighbours freed in every order merge into one chunk. */
static void test_split_and_coalesce(void) {
    static const int orders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    regions r;
    tgc_bfc *a = make_arena(&r, 256, 4096, 0, 0);
    for (int o = 0; o < 6; o++) {
        tgc_bfc_block b[4];
        for (int i = 0; i < 4; i++) {
            b[i] = must_alloc(a, 1024);
            CU_ASSERT_EQUAL(b[i].offset, (size_t)i * 1024); /* split off the front, in order */
        }
        CU_ASSERT_EQUAL(tgc_bfc_get_stats(a).free_bytes, 0);
        for (int k = 0; k < 3; k++) {
            tgc_bfc_free(a, b[orders[o][k]].chunk);
            CU_ASSERT(tgc_bfc_check(a));
        }
        tgc_bfc_stats s = tgc_bfc_get_stats(a);
        CU_ASSERT_EQUAL(s.free_bytes, 3072);
        CU_ASSERT_EQUAL(s.largest_free_chunk, 3072);
        CU_ASSERT_EQUAL(s.fragmentation, 0.0);
        tgc_bfc_block m = must_alloc(a, 3072); /* the merged chunk, whole */
        CU_ASSERT_EQUAL(m.offset, 0);
        tgc_bfc_free(a, m.chunk);
        tgc_bfc_free(a, b[3].chunk);
        s = tgc_bfc_get_stats(a);
        CU_ASSERT_EQUAL(s.largest_free_chunk, 4096);
        CU_ASSERT_EQUAL(s.num_regions, 1);
    }
    tgc_bfc_destroy(a);

    /* A rest smaller than min_split_bytes stays with the chunk. */
    a = make_arena(&r, 256, 4096, 1024, 0);
    tgc_bfc_block b = must_alloc(a, 3584);
    CU_ASSERT_EQUAL(b.size, 4096);
    CU_ASSERT_EQUAL(tgc_bfc_get_stats(a).bytes_in_use, 4096);
    tgc_bfc_free(a, b.chunk);
    b = must_alloc(a, 3072); /* 1024 left: split */
    CU_ASSERT_EQUAL(b.size, 3072);
    CU_ASSERT(tgc_bfc_check(a));
    tgc_bfc_free(a, b.chunk);
    tgc_bfc_destroy(a);
}

static void test_growth_and_shrink(void) {
    regions r;
    tgc_bfc *a = make_arena(&r, 256, 4096, 0, 0);
    CU_ASSERT_EQUAL(tgc_bfc_get_stats(a).bytes_reserved, 0); /* no region before the first allocation */
    tgc_bfc_block b1 = must_alloc(a, 4096);                  /* the first region, full */
    CU_ASSERT_EQUAL(r.last_size, 4096);
    tgc_bfc_block b2 = must_alloc(a, 1024); /* double the previous */
    CU_ASSERT_EQUAL(r.last_size, 8192);
    tgc_bfc_block b3 = must_alloc(a, 20000); /* the request rounded, more than double */
    CU_ASSERT_EQUAL(r.last_size, 20224);
    tgc_bfc_block b4 = must_alloc(a, 7168); /* fits the second region's rest */
    CU_ASSERT_EQUAL(r.made, 3);
    tgc_bfc_block b5 = must_alloc(a, 256); /* double again: 40448 */
    CU_ASSERT_EQUAL(r.last_size, 40448);
    tgc_bfc_stats s = tgc_bfc_get_stats(a);
    CU_ASSERT_EQUAL(s.num_regions, 4);
    CU_ASSERT_EQUAL(s.bytes_reserved, 4096 + 8192 + 20224 + 40448);
    CU_ASSERT_EQUAL(s.bytes_reserved, r.bytes);
    CU_ASSERT(tgc_bfc_check(a));
    /* Shrink gives back only the fully free regions. */
    tgc_bfc_free(a, b1.chunk);
    tgc_bfc_free(a, b2.chunk);
    CU_ASSERT_EQUAL(tgc_bfc_shrink(a), 4096); /* the second region still holds b4 */
    s = tgc_bfc_get_stats(a);
    CU_ASSERT_EQUAL(s.bytes_reserved, 8192 + 20224 + 40448);
    CU_ASSERT_EQUAL(s.num_regions, 3);
    CU_ASSERT_EQUAL(r.live, 3);
    CU_ASSERT(tgc_bfc_check(a));
    tgc_bfc_free(a, b3.chunk);
    tgc_bfc_free(a, b4.chunk);
    tgc_bfc_free(a, b5.chunk);
    CU_ASSERT_EQUAL(tgc_bfc_shrink(a), 8192 + 20224 + 40448);
    s = tgc_bfc_get_stats(a);
    CU_ASSERT_EQUAL(s.bytes_reserved, 0);
    CU_ASSERT_EQUAL(s.num_regions, 0);
    CU_ASSERT_EQUAL(s.peak_bytes_reserved, 4096 + 8192 + 20224 + 40448);
    CU_ASSERT_EQUAL(r.live, 0);
    CU_ASSERT_EQUAL(tgc_bfc_shrink(a), 0);
    /* With no region left, growth starts over from the first size. */
    tgc_bfc_block b6 = must_alloc(a, 1);
    CU_ASSERT_EQUAL(r.last_size, 4096);
    tgc_bfc_free(a, b6.chunk);
    /* A region that cannot be had is a clean failure. */
    r.fail = 1;
    tgc_bfc_block big;
    CU_ASSERT_EQUAL(tgc_bfc_alloc(a, 1 << 20, &big), TGC_ERR_NOMEM);
    r.fail = 0;
    CU_ASSERT(tgc_bfc_check(a));
    tgc_bfc_destroy(a);
    CU_ASSERT_EQUAL(r.live, 0);
}

static void same_figures(tgc_bfc_stats x, tgc_bfc_stats y) {
    CU_ASSERT_EQUAL(x.num_allocs, y.num_allocs);
    CU_ASSERT_EQUAL(x.live_allocs, y.live_allocs);
    CU_ASSERT_EQUAL(x.bytes_in_use, y.bytes_in_use);
    CU_ASSERT_EQUAL(x.peak_bytes_in_use, y.peak_bytes_in_use);
    CU_ASSERT_EQUAL(x.largest_alloc_size, y.largest_alloc_size);
    CU_ASSERT_EQUAL(x.bytes_reserved, y.bytes_reserved);
    CU_ASSERT_EQUAL(x.num_regions, y.num_regions);
}

static void test_limit(void) {
    regions r;
    tgc_bfc *a = make_arena(&r, 256, 4096, 0, 16384);
    tgc_bfc_block b1 = must_alloc(a, 4096); /* region 4096 */
    tgc_bfc_block b2 = must_alloc(a, 8192); /* region 8192: 12288 reserved */
    tgc_bfc_stats before = tgc_bfc_get_stats(a);
    tgc_bfc_block no;
    CU_ASSERT_EQUAL(tgc_bfc_alloc(a, 8192, &no), TGC_ERR_NOMEM); /* would need 20480 */
    same_figures(tgc_bfc_get_stats(a), before);
    CU_ASSERT_EQUAL(r.made, 2);
    CU_ASSERT(tgc_bfc_check(a));
    /* The growth size (16384) is cut to what the limit leaves. */
    tgc_bfc_block b3 = must_alloc(a, 4000);
    CU_ASSERT_EQUAL(r.last_size, 4096);
    CU_ASSERT_EQUAL(tgc_bfc_get_stats(a).bytes_reserved, 16384);
    CU_ASSERT_EQUAL(tgc_bfc_alloc(a, 1, &no), TGC_ERR_NOMEM);
    /* Fully free regions are given back to make room under the limit. */
    tgc_bfc_free(a, b1.chunk);
    tgc_bfc_free(a, b3.chunk);
    tgc_bfc_block b4 = must_alloc(a, 8000); /* 4096 + 4096 free but apart: both go, one of 8192 comes */
    CU_ASSERT_EQUAL(r.last_size, 8192);
    tgc_bfc_stats s = tgc_bfc_get_stats(a);
    CU_ASSERT_EQUAL(s.bytes_reserved, 16384);
    CU_ASSERT_EQUAL(s.num_regions, 2);
    CU_ASSERT_EQUAL(r.live, 2);
    /* A lower limit keeps the regions held and refuses new ones. */
    tgc_bfc_set_limit(a, 8192);
    CU_ASSERT_EQUAL(tgc_bfc_get_stats(a).bytes_limit, 8192);
    CU_ASSERT_EQUAL(tgc_bfc_alloc(a, 256, &no), TGC_ERR_NOMEM);
    tgc_bfc_set_limit(a, 0);
    tgc_bfc_block b5 = must_alloc(a, 256);
    tgc_bfc_free(a, b2.chunk);
    tgc_bfc_free(a, b4.chunk);
    tgc_bfc_free(a, b5.chunk);
    CU_ASSERT(tgc_bfc_check(a));
    tgc_bfc_destroy(a);
    CU_ASSERT_EQUAL(r.live, 0);
}

/* One region of 8 chunks of 1024; free #1, #3, #4 and #6: free chunks of
 * 1024, 2048 (#3 and #4 merged) and 1024, so 1 - 2048 / 4096 = 0.5; then
 * free #7, which merges with #6: 1 - 2048 / 5120 = 0.6. */
static void test_fragmentation(void) {
    regions r;
    tgc_bfc *a = make_arena(&r, 256, 8192, 0, 0);
    tgc_bfc_block b[8];
    for (int i = 0; i < 8; i++) b[i] = must_alloc(a, 1024);
    tgc_bfc_stats s = tgc_bfc_get_stats(a);
    CU_ASSERT_EQUAL(s.free_bytes, 0);
    CU_ASSERT_EQUAL(s.fragmentation, 0.0); /* nothing free */
    tgc_bfc_free(a, b[1].chunk);
    tgc_bfc_free(a, b[3].chunk);
    tgc_bfc_free(a, b[4].chunk);
    tgc_bfc_free(a, b[6].chunk);
    s = tgc_bfc_get_stats(a);
    CU_ASSERT_EQUAL(s.free_bytes, 4096);
    CU_ASSERT_EQUAL(s.largest_free_chunk, 2048);
    CU_ASSERT_DOUBLE_EQUAL(s.fragmentation, 0.5, 1e-12);
    tgc_bfc_free(a, b[7].chunk);
    s = tgc_bfc_get_stats(a);
    CU_ASSERT_EQUAL(s.free_bytes, 5120);
    CU_ASSERT_EQUAL(s.largest_free_chunk, 2048);
    CU_ASSERT_DOUBLE_EQUAL(s.fragmentation, 0.6, 1e-12);
    /* One free chunk: no fragmentation. */
    tgc_bfc_free(a, b[0].chunk);
    tgc_bfc_free(a, b[2].chunk);
    tgc_bfc_free(a, b[5].chunk);
    s = tgc_bfc_get_stats(a);
    CU_ASSERT_EQUAL(s.free_bytes, 8192);
    CU_ASSERT_EQUAL(s.fragmentation, 0.0);
    tgc_bfc_destroy(a);
}

/* ---- a randomized run against a model --------------------------------------- */

static uint64_t rng_next(uint64_t *s) {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

/* A size from a tensor-like mix: mostly small, some medium, a few large. */
static size_t random_size(uint64_t *s) {
    uint64_t k = rng_next(s) % 100;
    if (k < 60) return 1 + (size_t)(rng_next(s) % 2048);
    if (k < 95) return 1 + (size_t)(rng_next(s) % (128 << 10));
    return 1 + (size_t)(rng_next(s) % (2 << 20));
}

typedef struct live_block {
    tgc_bfc_block b;
    size_t requested;
    unsigned char tag;
} live_block;

static int by_address(const void *x, const void *y) {
    const live_block *a = x, *b = y;
    if (a->b.region != b->b.region) return (uintptr_t)a->b.region < (uintptr_t)b->b.region ? -1 : 1;
    return a->b.offset < b->b.offset ? -1 : a->b.offset > b->b.offset;
}

/* The model: no two live blocks overlap, each is aligned, in-use bytes are
 * the sum of the rounded sizes, and each block still holds its own tag. */
static void check_model(tgc_bfc *a, live_block *live, int n, int64_t in_use, size_t align) {
    CU_ASSERT_FATAL(tgc_bfc_check(a));
    tgc_bfc_stats s = tgc_bfc_get_stats(a);
    CU_ASSERT_EQUAL(s.bytes_in_use, in_use);
    CU_ASSERT_EQUAL(s.live_allocs, n);
    CU_ASSERT(s.bytes_reserved >= in_use);
    live_block *sorted = tgc_malloc((size_t)(n ? n : 1) * sizeof *sorted);
    memcpy(sorted, live, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, by_address);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        char *p = ptr_of(sorted[i].b);
        if ((uintptr_t)p % align != 0) bad++;
        if ((unsigned char)p[0] != sorted[i].tag || (unsigned char)p[sorted[i].requested - 1] != sorted[i].tag) bad++;
        if (i + 1 < n && sorted[i + 1].b.region == sorted[i].b.region &&
            sorted[i].b.offset + sorted[i].b.size > sorted[i + 1].b.offset)
            bad++;
    }
    CU_ASSERT_EQUAL(bad, 0);
    tgc_free(sorted);
}

static void test_random_against_model(void) {
    enum { OPS = 20000, MAX_LIVE = 400 };
    regions r;
    tgc_bfc *a = make_arena(&r, 256, 1 << 20, 0, 0);
    live_block *live = tgc_malloc(MAX_LIVE * sizeof *live);
    int n = 0;
    int64_t in_use = 0, peak = 0, allocs = 0;
    uint64_t s = 0x1234567887654321ull;
    for (int op = 0; op < OPS; op++) {
        bool do_alloc = n == 0 || (n < MAX_LIVE && rng_next(&s) % 100 < 52);
        if (do_alloc) {
            live_block *l = &live[n];
            l->requested = random_size(&s);
            CU_ASSERT_EQUAL_FATAL(tgc_bfc_alloc(a, l->requested, &l->b), TGC_OK);
            CU_ASSERT_EQUAL(l->b.size, (l->requested + 255) / 256 * 256);
            l->tag = (unsigned char)(op * 7 + 1);
            ptr_of(l->b)[0] = (char)l->tag;
            ptr_of(l->b)[l->requested - 1] = (char)l->tag;
            in_use += (int64_t)l->b.size;
            if (in_use > peak) peak = in_use;
            allocs++;
            n++;
        } else {
            int k = (int)(rng_next(&s) % (uint64_t)n);
            CU_ASSERT_EQUAL((unsigned char)ptr_of(live[k].b)[0], live[k].tag);
            tgc_bfc_free(a, live[k].b.chunk);
            in_use -= (int64_t)live[k].b.size;
            live[k] = live[--n];
        }
        if (op % 1000 == 999 && rng_next(&s) % 2) tgc_bfc_shrink(a);
        if (op % 250 == 0) check_model(a, live, n, in_use, 256);
    }
    check_model(a, live, n, in_use, 256);
    tgc_bfc_stats st = tgc_bfc_get_stats(a);
    CU_ASSERT_EQUAL(st.peak_bytes_in_use, peak);
    CU_ASSERT_EQUAL(st.num_allocs, allocs);
    printf("\n  %d ops: peak %lld bytes in use, %lld reserved at the end in %lld regions, fragmentation %.3f\n", OPS,
           (long long)peak, (long long)st.bytes_reserved, (long long)st.num_regions, st.fragmentation);
    while (n > 0) tgc_bfc_free(a, live[--n].b.chunk);
    tgc_bfc_shrink(a);
    st = tgc_bfc_get_stats(a);
    CU_ASSERT_EQUAL(st.bytes_in_use, 0);
    CU_ASSERT_EQUAL(st.bytes_reserved, 0);
    CU_ASSERT_EQUAL(r.live, 0);
    tgc_free(live);
    tgc_bfc_destroy(a);
}

/* ---- threads ---------------------------------------------------------------------- */

typedef struct hammer {
    tgc_bfc *a;
    uint64_t seed;
    int bad;
} hammer;

static void *hammer_run(void *arg) {
    hammer *h = arg;
    enum { LIVE = 32, OPS = 20000 };
    tgc_bfc_block b[LIVE];
    size_t req[LIVE];
    int n = 0;
    unsigned char tag = (unsigned char)(h->seed & 0xff);
    for (int op = 0; op < OPS; op++) {
        if (n < LIVE && (n == 0 || rng_next(&h->seed) % 2)) {
            req[n] = 1 + (size_t)(rng_next(&h->seed) % 8192);
            if (tgc_bfc_alloc(h->a, req[n], &b[n]) != TGC_OK) {
                h->bad++;
                continue;
            }
            memset(ptr_of(b[n]), tag, req[n]);
            n++;
        } else {
            int k = (int)(rng_next(&h->seed) % (uint64_t)n);
            const unsigned char *p = (const unsigned char *)ptr_of(b[k]);
            if (p[0] != tag || p[req[k] - 1] != tag) h->bad++;
            tgc_bfc_free(h->a, b[k].chunk);
            b[k] = b[n - 1];
            req[k] = req[n - 1];
            n--;
        }
    }
    while (n > 0) tgc_bfc_free(h->a, b[--n].chunk);
    return NULL;
}

/* The same through a cpu device: buffers, figures and the arena. */
typedef struct device_hammer {
    tgc_device *d;
    uint64_t seed;
    int bad;
} device_hammer;

static void *device_hammer_run(void *arg) {
    device_hammer *h = arg;
    enum { LIVE = 16, OPS = 5000 };
    tgc_buffer *b[LIVE];
    int n = 0;
    unsigned char tag = (unsigned char)(h->seed >> 56);
    for (int op = 0; op < OPS; op++) {
        if (n < LIVE && (n == 0 || rng_next(&h->seed) % 2)) {
            size_t size = 1 + (size_t)(rng_next(&h->seed) % 20000);
            if (tgc_buffer_alloc(h->d, size, &b[n]) != TGC_OK) {
                h->bad++;
                continue;
            }
            memset(tgc_buffer_host_ptr(b[n]), tag, size);
            n++;
        } else {
            int k = (int)(rng_next(&h->seed) % (uint64_t)n);
            const unsigned char *p = tgc_buffer_host_ptr(b[k]);
            if (p[0] != tag || p[b[k]->nbytes - 1] != tag) h->bad++;
            tgc_device_stats(h->d);
            tgc_buffer_release(b[k]);
            b[k] = b[--n];
        }
    }
    while (n > 0) tgc_buffer_release(b[--n]);
    return NULL;
}

static void test_threads(void) {
    regions r;
    tgc_bfc *a = make_arena(&r, 256, 1 << 16, 0, 0);
    hammer h[4];
    pthread_t t[4];
    for (int i = 0; i < 4; i++) {
        h[i] = (hammer){a, 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1), 0};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, hammer_run, &h[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        CU_ASSERT_EQUAL(h[i].bad, 0);
    }
    tgc_bfc_stats s = tgc_bfc_get_stats(a);
    CU_ASSERT(tgc_bfc_check(a));
    CU_ASSERT_EQUAL(s.live_allocs, 0);
    CU_ASSERT_EQUAL(s.bytes_in_use, 0);
    CU_ASSERT_EQUAL(s.num_allocs, s.num_frees);
    CU_ASSERT_EQUAL(tgc_bfc_shrink(a), s.bytes_reserved); /* every region merged back whole */
    tgc_bfc_destroy(a);
    CU_ASSERT_EQUAL(r.live, 0);

    tgc_device *d = tgc_cpu_device_create(0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    device_hammer dh[4];
    for (int i = 0; i < 4; i++) {
        dh[i] = (device_hammer){d, 0xD1B54A32D192ED03ull * (uint64_t)(i + 1), 0};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, device_hammer_run, &dh[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        CU_ASSERT_EQUAL(dh[i].bad, 0);
    }
    tgc_allocator_stats ds = tgc_device_stats(d);
    CU_ASSERT_EQUAL(ds.live_buffers, 0);
    CU_ASSERT_EQUAL(ds.bytes_in_use, 0);
    CU_ASSERT_EQUAL(ds.num_allocs, ds.num_frees);
    if (d->arena != NULL) {
        CU_ASSERT(tgc_bfc_check(d->arena));
        CU_ASSERT_EQUAL(tgc_bfc_get_stats(d->arena).bytes_in_use, 0);
    }
    tgc_device_destroy(d);
}

/* ---- the devices ---------------------------------------------------------------- */

static bool arena_off(void) { return tgc_device_arena_wanted() == 0; }

static void test_cpu_device_arena(void) {
    tgc_device *d = tgc_cpu_device_create(0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    static const size_t sizes[] = {100, 4096, 1, 65, 3000};
    tgc_buffer *b[5];
    int64_t sum = 0;
    for (int i = 0; i < 5; i++) {
        CU_ASSERT_EQUAL_FATAL(tgc_buffer_alloc(d, sizes[i], &b[i]), TGC_OK);
        char *p = tgc_buffer_host_ptr(b[i]);
        CU_ASSERT_EQUAL((uintptr_t)p % 64, 0);
        memset(p, i + 1, sizes[i]);
        sum += (int64_t)sizes[i];
    }
    for (int i = 0; i < 5; i++) CU_ASSERT_EQUAL(((char *)tgc_buffer_host_ptr(b[i]))[sizes[i] - 1], i + 1);
    tgc_allocator_stats s = tgc_device_stats(d);
    CU_ASSERT_EQUAL(s.bytes_in_use, sum); /* requested bytes */
    CU_ASSERT_EQUAL(s.live_buffers, 5);
    CU_ASSERT_EQUAL(s.largest_alloc_size, 4096);
    if (!arena_off()) {
        CU_ASSERT_EQUAL(s.num_regions, 1);
        CU_ASSERT_EQUAL(s.bytes_reserved, 1 << 20);
        CU_ASSERT(tgc_bfc_check(d->arena));
    }
    /* Free the second and fourth: the arena has two holes. */
    tgc_buffer_release(b[1]);
    tgc_buffer_release(b[3]);
    s = tgc_device_stats(d);
    CU_ASSERT_EQUAL(s.bytes_in_use, sum - 4096 - 65);
    if (!arena_off()) CU_ASSERT(s.fragmentation > 0.0);
    tgc_buffer_release(b[0]);
    tgc_buffer_release(b[2]);
    tgc_buffer_release(b[4]);
    s = tgc_device_stats(d);
    CU_ASSERT_EQUAL(s.bytes_in_use, 0);
    CU_ASSERT_EQUAL(s.live_buffers, 0);
    CU_ASSERT_EQUAL(s.peak_bytes_in_use, sum);
    CU_ASSERT_EQUAL(s.fragmentation, 0.0);
    CU_ASSERT_EQUAL(tgc_device_shrink(d), arena_off() ? 0 : 1 << 20);
    CU_ASSERT_EQUAL(tgc_device_stats(d).bytes_reserved, 0);

    /* The limit: a refused buffer leaves the figures as they were. */
    tgc_device_set_limit(d, 3 << 20);
    tgc_buffer *big, *no = (tgc_buffer *)d;
    CU_ASSERT_EQUAL_FATAL(tgc_buffer_alloc(d, 2 << 20, &big), TGC_OK);
    tgc_allocator_stats before = tgc_device_stats(d);
    CU_ASSERT_EQUAL(tgc_buffer_alloc(d, (size_t)3 << 19, &no), TGC_ERR_NOMEM);
    CU_ASSERT_PTR_NULL(no);
    tgc_allocator_stats after = tgc_device_stats(d);
    CU_ASSERT_EQUAL(after.num_allocs, before.num_allocs);
    CU_ASSERT_EQUAL(after.bytes_in_use, before.bytes_in_use);
    CU_ASSERT_EQUAL(after.peak_bytes_in_use, before.peak_bytes_in_use);
    CU_ASSERT_EQUAL(after.largest_alloc_size, before.largest_alloc_size);
    CU_ASSERT_EQUAL(after.live_buffers, before.live_buffers);
    CU_ASSERT_EQUAL(after.bytes_reserved, before.bytes_reserved);
    CU_ASSERT(after.bytes_reserved <= 3 << 20);
    tgc_buffer_release(big);
    tgc_device_set_limit(d, 0);

    /* Zero bytes: a valid buffer with no memory. */
    tgc_buffer *z;
    CU_ASSERT_EQUAL_FATAL(tgc_buffer_alloc(d, 0, &z), TGC_OK);
    CU_ASSERT_PTR_NULL(tgc_buffer_host_ptr(z));
    tgc_buffer_release(z);
    tgc_device_destroy(d);
}

/* TGC_ARENA=0 at device creation: every buffer on its own. */
static void test_arena_off(void) {
    const char *was = getenv("TGC_ARENA");
    char saved[64] = "";
    if (was != NULL) snprintf(saved, sizeof saved, "%s", was);
    setenv("TGC_ARENA", "0", 1);
    tgc_settings_read(); /* as a session would when made: the device is made directly */
    tgc_device *d = tgc_cpu_device_create(1);
    if (was != NULL) setenv("TGC_ARENA", saved, 1);
    else unsetenv("TGC_ARENA");
    tgc_settings_read();
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_PTR_NULL(d->arena);
    tgc_buffer *b;
    CU_ASSERT_EQUAL_FATAL(tgc_buffer_alloc(d, 1000, &b), TGC_OK);
    CU_ASSERT_EQUAL((uintptr_t)tgc_buffer_host_ptr(b) % 64, 0);
    tgc_allocator_stats s = tgc_device_stats(d);
    CU_ASSERT_EQUAL(s.bytes_reserved, 1000);
    CU_ASSERT_EQUAL(s.num_regions, 0);
    tgc_buffer_release(b);
    CU_ASSERT_EQUAL(tgc_device_shrink(d), 0);
    tgc_device_destroy(d);
    /* The host device never has one. */
    CU_ASSERT_PTR_NULL(tgc_host_device()->arena);
}

static void test_fail_nth_alloc(void) {
    tgc_device *d0 = tgc_cpu_device_create(0), *d1 = tgc_cpu_device_create(1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d1);
    tgc_buffer *b[4] = {NULL, NULL, NULL, NULL};
    tgc_device_fail_nth_alloc(3);
    CU_ASSERT_EQUAL(tgc_buffer_alloc(d0, 100, &b[0]), TGC_OK);
    CU_ASSERT_EQUAL(tgc_buffer_alloc(d1, 0, &b[1]), TGC_OK); /* zero bytes count too */
    tgc_buffer *no = (tgc_buffer *)d0;
    CU_ASSERT_EQUAL(tgc_buffer_alloc(d0, 100, &no), TGC_ERR_NOMEM);
    CU_ASSERT_PTR_NULL(no);
    CU_ASSERT_EQUAL(tgc_buffer_alloc(d0, 100, &b[2]), TGC_OK); /* only the 3rd */
    tgc_allocator_stats s = tgc_device_stats(d0);
    CU_ASSERT_EQUAL(s.num_allocs, 2);
    CU_ASSERT_EQUAL(s.live_buffers, 2);
    CU_ASSERT_EQUAL(s.bytes_in_use, 200);
    /* Counted across devices. */
    tgc_device_fail_nth_alloc(2);
    CU_ASSERT_EQUAL(tgc_buffer_alloc(d0, 10, &b[3]), TGC_OK);
    CU_ASSERT_EQUAL(tgc_buffer_alloc(d1, 10, &no), TGC_ERR_NOMEM);
    CU_ASSERT_EQUAL(tgc_device_stats(d1).num_allocs, 1);
    /* Disarmed. */
    tgc_device_fail_nth_alloc(5);
    tgc_device_fail_nth_alloc(0);
    for (int i = 0; i < 10; i++) {
        tgc_buffer *t;
        CU_ASSERT_EQUAL(tgc_buffer_alloc(d1, 10, &t), TGC_OK);
        tgc_buffer_release(t);
    }
    /* The per-device hook. */
    d1->fail_countdown = 2;
    tgc_buffer *t;
    CU_ASSERT_EQUAL(tgc_buffer_alloc(d1, 10, &t), TGC_OK);
    tgc_buffer_release(t);
    CU_ASSERT_EQUAL(tgc_buffer_alloc(d1, 10, &t), TGC_ERR_NOMEM);
    for (int i = 0; i < 4; i++) tgc_buffer_release(b[i]);
    CU_ASSERT_EQUAL(tgc_device_stats(d0).live_buffers, 0);
    CU_ASSERT_EQUAL(tgc_device_stats(d1).live_buffers, 0);
    tgc_device_destroy(d0);
    tgc_device_destroy(d1);
}

/* A host allocation failing inside the arena (its bookkeeping or a region)
 * is a clean TGC_ERR_NOMEM too. */
static void test_host_failures_are_clean(void) {
    tgc_host_alloc_stats before = tgc_host_alloc_stats_get();
    tgc_device *d = tgc_cpu_device_create(0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    int failures = 0;
    for (int nth = 1; nth < 50; nth++) {
        tgc_buffer *b = NULL;
        tgc_host_alloc_fail_nth(nth);
        tgc_status s = tgc_buffer_alloc(d, 5000, &b);
        tgc_host_alloc_fail_nth(0);
        if (s == TGC_OK) {
            tgc_buffer_release(b);
            break;
        }
        failures++;
        CU_ASSERT_EQUAL(s, TGC_ERR_NOMEM);
        CU_ASSERT_EQUAL(tgc_device_stats(d).live_buffers, 0);
        CU_ASSERT_EQUAL(tgc_device_stats(d).num_allocs, 0);
        if (d->arena != NULL) CU_ASSERT(tgc_bfc_check(d->arena));
    }
    CU_ASSERT(failures >= (d->arena != NULL ? 3 : 2)); /* buffer, then chunk slots, region record, region */
    tgc_device_destroy(d);
    tgc_host_alloc_stats after = tgc_host_alloc_stats_get();
    CU_ASSERT_EQUAL(after.live_blocks, before.live_blocks);
    CU_ASSERT_EQUAL(after.live_bytes, before.live_bytes);
}

static void test_gpu_device_arena(void) {
    tgc_cl_info infos[16];
    int n = 0;
    tgc_cl_list(infos, 16, &n);
    if (n == 0 || arena_off()) return;
    /* PoCL's devices have the arena off unless asked (see cl_device.c). */
    const char *was = getenv("TGC_ARENA");
    char saved[64] = "";
    if (was != NULL) snprintf(saved, sizeof saved, "%s", was);
    setenv("TGC_ARENA", "1", 1);
    tgc_settings_read(); /* as a session would when made: the device is made directly */
    tgc_diags *diags = tgc_diags_create();
    tgc_device *dev = NULL;
    tgc_status st = tgc_cl_device_create(0, diags, &dev);
    if (was != NULL) setenv("TGC_ARENA", saved, 1);
    else unsetenv("TGC_ARENA");
    tgc_settings_read();
    tgc_diags_free(diags);
    CU_ASSERT_EQUAL_FATAL(st, TGC_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dev->arena);
    tgc_cl_counters start = tgc_cl_device_counters(dev);
    CU_ASSERT_EQUAL(start.regions, 0);
    float host[1000], back[1000];
    for (int i = 0; i < 1000; i++) host[i] = (float)i * 0.25f - 3;
    tgc_buffer *b[3];
    for (int k = 0; k < 3; k++) CU_ASSERT_EQUAL_FATAL(tgc_buffer_alloc(dev, sizeof host, &b[k]), TGC_OK);
    tgc_allocator_stats s = tgc_device_stats(dev);
    tgc_cl_counters now = tgc_cl_device_counters(dev);
    CU_ASSERT_EQUAL(now.mems, start.mems + 3); /* a sub-buffer each */
    CU_ASSERT_EQUAL(now.regions, 1);
    CU_ASSERT_EQUAL(s.num_regions, 1);
    CU_ASSERT_EQUAL(s.bytes_in_use, 3 * (int64_t)sizeof host);
    CU_ASSERT_EQUAL(s.bytes_reserved, 4 << 20);
    /* Sub-buffers at offsets 0, 4096 and 8192 of the region do not alias. */
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < 1000; i++) back[i] = host[i] + (float)k;
        CU_ASSERT_EQUAL(dev->ops->copy_from_host(dev, b[k]->mem, 0, back, sizeof back), TGC_OK);
    }
    CU_ASSERT_EQUAL(clEnqueueCopyBuffer(tgc_cl_queue(dev), (cl_mem)b[0]->mem, (cl_mem)b[2]->mem, 0, 400,
                                        400, 0, NULL, NULL),
                    CL_SUCCESS);
    for (int k = 0; k < 3; k++) {
        CU_ASSERT_EQUAL(dev->ops->copy_to_host(dev, back, b[k]->mem, 0, sizeof back), TGC_OK);
        int wrong = 0;
        for (int i = 0; i < 1000; i++) {
            float want = host[i] + (float)k;
            if (k == 2 && i >= 100 && i < 200) want = host[i - 100];
            if (back[i] != want) wrong++;
        }
        CU_ASSERT_EQUAL(wrong, 0);
    }
    /* Freed: the sub-buffers go, the region stays until a shrink. */
    tgc_buffer_release(b[1]);
    tgc_buffer *again;
    CU_ASSERT_EQUAL_FATAL(tgc_buffer_alloc(dev, 3000, &again), TGC_OK); /* reuses the hole */
    CU_ASSERT_EQUAL(tgc_device_stats(dev).num_regions, 1);
    tgc_buffer_release(again);
    tgc_buffer_release(b[0]);
    tgc_buffer_release(b[2]);
    CU_ASSERT_EQUAL(dev->ops->synchronize(dev), TGC_OK);
    now = tgc_cl_device_counters(dev);
    CU_ASSERT_EQUAL(now.mems, start.mems);
    CU_ASSERT_EQUAL(now.regions, 1);
    s = tgc_device_stats(dev);
    CU_ASSERT_EQUAL(s.bytes_in_use, 0);
    CU_ASSERT_EQUAL(s.live_buffers, 0);
    CU_ASSERT_EQUAL(s.peak_bytes_in_use, 3 * (int64_t)sizeof host);
    CU_ASSERT_EQUAL(tgc_device_shrink(dev), 4 << 20);
    CU_ASSERT_EQUAL(tgc_cl_device_counters(dev).regions, 0);
    CU_ASSERT_EQUAL(tgc_device_stats(dev).bytes_reserved, 0);
    /* A limit below the first region's size: the region shrinks to fit. */
    tgc_device_set_limit(dev, 1 << 20);
    tgc_buffer *m;
    CU_ASSERT_EQUAL_FATAL(tgc_buffer_alloc(dev, 300000, &m), TGC_OK);
    CU_ASSERT_EQUAL(tgc_device_stats(dev).bytes_reserved, 1 << 20);
    tgc_buffer *no;
    CU_ASSERT_EQUAL(tgc_buffer_alloc(dev, 800000, &no), TGC_ERR_NOMEM);
    CU_ASSERT_EQUAL(tgc_cl_device_counters(dev).mems, start.mems + 1);
    tgc_buffer_release(m);
    tgc_device_destroy(dev); /* the region goes with the device */
}

TGC_TEST_MAIN("bfc allocator", {"guard bytes abort on a write past a block (child process)", test_guard_bytes},
              {"rounding and alignment", test_rounding_and_alignment}, {"best fit", test_best_fit},
              {"splitting and coalescing in every order", test_split_and_coalesce},
              {"regions grow and shrink", test_growth_and_shrink}, {"the limit", test_limit},
              {"the fragmentation figure", test_fragmentation},
              {"a randomized run against a model", test_random_against_model},
              {"four threads, on the arena and on a cpu device", test_threads}, {"the cpu device's arena", test_cpu_device_arena},
              {"TGC_ARENA=0 bypasses the arena", test_arena_off},
              {"the Nth device allocation fails", test_fail_nth_alloc},
              {"host allocation failures inside the arena are clean", test_host_failures_are_clean},
              {"the gpu device's arena of sub-buffers", test_gpu_device_arena},
              {"AddressSanitizer sees a use after free in the arena", test_asan_sees_arena_use_after_free})
