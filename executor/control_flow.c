/* Control flow: If, Loop, Scan and SequenceMap, run by the executor.
 *
 * A control node's subgraphs were placed, partitioned and planned when the
 * session was made (plan.c: tgc_body_plan). When the node is ready, it
 * takes no thread: it sets up a frame for its subgraph (step.h) and starts
 * it; the frame's nodes run on their devices' pools like any others. When
 * the frame's last node finishes, body_done collects what the subgraph
 * gave, and either resets the frame and starts the next iteration (queued,
 * never nested: a loop of 10^5 iterations stays one call deep) or completes
 * the node with its outputs. So:
 *   - If runs the branch its condition picks, once;
 *   - Loop runs its body while the trip count M and the condition allow
 *     (ONNX: without a cond input the body's condition is ignored), its
 *     carried values handed from one iteration to the next without a copy,
 *     its scan outputs kept per iteration and stacked at the end;
 *   - Scan runs its body once per slice of its scan inputs (reversed for a
 *     direction of 1), stacking each scan output into its place;
 *   - SequenceMap runs its body once per element of its sequences.
 * Each iteration's buffers are freed at their last use within it, as in
 * any run; what the frame keeps between iterations is its arrays. The
 * rendezvous keys of pairs inside a subgraph carry the step, the frame and
 * the iteration (tgc_frame.key), so pairs of different iterations never
 * meet.
 * A failure anywhere ends the loop at the iteration it happened in; the
 * message names the iteration (tgc_frame_where). A loop that passes the
 * session's max_iterations fails cleanly (rule "max-iterations"). */
#include "executor/step.h"

#include "graph/op_registry.h"
#include "graph/subgraph.h"
#include "support/alloc.h"
#include "support/checked.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

typedef enum cf_kind { CF_IF, CF_LOOP, CF_SCAN, CF_MAP } cf_kind;

static void (*_Atomic observer)(void *ctx, const char *node, int64_t iteration);
static void *_Atomic observer_ctx;

void tgc_control_observe(void (*fn)(void *ctx, const char *node, int64_t iteration), void *ctx) {
    observer_ctx = ctx;
    observer = fn;
}

typedef struct cf_run {
    tgc_step *st;
    tgc_part_state *ps; /* the control node's */
    int32_t id;
    const tgc_node *n;
    cf_kind kind;
    const tgc_body_plan *body;
    const tgc_graph *bg; /* body->g */
    tgc_frame frame;
    tgc_value *feeds; /* the body's feeds: formal inputs, then captures */
    bool *take;
    int32_t n_formal;
    int64_t iter;  /* the iteration running */
    int64_t steps; /* Loop: M (-1: none); Scan, SequenceMap: how many */
    bool has_cond; /* Loop: a cond input, so the body's condition counts */
    int n_carried; /* Loop, Scan: carried values (feeds[first_carried...]) */
    int first_carried;
    int n_scan; /* scan outputs (Loop, Scan) or mapped outputs (SequenceMap) */
    tgc_value *out;       /* the node's outputs being made: n->n_outputs */
    tgc_value **per_iter; /* Loop: each scan output's per-iteration values */
    int64_t n_iter_vals, cap_iter_vals;
    tgc_value *scan_in; /* Scan: its scan inputs, in host memory */
    int n_scan_in;
} cf_run;

/* ---- small helpers ------------------------------------------------------------- */

static const tgc_value *input_value(const cf_run *r, int i) {
    tgc_ref ref = r->n->inputs[i];
    if (ref.node < 0) return NULL;
    const tgc_value *v = &r->ps->vals[r->ps->plan->value_base[ref.node] + ref.port];
    return v->buf != NULL ? v : NULL;
}

/* Fails the step for node r->n, naming where it runs. */
static void fail(cf_run *r, tgc_status status, const char *rule, const char *fmt, const char *what) {
    char where[256];
    char msg[512];
    snprintf(msg, sizeof msg, fmt, what);
    tgc_step_fail(r->st, status, r->n->pos, rule, "node '%s' (%s)%s: %s", tgc_node_label(r->n), r->n->op_name,
                  tgc_frame_where(r->ps, where, sizeof where), msg);
}

/* A scalar of `dtype` with the `bytes` at v, in new host memory. */
static tgc_status host_scalar(tgc_dtype dtype, const void *v, tgc_value *out) {
    *out = (tgc_value){.dtype = dtype};
    tgc_status s = tgc_buffer_alloc(tgc_host_device(), tgc_dtype_size(dtype), &out->buf);
    if (s == TGC_OK) memcpy(tgc_buffer_host_ptr(out->buf), v, tgc_dtype_size(dtype));
    else out->buf = NULL;
    return s;
}

/* The first byte or int64 of a one-element value, read wherever it is. */
static tgc_status read_scalar(const tgc_value *v, void *out, size_t size) {
    if (v->buf == NULL || tgc_value_numel(v) != 1 || tgc_dtype_size(v->dtype) != size) return TGC_ERR_RUNTIME;
    const void *p = tgc_buffer_host_ptr(v->buf);
    if (p != NULL) {
        memcpy(out, p, size);
        return TGC_OK;
    }
    return v->buf->device->ops->copy_to_host(v->buf->device, out, v->buf->mem, 0, size);
}

/* v's data in host memory: v itself (retained) or a copy. */
static tgc_status on_host(const tgc_value *v, tgc_value *out) {
    *out = *v;
    if (v->buf == NULL || tgc_device_host_memory(v->buf->device) || tgc_value_is_list(v)) {
        tgc_buffer_retain(out->buf);
        return TGC_OK;
    }
    out->buf = NULL;
    return tgc_buffer_copy(v->buf, tgc_value_nbytes(v), tgc_host_device(), &out->buf);
}

/* Product of dims [from, to). */
static int64_t span(const tgc_value *v, int from, int to) {
    int64_t n = 1;
    for (int d = from; d < to; d++) n *= v->dims[d];
    return n;
}

/* ---- the run's state -------------------------------------------------------------- */

static void run_free(cf_run *r) {
    tgc_frame_release(&r->frame);
    for (int32_t i = 0; r->feeds != NULL && r->take != NULL && i < tgc_graph_feed_count(r->bg); i++)
        if (r->take[i]) tgc_buffer_release(r->feeds[i].buf);
    for (int k = 0; r->out != NULL && k < r->n->n_outputs; k++) tgc_buffer_release(r->out[k].buf);
    for (int k = 0; r->per_iter != NULL && k < r->n_scan; k++) {
        for (int64_t i = 0; r->per_iter[k] != NULL && i < r->n_iter_vals; i++)
            tgc_buffer_release(r->per_iter[k][i].buf);
        tgc_free(r->per_iter[k]);
    }
    for (int i = 0; r->scan_in != NULL && i < r->n_scan_in; i++) tgc_buffer_release(r->scan_in[i].buf);
    tgc_free(r->per_iter);
    tgc_free(r->scan_in);
    tgc_free(r->feeds);
    tgc_free(r->take);
    tgc_free(r->out);
    tgc_free(r);
}

/* Ends the node: its outputs (when ok) go to its slots, the run's state is
 * freed, and the node completes in its own frame. */
static void complete(cf_run *r, bool ok) {
    tgc_step *st = r->st;
    tgc_part_state *ps = r->ps;
    int32_t id = r->id, base = ps->plan->value_base[id];
    for (int k = 0; ok && k < r->n->n_outputs; k++) {
        ps->vals[base + k] = r->out[k];
        r->out[k].buf = NULL;
        tgc_watch_set(st, ps, base + k, id);
    }
    run_free(r);
    tgc_node_complete(st, ps, id);
}

static void start_iteration(void *arg) {
    cf_run *r = arg;
    tgc_frame_start(&r->frame);
}

/* The frame's key for iteration r->iter. */
static bool set_key(cf_run *r) {
    int n = snprintf(r->frame.key, sizeof r->frame.key, "%s%s@%" PRId64 "/", r->ps->frame->key, r->n->name, r->iter);
    r->frame.iteration = r->iter;
    return n >= 0 && (size_t)n < sizeof r->frame.key;
}

/* Queues the next run of the frame (iteration r->iter, feeds set). */
static void launch(cf_run *r) {
    if (!set_key(r)) {
        fail(r, TGC_ERR_INVALID, "internal", "%s", "the rendezvous keys of its frame are too long");
        complete(r, false);
        return;
    }
    tgc_step_submit(r->st, r->ps->plan->pool, start_iteration, r);
}

/* ---- feeds per iteration ------------------------------------------------------------ */

/* The captures' feeds: the node's implicit inputs, borrowed (they live until it completes). */
static void feed_captures(cf_run *r) {
    for (int32_t j = 0; j < r->bg->n_captures; j++) {
        const tgc_value *v = input_value(r, r->bg->capture_input[j]);
        r->feeds[r->n_formal + j] = v != NULL ? *v : (tgc_value){.dtype = TGC_DTYPE_INVALID};
        r->take[r->n_formal + j] = false;
    }
}

/* Loop: iteration_num and cond for iteration r->iter (the carried values
 * are in place already). */
static tgc_status feed_loop(cf_run *r, bool cond) {
    uint8_t c = cond;
    tgc_status s = host_scalar(TGC_INT64, &r->iter, &r->feeds[0]);
    if (s == TGC_OK) s = host_scalar(TGC_BOOL, &c, &r->feeds[1]);
    return s;
}

/* Scan: slice t of each scan input (reversed where its direction is 1). */
static tgc_status feed_scan(cf_run *r) {
    const tgc_attr *axes = tgc_node_attr(r->n, "scan_input_axes");
    const tgc_attr *dirs = tgc_node_attr(r->n, "scan_input_directions");
    for (int j = 0; j < r->n_scan_in; j++) {
        const tgc_value *x = &r->scan_in[j];
        int64_t a = axes != NULL && (size_t)j < axes->n ? axes->ints[j] : 0;
        int axis = (int)(a < 0 ? a + x->rank : a);
        int64_t t = dirs != NULL && (size_t)j < dirs->n && dirs->ints[j] == 1 ? r->steps - 1 - r->iter : r->iter;
        tgc_value *v = &r->feeds[r->first_carried + r->n_carried + j];
        *v = (tgc_value){.dtype = x->dtype, .rank = x->rank - 1};
        for (int d = 0, to = 0; d < x->rank; d++)
            if (d != axis) v->dims[to++] = x->dims[d];
        size_t elem = tgc_dtype_size(x->dtype), inner = (size_t)span(x, axis + 1, x->rank) * elem;
        int64_t outer = span(x, 0, axis);
        tgc_status s = tgc_buffer_alloc(tgc_host_device(), inner * (size_t)outer, &v->buf);
        if (s != TGC_OK) {
            v->buf = NULL;
            return s;
        }
        char *dst = tgc_buffer_host_ptr(v->buf);
        const char *src = tgc_buffer_host_ptr(x->buf);
        for (int64_t o = 0; o < outer && inner > 0; o++)
            memcpy(dst + (size_t)o * inner, src + ((size_t)o * (size_t)r->steps + (size_t)t) * inner, inner);
    }
    return TGC_OK;
}

/* SequenceMap: element r->iter of each sequence input, the other inputs as they are. */
static void feed_map(cf_run *r) {
    for (int i = 0; i < r->n_formal; i++) {
        const tgc_value *v = input_value(r, i);
        if (tgc_value_is_list(v)) v = &((const tgc_value *)tgc_buffer_list_slots(v->buf))[r->iter];
        r->feeds[i] = *v;
        r->take[i] = false;
    }
}

/* ---- what each iteration gives ---------------------------------------------------- */

/* Scan: output `k` of this iteration into its place in the stacked output. */
static tgc_status stack_scan_output(cf_run *r, int k, const tgc_value *v) {
    tgc_value *out = &r->out[r->n_carried + k];
    const tgc_attr *axes = tgc_node_attr(r->n, "scan_output_axes");
    const tgc_attr *dirs = tgc_node_attr(r->n, "scan_output_directions");
    int64_t a = axes != NULL && (size_t)k < axes->n ? axes->ints[k] : 0;
    int axis = (int)(a < 0 ? a + v->rank + 1 : a);
    if (tgc_value_is_list(v) || v->rank >= TGC_MAX_RANK || axis < 0 || axis > v->rank) return TGC_ERR_RUNTIME;
    if (out->buf == NULL) { /* the first iteration sizes it */
        *out = (tgc_value){.dtype = v->dtype, .rank = v->rank + 1};
        for (int d = 0, from = 0; d < out->rank; d++) out->dims[d] = d == axis ? r->steps : v->dims[from++];
        if (tgc_buffer_alloc(tgc_host_device(), tgc_value_nbytes(out), &out->buf) != TGC_OK) {
            out->buf = NULL;
            return TGC_ERR_NOMEM;
        }
    }
    for (int d = 0, from = 0; d < out->rank; d++)
        if (d != axis && out->dims[d] != v->dims[from++]) return TGC_ERR_RUNTIME; /* its shape changed */
    if (out->dtype != v->dtype) return TGC_ERR_RUNTIME;
    tgc_value host;
    tgc_status s = on_host(v, &host);
    if (s != TGC_OK) return s;
    int64_t t = dirs != NULL && (size_t)k < dirs->n && dirs->ints[k] == 1 ? r->steps - 1 - r->iter : r->iter;
    size_t elem = tgc_dtype_size(v->dtype), inner = (size_t)span(v, axis, v->rank) * elem;
    int64_t outer = span(v, 0, axis);
    char *dst = tgc_buffer_host_ptr(out->buf);
    const char *src = tgc_buffer_host_ptr(host.buf);
    for (int64_t o = 0; o < outer && inner > 0; o++)
        memcpy(dst + ((size_t)o * (size_t)r->steps + (size_t)t) * inner, src + (size_t)o * inner, inner);
    tgc_buffer_release(host.buf);
    return TGC_OK;
}

/* Loop: keeps this iteration's scan outputs (retained) until the end. */
static tgc_status keep_loop_outputs(cf_run *r) {
    if (r->n_scan == 0) return TGC_OK;
    if (r->n_iter_vals == r->cap_iter_vals) {
        int64_t cap = r->cap_iter_vals ? r->cap_iter_vals * 2 : 16;
        for (int k = 0; k < r->n_scan; k++) {
            tgc_value *grown = tgc_realloc(r->per_iter[k], (size_t)cap * sizeof *grown);
            if (grown == NULL) return TGC_ERR_NOMEM;
            r->per_iter[k] = grown;
        }
        r->cap_iter_vals = cap;
    }
    for (int k = 0; k < r->n_scan; k++) {
        const tgc_value *v = tgc_frame_output(&r->frame, 1 + r->n_carried + k);
        r->per_iter[k][r->n_iter_vals] = *v;
        tgc_buffer_retain(v->buf);
    }
    r->n_iter_vals++;
    return TGC_OK;
}

/* Loop: each scan output's values stacked along a new first axis (in host
 * memory). No iteration: an empty tensor of the inferred shape. */
static tgc_status stack_loop_outputs(cf_run *r) {
    for (int k = 0; k < r->n_scan; k++) {
        tgc_value *out = &r->out[r->n_carried + k];
        const tgc_tensor_info *info = &r->n->outputs[r->n_carried + k];
        const tgc_value *first = r->n_iter_vals > 0 ? &r->per_iter[k][0] : NULL;
        *out = (tgc_value){.dtype = info->dtype, .rank = first ? first->rank + 1 : info->shape.rank};
        if (out->rank < 1 || out->rank > TGC_MAX_RANK) return TGC_ERR_RUNTIME;
        out->dims[0] = r->n_iter_vals;
        for (int d = 1; d < out->rank; d++)
            out->dims[d] = first ? first->dims[d - 1] : tgc_dim_known(info->shape.dims[d]) ? info->shape.dims[d].v : 0;
        if (tgc_buffer_alloc(tgc_host_device(), tgc_value_nbytes(out), &out->buf) != TGC_OK) {
            out->buf = NULL;
            return TGC_ERR_NOMEM;
        }
        size_t block = r->n_iter_vals > 0 ? tgc_value_nbytes(first) : 0;
        for (int64_t i = 0; i < r->n_iter_vals; i++) {
            const tgc_value *v = &r->per_iter[k][i];
            if (v->rank != first->rank || v->dtype != out->dtype || tgc_value_is_list(v) ||
                memcmp(v->dims, first->dims, (size_t)v->rank * sizeof v->dims[0]) != 0)
                return TGC_ERR_RUNTIME;
            tgc_value host;
            tgc_status s = on_host(v, &host);
            if (s != TGC_OK) return s;
            char *dst = tgc_buffer_host_ptr(out->buf);
            if (block > 0) memcpy(dst + (size_t)i * block, tgc_buffer_host_ptr(host.buf), block);
            tgc_buffer_release(host.buf);
        }
    }
    return TGC_OK;
}

/* The frame's run ended (on the thread that finished its last node). */
static void body_done(tgc_frame *f) {
    cf_run *r = f->ctx;
    tgc_step *st = r->st;
    if (atomic_load(&st->failed)) {
        complete(r, false);
        return;
    }
    tgc_status s = TGC_OK;
    bool more = false;
    const char *why = "%s";
    const char *what = "";
    switch (r->kind) {
    case CF_IF:
        for (int k = 0; k < r->n->n_outputs; k++) {
            r->out[k] = *tgc_frame_output(f, k);
            tgc_buffer_retain(r->out[k].buf);
        }
        break;
    case CF_LOOP: {
        uint8_t cond = 1;
        if (r->has_cond && read_scalar(tgc_frame_output(f, 0), &cond, 1) != TGC_OK) {
            s = TGC_ERR_RUNTIME;
            what = "the body's condition is not one bool";
            break;
        }
        for (int k = 0; k < r->n_carried; k++) {
            tgc_value *slot = &r->feeds[r->first_carried + k];
            *slot = *tgc_frame_output(f, 1 + k);
            tgc_buffer_retain(slot->buf);
        }
        s = keep_loop_outputs(r);
        r->iter++;
        more = cond && (r->steps < 0 || r->iter < r->steps);
        if (s == TGC_OK && more) s = feed_loop(r, cond);
        break;
    }
    case CF_SCAN:
        for (int k = 0; k < r->n_carried; k++) {
            tgc_value *slot = &r->feeds[r->first_carried + k];
            *slot = *tgc_frame_output(f, k);
            tgc_buffer_retain(slot->buf);
        }
        for (int k = 0; s == TGC_OK && k < r->n_scan; k++)
            s = stack_scan_output(r, k, tgc_frame_output(f, r->n_carried + k));
        if (s == TGC_ERR_RUNTIME) what = "a scan output changes shape, or is not a tensor";
        r->iter++;
        more = r->iter < r->steps;
        break;
    case CF_MAP:
        for (int k = 0; k < r->n_scan; k++) {
            tgc_value *slot = &((tgc_value *)tgc_buffer_list_slots(r->out[k].buf))[r->iter];
            *slot = *tgc_frame_output(f, k);
            tgc_buffer_retain(slot->buf);
        }
        r->iter++;
        more = r->iter < r->steps;
        break;
    }
    /* The iteration's slots go back before the next one starts. */
    tgc_frame_reset(f);
    void (*watch)(void *, const char *, int64_t) = observer;
    if (watch != NULL && r->kind != CF_IF) watch(observer_ctx, r->n->name, r->iter);
    if (s == TGC_OK && more && r->kind == CF_SCAN) s = feed_scan(r);
    if (s == TGC_OK && more && r->kind == CF_MAP) feed_map(r);
    if (s == TGC_OK && more && r->st->s->max_iterations > 0 && r->iter >= r->st->s->max_iterations) {
        char limit[64];
        snprintf(limit, sizeof limit, "%lld", (long long)r->st->s->max_iterations);
        fail(r, TGC_ERR_RUNTIME, "max-iterations",
             "it would run past the session's limit of %s iterations (--max-iterations); its condition is still "
             "true",
             limit);
        complete(r, false);
        return;
    }
    if (s == TGC_OK && !more && r->kind == CF_LOOP) {
        s = stack_loop_outputs(r);
        for (int k = 0; s == TGC_OK && k < r->n_carried; k++) { /* the final carried values are its outputs */
            r->out[k] = r->feeds[r->first_carried + k];
            r->feeds[r->first_carried + k].buf = NULL;
        }
        if (s == TGC_ERR_RUNTIME) what = "a scan output changes shape from one iteration to the next";
    }
    if (s == TGC_OK && !more && r->kind == CF_SCAN)
        for (int k = 0; k < r->n_carried; k++) {
            r->out[k] = r->feeds[r->first_carried + k];
            r->feeds[r->first_carried + k].buf = NULL;
        }
    if (s != TGC_OK) {
        fail(r, s, s == TGC_ERR_NOMEM ? "out-of-memory" : "control-flow", why,
             s == TGC_ERR_NOMEM ? "out of host memory between iterations" : what[0] ? what : "its body gave no value");
        complete(r, false);
    } else if (more) {
        launch(r);
    } else {
        complete(r, true);
    }
}

/* ---- starting ------------------------------------------------------------------------ */

/* What the node is, which subgraph runs, and the first iteration's feeds.
 * *runs is false when nothing runs (a Loop of no iteration, an empty Scan):
 * the outputs are ready at once. */
static tgc_status prepare(cf_run *r, bool *runs, const char **what) {
    const tgc_node *n = r->n;
    const tgc_control_plan *cp = &r->ps->plan->control[r->id];
    const char *op = n->op->name;
    *runs = true;
    r->kind = strcmp(op, "If") == 0 ? CF_IF : strcmp(op, "Loop") == 0 ? CF_LOOP : strcmp(op, "Scan") == 0 ? CF_SCAN
                                                                                                          : CF_MAP;
    const char *wanted = "body";
    if (r->kind == CF_IF) {
        uint8_t cond;
        const tgc_value *c = input_value(r, 0);
        if (c == NULL || read_scalar(c, &cond, 1) != TGC_OK) {
            *what = "the condition is not one bool";
            return TGC_ERR_RUNTIME;
        }
        wanted = cond ? "then_branch" : "else_branch";
    }
    /* Bodies are planned in attribute order (plan.c): find the one wanted. */
    int branch = -1;
    for (int a = 0, b = 0; a < n->n_attrs && branch < 0; a++) {
        if (n->attrs[a].type != TGC_ATTR_GRAPH || n->attrs[a].graph == NULL) continue;
        if (strcmp(n->attrs[a].name, wanted) == 0) branch = b;
        b++;
    }
    if (branch < 0 || cp->n_bodies <= branch) {
        *what = "its subgraph was not planned (a tgc bug)";
        return TGC_ERR_RUNTIME;
    }
    r->body = &cp->bodies[branch];
    r->bg = r->body->g;
    r->n_formal = r->bg->n_inputs_nodes;
    int32_t n_feeds = tgc_graph_feed_count(r->bg);
    r->feeds = tgc_calloc((size_t)n_feeds + 1, sizeof *r->feeds);
    r->take = tgc_calloc((size_t)n_feeds + 1, sizeof *r->take);
    r->out = tgc_calloc((size_t)n->n_outputs + 1, sizeof *r->out);
    if (r->feeds == NULL || r->take == NULL || r->out == NULL) return TGC_ERR_NOMEM;
    feed_captures(r);
    int explicit = tgc_node_explicit_inputs(n);
    switch (r->kind) {
    case CF_IF: break;
    case CF_LOOP: {
        const tgc_value *m = input_value(r, 0), *c = input_value(r, 1);
        uint8_t cond = 1;
        r->steps = -1;
        if (m != NULL && read_scalar(m, &r->steps, sizeof r->steps) != TGC_OK) {
            *what = "the trip count M is not one int64";
            return TGC_ERR_RUNTIME;
        }
        if (m != NULL && r->steps < 0) r->steps = 0;
        if (c != NULL && read_scalar(c, &cond, 1) != TGC_OK) {
            *what = "the condition is not one bool";
            return TGC_ERR_RUNTIME;
        }
        r->has_cond = c != NULL;
        r->first_carried = 2;
        r->n_carried = explicit - 2;
        r->n_scan = n->n_outputs - r->n_carried;
        for (int k = 0; k < r->n_carried; k++) {
            const tgc_value *v = input_value(r, 2 + k);
            if (v == NULL) {
                *what = "a carried value is missing";
                return TGC_ERR_RUNTIME;
            }
            r->feeds[2 + k] = *v;
            tgc_buffer_retain(v->buf);
            r->take[2 + k] = true;
        }
        r->take[0] = r->take[1] = true;
        if (r->n_scan > 0 && (r->per_iter = tgc_calloc((size_t)r->n_scan, sizeof *r->per_iter)) == NULL)
            return TGC_ERR_NOMEM;
        *runs = cond && r->steps != 0;
        if (*runs) return feed_loop(r, cond);
        for (int k = 0; k < r->n_carried; k++) { /* no iteration: the initial values as they are */
            r->out[k] = r->feeds[2 + k];
            r->feeds[2 + k].buf = NULL;
        }
        tgc_status s = stack_loop_outputs(r);
        if (s == TGC_ERR_RUNTIME) *what = "its scan outputs have no known shape to be empty in";
        return s;
    }
    case CF_SCAN: {
        int m = (int)tgc_node_attr(n, "num_scan_inputs")->i;
        const tgc_attr *axes = tgc_node_attr(n, "scan_input_axes");
        r->n_carried = explicit - m;
        r->first_carried = 0;
        r->n_scan = n->n_outputs - r->n_carried;
        r->n_scan_in = m;
        if ((r->scan_in = tgc_calloc((size_t)m + 1, sizeof *r->scan_in)) == NULL) return TGC_ERR_NOMEM;
        r->steps = -1;
        for (int j = 0; j < m; j++) {
            const tgc_value *x = input_value(r, r->n_carried + j);
            int64_t a = axes != NULL && (size_t)j < axes->n ? axes->ints[j] : 0;
            if (x == NULL || tgc_value_is_list(x) || x->dtype == TGC_STRING || x->rank < 1 || a < -x->rank ||
                a >= x->rank) {
                *what = "a scan input is missing, not a numeric tensor, or has no such axis";
                return TGC_ERR_RUNTIME;
            }
            int64_t len = x->dims[a < 0 ? a + x->rank : a];
            if (r->steps >= 0 && len != r->steps) {
                *what = "its scan inputs have different lengths";
                return TGC_ERR_RUNTIME;
            }
            r->steps = len;
            tgc_status s = on_host(x, &r->scan_in[j]);
            if (s != TGC_OK) return s;
        }
        for (int k = 0; k < r->n_carried; k++) {
            const tgc_value *v = input_value(r, k);
            if (v == NULL) {
                *what = "a state value is missing";
                return TGC_ERR_RUNTIME;
            }
            r->feeds[k] = *v;
            tgc_buffer_retain(v->buf);
            r->take[k] = true;
        }
        for (int j = 0; j < m; j++) r->take[r->n_carried + j] = true;
        if (r->steps == 0) { /* no step: the states as they are, empty scan outputs */
            *runs = false;
            for (int k = 0; k < r->n_carried; k++) {
                r->out[k] = r->feeds[k];
                r->feeds[k].buf = NULL;
            }
            for (int k = 0; k < r->n_scan; k++) {
                const tgc_tensor_info *info = &n->outputs[r->n_carried + k];
                tgc_value *o = &r->out[r->n_carried + k];
                *o = (tgc_value){.dtype = info->dtype, .rank = info->shape.rank};
                for (int d = 0; d < o->rank; d++)
                    o->dims[d] = tgc_dim_known(info->shape.dims[d]) ? info->shape.dims[d].v : 0;
                if (o->rank < 0 || tgc_buffer_alloc(tgc_host_device(), 0, &o->buf) != TGC_OK) return TGC_ERR_NOMEM;
            }
            return TGC_OK;
        }
        return feed_scan(r);
    }
    case CF_MAP: {
        r->steps = -1;
        for (int i = 0; i < r->n_formal; i++) {
            const tgc_value *v = input_value(r, i);
            if (v == NULL) {
                *what = "an input is missing";
                return TGC_ERR_RUNTIME;
            }
            if (!tgc_value_is_list(v)) continue;
            int64_t len = (int64_t)v->buf->n_values;
            if (r->steps >= 0 && len != r->steps) {
                *what = "its sequences have different lengths";
                return TGC_ERR_RUNTIME;
            }
            r->steps = len;
        }
        r->n_scan = n->n_outputs;
        for (int k = 0; k < r->n_scan; k++) {
            r->out[k] = (tgc_value){.dtype = n->outputs[k].dtype};
            if (tgc_buffer_alloc_list(tgc_host_device(), (size_t)r->steps, TGC_KIND_SEQUENCE, &r->out[k].buf) !=
                TGC_OK) {
                r->out[k].buf = NULL;
                return TGC_ERR_NOMEM;
            }
        }
        *runs = r->steps > 0;
        if (*runs) feed_map(r);
        return TGC_OK;
    }
    }
    return TGC_OK;
}

bool tgc_control_start(tgc_step *st, tgc_part_state *ps, int32_t id) {
    cf_run *r = tgc_calloc(1, sizeof *r);
    const tgc_node *n = &ps->plan->g->nodes[id];
    if (r == NULL) {
        char where[256];
        tgc_step_fail(st, TGC_ERR_NOMEM, n->pos, "out-of-memory", "node '%s' (%s)%s: no host memory to start it",
                      tgc_node_label(n), n->op_name, tgc_frame_where(ps, where, sizeof where));
        return false;
    }
    *r = (cf_run){.st = st, .ps = ps, .id = id, .n = n};
    bool runs = false;
    const char *what = "";
    tgc_status s = prepare(r, &runs, &what);
    if (s == TGC_OK && runs) {
        r->frame = (tgc_frame){.step = st, .parent = ps->frame, .parts = &r->body->compiled.parts, .plans = r->body->plans,
                               .feeds = r->feeds, .take = r->take, .done = body_done, .ctx = r,
                               .node_name = n->name, .op_name = n->op_name};
        s = tgc_frame_init(&r->frame);
    }
    if (s != TGC_OK) {
        fail(r, s, s == TGC_ERR_NOMEM ? "out-of-memory" : "control-flow", "%s",
             s == TGC_ERR_NOMEM ? "out of host memory starting it" : what);
        run_free(r);
        return false;
    }
    if (!runs) complete(r, true);
    else launch(r);
    return true;
}
