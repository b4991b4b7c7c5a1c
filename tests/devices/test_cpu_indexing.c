/* The cpu indexing kernels (devices/cpu/kernels_indexing.c) where ONNX's
 * backend data does not reach: opset 18's max / min reductions, ties in
 * TopK (and on lanes long enough for its heap, against a full sort),
 * OneHot's odd indices and float depth, other dtypes, and the
 * errors for untrusted index values. Reference values are numpy's (the
 * expression beside each). */
#include "tests/devices/kernel_fixture_shape.h"

#include <CUnit/CUnit.h>
#include <math.h>
#include <stdlib.h>

static void fx_attr_str(shape_fx *f, const char *name, const char *s) {
    fx_attr(f, (tgc_attr){.name = (char *)name, .type = TGC_ATTR_STRING, .s = (char *)s});
}

/* An output the kernel allocates itself (sizes_outputs). */
static void fx_out_unsized(shape_fx *f, tgc_dtype dtype) { f->out[f->n_out++] = (tgc_value){.dtype = dtype}; }

static const float se_data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
static const int64_t se_idx[6] = {1, -1, 1, 0, 0, 3};
static const float se_upd[6] = {9, -5, 0.5f, 4, 6, -1};

/* numpy, for red in maximum, minimum, multiply, add: out = data.copy();
 * out[i, idx[i, j] % 4] = red(out[i, idx[i, j] % 4], upd[i, j]) in order. */
static void scatter_elements_with(const char *red, const float *want) {
    shape_fx f;
    fx_begin(&f, "ScatterElements");
    fx_in(&f, TGC_FLOAT32, 2, (int64_t[]){2, 4}, se_data);
    fx_in(&f, TGC_INT64, 2, (int64_t[]){2, 3}, se_idx);
    fx_in(&f, TGC_FLOAT32, 2, (int64_t[]){2, 3}, se_upd);
    fx_attr_int(&f, "axis", -1);
    fx_attr_str(&f, "reduction", red);
    fx_out_expect(&f, TGC_FLOAT32, 2, (int64_t[]){2, 4}, want);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

static void test_scatter_elements_reductions(void) {
    scatter_elements_with("max", (float[]){1, 9, 3, 4, 6, 6, 7, 8});
    scatter_elements_with("min", (float[]){1, 0.5f, 3, -5, 4, 6, 7, -1});
    scatter_elements_with("mul", (float[]){1, 9, 3, -20, 120, 6, 7, -8});
    scatter_elements_with("add", (float[]){1, 11.5f, 3, -1, 15, 6, 7, 7});
}

/* numpy: d = arange(12, int32).reshape(3, 4); rows [2, 0, 2] of d combined
 * in order with u = [[10,0,20,0], [-1]*4, [0,30,0,40]]. */
static void scatter_nd_with(const char *red, const int32_t *want) {
    static const int64_t ind[3] = {2, 0, 2};
    static const int32_t upd[12] = {10, 0, 20, 0, -1, -1, -1, -1, 0, 30, 0, 40};
    int32_t data[12];
    for (int i = 0; i < 12; i++) data[i] = i;
    shape_fx f;
    fx_begin(&f, "ScatterND");
    fx_in(&f, TGC_INT32, 2, (int64_t[]){3, 4}, data);
    fx_in(&f, TGC_INT64, 2, (int64_t[]){3, 1}, ind);
    fx_in(&f, TGC_INT32, 2, (int64_t[]){3, 4}, upd);
    fx_attr_str(&f, "reduction", red);
    fx_out_expect(&f, TGC_INT32, 2, (int64_t[]){3, 4}, want);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

static void test_scatter_nd_max_min(void) {
    scatter_nd_with("max", (int32_t[]){0, 1, 2, 3, 4, 5, 6, 7, 10, 30, 20, 40});
    scatter_nd_with("min", (int32_t[]){-1, -1, -1, -1, 4, 5, 6, 7, 0, 0, 0, 0});
}

/* Index values out of range are errors, before anything is written. */
static void test_indices_out_of_range_fail(void) {
    shape_fx f;
    fx_begin(&f, "GatherElements");
    fx_in(&f, TGC_FLOAT32, 2, (int64_t[]){2, 4}, se_data);
    fx_in(&f, TGC_INT32, 2, (int64_t[]){1, 2}, (int32_t[]){0, 2});
    fx_attr_int(&f, "axis", 0);
    fx_out(&f, TGC_FLOAT32, 2, (int64_t[]){1, 2});
    fx_run_fails(&f, "index 2 (element 1 of the indices) is out of range [-2, 2) for axis 0 of data [2, 4]");
    fx_end(&f);

    fx_begin(&f, "ScatterND");
    fx_in(&f, TGC_FLOAT32, 1, (int64_t[]){8}, se_data);
    fx_in(&f, TGC_INT64, 2, (int64_t[]){2, 1}, (int64_t[]){7, -9});
    fx_in(&f, TGC_FLOAT32, 1, (int64_t[]){2}, se_upd);
    fx_out(&f, TGC_FLOAT32, 1, (int64_t[]){8});
    fx_run_fails(&f, "index -9 (element 1 of the indices) is out of range [-8, 8)");
    fx_end(&f);

    fx_begin(&f, "ScatterElements");
    fx_in(&f, TGC_FLOAT32, 2, (int64_t[]){2, 4}, se_data);
    fx_in(&f, TGC_INT64, 2, (int64_t[]){2, 3}, (int64_t[]){0, 1, 2, 3, 4, 0});
    fx_in(&f, TGC_FLOAT32, 2, (int64_t[]){2, 3}, se_upd);
    fx_attr_int(&f, "axis", 1);
    fx_out(&f, TGC_FLOAT32, 2, (int64_t[]){2, 4});
    fx_run_fails(&f, "index 4 (element 4 of the indices)");
    fx_end(&f);
}

/* numpy: data = arange(24.).reshape(2, 3, 4), batch_dims 1, indices
 * [[[2], [0]], [[-1], [1]]]: [data[b][i] for each b, i]. */
static void test_gather_nd_batch_dims(void) {
    float data[24], want[16] = {8, 9, 10, 11, 0, 1, 2, 3, 20, 21, 22, 23, 16, 17, 18, 19};
    for (int i = 0; i < 24; i++) data[i] = (float)i;
    shape_fx f;
    fx_begin(&f, "GatherND");
    fx_in(&f, TGC_FLOAT32, 3, (int64_t[]){2, 3, 4}, data);
    fx_in(&f, TGC_INT64, 3, (int64_t[]){2, 2, 1}, (int64_t[]){2, 0, -1, 1});
    fx_attr_int(&f, "batch_dims", 1);
    fx_out_expect(&f, TGC_FLOAT32, 3, (int64_t[]){2, 2, 4}, want);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

/* numpy: i = argsort(-x or x, axis=1, kind='stable')[:, :3] for
 * x = [[3, 1, 3, 2], [5, 5, 5, 1]]: ties keep the lower index first. */
static void top_k_with(int64_t largest, const float *values, const int64_t *indices) {
    static const float x[8] = {3, 1, 3, 2, 5, 5, 5, 1};
    shape_fx f;
    fx_begin(&f, "TopK");
    fx_in(&f, TGC_FLOAT32, 2, (int64_t[]){2, 4}, x);
    fx_in_i64(&f, 1, (int64_t[]){3});
    fx_attr_int(&f, "largest", largest);
    fx_out_expect(&f, TGC_FLOAT32, 2, (int64_t[]){2, 3}, values);
    fx_out_expect(&f, TGC_INT64, 2, (int64_t[]){2, 3}, indices);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

static void test_top_k_ties_take_the_lower_index(void) {
    top_k_with(1, (float[]){3, 3, 2, 5, 5, 5}, (int64_t[]){0, 2, 3, 0, 1, 2});
    top_k_with(0, (float[]){1, 2, 3, 1, 5, 5}, (int64_t[]){1, 3, 0, 3, 0, 1});
}

/* ---- TopK on long lanes (selected through a heap, k at most a quarter) ---- */

/* One element of a lane and its position, for the reference's sort. */
typedef struct ranked {
    double v; /* NaN for NaN */
    int64_t i;
} ranked;

static int ranked_largest(const void *pa, const void *pb) {
    const ranked *a = pa, *b = pb;
    bool na = isnan(a->v), nb = isnan(b->v);
    if (na != nb) return na ? -1 : 1; /* NaN counts as the largest (numpy's sort) */
    if (!na && a->v != b->v) return a->v > b->v ? -1 : 1;
    return a->i < b->i ? -1 : 1; /* ties: the lower index first */
}

static int ranked_smallest(const void *pa, const void *pb) {
    const ranked *a = pa, *b = pb;
    bool na = isnan(a->v), nb = isnan(b->v);
    if (na != nb) return na ? 1 : -1;
    if (!na && a->v != b->v) return a->v < b->v ? -1 : 1;
    return a->i < b->i ? -1 : 1;
}

/* TopK of x (float32, or int32 when `ints`) [dims0, dims1] along `axis`,
 * k and largest as given, against a full sort of each lane by the rule
 * above (qsort on (value, position): independent of the kernel's heap). */
static void top_k_long(const void *x, bool ints, const int64_t *dims, int axis, int64_t k, int64_t largest) {
    int64_t n = dims[axis], lanes = dims[1 - axis], inner = axis == 0 ? dims[1] : 1;
    size_t es = ints ? sizeof(int32_t) : sizeof(float);
    int64_t odims[2] = {dims[0], dims[1]};
    odims[axis] = k;
    char *want_v = malloc((size_t)(k * lanes) * es);
    int64_t *want_i = malloc((size_t)(k * lanes) * sizeof *want_i);
    ranked *r = malloc((size_t)n * sizeof *r);
    CU_ASSERT_FATAL(want_v != NULL && want_i != NULL && r != NULL);
    for (int64_t q = 0; q < lanes; q++) {
        int64_t base = axis == 0 ? q : q * n; /* lane q's first element; elements inner apart */
        for (int64_t j = 0; j < n; j++) {
            int64_t at = base + j * inner;
            r[j] = (ranked){.v = ints ? (double)((const int32_t *)x)[at] : (double)((const float *)x)[at], .i = j};
        }
        qsort(r, (size_t)n, sizeof *r, largest ? ranked_largest : ranked_smallest);
        for (int64_t j = 0; j < k; j++) {
            int64_t out = axis == 0 ? j * lanes + q : q * k + j;
            want_i[out] = r[j].i;
            memcpy(want_v + (size_t)out * es, (const char *)x + (size_t)(base + r[j].i * inner) * es, es);
        }
    }
    shape_fx f;
    fx_begin(&f, "TopK");
    fx_in(&f, ints ? TGC_INT32 : TGC_FLOAT32, 2, dims, x);
    fx_in_i64(&f, 1, (int64_t[]){k});
    fx_attr_int(&f, "axis", axis);
    fx_attr_int(&f, "largest", largest);
    fx_out_expect(&f, ints ? TGC_INT32 : TGC_FLOAT32, 2, odims, want_v);
    fx_out_expect(&f, TGC_INT64, 2, odims, want_i);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
    free(want_v), free(want_i), free(r);
}

/* Lanes of 5000 (and 4000 down a column) with many ties (values from 64
 * levels), NaNs and both zeros: the k best by the rule, ties by the lower
 * index, both orders; int32 lanes take the typed comparison. */
static void test_top_k_long_lanes(void) {
    enum { N = 5000, R = 3 };
    float *x = malloc(N * R * sizeof *x);
    int32_t *xi = malloc(N * R * sizeof *xi);
    CU_ASSERT_FATAL(x != NULL && xi != NULL);
    uint32_t seed = 7;
    for (int i = 0; i < N * R; i++) {
        seed = seed * 1664525u + 1013904223u;
        int level = (int)(seed >> 26); /* 0 .. 63 */
        x[i] = level == 63 && i % 7 == 0 ? NAN : level == 0 ? (i % 2 ? -0.0f : 0.0f) : (float)(level - 32) * 0.25f;
        xi[i] = (int32_t)(seed >> 8) % 200 - 100;
    }
    for (int largest = 0; largest < 2; largest++) {
        top_k_long(x, false, (int64_t[]){R, N}, 1, 40, largest);
        top_k_long(x, false, (int64_t[]){N - 1000, R}, 0, 10, largest); /* lanes down a column: strided */
        top_k_long(xi, true, (int64_t[]){R, N}, 1, 7, largest);
        top_k_long(x, false, (int64_t[]){R, N}, 1, 1, largest);
    }
    free(x), free(xi);
}

/* numpy (ONNX's reference): v = where(ind < 0, ind + 3, ind);
 * (arange(3)[:, None] == v[None, :]) * 2 for ind = [1, -1, 5, 0.5] (float
 * indices), depth 3.7 (float, cast to 3), values [0, 2] int32, axis 0. */
static void test_one_hot_float_depth_and_odd_indices(void) {
    shape_fx f;
    fx_begin(&f, "OneHot");
    fx_in(&f, TGC_FLOAT32, 1, (int64_t[]){4}, (float[]){1, -1, 5, 0.5f});
    fx_in(&f, TGC_FLOAT32, 0, NULL, (float[]){3.7f});
    fx_in(&f, TGC_INT32, 1, (int64_t[]){2}, (int32_t[]){0, 2});
    fx_attr_int(&f, "axis", 0);
    fx_out_unsized(&f, TGC_INT32);
    fx_run_ok(&f);
    int32_t want[12] = {0, 0, 0, 0, 2, 0, 0, 0, 0, 2, 0, 0};
    CU_ASSERT_EQUAL_FATAL(f.out[0].rank, 2);
    CU_ASSERT_EQUAL(f.out[0].dims[0], 3);
    CU_ASSERT_EQUAL_FATAL(f.out[0].dims[1], 4);
    CU_ASSERT_EQUAL(memcmp(tgc_buffer_host_ptr(f.out[0].buf), want, sizeof want), 0);
    fx_end(&f);
}

/* numpy: flip(cumsum(flip(x, 1), 1), 1) - x for x = [[1,2,3],[4,5,6]] int32. */
static void test_cumsum_exclusive_reverse_int32(void) {
    shape_fx f;
    fx_begin(&f, "CumSum");
    fx_in(&f, TGC_INT32, 2, (int64_t[]){2, 3}, (int32_t[]){1, 2, 3, 4, 5, 6});
    fx_in(&f, TGC_INT32, 0, NULL, (int32_t[]){-1});
    fx_attr_int(&f, "exclusive", 1);
    fx_attr_int(&f, "reverse", 1);
    fx_out_expect(&f, TGC_INT32, 2, (int64_t[]){2, 3}, (int32_t[]){5, 3, 0, 11, 6, 0});
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

/* numpy: cumsum([2048, 1, 1, 1] float16) is [2048] * 4: each running sum
 * rounds to float16 (2049 ties to 2048), it is not summed in float32. */
static void test_cumsum_float16_rounds_each_step(void) {
    shape_fx f;
    fx_begin(&f, "CumSum");
    fx_in(&f, TGC_FLOAT16, 1, (int64_t[]){4}, (uint16_t[]){26624, 15360, 15360, 15360});
    fx_in(&f, TGC_INT64, 0, NULL, (int64_t[]){0});
    fx_out_expect(&f, TGC_FLOAT16, 1, (int64_t[]){4}, (uint16_t[]){26624, 26624, 26624, 26624});
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

/* Along a leading axis (rows of running sums): numpy's
 * cumsum([[1, 2], [3, 4], [5, 6]][::-1], axis=0) shifted for exclusive,
 * reversed back: [[8, 10], [5, 6], [0, 0]]; and float16 columns
 * [2048, 1, 1, 1] (rounding each step: 2048 four times) beside [1, 1, 1,
 * 1] (1, 2, 3, 4). */
static void test_cumsum_leading_axis(void) {
    shape_fx f;
    fx_begin(&f, "CumSum");
    fx_in(&f, TGC_INT32, 2, (int64_t[]){3, 2}, (int32_t[]){1, 2, 3, 4, 5, 6});
    fx_in(&f, TGC_INT32, 0, NULL, (int32_t[]){0});
    fx_attr_int(&f, "exclusive", 1);
    fx_attr_int(&f, "reverse", 1);
    fx_out_expect(&f, TGC_INT32, 2, (int64_t[]){3, 2}, (int32_t[]){8, 10, 5, 6, 0, 0});
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);

    fx_begin(&f, "CumSum");
    fx_in(&f, TGC_FLOAT16, 2, (int64_t[]){4, 2}, (uint16_t[]){26624, 15360, 15360, 15360, 15360, 15360, 15360, 15360});
    fx_in(&f, TGC_INT64, 0, NULL, (int64_t[]){0});
    fx_out_expect(&f, TGC_FLOAT16, 2, (int64_t[]){4, 2},
                  (uint16_t[]){26624, 15360, 26624, 16384, 26624, 16896, 26624, 17408});
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

/* numpy: tril(ones((3, 3), bool), -1) and triu(..., 5) (all false). */
static void test_trilu_bool_and_far_diagonals(void) {
    static const uint8_t ones[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    shape_fx f;
    fx_begin(&f, "Trilu");
    fx_in(&f, TGC_BOOL, 2, (int64_t[]){3, 3}, ones);
    fx_in(&f, TGC_INT64, 0, NULL, (int64_t[]){-1});
    fx_attr_int(&f, "upper", 0);
    fx_out_expect(&f, TGC_BOOL, 2, (int64_t[]){3, 3}, (uint8_t[]){0, 0, 0, 1, 0, 0, 1, 1, 0});
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);

    fx_begin(&f, "Trilu");
    fx_in(&f, TGC_BOOL, 2, (int64_t[]){3, 3}, ones);
    fx_in(&f, TGC_INT64, 0, NULL, (int64_t[]){INT64_MAX});
    fx_out_expect(&f, TGC_BOOL, 2, (int64_t[]){3, 3}, (uint8_t[9]){0});
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

/* numpy: tile([[1, 2], [3, 4]] uint8, (2, 3)); and a zero repeat. */
static void test_tile_uint8_and_zero_repeat(void) {
    shape_fx f;
    fx_begin(&f, "Tile");
    fx_in(&f, TGC_UINT8, 2, (int64_t[]){2, 2}, (uint8_t[]){1, 2, 3, 4});
    fx_in_i64(&f, 2, (int64_t[]){2, 3});
    fx_out_expect(&f, TGC_UINT8, 2, (int64_t[]){4, 6},
                  (uint8_t[]){1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4});
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);

    fx_begin(&f, "Tile");
    fx_in(&f, TGC_UINT8, 2, (int64_t[]){2, 2}, (uint8_t[]){1, 2, 3, 4});
    fx_in_i64(&f, 2, (int64_t[]){0, 3});
    fx_out_expect(&f, TGC_UINT8, 2, (int64_t[]){0, 6}, NULL);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);

    fx_begin(&f, "Tile");
    fx_in(&f, TGC_UINT8, 2, (int64_t[]){2, 2}, (uint8_t[]){1, 2, 3, 4});
    fx_in_i64(&f, 2, (int64_t[]){-1, 3});
    fx_out(&f, TGC_UINT8, 2, (int64_t[]){2, 6});
    fx_run_fails(&f, "repeats[0] is -1");
    fx_end(&f);
}

/* NonZero reads -0.0 as zero and NaN as non-zero (numpy: nonzero of
 * [-0., nan, 0., 2.] is [[1, 3]]); Compress refuses a condition longer
 * than the input; ReverseSequence a length past the time axis. */
static void test_selection_values_and_errors(void) {
    shape_fx f;
    fx_begin(&f, "NonZero");
    fx_in(&f, TGC_FLOAT32, 1, (int64_t[]){4}, (float[]){-0.0f, NAN, 0, 2});
    fx_out_unsized(&f, TGC_INT64);
    fx_run_ok(&f);
    CU_ASSERT_EQUAL_FATAL(f.out[0].rank, 2);
    CU_ASSERT_EQUAL(f.out[0].dims[0], 1);
    CU_ASSERT_EQUAL_FATAL(f.out[0].dims[1], 2);
    const int64_t *nz = tgc_buffer_host_ptr(f.out[0].buf);
    CU_ASSERT(nz[0] == 1 && nz[1] == 3);
    fx_end(&f);

    fx_begin(&f, "Compress");
    fx_in(&f, TGC_FLOAT32, 1, (int64_t[]){2}, (float[]){1, 2});
    fx_in(&f, TGC_BOOL, 1, (int64_t[]){3}, (uint8_t[]){1, 0, 1});
    fx_out_unsized(&f, TGC_FLOAT32);
    fx_run_fails(&f, "the condition has 3 elements but the input has 2");
    fx_end(&f);

    fx_begin(&f, "ReverseSequence");
    fx_in(&f, TGC_FLOAT32, 2, (int64_t[]){2, 2}, (float[]){1, 2, 3, 4});
    fx_in(&f, TGC_INT64, 1, (int64_t[]){2}, (int64_t[]){1, 3});
    fx_out(&f, TGC_FLOAT32, 2, (int64_t[]){2, 2});
    fx_run_fails(&f, "sequence_lens[1] is 3; it must be in [0, 2]");
    fx_end(&f);
}

TGC_TEST_MAIN("cpu_indexing", {"scatter elements reductions", test_scatter_elements_reductions},
              {"scatter nd max min", test_scatter_nd_max_min},
              {"indices out of range fail", test_indices_out_of_range_fail},
              {"gather nd batch dims", test_gather_nd_batch_dims},
              {"top k ties take the lower index", test_top_k_ties_take_the_lower_index},
              {"top k on long lanes", test_top_k_long_lanes},
              {"one hot float depth and odd indices", test_one_hot_float_depth_and_odd_indices},
              {"cumsum exclusive reverse int32", test_cumsum_exclusive_reverse_int32},
              {"cumsum float16 rounds each step", test_cumsum_float16_rounds_each_step},
              {"cumsum along a leading axis", test_cumsum_leading_axis},
              {"trilu bool and far diagonals", test_trilu_bool_and_far_diagonals},
              {"tile uint8 and zero repeat", test_tile_uint8_and_zero_repeat},
              {"selection values and errors", test_selection_values_and_errors})
