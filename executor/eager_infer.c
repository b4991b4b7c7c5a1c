/* Output shapes of an eager call: the op's own inference function over the
 * inputs' dtypes and dims (and, as a session's run shows them, the values
 * of small integer inputs in host memory and of float32 scalars), so shape
 * rules live in one place. The kernel cache asks twice on a miss, with and
 * without the values: when both agree and nothing stayed unknown, the
 * shapes do not depend on the values and are kept for later calls. */
#include "executor/eager.h"

#include "graph/infer.h"
#include "support/alloc.h"
#include "support/diag.h"

#include <string.h>

/* infos[i] for input value in[i]; values[i] holds a small integer value. */
static void input_info(const tgc_value *in, bool with_values, tgc_tensor_info *info, tgc_dim *values) {
    memset(info, 0, sizeof *info);
    info->dtype = in->dtype;
    info->value_len = -1;
    if (in->dtype == TGC_DTYPE_INVALID) return;
    info->shape = tgc_shape_of(in->rank, in->dims);
    if (!with_values) return;
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

tgc_status tgc_eager_infer(tgc_graph *g, tgc_node *n, const tgc_value *in, tgc_value *out, bool with_values,
                           bool sized, bool *unresolved, tgc_diags *diags) {
    size_t ni = (size_t)n->n_inputs, no = (size_t)n->n_outputs;
    tgc_tensor_info *infos = tgc_calloc(ni + no + 1, sizeof *infos);
    tgc_dim(*values)[TGC_MAX_VALUE_LEN] = tgc_malloc((ni + 1) * sizeof *values);
    if (infos == NULL || values == NULL) {
        tgc_free(infos);
        tgc_free(values);
        return TGC_ERR_NOMEM;
    }
    tgc_tensor_info *outs = infos + ni;
    for (size_t i = 0; i < ni; i++) input_info(&in[i], with_values, &infos[i], values[i]);
    for (size_t k = 0; k < no; k++) {
        outs[k].dtype = TGC_DTYPE_INVALID;
        outs[k].value_len = -1;
    }
    tgc_infer_ctx ctx = {.graph = g, .node = n, .diags = diags, .input_infos = infos, .output_infos = outs,
                         .runtime = true};
    tgc_status s = n->op->infer(&ctx);
    if (unresolved != NULL) *unresolved = ctx.unresolved;
    for (size_t k = 0; s == TGC_OK && k < no; k++)
        if (outs[k].dtype == TGC_DTYPE_INVALID || outs[k].shape.rank == TGC_RANK_UNKNOWN) ctx.unresolved = true;
    if (s == TGC_OK && ctx.unresolved && !sized)
        s = tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "runtime-shape",
                           "op %s: cannot determine an output shape from the inputs%s", n->op->name,
                           with_values ? " (a shape input must be an int32/int64 tensor in host memory)" : "");
    for (size_t k = 0; k < no; k++) {
        if (s == TGC_OK) {
            out[k].dtype = outs[k].dtype;
            out[k].rank = outs[k].shape.rank == TGC_RANK_UNKNOWN ? 0 : outs[k].shape.rank;
            for (int d = 0; d < out[k].rank; d++) out[k].dims[d] = outs[k].shape.dims[d].v;
        }
        tgc_free(outs[k].value);
    }
    if (unresolved != NULL && s == TGC_OK) *unresolved = ctx.unresolved;
    tgc_free(values);
    tgc_free(infos);
    return s;
}
