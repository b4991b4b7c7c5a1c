/* The importer's arena: blocks from tgc_malloc, bump allocation, one release.
 * Small requests share 64 KiB blocks; a large one (a converted weight) gets
 * a block of its own. */
#include "onnx/onnx_import.h"

#include "support/alloc.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define BLOCK_SIZE 65536
#define ALIGN 16

struct tgc_onnx_block {
    struct tgc_onnx_block *next;
    size_t used, size;
    max_align_t data[]; /* the payload, aligned as malloc's */
};

void *tgc_onnx_alloc(tgc_onnx_arena *a, size_t size) {
    size = (size + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    struct tgc_onnx_block *b = a->head;
    if (b == NULL || b->size - b->used < size) {
        size_t cap = size > BLOCK_SIZE / 4 ? size : BLOCK_SIZE;
        if (cap > SIZE_MAX - sizeof *b) {
            a->failed = true;
            return NULL;
        }
        b = tgc_malloc(sizeof *b + cap);
        if (b == NULL) {
            a->failed = true;
            return NULL;
        }
        b->used = 0;
        b->size = cap;
        /* A private block for a large request goes behind the current one,
         * so the current one keeps serving small requests. */
        if (cap != BLOCK_SIZE && a->head != NULL) {
            b->next = a->head->next;
            a->head->next = b;
        } else {
            b->next = a->head;
            a->head = b;
        }
    }
    void *p = (unsigned char *)b->data + b->used;
    b->used += size;
    memset(p, 0, size);
    return p;
}

char *tgc_onnx_strndup(tgc_onnx_arena *a, const char *s, size_t n) {
    char *p = tgc_onnx_alloc(a, n + 1);
    if (p != NULL) {
        if (n > 0) memcpy(p, s, n); /* an empty protobuf string has no bytes: s may be NULL */
        p[n] = '\0';
    }
    return p;
}

char *tgc_onnx_strdup(tgc_onnx_arena *a, const char *s) { return tgc_onnx_strndup(a, s, strlen(s)); }

char *tgc_onnx_printf(tgc_onnx_arena *a, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return NULL;
    char *p = tgc_onnx_alloc(a, (size_t)n + 1);
    if (p == NULL) return NULL;
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

void tgc_onnx_arena_release(tgc_onnx_arena *a) {
    while (a->head != NULL) {
        struct tgc_onnx_block *next = a->head->next;
        tgc_free(a->head);
        a->head = next;
    }
    a->failed = false;
}
