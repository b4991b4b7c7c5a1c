/* TfIdfVectorizer's pool: see tfidf_pool.h. */
#include "graph/tfidf_pool.h"

#include <string.h>

static const tgc_attr *attr_of(const tgc_node *n, const char *name, tgc_attr_type type) {
    const tgc_attr *a = tgc_node_attr(n, name);
    return a != NULL && a->type == type ? a : NULL;
}

const char *tgc_tfidf_pool_read(const tgc_node *n, tgc_tfidf_pool *pool) {
    memset(pool, 0, sizeof *pool);
    if (attr_of(n, "pool_strings", TGC_ATTR_STRINGS) != NULL) return "pool_strings: string inputs are not supported";
    const tgc_attr *a;
    pool->min_gram = (a = attr_of(n, "min_gram_length", TGC_ATTR_INT)) ? a->i : 0;
    pool->max_gram = (a = attr_of(n, "max_gram_length", TGC_ATTR_INT)) ? a->i : 0;
    pool->max_skip = (a = attr_of(n, "max_skip_count", TGC_ATTR_INT)) ? a->i : 0;
    if (pool->min_gram < 1 || pool->max_gram < pool->min_gram || pool->max_skip < 0)
        return "needs 1 <= min_gram_length <= max_gram_length and max_skip_count >= 0";
    const char *mode = (a = attr_of(n, "mode", TGC_ATTR_STRING)) ? a->s : "";
    pool->mode = strcmp(mode, "TF") == 0 ? 1 : strcmp(mode, "IDF") == 0 ? 2 : strcmp(mode, "TFIDF") == 0 ? 3 : 0;
    if (pool->mode == 0) return "attribute 'mode' must be TF, IDF or TFIDF";
    if ((a = attr_of(n, "ngram_counts", TGC_ATTR_INTS)) != NULL) pool->counts = a->ints, pool->n_counts = a->n;
    if ((a = attr_of(n, "ngram_indexes", TGC_ATTR_INTS)) != NULL) pool->indexes = a->ints, pool->n_indexes = a->n;
    if ((a = attr_of(n, "pool_int64s", TGC_ATTR_INTS)) != NULL) pool->items = a->ints, pool->n_items = a->n;
    if ((a = attr_of(n, "weights", TGC_ATTR_FLOATS)) != NULL) pool->weights = a->floats, pool->n_weights = a->n;
    if (pool->n_indexes == 0) return "attribute 'ngram_indexes' is empty";
    /* Count the n-grams the pool holds: each length's items in runs of n. */
    size_t grams = 0;
    for (size_t i = 0; i < pool->n_counts; i++) {
        int64_t start = pool->counts[i];
        int64_t end = i + 1 < pool->n_counts ? pool->counts[i + 1] : (int64_t)pool->n_items;
        if (start < 0 || end < start || end > (int64_t)pool->n_items)
            return "attribute 'ngram_counts' must ascend within pool_int64s";
        if ((end - start) % (int64_t)(i + 1) != 0) return "a length's pool items are not a whole number of n-grams";
        grams += (size_t)((end - start) / (int64_t)(i + 1));
    }
    if (grams != pool->n_indexes) return "attribute 'ngram_indexes' must give one column per n-gram of the pool";
    int64_t max = -1;
    for (size_t i = 0; i < pool->n_indexes; i++) {
        if (pool->indexes[i] < 0 || pool->indexes[i] >= INT32_MAX) return "an ngram_indexes value is out of range";
        if (pool->indexes[i] > max) max = pool->indexes[i];
    }
    pool->columns = max + 1;
    if (pool->weights != NULL && pool->n_weights < (size_t)pool->columns)
        return "attribute 'weights' must give a weight per output column";
    return NULL;
}
