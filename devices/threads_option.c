/* The threads option ("cpu0=2,gpu0=1") of sessions, eager contexts,
 * memory plans and automatic placement (backend.h). */
#include "devices/backend.h"

#include "support/diag.h"

#include <stdlib.h>
#include <string.h>

int tgc_threads_option(const char *name, tgc_device_kind kind, const char *spec, tgc_diags *diags, tgc_status *st) {
    int dflt = tgc_backend_get(kind)->default_threads();
    for (const char *p = spec; p != NULL && *p != '\0';) {
        size_t len = strcspn(p, ",");
        const char *eq = memchr(p, '=', len);
        char *end = NULL;
        long n = eq != NULL ? strtol(eq + 1, &end, 10) : 0;
        if (eq == NULL || end != p + len || n < 1 || n > 256) {
            *st = tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "bad-threads",
                                 "threads take DEVICE=N[,DEVICE=N...] with N from 1 to 256, got '%.*s'", (int)len,
                                 p);
            return dflt;
        }
        char canonical[32];
        if (strcmp(tgc_device_name_canonical(p, (size_t)(eq - p), canonical, sizeof canonical), name) == 0) return (int)n;
        p += len;
        if (*p == ',') p++;
    }
    return dflt;
}
