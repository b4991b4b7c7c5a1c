/* Concat in place (concat_in_place.h): which values go where, and the
 * views the writers get. */
#include "executor/concat_in_place.h"

#include "graph/shape.h"
#include "graph/subgraph.h"
#include "support/alloc.h"
#include "support/checked.h"

#include <string.h>

/* The bytes of a numeric tensor of known dtype and dims; -1 otherwise. */
static int64_t known_bytes(const tgc_tensor_info *info) {
    if (info->kind != TGC_KIND_TENSOR || info->dtype == TGC_DTYPE_INVALID || info->dtype == TGC_STRING ||
        !tgc_shape_known(&info->shape))
        return -1;
    int64_t dims[TGC_MAX_RANK];
    for (int d = 0; d < info->shape.rank; d++) dims[d] = info->shape.dims[d].v;
    size_t n;
    if (!tgc_checked_dims_nbytes(info->shape.rank, dims, tgc_dtype_size(info->dtype), &n) ||
        n > (size_t)TGC_MAX_BYTES)
        return -1;
    return (int64_t)n;
}

/* Output r.port of node r.node is written by the node's kernel into a
 * buffer the executor gives it, in device memory. */
static bool kernel_writes(const tgc_graph *g, const tgc_kernel_def *const *kernel, tgc_ref r) {
    const tgc_node *n = &g->nodes[r.node];
    const tgc_kernel_def *k = kernel[r.node];
    return n->kind == TGC_NODE_OP && k != NULL && !k->sizes_outputs && !tgc_kernel_host_output(k, r.port) &&
           !tgc_node_has_subgraphs(n);
}

/* The offset of each input of Concat n in its output, when the inputs'
 * bytes are known and add up to `whole`; false otherwise. */
static bool part_offsets(const tgc_graph *g, const tgc_node *n, int64_t whole, int64_t *at) {
    int64_t sum = 0;
    for (int i = 0; i < n->n_inputs; i++) {
        int64_t b = n->inputs[i].node >= 0 ? known_bytes(tgc_graph_ref_info(g, n->inputs[i])) : -1;
        at[i] = sum;
        if (b < 0 || !tgc_checked_add_i64(sum, b, &sum)) return false;
    }
    return sum == whole;
}

/* Every dim of the output before the Concat's axis is 1. */
static bool parts_contiguous(const tgc_node *n) {
    const tgc_attr *a = tgc_node_attr(n, "axis");
    int r = n->outputs[0].shape.rank;
    if (a == NULL || r < 1) return false;
    int64_t axis = a->i < 0 ? a->i + r : a->i;
    if (axis < 0 || axis >= r) return false;
    for (int64_t d = 0; d < axis; d++)
        if (n->outputs[0].shape.dims[d].v != 1) return false;
    return true;
}

/* Places the inputs of Concat `id` (output slot w) that may lie in its
 * buffer (concat_in_place.h); false when none may. */
static bool place_parts(const tgc_graph *g, const tgc_kernel_def *const *kernel, const int32_t *base,
                        const int32_t *uses, int32_t id, tgc_concat_place *places) {
    const tgc_node *n = &g->nodes[id];
    int64_t whole = known_bytes(&n->outputs[0]), small[16];
    int64_t *at = n->n_inputs <= 16 ? small : tgc_malloc((size_t)n->n_inputs * sizeof *at);
    if (at == NULL || whole <= 0 || !part_offsets(g, n, whole, at)) {
        if (at != small) tgc_free(at);
        return false;
    }
    int32_t w = base[id];
    for (int i = 0; i < n->n_inputs; i++) {
        tgc_ref r = n->inputs[i];
        const tgc_tensor_info *info = tgc_graph_ref_info(g, r);
        int64_t bytes = known_bytes(info);
        int32_t v = base[r.node] + r.port;
        if (bytes < TGC_CONCAT_PLACE_ALIGN || at[i] % TGC_CONCAT_PLACE_ALIGN != 0 || uses[v] != 1 ||
            info->dtype != n->outputs[0].dtype || !kernel_writes(g, kernel, r))
            continue;
        places[v].into = w;
        places[v].offset = at[i];
        places[v].bytes = bytes;
        places[w].whole = true;
        /* A maker that only forwards its input (an activation taking over
         * its producer's buffer) has that input written in place too, when
         * nothing else reads it. */
        for (tgc_ref c = r; c.port == 0;) {
            const tgc_node *m = &g->nodes[c.node];
            int fi = kernel[c.node]->forward_input;
            if (fi < 0 || fi >= m->n_inputs || m->inputs[fi].node < 0) break;
            tgc_ref u = m->inputs[fi];
            int32_t su = base[u.node] + u.port;
            const tgc_tensor_info *ui = tgc_graph_ref_info(g, u);
            if (uses[su] != 1 || places[su].into >= 0 || places[su].whole || !kernel_writes(g, kernel, u) ||
                known_bytes(ui) != bytes || ui->dtype != info->dtype)
                break;
            places[su] = (tgc_concat_place){.into = w, .offset = at[i], .bytes = bytes, .node = -1};
            c = u;
        }
    }
    if (places[w].whole) {
        places[w].bytes = whole;
        places[w].node = id;
    }
    if (at != small) tgc_free(at);
    return places[w].whole;
}

/* What the peak estimate needs of each slot: its bytes (kernel outputs in
 * device memory, 0 otherwise), its lifetime in node order, from its node
 * to its last reader (a graph output: to the end), and the slot whose
 * buffer it takes over where its node forwards one (as the executor and
 * the static plan do: this node the input's last reader, the same bytes
 * and dtype), else -1. */
typedef struct lifetimes {
    int64_t *bytes;
    int32_t *first, *last, *join;
    int32_t *root, *start, *end; /* peak_with's: the buffer each slot is in, that buffer's first and last node */
    int64_t *delta;      /* n_nodes + 1 */
    int32_t n_slots, n_nodes;
} lifetimes;

static bool lifetimes_init(lifetimes *lt, const tgc_graph *g, const tgc_kernel_def *const *kernel,
                           const int32_t *base, const int32_t *uses, int32_t n_slots) {
    size_t ns = (size_t)n_slots + 1, nn = (size_t)g->n_nodes + 1;
    *lt = (lifetimes){.bytes = tgc_calloc(ns, sizeof(int64_t)), .first = tgc_calloc(ns, sizeof(int32_t)),
                      .last = tgc_calloc(ns, sizeof(int32_t)), .join = tgc_calloc(ns, sizeof(int32_t)),
                      .root = tgc_calloc(ns, sizeof(int32_t)), .start = tgc_calloc(ns, sizeof(int32_t)),
                      .end = tgc_calloc(ns, sizeof(int32_t)),
                      .delta = tgc_calloc(nn, sizeof(int64_t)), .n_slots = n_slots, .n_nodes = g->n_nodes};
    int32_t *reads = tgc_calloc(ns, sizeof(int32_t));
    bool ok = lt->bytes && lt->first && lt->last && lt->join && lt->root && lt->start && lt->end && lt->delta && reads;
    for (int32_t id = 0; ok && id < g->n_nodes; id++) {
        const tgc_node *n = &g->nodes[id];
        for (int k = 0; k < n->n_outputs; k++) {
            int32_t v = base[id] + k;
            lt->first[v] = lt->last[v] = id;
            lt->join[v] = -1;
            int64_t b = known_bytes(&n->outputs[k]);
            if (kernel[id] != NULL && !tgc_kernel_host_output(kernel[id], k) && b > 0) lt->bytes[v] = b;
        }
        for (int i = 0; i < n->n_inputs; i++)
            if (n->inputs[i].node >= 0) {
                int32_t v = base[n->inputs[i].node] + n->inputs[i].port;
                lt->last[v] = id;
                reads[v]++;
            }
    }
    for (int32_t v = 0; ok && v < n_slots; v++)
        if (uses[v] > reads[v]) lt->last[v] = g->n_nodes - 1; /* a graph output */
    for (int32_t id = 0; ok && id < g->n_nodes; id++) {
        const tgc_node *n = &g->nodes[id];
        int fi = kernel[id] != NULL ? kernel[id]->forward_input : -1;
        if (fi < 0 || fi >= n->n_inputs || n->n_outputs < 1 || n->inputs[fi].node < 0) continue;
        int32_t u = base[n->inputs[fi].node] + n->inputs[fi].port, v = base[id];
        if (lt->bytes[u] > 0 && lt->bytes[u] == lt->bytes[v] && lt->last[u] == id && uses[u] == reads[u] &&
            tgc_graph_ref_info(g, n->inputs[fi])->dtype == n->outputs[0].dtype)
            lt->join[v] = u;
    }
    tgc_free(reads);
    return ok;
}

static void lifetimes_release(lifetimes *lt) {
    tgc_free(lt->bytes);
    tgc_free(lt->first);
    tgc_free(lt->last);
    tgc_free(lt->join);
    tgc_free(lt->root);
    tgc_free(lt->start);
    tgc_free(lt->end);
    tgc_free(lt->delta);
}

static bool placed(const tgc_concat_place *pl) { return pl->into >= 0 || pl->whole; }

/* The most bytes live at one node with the values placed as `places`
 * says: a Concat's parts count once, in their outermost whole, from the
 * first of them made to the last read; a forwarded value in the buffer it
 * took over (neither placed: a view is never taken over by an output of
 * its own). The static plan's lower bound over the same schedule. */
static int64_t peak_with(lifetimes *lt, const tgc_concat_place *places) {
    for (int32_t v = 0; v < lt->n_slots; v++) { /* producers come before readers: roots are known */
        int32_t r = v;
        if (placed(&places[v])) {
            while (places[r].into >= 0) r = places[r].into;
        } else if (lt->join[v] >= 0 && !placed(&places[lt->join[v]])) {
            r = lt->root[lt->join[v]];
        }
        lt->root[v] = r;
        lt->start[v] = lt->first[v];
        lt->end[v] = lt->last[v];
    }
    for (int32_t v = 0; v < lt->n_slots; v++) {
        int32_t r = lt->root[v];
        if (r == v) continue;
        if (lt->first[v] < lt->start[r]) lt->start[r] = lt->first[v]; /* a whole is made with its first part */
        if (lt->last[v] > lt->end[r]) lt->end[r] = lt->last[v];
    }
    memset(lt->delta, 0, ((size_t)lt->n_nodes + 1) * sizeof *lt->delta);
    for (int32_t v = 0; v < lt->n_slots; v++) {
        if (lt->root[v] != v) continue;
        int64_t bytes = places[v].whole ? places[v].bytes : lt->bytes[v];
        if (!tgc_checked_add_i64(lt->delta[lt->start[v]], bytes, &lt->delta[lt->start[v]]) ||
            !tgc_checked_add_i64(lt->delta[lt->end[v] + 1], -bytes, &lt->delta[lt->end[v] + 1]))
            return INT64_MAX; /* past any byte count: placing nothing more */
    }
    int64_t live = 0, most = 0;
    for (int32_t id = 0; id < lt->n_nodes; id++) {
        if (!tgc_checked_add_i64(live, lt->delta[id], &live)) return INT64_MAX;
        if (live > most) most = live;
    }
    return most;
}

void tgc_concat_places_find(const tgc_graph *g, const tgc_kernel_def *const *kernel, const int32_t *base,
                            const int32_t *uses, bool host_memory, tgc_concat_place *places) {
    int32_t n_slots = 0;
    for (int32_t id = 0; id < g->n_nodes; id++) n_slots += g->nodes[id].n_outputs;
    for (int32_t v = 0; v < n_slots; v++) places[v] = (tgc_concat_place){.into = -1, .node = -1};
    if (!host_memory || n_slots == 0) return;
    lifetimes lt;
    tgc_concat_place *before = tgc_malloc((size_t)n_slots * sizeof *before);
    if (before == NULL || !lifetimes_init(&lt, g, kernel, base, uses, n_slots)) {
        if (before != NULL) lifetimes_release(&lt);
        tgc_free(before);
        return;
    }
    int64_t peak = peak_with(&lt, places);
    for (int32_t id = 0; id < g->n_nodes; id++) {
        const tgc_node *n = &g->nodes[id];
        if (n->kind != TGC_NODE_OP || strcmp(n->op_name, "Concat") != 0 || n->n_outputs != 1 || n->n_inputs < 2 ||
            !kernel_writes(g, kernel, (tgc_ref){.node = id, .port = 0}) || !parts_contiguous(n))
            continue;
        memcpy(before, places, (size_t)n_slots * sizeof *before);
        if (!place_parts(g, kernel, base, uses, id, places)) continue;
        /* The whole is made when its first part is: where that holds more
         * at once than copying did (GoogLeNet's inception3b, its whole
         * made while the other branches ran: 4.0 -> 4.3 MB), copy. */
        int64_t with = peak_with(&lt, places);
        if (with > peak || with == INT64_MAX) memcpy(places, before, (size_t)n_slots * sizeof *before);
        else peak = with;
    }
    lifetimes_release(&lt);
    tgc_free(before);
}

/* A view's release: the whole it holds a reference on. */
static void view_release(void *whole) { tgc_buffer_release(whole); }

bool tgc_buffer_is_concat_view(const tgc_buffer *b) {
    return b != NULL && b->borrowed && b->foreign_release == view_release;
}

tgc_status tgc_concat_view(tgc_buffer *whole, int64_t offset, int64_t bytes, tgc_buffer **out) {
    tgc_status s = tgc_buffer_wrap_host(whole->device, (char *)whole->mem + offset, (size_t)bytes, view_release,
                                        tgc_buffer_retain(whole), out);
    if (s != TGC_OK) tgc_buffer_release(whole);
    return s;
}
