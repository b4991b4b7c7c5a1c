/* A node's kernel timed on its device (cost_impl.h): the devices of the
 * model opened once, on first need, with a pool as wide as a session's
 * would be; the node run on inputs of its inferred shapes through
 * devices/node_exec.h, the path graph steps and eager ops take.
 *
 * Inputs: an initializer's own values (a Reshape's shape, a Conv's
 * weights: a kernel that keeps a packed layout of a constant builds it in
 * the warm-up run, which is not counted, as a session builds it in its
 * first step); an integer input whose value inference knows, that value
 * (its symbols as 1); anything else deterministic: floats in (0, 1.2]
 * (no NaN from Log or Sqrt), integers 1 (an index of any axis but an
 * empty one, never a divisor of zero), booleans alternating. A node these do not suit (its
 * kernel or inference refuses them, or they give other shapes than the
 * graph's) is not timed: its figure is the estimate.
 *
 * One timed run is what a step spends on the node: run-time inference,
 * the outputs' allocation, the kernel, and the device's queue drained; the
 * outputs are released after the clock stops. A cold run starts from
 * caches emptied of everything but the node's activation inputs. The
 * figure is the median of three to five runs after the warm-up (more
 * while they take under 50 ms in all; one for a node whose warm-up took
 * over 250 ms). */
#include "placer/cost_impl.h"

#include "devices/node_exec.h"
#include "support/alloc.h"
#include "support/half.h"
#include "support/settings.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MIN_RUNS 3
#define MAX_RUNS 5
#define RUN_BUDGET_SECONDS 0.05
#define SLOW_SECONDS 0.25
/* Inputs larger than this in all are not made up (the estimate stands). */
#define MAX_SYNTHETIC_BYTES (INT64_C(1) << 30)

double tgc_cost_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

tgc_device *tgc_cost_device(tgc_cost_model *m, int d) {
    if (m->dev[d] != NULL || m->open_failed[d]) return m->dev[d];
    const tgc_placer_device pd = m->devices[d];
    const tgc_backend *b = tgc_backend_get(pd.kind);
    m->open_failed[d] = true;
    if (pd.task != 0 || b == NULL) return NULL; /* another process's: it cannot be timed from here */
    if (m->n_opened == 0) /* as a session sets it: the pools split the work, not OpenBLAS */
        openblas_set_num_threads((int)tgc_settings_current()->blas_threads);
    tgc_diags *diags = tgc_diags_create();
    tgc_device *dev = NULL;
    tgc_status s = diags != NULL ? b->open(pd.index, diags, &dev) : TGC_ERR_NOMEM;
    tgc_diags_free(diags);
    if (s != TGC_OK) return NULL;
    if (m->width[d] > 1 && tgc_thread_pool_create(m->width[d] - 1, &m->pool[d]) != TGC_OK) {
        tgc_device_release(dev);
        return NULL;
    }
    m->dev[d] = dev;
    m->open_failed[d] = false;
    m->n_opened++;
    return dev;
}

tgc_device *tgc_cost_host(tgc_cost_model *m) {
    if (m->host == NULL) m->host = tgc_backend_open_host(0);
    return m->host;
}

/* Deterministic values for input info t: count elements at p. */
static void fill(void *p, const tgc_tensor_info *t, int64_t count) {
    bool known = t->value_len >= 0 && t->value_len == count; /* its symbols as 1, as the shapes' */
    for (int64_t i = 0; i < count; i++) {
        float f = (float)((i * 37) % 19 + 1) / 16.0f;
        int64_t v = known && tgc_dim_known(t->value[i]) ? t->value[i].v : 1;
        switch (t->dtype) {
        case TGC_FLOAT32: ((float *)p)[i] = f; break;
        case TGC_FLOAT64: ((double *)p)[i] = f; break;
        case TGC_FLOAT16: ((uint16_t *)p)[i] = tgc_float_to_half(f); break;
        case TGC_BFLOAT16: ((uint16_t *)p)[i] = tgc_float_to_bf16(f); break;
        case TGC_INT64: ((int64_t *)p)[i] = v; break;
        case TGC_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
        case TGC_INT16: ((int16_t *)p)[i] = 1; break;
        case TGC_UINT16: ((uint16_t *)p)[i] = 1; break;
        case TGC_UINT32: ((uint32_t *)p)[i] = 1; break;
        case TGC_UINT64: ((uint64_t *)p)[i] = 1; break;
        case TGC_INT8: ((int8_t *)p)[i] = 1; break;
        case TGC_UINT8: ((uint8_t *)p)[i] = 1; break;
        case TGC_BOOL: ((uint8_t *)p)[i] = (uint8_t)(i & 1); break;
        default: break;
        }
    }
}

/* Input ref's value on host device h into *v (its buffer the caller's). */
static tgc_status make_input(const tgc_graph *g, tgc_ref ref, tgc_device *h, tgc_value *v, int64_t *budget) {
    memset(v, 0, sizeof *v);
    v->dtype = TGC_DTYPE_INVALID;
    if (ref.node < 0) return TGC_OK; /* omitted */
    const tgc_node *src = &g->nodes[ref.node];
    const tgc_tensor_info *t = tgc_graph_ref_info(g, ref);
    if (t->kind != TGC_KIND_TENSOR || t->dtype == TGC_STRING || t->dtype == TGC_DTYPE_INVALID ||
        t->shape.rank == TGC_RANK_UNKNOWN)
        return TGC_ERR_UNSUPPORTED;
    v->dtype = t->dtype;
    v->rank = t->shape.rank;
    for (int r = 0; r < v->rank; r++) v->dims[r] = tgc_dim_known(t->shape.dims[r]) ? t->shape.dims[r].v : 1;
    size_t bytes = tgc_value_nbytes(v);
    if (bytes == SIZE_MAX || (int64_t)bytes > *budget) return TGC_ERR_UNSUPPORTED;
    *budget -= (int64_t)bytes;
    if (src->kind == TGC_NODE_CONST && src->data != NULL) {
        if (src->data->nbytes != bytes) return TGC_ERR_UNSUPPORTED;
        if (bytes == 0) return tgc_buffer_alloc(h, 0, &v->buf);
        return tgc_buffer_borrow_host(h, src->data->data, bytes, &v->buf);
    }
    tgc_status s = tgc_buffer_alloc(h, bytes, &v->buf);
    if (s == TGC_OK && bytes > 0) fill(tgc_buffer_host_ptr(v->buf), t, tgc_value_numel(v));
    return s;
}

/* out[] (as run-time inference gave it) matches node n's inferred outputs. */
static bool same_shapes(const tgc_node *n, const tgc_value *out) {
    for (int k = 0; k < n->n_outputs; k++) {
        const tgc_tensor_info *t = &n->outputs[k];
        if (t->shape.rank == TGC_RANK_UNKNOWN) continue;
        if (t->dtype != out[k].dtype || t->shape.rank != out[k].rank) return false;
        for (int r = 0; r < t->shape.rank; r++)
            if (tgc_dim_known(t->shape.dims[r]) && t->shape.dims[r].v != out[k].dims[r]) return false;
    }
    return true;
}

typedef struct timed_run {
    tgc_cost_model *m;
    bool cold;
    const tgc_graph *g;
    const tgc_node *n;
    const tgc_kernel_def *k;
    tgc_device *d;
    tgc_thread_pool *pool;
    tgc_kernel_cache *cache;
    uint32_t const_inputs;
    tgc_value *in, *out;
} timed_run;

/* The most bytes written through to empty the caches: a cache reported
 * larger (a package's, where sysfs lists none) is emptied as far as this
 * goes, at a few ms a run. */
#define MAX_EVICT_BYTES ((size_t)256 << 20)

/* Empties the caches but for r's activation inputs: m->evict (1.5 times
 * the last-level cache, at most MAX_EVICT_BYTES) written through a line
 * at a time, then each input that is not a constant read a line at a
 * time, as its producer leaves it. Nothing without memory for the buffer
 * (the run is warm). */
static void empty_caches(timed_run *r) {
    tgc_cost_model *m = r->m;
    if (m->evict == NULL && m->llc_bytes > 0) {
        m->evict_bytes = (size_t)m->llc_bytes / 2 * 3;
        if (m->evict_bytes > MAX_EVICT_BYTES) m->evict_bytes = MAX_EVICT_BYTES;
        m->evict = tgc_malloc(m->evict_bytes);
        if (m->evict != NULL) memset(m->evict, 0, m->evict_bytes);
    }
    if (m->evict == NULL) return;
    for (size_t i = 0; i < m->evict_bytes; i += 64) m->evict[i]++;
    unsigned sum = 0;
    for (int i = 0; i < r->n->n_inputs; i++) {
        const tgc_buffer *b = r->in[i].buf;
        if ((r->const_inputs & (1u << i)) || b == NULL || b->mem == NULL) continue;
        const volatile unsigned char *p = b->mem;
        for (size_t k = 0; k < b->nbytes; k += 64) sum += p[k];
    }
    m->evict[0] = (unsigned char)sum; /* the reads kept */
}

/* One run: inference, allocation, kernel, the device drained. Seconds into *t. */
static tgc_status run_once(timed_run *r, double *t) {
    char err[256];
    const tgc_node *n = r->n;
    if (r->cold) empty_caches(r);
    memset(r->out, 0, (size_t)n->n_outputs * sizeof *r->out);
    double t0 = tgc_cost_now();
    unsigned flags = TGC_NODE_INFER_VALUES | (r->k->sizes_outputs ? TGC_NODE_INFER_KERNEL_SIZES : 0u);
    tgc_status s = tgc_node_exec_infer(r->g, n, r->in, r->out, flags, NULL, NULL, NULL, 0);
    int failed = 0;
    if (s == TGC_OK && !r->k->sizes_outputs) {
        if (!same_shapes(n, r->out)) s = TGC_ERR_UNSUPPORTED;
        else s = tgc_node_exec_alloc(n, r->k, r->d, r->out, &failed);
    }
    if (s == TGC_OK) {
        tgc_kernel_ctx c = {.node = n, .device = r->d, .inputs = r->in, .n_inputs = n->n_inputs,
                            .outputs = r->out, .n_outputs = n->n_outputs, .error = err, .error_size = sizeof err,
                            .pool = r->pool, .cache = r->cache, .const_inputs = r->const_inputs, .def = r->k};
        s = tgc_node_exec_kernel(&c);
    }
    if (s == TGC_OK && r->d->ops->synchronize != NULL) s = r->d->ops->synchronize(r->d);
    *t = tgc_cost_now() - t0;
    if (s == TGC_OK && r->k->sizes_outputs && !same_shapes(n, r->out)) s = TGC_ERR_UNSUPPORTED;
    for (int i = 0; i < n->n_outputs; i++) {
        tgc_buffer_release(r->out[i].buf);
        r->out[i].buf = NULL;
    }
    return s == TGC_ERR_NOMEM ? s : s != TGC_OK ? TGC_ERR_UNSUPPORTED : TGC_OK;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The runs: a warm-up, then MIN_RUNS (the median of three outvotes one
 * run slowed by another process), more up to MAX_RUNS while within the
 * budget; one alone for a node whose warm-up took over SLOW_SECONDS. */
static tgc_status time_runs(timed_run *r, double *seconds) {
    double t, times[MAX_RUNS], spent = 0;
    tgc_status s = run_once(r, &t);
    int runs = 0, least = t > SLOW_SECONDS ? 1 : MIN_RUNS;
    while (s == TGC_OK && runs < MAX_RUNS && (runs < least || (least > 1 && spent < RUN_BUDGET_SECONDS))) {
        s = run_once(r, &times[runs]);
        spent += times[runs++];
    }
    if (s != TGC_OK) return s;
    qsort(times, (size_t)runs, sizeof *times, by_value);
    *seconds = runs % 2 ? times[runs / 2] : 0.5 * (times[runs / 2 - 1] + times[runs / 2]);
    if (*seconds <= 0) *seconds = 1e-9; /* a clock too coarse: still a figure, and positive */
    return TGC_OK;
}

tgc_status tgc_cost_time_node(tgc_cost_model *m, const tgc_graph *g, int32_t id, int d, const tgc_kernel_def *k,
                              bool cold, double *seconds) {
    const tgc_node *n = &g->nodes[id];
    tgc_device *dev = tgc_cost_device(m, d), *h = tgc_cost_host(m);
    if (dev == NULL) return TGC_ERR_UNSUPPORTED;
    if (h == NULL) return TGC_ERR_NOMEM;
    for (int i = 0; i < n->n_outputs; i++)
        if (n->outputs[i].kind != TGC_KIND_TENSOR || n->outputs[i].dtype == TGC_STRING) return TGC_ERR_UNSUPPORTED;
    size_t ni = (size_t)n->n_inputs, no = (size_t)n->n_outputs;
    tgc_value *in = tgc_calloc(ni + no + 1, sizeof *in);
    tgc_buffer **staged = tgc_calloc(ni + 1, sizeof *staged);
    tgc_kernel_cache cache;
    tgc_kernel_cache_init(&cache);
    tgc_status s = in != NULL && staged != NULL ? TGC_OK : TGC_ERR_NOMEM;
    int64_t budget = MAX_SYNTHETIC_BYTES;
    uint32_t const_inputs = 0;
    for (int i = 0; s == TGC_OK && i < n->n_inputs; i++) {
        s = make_input(g, n->inputs[i], h, &in[i], &budget);
        if (n->inputs[i].node >= 0 && g->nodes[n->inputs[i].node].kind == TGC_NODE_CONST && i < 32)
            const_inputs |= 1u << i;
    }
    /* the inputs where the kernel reads them, before the clock starts (a step finds them there) */
    tgc_value *run_in = in != NULL ? tgc_calloc(ni + 1, sizeof *run_in) : NULL;
    if (s == TGC_OK && run_in == NULL) s = TGC_ERR_NOMEM;
    int failed = 0;
    if (s == TGC_OK) {
        memcpy(run_in, in, ni * sizeof *in);
        s = tgc_node_exec_stage(n, k, dev, tgc_node_exec_host_to(dev), run_in, staged, &failed);
        if (s != TGC_OK && s != TGC_ERR_NOMEM) s = TGC_ERR_UNSUPPORTED;
    }
    if (s == TGC_OK) {
        timed_run r = {.m = m, .cold = cold && dev->host_memory, .g = g, .n = n, .k = k, .d = dev,
                       .pool = m->pool[d], .cache = &cache,
                       .const_inputs = const_inputs, .in = run_in, .out = in + ni};
        s = time_runs(&r, seconds);
    }
    tgc_kernel_cache_clear(&cache);
    for (size_t i = 0; staged != NULL && i < ni; i++) tgc_buffer_release(staged[i]);
    for (size_t i = 0; in != NULL && i < ni; i++) tgc_buffer_release(in[i].buf);
    tgc_free(run_in);
    tgc_free(staged);
    tgc_free(in);
    return s;
}
