/* Every op's inference function against many random, mostly invalid,
 * nodes: random input counts, dtypes, ranks (unknown included), symbolic
 * and zero dims, compile-time values and attributes. Whatever the node, the
 * function must either fill every output with a well-formed dtype, shape
 * and value, or report exactly one error naming the node; under the
 * sanitizers it must never read or write out of bounds. Deterministic (a
 * fixed seed). */
#include "tests/graph/infer_fixture.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n) {
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33) % n;
}

/* Mostly small dims and symbols; now and then one huge enough to overflow
 * careless arithmetic (the sanitizers would see it). */
static void random_dims(char *buf, size_t size, int rank) {
    static const char *const dims[] = {"0", "1", "1", "2", "3", "4", "6", "N", "M"};
    static const char *const huge[] = {"3037000500", "9223372036854775807"};
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < rank; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "",
                                 rnd(40) ? dims[rnd(9)] : huge[rnd(2)]);
}

/* A random graph input (or constant with a value) named `name`; dt is the
 * dtype, or TGC_DTYPE_INVALID for a random one. */
static void random_input(fx *f, const char *name, tgc_dtype dt, int min_rank) {
    static const tgc_dtype dts[] = {TGC_FLOAT32, TGC_FLOAT32, TGC_INT64, TGC_INT64,
                                    TGC_INT32,   TGC_FLOAT16, TGC_UINT8, TGC_BOOL};
    if (dt == TGC_DTYPE_INVALID) dt = dts[rnd(8)];
    int rank = min_rank + (int)rnd((uint32_t)(6 - min_rank)); /* min_rank .. 5, -1 unknown */
    char shape[128];
    if (rank < 0) {
        snprintf(shape, sizeof shape, "?");
    } else {
        random_dims(shape, sizeof shape, rank);
    }
    bool int_dt = dt == TGC_INT64 || dt == TGC_INT32;
    if (int_dt && rank <= 1 && rnd(5) < 3) {
        int n = rank == 0 ? 1 : (int)rnd(6);
        if (rank == 1) snprintf(shape, sizeof shape, "%d", n);
        char value[128];
        size_t used = 0;
        value[0] = '\0';
        static const char *const els[] = {"-3", "-1", "0", "1", "2", "3", "5", "N",
                                          "9223372036854775807", "-9223372036854775808"};
        for (int i = 0; i < n; i++)
            used += (size_t)snprintf(value + used, sizeof value - used, "%s%s", i ? ", " : "", els[rnd(10)]);
        fx_value(f, name, dt, shape, value);
    } else {
        fx_input(f, name, dt, shape);
    }
}

static void random_attr(fx *f, int32_t id, const tgc_attr_def *def) {
    static const char *const strings[] = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", "bogus"};
    static const int64_t codes[] = {1, 10, 6, 7, 2, 9, 11, 0};
    switch (def->type) {
    case TGC_ATTR_INT:
        fx_attr_int(f, id, def->name,
                    strcmp(def->name, "to") == 0 ? codes[rnd(8)]
                    : rnd(20)                    ? (int64_t)rnd(8) - 3
                                                 : (rnd(2) ? INT64_MAX : INT64_MIN));
        break;
    case TGC_ATTR_FLOAT: fx_attr_float(f, id, def->name, (double)rnd(100) / 10.0); break;
    case TGC_ATTR_STRING: fx_attr_string(f, id, def->name, strings[rnd(5)]); break;
    case TGC_ATTR_GRAPH: break; /* subgraphs: tests/graph/test_subgraphs.c */
    case TGC_ATTR_INTS:
    case TGC_ATTR_FLOATS: {
        /* Mostly short lists of small positive numbers (kernel sizes,
         * strides, axes), sometimes anything. */
        char list[128];
        size_t used = 0;
        list[0] = '\0';
        int n = (int)rnd(7);
        for (int i = 0; i < n; i++) {
            long long v = rnd(5) ? (int)rnd(3) + 1 : rnd(8) ? (int)rnd(9) - 4 : rnd(2) ? INT64_MAX : INT64_MIN;
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%lld", i ? ", " : "", v);
        }
        fx_attr_list(f, id, def->name, list, def->type == TGC_ATTR_FLOATS);
        break;
    }
    case TGC_ATTR_TENSOR: {
        static const tgc_dtype dts[] = {TGC_INT64, TGC_INT32, TGC_FLOAT32};
        int n = (int)rnd(3);
        char shape[8], values[32];
        snprintf(shape, sizeof shape, "%d", n);
        snprintf(values, sizeof values, "%s", n == 0 ? "" : n == 1 ? "4" : "4, -2");
        fx_attr_tensor(f, id, def->name, dts[rnd(3)], shape, values);
        break;
    }
    case TGC_ATTR_STRINGS: break;
    }
}

/* The outcome of one inference is well formed (see the file comment). */
static void check_outcome(fx *f, int32_t id, tgc_status st, size_t diags_before) {
    const tgc_node *n = fx_node(f, id);
    if (st != TGC_OK) {
        CU_ASSERT_EQUAL(st, TGC_ERR_INVALID);
        CU_ASSERT_EQUAL(tgc_diags_count(f->d), diags_before + 1);
        if (tgc_diags_count(f->d) == diags_before + 1) {
            char prefix[96];
            snprintf(prefix, sizeof prefix, "node '%s' (%s): ", n->name, n->op->name);
            const char *msg = tgc_diag_message(f->d, diags_before);
            CU_ASSERT(strncmp(msg, prefix, strlen(prefix)) == 0);
            CU_ASSERT(tgc_diag_rule(f->d, diags_before)[0] != '\0');
        }
        return;
    }
    CU_ASSERT_EQUAL(tgc_diags_count(f->d), diags_before);
    for (int k = 0; k < n->n_outputs; k++) {
        const tgc_tensor_info *o = &n->outputs[k];
        CU_ASSERT(o->dtype >= 0 && o->dtype < TGC_DTYPE_COUNT);
        CU_ASSERT(o->shape.rank >= TGC_RANK_UNKNOWN && o->shape.rank <= TGC_MAX_RANK);
        for (int i = 0; i < o->shape.rank; i++) {
            tgc_dim d = o->shape.dims[i];
            CU_ASSERT(tgc_dim_known(d) ? d.v >= 0 : d.sym >= 0 && d.sym < f->g->n_symbols);
        }
        if (o->value_len >= 0) {
            CU_ASSERT(o->dtype == TGC_INT32 || o->dtype == TGC_INT64);
            CU_ASSERT(o->value_len <= TGC_MAX_VALUE_LEN);
            CU_ASSERT(o->shape.rank == 0 ? o->value_len == 1
                                         : o->shape.rank == 1 && tgc_dim_is(o->shape.dims[0], o->value_len));
        }
    }
}

static void test_random_nodes(void) {
    size_t count;
    const tgc_op_def *const *ops = tgc_op_all(&count);
    int ok = 0, failed = 0;
    for (size_t o = 0; o < count; o++) {
        const tgc_op_def *op = ops[o];
        for (int trial = 0; trial < 600; trial++) {
            fx f = fx_begin();
            /* Half the nodes are coherent: one dtype, a first input of rank >= 2. */
            bool coherent = rnd(2);
            tgc_dtype dt = coherent ? (rnd(3) ? TGC_FLOAT32 : TGC_INT64) : TGC_DTYPE_INVALID;
            int max_in = op->max_inputs < 0 ? op->min_inputs + 3 : op->max_inputs;
            int n_in = op->min_inputs + (int)rnd((uint32_t)(max_in - op->min_inputs + 1));
            char inputs[256];
            size_t used = 0;
            inputs[0] = '\0';
            for (int i = 0; i < n_in; i++) {
                char name[16] = "";
                bool omit = i >= op->min_inputs && op->max_inputs >= 0 && rnd(4) == 0;
                if (!omit) {
                    snprintf(name, sizeof name, "in%d", i);
                    random_input(&f, name, i > 0 && coherent && rnd(4) == 0 ? TGC_INT64 : dt,
                                 coherent && i == 0 ? 2 : -1);
                }
                used += (size_t)snprintf(inputs + used, sizeof inputs - used, "%s%s", i ? ", " : "", name);
            }
            int max_out = op->max_outputs < 0 ? op->min_outputs + 4 : op->max_outputs;
            int n_out = op->min_outputs + (int)rnd((uint32_t)(max_out - op->min_outputs + 1));
            int32_t id = fx_op(&f, "node", op->name, inputs, n_out);
            for (const tgc_attr_def *a = op->attrs; a->name != NULL; a++)
                if (a->required || rnd(2)) random_attr(&f, id, a);
            size_t before = tgc_diags_count(f.d);
            tgc_status st = fx_infer(&f, id);
            check_outcome(&f, id, st, before);
            if (st == TGC_OK) ok++;
            else failed++;
            fx_end(&f);
        }
    }
    /* Both outcomes occur often: the generator reaches past the first checks. */
    CU_ASSERT(ok > 1000);
    CU_ASSERT(failed > 1000);
}

TGC_TEST_MAIN("graph/infer_random", {"random_nodes", test_random_nodes})
