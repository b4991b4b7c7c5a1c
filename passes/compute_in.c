/* Nodes computed at another float dtype than the graph's, between Casts:
 * float16 and bfloat16 nodes in float32 where the devices have no kernel
 * at the narrow type (ONNX Runtime's InsertCastTransformer), and, when the
 * session asks for it, float32 nodes in float16 where a gpu has the
 * kernel (the last paragraph).
 *
 * A node whose kernel dtype is float16 or bfloat16 is rewritten when no
 * listed kind has a kernel for it at that dtype but one has a float32
 * kernel: its inputs of the narrow type are read through Cast(to=float),
 * it runs at float32, and its outputs of the narrow type go through
 * Cast(to=narrow) to their readers, the last Cast taking the node's name.
 * Widening is exact, so the result differs from a native kernel's only by
 * the float32 arithmetic (more precise than float16's).
 *
 * A chain of such nodes does not narrow and widen between its links: a
 * node reads the float32 value its producer computed, not the Cast back.
 * A node that has a narrow kernel is computed in float32 too when its
 * narrow inputs all come from nodes already computed in float32 or from
 * initializers (a Relu between two Convs): ORT removes such "isolated"
 * float16 nodes for the same reason, two Casts cost more than the node.
 * A Cast made for an initializer is folded by fold-constants (the weight
 * is then held in float32). A Cast or CastLike of the graph's own is never
 * computed in float32: a bfloat16 value cast to float32 is a bfloat16
 * value, so what it reads from a converted node is narrowed first. Nodes
 * with subgraphs (If, Loop, Scan), control edges or colocation constraints
 * are left as they are.
 *
 * float16 on request (tgc_optimize_options.float16, `--float16`): the same
 * rewrite the other way. A float32 node (a float32 input and a float32
 * output) that a listed kind other than the host has a float16 kernel for
 * reads its float32 inputs through Cast(to=float16), computes in float16,
 * and its float32 outputs go back through Cast(to=float) to readers that
 * stay float32 (the graph's outputs among them, so its inputs and outputs
 * keep their dtypes: keep_io_types of onnxconverter-common's
 * convert_float_to_float16). Chains stay in float16 from end to end; the
 * Casts made for weights are folded by fold-constants, so the weights are
 * held in float16 (half the bytes). Nodes no such kind has a float16
 * kernel for (a Softmax on the gpu) stay float32 between Casts. The
 * results differ from float32's by float16's rounding of every stored
 * value (a relative 2^-11 each); the gpu's float16 kernels compute in
 * float32 in between (kernels/nn.cl). */
#include "passes/pass.h"

#include "devices/backend.h"
#include "devices/kernel.h"
#include "support/alloc.h"

#include <string.h>

/* ONNX TensorProto.DataType codes for Cast's `to`. */
static int64_t onnx_code(tgc_dtype t) {
    switch (t) {
    case TGC_FLOAT16: return 10;
    case TGC_BFLOAT16: return 16;
    default: return 1; /* float32 */
    }
}

static bool is_narrow(tgc_dtype t) { return t == TGC_FLOAT16 || t == TGC_BFLOAT16; }

/* The pass's state: per value of the graph as it began (rw->value_base
 * numbering), its twin at `to` (float32 for compute-in-float32, whose
 * names these are: "wide") when it has one (a converted node's output, or
 * a Cast made for it); per node, the copy at `to` that replaces it (-1:
 * none). Readers keep reading the original
 * nodes until the end, when each converted node's outputs are handed to
 * the readers that were not converted (through a Cast back for a narrow
 * output) and the original goes. */
typedef struct widen_state {
    tgc_rewrite *rw;
    tgc_dtype to;        /* the dtype converted nodes compute in: float32 (the "wide" twins), or float16 */
    int32_t n_nodes;     /* the graph's nodes as it began (rw->g->topo's) */
    tgc_dtype *from;     /* per node: the dtype it computes at, if the pass may convert it; else INVALID */
    int32_t n_values;
    tgc_ref *wide;       /* per value: its float32 twin, node -1: none */
    bool *computed_wide; /* per value: the twin is a converted node's output */
    int32_t *copy;       /* per node: its float32 copy, or -1 */
} widen_state;

static int32_t value_index(const widen_state *st, tgc_ref r) {
    if (r.node < 0 || r.node >= st->rw->cap_nodes) return -1;
    int32_t v = st->rw->value_base[r.node] + r.port;
    return v >= 0 && v < st->n_values ? v : -1;
}

static bool has_subgraph(const tgc_node *n) {
    for (int a = 0; a < n->n_attrs; a++)
        if (n->attrs[a].type == TGC_ATTR_GRAPH) return true;
    return false;
}

/* Kernels for node id on the listed kinds: at its own dtype, and at float32. */
static void kernels_for(const tgc_rewrite *rw, int32_t id, tgc_dtype narrow, bool *native, bool *wide) {
    const tgc_graph *g = rw->g;
    const tgc_node *n = &g->nodes[id];
    tgc_dtype in0 = tgc_kernel_node_dtype(g, n);
    tgc_dtype out0 = n->n_outputs > 0 ? n->outputs[0].dtype : TGC_DTYPE_INVALID;
    *native = *wide = false;
    for (int k = 0; k < tgc_backend_count(); k++) {
        if (rw->kinds != 0 && !(rw->kinds & (1u << k))) continue;
        if (tgc_kernel_for_node(g, n, k) != NULL) *native = true;
        if (tgc_kernel_select(n, k, in0 == narrow ? TGC_FLOAT32 : in0, out0 == narrow ? TGC_FLOAT32 : out0, false) !=
            NULL)
            *wide = true;
    }
}

/* Whether either pass leaves node id alone: not an op, or one with a
 * subgraph, with control inputs or colocation constraints, or that another
 * node's control input names (`control_target`), since its copy would not
 * carry them; or a Cast or CastLike, whose rounding is what the graph asks
 * for (its input computed at another dtype is brought back before it,
 * never read as it is). */
static bool left_alone(const tgc_rewrite *rw, int32_t id, const bool *control_target) {
    const tgc_node *n = &rw->g->nodes[id];
    return n->kind != TGC_NODE_OP || rw->removed[id] || has_subgraph(n) || n->n_controls > 0 || n->n_colocate > 0 ||
           control_target[id] || strcmp(n->op_name, "Cast") == 0 || strcmp(n->op_name, "CastLike") == 0;
}

/* The narrow dtype node id computes in (its kernel dtype), or INVALID
 * (also for a node left alone). */
static tgc_dtype narrow_type(const tgc_rewrite *rw, int32_t id, const bool *control_target) {
    if (left_alone(rw, id, control_target)) return TGC_DTYPE_INVALID;
    tgc_dtype t = tgc_kernel_node_dtype(rw->g, &rw->g->nodes[id]);
    return is_narrow(t) ? t : TGC_DTYPE_INVALID;
}

/* Elements of a shape, unknown dims and ranks counted as 1 (a batch or a
 * sequence length: small next to a weight); saturates at INT64_MAX. */
static int64_t known_elements(const tgc_shape *s) {
    int64_t count = 1;
    for (int d = 0; d < s->rank; d++) {
        int64_t v = tgc_dim_known(s->dims[d]) && s->dims[d].v > 0 ? s->dims[d].v : 1;
        count = count > INT64_MAX / v ? INT64_MAX : count * v;
    }
    return count;
}

/* True when every narrow data input of node id has a float32 twin computed
 * by a converted node or is an initializer, and at least one has the twin;
 * false when an initializer among them holds more elements than the
 * node's narrow outputs together (a Gather from an embedding table): then
 * widening what the node gives costs less than widening, and holding in
 * float32, what it reads. */
static bool between_wide_nodes(const widen_state *st, int32_t id, tgc_dtype narrow) {
    const tgc_graph *g = st->rw->g;
    const tgc_node *n = &g->nodes[id];
    int64_t out_elements = 0;
    for (int p = 0; p < n->n_outputs; p++)
        if (n->outputs[p].dtype == narrow) {
            int64_t e = known_elements(&n->outputs[p].shape);
            out_elements = out_elements > INT64_MAX - e ? INT64_MAX : out_elements + e;
        }
    bool any = false;
    for (int i = 0; i < n->n_inputs; i++) {
        tgc_ref r = n->inputs[i];
        if (r.node < 0 || tgc_graph_ref_info(g, r)->dtype != narrow) continue;
        int32_t v = value_index(st, r);
        if (v >= 0 && st->computed_wide[v]) any = true;
        else if (g->nodes[r.node].kind != TGC_NODE_CONST) return false;
        else if (known_elements(&tgc_graph_ref_info(g, r)->shape) > out_elements) return false;
    }
    return any;
}

/* The float32 twin of narrow value r: a converted node's output, or a Cast
 * made once for all its readers. */
static tgc_status widened(widen_state *st, int32_t reader, tgc_ref r, tgc_ref *out) {
    int32_t v = value_index(st, r);
    if (v >= 0 && st->wide[v].node >= 0) {
        *out = st->wide[v];
        return TGC_OK;
    }
    int32_t cast;
    tgc_status s = tgc_rewrite_add_op(st->rw, "Cast", reader, &r, 1, 1, &cast);
    if (s == TGC_OK) s = tgc_rewrite_set_attr_int(st->rw, cast, "to", onnx_code(st->to));
    if (s != TGC_OK) return s;
    tgc_rewrite_keep_own_name(st->rw, cast); /* the reader's name is its float32 copy's */
    *out = (tgc_ref){cast, 0, {0, 0}};
    if (v >= 0) st->wide[v] = *out;
    return TGC_OK;
}

/* Whether input i of node id is a narrow initializer of rank `rank`. */
static bool narrow_weight(const tgc_rewrite *rw, int32_t id, int i, tgc_dtype narrow, int rank) {
    const tgc_node *n = &rw->g->nodes[id];
    if (i >= n->n_inputs || n->inputs[i].node < 0) return false;
    const tgc_tensor_info *w = tgc_graph_ref_info(rw->g, n->inputs[i]);
    return rw->g->nodes[n->inputs[i].node].kind == TGC_NODE_CONST && w->dtype == narrow && w->shape.rank == rank;
}

/* The op of tgc's that computes node id with its weights kept narrow, or
 * NULL: _MatMulHalfWeight for a MatMul by a narrow weight of rank 2 (input
 * 1, an initializer), or a Gemm with A not transposed, alpha 1 and beta 1
 * (or no C), as exporters write a linear layer; _RNNHalfWeight,
 * _GRUHalfWeight or _LSTMHalfWeight for a recurrent layer whose W and R are
 * narrow initializers. Only where every listed kind has that op. The
 * weights then stay narrow in memory, where Cast(W) would be folded into a
 * float32 copy of twice their bytes. *mask: the inputs read as they are. */
static const char *half_weight_op(const tgc_rewrite *rw, int32_t id, tgc_dtype narrow, uint32_t *mask) {
    const tgc_node *n = &rw->g->nodes[id];
    static const char *const recurrent[][2] = {
        {"RNN", "_RNNHalfWeight"}, {"GRU", "_GRUHalfWeight"}, {"LSTM", "_LSTMHalfWeight"}};
    const char *op = NULL;
    *mask = 1u << 1;
    if (strcmp(n->op_name, "MatMul") == 0 && n->n_inputs == 2 && narrow_weight(rw, id, 1, narrow, 2))
        op = "_MatMulHalfWeight";
    if (strcmp(n->op_name, "Gemm") == 0 && narrow_weight(rw, id, 1, narrow, 2) &&
        tgc_pass_attr_int(n, "transA", 0) == 0 && tgc_pass_attr_float(n, "alpha", 1.0) == 1.0 &&
        (n->n_inputs < 3 || n->inputs[2].node < 0 || tgc_pass_attr_float(n, "beta", 1.0) == 1.0))
        op = "_MatMulHalfWeight";
    for (int r = 0; r < 3; r++)
        if (strcmp(n->op_name, recurrent[r][0]) == 0 && narrow_weight(rw, id, 1, narrow, 3) &&
            narrow_weight(rw, id, 2, narrow, 3)) {
            op = recurrent[r][1];
            *mask = 1u << 1 | 1u << 2;
        }
    return op != NULL && tgc_pass_kernel_everywhere(rw->kinds, op) ? op : NULL;
}

/* The float32 copy of a MatMul or Gemm node id by a half-precision weight
 * (half_weight_op), reading ins (A widened, B as it is, C widened):
 * _MatMulHalfWeight, after a Transpose of B for transB (a constant, folded
 * by fold-constants at the narrow type) and before an Add of C. */
static tgc_status half_weight_copy(tgc_rewrite *rw, int32_t id, const tgc_ref *ins, int n_in, int32_t *out) {
    const tgc_node *n = &rw->g->nodes[id];
    bool has_c = n->n_inputs > 2 && n->inputs[2].node >= 0;
    tgc_ref ab[2] = {ins[0], ins[1]};
    tgc_status s = TGC_OK;
    if (strcmp(n->op_name, "Gemm") == 0 && tgc_pass_attr_int(n, "transB", 0) != 0) {
        int32_t t;
        const int64_t perm[2] = {1, 0};
        s = tgc_rewrite_add_op(rw, "Transpose", id, &ins[1], 1, 1, &t);
        if (s == TGC_OK) s = tgc_rewrite_set_attr_list(rw, t, "perm", TGC_ATTR_INTS, 2, perm);
        if (s != TGC_OK) return s;
        tgc_rewrite_keep_own_name(rw, t);
        ab[1] = (tgc_ref){t, 0, {0, 0}};
    }
    int32_t mm;
    s = tgc_rewrite_add_op(rw, "_MatMulHalfWeight", id, ab, 2, 1, &mm);
    if (s != TGC_OK || !has_c || n_in < 3) {
        *out = mm;
        return s;
    }
    tgc_rewrite_keep_own_name(rw, mm);
    tgc_ref sum[2] = {{mm, 0, {0, 0}}, ins[2]};
    return tgc_rewrite_add_op(rw, "Add", id, sum, 2, 1, out);
}

/* Node id computed in float32: a copy reading the twins of its narrow
 * inputs, whose outputs become the twins of id's. A node half_weight_op
 * names reads its weights as they are (a MatMul or Gemm through
 * half_weight_copy). */
static tgc_status convert(widen_state *st, int32_t id, tgc_dtype narrow) {
    tgc_rewrite *rw = st->rw;
    int n_in = rw->g->nodes[id].n_inputs, n_out = rw->g->nodes[id].n_outputs;
    tgc_ref *ins = tgc_malloc((size_t)(n_in > 0 ? n_in : 1) * sizeof *ins);
    if (ins == NULL) return TGC_ERR_NOMEM;
    uint32_t as_is = 0;
    const char *half_op = st->to == TGC_FLOAT32 ? half_weight_op(rw, id, narrow, &as_is) : NULL;
    tgc_status s = TGC_OK;
    for (int i = 0; s == TGC_OK && i < n_in; i++) {
        tgc_ref r = rw->g->nodes[id].inputs[i];
        ins[i] = r;
        if (r.node >= 0 && tgc_graph_ref_info(rw->g, r)->dtype == narrow && !(half_op != NULL && (as_is >> i & 1u)))
            s = widened(st, id, r, &ins[i]);
    }
    int32_t wide;
    if (s == TGC_OK && half_op != NULL && strcmp(half_op, "_MatMulHalfWeight") == 0) {
        s = half_weight_copy(rw, id, ins, n_in, &wide);
    } else if (s == TGC_OK) {
        s = tgc_rewrite_add_op(rw, half_op != NULL ? half_op : rw->g->nodes[id].op_name, id, ins, n_in, n_out, &wide);
        if (s == TGC_OK) s = tgc_rewrite_copy_attrs(rw, id, wide);
    }
    tgc_free(ins);
    if (s != TGC_OK) return s;
    st->copy[id] = wide;
    for (int p = 0; p < n_out; p++) {
        int32_t v = value_index(st, (tgc_ref){id, p, {0, 0}});
        if (v < 0 || rw->g->nodes[id].outputs[p].dtype != narrow) continue;
        st->wide[v] = (tgc_ref){wide, p, {0, 0}};
        st->computed_wide[v] = true;
    }
    rw->edits++;
    return TGC_OK;
}

/* Converted node id's outputs handed to its remaining readers: a narrow
 * one through a Cast back (port 0's taking id's name), the others as they
 * are; then id goes. */
static tgc_status hand_over(widen_state *st, int32_t id, tgc_dtype narrow) {
    tgc_rewrite *rw = st->rw;
    int32_t wide = st->copy[id];
    for (int p = 0; p < rw->g->nodes[id].n_outputs; p++) {
        tgc_ref old = {id, p, {0, 0}}, now = {wide, p, {0, 0}};
        if (rw->g->nodes[id].outputs[p].dtype == narrow && tgc_rewrite_uses(rw, old) > 0) {
            int32_t back;
            tgc_status s = tgc_rewrite_add_op(rw, "Cast", id, &now, 1, 1, &back);
            if (s == TGC_OK) s = tgc_rewrite_set_attr_int(rw, back, "to", onnx_code(narrow));
            if (s != TGC_OK) return s;
            tgc_rewrite_keep_own_name(rw, p == 0 ? wide : back);
            now = (tgc_ref){back, 0, {0, 0}};
        }
        tgc_rewrite_replace_uses(rw, old, now);
    }
    tgc_rewrite_remove(rw, id);
    return TGC_OK;
}

bool tgc_pass_has_narrow_nodes(const tgc_graph *g) {
    for (int32_t id = 0; id < g->n_nodes; id++)
        if (g->nodes[id].kind == TGC_NODE_OP && is_narrow(tgc_kernel_node_dtype(g, &g->nodes[id]))) return true;
    return false;
}

/* The pass's state over rw's graph, converted nodes computing in `to`:
 * st->copy[] all -1, st->from[id] the dtype node id computes at when
 * `eligible` says the pass may convert it (else INVALID). TGC_ERR_NOMEM. */
static tgc_status state_begin(tgc_rewrite *rw, tgc_dtype to, widen_state *st,
                              tgc_dtype (*eligible)(const tgc_rewrite *rw, int32_t id, const bool *control_target)) {
    int32_t nn = rw->g->n_nodes;
    *st = (widen_state){.rw = rw, .to = to, .n_nodes = nn, .n_values = rw->n_values};
    st->wide = tgc_malloc((size_t)(st->n_values + 1) * sizeof *st->wide);
    st->computed_wide = tgc_calloc((size_t)st->n_values + 1, sizeof *st->computed_wide);
    st->copy = tgc_malloc((size_t)(nn + 1) * sizeof *st->copy);
    st->from = tgc_malloc((size_t)(nn + 1) * sizeof *st->from);
    bool *control_target = tgc_calloc((size_t)nn + 1, sizeof *control_target);
    tgc_status s = st->wide != NULL && st->computed_wide != NULL && st->copy != NULL && st->from != NULL &&
                           control_target != NULL
                       ? TGC_OK
                       : TGC_ERR_NOMEM;
    for (int32_t v = 0; s == TGC_OK && v < st->n_values; v++) st->wide[v] = (tgc_ref){-1, 0, {0, 0}};
    for (int32_t id = 0; s == TGC_OK && id < nn; id++) {
        st->copy[id] = -1;
        for (int k = 0; k < rw->g->nodes[id].n_controls; k++)
            if (rw->g->nodes[id].controls[k].node >= 0) control_target[rw->g->nodes[id].controls[k].node] = true;
    }
    for (int32_t id = 0; s == TGC_OK && id < nn; id++) st->from[id] = eligible(rw, id, control_target);
    tgc_free(control_target);
    return s;
}

/* Hands every converted node's outputs over and frees the state. In
 * reverse order: a converted reader goes before what it reads, so the
 * Cast back is made only for readers that were not converted. */
static tgc_status state_finish(widen_state *st, tgc_status s) {
    for (int32_t i = st->n_nodes - 1; s == TGC_OK && i >= 0; i--) {
        int32_t id = st->rw->g->topo[i];
        if (st->copy[id] >= 0) s = hand_over(st, id, st->from[id]);
    }
    tgc_free(st->wide);
    tgc_free(st->computed_wide);
    tgc_free(st->copy);
    tgc_free(st->from);
    return s;
}

tgc_status tgc_pass_compute_in_float32(tgc_rewrite *rw) {
    widen_state st;
    tgc_status s = state_begin(rw, TGC_FLOAT32, &st, narrow_type);
    for (int32_t i = 0; s == TGC_OK && i < st.n_nodes; i++) {
        int32_t id = rw->g->topo[i];
        tgc_dtype narrow = st.from[id];
        if (narrow == TGC_DTYPE_INVALID) continue;
        bool native, wide;
        kernels_for(rw, id, narrow, &native, &wide);
        if (wide && (!native || between_wide_nodes(&st, id, narrow))) s = convert(&st, id, narrow);
    }
    return state_finish(&st, s);
}

/* FLOAT32 when compute-in-float16 takes node id: left alone by no rule
 * of narrow_type's, a float32 input and a float32 output, and a float16
 * kernel on a listed kind other than the host (any such kind when
 * rw->kinds is 0); INVALID otherwise. */
static tgc_dtype computes_in_float16(const tgc_rewrite *rw, int32_t id, const bool *control_target) {
    const tgc_graph *g = rw->g;
    const tgc_node *n = &g->nodes[id];
    if (left_alone(rw, id, control_target) || tgc_kernel_node_dtype(g, n) != TGC_FLOAT32) return TGC_DTYPE_INVALID;
    bool float_in = false, float_out = false;
    for (int i = 0; i < n->n_inputs; i++)
        float_in = float_in || (n->inputs[i].node >= 0 && tgc_graph_ref_info(g, n->inputs[i])->dtype == TGC_FLOAT32);
    for (int p = 0; p < n->n_outputs; p++) float_out = float_out || n->outputs[p].dtype == TGC_FLOAT32;
    if (!float_in || !float_out) return TGC_DTYPE_INVALID;
    tgc_dtype out0 = n->outputs[0].dtype == TGC_FLOAT32 ? TGC_FLOAT16 : n->outputs[0].dtype;
    for (int k = 0; k < tgc_backend_count(); k++) {
        if ((rw->kinds != 0 && !(rw->kinds & (1u << k))) || tgc_kind_is_host(k)) continue;
        if (tgc_kernel_select(n, k, TGC_FLOAT16, out0, false) != NULL) return TGC_FLOAT32;
    }
    return TGC_DTYPE_INVALID;
}

tgc_status tgc_pass_compute_in_float16(tgc_rewrite *rw) {
    if (!rw->float16) return TGC_OK;
    widen_state st;
    tgc_status s = state_begin(rw, TGC_FLOAT16, &st, computes_in_float16);
    for (int32_t i = 0; s == TGC_OK && i < st.n_nodes; i++) {
        int32_t id = rw->g->topo[i];
        if (st.from[id] == TGC_FLOAT32) s = convert(&st, id, TGC_FLOAT32);
    }
    return state_finish(&st, s);
}
