/* SplitToSequence read only through SequenceAt at constant positions,
 * imported as a Split: the chunks as a Split's outputs, no sequence.
 *
 * ONNX semantics (Operators.md, SplitToSequence-11 and SequenceAt-11; the
 * reference onnx/reference/ops/op_split_to_sequence.py): the input is cut
 * along `axis` (default 0, negative counts from the end)
 *   - without `split`: into chunks of 1, each squeezed along `axis` when
 *     keepdims is 0 (keepdims, default 1, is used only here);
 *   - with a scalar `split` s (> 0): into chunks of s, the last smaller
 *     (ceil(dim / s) chunks);
 *   - with a 1-D `split`: into chunks of those lengths (adding up to dim).
 * SequenceAt(seq, position) takes chunk `position`, a scalar int32/int64 in
 * [-n, n - 1] (negative counts from the end).
 *
 * When every reader of the sequence is such a SequenceAt, the sequence is
 * not a graph output and the number of chunks is known here (a constant
 * `split`, and for the scalar and absent forms the input's static dim along
 * `axis`: a graph input's, an initializer's or one the model's value_info
 * gives), the SplitToSequence node becomes
 *     Split(x, lengths)        lengths: an int64 initializer, one per chunk
 * (named as the sequence, so chunk k is "seq:k") and each SequenceAt becomes
 *     Identity(seq:k)  or, keepdims 0 without split, Squeeze(seq:k, [axis])
 * named as its output. Otherwise (a sequence read elsewhere, inside a
 * subgraph, or at a position not constant) SplitToSequence and its
 * SequenceAt readers stay the sequence ops they are; a position outside
 * the sequence is a bad-model error naming the SequenceAt node.
 *
 * The positions' Constant nodes may come after the SplitToSequence node, so
 * constants are read from the ONNX graph directly, through an index of its
 * names built once per import; each node's plan is recomputed from it. */
#include "onnx/onnx_import.h"

#include "graph/subgraph.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* A sequence split's plan: what the Split gives. */
typedef struct seq_plan {
    const Onnx__NodeProto *split_node; /* the SplitToSequence */
    int64_t axis;                      /* as written (may be negative) */
    int64_t count;                     /* chunks */
    int64_t lengths[TGC_MAX_VALUE_LEN];
    bool squeeze; /* keepdims 0 without split: each chunk squeezed along axis */
} seq_plan;

static const char *str_or_empty(const char *s) { return s ? s : ""; }

static bool is_onnx_domain(const char *d) { return d == NULL || d[0] == '\0' || strcmp(d, "ai.onnx") == 0; }

/* The int attribute `name` of n, or `dflt`. */
static int64_t int_attr(const Onnx__NodeProto *n, const char *name, int64_t dflt) {
    const Onnx__AttributeProto *a = tgc_onnx_node_attr(n, name, NULL);
    return a != NULL ? a->i : dflt;
}

/* What the rewrite looks up, built once per import on the first
 * SplitToSequence or SequenceAt (so that a model of many such nodes costs
 * linear time, not a scan of the graph per node). */
struct tgc_onnx_seq_index {
    tgc_strmap producer;    /* ONNX tensor name -> index of the first node making it */
    tgc_strmap initializer; /* initializer name -> index */
    tgc_strmap typed;       /* name -> 3 * index + list: graph input 0, value_info 1, graph output 2 */
    tgc_strmap seq;         /* a SplitToSequence's output -> index in why */
    const char **why;       /* NULL, or why that sequence cannot become a Split */
};

static bool put_first(tgc_strmap *m, const char *key, int32_t v) {
    return key == NULL || key[0] == '\0' || tgc_strmap_get(m, key) >= 0 || tgc_strmap_put(m, key, v) == TGC_OK;
}

void tgc_onnx_seq_index_release(tgc_onnx_seq_index *x) {
    if (x == NULL) return;
    tgc_strmap_release(&x->producer);
    tgc_strmap_release(&x->initializer);
    tgc_strmap_release(&x->typed);
    tgc_strmap_release(&x->seq);
}

/* The node of g whose output is `name`, or NULL. */
static const Onnx__NodeProto *producer(tgc_onnx_importer *im, const char *name) {
    const tgc_onnx_seq_index *x = *tgc_onnx_importer_seq_index(im);
    int32_t i = tgc_strmap_get(&x->producer, name);
    return i >= 0 ? tgc_onnx_importer_graph(im)->node[i] : NULL;
}

/* Reads the integer constant `name` (an initializer or a Constant node's
 * value / value_int / value_ints) of int32 or int64 type into v[0..*n)
 * (*n <= cap) and its rank into *rank. False when it is not such a constant
 * or holds more than cap values. */
static bool int_constant(tgc_onnx_importer *im, const char *name, int64_t *v, int cap, int *n, int *rank) {
    const Onnx__GraphProto *g = tgc_onnx_importer_graph(im);
    const tgc_onnx_seq_index *ix = *tgc_onnx_importer_seq_index(im);
    int32_t init = tgc_strmap_get(&ix->initializer, name);
    const Onnx__TensorProto *t = init >= 0 ? g->initializer[init] : NULL;
    if (t == NULL) {
        const Onnx__NodeProto *p = producer(im, name);
        if (p == NULL || !is_onnx_domain(p->domain) || strcmp(str_or_empty(p->op_type), "Constant") != 0 ||
            p->n_attribute != 1)
            return false;
        const Onnx__AttributeProto *a = p->attribute[0];
        const char *an = str_or_empty(a->name);
        if (strcmp(an, "value_int") == 0) {
            v[0] = a->i;
            *n = 1;
            *rank = 0;
            return cap >= 1;
        }
        if (strcmp(an, "value_ints") == 0) {
            if (a->n_ints > (size_t)cap) return false;
            memcpy(v, a->ints, a->n_ints * sizeof *v);
            *n = (int)a->n_ints;
            *rank = 1;
            return true;
        }
        if (strcmp(an, "value") != 0 || a->t == NULL) return false;
        t = a->t;
    }
    tgc_npy x;
    char err[256];
    if (tgc_onnx_tensor_decode(t, tgc_onnx_importer_dir(im), tgc_onnx_importer_arena(im), &x, err, sizeof err) !=
        TGC_OK)
        return false;
    if (x.dtype != TGC_INT32 && x.dtype != TGC_INT64) return false;
    size_t numel = x.nbytes / tgc_dtype_size(x.dtype);
    if (numel > (size_t)cap) return false;
    for (size_t i = 0; i < numel; i++) {
        if (x.dtype == TGC_INT64) {
            memcpy(&v[i], (const char *)x.data + i * 8, 8);
        } else {
            int32_t w;
            memcpy(&w, (const char *)x.data + i * 4, 4);
            v[i] = w;
        }
    }
    *n = (int)numel;
    *rank = x.rank;
    return true;
}

/* The static shape of tensor type `t` into rank/dims (-1 for an unknown
 * dim); false when it has none. */
static bool type_shape(const Onnx__TypeProto *t, int *rank, int64_t *dims) {
    if (t == NULL || t->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || t->tensor_type == NULL ||
        t->tensor_type->shape == NULL || t->tensor_type->shape->n_dim > TGC_MAX_TENSOR_RANK)
        return false;
    const Onnx__TensorShapeProto *s = t->tensor_type->shape;
    *rank = (int)s->n_dim;
    for (size_t k = 0; k < s->n_dim; k++)
        dims[k] = s->dim[k]->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
                          s->dim[k]->dim_value >= 0
                      ? s->dim[k]->dim_value
                      : -1;
    return true;
}

/* The static shape of ONNX tensor `name` as the model states it: an
 * initializer's dims, or the type of a graph input, value_info or graph
 * output. False when the model does not say. */
static bool static_shape(tgc_onnx_importer *im, const char *name, int *rank, int64_t *dims) {
    const Onnx__GraphProto *g = tgc_onnx_importer_graph(im);
    const tgc_onnx_seq_index *ix = *tgc_onnx_importer_seq_index(im);
    int32_t i = tgc_strmap_get(&ix->initializer, name);
    if (i >= 0) {
        const Onnx__TensorProto *t = g->initializer[i];
        if (t->n_dims > TGC_MAX_TENSOR_RANK) return false;
        *rank = (int)t->n_dims;
        for (size_t k = 0; k < t->n_dims; k++)
            dims[k] = t->dims[k];
        return true;
    }
    i = tgc_strmap_get(&ix->typed, name);
    if (i < 0) return false;
    const Onnx__ValueInfoProto *v = i % 3 == 0 ? g->input[i / 3] : i % 3 == 1 ? g->value_info[i / 3] : g->output[i / 3];
    return type_shape(v->type, rank, dims);
}

static bool is_sequence_at(const Onnx__NodeProto *n) {
    return is_onnx_domain(n->domain) && strcmp(str_or_empty(n->op_type), "SequenceAt") == 0;
}

/* Why sequence `seq` (a SplitToSequence's output) cannot become a Split
 * because of who reads it: a graph output, an op other than SequenceAt, a
 * position that is not a constant. NULL when its readers allow it. */
static const char *readers_refuse(tgc_onnx_importer *im, tgc_onnx_seq_index *ix, const char *seq) {
    const Onnx__GraphProto *g = tgc_onnx_importer_graph(im);
    int32_t id = tgc_strmap_get(&ix->seq, seq);
    if (id < 0) return "its sequence is made twice"; /* a bad model, reported as such by the importer */
    const char **why = &ix->why[id];
    for (size_t i = 0; i < g->n_output && *why == NULL; i++)
        if (strcmp(str_or_empty(g->output[i]->name), seq) == 0)
            *why = "its sequence is a graph output";
    return *why;
}

/* A sequence read inside a subgraph (g, and the subgraphs in it) stays a
 * sequence: the subgraph may read it at any position. */
static void refuse_reads_inside(tgc_onnx_seq_index *ix, const Onnx__GraphProto *g, int depth) {
    if (depth >= TGC_MAX_SUBGRAPH_DEPTH) return; /* refused when converted */
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *r = g->node[i];
        for (size_t k = 0; k < r->n_input; k++) {
            int32_t id = tgc_strmap_get(&ix->seq, str_or_empty(r->input[k]));
            if (id >= 0 && ix->why[id] == NULL) ix->why[id] = "its sequence is read inside a subgraph";
        }
        for (size_t k = 0; k < r->n_attribute; k++)
            if (r->attribute[k]->g != NULL) refuse_reads_inside(ix, r->attribute[k]->g, depth + 1);
    }
    for (size_t i = 0; i < g->n_output; i++) {
        int32_t id = tgc_strmap_get(&ix->seq, str_or_empty(g->output[i]->name));
        if (id >= 0 && ix->why[id] == NULL) ix->why[id] = "its sequence is an output of a subgraph";
    }
}

/* Builds the index (im's, kept until the import ends); false when out of memory. */
static bool build_index(tgc_onnx_importer *im) {
    tgc_onnx_seq_index **slot = tgc_onnx_importer_seq_index(im);
    if (*slot != NULL) return true;
    const Onnx__GraphProto *g = tgc_onnx_importer_graph(im);
    tgc_onnx_arena *a = tgc_onnx_importer_arena(im);
    tgc_onnx_seq_index *ix = tgc_onnx_alloc(a, sizeof *ix);
    if (ix == NULL) return false;
    *slot = ix; /* int_constant reads it while it is built; released with the importer */
    bool ok = true;
    for (size_t i = 0; i < g->n_initializer && ok; i++)
        ok = put_first(&ix->initializer, g->initializer[i]->name, (int32_t)i);
    const Onnx__ValueInfoProto *const *lists[3] = {(const Onnx__ValueInfoProto *const *)g->input,
                                                    (const Onnx__ValueInfoProto *const *)g->value_info,
                                                    (const Onnx__ValueInfoProto *const *)g->output};
    size_t sizes[3] = {g->n_input, g->n_value_info, g->n_output};
    for (int l = 0; l < 3; l++)
        for (size_t i = 0; i < sizes[l] && ok; i++)
            ok = i < INT32_MAX / 3 && put_first(&ix->typed, lists[l][i]->name, (int32_t)(3 * i + (size_t)l));
    int32_t n_seq = 0;
    for (size_t i = 0; i < g->n_node && ok; i++) {
        const Onnx__NodeProto *n = g->node[i];
        for (size_t k = 0; k < n->n_output && ok; k++)
            ok = put_first(&ix->producer, n->output[k], (int32_t)i);
        if (ok && is_onnx_domain(n->domain) && strcmp(str_or_empty(n->op_type), "SplitToSequence") == 0 &&
            n->n_output >= 1 && str_or_empty(n->output[0])[0] != '\0' && tgc_strmap_get(&ix->seq, n->output[0]) < 0)
            ok = tgc_strmap_put(&ix->seq, n->output[0], n_seq++) == TGC_OK;
    }
    ix->why = ok ? tgc_onnx_alloc(a, ((size_t)n_seq + 1) * sizeof *ix->why) : NULL;
    if (ix->why == NULL) {
        tgc_onnx_seq_index_release(ix);
        *slot = NULL; /* the import stops: out of memory */
        return false;
    }
    /* Every read of a sequence: only a SequenceAt's input 0 at a constant position. */
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *r = g->node[i];
        for (size_t k = 0; k < r->n_attribute; k++)
            if (r->attribute[k]->g != NULL) refuse_reads_inside(ix, r->attribute[k]->g, 0);
        for (size_t k = 0; k < r->n_input; k++) {
            int32_t id = tgc_strmap_get(&ix->seq, str_or_empty(r->input[k]));
            if (id < 0 || ix->why[id] != NULL) continue;
            int64_t pos;
            int n, rank;
            if (!is_sequence_at(r) || k != 0)
                ix->why[id] = "its sequence is read by an op other than SequenceAt";
            else if (r->n_input != 2 || !int_constant(im, str_or_empty(r->input[1]), &pos, 1, &n, &rank))
                ix->why[id] = "a SequenceAt reads its sequence at a position that is not a constant";
        }
    }
    return true;
}

/* The plan for SplitToSequence node s, or false with the reason in *why. */
static bool make_plan(tgc_onnx_importer *im, const Onnx__NodeProto *s, seq_plan *p, const char **why) {
    tgc_onnx_seq_index *ix = *tgc_onnx_importer_seq_index(im);
    memset(p, 0, sizeof *p);
    p->split_node = s;
    const char *seq = s->n_output == 1 ? str_or_empty(s->output[0]) : "";
    if (s->n_input < 1 || str_or_empty(s->input[0])[0] == '\0' || seq[0] == '\0') {
        *why = "it needs one input and one output";
        return false;
    }
    if ((*why = readers_refuse(im, ix, seq)) != NULL) return false;
    p->axis = int_attr(s, "axis", 0);
    p->squeeze = false;
    int rank = -1;
    int64_t dims[TGC_MAX_TENSOR_RANK];
    int64_t dim = -1;
    if (static_shape(im, s->input[0], &rank, dims)) {
        if (p->axis < -rank || p->axis >= rank) {
            *why = "its axis is outside the input's rank";
            return false;
        }
        dim = dims[p->axis < 0 ? p->axis + rank : p->axis];
    }
    const char *split = s->n_input > 1 ? str_or_empty(s->input[1]) : "";
    if (split[0] == '\0') {
        p->squeeze = int_attr(s, "keepdims", 1) == 0;
        if (dim < 0) {
            *why = "the number of chunks is not known at import (the input's dim along axis is not static)";
            return false;
        }
        if (dim > TGC_MAX_VALUE_LEN) {
            *why = "it makes more than 64 chunks (tgc's Split gives at most 64 outputs)";
            return false;
        }
        p->count = dim;
        for (int64_t i = 0; i < dim; i++)
            p->lengths[i] = 1;
        return true;
    }
    int64_t v[TGC_MAX_VALUE_LEN];
    int n, vrank;
    if (!int_constant(im, split, v, TGC_MAX_VALUE_LEN, &n, &vrank) || vrank > 1) {
        *why = "its split is not a constant int32/int64 scalar or list of at most 64 lengths";
        return false;
    }
    if (vrank == 0) {
        if (v[0] <= 0) {
            *why = "its scalar split is not positive";
            return false;
        }
        if (dim < 0) {
            *why = "the number of chunks is not known at import (the input's dim along axis is not static)";
            return false;
        }
        int64_t count = dim / v[0] + (dim % v[0] != 0);
        if (count > TGC_MAX_VALUE_LEN) {
            *why = "it makes more than 64 chunks (tgc's Split gives at most 64 outputs)";
            return false;
        }
        p->count = count;
        for (int64_t i = 0; i < count; i++)
            p->lengths[i] = i + 1 < count ? v[0] : dim - v[0] * (count - 1);
        return true;
    }
    int64_t sum = 0;
    for (int i = 0; i < n; i++) {
        if (v[i] < 0 || v[i] > INT64_MAX - sum) {
            *why = "its split holds a negative length";
            return false;
        }
        sum += v[i];
        p->lengths[i] = v[i];
    }
    if (dim >= 0 && sum != dim) {
        *why = "its split lengths do not add up to the input's dim along axis";
        return false;
    }
    p->count = n;
    return true;
}

/* SplitToSequence -> Split(x, lengths). */
static bool convert_split(tgc_onnx_node_ctx *c) {
    seq_plan p;
    const char *why = NULL;
    tgc_onnx_arena *a = tgc_onnx_importer_arena(c->im);
    if (!make_plan(c->im, c->n, &p, &why) || p.count == 0) return true; /* a sequence it stays */
    (void)a;
    size_t i;
    if (tgc_onnx_node_attr(c->n, "axis", &i) != NULL) c->consumed[i] = true;
    if (tgc_onnx_node_attr(c->n, "keepdims", &i) != NULL) c->consumed[i] = true;
    c->out->op = "Split";
    c->out->n_inputs = 1;
    return tgc_onnx_set_input(c, 1, tgc_onnx_add_int64s(c, "/split", p.lengths, (size_t)p.count, false)) &&
           tgc_onnx_set_int_attr(c->im, c->out, "axis", p.axis);
}

/* SequenceAt -> Identity(seq:k) or Squeeze(seq:k, [axis]). */
static bool convert_at(tgc_onnx_node_ctx *c) {
    tgc_onnx_arena *a = tgc_onnx_importer_arena(c->im);
    const Onnx__NodeProto *s = c->n->n_input == 2 ? producer(c->im, str_or_empty(c->n->input[0])) : NULL;
    seq_plan p;
    const char *why;
    if (s == NULL || !is_onnx_domain(s->domain) || strcmp(str_or_empty(s->op_type), "SplitToSequence") != 0 ||
        !make_plan(c->im, s, &p, &why) || p.count == 0 || c->out->n_inputs != 2 || c->out->inputs[0][0] == '\0')
        return true; /* it reads a sequence that stays one */
    int64_t pos;
    int n, rank;
    if (!int_constant(c->im, c->n->input[1], &pos, 1, &n, &rank)) return true;
    if (pos < -p.count || pos >= p.count)
        return tgc_onnx_node_unsupported(
            c, "bad-model",
            tgc_onnx_printf(a,
                            "op 'SequenceAt': position %" PRId64 " is outside [%" PRId64 ", %" PRId64
                            "]: the sequence of SplitToSequence '%s' has %" PRId64 " tensors",
                            pos, -p.count, p.count - 1, str_or_empty(s->name)[0] ? s->name : s->output[0],
                            p.count));
    int64_t k = pos < 0 ? pos + p.count : pos;
    const char *seq = c->out->inputs[0]; /* the Split's name: its output 0 */
    const char *chunk = k == 0 ? seq : tgc_onnx_printf(a, "%s:%" PRId64, seq, k);
    if (chunk == NULL) return false;
    c->out->inputs[0] = chunk;
    c->out->n_inputs = 1;
    if (!p.squeeze) {
        c->out->op = "Identity";
        return true;
    }
    c->out->op = "Squeeze";
    return tgc_onnx_set_input(c, 1, tgc_onnx_add_int64s(c, "/axes", &p.axis, 1, false));
}

bool tgc_onnx_sequence_split_convert(tgc_onnx_node_ctx *c) {
    const char *op = str_or_empty(c->n->op_type);
    if ((strcmp(op, "SplitToSequence") == 0 || strcmp(op, "SequenceAt") == 0) && !build_index(c->im)) {
        tgc_onnx_importer_arena(c->im)->failed = true;
        return false;
    }
    if (strcmp(op, "SplitToSequence") == 0) return convert_split(c);
    if (strcmp(op, "SequenceAt") == 0) return convert_at(c);
    return true;
}
