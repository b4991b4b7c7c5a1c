/* _FusedElementwise on the gpu (devices/opencl/kernels_fused_cl.c): each
 * program's generated kernel against the unfused gpu kernels run step by
 * step (ew_<Op>_f32_{c,s,b} and the unary ones, through their host sides),
 * within MAX_ULP (below); one program against numpy's values; the per-device cache of
 * built kernels (a second node with the same program and input kinds
 * compiles nothing, nor does a second device open, through the disk
 * cache); bad programs and a source that does not compile fail cleanly;
 * and a graph optimized for gpu0 runs its fused group with the unfused
 * graph's values.
 *
 * Without an OpenCL device every test passes without checking (as the
 * other gpu suites do). */
#include "tests/devices/gpu_fixture.h"

#include "devices/opencl/kernels_fused_cl.h"
#include "graph/elementwise.h"
#include "graph/graph.h"
#include "support/half.h"
#include "tgc.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_IN 4
/* The fused kernel runs the rows' float8 forms where the unfused kernels
 * run the scalar ones: PoCL's vector exp, tanh, erf, log, atan, acos round
 * a few results differently (measured: at most 3 ulp apart through the
 * programs below; test_each_row has each row's count with TGC_TEST_VERBOSE
 * set). An element passes within MAX_ULP ulp of the unfused value, or
 * within MAX_ULP ulp of max(1, |value|) absolutely where a row cancels
 * (Gelu's 1 + erf(x / sqrt 2) for x < -2 leaves a tiny result whose ulps
 * say nothing: 81 ulp there, 1e-7 absolutely). */
#define MAX_ULP 4
#define MAX_STEPS 64

/* A step: a row, its operands (input index, or n_in + k for step k's
 * result; -1 unused) and its parameters P0..P2. */
typedef struct step {
    const char *op;
    int a, b;
    double p[3];
} step;

/* A program with its inputs' shapes (input 0 has the output's). */
typedef struct program {
    step steps[MAX_STEPS];
    int n_steps, n_in;
    int rank[MAX_IN];
    int64_t dims[MAX_IN][4];
} program;

static int64_t numel_of(int rank, const int64_t *dims) {
    int64_t n = 1;
    for (int d = 0; d < rank; d++) n *= dims[d];
    return n;
}

static tgc_value gpu_tensor(gk_dev *d, int rank, const int64_t *dims, const float *data) {
    tgc_value v = {.dtype = TGC_FLOAT32, .rank = rank};
    memcpy(v.dims, dims, (size_t)rank * sizeof *dims);
    size_t nbytes = tgc_value_nbytes(&v);
    CU_ASSERT_EQUAL_FATAL(tgc_buffer_alloc(d->gpu, nbytes, &v.buf), TGC_OK);
    if (data != NULL && nbytes > 0)
        CU_ASSERT_EQUAL_FATAL(d->gpu->ops->copy_from_host(d->gpu, v.buf->mem, 0, data, nbytes), TGC_OK);
    return v;
}

static float *read_back(gk_dev *d, const tgc_value *v) {
    size_t nbytes = tgc_value_nbytes(v);
    float *out = tgc_malloc(nbytes + 4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    if (nbytes > 0) CU_ASSERT_EQUAL_FATAL(d->gpu->ops->copy_to_host(d->gpu, out, v->buf->mem, 0, nbytes), TGC_OK);
    return out;
}

static tgc_status call(gk_dev *d, const tgc_kernel_def *def, const tgc_node *node, const tgc_value *in, int n_in,
                       tgc_value *out, char *err, size_t err_size) {
    err[0] = '\0';
    tgc_kernel_ctx c = {.node = node, .device = d->gpu, .inputs = in, .n_inputs = n_in, .outputs = out,
                        .n_outputs = 1, .error = err, .error_size = err_size, .def = def};
    return def->fn(&c);
}

/* Runs the program as one _FusedElementwise node on gpu inputs `in`, into
 * y (the output's shape, allocated by the caller). */
static tgc_status run_fused(gk_dev *d, const program *p, const tgc_value *in, tgc_value *y, char *err,
                            size_t err_size) {
    char *ops[MAX_STEPS];
    int64_t operands[2 * MAX_STEPS];
    double params[3 * MAX_STEPS];
    for (int k = 0; k < p->n_steps; k++) {
        ops[k] = (char *)p->steps[k].op;
        operands[2 * k] = p->steps[k].a;
        operands[2 * k + 1] = p->steps[k].b;
        for (int j = 0; j < 3; j++) params[3 * k + j] = p->steps[k].p[j];
    }
    size_t n = (size_t)p->n_steps;
    tgc_attr attrs[3] = {{.name = "ops", .type = TGC_ATTR_STRINGS, .strings = ops, .n = n},
                         {.name = "operands", .type = TGC_ATTR_INTS, .ints = operands, .n = 2 * n},
                         {.name = "params", .type = TGC_ATTR_FLOATS, .floats = params, .n = 3 * n}};
    tgc_node node = {.name = "fused", .kind = TGC_NODE_OP, .op_name = "_FusedElementwise", .attrs = attrs,
                     .n_attrs = 3, .n_inputs = p->n_in, .n_outputs = 1};
    const tgc_kernel_def *def = tgc_kernel_find("_FusedElementwise", TGC_DEVICE_GPU, TGC_FLOAT32);
    CU_ASSERT_PTR_NOT_NULL_FATAL(def);
    return call(d, def, &node, in, p->n_in, y, err, err_size);
}

/* Runs the program op by op with the unfused gpu kernels: each step's
 * node gets the row's attributes from its parameters (Clip its bounds as
 * host-memory inputs), its output the broadcast of its operands' shapes.
 * Returns the last step's value (the caller releases it). */
static tgc_value run_unfused(gk_dev *d, const program *p, const tgc_value *in) {
    tgc_value vals[MAX_IN + MAX_STEPS];
    for (int i = 0; i < p->n_in; i++) vals[i] = in[i];
    for (int k = 0; k < p->n_steps; k++) {
        const step *s = &p->steps[k];
        const tgc_ew_row *r = tgc_ew_find(s->op);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        tgc_value args[3];
        int n_args = 0;
        args[n_args++] = vals[s->a];
        if (r->arity == 2) args[n_args++] = vals[s->b];
        const tgc_value *big = &args[0];
        if (n_args == 2 && tgc_value_numel(&args[1]) > tgc_value_numel(&args[0])) big = &args[1];
        tgc_attr attrs[3];
        int n_attrs = 0;
        tgc_buffer *bounds[2] = {NULL, NULL};
        if (tgc_ew_id(r) == TGC_EW_Clip) {
            for (int j = 0; j < 2; j++) {
                CU_ASSERT_EQUAL_FATAL(tgc_buffer_alloc(d->cpu, sizeof(float), &bounds[j]), TGC_OK);
                *(float *)tgc_buffer_host_ptr(bounds[j]) = (float)s->p[j];
                args[n_args++] = (tgc_value){.dtype = TGC_FLOAT32, .rank = 0, .buf = bounds[j]};
            }
        }
        for (int j = 0; j < r->n_attrs; j++) {
            if (r->attr_kinds[j] == TGC_EW_ATTR_WORD)
                attrs[n_attrs++] = GK_STRING(r->attr_names[j], r->attr_words[s->p[j] != 0]);
            else if (r->attr_kinds[j] == TGC_EW_ATTR_INT) attrs[n_attrs++] = GK_INT(r->attr_names[j], (int64_t)s->p[j]);
            else attrs[n_attrs++] = GK_FLOAT(r->attr_names[j], s->p[j]);
        }
        tgc_value *y = &vals[p->n_in + k];
        *y = gpu_tensor(d, big->rank, big->dims, NULL);
        tgc_node node = {.name = "step", .kind = TGC_NODE_OP, .op_name = (char *)s->op, .attrs = attrs,
                         .n_attrs = n_attrs, .n_inputs = n_args, .n_outputs = 1};
        const tgc_kernel_def *def = gk_gpu_find(s->op, TGC_FLOAT32);
        CU_ASSERT_PTR_NOT_NULL_FATAL(def);
        char err[256];
        tgc_status st = call(d, def, &node, args, n_args, y, err, sizeof err);
        if (st != TGC_OK) fprintf(stderr, "\n  unfused %s: %s\n", s->op, err);
        CU_ASSERT_EQUAL_FATAL(st, TGC_OK);
        tgc_buffer_release(bounds[0]);
        tgc_buffer_release(bounds[1]);
    }
    for (int k = 0; k + 1 < p->n_steps; k++) tgc_buffer_release(vals[p->n_in + k].buf);
    return vals[p->n_in + p->n_steps - 1];
}

/* Distance in units in the last place (floats ordered as integers). */
static int64_t ulps(float a, float b) {
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b) ? 0 : INT64_MAX;
    int32_t ia, ib;
    memcpy(&ia, &a, 4);
    memcpy(&ib, &b, 4);
    int64_t oa = ia < 0 ? (int64_t)INT32_MIN - ia : ia, ob = ib < 0 ? (int64_t)INT32_MIN - ib : ib;
    return oa > ob ? oa - ob : ob - oa;
}

/* Inputs of seeded values in [lo, hi) for each input of p. */
static void make_inputs(gk_dev *d, const program *p, float lo, float hi, tgc_value *in) {
    for (int i = 0; i < p->n_in; i++) {
        int64_t n = numel_of(p->rank[i], p->dims[i]);
        float *x = tgc_malloc((size_t)n * sizeof *x + 4);
        CU_ASSERT_PTR_NOT_NULL_FATAL(x);
        for (int64_t j = 0; j < n; j++) x[j] = gk_uniform(d, lo, hi);
        in[i] = gpu_tensor(d, p->rank[i], p->dims[i], x);
        tgc_free(x);
    }
}

/* The fused kernel against the unfused ones on inputs in [lo, hi): each
 * element within max_ulp units in the last place, or absolutely within
 * max_ulp ulp of max(1, |unfused|) (NaN matching NaN); returns the
 * largest distance in ulp. */
static int64_t check_program(gk_dev *d, const char *what, const program *p, float lo, float hi, int64_t max_ulp) {
    tgc_value in[MAX_IN];
    make_inputs(d, p, lo, hi, in);
    tgc_value y = gpu_tensor(d, p->rank[0], p->dims[0], NULL);
    char err[512];
    tgc_status st = run_fused(d, p, in, &y, err, sizeof err);
    if (st != TGC_OK) fprintf(stderr, "\n  %s: %s\n", what, err);
    CU_ASSERT_EQUAL_FATAL(st, TGC_OK);
    tgc_value ref = run_unfused(d, p, in);
    CU_ASSERT_EQUAL_FATAL(tgc_value_numel(&ref), tgc_value_numel(&y));
    float *got = read_back(d, &y), *want = read_back(d, &ref);
    int64_t n = tgc_value_numel(&y), differ = 0, worst = 0, bad = 0;
    double worst_abs = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t u = ulps(got[i], want[i]);
        double diff = u == 0 ? 0 : fabs((double)got[i] - (double)want[i]);
        bool ok = u <= max_ulp || diff <= (double)max_ulp * 0x1p-24 * fmax(1.0, fabs((double)want[i]));
        differ += u != 0;
        if (!ok && bad++ < 3)
            fprintf(stderr, "\n  %s element %lld: fused %.9g, unfused %.9g", what, (long long)i, got[i], want[i]);
        if (u > worst) worst = u;
        if (diff > worst_abs) worst_abs = diff;
    }
    if (bad > 0 || getenv("TGC_TEST_VERBOSE") != NULL)
        fprintf(stderr, "\n  %s: %lld of %lld differ, at most %lld ulp, %.3g absolutely; %lld outside the bound\n",
                what, (long long)differ, (long long)n, (long long)worst, worst_abs, (long long)bad);
    CU_ASSERT_EQUAL(bad, 0);
    tgc_free(got);
    tgc_free(want);
    for (int i = 0; i < p->n_in; i++) tgc_buffer_release(in[i].buf);
    tgc_buffer_release(y.buf);
    tgc_buffer_release(ref.buf);
    return worst;
}

#define U(op, x) {op, x, -1, {0, 0, 0}}
#define UP(op, x, p0, p1) {op, x, -1, {p0, p1, 0}}
#define B(op, x, y) {op, x, y, {0, 0, 0}}

/* Unary chains: the math functions, through step results. */
static void test_unary_chain(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    program p = {.n_in = 1, .rank = {1}, .dims = {{1000}}};
    const char *chain[] = {"Sin", "Exp", "Sqrt", "Log", "Tanh", "Sigmoid", "Softplus", "Erf",
                           "Neg", "Abs", "Reciprocal", "Cos", "Atan", "Floor", "Round", "Sign"};
    for (int k = 0; k < 16; k++) p.steps[p.n_steps++] = (step)U(chain[k], k);
    check_program(&d, "unary chain", &p, -4, 4, MAX_ULP);
    gk_close(&d);
}

/* Binary rows with full, one-element and row-broadcast inputs in either
 * operand, and a unary row of a one-element input: x, y [3, 5, 67], s [1],
 * b [67] (positive, so it may divide). */
static void test_binary_broadcasts(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    program p = {.n_in = 4, .rank = {3, 1, 1, 3}, .dims = {{3, 5, 67}, {1}, {67}, {3, 5, 67}}};
    step s[] = {B("Mul", 0, 1),  B("Add", 4, 2),  B("Sub", 3, 5), B("Max", 6, 1), B("Div", 7, 2), B("PRelu", 8, 2),
                U("Exp", 1),     B("Mul", 9, 10), B("Min", 2, 11), B("Pow", 2, 1), B("Add", 12, 13),
                B("Mod", 14, 2)};
    s[11].p[0] = 1; /* fmod */
    for (size_t k = 0; k < sizeof s / sizeof *s; k++) p.steps[p.n_steps++] = s[k];
    check_program(&d, "binary broadcasts", &p, 0.25f, 2, MAX_ULP);
    /* negative values through the same program (Pow of a negative base: NaN in both) */
    check_program(&d, "binary broadcasts, signed", &p, -2, 2, MAX_ULP);
    gk_close(&d);
}

/* Clip and the activations with parameters (attributes on the unfused
 * nodes, as_float literals in the fused kernel), Gelu's two forms. */
static void test_activations_with_params(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    program p = {.n_in = 1, .rank = {2}, .dims = {{33, 31}}};
    step s[] = {UP("LeakyRelu", 0, 0.2, 0),
                UP("Elu", 1, 1.5, 0),
                UP("Clip", 2, -0.5, 0.7),
                UP("HardSigmoid", 3, 0.3, 0.4),
                UP("Selu", 4, 1.67326319217681884765625, 1.05070102214813232421875),
                UP("Celu", 5, 2.0, 0),
                UP("ThresholdedRelu", 6, 0.1, 0),
                UP("Shrink", 7, 0.1, 0.3),
                U("Softsign", 8),
                U("HardSwish", 9),
                U("Mish", 10),
                UP("Gelu", 11, 0, 0),
                UP("Gelu", 12, 1, 0),
                UP("Clip", 13, -INFINITY, 0.05)};
    for (size_t k = 0; k < sizeof s / sizeof *s; k++) p.steps[p.n_steps++] = s[k];
    check_program(&d, "activations", &p, -3, 3, MAX_ULP);
    gk_close(&d);
}

/* Every float row that can join a group, alone (then Neg, exact, so the
 * row's value is a step result), fused against its own unfused kernel:
 * the rows of plain arithmetic bitwise (0 ulp measured), the rest within
 * MAX_ULP. */
static void test_each_row(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    for (int id = 0; id < TGC_EW_COUNT; id++) {
        const tgc_ew_row *r = &tgc_ew_rows[id];
        if (r->bool_out || (r->dtypes & (1u << TGC_FLOAT32)) == 0 || id == TGC_EW_Mean) continue;
        program p = {.n_in = 2, .rank = {1, 1}, .dims = {{4099}, {4099}}};
        p.steps[0] = (step){r->op, 0, r->arity == 2 ? 1 : -1, {0, 0, 0}};
        for (int j = 0; j < r->n_attrs; j++) p.steps[0].p[j] = r->attr_defaults[j];
        if (id == TGC_EW_Clip) p.steps[0].p[0] = -0.5, p.steps[0].p[1] = 0.5;
        if (id == TGC_EW_Mod) p.steps[0].p[0] = 1; /* float Mod is fmod */
        p.steps[1] = (step)U("Neg", 2);
        p.n_steps = 2;
        check_program(&d, r->op, &p, -4, 4, MAX_ULP);
    }
    gk_close(&d);
}

/* The longest program (64 steps) over two full inputs. */
static void test_64_steps(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    program p = {.n_in = 2, .rank = {1, 1}, .dims = {{4097}, {4097}}};
    p.steps[p.n_steps++] = (step)B("Add", 0, 1);
    for (int k = 1; k < MAX_STEPS; k++) {
        int prev = 2 + k - 1;
        switch (k % 4) {
        case 0: p.steps[p.n_steps++] = (step)B("Add", prev, 1); break;
        case 1: p.steps[p.n_steps++] = (step)U("Tanh", prev); break;
        case 2: p.steps[p.n_steps++] = (step)B("Mul", 0, prev); break;
        default: p.steps[p.n_steps++] = (step)U("Sigmoid", prev); break;
        }
    }
    CU_ASSERT_EQUAL(p.n_steps, TGC_FUSED_MAX_STEPS);
    check_program(&d, "64 steps", &p, -2, 2, MAX_ULP);
    gk_close(&d);
}

/* Against numpy (float64, rounded to float32 at the end), computed by
 *     x = ((np.arange(48) - 24) / 8).reshape(2, 3, 8); s = 0.75
 *     b = np.array([-1, -0.5, 0, 0.25, 0.5, 1, 1.5, 2])
 *     t = np.tanh(x / (1 + np.exp(-(x * s + b))))
 *     y = np.clip(np.where(t < 0, 0.1 * t, t), -0.2, 0.6).astype(np.float32)
 * the program Mul(x, s), Add(., b), Sigmoid, Mul(., x), Tanh,
 * LeakyRelu(0.1), Clip(-0.2, 0.6); within 2e-6 (a few float32 ulps of
 * the exp and tanh through the chain). */
static void test_against_numpy(void) {
    static const float want[48] = {
        -0.0111514935f, -0.0186408628f, -0.0300607551f, -0.0379165486f, -0.0465674698f, -0.0632678643f,
        -0.0769800991f, -0.0855254531f, -0.0150562916f, -0.0237978473f, -0.0354971327f, -0.0419500582f,
        -0.0479987226f, -0.0589408167f, -0.0661956742f, -0.069405213f,  -0.0146974968f, -0.0206421502f,
        -0.0265695751f, -0.0271475427f, -0.0259530265f, -0.0246914569f, -0.0194473937f, -0.0108397091f,
        0.0f,           0.0499348901f,  0.135839641f,   0.231870621f,   0.338938266f,   0.46841827f,
        0.581948161f,   0.600000024f,   0.41183871f,    0.577190161f,   0.600000024f,   0.600000024f,
        0.600000024f,   0.600000024f,   0.600000024f,   0.600000024f,   0.600000024f,   0.600000024f,
        0.600000024f,   0.600000024f,   0.600000024f,   0.600000024f,   0.600000024f,   0.600000024f};
    gk_dev d;
    if (!gk_open(&d)) return;
    program p = {.n_in = 3, .rank = {3, 1, 1}, .dims = {{2, 3, 8}, {1}, {8}}};
    step s[] = {B("Mul", 0, 1), B("Add", 3, 2),         U("Sigmoid", 4),           B("Mul", 5, 0),
                U("Tanh", 6),   UP("LeakyRelu", 7, 0.1, 0), UP("Clip", 8, -0.2, 0.6)};
    for (size_t k = 0; k < sizeof s / sizeof *s; k++) p.steps[p.n_steps++] = s[k];
    float x[48], sv = 0.75f, b[8] = {-1, -0.5f, 0, 0.25f, 0.5f, 1, 1.5f, 2};
    for (int i = 0; i < 48; i++) x[i] = (float)(i - 24) / 8.0f;
    tgc_value in[3] = {gpu_tensor(&d, 3, (int64_t[]){2, 3, 8}, x), gpu_tensor(&d, 1, (int64_t[]){1}, &sv),
                       gpu_tensor(&d, 1, (int64_t[]){8}, b)};
    tgc_value y = gpu_tensor(&d, 3, (int64_t[]){2, 3, 8}, NULL);
    char err[512];
    CU_ASSERT_EQUAL_FATAL(run_fused(&d, &p, in, &y, err, sizeof err), TGC_OK);
    float *got = read_back(&d, &y);
    for (int i = 0; i < 48; i++) {
        if (fabsf(got[i] - want[i]) > 2e-6f) fprintf(stderr, "\n  element %d: %.9g, numpy %.9g", i, got[i], want[i]);
        CU_ASSERT(fabsf(got[i] - want[i]) <= 2e-6f);
    }
    tgc_free(got);
    for (int i = 0; i < 3; i++) tgc_buffer_release(in[i].buf);
    tgc_buffer_release(y.buf);
    gk_close(&d);
}

/* True when the binary cache directory ($XDG_CACHE_HOME/tgc, else
 * ~/.cache/tgc) exists and is writable, so a built program was stored. */
static bool disk_cache_writable(void) {
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char dir[1100];
    if (xdg != NULL && xdg[0] == '/') snprintf(dir, sizeof dir, "%s/tgc", xdg);
    else if (home != NULL && home[0] == '/') snprintf(dir, sizeof dir, "%s/.cache/tgc", home);
    else return false;
    return access(dir, W_OK) == 0;
}

/* Runs program p once on fresh inputs of its shapes; fails the test on an
 * error. */
static void run_once(gk_dev *d, const program *p) {
    tgc_value in[MAX_IN];
    make_inputs(d, p, -1, 1, in);
    tgc_value y = gpu_tensor(d, p->rank[0], p->dims[0], NULL);
    char err[512];
    tgc_status st = run_fused(d, p, in, &y, err, sizeof err);
    if (st != TGC_OK) fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_EQUAL(st, TGC_OK);
    for (int i = 0; i < p->n_in; i++) tgc_buffer_release(in[i].buf);
    tgc_buffer_release(y.buf);
}

/* The cache: the first node builds (or loads from disk) one program; a
 * second node with the same program and input kinds, of another size,
 * builds and loads nothing and counts a hit; another input kind (a row
 * instead of a full input) is another kernel; after the device is closed
 * and opened again the same program comes from the disk cache, compiled
 * by nobody. Closing the device releases every fused program (the live
 * counts come back). */
static void test_cache(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    program p = {.n_in = 2, .rank = {2, 2}, .dims = {{7, 9}, {7, 9}}};
    p.steps[p.n_steps++] = (step)B("Add", 0, 1);
    p.steps[p.n_steps++] = (step)UP("LeakyRelu", 2, 0.375, 0);
    tgc_cl_counters c0 = tgc_cl_device_counters(d.gpu);
    run_once(&d, &p);
    tgc_cl_counters c1 = tgc_cl_device_counters(d.gpu);
    CU_ASSERT_EQUAL((c1.program_builds - c0.program_builds) + (c1.cache_loads - c0.cache_loads), 1);
    CU_ASSERT_EQUAL(c1.programs - c0.programs, 1);
    CU_ASSERT_EQUAL(c1.kernels - c0.kernels, 1);
    CU_ASSERT_EQUAL(c1.fused_hits, c0.fused_hits);
    program q = p; /* the same program and kinds, another size */
    q.dims[0][0] = q.dims[1][0] = 1000;
    run_once(&d, &q);
    tgc_cl_counters c2 = tgc_cl_device_counters(d.gpu);
    CU_ASSERT_EQUAL(c2.program_builds, c1.program_builds);
    CU_ASSERT_EQUAL(c2.cache_loads, c1.cache_loads);
    CU_ASSERT_EQUAL(c2.programs, c1.programs);
    CU_ASSERT_EQUAL(c2.fused_hits, c1.fused_hits + 1);
    program r = p; /* input 1 a row: another kernel */
    r.rank[1] = 1;
    r.dims[1][0] = 9;
    run_once(&d, &r);
    tgc_cl_counters c3 = tgc_cl_device_counters(d.gpu);
    CU_ASSERT_EQUAL(c3.programs, c2.programs + 1);
    CU_ASSERT_EQUAL(c3.fused_hits, c2.fused_hits);
    gk_close(&d);
    /* a second device open: from the disk cache */
    if (!gk_open(&d)) return;
    tgc_cl_counters c4 = tgc_cl_device_counters(d.gpu);
    run_once(&d, &p);
    tgc_cl_counters c5 = tgc_cl_device_counters(d.gpu);
    if (disk_cache_writable()) {
        CU_ASSERT_EQUAL(c5.program_builds, c4.program_builds);
        CU_ASSERT_EQUAL(c5.cache_loads, c4.cache_loads + 1);
    }
    CU_ASSERT_EQUAL(c5.programs, c4.programs + 1);
    gk_close(&d);
}

/* Bad programs are kernel errors naming the problem, and a generated
 * source that does not compile is one too, with OpenCL's build log; none
 * leaves a program behind. An empty output runs nothing. */
static void test_bad_programs(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    program p = {.n_in = 1, .rank = {1}, .dims = {{16}}};
    tgc_value in[1];
    make_inputs(&d, &p, -1, 1, in);
    tgc_value y = gpu_tensor(&d, 1, (int64_t[]){16}, NULL);
    tgc_cl_counters c0 = tgc_cl_device_counters(d.gpu);
    char err[512];
    struct {
        step s;
        const char *needle;
    } cases[] = {{B("Add", 0, 5), "operand 1 is 5"},
                 {U("Neg", 1), "operand 0 is 1"},
                 {{"Neg", 0, 0, {0, 0, 0}}, "operand 1 is 0"},
                 {U("Equal", 0), "no float elementwise row"},
                 {U("NoSuchOp", 0), "no float elementwise row"},
                 {B("And", 0, 0), "no float elementwise row"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        p.n_steps = 1;
        p.steps[0] = cases[i].s;
        CU_ASSERT_EQUAL(run_fused(&d, &p, in, &y, err, sizeof err), TGC_ERR_RUNTIME);
        if (strstr(err, cases[i].needle) == NULL) fprintf(stderr, "\n  wanted \"%s\", got \"%s\"\n", cases[i].needle, err);
        CU_ASSERT(strstr(err, cases[i].needle) != NULL);
    }
    /* no steps; a missing attribute */
    p.n_steps = 0;
    CU_ASSERT_EQUAL(run_fused(&d, &p, in, &y, err, sizeof err), TGC_ERR_RUNTIME);
    CU_ASSERT(strstr(err, "a group of 0 steps") != NULL);
    tgc_node bare = {.name = "fused", .kind = TGC_NODE_OP, .op_name = "_FusedElementwise", .n_inputs = 1,
                     .n_outputs = 1};
    const tgc_kernel_def *def = tgc_kernel_find("_FusedElementwise", TGC_DEVICE_GPU, TGC_FLOAT32);
    CU_ASSERT_EQUAL(call(&d, def, &bare, in, 1, &y, err, sizeof err), TGC_ERR_RUNTIME);
    CU_ASSERT(strstr(err, "needs the attributes") != NULL);
    /* an input that does not tile the output */
    tgc_value odd = gpu_tensor(&d, 1, (int64_t[]){5}, NULL);
    tgc_value two[2] = {in[0], odd};
    program q = {.n_in = 2, .n_steps = 1, .steps = {B("Add", 0, 1)}};
    CU_ASSERT_EQUAL(run_fused(&d, &q, two, &y, err, sizeof err), TGC_ERR_RUNTIME);
    CU_ASSERT(strstr(err, "do not tile") != NULL);
    tgc_buffer_release(odd.buf);
    /* an empty tensor: nothing to run, but the program is still checked */
    tgc_value empty = gpu_tensor(&d, 2, (int64_t[]){0, 3}, NULL), empty_y = gpu_tensor(&d, 2, (int64_t[]){0, 3}, NULL);
    program e = {.n_in = 1, .n_steps = 1, .steps = {U("Neg", 0)}};
    CU_ASSERT_EQUAL(run_fused(&d, &e, &empty, &empty_y, err, sizeof err), TGC_OK);
    e.steps[0] = (step)U("Equal", 0);
    CU_ASSERT_EQUAL(run_fused(&d, &e, &empty, &empty_y, err, sizeof err), TGC_ERR_RUNTIME);
    tgc_buffer_release(empty.buf);
    tgc_buffer_release(empty_y.buf);
    /* a source the compiler refuses */
    tgc_cl_device *c = (tgc_cl_device *)d.gpu;
    cl_kernel k = NULL;
    pthread_mutex_lock(&c->lock);
    tgc_status st = tgc_cl_fused_kernel(c, "__kernel void tgc_fused(__global float *Y) { Y[0] = no_such(1.0f); }\n",
                                        "tgc_fused", err, sizeof err, &k);
    pthread_mutex_unlock(&c->lock);
    CU_ASSERT_EQUAL(st, TGC_ERR_RUNTIME);
    CU_ASSERT_PTR_NULL(k);
    if (strstr(err, "cannot build") == NULL) fprintf(stderr, "\n  build failure: \"%s\"\n", err);
    CU_ASSERT(strstr(err, "cannot build") != NULL);
    tgc_cl_counters c1 = tgc_cl_device_counters(d.gpu);
    CU_ASSERT_EQUAL(c1.programs, c0.programs);
    CU_ASSERT_EQUAL(c1.kernels, c0.kernels);
    tgc_buffer_release(in[0].buf);
    tgc_buffer_release(y.buf);
    gk_close(&d);
}

/* Runs g at `level` on gpu0 with x fed; returns output 0. */
static tgc_tensor *run_gpu_as(const tgc_graph *g, tgc_optimize_level level, tgc_dtype t, const int64_t *dims,
                              const void *x) {
    tgc_diags *d = tgc_diags_create();
    tgc_session *s = NULL;
    tgc_tensor *feed = NULL, *out = NULL;
    const char *name = "x";
    tgc_session_options o = {.optimize = level};
    tgc_status st = tgc_session_create(g, "gpu0", &o, d, &s);
    if (st == TGC_OK) st = tgc_tensor_create(t, 2, dims, x, &feed);
    if (st == TGC_OK) st = tgc_session_run(s, 1, &name, &feed, &out, d);
    if (st != TGC_OK) tgc_diags_print(d, stderr);
    CU_ASSERT_EQUAL(st, TGC_OK);
    tgc_tensor_release(feed);
    tgc_session_free(s);
    tgc_diags_free(d);
    return out;
}

static tgc_tensor *run_gpu(const tgc_graph *g, tgc_optimize_level level, const int64_t *dims, const float *x) {
    return run_gpu_as(g, level, TGC_FLOAT32, dims, x);
}

/* A graph optimized for gpu0 (a row-broadcast bias, a scalar, a diamond)
 * holds one _FusedElementwise and gives the values of the same graph run
 * unoptimized there (within MAX_ULP); the first row by hand: x = [-1, 0.5, 2],
 * b = [0.5, -1, 1]: y = tanh(relu(x + b) * 2) * x = [0, 0, 2 tanh(6)]. */
/* The graph both group tests run: y = tanh(2 relu(x + b)) x, x [N, 3] and
 * b of `dtype`, written into buf. */
static const char *group_yaml(char *buf, size_t size, const char *dtype) {
    snprintf(buf, size,
             "format: tgc/1\n"
             "inputs: [{name: x, dtype: %s, shape: [N, 3]}]\n"
             "outputs: [y]\n"
             "initializers:\n"
             "  - {name: b, dtype: %s, shape: [3], values: [0.5, -1, 1]}\n"
             "  - {name: two, dtype: %s, shape: [], values: [2]}\n"
             "nodes:\n"
             "  - {name: s, op: Add, inputs: [x, b]}\n"
             "  - {name: r, op: Relu, inputs: [s]}\n"
             "  - {name: m, op: Mul, inputs: [r, two]}\n"
             "  - {name: t, op: Tanh, inputs: [m]}\n"
             "  - {name: y, op: Mul, inputs: [t, x]}\n",
             dtype, dtype, dtype);
    return buf;
}

static void test_graph_on_gpu(void) {
    gk_dev probe;
    if (!gk_open(&probe)) return;
    gk_close(&probe);
    char text[1024];
    const char *yaml = group_yaml(text, sizeof text, "float32");
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL, *opt = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_load_string(yaml, strlen(yaml), "gpu.yaml", NULL, d, &g), TGC_OK);
    CU_ASSERT_EQUAL_FATAL(tgc_graph_optimize(g, TGC_OPTIMIZE_ALL, "gpu0", NULL, d, &opt), TGC_OK);
    int32_t y = tgc_graph_find(opt, "y");
    CU_ASSERT(y >= 0 && strcmp(opt->nodes[y].op_name, "_FusedElementwise") == 0);
    tgc_graph_free(opt);
    enum { ROWS = 2001 };
    float *x = tgc_malloc(ROWS * 3 * sizeof *x);
    CU_ASSERT_PTR_NOT_NULL_FATAL(x);
    for (int i = 0; i < ROWS * 3; i++) x[i] = (float)((i * 13) % 17 - 8) / 4.0f;
    x[0] = -1, x[1] = 0.5f, x[2] = 2;
    int64_t dims[2] = {ROWS, 3};
    tgc_tensor *fused = run_gpu(g, TGC_OPTIMIZE_ALL, dims, x), *plain = run_gpu(g, TGC_OPTIMIZE_NONE, dims, x);
    CU_ASSERT_FATAL(fused != NULL && plain != NULL);
    const float *got = tgc_tensor_data(fused), *want = tgc_tensor_data(plain);
    int64_t worst = 0;
    for (int i = 0; i < ROWS * 3; i++) worst = ulps(got[i], want[i]) > worst ? ulps(got[i], want[i]) : worst;
    CU_ASSERT(worst <= MAX_ULP);
    CU_ASSERT(got[0] == 0 && got[1] == 0 && fabsf(got[2] - 2 * 0.999987710f) <= 1e-6f);
    tgc_tensor_release(fused);
    tgc_tensor_release(plain);
    tgc_free(x);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

/* The same group in float16 on gpu0 alone (with the cpu listed too no
 * float16 group forms: the cpu has none): one _FusedElementwise whose
 * half values are read as float, computed in float32 and rounded once, so
 * each output is within one half step of tanh(2 relu(x + b)) x worked out
 * in double (C's tanh) and rounded to half; x and b are exact halves. */
static void test_float16_group_on_gpu(void) {
    gk_dev probe;
    if (!gk_open(&probe)) return;
    gk_close(&probe);
    char text[1024];
    const char *yaml = group_yaml(text, sizeof text, "float16");
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL, *opt = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_load_string(yaml, strlen(yaml), "gpu16.yaml", NULL, d, &g), TGC_OK);
    CU_ASSERT_EQUAL_FATAL(tgc_graph_optimize(g, TGC_OPTIMIZE_ALL, "gpu0", NULL, d, &opt), TGC_OK);
    int32_t y = tgc_graph_find(opt, "y");
    CU_ASSERT_FATAL(y >= 0);
    CU_ASSERT_STRING_EQUAL(opt->nodes[y].op_name, "_FusedElementwise");
    CU_ASSERT_EQUAL(opt->nodes[y].outputs[0].dtype, TGC_FLOAT16);
    tgc_graph_free(opt);
    CU_ASSERT_EQUAL_FATAL(tgc_graph_optimize(g, TGC_OPTIMIZE_ALL, "cpu,gpu0", NULL, d, &opt), TGC_OK);
    CU_ASSERT_STRING_EQUAL(opt->nodes[tgc_graph_find(opt, "y")].op_name, "Mul");
    tgc_graph_free(opt);
    enum { ROWS = 2001 }; /* 6003 values: float8 lanes and a tail of 3 */
    uint16_t *x = tgc_malloc(ROWS * 3 * sizeof *x);
    CU_ASSERT_PTR_NOT_NULL_FATAL(x);
    for (int i = 0; i < ROWS * 3; i++) x[i] = tgc_float_to_half((float)((i * 13) % 17 - 8) / 4.0f);
    int64_t dims[2] = {ROWS, 3};
    tgc_tensor *out = run_gpu_as(g, TGC_OPTIMIZE_ALL, TGC_FLOAT16, dims, x);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT_EQUAL(tgc_tensor_dtype(out), TGC_FLOAT16);
    const uint16_t *got = tgc_tensor_data(out);
    const double b[3] = {0.5, -1, 1};
    int bad = 0;
    for (int i = 0; i < ROWS * 3; i++) {
        double xv = tgc_half_to_float(x[i]), sum = xv + b[i % 3];
        double want = tanh(2 * (sum > 0 ? sum : 0)) * xv;
        double step = ldexp(1.0, ilogb(want == 0 ? 1 : want) - 10); /* a half step at |want| */
        if (fabs(tgc_half_to_float(got[i]) - want) > step) bad++;
    }
    CU_ASSERT_EQUAL(bad, 0);
    tgc_tensor_release(out);
    tgc_free(x);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

TGC_TEST_MAIN("gpu_fused", {"each_row", test_each_row}, {"unary_chain", test_unary_chain}, {"binary_broadcasts", test_binary_broadcasts},
              {"activations_with_params", test_activations_with_params}, {"64_steps", test_64_steps},
              {"against_numpy", test_against_numpy}, {"cache", test_cache}, {"bad_programs", test_bad_programs},
              {"graph_on_gpu", test_graph_on_gpu}, {"float16_group_on_gpu", test_float16_group_on_gpu})
