/* The BFC arena (see bfc_allocator.h), after TensorFlow's
 * tensorflow/core/common_runtime/bfc_allocator.cc.
 *
 * Chunks live in one growable array and name each other by index, so the
 * array can move without breaking links. A chunk is in one of three states:
 * unused (a spare slot, on the slot free list), free (in a bin), or in use.
 * The chunks of a region tile it exactly, linked in address order by
 * prev/next; two free neighbours never stay side by side (free merges them).
 *
 * Bins: bin b holds free chunks of [alignment << b, alignment << (b+1))
 * bytes, the last bin everything larger. Each bin is a treap ordered by
 * (size, address), TensorFlow's std::set in a bin; a bitmap says which bins
 * are non-empty. Best fit: the first chunk of size >= request in the
 * request's own bin, else the smallest chunk of the next non-empty bin,
 * which is larger than any chunk of the request's bin. Expected O(log n).
 *
 * "Address" orders chunks of different regions: each region gets a virtual
 * base (the sum of the sizes of the regions made before it), so ties in size
 * go to the lowest address, as in TensorFlow, whatever the handles are. */
#include "devices/bfc_allocator.h"

#include "support/alloc.h"

#include <assert.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#define NBINS 24
#define NONE UINT32_MAX
#define DEFAULT_ALIGNMENT 256
#define DEFAULT_INITIAL_REGION ((size_t)1 << 20)

enum { CHUNK_UNUSED = 0, CHUNK_FREE = 1, CHUNK_IN_USE = 2 };

typedef struct region {
    void *handle;
    size_t size;
    size_t vbase;   /* virtual address of offset 0 (see the top) */
    uint32_t first; /* the chunk at offset 0 */
    struct region *prev, *next;
} region;

typedef struct chunk {
    region *reg;
    size_t offset, size;
    uint32_t prev, next;  /* neighbours in the region, address order */
    uint32_t left, right; /* treap children while free; left links spare slots */
    uint32_t prio;        /* treap priority (a max-heap) */
    uint8_t state;
    uint8_t bin;
} chunk;

struct tgc_bfc {
    pthread_mutex_t lock;
    tgc_bfc_config cfg;
    unsigned align_shift;
    size_t next_region; /* size the next region starts from */
    size_t next_vbase;
    chunk *chunks;
    uint32_t cap, spare, n_spare; /* slot array, spare-slot list head, its length */
    uint32_t bins[NBINS];         /* treap roots */
    uint32_t bitmap;              /* bit b: bins[b] non-empty */
    uint32_t rng;
    region *regions;
    tgc_bfc_stats st; /* fragmentation and free figures are computed on demand */
};

/* --- sizes and bins --- */

static size_t round_up(const tgc_bfc *a, size_t n) {
    size_t m = a->cfg.alignment - 1;
    return (n + m) & ~m;
}

static size_t round_down(const tgc_bfc *a, size_t n) { return n & ~(a->cfg.alignment - 1); }

static unsigned floor_log2(size_t v) {
    unsigned r = 0;
    while (v >>= 1) r++;
    return r;
}

static unsigned bin_of(const tgc_bfc *a, size_t size) {
    unsigned b = floor_log2(size >> a->align_shift);
    return b < NBINS ? b : NBINS - 1;
}

/* --- the treap of one bin, keyed by (size, virtual address) --- */

static size_t vaddr(const chunk *c) { return c->reg->vbase + c->offset; }

static bool key_less(const chunk *x, const chunk *y) {
    return x->size != y->size ? x->size < y->size : vaddr(x) < vaddr(y);
}

static uint32_t rotate_right(chunk *C, uint32_t t) {
    uint32_t l = C[t].left;
    C[t].left = C[l].right;
    C[l].right = t;
    return l;
}

static uint32_t rotate_left(chunk *C, uint32_t t) {
    uint32_t r = C[t].right;
    C[t].right = C[r].left;
    C[r].left = t;
    return r;
}

static uint32_t treap_insert(chunk *C, uint32_t t, uint32_t x) {
    if (t == NONE) return x;
    if (key_less(&C[x], &C[t])) {
        C[t].left = treap_insert(C, C[t].left, x);
        if (C[C[t].left].prio > C[t].prio) t = rotate_right(C, t);
    } else {
        C[t].right = treap_insert(C, C[t].right, x);
        if (C[C[t].right].prio > C[t].prio) t = rotate_left(C, t);
    }
    return t;
}

static uint32_t treap_merge(chunk *C, uint32_t l, uint32_t r) {
    if (l == NONE) return r;
    if (r == NONE) return l;
    if (C[l].prio > C[r].prio) {
        C[l].right = treap_merge(C, C[l].right, r);
        return l;
    }
    C[r].left = treap_merge(C, l, C[r].left);
    return r;
}

static uint32_t treap_remove(chunk *C, uint32_t t, uint32_t x) {
    assert(t != NONE && "a free chunk is missing from its bin");
    if (t == x) return treap_merge(C, C[t].left, C[t].right);
    if (key_less(&C[x], &C[t])) C[t].left = treap_remove(C, C[t].left, x);
    else C[t].right = treap_remove(C, C[t].right, x);
    return t;
}

/* The first chunk of the treap with size >= want, or NONE. */
static uint32_t treap_lower_bound(const chunk *C, uint32_t t, size_t want) {
    uint32_t best = NONE;
    while (t != NONE) {
        if (C[t].size >= want) {
            best = t;
            t = C[t].left;
        } else {
            t = C[t].right;
        }
    }
    return best;
}

static uint32_t treap_max(const chunk *C, uint32_t t) {
    while (t != NONE && C[t].right != NONE) t = C[t].right;
    return t;
}

static uint32_t next_prio(tgc_bfc *a) {
    a->rng ^= a->rng << 13;
    a->rng ^= a->rng >> 17;
    a->rng ^= a->rng << 5;
    return a->rng;
}

static void bin_insert(tgc_bfc *a, uint32_t x) {
    chunk *c = &a->chunks[x];
    c->state = CHUNK_FREE;
    c->left = c->right = NONE;
    c->prio = next_prio(a);
    c->bin = (uint8_t)bin_of(a, c->size);
    a->bins[c->bin] = treap_insert(a->chunks, a->bins[c->bin], x);
    a->bitmap |= 1u << c->bin;
}

static void bin_remove(tgc_bfc *a, uint32_t x) {
    unsigned b = a->chunks[x].bin;
    a->bins[b] = treap_remove(a->chunks, a->bins[b], x);
    if (a->bins[b] == NONE) a->bitmap &= ~(1u << b);
}

/* Best fit: the smallest free chunk of at least `want` bytes (lowest
 * address among equals), or NONE. */
static uint32_t find_best(const tgc_bfc *a, size_t want) {
    unsigned b = bin_of(a, want);
    uint32_t x = treap_lower_bound(a->chunks, a->bins[b], want);
    if (x != NONE) return x;
    for (unsigned k = b + 1; k < NBINS; k++)
        if (a->bitmap & (1u << k)) return treap_lower_bound(a->chunks, a->bins[k], 0);
    return NONE;
}

/* --- chunk slots --- */

/* Makes sure `need` spare slots exist, so an operation that has started
 * never runs out of them half way. false when host memory is short. */
static bool reserve_slots(tgc_bfc *a, uint32_t need) {
    if (a->n_spare >= need) return true;
    uint32_t cap = a->cap ? a->cap * 2 : 64;
    if (cap <= a->cap || cap >= NONE) return false;
    chunk *c = tgc_realloc(a->chunks, (size_t)cap * sizeof *c);
    if (c == NULL) return false;
    a->chunks = c;
    for (uint32_t i = cap; i-- > a->cap;) {
        memset(&c[i], 0, sizeof c[i]);
        c[i].state = CHUNK_UNUSED;
        c[i].left = a->spare;
        a->spare = i;
    }
    a->n_spare += cap - a->cap;
    a->cap = cap;
    return true;
}

static uint32_t take_slot(tgc_bfc *a) {
    assert(a->n_spare > 0);
    uint32_t x = a->spare;
    a->spare = a->chunks[x].left;
    a->n_spare--;
    return x;
}

static void give_slot(tgc_bfc *a, uint32_t x) {
    a->chunks[x].state = CHUNK_UNUSED;
    a->chunks[x].reg = NULL;
    a->chunks[x].left = a->spare;
    a->spare = x;
    a->n_spare++;
}

/* Cuts chunk x (not in a bin) to `size` bytes; the rest becomes a free
 * chunk right after it. */
static void split(tgc_bfc *a, uint32_t x, size_t size) {
    uint32_t y = take_slot(a);
    chunk *C = a->chunks;
    C[y].reg = C[x].reg;
    C[y].offset = C[x].offset + size;
    C[y].size = C[x].size - size;
    C[y].prev = x;
    C[y].next = C[x].next;
    if (C[y].next != NONE) C[C[y].next].prev = y;
    C[x].next = y;
    C[x].size = size;
    bin_insert(a, y);
}

/* Absorbs y, the chunk right after x, into x; y's slot becomes spare. */
static void absorb(tgc_bfc *a, uint32_t x, uint32_t y) {
    chunk *C = a->chunks;
    assert(C[x].next == y && C[y].prev == x);
    C[x].size += C[y].size;
    C[x].next = C[y].next;
    if (C[x].next != NONE) C[C[x].next].prev = x;
    give_slot(a, y);
}

/* --- regions --- */

static void release_region(tgc_bfc *a, region *r) {
    if (r->prev != NULL) r->prev->next = r->next;
    else a->regions = r->next;
    if (r->next != NULL) r->next->prev = r->prev;
    a->st.bytes_reserved -= (int64_t)r->size;
    a->st.num_regions--;
    a->cfg.region_release(a->cfg.ctx, r->handle, r->size);
    tgc_free(r);
}

/* Releases every region whose one chunk is free. */
static int64_t shrink_locked(tgc_bfc *a) {
    int64_t released = 0;
    region *next;
    for (region *r = a->regions; r != NULL; r = next) {
        next = r->next;
        chunk *c = &a->chunks[r->first];
        if (c->state != CHUNK_FREE || c->size != r->size) continue;
        bin_remove(a, r->first);
        give_slot(a, r->first);
        released += (int64_t)r->size;
        release_region(a, r);
    }
    if (a->regions == NULL) a->next_region = a->cfg.initial_region_bytes;
    return released;
}

/* The size of the region to make for a request of `want` rounded bytes:
 * the growth size, capped, then clamped to what the limit leaves; 0 when
 * the limit leaves less than `want`. */
static size_t region_size(const tgc_bfc *a, size_t want) {
    size_t size = a->next_region > want ? a->next_region : want;
    if (a->cfg.max_region_bytes != 0 && size > a->cfg.max_region_bytes)
        size = a->cfg.max_region_bytes > want ? a->cfg.max_region_bytes : want;
    if (a->cfg.bytes_limit > 0) {
        int64_t left = a->cfg.bytes_limit - a->st.bytes_reserved;
        if (left < 0 || (uint64_t)left < want) return 0;
        if ((uint64_t)left < size) size = round_down(a, (size_t)left);
    }
    return size;
}

/* Adds a region able to hold `want` rounded bytes. When the limit or the
 * region callback refuses, backs off to smaller sizes (down to `want`),
 * then gives back fully free regions and tries once more, as TensorFlow's
 * Extend does. false when nothing works; the arena is unchanged then
 * (apart from released free regions). Needs one spare slot. */
static bool extend(tgc_bfc *a, size_t want) {
    region *r = tgc_malloc(sizeof *r);
    if (r == NULL) return false;
    for (int attempt = 0; attempt < 2; attempt++) {
        if (attempt == 1 && shrink_locked(a) == 0) break;
        size_t size = region_size(a, want);
        while (size != 0) {
            void *h = a->cfg.region_alloc(a->cfg.ctx, size);
            if (h != NULL) {
                r->handle = h;
                r->size = size;
                r->vbase = a->next_vbase;
                a->next_vbase += size;
                r->prev = NULL;
                r->next = a->regions;
                if (a->regions != NULL) a->regions->prev = r;
                a->regions = r;
                uint32_t x = take_slot(a);
                chunk *c = &a->chunks[x];
                c->reg = r;
                c->offset = 0;
                c->size = size;
                c->prev = c->next = NONE;
                r->first = x;
                bin_insert(a, x);
                a->st.bytes_reserved += (int64_t)size;
                if (a->st.bytes_reserved > a->st.peak_bytes_reserved) a->st.peak_bytes_reserved = a->st.bytes_reserved;
                a->st.num_regions++;
                a->next_region = size <= SIZE_MAX / 2 ? 2 * size : size;
                return true;
            }
            if (size == want) break;
            size = round_down(a, size / 2);
            if (size < want) size = want;
        }
    }
    tgc_free(r);
    return false;
}

/* --- the public functions --- */

tgc_bfc *tgc_bfc_create(const tgc_bfc_config *cfg) {
    size_t align = cfg->alignment ? cfg->alignment : DEFAULT_ALIGNMENT;
    if ((align & (align - 1)) != 0 || cfg->region_alloc == NULL || cfg->region_release == NULL) return NULL;
    tgc_bfc *a = tgc_calloc(1, sizeof *a);
    if (a == NULL) return NULL;
    a->cfg = *cfg;
    a->cfg.alignment = align;
    a->align_shift = floor_log2(align);
    size_t initial = cfg->initial_region_bytes ? cfg->initial_region_bytes : DEFAULT_INITIAL_REGION;
    if (initial > SIZE_MAX - align) initial = DEFAULT_INITIAL_REGION;
    a->cfg.initial_region_bytes = round_up(a, initial);
    if (a->cfg.max_region_bytes != 0) a->cfg.max_region_bytes = round_up(a, a->cfg.max_region_bytes);
    if (a->cfg.min_split_bytes < align) a->cfg.min_split_bytes = align;
    if (a->cfg.bytes_limit < 0) a->cfg.bytes_limit = 0;
    a->next_region = a->cfg.initial_region_bytes;
    a->spare = NONE;
    for (int b = 0; b < NBINS; b++) a->bins[b] = NONE;
    a->rng = 0x9E3779B9u;
    a->st.bytes_limit = a->cfg.bytes_limit;
    pthread_mutex_init(&a->lock, NULL);
    return a;
}

void tgc_bfc_destroy(tgc_bfc *a) {
    if (a == NULL) return;
    assert(a->st.live_allocs == 0 && "an allocation outlived its arena");
    while (a->regions != NULL) release_region(a, a->regions);
    pthread_mutex_destroy(&a->lock);
    tgc_free(a->chunks);
    tgc_free(a);
}

tgc_status tgc_bfc_alloc(tgc_bfc *a, size_t nbytes, tgc_bfc_block *out) {
    assert(nbytes > 0);
    memset(out, 0, sizeof *out);
    out->chunk = NONE;
    if (nbytes > SIZE_MAX / 2) return TGC_ERR_NOMEM;
    size_t want = round_up(a, nbytes);
    pthread_mutex_lock(&a->lock);
    tgc_status s = TGC_ERR_NOMEM;
    /* Two spare slots: one for a new region's chunk, one for a split. */
    if (!reserve_slots(a, 2)) goto done;
    uint32_t x = find_best(a, want);
    if (x == NONE) {
        if (!extend(a, want)) goto done;
        x = find_best(a, want);
        assert(x != NONE);
    }
    bin_remove(a, x);
    chunk *c = &a->chunks[x];
    if (c->size - want >= a->cfg.min_split_bytes) split(a, x, want);
    c = &a->chunks[x];
    c->state = CHUNK_IN_USE;
    tgc_bfc_stats *st = &a->st;
    st->num_allocs++;
    st->live_allocs++;
    st->bytes_in_use += (int64_t)c->size;
    if (st->bytes_in_use > st->peak_bytes_in_use) st->peak_bytes_in_use = st->bytes_in_use;
    if ((int64_t)c->size > st->largest_alloc_size) st->largest_alloc_size = (int64_t)c->size;
    out->region = c->reg->handle;
    out->offset = c->offset;
    out->size = c->size;
    out->chunk = x;
    s = TGC_OK;
done:
    pthread_mutex_unlock(&a->lock);
    return s;
}

void tgc_bfc_free(tgc_bfc *a, uint32_t x) {
    pthread_mutex_lock(&a->lock);
    assert(x < a->cap && a->chunks[x].state == CHUNK_IN_USE && "freeing a chunk that is not in use");
    chunk *C = a->chunks;
    a->st.num_frees++;
    a->st.live_allocs--;
    a->st.bytes_in_use -= (int64_t)C[x].size;
    uint32_t n = C[x].next;
    if (n != NONE && C[n].state == CHUNK_FREE) {
        bin_remove(a, n);
        absorb(a, x, n);
    }
    uint32_t p = C[x].prev;
    if (p != NONE && C[p].state == CHUNK_FREE) {
        bin_remove(a, p);
        absorb(a, p, x);
        x = p;
    }
    bin_insert(a, x);
    pthread_mutex_unlock(&a->lock);
}

int64_t tgc_bfc_shrink(tgc_bfc *a) {
    pthread_mutex_lock(&a->lock);
    int64_t released = shrink_locked(a);
    pthread_mutex_unlock(&a->lock);
    return released;
}

void tgc_bfc_set_limit(tgc_bfc *a, int64_t bytes_limit) {
    pthread_mutex_lock(&a->lock);
    a->cfg.bytes_limit = bytes_limit > 0 ? bytes_limit : 0;
    a->st.bytes_limit = a->cfg.bytes_limit;
    pthread_mutex_unlock(&a->lock);
}

tgc_bfc_stats tgc_bfc_get_stats(tgc_bfc *a) {
    pthread_mutex_lock(&a->lock);
    tgc_bfc_stats s = a->st;
    s.free_bytes = s.bytes_reserved - s.bytes_in_use;
    s.largest_free_chunk = 0;
    for (int b = NBINS - 1; b >= 0; b--) {
        if (a->bitmap & (1u << b)) {
            s.largest_free_chunk = (int64_t)a->chunks[treap_max(a->chunks, a->bins[b])].size;
            break;
        }
    }
    pthread_mutex_unlock(&a->lock);
    s.fragmentation = s.free_bytes > 0 ? 1.0 - (double)s.largest_free_chunk / (double)s.free_bytes : 0.0;
    return s;
}

/* --- the invariant check, for tests --- */

/* Checks treap t of bin b: order, heap property, bin, state; counts nodes
 * into *count. Keys must lie strictly between lo and hi (NONE: unbounded). */
static bool check_treap(const tgc_bfc *a, uint32_t t, unsigned b, uint32_t lo, uint32_t hi, int64_t *count,
                        int depth) {
    if (t == NONE) return true;
    const chunk *C = a->chunks;
    if (t >= a->cap || depth > 200 || C[t].state != CHUNK_FREE || C[t].bin != b || bin_of(a, C[t].size) != b)
        return false;
    if (lo != NONE && !key_less(&C[lo], &C[t])) return false;
    if (hi != NONE && !key_less(&C[t], &C[hi])) return false;
    if (C[t].left != NONE && C[C[t].left].prio > C[t].prio) return false;
    if (C[t].right != NONE && C[C[t].right].prio > C[t].prio) return false;
    (*count)++;
    return check_treap(a, C[t].left, b, lo, t, count, depth + 1) &&
           check_treap(a, C[t].right, b, t, hi, count, depth + 1);
}

int tgc_bfc_check(tgc_bfc *a) {
    pthread_mutex_lock(&a->lock);
    bool ok = true;
    const chunk *C = a->chunks;
    int64_t in_use = 0, live = 0, n_free = 0, reserved = 0, regions = 0, used_slots = 0;
    for (const region *r = a->regions; ok && r != NULL; r = r->next) {
        regions++;
        reserved += (int64_t)r->size;
        size_t at = 0;
        uint32_t prev = NONE;
        for (uint32_t x = r->first; ok && x != NONE; x = C[x].next) {
            used_slots++;
            const chunk *c = &C[x];
            ok = c->reg == r && c->offset == at && c->prev == prev && c->size > 0 && c->state != CHUNK_UNUSED &&
                 (c->offset & (a->cfg.alignment - 1)) == 0 && (c->size & (a->cfg.alignment - 1)) == 0;
            if (ok && c->state == CHUNK_FREE) {
                n_free++;
                ok = prev == NONE || C[prev].state != CHUNK_FREE; /* coalesced */
            }
            if (c->state == CHUNK_IN_USE) {
                live++;
                in_use += (int64_t)c->size;
            }
            at += c->size;
            prev = x;
        }
        ok = ok && at == r->size;
    }
    int64_t in_bins = 0;
    for (unsigned b = 0; ok && b < NBINS; b++) {
        ok = ((a->bitmap >> b) & 1u) == (a->bins[b] != NONE);
        ok = ok && check_treap(a, a->bins[b], b, NONE, NONE, &in_bins, 0);
    }
    ok = ok && in_bins == n_free && in_use == a->st.bytes_in_use && live == a->st.live_allocs &&
         reserved == a->st.bytes_reserved && regions == a->st.num_regions &&
         used_slots + a->n_spare == (int64_t)a->cap;
    pthread_mutex_unlock(&a->lock);
    return ok ? 1 : 0;
}
