/* The opset range the importer reads, opset 18's forms and new ops that map
 * onto tgc's, and the older forms that onnx_legacy.c (opsets before 13's
 * attributes-to-inputs table) does not cover. From ONNX's changelog
 * (docs/Changelog.md) and the per-opset schema lists
 * (onnx/defs/operator_sets.h), version by version:
 *
 *   Tile < 6                    Tile-1 repeats along one axis (inputs tiles,
 *                               axis): refused, the message says so
 *   BatchNormalization < 14     its optional outputs 1 to 4 are training
 *                               statistics (no attribute says so): refused
 *                               when read, dropped otherwise
 *   RoiAlign < 16               RoiAlign-10 maps sampling points with the
 *                               output_half_pixel rule; opset 16's default
 *                               is half_pixel: the mode is set explicitly
 *   Split 18, num_outputs N     the axis splits into N chunks of
 *                               ceil(d / N), the last one smaller:
 *                               Split-13's `split` input computed from
 *                               Shape(x) at run time (host-memory shape
 *                               arithmetic: chunk = (d + N - 1) / N,
 *                               sizes = [chunk] * (N - 1) ++ [d - chunk * (N - 1)])
 *   GroupNormalization 18       scale and bias per group (opset 18's form):
 *                               Reshape(InstanceNormalization(
 *                               Reshape(x, [0, G, -1]), scale, bias), Shape(x))
 *                               normalizes each (n, g) over its channels and
 *                               positions, as the op does
 *   CenterCropPad 18            Slice then Pad (zeros) by sizes computed
 *                               from Shape(x) at run time (center_crop_pad)
 *   Col2Im 18                   a ConvTranspose with one-hot filters on
 *                               the blocks reshaped (col2im)
 *
 * What opset 18 changed that tgc takes as written: the Reduce ops' `axes`
 * as input 1 with noop_with_empty_axes, Pad's `axes` input, Resize's
 * antialias, axes and keep_aspect_ratio_policy, ScatterElements' and
 * ScatterND's reductions max and min, LpPool's ceil_mode, Mish, and
 * OptionalHasElement/OptionalGetElement taking a plain tensor; BitwiseAnd,
 * BitwiseOr, BitwiseXor and BitwiseNot (new in 18) are tgc's ops
 * (graph/ops_bitwise.c). */
#include "onnx/onnx_import.h"

#include "support/checked.h"
#include "support/diag.h"

#include <inttypes.h>
#include <string.h>

static const tgc_srcpos no_pos = {0, 0};

bool tgc_onnx_opset_supported(tgc_diags *diags, const char *path, bool found, int64_t opset) {
    if (!found) return true; /* only other domains' ops (refused node by node) */
    if (opset < 1) {
        tgc_diag_error(diags, path, no_pos, "bad-model",
                       "the model imports ONNX opset %" PRId64 "; ONNX's opsets start at 1", opset);
        return false;
    }
    if (opset > TGC_ONNX_OPSET_MAX) {
        tgc_diag_error(diags, path, no_pos, "unsupported-opset",
                       "opset %" PRId64 " is newer than tgc reads (%d to %d; opsets 1 to 6 with a warning); "
                       "export the model with opset_version=%d, or convert it down with "
                       "onnx.version_converter.convert_version(model, %d)",
                       opset, TGC_ONNX_OPSET_OLDEST, TGC_ONNX_OPSET_MAX, TGC_ONNX_OPSET_MAX, TGC_ONNX_OPSET_MAX);
        return false;
    }
    if (opset < TGC_ONNX_OPSET_OLDEST)
        tgc_diag_add(diags, TGC_SEV_WARNING, path, no_pos, "old-opset",
                     "opset %" PRId64 " is older than %d, the oldest tgc is tested at: its ops are converted where "
                     "ONNX's changelog gives a later op the same meaning (docs/onnx-opsets.md), and a model that "
                     "relies on anything else may be refused",
                     opset, TGC_ONNX_OPSET_OLDEST);
    return true;
}

bool tgc_onnx_opset_rewritten_op(const char *op) {
    return strcmp(op, "GroupNormalization") == 0 || strcmp(op, "CenterCropPad") == 0 || strcmp(op, "Col2Im") == 0;
}

/* A float attribute on a node the conversion made (its attrs empty so far). */
static bool set_float_attr(tgc_onnx_importer *im, tgc_onnx_node *node, const char *name, double v) {
    tgc_onnx_attr *a = tgc_onnx_alloc(tgc_onnx_importer_arena(im), sizeof *a);
    if (a == NULL || node->n_attrs != 0) return false;
    a->name = name;
    a->type = TGC_ATTR_FLOAT;
    a->f = v;
    node->attrs = a;
    node->n_attrs = node->cap_attrs = 1;
    return true;
}

/* Split-18's num_outputs: the `split` input computed from x's shape. */
static bool split_num_outputs(tgc_onnx_node_ctx *c) {
    const Onnx__AttributeProto *a = tgc_onnx_consume_attr(c, "num_outputs");
    if (a == NULL) return true;
    tgc_onnx_node *out = c->out;
    if (out->n_inputs > 1 && out->inputs[1][0] != '\0')
        return tgc_onnx_node_unsupported(c, "bad-model", tgc_onnx_node_problem(c, "both input 'split' and num_outputs"));
    if (a->i < 1 || (size_t)a->i != c->n->n_output)
        return tgc_onnx_node_unsupported(c, "bad-model",
                                         tgc_onnx_node_problem(c, "num_outputs differs from the number of outputs"));
    if (out->n_inputs < 1 || out->inputs[0][0] == '\0') return true; /* the loader will say */
    int64_t n = a->i;
    if (n == 1) return true; /* one chunk: the whole axis, as Split without sizes */
    const Onnx__AttributeProto *ax = tgc_onnx_node_attr(c->n, "axis", NULL);
    const int64_t axis = ax != NULL ? ax->i : 0, rest = n - 1;
    int64_t ones[TGC_MAX_VALUE_LEN];
    if (n > TGC_MAX_VALUE_LEN)
        return tgc_onnx_node_unsupported(c, "unsupported-attribute",
                                         tgc_onnx_node_problem(c, "num_outputs past tgc's limit on outputs"));
    for (int64_t i = 0; i < rest; i++)
        ones[i] = 1;
    const char *k_axis = tgc_onnx_add_int64s(c, "/axis", &axis, 1, false);
    const char *k_n = tgc_onnx_add_int64s(c, "/num_outputs", &n, 1, false);
    const char *k_rest = tgc_onnx_add_int64s(c, "/num_outputs_less_one", &rest, 1, false);
    const char *k_ones = tgc_onnx_add_int64s(c, "/ones", ones, (size_t)rest, false);
    if (k_axis == NULL || k_n == NULL || k_rest == NULL || k_ones == NULL) return false;
    tgc_onnx_node *shape = tgc_onnx_add_node(c, "/shape", "Shape", &out->inputs[0], 1);
    if (shape == NULL) return false;
    tgc_onnx_node *d = tgc_onnx_add_node(c, "/axis_size", "Gather", (const char *[]){shape->name, k_axis}, 2);
    if (d == NULL) return false;
    tgc_onnx_node *up = tgc_onnx_add_node(c, "/round_up", "Add", (const char *[]){d->name, k_rest}, 2);
    if (up == NULL) return false;
    tgc_onnx_node *chunk = tgc_onnx_add_node(c, "/chunk", "Div", (const char *[]){up->name, k_n}, 2);
    if (chunk == NULL) return false;
    tgc_onnx_node *firsts = tgc_onnx_add_node(c, "/chunks", "Mul", (const char *[]){chunk->name, k_ones}, 2);
    if (firsts == NULL) return false;
    tgc_onnx_node *used = tgc_onnx_add_node(c, "/before_last", "Mul", (const char *[]){chunk->name, k_rest}, 2);
    if (used == NULL) return false;
    tgc_onnx_node *last = tgc_onnx_add_node(c, "/last", "Sub", (const char *[]){d->name, used->name}, 2);
    if (last == NULL) return false;
    tgc_onnx_node *sizes = tgc_onnx_add_node(c, "/split", "Concat", (const char *[]){firsts->name, last->name}, 2);
    if (sizes == NULL || !tgc_onnx_set_int_attr(c->im, sizes, "axis", 0)) return false;
    return tgc_onnx_set_input(c, 1, sizes->name);
}

/* GroupNormalization-18 (scale and bias of G values) as InstanceNormalization
 * over x seen as [N, G, rest]. */
static bool group_norm(tgc_onnx_node_ctx *c) {
    tgc_onnx_node *out = c->out;
    const Onnx__AttributeProto *g = tgc_onnx_consume_attr(c, "num_groups");
    const Onnx__AttributeProto *eps = tgc_onnx_consume_attr(c, "epsilon");
    if (g == NULL || g->i < 1)
        return tgc_onnx_node_unsupported(c, "bad-model", tgc_onnx_node_problem(c, "num_groups missing or below 1"));
    if (out->n_inputs != 3 || out->inputs[0][0] == '\0' || out->inputs[1][0] == '\0' || out->inputs[2][0] == '\0')
        return tgc_onnx_node_unsupported(c, "bad-model", tgc_onnx_node_problem(c, "it takes three inputs: X, scale, bias"));
    const int64_t grouped[3] = {0, g->i, -1};
    const char *k_grouped = tgc_onnx_add_int64s(c, "/grouped_shape", grouped, 3, false);
    if (k_grouped == NULL) return false;
    tgc_onnx_node *shape = tgc_onnx_add_node(c, "/shape", "Shape", &out->inputs[0], 1);
    if (shape == NULL) return false;
    tgc_onnx_node *x3 = tgc_onnx_add_node(c, "/grouped", "Reshape", (const char *[]){out->inputs[0], k_grouped}, 2);
    if (x3 == NULL) return false;
    tgc_onnx_node *norm = tgc_onnx_add_node(c, "/normalized", "InstanceNormalization",
                                            (const char *[]){x3->name, out->inputs[1], out->inputs[2]}, 3);
    if (norm == NULL || !set_float_attr(c->im, norm, "epsilon", eps != NULL ? eps->f : 1e-5f)) return false;
    out->op = "Reshape";
    out->inputs[0] = norm->name;
    out->inputs[1] = shape->name;
    out->n_inputs = 2;
    return true;
}

/* CenterCropPad-18: each axis (`axes`, default all) cropped or padded with
 * zeros to its size in `shape`, centered (ONNX's reference puts the odd
 * element at the end: a crop starts at floor((d - s) / 2), a pad puts
 * floor((s - d) / 2) before). With d the axes' sizes, e = d - shape,
 * c = max(e, 0), p = c - e (= max(-e, 0)):
 *     y = Pad(Slice(x, c / 2, c / 2 + (d - c), axes), [p / 2, p - p / 2], 0, axes)
 * computed at run time (host-memory shape arithmetic). */
static bool center_crop_pad(tgc_onnx_node_ctx *c) {
    tgc_onnx_node *out = c->out;
    if (out->n_inputs != 2 || out->inputs[0][0] == '\0' || out->inputs[1][0] == '\0')
        return tgc_onnx_node_unsupported(c, "bad-model", tgc_onnx_node_problem(c, "it takes two inputs: input_data, shape"));
    const Onnx__AttributeProto *ax = tgc_onnx_consume_attr(c, "axes");
    const int64_t zero = 0, two = 2;
    const char *k_zero = tgc_onnx_add_int64s(c, "/zero", &zero, 1, true);
    const char *k_two = tgc_onnx_add_int64s(c, "/two", &two, 1, true);
    const char *k_axes = ax != NULL ? tgc_onnx_add_int64s(c, "/axes", ax->ints, ax->n_ints, false) : "";
    if (k_zero == NULL || k_two == NULL || k_axes == NULL) return false;
    const char *x = out->inputs[0], *want = out->inputs[1];
    tgc_onnx_node *shape = tgc_onnx_add_node(c, "/shape", "Shape", &x, 1);
    if (shape == NULL) return false;
    const char *dims = shape->name;
    if (ax != NULL) {
        tgc_onnx_node *g = tgc_onnx_add_node(c, "/sizes", "Gather", (const char *[]){shape->name, k_axes}, 2);
        if (g == NULL) return false;
        dims = g->name;
    }
    tgc_onnx_node *e = tgc_onnx_add_node(c, "/excess", "Sub", (const char *[]){dims, want}, 2);
    if (e == NULL) return false;
    tgc_onnx_node *cut = tgc_onnx_add_node(c, "/cut", "Max", (const char *[]){e->name, k_zero}, 2);
    if (cut == NULL) return false;
    tgc_onnx_node *start = tgc_onnx_add_node(c, "/crop_start", "Div", (const char *[]){cut->name, k_two}, 2);
    if (start == NULL) return false;
    tgc_onnx_node *kept = tgc_onnx_add_node(c, "/kept", "Sub", (const char *[]){dims, cut->name}, 2);
    if (kept == NULL) return false;
    tgc_onnx_node *end = tgc_onnx_add_node(c, "/crop_end", "Add", (const char *[]){start->name, kept->name}, 2);
    if (end == NULL) return false;
    tgc_onnx_node *crop = tgc_onnx_add_node(c, "/cropped", "Slice",
                                            (const char *[]){x, start->name, end->name, k_axes}, ax != NULL ? 4 : 3);
    if (crop == NULL) return false;
    tgc_onnx_node *pad = tgc_onnx_add_node(c, "/pad", "Sub", (const char *[]){cut->name, e->name}, 2);
    if (pad == NULL) return false;
    tgc_onnx_node *before = tgc_onnx_add_node(c, "/pad_before", "Div", (const char *[]){pad->name, k_two}, 2);
    if (before == NULL) return false;
    tgc_onnx_node *after = tgc_onnx_add_node(c, "/pad_after", "Sub", (const char *[]){pad->name, before->name}, 2);
    if (after == NULL) return false;
    tgc_onnx_node *pads = tgc_onnx_add_node(c, "/pads", "Concat", (const char *[]){before->name, after->name}, 2);
    if (pads == NULL || !tgc_onnx_set_int_attr(c->im, pads, "axis", 0)) return false;
    out->op = "Pad";
    out->inputs[0] = crop->name;
    out->inputs[1] = pads->name;
    return ax == NULL || (tgc_onnx_set_input(c, 2, "") && tgc_onnx_set_input(c, 3, k_axes));
}

/* An INTS attribute on a node the conversion made (values copied to the arena). */
static bool add_ints_attr(tgc_onnx_importer *im, tgc_onnx_node *node, const char *name, const int64_t *v, int n) {
    tgc_onnx_arena *a = tgc_onnx_importer_arena(im);
    tgc_onnx_attr *attrs = tgc_onnx_alloc(a, (size_t)(node->n_attrs + 1) * sizeof *attrs);
    int64_t *copy = tgc_onnx_alloc(a, (size_t)(n + 1) * sizeof *copy);
    if (attrs == NULL || copy == NULL) return false;
    if (node->n_attrs > 0) memcpy(attrs, node->attrs, (size_t)node->n_attrs * sizeof *attrs);
    memcpy(copy, v, (size_t)n * sizeof *copy);
    attrs[node->n_attrs] = (tgc_onnx_attr){.name = name, .type = TGC_ATTR_INTS, .ints = copy, .n = (size_t)n};
    node->attrs = attrs;
    node->n_attrs++;
    node->cap_attrs = node->n_attrs;
    return true;
}

/* The int64 1-D constant behind input `k` of the node (n values into v,
 * at most max), or false. */
static bool const_ints(tgc_onnx_node_ctx *c, int k, int64_t *v, int *n, int max) {
    if ((size_t)k >= c->n->n_input) return false;
    const tgc_npy *t = tgc_onnx_constant_value(c->im, c->n->input[k]);
    if (t == NULL || t->dtype != TGC_INT64 || t->rank != 1 || t->dims[0] < 1 || t->dims[0] > max) return false;
    *n = (int)t->dims[0];
    memcpy(v, t->data, (size_t)*n * sizeof *v);
    return true;
}

/* An INTS attribute of the ONNX node with n values each >= min (dflt when
 * absent); false (reported) when it has another length or a value below min. */
static bool ints_attr(tgc_onnx_node_ctx *c, const char *name, int n, int64_t min, int64_t dflt, int64_t *out) {
    const Onnx__AttributeProto *a = tgc_onnx_consume_attr(c, name);
    for (int i = 0; i < n; i++)
        out[i] = dflt;
    if (a == NULL) return true;
    bool ok = a->n_ints == (size_t)n;
    for (size_t i = 0; ok && i < a->n_ints; i++) {
        ok = a->ints[i] >= min && a->ints[i] <= INT32_MAX;
        out[i] = a->ints[i];
    }
    if (!ok)
        tgc_onnx_node_unsupported(c, "bad-model",
                                  tgc_onnx_node_problem(c, tgc_onnx_printf(tgc_onnx_importer_arena(c->im),
                                                           "attribute '%s' needs %d values, each >= %lld", name, n,
                                                           (long long)min)));
    return ok;
}

/* Col2Im-18 (the adjoint of im2col: input [N, C * prod(block), L] of
 * blocks, each added back at its place in an image [N, C, image_shape...];
 * PyTorch's fold) as a transposed convolution with one-hot filters:
 *     x [N, C * K, L] -> [N, C * K, o...] -> [N, C, K, o...] -> [N * C, K, o...]
 *     ConvTranspose with W [K, 1, block...], W[k] one at block position k,
 *     dilations, strides and pads as given, output_padding r
 *     -> [N * C, 1, image...] -> [N, C, image...]
 * where o_i = (image_i + pads - (d_i (k_i - 1) + 1)) / s_i + 1 blocks fit
 * along axis i and r_i the remainder of that division (the image's last
 * positions no block covers). image_shape and block_shape must be
 * constants. The reshapes check L = prod(o) and that C * K splits. A NaN
 * or infinity in a block spreads to its neighbours (0 * inf in the
 * convolution's sums); finite values are exact sums of the blocks. */
static bool col2im(tgc_onnx_node_ctx *c) {
    tgc_onnx_node *out = c->out;
    tgc_onnx_arena *arena = tgc_onnx_importer_arena(c->im);
    enum { MAX_AXES = TGC_MAX_TENSOR_RANK - 2 };
    if (out->n_inputs != 3 || out->inputs[0][0] == '\0' || out->inputs[1][0] == '\0' || out->inputs[2][0] == '\0')
        return tgc_onnx_node_unsupported(c, "bad-model", tgc_onnx_node_problem(c, "it takes three inputs: input, image_shape, "
                                                                  "block_shape"));
    int64_t image[MAX_AXES], block[MAX_AXES];
    int n = 0, nb = 0;
    if (!const_ints(c, 1, image, &n, MAX_AXES) || !const_ints(c, 2, block, &nb, MAX_AXES) || n != nb)
        return tgc_onnx_node_unsupported(
            c, "unsupported-input",
            tgc_onnx_node_problem(c, "image_shape and block_shape must be constant int64 lists of the same length (1 to 6)"));
    int64_t dil[MAX_AXES], str[MAX_AXES], pads[2 * MAX_AXES];
    if (!ints_attr(c, "dilations", n, 1, 1, dil) || !ints_attr(c, "strides", n, 1, 1, str) ||
        !ints_attr(c, "pads", 2 * n, 0, 0, pads))
        return false;
    int64_t K = 1, blocks[MAX_AXES], rest[MAX_AXES];
    for (int i = 0; i < n; i++) {
        int64_t eff, span;
        if (image[i] < 1 || block[i] < 1 || !tgc_checked_mul_i64(dil[i], block[i] - 1, &eff) ||
            !tgc_checked_add_i64(eff, 1, &eff) || !tgc_checked_add_i64(image[i], pads[i], &span) ||
            !tgc_checked_add_i64(span, pads[n + i], &span) || !tgc_checked_mul_i64(K, block[i], &K) || K > 1024)
            return tgc_onnx_node_unsupported(
                c, "bad-model", tgc_onnx_node_problem(c, "image_shape and block_shape need sizes >= 1, and at most 1024 block "
                                         "positions"));
        if (span < eff)
            return tgc_onnx_node_unsupported(c, "bad-model",
                                             tgc_onnx_node_problem(c, "a block is larger than the padded image"));
        blocks[i] = (span - eff) / str[i] + 1;
        rest[i] = (span - eff) % str[i];
    }
    /* The one-hot filters: K x K values (at most 1 Mi floats). */
    float *w = tgc_onnx_alloc(arena, (size_t)(K * K) * sizeof *w);
    if (w == NULL) return false;
    for (int64_t k = 0; k < K; k++)
        w[k * K + k] = 1.0f;
    const char *k_w = tgc_onnx_add_floats(c, "/one_hot", w, (size_t)(K * K));
    int64_t s_keep[2 + MAX_AXES] = {0, 0}, s_split[3 + MAX_AXES] = {0, -1, K}, s_fold[2 + MAX_AXES] = {-1, K},
            s_tail[1 + MAX_AXES] = {-1};
    for (int i = 0; i < n; i++) {
        s_keep[2 + i] = s_split[3 + i] = s_fold[2 + i] = blocks[i];
        s_tail[1 + i] = image[i];
    }
    const int64_t zero = 0, one = 1;
    const char *k_keep = tgc_onnx_add_int64s(c, "/blocks_shape", s_keep, (size_t)(2 + n), false);
    const char *k_split = tgc_onnx_add_int64s(c, "/channels_shape", s_split, (size_t)(3 + n), false);
    const char *k_fold = tgc_onnx_add_int64s(c, "/planes_shape", s_fold, (size_t)(2 + n), false);
    const char *k_tail = tgc_onnx_add_int64s(c, "/image_shape", s_tail, (size_t)(1 + n), false);
    const char *k_zero = tgc_onnx_add_int64s(c, "/zero", &zero, 1, false);
    const char *k_one = tgc_onnx_add_int64s(c, "/one", &one, 1, false);
    if (k_w == NULL || k_keep == NULL || k_split == NULL || k_fold == NULL || k_tail == NULL || k_zero == NULL ||
        k_one == NULL)
        return false;
    /* The filters' shape [K, 1, block...]: the initializer is made 1-D, so reshaped. */
    int64_t s_w[2 + MAX_AXES] = {K, 1};
    for (int i = 0; i < n; i++)
        s_w[2 + i] = block[i];
    const char *k_wshape = tgc_onnx_add_int64s(c, "/one_hot_shape", s_w, (size_t)(2 + n), false);
    if (k_wshape == NULL) return false;
    const char *x = out->inputs[0];
    tgc_onnx_node *r0 = tgc_onnx_add_node(c, "/blocks", "Reshape", (const char *[]){x, k_keep}, 2);
    if (r0 == NULL) return false;
    tgc_onnx_node *r1 = tgc_onnx_add_node(c, "/channels", "Reshape", (const char *[]){r0->name, k_split}, 2);
    if (r1 == NULL) return false;
    tgc_onnx_node *r2 = tgc_onnx_add_node(c, "/planes", "Reshape", (const char *[]){r1->name, k_fold}, 2);
    if (r2 == NULL) return false;
    tgc_onnx_node *wr = tgc_onnx_add_node(c, "/filters_f32", "Reshape", (const char *[]){k_w, k_wshape}, 2);
    if (wr == NULL) return false;
    tgc_onnx_node *wc = tgc_onnx_add_node(c, "/filters", "CastLike", (const char *[]){wr->name, x}, 2);
    if (wc == NULL) return false;
    tgc_onnx_node *ct = tgc_onnx_add_node(c, "/added", "ConvTranspose", (const char *[]){r2->name, wc->name}, 2);
    if (ct == NULL || !add_ints_attr(c->im, ct, "dilations", dil, n) || !add_ints_attr(c->im, ct, "strides", str, n) ||
        !add_ints_attr(c->im, ct, "pads", pads, 2 * n) || !add_ints_attr(c->im, ct, "output_padding", rest, n))
        return false;
    tgc_onnx_node *shape = tgc_onnx_add_node(c, "/shape", "Shape", &x, 1);
    if (shape == NULL) return false;
    tgc_onnx_node *batch = tgc_onnx_add_node(c, "/batch", "Slice", (const char *[]){shape->name, k_zero, k_one}, 3);
    if (batch == NULL) return false;
    tgc_onnx_node *dims = tgc_onnx_add_node(c, "/out_shape", "Concat", (const char *[]){batch->name, k_tail}, 2);
    if (dims == NULL || !tgc_onnx_set_int_attr(c->im, dims, "axis", 0)) return false;
    out->op = "Reshape";
    out->inputs[0] = ct->name;
    out->inputs[1] = dims->name;
    out->n_inputs = 2;
    return true;
}

bool tgc_onnx_opset_upgrade(tgc_onnx_node_ctx *c, int64_t opset, bool *handled) {
    const char *op = c->n->op_type;
    *handled = true;
    if (strcmp(op, "RoiAlign") == 0 && opset < 16) {
        if (tgc_onnx_node_attr(c->n, "coordinate_transformation_mode", NULL) != NULL) return true;
        return tgc_onnx_set_string_attr(c->im, c->out, "coordinate_transformation_mode", "output_half_pixel");
    }
    if (strcmp(op, "Tile") == 0 && opset < 6)
        return tgc_onnx_node_unsupported(c, "unsupported-input",
                                         tgc_onnx_node_problem(c, "Tile-1's inputs 'tiles' and 'axis' (before opset 6's "
                                                  "'repeats') are not supported"));
    if (strcmp(op, "BatchNormalization") == 0 && opset < 14)
        for (size_t k = 1; k < c->n->n_output; k++)
            if (tgc_onnx_tensor_used(c->im, c->n->output[k]))
                return tgc_onnx_node_unsupported(
                    c, "unsupported-output",
                    tgc_onnx_node_problem(c, "outputs 1 to 4 (the statistics of training, before opset 14's training_mode) are "
                             "not supported"));
    if (strcmp(op, "Split") == 0 && opset >= 18) return split_num_outputs(c);
    if (strcmp(op, "GroupNormalization") == 0) return group_norm(c);
    if (strcmp(op, "CenterCropPad") == 0) return center_crop_pad(c);
    if (strcmp(op, "Col2Im") == 0) return col2im(c);
    *handled = false;
    return true;
}
