/* GEMMs through oneDNN's matmul (see gemm_packed.h). On packed weights:
 * each piece of C's columns is one primitive over its block of B, packed
 * at creation by a oneDNN reorder into the layout the primitive asked for
 * (format "any"). On operands as they lie: one primitive per geometry, in
 * a process-wide table. Alpha is a primitive's output scale, beta a sum
 * post-op. The engine is the process's one cpu engine; each thread that
 * runs primitives keeps a stream and a scratchpad of its own (a
 * thread-specific key destroys them when the thread ends). oneDNN runs on
 * OpenMP: omp_set_num_threads(1) on the calling thread, before a primitive
 * is made and before it runs, keeps each product on that thread. The
 * engine, the threads' streams and scratchpads and the make lock serve the
 * other oneDNN users too (dnnl_runtime.h: the int8 convolution). */
#include "devices/cpu/gemm_packed.h"
#include "devices/cpu/dnnl_runtime.h"

#include "devices/cpu/kernels_nn.h"
#include "devices/kernel_cache.h"
#include "support/alloc.h"
#include "support/checked.h"
#include "support/parallel_for.h"
#include "support/settings.h"

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
 * every piece re-reads all of A. At most MAX_PIECES pieces. Where the
 * columns allow fewer pieces than the multiply-adds, each piece of columns
 * is cut again into blocks of rows (MIN_BLOCK_ROWS at least), which share
 * its packed block of B: a product with few columns (ConvNeXt's MLPs, 3136
 * x 384 by 384 x 96) had been one piece, one thread. At most MAX_PIECES
 * pieces and blocks together. */
#define MIN_PIECE_COLS 64
#define MIN_BLOCK_ROWS 64
#define PIECE_MACS ((int64_t)4 << 20)
#define MAX_PIECES 16

/* The largest block of C a thread stages densely (see piece_desc): past
 * it, the primitive writes C's strided block itself (oneDNN's jit GEMM),
 * so that no thread's scratch grows with a product's size. */
#define STAGE_MAX_BYTES ((int64_t)16 << 20)

/* Whether an m x cols block of C whose rows lie ldc apart is staged. */
static bool stages(int64_t m, int64_t cols, int64_t ldc) {
    return ldc != cols && m <= STAGE_MAX_BYTES / (int64_t)sizeof(float) / cols;
}

/* A primitive over a block of `rows` rows of a piece's columns. */
typedef struct rows_prim {
    dnnl_primitive_t prim;
    dnnl_memory_desc_t src, dst; /* dst: a dense [rows, n1 - n0] block when staged */
    size_t scratch_bytes;
    bool staged; /* C's block is not dense: written in the thread's scratch, then copied (run_staged) */
} rows_prim;

typedef struct piece {
    int64_t n0, n1;        /* C's columns [n0, n1) */
    rows_prim body, tail;  /* blocks of rows_each rows; the last block's when it has fewer (else prim NULL) */
    dnnl_memory_t weights; /* B's block, packed */
    size_t packed_bytes;
} piece;

struct tgc_packed_gemm {
    tgc_gemm_shape shape;
    int n_pieces;       /* pieces of columns */
    int row_blocks;     /* blocks of rows a piece runs in, each a work item */
    int64_t rows_each;  /* rows a block has, the last m - (row_blocks - 1) rows_each */
    piece pieces[MAX_PIECES];
    size_t bytes;
};

static dnnl_engine_t engine;
static pthread_once_t engine_once = PTHREAD_ONCE_INIT;
/* Held while primitives are made (and B packed by reorders, which use
 * oneDNN's own scratchpad): one thread at a time. */
static pthread_mutex_t make_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t thread_key;

/* An argument's memory object (tgc_dnnl_arg), found again by the address
 * of the layout it was made for. */
typedef struct arg_slot {
    const dnnl_memory_desc_t *md;
    dnnl_memory_t memory;
} arg_slot;

/* Slots a role: ARG_SETS sets of ARG_WAYS, a layout's set from its
 * address; a set whose ways are all taken gives one up in turn. Direct
 * mapped (one way), 256 slots still lost 27 of MobileNetV3-Small's 124
 * layouts a role each run to collisions. */
#define ARG_SETS 64
#define ARG_WAYS 4

/* What each thread that runs primitives keeps: its stream, its
 * scratchpad and its arguments' memory objects. Primitives are made with
 * user scratchpads: oneDNN's own (this build has no
 * DNNL_ENABLE_CONCURRENT_EXEC) is one buffer for the process, and two
 * threads running products at once wrote over each other's packed blocks
 * (ResNet-50 on two threads: logits off by 10^30). */
typedef struct thread_state {
    dnnl_stream_t stream;
    dnnl_memory_t scratch; /* NULL until a primitive needs one */
    size_t scratch_bytes;
    arg_slot args[TGC_DNNL_ROLES][ARG_SETS * ARG_WAYS];
    long args_made;
    unsigned victim; /* the way a full set gives up next */
} thread_state;

static void destroy_thread_state(void *p) {
    thread_state *t = p;
    if (t->scratch != NULL) dnnl_memory_destroy(t->scratch);
    for (int r = 0; r < TGC_DNNL_ROLES; r++)
        for (int i = 0; i < ARG_SETS * ARG_WAYS; i++)
            if (t->args[r][i].memory != NULL) dnnl_memory_destroy(t->args[r][i].memory);
    dnnl_stream_destroy(t->stream);
    free(t);
}

static void make_engine(void) {
    if (pthread_key_create(&thread_key, destroy_thread_state) != 0) return;
    /* No JIT reports to profilers unless asked (support/settings.def): they
     * load a collector library and write trace records per kernel made. */
    if (tgc_settings_current()->dnnl_jit_profile == NULL) dnnl_set_jit_profiling_flags(0);
    if (dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success) engine = NULL;
}

/* This thread's state, made on first use; NULL on failure. malloc'd: it
 * lives as long as the thread, past any tgc object. */
static thread_state *this_thread(void) {
    thread_state *t = pthread_getspecific(thread_key);
    if (t != NULL) return t;
    if ((t = calloc(1, sizeof *t)) == NULL) return NULL;
    if (dnnl_stream_create(&t->stream, engine, dnnl_stream_default_flags) != dnnl_success) {
        free(t);
        return NULL;
    }
    if (pthread_setspecific(thread_key, t) != 0) {
        destroy_thread_state(t);
        return NULL;
    }
    return t;
}

/* A scratchpad of at least `bytes` for this thread (NULL when none is
 * needed); *ok false when it cannot be had. */
static dnnl_memory_t thread_scratch(thread_state *t, size_t bytes, bool *ok) {
    *ok = true;
    if (bytes == 0) return NULL;
    if (t->scratch_bytes >= bytes) return t->scratch;
    if (t->scratch != NULL) dnnl_memory_destroy(t->scratch);
    t->scratch = NULL;
    t->scratch_bytes = 0;
    dnnl_memory_desc_t md;
    dnnl_dims_t dims = {(dnnl_dim_t)bytes};
    if (dnnl_memory_desc_init_by_tag(&md, 1, dims, dnnl_u8, dnnl_a) != dnnl_success ||
        dnnl_memory_create(&t->scratch, &md, engine, DNNL_MEMORY_ALLOCATE) != dnnl_success) {
        t->scratch = NULL;
        *ok = false;
        return NULL;
    }
    t->scratch_bytes = bytes;
    return t->scratch;
}

dnnl_engine_t tgc_dnnl_engine(void) { return tgc_packed_gemm_available() ? engine : NULL; }

void tgc_dnnl_make_lock(void) { pthread_mutex_lock(&make_lock); }

void tgc_dnnl_make_unlock(void) { pthread_mutex_unlock(&make_lock); }

dnnl_stream_t tgc_dnnl_thread_stream(void) {
    omp_set_num_threads(1);
    thread_state *t = this_thread();
    return t != NULL ? t->stream : NULL;
}

dnnl_memory_t tgc_dnnl_arg(tgc_dnnl_role role, const dnnl_memory_desc_t *md, void *data) {
    thread_state *t = this_thread();
    if (t == NULL) return NULL;
    arg_slot *set = &t->args[role][(((uintptr_t)md >> 4) * UINT64_C(0x9E3779B97F4A7C15) >> 32) % ARG_SETS * ARG_WAYS];
    arg_slot *s = NULL;
    for (int i = 0; i < ARG_WAYS && s == NULL; i++)
        if (set[i].memory != NULL && set[i].md == md) s = &set[i];
    if (s != NULL) { /* the same address: the same layout unless it was freed and another made there */
        const dnnl_memory_desc_t *have;
        if (dnnl_memory_get_memory_desc(s->memory, &have) == dnnl_success && dnnl_memory_desc_equal(have, md) &&
            dnnl_memory_set_data_handle(s->memory, data) == dnnl_success)
            return s->memory;
    }
    for (int i = 0; i < ARG_WAYS && s == NULL; i++)
        if (set[i].memory == NULL) s = &set[i];
    if (s == NULL) s = &set[t->victim++ % ARG_WAYS];
    if (s->memory != NULL) dnnl_memory_destroy(s->memory);
    s->md = md;
    if (dnnl_memory_create(&s->memory, md, engine, data) != dnnl_success) {
        s->memory = NULL;
        return NULL;
    }
    t->args_made++;
    return s->memory;
}

long tgc_dnnl_args_made(void) {
    thread_state *t = this_thread();
    return t != NULL ? t->args_made : 0;
}

bool tgc_dnnl_run(dnnl_primitive_t prim, size_t scratch_bytes, int n, dnnl_exec_arg_t *args) {
    omp_set_num_threads(1);
    thread_state *t = this_thread();
    if (t == NULL) return false;
    bool ok;
    dnnl_memory_t scratch = thread_scratch(t, scratch_bytes, &ok);
    if (!ok) return false;
    if (scratch != NULL) args[n++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, scratch};
    return dnnl_primitive_execute(prim, t->stream, n, args) == dnnl_success &&
           dnnl_stream_wait(t->stream) == dnnl_success;
}

/* Runs prim on this thread with src, weights (memory) and dst, its
 * scratchpad needing scratch_bytes. False on any failure. */
static bool execute(dnnl_primitive_t prim, size_t scratch_bytes, const dnnl_memory_desc_t *src_md, const void *src,
                    dnnl_memory_t weights, const dnnl_memory_desc_t *weights_md, const void *weights_data,
                    const dnnl_memory_desc_t *dst_md, void *dst) {
    dnnl_memory_t s = tgc_dnnl_arg(TGC_DNNL_SRC, src_md, (void *)src), d = tgc_dnnl_arg(TGC_DNNL_DST, dst_md, dst);
    dnnl_memory_t w = weights != NULL ? weights : tgc_dnnl_arg(TGC_DNNL_WEIGHTS, weights_md, (void *)weights_data);
    if (s == NULL || d == NULL || w == NULL) return false;
    dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, s}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, d}};
    return tgc_dnnl_run(prim, scratch_bytes, 3, args);
}

size_t tgc_dnnl_scratch_size(const_dnnl_primitive_desc_t pd) {
    const dnnl_memory_desc_t *md = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    return md != NULL ? dnnl_memory_desc_get_size(md) : 0;
}

bool tgc_packed_gemm_available(void) {
    if (!tgc_settings_current()->dnnl) return false; /* TGC_DNNL=0: OpenBLAS only, to compare or to debug */
    pthread_once(&engine_once, make_engine);
    return engine != NULL;
}

static void free_piece(piece *p) {
    if (p->body.prim != NULL) dnnl_primitive_destroy(p->body.prim);
    if (p->tail.prim != NULL) dnnl_primitive_destroy(p->tail.prim);
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
    bool ok = dnnl_primitive_attr_set_scratchpad_mode(*attr, dnnl_scratchpad_mode_user) == dnnl_success;
    if (ok && s->alpha != 1.0f) ok = dnnl_primitive_attr_set_output_scales(*attr, 1, 0, &s->alpha) == dnnl_success;
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

/* The matmul primitive descriptor for `rows` rows and `cols` columns of
 * shape s, with its source and destination descriptors into *src and
 * *dst; NULL when oneDNN declines. The destination is a dense [rows, cols] block, staged
 * (up to STAGE_MAX_BYTES): oneDNN 2.6 has brgemm kernels only for dense
 * operands, and gives a strided one (a piece of C's columns) to its jit
 * GEMM, whose first use in a process generates its whole kernel set (23
 * ms on this machine: most of a small model's start-up; brgemm makes only
 * the kernels of the shape at hand, 0.1-2 ms, and ran these products as
 * fast or faster, 128x1024x64 in 0.077 ms against 0.118). */
static dnnl_primitive_desc_t piece_desc(const tgc_gemm_shape *s, int64_t rows, int64_t cols, dnnl_memory_desc_t *src,
                                        dnnl_memory_desc_t *dst) {
    dnnl_memory_desc_t any;
    dnnl_dims_t src_dims = {rows, s->k}, src_strides = {s->ta ? 1 : s->lda, s->ta ? s->lda : 1};
    dnnl_dims_t w_dims = {s->k, cols}, dst_dims = {rows, cols};
    dnnl_dims_t dst_strides = {stages(rows, cols, s->ldc) ? cols : s->ldc, 1};
    if (dnnl_memory_desc_init_by_strides(src, 2, src_dims, dnnl_f32, src_strides) != dnnl_success ||
        dnnl_memory_desc_init_by_strides(dst, 2, dst_dims, dnnl_f32, dst_strides) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&any, 2, w_dims, dnnl_f32, dnnl_format_tag_any) != dnnl_success)
        return NULL;
    dnnl_matmul_desc_t desc;
    dnnl_primitive_attr_t attr;
    if (dnnl_matmul_desc_init(&desc, src, &any, NULL, dst) != dnnl_success || !make_attr(s, &attr)) return NULL;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_status_t st = dnnl_primitive_desc_create(&pd, &desc, attr, engine, NULL);
    dnnl_primitive_attr_destroy(attr);
    return st == dnnl_success ? pd : NULL;
}

/* A block of `rows` rows of piece p's columns: its primitive into r and
 * its descriptor into *pd_out (NULL when oneDNN declines; else the
 * caller's to destroy, and where the caller asks which layout B's block
 * is wanted in). False when oneDNN declines or offers only its reference
 * loops (slower than OpenBLAS). */
static bool make_rows(const tgc_gemm_shape *s, int64_t rows, const piece *p, rows_prim *r,
                      dnnl_primitive_desc_t *pd_out) {
    dnnl_primitive_desc_t pd = piece_desc(s, rows, p->n1 - p->n0, &r->src, &r->dst);
    *pd_out = pd;
    if (pd == NULL) return false;
    const char *impl = NULL;
    bool fast = dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success && impl != NULL &&
                strncmp(impl, "ref", 3) != 0;
    r->scratch_bytes = tgc_dnnl_scratch_size(pd);
    r->staged = stages(rows, p->n1 - p->n0, s->ldc);
    return fast && dnnl_primitive_create(&r->prim, pd) == dnnl_success;
}

/* Piece p's primitives for columns [n0, n1) in blocks of rows_each rows
 * (the last of tail_rows), and its block of b packed. False when oneDNN
 * declines either block, or the last block wants B in another layout
 * than the others (the caller then tries one block of all the rows). */
static bool make_piece(const tgc_gemm_shape *s, const float *b, dnnl_stream_t stream, int64_t rows_each,
                       int64_t tail_rows, piece *p) {
    int64_t cols = p->n1 - p->n0;
    dnnl_memory_desc_t plain_b;
    dnnl_dims_t w_dims = {s->k, cols};
    /* B's block as it lies: [k, cols] rows of ldb, or B^T's rows n0.. read down */
    dnnl_dims_t b_strides = {s->tb ? 1 : s->ldb, s->tb ? s->ldb : 1};
    if (dnnl_memory_desc_init_by_strides(&plain_b, 2, w_dims, dnnl_f32, b_strides) != dnnl_success) return false;
    dnnl_primitive_desc_t pd = NULL, tail_pd = NULL;
    bool ok = make_rows(s, rows_each, p, &p->body, &pd);
    const dnnl_memory_desc_t *packed = ok ? dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0) : NULL;
    ok = ok && packed != NULL;
    if (ok && tail_rows != rows_each) {
        ok = make_rows(s, tail_rows, p, &p->tail, &tail_pd);
        const dnnl_memory_desc_t *tail_packed =
            ok ? dnnl_primitive_desc_query_md(tail_pd, dnnl_query_weights_md, 0) : NULL;
        ok = ok && tail_packed != NULL && dnnl_memory_desc_equal(tail_packed, packed);
    }
    if (ok) p->packed_bytes = dnnl_memory_desc_get_size(packed);
    ok = ok && dnnl_memory_create(&p->weights, packed, engine, DNNL_MEMORY_ALLOCATE) == dnnl_success;
    dnnl_primitive_desc_t rpd = NULL;
    dnnl_primitive_t reorder = NULL;
    dnnl_memory_t from = NULL;
    const float *block = s->tb ? b + p->n0 * s->ldb : b + p->n0;
    ok = ok && dnnl_memory_create(&from, &plain_b, engine, (void *)block) == dnnl_success &&
         dnnl_reorder_primitive_desc_create(&rpd, &plain_b, engine, packed, engine, NULL) == dnnl_success &&
         dnnl_primitive_create(&reorder, rpd) == dnnl_success;
    if (ok) {
        dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, p->weights}};
        ok = dnnl_primitive_execute(reorder, stream, 2, args) == dnnl_success &&
             dnnl_stream_wait(stream) == dnnl_success;
    }
    if (reorder != NULL) dnnl_primitive_destroy(reorder);
    if (rpd != NULL) dnnl_primitive_desc_destroy(rpd);
    if (from != NULL) dnnl_memory_destroy(from);
    if (tail_pd != NULL) dnnl_primitive_desc_destroy(tail_pd);
    if (pd != NULL) dnnl_primitive_desc_destroy(pd);
    return ok;
}

/* Sizes oneDNN's int dims and our m x n x k products hold (every size >= 1). */
static bool packable(const tgc_gemm_shape *s) {
    return s->m <= INT32_MAX && s->n <= INT32_MAX && s->k <= INT32_MAX && s->m <= INT64_MAX / s->n / s->k;
}

/* The pieces for shape s: power-of-two counts, each of PIECE_MACS and
 * MIN_PIECE_COLS at least, columns cut at multiples of 16 (piece_start). */
static int piece_count(const tgc_gemm_shape *s) {
    int64_t macs = s->m * s->n * s->k; /* sizes checked by the caller */
    int pieces = 1;
    while (pieces < MAX_PIECES && macs / (2 * pieces) >= PIECE_MACS && s->n / (2 * pieces) >= MIN_PIECE_COLS)
        pieces *= 2;
    return pieces;
}

/* The first column of piece i of `pieces` over n columns: i * n / pieces
 * rounded to a multiple of 16 (n for i == pieces). Every piece keeps its
 * count's share to within 16 columns, so that pieces of a power-of-two
 * count split evenly over 2, 4 or 8 threads: 672 columns in 8 pieces of 84
 * rounded up to 96 made 7, 4 and 3 over two threads. A 288 -> 672 1x1 on
 * 14x14 as the transposed product (conv_small_map.c's, the node alone, 2
 * threads, 3 alternating runs): 258-274 us in 7 pieces, 219-223 in 8. */
static int64_t piece_start(int i, int pieces, int64_t n) {
    return i == pieces ? n : (i * n / pieces + 8) / 16 * 16;
}

/* The blocks of rows each of `pieces` pieces of columns of shape s runs
 * in: a power of two while pieces and blocks stay within MAX_PIECES, each
 * work item keeps PIECE_MACS and each block MIN_BLOCK_ROWS; *rows_each
 * the rows of all blocks but the last (which has the rest). */
static int row_blocks_for(const tgc_gemm_shape *s, int pieces, int64_t *rows_each) {
    int64_t macs = s->m * s->n * s->k; /* sizes checked by the caller */
    int blocks = 1;
    while (pieces * blocks * 2 <= MAX_PIECES && macs / (2 * pieces * blocks) >= PIECE_MACS &&
           s->m / (2 * blocks) >= MIN_BLOCK_ROWS)
        blocks *= 2;
    *rows_each = (s->m + blocks - 1) / blocks;
    return (int)((s->m + *rows_each - 1) / *rows_each);
}

/* The pieces of g (its shape set) in blocks of rows_each rows; false when
 * oneDNN declines one (the pieces made so far are left for the caller to
 * free). */
static bool make_pieces(tgc_packed_gemm *g, const float *b, dnnl_stream_t stream, int pieces, int row_blocks,
                        int64_t rows_each) {
    const tgc_gemm_shape *s = &g->shape;
    g->row_blocks = row_blocks;
    g->rows_each = rows_each;
    g->bytes = sizeof *g;
    bool ok = true;
    pthread_mutex_lock(&make_lock);
    for (int i = 0; ok && i < pieces; i++) {
        piece *p = &g->pieces[g->n_pieces++];
        p->n0 = piece_start(i, pieces, s->n);
        p->n1 = piece_start(i + 1, pieces, s->n);
        ok = make_piece(s, b, stream, rows_each, s->m - (row_blocks - 1) * rows_each, p);
        g->bytes += p->packed_bytes;
    }
    pthread_mutex_unlock(&make_lock);
    return ok;
}

static void free_pieces(tgc_packed_gemm *g) {
    for (int i = 0; i < g->n_pieces; i++) free_piece(&g->pieces[i]);
    g->n_pieces = 0;
}

/* tgc_packed_gemm_create, with *no_memory set where tgc's host memory ran
 * out (not oneDNN declining the shape). */
static tgc_packed_gemm *create(const tgc_gemm_shape *s, const float *b, size_t *bytes, bool *no_memory) {
    *bytes = 0;
    *no_memory = false;
    if (!tgc_packed_gemm_available() || s->m < 1 || s->n < 1 || s->k < 1 || !packable(s)) return NULL;
    omp_set_num_threads(1); /* primitives planned for one thread: tgc's pool splits the work */
    thread_state *t = this_thread();
    tgc_packed_gemm *g = tgc_calloc(1, sizeof *g);
    if (g == NULL || t == NULL) {
        *no_memory = g == NULL;
        tgc_free(g);
        return NULL;
    }
    g->shape = *s;
    int pieces = piece_count(s);
    int64_t rows_each;
    int row_blocks = row_blocks_for(s, pieces, &rows_each);
    bool ok = make_pieces(g, b, t->stream, pieces, row_blocks, rows_each);
    if (!ok && row_blocks > 1) { /* the blocks of rows wanted B in different layouts: all rows at once */
        free_pieces(g);
        ok = make_pieces(g, b, t->stream, pieces, 1, s->m);
    }
    if (!ok) {
        tgc_packed_gemm_free(g);
        return NULL;
    }
    *bytes = g->bytes;
    return g;
}

/* The packed bytes of `cols` columns of shape s as oneDNN lays them out
 * (its weights descriptor, asked without packing); failing that, a bound:
 * k and the columns padded to 64, the widest blocking of its matmuls. */
static int64_t piece_bytes(const tgc_gemm_shape *s, int64_t rows, int64_t cols) {
    dnnl_memory_desc_t src, dst;
    dnnl_primitive_desc_t pd = piece_desc(s, rows, cols, &src, &dst);
    const dnnl_memory_desc_t *packed = pd != NULL ? dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0) : NULL;
    int64_t bytes = packed != NULL ? (int64_t)dnnl_memory_desc_get_size(packed)
                                   : (s->k + 63) / 64 * 64 * ((cols + 63) / 64 * 64) * (int64_t)sizeof(float);
    if (pd != NULL) dnnl_primitive_desc_destroy(pd);
    return bytes;
}

static bool same_shape(const tgc_gemm_shape *t, const tgc_gemm_shape *s) {
    return t->ta == s->ta && t->tb == s->tb && t->m == s->m && t->n == s->n && t->k == s->k && t->lda == s->lda &&
           t->ldb == s->ldb && t->ldc == s->ldc && t->alpha == s->alpha && t->beta == s->beta;
}

/* Sizes asked of oneDNN, kept for the process: the planners ask for the
 * same few shapes many times. */
#define SIZE_MEMO 64
static struct {
    tgc_gemm_shape shape;
    int64_t bytes;
} size_memo[SIZE_MEMO];
static int size_memo_count, size_memo_next;
static pthread_mutex_t size_memo_lock = PTHREAD_MUTEX_INITIALIZER;

int64_t tgc_packed_gemm_bound(const tgc_gemm_shape *s) {
    if (!tgc_packed_gemm_available() || s->m < 1 || s->n < 1 || s->k < 1) return 0;
    if (!packable(s)) return (int64_t)sizeof(tgc_packed_gemm); /* tgc_packed_gemm_create declines it */
    pthread_mutex_lock(&size_memo_lock);
    for (int i = 0; i < size_memo_count; i++)
        if (same_shape(&size_memo[i].shape, s)) {
            int64_t bytes = size_memo[i].bytes;
            pthread_mutex_unlock(&size_memo_lock);
            return bytes;
        }
    pthread_mutex_unlock(&size_memo_lock);
    int pieces = piece_count(s);
    int64_t bytes = (int64_t)sizeof(tgc_packed_gemm), rows_each;
    row_blocks_for(s, pieces, &rows_each);
    pthread_mutex_lock(&make_lock); /* as tgc_packed_gemm_create asks oneDNN */
    for (int i = 0; i < pieces; i++)
        bytes += piece_bytes(s, rows_each, piece_start(i + 1, pieces, s->n) - piece_start(i, pieces, s->n));
    pthread_mutex_unlock(&make_lock);
    pthread_mutex_lock(&size_memo_lock);
    size_memo[size_memo_next].shape = *s;
    size_memo[size_memo_next].bytes = bytes;
    size_memo_next = (size_memo_next + 1) % SIZE_MEMO;
    if (size_memo_count < SIZE_MEMO) size_memo_count++;
    pthread_mutex_unlock(&size_memo_lock);
    return bytes;
}

bool tgc_packed_gemm_matches(const tgc_packed_gemm *g, const tgc_gemm_shape *s) { return same_shape(&g->shape, s); }

typedef struct run_job {
    const tgc_packed_gemm *g;
    const float *a;
    float *c;
    const tgc_fused_act *act;
    tgc_packed_gemm_block_fn fn; /* run_blocks: each piece's block goes here, not into c */
    void *arg;
    atomic_bool failed;
} run_job;

/* Rows rows of cols floats from `from` (rows from_ld apart) to `to` (to_ld apart). */
static void copy_rows(float *to, int64_t to_ld, const float *from, int64_t from_ld, int64_t rows, int64_t cols) {
    for (int64_t i = 0; i < rows; i++) memcpy(to + i * to_ld, from + i * from_ld, (size_t)cols * sizeof(float));
}

/* Blocks of floats[0..n) floats (n <= 2) in this thread's scratch, placed
 * after the primitive's own scratchpad of scratch_bytes, each 64-byte
 * aligned, into blocks[0..n) (NULL for 0 floats). False when the sizes overflow or the
 * scratch cannot be had. The scratch is the thread's (thread_state): it
 * lives as long as the thread and grows to the largest request. */
static bool thread_blocks(size_t scratch_bytes, int n, const int64_t *floats, float **blocks) {
    int64_t at[2], end = ((int64_t)scratch_bytes + 63) / 64 * 64;
    if (n > 2) return false; /* at[]'s size: a B and a C block at most */
    for (int i = 0; i < n; i++) {
        at[i] = end;
        int64_t bytes;
        if (floats[i] < 0 || !tgc_checked_mul_i64(floats[i], (int64_t)sizeof(float), &bytes) ||
            !tgc_checked_add_i64(end, (bytes + 63) / 64 * 64, &end))
            return false;
    }
    omp_set_num_threads(1);
    thread_state *t = this_thread();
    bool ok = t != NULL;
    dnnl_memory_t scratch = ok ? thread_scratch(t, (size_t)end, &ok) : NULL;
    void *base = NULL;
    if (!ok || dnnl_memory_get_data_handle(scratch, &base) != dnnl_success || base == NULL) return false;
    for (int i = 0; i < n; i++) blocks[i] = floats[i] > 0 ? (float *)((char *)base + at[i]) : NULL;
    return true;
}

/* A dense [m, cols] block in this thread's scratch, placed after the
 * primitive's own scratchpad of scratch_bytes; NULL on failure. */
static float *stage_block(size_t scratch_bytes, int64_t m, int64_t cols) {
    float *block;
    return thread_blocks(scratch_bytes, 1, &(int64_t){m * cols}, &block) ? block : NULL;
}

/* Runs prim (made for a dense [m, cols] destination dst_md) on this thread
 * for a block of C that is not dense (at c, rows ldc apart): the primitive
 * writes the dense `block` (C's block copied there first when beta reads
 * it), then copied into C. The copy is m x cols floats against m x cols x
 * k multiply-adds. The other arguments as execute's. */
static bool run_staged_in(dnnl_primitive_t prim, size_t scratch_bytes, const dnnl_memory_desc_t *src_md,
                          const void *src, dnnl_memory_t weights, const dnnl_memory_desc_t *weights_md,
                          const void *weights_data, const dnnl_memory_desc_t *dst_md, int64_t m, int64_t cols,
                          float beta, float *c, int64_t ldc, float *block) {
    if (beta != 0.0f) copy_rows(block, cols, c, ldc, m, cols);
    /* tgc_dnnl_run asks the thread's scratch for the primitive's own share: the same buffer, large enough */
    if (!execute(prim, scratch_bytes, src_md, src, weights, weights_md, weights_data, dst_md, block)) return false;
    copy_rows(c, ldc, block, cols, m, cols);
    return true;
}

/* run_staged_in with the block placed in this thread's scratch (stage_block). */
static bool run_staged(dnnl_primitive_t prim, size_t scratch_bytes, const dnnl_memory_desc_t *src_md, const void *src,
                       dnnl_memory_t weights, const dnnl_memory_desc_t *weights_md, const void *weights_data,
                       const dnnl_memory_desc_t *dst_md, int64_t m, int64_t cols, float beta, float *c, int64_t ldc) {
    float *block = stage_block(scratch_bytes, m, cols);
    return block != NULL && run_staged_in(prim, scratch_bytes, src_md, src, weights, weights_md, weights_data, dst_md,
                                          m, cols, beta, c, ldc, block);
}

/* Block of rows i of g's pieces: its first row into *r0, its row count
 * into *rows; returns its primitive (the body's or the tail's). */
static const rows_prim *row_block(const tgc_packed_gemm *g, const piece *p, int64_t i, int64_t *r0, int64_t *rows) {
    *r0 = i * g->rows_each;
    *rows = i == g->row_blocks - 1 ? g->shape.m - *r0 : g->rows_each;
    return *rows == g->rows_each ? &p->body : &p->tail;
}

/* A's row r0 (A^T's column r0 when ta). */
static const float *a_rows(const tgc_gemm_shape *s, const float *a, int64_t r0) {
    return s->ta ? a + r0 : a + r0 * s->lda;
}

/* Work item i of a run_blocks job (piece i / row_blocks, its block of
 * rows i % row_blocks): the dense block in the thread's scratch, then into
 * the job's fn. */
static void run_block(run_job *j, int64_t i) {
    const tgc_packed_gemm *g = j->g;
    const piece *p = &g->pieces[i / g->row_blocks];
    int64_t r0, rows, cols = p->n1 - p->n0;
    const rows_prim *r = row_block(g, p, i % g->row_blocks, &r0, &rows);
    float *block = stage_block(r->scratch_bytes, rows, cols);
    /* the primitive's destination is dense (blocks_fit: staged, or one piece as wide as C) */
    if (block == NULL || !execute(r->prim, r->scratch_bytes, &r->src, a_rows(&g->shape, j->a, r0), p->weights, NULL,
                                  NULL, &r->dst, block))
        atomic_store(&j->failed, true);
    else
        j->fn(j->arg, r0, r0 + rows, p->n0, p->n1, block);
}

/* Work item i of a run: piece i / row_blocks, its block of rows i % row_blocks. */
static void run_piece(void *arg, int64_t i, int slot) {
    (void)slot;
    run_job *j = arg;
    if (j->fn != NULL) {
        run_block(j, i);
        return;
    }
    const tgc_packed_gemm *g = j->g;
    const piece *p = &g->pieces[i / g->row_blocks];
    const tgc_gemm_shape *s = &g->shape;
    int64_t r0, rows;
    const rows_prim *r = row_block(g, p, i % g->row_blocks, &r0, &rows);
    const float *a = a_rows(s, j->a, r0);
    float *c = j->c + r0 * s->ldc + p->n0;
    bool ok = r->staged ? run_staged(r->prim, r->scratch_bytes, &r->src, a, p->weights, NULL, NULL, &r->dst, rows,
                                     p->n1 - p->n0, s->beta, c, s->ldc)
                        : execute(r->prim, r->scratch_bytes, &r->src, a, p->weights, NULL, NULL, &r->dst, c);
    if (!ok) atomic_store(&j->failed, true);
    else tgc_cpu_act_block(j->act, j->c, s->ldc, r0, r0 + rows, p->n0, p->n1);
}

bool tgc_packed_gemm_run(const tgc_packed_gemm *g, tgc_thread_pool *pool, const float *a, float *c,
                         const tgc_fused_act *act) {
    run_job j = {.g = g, .a = a, .c = c, .act = act};
    atomic_init(&j.failed, false);
    tgc_parallel_for(pool, (int64_t)g->n_pieces * g->row_blocks, run_piece, &j);
    return !atomic_load(&j.failed);
}

int tgc_packed_gemm_work_items(const tgc_packed_gemm *g) { return g->n_pieces * g->row_blocks; }

bool tgc_packed_gemm_blocks_fit(const tgc_gemm_shape *s) {
    return s->m >= 1 && s->n >= 1 && s->m <= STAGE_MAX_BYTES / (int64_t)sizeof(float) / s->n;
}

bool tgc_packed_gemm_run_blocks(const tgc_packed_gemm *g, tgc_thread_pool *pool, const float *a,
                                tgc_packed_gemm_block_fn fn, void *arg) {
    /* every block's destination is then dense (staged, or C's own rows when one piece spans ldc) */
    if (g->shape.beta != 0.0f || !tgc_packed_gemm_blocks_fit(&g->shape) || g->shape.ldc != g->shape.n) return false;
    run_job j = {.g = g, .a = a, .fn = fn, .arg = arg};
    atomic_init(&j.failed, false);
    tgc_parallel_for(pool, (int64_t)g->n_pieces * g->row_blocks, run_piece, &j);
    return !atomic_load(&j.failed);
}

/* ---- Plain operands: a process-wide table of primitives ------------------------- */

/* Every geometry met gets an entry, kept for the process's life (a model's
 * nodes have a few each): whether oneDNN runs a product must depend on its
 * geometry alone, never on what ran before, or the bits would. Entries are
 * malloc'd, not tgc_malloc'd: they outlive every tgc object by design. */
#define PLAIN_BUCKETS 1024

typedef struct plain_entry {
    struct plain_entry *next;
    bool int8; /* int8 A and B, int32 C (tgc_dnnl_igemm); else float32 */
    bool ta, tb;
    int64_t m, n, k, lda, ldb, ldc;
    float alpha, beta;
    dnnl_primitive_t prim; /* NULL: declined */
    dnnl_memory_desc_t src, weights, dst;
    size_t scratch_bytes;
    /* C's rows lie wider than n: the primitive was made for a dense [m, n]
     * block, copied out (run_staged_in) */
    bool stage_c;
} plain_entry;

/* Read without the lock (an entry is complete before it is published, and
 * never changes after); added under make_lock. */
static _Atomic(plain_entry *) plain_buckets[PLAIN_BUCKETS];

static bool same_geometry(const plain_entry *e, bool int8, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                          int64_t lda, int64_t ldb, int64_t ldc, float alpha, float beta) {
    return e->int8 == int8 && e->ta == ta && e->tb == tb && e->m == m && e->n == n && e->k == k && e->lda == lda &&
           e->ldb == ldb && e->ldc == ldc && e->alpha == alpha && e->beta == beta;
}

/* e's primitive with C's row stride ldc (e's own, or n for a staged
 * block) when oneDNN offers an implementation whose name starts with one
 * of `accept` (a NULL-ended list); NULL otherwise. */
static dnnl_primitive_t make_plain_with(plain_entry *e, int64_t ldc, const char *const *accept) {
    dnnl_dims_t sd = {e->m, e->k}, ss = {e->ta ? 1 : e->lda, e->ta ? e->lda : 1};
    dnnl_dims_t wd = {e->k, e->n}, ws = {e->tb ? 1 : e->ldb, e->tb ? e->ldb : 1};
    dnnl_dims_t dd = {e->m, e->n}, ds = {ldc, 1};
    tgc_gemm_shape shape = {.alpha = e->alpha, .beta = e->beta};
    dnnl_matmul_desc_t desc;
    dnnl_primitive_attr_t attr;
    dnnl_data_type_t in_type = e->int8 ? dnnl_s8 : dnnl_f32, out_type = e->int8 ? dnnl_s32 : dnnl_f32;
    if (dnnl_memory_desc_init_by_strides(&e->src, 2, sd, in_type, ss) != dnnl_success ||
        dnnl_memory_desc_init_by_strides(&e->weights, 2, wd, in_type, ws) != dnnl_success ||
        dnnl_memory_desc_init_by_strides(&e->dst, 2, dd, out_type, ds) != dnnl_success ||
        dnnl_matmul_desc_init(&desc, &e->src, &e->weights, NULL, &e->dst) != dnnl_success || !make_attr(&shape, &attr))
        return NULL;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_status_t st = dnnl_primitive_desc_create(&pd, &desc, attr, engine, NULL);
    dnnl_primitive_attr_destroy(attr);
    if (st != dnnl_success) return NULL;
    const char *impl = NULL;
    dnnl_primitive_t prim = NULL;
    if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success && impl != NULL)
        for (int i = 0; prim == NULL && accept[i] != NULL; i++)
            if (strncmp(impl, accept[i], strlen(accept[i])) == 0) {
                e->scratch_bytes = tgc_dnnl_scratch_size(pd);
                if (dnnl_primitive_create(&prim, pd) != dnnl_success) prim = NULL;
            }
    dnnl_primitive_desc_destroy(pd);
    return prim;
}

/* Makes e's primitive (e's geometry set); leaves prim NULL when oneDNN
 * declines or offers only its reference loops. A float32 product whose C
 * is a block of a wider matrix (a Conv's column tile; up to
 * STAGE_MAX_BYTES) is first tried with C dense, staged: oneDNN 2.6 has
 * brgemm kernels only for dense operands and gives strided ones to its
 * jit GEMM, whose first use generates its whole kernel set (23 ms of a
 * process's start-up). A strided B is not
 * staged: its copy is k x n floats against m x n x k multiply-adds, and
 * MobileNetV2's 1x1 products (m 24-96, split by columns) ran 5% slower
 * (`tgc run --trace`, the sum of its nodes' medians). Else brgemm, or the
 * jit GEMM oneDNN picks where B's rows are further apart than its width:
 * 2x OpenBLAS's Haswell kernels on [24..2048, 16..2048] x [.., 64..6400]
 * pieces on one Zen 5 core. Its reference loops are slower than OpenBLAS. */
static void make_plain(plain_entry *e) {
    static const char *const brgemm[] = {"brg", NULL}, *const fast[] = {"brg", "gemm:jit", NULL};
    if (!e->int8 && stages(e->m, e->n, e->ldc)) {
        e->prim = make_plain_with(e, e->n, brgemm);
        e->stage_c = e->prim != NULL;
        if (e->prim != NULL) return;
    }
    e->prim = make_plain_with(e, e->ldc, fast);
}

/* The primitive for a geometry, made on its first use; NULL when declined
 * (or no memory for the entry). */
static const plain_entry *plain_lookup(bool int8, bool ta, bool tb, int64_t m, int64_t n, int64_t k, int64_t lda,
                                       int64_t ldb, int64_t ldc, float alpha, float beta) {
    uint64_t h = 1469598103934665603ull;
    uint32_t alpha_bits, beta_bits;
    memcpy(&alpha_bits, &alpha, sizeof alpha_bits);
    memcpy(&beta_bits, &beta, sizeof beta_bits);
    int64_t key[9] = {ta | (int64_t)tb << 1 | (int64_t)int8 << 2, m, n, k, lda, ldb, ldc, alpha_bits, beta_bits};
    for (int i = 0; i < 9; i++) h = (h ^ (uint64_t)key[i]) * 1099511628211ull;
    _Atomic(plain_entry *) *bucket = &plain_buckets[h % PLAIN_BUCKETS];
    plain_entry *e;
    for (e = atomic_load_explicit(bucket, memory_order_acquire); e != NULL; e = e->next)
        if (same_geometry(e, int8, ta, tb, m, n, k, lda, ldb, ldc, alpha, beta)) return e->prim != NULL ? e : NULL;
    pthread_mutex_lock(&make_lock);
    for (e = atomic_load_explicit(bucket, memory_order_acquire); e != NULL; e = e->next) /* made meanwhile? */
        if (same_geometry(e, int8, ta, tb, m, n, k, lda, ldb, ldc, alpha, beta)) break;
    if (e == NULL && (e = calloc(1, sizeof *e)) != NULL) { /* a new geometry: made here, once */
        *e = (plain_entry){.next = atomic_load_explicit(bucket, memory_order_relaxed),
                           .int8 = int8, .ta = ta, .tb = tb, .m = m, .n = n, .k = k, .lda = lda, .ldb = ldb, .ldc = ldc,
                           .alpha = alpha, .beta = beta};
        omp_set_num_threads(1);
        make_plain(e);
        atomic_store_explicit(bucket, e, memory_order_release);
    }
    pthread_mutex_unlock(&make_lock);
    return e != NULL && e->prim != NULL ? e : NULL;
}

/* The row stride a copy of B's [k, n] block gets where B's own rows alias
 * (tgc_dnnl_sgemm): dense, or 16 floats wider where dense rows would be a
 * multiple of 4 KiB apart too. */
static int64_t staged_ldb(int64_t n) { return n % 1024 == 0 ? n + 16 : n; }

/* The most bytes of B tgc_dnnl_sgemm copies (as STAGE_MAX_BYTES bounds a staged C:
 * the thread keeps its scratch while it lives); a larger aliasing B goes
 * to OpenBLAS. tgc_cpu_sgemm cuts a large product into column pieces, so
 * a 4096 x 4096 B is staged 8 MiB a piece. */
#define STAGE_B_MAX_BYTES ((int64_t)16 << 20)

int tgc_dnnl_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
                   const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
    if (m < 1 || n < 1 || k < 1 || !tgc_packed_gemm_available()) return 0;
    /* B's rows a multiple of 4 KiB apart alias in the cache when read as
     * they lie (a [128, 512] x [512, 2048] product ran at 0.4x OpenBLAS's),
     * so such a B is copied first, to rows staged_ldb(n) apart, as OpenBLAS
     * packs every B: k x n floats against m x n x k multiply-adds. It used
     * to go to OpenBLAS, whose DYNAMIC_ARCH build may not know the cpu
     * (0.3.21 runs its SSE3 "Prescott" kernels on Emerald Rapids: 22
     * GFLOP/s on a 1024 x 1024 product against oneDNN's 100 and more). */
    bool stage_b = !tb && ldb % 1024 == 0;
    int64_t b_ld = stage_b ? staged_ldb(n) : ldb, b_floats = 0;
    if (stage_b && (!tgc_checked_mul_i64(k, b_ld, &b_floats) || b_floats > STAGE_B_MAX_BYTES / (int64_t)sizeof(float)))
        return 0;
    const plain_entry *e = plain_lookup(false, ta, tb, m, n, k, lda, b_ld, ldc, alpha, beta);
    if (e == NULL) return 0;
    /* Staging memory that cannot be had declines the product, nothing
     * touched (OpenBLAS then takes it); memory objects or a scratchpad that
     * cannot be had while running are not told apart from a failed run:
     * both fail. */
    float *blocks[2] = {NULL, NULL};
    int64_t floats[2] = {b_floats, e->stage_c ? m * n : 0};
    if ((stage_b || e->stage_c) && !thread_blocks(e->scratch_bytes, 2, floats, blocks)) return 0;
    if (stage_b) {
        copy_rows(blocks[0], b_ld, b, ldb, k, n);
        b = blocks[0];
    }
    if (e->stage_c)
        return run_staged_in(e->prim, e->scratch_bytes, &e->src, a, NULL, &e->weights, b, &e->dst, m, n, beta, c, ldc,
                             blocks[1])
                   ? 1
                   : -1;
    return execute(e->prim, e->scratch_bytes, &e->src, a, NULL, &e->weights, b, &e->dst, c) ? 1 : -1;
}

static bool exact_int8_isa;

static void exact_int8_once(void) {
    dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
    exact_int8_isa = (isa & dnnl_cpu_isa_avx512_core_vnni) == dnnl_cpu_isa_avx512_core_vnni ||
                     (isa & dnnl_cpu_isa_avx2_vnni) == dnnl_cpu_isa_avx2_vnni;
}

bool tgc_dnnl_exact_int8(void) {
    static pthread_once_t isa_once = PTHREAD_ONCE_INIT;
    pthread_once(&isa_once, exact_int8_once);
    return exact_int8_isa;
}

int tgc_dnnl_igemm(int64_t m, int64_t n, int64_t k, const int8_t *a, int64_t lda, const int8_t *b, int64_t ldb,
                   int32_t *c, int64_t ldc) {
    if (m < 1 || n < 1 || k < 1 || k > TGC_DNNL_IGEMM_MAX_K || !tgc_packed_gemm_available()) return 0;
    if (!tgc_dnnl_exact_int8()) return 0;
    const plain_entry *e = plain_lookup(true, false, false, m, n, k, lda, ldb, ldc, 1.0f, 0.0f);
    if (e == NULL) return 0;
    return execute(e->prim, e->scratch_bytes, &e->src, a, NULL, &e->weights, b, &e->dst, c) ? 1 : -1;
}

#else /* no oneDNN: OpenBLAS everywhere */

int tgc_dnnl_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
                   const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
    (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)lda, (void)b, (void)ldb, (void)beta;
    (void)c, (void)ldc;
    return 0;
}

int tgc_dnnl_igemm(int64_t m, int64_t n, int64_t k, const int8_t *a, int64_t lda, const int8_t *b, int64_t ldb,
                   int32_t *c, int64_t ldc) {
    (void)m, (void)n, (void)k, (void)a, (void)lda, (void)b, (void)ldb, (void)c, (void)ldc;
    return 0;
}


bool tgc_packed_gemm_available(void) { return false; }

static tgc_packed_gemm *create(const tgc_gemm_shape *s, const float *b, size_t *bytes, bool *no_memory) {
    (void)s, (void)b;
    *bytes = 0;
    *no_memory = false;
    return NULL;
}

int64_t tgc_packed_gemm_bound(const tgc_gemm_shape *s) {
    (void)s;
    return 0;
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

bool tgc_packed_gemm_blocks_fit(const tgc_gemm_shape *s) {
    (void)s;
    return false;
}

int tgc_packed_gemm_work_items(const tgc_packed_gemm *g) {
    (void)g;
    return 0;
}

bool tgc_packed_gemm_run_blocks(const tgc_packed_gemm *g, tgc_thread_pool *pool, const float *a,
                                tgc_packed_gemm_block_fn fn, void *arg) {
    (void)g, (void)pool, (void)a, (void)fn, (void)arg;
    return false;
}

void tgc_packed_gemm_free(tgc_packed_gemm *g) { (void)g; }

#endif

tgc_packed_gemm *tgc_packed_gemm_create(const tgc_gemm_shape *s, const float *b, size_t *bytes) {
    bool no_memory;
    return create(s, b, bytes, &no_memory);
}

/* ---- A node's packed B in its kernel cache ------------------------------------ */

/* The cache's block: g NULL when oneDNN declined the shape (so the session
 * asks once). */
typedef struct cached_block {
    tgc_packed_gemm *g;
} cached_block;

typedef struct cached_args {
    const tgc_gemm_shape *shape;
    const float *b;       /* B as it lies, or NULL: */
    tgc_packed_b_fn fill; /* B written by fill(fill_arg, b) into a copy */
    void *fill_arg;
} cached_args;

static void *build_cached(const tgc_kernel_ctx *c, void *arg, size_t *bytes) {
    (void)c;
    const cached_args *a = arg;
    const tgc_gemm_shape *s = a->shape;
    float *filled = NULL;
    int64_t b_floats;
    if (a->fill != NULL) { /* B^T [n, ldb] or B [k, ldb] */
        if (!tgc_checked_mul_i64(s->tb ? s->n : s->k, s->ldb, &b_floats) ||
            b_floats > INT64_MAX / (int64_t)sizeof(float) ||
            (filled = tgc_malloc((size_t)b_floats * sizeof(float))) == NULL)
            return NULL;
        a->fill(a->fill_arg, filled);
    }
    cached_block *blk = tgc_malloc(sizeof *blk);
    bool no_memory = false;
    if (blk != NULL) {
        blk->g = create(s, filled != NULL ? filled : a->b, bytes, &no_memory);
        *bytes += sizeof *blk;
    }
    tgc_free(filled);
    if (no_memory) { /* not cached as declined: the next run asks again */
        tgc_free(blk);
        return NULL;
    }
    return blk;
}

static void release_cached(void *data) {
    cached_block *blk = data;
    tgc_packed_gemm_free(blk->g);
    tgc_free(blk);
}

static const tgc_packed_gemm *cached(tgc_kernel_ctx *c, const tgc_gemm_shape *s, const cached_args *args,
                                     bool *no_memory) {
    const cached_block *blk = tgc_kernel_cache_get_owning(c, 1u << 1, build_cached, release_cached, (void *)args);
    /* B a constant and a cache: only memory stops the build, unless another way's block is there */
    *no_memory = blk == NULL && (c->const_inputs & 1u << 1) && c->cache != NULL && !tgc_kernel_cache_taken(c);
    if (blk == NULL || blk->g == NULL || !tgc_packed_gemm_matches(blk->g, s)) return NULL;
    tgc_kernel_cache_replaces(c, 1u << 1); /* the packed copy serves every run of these sizes */
    return blk->g;
}

const tgc_packed_gemm *tgc_packed_gemm_cached(tgc_kernel_ctx *c, const tgc_gemm_shape *s, const float *b,
                                             bool *no_memory) {
    return cached(c, s, &(cached_args){.shape = s, .b = b}, no_memory);
}

const tgc_packed_gemm *tgc_packed_gemm_cached_filled(tgc_kernel_ctx *c, const tgc_gemm_shape *s, tgc_packed_b_fn fill,
                                                     void *arg, bool *no_memory) {
    return cached(c, s, &(cached_args){.shape = s, .fill = fill, .fill_arg = arg}, no_memory);
}

int64_t tgc_packed_gemm_cached_bound(const tgc_gemm_shape *s) {
    return tgc_packed_gemm_bound(s) + (int64_t)sizeof(cached_block);
}
