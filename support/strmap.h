/* A map from strings to int32 values (open addressing, linear probing, FNV-1a
 * hashing). Keys are copied in and owned by the map.
 *
 * Example usage:
 *     tgc_strmap m = {0};
 *     if (tgc_strmap_put(&m, "conv1", 7) != TGC_OK) ...
 *     int32_t id = tgc_strmap_get(&m, "conv1");   // 7, or -1 if absent
 *     tgc_strmap_release(&m);
 */
#ifndef TGC_SUPPORT_STRMAP_H
#define TGC_SUPPORT_STRMAP_H

#include "tgc.h"

typedef struct tgc_strmap {
    char **keys;
    int32_t *values;
    size_t count, cap; /* cap is 0 or a power of two */
} tgc_strmap;

/* Sets key -> value (replacing an existing value). TGC_OK or TGC_ERR_NOMEM. */
tgc_status tgc_strmap_put(tgc_strmap *m, const char *key, int32_t value);

/* Returns the value for `key`, or -1 when absent. */
int32_t tgc_strmap_get(const tgc_strmap *m, const char *key);

/* Frees keys and tables; leaves *m zeroed. */
void tgc_strmap_release(tgc_strmap *m);

#endif
