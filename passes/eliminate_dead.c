/* Dead-node elimination: a backward walk from the graph outputs over data
 * and control edges marks what is needed; every other op node and
 * initializer goes. */
#include "passes/pass.h"

#include "support/alloc.h"

tgc_status tgc_pass_eliminate_dead(tgc_rewrite *rw) {
    tgc_graph *g = rw->g;
    int32_t nn = g->n_nodes;
    bool *live = tgc_calloc((size_t)nn + 1, sizeof *live);
    int32_t *stack = tgc_malloc(((size_t)nn + 1) * sizeof *stack);
    if (live == NULL || stack == NULL) {
        tgc_free(live);
        tgc_free(stack);
        return TGC_ERR_NOMEM;
    }
    int32_t top = 0;
    for (int i = 0; i < g->n_outputs; i++) {
        int32_t id = g->outputs[i].node;
        if (id >= 0 && !live[id]) {
            live[id] = true;
            stack[top++] = id;
        }
    }
    while (top > 0) {
        const tgc_node *n = &g->nodes[stack[--top]];
        for (int e = 0; e < n->n_inputs + n->n_controls; e++) {
            int32_t id = e < n->n_inputs ? n->inputs[e].node : n->controls[e - n->n_inputs].node;
            if (id >= 0 && !live[id]) {
                live[id] = true;
                stack[top++] = id;
            }
        }
    }
    for (int32_t id = 0; id < nn; id++)
        if (!live[id] && g->nodes[id].kind != TGC_NODE_INPUT && !rw->removed[id]) {
            tgc_rewrite_remove(rw, id);
            rw->edits++;
        }
    tgc_free(live);
    tgc_free(stack);
    return TGC_OK;
}
