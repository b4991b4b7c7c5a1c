/* The environment, read in one place (support/settings.h).
 *
 * Each snapshot is one malloc'd block: the tgc_settings, then the text its
 * TEXT fields point to. The blocks stay in a list until the process exits
 * (a session may hold any of them), and a read that finds an equal one in
 * the list returns it instead of keeping a copy. Plain malloc, not
 * tgc_malloc: support/alloc.c asks for its setting at its first
 * allocation, and the snapshots live as long as the process, which the
 * counted allocator would report as a leak. */
#include "support/settings.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct snapshot {
    tgc_settings s;
    struct snapshot *older; /* the list of every snapshot made, newest first */
    char text[];
} snapshot;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* guards `all`; one read at a time */
static snapshot *all;
static _Atomic(const tgc_settings *) newest; /* NULL: nothing read yet */

static const tgc_settings defaults = {
#define TGC_SETTING(NAME, field, KIND, DEFAULT, LO, HI) .field = DEFAULT,
#include "support/settings.def"
#undef TGC_SETTING
};

enum {
#define TGC_SETTING(NAME, field, KIND, DEFAULT, LO, HI) ROW_##NAME,
#include "support/settings.def"
#undef TGC_SETTING
    N_ROWS
};

static const char *const names[N_ROWS] = {
#define TGC_SETTING(NAME, field, KIND, DEFAULT, LO, HI) #NAME,
#include "support/settings.def"
#undef TGC_SETTING
};

/* The kinds' parsing rules (settings.def says them). */

static int read_switch(const char *v, int dflt) {
    if (v == NULL || v[0] == '\0') return dflt;
    return strcmp(v, "0") != 0;
}

static int64_t read_int(const char *v, int64_t dflt, int64_t lo, int64_t hi) {
    if (v == NULL || v[0] == '\0') return dflt;
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    return errno == 0 && *end == '\0' && n >= lo && n <= hi ? (int64_t)n : dflt;
}

/* v copied to *text, which moves past it; NULL for unset or empty. */
static const char *read_text(const char *v, char **text) {
    if (v == NULL || v[0] == '\0') return NULL;
    char *copy = *text;
    size_t n = strlen(v) + 1;
    memcpy(copy, v, n);
    *text += n;
    return copy;
}

#define READ_SWITCH(field, v, DEFAULT, LO, HI) n->s.field = read_switch(v, DEFAULT)
#define READ_INT(field, v, DEFAULT, LO, HI) n->s.field = read_int(v, DEFAULT, LO, HI)
#define READ_TEXT(field, v, DEFAULT, LO, HI) n->s.field = read_text(v, &text)

/* A new block holding the environment now; NULL when memory is short. */
static snapshot *snapshot_make(void) {
    const char *raw[N_ROWS];
    size_t text_bytes = 0; /* room for every value (only TEXT rows use theirs) */
    for (int i = 0; i < N_ROWS; i++) {
        raw[i] = getenv(names[i]);
        if (raw[i] != NULL) text_bytes += strlen(raw[i]) + 1;
    }
    snapshot *n = malloc(sizeof *n + text_bytes);
    if (n == NULL) return NULL;
    n->older = NULL;
    char *text = n->text;
#define TGC_SETTING(NAME, field, KIND, DEFAULT, LO, HI) READ_##KIND(field, raw[ROW_##NAME], DEFAULT, LO, HI);
#include "support/settings.def"
#undef TGC_SETTING
    return n;
}

static bool same_text(const char *a, const char *b) { return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0; }

#define SAME_SWITCH(field) (a->field == b->field)
#define SAME_INT(field) (a->field == b->field)
#define SAME_TEXT(field) same_text(a->field, b->field)

static bool same(const tgc_settings *a, const tgc_settings *b) {
    return true
#define TGC_SETTING(NAME, field, KIND, DEFAULT, LO, HI) && SAME_##KIND(field)
#include "support/settings.def"
#undef TGC_SETTING
        ;
}

const tgc_settings *tgc_settings_read(void) {
    pthread_mutex_lock(&lock);
    snapshot *n = snapshot_make();
    const tgc_settings *out = atomic_load_explicit(&newest, memory_order_relaxed);
    if (n == NULL) {
        if (out == NULL) out = &defaults;
    } else {
        snapshot *seen = all;
        while (seen != NULL && !same(&seen->s, &n->s)) seen = seen->older;
        if (seen != NULL) {
            free(n);
            out = &seen->s;
        } else {
            n->older = all;
            all = n;
            out = &n->s;
        }
    }
    atomic_store_explicit(&newest, out, memory_order_release);
    pthread_mutex_unlock(&lock);
    return out;
}

const tgc_settings *tgc_settings_current(void) {
    const tgc_settings *s = atomic_load_explicit(&newest, memory_order_acquire);
    return s != NULL ? s : tgc_settings_read();
}
