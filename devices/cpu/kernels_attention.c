/* _Attention on the cpu (graph/ops_attention.c has the op):
 *     Y = softmax(scale * Q K^T + mask, last axis) V
 * one block of query rows at a time, as FlashAttention's outer loop and
 * ONNX Runtime's cpu MultiHeadAttention do without its online softmax: for
 * each (batch index, block of `rows` query rows) the block's scores
 * [rows, Lk] go into a per-thread scratch by one sgemm (scale as its
 * alpha), the mask is added, each row becomes its softmax in place (the cpu
 * Softmax kernel's arithmetic: maximum subtracted, exp by the Exp row's
 * vector loop, the sum in double by tgc_cpu_row_sum, times the rounded
 * reciprocal), and one more sgemm multiplies the block by V into Y. The
 * scores of the whole tensor are never held: the scratch is `rows` rows per
 * thread, `rows` chosen so that it stays about SCRATCH_ELEMS floats (in
 * L2).
 *
 * Units (batch index, row block) are grouped into pieces of about
 * PIECE_MACS multiply-adds, from the sizes alone, and each unit's
 * arithmetic is the same whichever thread runs it: any thread count gives
 * the same bits. Batch dims broadcast as MatMul's (stride 0 along an axis
 * an operand has as 1); the mask's dims broadcast to the scores' likewise,
 * its rows and columns too. */
#include "devices/attention_geometry.h"
#include "devices/cpu/ew.h"
#include "devices/cpu/kernels_nn.h"
#include "devices/cpu/row_sum.h"
#include "support/alloc.h"
#include "support/checked.h"

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

/* Scores a thread holds at once (256 KiB, half of a 512 KiB L2), and the
 * most rows a block has. Each block's sgemms pack K and V again, so short
 * blocks cost: 8 heads of 1024 x 1024 x 64 on this machine (2 cores) ran
 * 1.4x faster than the unfused ops with blocks of 64 rows, where blocks of
 * 16 (a 64 KiB scratch) were slower than the unfused ops. */
#define SCRATCH_ELEMS ((int64_t)65536)
#define MAX_ROWS ((int64_t)128)
/* Multiply-adds worth a piece of their own (~20 us on one core). */
#define PIECE_MACS ((int64_t)1 << 20)

typedef struct attention_run {
    tgc_attention_geometry g;
    const float *q, *k, *v, *mask;
    float *y;
    int64_t rows, blocks; /* query rows a unit, row blocks a batch index */
    int64_t units, per_piece;
    float *scratch;       /* width x rows x Lk */
    atomic_bool failed;
} attention_run;

/* v[k] = exp(v[k]) for k < n, through the Exp row's vector loop. */
static void exp_in_place(float *v, int64_t n) { tgc_cpu_ew_loops()->unary[TGC_EW_Exp][TGC_FLOAT32](n, v, v, NULL); }

/* Row s[0..n) becomes its softmax, as the cpu Softmax kernel computes it
 * (devices/cpu/kernels_reduce.c, softmax_rows): NaN is skipped by the
 * maximum and makes the row NaN through the sum. */
static void softmax_row(float *s, int64_t n) {
    float m = -INFINITY;
    for (int64_t j = 0; j < n; j++) m = s[j] > m ? s[j] : m;
    for (int64_t j = 0; j < n; j++) s[j] -= m;
    exp_in_place(s, n);
    float inv = (float)(1.0 / tgc_cpu_row_sum(s, n));
    for (int64_t j = 0; j < n; j++) s[j] *= inv;
}

static void run_unit(attention_run *r, int64_t u, float *s) {
    const tgc_attention_geometry *g = &r->g;
    int64_t t = u / r->blocks, r0 = u % r->blocks * r->rows;
    int64_t n = g->lq - r0 < r->rows ? g->lq - r0 : r->rows, lk = g->lk;
    int64_t oq, ok, ov, om;
    tgc_attention_geometry_offsets(g, t, &oq, &ok, &ov, &om);
    /* s = scale * Q[r0 .. r0 + n) K^T */
    bool fine = tgc_cpu_sgemm_one(false, !g->kt, n, lk, g->d, g->scale, r->q + oq + r0 * g->d, g->d, r->k + ok,
                                  g->kt ? lk : g->d, 0.0f, s, lk);
    for (int64_t i = 0; fine && i < n; i++) {
        float *row = s + i * lk;
        if (r->mask != NULL) {
            const float *m = r->mask + om + (r0 + i) * g->m_row;
            if (g->m_col == 1)
                for (int64_t j = 0; j < lk; j++) row[j] += m[j];
            else
                for (int64_t j = 0; j < lk; j++) row[j] += m[0];
        }
        softmax_row(row, lk);
    }
    int64_t oy = (t * g->lq + r0) * g->dv;
    if (fine)
        fine = tgc_cpu_sgemm_one(false, false, n, g->dv, lk, 1.0f, s, lk, r->v + ov, g->dv, 0.0f, r->y + oy, g->dv);
    if (!fine) atomic_store(&r->failed, true);
}

static void run_piece(void *arg, int64_t piece, int slot) {
    attention_run *r = arg;
    float *s = r->scratch + (size_t)slot * (size_t)(r->rows * r->g.lk);
    int64_t lo = piece * r->per_piece, hi = lo + r->per_piece < r->units ? lo + r->per_piece : r->units;
    for (int64_t u = lo; u < hi; u++) run_unit(r, u, s);
}

static tgc_status attention_f32(tgc_kernel_ctx *c) {
    attention_run *r = tgc_calloc(1, sizeof *r);
    if (r == NULL) return TGC_ERR_NOMEM;
    tgc_attention_geometry *g = &r->g;
    tgc_status st = tgc_attention_geometry_read(c, g);
    if (st != TGC_OK || g->batch == 0 || g->lq == 0 || g->dv == 0) goto done;
    r->q = tgc_kernel_in_ptr(c, 0);
    r->k = tgc_kernel_in_ptr(c, 1);
    r->v = tgc_kernel_in_ptr(c, 2);
    r->mask = g->has_mask ? tgc_kernel_in_ptr(c, 3) : NULL;
    r->y = tgc_kernel_out_ptr(c, 0);
    if (g->lk == 0) { /* no keys: an empty softmax, a zero product */
        memset(r->y, 0, tgc_value_nbytes(&c->outputs[0]));
        goto done;
    }
    r->rows = SCRATCH_ELEMS / g->lk;
    if (r->rows < 1) r->rows = 1;
    if (r->rows > MAX_ROWS) r->rows = MAX_ROWS;
    if (r->rows > g->lq) r->rows = g->lq;
    r->blocks = (g->lq + r->rows - 1) / r->rows;
    int64_t unit_macs, scratch_elems, dd;
    size_t bytes;
    int width = tgc_parallel_width(c->pool);
    if (!tgc_checked_mul_i64(g->batch, r->blocks, &r->units) || !tgc_checked_add_i64(g->d, g->dv, &dd) ||
        !tgc_checked_mul_i64(r->rows * g->lk, dd, &unit_macs) ||
        !tgc_checked_mul_i64(r->rows * g->lk, width, &scratch_elems) ||
        !tgc_checked_nbytes(scratch_elems, sizeof(float), &bytes)) {
        st = tgc_kernel_fail(c, "attention sizes overflow (Lq %lld, Lk %lld, D %lld)", (long long)g->lq,
                             (long long)g->lk, (long long)g->d);
        goto done;
    }
    r->per_piece = unit_macs >= PIECE_MACS ? 1 : (PIECE_MACS + unit_macs - 1) / (unit_macs > 0 ? unit_macs : 1);
    if ((r->scratch = tgc_malloc(bytes)) == NULL) {
        st = TGC_ERR_NOMEM;
        goto done;
    }
    atomic_init(&r->failed, false);
    tgc_parallel_for(c->pool, (r->units + r->per_piece - 1) / r->per_piece, run_piece, r);
    if (atomic_load(&r->failed)) st = tgc_kernel_fail(c, "attention: " TGC_CPU_GEMM_FAILED);
done:
    tgc_free(r->scratch);
    tgc_free(r);
    return st;
}

const tgc_kernel_def tgc_cpu_kernels_attention[] = {
    {.op = "_Attention", .fn = attention_f32, .forward_input = -1,
     .dtypes = {TGC_FLOAT32, TGC_DTYPE_INVALID}},
    {.op = NULL},
};
