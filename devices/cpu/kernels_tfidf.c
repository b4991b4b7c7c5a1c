/* TfIdfVectorizer on the cpu, as ONNX's reference implementation counts:
 * for each row and each skip distance d = 1 .. max_skip_count + 1, every
 * start position s and every length n in [start, max_gram_length] whose
 * items X[s], X[s + d], ..., X[s + (n-1) d] fit in the row: when that
 * n-gram is in the pool (the last such pool entry, as the reference's map
 * keeps it), its column counts one. `start` is min_gram_length, except that
 * unigrams count only at the first distance (they do not depend on it).
 * Then Y = count (TF), weight or 0 (IDF), count * weight (TFIDF); weights
 * default to 1. Work per row: O((max_skip + 1) * C * max_gram * pool). */
#include "devices/kernel.h"
#include "devices/kernel_checks.h"
#include "graph/tfidf_pool.h"

#include "support/alloc.h"
#include "support/checked.h"

#include <string.h>

/* The column of the pool n-gram equal to x[s], x[s+d], ..., or -1. */
static int64_t lookup(const tgc_tfidf_pool *p, const int64_t *row, int64_t s, int64_t d, int64_t n) {
    int64_t column = -1;
    size_t gram = 0;
    for (size_t i = 0; i < p->n_counts; i++) {
        int64_t len = (int64_t)i + 1, start = p->counts[i];
        int64_t end = i + 1 < p->n_counts ? p->counts[i + 1] : (int64_t)p->n_items;
        for (int64_t at = start; at < end; at += len, gram++) {
            if (len != n) continue;
            int64_t k = 0;
            while (k < n && p->items[at + k] == row[s + k * d]) k++;
            if (k == n) column = p->indexes[gram];
        }
    }
    return column;
}

static void count_row(const tgc_tfidf_pool *p, const int64_t *row, int64_t width, int64_t *counts) {
    int64_t first = p->min_gram;
    for (int64_t d = 1; d <= p->max_skip + 1; d++) {
        for (int64_t s = 0; s < width; s++) {
            if (s + d * (first - 1) >= width) break;
            for (int64_t n = first; n <= p->max_gram && s + d * (n - 1) < width; n++) {
                int64_t column = lookup(p, row, s, d, n);
                if (column >= 0) counts[column]++;
            }
        }
        if (first == 1) first = 2;
        if (first > p->max_gram) break;
    }
}

static tgc_status tfidf(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 1, 1);
    if (st != TGC_OK) return st;
    tgc_tfidf_pool p;
    const char *why = tgc_tfidf_pool_read(c->node, &p);
    if (why != NULL) return tgc_kernel_fail(c, "%s", why);
    const tgc_value *x = &c->inputs[0];
    int64_t rows = x->rank == 2 ? x->dims[0] : 1, width = x->rank == 0 ? 1 : x->dims[x->rank - 1];
    int64_t out_numel, scratch;
    size_t scratch_bytes;
    if (!tgc_checked_mul_i64(rows, p.columns, &out_numel) || tgc_value_numel(&c->outputs[0]) != out_numel)
        return tgc_kernel_fail(c, "output shape mismatch");
    if (!tgc_checked_add_i64(width, p.columns, &scratch) ||
        !tgc_checked_nbytes(scratch, sizeof(int64_t), &scratch_bytes))
        return tgc_kernel_fail(c, "a row of %lld items is too large", (long long)width);
    float *y = tgc_kernel_out_ptr(c, 0);
    int64_t *row = tgc_malloc(scratch_bytes + 1);
    if (row == NULL) return tgc_kernel_fail(c, "no host memory for a row");
    int64_t *counts = row + width;
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t i = 0; i < width; i++)
            row[i] = x->dtype == TGC_INT64 ? ((const int64_t *)tgc_kernel_in_ptr(c, 0))[r * width + i]
                                           : ((const int32_t *)tgc_kernel_in_ptr(c, 0))[r * width + i];
        memset(counts, 0, (size_t)p.columns * sizeof *counts);
        count_row(&p, row, width, counts);
        for (int64_t j = 0; j < p.columns; j++) {
            double w = p.weights != NULL ? p.weights[j] : 1.0;
            double v = p.mode == 1 ? (double)counts[j] : p.mode == 2 ? (counts[j] > 0 ? w : 0.0) : counts[j] * w;
            y[r * p.columns + j] = (float)v;
        }
    }
    tgc_free(row);
    return TGC_OK;
}

const tgc_kernel_def tgc_cpu_kernels_tfidf[] = {
    {.op = "TfIdfVectorizer", .fn = tfidf, .forward_input = -1,
     .dtypes = {TGC_INT32, TGC_INT64, TGC_DTYPE_INVALID}},
    {.op = NULL},
};
