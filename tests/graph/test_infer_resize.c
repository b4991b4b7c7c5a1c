/* Inference of Resize, GridSample, RoiAlign and NonMaxSuppression (graph/
 * ops_resize.c, graph/ops_detection.c): output shapes from the ONNX
 * operator specification (Resize-19: floor(dim * scale), sizes as given or
 * rounded half up under keep_aspect_ratio_policy; derivations beside each
 * case), symbols where values are known only at run time, and errors. */
#include "graph/ops.h"
#include "tests/graph/infer_fixture.h"

/* A float32 1-D initializer holding v[0..n) (its data, as the loader
 * stores it: scales are read from there). */
static int32_t fx_floats(fx *f, const char *name, const float *v, int n) {
    char shape[16];
    snprintf(shape, sizeof shape, "%d", n);
    int32_t id = fx_input(f, name, TGC_FLOAT32, shape);
    tgc_node *node = fx_node(f, id);
    node->kind = TGC_NODE_CONST;
    node->data = tgc_calloc(1, sizeof *node->data);
    CU_ASSERT_PTR_NOT_NULL_FATAL(node->data);
    node->data->dtype = TGC_FLOAT32;
    node->data->shape = fx_shape(f, shape);
    node->data->nbytes = (size_t)n * sizeof(float);
    node->data->data = tgc_malloc(node->data->nbytes);
    CU_ASSERT_PTR_NOT_NULL_FATAL(node->data->data);
    memcpy(node->data->data, v, node->data->nbytes);
    return id;
}

static void test_resize_scales_known(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 3, 10, 7");
    static const float s[] = {1, 1, 1.5f, 0.3f};
    fx_floats(&f, "scales", s, 4);
    int32_t r = fx_op(&f, "r", "Resize", "x, , scales", 1);
    FX_OK(&f, r);
    FX_OUT(&f, r, 0, TGC_FLOAT32, "[N, 3, 15, 2]"); /* floor(10 * 1.5), floor(7 * 0.3) = floor(2.1); N kept (scale 1) */
    fx_end(&f);
}

static void test_resize_scales_unknown(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_UINT8, "1, 3, 10, 7");
    fx_input(&f, "scales", TGC_FLOAT32, "4");
    int32_t r = fx_op(&f, "r", "Resize", "x, , scales", 1);
    FX_OK(&f, r);
    FX_OUT(&f, r, 0, TGC_UINT8, "[unk__0, unk__1, unk__2, unk__3]");
    fx_end(&f);
}

static void test_resize_sizes_and_axes(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 3, 10, 8");
    fx_value(&f, "sizes", TGC_INT64, "2", "5, 12");
    fx_value(&f, "empty", TGC_FLOAT32, "0", NULL);
    int32_t r = fx_op(&f, "r", "Resize", "x, , empty, sizes", 1);
    fx_attr_ints(&f, r, "axes", "-1, 2");
    FX_OK(&f, r);
    FX_OUT(&f, r, 0, TGC_FLOAT32, "[N, 3, 12, 5]"); /* axes [-1, 2]: W -> 5, H -> 12 */
    int32_t nl = fx_op(&f, "nl", "Resize", "x, , , sizes", 1);
    fx_attr_ints(&f, nl, "axes", "2, 3");
    fx_attr_string(&f, nl, "keep_aspect_ratio_policy", "not_larger");
    FX_OK(&f, nl);
    FX_OUT(&f, nl, 0, TGC_FLOAT32, "[N, 3, 5, 4]"); /* s = min(5/10, 12/8) = 0.5: 10*0.5+0.5 -> 5, 8*0.5+0.5 -> 4 */
    int32_t ns = fx_op(&f, "ns", "Resize", "x, , , sizes", 1);
    fx_attr_ints(&f, ns, "axes", "2, 3");
    fx_attr_string(&f, ns, "keep_aspect_ratio_policy", "not_smaller");
    FX_OK(&f, ns);
    FX_OUT(&f, ns, 0, TGC_FLOAT32, "[N, 3, 15, 12]"); /* s = 1.5: 15.5 -> 15, 12.5 -> 12 */
    fx_end(&f);
}

static void test_resize_errors(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "1, 3, 10, 8");
    fx_value(&f, "sizes", TGC_INT64, "4", "1, 3, 5, 5");
    fx_value(&f, "sizes3", TGC_INT64, "3", "1, 3, 5");
    static const float s[] = {1, 1, 2, 2}, neg[] = {1, 1, -2, 2};
    fx_floats(&f, "scales", s, 4);
    fx_floats(&f, "neg", neg, 4);
    int32_t both = fx_op(&f, "both", "Resize", "x, , scales, sizes", 1);
    FX_FAILS(&f, both, 3, "bad-input", "both scales (input 2) and sizes (input 3)");
    int32_t none = fx_op(&f, "none", "Resize", "x", 1);
    FX_FAILS(&f, none, -1, "bad-input", "neither scales");
    int32_t count = fx_op(&f, "count", "Resize", "x, , , sizes3", 1);
    FX_FAILS(&f, count, 3, "shape-mismatch", "has 3 values but X [1, 3, 10, 8] has 4 axes");
    int32_t negative = fx_op(&f, "negative", "Resize", "x, , neg", 1);
    FX_FAILS(&f, negative, 2, "bad-input", "scale -2 for axis 2");
    int32_t mode = fx_op(&f, "mode", "Resize", "x, , scales", 1);
    fx_attr_string(&f, mode, "mode", "area");
    FX_FAILS(&f, mode, -1, "bad-attribute", "'mode' is 'area'");
    int32_t ctm = fx_op(&f, "ctm", "Resize", "x, , scales", 1);
    fx_attr_string(&f, ctm, "coordinate_transformation_mode", "corners");
    FX_FAILS(&f, ctm, -1, "bad-attribute", "'coordinate_transformation_mode' is 'corners'");
    int32_t axes = fx_op(&f, "axes", "Resize", "x, , scales", 1);
    fx_attr_ints(&f, axes, "axes", "1, 1");
    FX_FAILS(&f, axes, -1, "bad-attribute", "repeats axis 1");
    int32_t dt = fx_op(&f, "dt", "Resize", "x, , sizes3", 1); /* int64 where scales (float32) go */
    FX_FAILS(&f, dt, 2, "dtype-mismatch", "input 2 is int64");
    fx_end(&f);
}

static void test_grid_sample(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 3, 10, 8");
    fx_input(&f, "grid", TGC_FLOAT32, "N, 5, 6, 2");
    fx_input(&f, "grid3", TGC_FLOAT32, "N, 5, 6, 3");
    fx_input(&f, "x5", TGC_FLOAT16, "2, C, 4, 4, 4");
    fx_input(&f, "grid5", TGC_FLOAT16, "2, 3, 2, 1, 3");
    int32_t g = fx_op(&f, "g", "GridSample", "x, grid", 1);
    FX_OK(&f, g);
    FX_OUT(&f, g, 0, TGC_FLOAT32, "[N, 3, 5, 6]");
    int32_t g5 = fx_op(&f, "g5", "GridSample", "x5, grid5", 1); /* opset 20's 3-D form */
    fx_attr_string(&f, g5, "mode", "cubic");
    FX_OK(&f, g5);
    FX_OUT(&f, g5, 0, TGC_FLOAT16, "[2, C, 3, 2, 1]");
    int32_t bad = fx_op(&f, "bad", "GridSample", "x, grid3", 1);
    FX_FAILS(&f, bad, 1, "shape-mismatch", "its last dim must be 2");
    int32_t pad = fx_op(&f, "pad", "GridSample", "x, grid", 1);
    fx_attr_string(&f, pad, "padding_mode", "wrap");
    FX_FAILS(&f, pad, -1, "bad-attribute", "'padding_mode' is 'wrap'");
    fx_end(&f);
}

static void test_roi_align(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 256, 14, 14");
    fx_input(&f, "rois", TGC_FLOAT32, "R, 4");
    fx_input(&f, "bi", TGC_INT64, "R");
    fx_input(&f, "bi2", TGC_INT64, "7");
    int32_t r = fx_op(&f, "r", "RoiAlign", "x, rois, bi", 1);
    fx_attr_int(&f, r, "output_height", 7);
    fx_attr_int(&f, r, "output_width", 5);
    FX_OK(&f, r);
    FX_OUT(&f, r, 0, TGC_FLOAT32, "[R, 256, 7, 5]");
    int32_t d = fx_op(&f, "d", "RoiAlign", "x, rois, bi2", 1);
    FX_OK(&f, d);
    FX_OUT(&f, d, 0, TGC_FLOAT32, "[7, 256, 1, 1]"); /* R merged with batch_indices' 7 */
    int32_t m = fx_op(&f, "m", "RoiAlign", "x, rois, bi", 1);
    fx_attr_string(&f, m, "mode", "sum");
    FX_FAILS(&f, m, -1, "bad-attribute", "'mode' is 'sum'");
    int32_t h = fx_op(&f, "h", "RoiAlign", "x, rois, bi", 1);
    fx_attr_int(&f, h, "output_height", 0);
    FX_FAILS(&f, h, -1, "bad-attribute", "output_height (0)");
    fx_end(&f);
}

static void test_nms(void) {
    fx f = fx_begin();
    fx_input(&f, "boxes", TGC_FLOAT32, "B, S, 4");
    fx_input(&f, "scores", TGC_FLOAT32, "B, 80, S");
    fx_input(&f, "scores2", TGC_FLOAT32, "B, 80, 9");
    fx_value(&f, "max", TGC_INT64, "1", "10");
    fx_input(&f, "iou", TGC_FLOAT32, "");
    int32_t n = fx_op(&f, "n", "NonMaxSuppression", "boxes, scores, max, iou", 1);
    FX_OK(&f, n);
    FX_OUT(&f, n, 0, TGC_INT64, "[unk__0, 3]");
    fx_input(&f, "boxes9", TGC_FLOAT32, "B, 8, 4");
    int32_t bad = fx_op(&f, "bad", "NonMaxSuppression", "boxes9, scores2", 1);
    FX_FAILS(&f, bad, 1, "shape-mismatch", "dim 1 of the first must equal dim 2");
    int32_t cpb = fx_op(&f, "cpb", "NonMaxSuppression", "boxes, scores", 1);
    fx_attr_int(&f, cpb, "center_point_box", 2);
    FX_FAILS(&f, cpb, -1, "bad-attribute", "'center_point_box' is 2");
    fx_end(&f);
}

TGC_TEST_MAIN("infer_resize", {"Resize scales from an initializer", test_resize_scales_known},
              {"Resize scales at run time", test_resize_scales_unknown},
              {"Resize sizes, axes, keep_aspect_ratio_policy", test_resize_sizes_and_axes},
              {"Resize errors", test_resize_errors}, {"GridSample", test_grid_sample}, {"RoiAlign", test_roi_align},
              {"NonMaxSuppression", test_nms})
