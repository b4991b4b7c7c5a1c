/* Signal ops (ONNX opset 17): HannWindow, HammingWindow, BlackmanWindow,
 * DFT, STFT and MelWeightMatrix. Their output sizes come from the values of
 * small integer inputs (a window's size, dft_length, frame_step...), which
 * live in host memory: known at compile time when constant, else a fresh
 * dim that the executor resolves from the run-time values. */
#include "graph/ops.h"
#include "support/checked.h"

#define SHAPE(c, s, buf) tgc_infer_shape_str((c), (s), (buf), sizeof(buf))

/* Checks that input i (omitted is fine) is an int32/int64 scalar (rank 0,
 * or one element) and reads its value into *v when known (*known). */
static bool int_scalar(tgc_infer_ctx *c, int i, const char *what, int64_t *v, bool *known) {
    *known = false;
    const tgc_tensor_info *in = tgc_infer_input(c, i);
    if (in == NULL) return true;
    if (!tgc_infer_require_int(c, i)) return false;
    if (in->shape.rank > 1 || (in->shape.rank == 1 && !tgc_dim_is(in->shape.dims[0], 1))) {
        char s[TGC_OPS_SHAPE_BUF];
        tgc_infer_fail(c, i, "shape-mismatch", "input %d (%s) has shape %s; it must be a scalar", i, what,
                       SHAPE(c, &in->shape, s));
        return false;
    }
    int n;
    *known = tgc_infer_input_concrete_value(c, i, v, 1, &n) && n == 1;
    return true;
}

/* The dtype of attribute output_datatype (an ONNX type code, default 1:
 * float32) in *t; reports "bad-attribute" for a code tgc does not have or
 * that is not numeric. */
static tgc_status output_datatype(tgc_infer_ctx *c, tgc_dtype *t) {
    int64_t code = tgc_infer_attr_int(c, "output_datatype", 1);
    *t = tgc_dtype_from_onnx(code);
    if (*t == TGC_DTYPE_INVALID || *t == TGC_BOOL)
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'output_datatype' is %lld; tgc makes a numeric "
                              "type it has (1 float32, 10 float16, 6 int32, 7 int64, 2 uint8)", (long long)code);
    return TGC_OK;
}

/* ---- Windows ----------------------------------------------------------------- */

/* HannWindow-17, HammingWindow-17, BlackmanWindow-17: size (int32/int64
 * scalar) -> a 1-D window of `size` values of output_datatype; periodic
 * (default 1) picks the periodic or the symmetric form. */
static tgc_status infer_window(tgc_infer_ctx *c) {
    int64_t size;
    bool known;
    if (!int_scalar(c, 0, "size", &size, &known)) return TGC_ERR_INVALID;
    tgc_dtype t;
    tgc_status st = output_datatype(c, &t);
    if (st != TGC_OK) return st;
    int64_t periodic = tgc_infer_attr_int(c, "periodic", 1);
    if (periodic != 0 && periodic != 1)
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'periodic' is %lld; it must be 0 or 1",
                              (long long)periodic);
    if (known && size < 0)
        return tgc_infer_fail(c, 0, "bad-input", "the window size is %lld; it must be >= 0", (long long)size);
    tgc_shape out = {.rank = 1, .dims = {known ? tgc_dim_of(size) : tgc_infer_fresh_dim(c)}};
    return tgc_infer_set_output(c, 0, t, &out);
}

static const tgc_attr_def window_attrs[] = {
    {"output_datatype", TGC_ATTR_INT, false}, {"periodic", TGC_ATTR_INT, false}, {NULL, 0, false}};

const tgc_op_def tgc_op_HannWindow = {"HannWindow", 1, 1, 1, 1, window_attrs, infer_window};
const tgc_op_def tgc_op_HammingWindow = {"HammingWindow", 1, 1, 1, 1, window_attrs, infer_window};
const tgc_op_def tgc_op_BlackmanWindow = {"BlackmanWindow", 1, 1, 1, 1, window_attrs, infer_window};

/* ---- DFT ------------------------------------------------------------------------ */

/* DFT-17: input [batch, n1, ..., nk, 1 or 2] (real, or complex as (re, im)
 * pairs), float32 or float16, rank >= 3 (the last axis is the pair; `axis`,
 * default 1, in [-r, r - 1) after normalising negative ones against r,
 * is the transformed axis and may not be the last); optional dft_length
 * (scalar; default the axis's size). Output: the input's shape with the
 * last axis 2 and the transformed axis dft_length, or dft_length / 2 + 1
 * when onesided (forward). inverse with onesided is the inverse of a
 * onesided transform: real output, the last axis 1. */
static tgc_status infer_dft(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    if (!tgc_ops_require_dtypes(c, 0, TGC_DT_FLOAT)) return TGC_ERR_INVALID;
    int64_t n;
    bool known;
    if (!int_scalar(c, 1, "dft_length", &n, &known)) return TGC_ERR_INVALID;
    if (known && n < 1)
        return tgc_infer_fail(c, 1, "bad-input", "dft_length is %lld; it must be >= 1", (long long)n);
    int64_t inverse = tgc_infer_attr_int(c, "inverse", 0), onesided = tgc_infer_attr_int(c, "onesided", 0);
    if ((inverse != 0 && inverse != 1) || (onesided != 0 && onesided != 1))
        return tgc_infer_fail(c, -1, "bad-attribute", "attributes 'inverse' and 'onesided' must be 0 or 1");
    tgc_shape out = {.rank = TGC_RANK_UNKNOWN};
    if (x->shape.rank < 0) return tgc_infer_set_output(c, 0, x->dtype, &out);
    int r = x->shape.rank;
    char sx[TGC_OPS_SHAPE_BUF];
    tgc_dim last = r >= 1 ? x->shape.dims[r - 1] : tgc_dim_of(0);
    if (r < 2 || (tgc_dim_known(last) && last.v != 1 && last.v != 2))
        return tgc_infer_fail(c, 0, "shape-mismatch", "input 0 has shape %s; DFT needs [batch, ..., 1 or 2] (real "
                              "or complex values)", SHAPE(c, &x->shape, sx));
    int64_t axis = tgc_infer_attr_int(c, "axis", 1);
    if (axis < -r || axis >= r - 1 || axis == -1)
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'axis' is %lld; for input %s it must be in "
                              "[%d, %d) and not the last axis", (long long)axis, SHAPE(c, &x->shape, sx), -r, r - 1);
    int ax = (int)(axis < 0 ? axis + r : axis);
    out = x->shape;
    tgc_dim len = x->shape.dims[ax];
    if (inverse && onesided) { /* default length 2 * (m - 1) */
        if (known) out.dims[ax] = tgc_dim_of(n);
        else if (tgc_dim_known(len)) out.dims[ax] = tgc_dim_of(len.v > 0 ? 2 * (len.v - 1) : 0);
        else out.dims[ax] = tgc_infer_fresh_dim(c);
        out.dims[r - 1] = tgc_dim_of(1);
        return tgc_infer_set_output(c, 0, x->dtype, &out);
    }
    tgc_dim full = known ? tgc_dim_of(n) : len;
    if (onesided) full = tgc_dim_known(full) ? tgc_dim_of(full.v / 2 + 1) : tgc_infer_fresh_dim(c);
    out.dims[ax] = full;
    out.dims[r - 1] = tgc_dim_of(2);
    return tgc_infer_set_output(c, 0, x->dtype, &out);
}

static const tgc_attr_def dft_attrs[] = {{"axis", TGC_ATTR_INT, false},
                                         {"inverse", TGC_ATTR_INT, false},
                                         {"onesided", TGC_ATTR_INT, false},
                                         {NULL, 0, false}};

const tgc_op_def tgc_op_DFT = {"DFT", 1, 2, 1, 1, dft_attrs, infer_dft};

/* ---- STFT ----------------------------------------------------------------------- */

/* STFT-17: signal [batch, length, 1 or 2] float32 or float16 (the window too), frame_step (scalar
 * >= 1), optional window [window_length], optional frame_length (scalar;
 * the window's length or, without either, the signal's). Output [batch,
 * frames, bins, 2] with frames = 1 + (length - frame_length) / frame_step
 * and bins = frame_length / 2 + 1 when onesided (default 1), else
 * frame_length. */
static tgc_status infer_stft(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0), *w = tgc_infer_input(c, 2);
    if (!tgc_ops_require_dtypes(c, 0, TGC_DT_FLOAT) || !tgc_infer_require_same_dtype(c, 0, 2))
        return TGC_ERR_INVALID;
    int64_t step, flen;
    bool step_known, flen_known;
    if (!int_scalar(c, 1, "frame_step", &step, &step_known) || !int_scalar(c, 3, "frame_length", &flen, &flen_known))
        return TGC_ERR_INVALID;
    if (step_known && step < 1)
        return tgc_infer_fail(c, 1, "bad-input", "frame_step is %lld; it must be >= 1", (long long)step);
    int64_t onesided = tgc_infer_attr_int(c, "onesided", 1);
    if (onesided != 0 && onesided != 1)
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'onesided' is %lld; it must be 0 or 1",
                              (long long)onesided);
    char s[TGC_OPS_SHAPE_BUF];
    if (x->shape.rank >= 0 && (x->shape.rank != 3 || (tgc_dim_known(x->shape.dims[2]) && x->shape.dims[2].v != 1 &&
                                                      x->shape.dims[2].v != 2)))
        return tgc_infer_fail(c, 0, "shape-mismatch", "input 0 (signal) has shape %s; it must be [batch, length, 1 "
                              "or 2]", SHAPE(c, &x->shape, s));
    if (w != NULL && w->shape.rank >= 0 && w->shape.rank != 1)
        return tgc_infer_fail(c, 2, "shape-mismatch", "input 2 (window) has shape %s; it must be 1-D",
                              SHAPE(c, &w->shape, s));
    /* frame_length: the input, else the window's length, else the signal's. */
    tgc_dim fl;
    if (tgc_infer_input(c, 3) != NULL) fl = flen_known ? tgc_dim_of(flen) : tgc_infer_fresh_dim(c);
    else if (w != NULL) fl = w->shape.rank == 1 ? w->shape.dims[0] : tgc_infer_fresh_dim(c);
    else fl = x->shape.rank == 3 ? x->shape.dims[1] : tgc_infer_fresh_dim(c);
    tgc_dim merged;
    if (w != NULL && w->shape.rank == 1 && !tgc_ops_dim_merge(w->shape.dims[0], fl, &merged))
        return tgc_infer_fail(c, 2, "shape-mismatch", "the window has %lld values but frame_length is %lld",
                              (long long)w->shape.dims[0].v, (long long)fl.v);
    if (tgc_dim_known(fl) && fl.v < 1)
        return tgc_infer_fail(c, 3, "bad-input", "frame_length is %lld; it must be >= 1", (long long)fl.v);
    tgc_shape out = {.rank = 4};
    out.dims[0] = x->shape.rank == 3 ? x->shape.dims[0] : tgc_infer_fresh_dim(c);
    tgc_dim len = x->shape.rank == 3 ? x->shape.dims[1] : tgc_dim_of(-1);
    if (tgc_dim_known(len) && len.v >= 0 && tgc_dim_known(fl) && step_known) {
        if (len.v < fl.v)
            return tgc_infer_fail(c, 0, "shape-mismatch", "the signal has %lld samples, fewer than a frame (%lld)",
                                  (long long)len.v, (long long)fl.v);
        out.dims[1] = tgc_dim_of(1 + (len.v - fl.v) / step);
    } else {
        out.dims[1] = tgc_infer_fresh_dim(c);
    }
    out.dims[2] = !tgc_dim_known(fl) ? tgc_infer_fresh_dim(c) : tgc_dim_of(onesided ? fl.v / 2 + 1 : fl.v);
    out.dims[3] = tgc_dim_of(2);
    return tgc_infer_set_output(c, 0, x->dtype, &out);
}

static const tgc_attr_def stft_attrs[] = {{"onesided", TGC_ATTR_INT, false}, {NULL, 0, false}};

const tgc_op_def tgc_op_STFT = {"STFT", 2, 4, 1, 1, stft_attrs, infer_stft};

/* ---- MelWeightMatrix ------------------------------------------------------------- */

/* MelWeightMatrix-17: num_mel_bins, dft_length, sample_rate (int scalars),
 * lower_edge_hertz, upper_edge_hertz (float scalars) -> [dft_length / 2
 * + 1, num_mel_bins] of output_datatype (default float32). */
static tgc_status infer_mel_weight_matrix(tgc_infer_ctx *c) {
    static const char *const names[] = {"num_mel_bins", "dft_length", "sample_rate"};
    int64_t v[3];
    bool known[3];
    for (int i = 0; i < 3; i++)
        if (!int_scalar(c, i, names[i], &v[i], &known[i])) return TGC_ERR_INVALID;
    if (!tgc_ops_require_dtypes(c, 3, TGC_DT_FLOAT) || !tgc_infer_require_same_dtype(c, 3, 4))
        return TGC_ERR_INVALID;
    tgc_dtype t;
    tgc_status st = output_datatype(c, &t);
    if (st != TGC_OK) return st;
    for (int i = 0; i < 3; i++)
        if (known[i] && v[i] < (i == 0 ? 0 : 1))
            return tgc_infer_fail(c, i, "bad-input", "%s is %lld; it must be >= %d", names[i], (long long)v[i],
                                  i == 0 ? 0 : 1);
    tgc_shape out = {.rank = 2,
                     .dims = {known[1] ? tgc_dim_of(v[1] / 2 + 1) : tgc_infer_fresh_dim(c),
                              known[0] ? tgc_dim_of(v[0]) : tgc_infer_fresh_dim(c)}};
    return tgc_infer_set_output(c, 0, t, &out);
}

static const tgc_attr_def mel_attrs[] = {{"output_datatype", TGC_ATTR_INT, false}, {NULL, 0, false}};

const tgc_op_def tgc_op_MelWeightMatrix = {"MelWeightMatrix", 5, 5, 1, 1, mel_attrs, infer_mel_weight_matrix};
