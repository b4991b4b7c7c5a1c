/* A fixture for checking one gpu (OpenCL) nn kernel against the cpu kernel
 * of the same op: seeded random inputs, the same bytes uploaded to a cpu
 * buffer and to a gpu buffer, outputs of the given shapes (the gpu's
 * filled with NaN bytes first, so an output the kernel leaves alone
 * shows), both kernels run as the executor would call them, the gpu's
 * outputs read back and compared with the cpu's.
 *
 * One gpu device (gpu0) serves the whole suite; gn_begin returns false
 * when there is none (no OpenCL platform here), after printing a notice
 * once, and the test then passes without running. After each case the
 * device's live OpenCL buffers and events must be back where the suite
 * started; gn_suite_end checks the counters once more and releases the
 * device (and CLBlast's program cache, which holds its context).
 *
 * Example usage:
 *     gn_fixture f;
 *     if (!gn_begin(&f, "Conv", 7)) return;     // 7: the random seed
 *     GN_IN(&f, 2, 3, 7, 8);                     // X [2, 3, 7, 8], values in [-1, 1)
 *     GN_IN(&f, 4, 3, 3, 3);                     // W
 *     gn_in_omitted(&f);                         // no B
 *     GN_INTS(&f, "pads", 1, 2, 0, 1);
 *     GN_OUT(&f, TGC_FLOAT32, 2, 4, 4, 4);
 *     gn_check(&f, GN_ABS, 1e-4);                // both run; max |gpu - cpu| <= 1e-4
 *     gn_end(&f);
 */
#ifndef TGC_TESTS_DEVICES_GPU_FIXTURE_NN_H
#define TGC_TESTS_DEVICES_GPU_FIXTURE_NN_H

#include "devices/kernel.h"
#include "devices/opencl/opencl.h"
#include "support/alloc.h"
#include "tests/harness.h"

#include "devices/opencl/clblast_api.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

#define GN_MAX_IO 8
#define GN_MAX_ATTRS 12

typedef enum gn_tol_kind {
    GN_ABS, /* |gpu - cpu| <= tol: sums (GEMM, Conv) */
    GN_REL, /* |gpu - cpu| <= tol * max(1, |cpu|): everything else */
} gn_tol_kind;

typedef struct gn_fixture {
    const char *op;
    tgc_device *cpu, *gpu;
    unsigned seed;
    tgc_value cin[GN_MAX_IO], gin[GN_MAX_IO];
    int n_in;
    tgc_value cout[GN_MAX_IO], gout[GN_MAX_IO];
    void *got[GN_MAX_IO]; /* the gpu's output i, read back (tgc_malloc'd) */
    int n_out;
    tgc_attr attrs[GN_MAX_ATTRS];
    int64_t ints[GN_MAX_ATTRS][2 * TGC_MAX_RANK];
    int n_attrs;
    tgc_node node;
    char err[256];
    bool ok; /* every buffer allocated and uploaded */
    const tgc_fused_act *act; /* a fused activation both kernels apply (NULL: none) */
} gn_fixture;

/* The suite's gpu device, its counters when created, and whether creating
 * it was tried. */
static tgc_device *gn_gpu;
static tgc_cl_counters gn_start;
static bool gn_tried;

static inline tgc_device *gn_device(void) {
    if (!gn_tried) {
        gn_tried = true;
        tgc_diags *diags = tgc_diags_create();
        if (tgc_cl_device_create(0, diags, &gn_gpu) != TGC_OK) {
            gn_gpu = NULL;
            if (tgc_test_has_opencl_device()) { /* there, but it will not open: a failure */
                tgc_diags_print(diags, stderr);
                CU_FAIL("gpu0 exists but did not open (see the error above)");
            } else {
                fprintf(stderr, "\n  notice: no OpenCL device (gpu0); the gpu nn tests pass without running\n  ");
            }
        } else {
            gn_start = tgc_cl_device_counters(gn_gpu);
        }
        tgc_diags_free(diags);
    }
    return gn_gpu;
}

/* Starts a case of op `op` with random seed `seed`; false (the test then
 * returns, passing) when there is no gpu. */
static inline bool gn_begin(gn_fixture *f, const char *op, unsigned seed) {
    memset(f, 0, sizeof *f);
    f->gpu = gn_device();
    if (f->gpu == NULL) return false;
    f->op = op;
    f->seed = seed * 2654435761u + 1u;
    f->ok = true;
    f->cpu = tgc_cpu_device_create(0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f->cpu);
    return true;
}

/* The next pseudo-random value in [0, 1). */
static inline float gn_uniform(gn_fixture *f) {
    f->seed = f->seed * 1664525u + 1013904223u;
    return (float)(f->seed >> 8) / (float)(1u << 24);
}

/* Allocates v's buffer on dev (dtype, rank, dims set in v). */
static inline void gn_alloc(gn_fixture *f, tgc_device *dev, tgc_value *v) {
    tgc_status st = tgc_buffer_alloc(dev, tgc_value_nbytes(v), &v->buf);
    CU_ASSERT_EQUAL(st, TGC_OK);
    if (st != TGC_OK) f->ok = false;
}

/* Appends an input of the given shape holding `data` (numel values of
 * dtype's size), on both devices. */
static inline void gn_in_data(gn_fixture *f, tgc_dtype dtype, int rank, const int64_t *dims, const void *data) {
    CU_ASSERT_FATAL(f->n_in < GN_MAX_IO);
    int i = f->n_in++;
    tgc_value v = {.dtype = dtype, .rank = rank};
    if (rank > 0) memcpy(v.dims, dims, (size_t)rank * sizeof dims[0]);
    f->cin[i] = f->gin[i] = v;
    gn_alloc(f, f->cpu, &f->cin[i]);
    gn_alloc(f, f->gpu, &f->gin[i]);
    size_t nbytes = tgc_value_nbytes(&v);
    if (!f->ok || nbytes == 0) return;
    memcpy(tgc_buffer_host_ptr(f->cin[i].buf), data, nbytes);
    tgc_status st = f->gpu->ops->copy_from_host(f->gpu, f->gin[i].buf->mem, 0, data, nbytes);
    CU_ASSERT_EQUAL(st, TGC_OK);
    if (st != TGC_OK) f->ok = false;
}

/* Appends a float32 input with values lo + (hi - lo) * uniform. */
static inline void gn_in_range(gn_fixture *f, float lo, float hi, int rank, const int64_t *dims) {
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    float *data = tgc_malloc((size_t)(n > 0 ? n : 1) * sizeof *data);
    CU_ASSERT_PTR_NOT_NULL_FATAL(data);
    for (int64_t j = 0; j < n; j++) data[j] = lo + (hi - lo) * gn_uniform(f);
    gn_in_data(f, TGC_FLOAT32, rank, dims, data);
    tgc_free(data);
}

/* Appends an omitted optional input. */
static inline void gn_in_omitted(gn_fixture *f) {
    CU_ASSERT_FATAL(f->n_in < GN_MAX_IO);
    int i = f->n_in++;
    memset(&f->cin[i], 0, sizeof f->cin[i]);
    f->cin[i].dtype = TGC_DTYPE_INVALID;
    f->gin[i] = f->cin[i];
}

/* Appends an output of the given shape on both devices (the gpu's full of
 * NaN bytes). */
static inline void gn_out(gn_fixture *f, tgc_dtype dtype, int rank, const int64_t *dims) {
    CU_ASSERT_FATAL(f->n_out < GN_MAX_IO);
    int i = f->n_out++;
    tgc_value v = {.dtype = dtype, .rank = rank};
    if (rank > 0) memcpy(v.dims, dims, (size_t)rank * sizeof dims[0]);
    f->cout[i] = f->gout[i] = v;
    gn_alloc(f, f->cpu, &f->cout[i]);
    gn_alloc(f, f->gpu, &f->gout[i]);
    size_t nbytes = tgc_value_nbytes(&v);
    f->got[i] = tgc_malloc(nbytes > 0 ? nbytes : 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f->got[i]);
    if (!f->ok || nbytes == 0) return;
    memset(f->got[i], 0xff, nbytes);
    tgc_status st = f->gpu->ops->copy_from_host(f->gpu, f->gout[i].buf->mem, 0, f->got[i], nbytes);
    CU_ASSERT_EQUAL(st, TGC_OK);
    if (st != TGC_OK) f->ok = false;
}

/* Appends an output the node does not ask for. */
static inline void gn_out_omitted(gn_fixture *f) {
    CU_ASSERT_FATAL(f->n_out < GN_MAX_IO);
    int i = f->n_out++;
    memset(&f->cout[i], 0, sizeof f->cout[i]);
    f->cout[i].dtype = TGC_DTYPE_INVALID;
    f->gout[i] = f->cout[i];
}

#define GN_DIMS(...) (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (const int64_t[]){__VA_ARGS__}
/* A float32 input in [-1, 1) of the given dims; a float32 output. */
#define GN_IN(f, ...) gn_in_range((f), -1.0f, 1.0f, GN_DIMS(__VA_ARGS__))
#define GN_OUT(f, dtype, ...) gn_out((f), (dtype), GN_DIMS(__VA_ARGS__))

static inline tgc_attr *gn_attr(gn_fixture *f, const char *name, tgc_attr_type type) {
    CU_ASSERT_FATAL(f->n_attrs < GN_MAX_ATTRS);
    tgc_attr *a = &f->attrs[f->n_attrs++];
    memset(a, 0, sizeof *a);
    a->name = (char *)name;
    a->type = type;
    return a;
}

static inline void gn_int(gn_fixture *f, const char *name, int64_t v) { gn_attr(f, name, TGC_ATTR_INT)->i = v; }
static inline void gn_float(gn_fixture *f, const char *name, double v) { gn_attr(f, name, TGC_ATTR_FLOAT)->f = v; }
static inline void gn_string(gn_fixture *f, const char *name, const char *s) {
    gn_attr(f, name, TGC_ATTR_STRING)->s = (char *)s;
}
static inline void gn_ints(gn_fixture *f, const char *name, const int64_t *v, size_t n) {
    CU_ASSERT_FATAL(n <= 2 * TGC_MAX_RANK);
    int slot = f->n_attrs;
    tgc_attr *a = gn_attr(f, name, TGC_ATTR_INTS);
    memcpy(f->ints[slot], v, n * sizeof *v);
    a->ints = f->ints[slot];
    a->n = n;
}

#define GN_INTS(f, name, ...) \
    gn_ints((f), (name), (const int64_t[]){__VA_ARGS__}, sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))

/* Runs the float32 kernel of f->op for `kind` on ins/outs; its status. */
static inline tgc_status gn_run(gn_fixture *f, tgc_device_kind kind, tgc_device *dev, tgc_value *ins,
                                tgc_value *outs) {
    const tgc_kernel_def *def = tgc_kernel_find(f->op, kind, TGC_FLOAT32);
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
        .device = dev,
        .inputs = ins,
        .n_inputs = f->n_in,
        .outputs = outs,
        .n_outputs = f->n_out,
        .error = f->err,
        .error_size = sizeof f->err,
        .fused_act = f->act,
    };
    f->err[0] = '\0';
    return def->fn(&ctx);
}

/* Runs the gpu kernel only (and waits for it); its status. */
static inline tgc_status gn_run_gpu(gn_fixture *f) {
    tgc_status st = gn_run(f, TGC_DEVICE_GPU, f->gpu, f->gin, f->gout);
    if (st == TGC_OK) st = f->gpu->ops->synchronize(f->gpu);
    return st;
}

/* The largest excess of |gpu - cpu| over the allowed difference of output
 * i (<= 0: within tolerance; NaN must meet NaN); for int64 the number of
 * mismatches. */
static inline double gn_excess(const gn_fixture *f, int i, gn_tol_kind kind, double tol, double *max_diff) {
    const tgc_value *v = &f->cout[i];
    int64_t n = tgc_value_numel(v);
    double worst = -INFINITY;
    *max_diff = 0.0;
    if (n == 0) return 0.0;
    const void *want = tgc_buffer_host_ptr(v->buf);
    if (v->dtype == TGC_INT64) {
        int64_t bad = 0;
        for (int64_t j = 0; j < n; j++) bad += ((const int64_t *)f->got[i])[j] != ((const int64_t *)want)[j];
        *max_diff = (double)bad;
        return (double)bad;
    }
    for (int64_t j = 0; j < n; j++) {
        double g = ((const float *)f->got[i])[j], c = ((const float *)want)[j], d, allowed;
        if (isnan(g) || isnan(c)) d = isnan(g) && isnan(c) ? 0.0 : INFINITY;
        else d = fabs(g - c);
        allowed = kind == GN_ABS ? tol : tol * fmax(1.0, fabs(c));
        if (d > *max_diff) *max_diff = d;
        if (d - allowed > worst) worst = d - allowed;
    }
    return worst;
}

/* Runs both kernels, asserts both give TGC_OK, reads the gpu's outputs
 * back and asserts each is within tolerance of the cpu's. */
static inline void gn_check(gn_fixture *f, gn_tol_kind kind, double tol) {
    tgc_status st = gn_run(f, TGC_DEVICE_CPU, f->cpu, f->cin, f->cout);
    CU_ASSERT_EQUAL(st, TGC_OK);
    if (st != TGC_OK) {
        fprintf(stderr, "\n  %s on the cpu: %s\n", f->op, f->err);
        return;
    }
    st = gn_run_gpu(f);
    CU_ASSERT_EQUAL(st, TGC_OK);
    if (st != TGC_OK) {
        fprintf(stderr, "\n  %s on the gpu: %s\n", f->op, f->err);
        return;
    }
    for (int i = 0; i < f->n_out; i++) {
        if (f->gout[i].buf == NULL) continue;
        size_t nbytes = tgc_value_nbytes(&f->gout[i]);
        if (nbytes > 0) {
            st = f->gpu->ops->copy_to_host(f->gpu, f->got[i], f->gout[i].buf->mem, 0, nbytes);
            CU_ASSERT_EQUAL(st, TGC_OK);
            if (st != TGC_OK) continue;
        }
        double max_diff, excess = gn_excess(f, i, kind, tol, &max_diff);
        CU_ASSERT(excess <= 0.0);
        if (!(excess <= 0.0) && f->cout[i].dtype == TGC_INT64)
            fprintf(stderr, "\n  %s output %d: %g values differ\n", f->op, i, max_diff);
        else if (!(excess <= 0.0))
            fprintf(stderr, "\n  %s output %d: max |gpu - cpu| %g passes the tolerance (%s %g)\n", f->op, i,
                    max_diff, kind == GN_ABS ? "absolute" : "relative", tol);
    }
}

/* Runs the gpu kernel and asserts it fails with TGC_ERR_RUNTIME and a reason. */
static inline void gn_check_fails(gn_fixture *f) {
    tgc_status st = gn_run(f, TGC_DEVICE_GPU, f->gpu, f->gin, f->gout);
    CU_ASSERT_EQUAL(st, TGC_ERR_RUNTIME);
    CU_ASSERT(f->err[0] != '\0');
}

/* Float j of the gpu's output i, as read back by gn_check. */
static inline float gn_got_f32(const gn_fixture *f, int i, int64_t j) { return ((const float *)f->got[i])[j]; }

/* Releases every buffer, then the cpu device; asserts the gpu's live
 * buffers and events are back to where the suite started. */
static inline void gn_end(gn_fixture *f) {
    for (int i = 0; i < f->n_in; i++) {
        tgc_buffer_release(f->cin[i].buf);
        tgc_buffer_release(f->gin[i].buf);
    }
    for (int i = 0; i < f->n_out; i++) {
        tgc_buffer_release(f->cout[i].buf);
        tgc_buffer_release(f->gout[i].buf);
        tgc_free(f->got[i]);
    }
    tgc_device_destroy(f->cpu);
    f->cpu = NULL;
    if (f->gpu != NULL) {
        f->gpu->ops->synchronize(f->gpu);
        tgc_cl_counters now = tgc_cl_device_counters(f->gpu);
        CU_ASSERT_EQUAL(now.mems, gn_start.mems);
        CU_ASSERT_EQUAL(now.events, gn_start.events);
        /* the generated programs (activations, tile variants) stay cached until the device goes */
        CU_ASSERT_EQUAL(now.programs - now.generated, gn_start.programs - gn_start.generated);
    }
}

/* The suite's last case: the counters once more, then the device and
 * CLBlast's cache (its programs keep the device's context alive) go. */
static inline void gn_suite_end(void) {
    if (gn_gpu == NULL) return;
    tgc_cl_counters now = tgc_cl_device_counters(gn_gpu);
    CU_ASSERT_EQUAL(now.mems, gn_start.mems);
    CU_ASSERT_EQUAL(now.events, gn_start.events);
    CU_ASSERT_EQUAL(tgc_device_stats(gn_gpu).live_buffers, 0);
    if (tgc_clblast_is_open()) tgc_clblast.clear_cache();
    tgc_device_destroy(gn_gpu);
    gn_gpu = NULL;
}

#endif
