/* GridSample, RoiAlign and NonMaxSuppression (devices/cpu/kernels_detection.c)
 * beyond ONNX's backend data: GridSample's N-D form, cubic with border and
 * reflection padding, nearest with reflection and align_corners, uint8
 * rounding; RoiAlign's max mode with output_half_pixel and its adaptive
 * sampling with empty rois; NonMaxSuppression with centre boxes, two classes
 * and a score threshold; and the errors. Expected values are printed by
 * tests/data/kernels/make_detection_refs.py, which runs ONNX's reference
 * implementations (onnx/reference/ops/op_grid_sample.py, op_roi_align.py,
 * op_non_max_suppression.py) on the inputs below. */
#include "devices/kernel.h"
#include "support/alloc.h"
#include "tests/harness.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- Running one node on the cpu ------------------------------------------------------- */

typedef struct det_case {
    tgc_device *cpu;
    const char *op;
    tgc_attr attrs[8];
    int n_attrs;
    tgc_value in[5];
    int n_in;
    tgc_value out;
    char err[256];
} det_case;

static void det_begin(det_case *k, const char *op) {
    memset(k, 0, sizeof *k);
    k->op = op;
    k->cpu = tgc_cpu_device_create(0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(k->cpu);
    for (int i = 0; i < 5; i++) k->in[i].dtype = TGC_DTYPE_INVALID;
}

static void det_attr(det_case *k, tgc_attr a) { k->attrs[k->n_attrs++] = a; }
#define DET_STR(n, v) ((tgc_attr){.name = (char *)(n), .type = TGC_ATTR_STRING, .s = (char *)(v)})
#define DET_INT(n, v) ((tgc_attr){.name = (char *)(n), .type = TGC_ATTR_INT, .i = (v)})
#define DET_FLOAT(n, v) ((tgc_attr){.name = (char *)(n), .type = TGC_ATTR_FLOAT, .f = (v)})

static tgc_value det_value(det_case *k, tgc_dtype dt, int rank, const int64_t *dims, const void *data) {
    tgc_value v = {.dtype = dt, .rank = rank};
    for (int d = 0; d < rank; d++) v.dims[d] = dims[d];
    size_t nbytes = tgc_value_nbytes(&v);
    CU_ASSERT_EQUAL_FATAL(tgc_buffer_alloc(k->cpu, nbytes, &v.buf), TGC_OK);
    if (nbytes && data) memcpy(tgc_buffer_host_ptr(v.buf), data, nbytes);
    return v;
}

static void det_in(det_case *k, int i, tgc_dtype dt, int rank, const int64_t *dims, const void *data) {
    k->in[i] = det_value(k, dt, rank, dims, data);
    if (i + 1 > k->n_in) k->n_in = i + 1;
}

/* Runs the op's cpu kernel; out_rank >= 0 preallocates Y as the executor
 * does (a kernel that sizes its outputs gets dtype only). */
static tgc_status det_run(det_case *k, tgc_dtype out_dt, int out_rank, const int64_t *out_dims) {
    const tgc_kernel_def *def = tgc_kernel_find(k->op, TGC_DEVICE_CPU, k->in[0].dtype);
    CU_ASSERT_PTR_NOT_NULL_FATAL(def);
    if (def->sizes_outputs) k->out = (tgc_value){.dtype = out_dt};
    else k->out = det_value(k, out_dt, out_rank, out_dims, NULL);
    tgc_node node = {.name = (char *)"n", .kind = TGC_NODE_OP, .op_name = (char *)k->op, .attrs = k->attrs,
                     .n_attrs = k->n_attrs, .n_inputs = k->n_in, .n_outputs = 1};
    tgc_kernel_ctx c = {.node = &node, .device = k->cpu, .inputs = k->in, .n_inputs = k->n_in, .outputs = &k->out,
                        .n_outputs = 1, .error = k->err, .error_size = sizeof k->err, .def = def};
    tgc_status st = def->fn(&c);
    if (st != TGC_OK && k->err[0]) fprintf(stderr, "\n  (%s: %s)", k->op, k->err);
    return st;
}

/* Y must hold n float32 values within 1e-5 relative of want. */
static void det_expect_f32(det_case *k, const float *want, int64_t n) {
    CU_ASSERT_EQUAL_FATAL(tgc_value_numel(&k->out), n);
    const float *y = tgc_buffer_host_ptr(k->out.buf);
    int bad = 0;
    for (int64_t i = 0; i < n; i++)
        if (!(fabs(y[i] - want[i]) <= 1e-5 * fmax(1.0, fabs(want[i]))) && bad++ < 4)
            fprintf(stderr, "\n  %s element %lld: got %.9g, want %.9g", k->op, (long long)i, y[i], want[i]);
    CU_ASSERT_EQUAL(bad, 0);
}

static void det_end(det_case *k) {
    for (int i = 0; i < 5; i++) tgc_buffer_release(k->in[i].buf);
    tgc_buffer_release(k->out.buf);
    tgc_device_destroy(k->cpu);
}

#define COUNT(a) ((int64_t)(sizeof(a) / sizeof((a)[0])))

/* ---- GridSample -------------------------------------------------------------------------- */
/* x = (np.arange(24, dtype=np.float32) * 0.37) ** 1.3 */
static const float X24[] = {0.0f, 0.274575799703598f, 0.6760849356651306f, 1.1453015804290771f, 1.6647162437438965f, 2.2249653339385986f, 2.820063352584839f, 3.4457972049713135f, 4.09901237487793f, 4.777244567871094f, 5.478507041931152f, 6.201157093048096f, 6.943809986114502f, 7.705282211303711f, 8.48454761505127f, 9.280702590942383f, 10.092951774597168f, 10.92058277130127f, 11.762955665588379f, 12.619492530822754f, 13.489665985107422f, 14.372995376586914f, 15.269039154052734f, 16.177387237548828f};
/* grid4 for the 4-D cases: [1, 2, 3, 2] */
static const float GRID4[] = {-1.7000000476837158f, 0.20000000298023224f, 3.200000047683716f, -2.9000000953674316f, 0.5f, 0.5f, 1.0f, -1.0f, -0.25999999046325684f, 0.7400000095367432f, 2.5f, 1.5f};
static const float GRID5[] = {0.32524821162223816f, 1.0327558517456055f, 0.716782808303833f, -0.7144613265991211f, -0.5195676684379578f, 0.9712389707565308f, -1.2863101959228516f, 0.8351938724517822f, 0.772380530834198f, -0.08336912095546722f, -0.5121157169342041f, -0.5760934352874756f, -0.6373390555381775f, -0.14280159771442413f, 0.011825473047792912f, 0.13909311592578888f, 1.2883007526397705f, 0.7609210014343262f, 0.3176659941673279f, 1.2712963819503784f, -0.7401973605155945f, -0.8834487199783325f, 0.2926029562950134f, -1.1857507228851318f};
static void test_gridsample_3d(void) { /* opset 20's N-D form: X [1,1,2,3,4], grid uniform(-1.3, 1.3) [1,2,2,2,3], linear, zeros */
    static const float want[] = {5.440171241760254f, 4.068194389343262f, 0.0f, 0.8088724613189697f, 5.607879638671875f, 0.752366840839386f, 0.3942659795284271f, 0.6296523809432983f};
    det_case k;
    det_begin(&k, "GridSample");
    det_attr(&k, DET_STR("mode", "linear"));
    det_attr(&k, DET_STR("padding_mode", "zeros"));
    det_attr(&k, DET_INT("align_corners", 0));
    det_in(&k, 0, TGC_FLOAT32, 5, (int64_t[]){1, 1, 2, 3, 4}, X24);
    det_in(&k, 1, TGC_FLOAT32, 5, (int64_t[]){1, 2, 2, 2, 3}, GRID5);
    CU_ASSERT_EQUAL_FATAL(det_run(&k, TGC_FLOAT32, 5, (int64_t[]){1, 1, 2, 2, 2}), TGC_OK);
    det_expect_f32(&k, want, COUNT(want));
    det_end(&k);
}
static void test_gridsample_nearest_reflection(void) { /* nearest, reflection, align_corners 1, coordinates past the borders */
    static const float want[] = {2.2249653339385986f, 4.09901237487793f, 5.478507041931152f, 1.1453015804290771f, 4.777244567871094f, 4.777244567871094f, 10.92058277130127f, 13.489665985107422f, 15.269039154052734f, 9.280702590942383f, 14.372995376586914f, 14.372995376586914f};
    det_case k;
    det_begin(&k, "GridSample");
    det_attr(&k, DET_STR("mode", "nearest"));
    det_attr(&k, DET_STR("padding_mode", "reflection"));
    det_attr(&k, DET_INT("align_corners", 1));
    det_in(&k, 0, TGC_FLOAT32, 4, (int64_t[]){1, 2, 3, 4}, X24);
    det_in(&k, 1, TGC_FLOAT32, 4, (int64_t[]){1, 2, 3, 2}, GRID4);
    CU_ASSERT_EQUAL_FATAL(det_run(&k, TGC_FLOAT32, 4, (int64_t[]){1, 2, 2, 3}), TGC_OK);
    det_expect_f32(&k, want, COUNT(want));
    det_end(&k);
}
static void test_gridsample_bicubic_border(void) { /* bicubic, border */
    static const float want[] = {2.5274195671081543f, 1.1453015804290771f, 5.368801116943359f, 0.9722434878349304f, 4.923336982727051f, 6.201157093048096f, 11.38782787322998f, 9.280702590942383f, 15.122387886047363f, 9.041799545288086f, 14.572077751159668f, 16.177387237548828f};
    det_case k;
    det_begin(&k, "GridSample");
    det_attr(&k, DET_STR("mode", "bicubic"));
    det_attr(&k, DET_STR("padding_mode", "border"));
    det_attr(&k, DET_INT("align_corners", 0));
    det_in(&k, 0, TGC_FLOAT32, 4, (int64_t[]){1, 2, 3, 4}, X24);
    det_in(&k, 1, TGC_FLOAT32, 4, (int64_t[]){1, 2, 3, 2}, GRID4);
    CU_ASSERT_EQUAL_FATAL(det_run(&k, TGC_FLOAT32, 4, (int64_t[]){1, 2, 2, 3}), TGC_OK);
    det_expect_f32(&k, want, COUNT(want));
    det_end(&k);
}
static void test_gridsample_bicubic_reflection(void) { /* bicubic, reflection */
    static const float want[] = {3.0616111755371094f, 4.467224597930908f, 5.368801116943359f, 0.7964341640472412f, 4.943924427032471f, 3.8726632595062256f, 12.116047859191895f, 14.008964538574219f, 15.122387886047363f, 8.801836013793945f, 14.59994888305664f, 13.184255599975586f};
    det_case k;
    det_begin(&k, "GridSample");
    det_attr(&k, DET_STR("mode", "bicubic"));
    det_attr(&k, DET_STR("padding_mode", "reflection"));
    det_attr(&k, DET_INT("align_corners", 0));
    det_in(&k, 0, TGC_FLOAT32, 4, (int64_t[]){1, 2, 3, 4}, X24);
    det_in(&k, 1, TGC_FLOAT32, 4, (int64_t[]){1, 2, 3, 2}, GRID4);
    CU_ASSERT_EQUAL_FATAL(det_run(&k, TGC_FLOAT32, 4, (int64_t[]){1, 2, 2, 3}), TGC_OK);
    det_expect_f32(&k, want, COUNT(want));
    det_end(&k);
}
static void test_gridsample_uint8(void) { /* bilinear on uint8, np.round(y).clip(0, 255) */
    static const uint8_t x[] = {0, 23, 46, 69, 92, 115, 138, 161, 184, 207, 230, 253}, want[] = {17, 184, 0};
    det_case k;
    det_begin(&k, "GridSample");
    det_in(&k, 0, TGC_UINT8, 4, (int64_t[]){1, 1, 3, 4}, x);
    det_in(&k, 1, TGC_FLOAT32, 4, (int64_t[]){1, 1, 3, 2}, GRID4 + 6);
    CU_ASSERT_EQUAL_FATAL(det_run(&k, TGC_UINT8, 4, (int64_t[]){1, 1, 1, 3}), TGC_OK);
    CU_ASSERT_EQUAL(memcmp(tgc_buffer_host_ptr(k.out.buf), want, sizeof want), 0);
    det_end(&k);
}

/* ---- RoiAlign ------------------------------------------------------------------------------ */

/* xr = ((np.arange(120, dtype=np.float32) * 0.61) % 7).reshape(2, 2, 5, 6) */
static const float XR[] = {0.0f, 0.6100000143051147f, 1.2200000286102295f, 1.8300000429153442f, 2.440000057220459f, 3.0500001907348633f, 3.6600000858306885f, 4.269999980926514f, 4.880000114440918f, 5.490000247955322f, 6.100000381469727f, 6.710000038146973f, 0.32000017166137695f, 0.9300003051757812f, 1.5399999618530273f, 2.15000057220459f, 2.760000228881836f, 3.369999885559082f, 3.9800004959106445f, 4.590000152587891f, 5.200000762939453f, 5.810000419616699f, 6.420000076293945f, 0.030000686645507812f, 0.6400003433227539f, 1.25f, 1.8600006103515625f, 2.470001220703125f, 3.0799999237060547f, 3.690000534057617f, 4.30000114440918f, 4.909999847412109f, 5.520000457763672f, 6.130001068115234f, 6.739999771118164f, 0.35000038146972656f, 0.9600009918212891f, 1.5699996948242188f, 2.1800003051757812f, 2.7900009155273438f, 3.4000015258789062f, 4.010000228881836f, 4.620000839233398f, 5.230001449584961f, 5.840000152587891f, 6.450000762939453f, 0.060001373291015625f, 0.6700000762939453f, 1.2800006866455078f, 1.8900012969970703f, 2.5f, 3.1100006103515625f, 3.720001220703125f, 4.3300018310546875f, 4.94000244140625f, 5.549999237060547f, 6.159999847412109f, 6.770000457763672f, 0.3800010681152344f, 0.9900016784667969f, 1.6000022888183594f, 2.2099990844726562f, 2.8199996948242188f, 3.4300003051757812f, 4.040000915527344f, 4.650001525878906f, 5.260002136230469f, 5.870002746582031f, 6.479999542236328f, 0.09000015258789062f, 0.7000007629394531f, 1.3100013732910156f, 1.9200019836425781f, 2.5300025939941406f, 3.1399993896484375f, 3.75f, 4.3600006103515625f, 4.970001220703125f, 5.5800018310546875f, 6.19000244140625f, 6.8000030517578125f, 0.4099998474121094f, 1.0200004577636719f, 1.6300010681152344f, 2.240001678466797f, 2.8500022888183594f, 3.460002899169922f, 4.069999694824219f, 4.680000305175781f, 5.290000915527344f, 5.900001525878906f, 6.510002136230469f, 0.12000274658203125f, 0.7299995422363281f, 1.3400001525878906f, 1.9500007629394531f, 2.5600013732910156f, 3.170001983642578f, 3.7800025939941406f, 4.390003204345703f, 5.0f, 5.6100006103515625f, 6.220001220703125f, 6.8300018310546875f, 0.44000244140625f, 1.0500030517578125f, 1.660003662109375f, 2.2700042724609375f, 2.8800048828125f, 3.4899978637695312f, 4.099998474121094f, 4.709999084472656f, 5.319999694824219f, 5.930000305175781f, 6.540000915527344f, 0.15000152587890625f, 0.7600021362304688f, 1.3700027465820312f, 1.9800033569335938f, 2.5900039672851562f};
/* rois [3, 4]: the last is inverted (x2 < x1), empty under half_pixel */
static const float ROIS[] = {0.5f, 1.0f, 9.0f, 7.5f, 2.0f, 0.0f, 5.0f, 3.0f, 4.0f, 4.0f, 3.0f, 2.0f};
static const int64_t BATCH[] = {1, 0, 1};
static void test_roialign_max(void) { /* max, output_half_pixel, 3 x 2 bins, sampling_ratio 2, spatial_scale 0.5 */
    static const float want[] = {4.214530944824219f, 1.3199220895767212f, 2.271094799041748f, 3.6077868938446045f, 5.378908634185791f, 2.172421932220459f, 2.4584782123565674f, 3.7337238788604736f, 4.557781219482422f, 2.0400259494781494f, 3.2431628704071045f, 4.831640243530273f, 1.3010156154632568f, 1.7156250476837158f, 3.035703182220459f, 4.003125190734863f, 3.035703182220459f, 4.003125190734863f, 3.4907031059265137f, 4.528125286102295f, 1.4960155487060547f, 1.9406251907348633f, 1.5935161113739014f, 2.0531251430511475f, 2.518541097640991f, 3.0078125f, 3.470834970474243f, 1.9140625f, 5.454169273376465f, 2.337501049041748f, 0.8968746662139893f, 1.0303122997283936f, 2.092707633972168f, 2.404062032699585f, 3.2885403633117676f, 3.7778117656707764f};
    det_case k;
    det_begin(&k, "RoiAlign");
    det_attr(&k, DET_STR("mode", "max"));
    det_attr(&k, DET_STR("coordinate_transformation_mode", "output_half_pixel"));
    det_attr(&k, DET_INT("output_height", 3));
    det_attr(&k, DET_INT("output_width", 2));
    det_attr(&k, DET_INT("sampling_ratio", 2));
    det_attr(&k, DET_FLOAT("spatial_scale", 0.5));
    det_in(&k, 0, TGC_FLOAT32, 4, (int64_t[]){2, 2, 5, 6}, XR);
    det_in(&k, 1, TGC_FLOAT32, 2, (int64_t[]){3, 4}, ROIS);
    det_in(&k, 2, TGC_INT64, 1, (int64_t[]){3}, BATCH);
    CU_ASSERT_EQUAL_FATAL(det_run(&k, TGC_FLOAT32, 4, (int64_t[]){3, 2, 3, 2}), TGC_OK);
    det_expect_f32(&k, want, COUNT(want));
    det_end(&k);
}
static void test_roialign_avg_adaptive(void) { /* avg, half_pixel, 2 x 3 bins, adaptive sampling, spatial_scale 0.7 */
    static const float want[] = {3.8878350257873535f, 3.0236129760742188f, 3.0938968658447266f, 4.1202521324157715f, 3.4046385288238525f, 3.549924373626709f, 4.412392616271973f, 2.3976690769195557f, 3.5147311687469482f, 2.933758020401001f, 2.63008451461792f, 3.747148036956787f, 1.2886250019073486f, 1.7156250476837158f, 2.142625093460083f, 3.515749931335449f, 3.9427499771118164f, 4.369750022888184f, 4.5823750495910645f, 5.00937557220459f, 5.436375617980957f, 2.653249979019165f, 3.0802502632141113f, 3.5072507858276367f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    det_case k;
    det_begin(&k, "RoiAlign");
    det_attr(&k, DET_STR("mode", "avg"));
    det_attr(&k, DET_STR("coordinate_transformation_mode", "half_pixel"));
    det_attr(&k, DET_INT("output_height", 2));
    det_attr(&k, DET_INT("output_width", 3));
    det_attr(&k, DET_INT("sampling_ratio", 0));
    det_attr(&k, DET_FLOAT("spatial_scale", 0.7));
    det_in(&k, 0, TGC_FLOAT32, 4, (int64_t[]){2, 2, 5, 6}, XR);
    det_in(&k, 1, TGC_FLOAT32, 2, (int64_t[]){3, 4}, ROIS);
    det_in(&k, 2, TGC_INT64, 1, (int64_t[]){3}, BATCH);
    CU_ASSERT_EQUAL_FATAL(det_run(&k, TGC_FLOAT32, 4, (int64_t[]){3, 2, 2, 3}), TGC_OK);
    det_expect_f32(&k, want, COUNT(want));
    det_end(&k);
}

/* ---- NonMaxSuppression ------------------------------------------------------------------- */

static const float BOXES[] = {0.5f, 0.5f, 1.0f, 1.0f, 0.5f, 0.6000000238418579f, 1.0f, 1.0f, 0.5f, 0.4000000059604645f, 1.0f, 1.0f, 0.5f, 10.5f, 1.0f, 1.0f, 0.5f, 10.600000381469727f, 1.0f, 1.0f, 0.5f, 100.5f, 1.0f, 1.0f}; /* [1, 6, 4], centre form */
static const float SCORES[] = {0.8999999761581421f, 0.75f, 0.6000000238418579f, 0.949999988079071f, 0.5f, 0.30000001192092896f, 0.10000000149011612f, 0.800000011920929f, 0.8500000238418579f, 0.20000000298023224f, 0.699999988079071f, 0.6499999761581421f}; /* [1, 2, 6] */

static void test_nms_center_threshold(void) { /* center_point_box 1, max 2 per class, iou 0.5, score > 0.55 */
    static const int64_t want[] = {0, 0, 3, 0, 0, 0, 0, 1, 2, 0, 1, 4}, max_out = 2;
    static const float iou = 0.5f, score = 0.55f;
    det_case k;
    det_begin(&k, "NonMaxSuppression");
    det_attr(&k, DET_INT("center_point_box", 1));
    det_in(&k, 0, TGC_FLOAT32, 3, (int64_t[]){1, 6, 4}, BOXES);
    det_in(&k, 1, TGC_FLOAT32, 3, (int64_t[]){1, 2, 6}, SCORES);
    det_in(&k, 2, TGC_INT64, 1, (int64_t[]){1}, &max_out);
    det_in(&k, 3, TGC_FLOAT32, 1, (int64_t[]){1}, &iou);
    det_in(&k, 4, TGC_FLOAT32, 0, NULL, &score);
    CU_ASSERT_EQUAL_FATAL(det_run(&k, TGC_INT64, -1, NULL), TGC_OK);
    CU_ASSERT_EQUAL_FATAL(k.out.rank, 2);
    CU_ASSERT_EQUAL(k.out.dims[0], 4);
    CU_ASSERT_EQUAL(k.out.dims[1], 3);
    CU_ASSERT_EQUAL(memcmp(tgc_buffer_host_ptr(k.out.buf), want, sizeof want), 0);
    det_end(&k);
}

static void test_nms_no_max(void) { /* max_output_boxes_per_class omitted: 0, nothing selected ([0, 3]) */
    det_case k;
    det_begin(&k, "NonMaxSuppression");
    det_in(&k, 0, TGC_FLOAT32, 3, (int64_t[]){1, 6, 4}, BOXES);
    det_in(&k, 1, TGC_FLOAT32, 3, (int64_t[]){1, 2, 6}, SCORES);
    CU_ASSERT_EQUAL_FATAL(det_run(&k, TGC_INT64, -1, NULL), TGC_OK);
    CU_ASSERT_EQUAL(k.out.rank, 2);
    CU_ASSERT_EQUAL(k.out.dims[0], 0);
    CU_ASSERT_EQUAL(k.out.dims[1], 3);
    det_end(&k);
}

/* ---- Errors ---------------------------------------------------------------------------------- */

static void expect_fail(det_case *k, tgc_dtype dt, int rank, const int64_t *dims, const char *words) {
    CU_ASSERT_NOT_EQUAL(det_run(k, dt, rank, dims), TGC_OK);
    if (strstr(k->err, words) == NULL) fprintf(stderr, "\n  message '%s' lacks '%s'", k->err, words);
    CU_ASSERT_PTR_NOT_NULL(strstr(k->err, words));
    det_end(k);
}

static void test_errors(void) {
    det_case k;
    static const int64_t bad_batch[] = {1, 2, 0};
    det_begin(&k, "RoiAlign");
    det_in(&k, 0, TGC_FLOAT32, 4, (int64_t[]){2, 2, 5, 6}, XR);
    det_in(&k, 1, TGC_FLOAT32, 2, (int64_t[]){3, 4}, ROIS);
    det_in(&k, 2, TGC_INT64, 1, (int64_t[]){3}, bad_batch);
    expect_fail(&k, TGC_FLOAT32, 4, (int64_t[]){3, 2, 1, 1}, "batch_indices[1] is 2, out of range");
    static const float huge_roi[] = {0, 0, 1e12f, 1e12f};
    det_begin(&k, "RoiAlign");
    det_in(&k, 0, TGC_FLOAT32, 4, (int64_t[]){2, 2, 5, 6}, XR);
    det_in(&k, 1, TGC_FLOAT32, 2, (int64_t[]){1, 4}, huge_roi);
    det_in(&k, 2, TGC_INT64, 1, (int64_t[]){1}, BATCH);
    expect_fail(&k, TGC_FLOAT32, 4, (int64_t[]){1, 2, 1, 1}, "asks for more than");
    det_begin(&k, "GridSample");
    det_in(&k, 0, TGC_FLOAT32, 4, (int64_t[]){1, 2, 3, 4}, X24);
    det_in(&k, 1, TGC_FLOAT32, 4, (int64_t[]){1, 2, 2, 3}, GRID4);
    expect_fail(&k, TGC_FLOAT32, 4, (int64_t[]){1, 2, 2, 2}, "needs grid [N, O1..Ok, k]");
    det_begin(&k, "GridSample");
    det_attr(&k, DET_STR("padding_mode", "mirror"));
    det_in(&k, 0, TGC_FLOAT32, 4, (int64_t[]){1, 2, 3, 4}, X24);
    det_in(&k, 1, TGC_FLOAT32, 4, (int64_t[]){1, 2, 3, 2}, GRID4);
    expect_fail(&k, TGC_FLOAT32, 4, (int64_t[]){1, 2, 2, 3}, "padding_mode 'mirror'");
    det_begin(&k, "NonMaxSuppression");
    det_in(&k, 0, TGC_FLOAT32, 3, (int64_t[]){1, 6, 4}, BOXES);
    det_in(&k, 1, TGC_FLOAT32, 3, (int64_t[]){1, 6, 2}, SCORES);
    expect_fail(&k, TGC_INT64, -1, NULL, "scores [B, C, S]");
}

TGC_TEST_MAIN("detection", {"gridsample 3-D", test_gridsample_3d},
              {"gridsample nearest reflection align_corners", test_gridsample_nearest_reflection},
              {"gridsample bicubic border", test_gridsample_bicubic_border},
              {"gridsample bicubic reflection", test_gridsample_bicubic_reflection},
              {"gridsample uint8", test_gridsample_uint8}, {"roialign max", test_roialign_max},
              {"roialign avg adaptive", test_roialign_avg_adaptive},
              {"nms center threshold", test_nms_center_threshold}, {"nms without max", test_nms_no_max},
              {"errors", test_errors})
