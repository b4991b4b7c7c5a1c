/* A fixture for calling one cpu kernel directly, as the executor would:
 * inputs in device buffers, a node on the stack holding the attributes,
 * outputs allocated with the expected shape, and the results compared with
 * reference .npy files from tests/data/kernels/make_nn_refs.py.
 *
 * Example usage (case "conv_1d": files tests/data/kernels/nn/conv_1d.*.npy):
 *     nn_fixture f;
 *     nn_begin(&f, "Conv", "conv_1d");
 *     nn_in(&f, "x"); nn_in(&f, "w"); nn_in(&f, "b");
 *     NN_INTS(&f, "pads", 2, 1);
 *     nn_out(&f, "y");                      // shape and expected values
 *     nn_check(&f, 1e-4);                   // runs, asserts TGC_OK and max |diff|
 *     nn_end(&f);                           // releases everything
 */
#ifndef TGC_TESTS_DEVICES_KERNEL_FIXTURE_NN_H
#define TGC_TESTS_DEVICES_KERNEL_FIXTURE_NN_H

#include "devices/kernel.h"
#include "graph/npy.h"
#include "tests/harness.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define NN_DIR "tests/data/kernels/nn/"
#define NN_MAX_IO 24
#define NN_MAX_ATTRS 12

typedef struct nn_fixture {
    tgc_device *dev;
    const char *op;
    const char *case_name;
    tgc_value in[NN_MAX_IO];
    int n_in;
    tgc_value out[NN_MAX_IO];
    tgc_npy ref[NN_MAX_IO]; /* expected output i; dtype TGC_DTYPE_INVALID when none */
    int n_out;
    tgc_attr attrs[NN_MAX_ATTRS];
    int64_t ints[NN_MAX_ATTRS][2 * TGC_MAX_RANK];
    int n_attrs;
    tgc_node node;
    char err[256];
    bool ok; /* every file loaded and every buffer allocated */
    /* What the executor would pass (all NULL/0 by default): the device's
     * pool, the node's cache across runs, which inputs are constants, an
     * activation to apply as output 0 is written, a workspace limit. */
    tgc_thread_pool *pool;
    tgc_kernel_cache *cache;
    uint32_t const_inputs;
    const tgc_fused_act *fused_act; /* an absorbed activation (executor/fuse.c) */
    int64_t workspace_limit;        /* bytes (tgc_kernel_ctx.workspace_limit); 0: none */
    const char *impl;               /* out: the way the kernel said it ran (tgc_kernel_ctx.impl) */
} nn_fixture;

static inline void nn_begin(nn_fixture *f, const char *op, const char *case_name) {
    memset(f, 0, sizeof *f);
    f->op = op;
    f->case_name = case_name;
    f->ok = true;
    for (int i = 0; i < NN_MAX_IO; i++) f->ref[i].dtype = TGC_DTYPE_INVALID;
    f->dev = tgc_cpu_device_create(0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f->dev);
}

/* Allocates a buffer for v (dtype, rank, dims set) and copies `data` (NULL:
 * zeros) into it. */
static inline void nn_fill(nn_fixture *f, tgc_value *v, const void *data) {
    size_t nbytes = tgc_value_nbytes(v);
    tgc_status st = tgc_buffer_alloc(f->dev, nbytes, &v->buf);
    CU_ASSERT_EQUAL(st, TGC_OK);
    if (st != TGC_OK) {
        f->ok = false;
        return;
    }
    if (nbytes > 0) {
        if (data != NULL)
            memcpy(tgc_buffer_host_ptr(v->buf), data, nbytes);
        else
            memset(tgc_buffer_host_ptr(v->buf), 0, nbytes);
    }
}

/* Reads CASE.NAME.npy into *a; false (and an assertion) if it fails. */
static inline bool nn_read(nn_fixture *f, const char *name, tgc_npy *a) {
    char rel[256], err[256] = "";
    snprintf(rel, sizeof rel, NN_DIR "%s.%s.npy", f->case_name, name);
    tgc_status st = tgc_npy_read_file(tgc_test_path(rel), a, err, sizeof err);
    CU_ASSERT_EQUAL(st, TGC_OK);
    if (st != TGC_OK) {
        fprintf(stderr, "\n  %s: %s\n", rel, err);
        f->ok = false;
        return false;
    }
    return true;
}

/* Appends input CASE.NAME.npy. */
static inline void nn_in(nn_fixture *f, const char *name) {
    tgc_value *v = &f->in[f->n_in++];
    tgc_npy a;
    if (!nn_read(f, name, &a)) {
        v->dtype = TGC_DTYPE_INVALID;
        return;
    }
    v->dtype = a.dtype;
    v->rank = a.rank;
    memcpy(v->dims, a.dims, (size_t)a.rank * sizeof a.dims[0]);
    nn_fill(f, v, a.data);
    tgc_npy_release(&a);
}

/* Appends an input of the given shape holding `data` (NULL: zeros). */
static inline void nn_in_dims(nn_fixture *f, tgc_dtype dtype, int rank, const int64_t *dims,
                              const void *data) {
    tgc_value *v = &f->in[f->n_in++];
    v->dtype = dtype;
    v->rank = rank;
    if (rank > 0) memcpy(v->dims, dims, (size_t)rank * sizeof dims[0]);
    nn_fill(f, v, data);
}

/* Appends an omitted optional input. */
static inline void nn_in_omitted(nn_fixture *f) {
    tgc_value *v = &f->in[f->n_in++];
    memset(v, 0, sizeof *v);
    v->dtype = TGC_DTYPE_INVALID;
}

/* Appends output CASE.NAME.npy: allocated with that shape, checked against it. */
static inline void nn_out(nn_fixture *f, const char *name) {
    int i = f->n_out++;
    tgc_value *v = &f->out[i];
    if (!nn_read(f, name, &f->ref[i])) {
        f->ref[i].dtype = TGC_DTYPE_INVALID;
        return;
    }
    v->dtype = f->ref[i].dtype;
    v->rank = f->ref[i].rank;
    memcpy(v->dims, f->ref[i].dims, (size_t)v->rank * sizeof v->dims[0]);
    nn_fill(f, v, NULL);
}

/* Appends an output of the given shape with no reference (filled with NaN
 * bytes so a kernel that leaves it alone shows). */
static inline void nn_out_dims(nn_fixture *f, tgc_dtype dtype, int rank, const int64_t *dims) {
    tgc_value *v = &f->out[f->n_out++];
    v->dtype = dtype;
    v->rank = rank;
    if (rank > 0) memcpy(v->dims, dims, (size_t)rank * sizeof dims[0]);
    nn_fill(f, v, NULL);
    if (v->buf != NULL && v->buf->nbytes > 0) memset(tgc_buffer_host_ptr(v->buf), 0xff, v->buf->nbytes);
}

/* Appends an output the node does not ask for. */
static inline void nn_out_omitted(nn_fixture *f) {
    tgc_value *v = &f->out[f->n_out++];
    memset(v, 0, sizeof *v);
    v->dtype = TGC_DTYPE_INVALID;
}

static inline tgc_attr *nn_attr(nn_fixture *f, const char *name, tgc_attr_type type) {
    CU_ASSERT_FATAL(f->n_attrs < NN_MAX_ATTRS);
    tgc_attr *a = &f->attrs[f->n_attrs++];
    memset(a, 0, sizeof *a);
    a->name = (char *)name;
    a->type = type;
    return a;
}

static inline void nn_int(nn_fixture *f, const char *name, int64_t v) {
    nn_attr(f, name, TGC_ATTR_INT)->i = v;
}
static inline void nn_float(nn_fixture *f, const char *name, double v) {
    nn_attr(f, name, TGC_ATTR_FLOAT)->f = v;
}
static inline void nn_string(nn_fixture *f, const char *name, const char *s) {
    nn_attr(f, name, TGC_ATTR_STRING)->s = (char *)s;
}
static inline void nn_ints(nn_fixture *f, const char *name, const int64_t *v, size_t n) {
    CU_ASSERT_FATAL(n <= 2 * TGC_MAX_RANK);
    int slot = f->n_attrs;
    tgc_attr *a = nn_attr(f, name, TGC_ATTR_INTS);
    memcpy(f->ints[slot], v, n * sizeof *v);
    a->ints = f->ints[slot];
    a->n = n;
}

#define NN_INTS(f, name, ...)                                                                                \
    nn_ints((f), (name), (const int64_t[]){__VA_ARGS__},                                                     \
            sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))

/* Finds the float32 cpu kernel for f->op (else the one for input 0's
 * dtype: the integer ops) and runs it; returns its status (TGC_ERR_INVALID
 * if there is no kernel or the fixture is incomplete). */
static inline tgc_status nn_run(nn_fixture *f) {
    const tgc_kernel_def *def = tgc_kernel_find(f->op, TGC_DEVICE_CPU, TGC_FLOAT32);
    if (def == NULL && f->n_in > 0) def = tgc_kernel_find(f->op, TGC_DEVICE_CPU, f->in[0].dtype);
    CU_ASSERT_PTR_NOT_NULL(def);
    if (def == NULL || !f->ok) return TGC_ERR_INVALID;
    f->node.name = (char *)"node";
    f->node.kind = TGC_NODE_OP;
    f->node.op_name = (char *)f->op;
    f->node.attrs = f->attrs;
    f->node.n_attrs = f->n_attrs;
    f->node.n_outputs = f->n_out;
    tgc_kernel_ctx ctx = {
        .node = &f->node,
        .device = f->dev,
        .inputs = f->in,
        .n_inputs = f->n_in,
        .outputs = f->out,
        .n_outputs = f->n_out,
        .error = f->err,
        .error_size = sizeof f->err,
        .pool = f->pool,
        .cache = f->cache,
        .const_inputs = f->const_inputs,
        .fused_act = f->fused_act,
        .workspace_limit = f->workspace_limit,
    };
    f->err[0] = '\0';
    tgc_status st = def->fn(&ctx);
    f->impl = ctx.impl;
    return st;
}

/* The largest |out - ref| of output i (NaN against NaN counts as equal; a
 * NaN on one side only is infinite); for int64 the number of mismatches. */
static inline double nn_max_diff(const nn_fixture *f, int i) {
    const tgc_value *v = &f->out[i];
    const tgc_npy *r = &f->ref[i];
    int64_t n = tgc_value_numel(v);
    if (n == 0) return 0.0;
    const void *got = tgc_buffer_host_ptr(v->buf);
    double worst = 0.0;
    for (int64_t j = 0; j < n; j++) {
        double d;
        if (v->dtype == TGC_INT64) {
            d = ((const int64_t *)got)[j] != ((const int64_t *)r->data)[j];
            worst += d;
            continue;
        }
        double a = ((const float *)got)[j], b = ((const float *)r->data)[j];
        if (isnan(a) || isnan(b))
            d = isnan(a) && isnan(b) ? 0.0 : INFINITY;
        else
            d = fabs(a - b);
        if (d > worst) worst = d;
    }
    return worst;
}

/* Runs the kernel and asserts TGC_OK and, for every output with a
 * reference, the same dtype and shape and a max |diff| <= tol (int64: equal). */
static inline void nn_check(nn_fixture *f, double tol) {
    tgc_status st = nn_run(f);
    CU_ASSERT_EQUAL(st, TGC_OK);
    if (st != TGC_OK) {
        fprintf(stderr, "\n  %s (%s): %s\n", f->case_name, f->op, f->err);
        return;
    }
    for (int i = 0; i < f->n_out; i++) {
        if (f->ref[i].dtype == TGC_DTYPE_INVALID) continue;
        CU_ASSERT_EQUAL(f->out[i].dtype, f->ref[i].dtype);
        double d = nn_max_diff(f, i), limit = f->out[i].dtype == TGC_INT64 ? 0.0 : tol;
        CU_ASSERT(d <= limit);
        if (!(d <= limit))
            fprintf(stderr, "\n  %s output %d: max |diff| %g > %g\n", f->case_name, i, d, limit);
    }
}

/* Runs the kernel and asserts it fails with TGC_ERR_RUNTIME and a reason. */
static inline void nn_check_fails(nn_fixture *f) {
    tgc_status st = nn_run(f);
    CU_ASSERT_EQUAL(st, TGC_ERR_RUNTIME);
    CU_ASSERT(f->err[0] != '\0');
}

/* Float j of output i. */
static inline float nn_out_f32(const nn_fixture *f, int i, int64_t j) {
    return ((const float *)tgc_buffer_host_ptr(f->out[i].buf))[j];
}

/* Releases every buffer and reference, then the device. */
static inline void nn_end(nn_fixture *f) {
    for (int i = 0; i < f->n_in; i++) tgc_buffer_release(f->in[i].buf);
    for (int i = 0; i < f->n_out; i++) {
        tgc_buffer_release(f->out[i].buf);
        tgc_npy_release(&f->ref[i]);
    }
    tgc_device_destroy(f->dev);
    f->dev = NULL;
}

#endif
