/* UTF-8 (RFC 3629, section 3 and 4's table of well-formed sequences). */
#include "support/utf8.h"

bool tgc_utf8_is_scalar(uint32_t cp) { return cp <= 0x10FFFFu && !(cp >= 0xD800u && cp <= 0xDFFFu); }

uint32_t tgc_utf8_next(const char *s, size_t len, size_t *i) {
    const unsigned char *p = (const unsigned char *)s + *i;
    size_t left = len - *i;
    unsigned char b = p[0];
    size_t n;
    uint32_t cp, min;
    if (b < 0x80) {
        *i += 1;
        return b;
    } else if (b >= 0xC2 && b <= 0xDF) n = 2, cp = b & 0x1Fu, min = 0x80;
    else if (b >= 0xE0 && b <= 0xEF) n = 3, cp = b & 0x0Fu, min = 0x800;
    else if (b >= 0xF0 && b <= 0xF4) n = 4, cp = b & 0x07u, min = 0x10000;
    else {
        *i += 1;
        return TGC_UTF8_REPLACEMENT;
    }
    if (left < n) {
        *i += 1;
        return TGC_UTF8_REPLACEMENT;
    }
    for (size_t k = 1; k < n; k++) {
        if ((p[k] & 0xC0) != 0x80) {
            *i += 1;
            return TGC_UTF8_REPLACEMENT;
        }
        cp = (cp << 6) | (p[k] & 0x3Fu);
    }
    if (cp < min || !tgc_utf8_is_scalar(cp)) {
        *i += 1;
        return TGC_UTF8_REPLACEMENT;
    }
    *i += n;
    return cp;
}

size_t tgc_utf8_put(uint32_t cp, char out[4]) {
    if (!tgc_utf8_is_scalar(cp)) cp = TGC_UTF8_REPLACEMENT;
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

size_t tgc_utf8_count(const char *s, size_t len) {
    size_t n = 0;
    for (size_t i = 0; i < len; n++) (void)tgc_utf8_next(s, len, &i);
    return n;
}
