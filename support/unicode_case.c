/* Simple case mapping over the blocks unicode_case.h names. Each table row
 * is a run of code points [first, last] whose case partner is cp + delta
 * (every code point of the run) or, for alternating runs (stride 2), the
 * even/odd neighbour. */
#include "support/unicode_case.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct case_run {
    uint32_t first, last;
    int32_t delta; /* partner = cp + delta (stride 1); for stride 2, the partner is cp + delta at the run's parity */
    int stride;    /* 1: every cp in the run; 2: cp of the run's first's parity */
} case_run;

/* Lower-case letters and their upper partners (partner = cp + delta). */
static const case_run lower_runs[] = {
    {0x0061, 0x007A, -32, 1},  /* a-z */
    {0x00E0, 0x00F6, -32, 1},  /* a grave .. o diaeresis */
    {0x00F8, 0x00FE, -32, 1},  /* o stroke .. thorn */
    {0x00FF, 0x00FF, 0x79, 1}, /* y diaeresis -> U+0178 */
    {0x0101, 0x012F, -1, 2},   /* Latin Extended-A pairs: upper even, lower odd */
    {0x0133, 0x0137, -1, 2},
    {0x013A, 0x0148, -1, 2},   /* upper odd, lower even */
    {0x014B, 0x0177, -1, 2},
    {0x017A, 0x017E, -1, 2},
    {0x03AC, 0x03AC, -38, 1},  /* alpha tonos -> U+0386 */
    {0x03AD, 0x03AF, -37, 1},  /* epsilon, eta, iota tonos */
    {0x03B1, 0x03C1, -32, 1},  /* alpha .. rho */
    {0x03C2, 0x03C2, -31, 1},  /* final sigma -> capital sigma */
    {0x03C3, 0x03CB, -32, 1},  /* sigma .. upsilon dialytika */
    {0x03CC, 0x03CC, -64, 1},  /* omicron tonos -> U+038C */
    {0x03CD, 0x03CE, -63, 1},  /* upsilon, omega tonos */
    {0x0430, 0x044F, -32, 1},  /* Cyrillic a .. ya */
    {0x0450, 0x045F, -80, 1},  /* Cyrillic ie grave .. dzhe */
    {0x0461, 0x0481, -1, 2},
    {0x048B, 0x04BF, -1, 2},
    {0x04C2, 0x04CE, -1, 2},
    {0x04CF, 0x04CF, -15, 1},  /* palochka -> U+04C0 */
    {0x04D1, 0x04FF, -1, 2},
};

/* Upper-case letters and their lower partners. */
static const case_run upper_runs[] = {
    {0x0041, 0x005A, 32, 1},
    {0x00C0, 0x00D6, 32, 1},
    {0x00D8, 0x00DE, 32, 1},
    {0x0100, 0x012E, 1, 2},
    {0x0132, 0x0136, 1, 2},
    {0x0139, 0x0147, 1, 2},
    {0x014A, 0x0176, 1, 2},
    {0x0178, 0x0178, -0x79, 1},
    {0x0179, 0x017D, 1, 2},
    {0x0386, 0x0386, 38, 1},
    {0x0388, 0x038A, 37, 1},
    {0x038C, 0x038C, 64, 1},
    {0x038E, 0x038F, 63, 1},
    {0x0391, 0x03A1, 32, 1},
    {0x03A3, 0x03AB, 32, 1},
    {0x0400, 0x040F, 80, 1},
    {0x0410, 0x042F, 32, 1},
    {0x0460, 0x0480, 1, 2},
    {0x048A, 0x04BE, 1, 2},
    {0x04C0, 0x04C0, 15, 1},
    {0x04C1, 0x04CD, 1, 2},
    {0x04D0, 0x04FE, 1, 2},
};

static uint32_t map(const case_run *runs, size_t n, uint32_t cp) {
    for (size_t i = 0; i < n; i++) {
        const case_run *r = &runs[i];
        if (cp < r->first || cp > r->last) continue;
        if (r->stride == 2 && (cp - r->first) % 2 != 0) return cp;
        return (uint32_t)((int64_t)cp + r->delta);
    }
    return cp;
}

uint32_t tgc_unicode_upper(uint32_t cp) { return map(lower_runs, sizeof lower_runs / sizeof lower_runs[0], cp); }

uint32_t tgc_unicode_lower(uint32_t cp) { return map(upper_runs, sizeof upper_runs / sizeof upper_runs[0], cp); }
