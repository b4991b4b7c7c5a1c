/* The cost model's insides, shared by its files and nowhere else:
 *     cost.c          the model, the roofline estimate, transfers
 *     cost_key.c      what a node's figure is keyed by
 *     cost_cache.c    the figures of one device on disk
 *     cost_measure.c  a node's kernel timed on its device
 *     cost_peaks.c    a device's peaks and the copies between devices, timed
 * Private to the library. */
#ifndef TGC_PLACER_COST_IMPL_H
#define TGC_PLACER_COST_IMPL_H

#include "placer/cost.h"

#include "devices/device.h"
#include "support/strmap.h"
#include "support/thread_pool.h"

/* Copies a file keeps figures for (tgc_cost_file.links). */
typedef enum cost_link {
    COST_LINK_HOST,     /* host memory to host memory: in a host-memory device's file */
    COST_LINK_TO_DEV,   /* host memory to this device: in a device's whose memory is not host memory */
    COST_LINK_FROM_DEV, /* this device to host memory */
    COST_LINK_COUNT
} cost_link;

/* A latency (seconds) and a bandwidth (bytes per second); 0 0: none. */
typedef struct cost_pair {
    double seconds, bytes_per_second;
} cost_pair;

/* A device's peaks: FLOP/s of a GEMM, bytes/s of an elementwise op over a
 * large tensor, and the seconds of a node that does nothing (the per-node
 * overhead). All 0: not known. */
typedef struct cost_peaks {
    double flops, bytes, node_seconds;
} cost_peaks;

/* The figures of one device identity (kind, hardware, pool width, tgc
 * version): what its file holds, and what this process added. */
typedef struct tgc_cost_file {
    char identity[512]; /* the header line's text: the file's key */
    char path[1200];    /* "" when there is no cache folder */
    tgc_strmap index;   /* node key -> position in seconds[] */
    tgc_strmap failed;  /* keys that could not be timed in this process (never saved) */
    double *seconds;
    size_t n, cap;
    cost_peaks peaks;
    cost_pair links[COST_LINK_COUNT];
    bool dirty; /* figures not yet on disk */
} tgc_cost_file;

struct tgc_cost_model {
    tgc_placer_device devices[TGC_PLACER_MAX_DEVICES];
    int width[TGC_PLACER_MAX_DEVICES];
    int n;
    bool measure;
    /* file[d]: the figures of device d (devices of one identity share one). */
    tgc_cost_file *files[TGC_PLACER_MAX_DEVICES];
    int file_of[TGC_PLACER_MAX_DEVICES];
    int n_files;
    /* Opened on first need (measure only): the device, its pool (width - 1
     * workers: the caller is the last participant; NULL for width 1), and
     * whether opening failed (then never tried again). */
    tgc_device *dev[TGC_PLACER_MAX_DEVICES];
    tgc_thread_pool *pool[TGC_PLACER_MAX_DEVICES];
    bool open_failed[TGC_PLACER_MAX_DEVICES];
    int n_opened;
    tgc_device *host; /* scratch host memory for synthetic inputs; NULL until needed */
    bool peaks_tried[TGC_PLACER_MAX_DEVICES];
    /* Per node of readers_of, the readers of its output 0 (graph outputs
     * counted): whether an activation is absorbed; made on first need. */
    const tgc_graph *readers_of;
    int32_t *readers;
    int64_t llc_bytes; /* the host's last-level cache (support/cpu_cache.h); 0: not known */
    unsigned char *evict; /* written through to empty the caches before a cold run; NULL until needed */
    size_t evict_bytes;
};

/* ---- cost_key.c ---- */

/* Writes node id's key into buf (NUL-terminated): op, attributes by name,
 * each input's dtype and dims (symbolic as 1) and the values of small
 * integer inputs that are known. False when it does not fit, or the node
 * cannot be keyed (a subgraph attribute, an input that is not a tensor of
 * known rank): such a node is never measured. */
bool tgc_cost_key(const tgc_graph *g, int32_t id, char *buf, size_t size);

/* ---- cost_cache.c ---- */

/* A file for `identity` (one line of printable text): loaded from disk
 * unless `refresh`; a file that is missing, foreign, truncated or corrupt
 * gives an empty one (rewritten at the next save). NULL without memory. */
tgc_cost_file *tgc_cost_file_open(const char *identity, bool refresh);

/* Seconds stored for key, or a negative number when there are none. */
double tgc_cost_file_get(const tgc_cost_file *f, const char *key);

/* Stores key -> seconds (> 0, finite). TGC_OK or TGC_ERR_NOMEM. */
tgc_status tgc_cost_file_put(tgc_cost_file *f, const char *key, double seconds);

/* Writes f to its path when it is dirty: to a temporary file beside it,
 * renamed over it. TGC_OK (also without a folder); TGC_ERR_RUNTIME when
 * writing failed (the old file, if any, stays). */
tgc_status tgc_cost_file_save(tgc_cost_file *f);

void tgc_cost_file_free(tgc_cost_file *f);

/* ---- cost_measure.c ---- */

/* Device d of the model, opened (with its pool) on first use; NULL when it
 * cannot be (another process's device, a device this machine lacks). */
tgc_device *tgc_cost_device(tgc_cost_model *m, int d);

/* The scratch host device synthetic inputs are made on; NULL without memory. */
tgc_device *tgc_cost_host(tgc_cost_model *m);

/* Times node id of g on device d (opened) with kernel k: one warm-up run,
 * then up to a few more; the median seconds into *seconds. cold: before
 * each timed run on a host-memory device, the caches emptied (a buffer
 * of 1.5 times the last-level cache written through, m->evict) and the
 * node's non-constant inputs read back in. TGC_OK;
 * TGC_ERR_UNSUPPORTED when the node cannot run on synthetic inputs (its
 * kernel or inference refused them, they would not give its inferred
 * shapes); TGC_ERR_NOMEM. Every buffer is released before it returns. */
tgc_status tgc_cost_time_node(tgc_cost_model *m, const tgc_graph *g, int32_t id, int d, const tgc_kernel_def *k,
                              bool cold, double *seconds);

/* ---- cost_peaks.c ---- */

/* Measures device d's peaks into its file when it has none (measure on,
 * the device opens). */
void tgc_cost_measure_peaks(tgc_cost_model *m, int d);

/* Measures the copies the model's devices need (host to host, host to
 * and from each device whose memory is not host memory) into their files
 * where they have none. */
void tgc_cost_measure_links(tgc_cost_model *m);

/* Monotonic seconds. */
double tgc_cost_now(void);

#endif
