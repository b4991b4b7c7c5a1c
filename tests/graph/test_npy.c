/* The .npy reader and writer, checked against files NumPy wrote
 * (tests/data/make_npy.py holds the values repeated literally here). */
#include "graph/npy.h"

#include "support/alloc.h"
#include "tests/harness.h"

#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define ERR_SIZE 256
#define NPY_DIR "tests/data/npy/"

/* ---- Helpers --------------------------------------------------------------- */

/* The bytes of a reference file (plain malloc: fixtures are not tgc's). */
static unsigned char *load_bytes(const char *rel, size_t *size) {
    *size = 0;
    FILE *f = fopen(tgc_test_path(rel), "rb");
    if (f == NULL) return NULL;
    unsigned char *buf = malloc(1 << 16);
    if (buf != NULL) *size = fread(buf, 1, 1 << 16, f);
    fclose(f);
    return buf;
}

/* Reads a reference file with tgc; asserts success, dtype and shape. */
static bool read_ok(const char *name, tgc_npy *a, tgc_dtype dtype, int rank, const int64_t *dims) {
    char err[ERR_SIZE] = "";
    char rel[256];
    snprintf(rel, sizeof rel, NPY_DIR "%s", name);
    tgc_status st = tgc_npy_read_file(tgc_test_path(rel), a, err, sizeof err);
    CU_ASSERT_EQUAL(st, TGC_OK);
    if (st != TGC_OK) {
        fprintf(stderr, "\n  %s: %s\n", name, err);
        return false;
    }
    CU_ASSERT_EQUAL(a->dtype, dtype);
    CU_ASSERT_EQUAL(a->rank, rank);
    size_t count = 1;
    for (int i = 0; i < rank && i < a->rank; i++) {
        CU_ASSERT_EQUAL(a->dims[i], dims[i]);
        count *= (size_t)dims[i];
    }
    CU_ASSERT_EQUAL(a->nbytes, count * tgc_dtype_size(dtype));
    CU_ASSERT_PTR_NOT_NULL(a->data);
    return a->dtype == dtype && a->rank == rank && a->nbytes == count * tgc_dtype_size(dtype);
}

/* Builds a .npy image from a header dict text and data (no padding: the
 * reader must not rely on it). Caller frees with free(). */
static unsigned char *build(int major, const char *dict, const void *data, size_t nbytes,
                            size_t *size) {
    size_t dict_len = strlen(dict);
    size_t len_field = major == 1 ? 2 : 4;
    *size = 8 + len_field + dict_len + nbytes;
    unsigned char *buf = malloc(*size);
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major;
    buf[7] = 0;
    for (size_t i = 0; i < len_field; i++) buf[8 + i] = (unsigned char)(dict_len >> (8 * i));
    memcpy(buf + 8 + len_field, dict, dict_len);
    if (nbytes > 0) memcpy(buf + 8 + len_field + dict_len, data, nbytes);
    return buf;
}

/* Parses a built image; returns the status and leaves the reason in err. */
static tgc_status parse_built(int major, const char *dict, const void *data, size_t nbytes,
                              tgc_npy *a, char err[ERR_SIZE]) {
    size_t size;
    unsigned char *buf = build(major, dict, data, nbytes, &size);
    err[0] = '\0';
    tgc_status st = tgc_npy_parse(buf, size, a, err, ERR_SIZE);
    free(buf);
    return st;
}

/* True if every byte of *a is zero, as the reader promises after a failure. */
static bool is_zeroed(const tgc_npy *a) {
    static const tgc_npy zero;
    return memcmp(a, &zero, sizeof zero) == 0;
}

/* Expects reading reference file `name` to fail with `status` and a reason
 * containing `reason`. */
static void expect_file_error(const char *name, tgc_status status, const char *reason) {
    char rel[256], err[ERR_SIZE] = "";
    snprintf(rel, sizeof rel, NPY_DIR "%s", name);
    tgc_npy a;
    tgc_status st = tgc_npy_read_file(tgc_test_path(rel), &a, err, sizeof err);
    CU_ASSERT_EQUAL(st, status);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, reason));
    CU_ASSERT(is_zeroed(&a));
    tgc_npy_release(&a);
    if (strstr(err, reason) == NULL) fprintf(stderr, "\n  %s: got \"%s\"\n", name, err);
}

/* A fresh directory for written files, removed by remove_dir. */
static char *make_temp_dir(char buf[256]) {
    const char *base = getenv("TMPDIR");
    snprintf(buf, 256, "%s/tgc_npy_XXXXXX", base != NULL && base[0] != '\0' ? base : "/tmp");
    return mkdtemp(buf);
}

/* Number of entries in `dir` other than . and .. */
static int count_entries(const char *dir) {
    DIR *d = opendir(dir);
    if (d == NULL) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
    closedir(d);
    return n;
}

/* The reference 2x3 float32 array, built by hand. */
static const float F32_2X3[6] = {0.5f, -1.25f, 3.0f, 1e-3f, 0.0f, 1e30f};

static tgc_npy f32_2x3_literal(void) {
    tgc_npy a = {.dtype = TGC_FLOAT32, .rank = 2, .dims = {2, 3}};
    a.data = (void *)F32_2X3;
    a.nbytes = sizeof F32_2X3;
    return a;
}

/* ---- Reading every dtype NumPy wrote ------------------------------------------ */

static void test_reads_float32_2x3(void) {
    tgc_npy a;
    const int64_t dims[] = {2, 3};
    if (read_ok("f32_2x3.npy", &a, TGC_FLOAT32, 2, dims)) {
        const float *v = a.data;
        for (int i = 0; i < 6; i++) CU_ASSERT_EQUAL(v[i], F32_2X3[i]);
    }
    tgc_npy_release(&a);
    CU_ASSERT(is_zeroed(&a));
}

static void test_reads_float16_bits(void) {
    static const uint16_t expected[] = {0x3C00, 0xC100, 0x3800, 0x7BFF, 0x0000, 0x8000};
    tgc_npy a;
    const int64_t dims[] = {6};
    if (read_ok("f16_6.npy", &a, TGC_FLOAT16, 1, dims)) {
        const uint16_t *v = a.data;
        for (int i = 0; i < 6; i++) CU_ASSERT_EQUAL(v[i], expected[i]);
    }
    tgc_npy_release(&a);
}

static void test_reads_int32_arange(void) {
    tgc_npy a;
    const int64_t dims[] = {3, 4};
    if (read_ok("i32_3x4.npy", &a, TGC_INT32, 2, dims)) {
        const int32_t *v = a.data;
        for (int i = 0; i < 12; i++) CU_ASSERT_EQUAL(v[i], i - 6);
    }
    tgc_npy_release(&a);
}

static void test_reads_int64_extremes(void) {
    const int64_t expected[] = {0, -1, (int64_t)1 << 40, -((int64_t)1 << 62), INT64_MAX, INT64_MIN};
    tgc_npy a;
    const int64_t dims[] = {3, 2};
    if (read_ok("i64_3x2.npy", &a, TGC_INT64, 2, dims)) {
        const int64_t *v = a.data;
        for (int i = 0; i < 6; i++) CU_ASSERT_EQUAL(v[i], expected[i]);
    }
    tgc_npy_release(&a);
}

static void test_reads_uint8(void) {
    tgc_npy a;
    const int64_t dims2[] = {4, 4};
    if (read_ok("u1_4x4.npy", &a, TGC_UINT8, 2, dims2)) {
        const uint8_t *v = a.data;
        for (int i = 0; i < 16; i++) CU_ASSERT_EQUAL(v[i], 17 * i);
    }
    tgc_npy_release(&a);
    const int64_t dims3[] = {2, 3, 4};
    if (read_ok("u1_2x3x4.npy", &a, TGC_UINT8, 3, dims3)) {
        const uint8_t *v = a.data;
        for (int i = 0; i < 24; i++) CU_ASSERT_EQUAL(v[i], i);
    }
    tgc_npy_release(&a);
}

/* The dtypes added with float64: files written by NumPy (np.save of
 * np.array([1.5, -0.1, 1e300], '<f8'), ([-128, -1, 0, 127], 'i1'),
 * ([-32768, 1234, 32767], '<i2'), ([0, 40000, 65535], '<u2'),
 * ([3000000000, 7], '<u4'), ([2**64 - 1, 5], '<u8')): read with the values
 * NumPy wrote, and serialized back byte for byte as NumPy wrote them.
 * bfloat16, with no NumPy dtype, is refused by the writer. */
static void expect_same_as_file(const char *name, const tgc_npy *a) {
    char rel[256];
    snprintf(rel, sizeof rel, NPY_DIR "%s", name);
    size_t want_size, got_size;
    unsigned char *want = load_bytes(rel, &want_size);
    void *got;
    CU_ASSERT_EQUAL_FATAL(tgc_npy_serialize(a, &got, &got_size), TGC_OK);
    CU_ASSERT(got_size == want_size && memcmp(got, want, want_size) == 0);
    tgc_free(got);
    free(want);
}

static void test_reads_and_writes_wider_dtypes(void) {
    tgc_npy a;
    if (read_ok("f64_3.npy", &a, TGC_FLOAT64, 1, (const int64_t[]){3})) {
        const double *v = a.data;
        CU_ASSERT(v[0] == 1.5 && v[1] == -0.1 && v[2] == 1e300);
        expect_same_as_file("f64_3.npy", &a);
    }
    tgc_npy_release(&a);
    if (read_ok("i8_4.npy", &a, TGC_INT8, 1, (const int64_t[]){4})) {
        const int8_t *v = a.data;
        CU_ASSERT(v[0] == -128 && v[1] == -1 && v[2] == 0 && v[3] == 127);
        expect_same_as_file("i8_4.npy", &a);
    }
    tgc_npy_release(&a);
    if (read_ok("i16_3.npy", &a, TGC_INT16, 1, (const int64_t[]){3})) {
        const int16_t *v = a.data;
        CU_ASSERT(v[0] == -32768 && v[1] == 1234 && v[2] == 32767);
        expect_same_as_file("i16_3.npy", &a);
    }
    tgc_npy_release(&a);
    if (read_ok("u16_3.npy", &a, TGC_UINT16, 1, (const int64_t[]){3})) {
        const uint16_t *v = a.data;
        CU_ASSERT(v[0] == 0 && v[1] == 40000 && v[2] == 65535);
        expect_same_as_file("u16_3.npy", &a);
    }
    tgc_npy_release(&a);
    if (read_ok("u32_2.npy", &a, TGC_UINT32, 1, (const int64_t[]){2})) {
        const uint32_t *v = a.data;
        CU_ASSERT(v[0] == 3000000000u && v[1] == 7);
        expect_same_as_file("u32_2.npy", &a);
    }
    tgc_npy_release(&a);
    if (read_ok("u64_2.npy", &a, TGC_UINT64, 1, (const int64_t[]){2})) {
        const uint64_t *v = a.data;
        CU_ASSERT(v[0] == UINT64_MAX && v[1] == 5);
        expect_same_as_file("u64_2.npy", &a);
    }
    tgc_npy_release(&a);

    uint16_t bits[2] = {0x3F80, 0xC000}; /* 1.0, -2.0 */
    tgc_npy bf = {.dtype = TGC_BFLOAT16, .rank = 1, .dims = {2}, .data = bits, .nbytes = 4};
    void *bytes;
    size_t size;
    CU_ASSERT_EQUAL(tgc_npy_serialize(&bf, &bytes, &size), TGC_ERR_INVALID);
    CU_ASSERT_PTR_NULL(bytes);
    char err[ERR_SIZE] = "";
    CU_ASSERT_EQUAL(tgc_npy_write_file("unused.npy", &bf, err, sizeof err), TGC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "bfloat16 has no NumPy dtype"));
}

static void test_reads_bool(void) {
    static const uint8_t expected[] = {1, 0, 0, 1, 1};
    tgc_npy a;
    const int64_t dims[] = {5};
    if (read_ok("bool_5.npy", &a, TGC_BOOL, 1, dims)) {
        const uint8_t *v = a.data;
        for (int i = 0; i < 5; i++) CU_ASSERT_EQUAL(v[i], expected[i]);
    }
    tgc_npy_release(&a);
}

static void test_reads_scalar(void) {
    tgc_npy a;
    if (read_ok("scalar_f32.npy", &a, TGC_FLOAT32, 0, NULL)) {
        CU_ASSERT_EQUAL(a.nbytes, 4);
        CU_ASSERT_EQUAL(*(const float *)a.data, 3.5f);
    }
    tgc_npy_release(&a);
}

static void test_reads_empty(void) {
    tgc_npy a;
    const int64_t dims[] = {0, 3};
    if (read_ok("empty_0x3.npy", &a, TGC_FLOAT32, 2, dims)) CU_ASSERT_EQUAL(a.nbytes, 0);
    tgc_npy_release(&a);
}

static void test_reads_1d(void) {
    tgc_npy a;
    const int64_t dims[] = {10};
    if (read_ok("f32_10.npy", &a, TGC_FLOAT32, 1, dims)) {
        const float *v = a.data;
        for (int i = 0; i < 10; i++) CU_ASSERT_EQUAL(v[i], 0.25f * (float)i);
    }
    tgc_npy_release(&a);
}

static void test_reads_versions_2_and_3(void) {
    const char *names[] = {"f32_2x3_v2.npy", "f32_2x3_v3.npy"};
    const int64_t dims[] = {2, 3};
    for (int f = 0; f < 2; f++) {
        tgc_npy a;
        if (read_ok(names[f], &a, TGC_FLOAT32, 2, dims)) {
            const float *v = a.data;
            for (int i = 0; i < 6; i++) CU_ASSERT_EQUAL(v[i], F32_2X3[i]);
        }
        tgc_npy_release(&a);
    }
}

/* ---- Header syntax ------------------------------------------------------------ */

/* Dicts NumPy or other writers could produce for the same 2x3 float32. */
static void test_header_spellings(void) {
    static const char *dicts[] = {
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
        "{'shape': (2, 3), 'fortran_order': False, 'descr': '<f4'}",
        "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2,3)}",
        "{'descr':'<f4','fortran_order':False,'shape':(2,3,),}",
        " {\n\t'descr' : '=f4' ,\r\n 'fortran_order' : False , 'shape' : ( 2 , 3 , ) , }  \n",
        "{'descr': 'f4', 'fortran_order': False, 'shape': (2, 3)}",
        "{'descr': '|f4', 'fortran_order': False, 'shape': (2, 3)}",
    };
    for (size_t i = 0; i < sizeof dicts / sizeof dicts[0]; i++) {
        for (int major = 1; major <= 3; major++) {
            tgc_npy a;
            char err[ERR_SIZE];
            tgc_status st = parse_built(major, dicts[i], F32_2X3, sizeof F32_2X3, &a, err);
            CU_ASSERT_EQUAL(st, TGC_OK);
            if (st != TGC_OK) fprintf(stderr, "\n  dict %zu v%d: %s\n", i, major, err);
            CU_ASSERT_EQUAL(a.dtype, TGC_FLOAT32);
            CU_ASSERT_EQUAL(a.rank, 2);
            CU_ASSERT_EQUAL(a.dims[0], 2);
            CU_ASSERT_EQUAL(a.dims[1], 3);
            CU_ASSERT(a.data != NULL && memcmp(a.data, F32_2X3, sizeof F32_2X3) == 0);
            tgc_npy_release(&a);
        }
    }
}

static void test_header_shapes(void) {
    static const struct {
        const char *shape;
        int rank;
        int64_t dims[TGC_NPY_MAX_RANK];
    } cases[] = {
        {"()", 0, {0}},          {"( )", 0, {0}},         {"(6,)", 1, {6}},
        {"( 6 , )", 1, {6}},     {"(1, 6)", 2, {1, 6}},   {"(3,2,)", 2, {3, 2}},
        {"(1,1,1,1,1,1,2,3)", 8, {1, 1, 1, 1, 1, 1, 2, 3}},
    };
    uint8_t data[6] = {1, 2, 3, 4, 5, 6};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char dict[128], err[ERR_SIZE];
        snprintf(dict, sizeof dict, "{'descr': '|u1', 'fortran_order': False, 'shape': %s}",
                 cases[i].shape);
        tgc_npy a;
        size_t n = cases[i].rank == 0 ? 1 : 6;
        tgc_status st = parse_built(1, dict, data, n, &a, err);
        CU_ASSERT_EQUAL(st, TGC_OK);
        if (st != TGC_OK) fprintf(stderr, "\n  shape %s: %s\n", cases[i].shape, err);
        CU_ASSERT_EQUAL(a.rank, cases[i].rank);
        for (int d = 0; d < cases[i].rank; d++) CU_ASSERT_EQUAL(a.dims[d], cases[i].dims[d]);
        CU_ASSERT_EQUAL(a.nbytes, n);
        tgc_npy_release(&a);
    }
}

/* One-byte types have no byte order: NumPy reads '<u1', '>u1' alike. */
static void test_header_one_byte_orders(void) {
    static const char *descrs[] = {"<u1", "=u1", "|u1", ">u1", "u1"};
    uint8_t data[2] = {7, 9};
    for (size_t i = 0; i < sizeof descrs / sizeof descrs[0]; i++) {
        char dict[128], err[ERR_SIZE];
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (2,)}",
                 descrs[i]);
        tgc_npy a;
        CU_ASSERT_EQUAL(parse_built(1, dict, data, 2, &a, err), TGC_OK);
        CU_ASSERT_EQUAL(a.dtype, TGC_UINT8);
        tgc_npy_release(&a);
    }
}

/* ---- Errors --------------------------------------------------------------------- */

static void test_rejects_reference_files(void) {
    expect_file_error("truncated.npy", TGC_ERR_INVALID,
                      "data is truncated: expected 24 bytes, found 10");
    expect_file_error("bad_magic.npy", TGC_ERR_INVALID, "bad magic");
    expect_file_error("big_endian_f32.npy", TGC_ERR_INVALID, "big-endian data ('>f4')");
    expect_file_error("fortran_f32.npy", TGC_ERR_INVALID, "Fortran-order");
    expect_file_error("complex64.npy", TGC_ERR_INVALID, "unsupported dtype '<c8'");
    expect_file_error("no_such_file.npy", TGC_ERR_IO, "No such file");
}

static void test_rejects_directory_as_io(void) {
    tgc_npy a;
    char err[ERR_SIZE] = "";
    CU_ASSERT_EQUAL(tgc_npy_read_file(tgc_test_path("tests/data/npy"), &a, err, sizeof err),
                    TGC_ERR_IO);
    CU_ASSERT(is_zeroed(&a));
}

/* Reads `size` bytes through a FIFO, a file whose size cannot be learnt
 * up front, so the reader must find short and long data by reading. */
static tgc_status read_through_fifo(const unsigned char *bytes, size_t size, tgc_npy *a,
                                    char err[ERR_SIZE]) {
    char dir[256], fifo[512];
    err[0] = '\0';
    memset(a, 0xff, sizeof *a);
    if (make_temp_dir(dir) == NULL) return TGC_ERR_IO;
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    tgc_status st = TGC_ERR_IO;
    if (mkfifo(fifo, 0600) == 0) {
        pid_t child = fork();
        if (child == 0) {
            int fd = open(fifo, O_WRONLY);
            ssize_t n = fd >= 0 ? write(fd, bytes, size) : -1;
            _exit(n == (ssize_t)size ? 0 : 1);
        }
        if (child > 0) {
            st = tgc_npy_read_file(fifo, a, err, ERR_SIZE);
            waitpid(child, NULL, 0);
        }
        remove(fifo);
    }
    rmdir(dir);
    return st;
}

static void test_reads_from_a_fifo(void) {
    size_t size;
    unsigned char *good = load_bytes(NPY_DIR "f32_2x3.npy", &size);
    CU_ASSERT_FATAL(good != NULL && size == 152);
    unsigned char longer[160];
    memcpy(longer, good, size);
    memcpy(longer + size, "abc", 3);
    tgc_npy a;
    char err[ERR_SIZE];

    CU_ASSERT_EQUAL(read_through_fifo(good, size, &a, err), TGC_OK);
    CU_ASSERT(a.nbytes == sizeof F32_2X3 && memcmp(a.data, F32_2X3, sizeof F32_2X3) == 0);
    tgc_npy_release(&a);
    CU_ASSERT_EQUAL(read_through_fifo(longer, size + 3, &a, err), TGC_ERR_INVALID);
    CU_ASSERT_STRING_EQUAL(err, "3 extra bytes after the data");
    CU_ASSERT(is_zeroed(&a));
    CU_ASSERT_EQUAL(read_through_fifo(good, size - 5, &a, err), TGC_ERR_INVALID);
    CU_ASSERT_STRING_EQUAL(err, "data is truncated: expected 24 bytes, found 19");
    CU_ASSERT(is_zeroed(&a));
    CU_ASSERT_EQUAL(read_through_fifo(good, 100, &a, err), TGC_ERR_INVALID);
    CU_ASSERT_STRING_EQUAL(err, "header is truncated: expected 118 bytes, found 90");
    free(good);
}

/* Each malformed dict with the reason it must give. */
static void test_rejects_bad_headers(void) {
    static const struct {
        const char *dict;
        const char *reason;
    } cases[] = {
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 3)}", "negative dimension"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,6)}",
         "more than 8 dimensions"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4)}",
         "array size overflows"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4611686018427387904, 4)}",
         "array size overflows"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
         "too large for int64"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (6)}", "shape is not a tuple"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': [6]}", "shape is not a tuple"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}", "expected ',' or ')'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (,)}", "expected a dimension"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)", "expected ',' or '}'"},
        {"{'descr': '<f4', 'fortran_order': False}", "no 'shape' key"},
        {"{'fortran_order': False, 'shape': (6,)}", "no 'descr' key"},
        {"{'descr': '<f4', 'shape': (6,)}", "no 'fortran_order' key"},
        {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (6,)}",
         "repeats the key 'descr'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (6,), 'extra': 1}",
         "unexpected key 'extra'"},
        {"{'descr': '<f4' 'fortran_order': False, 'shape': (6,)}", "expected ',' or '}'"},
        {"{'descr': '<f4', 'fortran_order': 0, 'shape': (6,)}", "True or False"},
        {"{'descr': '<f4', 'fortran_order': True, 'shape': (6,)}", "Fortran-order"},
        {"{'descr': '>i8', 'fortran_order': False, 'shape': (6,)}", "big-endian"},
        {"{'descr': '<m8', 'fortran_order': False, 'shape': (6,)}", "unsupported dtype '<m8'"},
        {"{'descr': '<c8', 'fortran_order': False, 'shape': (6,)}", "unsupported dtype '<c8'"},
        {"{'descr': '', 'fortran_order': False, 'shape': (6,)}", "unsupported dtype ''"},
        {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (6,)}", "structured"},
        {"{'descr': '<f4\\n', 'fortran_order': False, 'shape': (6,)}", "escapes"},
        {"{'descr' '<f4', 'fortran_order': False, 'shape': (6,)}", "expected ':'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (6,)} x", "after the closing"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (6,)}}", "after the closing"},
        {"{'descr: '<f4'}", "unexpected key"},
        {"{'descr", "unterminated string"},
        {"[]", "expected '{'"},
        {"", "expected '{'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tgc_npy a;
        char err[ERR_SIZE];
        tgc_status st = parse_built(1, cases[i].dict, F32_2X3, sizeof F32_2X3, &a, err);
        CU_ASSERT_EQUAL(st, TGC_ERR_INVALID);
        CU_ASSERT(is_zeroed(&a));
        tgc_npy_release(&a); /* keeps a wrong success from leaking */
        CU_ASSERT_PTR_NOT_NULL(strstr(err, cases[i].reason));
        CU_ASSERT_PTR_NULL(strchr(err, '\n'));
        if (strstr(err, cases[i].reason) == NULL)
            fprintf(stderr, "\n  case %zu: want \"%s\", got \"%s\"\n", i, cases[i].reason, err);
    }
}

static void test_rejects_wrong_data_size(void) {
    const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    unsigned char data[32] = {0};
    tgc_npy a;
    char err[ERR_SIZE];
    CU_ASSERT_EQUAL(parse_built(1, dict, data, 23, &a, err), TGC_ERR_INVALID);
    CU_ASSERT_STRING_EQUAL(err, "data is truncated: expected 24 bytes, found 23");
    CU_ASSERT_EQUAL(parse_built(1, dict, data, 0, &a, err), TGC_ERR_INVALID);
    CU_ASSERT_STRING_EQUAL(err, "data is truncated: expected 24 bytes, found 0");
    CU_ASSERT_EQUAL(parse_built(1, dict, data, 27, &a, err), TGC_ERR_INVALID);
    CU_ASSERT_STRING_EQUAL(err, "3 extra bytes after the data");
    CU_ASSERT(is_zeroed(&a));
}

/* A shape claiming 2^60 bytes must be refused as truncated without first
 * asking for the memory. */
static void test_huge_shape_costs_no_allocation(void) {
    const char *dict =
        "{'descr': '|u1', 'fortran_order': False, 'shape': (1073741824, 1073741824)}";
    tgc_host_alloc_stats before = tgc_host_alloc_stats_get();
    tgc_npy a;
    char err[ERR_SIZE];
    CU_ASSERT_EQUAL(parse_built(1, dict, "x", 1, &a, err), TGC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "data is truncated"));
    tgc_host_alloc_stats after = tgc_host_alloc_stats_get();
    CU_ASSERT(after.peak_bytes - before.peak_bytes < 4096);
}

static void test_rejects_bad_preambles(void) {
    size_t size;
    unsigned char *good = load_bytes(NPY_DIR "f32_2x3.npy", &size);
    CU_ASSERT_FATAL(good != NULL && size == 152);
    tgc_npy a;
    char err[ERR_SIZE];

    CU_ASSERT_EQUAL(tgc_npy_parse(good, 0, &a, err, sizeof err), TGC_ERR_INVALID);
    CU_ASSERT_STRING_EQUAL(err, "preamble is truncated: expected 8 bytes, found 0");
    CU_ASSERT_EQUAL(tgc_npy_parse(good, 9, &a, err, sizeof err), TGC_ERR_INVALID);
    CU_ASSERT_STRING_EQUAL(err, "preamble is truncated: expected 10 bytes, found 9");
    CU_ASSERT_EQUAL(tgc_npy_parse(good, 100, &a, err, sizeof err), TGC_ERR_INVALID);
    CU_ASSERT_STRING_EQUAL(err, "header is truncated: expected 118 bytes, found 90");
    CU_ASSERT_EQUAL(tgc_npy_parse("PK\3\4", 4, &a, err, sizeof err), TGC_ERR_INVALID);
    CU_ASSERT_STRING_EQUAL(err, "not a .npy file: bad magic string");
    CU_ASSERT_EQUAL(tgc_npy_parse(NULL, 0, &a, NULL, 0), TGC_ERR_INVALID);

    unsigned char copy[152];
    static const unsigned char versions[][2] = {{0, 0}, {4, 0}, {1, 1}, {255, 255}};
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
        memcpy(copy, good, sizeof copy);
        copy[6] = versions[i][0];
        copy[7] = versions[i][1];
        CU_ASSERT_EQUAL(tgc_npy_parse(copy, sizeof copy, &a, err, sizeof err), TGC_ERR_INVALID);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, "unsupported .npy format version"));
    }
    /* A version 2.0 length field claiming 4 GiB of header. */
    unsigned char huge[] = {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 0xff, 0xff, 0xff, 0xff, '{'};
    CU_ASSERT_EQUAL(tgc_npy_parse(huge, sizeof huge, &a, err, sizeof err), TGC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "exceeds the 1048576-byte limit"));
    /* err too small for the message is cut, still NUL-terminated. */
    char tiny[8];
    CU_ASSERT_EQUAL(tgc_npy_parse(good, 9, &a, tiny, sizeof tiny), TGC_ERR_INVALID);
    CU_ASSERT_STRING_EQUAL(tiny, "preambl");
    free(good);
}

/* Every truncation and many single-byte changes of a valid file: the
 * reader must answer OK or INVALID, never crash (ASan watches) or leak. */
static void test_mutations_never_crash(void) {
    static const unsigned char values[] = {0x00, 0x20, '\'', '"', ',', '(', ')', '{', '}',
                                           ':', '-', '9', 'T', '<', '>', 0x7f, 0x80, 0xff};
    size_t size;
    unsigned char *good = load_bytes(NPY_DIR "i32_3x4.npy", &size);
    CU_ASSERT_FATAL(good != NULL && size > 128);
    unsigned char *copy = malloc(size);
    int ok = 0;
    for (size_t cut = 0; cut <= size; cut++) {
        tgc_npy a;
        tgc_status st = tgc_npy_parse(good, cut, &a, NULL, 0);
        CU_ASSERT(st == (cut == size ? TGC_OK : TGC_ERR_INVALID));
        tgc_npy_release(&a);
    }
    for (size_t pos = 0; pos < 128; pos++) {
        for (size_t v = 0; v < sizeof values; v++) {
            memcpy(copy, good, size);
            copy[pos] = values[v];
            tgc_npy a;
            char err[ERR_SIZE];
            tgc_status st = tgc_npy_parse(copy, size, &a, err, sizeof err);
            CU_ASSERT(st == TGC_OK || st == TGC_ERR_INVALID);
            if (st == TGC_OK) {
                ok++;
                CU_ASSERT(a.data != NULL);
            } else {
                CU_ASSERT(is_zeroed(&a));
            }
            tgc_npy_release(&a);
        }
    }
    CU_ASSERT(ok > 0); /* padding spaces may change harmlessly */
    free(copy);
    free(good);
}

/* ---- Writing ---------------------------------------------------------------------- */

/* tgc's serialisation of what it read from every reference file is the
 * same bytes NumPy wrote. */
static void test_serialize_matches_numpy(void) {
    static const char *names[] = {"f32_2x3.npy", "f16_6.npy",  "i32_3x4.npy",    "i64_3x2.npy",
                                  "u1_4x4.npy",  "u1_2x3x4.npy", "bool_5.npy",   "scalar_f32.npy",
                                  "empty_0x3.npy", "f32_10.npy"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char rel[256], err[ERR_SIZE];
        snprintf(rel, sizeof rel, NPY_DIR "%s", names[i]);
        size_t want_size;
        unsigned char *want = load_bytes(rel, &want_size);
        tgc_npy a;
        CU_ASSERT_EQUAL_FATAL(tgc_npy_parse(want, want_size, &a, err, sizeof err), TGC_OK);
        void *got;
        size_t got_size;
        CU_ASSERT_EQUAL(tgc_npy_serialize(&a, &got, &got_size), TGC_OK);
        CU_ASSERT_EQUAL(got_size, want_size);
        bool same = got_size == want_size && memcmp(got, want, want_size) == 0;
        CU_ASSERT(same);
        if (!same) fprintf(stderr, "\n  %s: bytes differ from NumPy's\n", names[i]);
        CU_ASSERT_EQUAL(got_size % 64, a.nbytes % 64); /* data starts 64-aligned */
        tgc_free(got);
        tgc_npy_release(&a);
        free(want);
    }
}

/* An array built by hand (no reader involved) serialises to NumPy's file. */
static void test_serialize_literal_matches_numpy(void) {
    tgc_npy a = f32_2x3_literal();
    size_t want_size;
    unsigned char *want = load_bytes(NPY_DIR "f32_2x3.npy", &want_size);
    void *got;
    size_t got_size;
    CU_ASSERT_EQUAL_FATAL(tgc_npy_serialize(&a, &got, &got_size), TGC_OK);
    CU_ASSERT_EQUAL(got_size, 152);
    CU_ASSERT(got_size == want_size && memcmp(got, want, want_size) == 0);
    const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    CU_ASSERT(memcmp((const char *)got + 10, dict, strlen(dict)) == 0);
    CU_ASSERT_EQUAL(((const char *)got)[127], '\n');
    tgc_free(got);
    free(want);
}

static void test_write_file_matches_numpy_and_round_trips(void) {
    char dir[256], path[512], err[ERR_SIZE] = "";
    CU_ASSERT_PTR_NOT_NULL_FATAL(make_temp_dir(dir));
    snprintf(path, sizeof path, "%s/w.npy", dir);
    tgc_npy a = f32_2x3_literal();
    CU_ASSERT_EQUAL(tgc_npy_write_file(path, &a, err, sizeof err), TGC_OK);
    CU_ASSERT_EQUAL(count_entries(dir), 1); /* no temporary left behind */

    FILE *f = fopen(path, "rb");
    unsigned char got[256];
    size_t got_size = f != NULL ? fread(got, 1, sizeof got, f) : 0;
    if (f != NULL) fclose(f);
    size_t want_size;
    unsigned char *want = load_bytes(NPY_DIR "f32_2x3.npy", &want_size);
    CU_ASSERT(got_size == want_size && memcmp(got, want, want_size) == 0);
    free(want);

    /* Overwriting an existing file replaces it. */
    int32_t ints[4] = {-7, 0, 7, 2147483647};
    tgc_npy b = {.dtype = TGC_INT32, .rank = 3, .dims = {2, 1, 2}, .data = ints, .nbytes = 16};
    CU_ASSERT_EQUAL(tgc_npy_write_file(path, &b, err, sizeof err), TGC_OK);
    tgc_npy back;
    CU_ASSERT_EQUAL_FATAL(tgc_npy_read_file(path, &back, err, sizeof err), TGC_OK);
    CU_ASSERT_EQUAL(back.dtype, TGC_INT32);
    CU_ASSERT_EQUAL(back.rank, 3);
    CU_ASSERT(back.dims[0] == 2 && back.dims[1] == 1 && back.dims[2] == 2);
    CU_ASSERT(back.nbytes == 16 && memcmp(back.data, ints, 16) == 0);
    tgc_npy_release(&back);

    remove(path);
    CU_ASSERT_EQUAL(rmdir(dir), 0);
}

/* A failure after the temporary exists (rename onto a directory) removes
 * the temporary and leaves the target as it was. */
static void test_write_failure_removes_temp(void) {
    char dir[256], target[512], err[ERR_SIZE] = "";
    CU_ASSERT_PTR_NOT_NULL_FATAL(make_temp_dir(dir));
    snprintf(target, sizeof target, "%s/sub", dir);
    CU_ASSERT_EQUAL_FATAL(mkdir(target, 0700), 0);
    tgc_npy a = f32_2x3_literal();
    CU_ASSERT_EQUAL(tgc_npy_write_file(target, &a, err, sizeof err), TGC_ERR_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "rename"));
    CU_ASSERT_EQUAL(count_entries(dir), 1);
    CU_ASSERT_EQUAL(count_entries(target), 0);

    char missing[512];
    snprintf(missing, sizeof missing, "%s/no/such/dir/x.npy", dir);
    CU_ASSERT_EQUAL(tgc_npy_write_file(missing, &a, err, sizeof err), TGC_ERR_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "No such file"));
    CU_ASSERT_EQUAL(count_entries(dir), 1);

    rmdir(target);
    CU_ASSERT_EQUAL(rmdir(dir), 0);
}

static void test_write_rejects_inconsistent_arrays(void) {
    float v[6] = {0};
    tgc_npy cases[] = {
        {.dtype = TGC_FLOAT32, .rank = 2, .dims = {2, 3}, .data = v, .nbytes = 20},
        {.dtype = TGC_FLOAT32, .rank = 1, .dims = {-6}, .data = v, .nbytes = 24},
        {.dtype = TGC_FLOAT32, .rank = 9, .dims = {6}, .data = v, .nbytes = 24},
        {.dtype = TGC_DTYPE_INVALID, .rank = 1, .dims = {6}, .data = v, .nbytes = 24},
        {.dtype = TGC_FLOAT32, .rank = 1, .dims = {6}, .data = NULL, .nbytes = 24},
        {.dtype = TGC_FLOAT32, .rank = 2, .dims = {INT64_MAX, 3}, .data = v, .nbytes = 24},
    };
    char dir[256], path[512], err[ERR_SIZE];
    CU_ASSERT_PTR_NOT_NULL_FATAL(make_temp_dir(dir));
    snprintf(path, sizeof path, "%s/bad.npy", dir);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        void *bytes = (void *)1;
        size_t size = 1;
        CU_ASSERT_EQUAL(tgc_npy_serialize(&cases[i], &bytes, &size), TGC_ERR_INVALID);
        CU_ASSERT(bytes == NULL && size == 0);
        CU_ASSERT_EQUAL(tgc_npy_write_file(path, &cases[i], err, sizeof err), TGC_ERR_INVALID);
    }
    CU_ASSERT_EQUAL(count_entries(dir), 0);
    CU_ASSERT_EQUAL(rmdir(dir), 0);
}

/* ---- Out of memory ------------------------------------------------------------------- */

/* Failing each allocation in turn gives TGC_ERR_NOMEM (and a zeroed result)
 * until there are enough for the read to succeed; the harness then checks
 * that no path leaked. */
static void test_read_survives_alloc_failures(void) {
    const char *path = tgc_test_path(NPY_DIR "f32_2x3.npy");
    int k = 1;
    for (;; k++) {
        tgc_npy a;
        char err[ERR_SIZE];
        tgc_host_alloc_fail_nth(k);
        tgc_status st = tgc_npy_read_file(path, &a, err, sizeof err);
        tgc_host_alloc_fail_nth(0);
        CU_ASSERT(st == TGC_OK || st == TGC_ERR_NOMEM);
        if (st != TGC_OK) {
            CU_ASSERT(is_zeroed(&a));
            if (st != TGC_ERR_NOMEM || k > 100) break;
            continue;
        }
        CU_ASSERT(memcmp(a.data, F32_2X3, sizeof F32_2X3) == 0);
        tgc_npy_release(&a);
        break;
    }
    CU_ASSERT(k > 1); /* at least one failure was injected and survived */
}

static void test_write_survives_alloc_failures(void) {
    char dir[256], path[512], err[ERR_SIZE];
    CU_ASSERT_PTR_NOT_NULL_FATAL(make_temp_dir(dir));
    snprintf(path, sizeof path, "%s/w.npy", dir);
    tgc_npy a = f32_2x3_literal();

    tgc_host_alloc_fail_nth(1);
    CU_ASSERT_EQUAL(tgc_npy_write_file(path, &a, err, sizeof err), TGC_ERR_NOMEM);
    tgc_host_alloc_fail_nth(0);
    CU_ASSERT_EQUAL(count_entries(dir), 0);

    void *bytes;
    size_t size;
    tgc_host_alloc_fail_nth(1);
    CU_ASSERT_EQUAL(tgc_npy_serialize(&a, &bytes, &size), TGC_ERR_NOMEM);
    tgc_host_alloc_fail_nth(0);
    CU_ASSERT_PTR_NULL(bytes);
    CU_ASSERT_EQUAL(rmdir(dir), 0);
}

TGC_TEST_MAIN("npy",
              {"reads float32 2x3", test_reads_float32_2x3},
              {"reads float16 bit patterns", test_reads_float16_bits},
              {"reads int32 arange", test_reads_int32_arange},
              {"reads int64 extremes", test_reads_int64_extremes},
              {"reads uint8 rank 2 and 3", test_reads_uint8},
              {"reads bool", test_reads_bool},
              {"reads a scalar", test_reads_scalar},
              {"reads an empty array", test_reads_empty},
              {"reads a 1-D array", test_reads_1d},
              {"reads format versions 2.0 and 3.0", test_reads_versions_2_and_3},
              {"header: key order, quotes, spacing, commas", test_header_spellings},
              {"header: shape tuples", test_header_shapes},
              {"header: one-byte types ignore byte order", test_header_one_byte_orders},
              {"rejects NumPy files tgc cannot take", test_rejects_reference_files},
              {"a directory is an i/o error", test_rejects_directory_as_io},
              {"reads from a FIFO, finding short and long data", test_reads_from_a_fifo},
              {"rejects malformed headers with a reason", test_rejects_bad_headers},
              {"rejects short and long data", test_rejects_wrong_data_size},
              {"a huge shape costs no allocation", test_huge_shape_costs_no_allocation},
              {"rejects bad preambles", test_rejects_bad_preambles},
              {"mutated files never crash", test_mutations_never_crash},
              {"serialize matches NumPy for every dtype", test_serialize_matches_numpy},
              {"serialize of a literal array matches NumPy", test_serialize_literal_matches_numpy},
              {"reads and writes float64, int8, int16, uint16, uint32, uint64", test_reads_and_writes_wider_dtypes},
              {"write_file matches NumPy and round-trips",
               test_write_file_matches_numpy_and_round_trips},
              {"write failure removes the temporary", test_write_failure_removes_temp},
              {"writer rejects inconsistent arrays", test_write_rejects_inconsistent_arrays},
              {"read survives every allocation failure", test_read_survives_alloc_failures},
              {"write survives allocation failure", test_write_survives_alloc_failures})
