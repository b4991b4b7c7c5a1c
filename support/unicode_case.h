/* Simple (one code point to one code point) upper and lower case mapping,
 * without the C library's locale: the same answer in every process and
 * thread, whatever setlocale says.
 *
 * Covered, from UnicodeData.txt's simple mappings: Basic Latin, Latin-1
 * Supplement, Latin Extended-A, Greek (the modern letters with their
 * tonos forms; final sigma upper-cases to capital sigma), Cyrillic
 * (U+0400-U+04FF). Every other code point maps to itself, as do the
 * letters of those blocks whose case pair is outside them or is not one
 * code point (U+00DF sharp s, U+0130, U+0131, U+0149, U+017F). That is the
 * case behaviour of the "en_US" locale for the scripts the covered blocks
 * write; StringNormalizer (ONNX opset 10) is the user.
 *
 * Example usage:
 *     uint32_t up = tgc_unicode_upper(0x00E9);   // U+00C9
 */
#ifndef TGC_SUPPORT_UNICODE_CASE_H
#define TGC_SUPPORT_UNICODE_CASE_H

#include <stdint.h>

uint32_t tgc_unicode_upper(uint32_t cp);
uint32_t tgc_unicode_lower(uint32_t cp);

#endif
