/* Concat in place: where a Concat's inputs lie one after another in its
 * output (every dim before the axis is 1, as on a batch-1 NCHW channel
 * Concat, and the shapes are known at compile time), the nodes that make
 * them write straight into their places in the Concat's output buffer, and
 * the Concat copies nothing. TensorFlow Lite's arena planner and TVM's
 * memory planning do the same for concatenations; here the places are
 * buffer views (views of one host buffer, refcounted), so the executor's
 * refcounting frees the whole buffer when its last view and the Concat's
 * output are gone. Private to the executor.
 *
 * The whole buffer is made by the first of its writers to run (the
 * producers of one Concat may run at once on different threads) and kept
 * in the Concat's own output slot until the Concat runs and takes it; a
 * step that fails first frees it with the frame's other values. The static
 * memory plan (memory_plan.c) counts the same: one buffer from the first
 * writer to the last reader of any of its parts. Since the whole is live
 * from its first part on, while the other branches run, a Concat goes in
 * place only where that does not raise the most bytes its partition holds
 * at once (over the node order the plan counts in, forwarding counted).
 *
 * Example usage (executor/plan.c, executor/node_run.c):
 *     tgc_concat_places_find(g, kernels, value_base, places);   // once, per partition
 *     ... a writer of slot v with places[v].into >= 0: a view of the
 *         whole buffer of slot places[v].into at places[v].offset ... */
#ifndef TGC_EXECUTOR_CONCAT_IN_PLACE_H
#define TGC_EXECUTOR_CONCAT_IN_PLACE_H

#include "devices/device.h"
#include "devices/kernel.h"
#include "graph/graph.h"

#include <stdbool.h>
#include <stdint.h>

/* Where one output slot of a partition graph lives. */
typedef struct tgc_concat_place {
    int32_t into;   /* the slot of the Concat output whose buffer holds this value, -1: its own */
    int64_t offset; /* bytes from that buffer's start (a multiple of TGC_CONCAT_PLACE_ALIGN) */
    int64_t bytes;  /* this value's bytes (places of a whole: the whole's) */
    bool whole;     /* an in-place Concat's output: the first writer of a part makes its buffer */
    int32_t node;   /* a whole's Concat node; -1 */
} tgc_concat_place;

/* A part starts at a multiple of this many bytes of its whole (the cpu
 * arena's alignment, which vector kernels may rely on) and has at least
 * as many (smaller ones, shape values, would share a cache line with the
 * next part's writer, for no copy worth saving). */
#define TGC_CONCAT_PLACE_ALIGN 64

/* Fills places[v] for every output slot v of partition graph g (slot v of
 * node id's output k at base[id] + k; every entry written; uses[v]: the
 * inputs and graph outputs that read it). kernel[id] is the kernel of node
 * id, NULL for a node that runs none (an input, a constant, a _Send or
 * _Recv, a control node); host_memory: the partition's device computes in
 * host memory (the cpu): elsewhere nothing is placed. A Concat (its
 * kernel, one output, a numeric dtype, shapes known, every dim before its
 * axis 1) takes each input that a kernel node of this partition makes in
 * device memory and that nothing else reads (a value read by several
 * Concats, as DenseNet's, would keep the larger buffer of the first alive
 * as long as the others read it), when the input's offset is aligned and
 * it has TGC_CONCAT_PLACE_ALIGN bytes or more. An input whose maker only
 * forwards its own input (a Relu taking over a Conv's buffer) places that
 * one too, when it has no other reader. A Concat's output may itself be a
 * part of a later Concat. Concats are taken in node order, each only where
 * the partition's peak (the lower bound, forwarding counted) stays where
 * the Concats taken before left it. Allocates scratch (tgc_malloc); out of
 * host memory, nothing is placed. */
void tgc_concat_places_find(const tgc_graph *g, const tgc_kernel_def *const *kernel, const int32_t *base,
                            const int32_t *uses, bool host_memory, tgc_concat_place *places);

/* True when b is a view made by tgc_concat_view (its memory is a part of
 * another buffer's: the memory watch counts it there). */
bool tgc_buffer_is_concat_view(const tgc_buffer *b);

/* A buffer of `bytes` bytes at `offset` of host buffer `whole`, holding a
 * reference on it until its own last release. TGC_ERR_NOMEM. */
tgc_status tgc_concat_view(tgc_buffer *whole, int64_t offset, int64_t bytes, tgc_buffer **out);

#endif
