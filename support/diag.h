/* Recording diagnostics (the public reading side is in tgc.h). */
#ifndef TGC_SUPPORT_DIAG_H
#define TGC_SUPPORT_DIAG_H

#include "tgc.h"

#include <stdarg.h>

/* printf-format checking where the compiler offers it. */
#if defined(__GNUC__)
#define TGC_PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#else
#define TGC_PRINTF(fmt_index, first_arg)
#endif

/* A position in a source file: 1-based line and column, 0 when unknown. */
typedef struct tgc_srcpos {
    int line;
    int col;
} tgc_srcpos;

/* Appends a message to `d` (NULL is allowed and drops it). `file` may be NULL;
 * `rule` is a short kebab-case rule name (see tgc.h); the message is formatted
 * with printf rules. Returns TGC_ERR_INVALID for errors, so a caller can write
 * `return tgc_diag_error(...)`, and TGC_OK for warnings and notes; returns
 * TGC_ERR_NOMEM if the message could not be stored. */
tgc_status tgc_diag_add(tgc_diags *d, tgc_severity sev, const char *file, tgc_srcpos pos,
                        const char *rule, const char *fmt, ...)
    TGC_PRINTF(6, 7);

tgc_status tgc_diag_addv(tgc_diags *d, tgc_severity sev, const char *file, tgc_srcpos pos,
                         const char *rule, const char *fmt, va_list ap);

/* Shorthand for an error. */
tgc_status tgc_diag_error(tgc_diags *d, const char *file, tgc_srcpos pos, const char *rule,
                          const char *fmt, ...) TGC_PRINTF(5, 6);

/* Sorts messages by (file, line, column), keeping insertion order for ties,
 * so a file's errors read top to bottom whichever pass found them. */
void tgc_diags_sort(tgc_diags *d);

/* Formats a one-line reason into err[0..err_size) (err may be NULL) and
 * returns st: for functions that report through an err buffer. */
tgc_status tgc_err_format(char *err, size_t err_size, tgc_status st, const char *fmt, ...) TGC_PRINTF(4, 5);

#endif
