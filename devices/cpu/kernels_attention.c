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
#include "devices/cpu/ew.h"
#include "devices/cpu/kernels_nn.h"
#include "devices/cpu/row_sum.h"
#include "devices/kernel.h"
#include "devices/kernel_checks.h"
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
    const float *q, *k, *v, *mask;
    float *y;
    float scale;
    bool kt;                   /* K is given as K^T [..., D, Lk] */
    int nb;                    /* output batch axes */
    int64_t bdims[TGC_MAX_RANK];
    /* element strides along each output batch axis (0: broadcast) */
    int64_t sq[TGC_MAX_RANK], sk[TGC_MAX_RANK], sv[TGC_MAX_RANK], sm[TGC_MAX_RANK];
    int64_t m_row, m_col;      /* the mask's strides along Lq and Lk (0: broadcast) */
    int64_t lq, lk, d, dv;
    int64_t rows, blocks;      /* query rows a unit, row blocks a batch index */
    int64_t units, per_piece;
    float *scratch;            /* width x rows x Lk */
    atomic_bool failed;
} attention_run;

/* Strides of a contiguous tensor of `rank` dims along the output's nb
 * batch axes (its own batch axes aligned at the right): 0 where it has no
 * such axis or has it as 1 while the output's is not. False when a dim is
 * neither 1 nor the output's. */
static bool batch_strides(const int64_t *dims, int rank, int n_mat, const int64_t *bdims, int nb, int64_t *s) {
    int own = rank - n_mat; /* its batch axes */
    int64_t stride = 1;
    for (int d = rank - 1; d >= own; d--) stride *= dims[d];
    for (int a = nb - 1; a >= 0; a--) {
        int d = a - (nb - own);
        if (d < 0) {
            s[a] = 0;
            continue;
        }
        if (dims[d] != bdims[a] && dims[d] != 1) return false;
        s[a] = dims[d] == bdims[a] && bdims[a] != 1 ? stride : 0;
        stride *= dims[d];
    }
    return true;
}

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
    int64_t t = u / r->blocks, r0 = u % r->blocks * r->rows;
    int64_t n = r->lq - r0 < r->rows ? r->lq - r0 : r->rows;
    int64_t oq = 0, ok = 0, ov = 0, om = 0, rest = t;
    for (int a = r->nb - 1; a >= 0; a--) {
        int64_t i = rest % r->bdims[a];
        rest /= r->bdims[a];
        oq += i * r->sq[a];
        ok += i * r->sk[a];
        ov += i * r->sv[a];
        om += i * r->sm[a];
    }
    int64_t lk = r->lk;
    /* s = scale * Q[r0 .. r0 + n) K^T */
    bool fine = tgc_cpu_sgemm_one(false, !r->kt, n, lk, r->d, r->scale, r->q + oq + r0 * r->d, r->d, r->k + ok,
                                  r->kt ? lk : r->d, 0.0f, s, lk);
    for (int64_t i = 0; fine && i < n; i++) {
        float *row = s + i * lk;
        if (r->mask != NULL) {
            const float *m = r->mask + om + (r0 + i) * r->m_row;
            if (r->m_col == 1)
                for (int64_t j = 0; j < lk; j++) row[j] += m[j];
            else
                for (int64_t j = 0; j < lk; j++) row[j] += m[0];
        }
        softmax_row(row, lk);
    }
    int64_t oy = t * r->lq * r->dv + r0 * r->dv;
    if (fine)
        fine = tgc_cpu_sgemm_one(false, false, n, r->dv, lk, 1.0f, s, lk, r->v + ov, r->dv, 0.0f, r->y + oy, r->dv);
    if (!fine) atomic_store(&r->failed, true);
}

static void run_piece(void *arg, int64_t piece, int slot) {
    attention_run *r = arg;
    float *s = r->scratch + (size_t)slot * (size_t)(r->rows * r->lk);
    int64_t lo = piece * r->per_piece, hi = lo + r->per_piece < r->units ? lo + r->per_piece : r->units;
    for (int64_t u = lo; u < hi; u++) run_unit(r, u, s);
}

/* Reads and checks the dims (inference has checked them; a kernel still
 * refuses what it cannot run) into r. */
static tgc_status read_geometry(tgc_kernel_ctx *c, attention_run *r) {
    const tgc_value *q = &c->inputs[0], *k = &c->inputs[1], *v = &c->inputs[2], *y = &c->outputs[0];
    const tgc_value *m = tgc_kernel_has_input(c, 3) ? &c->inputs[3] : NULL;
    const tgc_value *all[4] = {q, k, v, m};
    for (int i = 0; i < 4; i++) {
        if (all[i] == NULL) continue;
        static const char *const names[4] = {"Q", "K", "V", "the mask"};
        tgc_status st = tgc_kernel_need_f32(c, all[i], names[i]);
        if (st != TGC_OK) return st;
        if (i < 3 && all[i]->rank < 2)
            return tgc_kernel_fail(c, "%s has rank %d; attention needs rank >= 2", names[i], all[i]->rank);
    }
    tgc_status st = tgc_kernel_need_f32(c, y, "the output");
    if (st != TGC_OK) return st;
    r->kt = tgc_kernel_attr_int(c, "k_transposed", 0) != 0;
    r->scale = (float)tgc_kernel_attr_float(c, "scale", 1.0);
    r->lq = q->dims[q->rank - 2];
    r->d = q->dims[q->rank - 1];
    r->lk = v->dims[v->rank - 2];
    r->dv = v->dims[v->rank - 1];
    int64_t kd = k->dims[k->rank - (r->kt ? 2 : 1)], klk = k->dims[k->rank - (r->kt ? 1 : 2)];
    if (kd != r->d || klk != r->lk || y->rank < 2 || y->dims[y->rank - 2] != r->lq || y->dims[y->rank - 1] != r->dv)
        return tgc_kernel_fail(c, "Q, K%s, V and the output do not agree: D %lld and %lld, Lk %lld and %lld",
                               r->kt ? "^T" : "", (long long)r->d, (long long)kd, (long long)klk, (long long)r->lk);
    r->nb = y->rank - 2;
    memcpy(r->bdims, y->dims, (size_t)r->nb * sizeof(int64_t));
    if (q->rank > y->rank || k->rank > y->rank || v->rank > y->rank ||
        !batch_strides(q->dims, q->rank, 2, r->bdims, r->nb, r->sq) ||
        !batch_strides(k->dims, k->rank, 2, r->bdims, r->nb, r->sk) ||
        !batch_strides(v->dims, v->rank, 2, r->bdims, r->nb, r->sv))
        return tgc_kernel_fail(c, "the batch dims of Q, K or V do not broadcast to the output's");
    r->m_row = r->m_col = 0;
    if (m != NULL) {
        int64_t scores[TGC_MAX_RANK];
        memcpy(scores, y->dims, (size_t)r->nb * sizeof(int64_t));
        scores[r->nb] = r->lq;
        scores[r->nb + 1] = r->lk;
        int64_t s[TGC_MAX_RANK];
        if (m->rank > y->rank || !batch_strides(m->dims, m->rank, 0, scores, r->nb + 2, s))
            return tgc_kernel_fail(c, "the mask does not broadcast to the scores");
        memcpy(r->sm, s, (size_t)r->nb * sizeof(int64_t));
        r->m_row = s[r->nb];
        r->m_col = s[r->nb + 1]; /* 1, or 0: one column broadcast */
        r->mask = tgc_kernel_in_ptr(c, 3);
    }
    return TGC_OK;
}

static tgc_status attention_f32(tgc_kernel_ctx *c) {
    attention_run *r = tgc_calloc(1, sizeof *r);
    if (r == NULL) return TGC_ERR_NOMEM;
    tgc_status st = read_geometry(c, r);
    int64_t batch = 1;
    for (int a = 0; st == TGC_OK && a < r->nb; a++) batch *= r->bdims[a]; /* the output's: it fits */
    if (st != TGC_OK || batch == 0 || r->lq == 0 || r->dv == 0) goto done;
    r->q = tgc_kernel_in_ptr(c, 0);
    r->k = tgc_kernel_in_ptr(c, 1);
    r->v = tgc_kernel_in_ptr(c, 2);
    r->y = tgc_kernel_out_ptr(c, 0);
    if (r->lk == 0) { /* no keys: an empty softmax, a zero product */
        memset(r->y, 0, tgc_value_nbytes(&c->outputs[0]));
        goto done;
    }
    r->rows = SCRATCH_ELEMS / r->lk;
    if (r->rows < 1) r->rows = 1;
    if (r->rows > MAX_ROWS) r->rows = MAX_ROWS;
    if (r->rows > r->lq) r->rows = r->lq;
    r->blocks = (r->lq + r->rows - 1) / r->rows;
    int64_t unit_macs, scratch_elems, dd;
    size_t bytes;
    int width = tgc_parallel_width(c->pool);
    if (!tgc_checked_mul_i64(batch, r->blocks, &r->units) || !tgc_checked_add_i64(r->d, r->dv, &dd) ||
        !tgc_checked_mul_i64(r->rows * r->lk, dd, &unit_macs) ||
        !tgc_checked_mul_i64(r->rows * r->lk, width, &scratch_elems) ||
        !tgc_checked_nbytes(scratch_elems, sizeof(float), &bytes)) {
        st = tgc_kernel_fail(c, "attention sizes overflow (Lq %lld, Lk %lld, D %lld)", (long long)r->lq,
                             (long long)r->lk, (long long)r->d);
        goto done;
    }
    r->per_piece = unit_macs >= PIECE_MACS ? 1 : (PIECE_MACS + unit_macs - 1) / (unit_macs > 0 ? unit_macs : 1);
    if ((r->scratch = tgc_malloc(bytes)) == NULL) {
        st = TGC_ERR_NOMEM;
        goto done;
    }
    atomic_init(&r->failed, false);
    tgc_parallel_for(c->pool, (r->units + r->per_piece - 1) / r->per_piece, run_piece, r);
    if (atomic_load(&r->failed)) st = tgc_kernel_fail(c, "attention sizes pass BLAS's int range");
done:
    tgc_free(r->scratch);
    tgc_free(r);
    return st;
}

const tgc_kernel_def tgc_cpu_kernels_attention[] = {
    {.op = "_Attention", .kind = TGC_DEVICE_CPU, .fn = attention_f32, .forward_input = -1,
     .dtypes = {TGC_FLOAT32, TGC_DTYPE_INVALID}},
    {.op = NULL},
};
