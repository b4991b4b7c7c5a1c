/* A partition's plan: roles, kernels, output slots with their use counts,
 * pending counts and consumer lists, and the weights on the device (on a
 * cpu, the graph's own copy, borrowed). */
#include "executor/session.h"
#include "executor/step.h"

#include "devices/memory_limit.h"
#include "graph/node_work.h"
#include "graph/subgraph.h"

#include "support/alloc.h"
#include "support/diag.h"
#include "support/string_slots.h"
#include "support/thread_pool.h"

#include <stdint.h>
#include <string.h>

static tgc_status assign_roles(tgc_plan *p, tgc_diags *diags) {
    const tgc_graph *g = p->g;
    tgc_status result = TGC_OK;
    for (int32_t id = 0; id < g->n_nodes; id++) {
        const tgc_node *n = &g->nodes[id];
        p->value_base[id] = p->n_values;
        p->n_values += n->n_outputs;
        if (n->kind == TGC_NODE_INPUT) p->role[id] = TGC_ROLE_INPUT;
        else if (n->kind == TGC_NODE_CONST) p->role[id] = TGC_ROLE_CONST;
        else if (strcmp(n->op_name, "_Send") == 0) p->role[id] = TGC_ROLE_SEND;
        else if (strcmp(n->op_name, "_Recv") == 0) p->role[id] = TGC_ROLE_RECV;
        else if (tgc_node_has_subgraphs(n)) p->role[id] = TGC_ROLE_CONTROL;
        else {
            p->role[id] = TGC_ROLE_KERNEL;
            p->kernel[id] = tgc_kernel_for_node(g, n, p->device->kind);
            if (p->kernel[id] == NULL)
                result = tgc_diag_error(diags, g->path, n->pos, "no-kernel", "node '%s' (%s): no kernel for %s on %s",
                                        tgc_node_label(n), n->op_name, tgc_dtype_name(tgc_kernel_node_dtype(g, n)),
                                        p->device->name);
        }
        if (p->role[id] == TGC_ROLE_RECV) {
            const tgc_attr *host = tgc_node_attr(n, "host_memory");
            p->on_host[id] = host != NULL && host->i != 0;
        }
    }
    return result;
}

void tgc_plan_host_reads(const tgc_graph *g, const tgc_kernel_def *const *kernel, bool *host_only) {
    for (int32_t id = 0; id < g->n_nodes; id++) host_only[id] = true;
    for (int32_t id = 0; id < g->n_nodes; id++) {
        const tgc_node *n = &g->nodes[id];
        for (int i = 0; i < n->n_inputs; i++) {
            int32_t from = n->inputs[i].node;
            bool host_arg = tgc_kernel_host_input(kernel[id], i) || tgc_kernel_metadata_input(kernel[id], i);
            if (from >= 0 && !host_arg) host_only[from] = false;
        }
    }
}

/* An initializer or a graph input whose every consumer takes it as a
 * host-memory input (a shape argument) lives in host memory; others on
 * the partition's device. (A feed so read is not copied to a gpu and back:
 * an integer Div of two feeds on gpu0 waited twice a step for that.) */
static tgc_status place_constants(tgc_plan *p) {
    const tgc_graph *g = p->g;
    bool *host_only = tgc_malloc(((size_t)g->n_nodes + 1) * sizeof *host_only);
    if (host_only == NULL) return TGC_ERR_NOMEM;
    tgc_plan_host_reads(g, p->kernel, host_only);
    for (int32_t id = 0; id < g->n_nodes; id++)
        if (p->role[id] == TGC_ROLE_CONST || p->role[id] == TGC_ROLE_INPUT) p->on_host[id] = host_only[id];
    tgc_free(host_only);
    return TGC_OK;
}

/* p->const_inputs: which inputs of each node are this plan's initializers
 * (what a kernel may cache across runs). */
static void mark_const_inputs(tgc_plan *p) {
    const tgc_graph *g = p->g;
    for (int32_t id = 0; id < g->n_nodes; id++) {
        const tgc_node *n = &g->nodes[id];
        for (int i = 0; i < n->n_inputs && i < 32; i++)
            if (n->inputs[i].node >= 0 && p->role[n->inputs[i].node] == TGC_ROLE_CONST) p->const_inputs[id] |= 1u << i;
    }
}

static tgc_status count_edges(tgc_plan *p, const tgc_partitioning *parts, int part) {
    const tgc_graph *g = p->g;
    size_t nn = (size_t)g->n_nodes;
    p->use_count = tgc_calloc((size_t)p->n_values + 1, sizeof *p->use_count);
    p->weights = tgc_calloc((size_t)p->n_values + 1, sizeof *p->weights);
    p->consumer_at = tgc_calloc(nn + 1, sizeof *p->consumer_at);
    if (p->use_count == NULL || p->weights == NULL || p->consumer_at == NULL) return TGC_ERR_NOMEM;
    int64_t edges = 0;
    for (int32_t id = 0; id < g->n_nodes; id++) {
        const tgc_node *n = &g->nodes[id];
        for (int i = 0; i < n->n_inputs; i++) {
            tgc_ref r = n->inputs[i];
            if (r.node < 0) continue;
            p->use_count[p->value_base[r.node] + r.port]++;
            p->pending[id]++;
            p->consumer_at[r.node + 1]++;
            edges++;
        }
        for (int i = 0; i < n->n_controls; i++) {
            p->pending[id]++;
            p->consumer_at[n->controls[i].node + 1]++;
            edges++;
        }
    }
    for (int i = 0; i < parts->n_outputs; i++)
        if (parts->outputs[i].part == part)
            p->use_count[p->value_base[parts->outputs[i].node] + parts->outputs[i].port]++;
    for (size_t id = 0; id < nn; id++) p->consumer_at[id + 1] += p->consumer_at[id];
    p->consumers = tgc_malloc((size_t)(edges ? edges : 1) * sizeof *p->consumers);
    int32_t *fill = tgc_malloc((nn + 1) * sizeof *fill);
    if (p->consumers == NULL || fill == NULL) {
        tgc_free(fill);
        return TGC_ERR_NOMEM;
    }
    memcpy(fill, p->consumer_at, (nn + 1) * sizeof *fill);
    for (int32_t id = 0; id < g->n_nodes; id++) {
        const tgc_node *n = &g->nodes[id];
        for (int i = 0; i < n->n_inputs; i++)
            if (n->inputs[i].node >= 0) p->consumers[fill[n->inputs[i].node]++] = id;
        for (int i = 0; i < n->n_controls; i++) p->consumers[fill[n->controls[i].node]++] = id;
    }
    tgc_free(fill);
    return TGC_OK;
}

static tgc_status load_weights(tgc_plan *p, tgc_diags *diags) {
    const tgc_graph *g = p->g;
    for (int32_t id = 0; id < g->n_nodes; id++) {
        if (p->role[id] != TGC_ROLE_CONST) continue;
        const tgc_node *n = &g->nodes[id];
        const tgc_const *c = n->data;
        tgc_device *d = p->on_host[id] ? tgc_host_device() : p->device;
        tgc_value *v = &p->weights[p->value_base[id]];
        v->dtype = c->dtype;
        v->rank = c->shape.rank;
        for (int i = 0; i < v->rank; i++) v->dims[i] = c->shape.dims[i].v;
        /* In host memory the graph's copy serves (it outlives the session):
         * borrowed, not copied; uncounted while a kernel's layout may
         * replace it (tgc_plan_prepack settles it). Strings get their own
         * slots. */
        bool borrow = tgc_device_host_memory(d) && c->dtype != TGC_STRING && c->nbytes > 0;
        tgc_status s = p->replaced[id] ? tgc_buffer_wrap_host(d, c->data, c->nbytes, NULL, NULL, &v->buf)
                       : borrow        ? tgc_buffer_borrow_host(d, c->data, c->nbytes, &v->buf)
                                       : tgc_buffer_alloc_typed(d, c->dtype, c->nbytes, &v->buf);
        if (s != TGC_OK) {
            char what[512];
            return tgc_diag_add(diags, TGC_SEV_ERROR, g->path, n->pos, "out-of-memory", "initializer '%s' on %s: %s",
                                n->name, d->name, tgc_oom_str(what, sizeof what, "its data", v, d)),
                   TGC_ERR_NOMEM;
        }
        if (c->nbytes > 0 && c->dtype == TGC_STRING) /* the buffer gets its own copy of each string */
            s = tgc_string_slots_copy(tgc_buffer_host_ptr(v->buf), c->data, c->nbytes / sizeof(char *));
        else if (c->nbytes > 0 && !borrow) s = d->ops->copy_from_host(d, v->buf->mem, 0, c->data, c->nbytes);
        if (s != TGC_OK)
            return tgc_diag_add(diags, TGC_SEV_ERROR, g->path, n->pos, "copy-failed",
                                "initializer '%s': cannot copy %zu bytes to %s", n->name, c->nbytes, d->name),
                   s == TGC_ERR_NOMEM ? s : TGC_ERR_RUNTIME;
    }
    return TGC_OK;
}

/* Each input node of the partition -> its feed in the source graph: a
 * graph input's index, a subgraph's formal input or capture. */
static void map_feeds(tgc_plan *p, const tgc_partitioning *parts, const tgc_graph *source, int part) {
    for (int32_t id = 0; id < p->g->n_nodes; id++) p->feed_index[id] = -1;
    p->n_feeds = tgc_graph_feed_count(source);
    for (int32_t i = 0; i < p->n_feeds; i++) {
        int32_t in = tgc_graph_feed_node(source, i);
        if (parts->part_of[in] == part) p->feed_index[parts->local_id[in]] = i;
    }
}

static void body_plan_release(tgc_body_plan *bp) {
    for (int i = 0; bp->plans != NULL && i < bp->compiled.parts.n_parts; i++) tgc_plan_release(&bp->plans[i]);
    tgc_free(bp->plans);
    tgc_compiled_release(&bp->compiled);
}

/* Places, partitions and plans subgraph `body` on the session's devices, as
 * the session's graph is (recursing into the control nodes inside it, at
 * most TGC_MAX_SUBGRAPH_DEPTH deep). */
static tgc_status body_plan_build(tgc_session *s, const tgc_graph *body, tgc_body_plan *bp, tgc_diags *diags) {
    memset(bp, 0, sizeof *bp);
    bp->g = body;
    tgc_compile_options co = {.optimize = TGC_OPTIMIZE_NONE, .soft_placement = s->soft_placement, .partition = true};
    tgc_status st = tgc_compile_on(body, s->compiled.devices, s->n_devices, &co, diags, &bp->compiled);
    const tgc_partitioning *parts = &bp->compiled.parts;
    if (st == TGC_OK && (bp->plans = tgc_calloc((size_t)parts->n_parts + 1, sizeof *bp->plans)) == NULL)
        st = TGC_ERR_NOMEM;
    /* A subgraph runs in its control node's process: its pairs are local. */
    for (int i = 0; st == TGC_OK && s->distributed && i < parts->n_parts; i++)
        if (s->compiled.devices[parts->parts[i].device].task != s->rank)
            st = tgc_diag_error(diags, body->path, (tgc_srcpos){0, 0}, "subgraph-across-processes",
                                "a subgraph run on rank %d places nodes on %s, a device of another process: "
                                "subgraphs of If, Loop and Scan run in their node's process; give their nodes "
                                "device specs of task %d (docs/distributed.md)",
                                s->rank, parts->parts[i].device_name, s->rank);
    for (int i = 0; st == TGC_OK && i < parts->n_parts; i++)
        st = tgc_plan_build_for(s, parts, body, i, &bp->plans[i], diags);
    return st;
}

/* The subgraphs of every control node of p, each planned. */
static tgc_status plan_control(tgc_session *s, tgc_plan *p, tgc_diags *diags) {
    const tgc_graph *g = p->g;
    for (int32_t id = 0; id < g->n_nodes; id++) {
        if (p->role[id] != TGC_ROLE_CONTROL) continue;
        const tgc_node *n = &g->nodes[id];
        if (g->depth >= TGC_MAX_SUBGRAPH_DEPTH) /* the loader never makes one this deep */
            return tgc_diag_error(diags, g->path, n->pos, "over-limit", "node '%s': subgraphs nest too deep",
                                  n->name);
        tgc_control_plan *cp = &p->control[id];
        cp->bodies = tgc_calloc((size_t)n->n_attrs + 1, sizeof *cp->bodies);
        if (cp->bodies == NULL) return TGC_ERR_NOMEM;
        for (int a = 0; a < n->n_attrs; a++) {
            if (n->attrs[a].type != TGC_ATTR_GRAPH || n->attrs[a].graph == NULL) continue;
            tgc_body_plan *bp = &cp->bodies[cp->n_bodies++];
            tgc_status st = body_plan_build(s, n->attrs[a].graph, bp, diags);
            if (st != TGC_OK) return st;
        }
    }
    return TGC_OK;
}

/* A dtype and a shape of known dims, within the executor's rank. */
static bool concrete(const tgc_tensor_info *info) {
    if (info->dtype == TGC_DTYPE_INVALID || info->shape.rank < 0 || info->shape.rank > TGC_MAX_TENSOR_RANK)
        return false;
    for (int d = 0; d < info->shape.rank; d++)
        if (!tgc_dim_known(info->shape.dims[d])) return false;
    return true;
}

/* A kernel node whose inputs (those not omitted: an optional input left
 * out has no shape) and outputs all have concrete dtypes and shapes in the
 * graph needs no inference at run time: feeds are checked
 * against the inputs' declared shapes before a step, so by induction every
 * value has its compile-time shape, and an inferred shape that did not
 * depend on a runtime value (a value not known at compile time makes a
 * fresh symbolic dim) is the one the runtime would infer again. Kernels
 * that size their outputs themselves are left out. */
static void mark_static_shapes(tgc_plan *p) {
    const tgc_graph *g = p->g;
    for (int32_t id = 0; id < g->n_nodes; id++) {
        const tgc_node *n = &g->nodes[id];
        bool ok = p->role[id] == TGC_ROLE_KERNEL && p->kernel[id] != NULL && !p->kernel[id]->sizes_outputs;
        for (int i = 0; ok && i < n->n_inputs; i++)
            ok = n->inputs[i].node < 0 || concrete(tgc_graph_ref_info(g, n->inputs[i]));
        for (int k = 0; ok && k < n->n_outputs; k++) ok = concrete(&n->outputs[k]);
        p->static_shapes[id] = ok;
    }
}

/* The Concats of a cpu partition that take their inputs in place
 * (concat_in_place.h); p->places stays NULL when none does. */
static tgc_status find_places(tgc_plan *p) {
    if (p->n_values == 0 || !tgc_device_host_memory(p->device)) return TGC_OK;
    p->places = tgc_malloc((size_t)p->n_values * sizeof *p->places);
    if (p->places == NULL) return TGC_ERR_NOMEM;
    tgc_concat_places_find(p->g, p->kernel, p->value_base, p->use_count, true, p->places);
    bool any = false;
    for (int32_t v = 0; v < p->n_values && !any; v++) any = p->places[v].whole;
    if (any && pthread_mutex_init(&p->places_lock, NULL) == 0) return TGC_OK;
    tgc_free(p->places); /* none placed, or no lock to make the wholes under: p->places NULL, nothing to destroy */
    p->places = NULL;
    return any ? TGC_ERR_NOMEM : TGC_OK;
}

tgc_status tgc_plan_build(tgc_session *s, int part, tgc_plan *p, tgc_diags *diags) {
    return tgc_plan_build_for(s, &s->compiled.parts, s->g, part, p, diags);
}

tgc_status tgc_plan_build_for(tgc_session *s, const tgc_partitioning *parts, const tgc_graph *source, int part,
                              tgc_plan *p, tgc_diags *diags) {
    memset(p, 0, sizeof *p);
    const tgc_partition *pt = &parts->parts[part];
    p->g = pt->graph;
    p->device = s->devices[pt->device];
    p->pool = s->pools[pt->device];
    p->workspace_limit = tgc_workspace_limit_of(s->memory_limits, pt->device_name);
    size_t nn = (size_t)p->g->n_nodes + 1;
    p->role = tgc_calloc(nn, sizeof *p->role);
    p->kernel = tgc_calloc(nn, sizeof *p->kernel);
    p->on_host = tgc_calloc(nn, sizeof *p->on_host);
    p->value_base = tgc_calloc(nn, sizeof *p->value_base);
    p->pending = tgc_calloc(nn, sizeof *p->pending);
    p->feed_index = tgc_calloc(nn, sizeof *p->feed_index);
    p->caches = tgc_calloc(nn, sizeof *p->caches);
    p->const_inputs = tgc_calloc(nn, sizeof *p->const_inputs);
    p->fused_act = tgc_calloc(nn, sizeof *p->fused_act);
    p->absorbed = tgc_calloc(nn, sizeof *p->absorbed);
    p->static_shapes = tgc_calloc(nn, sizeof *p->static_shapes);
    p->replaced = tgc_calloc(nn, sizeof *p->replaced);
    p->control = tgc_calloc(nn, sizeof *p->control);
    p->impl = tgc_calloc(nn, sizeof *p->impl);
    for (size_t i = 0; p->caches != NULL && i < nn; i++) tgc_kernel_cache_init(&p->caches[i]);
    for (size_t i = 0; p->fused_act != NULL && i < nn; i++) p->fused_act[i].row = -1;
    if (!p->role || !p->kernel || !p->on_host || !p->value_base || !p->pending || !p->feed_index || !p->caches ||
        !p->const_inputs || !p->fused_act || !p->absorbed || !p->static_shapes || !p->control ||
        !p->impl || !p->replaced)
        return TGC_ERR_NOMEM;
    tgc_status st = assign_roles(p, diags);
    if (st != TGC_OK) return st;
    if ((st = place_constants(p)) != TGC_OK) return st;
    mark_const_inputs(p);
    mark_static_shapes(p);
    map_feeds(p, parts, source, part);
    st = count_edges(p, parts, part);
    if (st == TGC_OK) st = find_places(p);
    if (st == TGC_OK && !s->settings->no_fusion) tgc_plan_fuse_activations(p);
    if (st == TGC_OK && !s->settings->no_prepack) tgc_plan_find_replaceable(p);
    if (st == TGC_OK) st = load_weights(p, diags);
    if (st == TGC_OK) st = tgc_plan_prepack(p, s->owners, diags);
    if (st == TGC_OK) st = plan_control(s, p, diags);
    if (st == TGC_OK) st = tgc_plan_order(p);
    if (st == TGC_OK) st = tgc_plan_weigh(p);
    return st;
}

tgc_status tgc_plan_order(tgc_plan *p) {
    const tgc_graph *g = p->g;
    if (p->pool == NULL || tgc_thread_pool_size(p->pool) != 1 || g->n_nodes > INT32_MAX / 2 - 1) return TGC_OK;
    for (int32_t id = 0; id < g->n_nodes; id++) { /* an input made later would never come in id order */
        for (int i = 0; i < g->nodes[id].n_inputs; i++)
            if (g->nodes[id].inputs[i].node >= id) return TGC_OK;
        for (int i = 0; i < g->nodes[id].n_controls; i++)
            if (g->nodes[id].controls[i].node >= id) return TGC_OK;
    }
    p->next_in_order = tgc_malloc(((size_t)g->n_nodes + 1) * sizeof *p->next_in_order);
    if (p->next_in_order == NULL) return TGC_ERR_NOMEM;
    int32_t next = g->n_nodes;
    for (int32_t id = g->n_nodes - 1; id >= 0; id--) {
        bool turn = p->role[id] == TGC_ROLE_KERNEL || p->role[id] == TGC_ROLE_CONTROL;
        p->next_in_order[id] = turn ? next : -1;
        if (turn) next = id;
    }
    p->first_in_order = next;
    return TGC_OK;
}

/* A node of less work (FLOPs) is weighed with the chain behind it: the
 * nhwc-conv pass's Transpose into a branch's first convolution, a
 * MaxPool before its 1x1 (GoogLeNet's Inception branches). */
#define LIGHT_FLOPS 1e6

/* Whether node c of p reads node id and otherwise only initializers
 * (which are there at a step's start). */
static bool waits_for_only(const tgc_plan *p, int32_t c, int32_t id) {
    const tgc_node *n = &p->g->nodes[c];
    for (int i = 0; i < n->n_inputs; i++)
        if (n->inputs[i].node >= 0 && n->inputs[i].node != id && p->role[n->inputs[i].node] != TGC_ROLE_CONST)
            return false;
    for (int i = 0; i < n->n_controls; i++)
        if (n->controls[i].node != id && p->role[n->controls[i].node] != TGC_ROLE_CONST) return false;
    return true;
}

tgc_status tgc_plan_weigh(tgc_plan *p) {
    if (p->pool == NULL || tgc_thread_pool_size(p->pool) < 2) return TGC_OK;
    int width = tgc_thread_pool_size(p->pool);
    p->work = tgc_calloc((size_t)p->g->n_nodes + 1, sizeof *p->work);
    p->coarse = tgc_calloc((size_t)p->g->n_nodes + 1, sizeof *p->coarse);
    if (p->work == NULL || p->coarse == NULL) return TGC_ERR_NOMEM;
    for (int32_t id = p->g->n_nodes - 1; id >= 0; id--) { /* consumers first, in a graph in topological order */
        double bytes;
        if (p->role[id] == TGC_ROLE_KERNEL) {
            tgc_node_work(p->g, id, &p->work[id], &bytes);
            p->coarse[id] =
                tgc_kernel_node_footprint(p->kernel[id], p->g, id, width, p->workspace_limit).coarse_pieces;
        }
        int32_t c = p->consumer_at[id + 1] - p->consumer_at[id] == 1 ? p->consumers[p->consumer_at[id]] : -1;
        if (p->work[id] < LIGHT_FLOPS && c > id && waits_for_only(p, c, id))
            p->work[id] += p->work[c]; /* a light node, whose one reader waits for it alone */
    }
    return TGC_OK;
}

void tgc_plan_release(tgc_plan *p) {
    if (p->weights != NULL)
        for (int32_t i = 0; i < p->n_values; i++) tgc_buffer_release(p->weights[i].buf);
    tgc_free(p->role);
    tgc_free(p->next_in_order);
    tgc_free(p->work);
    tgc_free(p->coarse);
    tgc_free(p->kernel);
    tgc_free(p->on_host);
    tgc_free(p->value_base);
    tgc_free(p->use_count);
    tgc_free(p->pending);
    tgc_free(p->consumer_at);
    tgc_free(p->consumers);
    tgc_free(p->weights);
    tgc_free(p->feed_index);
    for (int32_t i = 0; p->caches != NULL && p->g != NULL && i <= p->g->n_nodes; i++)
        tgc_kernel_cache_clear(&p->caches[i]);
    tgc_free(p->caches);
    tgc_free(p->const_inputs);
    tgc_free(p->fused_act);
    tgc_free(p->absorbed);
    tgc_free(p->static_shapes);
    tgc_free(p->replaced);
    if (p->places != NULL) pthread_mutex_destroy(&p->places_lock);
    tgc_free(p->places);
    tgc_free((void *)p->impl);
    for (int32_t i = 0; p->control != NULL && p->g != NULL && i < p->g->n_nodes; i++) {
        for (int b = 0; b < p->control[i].n_bodies; b++) body_plan_release(&p->control[i].bodies[b]);
        tgc_free(p->control[i].bodies);
    }
    tgc_free(p->control);
    memset(p, 0, sizeof *p);
}
