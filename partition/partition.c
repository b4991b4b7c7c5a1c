/* The partitioner's core: one pass over the placed graph in topological
 * order, copying each node into its device's partition and replacing every
 * cross-device edge by a _Send/_Recv pair made the first time a consumer on
 * the receiving device needs it (see partition.h for the rules).
 *
 * Because producers are copied before consumers and a pair's _Recv is
 * added just before its first consumer, each partition's node ids are
 * already a topological order. Pairs are found again through a list per
 * producer node, so dedup costs a few comparisons per crossing edge. */
#include "partition/partition.h"

#include "devices/kernel.h"
#include "graph/op_registry.h"
#include "graph/subgraph.h"
#include "support/alloc.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct builder {
    const tgc_graph *g;
    const tgc_placement *p;
    tgc_diags *diags;
    tgc_partitioning *out;
    int32_t *part_of_device; /* device index -> partition index, -1 */
    int32_t *origin_cap;     /* partition -> capacity of its origin array */
    int32_t *pair_head;      /* original node -> its latest pair, -1 */
    int32_t *pair_next;      /* pair -> the producer's previous pair, -1 */
    int32_t cap_pairs;
    /* A small constant's copies in other partitions: copy_head[node] (-1:
     * none; made on first use) heads a list through copies[]. */
    int32_t *copy_head;
    struct constant_copy {
        int32_t part, local, next;
    } *copies;
    int32_t n_copies, cap_copies;
    const tgc_op_def *op_send, *op_recv, *op_constant, *op_identity;
    bool names_may_clash; /* an original name has "/_" (as added names do) or ":" */
} builder;

static const char *device_name(const tgc_partitioning *p, int part) { return p->parts[part].device_name; }

/* ---- partitions ------------------------------------------------------------ */

/* Appends a node named `name` to partition `part` with the given origin;
 * *id is its id there. */
static tgc_status add_node(builder *b, int part, const char *name, tgc_node_kind kind, int32_t origin, int32_t *id) {
    tgc_partition *pt = &b->out->parts[part];
    if (pt->graph->n_nodes == b->origin_cap[part]) {
        int32_t cap = b->origin_cap[part] ? b->origin_cap[part] * 2 : 16;
        int32_t *o = tgc_realloc(pt->origin, (size_t)cap * sizeof *o);
        if (o == NULL) return TGC_ERR_NOMEM;
        pt->origin = o;
        b->origin_cap[part] = cap;
    }
    tgc_status s = tgc_graph_add_node(pt->graph, name, kind, id);
    if (s != TGC_OK) return s;
    pt->origin[*id] = origin;
    return TGC_OK;
}

/* Appends to `part` a copy of original node `id` without its edges: its
 * name and body, an op's device the partition's; *local is its id there. */
static tgc_status add_copy(builder *b, int part, int32_t id, int32_t *local) {
    const tgc_node *src = &b->g->nodes[id];
    tgc_status s = add_node(b, part, src->name, src->kind, id, local);
    if (s != TGC_OK) return s;
    tgc_node *n = &b->out->parts[part].graph->nodes[*local];
    if (tgc_node_copy_body(n, src) != TGC_OK) return TGC_ERR_NOMEM;
    tgc_free(n->device); /* the partition's device, for op nodes only */
    n->device = NULL;
    if (src->kind == TGC_NODE_OP && (n->device = tgc_strdup(b->out->parts[part].device_name)) == NULL)
        return TGC_ERR_NOMEM;
    return TGC_OK;
}

/* Copies original node `id` (its inputs and controls already remapped into
 * `inputs` and `controls`, which the new node takes over) into `part`. */
static tgc_status copy_node(builder *b, int part, int32_t id, tgc_ref *inputs, tgc_ref *controls) {
    const tgc_node *src = &b->g->nodes[id];
    int32_t local;
    tgc_status s = add_copy(b, part, id, &local);
    if (s != TGC_OK) {
        tgc_free(inputs);
        tgc_free(controls);
        return s;
    }
    b->out->part_of[id] = part;
    b->out->local_id[id] = local;
    tgc_node *n = &b->out->parts[part].graph->nodes[local];
    n->inputs = inputs;
    n->n_inputs = inputs ? src->n_inputs : 0;
    n->controls = controls;
    n->n_controls = controls ? src->n_controls : 0;
    /* Colocation ties nodes of one device; a tie to another partition
     * (a placement that broke it) has nothing to point at here. */
    for (int i = 0; i < src->n_colocate; i++) {
        int32_t c = src->colocate[i].node;
        if (c < 0 || b->out->part_of[c] != part) continue;
        if (n->colocate == NULL && (n->colocate = tgc_calloc((size_t)src->n_colocate, sizeof *n->colocate)) == NULL)
            return TGC_ERR_NOMEM;
        n->colocate[n->n_colocate++] = (tgc_ref){b->out->local_id[c], 0, src->colocate[i].pos};
    }
    return TGC_OK;
}

/* A new partition for device `dev`: an empty graph with the original's
 * path, directory and symbols (same indices, so shapes copy as they are). */
static tgc_status open_partition(builder *b, int part, int dev, const tgc_placer_device *d) {
    const tgc_graph *g = b->g;
    tgc_partition *pt = &b->out->parts[part];
    pt->device = dev;
    tgc_placer_device_name(*d, pt->device_name, sizeof pt->device_name);
    if ((pt->graph = tgc_graph_create(g->path, g->dir)) == NULL) return TGC_ERR_NOMEM;
    char name[300];
    snprintf(name, sizeof name, "%s%s%s", g->name ? g->name : "", g->name ? "@" : "", pt->device_name);
    if ((pt->graph->name = tgc_strdup(name)) == NULL) return TGC_ERR_NOMEM;
    const tgc_graph *root = tgc_graph_root(g); /* a subgraph's dims name the top-level graph's symbols */
    for (int32_t i = 0; i < root->n_symbols; i++)
        if (tgc_graph_symbol(pt->graph, root->symbols[i], root->symbol_fresh[i]) != i) return TGC_ERR_NOMEM;
    pt->graph->next_fresh = root->next_fresh;
    return TGC_OK;
}

/* ---- names ------------------------------------------------------------------ */

/* Concatenates the NULL-terminated strings that follow into buf when they
 * fit (buf may be NULL), else into a new tgc_malloc'd block; NULL if out of
 * memory. Release with unjoin(s, buf). Names are made per pair: no printf. */
static char *join(char *buf, size_t size, ...) {
    va_list ap;
    size_t len = 0;
    va_start(ap, size);
    for (const char *p = va_arg(ap, const char *); p != NULL; p = va_arg(ap, const char *)) len += strlen(p);
    va_end(ap);
    char *s = buf != NULL && len < size ? buf : tgc_malloc(len + 1);
    if (s == NULL) return NULL;
    size_t at = 0;
    va_start(ap, size);
    for (const char *p = va_arg(ap, const char *); p != NULL; p = va_arg(ap, const char *)) {
        size_t n = strlen(p);
        memcpy(s + at, p, n);
        at += n;
    }
    va_end(ap);
    s[at] = '\0';
    return s;
}

static void unjoin(char *s, const char *buf) {
    if (s != buf) tgc_free(s);
}

/* "node" or "node:k", as a reference is written (control: "^node"), into
 * buf when it fits, else tgc_malloc'd; release with unjoin. */
static char *tensor_ref_name(const tgc_graph *g, tgc_ref r, bool control, char *buf, size_t size) {
    char port[16] = "";
    if (!control && r.port != 0) snprintf(port, sizeof port, ":%" PRId32, r.port);
    return join(buf, size, control ? "^" : "", g->nodes[r.node].name, port, (const char *)NULL);
}

/* Adds an added node named `base`. Such names contain "/_", so when no
 * original name does (the usual case) they are unique by construction;
 * otherwise base_2, base_3... is taken when a node of the original graph
 * or of the partition already has the name. */
static tgc_status add_unique(builder *b, int part, const char *base, tgc_node_kind kind, int32_t *id) {
    if (!b->names_may_clash) return add_node(b, part, base, kind, -1, id);
    const tgc_graph *pg = b->out->parts[part].graph;
    if (tgc_graph_find(b->g, base) < 0 && tgc_graph_find(pg, base) < 0) return add_node(b, part, base, kind, -1, id);
    for (int k = 2;; k++) {
        char suffix[16], buf[256];
        snprintf(suffix, sizeof suffix, "_%d", k);
        char *name = join(buf, sizeof buf, base, suffix, (const char *)NULL);
        if (name == NULL) return TGC_ERR_NOMEM;
        if (tgc_graph_find(b->g, name) < 0 && tgc_graph_find(pg, name) < 0) {
            tgc_status s = add_node(b, part, name, kind, -1, id);
            unjoin(name, buf);
            return s;
        }
        unjoin(name, buf);
    }
}

/* ---- kernels: where each end of a pair holds its tensor -------------------- */

static tgc_device_kind kind_of(const builder *b, int part) {
    return b->out->devices[b->out->parts[part].device].kind;
}

/* A kind whose memory is host memory has one memory: only other kinds
 * keep some arguments and results of their kernels in host memory. */
static bool reads_host_memory(builder *b, const tgc_node *consumer, int input, int part) {
    tgc_device_kind kind = kind_of(b, part);
    if (tgc_kind_host_memory(kind)) return false;
    const tgc_kernel_def *k = tgc_kernel_for_node(b->g, consumer, kind);
    return tgc_kernel_host_input(k, input) || tgc_kernel_metadata_input(k, input);
}

static bool writes_host_memory(builder *b, const tgc_node *producer, int port, int part) {
    tgc_device_kind kind = kind_of(b, part);
    if (tgc_kind_host_memory(kind)) return false;
    const tgc_kernel_def *k = tgc_kernel_for_node(b->g, producer, kind);
    return tgc_kernel_host_output(k, port);
}

/* ---- pairs -------------------------------------------------------------------- */

static tgc_status set_string_attr(tgc_attr *a, const char *name, const char *value) {
    a->type = TGC_ATTR_STRING;
    a->name = tgc_strdup(name);
    a->s = tgc_strdup(value);
    return a->name && a->s ? TGC_OK : TGC_ERR_NOMEM;
}

/* Gives _Send/_Recv node `n` its attributes. */
static tgc_status set_pair_attrs(tgc_node *n, const tgc_partition_pair *pr, const char *send_dev, const char *recv_dev,
                                 bool host_memory) {
    n->attrs = tgc_calloc(5, sizeof *n->attrs);
    if (n->attrs == NULL) return TGC_ERR_NOMEM;
    const char *names[4] = {"tensor_name", "send_device", "recv_device", "key"};
    const char *values[4] = {pr->tensor_name, send_dev, recv_dev, pr->key};
    for (int i = 0; i < 4; i++) {
        n->n_attrs = i + 1;
        if (set_string_attr(&n->attrs[i], names[i], values[i]) != TGC_OK) return TGC_ERR_NOMEM;
    }
    if (host_memory) {
        tgc_attr *a = &n->attrs[n->n_attrs++];
        a->type = TGC_ATTR_INT;
        a->i = 1;
        if ((a->name = tgc_strdup("host_memory")) == NULL) return TGC_ERR_NOMEM;
    }
    return TGC_OK;
}

/* The common part of an added op node: op, its name, device. */
static tgc_status init_added(builder *b, int part, int32_t id, const tgc_op_def *op) {
    tgc_node *n = &b->out->parts[part].graph->nodes[id];
    n->op = op;
    n->op_name = tgc_strdup(op->name);
    n->device = tgc_strdup(b->out->parts[part].device_name);
    return n->op_name && n->device ? TGC_OK : TGC_ERR_NOMEM;
}

static tgc_ref *one_ref(int32_t node, int32_t port) {
    tgc_ref *r = tgc_malloc(sizeof *r);
    if (r != NULL) *r = (tgc_ref){node, port, {0, 0}};
    return r;
}

/* A new pair record (zeroed but for the list links), index in *index. */
static tgc_status new_pair(builder *b, int32_t producer, int32_t *index) {
    tgc_partitioning *out = b->out;
    if (out->n_pairs == b->cap_pairs) {
        int32_t cap = b->cap_pairs ? b->cap_pairs * 2 : 16;
        tgc_partition_pair *pairs = tgc_realloc(out->pairs, (size_t)cap * sizeof *pairs);
        if (pairs == NULL) return TGC_ERR_NOMEM;
        out->pairs = pairs;
        int32_t *next = tgc_realloc(b->pair_next, (size_t)cap * sizeof *next);
        if (next == NULL) return TGC_ERR_NOMEM;
        b->pair_next = next;
        b->cap_pairs = cap;
    }
    int32_t i = out->n_pairs++;
    memset(&out->pairs[i], 0, sizeof out->pairs[i]);
    b->pair_next[i] = b->pair_head[producer];
    b->pair_head[producer] = i;
    *index = i;
    return TGC_OK;
}

static int64_t bytes_of(tgc_dtype dtype, const tgc_shape *s) {
    double bytes = tgc_shape_numel_estimate(s) * (double)tgc_dtype_size(dtype);
    return bytes < 0x1p62 ? (int64_t)bytes : INT64_C(1) << 62;
}

/* Adds the _Recv of pair `pr` to its receiving partition: output `info`. */
static tgc_status add_recv(builder *b, tgc_partition_pair *pr, const char *base, const tgc_tensor_info *info) {
    int part = pr->recv_part;
    tgc_status s = add_unique(b, part, base, TGC_NODE_OP, &pr->recv_node);
    if (s == TGC_OK) s = init_added(b, part, pr->recv_node, b->op_recv);
    if (s != TGC_OK) return s;
    tgc_node *n = &b->out->parts[part].graph->nodes[pr->recv_node];
    if (tgc_node_set_outputs(n, info, 1) != TGC_OK) return TGC_ERR_NOMEM;
    n->declared = tgc_calloc(1, sizeof *n->declared);
    n->declared_has_shape = tgc_calloc(1, sizeof *n->declared_has_shape);
    if (n->declared == NULL || n->declared_has_shape == NULL) return TGC_ERR_NOMEM;
    n->n_declared = 1;
    tgc_info_copy(&n->declared[0], info, false);
    n->declared_has_shape[0] = info->shape.rank != TGC_RANK_UNKNOWN;
    pr->recv_feed = pr->recv_node;
    return set_pair_attrs(n, pr, device_name(b->out, pr->send_part), device_name(b->out, part), pr->recv_host_memory);
}

/* Adds the _Send of pair `pr` to its sending partition, reading `in`. */
static tgc_status add_send(builder *b, tgc_partition_pair *pr, const char *base, tgc_ref in) {
    int part = pr->send_part;
    tgc_status s = add_unique(b, part, base, TGC_NODE_OP, &pr->send_node);
    if (s == TGC_OK) s = init_added(b, part, pr->send_node, b->op_send);
    if (s != TGC_OK) return s;
    tgc_node *n = &b->out->parts[part].graph->nodes[pr->send_node];
    if ((n->inputs = one_ref(in.node, in.port)) == NULL) return TGC_ERR_NOMEM;
    n->n_inputs = 1;
    return set_pair_attrs(n, pr, device_name(b->out, part), device_name(b->out, pr->recv_part), pr->send_host_memory);
}

/* The pair that brings tensor `r` to partition `dst` (into host memory when
 * `host`), made on first use; *feed is the node consumers there read. */
static tgc_status data_pair(builder *b, tgc_ref r, int dst, bool host, int32_t *feed) {
    tgc_partitioning *out = b->out;
    for (int32_t i = b->pair_head[r.node]; i >= 0; i = b->pair_next[i]) {
        const tgc_partition_pair *pr = &out->pairs[i];
        if (!pr->control && pr->tensor.port == r.port && pr->recv_part == dst && pr->recv_host_memory == host) {
            *feed = pr->recv_feed;
            return TGC_OK;
        }
    }
    int32_t index;
    if (new_pair(b, r.node, &index) != TGC_OK) return TGC_ERR_NOMEM;
    tgc_partition_pair *pr = &out->pairs[index];
    const tgc_node *src = &b->g->nodes[r.node];
    const tgc_tensor_info *info = &src->outputs[r.port];
    pr->tensor = (tgc_ref){r.node, r.port, {0, 0}};
    pr->send_part = out->part_of[r.node];
    pr->recv_part = dst;
    pr->recv_host_memory = host;
    pr->send_host_memory = writes_host_memory(b, src, r.port, pr->send_part);
    pr->dtype = info->dtype;
    pr->shape = info->shape;
    pr->bytes = bytes_of(info->dtype, &info->shape);
    if ((pr->tensor_name = tensor_ref_name(b->g, r, false, NULL, 0)) == NULL) return TGC_ERR_NOMEM;
    const char *from = device_name(out, pr->send_part), *to = device_name(out, dst);
    const char *end = (const char *)NULL;
    pr->key = join(NULL, 0, from, ";", to, ";", pr->tensor_name, host ? ";host" : "", end);
    char send_buf[256], recv_buf[256];
    char *send_name = join(send_buf, sizeof send_buf, pr->tensor_name, "/_send_", to, host ? "_host" : "", end);
    char *recv_name = join(recv_buf, sizeof recv_buf, pr->tensor_name, host ? "/_hostrecv_" : "/_recv_", from, end);
    tgc_status s = pr->key && send_name && recv_name ? TGC_OK : TGC_ERR_NOMEM;
    if (s == TGC_OK) s = add_send(b, pr, send_name, (tgc_ref){out->local_id[r.node], r.port, {0, 0}});
    if (s == TGC_OK) s = add_recv(b, pr, recv_name, info);
    if (send_name != NULL) unjoin(send_name, send_buf);
    if (recv_name != NULL) unjoin(recv_name, recv_buf);
    *feed = out->pairs[index].recv_feed;
    return s;
}

/* The pair that carries control edge ^A to partition `dst`; *feed is the
 * Identity that consumers there take as a control input. */
static tgc_status control_pair(builder *b, int32_t a, int dst, int32_t *feed) {
    tgc_partitioning *out = b->out;
    int32_t empty = -1; /* A's Constant, shared by its control pairs */
    for (int32_t i = b->pair_head[a]; i >= 0; i = b->pair_next[i]) {
        const tgc_partition_pair *pr = &out->pairs[i];
        if (!pr->control) continue;
        if (pr->recv_part == dst) {
            *feed = pr->recv_feed;
            return TGC_OK;
        }
        empty = out->parts[pr->send_part].graph->nodes[pr->send_node].inputs[0].node;
    }
    int32_t index;
    if (new_pair(b, a, &index) != TGC_OK) return TGC_ERR_NOMEM;
    tgc_partition_pair *pr = &out->pairs[index];
    pr->control = true;
    pr->tensor = (tgc_ref){a, -1, {0, 0}};
    pr->send_part = out->part_of[a];
    pr->recv_part = dst;
    pr->dtype = TGC_BOOL;
    pr->shape = (tgc_shape){.rank = 1, .dims = {tgc_dim_of(0)}};
    pr->bytes = 0;
    tgc_tensor_info info = {.dtype = TGC_BOOL, .shape = pr->shape, .value_len = -1};
    int from = pr->send_part;
    const char *aname = b->g->nodes[a].name;
    if ((pr->tensor_name = tensor_ref_name(b->g, (tgc_ref){a, 0, {0, 0}}, true, NULL, 0)) == NULL)
        return TGC_ERR_NOMEM;
    const char *src = device_name(out, from), *to = device_name(out, dst), *end = (const char *)NULL;
    if ((pr->key = join(NULL, 0, src, ";", to, ";", pr->tensor_name, end)) == NULL) return TGC_ERR_NOMEM;
    char *names[4] = {join(NULL, 0, aname, "/_ctrl_empty", end), join(NULL, 0, aname, "/_send_ctrl_", to, end),
                      join(NULL, 0, aname, "/_recv_ctrl_", src, end), join(NULL, 0, aname, "/_ctrl_", src, end)};
    tgc_status s = names[0] && names[1] && names[2] && names[3] ? TGC_OK : TGC_ERR_NOMEM;
    /* On the sending side: Constant(^A) -> _Send. */
    if (s == TGC_OK && empty < 0) {
        s = add_unique(b, from, names[0], TGC_NODE_OP, &empty);
        if (s == TGC_OK) s = init_added(b, from, empty, b->op_constant);
        tgc_node *n = s == TGC_OK ? &out->parts[from].graph->nodes[empty] : NULL;
        if (s == TGC_OK && ((n->controls = one_ref(out->local_id[a], 0)) == NULL ||
                            (n->attrs = tgc_calloc(1, sizeof *n->attrs)) == NULL))
            s = TGC_ERR_NOMEM;
        if (s == TGC_OK) {
            n->n_controls = 1;
            n->n_attrs = 1;
            n->attrs[0].type = TGC_ATTR_TENSOR;
            n->attrs[0].name = tgc_strdup("value");
            n->attrs[0].tensor = tgc_calloc(1, sizeof *n->attrs[0].tensor);
            if (n->attrs[0].name == NULL || n->attrs[0].tensor == NULL) s = TGC_ERR_NOMEM;
            else {
                n->attrs[0].tensor->dtype = TGC_BOOL;
                n->attrs[0].tensor->shape = pr->shape;
            }
        }
        if (s == TGC_OK) s = tgc_node_set_outputs(n, &info, 1);
    }
    if (s == TGC_OK) s = add_send(b, pr, names[1], (tgc_ref){empty, 0, {0, 0}});
    pr = &out->pairs[index];
    /* On the receiving side: _Recv -> Identity, the consumers' control input. */
    if (s == TGC_OK) s = add_recv(b, pr, names[2], &info);
    int32_t ident = -1;
    if (s == TGC_OK) s = add_unique(b, dst, names[3], TGC_NODE_OP, &ident);
    if (s == TGC_OK) s = init_added(b, dst, ident, b->op_identity);
    if (s == TGC_OK) {
        tgc_node *n = &out->parts[dst].graph->nodes[ident];
        if ((n->inputs = one_ref(pr->recv_node, 0)) == NULL) s = TGC_ERR_NOMEM;
        else n->n_inputs = 1;
        if (s == TGC_OK) s = tgc_node_set_outputs(n, &info, 1);
        pr->recv_feed = ident;
    }
    for (int i = 0; i < 4; i++) tgc_free(names[i]);
    *feed = pr->recv_feed;
    return s;
}

/* Constant `id` (tgc_node_is_small_constant) as read in partition `dst`
 * where it was not placed: a copy of it there, made on first use (same
 * name, origin `id`), rather than a pair sending it every step. */
static tgc_status copy_constant(builder *b, int32_t id, int dst, int32_t *local) {
    if (b->copy_head == NULL) {
        if ((b->copy_head = tgc_malloc(((size_t)b->g->n_nodes + 1) * sizeof *b->copy_head)) == NULL)
            return TGC_ERR_NOMEM;
        for (int32_t i = 0; i < b->g->n_nodes; i++) b->copy_head[i] = -1;
    }
    for (int32_t c = b->copy_head[id]; c >= 0; c = b->copies[c].next)
        if (b->copies[c].part == dst) {
            *local = b->copies[c].local;
            return TGC_OK;
        }
    if (b->n_copies == b->cap_copies) {
        if (b->cap_copies > INT32_MAX / 2) return TGC_ERR_NOMEM;
        int32_t cap = b->cap_copies ? b->cap_copies * 2 : 16;
        struct constant_copy *more = tgc_realloc(b->copies, (size_t)cap * sizeof *more);
        if (more == NULL) return TGC_ERR_NOMEM;
        b->copies = more;
        b->cap_copies = cap;
    }
    tgc_status s = add_copy(b, dst, id, local);
    if (s != TGC_OK) return s;
    b->copies[b->n_copies] = (struct constant_copy){dst, *local, b->copy_head[id]};
    b->copy_head[id] = b->n_copies++;
    return TGC_OK;
}

/* ---- the pass ------------------------------------------------------------------- */

/* Copies op node `id` into its partition, making the pairs its inputs need. */
static tgc_status place_op(builder *b, int32_t id) {
    const tgc_node *n = &b->g->nodes[id];
    int part = b->out->part_of[id];
    tgc_ref *inputs = NULL, *controls = NULL;
    if (n->n_inputs > 0 && (inputs = tgc_malloc((size_t)n->n_inputs * sizeof *inputs)) == NULL) return TGC_ERR_NOMEM;
    if (n->n_controls > 0 && (controls = tgc_malloc((size_t)n->n_controls * sizeof *controls)) == NULL) {
        tgc_free(inputs);
        return TGC_ERR_NOMEM;
    }
    tgc_status s = TGC_OK;
    for (int i = 0; s == TGC_OK && i < n->n_inputs; i++) {
        tgc_ref r = n->inputs[i];
        inputs[i] = r;
        if (r.node < 0) continue;
        int from = b->out->part_of[r.node];
        if (from == part) inputs[i].node = b->out->local_id[r.node];
        else if (tgc_node_is_small_constant(&b->g->nodes[r.node])) s = copy_constant(b, r.node, part, &inputs[i].node);
        else {
            inputs[i].port = 0;
            s = data_pair(b, r, part, reads_host_memory(b, n, i, part), &inputs[i].node);
        }
    }
    for (int i = 0; s == TGC_OK && i < n->n_controls; i++) {
        tgc_ref r = n->controls[i];
        controls[i] = r;
        if (b->out->part_of[r.node] == part) controls[i].node = b->out->local_id[r.node];
        else s = control_pair(b, r.node, part, &controls[i].node);
    }
    if (s != TGC_OK) {
        tgc_free(inputs);
        tgc_free(controls);
        return s;
    }
    return copy_node(b, part, id, inputs, controls);
}

/* Graph outputs: the fetch table, and each partition's own `outputs`. */
static tgc_status set_outputs_table(builder *b) {
    const tgc_graph *g = b->g;
    tgc_partitioning *out = b->out;
    out->n_outputs = g->n_outputs;
    out->outputs = tgc_calloc((size_t)g->n_outputs + 1, sizeof *out->outputs);
    if (out->outputs == NULL) return TGC_ERR_NOMEM;
    for (int i = 0; i < g->n_outputs; i++) {
        tgc_ref r = g->outputs[i];
        int part = out->part_of[r.node];
        out->outputs[i] = (tgc_partition_fetch){part, out->local_id[r.node], r.port};
        tgc_graph *pg = out->parts[part].graph;
        tgc_ref *refs = tgc_realloc(pg->outputs, ((size_t)pg->n_outputs + 1) * sizeof *refs);
        if (refs == NULL) return TGC_ERR_NOMEM;
        pg->outputs = refs;
        pg->outputs[pg->n_outputs++] = (tgc_ref){out->local_id[r.node], r.port, r.pos};
    }
    return TGC_OK;
}

/* Sizes each partition's node arrays once, for its own nodes and the pairs
 * it will likely have (one per producer and destination: a hint, since the
 * arrays still grow when needed), and notes whether an added node's name
 * could clash with an original one. */
static tgc_status reserve(builder *b) {
    const tgc_graph *g = b->g;
    tgc_partitioning *out = b->out;
    int64_t *need = tgc_calloc((size_t)out->n_parts + 1, sizeof *need);
    uint64_t *seen = out->n_parts <= 32 ? tgc_calloc((size_t)g->n_nodes + 1, sizeof *seen) : NULL;
    if (need == NULL || (out->n_parts <= 32 && seen == NULL)) {
        tgc_free(need);
        tgc_free(seen);
        return TGC_ERR_NOMEM;
    }
    for (int32_t id = 0; id < g->n_nodes; id++) {
        const tgc_node *n = &g->nodes[id];
        int to = out->part_of[id];
        need[to]++;
        if (strstr(n->name, "/_") != NULL || strchr(n->name, ':') != NULL) b->names_may_clash = true;
        for (int e = 0; seen != NULL && e < n->n_inputs + n->n_controls; e++) {
            bool control = e >= n->n_inputs;
            int32_t a = control ? n->controls[e - n->n_inputs].node : n->inputs[e].node;
            if (a < 0 || out->part_of[a] == to) continue;
            uint64_t bit = (uint64_t)1 << (to + (control ? 32 : 0));
            if (seen[a] & bit) continue;
            seen[a] |= bit;
            need[to] += control ? 2 : 1;             /* _Recv (and Identity) */
            need[out->part_of[a]] += control ? 2 : 1; /* _Send (and Constant) */
        }
    }
    tgc_status s = TGC_OK;
    for (int i = 0; s == TGC_OK && i < out->n_parts; i++) {
        tgc_graph *pg = out->parts[i].graph;
        int32_t cap = need[i] + 16 < INT32_MAX / 2 ? (int32_t)need[i] + 16 : INT32_MAX / 2;
        tgc_node *nodes = tgc_realloc(pg->nodes, (size_t)cap * sizeof *nodes);
        int32_t *origin = tgc_realloc(out->parts[i].origin, (size_t)cap * sizeof *origin);
        if (nodes != NULL) {
            pg->nodes = nodes;
            pg->cap_nodes = cap;
        }
        if (origin != NULL) {
            out->parts[i].origin = origin;
            b->origin_cap[i] = cap;
        }
        if (nodes == NULL || origin == NULL) s = TGC_ERR_NOMEM;
    }
    tgc_free(need);
    tgc_free(seen);
    return s;
}

static tgc_status check_placement(builder *b, int n_devices) {
    const tgc_graph *g = b->g;
    if (b->p->n_nodes != g->n_nodes || b->p->device == NULL)
        return tgc_diag_error(b->diags, g->path, (tgc_srcpos){0, 0}, "bad-placement",
                              "the placement has %" PRId32 " nodes but the graph has %" PRId32, b->p->n_nodes,
                              g->n_nodes);
    if (g->topo == NULL)
        return tgc_diag_error(b->diags, g->path, (tgc_srcpos){0, 0}, "bad-placement",
                              "the graph has no topological order: validate it before partitioning");
    for (int32_t id = 0; id < g->n_nodes; id++)
        if (b->p->device[id] < 0 || b->p->device[id] >= n_devices)
            return tgc_diag_error(b->diags, g->path, g->nodes[id].pos, "bad-placement",
                                  "node '%s' is placed on device %" PRId32 ", but the list has %d devices",
                                  g->nodes[id].name, b->p->device[id], n_devices);
    return TGC_OK;
}

tgc_status tgc_partition_build(const tgc_graph *g, const tgc_placement *p, const tgc_placer_device *devices,
                               int n_devices, tgc_diags *diags, tgc_partitioning *out) {
    memset(out, 0, sizeof *out);
    builder *b = tgc_calloc(1, sizeof *b);
    if (b == NULL) return TGC_ERR_NOMEM;
    *b = (builder){.g = g, .p = p, .diags = diags, .out = out};
    b->op_send = tgc_op_find("_Send");
    b->op_recv = tgc_op_find("_Recv");
    b->op_constant = tgc_op_find("Constant");
    b->op_identity = tgc_op_find("Identity");
    tgc_status s = check_placement(b, n_devices);
    if (s != TGC_OK) {
        tgc_free(b);
        return s;
    }
    size_t nn = (size_t)g->n_nodes + 1;
    out->devices = devices;
    out->n_devices = n_devices;
    out->n_source_nodes = g->n_nodes;
    out->part_of = tgc_malloc(nn * sizeof *out->part_of);
    out->local_id = tgc_malloc(nn * sizeof *out->local_id);
    b->pair_head = tgc_malloc(nn * sizeof *b->pair_head);
    b->part_of_device = tgc_malloc(((size_t)n_devices + 1) * sizeof *b->part_of_device);
    out->parts = tgc_calloc((size_t)n_devices + 1, sizeof *out->parts);
    b->origin_cap = tgc_calloc((size_t)n_devices + 1, sizeof *b->origin_cap);
    s = out->part_of && out->local_id && b->pair_head && b->part_of_device && out->parts && b->origin_cap
            ? TGC_OK
            : TGC_ERR_NOMEM;
    /* One partition per device that has nodes, in device-list order. */
    for (int d = 0; s == TGC_OK && d < n_devices; d++) b->part_of_device[d] = -1;
    for (int32_t id = 0; s == TGC_OK && id < g->n_nodes; id++) {
        b->part_of_device[p->device[id]] = 0;
        b->pair_head[id] = -1;
        out->part_of[id] = -1;
    }
    for (int d = 0; s == TGC_OK && d < n_devices; d++)
        if (b->part_of_device[d] == 0) {
            b->part_of_device[d] = out->n_parts;
            s = open_partition(b, out->n_parts++, d, &devices[d]);
        }
    for (int32_t id = 0; s == TGC_OK && id < g->n_nodes; id++) out->part_of[id] = b->part_of_device[p->device[id]];
    if (s == TGC_OK) s = reserve(b);
    /* Inputs first, then initializers (the IR's order), then ops in topological order. */
    for (int32_t id = 0; s == TGC_OK && id < g->n_nodes; id++)
        if (g->nodes[id].kind == TGC_NODE_INPUT) s = copy_node(b, out->part_of[id], id, NULL, NULL);
    for (int i = 0; s == TGC_OK && i < out->n_parts; i++)
        out->parts[i].graph->n_inputs_nodes = out->parts[i].graph->n_nodes;
    for (int32_t id = 0; s == TGC_OK && id < g->n_nodes; id++)
        if (g->nodes[id].kind == TGC_NODE_CONST) s = copy_node(b, out->part_of[id], id, NULL, NULL);
    for (int32_t i = 0; s == TGC_OK && i < g->n_nodes; i++)
        if (g->nodes[g->topo[i]].kind == TGC_NODE_OP) s = place_op(b, g->topo[i]);
    if (s == TGC_OK) s = set_outputs_table(b);
    for (int i = 0; s == TGC_OK && i < out->n_parts; i++) {
        tgc_graph *pg = out->parts[i].graph;
        if ((pg->topo = tgc_malloc(((size_t)pg->n_nodes + 1) * sizeof *pg->topo)) == NULL) s = TGC_ERR_NOMEM;
        for (int32_t k = 0; s == TGC_OK && k < pg->n_nodes; k++) pg->topo[k] = k;
        if (s == TGC_OK) tgc_graph_adopt_subgraphs(pg);
    }
    tgc_free(b->part_of_device);
    tgc_free(b->origin_cap);
    tgc_free(b->pair_head);
    tgc_free(b->pair_next);
    tgc_free(b->copy_head);
    tgc_free(b->copies);
    tgc_free(b);
    if (s != TGC_OK) {
        tgc_partitioning_release(out);
        if (s == TGC_ERR_NOMEM) tgc_diag_error(diags, g->path, (tgc_srcpos){0, 0}, "out-of-memory",
                                               "out of memory while partitioning");
    }
    return s;
}

void tgc_partitioning_release(tgc_partitioning *p) {
    for (int i = 0; p->parts != NULL && i < p->n_parts; i++) {
        tgc_graph_free(p->parts[i].graph);
        tgc_free(p->parts[i].origin);
    }
    for (int32_t i = 0; i < p->n_pairs; i++) {
        tgc_free(p->pairs[i].key);
        tgc_free(p->pairs[i].tensor_name);
    }
    tgc_free(p->parts);
    tgc_free(p->pairs);
    tgc_free(p->outputs);
    tgc_free(p->part_of);
    tgc_free(p->local_id);
    memset(p, 0, sizeof *p);
}

/* ---- figures -------------------------------------------------------------------- */

int tgc_partition_traffic_list(const tgc_partitioning *p, tgc_partition_traffic *out, int max) {
    int n = 0;
    for (int from = 0; from < p->n_parts; from++)
        for (int to = 0; to < p->n_parts; to++) {
            tgc_partition_traffic t = {from, to, 0, 0};
            for (int32_t i = 0; i < p->n_pairs; i++)
                if (p->pairs[i].send_part == from && p->pairs[i].recv_part == to) {
                    t.pairs++;
                    t.bytes += p->pairs[i].bytes;
                }
            if (t.pairs == 0) continue;
            if (n < max) out[n] = t;
            n++;
        }
    return n;
}

void tgc_partition_summary(const tgc_partitioning *p, FILE *out) {
    fprintf(out, "%d partition%s (", p->n_parts, p->n_parts == 1 ? "" : "s");
    for (int i = 0; i < p->n_parts; i++)
        fprintf(out, "%s%s: %" PRId32 " nodes", i ? ", " : "", p->parts[i].device_name, p->parts[i].graph->n_nodes);
    fprintf(out, "), %" PRId32 " send/recv pair%s", p->n_pairs, p->n_pairs == 1 ? "" : "s");
    int n = tgc_partition_traffic_list(p, NULL, 0);
    tgc_partition_traffic *t = n > 0 ? tgc_malloc((size_t)n * sizeof *t) : NULL;
    if (t != NULL) {
        tgc_partition_traffic_list(p, t, n);
        for (int i = 0; i < n; i++)
            fprintf(out, "%s %s->%s %" PRId32 " pair%s %" PRId64 " bytes", i ? "," : ":",
                    p->parts[t[i].send_part].device_name, p->parts[t[i].recv_part].device_name, t[i].pairs,
                    t[i].pairs == 1 ? "" : "s", t[i].bytes);
        fprintf(out, " per step (symbolic dims counted as 1)");
        tgc_free(t);
    }
    fputc('\n', out);
}
