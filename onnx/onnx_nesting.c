/* How deep a protobuf message's submessages nest, read from the wire format
 * before protobuf-c unpacks it. protobuf-c's unpack recurses once per
 * nested message with no bound of its own, and ONNX's messages are
 * recursive (a GraphProto holds NodeProtos holding AttributeProtos holding
 * GraphProtos; a TypeProto's sequence_type holds a TypeProto): a file of a
 * few megabytes nesting 300,000 If branches overflowed the stack. This
 * walk uses an explicit stack of at most `limit` levels, and the generated
 * descriptors to tell a submessage from a string or packed field.
 *
 * Each field is a varint key (number << 3 | wire type), then a varint
 * (type 0), 8 bytes (1), a length and that many bytes (2), or 4 bytes (5).
 * Bytes that do not parse end the walk without a verdict: protobuf-c then
 * refuses them, and it descends no further than the walk did. */
#include "onnx/onnx_import.h"

typedef struct level {
    const ProtobufCMessageDescriptor *desc;
    const uint8_t *end;
} level;

static bool read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v) {
    *v = 0;
    for (int shift = 0; shift < 64 && *p < end; shift += 7) {
        uint8_t b = *(*p)++;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return true;
    }
    return false;
}

int tgc_onnx_nesting(const ProtobufCMessageDescriptor *desc, const uint8_t *bytes, size_t size, int limit) {
    if (limit < 1) limit = 1;
    if (limit > TGC_ONNX_MAX_NESTING) limit = TGC_ONNX_MAX_NESTING;
    level stack[TGC_ONNX_MAX_NESTING + 1];
    int top = 0, deepest = 0;
    stack[0] = (level){desc, bytes + size};
    const uint8_t *p = bytes;
    for (;;) {
        while (top > 0 && p == stack[top].end) top--;
        if (p >= stack[top].end) return deepest; /* the end of the message (or bytes past a child's end) */
        uint64_t key, v;
        if (!read_varint(&p, stack[top].end, &key)) return deepest;
        const uint8_t *end = stack[top].end;
        switch (key & 7) {
        case 0:
            if (!read_varint(&p, end, &v)) return deepest;
            break;
        case 1:
            if (end - p < 8) return deepest;
            p += 8;
            break;
        case 5:
            if (end - p < 4) return deepest;
            p += 4;
            break;
        case 2: {
            if (!read_varint(&p, end, &v) || v > (uint64_t)(end - p)) return deepest;
            const ProtobufCFieldDescriptor *f =
                key >> 3 <= UINT32_MAX ? protobuf_c_message_descriptor_get_field(stack[top].desc, (unsigned)(key >> 3))
                                       : NULL;
            if (f != NULL && f->type == PROTOBUF_C_TYPE_MESSAGE && f->descriptor != NULL) {
                if (top + 1 > limit) return limit + 1;
                stack[++top] = (level){f->descriptor, p + v};
                if (top > deepest) deepest = top;
            } else {
                p += v;
            }
            break;
        }
        default: return deepest; /* groups (3, 4) and unknown types: protobuf-c's to refuse */
        }
    }
}
