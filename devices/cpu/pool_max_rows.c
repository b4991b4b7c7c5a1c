/* tgc_cpu_max_pool_rows (pool_max_rows.h): MaxPool over rows, then over
 * columns. */
#include "devices/cpu/pool_max_rows.h"

#include "devices/cpu/ew.h"
#include "devices/cpu/pool_isa.h"
#include "devices/cpu/pool_max_rule.h"
#include "devices/cpu/target_clones.h"

#include "support/alloc.h"
#include "support/checked.h"
#include "support/parallel_for.h"

#include <math.h>
#include <string.h>

/* Loops run over whole blocks of this many floats (a 64-byte vector). */
#define LANES 16

/* Strides past this take another path. */
#define MAX_STRIDE 8

/* Rows past this many floats take another path (a thread's scratch stays
 * within a few MiB). */
#define MAX_ROW_FLOATS ((int64_t)1 << 20)

/* Element reads a piece of planes aims at: 15-40 us of work. */
#define PIECE_READS ((int64_t)1 << 17)

typedef struct rows_pool {
    const tgc_window *w;
    const float *x;
    float *y;
    int64_t x_floats;         /* planes * H * W: no row read runs past it */
    int64_t used;             /* input columns some window reads: min(W, (OW - 1) * sw + kw - pl) */
    int64_t used_round;       /* used, rounded up to LANES */
    int64_t out_round;        /* OW, rounded up to LANES */
    int64_t phase_len;        /* a column phase's floats: out_round + (kw - 1) / sw + 1 */
    int64_t row_floats;       /* the row buffer: pl + used_round, and s * phase_len, at least */
    int64_t slot_floats;      /* a thread's scratch: row buffer, phases, an output row */
    int64_t planes, planes_per_piece;
    bool flat;                /* stride 1 and OW == W: a plane at a time (pool_plane_flat) */
    bool pairs;               /* column stride 2, 2 or 3 columns: rows in registers (pairs_run) */
    const tgc_pool_isa *isa;  /* pairs_run's kernel */
    int64_t blocks;           /* its blocks a row: OW / lanes, rounded up */
    const tgc_pool_isa *narrow; /* flat planes whose padded rows fit 4 vectors: its narrow_plane, else NULL */
    float *scratch;
} rows_pool;

#define INLINE static inline __attribute__((always_inline))


INLINE void max_copy(float *restrict o, const float *restrict a, int64_t n) {
    for (int64_t i = 0; i < n; i++) o[i] = a[i];
}

INLINE void max_into(float *restrict o, const float *restrict a, int64_t n) {
    for (int64_t i = 0; i < n; i++) o[i] = TGC_POOL_MAX_F32(a[i], o[i]);
}

INLINE void max_of2(float *restrict o, const float *restrict a, const float *restrict b, int64_t n) {
    for (int64_t i = 0; i < n; i++) o[i] = TGC_POOL_MAX_F32(b[i], a[i]);
}

INLINE void max_of3(float *restrict o, const float *restrict a, const float *restrict b, const float *restrict c,
                    int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        float e = TGC_POOL_MAX_F32(b[i], a[i]);
        o[i] = TGC_POOL_MAX_F32(c[i], e);
    }
}

/* o[i] = the maximum over k of t[k][i], i < n, in the order of t (count >= 1). */
INLINE void max_of(float *o, const float *const *t, int64_t count, int64_t n) {
    if (count == 1) {
        max_copy(o, t[0], n);
    } else if (count == 2) {
        max_of2(o, t[0], t[1], n);
    } else {
        max_of3(o, t[0], t[1], t[2], n);
        for (int64_t k = 3; k < count; k++) max_into(o, t[k], n);
    }
}

/* ph[b * len + q] = r[q * s + b] for b < s, q < len: the column phases of
 * row r, with the stride a constant where it is 2 so the loop vectorizes. */
INLINE void split_phases(float *restrict ph, const float *restrict r, int64_t s, int64_t len) {
    if (s == 2) {
        for (int64_t q = 0; q < len; q++) ph[q] = r[2 * q], ph[len + q] = r[2 * q + 1];
        return;
    }
    for (int64_t b = 0; b < s; b++)
        for (int64_t q = 0; q < len; q++) ph[b * len + q] = r[q * s + b];
}

/* ---- Stride 2 over 2 or 3 columns, in registers ---------------------------------- */

/* The kernels' tables of the ISAs up to the one the elementwise loops run
 * (ew_dispatch.c's cpuid choice, TGC_CPU_ISA included), narrowest first,
 * into use: returns how many. */
static int usable_isas(const tgc_pool_isa *use[3]) {
    const tgc_pool_isa *const all[3] = {&tgc_pool_isa_sse2, &tgc_pool_isa_avx2, &tgc_pool_isa_avx512};
    const char *running = tgc_cpu_ew_loops()->isa;
    int n = 0;
    while (n < 3) {
        use[n] = all[n];
        if (strcmp(all[n++]->isa, running) == 0) break;
    }
    return n;
}

/* The register kernel for rows of ow outputs: the widest usable ISA whose
 * block ow fills, else the narrowest (AlexNet's [1, 256, 6, 6] pool at 16
 * lanes read 48 columns a row for 13). */
static const tgc_pool_isa *pairs_isa(int64_t ow) {
    const tgc_pool_isa *use[3];
    int n = usable_isas(use);
    const tgc_pool_isa *pick = use[0];
    for (int i = 0; i < n; i++)
        if (use[i]->lanes <= ow) pick = use[i];
    return pick;
}

/* For a padded row of `floats` (pool_narrow.h): the narrowest usable ISA
 * whose vector holds it, else the widest if 4 of its vectors do, else NULL. */
static const tgc_pool_isa *narrow_isa(int64_t floats) {
    const tgc_pool_isa *use[3];
    int n = usable_isas(use);
    for (int i = 0; i < n; i++)
        if (use[i]->lanes >= floats) return use[i];
    return 4 * use[n - 1]->lanes >= floats ? use[n - 1] : NULL;
}

/* Output rows of plane xp from oh on at column stride 2 over kw = 2 or 3
 * columns, by the ISA's register kernel (pool_pairs.h): the run of rows
 * whose windows are whole, whose loads stay inside X and whose blocks
 * past OW stay inside the plane (the next rows overwrite them) straight
 * into Y, else row oh alone through out (the thread's scratch, OW rounded
 * up to 16). Returns the rows done, 0 when row oh must take the row
 * buffer's way: a load would fall outside X (the first or last rows of
 * X), or the kernel read a NaN there (MaxPool's rule then decides which
 * maximum is kept). */
static int64_t pairs_run(const rows_pool *rp, const float *xp, float *yp, float *out, int64_t oh) {
    const tgc_window *w = rp->w;
    int64_t h = w->in[0], wd = w->in[1], kh = w->kernel[0], kw = w->kernel[1], oh_count = w->out[0], ow = w->out[1];
    int64_t sh = w->strides[0], pt = w->pads[0], pl = w->pads[1], lanes = rp->isa->lanes, blocks = rp->blocks;
    /* a row's loads span its window's first row from column -pl to its last row's column reach - 1 */
    int64_t reach = 2 * lanes * (blocks - 1) - pl + 3 * lanes;
    int64_t r0 = oh * sh - pt, lo = r0 < 0 ? -r0 : 0, hi = h - r0 < kh ? h - r0 : kh, k = hi - lo;
    int64_t at = (xp - rp->x) + (r0 + lo) * wd; /* X's float where the window's first row starts */
    if (at - pl < 0 || at + (k - 1) * wd + reach > rp->x_floats) return 0;
    int64_t end = oh;
    while (k == kh && end < oh_count && end * sh - pt + kh <= h &&
           at + (end - oh) * sh * wd + (kh - 1) * wd + reach <= rp->x_floats &&
           (end + 1) * ow + blocks * lanes - ow <= oh_count * ow)
        end++;
    if (end > oh) return rp->isa->pairs_rows(rp->x + at, sh * wd, yp + oh * ow, ow, end - oh, wd, pl, kw, blocks, k);
    if (rp->isa->pairs_rows(rp->x + at, 0, out, 0, 1, wd, pl, kw, blocks, k) == 0) return 0;
    memcpy(yp + oh * ow, out, (size_t)ow * sizeof *out);
    return 1;
}

/* ---- Any stride, through the row buffer ------------------------------------------- */

/* One plane: xp [H, W] into yp [OH, OW], in the thread's scratch (its row
 * buffer holding -inf outside [pl, pl + used)). */
TGC_CPU_CLONES static void pool_plane(const rows_pool *rp, const float *xp, float *yp, float *scratch) {
    const tgc_window *w = rp->w;
    int64_t h = w->in[0], wd = w->in[1], kh = w->kernel[0], kw = w->kernel[1];
    int64_t sh = w->strides[0], sw = w->strides[1], pt = w->pads[0], pl = w->pads[1];
    float *row = scratch, *phases = row + rp->row_floats, *out = phases + sw * rp->phase_len;
    const float *taps[64];
    for (int64_t oh = 0; oh < w->out[0]; oh++) {
        int64_t done = rp->pairs ? pairs_run(rp, xp, yp, out, oh) : 0;
        if (done > 0) {
            oh += done - 1;
            continue;
        }
        /* the window's rows inside the input, reduced into row[pl, pl + n) */
        int64_t r0 = oh * sh - pt, lo = r0 < 0 ? -r0 : 0, hi = h - r0 < kh ? h - r0 : kh;
        const float *first = xp + (r0 + lo) * wd;
        int64_t n = (first - rp->x) + (hi - lo - 1) * wd + rp->used_round <= rp->x_floats ? rp->used_round : rp->used;
        for (int64_t k = 0; k < hi - lo; k++) taps[k] = first + k * wd;
        float *dst = row + pl;
        max_of(dst, taps, hi - lo, n);
        for (int64_t i = rp->used; i < n; i++) dst[i] = -INFINITY; /* right padding again */
        /* the columns: tap tw of output ow reads row[ow * sw + tw] */
        const float *src = row;
        int64_t len = rp->phase_len;
        if (sw > 1) split_phases(phases, row, sw, len), src = phases;
        else len = 0;
        for (int64_t tw = 0; tw < kw; tw++) taps[tw] = src + tw % sw * len + tw / sw;
        /* straight into Y where the whole vectors stay in the plane (what
         * passes OW is overwritten by the next rows), else through scratch */
        float *yr = yp + oh * w->out[1];
        bool direct = (oh + 1) * w->out[1] + rp->out_round - w->out[1] <= w->out[0] * w->out[1];
        max_of(direct ? yr : out, taps, kw, rp->out_round);
        if (!direct) memcpy(yr, out, (size_t)w->out[1] * sizeof *out);
    }
}

/* Output column ow of a row from its reduced row v [W]: the maximum over
 * the taps that read input, in tap order (the edge columns of the flat
 * path, whose flat loop read the neighbouring rows there). */
static float edge_column(const float *v, int64_t wd, int64_t ow, int64_t pl, int64_t kw) {
    float e = NAN;
    bool first = true;
    for (int64_t tw = 0; tw < kw; tw++) {
        int64_t c = ow - pl + tw;
        if (c < 0 || c >= wd) continue;
        e = first ? v[c] : TGC_POOL_MAX_F32(v[c], e);
        first = false;
    }
    return e;
}

/* One plane at stride 1 with OW == W (GoogLeNet's 3x3 pools with pads 1,
 * YOLO's 5x5 with pads 2): the rows' maximum for runs of output rows whose
 * windows take the same rows (the top edge, the middle, the bottom edge)
 * as one loop over the run's whole rows, then the columns' as one loop
 * over the whole plane, and the pl + pr edge columns of each row again
 * (the flat loop read the neighbouring rows there). v: the thread's
 * scratch, pl floats before the [OH, W] rows' maxima and pr after. */
TGC_CPU_CLONES static void pool_plane_flat(const rows_pool *rp, const float *xp, float *yp, float *scratch) {
    const tgc_window *w = rp->w;
    int64_t h = w->in[0], wd = w->in[1], kh = w->kernel[0], kw = w->kernel[1], oh_count = w->out[0];
    int64_t pt = w->pads[0], pl = w->pads[1];
    float *v = scratch + pl;
    const float *taps[64];
    for (int64_t r0 = 0, r1; r0 < oh_count; r0 = r1) {
        int64_t lo = pt - r0 > 0 ? pt - r0 : 0, hi = h - r0 + pt < kh ? h - r0 + pt : kh;
        for (r1 = r0 + 1; r1 < oh_count; r1++) { /* the run of rows with the same taps */
            int64_t lo1 = pt - r1 > 0 ? pt - r1 : 0, hi1 = h - r1 + pt < kh ? h - r1 + pt : kh;
            if (lo1 != lo || hi1 != hi) break;
        }
        for (int64_t k = lo; k < hi; k++) taps[k - lo] = xp + (r0 - pt + k) * wd;
        max_of(v + r0 * wd, taps, hi - lo, (r1 - r0) * wd);
    }
    for (int64_t tw = 0; tw < kw; tw++) taps[tw] = v - pl + tw;
    max_of(yp, taps, kw, oh_count * wd);
    for (int64_t r = 0; r < oh_count; r++) {
        for (int64_t ow = 0; ow < pl && ow < wd; ow++) yp[r * wd + ow] = edge_column(v + r * wd, wd, ow, pl, kw);
        for (int64_t ow = wd - (kw - 1 - pl) > pl ? wd - (kw - 1 - pl) : pl; ow < wd; ow++)
            yp[r * wd + ow] = edge_column(v + r * wd, wd, ow, pl, kw);
    }
}

/* Plane p (xp into yp) by the ISA's narrow kernel (pool_narrow.h), where
 * its rows' reads stay inside X: false when pool_plane_flat must run. */
static bool narrow_plane(const rows_pool *rp, int64_t p, const float *xp, float *yp) {
    const tgc_window *w = rp->w;
    int64_t h = w->in[0], wd = w->in[1], plane_in = h * wd, plane_out = w->out[0] * wd, pl = w->pads[1];
    if (rp->narrow == NULL) return false;
    int64_t lanes = rp->narrow->lanes, reach = (wd + w->kernel[1] - 1 + lanes - 1) / lanes * lanes; /* a row's reads */
    if (p * plane_in - pl < 0 || (p + 1) * plane_in - wd - pl + reach > rp->x_floats) return false;
    /* its stores stay in the plane: another piece, on another thread, may hold the next one */
    return rp->narrow->narrow_plane(xp, yp, plane_out, h, wd, w->kernel[0], w->kernel[1], w->pads[0], pl, w->out[0]);
}

static void pool_piece(void *arg, int64_t piece, int slot) {
    const rows_pool *rp = arg;
    const tgc_window *w = rp->w;
    float *scratch = rp->scratch + slot * rp->slot_floats;
    for (int64_t i = 0; i < rp->slot_floats; i++) scratch[i] = -INFINITY;
    int64_t p0 = piece * rp->planes_per_piece;
    int64_t p1 = p0 + rp->planes_per_piece < rp->planes ? p0 + rp->planes_per_piece : rp->planes;
    for (int64_t p = p0; p < p1; p++) {
        const float *xp = rp->x + p * w->in[0] * w->in[1];
        float *yp = rp->y + p * w->out[0] * w->out[1];
        if (rp->flat && !narrow_plane(rp, p, xp, yp)) pool_plane_flat(rp, xp, yp, scratch);
        else if (!rp->flat) pool_plane(rp, xp, yp, scratch);
    }
}

static int64_t round_up(int64_t n) { return (n + LANES - 1) / LANES * LANES; }

/* The buffers' sizes for window w into *rp: false when the geometry is not
 * this path's. */
static bool plan(const tgc_window *w, rows_pool *rp) {
    int64_t kh = w->kernel[0], kw = w->kernel[1], sw = w->strides[1], pl = w->pads[1];
    if (w->n != 2 || w->dilations[0] != 1 || w->dilations[1] != 1 || w->strides[0] < 1 || sw < 1 ||
        w->strides[1] > MAX_STRIDE || kh < 1 || kw < 1 || kh > 64 || kw > 64 || w->out[0] < 1 || w->out[1] < 1 ||
        w->in[1] > MAX_ROW_FLOATS || w->out[1] > MAX_ROW_FLOATS || pl < 0 || pl > MAX_ROW_FLOATS || w->pads[0] < 0)
        return false;
    /* sizes below 2^21 (kernel, stride and pads are bounded above): no overflow */
    int64_t wp = (w->out[1] - 1) * sw + kw;
    rp->used = w->in[1] < wp - pl ? w->in[1] : wp - pl;
    if (rp->used < 1) return false;
    rp->used_round = round_up(rp->used);
    rp->out_round = round_up(w->out[1]);
    rp->phase_len = rp->out_round + (kw - 1) / sw + 1;
    int64_t need = pl + rp->used_round > sw * rp->phase_len ? pl + rp->used_round : sw * rp->phase_len;
    rp->row_floats = round_up(need);
    rp->slot_floats = rp->row_floats + sw * rp->phase_len + rp->out_round;
    /* the reads of a plane, to size the pieces (past int64: a piece a plane) */
    int64_t reads_plane, plane_floats;
    if (!tgc_checked_mul_i64(w->out[0], kh * rp->used_round + (sw > 1 ? 2 * sw * rp->phase_len : 0) +
                                            kw * rp->out_round, &reads_plane))
        reads_plane = INT64_MAX;
    rp->pairs = sw == 2 && (kw == 2 || kw == 3); /* out_round >= OW rounded to lanes: pairs_run's out */
    rp->isa = pairs_isa(w->out[1]);
    rp->blocks = (w->out[1] + rp->isa->lanes - 1) / rp->isa->lanes;
    /* stride 1, OW == W (so pl + pr == kw - 1): a plane at a time, its
     * rows' maxima [OH, W] with pl floats before and pr after */
    rp->narrow = NULL;
    rp->flat = w->strides[0] == 1 && sw == 1 && w->out[1] == w->in[1] && pl < kw &&
               tgc_checked_mul_i64(w->out[0], w->in[1], &plane_floats) && plane_floats <= MAX_ROW_FLOATS;
    if (rp->flat) {
        rp->narrow = narrow_isa(w->in[1] + kw - 1);
        if (plane_floats + kw > rp->slot_floats) rp->slot_floats = plane_floats + kw;
        reads_plane = plane_floats * (kh + kw);
    }
    rp->planes_per_piece = PIECE_READS / reads_plane > 1 ? PIECE_READS / reads_plane : 1;
    return true;
}

bool tgc_cpu_max_pool_rows(tgc_kernel_ctx *c, const tgc_window *w, int64_t planes, const float *x, float *y,
                           tgc_status *st) {
    *st = TGC_OK;
    rows_pool rp = {.w = w, .x = x, .y = y, .planes = planes};
    if (!plan(w, &rp) || !tgc_checked_mul_i64(planes, w->in[0] * w->in[1], &rp.x_floats)) return false;
    int width = tgc_parallel_width(c->pool);
    /* slot_floats < 2^23 and width <= 257: the product fits */
    rp.scratch = tgc_malloc((size_t)(rp.slot_floats * width) * sizeof *rp.scratch);
    if (rp.scratch == NULL) {
        *st = tgc_kernel_fail(c, "out of host memory for the pool's row buffers (%d x %lld floats)", width,
                              (long long)rp.slot_floats);
        return true;
    }
    tgc_parallel_for(c->pool, (planes + rp.planes_per_piece - 1) / rp.planes_per_piece, pool_piece, &rp);
    tgc_free(rp.scratch);
    return true;
}
