/* Structural validation: input and output counts, then a topological order
 * by Kahn's algorithm (A. B. Kahn, "Topological sorting of large networks",
 * CACM 1962); whatever it cannot order lies on or behind a cycle, and the
 * cycle is found by walking predecessors until a node repeats. */
#include "graph/passes.h"

#include "graph/op_registry.h"
#include "graph/subgraph.h"
#include "support/alloc.h"

#include <stdio.h>
#include <string.h>

/* Calls fn(ctx, from, ref) for every data and control edge into each node. */
#define FOR_EACH_IN_EDGE(g, id, r, body)                                        \
    do {                                                                        \
        const tgc_node *n_ = &(g)->nodes[id];                                   \
        for (int e_ = 0; e_ < n_->n_inputs + n_->n_controls; e_++) {            \
            const tgc_ref *r = e_ < n_->n_inputs ? &n_->inputs[e_]              \
                                                 : &n_->controls[e_ - n_->n_inputs]; \
            if (r->node < 0) continue;                                          \
            body                                                                \
        }                                                                       \
    } while (0)

static const char *op_label(const tgc_node *n) {
    return n->kind == TGC_NODE_INPUT ? "graph input" : n->kind == TGC_NODE_CONST ? "initializer" : n->op_name;
}

/* Sets n_outputs of every node from its op and the ports that are used. */
static tgc_status count_outputs(tgc_graph *g, tgc_diags *diags) {
    int32_t *used = tgc_calloc((size_t)g->n_nodes, sizeof *used); /* highest port used + 1 */
    if (used == NULL) return TGC_ERR_NOMEM;
    for (int32_t id = 0; id < g->n_nodes; id++)
        for (int i = 0; i < g->nodes[id].n_inputs; i++) {
            tgc_ref r = g->nodes[id].inputs[i];
            if (r.node >= 0 && r.port + 1 > used[r.node]) used[r.node] = r.port + 1;
        }
    for (int i = 0; i < g->n_outputs; i++) {
        tgc_ref r = g->outputs[i];
        if (r.port + 1 > used[r.node]) used[r.node] = r.port + 1;
    }
    tgc_status s = TGC_OK;
    for (int32_t id = 0; id < g->n_nodes; id++) {
        tgc_node *n = &g->nodes[id];
        int count = 1, max = 1;
        if (n->kind == TGC_NODE_OP) {
            count = n->op->min_outputs;
            if (used[id] > count) count = used[id];
            if (n->n_declared > count) count = n->n_declared;
            int by_body = tgc_subgraph_node_outputs(n);
            if (by_body > count) count = by_body;
            /* Split: one output per entry of a constant `split` input, used or not. */
            if (strcmp(n->op_name, "Split") == 0 && n->n_inputs >= 2 && n->inputs[1].node >= 0 &&
                g->nodes[n->inputs[1].node].kind == TGC_NODE_CONST) {
                int64_t parts = tgc_shape_numel(&g->nodes[n->inputs[1].node].data->shape);
                if (parts > count && parts <= 4096) count = (int)parts;
            }
            max = n->op->max_outputs;
        }
        if (max >= 0 && n->n_declared > max) {
            s = tgc_diag_error(diags, g->path, n->declared_pos, "output-count",
                               "node '%s' (%s) has at most %d output%s, but 'out' lists %d", tgc_node_label(n),
                               op_label(n), max,
                               max == 1 ? "" : "s", n->n_declared);
            count = max;
        }
        if (max >= 0 && used[id] > max) count = max; /* the references are reported below */
        if (n->kind == TGC_NODE_OP) {
            n->outputs = tgc_calloc((size_t)count, sizeof *n->outputs);
            if (n->outputs == NULL) {
                tgc_free(used);
                return TGC_ERR_NOMEM;
            }
            for (int k = 0; k < count; k++) {
                n->outputs[k].dtype = TGC_DTYPE_INVALID;
                n->outputs[k].value_len = -1;
                n->outputs[k].shape.rank = TGC_RANK_UNKNOWN;
            }
            n->n_outputs = count;
        } else if (n->kind == TGC_NODE_CONST) {
            n->outputs = tgc_calloc(1, sizeof *n->outputs);
            if (n->outputs == NULL) {
                tgc_free(used);
                return TGC_ERR_NOMEM;
            }
            n->outputs[0].dtype = TGC_DTYPE_INVALID;
            n->outputs[0].value_len = -1;
            n->n_outputs = 1;
        }
    }
    tgc_free(used);
    /* Report each reference to a port past the producer's outputs. */
    for (int32_t id = 0; id <= g->n_nodes; id++) {
        int count = id < g->n_nodes ? g->nodes[id].n_inputs : g->n_outputs;
        const tgc_ref *refs = id < g->n_nodes ? g->nodes[id].inputs : g->outputs;
        for (int i = 0; i < count; i++) {
            const tgc_ref r = refs[i];
            if (r.node < 0 || r.port < g->nodes[r.node].n_outputs) continue;
            const tgc_node *p = &g->nodes[r.node];
            s = tgc_diag_error(diags, g->path, r.pos, "bad-output-index",
                               "'%s:%d' refers to output %d, but '%s' (%s) has %d output%s", p->name, r.port, r.port,
                               p->name, op_label(p), p->n_outputs, p->n_outputs == 1 ? "" : "s");
        }
    }
    return s;
}

static tgc_status check_input_counts(tgc_graph *g, tgc_diags *diags) {
    tgc_status s = TGC_OK;
    for (int32_t id = g->n_inputs_nodes; id < g->n_nodes; id++) {
        const tgc_node *n = &g->nodes[id];
        if (n->kind != TGC_NODE_OP) continue;
        int lo = n->op->min_inputs, hi = n->op->max_inputs, given = tgc_node_explicit_inputs(n);
        if (given < lo || (hi >= 0 && given > hi)) {
            char want[64];
            if (hi < 0) snprintf(want, sizeof want, "at least %d input%s", lo, lo == 1 ? "" : "s");
            else if (lo == hi) snprintf(want, sizeof want, "%d input%s", lo, lo == 1 ? "" : "s");
            else snprintf(want, sizeof want, "%d to %d inputs", lo, hi);
            /* Too many: point at the first one too many; too few: at the node. */
            tgc_srcpos pos = hi >= 0 && given > hi ? n->inputs[hi].pos : n->pos;
            s = tgc_diag_error(diags, g->path, pos, "input-count", "node '%s' (%s) takes %s, got %d", tgc_node_label(n),
                               n->op_name, want, given);
            continue;
        }
        for (int i = 0; i < lo && i < given; i++)
            if (n->inputs[i].node < 0)
                s = tgc_diag_error(diags, g->path, n->inputs[i].pos, "missing-input",
                                   "node '%s' (%s): input %d is required and cannot be omitted", tgc_node_label(n),
                                   n->op_name, i);
    }
    return s;
}

/* Walks predecessors from `start` (which cannot be ordered) until a node
 * repeats, and reports that cycle unless one of its nodes was reported. */
static tgc_status report_cycle(tgc_graph *g, tgc_diags *diags, int32_t start, const int32_t *indegree,
                               int32_t *walk_stamp, int32_t stamp, int32_t *path) {
    int32_t len = 0, cur = start;
    while (walk_stamp[cur] == 0) {
        walk_stamp[cur] = stamp;
        path[len++] = cur;
        int32_t next = -1;
        FOR_EACH_IN_EDGE(g, cur, r, {
            if (indegree[r->node] > 0 && next < 0) next = r->node;
        });
        cur = next; /* a node left with indegree > 0 always has such a predecessor */
    }
    if (walk_stamp[cur] != stamp) return TGC_OK; /* led into a cycle reported before */
    int32_t first = 0;
    while (path[first] != cur) first++;
    /* path[first..len) follows edges backwards; print it in data-flow order,
     * starting and ending at the cycle's earliest-written node. */
    int32_t earliest = first;
    for (int32_t i = first; i < len; i++)
        if (g->nodes[path[i]].pos.line < g->nodes[path[earliest]].pos.line) earliest = i;
    char text[1024];
    size_t used = 0;
    int32_t count = len - first;
    for (int32_t k = 0; k <= count && used < sizeof text; k++) {
        int32_t i = first + ((earliest - first) - k % count + count) % count;
        used += (size_t)snprintf(text + used, sizeof text - used, "%s%s", k ? " -> " : "", g->nodes[path[i]].name);
    }
    const tgc_node *n = &g->nodes[path[earliest]];
    return tgc_diag_error(diags, g->path, n->pos, "cycle", "node '%s' is on a cycle: %s", tgc_node_label(n), text);
}

static tgc_status order_nodes(tgc_graph *g, tgc_diags *diags) {
    int32_t nn = g->n_nodes;
    int32_t *indegree = tgc_calloc((size_t)nn + 1, sizeof *indegree);
    int32_t *first_out = tgc_calloc((size_t)nn + 1, sizeof *first_out); /* CSR of consumers */
    g->topo = tgc_calloc((size_t)nn + 1, sizeof *g->topo);
    int32_t *consumers = NULL, *fill = NULL;
    tgc_status s = TGC_ERR_NOMEM;
    if (indegree == NULL || first_out == NULL || g->topo == NULL) goto done;
    int64_t edges = 0;
    for (int32_t id = 0; id < nn; id++)
        FOR_EACH_IN_EDGE(g, id, r, {
            indegree[id]++;
            first_out[r->node + 1]++;
            edges++;
        });
    for (int32_t id = 0; id < nn; id++) first_out[id + 1] += first_out[id];
    consumers = tgc_malloc((size_t)(edges ? edges : 1) * sizeof *consumers);
    fill = tgc_malloc(((size_t)nn + 1) * sizeof *fill);
    if (consumers == NULL || fill == NULL) goto done;
    memcpy(fill, first_out, ((size_t)nn + 1) * sizeof *fill);
    for (int32_t id = 0; id < nn; id++) FOR_EACH_IN_EDGE(g, id, r, { consumers[fill[r->node]++] = id; });

    int32_t head = 0, tail = 0;
    for (int32_t id = 0; id < nn; id++)
        if (indegree[id] == 0) g->topo[tail++] = id;
    while (head < tail) {
        int32_t id = g->topo[head++];
        for (int32_t e = first_out[id]; e < first_out[id + 1]; e++)
            if (--indegree[consumers[e]] == 0) g->topo[tail++] = consumers[e];
    }
    s = TGC_OK;
    if (tail < nn) {
        /* Reuse `fill` as the walk stamps and `consumers`... as the path. */
        int32_t *path = tgc_malloc((size_t)nn * sizeof *path);
        if (path == NULL) {
            s = TGC_ERR_NOMEM;
            goto done;
        }
        memset(fill, 0, ((size_t)nn + 1) * sizeof *fill);
        int32_t stamp = 0;
        for (int32_t id = 0; id < nn && s != TGC_ERR_NOMEM; id++)
            if (indegree[id] > 0 && fill[id] == 0) {
                tgc_status cs = report_cycle(g, diags, id, indegree, fill, ++stamp, path);
                if (cs != TGC_OK) s = cs;
            }
        tgc_free(path);
        if (s == TGC_OK) s = TGC_ERR_INVALID;
    }
done:
    tgc_free(indegree);
    tgc_free(first_out);
    tgc_free(consumers);
    tgc_free(fill);
    return s;
}

/* Each node's subgraphs: their signatures, and each validated as a graph. */
static tgc_status check_subgraphs(tgc_graph *g, tgc_diags *diags) {
    tgc_status s = TGC_OK;
    for (int32_t id = g->n_inputs_nodes; id < g->n_nodes; id++) {
        if (!tgc_node_has_subgraphs(&g->nodes[id])) continue;
        tgc_status bs = tgc_subgraph_validate_node(g, id, diags);
        if (bs == TGC_ERR_NOMEM) return bs;
        if (bs != TGC_OK) s = bs;
    }
    return s;
}

tgc_status tgc_graph_validate(tgc_graph *g, tgc_diags *diags) {
    tgc_status s = count_outputs(g, diags);
    if (s == TGC_ERR_NOMEM) return s;
    tgc_status c = check_input_counts(g, diags);
    if (s == TGC_OK) s = c;
    tgc_status b = check_subgraphs(g, diags);
    if (b == TGC_ERR_NOMEM) return b;
    if (s == TGC_OK) s = b;
    tgc_status o = order_nodes(g, diags);
    if (o == TGC_ERR_NOMEM || s == TGC_OK) s = o;
    return s;
}
