/* tgc_session_run: check the feeds against the graph's inputs, then run
 * one step (step.c). */
#include "executor/session.h"

#include "support/alloc.h"
#include "support/diag.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static tgc_status feed_error(tgc_diags *diags, const char *fmt, const char *a, const char *b, const char *c) {
    return tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "bad-feed", fmt, a, b, c);
}

/* Checks a feed against its declaration, binding symbols as it goes. */
static tgc_status bind_feed(const tgc_graph *g, const tgc_node *input, const tgc_tensor *t, int64_t *symbols,
                            tgc_diags *diags) {
    const tgc_tensor_info *want = &input->outputs[0];
    char shape_want[256], shape_got[256];
    int kind = !tgc_value_is_list(&t->v) ? TGC_KIND_TENSOR
               : t->v.buf->list == TGC_KIND_SEQUENCE ? TGC_KIND_SEQUENCE
                                                     : TGC_KIND_OPTIONAL;
    /* An optional input takes an optional (of a tensor or a sequence: its element is not looked into). */
    bool kind_ok = kind == want->kind || (kind == TGC_KIND_OPTIONAL && (want->kind & TGC_KIND_OPTIONAL));
    if (!kind_ok || t->v.dtype != want->dtype) {
        tgc_type_str(want->dtype, want->kind, shape_want, sizeof shape_want);
        tgc_type_str(t->v.dtype, kind, shape_got, sizeof shape_got);
        return feed_error(diags, "input '%s' is declared %s but the feed is %s", tgc_node_label(input), shape_want,
                          shape_got);
    }
    if (kind != TGC_KIND_TENSOR) return TGC_OK; /* the elements' shapes are checked by the ops that read them */
    if (t->v.dtype != want->dtype)
        return feed_error(diags, "input '%s' is declared %s but the feed is %s", tgc_node_label(input),
                          tgc_dtype_name(want->dtype), tgc_dtype_name(t->v.dtype));
    tgc_shape got = tgc_shape_of(t->v.rank, t->v.dims);
    tgc_shape_str(g, &want->shape, shape_want, sizeof shape_want);
    tgc_shape_str(g, &got, shape_got, sizeof shape_got);
    if (got.rank != want->shape.rank)
        return feed_error(diags, "input '%s' is declared with shape %s but the feed has shape %s",
                          tgc_node_label(input), shape_want, shape_got);
    for (int i = 0; i < got.rank; i++) {
        tgc_dim d = want->shape.dims[i];
        int64_t v = t->v.dims[i];
        if (tgc_dim_known(d) && d.v != v)
            return feed_error(diags, "input '%s' is declared with shape %s but the feed has shape %s",
                              tgc_node_label(input),
                              shape_want, shape_got);
        if (!tgc_dim_known(d)) {
            if (symbols[d.sym] >= 0 && symbols[d.sym] != v) {
                char msg[128];
                snprintf(msg, sizeof msg, "%" PRId64 " elsewhere and %" PRId64 " here", symbols[d.sym], v);
                return feed_error(diags, "input '%s': symbol %s is bound to %s", tgc_node_label(input),
                                  g->symbols[d.sym], msg);
            }
            symbols[d.sym] = v;
        }
    }
    return TGC_OK;
}

/* The graph input a feed names: the one whose model name (source_name,
 * else name) it is, else the one whose tgc name it is; -1 for none. An
 * ONNX model's own names come first: its input "x_0" may have become
 * x_0_1 beside another input "x:0" that became x_0. */
static int32_t find_input(const tgc_graph *g, const char *name) {
    for (int32_t i = 0; i < g->n_inputs_nodes; i++)
        if (strcmp(tgc_node_label(&g->nodes[i]), name) == 0) return i;
    int32_t id = tgc_graph_find(g, name);
    return id >= 0 && id < g->n_inputs_nodes ? id : -1;
}

/* "'name' is not a graph input; the inputs are 'x' (float32 [N, 3]), ...":
 * the graph's inputs by the names feeds use, with dtypes and shapes. */
static tgc_status unknown_feed(const tgc_graph *g, const char *name, tgc_diags *diags) {
    size_t cap = 256, len = 0;
    for (int32_t i = 0; i < g->n_inputs_nodes; i++) cap += strlen(tgc_node_label(&g->nodes[i])) + 300;
    char *list = tgc_malloc(cap);
    if (list == NULL) return TGC_ERR_NOMEM;
    list[0] = '\0';
    for (int32_t i = 0; i < g->n_inputs_nodes; i++) {
        const tgc_tensor_info *info = &g->nodes[i].outputs[0];
        char type[64], shape[256] = "";
        tgc_type_str(info->dtype, info->kind, type, sizeof type);
        if (info->shape.rank != TGC_RANK_UNKNOWN) tgc_shape_str(g, &info->shape, shape, sizeof shape);
        len += (size_t)snprintf(list + len, cap - len, "%s'%s' (%s%s%s)", i ? ", " : "", tgc_node_label(&g->nodes[i]),
                                type, shape[0] ? " " : "", shape);
    }
    tgc_status st = tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "bad-feed",
                                   g->n_inputs_nodes == 0 ? "'%s' is not a graph input; the graph has none%s"
                                                          : "'%s' is not a graph input; the inputs are %s",
                                   name, list);
    tgc_free(list);
    return st;
}

/* Matches feeds to the graph's inputs: each input fed exactly once. */
static tgc_status match_feeds(const tgc_graph *g, int n_feeds, const char *const *names, tgc_tensor *const *feeds,
                              const tgc_tensor **feed_of, tgc_diags *diags) {
    int64_t *symbols = tgc_malloc(((size_t)g->n_symbols + 1) * sizeof *symbols);
    if (symbols == NULL) return TGC_ERR_NOMEM;
    for (int32_t i = 0; i < g->n_symbols; i++) symbols[i] = -1;
    tgc_status st = TGC_OK;
    for (int i = 0; st == TGC_OK && i < n_feeds; i++) {
        int32_t id = find_input(g, names[i]);
        if (id < 0)
            st = unknown_feed(g, names[i], diags);
        else if (feed_of[id] != NULL)
            st = feed_error(diags, "input '%s' is fed twice%s%s", tgc_node_label(&g->nodes[id]), "", "");
        else if ((st = bind_feed(g, &g->nodes[id], feeds[i], symbols, diags)) == TGC_OK)
            feed_of[id] = feeds[i];
    }
    for (int32_t id = 0; st == TGC_OK && id < g->n_inputs_nodes; id++)
        if (feed_of[id] == NULL) st = feed_error(diags, "input '%s' is not fed%s%s", tgc_node_label(&g->nodes[id]),
            "", "");
    tgc_free(symbols);
    return st;
}

/* Waits until fewer than max_inflight steps run (back pressure), then
 * counts this one in. */
static void enter_step(tgc_session *s) {
    pthread_mutex_lock(&s->inflight_lock);
    while (s->max_inflight > 0 && s->inflight >= s->max_inflight)
        pthread_cond_wait(&s->inflight_cond, &s->inflight_lock);
    if (++s->inflight > s->inflight_peak) s->inflight_peak = s->inflight;
    pthread_mutex_unlock(&s->inflight_lock);
}

static void leave_step(tgc_session *s) {
    pthread_mutex_lock(&s->inflight_lock);
    s->inflight--;
    pthread_cond_signal(&s->inflight_cond);
    pthread_mutex_unlock(&s->inflight_lock);
}

tgc_status tgc_session_run(tgc_session *s, int n_feeds, const char *const *names, tgc_tensor *const *feeds,
                           tgc_tensor **outputs, tgc_diags *diags) {
    if (s->n_replicas) return tgc_session_run(tgc_session_replica_for_step(s), n_feeds, names, feeds, outputs, diags);
    const tgc_graph *g = s->g;
    for (int i = 0; i < g->n_outputs; i++) outputs[i] = NULL;
    const tgc_tensor **feed_of = tgc_calloc((size_t)g->n_inputs_nodes + 1, sizeof *feed_of);
    if (feed_of == NULL) return TGC_ERR_NOMEM;
    /* Across processes rank 0 alone is fed: the graph's inputs are on its devices. */
    tgc_status st = s->distributed && s->rank != 0 ? TGC_OK : match_feeds(g, n_feeds, names, feeds, feed_of, diags);
    if (st == TGC_OK) {
        enter_step(s);
        st = tgc_step_execute(s, tgc_session_next_step_id(s), feed_of, outputs, atomic_load(&s->trace), diags);
        leave_step(s);
    }
    tgc_free(feed_of);
    return st;
}

void tgc_session_steps_in_flight(tgc_session *s, int *now, int *peak) {
    if (s->n_replicas) { /* summed over the replicas (the peak: their peaks', a bound) */
        int n = 0, p = 0;
        for (int r = 0; r < s->n_replicas; r++) {
            int rn = 0, rp = 0;
            tgc_session_steps_in_flight(s->replicas[r], &rn, &rp);
            n += rn, p += rp;
        }
        if (now != NULL) *now = n;
        if (peak != NULL) *peak = p;
        return;
    }
    pthread_mutex_lock(&s->inflight_lock);
    if (now != NULL) *now = s->inflight;
    if (peak != NULL) *peak = s->inflight_peak;
    pthread_mutex_unlock(&s->inflight_lock);
}

tgc_status tgc_session_trace_start(tgc_session *s) {
    for (int r = 0; r < s->n_replicas; r++) {
        tgc_status st = tgc_session_trace_start(s->replicas[r]);
        if (st != TGC_OK) return st;
    }
    if (s->n_replicas || atomic_load(&s->trace) != NULL) return TGC_OK;
    tgc_trace *t = NULL;
    tgc_status st = tgc_trace_create(&t);
    if (st != TGC_OK) return st;
    tgc_trace *none = NULL;
    if (!atomic_compare_exchange_strong(&s->trace, &none, t)) tgc_trace_free(t); /* another thread started it */
    return TGC_OK;
}

tgc_status tgc_session_trace_write(tgc_session *s, const char *path, tgc_diags *diags) {
    if (s->n_replicas) return tgc_session_replicas_trace_write(s, path, diags);
    tgc_trace *t = atomic_load(&s->trace);
    if (t == NULL) return tgc_diag_error(diags, path, (tgc_srcpos){0, 0}, "no-trace", "tracing was not started");
    return tgc_trace_write(t, path, diags);
}
