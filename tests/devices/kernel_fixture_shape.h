/* A fixture for calling cpu shape kernels directly, as the executor would:
 * inputs in cpu buffers, a node on the stack carrying the attributes,
 * outputs allocated with the expected shape, then the kernel's function.
 * Inputs and expected outputs come from NumPy's .npy files under
 * tests/data/kernels/shape/ (tests/data/kernels/make_shape_refs.py) or
 * from literal values.
 *
 * Example usage:
 *     shape_fx f;
 *     fx_begin(&f, "Slice");
 *     fx_in_npy(&f, "slice_in");                       // input 0
 *     fx_in_i64(&f, 1, (int64_t[]){-2});               // starts
 *     ...
 *     fx_out_npy(&f, "slice_negstart_out");            // output 0 + reference
 *     fx_run_ok(&f);                                   // asserts TGC_OK
 *     fx_check(&f);                                    // bytes equal the reference
 *     fx_end(&f);                                      // releases everything
 */
#ifndef TGC_TESTS_DEVICES_KERNEL_FIXTURE_SHAPE_H
#define TGC_TESTS_DEVICES_KERNEL_FIXTURE_SHAPE_H

#include "devices/kernel.h"
#include "graph/npy.h"
#include "support/alloc.h"
#include "tests/harness.h"

#include <stdio.h>
#include <string.h>

#ifndef FX_MAX
#define FX_MAX 8 /* a test may define more first (QLinearConv has 9 inputs) */
#endif
#define FX_DIR "tests/data/kernels/shape/"

typedef struct shape_fx {
    tgc_device *dev;
    const char *op;
    tgc_value in[FX_MAX], out[FX_MAX];
    int n_in, n_out;
    tgc_npy ref[FX_MAX]; /* expected output i (dtype 0, rank 0, no data: none) */
    bool has_ref[FX_MAX];
    tgc_attr attrs[FX_MAX];
    int n_attrs;
    tgc_node node;
    char err[256];
} shape_fx;

static inline void fx_begin(shape_fx *f, const char *op) {
    memset(f, 0, sizeof *f);
    f->op = op;
    f->dev = tgc_cpu_device_create(0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f->dev);
}

/* A tensor of `dtype` and dims on f's device holding `data` (may be NULL:
 * left uninitialised, for outputs). */
static inline tgc_value fx_value(shape_fx *f, tgc_dtype dtype, int rank, const int64_t *dims, const void *data) {
    tgc_value v = {.dtype = dtype, .rank = rank};
    for (int i = 0; i < rank; i++) v.dims[i] = dims[i];
    size_t nbytes = tgc_value_nbytes(&v);
    CU_ASSERT_EQUAL_FATAL(tgc_buffer_alloc(f->dev, nbytes, &v.buf), TGC_OK);
    if (data != NULL && nbytes > 0) memcpy(tgc_buffer_host_ptr(v.buf), data, nbytes);
    return v;
}

/* Appends an input holding `data`. */
static inline void fx_in(shape_fx *f, tgc_dtype dtype, int rank, const int64_t *dims, const void *data) {
    f->in[f->n_in++] = fx_value(f, dtype, rank, dims, data);
}

/* Appends a 1-D int64 input of n values (a shape argument). */
static inline void fx_in_i64(shape_fx *f, int64_t n, const int64_t *values) {
    fx_in(f, TGC_INT64, 1, &n, values);
}

/* Appends an omitted optional input. */
static inline void fx_in_omit(shape_fx *f) {
    f->in[f->n_in++] = (tgc_value){.dtype = TGC_DTYPE_INVALID};
}

/* Reads FX_DIR NAME.npy; fatal if it cannot. Caller releases. */
static inline tgc_npy fx_read(const char *name) {
    char rel[256], err[256] = "";
    tgc_npy a;
    snprintf(rel, sizeof rel, FX_DIR "%s.npy", name);
    tgc_status st = tgc_npy_read_file(tgc_test_path(rel), &a, err, sizeof err);
    if (st != TGC_OK) fprintf(stderr, "\n  %s: %s\n", rel, err);
    CU_ASSERT_EQUAL_FATAL(st, TGC_OK);
    return a;
}

/* Appends an input read from FX_DIR NAME.npy. */
static inline void fx_in_npy(shape_fx *f, const char *name) {
    tgc_npy a = fx_read(name);
    fx_in(f, a.dtype, a.rank, a.dims, a.data);
    tgc_npy_release(&a);
}

/* Appends an output of the given shape (contents unset). */
static inline void fx_out(shape_fx *f, tgc_dtype dtype, int rank, const int64_t *dims) {
    f->out[f->n_out++] = fx_value(f, dtype, rank, dims, NULL);
}

/* Appends an output shaped as FX_DIR NAME.npy, which fx_check compares. */
static inline void fx_out_npy(shape_fx *f, const char *name) {
    int i = f->n_out;
    f->ref[i] = fx_read(name);
    f->has_ref[i] = true;
    fx_out(f, f->ref[i].dtype, f->ref[i].rank, f->ref[i].dims);
}

/* Appends an output whose reference is given literally. */
static inline void fx_out_expect(shape_fx *f, tgc_dtype dtype, int rank, const int64_t *dims, const void *data) {
    int i = f->n_out;
    fx_out(f, dtype, rank, dims);
    tgc_npy *r = &f->ref[i];
    r->dtype = dtype;
    r->rank = rank;
    for (int k = 0; k < rank; k++) r->dims[k] = dims[k];
    r->nbytes = tgc_value_nbytes(&f->out[i]);
    r->data = NULL;
    f->has_ref[i] = true;
    if (r->nbytes > 0) {
        r->data = tgc_calloc(1, r->nbytes); /* owned as a read file's data is */
        CU_ASSERT_PTR_NOT_NULL_FATAL(r->data);
        if (data != NULL) memcpy(r->data, data, r->nbytes);
    }
}

/* Output 0 as the executor forwards it: input 0's buffer, another shape. */
static inline void fx_out_forward(shape_fx *f, int rank, const int64_t *dims) {
    tgc_value v = {.dtype = f->in[0].dtype, .rank = rank, .buf = tgc_buffer_retain(f->in[0].buf)};
    for (int i = 0; i < rank; i++) v.dims[i] = dims[i];
    f->out[f->n_out++] = v;
}

static inline void fx_attr_int(shape_fx *f, const char *name, int64_t v) {
    f->attrs[f->n_attrs++] = (tgc_attr){.name = (char *)name, .type = TGC_ATTR_INT, .i = v};
}

/* `ints` must outlive the run (a literal or the test's array). */
static inline void fx_attr_ints(shape_fx *f, const char *name, size_t n, int64_t *ints) {
    f->attrs[f->n_attrs++] = (tgc_attr){.name = (char *)name, .type = TGC_ATTR_INTS, .ints = ints, .n = n};
}

static inline void fx_attr(shape_fx *f, tgc_attr a) { f->attrs[f->n_attrs++] = a; }

/* The registered kernel for f's op and input 0's dtype. */
static inline const tgc_kernel_def *fx_kernel(shape_fx *f) {
    tgc_dtype t = f->n_in > 0 ? f->in[0].dtype : TGC_DTYPE_INVALID;
    return tgc_kernel_find(f->op, TGC_DEVICE_CPU, t);
}

/* Runs the kernel; returns its status, the reason in f->err. */
static inline tgc_status fx_run(shape_fx *f) {
    const tgc_kernel_def *def = fx_kernel(f);
    CU_ASSERT_PTR_NOT_NULL_FATAL(def);
    f->node = (tgc_node){.name = (char *)"node", .kind = TGC_NODE_OP, .op_name = (char *)f->op,
                         .attrs = f->attrs, .n_attrs = f->n_attrs, .n_inputs = f->n_in, .n_outputs = f->n_out};
    f->err[0] = '\0';
    tgc_kernel_ctx ctx = {.node = &f->node, .device = f->dev, .inputs = f->in, .n_inputs = f->n_in,
                          .outputs = f->out, .n_outputs = f->n_out, .error = f->err, .error_size = sizeof f->err};
    return def->fn(&ctx);
}

/* Runs the kernel expecting success; prints the reason if it fails. */
static inline void fx_run_ok(shape_fx *f) {
    tgc_status st = fx_run(f);
    if (st != TGC_OK) fprintf(stderr, "\n  %s failed: %s\n", f->op, f->err);
    CU_ASSERT_EQUAL(st, TGC_OK);
}

/* Runs the kernel expecting it to fail with a reason containing `needle`. */
static inline void fx_run_fails(shape_fx *f, const char *needle) {
    tgc_status st = fx_run(f);
    CU_ASSERT_EQUAL(st, TGC_ERR_RUNTIME);
    bool found = strstr(f->err, needle) != NULL;
    if (!found) fprintf(stderr, "\n  %s: wanted a reason with \"%s\", got \"%s\"\n", f->op, needle, f->err);
    CU_ASSERT(found);
}

/* Asserts every output with a reference has its dtype, shape and bytes. */
static inline void fx_check(shape_fx *f) {
    for (int i = 0; i < f->n_out; i++) {
        if (!f->has_ref[i]) continue;
        const tgc_npy *r = &f->ref[i];
        const tgc_value *v = &f->out[i];
        CU_ASSERT_EQUAL(v->dtype, r->dtype);
        CU_ASSERT_EQUAL_FATAL(v->rank, r->rank);
        for (int k = 0; k < r->rank; k++) CU_ASSERT_EQUAL(v->dims[k], r->dims[k]);
        CU_ASSERT_EQUAL_FATAL(tgc_value_nbytes(v), r->nbytes);
        bool same = r->nbytes == 0 || memcmp(tgc_buffer_host_ptr(v->buf), r->data, r->nbytes) == 0;
        if (!same) fprintf(stderr, "\n  %s: output %d differs from the reference\n", f->op, i);
        CU_ASSERT(same);
    }
}

/* Releases every buffer and reference, then the device. */
static inline void fx_end(shape_fx *f) {
    for (int i = 0; i < FX_MAX; i++) {
        tgc_buffer_release(f->in[i].buf);
        tgc_buffer_release(f->out[i].buf);
        if (f->has_ref[i]) tgc_npy_release(&f->ref[i]);
    }
    tgc_device_destroy(f->dev);
}

#endif
