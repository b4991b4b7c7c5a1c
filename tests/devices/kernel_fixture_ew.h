/* A fixture for calling the cpu elementwise and reduction kernels directly,
 * as the executor would: inputs in cpu buffers, a node on the stack carrying
 * the attributes, outputs allocated with the expected shape, then the
 * kernel's function. Inputs and expected outputs are NumPy .npy files under
 * tests/data/kernels/{elementwise,reduce}/ written by
 * tests/data/kernels/make_elementwise_refs.py: CASE_in0.npy, CASE_in1.npy,
 * ... and CASE_out.npy.
 *
 * Example usage:
 *     ew_fx f;
 *     ew_begin(&f, "LeakyRelu", EW_DIR);
 *     ew_attr(&f, EW_FLOAT("alpha", 0.2));
 *     ew_in_npy(&f, "leakyrelu_f32_alpha_in0");
 *     ew_out_npy(&f, "leakyrelu_f32_alpha_out");   // output 0 + reference
 *     CU_ASSERT_EQUAL(ew_run(&f), TGC_OK);
 *     ew_check(&f, EW_TOL);                          // within tolerance
 *     ew_end(&f);                                    // releases everything
 * or, for a case whose inputs are all files, in one call:
 *     ew_case(EW_DIR, "Add", "add_f32_bcast", 2, NULL, 0, EW_TOL);
 */
#ifndef TGC_TESTS_DEVICES_KERNEL_FIXTURE_EW_H
#define TGC_TESTS_DEVICES_KERNEL_FIXTURE_EW_H

#include "devices/kernel.h"
#include "graph/npy.h"
#include "support/alloc.h"
#include "support/half.h"
#include "tests/harness.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define EW_MAX 8
#define EW_DIR "tests/data/kernels/elementwise/"
#define EW_RED_DIR "tests/data/kernels/reduce/"
/* Float tolerance: |got - want| <= EW_TOL * max(1, |want|). */
#define EW_TOL 1e-6

/* Attribute literals for ew_attr (names are never freed). */
#define EW_INT(key, v) ((tgc_attr){.name = (char *)(key), .type = TGC_ATTR_INT, .i = (v)})
#define EW_FLOAT(key, v) ((tgc_attr){.name = (char *)(key), .type = TGC_ATTR_FLOAT, .f = (v)})
#define EW_INTS(key, arr, len)                                                                      \
    ((tgc_attr){.name = (char *)(key), .type = TGC_ATTR_INTS, .ints = (int64_t *)(arr), .n = (len)})

typedef struct ew_fx {
    tgc_device *dev;
    const char *op;
    const char *dir;
    tgc_value in[EW_MAX], out[EW_MAX];
    int n_in, n_out;
    tgc_npy ref; /* expected output 0 */
    bool has_ref;
    tgc_attr attrs[EW_MAX];
    int n_attrs;
    tgc_node node;
    char err[256];
} ew_fx;

static inline void ew_begin(ew_fx *f, const char *op, const char *dir) {
    memset(f, 0, sizeof *f);
    f->op = op;
    f->dir = dir;
    f->dev = tgc_cpu_device_create(0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f->dev);
}

static inline void ew_attr(ew_fx *f, tgc_attr a) {
    CU_ASSERT_FATAL(f->n_attrs < EW_MAX);
    f->attrs[f->n_attrs++] = a;
}

/* A tensor of `dtype` and dims on f's device holding `data` (NULL: filled
 * with 0xA5 bytes, for outputs, so stale memory shows). */
static inline tgc_value ew_value(ew_fx *f, tgc_dtype dtype, int rank, const int64_t *dims, const void *data) {
    tgc_value v = {.dtype = dtype, .rank = rank};
    for (int i = 0; i < rank; i++) v.dims[i] = dims[i];
    size_t nbytes = tgc_value_nbytes(&v);
    CU_ASSERT_EQUAL_FATAL(tgc_buffer_alloc(f->dev, nbytes, &v.buf), TGC_OK);
    if (nbytes > 0) {
        if (data != NULL) memcpy(tgc_buffer_host_ptr(v.buf), data, nbytes);
        else memset(tgc_buffer_host_ptr(v.buf), 0xA5, nbytes);
    }
    return v;
}

static inline void ew_in(ew_fx *f, tgc_dtype dtype, int rank, const int64_t *dims, const void *data) {
    CU_ASSERT_FATAL(f->n_in < EW_MAX);
    f->in[f->n_in++] = ew_value(f, dtype, rank, dims, data);
}

/* Appends an omitted optional input. */
static inline void ew_in_omit(ew_fx *f) {
    CU_ASSERT_FATAL(f->n_in < EW_MAX);
    f->in[f->n_in++] = (tgc_value){.dtype = TGC_DTYPE_INVALID};
}

/* Reads DIR NAME.npy; fatal if it cannot. Caller releases. */
static inline tgc_npy ew_read(const ew_fx *f, const char *name) {
    char rel[512], err[256] = "";
    snprintf(rel, sizeof rel, "%s%s.npy", f->dir, name);
    tgc_npy a;
    tgc_status st = tgc_npy_read_file(tgc_test_path(rel), &a, err, sizeof err);
    if (st != TGC_OK) fprintf(stderr, "%s: %s\n", rel, err);
    CU_ASSERT_EQUAL_FATAL(st, TGC_OK);
    return a;
}

/* Appends an input read from DIR NAME.npy. */
static inline void ew_in_npy(ew_fx *f, const char *name) {
    tgc_npy a = ew_read(f, name);
    ew_in(f, a.dtype, a.rank, a.dims, a.data);
    tgc_npy_release(&a);
}

static inline void ew_out(ew_fx *f, tgc_dtype dtype, int rank, const int64_t *dims) {
    CU_ASSERT_FATAL(f->n_out < EW_MAX);
    f->out[f->n_out++] = ew_value(f, dtype, rank, dims, NULL);
}

/* Output 0 with the dtype and shape of DIR NAME.npy, which becomes the
 * reference ew_check compares with. */
static inline void ew_out_npy(ew_fx *f, const char *name) {
    f->ref = ew_read(f, name);
    f->has_ref = true;
    ew_out(f, f->ref.dtype, f->ref.rank, f->ref.dims);
}

/* Runs the kernel registered for (op, cpu, input 0's dtype). */
static inline tgc_status ew_run(ew_fx *f) {
    f->node.name = (char *)"node";
    f->node.op_name = (char *)f->op;
    f->node.kind = TGC_NODE_OP;
    f->node.attrs = f->attrs;
    f->node.n_attrs = f->n_attrs;
    tgc_dtype dt = f->n_in > 0 ? f->in[0].dtype : TGC_DTYPE_INVALID;
    const tgc_kernel_def *k = tgc_kernel_find(f->op, TGC_DEVICE_CPU, dt);
    if (k == NULL) fprintf(stderr, "no cpu kernel for %s (%s)\n", f->op, tgc_dtype_name(dt));
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    f->err[0] = '\0';
    tgc_kernel_ctx c = {.node = &f->node, .device = f->dev, .inputs = f->in, .n_inputs = f->n_in,
                        .outputs = f->out, .n_outputs = f->n_out, .error = f->err, .error_size = sizeof f->err};
    return k->fn(&c);
}

/* Runs and asserts TGC_OK, printing the kernel's reason otherwise. */
static inline void ew_run_ok(ew_fx *f) {
    tgc_status st = ew_run(f);
    if (st != TGC_OK) fprintf(stderr, "%s: %s\n", f->op, f->err);
    CU_ASSERT_EQUAL(st, TGC_OK);
}

/* Element i of a float32 or float16 array as a double. */
static inline double ew_float_at(tgc_dtype dt, const void *p, int64_t i) {
    return dt == TGC_FLOAT32 ? ((const float *)p)[i] : tgc_half_to_float(((const uint16_t *)p)[i]);
}

/* Compares `got` (dtype, dims, data) with `want`: floats within
 * tol * max(1, |want|) (NaN matches NaN, infinities match exactly; tol 0
 * asks for equal bits), everything else byte for byte. Returns the number
 * of elements that differ and reports the first few. */
static inline int64_t ew_compare(const char *what, const tgc_value *got, const tgc_npy *want, double tol) {
    CU_ASSERT_EQUAL(got->dtype, want->dtype);
    CU_ASSERT_EQUAL(got->rank, want->rank);
    if (got->dtype != want->dtype || got->rank != want->rank) return -1;
    for (int d = 0; d < got->rank; d++) {
        CU_ASSERT_EQUAL(got->dims[d], want->dims[d]);
        if (got->dims[d] != want->dims[d]) return -1;
    }
    int64_t n = tgc_value_numel(got), bad = 0;
    const void *g = tgc_buffer_host_ptr(got->buf);
    size_t es = tgc_dtype_size(got->dtype);
    for (int64_t i = 0; i < n; i++) {
        bool ok;
        if ((got->dtype == TGC_FLOAT32 || got->dtype == TGC_FLOAT16) && tol > 0) {
            double a = ew_float_at(got->dtype, g, i), b = ew_float_at(got->dtype, want->data, i);
            if (isnan(b) || isinf(b)) ok = isnan(b) ? isnan(a) : a == b;
            else ok = fabs(a - b) <= tol * fmax(1.0, fabs(b));
            if (!ok && bad < 5)
                fprintf(stderr, "%s: element %lld is %.9g, expected %.9g\n", what, (long long)i, a, b);
        } else {
            ok = memcmp((const char *)g + (size_t)i * es, (const char *)want->data + (size_t)i * es, es) == 0;
            if (!ok && bad < 5) fprintf(stderr, "%s: element %lld differs\n", what, (long long)i);
        }
        if (!ok) bad++;
    }
    CU_ASSERT_EQUAL(bad, 0);
    return bad;
}

/* Compares output 0 with the reference from ew_out_npy. */
static inline void ew_check(ew_fx *f, double tol) {
    CU_ASSERT_FATAL(f->has_ref && f->n_out > 0);
    ew_compare(f->op, &f->out[0], &f->ref, tol);
}

/* Releases every buffer and the reference, then the device. */
static inline void ew_end(ew_fx *f) {
    for (int i = 0; i < f->n_in; i++) tgc_buffer_release(f->in[i].buf);
    for (int i = 0; i < f->n_out; i++) tgc_buffer_release(f->out[i].buf);
    tgc_npy_release(&f->ref);
    tgc_allocator_stats s = tgc_device_stats(f->dev);
    CU_ASSERT_EQUAL(s.live_buffers, 0);
    tgc_device_destroy(f->dev);
}

/* One whole case: inputs CASE_in0 .. CASE_in{n_in-1}, output CASE_out,
 * attributes attrs[0..n_attrs). */
static inline void ew_case(const char *dir, const char *op, const char *name, int n_in, const tgc_attr *attrs,
                           int n_attrs, double tol) {
    ew_fx f;
    char file[256];
    ew_begin(&f, op, dir);
    for (int i = 0; i < n_attrs; i++) ew_attr(&f, attrs[i]);
    for (int i = 0; i < n_in; i++) {
        snprintf(file, sizeof file, "%s_in%d", name, i);
        ew_in_npy(&f, file);
    }
    snprintf(file, sizeof file, "%s_out", name);
    ew_out_npy(&f, file);
    tgc_status st = ew_run(&f);
    if (st != TGC_OK) fprintf(stderr, "%s (%s): %s\n", name, op, f.err);
    CU_ASSERT_EQUAL(st, TGC_OK);
    if (st == TGC_OK && ew_compare(name, &f.out[0], &f.ref, tol) != 0) fprintf(stderr, "  in case %s\n", name);
    ew_end(&f);
}

#endif
