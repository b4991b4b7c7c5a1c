/* Checks a partitioning against its source graph (tgc_partition_validate):
 * pairs match by key, partitions are acyclic, and the union of the
 * partitions with every _Send/_Recv pair contracted is the original graph.
 * It reads the partition graphs themselves, not the partitioner's tables,
 * so it checks what the executors will run. */
#include "partition/partition.h"

#include "support/alloc.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Past this many messages the rest are consequences; stop reporting. */
#define MAX_REPORTS 20

typedef struct end {
    int part;
    int32_t node;
} end;

typedef struct checker {
    const tgc_graph *g;
    const tgc_partitioning *p;
    tgc_diags *diags;
    int errors;
    tgc_strmap send_of_key; /* key -> index into sends */
    end *sends;
    int32_t n_sends;
    int32_t *recvs_per_send;
    bool **recv_used; /* partition -> node -> a consumer reads this _Recv */
} checker;

static void report(checker *c, const char *fmt, ...) TGC_PRINTF(2, 3);
static void report(checker *c, const char *fmt, ...) {
    if (c->errors++ >= MAX_REPORTS) return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    tgc_diag_error(c->diags, c->g->path, (tgc_srcpos){0, 0}, "bad-partition", "%s", msg);
}

static const tgc_node *node_at(const checker *c, int part, int32_t id) { return &c->p->parts[part].graph->nodes[id]; }

static bool is_op(const tgc_node *n, const char *op) {
    return n->kind == TGC_NODE_OP && n->op_name != NULL && strcmp(n->op_name, op) == 0;
}

static const char *string_attr(const tgc_node *n, const char *name) {
    const tgc_attr *a = tgc_node_attr(n, name);
    return a != NULL && a->type == TGC_ATTR_STRING && a->s != NULL ? a->s : "";
}

/* Kahn's algorithm over one partition's data and control edges. */
static tgc_status check_acyclic(checker *c, int part) {
    const tgc_graph *pg = c->p->parts[part].graph;
    int32_t nn = pg->n_nodes;
    int32_t *indegree = tgc_calloc((size_t)nn + 1, sizeof *indegree);
    int32_t *first = tgc_calloc((size_t)nn + 2, sizeof *first);
    int32_t *queue = tgc_malloc(((size_t)nn + 1) * sizeof *queue);
    int32_t *succ = NULL, *fill = NULL;
    tgc_status s = TGC_ERR_NOMEM;
    if (indegree == NULL || first == NULL || queue == NULL) goto done;
    int64_t edges = 0;
    for (int32_t id = 0; id < nn; id++) {
        const tgc_node *n = &pg->nodes[id];
        for (int e = 0; e < n->n_inputs + n->n_controls; e++) {
            tgc_ref r = e < n->n_inputs ? n->inputs[e] : n->controls[e - n->n_inputs];
            if (r.node < 0) continue;
            if (r.node >= nn) {
                report(c, "partition %s: node '%s' reads node %" PRId32 ", past the partition's %" PRId32 " nodes",
                       c->p->parts[part].device_name, n->name, r.node, nn);
                s = TGC_ERR_INVALID;
                goto done;
            }
            indegree[id]++;
            first[r.node + 1]++;
            edges++;
        }
    }
    for (int32_t id = 0; id < nn; id++) first[id + 1] += first[id];
    succ = tgc_malloc((size_t)(edges ? edges : 1) * sizeof *succ);
    fill = tgc_malloc(((size_t)nn + 1) * sizeof *fill);
    if (succ == NULL || fill == NULL) goto done;
    memcpy(fill, first, ((size_t)nn + 1) * sizeof *fill);
    for (int32_t id = 0; id < nn; id++) {
        const tgc_node *n = &pg->nodes[id];
        for (int e = 0; e < n->n_inputs + n->n_controls; e++) {
            tgc_ref r = e < n->n_inputs ? n->inputs[e] : n->controls[e - n->n_inputs];
            if (r.node >= 0) succ[fill[r.node]++] = id;
        }
    }
    int32_t head = 0, tail = 0;
    for (int32_t id = 0; id < nn; id++)
        if (indegree[id] == 0) queue[tail++] = id;
    while (head < tail) {
        int32_t id = queue[head++];
        for (int32_t e = first[id]; e < first[id + 1]; e++)
            if (--indegree[succ[e]] == 0) queue[tail++] = succ[e];
    }
    s = TGC_OK;
    if (tail < nn) {
        report(c, "partition %s has a cycle through %" PRId32 " of its nodes", c->p->parts[part].device_name,
               nn - tail);
        s = TGC_ERR_INVALID;
    }
done:
    tgc_free(indegree);
    tgc_free(first);
    tgc_free(queue);
    tgc_free(succ);
    tgc_free(fill);
    return s;
}

/* Every _Send by key (each key once), then every _Recv against them. */
static tgc_status match_pairs(checker *c) {
    const tgc_partitioning *p = c->p;
    for (int part = 0; part < p->n_parts; part++) {
        const tgc_graph *pg = p->parts[part].graph;
        for (int32_t id = 0; id < pg->n_nodes; id++) {
            const tgc_node *n = &pg->nodes[id];
            if (!is_op(n, "_Send")) continue;
            const char *key = string_attr(n, "key");
            if (tgc_strmap_get(&c->send_of_key, key) >= 0) {
                report(c, "two _Send nodes have the key '%s' (the second is '%s' on %s)", key, n->name,
                       p->parts[part].device_name);
                continue;
            }
            end *sends = tgc_realloc(c->sends, ((size_t)c->n_sends + 1) * sizeof *sends);
            if (sends == NULL) return TGC_ERR_NOMEM;
            c->sends = sends;
            c->sends[c->n_sends] = (end){part, id};
            if (tgc_strmap_put(&c->send_of_key, key, c->n_sends++) != TGC_OK) return TGC_ERR_NOMEM;
            if (strcmp(string_attr(n, "send_device"), p->parts[part].device_name) != 0)
                report(c, "_Send '%s' is on %s but its send_device is '%s'", n->name, p->parts[part].device_name,
                       string_attr(n, "send_device"));
        }
    }
    c->recvs_per_send = tgc_calloc((size_t)c->n_sends + 1, sizeof *c->recvs_per_send);
    if (c->recvs_per_send == NULL) return TGC_ERR_NOMEM;
    for (int part = 0; part < p->n_parts; part++) {
        const tgc_graph *pg = p->parts[part].graph;
        for (int32_t id = 0; id < pg->n_nodes; id++) {
            const tgc_node *n = &pg->nodes[id];
            if (!is_op(n, "_Recv")) continue;
            const char *key = string_attr(n, "key");
            int32_t si = tgc_strmap_get(&c->send_of_key, key);
            if (si < 0) {
                report(c, "_Recv '%s' on %s has no _Send with its key '%s'", n->name, p->parts[part].device_name, key);
                continue;
            }
            if (++c->recvs_per_send[si] > 1)
                report(c, "two _Recv nodes have the key '%s' (the second is '%s' on %s)", key, n->name,
                       p->parts[part].device_name);
            const tgc_node *sn = node_at(c, c->sends[si].part, c->sends[si].node);
            const char *attrs[3] = {"tensor_name", "send_device", "recv_device"};
            for (int a = 0; a < 3; a++)
                if (strcmp(string_attr(n, attrs[a]), string_attr(sn, attrs[a])) != 0)
                    report(c, "_Send '%s' and _Recv '%s' (key '%s') disagree on %s: '%s' and '%s'", sn->name, n->name,
                           key, attrs[a], string_attr(sn, attrs[a]), string_attr(n, attrs[a]));
            if (strcmp(string_attr(n, "recv_device"), p->parts[part].device_name) != 0)
                report(c, "_Recv '%s' is on %s but its recv_device is '%s'", n->name, p->parts[part].device_name,
                       string_attr(n, "recv_device"));
            if (c->sends[si].part == part)
                report(c, "_Send '%s' and _Recv '%s' (key '%s') are in the same partition %s", sn->name, n->name, key,
                       p->parts[part].device_name);
        }
    }
    for (int32_t i = 0; i < c->n_sends; i++)
        if (c->recvs_per_send[i] == 0) {
            const tgc_node *sn = node_at(c, c->sends[i].part, c->sends[i].node);
            report(c, "_Send '%s' on %s has no _Recv (key '%s')", sn->name, p->parts[c->sends[i].part].device_name,
                   string_attr(sn, "key"));
        }
    return TGC_OK;
}

/* The _Send matching _Recv node `r`, or NULL. */
static const end *send_of(const checker *c, const tgc_node *r) {
    int32_t si = tgc_strmap_get(&c->send_of_key, string_attr(r, "key"));
    return si >= 0 ? &c->sends[si] : NULL;
}

/* The original tensor that input `ref` of a node in `part` reads, looking
 * through pairs: *node = -1 for an omitted input. False (reported) when it
 * reads something that is not an original tensor. */
static bool resolve_data(checker *c, int part, tgc_ref ref, int depth, int32_t *node, int32_t *port) {
    *node = -1;
    *port = 0;
    if (ref.node < 0) return true;
    const tgc_partition *pt = &c->p->parts[part];
    int32_t o = pt->origin[ref.node];
    if (o >= 0) {
        *node = o;
        *port = ref.port;
        return true;
    }
    const tgc_node *n = &pt->graph->nodes[ref.node];
    const end *s = is_op(n, "_Recv") ? send_of(c, n) : NULL;
    if (s == NULL || depth > 64) {
        report(c, "partition %s: '%s' (%s) is read as data but is neither an original node nor a matched _Recv",
               pt->device_name, n->name, n->op_name ? n->op_name : "?");
        return false;
    }
    c->recv_used[part][ref.node] = true;
    const tgc_node *sn = node_at(c, s->part, s->node);
    if (sn->n_inputs != 1) {
        report(c, "_Send '%s' has %d inputs", sn->name, sn->n_inputs);
        return false;
    }
    return resolve_data(c, s->part, sn->inputs[0], depth + 1, node, port);
}

/* The original node that control input `ref` of a node in `part` waits
 * for: itself, or through Identity <- _Recv <- _Send <- Constant(^A). */
static bool resolve_control(checker *c, int part, tgc_ref ref, int depth, int32_t *node) {
    const tgc_partition *pt = &c->p->parts[part];
    int32_t o = pt->origin[ref.node];
    if (o >= 0) {
        *node = o;
        return true;
    }
    const tgc_node *id = &pt->graph->nodes[ref.node];
    const tgc_node *recv = is_op(id, "Identity") && id->n_inputs == 1 && id->inputs[0].node >= 0
                               ? &pt->graph->nodes[id->inputs[0].node]
                               : NULL;
    const end *s = recv != NULL && is_op(recv, "_Recv") ? send_of(c, recv) : NULL;
    const tgc_node *sn = s ? node_at(c, s->part, s->node) : NULL;
    const tgc_node *k = sn && sn->n_inputs == 1 && sn->inputs[0].node >= 0 &&
                                c->p->parts[s->part].origin[sn->inputs[0].node] < 0
                            ? node_at(c, s->part, sn->inputs[0].node)
                            : NULL;
    if (k == NULL || !is_op(k, "Constant") || k->n_controls != 1 || depth > 64) {
        report(c, "partition %s: control input '%s' is neither an original node nor a control pair's Identity",
               pt->device_name, id->name);
        return false;
    }
    c->recv_used[part][id->inputs[0].node] = true;
    return resolve_control(c, s->part, k->controls[0], depth + 1, node);
}

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Sorts and dedups v[0..n); returns the new length. */
static int unique(int32_t *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_i32);
    int k = 0;
    for (int i = 0; i < n; i++)
        if (k == 0 || v[k - 1] != v[i]) v[k++] = v[i];
    return k;
}

/* Node `id` of partition `part`, a copy of original node o: same name and
 * kind, same inputs port by port, same control predecessors. */
static tgc_status check_edges(checker *c, int part, int32_t id, int32_t o) {
    const tgc_node *n = node_at(c, part, id), *src = &c->g->nodes[o];
    const char *dev = c->p->parts[part].device_name;
    if (strcmp(n->name, src->name) != 0 || n->kind != src->kind) {
        report(c, "partition %s: node '%s' stands for original node '%s' but differs in name or kind", dev, n->name,
               src->name);
        return TGC_OK;
    }
    if (n->kind == TGC_NODE_OP && (n->device == NULL || strcmp(n->device, dev) != 0))
        report(c, "partition %s: node '%s' has device '%s'", dev, n->name, n->device ? n->device : "(none)");
    if (n->n_inputs != src->n_inputs) {
        report(c, "partition %s: node '%s' has %d inputs; the original has %d", dev, n->name, n->n_inputs,
               src->n_inputs);
        return TGC_OK;
    }
    for (int i = 0; i < n->n_inputs; i++) {
        int32_t node, port;
        if (!resolve_data(c, part, n->inputs[i], 0, &node, &port)) continue;
        tgc_ref want = src->inputs[i];
        if (node != want.node || (node >= 0 && port != want.port))
            report(c, "partition %s: input %d of '%s' reads '%s:%" PRId32 "'; the original reads '%s:%" PRId32 "'",
                   dev, i, n->name, node >= 0 ? c->g->nodes[node].name : "", port,
                   want.node >= 0 ? c->g->nodes[want.node].name : "", want.port);
    }
    int total = n->n_controls + src->n_controls;
    int32_t *got = tgc_malloc(((size_t)total + 1) * sizeof *got);
    if (got == NULL) return TGC_ERR_NOMEM;
    int32_t *want = got + n->n_controls;
    int ng = 0;
    for (int i = 0; i < n->n_controls; i++) {
        int32_t node;
        if (resolve_control(c, part, n->controls[i], 0, &node)) got[ng++] = node;
    }
    for (int i = 0; i < src->n_controls; i++) want[i] = src->controls[i].node;
    ng = unique(got, ng);
    int nw = unique(want, src->n_controls);
    bool same = ng == nw;
    for (int i = 0; same && i < ng; i++) same = got[i] == want[i];
    if (!same)
        report(c, "partition %s: node '%s' waits for %d node(s) through control inputs; the original for %d", dev,
               n->name, ng, nw);
    tgc_free(got);
    return TGC_OK;
}

static tgc_status check_union(checker *c) {
    const tgc_graph *g = c->g;
    const tgc_partitioning *p = c->p;
    int32_t *seen = tgc_calloc((size_t)g->n_nodes + 1, sizeof *seen);
    if (seen == NULL) return TGC_ERR_NOMEM;
    tgc_status s = TGC_OK;
    for (int part = 0; s == TGC_OK && part < p->n_parts; part++) {
        const tgc_partition *pt = &p->parts[part];
        const tgc_graph *pg = pt->graph;
        for (int32_t id = 0; s == TGC_OK && id < pg->n_nodes; id++) {
            int32_t o = pt->origin[id];
            const tgc_node *n = &pg->nodes[id];
            if ((n->kind == TGC_NODE_INPUT) != (id < pg->n_inputs_nodes))
                report(c, "partition %s: graph input '%s' is not among the first nodes", pt->device_name, n->name);
            if (o < 0) {
                if (n->kind != TGC_NODE_OP)
                    report(c, "partition %s: added node '%s' is not an op", pt->device_name, n->name);
                continue;
            }
            if (o >= g->n_nodes) {
                report(c, "partition %s: node '%s' has origin %" PRId32 ", past the graph", pt->device_name, n->name,
                       o);
                continue;
            }
            /* A small constant may have copies (partition.h); the tables point at the one placed. */
            bool copy = tgc_node_is_small_constant(&g->nodes[o]) && p->part_of != NULL && p->part_of[o] != part;
            if (!copy && seen[o]++ == 1)
                report(c, "node '%s' is in more than one partition", g->nodes[o].name);
            if (p->part_of != NULL && !copy && (p->part_of[o] != part || p->local_id[o] != id))
                report(c, "node '%s': the partitioning's tables do not point at its copy", g->nodes[o].name);
            s = check_edges(c, part, id, o);
        }
    }
    for (int32_t o = 0; s == TGC_OK && o < g->n_nodes; o++)
        if (seen[o] == 0) report(c, "node '%s' is in no partition", g->nodes[o].name);
    tgc_free(seen);
    /* A _Recv nobody reads is a pair the original graph has no edge for. */
    for (int part = 0; s == TGC_OK && part < p->n_parts; part++) {
        const tgc_graph *pg = p->parts[part].graph;
        for (int32_t id = 0; id < pg->n_nodes; id++)
            if (is_op(&pg->nodes[id], "_Recv") && !c->recv_used[part][id])
                report(c, "partition %s: _Recv '%s' is read by no node", p->parts[part].device_name,
                       pg->nodes[id].name);
    }
    return s;
}

static void check_fetches(checker *c) {
    const tgc_partitioning *p = c->p;
    if (p->n_outputs != c->g->n_outputs) {
        report(c, "the fetch table has %d outputs; the graph has %d", p->n_outputs, c->g->n_outputs);
        return;
    }
    for (int i = 0; i < p->n_outputs; i++) {
        tgc_partition_fetch f = p->outputs[i];
        tgc_ref want = c->g->outputs[i];
        bool ok = f.part >= 0 && f.part < p->n_parts && f.node >= 0 && f.node < p->parts[f.part].graph->n_nodes &&
                  p->parts[f.part].origin[f.node] == want.node && f.port == want.port;
        if (!ok) report(c, "graph output %d ('%s') is not fetched from its producer", i, c->g->nodes[want.node].name);
    }
}

tgc_status tgc_partition_validate(const tgc_graph *g, const tgc_partitioning *p, tgc_diags *diags) {
    checker c = {.g = g, .p = p, .diags = diags};
    tgc_status s = TGC_OK;
    c.recv_used = tgc_calloc((size_t)p->n_parts + 1, sizeof *c.recv_used);
    if (c.recv_used == NULL) return TGC_ERR_NOMEM;
    for (int i = 0; s == TGC_OK && i < p->n_parts; i++) {
        if (p->parts[i].graph == NULL || (p->parts[i].graph->n_nodes > 0 && p->parts[i].origin == NULL)) {
            report(&c, "partition %d has no graph", i);
            s = TGC_ERR_INVALID;
        } else if ((c.recv_used[i] = tgc_calloc((size_t)p->parts[i].graph->n_nodes + 1, sizeof **c.recv_used)) ==
                   NULL) {
            s = TGC_ERR_NOMEM;
        }
    }
    bool acyclic = true;
    for (int i = 0; s == TGC_OK && i < p->n_parts; i++) {
        tgc_status a = check_acyclic(&c, i);
        if (a == TGC_ERR_NOMEM) s = a;
        else if (a != TGC_OK) acyclic = false;
    }
    if (s == TGC_OK && acyclic) s = match_pairs(&c);
    if (s == TGC_OK && acyclic) s = check_union(&c);
    if (s == TGC_OK) check_fetches(&c);
    for (int i = 0; i < p->n_parts; i++) tgc_free(c.recv_used[i]);
    tgc_free(c.recv_used);
    tgc_strmap_release(&c.send_of_key);
    tgc_free(c.sends);
    tgc_free(c.recvs_per_send);
    if (s == TGC_OK && c.errors > 0) s = TGC_ERR_INVALID;
    if (c.errors > MAX_REPORTS)
        tgc_diag_error(diags, g->path, (tgc_srcpos){0, 0}, "bad-partition", "%d more problems not shown",
                       c.errors - MAX_REPORTS);
    return s;
}
