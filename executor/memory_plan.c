/* The static memory plan (memory_plan.h): concrete shapes, lifetimes over
 * the executor's schedule, buffers shared by forwarding, then per memory
 * the naive sum, the lower bound and offsets: TFLite's greedy by size, or
 * in order of first use where that packs smaller. */
#include "executor/memory_plan.h"
#include "executor/session.h"

#include "devices/kernel.h"
#include "devices/memory_limit.h"
#include "graph/infer.h"
#include "support/alloc.h"
#include "support/checked.h"
#include "support/diag.h"
#include "support/settings.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---- offsets: TFLite's way, and in order of first use ------------------------ */

typedef struct order_item {
    bool whole;     /* lives for the whole run: placed first, by index */
    int64_t bytes;
    int32_t first;
    int32_t index;
} order_item;

/* arena_planner.cc's tensor_compare: whole-run buffers first (by index),
 * then the largest, then the earliest, then by index (a total order, so the
 * plan is the same on every libc). */
static int size_order_cmp(const void *pa, const void *pb) {
    const order_item *a = pa, *b = pb;
    if (a->whole != b->whole) return a->whole ? -1 : 1;
    if (!a->whole) {
        if (a->bytes != b->bytes) return a->bytes > b->bytes ? -1 : 1;
        if (a->first != b->first) return a->first < b->first ? -1 : 1;
    }
    return (a->index > b->index) - (a->index < b->index);
}

/* Whole-run buffers first (by index), then as the run makes them: the
 * earliest first use, then the largest, then by index. */
static int first_use_order_cmp(const void *pa, const void *pb) {
    const order_item *a = pa, *b = pb;
    if (a->whole != b->whole) return a->whole ? -1 : 1;
    if (!a->whole) {
        if (a->first != b->first) return a->first < b->first ? -1 : 1;
        if (a->bytes != b->bytes) return a->bytes > b->bytes ? -1 : 1;
    }
    return (a->index > b->index) - (a->index < b->index);
}

/* Places b's buffers in `order` (order[].index), each in the smallest gap
 * between the placed buffers it meets in time that fits it, else above
 * them all (simple_memory_arena.cc's Allocate): offsets into off[], the
 * arena into *arena. placed: n entries of scratch. false when an offset
 * would pass INT64_MAX. */
static bool place_in_order(const tgc_memory_buffer *b, const order_item *order, int32_t n, int64_t alignment,
                           int64_t *off, int32_t *placed, int64_t *arena) {
    *arena = 0;
    int32_t n_placed = 0; /* placed[0..n_placed): by offset */
    for (int32_t o = 0; o < n; o++) {
        int32_t i = order[o].index;
        const tgc_memory_buffer *x = &b[i];
        off[i] = 0;
        if (x->bytes <= 0) continue;
        int64_t cur = 0, best = -1, best_fit = INT64_MAX, at, end;
        bool fits = true;
        for (int32_t k = 0; fits && k < n_placed && best_fit != 0; k++) {
            const tgc_memory_buffer *p = &b[placed[k]];
            int64_t p_off = off[placed[k]];
            if (p->last < x->first || p->first > x->last) continue;
            fits = tgc_checked_align_i64(cur, alignment, &at) && tgc_checked_add_i64(at, x->bytes, &end);
            if (fits && end <= p_off && p_off - at < best_fit) {
                best = at;
                best_fit = p_off - at;
            }
            if (p_off + p->bytes > cur) cur = p_off + p->bytes; /* an end that fitted when placed */
        }
        if (best >= 0) off[i] = best;
        else fits = fits && tgc_checked_align_i64(cur, alignment, &off[i]);
        if (!fits || !tgc_checked_add_i64(off[i], x->bytes, &end)) return false;
        if (end > *arena) *arena = end;
        int32_t pos = n_placed;
        while (pos > 0 && off[placed[pos - 1]] > off[i]) {
            placed[pos] = placed[pos - 1];
            pos--;
        }
        placed[pos] = i;
        n_placed++;
    }
    return true;
}

tgc_status tgc_memory_assign_offsets(tgc_memory_buffer *b, int32_t n, int32_t n_steps, int64_t alignment,
                                     int64_t *arena) {
    *arena = 0;
    if (n <= 0) return TGC_OK;
    order_item *order = tgc_malloc((size_t)n * sizeof *order);
    int32_t *placed = tgc_malloc((size_t)n * sizeof *placed);
    int64_t *off = tgc_malloc(2 * (size_t)n * sizeof *off); /* by size, then by first use */
    tgc_status st = order && placed && off ? TGC_OK : TGC_ERR_NOMEM;
    int64_t by_size = 0, by_first_use = 0;
    int (*const cmp[2])(const void *, const void *) = {size_order_cmp, first_use_order_cmp};
    int64_t *const arenas[2] = {&by_size, &by_first_use};
    for (int k = 0; st == TGC_OK && k < 2; k++) {
        for (int32_t i = 0; i < n; i++)
            order[i] = (order_item){b[i].first <= 0 && b[i].last >= n_steps - 1, b[i].bytes, b[i].first, i};
        qsort(order, (size_t)n, sizeof *order, cmp[k]);
        if (!place_in_order(b, order, n, alignment, off + (size_t)k * (size_t)n, placed, arenas[k]))
            st = TGC_ERR_INVALID;
    }
    if (st == TGC_OK) { /* the smaller arena; by size where they tie */
        const int64_t *keep = by_first_use < by_size ? off + n : off;
        for (int32_t i = 0; i < n; i++) b[i].offset = keep[i];
        *arena = by_first_use < by_size ? by_first_use : by_size;
    }
    tgc_free(order);
    tgc_free(placed);
    tgc_free(off);
    return st;
}

int64_t tgc_memory_lower_bound(const tgc_memory_buffer *b, int32_t n, int32_t n_steps, int32_t *busiest) {
    *busiest = -1;
    if (n <= 0 || n_steps <= 0) return 0;
    /* Every partial sum below is at most the total: check it once. */
    int64_t total = 0;
    for (int32_t i = 0; i < n; i++)
        if (b[i].bytes > 0 && !tgc_checked_add_i64(total, b[i].bytes, &total)) return INT64_MAX;
    int64_t *delta = tgc_calloc((size_t)n_steps + 1, sizeof *delta);
    if (delta == NULL) return -1;
    for (int32_t i = 0; i < n; i++) {
        if (b[i].bytes <= 0) continue;
        delta[b[i].first] += b[i].bytes;
        delta[b[i].last + 1] -= b[i].bytes;
    }
    int64_t live = 0, most = 0;
    for (int32_t s = 0; s < n_steps; s++) {
        live += delta[s];
        if (live > most) {
            most = live;
            *busiest = s;
        }
    }
    tgc_free(delta);
    return most;
}

/* ---- concrete shapes ---------------------------------------------------------- */

/* Every output of the original graph, with concrete dims (and the values of
 * small int tensors, which later shapes may depend on). */
typedef struct concrete {
    tgc_tensor_info *info;
    int32_t *base; /* node id -> its first output */
    int32_t n;
} concrete;

static int64_t symbol_value(tgc_memory_plan *mp, int32_t sym) {
    if (sym < 0 || sym >= mp->g->n_symbols) return 1;
    if (mp->symbols[sym] >= 0) return mp->symbols[sym];
    mp->defaulted[sym] = true;
    return 1;
}

static tgc_shape substitute(tgc_memory_plan *mp, const tgc_shape *s) {
    tgc_shape out = *s;
    for (int i = 0; i < out.rank; i++)
        if (!tgc_dim_known(out.dims[i])) out.dims[i] = tgc_dim_of(symbol_value(mp, out.dims[i].sym));
    return out;
}

/* A static info with its symbols replaced by their values (value too). */
static tgc_status substitute_info(tgc_memory_plan *mp, const tgc_tensor_info *from, tgc_tensor_info *to) {
    memset(to, 0, sizeof *to);
    to->dtype = from->dtype;
    to->kind = from->kind;
    to->shape = substitute(mp, &from->shape);
    to->value_len = -1;
    if (from->value_len < 0 || from->value == NULL) return TGC_OK;
    tgc_dim v[TGC_MAX_VALUE_LEN];
    for (int i = 0; i < from->value_len && i < TGC_MAX_VALUE_LEN; i++)
        v[i] = tgc_dim_known(from->value[i]) ? from->value[i] : tgc_dim_of(symbol_value(mp, from->value[i].sym));
    return tgc_info_set_value(to, from->value_len, v);
}

/* Runs node n's inference over the concrete infos of its inputs, as the
 * executor does at run time; falls back to substitution when inference
 * cannot tell (a shape that depends on data). */
static tgc_status infer_node(tgc_memory_plan *mp, concrete *cc, int32_t id) {
    const tgc_graph *g = mp->g;
    const tgc_node *n = &g->nodes[id];
    tgc_tensor_info *outs = &cc->info[cc->base[id]];
    tgc_status s = TGC_OK;
    if (n->kind != TGC_NODE_OP) {
        if (n->kind == TGC_NODE_CONST) {
            outs[0].dtype = n->data->dtype;
            outs[0].shape = n->data->shape;
            outs[0].value_len = -1;
            tgc_tensor_info with_value;
            s = substitute_info(mp, &n->outputs[0], &with_value);
            outs[0].value = with_value.value;
            outs[0].value_len = with_value.value_len;
            return s;
        }
        return substitute_info(mp, &n->outputs[0], &outs[0]);
    }
    bool done = false, rank_unknown = false; /* an input's rank is known only at run time: so are the outputs' */
    for (int i = 0; i < n->n_inputs; i++) {
        const tgc_tensor_info *in = n->inputs[i].node >= 0 ? &cc->info[cc->base[n->inputs[i].node] + n->inputs[i].port]
                                                           : NULL;
        if (in != NULL && in->kind == TGC_KIND_TENSOR && in->shape.rank == TGC_RANK_UNKNOWN) rank_unknown = true;
    }
    tgc_tensor_info ins_small[64], *ins = ins_small; /* any arity: more from the heap */
    if (!rank_unknown && n->op != NULL && n->op->infer != NULL && n->n_inputs > 64 &&
        (ins = tgc_malloc((size_t)n->n_inputs * sizeof *ins)) == NULL)
        return TGC_ERR_NOMEM;
    if (!rank_unknown && n->op != NULL && n->op->infer != NULL) {
        for (int i = 0; i < n->n_inputs; i++) {
            if (n->inputs[i].node < 0) {
                memset(&ins[i], 0, sizeof ins[i]);
                ins[i].dtype = TGC_DTYPE_INVALID;
                ins[i].value_len = -1;
            } else {
                ins[i] = cc->info[cc->base[n->inputs[i].node] + n->inputs[i].port];
            }
        }
        for (int k = 0; k < n->n_outputs; k++) {
            memset(&outs[k], 0, sizeof outs[k]);
            outs[k].dtype = TGC_DTYPE_INVALID;
            outs[k].value_len = -1;
        }
        tgc_infer_ctx ctx = {.graph = (tgc_graph *)g, .node = (tgc_node *)n, .diags = NULL, .input_infos = ins,
                             .output_infos = outs, .runtime = true};
        s = n->op->infer(&ctx);
        if (ins != ins_small) tgc_free(ins);
        if (s == TGC_ERR_NOMEM || ctx.nomem) return TGC_ERR_NOMEM;
        done = s == TGC_OK && !ctx.unresolved;
        for (int k = 0; done && k < n->n_outputs; k++) done = outs[k].dtype != TGC_DTYPE_INVALID;
        if (!done)
            for (int k = 0; k < n->n_outputs; k++) tgc_info_clear_value(&outs[k]);
    }
    if (done) {
        /* Any symbol left (an op that read the graph's own infos) is bound too. */
        for (int k = 0; k < n->n_outputs; k++) outs[k].shape = substitute(mp, &outs[k].shape);
        return TGC_OK;
    }
    if (!rank_unknown) mp->n_fallback++;
    for (int k = 0; k < n->n_outputs; k++)
        if ((s = substitute_info(mp, &n->outputs[k], &outs[k])) != TGC_OK) return s;
    return TGC_OK;
}

static void concrete_release(concrete *cc) {
    for (int32_t i = 0; cc->info != NULL && i < cc->n; i++) tgc_info_clear_value(&cc->info[i]);
    tgc_free(cc->info);
    tgc_free(cc->base);
}

/* The bytes of a concrete info (0 for an unknown shape); -1 when they do
 * not fit (support/checked.h). */
static int64_t info_bytes(const tgc_tensor_info *info) {
    if (!tgc_shape_known(&info->shape)) return 0;
    int64_t dims[TGC_MAX_RANK];
    size_t bytes;
    for (int i = 0; i < info->shape.rank; i++) dims[i] = info->shape.dims[i].v;
    if (!tgc_checked_dims_nbytes(info->shape.rank, dims, tgc_dtype_size(info->dtype), &bytes)) return -1;
    return (int64_t)bytes;
}

/* "N=1099511627776, T=7" for messages: the symbols the user bound. */
static const char *bindings_str(const tgc_memory_plan *mp, char *buf, size_t size) {
    const tgc_graph *g = mp->g;
    size_t len = 0;
    buf[0] = '\0';
    for (int32_t i = 0; i < g->n_symbols && len < size; i++)
        if (mp->symbols[i] >= 0)
            len += (size_t)snprintf(buf + len, size - len, "%s%s=%lld", len ? ", " : "", g->symbols[i],
                                    (long long)mp->symbols[i]);
    if (buf[0] == '\0') snprintf(buf, size, "none; unbound symbols count as 1");
    return buf;
}

/* Refuses a node whose concrete outputs have more bytes than fit. */
static tgc_status check_concrete(tgc_memory_plan *mp, const concrete *cc, int32_t id, tgc_diags *diags) {
    const tgc_node *n = &mp->g->nodes[id];
    for (int k = 0; k < n->n_outputs; k++) {
        const tgc_tensor_info *info = &cc->info[cc->base[id] + k];
        if (info_bytes(info) >= 0) continue;
        char what[256], shape[256], binds[256];
        if (n->kind == TGC_NODE_OP) snprintf(what, sizeof what, "node '%s' (%s)", tgc_node_label(n), n->op_name);
        else snprintf(what, sizeof what, "%s '%s'", n->kind == TGC_NODE_INPUT ? "graph input" : "initializer",
                      tgc_node_label(n));
        return tgc_diag_error(diags, mp->g->path, n->pos, "size-overflow",
                              "%s: output %d has shape %s (%s) with the symbols bound as given (%s); "
                              "its size in bytes does not fit in 2^63 - 1", what, k,
                              tgc_shape_str(mp->g, &info->shape, shape, sizeof shape),
                              tgc_dtype_name(info->dtype), bindings_str(mp, binds, sizeof binds));
    }
    return TGC_OK;
}

static tgc_status concrete_build(tgc_memory_plan *mp, concrete *cc, tgc_diags *diags) {
    const tgc_graph *g = mp->g;
    memset(cc, 0, sizeof *cc);
    cc->base = tgc_malloc(((size_t)g->n_nodes + 1) * sizeof *cc->base);
    if (cc->base == NULL) return TGC_ERR_NOMEM;
    for (int32_t id = 0; id < g->n_nodes; id++) {
        cc->base[id] = cc->n;
        cc->n += g->nodes[id].n_outputs;
    }
    cc->info = tgc_calloc((size_t)cc->n + 1, sizeof *cc->info);
    if (cc->info == NULL) return TGC_ERR_NOMEM;
    for (int32_t i = 0; i < cc->n; i++) cc->info[i].value_len = -1;
    tgc_status s = TGC_OK;
    for (int32_t k = 0; s == TGC_OK && k < g->n_nodes; k++) {
        int32_t id = g->topo != NULL ? g->topo[k] : k;
        s = infer_node(mp, cc, id);
        if (s == TGC_OK) s = check_concrete(mp, cc, id, diags);
    }
    return s;
}


/* ---- one partition ------------------------------------------------------------- */

enum { SPACE_NONE = 0, SPACE_DEVICE = 1, SPACE_HOST = 2 };

typedef struct slot_info {
    tgc_tensor_info info; /* concrete; value not kept */
    int64_t bytes;
    int32_t first, last;
    int space;
    bool output;      /* a graph output fetched here: lives to the end */
    int32_t uses;     /* the inputs that read it */
    bool shared_send; /* a _Send's receiver shares its buffer (host to host) */
    int32_t from;     /* the slot whose buffer this one takes over (forwarding), -1 */
    int32_t tensor;   /* index in its space's tensors, -1 */
    int32_t whole_buffer; /* an in-place Concat's outermost whole: its buffer in the space, once made; -1 */
} slot_info;

static bool is_op(const tgc_node *n, const char *op) { return n->kind == TGC_NODE_OP && strcmp(n->op_name, op) == 0; }

/* The memory the sender's tensor is in is host memory. */
static bool sent_from_host(const tgc_partitioning *parts, const tgc_partition_pair *p) {
    return p->send_host_memory || tgc_kind_host_memory(parts->devices[parts->parts[p->send_part].device].kind);
}

/* The rendezvous hands the receiver the sender's buffer itself (rendezvous.c
 * deliver: host memory wanted, host memory sent). */
static bool recv_in_place(const tgc_partitioning *parts, const tgc_partition_pair *p) {
    bool want_host =
        p->recv_host_memory || tgc_kind_host_memory(parts->devices[parts->parts[p->recv_part].device].kind);
    return want_host && sent_from_host(parts, p);
}

typedef struct part_ctx {
    tgc_memory_plan *mp;
    const concrete *cc;
    int part;
    const tgc_graph *pg;
    const int32_t *origin;
    tgc_device_kind kind;
    const tgc_kernel_def **kernel;
    int32_t *pair_of; /* node id -> its pair (_Send, _Recv), -1 */
    bool *read_on_host; /* node id -> read only as host-memory arguments (tgc_plan_host_reads) */
    int32_t *base;    /* node id -> first slot */
    slot_info *slots;
    tgc_concat_place *places; /* slot -> where a Concat in place puts it (executor/concat_in_place.h) */
    int32_t n_slots;
    tgc_diags *diags;
    bool overflow; /* a size or a sum of sizes did not fit (support/checked.h) */
} part_ctx;

static tgc_status part_ctx_init(part_ctx *c) {
    const tgc_graph *pg = c->pg;
    size_t nn = (size_t)pg->n_nodes + 1;
    c->kernel = tgc_calloc(nn, sizeof *c->kernel);
    c->pair_of = tgc_malloc(nn * sizeof *c->pair_of);
    c->read_on_host = tgc_calloc(nn, sizeof *c->read_on_host);
    c->base = tgc_malloc(nn * sizeof *c->base);
    if (!c->kernel || !c->pair_of || !c->read_on_host || !c->base) return TGC_ERR_NOMEM;
    for (int32_t id = 0; id < pg->n_nodes; id++) {
        const tgc_node *n = &pg->nodes[id];
        c->pair_of[id] = -1;
        c->base[id] = c->n_slots;
        c->n_slots += n->n_outputs;
        if (n->kind == TGC_NODE_OP && !is_op(n, "_Send") && !is_op(n, "_Recv"))
            c->kernel[id] = tgc_kernel_for_node(pg, n, c->kind);
    }
    const tgc_partitioning *parts = c->mp->parts;
    for (int32_t i = 0; i < parts->n_pairs; i++) {
        if (parts->pairs[i].recv_part == c->part) c->pair_of[parts->pairs[i].recv_node] = i;
        if (parts->pairs[i].send_part == c->part) c->pair_of[parts->pairs[i].send_node] = i;
    }
    /* As executor/plan.c place_constants: an initializer or a graph input
     * stays in host memory when every reader takes it as a host-memory
     * argument. */
    tgc_plan_host_reads(pg, (const tgc_kernel_def *const *)c->kernel, c->read_on_host);
    c->slots = tgc_calloc((size_t)c->n_slots + 1, sizeof *c->slots);
    return c->slots != NULL ? TGC_OK : TGC_ERR_NOMEM;
}

static void part_ctx_release(part_ctx *c) {
    tgc_free(c->kernel);
    tgc_free(c->pair_of);
    tgc_free(c->read_on_host);
    tgc_free(c->base);
    tgc_free(c->slots);
    tgc_free(c->places);
}

/* The concrete info of partition node `id`'s output `port`. */
static tgc_tensor_info slot_concrete(part_ctx *c, int32_t id, int port) {
    const tgc_node *n = &c->pg->nodes[id];
    const concrete *cc = c->cc;
    tgc_tensor_info info = {.dtype = TGC_DTYPE_INVALID, .value_len = -1};
    if (c->origin[id] >= 0) {
        info = cc->info[cc->base[c->origin[id]] + port];
    } else if (is_op(n, "_Recv") && c->pair_of[id] >= 0 && !c->mp->parts->pairs[c->pair_of[id]].control) {
        tgc_ref t = c->mp->parts->pairs[c->pair_of[id]].tensor;
        info = cc->info[cc->base[t.node] + t.port];
    } else {
        info.dtype = n->outputs[port].dtype;
        info.shape = substitute(c->mp, &n->outputs[port].shape); /* a control pair's empty tensor */
    }
    info.value = NULL;
    info.value_len = -1;
    return info;
}

/* Which memory each output slot is in, its bytes and its lifetime. */
static void read_slots(part_ctx *c, tgc_memory_space *dev, tgc_memory_space *host) {
    const tgc_graph *pg = c->pg;
    const tgc_partitioning *parts = c->mp->parts;
    bool host_memory_device = tgc_kind_host_memory(c->kind);
    for (int32_t id = 0; id < pg->n_nodes; id++) {
        const tgc_node *n = &pg->nodes[id];
        const tgc_kernel_def *k = c->kernel[id];
        for (int port = 0; port < n->n_outputs; port++) {
            slot_info *sl = &c->slots[c->base[id] + port];
            sl->info = slot_concrete(c, id, port);
            sl->bytes = info_bytes(&sl->info);
            if (sl->bytes < 0) {
                c->overflow = true;
                sl->bytes = 0;
            }
            sl->first = sl->last = id;
            sl->from = sl->tensor = sl->whole_buffer = -1;
            if (n->kind == TGC_NODE_CONST) {
                tgc_memory_space *w = c->read_on_host[id] ? host : dev;
                size_t wb = n->data->nbytes;
                if (wb > (size_t)TGC_MAX_BYTES || !tgc_checked_add_i64(w->weights_bytes, (int64_t)wb, &w->weights_bytes))
                    c->overflow = true;
                w->n_weights++;
                sl->space = SPACE_NONE;
            } else if (n->kind == TGC_NODE_INPUT) { /* cpu, or read as host arguments: the feed in place */
                sl->space = host_memory_device || c->read_on_host[id] ? SPACE_NONE : SPACE_DEVICE;
                if (host_memory_device && !tgc_checked_add_i64(dev->feeds_bytes, sl->bytes, &dev->feeds_bytes))
                    c->overflow = true;
            } else if (is_op(n, "_Recv")) {
                const tgc_partition_pair *p = c->pair_of[id] >= 0 ? &parts->pairs[c->pair_of[id]] : NULL;
                if (p == NULL || recv_in_place(parts, p)) sl->space = SPACE_NONE;
                else sl->space = p->recv_host_memory ? SPACE_HOST : SPACE_DEVICE;
            } else {
                sl->space = tgc_kernel_host_output(k, port) ? SPACE_HOST : SPACE_DEVICE;
            }
        }
    }
    for (int32_t id = 0; id < pg->n_nodes; id++) {
        const tgc_node *n = &pg->nodes[id];
        bool send = is_op(n, "_Send");
        bool shared = send && c->pair_of[id] >= 0 && recv_in_place(parts, &parts->pairs[c->pair_of[id]]);
        for (int i = 0; i < n->n_inputs; i++) {
            if (n->inputs[i].node < 0) continue;
            slot_info *sl = &c->slots[c->base[n->inputs[i].node] + n->inputs[i].port];
            sl->uses++;
            /* a _Send runs as soon as its input is made (executor/step.c finish), whatever its id */
            int32_t at = send ? n->inputs[i].node : id;
            if (at > sl->last) sl->last = at;
            sl->shared_send |= shared;
        }
    }
    for (int i = 0; i < parts->n_outputs; i++) {
        if (parts->outputs[i].part != c->part) continue;
        slot_info *sl = &c->slots[c->base[parts->outputs[i].node] + parts->outputs[i].port];
        sl->output = true;
        sl->last = pg->n_nodes - 1;
    }
}

/* As executor/node_run.c can_forward, over the schedule: output 0 takes
 * the input's buffer when this node is the input's last reader, nothing
 * else holds it (not an output, not shared with a receiver, allocated by
 * the run), and the two agree in memory, bytes and dtype. */
static void find_forwarding(part_ctx *c) {
    const tgc_graph *pg = c->pg;
    for (int32_t id = 0; id < pg->n_nodes; id++) {
        const tgc_node *n = &pg->nodes[id];
        const tgc_kernel_def *k = c->kernel[id];
        if (k == NULL || k->forward_input < 0 || k->forward_input >= n->n_inputs || n->n_outputs < 1) continue;
        tgc_ref r = n->inputs[k->forward_input];
        if (r.node < 0) continue;
        int32_t in = c->base[r.node] + r.port;
        slot_info *si = &c->slots[in], *so = &c->slots[c->base[id]];
        if (si->space != SPACE_NONE && si->space == so->space && si->bytes > 0 && si->bytes == so->bytes &&
            si->info.dtype == so->info.dtype && si->last == id && !si->output && !si->shared_send)
            so->from = in;
    }
}

/* As executor/plan.c: the Concats that take their inputs in place, whose
 * parts then share their whole's buffer (fill_spaces). */
static tgc_status find_places(part_ctx *c) {
    int32_t *uses = tgc_malloc(((size_t)c->n_slots + 1) * sizeof *uses);
    c->places = tgc_malloc(((size_t)c->n_slots + 1) * sizeof *c->places);
    if (uses == NULL || c->places == NULL) {
        tgc_free(uses);
        return TGC_ERR_NOMEM;
    }
    for (int32_t v = 0; v < c->n_slots; v++) uses[v] = c->slots[v].uses + (c->slots[v].output ? 1 : 0);
    tgc_concat_places_find(c->pg, (const tgc_kernel_def *const *)c->kernel, c->base, uses,
                           tgc_kind_host_memory(c->kind), c->places);
    tgc_free(uses);
    return TGC_OK;
}

/* The outermost whole slot v lies in, or -1 when it is no part of one. */
static int32_t whole_of(const part_ctx *c, int32_t v) {
    if (c->places[v].into < 0 && !c->places[v].whole) return -1;
    while (c->places[v].into >= 0) v = c->places[v].into;
    return v;
}

static int cmp_desc(const void *pa, const void *pb) {
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return (a < b) - (a > b);
}

/* What each kernel node holds besides its tensors (its kernel's
 * footprint over the concrete shapes, as tgc_kernel_choice asks its
 * chooser), and the tensors _Recv lands here. */
static tgc_status read_footprints(part_ctx *c, tgc_memory_space *dev) {
    const tgc_graph *pg = c->pg;
    dev->workspaces = tgc_calloc((size_t)pg->n_nodes + 1, sizeof *dev->workspaces);
    if (dev->workspaces == NULL) return TGC_ERR_NOMEM;
    for (int32_t id = 0; id < pg->n_nodes; id++) {
        const tgc_node *n = &pg->nodes[id];
        if (is_op(n, "_Recv") && c->slots[c->base[id]].space == SPACE_DEVICE)
            dev->recv_bytes += c->slots[c->base[id]].bytes;
        const tgc_kernel_def *k = c->kernel[id];
        if (k == NULL || k->footprint == NULL || n->n_inputs > TGC_KERNEL_MASK_BITS ||
            n->n_outputs > TGC_KERNEL_MASK_BITS)
            continue;
        tgc_value in[TGC_KERNEL_MASK_BITS], out[TGC_KERNEL_MASK_BITS];
        uint32_t consts = 0;
        bool ok = true;
        for (int i = 0; ok && i < n->n_inputs; i++) {
            in[i] = (tgc_value){.dtype = TGC_DTYPE_INVALID};
            tgc_ref r = n->inputs[i];
            if (r.node < 0) continue;
            const tgc_tensor_info *info = &c->slots[c->base[r.node] + r.port].info;
            ok = info->shape.rank >= 0 && info->shape.rank <= TGC_MAX_RANK;
            in[i].dtype = info->dtype;
            in[i].rank = ok ? info->shape.rank : 0;
            for (int d = 0; ok && d < in[i].rank; d++) in[i].dims[d] = info->shape.dims[d].v;
            if (pg->nodes[r.node].kind == TGC_NODE_CONST) consts |= 1u << i;
        }
        for (int o = 0; ok && o < n->n_outputs; o++) {
            const tgc_tensor_info *info = &c->slots[c->base[id] + o].info;
            ok = info->shape.rank >= 0 && info->shape.rank <= TGC_MAX_RANK;
            out[o] = (tgc_value){.dtype = info->dtype, .rank = ok ? info->shape.rank : 0};
            for (int d = 0; ok && d < out[o].rank; d++) out[o].dims[d] = info->shape.dims[d].v;
        }
        if (!ok) continue;
        char error[256];
        tgc_kernel_ctx kc = {.node = n, .inputs = in, .n_inputs = n->n_inputs, .outputs = out,
                             .n_outputs = n->n_outputs, .error = error, .error_size = sizeof error,
                             .const_inputs = consts, .def = k, .workspace_limit = dev->workspace_limit};
        tgc_kernel_footprint f = {0};
        k->footprint(&kc, dev->threads, &f);
        if (!tgc_checked_add_i64(dev->caches_bytes, f.cache_bytes, &dev->caches_bytes)) c->overflow = true;
        dev->workspaces[id] = f.workspace_bytes;
    }
    qsort(dev->workspaces, (size_t)pg->n_nodes, sizeof *dev->workspaces, cmp_desc);
    return TGC_OK;
}

/* Initializers every reader of which holds them in its own layout, as
 * the session will (executor/prepack.c, the same footprints over the
 * graph's static shapes): counted once, as kernel caches, not as weights. */
static tgc_status drop_replaced(part_ctx *c, tgc_memory_space *dev) {
    const tgc_graph *pg = c->pg;
    if (!tgc_kind_host_memory(c->kind) || tgc_settings_current()->no_prepack) return TGC_OK;
    int32_t *covered = tgc_calloc((size_t)pg->n_nodes + 1, sizeof *covered);
    if (covered == NULL) return TGC_ERR_NOMEM;
    for (int32_t id = 0; id < pg->n_nodes; id++) {
        const tgc_node *n = &pg->nodes[id];
        uint32_t replaces = tgc_kernel_node_footprint(c->kernel[id], pg, id, dev->threads, dev->workspace_limit)
                                .replaces_inputs;
        for (int i = 0; replaces != 0 && i < n->n_inputs && i < 32; i++) {
            int32_t from = n->inputs[i].node;
            if (from >= 0 && (replaces & (1u << i)) && pg->nodes[from].kind == TGC_NODE_CONST) covered[from]++;
        }
    }
    for (int32_t id = 0; id < pg->n_nodes; id++) {
        const tgc_const *k = pg->nodes[id].kind == TGC_NODE_CONST ? pg->nodes[id].data : NULL;
        const slot_info *sl = &c->slots[c->base[id]];
        if (k == NULL || c->read_on_host[id] || k->nbytes == 0 || k->dtype == TGC_STRING || sl->output ||
            covered[id] == 0 || covered[id] != sl->uses)
            continue;
        dev->weights_bytes -= (int64_t)k->nbytes;
        dev->replaced_bytes += (int64_t)k->nbytes;
    }
    tgc_free(covered);
    return TGC_OK;
}

static tgc_status space_alloc(tgc_memory_space *sp, int32_t cap) {
    sp->tensors = tgc_calloc((size_t)cap + 1, sizeof *sp->tensors);
    sp->buffers = tgc_calloc((size_t)cap + 1, sizeof *sp->buffers);
    return sp->tensors && sp->buffers ? TGC_OK : TGC_ERR_NOMEM;
}

/* Tensors and buffers, then the three figures. */
static tgc_status fill_spaces(part_ctx *c, tgc_memory_space *dev, tgc_memory_space *host) {
    tgc_status s = space_alloc(dev, c->n_slots);
    if (s == TGC_OK) s = space_alloc(host, c->n_slots);
    if (s != TGC_OK) return s;
    const tgc_graph *pg = c->pg;
    for (int32_t id = 0; id < pg->n_nodes; id++) {
        for (int port = 0; port < pg->nodes[id].n_outputs; port++) {
            slot_info *sl = &c->slots[c->base[id] + port];
            if (sl->space == SPACE_NONE) continue;
            tgc_memory_space *sp = sl->space == SPACE_HOST ? host : dev;
            if (sl->info.kind == TGC_KIND_TENSOR && sl->info.shape.rank == TGC_RANK_UNKNOWN) {
                if (sp->n_unplanned < TGC_MEMORY_TOP) sp->unplanned[sp->n_unplanned] = id;
                sp->n_unplanned++; /* sized when its node runs */
                continue;
            }
            if (sl->bytes <= 0) continue;
            if (sl->shared_send && !tgc_checked_add_i64(sp->held_sends_bytes, sl->bytes, &sp->held_sends_bytes))
                c->overflow = true;
            tgc_memory_tensor *t = &sp->tensors[sp->n_tensors];
            t->node = id;
            t->port = port;
            t->first = sl->first;
            t->last = sl->last;
            t->bytes = sl->bytes;
            t->dtype = sl->info.dtype;
            t->rank = sl->info.shape.rank > 0 ? sl->info.shape.rank : 0;
            for (int d = 0; d < t->rank; d++) t->dims[d] = sl->info.shape.dims[d].v;
            sl->tensor = sp->n_tensors++;
            int32_t whole = whole_of(c, c->base[id] + port);
            slot_info *ws = whole >= 0 ? &c->slots[whole] : NULL;
            if (ws != NULL && ws->whole_buffer >= 0) { /* a part or a whole of a Concat in place */
                t->buffer = ws->whole_buffer;
                tgc_memory_buffer *b = &sp->buffers[t->buffer];
                if (t->last > b->last) b->last = t->last;
            } else if (ws != NULL) { /* its first writer makes the whole */
                t->buffer = ws->whole_buffer = sp->n_buffers++;
                sp->buffers[t->buffer] = (tgc_memory_buffer){c->places[whole].bytes, t->first, t->last, 0, sl->tensor};
            } else if (sl->from >= 0 && c->slots[sl->from].tensor >= 0) {
                t->buffer = sp->tensors[c->slots[sl->from].tensor].buffer;
                tgc_memory_buffer *b = &sp->buffers[t->buffer];
                if (t->last > b->last) b->last = t->last;
            } else {
                t->buffer = sp->n_buffers++;
                sp->buffers[t->buffer] = (tgc_memory_buffer){t->bytes, t->first, t->last, 0, sl->tensor};
            }
            if (!tgc_checked_add_i64(sp->naive_sum, t->bytes, &sp->naive_sum)) c->overflow = true;
        }
    }
    char binds[256];
    if (c->overflow)
        return tgc_diag_error(c->diags, c->mp->g->path, (tgc_srcpos){0, 0}, "size-overflow",
                              "the memory plan of %s: its tensors' bytes add up past 2^63 - 1 (symbols bound: %s)",
                              dev->name, bindings_str(c->mp, binds, sizeof binds));
    tgc_memory_space *both[2] = {dev, host};
    for (int i = 0; i < 2; i++) {
        tgc_memory_space *sp = both[i];
        sp->n_steps = pg->n_nodes;
        sp->lower_bound = tgc_memory_lower_bound(sp->buffers, sp->n_buffers, sp->n_steps, &sp->busiest_step);
        if (sp->lower_bound < 0) return TGC_ERR_NOMEM;
        s = tgc_memory_assign_offsets(sp->buffers, sp->n_buffers, sp->n_steps, sp->alignment, &sp->arena_bytes);
        if (s == TGC_ERR_INVALID)
            return tgc_diag_error(c->diags, c->mp->g->path, (tgc_srcpos){0, 0}, "size-overflow",
                                  "the memory plan of %s: its arena would pass 2^63 - 1 bytes (symbols bound: %s)",
                                  sp->name, bindings_str(c->mp, binds, sizeof binds));
        if (s != TGC_OK) return s;
    }
    return TGC_OK;
}

static tgc_status plan_partition(tgc_memory_plan *mp, const concrete *cc, int part, tgc_diags *diags) {
    const tgc_partition *pt = &mp->parts->parts[part];
    part_ctx c = {.mp = mp, .cc = cc, .part = part, .pg = pt->graph, .origin = pt->origin, .diags = diags,
                  .kind = mp->parts->devices[pt->device].kind};
    tgc_memory_space *dev = &mp->spaces[2 * part], *host = &mp->spaces[2 * part + 1];
    snprintf(dev->name, sizeof dev->name, "%s", pt->device_name);
    snprintf(host->name, sizeof host->name, "host");
    dev->part = host->part = part;
    host->host = true;
    dev->alignment = tgc_backend_get(c.kind)->alignment;
    host->alignment = TGC_MEMORY_ALIGN_HOST;
    dev->busiest_step = host->busiest_step = -1;
    tgc_status threads_st = TGC_OK; /* a malformed spec: the default, as the session reports the error itself */
    dev->threads = host->threads = tgc_threads_option(pt->device_name, c.kind, mp->threads, NULL, &threads_st);
    dev->workspace_limit = tgc_workspace_limit_of(mp->memory_limits, pt->device_name);
    tgc_status s = part_ctx_init(&c);
    if (s == TGC_OK) {
        read_slots(&c, dev, host);
        find_forwarding(&c);
        s = find_places(&c);
        if (s == TGC_OK) s = read_footprints(&c, dev);
    }
    if (s == TGC_OK) s = drop_replaced(&c, dev);
    if (s == TGC_OK) s = fill_spaces(&c, dev, host);
    part_ctx_release(&c);
    return s;
}

/* ---- the plan ------------------------------------------------------------------- */

static tgc_memory_plan *plan_alloc(const tgc_graph *g) {
    tgc_memory_plan *mp = tgc_calloc(1, sizeof *mp);
    if (mp == NULL) return NULL;
    mp->g = g;
    size_t ns = (size_t)g->n_symbols + 1;
    mp->symbols = tgc_malloc(ns * sizeof *mp->symbols);
    mp->bound = tgc_calloc(ns, sizeof *mp->bound);
    mp->defaulted = tgc_calloc(ns, sizeof *mp->defaulted);
    if (mp->symbols == NULL || mp->bound == NULL || mp->defaulted == NULL) {
        tgc_memory_plan_free(mp);
        return NULL;
    }
    for (int32_t i = 0; i < g->n_symbols; i++) mp->symbols[i] = -1;
    return mp;
}

/* Plans mp->parts with mp->symbols bound. */
static tgc_status plan_fill(tgc_memory_plan *mp, tgc_diags *diags) {
    for (int32_t i = 0; i < mp->g->n_symbols; i++) mp->bound[i] = mp->symbols[i] >= 0;
    mp->n_spaces = 2 * mp->parts->n_parts;
    mp->spaces = tgc_calloc((size_t)mp->n_spaces + 1, sizeof *mp->spaces);
    if (mp->spaces == NULL) return TGC_ERR_NOMEM;
    concrete cc;
    tgc_status s = concrete_build(mp, &cc, diags);
    for (int i = 0; s == TGC_OK && i < mp->parts->n_parts; i++) s = plan_partition(mp, &cc, i, diags);
    concrete_release(&cc);
    if (s == TGC_ERR_NOMEM) tgc_diag_error(diags, mp->g->path, (tgc_srcpos){0, 0}, "out-of-memory",
                                           "out of host memory while planning memory");
    return s;
}

tgc_status tgc_memory_plan_build(const tgc_graph *g, const tgc_partitioning *parts, const int64_t *symbols,
                                 tgc_diags *diags, tgc_memory_plan **out) {
    return tgc_memory_plan_build_pools(g, parts, symbols, NULL, NULL, diags, out);
}

tgc_status tgc_memory_plan_build_pools(const tgc_graph *g, const tgc_partitioning *parts, const int64_t *symbols,
                                       const char *threads, const char *memory_limits, tgc_diags *diags,
                                       tgc_memory_plan **out) {
    *out = NULL;
    tgc_memory_plan *mp = plan_alloc(g);
    if (mp == NULL) return TGC_ERR_NOMEM;
    mp->parts = parts;
    mp->threads = threads;
    mp->memory_limits = memory_limits;
    for (int32_t i = 0; symbols != NULL && i < g->n_symbols; i++) mp->symbols[i] = symbols[i];
    tgc_status s = plan_fill(mp, diags);
    if (s != TGC_OK) {
        tgc_memory_plan_free(mp);
        return s;
    }
    mp->threads = mp->memory_limits = NULL; /* borrowed for the call only */
    *out = mp;
    return TGC_OK;
}

tgc_status tgc_graph_memory_plan(const tgc_graph *g, const char *devices, const tgc_memory_plan_options *opts,
                                 tgc_diags *diags, tgc_memory_plan **out) {
    *out = NULL;
    /* Plan the graph a session would run: compiled the same way. */
    tgc_compiled *c = tgc_calloc(1, sizeof *c);
    if (c == NULL) return TGC_ERR_NOMEM;
    tgc_compile_options co = {.optimize = opts != NULL ? opts->optimize : TGC_OPTIMIZE_DEFAULT,
                              .float16 = opts != NULL && opts->float16 != 0,
                              .soft_placement = opts != NULL && opts->soft_placement, .partition = true};
    if (opts != NULL && opts->placement == TGC_PLACEMENT_AUTO)
        tgc_compile_options_auto(&co, opts->memory_limits, opts->threads, opts->max_inflight);
    tgc_status s = tgc_compile(g, devices, &co, diags, c);
    tgc_memory_plan *mp = s == TGC_OK ? plan_alloc(c->g) : NULL;
    if (mp == NULL) {
        tgc_compiled_release(c);
        tgc_free(c);
        return s != TGC_OK ? s : TGC_ERR_NOMEM;
    }
    mp->compiled = c;
    mp->parts = &c->parts;
    mp->device_list = tgc_strdup(devices != NULL ? devices : tgc_default_device_list());
    s = mp->device_list != NULL ? TGC_OK : TGC_ERR_NOMEM;
    if (s == TGC_OK && opts != NULL && opts->bind != NULL)
        s = tgc_memory_parse_bind(mp->g, opts->bind, mp->symbols, diags);
    mp->threads = opts != NULL ? opts->threads : NULL; /* pools as the session's: workspaces per thread */
    mp->memory_limits = opts != NULL ? opts->memory_limits : NULL;
    if (s == TGC_OK) s = plan_fill(mp, diags);
    mp->threads = mp->memory_limits = NULL; /* borrowed for the call only */
    if (s != TGC_OK) {
        tgc_memory_plan_free(mp);
        return s;
    }
    if (opts != NULL) tgc_memory_plan_set_inflight(mp, opts->max_inflight);
    *out = mp;
    return TGC_OK;
}

void tgc_memory_plan_set_inflight(tgc_memory_plan *mp, int inflight) {
    int64_t earlier = inflight > 1 ? inflight - 1 : 0;
    for (int i = 0; i < mp->n_spaces; i++) {
        tgc_memory_space *sp = &mp->spaces[i];
        int64_t held = 0;
        if (!tgc_checked_mul_i64(sp->held_sends_bytes, earlier, &held)) held = INT64_MAX / 2;
        int64_t base = sp->arena_bytes - sp->pipelined_bytes;
        sp->pipelined_bytes = held;
        if (!tgc_checked_add_i64(base, held, &sp->arena_bytes)) sp->arena_bytes = INT64_MAX / 2;
    }
}

void tgc_memory_plan_free(tgc_memory_plan *mp) {
    if (mp == NULL) return;
    for (int i = 0; mp->spaces != NULL && i < mp->n_spaces; i++) {
        tgc_free(mp->spaces[i].tensors);
        tgc_free(mp->spaces[i].buffers);
        tgc_free(mp->spaces[i].workspaces);
    }
    tgc_free(mp->spaces);
    tgc_free(mp->symbols);
    tgc_free(mp->bound);
    tgc_free(mp->defaulted);
    tgc_free(mp->device_list);
    tgc_compiled_release(mp->compiled);
    tgc_free(mp->compiled);
    tgc_free(mp);
}

tgc_status tgc_memory_parse_bind(const tgc_graph *g, const char *bind, int64_t *symbols, tgc_diags *diags) {
    for (const char *p = bind; *p != '\0';) {
        size_t len = strcspn(p, ",");
        const char *eq = memchr(p, '=', len);
        char name[128];
        size_t nlen = eq != NULL ? (size_t)(eq - p) : 0;
        int32_t sym = -1;
        if (eq != NULL && nlen > 0 && nlen < sizeof name) {
            memcpy(name, p, nlen);
            name[nlen] = '\0';
            sym = tgc_strmap_get(&g->symbol_ids, name);
        }
        char *end = NULL;
        long long v = eq != NULL ? strtoll(eq + 1, &end, 10) : -1;
        if (eq == NULL || nlen == 0 || end == eq + 1 || end != p + len || v < 0) {
            return tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "bad-bind",
                                  "--bind takes SYMBOL=N[,SYMBOL=N...] with N >= 0, got '%.*s'", (int)len, p);
        }
        if (sym < 0) {
            char list[512] = "";
            for (int32_t i = 0; i < g->n_symbols && strlen(list) < sizeof list - 40; i++) {
                if (g->symbol_fresh != NULL && g->symbol_fresh[i]) continue;
                if (list[0] != '\0') strcat(list, ", ");
                strncat(list, g->symbols[i], sizeof list - strlen(list) - 1);
            }
            return tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "bad-bind",
                                  "--bind: the graph has no symbol '%s' (its symbols: %s)", name,
                                  list[0] ? list : "none");
        }
        symbols[sym] = (int64_t)v;
        p += len;
        if (*p == ',') p++;
    }
    return TGC_OK;
}

typedef struct live_item {
    int64_t bytes;
    int32_t tensor;
} live_item;

static int live_cmp(const void *pa, const void *pb) {
    const live_item *a = pa, *b = pb;
    if (a->bytes != b->bytes) return a->bytes > b->bytes ? -1 : 1;
    return (a->tensor > b->tensor) - (a->tensor < b->tensor);
}

int tgc_memory_space_live_at(const tgc_memory_space *sp, int32_t step, int32_t *out, int max) {
    if (step < 0 || sp->n_buffers == 0 || max <= 0) return 0;
    int32_t *newest = tgc_malloc((size_t)sp->n_buffers * sizeof *newest);
    live_item *items = tgc_malloc((size_t)sp->n_buffers * sizeof *items);
    int n = 0;
    if (newest != NULL && items != NULL) {
        for (int32_t b = 0; b < sp->n_buffers; b++) newest[b] = -1;
        for (int32_t t = 0; t < sp->n_tensors; t++) {
            const tgc_memory_buffer *b = &sp->buffers[sp->tensors[t].buffer];
            if (b->first <= step && step <= b->last && sp->tensors[t].first <= step) newest[sp->tensors[t].buffer] = t;
        }
        for (int32_t b = 0; b < sp->n_buffers; b++)
            if (newest[b] >= 0) items[n++] = (live_item){sp->buffers[b].bytes, newest[b]};
        qsort(items, (size_t)n, sizeof *items, live_cmp);
        if (n > max) n = max;
        for (int i = 0; i < n; i++) out[i] = items[i].tensor;
    }
    tgc_free(newest);
    tgc_free(items);
    return n;
}
