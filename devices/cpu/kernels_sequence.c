/* Sequences and optionals on the cpu (graph/ops_sequence.c has their
 * meaning). A sequence's value is a list buffer of its elements' values,
 * an optional's a list of none or one (devices/device.h): an op makes a new
 * list sharing the elements it keeps (retained, never copied), so no
 * element is ever written twice and buffers stay immutable once made.
 * Every kernel sizes its outputs itself. The control flow ops are here
 * too, as kernels only in name: the executor runs them
 * (executor/control_flow.c); their entries say where they may be placed
 * and that conditions and trip counts live in host memory. */
#include "devices/kernel.h"

#include "support/alloc.h"
#include "support/checked.h"

#include <string.h>

/* Input i as a list, or NULL when it is not one. */
static const tgc_value *list_slots(const tgc_kernel_ctx *c, int i, size_t *n, uint8_t *kind) {
    const tgc_value *v = i < c->n_inputs ? &c->inputs[i] : NULL;
    if (v == NULL || !tgc_value_is_list(v)) return NULL;
    *n = v->buf->n_values;
    *kind = v->buf->list;
    const tgc_value *slots = tgc_buffer_list_slots(v->buf);
    return slots != NULL ? slots : v; /* an empty list: not NULL, never read */
}

/* The sequence of input i, or a failure (NULL). */
static const tgc_value *sequence_in(tgc_kernel_ctx *c, int i, size_t *n) {
    uint8_t kind = 0;
    const tgc_value *s = list_slots(c, i, n, &kind);
    if (s == NULL || kind != TGC_KIND_SEQUENCE) tgc_kernel_fail(c, "input %d is not a sequence", i);
    return s != NULL && kind == TGC_KIND_SEQUENCE ? s : NULL;
}

/* A position input (int32 or int64, one element) into *pos, checked
 * against [lo, hi] and made non-negative by adding `len`; `dflt` when the
 * input is omitted. */
static bool position(tgc_kernel_ctx *c, int i, int64_t len, int64_t lo, int64_t hi, int64_t dflt, int64_t *pos) {
    if (i >= c->n_inputs || c->inputs[i].buf == NULL) {
        *pos = dflt;
        return true;
    }
    const void *p = tgc_kernel_in_ptr(c, i);
    if (p == NULL || tgc_value_numel(&c->inputs[i]) != 1) {
        tgc_kernel_fail(c, "the position must hold one element");
        return false;
    }
    int64_t v = c->inputs[i].dtype == TGC_INT32 ? *(const int32_t *)p : *(const int64_t *)p;
    if (v < lo || v > hi) {
        tgc_kernel_fail(c, "position %lld is outside [%lld, %lld] for a sequence of %lld", (long long)v,
                        (long long)lo, (long long)hi, (long long)len);
        return false;
    }
    *pos = v < 0 ? v + len : v;
    return true;
}

/* Fills slot `to` with value v, retained. */
static void put(tgc_value *to, const tgc_value *v) {
    *to = *v;
    tgc_buffer_retain(v->buf);
}

static tgc_status k_sequence_empty(tgc_kernel_ctx *c) {
    tgc_dtype dt = tgc_dtype_from_onnx(tgc_kernel_attr_int(c, "dtype", 1));
    return tgc_kernel_alloc_list(c, 0, TGC_KIND_SEQUENCE, 0, dt) != NULL ? TGC_OK : TGC_ERR_NOMEM;
}

static tgc_status k_sequence_construct(tgc_kernel_ctx *c) {
    tgc_value *slots = tgc_kernel_alloc_list(c, 0, TGC_KIND_SEQUENCE, (size_t)c->n_inputs, c->inputs[0].dtype);
    if (slots == NULL) return TGC_ERR_NOMEM;
    for (int i = 0; i < c->n_inputs; i++) put(&slots[i], &c->inputs[i]);
    return TGC_OK;
}

static tgc_status k_sequence_insert(tgc_kernel_ctx *c) {
    size_t n;
    const tgc_value *s = sequence_in(c, 0, &n);
    int64_t at;
    if (s == NULL || !position(c, 2, (int64_t)n, -(int64_t)n, (int64_t)n, (int64_t)n, &at)) return TGC_ERR_RUNTIME;
    tgc_value *slots = tgc_kernel_alloc_list(c, 0, TGC_KIND_SEQUENCE, n + 1, c->inputs[0].dtype);
    if (slots == NULL) return TGC_ERR_NOMEM;
    for (size_t i = 0, from = 0; i <= n; i++) put(&slots[i], (int64_t)i == at ? &c->inputs[1] : &s[from++]);
    return TGC_OK;
}

static tgc_status k_sequence_erase(tgc_kernel_ctx *c) {
    size_t n;
    const tgc_value *s = sequence_in(c, 0, &n);
    int64_t at;
    if (s == NULL) return TGC_ERR_RUNTIME;
    if (n == 0) return tgc_kernel_fail(c, "the sequence is empty: there is nothing to erase");
    if (!position(c, 1, (int64_t)n, -(int64_t)n, (int64_t)n - 1, (int64_t)n - 1, &at)) return TGC_ERR_RUNTIME;
    tgc_value *slots = tgc_kernel_alloc_list(c, 0, TGC_KIND_SEQUENCE, n - 1, c->inputs[0].dtype);
    if (slots == NULL) return TGC_ERR_NOMEM;
    for (size_t i = 0, to = 0; i < n; i++)
        if ((int64_t)i != at) put(&slots[to++], &s[i]);
    return TGC_OK;
}

static tgc_status k_sequence_at(tgc_kernel_ctx *c) {
    size_t n;
    const tgc_value *s = sequence_in(c, 0, &n);
    int64_t at;
    if (s == NULL || !position(c, 1, (int64_t)n, -(int64_t)n, (int64_t)n - 1, 0, &at)) return TGC_ERR_RUNTIME;
    return tgc_kernel_set_output(c, 0, &s[at]);
}

static tgc_status k_sequence_length(tgc_kernel_ctx *c) {
    size_t n;
    if (sequence_in(c, 0, &n) == NULL) return TGC_ERR_RUNTIME;
    tgc_status st = tgc_kernel_alloc_output(c, 0, 0, NULL);
    if (st == TGC_OK) *(int64_t *)tgc_kernel_out_ptr(c, 0) = (int64_t)n;
    return st;
}

/* Copies `rows` blocks of `block` bytes from src (strided by src_stride)
 * into dst (strided by dst_stride). */
static void copy_blocks(char *dst, size_t dst_stride, const char *src, size_t src_stride, int64_t rows,
                        size_t block) {
    for (int64_t r = 0; r < rows && block > 0; r++)
        memcpy(dst + (size_t)r * dst_stride, src + (size_t)r * src_stride, block);
}

/* ConcatFromSequence: the elements joined along `axis` (new_axis 1: stacked
 * along a new axis there). Elements must share every other dim. */
static tgc_status k_concat_from_sequence(tgc_kernel_ctx *c) {
    size_t n;
    const tgc_value *s = sequence_in(c, 0, &n);
    if (s == NULL) return TGC_ERR_RUNTIME;
    if (n == 0) return tgc_kernel_fail(c, "the sequence is empty: there is nothing to concatenate");
    int64_t axis = tgc_kernel_attr_int(c, "axis", 0), new_axis = tgc_kernel_attr_int(c, "new_axis", 0);
    int rank = s[0].rank, out_rank = rank + (new_axis != 0);
    if (axis < -out_rank || axis >= out_rank || out_rank > TGC_MAX_RANK)
        return tgc_kernel_fail(c, "axis %lld is out of range for elements of rank %d", (long long)axis, rank);
    int a = (int)(axis < 0 ? axis + out_rank : axis);
    int64_t dims[TGC_MAX_RANK], total = 0;
    for (size_t i = 0; i < n; i++) {
        bool in_host = s[i].buf != NULL && (s[i].buf->nbytes == 0 || tgc_buffer_host_ptr(s[i].buf) != NULL);
        if (s[i].rank != rank || s[i].dtype != s[0].dtype || !in_host)
            return tgc_kernel_fail(c, "element %zu does not go with element 0 (rank, dtype or memory)", i);
        for (int d = 0; d < rank; d++)
            if (!(d == a && !new_axis) && s[i].dims[d] != s[0].dims[d])
                return tgc_kernel_fail(c, "element %zu has dim %d of %lld, element 0 of %lld", i, d,
                                       (long long)s[i].dims[d], (long long)s[0].dims[d]);
        total += new_axis ? 1 : s[i].dims[a];
    }
    for (int d = 0, from = 0; d < out_rank; d++) {
        dims[d] = d == a ? total : s[0].dims[from];
        if (d != a || !new_axis) from++;
    }
    tgc_status st = tgc_kernel_alloc_output(c, 0, out_rank, dims);
    if (st != TGC_OK) return st;
    size_t elem = tgc_dtype_size(s[0].dtype);
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < a; d++) outer *= dims[d];
    for (int d = a + 1; d < out_rank; d++) inner *= dims[d];
    char *out = tgc_kernel_out_ptr(c, 0);
    size_t out_row = (size_t)(total * inner) * elem;
    int64_t at = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t len = new_axis ? 1 : s[i].dims[a];
        size_t block = (size_t)(len * inner) * elem;
        copy_blocks(out + (size_t)(at * inner) * elem, out_row, tgc_buffer_host_ptr(s[i].buf), block, outer, block);
        at += len;
    }
    return TGC_OK;
}

/* SplitToSequence: chunks of x along `axis`: of 1 (squeezed when keepdims
 * is 0) without `split`, of a scalar split's length (the last smaller), or
 * of a 1-D split's lengths. */
static tgc_status k_split_to_sequence(tgc_kernel_ctx *c) {
    const tgc_value *x = &c->inputs[0];
    int rank = x->rank;
    int64_t axis = tgc_kernel_attr_int(c, "axis", 0);
    if (rank < 1 || axis < -rank || axis >= rank)
        return tgc_kernel_fail(c, "axis %lld is out of range", (long long)axis);
    int a = (int)(axis < 0 ? axis + rank : axis);
    int64_t dim = x->dims[a], lengths_small[64], *lengths = lengths_small, count = 0;
    bool squeeze = false, has_split = c->n_inputs > 1 && c->inputs[1].buf != NULL;
    const void *sp = has_split ? tgc_kernel_in_ptr(c, 1) : NULL;
    int64_t split_n = has_split ? tgc_value_numel(&c->inputs[1]) : 0;
    bool i32 = has_split && c->inputs[1].dtype == TGC_INT32;
#define SPLIT_AT(i) (i32 ? (int64_t)((const int32_t *)sp)[i] : ((const int64_t *)sp)[i])
    if (!has_split) {
        squeeze = tgc_kernel_attr_int(c, "keepdims", 1) == 0;
        count = dim;
    } else if (c->inputs[1].rank == 0) {
        int64_t each = split_n == 1 ? SPLIT_AT(0) : 0;
        if (each <= 0) return tgc_kernel_fail(c, "the split length must be positive");
        count = dim / each + (dim % each != 0);
    } else {
        count = split_n;
    }
    if (count > 64 && (lengths = tgc_malloc((size_t)count * sizeof *lengths)) == NULL)
        return tgc_kernel_fail(c, "out of host memory for %lld chunks", (long long)count), TGC_ERR_NOMEM;
    int64_t sum = 0;
    tgc_status st = TGC_OK;
    for (int64_t i = 0; st == TGC_OK && i < count; i++) {
        lengths[i] = !has_split                ? 1
                     : c->inputs[1].rank == 0 ? (i + 1 < count ? SPLIT_AT(0) : dim - SPLIT_AT(0) * (count - 1))
                                              : SPLIT_AT(i);
        if (lengths[i] < 0) st = tgc_kernel_fail(c, "split length %lld is negative", (long long)lengths[i]);
        sum += lengths[i];
    }
#undef SPLIT_AT
    if (st == TGC_OK && sum != dim)
        st = tgc_kernel_fail(c, "the split lengths add up to %lld, the axis has %lld", (long long)sum, (long long)dim);
    tgc_value *slots = st == TGC_OK ? tgc_kernel_alloc_list(c, 0, TGC_KIND_SEQUENCE, (size_t)count, x->dtype) : NULL;
    if (st == TGC_OK && slots == NULL) st = TGC_ERR_NOMEM;
    size_t elem = tgc_dtype_size(x->dtype);
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < a; d++) outer *= x->dims[d];
    for (int d = a + 1; d < rank; d++) inner *= x->dims[d];
    const char *src = tgc_kernel_in_ptr(c, 0);
    for (int64_t i = 0, at = 0; st == TGC_OK && i < count; at += lengths[i], i++) {
        tgc_value *v = &slots[i];
        *v = (tgc_value){.dtype = x->dtype, .rank = squeeze ? rank - 1 : rank};
        for (int d = 0, to = 0; d < rank; d++)
            if (!(squeeze && d == a)) v->dims[to++] = d == a ? lengths[i] : x->dims[d];
        size_t block = (size_t)(lengths[i] * inner) * elem;
        st = tgc_buffer_alloc(tgc_host_device(), block * (size_t)outer, &v->buf);
        if (st != TGC_OK) {
            v->buf = NULL;
            tgc_kernel_fail(c, "out of memory allocating chunk %lld", (long long)i);
            break;
        }
        if (block * (size_t)outer > 0) /* an empty chunk copies nothing (an empty X has no buffer) */
            copy_blocks(tgc_buffer_host_ptr(v->buf), block, src + (size_t)(at * inner) * elem,
                        (size_t)(dim * inner) * elem, outer, block);
    }
    if (lengths != lengths_small) tgc_free(lengths);
    return st;
}

/* ---- optionals ------------------------------------------------------------------ */

static tgc_status k_optional(tgc_kernel_ctx *c) {
    bool has = c->n_inputs > 0 && c->inputs[0].buf != NULL;
    tgc_dtype dt = has ? c->inputs[0].dtype : c->outputs[0].dtype;
    tgc_value *slots = tgc_kernel_alloc_list(c, 0, TGC_KIND_OPTIONAL, has ? 1 : 0, dt);
    if (slots == NULL) return TGC_ERR_NOMEM;
    if (has) put(&slots[0], &c->inputs[0]);
    return TGC_OK;
}

/* An optional's value: a list of kind optional (none or one), or (a value
 * carried out of a body as what an optional would hold, or opset 18's
 * plain input) the value itself. */
static const tgc_value *held(const tgc_kernel_ctx *c, bool *present) {
    if (c->n_inputs == 0 || c->inputs[0].buf == NULL) {
        *present = false;
        return NULL;
    }
    size_t n;
    uint8_t kind;
    const tgc_value *slots = list_slots(c, 0, &n, &kind);
    if (slots != NULL && kind == TGC_KIND_OPTIONAL) {
        *present = n > 0;
        return n > 0 ? &slots[0] : NULL;
    }
    *present = true;
    return &c->inputs[0];
}

static tgc_status k_optional_has_element(tgc_kernel_ctx *c) {
    bool present;
    held(c, &present);
    tgc_status st = tgc_kernel_alloc_output(c, 0, 0, NULL);
    if (st == TGC_OK) *(uint8_t *)tgc_kernel_out_ptr(c, 0) = present;
    return st;
}

static tgc_status k_optional_get_element(tgc_kernel_ctx *c) {
    bool present;
    const tgc_value *v = held(c, &present);
    if (!present) return tgc_kernel_fail(c, "the optional holds nothing");
    return tgc_kernel_set_output(c, 0, v);
}

/* ---- control flow: run by the executor --------------------------------------------- */

static tgc_status k_control(tgc_kernel_ctx *c) {
    return tgc_kernel_fail(c, "%s is run by the executor, not as a kernel (a tgc bug)", c->node->op_name);
}

#define ANY_DTYPE {TGC_DTYPE_INVALID}
#define SEQ(name, kernel) \
    {.op = name, .fn = kernel, .forward_input = -1, .sizes_outputs = true, .dtypes = ANY_DTYPE}

const tgc_kernel_def tgc_cpu_kernels_sequence[] = {
    SEQ("SequenceEmpty", k_sequence_empty),
    SEQ("SequenceConstruct", k_sequence_construct),
    SEQ("SequenceInsert", k_sequence_insert),
    SEQ("SequenceErase", k_sequence_erase),
    SEQ("SequenceAt", k_sequence_at),
    SEQ("SequenceLength", k_sequence_length),
    SEQ("ConcatFromSequence", k_concat_from_sequence),
    SEQ("SplitToSequence", k_split_to_sequence),
    SEQ("Optional", k_optional),
    SEQ("OptionalHasElement", k_optional_has_element),
    SEQ("OptionalGetElement", k_optional_get_element),
    /* If's condition and Loop's trip count and condition are read on the host. */
    {.op = "If", .fn = k_control, .forward_input = -1, .host_inputs = 1u, .dtypes = ANY_DTYPE},
    {.op = "Loop", .fn = k_control, .forward_input = -1, .host_inputs = 3u,
     .dtypes = ANY_DTYPE},
    {.op = "Scan", .fn = k_control, .forward_input = -1, .dtypes = ANY_DTYPE},
    {.op = "SequenceMap", .fn = k_control, .forward_input = -1, .dtypes = ANY_DTYPE},
    {.op = NULL},
};
