/* Session setup: open the listed devices, place, partition, start a pool
 * per device, build each partition's plan. */
#include "executor/session.h"

#include "devices/cpu/blas_threads.h"
#include "devices/device_registry.h"
#include "distributed/transport.h"
#include "support/alloc.h"
#include "support/diag.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static tgc_status open_device(const tgc_session *s, tgc_placer_device pd, tgc_diags *diags, tgc_device **out) {
    if (s->shared_devices) return tgc_device_registry_open(pd.kind, pd.index, diags, out);
    return tgc_backend_get(pd.kind)->open(pd.index, diags, out);
}

static tgc_status name_outputs(tgc_session *s) {
    const tgc_graph *g = s->g;
    s->output_names = tgc_calloc((size_t)g->n_outputs + 1, sizeof *s->output_names);
    if (s->output_names == NULL) return TGC_ERR_NOMEM;
    for (int i = 0; i < g->n_outputs; i++) {
        char buf[1100];
        if ((s->output_names[i] = tgc_strdup(tgc_graph_output_name(g, i, buf, sizeof buf))) == NULL)
            return TGC_ERR_NOMEM;
    }
    return TGC_OK;
}

static tgc_status open_devices(tgc_session *s, const char *devices, const tgc_session_options *opts,
                               tgc_diags *diags) {
    int n = s->compiled.n_devices;
    tgc_status st = TGC_OK;
    if (n > TGC_MAX_DEVICES)
        st = tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "bad-device-list",
                            "device list '%s' names more than %d devices", devices, TGC_MAX_DEVICES);
    if (st == TGC_OK && tgc_placer_max_task(s->compiled.devices, n) > 0) {
        s->distributed = true;
        s->rank = tgc_dist_rank();
        s->dist_id = tgc_dist_next_session();
        st = tgc_session_dist_check_list(s->compiled.devices, n, diags);
    }
    for (int i = 0; st == TGC_OK && i < n; i++) {
        bool here = s->compiled.devices[i].task == s->rank;
        /* Another process's device: a stand-in that holds nothing, for names and figures. */
        if (here) st = open_device(s, s->compiled.devices[i], diags, &s->devices[i]);
        else if ((s->devices[i] = tgc_backend_open_host(s->compiled.devices[i].index)) == NULL) st = TGC_ERR_NOMEM;
        if (st != TGC_OK) break;
        s->n_devices++;
        int threads = tgc_threads_option(s->devices[i]->name, s->devices[i]->kind, opts ? opts->threads : NULL, diags, &st);
        if (st == TGC_OK && here) st = tgc_thread_pool_create(threads, &s->pools[i]);
    }
    /* Messages name a device with its process: "/task:1/cpu0"; so do limits. */
    for (int i = 0; st == TGC_OK && s->distributed && i < s->n_devices; i++)
        tgc_placer_device_name(s->compiled.devices[i], s->devices[i]->name, sizeof s->devices[i]->name);
    /* Limits hold from the first allocation: the weights count too. */
    if (st == TGC_OK && opts != NULL && opts->memory_limits != NULL)
        st = tgc_memory_limits_apply(s->devices, s->n_devices, opts->memory_limits, diags);
    if (st == TGC_OK && opts != NULL && opts->memory_report &&
        (s->watch = tgc_memory_watch_create(s->n_devices, s->g->n_inputs_nodes)) == NULL)
        st = TGC_ERR_NOMEM;
    return st;
}

/* Memory is a hard limit: the static plan of what the session will run,
 * every device's need against what it has (executor/memory_plan_check.c),
 * before any device opens or weight loads. Symbols stay unbound: the
 * check then counts weights and kernel caches only (their sizes do not
 * depend on the feeds), and the allocators' limits hold during the run.
 * A plan that cannot be made (a shape past 2^63 bytes) is the run's to
 * report. Sessions spanning processes are not checked here (each rank
 * knows its own devices only). */
static tgc_status check_fit(tgc_session *s, const tgc_session_options *opts, tgc_diags *diags) {
    if (tgc_placer_max_task(s->compiled.devices, s->compiled.n_devices) > 0) return TGC_OK;
    tgc_memory_plan *mp = NULL;
    tgc_status st = tgc_memory_plan_build_pools(s->g, &s->compiled.parts, NULL, opts ? opts->threads : NULL,
                                                opts ? opts->memory_limits : NULL, NULL, &mp);
    if (st != TGC_OK) return st == TGC_ERR_NOMEM ? st : TGC_OK;
    tgc_memory_plan_set_inflight(mp, s->max_inflight);
    const char *limits = opts != NULL ? opts->memory_limits : NULL;
    /* A malformed limit is open_devices' to report, as it always was. */
    if (tgc_memory_limit_of(limits, "", NULL) >= 0) st = tgc_memory_fit_check(mp, limits, diags);
    tgc_memory_plan_free(mp);
    return st;
}

tgc_status tgc_session_create(const tgc_graph *g, const char *devices, const tgc_session_options *opts,
                              tgc_diags *diags, tgc_session **out) {
    return tgc_session_create_on(g, devices, opts, false, diags, out);
}

tgc_status tgc_session_create_on(const tgc_graph *g, const char *devices, const tgc_session_options *opts,
                                 bool shared_devices, tgc_diags *diags, tgc_session **out) {
    *out = NULL;
    tgc_session *s = tgc_calloc(1, sizeof *s);
    if (s == NULL) return TGC_ERR_NOMEM;
    s->g = g;
    s->shared_devices = shared_devices;
    s->soft_placement = opts != NULL && opts->soft_placement;
    s->max_iterations = opts != NULL && opts->max_iterations > 0 ? opts->max_iterations : 0;
    s->max_inflight = opts != NULL && opts->max_inflight > 0 ? opts->max_inflight : 0;
    pthread_mutex_init(&s->inflight_lock, NULL);
    pthread_cond_init(&s->inflight_cond, NULL);
    s->settings = tgc_settings_read(); /* the environment, once: before the devices open and the plans fold */
    if ((opts != NULL && opts->threads != NULL && (s->threads = tgc_strdup(opts->threads)) == NULL) ||
        (opts != NULL && opts->memory_limits != NULL &&
         (s->memory_limits = tgc_strdup(opts->memory_limits)) == NULL)) {
        tgc_session_free(s);
        return TGC_ERR_NOMEM;
    }
    tgc_compile_options co = {.optimize = opts != NULL ? opts->optimize : TGC_OPTIMIZE_DEFAULT,
                              .float16 = opts != NULL && opts->float16 != 0, .soft_placement = s->soft_placement,
                              .partition = true};
    if (opts != NULL && opts->placement == TGC_PLACEMENT_AUTO)
        tgc_compile_options_auto(&co, opts->memory_limits, opts->threads, opts->max_inflight);
    tgc_status st = tgc_compile(g, devices, &co, diags, &s->compiled);
    s->g = s->compiled.g;
    if (st == TGC_OK && s->compiled.placement.replicas != 0) { /* whole steps take turns over devices */
        st = tgc_session_replicas_create(s, g, opts, diags);
        if (st != TGC_OK) tgc_session_free(s);
        *out = st == TGC_OK ? s : NULL;
        return st;
    }
    if (st == TGC_OK) st = check_fit(s, opts, diags);
    if (st == TGC_OK) st = open_devices(s, devices, opts, diags);
    if (st == TGC_OK) {
        s->plans = tgc_calloc((size_t)s->compiled.parts.n_parts + 1, sizeof *s->plans);
        if (s->plans == NULL) st = TGC_ERR_NOMEM;
    }
    /* The caller's leave makes g's data the session's to free (g is const to every other reader). */
    if (st == TGC_OK)
        st = tgc_weight_owners_make(s, opts != NULL && opts->release_weights ? (tgc_graph *)g : NULL, &s->owners);
    for (int i = 0; st == TGC_OK && i < s->compiled.parts.n_parts; i++) {
        if (s->distributed && s->compiled.devices[s->compiled.parts.parts[i].device].task != s->rank) s->plans[i].remote = true;
        else st = tgc_plan_build(s, i, &s->plans[i], diags);
    }
    tgc_weight_owners_free(s->owners);
    s->owners = NULL;
    if (s->distributed) {
        if (opts != NULL && opts->peer_timeout_s != 0) tgc_dist_set_peer_timeout(opts->peer_timeout_s);
        tgc_status agreed = tgc_session_dist_agree(s, devices, st == TGC_OK, diags);
        if (st == TGC_OK) st = agreed;
    }
    if (st == TGC_OK) tgc_cpu_blas_threads((int)s->settings->blas_threads); /* the pools split the work */
    if (st == TGC_OK) st = name_outputs(s);
    if (st != TGC_OK) {
        tgc_session_free(s);
        return st;
    }
    *out = s;
    return TGC_OK;
}

void tgc_session_free(tgc_session *s) {
    if (s == NULL) return;
    for (int i = 0; i < s->n_replicas; i++) tgc_session_free(s->replicas[i]);
    tgc_free(s->replicas);
    for (int i = 0; s->plans != NULL && i < s->compiled.parts.n_parts; i++) tgc_plan_release(&s->plans[i]);
    tgc_free(s->plans);
    for (int i = 0; i < s->n_devices; i++) {
        tgc_thread_pool_free(s->pools[i]);
        if (s->shared_devices) tgc_device_release(s->devices[i]);
        else tgc_device_destroy(s->devices[i]);
    }
    if (s->output_names != NULL)
        for (int i = 0; i < s->g->n_outputs; i++) tgc_free(s->output_names[i]);
    tgc_free(s->output_names);
    tgc_trace_free(atomic_load(&s->trace));
    tgc_memory_watch_free(s->watch);
    tgc_free(s->threads);
    tgc_free(s->memory_limits);
    tgc_compiled_release(&s->compiled); /* after the names: s->g may be its graph */
    pthread_cond_destroy(&s->inflight_cond);
    pthread_mutex_destroy(&s->inflight_lock);
    tgc_free(s);
}

int64_t tgc_session_next_step_id(tgc_session *s) { return atomic_fetch_add(&s->last_step_id, 1) + 1; }

/* A front for replicas answers for its first (names) or all of them (devices). */
int tgc_session_output_count(const tgc_session *s) {
    return s->n_replicas ? tgc_session_output_count(s->replicas[0]) : s->g->n_outputs;
}
const char *tgc_session_output_name(const tgc_session *s, int i) {
    return s->n_replicas ? tgc_session_output_name(s->replicas[0], i) : s->output_names[i];
}

int tgc_session_input_count(const tgc_session *s) {
    return s->n_replicas ? tgc_session_input_count(s->replicas[0]) : s->g->n_inputs_nodes;
}

const char *tgc_session_input_name(const tgc_session *s, int i) {
    return s->n_replicas ? tgc_session_input_name(s->replicas[0], i) : tgc_node_label(&s->g->nodes[i]);
}

int tgc_session_device_count(const tgc_session *s) {
    return s->n_replicas ? tgc_session_replicas_device_count(s) : s->n_devices;
}
const char *tgc_session_device_name(const tgc_session *s, int i) {
    return s->n_replicas ? tgc_session_replicas_device_name(s, i) : s->devices[i]->name;
}

tgc_memory_figures tgc_session_memory(const tgc_session *s, int i) {
    if (s->n_replicas) return tgc_session_replicas_memory(s, i);
    tgc_allocator_stats st = tgc_device_stats(s->devices[i]);
    tgc_memory_figures f = {st.live_buffers, st.bytes_in_use, st.peak_bytes_in_use, st.num_allocs,
                            st.largest_alloc_size};
    return f;
}
