/* Automatic placement (placer_impl.h, tgc_pl_auto): the op groups that
 * rule 5 would give the first device of the best kind go where the whole
 * placement is fastest, under each device's memory.
 *
 * The graph is cut into contiguous segments of its topological order, one
 * segment a device (a device may take none), in some order of the devices:
 * the stages of PipeDream's and Alpa's planners (PipeDream's
 * optimizer_graph_hierarchical.py, Alpa's stage_construction.py, a dynamic
 * program over contiguous layer ranges). A segment's cost on a device is
 * the sum of its nodes' times there (placer/cost.h) plus the transfer of
 * the tensors that cross its first boundary; its memory is the weights
 * its nodes read first, the kernels' own layouts of them and the largest
 * workspace (devices/kernel.h, tgc_kernel_node_footprint), plus the most
 * bytes live at one of its steps. One step's latency (inflight 1) sums the
 * segments; a pipeline's throughput (inflight > 1) takes the slowest.
 * Segments whose memory exceeds their device's capacity are not
 * considered, so memory is a hard limit here as at run time.
 *
 * The order is grouped into at most MAX_BLOCKS blocks of consecutive nodes
 * (cuts fall between blocks) and every order of the devices is tried for
 * lists of at most MAX_PERMUTED devices (the listed order otherwise):
 * O(orders x devices x blocks^2), a few million steps for any graph, so a
 * graph of 10^4 nodes places in well under a second. Ties go to the
 * earlier order and the later cut: the same graph, list and costs give the
 * same placement.
 *
 * What it does not see: nodes the rules pinned (device specs, colocation,
 * kernels, host memory) keep their device, their weights are taken off
 * that device's capacity and their transfers are not counted; the live
 * bytes of a step are estimated from the tensors crossing it, or its
 * inputs and outputs together (less a forwarded buffer). The session's
 * memory check (executor/memory_plan_check.c) holds
 * the placement to the exact static plan before anything loads. */
#include "placer/placer_impl.h"

#include "devices/backend.h"
#include "placer/cost.h"
#include "support/alloc.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define MAX_BLOCKS 256
#define MAX_PERMUTED 4

/* The working state: the op nodes in topological order, per position and
 * per block figures, and the dynamic program's tables. */
typedef struct au_ctx {
    pl_ctx *c;
    const tgc_placer_auto *a;
    int n_dev;
    int32_t n;          /* op nodes */
    int32_t *ops;       /* position -> node id */
    int32_t *pos;       /* node id -> position, -1 for sources */
    uint8_t *free;      /* position: auto decides it */
    double *cut;        /* [0..n]: bytes crossing the boundary before position i */
    double *live;       /* [0..n): bytes live at position i's step (an estimate) */
    double *lean;       /* [0..n): the same without the step's inputs (see read_graph) */
    double *weights;    /* [0..n): bytes of initializers position i reads first */
    int32_t *readers;   /* node id -> inputs reading it, graph outputs too */
    int64_t pinned_bytes[TGC_PLACER_MAX_DEVICES]; /* weights and caches of pinned nodes, per device */
    /* Blocks of `per` positions. */
    int32_t per, n_blocks;
    double *bcost;  /* [b * n_dev + d]: seconds of the block's free nodes on d; INFINITY: one has no kernel there */
    double *bcold;  /* [b * n_dev + d]: what they take more from caches emptied (0 where never spilled) */
    double spill;   /* the share of reads that miss the host's cache, one copy of the graph held (tgc_cost_spill) */
    double *bmem;   /* [b * n_dev + d]: weights and kernel caches there */
    double *bwork;  /* [b * n_dev + d]: the largest workspace there */
    double *blive;  /* [b]: the most bytes live at one of its steps */
    /* The dynamic program, for one order of the devices. */
    double *best;   /* [k * (n_blocks + 1) + b] */
    int32_t *from;  /* the start block of segment k ending at b */
    int8_t *last;   /* the device of the last non-empty segment, -1: none */
} au_ctx;

static void au_free(au_ctx *x) {
    tgc_free(x->ops);
    tgc_free(x->pos);
    tgc_free(x->free);
    tgc_free(x->cut);
    tgc_free(x->live);
    tgc_free(x->lean);
    tgc_free(x->weights);
    tgc_free(x->readers);
    tgc_free(x->bcost);
    tgc_free(x->bcold);
    tgc_free(x->bmem);
    tgc_free(x->bwork);
    tgc_free(x->blive);
    tgc_free(x->best);
    tgc_free(x->from);
    tgc_free(x->last);
}

/* What the exact plan charged node id on device d on an earlier try
 * (tgc_placer_auto.charge), 0 for none. */
static int64_t charge_of(const au_ctx *x, int32_t id, int d) {
    return x->a->charge != NULL && id < x->a->n_charged ? x->a->charge[(size_t)id * x->n_dev + d] : 0;
}

/* Bytes of a value, symbolic dims as 1; 0 when its rank is unknown. */
static double value_bytes(const tgc_tensor_info *t) {
    return tgc_shape_numel_estimate(&t->shape) * (double)tgc_dtype_size(t->dtype);
}

/* Node id's kernel on device d. */
static const tgc_kernel_def *kernel_on(const pl_ctx *c, int32_t id, int d) {
    return c->kdef[(size_t)id * c->n_kinds + c->devs[d].kind];
}

/* What node id's kernel holds on device d: for its pool's width, under its workspace limit. */
static tgc_kernel_footprint footprint_on(const au_ctx *x, int32_t id, int d) {
    return tgc_kernel_node_footprint(kernel_on(x->c, id, d), x->c->g, id, x->a->width[d], x->a->workspace_limit[d]);
}

/* The bytes of op id's output 0 that take over its input's buffer
 * (executor/node_run.c's can_forward: the kernel's forward_input, last
 * read here, the same bytes and dtype), on the first listed device with
 * a kernel for it; 0 when none does. lastp: each node's last reader's
 * position. */
static double forwarded_bytes(const au_ctx *x, int32_t id, const int32_t *lastp) {
    const pl_ctx *c = x->c;
    const tgc_node *n = &c->g->nodes[id];
    const tgc_kernel_def *k = NULL;
    for (int d = 0; d < x->n_dev && k == NULL; d++) k = kernel_on(c, id, d);
    if (k == NULL || k->forward_input < 0 || k->forward_input >= n->n_inputs || n->n_outputs < 1) return 0;
    tgc_ref r = n->inputs[k->forward_input];
    if (r.node < 0 || !(c->flags[r.node] & PL_OP) || lastp[r.node] != x->pos[id] || x->readers[r.node] > 1)
        return 0; /* a feed or a weight is not the run's to hand over; a tensor read again is still needed */
    const tgc_tensor_info *in = &c->g->nodes[r.node].outputs[r.port], *out = &n->outputs[0];
    double bytes = value_bytes(out);
    return in->dtype == out->dtype && value_bytes(in) == bytes ? bytes : 0;
}

/* The bytes of the tensors op id reads that other ops made (each once;
 * not weights or feeds). */
static double inputs_bytes(const au_ctx *x, int32_t id) {
    const tgc_node *n = &x->c->g->nodes[id];
    double bytes = 0;
    for (int k = 0; k < n->n_inputs; k++) {
        tgc_ref r = n->inputs[k];
        bool again = false;
        for (int j = 0; j < k && !again; j++) again = n->inputs[j].node == r.node && n->inputs[j].port == r.port;
        if (r.node >= 0 && !again && (x->c->flags[r.node] & PL_OP))
            bytes += value_bytes(&x->c->g->nodes[r.node].outputs[r.port]);
    }
    return bytes;
}

/* The op nodes in topological order, which of them auto decides, and
 * where each tensor is first and last read: cut, live and weights. */
static tgc_status read_graph(au_ctx *x) {
    pl_ctx *c = x->c;
    const tgc_graph *g = c->g;
    int32_t nn = g->n_nodes;
    x->ops = tgc_malloc(((size_t)nn + 1) * sizeof *x->ops);
    x->pos = tgc_malloc(((size_t)nn + 1) * sizeof *x->pos);
    if (x->ops == NULL || x->pos == NULL) return TGC_ERR_NOMEM;
    for (int32_t i = 0; i < nn; i++) {
        int32_t id = g->topo != NULL ? g->topo[i] : i;
        x->pos[id] = -1;
        if (c->flags[id] & PL_OP) x->ops[x->n++] = id;
    }
    for (int32_t i = 0; i < x->n; i++) x->pos[x->ops[i]] = i;
    size_t n1 = (size_t)x->n + 1;
    x->free = tgc_calloc(n1, sizeof *x->free);
    x->cut = tgc_calloc(n1 + 1, sizeof *x->cut);
    x->live = tgc_calloc(n1, sizeof *x->live);
    x->lean = tgc_calloc(n1, sizeof *x->lean);
    x->weights = tgc_calloc(n1, sizeof *x->weights);
    x->readers = tgc_calloc((size_t)nn + 1, sizeof *x->readers);
    int32_t *first = tgc_malloc(((size_t)nn + 1) * 2 * sizeof *first);
    if (x->free == NULL || x->cut == NULL || x->live == NULL || x->lean == NULL || x->weights == NULL ||
        x->readers == NULL ||
        first == NULL) {
        tgc_free(first);
        return TGC_ERR_NOMEM;
    }
    int32_t *lastp = first + nn + 1;
    for (int32_t id = 0; id < nn; id++) first[id] = INT32_MAX, lastp[id] = -1;
    /* Each node's outputs as one tensor (first and last reader); ops by position. */
    for (int32_t i = 0; i < x->n; i++) {
        const tgc_node *n = &g->nodes[x->ops[i]];
        for (int k = 0; k < n->n_inputs; k++) {
            int32_t p = n->inputs[k].node;
            if (p < 0) continue;
            x->readers[p]++;
            if (i < first[p]) first[p] = i;
            if (i > lastp[p]) lastp[p] = i;
        }
    }
    for (int i = 0; i < g->n_outputs; i++)
        if (g->outputs[i].node >= 0) x->readers[g->outputs[i].node]++;
    for (int32_t id = 0; id < nn; id++) {
        const tgc_node *n = &g->nodes[id];
        double bytes = 0;
        for (int k = 0; k < n->n_outputs; k++) bytes += value_bytes(&n->outputs[k]);
        bool op = (c->flags[id] & PL_OP) != 0;
        int32_t from = op ? x->pos[id] : first[id], to = lastp[id];
        if (op) x->live[x->pos[id]] = bytes - forwarded_bytes(x, id, lastp); /* its new buffers, for now */
        else if (n->kind == TGC_NODE_CONST && first[id] != INT32_MAX) x->weights[first[id]] += bytes;
        if (from == INT32_MAX || to <= from || tgc_node_is_small_constant(n)) continue; /* copied, not sent */
        /* crosses the boundaries before positions from + 1 .. to */
        x->cut[from + 1] += bytes;
        x->cut[to + 1] -= bytes;
    }
    tgc_free(first);
    for (int32_t i = 1; i <= x->n; i++) x->cut[i] += x->cut[i - 1];
    /* A step's live bytes: what crosses into it or out of it, or its
     * inputs and its new outputs together (less an output that takes over
     * its input's buffer: buffer forwarding), whichever is most. Counting
     * its outputs without its inputs (lean) put a depthwise Conv's 4.6 MiB
     * input and 1.1 MiB output at 4.6 MiB, and the session's exact check
     * refused MobileNetV2 split over three cpus. Yet an input may come
     * from a segment on another device that holds it (a host-memory
     * _Send's receiver reads it in place: a residual's skip), and counted
     * here it refused ResNet splits that fit: where no split fits by this
     * estimate, tgc_pl_auto tries the lean one, and the session's exact
     * check has the last word. */
    for (int32_t i = 0; i < x->n; i++) {
        x->lean[i] = fmax(fmax(x->cut[i], x->cut[i + 1]), x->live[i]);
        x->live[i] = fmax(x->lean[i], inputs_bytes(x, x->ops[i]) + x->live[i]);
    }
    return TGC_OK;
}

/* What position i holds on device d across steps: the initializers it
 * reads first and its kernel's cache, less the initializers that cache
 * stands in for where it is their only reader (held once: the session
 * lets the original go, executor/prepack.c). */
static double held_bytes(const au_ctx *x, int32_t i, const tgc_kernel_footprint *f) {
    const tgc_graph *g = x->c->g;
    const tgc_node *n = &g->nodes[x->ops[i]];
    double bytes = x->weights[i] + (double)f->cache_bytes;
    for (int k = 0; f->replaces_inputs != 0 && k < n->n_inputs && k < 32; k++) {
        int32_t p = n->inputs[k].node;
        if (p >= 0 && (f->replaces_inputs & (1u << k)) && g->nodes[p].kind == TGC_NODE_CONST && x->readers[p] == 1)
            bytes -= (double)g->nodes[p].data->nbytes;
    }
    return bytes;
}

/* Which positions auto decides: op groups of one node that rule 5 gave
 * the default device with more than one device allowed. The others'
 * weights and kernel caches are taken off their device's capacity. */
static void mark_free(au_ctx *x) {
    pl_ctx *c = x->c;
    for (int32_t i = 0; i < x->n; i++) {
        int32_t id = x->ops[i], r = tgc_pl_find(c, id);
        tgc_devmask m = tgc_pl_allowed(c, r);
        x->free[i] = c->how[r] == PL_HOW_DEFAULT && c->size[r] == 1 && (m & (m - 1)) != 0;
        if (x->free[i]) continue;
        int d = c->device[r];
        if (d < 0) continue;
        tgc_kernel_footprint f = footprint_on(x, id, d);
        x->pinned_bytes[d] += (int64_t)held_bytes(x, i, &f);
    }
}

/* Each block's most bytes live at one of its steps, from x->live. */
static void fill_block_live(au_ctx *x) {
    for (int32_t b = 0; b < x->n_blocks; b++) x->blive[b] = 0;
    for (int32_t i = 0; i < x->n; i++)
        if (x->live[i] > x->blive[i / x->per]) x->blive[i / x->per] = x->live[i];
}

/* The bytes one copy of the graph holds on host-memory devices: every
 * block's weights and kernel caches on the first such device, the pinned
 * nodes', and the most bytes live at a step; 0 without a host device. */
static double host_held(const au_ctx *x) {
    int d = 0;
    while (d < x->n_dev && !tgc_kind_host_memory(x->c->devs[d].kind)) d++;
    if (d == x->n_dev) return 0;
    double held = 0, live = 0;
    for (int32_t b = 0; b < x->n_blocks; b++) {
        held += x->bmem[(size_t)b * x->n_dev + d];
        live = fmax(live, x->blive[b]);
    }
    for (int e = 0; e < x->n_dev; e++) held += (double)x->pinned_bytes[e];
    return held + live;
}

/* The per block figures. Where the devices could hold more than the
 * host's cache keeps (every device a copy: replicas), the nodes' cold
 * figures too (tgc_cost_node_spilled), and the costs the program weighs
 * are spilled by one copy's share (x->spill). */
static tgc_status fill_blocks(au_ctx *x) {
    pl_ctx *c = x->c;
    int D = x->n_dev;
    x->per = x->n > MAX_BLOCKS ? (x->n + MAX_BLOCKS - 1) / MAX_BLOCKS : 1;
    x->n_blocks = x->n > 0 ? (x->n + x->per - 1) / x->per : 0;
    size_t cells = (size_t)x->n_blocks * (size_t)D + 1;
    x->bcost = tgc_calloc(cells, sizeof *x->bcost);
    x->bcold = tgc_calloc(cells, sizeof *x->bcold);
    x->bmem = tgc_calloc(cells, sizeof *x->bmem);
    x->bwork = tgc_calloc(cells, sizeof *x->bwork);
    x->blive = tgc_calloc((size_t)x->n_blocks + 1, sizeof *x->blive);
    if (x->bcost == NULL || x->bcold == NULL || x->bmem == NULL || x->bwork == NULL || x->blive == NULL)
        return TGC_ERR_NOMEM;
    fill_block_live(x);
    for (int32_t i = 0; i < x->n; i++) {
        int32_t b = i / x->per, id = x->ops[i];
        if (!x->free[i]) continue;
        tgc_devmask m = tgc_pl_allowed(c, tgc_pl_find(c, id));
        for (int d = 0; d < D; d++) {
            double *cost = &x->bcost[(size_t)b * D + d];
            if (!(m & tgc_pl_bit(d))) {
                *cost = INFINITY;
                continue;
            }
            *cost += tgc_cost_node(x->a->cost, c->g, id, d, NULL);
            tgc_kernel_footprint f = footprint_on(x, id, d);
            x->bmem[(size_t)b * D + d] += held_bytes(x, i, &f);
            double *work = &x->bwork[(size_t)b * D + d], need = (double)(f.workspace_bytes + charge_of(x, id, d));
            if (need > *work) *work = need;
        }
    }
    size_t table = (size_t)(D + 1) * ((size_t)x->n_blocks + 1);
    x->best = tgc_malloc(table * sizeof *x->best);
    x->from = tgc_malloc(table * sizeof *x->from);
    x->last = tgc_malloc(table * sizeof *x->last);
    if (x->best == NULL || x->from == NULL || x->last == NULL) return TGC_ERR_NOMEM;
    double held = host_held(x);
    x->spill = tgc_cost_spill(x->a->cost, held);
    if (tgc_cost_spill(x->a->cost, held * D) <= 0) return TGC_OK; /* the cache keeps it all, replicas too */
    for (int32_t i = 0; i < x->n; i++) {
        int32_t b = i / x->per, id = x->ops[i];
        for (int d = 0; x->free[i] && d < D; d++) {
            if (isinf(x->bcost[(size_t)b * D + d]) || !tgc_kind_host_memory(c->devs[d].kind)) continue;
            double warm = tgc_cost_node(x->a->cost, c->g, id, d, NULL);
            x->bcold[(size_t)b * D + d] += tgc_cost_node_spilled(x->a->cost, c->g, id, d, 1, NULL) - warm;
        }
    }
    for (size_t k = 0; k + 1 < cells; k++) x->bcost[k] += x->spill * x->bcold[k];
    return TGC_OK;
}

/* Device d's room for the segments auto gives it; INFINITY: no bound. */
static double room(const au_ctx *x, int d) {
    int64_t cap = x->a->capacity[d];
    return cap > 0 ? (double)(cap - x->pinned_bytes[d]) : INFINITY;
}

/* The best cut of the blocks over the devices in order perm[0..D): its
 * objective (INFINITY when nothing fits), the tables filled. */
static double plan_order(au_ctx *x, const int *perm) {
    int D = x->n_dev;
    int32_t nb = x->n_blocks, w = nb + 1;
    bool pipeline = x->a->inflight > 1;
    for (int32_t b = 0; b <= nb; b++) {
        x->best[b] = b == 0 ? 0 : INFINITY;
        x->from[b] = b;
        x->last[b] = -1;
    }
    for (int k = 1; k <= D; k++) {
        int d = perm[k - 1];
        double cap = room(x, d);
        const double *prev = &x->best[(size_t)(k - 1) * w];
        double *best = &x->best[(size_t)k * w];
        int32_t *from = &x->from[(size_t)k * w];
        int8_t *last = &x->last[(size_t)k * w];
        const int8_t *prev_last = &x->last[(size_t)(k - 1) * w];
        for (int32_t b = 0; b <= nb; b++) {
            best[b] = prev[b]; /* device d takes nothing */
            from[b] = b;
            last[b] = prev_last[b];
            double cost = 0, mem = 0, live = 0, work = 0;
            for (int32_t a = b - 1; a >= 0; a--) {
                cost += x->bcost[(size_t)a * D + d];
                if (isinf(cost)) break; /* a node of block a has no kernel on d */
                mem += x->bmem[(size_t)a * D + d];
                if (x->blive[a] > live) live = x->blive[a];
                if (x->bwork[(size_t)a * D + d] > work) work = x->bwork[(size_t)a * D + d];
                if (mem + live + work > cap) break; /* and more so further back */
                if (isinf(prev[a])) continue;
                int from_dev = prev_last[a];
                double in = 0;
                if (from_dev >= 0) {
                    /* a pipeline overlaps a transfer's latency with other steps' work: only its
                     * bytes occupy the stage */
                    in = tgc_cost_transfer(x->a->cost, from_dev, d, (int64_t)x->cut[a * x->per]);
                    if (pipeline) in -= tgc_cost_transfer(x->a->cost, from_dev, d, 0);
                }
                double v = pipeline ? fmax(prev[a], cost + in) : prev[a] + cost + in;
                if (v < best[b] * (1 - 1e-12)) {
                    best[b] = v;
                    from[b] = a;
                    last[b] = (int8_t)d;
                }
            }
        }
    }
    return x->best[(size_t)D * w + nb];
}

/* Gives each free node the device of its segment, as plan_order left the
 * tables for `perm`. */
static void assign(au_ctx *x, const int *perm) {
    pl_ctx *c = x->c;
    int32_t w = x->n_blocks + 1, b = x->n_blocks;
    for (int k = x->n_dev; k >= 1 && b > 0; k--) {
        int32_t a = x->from[(size_t)k * w + b];
        for (int32_t i = a * x->per; i < b * x->per && i < x->n; i++) {
            if (!x->free[i]) continue;
            int32_t r = tgc_pl_find(c, x->ops[i]);
            c->device[r] = perm[k - 1];
            c->how[r] = (uint8_t)PL_HOW_AUTO;
        }
        b = a;
    }
}

/* Node id's outputs, made on device d, sent to each device of `to` every
 * step: counted in f as sent, received and the receiver's seconds. */
static void send_each_step(au_ctx *x, tgc_placement_forecast *f, int32_t id, int d, tgc_devmask to) {
    const tgc_node *n = &x->c->g->nodes[id];
    if (to == 0 || d < 0) return;
    double bytes = 0;
    for (int k = 0; k < n->n_outputs; k++) bytes += value_bytes(&n->outputs[k]);
    for (int e = 0; e < x->n_dev; e++) {
        if (!(to & tgc_pl_bit(e))) continue;
        f[d].sent += (int64_t)bytes;
        f[e].received += (int64_t)bytes;
        double t = tgc_cost_transfer(x->a->cost, d, e, (int64_t)bytes);
        f[e].seconds += t;
        f[e].warm_seconds += t;
    }
}

/* The share of reads that miss the host's cache (tgc_cost_spill) with the
 * host-memory devices holding what f says, each replica device
 * (c->replicas) as much as the one the ops were placed on. */
static double forecast_spill(const au_ctx *x, const tgc_placement_forecast *f) {
    pl_ctx *c = x->c;
    int home = x->n > 0 ? c->device[tgc_pl_find(c, x->ops[0])] : -1;
    double held = 0;
    for (int d = 0; d < x->n_dev; d++) {
        const tgc_placement_forecast *h = (c->replicas & tgc_pl_bit(d)) && home >= 0 ? &f[home] : &f[d];
        if (tgc_kind_host_memory(c->devs[d].kind)) held += (double)(h->weights + h->caches + h->live);
    }
    return tgc_cost_spill(x->a->cost, held);
}

/* What the placement made predicts for each device (tgc_placement_forecast),
 * every op node counted where it now runs (a Shape or Size still waiting
 * for its input's device aside); each tensor, a graph input's or a large
 * initializer's too, sent once per other device that reads it (a small
 * constant is copied there instead: tgc_node_is_small_constant). */
static tgc_status forecast(au_ctx *x) {
    pl_ctx *c = x->c;
    const tgc_graph *g = c->g;
    tgc_placement_forecast *f = tgc_calloc((size_t)x->n_dev, sizeof *f);
    tgc_devmask *to = tgc_calloc((size_t)x->n + 1, sizeof *to); /* position -> the other devices reading it */
    /* graph inputs and initializers -> the other devices reading them (sent every step too) */
    tgc_devmask *source_to = tgc_calloc((size_t)g->n_nodes + 1, sizeof *source_to);
    if (f == NULL || to == NULL || source_to == NULL) {
        tgc_free(f);
        tgc_free(to);
        tgc_free(source_to);
        return TGC_ERR_NOMEM;
    }
    for (int32_t j = 0; j < x->n; j++) {
        const tgc_node *m = &g->nodes[x->ops[j]];
        int e = c->device[tgc_pl_find(c, x->ops[j])];
        for (int k = 0; e >= 0 && k < m->n_inputs; k++) {
            int32_t p = m->inputs[k].node;
            if (p < 0 || c->device[tgc_pl_find(c, p)] == e || tgc_node_is_small_constant(&g->nodes[p])) continue;
            if (x->pos[p] >= 0) to[x->pos[p]] |= tgc_pl_bit(e);
            else source_to[p] |= tgc_pl_bit(e);
        }
    }
    for (int d = 0; d < x->n_dev; d++) f[d].measured = true;
    for (int32_t i = 0; i < x->n; i++) {
        int32_t id = x->ops[i];
        int d = c->device[tgc_pl_find(c, id)];
        if (d < 0) continue;
        tgc_kernel_footprint fp = footprint_on(x, id, d);
        f[d].weights += (int64_t)held_bytes(x, i, &fp) - fp.cache_bytes; /* those not replaced */
        f[d].caches += fp.cache_bytes;
        int64_t work = fp.workspace_bytes + charge_of(x, id, d);
        if (work > f[d].workspace) f[d].workspace = work;
        if ((int64_t)x->live[i] > f[d].live) f[d].live = (int64_t)x->live[i];
        send_each_step(x, f, id, d, to[i]);
    }
    x->spill = forecast_spill(x, f);
    for (int32_t i = 0; i < x->n; i++) {
        int32_t id = x->ops[i];
        int d = c->device[tgc_pl_find(c, id)];
        bool measured = false;
        if (d < 0) continue;
        f[d].seconds += tgc_cost_node_spilled(x->a->cost, g, id, d, x->spill, &measured);
        f[d].warm_seconds += tgc_cost_node(x->a->cost, g, id, d, NULL);
        f[d].measured &= measured;
    }
    for (int32_t id = 0; id < g->n_nodes; id++)
        if (source_to[id] != 0) send_each_step(x, f, id, c->device[tgc_pl_find(c, id)], source_to[id]);
    tgc_free(to);
    tgc_free(source_to);
    c->forecast = f;
    return TGC_OK;
}

/* The next permutation of p[0..n) in lexicographic order; false after the last. */
static bool next_order(int *p, int n) {
    int i = n - 2;
    while (i >= 0 && p[i] >= p[i + 1]) i--;
    if (i < 0) return false;
    int j = n - 1;
    while (p[j] <= p[i]) j--;
    int t = p[i];
    p[i] = p[j];
    p[j] = t;
    for (int l = i + 1, r = n - 1; l < r; l++, r--) t = p[l], p[l] = p[r], p[r] = t;
    return true;
}

/* "37.1 KiB", "12.3 MiB", "1.5 GiB" */
static const char *mib(double bytes, char *buf, size_t size) {
    if (bytes < 1048576.0) snprintf(buf, size, "%.1f KiB", bytes / 1024.0);
    else if (bytes < 1073741824.0) snprintf(buf, size, "%.1f MiB", bytes / 1048576.0);
    else snprintf(buf, size, "%.1f GiB", bytes / 1073741824.0);
    return buf;
}

/* Nothing fits: what the graph needs against what the devices hold. */
static tgc_status refuse(au_ctx *x) {
    pl_ctx *c = x->c;
    double weights = 0, live = 0;
    for (int32_t i = 0; i < x->n; i++) {
        weights += x->weights[i];
        if (x->live[i] > live) live = x->live[i];
    }
    pl_text t = {0};
    char a[32], b[32];
    tgc_pl_text_add(&t, "automatic placement: no split of the graph over the devices fits their memory: its weights "
                        "are %s and up to %s of tensors are live at one step; ",
                    mib(weights, a, sizeof a), mib(live, b, sizeof b));
    for (int d = 0; d < x->n_dev; d++) {
        char name[32];
        tgc_placer_device_name(c->devs[d], name, sizeof name);
        double r = room(x, d);
        if (isinf(r)) tgc_pl_text_add(&t, "%s%s has no bound", d ? ", " : "", name);
        else tgc_pl_text_add(&t, "%s%s can hold %s", d ? ", " : "", name, mib(r > 0 ? r : 0, a, sizeof a));
    }
    /* One step no device can hold: more devices would not help. */
    double most_room = 0, step = 0;
    int32_t at = -1;
    for (int d = 0; d < x->n_dev; d++) most_room = fmax(most_room, room(x, d));
    for (int32_t i = 0; i < x->n; i++)
        if (x->free[i] && x->weights[i] + x->live[i] > step) step = x->weights[i] + x->live[i], at = i;
    if (at >= 0 && step > most_room)
        tgc_pl_text_add(&t, "; node '%s' alone holds %s at its step (the weights it reads and the tensors live "
                            "there), more than any device can, so no split helps (raise --memory-limit)",
                        tgc_node_label(&c->g->nodes[x->ops[at]]), mib(step, a, sizeof a));
    else
        tgc_pl_text_add(&t, " (kernel caches and workspaces come on top of the weights; list more devices or raise "
                            "--memory-limit)");
    tgc_status s = t.failed ? TGC_ERR_NOMEM
                            : tgc_diag_error(c->diags, c->g->path, (tgc_srcpos){0, 0}, "over-memory", "%s", t.p);
    tgc_pl_text_free(&t);
    return s;
}

/* Replicas beat a pipeline by at least this share of throughput, or the
 * pipeline stays (it holds each weight once). */
#define REPLICA_GAIN 0.05

/* Replicas, for throughput (inflight > 1) when auto decides every op:
 * each device that can run and hold the whole graph runs whole steps of
 * its own, as data-parallel serving does, at 1 / (its time of the whole
 * graph) steps a second; the inflight fastest together against the
 * pipeline's 1 / `stage` (its slowest stage). A graph whose work cannot be
 * cut into even stages (three Gemms, the first half the work) gains most.
 * The chosen devices' mask (0: keep the pipeline); *fastest the one whose
 * whole-graph time is least. */
static tgc_devmask choose_replicas(au_ctx *x, double stage, int *fastest) {
    int D = x->n_dev;
    if (x->a->inflight < 2 || D < 2) return 0;
    for (int d = 0; d < D; d++)
        if (x->c->devs[d].task != 0) return 0; /* across processes steps are started by every rank alike */
    for (int32_t i = 0; i < x->n; i++)
        if (!x->free[i]) return 0; /* a pinned node would make the replicas differ */
    double seconds[TGC_PLACER_MAX_DEVICES];
    int order[TGC_PLACER_MAX_DEVICES], fit = 0;
    /* each replica holds a copy: as many as steps in flight, at most every device */
    double extra = tgc_cost_spill(x->a->cost, host_held(x) * (x->a->inflight < D ? x->a->inflight : D)) - x->spill;
    for (int d = 0; d < D; d++) {
        double t = 0, mem = 0, live = 0, work = 0;
        for (int32_t b = 0; b < x->n_blocks; b++) {
            t += x->bcost[(size_t)b * D + d] + extra * x->bcold[(size_t)b * D + d];
            mem += x->bmem[(size_t)b * D + d];
            live = fmax(live, x->blive[b]);
            work = fmax(work, x->bwork[(size_t)b * D + d]);
        }
        if (isinf(t) || t <= 0 || mem + live + work > room(x, d)) continue;
        seconds[d] = t;
        int k = fit++; /* insertion by time, then by index: deterministic */
        while (k > 0 && seconds[order[k - 1]] > t) order[k] = order[k - 1], k--;
        order[k] = d;
    }
    if (fit > x->a->inflight) fit = x->a->inflight;
    if (fit < 2) return 0;
    double rate = 0;
    tgc_devmask mask = 0;
    for (int k = 0; k < fit; k++) rate += 1.0 / seconds[order[k]], mask |= tgc_pl_bit(order[k]);
    if (rate <= (1.0 / stage) * (1.0 + REPLICA_GAIN)) return 0;
    *fastest = order[0];
    return mask;
}

/* Every free node on device d. */
static void assign_all(au_ctx *x, int d) {
    for (int32_t i = 0; i < x->n; i++) {
        if (!x->free[i]) continue;
        int32_t r = tgc_pl_find(x->c, x->ops[i]);
        x->c->device[r] = d;
        x->c->how[r] = (uint8_t)PL_HOW_AUTO;
    }
}

/* The best objective over the orders of the devices (all of them for at
 * most MAX_PERMUTED devices, else the listed one) and its order into
 * best_perm; INFINITY when nothing fits. */
static double best_order(au_ctx *x, int *best_perm) {
    int perm[TGC_PLACER_MAX_DEVICES];
    for (int d = 0; d < x->n_dev; d++) perm[d] = best_perm[d] = d;
    double best = INFINITY;
    do {
        double v = plan_order(x, perm);
        if (v < best * (1 - 1e-9)) {
            best = v;
            memcpy(best_perm, perm, (size_t)x->n_dev * sizeof *perm);
        }
    } while (x->n_dev <= MAX_PERMUTED && next_order(perm, x->n_dev));
    return best;
}

tgc_status tgc_pl_auto(pl_ctx *c) {
    au_ctx x = {.c = c, .a = c->opt.automatic, .n_dev = c->n_devs};
    if (x.a->cost == NULL) return TGC_OK;
    tgc_status s = read_graph(&x);
    if (s == TGC_OK) mark_free(&x);
    if (s == TGC_OK) s = fill_blocks(&x);
    if (s != TGC_OK || x.n == 0) {
        au_free(&x);
        return s;
    }
    int best_perm[TGC_PLACER_MAX_DEVICES];
    double best = best_order(&x, best_perm);
    if (isinf(best)) { /* nothing fits by the safe estimate: try the lean one (read_graph) */
        double *safe = x.live;
        x.live = x.lean, x.lean = safe;
        fill_block_live(&x);
        best = best_order(&x, best_perm);
    }
    if (isinf(best)) {
        s = refuse(&x);
        au_free(&x);
        return s == TGC_ERR_NOMEM ? s : TGC_ERR_INVALID;
    }
    int fastest = 0;
    if ((c->replicas = choose_replicas(&x, best, &fastest)) != 0) {
        assign_all(&x, fastest);
    } else {
        plan_order(&x, best_perm); /* the tables of the winner */
        assign(&x, best_perm);
    }
    au_free(&x);
    return TGC_OK;
}

/* Replicas: each replica device but the one the ops were placed on
 * runs the whole graph too; its forecast is that one's, with its own
 * times and kernel caches. */
static void replica_forecasts(au_ctx *x) {
    pl_ctx *c = x->c;
    int home = c->device[tgc_pl_find(c, x->ops[0])];
    for (int e = 0; e < x->n_dev; e++) {
        if (e == home || !(c->replicas & tgc_pl_bit(e))) continue;
        tgc_placement_forecast *f = &c->forecast[e];
        *f = c->forecast[home];
        f->seconds = 0, f->warm_seconds = 0, f->caches = 0, f->workspace = 0, f->measured = true;
        for (int32_t i = 0; i < x->n; i++) {
            bool measured = false;
            f->seconds += tgc_cost_node_spilled(x->a->cost, c->g, x->ops[i], e, x->spill, &measured);
            f->warm_seconds += tgc_cost_node(x->a->cost, c->g, x->ops[i], e, NULL);
            f->measured &= measured;
            tgc_kernel_footprint fp = footprint_on(x, x->ops[i], e);
            f->caches += fp.cache_bytes;
            if (fp.workspace_bytes > f->workspace) f->workspace = fp.workspace_bytes;
        }
    }
}

tgc_status tgc_pl_auto_forecast(pl_ctx *c) {
    au_ctx x = {.c = c, .a = c->opt.automatic, .n_dev = c->n_devs};
    if (x.a == NULL || x.a->cost == NULL) return TGC_OK;
    tgc_status s = read_graph(&x);
    if (s == TGC_OK && x.n > 0) s = forecast(&x);
    if (s == TGC_OK && x.n > 0 && c->replicas != 0) replica_forecasts(&x);
    au_free(&x);
    return s;
}
