/* Cast to and from strings (see string_cast.h for the rules). */
#include "devices/cpu/string_cast.h"

#include "devices/kernel_checks.h"
#include "support/alloc.h"
#include "support/dtype_elem.h"
#include "support/half.h"
#include "support/string_slots.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

tgc_status tgc_cpu_copy_strings(tgc_kernel_ctx *c, char **dst, const char *const *src, size_t n) {
    if (n == 0 || (const void *)dst == (const void *)src) return TGC_OK;
    if (tgc_string_slots_copy(dst, src, n) != TGC_OK) {
        tgc_kernel_fail(c, "out of host memory copying %zu strings", n);
        return TGC_ERR_NOMEM;
    }
    return TGC_OK;
}

/* ---- number -> string ------------------------------------------------------------ */

/* True when text s reads back as exactly value v of float dtype t. */
static bool reads_back(tgc_dtype t, const char *s, double v) {
    double d = strtod(s, NULL);
    switch (t) {
    case TGC_FLOAT64: return d == v;
    case TGC_FLOAT32: return strtof(s, NULL) == (float)v;
    case TGC_FLOAT16: return tgc_half_to_float(tgc_float_to_half(strtof(s, NULL))) == (float)v;
    case TGC_BFLOAT16: return tgc_bf16_to_float(tgc_float_to_bf16(strtof(s, NULL))) == (float)v;
    default: return d == v;
    }
}

/* Float v (finite, of dtype t) as numpy's str() of a scalar of t writes it:
 * Dragon4's shortest unique digits (here: the fewest %.Ne digits that read
 * back as v, which for these widths is the same string), positional for
 * 1e-4 <= |v| < 1e16 and 0, scientific otherwise. */
static void format_float(tgc_dtype t, double v, char *out, size_t size) {
    if (isnan(v)) {
        snprintf(out, size, "nan");
        return;
    }
    if (isinf(v)) {
        snprintf(out, size, v > 0 ? "inf" : "-inf");
        return;
    }
    char sci[40];
    for (int p = 0; p < 17; p++) { /* p digits after the point: p + 1 significant */
        snprintf(sci, sizeof sci, "%.*e", p, v);
        if (reads_back(t, sci, v)) break;
    }
    /* sci is [-]D[.DDD]e[+-]XX: split into sign, digits, exponent. */
    const char *p = sci;
    bool neg = *p == '-';
    if (neg) p++;
    char digits[24];
    size_t nd = 0;
    for (; *p != 'e'; p++)
        if (*p != '.' && nd < sizeof digits - 1) digits[nd++] = *p;
    while (nd > 1 && digits[nd - 1] == '0') nd--; /* the shortest form has no trailing zeros */
    digits[nd] = '\0';
    int exp = atoi(p + 1);
    double a = fabs(v);
    size_t n = 0;
    if (neg) out[n++] = '-';
    if (a == 0 || (a >= 1e-4 && a < 1e16)) {
        if (exp >= 0) { /* digits[0..exp] . rest (or 0) */
            for (int i = 0; i <= exp; i++) out[n++] = (size_t)i < nd ? digits[i] : '0';
            out[n++] = '.';
            if ((size_t)exp + 1 < nd) for (size_t i = (size_t)exp + 1; i < nd; i++) out[n++] = digits[i];
            else out[n++] = '0';
        } else { /* 0.000ddd */
            out[n++] = '0';
            out[n++] = '.';
            for (int i = 0; i < -exp - 1; i++) out[n++] = '0';
            for (size_t i = 0; i < nd; i++) out[n++] = digits[i];
        }
        out[n] = '\0';
        return;
    }
    out[n++] = digits[0];
    if (nd > 1) {
        out[n++] = '.';
        for (size_t i = 1; i < nd; i++) out[n++] = digits[i];
    }
    snprintf(out + n, size - n, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
}

/* Element i of x (dtype t, not string) as text into out (>= 64 bytes). */
static void format_element(tgc_dtype t, const void *x, int64_t i, char *out, size_t size) {
    if (tgc_dtype_is_float(t)) format_float(t, tgc_elem_as_double(t, x, i), out, size);
    else if (t == TGC_BOOL) snprintf(out, size, "%s", ((const uint8_t *)x)[i] ? "True" : "False");
    else if (t == TGC_UINT64) snprintf(out, size, "%" PRIu64, ((const uint64_t *)x)[i]);
    else snprintf(out, size, "%" PRId64, tgc_elem_as_int64(t, x, i));
}

/* ---- string -> number ------------------------------------------------------------ */

/* s without leading and trailing blanks, into buf (room for strlen(s) + 1). */
static const char *trimmed(const char *s, char *buf, size_t size) {
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1])) n--;
    if (n >= size) n = size - 1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return buf;
}

static bool has_hex_prefix(const char *s) {
    if (*s == '+' || *s == '-') s++;
    return s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
}

/* Text s as a double (float: via strtof, rounded once to float32). */
static bool parse_float(const char *s, bool single, double *out) {
    if (*s == '\0' || has_hex_prefix(s)) return false;
    char *end;
    errno = 0;
    *out = single ? (double)strtof(s, &end) : strtod(s, &end);
    return *end == '\0'; /* ERANGE: inf or a denormal/zero, as numpy gives */
}

/* Text s as an integer: *v its value's bits (uint64: the unsigned value). */
static bool parse_int(const char *s, bool is_unsigned, int64_t *v) {
    if (*s == '\0' || has_hex_prefix(s)) return false;
    char *end;
    errno = 0;
    if (is_unsigned && *s != '-') *v = (int64_t)strtoull(s, &end, 10);
    else *v = strtoll(s, &end, 10);
    return *end == '\0' && errno != ERANGE;
}

static bool same_ignoring_case(const char *a, const char *b) {
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return false;
    return *a == *b;
}

/* Stores text s as element i of y (dtype t, not string); false if s does
 * not parse as t. */
static bool parse_element(tgc_dtype t, const char *s, void *y, int64_t i) {
    double d;
    int64_t v;
    switch (t) {
    case TGC_FLOAT32:
        if (!parse_float(s, true, &d)) return false;
        ((float *)y)[i] = (float)d;
        return true;
    case TGC_FLOAT64:
        if (!parse_float(s, false, &d)) return false;
        ((double *)y)[i] = d;
        return true;
    case TGC_FLOAT16:
    case TGC_BFLOAT16: /* through float32, as numpy parses float16 */
        if (!parse_float(s, true, &d)) return false;
        ((uint16_t *)y)[i] = t == TGC_FLOAT16 ? tgc_float_to_half((float)d) : tgc_float_to_bf16((float)d);
        return true;
    case TGC_BOOL:
        if (same_ignoring_case(s, "true")) v = 1;
        else if (same_ignoring_case(s, "false")) v = 0;
        else if (parse_float(s, false, &d)) v = d != 0;
        else return false;
        ((uint8_t *)y)[i] = (uint8_t)v;
        return true;
    default: break;
    }
    if (!parse_int(s, tgc_dtype_is_unsigned(t), &v)) return false;
    switch (t) { /* modulo 2^bits, as the numeric Cast between integers */
    case TGC_INT8: ((int8_t *)y)[i] = (int8_t)(uint8_t)(uint64_t)v; break;
    case TGC_INT16: ((int16_t *)y)[i] = (int16_t)(uint16_t)(uint64_t)v; break;
    case TGC_INT32: ((int32_t *)y)[i] = (int32_t)(uint32_t)(uint64_t)v; break;
    case TGC_INT64: ((int64_t *)y)[i] = v; break;
    case TGC_UINT8: ((uint8_t *)y)[i] = (uint8_t)(uint64_t)v; break;
    case TGC_UINT16: ((uint16_t *)y)[i] = (uint16_t)(uint64_t)v; break;
    case TGC_UINT32: ((uint32_t *)y)[i] = (uint32_t)(uint64_t)v; break;
    case TGC_UINT64: ((uint64_t *)y)[i] = (uint64_t)v; break;
    default: return false;
    }
    return true;
}

/* ---- The kernel body ---------------------------------------------------------------- */

tgc_status tgc_cpu_cast_strings(tgc_kernel_ctx *c, tgc_dtype to) {
    const tgc_value *x = &c->inputs[0];
    tgc_value *y = &c->outputs[0];
    int64_t n = tgc_value_numel(y);
    if (n <= 0) return TGC_OK;
    const void *px = tgc_buffer_host_ptr(x->buf);
    void *py = tgc_buffer_host_ptr(y->buf);
    if (x->dtype == TGC_STRING && to == TGC_STRING) return tgc_cpu_copy_strings(c, py, px, (size_t)n);
    if (to == TGC_STRING) {
        char **slots = py;
        for (int64_t i = 0; i < n; i++) {
            char text[64];
            format_element(x->dtype, px, i, text, sizeof text);
            if (tgc_string_slot_set(&slots[i], text, strlen(text)) != TGC_OK) {
                tgc_kernel_fail(c, "%s: out of host memory for string %lld", tgc_kernel_op_name(c), (long long)i);
                return TGC_ERR_NOMEM;
            }
        }
        return TGC_OK;
    }
    const char *const *slots = px;
    for (int64_t i = 0; i < n; i++) {
        const char *s = tgc_string_slot_get(slots, (size_t)i);
        size_t len = strlen(s);
        char small[128], *buf = len < sizeof small ? small : tgc_malloc(len + 1);
        bool ok = buf != NULL && parse_element(to, trimmed(s, buf, len + 1), py, i);
        if (buf != small) tgc_free(buf);
        if (!ok)
            return tgc_kernel_fail(c, "%s: element %lld, \"%.80s%s\", is not a %s value", tgc_kernel_op_name(c),
                                   (long long)i, s, len > 80 ? "..." : "", tgc_dtype_name(to));
    }
    return TGC_OK;
}
