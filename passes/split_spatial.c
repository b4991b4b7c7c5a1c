/* split-spatial: a convolution whose step holds more activation bytes than
 * a device has room for (its input and its output at once: an image
 * network's stem at a high resolution) is cut along its output rows into
 * bands, each band a Conv over the input rows it reads (a Slice, its halo
 * included), joined by a Concat along the rows; the unary activations and
 * the pool that follow it are cut with it, so that the wide map between
 * them is never whole. Spatial partitioning with halos, as Mesh-TensorFlow
 * lays out an image's rows over processors (Shazeer et al., 2018) and as
 * GPipe's and MegEngine's memory schedulers cut an activation, done here
 * as a graph rewrite so that automatic placement can put the bands on
 * different devices. Not one of tgc_graph_optimize's passes: the compile
 * driver runs it when no placement fits (partition/compile_auto.c).
 *
 * What is cut: Conv over a 4-D NCHW input of known shape, constant 4-D W,
 * pads explicit (auto_pad NOTSET or VALID); then, each the only reader of
 * the one before, unary activations and windows (Conv as the first, any
 * group; MaxPool with one output; AveragePool, ceil_mode 0), at most
 * MAX_CHAIN nodes, up to the last window whose step is too large, or on
 * to the first node whose output, joined again, would not be (the bands'
 * outputs and their Concat: twice its bytes), and the activations after
 * it: a
 * MobileNetV2 block's expanding 1x1 Conv and its depthwise Conv go in
 * bands together, so that the wide map between them is never whole. Per band
 * of the last node's output rows [a, e), the rows each node reads come
 * from its kernel, stride, dilation and top pad: a window node's output
 * rows [a, e) read input rows [a s - p, (e - 1) s - p + (k - 1) d + 1),
 * clipped to the input, what lies outside becoming that band's own pads
 * (a ceil_mode pool's overhang too: explicit pads, ceil_mode 0). Each
 * output element is the same window over the same values as before. A
 * node with a device spec, colocation or control edges is left whole. */
#include "passes/pass.h"

#include "devices/kernel.h"
#include "support/alloc.h"
#include "support/checked.h"

#include <stdio.h>
#include <string.h>

#define MAX_BANDS 16
#define MAX_CHAIN 8

/* A window node's geometry along the rows (axis 2 of NCHW). */
typedef struct rows_window {
    int64_t kernel, stride, dilation, pad_top;
} rows_window;

/* A chain found: its nodes in order, the Conv first, and which are windows. */
typedef struct chain {
    int32_t nodes[MAX_CHAIN];
    rows_window win[MAX_CHAIN];
    bool window[MAX_CHAIN];
    int n;
} chain;

/* ints attribute `name` of n into out[0..count) (default dflt each). */
static void attr_ints(const tgc_node *n, const char *name, int64_t *out, size_t count, int64_t dflt) {
    const tgc_attr *a = tgc_node_attr(n, name);
    for (size_t i = 0; i < count; i++)
        out[i] = a != NULL && a->type == TGC_ATTR_INTS && a->n == count ? a->ints[i] : dflt;
}

static bool explicit_pads(const tgc_node *n) {
    const tgc_attr *a = tgc_node_attr(n, "auto_pad");
    return a == NULL || (a->type == TGC_ATTR_STRING && (strcmp(a->s, "NOTSET") == 0 || strcmp(a->s, "VALID") == 0));
}

/* The rows geometry of a Conv, MaxPool or AveragePool node with 2 spatial axes; false for anything else. */
static bool window_of(const tgc_rewrite *rw, int32_t id, rows_window *w) {
    const tgc_node *n = &rw->g->nodes[id];
    bool conv = tgc_pass_is_op(rw, id, "Conv"), max_pool = tgc_pass_is_op(rw, id, "MaxPool");
    bool avg_pool = tgc_pass_is_op(rw, id, "AveragePool");
    if (!(conv || max_pool || avg_pool) || !explicit_pads(n) || n->n_outputs < 1) return false;
    if ((max_pool && n->n_outputs > 1 && tgc_rewrite_uses(rw, (tgc_ref){id, 1, {0, 0}}) > 0) ||
        (avg_pool && tgc_pass_attr_int(n, "ceil_mode", 0) != 0))
        return false;
    int64_t kernel[2], strides[2], dilations[2], pads[4];
    if (conv) {
        const tgc_const *wc = n->n_inputs >= 2 ? tgc_pass_const_of(rw, n->inputs[1]) : NULL;
        if (wc == NULL || wc->shape.rank != 4) return false;
        kernel[0] = wc->shape.dims[2].v;
    } else {
        attr_ints(n, "kernel_shape", kernel, 2, -1);
        if (kernel[0] < 1) return false;
    }
    attr_ints(n, "strides", strides, 2, 1);
    attr_ints(n, "dilations", dilations, 2, 1);
    attr_ints(n, "pads", pads, 4, 0);
    *w = (rows_window){kernel[0], strides[0], dilations[0], pads[0]};
    return w->stride >= 1 && w->dilation >= 1 && w->pad_top >= 0;
}

/* Static 4-D float shape of value r, false otherwise. */
static bool map_shape(const tgc_rewrite *rw, tgc_ref r, int64_t dims[4]) {
    const tgc_tensor_info *t = tgc_graph_ref_info(rw->g, r);
    if (t->shape.rank != 4 || (t->dtype != TGC_FLOAT32 && t->dtype != TGC_FLOAT16 && t->dtype != TGC_BFLOAT16))
        return false;
    int64_t bytes = (int64_t)tgc_dtype_size(t->dtype);
    for (int d = 0; d < 4; d++) {
        if (!tgc_dim_known(t->shape.dims[d]) || t->shape.dims[d].v < 1 ||
            !tgc_checked_mul_i64(bytes, t->shape.dims[d].v, &bytes))
            return false;
        dims[d] = t->shape.dims[d].v;
    }
    /* a map's bytes, a step's two maps and a join's twice its output stay within int64 (row_bytes,
     * map_bytes and the sums after them are unchecked) */
    return bytes <= INT64_MAX / 8;
}

static bool plain(const tgc_node *n) { return n->device == NULL && n->n_colocate == 0 && n->n_controls == 0; }

/* The chain starting at Conv node id, false when id starts none. */
static bool chain_from(const tgc_rewrite *rw, int32_t id, const bool *named, chain *c) {
    const tgc_node *n = &rw->g->nodes[id];
    int64_t dims[4];
    c->n = 0;
    if (!tgc_pass_is_op(rw, id, "Conv") || !plain(n) || named[id] || !window_of(rw, id, &c->win[0]) ||
        !map_shape(rw, n->inputs[0], dims) || !map_shape(rw, (tgc_ref){id, 0, {0, 0}}, dims))
        return false;
    c->nodes[0] = id;
    c->window[0] = true;
    c->n = 1;
    while (c->n < MAX_CHAIN) {
        int32_t next = tgc_pass_only_reader(rw, (tgc_ref){c->nodes[c->n - 1], 0, {0, 0}});
        if (next < 0 || !plain(&rw->g->nodes[next]) || named[next] || rw->g->nodes[next].n_outputs < 1 ||
            !map_shape(rw, (tgc_ref){next, 0, {0, 0}}, dims))
            break;
        tgc_fused_act act;
        bool window = window_of(rw, next, &c->win[c->n]) && rw->g->nodes[next].inputs[0].node == c->nodes[c->n - 1];
        if (!window && !(tgc_activation_of(rw->g, &rw->g->nodes[next], &act) &&
                         rw->g->nodes[next].inputs[0].node == c->nodes[c->n - 1]))
            break;
        c->window[c->n] = window;
        c->nodes[c->n++] = next;
    }
    return true;
}

/* The rows of each node's input and output for output rows [a, e) of the
 * chain's last node: in[i] / out[i] (clipped input rows and the pads
 * outside them in pad_top / pad_bottom, for windows). */
typedef struct band_rows {
    int64_t in0[MAX_CHAIN], in1[MAX_CHAIN], out0[MAX_CHAIN], out1[MAX_CHAIN];
    int64_t pad_top[MAX_CHAIN], pad_bottom[MAX_CHAIN];
} band_rows;

static void band_of(const tgc_rewrite *rw, const chain *c, int64_t a, int64_t e, band_rows *b) {
    for (int i = c->n - 1; i >= 0; i--) {
        const tgc_node *n = &rw->g->nodes[c->nodes[i]];
        int64_t rows_in = tgc_graph_ref_info(rw->g, n->inputs[0])->shape.dims[2].v;
        b->out0[i] = a, b->out1[i] = e;
        if (!c->window[i]) {
            b->in0[i] = a, b->in1[i] = e, b->pad_top[i] = b->pad_bottom[i] = 0;
            continue;
        }
        const rows_window *w = &c->win[i];
        int64_t lo = a * w->stride - w->pad_top;
        int64_t hi = (e - 1) * w->stride - w->pad_top + (w->kernel - 1) * w->dilation + 1;
        b->in0[i] = lo > 0 ? lo : 0;
        b->in1[i] = hi < rows_in ? hi : rows_in;
        b->pad_top[i] = b->in0[i] - lo;
        b->pad_bottom[i] = hi - b->in1[i];
        a = b->in0[i], e = b->in1[i];
    }
}

/* Bytes a row of value r holds (C x W elements). */
static int64_t row_bytes(const tgc_rewrite *rw, tgc_ref r) {
    const tgc_tensor_info *t = tgc_graph_ref_info(rw->g, r);
    return t->shape.dims[0].v * t->shape.dims[1].v * t->shape.dims[3].v * (int64_t)tgc_dtype_size(t->dtype);
}

/* The most bytes a step of the chain holds (its input and output) in a
 * band of the last node's output rows [a, e); the whole chain for [0, H). */
static int64_t largest_step(const tgc_rewrite *rw, const chain *c, int64_t a, int64_t e) {
    band_rows b;
    band_of(rw, c, a, e, &b);
    int64_t most = 0;
    for (int i = 0; i < c->n; i++) {
        const tgc_node *n = &rw->g->nodes[c->nodes[i]];
        int64_t in = (b.in1[i] - b.in0[i]) * row_bytes(rw, n->inputs[0]);
        int64_t out = (b.out1[i] - b.out0[i]) * row_bytes(rw, (tgc_ref){c->nodes[i], 0, {0, 0}});
        int64_t step = c->window[i] ? in + out : out; /* an activation takes its input's buffer */
        if (step > most) most = step;
    }
    return most;
}

/* Bytes of value r (4-D, static: map_shape held). */
static int64_t map_bytes(const tgc_rewrite *rw, tgc_ref r) {
    return tgc_graph_ref_info(rw->g, r)->shape.dims[2].v * row_bytes(rw, r);
}

/* Ends chain c after its last window whose whole step holds more than
 * max_step bytes, or further on at the first node after it whose output
 * joined from bands fits (the bands' outputs and their Concat: twice its
 * bytes; a stem's map is never joined whole when the pool after it is
 * in the chain), then the activations after that; false when no window
 * needs bands (c left as it was). */
static bool trim_chain(const tgc_rewrite *rw, chain *c, int64_t max_step) {
    int last = -1;
    for (int i = 0; i < c->n; i++) {
        const tgc_node *n = &rw->g->nodes[c->nodes[i]];
        if (c->window[i] && map_bytes(rw, n->inputs[0]) + map_bytes(rw, (tgc_ref){c->nodes[i], 0, {0, 0}}) > max_step)
            last = i;
    }
    if (last < 0) return false;
    while (last + 1 < c->n && 2 * map_bytes(rw, (tgc_ref){c->nodes[last], 0, {0, 0}}) > max_step) last++;
    while (last + 1 < c->n && !c->window[last + 1]) last++;
    c->n = last + 1;
    return true;
}

/* An int64 constant [1] holding v, added to rw; its id in *id. */
static tgc_status add_index(tgc_rewrite *rw, const char *base, int64_t v, int32_t *id) {
    tgc_shape one = {.rank = 1, .dims = {tgc_dim_of(1)}};
    tgc_const *k = tgc_pass_new_const(TGC_INT64, &one, (tgc_srcpos){0, 0});
    if (k == NULL) return TGC_ERR_NOMEM;
    memcpy(k->data, &v, sizeof v);
    return tgc_rewrite_add_const(rw, -1, base, k, id);
}

/* Band `band` (output rows [a, e) of the last node) of chain c: its nodes
 * added to rw; its last node's id in *last. */
static tgc_status add_band(tgc_rewrite *rw, const chain *c, const char *name, int band, int64_t a, int64_t e,
                           int32_t *first, int32_t *last) {
    band_rows b;
    band_of(rw, c, a, e, &b);
    const tgc_node *conv = &rw->g->nodes[c->nodes[0]];
    tgc_ref x = conv->inputs[0];
    int64_t rows_in = tgc_graph_ref_info(rw->g, x)->shape.dims[2].v;
    char base[300];
    tgc_status s = TGC_OK;
    *first = -1;
    if (b.in0[0] > 0 || b.in1[0] < rows_in) { /* the rows this band reads */
        int32_t starts, ends, axes, slice;
        tgc_ref ins[4];
        snprintf(base, sizeof base, "%.200s/band%d_rows", name, band);
        s = add_index(rw, base, b.in0[0], &starts);
        if (s == TGC_OK) s = add_index(rw, base, b.in1[0], &ends);
        if (s == TGC_OK) s = add_index(rw, base, 2, &axes);
        ins[0] = x, ins[1] = (tgc_ref){starts, 0, {0, 0}}, ins[2] = (tgc_ref){ends, 0, {0, 0}};
        ins[3] = (tgc_ref){axes, 0, {0, 0}};
        if (s == TGC_OK) s = tgc_rewrite_add_op(rw, "Slice", c->nodes[0], ins, 4, 1, &slice);
        if (s != TGC_OK) return s;
        tgc_rewrite_keep_own_name(rw, slice);
        x = (tgc_ref){slice, 0, {0, 0}};
        *first = slice;
    }
    for (int i = 0; s == TGC_OK && i < c->n; i++) {
        int32_t from = c->nodes[i], made;
        const tgc_node *n = &rw->g->nodes[from];
        tgc_ref ins[3] = {x, {-1, 0, {0, 0}}, {-1, 0, {0, 0}}};
        int n_in = n->n_inputs < 3 ? n->n_inputs : 3;
        for (int k = 1; k < n_in; k++) ins[k] = n->inputs[k];
        s = tgc_rewrite_add_op(rw, n->op->name, from, ins, n_in, 1, &made);
        if (s == TGC_OK) s = tgc_rewrite_copy_attrs(rw, from, made);
        if (s == TGC_OK && c->window[i]) {
            int64_t pads[4];
            attr_ints(&rw->g->nodes[from], "pads", pads, 4, 0);
            pads[0] = b.pad_top[i], pads[2] = b.pad_bottom[i];
            s = tgc_rewrite_set_attr_list(rw, made, "pads", TGC_ATTR_INTS, 4, pads);
            if (s == TGC_OK) s = tgc_rewrite_set_attr_string(rw, made, "auto_pad", "NOTSET");
            if (s == TGC_OK && !tgc_pass_is_op(rw, from, "Conv"))
                s = tgc_rewrite_set_attr_int(rw, made, "ceil_mode", 0);
        }
        if (s != TGC_OK) return s;
        tgc_rewrite_keep_own_name(rw, made);
        x = (tgc_ref){made, 0, {0, 0}};
        if (*first < 0) *first = made;
    }
    *last = x.node;
    return s;
}

/* The first output row of band i of `bands` over `rows` (edge(.., bands) = rows). */
static int64_t edge(int64_t rows, int bands, int i) { return i >= bands ? rows : rows * i / bands; }

/* Cuts chain c (trimmed: trim_chain) into the fewest bands (at most
 * MAX_BANDS) whose steps each hold at most max_step bytes; *cut when it
 * did. */
static tgc_status cut_chain(tgc_rewrite *rw, chain *c, int64_t max_step, bool *cut) {
    if (!trim_chain(rw, c, max_step)) return TGC_OK;
    int32_t end = c->nodes[c->n - 1];
    int64_t rows = tgc_graph_ref_info(rw->g, (tgc_ref){end, 0, {0, 0}})->shape.dims[2].v;
    if (largest_step(rw, c, 0, rows) <= max_step) return TGC_OK;
    int bands = 2;
    for (; bands <= MAX_BANDS && bands <= rows; bands++) {
        bool fits = true;
        for (int i = 0; fits && i < bands; i++)
            fits = largest_step(rw, c, edge(rows, bands, i), edge(rows, bands, i + 1)) <= max_step;
        if (fits) break;
    }
    if (bands > MAX_BANDS || bands > rows) return TGC_OK;
    char *name = tgc_strdup(rw->g->nodes[end].name);
    int32_t made[MAX_BANDS], first;
    tgc_status s = name != NULL ? TGC_OK : TGC_ERR_NOMEM;
    for (int i = 0; s == TGC_OK && i < bands; i++) {
        s = add_band(rw, c, name, i, edge(rows, bands, i), edge(rows, bands, i + 1), &first, &made[i]);
        /* one band after another: in a breadth-first order every band's Conv would run before any pool */
        if (s == TGC_OK && i > 0) s = tgc_rewrite_add_control(rw, first, made[i - 1]);
    }
    int32_t concat = -1;
    tgc_ref parts[MAX_BANDS];
    for (int i = 0; s == TGC_OK && i < bands; i++) parts[i] = (tgc_ref){made[i], 0, {0, 0}};
    if (s == TGC_OK) s = tgc_rewrite_add_op(rw, "Concat", end, parts, bands, 1, &concat);
    if (s == TGC_OK) s = tgc_rewrite_set_attr_int(rw, concat, "axis", 2);
    if (s == TGC_OK) {
        tgc_rewrite_replace_uses(rw, (tgc_ref){end, 0, {0, 0}}, (tgc_ref){concat, 0, {0, 0}});
        for (int i = c->n - 1; i >= 0; i--) tgc_rewrite_remove(rw, c->nodes[i]); /* the Concat takes end's name */
        rw->edits++;
        *cut = true;
    }
    tgc_free(name);
    return s;
}

/* tgc_pass_cut_fn: the chain starting at node id cut when its steps are
 * too large (arg: the most bytes a step may hold). */
static tgc_status cut_if_wide(tgc_rewrite *rw, int32_t id, const bool *named, void *arg, bool *cut) {
    chain c;
    return chain_from(rw, id, named, &c) ? cut_chain(rw, &c, *(const int64_t *)arg, cut) : TGC_OK;
}

tgc_status tgc_graph_split_spatial(const tgc_graph *g, int64_t max_step_bytes, tgc_diags *diags, tgc_graph **out,
                                   int32_t *n_cut) {
    if (max_step_bytes < 1) max_step_bytes = 1;
    return tgc_pass_cut_copy(g, cut_if_wide, &max_step_bytes, diags, out, n_cut);
}
