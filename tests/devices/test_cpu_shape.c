/* The cpu shape and data-movement kernels (devices/cpu/kernels_shape.c,
 * kernels_layout.c, kernels_index.c) called directly, as the executor calls
 * them, against NumPy's answers (tests/data/kernels/make_shape_refs.py
 * writes them; the shape arguments are repeated literally here) and against
 * ONNX opset-17 rules spelled out in the cases. Bad runtime values must
 * fail with a reason, never crash. */
#include "devices/kernel.h"
#include "tests/devices/kernel_fixture_shape.h"

#include <stdint.h>
#include <string.h>

/* ---- The table ---------------------------------------------------------------- */

static void test_table_declares_host_memory_and_forwarding(void) {
    static const struct {
        const char *op;
        uint32_t host_inputs, host_outputs;
        int forward_input;
    } want[] = {
        {"Reshape", 0x2, 0, 0},      {"Flatten", 0, 0, 0},      {"Squeeze", 0x2, 0, 0},
        {"Unsqueeze", 0x2, 0, 0},    {"Transpose", 0, 0, -1},   {"Concat", 0, 0, -1},
        {"Split", 0x2, 0, -1},       {"Shape", 0, 0x1, -1},     {"Size", 0, 0x1, -1},
        {"Gather", 0, 0, -1},        {"Slice", 0x1e, 0, -1},    {"Expand", 0x2, 0, -1},
        {"Range", 0x7, 0, -1},       {"ConstantOfShape", 0x1, 0, -1}, {"Constant", 0, 0, -1},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const tgc_kernel_def *k = tgc_kernel_find(want[i].op, TGC_DEVICE_CPU, TGC_DTYPE_INVALID);
        CU_ASSERT_PTR_NOT_NULL_FATAL(k);
        CU_ASSERT_EQUAL(k->host_inputs, want[i].host_inputs);
        CU_ASSERT_EQUAL(k->host_outputs, want[i].host_outputs);
        CU_ASSERT_EQUAL(k->forward_input, want[i].forward_input);
    }
}

static void test_table_dtypes(void) {
    /* Data movement takes any dtype; Range only its three. */
    static const char *const movers[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose",
                                         "Concat",  "Split",   "Shape",   "Size",      "Gather",
                                         "Slice",   "Expand"};
    for (size_t i = 0; i < sizeof movers / sizeof movers[0]; i++)
        for (int t = 0; t < TGC_DTYPE_COUNT; t++)
            CU_ASSERT_PTR_NOT_NULL(tgc_kernel_find(movers[i], TGC_DEVICE_CPU, (tgc_dtype)t));
    CU_ASSERT_PTR_NOT_NULL(tgc_kernel_find("Range", TGC_DEVICE_CPU, TGC_FLOAT32));
    CU_ASSERT_PTR_NOT_NULL(tgc_kernel_find("Range", TGC_DEVICE_CPU, TGC_INT32));
    CU_ASSERT_PTR_NOT_NULL(tgc_kernel_find("Range", TGC_DEVICE_CPU, TGC_INT64));
    CU_ASSERT_PTR_NULL(tgc_kernel_find("Range", TGC_DEVICE_CPU, TGC_FLOAT16));
    CU_ASSERT_PTR_NULL(tgc_kernel_find("Range", TGC_DEVICE_CPU, TGC_BOOL));
    CU_ASSERT_PTR_NOT_NULL(tgc_kernel_find("ConstantOfShape", TGC_DEVICE_CPU, TGC_INT64));
}

/* ---- Transpose ----------------------------------------------------------------- */

static void run_transpose_ref(const char *in, const char *out, size_t n_perm, int64_t *perm) {
    shape_fx f;
    fx_begin(&f, "Transpose");
    fx_in_npy(&f, in);
    if (perm != NULL) fx_attr_ints(&f, "perm", n_perm, perm);
    fx_out_npy(&f, out);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

static void test_transpose_perm_201(void) {
    run_transpose_ref("transpose_in", "transpose_perm201_out", 3, (int64_t[]){2, 0, 1});
}

static void test_transpose_default_reverses(void) {
    run_transpose_ref("transpose_in", "transpose_default_out", 0, NULL);
}

static void test_transpose_2d_past_tiles(void) {
    run_transpose_ref("transpose2d_in", "transpose2d_out", 2, (int64_t[]){1, 0});
}

static void test_transpose_4d_int64(void) {
    run_transpose_ref("transpose4d_in", "transpose4d_perm1302_out", 4, (int64_t[]){1, 3, 0, 2});
}

/* Transpose by the definition, out[i] = in[i permuted back], one element at
 * a time: the reference for the cases NumPy is not asked about. */
static void naive_transpose(void *dst, const void *src, size_t es, int rank, const int64_t *dims,
                            const int64_t *perm) {
    int64_t strides[TGC_MAX_RANK], idx[TGC_MAX_RANK] = {0}, numel = 1;
    for (int i = rank - 1; i >= 0; i--) {
        strides[i] = numel;
        numel *= dims[i];
    }
    for (int64_t at = 0; at < numel; at++) {
        int64_t off = 0;
        for (int i = 0; i < rank; i++) off += idx[i] * strides[perm[i]];
        memcpy((char *)dst + at * (int64_t)es, (const char *)src + off * (int64_t)es, es);
        for (int i = rank - 1; i >= 0 && ++idx[i] == dims[perm[i]]; i--) idx[i] = 0;
    }
}

/* Transposes src (dims, dtype t) by perm and compares with naive_transpose. */
static void check_transpose(tgc_dtype t, int rank, const int64_t *dims, int64_t *perm, const void *src) {
    static unsigned char want[4096 * 8];
    int64_t odims[TGC_MAX_RANK];
    for (int i = 0; i < rank; i++) odims[i] = dims[perm[i]];
    naive_transpose(want, src, tgc_dtype_size(t), rank, dims, perm);
    shape_fx f;
    fx_begin(&f, "Transpose");
    fx_in(&f, t, rank, dims, src);
    fx_attr_ints(&f, "perm", (size_t)rank, perm);
    fx_out_expect(&f, t, rank, odims, want);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

static unsigned char pattern[4096 * 8];

static void fill_pattern(void) {
    for (size_t i = 0; i < sizeof pattern; i++) pattern[i] = (unsigned char)(i * 7 + i / 251 + 3);
}

/* Every permutation of a 2x3x4x5 tensor, for each element size. */
static void test_transpose_every_perm_every_size(void) {
    static const tgc_dtype types[] = {TGC_UINT8, TGC_FLOAT16, TGC_INT32, TGC_INT64};
    static const int64_t dims[4] = {2, 3, 4, 5};
    fill_pattern();
    for (int p = 0; p < 256; p++) {
        int64_t perm[4] = {p & 3, (p >> 2) & 3, (p >> 4) & 3, (p >> 6) & 3};
        if (perm[0] == perm[1] || perm[0] == perm[2] || perm[0] == perm[3] || perm[1] == perm[2] ||
            perm[1] == perm[3] || perm[2] == perm[3])
            continue;
        for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) check_transpose(types[t], 4, dims, perm, pattern);
    }
}

/* Batched 2-D transposes (the blocked path with outer axes) of sizes that
 * are not multiples of the tile, and one 8-D perm. */
static void test_transpose_batched_and_rank_8(void) {
    fill_pattern();
    check_transpose(TGC_UINT8, 3, (int64_t[]){3, 37, 21}, (int64_t[]){0, 2, 1}, pattern);
    check_transpose(TGC_INT64, 3, (int64_t[]){3, 37, 21}, (int64_t[]){0, 2, 1}, pattern);
    check_transpose(TGC_FLOAT32, 4, (int64_t[]){2, 5, 17, 19}, (int64_t[]){0, 2, 3, 1}, pattern);
    check_transpose(TGC_FLOAT16, 8, (int64_t[]){2, 1, 3, 2, 1, 4, 2, 3},
                    (int64_t[]){7, 0, 5, 2, 4, 1, 6, 3}, pattern);
}

/* A channel shuffle channels last: [positions, 2, C/2] -> [positions, C/2,
 * 2], the two groups interleaved (float32 four at a time, then the tail),
 * and three groups, on lengths with tails, each block a band of its own. */
static void test_transpose_interleave(void) {
    fill_pattern();
    check_transpose(TGC_FLOAT32, 3, (int64_t[]){5, 2, 23}, (int64_t[]){0, 2, 1}, pattern);
    check_transpose(TGC_FLOAT32, 5, (int64_t[]){1, 3, 3, 2, 58}, (int64_t[]){0, 1, 2, 4, 3}, pattern);
    check_transpose(TGC_FLOAT32, 3, (int64_t[]){4, 3, 13}, (int64_t[]){0, 2, 1}, pattern);
    check_transpose(TGC_FLOAT32, 2, (int64_t[]){2, 4001}, (int64_t[]){1, 0}, pattern);
    check_transpose(TGC_INT64, 3, (int64_t[]){3, 2, 7}, (int64_t[]){0, 2, 1}, pattern);
}

static void test_transpose_empty_and_scalar(void) {
    shape_fx f;
    fx_begin(&f, "Transpose");
    fx_in(&f, TGC_FLOAT32, 3, (int64_t[]){0, 3, 2}, NULL);
    fx_out_expect(&f, TGC_FLOAT32, 3, (int64_t[]){2, 3, 0}, NULL);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);

    int64_t v = -9;
    fx_begin(&f, "Transpose");
    fx_in(&f, TGC_INT64, 0, NULL, &v);
    fx_out_expect(&f, TGC_INT64, 0, NULL, &v);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

static void test_transpose_bad_perm_fails(void) {
    shape_fx f;
    fx_begin(&f, "Transpose");
    fx_in_npy(&f, "transpose_in");
    fx_attr_ints(&f, "perm", 3, (int64_t[]){0, 0, 1});
    fx_out(&f, TGC_FLOAT32, 3, (int64_t[]){2, 2, 3});
    fx_run_fails(&f, "not a permutation");
    fx_end(&f);

    /* An output shape that disagrees with the perm: refused, nothing written. */
    fx_begin(&f, "Transpose");
    fx_in_npy(&f, "transpose_in");
    fx_out(&f, TGC_FLOAT32, 3, (int64_t[]){2, 3, 4});
    fx_run_fails(&f, "output 0 was given shape [2, 3, 4] but the inputs make [4, 3, 2]");
    fx_end(&f);
}

/* ---- Concat -------------------------------------------------------------------- */

static void run_concat_ref(const char *prefix, int64_t axis) {
    char name[64];
    shape_fx f;
    fx_begin(&f, "Concat");
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "%s_in%d", prefix, i);
        fx_in_npy(&f, name);
    }
    snprintf(name, sizeof name, "%s_out", prefix);
    fx_out_npy(&f, name);
    fx_attr_int(&f, "axis", axis);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

static void test_concat_three_f16_axis_1(void) { run_concat_ref("concat1", 1); }

static void test_concat_three_bool_axis_minus_1(void) { run_concat_ref("concatm1", -1); }

static void test_concat_with_empty_input(void) {
    static const int32_t a[] = {1, 2, 3, 4}, b[] = {5, 6}, want[] = {1, 2, 5, 3, 4, 6};
    shape_fx f;
    fx_begin(&f, "Concat");
    fx_in(&f, TGC_INT32, 2, (int64_t[]){2, 2}, a);
    fx_in(&f, TGC_INT32, 2, (int64_t[]){2, 0}, NULL);
    fx_in(&f, TGC_INT32, 2, (int64_t[]){2, 1}, b);
    fx_attr_int(&f, "axis", 1);
    fx_out_expect(&f, TGC_INT32, 2, (int64_t[]){2, 3}, want);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

static void test_concat_mismatch_fails(void) {
    shape_fx f;
    fx_begin(&f, "Concat");
    fx_in(&f, TGC_INT32, 2, (int64_t[]){2, 2}, NULL);
    fx_in(&f, TGC_INT32, 2, (int64_t[]){3, 2}, NULL);
    fx_attr_int(&f, "axis", 1);
    fx_out(&f, TGC_INT32, 2, (int64_t[]){2, 4});
    fx_run_fails(&f, "does not match input 0");
    fx_end(&f);

    fx_begin(&f, "Concat");
    fx_in(&f, TGC_INT32, 1, (int64_t[]){2}, NULL);
    fx_out(&f, TGC_INT32, 1, (int64_t[]){2});
    fx_run_fails(&f, "attribute 'axis' is required");
    fx_end(&f);
}

/* ---- Split --------------------------------------------------------------------- */

static void test_split_uneven_2_3(void) {
    shape_fx f;
    fx_begin(&f, "Split");
    fx_in_npy(&f, "split_uneven_in");
    fx_in_i64(&f, 2, (int64_t[]){2, 3});
    fx_attr_int(&f, "axis", 1);
    fx_out_npy(&f, "split_uneven_out0");
    fx_out_npy(&f, "split_uneven_out1");
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

static void test_split_even_in_three(void) {
    shape_fx f;
    fx_begin(&f, "Split");
    fx_in_npy(&f, "split_even_in");
    fx_out_npy(&f, "split_even_out0");
    fx_out_npy(&f, "split_even_out1");
    fx_out_npy(&f, "split_even_out2");
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

static void test_split_with_empty_part(void) {
    static const uint8_t x[] = {1, 2, 3, 4, 5, 6};
    shape_fx f;
    fx_begin(&f, "Split");
    fx_in(&f, TGC_UINT8, 2, (int64_t[]){2, 3}, x);
    fx_in_i64(&f, 3, (int64_t[]){0, 3, 0});
    fx_attr_int(&f, "axis", -1);
    fx_out_expect(&f, TGC_UINT8, 2, (int64_t[]){2, 0}, NULL);
    fx_out_expect(&f, TGC_UINT8, 2, (int64_t[]){2, 3}, x);
    fx_out_expect(&f, TGC_UINT8, 2, (int64_t[]){2, 0}, NULL);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

static void test_split_bad_sizes_fail(void) {
    shape_fx f;
    fx_begin(&f, "Split");
    fx_in(&f, TGC_UINT8, 1, (int64_t[]){5}, NULL);
    fx_in_i64(&f, 2, (int64_t[]){2, 2});
    fx_out(&f, TGC_UINT8, 1, (int64_t[]){2});
    fx_out(&f, TGC_UINT8, 1, (int64_t[]){2});
    fx_run_fails(&f, "add up to 4 but axis 0 has size 5");
    fx_end(&f);

    fx_begin(&f, "Split");
    fx_in(&f, TGC_UINT8, 1, (int64_t[]){5}, NULL);
    fx_out(&f, TGC_UINT8, 1, (int64_t[]){2});
    fx_out(&f, TGC_UINT8, 1, (int64_t[]){3});
    fx_run_fails(&f, "does not split evenly into 2 outputs");
    fx_end(&f);
}

/* ---- Gather -------------------------------------------------------------------- */

static void run_gather_ref(const char *data, const char *idx, const char *out, int64_t axis) {
    shape_fx f;
    fx_begin(&f, "Gather");
    fx_in_npy(&f, data);
    fx_in_npy(&f, idx);
    fx_attr_int(&f, "axis", axis);
    fx_out_npy(&f, out);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

static void test_gather_axis_0_negative_2d_indices(void) {
    run_gather_ref("gather_data", "gather_axis0_idx", "gather_axis0_out", 0);
}

static void test_gather_axis_1_int32_indices(void) {
    run_gather_ref("gather_data", "gather_axis1_idx", "gather_axis1_out", 1);
    run_gather_ref("gather_data", "gather_axis1_idx", "gather_axis1_out", -1);
}

static void test_gather_scalar_index(void) {
    run_gather_ref("gather_data", "gather_scalar_idx", "gather_scalar_out", 0);
}

static void test_gather_3d_axis_1(void) {
    run_gather_ref("gather3d_data", "gather3d_idx", "gather3d_axis1_out", 1);
}

static void test_gather_empty_indices(void) {
    shape_fx f;
    fx_begin(&f, "Gather");
    fx_in(&f, TGC_FLOAT32, 2, (int64_t[]){3, 4}, NULL);
    fx_in(&f, TGC_INT64, 1, (int64_t[]){0}, NULL);
    fx_out_expect(&f, TGC_FLOAT32, 2, (int64_t[]){0, 4}, NULL);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

static void test_gather_out_of_range_fails(void) {
    shape_fx f;
    fx_begin(&f, "Gather");
    fx_in_npy(&f, "gather_data");
    fx_in(&f, TGC_INT64, 1, (int64_t[]){3}, (int64_t[]){0, 2, 3});
    fx_out(&f, TGC_FLOAT32, 2, (int64_t[]){3, 4});
    fx_run_fails(&f, "index 3 (element 2 of the indices) is out of range [-3, 3) for axis 0 of data [3, 4]");
    fx_end(&f);

    fx_begin(&f, "Gather");
    fx_in_npy(&f, "gather_data");
    fx_in(&f, TGC_INT32, 1, (int64_t[]){1}, (int32_t[]){-5});
    fx_attr_int(&f, "axis", 1);
    fx_out(&f, TGC_FLOAT32, 2, (int64_t[]){3, 1});
    fx_run_fails(&f, "index -5 (element 0 of the indices) is out of range [-4, 4) for axis 1");
    fx_end(&f);

    /* Any index into an empty axis is out of range. */
    fx_begin(&f, "Gather");
    fx_in(&f, TGC_FLOAT32, 2, (int64_t[]){0, 4}, NULL);
    fx_in(&f, TGC_INT64, 0, NULL, (int64_t[]){0});
    fx_out(&f, TGC_FLOAT32, 1, (int64_t[]){4});
    fx_run_fails(&f, "out of range [0, 0)");
    fx_end(&f);
}

/* ---- Slice --------------------------------------------------------------------- */

/* Slice of slice_in (3x4x5 int32) with int64 arguments; n == 0 omits axes
 * and steps. */
static void run_slice_ref(const char *out, int64_t n, int64_t *starts, int64_t *ends, int64_t *axes,
                          int64_t *steps) {
    shape_fx f;
    fx_begin(&f, "Slice");
    fx_in_npy(&f, "slice_in");
    fx_in_i64(&f, n, starts);
    fx_in_i64(&f, n, ends);
    if (axes != NULL) fx_in_i64(&f, n, axes);
    else fx_in_omit(&f);
    if (steps != NULL) fx_in_i64(&f, n, steps);
    fx_out_npy(&f, out);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

static void test_slice_negative_start_clamped_end(void) {
    run_slice_ref("slice_negstart_out", 1, (int64_t[]){-2}, (int64_t[]){INT64_MAX}, (int64_t[]){2}, NULL);
}

static void test_slice_step_minus_1(void) {
    run_slice_ref("slice_reverse_out", 1, (int64_t[]){-1}, (int64_t[]){INT64_MIN}, (int64_t[]){1},
                  (int64_t[]){-1});
}

static void test_slice_step_2_int32_arguments(void) {
    shape_fx f;
    fx_begin(&f, "Slice");
    fx_in_npy(&f, "slice_in");
    fx_in(&f, TGC_INT32, 1, (int64_t[]){2}, (int32_t[]){0, 1});
    fx_in(&f, TGC_INT32, 1, (int64_t[]){2}, (int32_t[]){3, 5});
    fx_in(&f, TGC_INT32, 1, (int64_t[]){2}, (int32_t[]){0, 2});
    fx_in(&f, TGC_INT32, 1, (int64_t[]){2}, (int32_t[]){2, 2});
    fx_out_npy(&f, "slice_step2_out");
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

static void test_slice_negative_axes_and_steps(void) {
    run_slice_ref("slice_negaxes_out", 2, (int64_t[]){4, -1}, (int64_t[]){-6, -100}, (int64_t[]){-1, 0},
                  (int64_t[]){-2, -1});
}

static void test_slice_empty_result(void) {
    run_slice_ref("slice_empty_out", 1, (int64_t[]){3}, (int64_t[]){1}, (int64_t[]){1}, (int64_t[]){1});

    /* An empty axis read backwards stays empty (numpy: x[::-1] of a
     * [0, 3] is [0, 3]), though its clamped start and end are 0 and -1. */
    shape_fx f;
    fx_begin(&f, "Slice");
    fx_in(&f, TGC_FLOAT32, 2, (int64_t[]){0, 3}, NULL);
    fx_in_i64(&f, 1, (int64_t[]){-1});
    fx_in_i64(&f, 1, (int64_t[]){INT64_MIN});
    fx_in_i64(&f, 1, (int64_t[]){0});
    fx_in_i64(&f, 1, (int64_t[]){-1});
    fx_out_expect(&f, TGC_FLOAT32, 2, (int64_t[]){0, 3}, NULL);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

static void test_slice_default_axes_and_huge_steps(void) {
    /* Axes omitted (0..k-1) while steps are given: rows from 2 down by a
     * step of INT64_MIN take row 2 alone; columns from 1 by INT64_MAX take
     * column 1 alone. */
    static const int32_t x[] = {0, 1, 2, 3, 4, 5, 6, 7, 8}, want[] = {7};
    shape_fx f;
    fx_begin(&f, "Slice");
    fx_in(&f, TGC_INT32, 2, (int64_t[]){3, 3}, x);
    fx_in_i64(&f, 2, (int64_t[]){2, 1});
    fx_in_i64(&f, 2, (int64_t[]){INT64_MIN, INT64_MAX});
    fx_in_omit(&f);
    fx_in_i64(&f, 2, (int64_t[]){INT64_MIN, INT64_MAX});
    fx_out_expect(&f, TGC_INT32, 2, (int64_t[]){1, 1}, want);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

static void test_slice_start_before_axis_backwards(void) {
    /* Slice-13 clamps start to [0, d-1] for a negative step, so a start of
     * -10 on an axis of 5 reads element 0 (numpy's x[-10::-1] is empty). */
    shape_fx f;
    fx_begin(&f, "Slice");
    fx_in(&f, TGC_INT64, 1, (int64_t[]){5}, (int64_t[]){10, 11, 12, 13, 14});
    fx_in_i64(&f, 1, (int64_t[]){-10});
    fx_in_i64(&f, 1, (int64_t[]){INT64_MIN});
    fx_in_omit(&f);
    fx_in_i64(&f, 1, (int64_t[]){-1});
    fx_out_expect(&f, TGC_INT64, 1, (int64_t[]){1}, (int64_t[]){10});
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

static void test_slice_bad_arguments_fail(void) {
    shape_fx f;
    fx_begin(&f, "Slice");
    fx_in_npy(&f, "slice_in");
    fx_in_i64(&f, 1, (int64_t[]){0});
    fx_in_i64(&f, 1, (int64_t[]){2});
    fx_in_i64(&f, 1, (int64_t[]){0});
    fx_in_i64(&f, 1, (int64_t[]){0});
    fx_out(&f, TGC_INT32, 3, (int64_t[]){2, 4, 5});
    fx_run_fails(&f, "steps must not be 0");
    fx_end(&f);

    fx_begin(&f, "Slice");
    fx_in_npy(&f, "slice_in");
    fx_in_i64(&f, 2, (int64_t[]){0, 0});
    fx_in_i64(&f, 1, (int64_t[]){2});
    fx_out(&f, TGC_INT32, 3, (int64_t[]){2, 4, 5});
    fx_run_fails(&f, "input 2 (ends) has 1 elements but starts has 2");
    fx_end(&f);

    fx_begin(&f, "Slice");
    fx_in_npy(&f, "slice_in");
    fx_in_i64(&f, 2, (int64_t[]){0, 0});
    fx_in_i64(&f, 2, (int64_t[]){1, 1});
    fx_in_i64(&f, 2, (int64_t[]){1, -2});
    fx_out(&f, TGC_INT32, 3, (int64_t[]){3, 1, 5});
    fx_run_fails(&f, "axis 1 is listed twice");
    fx_end(&f);
}

/* ---- Expand -------------------------------------------------------------------- */

static void test_expand_3x1_to_2x3x4(void) {
    shape_fx f;
    fx_begin(&f, "Expand");
    fx_in_npy(&f, "expand_in");
    fx_in_i64(&f, 3, (int64_t[]){2, 3, 4});
    fx_out_npy(&f, "expand_out");
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

static void test_expand_shorter_target(void) {
    shape_fx f;
    fx_begin(&f, "Expand");
    fx_in_npy(&f, "expand_short_in");
    fx_in_i64(&f, 2, (int64_t[]){3, 1});
    fx_out_npy(&f, "expand_short_out");
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

static void test_expand_to_empty_and_bad_target(void) {
    shape_fx f;
    fx_begin(&f, "Expand");
    fx_in(&f, TGC_BOOL, 1, (int64_t[]){1}, (uint8_t[]){1});
    fx_in_i64(&f, 2, (int64_t[]){3, 0});
    fx_out_expect(&f, TGC_BOOL, 2, (int64_t[]){3, 0}, NULL);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);

    fx_begin(&f, "Expand");
    fx_in(&f, TGC_BOOL, 1, (int64_t[]){2}, (uint8_t[]){1, 0});
    fx_in_i64(&f, 2, (int64_t[]){3, 3});
    fx_out(&f, TGC_BOOL, 2, (int64_t[]){3, 3});
    fx_run_fails(&f, "cannot broadcast [2] to [3, 3]");
    fx_end(&f);
}

/* ---- Range --------------------------------------------------------------------- */

static void run_range(tgc_dtype t, const void *start, const void *limit, const void *delta, const char *ref) {
    shape_fx f;
    fx_begin(&f, "Range");
    fx_in(&f, t, 0, NULL, start);
    fx_in(&f, t, 0, NULL, limit);
    fx_in(&f, t, 0, NULL, delta);
    fx_out_npy(&f, ref);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

static void test_range_float32(void) {
    run_range(TGC_FLOAT32, (float[]){-1.5f}, (float[]){2.0f}, (float[]){0.5f}, "range_f32_out");
    run_range(TGC_FLOAT32, (float[]){0.0f}, (float[]){1.0f}, (float[]){0.375f}, "range_f32_ceil_out");
}

static void test_range_int32_and_int64(void) {
    run_range(TGC_INT32, (int32_t[]){10}, (int32_t[]){-3}, (int32_t[]){-4}, "range_i32_out");
    run_range(TGC_INT64, (int64_t[]){-((int64_t)1 << 40)}, (int64_t[]){(int64_t)1 << 40},
              (int64_t[]){((int64_t)1 << 39) + 1}, "range_i64_out");
}

static void test_range_empty_and_bad(void) {
    shape_fx f;
    fx_begin(&f, "Range");
    fx_in(&f, TGC_INT64, 0, NULL, (int64_t[]){5});
    fx_in(&f, TGC_INT64, 0, NULL, (int64_t[]){5});
    fx_in(&f, TGC_INT64, 0, NULL, (int64_t[]){1});
    fx_out_expect(&f, TGC_INT64, 1, (int64_t[]){0}, NULL);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);

    fx_begin(&f, "Range");
    fx_in(&f, TGC_INT32, 0, NULL, (int32_t[]){0});
    fx_in(&f, TGC_INT32, 0, NULL, (int32_t[]){5});
    fx_in(&f, TGC_INT32, 0, NULL, (int32_t[]){0});
    fx_out(&f, TGC_INT32, 1, (int64_t[]){5});
    fx_run_fails(&f, "delta is 0");
    fx_end(&f);

    fx_begin(&f, "Range");
    fx_in(&f, TGC_INT32, 0, NULL, (int32_t[]){0});
    fx_in(&f, TGC_INT32, 0, NULL, (int32_t[]){5});
    fx_in(&f, TGC_INT32, 0, NULL, (int32_t[]){2});
    fx_out(&f, TGC_INT32, 1, (int64_t[]){2});
    fx_run_fails(&f, "output 0 was given shape [2] but the inputs make [3]");
    fx_end(&f);
}

/* ---- ConstantOfShape, Constant -------------------------------------------------- */

/* A one-element tensor attribute `name` of dtype t over `data`. */
static tgc_attr tensor_attr(const char *name, tgc_const *k, tgc_dtype t, int rank, const int64_t *dims,
                            void *data, size_t nbytes) {
    *k = (tgc_const){.dtype = t, .data = data, .nbytes = nbytes};
    k->shape.rank = rank;
    for (int i = 0; i < rank; i++) k->shape.dims[i] = tgc_dim_of(dims[i]);
    return (tgc_attr){.name = (char *)name, .type = TGC_ATTR_TENSOR, .tensor = k};
}

static void test_constant_of_shape_int64_value(void) {
    int64_t seven = -7;
    tgc_const k;
    shape_fx f;
    fx_begin(&f, "ConstantOfShape");
    fx_in_i64(&f, 2, (int64_t[]){2, 3});
    fx_attr(&f, tensor_attr("value", &k, TGC_INT64, 1, (int64_t[]){1}, &seven, sizeof seven));
    fx_out_npy(&f, "constant_of_shape_out");
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

static void test_constant_of_shape_default_scalar_empty(void) {
    /* No value: float32 0. An empty shape input makes a scalar. */
    static const float zeros[5] = {0};
    shape_fx f;
    fx_begin(&f, "ConstantOfShape");
    fx_in_i64(&f, 1, (int64_t[]){5});
    fx_out_expect(&f, TGC_FLOAT32, 1, (int64_t[]){5}, zeros);
    memset(tgc_buffer_host_ptr(f.out[0].buf), 0xff, sizeof zeros); /* must be overwritten */
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);

    uint16_t half_one = 0x3C00;
    tgc_const k;
    fx_begin(&f, "ConstantOfShape");
    fx_in_i64(&f, 0, NULL);
    fx_attr(&f, tensor_attr("value", &k, TGC_FLOAT16, 1, (int64_t[]){1}, &half_one, 2));
    fx_out_expect(&f, TGC_FLOAT16, 0, NULL, &half_one);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);

    fx_begin(&f, "ConstantOfShape");
    fx_in_i64(&f, 2, (int64_t[]){4, 0});
    fx_out_expect(&f, TGC_FLOAT32, 2, (int64_t[]){4, 0}, NULL);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);

    fx_begin(&f, "ConstantOfShape");
    fx_in_i64(&f, 2, (int64_t[]){4, -1});
    fx_out(&f, TGC_FLOAT32, 2, (int64_t[]){4, 0});
    fx_run_fails(&f, "negative dim");
    fx_end(&f);
}

static void test_constant_forms(void) {
    int32_t data[6] = {1, -2, 3, -4, 5, -6};
    tgc_const k;
    shape_fx f;
    fx_begin(&f, "Constant");
    fx_attr(&f, tensor_attr("value", &k, TGC_INT32, 2, (int64_t[]){2, 3}, data, sizeof data));
    fx_out_expect(&f, TGC_INT32, 2, (int64_t[]){2, 3}, data);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);

    fx_begin(&f, "Constant");
    fx_attr(&f, (tgc_attr){.name = (char *)"value_float", .type = TGC_ATTR_FLOAT, .f = 0.1});
    fx_out_expect(&f, TGC_FLOAT32, 0, NULL, (float[]){0.1f});
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);

    double floats[3] = {1.5, -0.25, 1e10};
    fx_begin(&f, "Constant");
    fx_attr(&f, (tgc_attr){.name = (char *)"value_floats", .type = TGC_ATTR_FLOATS, .floats = floats, .n = 3});
    fx_out_expect(&f, TGC_FLOAT32, 1, (int64_t[]){3}, (float[]){1.5f, -0.25f, 1e10f});
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);

    fx_begin(&f, "Constant");
    fx_attr_int(&f, "value_int", INT64_MIN);
    fx_out_expect(&f, TGC_INT64, 0, NULL, (int64_t[]){INT64_MIN});
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);

    int64_t ints[4] = {4, 3, -2, 1};
    fx_begin(&f, "Constant");
    fx_attr_ints(&f, "value_ints", 4, ints);
    fx_out_expect(&f, TGC_INT64, 1, (int64_t[]){4}, ints);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);

    fx_begin(&f, "Constant");
    fx_attr_ints(&f, "value_ints", 0, NULL);
    fx_out_expect(&f, TGC_INT64, 1, (int64_t[]){0}, NULL);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

static void test_constant_bad_fails(void) {
    shape_fx f;
    fx_begin(&f, "Constant");
    fx_out(&f, TGC_FLOAT32, 0, NULL);
    fx_run_fails(&f, "none of the value attributes is set");
    fx_end(&f);

    fx_begin(&f, "Constant");
    fx_attr_int(&f, "value_int", 3);
    fx_out(&f, TGC_INT32, 0, NULL);
    fx_run_fails(&f, "output 0 is int32 but attribute 'value_int' makes int64");
    fx_end(&f);

    fx_begin(&f, "Constant");
    fx_attr(&f, (tgc_attr){.name = (char *)"value_string", .type = TGC_ATTR_STRING, .s = (char *)"x"});
    fx_out(&f, TGC_UINT8, 0, NULL);
    fx_run_fails(&f, "no string tensors");
    fx_end(&f);
}

/* ---- Shape, Size ------------------------------------------------------------------ */

static void run_shape(int64_t *start, int64_t *end, const char *ref) {
    shape_fx f;
    fx_begin(&f, "Shape");
    fx_in(&f, TGC_FLOAT16, 4, (int64_t[]){2, 3, 4, 5}, NULL);
    if (start != NULL) fx_attr_int(&f, "start", *start);
    if (end != NULL) fx_attr_int(&f, "end", *end);
    fx_out_npy(&f, ref);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

static void test_shape_start_end(void) {
    run_shape((int64_t[]){1}, (int64_t[]){-1}, "shape_start1_endm1_out");
    run_shape((int64_t[]){-3}, NULL, "shape_startm3_out");
    run_shape(NULL, (int64_t[]){10}, "shape_end10_out");
}

static void test_shape_empty_range_and_scalar(void) {
    shape_fx f;
    fx_begin(&f, "Shape");
    fx_in(&f, TGC_INT32, 2, (int64_t[]){0, 7}, NULL);
    fx_attr_int(&f, "start", 2);
    fx_attr_int(&f, "end", 1);
    fx_out_expect(&f, TGC_INT64, 1, (int64_t[]){0}, NULL);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);

    fx_begin(&f, "Shape");
    fx_in(&f, TGC_INT32, 0, NULL, (int32_t[]){4});
    fx_out_expect(&f, TGC_INT64, 1, (int64_t[]){0}, NULL);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

static void test_size(void) {
    shape_fx f;
    fx_begin(&f, "Size");
    fx_in(&f, TGC_BOOL, 3, (int64_t[]){2, 3, 4}, NULL);
    fx_out_expect(&f, TGC_INT64, 0, NULL, (int64_t[]){24});
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);

    fx_begin(&f, "Size");
    fx_in(&f, TGC_FLOAT32, 2, (int64_t[]){5, 0}, NULL);
    fx_out_expect(&f, TGC_INT64, 0, NULL, (int64_t[]){0});
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

/* ---- Reshape, Flatten, Squeeze, Unsqueeze ---------------------------------------- */

static const float x24[24] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23};

/* A view op over x24 as [2, 3, 4]; `shape_arg` n values (n < 0: none). */
static void run_view(const char *op, int64_t n, int64_t *arg, int rank, const int64_t *dims) {
    shape_fx f;
    fx_begin(&f, op);
    fx_in(&f, TGC_FLOAT32, 3, (int64_t[]){2, 3, 4}, x24);
    if (n >= 0) fx_in_i64(&f, n, arg);
    fx_out_expect(&f, TGC_FLOAT32, rank, dims, x24);
    fx_run_ok(&f);
    fx_check(&f);
    CU_ASSERT_PTR_NOT_EQUAL(f.out[0].buf, f.in[0].buf);
    fx_end(&f);
}

static void test_reshape_copies(void) {
    run_view("Reshape", 2, (int64_t[]){-1, 4}, 2, (int64_t[]){6, 4});
    run_view("Reshape", 3, (int64_t[]){0, 0, -1}, 3, (int64_t[]){2, 3, 4});
    run_view("Reshape", 4, (int64_t[]){3, 1, 0, 2}, 4, (int64_t[]){3, 1, 4, 2});
    run_view("Reshape", 1, (int64_t[]){24}, 1, (int64_t[]){24});
}

static void test_reshape_forwarded_buffer(void) {
    shape_fx f;
    fx_begin(&f, "Reshape");
    fx_in(&f, TGC_FLOAT32, 3, (int64_t[]){2, 3, 4}, x24);
    fx_in_i64(&f, 2, (int64_t[]){4, 6});
    fx_out_forward(&f, 2, (int64_t[]){4, 6});
    fx_run_ok(&f);
    CU_ASSERT_PTR_EQUAL(f.out[0].buf, f.in[0].buf);
    CU_ASSERT_EQUAL(memcmp(tgc_buffer_host_ptr(f.out[0].buf), x24, sizeof x24), 0);
    fx_end(&f);
}

static void test_reshape_allowzero_and_empty(void) {
    shape_fx f;
    fx_begin(&f, "Reshape");
    fx_in(&f, TGC_INT64, 2, (int64_t[]){0, 3}, NULL);
    fx_in_i64(&f, 3, (int64_t[]){3, 0, 5});
    fx_attr_int(&f, "allowzero", 1);
    fx_out_expect(&f, TGC_INT64, 3, (int64_t[]){3, 0, 5}, NULL);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);

    /* Without allowzero a 0 copies the input's dim: [-1, 0] is [0, 3]. */
    fx_begin(&f, "Reshape");
    fx_in(&f, TGC_INT64, 2, (int64_t[]){0, 3}, NULL);
    fx_in_i64(&f, 2, (int64_t[]){-1, 0});
    fx_out_expect(&f, TGC_INT64, 2, (int64_t[]){0, 3}, NULL);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);

    /* A -1 beside a zero product implies no count. */
    fx_begin(&f, "Reshape");
    fx_in(&f, TGC_INT64, 2, (int64_t[]){0, 3}, NULL);
    fx_in_i64(&f, 2, (int64_t[]){0, -1});
    fx_out(&f, TGC_INT64, 2, (int64_t[]){0, 3});
    fx_run_fails(&f, "cannot reshape [0, 3] (0 elements) to [0, -1]");
    fx_end(&f);

    fx_begin(&f, "Reshape");
    fx_in(&f, TGC_INT64, 2, (int64_t[]){0, 3}, NULL);
    fx_in_i64(&f, 2, (int64_t[]){-1, 0});
    fx_attr_int(&f, "allowzero", 1);
    fx_out(&f, TGC_INT64, 2, (int64_t[]){0, 3});
    fx_run_fails(&f, "cannot hold both 0 and -1");
    fx_end(&f);
}

static void test_reshape_bad_fails(void) {
    shape_fx f;
    fx_begin(&f, "Reshape");
    fx_in(&f, TGC_FLOAT32, 3, (int64_t[]){2, 3, 4}, x24);
    fx_in_i64(&f, 2, (int64_t[]){5, 5});
    fx_out(&f, TGC_FLOAT32, 2, (int64_t[]){5, 5});
    fx_run_fails(&f, "cannot reshape [2, 3, 4] (24 elements) to [5, 5] (25 elements)");
    fx_end(&f);

    fx_begin(&f, "Reshape");
    fx_in(&f, TGC_FLOAT32, 3, (int64_t[]){2, 3, 4}, x24);
    fx_in_i64(&f, 2, (int64_t[]){-1, -1});
    fx_out(&f, TGC_FLOAT32, 2, (int64_t[]){4, 6});
    fx_run_fails(&f, "more than one -1");
    fx_end(&f);

    fx_begin(&f, "Reshape");
    fx_in(&f, TGC_FLOAT32, 3, (int64_t[]){2, 3, 4}, x24);
    fx_in_i64(&f, 2, (int64_t[]){-1, 5});
    fx_out(&f, TGC_FLOAT32, 2, (int64_t[]){4, 6});
    fx_run_fails(&f, "cannot reshape [2, 3, 4] (24 elements) to [-1, 5]");
    fx_end(&f);

    /* The executor got the shape wrong: refused before any byte moves. */
    fx_begin(&f, "Reshape");
    fx_in(&f, TGC_FLOAT32, 3, (int64_t[]){2, 3, 4}, x24);
    fx_in_i64(&f, 2, (int64_t[]){4, 6});
    fx_out(&f, TGC_FLOAT32, 2, (int64_t[]){6, 4});
    fx_run_fails(&f, "output 0 was given shape [6, 4] but the inputs make [4, 6]");
    fx_end(&f);

    /* An output buffer too small for its shape. */
    fx_begin(&f, "Reshape");
    fx_in(&f, TGC_FLOAT32, 3, (int64_t[]){2, 3, 4}, x24);
    fx_in_i64(&f, 2, (int64_t[]){4, 6});
    fx_out(&f, TGC_FLOAT32, 2, (int64_t[]){4, 5});
    f.out[0].dims[1] = 6;
    fx_run_fails(&f, "output 0 needs 96 bytes but its buffer holds 80");
    fx_end(&f);
}

static void test_flatten(void) {
    shape_fx f;
    static const struct {
        int64_t axis;
        int64_t dims[2];
    } cases[] = {{0, {1, 24}}, {1, {2, 12}}, {2, {6, 4}}, {3, {24, 1}}, {-1, {6, 4}}, {-3, {1, 24}}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fx_begin(&f, "Flatten");
        fx_in(&f, TGC_FLOAT32, 3, (int64_t[]){2, 3, 4}, x24);
        fx_attr_int(&f, "axis", cases[i].axis);
        fx_out_expect(&f, TGC_FLOAT32, 2, cases[i].dims, x24);
        fx_run_ok(&f);
        fx_check(&f);
        fx_end(&f);
    }
    fx_begin(&f, "Flatten");
    fx_in(&f, TGC_FLOAT32, 3, (int64_t[]){2, 3, 4}, x24);
    fx_attr_int(&f, "axis", 4);
    fx_out(&f, TGC_FLOAT32, 2, (int64_t[]){24, 1});
    fx_run_fails(&f, "axis 4 is out of range [-3, 3]");
    fx_end(&f);
}

static void test_squeeze_unsqueeze(void) {
    shape_fx f;
    run_view("Unsqueeze", 2, (int64_t[]){0, -1}, 5, (int64_t[]){1, 2, 3, 4, 1});
    run_view("Unsqueeze", 2, (int64_t[]){-2, 1}, 5, (int64_t[]){2, 1, 3, 1, 4});

    fx_begin(&f, "Squeeze");
    fx_in(&f, TGC_UINT8, 4, (int64_t[]){1, 3, 1, 2}, (uint8_t[]){1, 2, 3, 4, 5, 6});
    fx_out_expect(&f, TGC_UINT8, 2, (int64_t[]){3, 2}, (uint8_t[]){1, 2, 3, 4, 5, 6});
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);

    fx_begin(&f, "Squeeze");
    fx_in(&f, TGC_UINT8, 4, (int64_t[]){1, 3, 1, 2}, (uint8_t[]){1, 2, 3, 4, 5, 6});
    fx_in_i64(&f, 1, (int64_t[]){-2});
    fx_out_expect(&f, TGC_UINT8, 3, (int64_t[]){1, 3, 2}, (uint8_t[]){1, 2, 3, 4, 5, 6});
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);

    fx_begin(&f, "Squeeze");
    fx_in(&f, TGC_UINT8, 4, (int64_t[]){1, 3, 1, 2}, NULL);
    fx_in_i64(&f, 1, (int64_t[]){1});
    fx_out(&f, TGC_UINT8, 3, (int64_t[]){1, 1, 2});
    fx_run_fails(&f, "cannot squeeze axis 1 of [1, 3, 1, 2]: its size is 3, not 1");
    fx_end(&f);

    fx_begin(&f, "Unsqueeze");
    fx_in(&f, TGC_UINT8, 1, (int64_t[]){3}, NULL);
    fx_in_i64(&f, 2, (int64_t[]){2, -1});
    fx_out(&f, TGC_UINT8, 3, (int64_t[]){3, 1, 1});
    fx_run_fails(&f, "is listed twice");
    fx_end(&f);

    /* An empty tensor squeezes to an empty tensor. */
    fx_begin(&f, "Squeeze");
    fx_in(&f, TGC_FLOAT32, 3, (int64_t[]){0, 1, 2}, NULL);
    fx_in_i64(&f, 1, (int64_t[]){1});
    fx_out_expect(&f, TGC_FLOAT32, 2, (int64_t[]){0, 2}, NULL);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

TGC_TEST_MAIN("devices/cpu_shape",
              {"table declares host memory and forwarding", test_table_declares_host_memory_and_forwarding},
              {"table dtypes", test_table_dtypes},
              {"Transpose perm [2, 0, 1]", test_transpose_perm_201},
              {"Transpose default reverses", test_transpose_default_reverses},
              {"Transpose 2-D past the tiles", test_transpose_2d_past_tiles},
              {"Transpose 4-D int64", test_transpose_4d_int64},
              {"Transpose every perm, every size", test_transpose_every_perm_every_size},
              {"Transpose interleaving two or three groups", test_transpose_interleave},
              {"Transpose batched and rank 8", test_transpose_batched_and_rank_8},
              {"Transpose empty and scalar", test_transpose_empty_and_scalar},
              {"Transpose bad perm fails", test_transpose_bad_perm_fails},
              {"Concat three float16 on axis 1", test_concat_three_f16_axis_1},
              {"Concat three bool on axis -1", test_concat_three_bool_axis_minus_1},
              {"Concat with an empty input", test_concat_with_empty_input},
              {"Concat mismatch fails", test_concat_mismatch_fails},
              {"Split uneven [2, 3]", test_split_uneven_2_3},
              {"Split even in three", test_split_even_in_three},
              {"Split with empty parts", test_split_with_empty_part},
              {"Split bad sizes fail", test_split_bad_sizes_fail},
              {"Gather axis 0, negative 2-D indices", test_gather_axis_0_negative_2d_indices},
              {"Gather axis 1, int32 indices", test_gather_axis_1_int32_indices},
              {"Gather scalar index", test_gather_scalar_index},
              {"Gather 3-D axis 1", test_gather_3d_axis_1},
              {"Gather empty indices", test_gather_empty_indices},
              {"Gather out of range fails", test_gather_out_of_range_fails},
              {"Slice negative start, clamped end", test_slice_negative_start_clamped_end},
              {"Slice step -1", test_slice_step_minus_1},
              {"Slice step 2, int32 arguments", test_slice_step_2_int32_arguments},
              {"Slice negative axes and steps", test_slice_negative_axes_and_steps},
              {"Slice empty result", test_slice_empty_result},
              {"Slice default axes, huge steps", test_slice_default_axes_and_huge_steps},
              {"Slice start before the axis, backwards", test_slice_start_before_axis_backwards},
              {"Slice bad arguments fail", test_slice_bad_arguments_fail},
              {"Expand [3, 1] to [2, 3, 4]", test_expand_3x1_to_2x3x4},
              {"Expand to a shorter target", test_expand_shorter_target},
              {"Expand to empty; bad target fails", test_expand_to_empty_and_bad_target},
              {"Range float32", test_range_float32},
              {"Range int32 and int64", test_range_int32_and_int64},
              {"Range empty and bad", test_range_empty_and_bad},
              {"ConstantOfShape int64 value", test_constant_of_shape_int64_value},
              {"ConstantOfShape default, scalar, empty", test_constant_of_shape_default_scalar_empty},
              {"Constant forms", test_constant_forms},
              {"Constant bad fails", test_constant_bad_fails},
              {"Shape start/end", test_shape_start_end},
              {"Shape empty range and scalar", test_shape_empty_range_and_scalar},
              {"Size", test_size},
              {"Reshape copies", test_reshape_copies},
              {"Reshape forwarded buffer", test_reshape_forwarded_buffer},
              {"Reshape allowzero and empty", test_reshape_allowzero_and_empty},
              {"Reshape bad fails", test_reshape_bad_fails},
              {"Flatten", test_flatten},
              {"Squeeze and Unsqueeze", test_squeeze_unsqueeze})
