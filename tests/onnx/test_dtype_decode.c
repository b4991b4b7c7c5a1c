/* ONNX TensorProto decoding of the dtypes beyond tgc's first six, from each
 * typed field onnx.proto assigns them (double_data for DOUBLE, uint64_data
 * for UINT32 and UINT64, int32_data for INT8, INT16, UINT16 and BFLOAT16's
 * bits) and from raw_data; and a count that disagrees with the dims is an
 * error. Values by hand. */
#include "onnx/onnx_import.h"
#include "tests/harness.h"

#include <string.h>

/* Decodes t; asserts success and the dtype; returns the data. */
static const void *decode(Onnx__TensorProto *t, tgc_onnx_arena *a, tgc_npy *out, tgc_dtype want) {
    char err[256] = "";
    tgc_status st = tgc_onnx_tensor_decode(t, ".", a, out, err, sizeof err);
    CU_ASSERT_EQUAL(st, TGC_OK);
    if (st != TGC_OK) fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_EQUAL(out->dtype, want);
    return st == TGC_OK ? out->data : NULL;
}

static void test_typed_fields(void) {
    tgc_onnx_arena a = {0};
    tgc_npy v;
    int64_t dims3[] = {3}, dims2[] = {2};

    Onnx__TensorProto d = ONNX__TENSOR_PROTO__INIT;
    double dv[3] = {0.1, -1e300, 2.5};
    d.has_data_type = 1, d.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE;
    d.n_dims = 1, d.dims = dims3, d.n_double_data = 3, d.double_data = dv;
    const double *pd = decode(&d, &a, &v, TGC_FLOAT64);
    CU_ASSERT(pd != NULL && pd[0] == 0.1 && pd[1] == -1e300 && pd[2] == 2.5);

    int32_t i32[3] = {-128, -1, 127};
    Onnx__TensorProto i8 = ONNX__TENSOR_PROTO__INIT;
    i8.has_data_type = 1, i8.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT8;
    i8.n_dims = 1, i8.dims = dims3, i8.n_int32_data = 3, i8.int32_data = i32;
    const int8_t *p8 = decode(&i8, &a, &v, TGC_INT8);
    CU_ASSERT(p8 != NULL && p8[0] == -128 && p8[1] == -1 && p8[2] == 127);

    int32_t i16v[3] = {-32768, 300, 32767};
    Onnx__TensorProto i16 = ONNX__TENSOR_PROTO__INIT;
    i16.has_data_type = 1, i16.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT16;
    i16.n_dims = 1, i16.dims = dims3, i16.n_int32_data = 3, i16.int32_data = i16v;
    const int16_t *p16 = decode(&i16, &a, &v, TGC_INT16);
    CU_ASSERT(p16 != NULL && p16[0] == -32768 && p16[1] == 300 && p16[2] == 32767);

    int32_t u16v[3] = {0, 40000, 65535};
    Onnx__TensorProto u16 = ONNX__TENSOR_PROTO__INIT;
    u16.has_data_type = 1, u16.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__UINT16;
    u16.n_dims = 1, u16.dims = dims3, u16.n_int32_data = 3, u16.int32_data = u16v;
    const uint16_t *pu16 = decode(&u16, &a, &v, TGC_UINT16);
    CU_ASSERT(pu16 != NULL && pu16[0] == 0 && pu16[1] == 40000 && pu16[2] == 65535);

    int32_t bfv[2] = {0x3FC0, 0xBF80}; /* 1.5, -1 */
    Onnx__TensorProto bf = ONNX__TENSOR_PROTO__INIT;
    bf.has_data_type = 1, bf.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16;
    bf.n_dims = 1, bf.dims = dims2, bf.n_int32_data = 2, bf.int32_data = bfv;
    const uint16_t *pbf = decode(&bf, &a, &v, TGC_BFLOAT16);
    CU_ASSERT(pbf != NULL && pbf[0] == 0x3FC0 && pbf[1] == 0xBF80);

    uint64_t u32v[2] = {4294967295u, 7};
    Onnx__TensorProto u32 = ONNX__TENSOR_PROTO__INIT;
    u32.has_data_type = 1, u32.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__UINT32;
    u32.n_dims = 1, u32.dims = dims2, u32.n_uint64_data = 2, u32.uint64_data = u32v;
    const uint32_t *pu32 = decode(&u32, &a, &v, TGC_UINT32);
    CU_ASSERT(pu32 != NULL && pu32[0] == 4294967295u && pu32[1] == 7);

    uint64_t u64v[2] = {UINT64_MAX, 1};
    Onnx__TensorProto u64 = ONNX__TENSOR_PROTO__INIT;
    u64.has_data_type = 1, u64.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__UINT64;
    u64.n_dims = 1, u64.dims = dims2, u64.n_uint64_data = 2, u64.uint64_data = u64v;
    const uint64_t *pu64 = decode(&u64, &a, &v, TGC_UINT64);
    CU_ASSERT(pu64 != NULL && pu64[0] == UINT64_MAX && pu64[1] == 1);

    /* raw_data: little-endian bytes */
    uint8_t raw[4] = {0xff, 0xff, 0x01, 0x00}; /* int16 -1, 1 */
    Onnx__TensorProto r = ONNX__TENSOR_PROTO__INIT;
    r.has_data_type = 1, r.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT16;
    r.n_dims = 1, r.dims = dims2, r.has_raw_data = 1, r.raw_data.len = 4, r.raw_data.data = raw;
    const uint8_t *pr = decode(&r, &a, &v, TGC_INT16);
    int16_t rv[2];
    if (pr != NULL) memcpy(rv, pr, 4);
    CU_ASSERT(pr != NULL && rv[0] == -1 && rv[1] == 1);

    /* a field holding fewer values than the dims need */
    char err[256] = "";
    u64.n_uint64_data = 1;
    CU_ASSERT_EQUAL(tgc_onnx_tensor_decode(&u64, ".", &a, &v, err, sizeof err), TGC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "holds 1 values, the dims need 2"));
    /* still unsupported: COMPLEX64 */
    Onnx__TensorProto cx = ONNX__TENSOR_PROTO__INIT;
    cx.has_data_type = 1, cx.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__COMPLEX64;
    CU_ASSERT_EQUAL(tgc_onnx_tensor_decode(&cx, ".", &a, &v, err, sizeof err), TGC_ERR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "COMPLEX64"));
    /* STRING: string_data, each a NUL-terminated copy in a char * slot */
    Onnx__TensorProto s = ONNX__TENSOR_PROTO__INIT;
    s.has_data_type = 1, s.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__STRING;
    int64_t two[] = {2};
    ProtobufCBinaryData words[] = {{3, (uint8_t *)"abc"}, {0, NULL}};
    s.n_dims = 1, s.dims = two, s.n_string_data = 2, s.string_data = words;
    CU_ASSERT_EQUAL_FATAL(tgc_onnx_tensor_decode(&s, ".", &a, &v, err, sizeof err), TGC_OK);
    CU_ASSERT(v.dtype == TGC_STRING && v.nbytes == 2 * sizeof(char *));
    CU_ASSERT_STRING_EQUAL(((char **)v.data)[0], "abc");
    CU_ASSERT_STRING_EQUAL(((char **)v.data)[1], "");
    s.n_string_data = 1; /* fewer strings than the dims need */
    CU_ASSERT_EQUAL(tgc_onnx_tensor_decode(&s, ".", &a, &v, err, sizeof err), TGC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "holds 1 strings"));
    tgc_onnx_arena_release(&a);
}

TGC_TEST_MAIN("dtype_decode", {"typed fields and raw_data", test_typed_fields})
