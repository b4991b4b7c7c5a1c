/* String slot arrays: deep copies and frees (see string_slots.h). */
#include "support/string_slots.h"

#include "support/alloc.h"

#include <string.h>

void tgc_string_slots_free(char **slots, size_t n) {
    if (slots == NULL) return;
    for (size_t i = 0; i < n; i++) {
        tgc_free(slots[i]);
        slots[i] = NULL;
    }
}

tgc_status tgc_string_slot_set(char **dst, const char *s, size_t len) {
    tgc_free(*dst);
    *dst = NULL;
    if (len == 0) return TGC_OK;
    *dst = tgc_strndup(s, len);
    return *dst != NULL ? TGC_OK : TGC_ERR_NOMEM;
}

tgc_status tgc_string_slots_copy(char **dst, const char *const *src, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const char *s = src[i] != NULL ? src[i] : "";
        if (tgc_string_slot_set(&dst[i], s, strlen(s)) != TGC_OK) return TGC_ERR_NOMEM;
    }
    return TGC_OK;
}

size_t tgc_string_slots_bytes(const char *const *slots, size_t n) {
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        if (slots[i] != NULL) total += strlen(slots[i]) + 1;
    return total;
}
