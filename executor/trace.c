/* Chrome trace events, kept in memory until written. Each thread gets a
 * small id the first time it records; a device's threads share its pid so
 * the viewer groups them ("cpu0", "gpu0" processes with one track per
 * worker). Flow events bind a _Send to its _Recv by their key.
 *
 * Recording is cheap because it runs between a step's nodes: an event
 * holds numbers only (72 bytes), its strings (a node's name, op, output
 * shapes and kernel, the same run after run) interned once in a table,
 * and events live in blocks that are never moved. The events had held
 * their strings (370 bytes) in one array grown by realloc, whose copies
 * and first touches of its pages cost the run. `tgc run --threads cpu=1`,
 * 4 interleaved runs, wall per run with --trace (without it): MNASNet
 * (208 nodes a run, each a node event and a counter) 5.7-7.6 -> 5.1-5.7
 * ms (4.6-4.8), MobileNetV3-Small (230 nodes) 2.24-2.45 -> 1.59-1.64
 * (1.30-1.34); at 2 threads MobileNetV3-Small 2.49-2.56 -> 1.65-1.83
 * (1.29-1.35). A node's strings are the same step after step (its
 * shapes are the plan's), so each (plan, node) has its ids and its
 * device's pid looked up once and kept (node_memo): an event then formats
 * nothing and hashes nothing but two pointers, where each had printed the
 * node's shapes, hashed four strings and compared device names. `tgc run
 * --threads cpu=1`, MobileNetV3-Small (230 nodes and 103 constants a
 * step), alternating runs, medians of 10 runs
 * of 200 steps: 2.85 ms a step traced -> 2.48 (2.59 untraced: the
 * machine's noise is larger than what is left); 100 Neg nodes on [1, 64]
 * at --optimize 0, 3000 steps: 183 -> 102 us a step at 1 thread (80
 * untraced), 201 -> 132 at 2 (73): 1.0 -> 0.2 us an event at 1 thread. */
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
    /* Into the trace's strings: the node's name, its op, its outputs'
     * dtypes and shapes, how its kernel ran (tgc_kernel_ctx.impl; "" when
     * it did not say). 0 is "". */
    uint32_t name, op, args, kernel;
    tgc_parallel_tally split; /* a node: its kernel's tgc_parallel_for calls and pieces */
} event;

/* A node's string ids, interned on its first event: its label, op and
 * outputs' shapes, and the kernel it last said it ran (impl, compared by
 * pointer: kernels name themselves with string constants); and its
 * device's pid. A session's plans (loop bodies' too) live as long as the
 * session and its trace, so a (plan, node) pair never comes to name
 * another node. plan NULL: a free slot. */
typedef struct node_ids {
    const void *plan;
    const tgc_node *node;
    int pid; /* the plan's device's */
    uint32_t name, op, args, kernel;
    const char *impl;
} node_ids;

/* Events a block. */
#define BLOCK_EVENTS 4096

/* Devices the trace tells apart (a process each in the viewer); the
 * devices past it share the last one's. */
#define TRACE_DEVICES 16

struct tgc_trace {
    pthread_mutex_t lock;
    event **blocks; /* [count / BLOCK_EVENTS rounded up] of BLOCK_EVENTS events */
    size_t count, n_blocks, blocks_cap;
    /* Interned strings: strings[id] (strings[0] is ""), found through an
     * open-addressed table of ids, slots a power of two, at most half full. */
    char **strings;
    uint32_t n_strings, strings_cap;
    uint32_t *slots;
    uint32_t n_slots;
    /* Each traced node's string ids, by (plan, node): open-addressed,
     * memo_slots a power of two, at most half full (node_memo). */
    node_ids *memo;
    uint32_t n_memo, memo_slots;
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
    for (size_t i = 0; i < t->n_blocks; i++) tgc_free(t->blocks[i]);
    tgc_free(t->blocks);
    for (uint32_t i = 1; i < t->n_strings; i++) tgc_free(t->strings[i]);
    tgc_free(t->strings);
    tgc_free(t->slots);
    tgc_free(t->memo);
    tgc_free(t);
}

/* Event i (< t->count). */
static event *event_at(const tgc_trace *t, size_t i) { return &t->blocks[i / BLOCK_EVENTS][i % BLOCK_EVENTS]; }

static uint64_t str_hash(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* Places id in the table (which has a free slot). */
static void slot_put(uint32_t *slots, uint32_t n_slots, const char *s, uint32_t id) {
    uint32_t i = (uint32_t)str_hash(s) & (n_slots - 1);
    while (slots[i] != 0) i = (i + 1) & (n_slots - 1);
    slots[i] = id;
}

/* Strings a trace interns at most: the table's sizes (twice this, a power
 * of two) and ids stay within uint32_t. Past it, a string reads as "". */
#define MAX_STRINGS ((uint32_t)1 << 30)

/* The id of string s, interned on first sight; 0 ("") for "", when memory
 * runs out or past MAX_STRINGS. Call with t->lock held. */
static uint32_t intern(tgc_trace *t, const char *s) {
    if (s == NULL || s[0] == '\0') return 0;
    if (t->n_slots > 0)
        for (uint32_t i = (uint32_t)str_hash(s) & (t->n_slots - 1); t->slots[i] != 0; i = (i + 1) & (t->n_slots - 1))
            if (strcmp(t->strings[t->slots[i]], s) == 0) return t->slots[i];
    if (t->n_strings == MAX_STRINGS) return 0;
    if (t->n_strings == 0 || t->n_strings == t->strings_cap) { /* entry 0 is "" */
        uint32_t cap = t->strings_cap ? t->strings_cap * 2 : 256;
        char **grown = tgc_realloc(t->strings, (size_t)cap * sizeof *grown);
        if (grown == NULL) return 0;
        t->strings = grown;
        t->strings_cap = cap;
        if (t->n_strings == 0) t->strings[t->n_strings++] = "";
    }
    if (2 * (t->n_strings + 1) > t->n_slots) { /* keep the table at most half full */
        uint32_t n = t->n_slots ? t->n_slots * 2 : 512;
        uint32_t *slots = tgc_calloc(n, sizeof *slots);
        if (slots == NULL) return 0;
        for (uint32_t id = 1; id < t->n_strings; id++) slot_put(slots, n, t->strings[id], id);
        tgc_free(t->slots);
        t->slots = slots;
        t->n_slots = n;
    }
    size_t len = strlen(s) + 1;
    char *copy = tgc_malloc(len);
    if (copy == NULL) return 0;
    memcpy(copy, s, len);
    uint32_t id = t->n_strings++;
    t->strings[id] = copy;
    slot_put(t->slots, t->n_slots, copy, id);
    return id;
}

/* Appends an event (dropped silently when memory runs out: a trace is a
 * diagnostic, never a reason to fail a run). Call with t->lock held. */
static event *append(tgc_trace *t) {
    if (t->count == t->n_blocks * BLOCK_EVENTS) {
        if (t->n_blocks == t->blocks_cap) {
            size_t cap = t->blocks_cap ? t->blocks_cap * 2 : 16;
            event **grown = tgc_realloc(t->blocks, cap * sizeof *grown);
            if (grown == NULL) return NULL;
            t->blocks = grown;
            t->blocks_cap = cap;
        }
        if ((t->blocks[t->n_blocks] = tgc_malloc(BLOCK_EVENTS * sizeof(event))) == NULL) return NULL;
        t->n_blocks++;
    }
    event *e = event_at(t, t->count++);
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
    return str_hash(s) >> 12; /* ids stay exact in a JSON double */
}

/* A node's outputs' dtypes and shapes, as the trace shows them. */
#define SHAPES_CHARS 256

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

static uint32_t memo_hash(const void *plan, const tgc_node *n) {
    uint64_t h = ((uint64_t)(uintptr_t)plan ^ ((uint64_t)(uintptr_t)n * 0x9E3779B97F4A7C15ull)) * 0xFF51AFD7ED558CCDull;
    return (uint32_t)(h >> 32);
}

/* The memo's slot for node n of plan: the node's own, or the free one
 * where it would go. The memo has a free slot. */
static node_ids *memo_slot(node_ids *memo, uint32_t slots, const void *plan, const tgc_node *n) {
    uint32_t i = memo_hash(plan, n) & (slots - 1);
    while (memo[i].plan != NULL && !(memo[i].plan == plan && memo[i].node == n)) i = (i + 1) & (slots - 1);
    return &memo[i];
}

/* Node n of plan's ids, interned now (no kernel yet). Call with t->lock held. */
static node_ids ids_of(tgc_trace *t, const struct tgc_plan *plan, const tgc_node *n) {
    char shapes[SHAPES_CHARS];
    shapes_of(plan->g, n, shapes, sizeof shapes);
    return (node_ids){.plan = plan,
                      .node = n,
                      .pid = device_pid(t, plan->device->name),
                      .name = intern(t, tgc_node_label(n)),
                      .op = intern(t, n->op_name ? n->op_name : n->kind == TGC_NODE_INPUT ? "input" : "const"),
                      .args = intern(t, shapes)};
}

/* Node n of plan's string ids, interned on its first event; NULL when
 * memory runs out (the caller interns them itself). Call with t->lock
 * held. */
static node_ids *node_memo(tgc_trace *t, const struct tgc_plan *plan, const tgc_node *n) {
    if (t->memo_slots > 0) {
        node_ids *m = memo_slot(t->memo, t->memo_slots, plan, n);
        if (m->plan != NULL) return m;
    }
    if (t->n_memo >= UINT32_MAX / 4) return NULL;
    if (2 * (t->n_memo + 1) > t->memo_slots) { /* keep it at most half full */
        uint32_t slots = t->memo_slots ? t->memo_slots * 2 : 256;
        node_ids *grown = tgc_calloc(slots, sizeof *grown);
        if (grown == NULL) return NULL;
        for (uint32_t i = 0; i < t->memo_slots; i++)
            if (t->memo[i].plan != NULL) *memo_slot(grown, slots, t->memo[i].plan, t->memo[i].node) = t->memo[i];
        tgc_free(t->memo);
        t->memo = grown;
        t->memo_slots = slots;
    }
    node_ids *m = memo_slot(t->memo, t->memo_slots, plan, n);
    *m = ids_of(t, plan, n);
    t->n_memo++;
    return m;
}

void tgc_trace_node(tgc_trace *t, const struct tgc_plan *plan, int32_t id, int64_t step, const char *key,
                    uint64_t start, uint64_t end, tgc_parallel_tally split) {
    const tgc_node *n = &plan->g->nodes[id];
    int64_t in_use = tgc_device_stats(plan->device).bytes_in_use;
    const char *impl = plan->impl != NULL ? atomic_load_explicit(&plan->impl[id], memory_order_relaxed) : NULL;
    pthread_mutex_lock(&t->lock);
    node_ids own, *m = node_memo(t, plan, n);
    if (m == NULL) m = (own = ids_of(t, plan, n), &own);
    if (impl != m->impl) m->kernel = intern(t, impl), m->impl = impl;
    int pid = m->pid;
    event *e = append(t);
    if (e != NULL) {
        e->kind = EV_NODE;
        e->pid = pid;
        e->step = step;
        e->ts = start;
        e->dur = end > start ? end - start : 0;
        e->name = m->name;
        e->op = m->op;
        e->args = m->args;
        e->kernel = m->kernel;
        e->split = split;
    }
    if (plan->role[id] == TGC_ROLE_SEND && key != NULL && (e = append(t)) != NULL) {
        e->kind = EV_FLOW_START;
        e->pid = pid;
        e->ts = start;
        e->flow = key_hash(key);
        e->name = intern(t, n->name);
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
        e->name = intern(t, tgc_node_label(n));
        e->op = intern(t, n->op_name);
        e->kernel = intern(t, kernel);
    }
    pthread_mutex_unlock(&t->lock);
}

void tgc_trace_recv(tgc_trace *t, const struct tgc_plan *plan, int32_t id, int64_t step, const char *key,
                    uint64_t at) {
    const tgc_node *n = &plan->g->nodes[id];
    char shapes[SHAPES_CHARS];
    shapes_of(plan->g, n, shapes, sizeof shapes);
    pthread_mutex_lock(&t->lock);
    int pid = device_pid(t, plan->device->name);
    event *e = append(t);
    if (e != NULL) {
        e->kind = EV_NODE;
        e->pid = pid;
        e->step = step;
        e->ts = at;
        e->dur = 1;
        e->name = intern(t, n->name);
        e->op = intern(t, "_Recv");
        e->args = intern(t, shapes);
    }
    if (key != NULL && (e = append(t)) != NULL) {
        e->kind = EV_FLOW_END;
        e->pid = pid;
        e->ts = at;
        e->flow = key_hash(key);
        e->name = intern(t, n->name);
    }
    pthread_mutex_unlock(&t->lock);
}

/* String id of t (0: ""). */
static const char *string_of(const tgc_trace *t, uint32_t id) { return id == 0 ? "" : t->strings[id]; }

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

static void write_event(FILE *f, const tgc_trace *t, const event *e) {
    switch (e->kind) {
    case EV_NODE:
        fprintf(f, "{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%llu,\"dur\":%llu,\"name\":", e->pid, e->tid,
                (unsigned long long)e->ts, (unsigned long long)e->dur);
        json_str(f, string_of(t, e->name));
        fprintf(f, ",\"cat\":");
        json_str(f, string_of(t, e->op));
        fprintf(f, ",\"args\":{\"op\":");
        json_str(f, string_of(t, e->op));
        fprintf(f, ",\"step\":%lld,\"outputs\":", (long long)e->step);
        json_str(f, string_of(t, e->args));
        if (e->kernel != 0) {
            fprintf(f, ",\"kernel\":");
            json_str(f, string_of(t, e->kernel));
        }
        if (e->split.splits > 0)
            fprintf(f, ",\"splits\":%lld,\"pieces\":%lld", (long long)e->split.splits, (long long)e->split.pieces);
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
    for (size_t i = 0; i < t->count; i++) {
        const event *e = event_at(t, i);
        n += e->kind == EV_NODE && e->pid == pid && e->dur > 0;
    }
    edge *edges = n > 0 ? tgc_malloc(2 * n * sizeof *edges) : NULL;
    if (edges == NULL) return;
    size_t k = 0;
    for (size_t i = 0; i < t->count; i++) {
        const event *e = event_at(t, i);
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
        write_event(f, t, event_at(t, i));
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
