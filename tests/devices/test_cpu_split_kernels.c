/* The cpu kernels that split their loops over the device's pool, on sizes
 * large enough to be cut into several pieces (with pieces that end inside
 * a row), each against a direct loop (exact for moves and elementwise
 * arithmetic, in double otherwise) and run both alone and over a 2-worker
 * pool, whose results must be bitwise the same (pieces are chosen from the
 * sizes alone):
 *   - Softmax and LogSoftmax over the last axis and over a middle one
 *     (column blocks), with NaN and -inf in rows;
 *   - LayerNormalization with an odd row length, Scale and B read in place;
 *   - Add with broadcasting (rows cut by pieces), Mul in place, Relu, every
 *     unary row of graph/elementwise.def in place;
 *   - Transpose (2-D blocks, rows, one merged row) and Slice;
 *   - batched MatMul of small products (several per piece, B broadcast);
 *   - Gemm with C [N], [M, 1] and a scalar, filled block by block;
 *   - ConvInteger (exact, so compared for equality) with its product cut
 *     across columns, across filters, and depthwise channels in pieces. */
#include "tests/devices/kernel_fixture_nn.h"

#include "graph/elementwise.h"
#include "support/thread_pool.h"

#include <cblas.h>
#include <stdlib.h>

static float lcg(uint32_t *s) {
    *s = *s * 1664525u + 1013904223u;
    return (float)(*s >> 8) / (float)(1u << 23) - 1.0f;
}

static float *random_floats(int64_t n, uint32_t seed, float scale) {
    float *v = malloc((size_t)n * sizeof *v);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    for (int64_t i = 0; i < n; i++) v[i] = scale * lcg(&seed);
    return v;
}

/* Sets up one node on f (inputs, attributes, output 0) from arg. */
typedef void (*setup_fn)(nn_fixture *f, const void *arg);

/* Runs op as `setup` describes alone and over a pool; copies output 0 (n
 * floats) into out and asserts both runs give the same bits. With
 * in_place, output 0 is input 0's buffer (as the executor forwards it). */
static void run_both(const char *op, setup_fn setup, const void *arg, bool in_place, float *out, int64_t n) {
    tgc_thread_pool *pool = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_thread_pool_create(2, &pool), TGC_OK);
    float *alone = malloc((size_t)n * sizeof *alone);
    CU_ASSERT_PTR_NOT_NULL_FATAL(alone);
    for (int pass = 0; pass < 2; pass++) {
        nn_fixture f;
        nn_begin(&f, op, "split_kernels");
        setup(&f, arg);
        if (in_place && f.ok) {
            tgc_buffer_release(f.out[0].buf);
            f.out[0].buf = tgc_buffer_retain(f.in[0].buf);
        }
        f.pool = pass == 0 ? NULL : pool;
        tgc_status st = nn_run(&f);
        CU_ASSERT_EQUAL(st, TGC_OK);
        if (st != TGC_OK) fprintf(stderr, "\n  %s: %s\n", op, f.err);
        CU_ASSERT_EQUAL(tgc_value_numel(&f.out[0]), n);
        if (st == TGC_OK && tgc_value_numel(&f.out[0]) == n)
            memcpy(pass == 0 ? alone : out, tgc_buffer_host_ptr(f.out[0].buf), (size_t)n * sizeof *out);
        nn_end(&f);
    }
    CU_ASSERT(memcmp(alone, out, (size_t)n * sizeof *out) == 0);
    free(alone);
    tgc_thread_pool_free(pool);
}

/* Bitwise equality, NaN against NaN included. */
static bool same_bits(const float *a, const float *b, int64_t n) { return memcmp(a, b, (size_t)n * sizeof *a) == 0; }

/* ---- Softmax, LogSoftmax ------------------------------------------------------- */

typedef struct softmax_arg {
    const float *x;
    int64_t dims[3];
    int64_t axis;
} softmax_arg;

static void softmax_setup(nn_fixture *f, const void *p) {
    const softmax_arg *a = p;
    nn_in_dims(f, TGC_FLOAT32, 3, a->dims, a->x);
    nn_int(f, "axis", a->axis);
    nn_out_dims(f, TGC_FLOAT32, 3, a->dims);
}

/* The largest |y - reference| of a softmax (log: log-softmax) in double
 * along axis 1 of x [outer, n, inner]; rows holding NaN must be all NaN. */
static double softmax_error(const float *x, const float *y, int64_t outer, int64_t n, int64_t inner, bool log_out) {
    double worst = 0;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            const float *xr = x + o * n * inner + i;
            const float *yr = y + o * n * inner + i;
            double m = -INFINITY, s = 0;
            bool nan = false;
            for (int64_t k = 0; k < n; k++) {
                nan = nan || isnan(xr[k * inner]);
                m = xr[k * inner] > m ? xr[k * inner] : m;
            }
            for (int64_t k = 0; k < n; k++) s += exp((double)xr[k * inner] - m);
            for (int64_t k = 0; k < n; k++) {
                double got = yr[k * inner], d;
                if (nan) {
                    d = isnan(got) ? 0 : INFINITY;
                } else if (log_out) { /* absolute, relative above 1 */
                    double want = (xr[k * inner] - m) - log(s);
                    d = fabs(got - want) / fmax(fabs(want), 1.0);
                } else { /* relative */
                    double want = exp((double)xr[k * inner] - m) / s;
                    d = want == 0 ? fabs(got) : fabs(got - want) / want;
                }
                worst = d > worst ? d : worst;
            }
        }
    return worst;
}

static void softmax_check(int64_t outer, int64_t n, int64_t inner, bool log_out) {
    int64_t count = outer * n * inner;
    float *x = random_floats(count, 11, 8.0f), *y = malloc((size_t)count * sizeof *y);
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    x[5 * inner] = NAN;           /* a NaN row (or column) */
    x[n * inner + 3] = -INFINITY; /* exp(-inf) = 0 */
    softmax_arg a = {x, {outer, n, inner}, 1};
    run_both(log_out ? "LogSoftmax" : "Softmax", softmax_setup, &a, false, y, count);
    CU_ASSERT(softmax_error(x, y, outer, n, inner, log_out) <= 1e-5);
    free(x);
    free(y);
}

static void test_softmax(void) {
    softmax_check(512, 128, 1, false); /* attention's [4, 128, 128]: 4 pieces of rows */
    softmax_check(300, 77, 1, false);  /* rows that do not fill a piece evenly */
    softmax_check(300, 77, 1, true);
    softmax_check(3, 70, 150, false); /* a middle axis: blocks of 128 columns and a rest */
    softmax_check(3, 70, 150, true);
}

/* ---- LayerNormalization -------------------------------------------------------- */

typedef struct layer_norm_arg {
    const float *x, *scale, *bias;
    int64_t rows, size;
} layer_norm_arg;

static void layer_norm_setup(nn_fixture *f, const void *p) {
    const layer_norm_arg *a = p;
    int64_t xd[2] = {a->rows, a->size}, pd[1] = {a->size};
    nn_in_dims(f, TGC_FLOAT32, 2, xd, a->x);
    nn_in_dims(f, TGC_FLOAT32, 1, pd, a->scale);
    nn_in_dims(f, TGC_FLOAT32, 1, pd, a->bias);
    nn_out_dims(f, TGC_FLOAT32, 2, xd);
}

static void test_layer_norm(void) {
    int64_t rows = 300, size = 257; /* 77,100 elements: 2 pieces; 257 = 32 * 8 + 1 */
    float *x = random_floats(rows * size, 21, 3.0f), *scale = random_floats(size, 22, 1.0f);
    float *bias = random_floats(size, 23, 1.0f), *y = malloc((size_t)(rows * size) * sizeof *y);
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    for (int64_t i = 0; i < size; i++) x[7 * size + i] += 1000.0f; /* a row far from 0 */
    layer_norm_arg a = {x, scale, bias, rows, size};
    run_both("LayerNormalization", layer_norm_setup, &a, false, y, rows * size);
    double worst = 0;
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * size;
        double mean = 0, var = 0;
        for (int64_t i = 0; i < size; i++) mean += xr[i];
        mean /= (double)size;
        for (int64_t i = 0; i < size; i++) var += (xr[i] - mean) * (xr[i] - mean);
        double inv = 1.0 / sqrt(var / (double)size + (double)1e-5f);
        /* The kernel subtracts the mean rounded to float (as ONNX's
         * function body does): allow for that rounding, 2^-24 |mean|. */
        for (int64_t i = 0; i < size; i++) {
            double want = (xr[i] - mean) * inv * scale[i] + bias[i];
            double tol = 1e-6 + 0x1p-23 * fabs(mean) * inv * fabs(scale[i]);
            double d = fabs(y[r * size + i] - want) / tol;
            worst = d > worst ? d : worst;
        }
    }
    CU_ASSERT(worst <= 1.0);
    free(x);
    free(scale);
    free(bias);
    free(y);
}

/* Scale and B of the row's size are read in place, but still checked:
 * [5, 4] does not broadcast to X.shape[1:] = [4, 5]. */
static void test_layer_norm_checks_full_size_params(void) {
    float x[2 * 20] = {0}, scale[20] = {0};
    int64_t xd[3] = {2, 4, 5}, good[2] = {4, 5}, bad[2] = {5, 4};
    for (int pass = 0; pass < 2; pass++) {
        nn_fixture f;
        nn_begin(&f, "LayerNormalization", "split_kernels");
        nn_in_dims(&f, TGC_FLOAT32, 3, xd, x);
        nn_in_dims(&f, TGC_FLOAT32, 2, pass == 0 ? good : bad, scale);
        nn_in_dims(&f, TGC_FLOAT32, 2, good, scale);
        nn_int(&f, "axis", 1);
        nn_out_dims(&f, TGC_FLOAT32, 3, xd);
        CU_ASSERT_EQUAL(nn_run(&f), pass == 0 ? TGC_OK : TGC_ERR_RUNTIME);
        if (pass == 1) CU_ASSERT_PTR_NOT_NULL(strstr(f.err, "must broadcast"));
        nn_end(&f);
    }
}

/* ---- Elementwise ---------------------------------------------------------------- */

typedef struct binary_arg {
    const float *a, *b;
    int ra, rb, ry;
    int64_t da[4], db[4], dy[4];
} binary_arg;

static void binary_setup(nn_fixture *f, const void *p) {
    const binary_arg *a = p;
    nn_in_dims(f, TGC_FLOAT32, a->ra, a->da, a->a);
    nn_in_dims(f, TGC_FLOAT32, a->rb, a->db, a->b);
    nn_out_dims(f, TGC_FLOAT32, a->ry, a->dy);
}

static void test_add_broadcast(void) {
    /* [37, 1, 1000] + [29, 1000]: rows of 1000, pieces ending mid-row */
    float *a = random_floats(37 * 1000, 31, 1.0f), *b = random_floats(29 * 1000, 32, 1.0f);
    int64_t n = 37 * 29 * 1000;
    float *y = malloc((size_t)n * sizeof *y), *want = malloc((size_t)n * sizeof *want);
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    CU_ASSERT_PTR_NOT_NULL_FATAL(want);
    binary_arg arg = {a, b, 3, 2, 3, {37, 1, 1000}, {29, 1000}, {37, 29, 1000}};
    run_both("Add", binary_setup, &arg, false, y, n);
    for (int64_t i = 0; i < 37; i++)
        for (int64_t j = 0; j < 29; j++)
            for (int64_t k = 0; k < 1000; k++) want[(i * 29 + j) * 1000 + k] = a[i * 1000 + k] + b[j * 1000 + k];
    CU_ASSERT(same_bits(y, want, n));

    /* A bias [768] on the left of [128, 768], as attention's in-projection */
    float *m = random_floats(128 * 768, 33, 1.0f);
    binary_arg bias = {b, m, 1, 2, 2, {768}, {128, 768}, {128, 768}};
    run_both("Add", binary_setup, &bias, false, y, 128 * 768);
    for (int64_t i = 0; i < 128 * 768; i++) want[i] = b[i % 768] + m[i];
    CU_ASSERT(same_bits(y, want, 128 * 768));
    free(m);
    free(a);
    free(b);
    free(y);
    free(want);
}

static void unary_setup(nn_fixture *f, const void *p) {
    const binary_arg *a = p;
    nn_in_dims(f, TGC_FLOAT32, a->ra, a->da, a->a);
    nn_out_dims(f, TGC_FLOAT32, a->ry, a->dy);
}

static void test_mul_in_place_and_relu(void) {
    int64_t n = 100003; /* 3 whole pieces and a rest */
    float *x = random_floats(n, 41, 2.0f), two = 2.0f, *y = malloc((size_t)n * sizeof *y);
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    binary_arg arg = {x, &two, 1, 0, 1, {n}, {0}, {n}};
    run_both("Mul", binary_setup, &arg, true, y, n);
    bool ok = true;
    for (int64_t i = 0; i < n; i++) ok = ok && y[i] == x[i] * 2.0f;
    CU_ASSERT(ok);

    run_both("Relu", unary_setup, &arg, true, y, n);
    ok = true;
    for (int64_t i = 0; i < n; i++) ok = ok && y[i] == (x[i] < 0 ? 0.0f : x[i]);
    CU_ASSERT(ok);
    free(x);
    free(y);
}

/* Every float32 unary row of graph/elementwise.def with a float32 output (its default
 * attributes; Clip without bounds) over 100003 elements: alone and over a
 * pool, in place, the same bits (values are test_ew_rows.c's). */
static void test_every_unary_row(void) {
    int64_t n = 100003;
    float *x = random_floats(n, 43, 4.0f), *y = malloc((size_t)n * sizeof *y);
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    binary_arg arg = {x, x, 1, 0, 1, {n}, {0}, {n}};
    for (int id = 0; id < TGC_EW_COUNT; id++)
        if (tgc_ew_rows[id].arity == 1 && !tgc_ew_rows[id].bool_out && (tgc_ew_rows[id].dtypes & (1u << TGC_FLOAT32)))
            run_both(tgc_ew_rows[id].op, unary_setup, &arg, true, y, n);
    free(x);
    free(y);
}

/* ---- Transpose, Slice --------------------------------------------------------- */

typedef struct move_arg {
    const float *x;
    int rank;
    int64_t dims[4], out[4], perm[4];
    int64_t starts, ends, axis; /* Slice: one axis */
} move_arg;

static void transpose_setup(nn_fixture *f, const void *p) {
    const move_arg *a = p;
    nn_in_dims(f, TGC_FLOAT32, a->rank, a->dims, a->x);
    nn_ints(f, "perm", a->perm, (size_t)a->rank);
    nn_out_dims(f, TGC_FLOAT32, a->rank, a->out);
}

static void slice_setup(nn_fixture *f, const void *p) {
    const move_arg *a = p;
    int64_t one[1] = {1};
    nn_in_dims(f, TGC_FLOAT32, a->rank, a->dims, a->x);
    nn_in_dims(f, TGC_INT64, 1, one, &a->starts);
    nn_in_dims(f, TGC_INT64, 1, one, &a->ends);
    nn_in_dims(f, TGC_INT64, 1, one, &a->axis);
    nn_out_dims(f, TGC_FLOAT32, a->rank, a->out);
}

/* Transpose of x [d0, d1, d2] by perm, against the index formula. */
static void transpose_check(int64_t d0, int64_t d1, int64_t d2, int64_t p0, int64_t p1, int64_t p2) {
    int64_t n = d0 * d1 * d2, d[3] = {d0, d1, d2}, p[3] = {p0, p1, p2};
    float *x = random_floats(n, 51, 1.0f), *y = malloc((size_t)n * sizeof *y);
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    move_arg a = {x, 3, {d0, d1, d2}, {d[p0], d[p1], d[p2]}, {p0, p1, p2}, 0, 0, 0};
    run_both("Transpose", transpose_setup, &a, false, y, n);
    int64_t stride[3] = {d1 * d2, d2, 1}, o[3] = {d[p0], d[p1], d[p2]};
    bool ok = true;
    for (int64_t i = 0; i < o[0]; i++)
        for (int64_t j = 0; j < o[1]; j++)
            for (int64_t k = 0; k < o[2]; k++)
                ok = ok && y[(i * o[1] + j) * o[2] + k] == x[i * stride[p[0]] + j * stride[p[1]] + k * stride[p[2]]];
    CU_ASSERT(ok);
    free(x);
    free(y);
}

static void test_transpose_and_slice(void) {
    transpose_check(128, 4, 64, 1, 2, 0);  /* attention's K: 4 blocks of 2-D transposes */
    transpose_check(64, 3, 700, 1, 0, 2);  /* rows of 700 */
    transpose_check(1000, 1, 70, 1, 0, 2); /* one merged row of 70,000 */

    int64_t rows = 128, cols = 768, n = rows * 256;
    float *x = random_floats(rows * cols, 61, 1.0f), *y = malloc((size_t)n * sizeof *y);
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    move_arg a = {x, 2, {rows, cols}, {rows, 256}, {0}, 256, 512, 1};
    run_both("Slice", slice_setup, &a, false, y, n);
    bool ok = true;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < 256; j++) ok = ok && y[i * 256 + j] == x[i * cols + 256 + j];
    CU_ASSERT(ok);
    free(x);
    free(y);
}

/* ---- MatMul, Gemm --------------------------------------------------------------- */

typedef struct gemm_arg {
    const float *a, *b, *c;
    int ra, rb, rc;
    int64_t da[3], db[3], dc[2], dy[3];
} gemm_arg;

static void matmul_setup(nn_fixture *f, const void *p) {
    const gemm_arg *g = p;
    nn_in_dims(f, TGC_FLOAT32, g->ra, g->da, g->a);
    nn_in_dims(f, TGC_FLOAT32, g->rb, g->db, g->b);
    nn_out_dims(f, TGC_FLOAT32, 3, g->dy);
}

static void gemm_setup(nn_fixture *f, const void *p) {
    const gemm_arg *g = p;
    nn_in_dims(f, TGC_FLOAT32, 2, g->da, g->a);
    nn_in_dims(f, TGC_FLOAT32, 2, g->db, g->b);
    nn_in_dims(f, TGC_FLOAT32, g->rc, g->dc, g->c);
    nn_int(f, "transB", 1);
    nn_float(f, "beta", 0.5);
    nn_out_dims(f, TGC_FLOAT32, 2, g->dy);
}

/* max |y - A B| / (sum |a b| + 1) over [m, n] outputs, A [m, k] and B
 * [k, n] (b_trans: B stored [n, k]), plus beta * C (c_m, c_n its strides). */
static double product_error(const float *a, const float *b, bool b_trans, const float *c, int64_t c_m, int64_t c_n,
                            double beta, const float *y, int64_t m, int64_t k, int64_t n) {
    double worst = 0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = c != NULL ? beta * c[i * c_m + j * c_n] : 0, mag = fabs(s);
            for (int64_t t = 0; t < k; t++) {
                double p = (double)a[i * k + t] * (b_trans ? b[j * k + t] : b[t * n + j]);
                s += p;
                mag += fabs(p);
            }
            double d = fabs(y[i * n + j] - s) / (mag + 1.0);
            worst = d > worst ? d : worst;
        }
    return worst;
}

static void test_batched_matmul(void) {
    int64_t batch = 7, m = 64, k = 80, n = 80; /* 409,600 MACs a product: 3 a piece, 3 pieces */
    float *a = random_floats(batch * m * k, 71, 1.0f), *b = random_floats(batch * k * n, 72, 1.0f);
    float *y = malloc((size_t)(batch * m * n) * sizeof *y);
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    gemm_arg g = {a, b, NULL, 3, 3, 0, {batch, m, k}, {batch, k, n}, {0}, {batch, m, n}};
    run_both("MatMul", matmul_setup, &g, false, y, batch * m * n);
    double worst = 0;
    for (int64_t t = 0; t < batch; t++) {
        double e = product_error(a + t * m * k, b + t * k * n, false, NULL, 0, 0, 0, y + t * m * n, m, k, n);
        worst = e > worst ? e : worst;
    }
    CU_ASSERT(worst <= 1e-6);

    /* A [1, m, k] broadcast over B's batch */
    gemm_arg bc = {a, b, NULL, 3, 3, 0, {1, m, k}, {batch, k, n}, {0}, {batch, m, n}};
    run_both("MatMul", matmul_setup, &bc, false, y, batch * m * n);
    worst = 0;
    for (int64_t t = 0; t < batch; t++) {
        double e = product_error(a, b + t * k * n, false, NULL, 0, 0, 0, y + t * m * n, m, k, n);
        worst = e > worst ? e : worst;
    }
    CU_ASSERT(worst <= 1e-6);
    free(a);
    free(b);
    free(y);
}

static void test_gemm_bias_split(void) {
    int64_t m = 128, k = 256, n = 256; /* 8.4M MACs: 2 pieces of columns */
    float *a = random_floats(m * k, 81, 1.0f), *b = random_floats(n * k, 82, 1.0f);
    float *c = random_floats(m * n, 83, 1.0f), *y = malloc((size_t)(m * n) * sizeof *y);
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    struct {
        int rank;
        int64_t dims[2], cm, cn;
    } cs[] = {{1, {n}, 0, 1}, {2, {m, 1}, 1, 0}, {0, {0}, 0, 0}, {2, {m, n}, n, 1}};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        gemm_arg g = {a, b, c, 2, 2, cs[i].rank, {m, k}, {n, k}, {cs[i].dims[0], cs[i].dims[1]}, {m, n}};
        run_both("Gemm", gemm_setup, &g, false, y, m * n);
        CU_ASSERT(product_error(a, b, true, c, cs[i].cm, cs[i].cn, 0.5, y, m, k, n) <= 1e-6);
    }
    free(a);
    free(b);
    free(c);
    free(y);
}

/* ---- ConvInteger ----------------------------------------------------------------- */

typedef struct int_conv_arg {
    const uint8_t *x, *w, *w_zp;
    uint8_t x_zp;
    int64_t xd[4], wd[4], yd[4], group, stride, pad;
} int_conv_arg;

static void int_conv_setup(nn_fixture *f, const void *p) {
    const int_conv_arg *a = p;
    nn_in_dims(f, TGC_UINT8, 4, a->xd, a->x);
    nn_in_dims(f, TGC_UINT8, 4, a->wd, a->w);
    nn_in_dims(f, TGC_UINT8, 0, NULL, &a->x_zp);
    nn_in_dims(f, TGC_UINT8, 1, a->wd, a->w_zp);
    nn_int(f, "group", a->group);
    nn_ints(f, "strides", (int64_t[]){a->stride, a->stride}, 2);
    nn_ints(f, "pads", (int64_t[]){a->pad, a->pad, a->pad, a->pad}, 4);
    nn_out_dims(f, TGC_INT32, 4, a->yd);
}

/* ConvInteger by its definition, a direct loop in int64 (no wrap at these
 * sizes), over pool-run y: the count of differing elements. */
static int64_t int_conv_mismatches(const int_conv_arg *a, const int32_t *y) {
    int64_t cg = a->wd[1], mg = a->wd[0] / a->group, bad = 0;
    for (int64_t b = 0; b < a->yd[0]; b++)
        for (int64_t m = 0; m < a->yd[1]; m++)
            for (int64_t oy = 0; oy < a->yd[2]; oy++)
                for (int64_t ox = 0; ox < a->yd[3]; ox++) {
                    int64_t sum = 0;
                    for (int64_t c = 0; c < cg; c++)
                        for (int64_t ky = 0; ky < a->wd[2]; ky++)
                            for (int64_t kx = 0; kx < a->wd[3]; kx++) {
                                int64_t iy = oy * a->stride - a->pad + ky, ix = ox * a->stride - a->pad + kx;
                                int64_t ci = m / mg * cg + c;
                                int64_t xv = iy < 0 || iy >= a->xd[2] || ix < 0 || ix >= a->xd[3]
                                                 ? a->x_zp
                                                 : a->x[((b * a->xd[1] + ci) * a->xd[2] + iy) * a->xd[3] + ix];
                                int64_t wv = a->w[((m * cg + c) * a->wd[2] + ky) * a->wd[3] + kx];
                                sum += (xv - a->x_zp) * (wv - a->w_zp[m]);
                            }
                    bad += y[((b * a->yd[1] + m) * a->yd[2] + oy) * a->yd[3] + ox] != sum;
                }
    return bad;
}

static uint8_t *random_bytes(int64_t n, uint32_t seed) {
    uint8_t *v = malloc((size_t)n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    for (int64_t i = 0; i < n; i++) v[i] = (uint8_t)((seed = seed * 1664525u + 1013904223u) >> 24);
    return v;
}

static void int_conv_check(int_conv_arg a, uint32_t seed) {
    int64_t nx = a.xd[0] * a.xd[1] * a.xd[2] * a.xd[3], nw = a.wd[0] * a.wd[1] * a.wd[2] * a.wd[3];
    int64_t ny = a.yd[0] * a.yd[1] * a.yd[2] * a.yd[3];
    uint8_t *x = random_bytes(nx, seed), *w = random_bytes(nw, seed + 1), *zp = random_bytes(a.wd[0], seed + 2);
    int32_t *y = malloc((size_t)ny * sizeof *y);
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    a.x = x, a.w = w, a.w_zp = zp;
    run_both("ConvInteger", int_conv_setup, &a, false, (float *)y, ny); /* int32s: same size as float32s */
    CU_ASSERT_EQUAL(int_conv_mismatches(&a, y), 0);
    free(x), free(w), free(zp), free(y);
}

static void test_conv_integer_split(void) {
    /* 64 filters of 144 taps over 1,600 columns (14.7M MACs): cut across the columns */
    int_conv_check((int_conv_arg){.x_zp = 131, .xd = {1, 16, 40, 40}, .wd = {64, 16, 3, 3}, .yd = {1, 64, 40, 40},
                                  .group = 1, .stride = 1, .pad = 1},
                   91);
    /* 256 filters of 576 taps over 36 columns (5.3M MACs): cut across the filters */
    int_conv_check((int_conv_arg){.x_zp = 7, .xd = {1, 64, 6, 6}, .wd = {256, 64, 3, 3}, .yd = {1, 256, 6, 6},
                                  .group = 1, .stride = 1, .pad = 1},
                   92);
    /* 2 x 48 depthwise channels, stride 2: pieces of channels */
    int_conv_check((int_conv_arg){.x_zp = 200, .xd = {2, 48, 30, 30}, .wd = {48, 1, 3, 3}, .yd = {2, 48, 15, 15},
                                  .group = 48, .stride = 2, .pad = 1},
                   93);
}

/* Kernels run here outside a session: OpenBLAS single-threaded as a
 * session makes it, before any test (its own threads synchronize in ways
 * ThreadSanitizer cannot see, and the pool is what these tests exercise).
 * Shared libraries' constructors, OpenBLAS's included, run before this. */
__attribute__((constructor)) static void blas_single_threaded(void) { openblas_set_num_threads(1); }

TGC_TEST_MAIN("cpu split kernels", {"softmax and log-softmax", test_softmax},
              {"layer normalization", test_layer_norm},
              {"layer normalization checks full-size Scale and B", test_layer_norm_checks_full_size_params},
              {"add with broadcasting", test_add_broadcast},
              {"mul in place, relu", test_mul_in_place_and_relu},
              {"every unary row, alone and over a pool", test_every_unary_row},
              {"transpose and slice", test_transpose_and_slice},
              {"batched matmul", test_batched_matmul},
              {"gemm with a bias", test_gemm_bias_split},
              {"integer convolution cut into pieces", test_conv_integer_split})
