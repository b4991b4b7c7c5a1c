/* Memory is a hard limit: each device of a plan, what it would need
 * (weights, the kernels' own layouts of them, its partition's planned
 * activation peak, workspaces) against what it has (its --memory-limit,
 * else the memory it reports), less a margin (TGC_MEMORY_MARGIN_PERCENT).
 * A plan some device cannot hold is refused with one message naming, per
 * device, the need by category and what it has, and the largest tensor
 * live at the busiest step of a device whose activations do not fit: a
 * [1e5, 1e5, 1e5] float32 tensor should not plan 4 PB without a word.
 * Sessions check before anything is loaded; `tgc compile --dump memory`
 * gives the same verdict. */
#include "executor/memory_plan.h"

#include "partition/compile.h"

#include "devices/backend.h"
#include "support/alloc.h"
#include "support/checked.h"

#include "support/diag.h"
#include "support/parse_size.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* a + b, or INT64_MAX past it. */
static int64_t add_sat(int64_t a, int64_t b) {
    int64_t r;
    return tgc_checked_add_i64(a, b, &r) ? r : INT64_MAX;
}

/* Whether the plan took any symbol as 1 for want of a binding. */
static bool guessed(const tgc_memory_plan *mp) {
    for (int32_t i = 0; i < mp->g->n_symbols; i++)
        if (mp->defaulted[i]) return true;
    return false;
}

tgc_status tgc_memory_needs(const tgc_memory_plan *mp, const char *memory_limits, tgc_memory_need *out,
                            tgc_diags *diags) {
    if (memory_limits != NULL && tgc_memory_limit_of(memory_limits, "", diags) < 0) return TGC_ERR_INVALID;
    bool partial = guessed(mp);
    int64_t host_total = -1, shared_need = 0;
    int n_shared = 0;
    for (int p = 0; p < mp->parts->n_parts; p++) {
        const tgc_memory_space *sp = &mp->spaces[2 * p];
        tgc_memory_need *nd = &out[p];
        memset(nd, 0, sizeof *nd);
        snprintf(nd->device, sizeof nd->device, "%s", sp->name);
        nd->part = p;
        nd->weights = sp->weights_bytes;
        nd->caches = sp->caches_bytes;
        nd->partial = partial;
        if (!partial) {
            nd->activations = sp->arena_bytes;
            /* Nodes run at once on a pool of `threads` threads: the largest that many workspaces. */
            for (int32_t k = 0; k < sp->threads && k < sp->n_steps; k++)
                nd->workspaces = add_sat(nd->workspaces, sp->workspaces[k]);
            nd->staging = sp->recv_bytes;
        }
        nd->need = add_sat(add_sat(nd->weights, nd->caches), add_sat(nd->activations, nd->workspaces));
        int64_t limit = tgc_memory_limit_of(memory_limits, sp->name, diags);
        tgc_device_memory_info info;
        tgc_device_kind kind = mp->parts->devices[mp->parts->parts[p].device].kind;
        if (limit > 0) {
            nd->has = limit;
            nd->limited = true;
        } else {
            nd->has = tgc_device_memory(sp->name, &info) == TGC_OK ? info.total_bytes : -1;
            nd->shared = tgc_kind_host_memory(kind) && nd->has > 0;
        }
        if (nd->shared) {
            host_total = nd->has;
            shared_need = add_sat(shared_need, nd->need);
            n_shared++;
        }
        nd->usable = nd->has > 0 ? tgc_memory_usable(nd->has) : -1;
        nd->fits = nd->usable < 0 || nd->need <= nd->usable;
    }
    /* Devices in host memory without a limit hold their needs in the same memory. */
    int64_t host_usable = tgc_memory_usable(host_total);
    for (int p = 0; n_shared > 1 && p < mp->parts->n_parts; p++)
        if (out[p].shared) out[p].fits = shared_need <= host_usable;
    return TGC_OK;
}

/* The largest tensor live at sp's busiest step, for the message. */
static void largest_live(const tgc_memory_plan *mp, const tgc_memory_space *sp, char *what, size_t size) {
    char b[32];
    int32_t live[1];
    const tgc_graph *pg = mp->parts->parts[sp->part].graph;
    if (sp->busiest_step < 0 || tgc_memory_space_live_at(sp, sp->busiest_step, live, 1) != 1) return;
    const tgc_memory_tensor *t = &sp->tensors[live[0]];
    const tgc_node *n = &pg->nodes[t->node];
    char shape[200] = "[";
    for (int d = 0; d < t->rank; d++)
        snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%" PRId64, d ? ", " : "", t->dims[d]);
    strcat(shape, "]");
    char name[160];
    if (t->port == 0) snprintf(name, sizeof name, "%s", n->name);
    else snprintf(name, sizeof name, "%s:%d", n->name, (int)t->port);
    snprintf(what, size, "; the largest tensor live at its busiest step is '%s' (%s %s, %" PRId64 " bytes, %s)", name,
             tgc_dtype_name(t->dtype), shape, t->bytes, tgc_format_size(t->bytes, b, sizeof b));
}

/* One device's line of the refusal. */
static size_t need_line(const tgc_memory_plan *mp, const tgc_memory_need *nd, char *buf, size_t size) {
    char a[32], h[32], u[32], what[640] = "";
    if (!nd->fits && !nd->partial) largest_live(mp, &mp->spaces[2 * nd->part], what, sizeof what);
    int n = snprintf(buf, size,
                     "\n  %s%s needs %" PRId64 " bytes (%s): weights %" PRId64 " + kernel caches %" PRId64
                     " + activations %" PRId64 " (_Recv staging %" PRId64 " of them) + workspaces %" PRId64
                     "%s; it has %s%s (less the %d%% margin: %s usable)%s",
                     nd->device, nd->fits ? "" : " [does not fit]", nd->need, tgc_format_size(nd->need, a, sizeof a),
                     nd->weights, nd->caches, nd->activations, nd->staging, nd->workspaces,
                     nd->partial ? " (activations and workspaces not counted: shape symbols unbound)" : "",
                     nd->has < 0 ? "unknown memory" : tgc_format_size(nd->has, h, sizeof h),
                     nd->limited ? " by --memory-limit" : nd->shared ? " of host memory, shared" : "",
                     TGC_MEMORY_MARGIN_PERCENT,
                     nd->usable < 0 ? "-" : tgc_format_size(nd->usable, u, sizeof u), what);
    return n > 0 ? (size_t)n : 0;
}

/* The check; `note`: say the figures when it fits too. */
static tgc_status fit_check(const tgc_memory_plan *mp, const char *memory_limits, bool note, tgc_diags *diags) {
    int np = mp->parts->n_parts;
    tgc_memory_need *needs = tgc_calloc((size_t)np + 1, sizeof *needs);
    if (needs == NULL) return TGC_ERR_NOMEM;
    tgc_status st = tgc_memory_needs(mp, memory_limits, needs, diags);
    bool fits = true;
    for (int p = 0; st == TGC_OK && p < np; p++) fits &= needs[p].fits;
    if (st == TGC_OK) {
        size_t size = 1024 + (size_t)np * 1200, at = 0;
        char *msg = tgc_malloc(size);
        if (msg == NULL) {
            tgc_free(needs);
            return TGC_ERR_NOMEM;
        }
        msg[0] = '\0';
        for (int p = 0; p < np && at < size; p++) at += need_line(mp, &needs[p], msg + at, size - at);
        if (!fits)
            st = tgc_diag_error(diags, mp->g->path, (tgc_srcpos){0, 0}, "over-memory",
                                "the plan cannot fit; nothing was loaded. Per device (bytes):%s\n  Lower the need "
                                "(--devices with more devices, smaller inputs) or raise --memory-limit "
                                "(docs/memory.md)",
                                msg);
        else if (note)
            tgc_diag_add(diags, TGC_SEV_NOTE, mp->g->path, (tgc_srcpos){0, 0}, "memory-fits",
                         "the plan fits. Per device (bytes):%s", msg);
        tgc_free(msg);
    }
    tgc_free(needs);
    return st;
}

tgc_status tgc_memory_plan_check(const tgc_memory_plan *mp, const char *memory_limits, tgc_diags *diags) {
    if (memory_limits != NULL && tgc_memory_limit_of(memory_limits, "", diags) < 0) return TGC_ERR_INVALID;
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
    return fit_check(mp, memory_limits, true, diags);
}

tgc_status tgc_memory_fit_check(const tgc_memory_plan *mp, const char *memory_limits, tgc_diags *diags) {
    return fit_check(mp, memory_limits, false, diags);
}

tgc_status tgc_compile_memory_misses(const tgc_compiled *c, const tgc_compile_options *o, int64_t *misses) {
    for (int d = 0; d < c->n_devices; d++) misses[d] = 0;
    if (!c->partitioned || tgc_placer_max_task(c->devices, c->n_devices) > 0) return TGC_OK; /* as check_fit */
    tgc_memory_plan *mp = NULL;
    tgc_status st = tgc_memory_plan_build_pools(c->g, &c->parts, NULL, o->threads, o->memory_limits, NULL, &mp);
    if (st != TGC_OK) return st == TGC_ERR_NOMEM ? st : TGC_OK; /* the run reports a plan that cannot be made */
    tgc_memory_plan_set_inflight(mp, o->inflight);
    int np = c->parts.n_parts;
    tgc_memory_need *needs = tgc_calloc((size_t)np + 1, sizeof *needs);
    st = needs != NULL ? tgc_memory_needs(mp, o->memory_limits, needs, NULL) : TGC_ERR_NOMEM;
    for (int p = 0; st == TGC_OK && p < np; p++)
        if (!needs[p].fits && needs[p].usable > 0 && !needs[p].partial)
            misses[c->parts.parts[p].device] = needs[p].need - needs[p].usable;
    tgc_free(needs);
    tgc_memory_plan_free(mp);
    return st == TGC_ERR_NOMEM ? st : TGC_OK;
}
