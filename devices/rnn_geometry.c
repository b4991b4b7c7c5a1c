/* RNN, GRU and LSTM geometry: see rnn_geometry.h. Alphas and betas are
 * consumed in order by the functions that take them, as ONNX Runtime
 * reads activation_alpha and activation_beta. */
#include "devices/rnn_geometry.h"

#include "support/checked.h"

#include <math.h>
#include <string.h>
#include <strings.h>

typedef struct act_info {
    const char *name;
    tgc_rnn_act_kind kind;
    bool has_alpha, has_beta;
    float alpha, beta; /* ONNX's defaults for the operator of that name */
} act_info;

static const act_info act_table[] = {
    {"Relu", TGC_RNN_RELU, false, false, 0, 0},
    {"Tanh", TGC_RNN_TANH, false, false, 0, 0},
    {"Sigmoid", TGC_RNN_SIGMOID, false, false, 0, 0},
    {"Affine", TGC_RNN_AFFINE, true, true, 1.0f, 0.0f},
    {"LeakyRelu", TGC_RNN_LEAKY_RELU, true, false, 0.01f, 0},
    {"ThresholdedRelu", TGC_RNN_THRESHOLDED_RELU, true, false, 1.0f, 0},
    {"ScaledTanh", TGC_RNN_SCALED_TANH, true, true, 1.0f, 1.0f},
    {"HardSigmoid", TGC_RNN_HARD_SIGMOID, true, true, 0.2f, 0.5f},
    {"Elu", TGC_RNN_ELU, true, false, 1.0f, 0},
    {"Softsign", TGC_RNN_SOFTSIGN, false, false, 0, 0},
    {"Softplus", TGC_RNN_SOFTPLUS, false, false, 0, 0},
};

float tgc_rnn_act_apply(const tgc_rnn_act *a, float x) {
    switch (a->kind) {
    case TGC_RNN_RELU: return x < 0 ? 0 : x;
    case TGC_RNN_TANH: return tanhf(x);
    case TGC_RNN_SIGMOID: return x >= 0 ? 1 / (1 + expf(-x)) : expf(x) / (1 + expf(x));
    case TGC_RNN_AFFINE: return a->alpha * x + a->beta;
    case TGC_RNN_LEAKY_RELU: return x < 0 ? a->alpha * x : x;
    case TGC_RNN_THRESHOLDED_RELU: return x > a->alpha ? x : 0;
    case TGC_RNN_SCALED_TANH: return a->alpha * tanhf(a->beta * x);
    case TGC_RNN_HARD_SIGMOID: return fmaxf(0, fminf(1, a->alpha * x + a->beta));
    case TGC_RNN_ELU: return x < 0 ? a->alpha * expm1f(x) : x;
    case TGC_RNN_SOFTSIGN: return x / (1 + fabsf(x));
    case TGC_RNN_SOFTPLUS: return x > 20 ? x : log1pf(expf(x));
    }
    return x;
}

/* The default functions of a direction: RNN Tanh; GRU Sigmoid, Tanh;
 * LSTM Sigmoid, Tanh, Tanh. */
static tgc_rnn_act_kind default_kind(int gates, int i) {
    if (gates == 1) return TGC_RNN_TANH;
    return i == 0 ? TGC_RNN_SIGMOID : TGC_RNN_TANH;
}

static tgc_status read_activations(tgc_kernel_ctx *c, tgc_rnn_geometry *g) {
    const tgc_attr *names = tgc_node_attr(c->node, "activations");
    const tgc_attr *alphas = tgc_node_attr(c->node, "activation_alpha");
    const tgc_attr *betas = tgc_node_attr(c->node, "activation_beta");
    size_t ia = 0, ib = 0;
    int n = g->functions * g->dirs;
    if (names != NULL && names->n != (size_t)n) return tgc_kernel_fail(c, "'activations' needs %d names", n);
    for (int i = 0; i < n; i++) {
        const act_info *info = NULL;
        for (size_t k = 0; k < sizeof act_table / sizeof act_table[0] && info == NULL; k++)
            if (names != NULL ? strcasecmp(names->strings[i], act_table[k].name) == 0
                              : act_table[k].kind == default_kind(g->gates, i % g->functions))
                info = &act_table[k];
        if (info == NULL) return tgc_kernel_fail(c, "unknown activation \"%s\"", names->strings[i]);
        g->f[i] = (tgc_rnn_act){info->kind, info->alpha, info->beta};
        if (info->has_alpha && alphas != NULL && ia < alphas->n) g->f[i].alpha = (float)alphas->floats[ia++];
        if (info->has_beta && betas != NULL && ib < betas->n) g->f[i].beta = (float)betas->floats[ib++];
    }
    return TGC_OK;
}

tgc_status tgc_rnn_geometry_read(tgc_kernel_ctx *c, int gates, tgc_rnn_geometry *g) {
    memset(g, 0, sizeof *g);
    g->gates = gates;
    g->functions = gates == 1 ? 1 : gates == 3 ? 2 : 3;
    const char *direction = tgc_kernel_attr_string(c, "direction", "forward");
    g->dirs = strcmp(direction, "bidirectional") == 0 ? 2 : 1;
    g->reverse_only = strcmp(direction, "reverse") == 0;
    g->batch_first = tgc_kernel_attr_int(c, "layout", 0) == 1;
    g->linear_before_reset = gates == 3 && tgc_kernel_attr_int(c, "linear_before_reset", 0) != 0;
    g->input_forget = gates == 4 && tgc_kernel_attr_int(c, "input_forget", 0) != 0;
    g->clip = (float)tgc_kernel_attr_float(c, "clip", 0);
    if (g->clip < 0) return tgc_kernel_fail(c, "'clip' is negative");
    if (c->n_inputs < 3) return tgc_kernel_fail(c, "needs X, W and R");
    const tgc_value *x = &c->inputs[0], *w = &c->inputs[1], *r = &c->inputs[2];
    if (x->rank != 3 || w->rank != 3 || r->rank != 3) return tgc_kernel_fail(c, "X, W and R must have rank 3");
    g->seq = x->dims[g->batch_first ? 1 : 0];
    g->batch = x->dims[g->batch_first ? 0 : 1];
    g->input = x->dims[2];
    g->hidden = r->dims[2];
    int64_t gh;
    if (!tgc_checked_mul_i64(gates, g->hidden, &gh) || r->dims[0] != g->dirs || r->dims[1] != gh ||
        w->dims[0] != g->dirs || w->dims[1] != gh || w->dims[2] != g->input)
        return tgc_kernel_fail(c, "W or R does not match X and hidden_size %lld", (long long)g->hidden);
    return read_activations(c, g);
}
