/* Loss ops on the cpu: NegativeLogLikelihoodLoss-13 and
 * SoftmaxCrossEntropyLoss-13 (shapes and attributes: graph/ops_loss.c).
 *
 * Both read X [N, C, d1, ..., dk] as [N, C, D] (D = d1 * ... * dk, 1 for a
 * 2-D X) and the target as [N, D]; item (n, d) has class t = target[n, d]
 * at stride D in X. Following ONNX's reference implementations
 * (onnx/reference/ops/op_negative_log_likelihood_loss.py and
 * op_softmax_cross_entropy_loss.py):
 *     lp[n, k, d] = X[n, k, d] (NLL), or SoftmaxCrossEntropyLoss's
 *                   log_softmax over k: X - max_k X - log(sum_k exp(X - max_k X))
 *     w(n, d)     = 0 when t == ignore_index, else weight[t] (1 without a weight)
 *     loss[n, d]  = -lp[n, t, d] * w(n, d)
 *     "none": loss; "sum": sum(loss); "mean": sum(loss) / sum(w)
 * The mean's denominator is the item count without weights and
 * ignore_index, the non-ignored count with ignore_index only (so no items,
 * or all ignored, gives 0 / 0 = NaN, as the reference's numpy does). A
 * target outside [0, C) that is not ignore_index (a negative one included)
 * fails the kernel, naming the first such item.
 *
 * Work: the items in pieces of consecutive items chosen from the sizes
 * alone, over the device's pool. SoftmaxCrossEntropyLoss converts a
 * piece's X columns into a [C][b] block of doubles and takes the
 * log_softmax down the columns (max subtracted first, so large scores do
 * not overflow); NLL reads one element an item. Sums, the softmax and the
 * loss are in double; per-piece partial sums are added in piece order, so
 * results do not depend on the thread count.
 *
 * Element types: LOSS_ELEMENT_TYPES below lists them (float32, float16,
 * float64), each with its conversions to and from double (the dtypes list,
 * the dispatch and the conversions all come from that list). */
#include "devices/kernel.h"
#include "devices/kernel_checks.h"

#include "support/alloc.h"
#include "support/checked.h"
#include "support/half.h"

#include <math.h>
#include <string.h>

/* X(dtype, suffix, C element type, to double, from double): every element
 * type the loss kernels handle. */
#define LOSS_ELEMENT_TYPES(X)                                                                                \
    X(TGC_FLOAT32, f32, float, (double), (float))                                                            \
    X(TGC_FLOAT16, f16, uint16_t, (double)tgc_half_to_float, half_of_double)                                 \
    X(TGC_FLOAT64, f64, double, (double), (double))

/* Double to float16 through float (support/half.h converts from float only):
 * two roundings, which can differ from one in a tie of the last half bit. */
static uint16_t half_of_double(double v) { return tgc_float_to_half((float)v); }

/* What a loss node asks for, read and checked from its kernel context. */
typedef struct loss_geometry {
    int64_t n, classes, d; /* X as [n, classes, d] */
    bool softmax;          /* SoftmaxCrossEntropyLoss: log_softmax over the classes first */
    bool has_weight, want_log_prob, has_ignore;
    int64_t ignore_index;
    enum { REDUCE_NONE, REDUCE_SUM, REDUCE_MEAN } reduction;
} loss_geometry;

/* Checks the tensors against each other (inference made them agree; the
 * kernel does not rely on it) and reads the attributes into *g. */
static tgc_status loss_geometry_read(tgc_kernel_ctx *c, bool softmax, loss_geometry *g) {
    const char *op = tgc_kernel_op_name(c);
    tgc_status st = tgc_kernel_check_host(c, 2, 1);
    if (st != TGC_OK) return st;
    memset(g, 0, sizeof *g);
    g->softmax = softmax;
    g->has_weight = tgc_kernel_has_input(c, 2);
    g->want_log_prob = softmax && tgc_kernel_has_output(c, 1);
    if (g->want_log_prob && (st = tgc_kernel_check_tensor(c, "output", 1, &c->outputs[1], true)) != TGC_OK)
        return st;
    const tgc_value *x = &c->inputs[0], *t = &c->inputs[1], *y = &c->outputs[0];
    char sx[TGC_KERNEL_DIMS_BUF], sy[TGC_KERNEL_DIMS_BUF];
    if (x->rank < 2)
        return tgc_kernel_fail(c, "%s: input 0 has shape %s; it must be [N, C, d1, ..., dk]", op,
                               tgc_kernel_dims_str(x->rank, x->dims, sx));
    if (t->dtype != TGC_INT32 && t->dtype != TGC_INT64)
        return tgc_kernel_fail(c, "%s: input 1 (target) is %s; it must be int32 or int64", op,
                               tgc_dtype_name(t->dtype));
    g->n = x->dims[0];
    g->classes = x->dims[1];
    g->d = 1;
    bool same = t->rank == x->rank - 1 && t->dims[0] == g->n;
    for (int i = 2; i < x->rank; i++) {
        same = same && t->dims[i - 1] == x->dims[i];
        if (!tgc_checked_mul_i64(g->d, x->dims[i], &g->d))
            return tgc_kernel_fail(c, "%s: input 0's size does not fit", op);
    }
    if (!same)
        return tgc_kernel_fail(c, "%s: input 1 (target) has shape %s; for input 0 %s it must be [N, d1, ..., dk]",
                               op, tgc_kernel_dims_str(t->rank, t->dims, sy),
                               tgc_kernel_dims_str(x->rank, x->dims, sx));
    const tgc_value *w = g->has_weight ? &c->inputs[2] : NULL;
    if (w != NULL && (w->dtype != x->dtype || w->rank != 1 || w->dims[0] != g->classes))
        return tgc_kernel_fail(c, "%s: input 2 (weight) is %s %s; it must be %s [%lld]", op, tgc_dtype_name(w->dtype),
                               tgc_kernel_dims_str(w->rank, w->dims, sy), tgc_dtype_name(x->dtype),
                               (long long)g->classes);

    const char *reduction = tgc_kernel_attr_string(c, "reduction", "mean");
    if (strcmp(reduction, "none") == 0) g->reduction = REDUCE_NONE;
    else if (strcmp(reduction, "sum") == 0) g->reduction = REDUCE_SUM;
    else if (strcmp(reduction, "mean") == 0) g->reduction = REDUCE_MEAN;
    else return tgc_kernel_fail(c, "%s: attribute 'reduction' is '%s'; it must be 'none', 'sum' or 'mean'", op,
                                reduction);
    g->has_ignore = tgc_node_attr(c->node, "ignore_index") != NULL;
    g->ignore_index = tgc_kernel_attr_int(c, "ignore_index", 0);

    int64_t items = tgc_value_numel(t), want = g->reduction == REDUCE_NONE ? items : 1;
    if (y->dtype != x->dtype || tgc_value_numel(y) != want)
        return tgc_kernel_fail(c, "%s: output 0 is %s %s; it must be %s with %lld elements", op,
                               tgc_dtype_name(y->dtype), tgc_kernel_dims_str(y->rank, y->dims, sx),
                               tgc_dtype_name(x->dtype), (long long)want);
    const tgc_value *lp = g->want_log_prob ? &c->outputs[1] : NULL;
    if (lp != NULL && (lp->dtype != x->dtype || tgc_value_numel(lp) != tgc_value_numel(x)))
        return tgc_kernel_fail(c, "%s: output 1 (log_prob) is %s %s; it must be input 0's dtype and shape", op,
                               tgc_dtype_name(lp->dtype), tgc_kernel_dims_str(lp->rank, lp->dims, sx));
    return TGC_OK;
}

/* Target i of an int32 or int64 target tensor. */
static int64_t target_at(tgc_dtype dtype, const void *t, int64_t i) {
    return dtype == TGC_INT32 ? ((const int32_t *)t)[i] : ((const int64_t *)t)[i];
}

/* An element type's conversions: n elements from src[at..] into dst, and
 * n doubles from src into dst[at..]. */
typedef void (*loss_to_double_fn)(const void *src, int64_t at, int64_t n, double *dst);
typedef void (*loss_from_double_fn)(const double *src, int64_t n, void *dst, int64_t at);

/* One loss over the pool: the items (n, d) in pieces of per_piece
 * consecutive items (flat index n * D + d), a piece's partial sums and
 * first bad item recorded per piece and combined in piece order, so the
 * result does not depend on the thread count. */
typedef struct loss_job {
    const loss_geometry *g;
    loss_to_double_fn to_double;
    loss_from_double_fn from_double;
    const void *x, *target;
    tgc_dtype target_dtype;
    const double *weight; /* [classes] in double, or NULL */
    void *out, *log_prob; /* log_prob NULL when not wanted */
    int64_t items, per_piece;
    double *scratch; /* per slot: scratch_per_slot doubles */
    int64_t scratch_per_slot;
    double *piece_sum, *piece_weight; /* per piece: sum of losses, sum of counted weights */
    int64_t *piece_bad;               /* per piece: first item whose target is out of range, or -1 */
} loss_job;

/* X elements of a piece worth a piece of their own (softmax), or items
 * (NLL, which reads one element an item): about 10-50 us of work. */
#define LOSS_PIECE_ELEMS 16384

/* In place over the columns i < b of slab [classes][b]: log_softmax down
 * each column, x - (max + log(sum(exp(x - max)))), with m and s b doubles
 * of scratch. A NaN anywhere in a column makes it all NaN, as numpy. */
static void log_softmax_columns(double *slab, int64_t classes, int64_t b, double *m, double *s) {
    for (int64_t i = 0; i < b; i++) {
        m[i] = -INFINITY;
        s[i] = 0.0;
    }
    for (int64_t k = 0; k < classes; k++)
        for (int64_t i = 0; i < b; i++) {
            double v = slab[k * b + i];
            if (v > m[i] || isnan(v)) m[i] = v;
        }
    for (int64_t k = 0; k < classes; k++)
        for (int64_t i = 0; i < b; i++) s[i] += exp(slab[k * b + i] - m[i]);
    for (int64_t i = 0; i < b; i++) m[i] += log(s[i]);
    for (int64_t k = 0; k < classes; k++)
        for (int64_t i = 0; i < b; i++) slab[k * b + i] -= m[i];
}

/* Piece `piece` of job `arg` on scratch slot `slot`: its items, taken in
 * runs that stay within one sample n (columns d .. d + b of X[n]). */
static void loss_piece(void *arg, int64_t piece, int slot) {
    const loss_job *j = arg;
    const loss_geometry *g = j->g;
    int64_t classes = g->classes, dn = g->d, per = j->per_piece;
    double *slab = j->scratch + slot * j->scratch_per_slot; /* softmax: [classes][per], then m, s */
    double *loss = slab + (g->softmax ? classes * per + 2 * per : 0);
    int64_t lo = piece * per, hi = lo + per < j->items ? lo + per : j->items, bad = -1;
    double sum = 0.0, weight_sum = 0.0;
    for (int64_t item = lo; item < hi && bad < 0;) {
        int64_t n = item / dn, d = item % dn, b = hi - item < dn - d ? hi - item : dn - d;
        int64_t x_at = n * classes * dn + d; /* X[n, 0, d] */
        if (g->softmax) {
            /* slab [classes][b] = X[n, :, d .. d + b); with dn 1 (then b is
             * 1) the classes lie next to each other: one conversion */
            if (dn == 1) j->to_double(j->x, x_at, classes, slab);
            for (int64_t k = 0; dn > 1 && k < classes; k++) j->to_double(j->x, x_at + k * dn, b, slab + k * b);
            log_softmax_columns(slab, classes, b, slab + classes * per, slab + classes * per + per);
            if (j->log_prob != NULL && dn == 1) j->from_double(slab, classes, j->log_prob, x_at);
            for (int64_t k = 0; j->log_prob != NULL && dn > 1 && k < classes; k++)
                j->from_double(slab + k * b, b, j->log_prob, x_at + k * dn);
        }
        for (int64_t i = 0; i < b; i++) {
            int64_t t = target_at(j->target_dtype, j->target, item + i);
            double w = 0.0, l = 0.0;
            if (!(g->has_ignore && t == g->ignore_index)) {
                if (t < 0 || t >= classes) {
                    bad = item + i;
                    break;
                }
                double lp;
                if (g->softmax) lp = slab[t * b + i];
                else j->to_double(j->x, x_at + t * dn + i, 1, &lp);
                w = j->weight != NULL ? j->weight[t] : 1.0;
                l = -lp * w;
            }
            loss[i] = l;
            sum += l;
            weight_sum += w;
        }
        if (bad < 0 && g->reduction == REDUCE_NONE) j->from_double(loss, b, j->out, item);
        item += b;
    }
    j->piece_sum[piece] = sum;
    j->piece_weight[piece] = weight_sum;
    j->piece_bad[piece] = bad;
}

/* The loss of the file comment for X's element type (conversions to and
 * from): scratch sized and checked, the pieces run over c->pool, then the
 * first bad target reported or the reduction written. */
static tgc_status loss_run(tgc_kernel_ctx *c, const loss_geometry *g, loss_to_double_fn to_double,
                           loss_from_double_fn from_double) {
    const char *op = tgc_kernel_op_name(c);
    int64_t classes = g->classes, items = tgc_value_numel(&c->inputs[1]);
    int64_t per = LOSS_PIECE_ELEMS;
    if (g->softmax && classes > 0) per = LOSS_PIECE_ELEMS / classes > 0 ? LOSS_PIECE_ELEMS / classes : 1;
    int64_t pieces = items / per + (items % per != 0), width = tgc_parallel_width(c->pool);
    /* doubles: weight [classes], then per slot the slab and m, s (softmax)
     * and the loss row, then two sums per piece */
    int64_t per_slot = per, rows = 3 * per, sums, n_doubles; /* per <= LOSS_PIECE_ELEMS */
    bool fits = !g->softmax || (tgc_checked_mul_i64(classes, per, &per_slot) &&
                                tgc_checked_add_i64(per_slot, rows, &per_slot));
    fits = fits && tgc_checked_mul_i64(per_slot, width, &n_doubles) &&
           tgc_checked_add_i64(n_doubles, g->has_weight ? classes : 0, &n_doubles) &&
           tgc_checked_mul_i64(pieces, 2, &sums) && tgc_checked_add_i64(n_doubles, sums, &n_doubles);
    size_t doubles_bytes = 0, bad_bytes = 0;
    fits = fits && tgc_checked_nbytes(n_doubles, sizeof(double), &doubles_bytes) &&
           tgc_checked_nbytes(pieces, sizeof(int64_t), &bad_bytes);
    if (!fits) return tgc_kernel_fail(c, "%s: the loss's scratch size does not fit", op);
    double *mem = tgc_malloc(doubles_bytes > 0 ? doubles_bytes : 1);
    int64_t *piece_bad = tgc_malloc(bad_bytes > 0 ? bad_bytes : 1);
    if (mem == NULL || piece_bad == NULL) {
        tgc_free(mem);
        tgc_free(piece_bad);
        return tgc_kernel_fail(c, "%s: out of host memory for %zu bytes of scratch", op, doubles_bytes + bad_bytes);
    }
    double *weight = g->has_weight ? mem : NULL, *scratch = mem + (g->has_weight ? classes : 0);
    if (weight != NULL) to_double(tgc_kernel_in_ptr(c, 2), 0, classes, weight);
    loss_job j = {.g = g, .to_double = to_double, .from_double = from_double, .x = tgc_kernel_in_ptr(c, 0),
                  .target = tgc_kernel_in_ptr(c, 1), .target_dtype = c->inputs[1].dtype, .weight = weight,
                  .out = tgc_kernel_out_ptr(c, 0), .log_prob = g->want_log_prob ? tgc_kernel_out_ptr(c, 1) : NULL,
                  .items = items, .per_piece = per, .scratch = scratch, .scratch_per_slot = per_slot,
                  .piece_sum = scratch + per_slot * width, .piece_weight = scratch + per_slot * width + pieces,
                  .piece_bad = piece_bad};
    tgc_parallel_for(c->pool, pieces, loss_piece, &j);

    double sum = 0.0, weight_sum = 0.0;
    int64_t bad = -1;
    for (int64_t p = 0; p < pieces && bad < 0; p++) {
        bad = j.piece_bad[p];
        sum += j.piece_sum[p];
        weight_sum += j.piece_weight[p];
    }
    tgc_status st = TGC_OK;
    if (bad >= 0)
        st = tgc_kernel_fail(c, "%s: target %lld at item %lld of input 1 is out of range [0, %lld)%s", op,
                             (long long)target_at(j.target_dtype, j.target, bad), (long long)bad,
                             (long long)classes, g->has_ignore ? " and not ignore_index" : "");
    else if (g->reduction != REDUCE_NONE)
        from_double((const double[]){g->reduction == REDUCE_SUM ? sum : sum / weight_sum}, 1, j.out, 0);
    tgc_free(mem);
    tgc_free(piece_bad);
    return st;
}

/* Per element type: its conversions and its loss. */
#define LOSS_DEFINE(DT, SFX, T, TO_DOUBLE, FROM_DOUBLE)                                                      \
    static void to_double_##SFX(const void *src, int64_t at, int64_t n, double *dst) {                       \
        const T *s = (const T *)src + at;                                                                    \
        for (int64_t i = 0; i < n; i++) dst[i] = TO_DOUBLE(s[i]);                                            \
    }                                                                                                        \
    static void from_double_##SFX(const double *src, int64_t n, void *dst, int64_t at) {                     \
        T *q = (T *)dst + at;                                                                                \
        for (int64_t i = 0; i < n; i++) q[i] = FROM_DOUBLE(src[i]);                                          \
    }
LOSS_ELEMENT_TYPES(LOSS_DEFINE)
#undef LOSS_DEFINE

/* Checks, then runs the loss for X's dtype. */
static tgc_status loss_kernel(tgc_kernel_ctx *c, bool softmax) {
    loss_geometry g;
    tgc_status st = loss_geometry_read(c, softmax, &g);
    if (st != TGC_OK) return st;
    switch (c->inputs[0].dtype) {
#define LOSS_CASE(DT, SFX, T, TO_DOUBLE, FROM_DOUBLE)                                                        \
    case DT: return loss_run(c, &g, to_double_##SFX, from_double_##SFX);
        LOSS_ELEMENT_TYPES(LOSS_CASE)
#undef LOSS_CASE
    default: break;
    }
    return tgc_kernel_fail(c, "%s: input 0 is %s; the cpu kernel takes float32, float16 or float64", tgc_kernel_op_name(c),
                           tgc_dtype_name(c->inputs[0].dtype));
}

/* NegativeLogLikelihoodLoss-13: X holds log-probabilities. */
static tgc_status nll_loss(tgc_kernel_ctx *c) { return loss_kernel(c, false); }

/* SoftmaxCrossEntropyLoss-13: X holds scores; log_softmax over axis 1 first. */
static tgc_status softmax_cross_entropy_loss(tgc_kernel_ctx *c) { return loss_kernel(c, true); }

#define LOSS_DTYPE(DT, SFX, T, TO_DOUBLE, FROM_DOUBLE) DT,

const tgc_kernel_def tgc_cpu_kernels_loss[] = {
    {.op = "NegativeLogLikelihoodLoss", .fn = nll_loss, .forward_input = -1,
     .dtypes = {LOSS_ELEMENT_TYPES(LOSS_DTYPE) TGC_DTYPE_INVALID}},
    {.op = "SoftmaxCrossEntropyLoss", .fn = softmax_cross_entropy_loss, .forward_input = -1,
     .dtypes = {LOSS_ELEMENT_TYPES(LOSS_DTYPE) TGC_DTYPE_INVALID}},
    {.op = NULL},
};
