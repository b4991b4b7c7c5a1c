/* Every registered op's shape function, fed dims and values near 2^31,
 * 2^32, 2^62 and 2^63 - 1 (and mixes whose products pass 2^63), with
 * plausible and extreme attributes: each call ends in TGC_OK or in
 * TGC_ERR_INVALID with a message, never a crash or undefined behaviour (run
 * under ASan and UBSan by `make test`), and no output it accepts has an
 * element count or byte size that does not fit (support/checked.h).
 * Each case runs twice: at compile time (graph infos, fresh symbols) and
 * as the executor runs it (concrete infos, tgc_infer_ctx.runtime). */
#include "tests/graph/infer_fixture.h"

#include "graph/op_registry.h"
#include "graph/ops.h"
#include "support/checked.h"

#include <CUnit/CUnit.h>

#define SYM INT64_MIN /* in a pattern: the symbol N */
#define P2(k) ((int64_t)1 << (k))

typedef struct pattern {
    int rank;
    int64_t dims[TGC_MAX_RANK];
} pattern;

/* A fixture graph without a tensor limit (--load-limits tensor=): the
 * overflow checks must hold whatever a user allows. */
static fx fx_unlimited(void) {
    fx f = fx_begin();
    f.g->limits.tensor_bytes = INT64_MAX;
    return f;
}

static const int64_t bigs[] = {P2(31) - 1, P2(31), P2(32) - 1, P2(32), P2(62), P2(62) + 1, INT64_MAX};
#define N_BIGS ((int)(sizeof bigs / sizeof bigs[0]))

/* The shapes tried for input 0 (and, by mode, for the others). */
static int make_patterns(pattern *out) {
    int n = 0;
    for (int i = 0; i < N_BIGS; i++) {
        int64_t b = bigs[i];
        out[n++] = (pattern){1, {b}};
        out[n++] = (pattern){2, {b, b}};
        out[n++] = (pattern){4, {1, 3, b, b}};
        out[n++] = (pattern){4, {b, 3, 8, 8}};
        out[n++] = (pattern){4, {2, 3, b, 4}};
        out[n++] = (pattern){3, {0, b, b}};
        out[n++] = (pattern){3, {SYM, b, 2}};
        out[n++] = (pattern){8, {b, 1, 1, 1, 1, 1, 1, b}};
    }
    /* Products just past 2^63 - 1 from dims that fit one by one. */
    out[n++] = (pattern){4, {65536, 65536, 65536, 65536}};
    out[n++] = (pattern){2, {3037000500, 3037000500}};
    out[n++] = (pattern){3, {P2(31), P2(31), 2}};
    out[n++] = (pattern){3, {P2(21), P2(21), P2(21)}};
    out[n++] = (pattern){4, {P2(20), P2(20), P2(20), 4}}; /* fits as uint8, not as float32 */
    out[n++] = (pattern){6, {1, 171798691841, 3, 3, 7561793, 4}};
    out[n++] = (pattern){4, {1, 9, 4, 4}};                 /* small: against huge values */
    return n;
}

/* How inputs 1.. are made. */
enum mode {
    SAME,       /* input 0's dtype and shape */
    VALUE,      /* int64 [rank] whose compile-time value is input 0's dims */
    VALUE_NEG,  /* the same with -1 in its last place (Reshape's inferred dim) */
    SCALARS,    /* every input, 0 included, an int64 scalar with a value (Range) */
    SCALARS_NEG,
    N_MODES
};

/* Attribute sets: only the required ones (plausible values), or every INT
 * and INTS attribute of the schema set to an extreme. */
enum attrs { REQUIRED, INT_MAX32, INT_MAX64, INT_MIN64, N_ATTRS };

static int32_t add_tensor(fx *f, const char *name, tgc_dtype dt, int rank, const int64_t *dims, int n_value,
                          const int64_t *value) {
    int32_t id = fx_input(f, name, dt, "");
    tgc_tensor_info *o = &fx_node(f, id)->outputs[0];
    o->shape.rank = rank;
    for (int i = 0; i < rank; i++)
        o->shape.dims[i] = dims[i] == SYM ? tgc_dim_sym(tgc_graph_symbol(f->g, "N", false)) : tgc_dim_of(dims[i]);
    if (n_value >= 0) {
        tgc_dim v[TGC_MAX_VALUE_LEN];
        for (int i = 0; i < n_value; i++) v[i] = tgc_dim_of(value[i]);
        CU_ASSERT_FATAL(tgc_info_set_value(o, n_value, v) == TGC_OK);
    }
    return id;
}

/* Sets node id's attributes for `set`, given input 0's rank. */
static void set_attrs(fx *f, int32_t id, const tgc_op_def *op, enum attrs set, int rank) {
    int spatial = rank > 2 ? rank - 2 : 1;
    for (const tgc_attr_def *a = op->attrs; a != NULL && a->name != NULL; a++) {
        if (set == REQUIRED && !a->required) continue;
        if (a->type == TGC_ATTR_INT) {
            int64_t v = set == INT_MAX32 ? INT32_MAX : set == INT_MAX64 ? INT64_MAX : set == INT_MIN64 ? INT64_MIN : 0;
            if (set == REQUIRED) v = strcmp(a->name, "to") == 0 ? TGC_FLOAT32 : 0;
            fx_attr_int(f, id, a->name, v);
        } else if (a->type == TGC_ATTR_INTS) {
            int len = strcmp(a->name, "pads") == 0 ? 2 * spatial
                      : strcmp(a->name, "perm") == 0 || strcmp(a->name, "axes") == 0 ? (rank > 0 ? rank : 1)
                                                                                      : spatial;
            int64_t v = set == INT_MAX32 ? INT32_MAX : set == INT_MAX64 ? INT64_MAX : set == INT_MIN64 ? INT64_MIN : 3;
            tgc_attr *t = fx_attr(f, id, a->name, TGC_ATTR_INTS);
            t->n = (size_t)len;
            t->ints = tgc_calloc((size_t)len + 1, sizeof *t->ints);
            CU_ASSERT_PTR_NOT_NULL_FATAL(t->ints);
            for (int i = 0; i < len; i++) t->ints[i] = v;
        } else if (a->type == TGC_ATTR_STRING && a->required) {
            fx_attr_string(f, id, a->name, "NOTSET");
        }
    }
}

typedef struct tally {
    long cases, ok, invalid;
} tally;

/* Checks what one inference call gave. */
static void check_result(const char *op, const tgc_tensor_info *outs, int n_outputs, tgc_status s, size_t n_diags,
                         bool runtime, tally *t) {
    t->cases++;
    if (s != TGC_OK && s != TGC_ERR_INVALID) {
        fprintf(stderr, "\n%s: status %d\n", op, (int)s);
        CU_FAIL("an op's inference returned neither TGC_OK nor TGC_ERR_INVALID");
        return;
    }
    if (s == TGC_ERR_INVALID) {
        t->invalid++;
        if (!runtime && n_diags == 0) {
            fprintf(stderr, "\n%s: TGC_ERR_INVALID without a message\n", op);
            CU_FAIL("an op's inference failed without a message");
        }
        return;
    }
    t->ok++;
    for (int k = 0; k < n_outputs; k++) {
        if (outs[k].dtype == TGC_DTYPE_INVALID) continue; /* an optional output it does not set */
        size_t elem = tgc_dtype_size(outs[k].dtype);
        if (!tgc_shape_size_fits(&outs[k].shape, elem)) {
            fprintf(stderr, "\n%s: output %d accepted with a size that does not fit\n", op, k);
            CU_FAIL("an op's inference accepted an output whose size does not fit");
        }
    }
}

/* One case: op with n_inputs inputs made by `mode` from pattern p. */
static void run_case(const tgc_op_def *op, int n_inputs, const pattern *p, tgc_dtype dt, enum mode mode,
                     enum attrs set, tally *t) {
    fx f = fx_unlimited();
    char inputs[512] = "";
    size_t len = 0;
    for (int i = 0; i < n_inputs; i++) {
        char name[16];
        snprintf(name, sizeof name, "i%d", i);
        if (mode == SCALARS || mode == SCALARS_NEG) {
            int64_t v = p->dims[i % p->rank] == SYM ? 7 : p->dims[i % p->rank];
            if (mode == SCALARS_NEG && i != 1) v = -v;
            if (i == 2) v = mode == SCALARS ? 1 : -1; /* Range's delta */
            add_tensor(&f, name, TGC_INT64, 0, NULL, 1, &v);
        } else if (i == 0 || mode == SAME) {
            add_tensor(&f, name, i == 0 || mode == SAME ? dt : TGC_INT64, p->rank, p->dims, -1, NULL);
        } else {
            int64_t value[TGC_MAX_RANK], len1 = p->rank;
            for (int k = 0; k < p->rank; k++) value[k] = p->dims[k] == SYM ? 5 : p->dims[k];
            if (mode == VALUE_NEG) value[p->rank - 1] = -1;
            add_tensor(&f, name, TGC_INT64, 1, &len1, p->rank, value);
        }
        len += (size_t)snprintf(inputs + len, sizeof inputs - len, "%s%s", i ? ", " : "", name);
    }
    int n_outputs = op->min_outputs > 0 ? op->min_outputs : 1;
    if (op->max_outputs != op->min_outputs) n_outputs = op->max_outputs > 0 ? op->max_outputs : 2;
    int32_t id = fx_op(&f, "node", op->name, inputs, n_outputs);
    set_attrs(&f, id, op, set, p->rank);
    tgc_node *n = fx_node(&f, id);

    /* At compile time, over the graph. */
    tgc_status s = fx_infer(&f, id);
    check_result(op->name, n->outputs, n->n_outputs, s, tgc_diags_count(f.d), false, t);

    /* As the executor runs it: concrete infos (a symbol bound to 5). */
    tgc_tensor_info ins[16], outs[16]; /* QLinearConv has 9 inputs */
    tgc_dim values[16][TGC_MAX_VALUE_LEN];
    for (int i = 0; i < n_inputs; i++) {
        ins[i] = fx_node(&f, n->inputs[i].node)->outputs[0];
        for (int d = 0; d < ins[i].shape.rank; d++)
            if (!tgc_dim_known(ins[i].shape.dims[d])) ins[i].shape.dims[d] = tgc_dim_of(5);
        if (ins[i].value_len > 0) {
            memcpy(values[i], ins[i].value, (size_t)ins[i].value_len * sizeof(tgc_dim));
            ins[i].value = values[i];
        }
    }
    for (int k = 0; k < n_outputs; k++) {
        memset(&outs[k], 0, sizeof outs[k]);
        outs[k].dtype = TGC_DTYPE_INVALID;
        outs[k].value_len = -1;
    }
    tgc_infer_ctx c = {.graph = f.g, .node = n, .diags = NULL, .input_infos = ins, .output_infos = outs,
                       .runtime = true};
    s = op->infer(&c);
    check_result(op->name, outs, n_outputs, s, 0, true, t);
    for (int k = 0; k < n_outputs; k++) tgc_info_clear_value(&outs[k]);
    fx_end(&f);
}

static void test_every_op_on_huge_dims(void) {
    pattern patterns[128];
    int n_patterns = make_patterns(patterns);
    size_t n_ops;
    const tgc_op_def *const *ops = tgc_op_all(&n_ops);
    static const tgc_dtype dtypes[] = {TGC_FLOAT32, TGC_INT64, TGC_UINT8, TGC_BOOL};
    tally t = {0, 0, 0};
    for (size_t o = 0; o < n_ops; o++) {
        const tgc_op_def *op = ops[o];
        int arities[3], n_arities = 0;
        int hi = op->max_inputs < 0 ? 5 : op->max_inputs;
        arities[n_arities++] = op->min_inputs;
        if (hi != op->min_inputs) arities[n_arities++] = hi;
        bool has_attrs = op->attrs != NULL && op->attrs[0].name != NULL;
        for (int a = 0; a < n_arities; a++)
            for (int p = 0; p < n_patterns; p++)
                for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++)
                    for (int m = 0; m < N_MODES; m++) {
                        if (arities[a] < 2 && m != SAME && m != SCALARS) continue; /* input 0 alone */
                        if ((m == SCALARS || m == SCALARS_NEG) && d > 0) continue; /* no dtype of its own */
                        for (int s = 0; s < (has_attrs ? N_ATTRS : 1); s++)
                            run_case(op, arities[a], &patterns[p], dtypes[d], (enum mode)m, (enum attrs)s, &t);
                    }
    }
    CU_ASSERT(t.cases > 10000);
    CU_ASSERT(t.ok > 0 && t.invalid > 0);
    printf("\n  %zu ops, %ld cases: %ld accepted, %ld refused with a message\n", n_ops, t.cases, t.ok, t.invalid);
}

/* The cases of issue 21, by name. */
static void test_reshape_whose_target_overflows(void) {
    fx f = fx_unlimited();
    fx_input(&f, "x", TGC_FLOAT32, "1, 9, 4, 4");
    fx_value(&f, "target", TGC_INT64, "6", "1, 171798691841, 3, 3, 7561793, 4");
    int32_t r = fx_op(&f, "r", "Reshape", "x, target", 1);
    CU_ASSERT_EQUAL(fx_infer(&f, r), TGC_ERR_INVALID);
    CU_ASSERT_EQUAL_FATAL(tgc_diags_count(f.d), 1);
    CU_ASSERT_STRING_EQUAL(tgc_diag_rule(f.d, 0), "size-overflow");
    CU_ASSERT_PTR_NOT_NULL(strstr(tgc_diag_message(f.d, 0), "cannot reshape [1, 9, 4, 4] to [1, 171798691841"));
    fx_end(&f);
}

static void test_output_whose_bytes_overflow_names_the_inputs(void) {
    fx f = fx_unlimited();
    /* 2^61 float32 elements: the count fits in int64, the bytes do not. */
    fx_input(&f, "a", TGC_FLOAT32, "2305843009213693952, 1");
    fx_input(&f, "b", TGC_FLOAT32, "1, 1");
    int32_t y = fx_op(&f, "y", "Add", "a, b", 1);
    CU_ASSERT_EQUAL(fx_infer(&f, y), TGC_ERR_INVALID);
    CU_ASSERT_EQUAL_FATAL(tgc_diags_count(f.d), 1);
    CU_ASSERT_STRING_EQUAL(tgc_diag_rule(f.d, 0), "size-overflow");
    CU_ASSERT_PTR_NOT_NULL(strstr(tgc_diag_message(f.d, 0), "node 'y' (Add): output 0 would have shape "
                                                            "[2305843009213693952, 1] (float32)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(tgc_diag_message(f.d, 0), "the inputs have shapes [2305843009213693952, 1] and [1, 1]"));
    fx_end(&f);
}

static void test_symbols_do_not_excuse_a_concrete_overflow(void) {
    fx f = fx_unlimited();
    fx_input(&f, "x", TGC_FLOAT32, "N, 4611686018427387904");
    int32_t y = fx_op(&f, "y", "Relu", "x", 1);
    CU_ASSERT_EQUAL(fx_infer(&f, y), TGC_ERR_INVALID);
    CU_ASSERT_STRING_EQUAL(tgc_diag_rule(f.d, 0), "size-overflow");
    fx_end(&f);
    /* The same count as uint8 fits whatever N is bound to: the planner
     * checks the bound sizes. */
    f = fx_unlimited();
    fx_input(&f, "x", TGC_UINT8, "N, 4611686018427387904");
    y = fx_op(&f, "y", "Identity", "x", 1);
    CU_ASSERT_EQUAL(fx_infer(&f, y), TGC_OK);
    fx_end(&f);
}

/* With the default limits, a tensor of 2^62 bytes is refused before any
 * sum of such tensors can overflow. */
static void test_default_tensor_limit(void) {
    fx f = fx_begin();
    fx_input(&f, "a", TGC_UINT8, "4611686018427387904");
    int32_t y = fx_op(&f, "y", "Identity", "a", 1);
    CU_ASSERT_EQUAL(fx_infer(&f, y), TGC_ERR_INVALID);
    CU_ASSERT_STRING_EQUAL(tgc_diag_rule(f.d, 0), "over-limit");
    CU_ASSERT_PTR_NOT_NULL(strstr(tgc_diag_message(f.d, 0), "above the limit of 68719476736"));
    fx_end(&f);
}

static void test_concat_and_split_sums(void) {
    fx f = fx_unlimited();
    fx_input(&f, "a", TGC_UINT8, "4611686018427387904");
    fx_input(&f, "b", TGC_UINT8, "4611686018427387904");
    int32_t y = fx_op(&f, "y", "Concat", "a, b", 1);
    fx_attr_int(&f, y, "axis", 0);
    CU_ASSERT_EQUAL(fx_infer(&f, y), TGC_ERR_INVALID);
    CU_ASSERT_STRING_EQUAL(tgc_diag_rule(f.d, 0), "size-overflow");
    fx_value(&f, "sizes", TGC_INT64, "2", "9223372036854775807, 1");
    int32_t s = fx_op(&f, "s", "Split", "a, sizes", 2);
    CU_ASSERT_EQUAL(fx_infer(&f, s), TGC_ERR_INVALID);
    CU_ASSERT_STRING_EQUAL(tgc_diag_rule(f.d, 1), "size-overflow");
    fx_end(&f);
}

static void test_range_of_every_int64(void) {
    fx f = fx_unlimited();
    fx_value(&f, "lo", TGC_INT64, "", "-9223372036854775807");
    fx_value(&f, "hi", TGC_INT64, "", "9223372036854775807");
    fx_value(&f, "one", TGC_INT64, "", "1");
    int32_t r = fx_op(&f, "r", "Range", "lo, hi, one", 1);
    CU_ASSERT_EQUAL(fx_infer(&f, r), TGC_ERR_INVALID);
    CU_ASSERT_STRING_EQUAL(tgc_diag_rule(f.d, 0), "size-overflow");
    fx_end(&f);
}

TGC_TEST_MAIN("infer_overflow",
              {"every op on huge dims: a clean status, no overflowing output", test_every_op_on_huge_dims},
              {"Reshape to a target whose count overflows (issue 21)", test_reshape_whose_target_overflows},
              {"an output whose bytes overflow names the inputs", test_output_whose_bytes_overflow_names_the_inputs},
              {"symbols do not excuse a concrete overflow", test_symbols_do_not_excuse_a_concrete_overflow},
              {"the default tensor limit", test_default_tensor_limit},
              {"Concat and Split sums", test_concat_and_split_sums},
              {"Range over every int64", test_range_of_every_int64})
