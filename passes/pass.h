/* The optimization passes (private to the library): one file a pass, each
 * a function that edits the working graph through passes/rewrite.h. The
 * driver (passes/optimize.c) rebuilds the graph after each pass, so every
 * pass starts from a canonical graph with topo set and every value
 * inferred. A pass returns TGC_OK (whether or not it changed anything) or
 * TGC_ERR_NOMEM; it never fails on a graph it does not understand: it
 * leaves that part alone. */
#ifndef TGC_PASSES_PASS_H
#define TGC_PASSES_PASS_H

#include "passes/rewrite.h"

typedef tgc_status (*tgc_pass_fn)(tgc_rewrite *rw);

/* float16 and bfloat16 nodes that no listed kind has a kernel for at
 * their dtype, but one has at float32, computed in float32 between Casts;
 * chains of them stay in float32 throughout, and narrow nodes between
 * float32 ones join them (passes/compute_in.c has the rules; ONNX
 * Runtime's InsertCastTransformer). Runs at every level, even
 * TGC_OPTIMIZE_NONE: without it such a node cannot be placed. */
tgc_status tgc_pass_compute_in_float32(tgc_rewrite *rw);

/* With rw->float16 (the session's float16 option): float32 nodes that a
 * listed kind other than the host has a float16 kernel for computed in
 * float16 between Casts, chains of them in float16 throughout, the Casts
 * of weights folded by fold-constants into float16 initializers (the
 * conversion of onnxconverter-common's convert_float_to_float16 with
 * keep_io_types, done at session creation; passes/compute_in.c). Does
 * nothing without the option. */
tgc_status tgc_pass_compute_in_float16(tgc_rewrite *rw);

/* True when an op node of g computes in float16 or bfloat16 (its kernel
 * dtype): the graphs compute-in-float32 has anything to look at. */
bool tgc_pass_has_narrow_nodes(const tgc_graph *g);

/* Replaces every value computable at compile time by an initializer: the
 * tensor outputs of deterministic ops whose inputs are all initializers
 * (run once, node by node, on a cpu through devices/node_exec.h; control
 * flow never), and small integer tensors whose value inference already
 * knows (shape arithmetic over static shapes: Shape, Gather of it,
 * Concat...). Outputs above 10 MiB stay computed at run time (TensorFlow
 * grappler's limit). ONNX Runtime's ConstantFolding, grappler's constant
 * folding. */
tgc_status tgc_pass_fold_constants(tgc_rewrite *rw);

/* Common subexpression elimination: of two op nodes with the same op,
 * inputs, attributes and requested device, or two initializers of at most
 * 1 MiB with the same dtype, shape and bytes, the later one's readers read
 * the earlier one. Nondeterministic ops (Random*, Bernoulli, Multinomial,
 * Dropout) and nodes with control inputs are never merged. */
tgc_status tgc_pass_eliminate_common(tgc_rewrite *rw);

/* Removes op nodes and initializers that no graph output depends on (data
 * or control); graph inputs stay, fed or not. */
tgc_status tgc_pass_eliminate_dead(tgc_rewrite *rw);

/* Folds an inference-mode BatchNormalization into the Conv (or Gemm with
 * a constant B) before it: W' = W * s, B' = (B - mean) * s + beta with
 * s = scale / sqrt(var + epsilon) per output channel, computed in float64
 * and rounded once. Only when every parameter is a float32 initializer and
 * the BatchNormalization is the Conv's only reader. */
tgc_status tgc_pass_fold_batch_norm(tgc_rewrite *rw);

/* A zero-valued constant Pad of the spatial axes folded into the Conv or
 * AveragePool that alone reads it, as that op's pads (AveragePool's then
 * counted: count_include_pad 1); ONNX Runtime's PadFusion.
 * passes/fuse_pad.c. */
tgc_status tgc_pass_fuse_pad(tgc_rewrite *rw);

/* Conv kernel taps that read only padding (static spatial sizes: no
 * output position's tap lands inside the input) cut from the weights, the
 * pads shrunk to match: the same output, less work (DeepLabV3's dilated
 * 3x3 convolutions over small maps become 1x1). Constant float32 weights,
 * auto_pad NOTSET, pads kept >= 0. passes/trim_conv_taps.c. */
tgc_status tgc_pass_trim_conv_taps(tgc_rewrite *rw);

/* _ConvNHWC(x, W, B) + Z, the Add the convolution's only reader and Z of
 * its output's shape and dtype (float32): one _ConvNHWC(x, W, B, Z) that
 * adds Z as it writes each piece, so that the Relu after a residual Add
 * fuses into it as well (ONNX Runtime's ConvAddActivationFusion); and
 * Conv(x, W, B) + Z the same way, one _ConvAdd(x, W, B, Z), where every
 * listed device kind has its kernel. After nhwc-conv, before
 * fuse-elementwise. passes/fuse_conv_add.c. */
tgc_status tgc_pass_fuse_conv_add(tgc_rewrite *rw);

/* MatMul(A, B) + C, with A of rank 2, B a [K, N] initializer and C an
 * initializer broadcastable to [M, N] (a bias [N] or [1, N], or a scalar),
 * the Add being the MatMul's only reader: one Gemm (ONNX Runtime's
 * MatMulAddFusion). */
tgc_status tgc_pass_matmul_add_to_gemm(tgc_rewrite *rw);

/* GELU from its decomposed ONNX forms, x * 0.5 * (1 + Erf(x / sqrt 2)) (and
 * the tanh approximation, becoming Gelu approximate "tanh") in
 * any association of the products (x / sqrt 2 also as x * (1 / sqrt 2)),
 * as PyTorch and TensorFlow export it, becomes one Gelu node (ONNX Runtime's
 * GeluFusion). Every intermediate must have no other reader. */
tgc_status tgc_pass_fuse_gelu(tgc_rewrite *rw);

/* SiLU, x * Sigmoid(x) (the Mul's operands in either order, the Sigmoid
 * read only there, no broadcast), becomes one _Swish(x): an activation the
 * kernel before it can apply as it writes (ONNX Runtime's QuickGelu fusion
 * of the same pattern). */
tgc_status tgc_pass_fuse_swish(tgc_rewrite *rw);

/* LayerNormalization from its decomposed form over the last axis:
 * d = x - ReduceMean(x); y = d / Sqrt(ReduceMean(d^2) + eps) [* gamma]
 * [+ beta] (Pow(d, 2) or d * d), as exporters below opset 17 write it,
 * becomes one LayerNormalization (ONNX Runtime's LayerNormFusion). */
tgc_status tgc_pass_fuse_layer_norm(tgc_rewrite *rw);

/* Scaled dot-product attention, softmax(scale * Q K^T [+ mask]) V over the
 * last axis in the decomposed forms exporters write, becomes one
 * _Attention node (passes/fuse_attention.c has the rules); only when every
 * device in the list has an _Attention kernel. */
tgc_status tgc_pass_fuse_attention(tgc_rewrite *rw);

/* Fusion groups of elementwise nodes, each made one _FusedElementwise node
 * (passes/fuse_elementwise.c has the rules); only when rw->fuse_groups. */
tgc_status tgc_pass_fuse_elementwise(tgc_rewrite *rw);

/* DequantizeLinear -> Conv / MatMul -> QuantizeLinear groups (a statically
 * quantized model's QDQ form) replaced by QLinearConv / QLinearMatMul,
 * computed in integers (passes/fuse_qdq.c has the rules; ONNX Runtime's
 * QDQ transformers). Runs before fold-constants, which would fold the
 * weights' DequantizeLinear into float weights. */
tgc_status tgc_pass_fuse_qdq(tgc_rewrite *rw);

/* True when g has a QuantizeLinear (fuse-qdq has something to look at). */
bool tgc_pass_has_quantize(const tgc_graph *g);

/* nhwc-conv: QLinearConv nodes channels last (_QLinearConvNHWC), and
 * chains of float32 pointwise and depthwise Convs (_ConvNHWC), where every
 * listed device kind has a kernel for them, and the Transposes around
 * them moved through elementwise nodes until they cancel (ONNX Runtime's
 * NhwcTransformer). Runs after fuse-qdq, fold-constants and
 * fold-batch-norm. */
tgc_status tgc_pass_nhwc_conv(tgc_rewrite *rw);

/* True when g has a QLinearConv or a Conv (nhwc-conv has something to look at). */
bool tgc_pass_has_conv(const tgc_graph *g);

/* The kinds `devices` (a --devices list, "cpu,gpu0") names, as a mask
 * (bit k: kind k, devices/backend.h); 0 for NULL or a bad list. */
uint32_t tgc_pass_device_kinds(const char *devices);

/* True when every kind in `kinds` (0: every kind there is) has a float32
 * kernel of `op` (a rewrite makes such a node only where it can run). */
bool tgc_pass_kernel_everywhere(uint32_t kinds, const char *op);

/* As tgc_pass_kernel_everywhere, for a kernel taking dtype t. */
bool tgc_pass_kernel_everywhere_at(uint32_t kinds, const char *op, tgc_dtype t);

/* True when `devices` parses and every kind it names has a
 * _FusedElementwise kernel at dtype t (float32: cpu and gpu; float16: the
 * gpu alone); false for NULL or a bad list. */
bool tgc_pass_fusion_devices(const char *devices, tgc_dtype t);

/* Helpers the passes share (passes/pass_util.c). */

/* The node reading value r when it is the only reader (and r is no graph
 * output), else -1. */
int32_t tgc_pass_only_reader(const tgc_rewrite *rw, tgc_ref r);

/* True when nodes a and b ask for the same device, or neither asks: a
 * fused node must not join two requests. */
bool tgc_pass_same_device(const tgc_node *a, const tgc_node *b);

/* Cuts one node of a copy (tgc_pass_cut_copy): node id of rw, `named`
 * saying which nodes another names in its colocate_with; *cut when it
 * rewrote something. */
typedef tgc_status (*tgc_pass_cut_fn)(tgc_rewrite *rw, int32_t id, const bool *named, void *arg, bool *cut);

/* A copy of g in *out (its weights borrowed from g; the constants the
 * cuts make its own, named by tgc_pass_name_made_weights) in which
 * cut(rw, id, named, arg) ran on every node id of g in topological order
 * (not on the nodes the cuts add, nor on those they removed); *n_cut: how
 * many cut something. The driver of split-heavy and split-spatial.
 * TGC_OK, TGC_ERR_INVALID (inference of the result failed, in diags) or
 * TGC_ERR_NOMEM (*out NULL). */
tgc_status tgc_pass_cut_copy(const tgc_graph *g, tgc_pass_cut_fn cut, void *arg, tgc_diags *diags, tgc_graph **out,
                             int32_t *n_cut);

/* Per node of g (n_nodes + 1 entries, tgc_free): whether another node
 * names it in its colocate_with. NULL when out of memory. */
bool *tgc_pass_colocation_targets(const tgc_graph *g);

/* Node n's attribute `name` as an int (a float), or dflt when it has
 * none of that type. */
int64_t tgc_pass_attr_int(const tgc_node *n, const char *name, int64_t dflt);
double tgc_pass_attr_float(const tgc_node *n, const char *name, double dflt);

/* True when node id is a live op node `op` without control inputs. */
bool tgc_pass_is_op(const tgc_rewrite *rw, int32_t id, const char *op);

/* Calls rewrite(rw, id) for every node id that tgc_pass_is_op finds to be
 * `op`, in topological order, until one returns other than TGC_OK (its
 * status is returned). Nodes the rewrites add are not visited. */
tgc_status tgc_pass_each_op(tgc_rewrite *rw, const char *op, tgc_status (*rewrite)(tgc_rewrite *rw, int32_t id));

/* True when r is a float32 initializer of one element within a relative
 * 1e-4 of `want` (exactly `want` when want is 0). */
bool tgc_pass_is_scalar(const tgc_rewrite *rw, tgc_ref r, double want);

/* For a binary node id: the index (0 or 1) of its input that `pred` holds
 * for, the other one in *other; -1 when neither does. */
int tgc_pass_match_either(const tgc_rewrite *rw, int32_t id, bool (*pred)(const tgc_rewrite *, tgc_ref, void *),
                          void *ctx, tgc_ref *other);

/* The initializer data behind value r, or NULL when r is not an
 * initializer's output. */
const tgc_const *tgc_pass_const_of(const tgc_rewrite *rw, tgc_ref r);

/* A new owned constant of dtype and concrete shape with zeroed data
 * (nbytes from the shape, overflow-checked), positioned at pos. NULL if out
 * of memory or too large. */
tgc_const *tgc_pass_new_const(tgc_dtype dtype, const tgc_shape *shape, tgc_srcpos pos);

/* True for ops whose outputs are not a function of their inputs and
 * attributes (Random*, Bernoulli, Multinomial, Dropout) or that talk to
 * other partitions (_Send, _Recv): never folded or merged. */
bool tgc_pass_op_is_stateful(const char *op_name);

/* Gives each initializer a pass made (more than a few elements: small ones
 * stay inline) the `file:` a dump writes it to: "optimized/NAME.npy", NAME
 * the node's name with anything but [A-Za-z0-9._-] as '_', and its id
 * when that is taken. TGC_OK or TGC_ERR_NOMEM. */
tgc_status tgc_pass_name_made_weights(tgc_graph *g);

/* split-heavy (passes/split_heavy.c has the rules): a copy of g in *out
 * (owned by the caller; its weights borrowed from g, which must outlive
 * it, the slices its own) in which each MatMul, Gemm, Conv and _ConvNHWC
 * (group 1) whose constant weight holds more than piece_bytes bytes is
 * cut along its output features into pieces of at most piece_bytes (at
 * most 64 pieces, whole multiples of 16 features where there are enough),
 * joined by a Concat that takes the node's name; nodes with a device spec
 * or in a colocation are left whole. *n_cut: how many nodes were cut (0:
 * *out is a plain copy). The compile driver's answer to a graph whose
 * weights no split over the devices fits (Megatron-LM's column-parallel
 * layers). TGC_OK, TGC_ERR_INVALID (inference of a piece failed: a tgc
 * bug, in diags) or TGC_ERR_NOMEM (*out NULL). */
tgc_status tgc_graph_split_heavy(const tgc_graph *g, int64_t piece_bytes, tgc_diags *diags, tgc_graph **out,
                                 int32_t *n_cut);

/* split-spatial (passes/split_spatial.c has the rules): a copy of g in
 * *out (owned by the caller; its weights borrowed from g, which must
 * outlive it) in which each Conv over a 4-D map, with the activations and
 * the pool that follow it, whose largest step holds more than
 * max_step_bytes (a node's input and output rows) is cut along the rows
 * into the fewest bands (at most 16) whose steps hold at most that, each
 * band reading a Slice of the input rows (its halo included), joined by a
 * Concat on axis 2 that takes the last node's name; nodes with a device
 * spec, colocation or control edges are left whole. *n_cut: how many
 * chains were cut. The compile driver's answer to a step whose
 * activations no device holds. TGC_OK, TGC_ERR_INVALID (inference of a
 * band failed: a tgc bug, in diags) or TGC_ERR_NOMEM (*out NULL). */
tgc_status tgc_graph_split_spatial(const tgc_graph *g, int64_t max_step_bytes, tgc_diags *diags, tgc_graph **out,
                                   int32_t *n_cut);

#endif
