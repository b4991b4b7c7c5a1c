/* MatMul's and Gemm's geometry (see matmul_geometry.h): shape checks, the
 * batch broadcasting offsets and C's strides, one copy for the cpu and gpu
 * kernels. */
#include "devices/matmul_geometry.h"

#include "devices/kernel_checks.h"
#include "support/checked.h"

/* The float dtype of c's kernel for input A (float32 when it has none). */
static tgc_dtype float_type(const tgc_kernel_ctx *c) {
    return c->n_inputs > 0 ? tgc_kernel_float_type(c, &c->inputs[0]) : TGC_FLOAT32;
}

tgc_status tgc_matmul_geometry_read(tgc_kernel_ctx *c, tgc_matmul_geometry *g) {
    return tgc_matmul_geometry_read_dtype(c, float_type(c), g);
}

tgc_status tgc_gemm_geometry_read(tgc_kernel_ctx *c, tgc_gemm_geometry *g) {
    return tgc_gemm_geometry_read_dtype(c, float_type(c), g);
}

tgc_status tgc_matmul_geometry_read_dtype(tgc_kernel_ctx *c, tgc_dtype dt, tgc_matmul_geometry *g) {
    return tgc_matmul_geometry_read_dtypes(c, dt, dt, g);
}

tgc_status tgc_matmul_geometry_read_dtypes(tgc_kernel_ctx *c, tgc_dtype dt, tgc_dtype b_dt, tgc_matmul_geometry *g) {
    if (c->n_inputs < 2 || c->n_outputs < 1) return tgc_kernel_fail(c, "MatMul takes 2 inputs and 1 output");
    const tgc_value *a = &c->inputs[0], *b = &c->inputs[1];
    const tgc_value *y = &c->outputs[0];
    tgc_status st = tgc_kernel_need_float(c, a, "input A", dt);
    if (st == TGC_OK) st = tgc_kernel_need_float(c, b, "input B", b_dt);
    if (st == TGC_OK) st = tgc_kernel_need_float(c, y, "output Y", dt);
    if (st != TGC_OK) return st;
    int ra = a->rank, rb = b->rank;
    if (ra < 1 || rb < 1)
        return tgc_kernel_fail(c, "MatMul needs inputs of rank >= 1 (A rank %d, B rank %d)", ra, rb);

    int64_t m = ra >= 2 ? a->dims[ra - 2] : 1, k = a->dims[ra - 1];
    int64_t kb = rb >= 2 ? b->dims[rb - 2] : b->dims[0], n = rb >= 2 ? b->dims[rb - 1] : 1;
    if (k != kb)
        return tgc_kernel_fail(c, "inner dimensions differ: A has K = %lld, B has K = %lld", (long long)k,
                               (long long)kb);
    /* Output: broadcast batch, then M if A is a matrix, then N if B is. */
    int nba = ra > 2 ? ra - 2 : 0, nbb = rb > 2 ? rb - 2 : 0;
    int nb = nba > nbb ? nba : nbb;
    if (y->rank != nb + (ra >= 2) + (rb >= 2) || (ra >= 2 && y->dims[nb] != m) ||
        (rb >= 2 && y->dims[y->rank - 1] != n))
        return tgc_kernel_fail(c,
                               "output Y has rank %d, not the %d-D [batch.., M = %lld, N = %lld] "
                               "that A and B give",
                               y->rank, nb + (ra >= 2) + (rb >= 2), (long long)m, (long long)n);

    /* Matrix strides of A and B along each output batch axis (0: broadcast). */
    int64_t batch = 1, b_count = 1, step_a, step_b;
    if (!tgc_checked_mul_i64(m, k, &step_a) || !tgc_checked_mul_i64(k, n, &step_b))
        return tgc_kernel_fail(c, "MatMul: the matrices' sizes do not fit in int64");
    for (int i = nb - 1; i >= 0; i--) {
        int ia = i - (nb - nba), ib = i - (nb - nbb);
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1, dy = y->dims[i];
        if ((da != dy && da != 1) || (db != dy && db != 1))
            return tgc_kernel_fail(c,
                                   "batch axis %d: A has %lld, B has %lld, Y has %lld; they do not "
                                   "broadcast",
                                   i, (long long)da, (long long)db, (long long)dy);
        g->dims[i] = dy;
        g->sa[i] = da == 1 ? 0 : step_a;
        g->sb[i] = db == 1 ? 0 : step_b;
        if (!tgc_checked_mul_i64(step_a, da, &step_a) || !tgc_checked_mul_i64(step_b, db, &step_b) ||
            !tgc_checked_mul_i64(batch, dy, &batch) || !tgc_checked_mul_i64(b_count, db, &b_count))
            return tgc_kernel_fail(c, "MatMul: the batch sizes do not fit in int64");
    }
    g->m = m;
    g->n = n;
    g->k = k;
    g->batch = batch;
    g->b_count = b_count;
    g->nb = nb;
    return TGC_OK;
}

void tgc_matmul_geometry_offsets(const tgc_matmul_geometry *g, int64_t t, int64_t *oa, int64_t *ob, int64_t *oy) {
    int64_t a_off = 0, b_off = 0, rest = t;
    for (int i = g->nb - 1; i >= 0; i--) {
        int64_t idx = rest % g->dims[i];
        rest /= g->dims[i];
        a_off += idx * g->sa[i];
        b_off += idx * g->sb[i];
    }
    *oa = a_off;
    *ob = b_off;
    *oy = t * g->m * g->n;
}

tgc_status tgc_gemm_geometry_read_dtype(tgc_kernel_ctx *c, tgc_dtype dt, tgc_gemm_geometry *g) {
    if (c->n_inputs < 2 || c->n_outputs < 1) return tgc_kernel_fail(c, "Gemm takes 2 or 3 inputs and 1 output");
    const tgc_value *a = &c->inputs[0], *b = &c->inputs[1];
    const tgc_value *y = &c->outputs[0];
    bool has_c = tgc_kernel_has_input(c, 2);
    const tgc_value *cv = has_c ? &c->inputs[2] : NULL;
    tgc_status st = tgc_kernel_need_float(c, a, "input A", dt);
    if (st == TGC_OK) st = tgc_kernel_need_float(c, b, "input B", dt);
    if (st == TGC_OK && has_c) st = tgc_kernel_need_float(c, cv, "input C", dt);
    if (st == TGC_OK) st = tgc_kernel_need_float(c, y, "output Y", dt);
    if (st != TGC_OK) return st;
    bool ta = tgc_kernel_attr_int(c, "transA", 0) != 0, tb = tgc_kernel_attr_int(c, "transB", 0) != 0;
    if (a->rank != 2 || b->rank != 2)
        return tgc_kernel_fail(c, "Gemm needs 2-D A and B (A rank %d, B rank %d)", a->rank, b->rank);
    int64_t m = a->dims[ta ? 1 : 0], k = a->dims[ta ? 0 : 1];
    int64_t kb = b->dims[tb ? 1 : 0], n = b->dims[tb ? 0 : 1];
    if (k != kb)
        return tgc_kernel_fail(c, "inner dimensions differ: A' has K = %lld, B' has K = %lld", (long long)k,
                               (long long)kb);
    if (y->rank != 2 || y->dims[0] != m || y->dims[1] != n)
        return tgc_kernel_fail(c, "output Y must be [M = %lld, N = %lld]", (long long)m, (long long)n);

    /* C's strides over [M, N]: 0 along an axis it broadcasts (absent or 1). */
    int64_t cm = 0, cn = 0;
    if (cv != NULL) {
        int64_t dm = cv->rank == 2 ? cv->dims[0] : 1, dn = cv->rank >= 1 ? cv->dims[cv->rank - 1] : 1;
        if (cv->rank > 2 || (dm != 1 && dm != m) || (dn != 1 && dn != n))
            return tgc_kernel_fail(c, "input C (rank %d) does not broadcast to [%lld, %lld]", cv->rank,
                                   (long long)m, (long long)n);
        cn = dn == 1 ? 0 : 1;
        cm = dm == 1 ? 0 : dn;
    }
    g->m = m;
    g->n = n;
    g->k = k;
    g->cm = cm;
    g->cn = cn;
    g->has_c = has_c;
    g->ta = ta;
    g->tb = tb;
    g->alpha = (float)tgc_kernel_attr_float(c, "alpha", 1.0);
    g->beta = (float)tgc_kernel_attr_float(c, "beta", 1.0);
    return TGC_OK;
}
