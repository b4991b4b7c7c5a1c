/* Reading ONNX files: the ModelProto and TensorProto readers come from
 * protoc-c (onnx.pb-c.c, generated at build time from Debian's onnx.proto);
 * this file feeds them the file's bytes, routes their allocations through
 * tgc_malloc, and decodes tensors into dtype, dims and little-endian data. */
#include "onnx/onnx_import.h"

#include "graph/subgraph.h"
#include "support/alloc.h"
#include "support/checked.h"
#include "support/diag.h"
#include "support/open_beneath.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* protobuf-c's allocations through tgc_malloc. An unpack that returns NULL
 * may have run out of memory or met bad bytes; `data` points at a flag that
 * tells the two apart. */
static void *pb_alloc(void *data, size_t size) {
    void *p = tgc_malloc(size);
    if (p == NULL && data != NULL) *(bool *)data = true;
    return p;
}

static void pb_free(void *data, void *block) {
    (void)data;
    tgc_free(block);
}

static ProtobufCAllocator pb_allocator = {pb_alloc, pb_free, NULL};

static const tgc_srcpos no_pos = {0, 0};

/* Reads the whole file (one map_file does not take: a pipe, a device)
 * into a tgc_malloc'd buffer; a file past max_bytes
 * is refused ("over-limit") after reading at most max_bytes + 1 bytes. The
 * buffer is sized from fstat, so a regular file is read by read(2) straight
 * into it, once (no stdio copy, no regrowth); one that grows meanwhile, or
 * a pipe, regrows it. */
static tgc_status read_file(const char *path, int64_t max_bytes, tgc_diags *diags, uint8_t **bytes, size_t *size) {
    *bytes = NULL;
    *size = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        tgc_diag_error(diags, path, no_pos, "io", "cannot open: %s", strerror(errno));
        return TGC_ERR_IO;
    }
    struct stat st_file;
    size_t hint = fstat(fd, &st_file) == 0 && S_ISREG(st_file.st_mode) && st_file.st_size > 0 &&
                          st_file.st_size <= max_bytes
                      ? (size_t)st_file.st_size
                      : 0;
    size_t cap = hint + 1 > (1 << 16) ? hint + 1 : (1 << 16), n = 0; /* + 1: the end is seen without regrowth */
    uint8_t *buf = NULL;
    tgc_status st = TGC_OK;
    for (;;) {
        if (buf == NULL || n == cap) {
            if (buf != NULL) cap *= 2;
            uint8_t *grown = tgc_realloc(buf, cap);
            if (grown == NULL) {
                st = TGC_ERR_NOMEM;
                break;
            }
            buf = grown;
        }
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            tgc_diag_error(diags, path, no_pos, "io", "read failed: %s", strerror(errno));
            st = TGC_ERR_IO;
            break;
        }
        n += (size_t)got;
        if (n > (size_t)max_bytes) {
            tgc_load_limits l = {.file_bytes = max_bytes};
            st = tgc_load_limits_check_file(&l, path, (int64_t)n, diags);
            break;
        }
        if (got == 0) break;
    }
    close(fd);
    if (st != TGC_OK) {
        if (st == TGC_ERR_NOMEM) tgc_diag_error(diags, path, no_pos, "out-of-memory", "out of memory reading the file");
        tgc_free(buf);
        return st;
    }
    *bytes = buf;
    *size = n;
    return TGC_OK;
}

/* A regular file of at most max_bytes mapped read-only (*bytes NULL when
 * it is not one, or cannot be mapped: the caller reads it instead). The
 * model is parsed straight from the page cache: reading it into a buffer
 * first cost a copy of every byte and a page fault per 4 KiB of the
 * buffer (`tgc run` of ResNet-18, start to output: 110 -> 90 ms;
 * MobileNetV2 61 -> 55). As with every loader that maps its file (ONNX
 * Runtime's external data, llama.cpp), another process truncating the file
 * while it is parsed would end this one with SIGBUS. */
static void map_file(const char *path, int64_t max_bytes, uint8_t **bytes, size_t *size) {
    *bytes = NULL;
    *size = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && st.st_size <= max_bytes &&
        (uint64_t)st.st_size <= SIZE_MAX) {
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p != MAP_FAILED) {
            *bytes = p;
            *size = (size_t)st.st_size;
        }
    }
    close(fd);
}

static void release_file(uint8_t *bytes, size_t size, bool mapped) {
    if (mapped) munmap(bytes, size);
    else tgc_free(bytes);
}

tgc_status tgc_onnx_model_load(const char *path, int64_t max_bytes, tgc_diags *diags, Onnx__ModelProto **out) {
    *out = NULL;
    uint8_t *bytes;
    size_t size;
    map_file(path, max_bytes, &bytes, &size);
    bool mapped = bytes != NULL;
    tgc_status st = mapped ? TGC_OK : read_file(path, max_bytes, diags, &bytes, &size);
    if (st != TGC_OK) return st;
    if (tgc_onnx_nesting(&onnx__model_proto__descriptor, bytes, size, TGC_ONNX_MAX_NESTING) >
        TGC_ONNX_MAX_NESTING) {
        release_file(bytes, size, mapped);
        tgc_diag_error(diags, path, no_pos, "over-limit",
                       "its messages nest deeper than %d levels (subgraphs nest at most %d deep, each taking 3 "
                       "levels: node, attribute, graph)",
                       TGC_ONNX_MAX_NESTING, TGC_MAX_SUBGRAPH_DEPTH);
        return TGC_ERR_INVALID;
    }
    bool nomem = false;
    ProtobufCAllocator counting = {pb_alloc, pb_free, &nomem};
    Onnx__ModelProto *m = onnx__model_proto__unpack(&counting, size, bytes);
    release_file(bytes, size, mapped);
    if (m == NULL && nomem) {
        tgc_diag_error(diags, path, no_pos, "out-of-memory", "out of memory reading the model");
        return TGC_ERR_NOMEM;
    }
    if (m == NULL) {
        tgc_diag_error(diags, path, no_pos, "bad-model",
                       "not an ONNX model: the protobuf ModelProto does not parse (a truncated or corrupt file, "
                       "or another format)");
        return TGC_ERR_INVALID;
    }
    if (m->graph == NULL) {
        tgc_diag_error(diags, path, no_pos, "bad-model",
                       "not an ONNX model: it has no graph (a truncated file, or another format)");
        onnx__model_proto__free_unpacked(m, &pb_allocator);
        return TGC_ERR_INVALID;
    }
    *out = m;
    return TGC_OK;
}

void tgc_onnx_model_free(Onnx__ModelProto *m) {
    if (m != NULL) onnx__model_proto__free_unpacked(m, &pb_allocator);
}

tgc_dtype tgc_onnx_dtype(int64_t code) { return tgc_dtype_from_onnx(code); }

const char *tgc_onnx_dtype_name(int64_t code, char *buf, size_t size) {
    static const char *const names[] = {"UNDEFINED", "FLOAT",  "UINT8",     "INT8",       "UINT16",  "INT16",
                                        "INT32",     "INT64",  "STRING",    "BOOL",       "FLOAT16", "DOUBLE",
                                        "UINT32",    "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16"};
    if (code >= 0 && code < (int64_t)(sizeof names / sizeof names[0])) return names[code];
    snprintf(buf, size, "code %" PRId64, code);
    return buf;
}

/* Reads `length` bytes at `offset` of the external data file `location`
 * (beneath base_dir: support/open_beneath.h) into the arena. */
static tgc_status read_external(const Onnx__TensorProto *t, const char *base_dir, tgc_onnx_arena *a, size_t nbytes,
                                void **data, char *err, size_t err_size) {
    const char *location = NULL;
    int64_t offset = 0, length = -1;
    for (size_t i = 0; i < t->n_external_data; i++) {
        const Onnx__StringStringEntryProto *e = t->external_data[i];
        const char *k = e->key ? e->key : "", *v = e->value ? e->value : "";
        char *end;
        if (strcmp(k, "location") == 0)
            location = v;
        else if (strcmp(k, "offset") == 0 || strcmp(k, "length") == 0) {
            errno = 0;
            long long x = strtoll(v, &end, 10);
            if (*v == '\0' || *end != '\0' || errno != 0 || x < 0) {
                snprintf(err, err_size, "external data: %s '%s' is not a byte count", k, v);
                return TGC_ERR_INVALID;
            }
            if (k[0] == 'o')
                offset = x;
            else
                length = x;
        }
    }
    if (location == NULL || location[0] == '\0') {
        snprintf(err, err_size, "external data without a location");
        return TGC_ERR_INVALID;
    }
    if (length >= 0 && (uint64_t)length != nbytes) {
        snprintf(err, err_size, "external data: length %" PRId64 " but the dims need %zu bytes", length, nbytes);
        return TGC_ERR_INVALID;
    }
    /* Beneath the model's folder, through no link out of it (ONNX's checker
     * has required as much since CVE-2022-25882), a regular file holding
     * the bytes asked for: all checked before a byte is read. */
    int fd;
    uint64_t size;
    char why[512];
    tgc_status st = tgc_open_beneath(base_dir, location, "the model's folder", &fd, &size, why, sizeof why);
    if (st != TGC_OK) {
        snprintf(err, err_size, "external data file '%s' %s", location, why);
        return st;
    }
    uint64_t end;
    if (__builtin_add_overflow((uint64_t)offset, (uint64_t)nbytes, &end) || end > size) {
        close(fd);
        snprintf(err, err_size,
                 "external data file '%s' holds %" PRIu64 " bytes, fewer than the %zu at offset %" PRId64
                 " the dims need",
                 location, size, nbytes, offset);
        return TGC_ERR_INVALID;
    }
    void *buf = tgc_onnx_alloc(a, nbytes ? nbytes : 1);
    if (buf == NULL) {
        close(fd);
        return TGC_ERR_NOMEM;
    }
    size_t done = 0;
    errno = 0;
    while (done < nbytes) {
        ssize_t got = pread(fd, (char *)buf + done, nbytes - done, (off_t)(offset + (int64_t)done));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        done += (size_t)got;
    }
    int e = errno;
    close(fd);
    if (done < nbytes) {
        snprintf(err, err_size, "external data file '%s': read failed: %s", location,
                 e != 0 ? strerror(e) : "the file shrank");
        return TGC_ERR_IO;
    }
    *data = buf;
    return TGC_OK;
}

tgc_status tgc_onnx_tensor_decode(const Onnx__TensorProto *t, const char *base_dir, tgc_onnx_arena *a, tgc_npy *out,
                                  char *err, size_t err_size) {
    memset(out, 0, sizeof *out);
    if (t == NULL) { /* a TENSOR attribute whose field is missing */
        snprintf(err, err_size, "no tensor is given");
        return TGC_ERR_INVALID;
    }
    char nb[32];
    int64_t code = t->has_data_type ? t->data_type : 0;
    tgc_dtype dt = tgc_onnx_dtype(code);
    if (dt == TGC_DTYPE_INVALID) {
        snprintf(err, err_size, "dtype %s is not supported (tgc has " TGC_DTYPE_NAMES ")",
                 tgc_onnx_dtype_name(code, nb, sizeof nb));
        return TGC_ERR_UNSUPPORTED;
    }
    if (t->n_dims > TGC_NPY_MAX_RANK) {
        snprintf(err, err_size, "rank %zu is more than tgc's %d", t->n_dims, TGC_NPY_MAX_RANK);
        return TGC_ERR_UNSUPPORTED;
    }
    if (t->segment != NULL) {
        snprintf(err, err_size, "segmented tensors are not supported");
        return TGC_ERR_UNSUPPORTED;
    }
    size_t esize = tgc_dtype_size(dt);
    for (size_t i = 0; i < t->n_dims; i++) {
        if (t->dims[i] < 0) {
            snprintf(err, err_size, "dimension %zu is %" PRId64, i, t->dims[i]);
            return TGC_ERR_INVALID;
        }
        out->dims[i] = t->dims[i];
    }
    int64_t count;
    if (!tgc_checked_numel((int)t->n_dims, out->dims, &count) ||
        !tgc_checked_dims_nbytes((int)t->n_dims, out->dims, esize, &out->nbytes)) {
        snprintf(err, err_size, "the dims are too large: the size in bytes does not fit in 2^63 - 1");
        return TGC_ERR_INVALID;
    }
    size_t numel = (size_t)count;
    out->dtype = dt;
    out->rank = (int)t->n_dims;

    if (dt == TGC_STRING) { /* string_data: byte strings, each copied with a NUL into the arena */
        if (t->n_string_data != numel) {
            snprintf(err, err_size, "holds %zu strings, the dims need %zu", t->n_string_data, numel);
            return TGC_ERR_INVALID;
        }
        if (numel == 0) return TGC_OK;
        char **slots = tgc_onnx_alloc(a, out->nbytes);
        if (slots == NULL) return TGC_ERR_NOMEM;
        for (size_t i = 0; i < numel; i++) {
            slots[i] = tgc_onnx_strndup(a, (const char *)t->string_data[i].data, t->string_data[i].len);
            if (slots[i] == NULL) return TGC_ERR_NOMEM;
        }
        out->data = slots; /* char * slots in the arena, as tgc_tensor_create takes them */
        return TGC_OK;
    }
    if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
        return read_external(t, base_dir, a, out->nbytes, &out->data, err, err_size);
    if (t->has_raw_data) {
        if (t->raw_data.len != out->nbytes) {
            snprintf(err, err_size, "raw_data holds %zu bytes, the dims need %zu", t->raw_data.len, out->nbytes);
            return TGC_ERR_INVALID;
        }
        out->data = numel ? t->raw_data.data : NULL; /* little-endian, as ONNX stores it */
        return TGC_OK;
    }
    /* The typed fields (onnx.proto, TensorProto): float_data for FLOAT,
     * double_data for DOUBLE, int64_data for INT64, uint64_data for UINT32
     * and UINT64, and int32_data for INT32 and every narrower type (INT8,
     * INT16, UINT8, UINT16, BOOL, and FLOAT16 and BFLOAT16 as their bits). */
    size_t have;
    switch (code) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: have = t->n_float_data; break;
    case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: have = t->n_double_data; break;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: have = t->n_int64_data; break;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT32:
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT64: have = t->n_uint64_data; break;
    default: have = t->n_int32_data; break;
    }
    if (have != numel) {
        snprintf(err, err_size, "holds %zu values, the dims need %zu", have, numel);
        return TGC_ERR_INVALID;
    }
    if (numel == 0) return TGC_OK;
    switch (code) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: out->data = t->float_data; return TGC_OK;
    case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: out->data = t->double_data; return TGC_OK;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: out->data = t->int64_data; return TGC_OK;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT64: out->data = t->uint64_data; return TGC_OK;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: out->data = t->int32_data; return TGC_OK;
    default: break;
    }
    /* The narrower types travel widened: keep each value's low esize bytes
     * (little-endian, as every host tgc builds for; a two's complement
     * int8/int16 and an unsigned value alike). bool is normalized to 0/1. */
    unsigned char *buf = tgc_onnx_alloc(a, out->nbytes);
    if (buf == NULL) return TGC_ERR_NOMEM;
    for (size_t i = 0; i < numel; i++) {
        if (dt == TGC_UINT32) {
            uint32_t v = (uint32_t)t->uint64_data[i];
            memcpy(buf + 4 * i, &v, 4);
        } else if (dt == TGC_BOOL) {
            buf[i] = t->int32_data[i] != 0;
        } else if (esize == 2) {
            uint16_t v = (uint16_t)(uint32_t)t->int32_data[i];
            memcpy(buf + 2 * i, &v, 2);
        } else {
            buf[i] = (unsigned char)(uint32_t)t->int32_data[i];
        }
    }
    out->data = buf;
    return TGC_OK;
}

/* The directory part of `path` ("." when none), in the arena. */
static char *dir_of(tgc_onnx_arena *a, const char *path) {
    const char *slash = strrchr(path, '/');
    if (slash == NULL) return tgc_onnx_strdup(a, ".");
    if (slash == path) return tgc_onnx_strdup(a, "/");
    return tgc_onnx_strndup(a, path, (size_t)(slash - path));
}

tgc_status tgc_onnx_tensor_load(const char *pb_path, tgc_diags *diags, tgc_tensor **out) {
    *out = NULL;
    uint8_t *bytes;
    size_t size;
    tgc_status st = read_file(pb_path, TGC_DEFAULT_MAX_FILE_BYTES, diags, &bytes, &size);
    if (st != TGC_OK) return st;
    st = tgc_onnx_tensor_from_bytes(bytes, size, pb_path, diags, out);
    tgc_free(bytes);
    return st;
}

tgc_status tgc_onnx_file_bytes(const char *path, tgc_diags *diags, uint8_t **bytes, size_t *size) {
    return read_file(path, TGC_DEFAULT_MAX_FILE_BYTES, diags, bytes, size);
}

tgc_status tgc_onnx_tensor_from_bytes(const uint8_t *bytes, size_t size, const char *pb_path, tgc_diags *diags,
                                      tgc_tensor **out) {
    *out = NULL;
    tgc_status st;
    bool nomem = false;
    ProtobufCAllocator counting = {pb_alloc, pb_free, &nomem};
    Onnx__TensorProto *t = onnx__tensor_proto__unpack(&counting, size, bytes);
    if (t == NULL && nomem) {
        tgc_diag_error(diags, pb_path, no_pos, "out-of-memory", "out of memory reading the tensor");
        return TGC_ERR_NOMEM;
    }
    if (t == NULL) {
        tgc_diag_error(diags, pb_path, no_pos, "bad-tensor", "not an ONNX TensorProto: the protobuf does not parse");
        return TGC_ERR_INVALID;
    }
    tgc_onnx_arena arena = {0};
    tgc_npy v;
    char err[256] = "";
    char *dir = dir_of(&arena, pb_path);
    st = dir == NULL ? TGC_ERR_NOMEM : tgc_onnx_tensor_decode(t, dir, &arena, &v, err, sizeof err);
    if (st == TGC_OK) st = tgc_tensor_create(v.dtype, v.rank, v.dims, v.data, out);
    if (st == TGC_ERR_NOMEM)
        tgc_diag_error(diags, pb_path, no_pos, "out-of-memory", "out of memory");
    else if (st != TGC_OK)
        tgc_diag_error(diags, pb_path, no_pos, st == TGC_ERR_UNSUPPORTED ? "unsupported-dtype" : "bad-tensor",
                       "tensor '%s': %s", t->name ? t->name : "", err[0] ? err : tgc_status_name(st));
    tgc_onnx_arena_release(&arena);
    onnx__tensor_proto__free_unpacked(t, &pb_allocator);
    return st;
}
