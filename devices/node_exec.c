/* Running one node on one device (node_exec.h): inference over the actual
 * inputs, and the four steps together for a node that forwards nothing
 * (staging, allocation and the kernel are inline in the header). */
#include "devices/node_exec.h"

#include "graph/infer.h"
#include "support/alloc.h"
#include "support/diag.h"

#include <stdio.h>
#include <string.h>

/* info for input i of n, whose value is *in; values: room for a small
 * integer value (TGC_MAX_VALUE_LEN dims). */
static void input_info(const tgc_graph *g, const tgc_node *n, int i, const tgc_value *in, unsigned flags,
                       tgc_tensor_info *info, tgc_dim *values) {
    memset(info, 0, sizeof *info);
    info->dtype = in->dtype;
    info->value_len = -1;
    if ((flags & TGC_NODE_INFER_GRAPH_KINDS) && n->inputs[i].node >= 0) {
        uint8_t kind = tgc_graph_ref_info(g, n->inputs[i])->kind;
        if (kind != TGC_KIND_TENSOR) { /* a sequence or an optional: the kernel reads the elements */
            info->kind = kind;
            info->shape.rank = TGC_RANK_UNKNOWN;
            return;
        }
    }
    if (in->dtype == TGC_DTYPE_INVALID) return; /* omitted */
    info->shape = tgc_shape_of(in->rank, in->dims);
    if (!(flags & TGC_NODE_INFER_VALUES)) return;
    int64_t numel = tgc_value_numel(in);
    const void *p = tgc_buffer_host_ptr(in->buf);
    if (in->dtype == TGC_FLOAT32 && numel == 1 && p != NULL) {
        info->has_real = true;
        info->real = *(const float *)p;
    }
    if ((in->dtype == TGC_INT64 || in->dtype == TGC_INT32) && in->rank <= 1 && numel <= TGC_MAX_VALUE_LEN &&
        (p != NULL || numel == 0)) {
        for (int64_t k = 0; k < numel; k++)
            values[k] = tgc_dim_of(in->dtype == TGC_INT64 ? ((const int64_t *)p)[k] : ((const int32_t *)p)[k]);
        info->value = values;
        info->value_len = (int)numel;
    }
}

tgc_status tgc_node_exec_infer(const tgc_graph *g, const tgc_node *n, const tgc_value *in, tgc_value *out,
                               unsigned flags, bool *unresolved, tgc_diags *diags, char *err, size_t err_size) {
    tgc_tensor_info infos_small[TGC_NODE_EXEC_SMALL_IO], outs_small[TGC_NODE_EXEC_SMALL_IO];
    tgc_dim values_small[TGC_NODE_EXEC_SMALL_IO][TGC_MAX_VALUE_LEN];
    tgc_tensor_info *infos = infos_small, *outs = outs_small;
    tgc_dim(*values)[TGC_MAX_VALUE_LEN] = values_small;
    void *heap = NULL;
    if (unresolved != NULL) *unresolved = false;
    if (n->n_inputs > TGC_NODE_EXEC_SMALL_IO || n->n_outputs > TGC_NODE_EXEC_SMALL_IO) { /* any arity: the heap */
        size_t ni = (size_t)n->n_inputs, no = (size_t)n->n_outputs;
        heap = tgc_malloc(ni * sizeof *values + (ni + no) * sizeof *infos + 1);
        if (heap == NULL) {
            if (err != NULL) snprintf(err, err_size, "no host memory to infer the shapes of %zu inputs", ni);
            return TGC_ERR_NOMEM;
        }
        values = heap;
        infos = (tgc_tensor_info *)(void *)(values + ni);
        outs = infos + ni;
    }
    for (int i = 0; i < n->n_inputs; i++) input_info(g, n, i, &in[i], flags, &infos[i], values[i]);
    tgc_status s = TGC_OK;
    /* Without diags, messages are formatted only after a failure: a second
     * attempt with diags of its own, for err. */
    bool retry = diags == NULL && err != NULL;
    for (int attempt = 0; attempt < 2; attempt++) {
        for (int k = 0; k < n->n_outputs; k++) {
            memset(&outs[k], 0, sizeof outs[k]);
            outs[k].dtype = TGC_DTYPE_INVALID;
            outs[k].value_len = -1;
        }
        tgc_diags *d = attempt == 0 || !retry ? diags : tgc_diags_create();
        tgc_infer_ctx ctx = {.graph = (tgc_graph *)g, .node = (tgc_node *)n, .diags = d, .input_infos = infos,
                             .output_infos = outs, .runtime = true};
        s = n->op->infer(&ctx);
        bool left = s == TGC_OK && ctx.unresolved;
        for (int k = 0; s == TGC_OK && (flags & TGC_NODE_INFER_EVERY_OUTPUT) && k < n->n_outputs; k++)
            left |= outs[k].dtype == TGC_DTYPE_INVALID || outs[k].shape.rank == TGC_RANK_UNKNOWN;
        if (unresolved != NULL) *unresolved = left;
        if (left && !(flags & TGC_NODE_INFER_KERNEL_SIZES)) {
            if (err != NULL) snprintf(err, err_size, "cannot determine an output shape from the inputs");
            s = TGC_ERR_INVALID;
        } else if (s != TGC_OK && attempt == 1 && err != NULL) {
            snprintf(err, err_size, "%s", d != NULL && tgc_diags_count(d) ? tgc_diag_message(d, 0) : "inference failed");
        }
        if (d != diags) tgc_diags_free(d);
        for (int k = 0; k < n->n_outputs; k++) {
            if (s == TGC_OK) {
                out[k].dtype = outs[k].dtype;
                out[k].rank = outs[k].shape.rank == TGC_RANK_UNKNOWN ? 0 : outs[k].shape.rank;
                for (int r = 0; r < out[k].rank; r++) out[k].dims[r] = outs[k].shape.dims[r].v;
            }
            tgc_free(outs[k].value);
        }
        if (s == TGC_OK || s == TGC_ERR_NOMEM || left || !retry) break;
    }
    tgc_free(heap);
    return s;
}

/* Inputs tgc_node_exec_run keeps on the stack. */
#define RUN_SMALL_IO 16

tgc_status tgc_node_exec_run(const tgc_graph *g, const tgc_node *n, const tgc_kernel_def *k, tgc_device *d,
                             const tgc_value *in_values, tgc_value *out, unsigned flags, char *err, size_t err_size) {
    size_t ni = (size_t)n->n_inputs;
    tgc_value in_small[RUN_SMALL_IO], *in = in_small;
    tgc_buffer *staged_small[RUN_SMALL_IO], **staged = staged_small;
    void *heap = NULL;
    err[0] = '\0';
    memset(out, 0, (size_t)n->n_outputs * sizeof *out);
    if (ni > RUN_SMALL_IO) {
        if ((heap = tgc_malloc(ni * (sizeof *in + sizeof *staged))) == NULL) {
            snprintf(err, err_size, "no host memory for %zu inputs", ni);
            return TGC_ERR_NOMEM;
        }
        in = heap;
        staged = (tgc_buffer **)(void *)(in + ni);
    }
    if (ni > 0) {
        memcpy(in, in_values, ni * sizeof *in);
        memset(staged, 0, ni * sizeof *staged);
    }
    int failed = 0;
    tgc_device *host_to = tgc_node_exec_host_to(d);
    tgc_status s = tgc_node_exec_stage(n, k, d, host_to, in, staged, &failed);
    if (s != TGC_OK)
        snprintf(err, err_size, "cannot copy input %d to %s", failed,
                 tgc_node_exec_input_device(k, d, host_to, failed)->name);
    if (s == TGC_OK)
        s = tgc_node_exec_infer(g, n, in, out, flags | (k->sizes_outputs ? TGC_NODE_INFER_KERNEL_SIZES : 0u), NULL,
                                NULL, err, err_size);
    if (s == TGC_OK && !k->sizes_outputs && (s = tgc_node_exec_alloc(n, k, d, out, &failed)) != TGC_OK)
        snprintf(err, err_size, "no memory for output %d on %s", failed, tgc_node_exec_output_device(k, d, failed)->name);
    if (s == TGC_OK) {
        tgc_kernel_ctx c = {.node = n, .device = d, .inputs = in, .n_inputs = n->n_inputs, .outputs = out,
                            .n_outputs = n->n_outputs, .error = err, .error_size = err_size, .def = k};
        s = tgc_node_exec_kernel(&c);
        if (s != TGC_OK && err[0] == '\0') snprintf(err, err_size, "%s", tgc_status_name(s));
    }
    for (size_t i = 0; i < ni; i++) tgc_buffer_release(staged[i]);
    for (int i = 0; s != TGC_OK && i < n->n_outputs; i++) {
        tgc_buffer_release(out[i].buf);
        out[i].buf = NULL;
    }
    tgc_free(heap);
    return s;
}
