/* TfIdfVectorizer's n-gram pool (ONNX opset 9), read from the node's
 * attributes and checked once, shared by shape inference (the output width)
 * and the cpu kernel (the n-grams themselves).
 *
 * The pool lists n-grams of every length back to back: ngram_counts[i] is
 * where the (i+1)-grams start in pool_int64s, so the (i+1)-grams are
 * pool[ngram_counts[i] .. ngram_counts[i+1]) cut into runs of i+1 items.
 * Numbering every n-gram in that order (lengths outside [min_gram_length,
 * max_gram_length] included), ngram_indexes[k] is the output column of
 * n-gram k; the output has max(ngram_indexes) + 1 columns.
 *
 * Example usage:
 *     tgc_tfidf_pool pool;
 *     const char *why = tgc_tfidf_pool_read(node, &pool);
 *     if (why != NULL) ... report why ...
 *     int64_t columns = pool.columns;
 */
#ifndef TGC_GRAPH_TFIDF_POOL_H
#define TGC_GRAPH_TFIDF_POOL_H

#include "graph/graph.h"

#include <stdint.h>

typedef struct tgc_tfidf_pool {
    int64_t min_gram, max_gram, max_skip;
    int mode; /* 1 TF, 2 IDF, 3 TFIDF */
    const int64_t *counts, *indexes, *items; /* borrowed from the node's attributes */
    size_t n_counts, n_indexes, n_items;
    const double *weights; /* NULL: every weight 1 */
    size_t n_weights;
    int64_t columns; /* max(ngram_indexes) + 1 */
} tgc_tfidf_pool;

/* Reads and checks the pool of TfIdfVectorizer node n into *pool (pointers
 * borrowed from n). Returns NULL, or a static description of what is wrong
 * (pool_strings: strings are not supported; counts not ascending inside the
 * pool; an index count that differs from the n-grams in the pool; a
 * negative index; weights fewer than the columns; a bad mode or lengths). */
const char *tgc_tfidf_pool_read(const tgc_node *n, tgc_tfidf_pool *pool);

#endif
