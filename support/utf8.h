/* UTF-8 encoding and decoding of Unicode code points (RFC 3629).
 *
 * Example usage:
 *     size_t i = 0;
 *     while (i < len) { uint32_t cp = tgc_utf8_next(s, len, &i); ... }
 *     char buf[4]; size_t n = tgc_utf8_put(cp, buf);
 */
#ifndef TGC_SUPPORT_UTF8_H
#define TGC_SUPPORT_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The replacement character, for bytes that are not UTF-8. */
#define TGC_UTF8_REPLACEMENT 0xFFFDu

/* Decodes the code point at s[*i] (i < len) and advances *i past it. A byte
 * that does not start a valid, shortest-form sequence of a scalar value
 * (no surrogates, <= U+10FFFF) gives TGC_UTF8_REPLACEMENT and advances one
 * byte: decoding never fails and always moves on. */
uint32_t tgc_utf8_next(const char *s, size_t len, size_t *i);

/* True when `cp` is a Unicode scalar value (<= U+10FFFF, not a surrogate). */
bool tgc_utf8_is_scalar(uint32_t cp);

/* Writes the UTF-8 bytes of scalar value `cp` into out[0..4) and returns
 * their count (1 to 4); a non-scalar cp is written as U+FFFD. */
size_t tgc_utf8_put(uint32_t cp, char out[4]);

/* The number of code points in s[0..len) as tgc_utf8_next counts them. */
size_t tgc_utf8_count(const char *s, size_t len);

#endif
