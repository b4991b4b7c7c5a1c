/* _Attention's argument checks and geometry (see attention_geometry.h). */
#include "devices/attention_geometry.h"

#include "devices/kernel_checks.h"
#include "support/checked.h"

#include <string.h>

/* Strides of a contiguous tensor of `rank` dims, whose last n_mat dims are
 * its matrix, along the nb output axes bdims (its other dims aligned at the
 * right): 0 where it has no such axis or has it as 1. False when a dim is
 * neither 1 nor the output's. */
static bool broadcast_strides(const int64_t *dims, int rank, int n_mat, const int64_t *bdims, int nb, int64_t *s) {
    int own = rank - n_mat;
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

tgc_status tgc_attention_geometry_read(tgc_kernel_ctx *c, tgc_attention_geometry *g) {
    memset(g, 0, sizeof *g);
    if (c->n_inputs < 3 || c->n_outputs != 1)
        return tgc_kernel_fail(c, "_Attention takes Q, K, V and an optional mask, and gives one output");
    const tgc_value *q = &c->inputs[0], *k = &c->inputs[1], *v = &c->inputs[2], *y = &c->outputs[0];
    g->has_mask = tgc_kernel_has_input(c, 3);
    const tgc_value *m = g->has_mask ? &c->inputs[3] : NULL;
    const tgc_value *all[5] = {q, k, v, y, m};
    static const char *const names[5] = {"Q", "K", "V", "the output", "the mask"};
    for (int i = 0; i < 5; i++) {
        if (all[i] == NULL) continue;
        tgc_status st = tgc_kernel_need_f32(c, all[i], names[i]);
        if (st != TGC_OK) return st;
        if (i < 4 && all[i]->rank < 2)
            return tgc_kernel_fail(c, "%s has rank %d; attention needs rank >= 2", names[i], all[i]->rank);
    }
    g->kt = tgc_kernel_attr_int(c, "k_transposed", 0) != 0;
    g->scale = (float)tgc_kernel_attr_float(c, "scale", 1.0);
    g->lq = q->dims[q->rank - 2];
    g->d = q->dims[q->rank - 1];
    g->lk = v->dims[v->rank - 2];
    g->dv = v->dims[v->rank - 1];
    int64_t kd = k->dims[k->rank - (g->kt ? 2 : 1)], klk = k->dims[k->rank - (g->kt ? 1 : 2)];
    if (kd != g->d || klk != g->lk || y->dims[y->rank - 2] != g->lq || y->dims[y->rank - 1] != g->dv)
        return tgc_kernel_fail(c, "Q, K%s, V and the output do not agree: D %lld and %lld, Lk %lld and %lld",
                               g->kt ? "^T" : "", (long long)g->d, (long long)kd, (long long)klk, (long long)g->lk);
    g->nb = y->rank - 2;
    memcpy(g->bdims, y->dims, (size_t)g->nb * sizeof(int64_t));
    g->batch = 1;
    for (int a = 0; a < g->nb; a++)
        if (!tgc_checked_mul_i64(g->batch, g->bdims[a], &g->batch))
            return tgc_kernel_fail(c, "the output's batch overflows");
    if (q->rank > y->rank || k->rank > y->rank || v->rank > y->rank ||
        !broadcast_strides(q->dims, q->rank, 2, g->bdims, g->nb, g->sq) ||
        !broadcast_strides(k->dims, k->rank, 2, g->bdims, g->nb, g->sk) ||
        !broadcast_strides(v->dims, v->rank, 2, g->bdims, g->nb, g->sv))
        return tgc_kernel_fail(c, "the batch dims of Q, K or V do not broadcast to the output's");
    if (m != NULL) {
        int64_t scores[TGC_MAX_RANK], s[TGC_MAX_RANK];
        memcpy(scores, y->dims, (size_t)g->nb * sizeof(int64_t));
        scores[g->nb] = g->lq;
        scores[g->nb + 1] = g->lk;
        if (m->rank > y->rank || !broadcast_strides(m->dims, m->rank, 0, scores, g->nb + 2, s))
            return tgc_kernel_fail(c, "the mask does not broadcast to the scores");
        memcpy(g->sm, s, (size_t)g->nb * sizeof(int64_t));
        g->m_row = s[g->nb];
        g->m_col = s[g->nb + 1]; /* 1, or 0: one column broadcast */
    }
    return TGC_OK;
}

void tgc_attention_geometry_offsets(const tgc_attention_geometry *g, int64_t t, int64_t *oq, int64_t *ok,
                                    int64_t *ov, int64_t *om) {
    *oq = *ok = *ov = *om = 0;
    for (int a = g->nb - 1; a >= 0; a--) {
        int64_t i = t % g->bdims[a];
        t /= g->bdims[a];
        *oq += i * g->sq[a];
        *ok += i * g->sk[a];
        *ov += i * g->sv[a];
        *om += i * g->sm[a];
    }
}
