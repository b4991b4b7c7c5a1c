/* Sequences and optionals (ONNX opset 17): SequenceEmpty SequenceConstruct
 * SequenceInsert SequenceAt SequenceLength SequenceErase ConcatFromSequence
 * SplitToSequence SequenceMap, Optional OptionalHasElement
 * OptionalGetElement.
 *
 * A sequence's info describes its elements (graph.h's tgc_value_kind): a
 * dim the elements may not share is a fresh symbol, and the rank is
 * unknown where they may differ in rank, as ONNX's own inference has it
 * (an empty sequence's elements have no shape; inserting into it keeps
 * none). What each element really is, the kernels see at run time. */
#include "graph/infer_subgraph.h"
#include "graph/ops.h"
#include "graph/subgraph.h"
#include "support/alloc.h"

#include <stdio.h>
#include <string.h>

static const tgc_attr_def no_attrs[] = {{NULL, 0, false}};

/* What input i is (dtype and kind) in words, for messages. */
static const char *type_of(const tgc_tensor_info *in, char *buf, size_t size) {
    return tgc_type_str(in->dtype, in->kind, buf, size);
}

/* Input i must be of kind `kind` (omitted is allowed when `optional`). */
static bool require_kind(tgc_infer_ctx *c, int i, int kind, bool optional) {
    const tgc_tensor_info *in = tgc_infer_input(c, i);
    char t[64], w[64];
    if (in == NULL) {
        if (optional) return true;
        tgc_infer_fail(c, i, "missing-input", "input %d cannot be omitted", i);
        return false;
    }
    if (in->kind == kind) return true;
    tgc_infer_fail(c, i, "dtype-mismatch", "input %d is a %s; it must be a %s", i, type_of(in, t, sizeof t),
                   tgc_type_str(in->dtype, kind, w, sizeof w));
    return false;
}

/* A position (int32 or int64 scalar). */
static bool require_position(tgc_infer_ctx *c, int i) {
    const tgc_tensor_info *p = tgc_infer_input(c, i);
    if (p == NULL) return true;
    if (!tgc_infer_require_int(c, i)) return false;
    for (int d = 0; d < p->shape.rank; d++) /* a scalar; [1] too, as ONNX's own tests write it */
        if (!tgc_dim_is(p->shape.dims[d], 1)) {
            tgc_infer_fail(c, i, "shape-mismatch", "the position must be a scalar");
            return false;
        }
    return true;
}

/* The element shape of a sequence holding elements of shapes a and b:
 * dims they share kept, others fresh; unknown when a rank is. */
static tgc_shape merge_elements(tgc_infer_ctx *c, const tgc_shape *a, const tgc_shape *b) {
    tgc_shape out = {.rank = TGC_RANK_UNKNOWN};
    if (a->rank == TGC_RANK_UNKNOWN || b->rank == TGC_RANK_UNKNOWN || a->rank != b->rank) return out;
    out = *a;
    for (int d = 0; d < a->rank; d++)
        if (!tgc_dim_eq(a->dims[d], b->dims[d])) out.dims[d] = tgc_infer_fresh_dim(c);
    return out;
}

/* ---- making and changing sequences -------------------------------------------- */

static const tgc_attr_def empty_attrs[] = {{"dtype", TGC_ATTR_INT, false}, {NULL, 0, false}};

static tgc_status infer_sequence_empty(tgc_infer_ctx *c) {
    int64_t code = tgc_infer_attr_int(c, "dtype", 1);
    tgc_dtype dt = tgc_dtype_from_onnx(code);
    if (dt == TGC_DTYPE_INVALID)
        return tgc_infer_fail(c, -1, "bad-attribute", "dtype %lld is no dtype tgc has", (long long)code);
    tgc_shape none = {.rank = TGC_RANK_UNKNOWN};
    return tgc_infer_set_output_kind(c, 0, TGC_KIND_SEQUENCE, dt, &none);
}

static tgc_status infer_sequence_construct(tgc_infer_ctx *c) {
    const tgc_tensor_info *first = tgc_infer_input(c, 0);
    if (!require_kind(c, 0, TGC_KIND_TENSOR, false)) return TGC_ERR_INVALID;
    tgc_shape shape = first->shape;
    for (int i = 1; i < tgc_infer_num_inputs(c); i++) {
        if (!require_kind(c, i, TGC_KIND_TENSOR, false) || !tgc_infer_require_same_dtype(c, 0, i))
            return TGC_ERR_INVALID;
        shape = merge_elements(c, &shape, &tgc_infer_input(c, i)->shape);
    }
    return tgc_infer_set_output_kind(c, 0, TGC_KIND_SEQUENCE, first->dtype, &shape);
}

static tgc_status infer_sequence_insert(tgc_infer_ctx *c) {
    if (!require_kind(c, 0, TGC_KIND_SEQUENCE, false) || !require_kind(c, 1, TGC_KIND_TENSOR, false) ||
        !require_position(c, 2))
        return TGC_ERR_INVALID;
    const tgc_tensor_info *seq = tgc_infer_input(c, 0), *t = tgc_infer_input(c, 1);
    char a[64], b[64];
    if (seq->dtype != t->dtype)
        return tgc_infer_fail(c, 1, "dtype-mismatch", "the tensor is %s but the sequence holds %s",
                              tgc_dtype_name(t->dtype), type_of(seq, a, sizeof a));
    (void)b;
    tgc_shape shape = merge_elements(c, &seq->shape, &t->shape);
    return tgc_infer_set_output_kind(c, 0, TGC_KIND_SEQUENCE, seq->dtype, &shape);
}

static tgc_status infer_sequence_erase(tgc_infer_ctx *c) {
    if (!require_kind(c, 0, TGC_KIND_SEQUENCE, false) || !require_position(c, 1)) return TGC_ERR_INVALID;
    const tgc_tensor_info *seq = tgc_infer_input(c, 0);
    return tgc_infer_set_output_kind(c, 0, TGC_KIND_SEQUENCE, seq->dtype, &seq->shape);
}

static tgc_status infer_sequence_at(tgc_infer_ctx *c) {
    if (!require_kind(c, 0, TGC_KIND_SEQUENCE, false) || !require_position(c, 1)) return TGC_ERR_INVALID;
    const tgc_tensor_info *seq = tgc_infer_input(c, 0);
    /* At run time the kernel gives the element itself: no shape to infer. */
    if (c->runtime && seq->shape.rank == TGC_RANK_UNKNOWN) c->unresolved = true;
    return tgc_infer_set_output(c, 0, seq->dtype, &seq->shape);
}

static tgc_status infer_sequence_length(tgc_infer_ctx *c) {
    if (!require_kind(c, 0, TGC_KIND_SEQUENCE, false)) return TGC_ERR_INVALID;
    tgc_shape scalar = {.rank = 0};
    return tgc_infer_set_output(c, 0, TGC_INT64, &scalar);
}

/* ---- sequences and tensors ------------------------------------------------------ */

static const tgc_attr_def concat_attrs[] = {
    {"axis", TGC_ATTR_INT, true}, {"new_axis", TGC_ATTR_INT, false}, {NULL, 0, false}};

static tgc_status infer_concat_from_sequence(tgc_infer_ctx *c) {
    if (!require_kind(c, 0, TGC_KIND_SEQUENCE, false)) return TGC_ERR_INVALID;
    const tgc_tensor_info *seq = tgc_infer_input(c, 0);
    int64_t axis = tgc_infer_attr_int(c, "axis", 0), new_axis = tgc_infer_attr_int(c, "new_axis", 0);
    if (new_axis != 0 && new_axis != 1)
        return tgc_infer_fail(c, -1, "bad-attribute", "new_axis is %lld; it must be 0 or 1", (long long)new_axis);
    tgc_shape out = {.rank = TGC_RANK_UNKNOWN};
    int rank = seq->shape.rank;
    if (rank != TGC_RANK_UNKNOWN) {
        int out_rank = rank + (int)new_axis;
        if (axis < -out_rank || axis >= out_rank || out_rank > TGC_MAX_RANK || out_rank == 0)
            return tgc_infer_fail(c, -1, "bad-attribute", "axis %lld is out of range for elements of rank %d%s",
                                  (long long)axis, rank, new_axis ? " and a new axis" : "");
        int a = (int)(axis < 0 ? axis + out_rank : axis);
        out.rank = out_rank;
        for (int d = 0, from = 0; d < out_rank; d++) {
            if (d == a) {
                out.dims[d] = tgc_infer_fresh_dim(c); /* the sequence's length, or the sum of its elements' */
                if (!new_axis) from++;
            } else {
                out.dims[d] = seq->shape.dims[from++];
            }
        }
    }
    if (c->runtime) c->unresolved = true; /* the kernel sizes its output */
    return tgc_infer_set_output(c, 0, seq->dtype, &out);
}

static const tgc_attr_def split_attrs[] = {
    {"axis", TGC_ATTR_INT, false}, {"keepdims", TGC_ATTR_INT, false}, {NULL, 0, false}};

static tgc_status infer_split_to_sequence(tgc_infer_ctx *c) {
    if (!require_kind(c, 0, TGC_KIND_TENSOR, false)) return TGC_ERR_INVALID;
    const tgc_tensor_info *x = tgc_infer_input(c, 0), *split = tgc_infer_input(c, 1);
    if (split != NULL && !tgc_infer_require_int(c, 1)) return TGC_ERR_INVALID;
    int rank = x->shape.rank;
    int64_t axis = tgc_infer_attr_int(c, "axis", 0), keepdims = tgc_infer_attr_int(c, "keepdims", 1);
    tgc_shape elem = {.rank = TGC_RANK_UNKNOWN};
    if (rank != TGC_RANK_UNKNOWN) {
        if (axis < -rank || axis >= rank)
            return tgc_infer_fail(c, -1, "bad-attribute", "axis %lld is out of range for rank %d", (long long)axis,
                                  rank);
        int a = (int)(axis < 0 ? axis + rank : axis);
        elem = x->shape;
        if (split == NULL && keepdims == 0) { /* one element per index, the axis dropped */
            for (int d = a; d < rank - 1; d++) elem.dims[d] = elem.dims[d + 1];
            elem.rank--;
        } else {
            elem.dims[a] = split == NULL ? tgc_dim_of(1) : tgc_infer_fresh_dim(c);
        }
    }
    return tgc_infer_set_output_kind(c, 0, TGC_KIND_SEQUENCE, x->dtype, &elem);
}

/* ---- optionals ------------------------------------------------------------------- */

/* Optional's `type` is ONNX's TypeProto; the importer writes it as the
 * format's type string ("float32", "seq(int64)"). */
static const tgc_attr_def optional_attrs[] = {{"type", TGC_ATTR_STRING, false}, {NULL, 0, false}};

static tgc_status infer_optional(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    const char *type = tgc_infer_attr_string(c, "type", NULL);
    tgc_dtype dt;
    uint8_t kind;
    if (type != NULL && (!tgc_type_parse(type, &dt, &kind) || (kind & TGC_KIND_OPTIONAL)))
        return tgc_infer_fail(c, -1, "bad-attribute", "type '%s' is no tensor or sequence type", type);
    if (x == NULL && type == NULL)
        return tgc_infer_fail(c, -1, "missing-attribute", "an Optional without an input needs its 'type'");
    if (x != NULL && (x->kind & TGC_KIND_OPTIONAL))
        return tgc_infer_fail(c, 0, "dtype-mismatch", "the input is already an optional");
    if (x != NULL && type != NULL && (dt != x->dtype || kind != x->kind))
        return tgc_infer_fail(c, 0, "dtype-mismatch", "the input's type disagrees with attribute 'type' (%s)", type);
    tgc_shape none = {.rank = TGC_RANK_UNKNOWN};
    if (x != NULL) return tgc_infer_set_output_kind(c, 0, x->kind | TGC_KIND_OPTIONAL, x->dtype, &x->shape);
    return tgc_infer_set_output_kind(c, 0, kind | TGC_KIND_OPTIONAL, dt, &none);
}

static tgc_status infer_optional_has_element(tgc_infer_ctx *c) {
    tgc_shape scalar = {.rank = 0};
    return tgc_infer_set_output(c, 0, TGC_BOOL, &scalar);
}

/* Opset 18 lets it take a plain tensor or sequence too: the value itself. */
static tgc_status infer_optional_get_element(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    int kind = x->kind & ~TGC_KIND_OPTIONAL;
    if (c->runtime && kind == TGC_KIND_TENSOR) c->unresolved = true; /* the kernel gives the value itself */
    return tgc_infer_set_output_kind(c, 0, kind, x->dtype, &x->shape);
}

/* ---- SequenceMap ----------------------------------------------------------------- */

static const tgc_attr_def map_attrs[] = {{"body", TGC_ATTR_GRAPH, true}, {NULL, 0, false}};

/* The body takes an element of each sequence input and each tensor input
 * as it is; each of its outputs, one per element, makes a sequence. */
static tgc_status infer_sequence_map(tgc_infer_ctx *c) {
    tgc_graph *body = tgc_node_subgraph(c->node, "body");
    if (body == NULL) return tgc_infer_fail(c, -1, "missing-attribute", "needs the subgraph attribute 'body'");
    if (!require_kind(c, 0, TGC_KIND_SEQUENCE, false)) return TGC_ERR_INVALID;
    int n = tgc_infer_num_inputs(c);
    tgc_tensor_info *formal = tgc_calloc((size_t)n + 1, sizeof *formal);
    if (formal == NULL) return TGC_ERR_NOMEM;
    tgc_status s = TGC_OK;
    for (int i = 0; i < n && s == TGC_OK; i++) {
        const tgc_tensor_info *in = tgc_infer_input(c, i);
        if (in == NULL) s = tgc_infer_fail(c, i, "missing-input", "input %d cannot be omitted", i);
        else if (in->kind != TGC_KIND_TENSOR && in->kind != TGC_KIND_SEQUENCE) s = require_kind(c, i, 0, false);
        else formal[i] = (tgc_tensor_info){.dtype = in->dtype, .shape = in->shape, .value_len = -1};
    }
    if (s == TGC_OK) s = tgc_subgraph_infer(c, body, formal, n, NULL, NULL);
    for (int k = 0; s == TGC_OK && k < tgc_infer_num_outputs(c); k++) {
        const tgc_tensor_info *per = tgc_subgraph_output(body, k);
        if (per == NULL || per->kind != TGC_KIND_TENSOR) {
            s = per == NULL ? TGC_ERR_INVALID
                            : tgc_infer_fail(c, -1, "dtype-mismatch", "the body's output %d must be a tensor", k);
            break;
        }
        s = tgc_infer_set_output_kind(c, k, TGC_KIND_SEQUENCE, per->dtype, &per->shape);
    }
    tgc_free(formal);
    return s;
}

const tgc_op_def tgc_op_SequenceEmpty = {"SequenceEmpty", 0, 0, 1, 1, empty_attrs, infer_sequence_empty};
const tgc_op_def tgc_op_SequenceConstruct = {"SequenceConstruct", 1, -1, 1, 1, no_attrs, infer_sequence_construct};
const tgc_op_def tgc_op_SequenceInsert = {"SequenceInsert", 2, 3, 1, 1, no_attrs, infer_sequence_insert};
const tgc_op_def tgc_op_SequenceAt = {"SequenceAt", 2, 2, 1, 1, no_attrs, infer_sequence_at};
const tgc_op_def tgc_op_SequenceLength = {"SequenceLength", 1, 1, 1, 1, no_attrs, infer_sequence_length};
const tgc_op_def tgc_op_SequenceErase = {"SequenceErase", 1, 2, 1, 1, no_attrs, infer_sequence_erase};
const tgc_op_def tgc_op_ConcatFromSequence = {"ConcatFromSequence", 1, 1, 1, 1, concat_attrs,
                                              infer_concat_from_sequence};
const tgc_op_def tgc_op_SplitToSequence = {"SplitToSequence", 1, 2, 1, 1, split_attrs, infer_split_to_sequence};
const tgc_op_def tgc_op_SequenceMap = {"SequenceMap", 1, -1, 1, -1, map_attrs, infer_sequence_map};
const tgc_op_def tgc_op_Optional = {"Optional", 0, 1, 1, 1, optional_attrs, infer_optional};
const tgc_op_def tgc_op_OptionalHasElement = {"OptionalHasElement", 0, 1, 1, 1, no_attrs, infer_optional_has_element};
const tgc_op_def tgc_op_OptionalGetElement = {"OptionalGetElement", 1, 1, 1, 1, no_attrs, infer_optional_get_element};

/* The ops that move whole values and so take every kind, and the ops of
 * this file. */
bool tgc_ops_take_kinds(const char *op) {
    static const char *const ops[] = {"Identity", "If", "Loop", "Scan", "_Send", "_Recv"};
    if (strncmp(op, "Sequence", 8) == 0 || strncmp(op, "Optional", 8) == 0 || strcmp(op, "ConcatFromSequence") == 0 ||
        strcmp(op, "SplitToSequence") == 0)
        return true;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(op, ops[i]) == 0) return true;
    return false;
}
