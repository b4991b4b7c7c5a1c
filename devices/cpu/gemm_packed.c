/* GEMMs on weights packed once, through oneDNN's matmul (see
 * gemm_packed.h). Each piece of C's columns is one oneDNN matmul primitive
 * over its block of B, packed at creation by a oneDNN reorder into the
 * layout the primitive asked for (format "any"); alpha is the primitive's
 * output scale and beta a sum post-op. The engine is the process's one cpu
 * engine; each thread that runs a piece keeps a stream of its own (a
 * thread-specific key destroys it when the thread ends). oneDNN runs on
 * OpenMP: omp_set_num_threads(1) on the calling thread, before a primitive
 * is made and before it runs, keeps each piece on that thread. */
#include "devices/cpu/gemm_packed.h"

#include "devices/cpu/kernels_nn.h"
#include "support/alloc.h"
#include "support/parallel_for.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#ifdef TGC_HAVE_DNNL

#include <oneapi/dnnl/dnnl.h>
#include <pthread.h>

/* libgomp's, declared here so that no omp.h is needed (libdnnl brings libgomp). */
extern void omp_set_num_threads(int n);

/* Columns a piece has at least, and the multiply-adds it should keep: below
 * PIECE_MACS a hand-off to another thread costs more than it saves, and
 * every piece re-reads all of A. At most MAX_PIECES pieces. */
#define MIN_PIECE_COLS 64
#define PIECE_MACS ((int64_t)4 << 20)
#define MAX_PIECES 16

typedef struct piece {
    int64_t n0, n1; /* C's columns [n0, n1) */
    dnnl_primitive_t prim;
    dnnl_memory_t weights; /* B's block, packed */
    dnnl_memory_desc_t src, dst;
    size_t packed_bytes;
} piece;

struct tgc_packed_gemm {
    tgc_gemm_shape shape;
    int n_pieces;
    piece pieces[MAX_PIECES];
    size_t bytes;
};

static dnnl_engine_t engine;
static pthread_once_t engine_once = PTHREAD_ONCE_INIT;
static pthread_key_t stream_key;

static void destroy_stream(void *s) { dnnl_stream_destroy(s); }

static void make_engine(void) {
    if (pthread_key_create(&stream_key, destroy_stream) != 0) return;
    if (dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success) engine = NULL;
}

/* This thread's stream on the engine, made on first use; NULL on failure. */
static dnnl_stream_t thread_stream(void) {
    dnnl_stream_t s = pthread_getspecific(stream_key);
    if (s != NULL) return s;
    if (dnnl_stream_create(&s, engine, dnnl_stream_default_flags) != dnnl_success) return NULL;
    if (pthread_setspecific(stream_key, s) != 0) {
        dnnl_stream_destroy(s);
        return NULL;
    }
    return s;
}

bool tgc_packed_gemm_available(void) {
    const char *env = getenv("TGC_DNNL"); /* TGC_DNNL=0: OpenBLAS only, to compare or to debug */
    if (env != NULL && strcmp(env, "0") == 0) return false;
    pthread_once(&engine_once, make_engine);
    return engine != NULL;
}

static void free_piece(piece *p) {
    if (p->prim != NULL) dnnl_primitive_destroy(p->prim);
    if (p->weights != NULL) dnnl_memory_destroy(p->weights);
    memset(p, 0, sizeof *p);
}

void tgc_packed_gemm_free(tgc_packed_gemm *g) {
    if (g == NULL) return;
    for (int i = 0; i < g->n_pieces; i++) free_piece(&g->pieces[i]);
    tgc_free(g);
}

/* The attributes: alpha as the output scale, beta as a sum post-op. */
static bool make_attr(const tgc_gemm_shape *s, dnnl_primitive_attr_t *attr) {
    if (dnnl_primitive_attr_create(attr) != dnnl_success) return false;
    bool ok = true;
    if (s->alpha != 1.0f) ok = dnnl_primitive_attr_set_output_scales(*attr, 1, 0, &s->alpha) == dnnl_success;
    if (ok && s->beta != 0.0f) {
        dnnl_post_ops_t po;
        ok = dnnl_post_ops_create(&po) == dnnl_success;
        if (ok) {
            ok = dnnl_post_ops_append_sum(po, s->beta) == dnnl_success &&
                 dnnl_primitive_attr_set_post_ops(*attr, po) == dnnl_success;
            dnnl_post_ops_destroy(po);
        }
    }
    if (!ok) dnnl_primitive_attr_destroy(*attr);
    return ok;
}

/* Piece p's primitive for columns [n0, n1), and its block of b packed. */
static bool make_piece(const tgc_gemm_shape *s, const float *b, dnnl_stream_t stream, piece *p) {
    int64_t cols = p->n1 - p->n0;
    dnnl_memory_desc_t any, plain_b;
    dnnl_dims_t src_dims = {s->m, s->k}, src_strides = {s->lda, 1};
    dnnl_dims_t w_dims = {s->k, cols}, dst_dims = {s->m, cols}, dst_strides = {s->ldc, 1};
    /* B's block as it lies: [k, cols] rows of ldb, or B^T's rows n0.. read down */
    dnnl_dims_t b_strides = {s->tb ? 1 : s->ldb, s->tb ? s->ldb : 1};
    if (dnnl_memory_desc_init_by_strides(&p->src, 2, src_dims, dnnl_f32, src_strides) != dnnl_success ||
        dnnl_memory_desc_init_by_strides(&p->dst, 2, dst_dims, dnnl_f32, dst_strides) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&any, 2, w_dims, dnnl_f32, dnnl_format_tag_any) != dnnl_success ||
        dnnl_memory_desc_init_by_strides(&plain_b, 2, w_dims, dnnl_f32, b_strides) != dnnl_success)
        return false;
    dnnl_matmul_desc_t desc;
    dnnl_primitive_attr_t attr;
    if (dnnl_matmul_desc_init(&desc, &p->src, &any, NULL, &p->dst) != dnnl_success || !make_attr(s, &attr))
        return false;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_status_t st = dnnl_primitive_desc_create(&pd, &desc, attr, engine, NULL);
    dnnl_primitive_attr_destroy(attr);
    if (st != dnnl_success) return false;
    const char *impl = NULL;
    bool fast = dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success && impl != NULL &&
                strncmp(impl, "ref", 3) != 0; /* the reference loops: slower than OpenBLAS */
    const dnnl_memory_desc_t *packed = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    if (packed != NULL) p->packed_bytes = dnnl_memory_desc_get_size(packed);
    bool ok = fast && packed != NULL && dnnl_primitive_create(&p->prim, pd) == dnnl_success &&
              dnnl_memory_create(&p->weights, packed, engine, DNNL_MEMORY_ALLOCATE) == dnnl_success;
    dnnl_primitive_desc_t rpd = NULL;
    dnnl_primitive_t reorder = NULL;
    dnnl_memory_t from = NULL;
    const float *block = s->tb ? b + p->n0 * s->ldb : b + p->n0;
    ok = ok && dnnl_memory_create(&from, &plain_b, engine, (void *)block) == dnnl_success &&
         dnnl_reorder_primitive_desc_create(&rpd, &plain_b, engine, packed, engine, NULL) == dnnl_success &&
         dnnl_primitive_create(&reorder, rpd) == dnnl_success;
    if (ok) {
        dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, p->weights}};
        ok = dnnl_primitive_execute(reorder, stream, 2, args) == dnnl_success && dnnl_stream_wait(stream) == dnnl_success;
    }
    if (reorder != NULL) dnnl_primitive_destroy(reorder);
    if (rpd != NULL) dnnl_primitive_desc_destroy(rpd);
    if (from != NULL) dnnl_memory_destroy(from);
    dnnl_primitive_desc_destroy(pd);
    return ok;
}

/* The pieces for shape s: power-of-two counts, each of PIECE_MACS and
 * MIN_PIECE_COLS at least, columns cut at multiples of 16. */
static int piece_count(const tgc_gemm_shape *s) {
    int64_t macs = s->m * s->n * s->k; /* sizes checked by the caller */
    int pieces = 1;
    while (pieces < MAX_PIECES && macs / (2 * pieces) >= PIECE_MACS && s->n / (2 * pieces) >= MIN_PIECE_COLS)
        pieces *= 2;
    return pieces;
}

tgc_packed_gemm *tgc_packed_gemm_create(const tgc_gemm_shape *s, const float *b, size_t *bytes) {
    *bytes = 0;
    if (!tgc_packed_gemm_available() || s->m < 1 || s->n < 1 || s->k < 1) return NULL;
    if (s->m > INT32_MAX || s->n > INT32_MAX || s->k > INT32_MAX || s->m > INT64_MAX / s->n / s->k) return NULL;
    omp_set_num_threads(1); /* primitives planned for one thread: tgc's pool splits the work */
    dnnl_stream_t stream = thread_stream();
    tgc_packed_gemm *g = tgc_calloc(1, sizeof *g);
    if (g == NULL || stream == NULL) {
        tgc_free(g);
        return NULL;
    }
    g->shape = *s;
    g->bytes = sizeof *g;
    int pieces = piece_count(s);
    int64_t step = (s->n + pieces - 1) / pieces;
    step = (step + 15) / 16 * 16;
    for (int64_t n0 = 0; n0 < s->n; n0 += step) {
        piece *p = &g->pieces[g->n_pieces++];
        p->n0 = n0;
        p->n1 = n0 + step < s->n ? n0 + step : s->n;
        if (!make_piece(s, b, stream, p)) {
            tgc_packed_gemm_free(g);
            return NULL;
        }
        g->bytes += p->packed_bytes;
    }
    *bytes = g->bytes;
    return g;
}

bool tgc_packed_gemm_matches(const tgc_packed_gemm *g, const tgc_gemm_shape *s) {
    const tgc_gemm_shape *t = &g->shape;
    return t->tb == s->tb && t->m == s->m && t->n == s->n && t->k == s->k && t->lda == s->lda && t->ldb == s->ldb &&
           t->ldc == s->ldc && t->alpha == s->alpha && t->beta == s->beta;
}

typedef struct run_job {
    const tgc_packed_gemm *g;
    const float *a;
    float *c;
    const tgc_fused_act *act;
    atomic_bool failed;
} run_job;

static void run_piece(void *arg, int64_t i, int slot) {
    (void)slot;
    run_job *j = arg;
    const piece *p = &j->g->pieces[i];
    omp_set_num_threads(1);
    dnnl_stream_t stream = thread_stream();
    dnnl_memory_t src = NULL, dst = NULL;
    bool ok = stream != NULL && dnnl_memory_create(&src, &p->src, engine, (void *)j->a) == dnnl_success &&
              dnnl_memory_create(&dst, &p->dst, engine, j->c + p->n0) == dnnl_success;
    if (ok) {
        dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, p->weights}, {DNNL_ARG_DST, dst}};
        ok = dnnl_primitive_execute(p->prim, stream, 3, args) == dnnl_success &&
             dnnl_stream_wait(stream) == dnnl_success;
    }
    if (src != NULL) dnnl_memory_destroy(src);
    if (dst != NULL) dnnl_memory_destroy(dst);
    if (!ok) atomic_store(&j->failed, true);
    else tgc_cpu_act_block(j->act, j->c, j->g->shape.ldc, 0, j->g->shape.m, p->n0, p->n1);
}

bool tgc_packed_gemm_run(const tgc_packed_gemm *g, tgc_thread_pool *pool, const float *a, float *c,
                         const tgc_fused_act *act) {
    run_job j = {.g = g, .a = a, .c = c, .act = act};
    atomic_init(&j.failed, false);
    tgc_parallel_for(pool, g->n_pieces, run_piece, &j);
    return !atomic_load(&j.failed);
}

#else /* no oneDNN: OpenBLAS everywhere */

bool tgc_packed_gemm_available(void) { return false; }

tgc_packed_gemm *tgc_packed_gemm_create(const tgc_gemm_shape *s, const float *b, size_t *bytes) {
    (void)s, (void)b;
    *bytes = 0;
    return NULL;
}

bool tgc_packed_gemm_matches(const tgc_packed_gemm *g, const tgc_gemm_shape *s) {
    (void)g, (void)s;
    return false;
}

bool tgc_packed_gemm_run(const tgc_packed_gemm *g, tgc_thread_pool *pool, const float *a, float *c,
                         const tgc_fused_act *act) {
    (void)g, (void)pool, (void)a, (void)c, (void)act;
    return false;
}

void tgc_packed_gemm_free(tgc_packed_gemm *g) { (void)g; }

#endif
