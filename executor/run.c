/* One run of a session, in topological order on one device.
 *
 * The lifetime rule, in the manner of ggml's graph allocator: each output
 * slot has a count of the consumers that still need it; a node drops its
 * inputs' counts when it finishes, and the slot's buffer goes back to the
 * device the moment its count reaches zero. A kernel that declares
 * forward_input gets that input's buffer as its output when the input's
 * last user is this node and nobody else holds the buffer (buffer
 * forwarding). Output shapes come from the op's own inference function over
 * the actual input shapes, so shape logic lives in one place. */
#include "executor/run.h"

#include "graph/infer.h"
#include "support/alloc.h"
#include "support/diag.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

typedef struct run_state {
    tgc_session *s;
    tgc_value *vals;    /* slot -> live value (buf NULL once released) */
    int32_t *remaining; /* slot -> consumers still to come */
    tgc_diags *diags;
    int64_t *symbols;   /* symbol index -> bound value, -1 unbound */
} run_state;

static void release_slot(run_state *r, int32_t slot) {
    tgc_buffer_release(r->vals[slot].buf);
    r->vals[slot].buf = NULL;
}

static tgc_status feed_error(run_state *r, const char *fmt, const char *a, const char *b, const char *c) {
    return tgc_diag_error(r->diags, NULL, (tgc_srcpos){0, 0}, "bad-feed", fmt, a, b, c);
}

/* Checks a feed against its declaration, binding symbols as it goes. */
static tgc_status bind_feed(run_state *r, const tgc_node *input, const tgc_tensor *t) {
    const tgc_tensor_info *want = &input->outputs[0];
    char shape_want[256], shape_got[256];
    if (t->v.dtype != want->dtype)
        return feed_error(r, "input '%s' is declared %s but the feed is %s", input->name, tgc_dtype_name(want->dtype),
                          tgc_dtype_name(t->v.dtype));
    tgc_shape got = tgc_shape_of(t->v.rank, t->v.dims);
    tgc_shape_str(r->s->g, &want->shape, shape_want, sizeof shape_want);
    tgc_shape_str(r->s->g, &got, shape_got, sizeof shape_got);
    if (got.rank != want->shape.rank)
        return feed_error(r, "input '%s' is declared with shape %s but the feed has shape %s", input->name, shape_want,
                          shape_got);
    for (int i = 0; i < got.rank; i++) {
        tgc_dim d = want->shape.dims[i];
        int64_t v = t->v.dims[i];
        if (tgc_dim_known(d) && d.v != v)
            return feed_error(r, "input '%s' is declared with shape %s but the feed has shape %s", input->name,
                              shape_want, shape_got);
        if (!tgc_dim_known(d)) {
            if (r->symbols[d.sym] >= 0 && r->symbols[d.sym] != v) {
                char msg[128];
                snprintf(msg, sizeof msg, "%" PRId64 " elsewhere and %" PRId64 " here", r->symbols[d.sym], v);
                return feed_error(r, "input '%s': symbol %s is bound to %s", input->name, r->s->g->symbols[d.sym], msg);
            }
            r->symbols[d.sym] = v;
        }
    }
    return TGC_OK;
}

/* Runtime inference: fills the output values' dtypes and dims. */
static tgc_status infer_outputs(run_state *r, const tgc_node *n, const tgc_value *in, tgc_value *out, char *err,
                                size_t err_size) {
    tgc_tensor_info infos[TGC_RUN_MAX_IO], outs[TGC_RUN_MAX_IO];
    tgc_dim values[TGC_RUN_MAX_IO][TGC_MAX_VALUE_LEN];
    memset(outs, 0, sizeof outs);
    for (int i = 0; i < n->n_inputs; i++) {
        tgc_tensor_info *info = &infos[i];
        memset(info, 0, sizeof *info);
        info->dtype = in[i].buf != NULL || in[i].dtype != TGC_DTYPE_INVALID ? in[i].dtype : TGC_DTYPE_INVALID;
        info->shape = tgc_shape_of(in[i].rank, in[i].dims);
        info->value_len = -1;
        int64_t numel = tgc_value_numel(&in[i]);
        const void *p = tgc_buffer_host_ptr(in[i].buf);
        if ((in[i].dtype == TGC_INT64 || in[i].dtype == TGC_INT32) && in[i].rank <= 1 && numel <= TGC_MAX_VALUE_LEN &&
            (p != NULL || numel == 0)) {
            for (int64_t k = 0; k < numel; k++)
                values[i][k] = tgc_dim_of(in[i].dtype == TGC_INT64 ? ((const int64_t *)p)[k] : ((const int32_t *)p)[k]);
            info->value = values[i];
            info->value_len = (int)numel;
        }
    }
    for (int k = 0; k < n->n_outputs; k++) {
        outs[k].dtype = TGC_DTYPE_INVALID;
        outs[k].value_len = -1;
    }
    tgc_diags *scratch = tgc_diags_create();
    if (scratch == NULL) return TGC_ERR_NOMEM;
    tgc_infer_ctx ctx = {.graph = (tgc_graph *)r->s->g, .node = (tgc_node *)n, .diags = scratch,
                         .input_infos = infos, .output_infos = outs, .runtime = true};
    tgc_status s = n->op->infer(&ctx);
    if (s == TGC_OK && ctx.unresolved) {
        snprintf(err, err_size, "cannot determine an output shape from the inputs");
        s = TGC_ERR_RUNTIME;
    } else if (s != TGC_OK) {
        snprintf(err, err_size, "%s", tgc_diags_count(scratch) ? tgc_diag_message(scratch, 0) : "inference failed");
        s = s == TGC_ERR_NOMEM ? s : TGC_ERR_RUNTIME;
    }
    tgc_diags_free(scratch);
    for (int k = 0; k < n->n_outputs; k++) {
        if (s == TGC_OK) {
            out[k].dtype = outs[k].dtype;
            out[k].rank = outs[k].shape.rank;
            for (int d = 0; d < out[k].rank; d++) out[k].dims[d] = outs[k].shape.dims[d].v;
        }
        tgc_free(outs[k].value);
    }
    return s;
}

/* Output 0 may take input j's buffer when this node is its last user and
 * only the run holds it (not a weight, not a feed) and the sizes match. */
static bool can_forward(run_state *r, const tgc_node *n, int j, const tgc_value *out, const tgc_device *out_device) {
    if (j < 0 || j >= n->n_inputs || n->inputs[j].node < 0) return false;
    tgc_ref ref = n->inputs[j];
    int32_t slot = r->s->value_base[ref.node] + ref.port;
    int uses_here = 0;
    for (int i = 0; i < n->n_inputs; i++)
        if (n->inputs[i].node == ref.node && n->inputs[i].port == ref.port) uses_here++;
    const tgc_value *in = &r->vals[slot];
    return in->buf != NULL && in->buf->device == out_device && r->remaining[slot] == uses_here &&
           atomic_load(&in->buf->refs) == 1 &&
           in->buf->nbytes == tgc_value_nbytes(out) && in->dtype == out->dtype;
}

static tgc_status node_error(run_state *r, const tgc_node *n, const tgc_device *d, const char *rule, const char *what) {
    return tgc_diag_error(r->diags, r->s->g->path, n->pos, rule, "node '%s' (%s) on %s: %s", n->name, n->op_name,
                          d->name, what);
}

static tgc_status alloc_outputs(run_state *r, const tgc_node *n, const tgc_kernel_def *k, tgc_device *d,
                                tgc_value *out) {
    for (int i = 0; i < n->n_outputs; i++) {
        tgc_device *od = k->host_outputs & (1u << i) ? tgc_host_device() : d;
        if (i == 0 && can_forward(r, n, k->forward_input, &out[0], od)) {
            tgc_ref ref = n->inputs[k->forward_input];
            out[0].buf = tgc_buffer_retain(r->vals[r->s->value_base[ref.node] + ref.port].buf);
            continue;
        }
        size_t nbytes = tgc_value_nbytes(&out[i]);
        if (tgc_buffer_alloc(od, nbytes, &out[i].buf) != TGC_OK) {
            char what[512], shape[200];
            tgc_shape sh = tgc_shape_of(out[i].rank, out[i].dims);
            tgc_allocator_stats st = tgc_device_stats(od);
            snprintf(what, sizeof what,
                     "out of memory allocating output %d (%s %s, %zu bytes); %s has %" PRId64
                     " bytes in use, limit %" PRId64,
                     i, tgc_dtype_name(out[i].dtype), tgc_shape_str(NULL, &sh, shape, sizeof shape), nbytes, od->name,
                     st.bytes_in_use, st.bytes_limit);
            return node_error(r, n, d, "out-of-memory", what);
        }
    }
    return TGC_OK;
}

static bool host_memory(const tgc_device *d) { return d->kind == TGC_DEVICE_CPU; }

/* Copies `v` into a new buffer on `to` (*out); through the host when
 * neither side is host memory. */
static tgc_status copy_value(const tgc_value *v, tgc_device *to, tgc_buffer **out) {
    size_t nbytes = tgc_value_nbytes(v);
    tgc_device *from = v->buf->device;
    tgc_status s = tgc_buffer_alloc(to, nbytes, out);
    if (s != TGC_OK || nbytes == 0) return s;
    if (host_memory(from)) s = to->ops->copy_from_host(to, (*out)->mem, 0, tgc_buffer_host_ptr(v->buf), nbytes);
    else if (host_memory(to)) s = from->ops->copy_to_host(from, tgc_buffer_host_ptr(*out), v->buf->mem, 0, nbytes);
    else {
        tgc_buffer *host = NULL;
        s = copy_value(v, tgc_host_device(), &host);
        if (s == TGC_OK) s = to->ops->copy_from_host(to, (*out)->mem, 0, tgc_buffer_host_ptr(host), nbytes);
        tgc_buffer_release(host);
    }
    if (s != TGC_OK) {
        tgc_buffer_release(*out);
        *out = NULL;
    }
    return s;
}

/* Puts each input where the kernel reads it: host memory for its host
 * arguments, the node's device for the rest (metadata-only inputs stay).
 * Inputs already in place are used as they are; the others are copied
 * into `staged` buffers that the caller releases after the kernel. */
static tgc_status stage_inputs(const tgc_node *n, const tgc_kernel_def *k, tgc_device *d, tgc_value *in,
                               tgc_buffer **staged) {
    for (int i = 0; i < n->n_inputs; i++) {
        if (in[i].buf == NULL || (k->metadata_inputs & (1u << i))) continue;
        tgc_device *at = in[i].buf->device;
        bool want_host = (k->host_inputs & (1u << i)) || host_memory(d);
        bool in_place = want_host ? host_memory(at) : at == d;
        if (in_place) continue;
        tgc_status s = copy_value(&in[i], want_host ? tgc_host_device() : d, &staged[i]);
        if (s != TGC_OK) return s;
        in[i].buf = staged[i];
    }
    return TGC_OK;
}

static tgc_status run_op(run_state *r, int32_t id) {
    tgc_session *s = r->s;
    const tgc_node *n = &s->g->nodes[id];
    const tgc_kernel_def *k = s->kernels[id];
    tgc_device *d = tgc_session_device_of(s, id);
    if (n->n_inputs > TGC_RUN_MAX_IO || n->n_outputs > TGC_RUN_MAX_IO)
        return node_error(r, n, d, "unsupported", "too many inputs or outputs");
    tgc_value in[TGC_RUN_MAX_IO], out[TGC_RUN_MAX_IO];
    memset(in, 0, sizeof in);
    memset(out, 0, sizeof out);
    for (int i = 0; i < n->n_inputs; i++) {
        tgc_ref ref = n->inputs[i];
        if (ref.node >= 0) in[i] = r->vals[s->value_base[ref.node] + ref.port];
        else in[i].dtype = TGC_DTYPE_INVALID;
    }
    char err[512] = "";
    tgc_buffer *staged[TGC_RUN_MAX_IO] = {0};
    tgc_status st = stage_inputs(n, k, d, in, staged);
    if (st != TGC_OK) {
        snprintf(err, sizeof err, "cannot move an input to %s", d->name);
        st = node_error(r, n, d, "copy-failed", err);
    }
    if (st == TGC_OK) st = infer_outputs(r, n, in, out, err, sizeof err);
    if (st != TGC_OK) st = st == TGC_ERR_NOMEM ? st : node_error(r, n, d, "runtime-shape", err);
    if (st == TGC_OK) st = alloc_outputs(r, n, k, d, out);
    if (st == TGC_OK) {
        tgc_kernel_ctx ctx = {.node = n, .device = d, .inputs = in, .n_inputs = n->n_inputs, .outputs = out,
                              .n_outputs = n->n_outputs, .error = err, .error_size = sizeof err};
        st = k->fn(&ctx);
        if (st != TGC_OK) st = node_error(r, n, d, "kernel-failed", err[0] ? err : tgc_status_name(st));
    }
    for (int i = 0; i < n->n_inputs; i++) tgc_buffer_release(staged[i]);
    if (st != TGC_OK) {
        for (int i = 0; i < n->n_outputs; i++) tgc_buffer_release(out[i].buf);
        return st;
    }
    int32_t base = s->value_base[id];
    for (int i = 0; i < n->n_outputs; i++) {
        r->vals[base + i] = out[i];
        if (r->remaining[base + i] == 0) release_slot(r, base + i); /* an output nobody reads */
    }
    for (int i = 0; i < n->n_inputs; i++) {
        tgc_ref ref = n->inputs[i];
        if (ref.node < 0) continue;
        int32_t slot = s->value_base[ref.node] + ref.port;
        if (--r->remaining[slot] == 0) release_slot(r, slot);
    }
    return TGC_OK;
}

static tgc_status run_source(run_state *r, int32_t id, const tgc_tensor *feed) {
    tgc_session *s = r->s;
    const tgc_node *n = &s->g->nodes[id];
    int32_t slot = s->value_base[id];
    tgc_device *d = tgc_session_device_of(s, id);
    if (n->kind == TGC_NODE_CONST) {
        r->vals[slot] = s->weights[slot];
        tgc_buffer_retain(r->vals[slot].buf);
    } else if (host_memory(d)) {
        r->vals[slot] = feed->v; /* host memory is every cpu device's memory: no copy */
        tgc_buffer_retain(r->vals[slot].buf);
    } else {
        r->vals[slot] = feed->v;
        r->vals[slot].buf = NULL;
        if (copy_value(&feed->v, d, &r->vals[slot].buf) != TGC_OK)
            return tgc_diag_error(r->diags, s->g->path, n->pos, "copy-failed", "input '%s': cannot copy the feed to %s",
                                  n->name, d->name);
    }
    if (r->remaining[slot] == 0) release_slot(r, slot);
    return TGC_OK;
}

/* Copies a graph output into a new host tensor for the caller. */
static tgc_status fetch(run_state *r, tgc_ref ref, tgc_tensor **out) {
    const tgc_value *v = &r->vals[r->s->value_base[ref.node] + ref.port];
    tgc_status s = tgc_tensor_create(v->dtype, v->rank, v->dims, NULL, out);
    if (s != TGC_OK) return s;
    size_t nbytes = tgc_value_nbytes(v);
    if (nbytes == 0) return TGC_OK;
    return v->buf->device->ops->copy_to_host(v->buf->device, (void *)tgc_tensor_data(*out), v->buf->mem, 0, nbytes);
}

tgc_status tgc_session_run(tgc_session *s, int n_feeds, const char *const *names, tgc_tensor *const *feeds,
                           tgc_tensor **outputs, tgc_diags *diags) {
    const tgc_graph *g = s->g;
    for (int i = 0; i < g->n_outputs; i++) outputs[i] = NULL;
    run_state r = {.s = s, .diags = diags};
    r.vals = tgc_calloc((size_t)s->n_values + 1, sizeof *r.vals);
    r.remaining = tgc_malloc(((size_t)s->n_values + 1) * sizeof *r.remaining);
    r.symbols = tgc_malloc(((size_t)g->n_symbols + 1) * sizeof *r.symbols);
    const tgc_tensor **feed_of = tgc_calloc((size_t)g->n_inputs_nodes + 1, sizeof *feed_of);
    tgc_status st = r.vals && r.remaining && r.symbols && feed_of ? TGC_OK : TGC_ERR_NOMEM;
    if (st == TGC_OK) {
        memcpy(r.remaining, s->use_count, (size_t)s->n_values * sizeof *r.remaining);
        for (int32_t i = 0; i < g->n_symbols; i++) r.symbols[i] = -1;
    }
    /* Match feeds to inputs: each input fed exactly once. */
    for (int i = 0; st == TGC_OK && i < n_feeds; i++) {
        int32_t id = tgc_graph_find(g, names[i]);
        if (id < 0 || g->nodes[id].kind != TGC_NODE_INPUT)
            st = feed_error(&r, "'%s' is not a graph input%s%s", names[i], "", "");
        else if (feed_of[id] != NULL)
            st = feed_error(&r, "input '%s' is fed twice%s%s", names[i], "", "");
        else if ((st = bind_feed(&r, &g->nodes[id], feeds[i])) == TGC_OK)
            feed_of[id] = feeds[i];
    }
    for (int32_t id = 0; st == TGC_OK && id < g->n_inputs_nodes; id++)
        if (feed_of[id] == NULL) st = feed_error(&r, "input '%s' is not fed%s%s", g->nodes[id].name, "", "");
    for (int32_t i = 0; st == TGC_OK && i < g->n_nodes; i++) {
        int32_t id = g->topo[i];
        const tgc_node *n = &g->nodes[id];
        st = n->kind == TGC_NODE_OP ? run_op(&r, id) : run_source(&r, id, n->kind == TGC_NODE_INPUT ? feed_of[id] : NULL);
    }
    for (int i = 0; st == TGC_OK && i < g->n_outputs; i++) st = fetch(&r, g->outputs[i], &outputs[i]);
    if (st != TGC_OK)
        for (int i = 0; i < g->n_outputs; i++) {
            tgc_tensor_release(outputs[i]);
            outputs[i] = NULL;
        }
    /* Whatever is still held (graph outputs, or everything after an error) goes back now. */
    for (int32_t slot = 0; r.vals != NULL && slot < s->n_values; slot++) release_slot(&r, slot);
    tgc_free(r.vals);
    tgc_free(r.remaining);
    tgc_free(r.symbols);
    tgc_free(feed_of);
    return st;
}
