/* The cpu kernels of Einsum-12 (float32, float64 and every int type;
 * float16 widened to float32 and rounded once) and Det-11 (float32,
 * float16, float64), and
 * tgc_cpu_kernels_linalg[].
 *
 * Einsum (numpy.einsum's semantics, equation as graph/einsum.h parses it):
 * each label gets a size (a dim of 1 broadcasts) and, per tensor, a stride
 * (the sum of the strides of its axes with that label, so a label twice in
 * a term walks the diagonal; 0 where absent or broadcast). Two inputs
 * whose labels are each either batch (in both and the output), M or N (in
 * one and the output), or K (in both, not the output), each once and
 * unbroadcast, are lowered to a batched GEMM: both are gathered into
 * [batch, M, K] and [batch, K, N], one tgc_cpu_sgemm_one (oneDNN where it
 * takes the product, else OpenBLAS) per batch gives [batch, M, N], which
 * is scattered into the output's label order.
 * Anything else runs the general loop: for each output element, the sum
 * over the summed labels of the product of the inputs' elements, in
 * double (integers and float64: always the loop, integers wrapping as
 * numpy does).
 *
 * Det: the determinant of each [M, M] matrix of [..., M, M] by LU
 * factorisation with partial pivoting (Golub & Van Loan, Matrix
 * Computations, algorithm 3.4.1) in double: the product of the pivots,
 * negated once per row swap; a zero pivot column gives 0; a 0 x 0 matrix
 * gives 1, as numpy.linalg.det (ONNX's reference). */
#include "devices/cpu/kernels_nn.h"
#include "devices/kernel_checks.h"
#include "graph/einsum.h"
#include "support/alloc.h"
#include "support/half.h"

#include <limits.h>
#include <math.h>
#include <string.h>

/* Input i as float32: its buffer, or a widened copy in owned[i]. */
static const float *as_f32(const tgc_value *v, float **owned) {
    *owned = NULL;
    if (v->dtype == TGC_FLOAT32) return tgc_buffer_host_ptr(v->buf);
    int64_t n = tgc_value_numel(v);
    *owned = tgc_malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    if (*owned == NULL) return NULL;
    const uint16_t *h = tgc_buffer_host_ptr(v->buf);
    for (int64_t i = 0; i < n; i++) (*owned)[i] = tgc_half_to_float(h[i]);
    return *owned;
}

/* Output y's float32 target: its buffer, or scratch in *owned for float16. */
static float *out_f32(const tgc_value *y, float **owned) {
    *owned = NULL;
    if (y->dtype == TGC_FLOAT32) return tgc_buffer_host_ptr(y->buf);
    int64_t n = tgc_value_numel(y);
    *owned = tgc_malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    return *owned;
}

static void out_done(const tgc_value *y, const float *yf) {
    if (y->dtype != TGC_FLOAT16) return;
    uint16_t *h = tgc_buffer_host_ptr(y->buf);
    for (int64_t i = 0, n = tgc_value_numel(y); i < n; i++) h[i] = tgc_float_to_half(yf[i]);
}

/* ==== Einsum ================================================================== */

#define MAXL TGC_EINSUM_MAX_LABELS

/* For every index of the label space sz[0..nl) in row-major order:
 * dst[idx . ds] = src[idx . ss]. */
static void copy_labels(int nl, const int64_t *sz, const float *src, const int64_t *ss, float *dst,
                        const int64_t *ds) {
    int64_t idx[MAXL] = {0}, total = 1, so = 0, dof = 0;
    for (int j = 0; j < nl; j++) total *= sz[j];
    for (int64_t t = 0; t < total; t++) {
        dst[dof] = src[so];
        for (int j = nl - 1; j >= 0; j--) {
            so += ss[j];
            dof += ds[j];
            if (++idx[j] < sz[j]) break;
            so -= ss[j] * sz[j];
            dof -= ds[j] * sz[j];
            idx[j] = 0;
        }
    }
}

typedef struct einsum_plan {
    int n;                        /* inputs */
    int64_t size[MAXL];           /* each label's size */
    int64_t stride[TGC_EINSUM_MAX_INPUTS][MAXL]; /* per input, per label (0: absent or broadcast) */
    int64_t out_stride[MAXL];     /* per label, 0 for summed labels */
    bool in_input[TGC_EINSUM_MAX_INPUTS][MAXL], in_out[MAXL], broadcast[TGC_EINSUM_MAX_INPUTS];
    int count[TGC_EINSUM_MAX_INPUTS][MAXL]; /* axes of input i with the label */
} einsum_plan;

/* The general loop: y[o] = sum over the summed labels of prod_i x_i,
 * accumulated in ACC: double for floats; uint64_t for integers, so that
 * products and sums wrap around (two's complement) as numpy's do in the
 * tensors' type once truncated. One line per element type below. */
#define DEF_EINSUM_LOOP(s, T, ACC)                                                                  \
    static void einsum_loop_##s(const einsum_plan *p, const tgc_einsum *e, const void *const *px, void *py) { \
        const T *const *x = (const T *const *)px;                                                   \
        T *y = py;                                                                                  \
        int order[MAXL], sum_labels[MAXL], no = 0, ns = 0;                                          \
        for (int j = 0; j < e->out_rank; j++) order[no++] = e->out_labels[j];                       \
        for (int l = 0; l < MAXL; l++)                                                              \
            if (e->used[l] && !p->in_out[l]) sum_labels[ns++] = l;                                  \
        int64_t n_out = 1, n_sum = 1;                                                               \
        for (int j = 0; j < no; j++) n_out *= p->size[order[j]];                                    \
        for (int j = 0; j < ns; j++) n_sum *= p->size[sum_labels[j]];                               \
        int64_t oidx[MAXL] = {0}, base[TGC_EINSUM_MAX_INPUTS] = {0};                                \
        for (int64_t o = 0; o < n_out; o++) {                                                       \
            ACC acc = 0;                                                                            \
            int64_t sidx[MAXL] = {0}, off[TGC_EINSUM_MAX_INPUTS];                                   \
            for (int i = 0; i < p->n; i++) off[i] = base[i];                                        \
            for (int64_t t = 0; t < n_sum; t++) {                                                   \
                ACC prod = 1;                                                                       \
                for (int i = 0; i < p->n; i++) prod *= (ACC)x[i][off[i]];                           \
                acc += prod;                                                                        \
                for (int j = ns - 1; j >= 0; j--) {                                                 \
                    int l = sum_labels[j];                                                          \
                    for (int i = 0; i < p->n; i++) off[i] += p->stride[i][l];                       \
                    if (++sidx[j] < p->size[l]) break;                                              \
                    for (int i = 0; i < p->n; i++) off[i] -= p->stride[i][l] * p->size[l];          \
                    sidx[j] = 0;                                                                    \
                }                                                                                   \
            }                                                                                       \
            y[o] = (T)acc; /* the output is contiguous in its label order */                        \
            for (int j = no - 1; j >= 0; j--) {                                                     \
                int l = order[j];                                                                   \
                for (int i = 0; i < p->n; i++) base[i] += p->stride[i][l];                          \
                if (++oidx[j] < p->size[l]) break;                                                  \
                for (int i = 0; i < p->n; i++) base[i] -= p->stride[i][l] * p->size[l];             \
                oidx[j] = 0;                                                                        \
            }                                                                                       \
        }                                                                                           \
    }
DEF_EINSUM_LOOP(f32, float, double)
DEF_EINSUM_LOOP(i32, int32_t, uint64_t)
DEF_EINSUM_LOOP(i64, int64_t, uint64_t)
DEF_EINSUM_LOOP(u8, uint8_t, uint64_t)
DEF_EINSUM_LOOP(f64, double, double)
DEF_EINSUM_LOOP(i8, int8_t, uint64_t)
DEF_EINSUM_LOOP(i16, int16_t, uint64_t)
DEF_EINSUM_LOOP(u16, uint16_t, uint64_t)
DEF_EINSUM_LOOP(u32, uint32_t, uint64_t)
DEF_EINSUM_LOOP(u64, uint64_t, uint64_t)

typedef void (*einsum_loop_fn)(const einsum_plan *p, const tgc_einsum *e, const void *const *x, void *y);

/* The loop of a type the loop computes in itself (the integers, float64);
 * NULL for the others (float32 and float16: the GEMM path first). */
static einsum_loop_fn typed_loop(tgc_dtype t) {
    switch (t) {
    case TGC_INT32: return einsum_loop_i32;
    case TGC_INT64: return einsum_loop_i64;
    case TGC_UINT8: return einsum_loop_u8;
    case TGC_FLOAT64: return einsum_loop_f64;
    case TGC_INT8: return einsum_loop_i8;
    case TGC_INT16: return einsum_loop_i16;
    case TGC_UINT16: return einsum_loop_u16;
    case TGC_UINT32: return einsum_loop_u32;
    case TGC_UINT64: return einsum_loop_u64;
    default: return NULL;
    }
}

/* The batched-GEMM lowering of two inputs, when their labels allow it (see
 * the top); false when they do not (nothing written) or scratch memory is
 * short (the caller then runs the general loop). */
static bool einsum_gemm(const einsum_plan *p, const tgc_einsum *e, const float *const *x, float *y) {
    if (p->n != 2 || p->broadcast[0] || p->broadcast[1]) return false;
    int bl[MAXL], ml[MAXL], nl[MAXL], kl[MAXL], nb = 0, nm = 0, nn = 0, nk = 0;
    int64_t B = 1, M = 1, N = 1, K = 1;
    for (int l = 0; l < MAXL; l++) {
        if (!e->used[l]) continue;
        bool a = p->in_input[0][l], b = p->in_input[1][l], o = p->in_out[l];
        if (p->count[0][l] > 1 || p->count[1][l] > 1) return false;
        if (a && b && o) bl[nb++] = l, B *= p->size[l];
        else if (a && o) ml[nm++] = l, M *= p->size[l];
        else if (b && o) nl[nn++] = l, N *= p->size[l];
        else if (a && b) kl[nk++] = l, K *= p->size[l];
        else return false; /* summed in one input only */
    }
    if (M > INT_MAX || N > INT_MAX || K > INT_MAX || M * K == 0 || K * N == 0) return false;
    int64_t asz[MAXL], ass[MAXL], ads[MAXL], bsz[MAXL], bss[MAXL], bds[MAXL], csz[MAXL], css[MAXL], cds[MAXL];
    int na = 0, nbb = 0, nc = 0;
    /* A as [batch, M, K], B as [batch, K, N], C as [batch, M, N]; dst
     * strides row-major in those orders. */
    int la[MAXL], lb[MAXL], lc[MAXL];
    for (int j = 0; j < nb; j++) la[na++] = bl[j], lb[nbb++] = bl[j], lc[nc++] = bl[j];
    for (int j = 0; j < nm; j++) la[na++] = ml[j], lc[nc++] = ml[j];
    for (int j = 0; j < nk; j++) la[na++] = kl[j], lb[nbb++] = kl[j];
    for (int j = 0; j < nn; j++) lb[nbb++] = nl[j], lc[nc++] = nl[j];
    int64_t s = 1;
    for (int j = na - 1; j >= 0; j--) asz[j] = p->size[la[j]], ass[j] = p->stride[0][la[j]], ads[j] = s, s *= asz[j];
    s = 1;
    for (int j = nbb - 1; j >= 0; j--) bsz[j] = p->size[lb[j]], bss[j] = p->stride[1][lb[j]], bds[j] = s, s *= bsz[j];
    s = 1;
    for (int j = nc - 1; j >= 0; j--) csz[j] = p->size[lc[j]], css[j] = s, cds[j] = p->out_stride[lc[j]], s *= csz[j];
    float *a = tgc_malloc((size_t)(B * M * K) * sizeof *a), *b = tgc_malloc((size_t)(B * K * N) * sizeof *b);
    float *cm = tgc_malloc((size_t)(B * M * N) * sizeof *cm);
    bool ok = a && b && cm;
    if (ok) {
        copy_labels(na, asz, x[0], ass, a, ads);
        copy_labels(nbb, bsz, x[1], bss, b, bds);
        for (int64_t t = 0; ok && t < B; t++)
            ok = tgc_cpu_sgemm_one(false, false, M, N, K, 1.0f, a + t * M * K, K, b + t * K * N, N, 0.0f,
                                   cm + t * M * N, N);
        if (ok) copy_labels(nc, csz, cm, css, y, cds);
    }
    tgc_free(a);
    tgc_free(b);
    tgc_free(cm);
    return ok;
}

static tgc_status k_einsum(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 1, 1);
    if (st != TGC_OK) return st;
    const char *op = tgc_kernel_op_name(c);
    int n = c->n_inputs, ranks[TGC_EINSUM_MAX_INPUTS];
    if (n > TGC_EINSUM_MAX_INPUTS) return tgc_kernel_fail(c, "%s: %d inputs; at most %d", op, n, TGC_EINSUM_MAX_INPUTS);
    const tgc_value *y = &c->outputs[0];
    for (int i = 0; i < n; i++) {
        const tgc_value *v = &c->inputs[i];
        if (v->buf == NULL && v->dtype == TGC_DTYPE_INVALID) return tgc_kernel_fail(c, "%s: input %d is omitted", op, i);
        if (v->dtype != y->dtype ||
            (v->dtype != TGC_FLOAT32 && v->dtype != TGC_FLOAT16 && typed_loop(v->dtype) == NULL))
            return tgc_kernel_fail(c, "%s: input %d is %s and the output %s; the cpu takes a float (not "
                                   "bfloat16) or int type, all alike", op, i, tgc_dtype_name(v->dtype),
                                   tgc_dtype_name(y->dtype));
        ranks[i] = v->rank;
    }
    tgc_einsum e;
    char err[160];
    const char *eq = tgc_kernel_attr_string(c, "equation", "");
    if (!tgc_einsum_parse(eq, n, ranks, &e, err, sizeof err))
        return tgc_kernel_fail(c, "%s: equation '%s': %s", op, eq, err);
    einsum_plan p;
    memset(&p, 0, sizeof p);
    p.n = n;
    for (int l = 0; l < MAXL; l++) p.size[l] = 1;
    bool set[MAXL] = {false};
    for (int i = 0; i < n; i++) {
        const tgc_value *v = &c->inputs[i];
        for (int a = 0; a < v->rank; a++) {
            int l = e.labels[i][a];
            int64_t d = v->dims[a];
            if (!set[l] || p.size[l] == 1) p.size[l] = d, set[l] = true;
            else if (d != 1 && d != p.size[l])
                return tgc_kernel_fail(c, "%s: axis %d of input %d has %lld elements where its label has %lld", op, a,
                                       i, (long long)d, (long long)p.size[l]);
        }
    }
    for (int i = 0; i < n; i++) {
        const tgc_value *v = &c->inputs[i];
        int64_t s = 1;
        for (int a = v->rank - 1; a >= 0; a--) {
            int l = e.labels[i][a];
            p.in_input[i][l] = true;
            p.count[i][l]++;
            if (v->dims[a] == p.size[l]) p.stride[i][l] += s;
            else p.broadcast[i] = true; /* a dim of 1 against a larger label: stride 0 */
            s *= v->dims[a];
        }
    }
    int64_t out[TGC_MAX_RANK], s = 1;
    for (int a = e.out_rank - 1; a >= 0; a--) {
        int l = e.out_labels[a];
        out[a] = p.size[l];
        p.in_out[l] = true;
        p.out_stride[l] = s;
        s *= out[a];
    }
    if ((st = tgc_kernel_expect_dims(c, 0, e.out_rank, out)) != TGC_OK) return st;
    if (tgc_value_numel(y) == 0) return TGC_OK;
    bool empty_input = false;
    for (int i = 0; i < n; i++) empty_input = empty_input || tgc_value_numel(&c->inputs[i]) == 0;
    einsum_loop_fn loop = typed_loop(y->dtype);
    if (loop != NULL) { /* integers and float64: the general loop, in the type itself */
        void *py = tgc_buffer_host_ptr(y->buf);
        if (empty_input) {
            memset(py, 0, tgc_value_nbytes(y));
        } else {
            const void *xs[TGC_EINSUM_MAX_INPUTS];
            for (int i = 0; i < n; i++) xs[i] = tgc_buffer_host_ptr(c->inputs[i].buf);
            loop(&p, &e, xs, py);
        }
        return TGC_OK;
    }

    float *owned[TGC_EINSUM_MAX_INPUTS] = {NULL}, *yo = NULL;
    const float *x[TGC_EINSUM_MAX_INPUTS];
    float *yf = NULL;
    bool ok = true;
    for (int i = 0; i < n && ok && !empty_input; i++) ok = (x[i] = as_f32(&c->inputs[i], &owned[i])) != NULL;
    if (ok) ok = (yf = out_f32(y, &yo)) != NULL;
    if (!ok) {
        st = tgc_kernel_fail(c, "%s: out of memory widening float16", op);
    } else if (empty_input) { /* a sum over an empty label: 0 */
        memset(yf, 0, (size_t)tgc_value_numel(y) * sizeof *yf);
    } else if (!einsum_gemm(&p, &e, x, yf)) {
        einsum_loop_f32(&p, &e, (const void *const *)x, yf);
    }
    if (ok) out_done(y, yf);
    for (int i = 0; i < n; i++) tgc_free(owned[i]);
    tgc_free(yo);
    return st;
}

/* ==== Det ====================================================================== */

/* The determinant of the m x m matrix a (row-major, overwritten). */
static double det_lu(double *a, int64_t m) {
    double det = 1;
    for (int64_t k = 0; k < m; k++) {
        int64_t piv = k;
        for (int64_t i = k + 1; i < m; i++)
            if (fabs(a[i * m + k]) > fabs(a[piv * m + k])) piv = i;
        if (a[piv * m + k] == 0) return 0;
        if (piv != k) {
            for (int64_t j = 0; j < m; j++) {
                double t = a[k * m + j];
                a[k * m + j] = a[piv * m + j];
                a[piv * m + j] = t;
            }
            det = -det;
        }
        double p = a[k * m + k];
        det *= p;
        for (int64_t i = k + 1; i < m; i++) {
            double f = a[i * m + k] / p;
            for (int64_t j = k + 1; j < m; j++) a[i * m + j] -= f * a[k * m + j];
        }
    }
    return det;
}

/* Det of float64 [batch, M, M] (dims checked by k_det): LU in double, in
 * place of widening. */
static tgc_status det_f64(tgc_kernel_ctx *c, int64_t m, int64_t batch) {
    const double *x = tgc_buffer_host_ptr(c->inputs[0].buf);
    double *y = tgc_buffer_host_ptr(c->outputs[0].buf);
    double *a = tgc_malloc((size_t)(m * m > 0 ? m * m : 1) * sizeof *a);
    if (a == NULL) return tgc_kernel_fail(c, "%s: out of memory", tgc_kernel_op_name(c));
    for (int64_t b = 0; b < batch; b++) {
        memcpy(a, x + b * m * m, (size_t)(m * m) * sizeof *a);
        y[b] = m == 0 ? 1.0 : det_lu(a, m);
    }
    tgc_free(a);
    return TGC_OK;
}

static tgc_status k_det(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 1, 1);
    if (st != TGC_OK) return st;
    const char *op = tgc_kernel_op_name(c);
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    if ((x->dtype != TGC_FLOAT32 && x->dtype != TGC_FLOAT16 && x->dtype != TGC_FLOAT64) || y->dtype != x->dtype)
        return tgc_kernel_fail(c, "%s: input %s, output %s; the cpu takes float32, float16 or float64 alike", op,
                               tgc_dtype_name(x->dtype), tgc_dtype_name(y->dtype));
    int r = x->rank;
    if (r < 2 || x->dims[r - 1] != x->dims[r - 2])
        return tgc_kernel_fail(c, "%s: the input is not a batch of square matrices [..., M, M]", op);
    if ((st = tgc_kernel_expect_dims(c, 0, r - 2, x->dims)) != TGC_OK) return st;
    int64_t m = x->dims[r - 1], batch = tgc_value_numel(y);
    if (batch == 0) return TGC_OK;
    if (x->dtype == TGC_FLOAT64) return det_f64(c, m, batch);
    float *xo = NULL, *yo = NULL;
    if (m == 0) { /* 0 x 0 matrices */
        float *yf = out_f32(y, &yo);
        if (yf == NULL) return tgc_kernel_fail(c, "%s: out of memory", op);
        for (int64_t b = 0; b < batch; b++) yf[b] = 1.0f;
        out_done(y, yf);
        tgc_free(yo);
        return TGC_OK;
    }
    const float *xf = as_f32(x, &xo);
    float *yf = xf ? out_f32(y, &yo) : NULL;
    double *a = yf ? tgc_malloc((size_t)(m * m > 0 ? m * m : 1) * sizeof *a) : NULL;
    if (a == NULL) {
        st = tgc_kernel_fail(c, "%s: out of memory", op);
    } else {
        for (int64_t b = 0; b < batch; b++) {
            for (int64_t i = 0; i < m * m; i++) a[i] = xf[b * m * m + i];
            yf[b] = (float)det_lu(a, m);
        }
        out_done(y, yf);
    }
    tgc_free(a);
    tgc_free(xo);
    tgc_free(yo);
    return st;
}

/* ==== The list ================================================================== */

const tgc_kernel_def tgc_cpu_kernels_linalg[] = {
    {.op = "Einsum", .fn = k_einsum, .forward_input = -1,
     .dtypes = {TGC_FLOAT32, TGC_FLOAT16, TGC_FLOAT64, TGC_INT8, TGC_INT16, TGC_INT32, TGC_INT64, TGC_UINT8,
                TGC_UINT16, TGC_UINT32, TGC_UINT64, TGC_DTYPE_INVALID}},
    {.op = "Det", .fn = k_det, .forward_input = -1,
     .dtypes = {TGC_FLOAT32, TGC_FLOAT16, TGC_FLOAT64, TGC_DTYPE_INVALID}},
    {.op = NULL},
};
