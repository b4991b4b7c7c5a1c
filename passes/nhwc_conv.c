/* Channels last for convolutions, as ONNX Runtime's NhwcTransformer does
 * for QLinearConv (onnxruntime/core/optimizer/nhwc_transformer.cc, with its
 * transpose optimizer) and its NchwcTransformer for float ones: oneDNN's
 * convolutions run fastest on channels-last tensors, and a network of them
 * loses to copies what it gains when every layer goes in and out of NCHW.
 *
 * 1. Each QLinearConv over a 4-D x whose weights are constants with zero
 *    points of 0 (int8 0, or uint8 128: what oneDNN takes) becomes
 *        Transpose(x, [0, 2, 3, 1]) -> _QLinearConvNHWC -> Transpose([0, 3, 1, 2])
 *    (graph/ops_quant.c), where every listed device kind has a kernel for
 *    it at x's dtype (the cpu's: devices/cpu/kernels_quant_conv.c). So
 *    does each float32 Conv with constant weights that is pointwise (1x1,
 *    stride 1, no pads, one group), depthwise (a group a channel, as many
 *    outputs), grouped with groups of 16, 32, .. channels (RegNetX,
 *    ResNeXt: GROUPED_CHANNELS) or an image's first layer (at most 4 channels), on maps of
 *    at most MAX_POSITIONS, into _ConvNHWC (graph/ops_conv.c; the cpu's
 *    kernel: devices/cpu/kernels_conv_nhwc.c, where oneDNN is there), when
 *    it reads or feeds another such Conv, directly or through one
 *    elementwise node (a ReLU6, a residual Add), or reads a Concat of
 *    such Convs' outputs (a fire module's, an Inception block's): the
 *    chains of mobile networks (MobileNet, EfficientNet, MNASNet,
 *    SqueezeNet's classifier), never a lone 1x1 between
 *    3x3 layers (ResNet-50's bottlenecks), whose Transposes would stay.
 *    So does a dense Conv the cpu would run through oneDNN's channels-last
 *    kernel anyway, on NHWC copies (3x3 layers on small maps with few
 *    multiply-adds: devices/cpu/conv_dnnl.c): the same kernel, no copies.
 *    A strided 1x1 (one group, no pads: a residual stage's projection
 *    shortcut) goes when an elementwise reader (the Add) joins it with a
 *    Conv that goes (joins_channels_last): kept NCHW, it left the Add two
 *    Transposes and the next block one more (RegNetX-800MF 8 Transposes
 *    -> 2, ResNeXt-50 7 -> 2). Two Convs reading one value share its
 *    Transpose into NHWC (an Inception block's branches: Inception-v3 36
 *    -> 26 Transposes; eliminate-common runs before this pass).
 *    MobileNetV2's 1x1 and depthwise layers, alone on one thread: 3.48 ms
 *    in tgc's NCHW kernels, 2.69 in oneDNN's NHWC ones
 *    (bench/bench_conv_families, dnnl* in NHWC); in the model, only those
 *    on small maps keep their gain (MAX_POSITIONS).
 * 2. Transposes move down through elementwise nodes whose other inputs are
 *    one-element constants (DequantizeLinear and QuantizeLinear per
 *    tensor, Add, Mul, Relu, Clip, ...), one Transpose after the node in
 *    place of one before each input: Add(T(a), T(b)) = T(Add(a, b)) when
 *    both have the same permutation and rank. An input b that is not a
 *    Transpose but is read by one that undoes T (a residual block's skip,
 *    NCHW, which the block's first convolution reads channels last) joins
 *    through that one: Add(T(a), b) = T(Add(a, T'(b))), no Transpose
 *    added (undoing_reader). A residual block's
 *    DequantizeLinear -> Add -> QuantizeLinear then runs channels last.
 *    A MaxPool reading a Transpose back to NCHW becomes _MaxPoolNHWC with
 *    the Transpose after it (ResNet's pool between its first convolution
 *    and the first block), and a Concat all of whose inputs are such
 *    Transposes joins them channels last (a fire module's or an Inception
 *    block's branches: SqueezeNet 1.1 -7% at 1 and 2 threads), as does one
 *    with some of them where its readers take the Transpose on
 *    (concat_through). Slices and channel shuffles take it on too
 *    (passes/nhwc_shape_ops.c: ShuffleNet's units).
 * 3. A Transpose of a Transpose that undoes it is dropped: the next
 *    convolution reads the previous one's output as it lies.
 * What remains are Transposes where channels-last values meet other ops
 * (a network's first and last layers, a global pool). The results are the
 * same numbers: every moved node computes element by element, or as its
 * NCHW form does. */
#include "passes/nhwc_conv.h"
#include "passes/pass.h"

#include "devices/backend.h"
#include "devices/kernel.h"
#include "support/alloc.h"

#include <string.h>

const int64_t TGC_TO_NHWC[4] = {0, 2, 3, 1}, TGC_TO_NCHW[4] = {0, 3, 1, 2};

/* Elementwise ops a Transpose moves through (their other inputs one-element
 * constants, or Transposes of the same permutation). */
static const char *const ELEMENTWISE[] = {"DequantizeLinear", "QuantizeLinear", "Add", "Sub", "Mul", "Div",
                                          "Max", "Min", "Relu", "Clip", "Sigmoid", "LeakyRelu", "HardSigmoid",
                                          "HardSwish", "_Swish", NULL};

const int64_t *tgc_nhwc_perm_of(const tgc_rewrite *rw, int32_t id) {
    if (!tgc_pass_is_op(rw, id, "Transpose") || rw->g->nodes[id].n_outputs != 1) return NULL;
    const tgc_attr *a = tgc_node_attr(&rw->g->nodes[id], "perm");
    return a != NULL && a->type == TGC_ATTR_INTS && a->n == 4 ? a->ints : NULL;
}

static bool is_elementwise(const tgc_rewrite *rw, int32_t id) {
    for (int i = 0; ELEMENTWISE[i] != NULL; i++)
        if (tgc_pass_is_op(rw, id, ELEMENTWISE[i])) return true;
    return false;
}

static bool same_perm(const int64_t *a, const int64_t *b) { return memcmp(a, b, 4 * sizeof *a) == 0; }

/* True when every listed kind has a kernel for node n run as `op` at
 * dtype, asked as the placer will ask (tgc_kernel_select: the backends'
 * supports too; the cpu's _ConvNHWC needs oneDNN). */
static bool kernel_everywhere(const tgc_rewrite *rw, const tgc_node *n, const char *op, tgc_dtype dtype) {
    if (rw->kinds == 0) return false;
    tgc_node probe = *n;
    probe.op = tgc_op_find(op);
    for (int k = 0; k < tgc_backend_count(); k++)
        if ((rw->kinds & (1u << k)) && tgc_kernel_select(&probe, k, dtype, dtype, false) == NULL) return false;
    return true;
}

/* True when r is an initializer whose every element is `zero` as the
 * 8-bit type it holds: oneDNN's weights zero point (int8 0, uint8 128). */
static bool zero_points_centred(const tgc_rewrite *rw, tgc_ref r) {
    const tgc_const *c = tgc_pass_const_of(rw, r);
    if (c == NULL || c->data == NULL || (c->dtype != TGC_INT8 && c->dtype != TGC_UINT8)) return false;
    const uint8_t *p = c->data;
    for (int64_t i = 0, n = tgc_shape_numel(&c->shape); i < n; i++)
        if (p[i] != (c->dtype == TGC_UINT8 ? 128 : 0)) return false;
    return true;
}

tgc_status tgc_nhwc_add_transpose(tgc_rewrite *rw, int32_t like, tgc_ref from, const int64_t *perm, int rank,
                                  int32_t *id) {
    tgc_status st = tgc_rewrite_add_op(rw, "Transpose", like, &from, 1, 1, id);
    if (st != TGC_OK) return st;
    tgc_rewrite_keep_own_name(rw, *id);
    return tgc_rewrite_set_attr_list(rw, *id, "perm", TGC_ATTR_INTS, (size_t)rank, perm);
}

tgc_status tgc_nhwc_transpose_after(tgc_rewrite *rw, int32_t made, const int64_t *perm) {
    int32_t t;
    tgc_status st = tgc_nhwc_add_transpose(rw, made, (tgc_ref){made, 0, {0, 0}}, perm, 4, &t);
    if (st != TGC_OK) return st;
    tgc_rewrite_replace_uses(rw, (tgc_ref){made, 0, {0, 0}}, (tgc_ref){t, 0, {0, 0}});
    tgc_rewrite_set_input(rw, t, 0, (tgc_ref){made, 0, {0, 0}});
    return TGC_OK;
}

tgc_status tgc_nhwc_replace_with_transposed(tgc_rewrite *rw, int32_t id, int32_t made, const int64_t *perm) {
    int32_t t;
    tgc_status st = tgc_rewrite_add_op(rw, "Transpose", id, &(tgc_ref){made, 0, {0, 0}}, 1, 1, &t);
    if (st != TGC_OK || (st = tgc_rewrite_set_attr_list(rw, t, "perm", TGC_ATTR_INTS, 4, perm)) != TGC_OK) return st;
    tgc_rewrite_keep_own_name(rw, made);
    tgc_rewrite_replace_uses(rw, (tgc_ref){id, 0, {0, 0}}, (tgc_ref){t, 0, {0, 0}});
    tgc_rewrite_remove(rw, id);
    rw->edits++;
    return TGC_OK;
}

/* True when QLinearConv node id qualifies for step 1 (asked of the graph
 * as inferred, before any node is rewritten: a rewritten neighbour's
 * output is not inferred until the pass ends). */
static bool qualifies(const tgc_rewrite *rw, int32_t id) {
    const tgc_node *n = &rw->g->nodes[id];
    const tgc_tensor_info *x = tgc_graph_ref_info(rw->g, n->inputs[0]);
    const tgc_tensor_info *y = tgc_graph_ref_info(rw->g, (tgc_ref){id, 0, {0, 0}});
    return x != NULL && y != NULL && x->shape.rank == 4 && y->shape.rank == 4 && n->n_outputs == 1 &&
           kernel_everywhere(rw, n, "_QLinearConvNHWC", x->dtype) && tgc_pass_const_of(rw, n->inputs[3]) != NULL &&
           n->n_inputs >= 6 && zero_points_centred(rw, n->inputs[5]);
}

/* An INTS attribute of node n: every entry `value` (absent: true). */
static bool ints_all(const tgc_node *n, const char *name, int64_t value) {
    const tgc_attr *a = tgc_node_attr(n, name);
    if (a == NULL) return true;
    if (a->type != TGC_ATTR_INTS) return false;
    for (size_t i = 0; i < a->n; i++)
        if (a->ints[i] != value) return false;
    return true;
}

/* A float Conv over at most this many channels is an image's first layer
 * (RGB, RGBA): channels last, the Transpose into NHWC moves to the image,
 * a third of the stem's output (MobileNetV2: 150,528 floats, not 401,408). */
#define STEM_MAX_CHANNELS 4

/* A grouped Conv whose groups have a multiple of this many channels in
 * and out (16: an AVX-512 vector of floats; RegNetX's groups of 16,
 * ResNeXt-50's of 16 and 32) runs channels last: oneDNN's kernel fills
 * its vectors with a group's channels, where tgc's direct loops run along
 * rows of a few positions. `tgc run --trace`, node medians, 1 thread:
 * RegNetX-800MF's 3x3 layers of 42 groups on 7x7 139 -> 83 us, of 18 on
 * 14x14 126 -> 96, of 8 on 28x28 200 -> 160; ResNeXt-50's of 32 groups of
 * 32 on 7x7 436-544 -> 295-359, of 16 on 14x14 260-265 -> 218-228.
 * RegNetY-400MF's groups of 8 lost (14x14: 45 -> 59 us, 28x28: 88 ->
 * 110), hence the multiple. */
#define GROUPED_CHANNELS 16

/* Feature maps of at most this many positions (28 x 28 and smaller). On
 * larger ones oneDNN's NHWC kernels lost to tgc's NCHW ones inside
 * MobileNetV2 (its 1x1 layers of 112x112 and 56x56 ran 1.4-2x slower
 * there, 0.9x alone: `tgc run --trace`, bench_conv_families), and the
 * image's Transpose into NHWC cost more than the stem gained. */
#define MAX_POSITIONS 1024

/* True when 4-D `s` (NCHW) has H and W known and H * W <= MAX_POSITIONS. */
static bool small_map(const tgc_shape *s) {
    return tgc_dim_known(s->dims[2]) && tgc_dim_known(s->dims[3]) && s->dims[2].v <= MAX_POSITIONS &&
           s->dims[2].v * s->dims[3].v <= MAX_POSITIONS;
}

/* True when every listed kind's kernel would run Conv node id channels
 * last anyway, on copies of x and y (its footprint says so: the cpu's
 * oneDNN way for 3x3 layers on small maps with few multiply-adds,
 * devices/cpu/conv_dnnl.c): channels last, it runs the same kernel
 * without the copies. */
static bool nhwc_on_copies(const tgc_rewrite *rw, int32_t id) {
    bool any = false;
    for (int k = 0; k < tgc_backend_count(); k++) {
        if (rw->kinds != 0 && !(rw->kinds & (1u << k))) continue;
        const tgc_kernel_def *def = tgc_kernel_for_node(rw->g, &rw->g->nodes[id], k);
        if (def == NULL) continue;
        if (!tgc_kernel_node_footprint(def, rw->g, id, 1, 0).copies_channels_last) return false;
        any = true;
    }
    return any;
}

/* How a float Conv may run channels last on its own terms (step 1). */
typedef enum { NOT_NHWC, NHWC_CANDIDATE, NHWC_SHORTCUT } nhwc_kind;

/* What float Conv node id may do on its own terms: x and y 4-D float32, W
 * a 4-D constant, B absent or a constant, pointwise, depthwise or a stem
 * (see step 1), and a kernel everywhere: NHWC_CANDIDATE; a strided 1x1
 * (one group, no pads: a residual block's projection shortcut) on the
 * same terms: NHWC_SHORTCUT, which goes channels last only beside a
 * branch that does (joins_channels_last). */
static nhwc_kind float_candidate(const tgc_rewrite *rw, int32_t id) {
    if (!tgc_pass_is_op(rw, id, "Conv")) return NOT_NHWC;
    const tgc_node *n = &rw->g->nodes[id];
    if (n->n_outputs != 1 || n->n_inputs < 2 || n->inputs[0].node < 0) return NOT_NHWC;
    const tgc_tensor_info *x = tgc_graph_ref_info(rw->g, n->inputs[0]);
    const tgc_tensor_info *y = tgc_graph_ref_info(rw->g, (tgc_ref){id, 0, {0, 0}});
    const tgc_const *w = tgc_pass_const_of(rw, n->inputs[1]);
    if (x == NULL || y == NULL || w == NULL || x->dtype != TGC_FLOAT32 || x->shape.rank != 4 || y->shape.rank != 4 ||
        w->shape.rank != 4 || !tgc_dim_known(x->shape.dims[1]))
        return NOT_NHWC;
    if (n->n_inputs > 2 && n->inputs[2].node >= 0 && tgc_pass_const_of(rw, n->inputs[2]) == NULL) return NOT_NHWC;
    const tgc_attr *ga = tgc_node_attr(n, "group");
    int64_t group = ga != NULL ? ga->i : 1, c = x->shape.dims[1].v;
    int64_t m = w->shape.dims[0].v, cg = w->shape.dims[1].v;
    bool one_by_one = group == 1 && w->shape.dims[2].v == 1 && w->shape.dims[3].v == 1 && ints_all(n, "pads", 0) &&
                      ints_all(n, "dilations", 1) && tgc_node_attr(n, "auto_pad") == NULL;
    bool pointwise = one_by_one && ints_all(n, "strides", 1);
    bool depthwise = group > 1 && group == c && cg == 1 && m == c;
    bool grouped = group > 1 && cg % GROUPED_CHANNELS == 0 && (m / group) % GROUPED_CHANNELS == 0;
    bool stem = group == 1 && c <= STEM_MAX_CHANNELS;
    if (!small_map(&x->shape) || !small_map(&y->shape) || !kernel_everywhere(rw, n, "_ConvNHWC", TGC_FLOAT32))
        return NOT_NHWC;
    if (pointwise || depthwise || grouped || stem || nhwc_on_copies(rw, id)) return NHWC_CANDIDATE;
    return one_by_one ? NHWC_SHORTCUT : NOT_NHWC;
}

/* True when ref r comes from a candidate, directly or through one
 * elementwise node (a ReLU6, a residual Add) one of whose inputs does. */
static bool near_candidate(const tgc_rewrite *rw, tgc_ref r, const bool *candidate) {
    if (r.node < 0) return false;
    if (candidate[r.node]) return true;
    if (!is_elementwise(rw, r.node)) return false;
    const tgc_node *n = &rw->g->nodes[r.node];
    for (int i = 0; i < n->n_inputs; i++)
        if (n->inputs[i].node >= 0 && candidate[n->inputs[i].node]) return true;
    return false;
}

/* near_candidate, or a Concat every input of which is near a candidate
 * (a fire module's branches, which step 2 joins channels last). */
static bool from_candidate(const tgc_rewrite *rw, tgc_ref r, const bool *candidate) {
    if (near_candidate(rw, r, candidate)) return true;
    if (r.node < 0 || !tgc_pass_is_op(rw, r.node, "Concat")) return false;
    const tgc_node *n = &rw->g->nodes[r.node];
    for (int i = 0; i < n->n_inputs; i++)
        if (!near_candidate(rw, n->inputs[i], candidate)) return false;
    return n->n_inputs > 0;
}

/* Readers of a value the pass looks at: past them a node is judged on the
 * first MAX_READERS only (a Conv may then stay NCHW: never a wrong rewrite). */
#define MAX_READERS 16

/* True when candidate id reads or feeds another candidate, directly or
 * through one elementwise node (see step 1). */
static bool chained(const tgc_rewrite *rw, int32_t id, const bool *candidate) {
    if (from_candidate(rw, rw->g->nodes[id].inputs[0], candidate)) return true;
    int32_t readers[MAX_READERS], next[MAX_READERS];
    int n = tgc_rewrite_readers(rw, (tgc_ref){id, 0, {0, 0}}, readers, MAX_READERS);
    for (int i = 0; i < n && i < MAX_READERS; i++) {
        if (candidate[readers[i]]) return true;
        if (!is_elementwise(rw, readers[i])) continue;
        int k = tgc_rewrite_readers(rw, (tgc_ref){readers[i], 0, {0, 0}}, next, MAX_READERS);
        for (int j = 0; j < k && j < MAX_READERS; j++)
            if (candidate[next[j]]) return true;
    }
    return false;
}

/* True when an elementwise reader of shortcut id (the residual Add) joins
 * it with the output of a Conv that goes channels last (chosen): the
 * shortcut then goes too, and the Add's Transposes cancel (RegNetX's
 * stage entries: 8 Transposes -> 2). */
static bool joins_channels_last(const tgc_rewrite *rw, int32_t id, const bool *chosen) {
    int32_t readers[MAX_READERS];
    int n = tgc_rewrite_readers(rw, (tgc_ref){id, 0, {0, 0}}, readers, MAX_READERS);
    for (int i = 0; i < n && i < MAX_READERS; i++) {
        if (!is_elementwise(rw, readers[i])) continue;
        const tgc_node *add = &rw->g->nodes[readers[i]];
        for (int k = 0; k < add->n_inputs; k++)
            if (add->inputs[k].node >= 0 && add->inputs[k].node != id && chosen[add->inputs[k].node]) return true;
    }
    return false;
}

/* *id = a Transpose of `from` into NHWC: one that step 1 added for
 * another Conv reading it (a stage entry's branch and shortcut), else a
 * new one (like: the node whose place it takes). */
static tgc_status nhwc_input(tgc_rewrite *rw, int32_t like, tgc_ref from, int32_t *id) {
    int32_t readers[MAX_READERS];
    int n = tgc_rewrite_readers(rw, from, readers, MAX_READERS);
    for (int i = 0; i < n && i < MAX_READERS; i++) {
        const int64_t *perm = tgc_nhwc_perm_of(rw, readers[i]);
        if (perm != NULL && memcmp(perm, TGC_TO_NHWC, sizeof TGC_TO_NHWC) == 0) {
            *id = readers[i];
            return TGC_OK;
        }
    }
    return tgc_nhwc_add_transpose(rw, like, from, TGC_TO_NHWC, 4, id);
}

/* Step 1 for QLinearConv or float Conv node id, into op `op`. */
static tgc_status to_channels_last(tgc_rewrite *rw, int32_t id, const char *op) {
    const tgc_node *n = &rw->g->nodes[id];
    tgc_ref inputs[9];
    int n_inputs = n->n_inputs < 9 ? n->n_inputs : 9;
    memcpy(inputs, n->inputs, (size_t)n_inputs * sizeof *inputs);
    int32_t t_in, conv;
    tgc_status st = nhwc_input(rw, id, inputs[0], &t_in);
    if (st != TGC_OK) return st;
    inputs[0] = (tgc_ref){t_in, 0, {0, 0}};
    if ((st = tgc_rewrite_add_op(rw, op, id, inputs, n_inputs, 1, &conv)) != TGC_OK ||
        (st = tgc_rewrite_copy_attrs(rw, id, conv)) != TGC_OK)
        return st;
    return tgc_nhwc_replace_with_transposed(rw, id, conv, TGC_TO_NCHW);
}

/* True when a Transpose moved below node id costs no more than it did
 * above it: the node's output is no wider than its input, or (a
 * DequantizeLinear: 1 byte to 4) every reader is elementwise too, so that
 * the Transpose moves on towards one it cancels with (a residual Add)
 * rather than stopping at a pool, four times the bytes. */
static bool worth_moving(const tgc_rewrite *rw, int32_t id) {
    if (!tgc_pass_is_op(rw, id, "DequantizeLinear")) return true;
    int32_t readers[MAX_READERS];
    int n = tgc_rewrite_readers(rw, (tgc_ref){id, 0, {0, 0}}, readers, MAX_READERS);
    if (n < 1 || n > MAX_READERS) return false;
    for (int i = 0; i < n; i++)
        if (!is_elementwise(rw, readers[i])) return false;
    return true;
}

/* A Transpose already reading r 4-D that perm would undo (perm of it
 * gives r back), or -1: a residual Add's skip input, NCHW, whose next
 * convolution reads it through such a Transpose, joins the Add channels
 * last through that one, and the Transpose after the Add then cancels
 * with the next block's (ResNet-style blocks of channels-last layers
 * otherwise go out of and into NCHW at every Add). */
static int32_t undoing_reader(const tgc_rewrite *rw, tgc_ref r, const int64_t *perm) {
    const tgc_tensor_info *v = tgc_graph_ref_info(rw->g, r);
    if (r.node < 0 || v == NULL || v->shape.rank != 4) return -1;
    int32_t readers[MAX_READERS];
    int n = tgc_rewrite_readers(rw, r, readers, MAX_READERS);
    for (int i = 0; i < n && i < MAX_READERS; i++) {
        const int64_t *q = tgc_nhwc_perm_of(rw, readers[i]);
        bool undoes = q != NULL;
        for (int a = 0; undoes && a < 4; a++) undoes = perm[q[a]] == a;
        if (undoes) return readers[i];
    }
    return -1;
}

/* Step 2 at node id: *moved when a Transpose moved below it. */
static tgc_status sink_through(tgc_rewrite *rw, int32_t id, bool *moved) {
    const tgc_node *n = &rw->g->nodes[id];
    if (n->n_outputs != 1 || n->n_inputs > 8 || tgc_rewrite_is_output(rw, (tgc_ref){id, 0, {0, 0}}) ||
        !worth_moving(rw, id))
        return TGC_OK;
    const int64_t *perm = NULL;
    tgc_ref inputs[8];
    for (int i = 0; i < n->n_inputs && perm == NULL; i++)
        if (n->inputs[i].node >= 0) perm = tgc_nhwc_perm_of(rw, n->inputs[i].node);
    if (perm == NULL) return TGC_OK;
    for (int i = 0; i < n->n_inputs; i++) {
        inputs[i] = n->inputs[i];
        if (inputs[i].node < 0) continue; /* omitted */
        const int64_t *p = tgc_nhwc_perm_of(rw, inputs[i].node);
        const tgc_const *c = tgc_pass_const_of(rw, inputs[i]);
        int32_t undone;
        if (p != NULL && same_perm(p, perm)) inputs[i] = rw->g->nodes[inputs[i].node].inputs[0];
        else if ((undone = undoing_reader(rw, inputs[i], perm)) >= 0) inputs[i] = (tgc_ref){undone, 0, {0, 0}};
        else if (c == NULL || tgc_shape_numel(&c->shape) != 1)
            return TGC_OK; /* another tensor, or a constant that broadcasts along an axis */
    }
    int64_t kept[4];
    memcpy(kept, perm, sizeof kept); /* node pointers move as nodes are added */
    int32_t copy;
    tgc_status st = tgc_rewrite_replace_op(rw, id, inputs, n->n_inputs, &copy);
    if (st != TGC_OK || (st = tgc_nhwc_transpose_after(rw, copy, kept)) != TGC_OK) return st;
    *moved = true;
    return TGC_OK;
}

/* Step 2 for a pool: MaxPool(Transpose(x, [0, 3, 1, 2])) becomes
 * Transpose(_MaxPoolNHWC(x)) where every listed kind has that kernel at
 * the pool's dtype (the cpu's: float32, uint8); GlobalAveragePool, as
 * _GlobalAveragePoolNHWC (float32): a squeeze-and-excitation block's
 * pool, whose input would otherwise go back to NCHW whole. */
static tgc_status pool_through(tgc_rewrite *rw, int32_t id, const char *nhwc_op, bool *moved) {
    const tgc_node *n = &rw->g->nodes[id];
    const tgc_tensor_info *y = tgc_graph_ref_info(rw->g, (tgc_ref){id, 0, {0, 0}});
    if (n->n_inputs != 1 || n->n_outputs != 1 || n->inputs[0].node < 0 || y == NULL || y->shape.rank != 4 ||
        tgc_rewrite_is_output(rw, (tgc_ref){id, 0, {0, 0}}))
        return TGC_OK;
    const int64_t *perm = tgc_nhwc_perm_of(rw, n->inputs[0].node);
    if (perm == NULL || !same_perm(perm, TGC_TO_NCHW) || !kernel_everywhere(rw, n, nhwc_op, y->dtype))
        return TGC_OK;
    tgc_ref x = rw->g->nodes[n->inputs[0].node].inputs[0];
    int32_t pool;
    tgc_status st = tgc_rewrite_add_op(rw, nhwc_op, id, &x, 1, 1, &pool);
    if (st != TGC_OK || (st = tgc_rewrite_copy_attrs(rw, id, pool)) != TGC_OK) return st;
    *moved = true;
    return tgc_nhwc_replace_with_transposed(rw, id, pool, TGC_TO_NCHW);
}

/* Reductions whose axes are an attribute (opset 17), which reduce_through moves a Transpose past. */
static const char *const REDUCTIONS[] = {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
                                         "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", NULL};

static bool is_reduction(const tgc_rewrite *rw, int32_t id) {
    for (int i = 0; REDUCTIONS[i] != NULL; i++)
        if (tgc_pass_is_op(rw, id, REDUCTIONS[i])) return true;
    return false;
}

/* Step 2 for a reduction over listed axes of a 4-D Transpose:
 * Reduce(Transpose(x, perm), axes) reduces x over perm[axes]. With
 * keepdims the same Transpose follows it; without, the axes left keep
 * their order when their perm entries increase (a mean over H and W before
 * a classifier, MNASNet's: [N, C] either way), and nothing follows; other
 * orders are left as they are. */
static tgc_status reduce_through(tgc_rewrite *rw, int32_t id, bool *moved) {
    const tgc_node *n = &rw->g->nodes[id];
    const tgc_attr *axes = tgc_node_attr(n, "axes");
    if (n->n_inputs != 1 || n->n_outputs != 1 || n->inputs[0].node < 0 || axes == NULL ||
        axes->type != TGC_ATTR_INTS || axes->n < 1 || axes->n > 4 ||
        tgc_rewrite_is_output(rw, (tgc_ref){id, 0, {0, 0}}))
        return TGC_OK;
    const int64_t *perm = tgc_nhwc_perm_of(rw, n->inputs[0].node);
    if (perm == NULL) return TGC_OK;
    bool reduced[4] = {false, false, false, false};
    int64_t mapped[4], kept[4];
    memcpy(kept, perm, sizeof kept); /* node pointers move as nodes are added */
    for (size_t i = 0; i < axes->n; i++) {
        int64_t a = axes->ints[i] < 0 ? axes->ints[i] + 4 : axes->ints[i];
        if (a < 0 || a > 3 || reduced[a]) return TGC_OK; /* the kernel names the error */
        reduced[a] = true;
        mapped[i] = kept[a];
    }
    bool keepdims = tgc_pass_attr_int(n, "keepdims", 1) != 0;
    for (int a = 0, last = -1; !keepdims && a < 4; a++) {
        if (reduced[a]) continue;
        if (kept[a] < last) return TGC_OK;
        last = (int)kept[a];
    }
    size_t n_axes = axes->n;
    tgc_ref x = rw->g->nodes[n->inputs[0].node].inputs[0];
    int32_t made;
    tgc_status st = tgc_rewrite_replace_op(rw, id, &x, 1, &made);
    if (st != TGC_OK || (st = tgc_rewrite_set_attr_list(rw, made, "axes", TGC_ATTR_INTS, n_axes, mapped)) != TGC_OK)
        return st;
    *moved = true;
    return keepdims ? tgc_nhwc_transpose_after(rw, made, kept) : TGC_OK;
}

/* True when every reader of node id's output is a node step 2 moves a
 * Transpose through on its own terms (elementwise, a Slice, a Concat, a
 * channel shuffle): where a Concat's other inputs are transposed to join
 * it, the Transpose after it moves on rather than staying. */
static bool moves_on(const tgc_rewrite *rw, int32_t id) {
    int32_t readers[MAX_READERS];
    int n = tgc_rewrite_readers(rw, (tgc_ref){id, 0, {0, 0}}, readers, MAX_READERS);
    if (n < 1 || n > MAX_READERS) return false;
    for (int i = 0; i < n; i++)
        if (!is_elementwise(rw, readers[i]) && !tgc_pass_is_op(rw, readers[i], "Slice") &&
            !tgc_pass_is_op(rw, readers[i], "Concat") && !tgc_nhwc_starts_shuffle(rw, readers[i]))
            return false;
    return true;
}

/* Step 2 for a Concat of 4-D Transposes of one permutation:
 * Concat(T(a), T(b), axis) = T(Concat(a, b, perm[axis])): an Inception
 * block's or a fire module's branches joined channels last. An input that
 * is no such Transpose joins through one that undoes T where it has one
 * (undoing_reader), else through one added, when the Concat's readers
 * move the Transpose on (moves_on): a ShuffleNet stage's first stride-1
 * unit joins the half it passes through (an NCHW Slice of the unit
 * before) to its channels-last branch, and the stage runs channels last
 * from there. */
static tgc_status concat_through(tgc_rewrite *rw, int32_t id, bool *moved) {
    const tgc_node *n = &rw->g->nodes[id];
    const tgc_tensor_info *y = tgc_graph_ref_info(rw->g, (tgc_ref){id, 0, {0, 0}});
    if (n->n_inputs < 1 || n->n_inputs > MAX_READERS || n->n_outputs != 1 || y == NULL || y->shape.rank != 4 ||
        tgc_rewrite_is_output(rw, (tgc_ref){id, 0, {0, 0}}))
        return TGC_OK;
    const int64_t *perm = NULL;
    int others = 0;
    for (int i = 0; i < n->n_inputs; i++) {
        const int64_t *p = n->inputs[i].node >= 0 ? tgc_nhwc_perm_of(rw, n->inputs[i].node) : NULL;
        if (n->inputs[i].node < 0) return TGC_OK;
        if (p == NULL) others++;
        else if (perm != NULL && !same_perm(p, perm)) return TGC_OK;
        else perm = p;
    }
    if (perm == NULL || (others > 0 && !moves_on(rw, id))) return TGC_OK;
    int64_t kept[4], undo[4], axis = tgc_pass_attr_int(n, "axis", 0);
    memcpy(kept, perm, sizeof kept); /* node pointers move as nodes are added */
    for (int a = 0; a < 4; a++) undo[kept[a]] = a;
    if (axis < 0) axis += 4;
    if (axis < 0 || axis > 3) return TGC_OK;
    tgc_ref inputs[MAX_READERS];
    tgc_status st = TGC_OK;
    for (int i = 0; i < n->n_inputs && st == TGC_OK; i++) {
        tgc_ref in = rw->g->nodes[id].inputs[i];
        const int64_t *p = tgc_nhwc_perm_of(rw, in.node);
        int32_t t = p != NULL ? -1 : undoing_reader(rw, in, kept);
        if (p != NULL) inputs[i] = rw->g->nodes[in.node].inputs[0];
        else if (t >= 0) inputs[i] = (tgc_ref){t, 0, {0, 0}};
        else if ((st = tgc_nhwc_add_transpose(rw, id, in, undo, 4, &t)) == TGC_OK) inputs[i] = (tgc_ref){t, 0, {0, 0}};
    }
    int32_t joined;
    if (st == TGC_OK) st = tgc_rewrite_add_op(rw, "Concat", id, inputs, rw->g->nodes[id].n_inputs, 1, &joined);
    if (st == TGC_OK) st = tgc_rewrite_set_attr_int(rw, joined, "axis", kept[axis]);
    if (st != TGC_OK) return st;
    *moved = true;
    return tgc_nhwc_replace_with_transposed(rw, id, joined, kept);
}

/* Step 3 at Transpose node id: *moved when it undid its input's and went. */
static void cancel(tgc_rewrite *rw, int32_t id, bool *moved) {
    const int64_t *outer = tgc_nhwc_perm_of(rw, id);
    if (outer == NULL || tgc_rewrite_is_output(rw, (tgc_ref){id, 0, {0, 0}})) return;
    tgc_ref in = rw->g->nodes[id].inputs[0];
    const int64_t *inner = in.node >= 0 ? tgc_nhwc_perm_of(rw, in.node) : NULL;
    if (inner == NULL) return;
    for (int a = 0; a < 4; a++)
        if (inner[outer[a]] != a) return;
    tgc_rewrite_replace_uses(rw, (tgc_ref){id, 0, {0, 0}}, rw->g->nodes[in.node].inputs[0]);
    tgc_rewrite_remove(rw, id);
    if (tgc_rewrite_uses(rw, in) == 0) tgc_rewrite_remove(rw, in.node);
    rw->edits++;
    *moved = true;
}

tgc_status tgc_pass_nhwc_conv(tgc_rewrite *rw) {
    int32_t n_nodes = rw->g->n_nodes, n_convs = 0;
    int32_t *convs = tgc_malloc((size_t)n_nodes * sizeof *convs + 1);
    uint8_t *kind = tgc_calloc((size_t)n_nodes + 1, sizeof *kind);
    bool *candidate = tgc_calloc((size_t)n_nodes + 1, sizeof *candidate);
    bool *chosen = tgc_calloc((size_t)n_nodes + 1, sizeof *chosen);
    tgc_status st = TGC_ERR_NOMEM;
    if (convs == NULL || kind == NULL || candidate == NULL || chosen == NULL) goto done;
    for (int32_t id = 0; id < n_nodes; id++) {
        kind[id] = (uint8_t)float_candidate(rw, id);
        candidate[id] = kind[id] == NHWC_CANDIDATE;
    }
    for (int32_t id = 0; id < n_nodes; id++)
        if ((tgc_pass_is_op(rw, id, "QLinearConv") && qualifies(rw, id)) ||
            (candidate[id] && chained(rw, id, candidate)))
            chosen[id] = true, convs[n_convs++] = id;
    for (int32_t id = 0; id < n_nodes; id++)
        if (kind[id] == NHWC_SHORTCUT && joins_channels_last(rw, id, chosen)) convs[n_convs++] = id;
    st = TGC_OK;
    for (int32_t i = 0; i < n_convs && st == TGC_OK; i++)
        st = to_channels_last(rw, convs[i], kind[convs[i]] != NOT_NHWC ? "_ConvNHWC" : "_QLinearConvNHWC");
done:
    tgc_free(convs), tgc_free(kind), tgc_free(candidate), tgc_free(chosen);
    if (st != TGC_OK || n_convs == 0) return st;
    /* every round moves some Transpose further down or drops one: at most
     * as many rounds as the graph has nodes */
    bool moved = true;
    for (int32_t round = 0; moved && round < rw->g->n_nodes; round++) {
        moved = false;
        for (int32_t id = 0; id < rw->g->n_nodes && st == TGC_OK; id++) {
            if (rw->removed[id]) continue;
            if (tgc_nhwc_perm_of(rw, id) != NULL) cancel(rw, id, &moved);
            else if (is_elementwise(rw, id)) st = sink_through(rw, id, &moved);
            else if (id < n_nodes && tgc_pass_is_op(rw, id, "MaxPool"))
                st = pool_through(rw, id, "_MaxPoolNHWC", &moved);
            else if (id < n_nodes && tgc_pass_is_op(rw, id, "GlobalAveragePool"))
                st = pool_through(rw, id, "_GlobalAveragePoolNHWC", &moved);
            else if (id < n_nodes && tgc_pass_is_op(rw, id, "Concat"))
                st = concat_through(rw, id, &moved);
            else if (id < n_nodes && is_reduction(rw, id))
                st = reduce_through(rw, id, &moved);
            else if (id < n_nodes && tgc_pass_is_op(rw, id, "Slice"))
                st = tgc_nhwc_slice_through(rw, id, &moved);
            else if (id < n_nodes && tgc_pass_is_op(rw, id, "Reshape"))
                st = tgc_nhwc_shuffle_through(rw, id, &moved);
        }
    }
    return st;
}

bool tgc_pass_has_conv(const tgc_graph *g) {
    for (int32_t id = 0; id < g->n_nodes; id++)
        if (g->nodes[id].kind == TGC_NODE_OP &&
            (strcmp(g->nodes[id].op_name, "QLinearConv") == 0 || strcmp(g->nodes[id].op_name, "Conv") == 0))
            return true;
    return false;
}
