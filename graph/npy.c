/* NumPy .npy reader and writer (see npy.h and numpy/lib/format.py).
 *
 * Reading is one code path for memory and files: a tiny byte source feeds
 * the same steps (preamble, header dict, data), so the fuzzed in-memory
 * parser is also what reads files, and a file's data is read straight into
 * its final buffer. The header dict is parsed as the small subset of Python
 * literal syntax NumPy writers produce, never by fixed offsets.
 *
 * Writing reproduces np.save byte for byte: same key order and spacing, the
 * same spare spaces for growing the first axis, and padding so the data
 * starts on a 64-byte boundary. */
#include "graph/npy.h"

#include "support/alloc.h"
#include "support/checked.h"
#include "support/diag.h"
#include "support/special_file.h"
#include "support/string_slots.h"
#include "support/utf8.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* "\x93NUMPY" then one byte each of major and minor version. */
#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_SIZE 6
#define NPY_PREFIX_SIZE 8

/* numpy/lib/format.py: ARRAY_ALIGN and GROWTH_AXIS_MAX_DIGITS. */
#define NPY_ARRAY_ALIGN 64
#define NPY_GROWTH_AXIS_MAX_DIGITS 21

/* NumPy writes headers of a few hundred bytes. The cap keeps a corrupt
 * length field from asking for gigabytes before the read finds it false. */
#define NPY_MAX_HEADER_SIZE ((size_t)1 << 20)

/* Longest header tgc writes: the dict with 8 twenty-digit dims is under 300
 * bytes, plus at most 20 growth spaces, 64 padding bytes and the prefix. */
#define NPY_WRITE_HEADER_CAP 512

/* ---- Errors and small helpers ------------------------------------------- */

/* Copies untrusted header text into `buf` for an error message: at most 32
 * characters, anything unprintable shown as '?', so a hostile file cannot
 * put control characters or a newline into a one-line reason. */
static const char *printable(const char *s, size_t len, char buf[40]) {
    size_t n = len < 32 ? len : 32;
    for (size_t i = 0; i < n; i++) buf[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
    if (len > n) {
        memcpy(buf + n, "...", 3);
        n += 3;
    }
    buf[n] = '\0';
    return buf;
}

/* '=' and '|' mean "native", which is the order tgc buffers use only on a
 * little-endian host. */
static bool host_is_little_endian(void) {
    const uint16_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    return first == 1;
}

/* Stores product(dims) * element size in *nbytes; false if it passes
 * TGC_MAX_BYTES (support/checked.h). Like NumPy, a zero dim does not excuse an overflowing product of
 * the others. */
static bool array_nbytes(tgc_dtype dtype, int rank, const int64_t *dims, size_t *nbytes) {
    return tgc_checked_dims_nbytes(rank, dims, tgc_dtype_size(dtype), nbytes);
}

/* ---- Byte source: memory or a FILE -------------------------------------- */

typedef struct npy_source {
    FILE *file; /* NULL: read from mem */
    const unsigned char *mem;
    size_t mem_size;
    size_t mem_pos;
    int read_errno; /* non-zero once a file read failed for a reason other than EOF */
} npy_source;

/* Reads up to n bytes into dst; returns how many it got (fewer at the end). */
static size_t source_read(npy_source *s, void *dst, size_t n) {
    if (s->file == NULL) {
        size_t left = s->mem_size - s->mem_pos;
        size_t got = n < left ? n : left;
        if (got > 0) memcpy(dst, s->mem + s->mem_pos, got);
        s->mem_pos += got;
        return got;
    }
    size_t got = fread(dst, 1, n, s->file);
    if (got < n && ferror(s->file)) s->read_errno = errno != 0 ? errno : EIO;
    return got;
}

/* Stores in *left how many bytes remain, when that can be known without
 * reading them (memory, regular files); returns false for pipes and the like.
 * Lets the reader report a truncated file before allocating for it. */
static bool source_remaining(npy_source *s, size_t *left) {
    if (s->file == NULL) {
        *left = s->mem_size - s->mem_pos;
        return true;
    }
    long pos = ftell(s->file);
    if (pos < 0 || fseek(s->file, 0, SEEK_END) != 0) return false;
    long end = ftell(s->file);
    if (fseek(s->file, pos, SEEK_SET) != 0) {
        /* Lost our place: later reads would be wrong, so fail them. */
        s->read_errno = errno != 0 ? errno : EIO;
        return false;
    }
    if (end < pos) return false;
    *left = (size_t)(end - pos);
    return true;
}

/* Reads and counts everything left, for the "extra bytes" message. */
static size_t source_drain(npy_source *s) {
    unsigned char chunk[4096];
    size_t total = 0, got;
    while ((got = source_read(s, chunk, sizeof chunk)) > 0) total += got;
    return total;
}

/* The reason for a short read: the file failed (TGC_ERR_IO), or it ends
 * early (TGC_ERR_INVALID). `what` names the part ("header", "data"). */
static tgc_status short_read(const npy_source *s, const char *what, size_t expected, size_t found,
                             char *err, size_t err_size) {
    if (s->read_errno != 0)
        return tgc_err_format(err, err_size, TGC_ERR_IO, "read failed: %s", strerror(s->read_errno));
    return tgc_err_format(err, err_size, TGC_ERR_INVALID, "%s is truncated: expected %zu bytes, found %zu",
                what, expected, found);
}

/* ---- Preamble: magic, version, header length ---------------------------- */

/* Checks the 8-byte prefix (of which `got` bytes were read) and stores the
 * size of the header-length field that follows: 2 bytes in version 1.0,
 * 4 in 2.0 and 3.0. */
static tgc_status check_prefix(const unsigned char *p, size_t got, const npy_source *s,
                               size_t *len_field, char *err, size_t err_size) {
    size_t cmp = got < NPY_MAGIC_SIZE ? got : NPY_MAGIC_SIZE;
    if (memcmp(p, NPY_MAGIC, cmp) != 0)
        return tgc_err_format(err, err_size, TGC_ERR_INVALID, "not a .npy file: bad magic string");
    if (got < NPY_PREFIX_SIZE)
        return short_read(s, "preamble", NPY_PREFIX_SIZE, got, err, err_size);
    int major = p[6], minor = p[7];
    if ((major != 1 && major != 2 && major != 3) || minor != 0)
        return tgc_err_format(err, err_size, TGC_ERR_INVALID, "unsupported .npy format version %d.%d", major,
                    minor);
    *len_field = major == 1 ? 2 : 4;
    return TGC_OK;
}

/* Reads the prefix and the little-endian header length into *header_len. */
static tgc_status read_preamble(npy_source *s, size_t *header_len, char *err, size_t err_size) {
    unsigned char p[NPY_PREFIX_SIZE + 4];
    size_t got = source_read(s, p, NPY_PREFIX_SIZE);
    size_t len_field = 0;
    tgc_status st = check_prefix(p, got, s, &len_field, err, err_size);
    if (st != TGC_OK) return st;
    got = source_read(s, p + NPY_PREFIX_SIZE, len_field);
    if (got < len_field)
        return short_read(s, "preamble", NPY_PREFIX_SIZE + len_field, NPY_PREFIX_SIZE + got, err,
                          err_size);
    uint32_t len = 0;
    for (size_t i = len_field; i-- > 0;) len = (len << 8) | p[NPY_PREFIX_SIZE + i];
    if (len > NPY_MAX_HEADER_SIZE)
        return tgc_err_format(err, err_size, TGC_ERR_INVALID, "header length %lu exceeds the %zu-byte limit",
                    (unsigned long)len, NPY_MAX_HEADER_SIZE);
    *header_len = len;
    return TGC_OK;
}

/* ---- Header dict --------------------------------------------------------- */

/* A cursor over the header text. Every read checks `end`: the text comes
 * from the file and is not NUL-terminated. */
typedef struct cursor {
    const char *p;
    const char *end;
} cursor;

/* Python's whitespace between tokens (the header ends in '\n' padding). */
static void skip_space(cursor *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r' ||
                             *c->p == '\f'))
        c->p++;
}

/* Skips space, then consumes `ch` if it is next. */
static bool accept(cursor *c, char ch) {
    skip_space(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return true;
    }
    return false;
}

/* True if the text at the cursor starts with the `n` bytes of `word`. */
static bool starts_with(const cursor *c, const char *word, size_t n) {
    return (size_t)(c->end - c->p) >= n && memcmp(c->p, word, n) == 0;
}

/* A quoted string, 'single' or "double", without escapes (NumPy's keys
 * and type strings never need them). Stores its contents (unquoted) in
 * *s, *len. */
static tgc_status parse_string(cursor *c, const char **s, size_t *len, char *err, size_t err_size) {
    skip_space(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
        return tgc_err_format(err, err_size, TGC_ERR_INVALID, "malformed header: expected a quoted string");
    char quote = *c->p++;
    const char *start = c->p;
    while (c->p < c->end && *c->p != quote) {
        if (*c->p == '\\' || *c->p == '\n')
            return tgc_err_format(err, err_size, TGC_ERR_INVALID,
                        "malformed header: escapes and line breaks in strings are not supported");
        c->p++;
    }
    if (c->p >= c->end)
        return tgc_err_format(err, err_size, TGC_ERR_INVALID, "malformed header: unterminated string");
    *s = start;
    *len = (size_t)(c->p - start);
    c->p++;
    return TGC_OK;
}

/* Maps a type string to a dtype: an optional byte-order mark then one of
 * the codes below. Multi-byte types must be little-endian ('<', or
 * native '=' / '|' / no mark on a little-endian host); for one-byte types
 * the order does not matter, as in NumPy. */
static tgc_status descr_to_dtype(const char *s, size_t len, tgc_dtype *out, char *err,
                                 size_t err_size) {
    static const struct {
        const char *code;
        tgc_dtype dtype;
    } codes[] = {{"f4", TGC_FLOAT32}, {"f2", TGC_FLOAT16}, {"f8", TGC_FLOAT64}, {"i1", TGC_INT8},
                 {"i2", TGC_INT16},   {"i4", TGC_INT32},   {"i8", TGC_INT64},   {"u1", TGC_UINT8},
                 {"u2", TGC_UINT16},  {"u4", TGC_UINT32},  {"u8", TGC_UINT64},  {"b1", TGC_BOOL}};
    char shown[40];
    const char *code = s;
    size_t code_len = len;
    char order = '=';
    if (len > 0 && s[0] != '\0' && strchr("<>=|", s[0]) != NULL) {
        order = s[0];
        code++;
        code_len--;
    }
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        if (code_len != 2 || memcmp(code, codes[i].code, 2) != 0) continue;
        bool little = order == '<' || (order != '>' && host_is_little_endian());
        if (tgc_dtype_size(codes[i].dtype) > 1 && !little)
            return tgc_err_format(err, err_size, TGC_ERR_INVALID, "big-endian data ('%s') is not supported",
                        printable(s, len, shown));
        *out = codes[i].dtype;
        return TGC_OK;
    }
    return tgc_err_format(err, err_size, TGC_ERR_INVALID, "unsupported dtype '%s'", printable(s, len, shown));
}

/* A text type string: '<U{n}' (UTF-32, little-endian: '<', or '=' / '|' /
 * none on a little-endian host) or '{order}S{n}' (bytes). False when s is
 * not of that form; then *err is untouched. */
static bool text_descr(const char *s, size_t len, tgc_npy *meta) {
    char order = '=';
    if (len > 0 && strchr("<>=|", s[0]) != NULL && s[0] != '\0') order = s[0], s++, len--;
    if (len < 2 || (s[0] != 'U' && s[0] != 'S')) return false;
    size_t width = 0;
    for (size_t i = 1; i < len; i++) {
        if (s[i] < '0' || s[i] > '9' || width > (SIZE_MAX - 9) / 10 / 4) return false;
        width = width * 10 + (size_t)(s[i] - '0');
    }
    if (s[0] == 'U' && !(order == '<' || (order != '>' && host_is_little_endian()))) return false;
    meta->dtype = TGC_STRING;
    meta->text_unit = s[0] == 'U' ? 4 : 1;
    meta->text_width = width;
    return true;
}

/* The value of 'descr': a type string. A list there is a structured dtype. */
static tgc_status parse_descr(cursor *c, tgc_npy *meta, char *err, size_t err_size) {
    skip_space(c);
    if (c->p < c->end && *c->p == '[')
        return tgc_err_format(err, err_size, TGC_ERR_INVALID, "structured dtypes are not supported");
    const char *s;
    size_t len;
    tgc_status st = parse_string(c, &s, &len, err, err_size);
    if (st != TGC_OK) return st;
    if (text_descr(s, len, meta)) return TGC_OK;
    return descr_to_dtype(s, len, &meta->dtype, err, err_size);
}

/* The value of 'fortran_order': True or False. Only C order is supported. */
static tgc_status parse_fortran_order(cursor *c, char *err, size_t err_size) {
    skip_space(c);
    if (starts_with(c, "False", 5)) {
        c->p += 5;
        return TGC_OK;
    }
    if (starts_with(c, "True", 4))
        return tgc_err_format(err, err_size, TGC_ERR_INVALID, "Fortran-order arrays are not supported");
    return tgc_err_format(err, err_size, TGC_ERR_INVALID,
                "malformed header: fortran_order must be True or False");
}

/* One dimension: a decimal integer that fits int64. */
static tgc_status parse_dim(cursor *c, int64_t *dim, char *err, size_t err_size) {
    skip_space(c);
    if (c->p < c->end && *c->p == '-')
        return tgc_err_format(err, err_size, TGC_ERR_INVALID, "shape has a negative dimension");
    if (c->p >= c->end || *c->p < '0' || *c->p > '9')
        return tgc_err_format(err, err_size, TGC_ERR_INVALID, "malformed header: expected a dimension");
    int64_t v = 0;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        int digit = *c->p++ - '0';
        if (!tgc_checked_mul_i64(v, 10, &v) || !tgc_checked_add_i64(v, digit, &v))
            return tgc_err_format(err, err_size, TGC_ERR_INVALID,
                        "shape has a dimension too large for int64");
    }
    *dim = v;
    return TGC_OK;
}

/* The value of 'shape': a Python tuple of ints, "()", "(3,)", "(2, 3)" or
 * "(2,3,)". "(3)" is an int in Python, not a tuple, and is refused. */
static tgc_status parse_shape(cursor *c, tgc_npy *meta, char *err, size_t err_size) {
    if (!accept(c, '('))
        return tgc_err_format(err, err_size, TGC_ERR_INVALID, "malformed header: shape is not a tuple");
    int rank = 0;
    bool comma_after_last = false;
    while (!accept(c, ')')) {
        if (rank > 0 && !comma_after_last)
            return tgc_err_format(err, err_size, TGC_ERR_INVALID,
                        "malformed header: expected ',' or ')' in shape");
        int64_t dim = 0;
        tgc_status st = parse_dim(c, &dim, err, err_size);
        if (st != TGC_OK) return st;
        if (rank == TGC_NPY_MAX_RANK)
            return tgc_err_format(err, err_size, TGC_ERR_INVALID, "shape has more than %d dimensions",
                        TGC_NPY_MAX_RANK);
        meta->dims[rank++] = dim;
        comma_after_last = accept(c, ',');
    }
    if (rank == 1 && !comma_after_last)
        return tgc_err_format(err, err_size, TGC_ERR_INVALID, "malformed header: shape is not a tuple");
    meta->rank = rank;
    return TGC_OK;
}

enum { KEY_DESCR = 1, KEY_FORTRAN = 2, KEY_SHAPE = 4 };

/* One "'key': value" entry; `seen` collects the keys met so far. */
static tgc_status parse_entry(cursor *c, tgc_npy *meta, unsigned *seen, char *err,
                              size_t err_size) {
    const char *key;
    size_t len;
    char shown[40];
    tgc_status st = parse_string(c, &key, &len, err, err_size);
    if (st != TGC_OK) return st;
    unsigned bit = (len == 5 && memcmp(key, "descr", 5) == 0)           ? KEY_DESCR
                   : (len == 13 && memcmp(key, "fortran_order", 13) == 0) ? KEY_FORTRAN
                   : (len == 5 && memcmp(key, "shape", 5) == 0)           ? KEY_SHAPE
                                                                          : 0;
    if (bit == 0)
        return tgc_err_format(err, err_size, TGC_ERR_INVALID, "header has an unexpected key '%s'",
                    printable(key, len, shown));
    if (*seen & bit)
        return tgc_err_format(err, err_size, TGC_ERR_INVALID, "header repeats the key '%s'",
                    printable(key, len, shown));
    *seen |= bit;
    if (!accept(c, ':'))
        return tgc_err_format(err, err_size, TGC_ERR_INVALID, "malformed header: expected ':' after a key");
    if (bit == KEY_DESCR) return parse_descr(c, meta, err, err_size);
    if (bit == KEY_FORTRAN) return parse_fortran_order(c, err, err_size);
    return parse_shape(c, meta, err, err_size);
}

/* Parses the header dict at text[0..len): any key order, a trailing comma,
 * whitespace anywhere between tokens. Fills meta's dtype, rank and dims. */
static tgc_status parse_header(const char *text, size_t len, tgc_npy *meta, char *err,
                               size_t err_size) {
    cursor c = {text, text + len};
    unsigned seen = 0;
    if (!accept(&c, '{'))
        return tgc_err_format(err, err_size, TGC_ERR_INVALID, "malformed header: expected '{'");
    bool comma_after_last = true;
    while (!accept(&c, '}')) {
        if (!comma_after_last)
            return tgc_err_format(err, err_size, TGC_ERR_INVALID,
                        "malformed header: expected ',' or '}' after an entry");
        tgc_status st = parse_entry(&c, meta, &seen, err, err_size);
        if (st != TGC_OK) return st;
        comma_after_last = accept(&c, ',');
    }
    skip_space(&c);
    if (c.p != c.end)
        return tgc_err_format(err, err_size, TGC_ERR_INVALID, "malformed header: text after the closing '}'");
    const char *missing = !(seen & KEY_DESCR) ? "descr" : !(seen & KEY_FORTRAN) ? "fortran_order"
                          : !(seen & KEY_SHAPE) ? "shape" : NULL;
    if (missing != NULL)
        return tgc_err_format(err, err_size, TGC_ERR_INVALID, "header has no '%s' key", missing);
    return TGC_OK;
}

/* Reads the header text into a temporary buffer and parses it into meta,
 * then sets meta->nbytes from the shape. */
static tgc_status read_header(npy_source *s, size_t header_len, tgc_npy *meta, char *err,
                              size_t err_size) {
    size_t left;
    if (source_remaining(s, &left) && left < header_len)
        return short_read(s, "header", header_len, left, err, err_size);
    char *text = tgc_malloc(header_len);
    if (text == NULL) return tgc_err_format(err, err_size, TGC_ERR_NOMEM, "out of memory");
    size_t got = source_read(s, text, header_len);
    tgc_status st = got < header_len ? short_read(s, "header", header_len, got, err, err_size)
                                     : parse_header(text, header_len, meta, err, err_size);
    tgc_free(text);
    size_t slots;
    if (st == TGC_OK && meta->text_unit != 0 && /* the file's bytes; the slots must fit too */
        (!tgc_checked_dims_nbytes(meta->rank, meta->dims, meta->text_width * (size_t)meta->text_unit,
                                  &meta->nbytes) ||
         !array_nbytes(TGC_STRING, meta->rank, meta->dims, &slots)))
        st = tgc_err_format(err, err_size, TGC_ERR_INVALID, "array size overflows");
    else if (st == TGC_OK && meta->text_unit == 0 && !array_nbytes(meta->dtype, meta->rank, meta->dims, &meta->nbytes))
        st = tgc_err_format(err, err_size, TGC_ERR_INVALID, "array size overflows");
    return st;
}

/* ---- Data and the whole read ---------------------------------------------- */

/* Reads exactly meta->nbytes of data into a new buffer, refusing files that
 * are shorter or longer. Checks the size first where it is knowable, so a
 * header that claims terabytes costs no allocation. */
static tgc_status read_data(npy_source *s, tgc_npy *meta, char *err, size_t err_size) {
    size_t left;
    if (source_remaining(s, &left) && left != meta->nbytes) {
        if (left < meta->nbytes) return short_read(s, "data", meta->nbytes, left, err, err_size);
        return tgc_err_format(err, err_size, TGC_ERR_INVALID, "%zu extra bytes after the data",
                    left - meta->nbytes);
    }
    meta->data = tgc_malloc(meta->nbytes);
    if (meta->data == NULL) return tgc_err_format(err, err_size, TGC_ERR_NOMEM, "out of memory");
    size_t got = source_read(s, meta->data, meta->nbytes);
    if (got < meta->nbytes) return short_read(s, "data", meta->nbytes, got, err, err_size);
    size_t extra = source_drain(s);
    if (s->read_errno != 0)
        return tgc_err_format(err, err_size, TGC_ERR_IO, "read failed: %s", strerror(s->read_errno));
    if (extra > 0)
        return tgc_err_format(err, err_size, TGC_ERR_INVALID, "%zu extra bytes after the data", extra);
    return TGC_OK;
}

/* Element i of a text array's raw data as UTF-8 into out (room for
 * 4 x width + 1 bytes); its length in *n. False for a '<U' unit that is not
 * a Unicode scalar value. Trailing NULs are padding; a NUL ends the text. */
static bool text_element(const tgc_npy *a, size_t i, char *out, size_t *n) {
    size_t w = a->text_width;
    const unsigned char *raw = (const unsigned char *)a->data + i * w * (size_t)a->text_unit;
    *n = 0;
    for (size_t k = 0; k < w; k++) {
        if (a->text_unit == 1) {
            if (raw[k] == 0) break;
            out[(*n)++] = (char)raw[k];
            continue;
        }
        const unsigned char *u = raw + 4 * k;
        uint32_t cp = (uint32_t)u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16 | (uint32_t)u[3] << 24;
        if (cp == 0) break;
        if (!tgc_utf8_is_scalar(cp)) return false;
        *n += tgc_utf8_put(cp, out + *n);
    }
    out[*n] = '\0';
    return true;
}

/* Turns a text array's raw elements into string slots (the array's data
 * from then on). */
static tgc_status text_to_slots(tgc_npy *a, char *err, size_t err_size) {
    int64_t count = 1;
    for (int i = 0; i < a->rank; i++) count *= a->dims[i]; /* fits: read_header checked the slots' bytes */
    size_t numel = (size_t)count;
    char **slots = tgc_calloc(numel ? numel : 1, sizeof *slots);
    char *text = tgc_malloc(4 * a->text_width + 1);
    tgc_status st = slots == NULL || text == NULL ? TGC_ERR_NOMEM : TGC_OK;
    for (size_t i = 0; st == TGC_OK && i < numel; i++) {
        size_t n;
        if (!text_element(a, i, text, &n))
            st = tgc_err_format(err, err_size, TGC_ERR_INVALID,
                                "element %zu holds a UTF-32 unit that is not a Unicode code point", i);
        else st = tgc_string_slot_set(&slots[i], text, n);
    }
    tgc_free(text);
    if (st == TGC_ERR_NOMEM) tgc_err_format(err, err_size, TGC_ERR_NOMEM, "out of memory");
    if (st != TGC_OK) {
        tgc_string_slots_free(slots, numel);
        tgc_free(slots);
        return st;
    }
    tgc_free(a->data);
    a->data = numel ? slots : NULL;
    if (numel == 0) tgc_free(slots);
    a->nbytes = numel * sizeof *slots;
    a->text_unit = 0;
    a->text_width = 0;
    return TGC_OK;
}

/* The whole read: preamble, header, data. On failure releases and zeroes
 * *out. */
static tgc_status read_npy(npy_source *s, tgc_npy *out, char *err, size_t err_size) {
    memset(out, 0, sizeof *out);
    size_t header_len = 0;
    tgc_status st = read_preamble(s, &header_len, err, err_size);
    if (st == TGC_OK) st = read_header(s, header_len, out, err, err_size);
    if (st == TGC_OK) st = read_data(s, out, err, err_size);
    if (st == TGC_OK && out->text_unit != 0) st = text_to_slots(out, err, err_size);
    if (st != TGC_OK) tgc_npy_release(out);
    return st;
}

tgc_status tgc_npy_parse(const void *bytes, size_t size, tgc_npy *out, char *err, size_t err_size) {
    npy_source s = {.mem = bytes, .mem_size = bytes != NULL ? size : 0};
    return read_npy(&s, out, err, err_size);
}

tgc_status tgc_npy_read_file(const char *path, tgc_npy *out, char *err, size_t err_size) {
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (f == NULL) return tgc_err_format(err, err_size, TGC_ERR_IO, "%s", strerror(errno));
    npy_source s = {.file = f};
    tgc_status st = read_npy(&s, out, err, err_size);
    fclose(f);
    return st;
}

tgc_status tgc_npy_read_fd(int fd, tgc_npy *out, char *err, size_t err_size) {
    memset(out, 0, sizeof *out);
    FILE *f = fdopen(fd, "rb");
    if (f == NULL) {
        int e = errno;
        close(fd);
        return tgc_err_format(err, err_size, e == ENOMEM ? TGC_ERR_NOMEM : TGC_ERR_IO, "%s", strerror(e));
    }
    npy_source s = {.file = f};
    tgc_status st = read_npy(&s, out, err, err_size);
    fclose(f);
    return st;
}

void tgc_npy_release(tgc_npy *a) {
    if (a == NULL) return;
    if (a->dtype == TGC_STRING && a->text_unit == 0 && a->data != NULL)
        tgc_string_slots_free(a->data, a->nbytes / sizeof(char *));
    tgc_free(a->data);
    memset(a, 0, sizeof *a);
}

/* ---- Writing ---------------------------------------------------------------- */

/* The descr NumPy writes for each dtype (one-byte types have no order).
 * bfloat16 has none: NumPy has no such type (ml_dtypes adds one, which
 * np.save writes as raw '<V2' bytes that read back as void, not numbers),
 * so it is refused here; tgc_tensor_save_npy widens it to float32. */
static const char *dtype_descr(tgc_dtype t) {
    switch (t) {
    case TGC_FLOAT32: return "<f4";
    case TGC_FLOAT16: return "<f2";
    case TGC_FLOAT64: return "<f8";
    case TGC_INT8: return "|i1";
    case TGC_INT16: return "<i2";
    case TGC_INT32: return "<i4";
    case TGC_INT64: return "<i8";
    case TGC_UINT8: return "|u1";
    case TGC_UINT16: return "<u2";
    case TGC_UINT32: return "<u4";
    case TGC_UINT64: return "<u8";
    case TGC_BOOL: return "|b1";
    case TGC_STRING: return "<U"; /* text as the writers pass it on: width follows (text_encode) */
    default: return NULL;
    }
}

/* True if `a` describes itself consistently: a known dtype, rank 0..8,
 * non-negative dims, nbytes matching them and data present when needed. */
static bool array_is_consistent(const tgc_npy *a) {
    if (dtype_descr(a->dtype) == NULL || a->rank < 0 || a->rank > TGC_NPY_MAX_RANK) return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] < 0) return false;
    size_t nbytes;
    bool sized = a->text_unit != 0
                     ? tgc_checked_dims_nbytes(a->rank, a->dims, a->text_width * (size_t)a->text_unit, &nbytes)
                     : array_nbytes(a->dtype, a->rank, a->dims, &nbytes);
    return sized && nbytes == a->nbytes && (a->data != NULL || nbytes == 0);
}

/* A string array (slots) as np.save would write its '<U' form: *out gets
 * the UTF-32LE elements (text_unit 4, text_width the most code points of
 * any element, at least 1), data owned by the caller (tgc_free).
 * TGC_ERR_INVALID when `a` is inconsistent; TGC_ERR_NOMEM. */
static tgc_status text_encode(const tgc_npy *a, tgc_npy *out) {
    *out = *a;
    out->data = NULL;
    int64_t count;
    size_t slot_bytes;
    if (a->rank < 0 || a->rank > TGC_NPY_MAX_RANK || !tgc_checked_numel(a->rank, a->dims, &count) ||
        !array_nbytes(TGC_STRING, a->rank, a->dims, &slot_bytes) || slot_bytes != a->nbytes ||
        (a->data == NULL && a->nbytes > 0))
        return TGC_ERR_INVALID;
    const char *const *slots = a->data;
    size_t numel = (size_t)count, width = 1;
    for (size_t i = 0; i < numel; i++) {
        const char *t = tgc_string_slot_get(slots, i);
        size_t n = tgc_utf8_count(t, strlen(t));
        if (n > width) width = n;
    }
    out->text_unit = 4;
    out->text_width = width;
    if (!tgc_checked_dims_nbytes(a->rank, a->dims, width * 4, &out->nbytes)) return TGC_ERR_NOMEM;
    unsigned char *raw = tgc_calloc(1, out->nbytes ? out->nbytes : 1);
    if (raw == NULL) return TGC_ERR_NOMEM;
    for (size_t i = 0; i < numel; i++) {
        const char *t = tgc_string_slot_get(slots, i);
        size_t len = strlen(t), at = 0;
        for (unsigned char *u = raw + i * width * 4; at < len; u += 4) {
            uint32_t cp = tgc_utf8_next(t, len, &at);
            u[0] = (unsigned char)cp, u[1] = (unsigned char)(cp >> 8), u[2] = (unsigned char)(cp >> 16), u[3] = 0;
        }
    }
    out->data = raw;
    return TGC_OK;
}

/* Appends printf output to buf at *len; false if it does not fit in cap. */
static bool append(char *buf, size_t cap, size_t *len, const char *fmt, ...) TGC_PRINTF(4, 5);

static bool append(char *buf, size_t cap, size_t *len, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *len, cap - *len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= cap - *len) return false;
    *len += (size_t)n;
    return true;
}

/* Writes the full header (magic, version, length, dict, padding, '\n') into
 * buf as np.save does and stores its size in *len. The dict is
 * repr()-formatted with keys sorted; shape[0] gets 21 - len(repr(shape[0]))
 * spare spaces so NumPy can grow it in place; then spaces pad the whole so
 * the data starts at a multiple of 64 bytes. (The spare spaces change the
 * size only of headers NumPy could not write at rank <= 8, but following its
 * rule keeps the two identical by construction.) Version 1.0 unless the
 * length overflows its 2-byte field (impossible at rank <= 8, but that is
 * the format's rule). Returns false only if buf is too small. */
static bool format_header(const tgc_npy *a, unsigned char *buf, size_t cap, size_t *len) {
    char dict[NPY_WRITE_HEADER_CAP];
    size_t n = 0;
    char descr[40];
    if (a->text_unit != 0) snprintf(descr, sizeof descr, "%s%zu", dtype_descr(a->dtype), a->text_width);
    else snprintf(descr, sizeof descr, "%s", dtype_descr(a->dtype));
    bool ok = append(dict, sizeof dict, &n, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int i = 0; ok && i < a->rank; i++)
        ok = append(dict, sizeof dict, &n, i == 0 ? "%lld" : ", %lld", (long long)a->dims[i]);
    ok = ok && append(dict, sizeof dict, &n, "%s), }", a->rank == 1 ? "," : "");
    if (ok && a->rank > 0) {
        char first[24];
        int digits = snprintf(first, sizeof first, "%lld", (long long)a->dims[0]);
        ok = append(dict, sizeof dict, &n, "%*s", NPY_GROWTH_AXIS_MAX_DIGITS - digits, "");
    }
    if (!ok) return false;

    size_t len_field = 2;
    size_t hlen = n + 1; /* the dict and its '\n' */
    size_t pad = NPY_ARRAY_ALIGN - (NPY_PREFIX_SIZE + len_field + hlen) % NPY_ARRAY_ALIGN;
    if (hlen + pad > 0xffff) {
        len_field = 4;
        pad = NPY_ARRAY_ALIGN - (NPY_PREFIX_SIZE + len_field + hlen) % NPY_ARRAY_ALIGN;
    }
    size_t total = NPY_PREFIX_SIZE + len_field + hlen + pad;
    if (total > cap) return false;

    memcpy(buf, NPY_MAGIC, NPY_MAGIC_SIZE);
    buf[6] = len_field == 2 ? 1 : 2;
    buf[7] = 0;
    for (size_t i = 0; i < len_field; i++) /* little-endian length */
        buf[NPY_PREFIX_SIZE + i] = (unsigned char)((hlen + pad) >> (8 * i));
    memcpy(buf + NPY_PREFIX_SIZE + len_field, dict, n);
    memset(buf + NPY_PREFIX_SIZE + len_field + n, ' ', pad);
    buf[total - 1] = '\n';
    *len = total;
    return true;
}

/* Checks `a` and formats its header into buf; TGC_ERR_INVALID if `a` is
 * inconsistent. */
static tgc_status make_header(const tgc_npy *a, unsigned char buf[NPY_WRITE_HEADER_CAP],
                              size_t *len) {
    if (!array_is_consistent(a) || !format_header(a, buf, NPY_WRITE_HEADER_CAP, len))
        return TGC_ERR_INVALID;
    return TGC_OK;
}

tgc_status tgc_npy_serialize(const tgc_npy *a, void **bytes, size_t *size) {
    *bytes = NULL;
    *size = 0;
    if (a->dtype == TGC_STRING && a->text_unit == 0) {
        tgc_npy text;
        tgc_status st = text_encode(a, &text);
        if (st == TGC_OK) st = tgc_npy_serialize(&text, bytes, size);
        tgc_free(text.data);
        return st;
    }
    unsigned char header[NPY_WRITE_HEADER_CAP];
    size_t header_len = 0;
    tgc_status st = make_header(a, header, &header_len);
    if (st != TGC_OK) return st;
    if (a->nbytes > SIZE_MAX - header_len) return TGC_ERR_NOMEM;
    unsigned char *out = tgc_malloc(header_len + a->nbytes);
    if (out == NULL) return TGC_ERR_NOMEM;
    memcpy(out, header, header_len);
    if (a->nbytes > 0) memcpy(out + header_len, a->data, a->nbytes);
    *bytes = out;
    *size = header_len + a->nbytes;
    return TGC_OK;
}

/* Creates a new file next to `path` with a name no one else holds ("x" mode
 * is exclusive creation, so two writers never share one) and stores its
 * tgc_malloc'd name in *tmp_path. */
static tgc_status open_temp(const char *path, char **tmp_path, FILE **f, char *err,
                            size_t err_size) {
    static atomic_uint counter;
    size_t cap = strlen(path) + 48;
    char *name = tgc_malloc(cap);
    if (name == NULL) return tgc_err_format(err, err_size, TGC_ERR_NOMEM, "out of memory");
    for (int attempt = 0; attempt < 100; attempt++) {
        snprintf(name, cap, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&counter, 1));
        errno = 0;
        *f = fopen(name, "wbx");
        if (*f != NULL) {
            *tmp_path = name;
            return TGC_OK;
        }
        if (errno != EEXIST) break;
    }
    int e = errno != 0 ? errno : EEXIST;
    tgc_free(name);
    return tgc_err_format(err, err_size, TGC_ERR_IO, "cannot create a temporary file: %s", strerror(e));
}

/* Writes header and data to f, flushes them (to the disk too when `sync`:
 * a device such as /dev/null refuses fsync), closes f. */
static tgc_status write_and_close(FILE *f, const unsigned char *header, size_t header_len,
                                  const tgc_npy *a, bool sync, char *err, size_t err_size) {
    bool ok = fwrite(header, 1, header_len, f) == header_len &&
              (a->nbytes == 0 || fwrite(a->data, 1, a->nbytes, f) == a->nbytes) &&
              fflush(f) == 0 && (!sync || fsync(fileno(f)) == 0);
    int e = errno;
    if (fclose(f) != 0 && ok) {
        ok = false;
        e = errno;
    }
    if (!ok) return tgc_err_format(err, err_size, TGC_ERR_IO, "write failed: %s", strerror(e != 0 ? e : EIO));
    return TGC_OK;
}

tgc_status tgc_npy_write_file(const char *path, const tgc_npy *a, char *err, size_t err_size) {
    unsigned char header[NPY_WRITE_HEADER_CAP];
    size_t header_len = 0;
    if (a->dtype == TGC_BFLOAT16)
        return tgc_err_format(err, err_size, TGC_ERR_INVALID, "bfloat16 has no NumPy dtype (write it as float32)");
    if (a->dtype == TGC_STRING && a->text_unit == 0) {
        tgc_npy text;
        tgc_status st = text_encode(a, &text);
        if (st == TGC_OK) st = tgc_npy_write_file(path, &text, err, err_size);
        else tgc_err_format(err, err_size, st, st == TGC_ERR_NOMEM ? "out of memory" : "array is inconsistent");
        tgc_free(text.data);
        return st;
    }
    if (make_header(a, header, &header_len) != TGC_OK)
        return tgc_err_format(err, err_size, TGC_ERR_INVALID,
                    "array is inconsistent (dtype, rank, dims, nbytes or data)");
    if (tgc_path_is_device(path)) { /* /dev/null: written in place, never replaced by a rename */
        FILE *f = fopen(path, "wb");
        if (f == NULL) return tgc_err_format(err, err_size, TGC_ERR_IO, "cannot open: %s", strerror(errno));
        return write_and_close(f, header, header_len, a, false, err, err_size);
    }
    char *tmp = NULL;
    FILE *f = NULL;
    tgc_status st = open_temp(path, &tmp, &f, err, err_size);
    if (st != TGC_OK) return st;
    st = write_and_close(f, header, header_len, a, true, err, err_size);
    if (st == TGC_OK && rename(tmp, path) != 0)
        st = tgc_err_format(err, err_size, TGC_ERR_IO, "cannot rename into place: %s", strerror(errno));
    if (st != TGC_OK) remove(tmp);
    tgc_free(tmp);
    return st;
}
