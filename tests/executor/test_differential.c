/* The differential test: random graphs, generated as tgc/1 text from a
 * seed, run on `cpu` (the reference), on `cpu0,cpu1` and other thread
 * counts and device orders (bitwise equal to the reference) and on
 * `cpu,gpu0` when a gpu exists (within 1e-4 relative). Every node may ask
 * for a device (some unlisted: soft placement relaxes them) or a
 * colocation. After each run every session device is back to its weights
 * only, and the feeds are untouched.
 *
 * The generator keeps every graph valid by construction: it tracks each
 * tensor's shape (a dim is a concrete size, or a symbol token: N, or one
 * that a Reshape or Concat of N makes), a bound on its magnitude (scaled
 * back by a power of two, exactly, when it grows), and whether its values
 * are exact on every device (so a Greater feeding a Where never flips on
 * rounding). A graph that fails to load is a generator bug: the test fails
 * with its YAML.
 *
 * To reproduce one case: TGC_DIFF_SEED=0x... ./executor_test_differential
 * runs only that seed and prints its YAML. TGC_DIFF_GRAPHS=n changes the
 * number of graphs, TGC_DIFF_BASE_SEED=n the seed their seeds come from;
 * TGC_DIFF_TRACE=1 prints each seed to stderr before its case runs, so a
 * crash names the graph that caused it. */
#include "tests/harness.h"

#include "devices/device.h"
#include "support/alloc.h"
#include "tgc.h"

#include <CUnit/CUnit.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define N_GRAPHS 60
#else
#define N_GRAPHS 240
#endif

#define BASE_SEED 0x7467632d64696666ull /* "tgc-diff" */
#define MAX_SHOWN_FAILURES 3

/* ---- a small PRNG: splitmix64 ------------------------------------------------ */

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t rng_next(rng *r) {
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static int rng_int(rng *r, int lo, int hi) { return lo + (int)(rng_next(r) % (uint64_t)(hi - lo + 1)); }

/* Uniform in [0, 1). */
static double rng_unit(rng *r) { return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0); }

static float rng_float(rng *r, float lo, float hi) { return lo + (float)rng_unit(r) * (hi - lo); }

static bool rng_chance(rng *r, double p) { return rng_unit(r) < p; }

/* ---- a growing string ----------------------------------------------------------- */

typedef struct sbuf {
    char *p;
    size_t len, cap;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) {
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->len;
        int n = vsnprintf(b->p != NULL ? b->p + b->len : NULL, room, fmt, ap);
        va_end(ap);
        if (n < 0) return;
        if ((size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap * 2 + (size_t)n + 256;
        char *p = realloc(b->p, cap);
        if (p == NULL) abort();
        b->p = p;
        b->cap = cap;
    }
}

static void sb_free(sbuf *b) {
    free(b->p);
    *b = (sbuf){0};
}

/* ---- the generator ----------------------------------------------------------------- */

#define MAX_RANK 4
#define MAX_TENSORS 256
#define MAX_NODES 64
#define MAX_NODE_INPUTS 4
#define NUMEL_LIMIT 4096
#define BOUND_LIMIT 8.0
#define NAME_LEN 16

/* A dim: cls > 0 is a concrete size; cls < 0 a symbol token (-1 is N, the
 * graph's one declared symbol; lower ones are dims inference derives from
 * N, each equal only to itself). val is the size it has at run time. */
typedef struct gshape {
    int rank;
    int64_t cls[MAX_RANK];
    int64_t val[MAX_RANK];
} gshape;

typedef struct gtensor {
    char name[NAME_LEN];
    gshape sh;
    double bound;   /* |value| <= bound */
    bool exact;     /* bitwise the same on every device */
    bool from_tanh; /* made by a Tanh: Exp may take it as it is */
    bool is_init;   /* an initializer, not a graph input or a node */
    bool is_node;
    int uses;
} gtensor;

typedef struct gnode {
    char name[NAME_LEN];
    const char *op;
    int n_inputs;
    char inputs[MAX_NODE_INPUTS][NAME_LEN];
    bool float_out; /* its output is a float32 tensor in t[] */
} gnode;

typedef struct gen {
    rng r;
    sbuf inputs, inits, nodes;
    gtensor t[MAX_TENSORS];
    int nt;
    gnode node[MAX_NODES + 8];
    int n_nodes, target, n_inits, n_outputs;
    int64_t nval;       /* N's value at run time */
    int64_t next_token; /* the next derived symbol token */
    int n_graph_inputs;
    int graph_input[3]; /* indices into t[] */
    char one[NAME_LEN], zero[NAME_LEN], axes0[NAME_LEN], minus1[NAME_LEN];
} gen;

/* Ops covered over all graphs. */
static const char *const op_names[] = {"Add",       "Sub",     "Mul",     "Div",        "Relu",      "LeakyRelu",
                                       "Sigmoid",   "Tanh",    "Exp",     "Neg",        "Abs",       "Sqrt",
                                       "Min",       "Max",     "Clip",    "Softmax",    "ReduceSum", "ReduceMean",
                                       "ReduceMax", "Transpose", "Reshape", "Concat",   "MatMul",    "Gemm",
                                       "Where",     "Greater", "Identity", "Shape",     "Gather",    "Unsqueeze"};
#define N_OP_NAMES (sizeof op_names / sizeof op_names[0])
static long op_counts[N_OP_NAMES];

static void count_op(const char *op) {
    for (size_t i = 0; i < N_OP_NAMES; i++)
        if (strcmp(op_names[i], op) == 0) op_counts[i]++;
}

static int64_t numel(const gshape *s) {
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++) n *= s->val[i];
    return n;
}

static bool same_shape(const gshape *a, const gshape *b) {
    if (a->rank != b->rank) return false;
    for (int i = 0; i < a->rank; i++)
        if (a->cls[i] != b->cls[i]) return false;
    return true;
}

/* Multidirectional broadcasting over the dims' classes: equal, or one is
 * a concrete 1. A symbol never meets a different concrete size or symbol. */
static bool broadcast(const gshape *a, const gshape *b, gshape *out) {
    gshape o = {.rank = a->rank > b->rank ? a->rank : b->rank};
    for (int i = 0; i < o.rank; i++) {
        int ia = a->rank - o.rank + i, ib = b->rank - o.rank + i;
        int64_t ca = ia >= 0 ? a->cls[ia] : 1, cb = ib >= 0 ? b->cls[ib] : 1;
        int64_t va = ia >= 0 ? a->val[ia] : 1, vb = ib >= 0 ? b->val[ib] : 1;
        if (ca == cb || cb == 1) {
            o.cls[i] = ca;
            o.val[i] = va;
        } else if (ca == 1) {
            o.cls[i] = cb;
            o.val[i] = vb;
        } else {
            return false;
        }
    }
    if (numel(&o) > NUMEL_LIMIT) return false;
    *out = o;
    return true;
}

static void shape_yaml(sbuf *b, const gshape *s) {
    sb_printf(b, "[");
    for (int i = 0; i < s->rank; i++) {
        if (s->cls[i] == -1) sb_printf(b, "%sN", i ? ", " : "");
        else sb_printf(b, "%s%" PRId64, i ? ", " : "", s->cls[i]);
    }
    sb_printf(b, "]");
}

static int add_tensor(gen *g, const char *name, const gshape *sh, double bound, bool exact) {
    if (g->nt >= MAX_TENSORS) abort();
    gtensor *t = &g->t[g->nt];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->sh = *sh;
    t->bound = bound;
    t->exact = exact;
    return g->nt++;
}

static int find_tensor(gen *g, const char *name) {
    for (int i = 0; i < g->nt; i++)
        if (strcmp(g->t[i].name, name) == 0) return i;
    return -1;
}

/* Writes a node (name n<k>) with a random device request and sometimes a
 * colocation; copies its name to `name`. */
static void emit(gen *g, const char *op, int n_in, const char *const *ins, const char *attrs, bool float_out,
                 char name[NAME_LEN]) {
    static const char *const devices[] = {"cpu0", "cpu1", "gpu0", "gpu", "cpu"};
    gnode *nd = &g->node[g->n_nodes];
    snprintf(nd->name, sizeof nd->name, "n%d", g->n_nodes);
    nd->op = op;
    nd->n_inputs = n_in;
    nd->float_out = float_out;
    sb_printf(&g->nodes, "  - {name: %s, op: %s, inputs: [", nd->name, op);
    for (int i = 0; i < n_in; i++) {
        snprintf(nd->inputs[i], NAME_LEN, "%s", ins[i]);
        sb_printf(&g->nodes, "%s%s", i ? ", " : "", ins[i][0] ? ins[i] : "\"\"");
        int j = find_tensor(g, ins[i]);
        if (j >= 0) g->t[j].uses++;
    }
    /* Sometimes a control dependency on an earlier node. */
    if (g->n_nodes > 0 && rng_chance(&g->r, 0.08))
        sb_printf(&g->nodes, ", ^%s", g->node[rng_int(&g->r, 0, g->n_nodes - 1)].name);
    sb_printf(&g->nodes, "]");
    if (attrs != NULL && attrs[0]) sb_printf(&g->nodes, ", attrs: {%s}", attrs);
    if (rng_chance(&g->r, 0.35)) sb_printf(&g->nodes, ", device: %s", devices[rng_int(&g->r, 0, 4)]);
    if (g->n_nodes > 0 && rng_chance(&g->r, 0.1))
        sb_printf(&g->nodes, ", colocate_with: [%s]", g->node[rng_int(&g->r, 0, g->n_nodes - 1)].name);
    sb_printf(&g->nodes, "}\n");
    count_op(op);
    snprintf(name, NAME_LEN, "%s", nd->name);
    g->n_nodes++;
}

/* Emits a node with one float32 output of shape `sh` and registers it. */
static int emit_float(gen *g, const char *op, int n_in, const char *const *ins, const char *attrs, const gshape *sh,
                      double bound, bool exact) {
    char name[NAME_LEN];
    emit(g, op, n_in, ins, attrs, true, name);
    int k = add_tensor(g, name, sh, bound, exact);
    g->t[k].is_node = true;
    g->t[k].from_tanh = strcmp(op, "Tanh") == 0;
    return k;
}

/* A float32 initializer of shape `sh` (concrete) with values in [lo, hi];
 * registered as a tensor, returns its index. */
static int init_f32(gen *g, const gshape *sh, float lo, float hi) {
    char name[NAME_LEN];
    snprintf(name, sizeof name, "w%d", g->n_inits++);
    sb_printf(&g->inits, "  - {name: %s, dtype: float32, shape: ", name);
    shape_yaml(&g->inits, sh);
    sb_printf(&g->inits, ", values: [");
    int64_t n = numel(sh);
    for (int64_t i = 0; i < n; i++) sb_printf(&g->inits, "%s%.9g", i ? ", " : "", (double)rng_float(&g->r, lo, hi));
    sb_printf(&g->inits, "]}\n");
    int k = add_tensor(g, name, sh, fmax(fabs(lo), fabs(hi)), true);
    g->t[k].is_init = true;
    return k;
}

/* A float32 scalar initializer (shape [] or [1], at random) holding v. */
static int init_scalar(gen *g, float v) {
    char name[NAME_LEN];
    snprintf(name, sizeof name, "w%d", g->n_inits++);
    gshape sh = {.rank = rng_chance(&g->r, 0.5) ? 0 : 1, .cls = {1}, .val = {1}};
    sb_printf(&g->inits, "  - {name: %s, dtype: float32, shape: %s, values: [%.9g]}\n", name, sh.rank ? "[1]" : "[]",
              (double)v);
    int k = add_tensor(g, name, &sh, fabs(v), true);
    g->t[k].is_init = true;
    return k;
}

/* An int64 initializer of shape [n] (or [] when n is 0: one value). */
static void init_i64(gen *g, char name[NAME_LEN], int n, const int64_t *v) {
    snprintf(name, NAME_LEN, "w%d", g->n_inits++);
    if (n == 0) {
        sb_printf(&g->inits, "  - {name: %s, dtype: int64, shape: [], values: [%" PRId64 "]}\n", name, v[0]);
        return;
    }
    sb_printf(&g->inits, "  - {name: %s, dtype: int64, shape: [%d], values: [", name, n);
    for (int i = 0; i < n; i++) sb_printf(&g->inits, "%s%" PRId64, i ? ", " : "", v[i]);
    sb_printf(&g->inits, "]}\n");
}

static void random_shape(gen *g, gshape *s, bool sym);

static const char *one_name(gen *g) {
    if (g->one[0] == '\0') snprintf(g->one, NAME_LEN, "%s", g->t[init_scalar(g, 1.0f)].name);
    return g->one;
}

/* A random operand: a graph input or a node's output, mostly a recent one
 * (so graphs get deep). need_exact: only exact ones; -1 when none fits. */
static int pick(gen *g, bool need_exact, bool (*ok)(const gtensor *)) {
    int cand[MAX_TENSORS], n = 0, recent[MAX_TENSORS], nr = 0;
    if (rng_chance(&g->r, 0.04)) { /* a weight: the node computes on constants only */
        gshape s;
        random_shape(g, &s, false);
        int k = init_f32(g, &s, -2.0f, 2.0f);
        if (ok == NULL || ok(&g->t[k])) return k;
    }
    for (int i = 0; i < g->nt; i++) {
        const gtensor *t = &g->t[i];
        if (t->is_init || (need_exact && !t->exact) || (ok != NULL && !ok(t))) continue;
        cand[n++] = i;
    }
    if (n == 0) return -1;
    for (int i = n - 1; i >= 0 && nr < 3; i--)
        if (g->t[cand[i]].is_node) recent[nr++] = cand[i];
    if (nr > 0 && rng_chance(&g->r, 0.6)) return recent[rng_int(&g->r, 0, nr - 1)];
    return cand[rng_int(&g->r, 0, n - 1)];
}

/* A second operand that broadcasts with t[a]: an existing tensor (maybe a
 * itself) or a new initializer of a broadcast-compatible shape. */
static int pick_partner(gen *g, int a, bool need_exact, gshape *out) {
    if (rng_chance(&g->r, 0.5)) {
        int cand[MAX_TENSORS], n = 0;
        gshape o;
        for (int i = 0; i < g->nt; i++)
            if (!g->t[i].is_init && (!need_exact || g->t[i].exact) && broadcast(&g->t[a].sh, &g->t[i].sh, &o))
                cand[n++] = i;
        if (n > 0) {
            int b = cand[rng_int(&g->r, 0, n - 1)];
            broadcast(&g->t[a].sh, &g->t[b].sh, out);
            return b;
        }
    }
    const gshape *s = &g->t[a].sh;
    for (int attempt = 0; attempt < 8; attempt++) {
        gshape w = {.rank = s->rank == 0 ? 0 : rng_int(&g->r, 1, s->rank)};
        int extra = s->rank < MAX_RANK && w.rank == s->rank && rng_chance(&g->r, 0.15) ? 1 : 0;
        w.rank += extra;
        for (int i = 0; i < w.rank; i++) {
            int is = s->rank - w.rank + i;
            int64_t c = is >= 0 ? s->cls[is] : 1;
            int64_t v;
            if (is < 0) v = rng_int(&g->r, 1, 3);
            else if (c < 0) v = 1;
            else if (c == 1) v = rng_chance(&g->r, 0.25) ? rng_int(&g->r, 1, 7) : 1;
            else v = rng_chance(&g->r, 0.65) ? c : 1;
            w.cls[i] = w.val[i] = v;
        }
        gshape o;
        if (broadcast(s, &w, &o)) {
            *out = o;
            return init_f32(g, &w, -2.0f, 2.0f);
        }
    }
    *out = *s;
    return init_scalar(g, rng_float(&g->r, -2.0f, 2.0f));
}

/* Brings t[k] back under BOUND_LIMIT: a Mul by a power of two, which is
 * exact. Returns the tensor to use from now on. */
static int normalize(gen *g, int k) {
    if (g->t[k].bound <= BOUND_LIMIT || g->n_nodes >= g->target) return k;
    int e = (int)ceil(log2(g->t[k].bound));
    int s = init_scalar(g, ldexpf(1.0f, -e));
    const char *ins[] = {g->t[k].name, g->t[s].name};
    gshape sh = g->t[k].sh;
    return emit_float(g, "Mul", 2, ins, NULL, &sh, ldexp(g->t[k].bound, -e), g->t[k].exact);
}

static int budget(const gen *g) { return g->target - g->n_nodes; }

/* ---- one generator per op family; each returns false when it cannot apply
 * (no operand fits, no node budget) and then emits nothing. */

static bool gen_unary(gen *g) {
    static const char *const ops[] = {"Relu", "LeakyRelu", "Sigmoid", "Tanh", "Neg", "Abs", "Identity"};
    const char *op = ops[rng_int(&g->r, 0, 6)];
    int a = pick(g, false, NULL);
    const gtensor *x = &g->t[a];
    char attrs[64] = "";
    double bound = x->bound;
    bool exact = x->exact;
    if (strcmp(op, "LeakyRelu") == 0) {
        static const char *const alphas[] = {"0.01", "0.1", "0.2", "0.3"};
        if (rng_chance(&g->r, 0.7)) snprintf(attrs, sizeof attrs, "alpha: %s", alphas[rng_int(&g->r, 0, 3)]);
        exact = false;
    } else if (strcmp(op, "Sigmoid") == 0 || strcmp(op, "Tanh") == 0) {
        bound = 1;
        exact = false;
    }
    const char *ins[] = {x->name};
    gshape sh = x->sh;
    emit_float(g, op, 1, ins, attrs, &sh, bound, exact);
    return true;
}

/* Exp of a Tanh'd value: never overflows. */
static bool gen_exp(gen *g) {
    int a = pick(g, false, NULL);
    if (!g->t[a].from_tanh) {
        if (budget(g) < 2) return false;
        const char *ins[] = {g->t[a].name};
        gshape sh = g->t[a].sh;
        a = emit_float(g, "Tanh", 1, ins, NULL, &sh, 1, false);
    }
    const char *ins[] = {g->t[a].name};
    gshape sh = g->t[a].sh;
    emit_float(g, "Exp", 1, ins, NULL, &sh, 2.7182818284590452, false);
    return true;
}

/* Sqrt of Abs; of Abs + 1 when the value is not exact (near 0, sqrt would
 * magnify a rounding difference past any tolerance). */
static bool gen_sqrt(gen *g) {
    int a = pick(g, false, NULL);
    bool exact = g->t[a].exact;
    if (budget(g) < (exact ? 2 : 3)) return false;
    gshape sh = g->t[a].sh;
    const char *ins1[] = {g->t[a].name};
    int b = emit_float(g, "Abs", 1, ins1, NULL, &sh, g->t[a].bound, exact);
    if (!exact) {
        const char *ins2[] = {g->t[b].name, one_name(g)};
        b = emit_float(g, "Add", 2, ins2, NULL, &sh, g->t[b].bound + 1, false);
    }
    const char *ins3[] = {g->t[b].name};
    emit_float(g, "Sqrt", 1, ins3, NULL, &sh, sqrt(g->t[b].bound), false);
    return true;
}

static bool gen_binary(gen *g) {
    static const char *const ops[] = {"Add", "Sub", "Mul", "Min", "Max"};
    const char *op = ops[rng_int(&g->r, 0, 4)];
    bool minmax = op[0] == 'M' && op[1] != 'u';
    int a = pick(g, false, NULL);
    gshape sh;
    int b = pick_partner(g, a, false, &sh);
    int c = -1;
    if (minmax && rng_chance(&g->r, 0.3)) { /* variadic */
        gshape sh3;
        c = pick_partner(g, a, false, &sh3);
        gshape all;
        if (broadcast(&sh, &sh3, &all)) sh = all;
        else c = -1;
    }
    const char *ins[3] = {g->t[a].name, g->t[b].name, c >= 0 ? g->t[c].name : ""};
    if (rng_chance(&g->r, 0.3)) {
        ins[0] = g->t[b].name;
        ins[1] = g->t[a].name;
    }
    double ba = g->t[a].bound, bb = g->t[b].bound, bound;
    bool exact = false;
    if (op[0] == 'A' || op[0] == 'S') bound = ba + bb;
    else if (!minmax) bound = ba * bb;
    else {
        bound = fmax(ba, bb);
        if (c >= 0) bound = fmax(bound, g->t[c].bound);
        exact = g->t[a].exact && g->t[b].exact && (c < 0 || g->t[c].exact);
    }
    normalize(g, emit_float(g, op, c >= 0 ? 3 : 2, ins, NULL, &sh, bound, exact));
    return true;
}

/* a / (|b| + 1): never a zero divisor. */
static bool gen_div(gen *g) {
    if (budget(g) < 3) return false;
    int a = pick(g, false, NULL);
    gshape sh;
    int b = pick_partner(g, a, false, &sh);
    gshape bsh = g->t[b].sh;
    const char *ins1[] = {g->t[b].name};
    int ab = emit_float(g, "Abs", 1, ins1, NULL, &bsh, g->t[b].bound, g->t[b].exact);
    const char *ins2[] = {g->t[ab].name, one_name(g)};
    if (rng_chance(&g->r, 0.5)) {
        ins2[0] = one_name(g);
        ins2[1] = g->t[ab].name;
    }
    int d = emit_float(g, "Add", 2, ins2, NULL, &bsh, g->t[ab].bound + 1, false);
    const char *ins3[] = {g->t[a].name, g->t[d].name};
    emit_float(g, "Div", 2, ins3, NULL, &sh, g->t[a].bound, false);
    return true;
}

static bool gen_clip(gen *g) {
    int a = pick(g, false, NULL);
    float lo = rng_float(&g->r, -1.5f, -0.1f), hi = rng_float(&g->r, 0.1f, 1.5f);
    int form = rng_int(&g->r, 0, 3); /* both, min only, max only, neither */
    const char *ins[3] = {g->t[a].name, "", ""};
    int n = 1;
    double bound = g->t[a].bound;
    if (form == 0 || form == 1) {
        ins[1] = g->t[init_scalar(g, lo)].name;
        n = 2;
    }
    if (form == 0 || form == 2) {
        ins[2] = g->t[init_scalar(g, hi)].name;
        n = 3;
    }
    if (form == 0) bound = fmin(bound, fmax(-lo, hi));
    /* Clip's inputs go by position: "" stands for an omitted min. */
    gshape sh = g->t[a].sh;
    emit_float(g, "Clip", n, ins, NULL, &sh, bound, g->t[a].exact);
    return true;
}

static bool rank_at_least_1(const gtensor *t) { return t->sh.rank >= 1; }
static bool rank_at_least_2(const gtensor *t) { return t->sh.rank >= 2; }

static bool gen_softmax(gen *g) {
    int a = pick(g, false, rank_at_least_1);
    if (a < 0) return false;
    int r = g->t[a].sh.rank;
    char attrs[32] = "";
    if (rng_chance(&g->r, 0.8)) snprintf(attrs, sizeof attrs, "axis: %d", rng_int(&g->r, -r, r - 1));
    const char *ins[] = {g->t[a].name};
    gshape sh = g->t[a].sh;
    emit_float(g, "Softmax", 1, ins, attrs, &sh, 1, false);
    return true;
}

static bool gen_reduce(gen *g) {
    static const char *const ops[] = {"ReduceSum", "ReduceMean", "ReduceMax"};
    int which = rng_int(&g->r, 0, 2);
    int a = pick(g, false, rank_at_least_1);
    if (a < 0) return false;
    const gtensor *x = &g->t[a];
    int r = x->sh.rank;
    bool all = rng_chance(&g->r, 0.2);
    int64_t axes[MAX_RANK];
    int n = 0;
    gshape sh = x->sh;
    double count = 1;
    for (int i = 0; i < r; i++) {
        if (!all && !rng_chance(&g->r, 0.5)) continue;
        axes[n++] = rng_chance(&g->r, 0.3) ? i - r : i;
        count *= (double)sh.val[i];
        sh.cls[i] = sh.val[i] = 1;
    }
    if (n == 0) { /* at least one axis */
        int i = rng_int(&g->r, 0, r - 1);
        axes[n++] = i;
        count *= (double)sh.val[i];
        sh.cls[i] = sh.val[i] = 1;
    }
    /* Shuffle the axes: their order must not matter. */
    for (int i = n - 1; i > 0; i--) {
        int j = rng_int(&g->r, 0, i);
        int64_t tmp = axes[i];
        axes[i] = axes[j];
        axes[j] = tmp;
    }
    char attrs[96] = "", axes_name[NAME_LEN];
    size_t len = 0;
    if (rng_chance(&g->r, 0.5)) len += (size_t)snprintf(attrs, sizeof attrs, "keepdims: 1");
    const char *ins[2] = {x->name, ""};
    int n_in = 1;
    bool implicit_all = all && n == r && rng_chance(&g->r, 0.5);
    if (which == 0) {
        if (!implicit_all) {
            init_i64(g, axes_name, n, axes);
            ins[1] = axes_name;
            n_in = 2;
        }
    } else if (!implicit_all) {
        len += (size_t)snprintf(attrs + len, sizeof attrs - len, "%saxes: [", len ? ", " : "");
        for (int i = 0; i < n; i++)
            len += (size_t)snprintf(attrs + len, sizeof attrs - len, "%s%" PRId64, i ? ", " : "", axes[i]);
        snprintf(attrs + len, sizeof attrs - len, "]");
    }
    double bound = which == 0 ? x->bound * count : x->bound;
    bool exact = which == 2 && x->exact;
    char in0[NAME_LEN], in1[NAME_LEN];
    snprintf(in0, sizeof in0, "%s", ins[0]);
    snprintf(in1, sizeof in1, "%s", ins[1]);
    const char *names[] = {in0, in1};
    normalize(g, emit_float(g, ops[which], n_in, names, attrs, &sh, bound, exact));
    return true;
}

static bool gen_transpose(gen *g) {
    int a = pick(g, false, rank_at_least_1);
    if (a < 0) return false;
    const gtensor *x = &g->t[a];
    int r = x->sh.rank, perm[MAX_RANK];
    gshape sh = {.rank = r};
    char attrs[64] = "";
    if (rng_chance(&g->r, 0.2)) {
        for (int i = 0; i < r; i++) perm[i] = r - 1 - i; /* the default: reversed */
    } else {
        for (int i = 0; i < r; i++) perm[i] = i;
        for (int i = r - 1; i > 0; i--) {
            int j = rng_int(&g->r, 0, i), tmp = perm[i];
            perm[i] = perm[j];
            perm[j] = tmp;
        }
        size_t len = (size_t)snprintf(attrs, sizeof attrs, "perm: [");
        for (int i = 0; i < r; i++) len += (size_t)snprintf(attrs + len, sizeof attrs - len, "%s%d", i ? ", " : "", perm[i]);
        snprintf(attrs + len, sizeof attrs - len, "]");
    }
    for (int i = 0; i < r; i++) {
        sh.cls[i] = x->sh.cls[perm[i]];
        sh.val[i] = x->sh.val[perm[i]];
    }
    const char *ins[] = {x->name};
    emit_float(g, "Transpose", 1, ins, attrs, &sh, x->bound, x->exact);
    return true;
}

/* The class of the product of dims [from, to) of s: concrete if they all
 * are, else a new derived token. */
static int64_t product_class(gen *g, const gshape *s, int from, int to, int64_t *val) {
    int64_t c = 1, v = 1;
    bool concrete = true;
    for (int i = from; i < to; i++) {
        v *= s->val[i];
        if (s->cls[i] < 0) concrete = false;
        else c *= s->cls[i];
    }
    *val = v;
    return concrete ? c : g->next_token--;
}

/* Reshape to a flattened shape given by an int64 initializer: [-1],
 * [d0, -1] or [-1, dlast] (the kept dim concrete). */
static bool gen_reshape(gen *g) {
    int a = pick(g, false, rank_at_least_1);
    if (a < 0) return false;
    const gtensor *x = &g->t[a];
    int r = x->sh.rank, form = rng_int(&g->r, 0, 2);
    gshape sh;
    int64_t target[2];
    int n;
    if (form == 1 && r >= 2 && x->sh.cls[0] > 0) {
        n = 2;
        target[0] = x->sh.cls[0];
        target[1] = -1;
        sh.rank = 2;
        sh.cls[0] = sh.val[0] = x->sh.cls[0];
        sh.cls[1] = product_class(g, &x->sh, 1, r, &sh.val[1]);
    } else if (form == 2 && r >= 2 && x->sh.cls[r - 1] > 0) {
        n = 2;
        target[0] = -1;
        target[1] = x->sh.cls[r - 1];
        sh.rank = 2;
        sh.cls[0] = product_class(g, &x->sh, 0, r - 1, &sh.val[0]);
        sh.cls[1] = sh.val[1] = x->sh.cls[r - 1];
    } else {
        n = 1;
        sh.rank = 1;
        sh.cls[0] = product_class(g, &x->sh, 0, r, &sh.val[0]);
        target[0] = sh.cls[0] > 0 && rng_chance(&g->r, 0.3) ? sh.cls[0] : -1;
    }
    char shape_name[NAME_LEN];
    init_i64(g, shape_name, n, target);
    const char *ins[] = {x->name, shape_name};
    emit_float(g, "Reshape", 2, ins, NULL, &sh, x->bound, x->exact);
    return true;
}

/* Flatten to [d0, rest] with the target computed from the tensor's own
 * shape, as the digits CNN does: Shape -> Gather -> Unsqueeze -> Concat. */
static bool gen_shape_chain(gen *g) {
    if (budget(g) < 5) return false;
    int a = pick(g, false, rank_at_least_2);
    if (a < 0) return false;
    if (g->zero[0] == '\0') {
        int64_t z = 0, m = -1;
        init_i64(g, g->zero, 0, &z);
        init_i64(g, g->axes0, 1, &z);
        init_i64(g, g->minus1, 1, &m);
    }
    gtensor x = g->t[a];
    char shape[NAME_LEN], batch[NAME_LEN], batch1[NAME_LEN], flat[NAME_LEN];
    const char *i1[] = {x.name};
    emit(g, "Shape", 1, i1, NULL, false, shape);
    const char *i2[] = {shape, g->zero};
    emit(g, "Gather", 2, i2, rng_chance(&g->r, 0.5) ? "axis: 0" : NULL, false, batch);
    const char *i3[] = {batch, g->axes0};
    emit(g, "Unsqueeze", 2, i3, NULL, false, batch1);
    const char *i4[] = {batch1, g->minus1};
    emit(g, "Concat", 2, i4, "axis: 0", false, flat);
    gshape sh = {.rank = 2, .cls = {x.sh.cls[0]}, .val = {x.sh.val[0]}};
    sh.cls[1] = product_class(g, &x.sh, 1, x.sh.rank, &sh.val[1]);
    const char *i5[] = {x.name, flat};
    emit_float(g, "Reshape", 2, i5, NULL, &sh, x.bound, x.exact);
    return true;
}

/* Concat of 2 or 3 tensors of one shape (a tensor may repeat). */
static bool gen_concat(gen *g) {
    int a = pick(g, false, rank_at_least_1);
    if (a < 0) return false;
    int cand[MAX_TENSORS], n = 0;
    for (int i = 0; i < g->nt; i++)
        if ((i == a || !g->t[i].is_init) && same_shape(&g->t[i].sh, &g->t[a].sh)) cand[n++] = i;
    int k = rng_int(&g->r, 2, 3), parts[3] = {a};
    for (int i = 1; i < k; i++) parts[i] = cand[rng_int(&g->r, 0, n - 1)];
    const gshape *s = &g->t[a].sh;
    int r = s->rank;
    int axis = rng_chance(&g->r, 0.6) ? 0 : rng_int(&g->r, 0, r - 1);
    gshape sh = *s;
    sh.val[axis] *= k;
    if (numel(&sh) > NUMEL_LIMIT) return false;
    sh.cls[axis] = s->cls[axis] > 0 ? s->cls[axis] * k : g->next_token--;
    /* Shuffle which operand comes first. */
    int first = rng_int(&g->r, 0, k - 1), tmp = parts[0];
    parts[0] = parts[first];
    parts[first] = tmp;
    const char *ins[3];
    double bound = 0;
    bool exact = true;
    for (int i = 0; i < k; i++) {
        ins[i] = g->t[parts[i]].name;
        bound = fmax(bound, g->t[parts[i]].bound);
        exact = exact && g->t[parts[i]].exact;
    }
    char attrs[32];
    snprintf(attrs, sizeof attrs, "axis: %d", axis == 0 || rng_chance(&g->r, 0.5) ? axis : axis - r);
    emit_float(g, "Concat", k, ins, attrs, &sh, bound, exact);
    return true;
}

static bool last_dim_concrete(const gtensor *t) { return t->sh.rank >= 1 && t->sh.cls[t->sh.rank - 1] > 0; }

/* x [.., k] times a weight [k, m] with entries in [-1/k, 1/k]. */
static bool gen_matmul(gen *g) {
    int a = pick(g, false, last_dim_concrete);
    if (a < 0) return false;
    gshape s = g->t[a].sh;
    int64_t k = s.cls[s.rank - 1], m = rng_int(&g->r, 1, 7);
    gshape out = s;
    if (s.rank == 1) out.rank = 1;
    out.cls[out.rank - 1] = out.val[out.rank - 1] = m;
    if (numel(&out) > NUMEL_LIMIT) return false;
    gshape wsh = {.rank = 2, .cls = {k, m}, .val = {k, m}};
    float wmax = 1.0f / (float)k;
    int w = init_f32(g, &wsh, -wmax, wmax);
    const char *ins[] = {g->t[a].name, g->t[w].name};
    normalize(g, emit_float(g, "MatMul", 2, ins, NULL, &out, g->t[a].bound, false));
    return true;
}

static bool gemm_operand(const gtensor *t) { return t->sh.rank == 2 && (t->sh.cls[1] > 0 || t->sh.cls[0] > 0); }

static bool gen_gemm(gen *g) {
    int a = pick(g, false, gemm_operand);
    if (a < 0) return false;
    gshape s = g->t[a].sh;
    bool trans_a = s.cls[1] < 0 || (s.cls[0] > 0 && rng_chance(&g->r, 0.3));
    bool trans_b = rng_chance(&g->r, 0.5);
    int64_t k = trans_a ? s.cls[0] : s.cls[1], mc = trans_a ? s.cls[1] : s.cls[0], mv = trans_a ? s.val[1] : s.val[0];
    int64_t nn = rng_int(&g->r, 1, 7);
    gshape bsh = {.rank = 2, .cls = {trans_b ? nn : k, trans_b ? k : nn}, .val = {trans_b ? nn : k, trans_b ? k : nn}};
    float wmax = 1.0f / (float)k;
    int b = init_f32(g, &bsh, -wmax, wmax);
    gshape out = {.rank = 2, .cls = {mc, nn}, .val = {mv, nn}};
    const char *ins[3] = {g->t[a].name, g->t[b].name, ""};
    int n_in = 2;
    double cbound = 0;
    int cform = rng_int(&g->r, 0, 4);
    if (cform > 0) {
        gshape csh;
        if (cform == 1) csh = (gshape){.rank = 1, .cls = {nn}, .val = {nn}};
        else if (cform == 2) csh = (gshape){.rank = 2, .cls = {1, nn}, .val = {1, nn}};
        else if (cform == 3 && mc > 0) csh = (gshape){.rank = 2, .cls = {mc, nn}, .val = {mc, nn}};
        else csh = (gshape){.rank = 0};
        int c = init_f32(g, &csh, -1.0f, 1.0f);
        ins[2] = g->t[c].name;
        n_in = 3;
        cbound = 1;
    }
    /* The defaults (transA 0, transB 0, alpha 1, beta 1) written out or not. */
    char attrs[96] = "";
    double alpha = 1, beta = 1;
    size_t len = 0;
    if (trans_a || rng_chance(&g->r, 0.3))
        len += (size_t)snprintf(attrs + len, sizeof attrs - len, "%stransA: %d", len ? ", " : "", trans_a);
    if (trans_b || rng_chance(&g->r, 0.3))
        len += (size_t)snprintf(attrs + len, sizeof attrs - len, "%stransB: %d", len ? ", " : "", trans_b);
    if (rng_chance(&g->r, 0.3)) {
        static const double alphas[] = {0.5, 1.5, -1.0, 0.25};
        alpha = alphas[rng_int(&g->r, 0, 3)];
        len += (size_t)snprintf(attrs + len, sizeof attrs - len, "%salpha: %.2f", len ? ", " : "", alpha);
    }
    if (n_in == 3 && rng_chance(&g->r, 0.3)) {
        static const double betas[] = {0.5, 2.0, -1.0};
        beta = betas[rng_int(&g->r, 0, 2)];
        snprintf(attrs + len, sizeof attrs - len, "%sbeta: %.2f", len ? ", " : "", beta);
    }
    normalize(g, emit_float(g, "Gemm", n_in, ins, attrs, &out, fabs(alpha) * g->t[a].bound + fabs(beta) * cbound,
                            false));
    return true;
}

/* Where(Greater(x, y), a, b) with x and y exact: the condition is the
 * same on every device. */
static bool gen_where(gen *g) {
    if (budget(g) < 2) return false;
    int x = pick(g, true, NULL);
    gshape csh = g->t[x].sh;
    int y;
    if (rng_chance(&g->r, 0.5)) y = init_scalar(g, rng_float(&g->r, -1.0f, 1.0f));
    else y = pick_partner(g, x, true, &csh);
    const char *gi[] = {g->t[x].name, g->t[y].name};
    if (rng_chance(&g->r, 0.2)) {
        gi[0] = g->t[y].name;
        gi[1] = g->t[x].name;
    }
    gshape mid, out;
    int a = pick(g, false, NULL);
    if (!broadcast(&csh, &g->t[a].sh, &mid)) {
        a = init_scalar(g, rng_float(&g->r, -2.0f, 2.0f));
        mid = csh;
    }
    int b = rng_chance(&g->r, 0.4) ? -1 : pick(g, false, NULL);
    if (b < 0 || !broadcast(&mid, &g->t[b].sh, &out)) {
        b = init_scalar(g, rng_float(&g->r, -2.0f, 2.0f));
        out = mid;
    }
    char cond[NAME_LEN];
    emit(g, "Greater", 2, gi, NULL, false, cond);
    const char *wi[] = {cond, g->t[a].name, g->t[b].name};
    emit_float(g, "Where", 3, wi, NULL, &out, fmax(g->t[a].bound, g->t[b].bound), g->t[a].exact && g->t[b].exact);
    return true;
}

typedef struct gen_family {
    bool (*fn)(gen *);
    int weight;
} gen_family;

static const gen_family families[] = {
    {gen_unary, 14}, {gen_exp, 3},      {gen_sqrt, 3},    {gen_binary, 14}, {gen_div, 4},
    {gen_clip, 3},   {gen_softmax, 3},  {gen_reduce, 6},  {gen_transpose, 4}, {gen_reshape, 4},
    {gen_concat, 4}, {gen_matmul, 5},   {gen_gemm, 4},    {gen_where, 4},   {gen_shape_chain, 3},
};
#define N_FAMILIES (sizeof families / sizeof families[0])

static void random_shape(gen *g, gshape *s, bool sym) {
    s->rank = rng_int(&g->r, 1, MAX_RANK);
    for (int i = 0; i < s->rank; i++) s->cls[i] = s->val[i] = rng_int(&g->r, 1, 7);
    if (sym) {
        s->cls[0] = -1;
        s->val[0] = g->nval;
    }
}

/* A graph, as tgc/1 text, from `seed`: 1-3 float32 inputs, 3-25 nodes.
 * g keeps what the generator knew; the caller frees the text. */
static char *generate(uint64_t seed, gen *g) {
    memset(g, 0, sizeof *g);
    g->r.s = seed;
    g->target = rng_int(&g->r, 3, 25);
    g->next_token = -2;
    g->nval = rng_int(&g->r, 2, 4);
    bool sym = rng_chance(&g->r, 0.25);
    g->n_graph_inputs = rng_int(&g->r, 1, 3);
    gshape base;
    random_shape(g, &base, sym);
    for (int i = 0; i < g->n_graph_inputs; i++) {
        gshape s = base;
        if (i > 0 && rng_chance(&g->r, 0.5)) {
            random_shape(g, &s, sym && rng_chance(&g->r, 0.5));
        } else if (i > 0) { /* broadcast-compatible with the first */
            s.rank = rng_int(&g->r, 1, base.rank);
            for (int d = 0; d < s.rank; d++) {
                int bd = base.rank - s.rank + d;
                s.cls[d] = base.cls[bd];
                s.val[d] = base.val[bd];
                if (rng_chance(&g->r, 0.3)) s.cls[d] = s.val[d] = 1;
            }
        }
        char name[NAME_LEN];
        snprintf(name, sizeof name, "x%d", i);
        g->graph_input[i] = add_tensor(g, name, &s, 2.0, true);
        sb_printf(&g->inputs, "  - {name: %s, dtype: float32, shape: ", name);
        shape_yaml(&g->inputs, &s);
        sb_printf(&g->inputs, "}\n");
    }
    int total = 0;
    for (size_t i = 0; i < N_FAMILIES; i++) total += families[i].weight;
    while (g->n_nodes < g->target) {
        int w = rng_int(&g->r, 0, total - 1);
        size_t f = 0;
        while (w >= families[f].weight) w -= families[f++].weight;
        families[f].fn(g);
    }
    /* Outputs: every float result nobody reads, and some that are read. */
    sbuf out = {0};
    sb_printf(&out, "format: tgc/1\nname: diff_%016" PRIx64 "\ninputs:\n%soutputs: [", seed,
              g->inputs.p != NULL ? g->inputs.p : "");
    int n_out = 0;
    for (int i = 0; i < g->nt; i++) {
        const gtensor *t = &g->t[i];
        if (!t->is_node || (t->uses > 0 && !rng_chance(&g->r, 0.15))) continue;
        sb_printf(&out, "%s%s", n_out++ ? ", " : "", t->name);
    }
    /* Sometimes a graph input, a weight or a repeated output as well. */
    const char *extra[3] = {NULL, NULL, NULL};
    if (rng_chance(&g->r, 0.1)) extra[0] = g->t[g->graph_input[0]].name;
    for (int i = 0; i < g->nt && rng_chance(&g->r, 0.1); i++)
        if (g->t[i].is_init) {
            extra[1] = g->t[i].name;
            break;
        }
    if (rng_chance(&g->r, 0.1)) extra[2] = g->node[g->n_nodes - 1].name;
    for (int i = 0; i < 3; i++)
        if (extra[i] != NULL) sb_printf(&out, "%s%s", n_out++ ? ", " : "", extra[i]);
    sb_printf(&out, "]\n");
    g->n_outputs = n_out;
    if (g->inits.len > 0) sb_printf(&out, "initializers:\n%s", g->inits.p);
    sb_printf(&out, "nodes:\n%s", g->nodes.p);
    sb_free(&g->inputs);
    sb_free(&g->inits);
    sb_free(&g->nodes);
    return out.p;
}

/* ---- running and comparing ------------------------------------------------------- */

typedef struct graph_case {
    uint64_t seed;
    char *yaml;
    gen gen;
    tgc_graph *g;
    int n_feeds;
    const char *feed_names[3];
    tgc_tensor *feeds[3];
    float *feed_copy[3];
    int n_out;
} graph_case;

static int failures_shown;
static long n_failures;

static void show_failure(const graph_case *c, const char *fmt, ...) {
    n_failures++;
    if (failures_shown >= MAX_SHOWN_FAILURES) return;
    failures_shown++;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "\n  differential failure, seed 0x%016" PRIx64 " (TGC_DIFF_SEED=0x%016" PRIx64 "): ", c->seed,
            c->seed);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n---- graph ----\n%s---- end ----\n", c->yaml);
}

static tgc_session *open_session(const graph_case *c, const char *devices, const char *threads) {
    tgc_diags *d = tgc_diags_create();
    tgc_session *s = NULL;
    tgc_session_options o = {.soft_placement = 1, .threads = threads};
    if (tgc_session_create(c->g, devices, &o, d, &s) != TGC_OK) {
        char msg[1024] = "";
        if (tgc_diags_count(d) > 0) snprintf(msg, sizeof msg, "%s", tgc_diag_message(d, 0));
        show_failure(c, "session on %s (threads %s) failed: %s", devices, threads ? threads : "default", msg);
        tgc_diags_print(d, stderr);
    }
    tgc_diags_free(d);
    return s;
}

static void release_all(tgc_tensor **t, int n) {
    for (int i = 0; t != NULL && i < n; i++) tgc_tensor_release(t[i]);
    free(t);
}

static bool same_layout(const tgc_tensor *a, const tgc_tensor *b) {
    if (tgc_tensor_dtype(a) != tgc_tensor_dtype(b) || tgc_tensor_rank(a) != tgc_tensor_rank(b)) return false;
    for (int i = 0; i < tgc_tensor_rank(a); i++)
        if (tgc_tensor_dims(a)[i] != tgc_tensor_dims(b)[i]) return false;
    return true;
}

/* Compares got against want: bitwise, or within 1e-4 * max(1, |want|)
 * with NaN matching NaN. Reports the first difference. */
static bool compare(const graph_case *c, const char *what, tgc_session *s, tgc_tensor *const *want,
                    tgc_tensor *const *got, bool bitwise, double *worst) {
    for (int i = 0; i < c->n_out; i++) {
        const char *name = tgc_session_output_name(s, i);
        if (!same_layout(want[i], got[i])) {
            show_failure(c, "%s: output '%s' has another dtype or shape than on cpu", what, name);
            return false;
        }
        int64_t n = tgc_tensor_numel(want[i]);
        const float *a = tgc_tensor_data(want[i]), *b = tgc_tensor_data(got[i]);
        if (bitwise) {
            if (n > 0 && memcmp(a, b, (size_t)n * sizeof(float)) != 0) {
                int64_t k = 0;
                while (k < n && memcmp(&a[k], &b[k], sizeof(float)) == 0) k++;
                show_failure(c, "%s: output '%s' is not bitwise equal to cpu's: element %" PRId64 " is %.9g, not %.9g",
                             what, name, k, (double)b[k], (double)a[k]);
                return false;
            }
            continue;
        }
        for (int64_t k = 0; k < n; k++) {
            double x = a[k], y = b[k];
            bool ok = isnan(x) ? isnan(y) : !isnan(y) && fabs(x - y) <= 1e-4 * fmax(1.0, fabs(x));
            if (!isnan(x) && !isnan(y) && isfinite(x - y)) *worst = fmax(*worst, fabs(x - y) / fmax(1.0, fabs(x)));
            if (!ok) {
                show_failure(c, "%s: output '%s' element %" PRId64 " is %.9g, cpu has %.9g", what, name, k, y, x);
                return false;
            }
        }
    }
    return true;
}

static tgc_tensor **run_session(const graph_case *c, tgc_session *s, const char *what) {
    tgc_tensor **outs = calloc((size_t)c->n_out + 1, sizeof *outs);
    tgc_diags *d = tgc_diags_create();
    if (tgc_session_run(s, c->n_feeds, c->feed_names, c->feeds, outs, d) != TGC_OK) {
        char msg[1024] = "";
        if (tgc_diags_count(d) > 0) snprintf(msg, sizeof msg, "%s", tgc_diag_message(d, 0));
        show_failure(c, "%s: run failed: %s", what, msg);
        free(outs);
        outs = NULL;
    }
    tgc_diags_free(d);
    return outs;
}

/* The feeds are never written. */
static bool feeds_intact(const graph_case *c, const char *what) {
    for (int i = 0; i < c->n_feeds; i++)
        if (memcmp(tgc_tensor_data(c->feeds[i]), c->feed_copy[i],
                   (size_t)tgc_tensor_numel(c->feeds[i]) * sizeof(float)) != 0) {
            show_failure(c, "%s: graph input '%s' was overwritten", what, c->feed_names[i]);
            return false;
        }
    return true;
}

#define MAX_SESSION_DEVICES 4

/* Every device of the session holds what it held after creation. */
static bool memory_back(const graph_case *c, tgc_session *s, const tgc_memory_figures *base, const char *what) {
    for (int i = 0; i < tgc_session_device_count(s) && i < MAX_SESSION_DEVICES; i++) {
        tgc_memory_figures now = tgc_session_memory(s, i);
        if (now.live_buffers != base[i].live_buffers || now.bytes_in_use != base[i].bytes_in_use) {
            show_failure(c, "%s: %s holds %" PRId64 " buffers (%" PRId64 " bytes) after the run, %" PRId64
                            " (%" PRId64 " bytes) after creation",
                         what, tgc_session_device_name(s, i), now.live_buffers, now.bytes_in_use, base[i].live_buffers,
                         base[i].bytes_in_use);
            return false;
        }
    }
    return true;
}

/* Opens a session on `devices`, runs it `runs` times; each run must give
 * the same bits as the first, leave the devices as they were after
 * creation and the feeds untouched. Compares with `want` (bitwise or
 * within tolerance) unless want is NULL; returns the last run's outputs
 * if keep, else NULL. */
static tgc_tensor **check_variant(const graph_case *c, const char *devices, const char *threads, int runs,
                                  tgc_tensor **want, bool bitwise, double *worst, bool *ok, bool keep) {
    char what[128];
    snprintf(what, sizeof what, "devices %s, threads %s", devices, threads ? threads : "default");
    int64_t host_before = tgc_device_stats(tgc_host_device()).live_buffers;
    tgc_session *s = open_session(c, devices, threads);
    if (s == NULL) {
        *ok = false;
        return NULL;
    }
    if (tgc_session_output_count(s) != c->n_out) {
        show_failure(c, "%s: %d outputs, the graph has %d", what, tgc_session_output_count(s), c->n_out);
        *ok = false;
        tgc_session_free(s);
        return NULL;
    }
    tgc_memory_figures base[MAX_SESSION_DEVICES];
    for (int i = 0; i < tgc_session_device_count(s) && i < MAX_SESSION_DEVICES; i++) base[i] = tgc_session_memory(s, i);
    tgc_tensor **first = NULL, **last = NULL;
    for (int r = 0; r < runs && *ok; r++) {
        tgc_tensor **outs = run_session(c, s, what);
        if (outs == NULL) {
            *ok = false;
            break;
        }
        *ok = memory_back(c, s, base, what) && feeds_intact(c, what);
        if (*ok && want != NULL) *ok = compare(c, what, s, want, outs, bitwise, worst);
        if (*ok && first != NULL) *ok = compare(c, "a second run", s, first, outs, true, worst);
        if (first == NULL) first = outs;
        else {
            release_all(last, c->n_out);
            last = outs;
        }
    }
    tgc_session_free(s);
    if (last == NULL) {
        last = first;
        first = NULL;
    }
    release_all(first, c->n_out);
    /* Only the outputs we still hold remain in host memory. */
    int64_t host_after = tgc_device_stats(tgc_host_device()).live_buffers;
    int64_t held = last != NULL ? c->n_out : 0;
    if (*ok && host_after != host_before + held) {
        show_failure(c, "%s: host memory holds %" PRId64 " buffers after the session, %" PRId64 " expected", what,
                     host_after, host_before + held);
        *ok = false;
    }
    if (!keep || !*ok) {
        release_all(last, c->n_out);
        last = NULL;
    }
    return last;
}

/* Tensors that cross devices in the placement on `devices`: one per
 * (producer node, consuming device), as the partitioner sends them. */
static long cross_device_pairs(const graph_case *c, const char *devices, const char *second, long *on_second) {
    tgc_diags *d = tgc_diags_create();
    tgc_placed *p = NULL;
    tgc_place_options o = {.soft_placement = 1, .optimize = TGC_OPTIMIZE_NONE}; /* the generated nodes' names */
    long pairs = 0;
    if (tgc_graph_place(c->g, devices, &o, d, &p) == TGC_OK) {
        const gen *g = &c->gen;
        for (int i = 0; i < g->n_nodes; i++) {
            const char *from = tgc_placed_device_name(p, g->node[i].name);
            if (from != NULL && strcmp(from, second) == 0) (*on_second)++;
            const char *seen[MAX_SESSION_DEVICES];
            int n_seen = 0;
            for (int j = 0; j < g->n_nodes; j++)
                for (int k = 0; k < g->node[j].n_inputs; k++) {
                    if (strcmp(g->node[j].inputs[k], g->node[i].name) != 0) continue;
                    const char *to = tgc_placed_device_name(p, g->node[j].name);
                    bool dup = from == NULL || to == NULL || strcmp(from, to) == 0;
                    for (int s = 0; !dup && s < n_seen; s++) dup = strcmp(seen[s], to) == 0;
                    if (!dup && n_seen < MAX_SESSION_DEVICES) {
                        seen[n_seen++] = to;
                        pairs++;
                    }
                }
        }
    }
    tgc_placed_free(p);
    tgc_diags_free(d);
    return pairs;
}

static bool have_gpu(void) {
    tgc_device_info info[4];
    return tgc_devices_list(info, 4) > 1;
}

typedef struct totals {
    long graphs, nodes, op_nodes, runs, cpu_pairs, gpu_pairs, on_cpu1, on_gpu0, failures;
    double worst_gpu;
} totals;

/* Generates, loads and runs one graph on every variant. */
static void run_case(uint64_t seed, int index, bool gpu, bool show_yaml, totals *tot) {
    graph_case *c = calloc(1, sizeof *c);
    c->seed = seed;
    c->yaml = generate(seed, &c->gen);
    if (show_yaml) printf("\n---- seed 0x%016" PRIx64 " ----\n%s", seed, c->yaml);
    if (getenv("TGC_DIFF_TRACE") != NULL) fprintf(stderr, "\n  case %d: TGC_DIFF_SEED=0x%016" PRIx64, index, seed);
    int64_t blocks_before = tgc_host_alloc_stats_get().live_blocks;
    tgc_diags *d = tgc_diags_create();
    char file[64];
    snprintf(file, sizeof file, "diff_%016" PRIx64 ".yaml", seed);
    if (tgc_graph_load_string(c->yaml, strlen(c->yaml), file, NULL, d, &c->g) != TGC_OK) {
        char msg[1024] = "";
        if (tgc_diags_count(d) > 0) snprintf(msg, sizeof msg, "%s", tgc_diag_message(d, 0));
        show_failure(c, "the generated graph does not load (a generator bug): %s", msg);
        tgc_diags_print(d, stderr);
        CU_FAIL("a generated graph does not load");
        tgc_diags_free(d);
        free(c->yaml);
        free(c);
        return;
    }
    tgc_diags_free(d);
    tot->graphs++;
    tot->nodes += (long)tgc_graph_node_count(c->g);

    /* Feeds: values in [-2, 2], N bound to the generator's value. */
    rng fr = {seed ^ 0x5eedf00dull};
    c->n_feeds = c->gen.n_graph_inputs;
    for (int i = 0; i < c->n_feeds; i++) {
        const gtensor *t = &c->gen.t[c->gen.graph_input[i]];
        int64_t n = numel(&t->sh);
        c->feed_copy[i] = malloc((size_t)n * sizeof(float) + 1);
        for (int64_t k = 0; k < n; k++) c->feed_copy[i][k] = rng_float(&fr, -2.0f, 2.0f);
        c->feed_names[i] = t->name;
        CU_ASSERT_EQUAL_FATAL(tgc_tensor_create(TGC_FLOAT32, t->sh.rank, t->sh.val, c->feed_copy[i], &c->feeds[i]),
                              TGC_OK);
    }
    c->n_out = c->gen.n_outputs;

    static const char *const pair_threads[] = {NULL, "cpu0=1,cpu1=2", "cpu0=2,cpu1=1", "cpu0=1,cpu1=1",
                                               "cpu0=3,cpu1=2"};
    static const struct {
        const char *devices, *threads;
    } others[] = {{"cpu", "cpu=1"}, {"cpu1,cpu0", NULL}, {"cpu", "cpu=3"}, {"cpu0,cpu1", "cpu0=4,cpu1=1"}};
    static const struct {
        const char *devices, *threads;
    } gpus[] = {{"cpu,gpu0", NULL},  {"cpu,gpu0", "cpu=1,gpu0=2"}, {"gpu0,cpu", NULL},
                {"gpu0", "gpu0=2"},  {"cpu,gpu0", "cpu=2,gpu0=1"}};

    bool ok = c->n_out > 0;
    double worst = 0;
    tgc_tensor **want = ok ? check_variant(c, "cpu", NULL, 1, NULL, true, &worst, &ok, true) : NULL;
    if (ok) {
        tot->runs++;
        check_variant(c, "cpu0,cpu1", pair_threads[index % 5], 2, want, true, &worst, &ok, false);
        tot->runs += 2;
    }
    if (ok) {
        check_variant(c, others[index % 4].devices, others[index % 4].threads, 1, want, true, &worst, &ok, false);
        tot->runs++;
    }
    if (ok && gpu) {
        worst = 0;
        check_variant(c, gpus[index % 5].devices, gpus[index % 5].threads, 2, want, false, &worst, &ok, false);
        tot->runs += 2;
        tot->worst_gpu = fmax(tot->worst_gpu, worst);
    }
    tot->op_nodes += c->gen.n_nodes;
    tot->cpu_pairs += cross_device_pairs(c, "cpu0,cpu1", "cpu1", &tot->on_cpu1);
    if (gpu) tot->gpu_pairs += cross_device_pairs(c, "cpu,gpu0", "gpu0", &tot->on_gpu0);
    if (!ok) tot->failures++;
    CU_ASSERT(ok);
    release_all(want, c->n_out);

    for (int i = 0; i < c->n_feeds; i++) {
        tgc_tensor_release(c->feeds[i]);
        free(c->feed_copy[i]);
    }
    tgc_graph_free(c->g);
    int64_t blocks_after = tgc_host_alloc_stats_get().live_blocks;
    if (ok && blocks_after != blocks_before) {
        show_failure(c, "%" PRId64 " host blocks live after the case, %" PRId64 " before", blocks_after,
                     blocks_before);
        CU_FAIL("host blocks leaked");
    }
    free(c->yaml);
    free(c);
}

static void test_random_graphs_agree_across_devices(void) {
    bool gpu = have_gpu();
    const char *one = getenv("TGC_DIFF_SEED"), *count = getenv("TGC_DIFF_GRAPHS");
    int n = count != NULL ? atoi(count) : N_GRAPHS;
    totals tot = {0};
    memset(op_counts, 0, sizeof op_counts);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (one != NULL) {
        run_case(strtoull(one, NULL, 0), 0, gpu, true, &tot);
    } else {
        const char *base = getenv("TGC_DIFF_BASE_SEED");
        rng seeds = {base != NULL ? strtoull(base, NULL, 0) : BASE_SEED};
        for (int i = 0; i < n; i++) run_case(rng_next(&seeds), i, gpu, false, &tot);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    printf("\n  %ld graphs, %ld op nodes (%ld with inputs and weights), %ld runs in %.1f s; %ld failed%s\n",
           tot.graphs, tot.op_nodes, tot.nodes, tot.runs, secs, tot.failures, gpu ? "" : " (no gpu: cpu,gpu0 not run)");
    printf("  placed on cpu0,cpu1: %ld op nodes on cpu1, %ld tensors crossing devices\n", tot.on_cpu1, tot.cpu_pairs);
    if (gpu)
        printf("  placed on cpu,gpu0: %ld op nodes on gpu0, %ld tensors crossing devices\n", tot.on_gpu0, tot.gpu_pairs);
    if (gpu) printf("  sessions with gpu0 vs cpu: worst relative difference %.3g\n", tot.worst_gpu);
    printf("  ops:");
    int covered = 0;
    for (size_t i = 0; i < N_OP_NAMES; i++) {
        printf("%s %s %ld", i ? "," : "", op_names[i], op_counts[i]);
        covered += op_counts[i] > 0;
    }
    printf("\n  %d of %zu ops covered\n", covered, N_OP_NAMES);
    if (one == NULL && count == NULL) {
        CU_ASSERT(tot.graphs >= N_GRAPHS);
        CU_ASSERT_EQUAL(covered, (int)N_OP_NAMES);
    }
    CU_ASSERT_EQUAL(tot.failures, 0);
}

/* ---- reproductions of bugs the generator found ----------------------------------- */

/* Eight MatMuls and a Gemm on gpu0, all ready at once, with four gpu0
 * threads: CLBlast's first calls in the process come from several threads
 * together. CLBlast fills a static table on first use without a lock
 * (clblast::Database::Database): without tgc_cl_blas_lock around every
 * CLBlast call this crashed about one run in seven (use after free, double
 * free, std::bad_alloc) and ThreadSanitizer and AddressSanitizer reported
 * it. Must be the suite's first test: only the first use races. */
static void test_first_clblast_calls_from_two_gpu_threads(void) {
    if (!have_gpu()) return;
    static const char yaml[] =
        "format: tgc/1\n"
        "inputs: [{name: x, dtype: float32, shape: [4, 4]}]\n"
        "outputs: [m0, m1, m2, m3, m4, m5, m6, m7, g0]\n"
        "initializers:\n"
        "  - {name: w, dtype: float32, shape: [4, 4], values: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]}\n"
        "nodes:\n"
        "  - {name: m0, op: MatMul, inputs: [x, w], device: gpu0}\n"
        "  - {name: m1, op: MatMul, inputs: [x, w], device: gpu0}\n"
        "  - {name: m2, op: MatMul, inputs: [x, w], device: gpu0}\n"
        "  - {name: m3, op: MatMul, inputs: [x, w], device: gpu0}\n"
        "  - {name: m4, op: MatMul, inputs: [x, w], device: gpu0}\n"
        "  - {name: m5, op: MatMul, inputs: [x, w], device: gpu0}\n"
        "  - {name: m6, op: MatMul, inputs: [x, w], device: gpu0}\n"
        "  - {name: m7, op: MatMul, inputs: [x, w], device: gpu0}\n"
        "  - {name: g0, op: Gemm, inputs: [x, w], attrs: {transB: 1}, device: gpu0}\n";
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_load_string(yaml, strlen(yaml), "clblast_first_use.yaml", NULL, d, &g), TGC_OK);
    tgc_session *s = NULL;
    tgc_session_options o = {.threads = "gpu0=4"};
    CU_ASSERT_EQUAL_FATAL(tgc_session_create(g, "cpu,gpu0", &o, d, &s), TGC_OK);
    float xs[16];
    for (int i = 0; i < 16; i++) xs[i] = (float)(i % 5) - 2.0f;
    tgc_tensor *x = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_create(TGC_FLOAT32, 2, (int64_t[]){4, 4}, xs, &x), TGC_OK);
    const char *names[] = {"x"};
    tgc_tensor *outs[9] = {0};
    CU_ASSERT_EQUAL(tgc_session_run(s, 1, names, &x, outs, d), TGC_OK);
    for (int t = 0; t < 9 && outs[0] != NULL; t++) {
        const float *y = tgc_tensor_data(outs[t]);
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) {
                float want = 0;
                for (int k = 0; k < 4; k++) want += xs[i * 4 + k] * (float)(t < 8 ? k * 4 + j + 1 : j * 4 + k + 1);
                CU_ASSERT_DOUBLE_EQUAL(y[i * 4 + j], want, 1e-4);
            }
        tgc_tensor_release(outs[t]);
    }
    tgc_tensor_release(x);
    tgc_session_free(s);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

TGC_TEST_MAIN("differential",
              {"the first CLBlast calls come from two gpu threads", test_first_clblast_calls_from_two_gpu_threads},
              {"random graphs agree across devices", test_random_graphs_agree_across_devices})
