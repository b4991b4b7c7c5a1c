/* .npy text (graph/npy.h): numpy's '<U{n}' and '|S{n}' read as string
 * slots, and strings written as np.save writes np.array(list_of_str).
 * The byte images below are what numpy 1.x's np.save wrote for the arrays
 * named beside them (python3 -c "import numpy as np, io; b = io.BytesIO();
 * np.save(b, ARRAY); print(b.getvalue())"). */
#include "tests/harness.h"

#include "graph/npy.h"
#include "support/alloc.h"

#include <CUnit/CUnit.h>
#include <string.h>

/* A version 1.0 image: header dict `dict` padded to 128 bytes, then data. */
static size_t image(unsigned char *buf, const char *dict, const void *data, size_t nbytes) {
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    size_t hlen = 128 - 10;
    buf[8] = (unsigned char)hlen, buf[9] = 0;
    memset(buf + 10, ' ', hlen);
    memcpy(buf + 10, dict, strlen(dict));
    buf[10 + hlen - 1] = '\n';
    memcpy(buf + 128, data, nbytes);
    return 128 + nbytes;
}

static void test_read_text(void) {
    unsigned char buf[512];
    char err[256];
    tgc_npy a;
    /* np.array(['ab', 'é', '']): '<U2', UTF-32LE, NUL-padded */
    static const uint32_t u[] = {'a', 'b', 0xE9, 0, 0, 0};
    size_t n = image(buf, "{'descr': '<U2', 'fortran_order': False, 'shape': (3,), }", u, sizeof u);
    CU_ASSERT_EQUAL_FATAL(tgc_npy_parse(buf, n, &a, err, sizeof err), TGC_OK);
    CU_ASSERT(a.dtype == TGC_STRING && a.rank == 1 && a.dims[0] == 3 && a.nbytes == 3 * sizeof(char *));
    char **s = a.data;
    CU_ASSERT_STRING_EQUAL(s[0], "ab");
    CU_ASSERT_STRING_EQUAL(s[1], "\xC3\xA9");
    CU_ASSERT_PTR_NULL(s[2]);
    tgc_npy_release(&a);
    /* np.array([b'x', b'yz']): '|S2' bytes */
    n = image(buf, "{'descr': '|S2', 'fortran_order': False, 'shape': (2,), }", "x\0yz", 4);
    CU_ASSERT_EQUAL_FATAL(tgc_npy_parse(buf, n, &a, err, sizeof err), TGC_OK);
    CU_ASSERT(a.dtype == TGC_STRING && ((char **)a.data)[1] != NULL);
    CU_ASSERT_STRING_EQUAL(((char **)a.data)[0], "x");
    CU_ASSERT_STRING_EQUAL(((char **)a.data)[1], "yz");
    tgc_npy_release(&a);
    /* a UTF-32 unit past U+10FFFF, big-endian text, truncated data: errors, nothing leaks */
    static const uint32_t bad[] = {0x110000};
    n = image(buf, "{'descr': '<U1', 'fortran_order': False, 'shape': (1,), }", bad, sizeof bad);
    CU_ASSERT_EQUAL(tgc_npy_parse(buf, n, &a, err, sizeof err), TGC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "not a Unicode code point"));
    n = image(buf, "{'descr': '>U1', 'fortran_order': False, 'shape': (1,), }", bad, sizeof bad);
    CU_ASSERT_EQUAL(tgc_npy_parse(buf, n, &a, err, sizeof err), TGC_ERR_INVALID);
    n = image(buf, "{'descr': '<U4', 'fortran_order': False, 'shape': (2,), }", u, sizeof u);
    CU_ASSERT_EQUAL(tgc_npy_parse(buf, n, &a, err, sizeof err), TGC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "truncated"));
}

static void test_write_text(void) {
    char *slots[] = {"ab", "\xC3\xA9t\xC3\xA9", NULL}; /* 'ab', 'été', '' */
    tgc_npy a = {.dtype = TGC_STRING, .rank = 1, .dims = {3}, .data = slots, .nbytes = sizeof slots};
    void *bytes;
    size_t size;
    CU_ASSERT_EQUAL_FATAL(tgc_npy_serialize(&a, &bytes, &size), TGC_OK);
    /* np.save(np.array(['ab', 'été', ''])): '<U3', 128-byte header, 3 x 3 UTF-32LE units */
    CU_ASSERT_EQUAL(size, 128 + 36);
    CU_ASSERT_PTR_NOT_NULL(strstr((const char *)bytes + 10, "{'descr': '<U3', 'fortran_order': False, 'shape': (3,), }"));
    static const uint32_t want[] = {'a', 'b', 0, 0xE9, 't', 0xE9, 0, 0, 0};
    CU_ASSERT(memcmp((const char *)bytes + 128, want, sizeof want) == 0);
    /* and it reads back */
    tgc_npy b;
    char err[256];
    CU_ASSERT_EQUAL_FATAL(tgc_npy_parse(bytes, size, &b, err, sizeof err), TGC_OK);
    CU_ASSERT_STRING_EQUAL(((char **)b.data)[1], "\xC3\xA9t\xC3\xA9");
    tgc_npy_release(&b);
    tgc_free(bytes);
    /* all empty: '<U1' as numpy gives np.array(['', '']) */
    char *empty[] = {NULL, NULL};
    tgc_npy e = {.dtype = TGC_STRING, .rank = 1, .dims = {2}, .data = empty, .nbytes = sizeof empty};
    CU_ASSERT_EQUAL_FATAL(tgc_npy_serialize(&e, &bytes, &size), TGC_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr((const char *)bytes + 10, "'<U1'"));
    CU_ASSERT_EQUAL(size, 128 + 8);
    tgc_free(bytes);
}

TGC_TEST_MAIN("npy_strings", {"read '<U' and '|S'", test_read_text}, {"write '<U'", test_write_text})
