/* Weights held once (session.h): a kernel that keeps a constant in its own
 * layout (oneDNN's packed GEMM B, Winograd-transformed filters, the
 * depthwise lanes' transposed filters; devices/kernel_cache.h) builds that
 * layout while the session is made, and the original is let go once every
 * reader stands in for it, as ONNX Runtime's session state does with
 * kernels' PrePack. Building before the first step means no step can race
 * the release, and the device never holds a weight twice: a candidate is
 * borrowed uncounted until it is settled, one reader at a time. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE */
#include "executor/session.h"
#include "executor/step.h"

#include "devices/node_exec.h"
#include "support/alloc.h"
#include "support/diag.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* The inputs of node id (bit i: input i) that its kernel's cache will
 * stand in for: a kernel with static shapes whose footprint says so. */
static uint32_t replaced_inputs(const tgc_plan *p, int32_t id) {
    if (p->role[id] != TGC_ROLE_KERNEL || !p->static_shapes[id] || p->absorbed[id]) return 0;
    tgc_kernel_footprint f =
        tgc_kernel_node_footprint(p->kernel[id], p->g, id, tgc_parallel_width(p->pool), p->workspace_limit);
    return f.replaces_inputs & p->const_inputs[id];
}

void tgc_plan_find_replaceable(tgc_plan *p) {
    const tgc_graph *g = p->g;
    if (!tgc_device_host_memory(p->device) || p->replaced == NULL) return;
    int32_t *covered = tgc_calloc((size_t)g->n_nodes + 1, sizeof *covered);
    if (covered == NULL) return; /* nothing replaced: every weight loads as before */
    for (int32_t id = 0; id < g->n_nodes; id++) {
        const tgc_node *n = &g->nodes[id];
        uint32_t replaces = replaced_inputs(p, id); /* const_inputs: bits of inputs below 32 only */
        for (int i = 0; replaces != 0 && i < n->n_inputs && i < 32; i++)
            if (replaces & (1u << i)) covered[n->inputs[i].node]++;
    }
    for (int32_t id = 0; id < g->n_nodes; id++) {
        const tgc_const *c = g->nodes[id].data;
        p->replaced[id] = p->role[id] == TGC_ROLE_CONST && !p->on_host[id] && c != NULL && c->nbytes > 0 &&
                          c->dtype != TGC_STRING && covered[id] > 0 &&
                          covered[id] == p->use_count[p->value_base[id]];
    }
    tgc_free(covered);
}

/* A zeroed host block the device does not count, freed with its buffer. */
static tgc_status synthetic_buffer(tgc_device *d, const tgc_value *v, tgc_buffer **out) {
    size_t bytes = tgc_value_nbytes(v);
    if (bytes == SIZE_MAX) return TGC_ERR_NOMEM;
    void *mem = bytes > 0 ? tgc_calloc(1, bytes) : NULL;
    if (bytes > 0 && mem == NULL) return TGC_ERR_NOMEM;
    tgc_status s = tgc_buffer_wrap_host(d, mem, bytes, tgc_free, mem, out);
    if (s != TGC_OK) tgc_free(mem);
    return s;
}

/* v shaped as info (static: the graph's concrete shape). */
static void value_of(const tgc_tensor_info *info, tgc_value *v) {
    *v = (tgc_value){.dtype = info->dtype, .rank = info->shape.rank};
    for (int r = 0; r < v->rank; r++) v->dims[r] = info->shape.dims[r].v;
}

/* Runs node id's kernel once to build its cache (prepack_only: it
 * computes nothing): its initializers as loaded, every other input and
 * every output a zeroed synthetic buffer. Its failure is no error here
 * (the weight then stays; a step reports the kernel's own). */
static tgc_status run_reader(tgc_plan *p, int32_t id) {
    const tgc_node *n = &p->g->nodes[id];
    size_t ni = (size_t)n->n_inputs, no = (size_t)n->n_outputs;
    tgc_value *in = tgc_calloc(ni + no + 1, sizeof *in), *out = in != NULL ? in + ni : NULL;
    tgc_buffer **made = tgc_calloc(ni + no + 1, sizeof *made);
    tgc_status s = in != NULL && made != NULL ? TGC_OK : TGC_ERR_NOMEM;
    for (size_t i = 0; s == TGC_OK && i < ni; i++) {
        tgc_ref r = n->inputs[i];
        in[i].dtype = TGC_DTYPE_INVALID;
        if (r.node < 0) continue;
        if (p->role[r.node] == TGC_ROLE_CONST) {
            in[i] = p->weights[p->value_base[r.node] + r.port];
            continue;
        }
        value_of(tgc_graph_ref_info(p->g, r), &in[i]);
        s = synthetic_buffer(p->device, &in[i], &made[i]);
        in[i].buf = made[i];
    }
    for (size_t o = 0; s == TGC_OK && o < no; o++) {
        value_of(&n->outputs[o], &out[o]);
        s = synthetic_buffer(p->device, &out[o], &made[ni + o]);
        out[o].buf = made[ni + o];
    }
    if (s == TGC_OK) {
        char err[256];
        tgc_kernel_ctx ctx = {.node = n, .device = p->device, .inputs = in, .n_inputs = n->n_inputs,
                              .outputs = out, .n_outputs = n->n_outputs, .error = err, .error_size = sizeof err,
                              .pool = p->pool, .cache = &p->caches[id], .const_inputs = p->const_inputs[id],
                              .fused_act = p->fused_act[id].row >= 0 ? &p->fused_act[id] : NULL,
                              .def = p->kernel[id], .prepack_only = true, .workspace_limit = p->workspace_limit};
        (void)tgc_node_exec_kernel(&ctx);
    }
    for (size_t i = 0; made != NULL && i < ni + no; i++) tgc_buffer_release(made[i]);
    tgc_free(made);
    tgc_free(in);
    return s;
}

/* An initializer's data, the constant that owns it, and how many
 * partitions' constants borrow it and have not yet let it go. */
typedef struct weight_owner {
    const void *data;
    tgc_const *owner;
    int32_t holders;
    bool in_source; /* the caller's graph's (release_weights) */
} weight_owner;

struct tgc_weight_owners {
    weight_owner *list; /* sorted by data */
    size_t count;
};

static int by_data(const void *a, const void *b) {
    uintptr_t x = (uintptr_t)((const weight_owner *)a)->data, y = (uintptr_t)((const weight_owner *)b)->data;
    return (x > y) - (x < y);
}

/* Appends (list NULL: counts) g's top-level constants that own their data. */
static void list_owners(tgc_graph *g, bool in_source, weight_owner *list, size_t *count) {
    for (int32_t id = 0; g != NULL && id < g->n_nodes; id++) {
        tgc_const *c = g->nodes[id].kind == TGC_NODE_CONST ? g->nodes[id].data : NULL;
        if (c == NULL || c->borrowed || c->nbytes == 0 || c->dtype == TGC_STRING) continue;
        if (list != NULL) list[*count] = (weight_owner){c->data, c, 0, in_source};
        (*count)++;
    }
}

/* Frees the data of an owner no partition holds and marks it released. */
static void release_owner(weight_owner *w) {
    tgc_free(w->owner->data);
    w->owner->data = NULL;
    w->owner->released = true;
}

static weight_owner *find_owner(const tgc_weight_owners *o, const void *data) {
    weight_owner key = {.data = data};
    return o != NULL ? bsearch(&key, o->list, o->count, sizeof key, by_data) : NULL;
}

tgc_status tgc_weight_owners_make(tgc_session *s, tgc_graph *source, tgc_weight_owners **out) {
    *out = NULL;
    tgc_weight_owners *o = tgc_calloc(1, sizeof *o);
    size_t count = 0;
    /* the graphs the optimized one borrows from (split-heavy's cut graph owns the one it was cut from) */
    tgc_graph *first = s->compiled.optimized != NULL ? s->compiled.optimized->source : NULL;
    list_owners(s->compiled.optimized, false, NULL, &count);
    for (tgc_graph *g = first; g != NULL; g = g->source) list_owners(g, true, NULL, &count);
    list_owners(source, true, NULL, &count);
    if (o == NULL || (o->list = tgc_malloc((count + 1) * sizeof *o->list)) == NULL) {
        tgc_free(o);
        return TGC_ERR_NOMEM;
    }
    list_owners(s->compiled.optimized, false, o->list, &o->count);
    for (tgc_graph *g = first; g != NULL; g = g->source) list_owners(g, true, o->list, &o->count);
    list_owners(source, true, o->list, &o->count);
    qsort(o->list, o->count, sizeof *o->list, by_data);
    const tgc_partitioning *parts = &s->compiled.parts;
    for (int i = 0; i < parts->n_parts; i++) {
        const tgc_graph *pg = parts->parts[i].graph;
        for (int32_t id = 0; pg != NULL && id < pg->n_nodes; id++) {
            const tgc_const *c = pg->nodes[id].kind == TGC_NODE_CONST ? pg->nodes[id].data : NULL;
            weight_owner *w = c != NULL && c->nbytes > 0 ? find_owner(o, c->data) : NULL;
            if (w != NULL) w->holders++;
        }
    }
    /* The caller's weights the optimizations left behind (a float16 weight
     * a folded Cast made a float32 one of, a Conv's weight a folded
     * BatchNormalization rescaled): no partition reads them, and the leave
     * lets them go now rather than with the caller's graph. */
    for (size_t i = 0; i < o->count; i++)
        if (o->list[i].in_source && o->list[i].holders == 0) release_owner(&o->list[i]);
    *out = o;
    return TGC_OK;
}

void tgc_weight_owners_free(tgc_weight_owners *o) {
    if (o != NULL) tgc_free(o->list);
    tgc_free(o);
}

/* A holder of `data` let it go: the last one frees it in its owner. */
static void owners_release(tgc_weight_owners *o, const void *data) {
    weight_owner *w = find_owner(o, data);
    if (w == NULL || w->holders <= 0 || --w->holders > 0) return;
    release_owner(w);
}

typedef struct guard {
    void *mem;
    size_t nbytes;
} guard;

static void guard_release(void *ctx) {
    guard *gd = ctx;
    munmap(gd->mem, gd->nbytes);
    tgc_free(gd);
}

/* A buffer of nbytes whose every byte faults when touched: address space
 * only (PROT_NONE, MAP_NORESERVE), so that a kernel that read a weight it
 * said it would not read fails at once instead of reading freed memory. */
static tgc_status guard_buffer(tgc_device *d, size_t nbytes, tgc_buffer **out) {
    guard *gd = tgc_malloc(sizeof *gd);
    if (gd == NULL) return TGC_ERR_NOMEM;
    gd->nbytes = nbytes;
    gd->mem = mmap(NULL, nbytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (gd->mem == MAP_FAILED) {
        tgc_free(gd);
        return TGC_ERR_NOMEM;
    }
    tgc_status s = tgc_buffer_wrap_host(d, gd->mem, nbytes, guard_release, gd, out);
    if (s != TGC_OK) guard_release(gd);
    return s;
}

/* Whether every reader of initializer `cid` built a cache that replaced it. */
static bool all_replaced(const tgc_plan *p, int32_t cid) {
    for (int32_t e = p->consumer_at[cid]; e < p->consumer_at[cid + 1]; e++) {
        int32_t id = p->consumers[e];
        const tgc_node *n = &p->g->nodes[id];
        uint32_t done = atomic_load(&p->caches[id].replaces);
        for (int i = 0; i < n->n_inputs; i++)
            if (n->inputs[i].node == cid && (i >= 32 || !(done & (1u << i)))) return false;
    }
    return true;
}

/* Settles candidate cid: a guard in its slot (and the data freed when
 * this was its last holder and owners say so), or the weight borrowed
 * counted. */
static tgc_status settle(tgc_plan *p, int32_t cid, tgc_weight_owners *owners, tgc_diags *diags) {
    const tgc_node *n = &p->g->nodes[cid];
    tgc_value *v = &p->weights[p->value_base[cid]];
    tgc_buffer *old = v->buf, *now = NULL;
    bool replaced = all_replaced(p, cid);
    tgc_status s = replaced ? guard_buffer(p->device, old->nbytes, &now)
                            : tgc_buffer_borrow_host(p->device, n->data->data, n->data->nbytes, &now);
    if (s != TGC_OK && replaced) { /* no address space for a guard: the uncounted borrow serves */
        p->replaced_bytes += (int64_t)old->nbytes;
        return TGC_OK;
    }
    if (s != TGC_OK) {
        char what[512];
        p->replaced[cid] = false;
        return tgc_diag_add(diags, TGC_SEV_ERROR, p->g->path, n->pos, "out-of-memory", "initializer '%s' on %s: %s",
                            n->name, p->device->name, tgc_oom_str(what, sizeof what, "its data", v, p->device)),
               TGC_ERR_NOMEM;
    }
    v->buf = now;
    tgc_buffer_release(old);
    p->replaced[cid] = replaced;
    if (replaced) {
        p->replaced_bytes += (int64_t)now->nbytes;
        owners_release(owners, n->data->data);
    }
    return TGC_OK;
}

tgc_status tgc_plan_prepack(tgc_plan *p, tgc_weight_owners *owners, tgc_diags *diags) {
    const tgc_graph *g = p->g;
    if (p->replaced == NULL) return TGC_OK;
    for (int32_t cid = 0; cid < g->n_nodes; cid++) {
        if (!p->replaced[cid]) continue;
        for (int32_t e = p->consumer_at[cid]; e < p->consumer_at[cid + 1]; e++) {
            int32_t id = p->consumers[e];
            if (atomic_load(&p->caches[id].data) != NULL) continue; /* built for another weight of it */
            tgc_status s = run_reader(p, id);
            if (s != TGC_OK) return s;
        }
        tgc_status s = settle(p, cid, owners, diags);
        if (s != TGC_OK) return s;
    }
    return TGC_OK;
}

