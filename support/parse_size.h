/* Sizes as users write them: in --memory-limit, --load-limits and the
 * options structs that take text.
 *
 * Example usage:
 *     int64_t bytes;
 *     if (!tgc_parse_size("64MiB", 5, &bytes)) ...   // bytes == 67108864
 */
#ifndef TGC_SUPPORT_PARSE_SIZE_H
#define TGC_SUPPORT_PARSE_SIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The bytes text[0..len) names: digits with an optional fraction, then an
 * optional unit, case-insensitive: none or B, KB MB GB TB (powers of 1000),
 * KiB MiB GiB TiB (powers of 1024). False for anything else or above 2^62
 * bytes; *out is set only on success. */
bool tgc_parse_size(const char *text, size_t len, int64_t *out);

/* Writes `bytes` as people read sizes into buf and returns buf: "512 B",
 * "12.5 KiB", "3.1 MiB", up to EiB (powers of 1024, one decimal); "n/a"
 * for a negative count (unknown). */
const char *tgc_format_size(int64_t bytes, char *buf, size_t size);

#endif
