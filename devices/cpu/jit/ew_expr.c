/* A recursive-descent parser for the rows' float expressions
 * (devices/cpu/jit/ew_expr.h has the language). Identical subtrees are
 * made once (hash-consing by a linear search: trees are small), so the
 * tree is a DAG and a generator that emits each node once computes a
 * repeated call, Mish's EXP(x), once. */
#include "devices/cpu/jit/ew_expr.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
    const char *s, *p; /* the text; the next character */
    tgc_ew_tree *t;
    char *err;
    size_t err_size;
    bool failed;
} parser;

static const char *const fn_names[TGC_EW_FN_COUNT] = {
#define FN_NAME(name) [TGC_EW_FN_##name] = #name,
    TGC_EW_FUNCS(FN_NAME)
#undef FN_NAME
};

int tgc_ew_fn_arity(tgc_ew_fn fn) { return fn == TGC_EW_FN_POW || fn == TGC_EW_FN_FMOD ? 2 : 1; }

static int fail(parser *ps, const char *fmt, ...) {
    if (!ps->failed) {
        char what[96];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof what, fmt, ap);
        va_end(ap);
        snprintf(ps->err, ps->err_size, "at offset %d of \"%s\": %s", (int)(ps->p - ps->s), ps->s, what);
    }
    ps->failed = true;
    return -1;
}

static void skip_space(parser *ps) {
    while (isspace((unsigned char)*ps->p)) ps->p++;
}

/* Consumes `tok` when it comes next (after spaces). */
static bool accept(parser *ps, const char *tok) {
    skip_space(ps);
    size_t n = strlen(tok);
    if (strncmp(ps->p, tok, n) != 0) return false;
    /* "<" must not take the first character of "<=" (nor "=" of "==") */
    if (n == 1 && (tok[0] == '<' || tok[0] == '>' || tok[0] == '=' || tok[0] == '!') && ps->p[1] == '=') return false;
    ps->p += n;
    return true;
}

static void expect(parser *ps, const char *tok) {
    if (!accept(ps, tok)) fail(ps, "expected '%s'", tok);
}

/* The node (kind, value, index, kids), made once. */
static int node(parser *ps, tgc_ew_node_kind kind, float value, int index, int k0, int k1, int k2) {
    if (ps->failed || k0 < -1 || k1 < -1 || k2 < -1) return -1;
    tgc_ew_tree *t = ps->t;
    tgc_ew_node nd = {.kind = kind, .value = value, .index = index, .kid = {k0, k1, k2}};
    for (int i = 0; i < t->n; i++) {
        const tgc_ew_node *o = &t->nodes[i];
        if (o->kind == kind && o->index == index && o->kid[0] == k0 && o->kid[1] == k1 && o->kid[2] == k2 &&
            memcmp(&o->value, &value, sizeof value) == 0)
            return i;
    }
    if (t->n == TGC_EW_TREE_MAX) return fail(ps, "more than %d nodes", TGC_EW_TREE_MAX);
    t->nodes[t->n] = nd;
    return t->n++;
}

static int parse_or(parser *ps);

static int parse_call(parser *ps, const char *name, size_t len) {
    int args[3] = {-1, -1, -1}, n = 0;
    expect(ps, "(");
    do {
        if (n == 3) return fail(ps, "too many arguments");
        args[n++] = parse_or(ps);
    } while (!ps->failed && accept(ps, ","));
    expect(ps, ")");
    if (ps->failed) return -1;
#define IS(word) (len == sizeof(word) - 1 && strncmp(name, word, len) == 0)
    if (IS("SEL")) {
        if (n != 3) return fail(ps, "SEL takes 3 arguments");
        return node(ps, TGC_EWX_SEL, 0.0f, 0, args[0], args[1], args[2]);
    }
    if (IS("ISNAN") || IS("ABS")) {
        if (n != 1) return fail(ps, "%.*s takes 1 argument", (int)len, name);
        return node(ps, IS("ABS") ? TGC_EWX_ABS : TGC_EWX_ISNAN, 0.0f, 0, args[0], -1, -1);
    }
#undef IS
    for (int f = 0; f < TGC_EW_FN_COUNT; f++) {
        if (strlen(fn_names[f]) != len || strncmp(name, fn_names[f], len) != 0) continue;
        if (n != tgc_ew_fn_arity((tgc_ew_fn)f))
            return fail(ps, "%s takes %d argument(s)", fn_names[f], tgc_ew_fn_arity((tgc_ew_fn)f));
        return node(ps, TGC_EWX_CALL, 0.0f, f, args[0], args[1], -1);
    }
    return fail(ps, "unknown function '%.*s'", (int)len, name);
}

static int parse_primary(parser *ps) {
    skip_space(ps);
    const char *p = ps->p;
    if (accept(ps, "(")) {
        int e = parse_or(ps);
        expect(ps, ")");
        return e;
    }
    if (isdigit((unsigned char)*p) || *p == '.') {
        char *end;
        float v = strtof(p, &end); /* correctly rounded, as the compiler reads the literal */
        if (end == p) return fail(ps, "bad number");
        ps->p = end;
        if (*ps->p == 'f' || *ps->p == 'F') ps->p++;
        return node(ps, TGC_EWX_CONST, v, 0, -1, -1, -1);
    }
    if (!isalpha((unsigned char)*p) && *p != '_') return fail(ps, "expected a value");
    size_t len = 0;
    while (isalnum((unsigned char)p[len]) || p[len] == '_') len++;
    ps->p += len;
    skip_space(ps);
    if (*ps->p == '(') return parse_call(ps, p, len);
    if (len == 1 && (*p == 'x' || *p == 'a' || *p == 'b'))
        return node(ps, *p == 'x' ? TGC_EWX_X : *p == 'a' ? TGC_EWX_A : TGC_EWX_B, 0.0f, 0, -1, -1, -1);
    if (len == 2 && p[0] == 'P' && p[1] >= '0' && p[1] < '0' + TGC_EW_MAX_PARAMS)
        return node(ps, TGC_EWX_PARAM, 0.0f, p[1] - '0', -1, -1, -1);
    if (len == 8 && strncmp(p, "INFINITY", 8) == 0) return node(ps, TGC_EWX_CONST, INFINITY, 0, -1, -1, -1);
    return fail(ps, "unknown name '%.*s'", (int)len, p);
}

static int parse_unary(parser *ps) {
    if (accept(ps, "-")) {
        int e = parse_unary(ps);
        return node(ps, TGC_EWX_NEG, 0.0f, 0, e, -1, -1);
    }
    return parse_primary(ps);
}

/* One left-associative level: operands from `next`, operators `ops`
 * (NULL-terminated) making kinds `kinds`. */
static int parse_level(parser *ps, int (*next)(parser *), const char *const *ops, const tgc_ew_node_kind *kinds) {
    int left = next(ps);
    for (;;) {
        int k = 0;
        while (ops[k] != NULL && !accept(ps, ops[k])) k++;
        if (ops[k] == NULL || ps->failed) return left;
        int right = next(ps);
        left = node(ps, kinds[k], 0.0f, 0, left, right, -1);
    }
}

static int parse_mul(parser *ps) {
    static const char *const ops[] = {"*", "/", NULL};
    static const tgc_ew_node_kind kinds[] = {TGC_EWX_MUL, TGC_EWX_DIV};
    return parse_level(ps, parse_unary, ops, kinds);
}

static int parse_add(parser *ps) {
    static const char *const ops[] = {"+", "-", NULL};
    static const tgc_ew_node_kind kinds[] = {TGC_EWX_ADD, TGC_EWX_SUB};
    return parse_level(ps, parse_mul, ops, kinds);
}

static int parse_rel(parser *ps) {
    static const char *const ops[] = {"<=", ">=", "<", ">", NULL};
    static const tgc_ew_node_kind kinds[] = {TGC_EWX_LE, TGC_EWX_GE, TGC_EWX_LT, TGC_EWX_GT};
    return parse_level(ps, parse_add, ops, kinds);
}

static int parse_eq(parser *ps) {
    static const char *const ops[] = {"==", "!=", NULL};
    static const tgc_ew_node_kind kinds[] = {TGC_EWX_EQ, TGC_EWX_NE};
    return parse_level(ps, parse_rel, ops, kinds);
}

static int parse_and(parser *ps) {
    static const char *const ops[] = {"&", NULL};
    static const tgc_ew_node_kind kinds[] = {TGC_EWX_AND};
    return parse_level(ps, parse_eq, ops, kinds);
}

static int parse_or(parser *ps) {
    static const char *const ops[] = {"|", NULL};
    static const tgc_ew_node_kind kinds[] = {TGC_EWX_OR};
    return parse_level(ps, parse_and, ops, kinds);
}

bool tgc_ew_tree_is_mask(const tgc_ew_tree *t, int i) {
    switch (t->nodes[i].kind) {
    case TGC_EWX_LT: case TGC_EWX_LE: case TGC_EWX_GT: case TGC_EWX_GE: case TGC_EWX_EQ: case TGC_EWX_NE:
    case TGC_EWX_OR: case TGC_EWX_AND: case TGC_EWX_ISNAN:
        return true;
    default:
        return false;
    }
}

/* Every operand of the right sort: masks where masks go, values elsewhere. */
static bool check_sorts(parser *ps) {
    const tgc_ew_tree *t = ps->t;
    for (int i = 0; i < t->n; i++) {
        const tgc_ew_node *nd = &t->nodes[i];
        for (int k = 0; k < 3; k++) {
            if (nd->kid[k] < 0) continue;
            bool want_mask = nd->kind == TGC_EWX_OR || nd->kind == TGC_EWX_AND || (nd->kind == TGC_EWX_SEL && k == 0);
            if (tgc_ew_tree_is_mask(t, nd->kid[k]) != want_mask) {
                fail(ps, "a %s where a %s belongs", want_mask ? "value" : "mask", want_mask ? "mask" : "value");
                return false;
            }
        }
    }
    return true;
}

bool tgc_ew_tree_parse(const char *text, tgc_ew_tree *t, char *err, size_t err_size) {
    parser ps = {.s = text != NULL ? text : "", .t = t, .err = err, .err_size = err_size};
    ps.p = ps.s;
    memset(t, 0, sizeof *t);
    t->root = parse_or(&ps);
    skip_space(&ps);
    if (!ps.failed && *ps.p != '\0') fail(&ps, "unexpected '%c'", *ps.p);
    if (!ps.failed && tgc_ew_tree_is_mask(t, t->root)) fail(&ps, "the expression is a mask, not a value");
    return !ps.failed && check_sorts(&ps);
}
