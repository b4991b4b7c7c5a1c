/* A protobuf writer, enough for an ONNX ModelProto: tests build models
 * byte by byte (field numbers from onnx.proto) for what ONNX's test data
 * does not show. Each pb is a growing byte buffer; a message goes into
 * its parent with pb_msg (which frees it). Header-only, for the suites of
 * tests/onnx/. */
#ifndef TGC_TESTS_ONNX_PB_WRITER_H
#define TGC_TESTS_ONNX_PB_WRITER_H

#include <CUnit/CUnit.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pb {
    unsigned char *b;
    size_t n, cap;
} pb;

static inline void pb_bytes(pb *p, const void *data, size_t n) {
    if (p->n + n > p->cap) {
        p->cap = (p->n + n) * 2 + 64;
        p->b = realloc(p->b, p->cap);
    }
    memcpy(p->b + p->n, data, n);
    p->n += n;
}

static inline void pb_varint(pb *p, uint64_t v) {
    do {
        unsigned char c = (unsigned char)(v & 0x7f);
        v >>= 7;
        if (v) c |= 0x80;
        pb_bytes(p, &c, 1);
    } while (v);
}

static inline void pb_int(pb *p, int field, int64_t v) {
    pb_varint(p, (uint64_t)field << 3);
    pb_varint(p, (uint64_t)v);
}

static inline void pb_len(pb *p, int field, const void *data, size_t n) {
    pb_varint(p, (uint64_t)field << 3 | 2);
    pb_varint(p, n);
    pb_bytes(p, data, n);
}

static inline void pb_str(pb *p, int field, const char *s) { pb_len(p, field, s, strlen(s)); }

static inline void pb_float(pb *p, int field, float f) {
    pb_varint(p, (uint64_t)field << 3 | 5);
    pb_bytes(p, &f, 4);
}

/* Appends `sub` as message field `field` and releases it. */
static inline void pb_msg(pb *p, int field, pb *sub) {
    pb_len(p, field, sub->b ? sub->b : (unsigned char *)"", sub->n);
    free(sub->b);
    *sub = (pb){0};
}

enum { ONNX_FLOAT = 1, ONNX_INT64 = 7, ONNX_COMPLEX64 = 14 };
enum { ATTR_FLOAT = 1, ATTR_INT = 2, ATTR_STRING = 3, ATTR_INTS = 7 };

/* ValueInfoProto: dims are "3", "N" (a dim_param) or "" (unknown). */
static inline pb value_info(const char *name, int elem, int rank, const char *const *dims) {
    pb shape = {0}, tensor = {0}, type = {0}, v = {0};
    for (int i = 0; i < rank; i++) {
        pb dim = {0};
        if (dims[i][0] >= '0' && dims[i][0] <= '9')
            pb_int(&dim, 1, atoll(dims[i]));
        else if (dims[i][0])
            pb_str(&dim, 2, dims[i]);
        pb_msg(&shape, 1, &dim);
    }
    pb_int(&tensor, 1, elem);
    pb_msg(&tensor, 2, &shape);
    pb_msg(&type, 1, &tensor);
    pb_str(&v, 1, name);
    pb_msg(&v, 2, &type);
    return v;
}

static inline pb attr_int(const char *name, int64_t i) {
    pb a = {0};
    pb_str(&a, 1, name);
    pb_int(&a, 20, ATTR_INT);
    pb_int(&a, 3, i);
    return a;
}

static inline pb attr_ints(const char *name, const int64_t *v, int n) {
    pb a = {0};
    pb_str(&a, 1, name);
    pb_int(&a, 20, ATTR_INTS);
    for (int i = 0; i < n; i++)
        pb_int(&a, 8, v[i]);
    return a;
}

static inline pb attr_float(const char *name, float f) {
    pb a = {0};
    pb_str(&a, 1, name);
    pb_int(&a, 20, ATTR_FLOAT);
    pb_float(&a, 2, f);
    return a;
}

/* NodeProto; ins and outs NULL-terminated; attrs (n_attrs) are released. */
static inline pb node(const char *name, const char *op, const char *const *ins, const char *const *outs, pb *attrs,
               int n_attrs) {
    pb n = {0};
    for (; ins && *ins; ins++)
        pb_str(&n, 1, *ins);
    for (; outs && *outs; outs++)
        pb_str(&n, 2, *outs);
    if (name) pb_str(&n, 3, name);
    pb_str(&n, 4, op);
    for (int i = 0; i < n_attrs; i++)
        pb_msg(&n, 5, &attrs[i]);
    return n;
}

/* TensorProto of float32 data in raw_data, or int64 data in int64_data. */
static inline pb tensor_f32(const char *name, int rank, const int64_t *dims, const float *data) {
    pb t = {0};
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        pb_int(&t, 1, dims[i]);
        n *= dims[i];
    }
    pb_int(&t, 2, ONNX_FLOAT);
    pb_str(&t, 8, name);
    pb_len(&t, 9, data, (size_t)n * 4);
    return t;
}

static inline pb tensor_i64(const char *name, int rank, const int64_t *dims, const int64_t *data) {
    pb t = {0};
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        pb_int(&t, 1, dims[i]);
        n *= dims[i];
    }
    pb_int(&t, 2, ONNX_INT64);
    pb_str(&t, 8, name);
    for (int64_t i = 0; i < n; i++)
        pb_int(&t, 7, data[i]);
    return t;
}

/* ModelProto around `graph` (released) at `opset`, written to path. */
static inline void write_model(const char *path, int opset, pb *graph) {
    pb m = {0}, op = {0};
    pb_int(&m, 1, 8);
    pb_str(&m, 2, "tgc-test");
    pb_str(&op, 1, "");
    pb_int(&op, 2, opset);
    pb_msg(&m, 8, &op);
    pb_msg(&m, 7, graph);
    FILE *f = fopen(path, "wb");
    CU_ASSERT_FATAL(f != NULL);
    CU_ASSERT(fwrite(m.b, 1, m.n, f) == m.n);
    fclose(f);
    free(m.b);
}

static inline pb attr_graph(const char *name, pb *graph) {
    pb a = {0};
    pb_str(&a, 1, name);
    pb_int(&a, 20, 5); /* GRAPH */
    pb_msg(&a, 6, graph);
    return a;
}

#endif
