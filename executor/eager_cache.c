/* The kernel cache of an eager context: a hash table of entries by key
 * under the context's mutex, as TensorFlow eager's kernel cache keeps an
 * instantiated kernel per fingerprint of (op, attributes, dtypes, device).
 * Entries live as long as the context; past TGC_EAGER_CACHE_MAX of them,
 * calls resolve their key every time instead of growing the table. */
#include "executor/eager.h"

#include "support/alloc.h"

#include <string.h>

static bool same_key(const tgc_eager_entry *e, const tgc_eager_key *k, uint64_t hash) {
    return e->hash == hash && e->key_len == k->len && memcmp(e->key, k->bytes, k->len) == 0;
}

/* The calling thread's last entry, and the context it belongs to (by id:
 * entries live as long as their context, and ids are never reused). */
static _Thread_local struct {
    uint64_t context;
    tgc_eager_entry *entry;
} last;

tgc_eager_entry *tgc_eager_cache_lookup(tgc_eager *e, const tgc_eager_key *k, uint64_t hash) {
    if (last.context == e->id && last.entry != NULL && same_key(last.entry, k, hash)) {
        atomic_fetch_add_explicit(&e->hits, 1, memory_order_relaxed);
        return last.entry;
    }
    tgc_eager_entry *found = NULL;
    pthread_mutex_lock(&e->lock);
    if (e->n_buckets > 0)
        for (tgc_eager_entry *x = e->buckets[hash & (e->n_buckets - 1)]; x != NULL && found == NULL; x = x->next)
            if (same_key(x, k, hash)) found = x;
    pthread_mutex_unlock(&e->lock);
    atomic_fetch_add_explicit(found != NULL ? &e->hits : &e->misses, 1, memory_order_relaxed);
    if (found != NULL) {
        last.context = e->id;
        last.entry = found;
    }
    return found;
}

/* Doubles the table (a power of two) when it is 3/4 full. */
static bool grow(tgc_eager *e) {
    if (e->n_entries + 1 <= e->n_buckets / 4 * 3) return true;
    size_t n = e->n_buckets ? e->n_buckets * 2 : 64;
    tgc_eager_entry **b = tgc_calloc(n, sizeof *b);
    if (b == NULL) return false;
    for (size_t i = 0; i < e->n_buckets; i++)
        for (tgc_eager_entry *x = e->buckets[i], *next; x != NULL; x = next) {
            next = x->next;
            x->next = b[x->hash & (n - 1)];
            b[x->hash & (n - 1)] = x;
        }
    tgc_free(e->buckets);
    e->buckets = b;
    e->n_buckets = n;
    return true;
}

bool tgc_eager_cache_insert(tgc_eager *e, tgc_eager_entry *entry, const tgc_eager_key *k, uint64_t hash) {
    unsigned char *key = tgc_malloc(k->len + 1);
    if (key == NULL) return false;
    memcpy(key, k->bytes, k->len);
    bool inserted = false;
    pthread_mutex_lock(&e->lock);
    bool present = false;
    for (tgc_eager_entry *x = e->n_buckets ? e->buckets[hash & (e->n_buckets - 1)] : NULL; x && !present; x = x->next)
        present = same_key(x, k, hash);
    if (!present && e->n_entries < TGC_EAGER_CACHE_MAX && grow(e)) {
        entry->key = key;
        entry->key_len = k->len;
        entry->hash = hash;
        entry->next = e->buckets[hash & (e->n_buckets - 1)];
        e->buckets[hash & (e->n_buckets - 1)] = entry;
        e->n_entries++;
        inserted = true;
        last.context = e->id;
        last.entry = entry;
    }
    pthread_mutex_unlock(&e->lock);
    if (!inserted) tgc_free(key);
    return inserted;
}

void tgc_eager_entry_free(tgc_eager_entry *entry) {
    if (entry == NULL) return;
    tgc_eager_node_release(&entry->node);
    tgc_free(entry->outs);
    tgc_free(entry->key);
    tgc_free(entry);
}

void tgc_eager_cache_clear(tgc_eager *e) {
    for (size_t i = 0; i < e->n_buckets; i++)
        for (tgc_eager_entry *x = e->buckets[i], *next; x != NULL; x = next) {
            next = x->next;
            tgc_eager_entry_free(x);
        }
    tgc_free(e->buckets);
    e->buckets = NULL;
    e->n_buckets = e->n_entries = 0;
}
