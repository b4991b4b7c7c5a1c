/* A growable list of diagnostics. */
#include "support/diag.h"

#include "support/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct diag_entry {
    tgc_severity sev;
    char *file;
    tgc_srcpos pos;
    char *rule;
    char *message;
    size_t order;
} diag_entry;

struct tgc_diags {
    diag_entry *items;
    size_t count, cap;
    size_t errors;
};

tgc_diags *tgc_diags_create(void) { return tgc_calloc(1, sizeof(tgc_diags)); }

void tgc_diags_free(tgc_diags *d) {
    if (d == NULL) return;
    for (size_t i = 0; i < d->count; i++) {
        tgc_free(d->items[i].file);
        tgc_free(d->items[i].rule);
        tgc_free(d->items[i].message);
    }
    tgc_free(d->items);
    tgc_free(d);
}

size_t tgc_diags_count(const tgc_diags *d) { return d ? d->count : 0; }
size_t tgc_diags_error_count(const tgc_diags *d) { return d ? d->errors : 0; }
tgc_severity tgc_diag_severity(const tgc_diags *d, size_t i) { return d->items[i].sev; }
const char *tgc_diag_file(const tgc_diags *d, size_t i) { return d->items[i].file; }
int tgc_diag_line(const tgc_diags *d, size_t i) { return d->items[i].pos.line; }
int tgc_diag_column(const tgc_diags *d, size_t i) { return d->items[i].pos.col; }
const char *tgc_diag_rule(const tgc_diags *d, size_t i) { return d->items[i].rule; }
const char *tgc_diag_message(const tgc_diags *d, size_t i) { return d->items[i].message; }

static const char *severity_word(tgc_severity s) {
    switch (s) {
    case TGC_SEV_ERROR: return "error";
    case TGC_SEV_WARNING: return "warning";
    case TGC_SEV_NOTE: return "note";
    }
    return "error";
}

void tgc_diags_print(const tgc_diags *d, FILE *out) {
    for (size_t i = 0; i < tgc_diags_count(d); i++) {
        const diag_entry *e = &d->items[i];
        if (e->file[0] != '\0') {
            fputs(e->file, out);
            if (e->pos.line > 0) fprintf(out, ":%d:%d", e->pos.line, e->pos.col);
            fputs(": ", out);
        } else {
            fputs("tgc: ", out);
        }
        fprintf(out, "%s: %s", severity_word(e->sev), e->message);
        if (e->rule[0] != '\0') fprintf(out, " [%s]", e->rule);
        fputc('\n', out);
    }
}

tgc_status tgc_diag_addv(tgc_diags *d, tgc_severity sev, const char *file, tgc_srcpos pos,
                         const char *rule, const char *fmt, va_list ap) {
    tgc_status result = sev == TGC_SEV_ERROR ? TGC_ERR_INVALID : TGC_OK;
    if (d == NULL) return result;
    if (d->count == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 8;
        diag_entry *items = tgc_realloc(d->items, cap * sizeof *items);
        if (items == NULL) return TGC_ERR_NOMEM;
        d->items = items;
        d->cap = cap;
    }
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    diag_entry e = {.sev = sev, .pos = pos, .order = d->count};
    e.message = tgc_malloc((size_t)(n > 0 ? n : 0) + 1);
    e.file = tgc_strdup(file ? file : "");
    e.rule = tgc_strdup(rule ? rule : "");
    if (e.message == NULL || e.file == NULL || e.rule == NULL) {
        tgc_free(e.message);
        tgc_free(e.file);
        tgc_free(e.rule);
        return TGC_ERR_NOMEM;
    }
    vsnprintf(e.message, (size_t)(n > 0 ? n : 0) + 1, fmt, ap);
    d->items[d->count++] = e;
    if (sev == TGC_SEV_ERROR) d->errors++;
    return result;
}

tgc_status tgc_diag_add(tgc_diags *d, tgc_severity sev, const char *file, tgc_srcpos pos,
                        const char *rule, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    tgc_status s = tgc_diag_addv(d, sev, file, pos, rule, fmt, ap);
    va_end(ap);
    return s;
}

tgc_status tgc_diag_error(tgc_diags *d, const char *file, tgc_srcpos pos, const char *rule,
                          const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    tgc_status s = tgc_diag_addv(d, TGC_SEV_ERROR, file, pos, rule, fmt, ap);
    va_end(ap);
    return s == TGC_OK ? TGC_ERR_INVALID : s;
}

static int compare_entries(const void *pa, const void *pb) {
    const diag_entry *a = pa, *b = pb;
    int c = strcmp(a->file, b->file);
    if (c != 0) return c;
    if (a->pos.line != b->pos.line) return a->pos.line < b->pos.line ? -1 : 1;
    if (a->pos.col != b->pos.col) return a->pos.col < b->pos.col ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

void tgc_diags_sort(tgc_diags *d) {
    if (d != NULL && d->count > 1) qsort(d->items, d->count, sizeof *d->items, compare_entries);
}

tgc_status tgc_err_format(char *err, size_t err_size, tgc_status st, const char *fmt, ...) {
    if (err != NULL && err_size > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, err_size, fmt, ap);
        va_end(ap);
    }
    return st;
}
