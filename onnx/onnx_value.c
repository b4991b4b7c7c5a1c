/* SequenceProto and OptionalProto (ONNX's onnx-data.proto, which Debian's
 * onnx.proto lacks), read by hand from the protobuf wire format for ONNX's
 * test data: each field a varint key (number << 3 | wire type), then a
 * varint (type 0), 8 bytes (1), a length and that many bytes (2), or 4
 * bytes (5). The fields read:
 *   SequenceProto { 1 name; 2 elem_type; 3 repeated TensorProto tensor_values;
 *                   4 sparse; 5 sequences; 6 maps; 7 optionals }
 *   OptionalProto { 1 name; 2 elem_type; 3 TensorProto tensor_value;
 *                   4 sparse; 5 SequenceProto sequence_value; 6 map; 7 optional }
 * Tensors are decoded as tgc_onnx_tensor_load does; everything else is
 * refused. Lengths are checked against the bytes left, so a truncated or
 * forged file is an error, never a read out of bounds. */
#include "onnx/onnx_import.h"

#include "support/alloc.h"
#include "support/diag.h"

#include <string.h>

typedef struct wire {
    const uint8_t *p, *end;
} wire;

static bool varint(wire *w, uint64_t *v) {
    *v = 0;
    for (int shift = 0; shift < 64 && w->p < w->end; shift += 7) {
        uint8_t b = *w->p++;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return true;
    }
    return false;
}

/* The next field: its number and wire type; a length-delimited field's
 * bytes in *body. False at the end or on malformed bytes (*bad set). */
static bool next_field(wire *w, uint32_t *field, wire *body, bool *bad) {
    uint64_t key, v;
    if (w->p >= w->end) return false;
    if (!varint(w, &key) || key >> 3 > UINT32_MAX) return *bad = true, false;
    *field = (uint32_t)(key >> 3);
    *body = (wire){NULL, NULL};
    switch (key & 7) {
    case 0: return varint(w, &v) ? true : (*bad = true, false);
    case 1:
        if (w->end - w->p < 8) return *bad = true, false;
        w->p += 8;
        return true;
    case 5:
        if (w->end - w->p < 4) return *bad = true, false;
        w->p += 4;
        return true;
    case 2:
        if (!varint(w, &v) || v > (uint64_t)(w->end - w->p)) return *bad = true, false;
        *body = (wire){w->p, w->p + v};
        w->p += v;
        return true;
    default: return *bad = true, false;
    }
}

/* The tensors of a SequenceProto (a new sequence of `dtype` when empty). */
static tgc_status read_sequence(wire w, tgc_dtype dtype, const char *path, tgc_diags *diags, tgc_tensor **out) {
    tgc_tensor **elems = NULL;
    int n = 0, cap = 0;
    tgc_status st = TGC_OK;
    bool bad = false;
    uint32_t field;
    wire body;
    while (st == TGC_OK && next_field(&w, &field, &body, &bad)) {
        if (field == 4 || field == 5 || field == 6 || field == 7) {
            tgc_diag_error(diags, path, (tgc_srcpos){0, 0}, "unsupported-dtype",
                           "a sequence of sparse tensors, sequences, maps or optionals is not supported");
            st = TGC_ERR_UNSUPPORTED;
        } else if (field == 3 && body.p != NULL) {
            if (n == cap) {
                cap = cap ? cap * 2 : 8;
                tgc_tensor **grown = tgc_realloc(elems, (size_t)cap * sizeof *grown);
                if (grown == NULL) {
                    st = TGC_ERR_NOMEM;
                    break;
                }
                elems = grown;
            }
            st = tgc_onnx_tensor_from_bytes(body.p, (size_t)(body.end - body.p), path, diags, &elems[n]);
            if (st == TGC_OK) n++;
        }
    }
    if (bad && st == TGC_OK) {
        tgc_diag_error(diags, path, (tgc_srcpos){0, 0}, "bad-tensor", "not an ONNX SequenceProto: malformed bytes");
        st = TGC_ERR_INVALID;
    }
    if (st == TGC_OK) {
        st = tgc_sequence_create(n > 0 ? tgc_tensor_dtype(elems[0]) : dtype, n, elems, out);
        if (st == TGC_ERR_INVALID)
            tgc_diag_error(diags, path, (tgc_srcpos){0, 0}, "bad-tensor", "the sequence's tensors differ in dtype");
    }
    for (int i = 0; i < n; i++) tgc_tensor_release(elems[i]);
    tgc_free(elems);
    return st;
}

/* An OptionalProto: none, a tensor, or a sequence. */
static tgc_status read_optional(wire w, tgc_dtype dtype, const char *path, tgc_diags *diags, tgc_tensor **out) {
    tgc_tensor *held = NULL;
    tgc_status st = TGC_OK;
    bool bad = false;
    uint32_t field;
    wire body;
    while (st == TGC_OK && next_field(&w, &field, &body, &bad)) {
        if (field == 4 || field == 6 || field == 7) {
            tgc_diag_error(diags, path, (tgc_srcpos){0, 0}, "unsupported-dtype",
                           "an optional of a sparse tensor, a map or an optional is not supported");
            st = TGC_ERR_UNSUPPORTED;
        } else if ((field == 3 || field == 5) && body.p != NULL) {
            tgc_tensor_release(held);
            held = NULL;
            st = field == 3 ? tgc_onnx_tensor_from_bytes(body.p, (size_t)(body.end - body.p), path, diags, &held)
                            : read_sequence(body, dtype, path, diags, &held);
        }
    }
    if (bad && st == TGC_OK) {
        tgc_diag_error(diags, path, (tgc_srcpos){0, 0}, "bad-tensor", "not an ONNX OptionalProto: malformed bytes");
        st = TGC_ERR_INVALID;
    }
    if (st == TGC_OK) st = tgc_optional_create(held != NULL ? tgc_tensor_dtype(held) : dtype, held, out);
    tgc_tensor_release(held);
    return st;
}

tgc_status tgc_onnx_value_load(const char *pb_path, tgc_tensor_kind kind, tgc_dtype dtype, tgc_diags *diags,
                               tgc_tensor **out) {
    *out = NULL;
    if (kind == TGC_TENSOR_PLAIN) return tgc_onnx_tensor_load(pb_path, diags, out);
    uint8_t *bytes;
    size_t size;
    tgc_status st = tgc_onnx_file_bytes(pb_path, diags, &bytes, &size);
    if (st != TGC_OK) return st;
    wire w = {bytes, bytes + size};
    st = kind == TGC_TENSOR_SEQUENCE ? read_sequence(w, dtype, pb_path, diags, out)
                                     : read_optional(w, dtype, pb_path, diags, out);
    tgc_free(bytes);
    if (st == TGC_ERR_NOMEM) tgc_diag_error(diags, pb_path, (tgc_srcpos){0, 0}, "out-of-memory", "out of memory");
    return st;
}
