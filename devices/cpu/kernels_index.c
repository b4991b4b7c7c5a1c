/* CPU kernels that move whole blocks along one axis (ONNX opset 17):
 * Gather (blocks picked by index), Concat (blocks of each input, in turn)
 * and Split (blocks dealt out to each output). A tensor seen around an axis
 * is [outer, size, inner]: outer the product of the dims before the axis,
 * inner the bytes of one step along it. */
#include "devices/cpu/kernels_shape.h"
#include "support/alloc.h"

#include <string.h>

/* Bytes of one step along `axis` of v: the product of the later dims times
 * the element size. */
static size_t inner_bytes(const tgc_value *v, int axis) {
    return (size_t)tgc_cpu_dims_product(v->dims + axis + 1, v->rank - axis - 1) * tgc_dtype_size(v->dtype);
}

/* ---- Gather ------------------------------------------------------------------- */

/* Gather-13: data of rank r >= 1, indices (int32 or int64) of rank q,
 * axis in [-r, r) (default 0): out = data.shape[:axis] + indices.shape +
 * data.shape[axis+1:]. An index may be negative (it counts from the back);
 * one outside [-s, s) for an axis of size s is an error, checked for every
 * index before anything is written. */
tgc_status tgc_cpu_gather(tgc_kernel_ctx *c) {
    tgc_status st = tgc_cpu_shape_check_moves(c, 2);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *ind = &c->inputs[1];
    int r = x->rank, axis = 0;
    if ((st = tgc_kernel_gather_shape(c, &axis)) != TGC_OK) return st;
    const void *ip = tgc_kernel_in_ptr(c, 1);
    int64_t size = x->dims[axis], count = tgc_value_numel(ind);
    for (int64_t k = 0; k < count; k++) {
        int64_t v = tgc_cpu_shape_int_at(ind->dtype, ip, k);
        if (v < -size || v >= size) {
            char sx[TGC_KERNEL_DIMS_BUF];
            return tgc_kernel_fail(c, "Gather: index %lld (element %lld of the indices) is out of range "
                                   "[%lld, %lld) for axis %d of data %s", (long long)v, (long long)k,
                                   (long long)-size, (long long)size, axis, tgc_kernel_dims_str(r, x->dims, sx));
        }
    }
    size_t inner = inner_bytes(x, axis);
    int64_t outer = tgc_cpu_dims_product(x->dims, axis);
    if (inner == 0 || count == 0 || outer == 0) return TGC_OK;
    const char *src = tgc_kernel_in_ptr(c, 0);
    char *dst = tgc_kernel_out_ptr(c, 0);
    for (int64_t o = 0; o < outer; o++) {
        const char *block = src + (size_t)o * (size_t)size * inner;
        for (int64_t k = 0; k < count; k++) {
            int64_t v = tgc_cpu_shape_int_at(ind->dtype, ip, k);
            memcpy(dst, block + (size_t)(v < 0 ? v + size : v) * inner, inner);
            dst += inner;
        }
    }
    return TGC_OK;
}

/* ---- Concat -------------------------------------------------------------------- */

/* The whole tensor of a Concat (its output) or a Split (its input) seen
 * flat: `outer` rows of `row` bytes, each row part i's chunk (chunk[i]
 * bytes at at[i]) after part i - 1's, part i a Concat's input or a Split's
 * output. Each part's own outer * chunk[i] bytes are cut into pieces of
 * `piece` bytes (part i's first piece is first[i]; first[n]: all of them),
 * so a piece streams through one part as the one-thread loop did and
 * meets the whole a chunk a row; the pieces depend on the sizes alone, and
 * the pool's home ranges give a thread the same share call after call.
 * Where two or more rows of the whole fit in a piece (a Concat on the last
 * axis, channels last), a piece is instead `rows` rows of the whole, every
 * part's chunks of them: cut by parts, the threads would write alternate
 * chunks of every row, sharing the cache lines where chunks meet
 * (ShuffleNetV2's 16 channels-last Concats at 2 threads: 349-421 -> 201-207
 * us, node sums of `tgc run --trace`). */
typedef struct parts_job {
    char *whole;
    char **part;
    const size_t *chunk, *at, *first;
    int n;
    bool split; /* copy from the whole into the parts (Split); else the other way */
    size_t outer, row, piece;
    size_t rows; /* rows of the whole a piece, or 0: pieces of parts (first: NULL unless 0) */
} parts_job;

/* Rows [o0, o1) of the whole, every part's chunk of each (an empty part
 * has none, and maybe no buffer). */
static void parts_rows(const parts_job *j, size_t o0, size_t o1) {
    for (size_t o = o0; o < o1; o++)
        for (int i = 0; i < j->n; i++) {
            if (j->chunk[i] == 0) continue;
            char *whole = j->whole + o * j->row + j->at[i], *part = j->part[i] + o * j->chunk[i];
            if (whole == part) continue; /* in place */
            if (j->split) memcpy(part, whole, j->chunk[i]);
            else memcpy(whole, part, j->chunk[i]);
        }
}

/* Piece `piece`: its rows of the whole (j->rows), or bytes [k * j->piece,
 * + j->piece) of the part it falls in. */
static void parts_piece(void *arg, int64_t piece, int slot) {
    (void)slot;
    const parts_job *j = arg;
    if (j->rows > 0) {
        size_t o0 = (size_t)piece * j->rows;
        parts_rows(j, o0, o0 + j->rows < j->outer ? o0 + j->rows : j->outer);
        return;
    }
    int i = 0, hi = j->n - 1; /* the last part whose first piece is at most `piece` (empty parts own none) */
    while (i < hi) {
        int mid = (i + hi + 1) / 2;
        if (j->first[mid] <= (size_t)piece) i = mid;
        else hi = mid - 1;
    }
    size_t chunk = j->chunk[i], b = ((size_t)piece - j->first[i]) * j->piece, size = j->outer * chunk;
    size_t end = b + j->piece < size ? b + j->piece : size;
    while (b < end) {
        size_t o = b / chunk, off = b % chunk, len = chunk - off < end - b ? chunk - off : end - b;
        char *whole = j->whole + o * j->row + j->at[i] + off, *part = j->part[i] + b;
        if (whole == part) break; /* a part in place: all of this piece */
        if (j->split) memcpy(part, whole, len);
        else memcpy(whole, part, len);
        b += len;
    }
}

/* Copies between c's whole tensor (output 0 of a Concat, input 0 of a
 * Split: `outer` rows of `row` bytes) and its n parts (the Concat's inputs,
 * the Split's outputs), each part's dims[axis] steps of `inner` bytes along
 * `axis`, over c's pool in pieces of TGC_CPU_COPY_PIECE_BYTES. TGC_OK, or
 * TGC_ERR_NOMEM (message in c) when more than 16 parts find no host memory
 * for their places. */
static tgc_status copy_parts(tgc_kernel_ctx *c, bool split, int axis, int64_t outer, size_t row, size_t inner,
                             int n) {
    if (row == 0 || outer == 0) return TGC_OK;
    enum { SMALL = 16 };
    char *part_small[SMALL];
    size_t places_small[3 * SMALL + 1];
    char **part = part_small;
    size_t *places = places_small;
    void *heap = NULL;
    if (n > SMALL) {
        heap = tgc_malloc((size_t)n * (sizeof *part + 3 * sizeof *places) + sizeof *places);
        if (heap == NULL) {
            tgc_kernel_fail(c, "%s: no host memory for the places of %d parts", tgc_kernel_op_name(c), n);
            return TGC_ERR_NOMEM;
        }
        places = heap;
        part = (char **)(void *)(places + 3 * (size_t)n + 1);
    }
    size_t *chunk = places, *at = places + n, *first = places + 2 * (size_t)n, piece = TGC_CPU_COPY_PIECE_BYTES;
    size_t rows = row <= piece / 2 ? piece / row : 0; /* pieces of rows of the whole, or of parts (first) */
    first[0] = at[0] = 0;
    for (int i = 0; i < n; i++) {
        chunk[i] = (size_t)(split ? c->outputs[i].dims[axis] : c->inputs[i].dims[axis]) * inner;
        if (i > 0) at[i] = at[i - 1] + chunk[i - 1];
        if (rows == 0) first[i + 1] = first[i] + ((size_t)outer * chunk[i] + piece - 1) / piece;
        part[i] = split ? tgc_kernel_out_ptr(c, i) : (char *)tgc_kernel_in_ptr(c, i);
    }
    char *whole = split ? (char *)tgc_kernel_in_ptr(c, 0) : tgc_kernel_out_ptr(c, 0);
    int in_place = 0; /* parts that already lie where they go (a Concat in place, executor/concat_in_place.h) */
    for (int i = 0; outer == 1 && i < n; i++) in_place += chunk[i] == 0 || part[i] == whole + at[i];
    if (in_place == n) {
        c->impl = "in place";
        tgc_free(heap);
        return TGC_OK;
    }
    parts_job j = {.whole = whole, .part = part,
                   .chunk = chunk, .at = at, .first = rows == 0 ? first : NULL, .n = n, .split = split,
                   .outer = (size_t)outer, .row = row, .piece = piece, .rows = rows};
    int64_t pieces = rows > 0 ? (int64_t)(((size_t)outer + rows - 1) / rows) : (int64_t)first[n];
    tgc_parallel_for(c->pool, pieces, parts_piece, &j);
    tgc_free(heap);
    return TGC_OK;
}

/* Concat-13: any number of inputs of one dtype and rank r >= 1 whose dims
 * agree except on `axis` (required, in [-r, r)), where they add up. Empty
 * inputs take part like any other. Copied in pieces over the pool
 * (copy_parts). */
tgc_status tgc_cpu_concat(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, c->n_inputs > 0 ? c->n_inputs : 1, 1);
    if (st != TGC_OK) return st;
    int axis = 0;
    int64_t dims[TGC_MAX_RANK];
    if ((st = tgc_kernel_concat_shape(c, &axis, dims)) != TGC_OK) return st;
    size_t inner = inner_bytes(&c->inputs[0], axis);
    return copy_parts(c, false, axis, tgc_cpu_dims_product(dims, axis), (size_t)dims[axis] * inner, inner,
                      c->n_inputs);
}

/* ---- Split --------------------------------------------------------------------- */

/* Split-13: input 0 splits along `axis` (default 0) into the node's
 * outputs: by input 1 (int64, host memory; one size >= 0 per output,
 * adding up to the axis) when given, else into equal parts (the axis size
 * must divide by the number of outputs). */
tgc_status tgc_cpu_split(tgc_kernel_ctx *c) {
    int n = c->n_outputs;
    tgc_status st = tgc_kernel_check_host(c, 1, n);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0];
    int r = x->rank, axis = 0;
    if (r == 0) return tgc_kernel_fail(c, "Split: input 0 is a scalar; it must have rank >= 1");
    st = tgc_kernel_axis_attr(c, 0, r, &axis);
    if (st != TGC_OK) return st;
    int64_t size = x->dims[axis];
    bool given = tgc_kernel_has_input(c, 1);
    const tgc_value *sv = given ? &c->inputs[1] : NULL;
    const void *sp = given ? tgc_kernel_in_ptr(c, 1) : NULL;
    if (given) {
        if ((sv->dtype != TGC_INT32 && sv->dtype != TGC_INT64) || sv->rank > 1 || tgc_value_numel(sv) != n)
            return tgc_kernel_fail(c, "Split: input 1 (split) must be an int64 1-D tensor of %d sizes, one per "
                                   "output", n);
        int64_t sum = 0;
        for (int j = 0; j < n; j++) {
            int64_t v = tgc_cpu_shape_int_at(sv->dtype, sp, j);
            if (v < 0 || v > size - sum)
                return tgc_kernel_fail(c, "Split: the split sizes must be >= 0 and add up to %lld, the size of "
                                       "axis %d", (long long)size, axis);
            sum += v;
        }
        if (sum != size)
            return tgc_kernel_fail(c, "Split: the split sizes add up to %lld but axis %d has size %lld",
                                   (long long)sum, axis, (long long)size);
    } else if (size % n != 0) {
        return tgc_kernel_fail(c, "Split: axis %d has size %lld, which does not split evenly into %d outputs",
                               axis, (long long)size, n);
    }
    int64_t dims[TGC_MAX_RANK];
    memcpy(dims, x->dims, sizeof dims);
    for (int j = 0; j < n; j++) {
        dims[axis] = given ? tgc_cpu_shape_int_at(sv->dtype, sp, j) : size / n;
        if (c->outputs[j].dtype != x->dtype)
            return tgc_kernel_fail(c, "Split: output %d is %s but input 0 is %s", j,
                                   tgc_dtype_name(c->outputs[j].dtype), tgc_dtype_name(x->dtype));
        st = tgc_kernel_expect_dims(c, j, r, dims);
        if (st != TGC_OK) return st;
    }
    size_t inner = inner_bytes(x, axis);
    return copy_parts(c, true, axis, tgc_cpu_dims_product(x->dims, axis), (size_t)size * inner, inner, n);
}
