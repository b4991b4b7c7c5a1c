/* A device's peaks and the copies between devices, timed (cost_impl.h).
 *
 * Peaks, for the estimate of a node that cannot be timed: FLOP/s of a
 * 384 x 384 x 384 MatMul, bytes/s of an Add over two 16 MiB float32
 * tensors (48 MiB moved: past the caches of the machines tgc runs on),
 * and the seconds of a Relu over one element, the per-node overhead of a
 * step. Each is a node of a small graph timed as any node is
 * (cost_measure.c), on the device's own kernels and pool.
 *
 * Copies: host memory to host memory is a handoff, not a copy (the
 * executor gives a cpu device's buffer to another in place): its latency
 * is a task handed to a pool's worker and seen done, its bandwidth a
 * memcpy's (the consumer's reads of what another core wrote, at most).
 * To and from a device whose memory is not host memory: tgc_buffer_copy
 * of 4 KiB (the latency) and of 16 MiB (the bandwidth, over the
 * difference). Each figure is the least of a few: on a loaded machine a
 * try may wait for a core (a median of five 4 KiB copies to PoCL's gpu0
 * once came out above the 16 MiB one's while another process ran PoCL
 * kernels, and the link went unmeasured). */
#include "placer/cost_impl.h"

#include "devices/kernel.h"
#include "graph/passes.h"
#include "support/alloc.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GEMM_N 384
#define STREAM_ELEMS (INT64_C(1) << 22)
#define SMALL_COPY 4096
#define LARGE_COPY (INT64_C(16) << 20)
#define TRIES 5

static const char graph_text[] =
    "format: tgc/1\n"
    "inputs:\n"
    "  - {name: a, dtype: float32, shape: [384, 384]}\n"
    "  - {name: b, dtype: float32, shape: [384, 384]}\n"
    "  - {name: x, dtype: float32, shape: [4194304]}\n"
    "  - {name: y, dtype: float32, shape: [4194304]}\n"
    "  - {name: one, dtype: float32, shape: [1]}\n"
    "outputs: [gemm, stream, tiny]\n"
    "nodes:\n"
    "  - {name: gemm, op: MatMul, inputs: [a, b]}\n"
    "  - {name: stream, op: Add, inputs: [x, y]}\n"
    "  - {name: tiny, op: Relu, inputs: [one]}\n";

/* Seconds of node `name` of g on device d; 0 when it cannot be timed. */
static double time_named(tgc_cost_model *m, const tgc_graph *g, const char *name, int d) {
    int32_t id = tgc_graph_find(g, name);
    if (id < 0) return 0;
    const tgc_kernel_def *k = tgc_kernel_for_node(g, &g->nodes[id], m->devices[d].kind);
    double s = 0;
    return k != NULL && tgc_cost_time_node(m, g, id, d, k, false, &s) == TGC_OK ? s : 0;
}

void tgc_cost_measure_peaks(tgc_cost_model *m, int d) {
    tgc_cost_file *f = m->files[m->file_of[d]];
    if (f->peaks.flops > 0 || m->peaks_tried[d] || !m->measure) return;
    m->peaks_tried[d] = true;
    if (tgc_cost_device(m, d) == NULL) return;
    tgc_diags *diags = tgc_diags_create();
    tgc_graph *g = NULL;
    if (diags != NULL && tgc_graph_load_string(graph_text, sizeof graph_text - 1, "cost_peaks.yaml", NULL, diags,
                                               &g) == TGC_OK) {
        double gemm = time_named(m, g, "gemm", d), stream = time_named(m, g, "stream", d);
        double tiny = time_named(m, g, "tiny", d);
        if (gemm > 0 && stream > 0 && tiny > 0) {
            f->peaks.flops = 2.0 * GEMM_N * GEMM_N * GEMM_N / gemm;
            f->peaks.bytes = 3.0 * 4.0 * (double)STREAM_ELEMS / stream;
            f->peaks.node_seconds = tiny;
            f->dirty = true;
        }
    }
    tgc_graph_free(g);
    tgc_diags_free(diags);
}

/* The least of t[0..n). */
static double least_of(const double *t, int n) {
    double least = t[0];
    for (int i = 1; i < n; i++)
        if (t[i] < least) least = t[i];
    return least;
}

static void mark_done(void *arg) { atomic_store((atomic_int *)arg, 1); }

/* Seconds from a task queued on a pool's idle worker to its being seen
 * done, at the least over TRIES. */
static double handoff_seconds(void) {
    tgc_thread_pool *p = NULL;
    if (tgc_thread_pool_create(1, &p) != TGC_OK) return 0;
    double t[TRIES + 1];
    int ok = 0;
    for (int i = 0; i < TRIES + 1; i++) {
        atomic_int done;
        atomic_init(&done, 0);
        double t0 = tgc_cost_now();
        if (tgc_thread_pool_submit(p, mark_done, &done) != TGC_OK) break;
        while (!atomic_load(&done)) sched_yield();
        if (i > 0) t[ok++] = tgc_cost_now() - t0; /* the first wakes a new thread */
    }
    tgc_thread_pool_free(p);
    /* the least: a try that waited for a core another process held says nothing of a handoff */
    return ok == TRIES ? least_of(t, TRIES) : 0;
}

/* The least seconds of tgc_buffer_copy of `bytes` of src to `to` (the copy freed). */
static double copy_seconds(tgc_buffer *src, int64_t bytes, tgc_device *to) {
    double t[TRIES];
    for (int i = -1; i < TRIES; i++) { /* the first warms the arena and the driver */
        tgc_buffer *out = NULL;
        double t0 = tgc_cost_now();
        tgc_status s = tgc_buffer_copy(src, (size_t)bytes, to, &out);
        double dt = tgc_cost_now() - t0;
        tgc_buffer_release(out);
        if (s != TGC_OK) return 0;
        if (i >= 0) t[i] = dt;
    }
    return least_of(t, TRIES);
}

/* Latency and bandwidth of copies of src's kind of memory to `to`:
 * 4 KiB for the latency, 16 MiB for the bandwidth. src holds LARGE_COPY. */
static cost_pair copy_pair(tgc_buffer *src, tgc_device *to) {
    double small = copy_seconds(src, SMALL_COPY, to), large = copy_seconds(src, LARGE_COPY, to);
    cost_pair p = {0, 0};
    if (small > 0 && large > small) p = (cost_pair){small, (double)(LARGE_COPY - SMALL_COPY) / (large - small)};
    return p;
}

/* A LARGE_COPY buffer on dev, from host memory h (filled, so no page is left untouched). */
static tgc_buffer *large_on(tgc_device *h, tgc_device *dev) {
    tgc_buffer *b = NULL, *c = NULL;
    if (tgc_buffer_alloc(h, (size_t)LARGE_COPY, &b) != TGC_OK) return NULL;
    memset(tgc_buffer_host_ptr(b), 1, (size_t)LARGE_COPY);
    if (dev == h) return b;
    if (tgc_buffer_copy(b, (size_t)LARGE_COPY, dev, &c) != TGC_OK) c = NULL;
    tgc_buffer_release(b);
    return c;
}

void tgc_cost_measure_links(tgc_cost_model *m) {
    if (!m->measure) return;
    int hosts = 0;
    for (int d = 0; d < m->n; d++) hosts += m->devices[d].task == 0 && tgc_kind_host_memory(m->devices[d].kind);
    tgc_device *h = NULL;
    cost_pair host = {0, 0};
    for (int d = 0; d < m->n; d++) {
        tgc_cost_file *f = m->files[m->file_of[d]];
        if (m->devices[d].task != 0) continue;
        if (tgc_kind_host_memory(m->devices[d].kind)) {
            if (hosts < 2 || f->links[COST_LINK_HOST].seconds > 0) continue;
            if (host.seconds <= 0 && (h = tgc_cost_host(m)) != NULL) {
                tgc_buffer *src = large_on(h, h);
                double bw = src != NULL ? copy_pair(src, h).bytes_per_second : 0, lat = handoff_seconds();
                tgc_buffer_release(src);
                if (bw > 0 && lat > 0) host = (cost_pair){lat, bw};
            }
            if (host.seconds > 0) {
                f->links[COST_LINK_HOST] = host;
                f->dirty = true;
            }
        } else if (f->links[COST_LINK_TO_DEV].seconds <= 0 || f->links[COST_LINK_FROM_DEV].seconds <= 0) {
            tgc_device *dev = tgc_cost_device(m, d);
            if (dev == NULL || (h = tgc_cost_host(m)) == NULL) continue;
            tgc_buffer *src = large_on(h, h), *back = large_on(h, dev);
            cost_pair to = src != NULL ? copy_pair(src, dev) : (cost_pair){0, 0};
            cost_pair from = back != NULL ? copy_pair(back, h) : (cost_pair){0, 0};
            tgc_buffer_release(src);
            tgc_buffer_release(back);
            if (to.seconds > 0 && from.seconds > 0) {
                f->links[COST_LINK_TO_DEV] = to;
                f->links[COST_LINK_FROM_DEV] = from;
                f->dirty = true;
            }
        }
    }
}
