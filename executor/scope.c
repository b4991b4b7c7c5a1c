/* Scopes of tensor handles (tf.tidy, dispose scopes, Objective-C's
 * autorelease pools): every handle born while a scope is open on the
 * calling thread is linked into the innermost one, and the scope's end
 * drops the reference it holds of every handle still linked.
 *
 * Each thread has its own stack of scopes: a _Thread_local pointer to the
 * innermost, each scope pointing to the one it encloses. A handle may still
 * be released, kept or moved out from any thread, so the links (an
 * intrusive doubly linked list through the handles: linking never
 * allocates, unlinking is O(1)) are guarded by one process-wide mutex. The
 * mutex is taken only for handles that are, or were just, in a scope: a
 * handle enters a scope only when it is born, so a handle whose scope
 * pointer reads NULL stays out of every scope, and releasing it reads one
 * atomic pointer. */
#include "executor/scope.h"

#include "support/alloc.h"

#include <pthread.h>
#include <stdbool.h>

struct tgc_scope {
    struct tgc_scope *parent; /* the scope it is nested in, on the same thread; NULL: none */
    tgc_tensor *head;         /* the handles it holds, newest first */
    int64_t count;
};
typedef struct tgc_scope tgc_scope;

static pthread_mutex_t scope_lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local tgc_scope *innermost;
static _Thread_local int depth;

/* A thread-specific key whose destructor ends the scopes a thread leaves
 * open when it exits (its value is the innermost scope, NULL: none). */
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t exit_key;
static bool have_exit_key;

static void link_into(tgc_scope *s, tgc_tensor *t) {
    t->scope_prev = NULL;
    t->scope_next = s->head;
    if (s->head != NULL) s->head->scope_prev = t;
    s->head = t;
    s->count++;
    atomic_store_explicit(&t->scope, s, memory_order_release);
}

/* Takes `t` out of its scope; returns that scope, or NULL when none held it. */
static tgc_scope *unlink_from(tgc_tensor *t) {
    tgc_scope *s = atomic_load_explicit(&t->scope, memory_order_relaxed);
    if (s == NULL) return NULL;
    if (t->scope_prev != NULL) t->scope_prev->scope_next = t->scope_next;
    else s->head = t->scope_next;
    if (t->scope_next != NULL) t->scope_next->scope_prev = t->scope_prev;
    t->scope_prev = t->scope_next = NULL;
    s->count--;
    atomic_store_explicit(&t->scope, NULL, memory_order_release);
    return s;
}

static bool in_a_scope(const tgc_tensor *t) {
    return atomic_load_explicit(&((tgc_tensor *)t)->scope, memory_order_acquire) != NULL;
}

void tgc_scope_adopt(tgc_tensor *t) {
    atomic_init(&t->scope, NULL);
    t->scope_prev = t->scope_next = NULL;
    tgc_scope *s = innermost;
    if (s == NULL) return;
    pthread_mutex_lock(&scope_lock);
    link_into(s, t);
    pthread_mutex_unlock(&scope_lock);
}

void tgc_scope_forget(tgc_tensor *t) {
    if (!in_a_scope(t)) return;
    pthread_mutex_lock(&scope_lock);
    unlink_from(t);
    pthread_mutex_unlock(&scope_lock);
}

/* Detaches every handle of `s` under the lock, then drops their
 * references outside it (a release may free a buffer and take its
 * device's lock), then frees `s`. Returns how many it released. */
static int64_t end_scope(tgc_scope *s) {
    pthread_mutex_lock(&scope_lock);
    tgc_tensor *list = s->head;
    for (tgc_tensor *t = list; t != NULL; t = t->scope_next)
        atomic_store_explicit(&t->scope, NULL, memory_order_release);
    s->head = NULL;
    s->count = 0;
    pthread_mutex_unlock(&scope_lock);
    /* Out of every scope now: no other thread follows these links. */
    int64_t n = 0;
    while (list != NULL) {
        tgc_tensor *next = list->scope_next;
        list->scope_prev = list->scope_next = NULL;
        tgc_tensor_release(list);
        list = next;
        n++;
    }
    tgc_free(s);
    return n;
}

static void end_at_exit(void *value) {
    for (tgc_scope *s = value; s != NULL;) {
        tgc_scope *parent = s->parent;
        end_scope(s);
        s = parent;
    }
    innermost = NULL;
    depth = 0;
}

static void make_exit_key(void) { have_exit_key = pthread_key_create(&exit_key, end_at_exit) == 0; }

static void set_innermost(tgc_scope *s, int d) {
    innermost = s;
    depth = d;
    if (have_exit_key) pthread_setspecific(exit_key, s); /* on failure: no cleanup at exit, nothing worse */
}

tgc_status tgc_scope_begin(void) {
    pthread_once(&key_once, make_exit_key);
    tgc_scope *s = tgc_calloc(1, sizeof *s);
    if (s == NULL) return TGC_ERR_NOMEM;
    s->parent = innermost;
    set_innermost(s, depth + 1);
    return TGC_OK;
}

int64_t tgc_scope_end(void) {
    tgc_scope *s = innermost;
    if (s == NULL) return 0;
    set_innermost(s->parent, depth - 1);
    return end_scope(s);
}

tgc_tensor *tgc_keep(tgc_tensor *t) {
    if (t != NULL && in_a_scope(t)) {
        pthread_mutex_lock(&scope_lock);
        unlink_from(t);
        pthread_mutex_unlock(&scope_lock);
    }
    return t;
}

tgc_tensor *tgc_scope_move_out(tgc_tensor *t) {
    if (t != NULL && in_a_scope(t)) {
        pthread_mutex_lock(&scope_lock);
        tgc_scope *s = unlink_from(t);
        if (s != NULL && s->parent != NULL) link_into(s->parent, t);
        pthread_mutex_unlock(&scope_lock);
    }
    return t;
}

void tgc_scope_figures(int *open_scopes, int64_t *held) {
    int64_t n = 0;
    pthread_mutex_lock(&scope_lock);
    for (tgc_scope *s = innermost; s != NULL; s = s->parent) n += s->count;
    pthread_mutex_unlock(&scope_lock);
    *open_scopes = depth;
    *held = n;
}
