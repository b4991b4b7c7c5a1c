/* Memory limits and capacities (memory_limit.h). */
#include "devices/memory_limit.h"

#include "devices/backend.h"
#include "support/parse_size.h"

#include <string.h>

int64_t tgc_memory_limit_of(const char *spec, const char *name, tgc_diags *diags) {
    for (const char *p = spec; p != NULL && *p != '\0';) {
        size_t len = strcspn(p, ",");
        const char *eq = memchr(p, '=', len);
        int64_t bytes = 0;
        if (eq == NULL || eq == p || !tgc_parse_size(eq + 1, len - (size_t)(eq + 1 - p), &bytes) || bytes < 1) {
            if (diags != NULL)
                tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "bad-memory-limit",
                               "--memory-limit takes DEV=SIZE[,DEV=SIZE...] (SIZE as 64MiB, 2GB), got '%.*s'",
                               (int)len, p);
            return -1;
        }
        char dev[32];
        tgc_device_name_canonical(p, (size_t)(eq - p), dev, sizeof dev);
        if (strcmp(dev, name) == 0) return bytes;
        p += len;
        if (*p == ',') p++;
    }
    return 0;
}

int64_t tgc_memory_capacity(const char *spec, const char *name, int kind, tgc_diags *diags) {
    int64_t limit = tgc_memory_limit_of(spec, name, diags);
    if (limit != 0) return limit < 0 ? -1 : tgc_memory_usable(limit);
    const tgc_backend *b = tgc_backend_get(kind);
    if (b == NULL || b->list == NULL) return 0;
    tgc_device_info info[TGC_MAX_DEVICES_LISTED];
    int n = b->list(info, TGC_MAX_DEVICES_LISTED);
    /* its own entry ("gpu1"), else the kind's one entry for all ("cpu": the host's memory) */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n; i++)
            if (strcmp(info[i].name, pass == 0 ? name : b->prefix) == 0)
                return info[i].total_memory > 0 ? tgc_memory_usable(info[i].total_memory) : 0;
    return 0;
}
