/* Kernels: (op, device kind) -> a compute function, with what it declares
 * about memory: which inputs and outputs live in host memory, and which
 * input an output may overwrite (buffer forwarding). Private to the library.
 *
 * The executor computes every output's shape before the kernel runs (by the
 * op's inference function over the actual input shapes and small integer
 * input values), allocates the outputs (or forwards an input's buffer), and
 * then calls the kernel. A kernel only computes.
 *
 * Example usage (a kernel, in devices/cpu/):
 *     static tgc_status relu_f32(tgc_kernel_ctx *c) {
 *         const float *x = tgc_kernel_in_ptr(c, 0);
 *         float *y = tgc_kernel_out_ptr(c, 0);
 *         for (int64_t i = 0, n = tgc_tensor_numel(&c->outputs[0]); i < n; i++)
 *             y[i] = x[i] > 0 ? x[i] : 0;     // safe in place
 *         return TGC_OK;
 *     }
 *     const tgc_kernel_def tgc_cpu_kernels_relu[] = {
 *         {.op = "Relu", .fn = relu_f32, .forward_input = 0}, {.op = NULL}};
 * and listing tgc_cpu_kernels_relu among the cpu backend's families
 * (devices/cpu/cpu_backend.c): a kernel's kind is its backend's.
 */
#ifndef TGC_DEVICES_KERNEL_H
#define TGC_DEVICES_KERNEL_H

#include "devices/device.h"
#include "devices/kernel_cache.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "support/parallel_for.h"

/* A tensor value as the runtime sees it: dtype, concrete dims, buffer. A
 * value type; whoever stores one owns one reference to its buffer. An
 * omitted optional input has buf == NULL and dtype TGC_DTYPE_INVALID. */
typedef struct tgc_value {
    tgc_dtype dtype;
    int rank;
    int64_t dims[TGC_MAX_RANK];
    tgc_buffer *buf;
} tgc_value;

/* A value holds a sequence or an optional when its buffer is a list
 * (device.h's tgc_buffer_alloc_list): rank 0, dtype its elements'. */
static inline bool tgc_value_is_list(const tgc_value *v) { return v->buf != NULL && v->buf->list != 0; }

/* The element count (tgc_checked_numel, support/checked.h), or -1 when a
 * dim is negative or the count does not fit in int64. Inference refuses
 * such shapes ("size-overflow"), so a value the executor made never gives
 * -1. */
int64_t tgc_value_numel(const tgc_value *v);
/* The bytes of the value's elements (tgc_checked_dims_nbytes; a list's:
 * its slots' bytes), or SIZE_MAX when they do not fit in TGC_MAX_BYTES: an allocation of that size fails
 * cleanly where a wrapped product would have allocated too little. */
size_t tgc_value_nbytes(const tgc_value *v);

typedef struct tgc_kernel_def tgc_kernel_def;

/* An activation a kernel applies to its output as it writes it, absorbed
 * from the node that followed (executor/fuse.c): a unary float row of
 * graph/elementwise.def (a tgc_ew_op) with its parameters P0..P2; row -1:
 * none.
 * A kernel's epilogue may also add a residual first (a _ConvAdd's Z,
 * graph/ops_conv.c): when `residual` is set, each float32 output element
 * y[i] (i its offset from `out`, output 0's first element) becomes
 * act(y[i] + residual[i]), residual having output 0's shape and layout and
 * not sharing its buffer. The kernel sets both pointers on its own copy
 * for the run; the executor's (p->fused_act) leaves them NULL. */
typedef struct tgc_fused_act {
    int row;
    float params[3];
    const float *residual;
    const float *out;
} tgc_fused_act;

typedef struct tgc_kernel_ctx {
    const tgc_node *node; /* the node being run: attributes, name */
    tgc_device *device;
    const tgc_value *inputs;
    int n_inputs;
    tgc_value *outputs; /* shapes and buffers set by the executor */
    int n_outputs;
    char *error;        /* a kernel writes its reason here (tgc_kernel_fail) */
    size_t error_size;
    /* The device's worker threads, for splitting one kernel's work with
     * tgc_parallel_for (support/parallel_for.h); NULL: run on the caller. */
    tgc_thread_pool *pool;
    /* The node's cache across runs (devices/kernel_cache.h), NULL outside a
     * session, and which inputs are session constants (bit i: input i is
     * an initializer, the same values every run). */
    tgc_kernel_cache *cache;
    uint32_t const_inputs;
    /* Apply this activation to output 0 as the last step of each block
     * written: the executor absorbed the node that follows (executor/fuse.c).
     * NULL: none. Set only for kernels whose definition says
     * fuses_activation at output 0's dtype (tgc_kernel_fuses_at). */
    const tgc_fused_act *fused_act;
    /* The step's checks left for its end (devices/deferred_checks.h): a
     * device-side verdict the kernel need not wait for. NULL outside a
     * step (eager ops, prepacking, unit tests): the kernel checks at once. */
    struct tgc_deferred_checks *checks;
    /* Where a device's launches leave their handles for the trace's
     * device-side times (devices/device_events.h); NULL: not tracing. */
    struct tgc_device_events *events;
    /* The kernel being run (NULL in unit tests that call a kernel directly):
     * tgc_kernel_alloc_output reads its host-output mask. */
    const tgc_kernel_def *def;
    /* Out: how the kernel ran, when it has several ways (a static string:
     * "onednn packed matmul", "winograd f(2x2,3x3)"); the executor shows it in
     * traces. Left NULL by kernels with one way. */
    const char *impl;
    /* Set by the session's prepacking (executor/prepack.c): build the
     * node's cache and return without computing; the outputs are left
     * unwritten. A kernel that ignores it computes as usual. */
    bool prepack_only;
    /* The most bytes of workspace this run may take, all of its pool's
     * threads together (devices/memory_limit.h, tgc_workspace_limit: a
     * share of the device's --memory-limit); 0: no limit. A kernel with a
     * choice takes a way within it (Winograd's tiles in bands); one
     * without keeps its way. The footprint hook sees the same figure. */
    int64_t workspace_limit;
} tgc_kernel_ctx;

typedef tgc_status (*tgc_kernel_fn)(tgc_kernel_ctx *c);

/* How a kernel with several ways will run a node: the name of the way
 * (a static string, as it sets tgc_kernel_ctx.impl at run time), decided
 * from c->node's attributes, the dtypes and dims of c->inputs and
 * c->outputs and c->const_inputs alone; buffers may be NULL and must not
 * be read. NULL: it cannot say from these (bad arguments among them: the
 * run's checks report those). tgc_kernel_choice calls it with the static
 * shapes a graph infers, so --dump placed shows what a run will take. */
typedef const char *(*tgc_kernel_choose_fn)(tgc_kernel_ctx *c);

/* What a kernel holds in host memory besides its inputs and outputs when
 * it runs a node, in bytes (tgc_kernel_footprint_fn). Upper bounds where a
 * library decides the size (oneDNN's packed layouts). */
typedef struct tgc_kernel_footprint {
    /* Kept across runs in the node's cache (devices/kernel_cache.h): a
     * weight in the kernel's own layout, built on the first run. */
    int64_t cache_bytes;
    /* Allocated while the kernel runs and freed before it returns
     * (im2col columns, Winograd's transformed tiles), for a pool of
     * `width` threads. */
    int64_t workspace_bytes;
    /* Constant inputs (bit i: input i) the cache stands in for once built
     * (tgc_kernel_cache_replaces): the kernel will not read them again. */
    uint32_t replaces_inputs;
    /* The way copies x into channels last and y back around a
     * channels-last kernel: a graph pass that lays the tensors out so
     * (passes/nhwc_conv.c) saves the copies and loses nothing. */
    bool copies_channels_last;
    /* The way cuts its work for the pool into a few large pieces (a
     * GEMM's: devices/cpu/kernels_gemm.c, gemm_packed.c), so that a thread
     * that comes late to it finds at most one left: nodes run beside it
     * leave a thread idle at its end (executor/step.c). */
    bool coarse_pieces;
} tgc_kernel_footprint;

/* The footprint of the way the kernel will run c->node, from the same
 * arguments a chooser gets (tgc_kernel_choose_fn: attributes, dtypes,
 * dims, const_inputs; buffers may be NULL and must not be read) and
 * c->workspace_limit, for a device pool `width` threads wide. Leaves *out zero where it holds
 * nothing or cannot say. */
typedef void (*tgc_kernel_footprint_fn)(tgc_kernel_ctx *c, int width, tgc_kernel_footprint *out);

#define TGC_KERNEL_MAX_DTYPES 16 /* room for every dtype and the terminator */

struct tgc_kernel_def {
    const char *op; /* the op's name in the op registry (graph/op_registry.h) */
    tgc_kernel_fn fn;
    /* Bit i set: input i / output i lives in host memory (shape arguments).
     * The masks speak of positions 0..TGC_KERNEL_MASK_BITS-1 only (a
     * kernel's shape arguments are among its first inputs); any later
     * position is ordinary device data, whatever the op's arity. Read them
     * through tgc_kernel_host_input and friends, never by shifting. */
    uint32_t host_inputs;
    uint32_t host_outputs;
    /* Bit i set: the kernel reads only input i's dtype and dims (Shape,
     * Size), so the input stays wherever it is. */
    uint32_t metadata_inputs;
    /* Output 0 may overwrite this input's buffer when the executor sees it
     * is that buffer's last user (same size); -1: never. */
    int forward_input;
    /* Dtypes of input 0 this kernel handles (TGC_DTYPE_INVALID-terminated;
     * empty: any). The placer uses this for kernel availability. */
    tgc_dtype dtypes[TGC_KERNEL_MAX_DTYPES];
    /* The kernel honours tgc_kernel_ctx.fused_act on float32 outputs, and
     * with fuses_activation_half on float16 ones too. */
    bool fuses_activation;
    bool fuses_activation_half;
    /* The outputs' dims depend on the input values (NonZero, Unique,
     * Compress, NonMaxSuppression): the executor does not allocate them;
     * the kernel computes each output's dims and calls
     * tgc_kernel_alloc_output for every output before it writes it. */
    bool sizes_outputs;
    /* The kernel's ways (tgc_kernel_choose_fn); NULL: one way. */
    tgc_kernel_choose_fn choose;
    /* What it holds besides inputs and outputs; NULL: nothing (for the
     * static memory plan, executor/memory_plan.c). */
    tgc_kernel_footprint_fn footprint;
};

/* Positions a kernel definition's masks describe. */
#define TGC_KERNEL_MASK_BITS 32

/* Bit `pos` of `mask`; false for any position past the mask's width (and
 * a negative one), so an op of any arity can be asked about. */
static inline bool tgc_kernel_mask_has(uint32_t mask, int pos) {
    return pos >= 0 && pos < TGC_KERNEL_MASK_BITS && ((mask >> pos) & 1u);
}

/* Input i is a host-memory argument of kernel k (false when k is NULL). */
static inline bool tgc_kernel_host_input(const tgc_kernel_def *k, int i) {
    return k != NULL && tgc_kernel_mask_has(k->host_inputs, i);
}

/* The kernel reads only input i's dtype and dims. */
static inline bool tgc_kernel_metadata_input(const tgc_kernel_def *k, int i) {
    return k != NULL && tgc_kernel_mask_has(k->metadata_inputs, i);
}

/* Output i of kernel k lives in host memory. */
static inline bool tgc_kernel_host_output(const tgc_kernel_def *k, int i) {
    return k != NULL && tgc_kernel_mask_has(k->host_outputs, i);
}

/* ---- The kernel index (devices/kernel_index.c) ---------------------------
 * Every backend's kernels (backend.h, its families) indexed by (op id,
 * kind) on first use: a lookup is a hash of the op and a scan of that op's
 * few kernels on the kind. Thread safe. */

/* The first kernel of op `op` on `kind` (in its backend's family order)
 * that handles dtype `dtype` (its dtypes list it, or it lists none;
 * TGC_DTYPE_INVALID: any kernel of the op), or NULL. */
const tgc_kernel_def *tgc_kernel_lookup(const tgc_op_def *op, tgc_device_kind kind, tgc_dtype dtype);

/* tgc_kernel_lookup by the op's name (tests, and kernels that run another
 * kind's kernel of the same op). */
const tgc_kernel_def *tgc_kernel_find(const char *op, tgc_device_kind kind, tgc_dtype dtype);

/* THE rule for which kernel runs node n on `kind`: the kernel of n's op
 * chosen by dtype `in0` (input 0's; TGC_DTYPE_INVALID when n has none, or
 * it is omitted) or else `out0` (output 0's), provided the backend
 * supports the node (tgc_backend.supports); none on a kind without host
 * memory when `host_values` (n reads or writes a string tensor, a sequence
 * or an optional, which live in host memory only). NULL: no kernel. The
 * graph stages call it through tgc_kernel_for_node, eager ops with the
 * dtypes of the values at hand. */
const tgc_kernel_def *tgc_kernel_select(const tgc_node *n, tgc_device_kind kind, tgc_dtype in0, tgc_dtype out0,
                                        bool host_values);

/* The dtype node n's kernel is chosen by, from g's inferred infos: input
 * 0's when n has one, else output 0's (TGC_DTYPE_INVALID: neither). */
tgc_dtype tgc_kernel_node_dtype(const tgc_graph *g, const tgc_node *n);

/* tgc_kernel_select for node n of the inferred graph g (an op node; NULL
 * for inputs and initializers). */
const tgc_kernel_def *tgc_kernel_for_node(const tgc_graph *g, const tgc_node *n, tgc_device_kind kind);

/* The kernels of `kind`'s families whose op the registry does not hold
 * (never run; the tests check there are none). */
int tgc_kernel_index_unresolved(tgc_device_kind kind);

/* The way kernel `def` will run node `id` of g (def->choose) on the
 * static shapes g's inference gave its inputs and outputs, with the
 * inputs read from initializers counted as session constants; NULL when
 * the kernel has one way, a shape is unknown or symbolic, the node has
 * more than TGC_KERNEL_MASK_BITS inputs or outputs (the session-constant
 * mask's width; no kernel with ways has), or the chooser cannot say. The
 * string is static. */
const char *tgc_kernel_choice(const tgc_kernel_def *def, const tgc_graph *g, int32_t id);

/* What kernel `def` would hold for node `id` of g (def->footprint) on a
 * pool `width` threads wide under a workspace limit of `workspace_limit`
 * bytes (0: none; tgc_kernel_ctx.workspace_limit), from the static shapes
 * g's inference gave (as tgc_kernel_choice); zeros when the kernel has no
 * footprint hook or a shape is unknown or symbolic. Bytes. */
tgc_kernel_footprint tgc_kernel_node_footprint(const tgc_kernel_def *def, const tgc_graph *g, int32_t id, int width,
                                               int64_t workspace_limit);

/* Whether node n of g is an activation a producer may apply as it writes
 * (executor/fuse.c): an op of a unary float32 elementwise row that is no
 * predicate, with one float32 output, reading output 0 of a node as its
 * input 0, with no other input but Clip's bounds, which must be
 * constants; its row and parameters into *act. Whether its producer can
 * take it is the caller's to check. */
bool tgc_activation_of(const tgc_graph *g, const tgc_node *n, tgc_fused_act *act);

/* Whether node `id` of g, on a device whose kernel for its producer is
 * `producer` (NULL: none), would be absorbed into that producer when both
 * run there: an activation (tgc_activation_of) whose producer's kernel
 * fuses_activation and whose producer's output 0 nothing else reads, not
 * even the graph's outputs (`readers`: per node, the readers of its
 * output 0, graph outputs counted). The placer's costs count such a node
 * as free (its work is in the producer's pass over the tensor). */
/* Whether kernel k applies a fused activation to an output of dtype t
 * (fuses_activation for float32, fuses_activation_half for float16). */
static inline bool tgc_kernel_fuses_at(const tgc_kernel_def *k, tgc_dtype t) {
    return k != NULL && ((t == TGC_FLOAT32 && k->fuses_activation) || (t == TGC_FLOAT16 && k->fuses_activation_half));
}

bool tgc_activation_absorbed(const tgc_graph *g, int32_t id, const tgc_kernel_def *producer, const int32_t *readers);

/* Host pointers of input/output i's data (cpu kernels and host-memory
 * arguments); NULL for an omitted input or an empty tensor's NULL memory. */
const void *tgc_kernel_in_ptr(const tgc_kernel_ctx *c, int i);
void *tgc_kernel_out_ptr(const tgc_kernel_ctx *c, int i);

/* Attribute readers over c->node (defaults as in the op's schema). */
int64_t tgc_kernel_attr_int(const tgc_kernel_ctx *c, const char *name, int64_t dflt);
double tgc_kernel_attr_float(const tgc_kernel_ctx *c, const char *name, double dflt);
const char *tgc_kernel_attr_string(const tgc_kernel_ctx *c, const char *name, const char *dflt);
/* INTS attribute: the list (borrowed) and its length; NULL/0 if absent. */
const int64_t *tgc_kernel_attr_ints(const tgc_kernel_ctx *c, const char *name, size_t *n);

/* For kernels that size their outputs (tgc_kernel_def.sizes_outputs):
 * sets output i's dims to dims[0..rank) (dtype as inferred) and allocates
 * its buffer on the kernel's device, or in host memory for a host output.
 * The byte size is overflow-checked. Call once per output. Returns TGC_OK;
 * TGC_ERR_NOMEM (a device full or its memory limit reached) or
 * TGC_ERR_INVALID (rank out of [0, TGC_MAX_RANK], a negative dim, an
 * output already allocated), each with a reason in c->error. */
tgc_status tgc_kernel_alloc_output(tgc_kernel_ctx *c, int i, int rank, const int64_t *dims);

/* For kernels that size their outputs: output i becomes the value v itself
 * (its buffer retained), as SequenceAt gives an element. TGC_OK, or
 * TGC_ERR_INVALID (output already set, v empty) with a reason. */
tgc_status tgc_kernel_set_output(tgc_kernel_ctx *c, int i, const tgc_value *v);

/* For kernels that size their outputs: output i becomes a new list value
 * (device.h's tgc_buffer_alloc_list, in host memory) of kind `kind`
 * (TGC_KIND_SEQUENCE, TGC_KIND_OPTIONAL) holding n values whose elements are
 * of dtype `elem`; returns its n slots for the kernel to fill (each slot
 * given a reference of its own: tgc_buffer_retain), or NULL with a reason
 * in c->error when out of memory. For n 0 the pointer is not NULL and not
 * to be written. A list value's rank is 0 and its dtype its elements'. */
tgc_value *tgc_kernel_alloc_list(tgc_kernel_ctx *c, int i, uint8_t kind, size_t n, tgc_dtype elem);

/* Writes a reason for failing into c->error; returns TGC_ERR_RUNTIME. */
tgc_status tgc_kernel_fail(tgc_kernel_ctx *c, const char *fmt, ...) TGC_PRINTF(2, 3);

/* As tgc_kernel_fail for a kernel's own memory (a workspace) the device
 * could not give: returns TGC_ERR_NOMEM (the step reports out-of-memory). */
tgc_status tgc_kernel_fail_nomem(tgc_kernel_ctx *c, const char *fmt, ...) TGC_PRINTF(2, 3);

#endif
