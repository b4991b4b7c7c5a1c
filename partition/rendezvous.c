/* The rendezvous (see rendezvous.h): a hash table from key to one item,
 * either a value sent and not yet received or a receiver waiting for its
 * value, under one mutex. Whichever of send and recv_async comes second
 * takes the item out of the table, lets go of the lock, and delivers:
 * moves the value into the receiver's memory and calls its callback. So a
 * callback never runs under the lock, and a copy between devices never
 * holds up the other executors' sends and receives. */
#include "partition/rendezvous.h"

#include "support/alloc.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

typedef struct item {
    struct item *next; /* hash chain, or the list being delivered */
    uint64_t hash;
    bool sent;         /* true: `value` waits for a receiver; false: a receiver waits */
    tgc_value value;   /* sent: owns one reference to value.buf */
    tgc_device *dst;   /* waiting: where the receiver wants it (NULL: host memory) */
    tgc_recv_callback done;
    void *ctx;
    char key[];
} item;

struct tgc_rendezvous {
    pthread_mutex_t lock;
    item **buckets;
    size_t cap; /* a power of two */
    size_t count;
    int64_t n_sent, n_waiting;
    tgc_status status; /* TGC_OK until aborted */
    char message[512];
};

static uint64_t hash_key(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

const char *tgc_rendezvous_step_prefix(int64_t step_id, char *buf, size_t size) {
    snprintf(buf, size, "step%" PRId64 "/", step_id);
    return buf;
}

bool tgc_rendezvous_key_step(const char *key, int64_t *step_id) {
    *step_id = -1;
    if (strncmp(key, "step", 4) != 0) return false;
    int64_t id = 0;
    const char *p = key + 4;
    if (*p < '0' || *p > '9') return false;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (id > (INT64_MAX - (*p - '0')) / 10) return false;
        id = id * 10 + (*p - '0');
    }
    if (*p != '/') return false;
    *step_id = id;
    return true;
}

tgc_status tgc_rendezvous_create(tgc_rendezvous **out) {
    *out = NULL;
    tgc_rendezvous *r = tgc_calloc(1, sizeof *r);
    if (r == NULL) return TGC_ERR_NOMEM;
    r->cap = 64;
    r->buckets = tgc_calloc(r->cap, sizeof *r->buckets);
    if (r->buckets == NULL) {
        tgc_free(r);
        return TGC_ERR_NOMEM;
    }
    pthread_mutex_init(&r->lock, NULL);
    *out = r;
    return TGC_OK;
}

/* ---- the table (under the lock) ------------------------------------------ */

static item **slot_of(tgc_rendezvous *r, const char *key, uint64_t h) {
    item **p = &r->buckets[h & (r->cap - 1)];
    while (*p != NULL && ((*p)->hash != h || strcmp((*p)->key, key) != 0)) p = &(*p)->next;
    return p;
}

/* Doubles the buckets when the table is fuller than one item a bucket; a
 * failed resize only makes chains longer. */
static void maybe_grow(tgc_rendezvous *r) {
    if (r->count < r->cap) return;
    size_t cap = r->cap * 2;
    item **buckets = tgc_calloc(cap, sizeof *buckets);
    if (buckets == NULL) return;
    for (size_t i = 0; i < r->cap; i++)
        for (item *it = r->buckets[i], *next; it != NULL; it = next) {
            next = it->next;
            it->next = buckets[it->hash & (cap - 1)];
            buckets[it->hash & (cap - 1)] = it;
        }
    tgc_free(r->buckets);
    r->buckets = buckets;
    r->cap = cap;
}

static item *new_item(const char *key, uint64_t h) {
    size_t len = strlen(key);
    item *it = tgc_malloc(sizeof *it + len + 1);
    if (it == NULL) return NULL;
    memset(it, 0, sizeof *it);
    it->hash = h;
    memcpy(it->key, key, len + 1);
    return it;
}

static void take_out(tgc_rendezvous *r, item **slot) {
    item *it = *slot;
    *slot = it->next;
    it->next = NULL;
    r->count--;
    if (it->sent) r->n_sent--;
    else r->n_waiting--;
}

/* ---- moving a value (no lock held) -------------------------------------------- */

/* Gives `sent` (whose buffer reference this takes over) to the receiver
 * waiting in `w` in the memory it asked for, and runs its callback. */
static void deliver(tgc_value sent, const item *w) {
    tgc_value got = sent;
    tgc_status s = TGC_OK;
    tgc_buffer *b = sent.buf;
    if (b != NULL) {
        bool in_place = w->dst == NULL || tgc_device_host_memory(w->dst) ? tgc_device_host_memory(b->device)
                                                                        : b->device == w->dst;
        if (!in_place) {
            s = tgc_buffer_copy(b, tgc_value_nbytes(&sent), w->dst != NULL ? w->dst : tgc_host_device(), &got.buf);
            tgc_buffer_release(b);
        }
    }
    if (s == TGC_OK) w->done(w->ctx, TGC_OK, &got);
    else w->done(w->ctx, s == TGC_ERR_NOMEM ? s : TGC_ERR_RUNTIME, NULL);
}

/* ---- the API ------------------------------------------------------------------------ */

tgc_status tgc_rendezvous_send(tgc_rendezvous *r, const char *key, const tgc_value *v) {
    uint64_t h = hash_key(key);
    pthread_mutex_lock(&r->lock);
    if (r->status != TGC_OK) {
        tgc_status s = r->status;
        pthread_mutex_unlock(&r->lock);
        return s;
    }
    item **slot = slot_of(r, key, h);
    item *it = *slot;
    if (it != NULL && it->sent) {
        pthread_mutex_unlock(&r->lock);
        return TGC_ERR_INVALID;
    }
    if (it != NULL) { /* the receiver came first: deliver on this thread */
        take_out(r, slot);
        pthread_mutex_unlock(&r->lock);
        tgc_value sent = *v;
        tgc_buffer_retain(sent.buf);
        deliver(sent, it);
        tgc_free(it);
        return TGC_OK;
    }
    if ((it = new_item(key, h)) == NULL) {
        pthread_mutex_unlock(&r->lock);
        return TGC_ERR_NOMEM;
    }
    it->sent = true;
    it->value = *v;
    tgc_buffer_retain(it->value.buf);
    *slot = it;
    r->count++;
    r->n_sent++;
    maybe_grow(r);
    pthread_mutex_unlock(&r->lock);
    return TGC_OK;
}

tgc_status tgc_rendezvous_recv_async(tgc_rendezvous *r, const char *key, tgc_device *dst, tgc_recv_callback done,
                                     void *ctx) {
    uint64_t h = hash_key(key);
    pthread_mutex_lock(&r->lock);
    if (r->status != TGC_OK) {
        tgc_status s = r->status;
        pthread_mutex_unlock(&r->lock);
        done(ctx, s, NULL);
        return TGC_OK;
    }
    item **slot = slot_of(r, key, h);
    item *it = *slot;
    if (it != NULL && !it->sent) {
        pthread_mutex_unlock(&r->lock);
        return TGC_ERR_INVALID;
    }
    if (it != NULL) { /* the value is here: deliver on this thread */
        take_out(r, slot);
        pthread_mutex_unlock(&r->lock);
        item w = {.dst = dst, .done = done, .ctx = ctx};
        deliver(it->value, &w);
        tgc_free(it);
        return TGC_OK;
    }
    if ((it = new_item(key, h)) == NULL) {
        pthread_mutex_unlock(&r->lock);
        return TGC_ERR_NOMEM;
    }
    it->dst = dst;
    it->done = done;
    it->ctx = ctx;
    *slot = it;
    r->count++;
    r->n_waiting++;
    maybe_grow(r);
    pthread_mutex_unlock(&r->lock);
    return TGC_OK;
}

/* Takes every item out of the table into one list (under the lock). */
static item *drain(tgc_rendezvous *r) {
    item *all = NULL;
    for (size_t i = 0; i < r->cap; i++) {
        for (item *it = r->buckets[i], *next; it != NULL; it = next) {
            next = it->next;
            it->next = all;
            all = it;
        }
        r->buckets[i] = NULL;
    }
    r->count = 0;
    r->n_sent = r->n_waiting = 0;
    return all;
}

/* Releases the values in `all`, fails its receivers with `status`, and
 * frees the items (no lock held). */
static void fail_all(item *all, tgc_status status) {
    for (item *it = all, *next; it != NULL; it = next) {
        next = it->next;
        if (it->sent) tgc_buffer_release(it->value.buf);
        else it->done(it->ctx, status, NULL);
        tgc_free(it);
    }
}

void tgc_rendezvous_abort(tgc_rendezvous *r, tgc_status status, const char *message) {
    if (status == TGC_OK) status = TGC_ERR_RUNTIME;
    pthread_mutex_lock(&r->lock);
    if (r->status != TGC_OK) {
        pthread_mutex_unlock(&r->lock);
        return;
    }
    r->status = status;
    snprintf(r->message, sizeof r->message, "%s", message ? message : "");
    item *all = drain(r);
    pthread_mutex_unlock(&r->lock);
    fail_all(all, status);
}

tgc_status tgc_rendezvous_status(tgc_rendezvous *r) {
    pthread_mutex_lock(&r->lock);
    tgc_status s = r->status;
    pthread_mutex_unlock(&r->lock);
    return s;
}

const char *tgc_rendezvous_message(tgc_rendezvous *r) {
    pthread_mutex_lock(&r->lock);
    const char *m = r->message; /* written once, by the first abort, under the lock */
    pthread_mutex_unlock(&r->lock);
    return m;
}

void tgc_rendezvous_pending(tgc_rendezvous *r, int64_t *sent, int64_t *waiting) {
    pthread_mutex_lock(&r->lock);
    *sent = r->n_sent;
    *waiting = r->n_waiting;
    pthread_mutex_unlock(&r->lock);
}

void tgc_rendezvous_free(tgc_rendezvous *r) {
    if (r == NULL) return;
    pthread_mutex_lock(&r->lock);
    item *all = drain(r);
    pthread_mutex_unlock(&r->lock);
    fail_all(all, TGC_ERR_RUNTIME);
    pthread_mutex_destroy(&r->lock);
    tgc_free(r->buckets);
    tgc_free(r);
}
