/* The loader's tensor readers: dtypes, shapes, inline values and .npy data. */
#include "graph/loader.h"

#include "graph/npy.h"
#include "support/alloc.h"
#include "support/string_slots.h"
#include "support/half.h"
#include "support/open_beneath.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

tgc_srcpos tgc_loader_pos(const yaml_node_t *n) {
    tgc_srcpos p = {0, 0};
    if (n != NULL) {
        p.line = (int)n->start_mark.line + 1;
        p.col = (int)n->start_mark.column + 1;
    }
    return p;
}

tgc_status tgc_loader_error(tgc_loader *l, const yaml_node_t *n, const char *rule, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    tgc_status s = tgc_diag_addv(l->diags, TGC_SEV_ERROR, l->g->path, tgc_loader_pos(n), rule, fmt, ap);
    va_end(ap);
    if (s == TGC_ERR_NOMEM) return tgc_loader_nomem(l);
    return TGC_ERR_INVALID;
}

tgc_status tgc_loader_nomem(tgc_loader *l) {
    l->failure = TGC_ERR_NOMEM;
    return TGC_ERR_NOMEM;
}

static const char *node_kind_word(const yaml_node_t *n) {
    switch (n->type) {
    case YAML_SCALAR_NODE: return "a scalar";
    case YAML_SEQUENCE_NODE: return "a list";
    case YAML_MAPPING_NODE: return "a mapping";
    default: return "nothing";
    }
}

const char *tgc_loader_scalar(tgc_loader *l, const yaml_node_t *n, const char *what) {
    if (n->type == YAML_SCALAR_NODE) return (const char *)n->data.scalar.value;
    tgc_loader_error(l, n, "wrong-kind", "%s must be a scalar, not %s", what, node_kind_word(n));
    return NULL;
}

/* Levenshtein distance of a and b, or limit + 1 once it is more than
 * `limit` (one row of the table; words here are short). */
static size_t edit_distance(const char *a, const char *b, size_t limit) {
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64) return limit + 1;
    if ((la > lb ? la - lb : lb - la) > limit) return limit + 1;
    size_t row[65];
    for (size_t j = 0; j <= lb; j++) row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0], best = row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t v = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < v) v = up + 1;
            if (row[j - 1] + 1 < v) v = row[j - 1] + 1;
            row[j] = v;
            diag = up;
            if (v < best) best = v;
        }
        if (best > limit) return limit + 1;
    }
    return row[lb];
}

static bool same_ignoring_case(const char *a, const char *b) {
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return false;
    return *a == *b;
}

const char *tgc_loader_closest(const char *word, const char *const *cand, size_t n, int max_edits) {
    const char *best = NULL;
    size_t len = strlen(word), best_d = (size_t)max_edits + 1;
    for (size_t i = 0; i < n; i++) {
        if (cand[i] == NULL || strcmp(cand[i], word) == 0) continue;
        if (same_ignoring_case(cand[i], word)) return cand[i];
        if (max_edits <= 0) continue;
        size_t d = edit_distance(word, cand[i], (size_t)max_edits);
        if (d < best_d && 2 * d < len) {
            best = cand[i];
            best_d = d;
        }
    }
    return best;
}

bool tgc_loader_check_key(tgc_loader *l, const yaml_node_t *key, const char *where,
                          const char *const *allowed) {
    const char *k = key->type == YAML_SCALAR_NODE ? (const char *)key->data.scalar.value : NULL;
    size_t n = 0;
    for (const char *const *a = allowed; *a != NULL; a++, n++)
        if (k != NULL && strcmp(*a, k) == 0) return true;
    char list[256] = "";
    for (const char *const *a = allowed; *a != NULL; a++) {
        strncat(list, a == allowed ? "" : ", ", sizeof list - strlen(list) - 1);
        strncat(list, *a, sizeof list - strlen(list) - 1);
    }
    const char *near = k != NULL ? tgc_loader_closest(k, allowed, n, 2) : NULL;
    tgc_loader_error(l, key, "unknown-key", "unknown key '%s' in %s (expected one of: %s)%s%s%s",
                     k ? k : "(not a scalar)", where, list, near ? "; did you mean '" : "", near ? near : "",
                     near ? "'?" : "");
    return false;
}

bool tgc_is_int_text(const char *s) {
    if (*s == '+' || *s == '-') s++;
    if (!isdigit((unsigned char)*s)) return false;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s)) return false;
    return true;
}

bool tgc_parse_int(const char *s, int64_t *out) {
    const char *p = s;
    if (*p == '+' || *p == '-') p++;
    if (!isdigit((unsigned char)*p)) return false;
    for (const char *q = p; *q; q++)
        if (!isdigit((unsigned char)*q)) return false;
    errno = 0;
    long long v = strtoll(s, NULL, 10);
    if (errno == ERANGE) return false;
    *out = (int64_t)v;
    return true;
}

bool tgc_parse_number(const char *s, double *out) {
    const char *p = s;
    bool neg = false;
    if (*p == '+' || *p == '-') neg = *p++ == '-';
    if (strcmp(p, ".inf") == 0 || strcmp(p, ".Inf") == 0 || strcmp(p, ".INF") == 0) {
        *out = neg ? -INFINITY : INFINITY;
        return true;
    }
    if (p == s && (strcmp(p, ".nan") == 0 || strcmp(p, ".NaN") == 0 || strcmp(p, ".NAN") == 0)) {
        *out = NAN;
        return true;
    }
    /* Digits, one optional '.', an optional exponent: no hex, no "inf". */
    bool digits = false;
    while (isdigit((unsigned char)*p)) p++, digits = true;
    if (*p == '.') {
        p++;
        while (isdigit((unsigned char)*p)) p++, digits = true;
    }
    if (!digits) return false;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!isdigit((unsigned char)*p)) return false;
        while (isdigit((unsigned char)*p)) p++;
    }
    if (*p != '\0') return false;
    *out = strtod(s, NULL);
    return true;
}

tgc_status tgc_load_dtype(tgc_loader *l, const yaml_node_t *n, const char *what, tgc_dtype *out) {
    const char *s = tgc_loader_scalar(l, n, "dtype");
    if (s == NULL) return TGC_ERR_INVALID;
    *out = tgc_dtype_from_name(s);
    if (*out == TGC_DTYPE_INVALID)
        return tgc_loader_error(l, n, "unknown-dtype",
                                "%s: unknown dtype '%s' (expected float32, float16, int32, int64, uint8 or bool)",
                                what, s);
    return TGC_OK;
}

tgc_status tgc_load_type(tgc_loader *l, const yaml_node_t *n, const char *what, tgc_dtype *dtype, uint8_t *kind) {
    const char *s = tgc_loader_scalar(l, n, "dtype");
    if (s == NULL) return TGC_ERR_INVALID;
    if (!tgc_type_parse(s, dtype, kind))
        return tgc_loader_error(l, n, "unknown-dtype",
                                "%s: unknown dtype '%s' (expected float32, float16, int32, int64, uint8 or bool, or "
                                "seq(T), optional(T), optional(seq(T)) of one)",
                                what, s);
    return TGC_OK;
}

static bool is_symbol(const char *s) {
    if (!(isalpha((unsigned char)*s) || *s == '_')) return false;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_')) return false;
    return true;
}

tgc_status tgc_load_shape(tgc_loader *l, const yaml_node_t *n, const char *what, bool allow_symbols,
                          tgc_shape *out) {
    if (n->type != YAML_SEQUENCE_NODE)
        return tgc_loader_error(l, n, "bad-shape", "%s: a shape must be a list of dimensions, not %s", what,
                                node_kind_word(n));
    yaml_node_item_t *items = n->data.sequence.items.start;
    int rank = (int)(n->data.sequence.items.top - items);
    if (rank > TGC_MAX_RANK)
        return tgc_loader_error(l, n, "bad-shape", "%s: rank %d is more than tgc supports (%d)", what, rank,
                                TGC_MAX_RANK);
    out->rank = rank;
    for (int i = 0; i < rank; i++) {
        yaml_node_t *d = yaml_document_get_node(&l->doc, items[i]);
        const char *s = tgc_loader_scalar(l, d, "a dimension");
        if (s == NULL) return TGC_ERR_INVALID;
        int64_t v;
        if (tgc_parse_int(s, &v)) {
            if (v < 0)
                return tgc_loader_error(l, d, "bad-shape", "%s: dimension %d is negative (%s)%s", what, i, s,
                                        allow_symbols ? "; a size known only at run time is a symbol such as N"
                                                      : "");
            out->dims[i] = tgc_dim_of(v);
        } else if (tgc_is_int_text(s)) {
            return tgc_loader_error(l, d, "bad-shape", "%s: dimension %d (%s) is %s", what, i, s,
                                    s[0] == '-' ? "negative" : "too large");
        } else if (is_symbol(s)) {
            if (!allow_symbols)
                return tgc_loader_error(l, d, "bad-shape",
                                        "%s: dimension %d is the symbol '%s', but this shape must be concrete", what,
                                        i, s);
            int32_t sym = tgc_graph_symbol(l->g, s, false);
            if (sym < 0) return tgc_loader_nomem(l);
            out->dims[i] = tgc_dim_sym(sym);
        } else {
            return tgc_loader_error(l, d, "bad-shape",
                                    "%s: dimension %d ('%s') is neither an integer >= 0 nor a symbol", what, i, s);
        }
    }
    return TGC_OK;
}

/* Stores value `v` (already range-checked; uint64 as its bits) or `f` as
 * element i of a `dtype` array. Floats round once to the dtype (nearest
 * even); float16 and bfloat16 from a double go through float32, which is
 * exact for the short decimals written by hand and by tgc's dumper. */
static void store_element(void *data, tgc_dtype dtype, size_t i, double f, int64_t v, bool is_int) {
    double d = is_int ? (double)v : f;
    switch (dtype) {
    case TGC_FLOAT32: ((float *)data)[i] = (float)d; break;
    case TGC_FLOAT64: ((double *)data)[i] = d; break;
    case TGC_FLOAT16: ((uint16_t *)data)[i] = tgc_float_to_half((float)d); break;
    case TGC_BFLOAT16: ((uint16_t *)data)[i] = tgc_float_to_bf16((float)d); break;
    case TGC_INT8: ((int8_t *)data)[i] = (int8_t)v; break;
    case TGC_INT16: ((int16_t *)data)[i] = (int16_t)v; break;
    case TGC_INT32: ((int32_t *)data)[i] = (int32_t)v; break;
    case TGC_INT64: ((int64_t *)data)[i] = v; break;
    case TGC_UINT8: ((uint8_t *)data)[i] = (uint8_t)v; break;
    case TGC_UINT16: ((uint16_t *)data)[i] = (uint16_t)v; break;
    case TGC_UINT32: ((uint32_t *)data)[i] = (uint32_t)v; break;
    case TGC_UINT64: ((uint64_t *)data)[i] = (uint64_t)v; break;
    case TGC_BOOL: ((uint8_t *)data)[i] = (uint8_t)(v != 0); break;
    default: break;
    }
}

/* The range of an integer dtype (uint64's upper half is parsed apart). */
static void int_range(tgc_dtype dtype, int64_t *lo, int64_t *hi) {
    switch (dtype) {
    case TGC_INT8: *lo = INT8_MIN, *hi = INT8_MAX; break;
    case TGC_INT16: *lo = INT16_MIN, *hi = INT16_MAX; break;
    case TGC_INT32: *lo = INT32_MIN, *hi = INT32_MAX; break;
    case TGC_UINT8: *lo = 0, *hi = UINT8_MAX; break;
    case TGC_UINT16: *lo = 0, *hi = UINT16_MAX; break;
    case TGC_UINT32: *lo = 0, *hi = UINT32_MAX; break;
    case TGC_UINT64: *lo = 0, *hi = INT64_MAX; break;
    default: *lo = INT64_MIN, *hi = INT64_MAX; break;
    }
}

/* A uint64 above INT64_MAX written in decimal: its bits in *v. */
static bool parse_big_uint64(const char *s, int64_t *v) {
    if (!tgc_is_int_text(s) || *s == '-') return false;
    errno = 0;
    char *end;
    unsigned long long u = strtoull(s, &end, 10);
    if (errno == ERANGE || *end != '\0') return false;
    *v = (int64_t)(uint64_t)u;
    return true;
}

/* Parses one inline value for `dtype`; reports and returns false on error. */
static bool parse_element(tgc_loader *l, const yaml_node_t *n, const char *what, tgc_dtype dtype, void *data,
                          size_t i) {
    const char *s = (const char *)n->data.scalar.value; /* a scalar: load_values checked */
    int64_t v = 0;
    double f = 0;
    if (dtype == TGC_STRING) { /* the scalar's text as it is, a fresh copy owned by the constant */
        if (tgc_string_slot_set(&((char **)data)[i], s, n->data.scalar.length) == TGC_OK) return true;
        tgc_loader_nomem(l);
        return false;
    }
    if (dtype == TGC_FLOAT32 || dtype == TGC_FLOAT16 || dtype == TGC_BFLOAT16 || dtype == TGC_FLOAT64) {
        if (!tgc_parse_number(s, &f)) {
            const char *p = s + (*s == '-' || *s == '+');
            bool special = same_ignoring_case(p, "nan") || same_ignoring_case(p, "inf") ||
                           same_ignoring_case(p, "infinity");
            tgc_loader_error(l, n, "bad-value", "%s: value '%s' is not a number%s", what, s,
                             special ? " (YAML spells them .nan, .inf and -.inf)" : "");
            return false;
        }
        store_element(data, dtype, i, f, 0, false);
        return true;
    }
    if (dtype == TGC_BOOL) {
        if (strcmp(s, "true") == 0 || strcmp(s, "True") == 0 || strcmp(s, "1") == 0) v = 1;
        else if (strcmp(s, "false") == 0 || strcmp(s, "False") == 0 || strcmp(s, "0") == 0) v = 0;
        else {
            tgc_loader_error(l, n, "bad-value", "%s: value '%s' is not a bool (true or false)", what, s);
            return false;
        }
        store_element(data, dtype, i, 0, v, true);
        return true;
    }
    if (dtype == TGC_UINT64 && parse_big_uint64(s, &v)) {
        store_element(data, dtype, i, 0, v, true);
        return true;
    }
    if (!tgc_parse_int(s, &v)) {
        if (tgc_is_int_text(s))
            tgc_loader_error(l, n, "value-out-of-range", "%s: value %s does not fit in %s", what, s,
                             tgc_dtype_name(dtype));
        else
            tgc_loader_error(l, n, "bad-value", "%s: value '%s' is not an integer", what, s);
        return false;
    }
    int64_t lo, hi;
    int_range(dtype, &lo, &hi);
    if (v < lo || v > hi) {
        tgc_loader_error(l, n, "value-out-of-range", "%s: value %s does not fit in %s", what, s,
                         tgc_dtype_name(dtype));
        return false;
    }
    store_element(data, dtype, i, 0, v, true);
    return true;
}

static tgc_status load_values(tgc_loader *l, const yaml_node_t *n, const char *what, tgc_const *c) {
    if (n->type != YAML_SEQUENCE_NODE)
        return tgc_loader_error(l, n, "bad-value", "values of %s must be a flat list, not %s", what,
                                node_kind_word(n));
    yaml_node_item_t *items = n->data.sequence.items.start;
    size_t count = (size_t)(n->data.sequence.items.top - items);
    /* Nested rows (as numpy prints a matrix) first: the count is then wrong too. */
    for (size_t i = 0; i < count; i++) {
        const yaml_node_t *item = yaml_document_get_node(&l->doc, items[i]);
        if (item->type != YAML_SCALAR_NODE)
            return tgc_loader_error(l, item, "bad-value",
                                    "%s: values must be one flat list of scalars, row-major; value %zu is %s", what,
                                    i, node_kind_word(item));
    }
    int64_t numel = tgc_shape_numel(&c->shape);
    if ((int64_t)count != numel)
        return tgc_loader_error(l, n, "value-count", "%s has %zu values but its shape %s needs %lld", what,
                                count, tgc_shape_str(l->g, &c->shape, (char[128]){0}, 128), (long long)numel);
    c->nbytes = count * tgc_dtype_size(c->dtype);
    c->data = c->nbytes ? tgc_calloc(1, c->nbytes) : NULL; /* string slots start NULL */
    if (c->nbytes && c->data == NULL) return tgc_loader_nomem(l);
    for (size_t i = 0; i < count; i++)
        if (!parse_element(l, yaml_document_get_node(&l->doc, items[i]), what, c->dtype, c->data, i))
            return TGC_ERR_INVALID;
    return TGC_OK;
}

static tgc_status load_npy(tgc_loader *l, const yaml_node_t *n, const char *what, tgc_const *c) {
    const char *file = tgc_loader_scalar(l, n, "file");
    if (file == NULL) return TGC_ERR_INVALID;
    c->file = tgc_strdup(file);
    if (c->file == NULL) return tgc_loader_nomem(l);
    /* Beneath the graph's folder (or the weights folder), never out of it. */
    const char *base_what = l->weights_dir ? "the weights folder" : "the model's folder";
    int fd;
    uint64_t size;
    char err[PATH_MAX + 256];
    tgc_status s = tgc_open_beneath(l->g->dir, file, base_what, &fd, &size, err, sizeof err);
    if (s == TGC_ERR_NOMEM) return tgc_loader_nomem(l);
    if (s == TGC_ERR_INVALID) return tgc_loader_error(l, n, "file-outside", "%s: file '%s' %s", what, file, err);
    if (s != TGC_OK) return tgc_loader_error(l, n, "bad-npy", "%s: cannot use '%s': %s", what, file, err);
    /* Too small for the declared data: said before the header is read. */
    int64_t numel = tgc_shape_numel(&c->shape);
    uint64_t need;
    if (numel >= 0 && !__builtin_mul_overflow((uint64_t)numel, (uint64_t)tgc_dtype_size(c->dtype), &need) &&
        size < need) {
        close(fd);
        return tgc_loader_error(l, n, "bad-npy",
                                "%s: cannot use '%s': it holds %" PRIu64 " bytes, but the declared %s data alone "
                                "needs %" PRIu64,
                                what, file, size, tgc_dtype_name(c->dtype), need);
    }
    tgc_npy a;
    s = tgc_npy_read_fd(fd, &a, err, sizeof err);
    if (s == TGC_ERR_NOMEM) return tgc_loader_nomem(l);
    if (s != TGC_OK) return tgc_loader_error(l, n, "bad-npy", "%s: cannot use '%s': %s", what, file, err);
    char want[128], got[128];
    tgc_shape got_shape = tgc_shape_of(a.rank, a.dims);
    if (a.dtype != c->dtype)
        s = tgc_loader_error(l, n, "npy-mismatch", "%s: '%s' holds %s data but the declaration says %s", what,
                             file, tgc_dtype_name(a.dtype), tgc_dtype_name(c->dtype));
    else if (!tgc_shape_eq(&got_shape, &c->shape))
        s = tgc_loader_error(l, n, "npy-mismatch", "%s: '%s' has shape %s but the declaration says %s", what,
                             file, tgc_shape_str(l->g, &got_shape, got, sizeof got),
                             tgc_shape_str(l->g, &c->shape, want, sizeof want));
    if (s != TGC_OK) {
        tgc_npy_release(&a);
        return s;
    }
    c->data = a.data;
    c->nbytes = a.nbytes;
    return TGC_OK;
}

tgc_status tgc_load_tensor(tgc_loader *l, const yaml_node_t *map, const char *what, bool named, tgc_const **out) {
    static const char *const keys[] = {"name", "dtype", "shape", "file", "values", NULL};
    *out = NULL;
    if (map->type != YAML_MAPPING_NODE)
        return tgc_loader_error(l, map, "wrong-kind", "%s must be a mapping, not %s", what, node_kind_word(map));
    const yaml_node_t *dtype = NULL, *shape = NULL, *file = NULL, *values = NULL;
    tgc_status s = TGC_OK;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(&l->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(&l->doc, p->value);
        if (!tgc_loader_check_key(l, k, what, named ? keys : keys + 1)) {
            s = TGC_ERR_INVALID;
            continue;
        }
        const char *key = (const char *)k->data.scalar.value;
        if (strcmp(key, "dtype") == 0) dtype = v;
        else if (strcmp(key, "shape") == 0) shape = v;
        else if (strcmp(key, "file") == 0) file = v;
        else if (strcmp(key, "values") == 0) values = v;
    }
    if (s != TGC_OK) return s;
    if (dtype == NULL || shape == NULL)
        return tgc_loader_error(l, map, "missing-key", "%s needs %s", what,
                                dtype == NULL && shape == NULL ? "a 'dtype' and a 'shape'"
                                : dtype == NULL                ? "a 'dtype'"
                                                               : "a 'shape'");
    if (file == NULL && values == NULL)
        return tgc_loader_error(l, map, "missing-key", "%s needs its data: 'file' (a .npy) or 'values'", what);
    if (file != NULL && values != NULL) {
        /* Point at whichever of the two keys comes second. */
        const yaml_node_t *second = NULL;
        for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
            yaml_node_t *v = yaml_document_get_node(&l->doc, p->value);
            if (v == file || v == values) second = yaml_document_get_node(&l->doc, p->key);
        }
        return tgc_loader_error(l, second, "conflicting-keys", "%s gives both 'file' and 'values'; give one", what);
    }
    tgc_const *c = tgc_calloc(1, sizeof *c);
    if (c == NULL) return tgc_loader_nomem(l);
    c->pos = tgc_loader_pos(map);
    s = tgc_load_dtype(l, dtype, what, &c->dtype);
    if (s == TGC_OK) s = tgc_load_shape(l, shape, what, false, &c->shape);
    if (s == TGC_OK) s = file ? load_npy(l, file, what, c) : load_values(l, values, what, c);
    if (s != TGC_OK) {
        tgc_const_free(c);
        return s;
    }
    *out = c;
    return TGC_OK;
}
