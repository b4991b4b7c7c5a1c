/* Replicas (session.h): when automatic placement for throughput chose them
 * (tgc_placement.replicas), the session is a front for one session per
 * chosen device, each running the whole graph there, and each step goes to
 * the replica with the fewest steps in flight (equals taken in turn): data-parallel serving over devices that each hold the model. */
#include "executor/session.h"

#include "devices/backend.h"
#include "devices/memory_limit.h"
#include "support/alloc.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* "DEV=VALUE" for device `name` into buf, or "" when `value` < 0. */
static const char *one_entry(char *buf, size_t size, const char *name, int64_t value) {
    if (value < 0) buf[0] = '\0';
    else snprintf(buf, size, "%s=%" PRId64, name, value);
    return buf;
}

tgc_status tgc_session_replicas_create(tgc_session *s, const tgc_graph *g, const tgc_session_options *opts,
                                       tgc_diags *diags) {
    const tgc_compiled *cc = &s->compiled;
    uint64_t mask = cc->placement.replicas;
    s->replicas = tgc_calloc((size_t)cc->n_devices + 1, sizeof *s->replicas);
    if (s->replicas == NULL) return TGC_ERR_NOMEM;
    int per_replica = 0, count = 0;
    for (int d = 0; d < cc->n_devices; d++) count += (mask >> d) & 1u;
    if (opts->max_inflight > 0) per_replica = (opts->max_inflight + count - 1) / count;
    for (int d = 0; d < cc->n_devices; d++) {
        if (!((mask >> d) & 1u)) continue;
        char name[64], threads[96], limit[96];
        tgc_placer_device_name(cc->devices[d], name, sizeof name);
        tgc_status st = TGC_OK;
        int width = tgc_threads_option(name, cc->devices[d].kind, opts->threads, NULL, &st);
        int64_t bytes = opts->memory_limits != NULL ? tgc_memory_limit_of(opts->memory_limits, name, NULL) : 0;
        tgc_session_options one = *opts;
        one.placement = TGC_PLACEMENT_RULES; /* the whole graph on its one device */
        one.release_weights = 0;             /* the replicas share the caller's graph */
        one.max_inflight = per_replica;
        one.threads = one_entry(threads, sizeof threads, name, st == TGC_OK ? width : -1);
        one.memory_limits = bytes > 0 ? one_entry(limit, sizeof limit, name, bytes) : NULL;
        if (one.threads[0] == '\0') one.threads = NULL;
        st = tgc_session_create_on(g, name, &one, s->shared_devices, diags, &s->replicas[s->n_replicas]);
        if (st != TGC_OK) return st;
        tgc_session *r = s->replicas[s->n_replicas++];
        /* the front's forecast for this device, for the replica's report */
        if (cc->placement.forecast != NULL && r->compiled.placement.forecast == NULL &&
            (r->compiled.placement.forecast = tgc_malloc(sizeof *r->compiled.placement.forecast)) != NULL)
            *r->compiled.placement.forecast = cc->placement.forecast[d];
    }
    return TGC_OK;
}

tgc_session *tgc_session_replica_for_step(tgc_session *s) {
    unsigned first = atomic_fetch_add(&s->next_replica, 1u) % (unsigned)s->n_replicas;
    tgc_session *best = NULL;
    int least = 0;
    for (int k = 0; k < s->n_replicas; k++) {
        tgc_session *r = s->replicas[(first + (unsigned)k) % (unsigned)s->n_replicas];
        int now = 0;
        tgc_session_steps_in_flight(r, &now, NULL);
        if (best == NULL || now < least) least = now, best = r;
    }
    return best;
}

/* Replica and device index of the front's device i. */
static const tgc_session *replica_of(const tgc_session *s, int *i) {
    for (int r = 0; r < s->n_replicas; r++) {
        int n = tgc_session_device_count(s->replicas[r]);
        if (*i < n) return s->replicas[r];
        *i -= n;
    }
    return NULL;
}

int tgc_session_replicas_device_count(const tgc_session *s) {
    int n = 0;
    for (int r = 0; r < s->n_replicas; r++) n += tgc_session_device_count(s->replicas[r]);
    return n;
}

const char *tgc_session_replicas_device_name(const tgc_session *s, int i) {
    const tgc_session *r = replica_of(s, &i);
    return r != NULL ? tgc_session_device_name(r, i) : NULL;
}

tgc_memory_figures tgc_session_replicas_memory(const tgc_session *s, int i) {
    const tgc_session *r = replica_of(s, &i);
    tgc_memory_figures none = {0};
    return r != NULL ? tgc_session_memory(r, i) : none;
}

tgc_status tgc_session_replicas_report(const tgc_session *s, FILE *out) {
    fprintf(out, "replicas: whole steps take turns over");
    for (int r = 0; r < s->n_replicas; r++)
        fprintf(out, "%s %s", r ? "," : "", tgc_session_device_name(s->replicas[r], 0));
    fprintf(out, " (automatic placement for throughput: each holds the whole graph)\n");
    for (int r = 0; r < s->n_replicas; r++) {
        tgc_status st = tgc_session_memory_report(s->replicas[r], out);
        if (st != TGC_OK) return st;
    }
    return TGC_OK;
}

tgc_status tgc_session_replicas_trace_write(tgc_session *s, const char *path, tgc_diags *diags) {
    tgc_status st = TGC_OK;
    for (int r = 0; st == TGC_OK && r < s->n_replicas; r++) {
        const char *device = tgc_session_device_name(s->replicas[r], 0);
        size_t len = strlen(path) + strlen(device) + 7; /* ".", ".json", NUL */
        char *other = r > 0 ? tgc_malloc(len) : NULL;
        if (r > 0 && other == NULL) return TGC_ERR_NOMEM;
        if (other != NULL) snprintf(other, len, "%s.%s.json", path, device);
        st = tgc_session_trace_write(s->replicas[r], r == 0 ? path : other, diags);
        tgc_free(other);
    }
    return st;
}
