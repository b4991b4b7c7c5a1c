/* BatchNormalization folded into the Conv or Gemm before it: in inference
 * mode BN is y = (x - mean) * s + beta with s = scale / sqrt(var + eps) per
 * channel, an affine map that the producer's weights absorb:
 *   Conv:  W'[m, ...] = W[m, ...] * s[m],   B'[m] = (B[m] - mean[m]) * s[m] + beta[m]
 *   Gemm (Y = alpha A op(B) + beta_g C, channels are Y's columns):
 *          op(B)'[:, j] = op(B)[:, j] * s[j], C'[j] = (beta_g C[j] - mean[j]) * s[j] + beta[j]
 * (ONNX Runtime's ConvBNFusion and GemmBNFusion). Computed in float64 and
 * rounded once. The fused node takes the BatchNormalization's name. */
#include "passes/pass.h"

#include <math.h>
#include <string.h>

static bool f32_vector(const tgc_const *c, int64_t len) {
    return c != NULL && c->dtype == TGC_FLOAT32 && tgc_shape_numel(&c->shape) == len && c->shape.rank <= 2;
}

/* The BN's per-channel s and shift (beta - mean * s, before the producer's bias). */
typedef struct bn_params {
    const float *scale, *beta, *mean, *var;
    double eps;
} bn_params;

static bool bn_params_of(const tgc_rewrite *rw, const tgc_node *bn, int64_t channels, bn_params *p) {
    const tgc_const *c[4];
    for (int k = 0; k < 4; k++) {
        c[k] = tgc_pass_const_of(rw, bn->inputs[k + 1]);
        if (!f32_vector(c[k], channels) || c[k]->shape.rank != 1) return false;
    }
    *p = (bn_params){c[0]->data, c[1]->data, c[2]->data, c[3]->data, tgc_pass_attr_float(bn, "epsilon", 1e-5)};
    return true;
}

static double factor(const bn_params *p, int64_t j) { return p->scale[j] / sqrt((double)p->var[j] + p->eps); }

/* Adds the fused producer (a copy of `prod` reading x, w, b) named after bn. */
static tgc_status add_fused(tgc_rewrite *rw, int32_t prod, int32_t bn, tgc_ref x, tgc_const *w, tgc_const *b) {
    int32_t wid, bid, fused;
    const char *pname = rw->g->nodes[prod].name;
    char base[300];
    snprintf(base, sizeof base, "%s_W_bn", pname);
    tgc_status s = tgc_rewrite_add_const(rw, -1, base, w, &wid);
    if (s != TGC_OK) {
        tgc_const_free(b);
        return s;
    }
    snprintf(base, sizeof base, "%s_B_bn", pname);
    if ((s = tgc_rewrite_add_const(rw, -1, base, b, &bid)) != TGC_OK) return s;
    tgc_ref ins[3] = {x, {wid, 0, {0, 0}}, {bid, 0, {0, 0}}};
    s = tgc_rewrite_add_op(rw, rw->g->nodes[prod].op_name, bn, ins, 3, 1, &fused);
    if (s == TGC_OK) s = tgc_rewrite_copy_attrs(rw, prod, fused);
    if (s != TGC_OK) return s;
    tgc_rewrite_replace_uses(rw, (tgc_ref){bn, 0, {0, 0}}, (tgc_ref){fused, 0, {0, 0}});
    tgc_rewrite_remove(rw, bn);
    tgc_rewrite_remove(rw, prod);
    rw->edits++;
    return TGC_OK;
}

static tgc_status fold_into_conv(tgc_rewrite *rw, int32_t conv, int32_t bn) {
    const tgc_node *c = &rw->g->nodes[conv];
    const tgc_const *w = c->n_inputs > 1 ? tgc_pass_const_of(rw, c->inputs[1]) : NULL;
    if (w == NULL || w->dtype != TGC_FLOAT32 || w->shape.rank < 3) return TGC_OK;
    int64_t m = w->shape.dims[0].v, per = tgc_shape_numel(&w->shape) / (m > 0 ? m : 1);
    const tgc_const *bias = c->n_inputs > 2 && c->inputs[2].node >= 0 ? tgc_pass_const_of(rw, c->inputs[2]) : NULL;
    if (c->n_inputs > 2 && c->inputs[2].node >= 0 && !f32_vector(bias, m)) return TGC_OK;
    bn_params p;
    if (m <= 0 || !bn_params_of(rw, &rw->g->nodes[bn], m, &p)) return TGC_OK;
    tgc_const *w2 = tgc_pass_new_const(TGC_FLOAT32, &w->shape, w->pos);
    tgc_shape bshape = tgc_shape_of(1, &m);
    tgc_const *b2 = tgc_pass_new_const(TGC_FLOAT32, &bshape, w->pos);
    if (w2 == NULL || b2 == NULL) {
        tgc_const_free(w2);
        tgc_const_free(b2);
        return TGC_ERR_NOMEM;
    }
    const float *wv = w->data, *bv = bias != NULL ? bias->data : NULL;
    float *wo = w2->data, *bo = b2->data;
    for (int64_t j = 0; j < m; j++) {
        double f = factor(&p, j);
        for (int64_t i = 0; i < per; i++) wo[j * per + i] = (float)(wv[j * per + i] * f);
        bo[j] = (float)(((bv != NULL ? bv[j] : 0.0) - p.mean[j]) * f + p.beta[j]);
    }
    return add_fused(rw, conv, bn, c->inputs[0], w2, b2);
}

static tgc_status fold_into_gemm(tgc_rewrite *rw, int32_t gemm, int32_t bn) {
    const tgc_node *gn = &rw->g->nodes[gemm];
    const tgc_const *b = gn->n_inputs > 1 ? tgc_pass_const_of(rw, gn->inputs[1]) : NULL;
    if (b == NULL || b->dtype != TGC_FLOAT32 || b->shape.rank != 2) return TGC_OK;
    bool trans_b = tgc_pass_attr_int(gn, "transB", 0) != 0;
    int64_t k = b->shape.dims[trans_b ? 1 : 0].v, m = b->shape.dims[trans_b ? 0 : 1].v;
    const tgc_const *cc = gn->n_inputs > 2 && gn->inputs[2].node >= 0 ? tgc_pass_const_of(rw, gn->inputs[2]) : NULL;
    if (gn->n_inputs > 2 && gn->inputs[2].node >= 0) {
        int64_t numel = cc != NULL ? tgc_shape_numel(&cc->shape) : -1;
        bool row = cc != NULL && (cc->shape.rank == 1 || (cc->shape.rank == 2 && cc->shape.dims[0].v == 1));
        if (cc == NULL || cc->dtype != TGC_FLOAT32 || (numel != 1 && !(numel == m && row))) return TGC_OK;
    }
    bn_params p;
    if (m <= 0 || !bn_params_of(rw, &rw->g->nodes[bn], m, &p)) return TGC_OK;
    double beta_g = tgc_pass_attr_float(gn, "beta", 1.0);
    tgc_const *b2 = tgc_pass_new_const(TGC_FLOAT32, &b->shape, b->pos);
    tgc_shape cshape = tgc_shape_of(1, &m);
    tgc_const *c2 = tgc_pass_new_const(TGC_FLOAT32, &cshape, b->pos);
    if (b2 == NULL || c2 == NULL) {
        tgc_const_free(b2);
        tgc_const_free(c2);
        return TGC_ERR_NOMEM;
    }
    const float *bv = b->data, *cv = cc != NULL ? cc->data : NULL;
    int64_t c_numel = cc != NULL ? tgc_shape_numel(&cc->shape) : 0;
    float *bo = b2->data, *co = c2->data;
    for (int64_t j = 0; j < m; j++) {
        double f = factor(&p, j);
        for (int64_t i = 0; i < k; i++) {
            int64_t at = trans_b ? j * k + i : i * m + j;
            bo[at] = (float)(bv[at] * f);
        }
        double c = cv == NULL ? 0.0 : beta_g * cv[c_numel == 1 ? 0 : j];
        co[j] = (float)((c - p.mean[j]) * f + p.beta[j]);
    }
    tgc_status s = add_fused(rw, gemm, bn, gn->inputs[0], b2, c2);
    if (s == TGC_OK) {
        /* the fused node is the newest; beta already applied to C' */
        s = tgc_rewrite_set_attr_float(rw, rw->g->n_nodes - 1, "beta", 1.0);
    }
    return s;
}

tgc_status tgc_pass_fold_batch_norm(tgc_rewrite *rw) {
    int32_t nn = rw->g->n_nodes;
    tgc_status s = TGC_OK;
    for (int32_t i = 0; s == TGC_OK && i < nn; i++) {
        int32_t bn = rw->g->topo[i];
        const tgc_node *n = &rw->g->nodes[bn];
        if (!tgc_pass_is_op(rw, bn, "BatchNormalization") || n->n_inputs != 5 ||
            tgc_pass_attr_int(n, "training_mode", 0) != 0)
            continue;
        bool extra_read = false; /* the running statistics outputs of training mode */
        for (int k = 1; k < n->n_outputs; k++) extra_read |= tgc_rewrite_uses(rw, (tgc_ref){bn, k, {0, 0}}) > 0;
        tgc_ref x = n->inputs[0];
        if (extra_read || x.node < 0 || x.port != 0 || tgc_rewrite_uses(rw, x) != 1) continue;
        if (n->outputs[0].dtype != TGC_FLOAT32) continue;
        if (tgc_pass_is_op(rw, x.node, "Conv")) s = fold_into_conv(rw, x.node, bn);
        else if (tgc_pass_is_op(rw, x.node, "Gemm")) s = fold_into_gemm(rw, x.node, bn);
    }
    return s;
}
