/* RNN, GRU and LSTM on the cpu (float32), as ONNX opset 14 defines them
 * (graph/ops_rnn.c gives the shapes). Per direction:
 *   1. one GEMM computes X W^T for every time step at once, plus the biases
 *      that are plain sums (all of Wb + Rb, except GRU's Rbh when
 *      linear_before_reset);
 *   2. each step runs H_{t-1} R^T (one GEMM over the batch) and the gate
 *      equations row by row. Gate order: RNN i; GRU z, r, h; LSTM i, o, f, c.
 *        RNN   H = f(Xi + Hr_i)
 *        GRU   z = f(Xz + Hr_z)  r = f(Xr + Hr_r)
 *              h = g(Xh + (r . H) Rh^T + Rbh)        linear_before_reset 0
 *              h = g(Xh + r . (H Rh^T + Rbh))        linear_before_reset 1
 *              H = (1 - z) . h + z . H
 *        LSTM  i = f(Xi + Hr_i + Pi . C)  f = f(Xf + Hr_f + Pf . C)
 *              c = g(Xc + Hr_c)  C = f . C + i . c
 *              o = f(Xo + Hr_o + Po . C)  H = o . h(C)
 *              (input_forget: f = 1 - i)
 *      `clip` bounds every gate's input to [-clip, clip] before its function.
 * Each gate's function runs over the whole gate as the elementwise row
 * loop of its ONNX op (vectorized), the arithmetic between as plain loops.
 * sequence_lens: batch row b runs steps 0..len-1 (the reverse direction
 * from len-1 down to 0); Y is 0 at its later steps, Y_h/Y_c hold its state
 * after its last step. Attributes and activations: devices/rnn_geometry.h.
 * The _HalfWeight ops (W and R float16 or bfloat16) run the same steps:
 * one row of X or H reads its weight in place (the dot form, ew.h's
 * gemv_dot_half: the bits of the float32 product on R as it lies), more
 * rows a copy widened for the run (R once per direction).
 * With one batch row, a session's constant float32 R is read each step
 * from column panels of R^T (kernels_nn.h), packed once into the node's
 * kernel cache in place of R (r_panels_for below). */
#include "devices/cpu/ew.h"
#include "devices/cpu/kernels_nn.h"
#include "devices/rnn_geometry.h"
#include "graph/elementwise.h"

#include "support/alloc.h"
#include "support/checked.h"

#include <math.h>
#include <stdatomic.h>
#include <string.h>

/* Floats of a weight's block widened at a time (256 KiB: in a core's L2). */
#define WIDE_BLOCK_FLOATS ((int64_t)64 << 10)

static bool is_half(tgc_dtype t) { return t == TGC_FLOAT16 || t == TGC_BFLOAT16; }

/* Checks the inputs (float32; W and R may both be float16 or both
 * bfloat16: the _HalfWeight ops) and reads the geometry. */
static tgc_status read_geometry(tgc_kernel_ctx *c, int gates, tgc_rnn_geometry *g) {
    tgc_status st = tgc_kernel_check_host(c, 3, 0);
    if (st != TGC_OK) return st;
    bool half = c->n_inputs >= 3 && is_half(c->inputs[1].dtype) && c->inputs[2].dtype == c->inputs[1].dtype;
    for (int i = 0; i < c->n_inputs; i++)
        if (i != 4 && !(half && (i == 1 || i == 2)) && tgc_kernel_has_input(c, i) &&
            (st = tgc_kernel_need_f32(c, &c->inputs[i], "an input")) != TGC_OK)
            return st;
    return tgc_rnn_geometry_read(c, gates, g);
}

/* Where row (t, b) of direction d sits in Y, and row b of a state. */
static int64_t y_row(const tgc_rnn_geometry *g, int64_t t, int d, int64_t b) {
    return g->batch_first ? (b * g->seq + t) * g->dirs + d : (t * g->dirs + d) * g->batch + b;
}
static int64_t state_row(const tgc_rnn_geometry *g, int d, int64_t b) {
    return g->batch_first ? b * g->dirs + d : d * g->batch + b;
}
/* Row of X (and of the precomputed X W^T) for step t of batch row b. */
static int64_t x_row(const tgc_rnn_geometry *g, int64_t t, int64_t b) {
    return g->batch_first ? b * g->seq + t : t * g->batch + b;
}

static float clipped(const tgc_rnn_geometry *g, float v) {
    return g->clip > 0 ? fmaxf(-g->clip, fminf(g->clip, v)) : v;
}

/* Scratch a direction needs, from one allocation. */
typedef struct rnn_scratch {
    float *xw;   /* [seq * batch, G*hidden] */
    float *hr;   /* [batch, G*hidden] */
    float *h, *cs; /* [batch, hidden] state */
    float *rh;   /* [batch, hidden] (GRU's r . H) */
    int64_t *len;
} rnn_scratch;

/* The scratch's bytes (rnn_scratch); false past int64 or size_t. */
static bool scratch_bytes(const tgc_rnn_geometry *g, size_t *bytes) {
    int64_t gh = g->gates * g->hidden, rows, xw, hr, st, total, lens;
    bool ok = tgc_checked_mul_i64(g->seq, g->batch, &rows) && tgc_checked_mul_i64(rows, gh, &xw) &&
              tgc_checked_mul_i64(g->batch, gh, &hr) && tgc_checked_mul_i64(g->batch, g->hidden, &st) &&
              tgc_checked_mul_i64(st, 3, &total) && tgc_checked_add_i64(total, xw, &total) &&
              tgc_checked_add_i64(total, hr, &total) && tgc_checked_mul_i64(g->batch, 2, &lens) &&
              tgc_checked_add_i64(total, lens, &total); /* the int64 lengths, as two floats each */
    return ok && tgc_checked_nbytes(total, sizeof(float), bytes);
}

static tgc_status scratch_alloc(tgc_kernel_ctx *c, const tgc_rnn_geometry *g, rnn_scratch *s, void **block) {
    size_t bytes;
    if (!scratch_bytes(g, &bytes)) return tgc_kernel_fail(c, "scratch too large");
    *block = tgc_malloc(bytes > 0 ? bytes : 1);
    if (*block == NULL) return tgc_kernel_fail(c, "no host memory for %zu bytes of scratch", bytes);
    int64_t gh = g->gates * g->hidden, st = g->batch * g->hidden; /* products scratch_bytes checked */
    s->len = *block; /* the int64 lengths first: aligned */
    float *p = (float *)(void *)(s->len + g->batch);
    s->xw = p, p += g->seq * g->batch * gh;
    s->hr = p, p += g->batch * gh;
    s->h = p, p += st;
    s->cs = p, p += st;
    s->rh = p;
    return TGC_OK;
}

/* Copies direction d's initial state (input i, absent: zeros) into dst. */
static void load_state(const tgc_kernel_ctx *c, const tgc_rnn_geometry *g, int i, int d, float *dst) {
    const float *src = tgc_kernel_has_input(c, i) ? tgc_kernel_in_ptr(c, i) : NULL;
    for (int64_t b = 0; b < g->batch; b++)
        for (int64_t j = 0; j < g->hidden; j++)
            dst[b * g->hidden + j] = src != NULL ? src[state_row(g, d, b) * g->hidden + j] : 0.0f;
}

static void store_state(tgc_kernel_ctx *c, const tgc_rnn_geometry *g, int o, int d, const float *src) {
    if (!tgc_kernel_has_output(c, o) || tgc_value_numel(&c->outputs[o]) == 0) return;
    float *dst = tgc_kernel_out_ptr(c, o);
    for (int64_t b = 0; b < g->batch; b++)
        memcpy(dst + state_row(g, d, b) * g->hidden, src + b * g->hidden, (size_t)g->hidden * sizeof(float));
}

/* v[0..n) = clip(v) where `clip` is set (ONNX: every gate's input). */
static void clip_in_place(const tgc_rnn_geometry *g, float *v, int64_t n) {
    if (g->clip > 0)
        for (int64_t j = 0; j < n; j++) v[j] = clipped(g, v[j]);
}

/* v[0..n) = f(v), through the elementwise row loop of the activation's
 * ONNX op (devices/cpu/ew.h: vectorized, vmath.h's functions) where it
 * has one, else element by element (Affine, ScaledTanh). */
static void act_in_place(const tgc_rnn_act *f, float *v, int64_t n) {
    static const tgc_ew_op rows[] = {
        [TGC_RNN_RELU] = TGC_EW_Relu,           [TGC_RNN_TANH] = TGC_EW_Tanh,
        [TGC_RNN_SIGMOID] = TGC_EW_Sigmoid,     [TGC_RNN_LEAKY_RELU] = TGC_EW_LeakyRelu,
        [TGC_RNN_THRESHOLDED_RELU] = TGC_EW_ThresholdedRelu, [TGC_RNN_HARD_SIGMOID] = TGC_EW_HardSigmoid,
        [TGC_RNN_ELU] = TGC_EW_Elu,             [TGC_RNN_SOFTSIGN] = TGC_EW_Softsign,
        [TGC_RNN_SOFTPLUS] = TGC_EW_Softplus,
    };
    bool has_row = f->kind != TGC_RNN_AFFINE && f->kind != TGC_RNN_SCALED_TANH;
    tgc_ew_unary_fn fn = has_row ? tgc_cpu_ew_loops()->unary[rows[f->kind]][TGC_FLOAT32] : NULL;
    if (fn == NULL) {
        for (int64_t j = 0; j < n; j++) v[j] = tgc_rnn_act_apply(f, v[j]);
        return;
    }
    tgc_ew_params p;
    memset(&p, 0, sizeof p);
    p.f[0] = f->alpha, p.f[1] = f->beta; /* the rows' P0, P1: alpha, beta */
    p.d[0] = f->alpha, p.d[1] = f->beta;
    fn(n, v, v, &p);
}

/* The gate equations of one step for batch row b: xw is the row's
 * [G*hidden] input pre-activations, hr its recurrent products (used as
 * scratch), h and cs its state (updated). Each equation runs over a whole
 * gate at once, so the functions run as vector loops. */
static void step_rnn(const tgc_rnn_geometry *g, const tgc_rnn_act *f, const float *xw, const float *hr, float *h) {
    for (int64_t j = 0; j < g->hidden; j++) h[j] = xw[j] + hr[j];
    clip_in_place(g, h, g->hidden);
    act_in_place(&f[0], h, g->hidden);
}

static void step_lstm(const tgc_rnn_geometry *g, const tgc_rnn_act *f, const float *xw, float *hr, const float *p,
                      bool input_forget, float *h, float *cs) {
    int64_t n = g->hidden;
    float *gi = hr, *go = hr + n, *gf = hr + 2 * n, *gc = hr + 3 * n; /* ONNX's gate order: i, o, f, c */
    for (int64_t j = 0; j < 4 * n; j++) hr[j] += xw[j];
    if (p != NULL)
        for (int64_t j = 0; j < n; j++) {
            gi[j] += p[j] * cs[j];
            gf[j] += p[2 * n + j] * cs[j];
        }
    clip_in_place(g, gi, n);
    act_in_place(&f[0], gi, n);
    if (input_forget) {
        for (int64_t j = 0; j < n; j++) gf[j] = 1 - gi[j];
    } else {
        clip_in_place(g, gf, n);
        act_in_place(&f[0], gf, n);
    }
    clip_in_place(g, gc, n);
    act_in_place(&f[1], gc, n);
    for (int64_t j = 0; j < n; j++) cs[j] = gf[j] * cs[j] + gi[j] * gc[j];
    if (p != NULL)
        for (int64_t j = 0; j < n; j++) go[j] += p[n + j] * cs[j];
    clip_in_place(g, go, n);
    act_in_place(&f[0], go, n);
    memcpy(gc, cs, (size_t)n * sizeof *gc); /* h(C), in the candidate's place */
    act_in_place(&f[2], gc, n);
    for (int64_t j = 0; j < n; j++) h[j] = go[j] * gc[j];
}

/* GRU's step after its recurrent products: hr holds z and r already
 * activated (and, without linear_before_reset, (r . H) Rh^T); with it, the
 * raw H Rh^T, to which r . (... + Rbh) applies here. */
static void step_gru(const tgc_rnn_geometry *g, const tgc_rnn_act *f, const float *xw, float *hr, const float *rbh,
                     bool linear_before_reset, float *h) {
    int64_t n = g->hidden;
    if (linear_before_reset) {
        for (int64_t j = 0; j < 2 * n; j++) hr[j] += xw[j];
        clip_in_place(g, hr, 2 * n);
        act_in_place(&f[0], hr, 2 * n);
    }
    float *cand = hr + 2 * n; /* the candidate's pre-activation, in place */
    for (int64_t j = 0; j < n; j++) {
        float rec = linear_before_reset ? hr[n + j] * (hr[2 * n + j] + (rbh ? rbh[j] : 0)) : hr[2 * n + j];
        cand[j] = xw[2 * n + j] + rec;
    }
    clip_in_place(g, cand, n);
    act_in_place(&f[1], cand, n);
    for (int64_t j = 0; j < n; j++) h[j] = (1 - hr[j]) * cand[j] + hr[j] * h[j];
}

/* A weight matrix [rows, cols] of one direction: W [G*hidden, input] or
 * R [G*hidden, hidden], float32 or half precision (dtype). */
typedef struct rnn_matrix {
    const void *data;
    tgc_dtype dtype;
    int64_t cols;
} rnn_matrix;

typedef struct rnn_weights {
    rnn_matrix w, r;
    const float *b, *p; /* this direction's; may be NULL */
} rnn_weights;

/* Below this many multiply-adds a matrix-vector product stays whole; past
 * it, pieces of about this many (kernels_gemm.c's GEMV pieces). */
#define HALF_GEMV_PIECE_MACS ((int64_t)128 << 10)

typedef struct half_rows {
    const rnn_matrix *w;
    int64_t row0, n, step;
    const float *x;
    float beta, *y;
} half_rows;

static void half_rows_piece(void *arg, int64_t i, int slot) {
    (void)slot;
    const half_rows *h = arg;
    int64_t lo = i * h->step, hi = lo + h->step < h->n ? lo + h->step : h->n;
    const uint16_t *rows = (const uint16_t *)h->w->data + (h->row0 + lo) * h->w->cols;
    const tgc_ew_loops *loops = tgc_cpu_ew_loops();
    (h->w->dtype == TGC_FLOAT16 ? loops->gemv_dot_half : loops->gemv_dot_bf16)(hi - lo, h->w->cols, rows, h->w->cols,
                                                                               h->x, h->beta, h->y + lo);
}

/* Rows [row0, row0 + n) of w, widened into a new block (tgc_free), or NULL. */
static float *widen_rows(const rnn_matrix *w, int64_t row0, int64_t n) {
    int64_t count;
    if (!tgc_checked_mul_i64(n, w->cols, &count)) return NULL;
    return tgc_cpu_widened_copy(w->dtype, (const uint16_t *)w->data + row0 * w->cols, count);
}

/* A product over a half-precision weight cut into blocks of `per` rows. */
typedef struct wide_blocks {
    const rnn_matrix *w;
    int64_t row0, m, n, per, lda, ldc;
    const float *a;
    float beta, *out, *scratch; /* per * cols floats a slot */
    atomic_bool failed;
} wide_blocks;

static void wide_block(void *arg, int64_t i, int slot) {
    wide_blocks *wb = arg;
    int64_t k = wb->w->cols, lo = i * wb->per, rows = lo + wb->per < wb->n ? wb->per : wb->n - lo;
    float *block = wb->scratch + (size_t)slot * (size_t)(wb->per * k);
    const uint16_t *src = (const uint16_t *)wb->w->data + (wb->row0 + lo) * k;
    if (!tgc_cpu_cast_elements(wb->w->dtype, src, TGC_FLOAT32, block, rows * k) ||
        !tgc_cpu_sgemm_one(false, true, wb->m, rows, k, 1.0f, wb->a, wb->lda, block, k, wb->beta, wb->out + lo,
                           wb->ldc))
        atomic_store(&wb->failed, true);
}

/* out [m, n] (rows ldc apart) = a [m, w->cols] (rows lda apart) times rows
 * [row0, row0 + n) of w transposed, plus beta times out. A half-precision
 * w is read in place by one row of a (the dot form over pieces of rows:
 * the bits of the float32 product); for more rows it is widened a block of
 * rows at a time, each block's product run while the block is in cache.
 * False when a GEMM fails or memory runs out. */
static bool weight_product(tgc_kernel_ctx *c, const rnn_matrix *w, int64_t row0, int64_t m, int64_t n,
                           const float *a, int64_t lda, float beta, float *out, int64_t ldc) {
    int64_t k = w->cols;
    if (w->dtype == TGC_FLOAT32)
        return tgc_cpu_sgemm(c->pool, false, true, m, n, k, 1.0f, a, lda, (const float *)w->data + row0 * k, k, beta,
                             out, ldc);
    if (m == 1 && k > 0) {
        int64_t macs = n <= INT64_MAX / k ? n * k : INT64_MAX, pieces = macs / HALF_GEMV_PIECE_MACS;
        pieces = pieces < 1 ? 1 : pieces > 8 ? 8 : pieces;
        int64_t step = ((n + pieces - 1) / pieces + 3) / 4 * 4;
        half_rows h = {.w = w, .row0 = row0, .n = n, .step = step, .x = a, .beta = beta, .y = out};
        tgc_parallel_for(c->pool, (n + step - 1) / step, half_rows_piece, &h);
        return true;
    }
    /* Blocks of rows widened while in cache, each one product (a fixed cut: the same bits at any thread count). */
    int64_t per = k > 0 && WIDE_BLOCK_FLOATS / k > 16 ? WIDE_BLOCK_FLOATS / k / 16 * 16 : 16;
    int width = tgc_parallel_width(c->pool);
    float *scratch = width > 0 && per <= INT64_MAX / k / width ? tgc_malloc((size_t)(per * k * width) * sizeof(float))
                                                               : NULL;
    if (scratch == NULL) return false;
    wide_blocks wb = {.w = w, .row0 = row0, .m = m, .n = n, .per = per, .a = a, .lda = lda, .beta = beta,
                      .out = out, .ldc = ldc, .scratch = scratch};
    atomic_init(&wb.failed, false);
    tgc_parallel_for(c->pool, (n + per - 1) / per, wide_block, &wb);
    tgc_free(scratch);
    return !atomic_load(&wb.failed);
}

/* ---- R in column panels (one batch row) -------------------------------- */

/* With one batch row each step's recurrent product is one row of H by R^T
 * [hidden, gates * hidden], R (a few MB) read again every step from the L2
 * or L3. The dot form reads R's rows one at a time, one chain of additions
 * a row: 66 GB/s from the L3 at 1 thread on a Zen 4 core; column panels of
 * R^T (tgc_cpu_gemv_panels: four vectors of sums a block, no horizontal
 * sum) 91 GB/s ([1, 512] x [512, 2048] 64 times in a loop). The sums are
 * then the update form's (one running sum a column, in order). Taken for a
 * float32 R that is a session constant, when every step's product covers
 * all gates (not GRU without linear_before_reset: its h product reads
 * r . H after z and r). */
static bool r_panels_apply(const tgc_kernel_ctx *c, const tgc_rnn_geometry *g) {
    return g->batch == 1 && c->inputs[2].dtype == TGC_FLOAT32 && (c->const_inputs & (1u << 2)) != 0 &&
           !(g->gates == 3 && !g->linear_before_reset) && g->hidden > 0 &&
           tgc_cpu_gemv_panels_fit(g->gates * g->hidden);
}

/* The node's R in panels (R_d [n, k] as it lies is R_d^T's [k, n] with
 * ld_k 1, ld_n k), a direction's after another's, standing in for R from
 * then on; NULL where r_panels_apply says no. NULL with *no_memory set
 * when memory for the panels ran out (the kernel fails). */
static const tgc_gemv_panels *r_panels_for(tgc_kernel_ctx *c, const tgc_rnn_geometry *g, bool *no_memory) {
    *no_memory = false;
    if (!r_panels_apply(c, g)) return NULL;
    int64_t n = g->gates * g->hidden, k = g->hidden; /* R's rows and columns, which its geometry checked */
    return tgc_cpu_gemv_panels_cached(c, 2, g->dirs, n, k, tgc_kernel_in_ptr(c, 2), 1, k, n * k, no_memory);
}

/* The time index batch row b works on at the k-th step of a direction
 * (reverse: counting down from its length), or -1 when it has no step k. */
static int64_t step_time(const rnn_scratch *s, bool reverse, int64_t k, int64_t b) {
    int64_t len = s->len[b];
    if (k >= len) return -1;
    return reverse ? len - 1 - k : k;
}

/* The steps of direction d, R being r (r_panels: R^T in column panels, or
 * NULL). */
static tgc_status recur(tgc_kernel_ctx *c, const tgc_rnn_geometry *g, int d, bool reverse, const rnn_weights *wt,
                        const rnn_matrix *r, const float *r_panels, rnn_scratch *s) {
    bool linear_before_reset = g->linear_before_reset, input_forget = g->input_forget;
    int64_t n = g->hidden, gh = g->gates * n;
    const tgc_rnn_act *f = &g->f[d * g->functions];
    bool gru = g->gates == 3, lstm = g->gates == 4;
    load_state(c, g, 5, d, s->h);
    if (lstm) load_state(c, g, 6, d, s->cs);
    float *y = tgc_kernel_has_output(c, 0) ? tgc_kernel_out_ptr(c, 0) : NULL;
    for (int64_t k = 0; k < g->seq; k++) {
        /* The recurrent products: all gates, or GRU's z and r first. */
        int64_t first = gru && !linear_before_reset ? 2 * n : gh;
        if (r_panels != NULL) /* all gates (r_panels_apply), one row */
            tgc_cpu_gemv_panels_run(c->pool, gh, n, 1.0f, r_panels, s->h, 0.0f, s->hr);
        else if (!weight_product(c, r, 0, g->batch, first, s->h, n, 0.0f, s->hr, gh))
            return tgc_kernel_fail(c, "the recurrent GEMM: " TGC_CPU_GEMM_FAILED);
        if (gru && !linear_before_reset) {
            /* z and r for every row, then (r . H) Rh^T for the batch at once. */
            for (int64_t b = 0; b < g->batch; b++) {
                int64_t t = step_time(s, reverse, k, b);
                if (t < 0) { /* a finished row: its product is not used */
                    memset(s->rh + b * n, 0, (size_t)n * sizeof(float));
                    continue;
                }
                const float *xw = s->xw + x_row(g, t, b) * gh;
                float *hr = s->hr + b * gh;
                for (int64_t j = 0; j < 2 * n; j++) hr[j] += xw[j];
                clip_in_place(g, hr, 2 * n);
                act_in_place(&f[0], hr, 2 * n);
                for (int64_t j = 0; j < n; j++) s->rh[b * n + j] = hr[n + j] * s->h[b * n + j];
            }
            if (!weight_product(c, r, 2 * n, g->batch, n, s->rh, n, 0.0f, s->hr + 2 * n, gh))
                return tgc_kernel_fail(c, "the recurrent GEMM: " TGC_CPU_GEMM_FAILED);
        }
        for (int64_t b = 0; b < g->batch; b++) {
            int64_t t = step_time(s, reverse, k, b);
            if (t < 0) continue;
            const float *xw = s->xw + x_row(g, t, b) * gh;
            float *hr = s->hr + b * gh, *h = s->h + b * n;
            if (lstm) step_lstm(g, f, xw, hr, wt->p, input_forget, h, s->cs + b * n);
            else if (gru) step_gru(g, f, xw, hr, wt->b != NULL ? wt->b + gh + 2 * n : NULL, linear_before_reset, h);
            else step_rnn(g, f, xw, hr, h);
        }
        /* Y at step k (forward) or its mirror (reverse); 0 past a row's length. */
        for (int64_t b = 0; y != NULL && b < g->batch; b++) {
            int64_t t = step_time(s, reverse, k, b);
            if (t >= 0) memcpy(y + y_row(g, t, d, b) * n, s->h + b * n, (size_t)n * sizeof(float));
        }
    }
    store_state(c, g, 1, d, s->h);
    if (lstm) store_state(c, g, 2, d, s->cs);
    return TGC_OK;
}

/* Runs direction d over every step. */
static tgc_status run_direction(tgc_kernel_ctx *c, const tgc_rnn_geometry *g, int d, bool reverse,
                                const rnn_weights *wt, const float *r_panels, rnn_scratch *s) {
    bool linear_before_reset = g->linear_before_reset, gru = g->gates == 3;
    int64_t n = g->hidden, gh = g->gates * n, rows = g->seq * g->batch;
    const float *x = tgc_kernel_in_ptr(c, 0);
    /* X W^T + the biases that simply add. */
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < gh; j++) {
            float bias = 0;
            if (wt->b != NULL) bias = wt->b[j] + (gru && linear_before_reset && j >= 2 * n ? 0 : wt->b[gh + j]);
            s->xw[i * gh + j] = bias;
        }
    if (!weight_product(c, &wt->w, 0, rows, gh, x, g->input, 1.0f, s->xw, gh))
        return tgc_kernel_fail(c, "the input GEMM: " TGC_CPU_GEMM_FAILED);
    /* R read every step: widened once here for a batch (a GEMM a step), in place for one row. */
    rnn_matrix r = wt->r;
    float *r_wide = NULL;
    if (r.dtype != TGC_FLOAT32 && g->batch > 1) {
        if ((r_wide = widen_rows(&wt->r, 0, gh)) == NULL) return tgc_kernel_fail(c, "no host memory to widen R");
        r = (rnn_matrix){r_wide, TGC_FLOAT32, n};
    }
    tgc_status st = recur(c, g, d, reverse, wt, &r, r_panels, s);
    tgc_free(r_wide);
    return st;
}

static tgc_status run_rnn(tgc_kernel_ctx *c, int gates) {
    tgc_rnn_geometry g;
    tgc_status st = read_geometry(c, gates, &g);
    if (st != TGC_OK) return st;
    bool no_memory;
    const tgc_gemv_panels *rp = r_panels_for(c, &g, &no_memory);
    if (no_memory) return tgc_kernel_fail_nomem(c, "out of host memory for R's column panels");
    if (c->prepack_only) return TGC_OK;
    rnn_scratch s = {0};
    void *block;
    if ((st = scratch_alloc(c, &g, &s, &block)) != TGC_OK) return st;
    for (int64_t b = 0; b < g.batch; b++) {
        s.len[b] = g.seq;
        if (!tgc_kernel_has_input(c, 4)) continue;
        const tgc_value *sl = &c->inputs[4];
        if (sl->dtype != TGC_INT32 || sl->rank != 1 || sl->dims[0] != g.batch) {
            tgc_free(block);
            return tgc_kernel_fail(c, "sequence_lens must be int32 [batch]");
        }
        int64_t len = ((const int32_t *)tgc_kernel_in_ptr(c, 4))[b];
        if (len < 0 || len > g.seq) {
            tgc_free(block);
            return tgc_kernel_fail(c, "sequence_lens[%lld] is %lld, outside [0, %lld]", (long long)b, (long long)len,
                                   (long long)g.seq);
        }
        s.len[b] = len;
    }
    if (tgc_kernel_has_output(c, 0) && tgc_value_numel(&c->outputs[0]) > 0)
        memset(tgc_kernel_out_ptr(c, 0), 0, tgc_value_nbytes(&c->outputs[0]));
    int64_t n = g.hidden, gh = gates * n;
    const char *w = tgc_kernel_in_ptr(c, 1), *r = tgc_kernel_in_ptr(c, 2);
    tgc_dtype wdt = c->inputs[1].dtype;
    size_t es = tgc_dtype_size(wdt);
    const float *b = tgc_kernel_has_input(c, 3) ? tgc_kernel_in_ptr(c, 3) : NULL;
    const float *p = gates == 4 && tgc_kernel_has_input(c, 7) ? tgc_kernel_in_ptr(c, 7) : NULL;
    for (int d = 0; d < g.dirs && st == TGC_OK; d++) {
        rnn_weights wt = {{w + (size_t)(d * gh * g.input) * es, wdt, g.input}, {r + (size_t)(d * gh * n) * es, wdt, n},
                          b ? b + d * 2 * gh : NULL, p ? p + d * 3 * n : NULL};
        const float *panels = rp != NULL ? rp->p + d * tgc_cpu_gemv_panels_floats(rp->n, rp->k) : NULL;
        st = run_direction(c, &g, d, d == 1 || g.reverse_only, &wt, panels, &s);
    }
    tgc_free(block);
    return st;
}

/* What a run allocates: the scratch, and with half-precision weights the
 * blocks of W widened on each of `width` threads (more than one row of X)
 * and R widened whole (a batch). A float32 R at one batch row is cached in
 * column panels, in place of R (r_panels_apply). */
static void footprint(tgc_kernel_ctx *c, int gates, int width, tgc_kernel_footprint *out) {
    tgc_rnn_geometry g;
    size_t bytes;
    if (c->n_inputs < 3 || tgc_rnn_geometry_read(c, gates, &g) != TGC_OK || !scratch_bytes(&g, &bytes) ||
        bytes > INT64_MAX)
        return;
    int64_t total = (int64_t)bytes, gh = gates * g.hidden, extra = 0;
    if (is_half(c->inputs[1].dtype)) {
        int64_t per = g.input > 0 && WIDE_BLOCK_FLOATS / g.input > 16 ? WIDE_BLOCK_FLOATS / g.input / 16 * 16 : 16;
        if (g.seq * g.batch > 1) extra += per * g.input * (width > 0 ? width : 1);
        if (g.batch > 1) extra += gh * g.hidden;
    }
    out->workspace_bytes = extra <= (INT64_MAX - total) / 4 ? total + extra * 4 : INT64_MAX;
    int64_t cached = tgc_cpu_gemv_panels_cached_bytes(g.dirs, gh, g.hidden);
    if (r_panels_apply(c, &g) && cached > 0) out->cache_bytes = cached, out->replaces_inputs = 1u << 2;
}

static void rnn_footprint(tgc_kernel_ctx *c, int width, tgc_kernel_footprint *out) { footprint(c, 1, width, out); }
static void gru_footprint(tgc_kernel_ctx *c, int width, tgc_kernel_footprint *out) { footprint(c, 3, width, out); }
static void lstm_footprint(tgc_kernel_ctx *c, int width, tgc_kernel_footprint *out) { footprint(c, 4, width, out); }

static tgc_status rnn_f32(tgc_kernel_ctx *c) { return run_rnn(c, 1); }
static tgc_status gru_f32(tgc_kernel_ctx *c) { return run_rnn(c, 3); }
static tgc_status lstm_f32(tgc_kernel_ctx *c) { return run_rnn(c, 4); }

#define F32_ONLY {TGC_FLOAT32, TGC_DTYPE_INVALID}

const tgc_kernel_def tgc_cpu_kernels_rnn[] = {
    {.op = "RNN", .fn = rnn_f32, .forward_input = -1, .dtypes = F32_ONLY, .footprint = rnn_footprint},
    {.op = "GRU", .fn = gru_f32, .forward_input = -1, .dtypes = F32_ONLY, .footprint = gru_footprint},
    {.op = "LSTM", .fn = lstm_f32, .forward_input = -1, .dtypes = F32_ONLY, .footprint = lstm_footprint},
    {.op = "_RNNHalfWeight", .fn = rnn_f32, .forward_input = -1, .dtypes = F32_ONLY, .footprint = rnn_footprint},
    {.op = "_GRUHalfWeight", .fn = gru_f32, .forward_input = -1, .dtypes = F32_ONLY, .footprint = gru_footprint},
    {.op = "_LSTMHalfWeight", .fn = lstm_f32, .forward_input = -1, .dtypes = F32_ONLY, .footprint = lstm_footprint},
    {.op = NULL},
};
