/* Eager ops: one node at a time, on tensors that live on any device (see
 * tgc.h, "Eager ops", for the device rules). A call makes its key, finds
 * or resolves its cache entry (the node, the device, the kernel, the
 * output shapes when they do not depend on values), puts its inputs where
 * the kernel reads them, allocates the outputs on the device and runs the
 * kernel through the steps a session's node takes too (devices/node_exec.h);
 * the results become new handles, which hold their device open. */
#include "executor/eager.h"

#include "devices/device_registry.h"
#include "devices/memory_limit.h"
#include "devices/node_exec.h"
#include "executor/step.h"
#include "graph/op_registry.h"
#include "support/alloc.h"
#include "support/diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static tgc_status call_error(tgc_diags *diags, tgc_status status, const char *rule, const char *fmt, ...)
    TGC_PRINTF(4, 5);
static tgc_status call_error(tgc_diags *diags, tgc_status status, const char *rule, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    tgc_status s = tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, rule, "%s", msg);
    return s == TGC_ERR_NOMEM ? s : status;
}

/* ---- contexts ------------------------------------------------------------------ */

static tgc_status add_device(tgc_eager *e, tgc_placer_device which, tgc_diags *diags) {
    for (int i = 0; i < e->n_devices; i++)
        if (e->devices[i]->kind == which.kind && e->devices[i]->index == which.index) return TGC_OK;
    if (e->n_devices == TGC_MAX_DEVICES)
        return call_error(diags, TGC_ERR_INVALID, "bad-device-list", "an eager context takes at most %d devices",
                          TGC_MAX_DEVICES);
    tgc_status s = tgc_device_registry_open(which.kind, which.index, diags, &e->devices[e->n_devices]);
    if (s == TGC_OK) e->n_devices++;
    return s;
}

tgc_status tgc_eager_create(const char *devices, const tgc_eager_options *opts, tgc_diags *diags, tgc_eager **out) {
    *out = NULL;
    tgc_placer_device list[TGC_MAX_DEVICES];
    int n = 0;
    tgc_status s = tgc_placer_parse_devices(devices != NULL ? devices : tgc_default_device_list(), list,
                                            TGC_MAX_DEVICES, &n, diags);
    if (s != TGC_OK) return s;
    tgc_eager *e = tgc_calloc(1, sizeof *e);
    if (e == NULL) return TGC_ERR_NOMEM;
    static atomic_ullong ids;
    e->id = atomic_fetch_add(&ids, 1) + 1; /* 0: no context */
    pthread_mutex_init(&e->lock, NULL);
    e->settings = tgc_settings_read(); /* the environment, once: before the devices open */
    if ((e->g = tgc_graph_create("", NULL)) == NULL) s = TGC_ERR_NOMEM;
    if (s == TGC_OK) s = add_device(e, (tgc_placer_device){tgc_backend_host_kind(), 0, 0}, diags);
    for (int i = 0; s == TGC_OK && i < n; i++) s = add_device(e, list[i], diags);
    for (int i = 0; s == TGC_OK && i < e->n_devices; i++) {
        if (!tgc_device_host_memory(e->devices[i])) continue; /* others run their kernels on the caller */
        int threads = tgc_threads_option(e->devices[i]->name, e->devices[i]->kind, opts != NULL ? opts->threads : NULL, diags,
                                         &s);
        if (s == TGC_OK) s = tgc_thread_pool_create(threads, &e->pools[i]);
    }
    if (s == TGC_OK && opts != NULL && opts->memory_limits != NULL)
        s = tgc_memory_limits_apply(e->devices, e->n_devices, opts->memory_limits, diags);
    for (int i = 0; s == TGC_OK && i < e->n_devices; i++)
        e->workspace_limits[i] = tgc_workspace_limit(tgc_device_stats(e->devices[i]).bytes_limit);
    if (s != TGC_OK) {
        tgc_eager_free(e);
        return s;
    }
    *out = e;
    return TGC_OK;
}

void tgc_eager_free(tgc_eager *e) {
    if (e == NULL) return;
    tgc_eager_cache_clear(e);
    for (int i = 0; i < e->n_devices; i++) {
        tgc_thread_pool_free(e->pools[i]);
        tgc_device_release(e->devices[i]);
    }
    tgc_graph_free(e->g);
    pthread_mutex_destroy(&e->lock);
    tgc_free(e);
}

int tgc_eager_device_count(const tgc_eager *e) { return e->n_devices; }

const char *tgc_eager_device_name(const tgc_eager *e, int i) {
    return i >= 0 && i < e->n_devices ? e->devices[i]->name : NULL;
}

int tgc_eager_device_index(const tgc_eager *e, const char *name) {
    char full[32];
    tgc_device_name_canonical(name, strlen(name), full, sizeof full);
    for (int i = 0; i < e->n_devices; i++)
        if (strcmp(e->devices[i]->name, full) == 0) return i;
    return -1;
}

tgc_eager_stats tgc_eager_get_stats(const tgc_eager *e) {
    tgc_eager *m = (tgc_eager *)e; /* the counters are atomics; reading them changes nothing */
    tgc_eager_stats st = {atomic_load(&m->ops), atomic_load(&m->hits), atomic_load(&m->misses), 0,
                          atomic_load(&m->copies), atomic_load(&m->copy_bytes)};
    pthread_mutex_lock(&m->lock);
    st.cache_entries = (int64_t)m->n_entries;
    pthread_mutex_unlock(&m->lock);
    return st;
}

tgc_status tgc_eager_synchronize(tgc_eager *e) {
    tgc_status s = TGC_OK;
    for (int i = 0; i < e->n_devices; i++)
        if (e->devices[i]->ops->synchronize(e->devices[i]) != TGC_OK) s = TGC_ERR_RUNTIME;
    return s;
}

/* ---- resolving a call: the device and the kernel --------------------------------- */

static bool is_int(tgc_dtype t) { return t == TGC_INT32 || t == TGC_INT64; }

/* Integer shape arithmetic on host-memory inputs: stays on cpu0. */
static bool host_int(const tgc_node *n, const tgc_value *in, const tgc_value *out) {
    for (int k = 0; k < n->n_outputs; k++)
        if (!is_int(out[k].dtype) || out[k].rank > 1) return false;
    for (int i = 0; i < n->n_inputs; i++)
        if (in[i].dtype != TGC_DTYPE_INVALID &&
            (!is_int(in[i].dtype) || in[i].buf == NULL || !tgc_device_host_memory(in[i].buf->device)))
            return false;
    return n->n_outputs > 0;
}

/* The kernel of n on device d (tgc_kernel_select, the placer's rule) for
 * the values at hand: strings, sequences and optionals in host memory only. */
static const tgc_kernel_def *kernel_on(const tgc_device *d, const tgc_node *n, const tgc_value *in,
                                       const tgc_value *out) {
    bool host_values = false;
    for (int i = 0; i < n->n_inputs; i++) host_values |= in[i].dtype == TGC_STRING || tgc_value_is_list(&in[i]);
    for (int k = 0; k < n->n_outputs; k++) host_values |= out[k].dtype == TGC_STRING;
    return tgc_kernel_select(n, d->kind, n->n_inputs > 0 ? in[0].dtype : TGC_DTYPE_INVALID,
                             n->n_outputs > 0 ? out[0].dtype : TGC_DTYPE_INVALID, host_values);
}

static int choose_device(const tgc_eager *e, const tgc_node *n, const tgc_value *in, const tgc_value *out) {
    if (host_int(n, in, out)) return 0;
    for (int i = 0; i < n->n_inputs; i++) {
        if (in[i].dtype == TGC_DTYPE_INVALID || in[i].buf == NULL || tgc_device_host_memory(in[i].buf->device))
            continue;
        for (int d = 0; d < e->n_devices; d++)
            if (e->devices[d] == in[i].buf->device) return d;
        return 0; /* a device of another context: copied to cpu0 */
    }
    return 0;
}

/* Output shapes of an eager call: the op's own inference function over the
 * inputs' dtypes and dims (tgc_node_exec_infer: an eager node's refs name
 * its arguments, and every output must get a dtype and a rank); with_values:
 * the values of small integer inputs in host memory and of float32 scalars
 * too, as a session's run shows them. sized: the kernel sizes its outputs,
 * so a dim that needs the values is no error. The kernel cache asks twice
 * on a miss, with and without the values: when both agree and nothing
 * stayed unknown, the shapes do not depend on the values and are kept for
 * later calls. Returns TGC_OK; TGC_ERR_INVALID with the op's message in
 * diags (may be NULL), "runtime-shape" when a dim stays unknown;
 * TGC_ERR_NOMEM. *unresolved (may be NULL): a dim stayed unknown. */
static tgc_status infer(tgc_eager *e, const tgc_node *n, const tgc_value *in, tgc_value *out, bool with_values,
                        bool sized, bool *unresolved, tgc_diags *diags) {
    unsigned flags = TGC_NODE_INFER_EVERY_OUTPUT | (with_values ? TGC_NODE_INFER_VALUES : 0u) |
                     (sized ? TGC_NODE_INFER_KERNEL_SIZES : 0u);
    bool left = false;
    tgc_status s = tgc_node_exec_infer(e->g, n, in, out, flags, &left, diags, NULL, 0);
    if (unresolved != NULL) *unresolved = left;
    if (s != TGC_OK && left)
        s = call_error(diags, TGC_ERR_INVALID, "runtime-shape", "op %s: cannot determine an output shape from the "
                       "inputs%s", n->op->name,
                       with_values ? " (a shape input must be an int32/int64 tensor in host memory)" : "");
    return s;
}

static bool same_shapes(const tgc_value *a, const tgc_value *b, int n) {
    for (int k = 0; k < n; k++) {
        if (a[k].dtype != b[k].dtype || a[k].rank != b[k].rank) return false;
        for (int d = 0; d < a[k].rank; d++)
            if (a[k].dims[d] != b[k].dims[d]) return false;
    }
    return true;
}

/* A new entry for the call: node, device, kernel, shapes. */
static tgc_status resolve(tgc_eager *e, const char *op, const tgc_op_attr *attrs, int n_attrs,
                          tgc_tensor *const *inputs, int n_inputs, int want, int n_outputs, tgc_value *in,
                          tgc_eager_entry **out, tgc_diags *diags) {
    tgc_eager_entry *en = tgc_calloc(1, sizeof *en);
    if (en == NULL) return TGC_ERR_NOMEM;
    tgc_node *n = &en->node;
    tgc_status s = tgc_eager_node_build(n, op, attrs, n_attrs, n_inputs, n_outputs, diags);
    if (s == TGC_OK && (en->outs = tgc_calloc((size_t)n->n_outputs, sizeof *en->outs)) == NULL) s = TGC_ERR_NOMEM;
    for (int i = 0; s == TGC_OK && i < n_inputs; i++) {
        n->inputs[i] = (tgc_ref){.node = inputs[i] ? i : -1};
        if (inputs[i] == NULL && i < n->op->min_inputs)
            s = call_error(diags, TGC_ERR_INVALID, "missing-input", "op %s: input %d is required and cannot be "
                           "omitted (NULL)", op, i);
    }
    bool unresolved = false;
    if (s == TGC_OK) s = infer(e, n, in, en->outs, true, true, &unresolved, diags);
    if (s == TGC_OK) {
        en->device = want >= 0 ? want : choose_device(e, n, in, en->outs);
        en->kernel = kernel_on(e->devices[en->device], n, in, en->outs);
        if (en->kernel == NULL && want < 0 && en->device != 0) {
            en->device = 0;
            en->kernel = kernel_on(e->devices[0], n, in, en->outs);
        }
        if (en->kernel == NULL)
            s = call_error(diags, TGC_ERR_INVALID, "no-kernel", "op %s has no kernel on %s for %s input%s", op,
                           e->devices[en->device]->name,
                           n_inputs > 0 && in[0].dtype != TGC_DTYPE_INVALID ? tgc_dtype_name(in[0].dtype) : "its",
                           n_inputs == 1 ? "" : "s");
    }
    if (s == TGC_OK && unresolved && !en->kernel->sizes_outputs)
        s = call_error(diags, TGC_ERR_INVALID, "runtime-shape", "op %s: cannot determine an output shape from the "
                       "inputs (a shape input must be an int32/int64 tensor in host memory)", op);
    if (s == TGC_OK && !unresolved) {
        tgc_value plain[TGC_RUN_MAX_IO];
        bool blind_unresolved = true;
        if (n->n_outputs <= TGC_RUN_MAX_IO &&
            infer(e, n, in, plain, false, true, &blind_unresolved, NULL) == TGC_OK)
            en->static_shapes = !blind_unresolved && same_shapes(plain, en->outs, n->n_outputs);
    }
    if (s != TGC_OK) {
        tgc_eager_entry_free(en);
        return s;
    }
    *out = en;
    return TGC_OK;
}

/* ---- running an entry -------------------------------------------------------------- */

/* Puts each input where the kernel reads it (tgc_node_exec_stage; a cpu
 * kernel's copies on its cpu): copies go into staged[i] and are counted. */
static tgc_status stage_inputs(tgc_eager *e, const tgc_eager_entry *en, tgc_value *in, tgc_buffer **staged,
                               tgc_diags *diags) {
    tgc_device *d = e->devices[en->device], *host_to = tgc_node_exec_host_to(d);
    int i = 0;
    tgc_status s = tgc_node_exec_stage(&en->node, en->kernel, d, host_to, in, staged, &i);
    for (int j = 0; j < en->node.n_inputs; j++) {
        if (staged[j] == NULL) continue;
        atomic_fetch_add_explicit(&e->copies, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&e->copy_bytes, (long long)tgc_value_nbytes(&in[j]), memory_order_relaxed);
    }
    if (s != TGC_OK) {
        char what[512], which[48];
        snprintf(which, sizeof which, "a copy of input %d", i);
        return call_error(diags, s, s == TGC_ERR_NOMEM ? "out-of-memory" : "copy-failed", "op %s on %s: %s",
                          en->node.op->name, d->name,
                          s == TGC_ERR_NOMEM ? tgc_oom_str(what, sizeof what, which, &in[i],
                                                           tgc_node_exec_input_device(en->kernel, d, host_to, i))
                                             : "cannot move an input there");
    }
    return TGC_OK;
}

static tgc_status alloc_outputs(const tgc_eager_entry *en, tgc_device *d, tgc_value *out, tgc_diags *diags) {
    int i = 0;
    if (tgc_node_exec_alloc(&en->node, en->kernel, d, out, &i) != TGC_OK) {
        char what[512], which[32];
        snprintf(which, sizeof which, "output %d", i);
        return call_error(diags, TGC_ERR_NOMEM, "out-of-memory", "op %s on %s: %s", en->node.op->name, d->name,
                          tgc_oom_str(what, sizeof what, which, &out[i],
                                      tgc_node_exec_output_device(en->kernel, d, i)));
    }
    return TGC_OK;
}

/* The kernel over in[] into out[] (dims set, or sized by the kernel). */
static tgc_status run_kernel(tgc_eager *e, const tgc_eager_entry *en, tgc_value *in, tgc_value *out,
                             tgc_diags *diags) {
    tgc_device *d = e->devices[en->device];
    char err[512];
    err[0] = '\0'; /* not the whole buffer: a kernel writes its message only when it fails */
    tgc_kernel_ctx ctx = {.node = &en->node, .device = d, .inputs = in, .n_inputs = en->node.n_inputs,
                          .outputs = out, .n_outputs = en->node.n_outputs, .error = err, .error_size = sizeof err,
                          .pool = e->pools[en->device], .def = en->kernel,
                          .workspace_limit = e->workspace_limits[en->device]};
    tgc_status s = tgc_node_exec_kernel(&ctx);
    if (s != TGC_OK)
        return call_error(diags, s == TGC_ERR_NOMEM ? s : TGC_ERR_RUNTIME,
                          s == TGC_ERR_NOMEM ? "out-of-memory" : "kernel-failed", "op %s on %s: %s",
                          en->node.op->name, d->name, err[0] ? err : tgc_status_name(s));
    return TGC_OK;
}

/* Inputs and outputs a call keeps on the stack (a small frame: the call is
 * the hot path of every eager op); more come from the heap. */
#define EAGER_SMALL_IO 8

static tgc_status run_entry(tgc_eager *e, tgc_eager_entry *en, tgc_tensor *const *inputs, tgc_tensor **outputs,
                            tgc_diags *diags) {
    const tgc_node *n = &en->node;
    tgc_value in_small[EAGER_SMALL_IO], out_small[EAGER_SMALL_IO];
    tgc_buffer *staged_small[EAGER_SMALL_IO];
    tgc_value *in = in_small, *out = out_small;
    tgc_buffer **staged = staged_small;
    void *heap = NULL;
    if (n->n_inputs > EAGER_SMALL_IO || n->n_outputs > EAGER_SMALL_IO) {
        size_t ni = (size_t)n->n_inputs, no = (size_t)n->n_outputs;
        if ((heap = tgc_malloc((ni + no) * sizeof *in + ni * sizeof *staged + 1)) == NULL) return TGC_ERR_NOMEM;
        in = heap;
        out = in + ni;
        staged = (tgc_buffer **)(void *)(out + no);
    }
    for (int i = 0; i < n->n_inputs; i++) {
        staged[i] = NULL;
        if (inputs[i] != NULL) in[i] = inputs[i]->v;
        else in[i] = (tgc_value){.dtype = TGC_DTYPE_INVALID};
    }
    tgc_status s = stage_inputs(e, en, in, staged, diags);
    if (s == TGC_OK && en->static_shapes) {
        memcpy(out, en->outs, (size_t)n->n_outputs * sizeof *out);
    } else if (s == TGC_OK) {
        memset(out, 0, (size_t)n->n_outputs * sizeof *out);
        s = infer(e, &en->node, in, out, true, en->kernel->sizes_outputs, NULL, diags);
    }
    if (s == TGC_OK && !en->kernel->sizes_outputs) s = alloc_outputs(en, e->devices[en->device], out, diags);
    if (s == TGC_OK) s = run_kernel(e, en, in, out, diags);
    for (int i = 0; i < n->n_inputs; i++) tgc_buffer_release(staged[i]);
    int wrapped = 0;
    for (; s == TGC_OK && wrapped < n->n_outputs; wrapped++)
        if (tgc_tensor_wrap(&out[wrapped], &outputs[wrapped]) != TGC_OK) s = TGC_ERR_NOMEM;
    if (s != TGC_OK) {
        for (int i = 0; i < wrapped; i++) {
            tgc_tensor_release(outputs[i]);
            outputs[i] = NULL;
        }
        for (int i = wrapped; i < n->n_outputs; i++) tgc_buffer_release(out[i].buf);
    }
    tgc_free(heap);
    return s;
}

/* tgc_eager_run; *cached (may be NULL) gets the cache's entry the call ran,
 * NULL when it ran none (it failed, or the cache was full). */
static tgc_status run_call(tgc_eager *e, const char *op, const tgc_op_attr *attrs, int n_attrs,
                           tgc_tensor *const *inputs, int n_inputs, const char *device, tgc_tensor **outputs,
                           int n_outputs, tgc_diags *diags, tgc_eager_entry **cached) {
    for (int k = 0; outputs != NULL && k < n_outputs; k++) outputs[k] = NULL;
    if (e == NULL || op == NULL || n_inputs < 0 || (n_inputs > 0 && inputs == NULL) || n_outputs < 0 ||
        outputs == NULL || n_attrs < 0 || (n_attrs > 0 && attrs == NULL))
        return call_error(diags, TGC_ERR_INVALID, "bad-call", "tgc_eager_run: a NULL context, op, array or a "
                          "negative count");
    int want = -1;
    if (device != NULL && (want = tgc_eager_device_index(e, device)) < 0) {
        char list[256] = "";
        for (int i = 0; i < e->n_devices && strlen(list) < sizeof list - 24; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", e->devices[i]->name);
        return call_error(diags, TGC_ERR_INVALID, "unknown-device", "op %s: device '%s' is not in the context (%s)",
                          op, device, list);
    }
    tgc_eager_key key;
    tgc_status s = tgc_eager_key_make(&key, op, attrs, n_attrs, inputs, n_inputs, want, n_outputs);
    uint64_t hash = tgc_eager_key_hash(&key);
    tgc_eager_entry *en = s == TGC_OK ? tgc_eager_cache_lookup(e, &key, hash) : NULL, *own = NULL;
    if (s == TGC_OK && en == NULL) {
        tgc_value in_small[EAGER_SMALL_IO], *in = in_small;
        if (n_inputs > EAGER_SMALL_IO && (in = tgc_malloc((size_t)n_inputs * sizeof *in)) == NULL) s = TGC_ERR_NOMEM;
        for (int i = 0; s == TGC_OK && i < n_inputs; i++)
            in[i] = inputs[i] != NULL ? inputs[i]->v : (tgc_value){.dtype = TGC_DTYPE_INVALID};
        if (s == TGC_OK) s = resolve(e, op, attrs, n_attrs, inputs, n_inputs, want, n_outputs, in, &en, diags);
        if (in != in_small) tgc_free(in);
        if (s == TGC_OK && !tgc_eager_cache_insert(e, en, &key, hash)) own = en;
    }
    tgc_eager_key_free(&key);
    if (s == TGC_OK) s = run_entry(e, en, inputs, outputs, diags);
    if (s == TGC_OK) atomic_fetch_add_explicit(&e->ops, 1, memory_order_relaxed);
    if (cached != NULL) *cached = s == TGC_OK && own == NULL ? en : NULL;
    tgc_eager_entry_free(own);
    return s;
}

tgc_status tgc_eager_run(tgc_eager *e, const char *op, const tgc_op_attr *attrs, int n_attrs,
                         tgc_tensor *const *inputs, int n_inputs, const char *device, tgc_tensor **outputs,
                         int n_outputs, tgc_diags *diags) {
    return run_call(e, op, attrs, n_attrs, inputs, n_inputs, device, outputs, n_outputs, diags, NULL);
}

/* What tgc_eager_apply's last call on this thread ran, and on what: the
 * same context, op and inputs' dtypes, dims and devices find its entry
 * without making a key (a binding's operator in a loop). Entries live as
 * long as their context, whose id is never reused. */
typedef struct apply_input {
    tgc_dtype dtype;
    int rank;
    int64_t dims[TGC_MAX_RANK];
    const tgc_device *device;
} apply_input;

static _Thread_local struct {
    uint64_t context; /* 0: none */
    tgc_eager_entry *entry;
    char op[32];
    int n_inputs;
    apply_input in[2];
} last_apply;

static void note_input(apply_input *r, const tgc_tensor *t) {
    r->dtype = t->v.dtype;
    r->rank = t->v.rank;
    memcpy(r->dims, t->v.dims, (size_t)t->v.rank * sizeof r->dims[0]);
    r->device = t->v.buf != NULL ? t->v.buf->device : NULL;
}

static bool same_input(const apply_input *r, const tgc_tensor *t) {
    return r->dtype == t->v.dtype && r->rank == t->v.rank &&
           r->device == (t->v.buf != NULL ? t->v.buf->device : NULL) &&
           memcmp(r->dims, t->v.dims, (size_t)t->v.rank * sizeof r->dims[0]) == 0;
}

tgc_tensor *tgc_eager_apply(tgc_eager *e, const char *op, tgc_tensor *a, tgc_tensor *b, tgc_diags *diags) {
    tgc_tensor *in[2] = {a, b}, *out = NULL;
    int n = b != NULL ? 2 : 1;
    if (e != NULL && op != NULL && a != NULL && last_apply.context == e->id && last_apply.n_inputs == n &&
        strcmp(op, last_apply.op) == 0 && same_input(&last_apply.in[0], a) &&
        (b == NULL || same_input(&last_apply.in[1], b))) {
        atomic_fetch_add_explicit(&e->hits, 1, memory_order_relaxed);
        if (run_entry(e, last_apply.entry, in, &out, diags) == TGC_OK)
            atomic_fetch_add_explicit(&e->ops, 1, memory_order_relaxed);
        return out;
    }
    tgc_eager_entry *cached = NULL;
    if (run_call(e, op, NULL, 0, in, n, NULL, &out, 1, diags, &cached) == TGC_OK && cached != NULL &&
        strlen(op) < sizeof last_apply.op) {
        last_apply.context = e->id;
        last_apply.entry = cached;
        snprintf(last_apply.op, sizeof last_apply.op, "%s", op);
        last_apply.n_inputs = n;
        note_input(&last_apply.in[0], a);
        if (b != NULL) note_input(&last_apply.in[1], b);
    }
    return out;
}

/* ---- copies ---------------------------------------------------------------------- */

tgc_status tgc_eager_copy(tgc_eager *e, const tgc_tensor *t, const char *device, tgc_tensor **out, tgc_diags *diags) {
    *out = NULL;
    if (e == NULL || t == NULL || device == NULL)
        return call_error(diags, TGC_ERR_INVALID, "bad-call", "tgc_eager_copy: a NULL context, tensor or device");
    tgc_device *to = NULL;
    if (strcmp(device, "host") == 0) {
        to = tgc_host_device();
    } else {
        int i = tgc_eager_device_index(e, device);
        if (i < 0) return call_error(diags, TGC_ERR_INVALID, "unknown-device", "device '%s' is not in the context",
                                     device);
        to = e->devices[i];
    }
    if (t->v.dtype == TGC_STRING && !tgc_device_host_memory(to))
        return call_error(diags, TGC_ERR_INVALID, "strings-on-device", "string tensors live in host memory only, "
                          "not on %s", to->name);
    size_t nbytes = tgc_value_nbytes(&t->v);
    tgc_value v = t->v;
    tgc_status s = tgc_buffer_copy(t->v.buf, nbytes, to, &v.buf);
    if (s != TGC_OK) {
        char what[512];
        return call_error(diags, s, s == TGC_ERR_NOMEM ? "out-of-memory" : "copy-failed", "copy to %s: %s", to->name,
                          s == TGC_ERR_NOMEM ? tgc_oom_str(what, sizeof what, "the copy", &t->v, to) : "failed");
    }
    atomic_fetch_add_explicit(&e->copies, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&e->copy_bytes, (long long)nbytes, memory_order_relaxed);
    s = tgc_tensor_wrap(&v, out);
    if (s != TGC_OK) tgc_buffer_release(v.buf);
    return s;
}
