/* TfIdfVectorizer (ONNX opset 9): X int32/int64 [C] or [B, C] -> Y float32
 * [columns] or [B, columns], columns from the n-gram pool (tfidf_pool.h). */
#include "graph/ops.h"
#include "graph/tfidf_pool.h"

static tgc_status infer_tfidf(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    if (!tgc_infer_require_int(c, 0)) return TGC_ERR_INVALID;
    tgc_tfidf_pool pool;
    const char *why = tgc_tfidf_pool_read(c->node, &pool);
    if (why != NULL) return tgc_infer_fail(c, -1, "bad-attribute", "%s", why);
    tgc_shape out = {.rank = TGC_RANK_UNKNOWN};
    if (x->shape.rank > 2) {
        char buf[TGC_OPS_SHAPE_BUF];
        return tgc_infer_fail(c, 0, "shape-mismatch", "X has shape %s; it must be [C] or [B, C]",
                              tgc_infer_shape_str(c, &x->shape, buf, sizeof buf));
    }
    if (x->shape.rank == 2) out = (tgc_shape){.rank = 2, .dims = {x->shape.dims[0], tgc_dim_of(pool.columns)}};
    else if (x->shape.rank >= 0) out = (tgc_shape){.rank = 1, .dims = {tgc_dim_of(pool.columns)}};
    return tgc_infer_set_output(c, 0, TGC_FLOAT32, &out);
}

static const tgc_attr_def tfidf_attrs[] = {
    {"max_gram_length", TGC_ATTR_INT, true}, {"max_skip_count", TGC_ATTR_INT, true},
    {"min_gram_length", TGC_ATTR_INT, true}, {"mode", TGC_ATTR_STRING, true},
    {"ngram_counts", TGC_ATTR_INTS, true},   {"ngram_indexes", TGC_ATTR_INTS, true},
    {"pool_int64s", TGC_ATTR_INTS, false},   {"pool_strings", TGC_ATTR_STRINGS, false},
    {"weights", TGC_ATTR_FLOATS, false},     {NULL, 0, false}};

const tgc_op_def tgc_op_TfIdfVectorizer = {"TfIdfVectorizer", 1, 1, 1, 1, tfidf_attrs, infer_tfidf};
