/* Running one node on one device: the four steps that a graph step
 * (executor/node_run.c), an eager op (executor/eager.c) and constant
 * folding (passes/fold_constants.c) share. Private to the library.
 *
 *   1. tgc_node_exec_infer: the outputs' dtypes and dims from the actual
 *      inputs, by the op's own inference function (shape rules live in
 *      one place);
 *   2. tgc_node_exec_stage: each input where the kernel reads it (host
 *      memory for its host arguments, the device for the rest);
 *   3. tgc_node_exec_alloc: a buffer for each output the caller has not
 *      given one (buffer forwarding is the graph executor's decision: it
 *      sets out[0].buf itself before this step);
 *   4. tgc_node_exec_kernel: the kernel, with a check that a kernel that
 *      sizes its outputs gave each one a buffer.
 * Each step writes no message of its own beyond what it says: callers name
 * the node their way ("node 'a' (Add) on cpu0: ...", "op Add on cpu0: ...").
 * None allocates from the heap for a node of at most TGC_NODE_EXEC_SMALL_IO
 * inputs and outputs, and steps 2-4 are inline: they are the executor's
 * per-node overhead (bench/bench_executor.c), which a call apiece shows.
 *
 * Example usage (tgc_node_exec_run does this for a node with no forwarding):
 *     tgc_buffer *staged[2] = {NULL, NULL};
 *     int bad;
 *     s = tgc_node_exec_stage(n, k, d, tgc_node_exec_host_to(d), in, staged, &bad);
 *     if (s == TGC_OK) s = tgc_node_exec_infer(g, n, in, out, TGC_NODE_INFER_VALUES, NULL, NULL, err, sizeof err);
 *     if (s == TGC_OK) s = tgc_node_exec_alloc(n, k, d, out, &bad);
 *     tgc_kernel_ctx c = {.node = n, .device = d, .inputs = in, .n_inputs = 2, .outputs = out, .n_outputs = 1,
 *                         .error = err, .error_size = sizeof err, .def = k};
 *     if (s == TGC_OK) s = tgc_node_exec_kernel(&c);
 *     tgc_buffer_release(staged[0]); tgc_buffer_release(staged[1]);
 */
#ifndef TGC_DEVICES_NODE_EXEC_H
#define TGC_DEVICES_NODE_EXEC_H

#include "devices/kernel.h"

/* Inputs and outputs whose inference arrays live on the stack; a node
 * with more (Concat, Max... of any arity) takes them from the heap. */
#define TGC_NODE_EXEC_SMALL_IO 64

/* How tgc_node_exec_infer reads the inputs and judges the outputs. */
enum {
    /* Show inference the values of small int32/int64 inputs (rank <= 1,
     * at most TGC_MAX_VALUE_LEN elements) and of float32 scalars, where
     * they are in host memory: Reshape's shape, Range's limits. */
    TGC_NODE_INFER_VALUES = 1u << 0,
    /* The kernel sizes its outputs (tgc_kernel_def.sizes_outputs): a dim
     * inference cannot settle without the values is no error. */
    TGC_NODE_INFER_KERNEL_SIZES = 1u << 1,
    /* n's input refs are nodes of g (a graph step, a fold): an input that
     * g's inference made a sequence or an optional is shown with that kind
     * and an unknown rank, and the kernel reads its elements. Without it
     * every input is a tensor (an eager node's refs name its arguments). */
    TGC_NODE_INFER_GRAPH_KINDS = 1u << 2,
    /* An output left without a dtype or a rank counts as unresolved too
     * (eager ops: no graph inferred them beforehand). */
    TGC_NODE_INFER_EVERY_OUTPUT = 1u << 3,
};

/* Fills out[k].dtype, .rank and .dims (k < n->n_outputs; buffers left
 * alone) for node n of graph g (g: the limits and context inference
 * reads; not changed) over the input values in[0..n->n_inputs) (dtype
 * TGC_DTYPE_INVALID: omitted), by n->op->infer in run-time mode; `flags`
 * as above. A rank inference leaves unknown becomes 0 (a kernel that sizes
 * its outputs sets it).
 * *unresolved (may be NULL) is set true when inference succeeded but left
 * a dim it needs values for (or, with TGC_NODE_INFER_EVERY_OUTPUT, an
 * output without a dtype or rank), else false.
 * Returns TGC_OK; TGC_ERR_NOMEM; otherwise inference's own status
 * (TGC_ERR_INVALID, with its message: into diags when diags is not NULL,
 * else the first one into err when err is not NULL, formatted only on
 * failure), or TGC_ERR_INVALID when a dim stays unresolved without
 * TGC_NODE_INFER_KERNEL_SIZES ("cannot determine an output shape from the
 * inputs" into err; *unresolved true). Thread safe for distinct out[]. */
tgc_status tgc_node_exec_infer(const tgc_graph *g, const tgc_node *n, const tgc_value *in, tgc_value *out, unsigned flags,
                               bool *unresolved, tgc_diags *diags, char *err, size_t err_size);

/* Where a copy of input i of kernel k running on d goes when the input is
 * not where the kernel reads it: host_to (NULL: tgc_host_device()) for a
 * host-memory argument or any input of a kernel on a host-memory device,
 * else d. */
static inline tgc_device *tgc_node_exec_input_device(const tgc_kernel_def *k, tgc_device *d, tgc_device *host_to,
                                                     int i) {
    if (!tgc_kernel_host_input(k, i) && !tgc_device_host_memory(d)) return d;
    return host_to != NULL ? host_to : tgc_host_device();
}

/* The host_to that keeps a kernel's copies on its own device when that
 * device's memory is host memory (counted in its figures and limit), and
 * on the host device (NULL) otherwise. (A graph step passes NULL: its
 * host-memory arguments go to the host device whatever the kernel's.) */
static inline tgc_device *tgc_node_exec_host_to(tgc_device *d) { return tgc_device_host_memory(d) ? d : NULL; }

/* Puts each input of node n where kernel k on device d reads it: a
 * host-memory argument, or any input of a kernel on a host-memory device,
 * must be in host memory; any other input on d itself. Omitted inputs and
 * inputs the kernel reads only the dims of (metadata inputs) stay. An
 * input out of place is copied (tgc_buffer_copy, blocking) to
 * tgc_node_exec_input_device(k, d, host_to, i) (host_to NULL: the host
 * device, looked up only when a copy goes there) into staged[i] (NULL on
 * entry, for i < n->n_inputs), and in[i].buf becomes staged[i]; in[]'s
 * references are borrowed, staged[]'s are the caller's to release once
 * the kernel ran (on failure too: the copies made so far). Returns TGC_OK,
 * or the failed copy's status (TGC_ERR_NOMEM: no memory there;
 * TGC_ERR_RUNTIME: the copy failed) with *failed the input's index. */
static inline tgc_status tgc_node_exec_stage(const tgc_node *n, const tgc_kernel_def *k, tgc_device *d,
                                             tgc_device *host_to, tgc_value *in, tgc_buffer **staged, int *failed) {
    for (int i = 0; i < n->n_inputs; i++) {
        if (in[i].buf == NULL || tgc_kernel_metadata_input(k, i)) continue;
        tgc_device *at = in[i].buf->device;
        bool want_host = tgc_kernel_host_input(k, i) || tgc_device_host_memory(d);
        if (want_host ? tgc_device_host_memory(at) : at == d) continue;
        tgc_status s = tgc_buffer_copy(in[i].buf, tgc_value_nbytes(&in[i]),
                                       tgc_node_exec_input_device(k, d, host_to, i), &staged[i]);
        if (s != TGC_OK) {
            *failed = i;
            return s;
        }
        in[i].buf = staged[i];
    }
    return TGC_OK;
}

/* The device output i of kernel k on d lives on: the host device for a
 * host-memory output, else d. */
static inline tgc_device *tgc_node_exec_output_device(const tgc_kernel_def *k, tgc_device *d, int i) {
    return tgc_kernel_host_output(k, i) ? tgc_host_device() : d;
}

/* Allocates out[i].buf (tgc_buffer_alloc_typed, tgc_value_nbytes bytes of
 * out[i]'s dtype and dims) on tgc_node_exec_output_device(k, d, i) for
 * each output i < n->n_outputs whose buf is NULL; an output already
 * holding a buffer (one the caller forwarded) keeps it. Not for a kernel
 * that sizes its outputs. Returns TGC_OK, or TGC_ERR_NOMEM (the device
 * full or its limit reached) with *failed the output's index; the buffers
 * in out[] are the caller's to release either way. */
static inline tgc_status tgc_node_exec_alloc(const tgc_node *n, const tgc_kernel_def *k, tgc_device *d,
                                             tgc_value *out, int *failed) {
    for (int i = 0; i < n->n_outputs; i++) {
        if (out[i].buf != NULL) continue;
        tgc_device *od = tgc_node_exec_output_device(k, d, i);
        if (tgc_buffer_alloc_typed(od, out[i].dtype, tgc_value_nbytes(&out[i]), &out[i].buf) != TGC_OK) {
            out[i].buf = NULL;
            *failed = i;
            return TGC_ERR_NOMEM;
        }
    }
    return TGC_OK;
}

/* Runs c->def->fn on c (inputs staged, outputs allocated, or sized by the
 * kernel itself: then each output must hold a buffer afterwards). Returns
 * the kernel's status with its reason in c->error, or TGC_ERR_RUNTIME with
 * "the kernel did not allocate output I" there. */
static inline tgc_status tgc_node_exec_kernel(tgc_kernel_ctx *c) {
    tgc_status s = c->def->fn(c);
    for (int i = 0; s == TGC_OK && c->def->sizes_outputs && i < c->n_outputs; i++)
        if (c->outputs[i].buf == NULL) s = tgc_kernel_fail(c, "the kernel did not allocate output %d", i);
    return s;
}

/* The four steps for a node that forwards nothing, on device d with
 * copies kept as tgc_node_exec_host_to(d), one thread (pool NULL), no
 * kernel cache: constant folding's way to run a node. in[] (the node's
 * input values, borrowed and left as they are) are read; out[0..n_outputs)
 * receive new values whose buffers the caller owns (all NULL on failure).
 * flags: tgc_node_exec_infer's (KERNEL_SIZES is added for a kernel that
 * sizes its outputs). err (err_size > 0) receives the reason of a
 * failure. Returns TGC_OK, TGC_ERR_NOMEM, or the failed step's status. */
tgc_status tgc_node_exec_run(const tgc_graph *g, const tgc_node *n, const tgc_kernel_def *k, tgc_device *d,
                             const tgc_value *in, tgc_value *out, unsigned flags, char *err, size_t err_size);

#endif
