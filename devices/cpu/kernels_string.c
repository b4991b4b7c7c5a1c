/* Ops over string tensors on the cpu: StringNormalizer, and the data-moving
 * ops (Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Concat, Split,
 * Gather, Slice, Expand, Tile) made to copy strings. Cast to and from
 * strings, and Identity: string_cast.c. */
#include "devices/kernel.h"
#include "devices/kernel_checks.h"
#include "graph/graph.h"
#include "support/alloc.h"
#include "support/string_slots.h"
#include "support/unicode_case.h"
#include "support/utf8.h"

#include <stdbool.h>
#include <string.h>

typedef enum case_action { CASE_NONE, CASE_LOWER, CASE_UPPER } case_action;

/* s with every code point mapped (support/unicode_case.h), a new
 * tgc_malloc'd string (NULL when out of memory). Bytes that are not UTF-8
 * pass through unchanged. A mapping stays within its UTF-8 length class
 * for the covered blocks except U+00FF <-> U+0178 (2 bytes both), so the
 * result fits in 4 bytes a byte of s. */
static char *case_mapped(const char *s, case_action a) {
    size_t len = strlen(s), n = 0;
    char *out = tgc_malloc(len * 4 + 1);
    if (out == NULL) return NULL;
    for (size_t i = 0; i < len;) {
        size_t at = i;
        uint32_t cp = tgc_utf8_next(s, len, &i);
        if (cp == TGC_UTF8_REPLACEMENT && !(i - at == 3 && memcmp(s + at, "\xEF\xBF\xBD", 3) == 0)) {
            memcpy(out + n, s + at, i - at); /* not UTF-8: kept as it is */
            n += i - at;
            continue;
        }
        if (a == CASE_LOWER) cp = tgc_unicode_lower(cp);
        else if (a == CASE_UPPER) cp = tgc_unicode_upper(cp);
        n += tgc_utf8_put(cp, out + n);
    }
    out[n] = '\0';
    return out;
}

/* The stopwords as compared: themselves, or lower-cased when the
 * comparison ignores case. */
typedef struct stoplist {
    char **words;
    size_t n;
} stoplist;

static void stoplist_free(stoplist *l) {
    tgc_string_slots_free(l->words, l->n);
    tgc_free(l->words);
}

static bool stoplist_make(const tgc_attr *a, bool case_sensitive, stoplist *l) {
    l->n = a != NULL && a->type == TGC_ATTR_STRINGS ? a->n : 0;
    l->words = tgc_calloc(l->n ? l->n : 1, sizeof *l->words);
    if (l->words == NULL) return false;
    for (size_t i = 0; i < l->n; i++) {
        l->words[i] = case_sensitive ? tgc_strdup(a->strings[i]) : case_mapped(a->strings[i], CASE_LOWER);
        if (l->words[i] == NULL) return false;
    }
    return true;
}

/* Whether s is a stopword (compared lower-cased unless case sensitive). */
static bool is_stopword(const stoplist *l, const char *s, bool case_sensitive, bool *nomem) {
    if (l->n == 0) return false;
    char *key = case_sensitive ? NULL : case_mapped(s, CASE_LOWER);
    if (!case_sensitive && key == NULL) {
        *nomem = true;
        return false;
    }
    const char *k = case_sensitive ? s : key;
    bool hit = false;
    for (size_t i = 0; i < l->n && !hit; i++) hit = strcmp(l->words[i], k) == 0;
    tgc_free(key);
    return hit;
}

/* StringNormalizer-10 (semantics of ONNX's reference and onnxruntime):
 * each element of X [C] or [1, C] that is a stopword (compared exactly
 * when is_case_sensitive, else both lower-cased) is dropped; the rest, in
 * order, get case_change_action (LOWER, UPPER, NONE). Y is [C'] or [1, C'];
 * when nothing is left, one empty string ([1] or [1, 1]). */
static tgc_status k_string_normalizer(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 1, 0); /* output 0: allocated below, once its size is known */
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0];
    if (x->dtype != TGC_STRING || x->rank < 1 || x->rank > 2 || (x->rank == 2 && x->dims[0] != 1))
        return tgc_kernel_fail(c, "StringNormalizer: X must be a string tensor [C] or [1, C]");
    const char *action = tgc_kernel_attr_string(c, "case_change_action", "NONE");
    case_action a = strcmp(action, "LOWER") == 0 ? CASE_LOWER : strcmp(action, "UPPER") == 0 ? CASE_UPPER : CASE_NONE;
    bool case_sensitive = tgc_kernel_attr_int(c, "is_case_sensitive", 0) != 0;
    size_t n = (size_t)x->dims[x->rank - 1];
    const char *const *in = tgc_buffer_host_ptr(x->buf);
    stoplist stops = {0};
    bool *keep = tgc_calloc(n ? n : 1, sizeof *keep);
    bool nomem = keep == NULL || !stoplist_make(tgc_node_attr(c->node, "stopwords"), case_sensitive, &stops);
    size_t kept = 0;
    for (size_t i = 0; !nomem && i < n; i++) {
        keep[i] = !is_stopword(&stops, tgc_string_slot_get(in, i), case_sensitive, &nomem);
        kept += keep[i];
    }
    int64_t dims[2] = {1, kept > 0 ? (int64_t)kept : 1};
    if (!nomem) st = tgc_kernel_alloc_output(c, 0, x->rank, x->rank == 2 ? dims : dims + 1);
    char **out = !nomem && st == TGC_OK ? tgc_buffer_host_ptr(c->outputs[0].buf) : NULL;
    for (size_t i = 0, k = 0; out != NULL && i < n && !nomem; i++) {
        if (!keep[i]) continue;
        char *s = case_mapped(tgc_string_slot_get(in, i), a); /* a copy even for NONE: slots are never shared */
        if (s == NULL) nomem = true;
        else if (s[0] == '\0') tgc_free(s); /* the slot stays NULL: "" */
        else out[k] = s;
        k++;
    }
    stoplist_free(&stops);
    tgc_free(keep);
    if (nomem) {
        tgc_kernel_fail(c, "StringNormalizer: out of host memory");
        return TGC_ERR_NOMEM;
    }
    return st;
}

/* ---- Data movement over strings ------------------------------------------------ */

/* The data-moving kernels (kernels_shape.h) copy elements by their size,
 * never reading them. Run over a string tensor they copy `char *` slots:
 * each output slot then points at a string that an input's buffer owns.
 * A string mover runs that byte kernel, then makes every output own its
 * strings: each moved pointer is replaced by a copy of its string (the
 * inputs are alive until the kernel returns). When the byte kernel fails,
 * the borrowed pointers are forgotten (set NULL) so the output's release
 * frees nothing it does not own. An output that is an input's own buffer
 * (forwarded: Reshape, Flatten, Squeeze, Unsqueeze) moved no string and is
 * left alone. The byte kernel is the one the cpu runs for an 8-byte dtype:
 * the same element size as a slot. */
_Static_assert(sizeof(char *) == 8, "string slots are moved as 8-byte elements");

static bool is_input_buffer(const tgc_kernel_ctx *c, const tgc_buffer *b) {
    for (int i = 0; i < c->n_inputs; i++)
        if (c->inputs[i].buf == b) return true;
    return false;
}

/* Output o's slots hold borrowed pointers: replace each with a copy of its
 * string (own = true) or with NULL (own = false). False when a copy fails:
 * the slots not yet copied are NULL then. */
static bool own_slots(tgc_kernel_ctx *c, int o, bool own) {
    tgc_value *v = &c->outputs[o];
    if (v->buf == NULL || v->dtype != TGC_STRING || is_input_buffer(c, v->buf)) return true;
    char **slots = tgc_buffer_host_ptr(v->buf);
    size_t n = v->buf->n_strings;
    for (size_t i = 0; i < n; i++) {
        if (!own || slots[i] == NULL) {
            slots[i] = NULL;
            continue;
        }
        slots[i] = tgc_strdup(slots[i]);
        if (slots[i] == NULL) {
            memset(slots + i, 0, (n - i) * sizeof *slots);
            return false;
        }
    }
    return true;
}

static tgc_status move_strings(tgc_kernel_ctx *c) {
    const tgc_kernel_def *bytes = tgc_kernel_find(c->node->op_name, TGC_DEVICE_CPU, TGC_INT64);
    if (bytes == NULL || bytes->fn == NULL) return tgc_kernel_fail(c, "%s: no cpu kernel moves 8-byte elements", tgc_kernel_op_name(c));
    tgc_status st = bytes->fn(c);
    bool ok = true;
    for (int o = 0; o < c->n_outputs; o++) ok = own_slots(c, o, st == TGC_OK && ok) && ok;
    if (st == TGC_OK && !ok) {
        tgc_kernel_fail(c, "%s: out of host memory copying strings", tgc_kernel_op_name(c));
        return TGC_ERR_NOMEM;
    }
    return st;
}

#define STRINGS {TGC_STRING, TGC_DTYPE_INVALID}
#define BIT(i) (1u << (i))
/* The masks are the byte kernels' (kernels_shape.c, kernels_indexing.c). */
#define MOVER(name, host, fwd) \
    {.op = name, .fn = move_strings, .host_inputs = (host), .forward_input = (fwd), .dtypes = STRINGS}

const tgc_kernel_def tgc_cpu_kernels_string[] = {
    {.op = "StringNormalizer", .fn = k_string_normalizer, .forward_input = -1,
     .dtypes = STRINGS, .sizes_outputs = true},
    MOVER("Reshape", BIT(1), 0),
    MOVER("Flatten", 0, 0),
    MOVER("Squeeze", BIT(1), 0),
    MOVER("Unsqueeze", BIT(1), 0),
    MOVER("Transpose", 0, -1),
    MOVER("Concat", 0, -1),
    MOVER("Split", BIT(1), -1),
    MOVER("Gather", 0, -1),
    MOVER("Slice", BIT(1) | BIT(2) | BIT(3) | BIT(4), -1),
    MOVER("Expand", BIT(1), -1),
    MOVER("Tile", BIT(1), -1),
    {.op = NULL},
};
