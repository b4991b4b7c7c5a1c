/* A fixture for checking a gpu (OpenCL) kernel against the cpu kernel of
 * the same op: one set of inputs goes to both devices (host-memory
 * arguments of the gpu kernel stay in cpu memory, as the executor keeps
 * them), each kernel runs as the executor would call it, and the gpu's
 * outputs, read back, must match the cpu's: floats within a relative
 * tolerance, everything else byte for byte.
 *
 * Without an OpenCL device gk_open says so once and returns false; the
 * test then passes without checking anything.
 *
 * Example usage:
 *     gk_dev d;
 *     if (!gk_open(&d)) return;
 *     gk_case k;
 *     gk_begin(&k, &d, "Add");
 *     gk_in_rand(&k, TGC_FLOAT32, 3, (int64_t[]){3, 1, 5});
 *     gk_in_rand(&k, TGC_FLOAT32, 2, (int64_t[]){4, 5});
 *     gk_out(&k, TGC_FLOAT32, 3, (int64_t[]){3, 4, 5});
 *     gk_run(&k);          // both kernels, then the comparison
 *     gk_end(&k);          // releases every buffer
 *     gk_close(&d);        // no live buffers or OpenCL objects remain
 */
#ifndef TGC_TESTS_DEVICES_GPU_FIXTURE_H
#define TGC_TESTS_DEVICES_GPU_FIXTURE_H

#include "devices/kernel.h"
#include "devices/opencl/opencl.h"
#include "support/alloc.h"
#include "support/half.h"
#include "tests/harness.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define GK_MAX 8
/* Floats: |gpu - cpu| <= GK_TOL * max(1, |cpu|); NaN matches NaN. */
#define GK_TOL 1e-5

/* The two devices and the random state of one test. */
typedef struct gk_dev {
    tgc_device *gpu, *cpu;
    uint64_t rng;
} gk_dev;

/* Opens gpu0 and cpu0; false (after a notice, printed once) when there is
 * no OpenCL device, false and a failed assertion when there is one that
 * does not open. */
static inline bool gk_open(gk_dev *d) {
    static bool told;
    memset(d, 0, sizeof *d);
    tgc_diags *diags = tgc_diags_create();
    CU_ASSERT_PTR_NOT_NULL_FATAL(diags);
    tgc_status st = tgc_cl_device_create(0, diags, &d->gpu);
    if (st != TGC_OK) {
        if (tgc_test_has_opencl_device()) { /* there, but it will not open: a failure */
            tgc_diags_print(diags, stderr);
            CU_FAIL("gpu0 exists but did not open (see the error above)");
        } else if (!told) {
            fprintf(stderr, "\n  notice: no OpenCL device; the gpu kernel tests check nothing here\n");
            told = true;
        }
        tgc_diags_free(diags);
        return false;
    }
    tgc_diags_free(diags);
    d->cpu = tgc_cpu_device_create(0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d->cpu);
    d->rng = 0x9E3779B97F4A7C15ull;
    return true;
}

/* Destroys both devices after checking that no buffer and no OpenCL
 * memory, event or kernel object is left. */
static inline void gk_close(gk_dev *d) {
    CU_ASSERT_EQUAL(d->gpu->ops->synchronize(d->gpu), TGC_OK);
    tgc_cl_counters k = tgc_cl_device_counters(d->gpu);
    CU_ASSERT_EQUAL(k.mems, 0);
    CU_ASSERT_EQUAL(k.events, 0);
    CU_ASSERT_EQUAL(tgc_device_stats(d->gpu).live_buffers, 0);
    CU_ASSERT_EQUAL(tgc_device_stats(d->cpu).live_buffers, 0);
    tgc_device_destroy(d->gpu);
    tgc_device_destroy(d->cpu);
}

/* xorshift64*: the same numbers on every run. */
static inline uint64_t gk_next(gk_dev *d) {
    d->rng ^= d->rng >> 12;
    d->rng ^= d->rng << 25;
    d->rng ^= d->rng >> 27;
    return d->rng * 0x2545F4914F6CDD1Dull;
}

/* Uniform in [lo, hi). */
static inline float gk_uniform(gk_dev *d, float lo, float hi) {
    return lo + (hi - lo) * (float)((double)(gk_next(d) >> 11) / 9007199254740992.0);
}

/* One kernel call on both devices. cpu_in/out live on the cpu; gpu_in
 * are on the gpu, or the cpu buffer itself for a host-memory argument. */
typedef struct gk_case {
    gk_dev *d;
    const char *op;
    tgc_value cpu_in[GK_MAX], gpu_in[GK_MAX], cpu_out[GK_MAX], gpu_out[GK_MAX];
    int n_in, n_out;
    tgc_attr attrs[GK_MAX];
    int n_attrs;
    tgc_node node;
    int forward; /* 1: gpu output 0 is gpu input 0's buffer */
    double tol;
    char err[256];
} gk_case;

static inline void gk_begin(gk_case *k, gk_dev *d, const char *op) {
    memset(k, 0, sizeof *k);
    k->d = d;
    k->op = op;
    k->tol = GK_TOL;
}

static inline void gk_attr(gk_case *k, tgc_attr a) {
    CU_ASSERT_FATAL(k->n_attrs < GK_MAX);
    k->attrs[k->n_attrs++] = a;
}

#define GK_INT(key, v) ((tgc_attr){.name = (char *)(key), .type = TGC_ATTR_INT, .i = (v)})
#define GK_FLOAT(key, v) ((tgc_attr){.name = (char *)(key), .type = TGC_ATTR_FLOAT, .f = (v)})
#define GK_STRING(key, v) ((tgc_attr){.name = (char *)(key), .type = TGC_ATTR_STRING, .s = (char *)(v)})
#define GK_INTS(key, arr, len) \
    ((tgc_attr){.name = (char *)(key), .type = TGC_ATTR_INTS, .ints = (int64_t *)(arr), .n = (len)})

/* A cpu tensor of dtype and dims holding data (NULL: 0xA5 bytes). */
static inline tgc_value gk_cpu_value(gk_case *k, tgc_dtype dtype, int rank, const int64_t *dims, const void *data) {
    tgc_value v = {.dtype = dtype, .rank = rank};
    for (int i = 0; i < rank; i++) v.dims[i] = dims[i];
    size_t nbytes = tgc_value_nbytes(&v);
    CU_ASSERT_EQUAL_FATAL(tgc_buffer_alloc(k->d->cpu, nbytes, &v.buf), TGC_OK);
    if (nbytes > 0) {
        if (data != NULL) memcpy(tgc_buffer_host_ptr(v.buf), data, nbytes);
        else memset(tgc_buffer_host_ptr(v.buf), 0xA5, nbytes);
    }
    return v;
}

/* A gpu tensor like v, holding a copy of v's bytes (or 0xA5 bytes when
 * copy is false). */
static inline tgc_value gk_gpu_like(gk_case *k, const tgc_value *v, bool copy) {
    tgc_value g = *v;
    size_t nbytes = tgc_value_nbytes(v);
    tgc_device *gpu = k->d->gpu;
    CU_ASSERT_EQUAL_FATAL(tgc_buffer_alloc(gpu, nbytes, &g.buf), TGC_OK);
    if (nbytes == 0) return g;
    if (copy) {
        const void *src = tgc_buffer_host_ptr(v->buf);
        CU_ASSERT_EQUAL_FATAL(gpu->ops->copy_from_host(gpu, g.buf->mem, 0, src, nbytes), TGC_OK);
    } else {
        void *junk = tgc_malloc(nbytes);
        CU_ASSERT_PTR_NOT_NULL_FATAL(junk);
        memset(junk, 0xA5, nbytes);
        CU_ASSERT_EQUAL_FATAL(gpu->ops->copy_from_host(gpu, g.buf->mem, 0, junk, nbytes), TGC_OK);
        tgc_free(junk);
    }
    return g;
}

/* Appends an input holding `data` (its gpu side is made by gk_run, which
 * knows which arguments the gpu kernel takes in host memory). */
static inline void gk_in(gk_case *k, tgc_dtype dtype, int rank, const int64_t *dims, const void *data) {
    CU_ASSERT_FATAL(k->n_in < GK_MAX);
    k->cpu_in[k->n_in++] = gk_cpu_value(k, dtype, rank, dims, data);
}

/* Appends a 1-D int64 input of n values (a shape argument). */
static inline void gk_in_i64(gk_case *k, int64_t n, const int64_t *values) { gk_in(k, TGC_INT64, 1, &n, values); }

/* Appends an omitted optional input. */
static inline void gk_in_omit(gk_case *k) {
    CU_ASSERT_FATAL(k->n_in < GK_MAX);
    k->cpu_in[k->n_in++] = (tgc_value){.dtype = TGC_DTYPE_INVALID};
}

/* Appends an input of seeded random values: floats uniform in [lo, hi),
 * integers uniform in [lo, hi] (lo, hi truncated), bools 0 or 1. */
static inline void gk_in_range(gk_case *k, tgc_dtype dtype, int rank, const int64_t *dims, double lo, double hi) {
    tgc_value v = {.dtype = dtype, .rank = rank};
    for (int i = 0; i < rank; i++) v.dims[i] = dims[i];
    int64_t n = tgc_value_numel(&v);
    size_t es = tgc_dtype_size(dtype);
    char *data = tgc_malloc((size_t)n * es + 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(data);
    for (int64_t i = 0; i < n; i++) {
        char *p = data + (size_t)i * es;
        float f = gk_uniform(k->d, (float)lo, (float)hi);
        int64_t span = (int64_t)hi - (int64_t)lo + 1;
        int64_t r = (int64_t)lo + (int64_t)(gk_next(k->d) % (uint64_t)(span > 0 ? span : 1));
        switch (dtype) {
        case TGC_FLOAT32: memcpy(p, &f, 4); break;
        case TGC_FLOAT16: {
            uint16_t h = tgc_float_to_half(f);
            memcpy(p, &h, 2);
            break;
        }
        case TGC_INT32: {
            int32_t x = (int32_t)r;
            memcpy(p, &x, 4);
            break;
        }
        case TGC_INT64: memcpy(p, &r, 8); break;
        case TGC_UINT8: *p = (char)(uint8_t)r; break;
        default: *p = (char)(gk_next(k->d) >> 63); break;
        }
    }
    gk_in(k, dtype, rank, dims, data);
    tgc_free(data);
}

/* Random inputs: floats in [-2, 2), integers in [-100, 100], uint8 in [0, 255]. */
static inline void gk_in_rand(gk_case *k, tgc_dtype dtype, int rank, const int64_t *dims) {
    if (dtype == TGC_UINT8) gk_in_range(k, dtype, rank, dims, 0, 255);
    else if (dtype == TGC_INT32 || dtype == TGC_INT64) gk_in_range(k, dtype, rank, dims, -100, 100);
    else gk_in_range(k, dtype, rank, dims, -2, 2);
}

/* Appends output k->n_out of dtype and dims on both devices. */
static inline void gk_out(gk_case *k, tgc_dtype dtype, int rank, const int64_t *dims) {
    CU_ASSERT_FATAL(k->n_out < GK_MAX);
    k->cpu_out[k->n_out] = gk_cpu_value(k, dtype, rank, dims, NULL);
    k->gpu_out[k->n_out] = (tgc_value){.dtype = dtype, .rank = rank};
    k->n_out++;
}

extern const tgc_kernel_def tgc_gpu_kernels_elementwise[];
extern const tgc_kernel_def tgc_gpu_kernels_shape[];
extern const tgc_kernel_def tgc_gpu_kernels_reduce[];
extern const tgc_kernel_def tgc_gpu_kernels_indexing[];

/* The OpenCL kernel for op that handles dtype, from the families
 * under test (tgc_kernel_find would answer the host-memory "gpu" kernels
 * of integer shape arithmetic first, where they overlap). NULL if none. */
static inline const tgc_kernel_def *gk_gpu_find(const char *op, tgc_dtype dtype) {
    const tgc_kernel_def *const families[] = {tgc_gpu_kernels_elementwise, tgc_gpu_kernels_shape,
                                              tgc_gpu_kernels_reduce, tgc_gpu_kernels_indexing};
    for (int f = 0; f < (int)(sizeof families / sizeof families[0]); f++)
        for (const tgc_kernel_def *k = families[f]; k->op != NULL; k++) {
            if (strcmp(k->op, op) != 0) continue;
            bool any = k->dtypes[0] == TGC_DTYPE_INVALID || dtype == TGC_DTYPE_INVALID;
            for (int i = 0; !any && i < TGC_KERNEL_MAX_DTYPES && k->dtypes[i] != TGC_DTYPE_INVALID; i++)
                any = k->dtypes[i] == dtype;
            if (any) return k;
        }
    return NULL;
}

/* Runs the kernel of (op, kind) registered for input 0's dtype. */
static inline tgc_status gk_call(gk_case *k, tgc_device_kind kind, tgc_device *dev, const tgc_value *in,
                                 tgc_value *out) {
    k->node = (tgc_node){.name = (char *)"node", .kind = TGC_NODE_OP, .op_name = (char *)k->op, .attrs = k->attrs,
                         .n_attrs = k->n_attrs, .n_inputs = k->n_in, .n_outputs = k->n_out};
    tgc_dtype dt = k->n_in > 0 ? in[0].dtype : TGC_DTYPE_INVALID;
    const tgc_kernel_def *def = kind == TGC_DEVICE_GPU ? gk_gpu_find(k->op, dt) : tgc_kernel_find(k->op, kind, dt);
    if (def == NULL)
        fprintf(stderr, "\n  no %s kernel for %s (%s)\n", kind == TGC_DEVICE_GPU ? "gpu" : "cpu", k->op,
                tgc_dtype_name(dt));
    CU_ASSERT_PTR_NOT_NULL_FATAL(def);
    k->err[0] = '\0';
    tgc_kernel_ctx c = {.node = &k->node, .device = dev, .inputs = in, .n_inputs = k->n_in, .outputs = out,
                        .n_outputs = k->n_out, .error = k->err, .error_size = sizeof k->err};
    return def->fn(&c);
}

/* Makes the gpu inputs and outputs: device copies of the inputs, except
 * those the gpu kernel takes in host memory; output 0 is input 0's buffer
 * when k->forward. */
static inline void gk_prepare(gk_case *k) {
    tgc_dtype dt = k->n_in > 0 ? k->cpu_in[0].dtype : TGC_DTYPE_INVALID;
    const tgc_kernel_def *def = gk_gpu_find(k->op, dt);
    if (def == NULL) fprintf(stderr, "\n  no gpu kernel for %s (%s)\n", k->op, tgc_dtype_name(dt));
    CU_ASSERT_PTR_NOT_NULL_FATAL(def);
    for (int i = 0; i < k->n_in; i++) {
        const tgc_value *v = &k->cpu_in[i];
        if (v->buf == NULL) k->gpu_in[i] = *v;
        else if (def->host_inputs >> i & 1u) k->gpu_in[i] = (tgc_value){.dtype = v->dtype, .rank = v->rank,
                                                                          .buf = tgc_buffer_retain(v->buf)};
        else k->gpu_in[i] = gk_gpu_like(k, v, true);
        memcpy(k->gpu_in[i].dims, v->dims, sizeof v->dims);
    }
    for (int i = 0; i < k->n_out; i++) {
        if (i == 0 && k->forward) {
            CU_ASSERT_FATAL(tgc_value_nbytes(&k->cpu_out[0]) == tgc_value_nbytes(&k->gpu_in[0]));
            k->gpu_out[0] = k->cpu_out[0];
            k->gpu_out[0].buf = tgc_buffer_retain(k->gpu_in[0].buf);
        } else {
            k->gpu_out[i] = gk_gpu_like(k, &k->cpu_out[i], false);
        }
    }
}

/* Element i of a float32 or float16 array as a double. */
static inline double gk_float_at(tgc_dtype dt, const void *p, int64_t i) {
    if (dt == TGC_FLOAT32) {
        float f;
        memcpy(&f, (const char *)p + i * 4, 4);
        return f;
    }
    uint16_t h;
    memcpy(&h, (const char *)p + i * 2, 2);
    return tgc_half_to_float(h);
}

/* Compares gpu output o (read back) with the cpu's; returns the number of
 * elements that differ, reporting the first few. */
static inline int64_t gk_compare(gk_case *k, int o) {
    const tgc_value *c = &k->cpu_out[o], *g = &k->gpu_out[o];
    size_t nbytes = tgc_value_nbytes(c), es = tgc_dtype_size(c->dtype);
    if (nbytes == 0) return 0;
    char *got = tgc_malloc(nbytes);
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    tgc_device *gpu = k->d->gpu;
    CU_ASSERT_EQUAL_FATAL(gpu->ops->copy_to_host(gpu, got, g->buf->mem, 0, nbytes), TGC_OK);
    const char *want = tgc_buffer_host_ptr(c->buf);
    int64_t bad = 0, n = tgc_value_numel(c);
    for (int64_t i = 0; i < n; i++) {
        bool ok;
        if (c->dtype == TGC_FLOAT32 || c->dtype == TGC_FLOAT16) {
            double a = gk_float_at(c->dtype, got, i), b = gk_float_at(c->dtype, want, i);
            if (isnan(b) || isinf(b)) ok = isnan(b) ? isnan(a) : a == b;
            else ok = fabs(a - b) <= k->tol * fmax(1.0, fabs(b));
            if (!ok && bad < 5)
                fprintf(stderr, "\n  %s output %d element %lld: gpu %.9g, cpu %.9g", k->op, o, (long long)i, a, b);
        } else {
            ok = memcmp(got + (size_t)i * es, want + (size_t)i * es, es) == 0;
            if (!ok && bad < 5) {
                int64_t a = 0, b = 0;
                memcpy(&a, got + (size_t)i * es, es);
                memcpy(&b, want + (size_t)i * es, es);
                fprintf(stderr, "\n  %s output %d element %lld: gpu %lld, cpu %lld (raw bytes)", k->op, o,
                        (long long)i, (long long)a, (long long)b);
            }
        }
        if (!ok) bad++;
    }
    tgc_free(got);
    return bad;
}

/* Runs both kernels: each must succeed, and every gpu output must match. */
static inline void gk_run(gk_case *k) {
    tgc_status st = gk_call(k, TGC_DEVICE_CPU, k->d->cpu, k->cpu_in, k->cpu_out);
    if (st != TGC_OK) fprintf(stderr, "\n  cpu %s failed: %s\n", k->op, k->err);
    CU_ASSERT_EQUAL_FATAL(st, TGC_OK);
    gk_prepare(k);
    st = gk_call(k, TGC_DEVICE_GPU, k->d->gpu, k->gpu_in, k->gpu_out);
    if (st != TGC_OK) fprintf(stderr, "\n  gpu %s failed: %s\n", k->op, k->err);
    CU_ASSERT_EQUAL_FATAL(st, TGC_OK);
    for (int o = 0; o < k->n_out; o++) {
        CU_ASSERT_EQUAL(k->gpu_out[o].rank, k->cpu_out[o].rank);
        int64_t bad = gk_compare(k, o);
        if (bad != 0) fprintf(stderr, "\n  %s: %lld elements of output %d differ\n", k->op, (long long)bad, o);
        CU_ASSERT_EQUAL(bad, 0);
    }
}

/* Runs both kernels expecting both to fail; the gpu's reason must contain
 * `needle`. */
static inline void gk_run_fails(gk_case *k, const char *needle) {
    CU_ASSERT_EQUAL(gk_call(k, TGC_DEVICE_CPU, k->d->cpu, k->cpu_in, k->cpu_out), TGC_ERR_RUNTIME);
    gk_prepare(k);
    CU_ASSERT_EQUAL(gk_call(k, TGC_DEVICE_GPU, k->d->gpu, k->gpu_in, k->gpu_out), TGC_ERR_RUNTIME);
    bool found = strstr(k->err, needle) != NULL;
    if (!found) fprintf(stderr, "\n  %s: wanted a reason with \"%s\", got \"%s\"\n", k->op, needle, k->err);
    CU_ASSERT(found);
}

/* Releases every buffer of the case. */
static inline void gk_end(gk_case *k) {
    for (int i = 0; i < GK_MAX; i++) {
        tgc_buffer_release(k->cpu_in[i].buf);
        tgc_buffer_release(k->gpu_in[i].buf);
        tgc_buffer_release(k->cpu_out[i].buf);
        tgc_buffer_release(k->gpu_out[i].buf);
    }
}

#endif
