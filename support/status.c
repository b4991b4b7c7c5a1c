/* Names of status codes and data types. */
#include "tgc.h"

#include <string.h>

const char *tgc_status_name(tgc_status s) {
    switch (s) {
    case TGC_OK: return "ok";
    case TGC_ERR_INVALID: return "invalid input";
    case TGC_ERR_IO: return "i/o error";
    case TGC_ERR_NOMEM: return "out of memory";
    case TGC_ERR_UNSUPPORTED: return "unsupported";
    case TGC_ERR_RUNTIME: return "runtime error";
    }
    return "unknown status";
}

static const struct {
    const char *name;
    size_t size;
} dtype_table[TGC_DTYPE_COUNT] = {
    [TGC_FLOAT32] = {"float32", 4}, [TGC_FLOAT16] = {"float16", 2}, [TGC_INT32] = {"int32", 4},
    [TGC_INT64] = {"int64", 8},     [TGC_UINT8] = {"uint8", 1},     [TGC_BOOL] = {"bool", 1},
    [TGC_FLOAT64] = {"float64", 8}, [TGC_INT8] = {"int8", 1},       [TGC_INT16] = {"int16", 2},
    [TGC_UINT16] = {"uint16", 2},   [TGC_UINT32] = {"uint32", 4},   [TGC_UINT64] = {"uint64", 8},
    [TGC_BFLOAT16] = {"bfloat16", 2}, [TGC_STRING] = {"string", sizeof(char *)},
};

const char *tgc_dtype_name(tgc_dtype t) {
    return (t >= 0 && t < TGC_DTYPE_COUNT) ? dtype_table[t].name : "invalid";
}

size_t tgc_dtype_size(tgc_dtype t) { return (t >= 0 && t < TGC_DTYPE_COUNT) ? dtype_table[t].size : 0; }

tgc_dtype tgc_dtype_from_name(const char *name) {
    for (int t = 0; t < TGC_DTYPE_COUNT; t++)
        if (strcmp(dtype_table[t].name, name) == 0) return (tgc_dtype)t;
    return TGC_DTYPE_INVALID;
}
