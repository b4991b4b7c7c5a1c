/* StringNormalizer (ONNX opset 10): string X [C] or [1, C] -> Y [C'] or
 * [1, C'] with the stopwords removed and the case changed; C' depends on
 * the values (a fresh dim; the cpu kernel sizes its output). And the list
 * of ops that take string tensors at all. */
#include "graph/ops.h"

#include <string.h>

static const tgc_attr_def strnorm_attrs[] = {{"case_change_action", TGC_ATTR_STRING, false},
                                             {"is_case_sensitive", TGC_ATTR_INT, false},
                                             {"locale", TGC_ATTR_STRING, false},
                                             {"stopwords", TGC_ATTR_STRINGS, false},
                                             {NULL, 0, false}};

/* The locales whose case rules tgc follows (support/unicode_case.h):
 * English, and "" (the default). */
static bool known_locale(const char *l) {
    return l[0] == '\0' || strcmp(l, "en_US") == 0 || strcmp(l, "en_US.UTF-8") == 0 || strcmp(l, "C") == 0;
}

/* X string, rank 1 or 2 with dim 0 equal to 1; case_change_action LOWER,
 * UPPER or NONE (default); locale "" or en_US. Y's last dim: X's when no
 * stopword can remove anything and C > 0, else fresh (all removed gives
 * one empty string: [1] or [1, 1]). */
static tgc_status infer_string_normalizer(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    if (!tgc_ops_require_dtypes(c, 0, TGC_DT_STRING)) return TGC_ERR_INVALID;
    const char *action = tgc_infer_attr_string(c, "case_change_action", "NONE");
    if (strcmp(action, "LOWER") != 0 && strcmp(action, "UPPER") != 0 && strcmp(action, "NONE") != 0)
        return tgc_infer_fail(c, -1, "bad-attribute", "case_change_action is '%s'; it must be LOWER, UPPER or NONE",
                              action);
    const char *locale = tgc_infer_attr_string(c, "locale", "");
    if (!known_locale(locale))
        return tgc_infer_fail(c, -1, "unsupported",
                              "locale '%s': tgc knows the case rules of en_US only (give \"\" or en_US)", locale);
    const tgc_shape *xs = &x->shape;
    char buf[TGC_OPS_SHAPE_BUF];
    if (xs->rank != TGC_RANK_UNKNOWN &&
        (xs->rank < 1 || xs->rank > 2 || (xs->rank == 2 && tgc_dim_known(xs->dims[0]) && xs->dims[0].v != 1)))
        return tgc_infer_fail(c, 0, "shape-mismatch", "X has shape %s; it must be [C] or [1, C]",
                              tgc_infer_shape_str(c, xs, buf, sizeof buf));
    if (xs->rank == TGC_RANK_UNKNOWN) return tgc_infer_set_output(c, 0, TGC_STRING, xs);
    const tgc_attr *stops = tgc_infer_attr(c, "stopwords");
    tgc_dim last = xs->dims[xs->rank - 1];
    bool same = (stops == NULL || stops->n == 0) && tgc_dim_known(last) && last.v > 0;
    tgc_shape out = *xs;
    if (xs->rank == 2) out.dims[0] = tgc_dim_of(1);
    out.dims[xs->rank - 1] = same ? last : tgc_infer_fresh_dim(c);
    return tgc_infer_set_output(c, 0, TGC_STRING, &out);
}

const tgc_op_def tgc_op_StringNormalizer = {"StringNormalizer", 1, 1, 1, 1, strnorm_attrs, infer_string_normalizer};

/* The ops whose kernels handle string tensors (devices/cpu/kernels_string.c,
 * string_cast.c) or read only their dims (Shape, Size), and tgc's own
 * _Send/_Recv (the rendezvous copies strings deep), the control flow
 * ops, which move whatever their subgraphs take and give, and the sequence
 * and optional ops that move whole tensors. */
static const char *const string_ops[] = {"StringNormalizer", "Cast", "CastLike", "Identity", "Reshape", "Flatten",
                                         "Squeeze", "Unsqueeze", "Transpose", "Concat", "Split", "Gather", "Slice",
                                         "Expand", "Tile", "Shape", "Size", "_Send", "_Recv", "If", "Loop",
                                         "Scan", "SequenceMap", "SequenceEmpty", "SequenceConstruct",
                                         "SequenceInsert", "SequenceAt", "SequenceLength", "SequenceErase",
                                         "Optional", "OptionalHasElement", "OptionalGetElement"};

bool tgc_ops_take_strings(const char *op) {
    for (size_t i = 0; i < sizeof string_ops / sizeof string_ops[0]; i++)
        if (strcmp(string_ops[i], op) == 0) return true;
    return false;
}
