/* Memory you can see: per-device limits, the executor's watch over the
 * tensors live at each device's peak, the session's memory report, and the
 * static plan's table and JSON (memory_plan.h). */
#include "executor/step.h"

#include "support/alloc.h"
#include "support/diag.h"
#include "support/parse_size.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void shape_text(int rank, const int64_t *dims, char *buf, size_t size);

/* ---- sizes and limits ------------------------------------------------------------ */

static const char limit_syntax[] = "DEVICE=SIZE[,DEVICE=SIZE...], SIZE like 64MiB, 512KiB, 1GB or 1000";

tgc_status tgc_memory_limits_apply(tgc_device *const *devices, int n, const char *spec, tgc_diags *diags) {
    for (const char *p = spec; *p != '\0';) {
        size_t len = strcspn(p, ",");
        const char *eq = memchr(p, '=', len);
        if (eq == NULL || eq == p)
            return tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "bad-memory-limit",
                                  "--memory-limit takes %s; got '%.*s'", limit_syntax, (int)len, p);
        char name[32];
        tgc_device_name_canonical(p, (size_t)(eq - p), name, sizeof name);
        int64_t bytes = 0;
        if (!tgc_parse_size(eq + 1, len - (size_t)(eq + 1 - p), &bytes) || bytes < 1)
            return tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "bad-memory-limit",
                                  "--memory-limit: '%.*s' needs a size of at least 1 byte (%s)", (int)len, p,
                                  limit_syntax);
        int found = -1;
        for (int i = 0; i < n; i++)
            if (strcmp(devices[i]->name, name) == 0) found = i;
        if (found < 0) {
            char list[256] = "";
            for (int i = 0; i < n && strlen(list) < sizeof list - 24; i++) {
                if (i) strcat(list, ", ");
                strcat(list, devices[i]->name);
            }
            return tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "bad-memory-limit",
                                  "--memory-limit: '%s' is not a device of this session (%s)", name, list);
        }
        tgc_device_set_limit(devices[found], bytes);
        p += len;
        if (*p == ',') p++;
    }
    return TGC_OK;
}

const char *tgc_memory_figures_str(tgc_device *d, char *buf, size_t size) {
    tgc_allocator_stats f = tgc_device_stats(d);
    int n = snprintf(buf, size,
                     "%s has %" PRId64 " bytes in use in %" PRId64 " buffers (peak %" PRId64 ", reserved %" PRId64 ")",
                     d->name, f.bytes_in_use, f.live_buffers, f.peak_bytes_in_use, f.bytes_reserved);
    if (n >= 0 && (size_t)n < size) {
        if (f.bytes_limit > 0) snprintf(buf + n, size - (size_t)n, ", limit %" PRId64, f.bytes_limit);
        else snprintf(buf + n, size - (size_t)n, ", no limit");
    }
    return buf;
}

const char *tgc_oom_str(char *buf, size_t size, const char *what, const tgc_value *v, tgc_device *d) {
    char shape[160], figures[256];
    shape_text(v->rank, v->dims, shape, sizeof shape);
    snprintf(buf, size, "out of memory allocating %s (%s %s, %zu bytes); %s", what, tgc_dtype_name(v->dtype), shape,
             tgc_value_nbytes(v), tgc_memory_figures_str(d, figures, sizeof figures));
    return buf;
}

/* ---- the watch ------------------------------------------------------------------- */

tgc_memory_watch *tgc_memory_watch_create(int n_devices, int n_inputs) {
    tgc_memory_watch *w = tgc_calloc(1, sizeof *w);
    if (w == NULL) return NULL;
    w->n_gauges = n_devices + 1;
    w->n_feeds = n_inputs;
    w->gauges = tgc_calloc((size_t)w->n_gauges, sizeof *w->gauges);
    w->feed_rank = tgc_malloc(((size_t)n_inputs + 1) * sizeof *w->feed_rank);
    w->feed_dims = tgc_calloc(((size_t)n_inputs + 1) * TGC_MAX_RANK, sizeof *w->feed_dims);
    if (w->gauges == NULL || w->feed_rank == NULL || w->feed_dims == NULL) {
        tgc_free(w->gauges);
        tgc_free(w->feed_rank);
        tgc_free(w->feed_dims);
        tgc_free(w);
        return NULL;
    }
    pthread_mutex_init(&w->lock, NULL);
    for (int i = 0; i < n_inputs; i++) w->feed_rank[i] = -1;
    for (int i = 0; i < w->n_gauges; i++) {
        atomic_init(&w->gauges[i].peak, 0);
        atomic_init(&w->gauges[i].left, 0);
        atomic_init(&w->gauges[i].busy_ns, 0);
        pthread_mutex_init(&w->gauges[i].lock, NULL);
    }
    return w;
}

void tgc_memory_watch_free(tgc_memory_watch *w) {
    if (w == NULL) return;
    for (int i = 0; i < w->n_gauges; i++) pthread_mutex_destroy(&w->gauges[i].lock);
    pthread_mutex_destroy(&w->lock);
    tgc_free(w->gauges);
    tgc_free(w->feed_rank);
    tgc_free(w->feed_dims);
    tgc_free(w);
}

void tgc_watch_feeds(tgc_memory_watch *w, const tgc_graph *g, const tgc_tensor **feeds) {
    pthread_mutex_lock(&w->lock);
    for (int32_t i = 0; i < g->n_inputs_nodes && i < w->n_feeds; i++) {
        const tgc_value *v = &feeds[i]->v;
        w->feed_rank[i] = v->rank;
        for (int d = 0; d < v->rank && d < TGC_MAX_RANK; d++) w->feed_dims[i * TGC_MAX_RANK + d] = v->dims[d];
    }
    w->runs++;
    pthread_mutex_unlock(&w->lock);
}

/* The gauge of device d in session s: its index, the host's, or -1. */
static int gauge_of(const tgc_session *s, const tgc_device *d) {
    for (int i = 0; i < s->n_devices; i++)
        if (s->devices[i] == d) return i;
    return d == tgc_host_device() ? s->n_devices : -1;
}

void tgc_watch_time(tgc_step *st, tgc_part_state *ps, int64_t ns) {
    int m = gauge_of(st->s, ps->plan->device);
    if (m >= 0) atomic_fetch_add_explicit(&ps->watch->gauges[m].busy_ns, ns, memory_order_relaxed);
}

/* Notes the largest slots counted in gauge m now, if `live` is the most
 * that gauge has held. Slots are read after their bytes (acquire), which
 * their writers store after the value (release). */
static void snapshot(tgc_step *st, int m, int64_t live) {
    tgc_memory_gauge *gg = &st->s->watch->gauges[m];
    pthread_mutex_lock(&gg->lock);
    if (live > gg->snapshot_bytes) {
        tgc_memory_top top[TGC_MEMORY_TOP];
        int n = 0;
        for (int p = 0; p < st->s->compiled.parts.n_parts; p++) {
            tgc_part_state *ps = &st->parts[p];
            for (int32_t v = 0; ps->wslots != NULL && v < ps->plan->n_values; v++) {
                int64_t b = atomic_load_explicit(&ps->wslots[v].bytes, memory_order_acquire);
                if (b <= 0 || ps->wslots[v].gauge != m) continue;
                if (n == TGC_MEMORY_TOP && b <= top[n - 1].bytes) continue;
                int at = n < TGC_MEMORY_TOP ? n++ : n - 1;
                while (at > 0 && top[at - 1].bytes < b) {
                    top[at] = top[at - 1];
                    at--;
                }
                const tgc_value *val = &ps->vals[v];
                int32_t node = ps->wslots[v].node;
                top[at] = (tgc_memory_top){.node = ps->plan->g->nodes[node].name,
                                           .port = v - ps->plan->value_base[node],
                                           .dtype = val->dtype,
                                           .rank = val->rank,
                                           .bytes = b};
                memcpy(top[at].dims, val->dims, sizeof top[at].dims);
            }
        }
        gg->snapshot_bytes = live;
        gg->n_top = n;
        memcpy(gg->top, top, (size_t)n * sizeof top[0]);
    }
    pthread_mutex_unlock(&gg->lock);
}

void tgc_watch_set(tgc_step *st, tgc_part_state *ps, int32_t slot, int32_t node) {
    if (ps->wslots == NULL) return;
    const tgc_buffer *b = ps->vals[slot].buf;
    if (b == NULL || b->nbytes == 0 || tgc_buffer_is_concat_view(b)) return; /* a view: counted in its whole */
    int m = gauge_of(st->s, b->device);
    if (m < 0) return;
    tgc_watch_slot *ws = &ps->wslots[slot];
    ws->node = node;
    ws->gauge = m;
    int64_t nbytes = (int64_t)b->nbytes;
    atomic_store_explicit(&ws->bytes, nbytes, memory_order_release);
    tgc_memory_gauge *gg = &ps->watch->gauges[m];
    int64_t live = atomic_fetch_add(&st->watch_live[m], nbytes) + nbytes;
    long long peak = atomic_load(&gg->peak);
    while (live > peak) {
        if (atomic_compare_exchange_weak(&gg->peak, &peak, live)) {
            snapshot(st, m, live);
            break;
        }
    }
}

void tgc_watch_recv(tgc_step *st, tgc_part_state *ps, int32_t slot, int32_t node) {
    if (ps->wslots == NULL) return;
    const tgc_partitioning *parts = ps->frame->parts;
    int part = ps->part;
    for (int32_t i = 0; i < parts->n_pairs; i++) {
        const tgc_partition_pair *p = &parts->pairs[i];
        if (p->recv_part != part || p->recv_node != node) continue;
        bool want_host = p->recv_host_memory || tgc_kind_host_memory(parts->devices[parts->parts[part].device].kind);
        bool sent_host =
            p->send_host_memory || tgc_kind_host_memory(parts->devices[parts->parts[p->send_part].device].kind);
        if (!(want_host && sent_host)) tgc_watch_set(st, ps, slot, node);
        return;
    }
}

void tgc_watch_move(tgc_part_state *ps, int32_t from, int32_t to, int32_t node) {
    if (ps->wslots == NULL) return;
    tgc_watch_slot *src = &ps->wslots[from], *dst = &ps->wslots[to];
    int64_t b = atomic_exchange(&src->bytes, 0);
    if (b <= 0) return;
    dst->node = node;
    dst->gauge = src->gauge;
    atomic_store_explicit(&dst->bytes, b, memory_order_release);
}

void tgc_watch_release(tgc_part_state *ps, int32_t slot) {
    if (ps->wslots == NULL) return;
    int64_t b = atomic_exchange(&ps->wslots[slot].bytes, 0);
    if (b > 0) atomic_fetch_sub(&ps->frame->step->watch_live[ps->wslots[slot].gauge], b);
}

/* ---- printing helpers ------------------------------------------------------------ */

static void shape_text(int rank, const int64_t *dims, char *buf, size_t size) {
    size_t at = (size_t)snprintf(buf, size, "[");
    for (int d = 0; d < rank && at < size; d++)
        at += (size_t)snprintf(buf + at, size - at, "%s%" PRId64, d ? ", " : "", dims[d]);
    if (at < size) snprintf(buf + at, size - at, "]");
}

static void json_string(FILE *out, const char *s) {
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(out, "\\%c", c);
        else if (c < 0x20) fprintf(out, "\\u%04x", c);
        else fputc(c, out);
    }
    fputc('"', out);
}

/* "N=400, B=2" for the bound symbols, and the defaulted ones, into buf. */
static void symbols_text(const tgc_memory_plan *mp, char *buf, size_t size) {
    const tgc_graph *g = mp->g;
    size_t at = 0;
    buf[0] = '\0';
    for (int32_t i = 0; i < g->n_symbols && at < size; i++)
        if (mp->bound[i])
            at += (size_t)snprintf(buf + at, size - at, "%s%s=%" PRId64, at ? ", " : "", g->symbols[i], mp->symbols[i]);
    bool any = false;
    for (int32_t i = 0; i < g->n_symbols && at < size; i++) {
        if (!mp->defaulted[i]) continue;
        at += (size_t)snprintf(buf + at, size - at, "%s%s", any ? ", " : (at ? "; taken as 1: " : "taken as 1: "),
                               g->symbols[i]);
        any = true;
    }
}

/* ---- the plan's public face ------------------------------------------------------ */

/* Row i of the plan's table: a partition's device, then the host total. */
static bool has_host(const tgc_memory_plan *mp) {
    for (int i = 1; i < mp->n_spaces; i += 2)
        if (mp->spaces[i].n_tensors > 0 || mp->spaces[i].n_weights > 0) return true;
    return false;
}

int tgc_memory_plan_count(const tgc_memory_plan *mp) { return mp->parts->n_parts + (has_host(mp) ? 1 : 0); }

tgc_memory_plan_figures tgc_memory_plan_get(const tgc_memory_plan *mp, int i) {
    tgc_memory_plan_figures f;
    memset(&f, 0, sizeof f);
    if (i < 0 || i >= tgc_memory_plan_count(mp)) return f;
    if (i < mp->parts->n_parts) {
        const tgc_memory_space *sp = &mp->spaces[2 * i];
        snprintf(f.device, sizeof f.device, "%.15s", sp->name);
        f.weights_bytes = sp->weights_bytes;
        f.planned_peak = sp->arena_bytes;
        f.lower_bound = sp->lower_bound;
        f.naive_sum = sp->naive_sum;
        f.tensors = sp->n_tensors;
        f.cache_bytes = sp->caches_bytes;
        return f;
    }
    snprintf(f.device, sizeof f.device, "host");
    for (int k = 1; k < mp->n_spaces; k += 2) {
        const tgc_memory_space *sp = &mp->spaces[k];
        f.weights_bytes += sp->weights_bytes;
        f.planned_peak += sp->arena_bytes;
        f.lower_bound += sp->lower_bound;
        f.naive_sum += sp->naive_sum;
        f.tensors += sp->n_tensors;
        f.cache_bytes += sp->caches_bytes;
    }
    return f;
}

static void write_live(const tgc_memory_space *sp, const tgc_graph *pg, FILE *out) {
    int32_t live[TGC_MEMORY_TOP];
    int n = tgc_memory_space_live_at(sp, sp->busiest_step, live, TGC_MEMORY_TOP);
    fprintf(out, "\n%s: busiest step %d (%s), %" PRId64 " bytes live; the largest:\n", sp->name, sp->busiest_step,
            pg->nodes[sp->busiest_step].name, sp->lower_bound);
    fprintf(out, "  %-24s %-8s %-20s %12s %12s  %s\n", "node", "dtype", "shape", "bytes", "offset", "steps");
    for (int i = 0; i < n; i++) {
        const tgc_memory_tensor *t = &sp->tensors[live[i]];
        char shape[160], name[160];
        shape_text(t->rank, t->dims, shape, sizeof shape);
        if (t->port == 0) snprintf(name, sizeof name, "%s", pg->nodes[t->node].name);
        else snprintf(name, sizeof name, "%s:%d", pg->nodes[t->node].name, (int)t->port);
        const tgc_memory_buffer *b = &sp->buffers[t->buffer];
        fprintf(out, "  %-24s %-8s %-20s %12" PRId64 " %12" PRId64 "  %d-%d\n", name, tgc_dtype_name(t->dtype), shape,
                t->bytes, b->offset, (int)b->first, (int)b->last);
    }
}

/* The tensors of a rank known only at run time, which the plan leaves to
 * the device's allocator. */
static void write_unplanned(const tgc_memory_space *sp, const tgc_graph *pg, FILE *out) {
    if (sp->n_unplanned == 0) return;
    fprintf(out, "%s: %d tensor(s) of a rank known only at run time are not planned: %s allocates them when their "
            "node runs (", sp->name, (int)sp->n_unplanned, sp->host ? "host memory" : "its BFC arena");
    for (int i = 0; i < sp->n_unplanned && i < TGC_MEMORY_TOP; i++)
        fprintf(out, "%s%s", i ? ", " : "", pg->nodes[sp->unplanned[i]].name);
    fprintf(out, "%s)\n", sp->n_unplanned > TGC_MEMORY_TOP ? ", ..." : "");
}

static void write_table(const tgc_memory_plan *mp, FILE *out) {
    char syms[512];
    symbols_text(mp, syms, sizeof syms);
    fprintf(out, "memory plan of %s on %s%s%s%s\n", mp->g->name ? mp->g->name : mp->g->path,
            mp->device_list ? mp->device_list : "its devices", syms[0] ? " (" : "", syms, syms[0] ? ")" : "");
    fprintf(out, "%-8s %14s %14s %14s %14s %8s\n", "device", "weights", "planned peak", "lower bound", "naive sum",
            "tensors");
    for (int i = 0; i < tgc_memory_plan_count(mp); i++) {
        tgc_memory_plan_figures f = tgc_memory_plan_get(mp, i);
        fprintf(out, "%-8s %14" PRId64 " %14" PRId64 " %14" PRId64 " %14" PRId64 " %8d\n", f.device, f.weights_bytes,
                f.planned_peak, f.lower_bound, f.naive_sum, (int)f.tensors);
    }
    for (int p = 0; p < mp->parts->n_parts; p++) {
        const tgc_memory_space *sp = &mp->spaces[2 * p];
        if (sp->feeds_bytes > 0)
            fprintf(out, "%s reads %" PRId64 " bytes of feeds in place (the caller's host memory, not planned)\n",
                    sp->name, sp->feeds_bytes);
    }
    for (int i = 0; i < mp->n_spaces; i++) write_unplanned(&mp->spaces[i], mp->parts->parts[mp->spaces[i].part].graph,
                                                           out);
    if (mp->n_fallback > 0)
        fprintf(out, "%d node(s) had shapes inference could not make concrete; their declared shapes were used\n",
                (int)mp->n_fallback);
    fprintf(out, "bytes; planned peak: greedy by size (TFLite's arena planner) or in order of first use, the "
                 "smaller, offsets aligned as each device's arena; lower bound: the most bytes live at one step\n");
    for (int p = 0; p < mp->parts->n_parts; p++) {
        const tgc_memory_space *sp = &mp->spaces[2 * p];
        if (sp->busiest_step >= 0) write_live(sp, mp->parts->parts[p].graph, out);
    }
}

static void write_json(const tgc_memory_plan *mp, FILE *out) {
    const tgc_graph *g = mp->g;
    fprintf(out, "{\n  \"graph\": ");
    json_string(out, g->name ? g->name : g->path);
    fprintf(out, ",\n  \"devices\": ");
    json_string(out, mp->device_list ? mp->device_list : "");
    fprintf(out, ",\n  \"symbols\": {");
    bool first = true;
    for (int32_t i = 0; i < g->n_symbols; i++) {
        if (!mp->bound[i] && !mp->defaulted[i]) continue;
        fprintf(out, "%s", first ? "" : ", ");
        json_string(out, g->symbols[i]);
        fprintf(out, ": {\"value\": %" PRId64 ", \"bound\": %s}", mp->bound[i] ? mp->symbols[i] : 1,
                mp->bound[i] ? "true" : "false");
        first = false;
    }
    fprintf(out, "},\n  \"totals\": [");
    for (int i = 0; i < tgc_memory_plan_count(mp); i++) {
        tgc_memory_plan_figures f = tgc_memory_plan_get(mp, i);
        fprintf(out,
                "%s\n    {\"device\": \"%s\", \"weights_bytes\": %" PRId64 ", \"planned_peak\": %" PRId64
                ", \"lower_bound\": %" PRId64 ", \"naive_sum\": %" PRId64 ", \"tensors\": %d}",
                i ? "," : "", f.device, f.weights_bytes, f.planned_peak, f.lower_bound, f.naive_sum, (int)f.tensors);
    }
    fprintf(out, "\n  ],\n  \"memories\": [");
    for (int k = 0; k < mp->n_spaces; k++) {
        const tgc_memory_space *sp = &mp->spaces[k];
        const tgc_graph *pg = mp->parts->parts[sp->part].graph;
        fprintf(out,
                "%s\n    {\"memory\": \"%s\", \"partition\": \"%s\", \"alignment\": %" PRId64 ", \"steps\": %d, "
                "\"weights_bytes\": %" PRId64 ", \"feeds_bytes\": %" PRId64 ", \"planned_peak\": %" PRId64
                ", \"lower_bound\": %" PRId64 ", \"naive_sum\": %" PRId64 ", \"busiest_step\": %d,\n     \"live_at_busiest\": [",
                k ? "," : "", sp->name, mp->parts->parts[sp->part].device_name, sp->alignment, (int)sp->n_steps,
                sp->weights_bytes, sp->feeds_bytes, sp->arena_bytes, sp->lower_bound, sp->naive_sum,
                (int)sp->busiest_step);
        int32_t live[TGC_MEMORY_TOP];
        int n = tgc_memory_space_live_at(sp, sp->busiest_step, live, TGC_MEMORY_TOP);
        for (int i = 0; i < n; i++) {
            const tgc_memory_tensor *t = &sp->tensors[live[i]];
            fprintf(out, "%s{\"node\": ", i ? ", " : "");
            json_string(out, pg->nodes[t->node].name);
            fprintf(out, ", \"port\": %d, \"dtype\": \"%s\", \"shape\": [", (int)t->port, tgc_dtype_name(t->dtype));
            for (int d = 0; d < t->rank; d++) fprintf(out, "%s%" PRId64, d ? ", " : "", t->dims[d]);
            fprintf(out, "], \"bytes\": %" PRId64 "}", t->bytes);
        }
        fprintf(out, "],\n     \"buffers\": [");
        for (int32_t b = 0; b < sp->n_buffers; b++) {
            const tgc_memory_buffer *x = &sp->buffers[b];
            fprintf(out, "%s\n       {\"tensors\": [", b ? "," : "");
            bool firstt = true;
            for (int32_t t = 0; t < sp->n_tensors; t++) {
                if (sp->tensors[t].buffer != b) continue;
                fprintf(out, "%s", firstt ? "" : ", ");
                json_string(out, pg->nodes[sp->tensors[t].node].name);
                firstt = false;
            }
            fprintf(out, "], \"bytes\": %" PRId64 ", \"first\": %d, \"last\": %d, \"offset\": %" PRId64 "}", x->bytes,
                    (int)x->first, (int)x->last, x->offset);
        }
        fprintf(out, "%s]}", sp->n_buffers ? "\n     " : "");
    }
    fprintf(out, "\n  ]\n}\n");
}

tgc_status tgc_memory_plan_write(const tgc_memory_plan *mp, FILE *out, int json, tgc_diags *diags) {
    if (json) write_json(mp, out);
    else write_table(mp, out);
    if (fflush(out) != 0 || ferror(out))
        return tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "write-failed", "cannot write the memory plan");
    return TGC_OK;
}

/* ---- the session's report -------------------------------------------------------- */

/* Weights that plans[0..n) hold on device d, the subgraphs' plans of their
 * control nodes too (depth-bounded as the subgraphs are). */
static int64_t plans_weights_on(const tgc_plan *plans, int n, const tgc_device *d) {
    int64_t bytes = 0;
    for (int p = 0; plans != NULL && p < n; p++) {
        const tgc_plan *pl = &plans[p];
        if (pl->remote) continue;
        for (int32_t v = 0; pl->weights != NULL && v < pl->n_values; v++) {
            const tgc_buffer *b = pl->weights[v].buf; /* a replaced weight's guard is not held */
            if (b != NULL && b->device == d && !(b->borrowed && !b->borrow_counted)) bytes += (int64_t)b->nbytes;
        }
        for (int32_t id = 0; pl->control != NULL && id < pl->g->n_nodes; id++)
            for (int b = 0; b < pl->control[id].n_bodies; b++)
                bytes += plans_weights_on(pl->control[id].bodies[b].plans, pl->control[id].bodies[b].compiled.parts.n_parts, d);
    }
    return bytes;
}

/* Weights the session's plans hold on device d. */
static int64_t weights_on(const tgc_session *s, const tgc_device *d) {
    return plans_weights_on(s->plans, s->compiled.parts.n_parts, d);
}

/* The plan for the last run's feeds (symbols from their shapes). */
static tgc_status session_plan(const tgc_session *s, tgc_memory_plan **out) {
    const tgc_graph *g = s->g;
    int64_t *symbols = tgc_malloc(((size_t)g->n_symbols + 1) * sizeof *symbols);
    if (symbols == NULL) return TGC_ERR_NOMEM;
    for (int32_t i = 0; i < g->n_symbols; i++) symbols[i] = -1;
    tgc_memory_watch *w = s->watch;
    if (w != NULL) {
        pthread_mutex_lock(&w->lock);
        for (int32_t in = 0; in < g->n_inputs_nodes && in < w->n_feeds; in++) {
            const tgc_shape *decl = &g->nodes[in].outputs[0].shape;
            if (w->feed_rank[in] != decl->rank) continue;
            for (int d = 0; d < decl->rank; d++)
                if (!tgc_dim_known(decl->dims[d])) symbols[decl->dims[d].sym] = w->feed_dims[in * TGC_MAX_RANK + d];
        }
        pthread_mutex_unlock(&w->lock);
    }
    tgc_status st =
        tgc_memory_plan_build_pools(g, &s->compiled.parts, symbols, s->threads, s->memory_limits, NULL, out);
    tgc_free(symbols);
    if (st == TGC_OK) tgc_memory_plan_set_inflight(*out, s->max_inflight);
    return st;
}

static void report_top(const tgc_memory_gauge *gg, FILE *out) {
    for (int i = 0; i < gg->n_top; i++) {
        const tgc_memory_top *t = &gg->top[i];
        char shape[160], name[160];
        shape_text(t->rank, t->dims, shape, sizeof shape);
        if (t->port == 0) snprintf(name, sizeof name, "%s", t->node);
        else snprintf(name, sizeof name, "%s:%d", t->node, (int)t->port);
        fprintf(out, "    %-24s %-8s %-20s %12" PRId64 "\n", name, tgc_dtype_name(t->dtype), shape, t->bytes);
    }
}

/* The need of memory sp under mp without limits (tgc_memory_needs). */
static tgc_memory_need need_of(const tgc_memory_plan *mp, const tgc_memory_space *sp) {
    tgc_memory_need nd;
    memset(&nd, 0, sizeof nd);
    tgc_memory_need *all = tgc_calloc((size_t)mp->parts->n_parts + 1, sizeof *all);
    if (all != NULL && tgc_memory_needs(mp, NULL, all, NULL) == TGC_OK) nd = all[sp->part];
    tgc_free(all);
    return nd;
}

/* "  (off by 31%: over 25%)" when predicted and measured differ by more
 * than TGC_FORECAST_TOLERANCE of the measured, else "". Memory compares
 * the need less its workspaces, which runs do not measure. */
#define TGC_FORECAST_TOLERANCE 0.25
static const char *off_by(double predicted, double measured, char *buf, size_t size) {
    double off = measured > 0 ? fabs(predicted - measured) / measured : 0;
    if (off <= TGC_FORECAST_TOLERANCE) return "";
    snprintf(buf, size, "  (off by %.0f%%: over %.0f%%)", off * 100, TGC_FORECAST_TOLERANCE * 100);
    return buf;
}

/* Predicted beside measured time of one step on device i: the automatic
 * placement's forecast (its nodes' costs and the transfers it receives),
 * and what its kernels and _Sends ran, per step after the first. */
static void report_time(const tgc_session *s, int i, FILE *out) {
    const tgc_placement_forecast *f =
        s->compiled.placement.forecast != NULL ? &s->compiled.placement.forecast[i] : NULL;
    if (f != NULL)
        fprintf(out, "  %-22s %12.3f  ms (%s)\n", "predicted step time", f->seconds * 1e3,
                f->measured ? "measured costs" : "some costs estimated");
    else fprintf(out, "  %-22s %12s  (no forecast: --placement auto makes one)\n", "predicted step time", "-");
    int64_t runs = 0;
    pthread_mutex_lock(&s->watch->lock);
    runs = s->watch->runs;
    pthread_mutex_unlock(&s->watch->lock);
    if (runs < 2) {
        fprintf(out, "  %-22s %12s  (after the first run only: it builds the kernels' caches)\n",
                "measured step time", "-");
        return;
    }
    double ms = (double)atomic_load(&s->watch->gauges[i].busy_ns) / 1e6 / (double)(runs - 1);
    char flag[64];
    fprintf(out, "  %-22s %12.3f  ms (kernels and sends, mean of %" PRId64 " runs after the first)%s\n",
            "measured step time", ms, runs - 1, f != NULL ? off_by(f->seconds * 1e3, ms, flag, sizeof flag) : "");
}

/* What the last step's work took on device i, where the device counts it
 * (tgc_device_activity): the lines issue 35's targets are read from. */
static void report_activity(const tgc_session *s, int i, FILE *out) {
    tgc_memory_gauge *gg = &s->watch->gauges[i];
    pthread_mutex_lock(&gg->lock);
    tgc_device_activity a = gg->last_step;
    bool counted = gg->activity_counted;
    pthread_mutex_unlock(&gg->lock);
    if (!counted) return;
    int64_t ran = 0, absorbed = 0; /* the device's kernel nodes, in the session's partitions (not in subgraphs) */
    for (int p = 0; p < s->compiled.parts.n_parts; p++) {
        const tgc_plan *pl = &s->plans[p];
        if (pl->remote || pl->device != s->devices[i]) continue;
        for (int32_t id = 0; id < pl->g->n_nodes; id++)
            if (pl->role[id] == TGC_ROLE_KERNEL) pl->absorbed[id] ? absorbed++ : ran++;
    }
    char per_node[160] = "";
    if (ran > 0)
        snprintf(per_node, sizeof per_node, "; %.2f a node: %" PRId64 " ran a kernel, %" PRId64
                 " activations absorbed", (double)a.launches / (double)ran, ran, absorbed);
    fprintf(out, "  %-27s %7" PRId64 "  (the last step, feeds to fetched outputs; a library call counts as one%s)\n",
            "kernel launches per step", a.launches, per_node);
    fprintf(out, "  %-27s %7" PRId64 "  (blocking copies and finishes)\n", "host waits per step", a.host_waits);
    fprintf(out, "  %-27s %7" PRId64 "  (new device memory: arena regions, buffers of their own)\n",
            "device allocations per step", a.allocations);
}

/* The most one step's tensors held on device i (the watch's gauge: each
 * step counts its own, also with steps in flight) beside the plan's. */
static void report_step_peak(const tgc_session *s, int i, const tgc_memory_space *sp, FILE *out) {
    int64_t held = atomic_load(&s->watch->gauges[i].peak);
    int64_t off = held - sp->lower_bound;
    char differs[96] = "";
    if (off != 0 && sp->n_unplanned == 0)
        snprintf(differs, sizeof differs, "  (%+" PRId64 " bytes from the prediction: %+.1f%%)", off,
                 sp->lower_bound > 0 ? 100.0 * (double)off / (double)sp->lower_bound : 100.0);
    fprintf(out, "  %-22s %12" PRId64 "  (weights %" PRId64 " + a step's tensors at their most %" PRId64 ")%s\n",
            "measured peak", sp->weights_bytes + held, sp->weights_bytes, held, differs);
}

static void report_device(const tgc_session *s, int i, const tgc_memory_plan *mp, FILE *out) {
    tgc_device *d = s->devices[i];
    tgc_allocator_stats f = tgc_device_stats(d);
    int64_t weights = weights_on(s, d);
    fprintf(out, "%s\n", d->name);
    bool ws_in = tgc_backend_get(d->kind)->workspaces_in_allocator;
    fprintf(out, "  %-22s %12" PRId64 "  (weights %" PRId64 " + tensors%s %" PRId64 ")\n", "peak bytes in use",
            f.peak_bytes_in_use, weights, ws_in ? " and workspaces" : "", f.peak_bytes_in_use - weights);
    const tgc_memory_space *sp = NULL;
    for (int p = 0; mp != NULL && p < s->compiled.parts.n_parts; p++)
        if (s->devices[s->compiled.parts.parts[p].device] == d) sp = &mp->spaces[2 * p];
    if (sp != NULL) { /* one step's plan; a pipeline's earlier steps may add their sends (a range, not a point) */
        fprintf(out,
                "  %-22s %12" PRId64 "  (weights %" PRId64 " + a step's tensors at their most %" PRId64
                "; packed in an arena %" PRId64 ", naive sum %" PRId64 ")",
                "predicted peak", sp->weights_bytes + sp->lower_bound, sp->weights_bytes, sp->lower_bound,
                sp->arena_bytes - sp->pipelined_bytes, sp->naive_sum);
        if (sp->pipelined_bytes > 0)
            fprintf(out, ", up to %" PRId64 " more in use while the next device reads earlier steps' sends in place",
                    sp->pipelined_bytes);
        fputc('\n', out);
        if (s->watch != NULL) report_step_peak(s, i, sp, out);
    } else
        fprintf(out, "  %-22s %12s  (%s)\n", "predicted peak", "-",
                mp != NULL ? "no node runs here" : "no static plan: out of host memory");
    size_t cached = 0;
    int64_t replaced = 0;
    for (int p = 0; p < s->compiled.parts.n_parts; p++)
        if (!s->plans[p].remote && s->devices[s->compiled.parts.parts[p].device] == d) {
            cached += tgc_kernel_cache_bytes(s->plans[p].caches, (int64_t)s->plans[p].g->n_nodes + 1);
            replaced += s->plans[p].replaced_bytes;
        }
    if (sp != NULL) { /* the hard limit's figures (memory_plan_check.c) beside what the runs held */
        tgc_memory_need nd = need_of(mp, sp);
        fprintf(out,
                "  %-22s %12" PRId64 "  (weights %" PRId64 " + kernel caches %" PRId64 " + activations %" PRId64
                " + workspaces %" PRId64 "%s)\n",
                "predicted need", nd.need, nd.weights, nd.caches, nd.activations, nd.workspaces,
                nd.partial ? "; symbols unbound: weights and caches only" : "");
        int64_t measured = f.peak_bytes_in_use + (int64_t)cached;
        char flag[64];
        fprintf(out, "  %-22s %12" PRId64 "  (peak bytes in use %" PRId64 " + kernel caches %zu; workspaces %s)%s\n",
                "measured need", measured, f.peak_bytes_in_use, cached, ws_in ? "in it" : "not measured",
                nd.partial ? ""
                           : off_by((double)(ws_in ? nd.need : nd.need - nd.workspaces), (double)measured, flag,
                                    sizeof flag));
    }
    fprintf(out, "  %-22s %12" PRId64 "  (%s)\n", "in use at the end", f.bytes_in_use,
            f.bytes_in_use == weights ? "the weights only" : "more than the weights");
    fprintf(out, "  %-22s %12" PRId64 "\n", "reserved bytes", f.bytes_reserved);
    fprintf(out, "  %-22s %12" PRId64 "\n", "allocations", f.num_allocs);
    fprintf(out, "  %-22s %12" PRId64 "\n", "largest allocation", f.largest_alloc_size);
    fprintf(out, "  %-22s %12.3f\n", "fragmentation", f.fragmentation);
    if (f.bytes_limit > 0) fprintf(out, "  %-22s %12" PRId64 "\n", "limit", f.bytes_limit);
    if (cached > 0)
        fprintf(out, "  %-22s %12zu  (host memory: weights in a kernel's own layout, kept across runs)\n",
                "kernel caches", cached);
    if (replaced > 0)
        fprintf(out, "  %-22s %12" PRId64 "  (weights held only in a kernel's layout: the originals let go)\n",
                "weights replaced", replaced);
    if (s->watch == NULL) return;
    report_time(s, i, out);
    report_activity(s, i, out);
    tgc_memory_gauge *gg = &s->watch->gauges[i];
    pthread_mutex_lock(&gg->lock);
    fprintf(out, "  %-22s %12" PRId64 "  (a step's tensors here at their most; the largest:)\n",
            "live at the peak", gg->snapshot_bytes);
    report_top(gg, out);
    pthread_mutex_unlock(&gg->lock);
}

tgc_status tgc_session_memory_report(const tgc_session *s, FILE *out) {
    if (s->n_replicas) return tgc_session_replicas_report(s, out);
    tgc_memory_plan *mp = NULL;
    tgc_status st = session_plan(s, &mp);
    int64_t runs = 0;
    if (s->watch != NULL) {
        pthread_mutex_lock(&s->watch->lock);
        runs = s->watch->runs;
        pthread_mutex_unlock(&s->watch->lock);
    }
    char syms[512] = "";
    if (mp != NULL) symbols_text(mp, syms, sizeof syms);
    fprintf(out, "memory report of %s", s->g->name ? s->g->name : s->g->path);
    if (s->watch != NULL) fprintf(out, " after %" PRId64 " run%s", runs, runs == 1 ? "" : "s");
    fprintf(out, " (bytes; static plan for %s)\n", syms[0] ? syms : "the declared shapes");
    for (int i = 0; i < s->n_devices; i++) report_device(s, i, mp, out);
    if (mp != NULL && has_host(mp)) {
        tgc_memory_plan_figures h = tgc_memory_plan_get(mp, tgc_memory_plan_count(mp) - 1);
        fprintf(out, "host (shape values; shared by the process)\n");
        fprintf(out, "  %-22s %12" PRId64 "  (weights %" PRId64 " + planned %" PRId64 "; lower bound %" PRId64
                     ", naive sum %" PRId64 ")\n",
                "predicted peak", h.weights_bytes + h.planned_peak, h.weights_bytes, h.planned_peak, h.lower_bound,
                h.naive_sum);
        if (s->watch != NULL) {
            tgc_memory_gauge *gg = &s->watch->gauges[s->n_devices];
            pthread_mutex_lock(&gg->lock);
            fprintf(out, "  %-22s %12" PRId64 "\n", "live at the peak", gg->snapshot_bytes);
            report_top(gg, out);
            pthread_mutex_unlock(&gg->lock);
        }
    }
    tgc_memory_plan_free(mp);
    return st == TGC_ERR_NOMEM ? st : TGC_OK;
}
