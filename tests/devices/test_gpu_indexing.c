/* The OpenCL kernels of GatherElements, Tile and Trilu
 * (devices/opencl/kernels_indexing.c) against the cpu kernels (which
 * ONNX's backend data and test_cpu_indexing.c check against numpy), for
 * every element size, every axis, negative indices and diagonals, empty
 * tensors, and the out-of-range error. Without an OpenCL device the tests
 * check nothing (gpu_fixture.h). */
#include "tests/devices/gpu_fixture.h"

#include <CUnit/CUnit.h>

#define DIMS(...) ((const int64_t[]){__VA_ARGS__})
#define NDIMS(...) (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
#define SHAPE(...) NDIMS(__VA_ARGS__), DIMS(__VA_ARGS__)
#define SCALAR 0, NULL

/* One dtype of each element size the kernels have: 4, 2, 8, 1 bytes. */
static const tgc_dtype move_types[] = {TGC_FLOAT32, TGC_FLOAT16, TGC_INT64, TGC_UINT8};
#define N_MOVE 4

static void test_gather_elements(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    const int64_t x[3] = {5, 7, 3};
    for (int t = 0; t < N_MOVE; t++)
        for (int axis = -3; axis < 3; axis++)
            for (int it = 0; it < 2; it++) {
                int a = axis < 0 ? axis + 3 : axis;
                int64_t id[3] = {4, 6, 2}; /* smaller than data on the other axes */
                id[a] = 9;                 /* and longer on the gathered one */
                gk_case k;
                gk_begin(&k, &d, "GatherElements");
                gk_attr(&k, GK_INT("axis", axis));
                gk_in_rand(&k, move_types[t], 3, x);
                gk_in_range(&k, it ? TGC_INT32 : TGC_INT64, 3, id, (double)-x[a], (double)(x[a] - 1));
                gk_out(&k, move_types[t], 3, id);
                gk_run(&k);
                gk_end(&k);
            }
    gk_case k;
    gk_begin(&k, &d, "GatherElements");
    gk_in_rand(&k, TGC_FLOAT32, SHAPE(3, 4));
    gk_in(&k, TGC_INT64, SHAPE(0, 4), NULL);
    gk_out(&k, TGC_FLOAT32, SHAPE(0, 4));
    gk_run(&k);
    gk_end(&k);
    gk_begin(&k, &d, "GatherElements");
    gk_attr(&k, GK_INT("axis", 1));
    gk_in_rand(&k, TGC_FLOAT32, SHAPE(2, 4));
    gk_in(&k, TGC_INT64, SHAPE(2, 1), DIMS(3, 4));
    gk_out(&k, TGC_FLOAT32, SHAPE(2, 1));
    gk_run_fails(&k, "out of range [-4, 4) for axis 1 of data [2, 4]");
    gk_end(&k);
    gk_close(&d);
}

static void test_tile(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    for (int t = 0; t < N_MOVE; t++) {
        gk_case k;
        gk_begin(&k, &d, "Tile");
        gk_in_rand(&k, move_types[t], SHAPE(2, 3, 5));
        gk_in_i64(&k, 3, DIMS(3, 1, 2));
        gk_out(&k, move_types[t], SHAPE(6, 3, 10));
        gk_run(&k);
        gk_end(&k);
        gk_begin(&k, &d, "Tile");
        gk_in_rand(&k, move_types[t], SHAPE(7));
        gk_in_i64(&k, 1, DIMS(4));
        gk_out(&k, move_types[t], SHAPE(28));
        gk_run(&k);
        gk_end(&k);
        gk_begin(&k, &d, "Tile");
        gk_in_rand(&k, move_types[t], SHAPE(2, 3));
        gk_in_i64(&k, 2, DIMS(0, 2));
        gk_out(&k, move_types[t], SHAPE(0, 6));
        gk_run(&k);
        gk_end(&k);
    }
    gk_close(&d);
}

static void test_trilu(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    const int64_t ks[] = {0, 1, -2, 4, -7, INT64_MAX, INT64_MIN};
    for (int t = 0; t < N_MOVE; t++)
        for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
            for (int upper = 0; upper < 2; upper++) {
                gk_case k;
                gk_begin(&k, &d, "Trilu");
                gk_attr(&k, GK_INT("upper", upper));
                gk_in_rand(&k, move_types[t], SHAPE(2, 5, 6));
                gk_in(&k, TGC_INT64, SCALAR, &ks[i]);
                gk_out(&k, move_types[t], SHAPE(2, 5, 6));
                gk_run(&k);
                gk_end(&k);
            }
    gk_case k;
    gk_begin(&k, &d, "Trilu"); /* k omitted: 0 */
    gk_in_rand(&k, TGC_FLOAT32, SHAPE(4, 3));
    gk_out(&k, TGC_FLOAT32, SHAPE(4, 3));
    gk_run(&k);
    gk_end(&k);
    gk_close(&d);
}

TGC_TEST_MAIN("gpu_indexing", {"gather elements", test_gather_elements}, {"tile", test_tile}, {"trilu", test_trilu})
