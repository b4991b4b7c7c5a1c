/* Type and shape inference of NegativeLogLikelihoodLoss-13 and
 * SoftmaxCrossEntropyLoss-13 (graph/ops_loss.c), against the ONNX
 * operator specification: X [N, C, d1, ..., dk], target [N, d1, ..., dk],
 * weight [C]; the loss [N, d1, ..., dk] with reduction "none", a scalar
 * with "sum" and "mean" (the default); log_prob X's shape; every output
 * X's dtype. Then the errors, each at the input or attribute at fault. */
#include "graph/ops.h"
#include "tests/graph/infer_fixture.h"

static void test_loss_shapes(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 5, H, 7");
    fx_input(&f, "t", TGC_INT64, "N, 6, W");
    fx_input(&f, "w", TGC_FLOAT32, "5");
    fx_input(&f, "x16", TGC_FLOAT16, "N, 5");
    fx_input(&f, "t32", TGC_INT32, "N");
    fx_input(&f, "xu", TGC_FLOAT32, "?");
    /* none: [N, d1, d2], the target's 6 and X's 7 filling in H and W */
    int32_t none = fx_op(&f, "none", "NegativeLogLikelihoodLoss", "x, t, w", 1);
    fx_attr_string(&f, none, "reduction", "none");
    fx_attr_int(&f, none, "ignore_index", -100);
    FX_OK(&f, none);
    FX_OUT(&f, none, 0, TGC_FLOAT32, "[N, 6, 7]");
    int32_t mean = fx_op(&f, "mean", "NegativeLogLikelihoodLoss", "x, t", 1);
    FX_OK(&f, mean);
    FX_OUT(&f, mean, 0, TGC_FLOAT32, "[]");
    int32_t sce = fx_op(&f, "sce", "SoftmaxCrossEntropyLoss", "x16, t32", 2);
    fx_attr_string(&f, sce, "reduction", "sum");
    FX_OK(&f, sce);
    FX_OUT(&f, sce, 0, TGC_FLOAT16, "[]");
    FX_OUT(&f, sce, 1, TGC_FLOAT16, "[N, 5]");
    int32_t sce_none = fx_op(&f, "sce_none", "SoftmaxCrossEntropyLoss", "x, t, w", 2);
    fx_attr_string(&f, sce_none, "reduction", "none");
    FX_OK(&f, sce_none);
    FX_OUT(&f, sce_none, 0, TGC_FLOAT32, "[N, 6, 7]");
    FX_OUT(&f, sce_none, 1, TGC_FLOAT32, "[N, 5, H, 7]");
    /* X of unknown rank: the loss takes the target's shape */
    int32_t unk = fx_op(&f, "unk", "NegativeLogLikelihoodLoss", "xu, t", 1);
    fx_attr_string(&f, unk, "reduction", "none");
    FX_OK(&f, unk);
    FX_OUT(&f, unk, 0, TGC_FLOAT32, "[N, 6, W]");
    fx_end(&f);
}

static void test_loss_errors(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "4, 5, 3");
    fx_input(&f, "x1", TGC_FLOAT32, "5");
    fx_input(&f, "t", TGC_INT64, "4, 3");
    fx_input(&f, "t_short", TGC_INT64, "4");
    fx_input(&f, "t_dim", TGC_INT64, "4, 2");
    fx_input(&f, "t_scalar", TGC_INT64, "");
    fx_input(&f, "t_float", TGC_FLOAT32, "4, 3");
    fx_input(&f, "w6", TGC_FLOAT32, "6");
    fx_input(&f, "w16", TGC_FLOAT16, "5");
    fx_input(&f, "xi", TGC_INT32, "4, 5, 3");
    int32_t red = fx_op(&f, "red", "NegativeLogLikelihoodLoss", "x, t", 1);
    fx_attr_string(&f, red, "reduction", "average");
    FX_FAILS(&f, red, -1, "bad-attribute", "attribute 'reduction' is 'average'");
    int32_t rank1 = fx_op(&f, "rank1", "SoftmaxCrossEntropyLoss", "x1, t_short", 1);
    FX_FAILS(&f, rank1, 0, "shape-mismatch", "input 0 has shape [5]");
    int32_t short_t = fx_op(&f, "short_t", "NegativeLogLikelihoodLoss", "x, t_short", 1);
    FX_FAILS(&f, short_t, 1, "shape-mismatch", "input 1 (target) has shape [4]");
    int32_t dim_t = fx_op(&f, "dim_t", "SoftmaxCrossEntropyLoss", "x, t_dim", 1);
    FX_FAILS(&f, dim_t, 1, "shape-mismatch", "must be [N, d1, ..., dk] = [4, 3]");
    int32_t scalar_t = fx_op(&f, "scalar_t", "NegativeLogLikelihoodLoss", "x, t_scalar", 1);
    FX_FAILS(&f, scalar_t, 1, "shape-mismatch", "input 1 (target) is a scalar");
    int32_t float_t = fx_op(&f, "float_t", "NegativeLogLikelihoodLoss", "x, t_float", 1);
    FX_FAILS(&f, float_t, 1, "dtype-mismatch", "input 1 is float32");
    int32_t w_shape = fx_op(&f, "w_shape", "SoftmaxCrossEntropyLoss", "x, t, w6", 1);
    FX_FAILS(&f, w_shape, 2, "shape-mismatch", "input 2 (weight) has shape [6]");
    int32_t w_dtype = fx_op(&f, "w_dtype", "NegativeLogLikelihoodLoss", "x, t, w16", 1);
    FX_FAILS(&f, w_dtype, 2, "dtype-mismatch", "input 2 is float16 but input 0 is float32");
    int32_t int_x = fx_op(&f, "int_x", "NegativeLogLikelihoodLoss", "xi, t", 1);
    FX_FAILS(&f, int_x, 0, "dtype-mismatch", "input 0 is int32");
    fx_end(&f);
}

TGC_TEST_MAIN("graph/infer_loss", {"loss_shapes", test_loss_shapes}, {"loss_errors", test_loss_errors})
