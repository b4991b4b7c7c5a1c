/* ONNX names into tgc names. ONNX allows any string as a tensor or node
 * name ("input.1", "onnx::Flatten_0", "x:0", "/layer1/Conv_output_0", "");
 * tgc names are [A-Za-z0-9_.:/-]+ and symbols are identifiers. Each other
 * character becomes '_', and so does the ':' of a name ending in ':' and
 * digits ("x:0" -> "x_0"), since "name:k" in a tgc reference means output
 * k of node `name`: PyTorch's "onnx::Flatten_0" stays as it is. Two ONNX
 * names that clean up alike get "_1", "_2", ... in the order they are met,
 * which is the model's order, so an import is deterministic. The ONNX
 * names of graph inputs, outputs and nodes are kept beside (source_name,
 * onnx_import.c). */
#include "onnx/onnx_import.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define MAX_NAME 200

static bool name_char(char ch, bool symbol) {
    if (isalnum((unsigned char)ch) || ch == '_') return true;
    return !symbol && strchr("./:-", ch) != NULL;
}

bool tgc_onnx_name_used(const tgc_onnx_namer *n, const char *name) { return tgc_strmap_get(&n->used, name) >= 0; }

const char *tgc_onnx_name(tgc_onnx_namer *n, const char *wanted, const char *fallback) {
    char base[MAX_NAME + 2];
    size_t len = 0;
    if (wanted != NULL && n->symbols && isdigit((unsigned char)wanted[0])) base[len++] = '_';
    for (const char *p = wanted ? wanted : ""; *p && len < MAX_NAME; p++) {
        if ((unsigned char)*p >= 0x80) { /* a UTF-8 sequence becomes one '_' */
            while (((unsigned char)p[1] & 0xC0) == 0x80)
                p++;
            base[len++] = '_';
        } else {
            base[len++] = name_char(*p, n->symbols) ? *p : '_';
        }
    }
    base[len] = '\0';
    if (len == 0) snprintf(base, sizeof base, "%s", fallback);
    /* A ':' followed by digits to the end would read as an output index. */
    size_t k = strlen(base);
    while (k > 0 && isdigit((unsigned char)base[k - 1]))
        k--;
    if (k > 0 && base[k - 1] == ':') base[k - 1] = '_';

    char buf[MAX_NAME + 32];
    snprintf(buf, sizeof buf, "%s", base);
    for (long k = 1; tgc_onnx_name_used(n, buf); k++)
        snprintf(buf, sizeof buf, "%s_%ld", base, k);
    char *out = tgc_onnx_strdup(n->arena, buf);
    if (out == NULL || tgc_strmap_put(&n->used, out, 1) != TGC_OK) {
        n->arena->failed = true;
        return NULL;
    }
    return out;
}

void tgc_onnx_namer_release(tgc_onnx_namer *n) { tgc_strmap_release(&n->used); }
