/* A fusion group's program as LLVM IR (devices/cpu/jit/jit.h has the
 * contract): one function
 *     void NAME(i64 nvec, float **in, float *y)
 * looping over blocks of UNROLL vectors <L x float>, then over the last
 * vectors one at a time; each step is its row's expression tree
 * (devices/cpu/jit/ew_expr.h) emitted node by node: + - * / as fadd fsub
 * fmul fdiv, comparisons as fcmp (ordered, except != unordered, as C),
 * SEL as select, ABS by clearing the sign bit, and the named functions as
 * calls of the module's tgc_jit_fn_<NAME> (the bitcode of
 * devices/cpu/jit/bitcode/jit_funcs.c: the same code the row loops
 * inline) on a vector in a stack slot, which the optimizer inlines and
 * keeps in registers. Scalar inputs and the parameters are loaded or made
 * once, before the loop. */
#include "devices/cpu/jit/llvm_jit.h"

#include "devices/cpu/jit/ew_expr.h"

#include <stdio.h>
#include <string.h>

#include "devices/cpu/jit/llvm_names.h" /* last: LLVM's names as the loaded library's */

/* Vectors a loop iteration computes side by side. One vector's steps are a
 * chain of dependent instructions (the 8-op chain of bench_passes: about
 * 70, two of them divisions), so a loop of one vector waits on latency;
 * eight independent chains keep the core's units busy. Measured on the
 * chain (bench_passes, 1 thread, AVX-512): 1 vector 5.4 ms, 2 4.6, 4 3.9,
 * 8 3.0, 16 4.3 (spills); AVX2: 8 beat 4 by 1.35x. */
#define UNROLL 8

typedef struct emitter {
    LLVMContextRef ctx;
    LLVMBuilderRef b;
    LLVMTypeRef f32, i32, i64, vec, ivec, mask, fn_type;
    int lanes;
    LLVMModuleRef module;
    LLVMValueRef fns[TGC_EW_FN_COUNT]; /* the bitcode's functions, NULL until needed */
    LLVMValueRef buf0, buf1;           /* <L x float> stack slots for calls */
    LLVMBasicBlockRef entry;
    char *err;
    size_t err_size;
} emitter;

static LLVMValueRef splat_const(emitter *e, float v) {
    LLVMValueRef c = LLVMConstReal(e->f32, (double)v), lanes[TGC_JIT_MAX_LANES];
    for (int i = 0; i < e->lanes; i++) lanes[i] = c;
    return LLVMConstVector(lanes, (unsigned)e->lanes);
}

static LLVMValueRef splat_value(emitter *e, LLVMValueRef s) {
    LLVMValueRef v = LLVMBuildInsertElement(e->b, LLVMGetUndef(e->vec), s, LLVMConstInt(e->i32, 0, 0), "");
    return LLVMBuildShuffleVector(e->b, v, LLVMGetUndef(e->vec), LLVMConstNull(LLVMVectorType(e->i32, (unsigned)e->lanes)),
                                  "");
}

/* Function fn of the bitcode (tgc_jit_fn_<NAME>), NULL when the module
 * lacks it. */
static LLVMValueRef module_fn(emitter *e, int fn) {
    if (e->fns[fn] != NULL) return e->fns[fn];
    static const char *const names[TGC_EW_FN_COUNT] = {
#define FN_SYMBOL(name) [TGC_EW_FN_##name] = "tgc_jit_fn_" #name,
        TGC_EW_FUNCS(FN_SYMBOL)
#undef FN_SYMBOL
    };
    e->fns[fn] = LLVMGetNamedFunction(e->module, names[fn]);
    return e->fns[fn];
}

static LLVMValueRef call_fn(emitter *e, int fn, LLVMValueRef x, LLVMValueRef w) {
    LLVMTypeRef fptr = LLVMPointerType(e->f32, 0);
    LLVMValueRef s0 = LLVMBuildStore(e->b, x, e->buf0);
    LLVMSetAlignment(s0, 4);
    LLVMValueRef args[2] = {LLVMBuildBitCast(e->b, e->buf0, fptr, ""), LLVMConstNull(fptr)};
    if (w != NULL) {
        LLVMValueRef s1 = LLVMBuildStore(e->b, w, e->buf1);
        LLVMSetAlignment(s1, 4);
        args[1] = LLVMBuildBitCast(e->b, e->buf1, fptr, "");
    }
    LLVMBuildCall2(e->b, e->fn_type, module_fn(e, fn), args, 2, "");
    LLVMValueRef r = LLVMBuildLoad2(e->b, e->vec, e->buf0, "");
    LLVMSetAlignment(r, 4);
    return r;
}

typedef struct operands {
    LLVMValueRef x, a, b; /* the step's operands, vectors */
    LLVMValueRef p[TGC_EW_MAX_PARAMS];
} operands;

/* Node i of t (memo: each node once). */
static LLVMValueRef emit_node(emitter *e, const tgc_ew_tree *t, int i, const operands *o, LLVMValueRef *memo) {
    if (memo[i] != NULL) return memo[i];
    const tgc_ew_node *n = &t->nodes[i];
    LLVMValueRef k[3] = {NULL, NULL, NULL};
    for (int j = 0; j < 3; j++)
        if (n->kid[j] >= 0) k[j] = emit_node(e, t, n->kid[j], o, memo);
    LLVMValueRef v = NULL;
    LLVMBuilderRef b = e->b;
    switch (n->kind) {
    case TGC_EWX_CONST: v = splat_const(e, n->value); break;
    case TGC_EWX_X: v = o->x; break;
    case TGC_EWX_A: v = o->a; break;
    case TGC_EWX_B: v = o->b; break;
    case TGC_EWX_PARAM: v = o->p[n->index]; break;
    case TGC_EWX_NEG: v = LLVMBuildFNeg(b, k[0], ""); break;
    case TGC_EWX_ADD: v = LLVMBuildFAdd(b, k[0], k[1], ""); break;
    case TGC_EWX_SUB: v = LLVMBuildFSub(b, k[0], k[1], ""); break;
    case TGC_EWX_MUL: v = LLVMBuildFMul(b, k[0], k[1], ""); break;
    case TGC_EWX_DIV: v = LLVMBuildFDiv(b, k[0], k[1], ""); break;
    case TGC_EWX_LT: v = LLVMBuildFCmp(b, LLVMRealOLT, k[0], k[1], ""); break;
    case TGC_EWX_LE: v = LLVMBuildFCmp(b, LLVMRealOLE, k[0], k[1], ""); break;
    case TGC_EWX_GT: v = LLVMBuildFCmp(b, LLVMRealOGT, k[0], k[1], ""); break;
    case TGC_EWX_GE: v = LLVMBuildFCmp(b, LLVMRealOGE, k[0], k[1], ""); break;
    case TGC_EWX_EQ: v = LLVMBuildFCmp(b, LLVMRealOEQ, k[0], k[1], ""); break;
    case TGC_EWX_NE: v = LLVMBuildFCmp(b, LLVMRealUNE, k[0], k[1], ""); break;
    case TGC_EWX_OR: v = LLVMBuildOr(b, k[0], k[1], ""); break;
    case TGC_EWX_AND: v = LLVMBuildAnd(b, k[0], k[1], ""); break;
    case TGC_EWX_SEL: v = LLVMBuildSelect(b, k[0], k[1], k[2], ""); break;
    case TGC_EWX_ISNAN: v = LLVMBuildFCmp(b, LLVMRealUNO, k[0], k[0], ""); break;
    case TGC_EWX_ABS: {
        LLVMValueRef bits = LLVMBuildBitCast(b, k[0], e->ivec, ""), m[TGC_JIT_MAX_LANES];
        for (int j = 0; j < e->lanes; j++) m[j] = LLVMConstInt(e->i32, 0x7fffffffu, 0);
        bits = LLVMBuildAnd(b, bits, LLVMConstVector(m, (unsigned)e->lanes), "");
        v = LLVMBuildBitCast(b, bits, e->vec, "");
        break;
    }
    case TGC_EWX_CALL: v = call_fn(e, n->index, k[0], k[1]); break;
    }
    memo[i] = v;
    return v;
}

/* Vectors at .. at + count - 1 of program p: each vector's inputs loaded,
 * then step by step, each step emitted for every vector before the next
 * step, so `count` independent chains sit side by side in the loop body
 * and the core overlaps them (one vector's steps form a chain of
 * dependent instructions whose latency, not throughput, bounds a loop of
 * one vector), then the results stored. False, with err, on a bad step. */
static bool emit_vectors(emitter *e, const tgc_jit_program *p, const tgc_ew_tree *trees, const LLVMValueRef *base,
                         LLVMValueRef y, LLVMValueRef at, int count) {
    static LLVMValueRef value[UNROLL][TGC_FUSED_MAX_INPUTS + TGC_FUSED_MAX_STEPS]; /* under the JIT's lock */
    static LLVMValueRef memo[TGC_EW_TREE_MAX];
    LLVMValueRef pos[UNROLL];
    for (int u = 0; u < count; u++) {
        pos[u] = u == 0 ? at : LLVMBuildAdd(e->b, at, LLVMConstInt(e->i64, (unsigned long long)u, 0), "");
        for (int i = 0; i < p->n_inputs; i++) {
            if (p->scalar[i]) {
                value[u][i] = base[i];
                continue;
            }
            value[u][i] = LLVMBuildLoad2(e->b, e->vec, LLVMBuildGEP2(e->b, e->vec, base[i], &pos[u], 1, ""), "");
            LLVMSetAlignment(value[u][i], 4);
        }
    }
    for (int k = 0; k < p->n_steps; k++) {
        const tgc_jit_step *s = &p->steps[k];
        const tgc_ew_tree *t = &trees[k];
        bool needs_b = false;
        for (int j = 0; j < t->n; j++) needs_b |= t->nodes[j].kind == TGC_EWX_B;
        if (needs_b && s->b < 0) {
            snprintf(e->err, e->err_size, "step %d: a binary row with one operand", k);
            return false;
        }
        for (int u = 0; u < count; u++) {
            operands o = {0};
            o.x = o.a = value[u][s->a];
            o.b = s->b >= 0 ? value[u][s->b] : NULL;
            for (int j = 0; j < TGC_EW_MAX_PARAMS; j++) o.p[j] = splat_const(e, s->p[j]);
            memset(memo, 0, sizeof memo);
            value[u][p->n_inputs + k] = emit_node(e, t, t->root, &o, memo);
        }
    }
    LLVMValueRef out_base = LLVMBuildBitCast(e->b, y, LLVMPointerType(e->vec, 0), "");
    for (int u = 0; u < count; u++) {
        LLVMValueRef out = LLVMBuildGEP2(e->b, e->vec, out_base, &pos[u], 1, "");
        LLVMValueRef st = LLVMBuildStore(e->b, value[u][p->n_inputs + p->n_steps - 1], out);
        LLVMSetAlignment(st, 4);
    }
    return true;
}

bool tgc_jit_emit_fused(LLVMContextRef ctx, LLVMModuleRef m, const char *name, const tgc_jit_program *p, int lanes,
                        char *err, size_t err_size) {
    emitter e = {.ctx = ctx, .module = m, .lanes = lanes, .err = err, .err_size = err_size};
    if (lanes != 4 && lanes != 8 && lanes != TGC_JIT_MAX_LANES) {
        snprintf(err, err_size, "no code for %d lanes", lanes);
        return false;
    }
    /* Every step's tree first: nothing is emitted for a program with a bad row. */
    static tgc_ew_tree trees[TGC_FUSED_MAX_STEPS]; /* under the JIT's lock */
    for (int k = 0; k < p->n_steps; k++) {
        const char *text = tgc_ew_float_expr((tgc_ew_op)p->steps[k].row);
        char why[160];
        if (text == NULL || !tgc_ew_tree_parse(text, &trees[k], why, sizeof why)) {
            snprintf(err, err_size, "step %d: %s", k, text == NULL ? "no such row" : why);
            return false;
        }
    }
    e.f32 = LLVMFloatTypeInContext(ctx);
    e.i32 = LLVMInt32TypeInContext(ctx);
    e.i64 = LLVMInt64TypeInContext(ctx);
    e.vec = LLVMVectorType(e.f32, (unsigned)lanes);
    e.ivec = LLVMVectorType(e.i32, (unsigned)lanes);
    LLVMTypeRef fptr = LLVMPointerType(e.f32, 0);
    LLVMTypeRef fn_params[2] = {fptr, fptr};
    e.fn_type = LLVMFunctionType(LLVMVoidTypeInContext(ctx), fn_params, 2, 0);
    for (int k = 0; k < p->n_steps; k++) /* every function the steps call, in the module */
        for (int j = 0; j < trees[k].n; j++)
            if (trees[k].nodes[j].kind == TGC_EWX_CALL && module_fn(&e, trees[k].nodes[j].index) == NULL) {
                snprintf(err, err_size, "step %d: the JIT's bitcode lacks function %d", k, trees[k].nodes[j].index);
                return false;
            }
    LLVMTypeRef params[3] = {e.i64, LLVMPointerType(fptr, 0), fptr};
    LLVMValueRef fn = LLVMAddFunction(m, name, LLVMFunctionType(LLVMVoidTypeInContext(ctx), params, 3, 0));
    LLVMValueRef nvec = LLVMGetParam(fn, 0), in = LLVMGetParam(fn, 1), y = LLVMGetParam(fn, 2);

    e.b = LLVMCreateBuilderInContext(ctx);
    e.entry = LLVMAppendBasicBlockInContext(ctx, fn, "entry");
    LLVMBasicBlockRef loop = LLVMAppendBasicBlockInContext(ctx, fn, "loop");
    LLVMBasicBlockRef tail_check = LLVMAppendBasicBlockInContext(ctx, fn, "tail_check");
    LLVMBasicBlockRef tail = LLVMAppendBasicBlockInContext(ctx, fn, "tail");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(ctx, fn, "done");
    LLVMPositionBuilderAtEnd(e.b, e.entry);
    e.buf0 = LLVMBuildAlloca(e.b, e.vec, "buf0");
    e.buf1 = LLVMBuildAlloca(e.b, e.vec, "buf1");
    LLVMValueRef base[TGC_FUSED_MAX_INPUTS];
    for (int i = 0; i < p->n_inputs; i++) {
        LLVMValueRef idx = LLVMConstInt(e.i64, (unsigned long long)i, 0);
        LLVMValueRef ptr = LLVMBuildLoad2(e.b, fptr, LLVMBuildGEP2(e.b, fptr, in, &idx, 1, ""), "");
        if (p->scalar[i]) base[i] = splat_value(&e, LLVMBuildLoad2(e.b, e.f32, ptr, ""));
        else base[i] = LLVMBuildBitCast(e.b, ptr, LLVMPointerType(e.vec, 0), "");
    }
    LLVMBuildCondBr(e.b, LLVMBuildICmp(e.b, LLVMIntSGE, nvec, LLVMConstInt(e.i64, UNROLL, 0), ""), loop, tail_check);

    LLVMPositionBuilderAtEnd(e.b, loop);
    LLVMValueRef at = LLVMBuildPhi(e.b, e.i64, "v");
    if (!emit_vectors(&e, p, trees, base, y, at, UNROLL)) {
        LLVMDisposeBuilder(e.b);
        return false;
    }
    LLVMValueRef next = LLVMBuildAdd(e.b, at, LLVMConstInt(e.i64, UNROLL, 0), "");
    LLVMValueRef block_end = LLVMBuildAdd(e.b, next, LLVMConstInt(e.i64, UNROLL, 0), "");
    LLVMValueRef more = LLVMBuildICmp(e.b, LLVMIntSLE, block_end, nvec, "");
    LLVMBuildCondBr(e.b, more, loop, tail_check);
    LLVMAddIncoming(at, (LLVMValueRef[]){LLVMConstInt(e.i64, 0, 0), next}, (LLVMBasicBlockRef[]){e.entry, loop}, 2);

    LLVMPositionBuilderAtEnd(e.b, tail_check);
    LLVMValueRef rest = LLVMBuildPhi(e.b, e.i64, "rest");
    LLVMAddIncoming(rest, (LLVMValueRef[]){LLVMConstInt(e.i64, 0, 0), next}, (LLVMBasicBlockRef[]){e.entry, loop}, 2);
    LLVMBuildCondBr(e.b, LLVMBuildICmp(e.b, LLVMIntSLT, rest, nvec, ""), tail, done);

    LLVMPositionBuilderAtEnd(e.b, tail);
    LLVMValueRef at1 = LLVMBuildPhi(e.b, e.i64, "t");
    if (!emit_vectors(&e, p, trees, base, y, at1, 1)) {
        LLVMDisposeBuilder(e.b);
        return false;
    }
    LLVMValueRef next1 = LLVMBuildAdd(e.b, at1, LLVMConstInt(e.i64, 1, 0), "");
    LLVMBuildCondBr(e.b, LLVMBuildICmp(e.b, LLVMIntSLT, next1, nvec, ""), tail, done);
    LLVMAddIncoming(at1, (LLVMValueRef[]){rest, next1}, (LLVMBasicBlockRef[]){tail_check, tail}, 2);

    LLVMPositionBuilderAtEnd(e.b, done);
    LLVMBuildRetVoid(e.b);
    LLVMDisposeBuilder(e.b);
    return true;
}
