/* Ops over string tensors on the cpu: StringNormalizer. (Cast to and from
 * strings: string_cast.c; the data-moving ops copy strings themselves.) */
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

const tgc_kernel_def tgc_cpu_kernels_string[] = {
    {.op = "StringNormalizer", .kind = TGC_DEVICE_CPU, .fn = k_string_normalizer, .forward_input = -1,
     .dtypes = {TGC_STRING, TGC_DTYPE_INVALID}, .sizes_outputs = true},
    {.op = NULL},
};
