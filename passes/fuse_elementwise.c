/* Fusion groups: maximal groups of float32 (or float16) elementwise nodes (the rows of
 * graph/elementwise.def: arithmetic, activations, math, Clip with constant
 * bounds) of one shape, in which every value but the last is read only
 * inside the group and is no graph output (a value another node reads is
 * never fused away), become one _FusedElementwise node
 * (graph/ops_fused.c), which the cpu runs tile by tile
 * (devices/cpu/kernels_fused.c). Each group grows from its last node (in
 * reverse topological order) up through its inputs' producers to a fixed
 * point. An input of a member must have the group's shape, one element, or
 * be a row broadcast over its leading dims (a bias [C] of [N, T, C]); other
 * broadcasts end the group there.
 *
 * Formed only when every device of the run has a _FusedElementwise kernel
 * at the group's dtype (float16: the gpu's alone)
 * (the kernel registry says: the cpu's tile interpreter, the gpu's generated
 * kernel, devices/opencl/kernels_fused_cl.c), so placement can put the
 * group's one node on any of them; a group never spans devices: its
 * members all ask for the same device or none (TensorFlow's XLA clustering
 * and ONNX Runtime's elementwise fusion keep to one device too). */
#include "passes/pass.h"

#include "devices/kernel.h"
#include "graph/elementwise.h"
#include "graph/ops.h"
#include "support/alloc.h"

#include <string.h>

#define MAX_MEMBERS TGC_FUSED_MAX_STEPS
#define MAX_EXTERNAL TGC_FUSED_MAX_INPUTS

static tgc_ref out0(int32_t id) { return (tgc_ref){id, 0, {0, 0}}; }

/* The row of node id when it can join a group: float32 (or float16 where
 * every device has float16 groups: rw->fuse_groups_half), its data inputs
 * of its own dtype and shape or one element, Clip's bounds constant
 * scalars of its dtype. A group's members share their dtype: each reads
 * the others' values at its own. */
static const tgc_ew_row *fusable_row(const tgc_rewrite *rw, int32_t id) {
    const tgc_node *n = &rw->g->nodes[id];
    /* a node tied to another by colocation keeps its own placement */
    if (rw->removed[id] || n->kind != TGC_NODE_OP || n->n_controls > 0 || n->n_outputs != 1 || n->n_colocate > 0)
        return NULL;
    const tgc_ew_row *r = tgc_ew_find(n->op_name);
    tgc_dtype t = n->outputs[0].dtype;
    bool dtype_ok = (t == TGC_FLOAT32 && rw->fuse_groups) || (t == TGC_FLOAT16 && rw->fuse_groups_half);
    if (r == NULL || r->bool_out || tgc_ew_id(r) == TGC_EW_Mean || !dtype_ok || (r->dtypes & (1u << t)) == 0)
        return NULL;
    const tgc_shape *s = &n->outputs[0].shape;
    if (s->rank == TGC_RANK_UNKNOWN) return NULL;
    bool clip = tgc_ew_id(r) == TGC_EW_Clip;
    if (!clip && n->n_inputs != r->arity) return NULL;
    for (int k = 0; k < n->n_inputs; k++) {
        tgc_ref in = n->inputs[k];
        if (clip && k > 0) {
            const tgc_const *b = in.node >= 0 ? tgc_pass_const_of(rw, in) : NULL;
            if (in.node >= 0 && (b == NULL || b->dtype != t || tgc_shape_numel(&b->shape) != 1)) return NULL;
            continue;
        }
        const tgc_tensor_info *x = tgc_graph_ref_info(rw->g, in);
        if (x == NULL || x->dtype != t || !tgc_fused_input_fits(&x->shape, s)) return NULL;
    }
    return r;
}

typedef struct group {
    int32_t members[MAX_MEMBERS];
    int n;
} group;

/* True when every read of node id's output is by a member of gp: the
 * members' input slots holding it account for all its uses (a graph
 * output is a use no member accounts for). O(group), not O(graph). */
static bool read_only_inside(const tgc_rewrite *rw, int32_t id, const group *gp) {
    int32_t inside = 0;
    for (int m = 0; m < gp->n; m++) {
        const tgc_node *n = &rw->g->nodes[gp->members[m]];
        for (int k = 0; k < n->n_inputs; k++) inside += n->inputs[k].node == id && n->inputs[k].port == 0;
    }
    return inside > 0 && inside == tgc_rewrite_uses(rw, out0(id));
}

static void grow(const tgc_rewrite *rw, int32_t root, int32_t *group_of, group *gp) {
    const tgc_shape *shape = &rw->g->nodes[root].outputs[0].shape;
    gp->n = 0;
    gp->members[gp->n++] = root;
    group_of[root] = root;
    for (bool added = true; added;) {
        added = false;
        for (int m = 0; m < gp->n && gp->n < MAX_MEMBERS; m++) {
            const tgc_node *n = &rw->g->nodes[gp->members[m]];
            int data = tgc_ew_find(n->op_name)->arity;
            for (int k = 0; k < data && gp->n < MAX_MEMBERS; k++) {
                tgc_ref in = n->inputs[k];
                if (in.node < 0 || in.port != 0 || group_of[in.node] >= 0) continue;
                const tgc_node *p = &rw->g->nodes[in.node];
                if (fusable_row(rw, in.node) == NULL || !tgc_shape_eq(&p->outputs[0].shape, shape) ||
                    !tgc_pass_same_device(p, &rw->g->nodes[root]))
                    continue;
                if (!read_only_inside(rw, in.node, gp)) continue;
                group_of[in.node] = root;
                gp->members[gp->n++] = in.node;
                added = true;
            }
        }
    }
}

/* Replaces the group by one _FusedElementwise node named after its root. */
static tgc_status emit(tgc_rewrite *rw, group *gp, const int32_t *pos) {
    /* steps in topological order (insertion sort by position: groups are small) */
    for (int i = 1; i < gp->n; i++)
        for (int j = i; j > 0 && pos[gp->members[j]] < pos[gp->members[j - 1]]; j--) {
            int32_t t = gp->members[j];
            gp->members[j] = gp->members[j - 1];
            gp->members[j - 1] = t;
        }
    tgc_ref ext[MAX_EXTERNAL];
    int n_ext = 0;
    const char *ops[MAX_MEMBERS];
    int64_t operands[2 * MAX_MEMBERS];
    double params[3 * MAX_MEMBERS];
    for (int s = 0; s < gp->n; s++) {
        const tgc_node *n = &rw->g->nodes[gp->members[s]];
        const tgc_ew_row *r = tgc_ew_find(n->op_name);
        ops[s] = r->op;
        tgc_ew_node_params(rw->g, n, r, &params[3 * s]); /* Clip's bounds: checked by fusable_row */
        for (int k = 0; k < 2; k++) {
            operands[2 * s + k] = -1;
            if (k >= r->arity) continue;
            tgc_ref in = n->inputs[k];
            int step = -1;
            for (int t = 0; t < s && step < 0; t++)
                if (gp->members[t] == in.node) step = t;
            if (step >= 0) {
                operands[2 * s + k] = MAX_EXTERNAL + step; /* renumbered below */
                continue;
            }
            int e = 0;
            while (e < n_ext && !(ext[e].node == in.node && ext[e].port == in.port)) e++;
            if (e == n_ext) {
                if (n_ext == MAX_EXTERNAL) return TGC_OK; /* too many inputs: leave the group alone */
                ext[n_ext++] = in;
            }
            operands[2 * s + k] = e;
        }
    }
    /* input 0 must have the group's shape (it gives the output's): swap one in */
    const tgc_shape *shape = &rw->g->nodes[gp->members[gp->n - 1]].outputs[0].shape;
    int full = 0;
    while (full < n_ext && !tgc_shape_eq(&tgc_graph_ref_info(rw->g, ext[full])->shape, shape)) full++;
    if (full == n_ext) return TGC_OK; /* none has it: leave the group alone */
    tgc_ref t = ext[0];
    ext[0] = ext[full];
    ext[full] = t;
    for (int i = 0; i < 2 * gp->n; i++) {
        if (operands[i] == 0) operands[i] = full;
        else if (operands[i] == full) operands[i] = 0;
        if (operands[i] >= MAX_EXTERNAL) operands[i] = operands[i] - MAX_EXTERNAL + n_ext;
    }
    int32_t root = gp->members[gp->n - 1], fused;
    tgc_status st = tgc_rewrite_add_op(rw, "_FusedElementwise", root, ext, n_ext, 1, &fused);
    if (st == TGC_OK) st = tgc_rewrite_set_attr_list(rw, fused, "ops", TGC_ATTR_STRINGS, (size_t)gp->n, ops);
    if (st == TGC_OK)
        st = tgc_rewrite_set_attr_list(rw, fused, "operands", TGC_ATTR_INTS, 2 * (size_t)gp->n, operands);
    if (st == TGC_OK) st = tgc_rewrite_set_attr_list(rw, fused, "params", TGC_ATTR_FLOATS, 3 * (size_t)gp->n, params);
    if (st != TGC_OK) return st;
    tgc_rewrite_replace_uses(rw, out0(root), out0(fused));
    for (int s = 0; s < gp->n; s++) tgc_rewrite_remove(rw, gp->members[s]);
    rw->edits++;
    return TGC_OK;
}

tgc_status tgc_pass_fuse_elementwise(tgc_rewrite *rw) {
    if (!rw->fuse_groups && !rw->fuse_groups_half) return TGC_OK;
    int32_t nn = rw->g->n_nodes;
    int32_t *group_of = tgc_malloc(((size_t)nn + 1) * sizeof *group_of);
    int32_t *pos = tgc_malloc(((size_t)nn + 1) * sizeof *pos);
    group *gp = tgc_malloc(sizeof *gp);
    tgc_status st = group_of != NULL && pos != NULL && gp != NULL ? TGC_OK : TGC_ERR_NOMEM;
    for (int32_t i = 0; st == TGC_OK && i < nn; i++) {
        group_of[i] = -1;
        pos[rw->g->topo[i]] = i;
    }
    for (int32_t i = nn - 1; st == TGC_OK && i >= 0; i--) {
        int32_t root = rw->g->topo[i];
        if (group_of[root] >= 0 || fusable_row(rw, root) == NULL) continue;
        grow(rw, root, group_of, gp);
        if (gp->n >= 2) st = emit(rw, gp, pos);
    }
    tgc_free(group_of);
    tgc_free(pos);
    tgc_free(gp);
    return st;
}
