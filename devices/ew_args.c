/* The arguments of an elementwise row's kernel (devices/ew_args.h). */
#include "devices/ew_args.h"

#include "devices/kernel_checks.h"
#include "support/dtype_elem.h"

#include <math.h>
#include <string.h>

/* Clip-13's bounds as P0 and P1. */
static tgc_status clip_bounds(tgc_kernel_ctx *c, tgc_ew_params *p) {
    tgc_dtype t = c->inputs[0].dtype;
    /* No bound: the dtype's own extremes (an integer's bits, as the loops
     * read i[] as the element type: -1 is uint64's largest). */
    static const int64_t lo[TGC_DTYPE_COUNT] = {[TGC_INT8] = INT8_MIN, [TGC_INT16] = INT16_MIN,
                                                [TGC_INT32] = INT32_MIN, [TGC_INT64] = INT64_MIN};
    static const int64_t hi[TGC_DTYPE_COUNT] = {
        [TGC_INT8] = INT8_MAX,   [TGC_INT16] = INT16_MAX,   [TGC_INT32] = INT32_MAX, [TGC_INT64] = INT64_MAX,
        [TGC_UINT8] = UINT8_MAX, [TGC_UINT16] = UINT16_MAX, [TGC_UINT32] = UINT32_MAX, [TGC_UINT64] = -1,
        [TGC_BOOL] = 1};
    bool known = t >= 0 && t < TGC_DTYPE_COUNT;
    p->f[0] = p->d[0] = -INFINITY;
    p->f[1] = p->d[1] = INFINITY;
    p->i[0] = known ? lo[t] : 0;
    p->i[1] = known ? hi[t] : 0;
    for (int i = 1; i <= 2; i++) {
        if (!tgc_kernel_has_input(c, i)) continue;
        const tgc_value *b = &c->inputs[i];
        if (b->dtype != t || tgc_value_numel(b) != 1)
            return tgc_kernel_fail(c, "Clip: input %d ('%s') must be one %s element; it is %s with %lld", i,
                                   i == 1 ? "min" : "max", tgc_dtype_name(t), tgc_dtype_name(b->dtype),
                                   (long long)tgc_value_numel(b));
        const void *v = tgc_kernel_in_ptr(c, i);
        p->d[i - 1] = tgc_elem_as_double(t, v, 0);
        p->f[i - 1] = (float)p->d[i - 1]; /* exact for float32, float16, bfloat16 */
        p->i[i - 1] = tgc_elem_as_int64(t, v, 0);
    }
    return TGC_OK;
}

tgc_status tgc_ew_read_params(tgc_kernel_ctx *c, const tgc_ew_row *r, tgc_ew_params *p) {
    memset(p, 0, sizeof *p);
    if (tgc_ew_id(r) == TGC_EW_Clip) return clip_bounds(c, p);
    /* a word attribute that is neither word (inference refuses it too) */
    for (int k = 0; k < r->n_attrs; k++) {
        const tgc_attr *a = tgc_node_attr(c->node, r->attr_names[k]);
        if (r->attr_kinds[k] != TGC_EW_ATTR_WORD || a == NULL) continue;
        const char *s = a->type == TGC_ATTR_STRING && a->s != NULL ? a->s : "";
        if (strcmp(s, r->attr_words[0]) != 0 && strcmp(s, r->attr_words[1]) != 0)
            return tgc_kernel_fail(c, "%s: attribute '%s' is '%s'; it must be %s or %s", r->op, r->attr_names[k], s,
                                   r->attr_words[0], r->attr_words[1]);
    }
    double v[TGC_EW_MAX_PARAMS]; /* the one reading of a row's attributes (graph/elementwise.h) */
    tgc_ew_node_params(NULL, c->node, r, v);
    for (int k = 0; k < r->n_attrs; k++) {
        p->f[k] = (float)v[k];
        p->d[k] = p->f[k]; /* ONNX's float attributes are float32 */
        p->i[k] = r->attr_kinds[k] == TGC_EW_ATTR_FLOAT ? 0 : (int64_t)v[k];
    }
    if (tgc_ew_id(r) == TGC_EW_Mean) p->f[0] = 1.0f; /* the kernel sets the last pass's divisor */
    return TGC_OK;
}

tgc_status tgc_ew_check_binary_dtypes(tgc_kernel_ctx *c, const tgc_ew_row *r) {
    const tgc_value *a = &c->inputs[0], *y = &c->outputs[0];
    tgc_dtype want = r->bool_out ? TGC_BOOL : a->dtype;
    for (int k = 1; k < c->n_inputs; k++)
        if (c->inputs[k].dtype != a->dtype)
            return tgc_kernel_fail(c, "%s: input %d is %s, input 0 %s; they must have one dtype", r->op, k,
                                   tgc_dtype_name(c->inputs[k].dtype), tgc_dtype_name(a->dtype));
    if (y->dtype != want)
        return tgc_kernel_fail(c, "%s: the output is %s; expected %s", r->op, tgc_dtype_name(y->dtype),
                               tgc_dtype_name(want));
    return TGC_OK;
}
