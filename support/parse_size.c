/* Sizes as users write them (support/parse_size.h). */
#include "support/parse_size.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

bool tgc_parse_size(const char *text, size_t len, int64_t *out) {
    const int64_t max = INT64_C(1) << 62;
    size_t i = 0;
    int64_t whole = 0;
    if (len == 0 || !isdigit((unsigned char)text[0])) return false;
    for (; i < len && isdigit((unsigned char)text[i]); i++) {
        if (whole > max / 10) return false;
        whole = whole * 10 + (text[i] - '0');
    }
    double frac = 0, scale = 0.1;
    if (i < len && text[i] == '.') {
        if (++i >= len || !isdigit((unsigned char)text[i])) return false;
        for (; i < len && isdigit((unsigned char)text[i]); i++, scale /= 10) frac += (text[i] - '0') * scale;
    }
    char unit[8] = "";
    size_t ulen = len - i;
    if (ulen >= sizeof unit) return false;
    for (size_t k = 0; k < ulen; k++) unit[k] = (char)tolower((unsigned char)text[i + k]);
    static const struct {
        const char *name;
        int64_t bytes;
    } units[] = {{"", 1},
                 {"b", 1},
                 {"kb", 1000},
                 {"mb", 1000000},
                 {"gb", 1000000000},
                 {"tb", INT64_C(1000000000000)},
                 {"kib", INT64_C(1) << 10},
                 {"mib", INT64_C(1) << 20},
                 {"gib", INT64_C(1) << 30},
                 {"tib", INT64_C(1) << 40}};
    for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
        if (strcmp(unit, units[u].name) != 0) continue;
        if (whole > max / units[u].bytes) return false;
        *out = whole * units[u].bytes + (int64_t)(frac * (double)units[u].bytes);
        return *out <= max;
    }
    return false;
}

const char *tgc_format_size(int64_t bytes, char *buf, size_t size) {
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 0) {
        snprintf(buf, size, "n/a");
        return buf;
    }
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 6) {
        v /= 1024;
        u++;
    }
    snprintf(buf, size, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
    return buf;
}
