/* Einsum equations: see einsum.h. */
#include "graph/einsum.h"

#include <stdio.h>
#include <string.h>

#define EQ_MAX 512

static int letter_id(char ch) {
    if (ch >= 'A' && ch <= 'Z') return ch - 'A';
    if (ch >= 'a' && ch <= 'z') return 26 + (ch - 'a');
    return -1;
}

/* One term: its letters' ids in order and where '...' stands (-1: none). */
typedef struct term {
    int n_letters, ids[TGC_EINSUM_MAX_LABELS], ellipsis_at;
} term;

/* Reads s[0..len) as a term. */
static bool read_term(const char *s, size_t len, term *t, char *err, size_t err_size) {
    t->n_letters = 0;
    t->ellipsis_at = -1;
    for (size_t i = 0; i < len;) {
        if (s[i] == '.') {
            if (i + 3 > len || s[i + 1] != '.' || s[i + 2] != '.' || t->ellipsis_at >= 0) {
                snprintf(err, err_size, "a '.' that is not one '...' in the term '%.*s'", (int)len, s);
                return false;
            }
            t->ellipsis_at = t->n_letters;
            i += 3;
            continue;
        }
        int id = letter_id(s[i]);
        if (id < 0) {
            snprintf(err, err_size, "character '%c' is not a letter, ',', '->' or '...'", s[i]);
            return false;
        }
        if (t->n_letters == TGC_EINSUM_MAX_LABELS) {
            snprintf(err, err_size, "the term '%.*s' is too long", (int)len, s);
            return false;
        }
        t->ids[t->n_letters++] = id;
        i++;
    }
    return true;
}

bool tgc_einsum_parse(const char *equation, int n_inputs, const int *ranks, tgc_einsum *e, char *err,
                      size_t err_size) {
    memset(e, 0, sizeof *e);
    char eq[EQ_MAX];
    size_t n = 0;
    for (const char *p = equation; *p; p++) {
        if (*p == ' ') continue;
        if (n + 1 >= sizeof eq) {
            snprintf(err, err_size, "the equation is longer than %d characters", EQ_MAX - 1);
            return false;
        }
        eq[n++] = *p;
    }
    eq[n] = '\0';
    if (n_inputs < 1 || n_inputs > TGC_EINSUM_MAX_INPUTS) {
        snprintf(err, err_size, "%d inputs; tgc's Einsum takes 1 to %d", n_inputs, TGC_EINSUM_MAX_INPUTS);
        return false;
    }
    char *arrow = strstr(eq, "->");
    size_t lhs_len = arrow ? (size_t)(arrow - eq) : n;
    if (arrow && strstr(arrow + 2, "->")) {
        snprintf(err, err_size, "'->' appears twice");
        return false;
    }
    /* The inputs' terms. */
    term terms[TGC_EINSUM_MAX_INPUTS];
    int ell_rank[TGC_EINSUM_MAX_INPUTS], count[TGC_EINSUM_MAX_LABELS] = {0};
    size_t start = 0;
    int k = 0;
    for (size_t i = 0; i <= lhs_len; i++) {
        if (i < lhs_len && eq[i] != ',') continue;
        if (k == n_inputs) {
            snprintf(err, err_size, "the equation has more terms than the %d inputs", n_inputs);
            return false;
        }
        term *t = &terms[k];
        if (!read_term(eq + start, i - start, t, err, err_size)) return false;
        int r = ranks[k];
        ell_rank[k] = t->ellipsis_at >= 0 ? r - t->n_letters : 0;
        if (ell_rank[k] < 0 || (t->ellipsis_at < 0 && r != t->n_letters) || r > TGC_MAX_RANK) {
            snprintf(err, err_size, "term %d ('%.*s') does not fit input %d of rank %d", k, (int)(i - start),
                     eq + start, k, r);
            return false;
        }
        if (ell_rank[k] > e->n_ellipsis) e->n_ellipsis = ell_rank[k];
        for (int j = 0; j < t->n_letters; j++) count[t->ids[j]]++;
        start = i + 1;
        k++;
    }
    if (k != n_inputs) {
        snprintf(err, err_size, "the equation has %d terms for %d inputs", k, n_inputs);
        return false;
    }
    e->n_inputs = n_inputs;
    for (k = 0; k < n_inputs; k++) {
        const term *t = &terms[k];
        int a = 0;
        for (int j = 0; j <= t->n_letters; j++) {
            if (j == t->ellipsis_at) /* right-aligned among the ellipsis labels */
                for (int d = 0; d < ell_rank[k]; d++) e->labels[k][a++] = TGC_EINSUM_LETTERS + e->n_ellipsis - ell_rank[k] + d;
            if (j < t->n_letters) e->labels[k][a++] = t->ids[j];
        }
        e->rank[k] = a;
        for (int j = 0; j < a; j++) e->used[e->labels[k][j]] = true;
    }
    /* The output. */
    if (arrow) {
        term t;
        if (!read_term(arrow + 2, strlen(arrow + 2), &t, err, err_size)) return false;
        if (t.n_letters + (t.ellipsis_at >= 0 ? e->n_ellipsis : 0) > TGC_MAX_RANK) {
            snprintf(err, err_size, "the output has more than %d axes", TGC_MAX_RANK);
            return false;
        }
        bool seen[TGC_EINSUM_MAX_LABELS] = {false};
        for (int j = 0; j <= t.n_letters; j++) {
            if (j == t.ellipsis_at)
                for (int d = 0; d < e->n_ellipsis; d++) e->out_labels[e->out_rank++] = TGC_EINSUM_LETTERS + d;
            if (j == t.n_letters) break;
            int id = t.ids[j];
            if (seen[id] || count[id] == 0) {
                snprintf(err, err_size, "output letter '%c' is %s", id < 26 ? 'A' + id : 'a' + id - 26,
                         seen[id] ? "repeated" : "in no input");
                return false;
            }
            seen[id] = true;
            e->out_labels[e->out_rank++] = id;
        }
    } else {
        for (int d = 0; d < e->n_ellipsis; d++) e->out_labels[e->out_rank++] = TGC_EINSUM_LETTERS + d;
        for (int id = 0; id < TGC_EINSUM_LETTERS; id++) {
            if (count[id] != 1) continue;
            if (e->out_rank == TGC_MAX_RANK) {
                snprintf(err, err_size, "the output has more than %d axes", TGC_MAX_RANK);
                return false;
            }
            e->out_labels[e->out_rank++] = id;
        }
    }
    return true;
}
