/* Soak: the digits CNN run many times in one process (10,000 by default) on
 * cpu,gpu0 (cpu where there is no gpu), printing every 1000 runs the live
 * tensor handles and their bytes, the live buffers and bytes in use of the
 * host device and of each session device, and the process's resident set
 * (from /proc/self/statm), so that flatness after warm-up can be seen. A
 * user of the public API only.
 *
 *     build/bench/soak_digits [REPO_ROOT] [RUNS] [DEVICES]
 *
 * Exits 1 when a run fails or when, after the first checkpoint, the live
 * handles or any device's live buffers or bytes move. */
#include "tgc.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_DEV 8
#define EVERY 1000

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Resident set size in bytes, from /proc/self/statm; -1 if unreadable. */
static long long rss_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL) return -1;
    long long size = 0, resident = -1;
    if (fscanf(f, "%lld %lld", &size, &resident) != 2) resident = -1;
    fclose(f);
    return resident < 0 ? -1 : resident * sysconf(_SC_PAGESIZE);
}

typedef struct figures {
    tgc_memory_info mem;
    tgc_memory_figures dev[MAX_DEV];
    long long rss;
} figures;

static figures take(const tgc_session *s, int n_dev) {
    figures f = {.mem = tgc_memory(), .rss = rss_bytes()};
    for (int i = 0; i < n_dev; i++) f.dev[i] = tgc_session_memory(s, i);
    return f;
}

static bool flat(const figures *a, const figures *b, int n_dev) {
    bool same = a->mem.live_tensors == b->mem.live_tensors && a->mem.live_tensor_bytes == b->mem.live_tensor_bytes &&
                a->mem.host.live_buffers == b->mem.host.live_buffers &&
                a->mem.host.bytes_in_use == b->mem.host.bytes_in_use;
    for (int i = 0; i < n_dev; i++)
        same = same && a->dev[i].live_buffers == b->dev[i].live_buffers &&
               a->dev[i].bytes_in_use == b->dev[i].bytes_in_use;
    return same;
}

int main(int argc, char **argv) {
    const char *root = argc > 1 ? argv[1] : ".";
    long runs = argc > 2 ? strtol(argv[2], NULL, 10) : 10000;
    tgc_device_info info[4];
    const char *devices = argc > 3 ? argv[3] : (tgc_devices_list(info, 4) > 1 ? "cpu,gpu0" : "cpu");
    if (runs < 1) runs = 1;

    char path[4096];
    tgc_diags *diags = tgc_diags_create();
    tgc_graph *g = NULL;
    tgc_session *s = NULL;
    tgc_tensor *x = NULL;
    snprintf(path, sizeof path, "%s/examples/digits/cnn.yaml", root);
    if (tgc_graph_load(path, diags, &g) != TGC_OK || tgc_session_create(g, devices, NULL, diags, &s) != TGC_OK) {
        tgc_diags_print(diags, stderr);
        return 1;
    }
    snprintf(path, sizeof path, "%s/examples/digits/test_x.npy", root);
    if (tgc_tensor_load_npy(path, diags, &x) != TGC_OK) {
        tgc_diags_print(diags, stderr);
        return 1;
    }
    int n_dev = tgc_session_device_count(s);
    if (n_dev > MAX_DEV) n_dev = MAX_DEV;

    figures start = take(s, n_dev), warm = start;
    printf("soak: digits CNN, batch 400, %ld runs on %s\n", runs, devices);
    printf("%7s %8s %10s %14s", "runs", "handles", "bytes", "host buf/bytes");
    for (int i = 0; i < n_dev; i++) printf(" %14s", tgc_session_device_name(s, i));
    printf(" %10s %9s\n", "RSS MiB", "ms/run");
    printf("%7d %8lld %10lld %5lld/%-8lld", 0, (long long)start.mem.live_tensors,
           (long long)start.mem.live_tensor_bytes, (long long)start.mem.host.live_buffers,
           (long long)start.mem.host.bytes_in_use);
    for (int i = 0; i < n_dev; i++)
        printf(" %5lld/%-8lld", (long long)start.dev[i].live_buffers, (long long)start.dev[i].bytes_in_use);
    printf(" %10.1f %9s\n", (double)start.rss / (1 << 20), "-");

    const char *names[] = {"x"};
    bool ok = true;
    double t0 = now_s();
    for (long r = 1; r <= runs && ok; r++) {
        tgc_tensor *outs[2] = {NULL, NULL};
        if (tgc_session_run(s, 1, names, &x, outs, diags) != TGC_OK) {
            tgc_diags_print(diags, stderr);
            ok = false;
        }
        tgc_tensor_release(outs[0]);
        tgc_tensor_release(outs[1]);
        if (r % EVERY != 0 && r != runs) continue;
        double t1 = now_s();
        figures f = take(s, n_dev);
        printf("%7ld %8lld %10lld %5lld/%-8lld", r, (long long)f.mem.live_tensors, (long long)f.mem.live_tensor_bytes,
               (long long)f.mem.host.live_buffers, (long long)f.mem.host.bytes_in_use);
        for (int i = 0; i < n_dev; i++)
            printf(" %5lld/%-8lld", (long long)f.dev[i].live_buffers, (long long)f.dev[i].bytes_in_use);
        long done = r % EVERY != 0 ? r % EVERY : EVERY;
        printf(" %10.1f %9.2f\n", (double)f.rss / (1 << 20), (t1 - t0) * 1e3 / (double)done);
        fflush(stdout);
        t0 = now_s();
        if (r == EVERY || (r < EVERY && r == runs)) warm = f;
        else if (!flat(&warm, &f, n_dev)) ok = false;
        if (r == runs && r >= 2 * EVERY)
            printf("after warm-up (run %d to %ld): handles and device figures %s; RSS %+.1f MiB\n", EVERY, r,
                   flat(&warm, &f, n_dev) ? "flat" : "MOVED", (double)(f.rss - warm.rss) / (1 << 20));
    }
    tgc_tensor_release(x);
    tgc_session_free(s);
    tgc_graph_free(g);
    tgc_diags_free(diags);
    return ok ? 0 : 1;
}
