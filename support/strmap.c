/* Open-addressing string map; the load factor stays at or below 1/2. */
#include "support/strmap.h"

#include "support/alloc.h"

#include <string.h>

static uint64_t hash_string(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static size_t find_slot(char *const *keys, size_t cap, const char *key) {
    size_t i = (size_t)hash_string(key) & (cap - 1);
    while (keys[i] != NULL && strcmp(keys[i], key) != 0) i = (i + 1) & (cap - 1);
    return i;
}

static tgc_status grow(tgc_strmap *m) {
    size_t cap = m->cap ? m->cap * 2 : 16;
    char **keys = tgc_calloc(cap, sizeof *keys);
    int32_t *values = tgc_calloc(cap, sizeof *values);
    if (keys == NULL || values == NULL) {
        tgc_free(keys);
        tgc_free(values);
        return TGC_ERR_NOMEM;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (m->keys[i] == NULL) continue;
        size_t j = find_slot(keys, cap, m->keys[i]);
        keys[j] = m->keys[i];
        values[j] = m->values[i];
    }
    tgc_free(m->keys);
    tgc_free(m->values);
    m->keys = keys;
    m->values = values;
    m->cap = cap;
    return TGC_OK;
}

tgc_status tgc_strmap_put(tgc_strmap *m, const char *key, int32_t value) {
    if (2 * (m->count + 1) > m->cap && grow(m) != TGC_OK) return TGC_ERR_NOMEM;
    size_t i = find_slot(m->keys, m->cap, key);
    if (m->keys[i] == NULL) {
        m->keys[i] = tgc_strdup(key);
        if (m->keys[i] == NULL) return TGC_ERR_NOMEM;
        m->count++;
    }
    m->values[i] = value;
    return TGC_OK;
}

int32_t tgc_strmap_get(const tgc_strmap *m, const char *key) {
    if (m->cap == 0) return -1;
    size_t i = find_slot(m->keys, m->cap, key);
    return m->keys[i] ? m->values[i] : -1;
}

void tgc_strmap_release(tgc_strmap *m) {
    for (size_t i = 0; i < m->cap; i++) tgc_free(m->keys[i]);
    tgc_free(m->keys);
    tgc_free(m->values);
    memset(m, 0, sizeof *m);
}
