/* Inference over ranks known only at run time (graph/infer_rank.h): a node
 * with an input of unknown rank is inferred at every rank that input could
 * have, and keeps what the valid ranks agree on. Each expectation is worked
 * out from the ONNX definition of the op at each rank 0..8, by hand. */
#include "graph/op_registry.h"
#include "graph/passes.h"
#include "tests/graph/infer_fixture.h"

/* Inference through the driver (tgc_graph_infer_node), which is where the
 * ranks are tried; the fixture's fx_infer calls the op directly. */
#define RK_OK(f, id) CU_ASSERT_EQUAL(tgc_graph_infer_node((f)->g, (id), (f)->d), TGC_OK)

/* Elementwise ops, Cast, Relu: the rank follows the input's, so it stays
 * unknown; the dtype is the op's. */
static void test_rank_follows_input(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "?");
    fx_input(&f, "b", TGC_FLOAT32, "3");
    int32_t add = fx_op(&f, "add", "Add", "x, b", 1);
    RK_OK(&f, add);
    FX_OUT(&f, add, 0, TGC_FLOAT32, "?");
    int32_t cast = fx_op(&f, "cast", "Cast", "add", 1);
    fx_attr_int(&f, cast, "to", 7); /* ONNX TensorProto INT64 */
    RK_OK(&f, cast);
    FX_OUT(&f, cast, 0, TGC_INT64, "?");
    int32_t eq = fx_op(&f, "eq", "Equal", "x, b", 1);
    RK_OK(&f, eq);
    FX_OUT(&f, eq, 0, TGC_BOOL, "?");
    fx_end(&f);
}

/* Ops whose output has the same rank at every rank of the input: Shape
 * ([r], r unknown: a fresh symbol, no value), Size and a full reduction
 * (scalars). */
static void test_rank_fixed_by_op(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "?");
    int32_t shape = fx_op(&f, "shape", "Shape", "x", 1);
    RK_OK(&f, shape);
    FX_OUT(&f, shape, 0, TGC_INT64, "[unk__0]");
    FX_VALUE(&f, shape, 0, "none");
    int32_t size = fx_op(&f, "size", "Size", "x", 1);
    RK_OK(&f, size);
    FX_OUT(&f, size, 0, TGC_INT64, "[]");
    int32_t sum = fx_op(&f, "sum", "ReduceSum", "x", 1);
    fx_attr_int(&f, sum, "keepdims", 0);
    RK_OK(&f, sum);
    FX_OUT(&f, sum, 0, TGC_FLOAT32, "[]");
    fx_end(&f);
}

/* Ops valid at one rank only decide it: Gemm needs A of rank 2, Conv with a
 * 4-d weight needs X of rank 4; the dims the weights fix are kept. */
static void test_one_valid_rank_decides(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "?");
    fx_input(&f, "w", TGC_FLOAT32, "3, 2");
    fx_input(&f, "k", TGC_FLOAT32, "8, 3, 3, 3");
    int32_t gemm = fx_op(&f, "gemm", "Gemm", "x, w", 1);
    RK_OK(&f, gemm);
    FX_OUT(&f, gemm, 0, TGC_FLOAT32, "[unk__0, 2]");
    int32_t conv = fx_op(&f, "conv", "Conv", "x, k", 1);
    RK_OK(&f, conv);
    FX_OUT(&f, conv, 0, TGC_FLOAT32, "[unk__1, 8, unk__2, unk__3]");
    /* MatMul by a 2-d weight: rank 1 gives [2], rank 2 [?, 2]...: unknown. */
    int32_t mm = fx_op(&f, "mm", "MatMul", "x, w", 1);
    RK_OK(&f, mm);
    FX_OUT(&f, mm, 0, TGC_FLOAT32, "?");
    fx_end(&f);
}

/* Several unknown-rank inputs: up to three are combined freely (Where:
 * 9^3 rank triples); with more (Concat of five), one shared rank is tried
 * and the output's rank is left unknown. */
static void test_several_unknown_inputs(void) {
    fx f = fx_begin();
    fx_input(&f, "c", TGC_BOOL, "?");
    fx_input(&f, "a", TGC_FLOAT32, "?");
    fx_input(&f, "b", TGC_FLOAT32, "?");
    int32_t w = fx_op(&f, "w", "Where", "c, a, b", 1);
    RK_OK(&f, w);
    FX_OUT(&f, w, 0, TGC_FLOAT32, "?");
    int32_t cat = fx_op(&f, "cat", "Concat", "a, b, a, b, a", 1);
    fx_attr_int(&f, cat, "axis", 0);
    RK_OK(&f, cat);
    FX_OUT(&f, cat, 0, TGC_FLOAT32, "?");
    /* MatMul of two unknown ranks: 81 pairs, ranks 0 to 8 among the valid. */
    int32_t mm = fx_op(&f, "mm", "MatMul", "a, b", 1);
    RK_OK(&f, mm);
    FX_OUT(&f, mm, 0, TGC_FLOAT32, "?");
    fx_end(&f);
}

/* No rank makes the node valid (Gemm's B must have rank 2; here it has
 * 3): Gemm's own error about B, at a rank where A would do, then a note
 * naming the input of unknown rank. A dtype error is reported as it would
 * be at any rank. */
static void test_no_valid_rank(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "?");
    fx_input(&f, "w3", TGC_FLOAT32, "3, 2, 2");
    fx_input(&f, "i", TGC_INT64, "3, 2");
    int32_t gemm = fx_op(&f, "gemm", "Gemm", "x, w3", 1);
    CU_ASSERT_EQUAL(tgc_graph_infer_node(f.g, gemm, f.d), TGC_ERR_INVALID);
    size_t n = tgc_diags_count(f.d);
    CU_ASSERT_FATAL(n == 2);
    CU_ASSERT_EQUAL(tgc_diag_severity(f.d, 0), TGC_SEV_ERROR);
    CU_ASSERT_STRING_EQUAL(tgc_diag_message(f.d, 0), "node 'gemm' (Gemm): input 1 has shape [3, 2, 2]; Gemm needs "
                                                     "rank 2");
    CU_ASSERT_EQUAL(tgc_diag_line(f.d, 0), gemm + 1);
    CU_ASSERT_EQUAL(tgc_diag_column(f.d, 0), 21); /* input 1 */
    CU_ASSERT_EQUAL(tgc_diag_severity(f.d, 1), TGC_SEV_NOTE);
    CU_ASSERT_STRING_EQUAL(tgc_diag_rule(f.d, 1), "rank-unknown");
    CU_ASSERT_PTR_NOT_NULL(strstr(tgc_diag_message(f.d, 1), "input 0 has a rank known only at run time, and no rank "
                                                            "from 0 to 8 makes the node valid"));
    CU_ASSERT_EQUAL(tgc_diag_column(f.d, 1), 21);
    CU_ASSERT_EQUAL(fx_node(&f, gemm)->outputs[0].dtype, TGC_DTYPE_INVALID); /* nothing half-inferred */
    /* float32 + int64 fails at every rank, for its dtypes. */
    int32_t add = fx_op(&f, "add", "Add", "x, i", 1);
    CU_ASSERT_EQUAL(tgc_graph_infer_node(f.g, add, f.d), TGC_ERR_INVALID);
    CU_ASSERT_STRING_EQUAL(tgc_diag_rule(f.d, tgc_diags_count(f.d) - 2), "dtype-mismatch");
    fx_end(&f);
}

/* The probe symbols never reach the graph: every dim an output has is a
 * user's symbol, a number or a fresh unk__K. */
static void test_no_probe_symbol_leaks(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "?");
    fx_input(&f, "y", TGC_FLOAT32, "N, 4");
    int32_t t = fx_op(&f, "t", "Transpose", "x", 1);
    RK_OK(&f, t);
    int32_t u = fx_op(&f, "u", "Add", "y, x", 1);
    RK_OK(&f, u);
    int32_t g = fx_op(&f, "g", "Gemm", "y, x", 1);
    RK_OK(&f, g);
    FX_OUT(&f, g, 0, TGC_FLOAT32, "[N, unk__0]");
    const int32_t ids[] = {t, u, g};
    for (int i = 0; i < 3; i++) {
        const tgc_shape *s = &fx_node(&f, ids[i])->outputs[0].shape;
        for (int d = 0; d < s->rank; d++)
            if (!tgc_dim_known(s->dims[d])) CU_ASSERT_NOT_EQUAL(f.g->symbols[s->dims[d].sym][0], '?');
    }
    fx_end(&f);
}

/* Every registered op (but those with subgraphs or required attributes,
 * which the loader would refuse without them), with inputs of unknown rank
 * of a float and of an integer dtype, at its fewest inputs and at up to 3
 * (more when it needs more): inference tries each rank 0..8 on each, so
 * every op's inference meets every rank, scalars included. Whatever the verdict, nothing may read
 * outside a shape (the sanitizer builds run this) and an output it gives
 * has a dtype. */
static void test_every_op_over_unknown_ranks(void) {
    size_t count = 0;
    const tgc_op_def *const *ops = tgc_op_all(&count);
    const tgc_dtype dtypes[] = {TGC_FLOAT32, TGC_INT64};
    int ran = 0;
    for (size_t i = 0; i < count; i++) {
        const tgc_op_def *op = ops[i];
        bool skip = op->infer == NULL;
        for (const tgc_attr_def *a = op->attrs; !skip && a != NULL && a->name != NULL; a++)
            skip = a->required || a->type == TGC_ATTR_GRAPH;
        if (skip) continue;
        int fewest = op->min_inputs, most = op->max_inputs < 0 || op->max_inputs > 3 ? 3 : op->max_inputs;
        if (most < fewest) most = fewest; /* more than 3: one shared rank (tgc_infer_over_ranks) */
        int n_out = op->min_outputs > 0 ? op->min_outputs : 1;
        for (int d = 0; d < 2; d++)
            for (int n_in = fewest; n_in <= most; n_in += most > fewest ? most - fewest : 1) {
                fx f = fx_begin();
                char inputs[256] = "";
                for (int k = 0; k < n_in; k++) {
                    char name[16];
                    snprintf(name, sizeof name, "x%d", k);
                    fx_input(&f, name, dtypes[d], "?");
                    strcat(inputs, k ? ", " : "");
                    strcat(inputs, name);
                }
                int32_t id = fx_op(&f, "n", op->name, inputs, n_out);
                tgc_status st = tgc_graph_infer_node(f.g, id, f.d);
                CU_ASSERT(st == TGC_OK || st == TGC_ERR_INVALID);
                for (int k = 0; st == TGC_OK && k < n_out; k++)
                    CU_ASSERT_NOT_EQUAL(fx_node(&f, id)->outputs[k].dtype, TGC_DTYPE_INVALID);
                fx_end(&f);
                ran++;
                if (most == fewest) break;
            }
    }
    CU_ASSERT(ran > 200);
}

TGC_TEST_MAIN("graph/infer_rank",
              {"rank_follows_input", test_rank_follows_input},
              {"rank_fixed_by_op", test_rank_fixed_by_op},
              {"one_valid_rank_decides", test_one_valid_rank_decides},
              {"several_unknown_inputs", test_several_unknown_inputs},
              {"no_valid_rank", test_no_valid_rank},
              {"no_probe_symbol_leaks", test_no_probe_symbol_leaks},
              {"every_op_over_unknown_ranks", test_every_op_over_unknown_ranks})
