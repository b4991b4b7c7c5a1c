/* Older opsets and inference-only rewrites, converted where the semantics
 * are the same as opset 13-17's (the ONNX changelog, docs/Changelog.md,
 * version by version):
 *
 *   Unsqueeze, Squeeze, ReduceSum < 13   attribute `axes` -> int64 input 1
 *   Split < 13                           attribute `split` -> int64 input 1
 *   Clip < 11                            attributes `min`, `max` -> float inputs 1, 2
 *   Reshape < 5                          attribute `shape` -> int64 input 1
 *   Slice < 10                           `starts`, `ends`, `axes` -> inputs 1, 2, 3
 *   Pad < 11                             `pads` (`paddings` in Pad-1) -> int64 input 1,
 *                                        `value` -> float input 2 (constant_value)
 *   Softmax, LogSoftmax, Hardmax < 13    coerced to 2-D at `axis` (default 1):
 *                                        Reshape(Softmax(Flatten(x, axis), 1), Shape(x))
 *   Concat < 4                           `axis` defaulted to 1
 *   Cast < 6                             `to` as a type name -> its code
 *   BatchNormalization < 9               `spatial` 1 (the only meaning now) dropped,
 *                                        `is_test` dropped (tgc runs inference)
 *   Gemm < 7                             `broadcast` dropped (C broadcasts since 7)
 *   Add ... Greater, And, Or, Xor < 7    `broadcast` without `axis` dropped: the
 *                                        legacy suffix match is numpy's rule; with
 *                                        `axis`, B reshaped with trailing ones so
 *                                        that numpy's rule matches it there
 *   PRelu < 7                            a constant slope of shape [C] (C > 1) is
 *                                        per channel (axis 1): reshaped to
 *                                        [C, 1, ..., 1] for X's rank at run time
 *   any op < 6                           `consumed_inputs` (a hint) dropped
 *   Dropout, any opset                   Identity, when the mask is unused and
 *                                        training_mode is absent or false; else
 *                                        Dropout-13 (< 12: `ratio` -> input 1)
 *   Sum, any opset                       a chain of Adds (the same broadcast, the
 *                                        same order of additions)
 *   Upsample 7, 9 and Resize 10          Resize with roi omitted, the scales as
 *                                        input 2, coordinate_transformation_mode
 *                                        asymmetric and nearest_mode floor: x = y /
 *                                        scale, nearest taking floor(x) (ONNX's
 *                                        reference Upsample repeats each element;
 *                                        onnxruntime's opset-10 nearest rounds up
 *                                        instead when downsampling, which the
 *                                        spec does not say)
 *   Scatter (9, deprecated in 11)        ScatterElements (the same op, renamed)
 *   TopK < 10                            attribute `k` -> int64 input 1 ([k])
 *   SplitToSequence + SequenceAt         Split (+ Squeeze), where the sequence is
 *                                        only read at constant positions
 *                                        (onnx_sequence_split.c)
 *
 * What differs and cannot be rewritten (a negative legacy broadcast `axis`,
 * BatchNormalization spatial 0, Dropout's mask before opset 10) is refused. */
#include "onnx/onnx_import.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Attribute `attr` (ints) becomes int64 initializer input `input`. */
static bool ints_to_input(tgc_onnx_node_ctx *c, const char *attr, int input) {
    const Onnx__AttributeProto *a = tgc_onnx_consume_attr(c, attr);
    if (a == NULL) return true;
    if (a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS)
        return tgc_onnx_node_unsupported(c, "bad-model", tgc_onnx_node_problem(c, "a list attribute is not of type ints"));
    char suffix[64];
    snprintf(suffix, sizeof suffix, "/%s", attr);
    return tgc_onnx_set_input(c, input, tgc_onnx_add_int64s(c, suffix, a->ints, a->n_ints, false));
}

/* Attribute `attr` (an int) becomes the int64 [1] initializer input `input`. */
static bool int_to_input(tgc_onnx_node_ctx *c, const char *attr, int input) {
    const Onnx__AttributeProto *a = tgc_onnx_consume_attr(c, attr);
    if (a == NULL) return true;
    if (a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT)
        return tgc_onnx_node_unsupported(c, "bad-model", tgc_onnx_node_problem(c, "an int attribute is not of type int"));
    char suffix[64];
    snprintf(suffix, sizeof suffix, "/%s", attr);
    return tgc_onnx_set_input(c, input, tgc_onnx_add_int64s(c, suffix, &a->i, 1, false));
}

static bool float_to_input(tgc_onnx_node_ctx *c, const char *attr, int input) {
    const Onnx__AttributeProto *a = tgc_onnx_consume_attr(c, attr);
    if (a == NULL) return true;
    char suffix[64];
    snprintf(suffix, sizeof suffix, "/%s", attr);
    return tgc_onnx_set_input(c, input, tgc_onnx_add_float(c, suffix, a->f));
}

/* Softmax before 13 flattens to 2-D at `axis` and normalises each row. */
static bool coerced_softmax(tgc_onnx_node_ctx *c) {
    const Onnx__AttributeProto *a = tgc_onnx_consume_attr(c, "axis");
    int64_t axis = a != NULL ? a->i : 1;
    tgc_onnx_node *out = c->out;
    if (out->n_inputs < 1 || out->inputs[0][0] == '\0') return true; /* the loader will say */
    const char *x = out->inputs[0];
    tgc_onnx_node *shape = tgc_onnx_add_node(c, "/shape", "Shape", &x, 1);
    tgc_onnx_node *flat = tgc_onnx_add_node(c, "/flat", "Flatten", &x, 1);
    if (shape == NULL || flat == NULL || !tgc_onnx_set_int_attr(c->im, flat, "axis", axis)) return false;
    tgc_onnx_node *rows = tgc_onnx_add_node(c, "/rows", out->op, &flat->name, 1);
    if (rows == NULL || !tgc_onnx_set_int_attr(c->im, rows, "axis", 1)) return false;
    const char **ins = tgc_onnx_alloc(tgc_onnx_importer_arena(c->im), 2 * sizeof *ins);
    if (ins == NULL) return false;
    ins[0] = rows->name;
    ins[1] = shape->name;
    out->op = "Reshape";
    out->inputs = ins;
    out->n_inputs = 2;
    return true;
}

static bool cast_to_code(tgc_onnx_node_ctx *c) {
    const Onnx__AttributeProto *a = tgc_onnx_node_attr(c->n, "to", NULL);
    if (a == NULL || !(a->has_s || (a->has_type && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING)))
        return true;
    tgc_onnx_consume_attr(c, "to");
    for (int64_t code = 1; code <= 16; code++) {
        char nb[32];
        const char *name = tgc_onnx_dtype_name(code, nb, sizeof nb);
        if (a->s.len == strlen(name) && memcmp(a->s.data, name, a->s.len) == 0)
            return tgc_onnx_set_int_attr(c->im, c->out, "to", code);
    }
    return tgc_onnx_node_unsupported(c, "bad-model", tgc_onnx_node_problem(c, "attribute 'to' names no ONNX type"));
}

/* Dropout in inference (training_mode absent or a constant false) with its
 * mask unused is Identity; otherwise it stays Dropout-13 (graph/ops_random.c),
 * an older form's `ratio` attribute becoming input 1. Before opset 10 the
 * mask had the data's type, not bool: such a mask, when read, is refused. */
static bool dropout_convert(tgc_onnx_node_ctx *c, int64_t opset) {
    bool mask_used = c->n->n_output > 1 && tgc_onnx_tensor_used(c->im, c->n->output[1]);
    bool training = false;
    if (c->n->n_input > 2 && c->n->input[2] != NULL && c->n->input[2][0] != '\0') {
        const tgc_npy *v = tgc_onnx_constant_value(c->im, c->n->input[2]);
        training = !(v != NULL && v->nbytes == 1 && *(const unsigned char *)v->data == 0);
    }
    if (!mask_used && !training) {
        tgc_onnx_consume_attr(c, "ratio");
        tgc_onnx_consume_attr(c, "is_test");
        tgc_onnx_consume_attr(c, "seed");
        c->out->op = "Identity";
        c->out->n_inputs = c->out->n_inputs > 1 ? 1 : c->out->n_inputs;
        return true;
    }
    if (opset < 10 && mask_used)
        return tgc_onnx_node_unsupported(c, "unsupported-output",
                                         tgc_onnx_node_problem(c, "the mask output, of the data's type before opset 10, is not "
                                                  "supported (from opset 10 it is bool)"));
    tgc_onnx_consume_attr(c, "is_test");
    return opset >= 12 || float_to_input(c, "ratio", 1);
}

/* Sum(x1, ..., xn) = ((x1 + x2) + x3) + ... */
static bool sum_to_adds(tgc_onnx_node_ctx *c) {
    tgc_onnx_node *out = c->out;
    if (out->n_inputs == 1) {
        out->op = "Identity";
        return true;
    }
    out->op = "Add";
    if (out->n_inputs <= 2) return true;
    const char *acc = out->inputs[0];
    for (int i = 1; i < out->n_inputs - 1; i++) {
        const char *pair[2] = {acc, out->inputs[i]};
        char suffix[32];
        snprintf(suffix, sizeof suffix, "/sum%d", i);
        tgc_onnx_node *add = tgc_onnx_add_node(c, suffix, "Add", pair, 2);
        if (add == NULL) return false;
        acc = add->name;
    }
    out->inputs[0] = acc;
    out->inputs[1] = out->inputs[out->n_inputs - 1];
    out->n_inputs = 2;
    return true;
}

/* Upsample-7 (scales attribute), Upsample-9 and Resize-10 (scales input
 * 1) -> Resize-13 with the opset-10 coordinate rules. */
static bool upsample_to_resize(tgc_onnx_node_ctx *c) {
    tgc_onnx_node *out = c->out;
    const Onnx__AttributeProto *a = tgc_onnx_consume_attr(c, "scales");
    const char *scales = out->n_inputs > 1 ? out->inputs[1] : NULL;
    if (a != NULL) {
        if (a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS)
            return tgc_onnx_node_unsupported(c, "bad-model", tgc_onnx_node_problem(c, "attribute 'scales' is not of type floats"));
        scales = tgc_onnx_add_floats(c, "/scales", a->floats, a->n_floats);
        if (scales == NULL) return false;
    }
    if (scales == NULL || scales[0] == '\0')
        return tgc_onnx_node_unsupported(c, "unsupported-attribute",
                                         tgc_onnx_node_problem(c, "Upsample without scales (height_scale, width_scale) is not supported"));
    if (!tgc_onnx_set_input(c, 2, scales)) return false;
    out->inputs[1] = "";
    out->n_inputs = 3;
    out->op = "Resize";
    return tgc_onnx_set_string_attr(c->im, out, "coordinate_transformation_mode", "asymmetric") &&
           tgc_onnx_set_string_attr(c->im, out, "nearest_mode", "floor");
}

/* PRelu-6 applies a slope of C values per channel (axis 1 of X); from 7 on
 * the slope broadcasts numpy-style, so a [C] slope becomes
 * Reshape(slope, Concat([C], Shape(X)[2:] * 0 + 1)): [C, 1, ..., 1] for
 * any rank of X (a rank-2 X gives [C], as before). */
static bool prelu_per_channel(tgc_onnx_node_ctx *c) {
    tgc_onnx_node *out = c->out;
    if (out->n_inputs != 2 || out->inputs[0][0] == '\0' || c->n->n_input < 2) return true; /* the loader will say */
    const tgc_npy *slope = tgc_onnx_constant_value(c->im, c->n->input[1]);
    if (slope == NULL || slope->rank != 1 || slope->dims[0] <= 1) return true; /* the same in both versions */
    const int64_t two = 2, end = INT64_MAX, zero = 0, one = 1, chans = slope->dims[0];
    const char *starts = tgc_onnx_add_int64s(c, "/starts", &two, 1, false);
    const char *ends = tgc_onnx_add_int64s(c, "/ends", &end, 1, false);
    const char *k0 = tgc_onnx_add_int64s(c, "/zero", &zero, 1, false);
    const char *k1 = tgc_onnx_add_int64s(c, "/one", &one, 1, false);
    const char *kc = tgc_onnx_add_int64s(c, "/channels", &chans, 1, false);
    if (starts == NULL || ends == NULL || k0 == NULL || k1 == NULL || kc == NULL) return false;
    tgc_onnx_node *shape = tgc_onnx_add_node(c, "/shape", "Shape", &out->inputs[0], 1);
    if (shape == NULL) return false;
    const char *slice_in[3] = {shape->name, starts, ends};
    tgc_onnx_node *tail = tgc_onnx_add_node(c, "/tail", "Slice", slice_in, 3);
    if (tail == NULL) return false;
    const char *mul_in[2] = {tail->name, k0};
    tgc_onnx_node *zeros = tgc_onnx_add_node(c, "/zeros", "Mul", mul_in, 2);
    if (zeros == NULL) return false;
    const char *add_in[2] = {zeros->name, k1};
    tgc_onnx_node *ones = tgc_onnx_add_node(c, "/ones", "Add", add_in, 2);
    if (ones == NULL) return false;
    const char *cat_in[2] = {kc, ones->name};
    tgc_onnx_node *dims = tgc_onnx_add_node(c, "/slope_shape", "Concat", cat_in, 2);
    if (dims == NULL || !tgc_onnx_set_int_attr(c->im, dims, "axis", 0)) return false;
    const char *reshape_in[2] = {out->inputs[1], dims->name};
    tgc_onnx_node *s2 = tgc_onnx_add_node(c, "/slope", "Reshape", reshape_in, 2);
    return s2 != NULL && tgc_onnx_set_input(c, 1, s2->name);
}

/* Add ... Greater before opset 7 with broadcast 1 and an `axis`: B's dims
 * line up with A's from `axis` on (B [3] against A [2, 3, 4] at axis 1 is
 * [3, 1]). Rewritten to numpy broadcasting by giving B trailing ones:
 * Reshape(B, Concat(Shape(B), Expand([1], [rank(A) - axis - rank(B)]))),
 * computed at run time (host-memory shape arithmetic). */
static bool broadcast_at_axis(tgc_onnx_node_ctx *c, int64_t axis) {
    tgc_onnx_node *out = c->out;
    if (out->n_inputs != 2 || out->inputs[0][0] == '\0' || out->inputs[1][0] == '\0') return true; /* the loader will say */
    if (axis < 0) return tgc_onnx_node_unsupported(c, "unsupported-attribute", tgc_onnx_node_problem(c, "negative legacy 'axis'"));
    const int64_t one = 1;
    const char *k_axis = tgc_onnx_add_int64s(c, "/axis", &axis, 1, false);
    const char *k_one = tgc_onnx_add_int64s(c, "/one", &one, 1, false);
    if (k_axis == NULL || k_one == NULL) return false;
    tgc_onnx_node *sa = tgc_onnx_add_node(c, "/shape_a", "Shape", &out->inputs[0], 1);
    tgc_onnx_node *sb = tgc_onnx_add_node(c, "/shape_b", "Shape", &out->inputs[1], 1);
    if (sa == NULL || sb == NULL) return false;
    tgc_onnx_node *ra = tgc_onnx_add_node(c, "/rank_a", "Shape", (const char *[]){sa->name}, 1);
    tgc_onnx_node *rb = tgc_onnx_add_node(c, "/rank_b", "Shape", (const char *[]){sb->name}, 1);
    if (ra == NULL || rb == NULL) return false;
    tgc_onnx_node *after = tgc_onnx_add_node(c, "/after_axis", "Sub", (const char *[]){ra->name, k_axis}, 2);
    if (after == NULL) return false;
    tgc_onnx_node *k = tgc_onnx_add_node(c, "/trailing", "Sub", (const char *[]){after->name, rb->name}, 2);
    if (k == NULL) return false;
    tgc_onnx_node *ones = tgc_onnx_add_node(c, "/ones", "Expand", (const char *[]){k_one, k->name}, 2);
    if (ones == NULL) return false;
    tgc_onnx_node *dims = tgc_onnx_add_node(c, "/b_shape", "Concat", (const char *[]){sb->name, ones->name}, 2);
    if (dims == NULL || !tgc_onnx_set_int_attr(c->im, dims, "axis", 0)) return false;
    tgc_onnx_node *b = tgc_onnx_add_node(c, "/b", "Reshape", (const char *[]){out->inputs[1], dims->name}, 2);
    return b != NULL && tgc_onnx_set_input(c, 1, b->name);
}

static bool is_op(const char *op, const char *const *list) {
    for (; *list; list++)
        if (strcmp(op, *list) == 0) return true;
    return false;
}

bool tgc_onnx_legacy_convert(tgc_onnx_node_ctx *c, int64_t opset) {
    const char *op = c->n->op_type;
    bool handled;
    bool ok = tgc_onnx_opset_upgrade(c, opset, &handled); /* opsets 13-18's forms */
    if (!ok || handled) return ok;
    tgc_onnx_consume_attr(c, "consumed_inputs");
    if (strcmp(op, "Dropout") == 0) return dropout_convert(c, opset);
    if (strcmp(op, "Sum") == 0) return sum_to_adds(c);
    if (strcmp(op, "Upsample") == 0 || (strcmp(op, "Resize") == 0 && opset < 11)) return upsample_to_resize(c);
    if (strcmp(op, "SplitToSequence") == 0 || strcmp(op, "SequenceAt") == 0) return tgc_onnx_sequence_split_convert(c);
    if (strcmp(op, "Scatter") == 0) {
        c->out->op = "ScatterElements";
        return true;
    }
    if (opset >= TGC_ONNX_OPSET_MIN) return true;

    static const char *const axes_ops[] = {"Unsqueeze", "Squeeze", "ReduceSum", NULL};
    static const char *const binary_ops[] = {"Add",  "Sub", "Mul", "Div", "Pow", "Equal", "Less",
                                             "Greater", "And", "Or", "Xor", NULL};
    if (is_op(op, axes_ops)) return ints_to_input(c, "axes", 1);
    if (strcmp(op, "Split") == 0) return ints_to_input(c, "split", 1);
    if (strcmp(op, "TopK") == 0 && opset < 10) return int_to_input(c, "k", 1);
    if (strcmp(op, "Reshape") == 0 && opset < 5) return ints_to_input(c, "shape", 1);
    if (strcmp(op, "Slice") == 0 && opset < 10)
        return ints_to_input(c, "starts", 1) && ints_to_input(c, "ends", 2) && ints_to_input(c, "axes", 3);
    if (strcmp(op, "Clip") == 0 && opset < 11) return float_to_input(c, "min", 1) && float_to_input(c, "max", 2);
    if (strcmp(op, "Pad") == 0 && opset < 11)
        return ints_to_input(c, "pads", 1) && ints_to_input(c, "paddings", 1) && float_to_input(c, "value", 2);
    if (strcmp(op, "Softmax") == 0 || strcmp(op, "LogSoftmax") == 0 || strcmp(op, "Hardmax") == 0)
        return coerced_softmax(c);
    if (strcmp(op, "Concat") == 0 && opset < 4 && tgc_onnx_node_attr(c->n, "axis", NULL) == NULL)
        return tgc_onnx_set_int_attr(c->im, c->out, "axis", 1);
    if (strcmp(op, "Cast") == 0 && opset < 6) return cast_to_code(c);
    if (strcmp(op, "PRelu") == 0 && opset < 7) return prelu_per_channel(c);
    if (strcmp(op, "BatchNormalization") == 0) {
        tgc_onnx_consume_attr(c, "is_test");
        const Onnx__AttributeProto *a = tgc_onnx_consume_attr(c, "spatial");
        if (a != NULL && a->i != 1)
            return tgc_onnx_node_unsupported(
                c, "unsupported-attribute",
                tgc_onnx_node_problem(c, "attribute 'spatial' 0 (a mean and variance per activation, not per channel) is not "
                         "supported"));
        return true;
    }
    if (strcmp(op, "Gemm") == 0) {
        tgc_onnx_consume_attr(c, "broadcast");
        return true;
    }
    if (is_op(op, binary_ops) && opset < 7) {
        const Onnx__AttributeProto *b = tgc_onnx_consume_attr(c, "broadcast");
        const Onnx__AttributeProto *axis = tgc_onnx_consume_attr(c, "axis");
        return axis == NULL || b == NULL || b->i == 0 || broadcast_at_axis(c, axis->i);
    }
    return true;
}
