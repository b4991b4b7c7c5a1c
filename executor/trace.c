/* Chrome trace events, kept in memory until written. Each thread gets a
 * small id the first time it records; a device's threads share its pid so
 * the viewer groups them ("cpu0", "gpu0" processes with one track per
 * worker). Flow events bind a _Send to its _Recv by their key. */
#include "executor/trace.h"

#include "devices/device.h"
#include "executor/session.h"
#include "support/alloc.h"
#include "support/clock.h"
#include "support/diag.h"
#include "support/special_file.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef enum { EV_NODE, EV_FLOW_START, EV_FLOW_END, EV_COUNTER } event_kind;

typedef struct event {
    event_kind kind;
    int pid, tid;
    uint64_t ts, dur;
    int64_t value;  /* counter: bytes in use */
    uint64_t flow;  /* flow id: hash of the rendezvous key as it ran (step id and frame included) */
    int64_t step;   /* the step id */
    char name[96];
    char op[32];
    char args[160]; /* shapes */
    char kernel[40]; /* how the kernel ran (tgc_kernel_ctx.impl), "" when it did not say */
} event;

/* Devices the trace tells apart (a process each in the viewer); the
 * devices past it share the last one's. */
#define TRACE_DEVICES 16

struct tgc_trace {
    pthread_mutex_t lock;
    event *events;
    size_t count, cap;
    /* As long as a device's own name ("/task:12/cpu0" does not fit in 16):
     * a cut name would never compare equal and take a new pid each time. */
    char device_names[TRACE_DEVICES][sizeof ((tgc_device *)0)->name];
    int n_devices;
};

static _Thread_local int thread_id = -1;
static atomic_int next_thread_id;

uint64_t tgc_trace_now_us(void) { return (uint64_t)tgc_now_ns() / 1000u; }

tgc_status tgc_trace_create(tgc_trace **out) {
    tgc_trace *t = tgc_calloc(1, sizeof *t);
    if (t == NULL) return TGC_ERR_NOMEM;
    pthread_mutex_init(&t->lock, NULL);
    *out = t;
    return TGC_OK;
}

void tgc_trace_free(tgc_trace *t) {
    if (t == NULL) return;
    pthread_mutex_destroy(&t->lock);
    tgc_free(t->events);
    tgc_free(t);
}

/* Appends an event (dropped silently when memory runs out: a trace is a
 * diagnostic, never a reason to fail a run). Call with t->lock held. */
static event *append(tgc_trace *t) {
    if (t->count == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 1024;
        event *e = tgc_realloc(t->events, cap * sizeof *e);
        if (e == NULL) return NULL;
        t->events = e;
        t->cap = cap;
    }
    event *e = &t->events[t->count++];
    memset(e, 0, sizeof *e);
    if (thread_id < 0) thread_id = atomic_fetch_add(&next_thread_id, 1);
    e->tid = thread_id;
    return e;
}

static int device_pid(tgc_trace *t, const char *name) {
    for (int i = 0; i < t->n_devices; i++)
        if (strcmp(t->device_names[i], name) == 0) return i + 1;
    if (t->n_devices == TRACE_DEVICES) return TRACE_DEVICES;
    snprintf(t->device_names[t->n_devices], sizeof t->device_names[0], "%s", name);
    return ++t->n_devices;
}

static uint64_t key_hash(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h >> 12; /* ids stay exact in a JSON double */
}

static void shapes_of(const tgc_graph *g, const tgc_node *n, char *out, size_t size) {
    size_t used = 0;
    out[0] = '\0';
    for (int k = 0; k < n->n_outputs && used < size; k++) {
        char shape[96];
        tgc_shape_str(g, &n->outputs[k].shape, shape, sizeof shape);
        used += (size_t)snprintf(out + used, size - used, "%s%s %s", k ? "; " : "", tgc_dtype_name(n->outputs[k].dtype),
                                 shape);
    }
}

void tgc_trace_node(tgc_trace *t, const struct tgc_plan *plan, int32_t id, int64_t step, const char *key,
                    uint64_t start, uint64_t end) {
    const tgc_node *n = &plan->g->nodes[id];
    int64_t in_use = tgc_device_stats(plan->device).bytes_in_use;
    pthread_mutex_lock(&t->lock);
    int pid = device_pid(t, plan->device->name);
    event *e = append(t);
    if (e != NULL) {
        e->kind = EV_NODE;
        e->pid = pid;
        e->step = step;
        e->ts = start;
        e->dur = end > start ? end - start : 0;
        snprintf(e->name, sizeof e->name, "%s", tgc_node_label(n));
        snprintf(e->op, sizeof e->op, "%s", n->op_name ? n->op_name : n->kind == TGC_NODE_INPUT ? "input" : "const");
        shapes_of(plan->g, n, e->args, sizeof e->args);
        const char *impl = plan->impl != NULL ? atomic_load_explicit(&plan->impl[id], memory_order_relaxed) : NULL;
        snprintf(e->kernel, sizeof e->kernel, "%s", impl != NULL ? impl : "");
    }
    if (plan->role[id] == TGC_ROLE_SEND && key != NULL && (e = append(t)) != NULL) {
        e->kind = EV_FLOW_START;
        e->pid = pid;
        e->ts = start;
        e->flow = key_hash(key);
        snprintf(e->name, sizeof e->name, "%s", n->name);
    }
    if ((e = append(t)) != NULL) {
        e->kind = EV_COUNTER;
        e->pid = pid;
        e->ts = end;
        e->value = in_use;
    }
    pthread_mutex_unlock(&t->lock);
}

void tgc_trace_device(tgc_trace *t, const char *device, const tgc_node *n, const char *kernel, int64_t step,
                      uint64_t start, uint64_t end) {
    char track[sizeof t->device_names[0]];
    snprintf(track, sizeof track, "%s (device)", device);
    pthread_mutex_lock(&t->lock);
    int pid = device_pid(t, track);
    event *e = append(t);
    if (e != NULL) {
        e->kind = EV_NODE;
        e->pid = pid;
        e->tid = 0; /* the device's queue: one track */
        e->step = step;
        e->ts = start;
        e->dur = end > start ? end - start : 0;
        snprintf(e->name, sizeof e->name, "%s", tgc_node_label(n));
        snprintf(e->op, sizeof e->op, "%s", n->op_name != NULL ? n->op_name : "");
        snprintf(e->kernel, sizeof e->kernel, "%s", kernel);
    }
    pthread_mutex_unlock(&t->lock);
}

void tgc_trace_recv(tgc_trace *t, const struct tgc_plan *plan, int32_t id, int64_t step, const char *key,
                    uint64_t at) {
    const tgc_node *n = &plan->g->nodes[id];
    pthread_mutex_lock(&t->lock);
    int pid = device_pid(t, plan->device->name);
    event *e = append(t);
    if (e != NULL) {
        e->kind = EV_NODE;
        e->pid = pid;
        e->step = step;
        e->ts = at;
        e->dur = 1;
        snprintf(e->name, sizeof e->name, "%s", n->name);
        snprintf(e->op, sizeof e->op, "_Recv");
        shapes_of(plan->g, n, e->args, sizeof e->args);
    }
    if (key != NULL && (e = append(t)) != NULL) {
        e->kind = EV_FLOW_END;
        e->pid = pid;
        e->ts = at;
        e->flow = key_hash(key);
        snprintf(e->name, sizeof e->name, "%s", n->name);
    }
    pthread_mutex_unlock(&t->lock);
}

/* Names in the graph are [A-Za-z0-9_.:/-]; escape anyway. */
static void json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", *s);
        else fputc(*s, f);
    }
    fputc('"', f);
}

static void write_event(FILE *f, const event *e) {
    switch (e->kind) {
    case EV_NODE:
        fprintf(f, "{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%llu,\"dur\":%llu,\"name\":", e->pid, e->tid,
                (unsigned long long)e->ts, (unsigned long long)e->dur);
        json_str(f, e->name);
        fprintf(f, ",\"cat\":");
        json_str(f, e->op);
        fprintf(f, ",\"args\":{\"op\":");
        json_str(f, e->op);
        fprintf(f, ",\"step\":%lld,\"outputs\":", (long long)e->step);
        json_str(f, e->args);
        if (e->kernel[0] != '\0') {
            fprintf(f, ",\"kernel\":");
            json_str(f, e->kernel);
        }
        fprintf(f, "}}");
        break;
    case EV_FLOW_START:
    case EV_FLOW_END:
        fprintf(f, "{\"ph\":\"%s\",\"pid\":%d,\"tid\":%d,\"ts\":%llu,\"id\":%llu,\"cat\":\"rendezvous\",%s\"name\":",
                e->kind == EV_FLOW_START ? "s" : "f", e->pid, e->tid, (unsigned long long)e->ts,
                (unsigned long long)e->flow, e->kind == EV_FLOW_END ? "\"bp\":\"e\"," : "");
        json_str(f, "send/recv");
        fprintf(f, "}");
        break;
    case EV_COUNTER:
        fprintf(f, "{\"ph\":\"C\",\"pid\":%d,\"ts\":%llu,\"name\":\"bytes in use\",\"args\":{\"bytes\":%lld}}", e->pid,
                (unsigned long long)e->ts, (long long)e->value);
        break;
    }
}

/* A node's start (+1) or end (-1) on one device, for the sweep. */
typedef struct edge {
    uint64_t ts;
    int delta;
} edge;

static int edge_cmp(const void *pa, const void *pb) {
    const edge *a = pa, *b = pb;
    if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
    return a->delta - b->delta; /* an end before a start at the same time: not side by side */
}

/* Device pid's nodes side by side (inter-op): a counter track "nodes at
 * once" stepping at each change, written as events after *sep; into
 * busy_us the time some node of the device ran, into side_us the time two
 * or more did. Nodes of no duration (inputs, constants) count for nothing.
 * Without memory for the sweep, nothing (a trace never fails a run). */
static void write_side_by_side(FILE *f, const tgc_trace *t, int pid, const char **sep, uint64_t *busy_us,
                               uint64_t *side_us) {
    *busy_us = *side_us = 0;
    size_t n = 0;
    for (size_t i = 0; i < t->count; i++)
        n += t->events[i].kind == EV_NODE && t->events[i].pid == pid && t->events[i].dur > 0;
    edge *edges = n > 0 ? tgc_malloc(2 * n * sizeof *edges) : NULL;
    if (edges == NULL) return;
    size_t k = 0;
    for (size_t i = 0; i < t->count; i++) {
        const event *e = &t->events[i];
        if (e->kind != EV_NODE || e->pid != pid || e->dur == 0) continue;
        edges[k++] = (edge){e->ts, +1};
        edges[k++] = (edge){e->ts + e->dur, -1};
    }
    qsort(edges, k, sizeof *edges, edge_cmp);
    int running = 0;
    for (size_t i = 0; i < k; i++) {
        if (i > 0 && running >= 1) *busy_us += edges[i].ts - edges[i - 1].ts;
        if (i > 0 && running >= 2) *side_us += edges[i].ts - edges[i - 1].ts;
        running += edges[i].delta;
        if (i + 1 < k && edges[i + 1].ts == edges[i].ts) continue; /* one sample a time */
        fprintf(f, "%s{\"ph\":\"C\",\"pid\":%d,\"ts\":%llu,\"name\":\"nodes at once\",\"args\":{\"nodes\":%d}}",
                *sep, pid, (unsigned long long)edges[i].ts, running);
        *sep = ",\n";
    }
    tgc_free(edges);
}

tgc_status tgc_trace_write(tgc_trace *t, const char *path, tgc_diags *diags) {
    char tmp[4096];
    bool in_place = tgc_path_is_device(path); /* /dev/null: written, never replaced */
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = fopen(in_place ? path : tmp, "w");
    if (f == NULL)
        return tgc_diag_add(diags, TGC_SEV_ERROR, path, (tgc_srcpos){0, 0}, "io", "cannot write the trace"), TGC_ERR_IO;
    pthread_mutex_lock(&t->lock);
    fprintf(f, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
    for (int i = 0; i < t->n_devices; i++) {
        fprintf(f, "{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\",\"args\":{\"name\":", i + 1);
        json_str(f, t->device_names[i]);
        fprintf(f, "}},\n");
    }
    const char *sep = "";
    for (size_t i = 0; i < t->count; i++) {
        fputs(sep, f);
        write_event(f, &t->events[i]);
        sep = ",\n";
    }
    uint64_t busy[TRACE_DEVICES], side[TRACE_DEVICES];
    for (int i = 0; i < t->n_devices; i++) write_side_by_side(f, t, i + 1, &sep, &busy[i], &side[i]);
    /* per device: the time its nodes ran, and the part of it with two or more at once (on a "DEVICE (device)"
     * track: the time the device's queue ran kernels, by its own clock) */
    fprintf(f, "\n],\"otherData\":{");
    for (int i = 0; i < t->n_devices; i++) {
        fputs(i ? "," : "", f);
        json_str(f, t->device_names[i]);
        fprintf(f, ":{\"node time us\":%llu,\"side by side us\":%llu}", (unsigned long long)busy[i],
                (unsigned long long)side[i]);
    }
    fprintf(f, "}}\n");
    pthread_mutex_unlock(&t->lock);
    bool ok = !ferror(f);
    ok = fclose(f) == 0 && ok;
    if (!ok || (!in_place && rename(tmp, path) != 0)) {
        if (!in_place) remove(tmp);
        return tgc_diag_add(diags, TGC_SEV_ERROR, path, (tgc_srcpos){0, 0}, "io", "cannot write the trace"), TGC_ERR_IO;
    }
    return TGC_OK;
}
