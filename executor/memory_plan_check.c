/* A planned peak that cannot fit: each memory of a plan (a partition's
 * device, its host memory) against what the device has on this machine
 * and the limit the user means to set, with a warning that names the
 * largest tensor live at the busiest step, at its node in the graph file:
 * a [1e5, 1e5, 1e5] float32 tensor should not plan 4 PB without a word. */
#include "executor/memory_plan.h"

#include "support/diag.h"
#include "support/parse_size.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* "3.6 PiB" for n bytes. */
static const char *human(int64_t n, char *buf, size_t size) {
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = (double)n;
    int u = 0;
    while (v >= 1024 && u < 6) {
        v /= 1024;
        u++;
    }
    snprintf(buf, size, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
    return buf;
}

/* The limit "DEV=SIZE,..." gives device `name` (cpu is cpu0, gpu gpu0), 0
 * for none; -1 (an error in diags) when the spec is malformed. */
static int64_t limit_for(const char *spec, const char *name, tgc_diags *diags) {
    for (const char *p = spec; p != NULL && *p != '\0';) {
        size_t len = strcspn(p, ",");
        const char *eq = memchr(p, '=', len);
        int64_t bytes = 0;
        if (eq == NULL || eq == p || !tgc_parse_size(eq + 1, len - (size_t)(eq + 1 - p), &bytes) || bytes < 1) {
            tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "bad-memory-limit",
                           "--memory-limit takes DEV=SIZE[,DEV=SIZE...] (SIZE as 64MiB, 2GB), got '%.*s'", (int)len,
                           p);
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

/* One memory: warns when weights + planned peak pass `total` or `limit`
 * (each ignored when <= 0). */
static void check_space(const tgc_memory_plan *mp, const tgc_memory_space *sp, int64_t total, int64_t limit,
                        tgc_diags *diags) {
    int64_t need = sp->weights_bytes + sp->arena_bytes;
    if (need < sp->arena_bytes) need = INT64_MAX; /* wrapped */
    bool over_total = total > 0 && need > total, over_limit = limit > 0 && need > limit;
    if (!over_total && !over_limit) return;
    char a[32], b[32], what[640] = "no tensor";
    const tgc_graph *pg = mp->parts->parts[sp->part].graph;
    int32_t live[1];
    tgc_srcpos pos = {0, 0};
    if (sp->busiest_step >= 0 && tgc_memory_space_live_at(sp, sp->busiest_step, live, 1) == 1) {
        const tgc_memory_tensor *t = &sp->tensors[live[0]];
        const tgc_node *n = &pg->nodes[t->node];
        char shape[200] = "[";
        for (int d = 0; d < t->rank; d++)
            snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%" PRId64, d ? ", " : "", t->dims[d]);
        strcat(shape, "]");
        char name[160];
        if (t->port == 0) snprintf(name, sizeof name, "%s", n->name);
        else snprintf(name, sizeof name, "%s:%d", n->name, (int)t->port);
        snprintf(what, sizeof what, "tensor '%s' (%s %s, %" PRId64 " bytes, %s)", name, tgc_dtype_name(t->dtype), shape,
                 t->bytes, human(t->bytes, b, sizeof b));
        pos = n->pos;
    }
    char which[96], lim[32];
    if (over_limit) snprintf(which, sizeof which, "its --memory-limit of %s", human(limit, lim, sizeof lim));
    else snprintf(which, sizeof which, "the %s this machine has", human(total, lim, sizeof lim));
    tgc_diag_add(diags, TGC_SEV_WARNING, mp->g->path, pos, "over-memory",
                 "%s: the planned peak, %" PRId64 " bytes (%s: weights and tensors), is above %s; the largest "
                 "tensor live at its busiest step is %s",
                 sp->name, need, human(need, a, sizeof a), which, what);
}

tgc_status tgc_memory_plan_check(const tgc_memory_plan *mp, const char *memory_limits, tgc_diags *diags) {
    if (memory_limits != NULL && limit_for(memory_limits, "", diags) < 0) return TGC_ERR_INVALID;
    for (const char *p = memory_limits; p != NULL && *p != '\0';) { /* every named device must be planned */
        size_t len = strcspn(p, ",");
        const char *eq = memchr(p, '=', len);
        char dev[32];
        tgc_device_name_canonical(p, (size_t)(eq - p), dev, sizeof dev);
        bool found = false;
        for (int k = 0; k < mp->n_spaces && !found; k += 2) found = strcmp(mp->spaces[k].name, dev) == 0;
        if (!found)
            return tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "bad-memory-limit",
                                  "--memory-limit: '%s' is not a device of this plan (%s)", dev,
                                  mp->device_list ? mp->device_list : "its devices");
        p += len;
        if (*p == ',') p++;
    }
    for (int k = 0; k < mp->n_spaces; k++) {
        const tgc_memory_space *sp = &mp->spaces[k];
        tgc_device_memory_info info;
        int64_t total = tgc_device_memory(sp->host ? "host" : sp->name, &info) == TGC_OK ? info.total_bytes : -1;
        check_space(mp, sp, total, sp->host ? 0 : limit_for(memory_limits, sp->name, diags), diags);
    }
    return TGC_OK;
}
