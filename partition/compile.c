/* The compile driver (compile.h): optimize -> place -> partition. */
#include "partition/compile.h"

#include "devices/backend.h"
#include "devices/memory_limit.h"
#include "graph/subgraph.h"
#include "partition/compile_auto.h"
#include "passes/pass.h"
#include "placer/cost.h"
#include "support/alloc.h"

#include <stdio.h>
#include <string.h>

/* compile_auto.h */
void tgc_compile_list_string(const tgc_placer_device *devices, int n, char *buf, size_t size) {
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && used < size; i++) {
        char name[32];
        used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? "," : "",
                                 tgc_device_id_name(devices[i], name, sizeof name));
    }
}

/* What automatic placement weighs: each device's capacity and pool width,
 * and the cost model (owned by *a: freed by the caller). Over devices of
 * several processes every rank must place alike, and each would time its
 * own devices and read its own cache: there the costs are the nominal
 * estimates alone (FLOPs and bytes against constant peaks; no cache, no
 * timing), the same on every rank; memory stays exact. */
static tgc_status prepare_auto(const tgc_compiled *c, const tgc_compile_options *opts, tgc_diags *diags,
                               tgc_placer_auto *a) {
    if (opts->memory_limits != NULL && tgc_memory_limit_of(opts->memory_limits, "", diags) < 0)
        return TGC_ERR_INVALID;
    bool ranks = tgc_placer_max_task(c->devices, c->n_devices) > 0;
    tgc_cost_options co = {.threads = opts->threads, .measure = opts->measure_costs && !ranks, .refresh = ranks};
    tgc_status s = TGC_OK;
    if (opts->cost != NULL) a->cost = opts->cost;
    else s = tgc_cost_model_create(c->devices, c->n_devices, &co, diags, &a->cost);
    for (int d = 0; s == TGC_OK && d < c->n_devices; d++) {
        char name[32];
        tgc_device_id_name(c->devices[d], name, sizeof name);
        a->capacity[d] = tgc_memory_capacity(opts->memory_limits, name, c->devices[d].kind, NULL);
        tgc_status threads_st = TGC_OK; /* the session reports a malformed spec */
        a->width[d] = tgc_threads_option(name, c->devices[d].kind, opts->threads, NULL, &threads_st);
        a->workspace_limit[d] = tgc_workspace_limit_of(opts->memory_limits, name);
    }
    return s;
}

tgc_status tgc_compile_on(const tgc_graph *g, const tgc_placer_device *devices, int n,
                          const tgc_compile_options *opts, tgc_diags *diags, tgc_compiled *out) {
    memset(out, 0, sizeof *out);
    out->g = g;
    if (n < 0 || n > TGC_PLACER_MAX_DEVICES) n = TGC_PLACER_MAX_DEVICES + 1; /* the placer says why */
    else memcpy(out->devices, devices, (size_t)n * sizeof *devices);
    out->n_devices = n;
    tgc_status s = TGC_OK;
    /* At NONE only compute-in-float32 runs: a graph without a narrow node is placed as given, uncopied. */
    bool passes = opts->optimize != TGC_OPTIMIZE_NONE || opts->float16 || tgc_pass_has_narrow_nodes(g);
    if (passes && n <= TGC_PLACER_MAX_DEVICES) {
        char list[TGC_PLACER_MAX_DEVICES * 24];
        tgc_compile_list_string(devices, n, list, sizeof list);
        tgc_optimize_options oo = {.level = opts->optimize,
                                   .devices = opts->optimize_for != NULL ? opts->optimize_for : list,
                                   .float16 = opts->float16};
        s = tgc_graph_optimize_with(g, &oo, NULL, diags, &out->optimized);
        if (s == TGC_OK) out->g = out->optimized;
    }
    tgc_placer_auto automatic = {.inflight = opts->inflight};
    if (s == TGC_OK && opts->auto_placement) s = prepare_auto(out, opts, diags, &automatic);
    tgc_placer_options po = {.soft_placement = opts->soft_placement, .small_host_bytes = opts->small_host_bytes,
                             .automatic = opts->auto_placement ? &automatic : NULL};
    if (s == TGC_OK && opts->auto_placement) {
        s = tgc_compile_place_auto(out, opts, &po, &automatic, diags);
    } else if (s == TGC_OK) {
        s = tgc_placer_run(out->g, out->devices, n, &po, diags, &out->placement);
        if (s == TGC_OK && opts->partition) {
            s = tgc_partition_build(out->g, &out->placement, out->devices, out->n_devices, diags, &out->parts);
            out->partitioned = s == TGC_OK;
        }
    }
    if (s == TGC_OK && opts->auto_placement && !opts->whole_list) {
        tgc_compile_options shared = *opts;
        shared.cost = automatic.cost;
        s = tgc_compile_one_kind(g, &shared, diags, out);
    }
    if (automatic.cost != opts->cost) tgc_cost_model_free(automatic.cost);
    return s;
}

tgc_status tgc_compile(const tgc_graph *g, const char *devices, const tgc_compile_options *opts, tgc_diags *diags,
                       tgc_compiled *out) {
    tgc_placer_device list[TGC_PLACER_MAX_DEVICES];
    int n = 0;
    memset(out, 0, sizeof *out);
    out->g = g;
    if (tgc_graph_check_whole(g, diags) != TGC_OK) return TGC_ERR_INVALID;
    tgc_status s = tgc_placer_parse_devices(devices != NULL ? devices : tgc_default_device_list(), list,
                                            TGC_PLACER_MAX_DEVICES, &n, diags);
    return s == TGC_OK ? tgc_compile_on(g, list, n, opts, diags, out) : s;
}

void tgc_compiled_release(tgc_compiled *c) {
    if (c == NULL) return;
    if (c->partitioned) tgc_partitioning_release(&c->parts);
    tgc_placement_release(&c->placement);
    tgc_graph_free(c->optimized);
    memset(c, 0, sizeof *c);
}

/* The subgraphs of g's nodes (and theirs), labelled after `prefix`,
 * appended to *subs. */
static tgc_status compile_bodies(const tgc_compiled *c, const tgc_graph *g, const char *prefix,
                                 const tgc_compile_options *opts, tgc_diags *diags, tgc_compiled_sub **subs,
                                 int *n_subs, int *cap) {
    if (g->depth >= TGC_MAX_SUBGRAPH_DEPTH) return TGC_OK; /* the loader never makes one this deep */
    for (int32_t id = 0; id < g->n_nodes; id++) {
        const tgc_node *n = &g->nodes[id];
        for (int a = 0; a < n->n_attrs; a++) {
            const tgc_graph *body = n->attrs[a].type == TGC_ATTR_GRAPH ? n->attrs[a].graph : NULL;
            if (body == NULL) continue;
            if (*n_subs == *cap) {
                int grown_cap = *cap ? *cap * 2 : 4;
                tgc_compiled_sub *grown = tgc_realloc(*subs, (size_t)grown_cap * sizeof *grown);
                if (grown == NULL) return TGC_ERR_NOMEM;
                *subs = grown;
                *cap = grown_cap;
            }
            tgc_compiled_sub *sp = &(*subs)[(*n_subs)++];
            memset(sp, 0, sizeof *sp);
            sp->g = body;
            size_t len = strlen(prefix) + strlen(n->name) + strlen(n->attrs[a].name) + 3;
            if ((sp->label = tgc_malloc(len)) == NULL) return TGC_ERR_NOMEM;
            snprintf(sp->label, len, "%s%s%s.%s", prefix, prefix[0] ? "." : "", n->name, n->attrs[a].name);
            tgc_compile_options body_opts = *opts;
            body_opts.optimize = TGC_OPTIMIZE_NONE;
            body_opts.float16 = false; /* a body's values meet its node's at the dtypes its graph gives */
            body_opts.memory_misses = NULL; /* a body's partitions are planned with its node's */
            body_opts.whole_list = true;      /* on its graph's devices, whatever they are */
            tgc_status s = tgc_compile_on(body, c->devices, c->n_devices, &body_opts, diags, &sp->c);
            /* sp->label stays valid: the recursion may move *subs, so pass a copy of the pointer */
            char *label = sp->label;
            if (s == TGC_OK) s = compile_bodies(c, body, label, opts, diags, subs, n_subs, cap);
            if (s != TGC_OK) return s;
        }
    }
    return TGC_OK;
}

tgc_status tgc_compile_subgraphs(const tgc_compiled *c, const tgc_compile_options *opts, tgc_diags *diags,
                                 tgc_compiled_sub **subs, int *n_subs) {
    *subs = NULL;
    *n_subs = 0;
    int cap = 0;
    return compile_bodies(c, c->g, "", opts, diags, subs, n_subs, &cap);
}

void tgc_compiled_subs_release(tgc_compiled_sub *subs, int n) {
    for (int i = 0; subs != NULL && i < n; i++) {
        tgc_compiled_release(&subs[i].c);
        tgc_free(subs[i].label);
    }
    tgc_free(subs);
}
