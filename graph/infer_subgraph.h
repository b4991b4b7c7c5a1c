/* Inference into subgraphs, for the inference functions of If, Loop and
 * Scan (graph/ops_control.c). Private to graph/.
 *
 * Example usage (a Loop's body, N carried values):
 *     tgc_subgraph_carried carry = {.first_input = 2, .first_output = 1, .count = N};
 *     tgc_tensor_info final[N];
 *     s = tgc_subgraph_infer(c, body, formal, 2 + N, &carry, final);
 *     const tgc_tensor_info *cond = tgc_subgraph_output(body, 0);
 */
#ifndef TGC_GRAPH_INFER_SUBGRAPH_H
#define TGC_GRAPH_INFER_SUBGRAPH_H

#include "graph/infer.h"

/* Which formal inputs are carried from one iteration to the next, and which
 * outputs give their next values: inputs [first_input, first_input +
 * count) and outputs [first_output, first_output + count). */
typedef struct tgc_subgraph_carried {
    int first_input, first_output, count;
} tgc_subgraph_carried;

/* Infers `body`, a subgraph of the node c infers, with formal input i given
 * formal[i] (i < n_formal, which must be body->n_inputs_nodes; values are
 * not passed in) made more precise by the input's declaration in the file
 * (a contradiction is "dtype-mismatch" or "shape-mismatch" at the
 * declaration), and its captures given the node's implicit inputs. With
 * `carry`, the carried values' shapes are widened until they hold across
 * iterations: each dim that comes out of the body other than it went in
 * becomes a fresh symbol, and the body is inferred again; `carried`
 * (carry->count entries, or NULL) then gets the widened dtype and shape of
 * each. Messages of the final pass go to c->diags at their positions in
 * the body. Sets body->parent. Returns TGC_OK (every body output
 * inferred), TGC_ERR_INVALID (also, without a message, when c is a run-time
 * context: the executor runs subgraphs itself) or TGC_ERR_NOMEM. */
tgc_status tgc_subgraph_infer(tgc_infer_ctx *c, tgc_graph *body, const tgc_tensor_info *formal, int n_formal,
                              const tgc_subgraph_carried *carry, tgc_tensor_info *carried);

/* Widens carried value k's info `in` by what the body made of it (its
 * output `output`): each concrete dim of `in` that the output does not keep
 * becomes a fresh symbol, a rank that changes becomes unknown, and
 * *changed is set. A dtype that changes is reported at the body's output
 * ("dtype-mismatch") and gives TGC_ERR_INVALID. */
tgc_status tgc_subgraph_carry(tgc_infer_ctx *c, tgc_graph *body, int k, int output, tgc_tensor_info *in,
                              bool *changed);

/* The inferred info of body output i, or NULL when it failed or i is out
 * of range. */
const tgc_tensor_info *tgc_subgraph_output(const tgc_graph *body, int i);

#endif
