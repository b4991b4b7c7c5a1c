/* _FusedElementwise on an OpenCL device (graph/ops_fused.c has the op,
 * passes/fuse_elementwise.c makes it): the group's program becomes the
 * source of ONE kernel that loads each input once per element, runs every
 * step as the row's own function and stores the last step's result; each
 * work-item takes eight consecutive elements as float8 lanes (the last
 * few elements one by one):
 *     __kernel void tgc_fused(__global const float *X0, ..., __global float *Y,
 *                             long n, long R2, ...) {
 *         long w = get_global_id(0), i = w * 8;
 *         if (i + 8 <= n) {
 *             float8 x0 = vload8(w, X0);                  full input
 *             float8 x1 = (float8)(X1[0]);                one element
 *             float8 x2 = (float8)(X2[(i + 0) % R2], ...); a row broadcast
 *             float8 t0 = ew_row8_Mul(x0, x1, P0, P1, P2);
 *             ...
 *             vstore8(t7, w, Y);
 *             return;
 *         }
 *         for (; i < n; i++) { the same with float and ew_row_<Op> }
 *     }
 * A float16 group's kernel takes half pointers and reads them as float
 * (vload_half8, vload_half), computes the same float steps and rounds
 * once as it stores (vstore_half8_rte, vstore_half_rte).
 * The ew_row_<Op> and ew_row8_<Op> functions are kernels/elementwise.cl's
 * (its text up to the "end of the row functions" mark is compiled first):
 * the expression of graph/elementwise.def's row, as the unfused
 * ew_<Op>_f32 kernels compute it, under the same FP_CONTRACT OFF. Results:
 * arithmetic rows bitwise the unfused kernels'; where a row calls a
 * built-in (exp, tanh, erf, log, atan, ...), its float8 form may round
 * differently from the scalar one the unfused kernel calls: on PoCL at
 * most 3 ulp apart through the tested programs (tests/devices/
 * test_gpu_fused.c measures each row and bounds it at 4). The parameters are the exact bits of
 * the float each step's kernel would be passed (as_float(0x...u): no
 * decimal round trip, NaN and infinities included). The generated text
 * (program and input kinds) is the key of a per-device cache, and the
 * program goes through tgc_cl_program_build, whose disk cache keys on the
 * full source: a second node with the same program compiles nothing, and
 * neither does a second process. (XLA's and TVM's gpu fusion generate one
 * kernel per group the same way; NVRTC/OpenCL runtime compilation with a
 * source-keyed cache is the usual way to do it without a compiler
 * backend in the library.)
 *
 * The same cache serves a file of kernels/ built again with a variant's
 * defines and a fused activation in front (tgc_cl_enqueue_act,
 * tgc_cl_time_act: nn.cl's GEMM kernel at a tile of 32, a Conv with its
 * Relu): its kernels are looked up by name and text, and two names of one
 * text share the program. */
#include "devices/opencl/kernels_fused_cl.h"

#include "devices/opencl/cl_kernel_util.h"
#include "devices/opencl/cl_program.h"
#include "devices/opencl/cl_sources.h"
#include "graph/elementwise.h"
#include "support/alloc.h"
#include "support/diag.h"
#include "support/strmap.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define PRELUDE_FILE "elementwise.cl"
#define PRELUDE_END "/* ==== end of the row functions (tgc fused prelude) ==== */"
#define GROUP 64
#define LANES 8
/* Room for the generated kernel: 64 steps and 32 inputs (rows gathered
 * lane by lane) need under 32 KiB. */
#define TEXT_CAP (64 * 1024)

/* Entry i: a kernel and its program (retained once per entry: two kernels
 * of one text share the program, built once). */
typedef struct tgc_cl_fused_cache {
    tgc_strmap index;            /* kernel name, '\n', text -> entry */
    tgc_strmap programs_by_text; /* text -> an entry whose program it is */
    tgc_strmap variants;         /* tgc_cl_enqueue_act's short key (file, name, defines, activation) -> entry */
    cl_program *programs;
    cl_kernel *kernels;
    int count, cap;
    int built; /* programs built (counters.programs counts them) */
} tgc_cl_fused_cache;

/* ==== The cache =============================================================== */

/* The text of elementwise.cl up to the end of its row functions; NULL if
 * the embedded file lacks the mark. */
static const char *prelude(size_t *len) {
    const tgc_cl_source *s = tgc_cl_source_named(PRELUDE_FILE);
    const char *end = s != NULL ? strstr(s->text, PRELUDE_END) : NULL;
    if (end == NULL) return NULL;
    *len = (size_t)(end - s->text) + strlen(PRELUDE_END);
    return s->text;
}

static uint64_t fnv1a(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* Builds prelude + kernel_text into *p. */
static tgc_status build(tgc_cl_device *c, const char *kernel_text, char *err, size_t err_size, cl_program *p) {
    size_t pre_len = 0, text_len = strlen(kernel_text);
    const char *pre = prelude(&pre_len);
    if (pre == NULL) return tgc_err_format(err, err_size, TGC_ERR_RUNTIME, "the row functions of %s are missing",
                                           PRELUDE_FILE);
    char *full = tgc_malloc(pre_len + text_len + 2);
    if (full == NULL) return tgc_err_format(err, err_size, TGC_ERR_NOMEM, "out of host memory");
    memcpy(full, pre, pre_len);
    full[pre_len] = '\n';
    memcpy(full + pre_len + 1, kernel_text, text_len + 1);
    char name[64];
    snprintf(name, sizeof name, "fused_%016" PRIx64 ".cl", fnv1a(kernel_text));
    tgc_cl_source src = {name, full, pre_len + 1 + text_len};
    tgc_diags *diags = tgc_diags_create();
    tgc_status st = diags != NULL ? tgc_cl_program_build(c, &src, diags, p) : TGC_ERR_NOMEM;
    tgc_free(full);
    if (st != TGC_OK) {
        const char *why = diags != NULL && tgc_diags_count(diags) > 0 ? tgc_diag_message(diags, 0) : "out of memory";
        tgc_err_format(err, err_size, st == TGC_ERR_NOMEM ? st : TGC_ERR_RUNTIME, "%s", why);
        tgc_diags_free(diags);
        return st == TGC_ERR_NOMEM ? st : TGC_ERR_RUNTIME;
    }
    tgc_diags_free(diags);
    return TGC_OK;
}

/* Makes room for one more entry. */
static bool grow(tgc_cl_fused_cache *fc) {
    if (fc->count < fc->cap) return true;
    int cap = fc->cap ? 2 * fc->cap : 8;
    cl_program *p = tgc_realloc(fc->programs, (size_t)cap * sizeof *p);
    if (p != NULL) fc->programs = p;
    cl_kernel *k = p != NULL ? tgc_realloc(fc->kernels, (size_t)cap * sizeof *k) : NULL;
    if (k == NULL) return false;
    fc->kernels = k;
    fc->cap = cap;
    return true;
}

/* tgc_cl_fused_kernel, giving the kernel's entry in c's cache (*at). */
static tgc_status fused_entry(tgc_cl_device *c, const char *kernel_text, const char *name, char *err,
                              size_t err_size, int32_t *at_out) {
    if (c->fused == NULL && (c->fused = tgc_calloc(1, sizeof *c->fused)) == NULL)
        return tgc_err_format(err, err_size, TGC_ERR_NOMEM, "out of host memory");
    tgc_cl_fused_cache *fc = c->fused;
    size_t name_len = strlen(name), text_len = strlen(kernel_text);
    char *key = tgc_malloc(name_len + 1 + text_len + 1);
    if (key == NULL) return tgc_err_format(err, err_size, TGC_ERR_NOMEM, "out of host memory");
    memcpy(key, name, name_len);
    key[name_len] = '\n';
    memcpy(key + name_len + 1, kernel_text, text_len + 1);
    int32_t at = tgc_strmap_get(&fc->index, key);
    if (at >= 0) {
        tgc_free(key);
        c->counters.fused_hits++;
        *at_out = at;
        return TGC_OK;
    }
    tgc_status st = grow(fc) ? TGC_OK : tgc_err_format(err, err_size, TGC_ERR_NOMEM, "out of host memory");
    int32_t same_text = tgc_strmap_get(&fc->programs_by_text, kernel_text);
    cl_program p = NULL;
    if (st == TGC_OK && same_text >= 0) {
        p = fc->programs[same_text];
        clRetainProgram(p);
    } else if (st == TGC_OK) {
        st = build(c, kernel_text, err, err_size, &p);
    }
    cl_kernel k = NULL;
    if (st == TGC_OK) {
        cl_int e;
        k = clCreateKernel(p, name, &e);
        if (e != CL_SUCCESS)
            st = tgc_err_format(err, err_size, TGC_ERR_RUNTIME, "the generated program has no kernel %s: %s", name,
                                tgc_cl_error_name(e));
    }
    if (st == TGC_OK && tgc_strmap_put(&fc->index, key, fc->count) != TGC_OK)
        st = tgc_err_format(err, err_size, TGC_ERR_NOMEM, "out of host memory");
    if (st == TGC_OK && same_text < 0) /* failing, a later kernel of the text builds it again */
        (void)tgc_strmap_put(&fc->programs_by_text, kernel_text, fc->count);
    tgc_free(key);
    if (st != TGC_OK) {
        if (k != NULL) clReleaseKernel(k);
        if (p != NULL) clReleaseProgram(p);
        return st;
    }
    fc->programs[fc->count] = p;
    fc->kernels[fc->count] = k;
    *at_out = fc->count++;
    if (same_text < 0) c->counters.programs++, c->counters.generated++, fc->built++;
    c->counters.kernels++;
    return TGC_OK;
}

tgc_status tgc_cl_fused_kernel(tgc_cl_device *c, const char *kernel_text, const char *name, char *err,
                               size_t err_size, cl_kernel *out) {
    int32_t at = -1;
    tgc_status st = fused_entry(c, kernel_text, name, err, err_size, &at);
    *out = st == TGC_OK ? c->fused->kernels[at] : NULL;
    return st;
}

void tgc_cl_fused_release(tgc_cl_device *c) {
    tgc_cl_fused_cache *fc = c->fused;
    if (fc == NULL) return;
    for (int i = 0; i < fc->count; i++) {
        clReleaseKernel(fc->kernels[i]);
        clReleaseProgram(fc->programs[i]);
    }
    c->counters.programs -= fc->built;
    c->counters.generated -= fc->built;
    c->counters.kernels -= fc->count;
    tgc_strmap_release(&fc->index);
    tgc_strmap_release(&fc->programs_by_text);
    tgc_strmap_release(&fc->variants);
    tgc_free(fc->programs);
    tgc_free(fc->kernels);
    tgc_free(fc);
    c->fused = NULL;
}

/* ==== The generated kernel ===================================================== */

typedef enum input_kind { IN_FULL, IN_SCALAR, IN_ROW } input_kind;

typedef struct text {
    char *s;
    size_t len;
    bool full;
} text;

static void put(text *t, const char *fmt, ...) TGC_PRINTF(2, 3);
static void put(text *t, const char *fmt, ...) {
    if (t->full) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->s + t->len, TEXT_CAP - t->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= TEXT_CAP - t->len) t->full = true;
    else t->len += (size_t)n;
}

static uint32_t float_bits(double v) {
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Checks the node's program (as inference does: a node may come from a
 * file). */
static tgc_status check_program(tgc_kernel_ctx *c, const tgc_attr **ops, const tgc_attr **operands,
                                const tgc_attr **params) {
    *ops = tgc_node_attr(c->node, "ops");
    *operands = tgc_node_attr(c->node, "operands");
    *params = tgc_node_attr(c->node, "params");
    if (*ops == NULL || (*ops)->type != TGC_ATTR_STRINGS || *operands == NULL || (*operands)->type != TGC_ATTR_INTS ||
        *params == NULL || (*params)->type != TGC_ATTR_FLOATS)
        return tgc_kernel_fail(c, "_FusedElementwise: needs the attributes ops (strings), operands (ints) and "
                                  "params (floats)");
    size_t steps = (*ops)->n;
    if (steps == 0 || steps > TGC_FUSED_MAX_STEPS || (*operands)->n != 2 * steps || (*params)->n != 3 * steps)
        return tgc_kernel_fail(c, "_FusedElementwise: a group of %zu steps (1 to %d) with %zu operands and %zu "
                                  "params (2 and 3 per step)", steps, TGC_FUSED_MAX_STEPS, (*operands)->n,
                               (*params)->n);
    for (size_t k = 0; k < steps; k++) {
        const tgc_ew_row *r = tgc_ew_find((*ops)->strings[k]);
        if (r == NULL || r->bool_out || (r->dtypes & (1u << TGC_FLOAT32)) == 0)
            return tgc_kernel_fail(c, "_FusedElementwise: step %zu: '%s' is no float elementwise row", k,
                                   (*ops)->strings[k]);
        for (int j = 0; j < 2; j++) {
            int64_t o = (*operands)->ints[2 * k + j];
            bool used = j < r->arity;
            if ((used && (o < 0 || o >= c->n_inputs + (int64_t)k)) || (!used && o != -1))
                return tgc_kernel_fail(c, "_FusedElementwise: step %zu (%s): operand %d is %lld", k, r->op, j,
                                       (long long)o);
        }
    }
    return TGC_OK;
}

/* Input i's element at index e (an OpenCL C expression): X<i>[e], or
 * vload_half(e, X<i>) for half inputs (read as float). */
static void put_element(text *t, int i, const char *e, bool half) {
    if (half) put(t, "vload_half(%s, X%d)", e, i);
    else put(t, "X%d[%s]", i, e);
}

/* The loads and the steps over one element i (lanes 1) or eight, i to
 * i + 7 (lanes 8: float8 values, the rows' ew_row8_ forms), indented by
 * `ind`; the last step's value is t<steps - 1>. With `half` the inputs
 * are half, read as float (vload_half, vload_half8). */
static void put_body(text *t, int lanes, const char *ind, int n_in, const input_kind *kinds, const tgc_attr *ops,
                     const tgc_attr *operands, const tgc_attr *params, bool half) {
    const char *type = lanes == 8 ? "float8" : "float";
    char e[64];
    for (int i = 0; i < n_in; i++) {
        put(t, "%s%s x%d = ", ind, type, i);
        if (kinds[i] == IN_SCALAR) {
            put(t, "(%s)(", type);
            put_element(t, i, "0", half);
            put(t, ");\n");
        } else if (lanes == 1) {
            if (kinds[i] == IN_FULL) snprintf(e, sizeof e, "i");
            else snprintf(e, sizeof e, "i %% R%d", i);
            put_element(t, i, e, half);
            put(t, ";\n");
        } else if (kinds[i] == IN_FULL) {
            put(t, "%s(w, X%d);\n", half ? "vload_half8" : "vload8", i);
        } else {
            put(t, "(float8)(");
            for (int j = 0; j < 8; j++) {
                snprintf(e, sizeof e, "(i + %d) %% R%d", j, i);
                put_element(t, i, e, half);
                put(t, "%s", j < 7 ? ", " : ");\n");
            }
        }
    }
    size_t steps = ops->n;
    for (size_t k = 0; k < steps; k++) {
        const tgc_ew_row *r = tgc_ew_find(ops->strings[k]);
        put(t, "%s%s t%zu = ew_row%s_%s(", ind, type, k, lanes == 8 ? "8" : "", r->op);
        for (int j = 0; j < r->arity; j++) {
            int64_t o = operands->ints[2 * k + j];
            if (o < n_in) put(t, "x%d, ", (int)o);
            else put(t, "t%d, ", (int)(o - n_in));
        }
        for (int j = 0; j < 3; j++)
            put(t, "as_float(0x%08" PRIx32 "u)%s", float_bits(params->floats[3 * k + j]), j < 2 ? ", " : ");\n");
    }
}

/* Checks the node's program and writes the kernel's text into t: work-item
 * w computes elements 8w .. 8w + 7 as float8 lanes where all eight are
 * there, and the last few one by one. (Eight lanes per work-item, not one
 * element: PoCL's cpu device vectorizes a kernel across work-items only
 * when every call in it has a vector form, and a group with Tanh or Erf in
 * it then ran every step scalar, slower than the unfused kernels; the
 * explicit float8 keeps the other steps vectorized. A gpu gets the same
 * lanes as instruction-level parallelism.) */
static tgc_status generate(tgc_kernel_ctx *c, const input_kind *kinds, bool half, text *t) {
    const tgc_attr *ops, *operands, *params;
    tgc_status st = check_program(c, &ops, &operands, &params);
    if (st != TGC_OK) return st;
    int n_in = c->n_inputs;
    const char *type = half ? "half" : "float";
    size_t last = ops->n - 1;
    put(t, "__kernel void tgc_fused(");
    for (int i = 0; i < n_in; i++) put(t, "__global const %s *X%d, ", type, i);
    put(t, "__global %s *Y, long n", type);
    for (int i = 0; i < n_in; i++)
        if (kinds[i] == IN_ROW) put(t, ", long R%d", i);
    put(t, ") {\n    long w = get_global_id(0), i = w * 8;\n    if (i + 8 <= n) {\n");
    put_body(t, 8, "        ", n_in, kinds, ops, operands, params, half);
    if (half) put(t, "        vstore_half8_rte(t%zu, w, Y);\n", last);
    else put(t, "        vstore8(t%zu, w, Y);\n", last);
    put(t, "        return;\n    }\n    for (; i < n; i++) {\n");
    put_body(t, 1, "        ", n_in, kinds, ops, operands, params, half);
    if (half) put(t, "        vstore_half_rte(t%zu, i, Y);\n    }\n}\n", last);
    else put(t, "        Y[i] = t%zu;\n    }\n}\n", last);
    if (t->full) return tgc_kernel_fail(c, "_FusedElementwise: the generated kernel is too long");
    return TGC_OK;
}

static tgc_status fused_gpu(tgc_kernel_ctx *c) {
    tgc_status st = tgc_cl_check(c, 1, 1, 0);
    if (st != TGC_OK) return st;
    if (c->n_inputs > TGC_FUSED_MAX_INPUTS)
        return tgc_kernel_fail(c, "_FusedElementwise: %d inputs (at most %d)", c->n_inputs, TGC_FUSED_MAX_INPUTS);
    int64_t n = tgc_value_numel(&c->outputs[0]);
    input_kind kinds[TGC_FUSED_MAX_INPUTS];
    int64_t period[TGC_FUSED_MAX_INPUTS];
    tgc_dtype dt = c->outputs[0].dtype;
    if ((dt != TGC_FLOAT32 && dt != TGC_FLOAT16) || n < 0)
        return tgc_kernel_fail(c, "_FusedElementwise: the output must be float32 or float16");
    if (n == 0) { /* nothing to compute (empty inputs have no period): the program is still checked */
        const tgc_attr *ops, *operands, *params;
        return check_program(c, &ops, &operands, &params);
    }
    for (int i = 0; i < c->n_inputs; i++) {
        period[i] = tgc_value_numel(&c->inputs[i]);
        if (c->inputs[i].dtype != dt)
            return tgc_kernel_fail(c, "_FusedElementwise: input %d is %s, not %s as the output", i,
                                   tgc_dtype_name(c->inputs[i].dtype), tgc_dtype_name(dt));
        if (period[i] < 1 || n % period[i] != 0)
            return tgc_kernel_fail(c, "_FusedElementwise: input %d has %lld elements, which do not tile the "
                                      "output's %lld", i, (long long)period[i], (long long)n);
        kinds[i] = period[i] == n ? IN_FULL : period[i] == 1 ? IN_SCALAR : IN_ROW;
    }
    text t = {tgc_malloc(TEXT_CAP), 0, false};
    if (t.s == NULL) return TGC_ERR_NOMEM;
    st = generate(c, kinds, dt == TGC_FLOAT16, &t);
    if (st != TGC_OK) {
        tgc_free(t.s);
        return st;
    }
    tgc_cl_device *d = (tgc_cl_device *)c->device;
    char why[2048];
    cl_kernel k = NULL;
    size_t items = ((size_t)n + LANES - 1) / LANES, global = (items + GROUP - 1) / GROUP * GROUP;
    tgc_cl_arg args[2 * TGC_FUSED_MAX_INPUTS + 2];
    cl_long longs[TGC_FUSED_MAX_INPUTS + 1] = {n}; /* the arguments' values outlive the loop */
    int n_args = 0, n_longs = 1;
    for (int i = 0; i < c->n_inputs; i++) args[n_args++] = TGC_CL_BUF(c->inputs[i].buf);
    args[n_args++] = TGC_CL_BUF(c->outputs[0].buf);
    args[n_args++] = TGC_CL_BYTES(&longs[0], sizeof longs[0]);
    for (int i = 0; i < c->n_inputs; i++)
        if (kinds[i] == IN_ROW) {
            longs[n_longs] = period[i];
            args[n_args++] = TGC_CL_BYTES(&longs[n_longs++], sizeof longs[0]);
        }
    cl_int err = CL_SUCCESS;
    pthread_mutex_lock(&d->lock);
    st = tgc_cl_fused_kernel(d, t.s, "tgc_fused", why, sizeof why, &k);
    cl_event event = NULL;
    if (st == TGC_OK) err = tgc_cl_launch(d, k, 1, &global, NULL, n_args, args, c->events ? &event : NULL);
    pthread_mutex_unlock(&d->lock);
    tgc_cl_note_event(c, event, "_FusedElementwise");
    tgc_free(t.s);
    if (st != TGC_OK) {
        tgc_kernel_fail(c, "_FusedElementwise: %s", why);
        return st;
    }
    if (err != CL_SUCCESS) return tgc_kernel_fail(c, "_FusedElementwise: OpenCL kernel: %s", tgc_cl_error_name(err));
    return TGC_OK;
}

/* ==== A file built again with defines and a fused activation ====================== */

/* The text of kernels/<file> behind `defines` and c's activation, into
 * *text (tgc_malloc'd); NULL with neither (the plain build). Fails the
 * node through tgc_kernel_fail. */
static tgc_status variant_text(tgc_kernel_ctx *c, const char *file, const char *defines, char **text) {
    const tgc_fused_act *act = c->fused_act;
    *text = NULL;
    if (act == NULL && defines == NULL) return TGC_OK;
    const tgc_cl_source *src = tgc_cl_source_named(file);
    if (src == NULL || (act != NULL && (act->row < 0 || act->row >= TGC_EW_COUNT)))
        return tgc_kernel_fail(c, "no kernels/%s, or no activation row %d, for a fused activation", file,
                               act != NULL ? act->row : -1);
    char head[512];
    int head_len = snprintf(head, sizeof head, "%s\n", defines != NULL ? defines : "");
    if (act != NULL && head_len > 0 && (size_t)head_len < sizeof head)
        head_len += snprintf(head + head_len, sizeof head - (size_t)head_len,
                             "#define TGC_ACT(v) ew_row_%s((v), as_float(0x%08" PRIx32 "u), as_float(0x%08" PRIx32
                             "u), as_float(0x%08" PRIx32 "u))\n",
                             tgc_ew_rows[act->row].op, float_bits(act->params[0]), float_bits(act->params[1]),
                             float_bits(act->params[2]));
    char *t = head_len > 0 && (size_t)head_len < sizeof head ? tgc_malloc((size_t)head_len + src->size + 1) : NULL;
    if (t == NULL) return tgc_kernel_fail_nomem(c, "out of host memory for a kernel's variant");
    memcpy(t, head, (size_t)head_len);
    memcpy(t + head_len, src->text, src->size);
    t[(size_t)head_len + src->size] = '\0';
    *text = t;
    return TGC_OK;
}

/* The short key of a variant: what its text is made of; false when it
 * does not fit in size (then the variant is looked up by its text). */
static bool variant_key(const tgc_kernel_ctx *c, const char *file, const char *defines, const char *name, char *out,
                        size_t size) {
    const tgc_fused_act *act = c->fused_act;
    int n = snprintf(out, size, "%s|%s|%s|%d|%08" PRIx32 "%08" PRIx32 "%08" PRIx32, file, name,
                     defines != NULL ? defines : "", act != NULL ? act->row : -1,
                     act != NULL ? float_bits(act->params[0]) : 0, act != NULL ? float_bits(act->params[1]) : 0,
                     act != NULL ? float_bits(act->params[2]) : 0);
    return n > 0 && (size_t)n < size;
}

/* Kernel `name` of kernels/<file> built with `defines` and c's activation
 * into *k, from c's device's cache: found by its short key (variant_key)
 * once built, so that its text (the whole file behind the row functions)
 * is made and looked up only the first time, not at every launch (about
 * 17 us a Conv on PoCL when it was). Called and returns with the device's
 * lock held; lets it go while the text is made. Fails the node through
 * tgc_kernel_fail. */
static tgc_status variant_kernel(tgc_kernel_ctx *c, const char *file, const char *defines, const char *name,
                                 cl_kernel *k) {
    tgc_cl_device *d = (tgc_cl_device *)c->device;
    char key[512];
    bool keyed = variant_key(c, file, defines, name, key, sizeof key);
    int32_t at = keyed && d->fused != NULL ? tgc_strmap_get(&d->fused->variants, key) : -1;
    if (at >= 0) {
        *k = d->fused->kernels[at];
        d->counters.fused_hits++;
        return TGC_OK;
    }
    pthread_mutex_unlock(&d->lock);
    char *text = NULL, why[2048];
    tgc_status st = variant_text(c, file, defines, &text);
    pthread_mutex_lock(&d->lock);
    if (st != TGC_OK) return st;
    st = fused_entry(d, text, name, why, sizeof why, &at);
    tgc_free(text);
    if (st != TGC_OK) return tgc_kernel_fail(c, "%s: %s", name, why), st;
    *k = d->fused->kernels[at];
    if (keyed) (void)tgc_strmap_put(&d->fused->variants, key, at); /* out of memory: the text is made again */
    return TGC_OK;
}

/* Launches kernel `name` of kernels/<file>, plain or built with `defines`
 * and c's activation, on c's device; with an event when `event` is not
 * NULL. */
static tgc_status launch_variant(tgc_kernel_ctx *c, const char *file, const char *defines, const char *name,
                                 cl_uint work_dim, const size_t *global, const size_t *local, int n_args,
                                 const tgc_cl_arg *args, cl_event *event) {
    tgc_cl_device *d = (tgc_cl_device *)c->device;
    cl_kernel k = NULL;
    tgc_status st = TGC_OK;
    pthread_mutex_lock(&d->lock);
    if (c->fused_act != NULL || defines != NULL) st = variant_kernel(c, file, defines, name, &k);
    else if ((k = tgc_cl_kernel_get(d, name)) == NULL) st = tgc_kernel_fail(c, "no OpenCL kernel '%s'", name);
    cl_int err = st == TGC_OK ? tgc_cl_launch(d, k, work_dim, global, local, n_args, args, event) : CL_SUCCESS;
    pthread_mutex_unlock(&d->lock);
    if (st == TGC_OK && err != CL_SUCCESS)
        return tgc_kernel_fail(c, "OpenCL kernel '%s': %s", name, tgc_cl_error_name(err));
    return st;
}

tgc_status tgc_cl_enqueue_act(tgc_kernel_ctx *c, const char *file, const char *defines, const char *name,
                              cl_uint work_dim, const size_t *global, const size_t *local, int n_args,
                              const tgc_cl_arg *args) {
    for (cl_uint i = 0; i < work_dim; i++)
        if (global[i] == 0) return TGC_OK;
    cl_event event = NULL;
    tgc_status st = launch_variant(c, file, defines, name, work_dim, global, local, n_args, args,
                                   c->events ? &event : NULL);
    tgc_cl_note_event(c, event, name);
    return st;
}

tgc_status tgc_cl_time_act(tgc_kernel_ctx *c, const char *file, const char *defines, const char *name,
                           cl_uint work_dim, const size_t *global, const size_t *local, int n_args,
                           const tgc_cl_arg *args, uint64_t *ns) {
    *ns = UINT64_MAX;
    for (cl_uint i = 0; i < work_dim; i++)
        if (global[i] == 0) return TGC_OK;
    cl_event event = NULL;
    tgc_status st = launch_variant(c, file, defines, name, work_dim, global, local, n_args, args, &event);
    if (event == NULL) return st;
    cl_ulong start = 0, end = 0;
    cl_int err = clWaitForEvents(1, &event);
    tgc_cl_count_wait(c->device);
    if (err == CL_SUCCESS &&
        clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL) == CL_SUCCESS &&
        clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL) == CL_SUCCESS && end >= start)
        *ns = end - start;
    clReleaseEvent(event);
    return err == CL_SUCCESS ? st : tgc_kernel_fail(c, "waiting for '%s': %s", name, tgc_cl_error_name(err));
}

/* Output 0 may take input 0's buffer (forwarding, when it is the same
 * size): each work-item loads its elements of every input before it
 * stores those of Y, and no other work-item touches them. ResNet-50 on
 * gpu0: a step's tensors at their most 9633792 -> 7225344 bytes. */
const tgc_kernel_def tgc_gpu_kernels_fused[] = {
    {.op = "_FusedElementwise", .fn = fused_gpu, .forward_input = 0,
     .dtypes = {TGC_FLOAT32, TGC_FLOAT16, TGC_DTYPE_INVALID}},
    {.op = NULL},
};
