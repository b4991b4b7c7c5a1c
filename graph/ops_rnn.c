/* Recurrent layers (ONNX opset 14): RNN, GRU and LSTM share one signature
 *     X [seq, batch, input]      (layout 1: [batch, seq, input])
 *     W [dirs, G*hidden, input]  R [dirs, G*hidden, hidden]
 *     B [dirs, 2*G*hidden]       (optional: Wb then Rb)
 *     sequence_lens [batch]      (optional, int32)
 *     initial_h [dirs, batch, hidden]  (layout 1: [batch, dirs, hidden])
 *     LSTM only: initial_c (like initial_h), P [dirs, 3*hidden] (peepholes)
 * with G gates (RNN 1, GRU 3, LSTM 4) and dirs 2 for direction
 * "bidirectional", else 1. Outputs Y [seq, dirs, batch, hidden] (layout 1:
 * [batch, seq, dirs, hidden]), Y_h (and LSTM's Y_c) shaped like initial_h.
 * hidden_size defaults to R's last dim; `activations` lists one name per
 * gate function per direction (RNN f; GRU f, g; LSTM f, g, h).
 * tgc's _RNNHalfWeight, _GRUHalfWeight and _LSTMHalfWeight are the same
 * with W and R in half precision (infer_rnn). */
#include "graph/ops.h"

#include "support/checked.h"

#include <string.h>
#include <strings.h>

#define DT_RNN TGC_DT_FLOAT

typedef struct rnn_kind {
    int gates;       /* G */
    int functions;   /* activation functions a direction */
    int max_inputs;  /* 6, or 8 for LSTM */
} rnn_kind;

static const rnn_kind kind_rnn = {1, 1, 6}, kind_gru = {3, 2, 6}, kind_lstm = {4, 3, 8};

/* The activation names an RNN may use (ONNX's RNN operator list). */
static const char *const activation_names[] = {"Relu",      "Tanh",        "Sigmoid",  "Affine",   "LeakyRelu",
                                               "ThresholdedRelu", "ScaledTanh", "HardSigmoid", "Elu", "Softsign",
                                               "Softplus"};

static bool known_activation(const char *name) {
    for (size_t i = 0; i < sizeof activation_names / sizeof activation_names[0]; i++)
        if (strcasecmp(name, activation_names[i]) == 0) return true;
    return false;
}

/* Checks that input i (when given and of known rank) has rank 3 or `rank`
 * and that its dims equal want[] where both are known. */
static tgc_status expect_dims(tgc_infer_ctx *c, int i, const char *what, int rank, const tgc_dim *want) {
    const tgc_tensor_info *t = tgc_infer_input(c, i);
    if (t == NULL || t->shape.rank < 0) return TGC_OK;
    char buf[TGC_OPS_SHAPE_BUF];
    if (t->shape.rank != rank)
        return tgc_infer_fail(c, i, "shape-mismatch", "%s has shape %s; it must have rank %d", what,
                              tgc_infer_shape_str(c, &t->shape, buf, sizeof buf), rank);
    for (int d = 0; d < rank; d++) {
        tgc_dim merged;
        if (!tgc_ops_dim_merge(t->shape.dims[d], want[d], &merged))
            return tgc_infer_fail(c, i, "shape-mismatch", "%s has shape %s; dim %d must be %lld", what,
                                  tgc_infer_shape_str(c, &t->shape, buf, sizeof buf), d, (long long)want[d].v);
    }
    return TGC_OK;
}

/* k * hidden as a dim (unknown stays symbolic); false on overflow. */
static bool times_hidden(tgc_infer_ctx *c, int64_t k, tgc_dim hidden, tgc_dim *out) {
    if (!tgc_dim_known(hidden)) {
        *out = tgc_infer_fresh_dim(c);
        return true;
    }
    int64_t v;
    if (!tgc_checked_mul_i64(k, hidden.v, &v)) return false;
    *out = tgc_dim_of(v);
    return true;
}

/* half_weight: tgc's _RNNHalfWeight, _GRUHalfWeight and _LSTMHalfWeight,
 * whose W and R are float16 or bfloat16 (both the same), X and the rest
 * float32: the op over Cast(W) and Cast(R), the weights kept narrow. */
static tgc_status infer_rnn(tgc_infer_ctx *c, const rnn_kind *k, bool half_weight) {
    if (half_weight &&
        (!tgc_ops_require_dtypes(c, 0, TGC_DT(TGC_FLOAT32)) ||
         !tgc_ops_require_dtypes(c, 1, TGC_DT(TGC_FLOAT16) | TGC_DT(TGC_BFLOAT16)) ||
         !tgc_infer_require_same_dtype(c, 1, 2)))
        return TGC_ERR_INVALID;
    for (int i = 0; i < tgc_infer_num_inputs(c) && i < k->max_inputs; i++) {
        if (half_weight && (i == 1 || i == 2)) continue;
        if (i == 4) {
            if (tgc_infer_input(c, 4) != NULL && !tgc_infer_require_dtype(c, 4, TGC_INT32)) return TGC_ERR_INVALID;
        } else if (tgc_infer_input(c, i) != NULL) {
            if (!tgc_ops_require_dtypes(c, i, DT_RNN) || !tgc_infer_require_same_dtype(c, 0, i))
                return TGC_ERR_INVALID;
        }
    }
    if (tgc_infer_num_inputs(c) > k->max_inputs)
        return tgc_infer_fail(c, -1, "bad-input", "%d inputs; this op takes at most %d", tgc_infer_num_inputs(c),
                              k->max_inputs);
    const char *direction = tgc_infer_attr_string(c, "direction", "forward");
    int dirs = strcmp(direction, "bidirectional") == 0 ? 2 : 1;
    if (dirs == 1 && strcmp(direction, "forward") != 0 && strcmp(direction, "reverse") != 0)
        return tgc_infer_fail(c, -1, "bad-attribute",
                              "attribute 'direction' is \"%s\"; it must be forward, reverse or bidirectional",
                              direction);
    int64_t layout = tgc_infer_attr_int(c, "layout", 0);
    if (layout != 0 && layout != 1)
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'layout' is %lld; it must be 0 or 1",
                              (long long)layout);
    const char **acts = NULL;
    size_t n_acts = 0;
    const tgc_attr *a = tgc_infer_attr(c, "activations");
    if (a != NULL && a->type == TGC_ATTR_STRINGS) {
        acts = (const char **)a->strings;
        n_acts = a->n;
    }
    if (n_acts != 0 && n_acts != (size_t)(k->functions * dirs))
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'activations' has %zu names; this op needs %d",
                              n_acts, k->functions * dirs);
    for (size_t i = 0; i < n_acts; i++)
        if (!known_activation(acts[i]))
            return tgc_infer_fail(c, -1, "bad-attribute", "activation \"%s\" is not one ONNX's RNN ops know",
                                  acts[i]);
    if (tgc_infer_attr_int(c, "hidden_size", 1) <= 0)
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'hidden_size' must be positive");

    const tgc_tensor_info *x = tgc_infer_input(c, 0), *r = tgc_infer_input(c, 2);
    tgc_dim seq, batch, input;
    if (x->shape.rank < 0) {
        seq = tgc_infer_fresh_dim(c);
        batch = tgc_infer_fresh_dim(c);
        input = tgc_infer_fresh_dim(c);
    } else {
        if (x->shape.rank != 3) {
            char buf[TGC_OPS_SHAPE_BUF];
            return tgc_infer_fail(c, 0, "shape-mismatch", "X has shape %s; it must have rank 3",
                                  tgc_infer_shape_str(c, &x->shape, buf, sizeof buf));
        }
        seq = x->shape.dims[layout ? 1 : 0];
        batch = x->shape.dims[layout ? 0 : 1];
        input = x->shape.dims[2];
    }
    tgc_dim hidden;
    if (tgc_infer_attr(c, "hidden_size") != NULL) hidden = tgc_dim_of(tgc_infer_attr_int(c, "hidden_size", 1));
    else if (r->shape.rank == 3) hidden = r->shape.dims[2];
    else hidden = tgc_infer_fresh_dim(c);
    tgc_dim gh, bh, ph;
    if (!times_hidden(c, k->gates, hidden, &gh) || !times_hidden(c, 2 * k->gates, hidden, &bh) ||
        !times_hidden(c, 3, hidden, &ph))
        return tgc_infer_fail(c, -1, "size-overflow", "hidden_size %lld times the gates does not fit in int64",
                              (long long)hidden.v);
    tgc_dim d = tgc_dim_of(dirs);
    tgc_status st;
    if ((st = expect_dims(c, 1, "W", 3, (tgc_dim[]){d, gh, input})) != TGC_OK) return st;
    if ((st = expect_dims(c, 2, "R", 3, (tgc_dim[]){d, gh, hidden})) != TGC_OK) return st;
    if ((st = expect_dims(c, 3, "B", 2, (tgc_dim[]){d, bh})) != TGC_OK) return st;
    if ((st = expect_dims(c, 4, "sequence_lens", 1, (tgc_dim[]){batch})) != TGC_OK) return st;
    tgc_dim state[3] = {d, batch, hidden};
    if (layout) state[0] = batch, state[1] = d;
    if ((st = expect_dims(c, 5, "initial_h", 3, state)) != TGC_OK) return st;
    if (k->max_inputs > 6) {
        if ((st = expect_dims(c, 6, "initial_c", 3, state)) != TGC_OK) return st;
        if ((st = expect_dims(c, 7, "P", 2, (tgc_dim[]){d, ph})) != TGC_OK) return st;
    }
    tgc_shape y = {.rank = 4, .dims = {seq, d, batch, hidden}};
    if (layout) y = (tgc_shape){.rank = 4, .dims = {batch, seq, d, hidden}};
    tgc_shape h = {.rank = 3, .dims = {state[0], state[1], state[2]}};
    if ((st = tgc_infer_set_output(c, 0, x->dtype, &y)) != TGC_OK) return st;
    if ((st = tgc_infer_set_output(c, 1, x->dtype, &h)) != TGC_OK) return st;
    return tgc_infer_set_output(c, 2, x->dtype, &h);
}

static tgc_status infer_rnn_simple(tgc_infer_ctx *c) { return infer_rnn(c, &kind_rnn, false); }
static tgc_status infer_gru(tgc_infer_ctx *c) { return infer_rnn(c, &kind_gru, false); }
static tgc_status infer_lstm(tgc_infer_ctx *c) { return infer_rnn(c, &kind_lstm, false); }
static tgc_status infer_rnn_half(tgc_infer_ctx *c) { return infer_rnn(c, &kind_rnn, true); }
static tgc_status infer_gru_half(tgc_infer_ctx *c) { return infer_rnn(c, &kind_gru, true); }
static tgc_status infer_lstm_half(tgc_infer_ctx *c) { return infer_rnn(c, &kind_lstm, true); }

#define RNN_COMMON_ATTRS                                                                                           \
    {"activation_alpha", TGC_ATTR_FLOATS, false}, {"activation_beta", TGC_ATTR_FLOATS, false},                    \
        {"activations", TGC_ATTR_STRINGS, false}, {"clip", TGC_ATTR_FLOAT, false},                                \
        {"direction", TGC_ATTR_STRING, false}, {"hidden_size", TGC_ATTR_INT, false},                              \
        {"layout", TGC_ATTR_INT, false}

static const tgc_attr_def rnn_attrs[] = {RNN_COMMON_ATTRS, {NULL, 0, false}};
static const tgc_attr_def gru_attrs[] = {RNN_COMMON_ATTRS, {"linear_before_reset", TGC_ATTR_INT, false},
                                         {NULL, 0, false}};
static const tgc_attr_def lstm_attrs[] = {RNN_COMMON_ATTRS, {"input_forget", TGC_ATTR_INT, false},
                                          {NULL, 0, false}};

const tgc_op_def tgc_op_RNN = {"RNN", 3, 6, 1, 2, rnn_attrs, infer_rnn_simple};
const tgc_op_def tgc_op_GRU = {"GRU", 3, 6, 1, 2, gru_attrs, infer_gru};
const tgc_op_def tgc_op_LSTM = {"LSTM", 3, 8, 1, 3, lstm_attrs, infer_lstm};
const tgc_op_def tgc_op__RNNHalfWeight = {"_RNNHalfWeight", 3, 6, 1, 2, rnn_attrs, infer_rnn_half};
const tgc_op_def tgc_op__GRUHalfWeight = {"_GRUHalfWeight", 3, 6, 1, 2, gru_attrs, infer_gru_half};
const tgc_op_def tgc_op__LSTMHalfWeight = {"_LSTMHalfWeight", 3, 8, 1, 3, lstm_attrs, infer_lstm_half};
