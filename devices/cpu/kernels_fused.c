/* _FusedElementwise on the cpu (graph/ops_fused.c has the op): the group's
 * steps run tile by tile, each tile of TILE elements passing through every
 * step while it stays in the core's L1/L2, so a chain of k elementwise ops
 * reads its inputs and writes its output once instead of k times. Each
 * step is the row's own vector loop (devices/cpu/ew.h, the same code the
 * unfused op runs), so results are bitwise those of the ops run one by one.
 * An input has the output's shape, one element, or a row broadcast over
 * the leading dims (a bias [C] of [N, T, C]): read at i % its count, in
 * segments that never cross its period.
 * The tensor is split into PIECE-element pieces over the pool (from the
 * size alone: the same bits for any thread count); each participant has
 * its own scratch of one tile per step. (The interpreter XLA's and TVM's
 * fusers make unnecessary by generating one loop; the LLVM-C JIT of step 10
 * is that next stage. This one already removes the memory traffic.)
 * With the JIT (devices/cpu/jit/jit.h) the group runs as one generated
 * loop instead, the same bits: the pieces and segments are cut the same
 * way, each segment one call of the compiled kernel over its whole
 * vectors, the last partial vector through a padded copy (lanes past the
 * end hold 1, as the row loops' tails do). The program is read from the
 * node's attributes once per node and session (devices/kernel_cache.h).
 * Its kernel is compiled when the group has earned it: the interpreter
 * runs it, timed, until its runs add up to TGC_JIT_AFTER_US (about what
 * loading LLVM and compiling a kernel cost), and then the JIT compiles it
 * (or finds it in its caches) for the runs that follow. That is the
 * ski-rental rule (rent until the rent paid equals the price, then buy),
 * which never costs more than twice the better choice made in hindsight;
 * JIT compilers of managed runtimes tier up from their interpreters on
 * the same idea. A process that runs a model once never loads LLVM; a
 * server that runs it often compiles its hot groups within a few runs. */
#include "devices/cpu/ew.h"
#include "devices/cpu/jit/jit.h"
#include "devices/kernel_cache.h"
#include "graph/elementwise.h"
#include "devices/kernel.h"
#include "support/alloc.h"
#include "support/clock.h"
#include "support/settings.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#define TILE 1024
#define PIECE ((int64_t)TILE * 16)

typedef struct fused_step {
    tgc_ew_unary_fn unary;
    tgc_ew_binary_fn binary;
    int a, b; /* operands: input index, or n_inputs + step */
    tgc_ew_params p;
} fused_step;

/* What the node's attributes say, read once per session (the kernel
 * cache's block) or per run outside one: the steps with their row loops,
 * the JIT's form of the program, and the JIT's kernel for the input kinds
 * of the run that built it (NULL: none yet, the interpreter). Runs of one
 * node on several threads share it: the kernel is published atomically,
 * the first run past the threshold compiles it (tried), and the others go
 * on interpreting meanwhile. */
typedef struct fused_program {
    fused_step steps[TGC_FUSED_MAX_STEPS];
    int n_steps;
    tgc_jit_program program;
    _Atomic(tgc_jit_fused_fn) jit;
    atomic_int_fast64_t interpreted_ns; /* time its runs spent in the interpreter */
    atomic_bool tried;                  /* a run has asked the JIT for its kernel */
} fused_program;

typedef struct fused_run {
    const fused_step *steps;
    int n_steps, n_inputs;
    const float *in[TGC_FUSED_MAX_INPUTS];
    /* each input's period: its element count, read at i % period (the
     * output's count: element i; 1: a scalar; else a row broadcast over
     * the leading dims, e.g. a bias [C] of [N, T, C]) */
    int64_t period[TGC_FUSED_MAX_INPUTS];
    float *y;
    int64_t numel;
    float *scratch; /* width x n_steps x TILE */
    tgc_jit_fused_fn jit; /* NULL: the interpreter */
    int lanes;
} fused_run;

/* Operand o at output element `at` (tile offset `i`): its pointer and
 * stride, and in *run how many elements from there it can give before its
 * period wraps. */
static const float *operand(const fused_run *r, const float *tiles, int o, int64_t at, int64_t i, int64_t *stride,
                            int64_t *run) {
    *run = INT64_MAX;
    *stride = 1;
    if (o >= r->n_inputs) return tiles + (size_t)(o - r->n_inputs) * TILE + i;
    int64_t period = r->period[o];
    if (period == r->numel) return r->in[o] + at + i;
    if (period == 1) {
        *stride = 0;
        return r->in[o];
    }
    int64_t off = (at + i) % period;
    *run = period - off;
    return r->in[o] + off;
}

/* One step over elements [at, at + n) of the tile: in segments where no
 * operand's period wraps (one segment unless a row-broadcast input's
 * period is shorter than the tile). */
static void run_step(const fused_run *r, const fused_step *s, float *tiles, int k, int64_t at, int64_t n) {
    bool last = k == r->n_steps - 1; /* the last step writes the output directly */
    for (int64_t i = 0; i < n;) {
        int64_t sa, sb = 0, ra, rb = INT64_MAX;
        const float *a = operand(r, tiles, s->a, at, i, &sa, &ra);
        const float *b = s->binary != NULL ? operand(r, tiles, s->b, at, i, &sb, &rb) : NULL;
        int64_t len = n - i;
        if (ra < len) len = ra;
        if (rb < len) len = rb;
        float *out = last ? r->y + at + i : tiles + (size_t)k * TILE + i;
        if (s->binary != NULL) {
            s->binary(len, a, sa, b, sb, out, &s->p);
        } else if (sa == 0) { /* a scalar through a unary row: every lane the same */
            float v;
            s->unary(1, a, &v, &s->p);
            for (int64_t j = 0; j < len; j++) out[j] = v;
        } else {
            s->unary(len, a, out, &s->p);
        }
        i += len;
    }
}

/* Elements [at, at + n) through the compiled kernel, n of no input's
 * period wrap (one segment). */
static void run_jit_segment(const fused_run *r, int64_t at, int64_t n) {
    const float *ptr[TGC_FUSED_MAX_INPUTS];
    for (int i = 0; i < r->n_inputs; i++) {
        int64_t period = r->period[i];
        ptr[i] = period == 1 ? r->in[i] : r->in[i] + (period == r->numel ? at : at % period);
    }
    int64_t nvec = n / r->lanes, done = nvec * r->lanes;
    if (nvec > 0) r->jit(nvec, ptr, r->y + at);
    if (done == n) return;
    float pad[TGC_FUSED_MAX_INPUTS][TGC_JIT_MAX_LANES], out[TGC_JIT_MAX_LANES];
    int rest = (int)(n - done);
    for (int i = 0; i < r->n_inputs; i++) {
        if (r->period[i] == 1) continue;
        for (int j = 0; j < r->lanes; j++) pad[i][j] = 1.0f;
        memcpy(pad[i], ptr[i] + done, (size_t)rest * sizeof(float));
        ptr[i] = pad[i];
    }
    r->jit(1, ptr, out);
    memcpy(r->y + at + done, out, (size_t)rest * sizeof(float));
}

static void run_jit_piece(const fused_run *r, int64_t begin, int64_t end) {
    for (int64_t at = begin; at < end;) {
        int64_t n = end - at;
        for (int i = 0; i < r->n_inputs; i++) {
            int64_t period = r->period[i];
            if (period != 1 && period != r->numel && period - at % period < n) n = period - at % period;
        }
        run_jit_segment(r, at, n);
        at += n;
    }
}

static void run_piece(void *arg, int64_t piece, int slot) {
    const fused_run *r = arg;
    int64_t end = (piece + 1) * PIECE < r->numel ? (piece + 1) * PIECE : r->numel;
    if (r->jit != NULL) { /* no scratch: the compiled loop keeps its values in registers */
        run_jit_piece(r, piece * PIECE, end);
        return;
    }
    float *tiles = r->scratch + (size_t)slot * (size_t)r->n_steps * TILE;
    for (int64_t at = piece * PIECE; at < end; at += TILE) {
        int64_t n = end - at < TILE ? end - at : TILE;
        for (int k = 0; k < r->n_steps; k++) run_step(r, &r->steps[k], tiles, k, at, n);
    }
}

/* Reads the node's program (checked by inference) into p, the JIT's input
 * kinds from `scalar` (input i is one element). Errors through c. */
static tgc_status read_program(tgc_kernel_ctx *c, const bool *scalar, fused_program *p) {
    const tgc_attr *ops = tgc_node_attr(c->node, "ops"), *operands = tgc_node_attr(c->node, "operands");
    const tgc_attr *params = tgc_node_attr(c->node, "params");
    if (ops == NULL || operands == NULL || params == NULL || ops->n > TGC_FUSED_MAX_STEPS)
        return tgc_kernel_fail(c, "a fused group of %zu steps (at most %d)", ops ? ops->n : 0, TGC_FUSED_MAX_STEPS);
    const tgc_ew_loops *l = tgc_cpu_ew_loops();
    memset(p, 0, sizeof *p);
    p->n_steps = (int)ops->n;
    for (int k = 0; k < p->n_steps; k++) {
        const tgc_ew_row *row = tgc_ew_find(ops->strings[k]);
        fused_step *s = &p->steps[k];
        if (row == NULL) return tgc_kernel_fail(c, "step %d: unknown row '%s'", k, ops->strings[k]);
        s->a = (int)operands->ints[2 * k];
        s->b = (int)operands->ints[2 * k + 1];
        if (row->arity == 1) s->unary = l->unary[tgc_ew_id(row)][TGC_FLOAT32];
        else s->binary = l->binary[tgc_ew_id(row)][TGC_FLOAT32];
        if (s->unary == NULL && s->binary == NULL) return tgc_kernel_fail(c, "step %d: no float32 loop for %s", k, row->op);
        tgc_jit_step *js = &p->program.steps[k];
        js->row = (int)tgc_ew_id(row);
        js->a = s->a;
        js->b = row->arity == 2 ? s->b : -1;
        for (int j = 0; j < 3; j++) {
            s->p.f[j] = (float)params->floats[3 * k + j];
            s->p.d[j] = params->floats[3 * k + j];
            s->p.i[j] = tgc_ew_param_int(params->floats[3 * k + j]);
            js->p[j] = s->p.f[j];
        }
    }
    p->program.n_steps = p->n_steps;
    p->program.n_inputs = c->n_inputs;
    memcpy(p->program.scalar, scalar, sizeof(bool) * (size_t)c->n_inputs);
    atomic_init(&p->jit, NULL);
    atomic_init(&p->interpreted_ns, 0);
    atomic_init(&p->tried, false);
    return TGC_OK;
}

/* The program's compiled kernel: the one already made, or one compiled now
 * when its interpreted runs have reached TGC_JIT_AFTER_US (the first run
 * to see that compiles; the JIT serializes compiles itself); NULL: the
 * interpreter runs it (the JIT is off, it failed, or not yet). */
static tgc_jit_fused_fn jit_kernel(fused_program *p) {
    if (!tgc_jit_enabled()) return NULL;
    tgc_jit_fused_fn fn = atomic_load_explicit(&p->jit, memory_order_acquire);
    if (fn != NULL) return fn;
    int64_t after_ns = (int64_t)tgc_settings_current()->jit_after_us * 1000;
    if (atomic_load_explicit(&p->interpreted_ns, memory_order_relaxed) < after_ns ||
        atomic_exchange(&p->tried, true))
        return NULL;
    char err[256];
    fn = tgc_jit_fused_kernel(&p->program, tgc_cpu_ew_loops()->lanes, err, sizeof err);
    atomic_store_explicit(&p->jit, fn, memory_order_release);
    return fn;
}

static void *build_program(const tgc_kernel_ctx *c, void *arg, size_t *bytes) {
    fused_program *p = tgc_malloc(sizeof *p);
    if (p == NULL) return NULL;
    char err[256]; /* a bad program: the run reads it again and reports */
    tgc_kernel_ctx quiet = *c;
    quiet.error = err;
    quiet.error_size = sizeof err;
    if (read_program(&quiet, arg, p) != TGC_OK) {
        tgc_free(p);
        return NULL;
    }
    *bytes = sizeof *p;
    return p;
}

/* The inputs' pointers and periods into r, each checked to tile the
 * output, and which inputs are one element. */
static tgc_status read_inputs(tgc_kernel_ctx *c, fused_run *r, bool *scalar) {
    if (c->n_inputs > TGC_FUSED_MAX_INPUTS)
        return tgc_kernel_fail(c, "a fused group with %d inputs (at most %d)", c->n_inputs, TGC_FUSED_MAX_INPUTS);
    r->n_inputs = c->n_inputs;
    for (int i = 0; i < c->n_inputs; i++) {
        r->in[i] = tgc_kernel_in_ptr(c, i);
        r->period[i] = tgc_value_numel(&c->inputs[i]);
        scalar[i] = r->period[i] == 1;
        if (r->numel == 0) continue; /* an empty group: nothing to read */
        if (r->period[i] < 1 || r->numel % r->period[i] != 0)
            return tgc_kernel_fail(c, "input %d has %lld elements, which do not tile the output's %lld", i,
                                   (long long)r->period[i], (long long)r->numel);
    }
    return TGC_OK;
}

static tgc_status fused_f32(tgc_kernel_ctx *c) {
    fused_run r = {.y = tgc_kernel_out_ptr(c, 0), .numel = tgc_value_numel(&c->outputs[0]),
                   .lanes = tgc_cpu_ew_loops()->lanes};
    bool scalar[TGC_FUSED_MAX_INPUTS] = {false};
    tgc_status s = read_inputs(c, &r, scalar);
    if (s != TGC_OK) return s;
    /* The program from the session's cache; its JIT kernel serves runs with
     * the input kinds it was built for (a symbolic dim may make an input
     * one element in one run and not in another). */
    fused_program *p = (fused_program *)tgc_kernel_cache_get(c, 0, build_program, scalar);
    fused_program *own = NULL;
    if (p == NULL) {
        if ((own = tgc_malloc(sizeof *own)) == NULL) return TGC_ERR_NOMEM;
        if ((s = read_program(c, scalar, own)) != TGC_OK) {
            tgc_free(own);
            return s;
        }
        p = own;
    }
    r.steps = p->steps;
    r.n_steps = p->n_steps;
    bool same_kinds = memcmp(p->program.scalar, scalar, sizeof(bool) * (size_t)c->n_inputs) == 0;
    r.jit = same_kinds ? jit_kernel(p) : NULL;
    int width = tgc_parallel_width(c->pool);
    if (r.numel > 0 && r.jit == NULL) {
        r.scratch = tgc_malloc((size_t)width * (size_t)r.n_steps * TILE * sizeof(float));
        if (r.scratch == NULL) s = TGC_ERR_NOMEM;
    }
    bool timed = r.jit == NULL && same_kinds && tgc_jit_enabled(); /* the interpreter's runs earn the JIT */
    int64_t t0 = timed ? tgc_now_ns() : 0;
    if (s == TGC_OK && r.numel > 0) tgc_parallel_for(c->pool, (r.numel + PIECE - 1) / PIECE, run_piece, &r);
    if (timed) atomic_fetch_add_explicit(&p->interpreted_ns, tgc_now_ns() - t0, memory_order_relaxed);
    tgc_free(r.scratch);
    tgc_free(own);
    return s;
}

/* tgc_kernel_footprint_fn: the program kept in the node's cache, and the
 * tiles of its steps per thread for the interpreter (a step per op of its
 * "ops" attribute, as read_program makes them), which runs every group
 * until the JIT compiles it. */
static void fused_footprint(tgc_kernel_ctx *c, int width, tgc_kernel_footprint *out) {
    const tgc_attr *ops = tgc_node_attr(c->node, "ops");
    size_t n_ops = ops != NULL && ops->n <= TGC_FUSED_MAX_STEPS ? ops->n : TGC_FUSED_MAX_STEPS;
    out->cache_bytes = (int64_t)sizeof(fused_program);
    out->workspace_bytes = (int64_t)width * (int64_t)n_ops * TILE * (int64_t)sizeof(float);
}

const tgc_kernel_def tgc_cpu_kernels_fused[] = {
    {.op = "_FusedElementwise", .fn = fused_f32, .forward_input = -1,
     .dtypes = {TGC_FLOAT32, TGC_DTYPE_INVALID}, .footprint = fused_footprint},
    {.op = NULL},
};
